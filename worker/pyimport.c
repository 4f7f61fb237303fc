/* pyimport.c - how a worker imports what the zygote did not, opening no file: extension modules
 * are mapped by the zygote (dlopen, not initialised), so a worker only runs their init; other
 * modules are asked of the supervisor while a call runs (their bytecode or source). Functions
 * return 0 / -1 with a Python exception set. */
#include "interp_internal.h"

#include <dlfcn.h>
#include <marshal.h>
#include <errno.h>
#include <string.h>

static int serving;             /* a call runs: modules may be asked for */
static PyObject *real_builtins; /* the interpreter's builtins dict (borrowed, lives forever) */
static PyObject *roots;         /* {top-level package: its directory}, outside the stdlib */
static char *stdlib_path;       /* the standard library's directory (os.__file__'s) */

/* The served modules whose code runs now (imports nest): namespace and code, borrowed. */
#define LOADING_MAX 64
static struct {
	PyObject *ns, *code;
} loading[LOADING_MAX];
static int n_loading;
static int unmarshalling; /* our own unmarshal of a served module's bytecode runs */

/* ---- what the Python side calls ------------------------------------------------------- */

/* _dlopen(path): map an extension module's file with the flags CPython uses, without running
 * its init function. True when mapped. */
static PyObject *map_extension(PyObject *self, PyObject *args)
{
	const char *path;
	int flags;

	(void)self;
	if (!PyArg_ParseTuple(args, "si", &path, &flags))
		return NULL;
	if (!dlopen(path, flags))
		Py_RETURN_FALSE; /* a missing library: importing it fails in the zygote too */
	Py_RETURN_TRUE;
}

/* _request(name): (path, code) of a pure-Python module, from the supervisor: its cached
 * bytecode when that is valid for its source (the code object), else its source (str); None
 * when it has none, or when no call is running (then nothing may be asked). */
static PyObject *module_request(PyObject *self, PyObject *arg)
{
	const char *name, *body;
	Py_ssize_t n;
	char *reply = NULL;
	size_t rlen = 0, plen, blen;
	int status = 0, rc;
	PyObject *code = NULL, *out = NULL;

	(void)self;
	if (!PyUnicode_Check(arg)) {
		PyErr_SetString(PyExc_TypeError, "module name must be str");
		return NULL;
	}
	/* Modules are named in ASCII: the UTF-8 of another name goes through the codecs, and what
	 * is asked for must be the name importlib imports. */
	if (!PyUnicode_IS_ASCII(arg))
		Py_RETURN_NONE;
	name = PyUnicode_AsUTF8AndSize(arg, &n);
	if (!name)
		return NULL;
	if (!serving || !ipc_module_name_valid(name, (size_t)n))
		Py_RETURN_NONE;
	/* The debugger: loaded in the zygote it is disarmed (pylayer.c), loaded late it would
	 * not be. */
	if (strcmp(name, "pdb") == 0 || strcmp(name, "bdb") == 0)
		return PyErr_Format(PyExc_ModuleNotFoundError, "%s is not available in the sandbox",
		                    name);
	/* scipy.odr's compiled fit keeps the code's callbacks and their arrays in one global
	 * state: a fit started from a callback of another and failing left the outer one handing
	 * the code a freed array, and it copies whatever the callbacks answer by the sizes it
	 * expects (reads past a smaller answer). */
	if (strcmp(name, "scipy.odr") == 0 || strncmp(name, "scipy.odr.", 10) == 0)
		return PyErr_Format(PyExc_ModuleNotFoundError,
		                    "%s is not available in the sandbox: scipy.optimize's "
		                    "least_squares or curve_fit fit the same models",
		                    name);
	rc = runner_request(IPC_REQ_MODULE_CODE, name, (size_t)n, &status, &reply, &rlen, NULL);
	if (rc < 0)
		return PyErr_Format(PyExc_ImportError, "%s: the supervisor did not answer (%s)",
		                    name, strerror(-rc));
	if (status == -ENOENT) {
		free(reply);
		Py_RETURN_NONE;
	}
	plen = status == 0 ? strnlen(reply, rlen) : 0;
	if (status != 0 || plen == 0 || plen + 2 > rlen) {
		free(reply);
		return PyErr_Format(PyExc_ImportError, "%s: the supervisor did not serve it (%s)",
		                    name,
		                    status == -EDQUOT  ? "this call asked for too many modules"
		                    : status == -EFBIG ? "the file is too large"
		                    : status           ? strerror(-status)
		                                       : "malformed reply");
	}
	body = reply + plen + 2;
	blen = rlen - plen - 2;
	if (reply[plen + 1] == IPC_MODULE_CODE) {
		/* No Python code runs in it: the audit hook lets this one through. */
		unmarshalling = 1;
		code = PyMarshal_ReadObjectFromString(body, (Py_ssize_t)blen);
		unmarshalling = 0;
		if (code && !PyCode_Check(code)) {
			Py_CLEAR(code);
			PyErr_Format(PyExc_ImportError, "%s: its cached bytecode is not code",
			             name);
		}
	} else {
		code = PyUnicode_DecodeUTF8(body, (Py_ssize_t)blen, "strict");
	}
	if (code)
		out = Py_BuildValue("(s#N)", reply, (Py_ssize_t)plen, code);
	free(reply);
	return out;
}

/* _exec(code, path, module): run a served module (its code object, or its source compiled
 * here) in the module's namespace (read here: a real module's __dict__ is guarded while armed)
 * with the interpreter's own builtins, as importlib does: library code, not the user's, so no
 * attribute rules and no audit event for it. */
static PyObject *module_exec(PyObject *self, PyObject *args)
{
	PyObject *src, *path, *mod, *ns, *code, *r;
	const char *text;

	(void)self;
	if (!PyArg_ParseTuple(args, "OUO!", &src, &path, &PyModule_Type, &mod))
		return NULL;
	ns = PyModule_GetDict(mod);
	if (PyDict_SetItemString(ns, "__builtins__", real_builtins) < 0)
		return NULL;
	if (n_loading == LOADING_MAX)
		return PyErr_Format(PyExc_ImportError, "imports nested too deeply");
	if (PyCode_Check(src)) {
		code = Py_NewRef(src);
	} else {
		text = PyUnicode_Check(src) ? PyUnicode_AsUTF8(src) : NULL;
		if (!text)
			return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "no source");
		code = Py_CompileStringObject(text, path, Py_file_input, NULL, -1);
		if (!code)
			return NULL;
	}
	loading[n_loading].ns = ns;
	loading[n_loading++].code = code;
	r = PyEval_EvalCode(code, ns, ns);
	n_loading--;
	Py_DECREF(code);
	if (r && pylayer_seal_importers(ns) < 0)
		Py_CLEAR(r);
	if (r)
		pymodguard_seal(mod);
	return r;
}

/* _seal(module): an extension module imported late takes the real modules' type, and the
 * finalizers of the classes it made are deferred as every other's. */
static PyObject *module_seal(PyObject *self, PyObject *mod)
{
	(void)self;
	pymodguard_seal(mod);
	pyreentry_finalizers_again();
	Py_RETURN_NONE;
}

static PyMethodDef helper_defs[] = {
    {"_seal", module_seal, METH_O, NULL},
    {"_dlopen", map_extension, METH_VARARGS, NULL},
    {"_request", module_request, METH_O, NULL},
    {"_exec", module_exec, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- the zygote's part, in Python (run unarmed, before any fork) ------------------------ */

/* Finds the package roots, maps their extension modules (and, when they have some, the
 * standard library's, which their lazy imports reach: a package of Python alone, such as yaml
 * without its libyaml binding, imports what it needs when it is imported), and puts the finder
 * before the path finder. Test directories are skipped: user code cannot import them. A module
 * whose import runs a program (a package's __main__, the interpreter's greetings and jokes,
 * IDLE) is refused to every importer, first: libraries import by names their callers give
 * (numpy's lookfor and info, matplotlib's backends, a class's __module__), and a refused module
 * imported so ran its top-level code (V73a H1, H2); those are frozen in the interpreter too. */
static const char setup_py[] =
    "import sys, os\n"
    "from _frozen_importlib import ModuleSpec\n"
    "from _frozen_importlib_external import (ExtensionFileLoader, PathFinder,\n"
    "    EXTENSION_SUFFIXES, spec_from_file_location)\n"
    "stdlib = os.path.dirname(os.__file__)\n"
    "roots = {}\n"
    "for name, m in list(sys.modules.items()):\n"
    "    path = getattr(m, '__path__', None) if '.' not in name else None\n"
    "    try:\n"
    "        d = next(iter(path)) if path else None\n"
    "    except Exception:\n"
    "        d = None\n"
    "    if isinstance(d, str) and d.startswith('/') and not (d + '/').startswith(stdlib + '/'):\n"
    "        roots[name] = d\n"
    "extensions = {}\n"
    "flags = sys.getdlopenflags()\n"
    "def ext_name(f):\n"
    "    for s in EXTENSION_SUFFIXES:\n"
    "        if f.endswith(s):\n"
    "            return f[:-len(s)]\n"
    "def map_tree(top, prefix):\n"
    "    for d, subdirs, files in os.walk(top):\n"
    "        subdirs[:] = sorted(s for s in subdirs if s not in ('tests', 'test'))\n"
    "        rel = os.path.relpath(d, top)\n"
    "        pkg = prefix + ('' if rel == '.' else '.' + rel.replace('/', '.'))\n"
    "        for f in sorted(files):\n"
    "            stem = ext_name(f)\n"
    "            full = pkg + '.' + stem if stem and pkg else stem\n"
    "            if stem and full not in sys.modules and full.replace('.', '').replace('_', '')"
    ".isalnum():\n"
    "                path = os.path.join(d, f)\n"
    "                if _dlopen(path, flags):\n"
    "                    extensions[full] = path\n"
    "for name, d in sorted(roots.items()):\n"
    "    map_tree(d, name)\n"
    "if extensions:\n"
    "    for p in sys.path:\n"
    "        if p.endswith('/lib-dynload'):\n"
    "            for f in sorted(os.listdir(p)):\n"
    "                stem = ext_name(f)\n"
    "                if stem and '.' not in stem and stem not in sys.modules and "
    "_dlopen(os.path.join(p, f), flags):\n"
    "                    extensions[stem] = os.path.join(p, f)\n"
    "class SealedExtensionLoader(ExtensionFileLoader):\n"
    "    def exec_module(self, module):\n"
    "        ExtensionFileLoader.exec_module(self, module)\n"
    "        _seal(module)\n"
    "class BrokerLoader:\n"
    "    @staticmethod\n"
    "    def create_module(spec):\n"
    "        return None\n"
    "    @staticmethod\n"
    "    def exec_module(module):\n"
    "        spec = module.__spec__\n"
    "        src, spec.loader_state = spec.loader_state, None\n"
    "        _exec(src, spec.origin, module)\n"
    "class BrokerFinder:\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    "        so = extensions.get(name)\n"
    "        if so is not None:\n"
    "            return spec_from_file_location(name, so, loader=SealedExtensionLoader(name, so))\n"
    "        found = _request(name)\n"
    "        if found is None:\n"
    "            return None\n"
    "        origin, src = found\n"
    "        pkg = origin.endswith('/__init__.py')\n"
    "        spec = ModuleSpec(name, BrokerLoader, origin=origin, loader_state=src,\n"
    "                          is_package=pkg)\n"
    "        spec.has_location = True\n"
    "        if pkg:\n"
    "            spec.submodule_search_locations = [origin.rpartition('/')[0]]\n"
    "        return spec\n"
    "    @staticmethod\n"
    "    def invalidate_caches():\n"
    "        pass\n"
    "sys.meta_path.insert(sys.meta_path.index(PathFinder), BrokerFinder)\n"
    "programs = frozenset(('this', 'antigravity', '__hello__', '__hello_alias__',\n"
    "                      '__hello_only__', '__phello__', '__phello_alias__', 'idlelib',\n"
    "                      'turtledemo'))\n"
    "class ProgramFinder:\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    "        if name.partition('.')[0] in programs or name.rpartition('.')[2] == '__main__':\n"
    "            raise ModuleNotFoundError('%s is not available in the sandbox: importing it '\n"
    "                                      'runs a program' % name, name=name)\n"
    "        return None\n"
    "    @staticmethod\n"
    "    def invalidate_caches():\n"
    "        pass\n"
    "sys.meta_path.insert(0, ProgramFinder)\n";

int pyimport_init(void)
{
	PyObject *g = NULL, *code = NULL, *r = NULL, *builtins_mod;
	int rc = -1;

	builtins_mod = PyImport_ImportModule("builtins");
	if (!builtins_mod)
		return -1;
	real_builtins = PyModule_GetDict(builtins_mod);
	Py_DECREF(builtins_mod); /* the interpreter keeps it */
	g = PyDict_New();
	if (!g || PyDict_SetItemString(g, "__builtins__", real_builtins) < 0)
		goto out;
	for (PyMethodDef *d = helper_defs; d->ml_name; d++) {
		PyObject *f = PyCFunction_New(d, NULL);
		int bad = !f || PyDict_SetItemString(g, d->ml_name, f) < 0;
		Py_XDECREF(f);
		if (bad)
			goto out;
	}
	code = Py_CompileString(setup_py, "<safepy importer>", Py_file_input);
	r = code ? PyEval_EvalCode(code, g, g) : NULL;
	if (!r)
		goto out;
	roots = PyDict_GetItemString(g, "roots");
	if (!roots || !PyDict_Check(roots)) {
		PyErr_SetString(PyExc_RuntimeError, "importer set-up lost its roots");
		goto out;
	}
	Py_INCREF(roots);
	{
		PyObject *std = PyDict_GetItemString(g, "stdlib");
		const char *p = std && PyUnicode_Check(std) ? PyUnicode_AsUTF8(std) : NULL;
		stdlib_path = p ? strdup(p) : NULL;
		PyErr_Clear();
	}
	rc = 0;
out:
	Py_XDECREF(r);
	Py_XDECREF(code);
	Py_XDECREF(g); /* the finder's functions keep it */
	return rc;
}

char *pyimport_library_source(const char *path)
{
	const char *rest = NULL, *top = NULL, *std = stdlib_path;
	char name[256], *reply = NULL;
	size_t n, len = 0, rlen = 0, plen;
	int status = 0;
	PyObject *key, *val;
	Py_ssize_t pos = 0;

	if (!serving || !path || path[0] != '/')
		return NULL;
	/* The file's dotted name, from the directory it lies beneath: a package's, else the
	 * standard library's (package directories lie outside it). */
	while (roots && !rest && PyDict_Next(roots, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key), *v = PyUnicode_AsUTF8(val);
		size_t vl = v ? strlen(v) : 0;
		if (k && v && strncmp(path, v, vl) == 0 && path[vl] == '/') {
			top = k;
			rest = path + vl + 1;
		}
	}
	PyErr_Clear();
	if (!rest && std && strncmp(path, std, strlen(std)) == 0 && path[strlen(std)] == '/')
		rest = path + strlen(std) + 1;
	n = rest ? strlen(rest) : 0;
	if (n < 3 || strcmp(rest + n - 3, ".py") != 0)
		return NULL;
	n -= 3;
	if (n == 8 && strncmp(rest, "__init__", 8) == 0)
		n = 0; /* a package's own __init__.py */
	else if (n > 9 && strncmp(rest + n - 9, "/__init__", 9) == 0)
		n -= 9;
	if (top) {
		len = strlen(top);
		if (len + 1 + n >= sizeof(name))
			return NULL;
		memcpy(name, top, len);
		if (n)
			name[len++] = '.';
	}
	if (len + n == 0 || len + n >= sizeof(name))
		return NULL;
	for (size_t i = 0; i < n; i++)
		name[len++] = rest[i] == '/' ? '.' : rest[i];
	if (!ipc_module_name_valid(name, len) ||
	    runner_request(IPC_REQ_MODULE, name, len, &status, &reply, &rlen, NULL) < 0)
		return NULL;
	/* The reply: the path of the file the supervisor served, a NUL, its text. Another file
	 * than the frame's (a module of the same name elsewhere) gives no lines. */
	plen = status == 0 ? strnlen(reply, rlen) : rlen;
	if (plen >= rlen || strcmp(reply, path) != 0) {
		free(reply);
		return NULL;
	}
	memmove(reply, reply + plen + 1, rlen - plen); /* with the reply's final NUL */
	return reply;
}

PyObject *pyimport_loading(PyObject *globals)
{
	for (int i = 0; i < n_loading; i++)
		if (loading[i].ns == globals)
			return loading[i].code;
	return NULL;
}

int pyimport_unmarshalling(void)
{
	return unmarshalling;
}

int pyimport_loading_any(void)
{
	return n_loading > 0;
}

void pyimport_serving(int on)
{
	serving = on;
}

/* The cache tag and magic number of this interpreter's bytecode files into r. 0 or -1. */
static int pyc_facts(struct ipc_roots *r)
{
	PyObject *ext = PyImport_ImportModule("_frozen_importlib_external"), *magic = NULL;
	const char *tag = PyImport_GetMagicTag();
	int rc = -1;

	if (ext)
		magic = PyObject_GetAttrString(ext, "MAGIC_NUMBER");
	if (tag && magic && PyBytes_Check(magic) && PyBytes_GET_SIZE(magic) == 4) {
		memcpy(r->magic, PyBytes_AS_STRING(magic), 4);
		r->cache_tag = strdup(tag);
		rc = r->cache_tag ? 0 : -1;
	}
	PyErr_Clear();
	Py_XDECREF(magic);
	Py_XDECREF(ext);
	return rc;
}

int pyimport_roots(struct ipc_roots *r)
{
	PyObject *key, *val;
	Py_ssize_t pos = 0, n = roots ? PyDict_GET_SIZE(roots) : 0;

	if (pyc_facts(r) < 0)
		return -1;

	r->names = calloc((size_t)n + 1, sizeof(char *));
	r->dirs = calloc((size_t)n + 1, sizeof(char *));
	if (!r->names || !r->dirs)
		return -1;
	while (roots && PyDict_Next(roots, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key), *v = PyUnicode_AsUTF8(val);
		if (!k || !v)
			return -1;
		r->names[r->n] = strdup(k);
		r->dirs[r->n] = strdup(v);
		if (!r->names[r->n++] || !r->dirs[r->n - 1])
			return -1;
	}
	return 0;
}
