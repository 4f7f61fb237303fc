/* interp.c - the restricted interpreter: CPython initialised once in the zygote (isolated,
 * no site, audit hook first), the Python layer (import allowlist with module proxies, curated
 * builtins, attribute rules checked in the bytecode and in getattr/setattr/delattr/hasattr),
 * and the per-call run that turns code into a struct run_outcome.
 * The Python layer gives friendly errors; the kernel layer (sandbox.c, policy.c) is the
 * boundary. Functions return 0 / -1 with a Python exception set unless noted. */
#include "worker_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USER_FILENAME "<code>"
#define RESULT_TMP    " safepy value" /* not an identifier: user code cannot name it */
#define RESULT_DEPTH  32
#define RESULT_NODES  100000

static const struct zygote_config *zcfg;
static int python_layer = 1;
static volatile int audit_armed;
static volatile sig_atomic_t deadline_hit;

static PyObject *real_compile;    /* builtins.compile */
static PyObject *ast_mod;         /* the ast module */
static PyObject *safe_builtins;   /* dict given to user code */
static PyObject *proxies;         /* name -> proxy module */
static PyObject *authorized_text; /* "['abc', 'array', ...]" */
static PyObject *timeout_error;   /* raised in the code by the deadline handler */
static PyObject *real_attrgetter, *real_methodcaller, *real_get_field;
static PyObject *user_globals; /* the user's namespace, created by the first run */

static int op_load_attr = -1, op_store_attr = -1, op_delete_attr = -1, op_load_method = -1,
           op_import_from = -1, op_extended_arg = -1;

/* ---- attribute rules ----------------------------------------------------------------- */

/* Dunder attributes ordinary code uses; every other dunder is refused. */
static const char *const dunder_allowed[] = {
    "__init__",
    "__new__",
    "__name__",
    "__qualname__",
    "__doc__",
    "__module__",
    "__class__",
    "__repr__",
    "__str__",
    "__format__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__len__",
    "__iter__",
    "__next__",
    "__reversed__",
    "__contains__",
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "__missing__",
    "__enter__",
    "__exit__",
    "__call__",
    "__add__",
    "__radd__",
    "__iadd__",
    "__sub__",
    "__rsub__",
    "__isub__",
    "__mul__",
    "__rmul__",
    "__imul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__pow__",
    "__rpow__",
    "__neg__",
    "__pos__",
    "__abs__",
    "__invert__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
    "__lshift__",
    "__rshift__",
    "__int__",
    "__float__",
    "__complex__",
    "__index__",
    "__round__",
    "__trunc__",
    "__floor__",
    "__ceil__",
    "__copy__",
    "__deepcopy__",
    "__post_init__",
    "__setattr__",
    "__delattr__",
    "__set_name__",
    "__init_subclass__",
    "__class_getitem__",
    "__all__",
    "__version__",
    "__annotations__",
    "__match_args__",
    "__slots__",
    "__dataclass_fields__",
    "__await__",
    "__aiter__",
    "__anext__",
    "__aenter__",
    "__aexit__",
    "__sizeof__",
    "__args__",
    "__origin__",
    NULL,
};

/* Frame, code and function internals: refused although they are not dunders. */
static const char *const internals_refused[] = {
    "gi_frame",  "gi_code",      "gi_yieldfrom",  "cr_frame",  "cr_code",  "cr_await",
    "cr_origin", "ag_frame",     "ag_code",       "ag_await",  "f_back",   "f_globals",
    "f_locals",  "f_builtins",   "f_code",        "f_trace",   "f_lasti",  "tb_frame",
    "tb_next",   "tb_lasti",     "co_code",       "co_consts", "co_names", "func_globals",
    "func_code", "func_closure", "cell_contents", NULL,
};

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* NULL when name may be used as an attribute, else the refusal's wording. */
static const char *attr_refusal(const char *name)
{
	size_t n = strlen(name);

	if (n > 4 && name[0] == '_' && name[1] == '_' && name[n - 1] == '_' && name[n - 2] == '_')
		return in_list(name, dunder_allowed) ? NULL
		                                     : "Forbidden access to dunder attribute";
	if (in_list(name, internals_refused))
		return "Forbidden access to attribute";
	return NULL;
}

/* Check a name object; raises AttributeError when refused. 0 or -1. */
static int attr_check(PyObject *name)
{
	const char *s, *why;

	if (!PyUnicode_Check(name)) {
		PyErr_SetString(PyExc_TypeError, "attribute name must be string");
		return -1;
	}
	s = PyUnicode_AsUTF8(name);
	if (!s)
		return -1;
	why = attr_refusal(s);
	if (why) {
		PyErr_Format(PyExc_AttributeError, "%s: %s", why, s);
		return -1;
	}
	return 0;
}

/* Check every attribute named in a dotted path like "a.b.c". */
static int attr_check_dotted(PyObject *path)
{
	PyObject *parts, *dot;
	int rc = 0;

	if (!PyUnicode_Check(path))
		return 0; /* the real function raises its own TypeError */
	dot = PyUnicode_FromString(".");
	if (!dot)
		return -1;
	parts = PyUnicode_Split(path, dot, -1);
	Py_DECREF(dot);
	if (!parts)
		return -1;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parts) && rc == 0; i++)
		rc = attr_check(PyList_GET_ITEM(parts, i));
	Py_DECREF(parts);
	return rc;
}

/* ---- bytecode check ------------------------------------------------------------------ */

static int code_check(PyCodeObject *co, int depth)
{
	PyObject *bytes = NULL, *names = NULL, *consts = NULL;
	const unsigned char *p;
	Py_ssize_t n;
	unsigned int ext = 0;
	int rc = -1;

	if (depth > 200) {
		PyErr_SetString(PyExc_RecursionError, "code nested too deeply");
		return -1;
	}
	bytes = PyCode_GetCode(co);
	names = PyObject_GetAttrString((PyObject *)co, "co_names");
	consts = PyObject_GetAttrString((PyObject *)co, "co_consts");
	if (!bytes || !names || !consts)
		goto out;
	p = (const unsigned char *)PyBytes_AS_STRING(bytes);
	n = PyBytes_GET_SIZE(bytes);
	for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
		int op = p[i];
		unsigned int arg = p[i + 1] | ext;

		if (op == op_extended_arg) {
			ext = arg << 8;
			continue;
		}
		ext = 0;
		if (op != op_load_attr && op != op_store_attr && op != op_delete_attr &&
		    op != op_load_method && op != op_import_from)
			continue;
#if PY_VERSION_HEX >= 0x030C0000
		if (op == op_load_attr)
			arg >>= 1;
#endif
		if ((Py_ssize_t)arg >= PyTuple_GET_SIZE(names))
			continue;
		{
			PyObject *name = PyTuple_GET_ITEM(names, arg);
			const char *s = PyUnicode_AsUTF8(name), *why;
			if (!s)
				goto out;
			why = attr_refusal(s);
			if (why) {
				PyErr_Format(PyExc_AttributeError, "%s: %s (line %d)", why, s,
				             PyCode_Addr2Line(co, (int)i));
				goto out;
			}
		}
	}
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); i++) {
		PyObject *c = PyTuple_GET_ITEM(consts, i);
		if (PyCode_Check(c) && code_check((PyCodeObject *)c, depth + 1) < 0)
			goto out;
	}
	rc = 0;
out:
	Py_XDECREF(bytes);
	Py_XDECREF(names);
	Py_XDECREF(consts);
	return rc;
}

/* ---- checked builtins ---------------------------------------------------------------- */

static PyObject *real_builtin(const char *name)
{
	PyObject *b = PyEval_GetBuiltins(); /* borrowed; the zygote's real builtins */
	PyObject *f = b ? PyDict_GetItemString(b, name) : NULL;

	if (!f)
		PyErr_Format(PyExc_RuntimeError, "builtin %s missing", name);
	return f;
}

static PyObject *checked_getattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	if (nargs < 2 || nargs > 3) {
		PyErr_SetString(PyExc_TypeError, "getattr expected 2 or 3 arguments");
		return NULL;
	}
	if (attr_check(args[1]) < 0)
		return NULL;
	if (nargs == 3) {
		PyObject *v = PyObject_GetAttr(args[0], args[1]);
		if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) {
			PyErr_Clear();
			Py_INCREF(args[2]);
			return args[2];
		}
		return v;
	}
	return PyObject_GetAttr(args[0], args[1]);
}

static PyObject *checked_hasattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *v;

	if (nargs != 2) {
		PyErr_SetString(PyExc_TypeError, "hasattr expected 2 arguments");
		return NULL;
	}
	if (attr_check(args[1]) < 0)
		return NULL;
	v = PyObject_GetAttr(args[0], args[1]);
	if (!v) {
		if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
			PyErr_Clear();
			Py_RETURN_FALSE;
		}
		return NULL;
	}
	Py_DECREF(v);
	Py_RETURN_TRUE;
}

static PyObject *checked_setattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	if (nargs != 3) {
		PyErr_SetString(PyExc_TypeError, "setattr expected 3 arguments");
		return NULL;
	}
	if (attr_check(args[1]) < 0 || PyObject_SetAttr(args[0], args[1], args[2]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *checked_delattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	if (nargs != 2) {
		PyErr_SetString(PyExc_TypeError, "delattr expected 2 arguments");
		return NULL;
	}
	if (attr_check(args[1]) < 0 || PyObject_DelAttr(args[0], args[1]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* operator.attrgetter / methodcaller read attributes in C: check the names first. */
static PyObject *checked_attrgetter(PyObject *self, PyObject *args, PyObject *kw)
{
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
		if (attr_check_dotted(PyTuple_GET_ITEM(args, i)) < 0)
			return NULL;
	return PyObject_Call(real_attrgetter, args, kw);
}

static PyObject *checked_methodcaller(PyObject *self, PyObject *args, PyObject *kw)
{
	if (PyTuple_GET_SIZE(args) > 0 && attr_check(PyTuple_GET_ITEM(args, 0)) < 0)
		return NULL;
	return PyObject_Call(real_methodcaller, args, kw);
}

/* string.Formatter.get_field returns the object a field names: check its attributes. */
static PyObject *checked_get_field(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *field;

	if (PyTuple_GET_SIZE(args) < 2) {
		PyErr_SetString(PyExc_TypeError, "get_field expected field_name");
		return NULL;
	}
	field = PyTuple_GET_ITEM(args, 1);
	if (PyUnicode_Check(field)) {
		/* "0.a[1].b": every part after a '.' is an attribute name. */
		const char *s = PyUnicode_AsUTF8(field);
		const char *p;
		if (!s)
			return NULL;
		for (p = strchr(s, '.'); p; p = strchr(p + 1, '.')) {
			size_t len = strcspn(p + 1, ".[");
			PyObject *part = PyUnicode_FromStringAndSize(p + 1, (Py_ssize_t)len);
			int rc = part ? attr_check(part) : -1;
			Py_XDECREF(part);
			if (rc < 0)
				return NULL;
		}
	}
	return PyObject_Call(real_get_field, args, kw);
}

/* __import__ for user code: only the allowlist, and only as proxies. */
static PyObject *safe_import(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"name", "globals", "locals", "fromlist", "level", NULL};
	PyObject *name, *globals = NULL, *locals = NULL, *fromlist = NULL, *proxy, *msg;
	int level = 0, from;
	const char *s;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "U|OOOi:__import__", kwlist, &name, &globals,
	                                 &locals, &fromlist, &level))
		return NULL;
	if (level != 0) {
		PyErr_SetString(PyExc_ImportError, "Relative imports are not supported");
		return NULL;
	}
	from = fromlist && PyObject_IsTrue(fromlist) == 1;
	proxy = PyDict_GetItemWithError(proxies, name);
	if (proxy) {
		if (!from) {
			/* "import a.b" binds a: return the top-level package's proxy. */
			Py_ssize_t dot =
			    PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), 1);
			if (dot > 0) {
				PyObject *top = PyUnicode_Substring(name, 0, dot);
				if (!top)
					return NULL;
				proxy = PyDict_GetItemWithError(proxies, top);
				Py_DECREF(top);
				if (!proxy)
					goto refuse;
			}
		}
		Py_INCREF(proxy);
		return proxy;
	}
	if (PyErr_Occurred())
		return NULL;
refuse:
	s = PyUnicode_AsUTF8(name);
	if (!s)
		return NULL;
	msg = PyUnicode_FromFormat("Import %s %s is not allowed. Authorized imports are: %U",
	                           from ? "from" : "of", s, authorized_text);
	if (!msg)
		return NULL;
	PyErr_SetImportError(msg, name, NULL);
	Py_DECREF(msg);
	return NULL;
}

static PyMethodDef checked_defs[] = {
    {"getattr", (PyCFunction)(void (*)(void))checked_getattr, METH_FASTCALL,
     "getattr(object, name[, default]): attribute rules apply."},
    {"hasattr", (PyCFunction)(void (*)(void))checked_hasattr, METH_FASTCALL,
     "hasattr(object, name): attribute rules apply."},
    {"setattr", (PyCFunction)(void (*)(void))checked_setattr, METH_FASTCALL,
     "setattr(object, name, value): attribute rules apply."},
    {"delattr", (PyCFunction)(void (*)(void))checked_delattr, METH_FASTCALL,
     "delattr(object, name): attribute rules apply."},
    {"__import__", (PyCFunction)(void (*)(void))safe_import, METH_VARARGS | METH_KEYWORDS,
     "Import an allowed module."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef attrgetter_def = {"attrgetter", (PyCFunction)(void (*)(void))checked_attrgetter,
                                     METH_VARARGS | METH_KEYWORDS, "operator.attrgetter, checked."};
static PyMethodDef methodcaller_def = {
    "methodcaller", (PyCFunction)(void (*)(void))checked_methodcaller, METH_VARARGS | METH_KEYWORDS,
    "operator.methodcaller, checked."};
static PyMethodDef get_field_def = {"get_field", (PyCFunction)(void (*)(void))checked_get_field,
                                    METH_VARARGS | METH_KEYWORDS,
                                    "string.Formatter.get_field, checked."};

/* ---- the audit hook ------------------------------------------------------------------ */

/* Events refused while user code runs (prefixes end with '.'). */
static const char *const audit_refused[] = {
    "open",
    "os.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "code.__new__",
    "function.__new__",
    "sys._current_frames",
    "sys._current_exceptions",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "sys.setrecursionlimit",
    "marshal.",
    "pickle.find_class",
    "builtins.input",
    "builtins.breakpoint",
    "cpython.",
    "_posixsubprocess.",
    "mmap.",
    "fcntl.",
    "resource.",
    "signal.",
    "shutil.",
    "glob.",
    "tempfile.",
    "pty.",
    "syslog.",
    "sqlite3.",
    "urllib.",
    "http.",
    "ftplib.",
    "poplib.",
    "smtplib.",
    "imaplib.",
    "nntplib.",
    "telnetlib.",
    "webbrowser.",
    "ensurepip.",
    "venv.",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "setopencodehook",
    "_thread.start_new_thread",
    "sys.unraisablehook",
    "sys.excepthook",
    NULL,
};

static int audit_hook(const char *event, PyObject *args, void *data)
{
	if (!audit_armed)
		return 0;
	/* Library helpers (namedtuple, enum, typing) ask for the caller's module name and
	 * fall back on ValueError; user code has no sys._getframe. */
	if (strcmp(event, "sys._getframe") == 0) {
		PyErr_SetString(PyExc_ValueError, "frames are not available in the sandbox");
		return -1;
	}
	/* Code that library helpers compile and run (dataclasses, namedtuple, and gadgets
	 * such as typing.ForwardRef) obeys the same attribute rules as the user's. */
	if (strcmp(event, "exec") == 0 && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0 &&
	    PyCode_Check(PyTuple_GET_ITEM(args, 0)))
		return code_check((PyCodeObject *)PyTuple_GET_ITEM(args, 0), 0);
	/* Frames reach every module's globals: libraries may read __code__ or __globals__
	 * (inspect, typing), never a frame. */
	if (strcmp(event, "object.__getattr__") == 0 && PyTuple_Check(args) &&
	    PyTuple_GET_SIZE(args) > 1 && PyUnicode_Check(PyTuple_GET_ITEM(args, 1))) {
		const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 1));
		if (name && (strcmp(name, "tb_frame") == 0 || strcmp(name, "gi_frame") == 0 ||
		             strcmp(name, "cr_frame") == 0 || strcmp(name, "ag_frame") == 0 ||
		             strcmp(name, "f_back") == 0)) {
			PyErr_Format(PyExc_PermissionError,
			             "access to %s is not allowed in the sandbox", name);
			return -1;
		}
		return 0;
	}
	for (const char *const *p = audit_refused; *p; p++) {
		size_t n = strlen(*p);
		if ((*p)[n - 1] == '.' ? strncmp(event, *p, n) == 0 : strcmp(event, *p) == 0) {
			PyErr_Format(PyExc_PermissionError, "%s is not allowed in the sandbox",
			             event);
			return -1;
		}
	}
	return 0;
}

/* ---- start-up (zygote) --------------------------------------------------------------- */

static int import_and_keep(const char *name)
{
	PyObject *m = PyImport_ImportModule(name);

	if (!m)
		return -1;
	Py_DECREF(m);
	return 0;
}

/* Lazily imported helpers and caches that would need a file in the worker. */
static int prewarm(void)
{
	static const char *const codecs[] = {
	    "encodings.ascii",
	    "encodings.latin_1",
	    "encodings.utf_8",
	    "encodings.utf_8_sig",
	    "encodings.utf_16",
	    "encodings.utf_32",
	    "encodings.cp1252",
	    "encodings.cp437",
	    "encodings.iso8859_15",
	    "encodings.idna",
	    "encodings.punycode",
	    "encodings.raw_unicode_escape",
	    "encodings.unicode_escape",
	    "encodings.hex_codec",
	    "encodings.base64_codec",
	    "encodings.rot_13",
	    NULL,
	};
	static const char *const code =
	    "import datetime, time\n"
	    "datetime.datetime.strptime('2024-01-02 03:04:05', '%Y-%m-%d %H:%M:%S')\n"
	    "time.localtime(); time.strftime('%c'); time.tzname\n"
	    "try:\n"
	    "    import hashlib; hashlib.sha256(b'x').hexdigest(); hashlib.md5(b'x').hexdigest()\n"
	    "except Exception: pass\n"
	    "try:\n"
	    "    import decimal; decimal.Decimal('1.1') + 1\n"
	    "except Exception: pass\n"
	    "'x'.encode('idna'); 'x'.encode('cp1252')\n";
	PyObject *g, *r;

	for (const char *const *c = codecs; *c; c++)
		if (import_and_keep(*c) < 0)
			PyErr_Clear(); /* a codec this build lacks is simply not offered */
	g = PyDict_New();
	if (!g)
		return -1;
	if (PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0) {
		Py_DECREF(g);
		return -1;
	}
	r = PyRun_String(code, Py_file_input, g, g);
	Py_DECREF(g);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

static int opcodes_load(void)
{
	PyObject *m = PyImport_ImportModule("opcode"), *map;
	struct {
		const char *name;
		int *slot;
	} ops[] = {
	    {"LOAD_ATTR", &op_load_attr},     {"STORE_ATTR", &op_store_attr},
	    {"DELETE_ATTR", &op_delete_attr}, {"LOAD_METHOD", &op_load_method},
	    {"IMPORT_FROM", &op_import_from}, {"EXTENDED_ARG", &op_extended_arg},
	};

	if (!m)
		return -1;
	map = PyObject_GetAttrString(m, "opmap");
	Py_DECREF(m);
	if (!map)
		return -1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		PyObject *v = PyDict_GetItemString(map, ops[i].name);
		if (v)
			*ops[i].slot = (int)PyLong_AsLong(v);
	}
	Py_DECREF(map);
	if (op_load_attr < 0 || op_store_attr < 0 || op_delete_attr < 0 || op_import_from < 0 ||
	    op_extended_arg < 0) {
		PyErr_SetString(PyExc_RuntimeError, "opcode table incomplete");
		return -1;
	}
	return 0;
}

/* Is name (a dotted module name) offered to user code? */
static int module_allowed(const char *name)
{
	size_t n = strcspn(name, ".");

	if (strstr(name, "._") || name[0] == '_')
		return 0;
	for (size_t i = 0; i < zcfg->n_imports; i++) {
		const char *a = zcfg->imports[i];
		if (strlen(a) == n && strncmp(a, name, n) == 0)
			return 1;
		if (strcmp(a, name) == 0)
			return 1;
	}
	return 0;
}

/* sys as user code sees it: output streams and facts, nothing that reaches modules,
 * frames or interpreter settings. */
static int proxy_fill_sys(PyObject *proxy, PyObject *sys)
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
	    "getsizeof",
	    "getdefaultencoding",
	    "exit",
	    "intern",
	    NULL,
	};
	PyObject *argv;

	for (const char *const *k = keep; *k; k++) {
		PyObject *v = PyObject_GetAttrString(sys, *k);
		if (!v)
			return -1;
		if (PyModule_AddObjectRef(proxy, *k, v) < 0) {
			Py_DECREF(v);
			return -1;
		}
		Py_DECREF(v);
	}
	argv = PyList_New(0);
	if (!argv || PyModule_AddObject(proxy, "argv", argv) < 0) {
		Py_XDECREF(argv);
		return -1;
	}
	if (PyModule_AddObjectRef(proxy, "stdout", capture_stream(CAPTURE_STDOUT)) < 0 ||
	    PyModule_AddObjectRef(proxy, "stderr", capture_stream(CAPTURE_STDERR)) < 0)
		return -1;
	return 0;
}

/* Copy the public, non-module attributes of a real module into its proxy. */
static int proxy_fill(PyObject *proxy, PyObject *real, const char *name)
{
	PyObject *dict = PyModule_GetDict(real), *key, *val;
	Py_ssize_t pos = 0;

	while (PyDict_Next(dict, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key);
		PyObject *put = val, *made = NULL;
		if (!k)
			return -1;
		if (k[0] == '_' && strcmp(k, "__doc__") != 0 && strcmp(k, "__all__") != 0 &&
		    strcmp(k, "__version__") != 0)
			continue;
		if (PyModule_Check(val)) {
			/* No module-valued attributes: statistics.sys and random._os simply do
			 * not exist; submodules are imported by name (from json import decoder
			 * or import collections.abc). */
			continue;
		} else if (strcmp(name, "operator") == 0 && strcmp(k, "attrgetter") == 0) {
			made = put = PyCFunction_New(&attrgetter_def, NULL);
		} else if (strcmp(name, "operator") == 0 && strcmp(k, "methodcaller") == 0) {
			made = put = PyCFunction_New(&methodcaller_def, NULL);
		} else if (strcmp(name, "string") == 0 && strcmp(k, "Formatter") == 0) {
			PyObject *fn = PyCFunction_New(&get_field_def, NULL);
			PyObject *meth = fn ? PyInstanceMethod_New(fn) : NULL;
			Py_XDECREF(fn);
			real_get_field = PyObject_GetAttrString(val, "get_field");
			made = put = (meth && real_get_field)
			                 ? PyObject_CallFunction(
			                       (PyObject *)&PyType_Type, "s(O){sOss}", "Formatter",
			                       val, "get_field", meth, "__module__", "string")
			                 : NULL;
			Py_XDECREF(meth);
		}
		if (!put)
			return -1;
		if (PyObject_SetAttr(proxy, key, put) < 0) {
			Py_XDECREF(made);
			return -1;
		}
		Py_XDECREF(made);
	}
	return 0;
}

static int proxies_build(void)
{
	PyObject *modules = PyImport_GetModuleDict(), *key, *val, *names, *list;
	Py_ssize_t pos = 0;

	proxies = PyDict_New();
	if (!proxies)
		return -1;
	/* First every proxy object, so module-valued attributes can point at proxies. */
	while (PyDict_Next(modules, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key);
		PyObject *p;
		if (!k)
			return -1;
		if (!PyModule_Check(val) || !module_allowed(k))
			continue;
		p = PyModule_NewObject(key);
		if (!p || PyDict_SetItem(proxies, key, p) < 0) {
			Py_XDECREF(p);
			return -1;
		}
		Py_DECREF(p);
	}
	pos = 0;
	while (PyDict_Next(proxies, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key);
		PyObject *real = PyDict_GetItem(modules, key);
		if (!k || !real)
			return -1;
		if (strcmp(k, "sys") == 0 ? proxy_fill_sys(val, real) < 0
		                          : proxy_fill(val, real, k) < 0)
			return -1;
	}
	/* The sorted list quoted in refusals. */
	names = PyList_New(0);
	if (!names)
		return -1;
	for (size_t i = 0; i < zcfg->n_imports; i++) {
		PyObject *s = PyUnicode_FromString(zcfg->imports[i]);
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

static int builtins_build(void)
{
	static const char *const removed[] = {
	    "open",    "eval",       "exec",     "compile",     "input",    "breakpoint", "globals",
	    "locals",  "vars",       "help",     "exit",        "quit",     "copyright",  "credits",
	    "license", "__loader__", "__spec__", "__package__", "__name__", "__doc__",    NULL,
	};
	PyObject *real = PyEval_GetBuiltins();

	safe_builtins = PyDict_Copy(real);
	if (!safe_builtins)
		return -1;
	for (const char *const *r = removed; *r; r++)
		if (PyDict_GetItemString(safe_builtins, *r) &&
		    PyDict_DelItemString(safe_builtins, *r) < 0)
			return -1;
	for (PyMethodDef *d = checked_defs; d->ml_name; d++) {
		PyObject *f = PyCFunction_New(d, NULL);
		if (!f || PyDict_SetItemString(safe_builtins, d->ml_name, f) < 0) {
			Py_XDECREF(f);
			return -1;
		}
		Py_DECREF(f);
	}
	return 0;
}

/* SIGUSR1 (the supervisor's deadline) and SIGXCPU (the CPU soft limit) raise TimeoutError in
 * the running code, so what it printed so far comes back; a hard kill follows if it does not
 * end. */
static PyObject *deadline_handler(PyObject *self, PyObject *args)
{
	int sig = 0;

	if (PyTuple_GET_SIZE(args) > 0)
		sig = (int)PyLong_AsLong(PyTuple_GET_ITEM(args, 0));
	deadline_hit = sig ? sig : 1;
	PyErr_SetString(timeout_error, sig == SIGXCPU ? "CPU time limit reached"
	                                              : "wall-clock time limit reached");
	return NULL;
}

static PyMethodDef deadline_def = {"_deadline", deadline_handler, METH_VARARGS,
                                   "Raise the timeout in the running code."};

static int signals_setup(void)
{
	PyObject *signal = PyImport_ImportModule("signal"), *h, *r;

	if (!signal)
		return -1;
	h = PyCFunction_New(&deadline_def, NULL);
	if (!h) {
		Py_DECREF(signal);
		return -1;
	}
	r = PyObject_CallMethod(signal, "signal", "iO", SIGUSR1, h);
	Py_XDECREF(r);
	if (r) {
		r = PyObject_CallMethod(signal, "signal", "iO", SIGXCPU, h);
		Py_XDECREF(r);
	}
	Py_DECREF(h);
	Py_DECREF(signal);
	if (!r)
		return -1;
	timeout_error = PyExc_TimeoutError;
	return 0;
}

static int add_site_packages(void)
{
	PyObject *site = PyImport_ImportModule("site"), *dirs, *path;
	int rc = -1;

	if (!site)
		return -1;
	dirs = PyObject_CallMethod(site, "getsitepackages", NULL);
	path = PySys_GetObject("path"); /* borrowed */
	if (dirs && path) {
		rc = 0;
		for (Py_ssize_t i = 0; i < PyList_Size(dirs) && rc == 0; i++)
			rc = PyList_Append(path, PyList_GET_ITEM(dirs, i));
	}
	Py_XDECREF(dirs);
	Py_DECREF(site);
	return rc;
}

static void report_python_error(const char *what)
{
	fprintf(stderr, "safepy zygote: %s failed:\n", what);
	PyErr_Print();
}

int interp_init(const struct zygote_config *cfg)
{
	PyConfig config;
	PyStatus st;
	PyObject *sys;

	zcfg = cfg;
	python_layer = !cfg->unsafe_no_python_layer;
	/* The hook comes first, so it sees every event of the interpreter's life. */
	if (python_layer && PySys_AddAuditHook(audit_hook, NULL) < 0) {
		fprintf(stderr, "safepy zygote: PySys_AddAuditHook failed\n");
		return -1;
	}
	PyConfig_InitIsolatedConfig(&config);
	config.site_import = 0;
	config.install_signal_handlers = 0;
	config.write_bytecode = 0;
	config.user_site_directory = 0;
	config.buffered_stdio = 0;
	st = PyConfig_SetBytesString(&config, &config.program_name, "python3");
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st)) {
		fprintf(stderr, "safepy zygote: Python did not start: %s\n",
		        st.err_msg ? st.err_msg : "unknown error");
		return -1;
	}
	if (add_site_packages() < 0)
		PyErr_Clear(); /* extra modules then come only from the standard library */
	for (size_t i = 0; i < cfg->n_imports; i++) {
		if (strcmp(cfg->imports[i], "sys") == 0)
			continue;
		if (import_and_keep(cfg->imports[i]) < 0) {
			fprintf(stderr, "safepy zygote: cannot import allowed module '%s':\n",
			        cfg->imports[i]);
			PyErr_Print();
			return -1;
		}
	}
	if (prewarm() < 0) {
		report_python_error("pre-warming");
		return -1;
	}
	real_compile = real_builtin("compile");
	ast_mod = PyImport_ImportModule("ast");
	if (!real_compile || !ast_mod || opcodes_load() < 0) {
		report_python_error("loading the compiler");
		return -1;
	}
	Py_INCREF(real_compile);
	if (capture_init(cfg->max_output, (uint64_t)cfg->max_output * 1024) < 0 ||
	    signals_setup() < 0) {
		report_python_error("setting up output capture");
		return -1;
	}
	sys = PyImport_ImportModule("sys");
	if (!sys || PyObject_SetAttrString(sys, "stdout", capture_stream(CAPTURE_STDOUT)) < 0 ||
	    PyObject_SetAttrString(sys, "stderr", capture_stream(CAPTURE_STDERR)) < 0) {
		report_python_error("redirecting sys.stdout");
		return -1;
	}
	Py_DECREF(sys);
	if (python_layer) {
		PyObject *op = PyImport_ImportModule("operator");
		if (op) {
			real_attrgetter = PyObject_GetAttrString(op, "attrgetter");
			real_methodcaller = PyObject_GetAttrString(op, "methodcaller");
			Py_DECREF(op);
		}
		if (!real_attrgetter || !real_methodcaller || builtins_build() < 0 ||
		    proxies_build() < 0) {
			report_python_error("building the Python layer");
			return -1;
		}
	}
	return 0;
}

/* ---- turning values into text and JSON ------------------------------------------------ */

static char *utf8_dup(PyObject *s)
{
	PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
	char *out;

	if (!b)
		return NULL;
	out = strndup(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	Py_DECREF(b);
	return out;
}

/* Keep at most max bytes of s (head and tail, cut on characters). Takes ownership. */
static char *text_bound(char *s, size_t max, int *truncated)
{
	size_t n = s ? strlen(s) : 0, head, tail;
	char marker[80], *out;
	int m;

	if (n <= max)
		return s;
	head = max / 2;
	while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
		head--;
	tail = n - max / 2;
	while (tail < n && ((unsigned char)s[tail] & 0xC0) == 0x80)
		tail++;
	m = snprintf(marker, sizeof(marker), "\n... [%zu bytes cut] ...\n", tail - head);
	out = malloc(head + (size_t)m + (n - tail) + 1);
	if (!out)
		return s;
	memcpy(out, s, head);
	memcpy(out + head, marker, (size_t)m);
	memcpy(out + head + (size_t)m, s + tail, n - tail + 1);
	free(s);
	*truncated = 1;
	return out;
}

/* Exact-type conversion: calls no user code. Returns 0 and *out (NULL = null), or -1 when
 * the value has no natural JSON form. */
static int to_json(PyObject *v, int depth, size_t *nodes, json_object **out)
{
	if (++*nodes > RESULT_NODES || depth > RESULT_DEPTH)
		return -1;
	if (v == Py_None) {
		*out = NULL;
		return 0;
	}
	if (PyBool_Check(v)) {
		*out = json_object_new_boolean(v == Py_True);
		return *out ? 0 : -1;
	}
	if (PyLong_CheckExact(v)) {
		int overflow = 0;
		long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
		if (overflow || (x == -1 && PyErr_Occurred())) {
			PyErr_Clear();
			return -1;
		}
		*out = json_object_new_int64(x);
		return *out ? 0 : -1;
	}
	if (PyFloat_CheckExact(v)) {
		double d = PyFloat_AS_DOUBLE(v);
		if (!isfinite(d))
			return -1;
		*out = json_object_new_double(d);
		return *out ? 0 : -1;
	}
	if (PyUnicode_CheckExact(v)) {
		Py_ssize_t n;
		const char *s = PyUnicode_AsUTF8AndSize(v, &n);
		if (!s) {
			PyErr_Clear();
			return -1;
		}
		*out = json_object_new_string_len(s, (int)n);
		return *out ? 0 : -1;
	}
	if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
		PyObject *seq = v;
		Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
		json_object *arr = json_object_new_array_ext((int)n);
		if (!arr)
			return -1;
		for (Py_ssize_t i = 0; i < n && i < PySequence_Fast_GET_SIZE(seq); i++) {
			json_object *e = NULL;
			if (to_json(PySequence_Fast_GET_ITEM(seq, i), depth + 1, nodes, &e) < 0 ||
			    json_object_array_add(arr, e) < 0) {
				json_object_put(e);
				json_object_put(arr);
				return -1;
			}
		}
		*out = arr;
		return 0;
	}
	if (PyDict_CheckExact(v)) {
		json_object *obj = json_object_new_object();
		PyObject *k, *x;
		Py_ssize_t pos = 0;
		if (!obj)
			return -1;
		while (PyDict_Next(v, &pos, &k, &x)) {
			json_object *e = NULL;
			Py_ssize_t klen = 0;
			const char *ks =
			    PyUnicode_CheckExact(k) ? PyUnicode_AsUTF8AndSize(k, &klen) : NULL;
			if (!ks || strlen(ks) != (size_t)klen ||
			    to_json(x, depth + 1, nodes, &e) < 0 ||
			    json_object_object_add(obj, ks, e) < 0) {
				PyErr_Clear();
				json_object_put(e);
				json_object_put(obj);
				return -1;
			}
		}
		*out = obj;
		return 0;
	}
	return -1;
}

/* ---- tracebacks (formatted in C: no user code, no audit events, no files) -------------- */

/* Line lineno (1-based) of the user's source, without its newline. */
static void source_line(const char *src, long lineno, struct strbuf *b)
{
	const char *p = src, *e;

	for (long i = 1; i < lineno && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	if (e > p && e[-1] == '\r')
		e--;
	sb_str(b, "    ");
	sb_add(b, p, (size_t)(e - p));
	sb_str(b, "\n");
}

static char *type_name(PyObject *type)
{
	PyObject *mod = NULL, *qual = PyType_GetQualName((PyTypeObject *)type);
	PyObject *dict = ((PyTypeObject *)type)->tp_dict;
	char *out = NULL;
	const char *q;

	if (!qual) {
		PyErr_Clear();
		return strdup(((PyTypeObject *)type)->tp_name);
	}
	q = PyUnicode_AsUTF8(qual);
	if (dict)
		mod = PyDict_GetItemString(dict, "__module__");
	if (q && mod && PyUnicode_Check(mod)) {
		const char *m = PyUnicode_AsUTF8(mod);
		if (m && strcmp(m, "builtins") != 0 && strcmp(m, "__main__") != 0) {
			if (asprintf(&out, "%s.%s", m, q) < 0)
				out = NULL;
		}
	}
	if (!out && q)
		out = strdup(q);
	Py_DECREF(qual);
	PyErr_Clear();
	return out;
}

/* str(exc), under the sandbox: the user's __str__ may run. */
static char *exc_message(PyObject *exc)
{
	PyObject *s = PyObject_Str(exc);
	char *out;

	if (!s) {
		PyErr_Clear();
		return strdup("<str() of the exception failed>");
	}
	out = utf8_dup(s);
	Py_DECREF(s);
	PyErr_Clear();
	return out ? out : strdup("");
}

static void format_one(PyObject *exc, const char *src, const char *msg, struct strbuf *b)
{
	PyObject *tb = PyException_GetTraceback(exc);
	char *tn = type_name((PyObject *)Py_TYPE(exc));

	if (tb) {
		sb_str(b, "Traceback (most recent call last):\n");
		for (PyTracebackObject *t = (PyTracebackObject *)tb; t; t = t->tb_next) {
			PyCodeObject *co = PyFrame_GetCode(t->tb_frame);
			PyObject *lno = PyObject_GetAttrString((PyObject *)t, "tb_lineno");
			long lineno = lno ? PyLong_AsLong(lno) : -1;
			const char *file = PyUnicode_AsUTF8(co->co_filename);
			const char *name = PyUnicode_AsUTF8(co->co_name);
			Py_XDECREF(lno);
			PyErr_Clear();
			sb_printf(b, "  File \"%s\", line %ld, in %s\n", file ? file : "?", lineno,
			          name ? name : "?");
			if (file && strcmp(file, USER_FILENAME) == 0)
				source_line(src, lineno, b);
			Py_DECREF(co);
		}
		Py_DECREF(tb);
	}
	if (PyErr_GivenExceptionMatches(exc, PyExc_SyntaxError)) {
		PySyntaxErrorObject *se = (PySyntaxErrorObject *)exc;
		long lineno =
		    se->lineno && PyLong_Check(se->lineno) ? PyLong_AsLong(se->lineno) : 0;
		long offset =
		    se->offset && PyLong_Check(se->offset) ? PyLong_AsLong(se->offset) : 0;
		sb_printf(b, "  File \"%s\", line %ld\n", USER_FILENAME, lineno);
		if (se->text && PyUnicode_Check(se->text)) {
			const char *t = PyUnicode_AsUTF8(se->text);
			size_t lead = t ? strspn(t, " \t") : 0;
			if (t) {
				size_t len = strcspn(t + lead, "\r\n");
				sb_str(b, "    ");
				sb_add(b, t + lead, len);
				sb_str(b, "\n    ");
				for (long i = 1; i < offset - (long)lead && i < 4096; i++)
					sb_str(b, " ");
				sb_str(b, "^\n");
			}
		}
		PyErr_Clear();
		if (se->msg && PyUnicode_Check(se->msg)) {
			char *m = utf8_dup(se->msg);
			sb_printf(b, "%s: %s\n", tn ? tn : "SyntaxError", m ? m : "");
			free(m);
			free(tn);
			return;
		}
	}
	if (msg && *msg)
		sb_printf(b, "%s: %s\n", tn ? tn : "Exception", msg);
	else
		sb_printf(b, "%s\n", tn ? tn : "Exception");
	free(tn);
}

/* The whole traceback, with chained exceptions first as CPython prints them. */
static void format_chain(PyObject *exc, const char *src, const char *msg, int depth,
                         struct strbuf *b)
{
	PyObject *cause = PyException_GetCause(exc);
	PyObject *ctx = PyException_GetContext(exc);

	if (depth < 8) {
		if (cause && PyExceptionInstance_Check(cause)) {
			char *m = exc_message(cause);
			format_chain(cause, src, m, depth + 1, b);
			free(m);
			sb_str(b, "\nThe above exception was the direct cause of the following "
			          "exception:\n\n");
		} else if (ctx && PyExceptionInstance_Check(ctx) &&
		           !((PyBaseExceptionObject *)exc)->suppress_context) {
			char *m = exc_message(ctx);
			format_chain(ctx, src, m, depth + 1, b);
			free(m);
			sb_str(b, "\nDuring handling of the above exception, another exception "
			          "occurred:\n\n");
		}
	}
	Py_XDECREF(cause);
	Py_XDECREF(ctx);
	format_one(exc, src, msg, b);
}

/* The raised exception, normalised, with its traceback attached; clears the indicator. */
static PyObject *exception_take(void)
{
	PyObject *type, *val, *tb;

	PyErr_Fetch(&type, &val, &tb);
	if (!type)
		return NULL;
	PyErr_NormalizeException(&type, &val, &tb);
	if (tb && val)
		PyException_SetTraceback(val, tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	return val;
}

/* ---- running the code ----------------------------------------------------------------- */

struct program {
	PyObject *body;      /* code object: every statement but a value-giving last one */
	PyObject *last_expr; /* eval-mode code of the last expression or assigned value */
	PyObject *assign;    /* code that binds the targets from RESULT_TMP */
	PyObject *aug_name;  /* name whose value is the result (x += 1) */
};

static void program_clear(struct program *p)
{
	Py_CLEAR(p->body);
	Py_CLEAR(p->last_expr);
	Py_CLEAR(p->assign);
	Py_CLEAR(p->aug_name);
}

static PyObject *compile_node(PyObject *node, const char *mode)
{
	PyObject *code =
	    PyObject_CallFunction(real_compile, "Ossii", node, USER_FILENAME, mode, 0, 1);

	if (code && python_layer && code_check((PyCodeObject *)code, 0) < 0)
		Py_CLEAR(code);
	return code;
}

static int is_ast(PyObject *node, const char *cls)
{
	PyObject *t = PyObject_GetAttrString(ast_mod, cls);
	int r = t ? PyObject_IsInstance(node, t) : -1;

	Py_XDECREF(t);
	return r;
}

/* __import__ must stay in the builtins for import statements; a name load of it in user
 * code becomes a name that does not exist, so it raises NameError at run time. */
static int hide_import_name(PyObject *tree)
{
	PyObject *walk = PyObject_CallMethod(ast_mod, "walk", "O", tree), *it, *node;
	int rc = 0;

	if (!walk)
		return -1;
	it = PyObject_GetIter(walk);
	Py_DECREF(walk);
	if (!it)
		return -1;
	while (rc == 0 && (node = PyIter_Next(it))) {
		if (is_ast(node, "Name") == 1) {
			PyObject *id = PyObject_GetAttrString(node, "id");
			if (id && PyUnicode_CompareWithASCIIString(id, "__import__") == 0) {
				PyObject *hidden =
				    PyUnicode_FromString("__import__ (not available)");
				rc = hidden ? PyObject_SetAttrString(node, "id", hidden) : -1;
				Py_XDECREF(hidden);
			}
			Py_XDECREF(id);
		}
		Py_DECREF(node);
	}
	Py_DECREF(it);
	return rc < 0 || PyErr_Occurred() ? -1 : 0;
}

/* Parse, split off the last statement when it gives the result, compile, check. */
static int program_build(const char *src, struct program *p)
{
	PyCompilerFlags flags = {PyCF_ONLY_AST, PY_MINOR_VERSION};
	PyObject *tree, *body = NULL, *last = NULL, *value = NULL, *targets = NULL;
	Py_ssize_t n;
	int rc = -1, kind = 0;

	tree = Py_CompileStringExFlags(src, USER_FILENAME, Py_file_input, &flags, -1);
	if (!tree)
		return -1;
	if (python_layer && strstr(src, "__import__") && hide_import_name(tree) < 0)
		goto out;
	body = PyObject_GetAttrString(tree, "body");
	if (!body || !PyList_Check(body))
		goto out;
	n = PyList_GET_SIZE(body);
	if (n > 0) {
		last = PyList_GET_ITEM(body, n - 1);
		Py_INCREF(last);
		if (is_ast(last, "Expr") == 1) {
			kind = 1;
		} else if (is_ast(last, "Assign") == 1) {
			kind = 2;
			targets = PyObject_GetAttrString(last, "targets");
		} else if (is_ast(last, "AnnAssign") == 1) {
			PyObject *v = PyObject_GetAttrString(last, "value");
			if (v && v != Py_None) {
				PyObject *t = PyObject_GetAttrString(last, "target");
				kind = 2;
				targets = t ? Py_BuildValue("[O]", t) : NULL;
				Py_XDECREF(t);
			}
			Py_XDECREF(v);
		} else if (is_ast(last, "AugAssign") == 1) {
			PyObject *t = PyObject_GetAttrString(last, "target");
			if (t && is_ast(t, "Name") == 1)
				p->aug_name = PyObject_GetAttrString(t, "id");
			Py_XDECREF(t);
		}
		if (PyErr_Occurred())
			goto out;
	}
	if (kind) {
		PyObject *expr;
		value = PyObject_GetAttrString(last, "value");
		if (!value || (kind == 2 && !targets) || PySequence_DelItem(body, n - 1) < 0)
			goto out;
		expr = PyObject_CallMethod(ast_mod, "Expression", "O", value);
		if (!expr)
			goto out;
		p->last_expr = compile_node(expr, "eval");
		Py_DECREF(expr);
		if (!p->last_expr)
			goto out;
	}
	if (kind == 2) {
		PyObject *load = PyObject_CallMethod(ast_mod, "Load", NULL);
		PyObject *name =
		    load ? PyObject_CallMethod(ast_mod, "Name", "sO", RESULT_TMP, load) : NULL;
		PyObject *assign =
		    name ? PyObject_CallMethod(ast_mod, "Assign", "OO", targets, name) : NULL;
		PyObject *stmts = assign ? Py_BuildValue("[O]", assign) : NULL;
		PyObject *ignores = PyList_New(0);
		PyObject *mod = stmts && ignores
		                    ? PyObject_CallMethod(ast_mod, "Module", "OO", stmts, ignores)
		                    : NULL;
		PyObject *r =
		    mod ? PyObject_CallMethod(ast_mod, "copy_location", "OO", assign, last) : NULL;
		PyObject *r2 =
		    r ? PyObject_CallMethod(ast_mod, "fix_missing_locations", "O", mod) : NULL;
		if (r2)
			p->assign = compile_node(mod, "exec");
		Py_XDECREF(load);
		Py_XDECREF(name);
		Py_XDECREF(assign);
		Py_XDECREF(stmts);
		Py_XDECREF(ignores);
		Py_XDECREF(mod);
		Py_XDECREF(r);
		Py_XDECREF(r2);
		if (!p->assign)
			goto out;
	}
	p->body = compile_node(tree, "exec");
	if (p->body)
		rc = 0;
out:
	Py_XDECREF(tree);
	Py_XDECREF(body);
	Py_XDECREF(last);
	Py_XDECREF(value);
	Py_XDECREF(targets);
	if (rc < 0)
		program_clear(p);
	return rc;
}

static PyObject *globals_new(void)
{
	PyObject *g = PyDict_New();

	if (!g)
		return NULL;
	if (PyDict_SetItemString(g, "__builtins__",
	                         python_layer ? safe_builtins : PyEval_GetBuiltins()) < 0 ||
	    PyDict_SetItemString(g, "__name__", PyUnicode_FromString("__main__")) < 0 ||
	    PyDict_SetItemString(g, "__doc__", Py_None) < 0) {
		Py_DECREF(g);
		return NULL;
	}
	return g;
}

/* Run the program; returns the last value (new ref, may be None) or NULL with an error. */
static PyObject *program_run(struct program *p, PyObject *g)
{
	PyObject *r, *value = NULL;

	r = PyEval_EvalCode(p->body, g, g);
	if (!r)
		return NULL;
	Py_DECREF(r);
	if (p->last_expr) {
		value = PyEval_EvalCode(p->last_expr, g, g);
		if (!value)
			return NULL;
	}
	if (p->assign) {
		if (PyDict_SetItemString(g, RESULT_TMP, value) < 0) {
			Py_DECREF(value);
			return NULL;
		}
		r = PyEval_EvalCode(p->assign, g, g);
		PyDict_DelItemString(g, RESULT_TMP);
		if (!r) {
			Py_DECREF(value);
			return NULL;
		}
		Py_DECREF(r);
	}
	if (p->aug_name) {
		value = PyDict_GetItemWithError(g, p->aug_name);
		if (!value)
			return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
		Py_INCREF(value);
	}
	return value ? value : Py_NewRef(Py_None);
}

static void outcome_error(struct run_outcome *out, PyObject *exc, const char *src)
{
	struct strbuf tb = {0};
	char *msg = exc_message(exc), *tb_text;
	int trunc = 0;

	out->error_type = type_name((PyObject *)Py_TYPE(exc));
	/* Frames are walked with the hook disarmed: this is our code, not the user's. */
	audit_armed = 0;
	format_chain(exc, src, msg, 0, &tb);
	out->error_message = text_bound(msg, zcfg->max_result, &trunc);
	tb_text = sb_take(&tb);
	out->error_traceback = text_bound(tb_text ? tb_text : strdup(""), zcfg->max_result, &trunc);
	if (trunc)
		out->truncated = 1;
}

PyObject *interp_fork_save(void)
{
	PyObject *random = PyImport_ImportModule("random"), *state = NULL;

	if (random) {
		state = PyObject_CallMethod(random, "getstate", NULL);
		Py_DECREF(random);
	}
	PyErr_Clear();
	return state;
}

void interp_fork_restore(PyObject *saved)
{
	PyObject *random, *r = NULL;

	if (!saved)
		return;
	/* A session continues the generator's sequence, as a REPL would; fresh workers from the
	 * zygote are reseeded by PyOS_AfterFork_Child. */
	random = PyImport_ImportModule("random");
	if (random) {
		r = PyObject_CallMethod(random, "setstate", "(O)", saved);
		Py_DECREF(random);
	}
	Py_XDECREF(r);
	Py_DECREF(saved);
	PyErr_Clear();
}

/* Touch, in a fresh worker, the pages a call touches (compiler, evaluator, result
 * encoding), so their copy-on-write faults happen before the code arrives rather than on
 * the caller's clock. Leaves no state behind: a scratch namespace, no output. */
void interp_warm_up(void)
{
	static const char *const snippet = "def _f(n):\n    return [i * 2 for i in range(n)]\n"
	                                   "_x = {'a': _f(3), 'b': 'text'}\n_x\n";
	struct program prog = {0};
	PyObject *g = globals_new(), *v = NULL;

	if (g && program_build(snippet, &prog) == 0)
		v = program_run(&prog, g);
	if (v) {
		PyObject *r = PyObject_Repr(v);
		json_object *j = NULL;
		size_t nodes = 0;
		if (to_json(v, 0, &nodes, &j) == 0)
			json_object_put(j);
		Py_XDECREF(r);
	}
	PyErr_Clear();
	Py_XDECREF(v);
	Py_XDECREF(g);
	program_clear(&prog);
}

void interp_run(const char *code, size_t len, struct run_outcome *out)
{
	struct program prog = {0};
	PyObject *g = NULL, *value = NULL, *exc = NULL;
	void *reserve = malloc(1 << 20); /* freed on MemoryError so reporting can proceed */
	int trunc = 0;

	(void)len;
	if (reserve)
		memset(reserve, 0, 1 << 20);
	capture_reset();
	deadline_hit = 0;
	/* One namespace per process, kept across calls: a session's state. */
	if (!user_globals)
		user_globals = globals_new();
	g = user_globals;
	Py_XINCREF(g);
	audit_armed = python_layer;
	if (g && program_build(code, &prog) == 0)
		value = program_run(&prog, g);
	if (!value) {
		exc = exception_take();
		if (exc && PyErr_GivenExceptionMatches(exc, PyExc_MemoryError)) {
			free(reserve);
			reserve = NULL;
		}
	} else if (value != Py_None) {
		PyObject *r = PyObject_Repr(value);
		size_t nodes = 0;
		if (r) {
			out->result_repr = text_bound(utf8_dup(r), zcfg->max_result, &trunc);
			Py_DECREF(r);
		} else {
			out->result_repr = strdup("<repr() failed>");
			exc = exception_take();
		}
		if (!exc && to_json(value, 0, &nodes, &out->result) < 0) {
			out->result = NULL;
		} else if (out->result &&
		           strlen(json_object_to_json_string_ext(
		               out->result, JSON_C_TO_STRING_PLAIN)) > zcfg->max_result) {
			json_object_put(out->result);
			out->result = NULL;
			trunc = 1;
		}
	}
	audit_armed = 0;
	if (exc) {
		outcome_error(out, exc, code);
		if (deadline_hit)
			out->status = RUN_TIMEOUT;
		else if (capture_flooded())
			out->status = RUN_OUTPUT_LIMIT;
		else if (PyErr_GivenExceptionMatches(exc, PyExc_MemoryError))
			out->status = RUN_MEMORY_LIMIT;
		else
			out->status = RUN_ERROR;
	} else if (deadline_hit || capture_flooded()) {
		/* The code caught the exception we raised in it and finished anyway. */
		out->status = deadline_hit ? RUN_TIMEOUT : RUN_OUTPUT_LIMIT;
		out->error_type = strdup(deadline_hit ? "TimeoutError" : "OutputLimitExceeded");
		out->error_message =
		    strdup(deadline_hit ? "the time limit was reached (the code "
		                          "caught the TimeoutError raised in it)"
		                        : "the output limit was exceeded (the code "
		                          "caught the exception raised in it)");
		out->error_traceback = strdup("");
	} else {
		out->status = RUN_OK;
	}
	out->stdout_text = capture_text(CAPTURE_STDOUT, &trunc);
	out->stderr_text = capture_text(CAPTURE_STDERR, &trunc);
	out->logs = capture_text(2, &trunc);
	out->truncated = out->truncated || trunc;
	Py_XDECREF(exc);
	Py_XDECREF(value);
	Py_XDECREF(g);
	program_clear(&prog);
	free(reserve);
}
