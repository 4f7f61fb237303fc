/* pylayer.c - the Python layer: attribute rules by name (the bytecode, getattr and its kin), the
 * import allowlist with module proxies, the curated builtins, the audit hook, and fixes to
 * library methods that name modules. Friendly errors first; the rules on the types (pyguard.c)
 * hold behind them. Functions return 0 / -1 (or NULL) with a Python exception set. */
#include "interp_internal.h"

#include <stdlib.h>
#include <string.h>

/* Code objects nested deeper than this (functions in functions in ...) are refused. */
#define CODE_NESTING_MAX 200

static volatile int audit_armed;
static PyObject *safe_builtins;    /* dict given to user code */
static PyObject *private_builtins; /* a copy only our own code uses (the warm-up) */
static PyObject *proxies;          /* name -> proxy module */
static PyObject **proxy_set;       /* every proxy, sorted by address */
static size_t n_proxy_set;
static PyObject *authorized_text; /* "['abc', 'array', ...]" */
static PyObject *real_attrgetter, *real_methodcaller, *real_get_field;

static int op_load_attr = -1, op_store_attr = -1, op_delete_attr = -1, op_load_method = -1,
           op_import_from = -1, op_import_name = -1, op_load_const = -1, op_match_class = -1,
           op_extended_arg = -1;

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

int pylayer_opcodes_load(void)
{
	PyObject *m = PyImport_ImportModule("opcode"), *map;
	struct {
		const char *name;
		int *slot;
	} ops[] = {
	    {"LOAD_ATTR", &op_load_attr},     {"STORE_ATTR", &op_store_attr},
	    {"DELETE_ATTR", &op_delete_attr}, {"LOAD_METHOD", &op_load_method},
	    {"IMPORT_FROM", &op_import_from}, {"EXTENDED_ARG", &op_extended_arg},
	    {"IMPORT_NAME", &op_import_name}, {"LOAD_CONST", &op_load_const},
	    {"MATCH_CLASS", &op_match_class},
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
	    op_extended_arg < 0 || op_import_name < 0 || op_load_const < 0 || op_match_class < 0) {
		PyErr_SetString(PyExc_RuntimeError, "opcode table incomplete");
		return -1;
	}
	return 0;
}

/* A name the code uses as an attribute: refused with the line when the rules say so. */
static int code_name_check(PyCodeObject *co, PyObject *name, Py_ssize_t offset)
{
	const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL, *why;

	if (!s)
		return PyErr_Occurred() ? -1 : 0;
	why = attr_refusal(s);
	if (why) {
		PyErr_Format(PyExc_AttributeError, "%s: %s (line %d)", why, s,
		             PyCode_Addr2Line(co, (int)offset));
		return -1;
	}
	return 0;
}

/* Every attribute name the code names, and what CPython would otherwise resolve unchecked:
 * the keyword names of a class pattern (MATCH_CLASS reads them in C), and the module a
 * from-import falls back on. IMPORT_FROM looks a name up in sys.modules when the object it
 * got has no such attribute, with the object's own __name__: given an object of the user's
 * that names 're', "from x import _compiler" would be the real re._compiler. The user's
 * from-imports are compiled into calls (interp.c), so IMPORT_FROM appears only after
 * IMPORT_NAME __future__ (whose feature names are fixed by the compiler), or in code a
 * library evaluates, where it is refused. */
static int code_check(PyCodeObject *co, int depth)
{
	PyObject *bytes = NULL, *names = co->co_names, *consts = co->co_consts;
	const unsigned char *p;
	Py_ssize_t n, last_const = -1, last_import = -1;
	unsigned int ext = 0;
	int rc = -1;

	if (depth > CODE_NESTING_MAX) {
		PyErr_SetString(PyExc_RecursionError, "code nested too deeply");
		return -1;
	}
	bytes = PyCode_GetCode(co);
	if (!bytes)
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
		if (op == 0) /* CACHE: the inline cache of the instruction before */
			continue;
		if (op == op_match_class && last_const >= 0 &&
		    last_const < PyTuple_GET_SIZE(consts)) {
			PyObject *kw = PyTuple_GET_ITEM(consts, last_const);
			for (Py_ssize_t k = 0; PyTuple_Check(kw) && k < PyTuple_GET_SIZE(kw); k++)
				if (code_name_check(co, PyTuple_GET_ITEM(kw, k), i) < 0)
					goto out;
		}
		last_const = op == op_load_const ? (Py_ssize_t)arg : -1;
		if (op == op_import_name)
			last_import = (Py_ssize_t)arg;
		if (op == op_import_from &&
		    (last_import < 0 || last_import >= PyTuple_GET_SIZE(names) ||
		     !PyUnicode_Check(PyTuple_GET_ITEM(names, last_import)) ||
		     PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(names, last_import),
		                                      "__future__") != 0)) {
			PyErr_Format(PyExc_ImportError,
			             "imports in code that a library evaluates are not allowed "
			             "(line %d)",
			             PyCode_Addr2Line(co, (int)i));
			goto out;
		}
		if (op != op_load_attr && op != op_store_attr && op != op_delete_attr &&
		    op != op_load_method && op != op_import_from)
			continue;
#if PY_VERSION_HEX >= 0x030C0000
		if (op == op_load_attr)
			arg >>= 1;
#endif
		if ((Py_ssize_t)arg >= PyTuple_GET_SIZE(names))
			continue;
		if (code_name_check(co, PyTuple_GET_ITEM(names, arg), i) < 0)
			goto out;
	}
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); i++) {
		PyObject *c = PyTuple_GET_ITEM(consts, i);
		if (PyCode_Check(c) && code_check((PyCodeObject *)c, depth + 1) < 0)
			goto out;
	}
	rc = 0;
out:
	Py_XDECREF(bytes);
	return rc;
}

/* ---- checked builtins ---------------------------------------------------------------- */

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

/* ImportError for a module the allowlist does not offer. Returns NULL. */
static PyObject *import_refuse(PyObject *name, int from)
{
	const char *s = PyUnicode_AsUTF8(name);
	PyObject *msg;

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

/* The proxy of an allowed module (borrowed), or NULL with ImportError. */
static PyObject *proxy_of(PyObject *name, int from)
{
	PyObject *proxy = PyDict_GetItemWithError(proxies, name);

	if (!proxy && !PyErr_Occurred())
		import_refuse(name, from);
	return proxy;
}

/* __import__ for user code: only the allowlist, and only as proxies. C code imports through
 * the caller's builtins too (PyImport_Import, as time.strptime does for _strptime), with an
 * empty list as fromlist, and then takes the module from sys.modules itself: that call gets
 * None when the module is already loaded, so it returns nothing to the user either. */
static PyObject *safe_import(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"name", "globals", "locals", "fromlist", "level", NULL};
	PyObject *name, *globals = NULL, *locals = NULL, *fromlist = NULL, *proxy;
	int level = 0, from;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "U|OOOi:__import__", kwlist, &name, &globals,
	                                 &locals, &fromlist, &level))
		return NULL;
	if (level != 0) {
		PyErr_SetString(PyExc_ImportError, "Relative imports are not supported");
		return NULL;
	}
	if (fromlist && PyList_CheckExact(fromlist) && PyList_GET_SIZE(fromlist) == 0) {
		PyObject *m = PyImport_GetModule(name);
		if (m) {
			Py_DECREF(m);
			Py_RETURN_NONE;
		}
		if (PyErr_Occurred())
			return NULL;
	}
	from = fromlist && PyObject_IsTrue(fromlist) == 1;
	proxy = PyDict_GetItemWithError(proxies, name);
	if (proxy && !from) {
		/* "import a.b" binds a: return the top-level package's proxy. */
		Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), 1);
		if (dot > 0) {
			PyObject *top = PyUnicode_Substring(name, 0, dot);
			if (!top)
				return NULL;
			proxy = PyDict_GetItemWithError(proxies, top);
			Py_DECREF(top);
		}
	}
	if (!proxy)
		return PyErr_Occurred() ? NULL : import_refuse(name, from);
	return Py_NewRef(proxy);
}

/* What the user's "from m import a, b" and "import m.a as c" are compiled into (interp.c),
 * instead of IMPORT_FROM: from_names("m", ("a", "b"), 0) gives (m.a, m.b) from m's proxy, a
 * submodule's proxy when m has no such attribute; from_names("m.a", None, 0) gives m.a's
 * proxy. Nothing here looks in sys.modules. */
static PyObject *from_names(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *module, *names, *proxy, *out;
	long level;

	if (nargs != 3 || !PyUnicode_Check(args[0]) ||
	    (args[1] != Py_None && !PyTuple_Check(args[1])) || !PyLong_Check(args[2])) {
		PyErr_SetString(PyExc_TypeError, "from_names(module, names, level)");
		return NULL;
	}
	module = args[0];
	names = args[1];
	level = PyLong_AsLong(args[2]);
	if (level != 0) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ImportError, "Relative imports are not supported");
		return NULL;
	}
	proxy = proxy_of(module, names != Py_None);
	if (!proxy || names == Py_None)
		return Py_XNewRef(proxy);
	out = PyTuple_New(PyTuple_GET_SIZE(names));
	for (Py_ssize_t i = 0; out && i < PyTuple_GET_SIZE(names); i++) {
		PyObject *name = PyTuple_GET_ITEM(names, i), *v = PyObject_GetAttr(proxy, name);
		if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) {
			PyObject *full = PyUnicode_FromFormat("%U.%U", module, name);
			PyErr_Clear();
			v = full ? Py_XNewRef(PyDict_GetItemWithError(proxies, full)) : NULL;
			Py_XDECREF(full);
			if (!v && !PyErr_Occurred()) {
				PyObject *msg = PyUnicode_FromFormat(
				    "cannot import name '%U' from '%U'", name, module);
				if (msg) {
					PyErr_SetImportError(msg, module, NULL);
					Py_DECREF(msg);
				}
			}
		}
		if (!v)
			Py_CLEAR(out);
		else
			PyTuple_SET_ITEM(out, i, v);
	}
	return out;
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
    {PYLAYER_FROM_NAMES, (PyCFunction)(void (*)(void))from_names, METH_FASTCALL,
     "The names a from-import binds, from the allowed modules' proxies."},
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
	if (pyfiles_audit_allows(event, args))
		return 0;
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

/* ---- module proxies and builtins (zygote) -------------------------------------------- */

/* Is name (a dotted module name) offered to user code? */
static int module_allowed(const struct zygote_config *cfg, const char *name)
{
	size_t n = strcspn(name, ".");

	if (strstr(name, "._") || name[0] == '_')
		return 0;
	for (size_t i = 0; i < cfg->n_imports; i++) {
		const char *a = cfg->imports[i];
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

/* os as user code sees it with a workspace: its files and directories (answered from the
 * workspace, pyfiles.c), path handling, and facts; no fds, processes or signals. The calls
 * the workspace cannot do (mkdir, remove, rename) are there, so that the audit hook's refusal
 * says why. */
static int proxy_fill_os(PyObject *proxy, PyObject *os)
{
	static const char *const keep[] = {
	    "getcwd",      "getcwdb", "listdir", "scandir",    "walk",     "stat",     "lstat",
	    "fstat",       "access",  "path",    "fspath",     "fsencode", "fsdecode", "PathLike",
	    "stat_result", "sep",     "altsep",  "extsep",     "pathsep",  "linesep",  "curdir",
	    "pardir",      "defpath", "devnull", "name",       "error",    "strerror", "F_OK",
	    "R_OK",        "W_OK",    "X_OK",    "SEEK_SET",   "SEEK_CUR", "SEEK_END", "environ",
	    "getenv",      "getpid",  "urandom", "makedirs",   "mkdir",    "remove",   "unlink",
	    "rename",      "replace", "rmdir",   "removedirs", NULL,
	};

	for (const char *const *k = keep; *k; k++) {
		PyObject *v = PyObject_GetAttrString(os, *k);
		if (!v)
			return -1;
		/* os.path: its proxy, linked as the proxies' submodules are (proxies_link). */
		if (PyModule_Check(v)) {
			Py_DECREF(v);
			continue;
		}
		if (PyModule_AddObjectRef(proxy, *k, v) < 0) {
			Py_DECREF(v);
			return -1;
		}
		Py_DECREF(v);
	}
	return 0;
}

/* Copy the public, non-module attributes of a real module into its proxy. The values are the
 * real, shared objects, not copies: a library class the user's code changes (a class attribute,
 * a method, a function's defaults) stays changed for the rest of its session, and reaches
 * nothing else. A session's processes are forks of its own worker and the zygote runs no user
 * code, so other sessions never see it; every piece of Python our own code runs later in the
 * session (building the program, repr() of the result, the error's text, the warm-up) runs
 * armed, so a changed object only runs the user's code under the user's rules; and the
 * supervisor trusts nothing a worker sends. Copying would not help: the classes' methods
 * reach the originals through their globals anyway. */
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

static int future_proxy_add(void)
{
	PyObject *real = PyImport_ImportModule("__future__"), *p;
	int rc;

	if (!real)
		return -1;
	Py_DECREF(real);
	p = PyModule_New("__future__");
	rc = p ? PyDict_SetItemString(proxies, "__future__", p) : -1;
	Py_XDECREF(p);
	return rc;
}

/* A package's proxy gets its loaded submodules' proxies as attributes (collections.abc,
 * json.decoder), as the real package has its submodules. */
static int proxies_link(void)
{
	PyObject *key, *val;
	Py_ssize_t pos = 0;

	while (PyDict_Next(proxies, &pos, &key, &val)) {
		Py_ssize_t dot = PyUnicode_FindChar(key, '.', 0, PyUnicode_GET_LENGTH(key), -1);
		PyObject *parent_name, *parent, *child;
		int rc = 0;
		if (dot < 0) {
			if (dot == -2)
				return -1;
			continue;
		}
		parent_name = PyUnicode_Substring(key, 0, dot);
		child = PyUnicode_Substring(key, dot + 1, PyUnicode_GET_LENGTH(key));
		parent = parent_name ? PyDict_GetItemWithError(proxies, parent_name) : NULL;
		if (parent && child && !PyDict_Contains(PyModule_GetDict(parent), child))
			rc = PyObject_SetAttr(parent, child, val);
		Py_XDECREF(parent_name);
		Py_XDECREF(child);
		if (rc < 0 || PyErr_Occurred())
			return -1;
	}
	return 0;
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (PyObject *const *)a, y = (uintptr_t) * (PyObject *const *)b;

	return x < y ? -1 : x > y;
}

static int proxy_set_build(void)
{
	PyObject *key, *val;
	Py_ssize_t pos = 0;

	proxy_set = PyMem_Calloc((size_t)PyDict_GET_SIZE(proxies) + 1, sizeof(*proxy_set));
	if (!proxy_set) {
		PyErr_NoMemory();
		return -1;
	}
	while (PyDict_Next(proxies, &pos, &key, &val))
		proxy_set[n_proxy_set++] = val;
	qsort(proxy_set, n_proxy_set, sizeof(*proxy_set), ptr_cmp);
	return 0;
}

static int proxies_build(const struct zygote_config *cfg)
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
		if (!PyModule_Check(val) || !module_allowed(cfg, k))
			continue;
		p = PyModule_NewObject(key);
		if (!p || PyDict_SetItem(proxies, key, p) < 0) {
			Py_XDECREF(p);
			return -1;
		}
		Py_DECREF(p);
	}
	/* "from __future__ import annotations" imports it at run time as well. */
	if (future_proxy_add() < 0)
		return -1;
	pos = 0;
	while (PyDict_Next(proxies, &pos, &key, &val)) {
		const char *k = PyUnicode_AsUTF8(key);
		PyObject *real = PyDict_GetItem(modules, key);
		if (!k || !real)
			return -1;
		if (strcmp(k, "sys") == 0                    ? proxy_fill_sys(val, real) < 0
		    : strcmp(k, "os") == 0 && cfg->workspace ? proxy_fill_os(val, real) < 0
		                                             : proxy_fill(val, real, k) < 0)
			return -1;
	}
	if (proxies_link() < 0 || proxy_set_build() < 0)
		return -1;
	/* The sorted list quoted in refusals. */
	names = PyList_New(0);
	if (!names)
		return -1;
	for (size_t i = 0; i < cfg->n_imports; i++) {
		PyObject *s = PyUnicode_FromString(cfg->imports[i]);
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

static int builtins_build(const struct zygote_config *cfg)
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
		/* With a workspace open reaches its files, through the supervisor (pyfiles.c). */
		if (!(cfg->workspace && strcmp(*r, "open") == 0) &&
		    PyDict_GetItemString(safe_builtins, *r) &&
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
	private_builtins = PyDict_Copy(safe_builtins);
	return private_builtins ? 0 : -1;
}

/* Library methods that read a real module's namespace by a name the user's code chooses,
 * found by reading the allowed modules for getattr and globals() lookups on modules: a
 * subclass of redirect_stdout with _stream = 'modules' read and wrote any attribute of the
 * real sys; a typing alias whose _name is 'sys' reduced to the real sys. Each is replaced by
 * the same code reading the name once and refusing any other; modules not loaded are left
 * alone. (Reads of a real module's __dict__ by name are refused by the type rules.) */
static const char library_fixes[] =
    "import sys, operator\n"
    "ModuleType = type(sys)\n"
    "contextlib = sys.modules.get('contextlib')\n"
    "if contextlib is not None:\n"
    "    def _stream(self):\n"
    "        s = self._stream\n"
    "        if type(s) is not str or s not in ('stdout', 'stderr'):\n"
    "            raise AttributeError('redirect_stdout and redirect_stderr redirect sys.stdout '\n"
    "                                 'and sys.stderr only')\n"
    "        return s\n"
    "    def __enter__(self):\n"
    "        s = _stream(self)\n"
    "        self._old_targets.append(getattr(sys, s))\n"
    "        setattr(sys, s, self._new_target)\n"
    "        return self._new_target\n"
    "    def __exit__(self, exctype, excinst, exctb):\n"
    "        setattr(sys, _stream(self), self._old_targets.pop())\n"
    "    contextlib._RedirectStream.__enter__ = __enter__\n"
    "    contextlib._RedirectStream.__exit__ = __exit__\n"
    "typing = sys.modules.get('typing')\n"
    "if typing is not None:\n"
    "    def __reduce__(self, names=vars(typing)):\n"
    "        name = self._name\n"
    "        if name:\n"
    "            if (type(name) is not str or name.startswith('_') or name not in names\n"
    "                    or isinstance(names[name], ModuleType)):\n"
    "                raise TypeError(f'cannot reduce {self!r}')\n"
    "            origin = names[name]\n"
    "        else:\n"
    "            origin = self.__origin__\n"
    "        args = tuple(self.__args__)\n"
    "        if len(args) == 1 and not isinstance(args[0], tuple):\n"
    "            args, = args\n"
    "        return operator.getitem, (origin, args)\n"
    "    typing._GenericAlias.__reduce__ = __reduce__\n";

static int library_fix(void)
{
	PyObject *g = PyDict_New(), *r = NULL;

	PyObject *code = Py_CompileString(library_fixes, "<sandbox>", Py_file_input);

	if (code && g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0)
		r = PyEval_EvalCode(code, g, g);
	Py_XDECREF(code);
	Py_XDECREF(g);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

/* ---- entry points -------------------------------------------------------------------- */

int pylayer_hook_install(void)
{
	return PySys_AddAuditHook(audit_hook, NULL);
}

void pylayer_arm(int armed)
{
	audit_armed = armed;
}

int pylayer_armed(void)
{
	return audit_armed;
}

int pylayer_init(const struct zygote_config *cfg)
{
	PyObject *op = PyImport_ImportModule("operator");

	if (op) {
		real_attrgetter = PyObject_GetAttrString(op, "attrgetter");
		real_methodcaller = PyObject_GetAttrString(op, "methodcaller");
		Py_DECREF(op);
	}
	if (!real_attrgetter || !real_methodcaller || builtins_build(cfg) < 0 ||
	    proxies_build(cfg) < 0 || library_fix() < 0)
		return -1;
	return 0;
}

int pylayer_code_check(PyCodeObject *co)
{
	return code_check(co, 0);
}

PyObject *pylayer_builtins(void)
{
	return safe_builtins;
}

PyObject *pylayer_builtins_private(void)
{
	return private_builtins;
}

int pylayer_is_proxy(PyObject *m)
{
	return n_proxy_set > 0 &&
	       bsearch(&m, proxy_set, n_proxy_set, sizeof(*proxy_set), ptr_cmp) != NULL;
}
