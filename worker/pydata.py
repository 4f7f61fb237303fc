"""pydata.py - the data stack made ready in the zygote, and the figures of a call as images.

Embedded into safepy-zygote by the build (worker/CMakeLists.txt) and run once in the zygote,
before any fork, in a namespace of its own with the interpreter's own builtins; pydata.c calls
prepare() there and figures() in a worker at the end of each call. Nothing here is reachable
from user code: user code sees modules through their proxies, which copy what prepare() set.

prepare() imports and exercises what data code reaches most, so that a call finds it loaded
(no file can be opened in a worker: what is not loaded here comes from the supervisor, slower),
makes matplotlib render with no file (Agg, the fonts read into memory), and turns shown and
open figures into PNG images.
"""

import io
import sys

# PNG images of the figures shown (plt.show) during the current call, in order.
_shown = []
# Figures not returned because the call already has _limits['count'] images.
_dropped = [0]
_saved = []  # figures savefig showed in this call (no workspace: no file written)
_limits = {'side': 1568, 'bytes': 400 << 10, 'total': 512 << 10, 'count': 8}


def _replace_everywhere(old, new):
    """Replace the function old by new in every loaded module that holds it by name."""
    _replace_all({id(old): (old, new)})


def _replace_all(replacements):
    """Replace each function by its new one, {id(old): (old, new)}, in every loaded module
    that holds it by name: one pass over the modules for all of them."""
    for mod in list(sys.modules.values()):
        d = getattr(mod, '__dict__', None)
        if not isinstance(d, dict):
            continue
        for k, v in list(d.items()):
            pair = replacements.get(id(v))
            if pair is not None and pair[0] is v:
                d[k] = pair[1]


# Methods for C classes (immutable: pydata.c puts them in their dicts), {(class, name): function}.
type_patches = {}
# Checks of a C class's constructor arguments while armed, {class: check(args, kwargs) -> (args,
# kwargs) to construct with} (pydata.c).
init_checks = {}
new_checks = {}  # {C class: check(args, kw) -> (args, kw)}, for classes made in tp_new
# Attributes of C classes given to library code only, [(class, name[, why])] (pydata.c: the
# user's code reading one is refused, saying why).
library_only = []
# C classes whose item is a point, p[i] = (x, y), [class] (pydata.c: the point is read into a
# tuple of two floats before the class's own assignment runs).
pair_items = []
# scipy.io.matlab's reader of MATLAB 5 files, [VarReader5, the data types that have a dtype,
# probe(type) -> the tag of that type read] (pydata.c: a tag of another type is refused).
mat_reader = []


def _exact_text(value):
    """A str subclass as the exact str of its characters (what C code reads of it), so a check
    compares what the callee takes; anything else as it is."""
    return str.__str__(value) if isinstance(value, str) and type(value) is not str else value


# _plain_names(kwargs): kwargs with its names exact str (pydata.c gives it, pylayer.c's): a str
# subclass's __hash__ and __eq__ could hide a keyword from a check's lookup that the compiled
# callee still takes by its characters (a partial's keywords, a library forwarding a dict of the
# code's); a key that is no str is refused; None stays None.


def _tempfile():
    # tempfile finds its directory on first use by writing and removing a file in each
    # candidate: in a worker only the workspace takes the file, and it cannot be removed there,
    # so every library that asked (scipy.stats.sampling's import) left one behind. The
    # directory is given: a temporary file fails as any file outside the workspace does.
    tempfile = sys.modules.get('tempfile')
    if tempfile is not None and tempfile.tempdir is None:
        tempfile.tempdir = '/tmp'


def _zoneinfo():
    # zoneinfo reads a zone's file from the system's time zone database on its first use,
    # which a worker cannot. The database (the TZif files, 600 zones, about 700 KB) is read
    # here, and given from memory where the module looks when no directory holds the zone.
    import os
    import zoneinfo
    from zoneinfo import _common, _tzpath
    data = {}
    for root in _tzpath.TZPATH:
        for where, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ('posix', 'right')]
            for name in names:
                path = os.path.join(where, name)
                key = os.path.relpath(path, root)
                if key in data:  # the first directory of the path that has it
                    continue
                try:
                    with open(path, 'rb') as f:
                        head = f.read(4)
                        if head == b'TZif':
                            data[key] = head + f.read()
                except OSError:
                    continue
    keys = frozenset(k for k in data if k not in ('localtime', 'posixrules', 'Factory'))

    def load_tzdata(key):
        got = data.get(key)
        if got is None:
            raise zoneinfo.ZoneInfoNotFoundError(f'No time zone found with key {key}')
        return io.BytesIO(got)

    def available_timezones():
        return set(keys)

    available_timezones.__doc__ = _tzpath.available_timezones.__doc__
    _common.load_tzdata = load_tzdata
    _tzpath.available_timezones = zoneinfo.available_timezones = available_timezones
    zoneinfo.reset_tzpath(to=[])


def _shutil():
    # shutil copies, moves and removes through the workspace's functions (pyfiles.c): by file
    # objects and paths, as where the kernel has no sendfile and no *at calls. A worker may not
    # copy between fds in the kernel, nor open a directory to walk it by fd, and the workspace
    # keeps no extended attributes: copy2 and copytree copy bytes, permission bits and times.
    import shutil
    shutil._USE_CP_SENDFILE = False
    shutil._use_fd_functions = False
    shutil.rmtree.avoids_symlink_attacks = False

    def _copyxattr(*args, **kwargs):
        pass

    shutil._copyxattr = _copyxattr

    def disk_usage(path):
        """Not in the sandbox: a worker does not ask the kernel about file systems."""
        raise PermissionError('shutil.disk_usage is not allowed in the sandbox')

    shutil.disk_usage = disk_usage
    # Tar archives are made and unpacked by tarfile, made ready for the sandbox where it is
    # among the imports (_tarfile); where it is not, zip archives only, the others an unknown
    # format (ValueError), as tarfile would ask who owns each file (a lookup of the user's
    # name: calls the sandbox ends a call for).
    if 'tarfile' in sys.modules:
        return
    for formats in (shutil._ARCHIVE_FORMATS, shutil._UNPACK_FORMATS):
        for name in [n for n in formats if n != 'zip']:
            del formats[name]


def _tarfile():
    # tarfile reads and writes archives through file objects and the workspace's files. A
    # worker has no user or group database (a lookup of a name asks a daemon over a socket,
    # which the sandbox ends a call for): members get the numbers of their owners, no names.
    # Extracting keeps what the workspace can hold: files and directories (and their bits and
    # times); a link becomes a copy of its target in the archive (where tarfile cannot make
    # links), and a FIFO or a device is skipped with the error tarfile gives where its system
    # makes none (raised with errorlevel 2). The workspace's files keep their owners.
    import tarfile

    tarfile.pwd = tarfile.grp = None

    def makefifo(self, tarinfo, targetpath):
        raise tarfile.ExtractError('fifo not supported by system')

    def makedev(self, tarinfo, targetpath):
        raise tarfile.ExtractError('special devices not supported by system')

    def chown(self, tarinfo, targetpath, numeric_owner):
        pass

    # A symbolic link's own target is not read in a worker (os.readlink is refused): the file
    # or directory it leads to is added in its place, as with dereference=True (zip archives
    # do the same); one that leads outside the workspace is left out. An archive of a folder
    # holding a link stopped at it before, with the members after it missing.
    real_gettarinfo = tarfile.TarFile.gettarinfo

    def gettarinfo(self, name=None, arcname=None, fileobj=None):
        try:
            return real_gettarinfo(self, name, arcname, fileobj)
        except PermissionError:
            if fileobj is not None or name is None or self.dereference or \
                    not tarfile.os.path.islink(name):
                raise
        self.dereference = True
        try:
            return real_gettarinfo(self, name, arcname, fileobj)
        except OSError:
            return None
        finally:
            self.dereference = False

    for f in (makefifo, makedev, chown, gettarinfo):
        f.__doc__ = getattr(tarfile.TarFile, f.__name__).__doc__
        f.__qualname__ = 'TarFile.' + f.__name__
        setattr(tarfile.TarFile, f.__name__, f)


def _uuid():
    # uuid1() and getnode() ask libuuid, which asks its daemon over a socket, and then look
    # for a network card (ifconfig, ip, netstat): a worker has none of those, and the sandbox
    # ends it at the socket. The node is a random one (RFC 4122 4.5), chosen here once for the
    # server, and time-based UUIDs are made by the module itself.
    import uuid
    uuid._generate_time_safe = None
    uuid._GETTERS.clear()
    uuid.getnode()


def prepare():
    """Run in the zygote once, after the allowed modules are imported."""
    # By name: the data stack's steps exist only when its part of this file was compiled.
    steps = (('numpy', '_numpy'), ('pandas', '_pandas'), ('scipy', '_scipy'),
             ('sympy', '_sympy'), ('matplotlib', '_matplotlib'), ('openpyxl', '_openpyxl'),
             ('sklearn', '_sklearn'), ('seaborn', '_seaborn'), ('PIL', '_pil'),
             ('tqdm', '_tqdm'), ('scipy', '_scipy_samples'), ('matplotlib', '_mpl_samples'),
             ('zoneinfo', '_zoneinfo'), ('uuid', '_uuid'), ('tarfile', '_tarfile'),
             ('shutil', '_shutil'))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name, step in steps:
            if name in sys.modules:
                globals()[step]()
        _tempfile()
        _library_tracebacks()


def _library_tracebacks():
    """Library code that formats the exception it caught (scikit-learn's model selection
    keeps format_exc() of a fit or a scorer that failed, then goes on with NaN) used the real
    traceback module's functions, which walk the frames the sandbox keeps out of reach: one
    failing candidate of a grid search ended the whole call in AttributeError (tb_frame), and
    a call's timeout caught there was reported as that. The library's functions are the
    sandbox's own (sandbox_traceback, the functions the user's code gets), in the traceback
    module and wherever a module took them by name."""
    import traceback
    swaps = {}
    for name in ('format_exc', 'print_exc', 'format_exception', 'print_exception',
                 'format_exception_only', 'extract_tb', 'format_tb', 'print_tb',
                 'extract_stack', 'format_stack', 'print_stack', 'format_list', 'print_list'):
        real = traceback.__dict__.get(name)
        if real is not None:
            swaps[id(real)] = (real, getattr(sandbox_traceback, name))
    _replace_all(swaps)

# ==== the data stack: compiled only when one of its packages is loaded (pydata.c) ====


def _finfo_private(np):
    """np.finfo caches what it made in a class attribute, a dict the code may change: a key of
    the code's there (a class of its own, a Decimal whose comparison asks an ABC hook of the
    code's) or a value (an object whose eps is a property of the code's) ran the code's, by C
    callables with no frame, when Delaunay.transform's getter asked for float64's inside its
    own_arrays scope (V67a H1, V68a H1-H2). numpy's own steps run over a private cache; the
    attribute the code sees is not read, and each caller gets its own copy of what is cached."""
    finfo = np.finfo
    real = finfo.__dict__['__new__'].__func__
    cached = type('finfo', (finfo,), {'_finfo_cache': {}, '__module__': 'numpy'})

    def __new__(cls, dtype):
        if cls is not finfo:
            return real(cls, dtype)
        obj = real(cached, dtype)
        if type(obj) is cached:
            obj.__class__ = finfo  # (new: then cached as np.finfo's)
        # (each caller its own: an eps the code set on the one it was given ran its __float__
        # in the scope that asked next, V69a H1)
        mine = object.__new__(finfo)
        mine.__dict__.update(obj.__dict__)
        return mine
    __new__.__doc__ = real.__doc__
    finfo.__new__ = staticmethod(__new__)
    finfo._finfo_cache = {}


def _matrix_index(np):
    """np.matrix's __getitem__ sets its _getitem while ndarray.__getitem__ indexes, and its
    __array_finalize__ leaves what is made then as numpy makes it: an index of the code's ran
    there (a C __index__, which has no frame) and made a ravel view of the matrix, left of one
    dimension (V58a H2). The index is made plain data first (numbers, slices of numbers, plain
    arrays), so that nothing of the code's runs while _getitem is set. pydata.c finds numpy's
    own method as __wrapped__."""
    import operator
    real = np.matrix.__getitem__
    kept = (int, bool, str, bytes, type(None), type(Ellipsis))

    def plain(i):
        t = type(i)
        if t in kept or (isinstance(i, np.generic) and t.__module__ == 'numpy'):
            return i
        if t is slice:
            return slice(*(v if v is None or type(v) is int else operator.index(v)
                           for v in (i.start, i.stop, i.step)))
        if t is not list and not isinstance(i, np.ndarray) and hasattr(t, '__index__'):
            return operator.index(i)
        a = np.array(i)
        return a.astype(np.intp) if a.dtype == object else a

    def zero_d(i):
        return isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in 'iu'

    def __getitem__(self, index):
        whole = type(index) is tuple
        index = tuple(plain(i) for i in index) if whole else plain(index)
        if not (any(map(zero_d, index)) if whole else zero_d(index)):
            return real(self, index)
        # numpy indexes by a 0-d array of integers through a view of a one-dimensional
        # intermediate, which a matrix's finalize reshapes: pydata.c lets no view of a matrix
        # of other than two dimensions be reshaped (V61a H1). numpy's own steps, on a plain
        # view of the matrix:
        out = np.ndarray.__getitem__(self.view(np.ndarray), index)
        if not isinstance(out, np.ndarray):
            return out
        if out.ndim == 0:
            return out[()]
        if out.ndim == 1:
            n = len(index) if whole else 0
            out = out.reshape((out.shape[0], 1) if n > 1 and np.isscalar(index[1])
                              else (1, out.shape[0]))
        return out.view(type(self))
    __getitem__.__wrapped__ = real
    __getitem__.__doc__ = real.__doc__
    np.matrix.__getitem__ = __getitem__


def _vectorize_shapes(np):
    """np.vectorize with a signature broadcast its loop dimensions over views of one int made
    with as_strided (never read), which the sandbox refuses as a view past its memory: every
    such call with loop dimensions failed. The shapes are broadcast as shapes."""
    from numpy.lib import function_base as fb
    real = fb._parse_input_dimensions

    def _parse_input_dimensions(args, input_core_dims):
        shapes, dim_sizes = [], {}
        for arg, core_dims in zip(args, input_core_dims):
            fb._update_dim_sizes(dim_sizes, arg, core_dims)
            shapes.append(arg.shape[:arg.ndim - len(core_dims)])
        return np.broadcast_shapes(*shapes), dim_sizes

    _parse_input_dimensions.__doc__ = real.__doc__
    _replace_all({id(real): (real, _parse_input_dimensions)})


def _masked_names(np):
    """numpy.ma copies a masked array's _optinfo and _basedict (dicts the code fills) into the
    new array's __dict__, where numpy reads its protocol names on the instance in the middle of
    a ufunc or a concatenate: an __array_priority__ whose __float__ reshaped an input after numpy
    had read its shape (V45b), an __array_prepare__ that handed back the output with its strides
    set to 0 over a small block (the whole result written past it, V46a). The dunder names are
    taken out of the array's __dict__ as soon as they are copied there."""
    ma = np.ma.MaskedArray
    real = ma._update_from

    def _update_from(self, obj):
        real(self, obj)
        d = object.__getattribute__(self, '__dict__')
        for k in [k for k in d if type(k) is not str or k.startswith('__')]:
            del d[k]

    _update_from.__wrapped__ = real
    ma._update_from = _update_from


def _masked_geometry(np):
    """numpy.ma reshapes in place a masked array's mask to the array's shape (its shape setter,
    its mask's setter, a copy made of it): an array the code may have put there (`m._mask = a`),
    or hold, and handed to numpy's C code, whose __array__ of the code's then reshaped the
    masked array: the array numpy held was reshaped under it (pydata.c's geometry_refused:
    any `a.shape = s` is refused then, the library's own statements too). numpy.ma
    reshapes a view of its own of the mask now (over the same memory), and the statement that
    sets a masked array's shape or dtype is checked as an array's is: pydata.c's setter makes
    the view, then the array's own change with nothing run between its check and the change
    (the value made plain first), then numpy.ma's change of the mask (shape_after,
    dtype_after: the rest of numpy.ma's own setters)."""
    ma = np.ma.MaskedArray
    view = np.ndarray.view

    def private_mask(a):
        d = object.__getattribute__(a, '__dict__')
        m = d.get('_mask')
        if isinstance(m, np.ndarray):
            d['_mask'] = view(m)
        return None

    getmask, nomask, make_mask_descr = np.ma.getmask, np.ma.nomask, np.ma.core.make_mask_descr

    def shape_after(self):
        # (numpy.ma's own setter, after ndarray's: pydata.c makes that one)
        if getmask(self) is not nomask:
            self._mask.shape = self.shape

    def dtype_after(self):
        if self._mask is not nomask:
            self._mask = self._mask.view(make_mask_descr(self.dtype), np.ndarray)
            try:
                self._mask.shape = self.shape
            except (AttributeError, TypeError):
                pass

    shape = ma.__dict__['shape']
    ma.shape = property(shape.fget, geometry_setter(private_mask, 'shape', shape_after), None,
                        shape.__doc__)
    dtype = ma.__dict__['dtype']
    ma.dtype = property(dtype.fget, geometry_setter(private_mask, 'dtype', dtype_after), None,
                        dtype.__doc__)
    real_setmask = ma.__dict__['__setmask__']

    def __setmask__(self, mask, copy=False):
        private_mask(self)
        return real_setmask(self, mask, copy)

    __setmask__.__wrapped__ = real_setmask
    ma.__setmask__ = ma._set_mask = __setmask__
    real_new = ma.__dict__['__new__'].__func__

    def __new__(cls, data=None, *args, **kw):
        if isinstance(data, ma):
            private_mask(data)
        return real_new(cls, data, *args, **kw)

    __new__.__wrapped__ = real_new
    ma.__new__ = staticmethod(__new__)


def _numpy():
    import os
    import numpy as np
    # numpy's global generator (np.random.rand, np.random.choice) was seeded once, here: each
    # new worker draws its own numbers, as random's generator does (its fork from the zygote
    # runs this; a session's later forks run no hook and keep its state).
    os.register_at_fork(after_in_child=np.random.seed)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(8, 8))
    np.linalg.inv(a), np.linalg.eig(a), np.linalg.svd(a), np.fft.fft(a[0])
    np.polyfit([1, 2, 3], [1, 2, 3], 1), np.histogram(a), repr(a), a.sum(), a.std()
    # An array's .ctypes object kept the ctypes module itself as an attribute (pandas imports
    # it, so it is loaded): a real module any array handed out, with the C pointers it makes.
    # Without it numpy takes its own path for a Python without ctypes (.ctypes.data stays).
    from numpy.core import _internal
    _internal.ctypes = None
    _internal._getintp_ctype.cache = None  # ctypes' c_long, if asked already: numpy's own now
    _strided_views(np)
    _array_files(np)
    _numpy_state_kept(np)
    _random_states(np)
    _object_sorts(np)
    _repeat_counts(np)
    _vectorize_shapes(np)
    # recfunctions' functions are made at import by a decorator that rewrites their code
    # objects, which a worker refuses: imported here, it imports in calls.
    import numpy.lib.recfunctions  # noqa: F401
    _nditer_close(np)
    _masked_names(np)
    _masked_geometry(np)
    _matrix_index(np)
    _finfo_private(np)
    # An array's memory is not replaced: `a.data = buffer` kept the buffer's object but not
    # its export, and a bytearray cleared after left the array over freed memory (a
    # bytearray's header laid there: any memory). (ndarray(buffer=...) is pinned by pydata.c.)
    data = np.ndarray.__dict__['data']

    def refuse(self, value):
        raise AttributeError("an array's memory is not replaced in the sandbox: make an "
                             'array over the buffer instead (np.frombuffer)')

    type_patches[(np.ndarray, 'data')] = property(data.__get__, refuse, None, data.__doc__)


def _random_states(np):
    """A bit generator's state was taken as given: MT19937's position in its key
    (state['state']['pos'] = 1 << 30, or RandomState.set_state / np.random.set_state with that
    position) and Philox's position in its buffer (buffer_pos) were C ints the next draw read
    key[pos] or buffer[pos] at (any memory read, a negative position too), and MT19937.jumped()
    wrote through them. A state set now (the property, which set_state, __setstate__ and
    Generator's state all go through) has its arrays at their lengths (copied) and its
    positions within them. A RandomState's or Generator's bit generator is not replaced
    either: the object draws from the state it was made over, and the one it named instead
    was freed under it. (A bit generator's capsule holds the bit generator: pydata.c.)"""
    import operator
    from numpy.random import MT19937, Philox, RandomState, Generator

    def plain(value, what):
        if not isinstance(value, dict):
            raise TypeError('%s should be a dict' % what)
        return value

    def array(value, n, what):
        a = np.array(value)
        if a.shape != (n,):
            raise ValueError('the state\'s %s should hold %d values' % (what, n))
        return a

    def position(value, last, what):
        pos = operator.index(value)
        if not 0 <= pos <= last:
            raise ValueError('the state\'s %s should lie in [0, %d]' % (what, last))
        return pos

    def mt19937(value):
        if isinstance(value, tuple):
            if len(value) not in (3, 5) or value[0] != 'MT19937':
                raise ValueError('state is not a legacy MT19937 state')
            value = {'bit_generator': 'MT19937', 'state': {'key': value[1], 'pos': value[2]}}
        value = plain(value, 'state')
        st = plain(value['state'], "state['state']")
        return {'bit_generator': value.get('bit_generator', ''),
                'state': {'key': array(st['key'], 624, 'key'),
                          'pos': position(st['pos'], 624, 'pos')}}

    def philox(value):
        value = plain(value, 'state')
        st = plain(value['state'], "state['state']")
        return {'bit_generator': value.get('bit_generator', ''),
                'state': {'counter': array(st['counter'], 4, 'counter'),
                          'key': array(st['key'], 2, 'key')},
                'buffer': array(value['buffer'], 4, 'buffer'),
                'buffer_pos': position(value['buffer_pos'], 4, 'buffer_pos'),
                'has_uint32': operator.index(value['has_uint32']),
                'uinteger': operator.index(value['uinteger'])}

    for cls, check in ((MT19937, mt19937), (Philox, philox)):
        d = cls.__dict__['state']

        def set_state(self, value, d=d, check=check):
            d.__set__(self, check(value))

        type_patches[(cls, 'state')] = property(d.__get__, set_state, None, d.__doc__)
    for cls in (RandomState, Generator):
        d = cls.__dict__.get('_bit_generator')
        if d is None:
            continue

        def refuse(self, value, cls=cls):
            raise AttributeError("a %s's bit generator is not replaced in the sandbox: make a "
                                 'new one over the bit generator' % cls.__name__)

        type_patches[(cls, '_bit_generator')] = property(d.__get__, refuse, None, d.__doc__)


def _object_sorts(np):
    """numpy sorts an array of objects in place with items' pointers copied, without a
    reference, into its temporaries (the quick and heap sorts' pivot, the stable sort's merge
    buffer) while the items' __lt__ runs: an __lt__ that replaced the array's items (freeing
    them) left the sort to write a freed object's pointer back into the array (ndarray.sort,
    ndarray.partition, and np.median/np.percentile with overwrite_input, which partition the
    array itself). argsort, argpartition and lexsort copied the pointers of an array not laid
    out one item after the other (a[::2], a 2-D array's columns) into a buffer the same way and
    compared freed objects. An array holding objects is now sorted, partitioned or argsorted
    as a private copy (its references held, out of the user's reach) and a sort's result
    assigned back; arrays of numbers go to numpy's own methods as before."""
    nd = np.ndarray
    dtype_of = nd.__dict__['dtype'].__get__
    flags_of = nd.__dict__['flags'].__get__
    setitem = nd.__setitem__
    sort_real, partition_real = nd.__dict__['sort'], nd.__dict__['partition']
    argsort_real, argpartition_real = nd.__dict__['argsort'], nd.__dict__['argpartition']

    def private(a):
        return np.array(a, copy=True, subok=False)

    def sort(self, axis=-1, kind=None, order=None):
        if not dtype_of(self).hasobject or not flags_of(self).writeable:
            return sort_real(self, axis, kind, order)
        c = private(self)
        sort_real(c, axis, kind, order)
        setitem(self, Ellipsis, c)

    def partition(self, kth, axis=-1, kind='introselect', order=None):
        if not dtype_of(self).hasobject or not flags_of(self).writeable:
            return partition_real(self, kth, axis, kind, order)
        c = private(self)
        partition_real(c, kth, axis, kind, order)
        setitem(self, Ellipsis, c)

    def as_self(self, r):
        return r if type(self) is nd else nd.view(r, type(self))

    def argsort(self, axis=-1, kind=None, order=None):
        if not dtype_of(self).hasobject:
            return argsort_real(self, axis, kind, order)
        return as_self(self, argsort_real(private(self), axis, kind, order))

    def argpartition(self, kth, axis=-1, kind='introselect', order=None):
        if not dtype_of(self).hasobject:
            return argpartition_real(self, kth, axis, kind, order)
        return as_self(self, argpartition_real(private(self), kth, axis, kind, order))

    for f, real in ((sort, sort_real), (partition, partition_real), (argsort, argsort_real),
                    (argpartition, argpartition_real)):
        f.__doc__ = real.__doc__
        type_patches[(nd, f.__name__)] = f

    def keys_of(keys):
        if issubclass(type(keys), nd):
            return private(keys) if dtype_of(keys).hasobject else keys
        if isinstance(keys, (list, tuple)):
            keys = [np.asarray(k) for k in keys]
        elif hasattr(type(keys), '__getitem__') and hasattr(type(keys), '__len__') and \
                not isinstance(keys, dict):
            # Any other sequence is read as the C code reads one (its items by index), once,
            # here: it handed the C code the user's own arrays.
            keys = [np.asarray(keys[i]) for i in range(len(keys))]
        else:
            return keys  # not a sequence: the C code refuses it
        return tuple(private(k) if dtype_of(k).hasobject else k for k in keys)

    from numpy.core import multiarray
    lexsort_real = multiarray.lexsort
    lexsort_c = getattr(multiarray, '_multiarray_umath', multiarray).lexsort

    def lexsort(keys, axis=-1):
        return lexsort_real(keys_of(keys), axis)

    def lexsort_impl(keys, axis=-1):
        return lexsort_c(keys_of(keys), axis)

    lexsort.__doc__, lexsort.__module__ = lexsort_real.__doc__, 'numpy'
    lexsort_impl.__doc__ = lexsort_c.__doc__
    _replace_all({id(lexsort_real): (lexsort_real, lexsort),
                  id(lexsort_c): (lexsort_c, lexsort_impl)})


def _repeat_counts(np):
    # ndarray.repeat (np.repeat's) sums its counts in npy_intp unchecked: four counts of 2**62
    # wrapped the total to 0, a result of no items was made and the copy wrote past it until
    # the worker crashed. A total past any memory is refused first (numpy's own error for a
    # result too large); the counts are read once, as a private array handed on.
    import operator
    nd = np.ndarray
    real = nd.__dict__['repeat']
    view = nd.__dict__['view']

    def repeat(self, repeats, axis=None):
        if type(self) is not nd:
            # numpy sets the source's length along the axis to the result's while it makes the
            # result, whose class's finalizer runs then (a matrix's _getitem and numpy.ma's
            # _optinfo, the code's objects, ran the code's, which took a view of the source
            # claiming the result's length: items read and written past it, V59a H1-H2): a
            # plain view of it is repeated, and the result takes the class after
            return view(repeat(view(self, type=nd), repeats, axis), type=type(self))
        # a copy: numpy sums the counts, makes the result (a subclass's finalizer runs there:
        # numpy.ma's copied a mapping of the code's, which raised the counts) and then copies
        # by the counts read again
        counts = np.array(repeats)
        if counts.dtype.kind in 'fO':
            counts = counts.astype(np.intp)  # numpy's own conversion of the counts
        if counts.dtype.kind not in 'iub':
            return real(self, repeats, axis)  # numpy's error
        if self.size:
            if axis is None:
                n, rest = self.size, 1
            else:
                axis = operator.index(axis)
                shape = self.shape
                n = shape[axis] if -len(shape) <= axis < len(shape) else 0
                rest = self.size // n if n else 0
            total = float(counts.sum(dtype=np.float64)) if counts.size > 1 else \
                float(counts.reshape(-1)[0]) * n if counts.size else 0.0
            if total * rest * self.itemsize >= 2.0 ** 62:
                raise ValueError('array is too big; the repeated array would be larger than '
                                 'any memory')
        return real(self, counts, axis)

    repeat.__doc__ = real.__doc__
    type_patches[(nd, 'repeat')] = repeat


def _nditer_close(np):
    """nditer.close() (and a with block's end) freed the iterator's buffers and dropped its
    operands while the arrays it had handed out (its items, it[i], it.value: views whose base
    is the iterator object, which lives on) still pointed into them: a view then read and
    wrote freed memory (a list's item array laid there: any object). close() now writes back
    what the iteration left in the buffers (by finishing the iteration when an operand's
    current items are in a buffer) and resolves the operands copied for writing (through a
    private copy of the iterator), and leaves the freeing to the iterator object's own end,
    which comes only when no view holds it."""
    nditer = np.nditer
    nd = np.ndarray
    close_real, copy_real = nditer.__dict__['close'], nditer.__dict__['copy']
    flags_of = nd.__dict__['flags'].__get__
    dtype_of = nd.__dict__['dtype'].__get__
    interface_of = nd.__dict__['__array_interface__'].__get__

    def extent(a):
        """The bytes [first, last) of a's items."""
        i = interface_of(a)
        first = last = int(i['data'][0])
        strides, shape = i['strides'], i['shape']
        if strides is None:
            n = 1
            for k in shape:
                n *= k
            return first, first + n * dtype_of(a).itemsize
        for k, step in zip(shape, strides):
            if k == 0:
                return first, first
            first += min(0, (k - 1) * step)
            last += max(0, (k - 1) * step)
        return first, last + dtype_of(a).itemsize

    def buffered(it):
        """Whether an operand written through the iterator has its current items in the
        iterator's buffer (numpy writes them to the operand when the iteration moves on)."""
        if it.finished or it.has_delayed_bufalloc:
            return False
        ops = it.operands
        for i in range(len(ops)):
            v = it[i]
            if not flags_of(v).writeable:
                continue
            first, last = extent(ops[i])
            if not first <= int(interface_of(v)['data'][0]) < last:
                return True
        return False

    def close(self):
        if buffered(self):
            start, end = self.iterrange
            try:
                if end - start > 1:
                    self.iterindex = end - 1
            except ValueError:
                pass  # an external loop: no jump, each step writes its buffer back
            while self.iternext():
                pass
        if any(flags_of(op).writebackifcopy for op in self.operands):
            close_real(copy_real(self))

    def __exit__(self, *exc):
        close(self)

    close.__doc__, __exit__.__doc__ = close_real.__doc__, nditer.__dict__['__exit__'].__doc__
    type_patches[(nditer, 'close')] = close
    type_patches[(nditer, '__exit__')] = __exit__

def _array_files(np):
    """np.fromfile and ndarray.tofile open a path by the builtins' open of the calling frame,
    which the user's code has only with a workspace: without one they failed with a
    SystemError. A path is opened here, as open() would: a workspace file, or a clear refusal."""
    import io
    import os
    import operator
    fromfile_real, tofile_real = np.fromfile, np.ndarray.tofile

    # numpy duplicates a file object's descriptor (fileno()) and reads or writes it in C: an
    # object of the code's answered 3, the worker's channel to the supervisor. Only Python's own
    # files over a real descriptor are handed on; any other file object is read and written
    # through its methods, the same bytes.
    def real_file(f):
        t = type(f)
        return t is io.FileIO or (t in (io.BufferedReader, io.BufferedWriter, io.BufferedRandom)
                                   and type(f.raw) is io.FileIO)

    def fromfile(file, dtype=float, count=-1, sep='', offset=0, *, like=None):
        if isinstance(file, (str, bytes, os.PathLike)):
            with io.open(file, 'rb') as f:
                return fromfile_real(f, dtype, count, sep, offset, like=like)
        if real_file(file):
            return fromfile_real(file, dtype, count, sep, offset, like=like)
        dt = np.dtype(dtype)
        count = operator.index(count)
        if offset:
            file.seek(operator.index(offset), 1)
        if sep:
            data = file.read()
            return np.fromstring(data.decode() if isinstance(data, bytes) else data, dtype=dt,
                                 count=count, sep=sep)
        data = bytes(file.read() if count < 0 else file.read(count * dt.itemsize))
        n = len(data) // dt.itemsize
        return np.frombuffer(data, dtype=dt, count=n if count < 0 else min(n, count)).copy()

    def tofile(self, fid, sep='', format='%s'):
        if isinstance(fid, (str, bytes, os.PathLike)):
            with io.open(fid, 'wb') as f:
                return tofile_real(self, f, sep, format)
        if real_file(fid):
            return tofile_real(self, fid, sep, format)
        if sep:
            fid.write(sep.join(format % v for v in self.ravel().tolist()).encode())
        else:
            fid.write(np.ascontiguousarray(self).tobytes())

    fromfile.__doc__, tofile.__doc__ = fromfile_real.__doc__, tofile_real.__doc__
    fromfile.__module__ = 'numpy'
    _replace_everywhere(fromfile_real, fromfile)
    type_patches[(np.ndarray, 'tofile')] = tofile
    # An .npz np.load opened reads each array when it is asked for: kept in memory at the
    # call's end (keep_files), it is read in the session's next calls too.
    import zipfile
    load_real = np.load

    def npz_in_memory(z, room):
        if type(z) is not np.lib.npyio.NpzFile or type(z.zip) is not zipfile.ZipFile:
            return 0
        mem = _in_memory(z.fid, room)
        if mem is None:
            return 0
        old, z.zip, z.fid = z.zip, zipfile.ZipFile(mem), None
        old.close()
        return len(mem.getbuffer())

    def load(file, *args, **kwargs):
        r = load_real(file, *args, **kwargs)
        if isinstance(r, np.lib.npyio.NpzFile) and r.fid is not None:
            _later(r, npz_in_memory)
        return r

    load.__doc__, load.__module__ = load_real.__doc__, 'numpy'
    _replace_everywhere(load_real, load)


def _numpy_state_kept(np):
    """Some of numpy's functions change state its own C code trusts, and are not the code's.
    np.set_numeric_ops replaces the operators numpy's C code calls directly: round() of an
    integer array with negative decimals took what the code's true_divide returned for an array,
    unchecked (an object laid out as one was read as an array over any address, and written
    into; the sandbox's own bounds checks compare arrays with them too). set_typeDict replaces
    the table of type names every library reads (np.dtype('float64') answered int8 for all),
    as did an edit of np.sctypeDict, the same dict.
    np.add_docstring (and the ufunc one) points a class's docstring into a str, which
    CPython frees as its own block when the class dies (the middle of a live str handed out to
    the next allocation). With no arguments set_numeric_ops answers numpy's operators as
    before; numpy's own documentation steps catch the refusal."""
    umath = np.core._multiarray_umath
    set_ops_real = umath.set_numeric_ops
    # numpy's C code reads type names from the dict set_typeDict gave it, which was
    # np.sctypeDict itself: the code's edits of it in place reached every library (a name
    # answering another type; a class of the code's there, whose metaclass's properties
    # numpy's C code ran). It reads a copy of its own.
    umath.set_typeDict(dict(np.sctypeDict))

    def set_numeric_ops(*args, **kwargs):
        if args or kwargs:
            raise NotImplementedError(
                "np.set_numeric_ops is not available in the sandbox: numpy's C code calls the "
                "operators it sets and trusts what they return; define a function or an array "
                "subclass instead")
        return set_ops_real()

    def refused(*args, **kwargs):
        raise NotImplementedError(
            "numpy's docstring setters are not available in the sandbox: they point a "
            "class's or function's documentation into a string it does not own")

    def names_refused(*args, **kwargs):
        raise NotImplementedError(
            "numpy's table of type names is not set in the sandbox: every library reads it "
            "(np.dtype('float64') answered another type for all of them)")

    # np.add_newdoc imports the module it names from numpy's own frame: the code had any
    # module imported, refused ones too (their top-level code ran). It documents loaded modules
    # only (a library's documentation module runs after its module is loaded).
    add_newdoc_real = np.add_newdoc

    def add_newdoc(place, obj, doc, warn_on_python=True):
        if type(place) is str and place in sys.modules:
            return add_newdoc_real(place, obj, doc, warn_on_python)
        return None

    # numpy's Dragon4 formatting writes into a static buffer of 16 KiB: a left padding past it
    # was written past it (np.format_float_positional(pad_left=16400) overwrote numpy's
    # cached pointers after it), and a precision near 2**31 overflowed its clamp (V71a H1).
    # Its numbers (precision, digits, paddings) are plain ints from -1 to 10000.
    import operator

    def dragon4_number(value):
        if value is None or type(value) is str:
            return value
        n = operator.index(value)
        if not -1 <= n <= 10000:
            raise ValueError('numpy formats floats with precision, digits and paddings from '
                             '-1 to 10000 in the sandbox (its buffer is 16 KiB)')
        return n

    def dragon4_bounded(real):
        def dragon4(x, *args, **kwargs):
            return real(x, *[dragon4_number(a) for a in args],
                        **{k: dragon4_number(v) for k, v in kwargs.items()})
        dragon4.__name__ = dragon4.__qualname__ = real.__name__
        dragon4.__doc__, dragon4.__module__ = real.__doc__, 'numpy.core.multiarray'
        return dragon4

    # numpy's error object, [buffer size, error mask, callback], is the list seterrobj was
    # given, and geterrobj handed that very list back: each ufunc call checks its length, reads
    # item 0 with the code's __index__, then items 1 and 2 unchecked, and an __index__ that
    # shrank the list had numpy read a freed int (and call a freed object as the callback,
    # V73a H3). numpy keeps a list of its own of plain ints, and hands out copies.
    seterrobj_real, geterrobj_real = umath.seterrobj, umath.geterrobj

    def seterrobj(errobj):
        if type(errobj) is not list or len(errobj) != 3:
            return seterrobj_real(errobj)  # numpy's error
        size, mask, call = errobj
        return seterrobj_real([int(operator.index(size)), int(operator.index(mask)), call])

    def geterrobj():
        return list(geterrobj_real())

    for f, real in ((seterrobj, seterrobj_real), (geterrobj, geterrobj_real)):
        f.__doc__, f.__module__ = real.__doc__, 'numpy'
    set_numeric_ops.__doc__, set_numeric_ops.__module__ = set_ops_real.__doc__, 'numpy'
    add_newdoc.__doc__, add_newdoc.__module__ = add_newdoc_real.__doc__, 'numpy'
    pairs = {id(set_ops_real): (set_ops_real, set_numeric_ops),
             id(add_newdoc_real): (add_newdoc_real, add_newdoc),
             id(seterrobj_real): (seterrobj_real, seterrobj),
             id(geterrobj_real): (geterrobj_real, geterrobj)}
    for real in (umath.add_docstring, umath._add_newdoc_ufunc):
        pairs[id(real)] = (real, refused)
    for real in (umath.set_typeDict, umath.set_datetimeparse_function):
        pairs[id(real)] = (real, names_refused)
    for real in (umath.dragon4_positional, umath.dragon4_scientific):
        pairs[id(real)] = (real, dragon4_bounded(real))
    _replace_all(pairs)


def _strided_views(np):
    # as_strided makes its view of an array from a class whose __array_interface__ is the
    # array's own, with the shape and strides the caller gives: numpy trusts an interface's
    # address and strides, so a view made so read and wrote past its array (and the class,
    # public, took any address). The class here answers the interface only for a view of its
    # base array that stays within the memory of the array under it, at the base's own address
    # (whatever its attributes were changed to); the classes the user makes answer none
    # (pyguard.c interface_guard).
    from numpy.lib import stride_tricks

    # What an array is, read by ndarray's own getters: a subclass of the user's may answer
    # dtype, base, flags or the interface otherwise (a dtype of numbers over an array of
    # objects made a view of their pointers).
    nd = np.ndarray
    dtype_of, base_of = nd.__dict__['dtype'].__get__, nd.__dict__['base'].__get__
    flags_of, interface_of = nd.__dict__['flags'].__get__, nd.__dict__['__array_interface__'].__get__

    def extent(a):
        """The bytes [first, last) of the array at the bottom of a's bases."""
        while issubclass(type(base_of(a)), nd):
            a = base_of(a)
        i = interface_of(a)
        first = last = int(i['data'][0])
        size = dtype_of(a).itemsize
        strides = i['strides']
        if strides is None:
            n = 1
            for k in i['shape']:
                n *= k
            return first, first + n * size
        for k, step in zip(i['shape'], strides):
            if k == 0:
                return first, first
            first += min(0, (k - 1) * step)
            last += max(0, (k - 1) * step)
        return first, last + size

    class DummyArray:
        """The interface of a view of an array (numpy.lib.stride_tricks.as_strided's), within
        the memory of that array."""
        __slots__ = ('_interface', 'base')

        def __init__(self, interface, base=None):
            self._interface = interface
            self.base = base

        @property
        def __array_interface__(self):
            base, i = self.base, self._interface
            if not issubclass(type(base), nd):
                raise ValueError('a strided view is made of an array')
            shape = tuple(int(n) for n in i['shape'])
            strides = i.get('strides')
            strides = None if strides is None else tuple(int(n) for n in strides)
            typestr = str(i['typestr'])
            kind = np.dtype(typestr)
            size = kind.itemsize
            under = dtype_of(base)
            # Objects only over an array of objects, element by element: other bytes read as
            # objects (or objects' pointers written as numbers) make any object.
            if kind.hasobject or under.hasobject:
                if kind != np.dtype(object) or under != kind or (
                        strides is not None and any(n % size for n in strides)):
                    raise ValueError('a strided view of objects is made of an array of '
                                     'objects, element by element')
            start = int(interface_of(base)['data'][0])
            low = high = start
            if strides is None:
                n = 1
                for k in shape:
                    n *= k
                high = start + n * size
            elif len(strides) != len(shape):
                raise ValueError('strides and shape differ in length')
            else:
                for k, step in zip(shape, strides):
                    if k < 0:
                        raise ValueError('negative dimensions are not allowed')
                    low += min(0, (k - 1) * step)
                    high += max(0, (k - 1) * step)
                high += size
            empty = 0 in shape
            first, last = extent(base)
            if not empty and (low < first or high > last):
                raise ValueError('as_strided: the view would reach memory outside the array it '
                                 'is made from, which the sandbox does not allow')
            readonly = bool(i['data'][1]) or not flags_of(base).writeable
            return {'data': (start, readonly), 'shape': shape, 'strides': strides,
                    'typestr': typestr, 'version': 3}

    DummyArray.__module__ = stride_tricks.__name__
    stride_tricks.DummyArray = DummyArray


# Time zones read in the zygote, held: dateutil keeps only its last few strongly.
_zones = []


def _time_zones():
    """Every named time zone (tz='Europe/Paris', tz_convert('US/Eastern'), 'dateutil/...'),
    read here: pytz and dateutil read a zone's file on its first use, which a worker cannot
    (dateutil then answered with no zone at all)."""
    try:
        import pytz
    except ImportError:
        return
    for name in pytz.all_timezones:
        pytz.timezone(name)
    pytz.timezone(pytz.all_timezones[0].lower())  # builds the lower-case lookup
    # the country tables, read from zone.tab and iso3166.tab on their first use
    len(pytz.country_timezones)
    len(pytz.country_names)
    try:
        from dateutil import tz
    except ImportError:
        return
    _zones.extend(tz.gettz(name) for name in pytz.all_timezones)


def _zone_transitions(np):
    """pandas converts times between zones with the transitions and offsets of a zone, read by
    get_dst_info (compiled) from any tzinfo that has pytz's attributes (_utc_transition_times,
    _transition_info) or dateutil's (_trans_list, _trans_idx), and then read without bounds
    checks: one offset per transition, the first transition the earliest time. A zone of the
    user's (a subclass of pytz's or dateutil's classes) with more transitions than offsets
    made tz_convert read past the offsets (garbage hours, any memory). What get_dst_info reads
    is kept in a module-level cache by the zone's name, which only pandas' code reaches: the
    cache here takes an entry only when it holds what the conversions rely on, and keeps the
    offsets inside a larger array, so the one place pandas reads before or after them (with
    any offsets a zone gives) is the nearest offset."""
    from pandas._libs.tslibs import timezones

    earliest = np.iinfo(np.int64).min + 1

    class ZoneTransitions(dict):
        __slots__ = ()

        def __setitem__(self, key, value):
            trans, deltas, kind = value
            trans = np.asarray(trans)
            deltas = np.asarray(deltas)
            if (type(trans) is not np.ndarray or trans.dtype != np.int64 or trans.ndim != 1
                    or deltas.dtype != np.int64 or deltas.ndim != 1):
                raise ValueError('the time zone\'s transitions are not int64 arrays')
            if len(trans) == 0 or len(trans) != len(deltas):
                raise ValueError('the time zone has %d transitions and %d offsets: it should '
                                 'have one offset per transition' % (len(trans), len(deltas)))
            if trans[0] != earliest or (len(trans) > 1 and not (trans[1:] >= trans[:-1]).all()):
                raise ValueError('the time zone\'s transitions should be in order from '
                                 'the earliest time')
            # pandas' own edges read one place past either end (a time that lands at the
            # earliest one, a missing time shifted past the last transition): both read as
            # the nearest offset, inside one array.
            n = len(trans)
            held = np.empty(n + 2, np.int64)
            held[1:n + 1] = deltas
            held[0], held[n + 1] = held[1], held[n]
            dict.__setitem__(self, key, (trans, held[1:n + 1], kind))

    cache = ZoneTransitions()
    for key, value in timezones.dst_cache.items():
        cache[key] = value
    timezones.dst_cache = cache
    _zone_readers(np, timezones, cache)


def _zone_readers(np, timezones, cache):
    """Besides the cache, two things pandas reads unchecked. ints_to_pydatetime (compiled, no
    bounds checks: iterating or boxing zoned times) reads a pytz zone's own _tzinfos and
    _transition_info at each time, at the position the cached transitions give: a zone whose
    _transition_info was shortened after pandas read it (the real zone's attributes are the
    user's to set on the instance) read past the list (a full escape was shown). It reads a
    view of the zone made here instead: the zone's transitions and their tzinfos as private
    copies, of the length the cache holds for it. And at a resolution coarser than
    nanoseconds (seconds, milli-, microseconds) pandas divides the transitions, dropping the
    padding above, so a time before the first transition (before 1677) read the offset before
    the array (SIGSEGV in pandas itself): such times are refused with a zone."""
    import operator
    import pytz
    from dateutil import tz as dtz
    from pandas._libs.tslibs import tzconversion, vectorized

    earliest = np.iinfo(np.int64).min + 1
    nat = np.iinfo(np.int64).min
    per_second = {7: 1, 8: 1000, 9: 1000000}

    class ZoneView(pytz.tzinfo.BaseTzInfo):
        pass

    # The library's own zone classes (every zone pytz and dateutil made here, their bases):
    # their instances' attributes are plain values. A class of the user's may answer each
    # read otherwise (a property failing pandas' first look, then naming another list).
    own = set()
    for mod in (pytz, pytz.tzinfo, dtz):
        own.update(v for v in vars(mod).values() if isinstance(v, type))
    own.update(type(pytz.timezone(name)) for name in pytz.all_timezones)
    own.update(type(z) for z in _zones if z is not None)

    def key_of(tz):
        if isinstance(tz, pytz.tzinfo.BaseTzInfo):
            return tz.zone
        if isinstance(tz, dtz.tzfile):
            return 'dateutil' + tz._filename
        return None

    def view(tz):
        key = key_of(tz) if tz is not None else None
        if key is None:
            return tz
        if type(tz) not in own:
            raise TypeError('zoned times are not iterated with a time zone class of the '
                            "user's that derives from pytz's or dateutil's in the sandbox: "
                            'use the zone by its name')
        # pandas reads and caches the zone now (checked), so what it does with it below is
        # decided here, from the zone's plain attributes.
        real['tz_convert_from_utc'](np.zeros(1, np.int64), tz, NS)
        entry = dict.get(cache, key)
        if entry is None or entry[2] != 'pytz':
            return tz
        v = ZoneView.__new__(ZoneView)
        v.zone = key
        v._utc_transition_times = tuple(tz._utc_transition_times)
        v._transition_info = tuple(tz._transition_info)
        v._tzinfos = dict(tz._tzinfos)
        if len(v._transition_info) != len(entry[0]):
            raise ValueError('the time zone %s has %d transitions and %d transition infos: '
                             'its attributes changed after pandas read them'
                             % (key, len(entry[0]), len(v._transition_info)))
        return v

    def coarse(stamps, tz, reso):
        # The stamps and the resolution the kernel gets, as checked: a private copy of the
        # stamps (the kernel runs the code's __eq__ of other arguments before it reads them,
        # which could rewrite an array the code holds) and the resolution as an int.
        reso = operator.index(reso) if reso is not None else None
        if tz is None or reso is None or reso not in per_second:
            return stamps, reso
        scale = 1000000000 // per_second[reso]
        day = 86400 * per_second[reso]
        stamps = np.array(stamps, copy=True)
        if stamps.dtype.kind not in 'iu' or stamps.size == 0:
            return stamps, reso
        a = stamps[stamps != nat]
        if a.size and int(a.min()) < earliest // scale + 2 * day:
            raise ValueError('times before 1677 are not converted to a time zone at this '
                             'resolution in the sandbox (pandas reads before its offsets)')
        return stamps, reso

    NS = 10  # pandas' NPY_FR_ns

    real = {name: getattr(vectorized, name) for name in (
        'ints_to_pydatetime', 'tz_convert_from_utc', 'get_resolution',
        'normalize_i8_timestamps', 'is_date_array_normalized', 'dt64arr_to_periodarr')}
    real.update({name: getattr(tzconversion, name) for name in (
        'tz_localize_to_utc', 'tz_convert_from_utc_single')})

    def ints_to_pydatetime(stamps, tz=None, freq=None, fold=False, box='datetime', reso=NS):
        stamps, reso = coarse(stamps, tz, reso)
        return real['ints_to_pydatetime'](stamps, view(tz), freq, fold, box, reso)

    def tz_convert_from_utc(stamps, tz, reso=NS):
        stamps, reso = coarse(stamps, tz, reso)
        return real['tz_convert_from_utc'](stamps, tz, reso)

    def get_resolution(stamps, tz=None, reso=NS):
        stamps, reso = coarse(stamps, tz, reso)
        return real['get_resolution'](stamps, tz, reso)

    def normalize_i8_timestamps(stamps, tz, reso):
        stamps, reso = coarse(stamps, tz, reso)
        return real['normalize_i8_timestamps'](stamps, tz, reso)

    def is_date_array_normalized(stamps, tz, reso):
        stamps, reso = coarse(stamps, tz, reso)
        return real['is_date_array_normalized'](stamps, tz, reso)

    def dt64arr_to_periodarr(stamps, freq, tz, reso=NS):
        stamps, reso = coarse(stamps, tz, reso)
        return real['dt64arr_to_periodarr'](stamps, freq, tz, reso)

    def tz_localize_to_utc(vals, tz, ambiguous=None, nonexistent=None, reso=NS):
        vals, reso = coarse(vals, tz, reso)
        # The kernel checks the length of ambiguous, then reads the array numpy makes of it
        # (the object's other answer: a shorter one was read past): one array, made here.
        # (by its type: an object's own __getattr__ could answer hasattr one way here and
        # the other way to the kernel)
        if ambiguous is not None and not issubclass(type(ambiguous), (str, bool, np.bool_)):
            ambiguous = np.array(ambiguous, dtype=bool).ravel()
        return real['tz_localize_to_utc'](vals, tz, ambiguous, nonexistent, reso)

    def tz_convert_from_utc_single(utc_val, tz, reso=NS):
        utc_val = operator.index(utc_val)
        _, reso = coarse(np.array([utc_val], dtype=np.int64), tz, reso)
        return real['tz_convert_from_utc_single'](utc_val, tz, reso)

    replacements = {}
    for name, f in list(locals().items()):
        if name in real and callable(f) and f is not real[name]:
            f.__name__ = f.__qualname__ = name
            f.__doc__ = real[name].__doc__
            f.__module__ = getattr(real[name], '__module__', None)
            replacements[id(real[name])] = (real[name], f)
    _replace_all(replacements)


def _excel_read_later(pd):
    """pd.ExcelFile reads a sheet when it is parsed, from the file the workbook keeps open: one
    made from a file's name and parsed in the session's next call reads the file's bytes, kept
    in memory at the end of the call that made it (openpyxl's workbook reads its archive)."""
    import zipfile
    try:
        from openpyxl.workbook.workbook import Workbook
        from pandas.io.common import IOHandles
        from pandas.io.excel._openpyxl import OpenpyxlReader
    except ImportError:
        return
    init_real = pd.ExcelFile.__init__

    def excel_in_memory(xl, room):
        # openpyxl's read-only workbook, reading the file pandas opened (the library's own
        # objects only: nothing of the code's runs here).
        reader = xl.__dict__.get('_reader')
        if type(reader) is not OpenpyxlReader:
            return 0
        book, handles = reader.__dict__.get('book'), reader.__dict__.get('handles')
        if type(book) is not Workbook or type(handles) is not IOHandles:
            return 0
        archive = book.__dict__.get('_archive')
        if type(archive) is not zipfile.ZipFile or archive.fp is not handles.handle:
            return 0
        mem = _in_memory(handles.handle, room)
        if mem is None:
            return 0
        book._archive = zipfile.ZipFile(mem)
        archive.close()
        return len(mem.getbuffer())

    def __init__(self, path_or_buffer, engine=None, storage_options=None):
        init_real(self, path_or_buffer, engine, storage_options)
        if type(self.__dict__.get('_reader')) is OpenpyxlReader:
            _later(self, excel_in_memory)

    __init__.__doc__ = init_real.__doc__
    pd.ExcelFile.__init__ = __init__


def _pandas():
    import numpy as np
    import pandas as pd
    from pandas.util import _exceptions

    pkg = _exceptions.os.path.dirname(pd.__file__) + '/'

    # Warnings say where they come from by walking the frames with inspect.getfile, which a
    # worker's frame views (pyguard.c) do not satisfy: the same walk over the views.
    def find_stack_level():
        # pandas' own counts its own frame, which is in pandas: this one is not.
        frame, n = sys._getframe(1), 1
        while frame is not None and frame.f_code.co_filename.startswith(pkg):
            frame, n = frame.f_back, n + 1
        return n

    _replace_everywhere(_exceptions.find_stack_level, find_stack_level)
    _excel_read_later(pd)

    # Setting values on a frame taken from another (sub = df[df.x > 0]; sub['y'] = 1) asks
    # gc.get_referents whether the frame it came from still exists (a dead reference gives
    # None, which refers to nothing). The sandbox refuses get_referents (it reaches the inside
    # of any object): the same answer, without it.
    from pandas.core import generic

    class _Referents:
        __slots__ = ()

        @staticmethod
        def get_referents(*objs):
            return [o for o in objs if o is not None]

    generic.gc = _Referents()
    df = pd.DataFrame({'a': [1, 2, 3], 'b': [1.5, 2.5, np.nan], 'c': list('xyz'),
                       'd': pd.date_range('2024-01-01', periods=3)})
    repr(df), str(df['a']), repr(df.set_index('d')), df._repr_html_(), df.describe()
    df.groupby('c').agg(['sum', 'mean']), df.pivot_table(index='c', values='a', aggfunc='sum')
    df.set_index('d').resample('D').mean(), df.to_json(orient='records'), df.to_csv()
    pd.read_csv(io.StringIO('x,y\n1,2\n')), df.merge(df, on='c'), pd.concat([df, df])
    df.sort_values('a'), df.rolling(2).mean(), df.query('a > 1'), df.value_counts()
    pd.get_dummies(df['c']), df.corr(numeric_only=True), df.melt(), pd.cut(df['a'], 2)
    df['a'].to_json(), df.info(buf=io.StringIO()), pd.to_datetime(['2024-01-02'])
    _time_zones()
    _zone_transitions(np)
    _read_html(pd)
    _xml_by_etree(pd)
    _pandas_takes(np)
    _window_bounds(np)
    _variable_window_bounds(np)
    _ewm_kernels(np)
    _window_kernels(np)
    _sas_reader()
    _csv_reads()
    _csv_memory_map()
    _object_hashes(np)
    _group_codes(np)
    _group_kernels(np)
    _groupby_kernels(np)
    _sparse_array_ops(np)
    _hash_tables(np)
    _interval_nodes(np)
    _masked_kernels(np)
    _lexsort_check(np)
    _block_placements(np)
    _join_orders(np)
    _object_passes(np)
    _period_steps(np)
    _period_fields(np)
    _pandas_counts(np)
    _unique_lists(np)
    _json_snapshots()
    _json_numpy_decoder()
    _final_dates()
    _kth_smallest()
    _cached_properties()
    _pickle_writes(pd)


def _own_quiet(f, *args, **kwargs):
    """own_arrays(f, ...) with no hook of the code's on its way: a warning raised inside it
    (numpy's floating point warnings, a library's) meets the warnings filters, whose entries the
    code may add (an entry's message matcher is called), and numpy's error callback is the
    code's to set (V63a H1: a cast overflow in add_points called it): either ran the code's,
    by C callables with no frame of it too, inside the scope, where what is made counts as
    compiled code's own. Inside, warnings are ignored and floating point errors too (numpy's
    error object set to ignore all with no callback: what np.errstate does, without its
    Python steps, which cost a scope more than qhull's work on small inputs)."""
    import warnings
    import numpy as np
    filters, errobj = warnings.filters, np.geterrobj()
    warnings.filters = [('ignore', None, Warning, None, 0)]
    warnings._filters_mutated()
    np.seterrobj([errobj[0], 0, None])
    try:
        return own_arrays(f, *args, **kwargs)
    finally:
        np.seterrobj(errobj)
        warnings.filters = filters
        warnings._filters_mutated()


def _own_method(real):
    def method(self, *args, **kwargs):
        return _own_quiet(real, self, *args, **kwargs)
    method.__name__ = method.__qualname__ = getattr(real, '__name__', 'method')
    method.__doc__ = getattr(real, '__doc__', None)
    method.__wrapped__ = real
    method._own_arrays = True
    return method


def _own_methods(cls):
    """cls's methods (as patched already) run as own_arrays: the arrays its compiled code makes
    while they run are resized as it asks (pydata.c: any other only with the references the
    running frame shows)."""
    for attr, real in list(cls.__dict__.items()):
        real = type_patches.get((cls, attr), real)
        kind = type(real).__name__
        if not attr.startswith('__') and not hasattr(real, '_own_arrays') and kind in (
                'method_descriptor', 'function', 'cython_function_or_method'):
            type_patches[(cls, attr)] = _own_method(real)


def _json_numpy_decoder():
    """pandas' JSON reader with numpy=True (pandas._libs.json.loads, behind pd.read_json and
    pd.io.json.loads) decodes straight into numpy arrays: an empty row before others ('[[],[1]]')
    wrote past its array's one-byte block and freed it twice (two live arrays over one block:
    any memory). pandas deprecated the option; the sandbox refuses it (the plain decoder reads
    the same JSON)."""
    import operator
    from pandas._libs import json as libjson
    raw = libjson.loads

    def loads(obj, *args, **kwargs):
        kwargs = _plain_names(kwargs)
        # (the decoder reads numpy as an int, by its __index__: read so once, and given on)
        numpy = operator.index(args[1] if len(args) > 1 else kwargs.get('numpy', False))
        if numpy:
            raise ValueError("numpy=True is not available in the sandbox (pandas' numpy JSON "
                             'decoder writes past its arrays): read without it')
        if len(args) > 1:
            args = (args[0], numpy) + args[2:]
        elif 'numpy' in kwargs:
            kwargs['numpy'] = numpy
        return raw(obj, *args, **kwargs)

    loads.__doc__ = raw.__doc__
    _replace_everywhere(raw, loads)


def _json_snapshots():
    """pandas' JSON writer (pandas._libs.json.dumps, behind DataFrame.to_json, Series.to_json,
    pd.io.json.dumps and the Excel writers' style keys) walks what it is given in compiled code:
    it holds a dict's values borrowed while it calls str() on a non-str key, keeps a list's
    length from before user code runs (default_handler, __str__, toDict) and reads its items by
    index, and walks what toDict() and default_handler return the same way. A key's __str__ or a
    handler that emptied the container freed the object being written (used after free) or read
    past the list's end. The writer is now given a private copy in which every dict, list and
    tuple is a plain one only this copy holds (a dict's keys already the strings the writer would
    make of them), sets are lists of their items, objects with toDict() are the dicts it returned,
    what the writer hands default_handler (or lists by dir() without one) is already resolved, a
    DataFrame, Series or Index is a new one of pandas' own class over the same numbers (views) and
    private object arrays whose items are copied the same way; the writer's default_handler is
    one that copies what the user's returns. And it writes an indent's spaces unchecked past
    its buffer (indent=100000: SIGSEGV): it writes without them and they are put in here, as it
    puts them. The output is the same."""
    import datetime
    import decimal
    import operator
    import re
    import numpy as np
    import pandas as pd
    from pandas._libs import json as libjson
    from pandas.core.internals import BlockManager
    from pandas.core.internals.blocks import DatetimeTZBlock, new_block

    raw = libjson.dumps
    names = ('ensure_ascii', 'double_precision', 'encode_html_chars', 'orient', 'date_unit',
             'iso_dates', 'default_handler', 'indent')
    limit = 1024  # the writer's own depth: deeper fails there too (OverflowError)
    exact = (type(None), bool, int, float, str, bytes)
    same_kind = (np.integer, np.bool_, np.float32, np.float64, np.datetime64, type(pd.NA))

    class _Name(str):
        """A key equal to an earlier one as a string: kept apart, as the writer keeps both."""
        __hash__ = object.__hash__
        __eq__ = object.__eq__

    def plain(dt):
        return (isinstance(dt, np.dtype) and (dt.kind in 'biuMmUS' or
                                              (dt.kind == 'f' and dt.itemsize <= 8)))

    def is_iter(t):
        return any('__next__' in vars(k) for k in t.__mro__)

    def key(k):
        t = type(k)
        if t is str or t is bytes:
            return k
        if issubclass(t, str):
            return str.__str__(k)
        if issubclass(t, bytes):
            return bytes.__getitem__(k, slice(None))
        s = str(k)
        if not isinstance(s, str):
            raise TypeError('__str__ returned non-string')
        return str.__str__(s)

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                k = _Name(k) if isinstance(k, str) else bytes(k)
                if isinstance(k, bytes):
                    raise TypeError('repeated bytes key in a dict given to the JSON writer')
            out[k] = v
        return out

    class Copier:
        def __init__(self, handler):
            self.handler = handler

        def array(self, a, fmt, depth):
            """A private array with the items the writer would read from a."""
            if plain(a.dtype):
                return a.view(np.ndarray)
            flat = a.ravel()
            out = np.empty(flat.shape[0], dtype=object)
            for i in range(flat.shape[0]):
                x = flat.item(i)
                out[i] = x if type(x) in exact else self.copy(x, fmt, depth + 1)
            return out.reshape(a.shape)

        def labels(self, a):
            """Labels as the writer makes them: dates and durations as they are, else str()."""
            if a.dtype != object:
                return a.view(np.ndarray)
            flat = a.ravel()
            out = np.empty(flat.shape[0], dtype=object)
            for i in range(flat.shape[0]):
                x = flat.item(i)
                if not isinstance(x, (datetime.date, datetime.timedelta)):
                    x = str(x)
                    x = str.__str__(x) if isinstance(x, str) else x
                out[i] = x
            return out.reshape(a.shape)

        def values(self, o):
            """What the writer reads of an Index's or a Series's values."""
            if getattr(o, 'tz', None) is not None:
                return np.asarray(o.__array__())
            return np.asarray(o.values)

        def index(self, idx, fmt, depth, as_labels):
            if type(idx) is pd.RangeIndex:
                out = pd.RangeIndex(idx.start, idx.stop, idx.step)
            else:
                a = self.values(idx)
                a = self.labels(a) if as_labels else self.array(a, fmt, depth)
                out = pd.Index(a, dtype=a.dtype, copy=False, tupleize_cols=False)
            if not as_labels:
                out._name = self.copy(idx.name, fmt, depth + 1)
            return out

        def copy(self, o, fmt, depth):
            if depth > limit:
                raise OverflowError('Maximum recursion level reached')
            t = type(o)
            if t in exact:
                return o
            if not is_iter(t) and not (issubclass(t, np.ndarray) and np.ndarray.ndim.__get__(o)):
                if issubclass(t, int):
                    return int.__int__(o)
                if issubclass(t, float):
                    return float.__float__(o)
                if issubclass(t, bytes):
                    return bytes.__getitem__(o, slice(None))
                if issubclass(t, str):
                    return str.__str__(o)
                if issubclass(t, decimal.Decimal):
                    return o if t is decimal.Decimal else decimal.Decimal(float(o))
                if issubclass(t, datetime.date):
                    return o
                if issubclass(t, datetime.time):
                    s = o.isoformat()
                    if isinstance(s, str):
                        return str.__str__(s)
                    if isinstance(s, bytes):
                        return bytes.__getitem__(s, slice(None))
                    raise TypeError('isoformat() of a time returned %s' % type(s).__name__)
                if issubclass(t, datetime.timedelta):
                    if t is datetime.timedelta or t is pd.Timedelta:
                        return o
                    if hasattr(o, 'value'):
                        v = o.value
                        if not isinstance(v, int):
                            raise TypeError('the value of a timedelta is not an int')
                        return pd.Timedelta(int.__int__(v))
                    s = o.total_seconds()
                    if not isinstance(s, float):
                        raise TypeError('total_seconds() of a timedelta is not a float')
                    return pd.Timedelta(int(float.__float__(s) * 1000000000))
                if issubclass(t, same_kind):
                    return o
                if issubclass(t, np.ndarray):
                    raise TypeError('%r (0d array) is not JSON serializable at the moment' % (o,))
            if issubclass(t, pd.Index):
                return self.index(o, fmt, depth, False)
            if issubclass(t, pd.Series):
                split = fmt == 'split'
                sub = 'values' if split else fmt
                data = self.array(self.values(o), sub, depth)
                if split or fmt in ('index', 'columns'):
                    idx = self.index(o.index, sub, depth, not split)
                else:
                    idx = pd.RangeIndex(len(data))
                out = pd.Series(data, index=idx, dtype=data.dtype, copy=False)
                out._name = self.copy(o.name, sub, depth + 1) if split else None
                return out
            if issubclass(t, np.ndarray):
                return self.array(np.asarray(o), fmt, depth)
            if issubclass(t, pd.DataFrame):
                return self.frame(o, fmt, depth)
            # (loops, not comprehensions: one frame of Python for each level)
            if issubclass(t, dict):
                out = []
                for k, v in list(dict.items(o)):
                    out.append((key(k), self.copy(v, fmt, depth + 1)))
                return pairs(out)
            if issubclass(t, (list, tuple, set, frozenset)):
                items = (list.copy(o) if issubclass(t, list) else list(iter(o))
                         if issubclass(t, (set, frozenset)) else
                         list(tuple.__getitem__(o, slice(None))))
                for i in range(len(items)):
                    items[i] = self.copy(items[i], fmt, depth + 1)
                return tuple(items) if issubclass(t, tuple) else items
            try:
                to_dict = o.toDict
            except Exception:
                to_dict = None
            if to_dict is not None:
                try:
                    d = to_dict()
                except Exception:
                    return None
                if not issubclass(type(d), dict):
                    return None
                out = []
                for k, v in list(dict.items(d)):
                    out.append((key(k), self.copy(v, fmt, depth + 1)))
                return pairs(out)
            if self.handler is not None:
                return self.copy(self.handler(o), fmt, depth + 1)
            attrs = []
            for name in dir(o):
                if not isinstance(name, str):
                    raise TypeError('dir() gave a name that is not a str')
                if name[:1] == '_':
                    continue
                try:
                    v = getattr(o, name)
                except Exception:
                    continue
                if callable(v):
                    continue
                attrs.append((str.__str__(name), self.copy(v, fmt, depth + 1)))
            return pairs(attrs)

        def frame(self, o, fmt, depth):
            split = fmt == 'split'
            sub = 'values' if split else fmt
            mgr = o._mgr
            if not isinstance(mgr, BlockManager):
                raise TypeError('to_json: only frames of blocks can be written')
            blocks = []
            for blk in mgr.blocks:
                if isinstance(blk, DatetimeTZBlock):
                    blocks.append(blk.make_block_same_class(blk.values.copy()))
                    continue
                v = np.asarray(blk.values_for_json())
                if v.ndim == 1:
                    v = v.reshape(1, -1)
                blocks.append(new_block(self.array(v, sub, depth), blk.mgr_locs, ndim=2))
            # split writes both axes as values, records the columns as labels, index and
            # columns both as labels; values writes neither
            cols, rows = (self.index(ax, sub, depth, not split)
                          if split or fmt == 'index' or fmt == 'columns' or
                          (fmt == 'records' and n == 0) else pd.RangeIndex(len(ax))
                          for n, ax in enumerate(mgr.axes))
            return pd.DataFrame(BlockManager(tuple(blocks), [cols, rows]))

    def dumps(obj, *args, **kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        raw(None, *args, **kwargs)  # the options checked as the writer checks them
        opts = dict(zip(names, args))
        opts.update(kwargs)
        handler = opts.get('default_handler')
        copier = Copier(handler)
        fmt = opts.get('orient') or 'columns'
        try:
            private = copier.copy(obj, fmt, 1)
        except RecursionError:
            raise OverflowError('Maximum recursion level reached') from None
        opts['default_handler'] = lambda o: copier.copy(o, fmt, 1)
        indent = opts.get('indent')
        indent = None if indent is None else operator.index(indent)
        if indent is not None and indent > 0:
            # the writer's indents are written unchecked past its buffer (V98b H2): it writes
            # without them, and they are put in here as it puts them
            opts['indent'] = 0
            return indented(raw(private, **opts), indent)
        return raw(private, **opts)

    # (a string's characters unrolled: one repeated group a character kept a mark a character)
    token = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],]|[^"{}\[\],]+', re.S)

    def indented(text, n):
        out, level, pad = [], 0, ' ' * n
        tokens = token.findall(text)
        i = 0
        while i < len(tokens):
            t = tokens[i]
            if t == '{' or t == '[':
                close = '}' if t == '{' else ']'
                if i + 1 < len(tokens) and tokens[i + 1] == close:
                    out.append(t + '\n\n' + pad * level + close)  # (an empty one)
                    i += 2
                    continue
                level += 1
                out.append(t + '\n' + pad * level)
            elif t == '}' or t == ']':
                level -= 1
                out.append('\n' + pad * level + t)
            elif t == ',':
                out.append(',\n' + pad * level)
            else:
                out.append(t)
            i += 1
        return ''.join(out)

    dumps.__doc__ = raw.__doc__
    dumps.__module__ = 'pandas._libs.json'
    dumps.__name__ = dumps.__qualname__ = 'dumps'
    _replace_all({id(raw): (raw, dumps), id(libjson.encode): (libjson.encode, dumps)})


def _group_kernels(np):
    """pandas' compiled group kernels index their arrays by the group labels they are given,
    unchecked, and public functions hand them a caller's labels as they are:
    get_group_index_sorter(labels, ngroups) gave groupsort_indexer a label past ngroups
    (counts[label + 1] += 1: an add at any offset from a small array), and
    WrappedCythonOp(...).cython_operation(values=..., comp_ids=..., ngroups=...) gave the
    aggregation and transform kernels (group_sum, group_cumsum, ...) labels past their outputs
    and values longer than the labels (writes at any offset). groupsort_indexer, wherever it is
    named, checks its labels lie in [-1, ngroups); every groupby kernel call checks its labels
    (one per row, in [-1, ngroups)) and its masks' shapes first."""
    import operator
    import pandas._libs.algos as libalgos
    from pandas.core.groupby import ops

    def labels(codes, n, ngroups, what):
        codes = np.array(codes, copy=True)  # what is checked is what the kernel reads
        if codes.dtype != np.intp or codes.ndim != 1:
            raise TypeError('%s should be a 1-D array of intp group labels' % what)
        if n is not None and len(codes) != n:
            raise ValueError('%s should hold a label for each of the %d rows' % (what, n))
        if len(codes) and (codes.min() < -1 or codes.max() >= ngroups):
            raise IndexError('%s holds a label outside the %d groups' % (what, ngroups))
        return codes

    real = libalgos.groupsort_indexer

    def groupsort_indexer(index, ngroups):
        ngroups = operator.index(ngroups)
        if ngroups < 0:
            raise ValueError('ngroups should not be negative')
        return real(labels(index, None, ngroups, 'the index'), ngroups)

    groupsort_indexer.__name__ = groupsort_indexer.__qualname__ = 'groupsort_indexer'
    groupsort_indexer.__doc__ = real.__doc__
    groupsort_indexer.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, groupsort_indexer)

    own = ops.WrappedCythonOp.__dict__['_call_cython_op']

    def _call_cython_op(self, values, *, min_count, ngroups, comp_ids, mask, result_mask,
                        **kwargs):
        if not isinstance(values, np.ndarray) or values.ndim != 2:
            raise TypeError('values should be a 2-D array')
        ngroups = operator.index(ngroups)
        if ngroups < 0:
            raise ValueError('ngroups should not be negative')
        k, n = values.shape
        comp_ids = labels(comp_ids, n, ngroups, 'comp_ids')
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != values.shape:
                raise ValueError('the mask should have the shape of the values')
        if result_mask is not None:
            result_mask = np.asarray(result_mask)
            rows = n if self.kind == 'transform' else ngroups
            if result_mask.shape != (k, rows):
                raise ValueError('the result mask should have a value for each result')
        return own(self, values, min_count=min_count, ngroups=ngroups, comp_ids=comp_ids,
                   mask=mask, result_mask=result_mask, **kwargs)

    _call_cython_op.__doc__ = own.__doc__
    ops.WrappedCythonOp._call_cython_op = _call_cython_op


def _group_codes(np):
    """groupby's compiled kernels index their working arrays by each row's group code unchecked,
    and a grouping by a Categorical takes its codes as they are (from_codes keeps the array it
    was given; a code edited in place reached past the kernel's arrays: any memory). A
    grouping's codes are checked against its groups and copied when it is made."""
    from pandas.util._decorators import cache_readonly
    from pandas.core.groupby.grouper import Grouping

    made = Grouping.__dict__['_codes_and_uniques'].fget

    def _codes_and_uniques(self):
        codes, uniques = made(self)
        codes = np.array(codes, copy=True)
        if len(codes) and (codes.min() < -1 or codes.max() >= len(uniques)):
            raise ValueError('a group code lies outside the %d groups' % len(uniques))
        return codes, uniques

    _codes_and_uniques.__doc__ = made.__doc__
    Grouping._codes_and_uniques = cache_readonly(_codes_and_uniques)


def _bounds_within(np, n, start, end, empty=True):
    """Copies of a window kernel's bounds (what is checked is what it reads), checked: two 1-D
    arrays of one length, start <= end (start < end where no window may be empty) within the
    n values."""
    start, end = np.array(start, dtype=np.int64), np.array(end, dtype=np.int64)
    if start.ndim != 1 or start.shape != end.shape:
        raise ValueError('the window bounds should be two 1-D arrays of one length')
    if len(start) and ((start < 0).any() or (end > n).any() or
                       ((start > end) if empty else (start >= end)).any()):
        raise ValueError('the window bounds lie outside the %d values' % n)
    return start, end


def _window_bounds(np):
    """A rolling window's bounds come from its indexer, and a BaseIndexer of the user's may
    return any (pandas checks their lengths): the compiled window kernels read
    values[start:end] unchecked (SIGSEGV, or memory around the values read as numbers).
    The indexer a window uses is wrapped: its bounds lie within the values, start <= end."""
    from pandas.api.indexers import BaseIndexer
    from pandas.core.window import rolling

    class CheckedIndexer(BaseIndexer):
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):  # window_size, and the indexer's own
            return getattr(self.inner, name)

        def get_window_bounds(self, num_values=0, min_periods=None, center=None,
                              closed=None, step=None):
            return _bounds_within(np, num_values, *self.inner.get_window_bounds(
                num_values=num_values, min_periods=min_periods, center=center, closed=closed,
                step=step))

    own = rolling.BaseWindow.__dict__['_get_window_indexer']

    def _get_window_indexer(self):
        return CheckedIndexer(own(self))

    _get_window_indexer.__doc__ = own.__doc__
    rolling.BaseWindow._get_window_indexer = _get_window_indexer


def _ewm_kernels(np):
    """The exponentially weighted windows' compiled kernels (ewm: mean and sum; ewmcov: var,
    std, cov, corr) read one time gap a value and the values of each window without bounds
    checks: the gaps are an attribute of the window object (_deltas), which the user may set,
    and a short view of the user's own array read the memory beyond it (doubles near it read
    back). Each kernel takes numpy's own contiguous copies of its arrays, checked first: the
    windows within the values and none empty (its first value is read), a gap for each value
    after the first, the second series as long as the first. So do the weighted windows'."""
    from pandas._libs.window import aggregations

    def floats(a, what):
        a = np.array(a, dtype=np.float64)
        if a.ndim != 1:
            raise ValueError('the %s should be 1-dimensional' % what)
        return a

    def bounds(n, start, end):
        return _bounds_within(np, n, start, end, empty=not n)

    ewm_real, ewmcov_real = aggregations.ewm, aggregations.ewmcov

    def ewm(vals, start, end, minp, com, adjust, ignore_na, deltas=None, normalize=True):
        vals = floats(vals, 'values')
        start, end = bounds(len(vals), start, end)
        if deltas is not None:
            deltas = floats(deltas, 'time gaps')
            if len(vals) and len(deltas) < len(vals) - 1:
                raise ValueError('the window needs a time gap for each value after the first '
                                 '(%d values, %d gaps)' % (len(vals), len(deltas)))
        return ewm_real(vals, start, end, minp, com, adjust, ignore_na, deltas, normalize)

    def ewmcov(input_x, start, end, minp, input_y, com, adjust, ignore_na, bias):
        input_x, input_y = floats(input_x, 'values'), floats(input_y, 'values')
        if len(input_x) != len(input_y):
            raise ValueError('the two series should be of one length')
        start, end = bounds(len(input_x), start, end)
        return ewmcov_real(input_x, start, end, minp, input_y, com, adjust, ignore_na, bias)

    # The weighted windows' (win_type=) variance takes an index modulo the window's length:
    # a window of 0 (pandas takes it) divided by zero (SIGFPE). Their weights are one or more.
    def weighted(real):
        def kernel(values, weights, minp, *args, **kwargs):
            values, weights = floats(values, 'values'), floats(weights, 'window weights')
            if len(weights) == 0:
                raise ValueError('a weighted window needs a length of 1 or more')
            return real(values, weights, minp, *args, **kwargs)
        kernel.__name__, kernel.__doc__ = real.__name__, real.__doc__
        kernel.__module__ = getattr(real, '__module__', None)
        return kernel

    pairs = {id(ewm_real): (ewm_real, ewm), id(ewmcov_real): (ewmcov_real, ewmcov)}
    for f, real in ((ewm, ewm_real), (ewmcov, ewmcov_real)):
        f.__doc__, f.__module__ = real.__doc__, getattr(real, '__module__', None)
    for name in ('roll_weighted_sum', 'roll_weighted_mean', 'roll_weighted_var'):
        real = getattr(aggregations, name)
        pairs[id(real)] = (real, weighted(real))
    _replace_all(pairs)


def _window_kernels(np):
    """The rolling kernels (roll_sum, mean, var, skew, kurt, median_c, max, min, quantile,
    rank, apply) read values[start[i]:end[i]] for each window unchecked. _window_bounds checks
    the bounds BaseWindow's indexer makes, but grouped and expanding windows make their own
    (a RollingGroupby mapped each group's bounds through the grouper's indices, a dict the
    code's indexer edited while the bounds were made: windows 64 MiB past the values, read
    back as the result). Each kernel checks the bounds it is given against the values it is
    given: copies of both, start <= end within the values."""
    from pandas._libs.window import aggregations

    def checked(real):
        def kernel(values, start, end, *args, **kwargs):
            values = np.array(values, dtype=np.float64)
            if values.ndim != 1:
                raise ValueError('a window kernel reads 1-D values')
            start, end = _bounds_within(np, len(values), start, end)
            return real(values, start, end, *args, **kwargs)
        return kernel

    real_apply = aggregations.roll_apply

    def roll_apply(obj, start, end, *args, **kwargs):
        # (the windows of the values are sliced, and counted by roll_sum)
        start, end = _bounds_within(np, len(np.asarray(obj)), start, end)
        return real_apply(obj, start, end, *args, **kwargs)

    pairs = {id(real_apply): (real_apply, roll_apply)}
    for name in ('roll_sum', 'roll_mean', 'roll_var', 'roll_skew', 'roll_kurt',
                 'roll_median_c', 'roll_max', 'roll_min', 'roll_quantile', 'roll_rank'):
        real = getattr(aggregations, name)
        pairs[id(real)] = (real, checked(real))
    for real, new in pairs.values():
        new.__name__ = new.__qualname__ = real.__name__
        new.__doc__ = real.__doc__
    _replace_all(pairs)


def _threads_run():
    """Do Python threads run beside the call's own (the code's, where threading is allowed)?
    An array a check reads in place may then change between the check and the kernel that
    trusts it: such checks take a private copy (a thread changing a checked index while the
    main thread went on to the kernel read and wrote past its arrays: V82b)."""
    import _thread
    return _thread._count() > 0


def _variable_window_bounds(np):
    """calculate_variable_window_bounds(num_values, window_size, min_periods, center, closed,
    index) (compiled, no bounds checks; named by pandas.core.indexers.objects, whose
    VariableWindowIndexer calls it) trusted num_values against the index: num_values past its
    length read index[num_values - 1] and the values after it (any memory, SIGSEGV). An index
    that is not monotonic (or whose values differ by 2**63 or more) made a window's end go
    below 0 and read the index backwards, past its start. It is checked first, wherever it is
    named: the index a 1-D array of int64, one value per value, monotonic, its span below
    2**63; the scalars converted here (so no code of the user's runs inside)."""
    import operator
    from pandas._libs.window import indexers

    real = indexers.calculate_variable_window_bounds

    def calculate_variable_window_bounds(num_values, window_size, min_periods, center, closed,
                                         index):
        num_values = operator.index(num_values)
        window_size = operator.index(window_size)
        center = bool(center)
        if closed is not None:
            if not isinstance(closed, str):
                raise TypeError('closed should be a str or None')
            closed = str.__getitem__(closed, slice(None))
        index = np.asarray(index)
        if index.ndim != 1 or index.dtype != np.int64:
            raise TypeError('the index should be a 1-D array of int64')
        index = np.ascontiguousarray(index)
        if _threads_run():
            index = index.copy()
        if num_values > 0:
            if num_values != len(index):
                raise ValueError('num_values (%d) should be the length of the index (%d)'
                                 % (num_values, len(index)))
            d = np.diff(index)
            if not ((d >= 0).all() or (d <= 0).all()):
                raise ValueError('the index should be monotonic')
            if int(index.max()) - int(index.min()) >= 1 << 63:
                raise ValueError('the index values should differ by less than 2**63')
        return real(num_values, window_size, min_periods, center, closed, index)

    calculate_variable_window_bounds.__doc__ = real.__doc__
    calculate_variable_window_bounds.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, calculate_variable_window_bounds)


def _sas_reader():
    """pandas' SAS7BDAT reader parses a file's rows with a compiled class
    (pandas.io.sas._sas.Parser, no bounds checks) that takes its whole state from the object it
    is given (any object: column lengths and offsets, the output buffers, the row counters, the
    page bytes) and writes at the offsets they give, unchecked: Parser(fake).read(1) wrote
    chosen bytes at a chosen address (the sandbox escaped). A real reader's fields are the
    user's too (set between reads), and its decompressors write where a crafted file says.
    SAS7BDAT files are not read in the sandbox: the reader (pd.read_sas of a .sas7bdat, or
    SAS7BDATReader) and the compiled class refuse, with the reason. SAS XPORT files (.xpt,
    read in Python) are read as before."""
    from pandas.io.sas import _sas, sas7bdat

    why = ("SAS7BDAT files are not read in the sandbox: pandas' compiled reader of them "
           "writes where the file's layout says, unchecked. Save the data as CSV or SAS "
           "XPORT (.xpt, which pd.read_sas reads) outside the sandbox.")

    def refused(*args, **kwargs):
        raise NotImplementedError(why)

    def made(args, kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        refused()

    def __init__(self, *args, **kwargs):
        refused()

    # Parser(obj), and Parser.__init__(p, obj) on one made with Parser.__new__ (the class's
    # own __init__ in its dict runs the C initialiser directly).
    init_checks[_sas.Parser] = made
    type_patches[(_sas.Parser, '__init__')] = refused
    __init__.__doc__ = sas7bdat.SAS7BDATReader.__init__.__doc__
    sas7bdat.SAS7BDATReader.__init__ = __init__


def _csv_reads():
    """read_csv's C parser reads its source through the source's read(): a chunk that was a
    bytes of the user's subclass had its length taken from its __len__, and the tokenizer read
    that many bytes from the chunk's data (other objects' memory parsed into the frame, or
    SIGSEGV past the mapping). pandas' C parser wrapper (read_csv, read_table, and their
    iterators) now reads through an object whose read() answers the source's chunk as an
    exact bytes or str (a copy of a subclass's own data); what else read() answers is
    handed on as it is (the parser refuses it)."""
    from pandas.io.parsers import c_parser_wrapper

    calling_out = [0]  # calls of the code's a reader is making (its source's read, skiprows)

    class ExactReads:
        __slots__ = ('source',)

        def __init__(self, source):
            self.source = source

        def read(self, *args):
            calling_out[0] += 1
            try:
                r = self.source.read(*args)
            finally:
                calling_out[0] -= 1
            if type(r) is bytes or type(r) is str:
                return r
            if isinstance(r, bytes):
                return bytes.__getitem__(r, slice(None))
            if isinstance(r, str):
                return str.__getitem__(r, slice(None))
            return r

    own = c_parser_wrapper.CParserWrapper.__init__

    def __init__(self, src, **kwds):
        own(self, ExactReads(src), **kwds)

    __init__.__doc__ = own.__doc__
    c_parser_wrapper.CParserWrapper.__init__ = __init__

    # The C parser class itself (reachable as a name of the wrapper's module) reads its
    # source when it is made: it reads through the same object. Its attributes are set by
    # pandas only: the parser keeps skiprows' callable without holding it.
    reader = c_parser_wrapper.parsers.TextReader

    # (always: a source's read could be there for the parser and not for a check before it)
    def made(args, kw):
        kw = _plain_names(kw)  # (names by their characters)
        if args and type(args[0]) is not ExactReads:
            args = (ExactReads(args[0]),) + tuple(args[1:])
        elif kw and 'source' in kw and type(kw['source']) is not ExactReads:
            kw = dict(kw, source=ExactReads(kw['source']))
        skip = kw.get('skiprows') if kw else None
        if callable(skip):
            def skiprows(*a, **k):
                calling_out[0] += 1
                try:
                    return skip(*a, **k)
                finally:
                    calling_out[0] -= 1
            kw = dict(kw, skiprows=skiprows)
        return tuple(args), kw

    new_checks[reader] = made
    library_only.extend((reader, n) for n, v in vars(reader).items()
                        if type(v).__name__ == 'getset_descriptor' and v.__set__ is not None)

    # close() freed the parser's buffers and its source of a reader that stayed usable (a
    # later get_chunk() read through the freed source: the code's number taken for the source
    # object's address), and a converter, a source's read() or a skiprows callable that read
    # from their own reader had it tokenize under the columns being converted (their freed
    # words parsed as text). The reader's memory is freed with it; one read at a time, and
    # none from the code it runs. (The column conversion is read's own step, called from it,
    # not from a call of the code's the reader makes.)
    real = {name: vars(reader)[name] for name in ('read', 'read_low_memory',
                                                  '_convert_column_data')}
    busy = {}  # {id(reader): [converting]} while it reads

    def refused():
        return RuntimeError('the CSV reader is reading: code it runs (a converter, its '
                            'source, skiprows) may not read from it')

    def reading(name):
        f = real[name]

        def method(self, *args, **kwargs):
            key = id(self)
            if key in busy:
                raise refused()
            busy[key] = [False]
            try:
                return f(self, *args, **kwargs)
            finally:
                del busy[key]
        method.__name__ = method.__qualname__ = name
        method.__doc__ = f.__doc__
        return method

    def _convert_column_data(self, *args, **kwargs):
        state = busy.get(id(self))
        if state is None or state[0] or calling_out[0]:
            raise refused() if state else TypeError('a CSV reader converts its columns as it '
                                                    'reads them')
        state[0] = True
        try:
            return real['_convert_column_data'](self, *args, **kwargs)
        finally:
            state[0] = False

    def close(self):
        pass

    _convert_column_data.__doc__ = real['_convert_column_data'].__doc__
    close.__doc__ = vars(reader)['close'].__doc__
    for name in ('read', 'read_low_memory'):
        type_patches[(reader, name)] = reading(name)
    type_patches[(reader, '_convert_column_data')] = _convert_column_data
    type_patches[(reader, 'close')] = close


def _csv_memory_map():
    """read_csv(memory_map=True) (and read_table, read_fwf) mapped the file with mmap, which
    the sandbox refuses: the call failed with "mmap.__new__ is not allowed". memory_map only
    makes pandas read the same bytes another way: the file is now read as without it."""
    from pandas.io import common

    real = common._maybe_memory_map

    def _maybe_memory_map(handle, memory_map, *args, **kwargs):
        return real(handle, False, *args, **kwargs)

    _replace_everywhere(real, _maybe_memory_map)


def _object_hashes(np):
    """hash_object_array(arr, key, encoding) (compiled; behind pd.util.hash_array,
    hash_pandas_object and pandas.core.util.hashing) took each item's bytes from
    item.encode(encoding) (or str(item).encode(...) for None, NaN and tuples) and read that
    result as a bytes without looking at its type: a str subclass whose encode() answered a
    float had the float's value read as the length of bytes to hash (memory past the object
    read through the hashes, or SIGSEGV), and an array's own __len__ gave the number of items
    read. It now gets a private 1-D object array of exact str (a str subclass's own
    characters; str() of None, NaN and tuples, as the function makes them), exact bytes and
    the items it refuses: an ordinary str subclass hashes as before."""
    from pandas._libs import hashing

    real = hashing.hash_object_array
    plain = (str, bytes, type(None))

    def exact(s):
        return s if type(s) is str else str.__getitem__(s, slice(None))

    def is_nan(v):
        if isinstance(v, (float, np.floating)):
            f = float(v)
            return f != f
        if isinstance(v, (complex, np.complexfloating)):
            c = complex(v)
            return c != c
        return False

    def item(v):
        if type(v) in plain:
            return v
        if isinstance(v, bytes):
            return bytes.__getitem__(v, slice(None))
        if isinstance(v, str):
            return exact(v)
        if is_nan(v) or isinstance(v, tuple):
            if isinstance(v, tuple):
                hash(v)
            s = str(v)
            return exact(s) if isinstance(s, str) else s
        return v  # refused by the function (not a str, bytes or null)

    def hash_object_array(arr, key, encoding='utf8'):
        # (the key and encoding: exact str, or refused there)
        if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype != object:
            return real(arr, key, encoding)  # refused there, before any item is read
        vals = np.array(arr, dtype=object, copy=True, subok=False)
        if not set(map(type, vals)) <= set(plain):
            for i, v in enumerate(vals):
                vals[i] = item(v)
        return real(vals, key, encoding)

    hash_object_array.__doc__ = real.__doc__
    hash_object_array.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, hash_object_array)


def _pandas_takes(np):
    """pandas' take kernels (Cython, no bounds checks) index the values by the indexer given:
    a position past the values (take_nd(a, [1 << 40], allow_fill=False), or a Categorical's
    codes changed in place, then shown) read any memory. Each kernel checks its indexer and
    its out array first, wherever it is held: the modules that name it and pandas' tables of
    them (which also hold the views it makes over them for bools and dates)."""
    import pandas._libs.algos as libalgos
    from pandas.core.array_algos import take

    def positions(idx, n, what):
        idx = np.asarray(idx)
        if _threads_run():
            idx = idx.copy()
        if idx.dtype != np.intp or idx.ndim != 1:
            raise TypeError('%s should be a 1-D array of intp positions' % what)
        if len(idx) and (idx.min() < -1 or idx.max() >= n):
            raise IndexError('%s holds a position past the %d there are' % (what, n))
        return idx

    def shape(a, ndim, what):
        s = np.asarray(a).shape
        if len(s) != ndim:
            raise ValueError('%s should have %d dimensions' % (what, ndim))
        return s

    def room(out, rows, cols=None):
        s = shape(out, 1 if cols is None else 2, 'out')
        if s[0] < rows or (cols is not None and s[1] < cols):
            raise ValueError('out has no room for what is taken')

    def take_1d(f):
        def checked(values, indexer, out, fill_value=np.nan):
            n, = shape(values, 1, 'values')
            indexer = positions(indexer, n, 'the indexer')
            room(out, len(indexer))
            return f(values, indexer, out, fill_value)
        return checked

    def take_axis0(f):
        def checked(values, indexer, out, fill_value=np.nan):
            n, k = shape(values, 2, 'values')
            indexer = positions(indexer, n, 'the indexer')
            room(out, len(indexer), k)
            return f(values, indexer, out, fill_value)
        return checked

    def take_axis1(f):
        def checked(values, indexer, out, fill_value=np.nan):
            n, k = shape(values, 2, 'values')
            indexer = positions(indexer, k, 'the indexer')
            room(out, n, len(indexer))
            return f(values, indexer, out, fill_value)
        return checked

    def take_multi(f):
        def checked(values, indexer, out, fill_value=np.nan):
            n, k = shape(values, 2, 'values')
            rows, cols = indexer
            rows = positions(rows, n, 'the row indexer')
            cols = positions(cols, k, 'the column indexer')
            room(out, len(rows), len(cols))
            return f(values, (rows, cols), out, fill_value)
        return checked

    kinds = (('take_1d_', take_1d), ('take_2d_axis0_', take_axis0),
             ('take_2d_axis1_', take_axis1), ('take_2d_multi_', take_multi))

    def checked_kernel(name, f):
        for prefix, make in kinds:
            if name.startswith(prefix):
                g = make(f)
                g.__name__ = g.__qualname__ = getattr(f, '__name__', name)
                g.__doc__ = getattr(f, '__doc__', None)
                g.__module__ = getattr(f, '__module__', None)
                return g
        return None

    replacements = {}
    for name in dir(libalgos):
        f = getattr(libalgos, name)
        g = checked_kernel(name, f)
        if g is not None:
            replacements[id(f)] = (f, g)
    for table, prefix in (('_take_1d_dict', 'take_1d_'), ('_take_2d_axis0_dict', 'take_2d_axis0_'),
                          ('_take_2d_axis1_dict', 'take_2d_axis1_'),
                          ('_take_2d_multi_dict', 'take_2d_multi_')):
        d = getattr(take, table)
        for key, f in list(d.items()):
            pair = replacements.get(id(f))
            d[key] = pair[1] if pair is not None and pair[0] is f else checked_kernel(prefix, f)
    _replace_all(replacements)
    take._get_take_nd_function_cached.cache_clear()


def _groupby_kernels(np):
    """pandas' groupby kernels (Cython, no bounds checks) index their scratch and output arrays
    by the group labels they are given, and some of them are called straight from groupby's
    methods (shift, std, quantile, fillna...) with the labels pandas cached: an edited label
    (gb.grouper.group_info[0]) wrote a row number at a chosen address (group_shift_indexer) or
    read past the arrays (group_var, group_quantile). Every kernel of pandas._libs.groupby
    checks its labels against its groups (ngroups, the counts, or the output's rows), its values,
    masks and outputs against the labels, and its sort indexers against the rows, wherever it is
    named."""
    import inspect
    import operator
    from pandas._libs import groupby as libgroupby

    def fail(what):
        raise ValueError('groupby kernel: ' + what)

    # The kernels inspect cannot read, by their parameters (pandas 1.5's).
    known = {
        'group_any_all': ('out', 'values', 'labels', 'mask', 'val_test', 'skipna', 'nullable'),
        'group_cumprod_float64': ('out', 'values', 'labels', 'ngroups', 'is_datetimelike',
                                  'skipna'),
        'group_fillna_indexer': ('out', 'labels', 'sorted_labels', 'mask', 'direction',
                                 'limit', 'dropna'),
        'group_median_float64': ('out', 'counts', 'values', 'labels', 'min_count'),
        'group_shift_indexer': ('out', 'labels', 'ngroups', 'periods'),
    }
    positions = ('labels', 'sorted_labels', 'sort_indexer', 'qs', 'mask')
    # Kernels whose output has a row for each row of values (the rest: one for each group).
    per_row = {'group_cummax', 'group_cummin', 'group_cumprod_float64', 'group_cumsum',
               'group_fillna_indexer', 'group_rank', 'group_shift_indexer'}

    def shape(a, what):
        try:
            return np.shape(a)
        except Exception:
            fail('%s is not an array' % what)

    def plain(v):
        if v is None or type(v) in (bool, int, float, str) or type(v) is np.ndarray:
            return v
        if isinstance(v, np.ndarray):
            # An exact array over the same memory (outputs are written in place): a subclass
            # answers its own shape, which the check below would have read.
            return np.asarray(v)
        if type(v).__flags__ & (1 << 9) == 0 and isinstance(v, np.generic):
            return v
        try:  # an array of C (a typed memoryview the kernels hand each other): as it is
            memoryview(v).release()
            return v
        except TypeError:
            pass
        if hasattr(type(v), '__index__'):
            return int.__index__(operator.index(v))
        return bool(v)

    def check(name, given):
        labels = given.get('labels')
        if labels is None:
            if name == 'rank_1d':
                return
            fail('no labels')
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.dtype.kind not in 'iu':
            fail('labels must be a 1-D array of integers')
        n = len(labels)
        if 'values' in given and name != 'rank_1d' and shape(given['values'], 'values')[:1] != (n,):
            fail('one label for each row of values')
        if name == 'rank_1d':
            if shape(given['values'], 'values')[:1] != (n,):
                fail('one label for each value')
            return
        if 'ngroups' in given:
            groups = int(given['ngroups'])
        elif 'counts' in given:
            groups = shape(given['counts'], 'counts')[0]
        else:
            groups = shape(given['out'], 'out')[0]
        if n and (labels.min() < -1 or labels.max() >= groups):
            fail('a label past the %d groups' % groups)
        out = shape(given['out'], 'out')
        if out[:1] < ((n,) if name in per_row else (groups,)):
            fail('out has too few rows')
        values = shape(given['values'], 'values') if 'values' in given else None
        if values is not None and len(values) == 2 and (len(out) != 2 or out[1] < values[1]):
            fail('out has too few columns')
        # (any_all walks the output's columns of the values)
        if name == 'group_any_all' and values is not None and len(values) == 2 and \
                out[1] != values[1]:
            fail('out must have the columns of the values')
        if 'counts' in given and shape(given['counts'], 'counts')[0] < groups:
            fail('counts has too few groups')
        mask = given.get('mask')
        if mask is not None and not isinstance(mask, (bool, str)):
            m = shape(mask, 'mask')
            if m[:1] != (n,) or (len(m) > 1 and m != values):
                fail('the mask must have the shape of the values')
        if given.get('result_mask') is not None:
            rm = shape(given['result_mask'], 'result_mask')
            if rm[:1] < out[:1] or (values is not None and len(values) == 2 and
                                    (len(rm) != 2 or rm[1] < values[1])):
                fail('the result mask has too few rows or columns')
        if 'qs' in given and (len(out) != 2 or out[1] < len(np.asarray(given['qs']))):
            fail('out has too few columns for the quantiles')
        for ix in ('sorted_labels', 'sort_indexer'):
            if ix in given:
                v = np.asarray(given[ix])
                if v.ndim != 1 or len(v) != n or (n and (v.min() < 0 or v.max() >= n)):
                    fail('%s must be positions of the rows' % ix)

    def checked(name, f):
        try:
            params = tuple(inspect.signature(f).parameters)
        except (TypeError, ValueError):
            params = known.get(name)
        if params is None:
            return None

        def kernel(*args, **kwargs):
            # Scalars made plain first (a kernel converting an object's __index__ or __bool__
            # ran the user's code after the check: it edited the labels), then checked. What
            # the kernel reads as positions is a private copy, the one checked: an object
            # value's methods run inside the kernel (a Decimal's __ne__ in its null check, an
            # object's __add__ in a sum), and rewrote the code's labels between rows.
            args = [plain(v) for v in args]
            kwargs = {k: plain(v) for k, v in _plain_names(kwargs).items()}
            # (any buffer: an array.array of labels is the code's memory too)
            for i, p in enumerate(params[:len(args)]):
                if p in positions and args[i] is not None and not isinstance(args[i], bool):
                    args[i] = np.array(args[i])
            for k in kwargs:
                if k in positions and kwargs[k] is not None and not isinstance(kwargs[k], bool):
                    kwargs[k] = np.array(kwargs[k])
            given = dict(zip(params, args))
            given.update(kwargs)
            check(name, given)
            return f(*args, **kwargs)
        kernel.__name__ = kernel.__qualname__ = name
        kernel.__doc__ = getattr(f, '__doc__', None)
        if hasattr(f, '__signatures__'):  # a fused kernel's types (groupby asks for them)
            kernel.__signatures__ = f.__signatures__
        return kernel

    replacements = {}
    for name in dir(libgroupby):
        f = getattr(libgroupby, name)
        if not (name.startswith('group_') or name == 'rank_1d') or not callable(f):
            continue
        if name == 'groupsort_indexer' or isinstance(f, type):
            continue
        g = checked(name, f)
        if g is None:
            raise RuntimeError('groupby kernel %s is not known to the sandbox' % name)
        replacements[id(f)] = (f, g)
    _replace_all(replacements)
    # groupby's cache of the kernels it looked up (while the zygote exercised pandas).
    from pandas.core.groupby import ops
    ops.WrappedCythonOp._get_cython_function.cache_clear()


def _sparse_array_ops(np):
    """SparseArray arithmetic hands each operand's values and sparse index to compiled kernels
    that read the values at every point of the index, whatever their length: values replaced
    by a shorter array or a strided memoryview (a._sparse_values, a private attribute) read any
    address. The kernels check that the values are an array of one value per point, and get
    them contiguous."""
    from pandas._libs import sparse as splib

    # An index's fields as the kernels read them: through the classes' own descriptors (a
    # subclass's property answered npoints itself, and the kernel read the real count)
    block = {k: splib.BlockIndex.__dict__[k].__get__ for k in ('blocs', 'blengths', 'length',
                                                              'npoints')}
    ints = splib.IntIndex.__dict__['npoints'].__get__
    int_length = splib.IntIndex.__dict__['length'].__get__
    int_indices = splib.IntIndex.__dict__['indices'].__get__

    # The kernels call the index's own methods (to_int_index): a subclass answered another index
    # than the one checked. They get new indexes of pandas' classes, made of copies of what was
    # checked.
    def exact_index(index):
        if isinstance(index, splib.BlockIndex):
            return splib.BlockIndex(block['length'](index),
                                    np.array(block['blocs'](index), dtype=np.int32),
                                    np.array(block['blengths'](index), dtype=np.int32))
        return splib.IntIndex(int_length(index), np.array(int_indices(index), dtype=np.int32))

    def points(index, n):
        # A BlockIndex's blocks are read by the kernels themselves: their starts and lengths
        # (arrays the user can change) in order, within the length, as many points as values.
        if isinstance(index, splib.BlockIndex):
            b = np.asarray(block['blocs'](index), dtype=np.int64)
            ln = np.asarray(block['blengths'](index), dtype=np.int64)
            if b.shape != ln.shape or b.ndim != 1 or (len(b) and (
                    b.min() < 0 or ln.min() < 0 or (b + ln).max() > block['length'](index) or
                    (b[1:] < b[:-1] + ln[:-1]).any())) or ln.sum() != n:
                return False
            return block['npoints'](index) == n
        if not isinstance(index, splib.IntIndex):
            return False
        return ints(index) == n

    def checked(name, f):
        def op(x, xindex, xfill, y, yindex, yfill):
            operands = []
            for v in (x, y):
                # numpy's own array (a subclass answers its own len and ndim), contiguous,
                # a new object (no code of the call holds it to change its shape)
                if not isinstance(v, np.ndarray):
                    raise ValueError('a sparse array holds one value for each point of its '
                                     'index')
                operands.append(np.ndarray.view(np.ascontiguousarray(np.asarray(v))))
            # Fill values as numbers of their arrays' types, converted before the indexes are
            # checked (not by the kernel after the check: a conversion runs the code's methods,
            # which could change an index's blocks), and nothing of the code's runs after.
            xfill = operands[0].dtype.type(xfill)
            yfill = operands[1].dtype.type(yfill)
            # The index checked is the new one, made of copies, the kernel's: nothing read
            # of the user's index after the check.
            indexes = []
            for v, index in zip(operands, (xindex, yindex)):
                index = exact_index(index)
                if v.ndim != 1 or not points(index, v.shape[0]):
                    raise ValueError('a sparse array holds one value for each point of its '
                                     'index')
                indexes.append(index)
            return f(operands[0], indexes[0], xfill, operands[1], indexes[1], yfill)
        op.__name__ = op.__qualname__ = name
        return op

    replacements = {}
    for name in dir(splib):
        f = getattr(splib, name)
        if name.startswith('sparse_') and callable(f):
            replacements[id(f)] = (f, checked(name, f))
    _replace_all(replacements)


def _lexsort_check(np):
    """A MultiIndex's codes are an instance attribute (mi._codes, the user's to set): codes of
    different lengths went to is_lexsorted (_lexsort_depth, is_monotonic_increasing), which
    reads every level at the first level's length, through each array's data pointer (its
    strides and a subclass's dtype ignored): the shorter ones read past. It takes numpy's own
    contiguous arrays of one length."""
    from pandas._libs import algos
    real = algos.is_lexsorted

    def is_lexsorted(list_of_arrays):
        if not isinstance(list_of_arrays, list):
            raise TypeError('is_lexsorted takes a list of arrays')
        arrays = list.__getitem__(list_of_arrays, slice(None))
        if not all(isinstance(a, np.ndarray) for a in arrays):
            raise TypeError('is_lexsorted takes numpy arrays')
        arrays = [np.ascontiguousarray(np.asarray(a)) for a in arrays]
        if any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
            raise ValueError('the codes of a MultiIndex have one length')
        return real(arrays)

    is_lexsorted.__doc__ = real.__doc__
    _replace_everywhere(real, is_lexsorted)


def _block_placements(np):
    """A frame's columns are placed in its blocks by arrays the user's code may set (the
    manager's _blknos and _blklocs, a block's mgr_locs, a manager made with
    verify_integrity=False): pandas' compiled placement kernels read and wrote them with
    bounds checks off. update_blklocs_and_blknos (DataFrame.insert) copied the old arrays up
    to the position asked into arrays one longer than the first (a view cut short wrote past
    them what the code chose), and a manager's rebuild wrote each block's placements into
    arrays of the frame's width (a placement past it: a write at any offset). Both are numpy
    here: the position and every placement are checked, and what is read is read once."""
    import operator
    from pandas._libs import internals as libinternals

    def update_blklocs_and_blknos(blklocs, blknos, loc, nblocks):
        blklocs = np.array(blklocs, dtype=np.intp, copy=True)
        blknos = np.array(blknos, dtype=np.intp, copy=True)
        loc, nblocks = operator.index(loc), operator.index(nblocks)
        if blklocs.ndim != 1 or blknos.shape != blklocs.shape:
            raise ValueError('blklocs and blknos should be 1-D arrays of one length')
        if not 0 <= loc <= len(blklocs):
            raise IndexError('loc %d is outside the %d columns' % (loc, len(blklocs)))
        return np.insert(blklocs, loc, 0), np.insert(blknos, loc, nblocks)

    update_blklocs_and_blknos.__doc__ = libinternals.update_blklocs_and_blknos.__doc__
    _replace_everywhere(libinternals.update_blklocs_and_blknos, update_blklocs_and_blknos)

    def _rebuild_blknos_and_blklocs(self):
        """Update mgr._blknos / mgr._blklocs."""
        length = operator.index(self.shape[0])
        blknos = np.full(length, -1, dtype=np.intp)
        blklocs = np.full(length, -1, dtype=np.intp)
        for blkno, blk in enumerate(tuple(self.blocks)):
            locs = np.array(blk._mgr_locs.as_array, dtype=np.intp, copy=True)
            if locs.ndim != 1:
                raise AssertionError('a block\'s placements should be 1-D')
            if len(locs) and (locs.min() < 0 or locs.max() >= length):
                raise AssertionError('a block is placed outside its manager\'s %d columns'
                                     % length)
            blknos[locs] = blkno
            blklocs[locs] = np.arange(len(locs), dtype=np.intp)
        if (blknos == -1).any():
            raise AssertionError('Gaps in blk ref_locs')
        self._blknos = blknos
        self._blklocs = blklocs

    type_patches[(libinternals.BlockManager, '_rebuild_blknos_and_blklocs')] = \
        _rebuild_blknos_and_blklocs


def _join_orders(np):
    """Index.join of two sorted indexes runs pandas' join kernels (bounds checks off): a first
    pass over both counts the rows, a second writes them, each comparing the items. Items of
    the code's classes whose comparisons answered otherwise in the second pass wrote rows past
    the arrays the first had made. Object values of other than plain types (str, int, float,
    ..., which compare the same every time, running no code of the user's) are joined as ranks
    fixed once: the items of both
    sides sorted by their own comparisons, equal neighbours one rank, so that the kernels
    compare integers; the joined values are taken back from the items."""
    import datetime
    import decimal
    from pandas._libs import join as libjoin

    # (not datetime.datetime nor datetime.time: an aware one's comparison calls its tzinfo's
    # utcoffset, the code's)
    plain = frozenset((str, int, float, bool, complex, bytes, type(None), datetime.date,
                       datetime.timedelta, decimal.Decimal))

    def needs_ranks(*arrays):
        return any(isinstance(a, np.ndarray) and a.dtype == object and
                   not plain.issuperset(map(type, a.ravel())) for a in arrays)

    def ranked(left, right):
        items = list(left) + list(right)
        order = sorted(range(len(items)), key=items.__getitem__)
        ranks = np.empty(len(items), dtype=np.int64)
        rank, prev = 0, None
        for i in order:
            if prev is not None and not (items[prev] == items[i]):
                rank += 1
            ranks[i] = rank
            prev = i
        return ranks[:len(left)], ranks[len(left):]

    def unique(real):
        def join(left, right):
            if not needs_ranks(left, right):
                return real(left, right)
            return real(*ranked(np.asarray(left), np.asarray(right)))
        return join

    def with_values(real):
        def join(left, right):
            if not needs_ranks(left, right):
                return real(left, right)
            left = np.array(left, dtype=object, copy=True)
            right = np.array(right, dtype=object, copy=True)
            _, lidx, ridx = real(*ranked(left, right))
            values = np.empty(len(lidx), dtype=object)
            from_left = lidx != -1
            values[from_left] = left[lidx[from_left]]
            values[~from_left] = right[ridx[~from_left]]
            return values, lidx, ridx
        return join

    pairs = {}
    for name, make in (('left_join_indexer_unique', unique), ('left_join_indexer', with_values),
                       ('inner_join_indexer', with_values), ('outer_join_indexer', with_values)):
        real = getattr(libjoin, name)
        f = make(real)
        f.__name__ = f.__qualname__ = name
        f.__doc__ = real.__doc__
        f.__module__ = getattr(real, '__module__', None)
        pairs[id(real)] = (real, f)
    _replace_all(pairs)


def _object_passes(np):
    """Two of pandas' compiled kernels (bounds checks off) sized their output from one answer of
    the user's objects and wrote by another: Series.explode counted each list-like item's len()
    then wrote the items its iteration gave (a len of 1 and 4096 items wrote past the result),
    and ensure_string_array (StringArray._from_sequence, pd.array(..., dtype='string'), astype
    to str) took the length of the object it was given and read the items of what its to_numpy()
    answered (a shorter list: the slots past its end, read as objects). Each reads the objects
    once: explode's items become lists (a column of plain lists, tuples, arrays and scalars
    goes to the kernel as it is), and the strings are made of a numpy array of the values."""
    import datetime
    import decimal
    from pandas._libs import lib as libpandas
    from pandas._libs import reshape

    plain = frozenset((list, tuple, np.ndarray, str, int, float, bool, complex, bytes,
                       type(None), datetime.date, datetime.datetime, datetime.time,
                       datetime.timedelta, decimal.Decimal))
    real_explode = reshape.explode

    def explode(values):
        values = np.array(values, dtype=object, copy=True)
        if values.ndim != 1:
            raise ValueError('Buffer has wrong number of dimensions (expected 1, got %d)'
                             % values.ndim)
        if plain.issuperset(map(type, values)):
            return real_explode(values)
        counts = np.zeros(len(values), dtype=np.int64)
        out = []
        for i, v in enumerate(values):
            items = list(v) if libpandas.is_list_like(v) else [v]
            if not items:
                items = [np.nan]
            out.extend(items)
            counts[i] = len(items)
        result = np.empty(len(out), dtype=object)
        for k, item in enumerate(out):
            result[k] = item
        return result, counts

    explode.__doc__ = real_explode.__doc__
    _replace_everywhere(real_explode, explode)

    real_strings = libpandas.ensure_string_array

    def ensure_string_array(arr, na_value=np.nan, convert_na_value=True, copy=True,
                            skipna=True):
        if type(arr) is not np.ndarray:
            if hasattr(arr, 'to_numpy'):
                if hasattr(arr, 'dtype') and arr.dtype.kind in ('m', 'M'):
                    out = arr.astype(str).astype(object)
                    out[arr.isna()] = na_value
                    return out
                arr = arr.to_numpy()
            if type(arr) is not np.ndarray:
                arr = np.array(arr, dtype=object)
        return real_strings(arr, na_value, convert_na_value, copy, skipna)

    ensure_string_array.__doc__ = real_strings.__doc__
    _replace_everywhere(real_strings, ensure_string_array)


def _period_steps(np):
    """period_asfreq_arr (PeriodArray.asfreq) walks its array by strides[0] // 8 items from its
    data pointer: an int64 view whose stride is not a multiple of 8 (as_strided's -1 byte, a
    reversed field of a packed record) was walked further than it reaches, below its memory.
    It is given a contiguous array."""
    import operator
    from pandas._libs.tslibs import period as libperiod
    real = libperiod.period_asfreq_arr

    def period_asfreq_arr(arr, freq1, freq2, end):
        # the numbers first (their __index__ is the code's), then a private contiguous copy:
        # the code's array could be given other strides while the kernel converted them
        freq1, freq2, end = operator.index(freq1), operator.index(freq2), bool(end)
        if isinstance(arr, np.ndarray):
            arr = np.array(arr, order='C', copy=True)
        return real(arr, freq1, freq2, end)

    period_asfreq_arr.__doc__ = real.__doc__
    _replace_everywhere(real, period_asfreq_arr)


def _period_fields(np):
    """pandas' periods and fiscal-year offsets read month tables by numbers they never check:
    Period(year=, month=13, day=, freq='D') and PeriodIndex(year=, month=) summed a static
    table of month lengths past its end into the ordinal (V98b H3: the ints past it read
    back), FY5253's startingMonth indexed another (10**9: SIGSEGV). A month is a whole number
    1..12, made a plain int before the compiled code reads it. And Period.strftime formats into
    a buffer 50 bytes longer than the format, ignoring strftime's overflow: a '%c%c%c' or a
    '%4000Y' read on past the buffer's end (heap bytes came back), and '%Z' read the time zone
    name through a pointer it never set (SIGSEGV on the host too). A format is given to it a
    directive at a time (each well within 50 bytes), a field width over 40 is refused, and %Z is
    the empty name of no time zone."""
    import functools
    import operator
    import re
    import pandas as pd
    from pandas._libs.tslibs import offsets as liboffsets
    from pandas._libs.tslibs import period as libperiod

    def month_value(v, what):
        m = int(v) if isinstance(v, (float, np.floating)) else operator.index(v)
        if not 1 <= m <= 12:
            raise ValueError('%s must be in 1..12' % what)
        return m

    real_new = pd.Period.__new__

    def __new__(cls, value=None, freq=None, ordinal=None, year=None, month=None, quarter=None,
                day=None, hour=None, minute=None, second=None):
        if month is not None:
            month = month_value(month, 'month')
        return real_new(cls, value, freq, ordinal, year, month, quarter, day, hour, minute,
                        second)

    __new__.__doc__ = getattr(real_new, '__doc__', None)
    type_patches[(pd.Period, '__new__')] = staticmethod(__new__)

    real_ordinal = libperiod.period_ordinal

    def period_ordinal(y, m, d, h, min, s, us, ps, freq):
        return real_ordinal(y, month_value(m, 'month'), d, h, min, s, us, ps, freq)

    period_ordinal.__doc__ = real_ordinal.__doc__
    _replace_everywhere(real_ordinal, period_ordinal)

    def fiscal_made(args, kw):
        # (n=1, normalize=False, weekday=0, startingMonth=1, ...)
        if len(args) > 3:
            args = args[:3] + (month_value(args[3], 'startingMonth'),) + args[4:]
        if kw and 'startingMonth' in kw:
            kw['startingMonth'] = month_value(kw['startingMonth'], 'startingMonth')
        return args, kw

    init_checks[liboffsets.FY5253Mixin] = fiscal_made

    token = re.compile(r'%[-_0^#]*([0-9]*)[EO]?(.?)|[^%]+', re.S)

    @functools.lru_cache(maxsize=64)
    def pieces(fmt):
        out = []
        for m in token.finditer(fmt):
            piece, width, conversion = m.group(0), m.group(1), m.group(2)
            if piece[0] != '%':
                out.append((False, piece))
            elif width and int(width) > 40:
                raise ValueError('a field width over 40 (%s) in a period\'s format is not '
                                 'taken in the sandbox' % piece)
            elif conversion == 'Z':
                out.append((False, ''))  # (a period has no time zone)
            else:
                out.append((True, piece))
        return tuple(out)

    real_strftime = libperiod._Period.strftime

    def strftime(self, fmt):
        if isinstance(fmt, bytes):
            fmt = fmt.decode('utf-8')
        if not isinstance(fmt, str):
            return real_strftime(self, fmt)  # (its own TypeError)
        return ''.join([real_strftime(self, p) if directive else p
                        for directive, p in pieces(str.__str__(fmt))])

    strftime.__doc__ = real_strftime.__doc__
    type_patches[(libperiod._Period, 'strftime')] = strftime


def _pandas_counts(np):
    """pandas' compiled kernels (bounds checks off) that took positions or lengths from one
    object and the data from another: count_level_2d (GroupBy.count, DataFrame.count(level=))
    and generate_slices (a groupby's apply, agg, transform, iteration) counted and placed at
    labels unchecked (a grouper's group_info, writable and cached, edited: a write at any
    offset); pad_inplace and backfill_inplace (fillna(method='ffill'/'bfill') of extension
    arrays) walked the values' length over a mask of the array's own (its _mask, its isna()),
    read and zeroed past a shorter one; map_infer_mask (the str accessor of a string array)
    read a mask of isna()'s length for every value; write_csv_rows (to_csv) read one column
    per label of the columns' own answer from a list of the frame's columns, and wrote each
    row's index levels into a row list sized for them. Each is checked first: labels within
    their groups, the mask of the values' shape (as the kernels' buffers see both), a private
    array of the values, one column per label, index levels of their number."""
    import operator
    from pandas._libs import algos, lib as libpandas, writers

    def labels_of(labels, what):
        labels = np.array(labels, dtype=np.intp, copy=True)
        if labels.ndim != 1:
            raise ValueError('%s should be a 1-D array of intp labels' % what)
        return labels

    real_count = libpandas.count_level_2d

    def count_level_2d(mask, labels, max_bin, axis):
        mask = np.array(mask, dtype=bool, copy=True)
        labels = labels_of(labels, 'labels')
        max_bin, axis = operator.index(max_bin), operator.index(axis)
        if mask.ndim != 2 or axis not in (0, 1) or max_bin < 0:
            raise ValueError('count_level_2d takes a 2-D mask, an axis 0 or 1 and max_bin >= 0')
        if len(labels) != mask.shape[axis]:
            raise ValueError('the labels should be one per item of the mask\'s axis %d' % axis)
        used = labels[mask.any(axis=1 - axis)]
        if len(used) and (used.min() < 0 or used.max() >= max_bin):
            raise IndexError('a label of a counted item is outside the %d bins' % max_bin)
        return real_count(mask, labels, max_bin, axis)

    real_slices = libpandas.generate_slices

    def generate_slices(labels, ngroups):
        labels = labels_of(labels, 'labels')
        ngroups = operator.index(ngroups)
        if ngroups < 0:
            raise ValueError('ngroups should not be negative')
        if len(labels) and labels.max() >= ngroups:
            raise IndexError('a label is outside the %d groups' % ngroups)
        return real_slices(labels, ngroups)

    def shape_of(a):
        with memoryview(a) as m:
            return m.shape

    def same_shape(real, ndim):
        def fill(values, mask, limit=None):
            shape = shape_of(values)
            if len(shape) != ndim or shape_of(mask) != shape:
                raise ValueError('the mask should have the values\' shape')
            return real(values, mask, limit=limit)
        fill.__name__ = fill.__qualname__ = real.__name__
        fill.__doc__ = real.__doc__
        return fill

    real_map = libpandas.map_infer_mask

    def map_infer_mask(arr, f, mask, convert=True, na_value=libpandas.no_default,
                       dtype=np.dtype(object)):
        if isinstance(arr, np.ndarray):
            arr = arr.view(np.ndarray)
        if shape_of(mask)[:1] != (len(arr),):
            raise ValueError('the mask should have one item per value')
        return real_map(arr, f, mask, convert, na_value, dtype)

    real_rows = writers.write_csv_rows

    import _csv
    csv_writer = type(_csv.writer(io.StringIO()))

    # The kernel reads data[i][j] of a list or tuple unchecked (a column of one item read for
    # every row: the pointers past it used as objects), and hands its own rows to the writer,
    # whose writerows may be the code's (a row emptied there was written past next): each column
    # is an array no code holds, and a writer other than csv's gets copies of the rows.
    def write_csv_rows(data, data_index, nlevels, cols, writer):
        if not isinstance(data, list):
            raise TypeError('to_csv writes a list of columns')
        data_index = np.ndarray.view(np.asarray(data_index), np.ndarray)
        cols = np.ndarray.view(np.asarray(cols), np.ndarray)
        nlevels = operator.index(nlevels)
        if nlevels < 0:
            raise ValueError('an index has no fewer than 0 levels')
        data = list.__getitem__(data, slice(None))
        if len(data) < len(cols):
            raise ValueError('to_csv has %d columns of data for %d labels'
                             % (len(data), len(cols)))
        for i, column in enumerate(data):
            if type(column) is not np.ndarray:
                column = np.asarray(column, dtype=object)
            data[i] = column = np.ndarray.view(column, np.ndarray)
            if column.ndim != 1 or len(column) < len(data_index):
                raise ValueError('to_csv has a column of %d values for %d rows'
                                 % (len(column), len(data_index)))
        if type(writer) is not csv_writer:
            writerows = writer.writerows

            class Rows:
                __slots__ = ()

                def writerows(self, rows):
                    return writerows([list(row) for row in rows])
            writer = Rows()
        if nlevels > 1:
            levels = np.empty(len(data_index), dtype=object)
            for j, v in enumerate(data_index):
                v = tuple(v)
                if len(v) != nlevels:
                    raise ValueError('an index entry should have %d levels' % nlevels)
                levels[j] = v
            data_index = levels
        return real_rows(data, data_index, nlevels, cols, writer)

    pairs = {}
    for real, new in ((real_count, count_level_2d), (real_slices, generate_slices),
                      (algos.pad_inplace, same_shape(algos.pad_inplace, 1)),
                      (algos.backfill_inplace, same_shape(algos.backfill_inplace, 1)),
                      (algos.pad_2d_inplace, same_shape(algos.pad_2d_inplace, 2)),
                      (algos.backfill_2d_inplace, same_shape(algos.backfill_2d_inplace, 2)),
                      (real_map, map_infer_mask), (real_rows, write_csv_rows)):
        if new.__doc__ is None:
            new.__doc__ = real.__doc__
        pairs[id(real)] = (real, new)
    _replace_all(pairs)


def _unique_lists(np):
    """pandas' kernels over the user's lists and arrays (bounds checks off): the unique values
    of several lists (union_indexes, MultiIndex.union, a frame of dicts' columns) read each
    list's items by a length taken once while the items' __hash__ and __eq__ ran (one that
    emptied the list had freed items read and handed out), and fast_zip (MultiIndex.values)
    walked each array for the first one's length (a level of shape (3, 0): bytes past its
    empty memory read as objects). Each gets private copies: lists of the items, 1-D object
    arrays of one length."""
    from pandas._libs import lib as libpandas

    real_lists = libpandas.fast_unique_multiple_list

    def fast_unique_multiple_list(lists, sort=True):
        return real_lists([list(x) for x in lists], sort)

    real_gen = libpandas.fast_unique_multiple_list_gen

    def fast_unique_multiple_list_gen(gen, sort=True):
        return real_gen([list(x) for x in gen], sort)

    def flat(a):
        a = np.array(a, dtype=object, copy=True)
        if a.ndim != 1:
            raise ValueError('the arrays should be 1-D')
        return a

    real_multiple = libpandas.fast_unique_multiple

    def fast_unique_multiple(arrays, sort=True):
        return real_multiple([flat(a) for a in arrays], sort)

    real_zip = libpandas.fast_zip

    def fast_zip(ndarrays):
        ndarrays = [flat(a) for a in ndarrays]
        if not ndarrays or any(len(a) != len(ndarrays[0]) for a in ndarrays):
            raise ValueError('all arrays must be same length')
        return real_zip(ndarrays)

    pairs = {}
    for real, new in ((real_lists, fast_unique_multiple_list),
                      (real_gen, fast_unique_multiple_list_gen),
                      (real_multiple, fast_unique_multiple), (real_zip, fast_zip)):
        new.__doc__ = real.__doc__
        pairs[id(real)] = (real, new)
    _replace_all(pairs)


def _masked_kernels(np):
    """A masked array's _data and _mask are instance attributes (the user's to set): its
    unique, factorize, value_counts and mode handed both to the hash table kernels, which read
    the mask at every value's position (a mask shorter than the values: read past it, SIGSEGV;
    which bytes past it are nonzero, as NA codes), and took mask.view('uint8') (a subclass's
    own view). The kernels take numpy's own arrays, a mask of exactly the values' length."""
    from pandas._libs import hashtable

    def converted(values, mask):
        # (values: an array, or the typed memoryview a table's unique hands its _unique)
        if not isinstance(mask, np.ndarray):
            raise TypeError('the hash table kernels take the mask as a numpy array')
        values, mask = np.asarray(values), np.asarray(mask)
        if values.ndim != 1 or mask.shape != values.shape or mask.dtype.itemsize != 1:
            raise ValueError('the mask needs one byte for each value: %s values, a mask of '
                             '%s' % (values.shape, mask.shape))
        return values, mask

    def masked_unique(real):
        # _unique(self, values, uniques, count_prior, na_sentinel, na_value, ignore_na, mask,
        # return_inverse, use_result_mask): unique, factorize and get_labels call it.
        def _unique(self, values, *args, **kwargs):
            kwargs = _plain_names(kwargs)
            mask = kwargs.get('mask', args[5] if len(args) > 5 else None)
            if mask is not None:
                values, mask = converted(values, mask)
                if 'mask' in kwargs:
                    kwargs['mask'] = mask
                else:
                    args = args[:5] + (mask,) + args[6:]
            return real(self, values, *args, **kwargs)
        _unique.__doc__ = real.__doc__
        return _unique

    for name in dir(hashtable):
        cls = getattr(hashtable, name)
        if isinstance(cls, type) and name.endswith('HashTable') and \
                '_unique' in cls.__dict__ and name not in ('PyObjectHashTable',
                                                            'StringHashTable'):
            type_patches[(cls, '_unique')] = masked_unique(cls.__dict__['_unique'])

    def masked(real):
        def f(values, dropna, mask=None):
            if mask is not None:
                values, mask = converted(values, mask)
            return real(values, dropna, mask=mask)
        f.__name__ = f.__qualname__ = real.__name__
        f.__doc__, f.__module__ = real.__doc__, getattr(real, '__module__', None)
        return f

    _replace_all({id(f): (f, masked(f)) for f in (hashtable.value_count, hashtable.mode)})


def _interval_nodes(np):
    """pandas' interval tree nodes (type(IntervalTree(...).root), one class for each dtype and
    closed side) took left, right and indices of any lengths: the compiled split read right[i]
    for every i of left, past a shorter right's buffer (what lay there read back by which child
    an index went to), and query() took None for its result vector (an append through a
    pointer read beside None). A node is made only of three arrays of one length and a leaf
    size of at least 1 (the tree's own nodes are), its query takes an Int64Vector only, its
    fields and state are for library code only, and a node is not unpickled."""
    from pandas._libs import hashtable, interval

    def made(args, kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        names = ('left', 'right', 'indices', 'leaf_size')
        given = dict(zip(names, args or ()))
        given.update(kwargs or {})
        arrays = [given.get(n) for n in names[:3]]
        if all(isinstance(a, np.ndarray) for a in arrays):
            if len({a.shape for a in arrays}) != 1 or arrays[0].ndim != 1:
                raise ValueError('an interval tree node takes left, right and indices of one '
                                 'length')
            leaf = given.get('leaf_size')
            if isinstance(leaf, (int, np.integer)) and not isinstance(leaf, bool) and leaf < 1:
                raise ValueError('leaf_size must be greater than 0')
        return args, kwargs

    def unpickled(*args, **kwargs):
        raise TypeError('an interval tree node is not unpickled in the sandbox')

    def querying(real):
        def query(self, result, point):
            if not isinstance(result, hashtable.Int64Vector):
                raise TypeError('query takes an Int64Vector to add its positions to')
            return real(self, result, point)
        query.__name__ = query.__qualname__ = 'query'
        query.__doc__ = real.__doc__
        return query

    why = ("an interval tree node's fields and state are read by pandas itself only in the "
           "sandbox (IntervalIndex's methods query the tree)")
    for cls in set(interval.NODE_CLASSES.values()):
        init_checks[cls] = made
        type_patches[(cls, 'query')] = querying(cls.__dict__['query'])
        library_only.extend((cls, n, why) for n in list(cls.__dict__)
                            if n not in ('__new__', '__init__', '__doc__', '__pyx_vtable__',
                                         'query'))
    for name in dir(interval):
        if name.startswith('__pyx_unpickle_') and name.endswith('IntervalNode'):
            setattr(interval, name, unpickled)


def _hash_tables(np):
    """pandas' object hash tables keep each key by its address, without a reference (its
    StringHashTable, each str's characters), and compare a later key with it: the array the keys
    came from is what keeps them alive. An object Index's engine built its table over the
    user's own array (pd.Index(arr, copy=False), or idx.values, writable): an item replaced
    freed its object, and the next get_loc compared the key with a fake object laid on the freed
    block (any memory read and written); a table the user's code made and filled itself
    (type(idx._engine.mapping)().set_item(s, 1), then del s) did the same, and the compiled
    kernels (duplicated, isin, asof merges by objects) kept their keys by address while an
    item's __hash__ or __eq__ (the user's) replaced the array's other items. Now:
    - an index engine is made over a private copy of an object array (whoever makes it), and
      its values, its table, its re-initialisation and pickled state are for library code only
      (an engine is not unpickled: it would take any array);
    - every method and field of pandas' hash table, vector and factorizer classes is for library
      code only: the user's code neither fills a table nor reads one;
    - the compiled functions that keep an object array's items by address while the user's
      code may run (duplicated, ismember, asof merges by objects), the string table's unique
      and factorize, and safe_sort (whose table is filled, then looked up in) work over a
      private copy of it, held for the call."""
    from pandas._libs import hashtable, index as libindex, join as libjoin
    from pandas.core import algorithms

    def private(v):
        if isinstance(v, np.ndarray) and v.dtype == object:
            return np.array(v, dtype=object, copy=True, subok=False)
        return v

    def copying(f, name=None):
        def g(*args, **kwargs):
            args = [private(a) for a in args]
            kwargs = {k: private(v) for k, v in kwargs.items()}
            return f(*args, **kwargs)
        g.__name__ = g.__qualname__ = name or getattr(f, '__name__', 'function')
        g.__doc__ = getattr(f, '__doc__', None)
        g.__module__ = getattr(f, '__module__', None)
        if hasattr(f, '__signatures__'):
            g.__signatures__ = f.__signatures__
        return g

    # Engines: private values, whoever makes them (the check runs for every engine made while
    # a call runs: pandas' own Index._engine, and the user's ObjectEngine(arr)).
    def engine_made(args, kwargs):
        args = tuple(private(a) for a in (args or ()))
        if kwargs:
            kwargs = {k: private(v) for k, v in kwargs.items()}
        return args, kwargs

    init_checks[libindex.IndexEngine] = engine_made
    for cls, names in ((libindex.IndexEngine, ('values', 'mapping', '__init__', '__reduce__',
                                               '__setstate__')),
                       (libindex.BaseMultiIndexCodesEngine, ('__init__', '__reduce__',
                                                             '__setstate__'))):
        library_only.extend((cls, n) for n in names if n in cls.__dict__)

    def unpickled(*args, **kwargs):
        raise TypeError('an index engine is not unpickled in the sandbox')

    for name in dir(libindex):
        if name.startswith('__pyx_unpickle_') and name.endswith('Engine'):
            setattr(libindex, name, unpickled)

    # The tables, vectors and factorizers: library code only; the string table's methods over
    # a copy of the values.
    for name in dir(hashtable):
        cls = getattr(hashtable, name)
        if not isinstance(cls, type) or cls.__module__ != hashtable.__name__:
            continue
        for attr in list(cls.__dict__):
            if attr.startswith('__') and attr not in ('__reduce__', '__setstate__',
                                                       '__reduce_cython__',
                                                       '__setstate_cython__'):
                continue
            # (its _unique, which they call, compares a str of the user's subclass with the
            # na_value by its __eq__; lookups run no code of the user's)
            if cls is hashtable.StringHashTable and attr in ('unique', 'factorize',
                                                              'get_labels'):
                type_patches[(cls, attr)] = copying(cls.__dict__[attr], attr)
            library_only.append((cls, attr))

    # The functions that hash an object array keeping its items by address, over a private
    # copy (value_count and mode hold each key they keep).
    replacements = {}
    for name in ('duplicated', 'ismember'):
        f = getattr(hashtable, name)
        replacements[id(f)] = (f, copying(f))
    for name in dir(libjoin):
        f = getattr(libjoin, name)
        if name.startswith('asof_join_') and name.endswith('_by_Y') and callable(f):
            replacements[id(f)] = (f, copying(f))
    f = algorithms.safe_sort
    replacements[id(f)] = (f, copying(f))
    _replace_all(replacements)


def _xml_by_etree(pd):
    """pandas reads and writes XML with lxml by default, whose XSLT (stylesheet=) opens any
    file or address a stylesheet names (document('file:///...'): only the kernel refused it),
    and whose C parser is far more than the rest of the sandbox reads XML with. read_xml and
    to_xml use the standard library's parser (parser='etree', XPath as ElementTree knows it);
    a stylesheet is refused with what to do instead. ElementTree finds paths from the document's
    root element: an XPath from the document ('//book', which lxml takes) is taken as from the
    root ('.//book'), and one it cannot read says what it reads."""
    def no_stylesheet(stylesheet):
        if stylesheet is not None:
            raise ValueError('stylesheet= (XSLT) is not available in the sandbox: read the XML '
                             'as it is, then reshape the DataFrame with pandas')

    read_real, to_real = pd.read_xml, pd.DataFrame.to_xml

    def read_xml(path_or_buffer, *, parser='etree', stylesheet=None, **kwargs):
        kwargs = _plain_names(kwargs)
        no_stylesheet(stylesheet)
        xpath = kwargs.get('xpath')
        if isinstance(xpath, str) and xpath.startswith('//'):
            kwargs['xpath'] = '.' + xpath
        try:
            return read_real(path_or_buffer, parser='etree', **kwargs)
        except SyntaxError as e:
            if 'XPath' not in str(e):
                raise
            raise SyntaxError(str(e) + ' (the sandbox reads XML with the standard library\'s '
                              'ElementTree, whose XPath starts at the root element: write '
                              './/book for //book, ./book for /root/book; conditions such as '
                              '[@attr="v"], [tag] and [last()] work, comparisons of numbers '
                              '([price>10]) and other functions do not)') from None

    def to_xml(self, path_or_buffer=None, *args, parser='etree', stylesheet=None, **kwargs):
        no_stylesheet(stylesheet)
        return to_real(self, path_or_buffer, *args, parser='etree', **kwargs)

    for real, new in ((read_real, read_xml), (to_real, to_xml)):
        new.__doc__ = real.__doc__
        new.__module__ = real.__module__
        new.__name__ = real.__name__
        new.__qualname__ = real.__qualname__
    _replace_everywhere(read_real, read_xml)
    pd.DataFrame.to_xml = to_xml


def _read_html(pd):
    """pd.read_html('page.html'): lxml opens a path itself (a worker cannot: 'No tables found',
    then an ImportError of the fallback parsers). A path is read here, as open() reads it (a
    workspace file, or a clear refusal), and its bytes are parsed."""
    import os
    from pandas.io.common import is_url
    read_html_real = pd.read_html

    def read_html(io_, *args, **kwargs):
        if isinstance(io_, os.PathLike) or (isinstance(io_, str) and '<' not in io_ and
                                            not is_url(io_)):
            with io.open(io_, 'rb') as f:
                io_ = io.BytesIO(f.read())
        return read_html_real(io_, *args, **kwargs)

    read_html.__doc__ = read_html_real.__doc__
    read_html.__module__ = read_html_real.__module__
    read_html.__name__ = read_html.__qualname__ = 'read_html'
    _replace_everywhere(read_html_real, read_html)


def _scipy():
    import importlib
    import types
    for name in ('optimize', 'stats', 'integrate', 'linalg', 'interpolate', 'signal',
                 'special', 'fft', 'sparse', 'spatial', 'ndimage', 'cluster'):
        importlib.import_module('scipy.' + name)
    _bglu_methods()
    # eigsh, eigs and svds pick their Fortran routine from the extension module's namespace
    # at each call (_arpack.__dict__[...]), which the sandbox gives no code: they get the
    # routines in a namespace of their own.
    from scipy.sparse.linalg._eigen.arpack import arpack
    routines = {k: v for k, v in vars(arpack._arpack).items() if not k.startswith('__')}
    arpack._arpack = types.SimpleNamespace(**routines)
    # qhull (ConvexHull, Delaunay, Voronoi, griddata) writes its messages to a stream that
    # this build of scipy makes on a temporary file (its memory streams were left out): a
    # worker has no file, and scipy then crashed on the half-made object. The stream is a new
    # handle on the worker's /dev/null: qhull's messages are lost, not its results.
    from scipy._lib import messagestream
    import os

    def mkstemp(*args, **kwargs):
        return os.dup(0), b'/dev/null'

    def remove(path):
        pass

    messagestream.tempfile = types.SimpleNamespace(mkstemp=mkstemp)
    messagestream.os = types.SimpleNamespace(remove=remove, close=os.close)
    # Reading them back failed (OSError: failed to read messages from buffer), and that
    # error replaced the QhullError it was to describe (flat or degenerate input).
    get = messagestream.MessageStream.get

    def messages(self):
        try:
            return get(self)
        except OSError:
            return ('qhull could not compute it (flat or degenerate input?); its own message '
                    'is not kept in the sandbox: try qhull_options="QJ"')

    messages.__doc__ = get.__doc__
    type_patches[(messagestream.MessageStream, 'get')] = messages
    _qhull_options()
    # differential_evolution and the other solvers with workers= import multiprocessing's
    # Pool at each call, and multiprocessing reads the signal module's namespace as it loads.
    try:
        import multiprocessing.pool  # noqa: F401
    except ImportError:
        pass
    _lapack_inputs()
    _spline_inputs()
    _fpcurf_restarts()
    _fitpack_work_sizes()
    _rbf_kernels()
    _distance_inputs()
    _kde_kernels()
    _mgc_kernels()
    _table_samplers()
    _van_der_corput_checks()
    _group_columns_checks()
    from scipy._lib import _util
    _exact_random_states(_util.check_random_state)
    _linkage_checks()
    _hierarchy_kernels()
    _low_level_callables()
    _stats_integrals()
    _bspline_checks()
    _ppoly_checks()
    _ode_integrators()
    _delaunay_checks()
    _voronoi_regions()
    _grid_kernels()
    _sepfir2d_checks()
    _highs_checks()
    _direct_checks()
    _ellip_harm_degrees()
    _sparse_kernels()
    _sparse_consumers()
    _odeint_copies()
    _minpack_copies()
    _cobyla_copies()
    _interpolative_copies()
    _interpolative_indices()
    _qr_update_checks()
    _written_outputs()
    _pseudo_diff_caches()
    _lil_checks()
    _library_data()
    _peak_maxima()
    _order_filters()
    _sigtools_sizes()
    _special_work_arrays()
    _axis_arguments()
    _qmc_draws()
    _euler_sequences()
    _squareform_copies()
    _map_in_process()
    _fft_one_worker()
    _mat_streams()
    _ndimage_checks()
    _compiled_state()


def _compiled_state():
    """Compiled code that works on arrays an object keeps where the code can reach them, or on
    sizes given with no bound. SuperLU's perm_r and perm_c were its own C arrays, writable:
    solve() wrote and read at the indices they held (any address: a full escape shown).
    cKDTree's data, indices, mins and maxes were the very arrays its queries read (indices set
    to any distance read any address). Sobol's state (d, _quasi, _sv, num_generated) is plain
    attributes its compiled _draw trusted (an XOR written past _quasi: a full escape shown).
    splu's panel_size and relax sized SuperLU's work arrays in C ints (a heap overflow), a
    query's k of 0 read before its buffer, and qmc's workers= started that many threads (2**31:
    the worker aborted). Those arrays are given as copies; Sobol's compiled functions take
    only a state that fits; the sizes are bounded."""
    import operator
    import os
    import numpy as np
    from scipy.sparse.linalg._dsolve import _superlu
    from scipy.spatial import _ckdtree
    from scipy.stats import _qmc, _sobol

    def copies(cls, names):
        for name in names:
            d = cls.__dict__[name]

            def get(self, d=d, cls=cls):
                v = d.__get__(self, cls)
                return np.array(v) if isinstance(v, np.ndarray) else v

            def refuse(self, value, name=name, cls=cls):
                raise AttributeError('%s.%s is not set in the sandbox' % (cls.__name__, name))

            type_patches[(cls, name)] = property(get, refuse, None, d.__doc__)

    copies(_superlu.SuperLU, ('perm_r', 'perm_c'))
    # The tree's nodes (t.tree) are views of its own indices: the array is made read-only
    # when they are asked for (a view of it cannot be made writable again).
    tree_real = _ckdtree.cKDTree.__dict__['tree']
    indices_real = _ckdtree.cKDTree.__dict__['indices']

    def tree(self):
        indices_real.__get__(self, _ckdtree.cKDTree).flags.writeable = False
        return tree_real.__get__(self, _ckdtree.cKDTree)

    type_patches[(_ckdtree.cKDTree, 'tree')] = property(tree, None, None, tree_real.__doc__)
    copies(_ckdtree.cKDTree, ('data', 'indices', 'maxes', 'mins', 'boxsize'))
    # The nodes' own arrays are copies too: a read-only view was one write away from the
    # tree's indices for any routine that writes through read-only memory.
    copies(_ckdtree.cKDTreeNode, ('indices', 'data_points'))

    query = _ckdtree.cKDTree.__dict__['query']

    # k is converted once, here, and what was checked is what the C query gets: an item that
    # is one number as a float and another as an int would pass a check of the one.
    def checked_query(self, x, k=1, *args, **kwargs):
        try:
            ks = np.array(k)
            if ks.dtype.kind not in 'biuf' or (ks.dtype.kind == 'f' and
                                               not np.isfinite(ks).all()):
                raise TypeError
            ks = ks.astype(np.intp)
        except (TypeError, ValueError, OverflowError):
            raise ValueError('k must be a number of neighbours, or a list of them') from None
        if ks.size and not (ks >= 1).all():
            raise ValueError("k must be at least 1: the neighbours are counted from 1")
        return query(self, x, int(ks) if ks.ndim == 0 else ks, *args, **kwargs)

    checked_query.__doc__ = query.__doc__
    type_patches[(_ckdtree.cKDTree, 'query')] = checked_query

    # Each array is checked as a new object over the same memory, the one the kernel gets: the
    # kernel converts numbers of the code's too (a scale's __float__ reshaped sv after it was
    # checked: rows read whole arrays past it), and a shape set then is the code's array's.
    def ints(a, kinds=('uint32', 'uint64'), ndim=1):
        if type(a) is not np.ndarray or a.dtype.name not in kinds or a.ndim != ndim or \
                not a.flags.c_contiguous or not a.flags.writeable:
            raise ValueError("the Sobol' engine's state is not its own")
        return np.ndarray.view(a)

    def span(n, num_gen, sv):
        n, num_gen = operator.index(n), operator.index(num_gen)
        # (the point drawn last is number n + num_gen - 1, whose lowest 0 bit picks a
        # column of sv: below 2**bits - 1, it is one of its bits columns)
        if n < 0 or num_gen < 0 or n + num_gen >= 2 ** sv.shape[1]:
            raise ValueError("the Sobol' engine's state is not its own")
        return n, num_gen

    real = {name: getattr(_sobol, name)
            for name in ('_draw', '_fast_forward', '_cscramble', '_initialize_v')}

    def _draw(n, num_gen, dim, scale, sv, quasi, sample):
        dim, scale = operator.index(dim), float(scale)
        n, num_gen = operator.index(n), operator.index(num_gen)
        sv, quasi = ints(sv, ndim=2), ints(quasi)
        n, num_gen = span(n, num_gen, sv)
        if type(sample) is not np.ndarray or sample.dtype != np.float64 or \
                sample.ndim != 2 or not sample.flags.c_contiguous:
            raise ValueError("the Sobol' engine's state is not its own")
        sample = np.ndarray.view(sample)
        if sv.dtype != quasi.dtype or not (sv.shape[0] == quasi.shape[0] == dim ==
                                           sample.shape[1]) or sample.shape[0] < n:
            raise ValueError("the Sobol' engine's state is not its own")
        return real['_draw'](n=n, num_gen=num_gen, dim=dim, scale=scale, sv=sv, quasi=quasi,
                             sample=sample)

    def _fast_forward(n, num_gen, dim, sv, quasi):
        dim = operator.index(dim)
        n, num_gen = operator.index(n), operator.index(num_gen)
        sv, quasi = ints(sv, ndim=2), ints(quasi)
        n, num_gen = span(n, num_gen, sv)
        if sv.dtype != quasi.dtype or not sv.shape[0] == quasi.shape[0] == dim:
            raise ValueError("the Sobol' engine's state is not its own")
        return real['_fast_forward'](n=n, num_gen=num_gen, dim=dim, sv=sv, quasi=quasi)

    def _cscramble(dim, bits, ltm, sv):
        dim, bits = operator.index(dim), operator.index(bits)
        sv, ltm = ints(sv, ndim=2), ints(ltm, ndim=3)
        if sv.dtype != ltm.dtype or sv.shape != (dim, bits) or ltm.shape != (dim, bits, bits):
            raise ValueError("the Sobol' engine's state is not its own")
        return real['_cscramble'](dim=dim, bits=bits, ltm=ltm, sv=sv)

    def _initialize_v(v, dim, bits):
        dim, bits = operator.index(dim), operator.index(bits)
        v = ints(v, ndim=2)
        if v.shape != (dim, bits) or not 0 < dim <= _sobol._MAXDIM or not 0 < bits <= 64:
            raise ValueError("the Sobol' engine's state is not its own")
        return real['_initialize_v'](v, dim=dim, bits=bits)

    replacements = {}
    for f in (_draw, _fast_forward, _cscramble, _initialize_v):
        orig = real[f.__name__]
        f.__doc__ = orig.__doc__
        replacements[id(orig)] = (orig, f)

    # qmc's workers= is a count of threads (2**31 of them aborted the worker): at most the
    # machine's processors, as -1 asks.
    validate = _qmc._validate_workers

    def _validate_workers(workers=1):
        n = validate(workers)
        return min(n, os.cpu_count() or 1)

    _validate_workers.__doc__ = validate.__doc__
    replacements[id(validate)] = (validate, _validate_workers)

    # SuperLU's panel_size and relax size its work arrays in C ints, and its Fact option says
    # the factors are already there (its work arrays are then read unset). What the C code
    # gets is checked and passed on as plain values: scipy builds the options with
    # dict.update, which takes any pairs, and converts each value again.
    from scipy.sparse import linalg as sla

    def plain(key, v):
        if v is not None and type(v) not in (str, bool, int, float):
            raise TypeError('%s must be a string, a bool or a number, not %s'
                            % (key, type(v).__name__))
        return v

    def bounded(f):
        names = ('permc_spec', 'diag_pivot_thresh', 'relax', 'panel_size', 'options') \
            if f.__name__ == 'splu' else \
            ('drop_tol', 'fill_factor', 'drop_rule', 'permc_spec', 'diag_pivot_thresh',
             'relax', 'panel_size', 'options')

        def g(A, *args, **kwargs):
            kwargs = _plain_names(kwargs)
            if len(args) > len(names) or not set(kwargs) <= set(names[len(args):]):
                return f(A, *args, **kwargs)  # (refused by its signature: it reads nothing)
            given = dict(zip(names, args))
            given.update(kwargs)
            options = {}
            if given.get('options') is not None:
                options.update(given['options'])
            for key in list(options):
                if type(key) is not str:
                    raise TypeError('an option\'s name must be a string')
                options[key] = plain(key, options[key])
            for key in names[:-1]:
                given[key] = plain(key, given.get(key))
            for key, v in (('relax', given.get('relax')), ('panel_size', given.get('panel_size')),
                           ('Relax', options.get('Relax')),
                           ('PanelSize', options.get('PanelSize'))):
                if v is not None and not 1 <= operator.index(v) <= 4096:
                    raise ValueError('%s must be between 1 and 4096' % key)
            fact = options.get('Fact', 'DOFACT')
            if type(fact) is not str or fact.upper() != 'DOFACT':
                raise ValueError("options['Fact'] must be 'DOFACT': %s factorizes the matrix "
                                 "it is given" % f.__name__)
            given['options'] = options
            return f(A, **given)
        g.__name__, g.__qualname__ = f.__name__, f.__qualname__
        g.__doc__, g.__module__ = f.__doc__, f.__module__
        return g

    for name in ('splu', 'spilu'):
        f = getattr(sla, name)
        replacements[id(f)] = (f, bounded(f))
    _replace_all(replacements)


class _PlainPath:
    """A path as matplotlib's compiled functions read it (vertices, codes, should_simplify,
    simplify_threshold), holding copies _plain_arg made: no code of the caller's holds its
    arrays or runs when they are read."""
    __slots__ = ('vertices', 'codes', 'should_simplify', 'simplify_threshold')


_class_mro = type.__dict__['__mro__'].__get__
_class_dict = type.__dict__['__dict__'].__get__
_class_flags = type.__dict__['__flags__'].__get__
_class_dictoffset = type.__dict__['__dictoffset__'].__get__
_HEAPTYPE = 1 << 9  # a class made at run time (Py_TPFLAGS_HEAPTYPE)


def _plain_arg(a, depth=0):
    """a as a compiled function may take it without running the code's methods inside, and
    with no object the code holds. Objects with __array__ (or an array interface) were passed as
    they were: the C code's conversion called __array__ and took the array it returned, of any
    shape (scipy.ndimage had checked only the object's own .shape: an output line written past
    its buffer), and kept the code's own array, which a later callback of the same call
    reshaped under it. A matplotlib Path (any object with vertices) was passed as it was: the
    path iterator kept its vertices, the code's array, whose shape and strides a later
    converter's __float__ changed (a read at any address). Lists and tuples (and their
    subclasses) were passed as they were, their items' __float__ run inside the C conversion.
    Now: a number of the code's is converted here (its __index__, else its __float__); an
    array is a new object over the same memory; an object with __array__ is converted
    (numpy.asarray) and given as such an array (a numpy scalar of a number type as a Python
    number); a path is a _PlainPath of copies (vertices a new float64 array, codes a new
    uint8 array or None, should_simplify a bool, simplify_threshold a float); a list or tuple
    is an exact list or tuple of plain items, at most 32 deep; a str, bytes or dict of a
    subclass an exact copy; an object of C with no dict, and a class of C, as they are; an
    object with a buffer a copy of it as an array; a function a function of the sandbox's that
    calls it; anything else is refused (an object the code made, whose
    attributes its descriptors answer: a path's vertices absent when checked, present when
    the C code read them)."""
    import operator
    np = sys.modules['numpy']
    nd = np.ndarray
    if a is None or type(a) in (bool, int, float, complex, str, bytes, dict):
        return a
    if isinstance(a, nd):
        return nd.view(a, nd)
    if isinstance(a, (list, tuple)):
        ccallback = sys.modules.get('scipy._lib._ccallback')
        if ccallback is not None and type(a) is ccallback.LowLevelCallable:
            return a  # (made by the sandbox's constructor; the C code checks its type)
        if depth >= 32:
            raise ValueError('a sequence given to compiled code is at most 32 deep')
        exact = list if isinstance(a, list) else tuple
        items = exact(exact.__iter__(a))
        if all(type(v) in (float, int) for v in items):
            return items
        return exact(_plain_arg(v, depth + 1) for v in items)
    # An object whose class answers attributes by code of its own (__getattr__, or a
    # __getattribute__ of its own) could answer hasattr one way here and the other way to the C
    # code: what it is, as an array or a number, is taken once, or it is refused.
    # (what the class defines, from the dicts of its real MRO: a metaclass could answer
    # hasattr of the class itself)
    t = type(a)
    dicts = [_class_dict(c) for c in _class_mro(t) if c is not object]

    def defines(*names):
        return any(n in d for d in dicts for n in names)

    if isinstance(a, np.generic):
        arr = np.asarray(a)
        if arr.ndim == 0 and arr.dtype.kind in 'biufc':
            return arr.item()
        return nd.view(arr, nd)
    if defines('__getattr__', '__getattribute__'):
        if defines('__array__', '__array_interface__', '__array_struct__'):
            return nd.view(np.asarray(a), nd)
        if defines('__index__'):
            return int.__index__(operator.index(a))
        if defines('__float__'):
            return float(a)
        raise TypeError('an object of %.100s, whose attributes its own code answers, is not '
                        'given to compiled code in the sandbox: give an array, a number or a '
                        'list' % t.__name__)
    if not _class_flags(t) & _HEAPTYPE and not _class_dictoffset(t):
        return a  # an object of C with no dict: reading its attributes runs no code of the call
    # Any other attribute read may run the code's own code too (a descriptor or property of
    # its class; a name in a dict whose key is a str of the code's, compared by its __eq__):
    # each is read once, what it gives is converted, and the object itself is not handed on,
    # so that what the C code reads is only what was made here.
    missing = object()
    vertices = getattr(a, 'vertices', missing)
    if vertices is not missing:
        p = _PlainPath()
        p.vertices = np.array(vertices, dtype=np.float64, order='C')
        codes = a.codes
        p.codes = None if codes is None else np.array(codes, dtype=np.uint8)
        p.should_simplify = bool(a.should_simplify)
        p.simplify_threshold = float(a.simplify_threshold)
        return p
    if defines('__array__') or any(getattr(a, name, missing) is not missing for name in (
            '__array_interface__', '__array_struct__')):
        return nd.view(np.asarray(a), nd)
    if defines('__index__'):
        return int.__index__(operator.index(a))
    if defines('__float__'):
        return float(a)
    if isinstance(a, str):
        return str.__str__(a)
    if isinstance(a, bytes):
        return bytes.__getitem__(a, slice(None))
    if isinstance(a, dict):
        return dict.copy(a)
    try:
        view = memoryview(a)  # (a buffer is C's: no code of the call runs)
    except TypeError:
        pass
    else:
        with view:
            return np.array(view)  # a copy: the code's object may change its memory later
    if isinstance(a, type):
        if not _class_flags(a) & _HEAPTYPE:
            return a  # a class of C: its dict is C's
    elif callable(a):
        def call(*args, **kwargs):
            return a(*args, **kwargs)
        return call  # a function of the sandbox's: the C code reads none of the code's
    raise TypeError('an object of %.100s is not given to compiled code in the sandbox: give '
                    'an array, a number, a list or a function' % t.__name__)


def _sketch_plain(v):
    """A sketch (scale, length, randomness) as matplotlib's compiled code draws one: three
    floats, each finite and within 1e9 (a scale of 1e200 or an infinite one made the
    rasterizer recurse or loop without end, the PDF writer's too), or None."""
    if v is None:
        return None
    v = tuple(float(x) for x in v)
    if len(v) != 3 or not all(abs(x) <= 1e9 for x in v):
        raise ValueError('a sketch is three finite numbers (scale, length, randomness) within '
                         '1e9 in the sandbox')
    return v


def _plain_args(real, sketch_at=None):
    """real, called with each positional argument made plain (_plain_arg) first (the one at
    sketch_at, a sketch: _sketch_plain)."""
    def f(*args):
        return real(*[_sketch_plain(a) if i == sketch_at else _plain_arg(a)
                      for i, a in enumerate(args)])
    f.__name__ = f.__qualname__ = real.__name__
    f.__doc__ = real.__doc__
    return f


def _ndimage_checks():
    """scipy.ndimage's C code trusted two things it was given. A coordinate that is not a
    number, or one past any index (a NaN shift, offset, matrix entry or coordinate, or one a
    mapping returned; 1e300 in 'nearest' mode) was cast to an index and read around (SIGSEGV
    with NaN in the wrap, reflect and mirror modes; memory beside the input read with a spline
    of order 4 or 5; the host's too). A 1-D filter's line buffer was sized 8 * (length + size)
    bytes in 64 bits: a size of 2**62 wrapped to a few bytes, and the line's borders were
    written far past them. Coordinates must be finite and within 2**40, and a filter's size at
    most 2**30 (more is more memory than a worker has anyway)."""
    import math
    import operator
    import numpy as np
    from scipy.ndimage import _nd_image

    bound_of_coordinates = 2.0 ** 40

    def finite(what, v):
        if v is None:
            return
        a = np.asarray(v, dtype=np.float64)
        if not (np.isfinite(a).all() and (np.abs(a) < bound_of_coordinates).all()):
            raise ValueError('%s must be finite numbers within 2**40' % what)

    from scipy._lib._ccallback import LowLevelCallable

    def bound(fnc, extra_arguments, extra_keywords):
        """fnc with the code's extra arguments bound: a function of the sandbox's, which the
        C code calls with its own arguments only (the extra ones are the code's objects, any
        kind of them, that only fnc reads), and no extra arguments for the C code."""
        if not isinstance(extra_arguments, tuple):
            raise RuntimeError('extra_arguments must be a tuple')
        if not isinstance(extra_keywords, dict):
            raise RuntimeError('extra_keywords must be a dictionary')
        if type(fnc) is LowLevelCallable:
            return fnc, (), {}  # (a compiled function: it takes no extra arguments)
        extra_arguments, extra_keywords = tuple(extra_arguments), dict.copy(extra_keywords)

        def call(*args):
            return fnc(*args, *extra_arguments, **extra_keywords)
        return call, (), {}

    real_geometric = _nd_image.geometric_transform

    def geometric_transform(input, fnc, coordinates, matrix, shift, output, order, mode, cval,
                            npad, extra_arguments, extra_keywords):
        # (everything converted first, checked after: a cval's __float__ wrote NaN into the
        # matrix after the check)
        input, coordinates, matrix, shift, output, order, mode, cval, npad = (
            plain(a) for a in (input, coordinates, matrix, shift, output, order, mode, cval,
                               npad))
        finite('coordinates', coordinates)
        finite('the matrix', matrix)
        finite('the offset', shift)
        if fnc is not None:
            mapping, _, _ = bound(fnc, extra_arguments, extra_keywords)

            def fnc(*a):
                r = tuple(float(v) for v in mapping(*a))
                if not all(math.isfinite(v) and abs(v) < bound_of_coordinates for v in r):
                    raise ValueError('the mapping must give finite coordinates within 2**40')
                return r
        return real_geometric(input, fnc, coordinates, matrix, shift, output, order, mode, cval,
                              npad, (), {})

    real_zoom_shift = _nd_image.zoom_shift

    def zoom_shift(input, zoom, shift, output, order, mode, *args):
        input, zoom, shift, output, order, mode = (plain(a) for a in (input, zoom, shift,
                                                                      output, order, mode))
        args = [plain(a) for a in args]
        finite('the zoom', zoom)
        finite('the shift', shift)
        return real_zoom_shift(input, zoom, shift, output, order, mode, *args)

    def sized(size):
        size = operator.index(size)
        if size > 2**30:
            raise ValueError('a filter is at most 2**30 long, not %d' % size)
        return size

    # An output that was not an ndarray was checked by its own .shape (scipy's _get_output)
    # and then converted by the C code, whose array (from __array__) had any size: the filters
    # sized their output line buffer by that array and wrote the input's line into it (a heap
    # overflow of the input's words). The output is an array before the check reads its shape
    # (numpy.asarray, then a new object no code holds), and a function whose output has the
    # input's shape gets them only when their shapes (those the C code reads) are equal.
    from scipy.ndimage import _ni_support
    real_get_output = _ni_support._get_output
    nd = np.ndarray

    def _get_output(output, input, *args, **kwargs):
        if output is not None and not isinstance(output, (type, np.dtype, str)):
            output = nd.view(np.asarray(output), nd)
        return real_get_output(output, input, *args, **kwargs)

    _get_output.__doc__ = real_get_output.__doc__
    _ni_support._get_output = _get_output

    # {function: index of its output}, for those whose output has the input's shape
    output_at = {'correlate1d': 3, 'correlate': 2, 'uniform_filter1d': 3,
                 'min_or_max_filter1d': 3, 'min_or_max_filter': 3, 'rank_filter': 3,
                 'generic_filter1d': 4, 'generic_filter': 3, 'fourier_filter': 4,
                 'fourier_shift': 4, 'spline_filter1d': 3, 'watershed_ift': 3,
                 'binary_erosion': 3}

    # {function: (index of its origin or origins, index of what sizes the filter)}: scipy
    # checks an origin against the filter's size in Python, with the operators of the object
    # it is given (its __radd__ and comparisons answered "within"), and the C code moved its
    # window by the number the object converts to: a read and a write past the line buffer
    # (V72b H2). The origins the C code gets (plain ints) lie within the filter, as scipy asks.
    origin_at = {'correlate1d': (6, 1), 'uniform_filter1d': (6, 1),
                 'min_or_max_filter1d': (6, 1), 'generic_filter1d': (7, 2), 'correlate': (5, 1),
                 'min_or_max_filter': (6, 1), 'rank_filter': (6, 2), 'generic_filter': (6, 2),
                 'binary_erosion': (5, 1), 'binary_erosion2': (4, 1)}

    def origins_within(name, args):
        at, by = origin_at.get(name, (None, None))
        if at is None or len(args) <= at:
            return
        sizer, origins = args[by], args[at]
        if isinstance(sizer, nd):
            sizes = sizer.shape if name != 'correlate1d' else (len(sizer),)
        elif sizer is None and name == 'min_or_max_filter':
            return  # (no footprint: numpy's separable path, a 1-D filter per axis)
        else:
            sizes = (sizer,)
        if isinstance(origins, (int, np.integer)):
            origins = (origins,) * len(sizes)
        origins = [operator.index(o) for o in np.asarray(origins).ravel().tolist()]
        if len(origins) != len(sizes) or not all(
                type(n) is int and 0 <= n // 2 + o < max(n, 1) for n, o in zip(sizes, origins)):
            raise ValueError('invalid origin')

    def same_shape(name, args):
        at = output_at.get(name)
        if at is not None and len(args) > at and (
                not isinstance(args[at], nd) or not isinstance(args[0], nd) or
                args[at].shape != args[0].shape):
            raise RuntimeError('output shape not correct')
        origins_within(name, args)
        return args

    def plain_shaped(real):
        def f(*args):
            return real(*same_shape(real.__name__, [plain(a) for a in args]))
        f.__name__ = f.__qualname__ = real.__name__
        f.__doc__ = real.__doc__
        return f

    real_uniform, real_min_max = _nd_image.uniform_filter1d, _nd_image.min_or_max_filter1d
    real_generic = _nd_image.generic_filter1d

    def uniform_filter1d(input, filter_size, *args):
        return real_uniform(*same_shape('uniform_filter1d', [
            plain(input), sized(filter_size)] + [plain(a) for a in args]))

    def min_or_max_filter1d(input, filter_size, *args):
        return real_min_max(*same_shape('min_or_max_filter1d', [
            plain(input), sized(filter_size)] + [plain(a) for a in args]))

    def generic_filter1d(input, fnc, filter_size, axis, output, mode, cval, origin,
                         extra_arguments, extra_keywords):
        fnc, extra_arguments, extra_keywords = bound(fnc, extra_arguments, extra_keywords)
        return real_generic(*same_shape('generic_filter1d', [
            plain(input), fnc, sized(filter_size)] + [plain(a) for a in (
                axis, output, mode, cval, origin)] + [extra_arguments, extra_keywords]))

    real_generic_nd = _nd_image.generic_filter

    def generic_filter(input, fnc, footprint, output, mode, cval, origins, extra_arguments,
                       extra_keywords):
        fnc, extra_arguments, extra_keywords = bound(fnc, extra_arguments, extra_keywords)
        return real_generic_nd(*same_shape('generic_filter', [plain(a) for a in (
            input, fnc, footprint, output, mode, cval, origins)] + [extra_arguments,
                                                                     extra_keywords]))

    real_feature = _nd_image.euclidean_feature_transform
    real_cdt = _nd_image.distance_transform_op

    # Every other function of the C module converts its arguments itself after it has taken
    # the arrays (correlate1d's cval by its __float__, which reshaped the input in place: the
    # filter wrote past its line buffer): each gets numbers converted here and new array
    # objects no code of the call holds.
    plain = _plain_arg
    for name in dir(_nd_image):
        real = getattr(_nd_image, name)
        if not name.startswith('_') and callable(real) and real not in (
                real_geometric, real_zoom_shift, real_uniform, real_min_max, real_generic,
                real_generic_nd, real_feature, real_cdt):
            setattr(_nd_image, name, plain_shaped(real))

    def euclidean_feature_transform(input, sampling, features):
        # The features are written with the input's dimensions through their own strides:
        # numpy's own arrays (an ndarray subclass's shape property answered another shape
        # than its memory has: a write anywhere), new objects whose shape no code holds, the
        # features one int32 index for each dimension of each point of the input.
        if not isinstance(input, nd) or not isinstance(features, nd):
            raise TypeError('the input and the indices must be numpy arrays')
        if sampling is not None:
            sampling = np.array(sampling, dtype=np.float64)
        input, features = nd.view(input, nd), nd.view(features, nd)
        if features.shape != (input.ndim,) + input.shape or features.dtype != np.int32 or \
                not features.flags.writeable or \
                (sampling is not None and sampling.shape != (input.ndim,)):
            raise RuntimeError('indices array has wrong shape')
        return real_feature(input, sampling, features)

    cdt_plain = plain_shaped(real_cdt)

    def distance_transform_op(structure, distances, features):
        # A number as distance_transform_cdt's metric became a structure of no dimensions,
        # which the C code read as one of the input's: the worker crashed (the host too).
        if np.ndim(structure) != np.ndim(distances):
            raise RuntimeError('structure and input must have the same rank')
        return cdt_plain(structure, distances, features)

    for f, orig in ((geometric_transform, real_geometric), (zoom_shift, real_zoom_shift),
                    (uniform_filter1d, real_uniform), (min_or_max_filter1d, real_min_max),
                    (generic_filter1d, real_generic), (generic_filter, real_generic_nd),
                    (euclidean_feature_transform, real_feature),
                    (distance_transform_op, real_cdt)):
        f.__doc__ = orig.__doc__
        setattr(_nd_image, orig.__name__, f)


def _mpl_path_checks():
    """matplotlib's compiled path functions take the arrays they are given, then convert a
    number of the code's (points_in_path's radius by its __float__, which reshaped the points
    in place: numpy freed the old shape, and the loop read a count and strides the code laid
    there). Each gets its numbers converted first and new array objects no code holds; paths
    (a Path's vertices, re-strided by a later converter's __float__, were read at any address)
    and lists of paths as _PlainPath copies, points with __array__ as arrays (_plain_arg).
    matplotlib.transforms had imported update_path_extents, affine_transform and
    count_bboxes_overlapping_bbox by name before they were replaced in _path (Bbox.update_from_path
    called the unchecked one): every loaded module's name for one is replaced too."""
    from matplotlib import _path, rcsetup

    # Where the compiled functions that draw a path sketchily take the sketch (scale, length,
    # randomness), by position.
    sketch_at = {'cleanup_path': 8, 'convert_to_string': 4}
    replacements = {}
    for name in dir(_path):
        real = getattr(_path, name)
        if not name.startswith('_') and callable(real) and not isinstance(real, type):
            replacements[id(real)] = (real, _plain_args(real, sketch_at.get(name)))
    _replace_all(replacements)
    # rcParams['path.sketch'] is checked when it is set, as a figure would be drawn with it.
    validate_real = rcsetup._validators['path.sketch']

    def validate_sketch(s):
        return _sketch_plain(validate_real(s))

    validate_sketch.__name__ = validate_sketch.__qualname__ = validate_real.__name__
    validate_sketch.__doc__ = validate_real.__doc__
    rcsetup._validators['path.sketch'] = validate_sketch


def _fft_one_worker():
    """scipy.fft's transforms of more than one line ran on a pool of threads when workers=
    asked for more than one (workers=-1, set_workers(4)): the pool's threads outlived the call,
    and its session could not be kept (a session is kept by a fork, which takes one thread).
    The number is checked as scipy checks it, and the transforms run on the call's own thread,
    with the same results."""
    from scipy.fft._pocketfft import helper
    real = helper._workers

    def _workers(workers):
        real(workers)
        return 1

    _workers.__doc__ = real.__doc__
    _replace_all({id(real): (real, _workers)})


def _map_in_process():
    """workers=N (differential_evolution, brute, quad_vec, ...) made a multiprocessing Pool,
    whose pipes the kernel sandbox refuses by ending the call (its output lost, nothing to
    catch). A worker has no processes to give: an N other than 1 maps in the call's own process,
    with the same results. A map-like callable given as workers is used as it is."""
    from scipy._lib import _util
    real = _util.MapWrapper.__init__

    def __init__(self, pool=1):
        if not callable(pool):
            n = int(pool)
            if n != -1 and n < 1:
                raise RuntimeError('Number of workers specified must be -1, an int >= 1, or an '
                                   "object with a 'map' method")
            pool = 1
        real(self, pool)

    __init__.__doc__ = real.__doc__
    _util.MapWrapper.__init__ = __init__
    _mat_tags()


def _mat_tags():
    """scipy.io.loadmat (whosmat, and the reader scipy.io.matlab exports, VarReader5, used
    directly) looked up the numpy dtype of each data element in a C array of 20 by the
    element's data type, a number read from the file, unchecked: the types with no dtype held
    NULL (SIGSEGV) and those past 19 read the words after the array as dtypes (an array of any
    dtype over the file's bytes). The reader's C method that reads every element's tag is
    replaced in pydata.c by one that refuses (ValueError) a data type with no dtype in the
    reader's own table, before any lookup; the module is loaded here so that it is replaced
    before any call."""
    import importlib
    import io
    import struct
    importlib.import_module('scipy.io')
    from scipy.io.matlab import _mio5_params, _mio5_utils
    types = None
    for order in ('<', '>'):
        has = {k for k in _mio5_params.MDTYPES[order]['dtypes'] if isinstance(k, int)}
        types = has if types is None else types & has

    class Options:
        # What VarReader5 reads of its file reader.
        byte_order = '<'
        struct_as_record = True
        uint16_codec = 'utf-8'
        mat_dtype = False
        chars_as_strings = True
        squeeze_me = False

    def probe(mdtype):
        o = Options()
        o.mat_stream = io.BytesIO(struct.pack('<II', mdtype, 0))
        return _mio5_utils.VarReader5(o).read_tag()

    mat_reader.extend((_mio5_utils.VarReader5, tuple(sorted(types)), probe))


def _mat_streams():
    """scipy.io.loadmat (whosmat, mat_reader_factory, MatFile5Reader, and VarReader5 and
    GenericStream used directly) read a file-like object through scipy.io.matlab's
    GenericStream, whose C reader copied all the bytes that the object's read(n) answered
    into a buffer of n bytes: a read of the user's that answered more wrote past the buffer
    (any memory read and written). The file-like object a stream is made on (GenericStream's
    constructor, which every reader goes through) is now one whose read(n) answers n bytes at
    most: an io.BytesIO, or a file of the sandbox's open (io.BufferedReader, io.BufferedRandom,
    io.FileIO), as it is; any other object is read whole here (from its start when it can
    seek, at its position then) into an io.BytesIO, which the reader reads instead. A stream's
    state is not set from outside (copy.copy and pickle's __setstate__: the file object and,
    for the zlib stream, the buffer's size and position), which would skip the check."""
    import io
    import operator
    from scipy.io.matlab import _mio5, _streams
    direct = (io.BytesIO, io.BufferedReader, io.BufferedRandom, io.FileIO)

    def own(fobj):
        if type(fobj) in direct:
            return fobj
        at = None
        tell, seek = getattr(fobj, 'tell', None), getattr(fobj, 'seek', None)
        if tell is not None and seek is not None:
            try:
                at = operator.index(tell())
                seek(0)
            except Exception:
                at = None
        data = fobj.read()
        if isinstance(data, str) or data is None:
            raise TypeError('read() of the file-like object should answer bytes, not %s'
                            % type(data).__name__)
        with memoryview(data) as view:
            copy = io.BytesIO(view.tobytes())
        if at:
            copy.seek(at)
        return copy

    def stream_made(args, kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        args = () if args is None else tuple(args)
        if len(args) == 1 and not kwargs:
            return (own(args[0]),), None
        if not args and kwargs and list(kwargs) == ['fobj']:
            return (), {'fobj': own(kwargs['fobj'])}
        return args, kwargs  # refused by the constructor itself

    stream_init = _streams.GenericStream.__dict__['__init__']

    def __init__(self, *args, **kwargs):
        args, kwargs = stream_made(args, kwargs)
        stream_init(self, *args, **(kwargs or {}))

    __init__.__doc__ = stream_init.__doc__
    init_checks[_streams.GenericStream] = stream_made
    type_patches[(_streams.GenericStream, '__init__')] = __init__

    def __setstate__(self, state):
        raise TypeError("scipy.io.matlab's streams are not copied or unpickled in the sandbox")

    def unpickle(*args, **kwargs):
        __setstate__(None, None)

    for cls in (_streams.GenericStream, _streams.ZlibInputStream):
        type_patches[(cls, '__setstate__')] = __setstate__
        name = '__pyx_unpickle_' + cls.__name__
        if name in vars(_streams):
            setattr(_streams, name, unpickle)
    # The reader reads its file at each variable: it is made its own once.
    reader_init = _mio5.MatFile5Reader.__init__

    def reader__init__(self, mat_stream, *args, **kwargs):
        reader_init(self, own(mat_stream), *args, **kwargs)

    reader__init__.__doc__ = reader_init.__doc__
    _mio5.MatFile5Reader.__init__ = reader__init__


def _library_data():
    """Data files a library reads from its own directory on first use, read here: a worker
    opens no file of the library's. Sobol's direction numbers were left unread (Cython only
    printed the refusal), and qmc.Sobol drew the same point again and again in 2 or more
    dimensions, with no error."""
    import numpy as np
    from scipy.stats import _sobol
    for dtype in (np.uint32, np.uint64):
        _sobol.get_poly_vinit('poly', dtype)


def _order_filters():
    """scipy.signal's order_filter and medfilt sort each window's values in C by their
    pointers, taken from the array without references: on an array of objects, an item's
    __lt__ that replaced the array's items freed the others while the sort still compared them
    (a fake object made in their memory: any memory). The C code gets a private copy of an
    array of objects (the copy holds every item until it returns)."""
    import numpy as np
    from scipy.signal import _sigtools
    real = _sigtools._order_filterND

    def private(a):
        a = np.asarray(a)
        return np.array(a, copy=True) if a.dtype.hasobject else a

    def _order_filterND(a, domain, order=0):
        return real(private(a), private(domain), order)

    _order_filterND.__doc__ = real.__doc__
    _replace_everywhere(real, _order_filterND)


def _sigtools_sizes():
    """scipy.signal's C filters take sizes as C ints, unchecked past what scipy's Python
    checks: medfilt2d's window (two odd sizes whose product wrapped to 1 in 32 bits: a window
    buffer of one item, the image's rows copied past it into another array's header), and
    remez's grid_density (negative: its work arrays laid out before their buffer, the code's
    band edges and weights written there). Each gets sizes its buffers hold."""
    import operator
    import numpy as np
    from scipy.signal import _sigtools
    medfilt_real, remez_real = _sigtools._medfilt2d, _sigtools._remez
    most = (1 << 31) - 1

    def _medfilt2d(image, size):
        size = np.asarray(size)
        if size.shape != (2,):
            raise ValueError('medfilt2d: kernel_size must be one size or two')
        rows, cols = (operator.index(n) for n in size.tolist())
        if rows < 1 or cols < 1 or rows % 2 == 0 or cols % 2 == 0 or rows * cols > most:
            raise ValueError('medfilt2d: kernel_size must be odd positive sizes whose product '
                             'is below 2**31')
        return medfilt_real(image, np.array([rows, cols], dtype=np.intp))

    def _remez(numtaps, bands, desired, weight, type, fs, maxiter, grid_density):
        numtaps, maxiter = operator.index(numtaps), operator.index(maxiter)
        grid_density = operator.index(grid_density)
        if numtaps < 1 or grid_density < 1 or maxiter < 1 or \
                grid_density * (numtaps // 2 + 3) > 1 << 26:
            raise ValueError('remez: numtaps, maxiter and grid_density must be positive, and '
                             'grid_density * numtaps below 2**27')
        return remez_real(numtaps, bands, desired, weight, type, fs, maxiter, grid_density)

    for real, checked in ((medfilt_real, _medfilt2d), (remez_real, _remez)):
        checked.__doc__ = real.__doc__
    _replace_all({id(medfilt_real): (medfilt_real, _medfilt2d),
                  id(remez_real): (remez_real, _remez)})


def _special_work_arrays():
    """scipy.special's spheroidal wave functions run Fortran that keeps its work in fixed arrays
    (300 items in the characteristic values' routine, 200 and 0..251 in the functions'), filled
    up to 10 or 25 + (n - m)/2 + c items: c = 400 wrote past them (SIGSEGV). The Mathieu
    functions convert the order m to a C int: past 2**31 it wrapped negative and the work was
    indexed by it (SIGSEGV). Each gets m, n and c as the float64 it computes with, within what
    its arrays hold."""
    import operator
    import numpy as np
    from scipy import special

    def cv_room(m, n, c):
        return 10 + np.floor((n - m) / 2 + c) <= 300

    def function_room(m, n, c):
        nm = 25 + np.floor((n - m) / 2 + c)
        return (2 * nm + m <= 251) & (nm + m <= 200)

    def integral(v):
        try:
            return operator.index(v)
        except TypeError:
            return float(v)

    def bounded(real, room, what, scalars=False):
        def f(m, n, c, *rest, **kwargs):
            if scalars:
                m, n, c = integral(m), integral(n), float(c)
            else:
                m, n, c = (np.asarray(a, dtype=np.float64) for a in (m, n, c))
            with np.errstate(invalid='ignore'):
                fits = room(m, n, c) | np.isnan(m) | np.isnan(n) | np.isnan(c)
            if not np.all(fits):
                raise ValueError('%s: scipy computes it in work arrays of fixed size: it takes '
                                 '%s' % (real.__name__, what))
            return real(m, n, c, *rest, **kwargs)
        f.__name__ = f.__qualname__ = real.__name__
        f.__doc__ = real.__doc__
        return f

    def order_bounded(real):
        def f(m, q, *rest, **kwargs):
            m = np.asarray(m, dtype=np.float64)
            if np.any(np.abs(m) > (1 << 30)):
                raise ValueError('%s: the order m must be below 2**30' % real.__name__)
            return real(m, q, *rest, **kwargs)
        f.__name__ = f.__qualname__ = real.__name__
        f.__doc__ = real.__doc__
        return f

    cv_what = '(n - m)/2 + c below 291'
    function_what = '(n - m)/2 + c at most 175 - m, and n + 2c at most 201'
    replacements = {}
    for name in dir(special):
        real = getattr(special, name)
        if name.startswith(('pro_', 'obl_')) and isinstance(real, np.ufunc):
            if name in ('pro_cv', 'obl_cv'):
                checked = bounded(real, cv_room, cv_what)
            else:
                checked = bounded(real, function_room, function_what)
        elif name in ('pro_cv_seq', 'obl_cv_seq'):
            checked = bounded(real, cv_room, cv_what, scalars=True)
        elif name.startswith('mathieu_') and isinstance(real, np.ufunc):
            checked = order_bounded(real)
        else:
            continue
        replacements[id(real)] = (real, checked)
    # cython_special calls the same Fortran for a scalar each (pro_cv, obl_cv; the Mathieu
    # characteristic values): the same bounds.
    from scipy.special import cython_special
    for name in ('pro_cv', 'obl_cv', 'mathieu_a', 'mathieu_b'):
        real = getattr(cython_special, name, None)
        if real is None:
            continue
        if name.startswith('mathieu_'):
            checked = order_bounded(real)
        else:
            checked = bounded(real, cv_room, cv_what, scalars=True)
        replacements[id(real)] = (real, checked)
    _replace_all(replacements)


def _axis_arguments():
    """scipy's Python functions read an axis argument more than once: through __index__ to check
    a shape, then through its own arithmetic (axis % x.ndim) to choose the axis the compiled
    code walks. An object of the code's answering 1 to one and 0 to the other made sosfilt
    filter more signals than its zi had rows (a write past zi into another array) and upfirdn
    size an output from one axis and fill it along another (reads past x). The functions of
    scipy.signal, scipy.ndimage, scipy.fft and scipy.interpolate take an axis as the int it
    converts to, once."""
    import functools
    import inspect
    import operator
    from scipy import fft, interpolate, ndimage, signal

    def plain(axis):
        if axis is None or type(axis) is int:
            return axis
        if isinstance(axis, (tuple, list)):
            return type(axis)(plain(a) for a in axis) if type(axis) in (tuple, list) \
                else tuple(plain(a) for a in axis)
        return operator.index(axis)

    def normalised(f, pos):
        def g(*args, **kwargs):
            kwargs = _plain_names(kwargs)
            if len(args) > pos:
                args = args[:pos] + (plain(args[pos]),) + args[pos + 1:]
            elif 'axis' in kwargs:
                kwargs['axis'] = plain(kwargs['axis'])
            return f(*args, **kwargs)
        functools.update_wrapper(g, f)
        return g

    replacements = {}
    for module in (signal, ndimage, fft, interpolate):
        for name in getattr(module, '__all__', ()):
            f = getattr(module, name, None)
            if type(f) is not type(plain) or id(f) in replacements:
                continue
            try:
                params = list(inspect.signature(f).parameters.values())
            except (TypeError, ValueError):
                continue
            for i, p in enumerate(params):
                if p.name == 'axis' and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                    pos = i if p.kind == p.POSITIONAL_OR_KEYWORD else 1 << 30
                    replacements[id(f)] = (f, normalised(f, pos))
                    break
    _replace_all(replacements)


def _qmc_draws():
    """scipy.stats.sampling's qrvs reads as many uniforms from the QMC engine's answer as it
    asked for (Cython, no bounds checks): an engine of the code's answering fewer had the bytes
    after them read as draws (another array's data came back as variates). The engine is asked
    through one that checks the answer: n draws of d numbers, copied."""
    import operator
    import numpy as np
    from scipy.stats import qmc, sampling

    class CheckedEngine(qmc.QMCEngine):
        def __init__(self, engine):
            self._engine = engine
            super().__init__(d=operator.index(engine.d))

        def random(self, n=1, *, workers=1):
            n = operator.index(n)
            drawn = np.array(self._engine.random(n), dtype=np.float64)
            if drawn.shape != (n, self.d):
                raise ValueError('the QMC engine answered %s numbers for %d draws of %d '
                                 'dimensions' % (drawn.shape, n, self.d))
            return drawn

        _random = random

    for cls in (sampling.NumericalInverseHermite, sampling.NumericalInversePolynomial):
        real = cls.qrvs

        def qrvs(self, size=None, d=None, qmc_engine=None, _real=real):
            if qmc_engine is not None and isinstance(qmc_engine, qmc.QMCEngine):
                qmc_engine = CheckedEngine(qmc_engine)
            return _real(self, size, d, qmc_engine)

        qrvs.__doc__ = real.__doc__
        qrvs.__name__ = qrvs.__qualname__ = 'qrvs'
        type_patches[(cls, 'qrvs')] = qrvs


def _euler_sequences():
    """Rotation.from_euler checked its axis sequence by len() and a pattern, then used
    seq.lower(): a str subclass's own, answering a longer sequence, had the compiled quaternion
    composition read angles past those given (a value beside them came back in the rotation).
    from_euler and as_euler take the sequence as the exact str of its characters."""
    from scipy.spatial.transform import Rotation

    def exact(seq):
        return ''.join([seq]) if isinstance(seq, str) else seq

    from_real = Rotation.__dict__['from_euler']
    as_real = Rotation.as_euler

    def from_euler(cls, seq, angles, degrees=False):
        return from_real.__get__(None, cls)(exact(seq), angles, degrees)

    def as_euler(self, seq, degrees=False):
        return as_real(self, exact(seq), degrees)

    from_euler.__doc__, as_euler.__doc__ = Rotation.from_euler.__doc__, as_real.__doc__
    type_patches[(Rotation, 'from_euler')] = classmethod(from_euler)
    type_patches[(Rotation, 'as_euler')] = as_euler


def _squareform_copies():
    """squareform's compiled copies between a distance vector and its matrix
    (to_squareform_from_vector_wrap, to_vector_from_squareform_wrap) copy items by their size and
    trust the shapes they are given: an object array's items were copied as pointers without
    their references, and freeing the source left the result holding freed memory (other
    objects' values came back). Arrays of objects are copied by numpy's indexing, which holds
    its references; the others are C-contiguous arrays of one item size whose shapes agree
    (a matrix of d x d, a vector of d * (d - 1) / 2)."""
    import numpy as np
    from scipy.spatial import _distance_wrap as wrap
    real_matrix = wrap.to_squareform_from_vector_wrap
    real_vector = wrap.to_vector_from_squareform_wrap

    def checked(M, v, out):
        if not isinstance(M, np.ndarray) or not isinstance(v, np.ndarray):
            raise TypeError('squareform copies between numpy arrays')
        d = M.shape[0] if M.ndim == 2 else -1
        if (M.ndim != 2 or M.shape[1] != d or v.ndim != 1 or v.shape[0] != d * (d - 1) // 2
                or M.dtype.itemsize != v.dtype.itemsize
                or M.dtype.hasobject != v.dtype.hasobject):
            raise ValueError('squareform copies a vector of d * (d - 1) / 2 items and a '
                             'matrix of d x d items of one kind')
        if not (M.flags.c_contiguous and v.flags.c_contiguous and out.flags.writeable):
            raise ValueError('squareform copies between C-contiguous arrays into a writeable '
                             'one')
        return d, M.dtype.hasobject

    def to_squareform_from_vector_wrap(M, v):
        d, objects = checked(M, v, M)
        if not objects:
            return real_matrix(M, v)
        upper = np.triu_indices(d, 1)
        M[upper] = v
        M[upper[1], upper[0]] = v
        return None

    def to_vector_from_squareform_wrap(M, v):
        d, objects = checked(M, v, v)
        if not objects:
            return real_vector(M, v)
        v[...] = M[np.triu_indices(d, 1)]
        return None

    _replace_all({id(real_matrix): (real_matrix, to_squareform_from_vector_wrap),
                  id(real_vector): (real_vector, to_vector_from_squareform_wrap)})


def _pickle_writes(pd):
    """to_pickle (pd.to_pickle, a frame's) wrote its file, and the pd.read_pickle meant to load it later was refused (a
    pickle names what loading it runs): a frame cached that way was found lost only when read.
    The file is still written (the user's own Python can read it), with a note saying the
    sandbox will not read it back and what will."""
    from pandas.io import pickle
    real = pickle.to_pickle

    def to_pickle(obj, *args, **kwargs):
        sys.stderr.write('[to_pickle: written, but the sandbox does not read pickles back '
                         '(pd.read_pickle runs what a pickle names): to use it in a later '
                         'call, keep it in a variable (the session keeps it) or write it with '
                         'to_csv, to_json or to_excel]\n')
        return real(obj, *args, **kwargs)

    to_pickle.__doc__ = real.__doc__
    to_pickle.__name__ = to_pickle.__qualname__ = real.__name__
    to_pickle.__module__ = real.__module__
    _replace_all({id(real): (real, to_pickle)})


def _kth_smallest():
    """pandas' nsmallest and nlargest checked n by its comparisons (n <= 0, n >= len) and then
    handed n - 1, computed by the object's own arithmetic, to the compiled kth_smallest, which
    reads and writes arr[k] unchecked: a number class of the code's answering False to every
    comparison read memory beside the copy it was given (another array's values came back).
    kth_smallest takes a k within its array."""
    import operator
    from pandas._libs import algos
    real = algos.kth_smallest

    def kth_smallest(arr, k):
        k = operator.index(k)
        if not 0 <= k < len(arr):
            raise ValueError('kth_smallest: k must be within the array (0 <= k < %d, not %d)'
                             % (len(arr), k))
        return real(arr, k)

    kth_smallest.__doc__ = real.__doc__
    _replace_all({id(real): (real, kth_smallest)})


def _peak_maxima():
    """scipy.signal.find_peaks' compiled _local_maxima_1d shrinks its result with
    resize(refcheck=False) while its own memoryview holds it, which the sandbox refuses (a
    resize without the check freed memory under an array's views): find_peaks always failed.
    The same maxima, from numpy: runs of equal values, each a maximum when the runs on both
    sides are lower; its first and last samples never are."""
    import numpy as np
    from scipy.signal import _peak_finding_utils as utils
    real = utils._local_maxima_1d

    def _local_maxima_1d(x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.ndim != 1:
            raise ValueError('Buffer has wrong number of dimensions (expected 1, got %d)'
                             % x.ndim)
        n = x.shape[0]
        if n < 3:
            empty = np.empty(0, dtype=np.intp)
            return empty, empty.copy(), empty.copy()
        change = np.flatnonzero(x[1:] != x[:-1])
        starts = np.concatenate(([0], change + 1))
        ends = np.concatenate((change, [n - 1]))
        v = x[starts]
        k = np.arange(1, len(starts) - 1)
        peak = k[(v[k - 1] < v[k]) & (v[k + 1] < v[k])]
        left, right = starts[peak].astype(np.intp), ends[peak].astype(np.intp)
        return (left + right) // 2, left, right

    _local_maxima_1d.__doc__ = real.__doc__
    _replace_all({id(real): (real, _local_maxima_1d)})


def _sparse_kernels():
    """scipy.sparse's compiled kernels (sparsetools) trust their arguments whole: the index
    pointers, the indices and the sizes of the arrays they write. A matrix's arrays are plain
    numpy arrays the user can change after the matrix is made (m.indices[0] = 10**6, then
    m.toarray(): a value written a chosen distance past the dense array), and the kernels
    themselves are public (scipy.sparse.sparsetools). Each kernel checks its arguments first,
    as its loops will use them: pointers rising from 0 within the indices and values, indices
    within the shape, outputs with room for all they receive, no output sharing memory with
    another argument, scalars and their products within the index type. The arrays checked are
    the ones handed on (numbers only: nothing of the user's runs between)."""
    import operator
    import numpy as np
    from scipy.sparse import _sparsetools as st

    int64 = np.dtype(np.int64)
    real = {name: getattr(st, name) for name in dir(st) if not name.startswith('_')}

    def fail(what):
        raise ValueError('sparse kernel: ' + what)

    class Call:
        """One call's arguments as the kernel reads them."""

        def __init__(self, name, spec, args):
            if len(args) != len(spec.replace('*', '')):
                raise TypeError('%s takes %d arguments' % (name, len(spec.replace('*', ''))))
            self.passed, self.flat, self.outs, self.arrays = [], [], [], []
            out, index, scalars = False, [], []
            it = iter(args)
            for code in spec:
                if code == '*':
                    out = True
                    continue
                a = next(it)
                if code in 'il':
                    a = operator.index(a)
                    if code == 'l' and not -(1 << 63) <= a < 1 << 63:
                        fail('a scalar past 64 bits')
                    self.passed.append(a)
                    self.flat.append(a)
                    scalars.append(a if code == 'i' else 0)
                    continue
                if out and not isinstance(a, np.ndarray):
                    raise TypeError('%s: an output must be a numpy array' % name)
                a = np.asarray(a)
                if code == 'I' and not out and _threads_run():
                    a = a.copy()
                kind = a.dtype.kind
                if code == 'I' and kind not in 'iu' or code != 'I' and kind not in 'biufc':
                    raise TypeError('%s: unsupported array type %s' % (name, a.dtype))
                if code == 'I':
                    index.append(a.dtype)
                self.passed.append(a)
                self.flat.append(a.reshape(-1))
                if out:
                    self.outs.append(len(self.arrays))
                self.arrays.append(a)
                out = False
            self.lim = (1 << 63) - 1 if index and np.result_type(*index) == int64 \
                else (1 << 31) - 1
            for v in scalars:
                if not -self.lim <= v <= self.lim:
                    fail('a scalar past the index type')
            for i in self.outs:
                for k, a in enumerate(self.arrays):
                    if k != i and np.may_share_memory(self.arrays[i], a):
                        fail('an output shares memory with another argument')

        def fits(self, *values):
            # The kernels compute offsets into values and outputs in 64 bits.
            for v in values:
                if v >= 1 << 63:
                    fail('sizes past 64 bits')

    def pointers(p, n, room, what='index pointers', start=0):
        # p[start .. start+n] rise from >= 0 to at most room; returns p[start + n].
        if n < 0 or start < 0 or p.size < start + n + 1:
            fail('%s: %d rows need %d pointers, there are %d' % (what, n, start + n + 1,
                                                                  p.size))
        q = p[start:start + n + 1]
        if q[0] < 0 or q[n] > room or (n and (q[1:] < q[:-1]).any()):
            fail('%s do not rise from 0 within the %d entries' % (what, room))
        return int(q[n])

    def within(j, count, bound, what='indices'):
        if count > j.size:
            fail('%s: %d needed, %d given' % (what, count, j.size))
        if count and bound is not None:
            v = j[:count]
            if v.min() < 0 or v.max() >= bound:
                fail('%s past the %d there are' % (what, bound))

    def room(o, k, what='the output'):
        if k > 0 and o.size < k:
            fail('%s has room for %d, %d needed' % (what, o.size, k))

    def compressed(c, n_major, n_minor, p, j, x=None, block=1):
        """A CSR/CSC/BSR structure: n_major rows of indices below n_minor (None: unbounded),
        block values per entry in x. Returns the count of entries."""
        avail = j.size if x is None else min(j.size, x.size // block if block > 0 else 0)
        nnz = pointers(p, n_major, avail)
        within(j, nnz, n_minor)
        return nnz

    def dims(c, *v):
        for n in v:
            if n < 0:
                fail('a negative dimension')

    # The kernels by name: their argument codes (i index scalar, l 64-bit scalar, I index
    # array, T values, B booleans, * an output) and what they read and write.
    rules = {}

    def rule(spec, *names):
        def add(f):
            for name in names:
                rules[name] = (spec, f)
            return f
        return add

    binops = ('elmul', 'eldiv', 'plus', 'minus', 'maximum', 'minimum', 'ne', 'lt', 'gt',
              'le', 'ge')

    def maxnnz(c, n_row, n_col, ap, aj, bp, bj):
        n_b = bp.size - 1
        compressed(c, n_row, n_b, ap, aj)
        compressed(c, n_b, n_col, bp, bj)
        n = int(real['csr_matmat_maxnnz'](n_row, n_col, ap, aj, bp, bj))
        c.fits(n)
        return n

    @rule('iiIIII', 'csr_matmat_maxnnz')
    def _(c, n_row, n_col, ap, aj, bp, bj):
        dims(c, n_row, n_col)
        maxnnz(c, n_row, n_col, ap, aj, bp, bj)

    @rule('iiIIII', 'csc_matmat_maxnnz')
    def _(c, n_row, n_col, ap, ai, bp, bi):
        dims(c, n_row, n_col)
        maxnnz(c, n_col, n_row, bp, bi, ap, ai)

    def matmat(c, n_row, n_col, ap, aj, ax, bp, bj, bx, cp, cj, cx):
        dims(c, n_row, n_col)
        k = maxnnz(c, n_row, n_col, ap, aj, bp, bj)
        compressed(c, n_row, None, ap, aj, ax)
        compressed(c, bp.size - 1, None, bp, bj, bx)
        room(cp, n_row + 1)
        room(cj, k)
        room(cx, k)

    @rule('iiIITIIT*I*I*T', 'csr_matmat')
    def _(c, n_row, n_col, ap, aj, ax, bp, bj, bx, cp, cj, cx):
        matmat(c, n_row, n_col, ap, aj, ax, bp, bj, bx, cp, cj, cx)

    @rule('iiIITIIT*I*I*T', 'csc_matmat')
    def _(c, n_row, n_col, ap, ai, ax, bp, bi, bx, cp, ci, cx):
        matmat(c, n_col, n_row, bp, bi, bx, ap, ai, ax, cp, ci, cx)

    def diagonal(c, k, n_row, n_col, ap, aj, ax, yx):
        dims(c, n_row, n_col)
        compressed(c, n_row, None, ap, aj, ax)
        first_row, first_col = (0, k) if k >= 0 else (-k, 0)
        room(yx, min(n_row - first_row, n_col - first_col), 'the diagonal')

    @rule('iiiIIT*T', 'csr_diagonal')
    def _(c, k, n_row, n_col, ap, aj, ax, yx):
        diagonal(c, k, n_row, n_col, ap, aj, ax, yx)

    @rule('iiiIIT*T', 'csc_diagonal')
    def _(c, k, n_row, n_col, ap, aj, ax, yx):
        diagonal(c, -k, n_col, n_row, ap, aj, ax, yx)

    def transpose(c, n_row, n_col, ap, aj, ax, bp, bi, bx):
        dims(c, n_row, n_col)
        nnz = compressed(c, n_row, n_col, ap, aj, ax)
        room(bp, n_col + 1)
        room(bi, nnz)
        room(bx, nnz)

    @rule('iiIIT*I*I*T', 'csr_tocsc')
    def _(c, n_row, n_col, ap, aj, ax, bp, bi, bx):
        transpose(c, n_row, n_col, ap, aj, ax, bp, bi, bx)

    @rule('iiIIT*I*I*T', 'csc_tocsr')
    def _(c, n_row, n_col, ap, ai, ax, bp, bj, bx):
        transpose(c, n_col, n_row, ap, ai, ax, bp, bj, bx)

    def count_blocks(c, n_row, n_col, r, cc, ap, aj):
        dims(c, n_row, n_col)
        if r <= 0 or cc <= 0:
            fail('blocks need positive sizes')
        compressed(c, n_row, n_col, ap, aj)
        return int(real['csr_count_blocks'](n_row, n_col, r, cc, ap, aj))

    @rule('iiiiII', 'csr_count_blocks')
    def _(c, n_row, n_col, r, cc, ap, aj):
        count_blocks(c, n_row, n_col, r, cc, ap, aj)

    @rule('iiiiIIT*I*I*T', 'csr_tobsr')
    def _(c, n_row, n_col, r, cc, ap, aj, ax, bp, bj, bx):
        blocks = count_blocks(c, n_row, n_col, r, cc, ap, aj)
        compressed(c, n_row, n_col, ap, aj, ax)
        c.fits(r * cc, blocks * r * cc)
        room(bp, n_row // r + 1)
        room(bj, blocks)
        room(bx, blocks * r * cc)

    @rule('iiIIT*T', 'csr_todense')
    def _(c, n_row, n_col, ap, aj, ax, bx):
        dims(c, n_row, n_col)
        compressed(c, n_row, n_col, ap, aj, ax)
        c.fits(n_row * n_col)
        room(bx, n_row * n_col)

    def matvec(c, n_major, n_minor, n_row, n_col, n_vecs, ap, aj, ax, xx, yx):
        dims(c, n_row, n_col, n_vecs)
        compressed(c, n_major, n_minor, ap, aj, ax)
        c.fits(n_col * n_vecs, n_row * n_vecs)
        room(xx, n_col * n_vecs, 'the vector')
        room(yx, n_row * n_vecs)

    @rule('iiIITT*T', 'csr_matvec')
    def _(c, n_row, n_col, ap, aj, ax, xx, yx):
        matvec(c, n_row, n_col, n_row, n_col, 1, ap, aj, ax, xx, yx)

    @rule('iiiIITT*T', 'csr_matvecs')
    def _(c, n_row, n_col, n_vecs, ap, aj, ax, xx, yx):
        matvec(c, n_row, n_col, n_row, n_col, n_vecs, ap, aj, ax, xx, yx)

    @rule('iiIITT*T', 'csc_matvec')
    def _(c, n_row, n_col, ap, ai, ax, xx, yx):
        matvec(c, n_col, n_row, n_row, n_col, 1, ap, ai, ax, xx, yx)

    @rule('iiiIITT*T', 'csc_matvecs')
    def _(c, n_row, n_col, n_vecs, ap, ai, ax, xx, yx):
        matvec(c, n_col, n_row, n_row, n_col, n_vecs, ap, ai, ax, xx, yx)

    def entries(ap, n_rows, nnz, aj, n_col):
        # (row, column) of each of the first nnz entries, as one number.
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(ap[:n_rows + 1]))
        return rows * n_col + aj[:nnz]

    def binop(c, n_row, n_col, ap, aj, ax, bp, bj, bx, cp, cj, cx, block=1):
        dims(c, n_row, n_col)
        na = compressed(c, n_row, n_col, ap, aj, ax, block)
        nb = compressed(c, n_row, n_col, bp, bj, bx, block)
        k = na + nb
        if min(cj.size, cx.size // block) < k:
            # At most one entry a (row, column) both have: counted when the output is
            # smaller than both together.
            k = np.unique(np.concatenate((entries(ap, n_row, na, aj, n_col),
                                          entries(bp, n_row, nb, bj, n_col)))).size
        c.fits(k * block)
        room(cp, n_row + 1)
        room(cj, k)
        room(cx, k * block)

    for op in binops:
        out = 'B' if op in ('ne', 'lt', 'gt', 'le', 'ge') else 'T'

        @rule('iiIITIIT*I*I*' + out, 'csr_%s_csr' % op)
        def _(c, n_row, n_col, ap, aj, ax, bp, bj, bx, cp, cj, cx):
            binop(c, n_row, n_col, ap, aj, ax, bp, bj, bx, cp, cj, cx)

        @rule('iiIITIIT*I*I*' + out, 'csc_%s_csc' % op)
        def _(c, n_row, n_col, ap, ai, ax, bp, bi, bx, cp, ci, cx):
            binop(c, n_col, n_row, ap, ai, ax, bp, bi, bx, cp, ci, cx)

    @rule('iiII*TT', 'csr_scale_rows')
    def _(c, n_row, n_col, ap, aj, ax, xx):
        dims(c, n_row, n_col)
        compressed(c, n_row, None, ap, aj, ax)
        room(xx, n_row, 'the scale')

    @rule('iiII*TT', 'csr_scale_columns')
    def _(c, n_row, n_col, ap, aj, ax, xx):
        dims(c, n_row, n_col)
        compressed(c, n_row, n_col, ap, aj, ax)
        room(xx, n_col, 'the scale')

    @rule('iI*I*T', 'csr_sort_indices')
    def _(c, n_row, ap, aj, ax):
        compressed(c, n_row, None, ap, aj, ax)

    @rule('ii*I*I*T', 'csr_eliminate_zeros', 'csr_sum_duplicates')
    def _(c, n_row, n_col, ap, aj, ax):
        dims(c, n_row, n_col)
        compressed(c, n_row, None, ap, aj, ax)

    @rule('iiIITiiii', 'get_csr_submatrix')
    def _(c, n_row, n_col, ap, aj, ax, ir0, ir1, ic0, ic1):
        if not 0 <= ir0 <= ir1 <= n_row:
            fail('rows %d to %d are not within the %d there are' % (ir0, ir1, n_row))
        pointers(ap, ir1 - ir0, min(aj.size, ax.size), start=ir0)

    def rows_taken(c, rows, ap, aj, ax, bj, bx):
        n = ap.size - 1
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            fail('a row past the %d there are' % max(n, 0))
        rows = rows.astype(np.int64)
        s, e = ap[rows].astype(np.int64), ap[rows + 1].astype(np.int64)
        if rows.size and (s.min() < 0 or (e < s).any() or e.max() > min(aj.size, ax.size)):
            fail('index pointers do not rise within the entries')
        total = int((e - s).sum())
        room(bj, total)
        room(bx, total)

    @rule('iIIIT*I*T', 'csr_row_index')
    def _(c, n_rows, rows, ap, aj, ax, bj, bx):
        if n_rows < 0:
            fail('a negative count of rows')
        within(rows, n_rows, None, 'rows')
        rows_taken(c, rows[:n_rows], ap, aj, ax, bj, bx)

    @rule('iiiIIT*I*T', 'csr_row_slice')
    def _(c, start, stop, step, ap, aj, ax, bj, bx):
        if step == 0:
            fail('a step of 0')
        rows_taken(c, np.arange(start, stop, step, dtype=np.int64), ap, aj, ax, bj, bx)

    @rule('iIiiII*I*I', 'csr_column_index1')
    def _(c, n_idx, cols, n_row, n_col, ap, aj, offsets, bp):
        dims(c, n_row, n_col)
        if n_idx < 0:
            fail('a negative count of columns')
        within(cols, n_idx, n_col, 'columns')
        compressed(c, n_row, n_col, ap, aj)
        room(offsets, n_col, 'the column offsets')
        room(bp, n_row + 1)

    @rule('IIiIT*I*T', 'csr_column_index2')
    def _(c, order, offsets, nnz, aj, ax, bj, bx):
        if nnz < 0:
            fail('a negative count of entries')
        within(aj, nnz, offsets.size)
        within(ax, nnz, None, 'values')
        if nnz:
            co = offsets.astype(np.int64)
            prev = np.concatenate(([0], co[:-1]))
            j = aj[:nnz].astype(np.int64)
            d = co[j] - prev[j]
            on = d > 0
            if on.any() and (prev[j][on].min() < 0 or co[j][on].max() > order.size):
                fail('column offsets past the column order')
            total = int(d[on].sum())
            room(bj, total)
            room(bx, total)

    def samples(c, n_row, n_col, ap, aj, ax, n, bi, bj, out):
        dims(c, n_row, n_col)
        if n < 0:
            fail('a negative count of samples')
        pointers(ap, n_row, aj.size if ax is None else min(aj.size, ax.size))
        within(bi, n, None, 'sample rows')
        within(bj, n, None, 'sample columns')
        room(out, n)
        if n:
            v = bi[:n]
            if v.min() < -n_row or v.max() >= n_row:
                fail('a sample row past the %d there are' % n_row)

    @rule('iiIITiII*T', 'csr_sample_values')
    def _(c, n_row, n_col, ap, aj, ax, n, bi, bj, yx):
        samples(c, n_row, n_col, ap, aj, ax, n, bi, bj, yx)

    @rule('iiIIiII*I', 'csr_sample_offsets')
    def _(c, n_row, n_col, ap, aj, n, bi, bj, bp):
        samples(c, n_row, n_col, ap, aj, None, n, bi, bj, bp)

    @rule('iiIIIT*I*I*T', 'csr_hstack')
    def _(c, n_blocks, n_row, n_col_cat, ap_cat, aj_cat, ax_cat, bp, bj, bx):
        if n_blocks < 1 or n_row < 0:
            fail('hstack needs a block and rows')
        within(n_col_cat, n_blocks, None, 'block widths')
        c.fits(n_blocks * (n_row + 1))
        at = total = 0
        avail = min(aj_cat.size, ax_cat.size)
        for b in range(n_blocks):
            end = pointers(ap_cat, n_row, avail - at, start=b * (n_row + 1))
            total += end - int(ap_cat[b * (n_row + 1)])
            at += end
        c.fits(total)
        room(bp, n_row + 1)
        room(bj, total)
        room(bx, total)

    @rule('iI*I', 'expandptr')
    def _(c, n_row, ap, bi):
        pointers(ap, n_row, bi.size)

    @rule('iII', 'csr_has_sorted_indices', 'csr_has_canonical_format')
    def _(c, n_row, ap, aj):
        pointers(ap, n_row, aj.size)

    @rule('', 'test_throw_error')
    def _(c):
        pass

    # bsr: n_brow by n_bcol blocks of R by C values.
    def bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax, bounded=True):
        dims(c, n_brow, n_bcol)
        if r <= 0 or cc <= 0:
            fail('blocks need positive sizes')
        c.fits(r * cc, n_brow * r, n_bcol * cc)
        return compressed(c, n_brow, n_bcol if bounded else None, ap, aj, ax, r * cc)

    @rule('iiiiiIIT*T', 'bsr_diagonal')
    def _(c, k, n_brow, n_bcol, r, cc, ap, aj, ax, yx):
        bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
        if not -c.lim // 2 <= k <= c.lim // 2:
            fail('a diagonal past the index type')
        d = min(n_brow * r + min(k, 0), n_bcol * cc - max(k, 0))
        first_row = -k if k < 0 else 0
        last = first_row + d - 1
        last_brow = (last // r if last >= 0 else -(-last // r)) + 1
        if first_row // r < last_brow and last_brow > n_brow:
            fail('the diagonal runs past the %d block rows' % n_brow)
        room(yx, d, 'the diagonal')

    @rule('iiiiIIT*I*I*T', 'bsr_tocsr')
    def _(c, n_brow, n_bcol, r, cc, ap, aj, ax, bp, bj, bx):
        nnz = bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
        c.fits(nnz * r * cc)
        room(bp, n_brow * r + 1)
        room(bj, nnz * r * cc)
        room(bx, nnz * r * cc)

    @rule('iiiiII*TT', 'bsr_scale_rows')
    def _(c, n_brow, n_bcol, r, cc, ap, aj, ax, xx):
        bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax, bounded=False)
        room(xx, n_brow * r, 'the scale')

    @rule('iiiiII*TT', 'bsr_scale_columns')
    def _(c, n_brow, n_bcol, r, cc, ap, aj, ax, xx):
        bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
        room(xx, n_bcol * cc, 'the scale')

    @rule('iiii*I*I*T', 'bsr_sort_indices')
    def _(c, n_brow, n_bcol, r, cc, ap, aj, ax):
        bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax, bounded=False)

    @rule('iiiiIIT*I*I*T', 'bsr_transpose')
    def _(c, n_brow, n_bcol, r, cc, ap, aj, ax, bp, bj, bx):
        nnz = bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
        room(bp, n_bcol + 1)
        room(bj, nnz)
        room(bx, nnz * r * cc)

    @rule('iiiiiiIITIIT*I*I*T', 'bsr_matmat')
    def _(c, maxnnz_, n_brow, n_bcol, r, cc, n, ap, aj, ax, bp, bj, bx, cp, cj, cx):
        dims(c, n_brow, n_bcol)
        if r <= 0 or cc <= 0 or n <= 0:
            fail('blocks need positive sizes')
        c.fits(r * cc, r * n, n * cc)
        k = maxnnz(c, n_brow, n_bcol, ap, aj, bp, bj)
        compressed(c, n_brow, None, ap, aj, ax, r * n)
        compressed(c, bp.size - 1, None, bp, bj, bx, n * cc)
        if maxnnz_ < k:
            fail('maxnnz is below the product\'s %d blocks' % k)
        c.fits(maxnnz_ * r * cc)
        room(cp, n_brow + 1)
        room(cj, k)
        room(cx, (maxnnz_ if (r, cc, n) != (1, 1, 1) else k) * r * cc)

    @rule('iiiiIITT*T', 'bsr_matvec')
    def _(c, n_brow, n_bcol, r, cc, ap, aj, ax, xx, yx):
        bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
        room(xx, n_bcol * cc, 'the vector')
        room(yx, n_brow * r)

    @rule('iiiiiIITT*T', 'bsr_matvecs')
    def _(c, n_brow, n_bcol, n_vecs, r, cc, ap, aj, ax, xx, yx):
        bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
        dims(c, n_vecs)
        c.fits(n_bcol * cc * n_vecs, n_brow * r * n_vecs)
        room(xx, n_bcol * cc * n_vecs, 'the vectors')
        room(yx, n_brow * r * n_vecs)

    for op in binops:
        out = 'B' if op in ('ne', 'lt', 'gt', 'le', 'ge') else 'T'

        @rule('iiiiIITIIT*I*I*' + out, 'bsr_%s_bsr' % op)
        def _(c, n_brow, n_bcol, r, cc, ap, aj, ax, bp, bj, bx, cp, cj, cx):
            bsr(c, n_brow, n_bcol, r, cc, ap, aj, ax)
            bsr(c, n_brow, n_bcol, r, cc, bp, bj, bx)
            binop(c, n_brow, n_bcol, ap, aj, ax, bp, bj, bx, cp, cj, cx, r * cc)

    @rule('iiiIIT*I*I*T', 'coo_tocsr')
    def _(c, n_row, n_col, nnz, ai, aj, ax, bp, bj, bx):
        dims(c, n_row, n_col, nnz)
        within(ai, nnz, n_row, 'rows')
        within(aj, nnz, n_col, 'columns')
        within(ax, nnz, None, 'values')
        room(bp, n_row + 1)
        room(bj, nnz)
        room(bx, nnz)

    @rule('iilIIT*Ti', 'coo_todense')
    def _(c, n_row, n_col, nnz, ai, aj, ax, bx, fortran):
        dims(c, n_row, n_col, nnz)
        within(ai, nnz, n_row, 'rows')
        within(aj, nnz, n_col, 'columns')
        within(ax, nnz, None, 'values')
        room(bx, n_row * n_col)

    @rule('lIITT*T', 'coo_matvec')
    def _(c, nnz, ai, aj, ax, xx, yx):
        dims(c, nnz)
        within(ai, nnz, yx.size, 'rows')
        within(aj, nnz, xx.size, 'columns')
        within(ax, nnz, None, 'values')

    @rule('iiiiITT*T', 'dia_matvec')
    def _(c, n_row, n_col, n_diags, length, offsets, diags, xx, yx):
        dims(c, n_row, n_col, n_diags, length)
        c.fits(n_diags * length)
        within(offsets, n_diags, None, 'offsets')
        # n_row + offset and n_col - offset are computed in the index type.
        far = c.lim - max(n_row, n_col)
        if n_diags and (offsets[:n_diags].min() < -far or offsets[:n_diags].max() > far):
            fail('an offset past the index type')
        room(diags, n_diags * length, 'the diagonals')
        room(xx, n_col, 'the vector')
        room(yx, n_row)

    @rule('iII*I', 'cs_graph_components')
    def _(c, n, ap, aj, flag):
        dims(c, n)
        compressed(c, n, n, ap, aj)
        room(flag, n)

    def checked(name, f, spec, check):
        def kernel(*args):
            c = Call(name, spec, args)
            check(c, *c.flat)
            return f(*c.passed)
        kernel.__name__ = kernel.__qualname__ = name
        kernel.__doc__ = getattr(f, '__doc__', None)
        kernel.__module__ = getattr(f, '__module__', None)
        return kernel

    replacements = {}
    for name in dir(st):
        f = getattr(st, name)
        if name.startswith('_') or not callable(f):
            continue
        if name not in rules:
            raise RuntimeError('scipy.sparse kernel %s is not known to the sandbox' % name)
        g = checked(name, f, *rules[name])
        replacements[id(f)] = (f, g)
        setattr(st, name, g)
    _replace_all(replacements)

def _copying(f, at):
    """f called with a copy of its argument at position at (compiled code hands its callbacks
    arrays over work memory it frees when it returns)."""
    np = sys.modules['numpy']

    def g(*args):
        args = list(args)
        args[at] = np.array(args[at])
        return f(*args)
    return g

def _odeint_copies():
    """odeint's C code hands its function (and Dfun) y as an array over its own work memory,
    which it frees when it returns: a y the user's function kept read and wrote freed memory
    afterwards (other arrays' values there). The functions get a copy of y."""
    import inspect
    from scipy.integrate import _odepack_py
    real = _odepack_py.odeint
    signature = inspect.signature(real)

    def odeint(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        given = bound.arguments
        at = 1 if given.get('tfirst', False) else 0
        given['func'] = _copying(given['func'], at)
        if given.get('Dfun') is not None:
            given['Dfun'] = _copying(given['Dfun'], at)
        return real(*bound.args, **bound.kwargs)

    odeint.__doc__, odeint.__module__ = real.__doc__, real.__module__
    odeint.__signature__ = signature
    _replace_everywhere(real, odeint)


def _minpack_copies():
    """MINPACK's drivers (fsolve, leastsq, least_squares with method='lm', root's hybr and lm,
    curve_fit) hand the user's function and Jacobian x as an array over their own work memory,
    freed when they return: an x kept wrote into whatever was laid there (a list's items: any
    memory). The functions get a copy of x. And a diag (the scale of each unknown) shorter than
    x0 was read past its end (the iterate depended on memory the call was never given): it
    holds one number per unknown."""
    import numpy as np
    from scipy.optimize import _minpack

    def driver(name, functions, arity):
        real = getattr(_minpack, name)

        def run(*args, **kwargs):
            args = list(args)
            for i in range(min(functions, len(args))):
                if callable(args[i]):
                    args[i] = _copying(args[i], 0)
            if len(args) == arity and args[-1] is not None:
                diag = np.array(args[-1], dtype=float)
                if diag.ndim != 1 or diag.size != np.asarray(args[functions]).size:
                    raise ValueError('diag must hold one number for each unknown (len(x0))')
                args[-1] = diag
            return real(*args, **kwargs)
        run.__name__ = run.__qualname__ = name
        run.__doc__ = real.__doc__
        return real, run

    pairs = [driver('_hybrd', 1, 11), driver('_hybrj', 2, 10), driver('_lmdif', 1, 11),
             driver('_lmder', 2, 12)]
    _replace_all({id(real): (real, run) for real, run in pairs})


def _cobyla_copies():
    """COBYLA's Fortran routine hands its function x as an array over its own work memory,
    freed when it returns; scipy gives the objective a copy, and each constraint that x: a
    constraint that kept it read and wrote the freed memory afterwards (a list's items laid
    there: any memory). The constraints get a copy of x."""
    from scipy.optimize import _cobyla_py
    real = _cobyla_py._minimize_cobyla

    def copied(c):
        if not isinstance(c, dict) or not callable(c.get('fun')):
            return c
        c = dict(c)
        c['fun'] = _copying(c['fun'], 0)
        return c

    def _minimize_cobyla(fun, x0, args=(), constraints=(), **options):
        if isinstance(constraints, dict):
            constraints = copied(constraints)
        else:
            constraints = [copied(c) for c in constraints]
        return real(fun, x0, args, constraints, **options)

    _minimize_cobyla.__doc__ = real.__doc__
    _replace_everywhere(real, _minimize_cobyla)


def _interpolative_copies():
    """The interpolative decomposition's Fortran routines (interp_decomp, svd, estimate_rank,
    estimate_spectral_norm of a LinearOperator) hand the operator's matvec and rmatvec x as an
    array over their work memory, freed when they return: kept, it read and wrote what was
    laid there. Each function gets a copy of x alone. (f2py counts a callback's arguments by
    its code, which it cannot read in a worker: a function was called with none, a bound
    method with all of the routine's, and these failed with a LinearOperator. The copying
    callable takes them all.)"""
    import inspect
    import numpy as np
    from scipy.linalg import _interpolative_backend as backend

    class Copying:
        __slots__ = ('f',)

        def __init__(self, f):
            self.f = f

        def __call__(self, x, *rest):
            return self.f(np.array(x))

    one = Copying

    for name, real in list(vars(backend).items()):
        if not inspect.isfunction(real) or real.__module__ != backend.__name__:
            continue
        params = list(inspect.signature(real).parameters)
        at = [i for i, p in enumerate(params) if p.startswith('matvec')]
        if not at:
            continue

        def run(*args, _real=real, _at=tuple(at), **kwargs):
            args = [one(a) if i in _at and callable(a) else a for i, a in enumerate(args)]
            return _real(*args, **kwargs)

        run.__name__ = run.__qualname__ = name
        run.__doc__ = real.__doc__
        run.__module__ = real.__module__
        run.__signature__ = inspect.signature(real)
        setattr(backend, name, run)


def _qhull_options():
    """qhull's per-coordinate scaling options (Qbk:n, QBk:n) with both bounds 0 drop the k-th
    coordinate from the input: qhull's facets then had one vertex fewer than scipy reads for
    them, and ConvexHull and Delaunay followed a NULL vertex (SIGSEGV). The options go to
    qhull as given, with those refused (QbB and Qbb, scaling all coordinates or the last one,
    stay), and TI and TO, which name a file for qhull to reopen its input or output on (a
    descriptor closed under the worker: killed). Points added later are checked for NaN as
    the first are."""
    import re
    from scipy.spatial import _qhull

    def check(args, kwargs):
        args = tuple(args)
        for name, at in (('options', 2), ('required_options', 3)):
            args, kwargs = checked_options(args, kwargs, name, at)
        return args, kwargs

    def checked_options(args, kwargs, name, at):
        given = kwargs.get(name) if kwargs and name in kwargs else \
            args[at] if len(args) > at else None
        # (the options by their bytes, as qhull reads them: a bytes subclass's decode() told
        # the check another text)
        options = (bytes(memoryview(given)) if isinstance(given, (bytes, bytearray)) else
                   _exact_text(given))
        if options is not given:
            if kwargs and name in kwargs:
                kwargs = dict(kwargs, **{name: options})
            else:
                args = args[:at] + (options,) + args[at + 1:]
        if isinstance(options, (bytes, str)):
            text = options.decode('latin1') if not isinstance(options, str) else options
            for token in text.split():
                if token.startswith(('TI', 'TO')):
                    raise ValueError('qhull option %r: qhull reads and writes no file in the '
                                     'sandbox (TI and TO name one); points are given as an '
                                     'array' % token)
                if token.startswith('Q') and re.search(r'[bB][0-9]', token[1:]):
                    raise ValueError('qhull option %r: scaling one coordinate (Qbk:n, QBk:n) '
                                     'is not taken in the sandbox (a bound of 0 for both '
                                     'drops the coordinate, which scipy does not expect); '
                                     'QbB scales all coordinates' % token)
        return tuple(args), kwargs

    # (before the object is made: a _Qhull whose __init__ failed crashes as it is freed)
    new_checks[_qhull._Qhull] = check

    # Points added to an incremental hull, triangulation or halfspace intersection were not
    # checked for NaN as the first ones are (qhull followed a NULL facet: SIGSEGV).
    import numpy as np
    real_add = _qhull._Qhull.add_points

    def add_points(self, points, interior_point=None):
        points = np.ascontiguousarray(points, dtype=np.double)
        if not np.isfinite(points).all():
            raise ValueError('Points cannot contain NaN')
        if interior_point is not None:
            interior_point = np.ascontiguousarray(interior_point, dtype=np.double)
            if not np.isfinite(interior_point).all():
                raise ValueError('Points cannot contain NaN')
            return real_add(self, points, interior_point)
        return real_add(self, points)

    add_points.__doc__ = real_add.__doc__
    type_patches[(_qhull._Qhull, 'add_points')] = add_points


def _interpolative_indices():
    """The interpolative decomposition's reconstructions (idd_copycols, idd_reconint,
    idd_reconid, idd_id2svd and their complex idz_ twins) index columns by the column indices
    they are given, unchecked: an index past the matrix read the memory around it
    (reconstruct_skel_matrix: another array read back) or wrote there (reconstruct_interp_matrix:
    another array's values changed), and a rank past the indices read past them. Each takes
    indices within its columns (1-based, as the backend hands them to Fortran): for a copy,
    k of them, k at most their number, each within A's columns; for the others a permutation
    of 1..n with the coefficients' shape (k, n - k) and k the skeleton's columns. A rank given
    to a decomposition (interp_decomp(A, k), svd(A, k)) past the matrix's smaller side had the
    Fortran write past its work arrays (SIGSEGV): it is at most that side."""
    import operator
    import numpy as np
    from scipy.linalg import _interpolative_backend as backend

    def indices(idx, n, k=None):
        idx = np.asarray(idx)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError('column indices must be a 1-D array of integers')
        if k is None and (idx.shape[0] != n or not np.array_equal(np.sort(idx),
                                                                   np.arange(1, n + 1))):
            raise ValueError('column indices must be the interpolative decomposition\'s '
                             'permutation of the %d columns' % n)
        if k is not None and (not 0 <= k <= idx.shape[0] or
                              (k and not (idx[:k].min() >= 1 and idx[:k].max() <= n))):
            raise ValueError('the rank must be at most the number of column indices, and '
                             'those used within the matrix\'s %d columns' % n)
        return idx

    def coefficients(proj, n, krank):
        proj = np.asarray(proj)
        if proj.ndim != 2 or proj.shape != (krank, n - krank):
            raise ValueError('interpolation coefficients must have the shape (k, n - k) of '
                             'the decomposition: (%d, %d)' % (krank, n - krank))
        return proj

    def matrix(A, what='matrix'):
        A = np.asarray(A)
        if A.ndim != 2:
            raise ValueError('the %s must be 2-D' % what)
        return A

    def permutation(idx):
        n = np.asarray(idx).shape[0] if np.ndim(idx) == 1 else -1
        return indices(idx, n), n

    def copycols(real):
        def run(A, k, idx):
            A = matrix(A)
            k = operator.index(k)
            return real(A, k, indices(idx, A.shape[1], k))
        return run

    def reconint(real):
        def run(idx, proj):
            idx, n = permutation(idx)
            proj = np.asarray(proj)
            return real(idx, coefficients(proj, n, proj.shape[0] if proj.ndim == 2 else -1))
        return run

    def with_skeleton(real):
        def run(B, idx, proj):
            B = matrix(B, 'skeleton matrix')
            idx, n = permutation(idx)
            return real(B, idx, coefficients(proj, n, B.shape[1]))
        return run

    def ranked(real):
        # (A, k) or (m, n, ..., k): the rank at most the matrix's smaller side (past it the
        # Fortran wrote past its work arrays: SIGSEGV)
        def run(*args):
            if len(args) == 2:
                A = matrix(args[0])
                m, n = A.shape
                args = (A,) + args[1:]
            else:
                m, n = operator.index(args[0]), operator.index(args[1])
                args = (m, n) + args[2:]
            k = operator.index(args[-1])
            if not 1 <= k <= min(m, n):
                raise ValueError('the rank must be from 1 to the smaller side of the '
                                 '%d x %d matrix, not %d' % (m, n, k))
            return real(*(args[:-1] + (k,)))
        return run

    for wrap, names in ((ranked, ('iddr_id', 'iddr_aid', 'iddr_svd', 'iddr_asvd', 'iddr_rid',
                                  'iddr_rsvd', 'iddr_aidi', 'idzr_id', 'idzr_aid', 'idzr_svd',
                                  'idzr_asvd', 'idzr_rid', 'idzr_rsvd', 'idzr_aidi')),
                        (copycols, ('idd_copycols', 'idz_copycols')),
                        (reconint, ('idd_reconint', 'idz_reconint')),
                        (with_skeleton, ('idd_reconid', 'idz_reconid',
                                         'idd_id2svd', 'idz_id2svd'))):
        for name in names:
            real = getattr(backend, name)
            run = wrap(real)
            run.__name__ = run.__qualname__ = name
            run.__doc__ = real.__doc__
            run.__module__ = real.__module__
            setattr(backend, name, run)


def _written_outputs():
    """Compiled routines that write where they were told without asking whether they may:
    scipy.ndimage.label wrote its labels through a read-only output array (an immutable
    bytes object changed), and scipy.linalg.eig_banded(select='v', max_ev=k) sized its
    eigenvector array by k while LAPACK wrote a column for every eigenvalue it found in the
    range (another array overwritten). label refuses a read-only output, as the other
    ndimage functions do; eig_banded's max_ev, a size hint only, is its own (every row)."""
    import numpy as np
    from scipy import linalg, ndimage

    label_real, banded_real = ndimage.label, linalg.eig_banded

    def label(input, structure=None, output=None):
        if isinstance(output, np.ndarray) and not np.asarray(output).flags.writeable:
            raise ValueError('output array is read-only.')
        return label_real(input, structure, output)

    def eig_banded(a_band, lower=False, eigvals_only=False, overwrite_a_band=False,
                   select='a', select_range=None, max_ev=0, check_finite=True):
        return banded_real(a_band, lower=lower, eigvals_only=eigvals_only,
                           overwrite_a_band=overwrite_a_band, select=select,
                           select_range=select_range, max_ev=0, check_finite=check_finite)

    for real, new in ((label_real, label), (banded_real, eig_banded)):
        new.__doc__ = real.__doc__
        new.__module__ = real.__module__
        _replace_everywhere(real, new)


def _pseudo_diff_caches():
    """scipy.fftpack's pseudo-differential operators (diff, shift, hilbert...) take the kernel
    from a _cache dict the caller may pass: a cached kernel of length 0 for an empty input had
    the compiled convolution's loop bound wrap and write over the heap. The cache is theirs
    alone: a _cache argument is not taken."""
    import inspect
    from scipy.fftpack import _pseudo_diffs as pd_

    swaps = {}
    for name, real in list(vars(pd_).items()):
        if not inspect.isfunction(real) or '_cache' not in real.__code__.co_varnames:
            continue
        sig = inspect.signature(real)
        params = [p for p in sig.parameters.values() if p.name != '_cache']

        def run(*args, _real=real, _sig=inspect.Signature(params), **kwargs):
            bound = _sig.bind(*args, **kwargs)
            return _real(**bound.arguments)

        run.__name__ = run.__qualname__ = name
        run.__doc__ = real.__doc__
        run.__module__ = 'scipy.fftpack'
        run.__signature__ = inspect.Signature(params)
        swaps[id(real)] = (real, run)
    _replace_all(swaps)


def _qr_update_checks():
    """scipy.linalg's QR updates (qr_delete, qr_insert, qr_update) take Q of (M, N) with R of
    (N, N) as an economic decomposition however M compares with N: with M < N, qr_delete's
    rotations ran over rows past Q (written in place with overwrite_qr: another array's shape
    and items changed), and k + p was summed in C ints. They take an economic Q at least as
    tall as it is wide, k and p within a bound, and their arguments as plain values read once
    (an array's __array__, a flag's __bool__ or an index's __index__ ran the code's between
    the compiled checks and the loops)."""
    import operator
    import numpy as np
    from scipy.linalg import _decomp_update as du

    bound = 1 << 30

    def arrays(Q, R):
        Q, R = np.asarray(Q), np.asarray(R)
        if (Q.ndim == 2 and R.ndim == 2 and Q.shape[0] != Q.shape[1]
                and Q.shape[0] < Q.shape[1]):
            raise ValueError('an economic Q of shape (M, N) must have M >= N, found %s'
                             % (Q.shape,))
        return Q, R

    def where(k, which):
        k = operator.index(k)
        if type(which) is not str:
            raise TypeError("'which' must be 'row' or 'col'")
        if not -bound < k < bound:
            raise ValueError("'k' is out of bounds")
        return k

    def qr_delete(Q, R, k, p=1, which='row', overwrite_qr=False, check_finite=True):
        p = operator.index(p)
        if not 0 < p < bound:
            raise ValueError("'p' is out of range")
        k = where(k, which)
        Q, R = arrays(Q, R)
        return real_delete(Q, R, k, p, which, bool(overwrite_qr), bool(check_finite))

    def qr_insert(Q, R, u, k, which='row', rcond=None, overwrite_qru=False,
                  check_finite=True):
        k = where(k, which)
        rcond = None if rcond is None else float(rcond)
        Q, R = arrays(Q, R)
        return real_insert(Q, R, np.asarray(u), k, which, rcond, bool(overwrite_qru),
                           bool(check_finite))

    def qr_update(Q, R, u, v, overwrite_qruv=False, check_finite=True):
        Q, R = arrays(Q, R)
        return real_update(Q, R, np.asarray(u), np.asarray(v), bool(overwrite_qruv),
                           bool(check_finite))

    real_delete, real_insert, real_update = du.qr_delete, du.qr_insert, du.qr_update
    swaps = {}
    for real, new in ((real_delete, qr_delete), (real_insert, qr_insert),
                      (real_update, qr_update)):
        new.__doc__ = real.__doc__
        new.__module__ = 'scipy.linalg'
        swaps[id(real)] = (real, new)
    _replace_all(swaps)


def _lil_checks():
    """A LIL matrix's rows and data are lists the user can replace: tocsr() sized its arrays by
    the rows and copied the data lists into them (data longer than its rows: written past the
    values, contents of the user's choice), and copied each row's length into an array sized by
    the shape. Those copies check that what they copy fits."""
    from scipy.sparse import _csparsetools
    flatten, lengths = _csparsetools.lil_flatten_to_array, _csparsetools.lil_get_lengths

    import numpy as np

    def arrays(x, y):
        # numpy's own arrays over the same memory (a subclass answers its own len, shape and
        # iteration); anything else is refused as the compiled functions refuse it.
        if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
            raise TypeError('the LIL functions take numpy arrays')
        x, y = np.asarray(x), np.asarray(y)
        if x.ndim != 1 or y.ndim != 1:
            raise ValueError('the LIL functions take 1-dimensional arrays')
        return x, y

    def lil_flatten_to_array(x, y):
        x, y = arrays(x, y)
        if x.dtype != object:
            return flatten(x, y)
        # Each row copied first: an item's conversion (its __index__ or __float__) replacing a
        # later row would have it read as it is then.
        rows = np.empty(x.shape[0], dtype=object)
        total = 0
        for i, row in enumerate(x.tolist()):
            if type(row) is not list:
                raise TypeError('Expected list, got %s' % type(row).__name__)
            rows[i] = row = list(row)
            total += len(row)
        if total > y.shape[0]:
            raise ValueError('the LIL matrix has more entries than its rows say')
        return flatten(rows, y)

    def lil_get_lengths(input, output):
        input, output = arrays(input, output)
        if input.shape[0] > output.shape[0]:
            raise ValueError('the LIL matrix has more rows than its shape says')
        return lengths(input, output)

    pairs = [(lil_flatten_to_array, flatten), (lil_get_lengths, lengths)]

    # A row's column numbers are searched by compiled bisection with bounds checks off: the
    # length is read once and each probed item converted through its __index__, the code's
    # when the item is an object of its own: one that shortened the row had the next probe read
    # a freed item past its end. The rows a call searches are made lists of plain ints first
    # (the conversions run here, as Python code), with the call's own numbers converted before
    # (the compiled call would convert them after: an __index__ there could add to a row).
    import operator

    def plain_rows(rows, M, ks):
        rows = np.asarray(rows)
        n = rows.shape[0] if rows.ndim == 1 and rows.dtype == object else 0
        for k in ks:
            k = k + M if k < 0 else k
            row = rows[k] if 0 <= k < n else None
            if type(row) is list and any(type(v) is not int for v in row):
                row[:] = [operator.index(v) for v in list(row)]

    def numbers(*values):
        return [operator.index(v) for v in values]

    def index_rows(idx):
        return np.unique(np.asarray(idx)).tolist() if isinstance(idx, np.ndarray) else []

    def get1_(real):
        def lil_get1(M, N, rows, datas, i, j):
            M, N, i, j = numbers(M, N, i, j)
            plain_rows(rows, M, (i,))
            return real(M, N, rows, datas, i, j)
        return lil_get1

    def insert_(real):
        def lil_insert(M, N, rows, datas, i, j, x):
            M, N, i, j = numbers(M, N, i, j)
            plain_rows(rows, M, (i,))
            return real(M, N, rows, datas, i, j, x)
        return lil_insert

    def fancy_get_(real):
        def lil_fancy_get(M, N, rows, datas, new_rows, new_datas, i_idx, j_idx):
            M, N = numbers(M, N)
            plain_rows(rows, M, index_rows(i_idx))
            return real(M, N, rows, datas, new_rows, new_datas, i_idx, j_idx)
        return lil_fancy_get

    def fancy_set_(real):
        def lil_fancy_set(M, N, rows, data, i_idx, j_idx, values):
            M, N = numbers(M, N)
            # (the values are read at each index's place, with bounds checks off)
            if (isinstance(values, np.ndarray) and isinstance(i_idx, np.ndarray) and
                    np.shape(values) != np.shape(i_idx)):
                raise ValueError('the values and the indices differ in shape')
            plain_rows(rows, M, index_rows(i_idx))
            return real(M, N, rows, data, i_idx, j_idx, values)
        return lil_fancy_set

    def row_ranges_(real):
        def lil_get_row_ranges(M, N, rows, datas, new_rows, new_datas, irows, j_start,
                               j_stop, j_stride, nj):
            M, N, j_start, j_stop, j_stride, nj = numbers(M, N, j_start, j_stop, j_stride, nj)
            irows = numbers(*irows)
            plain_rows(rows, M, irows)
            return real(M, N, rows, datas, new_rows, new_datas, irows, j_start, j_stop,
                        j_stride, nj)
        return lil_get_row_ranges

    makers = {'lil_get1': get1_, 'lil_insert': insert_, 'lil_fancy_get': fancy_get_,
              '_lil_fancy_get_': fancy_get_, 'lil_fancy_set': fancy_set_,
              '_lil_fancy_set_': fancy_set_, 'lil_get_row_ranges': row_ranges_}
    for name in dir(_csparsetools):
        maker = makers.get(name) or next((m for p, m in makers.items()
                                          if p.startswith('_') and name.startswith(p)), None)
        if maker is not None:
            real = getattr(_csparsetools, name)
            f = maker(real)
            f.__name__ = f.__qualname__ = name
            pairs.append((f, real))
    for f, real in pairs:
        f.__doc__ = real.__doc__
    _replace_all({id(real): (real, f) for f, real in pairs})


def _checked_sparse(m):
    """m, when it is a scipy sparse matrix whose arrays compiled code reads as they are (CSR,
    CSC, BSR, COO), checked whole: index pointers rising from 0 within the indices and values,
    indices within the shape. What decides is the object's type, not what its attributes
    answer: a subclass is first made its scipy class, through its own methods, as scipy would;
    then the arrays and shape are read once, as copies in numpy's own arrays (a subclass answers
    its own len, size and shape), and a new matrix of the scipy class is made of them, checked, and
    passed on: none of the object's own attributes (its format, its methods set on it) is
    there to answer otherwise at the next read. Any other sparse matrix (DIA, LIL, DOK, a
    subclass of one, an object passing for one) is made CSR first, as the consumers would make
    it (through its own tocsr: what that answers is then read and checked like the rest).
    Anything else as it is."""
    import operator
    exact = _sparse_classes()
    cls = next((c for c in type(m).__mro__ if c in exact), None)
    if cls is None:
        sp = sys.modules['scipy.sparse']
        if not sp.issparse(m) and not any(isinstance(m, c) for c in exact):
            return m
        arrays = sys.modules.get('scipy.sparse._arrays')
        cls = sp.csr_array if arrays is not None and isinstance(m, arrays._sparray) \
            else sp.csr_matrix
    if type(m) is not cls:
        m = cls(m)
    if type(m) is not cls:
        raise TypeError('the sparse matrix did not become a %s' % cls.__name__)
    np = sys.modules['numpy']
    fmt = cls.format
    d = vars(m)
    names = ('data', 'row', 'col') if fmt == 'coo' else ('data', 'indices', 'indptr')
    # (copies: the consumer converts its other arguments after this check, which can run the
    # code's methods, and an edit of the arrays then was read unchecked)
    arrays = []
    for k in names:
        a = d.get(k)
        if not isinstance(a, np.ndarray):
            raise TypeError('the sparse matrix\'s %s is not a numpy array' % k)
        arrays.append(np.array(a))
    shape = d.get('_shape')
    if type(shape) is not tuple or len(shape) != 2:
        raise TypeError('the sparse matrix\'s shape is not two numbers')
    shape = (operator.index(shape[0]), operator.index(shape[1]))
    if fmt == 'coo':
        m = cls((arrays[0], (arrays[1], arrays[2])), shape=shape, copy=False)
        if m.nnz and (m.row.min() < 0 or m.col.min() < 0):
            raise ValueError('negative index in the sparse matrix')
        return m
    m = cls(tuple(arrays), shape=shape, copy=False)
    m.check_format(full_check=True)
    block = m.blocksize[0] * m.blocksize[1] if fmt == 'bsr' else 1
    if m.data.size < m.indptr[-1] * block:
        raise ValueError('the sparse matrix has fewer values than its index pointers say')
    # Entries given twice are summed, as scipy's own operations take them: a tree's sparse
    # splitter moved a sample once for each of its entries in a column and wrote past its
    # buffers (a count written at any address).
    if fmt in ('csr', 'csc') and not m.has_canonical_format:
        m.sum_duplicates()
    return m


def _sparse_classes(_found=[]):
    if not _found:
        sp = sys.modules['scipy.sparse']
        _found.append(frozenset(getattr(sp, f + kind) for f in ('csr', 'csc', 'bsr', 'coo')
                                for kind in ('_matrix', '_array') if hasattr(sp, f + kind)))
    return _found[0]


def _sparse_consumers():
    """Compiled code that reads a sparse matrix's arrays itself, not through the kernels:
    csgraph's algorithms (minimum_spanning_tree, maximum_bipartite_matching: SIGSEGV on an
    index edited after the matrix was made) and SuperLU (splu, spilu and spsolve with
    permc_spec='NATURAL' read and wrote at row indices past the matrix). Each checks the
    matrix it is given first (_checked_sparse) and works on what was checked, and takes the
    code's number-like objects as the ints they convert to."""
    import operator
    import numpy as np
    from scipy.sparse import csgraph, linalg as sla

    def plain(a):
        # An object of the code's that converts to an int (a vertex, a count) converts once,
        # here: scipy checked it with its comparisons (0 <= source < n), then the compiled
        # kernel took its __index__, another number (maximum_flow wrote levels[20] = 0 for a
        # graph of 7 vertices, into another array).
        t = type(a)
        if t in (int, bool, float, complex, str, bytes) or a is None or \
                isinstance(a, np.ndarray) or not hasattr(t, '__index__'):
            return a
        return operator.index(a)

    def checked(f):
        def g(A, *args, **kwargs):
            args = [plain(a) for a in args]
            kwargs = {k: plain(v) for k, v in kwargs.items()}
            return f(_checked_sparse(A), *args, **kwargs)
        g.__name__, g.__qualname__ = f.__name__, f.__qualname__
        g.__doc__, g.__module__ = f.__doc__, f.__module__
        return g

    replacements = {}
    for module, names in ((csgraph, csgraph.__all__),
                          (sla, ('splu', 'spilu', 'spsolve', 'factorized', 'spsolve_triangular',
                                 'use_solver'))):
        for name in names:
            f = getattr(module, name, None)
            if name == 'use_solver' or not callable(f) or isinstance(f, type):
                continue
            replacements[id(f)] = (f, checked(f))
    _replace_all(replacements)


def _hist_binning():
    """Histogram gradient boosting bins X through compiled code that takes one list of
    thresholds a column and reads the list's items for as many columns as X has, unchecked: a
    fitted model's _bin_mapper.bin_thresholds_ (a plain list, the user's to set) shorter than
    X's columns had the words past its items taken for arrays (a fake array read any address).
    It now takes a list of float64 copies, one a column, and an output of X's shape."""
    import operator
    import numpy as np
    from sklearn.ensemble._hist_gradient_boosting import _binning

    real = _binning._map_to_bins

    def _map_to_bins(data, binning_thresholds, missing_values_bin_idx, n_threads, binned):
        # the numbers first (their conversions run the code's methods), then new array
        # objects whose shape no code holds
        missing_values_bin_idx = operator.index(missing_values_bin_idx)
        n_threads = operator.index(n_threads)
        data = np.ndarray.view(np.asarray(data))
        if data.ndim != 2:
            raise ValueError('the data to bin should be 2-dimensional')
        thresholds = [np.array(t, dtype=np.float64).reshape(-1) for t in binning_thresholds]
        if len(thresholds) != data.shape[1]:
            raise ValueError('binning needs one list of thresholds for each of the %d columns '
                             '(%d given)' % (data.shape[1], len(thresholds)))
        if type(binned) is not np.ndarray or binned.shape != data.shape or \
                binned.dtype != np.uint8 or not binned.flags.f_contiguous or \
                not binned.flags.writeable:
            raise ValueError('the binned output should be a Fortran-ordered uint8 array of '
                             'the data\'s shape')
        return real(data, thresholds, missing_values_bin_idx, n_threads,
                    np.ndarray.view(binned))

    _map_to_bins.__doc__ = real.__doc__
    _map_to_bins.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, _map_to_bins)


# Library classes the code may not subclass (pydata.c clears their base flag after prepare()).
final_classes = []


def _final_dates():
    """pandas' compiled date and time classes call type(self)(...) on themselves and cast what
    it answers to their own compiled type unchecked (Timestamp's subtraction of a datetime; a
    DateOffset's _apply_array casts Timedelta(self._offset * self.n), NaT for a NaT offset):
    a subclass of the code's whose constructor answered a bytes object, or whose _offset
    answered NaT, had pandas call through a table read from the code's bytes (a call of any
    address). Timestamp, Timedelta, Period, NaT, Interval and every date offset are not
    subclassed in the sandbox (their own subclasses, and their instances, work as before)."""
    from pandas._libs import interval
    from pandas._libs.tslibs import nattype, offsets, period, timedeltas, timestamps

    todo = [timestamps._Timestamp, timedeltas._Timedelta, period._Period, nattype._NaT,
            interval.Interval, offsets.BaseOffset]
    while todo:
        c = todo.pop()
        if c not in final_classes:
            final_classes.append(c)
            todo += type.__subclasses__(c)
            _methods_self_checked(c)
    _timestamp_arguments(offsets.BaseOffset, timestamps._Timestamp)


def _timestamp_arguments(base, ts_class):
    """A date offset's is_month_start(ts) and its kin take a compiled Timestamp, or None, which
    they then used as one (a table read at a fixed distance from None: SIGSEGV). They take a
    Timestamp only."""
    for name in ('is_month_start', 'is_month_end', 'is_quarter_start', 'is_quarter_end',
                 'is_year_start', 'is_year_end'):
        real = vars(base).get(name)
        if real is None:
            continue

        def checked(self, ts, _real=real):
            if not issubclass(type(ts), ts_class):
                raise TypeError("Argument 'ts' has incorrect type (expected Timestamp, got %s)"
                                % type(ts).__name__)
            return _real(self, ts)

        checked.__name__ = name
        checked.__qualname__ = base.__name__ + '.' + name
        checked.__doc__ = real.__doc__
        type_patches[(base, name)] = checked


def _methods_self_checked(c):
    """The methods of c written in Python and compiled (pandas' Timedelta arithmetic and
    Timestamp's round, a compiled class's decorated methods) are functions that never check
    their first argument, then use it as c's compiled object: pd.Timedelta.__add__(x, td)
    with a bytearray subclass as x called through a table in its bytes (V84a). They take an
    object of c's only."""
    for name, f in list(vars(c).items()):
        if not type(f).__name__.endswith('cython_function_or_method'):
            continue
        if c.__flags__ & (1 << 8):  # (Py_TPFLAGS_IMMUTABLETYPE: a compiled class)
            type_patches[(c, name)] = _self_checked(c, name, f)
        else:
            type.__setattr__(c, name, _self_checked(c, name, f))


def _bglu_methods():
    """scipy.optimize's revised simplex keeps its LU factors in a compiled class whose
    methods are compiled functions of its dict, unchecked as pandas' are."""
    from scipy.optimize import _bglu_dense
    for c in (_bglu_dense.LU, _bglu_dense.BGLU):
        _methods_self_checked(c)


def _self_checked(owner, name, f):
    """f, a function of owner's dict, taking an object of owner's (a class of it, for
    __new__) as its first argument only."""
    def checked(self, *args, **kwargs):
        # (type(self), never self.__class__, which a class of the code's answers as it likes)
        if not (issubclass(type(self), type) and issubclass(self, owner) if name == '__new__'
                else issubclass(type(self), owner)):
            raise TypeError("descriptor '%s' of '%s' objects needs a '%s' object, not '%s'"
                            % (name, owner.__name__, owner.__name__, type(self).__name__))
        return f(self, *args, **kwargs)

    checked.__name__ = name
    checked.__qualname__ = getattr(f, '__qualname__', name)
    checked.__doc__ = getattr(f, '__doc__', None)
    checked.__module__ = getattr(f, '__module__', None)
    if name == '__new__':
        return staticmethod(checked)
    return checked


# The class of pandas' cached properties (pydata.c checks the cache each one reads).
cached_property_class = None


def _cached_properties():
    """pandas' cached properties (Index.is_unique, _engine, inferred_type...) read the object's
    _cache with PyDict_Contains, which does not check that it is a dict: an Index whose _cache
    the code set to a bytearray had the bytearray read as a dict (a table of the code's, a key
    at an address of its choosing, whose __eq__ was then called with a forged object). pydata.c
    reads the cache itself and refuses one that is not a dict."""
    global cached_property_class
    from pandas._libs import properties
    cached_property_class = properties.CachedProperty


def _final_metrics():
    """scikit-learn's distance metrics check the data's features against their own vectors
    (Mahalanobis' VI, Minkowski's w, SEuclidean's V) only in _validate_data, a Python method
    a subclass of the code's could answer for: the compiled distances then wrote past
    Mahalanobis' scratch vector and read past w. The metric classes are not subclassed in the
    sandbox (their instances, from DistanceMetric.get_metric, work as before)."""
    from sklearn.metrics import _dist_metrics as dm
    roots = tuple(getattr(dm, n) for n in ('DistanceMetric', 'DistanceMetric32')
                  if hasattr(dm, n))
    for name in dir(dm):
        c = getattr(dm, name)
        if isinstance(c, type) and issubclass(c, roots):
            final_classes.append(c)
    # A metric initialised again (type(m).__init__(m, VI=...)) took new vectors under the trees
    # built with it, which go on computing the distances of their own features with them (a
    # 1-value scratch vector written with 2000): a metric is initialised when it is made only.

    def __init__(self, *args, **kwargs):
        raise TypeError('a distance metric is initialised when it is made: '
                        'DistanceMetric.get_metric(...) makes another')

    for name in dir(dm):
        c = getattr(dm, name)
        if isinstance(c, type) and issubclass(c, roots) and '__init__' in vars(c):
            type_patches[(c, '__init__')] = __init__


def _gb_sample_mask():
    """Gradient boosting's subsampling mask is drawn by compiled code that reads as many
    uniform draws as there are samples from what random_state.uniform answers, unchecked: a
    random state of the code's (GradientBoosting's _fit_stages takes one as it is) answered a
    short array, and the words past it were read (SIGSEGV for a large count). It takes numpy's
    own RandomState (check_random_state's: an object only passing for one is refused) and
    counts of 0 <= in bag <= samples."""
    import operator
    from sklearn.ensemble import _gradient_boosting
    from sklearn.utils import check_random_state

    real = _gradient_boosting._random_sample_mask

    def _random_sample_mask(n_total_samples, n_total_in_bag, random_state):
        n, k = operator.index(n_total_samples), operator.index(n_total_in_bag)
        random_state = check_random_state(random_state)
        if not 0 <= k <= n:
            raise ValueError('the samples in the bag should be between 0 and the %d samples'
                             % n)
        return real(n, k, random_state)

    _random_sample_mask.__doc__ = real.__doc__
    _random_sample_mask.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, _random_sample_mask)


def _agglomerative_connectivity():
    """Agglomerative clustering (ward_tree, linkage_tree, AgglomerativeClustering) takes a
    connectivity graph of the code's, checks its shape, then adds it to its transpose by the
    object's own __add__ and keeps a LIL result as it is (its rows, its own tocsr and tocoo):
    compiled code then read and wrote moments, parents and union-find entries at any node
    number the rows named (SIGSEGV). The graph is made a checked scipy matrix of copies first
    (a dense one CSR), so every later step is scipy's on what was checked."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.cluster import _agglomerative

    real = _agglomerative._fix_connectivity

    def _fix_connectivity(X, connectivity, affinity):
        checked = _checked_sparse(connectivity)
        if checked is connectivity:
            checked = sp.csr_matrix(np.array(connectivity, dtype=np.float64))
        return real(X, checked, affinity)

    _fix_connectivity.__doc__ = real.__doc__
    _fix_connectivity.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, _fix_connectivity)


def _feature_hashing():
    """FeatureHasher checks its n_features when it is fitted; transform, which needs no fit,
    handed it to compiled code as it was, which took each hash modulo it: 0 divided by zero
    (SIGFPE). The compiled transform now takes a number of features of 1 or more only."""
    import operator
    from sklearn.feature_extraction import _hashing_fast

    real = _hashing_fast.transform

    def transform(raw_X, n_features, dtype, alternate_sign=True, seed=0):
        n_features = operator.index(n_features)
        if n_features < 1:
            raise ValueError('n_features must be at least 1, not %d' % n_features)
        return real(raw_X, n_features, dtype, alternate_sign, seed)

    transform.__doc__ = real.__doc__
    transform.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, transform)


def _sklearn_sparse_inputs():
    """scikit-learn's compiled estimators (coordinate descent, SGD, liblinear and libsvm
    fitting, pairwise distances, trees) read a sparse input's arrays as they are, after
    check_array made it the format they take: that step now checks the matrix whole
    (_checked_sparse), so an index edited after the matrix was made is refused there."""
    from sklearn.utils import validation
    real = validation._ensure_sparse_format

    def _ensure_sparse_format(spmatrix, *args, **kwargs):
        return _checked_sparse(real(_checked_sparse(spmatrix), *args, **kwargs))

    _ensure_sparse_format.__doc__ = real.__doc__
    _ensure_sparse_format.__module__ = real.__module__
    _replace_everywhere(real, _ensure_sparse_format)


def _sklearn_sgd():
    """SGD's compiled fitter (_plain_sgd) reads and writes weights[i] for each feature index of
    its dataset and validation_mask[i] for each sample, with no bounds checks: coef_ (an
    instance attribute, the user's to set) shorter than X's features wrote chosen values past
    it (partial_fit: a full escape). The datasets are made by make_dataset from exact arrays
    (private copies of a sparse X's indices), and remember their samples and features;
    _plain_sgd takes only such a dataset, with weights of exactly its features and a
    validation mask of exactly its samples, and works on the converted arrays; so do SAG and
    SAGA (sag64, sag32: warm-started weights and gradient memory), with the counts given
    being the dataset's."""
    import operator
    import weakref
    import numpy as np
    import scipy.sparse as sp
    from sklearn.linear_model import _base, _sag_fast, _sgd_fast
    from sklearn.utils import _seq_dataset, check_random_state
    make_dataset_real, plain_sgd = _base.make_dataset, _sgd_fast._plain_sgd
    made = {}  # {id(dataset): (weakref to it, samples, features)}

    def dataset_class(base):
        return type(base.__name__, (base,), {'__slots__': ('__weakref__',),
                                             '__module__': base.__module__,
                                             '__doc__': base.__doc__})

    classes = {(kind, bits): dataset_class(getattr(_seq_dataset, kind + 'Dataset' + bits))
               for kind in ('CSR', 'Array') for bits in ('32', '64')}

    def make_dataset(X, y, sample_weight, random_state=None):
        rng = check_random_state(random_state)
        seed = rng.randint(1, np.iinfo(np.int32).max)
        bits = '32' if X.dtype == np.float32 else '64'
        y = np.asarray(y)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)
        if sp.issparse(X):
            X = _checked_sparse(X)
            if X.format != 'csr':
                X = _checked_sparse(X.tocsr())
            n, features = X.shape
            X_data, X_indptr, X_indices = X.data, X.indptr.copy(), X.indices.copy()
        else:
            X = np.ascontiguousarray(X)
            if X.ndim != 2:
                raise ValueError('make_dataset takes a 2-dimensional X')
            n, features = X.shape
        for a in (y, sample_weight):
            if a is not None and (a.ndim != 1 or a.shape[0] != n):
                raise ValueError('y and sample_weight need one value for each of the %d '
                                 'samples of X' % n)
        if sp.issparse(X):
            dataset = classes['CSR', bits](X_data, X_indptr, X_indices, y, sample_weight,
                                           seed=seed)
            intercept_decay = _base.SPARSE_INTERCEPT_DECAY
        else:
            dataset = classes['Array', bits](X, y, sample_weight, seed=seed)
            intercept_decay = 1.0
        key = id(dataset)
        made[key] = (weakref.ref(dataset, lambda r: made.pop(key, None)), n, features)
        return dataset, intercept_decay

    names = ('weights', 'intercept', 'average_weights', 'average_intercept', 'loss',
             'penalty_type', 'alpha', 'C', 'l1_ratio', 'dataset', 'validation_mask',
             'early_stopping', 'validation_score_cb', 'n_iter_no_change', 'max_iter', 'tol',
             'fit_intercept', 'verbose', 'shuffle', 'seed', 'weight_pos', 'weight_neg',
             'learning_rate', 'eta0', 'power_t', 'one_class', 't', 'intercept_decay',
             'average')

    def bound(f, names, args, kwargs):
        # {name: value} of a call, and the dataset's samples and features
        kwargs = _plain_names(kwargs)  # (names by their characters)
        if len(args) > len(names):
            raise TypeError('%s takes at most %d arguments' % (f, len(names)))
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in given:
                raise TypeError('%s: unexpected or repeated argument %r' % (f, k))
            given[k] = v
        dataset = given.get('dataset')
        entry = made.get(id(dataset))
        if entry is None or entry[0]() is not dataset:
            raise ValueError('%s takes a dataset made by make_dataset' % f)
        return given, entry[1], entry[2]

    def passed(real, f, names, given):
        # Passed on positionally up to the last given, then by name.
        last = max(names.index(k) for k in given)
        positional = [given.pop(k) for k in names[:last + 1] if k in given]
        if len(positional) != last + 1:
            raise TypeError('%s: missing arguments' % f)
        return real(*positional, **given)

    def _plain_sgd(*args, **kwargs):
        given, n, features = bound('_plain_sgd', names, args, kwargs)
        for name, size in (('weights', features), ('average_weights', features),
                           ('validation_mask', n)):
            a = given.get(name)
            if a is None and name != 'weights':
                continue
            if not isinstance(a, np.ndarray):
                raise TypeError('_plain_sgd takes %s as a numpy array' % name)
            a = given[name] = np.asarray(a)
            if a.ndim != 1 or a.shape[0] != size:
                raise ValueError('_plain_sgd: %s has %s values, the dataset has %d %s' % (
                    name, a.shape, size, 'samples' if name == 'validation_mask' else
                    'features'))
        return passed(plain_sgd, '_plain_sgd', names, given)

    # SAG and SAGA (Ridge, LogisticRegression): the weights, gradients and memory sized by the
    # dataset's features, samples and the classes, as the counts given say.
    sag_names = ('dataset', 'weights_array', 'intercept_array', 'n_samples', 'n_features',
                 'n_classes', 'tol', 'max_iter', 'loss_function', 'step_size', 'alpha', 'beta',
                 'sum_gradient_init', 'gradient_memory_init', 'seen_init', 'num_seen',
                 'fit_intercept', 'intercept_sum_gradient_init', 'intercept_decay', 'saga',
                 'verbose')

    def sag_checked(real):
        f = real.__name__

        def sag(*args, **kwargs):
            given, n, features = bound(f, sag_names, args, kwargs)
            counts = {}
            for name in ('n_samples', 'n_features', 'n_classes'):
                counts[name] = given[name] = operator.index(given[name])
            classes = counts['n_classes']
            if counts['n_samples'] != n or counts['n_features'] != features or classes < 1:
                raise ValueError('%s: the counts given are not the dataset\'s (%d samples, '
                                 '%d features)' % (f, n, features))
            for name, shape in (('weights_array', (features, classes)),
                                ('intercept_array', (classes,)),
                                ('sum_gradient_init', (features, classes)),
                                ('gradient_memory_init', (n, classes)),
                                ('seen_init', (n,)),
                                ('intercept_sum_gradient_init', (classes,))):
                a = given.get(name)
                if not isinstance(a, np.ndarray):
                    raise TypeError('%s takes %s as a numpy array' % (f, name))
                a = given[name] = np.asarray(a)
                if a.shape != shape:
                    raise ValueError('%s: %s has the shape %s, not %s' % (f, name, a.shape,
                                                                         shape))
            return passed(real, f, sag_names, given)
        sag.__name__ = sag.__qualname__ = f
        sag.__doc__, sag.__module__ = real.__doc__, getattr(real, '__module__', None)
        return sag

    make_dataset.__doc__, make_dataset.__module__ = make_dataset_real.__doc__, \
        make_dataset_real.__module__
    _plain_sgd.__doc__ = plain_sgd.__doc__
    replacements = {id(make_dataset_real): (make_dataset_real, make_dataset),
                    id(plain_sgd): (plain_sgd, _plain_sgd)}
    for real in (_sag_fast.sag64, _sag_fast.sag32):
        replacements[id(real)] = (real, sag_checked(real))
    _replace_all(replacements)


def _sklearn_coordinate_descent():
    """Coordinate descent's compiled solvers read and write w[i] for each feature of X (and
    the Gram matrix's, the index pointers' and the means' entries for each feature, y's for
    each sample) with no bounds checks: with warm_start, coef_ (an instance attribute, the
    user's to set) shorter than X's features was written past (SIGSEGV). Each solver takes
    numpy's own arrays of sizes consistent with each other, and works on those: new array
    objects over the same memory, whose shape no code of the call holds (the solver converts
    its other arguments after the check, alpha by its __float__, which set X.shape in place:
    w was written past), and copies of the index arrays (whose values the same conversions
    could change)."""
    import numpy as np
    from sklearn.linear_model import _cd_fast

    def arrays(f, given, names, copies=()):
        out = []
        for name in names:
            a = given[name]
            if not isinstance(a, np.ndarray):
                raise TypeError('%s takes %s as a numpy array' % (f, name))
            a = np.asarray(a)
            out.append(np.array(a) if name in copies else np.ndarray.view(a))
        return out

    def require(ok, f, what):
        if not ok:
            raise ValueError('%s: %s' % (f, what))

    def dense(w, alpha, beta, X, y, *rest, **kw):
        w, X, y = arrays('enet_coordinate_descent', locals(), ('w', 'X', 'y'))
        require(w.ndim == 1 and X.ndim == 2 and y.ndim == 1 and w.shape[0] == X.shape[1]
                and y.shape[0] == X.shape[0], 'enet_coordinate_descent',
                'w needs one value for each column of X, y one for each row')
        return real['enet_coordinate_descent'](w, alpha, beta, X, y, *rest, **kw)

    def sparse(w, alpha, beta, X_data, X_indices, X_indptr, y, sample_weight, X_mean, *rest,
               **kw):
        f = 'sparse_enet_coordinate_descent'
        w, X_data, X_indices, X_indptr, y, X_mean = arrays(
            f, locals(), ('w', 'X_data', 'X_indices', 'X_indptr', 'y', 'X_mean'),
            ('X_indices', 'X_indptr'))
        if sample_weight is not None:
            sample_weight, = arrays(f, locals(), ('sample_weight',))
        require(all(a.ndim == 1 for a in (w, X_data, X_indices, X_indptr, y, X_mean)), f,
                'the arrays are 1-dimensional')
        n, features = y.shape[0], w.shape[0]
        require(X_indptr.shape[0] == features + 1 and X_mean.shape[0] == features, f,
                'X_indptr needs one more value than w, X_mean as many')
        require(sample_weight is None or sample_weight.shape == (n,), f,
                'sample_weight needs one value for each value of y')
        require(X_indptr[0] == 0 and not (np.diff(X_indptr) < 0).any() and
                X_indptr[-1] <= min(X_data.shape[0], X_indices.shape[0]), f,
                'X_indptr rises from 0 within X_data and X_indices')
        used = X_indices[:X_indptr[-1]]
        require(not used.size or (used.min() >= 0 and used.max() < n), f,
                'X_indices are rows of y')
        return real[f](w, alpha, beta, X_data, X_indices, X_indptr, y, sample_weight, X_mean,
                       *rest, **kw)

    def gram(w, alpha, beta, Q, q, y, *rest, **kw):
        w, Q, q, y = arrays('enet_coordinate_descent_gram', locals(), ('w', 'Q', 'q', 'y'))
        require(w.ndim == 1 and Q.ndim == 2 and q.ndim == 1 and
                Q.shape == (w.shape[0], w.shape[0]) and q.shape == w.shape,
                'enet_coordinate_descent_gram', 'Q needs a row and column and q a value '
                'for each value of w')
        return real['enet_coordinate_descent_gram'](w, alpha, beta, Q, q, y, *rest, **kw)

    def multi_task(W, l1_reg, l2_reg, X, Y, *rest, **kw):
        W, X, Y = arrays('enet_coordinate_descent_multi_task', locals(), ('W', 'X', 'Y'))
        require(W.ndim == 2 and X.ndim == 2 and Y.ndim == 2 and Y.shape[0] == X.shape[0]
                and W.shape == (Y.shape[1], X.shape[1]), 'enet_coordinate_descent_multi_task',
                'W needs a row for each column of Y and a column for each of X, Y a row for '
                'each of X')
        return real['enet_coordinate_descent_multi_task'](W, l1_reg, l2_reg, X, Y, *rest,
                                                          **kw)

    real = {}
    replacements = {}
    for f in (dense, sparse, gram, multi_task):
        name = {'dense': 'enet_coordinate_descent', 'sparse': 'sparse_enet_coordinate_descent',
                'gram': 'enet_coordinate_descent_gram',
                'multi_task': 'enet_coordinate_descent_multi_task'}[f.__name__]
        real[name] = old = getattr(_cd_fast, name)
        f.__name__ = f.__qualname__ = name
        f.__doc__, f.__module__ = old.__doc__, old.__module__
        replacements[id(old)] = (old, f)
    _replace_all(replacements)


def _sklearn_reductions():
    """The pairwise distance reductions (nearest neighbours' kneighbors and radius_neighbors,
    and whatever queries fitted points: LocalOutlierFactor, Isomap...) compute each distance
    over X's features, reading the other set's rows for as many: a fitted _fit_X (an instance
    attribute, the user's to set) narrower than X was read past (SIGSEGV). Their compute takes
    numpy's own arrays (sparse matrices checked whole) with as many columns each, and works on
    those."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.metrics._pairwise_distances_reduction import _argkmin, _radius_neighbors

    def converted(a, name):
        if sp.issparse(a):
            return _checked_sparse(a)
        if not isinstance(a, np.ndarray):
            raise TypeError('the distance reductions take %s as a numpy array or a sparse '
                            'matrix' % name)
        # a new object over the same memory: k's conversion (the compiled compute's, after
        # this check) set the code's X.shape in place, and the rows were read for as many
        # features as the other set has
        a = np.ndarray.view(np.asarray(a))
        if a.ndim != 2:
            raise ValueError('the distance reductions take a 2-dimensional %s' % name)
        return a

    # The Euclidean reductions add X_norm_squared[i] and Y_norm_squared[j] (metric_kwargs,
    # the caller's) for each row, unchecked: a short one was read past (any heap bytes near
    # it read back). They are copies, one value a row.
    def norms(metric_kwargs, X, Y):
        if metric_kwargs is None:
            return None
        kw = dict(metric_kwargs)
        for name, rows in (('X_norm_squared', X.shape[0]), ('Y_norm_squared', Y.shape[0])):
            if kw.get(name) is not None:
                v = np.array(kw[name], dtype=np.float64).reshape(-1)
                if v.shape[0] != rows:
                    raise ValueError('%s needs one value for each of the %d rows'
                                     % (name, rows))
                kw[name] = v
        return kw

    def checked(real):
        def compute(cls, X, Y, *args, **kwargs):
            kwargs = _plain_names(kwargs)
            X, Y = converted(X, 'X'), converted(Y, 'Y')
            if X.shape[1] != Y.shape[1]:
                raise ValueError('X has %d features, Y has %d: the distances need as many'
                                 % (X.shape[1], Y.shape[1]))
            if len(args) > 3:
                args = args[:3] + (norms(args[3], X, Y),) + args[4:]
            elif 'metric_kwargs' in kwargs:
                kwargs['metric_kwargs'] = norms(kwargs['metric_kwargs'], X, Y)
            return real.__get__(None, cls)(X, Y, *args, **kwargs)
        compute.__doc__ = real.__doc__
        return classmethod(compute)

    for cls in (_argkmin.ArgKmin64, _argkmin.ArgKmin32, _radius_neighbors.RadiusNeighbors64,
                _radius_neighbors.RadiusNeighbors32):
        type_patches[(cls, 'compute')] = checked(cls.__dict__['compute'])


def _bspline_checks():
    """A BSpline's knots, coefficients and degree are plain attributes, handed to compiled code
    at each evaluation: knots set longer than the coefficients (b.t = ...; b(x)) read past
    them (SIGSEGV, or heap pointers as values). Its methods check the three first."""
    import operator
    import numpy as np
    from scipy.interpolate import BSpline

    def valid(b):
        k = operator.index(b.k)
        t, c = np.asarray(b.t), np.asarray(b.c)
        if k < 0 or t.ndim != 1 or len(t) < 2 * k + 2 or c.ndim < 1 or \
                c.shape[0] < len(t) - k - 1:
            raise ValueError('the spline needs a degree k >= 0, at least 2k+2 knots and '
                             'len(t)-k-1 coefficients')

    def checked(f):
        def method(self, *args, **kwargs):
            # The attributes made numpy's own contiguous arrays (and an exact int) first: the
            # methods read them again (self.c.reshape: a subclass's own reshape).
            self.t = np.ascontiguousarray(np.asarray(self.t))
            self.c = np.ascontiguousarray(np.asarray(self.c))
            self.k = operator.index(self.k)
            valid(self)
            return f(self, *args, **kwargs)
        method.__name__, method.__qualname__ = f.__name__, f.__qualname__
        method.__doc__, method.__module__ = f.__doc__, f.__module__
        return method

    from scipy.interpolate import _bspl
    evaluate_real = _bspl.evaluate_spline

    def evaluate_spline(t, c, k, xp, nu, extrapolate, out):
        if not all(isinstance(a, np.ndarray) for a in (t, c, xp, out)):
            raise TypeError('evaluate_spline takes numpy arrays')
        t, c, xp, out = np.asarray(t), np.asarray(c), np.asarray(xp), np.asarray(out)
        k = operator.index(k)
        if k < 0 or t.ndim != 1 or len(t) < 2 * k + 2 or c.ndim != 2 or \
                c.shape[0] < len(t) - k - 1:
            raise ValueError('the spline needs a degree k >= 0, at least 2k+2 knots and '
                             'len(t)-k-1 coefficients')
        return evaluate_real(t, c, k, xp, _derivative(k, nu), extrapolate, out)

    evaluate_spline.__doc__ = evaluate_real.__doc__
    _replace_everywhere(evaluate_real, evaluate_spline)
    _bspl_kernels()

    for name in ('__call__', 'integrate', 'derivative', 'antiderivative', '_evaluate'):
        if name in BSpline.__dict__:
            setattr(BSpline, name, checked(BSpline.__dict__[name]))
    tck = BSpline.__dict__['tck']
    BSpline.tck = property(checked(tck.fget), None, None, tck.__doc__)


def _ppoly_checks():
    """scipy's piecewise polynomial kernels (_ppoly: PPoly, BPoly, NdPPoly) check their arrays'
    shapes against one another, not that there is a polynomial to evaluate: breakpoints of one
    point (set on a PPoly after it was made: c with no interval) had a point below them
    evaluated in interval 0 (read past c and x), and NdPPoly's orders of 0 along an axis (c of
    shape (N, 0, 1, 1): N x 0 = 0 = c.shape[0]) had its nested evaluation write N numbers into
    a scratch array of none (another array's data overwritten). Each kernel here gets
    breakpoints of two points or more, and NdPPoly's one order of 1 or more an axis, their
    product c's first axis."""
    import operator
    import numpy as np
    from scipy.interpolate import _ppoly

    def breakpoints(x):
        x = np.asarray(x)
        if x.ndim != 1 or x.shape[0] < 2:
            raise ValueError('a piecewise polynomial needs at least 2 breakpoints')
        return x

    def one_dim(real):
        def kernel(c, x, *args, **kwargs):
            return real(np.asarray(c), breakpoints(x), *args, **kwargs)
        kernel.__name__ = kernel.__qualname__ = real.__name__
        kernel.__doc__ = real.__doc__
        return kernel

    replacements = {}
    for name in ('evaluate', 'evaluate_bernstein', 'integrate', 'fix_continuity', 'real_roots'):
        real = getattr(_ppoly, name)
        replacements[id(real)] = (real, one_dim(real))
    evaluate_nd_real = _ppoly.evaluate_nd

    def evaluate_nd(c, xs, ks, xp, dx, extrapolate, out):
        c = np.asarray(c)
        if not isinstance(xs, tuple):
            raise TypeError('xs must be a tuple of breakpoint arrays')
        xs = tuple(breakpoints(x) for x in tuple.__iter__(xs))
        ks = np.array(ks, dtype=np.intc)  # (a copy: nothing of the code's is read again)
        orders = [operator.index(k) for k in ks.tolist()] if ks.ndim == 1 else []
        total = 1
        for k in orders:
            total *= k
        if len(orders) != len(xs) or any(k < 1 for k in orders) or c.ndim != 3 or \
                total != c.shape[0]:
            raise ValueError('ks needs one order of 1 or more for each dimension, whose '
                             'product is c.shape[0]')
        return evaluate_nd_real(c, xs, ks, xp, dx, extrapolate, out)

    evaluate_nd.__doc__ = evaluate_nd_real.__doc__
    replacements[id(evaluate_nd_real)] = (evaluate_nd_real, evaluate_nd)
    _replace_all(replacements)


def _fitpack_work_sizes():
    """scipy's own C wrappers of FITPACK's surface and parametric fits (_fitpack._surfit for
    bisplrep, _parcur for splprep) size one work block from the counts they are given (nxest,
    nest, the work lengths) and copy into it what they are handed before FITPACK checks
    anything: knots past the count asked for (bisplrep or splprep with task=-1, a long t and a
    small nest) overran the block with the code's own bytes (another array's items changed),
    a work array shorter than the knots were read past, and a parameter array shorter than the
    points was written past. Each gets what its block holds."""
    import operator
    import numpy as np
    from scipy.interpolate import _fitpack
    surfit_real, parcur_real = _fitpack._surfit, _fitpack._parcur
    most = 1 << 28  # doubles in one work block: 2 GiB, past any limit of a call

    def index(v, low, what):
        v = operator.index(v)
        if v < low:
            raise ValueError('%s must be %d or more' % (what, low))
        return v

    def _surfit(x, y, z, w, xb, xe, yb, ye, kx, ky, iopt, s, eps, tx, ty, nxest, nyest,
                wrk, lwrk1, lwrk2):
        x, y, z, w = (np.array(a, dtype=float).ravel() for a in (x, y, z, w))
        m = len(x)
        kx, ky = index(kx, 1, 'kx'), index(ky, 1, 'ky')
        nxest, nyest = index(nxest, 2 * kx + 2, 'nxest'), index(nyest, 2 * ky + 2, 'nyest')
        lwrk1, lwrk2 = index(lwrk1, 0, 'lwrk1'), index(lwrk2, 0, 'lwrk2')
        iopt = operator.index(iopt)
        if kx > 5 or ky > 5 or iopt not in (-1, 0, 1) or not m == len(y) == len(z) == len(w):
            raise ValueError('surfit takes degrees 1 to 5, task -1, 0 or 1, and x, y, z, w '
                             'of one length')
        lcest = (nxest - kx - 1) * (nyest - ky - 1)
        kwrk = m + (nxest - 2 * kx - 1) * (nyest - 2 * ky - 1)
        if 2 * max(nxest, nyest) + lcest + lwrk1 + lwrk2 + kwrk > most:
            raise ValueError('surfit would need more work memory than a call has')
        wrk = np.array(wrk, dtype=float).ravel()
        if iopt:
            tx, ty = np.array(tx, dtype=float).ravel(), np.array(ty, dtype=float).ravel()
            if len(tx) > nxest or len(ty) > nyest:
                raise ValueError('surfit takes at most nxest knots tx and nyest knots ty')
            lc = (len(tx) - kx - 1) * (len(ty) - ky - 1)
            if iopt == 1 and (len(tx) < kx + 1 or len(ty) < ky + 1 or lc > len(wrk) or
                              lc > lwrk1):
                raise ValueError('surfit continued (task=1) takes the work of the fit it '
                                 'continues')
        return surfit_real(x, y, z, w, xb, xe, yb, ye, kx, ky, iopt, s, eps, tx, ty, nxest,
                           nyest, wrk, lwrk1, lwrk2)

    def _parcur(x, w, u, ub, ue, k, iopt, ipar, s, t, nest, wrk, iwrk, per):
        x, w, u = (np.array(a, dtype=float).ravel() for a in (x, w, u))
        m = len(w)
        k, nest = index(k, 1, 'k'), operator.index(nest)
        iopt, per = operator.index(iopt), operator.index(per)
        idim = len(x) // m if m else 0
        if k > 5 or iopt not in (-1, 0, 1) or m == 0 or len(x) != idim * m or \
                not 1 <= idim <= 10 or len(u) != m or nest < 2 * k + 2:
            raise ValueError('parcur takes a degree of 1 to 5, task -1, 0 or 1, 1 to 10 '
                             'coordinates of len(w) points, len(w) parameters u, and '
                             'nest >= 2k+2')
        lwrk = m * (k + 1) + nest * ((7 + idim + 5 * k) if per else (6 + idim + 3 * k))
        if idim * nest + 2 * nest + lwrk > most:
            raise ValueError('parcur would need more work memory than a call has')
        wrk = np.array(wrk, dtype=float).ravel()
        iwrk = np.array(iwrk).ravel()
        if iopt:
            t = np.array(t, dtype=float).ravel()
            if len(t) > nest or (iopt == 1 and (len(wrk) < len(t) or len(iwrk) < len(t))):
                raise ValueError('parcur takes at most nest knots, and continued (task=1) the '
                                 'work of the fit it continues')
        return parcur_real(x, w, u, ub, ue, k, iopt, ipar, s, t, nest, wrk, iwrk, per)

    for real, checked in ((surfit_real, _surfit), (parcur_real, _parcur)):
        checked.__doc__ = real.__doc__
    _replace_all({id(surfit_real): (surfit_real, _surfit), id(parcur_real): (parcur_real,
                                                                             _parcur)})


def _rbf_kernels():
    """RBFInterpolator keeps what its compiled kernels (pythran's: no bounds checks) take in
    plain attributes (kernel, epsilon, powers, y, d, smoothing), and the kernels index them as
    their shapes promise each other: powers with more columns than the points read past each
    point, points with more columns than the shift and scale read past those (and smoothing
    shorter than the points would be), and a kernel name not theirs aborted the worker.
    Each kernel gets arrays whose shapes agree and a kernel it has."""
    import numpy as np
    from scipy.interpolate import _rbfinterp, _rbfinterp_pythran
    available = frozenset(_rbfinterp._AVAILABLE)
    system_real = _rbfinterp_pythran._build_system
    coefficients_real = _rbfinterp_pythran._build_evaluation_coefficients
    polynomial_real = _rbfinterp_pythran._polynomial_matrix

    def array(a, dtype, ndim, what):
        a = np.ascontiguousarray(a, dtype=dtype)
        if a.ndim != ndim:
            raise ValueError('RBFInterpolator: %s must be %d-dimensional' % (what, ndim))
        return a

    def kernel_of(kernel):
        if type(kernel) is not str or kernel not in available:
            raise ValueError('RBFInterpolator: kernel must be one of %s'
                             % ', '.join(sorted(available)))
        return kernel

    def columns(n, *named):
        for a, what in named:
            if a.shape[-1] != n:
                raise ValueError('RBFInterpolator: %s must have one column per coordinate '
                                 '(%d), as the data points do' % (what, n))

    def _build_system(y, d, smoothing, kernel, epsilon, powers):
        y, d = array(y, float, 2, 'y'), array(d, float, 2, 'd')
        smoothing = array(smoothing, float, 1, 'smoothing')
        powers = array(powers, int, 2, 'powers')
        if len(d) != len(y) or len(smoothing) != len(y):
            raise ValueError('RBFInterpolator: d and smoothing must have one row per data '
                             'point (%d)' % len(y))
        columns(y.shape[1], (powers, 'powers'))
        return system_real(y, d, smoothing, kernel_of(kernel), float(epsilon), powers)

    def _build_evaluation_coefficients(x, y, kernel, epsilon, powers, shift, scale):
        x, y = array(x, float, 2, 'x'), array(y, float, 2, 'y')
        powers = array(powers, int, 2, 'powers')
        shift, scale = array(shift, float, 1, 'shift'), array(scale, float, 1, 'scale')
        columns(y.shape[1], (x, 'x'), (powers, 'powers'), (shift, 'shift'), (scale, 'scale'))
        return coefficients_real(x, y, kernel_of(kernel), float(epsilon), powers, shift, scale)

    def _polynomial_matrix(x, powers):
        x, powers = array(x, float, 2, 'x'), array(powers, int, 2, 'powers')
        columns(x.shape[1], (powers, 'powers'))
        return polynomial_real(x, powers)

    pairs = ((system_real, _build_system), (coefficients_real, _build_evaluation_coefficients),
             (polynomial_real, _polynomial_matrix))
    for real, checked in pairs:
        checked.__doc__ = real.__doc__
    _replace_all({id(real): (real, checked) for real, checked in pairs})


def _fpcurf_restarts():
    """UnivariateSpline keeps FITPACK's state of its last fit in a plain attribute (_data), and
    set_smoothing_factor hands it back to fpcurf (dfitpack.fpcurf1), which goes on from the
    knots and the counts of points between them it holds: a knot count n past the knot array
    wrote past it (another array's items changed), counts of more points than there are read
    past the points. fpcurf1 gets copies of a state FITPACK could have left: 2k+2 <= n <= len(t),
    the points sorted within [xb, xe], and counts that add up to no more points than there
    are."""
    import operator
    import numpy as np
    from scipy.interpolate import dfitpack
    real = dfitpack.fpcurf1

    def fpcurf1(x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier):
        x, y, w, t, c, fpint = (np.array(a, dtype=float) for a in (x, y, w, t, c, fpint))
        nrdata = np.array(nrdata)
        k, n = operator.index(k), operator.index(n)
        xb, xe = float(xb), float(xe)
        nmin, nest = 2 * k + 2, len(t)
        if x.ndim != 1 or y.shape != x.shape or w.shape != x.shape or not 1 <= k <= 5 or \
                len(x) <= k or t.ndim != 1 or c.shape != t.shape or fpint.shape != t.shape or \
                nrdata.shape != t.shape or nrdata.dtype.kind not in 'iu' or \
                not nmin <= n <= nest:
            raise ValueError('fpcurf1 takes the state of a fit: x, y, w of one length, '
                             '1 <= k <= 5, t, c, fpint and nrdata of one length, and '
                             '2k+2 <= n <= len(t)')
        if not (np.all(x[1:] >= x[:-1]) and xb <= x[0] and x[-1] <= xe):
            raise ValueError('fpcurf1 takes points sorted within [xb, xe]')
        nrint = n - nmin + 1
        counts = nrdata[:nrint].astype(np.int64)
        if n > nmin and (counts.min() < 0 or int(counts.sum()) + nrint > len(x) - 1):
            raise ValueError('fpcurf1 takes counts of points per knot interval that add up '
                             'to the points there are')
        return real(x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier)

    fpcurf1.__doc__ = real.__doc__
    _replace_everywhere(real, fpcurf1)


def _derivative(k, nu):
    """The order of derivative the B-spline kernels are given: one past the degree (zero, as
    any higher) for any higher. Past k + 1 their recursion copied a negative count of numbers
    (a heap overrun: BSpline(t, c, 3)(x, nu=5))."""
    import operator
    nu = operator.index(nu)
    return k + 1 if nu > k + 1 else nu


def _bspl_kernels():
    """scipy's B-spline kernels (_bspl) find the knot interval of each point, -1 for a point
    past the base interval t[k]..t[n] (n = len(t) - k - 1) or NaN, and go on with it: knots read
    before t, and numbers added before the matrices they fill (make_lsq_spline and
    make_interp_spline let a point through up to t[-k], past t[n]: another array's items
    changed). Each kernel here gets points within the base interval, an interval index the
    knots have around it, matrices as large as the rows and columns it fills, and a derivative
    order it can compute."""
    import operator
    import numpy as np
    from scipy.interpolate import _bspl

    def base(t, k):
        t = np.asarray(t)
        k = operator.index(k)
        if k < 0 or t.ndim != 1 or len(t) < 2 * k + 2:
            raise ValueError('a B-spline needs a degree k >= 0 and at least 2k+2 knots')
        return t, k, len(t) - k - 1

    def intervals(t, k, n, x):
        """The interval of each point, as the kernels find it; the points must lie in the base
        interval and the knots be sorted."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        if np.any(t[1:] < t[:-1]):
            raise ValueError('the knots must be sorted')
        if x.size and not (np.all(x >= t[k]) and np.all(x <= t[n])):
            raise ValueError('Out of bounds w/ x = %s: the points must lie within t[k] and '
                             't[len(t)-k-1], the base interval' % (x,))
        return np.clip(np.searchsorted(t, x, 'right') - 1, k, n - 1)

    def rows_fit(rows, low, high):
        if low.size and (low.min() < 0 or high.max() >= rows):
            raise ValueError('the matrix has too few rows for these points and knots')

    colloc_real = _bspl._colloc

    def _colloc(x, t, k, ab, offset=0):
        t, k, n = base(t, k)
        left = intervals(t, k, n, x)
        offset = operator.index(offset)
        ab_ = np.asarray(ab)
        j = np.arange(left.size)
        if ab_.ndim != 2 or ab_.shape[1] < n:
            raise ValueError('the matrix needs len(t)-k-1 columns')
        # rows kl + ku + j + offset - clmn, clmn from left - k to left (kl = ku = k)
        rows_fit(ab_.shape[0], 2 * k + j + offset - left, 2 * k + j + offset - (left - k))
        return colloc_real(x, t, k, ab, offset)

    lhs_real = _bspl._handle_lhs_derivatives

    def _handle_lhs_derivatives(t, k, xval, ab, kl, ku, deriv_ords, offset=0):
        t, k, n = base(t, k)
        left = intervals(t, k, n, xval)
        kl, ku, offset = operator.index(kl), operator.index(ku), operator.index(offset)
        ords = np.asarray(deriv_ords)
        ab_ = np.asarray(ab)
        row = np.arange(ords.size)
        if ab_.ndim != 2 or ab_.shape[1] < n or ords.ndim != 1:
            raise ValueError('the matrix needs len(t)-k-1 columns, the orders one dimension')
        if ords.size and (ords.min() < 0 or ords.max() > k + 1):
            raise ValueError('the orders of derivatives must lie within 0 and k + 1')
        rows_fit(ab_.shape[0], kl + ku + offset + row - left[0],
                 kl + ku + offset + row - (left[0] - k))
        return lhs_real(t, k, xval, ab, kl, ku, deriv_ords, offset)

    lsq_real = _bspl._norm_eq_lsq

    def _norm_eq_lsq(x, t, k, y, w, ab, rhs):
        t, k, n = base(t, k)
        m = len(intervals(t, k, n, x))
        y_, w_, ab_, rhs_ = (np.asarray(a) for a in (y, w, ab, rhs))
        if ab_.ndim != 2 or ab_.shape[0] < k + 1 or ab_.shape[1] < n or rhs_.ndim != 2 or \
                rhs_.shape[0] < n or y_.ndim != 2 or y_.shape[0] < m or \
                y_.shape[1] < rhs_.shape[1] or w_.ndim != 1 or w_.shape[0] < m:
            raise ValueError('the normal equations need ab of (k+1, len(t)-k-1), rhs of '
                             '(len(t)-k-1, s), y of (len(x), s) and w of len(x)')
        return lsq_real(x, t, k, y, w, ab, rhs)

    design_real = _bspl._make_design_matrix

    def _make_design_matrix(x, t, k, extrapolate, indices):
        t, k, n = base(t, k)
        x_ = np.atleast_1d(np.asarray(x, dtype=float))
        if np.any(t[1:] < t[:-1]) or np.isnan(x_).any():
            raise ValueError('the knots must be sorted, and the points numbers')
        if not extrapolate:
            intervals(t, k, n, x_)
        if np.asarray(indices).size < x_.size * (k + 1):
            raise ValueError('indices needs (k+1) entries for each point')
        return design_real(x, t, k, extrapolate, indices)

    all_real = _bspl.evaluate_all_bspl

    def evaluate_all_bspl(t, k, xval, m, nu=0):
        t, k, n = base(t, k)
        m = operator.index(m)
        # the kernel reads the knots t[m - k + 1] to t[m + k]
        if m < k - 1 or m + k > len(t) - 1:
            raise ValueError('the interval m must lie within k - 1 and len(t) - k - 1')
        nu = operator.index(nu)
        if nu < 0:
            raise ValueError('the order of derivative must be 0 or more')
        return all_real(t, k, xval, m, _derivative(k, nu))

    pairs = ((colloc_real, _colloc), (lhs_real, _handle_lhs_derivatives),
             (lsq_real, _norm_eq_lsq), (design_real, _make_design_matrix),
             (all_real, evaluate_all_bspl))
    for real, checked in pairs:
        checked.__doc__ = real.__doc__
    _replace_all({id(real): (real, checked) for real, checked in pairs})


def _low_level_callables():
    """LowLevelCallable(capsule, signature=...) gave any capsule the signature asked (the
    capsule of datetime's C interface, a table of data, called as a function by quad or
    generic_filter: SIGSEGV), and user_data any capsule as the C function's data. The
    functions a sandbox can name are capsules already labelled by their makers: their own
    label, and no data of the user's; a LowLevelCallable wrapped in another keeps its own (a
    new label on a wrapped one called the same table as a function)."""
    from scipy._lib import _ccallback, _ccallback_c
    cls = _ccallback.LowLevelCallable
    parse = cls.__dict__['_parse_callback'].__func__

    def _parse_callback(cls_, obj, user_data=None, signature=None):
        if signature is not None or user_data is not None:
            raise ValueError('a LowLevelCallable in the sandbox takes a function with its '
                             'own signature and no user_data')
        raw = parse(cls_, obj, user_data, signature)
        # A function that takes its data through a pointer (a library's integrand, from_cython)
        # read the NULL the sandbox gives it (V73a L1).
        if 'void' in _ccallback_c.get_capsule_signature(raw).partition('(')[2]:
            raise ValueError('a LowLevelCallable in the sandbox takes no user_data, and this '
                             'function reads its data through a pointer')
        return raw

    cls._parse_callback = classmethod(_parse_callback)


def _stats_integrals():
    """Distributions whose values scipy integrates from C functions that read their parameters
    through a pointer, which scipy makes with ctypes: a worker has none, and a LowLevelCallable
    in the sandbox takes no user_data. The studentized range (tukey_hsd's p-values), geninvgauss'
    and genhyperbolic's cdf: their integrals take their parameters from an array made here, that
    only these functions hold and write (four numbers, as many as any of them reads), at an
    address known in the zygote."""
    import warnings
    import numpy as np
    from scipy import integrate
    from scipy._lib import _ccallback, _ccallback_c
    from scipy.stats import _continuous_distns as cd, _stats
    params = np.zeros(4)
    address = params.__array_interface__['data'][0]
    calls = {}
    for symbol in ('_studentized_range_cdf', '_studentized_range_cdf_asymptotic',
                   '_studentized_range_pdf', '_studentized_range_pdf_asymptotic',
                   '_studentized_range_moment', '_geninvgauss_pdf', '_genhyperbolic_pdf'):
        function = _stats.__pyx_capi__[symbol]
        raw = _ccallback_c.get_raw_capsule(function, None, address)
        calls[symbol] = tuple.__new__(_ccallback.LowLevelCallable, (raw, function, None))
    opts = {'epsabs': 1e-11, 'epsrel': 1e-12}
    line, half = (-np.inf, np.inf), (0, np.inf)

    def integral(symbol, values, ranges):
        params[:] = 0.0
        params[:len(values)] = values
        return integrate.nquad(calls[symbol], ranges=ranges, opts=opts)[0]

    def quad(symbol, values, a, b):
        params[:] = 0.0
        params[:len(values)] = values
        return integrate.quad(calls[symbol], a, b)[0]

    def single(kind, logconst):
        def one(q, k, df):
            if df < 100000:
                return integral('_studentized_range_' + kind, [q, k, df, logconst(k, df)],
                                [line, half])
            return integral('_studentized_range_%s_asymptotic' % kind, [q, k], [line])
        return one

    single_pdf = single('pdf', _stats._studentized_range_pdf_logconst)
    single_cdf = single('cdf', _stats._studentized_range_cdf_logconst)

    def _pdf(self, x, k, df):
        return np.float64(np.frompyfunc(single_pdf, 3, 1)(x, k, df))

    def _cdf(self, x, k, df):
        return np.clip(np.float64(np.frompyfunc(single_cdf, 3, 1)(x, k, df)), 0, 1)

    def _munp(self, K, k, df):
        support = self._get_support()

        def single_moment(K, k, df):
            return integral('_studentized_range_moment',
                            [K, k, df, _stats._studentized_range_pdf_logconst(k, df)],
                            [line, half, support])

        return np.float64(np.frompyfunc(single_moment, 3, 1)(K, k, df))

    def geninvgauss_cdf(self, x, *args):
        a, _ = self._get_support(*args)
        return np.vectorize(lambda x, p, b: quad('_geninvgauss_pdf', [p, b], a, x))(x, *args)

    def genhyperbolic_cdf(self, x, p, a, b):
        def single(x, p, a, b):
            t = quad('_genhyperbolic_pdf', [p, a, b], -np.inf, x)
            if np.isnan(t):
                warnings.warn('Infinite values encountered in scipy.special.kve. Values '
                              'replaced by NaN to avoid incorrect results.', RuntimeWarning)
            return t

        return np.vectorize(single)(x, p, a, b)

    for gen, name, f in ((cd.studentized_range_gen, '_pdf', _pdf),
                         (cd.studentized_range_gen, '_cdf', _cdf),
                         (cd.studentized_range_gen, '_munp', _munp),
                         (cd.geninvgauss_gen, '_cdf', geninvgauss_cdf),
                         (cd.genhyperbolic_gen, '_cdf', genhyperbolic_cdf)):
        real = getattr(gen, name)
        f.__name__, f.__doc__, f.__qualname__, f.__module__ = (
            name, real.__doc__, real.__qualname__, real.__module__)
        setattr(gen, name, f)


def _exact_random_state(r):
    """r as numpy's own Generator or RandomState: a subclass's made anew over its real bit
    generator (read through the class's own descriptor, not the subclass's), an object that
    only passes for one refused (the descriptor does not apply to it); anything else as it
    is."""
    np = sys.modules['numpy']
    for cls, name in ((np.random.Generator, 'bit_generator'),
                      (np.random.RandomState, '_bit_generator')):
        if type(r) is cls:
            return r
        if isinstance(r, cls):
            return cls(cls.__dict__[name].__get__(r, cls))
    return r


def _exact_random_states(real):
    """scipy's compiled samplers (random_table's, the noncentral hypergeometrics', UNU.RAN's)
    read the bit generator of the random state they are given by attribute, keep the pointer
    its capsule gives and drop the rest: a Generator subclass whose bit_generator answered a
    new MT19937 each time had it freed before the first draw, and the sampler drew through
    function pointers laid in its place; scikit-learn's compiled sampling without replacement
    indexed its pool with what a RandomState subclass's randint answered (any number). Both
    libraries hand them what their check_random_state (real) returns: that is now always
    numpy's own Generator or RandomState (_exact_random_state)."""
    def check_random_state(seed):
        return _exact_random_state(real(seed))

    check_random_state.__doc__ = real.__doc__
    check_random_state.__module__ = real.__module__
    _replace_everywhere(real, check_random_state)


def _van_der_corput_checks():
    """Halton's points come from a compiled van der Corput sequence that takes the index of the
    first point and, scrambled, a table of digit permutations, and reads permutations[j, d]
    for each digit d of each index without bounds checks: Halton's num_generated and base are
    plain attributes, and a negative start read the words before the table (any heap bytes
    near it read back). Both take checked values: a count and a start of 0 or more, a base
    of 2 or more, the table an int64 copy of rows as wide as the base, each a permutation."""
    import operator
    import numpy as np
    from scipy.stats import _qmc_cy

    plain_real = _qmc_cy._cy_van_der_corput
    scrambled_real = _qmc_cy._cy_van_der_corput_scrambled

    def numbers(n, base, start_index):
        n, base, start_index = (operator.index(v) for v in (n, base, start_index))
        if n < 0 or base < 2 or start_index < 0 or start_index + n >= 1 << 62:
            raise ValueError('van der Corput takes a count and a start of 0 or more and a '
                             'base of 2 or more')
        return n, base, start_index

    def _cy_van_der_corput(n, base, start_index, workers):
        n, base, start_index = numbers(n, base, start_index)
        return plain_real(n, base, start_index, operator.index(workers))

    def _cy_van_der_corput_scrambled(n, base, start_index, permutations, workers):
        n, base, start_index = numbers(n, base, start_index)
        permutations = np.array(permutations, dtype=np.int64, order='C')
        if permutations.ndim != 2 or permutations.shape[1] != base or \
                (permutations.size and (np.sort(permutations, axis=1) !=
                                        np.arange(base)).any()):
            raise ValueError('the permutations should be rows of the digits 0 to %d'
                             % (base - 1))
        return scrambled_real(n, base, start_index, permutations, operator.index(workers))

    for f, real in ((_cy_van_der_corput, plain_real),
                    (_cy_van_der_corput_scrambled, scrambled_real)):
        f.__doc__, f.__module__ = real.__doc__, getattr(real, '__module__', None)
    _replace_all({id(plain_real): (plain_real, _cy_van_der_corput),
                  id(scrambled_real): (scrambled_real, _cy_van_der_corput_scrambled)})


def _group_columns_checks():
    """least_squares groups the columns of a sparse Jacobian's pattern (jac_sparsity, the
    caller's matrix, converted to CSC without a full check) in compiled code that reads its
    index pointers and row indices as they are (an edited index: read past, abort). The
    grouping takes checked copies: pointers rising from 0 to the indices' count, one a column
    and one more, rows within the matrix; a dense pattern of the shape given."""
    import operator
    import numpy as np
    from scipy.optimize import _group_columns

    sparse_real, dense_real = _group_columns.group_sparse, _group_columns.group_dense

    def group_sparse(m, n, indices, indptr):
        m, n = operator.index(m), operator.index(n)
        indices = np.array(indices, dtype=np.intc).reshape(-1)
        indptr = np.array(indptr, dtype=np.intc).reshape(-1)
        if m < 0 or n < 0 or len(indptr) != n + 1 or (n >= 0 and len(indptr) and (
                indptr[0] != 0 or indptr[-1] != len(indices) or (np.diff(indptr) < 0).any())) \
                or (len(indices) and (indices.min() < 0 or indices.max() >= m)):
            raise ValueError('the sparsity pattern is not a valid %d by %d matrix' % (m, n))
        return sparse_real(m, n, indices, indptr)

    def group_dense(m, n, A):
        m, n = operator.index(m), operator.index(n)
        A = np.array(A, dtype=np.intc)
        if A.shape != (m, n):
            raise ValueError('the sparsity pattern should be %d by %d' % (m, n))
        return dense_real(m, n, A)

    for f, real in ((group_sparse, sparse_real), (group_dense, dense_real)):
        f.__doc__, f.__module__ = real.__doc__, getattr(real, '__module__', None)
    _replace_all({id(sparse_real): (sparse_real, group_sparse),
                  id(dense_real): (dense_real, group_dense)})


def _table_samplers():
    """A frozen random_table keeps its row sums, column sums and total in a plain attribute
    (_params), which the user may set, and its samplers' compiled code (Boyett's, Patefield's)
    trusts them to agree: column sums past the total wrote chosen values past its work arrays
    (any memory read and written). Each sampler takes copies, checked first: the sums 1-D
    counts of 0 or more, the rows' and the columns' each adding up to the total."""
    import operator
    import numpy as np
    from scipy.stats import _rcont

    from scipy._lib import _util

    def checked(real):
        def sampler(row, col, ntot, size, random_state):
            random_state = _util.check_random_state(random_state)
            row = np.array(row, dtype=np.int64)
            col = np.array(col, dtype=np.int64)
            ntot = operator.index(ntot)
            if row.ndim != 1 or col.ndim != 1:
                raise ValueError('the row and column sums should be 1-dimensional')
            if (row < 0).any() or (col < 0).any() or \
                    int(row.sum()) != ntot or int(col.sum()) != ntot:
                raise ValueError('the row and column sums should be counts of 0 or more that '
                                 'each add up to the total, %d' % ntot)
            return real(row, col, ntot, operator.index(size), random_state)
        sampler.__name__, sampler.__qualname__ = real.__name__, real.__qualname__
        sampler.__doc__, sampler.__module__ = real.__doc__, getattr(real, '__module__', None)
        return sampler

    _replace_all({id(f): (f, checked(f)) for f in (_rcont.rvs_rcont1, _rcont.rvs_rcont2)})


def _kde_kernels():
    """gaussian_kde's compiled kernels read one weight a dataset point without checking there
    are as many weights as points: the kde's dataset and weights are attributes the user may
    set, and a short view of the user's own array as weights read memory beyond it (any heap
    bytes near it read back). Each kernel (either dtype's, as gaussian_kde picks them) now
    takes numpy's own copies of its arrays, points and weights in equal rows, the points
    where it is evaluated and the covariance's factor as wide as the points."""
    import numpy as np
    from scipy.stats import _stats

    def checked(f):
        def g(points, values, xi, cho_cov, dtype, *args):
            points, values, xi, cho_cov = (np.array(a) for a in (points, values, xi, cho_cov))
            if points.ndim != 2 or values.ndim != 2 or xi.ndim != 2 or cho_cov.ndim != 2:
                raise ValueError('the kernel estimate takes 2-dimensional arrays')
            n, d = points.shape
            if values.shape[0] != n or xi.shape[1] != d or cho_cov.shape != (d, d):
                raise ValueError('the kernel estimate needs one weight a point (%d points, '
                                 '%d weights), points of %d dimensions where it is evaluated '
                                 'and a %d by %d covariance' % (n, values.shape[0], d, d, d))
            return f(points, values, xi, cho_cov, dtype, *args)
        g.__name__, g.__qualname__, g.__doc__ = f.__name__, f.__qualname__, f.__doc__
        g.__module__ = f.__module__
        return g

    def kernels(real):
        call = checked(real)

        class Kernels:
            """A compiled kernel for each dtype, indexed as the real one is, each checked."""

            def __getitem__(self, spec):
                return checked(real[spec])

            def __call__(self, *args, **kwargs):
                return call(*args, **kwargs)

        Kernels.__doc__ = real.__doc__
        return Kernels()

    replacements = {}
    for name in ('gaussian_kernel_estimate', 'gaussian_kernel_estimate_log'):
        real = getattr(_stats, name)
        replacements[id(real)] = (real, kernels(real))
    _replace_all(replacements)


def _mgc_kernels():
    """Multiscale graph correlation's compiled kernels (scipy.stats._stats) read both distance
    matrices, and their ranks, for each of the first's n rows and columns: a compute_distance
    of the code's that answered a 2000 by 2000 matrix for x and a 5 by 5 one for y had the
    local covariance read past y's and write at the rank it read there (a chosen double added
    at a chosen offset: all memory read and written). Each kernel gets copies of its matrices,
    checked: square, of one size, the ranks from 1 to n."""
    import numpy as np
    from scipy.stats import _stats

    def square(what, *mats, dtype=np.float64):
        mats = [np.array(m, dtype=dtype, order='C') for m in mats]
        n = mats[0].shape[0] if mats[0].ndim == 2 else -1
        if any(m.shape != (n, n) for m in mats):
            raise ValueError('the %s should be square matrices of one size' % what)
        return mats

    def option(v):
        if not isinstance(v, str):
            raise TypeError('global_corr should be a str')
        return ''.join([v])

    real = {name: getattr(_stats, name) for name in (
        '_local_correlations', '_local_covariance', '_transform_distance_matrix',
        '_center_distance_matrix', '_rank_distance_matrix')}

    def _local_correlations(distx, disty, global_corr='mgc'):
        distx, disty = square('distance matrices', distx, disty)
        return real['_local_correlations'](distx, disty, global_corr=option(global_corr))

    def _local_covariance(distx, disty, rank_distx, rank_disty):
        distx, disty = square('distance matrices', distx, disty)
        ranks = square('distance matrices and their ranks', distx, rank_distx, rank_disty,
                       dtype=np.int64)[1:]
        n = len(distx)
        if n and any(r.min() < 1 or r.max() > n for r in ranks):
            raise ValueError('the ranks should be from 1 to %d' % n)
        return real['_local_covariance'](distx, disty, *ranks)

    def _transform_distance_matrix(distx, disty, global_corr='mgc', is_ranked=True):
        distx, disty = square('distance matrices', distx, disty)
        return real['_transform_distance_matrix'](distx, disty, global_corr=option(global_corr),
                                                  is_ranked=bool(is_ranked))

    def _center_distance_matrix(distx, global_corr='mgc', is_ranked=True):
        distx, = square('distance matrix', distx)
        return real['_center_distance_matrix'](distx, global_corr=option(global_corr),
                                               is_ranked=bool(is_ranked))

    def _rank_distance_matrix(distx):
        distx, = square('distance matrix', distx)
        return real['_rank_distance_matrix'](distx)

    replacements = {}
    for f in (_local_correlations, _local_covariance, _transform_distance_matrix,
              _center_distance_matrix, _rank_distance_matrix):
        r = real[f.__name__]
        f.__doc__ = r.__doc__
        replacements[id(r)] = (r, f)
    _replace_all(replacements)


def _distance_inputs():
    """cdist and pdist hand the Mahalanobis metric's VI to C without checking its shape (a 1x1
    VI for 4000 features read past it: SIGSEGV), and fcluster its monocrit and R (read past
    them). They are checked first: VI n by n for n features, monocrit one per merge, R four
    columns a merge."""
    import numpy as np
    from scipy.spatial import distance
    from scipy.cluster import hierarchy
    cdist_real, pdist_real, fcluster_real = distance.cdist, distance.pdist, hierarchy.fcluster

    def features(X):
        return X.shape[1] if X.ndim == 2 else None

    # (any metric: scipy's names for it are many, 'mah', 'MAHAL' among them, and another
    # metric refuses a VI anyway; the arrays are converted once, here, and passed on)
    def vi_checked(n, kwargs):
        kwargs = _plain_names(kwargs)
        if kwargs.get('VI') is not None:
            vi = np.array(kwargs['VI'], dtype=float)
            if n is not None and vi.shape != (n, n):
                raise ValueError('VI must be %d by %d for %d features' % (n, n, n))
            kwargs['VI'] = vi
        return kwargs

    # (and at the last step before C, which every entry passes: scipy's CDistMetricWrapper
    # and PDistMetricWrapper are public and reach the kernel without cdist)
    validate_real = distance._validate_mahalanobis_kwargs

    def _validate_mahalanobis_kwargs(X, m, n, **kwargs):
        kwargs = _plain_names(kwargs)
        kwargs = validate_real(X, m, n, **kwargs)
        vi = np.array(kwargs['VI'], dtype=np.double, order='C')
        if vi.shape != (n, n):
            raise ValueError('VI must be %d by %d for %d features' % (n, n, n))
        kwargs['VI'] = vi
        return kwargs

    _validate_mahalanobis_kwargs.__doc__ = validate_real.__doc__
    for info in list(distance._METRICS.values()) + list(distance._METRIC_ALIAS.values()):
        if info.validator is validate_real:
            object.__setattr__(info, 'validator', _validate_mahalanobis_kwargs)
    distance._validate_mahalanobis_kwargs = _validate_mahalanobis_kwargs

    # out= was written by the C kernels whether or not it was writable (a read-only array over
    # an immutable bytes object was written): the last step before them, for every entry,
    # checks the array itself (numpy's view of it: a subclass answers its own flags and shape).
    out_real = distance._prepare_out_argument

    def _prepare_out_argument(out, dtype, expected_shape):
        if isinstance(out, np.ndarray):
            out = np.ndarray.view(np.asarray(out), np.ndarray)
            if not out.flags.writeable:
                raise ValueError('Output array is read-only.')
        return out_real(out, dtype, expected_shape)

    _prepare_out_argument.__doc__ = out_real.__doc__
    distance._prepare_out_argument = _prepare_out_argument

    def cdist(XA, XB, metric='euclidean', *, out=None, **kwargs):
        XA, XB = np.asarray(XA), np.asarray(XB)
        return cdist_real(XA, XB, metric, out=out, **vi_checked(features(XA), kwargs))

    def pdist(X, metric='euclidean', *, out=None, **kwargs):
        X = np.asarray(X)
        return pdist_real(X, metric, out=out, **vi_checked(features(X), kwargs))

    def fcluster(Z, t, criterion='inconsistent', depth=2, R=None, monocrit=None):
        Z = np.asarray(Z, dtype=float)
        merges = Z.shape[0] if Z.ndim == 2 else None
        if monocrit is not None:
            monocrit = np.asarray(monocrit, dtype=float)
            if monocrit.shape != (merges,):
                raise ValueError('monocrit must hold one value for each of the %s merges'
                                 % merges)
        if R is not None:
            R = np.asarray(R, dtype=float)
            if R.shape != (merges, 4):
                raise ValueError('R must be %s by 4 (one row for each merge)' % merges)
        return fcluster_real(Z, t, criterion, depth, R, monocrit)

    pairs = [(cdist, cdist_real), (pdist, pdist_real), (fcluster, fcluster_real)]
    for f, orig in pairs:
        f.__doc__, f.__module__ = orig.__doc__, orig.__module__
    _replace_all({id(orig): (orig, f) for f, orig in pairs})


def _linkage_checks():
    """scipy.cluster.hierarchy checks a linkage (is_valid_linkage) before its compiled
    kernels walk it, but not its count column, nor that its cluster numbers are whole: the
    C cophenetic distances took a count of 10**6 as the number of members to copy and write
    (read and written past its arrays, SIGSEGV), and a NaN cluster number became a C int
    taken as an index. A valid linkage now also has finite whole cluster numbers and each
    merge's count the sum of its two clusters' counts (an observation's is 1): every
    function that hands a linkage to the kernels (cophenet, fcluster, inconsistent, maxdists,
    maxinconsts, maxRstat, leaders, leaves_list, optimal_leaf_ordering, to_tree, dendrogram)
    checks it so first."""
    import numpy as np
    from scipy.cluster import hierarchy
    real = hierarchy.is_valid_linkage

    def is_valid_linkage(Z, warning=False, throw=False, name=None):
        if not real(Z, warning=warning, throw=throw, name=name):
            return False
        Z = np.asarray(Z, order='c')
        name_str = '%r ' % name if name else ''
        try:
            n = Z.shape[0] + 1
            ids = Z[:, :2]
            if not (np.isfinite(ids).all() and (ids == np.floor(ids)).all() and
                    (ids >= 0).all()):
                raise ValueError('Linkage %scontains cluster numbers that are not whole '
                                 'numbers from 0.' % name_str)
            ids = ids.astype(np.intp)
            counts = np.ones(2 * n - 1)
            for i in range(n - 1):
                counts[n + i] = counts[ids[i, 0]] + counts[ids[i, 1]]
            if not np.array_equal(counts[n:], Z[:, 3]):
                raise ValueError('Linkage %shas counts that are not the sums of its '
                                 'clusters\' counts.' % name_str)
        except Exception as e:
            if throw:
                raise
            if warning:
                hierarchy._warning(str(e))
            return False
        return True

    is_valid_linkage.__doc__ = real.__doc__
    is_valid_linkage.__module__ = real.__module__
    _replace_everywhere(real, is_valid_linkage)


def _hierarchy_kernels():
    """scipy.cluster.hierarchy checks a linkage (is_valid_linkage, the sandbox's) and then
    converts numbers of the code's (fcluster's t by its __float__, inconsistent's d by its
    __int__) before its compiled kernels walk the same array, the code's own: a linkage edited
    in between (a cluster number 2**26 past the last) had fcluster's walk read and write at
    that index (SIGSEGV). from_mlab_linkage checked its cluster numbers by their minimum or
    their maximum, and calculate_cluster_sizes read sizes at any of them. Each kernel gets
    numbers converted first and copies of what it reads (the linkage, R, monocrit, T, the
    distances), checked as they are; the arrays it writes are scipy's, of the sizes it writes."""
    import operator
    import numpy as np
    from scipy.cluster import _hierarchy, hierarchy

    def count(n):
        n = operator.index(n)
        if not 2 <= n < 2 ** 31:
            raise ValueError('the number of observations must be from 2 to 2**31 - 1')
        return n

    def read(a, shape, dtype):
        a = np.array(a, dtype=dtype, order='C')
        if a.shape != shape:
            raise ValueError('an array of shape %s was given where %s is read' % (a.shape,
                                                                                  shape))
        return a

    def written(a, shape, dtype):
        if type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape or \
                not a.flags.c_contiguous or not a.flags.writeable:
            raise ValueError('the result array must be %s of shape %s' % (np.dtype(dtype),
                                                                          shape))
        return np.ndarray.view(a)

    def tree(Z, n):
        Z = read(Z, (n - 1, 4), np.float64)
        hierarchy.is_valid_linkage(Z, throw=True, name='Z')
        return Z

    def merges(Z, n):
        # (sizes not yet counted: each merge joins two clusters made before it)
        Z = np.array(Z, dtype=np.float64, order='C')
        if Z.ndim != 2 or Z.shape[0] != n - 1 or Z.shape[1] < 2:
            raise ValueError('the linkage must have %d rows' % (n - 1))
        ids = Z[:, :2]
        if not (np.isfinite(ids).all() and (ids == np.floor(ids)).all() and (ids >= 0).all()
                and (ids < n + np.arange(n - 1)[:, None]).all()):
            raise ValueError('each merge must join two clusters made before it')
        return Z

    f8, i4 = np.float64, np.intc

    def cophenetic_distances(Z, d, n):
        n = count(n)
        return k['cophenetic_distances'](tree(Z, n), written(d, (n * (n - 1) // 2,), f8), n)

    def inconsistent(Z, R, n, d):
        n, d = count(n), operator.index(d)
        return k['inconsistent'](tree(Z, n), written(R, (n - 1, 4), f8), n, d)

    def calculate_cluster_sizes(Z, cs, n):
        n = count(n)
        return k['calculate_cluster_sizes'](merges(Z, n), written(cs, (n - 1,), f8), n)

    def cluster_in(Z, R, T, cutoff, n):
        cutoff, n = float(cutoff), count(n)
        return k['cluster_in'](tree(Z, n), read(R, (n - 1, 4), f8), written(T, (n,), i4),
                               cutoff, n)

    def cluster_dist(Z, T, cutoff, n):
        cutoff, n = float(cutoff), count(n)
        return k['cluster_dist'](tree(Z, n), written(T, (n,), i4), cutoff, n)

    def cluster_maxclust_dist(Z, T, n, mc):
        n, mc = count(n), operator.index(mc)
        return k['cluster_maxclust_dist'](tree(Z, n), written(T, (n,), i4), n, mc)

    def cluster_monocrit(Z, MC, T, cutoff, n):
        cutoff, n = float(cutoff), count(n)
        return k['cluster_monocrit'](tree(Z, n), read(MC, (n - 1,), f8),
                                     written(T, (n,), i4), cutoff, n)

    def cluster_maxclust_monocrit(Z, MC, T, n, max_nc):
        n, max_nc = count(n), operator.index(max_nc)
        return k['cluster_maxclust_monocrit'](tree(Z, n), read(MC, (n - 1,), f8),
                                              written(T, (n,), i4), n, max_nc)

    def prelist(Z, members, n):
        n = count(n)
        return k['prelist'](tree(Z, n), written(members, (n,), i4), n)

    def get_max_dist_for_each_cluster(Z, MD, n):
        n = count(n)
        return k['get_max_dist_for_each_cluster'](tree(Z, n), written(MD, (n - 1,), f8), n)

    def get_max_Rfield_for_each_cluster(Z, R, max_rfs, n, rf):
        n, rf = count(n), operator.index(rf)
        if not 0 <= rf <= 3:
            raise ValueError('the column of R must be from 0 to 3')
        return k['get_max_Rfield_for_each_cluster'](
            tree(Z, n), read(R, (n - 1, 4), f8), written(max_rfs, (n - 1,), f8), n, rf)

    def leaders(Z, T, L, M, nc, n):
        n, nc = count(n), operator.index(nc)
        T = read(T, (n,), i4)
        if nc != len(np.unique(T)):
            raise ValueError('the number of flat clusters is not the number in T')
        return k['leaders'](tree(Z, n), T, written(L, (nc,), i4), written(M, (nc,), i4), nc,
                            n)

    def distances(name):
        def f(dists, n, *method):
            n = count(n)
            method = [operator.index(m) for m in method]
            if method and not 0 <= method[0] <= 6:
                raise ValueError('the method must be from 0 to 6')
            return k[name](read(dists, (n * (n - 1) // 2,), f8), n, *method)
        f.__name__ = f.__qualname__ = name
        return f

    checked = [cophenetic_distances, inconsistent, calculate_cluster_sizes, cluster_in,
               cluster_dist, cluster_maxclust_dist, cluster_monocrit, cluster_maxclust_monocrit,
               prelist, get_max_dist_for_each_cluster, get_max_Rfield_for_each_cluster,
               leaders] + [distances(name) for name in ('linkage', 'nn_chain', 'fast_linkage',
                                                         'mst_single_linkage')]
    k = {f.__name__: getattr(_hierarchy, f.__name__) for f in checked}
    for f in checked:
        f.__doc__ = k[f.__name__].__doc__
        setattr(_hierarchy, f.__name__, f)


def _spline_inputs():
    """scipy.interpolate's tck functions hand the knots, coefficients and degree to FITPACK as
    given: a degree past the knots (splev with k=1000) or an unbounded integral (splint to NaN)
    read past the arrays (SIGSEGV). A (t, c, k) tuple is checked first: a degree of 1 to 5, at
    least 2k+2 finite knots in order, enough coefficients, finite bounds; a BSpline object is
    its own check. The same functions of _fitpack_impl are checked too (UnivariateSpline and
    its kind call them with their _eval_args, an attribute: a degree of 1000 set there read far
    past the knots), and so are the FITPACK routines that BivariateSpline and its kind
    (RectBivariateSpline, SmoothSphereBivariateSpline...) call with their tck and degrees
    (bispev, parder, bispeu, pardeu, pardtc, dblint): two negative factors made f2py's
    coefficient count (nx-kx-1)*(ny-ky-1) right for degrees past the knots."""
    import operator
    import numpy as np
    from scipy import interpolate
    from scipy.interpolate import _fitpack_py, _fitpack_impl

    def degree(k):
        k = operator.index(k)
        if not 0 <= k <= 5:
            raise ValueError('the spline degree k must be 0 to 5 (got %d)' % k)
        return k

    def knots(t, k):
        t = np.asarray(t, dtype=float)
        if t.ndim != 1 or len(t) < 2 * k + 2 or not np.isfinite(t).all() or (np.diff(t) < 0).any():
            raise ValueError('the knots t must be at least 2k+2 finite values in order')
        return t

    def coefficients(c, n):
        if isinstance(c, (list, tuple)) and c and np.ndim(c[0]) > 0:
            c = [np.asarray(ci, dtype=float) for ci in c]  # a parametric spline's
            short = any(ci.ndim != 1 or len(ci) < n for ci in c)
        else:
            c = np.asarray(c, dtype=float)
            short = c.ndim < 1 or len(c) < n
        if short:
            raise ValueError('the coefficients c must hold at least len(t)-k-1 values')
        return c

    def tck_checked(tck):
        # scipy's own BSpline only (its attributes are checked as they are read): a
        # subclass's __iter__ unpacked to any (t, c, k) for FITPACK, and is checked as that
        if type(tck) is interpolate.BSpline:
            return tck
        t, c, k = tck
        k = degree(k)
        t = knots(t, k)
        return (t, coefficients(c, len(t) - k - 1), k)

    def finite(v, what):
        # (the value checked is the one handed on: a bound's __float__ answered 1.0 to the
        # check and NaN to FITPACK)
        a = np.array(v, dtype=float)
        if not np.isfinite(a).all():
            raise ValueError('%s must be finite' % what)
        return a.item() if a.ndim == 0 else a

    names = ('splev', 'splint', 'sproot', 'spalde', 'splder', 'splantider', 'insert')
    bisplev_real = _fitpack_impl.bisplev

    def checked_tck(real):
        def splev(x, tck, der=0, ext=0):
            return real['splev'](x, tck_checked(tck), der, ext)

        def splint(a, b, tck, full_output=0):
            return real['splint'](finite(a, 'a'), finite(b, 'b'), tck_checked(tck),
                                  full_output)

        def sproot(tck, mest=10):
            return real['sproot'](tck_checked(tck), mest)

        def spalde(x, tck):
            return real['spalde'](x, tck_checked(tck))

        def splder(tck, n=1):
            return real['splder'](tck_checked(tck), n)

        def splantider(tck, n=1):
            return real['splantider'](tck_checked(tck), n)

        def insert(x, tck, m=1, per=0):
            return real['insert'](finite(x, 'x'), tck_checked(tck), m, per)

        return [(splev, real['splev']), (splint, real['splint']),
                (sproot, real['sproot']), (spalde, real['spalde']),
                (splder, real['splder']), (splantider, real['splantider']),
                (insert, real['insert'])]

    def surface(tx, ty, c, kx, ky):
        kx, ky = degree(kx), degree(ky)
        tx, ty = knots(tx, kx), knots(ty, ky)
        c = coefficients(np.ravel(np.asarray(c, dtype=float)), (len(tx) - kx - 1) * (len(ty) - ky - 1))
        return tx, ty, c, kx, ky

    def bisplev(x, y, tck, dx=0, dy=0):
        tx, ty, c, kx, ky = tck
        return bisplev_real(x, y, surface(tx, ty, c, kx, ky), dx, dy)

    def surface_checked(orig):
        def routine(tx, ty, c, kx, ky, *args):
            return orig(*surface(tx, ty, c, kx, ky), *args)
        routine.__name__ = routine.__qualname__ = orig.__name__
        return routine

    dfitpack = interpolate.dfitpack
    pairs = (checked_tck({name: getattr(_fitpack_py, name) for name in names}) +
             checked_tck({name: getattr(_fitpack_impl, name) for name in names}) +
             [(bisplev, bisplev_real)] +
             [(surface_checked(getattr(dfitpack, name)), getattr(dfitpack, name))
              for name in ('bispev', 'parder', 'bispeu', 'pardeu', 'pardtc', 'dblint')])
    for f, orig in pairs:
        f.__doc__, f.__module__ = orig.__doc__, getattr(orig, '__module__', f.__module__)
    _replace_all({id(orig): (orig, f) for f, orig in pairs})


def _ode_integrators():
    """scipy.integrate.ode's integrators (vode, zvode, lsoda) keep the problem's size and the
    offsets into their work arrays in Fortran COMMON between calls, and a continuation (istate
    2) used them with whatever state vector and work arrays the call was given: r._y set to a
    shorter array (or rwork/iwork replaced, edited, or cut short) and the next integrate()
    wrote past them (contents of the user's choice). The work arrays were the user's
    (r._integrator.rwork, .iwork), also during the call from the callbacks, which were given
    views of Fortran's buffers (kept, they outlived them); dop853 read y at the dense output
    component numbers of iwork unchecked; and Fortran's own check of the work lengths wraps
    past 2**31. The integrator classes now call each Fortran routine (their runner, which the
    sandbox gives library code only) through a checked one: a start (istate 1) checks the
    work arrays' lengths against the problem in Python's integers and hands Fortran private
    copies; a continuation runs only the problem its routine last started, with that start's
    private arrays and a state vector of its length (the user's arrays receive a copy after
    each call); a routine is not entered again from its own callbacks; the callbacks get
    copies; dopri5/dop853's dense output components lie within y."""
    import functools
    import operator
    import warnings
    import numpy as np
    from scipy.integrate import _ode, _vode, _lsoda, _dop

    biggest = (1 << 31) - 1
    started = {}  # routine -> (n, method flag, private work arrays) of the problem in COMMON
    running = set()

    def fail(what):
        raise ValueError(what)

    def vector(y, dtype):
        y = np.array(y, dtype=dtype)
        if y.ndim != 1:
            fail('the state vector y must be one-dimensional')
        return y

    def private(a, dtype, what):
        a = np.array(a, dtype=dtype)
        if a.ndim != 1:
            fail('%s must be one-dimensional' % what)
        return a

    def called(g, extra, t, y):
        return g(t, np.array(y), *extra)

    def copied(g, extra):
        # A partial, not a function: f2py counts a function's arguments from its __code__,
        # which the sandbox shows library code only for its own reads.
        return functools.partial(called, g, extra)

    def order(v, most):
        v = int(v)
        return most if v <= 0 else min(v, most)

    def band(iw, n):
        ml, mu = int(iw[0]), int(iw[1])
        if not (0 <= ml < n and 0 <= mu < n):
            fail('the band widths (lband, uband) must lie within the %d equations' % n)
        return ml, mu

    def vode_need(n, mf, arrays, complex_):
        iw = arrays[-1]
        meth, miter, jco = abs(mf) // 10, abs(mf) % 10, int(mf > 0)
        if meth not in (1, 2) or miter > 5 or len(iw) < 30:
            fail('unknown method flag mf=%d (or iwork shorter than 30)' % mf)
        maxord = order(iw[4], 12 if meth == 1 else 5)
        if miter in (1, 2):
            wm = (1 + jco) * n * n
        elif miter == 3:
            wm = n
        elif miter in (4, 5):
            ml, mu = band(iw, n)
            wm = (2 * ml + mu + 1) * n + jco * (ml + mu + 1) * n
        else:
            wm = 0
        liw = 30 if miter in (0, 3) else 30 + n
        if complex_:
            return ((maxord + 1) * n + wm + 2 * n, 20 + n, liw)
        return (20 + (maxord + 1) * n + (wm + 2 if miter else 0) + 3 * n, liw)

    def lsoda_need(n, jt, arrays):
        iw = arrays[-1]
        if jt not in (1, 2, 4, 5) or len(iw) < 20:
            fail('unknown Jacobian type jt=%d (or iwork shorter than 20)' % jt)
        mxordn, mxords = order(iw[7], 12), order(iw[8], 5)
        if jt in (1, 2):
            stiff = 22 + (mxords + 4) * n + n * n
        else:
            ml, mu = band(iw, n)
            stiff = 22 + (mxords + 5 + 2 * ml + mu) * n
        return (max(20 + (mxordn + 4) * n, stiff), 20 + n)

    def run(name, y, istate, flag, given, need, tcrit, call):
        """given: [(the user's array, dtype, name)]; call(private arrays) -> the routine's
        answer, its last item the state it returns."""
        if name in running:
            raise RuntimeError('%s cannot be called from inside its own callbacks' % name)
        n = len(y)
        if istate == 1:
            arrays = [private(a, dtype, what) for a, dtype, what in given]
            for a, least, (_, _, what) in zip(arrays, need(n, flag, arrays), given):
                if least > biggest:
                    fail('the problem is too large for the integrator')
                if len(a) < least:
                    fail('%s must hold at least %d values for %d equations'
                         % (what, least, n))
        elif istate == 2:
            held = started.get(name)
            if held is None or held[0] != n or held[1] != flag:
                fail('the integration cannot continue: its state vector or method is not the '
                     'one it started with (set_initial_value starts it again)')
            arrays = held[2]
            if tcrit is not None:
                arrays[0][0] = tcrit
        else:
            fail('istate must be 1 (a start) or 2 (a continuation)')
        started.pop(name, None)
        running.add(name)
        try:
            answer = call(arrays)
        finally:
            running.discard(name)
        if answer[-1] != -3:
            started[name] = (n, flag, arrays)
        for (a, _, _), mine in zip(given, arrays):
            if isinstance(a, np.ndarray) and a.shape == mine.shape and \
                    a.dtype == mine.dtype and a.flags.writeable:
                a[...] = mine
        return answer

    def first(rwork):
        r = np.asarray(rwork, dtype=float).ravel()
        return float(r[0]) if r.size else None

    vint, lint, dint = _ode._vode_int_dtype, _ode._lsoda_int_dtype, _ode._dop_int_dtype
    real = {'dvode': _vode.dvode, 'zvode': _vode.zvode, 'lsoda': _lsoda.lsoda,
            'dopri5': _dop.dopri5, 'dop853': _dop.dop853}

    def dvode(f, jac, y, t, tout, rtol, atol, itask, istate, rwork, iwork, mf,
              f_extra_args=(), jac_extra_args=(), overwrite_y=0):
        y, mf, istate = vector(y, float), operator.index(mf), operator.index(istate)
        f, jac = copied(f, tuple(f_extra_args)), copied(jac, tuple(jac_extra_args))
        return run('dvode', y, istate, mf, [(rwork, float, 'rwork'), (iwork, vint, 'iwork')],
                   lambda n, mf, a: vode_need(n, mf, a, False), first(rwork),
                   lambda a: real['dvode'](f, jac, y, t, tout, rtol, atol, itask, istate,
                                           a[0], a[1], mf, (), (), 1))

    def zvode(f, jac, y, t, tout, rtol, atol, itask, istate, zwork, rwork, iwork, mf,
              f_extra_args=(), jac_extra_args=(), overwrite_y=0):
        y, mf, istate = vector(y, complex), operator.index(mf), operator.index(istate)
        f, jac = copied(f, tuple(f_extra_args)), copied(jac, tuple(jac_extra_args))
        tcrit = first(rwork)
        given = [(rwork, float, 'rwork'), (zwork, complex, 'zwork'), (iwork, vint, 'iwork')]
        return run('zvode', y, istate, mf, given,
                   lambda n, mf, a: (lambda z, r, i: (r, z, i))(
                       *vode_need(n, mf, a, True)), tcrit,
                   lambda a: real['zvode'](f, jac, y, t, tout, rtol, atol, itask, istate,
                                           a[1], a[0], a[2], mf, (), (), 1))

    def lsoda(f, y, t, tout, rtol, atol, itask, istate, rwork, iwork, jac, jt,
              f_extra_args=(), overwrite_y=0, jac_extra_args=()):
        y, jt, istate = vector(y, float), operator.index(jt), operator.index(istate)
        f, jac = copied(f, tuple(f_extra_args)), copied(jac, tuple(jac_extra_args))
        return run('lsoda', y, istate, jt, [(rwork, float, 'rwork'), (iwork, lint, 'iwork')],
                   lsoda_need, first(rwork),
                   lambda a: real['lsoda'](f, y, t, tout, rtol, atol, itask, istate, a[0],
                                           a[1], jac, jt, (), 1, ()))

    def dense(solout, extra, nr, xold, x, y, con, icomp, nd):
        return solout(nr, xold, x, np.array(y), np.array(con), np.array(icomp), nd, *extra)

    def dop(name, stages, coefficients):
        def routine(fcn, x, y, xend, rtol, atol, solout, iout, work, iwork,
                    fcn_extra_args=(), overwrite_y=0, solout_extra_args=()):
            y = vector(y, float)
            n = len(y)
            mine = [private(work, float, 'work'), private(iwork, dint, 'iwork')]
            nrdens = int(mine[1][4]) if len(mine[1]) > 4 else -1
            if not 0 <= nrdens <= n:
                fail('the number of dense output components must be 0 to %d' % n)
            if len(mine[1]) < 21 + nrdens or len(mine[0]) < 21 + stages * n + coefficients * nrdens:
                fail('work must hold at least %d values and iwork %d'
                     % (21 + stages * n + coefficients * nrdens, 21 + nrdens))
            icomp = mine[1][20:20 + nrdens]
            if nrdens < n and ((icomp < 1) | (icomp > n)).any():
                fail('the dense output components must be numbers 1 to %d' % n)
            if name in running:
                raise RuntimeError('%s cannot be called from inside its own callbacks' % name)
            f = copied(fcn, tuple(fcn_extra_args))
            out = functools.partial(dense, solout, tuple(solout_extra_args))
            running.add(name)
            try:
                answer = real[name](f, x, y, xend, rtol, atol, out, iout, mine[0], mine[1],
                                    (), 1, ())
            finally:
                running.discard(name)
            for a, m in zip((work, iwork), mine):
                if isinstance(a, np.ndarray) and a.shape == m.shape and \
                        a.dtype == m.dtype and a.flags.writeable:
                    a[...] = m
            return answer
        return routine

    wrapped = {'dvode': dvode, 'zvode': zvode, 'lsoda': lsoda,
               'dopri5': dop('dopri5', 8, 5), 'dop853': dop('dop853', 11, 8)}
    checked = {id(f): (f, wrapped[name]) for name, f in real.items()}

    def through(self):
        # The class's runner (a raw wrapper, which the sandbox gives library code only) is
        # called through its checked routine.
        f = self.runner
        pair = checked.get(id(f))
        return pair[1] if pair is not None and pair[0] is f else f

    def failed(self, istate):
        warnings.warn('{:s}: {:s}'.format(self.__class__.__name__, self.messages.get(
            istate, 'Unexpected istate={:d}'.format(istate))))
        self.success = 0

    # The classes' run, as scipy's, but for the routine they call.
    def settled(self, istate):
        # As scipy's vode and lsoda end a run: a failure said, or the next one a continuation.
        self.istate = istate
        if istate < 0:
            failed(self, istate)
        else:
            self.call_args[3] = 2
            self.istate = 2

    def vode_run(self, f, jac, y0, t0, t1, f_params, jac_params):
        if self.initialized:
            self.check_handle()
        else:
            self.initialized = True
            self.acquire_new_handle()
        if self.ml is not None and self.ml > 0:
            jac = _ode._vode_banded_jac_wrapper(jac, self.ml, jac_params)
        args = ((f, jac, y0, t0, t1) + tuple(self.call_args) + (f_params, jac_params))
        y1, t, istate = through(self)(*args)
        settled(self, istate)
        return y1, t

    def lsoda_run(self, f, jac, y0, t0, t1, f_params, jac_params):
        if self.initialized:
            self.check_handle()
        else:
            self.initialized = True
            self.acquire_new_handle()
        args = [f, y0, t0, t1] + self.call_args[:-1] + \
            [jac, self.call_args[-1], f_params, 0, jac_params]
        y1, t, istate = through(self)(*args)
        settled(self, istate)
        return y1, t

    def dop_run(self, f, jac, y0, t0, t1, f_params, jac_params):
        x, y, iwork, istate = through(self)(*((f, t0, y0, t1) + tuple(self.call_args) +
                                              (f_params,)))
        self.istate = istate
        if istate < 0:
            failed(self, istate)
        return y, x

    for cls, run_ in ((_ode.vode, vode_run), (_ode.lsoda, lsoda_run),
                      (_ode.dopri5, dop_run)):
        run_.__name__, run_.__qualname__ = 'run', cls.__name__ + '.run'
        run_.__doc__, run_.__module__ = cls.run.__doc__, cls.__module__
        cls.run = run_


def _voronoi_regions():
    """SphericalVoronoi's sort_vertices_of_regions (and calculate_areas, which sorts first)
    hands its regions (a plain list, the user's to edit) and simplices to compiled code that
    reads simplices[v] for each number v a region holds, unchecked (SIGSEGV, or rows read past
    the array). It now gets copies, checked: the simplices a C-ordered array of int rows of
    three, each region a list of numbers within them; the sorted regions are put back."""
    import operator
    import numpy as np
    from scipy.spatial import _voronoi

    real = _voronoi.sort_vertices_of_regions

    def sort_vertices_of_regions(simplices, regions):
        simplices = np.array(simplices, dtype=np.intc, order='C')
        if simplices.ndim != 2 or simplices.shape[1] != 3:
            raise ValueError('the simplices should be rows of three vertex numbers')
        checked = [[operator.index(v) for v in region] for region in regions]
        n = len(simplices)
        if any(not 0 <= v < n for region in checked for v in region):
            raise ValueError('a region names a simplex past the %d there are' % n)
        real(simplices, checked)
        for i, region in enumerate(checked):
            regions[i] = region

    sort_vertices_of_regions.__doc__ = real.__doc__
    sort_vertices_of_regions.__module__ = getattr(real, '__module__', None)
    _replace_everywhere(real, sort_vertices_of_regions)


def _delaunay_checks():
    """Delaunay's arrays (simplices, neighbors, equations, points, the cached transform and
    vertex_to_simplex, the sizes ndim/npoints/nsimplex) are plain attributes, read unchecked
    by its compiled methods and by the interpolators built on it: simplices or neighbors
    edited in place, then find_simplex, tsearch, transform, vertex_to_simplex,
    vertex_neighbor_vertices, convex_hull, LinearNDInterpolator or CloughTocher2DInterpolator
    read and wrote past them (SIGSEGV). The compiled code now gets a triangulation of its own:
    copies of the arrays, read once, with their shapes in agreement, vertex numbers within the
    points, neighbors within the simplices; the interpolators' values and gradients hold a row
    for each point and their queries the triangulation's dimension."""
    import operator
    import types
    import numpy as np
    from scipy.spatial import _qhull
    from scipy.interpolate import interpnd

    Delaunay = _qhull.Delaunay

    def fail(what):
        raise ValueError('the triangulation is not consistent: ' + what)

    def numbers(a, shape, low, high, what):
        a = np.array(a)
        if a.dtype.kind not in 'iu' or a.shape != shape:
            fail('%s must be integers of shape %s' % (what, shape))
        if a.size and (a.min() < low or a.max() >= high):
            fail('%s must lie in [%d, %d)' % (what, low, high))
        return np.ascontiguousarray(a, dtype=np.intc)

    def reals(a, shape, what):
        a = np.array(a, dtype=np.double)
        if a.shape != shape:
            fail('%s must be of shape %s' % (what, shape))
        return np.ascontiguousarray(a)

    def own(tri, transform=False, vertex_to_simplex=False, neighbor_vertices=False):
        """A triangulation of checked copies of tri's arrays (the compiled code reads it)."""
        points = np.array(tri.points, dtype=np.double)
        if points.ndim != 2 or not 1 <= points.shape[1] < 32 or len(points) > (1 << 31) - 2:
            fail('points must be an npoints by ndim array, ndim below 32')
        npoints, ndim = points.shape
        simplices = np.array(tri.simplices)
        if simplices.ndim != 2 or len(simplices) > (1 << 31) - 2:
            fail('simplices must be an nsimplex by ndim+1 array')
        nsimplex = len(simplices)
        t = types.SimpleNamespace(
            points=np.ascontiguousarray(points), ndim=ndim, npoints=npoints, nsimplex=nsimplex,
            simplices=numbers(simplices, (nsimplex, ndim + 1), 0, npoints, 'simplices'),
            neighbors=numbers(tri.neighbors, (nsimplex, ndim + 1), -1, nsimplex, 'neighbors'),
            equations=reals(tri.equations, (nsimplex, ndim + 2), 'equations'),
            min_bound=reals(tri.min_bound, (ndim,), 'min_bound'),
            max_bound=reals(tri.max_bound, (ndim,), 'max_bound'),
            paraboloid_scale=float(tri.paraboloid_scale),
            paraboloid_shift=float(tri.paraboloid_shift))
        coplanar = np.array(getattr(tri, 'coplanar', np.zeros((0, 3), np.intc)))
        if coplanar.ndim != 2 or coplanar.shape[1] != 3:
            fail('coplanar must have 3 columns')
        t.coplanar = numbers(coplanar, coplanar.shape, 0, max(npoints, nsimplex), 'coplanar')
        if len(coplanar) and (t.coplanar[:, 0].max() >= npoints or
                              t.coplanar[:, 2].max() >= nsimplex):
            fail('coplanar points and simplices must lie within the triangulation')
        if transform:
            t.transform = reals(tri.transform, (nsimplex, ndim + 1, ndim), 'transform')
        if vertex_to_simplex:
            t.vertex_to_simplex = numbers(tri.vertex_to_simplex, (npoints,), -1, nsimplex,
                                          'vertex_to_simplex')
        if neighbor_vertices:
            indptr, indices = tri.vertex_neighbor_vertices
            indices = np.array(indices)
            if indices.ndim != 1:
                fail('vertex_neighbor_vertices indices must be one-dimensional')
            indices = numbers(indices, indices.shape, 0, npoints,
                              'vertex_neighbor_vertices indices')
            indptr = numbers(indptr, (npoints + 1,), 0, len(indices) + 1,
                             'vertex_neighbor_vertices indptr')
            if (np.diff(indptr) < 0).any():
                fail('vertex_neighbor_vertices indptr must not decrease')
            t.vertex_neighbor_vertices = (indptr, indices)
        return t

    props = {name: Delaunay.__dict__[name] for name in
             ('transform', 'vertex_to_simplex', 'vertex_neighbor_vertices', 'convex_hull')}

    def cached(name, made):
        def get(self):
            if getattr(self, made) is None:
                t = own(self)
                setattr(t, made, None)
                value = _own_quiet(props[name].fget, t)
                setattr(self, made, value)
            return getattr(self, made)
        return property(get, None, None, props[name].__doc__)

    Delaunay.transform = cached('transform', '_transform')
    Delaunay.vertex_to_simplex = cached('vertex_to_simplex', '_vertex_to_simplex')
    Delaunay.vertex_neighbor_vertices = cached('vertex_neighbor_vertices',
                                               '_vertex_neighbor_vertices')
    hull = props['convex_hull']
    Delaunay.convex_hull = property(lambda self: _own_quiet(hull.fget, own(self)), None, None,
                                    hull.__doc__)
    _own_methods(_qhull._Qhull)
    # qhull keeps the list of ridges it hands out, and frees it at its next diagram, inside
    # that call's own_arrays scope: what the code had put in it died there, and a library
    # finalizer (a text wrapper closing the code's object, a generator's finally block) ran
    # the code's C callables with no frame (V66a H1-H2). The code gets copies.
    voronoi = type_patches[(_qhull._Qhull, 'get_voronoi_diagram')]

    def get_voronoi_diagram(self):
        vertices, ridge_points, ridge_vertices, regions, point_region = voronoi(self)
        return (vertices, ridge_points.copy(), [list(r) for r in ridge_vertices], regions,
                point_region)
    get_voronoi_diagram.__doc__ = voronoi.__doc__
    get_voronoi_diagram._own_arrays = True
    type_patches[(_qhull._Qhull, 'get_voronoi_diagram')] = get_voronoi_diagram

    find_simplex, plane_distance = Delaunay.find_simplex, Delaunay.plane_distance

    def find_simplex_checked(self, xi, bruteforce=False, tol=None):
        return find_simplex(own(self, transform=True), xi, bruteforce, tol)

    def plane_distance_checked(self, xi):
        return plane_distance(own(self), xi)

    for f, orig in ((find_simplex_checked, find_simplex),
                    (plane_distance_checked, plane_distance)):
        f.__name__ = f.__qualname__ = orig.__name__
        f.__doc__ = orig.__doc__
        setattr(Delaunay, orig.__name__, f)

    def interpolator(cls, cubic):
        evaluate = cls.__dict__['_do_evaluate']

        def _do_evaluate(self, xi, dummy):
            # the fill value converted first (its __float__ reshaped the values after their
            # check), the arrays new objects no code holds
            fill = complex(self.fill_value) if isinstance(dummy, complex) \
                else float(self.fill_value)
            tri = own(self.tri, transform=True, vertex_to_simplex=cubic)
            xi = np.ndarray.view(np.ascontiguousarray(xi, dtype=np.double))
            values = np.ndarray.view(np.ascontiguousarray(self.values))
            if xi.ndim != 2 or xi.shape[1] != tri.ndim or (cubic and tri.ndim != 2):
                raise ValueError('the points must have the dimension of the triangulation')
            if values.ndim != 2 or len(values) < tri.npoints:
                raise ValueError('values must hold a row for each point of the triangulation')
            me = types.SimpleNamespace(tri=tri, values=values, fill_value=fill,
                                       points=np.ascontiguousarray(self.points,
                                                                   dtype=np.double))
            if cubic:
                grad = np.ndarray.view(np.asarray(self.grad))
                if grad.ndim != 3 or len(grad) < tri.npoints or \
                        grad.shape[1] < values.shape[1] or grad.shape[2] < 2:
                    raise ValueError('the gradients must hold one for each point and value')
                me.grad = grad
            return evaluate(me, xi, dummy)
        _do_evaluate.__doc__ = evaluate.__doc__
        cls._do_evaluate = _do_evaluate

    interpolator(interpnd.LinearNDInterpolator, False)
    interpolator(interpnd.CloughTocher2DInterpolator, True)

    gradients = interpnd.estimate_gradients_2d_global

    def estimate_gradients_2d_global(tri, y, maxiter=400, tol=1e-6):
        tri = own(tri, neighbor_vertices=True)
        if tri.ndim != 2:
            raise ValueError('the triangulation must be two-dimensional')
        return gradients(tri, y, operator.index(maxiter),
                         float(tol))
    estimate_gradients_2d_global.__doc__ = gradients.__doc__
    _replace_everywhere(gradients, estimate_gradients_2d_global)

    ct = interpnd.CloughTocher2DInterpolator
    ct_init = ct.__dict__['__init__']

    def __init__(self, points, values, fill_value=np.nan, tol=1e-6, maxiter=400,
                 rescale=False):
        if isinstance(points, Delaunay):
            d = Delaunay.__new__(Delaunay)
            t = own(points, vertex_to_simplex=True, neighbor_vertices=True)
            d.__dict__.update(vars(t))
            d._points, d._qhull, d._transform = t.points, None, None
            d._vertex_to_simplex = t.vertex_to_simplex
            d._vertex_neighbor_vertices = t.vertex_neighbor_vertices
            d.good = np.zeros(t.nsimplex, np.intc)
            points = d
        values = np.asarray(values)
        fill_value = complex(fill_value) if np.iscomplexobj(values) else float(fill_value)
        me = types.SimpleNamespace()
        ct_init(me, points, values, fill_value, float(tol), operator.index(maxiter),
                bool(rescale))
        for k, v in vars(me).items():
            setattr(self, k, v)
    __init__.__doc__ = ct_init.__doc__
    ct.__init__ = __init__


def _grid_kernels():
    """RegularGridInterpolator's grid is a plain attribute: replaced after construction
    (g.grid = longer arrays), its compiled kernels found cells past the values and read there
    (find_indices reads a grid for each coordinate of the points, evaluate_linear_2d the
    values at the cells found, with no bounds checks). Both kernels check their arguments
    first: a grid of non-empty float arrays for each coordinate, the cells found within
    values (a cell and the next along each axis used), the outputs the points' size."""
    import numpy as np
    from scipy.interpolate import _rgi_cython
    find_real, linear_real = _rgi_cython.find_indices, _rgi_cython.evaluate_linear_2d

    def axes(grid, count):
        if not isinstance(grid, tuple) or len(grid) < count:
            raise ValueError('the grid must be a tuple of %d arrays' % count)
        grid = tuple(np.ascontiguousarray(g, dtype=np.double) for g in grid)
        if any(g.ndim != 1 or len(g) < 1 for g in grid):
            raise ValueError('each axis of the grid must be a non-empty 1-D array')
        return grid

    def find_indices(grid, xi):
        xi = np.asarray(xi, dtype=np.double)
        if xi.ndim != 2:
            raise ValueError('the points must be a 2-D array, a row for each coordinate')
        return find_real(axes(grid, len(xi)), xi)

    def evaluate_linear_2d(values, indices, norm_distances, grid, out):
        grid = axes(grid, 2)
        values, indices = np.asarray(values), np.asarray(indices)
        norm_distances, out = np.asarray(norm_distances), np.asarray(out)
        if values.ndim != 2 or indices.ndim != 2 or len(indices) < 2 or \
                norm_distances.shape[:1] != indices.shape[:1] or \
                norm_distances.ndim != 2 or norm_distances.shape[1] < indices.shape[1] or \
                out.shape != indices.shape[1:]:
            raise ValueError('the values, indices, distances and output do not agree')
        used = (0,) if len(grid[1]) == 1 else (1,) if len(grid[0]) == 1 else (0, 1)
        for axis in used:
            cells = indices[axis]
            if (cells >= values.shape[axis] - 1).any() or values.shape[1 - axis] < 1:
                raise IndexError('the grid does not match the values: a cell lies past them')
        return linear_real(values, indices, norm_distances, grid, out)

    pairs = [(find_indices, find_real), (evaluate_linear_2d, linear_real)]
    for f, orig in pairs:
        f.__doc__ = orig.__doc__
    _replace_all({id(orig): (orig, f) for f, orig in pairs})


def _sepfir2d_checks():
    """sepfir2d filters an image's rows and columns with mirror-symmetric boundaries, reading
    and writing half a filter's length from each end: a filter longer than the image (a
    101-tap row filter on a 5-wide image) wrote past the rows and past the temporary buffer
    (heap overflow), and an image of more than 2**31 elements (a broadcast view) wrapped the
    buffer's size. The filters are checked against the image first, wherever sepfir2d is
    named."""
    import numpy as np
    from scipy.signal import _spline
    real = _spline.sepfir2d

    def sepfir2d(input, hrow, hcol):
        image = np.asarray(input)
        hrow, hcol = np.asarray(hrow), np.asarray(hcol)
        if image.ndim != 2 or hrow.ndim != 1 or hcol.ndim != 1:
            raise ValueError('sepfir2d takes a 2-D image and two 1-D filters')
        rows, cols = image.shape
        if rows * cols > (1 << 31) // 16:
            raise ValueError('the image is too large for sepfir2d')
        if 2 * (len(hrow) // 2) > cols or 2 * (len(hcol) // 2) > rows:
            raise ValueError('a filter of sepfir2d may be at most one longer than the image '
                             'side it runs along (hrow: %d columns, hcol: %d rows)'
                             % (cols, rows))
        return real(np.ascontiguousarray(image), hrow.tolist(), hcol.tolist())

    sepfir2d.__doc__ = real.__doc__
    _replace_everywhere(real, sepfir2d)
    _cspline2d_checks(np, _spline)


def _highs_checks():
    """HiGHS's wrapper sizes the problem by its arguments, each separately: the rows by rhs,
    the columns by c, and copies that many row lower bounds from lhs, bounds from lb and ub,
    pointers from astart, whatever their own sizes (milp checked its matrix against the
    constraint's lb only: a ub set longer after the constraint was made had the bounds of the
    rows past lb read from the heap beyond it, and an answer gave one back). The arrays are
    checked against each other first: lhs and rhs one value a row, lb, ub (and integrality,
    when given) one a column, astart one more than the columns, rising from 0 to at most the
    values, each index a row, wherever the wrapper is named."""
    import numpy as np
    from scipy.optimize._highs import _highs_wrapper as module
    from scipy.optimize import _milp, _linprog_highs  # noqa: F401 (loaded: their names replaced)
    real = module._highs_wrapper

    def _highs_wrapper(c, astart, aindex, avalue, lhs, rhs, lb, ub, integrality, options):
        c, astart, aindex, avalue, lhs, rhs, lb, ub, integrality = (
            np.asarray(a) for a in (c, astart, aindex, avalue, lhs, rhs, lb, ub, integrality))
        if any(a.ndim != 1 for a in (c, astart, aindex, avalue, lhs, rhs, lb, ub, integrality)):
            raise ValueError('the arrays HiGHS reads are 1-D')
        n, m, nnz = c.shape[0], rhs.shape[0], avalue.shape[0]
        if lhs.shape[0] != m or lb.shape[0] != n or ub.shape[0] != n or \
                integrality.shape[0] not in (0, n):
            raise ValueError('the bounds do not match the problem: lhs and rhs have one value '
                             'for each of the %d constraints (rhs), lb, ub and integrality one '
                             'for each of the %d variables (c)' % (m, n))
        if astart.shape[0] != n + 1 or aindex.shape[0] != nnz:
            raise ValueError('the constraint matrix does not match: astart has one more '
                             'pointer than the %d variables, aindex one index for each of the %d '
                             'values' % (n, nnz))
        if m and (astart[0] != 0 or (np.diff(astart) < 0).any() or astart[-1] > nnz or
                  (nnz and (aindex.min() < 0 or aindex.max() >= m))):
            raise ValueError("the constraint matrix's pointers or indices are past its %d "
                             'rows and %d values' % (m, nnz))
        return real(c, astart, aindex, avalue, lhs, rhs, lb, ub, integrality, options)

    _highs_wrapper.__doc__ = real.__doc__
    _replace_everywhere(real, _highs_wrapper)


def _ellip_harm_degrees():
    """The Lame functions' compiled coefficients size their work buffer in a C int from the
    degree n: n = 103493188 wrapped it to 712 bytes, and 51 million numbers were written past
    it (SIGSEGV). The degree is at most 100000 (a buffer of 33 MB)."""
    import numpy as np
    from scipy.special import _ellip_harm as module
    pairs = []

    def bounded(real):
        def f(h2, k2, n, *args, **kwargs):
            if np.any(np.abs(np.asarray(n, dtype=np.float64)) > 100000):
                raise ValueError('the degree n of a Lame function is at most 100000 in the '
                                 'sandbox')
            return real(h2, k2, n, *args, **kwargs)
        f.__name__ = f.__qualname__ = real.__name__
        f.__doc__ = real.__doc__
        f.__module__ = real.__module__
        pairs.append((f, real))

    for name in ('ellip_harm', 'ellip_harm_2', 'ellip_normal'):
        bounded(getattr(module, name))
    _replace_all({id(orig): (orig, f) for f, orig in pairs})


def _direct_checks():
    """DIRECT's compiled routine takes the dimension from lb and reads as many upper bounds
    from ub: direct() checked lb < ub with numpy's broadcasting, so a Bounds whose ub was set
    to one value afterwards passed, and the heap past ub reached the code's function as the
    box's centre. The bounds are checked to be of one length first."""
    import numpy as np
    from scipy.optimize import _direct, _direct_py  # noqa: F401 (loaded: its name replaced)
    real = _direct.direct

    def direct(func, lb, ub, *args, **kwargs):
        lb = np.ascontiguousarray(lb, dtype=np.float64)
        ub = np.ascontiguousarray(ub, dtype=np.float64)
        if lb.ndim != 1 or ub.shape != lb.shape:
            raise ValueError('the bounds lb and ub should be 1-D and of one length, not %r '
                             'and %r' % (lb.shape, ub.shape))
        return real(func, lb, ub, *args, **kwargs)

    direct.__doc__ = real.__doc__
    _replace_everywhere(real, direct)


def _cspline2d_checks(np, _spline):
    """cspline2d's smoothing path (lambda > 1/144) filters each row, then each column of what
    the rows gave, through a buffer it does not clear: when a row's sum for its boundary did not
    converge within the row's length (rows of one column, or short ones under much smoothing)
    it stopped the rows there and still ran the columns over the buffer, and answered with them:
    what the heap held there (another array's freed values) came back, filtered. Whether a row
    converges depends on its length, lambda and the precision only, not on the values:
    symiirorder2, the same filter over one row, is asked first, with the same pole and
    precision, and the call fails as it does when a column does not converge."""
    import math
    real = _spline.cspline2d
    check_row = _spline.symiirorder2

    def cspline2d(input, lambda_=0.0, precision=-1.0, **kw):
        kw = _plain_names(kw)
        if 'lambda' in kw:
            lambda_ = kw.pop('lambda')
        if kw:
            return real(input, lambda_, precision, **kw)  # its own error
        lam, prec = float(lambda_), float(precision)
        image = np.asarray(input)
        if lam > 1.0 / 144.0 and image.ndim == 2 and image.size:
            # (the pole as splinemodule.c's compute_root_from_lambda makes it, and cspline2d's
            # own precision when none is given in (0, 1])
            tmp = math.sqrt(3 + 144 * lam)
            xi = 1 - 96 * lam + 24 * lam * tmp
            omega = math.atan(math.sqrt((144 * lam - 1.0) / xi))
            tmp2 = math.sqrt(xi)
            r = (24 * lam - 1 - tmp2) / (24 * lam) * math.sqrt((48 * lam + 24 * lam * tmp)) / tmp2
            if prec <= 0.0 or prec > 1.0:
                prec = 1e-6
            try:
                check_row(np.zeros(image.shape[1]), r, omega, prec)
            except ValueError:
                raise ValueError('Precision too high.  Error did not converge.') from None
        return real(np.ascontiguousarray(image), lam, float(precision))

    cspline2d.__doc__ = real.__doc__
    _replace_everywhere(real, cspline2d)
    _contiguous_signals(np, _spline)


def _contiguous_signals(np, _spline):
    """_spline's filters and upfirdn's compiled loop turn an array's byte strides into item
    strides by a shift or a floor division: numpy hands on a view of a field of records as it
    is (a complex field of 24-byte records, reversed: -24 bytes, read as -32), and the loops
    walked up to 8 bytes an item before the array (another array's values read back). They get
    contiguous arrays (the same values)."""
    from scipy.signal import _upfirdn_apply, _upfirdn  # noqa: F401 (loaded: names replaced)
    pairs = []

    def first_contiguous(real):
        def f(input, *args, **kwargs):
            return real(np.ascontiguousarray(input), *args, **kwargs)
        f.__name__ = f.__qualname__ = real.__name__
        f.__doc__ = real.__doc__
        pairs.append((f, real))

    for name in ('symiirorder1', 'symiirorder2', 'qspline2d'):
        first_contiguous(getattr(_spline, name))
    first_contiguous(_upfirdn_apply._apply)
    _replace_all({id(orig): (orig, f) for f, orig in pairs})


def _lapack_inputs():
    """scipy's LAPACK wrappers pass row numbers (pivots) to Fortran as given: dlaswp,
    dgetrs (lu_solve's) and their kind swapped rows past the matrix (any memory, then the real
    builtins), and ?laswp's inc, ?gbtrs' n and leading dimensions, and the workspace size a
    *_lwork query is told reached past the arrays too. Each such wrapper checks them first,
    under every name it has: every argument is made a plain number or an array before (no code
    of the user's runs in the wrapper, between the check and the use), pivots are rows of the
    matrix, and those sizes are the wrapper's own."""
    import operator
    import re
    import numpy as np
    from scipy.linalg import _flapack

    nd = np.ndarray
    plain = (int, float, complex, bool, str, bytes, type(None))
    # Pivots by routine: (their parameters, the matrix they number rows of, how it is read,
    # how they count: 0 from 0, 1 from 1, 's' from 1 with a sign for a 2x2 block).
    pivots = {
        'laswp': (('piv',), 'a', 0, 0), 'getrs': (('piv',), 'lu', 0, 0),
        'getri': (('piv',), 'lu', 0, 0), 'gesc2': (('ipiv', 'jpiv'), 'lu', 0, 0),
        'gesvx': (('ipiv',), 'a', 0, 0), 'gbtrs': (('ipiv',), 'ab', 1, 0),
        'gttrs': (('ipiv',), 'd', 0, 1), 'gtsvx': (('ipiv',), 'd', 0, 1),
        'sycon': (('ipiv',), 'a', 0, 's'), 'syconv': (('ipiv',), 'a', 0, 's'),
        'hecon': (('ipiv',), 'a', 0, 's'), 'sysvx': (('ipiv',), 'a', 0, 's'),
        'hesvx': (('ipiv',), 'a', 0, 's'),
    }
    # Sizes a wrapper computes from its arrays: given, they reached past them.
    own = {'laswp': ('off',), 'gbtrs': ('n', 'ldab', 'ldb')}

    def params(f):
        first = (f.__doc__ or '').strip().splitlines()[0]
        inner = re.search(r'\w+\((.*)\)\s*$', first).group(1)
        return [p.strip() for p in inner.replace('[', '').replace(']', '').split(',')
                if p.strip()]

    def made_plain(v):
        if type(v) in plain or isinstance(v, nd):
            return v
        if hasattr(v, '__index__') and not hasattr(v, '__len__'):
            return operator.index(v)
        return np.asarray(v)

    def guard(f, name, names):
        kind = name[1:]
        rule = pivots.get(kind)
        fixed = own.get(kind, ('lwork',) if name.endswith('_lwork') else ())

        def checked(*args, **kwargs):
            kwargs = _plain_names(kwargs)  # (names by their characters)
            if len(args) > len(names):
                return f(*args, **kwargs)  # the wrapper's own error
            given = dict(zip(names, args))
            for k, v in kwargs.items():
                if k in given:
                    return f(*args, **kwargs)  # the wrapper's own error
                given[k] = v
            given = {k: made_plain(v) for k, v in given.items()}
            for k in fixed:
                if k in given:
                    raise ValueError('%s: %s is computed by the wrapper in the sandbox'
                                     % (name, k))
            if rule is not None:
                which, matrix, axis, base = rule
                m = given.get(matrix)
                if isinstance(m, nd):
                    # numpy's own, over the same memory: a subclass answers its own shape
                    m = given[matrix] = np.asarray(m)
                if not isinstance(m, nd) or m.ndim <= axis:
                    return f(**given)  # the wrapper's own error
                n = m.shape[axis]
                for p in which:
                    if given.get(p) is None:
                        continue
                    piv = np.array(given[p], dtype=np.intc)
                    given[p] = piv
                    if base == 0:
                        bad = piv.size and (piv.min() < 0 or piv.max() >= n)
                    elif base == 1:
                        bad = piv.size and (piv.min() < 1 or piv.max() > n)
                    else:
                        bad = piv.size and (np.abs(piv).min() < 1 or np.abs(piv).max() > n)
                    if bad:
                        raise ValueError('%s: %s holds a row past the %d of %s'
                                         % (name, p, n, matrix))
                if kind == 'laswp':
                    npiv = given['piv'].size
                    k1, k2 = given.get('k1', 0), given.get('k2', npiv - 1)
                    if given.get('inc', 1) not in (1, -1) or not 0 <= k1 <= k2 < npiv:
                        raise ValueError('%s: k1, k2 and inc reach past piv' % name)
                if kind == 'gbtrs':
                    kl, ku = given.get('kl'), given.get('ku')
                    if (not isinstance(kl, int) or not isinstance(ku, int) or kl < 0 or
                            ku < 0 or 2 * kl + ku + 1 > m.shape[0]):
                        raise ValueError('%s: kl and ku do not fit ab' % name)
            return f(**given)

        checked.__name__ = checked.__qualname__ = name
        checked.__doc__ = f.__doc__
        checked.__module__ = 'scipy.linalg._flapack'
        return checked

    replacements = {}
    for name in dir(_flapack):
        f = getattr(_flapack, name)
        if name[1:] in pivots or name[1:] in own or name.endswith('_lwork'):
            try:
                names = params(f)
            except AttributeError:
                continue
            replacements[id(f)] = (f, guard(f, name, names))
    _replace_all(replacements)


def _sympy():
    import sympy
    import sympy.parsing.sympy_parser  # noqa: F401  (pylayer.c gives it the user's builtins)
    x = sympy.Symbol('x')
    f = sympy.Function('f')
    sympy.integrate(sympy.sin(x) ** 2, x), sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2)
    sympy.solve(x ** 2 - 2, x), sympy.latex(sympy.Integral(x ** 2, x)), sympy.sympify('x**2+1')
    sympy.series(sympy.exp(x), x), sympy.Matrix([[1, 2], [3, 4]]).inv(), sympy.factor(x ** 2 - 1)
    sympy.limit(sympy.sin(x) / x, x, 0), sympy.dsolve(f(x).diff(x) - f(x)), sympy.pretty(x ** 2)
    # Pretty printing chose ASCII when sympy was imported, before the call's output streams
    # (UTF-8) were in place: sqrt drawn with slashes, matrices with brackets.
    from sympy.printing.pretty.pretty_symbology import pretty_use_unicode
    pretty_use_unicode(True)
    # lambdify(..., 'sympy') fills its namespace the first time by an exec of "from sympy
    # import ...", a from-import a library's text cannot make in a worker: filled here.
    sys.modules['sympy.utilities.lambdify']._import('sympy')
    sympy.lambdify([x], x ** 2, 'sympy')(3)


def _ft2font_checks():
    """matplotlib.ft2font.FT2Font, which the user's code may make: over a file object, its read
    callback copied whatever read() returned into FreeType's buffer of the size it asked for
    (a longer answer overflowed the heap: full escape); by path, it was left unmade when the
    worker's builtins have no open (SIGSEGV); _fallback_list took anything whose
    __class__ said FT2Font and used its memory as a C++ font (a write at a chosen address);
    set_charmap read the charmap table at a negative index. A font over a file object reads
    the object whole first and is made over a private io.BytesIO of its bytes (which reads no
    more than asked); fallbacks must be FT2Font objects (their real type) and are taken as a
    list of the sandbox's; a charmap's index must be within the face's charmaps."""
    import operator
    import os
    from matplotlib import ft2font

    font = ft2font.FT2Font
    real_set_charmap = font.__dict__['set_charmap']
    names = ('filename', 'hinting_factor', '_fallback_list', '_kerning_factor')

    def made(args, kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        args = list(() if args is None else args)
        kwargs = dict(kwargs or {})
        if len(args) > len(names) or any(k not in names for k in kwargs):
            return tuple(args), kwargs  # the constructor's own TypeError
        given = dict(zip(names, args))
        if set(given) & set(kwargs):
            return tuple(args), kwargs
        given.update(kwargs)
        source = given.get('filename')
        if isinstance(source, (str, bytes, os.PathLike)):
            # By path: the C code opens it with the builtins' open, which a worker's builtins
            # lack (the font was left unmade: NULL used, SIGSEGV). matplotlib's own fonts are
            # in memory; any other file is read with the sandbox's open (the workspace's).
            path = os.fsdecode(source)
            blob = _font_files.get(path)
            if blob is None:
                blob = _font_files.get(os.path.realpath(path))
            if blob is None:
                with open(path, 'rb') as f:
                    blob = f.read()
            given['filename'] = io.BytesIO(blob)
        elif source is not None:
            source.seek(0)  # FreeType reads it from its start
            data = source.read()
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise TypeError('the font file object\'s read() must give bytes')
            given['filename'] = io.BytesIO(bytes(data))
        fallback = given.get('_fallback_list')
        if fallback is not None:
            if not isinstance(fallback, list):
                raise TypeError('_fallback_list must be a list of FT2Font objects')
            fallback = list(fallback)
            if any(not issubclass(type(f), font) for f in fallback):
                raise TypeError('_fallback_list must be a list of FT2Font objects')
            given['_fallback_list'] = fallback
        return (), given

    real_init = font.__dict__['__init__']

    def __init__(self, *args, **kwargs):
        args, kwargs = made(args, kwargs)
        real_init(self, *args, **(kwargs or {}))

    __init__.__doc__ = real_init.__doc__

    def set_charmap(self, i):
        i = operator.index(i)
        if not 0 <= i < self.num_charmaps:
            raise ValueError('i exceeds the available number of char maps')
        return real_set_charmap(self, i)

    set_charmap.__doc__ = real_set_charmap.__doc__
    init_checks[font] = made

    # FT2Image(width, height) allocated width * height bytes in 64 bits: 2**32 by 2**32 wrapped
    # to nothing, and its buffer, NULL, was still given as 2**32 by 2**32 bytes (memoryview read
    # and wrote any address). A text image is a size the C code holds.
    def image_made(args, kwargs):
        args = tuple(() if args is None else args)
        if kwargs or len(args) != 2:
            return args, kwargs  # the constructor's own TypeError
        w, h = (float(v) for v in args)
        if not (0 <= w < 2**24 and 0 <= h < 2**24 and w * h < 2**30):
            raise ValueError('an FT2Image is at most 2**24 pixels each way and 2**30 in all, not '
                             '%r by %r' % (w, h))
        return (w, h), {}

    init_checks[ft2font.FT2Image] = image_made

    # FT2Image.draw_rect(x0, y0, x1, y1) refused only corners past the width or height, and
    # drew the bottom edge on row y1 and the right edge on column x1: y1 == height set a row
    # past the image's buffer to 255 (a heap overflow: full escape). The corners are indices
    # (operator.index) with 0 <= x0 <= x1 < width and 0 <= y0 <= y1 < height.
    # (draw_rect_filled clamps its corners to the image.)
    image = ft2font.FT2Image
    real_draw_rect = image.__dict__['draw_rect']

    def draw_rect(self, x0, y0, x1, y1):
        x0, y0, x1, y1 = (operator.index(v) for v in (x0, y0, x1, y1))
        if not isinstance(self, image):
            return real_draw_rect(self, x0, y0, x1, y1)  # (its own TypeError)
        height, width = memoryview(self).shape
        if not (0 <= x0 <= x1 < width and 0 <= y0 <= y1 < height):
            raise ValueError('draw_rect needs 0 <= x0 <= x1 < width and 0 <= y0 <= y1 < '
                             'height: (%d, %d, %d, %d) in an image of %d by %d'
                             % (x0, y0, x1, y1, width, height))
        return real_draw_rect(self, x0, y0, x1, y1)

    draw_rect.__doc__ = real_draw_rect.__doc__
    type_patches[(image, 'draw_rect')] = draw_rect
    type_patches[(font, '__init__')] = __init__
    type_patches[(font, 'set_charmap')] = set_charmap

    # A font's text image (get_image) was an array over the font's own buffer that kept
    # nothing alive: the next draw_glyphs_to_bitmap freed the buffer under it (a writable array
    # over freed memory: any memory). It is a copy. The glyph positions set_text answers and
    # get_xys gives were arrays over a C++ vector freed as the call returned (read at once,
    # already someone else's): set_text answers None (matplotlib drops its answer), and
    # get_xys is refused.
    import numpy as np
    real_get_image, real_set_text = font.__dict__['get_image'], font.__dict__['set_text']

    def get_image(self):
        return np.array(real_get_image(self), copy=True)

    def set_text(self, *args, **kwargs):
        real_set_text(self, *args, **kwargs)

    def get_xys(self, *args, **kwargs):
        raise RuntimeError("FT2Font.get_xys is not available in the sandbox: its array "
                           "names memory freed as it returns (get_bitmap_offset and "
                           "get_width_height give the text's extent)")

    get_image.__doc__ = real_get_image.__doc__
    set_text.__doc__ = (real_set_text.__doc__ or '') + ('\n\nIn the sandbox it answers None: '
                                                         'the positions were freed memory.')
    get_xys.__doc__ = font.__dict__['get_xys'].__doc__
    type_patches[(font, 'get_image')] = get_image
    type_patches[(font, 'set_text')] = set_text
    type_patches[(font, 'get_xys')] = get_xys


# Fonts read in the zygote (matplotlib's), by path: {path: bytes}.
_font_files = {}


def _fonts_in_memory(mpl):
    """Fonts from matplotlib's own directory, read here: a worker cannot open a file."""
    import functools
    import os
    from matplotlib import font_manager as fm, ft2font

    from matplotlib import _mathtext

    ttf = os.path.join(mpl.get_data_path(), 'fonts', 'ttf')
    data = _font_files  # the file's bytes, by its path and by its real path
    for name in sorted(os.listdir(ttf)):
        path = os.path.join(ttf, name)
        if name.lower().endswith('.ttf') and os.path.isfile(path):
            with open(path, 'rb') as f:
                data[path] = data[os.path.realpath(path)] = f.read()

    class MemoryFont(ft2font.FT2Font):
        """A font read from memory that names its file, as one read from its path does (the
        PDF backend finds a font's properties by its fname)."""

        def __init__(self, path, blob, *args, **kwargs):
            super().__init__(io.BytesIO(blob), *args, **kwargs)
            self._path = path

        @property
        def fname(self):
            return self._path

    def read(path):
        """matplotlib's font file, or one of the workspace's (read with the sandbox's open)."""
        blob = data.get(path)
        if blob is None:
            try:
                with open(path, 'rb') as f:
                    blob = f.read()
            except OSError as e:
                raise OSError(f'font {path} is not available in the sandbox: matplotlib\'s '
                              f'own fonts and those of the workspace are ({e})') from None
        return blob

    def load(path, hinting, kerning, fallback=()):
        blob = read(path)
        kw = {'_fallback_list': list(fallback)} if fallback else {}
        return MemoryFont(path, blob, hinting, _kerning_factor=kerning, **kw)

    @functools.lru_cache(64)
    def _get_font(font_filepaths, hinting_factor, *, _kerning_factor, thread_id):
        first, *rest = font_filepaths
        return load(first, hinting_factor, _kerning_factor,
                    [load(p, hinting_factor, _kerning_factor) for p in rest])

    # mathtext looks for a font's file before it loads it.
    def _mathtext_font(self, font):
        basename = self.fontmap.get(font, font)
        cached = self._fonts.get(basename)
        if cached is None and (basename in data or os.path.exists(basename)):
            cached = fm.get_font(basename)
            self._fonts[basename] = cached
            self._fonts[cached.postscript_name] = cached
            self._fonts[cached.postscript_name.lower()] = cached
        return cached

    fm._get_font = _get_font
    try:
        from fontTools import subset
        from matplotlib.backends import _backend_pdf_ps
    except ImportError:
        subset = None

    def get_glyphs_subset(fontfile, characters):
        """The font's file restricted to the characters, as a file object: the PDF and
        PostScript backends embed it (matplotlib's own reads the file by its path)."""
        blob = read(fontfile)
        options = subset.Options(glyph_names=True, recommended_glyphs=True)
        options.drop_tables += ['FFTM', 'PfEd', 'BDF']
        with subset.load_font(io.BytesIO(blob), options) as font:
            subsetter = subset.Subsetter(options=options)
            subsetter.populate(text=characters)
            subsetter.subset(font)
            fh = io.BytesIO()
            font.save(fh, reorderTables=False)
            return fh

    if subset is not None:
        _backend_pdf_ps.get_glyphs_subset = get_glyphs_subset
    _mathtext.TruetypeFonts._get_font = _mathtext_font
    # Only fonts in memory can be found; any other family falls back on the default one.
    fm.fontManager.ttflist = [f for f in fm.fontManager.ttflist if f.fname in data]
    # findfont checks that the file it chose exists, and rebuilds the whole list (walking the
    # disk, running fc-list) when it does not: in a worker no file exists. Its code runs with
    # an os of its own that finds the fonts in memory; the paths are resolved here.
    import types
    found = fm.FontManager._findfont_cached.__wrapped__

    def isfile(path):
        return path in data or os.path.isfile(path)

    names = dict(vars(fm))
    names['os'] = types.SimpleNamespace(path=types.SimpleNamespace(isfile=isfile))
    fm.FontManager._findfont_cached = functools.lru_cache(1024)(types.FunctionType(
        found.__code__, names, found.__name__, found.__defaults__, found.__closure__))
    for path in data:
        fm._cached_realpath(path)


def _type42_fonts():
    """rcParams['pdf.fonttype'] = 42 (the font embedded as TrueType, its text editable) failed
    every PDF: the backend embeds a subset of the font, which is made from memory, but first
    logs the size of the font's file, and a worker cannot stat it (PermissionError naming the
    font). The PDF backend's embedTTF runs with an os of its own whose stat answers the size
    of the fonts in memory. ps.fonttype 42 has matplotlib's C code read the subset from a
    temporary file, which a worker cannot make: it says so and what to use instead, rather
    than failing on the font's path."""
    import os
    import types
    from matplotlib.backends import backend_pdf, backend_ps

    def stat(path):
        blob = _font_files.get(os.fsdecode(path))
        return os.stat(path) if blob is None else types.SimpleNamespace(st_size=len(blob))

    embed = backend_pdf.PdfFile.embedTTF
    names = dict(vars(backend_pdf))
    names['os'] = types.SimpleNamespace(stat=stat)
    made = types.FunctionType(embed.__code__, names, embed.__name__, embed.__defaults__,
                              embed.__closure__)
    made.__doc__, made.__qualname__ = embed.__doc__, embed.__qualname__
    backend_pdf.PdfFile.embedTTF = made

    def _font_to_ps_type42(font_path, chars, fh):
        raise RuntimeError("PostScript with rcParams['ps.fonttype'] = 42 is not available in "
                           "the sandbox (matplotlib's converter reads the font from a temporary "
                           "file); use ps.fonttype 3 (the default), or save as PDF with "
                           "rcParams['pdf.fonttype'] = 42")

    _replace_everywhere(backend_ps._font_to_ps_type42, _font_to_ps_type42)


def _unmade_c_objects():
    """C objects whose C++ part their constructor leaves to another step: a BufferRegion made
    by calling its class (copy_from_bbox makes them) had none, and a C++ TrapezoidMapTriFinder
    searched its tree before initialize() built it; both read through NULL (SIGSEGV). The
    region's class is not called by the code; the finder is made by matplotlib's own
    TrapezoidMapTriFinder, which initializes it at once. An Agg renderer is made at 1 dpi at
    least."""
    import os
    import matplotlib
    from matplotlib import _tri
    from matplotlib.backends import _backend_agg

    region = type(_backend_agg.RendererAgg(1, 1, 72).copy_from_bbox([0, 0, 1, 1]))

    # (a renderer below 1 dpi made its hatch buffer 0 pixels wide, and a hatched patch
    # wrapped its pattern modulo 0: SIGFPE)
    def renderer_made(args, kwargs):
        args, kwargs = list(args or ()), dict(kwargs or {})
        if len(args) > 2:
            dpi = args[2] = float(args[2])
        elif 'dpi' in kwargs:
            dpi = kwargs['dpi'] = float(kwargs['dpi'])
        else:
            return tuple(args), kwargs
        if not dpi >= 1:
            raise ValueError('dpi must be at least 1 (was %r)' % (dpi,))
        return tuple(args), kwargs

    init_checks[_backend_agg.RendererAgg] = renderer_made

    def refuse(args, kwargs):
        raise TypeError('a BufferRegion is made by copy_from_bbox, not by its class')

    new_checks[region] = refuse

    tri_dir = os.path.join(os.path.dirname(matplotlib.__file__), 'tri') + os.sep

    def by_matplotlib(args, kwargs):
        if not sys._getframe(1).f_code.co_filename.startswith(tri_dir):
            raise TypeError('the C++ trifinder is made by Triangulation.get_trifinder(), '
                            'not by its class')
        return tuple(args), kwargs

    new_checks[_tri.TrapezoidMapTriFinder] = by_matplotlib
    # (a subclass of the code's may leave _initialize out: the C++ finder's tree is built all
    # the same)
    from matplotlib.tri import trifinder
    finder, finder_init = trifinder.TrapezoidMapTriFinder, trifinder.TrapezoidMapTriFinder.__init__
    own_initialize, cpp_initialize = finder._initialize, _tri.TrapezoidMapTriFinder.initialize

    def __init__(self, triangulation):
        finder_init(self, triangulation)
        if type(self)._initialize is not own_initialize:
            cpp = self.__dict__.get('_cpp_trifinder')
            if type(cpp) is _tri.TrapezoidMapTriFinder:
                cpp_initialize(cpp)

    __init__.__doc__ = finder_init.__doc__
    finder.__init__ = __init__


def _tri_checks():
    """matplotlib's Triangulation checks its triangles when it is made, but they stay a plain
    array (tr.triangles), and the C++ triangulation made from it later kept a view of the same
    arrays: triangles edited in place, then an interpolator, get_trifinder() or tricontour
    read x and y at those vertex numbers (SIGSEGV); the C++ neighbors and edges handed back
    (tr.neighbors) were its own arrays too. The C++ triangulation is now made from checked
    copies (vertex numbers within the points, neighbors within the triangles, the mask one
    per triangle), made again when the points or triangles change, and hands back copies."""
    import numpy as np
    from matplotlib import _tri
    from matplotlib.tri import triangulation

    cls, cpp = triangulation.Triangulation, _tri.Triangulation

    def fail(what):
        raise ValueError('the triangulation is not consistent: ' + what)

    def numbers(a, columns, low, high, what):
        a = np.array(a)
        if a.dtype.kind not in 'iu' or a.ndim != 2 or a.shape[1] != columns:
            fail('%s must be integers in %d columns' % (what, columns))
        if a.size and (a.min() < low or a.max() >= high):
            fail('%s must lie in [%d, %d)' % (what, low, high))
        return np.ascontiguousarray(a, dtype=np.int32)

    def arrays(tri):
        x = np.array(tri.x, dtype=np.float64)
        y = np.array(tri.y, dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape or len(x) >= 1 << 31:
            fail('x and y must be 1-D arrays of the same length')
        triangles = numbers(tri.triangles, 3, 0, len(x), 'triangles')
        ntri = len(triangles)
        mask, edges, neighbors = tri.mask, tri._edges, tri._neighbors
        if mask is not None:
            mask = np.array(mask, dtype=bool)
            if mask.shape != (ntri,):
                fail('the mask must hold one value for each triangle')
        if edges is not None:
            edges = numbers(edges, 2, 0, len(x), 'edges')
        if neighbors is not None:
            neighbors = numbers(neighbors, 3, -1, ntri, 'neighbors')
            if neighbors.shape != triangles.shape:
                fail('neighbors must have the shape of the triangles')
        return x, y, triangles, mask, edges, neighbors

    def same(a, b):
        return len(a) == len(b) and all(p.shape == q.shape and np.array_equal(p, q)
                                        for p, q in zip(a, b))

    def get_cpp_triangulation(self):
        # Made again when the points or triangles changed (the mask reaches the C++ one
        # through set_mask, and its neighbors and edges are its own).
        made = arrays(self)
        if self._cpp_triangulation is None or \
                not same(self.__dict__.get('_cpp_made_from', ()), made[:3]):
            self._cpp_triangulation = cpp(*made, not self.is_delaunay)
            # Copies: the C++ triangulation keeps views of what it was made from.
            self._cpp_made_from = tuple(a.copy() for a in made[:3])
        return self._cpp_triangulation
    get_cpp_triangulation.__doc__ = cls.get_cpp_triangulation.__doc__
    cls.get_cpp_triangulation = get_cpp_triangulation

    def copying(name):
        method = cpp.__dict__[name]

        def copied(self):
            return np.array(method(self))
        copied.__name__ = copied.__qualname__ = name
        copied.__doc__ = method.__doc__
        type_patches[(cpp, name)] = copied

    copying('get_edges')
    copying('get_neighbors')
    set_mask = cpp.__dict__['set_mask']

    def set_mask_copied(self, mask):
        return set_mask(self, None if mask is None else np.array(mask, dtype=bool))
    set_mask_copied.__name__ = set_mask_copied.__qualname__ = 'set_mask'
    set_mask_copied.__doc__ = set_mask.__doc__
    type_patches[(cpp, 'set_mask')] = set_mask_copied

    class Given:
        pass

    def made_checked(args, kwargs):
        # The C++ class made by the user's code (type(tr.get_cpp_triangulation())(...)): the
        # same checks and copies.
        names = ('x', 'y', 'triangles', 'mask', '_edges', '_neighbors', 'correct')
        given = dict(zip(names, args), **(kwargs or {}))
        if len(given) != len(names) or set(given) != set(names):
            raise TypeError('the C++ triangulation takes x, y, triangles, mask, edges, '
                            'neighbors and whether to correct orientations')
        g = Given()
        g.__dict__.update(given)
        return arrays(g) + (bool(given['correct']),), None

    init_checks[cpp] = made_checked


def _triangulation():
    # tricontour, tripcolor and Triangulation ask matplotlib's own qhull for the Delaunay
    # triangles of scattered points, and it writes its messages to a /dev/null it opens: a
    # worker opens no file, and the call failed. scipy's qhull (whose message stream is the
    # worker's /dev/null: _scipy) gives the same triangulation, in matplotlib's form: each
    # triangle anticlockwise, neighbors[i, j] across the edge from its point j to point j + 1
    # (scipy's is opposite point j). The C++ triangulation is made from checked copies
    # (_tri_checks).
    _tri_checks()
    _unmade_c_objects()
    if 'scipy.spatial' not in sys.modules:
        return
    import numpy as np
    from matplotlib import _qhull
    from scipy.spatial import Delaunay

    def delaunay(x, y, verbose=0):
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape:
            raise ValueError('x and y must be 1D arrays of the same length')
        if len(x) < 3:
            raise ValueError('x and y arrays must have a length of at least 3')
        try:
            tri = Delaunay(np.column_stack((x, y)))
        except Exception as e:
            raise RuntimeError('Error in qhull Delaunay triangulation calculation: %s' % e)
        triangles = tri.simplices.astype(np.int32)
        opposite = tri.neighbors.astype(np.int32)
        a, b, c = (triangles[:, k] for k in range(3))
        clockwise = (x[b] - x[a]) * (y[c] - y[a]) - (x[c] - x[a]) * (y[b] - y[a]) < 0
        triangles[clockwise] = triangles[clockwise][:, [0, 2, 1]]
        opposite[clockwise] = opposite[clockwise][:, [0, 2, 1]]
        return (np.ascontiguousarray(triangles),
                np.ascontiguousarray(opposite[:, [2, 0, 1]]))

    delaunay.__doc__ = _qhull.delaunay.__doc__
    _qhull.delaunay = delaunay


def _transform_parents():
    """A transform's children name it in a dict by id(), with a weak reference whose callback
    pops that id when it dies. A weak reference's callback runs a little later in a worker
    (worker/pyreentry.c defers it until the user's code runs again), by which time a new
    transform may hold the same id and its entry: the late pop took the new entry (its child
    no longer invalidated it) and the new one's own callback raised KeyError, printed as an
    ignored exception for every figure drawn with bbox_inches='tight'. And every transform
    that died while matplotlib drew left a callback waiting for the user's frame, which the
    interpreter asked after at each of its checks until then (a figure drawn at half speed).
    The references have no callback: a new transform with the same id takes the entry, as
    matplotlib's invalidation already passes over references that died, and the dead ones go
    when the dict has grown (doubling its bound)."""
    import weakref
    from matplotlib import transforms as mt

    bounds = {}

    def prune(parents):
        k = id(parents)
        bound = bounds.get(k, 64)
        if len(parents) <= bound:
            return
        for key in [key for key, ref in parents.items() if ref is None or ref() is None]:
            del parents[key]
        bounds[k] = max(64, 2 * len(parents))
        if len(bounds) > 4096:
            bounds.clear()

    def set_children(self, *children):
        for child in children:
            child._parents[id(self)] = weakref.ref(self)
            prune(child._parents)

    def __setstate__(self, data_dict):
        self.__dict__ = data_dict
        self._parents = {k: weakref.ref(v) for k, v in self._parents.items() if v is not None}

    for name, f in (('set_children', set_children), ('__setstate__', __setstate__)):
        f.__doc__ = getattr(mt.TransformNode, name).__doc__
        f.__qualname__ = 'TransformNode.' + name
        f.__module__ = mt.__name__
        setattr(mt.TransformNode, name, f)


def _warnings_outside_matplotlib():
    """matplotlib's warnings (a glyph missing from the font, a tight layout it could not make)
    name the first frame outside matplotlib as where they come from: the sandbox's own wrapper
    of savefig or show, not the code's line that called it. Its frames are passed over too."""
    import itertools
    import re
    import warnings
    from matplotlib import _api
    real = _api.warn_external
    ours = _warnings_outside_matplotlib.__code__.co_filename
    inside = re.compile(r'\A(matplotlib|mpl_toolkits)(\Z|\.(?!tests\.))').match

    def warn_external(message, category=None):
        frame = sys._getframe()
        for stacklevel in itertools.count(1):
            if frame is None:
                break
            if frame.f_code.co_filename != ours and \
                    not inside(frame.f_globals.get('__name__', '')):
                break
            frame = frame.f_back
        warnings.warn(message, category, stacklevel)

    warn_external.__doc__ = real.__doc__
    warn_external.__module__ = real.__module__
    _replace_everywhere(real, warn_external)


def _no_tex():
    """text.usetex = True has matplotlib run latex and dvipng, programs a worker cannot start;
    it first made its cache directory in the server's home (a PermissionError naming the
    path, which sent the code's author after the directory's permissions). It says what to use
    instead."""
    from matplotlib import texmanager

    def __new__(cls, *args, **kwargs):
        raise RuntimeError('LaTeX is not available in the sandbox (text.usetex runs the latex '
                           "program): leave text.usetex off; matplotlib's mathtext renders "
                           "formulas in $...$ in any text without it (r'$\\alpha^2$')")

    texmanager.TexManager.__new__ = __new__
    # matplotlib asks programs for their versions (ImageMagick's, when animation.writers lists
    # the writers; ghostscript's, dvipng's) through a pipe and a process, which the sandbox ends
    # a call for: no program is found, as on a machine without them (PillowWriter and
    # HTMLWriter, in-process, stay).
    import matplotlib as mpl

    def _get_executable_info(name):
        raise mpl.ExecutableNotFoundError(f'{name} is not run in the sandbox (no program is)')

    _get_executable_info.__doc__ = mpl._get_executable_info.__doc__
    mpl._get_executable_info = _get_executable_info
    from matplotlib import animation

    def isAvailable(cls):
        return False

    animation.MovieWriter.isAvailable = classmethod(isAvailable)
    _animation_html()


def _animation_html():
    """An animation's HTML (to_jshtml, what rcParams['animation.html'] = 'jshtml' shows) was
    written to a file in a temporary directory and read back: a worker has no temporary
    directory without a workspace, and matplotlib's is the real tempfile's, refused in any case
    ('tempfile.mkdtemp is not allowed'). With its frames embedded (the default), the page is
    made in memory: the same HTML matplotlib's writer makes."""
    import uuid
    from matplotlib import animation

    # HTMLWriter with embedded frames keeps them in memory, yet made a temporary directory for
    # frame files it never writes (ani.save('a.html', writer=HTMLWriter(embed_frames=True))
    # failed in a workspace too): it makes none.
    setup_real = animation.HTMLWriter.setup

    def setup(self, fig, outfile, dpi=None, frame_dir=None):
        if not self.embed_frames:
            return setup_real(self, fig, outfile, dpi, frame_dir)
        if str(outfile).rpartition('.')[2] not in ('html', 'htm'):
            return setup_real(self, fig, outfile, dpi, frame_dir)  # matplotlib's error
        self._saved_frames, self._total_bytes, self._hit_limit = [], 0, False
        self.fig, self.outfile = fig, outfile
        self.dpi = fig.dpi if dpi is None else dpi
        self._adjust_frame_size()
        self._tmpdir, self._clear_temp, self._frame_counter = None, False, 0
        self._temp_paths = []

    setup.__doc__ = setup_real.__doc__
    animation.HTMLWriter.setup = setup

    class MemoryHTMLWriter(animation.HTMLWriter):
        """matplotlib's HTMLWriter with embedded frames, its page kept as a string (html)."""

        def finish(self):
            modes = dict(once_checked='', loop_checked='', reflect_checked='')
            modes[self.default_mode + '_checked'] = 'checked'
            self.html = animation.JS_INCLUDE + animation.STYLE_INCLUDE + \
                animation.DISPLAY_TEMPLATE.format(
                    id=uuid.uuid4().hex, Nframes=len(self._saved_frames),
                    fill_frames=animation._embedded_frames(self._saved_frames,
                                                           self.frame_format),
                    interval=1000 // self.fps, **modes)

    real = animation.Animation.to_jshtml

    def to_jshtml(self, fps=None, embed_frames=True, default_mode=None):
        if not embed_frames:
            return real(self, fps, embed_frames, default_mode)
        if fps is None and hasattr(self, '_interval'):
            fps = 1000 / self._interval
        if default_mode is None:
            default_mode = 'loop' if self.repeat else 'once'
        if not hasattr(self, '_html_representation'):
            writer = MemoryHTMLWriter(fps=fps, embed_frames=True, default_mode=default_mode)
            self.save('animation.html', writer=writer)
            self._html_representation = writer.html
        return self._html_representation

    to_jshtml.__doc__ = real.__doc__
    animation.Animation.to_jshtml = to_jshtml


class _PlainGC:
    """A graphics context as matplotlib's Agg renderer reads it, of plain values read from the
    code's one before the C++ runs (_plain_gc)."""
    __slots__ = ('_linewidth', '_alpha', '_forced_alpha', '_rgb', '_antialiased', '_capstyle',
                 '_joinstyle', '_cliprect', 'dashes', 'clip_path', 'snap', 'hatch_path',
                 'hatch_color', 'hatch_linewidth', 'sketch_params')

    def get_dashes(self):
        return self.dashes

    def get_clip_path(self):
        return self.clip_path

    def get_snap(self):
        return self.snap

    def get_hatch_path(self):
        return self.hatch_path

    def get_hatch_color(self):
        return self.hatch_color

    def get_hatch_linewidth(self):
        return self.hatch_linewidth

    def get_sketch_params(self):
        return self.sketch_params


def _plain_gc(gc):
    """gc's values as the C++ reads them, taken now: numbers, colours and boxes converted,
    paths copied (_plain_arg), transforms as arrays."""
    np = sys.modules['numpy']

    def floats(v):
        return None if v is None else tuple(float(x) for x in v)

    def text(v):
        return str.__str__(v) if isinstance(v, str) else v

    p = _PlainGC()
    p._linewidth, p._alpha = float(gc._linewidth), float(gc._alpha)
    p._forced_alpha, p._antialiased = bool(gc._forced_alpha), bool(gc._antialiased)
    p._rgb = floats(gc._rgb)
    p._capstyle, p._joinstyle = text(gc._capstyle), text(gc._joinstyle)
    rect = gc._cliprect
    p._cliprect = None if rect is None else np.array(rect, dtype=np.float64)
    offset, dashes = gc.get_dashes()
    p.dashes = (None if offset is None else float(offset), floats(dashes))
    clip = gc.get_clip_path()
    if clip is None or clip[0] is None:
        p.clip_path = None
    else:
        path, trans = clip
        p.clip_path = (_plain_arg(path), np.array(trans, dtype=np.float64))
    snap = gc.get_snap()
    p.snap = None if snap is None else bool(snap)
    hatch = gc.get_hatch_path()
    p.hatch_path = None if hatch is None else _plain_arg(hatch)
    p.hatch_color = floats(gc.get_hatch_color())
    p.hatch_linewidth = float(gc.get_hatch_linewidth())
    p.sketch_params = _sketch_plain(gc.get_sketch_params())
    return p


def _plain_drawing(real, at):
    """real, a drawing method of the Agg renderer, called with plain arguments and the graphics
    context at position at made a _PlainGC."""
    def draw(self, *args):
        args = [_plain_gc(a) if i == at else _plain_arg(a) for i, a in enumerate(args)]
        return real(self, *args)
    draw.__name__ = draw.__qualname__ = real.__name__
    draw.__doc__ = real.__doc__
    return draw


def _agg_checks():
    """matplotlib's Agg renderer (fig.canvas.get_renderer()._renderer) trusted some sizes its
    draw methods were given: draw_quad_mesh read the coordinates for the mesh width and height
    it was told (a 2x2x2 array drawn as a 3000 by 3000 mesh: read past it, its memory drawn as
    pixels, SIGSEGV), draw_image read 4 bytes a pixel whatever the image's last axis (an
    (h, w, 1) image read past it) and draw_path_collection took each path's antialiasing flag
    modulo their count (none: a division by zero, SIGFPE). These arrays are made here, as the
    C++ reads them, and checked: the coordinates (mesh_height + 1, mesh_width + 1, 2), the
    image h by w by 4 bytes, one antialiasing flag at least."""
    import operator
    import numpy as np
    from matplotlib.backends._backend_agg import RendererAgg

    methods = RendererAgg.__dict__
    quad_mesh, image = methods['draw_quad_mesh'], methods['draw_image']
    path_collection = methods['draw_path_collection']

    def draw_quad_mesh(self, gc, master_transform, mesh_width, mesh_height, coordinates,
                       *args):
        w, h = operator.index(mesh_width), operator.index(mesh_height)
        c = np.array(coordinates, dtype=np.float64, order='C')
        if w < 0 or h < 0 or c.shape != (h + 1, w + 1, 2):
            raise ValueError('a mesh %s wide and %s high needs coordinates of shape (%s, %s, '
                             '2), not %s' % (w, h, h + 1, w + 1, c.shape))
        return quad_mesh(self, gc, master_transform, w, h, c, *args)

    def draw_image(self, gc, x, y, im):
        im = np.array(im, dtype=np.uint8, order='C')
        if im.ndim != 3 or im.shape[2] != 4:
            raise ValueError('the image must be an RGBA array of shape (height, width, 4), '
                             'not %s' % (im.shape,))
        # (agg adds the position and the sizes in C ints: at 2**31 - 6 it wrapped round and
        # the image was written before the canvas)
        x, y = float(x), float(y)
        if not (-2**30 < x < 2**30 and -2**30 < y < 2**30):
            raise ValueError('an image is drawn within 2**30 pixels of the canvas, not at '
                             '(%r, %r)' % (x, y))
        return image(self, gc, x, y, im)

    def draw_path_collection(self, gc, master_transform, paths, transforms, offsets,
                             offset_trans, facecolors, edgecolors, linewidths, dashes,
                             antialiaseds, *args):
        aa = np.array(antialiaseds, dtype=np.uint8)
        if aa.ndim == 1 and not len(aa):
            raise ValueError('antialiaseds must hold one value at least')
        return path_collection(self, gc, master_transform, paths, transforms, offsets,
                               offset_trans, facecolors, edgecolors, linewidths, dashes, aa,
                               *args)

    # restore_region(region, x1, y1, x2, y2, x, y) copies the region's box x1..x2, y1..y2 to
    # x, y of the canvas: agg's clipping added the sizes in C ints, and a box put at 2**31 - 1
    # wrapped round and was drawn outside the canvas. The box lies in the region, and its copy
    # on the canvas.
    restore = methods['restore_region']

    # A region restored whole goes back where it says it was (set_x and set_y move it): one
    # moved to 2**31 - 6 was written before the canvas. It must lie in the canvas. Its
    # extents are its class's answer (a subclass's get_extents lied).
    BufferRegion = type(methods['copy_from_bbox'](RendererAgg(4, 4, 72),
                                                  np.array([[0., 0.], [1., 1.]])))
    extents = BufferRegion.__dict__['get_extents']

    def restore_region(self, region, *box):
        if not isinstance(region, BufferRegion):
            return restore(self, region, *box)  # (its own TypeError)
        rx1, ry1, rx2, ry2 = extents(region)
        h, w = np.asarray(self).shape[:2]
        if not box:
            if not (0 <= rx1 <= rx2 <= w and 0 <= ry1 <= ry2 <= h):
                raise ValueError('the region %r must lie in the canvas (%d by %d)'
                                 % ((rx1, ry1, rx2, ry2), w, h))
            return restore(self, region)
        if len(box) != 6:
            raise TypeError('restore_region takes a region, or a region, a box x1, y1, x2, y2 '
                            'in it and the x, y of the canvas to copy it to')
        x1, y1, x2, y2, x, y = (operator.index(v) for v in box)
        if not (rx1 <= x1 <= x2 <= rx2 and ry1 <= y1 <= y2 <= ry2 and 0 <= x and 0 <= y and
                x + (x2 - x1) <= w and y + (y2 - y1) <= h):
            raise ValueError('the box %r must lie in the region %r, and its copy at (%d, %d) '
                             'in the canvas (%d by %d)' % ((x1, y1, x2, y2),
                                                           (rx1, ry1, rx2, ry2), x, y, w, h))
        return restore(self, region, x1, y1, x2, y2, x, y)

    # copy_from_bbox(bbox) sized its region width * height * 4 in C ints: a box 2**30 pixels
    # wide wrapped round to an empty block whose buffer still said 4 GiB, read and written
    # through numpy (a full escape). The box is taken once, as the C++ reads it (two corners,
    # or x1, y1, x2, y2), and its region must be a size a C int holds.
    copy_from = methods['copy_from_bbox']

    def copy_from_bbox(self, bbox):
        if bbox is None:
            return copy_from(self, bbox)
        r = np.array(bbox, dtype=np.float64)
        if r.shape == (2, 2):
            r = r.reshape(4)
        if r.shape != (4,) or not np.isfinite(r).all() or (np.abs(r) >= 2**30).any():
            raise ValueError('the box must be x1, y1, x2, y2 (or two corners) of finite numbers '
                             'within 2**30')
        x1, y1, x2, y2 = (int(v) for v in r)  # C's casts, toward zero
        if x2 < x1 or y2 < y1 or (x2 - x1) * (y2 - y1) * 4 >= 2**31:
            raise ValueError('the box %r is not a region a canvas can hold' % ((x1, y1, x2, y2),))
        return copy_from(self, r)

    for f, orig in ((draw_quad_mesh, quad_mesh), (draw_image, image),
                    (draw_path_collection, path_collection), (restore_region, restore),
                    (copy_from_bbox, copy_from)):
        f.__doc__ = orig.__doc__
        type_patches[(RendererAgg, orig.__name__)] = f

    # The drawing methods took the code's paths and graphics context as they were: a path's
    # vertices, kept by the C++, were re-strided by a later conversion's __float__ (a
    # transform's), and read at any address (drawn, then read back from the canvas). Each
    # gets plain arguments (_plain_arg: paths as copies, arrays as new objects) and a graphics
    # context of plain values read first (_PlainGC), at its place in the arguments.
    for name, at in (('draw_path', 0), ('draw_markers', 0), ('draw_path_collection', 0),
                     ('draw_quad_mesh', 0), ('draw_image', 0), ('draw_gouraud_triangle', 0),
                     ('draw_gouraud_triangles', 0), ('draw_text_image', 4)):
        if name not in methods:
            continue
        type_patches[(RendererAgg, name)] = _plain_drawing(
            type_patches.get((RendererAgg, name), methods[name]), at)

    # matplotlib.image.resample of an empty input divided by its size (SIGFPE): refused as
    # the image functions refuse an empty image; an empty output has nothing to be written.
    from matplotlib import image as mimage
    resample_real = mimage.resample

    # Its filter's radius sized a table in C unsigned ints (2**23 wrapped to none, which the
    # filter's weights were then written around: SIGSEGV, the host's too): at most 4096.
    # A transform that is not affine answers, through its inverse, one source point per output
    # pixel, which the C code used as its lookup table whatever its length (a (1, 2) answer was
    # read for every pixel of a large output: SIGSEGV, or other memory sampled). The C code is
    # given a transform of ours that asks the code's and checks the answer, and new array
    # objects over the code's memory (the code's transform runs while the C code holds them:
    # none of its code holds them to reshape them).
    class _ResampleInverse:
        __slots__ = ('inverse',)

        def __init__(self, inverse):
            self.inverse = inverse

        def transform(self, mesh):
            n = mesh.shape[0]
            out = np.array(self.inverse.transform(np.array(mesh)), dtype=np.float64,
                           order='C')
            if out.shape != (n, 2):
                raise ValueError('the inverse of a transform that is not affine must map the '
                                 '%d pixel centres of the output to %d points (an array of '
                                 'shape (%d, 2)), not an array of shape %r'
                                 % (n, n, n, out.shape))
            return out

    class _ResampleTransform:
        __slots__ = ('is_affine', 'matrix', 'transform')

        def __init__(self, transform):
            self.is_affine = bool(transform.is_affine)
            self.transform = transform
            # an affine one is read as its 3 x 3 matrix (numpy's conversion of it)
            self.matrix = (np.array(transform, dtype=np.float64) if self.is_affine
                           else None)

        def __array__(self, dtype=None):
            return self.matrix if dtype is None else self.matrix.astype(dtype)

        def inverted(self):
            return _ResampleInverse(self.transform.inverted())

    for c in (_ResampleInverse, _ResampleTransform):
        c.__module__ = mimage.__name__

    def private(a):
        a = np.asarray(a)
        return np.ndarray.view(a, np.ndarray)

    def resample(input_array, output_array, transform, *args, **kwargs):
        kwargs = _plain_names(kwargs)
        input_array = private(input_array)
        if isinstance(output_array, np.ndarray):
            output_array = private(output_array)
        else:
            output_array = private(np.array(output_array))
        if not output_array.flags.writeable:
            raise ValueError('output array is read-only')  # (the C code wrote it anyway)
        if not input_array.size:
            raise ValueError('resample needs a non-empty input array')
        if not output_array.size:
            return None  # nothing to write (a polar image's first pass has no rows)
        if transform is not None:
            transform = _ResampleTransform(transform)
        args = list(args)
        if len(args) > 4 or 'radius' in kwargs:
            r = float(args[4] if len(args) > 4 else kwargs['radius'])
            if not 0 < r <= 4096:
                raise ValueError('the filter radius must be above 0 and at most 4096, not %r'
                                 % r)
            if len(args) > 4:
                args[4] = r
            else:
                kwargs['radius'] = r
        return resample_real(input_array, output_array, transform, *args, **kwargs)

    resample.__doc__ = resample_real.__doc__
    # (matplotlib's images call it in the C module: both names are the wrapper)
    from matplotlib import _image
    mimage.resample = _image.resample = resample


def _font_list_checked():
    """matplotlib reads its font list from the zygote's cache, a file an earlier server wrote
    (or, through a workspace of another server's, a call): a list of another shape made every
    later zygote fail to start ("ttflist": 5), and one whose entries carried other fields, or
    named files that are not there, would reach the drawing code. A list that is not what
    matplotlib writes (its version; its six fields, of their types; font entries of their seven
    fields, each naming a file) is made again here, and written again."""
    import os
    from matplotlib import font_manager as fm

    fields = {'fname': str, 'name': str, 'style': str, 'variant': str, 'weight': (int, str),
              'stretch': str, 'size': str}

    def entry_ok(e):
        d = vars(e) if type(e) is fm.FontEntry else {}
        return (set(d) == set(fields) and all(isinstance(d[k], t) for k, t in fields.items())
                and os.path.isfile(d['fname']))

    m = fm.fontManager
    d = vars(m) if type(m) is fm.FontManager else {}
    ok = (set(d) == {'_version', '_FontManager__default_weight', 'default_size',
                     'defaultFamily', 'afmlist', 'ttflist'}
          and d['_version'] == fm.FontManager.__version__
          and isinstance(d['_FontManager__default_weight'], str)
          and (d['default_size'] is None or type(d['default_size']) in (int, float))
          and type(d['defaultFamily']) is dict
          and all(type(k) is str and type(v) is str for k, v in d['defaultFamily'].items())
          and type(d['afmlist']) is list and type(d['ttflist']) is list
          and all(entry_ok(e) for e in d['afmlist'] + d['ttflist']))
    if ok:
        return
    sys.stderr.write('safepy zygote: matplotlib\'s font list in its cache is not one matplotlib '
                     'wrote: made again\n')
    new = fm._load_fontmanager(try_read_cache=False)
    _replace_all({id(m): (m, new), id(fm.findfont): (fm.findfont, new.findfont),
                  id(fm.get_font_names): (fm.get_font_names, new.get_font_names)})


def _matplotlib():
    import matplotlib as mpl
    mpl.__version__  # computed late from the package's files: now
    mpl.use('Agg')
    _font_list_checked()
    # matplotlib_fname() looks for the configuration file on disk, which a worker cannot
    # ("your Matplotlib install is broken"): the one found here.
    rc_file = mpl.matplotlib_fname()

    def matplotlib_fname():
        return rc_file

    matplotlib_fname.__doc__ = mpl.matplotlib_fname.__doc__
    mpl.matplotlib_fname = matplotlib_fname
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib import font_manager as fm
    from matplotlib.figure import Figure

    # Saving as PDF, PostScript or SVG (savefig('plot.pdf'), plt.switch_backend('pdf')) loads
    # these backends and fontTools, which builds its font tables with eval in its own
    # namespace: a worker would run that armed, and it gets a namespace of its own there. So
    # they load here, and a figure is saved once in each format.
    # A GUI backend (matplotlib.use('TkAgg')) would start Tk in a worker, which reads files the
    # sandbox does not let it: the import fails instead, as it does on a machine with no
    # display. Other toolkits are not installed with the data stack.
    sys.modules.setdefault('_tkinter', None)
    import importlib
    for name in ('pdf', 'ps', 'svg'):
        try:
            importlib.import_module('matplotlib.backends.backend_' + name)
        except ImportError:
            continue

    _ft2font_checks()
    _mpl_path_checks()
    _fonts_in_memory(mpl)
    _type42_fonts()
    _triangulation()
    _agg_checks()
    _no_tex()
    _transform_parents()
    _warnings_outside_matplotlib()
    # Its configuration and cache directories are known now; a worker's environment does not
    # name the server's home.
    import os
    mpl.get_configdir(), mpl.get_cachedir()
    os.environ.pop('MPLCONFIGDIR', None)

    def show(*args, **kwargs):
        """Display all open figures: each becomes an image of this call's result."""
        error = None
        if not plt.get_fignums() and not _shown:
            # A figure an earlier call drew was shown and closed with that call, as a notebook
            # does: changing it and calling show() again shows nothing, which said nothing.
            sys.stderr.write('[plt.show(): no open figure. A figure is shown and closed at '
                             'the end of the call that drew it; to show one again, end the '
                             'call with it (fig) or call display(fig)]\n')
        try:
            for num in plt.get_fignums():
                try:
                    fig = plt.figure(num)
                    # (one savefig showed, not drawn on since, is not shown twice)
                    if not (any(fig is f for f in _saved) and not fig.stale):
                        _keep(fig)
                except (MemoryError, TimeoutError):
                    raise
                except Exception as e:
                    # The others are shown; the first failure is raised, as a notebook shows
                    # the figures it could draw and the error of the one it could not.
                    error = error or e
        finally:
            plt.close('all')
        if error is not None:
            raise error

    def figure_show(self, warn=True):
        """Display the figure: it becomes an image of this call's result."""
        _keep(self)
        plt.close(self)

    show.__module__ = plt.show.__module__
    plt.show = show
    savefig = plt.savefig

    def pyplot_savefig(*args, **kwargs):
        if not plt.get_fignums() and _shown:
            # plt.show() closed the figures it showed (as a notebook does): pyplot's savefig
            # then makes a new, empty figure and saves that, which said nothing.
            sys.stderr.write('[plt.savefig(): no open figure, so an empty one was saved. '
                             'plt.show() shows the figures and closes them: call savefig '
                             'before show, or fig.savefig(...) on a figure kept in a name]\n')
        elif not plt.get_fignums():
            # The figures an earlier call drew were shown and closed as it ended (as a
            # notebook's cell does): "now save that chart" in the next call saved a blank one.
            sys.stderr.write('[plt.savefig(): no open figure, so an empty one was saved. A '
                             'figure is shown and closed at the end of the call that drew it: '
                             'save it in that call, or keep it in a name (fig = plt.gcf()) '
                             'and call fig.savefig(...) later]\n')
        return savefig(*args, **kwargs)

    pyplot_savefig.__doc__ = savefig.__doc__
    pyplot_savefig.__module__ = savefig.__module__
    pyplot_savefig.__name__ = savefig.__name__
    plt.savefig = pyplot_savefig
    # Without a workspace no file can be written: a figure saved to a path comes back as an
    # image of the call (what the file would hold), said on stderr, and the code goes on
    # (savefig('plot.png'); print('saved') failed the whole call). It is not shown again at
    # the call's end unless drawn on since.
    from matplotlib.figure import Figure
    figure_savefig = Figure.savefig

    def savefig_kept(self, fname, *args, **kwargs):
        if not _files_given() and isinstance(fname, (str, bytes, os.PathLike)):
            _keep(self)
            # (drawn as it is now: a change after sets it stale again)
            self.stale = False
            _saved.append(self)
            _note('[savefig(%r): no workspace was given, so no file is written; the figure '
                  'comes back as an image of this call]\n' % (fname,))
            return None
        return figure_savefig(self, fname, *args, **kwargs)

    savefig_kept.__name__, savefig_kept.__qualname__ = 'savefig', 'Figure.savefig'
    savefig_kept.__doc__, savefig_kept.__module__ = figure_savefig.__doc__, Figure.__module__
    Figure.savefig = savefig_kept

    from matplotlib import rcsetup
    switch = plt.switch_backend
    own = {name.lower(): name for name in rcsetup.all_backends}

    windowed = {name.lower() for name in rcsetup.interactive_bk}

    def switch_backend(newbackend):
        """Switch to one of matplotlib's own backends: pyplot imports a backend's module by
        its name ('module://...' any module), and the user's code imports only what it may.
        A backend that draws in a window (TkAgg, QtAgg, ...) draws with Agg: the sandbox has
        no display, and a figure shown becomes an image of the call's result."""
        newbackend = _exact_text(newbackend)
        if newbackend is not rcsetup._auto_backend_sentinel and (
                not isinstance(newbackend, str) or newbackend.lower() not in own):
            raise ImportError(f"{newbackend!r} is not one of matplotlib's backends: "
                              f"{', '.join(sorted(own.values()))}")
        if isinstance(newbackend, str) and newbackend.lower() in windowed:
            sys.stderr.write(f'[matplotlib: no display in the sandbox; {newbackend} draws '
                             'with Agg and plt.show() returns each figure as an image]\n')
            newbackend = 'agg'
        return switch(newbackend)

    switch_backend.__doc__ = switch.__doc__
    switch_backend.__module__ = switch.__module__
    plt.switch_backend = switch_backend
    Figure.show = figure_show
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], label='line')
    ax.scatter([1, 2], [2, 1])
    ax.bar([1, 2], [3, 4])
    ax.hist([1, 2, 2, 3])
    ax.set_title(r'title $\alpha x^2$')
    ax.set_xlabel('x')
    ax.legend()
    ax.text(1, 1, 'bold', fontweight='bold', fontstyle='italic', family='monospace')
    fig2, ax2 = plt.subplots(1, 2)
    im = ax2[0].imshow(np.eye(5))
    fig2.colorbar(im)
    ax2[1].pie([1, 2, 3], labels=['a', 'b', 'c'])
    fig2.tight_layout()
    # Contour plots (contour, contourf, seaborn's two-variable kdeplot) import contourpy when
    # they draw: imported here, with the rest of the stack, as a worker cannot load a package
    # the zygote did not.
    try:
        import contourpy  # noqa: F401
        ax.contourf(np.arange(3), np.arange(3), np.arange(9).reshape(3, 3))
    except ImportError:
        pass
    # The system's fonts: findSystemFonts walks the font directories and runs fc-list, which a
    # worker cannot (the sandbox ended the call). Found here, once; a worker gets the list.
    find = fm.findSystemFonts
    found = {ext: tuple(find(fontext=ext)) for ext in ('ttf', 'otf', 'afm')}

    def findSystemFonts(fontpaths=None, fontext='ttf'):
        if fontpaths is None and fontext in found:
            return list(found[fontext])
        return find(fontpaths, fontext)

    findSystemFonts.__doc__ = find.__doc__
    findSystemFonts.__module__ = find.__module__
    fm.findSystemFonts = findSystemFonts
    _render(fig, 1568, 1 << 20)
    _render(fig2, 1568, 1 << 20)
    text = Figure(figsize=(1, 1))
    text.text(0.5, 0.5, r'x $\alpha$')
    for fmt in ('pdf', 'eps', 'svg'):
        try:
            text.savefig(io.BytesIO(), format=fmt)
        except ImportError:
            pass
    plt.close('all')
    if 'pandas' in sys.modules:
        import pandas as pd
        pd.DataFrame({'a': [1, 2]}).plot()
        plt.close('all')
    if 'mpl_toolkits' in sys.modules:
        from mpl_toolkits.mplot3d import Axes3D  # noqa: F401
        ax3 = plt.figure().add_subplot(projection='3d')
        ax3.plot([1, 2], [1, 2], [1, 2])
        _render(ax3.figure, 1568, 1 << 20)
        plt.close('all')


def _openpyxl():
    # openpyxl writes each worksheet's XML to a temporary file, then copies it into the
    # workbook's zip by name: a worker has no temporary file (the workbook itself is a file of
    # the workspace, or memory). The same XML, written in memory.
    from openpyxl.writer import excel
    from openpyxl.worksheet._writer import WorksheetWriter
    from openpyxl.worksheet._write_only import WriteOnlyWorksheet
    from openpyxl.drawing.spreadsheet_drawing import SpreadsheetDrawing

    def write_worksheet(self, ws):
        ws._drawing = SpreadsheetDrawing()
        ws._drawing.charts = ws._charts
        ws._drawing.images = ws._images
        if self.workbook.write_only:
            if not ws.closed:
                ws.close()
            writer = ws._writer
        else:
            writer = WorksheetWriter(ws, out=io.BytesIO())
            writer.write()
        ws._rels = writer._rels
        self._archive.writestr(ws.path[1:], writer.read())
        self.manifest.append(ws)

    # A write-only worksheet (Workbook(write_only=True)) streams its rows to its writer.
    def _get_writer(self):
        if self._writer is None:
            self._writer = WorksheetWriter(self, out=io.BytesIO())
            self._writer.write_top()

    excel.ExcelWriter.write_worksheet = write_worksheet
    WriteOnlyWorksheet._get_writer = _get_writer


def _pil():
    # Image.open and save find a format's plugin by importing every plugin the first time
    # (Image.init), and the plugins ask features which codecs the C module has: both here, in
    # the zygote, with the modules image code imports next to Image.
    import importlib
    import os
    from PIL import Image
    Image.init()
    for name in ('ImageDraw', 'ImageFont', 'ImageFilter', 'ImageOps', 'ImageEnhance',
                 'ImageChops', 'ImageStat', 'ImageColor', 'ImagePalette', 'ImageSequence',
                 'ImageMath', 'ImageMorph', 'ImageTransform', 'features'):
        importlib.import_module('PIL.' + name)
    # features asks which codecs the C module has by dir() of it, which the sandbox refuses
    # to every frame (check('jpg') and pilinfo() raised AttributeError): the answers, which
    # do not change, are taken here.
    from PIL import features
    codec_checks = {f: features.check_codec(f) for f in features.codecs}
    codec_versions = {f: features.version_codec(f) for f in features.codecs}
    real_check, real_version = features.check_codec, features.version_codec

    def check_codec(feature):
        if feature not in codec_checks:
            return real_check(feature)  # (its own ValueError)
        return codec_checks[feature]

    def version_codec(feature):
        if feature not in codec_versions:
            return real_version(feature)
        return codec_versions[feature]

    check_codec.__doc__, version_codec.__doc__ = real_check.__doc__, real_version.__doc__
    features.check_codec, features.version_codec = check_codec, version_codec
    # The PDF writer maps the file it reads or appends to: a worker maps no file. Its bytes,
    # read whole, are the same buffer.
    from PIL import PdfParser
    get_buf = PdfParser.PdfParser.get_buf_from_file

    def get_buf_from_file(f):
        if hasattr(f, 'getbuffer') or hasattr(f, 'getvalue'):
            return get_buf(f)
        at = f.tell()
        f.seek(0)
        try:
            return f.read()
        finally:
            f.seek(at)

    PdfParser.PdfParser.get_buf_from_file = staticmethod(get_buf_from_file)
    _pil_pointers(Image)
    _pil_read_later(Image)
    _pil_paths(Image)
    _pil_path_points(Image)
    _pil_sequences(Image)
    _pil_fonts()
    _pil_mapped(Image)
    _pil_core(Image)
    _pil_descriptors(Image)

    def show(self, title=None):
        """Display this image: it becomes an image of this call's result."""
        _keep(self, _picture)

    Image.Image.show = show
    # (without a workspace, an image saved to a path comes back as an image of the call, as
    # a figure savefig saves does)
    save_real = Image.Image.save

    def save(self, fp, format=None, **params):
        if not _files_given() and isinstance(fp, (str, bytes, os.PathLike)):
            _keep(self, _picture)
            _note('[Image.save(%r): no workspace was given, so no file is written; the image '
                  'comes back as an image of this call]\n' % (fp,))
            return None
        return save_real(self, fp, format, **params)

    save.__doc__ = save_real.__doc__
    Image.Image.save = save
    # An image's mode is the exact str of its characters, whoever sets it (PIL's codecs take
    # it so; a str subclass's __eq__ answered the checks that compare it).

    def mode_get(self):
        try:
            return _exact_text(self.__dict__['mode'])
        except KeyError:
            raise AttributeError("'%s' object has no attribute 'mode'"
                                 % type(self).__name__) from None

    def mode_set(self, value):
        # (an ImageFile of the code's made its C image of its mode without Image._new)
        self.__dict__['mode'] = _pil_no_bgr(_exact_text(value))

    Image.Image.mode = property(mode_get, mode_set, doc="The image's mode ('L', 'RGB', ...).")


def _pil_no_bgr(mode):
    """The mode, unless one of BGR;15, BGR;16 or BGR;24: an image of those has no pixel access
    (getdata()[i] and floodfill called through a NULL accessor: SIGSEGV). No image is made in
    them, whatever makes it; a file's BGR raw data still decodes into RGB."""
    if isinstance(mode, str) and mode.startswith('BGR;'):
        raise ValueError('mode %s is not supported in the sandbox: use RGB (its raw BGR data '
                         'decodes into RGB)' % mode)
    return mode


def _pil_descriptors(Image):
    """PIL's codecs read and write the descriptor a file object gives them (fileno()) directly,
    in C: the code's object answered 3, and an image saved as PPM wrote the code's bytes into
    the worker's channel to the supervisor (libtiff and OpenJPEG take a descriptor so too; a
    BufferedWriter over a raw stream of the code's answers its fileno; a plugin's save function
    is public in Image.SAVE). No codec gets a descriptor: the tile encoder writes through the
    file's write, every save function (Image.SAVE, SAVE_ALL) and Image.open get the code's file
    objects without fileno, and the TIFF and JPEG 2000 plugins' os has no dup or fstat (their
    codecs then read and write through the file's methods)."""
    import io
    import os as real_os
    from PIL import ImageFile, TiffImagePlugin, Jpeg2KImagePlugin

    class _NoDescriptor:
        """The code's file object, without fileno."""
        __slots__ = ('_file',)

        def __init__(self, f):
            object.__setattr__(self, '_file', f)

        def __getattr__(self, name):
            if name == 'fileno':
                raise AttributeError('fileno')
            return getattr(object.__getattribute__(self, '_file'), name)

        def __iter__(self):
            return iter(object.__getattribute__(self, '_file'))

    def plain(fp):
        if isinstance(fp, (str, bytes, _NoDescriptor)) or hasattr(fp, '__fspath__') or \
                type(fp) is io.BytesIO:
            return fp
        return _NoDescriptor(fp)

    class _NoDescriptors:
        """The os of the plugins whose codecs take a descriptor: none is given."""

        def dup(self, fd):
            raise io.UnsupportedOperation('no descriptor is given to a codec in the sandbox')

        fstat = dup

        def __getattr__(self, name):
            return getattr(real_os, name)

    TiffImagePlugin.os = Jpeg2KImagePlugin.os = _NoDescriptors()
    real_encode_tile = ImageFile._encode_tile

    def _encode_tile(im, fp, tile, bufsize, fh, exc=None):
        return real_encode_tile(im, fp, tile, bufsize, None,
                                exc or io.UnsupportedOperation('no descriptor'))

    ImageFile._encode_tile = _encode_tile

    def saving(real):
        def save(im, fp, filename, *args, **kwargs):
            return real(im, plain(fp), filename, *args, **kwargs)
        save.__name__ = save.__qualname__ = getattr(real, '__name__', 'save')
        save.__doc__ = getattr(real, '__doc__', None)
        return save

    for registry in (Image.SAVE, Image.SAVE_ALL):
        for fmt, f in list(registry.items()):
            registry[fmt] = saving(f)
    # point() to a mode of 16-bit pixels took the 8-to-32-bit path and wrote through the
    # 32-bit row pointers such an image has not (NULL: SIGSEGV)
    real_point = Image.Image.point

    # point(lut, mode) to a mode of several bands fills a table of four entries a value, as a
    # palette's to RGB(A) is read, from a lut of 256 entries a band: to two bands it read 256
    # past the lut's end (another object's bytes came back as pixels), to three it left the
    # fourth of each entry unset (stack bytes in the pixels' padding), and an image of the same
    # bands read that table as one of 256 a band (the stack's bytes again). The mode the image
    # has is its own (the table a band), two bands are refused, and RGB is made through RGBX.
    from PIL import ImageMode

    def point(self, lut, mode=None):
        mode = _exact_text(mode)
        if isinstance(mode, str) and mode.startswith(('I;16', 'BGR;')):
            raise ValueError('point operation to mode %s is not supported' % mode)
        if isinstance(mode, str) and mode == self.mode:
            mode = None
        try:
            bands = len(ImageMode.getmode(mode).bands) if isinstance(mode, str) else 0
        except KeyError:
            bands = 0  # (PIL's own error for a mode it does not know)
        if bands == 3 and mode == 'RGB' and isinstance(lut, (list, tuple)):
            return real_point(self, list(lut) + [0] * 256, 'RGBX').convert('RGB')
        if bands in (2, 3):
            raise ValueError('point operation to mode %s is not supported in the sandbox '
                             '(point to RGB or RGBA, or each band of its own, then convert or '
                             'merge)' % mode)
        return real_point(self, lut, mode)

    point.__doc__ = real_point.__doc__
    Image.Image.point = point
    # No image of a BGR mode (_pil_no_bgr): every Image wraps its C image in Image._new (new,
    # convert, frombuffer, frombytes, merge, copy).
    real_new_image = Image.Image._new

    def _new(self, im):
        _pil_no_bgr(getattr(im, 'mode', None))
        return real_new_image(self, im)

    _new.__doc__ = real_new_image.__doc__
    Image.Image._new = _new
    # (an ImageFile makes its C image of its mode itself, by core.new: a class of the code's
    # may answer any mode, and any image, each time they are read; the C image is not made)
    real_core_new = Image.core.new

    def core_new(mode, size, *args):
        return real_core_new(_pil_no_bgr(_exact_text(mode)), size, *args)

    Image.core.new = core_new
    real_open = Image.open

    def open(fp, mode='r', formats=None):
        return real_open(plain(fp), mode, formats)

    open.__doc__ = real_open.__doc__
    open.__module__ = Image.__name__
    Image.open = open


def _pil_read_later(Image):
    """Image.open reads a file's header and decodes its pixels when they are first used (or
    another frame is asked for): an image opened by name and used in the session's next call
    reads the file's bytes, kept in memory at the end of the call that opened it."""
    from PIL.PngImagePlugin import PngStream
    open_real = Image.open

    def image_in_memory(im, room):
        fp = im.fp
        mem = _in_memory(fp, room)
        if mem is None:
            return 0
        # The plugins keep the file under other names too (_fp), and in their readers (PNG's
        # chunk stream).
        for name, value in list(vars(im).items()):
            if value is fp:
                setattr(im, name, mem)
            elif type(value) is PngStream and value.fp is fp:
                value.fp = mem
        return len(mem.getbuffer())

    def open(fp, mode='r', formats=None):
        im = open_real(fp, mode, formats)
        if getattr(im, '_exclusive_fp', False) and getattr(im, 'fp', None) is not None:
            _later(im, image_in_memory)
        return im

    open.__doc__, open.__module__ = open_real.__doc__, open_real.__module__
    _replace_everywhere(open_real, open)


# How far from an image's origin a box or a drawn coordinate may be: PIL's C code adds sizes
# to them in int, and within 2**29 no such sum or difference wraps.
_PIL_COORDINATE_LIMIT = 1 << 29


def _pil_paths(Image):
    """PIL's coordinate reader (ImagePath.Path, and ImageDraw's line, polygon, point,
    rectangle, ellipse, arc, chord, pieslice and bitmap) took a list's length once, then read
    its items by that index without holding them while their __float__ ran: one that emptied
    the list made it read freed items (SIGSEGV). Path.map kept the path's array across the
    function it calls, which could compact it (write into freed memory). The coordinates are
    now read here first into a tuple of plain numbers (or pairs of floats) read as PIL reads
    them, which the C code reads with nothing of the user's to run; map runs here, writing
    each point back by index (checked against the path's length then)."""
    import operator
    core = Image.core
    path_real = core.path
    path_type = type(path_real(0))
    core_type = type(Image.new('L', (1, 1)).im)
    draw_type = type(core.draw(Image.new('L', (1, 1)).im, 0))

    def real(v):
        # PyFloat_AsDouble: a float's own value, else __float__ or __index__.
        if isinstance(v, float):
            return float.__float__(v)
        if isinstance(v, (str, bytes, bytearray)) or not (
                hasattr(type(v), '__float__') or hasattr(type(v), '__index__')):
            raise TypeError('must be real number, not %s' % type(v).__name__)
        return float(v) if hasattr(type(v), '__float__') else float(operator.index(v))

    def number(v):
        t = type(v)
        return (isinstance(v, complex) or hasattr(t, '__index__') or hasattr(t, '__int__') or
                hasattr(t, '__float__'))

    def flat(data):
        if type(data) is path_type:
            return data
        try:
            view = memoryview(data)
        except TypeError:
            pass
        else:
            with view:
                if view.c_contiguous:
                    return view.tobytes()
        if isinstance(data, (list, tuple)):
            items = tuple(data)
        else:
            if isinstance(data, dict) or not hasattr(type(data), '__getitem__'):
                raise TypeError('argument must be sequence')
            items = []
            for i in range(len(data)):
                try:
                    items.append(data[i])
                except IndexError:
                    break
        out = []
        for v in items:
            if isinstance(v, float):
                out.append(float.__float__(v))
            elif isinstance(v, int):
                out.append(int.__int__(v))
            elif number(v):
                out.append(real(v))
            elif isinstance(v, tuple) and tuple.__len__(v) == 2:
                out.append((real(tuple.__getitem__(v, 0)), real(tuple.__getitem__(v, 1))))
            else:
                raise ValueError('incorrect coordinate type')
        return tuple(out)

    def path(data):
        if hasattr(type(data), '__index__'):
            try:
                return path_real(operator.index(data))
            except TypeError:
                pass
        return path_real(flat(data))
    path.__doc__ = path_real.__doc__
    _replace_everywhere(path_real, path)

    # The C drawing works out clips and offsets in int from coordinates it casts to int: a
    # bitmap drawn at x = 2**31 - 8 (a float, exact) wrapped its right edge round past the
    # clip, and the mask was blended into the bytes before the image's rows. Coordinates stay
    # within _PIL_COORDINATE_LIMIT (as boxes do), where no sum of one and a size wraps.
    import array

    def within(xy):
        if type(xy) is path_type:
            xy = tuple(path_type.__dict__['tolist'](xy, True))
        elif isinstance(xy, bytes):  # (PIL reads a buffer as C floats, two a point)
            xy = tuple(array.array('f', xy[:len(xy) // 8 * 8]))
        for v in xy:
            for c in (v if isinstance(v, tuple) else (v,)):
                if not -_PIL_COORDINATE_LIMIT <= c <= _PIL_COORDINATE_LIMIT:
                    raise ValueError('coordinates are drawn within %d of the image in the '
                                     'sandbox, not %r' % (_PIL_COORDINATE_LIMIT, c))
        return xy

    def drawing(name):
        method = draw_type.__dict__[name]

        def draw(self, xy, *args):
            # (a bitmap is a mask of 8-bit pixels: ImageDraw pastes an RGBA one itself)
            if name == 'draw_bitmap' and args and (type(args[0]) is not core_type or
                                                   args[0].mode not in ('1', 'L')):
                raise ValueError('a bitmap is drawn from an image of mode 1 or L')
            return method(self, within(flat(xy)), *args)
        draw.__name__ = draw.__qualname__ = name
        draw.__doc__ = method.__doc__
        type_patches[(draw_type, name)] = draw

    for name in ('draw_lines', 'draw_points', 'draw_polygon', 'draw_rectangle', 'draw_ellipse',
                 'draw_arc', 'draw_chord', 'draw_pieslice', 'draw_bitmap'):
        drawing(name)
    # An outline (ImageDraw.Outline, for Draw.shape): its points are drawn coordinates, and its
    # transform kept a pointer into its edges while it grew them (a large outline's moved:
    # read after it was freed); the points are given transformed instead.
    outline_type = type(core.outline())

    def outline_point(name):
        method = outline_type.__dict__[name]

        def point(self, *xy):
            return method(self, *within(tuple(real(v) for v in xy)))
        point.__name__ = point.__qualname__ = name
        point.__doc__ = method.__doc__
        type_patches[(outline_type, name)] = point

    for name in ('move', 'line', 'curve'):
        outline_point(name)

    def transform(self, *args):
        raise TypeError('an outline is not transformed in the sandbox: give its points '
                        'transformed')

    type_patches[(outline_type, 'transform')] = transform

    def map(self, function):
        i = 0
        while i < len(self):
            x, y = self[i]
            point = function(x, y)
            if not isinstance(point, tuple) or tuple.__len__(point) != 2:
                raise TypeError('the function must return a tuple of two numbers')
            self[i] = (real(tuple.__getitem__(point, 0)), real(tuple.__getitem__(point, 1)))
            i += 1
    map.__doc__ = path_type.__dict__['map'].__doc__
    type_patches[(path_type, 'map')] = map


def _pil_path_points(Image):
    """ImagePath.Path's item assignment (p[i] = (x, y)) took the point's address in the path's
    array, then read the two numbers: one whose __float__ compacted the path wrote into the
    freed array (pydata.c now reads the point into two floats first: pair_items). compact() of
    an empty path made it a path of one point of uninitialised memory (it answers 0 now, with
    the path left empty), and Path.id handed out the array's address (library code only)."""
    path = Image.core.path
    path_type = type(path(0))
    compact_real = path_type.__dict__['compact']

    def compact(self, *args):
        if path_type.__len__(self) == 0:
            # The arguments read as PIL reads them, on a path of one point (nothing removed).
            return compact_real(path((0.0, 0.0)), *args)
        return compact_real(self, *args)
    compact.__doc__ = compact_real.__doc__
    type_patches[(path_type, 'compact')] = compact
    pair_items.append(path_type)
    library_only.append((path_type, 'id'))


def _pil_sequences(Image):
    """The C methods of an image (img.im) that read a sequence of numbers (putdata, which
    Image.putdata calls, point, filter, color_lut_3d and transform2) took its length once,
    then read its items by index from the list itself while each item's __float__, __index__
    or a pixel tuple's numbers ran: one that emptied the list made them read freed items
    (SIGSEGV, and an escape), and a sequence of the user's that answered a longer length than
    its items made them read past the list. The sequence is now read here first, as PIL reads
    it, into a tuple of plain numbers (or of tuples of plain ints, the pixels of a multi-band
    image), which the C method reads with nothing of the user's to run."""
    import array
    import operator
    import numpy as np
    core_type = type(Image.new('L', (1, 1)).im)
    seqs = (tuple, list, str, bytes, bytearray, memoryview, range, np.ndarray)

    def real(v):
        # PyFloat_AsDouble: a float's own value, else __float__ or __index__.
        t = type(v)
        if t is float or t is int:
            return v
        return array.array('d', (v,))[0]

    def items(data):
        # The items PIL reads: PySequence_Fast's list, as many as the length it took.
        if isinstance(data, (dict, set, frozenset)):
            raise TypeError('argument must be a sequence')
        if type(data) is list or type(data) is tuple:
            return tuple(data)
        n = operator.index(len(data))
        got = list(data)
        if len(got) < n:
            raise ValueError('the sequence has %d items, fewer than its length %d'
                             % (len(got), n))
        return tuple(got[:n])

    def numbers(data, kind):
        out = []
        for v in items(data):
            t = type(v)
            out.append(v if t is int or (t is float and kind is real) else kind(v))
        return tuple(out)

    def value(v):
        # putdata's value of a pixel of one band: a sequence is refused, a number that
        # does not convert is -1 (PIL's own answer).
        t = type(v)
        if t is int or t is float:
            return v
        if isinstance(v, seqs):
            raise TypeError('sequence must be flattened')
        try:
            return real(v)
        except Exception:
            return -1.0

    def ink(v):
        # putdata's pixel of several bands: an int, or a tuple of ints.
        if isinstance(v, int):
            return operator.index(v)
        if isinstance(v, tuple):
            return tuple(operator.index(tuple.__getitem__(v, i))
                         for i in range(tuple.__len__(v)))
        raise TypeError('color must be int or tuple')

    def method(name, at, convert):
        real_method = core_type.__dict__[name]

        def call(self, *args):
            if len(args) > at:
                args = list(args)
                args[at] = convert(self, args)
            return real_method(self, *args)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = real_method.__doc__
        type_patches[(core_type, name)] = call

    def pixels(self, args):
        data = args[0]
        if type(data) is bytes:
            return data
        if isinstance(data, bytes):
            with memoryview(data) as view:
                return view.tobytes()
        return tuple(map(ink if self.bands > 1 else value, items(data)))

    def table(self, args):
        # color_lut_3d(mode, filter, channels, size1D, size2D, size3D, table): a table of
        # float16, float32 or float64 numbers as big as the sizes is read as PIL reads it,
        # from its buffer (a copy of it).
        for i in range(1, 6):
            args[i] = operator.index(args[i])
        t = args[6]
        try:
            view = memoryview(t)
        except TypeError:
            pass
        else:
            with view:
                if (view.format in ('e', 'f', 'd') and view.ndim == 1 and view.c_contiguous
                        and view.shape[0] == args[2] * args[3] * args[4] * args[5]):
                    return np.frombuffer(view.tobytes(), dtype=view.format)
        return numbers(t, real)

    method('putdata', 0, pixels)
    method('point', 0, lambda self, args: numbers(
        args[0], real if len(args) > 1 and args[1] == 'F' else operator.index))
    method('filter', 3, lambda self, args: numbers(args[3], real))
    method('color_lut_3d', 6, table)
    method('transform2', 3, lambda self, args: numbers(args[3], real))


def _pil_mapped(Image):
    """Image.frombuffer maps an image's rows onto the buffer given ('raw' and a mode PIL maps),
    checking only that the rows' starts fit: a stride below a row's width made each row run
    past the buffer (a 1-byte bytes object as a 2**26-pixel row: any memory read and written
    through the image). The stride is a whole row at least, and a read-only buffer is mapped
    as a private copy."""
    frombuffer_real = Image.frombuffer
    pixel = {'L': 1, 'P': 1, 'I;16': 2, 'I;16L': 2, 'I;16B': 2, 'RGBX': 4, 'RGBA': 4,
             'CMYK': 4, 'I': 4, 'F': 4, 'RGB': 4, 'LA': 4, 'RGBa': 4, 'La': 4}

    import operator

    def exact(v):
        # A subclass of tuple, list or str answers its own iteration, items and comparisons:
        # numpy's, PIL's and Python's own reads of its contents see the real ones.
        if isinstance(v, tuple):
            return tuple.__getitem__(v, slice(None))
        if isinstance(v, list):
            return tuple(list.__getitem__(v, slice(None)))
        return str.__str__(v) if isinstance(v, str) else v

    def frombuffer(mode, size, data, decoder_name='raw', *args):
        # Converted first (the size to a pair of exact ints, the decoder's arguments to a
        # tuple of exact items), checked, and only the converted values passed on.
        if isinstance(size, (tuple, list)):
            size = exact(size)
            if len(size) == 2:
                size = (operator.index(size[0]), operator.index(size[1]))
        mode, decoder_name = exact(mode), exact(decoder_name)
        given = exact(args[0] if len(args) == 1 and isinstance(args[0], tuple) else args)
        if decoder_name == 'raw':
            given = tuple(exact(v) for v in given)
        if decoder_name == 'raw' and given:
            rawmode, stride = given[0], given[1] if len(given) > 1 else 0
            if not isinstance(stride, int) or isinstance(stride, bool):
                raise TypeError('the stride should be an int')
            stride = int.__int__(stride)
            given = (rawmode, stride) + given[2:] if len(given) > 1 else given
            width = size[0] if type(size) is tuple and len(size) == 2 else 0
            if type(rawmode) is str and rawmode in Image._MAPMODES and \
                    0 < stride < width * pixel.get(rawmode, 4):
                raise ValueError('a stride of %d bytes is shorter than a row of %d pixels '
                                 'in mode %s' % (stride, width, rawmode))
            if len(given) > 3:
                raise TypeError('frombuffer takes a mode, a stride and a direction')
        try:
            view = memoryview(data)
        except TypeError:
            view = None
        maps = decoder_name == 'raw' and (given[0] if given else mode) in Image._MAPMODES
        if view is not None and view.readonly and maps:
            # The image's core writes into the memory it maps whatever its readonly says
            # (im.im.putpixel, or readonly set back to 0): into an immutable bytes object,
            # even a one-byte one CPython shares with every module's literals. A read-only
            # buffer is mapped as a private copy. (One PIL does not map, an RGB or F image's,
            # is decoded into the image's own memory as it is: its decoder takes read-only
            # bytes only.)
            data = bytearray(view)
        return frombuffer_real(mode, size, data, decoder_name, given)

    frombuffer.__doc__ = frombuffer_real.__doc__
    frombuffer.__module__ = frombuffer_real.__module__
    _replace_everywhere(frombuffer_real, frombuffer)


def _pil_core(Image):
    """PIL's C image (an Image's .im, what getdata() returns) and its codecs take what their
    callers checked: expand with a negative margin copied each row before and past the new
    image's memory, a decoder set on an image with a negative tile origin wrote the data before
    it, a codec of the user's choosing took arguments it trusted (any memory written, or the
    worker crashed; the host's too). The C image's methods and fields are library code's only
    (the Image's methods are the user's); a codec is set on an image only inside it, whoever
    asks; an image's bytes are decoded by the codecs PIL's own files use ('raw', 'hex')."""
    import operator
    import os
    core_type = type(Image.new('L', (1, 1)).im)
    # (what describes it stays readable: a font's getmask returns a C image, whose size code
    # asks for; these read within the image)
    described = ('mode', 'size', 'bands', 'getbbox', 'getextrema', 'getpixel')
    for name in list(core_type.__dict__):
        if not name.startswith('__') and name not in described:
            library_only.append((core_type, name,
                                 "PIL's C image is used by PIL itself only in the sandbox: "
                                 "the Image's own methods do the same work"))
    # expand refused only two negative margins: one copied each row before and past the new
    # image (PIL's Image._expand and RankFilter hand it what they are given).
    expand = core_type.__dict__['expand']

    def checked_expand(self, xmargin, ymargin=0, *args):
        x, y = operator.index(xmargin), operator.index(ymargin)
        w, h = self.size
        # (a margin of 2**31-7 wrapped the new width round to 2 pixels)
        if x < 0 or y < 0 or w + 2 * x >= 1 << 31 or h + 2 * y >= 1 << 31:
            raise ValueError('an image is expanded by margins of 0 or more, within its '
                             'largest size, not %d, %d' % (x, y))
        return expand(self, x, y, *args)

    checked_expand.__name__ = checked_expand.__qualname__ = 'expand'
    type_patches[(core_type, 'expand')] = checked_expand
    # Boxes are C ints, whose sizes and clips the C code works out in int: a paste box from
    # 2**31-4 to past 2**32 made a width of 4 and a start that wrapped round to -16 bytes, a
    # write before the image's rows (fills and crops the same). Coordinates stay within 2**29
    # either way, where no sum or difference of two wraps; they are plain ints from here on.
    box_limit = _PIL_COORDINATE_LIMIT

    def plain_box(box):
        box = tuple(operator.index(v) for v in box)
        if len(box) != 4 or any(not -box_limit <= v <= box_limit for v in box):
            raise ValueError('a box is four coordinates within %d of the image: %r'
                             % (box_limit, box))
        return box

    def box_checked(name, at):
        real = core_type.__dict__[name]

        def checked(self, *args):
            if len(args) > at:
                args = args[:at] + (plain_box(args[at]),) + args[at + 1:]
            return real(self, *args)
        checked.__name__ = checked.__qualname__ = name
        type_patches[(core_type, name)] = checked

    for name, at in (('paste', 1), ('crop', 0), ('reduce', 1), ('transform2', 0)):
        box_checked(name, at)
    # reduce's factor: a factor of 2**31-1 wrapped its output size round to 0 pixels wide.
    reduce = type_patches[(core_type, 'reduce')]

    def checked_reduce(self, factor, *args):
        factor = tuple(operator.index(v) for v in tuple(factor))
        if len(factor) != 2 or not all(1 <= v <= box_limit for v in factor):
            raise ValueError('an image is reduced by factors from 1 to %d, not %r'
                             % (box_limit, factor))
        return reduce(self, factor, *args)

    checked_reduce.__name__ = checked_reduce.__qualname__ = 'reduce'
    type_patches[(core_type, 'reduce')] = checked_reduce
    # offset of an image of no pixels took the offset modulo 0 (SIGFPE): it is that image.
    offset, copy = core_type.__dict__['offset'], core_type.__dict__['copy']

    def checked_offset(self, *args):
        if 0 in self.size:
            return copy(self)
        return offset(self, *args)

    checked_offset.__name__ = checked_offset.__qualname__ = 'offset'
    type_patches[(core_type, 'offset')] = checked_offset
    # merge read each band's rows as 8-bit ones, having checked the bands after the first
    # only (Image.merge too): a first band of 'I' had none (SIGSEGV). Every band is of the
    # mode's band type, by the C images.
    from PIL import ImageMode
    merge_real = Image.core.merge

    def merge(mode, *bands):
        mode = _exact_text(mode)
        try:
            basetype = ImageMode.getmode(mode).basetype if isinstance(mode, str) else None
        except KeyError:
            basetype = None
        for band in bands:
            if band is not None and (type(band) is not core_type or band.mode != basetype):
                raise ValueError('mode mismatch')
        return merge_real(mode, *bands)

    Image.core.merge = merge
    # The fonts' C objects draw into the image whose address they are given (render(text,
    # im.id, ...): any address of the user's choosing, through getmask2's fill= too): their
    # methods are PIL's own, and getmask2 draws into an image it makes itself.
    from PIL import ImageFont
    font_types = [type(ImageFont.load_default().font)]
    try:
        font_types.append(type(ImageFont.truetype(io.BytesIO(next(iter(_font_files.values()))),
                                                  10).font))
    except (StopIteration, OSError, ImportError, AttributeError):
        pass
    for font_type in font_types:
        for name in list(font_type.__dict__):
            if not name.startswith('__'):
                library_only.append((font_type, name,
                                     "PIL's C font is used by PIL itself only in the sandbox: "
                                     "the font's own methods do the same work"))
    getmask2 = ImageFont.FreeTypeFont.getmask2

    def checked_getmask2(self, text, mode='', *args, **kwargs):
        # (the mode by its characters: getmask2 made an 'L' image for a str subclass that
        # said it was not 'RGBA', and the C font, reading 'RGBA', drew 4 bytes a pixel in it)
        mode = _exact_text(mode)
        kwargs = _plain_names(kwargs)
        if 'fill' in kwargs or len(args) >= 1:
            raise TypeError("getmask2's fill is not taken in the sandbox (deprecated: the font "
                            "draws into an image it makes)")
        return getmask2(self, text, mode, **kwargs)

    checked_getmask2.__doc__ = getmask2.__doc__
    ImageFont.FreeTypeFont.getmask2 = checked_getmask2
    # (ImageDraw's text() hands its fontmode to getmask2 and compares it itself: by its
    # characters both)
    from PIL import ImageDraw

    def fontmode_get(self):
        return self.__dict__.get('fontmode', 'L')

    def fontmode_set(self, value):
        self.__dict__['fontmode'] = _exact_text(value)

    ImageDraw.ImageDraw.fontmode = property(fontmode_get, fontmode_set,
                                            doc="The mode text is drawn in ('1' or 'L').")
    # A bitmap font draws a text's glyphs one after the other, their advances (up to 32767
    # each) summed in int: a text long enough wrapped its width round to a small image and
    # the glyphs were pasted at 2**31 - 4 (before the image's rows). A text is drawn within
    # _PIL_COORDINATE_LIMIT, and the font's glyphs are an image of 8-bit pixels ('1' or 'L',
    # by the C image: an 'I' image said to be 'L' was taken).
    bitmap_font_type = font_types[0]
    longest = _PIL_COORDINATE_LIMIT // 32768

    def bitmap_text(name):
        real = bitmap_font_type.__dict__[name]

        def measured(self, text, *args):
            n = (str.__len__(text) if isinstance(text, str) else
                 bytes.__len__(text) if isinstance(text, bytes) else 0)
            if n > longest:
                raise ValueError('a bitmap font draws texts of up to %d characters in the '
                                 'sandbox, not %d' % (longest, n))
            return real(self, text, *args)
        measured.__name__ = measured.__qualname__ = name
        measured.__doc__ = real.__doc__
        type_patches[(bitmap_font_type, name)] = measured

    for name in ('getmask', 'getsize'):
        if name in bitmap_font_type.__dict__:
            bitmap_text(name)
    font_real = Image.core.font

    def font(im, data, *args):
        if type(im) is not core_type or im.mode not in ('1', 'L'):
            raise TypeError('invalid font image mode')
        return font_real(im, data, *args)

    Image.core.font = font
    for made in (Image._getdecoder('L', 'raw', 'L'), Image._getencoder('L', 'raw', 'L')):
        codec = type(made)
        setimage = codec.__dict__['setimage']

        def checked(self, im, extents=None, _setimage=setimage):
            if extents is not None:
                box = tuple(operator.index(v) for v in extents)
                if len(box) != 4 or min(box) < 0 or box[0] > box[2] or box[1] > box[3]:
                    raise ValueError('a tile must lie inside its image: %r' % (extents,))
                extents = box
                return _setimage(self, im, extents)
            return _setimage(self, im)
        checked.__name__ = checked.__qualname__ = 'setimage'
        checked.__doc__ = setimage.__doc__
        type_patches[(codec, 'setimage')] = checked
    # A codec set on an image of another mode than its own wrote (read) each pixel at its
    # mode's size: 4 bytes a pixel into rows of 1 (an image's mode attribute changed, a
    # PyDecoder made for another mode). The codecs PIL makes remember their mode, and are set
    # only on a C image of that mode.
    # One class for all: what a codec remembers sits in slots whose descriptors are taken out
    # of the class (only these functions hold them), so no attribute reaches the real codec.
    class Codec:
        __slots__ = ('real', 'mode')

        def setimage(self, im, extents=None):
            mode = codec_mode.__get__(self)
            if type(im) is not core_type or im.mode != mode:
                raise ValueError('a codec for %s images is set on a %s image'
                                 % (mode, getattr(im, 'mode', type(im).__name__)))
            if extents is None:
                return codec_real.__get__(self).setimage(im)
            return codec_real.__get__(self).setimage(im, extents)

        def __getattr__(self, name):
            return getattr(codec_real.__get__(self), name)

    codec_real, codec_mode = Codec.__dict__['real'], Codec.__dict__['mode']
    del Codec.real, Codec.mode

    def remembering(factory):
        def make(mode, *args, **kwargs):
            # (the mode by its characters, as the C codec takes it: a str subclass's __ne__
            # answered the check below)
            mode = _exact_text(mode)
            codec = Codec()
            codec_real.__set__(codec, factory(mode, *args, **kwargs))
            codec_mode.__set__(codec, mode)
            return codec
        make.__name__ = make.__qualname__ = factory.__name__
        make.__doc__ = factory.__doc__
        return make

    # What an encoder is handed comes from the image's encoderconfig and the save's options,
    # which the code sets; the C code took it for what it claims. JPEG's qtables: each table's
    # length from a list subclass's __len__, its items from what its iteration gave (words past
    # them read as objects). libtiff's tags: each value handed to libtiff as the C type its
    # Python type suggests, while libtiff reads the type of the tag's definition (an int for
    # DocumentName read as a string's address). Here they are plain values of the types the
    # tags take, or refused.
    tiff_ints = {256, 257, 258, 259, 262, 263, 266, 274, 277, 278, 280, 281, 284, 296, 339,
                 531, 32995, 32996, 32997, 32998}
    tiff_floats = {282, 283, 286, 287, 340, 341}
    tiff_tuples = {297: (2, 2), 321: (2, 2), 530: (2, 2), 320: (768, 768), 338: (1, 8)}
    tiff_c_core = tiff_ints | tiff_floats | set(tiff_tuples) | {269, 330, 531, 65537, 301, 532}
    tiff_int_types = {3, 4, 6, 8, 9}
    tiff_float_types = {5, 10, 11, 12}

    def plain_ints(value, low=1, high=1 << 20):
        items = tuple(operator.index(v) for v in tuple(value))
        if not low <= len(items) <= high:
            raise ValueError('a TIFF tag takes %d to %d values, not %d' % (low, high, len(items)))
        return items

    from PIL import TiffTags

    def tiff_tag(tag, value):
        """(value, its TIFF type) as the encoder gets them, or None to leave the tag out."""
        refused = ValueError('TIFF tag %d: a value of type %s is not taken in the sandbox'
                             % (tag, type(value).__name__))
        if tag in tiff_c_core:
            if tag in tiff_ints and type(value) in (int, bool):
                return int(value), None
            if tag in tiff_floats and type(value) in (int, float):
                return float(value), None
            if tag in tiff_tuples and isinstance(value, tuple):
                return plain_ints(value, *tiff_tuples[tag]), None
            if tag == 269 and isinstance(value, bytes):
                return bytes(value), None
            raise refused
        # The type is the tag's own, as PIL knows it (libtiff reads what its definition says:
        # the caller's type, which code sets, made ImageDescription's string an int); a tag
        # PIL does not know is left out, as PIL leaves out values it cannot type.
        info = TiffTags.lookup(tag)
        kind = info.type
        if kind is None or not 1 <= kind <= 12:
            return None
        if kind in (1, 2, 7):
            if isinstance(value, bytes):
                return bytes(value), kind
            raise refused
        # A number, or a count and an array: the encoder passes a tuple as both, which a tag
        # of a fixed count of several (libtiff takes the array alone) would read as its
        # address. Those are left out too.
        if info.length == 0 and isinstance(value, tuple):
            if kind in tiff_float_types:
                return tuple(float(v) for v in tuple(value)), kind
            return tuple(operator.index(v) for v in tuple(value)), kind
        if info.length != 1:
            return None
        if kind in tiff_float_types and type(value) in (int, float):
            return float(value), kind
        if kind in tiff_int_types and type(value) in (int, bool):
            return int(value), kind
        raise refused

    def encoder_args(name, args):
        if name == 'jpeg' and len(args) > 9 and args[9] is not None:
            tables = [list(operator.index(v) for v in list(t)) for t in list(args[9])]
            if not 1 <= len(tables) <= 4 or any(len(t) != 64 for t in tables):
                raise ValueError('JPEG qtables are 1 to 4 tables of 64 values')
            return args[:9] + (tables,) + args[10:]
        if name == 'libtiff':
            if len(args) != 6:
                raise ValueError('the libtiff encoder takes six arguments')
            tags, kinds = [], {}
            for item in list(args[4]):
                tag, value = tuple(item)
                tag = operator.index(tag)
                got = tiff_tag(tag, value)
                if got is not None:
                    tags.append((tag, got[0]))
                    if got[1] is not None:
                        kinds[tag] = got[1]
            # (its file is the encoder's buffer: no descriptor, 0; the code's number named the
            # worker's channel)
            return args[:2] + (0,) + args[3:4] + (tags, kinds)
        return args

    getencoder = Image._getencoder

    def checked_getencoder(mode, encoder_name, args, extra=()):
        # (the name by its characters: PIL finds the encoder by them, a str subclass's __eq__
        # answered the checks below)
        encoder_name = _exact_text(encoder_name)
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return getencoder(mode, encoder_name, encoder_args(encoder_name, tuple(args) + tuple(extra)))

    checked_getencoder.__name__ = checked_getencoder.__qualname__ = '_getencoder'
    Image._getdecoder = remembering(Image._getdecoder)
    Image._getencoder = remembering(checked_getencoder)
    # FreeType's setvaraxes took its count from a list subclass's __len__ and read the list's
    # slots past its items as objects: it is handed a plain list of floats.
    set_axes = ImageFont.FreeTypeFont.set_variation_by_axes

    def set_variation_by_axes(self, axes):
        return set_axes(self, [float(a) for a in list(axes)])

    set_variation_by_axes.__doc__ = set_axes.__doc__
    ImageFont.FreeTypeFont.set_variation_by_axes = set_variation_by_axes
    # ImageCms' profile_tobytes took any object for a profile (a float's value read as the
    # address of an lcms profile, whose IO handler it called).
    try:
        from PIL import ImageCms
        profile_type = type(ImageCms.core.createProfile('sRGB'))
        profile_tobytes = ImageCms.core.profile_tobytes
    except (ImportError, AttributeError, OSError):
        profile_type = None
    if profile_type is not None:
        def tobytes(self):
            profile = self.profile
            if type(profile) is not profile_type:
                raise TypeError('an ImageCmsProfile holds a profile ImageCms made, not %s'
                                % type(profile).__name__)
            return profile_tobytes(profile)

        tobytes.__doc__ = ImageCms.ImageCmsProfile.tobytes.__doc__
        ImageCms.ImageCmsProfile.tobytes = tobytes
    # An image file's tiles name a codec and its arguments, which PIL's plugins read from the
    # file and trust (a pcd decoder writes RGB whatever the image's mode, a tga depth of -16
    # copied a negative length, a jpeg tile narrower than its lines overran them). Tiles the
    # user's code sets (on an opened image, in an ImageFile subclass's _open) decode with
    # 'raw' or 'hex' only, whose arguments are checked; what it reads of an image's tiles is a
    # copy (a change in place would be PIL's list).
    import weakref
    from PIL import ImageFile
    pil_dir = os.path.dirname(Image.__file__) + os.sep
    # id(image): (a reference to it, [its tiles, set by code not PIL's]); images compare by
    # their pixels, so they are not hashed
    tiles = {}

    def by_pil():
        return sys._getframe(2).f_code.co_filename.startswith(pil_dir)

    def entry(self):
        got = tiles.get(id(self))
        return got[1] if got and got[0]() is self else None

    def tile_get(self):
        got = entry(self)
        value = got[0] if got else None
        if not by_pil():
            return list(value) if isinstance(value, list) else value
        if got and got[1] and value:
            for t in value:
                if (type(t) is not tuple or not t or type(t[0]) is not str or
                        t[0] not in ('raw', 'hex')):
                    raise ValueError("tiles the code sets decode with 'raw' or 'hex' in the "
                                     "sandbox, not %r" % (t[0] if type(t) is tuple and t else t,))
        return value

    def tile_set(self, value):
        # (the code's tiles become an exact list, read once: a list's items as they are, not
        # by its own iteration; anything else by its iteration, once. PIL's walk of them and
        # the check's saw other tiles)
        if value is not None and not by_pil():
            value = list.copy(value) if isinstance(value, list) else list(value)
        got = entry(self)
        if got is not None:
            got[:] = [value, not by_pil()]
            return
        key = id(self)

        def gone(ref, key=key):
            if tiles.get(key, (None,))[0] is ref:
                del tiles[key]
        tiles[key] = (weakref.ref(self, gone), [value, not by_pil()])

    ImageFile.ImageFile.tile = property(tile_get, tile_set,
                                        doc='A list of tile descriptors, or None.')
    frombytes_real = Image.Image.frombytes

    def frombytes(self, data, decoder_name='raw', *args):
        if type(decoder_name) is not str or decoder_name not in ('raw', 'hex'):
            raise ValueError("images are decoded from bytes with the 'raw' or 'hex' codec "
                             "in the sandbox (Image.open reads any format PIL knows)")
        return frombytes_real(self, data, decoder_name, *args)

    frombytes.__doc__ = frombytes_real.__doc__
    Image.Image.frombytes = frombytes


def _pil_fonts():
    """ImageFont.truetype('DejaVuSans.ttf', 20): FreeType opens a font's file itself, which a
    worker cannot ('cannot open resource'). The fonts read for matplotlib (DejaVu, STIX,
    Computer Modern) are given from memory by their name or path, and a font file in the
    workspace is read through it."""
    import os
    from PIL import ImageFont
    by_name = {}
    for path, blob in _font_files.items():
        by_name.setdefault(os.path.basename(path), blob)
    truetype_real = ImageFont.truetype

    class FontBytes(io.BytesIO):
        """A font's bytes, read whole each time (font_variant reads its font again)."""

        def read(self, *args):
            self.seek(0)
            return super().read(*args)

    def truetype(font=None, size=10, index=0, encoding='', layout_engine=None):
        if isinstance(font, (str, bytes, os.PathLike)):
            name = os.fsdecode(font)
            blob = _font_files.get(name)
            if blob is None and (os.sep not in name or name.startswith('/usr/share/fonts/')):
                blob = by_name.get(os.path.basename(name))
            if blob is None:
                try:
                    with io.open(name, 'rb') as f:
                        blob = f.read()
                except OSError:
                    pass
            if blob is not None:
                font = FontBytes(blob)
        return truetype_real(font, size, index, encoding, layout_engine)

    truetype.__doc__ = truetype_real.__doc__
    truetype.__module__ = truetype_real.__module__
    _replace_everywhere(truetype_real, truetype)


def _pil_pointers(Image):
    # ImageMath, ImageMorph and ImageCms hand their C code an image's address as a number
    # (image.im.id): an object of the user's that answered .im.id with any number read and
    # wrote any address of the worker, or crashed it. Each image they take is first made a
    # plain Image over its C image object, which is checked to be one: the address is then
    # that object's own.
    import importlib
    core_type = type(Image.new('L', (1, 1)).im)

    def genuine(im):
        core = im.im if isinstance(im, Image.Image) else None
        if type(core) is not core_type:
            raise TypeError('an image is needed here (a PIL.Image.Image)')
        return Image.Image()._new(core)

    from PIL import ImageMath
    operand_init = ImageMath._Operand.__init__

    def __init__(self, im):
        operand_init(self, genuine(im))

    ImageMath._Operand.__init__ = __init__
    # (and again at each operation: the user's function called inside ImageMath.eval could
    # set an operand's image after it was checked)
    apply_real = ImageMath._Operand.apply

    def operand(x):
        return ImageMath._Operand(x.im) if isinstance(x, ImageMath._Operand) else x

    def int_min_by_minus_one(self, im1, im2):
        # Integer images of which the first has INT_MIN and the second -1: C's division of
        # one by the other traps (SIGFPE), as the host's does.
        a, b = self._Operand__fixup(im1), self._Operand__fixup(im2)
        if a.mode != 'I' or b.mode != 'I':
            return False
        low, high = b.getextrema()
        return a.getextrema()[0] == -2**31 and low <= -1 <= high

    unary = ('abs', 'neg', 'invert')

    def apply(self, op, im1, im2=None, mode=None):
        # (the result's mode is the operands': another wrote the op's pixels into rows of
        # another size)
        if mode is not None:
            raise ValueError("ImageMath's operations make an image of their operands' mode "
                             "(convert the result instead)")
        # (an operation of two operands given one was called with a third argument of
        # whatever was at hand: the op is named by its characters, and given its operands)
        if not isinstance(op, str):
            raise TypeError('an operation is named by a str')
        op = str.__str__(op)
        if (im2 is None) != (op in unary):
            raise TypeError("bad operand count for '%s'" % op)
        self, im1 = operand(self), operand(im1)
        im2 = None if im2 is None else operand(im2)
        if op not in ('div', 'mod') or im2 is None or not int_min_by_minus_one(self, im1, im2):
            return apply_real(self, op, im1, im2)
        # x / -1 is -x (INT_MIN's wraps to itself) and x % -1 is 0: the divisor's -1s become
        # 1s, then the quotient's sign is turned where they were.
        a = ImageMath._Operand(self._Operand__fixup(im1))
        b = ImageMath._Operand(self._Operand__fixup(im2))
        twice = apply_real(b, 'eq', b, -1)
        twice = apply_real(twice, 'add', twice, twice)
        q = apply_real(a, op, a, apply_real(b, 'add', b, twice))
        if op == 'mod':
            return q
        return apply_real(q, 'sub', q, apply_real(q, 'mul', q, twice))

    apply.__doc__ = apply_real.__doc__
    ImageMath._Operand.apply = apply

    # numpy reads an image through its __array_interface__, whose shape and type come from
    # the image's mode and size and whose bytes from its tobytes(): an image of the user's
    # (a subclass, or a method set on one) answered a number for tobytes and numpy took it
    # as an address. The interface is the plain image's over its C image, whatever the
    # image's class and attributes say.
    interface = Image.Image.__array_interface__

    def __array_interface__(self):
        self.load()
        return interface.fget(genuine(self))

    Image.Image.__array_interface__ = property(__array_interface__, doc=interface.__doc__)

    # The box blurs under GaussianBlur and BoxBlur take their radius into a C int: one past
    # it (1e12) crashed the worker. A radius is at most 1e8 pixels here (more than any image
    # the worker can hold is wide).
    # Read as the C code reads it (a number by its __float__: a numpy float32 of -3 passed as
    # it was), and not below 0 (a negative box blur ran its window backwards, out of the rows)
    # nor NaN (cast to an int).
    def radius(r):
        if isinstance(r, (tuple, list)):
            return tuple(radius(v) for v in tuple(r))
        if isinstance(r, (str, bytes, bytearray)):
            return r  # (the C code's own TypeError)
        if isinstance(r, int):  # (a count stays an int)
            return max(min(int.__int__(r), 10 ** 8), 0)
        try:
            v = float(r)
        except (TypeError, ValueError):
            return r
        if v != v:
            raise ValueError('a blur radius is a number, not NaN')
        return max(min(v, 1e8), 0.0)

    for name in ('gaussian_blur', 'box_blur', 'unsharp_mask'):
        blur = getattr(core_type, name)

        # (unsharp_mask's radius only: its percent and threshold are its own)
        def clamped(self, *args, _blur=blur, _all=name != 'unsharp_mask'):
            return _blur(self, *(radius(a) if _all or i == 0 else a
                                 for i, a in enumerate(args)))
        clamped.__name__ = clamped.__qualname__ = name
        type_patches[(core_type, name)] = clamped

    def checked(method):
        def call(self, image, *args, **kwargs):
            return method(self, genuine(image), *args, **kwargs)
        call.__name__, call.__qualname__ = method.__name__, method.__qualname__
        call.__doc__ = method.__doc__
        return call

    from PIL import ImageMorph
    for name in ('apply', 'match', 'get_on_pixels'):
        setattr(ImageMorph.MorphOp, name, checked(getattr(ImageMorph.MorphOp, name)))
    try:
        ImageCms = importlib.import_module('PIL.ImageCms')
    except ImportError:
        return
    transform = ImageCms.ImageCmsTransform
    apply_, in_place = transform.apply, transform.apply_in_place
    # The C transform writes pixels of the modes it was built for, whatever the images' are (an
    # RGBA transform applied into an 'L' image wrote 4 bytes a pixel into rows of 1): the modes
    # it was built with are kept here (its mode attributes are the code's to change), each
    # image must be of them, and its C object's methods are PIL's own.
    import weakref
    built = weakref.WeakKeyDictionary()
    init_ = transform.__init__

    def __init__(self, input, output, input_mode, output_mode, *args, **kwargs):
        input_mode, output_mode = _exact_text(input_mode), _exact_text(output_mode)
        init_(self, input, output, input_mode, output_mode, *args, **kwargs)
        built[self] = (input_mode, output_mode)

    def modes(self, src, dst):
        want = built.get(self)
        if want is None or (src.mode, dst.mode) != want:
            raise ValueError('this transform takes %s images to %s images, not %s to %s'
                             % (want + (src.mode, dst.mode) if want else
                                ('?', '?', src.mode, dst.mode)))

    def apply(self, im, imOut=None):
        im = genuine(im)
        if imOut is None:
            imOut = Image.new(self.output_mode, im.size, None)
        imOut = genuine(imOut)
        modes(self, im, imOut)
        return apply_(self, im, imOut)

    def apply_in_place(self, im):
        plain = genuine(im)
        modes(self, plain, plain)
        im.info['icc_profile'] = in_place(self, plain).info.get('icc_profile')
        return im

    __init__.__doc__ = init_.__doc__
    transform.__init__ = __init__
    try:
        srgb = ImageCms.createProfile('sRGB')
        core_transform = type(ImageCms.buildTransform(srgb, srgb, 'RGB', 'RGB').transform)
        for name in list(core_transform.__dict__):
            if not name.startswith('__'):
                library_only.append((core_transform, name,
                                     "PIL's C color transform is used by PIL itself only in "
                                     "the sandbox: the transform's own methods do the same "
                                     "work"))
    except (ImageCms.PyCMSError, OSError, AttributeError):
        pass

    apply.__doc__, apply_in_place.__doc__ = apply_.__doc__, in_place.__doc__
    transform.apply, transform.apply_in_place = apply, apply_in_place


def _tqdm():
    # A bar's first update starts a monitor thread (a worker starts none: tqdm warned and gave
    # up at every call) and makes a multiprocessing lock (a named semaphore: a file in
    # /dev/shm, which the sandbox ends the call for opening; made here it would be shared by
    # every worker). Neither: one process draws its bars, with the threading lock, which
    # stands for the multiprocessing one too (create_mp_lock makes none once it is set; set to
    # None, process_map's ensure_lock gave the bars no lock at all, and left it so for the
    # session's later bars).
    import tqdm.std
    tqdm.std.tqdm.monitor_interval = 0
    tqdm.std.TqdmDefaultWriteLock.mp_lock = tqdm.std.TqdmDefaultWriteLock.th_lock
    try:
        import tqdm.auto  # noqa: F401 (the console bars: no notebook here)
    except ImportError:
        pass


def _scipy_samples():
    """scipy.misc's example data (face, ascent, the electrocardiogram: 2.2 MB) are files of its
    package, which a worker cannot open (the message sent the model to the workspace, which
    cannot help): read here, shared by every worker, given from memory."""
    import io
    import os
    import numpy as np
    try:
        from scipy.misc import _common
    except ImportError:
        return
    where = os.path.dirname(_common.__file__)
    blobs = {}
    for name in ('face.dat', 'ascent.dat', 'ecg.dat'):
        path = os.path.join(where, name)
        if os.path.isfile(path):
            with open(path, 'rb') as f:
                blobs[path] = f.read()

    def known(file):
        return blobs.get(file) if type(file) is str else None

    def open_data(file, mode='r', *args, **kwargs):
        blob = known(file)
        if blob is None or mode != 'rb' or args or kwargs:
            return open(file, mode, *args, **kwargs)
        return io.BytesIO(blob)

    def load_data(file, *args, **kwargs):
        blob = known(file)
        return np.load(io.BytesIO(blob) if blob is not None else file, *args, **kwargs)

    _common.open, _common.load = open_data, load_data


def _mpl_samples():
    """matplotlib's sample data (get_sample_data: the examples' pictures, tables and arrays,
    0.6 MB) are files of its package, which a worker cannot open: read here, and a file object
    asked for is one over the bytes in memory, as the real one would read them."""
    import gzip
    import io
    import os
    import numpy as np
    from matplotlib import cbook
    real = cbook.get_sample_data
    base = cbook._get_data_path('sample_data')
    blobs = {}
    for top, _dirs, names in os.walk(base):
        for name in names:
            with open(os.path.join(top, name), 'rb') as f:
                blobs[os.path.join(top, name)] = f.read()

    def get_sample_data(fname, asfileobj=True, *, np_load=False):
        path = cbook._get_data_path('sample_data', fname)
        blob = blobs.get(str(path))
        if not asfileobj or blob is None:
            return real(fname, asfileobj, np_load=np_load)
        suffix = path.suffix.lower()
        f = io.BytesIO(blob)
        f.name = str(path)  # (imread tells the format by it)
        if suffix == '.gz':
            return gzip.GzipFile(fileobj=f)
        if suffix in ('.npy', '.npz') and np_load:
            return np.load(f)
        if suffix in ('.csv', '.xrc', '.txt'):
            return io.TextIOWrapper(f)
        return f

    get_sample_data.__doc__ = real.__doc__
    cbook.get_sample_data = get_sample_data


def _sklearn():
    # Its estimators live in submodules that load Cython extensions: those load here, in the
    # zygote, with the rest of the stack.
    import importlib
    for name in ('linear_model', 'model_selection', 'preprocessing', 'metrics', 'cluster',
                 'ensemble', 'tree', 'decomposition', 'neighbors', 'svm', 'pipeline',
                 'datasets', 'naive_bayes', 'impute', 'compose', 'feature_extraction',
                 'feature_extraction.text', 'inspection', 'manifold', 'mixture'):
        importlib.import_module('sklearn.' + name)
    from sklearn.utils import validation
    _exact_random_states(validation.check_random_state)
    # The datasets it ships (iris, digits, wine, breast cancer, diabetes, linnerud), their
    # descriptions and its two sample pictures are files of its package, which a worker cannot
    # open: read here, given from memory by the three functions its loaders read them with
    # (and the list of the pictures' package by the one load_sample_images lists it with).
    import io
    import os
    import types
    from sklearn.datasets import _base
    from sklearn.utils import fixes
    files = {}
    for package in ('sklearn.datasets.data', 'sklearn.datasets.descr', 'sklearn.datasets.images'):
        where = os.path.dirname(importlib.import_module(package).__file__)
        for name in os.listdir(where):
            if name.endswith(('.csv', '.csv.gz', '.rst', '.jpg', '.txt')):
                with open(os.path.join(where, name), 'rb') as f:
                    files[package, name] = f.read()

    def contents(package):
        package = package if isinstance(package, str) else package.__name__
        return [name for p, name in files if p == package]

    _base.resources = types.SimpleNamespace(contents=contents)
    # show_versions reads the versions from the packages' metadata files, which a worker
    # cannot open (numpy, pandas, ... said None): the loaded modules' own, taken here.
    from sklearn.utils import _show_versions
    import sklearn
    deps = {'sklearn': sklearn.__version__}
    for name in ('pip', 'setuptools', 'numpy', 'scipy', 'Cython', 'pandas', 'matplotlib',
                 'joblib', 'threadpoolctl'):
        v = getattr(sys.modules.get(name), '__version__', None)
        deps[name] = v if type(v) is str else None

    def _get_deps_info():
        return dict(deps)

    _get_deps_info.__doc__ = _show_versions._get_deps_info.__doc__
    _show_versions._get_deps_info = _get_deps_info

    def data(package, name):
        key = (package if isinstance(package, str) else package.__name__, name)
        if key not in files:
            raise FileNotFoundError(2, 'No such file in the package', '%s/%s' % key)
        return files[key]

    def open_text(package, name):
        return io.StringIO(data(package, name).decode('utf-8'))

    def open_binary(package, name):
        return io.BytesIO(data(package, name))

    def read_text(package, name):
        return data(package, name).decode('utf-8')

    for module in (fixes, _base):
        module._open_text, module._open_binary = open_text, open_binary
        module._read_text = read_text
    # threadpoolctl finds the BLAS and OpenMP libraries a process loaded through ctypes,
    # ldconfig run as a subprocess and /proc, to cap their threads around a computation
    # (KMeans, and others): a worker has none of those, and one thread is what the
    # computation gets here anyway. Its limits do nothing; its report is empty.
    import threadpoolctl

    class threadpool_limits:
        def __init__(self, limits=None, user_api=None):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def restore_original_limits(self):
            pass

        unregister = restore_original_limits

        def get_original_num_threads(self):
            return {}

    def threadpool_info():
        return []

    _replace_everywhere(threadpoolctl.threadpool_limits, threadpool_limits)
    _replace_everywhere(threadpoolctl.threadpool_info, threadpool_info)
    _replace_everywhere(fixes.threadpool_limits, threadpool_limits)
    _replace_everywhere(fixes.threadpool_info, threadpool_info)
    # The platform's name (joblib asks) comes from uname(2), which a worker cannot call: asked
    # here, where the answer is cached.
    import platform
    platform.uname()
    _sklearn_inputs()
    _sklearn_trees()
    _sklearn_predictors()
    _sklearn_losses()
    _svm_models()
    _svm_training()
    _tsne_gradient()
    _private_step_kernels()
    _more_private_kernels()
    _kmeans_centers()
    _sklearn_sparse_inputs()
    _feature_hashing()
    _hist_binning()
    _gb_sample_mask()
    _agglomerative_connectivity()
    _final_metrics()
    _sklearn_sgd()
    _sklearn_coordinate_descent()
    _sklearn_reductions()
    _pyfunc_metrics()
    _lda_kernels()
    _small_kernels()
    _hgb_kernels()
    _polynomial_expansion()
    _exact_numeric_params()
    _readonly_wrappers()
    _no_downloads(_base.get_data_home)


def _readonly_wrappers():
    """scikit-learn hands read-only arrays to compiled kernels in a ReadonlyArrayWrapper, whose
    buffer says writable over whatever it wraps. A loss whose compiled part the code replaced
    (loss.closs) was handed the wrapper, and with its class the code wrote into any read-only
    buffer: immutable bytes, the tree indices a cKDTree hands out read-only (a query then read
    any address). The losses and k-means get the array itself when it is writable, else a
    copy: the wrapper is never made."""
    import numpy as np
    import sklearn._loss.loss  # noqa: F401
    import sklearn.cluster._kmeans  # noqa: F401
    from sklearn.utils import _readonly_array_wrapper as w

    def ReadonlyArrayWrapper(wraps):
        a = np.asarray(wraps)
        return a if a.flags.writeable else a.copy()

    ReadonlyArrayWrapper.__doc__ = w.ReadonlyArrayWrapper.__doc__
    _replace_everywhere(w.ReadonlyArrayWrapper, ReadonlyArrayWrapper)


def _lda_kernels():
    """LatentDirichletAllocation's E-step (transform, fit) hands its compiled kernels arrays
    whose lengths come from the model's fitted attributes, which the code may set:
    _dirichlet_expectation_1d wrote one value for each of doc_topic's into out, whatever out's
    length (an exp_dirichlet_component_ whose slices answered other shapes made doc_topic
    longer than out: a heap write of chosen values), and mean_change read arr_2 for each
    of arr_1's. Each gets arrays of one length, checked (doc_topic and out, written in place,
    the arrays themselves; those only read, copies)."""
    import numpy as np
    from sklearn.decomposition import _lda, _online_lda_fast

    def kernels(ctype, dtype):
        real_change = _online_lda_fast.mean_change[ctype]
        real_1d = _online_lda_fast._dirichlet_expectation_1d[ctype]

        def written(a, what):
            if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != 1 or \
                    not a.flags.writeable:
                raise ValueError('%s must be a 1-D %s array' % (what, np.dtype(dtype)))
            return np.ndarray.view(a)

        def mean_change(arr_1, arr_2):
            arr_1, arr_2 = np.array(arr_1, dtype=dtype), np.array(arr_2, dtype=dtype)
            if arr_1.ndim != 1 or arr_1.shape != arr_2.shape:
                raise ValueError('mean_change compares two 1-D arrays of one length')
            return real_change(arr_1, arr_2)

        def dirichlet_expectation_1d(doc_topic, doc_topic_prior, out):
            doc_topic_prior = float(doc_topic_prior)
            doc_topic, out = written(doc_topic, 'doc_topic'), written(out, 'out')
            if len(doc_topic) != len(out):
                raise ValueError('doc_topic has %d values and out %d: the model\'s topics '
                                 'are not its own' % (len(doc_topic), len(out)))
            return real_1d(doc_topic, doc_topic_prior, out)

        mean_change.__doc__, dirichlet_expectation_1d.__doc__ = (real_change.__doc__,
                                                                  real_1d.__doc__)
        return mean_change, dirichlet_expectation_1d

    checked = {ctype: kernels(ctype, dtype)
               for ctype, dtype in (('float', np.float32), ('double', np.float64))}
    _lda.cy_mean_change = {ctype: pair[0] for ctype, pair in checked.items()}
    _lda.cy_dirichlet_expectation_1d = {ctype: pair[1] for ctype, pair in checked.items()}


def _small_kernels():
    """Kernels that wrote or read by sizes from one array into another: hc_get_heads followed
    parents[parents[i]] unchecked (a tree AgglomerativeClustering took from the cache of the
    code's memory= object: words read at any offset from the array), log_logistic(X, out=)
    wrote X's rows and columns through out's strides whatever out's shape (chosen doubles at
    any address), and NMF's coordinate descent read its permutation for each of W's columns
    (a components_ whose .T had fewer: W written at an index past it). Each checks its arrays'
    shapes and indices first; memory= is a folder's name, None or a joblib.Memory (its cache's
    answers were taken as computed)."""
    import operator
    import numpy as np
    import joblib
    from sklearn.cluster import _agglomerative, _hierarchical_fast
    from sklearn.decomposition import _nmf
    from sklearn.utils import extmath, validation

    real_heads = _hierarchical_fast.hc_get_heads

    def hc_get_heads(parents, copy=True):
        if type(parents) is not np.ndarray or parents.dtype != np.intp or parents.ndim != 1:
            parents = np.array(parents, dtype=np.intp)
        elif copy:
            parents = parents.copy()
        parents = np.ndarray.view(parents)
        if len(parents) and (parents.min() < 0 or parents.max() >= len(parents)):
            raise ValueError('a parent is a node of the tree: from 0 to %d' % (len(parents) - 1))
        return real_heads(parents, copy=False)

    real_check_memory = validation.check_memory

    def check_memory(memory):
        if memory is not None and not isinstance(memory, (str, joblib.Memory)):
            raise ValueError("memory is a folder's name, None or a joblib.Memory in the sandbox "
                             '(what a cache of another kind answers would be taken as computed)')
        return real_check_memory(memory)

    real_sigmoid = extmath._log_logistic_sigmoid

    def _log_logistic_sigmoid(n_samples, n_features, X, out):
        n_samples, n_features = operator.index(n_samples), operator.index(n_features)
        if type(X) is not np.ndarray or type(out) is not np.ndarray or \
                X.shape != (n_samples, n_features) or out.shape != X.shape or \
                X.dtype != np.float64 or out.dtype != np.float64 or not out.flags.writeable:
            raise ValueError('out must be a float64 array of the shape of X, %r' % (X.shape,))
        return real_sigmoid(n_samples, n_features, np.ndarray.view(X), np.ndarray.view(out))

    real_cdnmf = _nmf._update_cdnmf_fast

    def _update_cdnmf_fast(W, HHt, XHt, permutation):
        if type(W) is not np.ndarray or W.ndim != 2 or not W.flags.writeable:
            raise ValueError('W must be a 2-D array')
        W = np.ndarray.view(W)
        k = W.shape[1]
        HHt, XHt = np.array(HHt, dtype=W.dtype), np.array(XHt, dtype=W.dtype)
        permutation = np.array(permutation, dtype=np.intp)
        if HHt.shape != (k, k) or XHt.shape != W.shape or permutation.shape != (k,) or \
                (k and (permutation.min() < 0 or permutation.max() >= k)):
            raise ValueError('the components do not match W: %d of them' % k)
        return real_cdnmf(W, HHt, XHt, permutation)

    for real, new in ((real_heads, hc_get_heads), (real_check_memory, check_memory),
                      (real_sigmoid, _log_logistic_sigmoid), (real_cdnmf, _update_cdnmf_fast)):
        new.__doc__ = real.__doc__
        _replace_everywhere(real, new)
    _agglomerative._hierarchical.hc_get_heads = hc_get_heads

    # A cache's key hashes the call's arguments, and joblib names a built-in function by its
    # __self__, which for a module's function is kept from every caller in the sandbox (the
    # real module): Pipeline(memory=...) failed at its second step. Such a function is named by
    # its module's name, as joblib names it.
    from joblib import hashing
    real_save = hashing.Hasher.save

    def save(self, obj):
        if type(obj) is type(len):
            try:
                obj.__self__
            except AttributeError:
                obj = hashing._MyHash(obj.__name__, getattr(obj, '__module__', None))
                return hashing.Pickler.save(self, obj)
        return real_save(self, obj)

    save.__doc__ = real_save.__doc__
    hashing.Hasher.save = save


def _exact_numeric_params():
    """An estimator's parameters are checked (Interval(Integral, 1, None) and the like) by
    comparisons a number of the code's answers itself: a numbers.Integral whose comparisons
    said 10 was within (1, 3) and whose __index__ said 10 to numpy had t-SNE's quad tree write
    2**10 children into cells of 8 (the stack smashed). Before they are checked, parameters that
    are numbers of another class than Python's and numpy's own are made the numbers they convert
    to, once: what is checked is what the estimator uses. (Quad trees are made of 1 to 3
    dimensions.)"""
    import numbers
    import operator
    import numpy as np
    from sklearn import base
    from sklearn.neighbors import _quad_tree

    def exact(v):
        if type(v) in (int, float, bool, complex) or isinstance(v, np.generic) or \
                not isinstance(v, numbers.Number):
            return v
        if isinstance(v, numbers.Integral):
            return int.__index__(operator.index(v))
        if isinstance(v, numbers.Real):
            return float(v)
        return complex(v)

    real = base.BaseEstimator._validate_params

    def _validate_params(self):
        for name, v in self.get_params(deep=False).items():
            e = exact(v)
            if e is not v:
                setattr(self, name, e)
        return real(self)

    _validate_params.__doc__ = real.__doc__
    base.BaseEstimator._validate_params = _validate_params

    def quad_tree(args, kwargs):
        n = operator.index(args[0] if args else kwargs['n_dimensions'])
        if not 1 <= n <= 3:
            raise ValueError('a quad tree has 1 to 3 dimensions, not %d' % n)
        return tuple(args), kwargs

    new_checks[_quad_tree._QuadTree] = quad_tree


def _polynomial_expansion():
    """PolynomialFeatures.transform of a sparse X hands its compiled expansion interaction_only
    and the degree as they are set on the estimator (checked at fit only): the kernel counts
    its output for interaction_only 0 or 1 and writes every pair at that distance, so 2
    counted fewer values than it wrote (chosen doubles and column numbers written past its
    arrays). interaction_only is 0 or 1, the degree 2 or 3, the matrix's arrays checked."""
    import operator
    import numpy as np
    from sklearn.preprocessing import _polynomial
    sp = sys.modules['scipy.sparse']
    real = _polynomial._csr_polynomial_expansion

    def _csr_polynomial_expansion(data, indices, indptr, d, interaction_only, degree):
        d, degree = operator.index(d), operator.index(degree)
        interaction_only = operator.index(interaction_only)
        if interaction_only not in (0, 1) or degree not in (2, 3) or d < 0:
            raise ValueError('interaction_only must be 0 or 1 and the degree 2 or 3')
        m = _checked_sparse(sp.csr_matrix((data, indices, indptr),
                                          shape=(len(indptr) - 1, d)))
        return real(m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32), d,
                    interaction_only, degree)

    _csr_polynomial_expansion.__doc__ = real.__doc__
    _replace_everywhere(real, _csr_polynomial_expansion)


def _hgb_kernels():
    """The gradient boosting's compiled histogram builder and splitter took their sizes from
    what they were given: an interaction constraint of an int subclass that answered the range
    check (feature 10**7 of 3: histograms written past), gradients of fewer samples than X
    from a loss of the code's (its values written past the builder's copy of them). They are
    made by the grower only, their attributes are the library's, and each call checks its
    arrays against theirs: X_binned a private copy whose bins are within the histograms, one
    gradient (and hessian, or one for all) a sample, sample indices within the samples,
    features within the features, the split's feature and bins within them."""
    import operator
    import os
    import numpy as np
    import sklearn
    from sklearn.ensemble._hist_gradient_boosting import histogram, splitting, common

    hgb_dir = os.path.join(os.path.dirname(sklearn.__file__), 'ensemble',
                           '_hist_gradient_boosting') + os.sep
    Builder, Splitter, SplitInfo = (histogram.HistogramBuilder, splitting.Splitter,
                                    splitting.SplitInfo)

    def by_grower(what, kwargs):
        if not sys._getframe(2).f_code.co_filename.startswith(hgb_dir) or kwargs:
            raise TypeError('the %s is made by the gradient boosting\'s grower, not by its '
                            'class' % what)

    def binned(X, n_bins):
        X = np.array(X, dtype=common.X_BINNED_DTYPE, order='F')  # a copy no code holds
        if X.ndim != 2 or (X.size and int(X.max()) >= n_bins):
            raise ValueError('X_binned must be 2-D with bins below %d' % n_bins)
        return X

    def builder_made(args, kwargs):
        by_grower('histogram builder', kwargs)
        X, n_bins, gradients, hessians, constant, n_threads = args
        n_bins, constant = operator.index(n_bins), bool(constant)
        if not 1 <= n_bins <= 256:
            raise ValueError('n_bins must be from 1 to 256')
        X = binned(X, n_bins)
        gradients = np.array(gradients, dtype=common.G_H_DTYPE)
        hessians = np.array(hessians, dtype=common.G_H_DTYPE)
        if gradients.shape != (X.shape[0],) or hessians.shape != ((1,) if constant else
                                                                  (X.shape[0],)):
            raise ValueError('the gradients and hessians must be one a sample (the hessians '
                             'one for all when constant)')
        return (X, n_bins, gradients, hessians, constant, n_threads), kwargs

    def splitter_made(args, kwargs):
        by_grower('splitter', kwargs)
        args = list(args)
        missing_bin = operator.index(args[2])
        if not 0 <= missing_bin <= 255:
            raise ValueError('missing_values_bin_idx must be from 0 to 255')
        X = binned(args[0], missing_bin + 1)
        f = X.shape[1]
        args[0], args[2] = X, missing_bin
        for i, dtype in ((1, np.uint32), (3, np.uint8), (4, np.uint8), (5, np.int8)):
            a = np.array(args[i], dtype=dtype)
            if a.shape != (f,):
                raise ValueError('the splitter needs one value a feature')
            args[i] = a
        if (args[1] > missing_bin).any():
            raise ValueError('the bins of a feature are below the bin of missing values')
        return tuple(args), kwargs

    new_checks[Builder] = builder_made
    new_checks[Splitter] = splitter_made
    for cls in (Builder, Splitter):
        library_only.extend((cls, n) for n, v in vars(cls).items()
                            if type(v).__name__ == 'getset_descriptor' and
                            v.__set__ is not None)

    def features(allowed, f):
        if allowed is None:
            return None
        allowed = np.array(allowed, dtype=np.uint32)
        if allowed.ndim != 1 or (allowed.size and int(allowed.max()) >= f):
            raise ValueError('allowed features must be among the %d features' % f)
        return allowed

    def samples(indices, n):
        # (the grower's are views of the splitter's partition, a typed memoryview)
        indices = np.ndarray.view(np.asarray(indices), np.ndarray)
        if indices.dtype != np.uint32 or indices.ndim != 1 or len(indices) > n or \
                (indices.size and int(indices.max()) >= n):
            raise ValueError('sample indices must be a uint32 array of samples below %d' % n)
        return indices

    def hist_checked(h, f, n_bins):
        # (the builder's are typed memoryviews)
        h = np.ndarray.view(np.asarray(h), np.ndarray)
        if h.dtype != common.HISTOGRAM_DTYPE or h.shape != (f, n_bins):
            raise ValueError('histograms must be of shape (%d, %d)' % (f, n_bins))
        return h

    brute, subtraction = vars(Builder)['compute_histograms_brute'], \
        vars(Builder)['compute_histograms_subtraction']
    find_split, split = vars(Splitter)['find_node_split'], vars(Splitter)['split_indices']

    def compute_histograms_brute(self, sample_indices, allowed_features=None):
        n, f = self.X_binned.shape
        return brute(self, samples(sample_indices, n), features(allowed_features, f))

    def compute_histograms_subtraction(self, parent_histograms, sibling_histograms,
                                       allowed_features=None):
        f, n_bins = self.X_binned.shape[1], self.n_bins
        return subtraction(self, hist_checked(parent_histograms, f, n_bins),
                           hist_checked(sibling_histograms, f, n_bins),
                           features(allowed_features, f))

    def find_node_split(self, n_samples, histograms, sum_gradients, sum_hessians, value,
                        lower_bound=-np.inf, upper_bound=np.inf, allowed_features=None):
        n, f = self.X_binned.shape
        n_samples = operator.index(n_samples)
        if not 0 <= n_samples <= n:
            raise ValueError('a node has from 0 to %d samples' % n)
        histograms = hist_checked(histograms, f, self.missing_values_bin_idx + 1)
        return find_split(self, n_samples, histograms,
                          float(sum_gradients), float(sum_hessians), float(value),
                          float(lower_bound), float(upper_bound), features(allowed_features, f))

    def split_indices(self, split_info, sample_indices):
        n, f = self.X_binned.shape
        if type(split_info) is not SplitInfo:
            raise TypeError('split_indices takes the SplitInfo find_node_split made')
        s = split_info
        feature, bin_idx = operator.index(s.feature_idx), operator.index(s.bin_idx)
        bitset = s.left_cat_bitset
        if bitset is not None:
            bitset = np.array(bitset, dtype=common.X_BITSET_INNER_DTYPE)
            if bitset.shape != (8,):
                raise ValueError('a split\'s categories are a bitset of 8 words')
        if not 0 <= feature < f or not 0 <= bin_idx <= 255:
            raise ValueError('the split is not of these features and bins')
        info = SplitInfo(float(s.gain), feature, bin_idx, bool(s.missing_go_to_left),
                         float(s.sum_gradient_left), float(s.sum_hessian_left),
                         float(s.sum_gradient_right), float(s.sum_hessian_right),
                         operator.index(s.n_samples_left), operator.index(s.n_samples_right),
                         float(s.value_left), float(s.value_right), bool(s.is_categorical),
                         bitset)
        partition = np.asarray(self.partition)
        indices = samples(sample_indices, n)
        # (a view of the splitter's own partition, which it rewrites in place)
        if not (np.byte_bounds(partition)[0] <=
                                        np.byte_bounds(indices)[0] and
                                        np.byte_bounds(indices)[1] <=
                                        np.byte_bounds(partition)[1]):
            raise ValueError('sample indices are a view of the splitter\'s partition')
        return split(self, info, indices)

    for cls, f, real in ((Builder, compute_histograms_brute, brute),
                         (Builder, compute_histograms_subtraction, subtraction),
                         (Splitter, find_node_split, find_split),
                         (Splitter, split_indices, split)):
        f.__doc__ = real.__doc__
        type_patches[(cls, f.__name__)] = f


def _seaborn():
    import seaborn.utils
    _no_downloads(seaborn.utils.get_data_home)


def _no_downloads(get_data_home):
    """The datasets a library downloads (sklearn's fetch_*, seaborn's load_dataset) first make
    their cache directory in the home, which failed with 'os.mkdir is not allowed': they say
    what is wrong instead. A cache directory named by the code that exists (data_home='.', the
    workspace holding the dataset's file) is the library's to read, as on the host; a download
    it would then start finds no network."""
    import os

    def no_data_home(data_home=None, *args, **kwargs):
        if data_home is not None:
            path = os.path.expanduser(os.fspath(data_home))
            if isinstance(path, str) and os.path.isdir(path):
                return path
        raise PermissionError('datasets are downloaded, and the sandbox has no network: '
                              'give the file in the workspace and read it from there '
                              "(e.g. pd.read_csv('iris.csv'))")

    no_data_home.__name__ = no_data_home.__qualname__ = get_data_home.__name__
    no_data_home.__module__ = get_data_home.__module__
    no_data_home.__doc__ = get_data_home.__doc__
    _replace_everywhere(get_data_home, no_data_home)


def _sklearn_trees():
    """A fitted tree's C arrays are read through properties that size their numpy views by the
    tree's counts, which were settable (node_count = 1 << 44 made its value a view of all
    memory), and its node links and features, and a KD or ball tree's index arrays, were
    writable or replaceable and followed unchecked by predict and query (SIGSEGV). The counts
    and a KD or ball tree's arrays are not set from Python; the nodes' fields (links,
    features, thresholds, impurities, weights) and the indices (and get_arrays()) are read as
    copies (values stay the tree's own: numbers that gradient boosting updates in place)."""
    import numpy as np
    from sklearn.tree._tree import Tree
    from sklearn.neighbors import KDTree, BallTree

    def read_only(cls, name, copy):
        d = cls.__dict__[name]

        def get(self):
            v = d.__get__(self, cls)
            return np.array(v) if copy else v

        def refuse(self, value):
            raise AttributeError('%s.%s is not set in the sandbox' % (cls.__name__, name))

        return property(get, refuse, None, d.__doc__)

    # (threshold, impurity and weighted_n_node_samples are fields of the node array: a view of
    # one had that whole array, links and features included, writable as its .base; value is
    # an array of its own, of numbers only)
    copied = {'children_left', 'children_right', 'feature', 'n_node_samples', 'n_classes',
              'threshold', 'impurity', 'weighted_n_node_samples'}
    kept = {'value', 'n_leaves'}
    for name, d in list(Tree.__dict__.items()):
        if type(d).__name__ == 'getset_descriptor' and name not in kept:
            type_patches[(Tree, name)] = read_only(Tree, name, name in copied)
    for tree in (KDTree, BallTree):
        base = tree.__mro__[1]
        for name, d in list(base.__dict__.items()):
            if type(d).__name__ == 'getset_descriptor':
                type_patches[(base, name)] = read_only(base, name, name != 'sum_weight')
        arrays = base.__dict__['get_arrays']

        def get_arrays(self, arrays=arrays):
            return tuple(np.array(a) for a in arrays(self))

        get_arrays.__doc__ = arrays.__doc__
        type_patches[(base, 'get_arrays')] = get_arrays
        _tree_queries(base, tree)
    _tree_methods(Tree)
    _tree_pruning(Tree)
    _gradient_boosting_stages(Tree)
    _tree_fits_check_input()


def _tree_fits_check_input():
    """A tree's fit(X, y, check_input=False) handed X, y and the weights to the compiled
    builder unchecked: a sparse X whose data was replaced by a shorter array after it was made
    was read past its end (each fit's threshold gave a float of the heap back), y and the
    weights shorter than X's rows the same. fit always checks its input (forests and boosting
    call it with check_input=False on what they checked: it is checked again)."""
    from sklearn.tree._classes import BaseDecisionTree
    real = BaseDecisionTree.__dict__['fit']

    def fit(self, X, y, sample_weight=None, check_input=True):
        return real(self, X, y, sample_weight=sample_weight, check_input=True)

    fit.__doc__ = real.__doc__
    fit.__name__ = fit.__qualname__ = 'fit'
    type_patches[(BaseDecisionTree, 'fit')] = fit


_trees_querying = [0]  # queries of KD and ball trees running (a metric of the code's inside)
_dual_build = [None]  # a dual-tree query's points, whose own tree's build is next


def _tree_queries(base, tree_class):
    """A KD or ball tree's query runs a metric of the code's (metric=f) between the nodes it
    walks, and re-reads the tree's arrays as it goes: f built the tree again (its __init__, or
    __setstate__) on more points, and query_radius wrote an index and a distance for each of
    them into buffers sized for the old tree (a heap write of f's values). While a query runs,
    no KD or ball tree is built. (__setstate__ keeps the copy machinery's own check: the state
    a tree's C __setstate__ gets is one its own C reduce gave.)"""
    def refused():
        return RuntimeError('a KD or ball tree is not built while a query of one runs (a '
                            'metric function of the code\'s is running inside it)')

    import operator
    np = sys.modules['numpy']
    # A dual-tree query (query, two_point_correlation) builds its own tree of the query points
    # first, before any metric runs: that one build is let through, with every argument made
    # a plain value first (no code of the code's runs in the query before its build).
    duals = {'query': ('X', 'k', 'return_distance', 'dualtree', 'breadth_first',
                       'sort_results'),
             'two_point_correlation': ('X', 'r', 'dualtree')}

    def plain(names, args, kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        given = dict(zip(names, args))
        if len(args) > len(names) or set(given) & set(kwargs) or set(kwargs) - set(names):
            return None
        given.update(kwargs)
        if not given.get('dualtree'):
            return None
        for name, v in given.items():
            given[name] = (np.array(v, dtype=np.float64, order='C') if name in ('X', 'r')
                           else operator.index(v) if name == 'k' else bool(v))
        return given

    # A tree made and never built (KDTree.__new__(KDTree), a subclass whose __init__ builds
    # nothing) keeps the placeholder arrays its C allocation made, one item each, which the
    # queries read as a tree (node 0's range of indices any offset from them: any word read
    # back, or a SIGSEGV). Its state says so: a leaf size and a node count of 0.
    state_of = base.__dict__['__getstate__']

    def built_tree(tree):
        state = state_of(tree)
        if not (isinstance(state, tuple) and len(state) > 6 and state[4] >= 1 and
                state[6] >= 1):
            raise ValueError('the tree is not built: make it with %s(X)'
                             % type(tree).__name__)

    def querying(real):
        names = duals.get(real.__name__)

        def method(self, *args, **kwargs):
            built_tree(self)
            # (sklearn builds it as self.__class__(X): a subclass's __init__ would build
            # what it likes with the pass, more points than the query's buffers hold; and only
            # the query's own points, the very array made here, are let through)
            given = (plain(names, args, kwargs)
                     if names and type(self) is tree_class else None)
            _trees_querying[0] += 1
            _dual_build[0] = given['X'] if given is not None else None
            try:
                if given is not None:
                    return real(self, **given)
                return real(self, *args, **kwargs)
            finally:
                _trees_querying[0] -= 1
                _dual_build[0] = None
        method.__name__ = method.__qualname__ = real.__name__
        method.__doc__ = real.__doc__
        return method

    for name in ('query', 'query_radius', 'kernel_density', 'two_point_correlation'):
        type_patches[(base, name)] = querying(base.__dict__[name])

    np = sys.modules['numpy']

    def query_points(points):
        # the query's own points: that array, or a view of it of the same shape and memory
        # (query reshapes it; two_point_correlation hands on its compiled memoryview of it,
        # read as an array through the buffer protocol: sklearn's own type, no code runs)
        own = _dual_build[0]
        if own is None:
            return False
        if (type(points).__name__ == '_memoryviewslice' and
                type(points).__module__.startswith('sklearn.neighbors.')):
            points = np.asarray(points)
        return (type(points) is np.ndarray and points.shape == own.shape and
                points.dtype == own.dtype and points.ctypes.data == own.ctypes.data)

    def built(args, kwargs):
        points = args[0] if args else (kwargs or {}).get('data')
        if _trees_querying[0] and not query_points(points):
            raise refused()
        _dual_build[0] = None
        # A weight for each point: kernel_density reads sample_weight[i] for every point of
        # the data, unchecked (a shorter array had the words past it read back as densities).
        args, kwargs = list(args), dict(kwargs or {})
        at = 'sample_weight' if 'sample_weight' in kwargs else 3 if len(args) > 3 else None
        weights = None if at is None else kwargs[at] if isinstance(at, str) else args[at]
        if weights is not None:
            data = np.asarray(args[0] if args else kwargs.get('data'))
            weights = np.array(weights, dtype=np.float64, order='C')
            if weights.ndim != 1 or data.ndim < 1 or weights.shape[0] != data.shape[0]:
                raise ValueError('sample_weight must have one weight for each point of the '
                                 'data (%d), not shape %r'
                                 % (data.shape[0] if data.ndim else 0, weights.shape))
            if isinstance(at, str):
                kwargs[at] = weights
            else:
                args[at] = weights
            if args:
                args[0] = data
            else:
                kwargs['data'] = data
        return tuple(args), kwargs

    init_checks[base] = built


def _tree_rows(X, need, stages=False):
    """X as compiled tree code reads it, checked: it reads X[i, feature] for the trees'
    features (need: the most any splits on) and a sparse X's indices unchecked (an estimator
    checks X against its n_features_in_, which is the user's to set; tree_'s methods are
    called directly too). An array is numpy's own over the same memory (a subclass answers
    its own shape). For gradient boosting's stages (which read X's memory as float32 rows
    themselves) a CSR matrix or a C-ordered 2-D float32 array; for a Tree's methods, which
    refuse other types themselves, anything else as it is."""
    np = sys.modules['numpy']
    sp = sys.modules['scipy.sparse']
    if sp.issparse(X):
        X = _checked_sparse(X)
        if stages and X.format != 'csr':
            raise ValueError('X should be a CSR matrix')
    elif isinstance(X, np.ndarray):
        X = np.asarray(X)
    if not sp.issparse(X) and (not isinstance(X, np.ndarray) or X.ndim != 2 or (stages and (
            X.dtype != np.float32 or not X.flags.c_contiguous))):
        if stages:
            raise ValueError('X should be a C-ordered 2-D float32 array')
        return X  # the compiled method refuses it
    if X.shape[1] < need:
        raise ValueError('X has %d features, but a tree splits on %d' % (X.shape[1], need))
    return X


def _tree_methods(Tree):
    """A fitted Tree's apply, predict and decision_path read X at the tree's features and a
    sparse X at its indices, unchecked (a CSR matrix's index of 2**30: SIGSEGV; an estimator
    whose n_features_in_ was set lower: a read past X), and compute_partial_dependence wrote
    out[i] for every row of X whatever out's length (a chosen write: the sandbox escaped). The
    arguments are checked first."""
    np = sys.modules['numpy']

    def nodes(tree):
        # A Tree made by its constructor has no nodes (no memory for them) until a builder
        # fills it: its methods read the first node unchecked (SIGSEGV).
        if tree.node_count < 1:
            raise ValueError('the tree has no nodes: it is built by fitting an estimator')

    def rows(name):
        real = Tree.__dict__[name]

        def method(self, X):
            nodes(self)
            # (the features its nodes split on, leaves' being negative, and its own count)
            feature = self.feature
            need = max(self.n_features, int(feature.max()) + 1 if len(feature) else 0)
            return real(self, _tree_rows(X, need))

        method.__name__ = method.__qualname__ = name
        method.__doc__ = real.__doc__
        type_patches[(Tree, name)] = method

    for name in ('apply', 'predict', 'decision_path'):
        rows(name)
    real_pd = Tree.__dict__['compute_partial_dependence']

    def compute_partial_dependence(self, X, target_features, out):
        if not all(isinstance(a, np.ndarray) for a in (X, target_features, out)):
            raise TypeError('X, target_features and out should be arrays')
        # Exact arrays over the same memory (out is written in place): a subclass answers its
        # own len and shape.
        X, target_features, out = np.asarray(X), np.asarray(target_features), np.asarray(out)
        nodes(self)
        if X.ndim != 2 or out.ndim != 1 or target_features.ndim != 1 or \
                out.shape[0] < X.shape[0] or target_features.shape[0] > X.shape[1]:
            raise ValueError('X should be 2-D with a column for each target feature, '
                             'and out have a value for each of its rows')
        return real_pd(self, X, target_features, out)

    compute_partial_dependence.__doc__ = real_pd.__doc__
    type_patches[(Tree, 'compute_partial_dependence')] = compute_partial_dependence
    real_fi = Tree.__dict__['compute_feature_importances']

    def compute_feature_importances(self, normalize=True):
        nodes(self)
        return real_fi(self, normalize)

    compute_feature_importances.__doc__ = real_fi.__doc__
    type_patches[(Tree, 'compute_feature_importances')] = compute_feature_importances


def _gradient_boosting_stages(Tree):
    """Gradient boosting's compiled predict_stages(estimators, X, scale, out) and
    predict_stage(estimators, stage, X, scale, out) wrote out[i, k] for every column k of
    estimators (the model's estimators_, the user's to set: 65536 columns wrote past out) and
    read X at each tree's features as float32. They are checked first: estimators a 2-D array
    of fitted trees (taken once here: a tree_ that answered otherwise at the next read is not
    read again), out float64 of one row per row of X and one column per column of
    estimators, X float32 and C-ordered with every feature a tree splits on (or a checked
    sparse matrix)."""
    import operator
    import numpy as np
    from sklearn.ensemble import _gradient_boosting

    class _Stage:
        __slots__ = ('tree_',)

    def stages(estimators, X, out):
        estimators = np.asarray(estimators)
        if estimators.ndim != 2 or estimators.dtype != object:
            raise ValueError('estimators should be a 2-D array of fitted trees')
        held = np.empty(estimators.shape, dtype=object)
        need = 0
        for at, e in np.ndenumerate(estimators):
            tree = getattr(e, 'tree_', None)
            if type(tree) is not Tree:
                raise ValueError('estimators should be fitted regression trees')
            held[at] = stage = _Stage()
            stage.tree_ = tree
            need = max(need, tree.n_features)
        X = _tree_rows(X, need, stages=True)
        if isinstance(X, np.ndarray):
            X = np.ndarray.view(X)  # a new object: no code of the call holds it to reshape
        if isinstance(out, np.ndarray):
            # exact, over the same memory (written in place), a new object
            out = np.ndarray.view(np.asarray(out))
        if (not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.ndim != 2 or
                not out.flags.c_contiguous or out.shape != (X.shape[0], estimators.shape[1])):
            raise ValueError('out should be a C-ordered float64 array with a row for each row '
                             'of X and a column for each column of estimators')
        return held, X, out

    real_stages = _gradient_boosting.predict_stages
    real_stage = _gradient_boosting.predict_stage

    def predict_stages(estimators, X, scale, out):
        # scale converted first: its __float__ (the compiled function's, after the check)
        # reshaped X in place, and out was written past its rows
        scale = float(scale)
        estimators, X, out = stages(estimators, X, out)
        return real_stages(estimators, X, scale, out)

    def predict_stage(estimators, stage, X, scale, out):
        estimators = np.asarray(estimators)
        if estimators.ndim != 2:
            raise ValueError('estimators should be a 2-D array of fitted trees')
        stage = operator.index(stage)
        if not 0 <= stage < estimators.shape[0]:
            raise IndexError('stage %d is not one of the %d' % (stage, estimators.shape[0]))
        return predict_stages(estimators[stage:stage + 1], X, scale, out)

    for f, real in ((predict_stages, real_stages), (predict_stage, real_stage)):
        f.__doc__ = real.__doc__
        f.__module__ = getattr(real, '__module__', None)
        _replace_everywhere(real, f)


def _pyfunc_metrics():
    """A callable metric (metric=f in NearestNeighbors, BallTree, DBSCAN, ..., and
    DistanceMetric.get_metric('pyfunc', func=f)) is sklearn's PyFuncDistance (PyFuncDistance32
    for float32 data), whose compiled distance called f on two arrays made over the C pointers
    of the rows being compared, with no owner and writable: f could keep them, and they read
    and wrote the rows' memory after it was freed (any memory read and written). The callable
    such a metric is made with (its constructor, and the state copy.copy or pickle sets) is
    now called through one that hands it copies of the two rows, its own arrays."""
    import numpy as np
    from sklearn.metrics import _dist_metrics as dm
    classes = tuple(c for c in (getattr(dm, 'PyFuncDistance', None),
                                getattr(dm, 'PyFuncDistance32', None)) if c is not None)

    code = []

    def copying(func):
        if code and getattr(func, '__code__', None) is code[0]:
            return func  # one of these already

        def metric(x, y, /, **kwargs):
            a, b = np.array(x), np.array(y)
            del x, y  # the C rows are not left in this frame (a traceback's locals)
            # (a tree whose build or query runs the metric is not built again from it)
            _trees_querying[0] += 1
            try:
                return func(a, b, **kwargs)
            finally:
                _trees_querying[0] -= 1

        return metric

    code.append(copying(None).__code__)

    def made(args, kwargs):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        args = () if args is None else tuple(args)
        if args:
            args = (copying(args[0]),) + args[1:]
        elif kwargs and 'func' in kwargs:
            kwargs = dict(kwargs)
            kwargs['func'] = copying(kwargs['func'])
        return args, kwargs

    def initialiser(real):
        def __init__(self, *args, **kwargs):
            args, kwargs = made(args, kwargs)
            real(self, *args, **(kwargs or {}))

        __init__.__doc__ = real.__doc__
        return __init__

    def state_setter(real):
        def __setstate__(self, state):
            state = tuple(state)
            if isinstance(self, classes) and len(state) > 3:
                state = state[:3] + (copying(state[3]),) + state[4:]
            return real(self, state)

        __setstate__.__doc__ = real.__doc__
        return __setstate__

    for cls in classes:
        init_checks[cls] = made
        type_patches[(cls, '__init__')] = initialiser(cls.__dict__['__init__'])
    for base in {cls.__mro__[1] for cls in classes}:
        type_patches[(base, '__setstate__')] = state_setter(base.__dict__['__setstate__'])


def _sklearn_losses():
    """The compiled losses (sklearn._loss._loss's Cy* classes, a loss object's .closs) loop over
    y_true's samples and write each one's loss, gradient and hessian into the out arrays given,
    reading raw_prediction and sample_weight at the same place, unchecked: a loss_out of 1
    value for 10**7 samples (loss.loss(y_true=np.zeros(10**7), ..., loss_out=np.zeros(1)))
    wrote past it (a bytearray's header after it made it span all memory). Each method checks
    its arrays first: every one has a row for each sample (n = len(y_true)), and for the
    multinomial loss the 2-D ones a column for each class (raw_prediction's columns)."""
    import numpy as np
    from sklearn._loss import _loss

    multi = _loss.CyHalfMultinomialLoss
    # The arguments of each method after y_true, raw_prediction and sample_weight.
    outs = {'loss': ('loss_out',), 'gradient': ('gradient_out',),
            'loss_gradient': ('loss_out', 'gradient_out'),
            'gradient_hessian': ('gradient_out', 'hessian_out'),
            'gradient_proba': ('gradient_out', 'proba_out')}

    def shaped(a, what, ndim, n, k=None):
        if a is None:
            raise TypeError('%s should be an array' % what)
        a = np.asarray(a)
        if a.ndim != ndim or a.shape[0] < n or (k is not None and a.shape[1] < k):
            raise ValueError('%s should be a %d-D array with a row for each of the %d samples%s'
                             % (what, ndim, n, '' if k is None else ' and %d columns' % k))
        return a

    def checked(cls, name, orig):
        names = ('y_true', 'raw_prediction', 'sample_weight') + outs[name] + ('n_threads',)
        two_d = issubclass(cls, multi)

        def method(self, *args, **kwargs):
            kwargs = _plain_names(kwargs)  # (names by their characters)
            if len(args) > len(names):
                raise TypeError('%s() takes at most %d arguments' % (name, len(names)))
            given = dict(zip(names, args))
            for key, v in kwargs.items():
                if key not in names or key in given:
                    raise TypeError('%s() got an unexpected or repeated argument %r'
                                    % (name, key))
                given[key] = v
            missing = [key for key in names[:-1] if key not in given]
            if missing:
                raise TypeError('%s() is missing %s' % (name, ', '.join(missing)))
            y = shaped(given['y_true'], 'y_true', 1, 0)
            n = y.shape[0]
            given['y_true'] = y
            raw = shaped(given['raw_prediction'], 'raw_prediction', 2 if two_d else 1, n)
            k = raw.shape[1] if two_d else None
            if two_d and n and k < 1:
                raise ValueError('raw_prediction should have a column for each class')
            given['raw_prediction'] = raw
            if given['sample_weight'] is not None:
                given['sample_weight'] = shaped(given['sample_weight'], 'sample_weight', 1, n)
            for key in outs[name]:
                flat = key == 'loss_out' or not two_d
                given[key] = shaped(given[key], key, 1 if flat else 2, n, None if flat else k)
            return orig(self, **given)

        method.__name__ = method.__qualname__ = name
        method.__doc__ = getattr(orig, '__doc__', None)
        return method

    for cls_name in dir(_loss):
        cls = getattr(_loss, cls_name)
        if isinstance(cls, type) and cls_name.startswith('Cy'):
            for name in outs:
                orig = cls.__dict__.get(name)
                if orig is not None:
                    type_patches[(cls, name)] = checked(cls, name, orig)


def _svm_models():
    """libsvm's predictions (sklearn.svm's predict, decision_function, predict_proba, dense
    and sparse) rebuild the model from the arrays the estimator holds, and each is an
    attribute the user can replace: a _dual_coef_ of 1x1 for 2000 support vectors was read
    2000 values on (and n_support, support, the intercepts and probability pairs the same,
    by the counts the others give; a precomputed kernel read each test row at the support
    vectors' indices). The compiled functions check the model first, wherever they are named:
    n_class = len(n_support) >= 2, dual_coef (n_class - 1, n_SV), the support vectors (and
    support) n_SV rows, n_support summing to n_SV (classification), n_class * (n_class - 1) / 2
    intercepts and probability pairs (or none, except for probabilities), a precomputed
    kernel's indices within the test rows (dense only), the sparse arrays whole."""
    import operator
    import numpy as np
    from sklearn.svm import _libsvm, _libsvm_sparse

    def vec(a, what):
        a = np.asarray(a)
        if a.ndim != 1:
            raise ValueError('%s should be a 1-D array' % what)
        return a

    # Every argument is made plain before anything is checked, and what was checked is what
    # the compiled function gets: it converts its arguments itself after taking the arrays,
    # and a conversion runs the code's methods (degree's __int__ rewrote support after its
    # check; a str subclass's __eq__ answered 'precomputed' to libsvm only). Arrays are new
    # objects (no code of the call holds them to change their shape), index arrays copies.
    def plain(v, index=False):
        if v is None or type(v) in (bool, int, float, str):
            return v
        if isinstance(v, str):
            return ''.join([v])  # an exact copy: nothing of the subclass runs
        if isinstance(v, (np.ndarray, list, tuple)):
            return np.array(v) if index else np.ndarray.view(np.asarray(v))
        try:
            return operator.index(v)
        except TypeError:
            return float(v)

    def model(svm_type, n_sv, nSV, sv_coef_size, intercept, probA, probB, proba):
        svm_type = operator.index(svm_type)
        if not 0 <= svm_type <= 4:
            raise ValueError('svm_type should be one of 0..4')
        nSV = vec(nSV, 'n_support')
        n_class = len(nSV)
        if n_class < 2:
            raise ValueError('n_support should count at least two classes')
        if sv_coef_size != (n_class - 1, n_sv):
            raise ValueError('dual_coef should hold (n_class - 1) x n_SV = %d x %d values'
                             % (n_class - 1, n_sv))
        if svm_type < 2 and (nSV.dtype.kind not in 'iu' or nSV.min() < 0 or
                             int(nSV.sum()) != n_sv):
            raise ValueError('n_support should count the %d support vectors' % n_sv)
        m = n_class * (n_class - 1) // 2
        intercept, probA, probB = (vec(a, w) for a, w in ((intercept, 'intercept'),
                                                          (probA, 'probA'), (probB, 'probB')))
        if len(intercept) != m:
            raise ValueError('intercept should hold %d values' % m)
        if len(probA) != len(probB) or len(probA) not in ((m,) if proba else (0, m)):
            raise ValueError('probA and probB should hold %d values each' % m)
        return svm_type, nSV, intercept, probA, probB

    def dense(f, proba):
        def checked(X, support, SV, nSV, sv_coef, intercept, probA=np.empty(0),
                    probB=np.empty(0), svm_type=0, kernel='rbf', **kwargs):
            kwargs = {k: plain(v) for k, v in kwargs.items()}
            svm_type, kernel = plain(svm_type), plain(kernel)
            X, SV, sv_coef, intercept, probA, probB = (plain(a) for a in (
                X, SV, sv_coef, intercept, probA, probB))
            support, nSV = plain(support, True), plain(nSV, True)
            support = vec(support, 'support')
            n_sv = len(support)
            if X.ndim != 2 or SV.ndim != 2 or sv_coef.ndim != 2:
                raise ValueError('X, the support vectors and dual_coef should be 2-D arrays')
            if kernel == 'precomputed':
                if n_sv and (support.min() < 0 or support.max() >= X.shape[1]):
                    raise IndexError('support holds an index past the %d columns of the '
                                     'precomputed kernel' % X.shape[1])
            elif SV.shape[0] != n_sv:
                raise ValueError('there should be a support vector for each of the %d in '
                                 'support' % n_sv)
            svm_type, nSV, intercept, probA, probB = model(
                svm_type, n_sv, nSV, sv_coef.shape, intercept, probA, probB, proba)
            return f(X, support, SV, nSV, sv_coef, intercept, probA, probB,
                     svm_type=svm_type, kernel=kernel, **kwargs)
        return checked

    def csr(data, indices, indptr, what):
        data, indices, indptr = (vec(a, what) for a in (data, indices, indptr))
        if len(indptr) < 1 or indptr[0] != 0 or (np.diff(indptr) < 0).any() or \
                indptr[-1] > len(indices) or len(indices) != len(data):
            raise ValueError('%s: the sparse arrays do not agree' % what)
        if len(indices) and indices.min() < 0:
            raise ValueError('%s: a negative index' % what)
        return data, indices, indptr, len(indptr) - 1

    def sparse(f, proba):
        def checked(*args):
            if len(args) != 23:
                raise TypeError('%s takes 23 arguments' % f.__name__)
            args = [plain(a, i in (1, 2, 4, 5, 20)) for i, a in enumerate(args)]
            args[0], args[1], args[2], _ = csr(*args[0:3], what='X')
            args[3], args[4], args[5], n_sv = csr(*args[3:6], what='the support vectors')
            if operator.index(args[9]) == 4:
                raise ValueError('a precomputed kernel is given as a dense array here')
            coef = vec(args[6], 'dual_coef')
            n_class = len(vec(args[20], 'n_support'))
            if len(coef) != (n_class - 1) * n_sv:
                raise ValueError('dual_coef should hold (n_class - 1) x n_SV values')
            args[8], args[20], args[7], args[21], args[22] = model(
                args[8], n_sv, args[20], (n_class - 1, n_sv), args[7], args[21], args[22],
                proba)
            args[6] = coef
            return f(*args)
        return checked

    replacements = {}
    for module, make, names in (
            (_libsvm, dense, ('predict', 'decision_function', 'predict_proba')),
            (_libsvm_sparse, sparse, ('libsvm_sparse_predict',
                                      'libsvm_sparse_decision_function',
                                      'libsvm_sparse_predict_proba'))):
        for name in names:
            f = getattr(module, name)
            g = make(f, name.endswith('proba'))
            g.__name__ = g.__qualname__ = name
            g.__doc__ = f.__doc__
            g.__module__ = module.__name__
            replacements[id(f)] = (f, g)
    _replace_all(replacements)


def _svm_training():
    """libsvm's and liblinear's training functions (reached by BaseLibSVM._dense_fit and
    _sparse_fit and _fit_liblinear, methods the code may call with any X) read X's sparse
    arrays by their pointers (a row of 4095 entries in an index array of 2: the heap past it
    came back as the support vectors' indices), the targets and sample weights one a row of X,
    and a precomputed kernel's row at each sample's index. Each gets its arrays as new
    contiguous copies, checked: targets one a row, sample weights none or one a row, a
    precomputed kernel square, a sparse X whole with its indices within its features."""
    import operator
    import numpy as np
    import scipy.sparse as sp
    from sklearn.svm import _libsvm, _libsvm_sparse, _liblinear

    def floats(a, what, ndim):
        a = np.array(a, dtype=np.float64, order='C')
        if a.ndim != ndim:
            raise ValueError('%s should be a %d-D array' % (what, ndim))
        return a

    def rows(n, Y, sample_weight):
        Y = floats(Y, 'Y', 1)
        if len(Y) != n:
            raise ValueError('Y should hold a target for each of the %d rows, not %d'
                             % (n, len(Y)))
        if sample_weight is not None:
            sample_weight = floats(sample_weight, 'sample_weight', 1)
            if len(sample_weight) not in (0, n):
                raise ValueError('sample_weight should hold a weight for each of the %d rows'
                                 % n)
        return Y, sample_weight

    def csr(data, indices, indptr, n_features):
        data = floats(data, 'the values', 1)
        indices, indptr = (np.array(a, dtype=np.int32, order='C') for a in (indices, indptr))
        if indices.ndim != 1 or indptr.ndim != 1 or len(indptr) < 1 or indptr[0] != 0 or \
                (np.diff(indptr) < 0).any() or indptr[-1] != len(indices) or \
                len(indices) != len(data):
            raise ValueError('the sparse arrays of X do not agree')
        if len(indices) and (indices.min() < 0 or indices.max() >= n_features):
            raise ValueError('an index of X lies outside its %d features' % n_features)
        return data, indices, indptr, len(indptr) - 1

    def bind(names, args, kwargs, what):
        kwargs = _plain_names(kwargs)  # (names by their characters)
        if len(args) > len(names) or set(kwargs) - set(names) or \
                set(names[:len(args)]) & set(kwargs):
            raise TypeError('%s takes %s' % (what, ', '.join(names)))
        bound = dict(zip(names, args))
        bound.update(kwargs)
        return bound

    libsvm_names = ('X', 'Y', 'svm_type', 'kernel', 'degree', 'gamma', 'coef0', 'tol', 'C', 'nu',
                    'epsilon', 'class_weight', 'sample_weight', 'shrinking', 'probability',
                    'cache_size', 'max_iter', 'random_seed')

    def dense(real, names):
        def checked(*args, **kwargs):
            a = bind(names, args, kwargs, real.__name__)
            a['X'] = X = floats(a.get('X'), 'X', 2)
            a['Y'], sw = rows(X.shape[0], a.get('Y'), a.get('sample_weight'))
            if sw is not None:
                a['sample_weight'] = sw
            kernel = a.get('kernel', 'rbf')
            if not isinstance(kernel, str):
                raise TypeError('kernel should be a str')
            a['kernel'] = kernel = ''.join([kernel])
            if kernel == 'precomputed' and X.shape[0] != X.shape[1]:
                raise ValueError('a precomputed kernel is square: %d rows, %d columns'
                                 % X.shape)
            for k in ('svm_type', 'n_fold', 'degree', 'shrinking', 'probability', 'max_iter',
                      'random_seed'):
                if k in a:
                    a[k] = operator.index(a[k])
            for k in ('gamma', 'coef0', 'tol', 'C', 'nu', 'epsilon', 'cache_size'):
                if k in a:
                    a[k] = float(a[k])
            if 'class_weight' in a:
                a['class_weight'] = floats(a['class_weight'], 'class_weight', 1)
            return real(**a)
        return checked

    real_sparse = _libsvm_sparse.libsvm_sparse_train

    def libsvm_sparse_train(*args):
        if len(args) != 21:
            raise TypeError('libsvm_sparse_train takes 21 arguments')
        args = list(args)
        n_features = args[0] = operator.index(args[0])
        args[1], args[2], args[3], n = csr(args[1], args[2], args[3], n_features)
        args[4], args[13] = rows(n, args[4], args[13])
        args[12] = floats(args[12], 'class_weight', 1)
        for i in (5, 6, 7, 17, 18, 19, 20):
            args[i] = operator.index(args[i])
        for i in (8, 9, 10, 11, 14, 15, 16):
            args[i] = float(args[i])
        if args[6] == 4:
            raise ValueError('a precomputed kernel is given as a dense array')
        return real_sparse(*args)

    real_linear = _liblinear.train_wrap
    linear_names = ('X', 'Y', 'is_sparse', 'solver_type', 'eps', 'bias', 'C', 'class_weight',
                    'max_iter', 'random_seed', 'epsilon', 'sample_weight')

    def train_wrap(*args, **kwargs):
        a = bind(linear_names, args, kwargs, 'train_wrap')
        X, is_sparse = a.get('X'), bool(a.get('is_sparse'))
        if is_sparse:
            if not sp.issparse(X):
                raise TypeError('a sparse X is a scipy sparse matrix')
            X = sp.csr_matrix(X)
            n_features = operator.index(X.shape[1])
            data, indices, indptr, n = csr(X.data, X.indices, X.indptr, n_features)
            if n != X.shape[0]:
                raise ValueError('the sparse arrays of X do not agree')
            X = sp.csr_matrix((data, indices, indptr), shape=(n, n_features))
        else:
            X = floats(X, 'X', 2)
        a['X'], a['is_sparse'] = X, is_sparse
        a['Y'], a['sample_weight'] = rows(X.shape[0], a.get('Y'), a.get('sample_weight'))
        if a['sample_weight'] is None or len(a['sample_weight']) != X.shape[0]:
            raise ValueError('sample_weight should hold a weight for each of the %d rows'
                             % X.shape[0])
        a['class_weight'] = floats(a.get('class_weight'), 'class_weight', 1)
        for k in ('solver_type', 'max_iter', 'random_seed'):
            a[k] = operator.index(a.get(k))
        for k in ('eps', 'bias', 'C', 'epsilon'):
            a[k] = float(a.get(k))
        return real_linear(**a)

    replacements = {}
    for real, new in ((_libsvm.fit, dense(_libsvm.fit, libsvm_names)),
                      (_libsvm.cross_validation,
                       dense(_libsvm.cross_validation,
                             libsvm_names[:2] + ('n_fold',) + libsvm_names[2:])),
                      (real_sparse, libsvm_sparse_train), (real_linear, train_wrap)):
        new.__name__ = new.__qualname__ = real.__name__
        new.__doc__ = real.__doc__
        new.__module__ = getattr(real, '__module__', None)
        replacements[id(real)] = (real, new)
    _replace_all(replacements)


def _tree_pruning(Tree):
    """Cost complexity pruning (_prune_tree, a method the code may call after setting the
    estimator's attributes) makes a new Tree from n_features_in_, n_classes_ and n_outputs_
    and copies the fitted tree's nodes and values into it, by the fitted tree's sizes: a
    class count set to 1 for a tree of 20000 classes had 160 KB of the code's sample weights
    written past an 8-byte block (the sandbox escaped), and a feature count set lower gave a
    tree whose nodes split on features past the ones it checks X for. The new tree must be
    empty and of the fitted tree's features, outputs and classes."""
    import numpy as np
    from sklearn.tree import _tree, _classes

    real = _tree._build_pruned_tree_ccp

    def _build_pruned_tree_ccp(tree, orig_tree, ccp_alpha):
        if type(tree) is not Tree or type(orig_tree) is not Tree:
            raise TypeError('a tree is pruned from a fitted Tree into a new one')
        if tree.node_count or tree.n_features != orig_tree.n_features or \
                tree.n_outputs != orig_tree.n_outputs or \
                tree.max_n_classes != orig_tree.max_n_classes or \
                not np.array_equal(tree.n_classes, orig_tree.n_classes):
            raise ValueError('the pruned tree is made of the fitted tree\'s features, outputs '
                             'and classes (the estimator\'s n_features_in_, n_outputs_ and '
                             'n_classes_ were changed after fit)')
        ccp_alpha = float(ccp_alpha)
        if not ccp_alpha >= 0:
            raise ValueError('ccp_alpha should be 0 or more')
        return real(tree, orig_tree, ccp_alpha)

    _build_pruned_tree_ccp.__doc__ = real.__doc__
    _replace_all({id(real): (real, _build_pruned_tree_ccp)})
    _classes._build_pruned_tree_ccp = _build_pruned_tree_ccp


def _tsne_gradient():
    """t-SNE's Barnes-Hut gradient reads each sample's neighbours' positions at the indices
    P gives (_tsne and _kl_divergence_bh, which the code may call with any P: a neighbour
    index past the samples read memory past the embedding, or SIGSEGV), and writes a force
    for each sample. Its arrays are checked first: positions (n, d) with d of 1 to 3, forces
    of the same shape (written in place), P's rows one a sample, its neighbours within the
    samples, one value each."""
    import operator
    import numpy as np
    from sklearn.manifold import _barnes_hut_tsne

    real = _barnes_hut_tsne.gradient

    def gradient(val_P, pos_output, neighbors, indptr, forces, theta, n_dimensions, verbose,
                 dof=1.0, compute_error=1, num_threads=1):
        pos_output = np.array(pos_output, dtype=np.float32, order='C')
        if pos_output.ndim != 2 or not 1 <= pos_output.shape[1] <= 3:
            raise ValueError('the embedding should be 2-D with 1 to 3 components')
        n, d = pos_output.shape
        n_dimensions = operator.index(n_dimensions)
        if n_dimensions != d:
            raise ValueError('n_dimensions should be the embedding\'s %d components' % d)
        if type(forces) is not np.ndarray or forces.dtype != np.float32 or \
                forces.shape != (n, d) or not forces.flags.c_contiguous or \
                not forces.flags.writeable:
            raise ValueError('forces should be a C-ordered float32 array of the embedding\'s '
                             'shape')
        forces = np.ndarray.view(forces)
        val_P = np.array(val_P, dtype=np.float32)
        neighbors = np.array(neighbors, dtype=np.int64)
        indptr = np.array(indptr, dtype=np.int64)
        if val_P.ndim != 1 or neighbors.shape != val_P.shape or indptr.shape != (n + 1,) or \
                indptr[0] != 0 or indptr[-1] != len(neighbors) or (np.diff(indptr) < 0).any():
            raise ValueError('P should hold a row for each of the %d samples' % n)
        if len(neighbors) and (neighbors.min() < 0 or neighbors.max() >= n):
            raise ValueError('a neighbour of P lies outside the %d samples' % n)
        return real(val_P, pos_output, neighbors, indptr, forces, float(theta), n_dimensions,
                    operator.index(verbose), dof=float(dof),
                    compute_error=bool(compute_error), num_threads=operator.index(num_threads))

    gradient.__doc__ = real.__doc__
    _replace_all({id(real): (real, gradient)})


def _private_step_kernels():
    """Compiled steps that private methods reach with what the code gives them: isotonic
    regression's _make_unique read y for each of X's samples (a y whose indexing answered two
    values for 4000 samples: the heap past them came back as the model), k-means'
    _is_same_clustering wrote mapping[label] for labels of a run with more centers than
    n_clusters (an _init_centroids of a subclass's: a view's strides rewritten, the sandbox
    escaped), its inertia kernels read a center and a weight by each sample's label, and
    gradient boosting's _update_raw_predictions added each leaf's value at the sample indices
    of its partition, however short the raw predictions (a _raw_predict of the code's set on
    the estimator: a double added past them, the sandbox escaped). Each takes arrays checked
    against each other: one value a sample, labels within the centers, the partition within
    the predictions (and the grower's leaves read once, as plain numbers)."""
    import operator
    import types
    import numpy as np
    import scipy.sparse as sp
    from sklearn import isotonic
    from sklearn.cluster import _k_means_common
    from sklearn.ensemble._hist_gradient_boosting import _gradient_boosting

    def floats_1d(a, what, dtype=None):
        a = np.array(a, dtype=dtype, order='C')
        if a.ndim != 1 or a.dtype not in (np.float32, np.float64):
            raise ValueError('%s should be a 1-D array of floats' % what)
        return a

    real_unique = isotonic._make_unique

    def _make_unique(X, y, sample_weights):
        X = floats_1d(X, 'X')
        y, w = floats_1d(y, 'y', X.dtype), floats_1d(sample_weights, 'sample_weight', X.dtype)
        if not len(X) == len(y) == len(w):
            raise ValueError('X, y and sample_weight should be of one length (%d, %d, %d)'
                             % (len(X), len(y), len(w)))
        return real_unique(X, y, w)

    real_inplace = isotonic._inplace_contiguous_isotonic_regression

    def _inplace_contiguous_isotonic_regression(y, w):
        if type(y) is not np.ndarray or y.ndim != 1 or not y.flags.c_contiguous or \
                not y.flags.writeable or y.dtype not in (np.float32, np.float64):
            raise ValueError('y should be a writeable contiguous 1-D array of floats')
        y = np.ndarray.view(y)
        w = floats_1d(w, 'w', y.dtype)
        if len(w) != len(y):
            raise ValueError('y and w should be of one length (%d, %d)' % (len(y), len(w)))
        return real_inplace(y, w)

    def labels_within(labels, n, what):
        labels = np.array(labels, dtype=np.int32)
        if labels.ndim != 1 or (len(labels) and (labels.min() < 0 or labels.max() >= n)):
            raise ValueError('%s should be labels from 0 to %d' % (what, n - 1))
        return labels

    real_same = _k_means_common._is_same_clustering

    def _is_same_clustering(labels1, labels2, n_clusters):
        n_clusters = operator.index(n_clusters)
        labels1 = labels_within(labels1, n_clusters, 'labels1')
        labels2 = labels_within(labels2, n_clusters, 'labels2')
        if len(labels1) != len(labels2):
            raise ValueError('the two clusterings should label the same samples')
        return real_same(labels1, labels2, n_clusters)

    def inertia(real, sparse):
        def kernel(X, sample_weight, centers, labels, n_threads, single_label=-1):
            if sparse:
                if not sp.issparse(X):
                    raise TypeError('X should be a sparse matrix')
                X = sp.csr_matrix(_checked_sparse(X))
            else:
                X = np.ndarray.view(np.asarray(X))
            if X.ndim != 2 or X.dtype not in (np.float32, np.float64):
                raise ValueError('X should be a 2-D array of floats')
            n, f = X.shape
            centers = np.array(centers, dtype=X.dtype, order='C')
            sample_weight = np.array(sample_weight, dtype=X.dtype)
            if centers.ndim != 2 or centers.shape[1] != f or sample_weight.shape != (n,):
                raise ValueError('the centers should have X\'s %d features and the weights '
                                 'be one a sample' % f)
            labels = labels_within(labels, centers.shape[0], 'labels')
            if len(labels) != n:
                raise ValueError('labels should be one a sample')
            return real(X, sample_weight, centers, labels, operator.index(n_threads),
                        operator.index(single_label))
        kernel.__name__ = kernel.__qualname__ = real.__name__
        kernel.__doc__ = real.__doc__
        return kernel

    real_update = _gradient_boosting._update_raw_predictions

    def _update_raw_predictions(raw_predictions, grower, n_threads):
        if type(raw_predictions) is not np.ndarray or raw_predictions.ndim != 1 or \
                raw_predictions.dtype != np.float64 or not raw_predictions.flags.writeable or \
                not raw_predictions.flags.c_contiguous:
            raise ValueError('raw_predictions should be a writeable contiguous 1-D float64 '
                             'array')
        raw = np.ndarray.view(raw_predictions)
        partition = np.array(grower.splitter.partition, dtype=np.uint32)
        if partition.ndim != 1 or (len(partition) and int(partition.max()) >= len(raw)):
            raise ValueError('the grower\'s samples lie outside the %d raw predictions'
                             % len(raw))
        leaves = []
        for leaf in list(grower.finalized_leaves):
            start, stop = operator.index(leaf.partition_start), operator.index(leaf.partition_stop)
            if not 0 <= start <= stop <= len(partition):
                raise ValueError('a leaf\'s samples lie outside the grower\'s')
            leaves.append(types.SimpleNamespace(partition_start=start, partition_stop=stop,
                                                value=float(leaf.value)))
        plain = types.SimpleNamespace(finalized_leaves=leaves,
                                      splitter=types.SimpleNamespace(partition=partition))
        return real_update(raw, plain, operator.index(n_threads))

    replacements = {}
    for real, new in ((real_unique, _make_unique),
                      (real_inplace, _inplace_contiguous_isotonic_regression),
                      (real_same, _is_same_clustering),
                      (_k_means_common._inertia_dense,
                       inertia(_k_means_common._inertia_dense, False)),
                      (_k_means_common._inertia_sparse,
                       inertia(_k_means_common._inertia_sparse, True)),
                      (real_update, _update_raw_predictions)):
        new.__doc__ = real.__doc__
        replacements[id(real)] = (real, new)
    _replace_all(replacements)


def _more_private_kernels():
    """More compiled kernels that read and wrote by the numbers they were given, bounds checks
    off (called directly, outside the sandbox: SIGSEGV, or words past a view): DBSCAN's
    dbscan_inner labelled each sample's neighbours by their numbers, the agglomerative
    clustering's compute_ward_dist, _get_parents, max_merge, average_merge and
    (_)single_linkage_label read moments, parents, masks and union-find entries at the node
    numbers of their arguments, mst_linkage_core measured the rows with a metric whose
    vectors were of other features, the chi-squared and sparse Manhattan kernels wrote a
    result by the samples' counts and read one matrix by the other's features or row
    pointers, the gradient boosting's bitset helpers set and read bit val // 32 of a bitset
    of any length, and sum_parallel asked OpenMP for the threads it was told (-3 ended the
    process, 100000 SIGSEGV). Their modules are not the code's to import; library code
    reaching them from elsewhere gets each checked: numpy's own arrays, node, neighbour and
    key numbers within the arrays they index, results of the inputs' shapes, row pointers
    within the data, bitsets of 8 words, a thread count of 1 or more (the sandbox's at most).
    t-SNE's _binary_search_perplexity reads and writes within its one array's shape and is
    left as it is."""
    import operator
    import numpy as np
    from sklearn.cluster import _dbscan_inner, _hierarchical_fast
    from sklearn.metrics import _pairwise_fast
    from sklearn.metrics._dist_metrics import DistanceMetric
    from sklearn.utils._fast_dict import IntFloatDict
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
    from sklearn.ensemble._hist_gradient_boosting import _bitset, utils as hgb_utils

    def within(a, n, what):
        a = np.array(a, dtype=np.intp)
        if a.ndim != 1 or (a.size and (a.min() < 0 or a.max() >= n)):
            raise ValueError('%s should be numbers from 0 to %d' % (what, n - 1))
        return a

    def written(a, dtype, ndim, what, contiguous=True):
        if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != ndim or \
                not a.flags.writeable or (contiguous and not a.flags.c_contiguous):
            raise ValueError('%s should be a writeable%s %d-D %s array'
                             % (what, ' contiguous' if contiguous else '', ndim,
                                np.dtype(dtype)))
        return np.ndarray.view(a)

    real_dbscan = _dbscan_inner.dbscan_inner

    def dbscan_inner(is_core, neighborhoods, labels):
        labels = written(labels, np.intp, 1, 'labels')
        n = len(labels)
        is_core = np.array(is_core, dtype=np.uint8)
        if is_core.shape != (n,) or type(neighborhoods) is not np.ndarray or \
                neighborhoods.shape != (n,):
            raise ValueError('is_core and neighborhoods should be one a sample (%d)' % n)
        hoods = np.empty(n, dtype=object)
        for i, hood in enumerate(np.ndarray.view(neighborhoods).tolist()):
            hoods[i] = within(hood, n, 'a neighbour')
        return real_dbscan(is_core, hoods, labels)

    real_ward = _hierarchical_fast.compute_ward_dist

    def compute_ward_dist(m_1, m_2, coord_row, coord_col, res):
        m_1 = np.array(m_1, dtype=np.float64)
        m_2 = np.array(m_2, dtype=np.float64, order='C')
        if m_1.ndim != 1 or m_2.ndim != 2 or len(m_2) != len(m_1):
            raise ValueError('the moments should be one a node')
        row = within(coord_row, len(m_1), 'coord_row')
        col = within(coord_col, len(m_1), 'coord_col')
        out = written(res, np.float64, 1, 'res')
        if len(col) != len(row) or len(out) < len(row):
            raise ValueError('coord_col and res should be one a pair of coord_row\'s (%d)'
                             % len(row))
        real_ward(m_1, m_2, row, col, out)
        return res

    real_parents = _hierarchical_fast._get_parents

    def _get_parents(nodes, heads, parents, not_visited):
        parents = np.array(parents, dtype=np.intp)
        if parents.ndim != 1:
            raise ValueError('parents should be 1-D')
        n = len(parents)
        parents = within(parents, n, 'a parent')
        nodes = within(list(nodes), n, 'a node')
        visited = written(not_visited, np.int8, 1, 'not_visited')
        if len(visited) < n:
            raise ValueError('not_visited should be one a node (%d)' % n)
        for head in real_parents(nodes, [], parents, visited):
            heads.append(head)
        return heads

    def pairs(d, n):
        # (an IntFloatDict, or its (key, value) pairs: a fresh one of copies either way)
        if type(d) is IntFloatDict:
            keys, values = d.to_arrays()
        else:
            d = [(operator.index(k), float(v)) for k, v in d]
            keys = np.array([k for k, v in d], dtype=np.intp)
            values = np.array([v for k, v in d], dtype=np.float64)
        return IntFloatDict(within(keys, n, 'a key'), np.array(values, dtype=np.float64))

    def merge(real):
        def kernel(a, b, mask, n_a, n_b):
            mask = np.array(mask, dtype=np.intp)
            if mask.ndim != 1:
                raise ValueError('mask should be 1-D')
            a, b = pairs(a, len(mask)), pairs(b, len(mask))
            return real(a, b, mask, operator.index(n_a), operator.index(n_b))
        kernel.__name__ = kernel.__qualname__ = real.__name__
        return kernel

    def linkage(L):
        L = np.array(L, dtype=np.float64)
        if L.ndim != 2 or L.shape[1] < 3:
            raise ValueError('L should be of shape (n_samples - 1, 3)')
        ends = L[:, :2]
        if ends.size and not (np.isfinite(ends).all() and ends.min() >= 0 and
                              ends.max() < 2 * len(L) + 1):
            raise ValueError('Input MST array is not a validly formatted MST array')
        return L

    real_label, real_label_ = (_hierarchical_fast.single_linkage_label,
                               _hierarchical_fast._single_linkage_label)

    def single_linkage_label(L):
        return real_label(linkage(L))

    def _single_linkage_label(L):
        return real_label_(linkage(L))

    real_mst = _hierarchical_fast.mst_linkage_core

    def mst_linkage_core(raw_data, dist_metric):
        if not isinstance(dist_metric, DistanceMetric):
            raise TypeError('dist_metric should be a DistanceMetric')
        raw = np.array(raw_data, dtype=np.float64, order='C')
        if raw.ndim != 2 or not len(raw):
            raise ValueError('raw_data should be 2-D with 1 sample or more')
        dist_metric._validate_data(raw)  # (its vectors against the features)
        return real_mst(raw, dist_metric)

    real_chi2 = _pairwise_fast._chi2_kernel_fast

    def _chi2_kernel_fast(X, Y, result):
        if type(result) is not np.ndarray or result.dtype not in (np.float32, np.float64):
            raise ValueError('result should be an array of floats')
        out = written(result, result.dtype, 2, 'result', contiguous=False)
        X, Y = np.array(X, dtype=out.dtype), np.array(Y, dtype=out.dtype)
        if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1] or \
                out.shape != (len(X), len(Y)):
            raise ValueError('X and Y should have the same features and result be of shape '
                             '(len(X), len(Y))')
        return real_chi2(X, Y, out)

    real_manhattan = _pairwise_fast._sparse_manhattan

    def csr(data, indices, indptr, rows, dtype, what):
        data = np.array(data, dtype=dtype)
        indices, indptr = np.array(indices, dtype=np.intc), np.array(indptr, dtype=np.intc)
        if data.dtype not in (np.float32, np.float64) or data.ndim != 1 or \
                indices.shape != data.shape or indptr.shape != (rows + 1,) or \
                indptr.min() < 0 or (np.diff(indptr) < 0).any() or indptr[-1] > len(data):
            raise ValueError('%s should be a CSR matrix of %d rows: its row pointers within '
                             'its data' % (what, rows))
        return data, indices, indptr

    def _sparse_manhattan(X_data, X_indices, X_indptr, Y_data, Y_indices, Y_indptr, D):
        D = written(D, np.float64, 2, 'D')
        X = csr(X_data, X_indices, X_indptr, D.shape[0], None, 'X')
        Y = csr(Y_data, Y_indices, Y_indptr, D.shape[1], X[0].dtype, 'Y')
        return real_manhattan(*X, *Y, D)

    def bitset(a, what, write=False):
        if write:
            a = written(a, np.uint32, 1, what, contiguous=False)
        else:
            a = np.array(a, dtype=np.uint32)
        if a.ndim != 1 or len(a) < 8:
            raise ValueError('%s should be a bitset of 8 words' % what)
        return a

    def value(val):
        val = int(val)
        if not 0 <= val <= 255:
            raise OverflowError('a bitset holds values from 0 to 255')
        return val

    real_set, real_in, real_raw = (_bitset.set_bitset_memoryview, _bitset.in_bitset_memoryview,
                                   _bitset.set_raw_bitset_from_binned_bitset)

    def set_bitset_memoryview(bitset_, val):
        return real_set(bitset(bitset_, 'bitset', True), value(val))

    def in_bitset_memoryview(bitset_, val):
        return real_in(bitset(bitset_, 'bitset'), value(val))

    def set_raw_bitset_from_binned_bitset(raw_bitset, binned_bitset, categories):
        categories = np.array(categories, dtype=np.float64)
        if categories.ndim != 1:
            raise ValueError('categories should be 1-D')
        return real_raw(bitset(raw_bitset, 'raw_bitset', True),
                        bitset(binned_bitset, 'binned_bitset'), categories)

    real_sum = hgb_utils.sum_parallel

    def sum_parallel(array, n_threads):
        array = np.array(array, dtype=np.float32)
        n_threads = operator.index(n_threads)
        if array.ndim != 1 or n_threads < 1:
            raise ValueError('sum_parallel sums a 1-D array with 1 thread or more')
        return real_sum(array, min(n_threads, _openmp_effective_n_threads()))

    # The average and complete linkages keep an IntFloatDict a node in an object array: numpy
    # in the sandbox read one (a sequence) into a private list of its pairs, which the merges
    # then refused. It is one object to numpy, as for numpy outside the sandbox.

    def __array__(self, dtype=None):
        a = np.empty((), dtype=object)
        a[()] = self
        return a

    type_patches[(IntFloatDict, '__array__')] = __array__

    replacements = {}
    for real, new in ((real_dbscan, dbscan_inner), (real_ward, compute_ward_dist),
                      (real_parents, _get_parents),
                      (_hierarchical_fast.max_merge, merge(_hierarchical_fast.max_merge)),
                      (_hierarchical_fast.average_merge,
                       merge(_hierarchical_fast.average_merge)),
                      (real_label, single_linkage_label), (real_label_, _single_linkage_label),
                      (real_mst, mst_linkage_core), (real_chi2, _chi2_kernel_fast),
                      (real_manhattan, _sparse_manhattan), (real_set, set_bitset_memoryview),
                      (real_in, in_bitset_memoryview),
                      (real_raw, set_raw_bitset_from_binned_bitset), (real_sum, sum_parallel)):
        new.__doc__ = real.__doc__
        replacements[id(real)] = (real, new)
    _replace_all(replacements)


def _kmeans_centers():
    """KMeans' compiled steps read each sample's features at each center, as many as the
    sample has: cluster_centers_ replaced by fewer features than X (then predict or score)
    read past the centers, and MiniBatchKMeans' partial_fit also wrote each center's count
    (_counts) by its label. The centers are checked against X where predict, score and
    partial_fit reach the compiled code: (n_clusters >= 1, n_features) centers, a weight per
    sample and a count per center, a sparse X's arrays whole."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.cluster import _kmeans

    def private(a):
        # numpy's own array object over the same memory: a subclass answers its own shape,
        # and no code of the call holds this one to set its shape after the check
        return np.ndarray.view(np.asarray(a))

    def inputs(X, sample_weight, centers):
        # (the others converted first: their conversions run the code's methods)
        centers, sample_weight = private(centers), private(sample_weight)
        if sp.issparse(X):
            X = _checked_sparse(X)
        elif not isinstance(X, np.ndarray):
            raise TypeError('X should be an array')
        else:
            X = private(X)
        if X.ndim != 2 or centers.ndim != 2 or centers.shape[0] < 1 or \
                centers.shape[1] != X.shape[1]:
            raise ValueError('the centers should be a 2-D array of at least one center with '
                             "X's %d features" % X.shape[1])
        if sample_weight.shape != (X.shape[0],):
            raise ValueError('sample_weight should hold a weight for each sample')
        return X, sample_weight, centers

    real_labels, real_step = _kmeans._labels_inertia, _kmeans._mini_batch_step

    def _labels_inertia(X, sample_weight, centers, n_threads=1, return_inertia=True):
        X, sample_weight, centers = inputs(X, sample_weight, centers)
        return real_labels(X, sample_weight, centers, n_threads, return_inertia)

    def _mini_batch_step(X, sample_weight, centers, centers_new, weight_sums, random_state,
                         random_reassign=False, reassignment_ratio=0.01, verbose=False,
                         n_threads=1):
        if not isinstance(centers_new, np.ndarray) or not isinstance(weight_sums, np.ndarray):
            raise ValueError('the new centers and the counts should be arrays')
        # written in place: new array objects over the same memory
        centers_new, weight_sums = private(centers_new), private(weight_sums)
        X, sample_weight, centers = inputs(X, sample_weight, centers)
        if centers_new.shape != centers.shape or weight_sums.shape != (centers.shape[0],):
            raise ValueError('the new centers and the counts should match the centers')
        return real_step(X, sample_weight, centers, centers_new, weight_sums, random_state,
                         random_reassign, reassignment_ratio, verbose, n_threads)

    # fit's Lloyd and Elkan runs (an estimator of the code's may skip its parameter checks:
    # n_clusters=0 had the Lloyd step add samples into a block of no centers)
    def single(real):
        def run(X, sample_weight, centers_init, *args, **kwargs):
            X, sample_weight, centers_init = inputs(X, sample_weight, centers_init)
            return real(X, sample_weight, centers_init, *args, **kwargs)
        run.__name__ = run.__qualname__ = real.__name__
        return run

    pairs = [(_labels_inertia, real_labels), (_mini_batch_step, real_step)] + [
        (single(real), real) for real in (_kmeans._kmeans_single_lloyd,
                                          _kmeans._kmeans_single_elkan)]
    replacements = {}
    for f, real in pairs:
        f.__doc__, f.__module__ = real.__doc__, real.__module__
        replacements[id(real)] = (real, f)
    _replace_all(replacements)


def _sklearn_predictors():
    """Gradient boosting's compiled prediction follows the nodes it is given (a fitted
    predictor's nodes, an array like any other): a child link or a feature past the arrays
    (nodes['left'][:] = 10**8, then predict) read any memory, and a node reached twice
    overflowed partial dependence's stack. The nodes are checked first: a tree, each child
    after its parent and reached once, features and category sets within what is given, each
    set 8 words wide."""
    import operator
    import numpy as np
    from sklearn.ensemble._hist_gradient_boosting import _predictor

    # Everything is made plain before it is checked, and what was checked is passed on: the
    # numbers converted first (n_threads' __int__, the compiled function's, after the check,
    # repointed the nodes' children), the nodes and index arrays copies, the data and the
    # output new array objects over the same memory (no code of the call holds them).
    def tree(nodes, n_features, bitsets):
        nodes = np.array(nodes)
        if nodes.ndim != 1 or nodes.dtype.names is None or not {
                'left', 'right', 'feature_idx', 'is_leaf', 'is_categorical',
                'bitset_idx'} <= set(nodes.dtype.names):
            raise TypeError("nodes should be a predictor's array of nodes")
        n = len(nodes)
        inner = np.flatnonzero(nodes['is_leaf'] == 0)
        left, right = nodes['left'][inner].astype(np.int64), nodes['right'][inner].astype(np.int64)
        if len(inner):
            if (left <= inner).any() or (right <= inner).any() or left.max() >= n or \
                    right.max() >= n:
                raise ValueError("a node's child is not a node after it")
            if np.bincount(np.concatenate([left, right]), minlength=n).max() > 1:
                raise ValueError('a node is the child of more than one node')
            feature = nodes['feature_idx'][inner].astype(np.int64)
            if feature.min() < 0 or feature.max() >= n_features:
                raise ValueError('a node splits on a feature past the %d given' % n_features)
            cat = nodes['bitset_idx'][inner][nodes['is_categorical'][inner] != 0]
            if bitsets is not None and len(cat) and (cat.astype(np.int64).min() < 0 or cat.max() >= len(bitsets)):
                raise ValueError("a node's categories are past the sets given")
        return nodes

    def sets(bitsets, what):
        # a set of 256 categories a row, 8 words: the compiled code reads word c // 32 of a
        # row for category c (a row of one word had 28 bytes past it read back, a bit a sample)
        bitsets = np.array(bitsets)
        if bitsets.ndim != 2 or bitsets.shape[1] < 8:
            raise ValueError('%s should be 2-D with a set of 256 categories (8 words) a row, '
                             'not shape %r' % (what, bitsets.shape))
        return bitsets

    def samples(X, out):
        X, out = np.ndarray.view(np.asarray(X)), np.ndarray.view(np.asarray(out))
        if X.ndim != 2 or out.ndim != 1 or len(out) < X.shape[0]:
            raise ValueError('X should be 2-D and out have a value for each of its rows')
        return X, out

    real = {name: getattr(_predictor, name) for name in (
        '_predict_from_raw_data', '_predict_from_binned_data', '_compute_partial_dependence')}

    def _predict_from_raw_data(nodes, numeric_data, raw_left_cat_bitsets, known_cat_bitsets,
                               f_idx_map, n_threads, out):
        n_threads = operator.index(n_threads)
        numeric_data, out = samples(numeric_data, out)
        raw_left_cat_bitsets = sets(raw_left_cat_bitsets, 'raw_left_cat_bitsets')
        nodes = tree(nodes, numeric_data.shape[1], raw_left_cat_bitsets)
        f_idx_map = np.array(f_idx_map)
        known = known_cat_bitsets = sets(known_cat_bitsets, 'known_cat_bitsets')
        inner = nodes[nodes['is_leaf'] == 0]
        used = inner['feature_idx'][inner['is_categorical'] != 0].astype(np.int64)
        if len(used):
            if f_idx_map.ndim != 1 or used.max() >= len(f_idx_map):
                raise ValueError('f_idx_map has no entry for a categorical feature')
            at = f_idx_map[used].astype(np.int64)
            if at.min() < 0 or at.max() >= len(known):
                raise ValueError("f_idx_map points past the known categories' sets")
        return real['_predict_from_raw_data'](nodes, numeric_data, raw_left_cat_bitsets,
                                              known_cat_bitsets, f_idx_map, n_threads, out)

    def _predict_from_binned_data(nodes, binned_data, binned_left_cat_bitsets,
                                  missing_values_bin_idx, n_threads, out):
        n_threads = operator.index(n_threads)
        missing_values_bin_idx = operator.index(missing_values_bin_idx)
        binned_data, out = samples(binned_data, out)
        binned_left_cat_bitsets = sets(binned_left_cat_bitsets, 'binned_left_cat_bitsets')
        nodes = tree(nodes, binned_data.shape[1], binned_left_cat_bitsets)
        return real['_predict_from_binned_data'](nodes, binned_data, binned_left_cat_bitsets,
                                                 missing_values_bin_idx, n_threads, out)

    def _compute_partial_dependence(nodes, X, target_features, out):
        target_features = np.array(target_features)
        X, out = samples(X, out)
        if target_features.ndim != 1 or len(target_features) > X.shape[1]:
            raise ValueError('X should have a column for each target feature')
        nodes = tree(nodes, np.iinfo(np.int32).max, None)
        return real['_compute_partial_dependence'](nodes, X, target_features, out)

    replacements = {}
    for name, f in list(locals().items()):
        if name in real:
            f.__name__ = f.__qualname__ = name
            f.__doc__ = real[name].__doc__
            f.__module__ = real[name].__module__
            replacements[id(real[name])] = (real[name], f)
    _replace_all(replacements)


def _sklearn_inputs():
    """sklearn's compiled helpers take what they are given as checked (its own Python code
    checks first): a row to delete past the matrix (cholesky_delete wrote before its memory),
    a sparse matrix's index pointers, indices or rows past its arrays (SIGSEGV, or any memory).
    Each public one checks its inputs here first, wherever it is named."""
    import operator
    import numpy as np
    import scipy.sparse as sp
    from sklearn.utils import arrayfuncs, sparsefuncs_fast as fast

    nd = np.ndarray
    get = {name: nd.__dict__[name].__get__ for name in ('dtype', 'shape', 'strides', 'ndim')}
    sparse = tuple(getattr(sp, name) for name in ('csr_matrix', 'csc_matrix', 'csr_array',
                                                   'csc_array') if hasattr(sp, name))

    def matrix(X, formats=('csr', 'csc')):
        # An exact scipy class (a subclass could answer its arrays otherwise at each read),
        # its arrays checked whole: pointers rising within the indices, indices within the
        # shape. The arrays are read again only by the compiled code, which runs next.
        # (the class's format and check_format: an instance's own would answer for them, as
        # would an instance's own of anything the check calls, such as _swap)
        if type(X) not in sparse or type(X).format not in formats:
            raise TypeError('expected a scipy.sparse %s matrix' % ' or '.join(formats))
        for name in vars(X):
            if name not in ('data', 'indices', 'indptr', '_shape', 'maxprint') and \
                    hasattr(type(X), name):
                raise TypeError('the sparse matrix has its own %s' % name)
        type(X).check_format(X, full_check=True)
        if len(X.data) < X.indptr[-1]:
            raise ValueError('the sparse matrix has fewer values than its index pointers say')
        return X

    # The other arguments are converted before X is checked, and the checked X is passed on
    # at once: their conversions run the code's methods, which could edit X.
    def vector(v, n, what):
        v = np.asarray(v)  # numpy's own by now: nothing of the code's runs
        if get['ndim'](v) != 1 or get['shape'](v)[0] != n:
            raise ValueError('%s should be a 1-D array of %d values' % (what, n))
        return v

    real = {}

    def checked(f):
        name = f.__name__
        orig = getattr(fast if hasattr(fast, name) else arrayfuncs, name)
        real[name] = orig
        f.__name__ = f.__qualname__ = name
        f.__doc__ = orig.__doc__
        f.__module__ = orig.__module__
        return f

    @checked
    def cholesky_delete(L, go_out):
        go_out = operator.index(go_out)
        if not issubclass(type(L), nd) or get['ndim'](L) != 2:
            raise ValueError('L should be a 2-D array')
        (n, m), (row, col) = get['shape'](L), get['strides'](L)
        size = get['dtype'](L).itemsize
        if col != size or row < m * size or m < n:
            raise ValueError('L should be a square-or-wider array with contiguous rows')
        if not 0 <= go_out < n:
            raise IndexError('go_out %d is not a row of L (%d rows)' % (go_out, n))
        return real['cholesky_delete'](L, go_out)

    @checked
    def csr_row_norms(X):
        return real['csr_row_norms'](matrix(X, ('csr',)))

    @checked
    def inplace_csr_row_normalize_l1(X):
        return real['inplace_csr_row_normalize_l1'](matrix(X, ('csr',)))

    @checked
    def inplace_csr_row_normalize_l2(X):
        return real['inplace_csr_row_normalize_l2'](matrix(X, ('csr',)))

    @checked
    def csr_mean_variance_axis0(X, weights=None, return_sum_weights=False):
        weights = None if weights is None else np.asarray(weights)
        return_sum_weights = bool(return_sum_weights)
        matrix(X, ('csr',))
        if weights is not None:
            weights = vector(weights, X.shape[0], 'weights')
        return real['csr_mean_variance_axis0'](X, weights, return_sum_weights)

    @checked
    def csc_mean_variance_axis0(X, weights=None, return_sum_weights=False):
        weights = None if weights is None else np.asarray(weights)
        return_sum_weights = bool(return_sum_weights)
        matrix(X, ('csc',))
        if weights is not None:
            weights = vector(weights, X.shape[0], 'weights')
        return real['csc_mean_variance_axis0'](X, weights, return_sum_weights)

    @checked
    def incr_mean_variance_axis0(X, last_mean, last_var, last_n, weights=None):
        last_mean, last_var, last_n = (np.asarray(a) for a in (last_mean, last_var, last_n))
        weights = None if weights is None else np.asarray(weights)
        matrix(X)
        n = X.shape[1]
        last_mean = vector(last_mean, n, 'last_mean')
        last_var = vector(last_var, n, 'last_var')
        last_n = vector(last_n, n, 'last_n')
        if weights is not None:
            weights = vector(weights, X.shape[0], 'weights')
        return real['incr_mean_variance_axis0'](X, last_mean, last_var, last_n, weights)

    @checked
    def assign_rows_csr(X, X_rows, out_rows, out):
        X_rows, out_rows = np.array(X_rows, np.intp), np.array(out_rows, np.intp)
        if not issubclass(type(out), nd) or get['ndim'](out) != 2:
            raise ValueError('out should be a 2-D array')
        out = nd.view(out, nd)  # new array object over the same memory
        matrix(X, ('csr',))
        rows, cols = get['shape'](out)
        if get['ndim'](X_rows) != 1 or get['shape'](X_rows) != get['shape'](out_rows):
            raise ValueError('X_rows and out_rows should be 1-D arrays of one length')
        if X.shape[1] > cols:
            raise ValueError('out has fewer columns than X')
        for idx, n, what in ((X_rows, X.shape[0], 'X_rows'), (out_rows, rows, 'out_rows')):
            if len(idx) and (idx.min() < 0 or idx.max() >= n):
                raise IndexError('%s holds a row past the %d there are' % (what, n))
        return real['assign_rows_csr'](X, X_rows, out_rows, out)

    _replace_all({id(real[name]): (real[name], f) for name, f in list(locals().items())
                  if name in real})


# The natural JSON form of numpy and pandas results (natural()): at most this many values.
NATURAL_CELLS = 10000
NATURAL_ROWS = 1000


def _finite(v):
    """v with NaN and infinities (which JSON has not) as None, in lists too."""
    if isinstance(v, float) and v != v or v in (float('inf'), float('-inf')):
        return None
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def _default_index(index, n):
    pd = sys.modules['pandas']
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def natural(v):
    """In a worker, for a call's result: a plain value (lists, dicts, numbers, strings, None)
    that says what a numpy or pandas value holds - a numpy scalar its number, an array of
    numbers or strings its nested lists (at most NATURAL_CELLS elements), a DataFrame its rows
    as records (at most NATURAL_ROWS rows and NATURAL_CELLS cells; a named index becomes
    columns), a Series its values (a list, or an object by its index), a Timestamp its ISO text
    - or NotImplemented when it has none within the bounds. float64 values are as they are
    (as a numpy array's), not to_json's 10 decimals."""
    import json
    np, pd = sys.modules.get('numpy'), sys.modules.get('pandas')
    t = type(v)
    try:
        if np is not None and isinstance(v, np.generic):
            out = v.item()
            return _finite(out) if isinstance(out, (bool, int, float, str)) else NotImplemented
        if np is not None and t is np.ndarray:
            if v.size > NATURAL_CELLS or v.dtype.kind not in 'biufU':
                return NotImplemented
            return _finite(v.tolist())
        if pd is None:
            return NotImplemented
        opts = {'date_format': 'iso', 'default_handler': str}
        if t is pd.DataFrame:
            if len(v) > NATURAL_ROWS or v.size > NATURAL_CELLS:
                return NotImplemented
            if not _default_index(v.index, len(v)):
                v = v.reset_index()
            out = json.loads(v.to_json(orient='records', **opts))
            # (to_json writes floats to 10 decimals: a p-value of 3.2e-12 read 0.0; a float64
            # column's values are put back as they are)
            exact = [j for j in range(v.shape[1]) if v.dtypes.iloc[j] == np.float64]
            if exact and out and all(len(r) == v.shape[1] for r in out):
                keys = list(out[0])
                for j in exact:
                    for r, x in zip(out, _finite(v.iloc[:, j].tolist())):
                        r[keys[j]] = x
            return out
        if t is pd.Series:
            if v.size > NATURAL_CELLS:
                return NotImplemented
            orient = 'values' if _default_index(v.index, len(v)) else 'index'
            out = json.loads(v.to_json(orient=orient, **opts))
            if v.dtype == np.float64:
                exact = _finite(v.tolist())
                if orient == 'values':
                    out = exact
                elif isinstance(out, dict) and len(out) == len(exact):
                    out = dict(zip(out, exact))
            return out
        if t is pd.Timestamp:
            return v.isoformat()
    except (ValueError, TypeError, OverflowError):
        pass  # no such form: duplicate columns, a non-unique index, ...
    return NotImplemented


def _png_size(png):
    """Width and height from a PNG's header."""
    if len(png) < 24 or png[:8] != b'\x89PNG\r\n\x1a\n' or png[12:16] != b'IHDR':
        return 0, 0
    return int.from_bytes(png[16:20], 'big'), int.from_bytes(png[20:24], 'big')


def _render(fig, side, budget):
    """The figure as PNG bytes of at most side pixels a side and budget bytes: rendered at a
    lower resolution until it fits. (png, width, height), or None when even 32 pixels a side
    do not fit."""
    w, h = fig.get_size_inches()
    dpi = fig.dpi
    longest = max(w, h, 0.01)
    scale = min(1.0, side / (longest * dpi))
    for _ in range(8):
        buf = io.BytesIO()
        fig.savefig(buf, format='png', dpi=dpi * scale, bbox_inches='tight')
        png = buf.getvalue()
        pw, ph = _png_size(png)
        if 0 < max(pw, ph) <= side and len(png) <= budget:
            return png, pw, ph
        shrink = 0.9 * min(side / max(pw, ph, 1), (budget / max(len(png), 1)) ** 0.5)
        scale *= min(shrink, 0.9)
        if max(pw, ph) * shrink < 32:
            return None
    return None


def _picture(im, side, budget):
    """A PIL image as PNG bytes within the same bounds as _render (its current frame, scaled
    down to fit, never up). (png, width, height), or None."""
    im = im.copy()
    if im.mode not in ('1', 'L', 'LA', 'P', 'RGB', 'RGBA'):
        im = im.convert('RGBA')
    bound = side
    while bound >= 32:
        im.thumbnail((bound, bound))
        buf = io.BytesIO()
        im.save(buf, format='PNG')
        png = buf.getvalue()
        if len(png) <= budget:
            return png, im.width, im.height
        shrink = 0.9 * min(1.0, (budget / len(png)) ** 0.5)
        bound = min(bound - 1, int(max(im.width, im.height) * shrink))
    return None


# Objects that read their workspace file later (an image opened lazily, an .npz's arrays): the
# call's files close when it ends, and such an object then failed in the session's next call
# ("seek of closed file"). Each is given its file's bytes at the call's end instead.
_read_later = []          # [(weak reference, move)]: move(obj, room) -> bytes it took
_READ_LATER_MAX = 256 << 20  # bytes kept so at the end of one call


def _later(obj, move):
    import weakref
    _read_later.append((weakref.ref(obj), move))


def _in_memory(f, room):
    """The bytes of the open file f, read whole, as a BytesIO at f's position; None when f is
    closed, not a workspace file read by the sandbox's open, or larger than room."""
    if type(f) is not io.BufferedReader or f.closed:
        return None
    at = f.tell()
    size = f.seek(0, 2)
    if size > room:
        f.seek(at)
        return None
    f.seek(0)
    mem = io.BytesIO(f.read())
    mem.seek(at)
    return mem


def keep_files():
    """At the end of a call, before its files close: the objects made in it that read their
    file later read its bytes from memory from now on (up to _READ_LATER_MAX in all; one past
    that says, when used, that its file was closed)."""
    if not _read_later:
        return
    todo = list(_read_later)
    del _read_later[:]
    room = _READ_LATER_MAX
    for ref, move in todo:
        obj = ref()
        if obj is not None and room > 0:
            try:
                room -= move(obj, room)
            except Exception:
                pass


def _note(text):
    """text written to the call's stderr, if the code left one that takes it."""
    try:
        sys.stderr.write(text)
    except Exception:
        pass


def call_begin():
    """At a call's start: what an earlier call's finalizers kept after its images were taken
    (a savefig in a __del__ of its value) is not this call's."""
    del _shown[:]
    del _saved[:]
    _dropped[0] = 0


def _keep(fig, render=_render):
    """Render a figure (or a picture) into this call's images (the limits are _limits')."""
    total = sum(len(p) for p, _, _ in _shown)
    room = min(_limits['bytes'], _limits['total'] - total)
    if len(_shown) >= _limits['count'] or room <= 0:
        _dropped[0] += 1
    else:
        img = render(fig, _limits['side'], room)
        if img is None:
            _dropped[0] += 1
        else:
            _shown.append(img)


def _objects_plot(value):
    """The figure of a seaborn.objects Plot (its own class's: a subclass's plot() is not run
    here), drawn through pyplot; or None."""
    so = sys.modules.get('seaborn._core.plot')
    if so is None or type(value) is not so.Plot:
        return None
    return value.plot(pyplot=True)._figure


def display(value):
    """display(value) of a figure (shown, then closed, as figure.show()), a seaborn.objects
    Plot (drawn and shown, as a notebook shows one) or a PIL image: an image of this call's
    result. True when value is one."""
    figure = sys.modules.get('matplotlib.figure')
    if figure is not None and not isinstance(value, figure.Figure):
        value = _objects_plot(value) or value
    if figure is not None and isinstance(value, figure.Figure):
        _keep(value)
        sys.modules['matplotlib.pyplot'].close(value)
        return True
    image = sys.modules.get('PIL.Image')
    if image is not None and isinstance(value, image.Image):
        _keep(value, _picture)
        return True
    return False


def figures(side, single, total, count, value=None):
    """In a worker, at the end of a call: the images of the figures shown during it, then of
    every figure still open that has something drawn on it (each closed after), then of the call's value when it is a figure
    (one an earlier call made and showed: shown again, as a notebook shows it), within the
    limits; how many were left out; and how many were not drawn because the call's time ran out
    while they were (the rest then left out too). Returns ([(png, width, height), ...], dropped,
    late)."""
    _limits.update(side=side, bytes=single, total=total, count=count)
    plt = sys.modules.get('matplotlib.pyplot')
    late = 0
    try:
        if plt is not None:
            open_figures = [plt.figure(num) for num in plt.get_fignums()]
            for k, fig in enumerate(open_figures):
                # A figure with nothing drawn on it (plt.draw() or plt.gcf() after show(),
                # which closed the one shown) is not an image, as a notebook shows none.
                # One that cannot be drawn (a typo in its mathtext) is said on stderr; the
                # others come back.
                try:
                    # (one savefig showed, not drawn on since, is not shown twice)
                    if any(fig is f for f in _saved) and not fig.stale:
                        pass
                    elif any(child is not fig.patch for child in fig.get_children()):
                        _keep(fig)
                except TimeoutError:
                    # The call's time ran out while its figures were drawn (the code had
                    # ended): those not drawn yet are left out, and the call is the code's.
                    late = len(open_figures) - k
                    break
                except MemoryError:
                    raise
                except BaseException as e:  # a draw callback's SystemExit too
                    sys.stderr.write('[figure %s not returned: %s: %s]\n'
                                     % (fig.number, type(e).__name__, e))
                plt.close(fig)
            if late:
                return list(_shown), _dropped[0], late
            figure = sys.modules['matplotlib.figure'].Figure
            if type(value) is figure and not any(value is f for f in open_figures):
                _keep(value)
                plt.close(value)
            plotted = _objects_plot(value)
            if plotted is not None:
                _keep(plotted)
                plt.close(plotted)
        image = sys.modules.get('PIL.Image')
        if image is not None and isinstance(value, image.Image):
            _keep(value, _picture)
    finally:
        out, dropped = list(_shown), _dropped[0]
        del _shown[:]
        del _saved[:]
        _dropped[0] = 0
        if plt is not None:
            plt.close('all')
    return out, dropped, late
