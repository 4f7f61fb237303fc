/* pyproxy.c - module proxies, the allowed modules as user code sees them: a module of its own
 * with the real one's public, non-module attributes, its allowed submodules' proxies and a module
 * __getattr__ for what the real one gained later; made in the zygote, and in a worker for modules
 * imported later. Functions return borrowed references (NULL with an exception set on error). */
#include "interp_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static char **allowed; /* the allowlist, owned */
static size_t n_allowed;
static PyObject *proxies;    /* name -> proxy of an allowed module */
static int workspace_os;     /* os is the workspace's (fill_os), not a module of its own */
static PyObject *stubs;      /* name -> stub of a package with allowed submodules */
static PyObject **proxy_set; /* every proxy and stub (and views), sorted by address */
static size_t n_proxy_set, cap_proxy_set;
static PyObject *authorized_text; /* "['abc', 'array', ...]" */

/* Attributes a proxy leaves out although they are public: the parts of a module that open
 * files (the kernel refuses them anyway; this says why at once). */
static const struct {
	const char *module, *name, *why;
} left_out[] = {
    {"io", "open", "files cannot be opened in the sandbox; use io.StringIO or io.BytesIO"},
    {"io", "open_code", "files cannot be opened in the sandbox"},
    {"io", "FileIO", "files cannot be opened in the sandbox; use io.BytesIO"},
    {"logging", "currentframe", "frames are out of reach in the sandbox"},
    /* (their threads and waits are for child processes, which a worker never has) */
    {"asyncio", "AbstractChildWatcher", "the sandbox has no child processes to watch"},
    {"asyncio", "SafeChildWatcher", "the sandbox has no child processes to watch"},
    {"asyncio", "FastChildWatcher", "the sandbox has no child processes to watch"},
    {"asyncio", "PidfdChildWatcher", "the sandbox has no child processes to watch"},
    {"asyncio", "MultiLoopChildWatcher", "the sandbox has no child processes to watch"},
    {"asyncio", "ThreadedChildWatcher", "the sandbox has no child processes to watch"},
};

/* Allowed without their submodules: logging.config builds any object a name names, and
 * logging.handlers reaches sockets, processes and files; importlib's load any file, yaml's
 * loaders and constructors make objects of any class (the modules the worker makes stand for
 * importlib and yaml: interp.c); asyncio's hold the real loops of the system (its Unix
 * selector loop set any signal's handler, its child watchers started threads), while the
 * package has the sandbox's loop (interp.c). */
static const char *const no_submodules[] = {"logging", "traceback", "importlib",
                                            "yaml",    "asyncio",   NULL};

/* Modules the sandbox makes in place of the real one of their name (interp.c: platform,
 * importlib, importlib.util, importlib.metadata, timeit, tempfile, yaml): the libraries keep the real
 * module; the user's code gets the made one's proxy, and nothing of the real one (importlib's
 * loaders read any file, yaml's build objects of any class). */
static PyObject *made;

int pyproxy_made_add(PyObject *name, PyObject *module)
{
	if (!made && !(made = PyDict_New()))
		return -1;
	return PyDict_SetItem(made, name, module);
}

static int made_has(const char *name)
{
	return made && PyDict_GetItemString(made, name) != NULL;
}

/* The module name's proxy is of: the made one, else the real one. New reference. */
static PyObject *module_of(PyObject *name)
{
	PyObject *m = made ? PyDict_GetItemWithError(made, name) : NULL;

	if (m || PyErr_Occurred())
		return Py_XNewRef(m);
	return PyImport_GetModule(name);
}

/* The libraries' raw native wrappers: each function hands its arguments to Fortran or C as they
 * are (sizes, strides, offsets, pivots, knots), its caller having checked them: scipy's packed
 * BLAS routines took any n (n*(n+1)/2 wrapped in 32 bits: any memory), dfitpack any degree.
 * Not given to the user's code, which reaches the same routines through the libraries' own
 * functions (scipy.linalg.solve, lu_solve, scipy.interpolate.splev, numpy.linalg), nor are the
 * functions that hand the wrappers out (scipy.linalg.get_blas_funcs, get_lapack_funcs). */
static const char *const native_wrappers[] = {
    "numpy.linalg.lapack_lite",
    "scipy.linalg.blas",
    "scipy.linalg.lapack",
    "scipy.linalg.cython_blas",
    "scipy.linalg.cython_lapack",
    "scipy.linalg.flinalg",
    "scipy.interpolate.dfitpack",
    "scipy.fftpack.convolve",
    /* deprecated aliases of the MATLAB reader's compiled modules: VarHeader5.set_dims wrote
     * past its 32 dimensions, chars_to_strings read a 0-d array's first dimension */
    "scipy.io.matlab.mio5_utils",
    "scipy.io.matlab.mio_utils",
    "scipy.io.matlab.streams",
    NULL,
};

static int under(const char *name, const char *const *modules)
{
	for (const char *const *m = modules; *m; m++) {
		size_t n = strlen(*m);
		if (strncmp(*m, name, n) == 0 && (name[n] == '\0' || name[n] == '.'))
			return 1;
	}
	return 0;
}

/* What to do instead, for the refused modules code most often reaches for: the refusal's
 * list alone leaves the code's author (often a model that will try again) guessing. */
static const struct {
	const char *const *modules;
	const char *hint;
} refusal_hints[] = {
    {(const char *const[]){"subprocess", "multiprocessing", "pty", "signal", NULL},
     "The code runs in one process: no program or other process can be started (numpy and "
     "pandas do their work in vectorised calls instead; for a pool's map, "
     "concurrent.futures.ThreadPoolExecutor().map runs each task in turn)."},
    {(const char *const[]){"threading", "_thread", "asyncio", "sched", "concurrent",
                           "threadpoolctl", NULL},
     "The code runs in one thread, start to end: no threads of its own; call the function "
     "for each item instead (results = list(map(f, items)), or a loop). "
     "concurrent.futures' executors run each task as it is submitted, and asyncio runs "
     "coroutines (asyncio.run, gather, queues) on a loop with no I/O."},
    {(const char *const[]){"socket", "ssl", "requests", "urllib.request", "http", "ftplib",
                           "smtplib", "httpx", "aiohttp", "websocket", NULL},
     "The sandbox has no network: data must come with the code (a literal, a string to parse) "
     "or, with a workspace, from a file in it."},
    {(const char *const[]){"joblib", NULL},
     "joblib is not available: the code runs in one process and one thread, so "
     "Parallel(n_jobs=k)(delayed(f)(x) for x in items) is [f(x) for x in items] here "
     "(scikit-learn's n_jobs= works as it is); a fitted model stays in the session's memory "
     "between calls instead of joblib.dump."},
    {(const char *const[]){"pickle", "shelve", "marshal", "dill", NULL},
     "Pickled data is not read in the sandbox (loading it can run any code), nor written by "
     "these modules: use json, csv, or pandas' and numpy's own formats (to_csv, to_json, "
     "np.save without allow_pickle); a fitted model stays in the session's memory between "
     "calls."},
    {(const char *const[]){"ctypes", "cffi", NULL}, "Native code cannot be loaded in the sandbox."},
    {(const char *const[]){"os", "pathlib", "shutil", "glob", "filecmp", "fileinput", NULL},
     "Files come only with a workspace (the server's --workspace DIR option), and there is "
     "none: no file or process can be reached, so os, pathlib, shutil and glob are not "
     "importable. Remove the import where the code only builds paths or reads settings (name "
     "a file in a string, set a value in the code); keep data in memory (io.StringIO, "
     "io.BytesIO); plt.show() and savefig() return figures as images."},
    {(const char *const[]){"IPython", NULL},
     "IPython is not available: display() is a built-in here (figures, images, frames), and "
     "plt.show() returns figures as images."},
    {(const char *const[]){"inspect", NULL},
     "A function's or class's signature and documentation: help(f) prints them; "
     "f.__name__ and f.__doc__ name and describe it."},
    {(const char *const[]){"cProfile", "profile", NULL},
     "Time code with time.perf_counter(), or timeit.timeit(lambda: f(x), number=100)."},
    {(const char *const[]){"locale", NULL},
     "Format numbers with f'{x:,.2f}' (and str.replace for other separators); read them with "
     "pandas' thousands= and decimal= options."},
    {(const char *const[]){"logging.config", "logging.handlers", NULL},
     "logging itself works: logging.basicConfig(level=logging.INFO, format=...) and "
     "logging.getLogger(name) write to the call's stderr, StreamHandler(sys.stdout) to its "
     "stdout; handlers that write files, sockets or mail are not available (the call's logs "
     "come back with its answer)."},
    {(const char *const[]){"getpass", NULL},
     "No one is at a terminal to type a password or name: pass values in the code."},
    {(const char *const[]){"tracemalloc", "resource", NULL},
     "The server sets the call's limits (its --memory and --timeout options). Measure memory "
     "with a numpy array's .nbytes, DataFrame.memory_usage(deep=True) or "
     "sys.getsizeof; time with time.perf_counter() or time.process_time()."},
    {(const char *const[]){"xml.sax", "xml.parsers", NULL},
     "Read and write XML with xml.etree.ElementTree or xml.dom.minidom; html.escape() and "
     "html.unescape() escape text for XML too."},
    {(const char *const[]){"weakref", NULL},
     "Weak references are not available in the sandbox: keep plain references (a dict for a "
     "cache, or functools.lru_cache)."},
    {(const char *const[]){"unittest", "doctest", "pytest", NULL},
     "Test runners are not available in the sandbox: write each test as a function that "
     "asserts (def test_add(): assert add(2, 3) == 5), then call them and print what passed "
     "(for t in (test_add,): t(); print(t.__name__, 'ok'))."},
    {(const char *const[]){"contextvars", NULL},
     "Context variables are not available in the sandbox: pass the value as an argument, or "
     "keep it in a variable of the session (each call runs in one thread)."},
    {(const char *const[]){"atexit", NULL},
     "The code's process ends with its call: run the cleanup at the end of the code (or in a "
     "try/finally)."},
    {(const char *const[]){"dis", "builtins", "copyreg", NULL},
     "The interpreter's internals are not available in the sandbox: the built-in functions are "
     "there by their names (len, print, ...), without an import."},
    {(const char *const[]){"typing_extensions", "pydantic", "attr", "attrs", NULL},
     "Use the standard library's typing (Protocol, TypedDict, Literal, Annotated, ...) and "
     "dataclasses (@dataclass(frozen=True), field(default_factory=list)) instead."},
    {(const char *const[]){"email", NULL},
     "Mail cannot be sent or read in the sandbox (no network or files): build the text itself "
     "with string formatting."},
    {(const char *const[]){"mmap", NULL},
     "Read a workspace file with open() and seek(), or in parts with pandas' chunksize=."},
    {(const char *const[]){"statsmodels", NULL},
     "statsmodels is not one of the sandbox's libraries: numpy.linalg.lstsq or scikit-learn's "
     "LinearRegression fit a regression (coef_, intercept_, score), scipy.stats.linregress "
     "gives a line's slope, r and p-value, scipy.stats has the tests (ttest_ind, "
     "chi2_contingency, f_oneway, shapiro), and pandas' rolling and ewm smooth a series (with "
     "--imports data)."},
    {(const char *const[]){"lxml", "bs4", "xmltodict", NULL},
     "That package is not one of the sandbox's libraries: xml.etree.ElementTree parses XML "
     "(walk the elements into dicts: {c.tag: c.text for c in root}), html.parser.HTMLParser "
     "parses HTML, and pandas.read_xml(..., parser='etree') reads a table from XML."},
    {(const char *const[]){"pyarrow", "polars",   "xgboost",  "lightgbm",   "catboost", "plotly",
                           "bokeh",   "altair",   "torch",    "tensorflow", "keras",    "jax",
                           "numba",   "dask",     "networkx", "nltk",       "spacy",    "cv2",
                           "skimage", "yfinance", "prophet",  NULL},
     "That package is not one of the sandbox's libraries, and no package can be installed: "
     "numpy, pandas, scipy (stats, optimize, signal), scikit-learn and matplotlib do most of "
     "the same work (with --imports data)."},
    {(const char *const[]){"numpy", "pandas", "scipy", "sympy", "matplotlib", "mpl_toolkits",
                           "mpmath", "seaborn", "sklearn", "PIL", "openpyxl", "tabulate",
                           "dateutil", "pytz", "tqdm", NULL},
     "That is one of the data libraries, which this server was not started with: the server's "
     "--imports data option allows numpy, pandas, scipy, sympy, matplotlib, seaborn, "
     "scikit-learn and Pillow (its administrator sets it)."},
};

/* The Debian packages of the modules --imports data names. */
static const struct {
	const char *module, *package;
} debian[] = {
    {"numpy", "python3-numpy"},
    {"pandas", "python3-pandas"},
    {"scipy", "python3-scipy"},
    {"sympy", "python3-sympy"},
    {"matplotlib", "python3-matplotlib"},
    {"mpl_toolkits", "python3-matplotlib"},
    {"mpmath", "python3-mpmath"},
    {"seaborn", "python3-seaborn"},
    {"tabulate", "python3-tabulate"},
    {"openpyxl", "python3-openpyxl"},
    {"sklearn", "python3-sklearn"},
    {"pytz", "python3-tz"},
    {"dateutil", "python3-dateutil"},
    {"PIL", "python3-pil"},
    {"tqdm", "python3-tqdm"},
    {"yaml", "python3-yaml"},
};

const char *pyproxy_debian_package(const char *name)
{
	size_t n = strcspn(name, ".");

	for (size_t i = 0; i < sizeof(debian) / sizeof(debian[0]); i++)
		if (strlen(debian[i].module) == n && strncmp(debian[i].module, name, n) == 0)
			return debian[i].package;
	return NULL;
}

/* The module's attributes named in keep (NULL-terminated), the same in the proxy. */
static int copy_names(PyObject *proxy, PyObject *module, const char *const *keep)
{
	for (const char *const *k = keep; *k; k++) {
		PyObject *v = PyObject_GetAttrString(module, *k);
		int rc = v ? PyModule_AddObjectRef(proxy, *k, v) : -1;

		Py_XDECREF(v);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* sys as user code sees it (with the Python layer). */
static PyObject *sys_proxy;

/* The output streams the code is given: sys.stdout and sys.stderr (and sys.__stdout__,
 * sys.__stderr__, the streams to go back to), in the real sys, which print() and the
 * interpreter write to, and in the proxy. */
static int streams_set(PyObject *name, PyObject *value)
{
	if (PySys_SetObject(PyUnicode_AsUTF8(name), value) < 0)
		return -1;
	return sys_proxy ? PyObject_GenericSetAttr(sys_proxy, name, value) : 0;
}

/* sys.stdout = io.StringIO() (code that captures what it prints) sets the stream print() and
 * the interpreter write to, as contextlib.redirect_stdout does; sys.argv = [...] the arguments
 * argparse reads; any other name is the proxy's own. */
static int sys_proxy_setattro(PyObject *self, PyObject *name, PyObject *value)
{
	if (self == sys_proxy && value && PyUnicode_CheckExact(name) &&
	    (PyUnicode_CompareWithASCIIString(name, "stdout") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "stderr") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "argv") == 0))
		return streams_set(name, value);
	return PyObject_GenericSetAttr(self, name, value);
}

int pyproxy_streams_reset(void)
{
	static const struct {
		const char *name;
		int which;
	} streams[] = {
	    {"stdout", CAPTURE_STDOUT},
	    {"stderr", CAPTURE_STDERR},
	    {"__stdout__", CAPTURE_STDOUT},
	    {"__stderr__", CAPTURE_STDERR},
	};
	PyObject *name;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(streams) / sizeof(streams[0]); i++) {
		name = PyUnicode_InternFromString(streams[i].name);
		rc = name ? streams_set(name, capture_stream(streams[i].which)) : -1;
		Py_XDECREF(name);
	}
	return rc;
}

/* sys.stdout and sys.stderr read the real sys's: a library that set them there
 * (contextlib.redirect_stdout, which print() follows) is followed by sys.stdout.write and
 * print(file=sys.stdout) too. */
static PyObject *sys_proxy_getattro(PyObject *self, PyObject *name)
{
	PyObject *v;

	if (self == sys_proxy && PyUnicode_CheckExact(name) &&
	    (PyUnicode_CompareWithASCIIString(name, "stdout") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "stderr") == 0) &&
	    (v = PySys_GetObject(PyUnicode_AsUTF8(name))))
		return Py_NewRef(v);
	return PyModule_Type.tp_getattro(self, name);
}

/* The proxy made a module of its own kind, whose attributes set and get go through set and
 * get. 0, or -1. */
static int module_kind_set(PyObject *proxy, setattrofunc set, getattrofunc get)
{
	PyType_Slot slots[] = {{Py_tp_setattro, set}, {Py_tp_getattro, get}, {0, NULL}};
	PyType_Spec spec = {"module", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, slots};
	PyObject *t = PyType_FromSpecWithBases(&spec, (PyObject *)&PyModule_Type);
	int rc = t ? PyObject_SetAttrString(proxy, "__class__", t) : -1;

	Py_XDECREF(t);
	return rc;
}

/* A module of its own kind: what it sets is sys_proxy_setattro's. */
static int sys_proxy_make(PyObject *proxy)
{
	if (module_kind_set(proxy, sys_proxy_setattro, sys_proxy_getattro) < 0)
		return -1;
	sys_proxy = proxy;
	return pyproxy_streams_reset();
}

/* warnings as user code sees it: showwarning and formatwarning are the real module's, read and
 * set, as the module's own warn() calls them (code that prints its warnings its own way sets
 * them; catch_warnings sets them there too). */
static PyObject *warnings_proxy, *warnings_real;

static int warnings_hook_name(PyObject *self, PyObject *name)
{
	return self == warnings_proxy && warnings_real && PyUnicode_CheckExact(name) &&
	       (PyUnicode_CompareWithASCIIString(name, "showwarning") == 0 ||
	        PyUnicode_CompareWithASCIIString(name, "formatwarning") == 0);
}

static int warnings_proxy_setattro(PyObject *self, PyObject *name, PyObject *value)
{
	if (value && warnings_hook_name(self, name))
		return PyObject_SetAttr(warnings_real, name, value);
	return PyObject_GenericSetAttr(self, name, value);
}

static PyObject *warnings_proxy_getattro(PyObject *self, PyObject *name)
{
	if (warnings_hook_name(self, name))
		return PyObject_GetAttr(warnings_real, name);
	return PyModule_Type.tp_getattro(self, name);
}

static int warnings_proxy_make(PyObject *proxy, PyObject *real)
{
	if (module_kind_set(proxy, warnings_proxy_setattro, warnings_proxy_getattro) < 0)
		return -1;
	warnings_proxy = proxy;
	Py_XSETREF(warnings_real, Py_NewRef(real));
	return 0;
}

/* Add v (a new reference, or NULL with the error) to m as name. 0 or -1. */
static int add_new(PyObject *m, const char *name, PyObject *v)
{
	int rc = v ? PyModule_AddObjectRef(m, name, v) : -1;

	Py_XDECREF(v);
	return rc;
}

/* What sys leaves out says so. */
static PyObject *sys_getattr(PyObject *self, PyObject *name)
{
	return PyErr_Format(
	    PyExc_AttributeError,
	    "module 'sys' has no attribute '%U' (sys in the sandbox is a view of "
	    "the standard streams, argv, path and version facts: no modules, frames "
	    "or interpreter settings)",
	    name);
}

static PyMethodDef sys_getattr_def = {"__getattr__", sys_getattr, METH_O, NULL};

/* sys as user code sees it: output streams and facts, nothing that reaches modules,
 * frames or interpreter settings. */
static int fill_sys(PyObject *proxy, PyObject *sys)
{
	static const char *const keep[] = {
	    "version",
	    "version_info",
	    "hexversion",
	    "maxsize",
	    "maxunicode",
	    "byteorder",
	    "platform",
	    "float_info",
	    "int_info",
	    "hash_info",
	    "implementation",
	    "float_repr_style",
	    "getrecursionlimit",
	    /* Deep recursion past the limit ends only the call's own worker. */
	    "setrecursionlimit",
	    "getsizeof",
	    "getdefaultencoding",
	    "getfilesystemencoding",
	    "getfilesystemencodeerrors",
	    "flags",
	    "exit",
	    "intern",
	    /* CPython's own error for a long int's str names them. */
	    "get_int_max_str_digits",
	    "set_int_max_str_digits",
	    /* The exception being handled: what an except clause binds already. */
	    "exc_info",
	    "exception",
	    NULL,
	};
	PyObject *ga;
	int rc;

	if (copy_names(proxy, sys, keep) < 0)
		return -1;
	/* A script's habits: its arguments (the real list, [''] as in the interactive interpreter:
	 * what the code puts there, or sets as sys.argv, is what argparse reads), its import path
	 * (a list of its own: nothing is imported from a path), its -W options (none: `if not
	 * sys.warnoptions: warnings.simplefilter(...)`), the interpreter's path (not known: none to
	 * start). */
	if (add_new(proxy, "argv", Py_XNewRef(PySys_GetObject("argv"))) < 0 ||
	    add_new(proxy, "path", PyList_New(0)) < 0 ||
	    add_new(proxy, "warnoptions", PyList_New(0)) < 0 ||
	    add_new(proxy, "executable", PyUnicode_FromString("")) < 0)
		return -1;
	/* Standard input: the empty text stream the libraries read (the code runs without a
	 * console: read() and readline() give '' as at the end of a file; input() says so). */
	if (PySys_GetObject("stdin") &&
	    add_new(proxy, "stdin", Py_NewRef(PySys_GetObject("stdin"))) < 0)
		return -1;
	ga = PyCFunction_New(&sys_getattr_def, NULL);
	rc = ga ? PyObject_SetAttrString(proxy, "__getattr__", ga) : -1;
	Py_XDECREF(ga);
	return rc < 0 ? -1 : sys_proxy_make(proxy);
}

/* gc as user code sees it: collections and their thresholds, as code frees memory with
 * (gc.collect() after del); nothing that hands out objects (get_objects, get_referrers,
 * get_referents, garbage, callbacks) or debugs. */
static int fill_gc(PyObject *proxy, PyObject *gc)
{
	static const char *const keep[] = {
	    "collect",          "enable",     "disable",      "isenabled",
	    "get_count",        "get_stats",  "freeze",       "unfreeze",
	    "get_freeze_count", "is_tracked", "is_finalized", "get_threshold",
	    "set_threshold",    NULL,
	};

	return copy_names(proxy, gc, keep);
}

/* os as user code sees it with a workspace: its files and directories (answered from the
 * workspace, pyfiles.c: opened, listed, made, removed, renamed, their permissions and times
 * changed), path handling, and facts (get_terminal_size: no terminal, OSError as when piped); no
 * fds, processes or signals, and nothing more later (its __getattr__ gives only os.path). */
static int fill_os(PyObject *proxy, PyObject *os)
{
	static const char *const keep[] = {
	    "getcwd",        "getcwdb",   "listdir",  "scandir",     "walk",
	    "stat",          "lstat",     "fstat",    "access",      "fspath",
	    "fsencode",      "fsdecode",  "PathLike", "stat_result", "sep",
	    "altsep",        "extsep",    "pathsep",  "linesep",     "curdir",
	    "pardir",        "defpath",   "devnull",  "name",        "error",
	    "strerror",      "F_OK",      "R_OK",     "W_OK",        "X_OK",
	    "SEEK_SET",      "SEEK_CUR",  "SEEK_END", "environ",     "getenv",
	    "getpid",        "urandom",   "makedirs", "mkdir",       "remove",
	    "unlink",        "rename",    "replace",  "rmdir",       "removedirs",
	    "renames",       "cpu_count", "chmod",    "utime",       "get_terminal_size",
	    "terminal_size", "fsync",     NULL,
	};

	return copy_names(proxy, os, keep);
}

/* Why module.name is left out of its proxy, or NULL. With a workspace io keeps them all: its
 * open is the workspace's (pyfiles.c), and the audit hook refuses FileIO and open_code. */
static const char *left_out_why(const char *module, const char *name)
{
	if (workspace_os && strcmp(module, "io") == 0)
		return NULL;
	for (size_t i = 0; i < sizeof(left_out) / sizeof(left_out[0]); i++)
		if (strcmp(left_out[i].module, module) == 0 && strcmp(left_out[i].name, name) == 0)
			return left_out[i].why;
	return NULL;
}

const char *pyproxy_left_out(PyObject *module, PyObject *name)
{
	const char *m = PyUnicode_Check(module) ? PyUnicode_AsUTF8(module) : NULL;
	const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;

	PyErr_Clear();
	return m && n ? left_out_why(m, n) : NULL;
}

/* Modules whose functions and classes a proxy never gives, under whatever public name a library
 * re-exports them (sympy's autowrap.check_output is subprocess's): they run programs, reach the
 * network or make files, which the sandbox refuses anyway; the user's code gets them only where
 * the allowlist names their module (the file modules a workspace adds: json.tool's Path was
 * pathlib's in default mode). */
static const char *const foreign_homes[] = {
    "subprocess", "_posixsubprocess",
    "urllib",     "http",
    "socket",     "ssl",
    "tempfile",   "shutil",
    "ftplib",     "smtplib",
    "poplib",     "imaplib",
    "nntplib",    "telnetlib",
    "webbrowser", "ctypes",
    "pty",        "os",
    "pathlib",    "glob",
    "filecmp",    "fileinput",
    NULL,
};

/* The module a function or class a proxy would give was defined in, when it is one of those
 * and not allowed, or NULL. */
static const char *foreign_home(PyObject *val)
{
	PyObject *m = NULL;
	const char *s;

	if (PyFunction_Check(val))
		m = ((PyFunctionObject *)val)->func_module;
	else if (PyType_Check(val))
		m = PyDict_GetItemString(((PyTypeObject *)val)->tp_dict, "__module__");
	else if (PyCFunction_Check(val))
		m = ((PyCFunctionObject *)val)->m_module;
	s = m && PyUnicode_Check(m) ? PyUnicode_AsUTF8(m) : NULL;
	if (!s) {
		PyErr_Clear();
		return NULL;
	}
	for (const char *const *h = foreign_homes; *h; h++) {
		size_t n = strlen(*h);
		if (strncmp(s, *h, n) == 0 && (s[n] == '\0' || s[n] == '.') && !pyproxy_allowed(s))
			return *h;
	}
	return under(s, native_wrappers) ? s : NULL;
}

/* pandas' compiled functions (pandas._libs) that its internal modules import by name and use
 * with arguments they made themselves: month_position_check indexed a static table by the
 * month it was given (any int32 near it read), get_timedelta_field raised for a unit it did
 * not know inside a loop run without the interpreter's lock (SIGSEGV). The code gets them
 * where pandas gives them: pandas' own namespace, pandas.api (is_scalar, infer_dtype, ...) and
 * to_offset (pandas.tseries.frequencies', which its modules import too).
 * Their home, when val is one and module is not such a namespace, or NULL. */
static const char *internal_home(const char *module, const char *name, PyObject *val)
{
	static const char libs[] = "pandas._libs";
	PyObject *m = PyCFunction_Check(val) ? ((PyCFunctionObject *)val)->m_module : NULL;
	const char *s = m && PyUnicode_Check(m) ? PyUnicode_AsUTF8(m) : NULL;

	if (!s) {
		PyErr_Clear();
		return NULL;
	}
	if (strncmp(s, libs, sizeof(libs) - 1) != 0 ||
	    (s[sizeof(libs) - 1] != '\0' && s[sizeof(libs) - 1] != '.'))
		return NULL;
	if (strcmp(module, "pandas") == 0 || strcmp(module, "pandas.api") == 0 ||
	    strncmp(module, "pandas.api.", 11) == 0 || strcmp(name, "to_offset") == 0)
		return NULL;
	return s;
}

/* Copy the public, non-module attributes of a real module into its proxy. The values are the real,
 * shared objects, not copies: what the user's code changes of them (a function's defaults, an
 * object's attributes; not a library's class, pyguard.c) stays changed for the rest of its
 * session, and reaches nothing else. A session's processes are forks of its own worker and the
 * zygote runs no user code, so other sessions never see it; every piece of Python our own code
 * runs later in the session (building the program, repr() of the result, the error's text, the
 * warm-up) runs armed, so a changed object only runs the user's code under the user's rules; and
 * the supervisor trusts nothing a worker sends. Copying would not help: the classes' methods reach
 * the originals through their globals anyway. */
static int fill(PyObject *proxy, PyObject *real, const char *name)
{
	PyObject *dict = PyModule_GetDict(real), *key, *val;
	Py_ssize_t pos = 0;

	while (PyDict_Next(dict, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key);
		PyObject *put;
		int rc;
		if (!k)
			return -1;
		if (k[0] == '_' && strcmp(k, "__doc__") != 0 && strcmp(k, "__version__") != 0)
			continue; /* __all__ comes after, filtered */
		/* No module-valued attributes: random._os does not exist; submodules are linked
		 * in as proxies, and the proxy's __getattr__ gives an allowed module it holds as
		 * that module's proxy (statistics.sys is sys's). */
		if (PyModule_Check(val) || left_out_why(name, k) || foreign_home(val) ||
		    pydata_is_fortran(val) || internal_home(name, k, val))
			continue;
		put = pylayer_replacement(name, k, val);
		if (!put)
			return -1;
		rc = PyObject_SetAttr(proxy, key, put);
		Py_DECREF(put);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The proxy's __all__, a tuple: the real one's names that the proxy can give ("from m import *"
 * reads each), a submodule among them only when it is allowed. */
static int fill_all(PyObject *proxy, PyObject *real, PyObject *name)
{
	PyObject *all = PyObject_GetAttrString(real, "__all__"), *seq, *out;
	int rc = -1;

	if (!all) {
		PyErr_Clear();
		return 0;
	}
	seq = PySequence_Fast(all, "__all__");
	Py_DECREF(all);
	if (!seq) {
		PyErr_Clear();
		return 0;
	}
	out = PyList_New(0);
	for (Py_ssize_t i = 0; out && i < PySequence_Fast_GET_SIZE(seq); i++) {
		PyObject *k = PySequence_Fast_GET_ITEM(seq, i), *full;
		const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
		int keep;
		if (!ks) {
			PyErr_Clear();
			continue;
		}
		keep = PyDict_Contains(PyModule_GetDict(proxy), k) == 1;
		if (!keep && ks[0] != '_') {
			/* A submodule of this package (not a module it imported), allowed. */
			PyObject *v = PyDict_GetItemWithError(PyModule_GetDict(real), k), *vn;
			full = PyUnicode_FromFormat("%U.%U", name, k);
			vn = v && PyModule_Check(v) ? PyModule_GetNameObject(v) : NULL;
			keep = full && vn && PyUnicode_Compare(vn, full) == 0 &&
			       pyproxy_allowed(PyUnicode_AsUTF8(full));
			Py_XDECREF(vn);
			Py_XDECREF(full);
			PyErr_Clear();
		}
		if (keep && PyList_Append(out, k) < 0)
			Py_CLEAR(out);
	}
	Py_DECREF(seq);
	/* A tuple: a list of the user's code's could give what a library's star import of the
	 * module copies (sympy.abc's exec of 'from sympy import *' took a key of the user's). */
	if (out) {
		PyObject *t = PyList_AsTuple(out);
		rc = t ? PyObject_SetAttrString(proxy, "__all__", t) : -1;
		Py_XDECREF(t);
	}
	Py_XDECREF(out);
	return rc;
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (PyObject *const *)a, y = (uintptr_t) * (PyObject *const *)b;

	return x < y ? -1 : x > y;
}

/* Remember m (kept alive by proxies, stubs or the caller) as a view made for the user. */
static int set_add(PyObject *m)
{
	size_t i = n_proxy_set;

	if (n_proxy_set == cap_proxy_set) {
		size_t cap = cap_proxy_set ? 2 * cap_proxy_set : 256;
		PyObject **n = PyMem_Realloc(proxy_set, cap * sizeof(*n));
		if (!n) {
			PyErr_NoMemory();
			return -1;
		}
		proxy_set = n;
		cap_proxy_set = cap;
	}
	while (i > 0 && (uintptr_t)proxy_set[i - 1] > (uintptr_t)m) {
		proxy_set[i] = proxy_set[i - 1];
		i--;
	}
	proxy_set[i] = m;
	n_proxy_set++;
	return 0;
}

int pyproxy_is(PyObject *m)
{
	return n_proxy_set > 0 &&
	       bsearch(&m, proxy_set, n_proxy_set, sizeof(*proxy_set), ptr_cmp) != NULL;
}

int pyproxy_allowed(const char *name)
{
	if (!name || name[0] == '_' || strstr(name, "._") || under(name, native_wrappers))
		return 0;
	for (const char *const *m = no_submodules; *m; m++) {
		size_t n = strlen(*m);
		if (strncmp(*m, name, n) == 0 && name[n] == '.' && !made_has(name))
			return 0;
	}
	for (size_t i = 0; i < n_allowed; i++) {
		size_t n = strlen(allowed[i]);
		if (strncmp(allowed[i], name, n) == 0 && (name[n] == '\0' || name[n] == '.'))
			return 1;
	}
	return 0;
}

/* Is s (a module name) that of a module file in the workspace? */
static int workspace_file(const char *s, char top[NAME_MAX + 1])
{
	size_t n = strcspn(s, ".");

	if (!workspace_os || n == 0 || n > NAME_MAX)
		return 0;
	memcpy(top, s, n);
	top[n] = '\0';
	return pyfiles_has_module(top);
}

PyObject *pyproxy_refuse(PyObject *name, int from)
{
	Py_ssize_t len = 0;
	const char *s = PyUnicode_AsUTF8AndSize(name, &len);
	char top[NAME_MAX + 1];
	PyObject *msg;

	if (!s)
		return NULL;
	if (strlen(s) != (size_t)len)
		msg = PyUnicode_FromFormat("Import %s %R is not allowed: a module's name holds no "
		                           "NUL character",
		                           from ? "from" : "of", name);
	else if (under(s, native_wrappers))
		msg = PyUnicode_FromFormat(
		    "Import %s %s is not allowed: its functions hand their arguments to native "
		    "code "
		    "unchecked; use the package's own functions (scipy.linalg.solve, lu_solve, "
		    "scipy.interpolate.splev, numpy.linalg)",
		    from ? "from" : "of", s);
	else if (workspace_file(s, top))
		msg = PyUnicode_FromFormat(
		    "Import %s %s is not allowed: %s is a module of the workspace's files, and the "
		    "sandbox imports installed modules only. Run its code in a call of the session "
		    "(what a call defines stays for its next calls)",
		    from ? "from" : "of", s, top);
	else {
		const char *hint = NULL;

		char head[NAME_MAX + 1];
		size_t n = strcspn(s, ".");

		/* (the data libraries' hint only where their package is not allowed at all: a
		 * private module of an allowed one has the list alone) */
		memcpy(head, s, n < NAME_MAX ? n : NAME_MAX);
		head[n < NAME_MAX ? n : NAME_MAX] = '\0';
		for (size_t i = 0; i < sizeof(refusal_hints) / sizeof(refusal_hints[0]); i++)
			if (under(s, refusal_hints[i].modules) &&
			    (refusal_hints[i].modules[0] == NULL ||
			     strcmp(refusal_hints[i].modules[0], "numpy") != 0 ||
			     !pyproxy_allowed(head)))
				hint = refusal_hints[i].hint;
		/* a misspelt module: the nearest allowed name, as CPython's "Did you mean" */
		const char *near = NULL;

		if (!hint && !pyproxy_allowed(head) &&
		    !(near = pyresult_nearest(s, allowed, n_allowed)) && strchr(s, '.'))
			near = pyresult_nearest(head, allowed, n_allowed);
		msg = PyUnicode_FromFormat(
		    "Import %s %s is not allowed. Authorized imports are: "
		    "%U%s%s%s%s%s",
		    from ? "from" : "of", s, authorized_text, hint ? ". " : "", hint ? hint : "",
		    near ? ". Did you mean: '" : "", near ? near : "", near ? "'?" : "");
	}
	if (!msg)
		return NULL;
	/* ModuleNotFoundError, as for a module this machine lacks: the optional-dependency
	 * idiom (try: import x / except ModuleNotFoundError:) takes its fallback. */
	PyErr_SetImportErrorSubclass(PyExc_ModuleNotFoundError, msg, name, NULL);
	Py_DECREF(msg);
	return NULL;
}

/* ---- the proxies' __getattr__ ------------------------------------------------------------ */

static PyObject *proxy_getattr(PyObject *self, PyObject *attr);
static PyMethodDef getattr_def = {"__getattr__", proxy_getattr, METH_O,
                                  "What the module gained after its proxy was made."};

static PyObject *missing(const char *mod, const char *attr)
{
	return PyErr_Format(PyExc_AttributeError, "module '%s' has no attribute '%s'", mod, attr);
}

/* missing(), with the error's name and obj the attribute's and the proxy's, as CPython's own
 * says of a module (the traceback's "Did you mean" reads the proxy's names). */
static PyObject *missing_in(PyObject *self, const char *mod, PyObject *attr)
{
	PyObject *p = PyDict_GetItemWithError(proxies, self), *t, *v, *tb;
	const char *a = PyUnicode_AsUTF8(attr);

	if (!a)
		return NULL;
	if (!p) {
		PyErr_Clear();
		return missing(mod, a);
	}
	Py_INCREF(p);
	missing(mod, a);
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (v && PyErr_GivenExceptionMatches(v, PyExc_AttributeError) &&
	    (PyObject_SetAttrString(v, "name", attr) < 0 ||
	     PyObject_SetAttrString(v, "obj", p) < 0))
		PyErr_Clear();
	PyErr_Restore(t, v, tb);
	Py_DECREF(p);
	return NULL;
}

/* os.attr that the workspace's os does not have; for the processes and the working directory
 * code reaches for, why. */
static PyObject *os_missing(const char *attr)
{
	static const char *const processes[] = {
	    "system", "popen",  "fork",      "forkpty",     "execv",        "execve",
	    "execvp", "execl",  "execlp",    "spawnv",      "spawnl",       "spawnlp",
	    "kill",   "killpg", "startfile", "posix_spawn", "posix_spawnp", NULL,
	};

	for (const char *const *p = processes; *p; p++)
		if (strcmp(attr, *p) == 0)
			return PyErr_Format(
			    PyExc_AttributeError,
			    "module 'os' has no attribute '%s': the code runs in one "
			    "process, and no program or other process can be started",
			    attr);
	if (strcmp(attr, "chdir") == 0 || strcmp(attr, "fchdir") == 0)
		return PyErr_Format(
		    PyExc_AttributeError,
		    "module 'os' has no attribute '%s': the working directory stays "
		    "the workspace; name files from it (os.path.join('sub', name))",
		    attr);
	return missing("os", attr);
}

/* module.attr for a proxy (self: the module's name) that lacks it: an allowed submodule's
 * proxy, the proxy of the allowed module the real one holds by that name, or a public,
 * non-module attribute the real module has now (its own __getattr__ may import it:
 * scipy.optimize). New reference. */
static PyObject *proxy_getattr_exact(PyObject *self, PyObject *attr);

/* The name as an exact str: a subclass's __hash__ and __eq__ would make the real module's
 * lookup find another name than the one checked (its __builtins__). */
static PyObject *proxy_getattr(PyObject *self, PyObject *name)
{
	PyObject *attr = pylayer_exact_str(name, "attribute name"), *v;

	void *t;

	if (!attr)
		return NULL;
	/* The real module's reads here are this lookup's own (pymodguard.c). */
	t = pymodguard_trust();
	v = proxy_getattr_exact(self, attr);
	pymodguard_untrust(t);
	Py_DECREF(attr);
	return v;
}

static PyObject *proxy_getattr_exact(PyObject *self, PyObject *attr)
{
	const char *mod = PyUnicode_AsUTF8(self), *a, *why;
	PyObject *full, *real, *v, *p;

	if (!mod)
		return NULL;
	a = PyUnicode_AsUTF8(attr);
	if (!a)
		return NULL;
	/* The workspace's os: only its path submodule; what code reaches for most says why. */
	if (workspace_os && strcmp(mod, "os") == 0 && strcmp(a, "path") != 0)
		return os_missing(a);
	if ((why = left_out_why(mod, a)))
		return PyErr_Format(PyExc_AttributeError, "%s.%s is not available: %s", mod, a,
		                    why);
	/* Private names stay hidden; __version__ may be computed late (matplotlib's). */
	if (a[0] == '_' && strcmp(a, "__version__") != 0)
		return missing(mod, a);
	full = PyUnicode_FromFormat("%s.%s", mod, a);
	if (!full)
		return NULL;
	p = pyproxy_get(full, 0); /* a submodule imported since the proxy was made */
	if (p || PyErr_Occurred()) {
		Py_DECREF(full);
		return Py_XNewRef(p);
	}
	real = module_of(self);
	v = real ? PyObject_GetAttr(real, attr) : NULL;
	Py_XDECREF(real);
	if (v && PyModule_Check(v)) {
		/* A module: this package's own allowed submodule, which that may have imported, or
		 * the proxy of the allowed module it is (plt.cm is matplotlib.cm, np.char
		 * numpy.core.defchararray), as an import of it would give. Any other module is
		 * not there. */
		PyObject *its = PyModule_GetNameObject(v);
		Py_CLEAR(v);
		p = pyproxy_get(full, 0);
		if (!p && !PyErr_Occurred() && its && PyUnicode_CheckExact(its))
			p = pyproxy_get(its, 0);
		Py_XDECREF(its);
		PyErr_Clear();
		if (p) {
			Py_DECREF(full);
			return Py_NewRef(p);
		}
	}
	Py_DECREF(full);
	if (v && pydata_is_fortran(v)) {
		Py_DECREF(v);
		return PyErr_Format(
		    PyExc_AttributeError,
		    "%s.%s is not available: it is a raw Fortran wrapper, which the "
		    "sandbox does not give (the library's own functions call it)",
		    mod, a);
	}
	if (v && (why = foreign_home(v))) {
		Py_DECREF(v);
		return PyErr_Format(PyExc_AttributeError,
		                    "%s.%s is not available: it is %s's, which the sandbox refuses",
		                    mod, a, why);
	}
	if (v && (why = internal_home(mod, a, v))) {
		PyErr_Format(
		    PyExc_AttributeError,
		    "%s.%s is not available: it is pandas' compiled internal (%s), which the "
		    "sandbox gives in pandas' own namespace and pandas.api only (pandas' "
		    "functions call it)",
		    mod, a, why);
		Py_DECREF(v);
		return NULL;
	}
	if (v) {
		p = pylayer_replacement(mod, a, v);
		Py_DECREF(v);
		return p;
	}
	if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_AttributeError))
		return NULL;
	PyErr_Clear();
	return missing_in(self, mod, attr);
}

/* ---- making proxies ---------------------------------------------------------------------- */

/* The proxy or stub of the package above name (made if needed), or Py_None when name is
 * top-level. Borrowed. */
static PyObject *parent_view(PyObject *name);

/* Link a view into its package's view as the attribute its last name gives, unless the
 * package's view has something of that name (a function of the same name wins, as in the
 * real package). */
static int view_link(PyObject *name, PyObject *view)
{
	Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), -1);
	PyObject *parent, *child;
	int rc = 0;

	if (dot == -2)
		return -1;
	if (dot < 0)
		return 0;
	parent = parent_view(name);
	if (!parent)
		return -1;
	child = PyUnicode_Substring(name, dot + 1, PyUnicode_GET_LENGTH(name));
	if (!child)
		return -1;
	if (!PyDict_Contains(PyModule_GetDict(parent), child))
		rc = PyObject_SetAttr(parent, child, view);
	Py_DECREF(child);
	return rc;
}

static PyObject *stub_get(PyObject *name)
{
	PyObject *stub = PyDict_GetItemWithError(stubs, name);

	if (stub || PyErr_Occurred())
		return stub;
	stub = PyModule_NewObject(name);
	if (!stub)
		return NULL;
	if (PyDict_SetItem(stubs, name, stub) < 0 || set_add(stub) < 0 ||
	    view_link(name, stub) < 0) {
		Py_DECREF(stub);
		return NULL;
	}
	Py_DECREF(stub);
	return stub;
}

static PyObject *parent_view(PyObject *name)
{
	Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), -1);
	PyObject *pname, *view;

	if (dot == -2)
		return NULL;
	if (dot < 0)
		return Py_None;
	pname = PyUnicode_Substring(name, 0, dot);
	if (!pname)
		return NULL;
	view = pyproxy_get(pname, 0);
	if (!view && !PyErr_Occurred())
		view = stub_get(pname);
	Py_DECREF(pname);
	return view;
}

/* A new proxy of real, registered and linked. Borrowed. */
static PyObject *proxy_make(PyObject *name, PyObject *real)
{
	const char *s = PyUnicode_AsUTF8(name);
	PyObject *p, *ga;
	int rc;

	if (!s)
		return NULL;
	p = PyModule_NewObject(name);
	if (!p)
		return NULL;
	if (strcmp(s, "sys") == 0) {
		rc = fill_sys(p, real);
	} else if (strcmp(s, "gc") == 0) {
		rc = fill_gc(p, real);
	} else if (strcmp(s, "traceback") == 0) {
		/* The worker's own formatting: the real module hands out frames (walk_tb). */
		rc = pyresult_traceback_fill(p);
	} else {
		rc = workspace_os && strcmp(s, "os") == 0 ? fill_os(p, real) : fill(p, real, s);
		if (rc == 0 && !(workspace_os && strcmp(s, "os") == 0))
			rc = fill_all(p, real, name);
		ga = rc == 0 ? PyCFunction_New(&getattr_def, name) : NULL;
		rc = ga ? PyObject_SetAttrString(p, "__getattr__", ga) : -1;
		Py_XDECREF(ga);
		if (rc == 0 && strcmp(s, "warnings") == 0)
			rc = warnings_proxy_make(p, real);
	}
	if (rc < 0 || PyDict_SetItem(proxies, name, p) < 0 || set_add(p) < 0) {
		Py_DECREF(p);
		return NULL;
	}
	Py_DECREF(p);
	return view_link(name, p) < 0 ? NULL : p;
}

/* When the import of name raised ModuleNotFoundError because a package of --imports data is
 * not installed at all, say which Debian package brings it; any other exception stays. */
static void say_not_installed(const char *name)
{
	const char *pkg = pyproxy_debian_package(name), *m;
	PyObject *t, *v, *tb, *missing, *msg = NULL;
	size_t n;

	if (!pkg || !PyErr_ExceptionMatches(PyExc_ModuleNotFoundError))
		return;
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	missing = v ? PyObject_GetAttrString(v, "name") : NULL;
	m = missing && PyUnicode_Check(missing) ? PyUnicode_AsUTF8(missing) : NULL;
	n = m ? strlen(m) : 0;
	/* The package itself is absent (its top-level name), not a module inside it. */
	if (n && !strchr(m, '.') && strncmp(name, m, n) == 0 && (!name[n] || name[n] == '.'))
		msg = PyUnicode_FromFormat("%s is not installed on this machine (its administrator "
		                           "can install it: apt install %s)",
		                           m, pkg);
	if (msg) {
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		PyErr_SetImportErrorSubclass(PyExc_ModuleNotFoundError, msg, missing, NULL);
		Py_DECREF(msg);
	} else {
		PyErr_Clear();
		PyErr_Restore(t, v, tb);
	}
	Py_XDECREF(missing);
}

static PyObject *proxy_get(PyObject *name, int import);

/* The reads of real modules the import and the proxy's making do are their own
 * (pymodguard.c). */
PyObject *pyproxy_get(PyObject *name, int import)
{
	void *t = pymodguard_trust();
	PyObject *p = proxy_get(name, import);

	pymodguard_untrust(t);
	return p;
}

static PyObject *proxy_get(PyObject *name, int import)
{
	PyObject *p, *real;
	Py_ssize_t len = 0;
	const char *s;

	/* Only an exact str: a subclass's __hash__ and __eq__ would find another module in
	 * proxies and sys.modules than the one whose name is checked. */
	if (!PyUnicode_CheckExact(name)) {
		PyErr_SetString(PyExc_TypeError, "a module name must be a str");
		return NULL;
	}
	/* Every module the sandbox has is named in ASCII: another name's UTF-8 goes through the
	 * codecs (a lone surrogate's, through the 'strict' handler: V87b H1), and the name checked
	 * must be the name imported. */
	if (!PyUnicode_IS_ASCII(name)) {
		PyErr_Format(PyExc_ModuleNotFoundError, "No module named %R", name);
		return NULL;
	}
	p = PyDict_GetItemWithError(proxies, name);
	if (p || PyErr_Occurred())
		return p;
	s = PyUnicode_AsUTF8AndSize(name, &len);
	if (!s || strlen(s) != (size_t)len || !pyproxy_allowed(s)) /* (no NUL: V65a L1) */
		return NULL;
	if (made_has(s))
		return proxy_make(name, PyDict_GetItemString(made, s));
	if (import) {
		/* The real import machinery, never the caller's __import__: in a worker the
		 * supervisor serves what the zygote did not import. */
		PyObject *top = PyImport_ImportModuleLevelObject(name, NULL, NULL, NULL, 0);
		if (!top)
			say_not_installed(s);
		if (!top)
			return NULL;
		Py_DECREF(top);
	}
	real = PyImport_GetModule(name);
	if (!real)
		return NULL;
	p = PyModule_Check(real) ? proxy_make(name, real) : NULL;
	Py_DECREF(real);
	return p;
}

/* The made modules' import: name's proxy as the user's "import name as m" gives it. */
static PyObject *made_import(PyObject *self, PyObject *name)
{
	PyObject *p;

	(void)self;
	if (!PyUnicode_CheckExact(name))
		return PyErr_Format(PyExc_TypeError, "module name must be str, not %.100s",
		                    Py_TYPE(name)->tp_name);
	p = pyproxy_get(name, 1);
	if (!p)
		return PyErr_Occurred() ? NULL : pyproxy_refuse(name, 0);
	return Py_NewRef(p);
}

static PyMethodDef made_import_def = {"import_view", made_import, METH_O, NULL};

PyObject *pyproxy_made_import(void)
{
	return PyCFunction_New(&made_import_def, NULL);
}

PyObject *pyproxy_binding(PyObject *name)
{
	Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), 1);
	PyObject *top, *view;

	if (dot == -2)
		return NULL;
	if (dot < 0)
		return pyproxy_get(name, 0);
	top = PyUnicode_Substring(name, 0, dot);
	if (!top)
		return NULL;
	view = pyproxy_get(top, 0);
	if (!view && !PyErr_Occurred())
		view = PyDict_GetItemWithError(stubs, top);
	Py_DECREF(top);
	return view;
}

PyObject *pyproxy_from_stub(PyObject *name, PyObject *fromlist)
{
	PyObject *full;
	const char *s;

	if (!(PyTuple_CheckExact(fromlist) || PyList_CheckExact(fromlist)) ||
	    PySequence_Fast_GET_SIZE(fromlist) == 0)
		return NULL;
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fromlist); i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(fromlist, i), *p = NULL;

		if (!PyUnicode_CheckExact(item))
			return NULL;
		if (!(full = PyUnicode_FromFormat("%U.%U", name, item)))
			return NULL;
		if ((s = PyUnicode_AsUTF8(full)) && pyproxy_allowed(s))
			p = pyproxy_get(full, 1);
		Py_DECREF(full);
		if (!p)
			return NULL;
	}
	/* (made with the proxy of a submodule) */
	return PyDict_GetItemWithError(stubs, name);
}

PyObject *pyproxy_view_of(PyObject *dict, const char *name)
{
	PyObject *m = PyModule_New(name), *d;

	if (!m)
		return NULL;
	d = PyModule_GetDict(m);
	if (PyDict_Update(d, dict) < 0 || set_add(m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pyproxy_init(const struct zygote_config *cfg)
{
	PyObject *modules = PyImport_GetModuleDict(), *names, *key, *val, *list;
	Py_ssize_t pos = 0;
	const char **sorted;
	size_t n = 0;

	workspace_os = cfg->workspace != NULL;
	allowed = calloc(cfg->n_imports + 1, sizeof(char *));
	if (!allowed) {
		PyErr_NoMemory();
		return -1;
	}
	for (size_t i = 0; i < cfg->n_imports; i++)
		if (!(allowed[n_allowed++] = strdup(cfg->imports[i]))) {
			PyErr_NoMemory();
			return -1;
		}
	proxies = PyDict_New();
	stubs = PyDict_New();
	if (!proxies || !stubs)
		return -1;
	/* Parents before their submodules: sorted by name. */
	sorted = calloc((size_t)PyDict_GET_SIZE(modules) + 1, sizeof(char *));
	if (!sorted) {
		PyErr_NoMemory();
		return -1;
	}
	while (PyDict_Next(modules, &pos, &key, &val)) {
		const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		if (k && PyModule_Check(val) && pyproxy_allowed(k))
			sorted[n++] = k;
	}
	PyErr_Clear();
	qsort(sorted, n, sizeof(*sorted), names_cmp);
	for (size_t i = 0; i < n; i++) {
		PyObject *name = PyUnicode_FromString(sorted[i]);
		PyObject *p = name ? pyproxy_get(name, 0) : NULL;
		if (!p && !PyErr_Occurred())
			PyErr_Format(PyExc_RuntimeError, "no proxy for %U", name);
		Py_XDECREF(name);
		if (!p) {
			free((void *)sorted);
			return -1;
		}
	}
	free((void *)sorted);
	/* The sorted list quoted in refusals. */
	names = PyList_New(0);
	if (!names)
		return -1;
	for (size_t i = 0; i < n_allowed; i++) {
		PyObject *s = PyUnicode_FromString(allowed[i]);
		if (!s || PyList_Append(names, s) < 0) {
			Py_XDECREF(s);
			Py_DECREF(names);
			return -1;
		}
		Py_DECREF(s);
	}
	if (PyList_Sort(names) < 0) {
		Py_DECREF(names);
		return -1;
	}
	list = names;
	authorized_text = PyObject_Repr(list);
	Py_DECREF(names);
	return authorized_text ? 0 : -1;
}

int pyproxy_add(PyObject *name, PyObject *view)
{
	return PyDict_SetItem(proxies, name, view) < 0 ? -1 : set_add(view);
}
