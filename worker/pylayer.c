/* pylayer.c - the Python layer: attribute rules by name (the bytecode, getattr and its kin), the
 * import allowlist (its proxies: pyproxy.c), the curated builtins, the audit hook, and fixes to
 * library methods that name modules. Friendly errors first; the rules on the types (pyguard.c)
 * hold behind them. Functions return 0 / -1 (or NULL) with a Python exception set. */
#include "interp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Code objects nested deeper than this (functions in functions in ...) are refused. */
#define CODE_NESTING_MAX 200

/* Whether the layer is armed: once it is (a worker's first call or warm-up), for the life of
 * the process, on a page of its own made read-only then. Memory the user's code could write
 * through a bug of the interpreter's turned the whole layer off with one write here (the
 * zygote is not position-independent: the address is fixed); now that needs a system call
 * the code cannot make without running native code. */
static union {
	volatile int on;
	char page[4096];
} armed_page __attribute__((aligned(4096)));
#define audit_armed (armed_page.on)
static PyObject *safe_builtins;    /* dict given to user code */
static PyObject *private_builtins; /* a copy only our own code uses (the warm-up) */
static PyObject *real_attrgetter, *real_methodcaller, *real_get_field;

static int op_load_attr = -1, op_store_attr = -1, op_delete_attr = -1, op_load_method = -1,
           op_import_from = -1, op_import_name = -1, op_load_const = -1, op_match_class = -1,
           op_extended_arg = -1, op_import_star = -1, op_load_name = -1, op_load_global = -1,
           op_precall = -1, op_call = -1, op_load_fast = -1, op_load_deref = -1,
           op_build_tuple = -1, op_build_list = -1, op_build_map = -1, op_store_name = -1,
           op_store_global = -1, op_delete_name = -1, op_delete_global = -1;
/* The relative jumps, and which of them go backwards (opcode.hasjrel). */
static unsigned char op_jumps[256], op_jumps_back[256];

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
    /* sys's streams to go back to (sys.stdout = sys.__stdout__) */
    "__stdout__",
    "__stderr__",
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
    "__members__",
    "__args__",
    "__origin__",
    /* An exception's chain and traceback, as sys.exc_info() gives them (tb_frame and
     * tb_next are refused below). */
    "__traceback__",
    "__cause__",
    "__context__",
    /* its notes (add_note): a list of texts in the exception's own dict */
    "__notes__",
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

/* What to use instead of a refused name the user's code often reaches for, or "". */
static const char *attr_hint(const char *name)
{
	static const struct {
		const char *name, *hint;
	} hints[] = {
	    {"__dict__", "; vars(x) gives the __dict__ of an object of a class the code defined, "
	                 "and dir(x) and getattr(x, name) read any object's attributes "
	                 "(dataclasses.asdict for a dataclass, get_params() for a model)"},
	    {"__mro__", "; cls.mro() lists the classes it derives from, and isinstance(), "
	                "issubclass() and type(x).__name__ tell what x is"},
	    {"__bases__", "; cls.mro() lists the classes it derives from, and isinstance(), "
	                  "issubclass() and type(x).__name__ tell what x is"},
	    {"__base__", "; cls.mro() lists the classes it derives from, and isinstance(), "
	                 "issubclass() and type(x).__name__ tell what x is"},
	    {"__suppress_context__", "; an error's __cause__ and __context__ name the errors "
	                             "before it (raise ... from None hides them when printed)"},
	    {"__subclasses__", "; isinstance() and issubclass() tell what x is"},
	    {"__globals__", "; globals() is the session's namespace"},
	    {"__wrapped__", "; call the decorated function as it is (help(f) shows its signature "
	                    "and documentation)"},
	    {"__defaults__", "; help(f) shows a function's signature with its defaults"},
	    {"__kwdefaults__", "; help(f) shows a function's signature with its defaults"},
	    {"__code__", "; help(f) shows a function's signature, f.__name__ and f.__doc__ name "
	                 "and describe it"},
	    {"__closure__", "; help(f) shows a function's signature, f.__name__ and f.__doc__ "
	                    "name and describe it"},
	    {"__self__", "; keep the object whose method it is (m = obj.method: use obj)"},
	};

	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strcmp(name, hints[i].name) == 0)
			return hints[i].hint;
	return "";
}

/* Check a name object; raises AttributeError when refused. 0 or -1. */
PyObject *pylayer_exact_str(PyObject *o, const char *what)
{
	if (PyUnicode_CheckExact(o))
		return Py_NewRef(o);
	if (PyUnicode_Check(o))
		return PyUnicode_FromObject(o); /* a copy of the characters, an exact str */
	PyErr_Format(PyExc_TypeError, "%s must be a string, not '%.100s'", what,
	             Py_TYPE(o)->tp_name);
	return NULL;
}

PyObject *pylayer_plain_kwargs(PyObject *kw)
{
	Py_ssize_t pos = 0;
	PyObject *k, *v, *out;
	int plain = 1;

	if (!kw || !PyDict_Check(kw))
		return Py_XNewRef(kw);
	while (plain && PyDict_Next(kw, &pos, &k, &v))
		plain = PyUnicode_CheckExact(k);
	if (plain)
		return Py_NewRef(kw);
	if (!(out = PyDict_New()))
		return NULL;
	for (pos = 0; PyDict_Next(kw, &pos, &k, &v);) {
		PyObject *e = PyUnicode_Check(k) ? PyUnicode_FromObject(k) : NULL;
		int rc = -1;

		/* (a key that is no str is refused as CPython's calls refuse it, here: an object
		 * hashing as a name and equal to it would hide it from a lookup as well; exact str
		 * keys compare by their characters alone) */
		if (!PyUnicode_Check(k))
			PyErr_SetString(PyExc_TypeError, "keywords must be strings");
		else if (e && PyDict_Contains(out, e) == 1)
			PyErr_Format(PyExc_TypeError,
			             "got multiple values for keyword argument '%U'", e);
		else if (e)
			rc = PyDict_SetItem(out, e, v);
		Py_XDECREF(e);
		if (rc < 0) {
			Py_DECREF(out);
			return NULL;
		}
	}
	return out;
}

/* tp_new with its keywords by their characters (pylayer_plain_kwargs) while armed. */
PyObject *pylayer_new_plain(newfunc real, PyTypeObject *t, PyObject *args, PyObject *kw)
{
	PyObject *plain, *r;

	if (!pylayer_armed() || !kw)
		return real(t, args, kw);
	if (!(plain = pylayer_plain_kwargs(kw)))
		return NULL;
	r = real(t, args, plain);
	Py_DECREF(plain);
	return r;
}

/* The builtin the code's f(**m) calls m through (interp.c): m merged as CPython merges it, into
 * a dict whose str keys are exact (pylayer_plain_kwargs). */
static PyObject *merged_kwargs(PyObject *self, PyObject *m)
{
	PyObject *d, *out;

	(void)self;
	if (PyDict_CheckExact(m))
		return pylayer_plain_kwargs(m);
	if (!(d = PyDict_New()))
		return NULL;
	if (PyDict_Merge(d, m, 1) < 0) {
		Py_DECREF(d);
		/* (CPython's words for any AttributeError of the merge, one of keys() included) */
		if (PyErr_ExceptionMatches(PyExc_AttributeError) && !PyDict_Check(m)) {
			PyErr_Clear();
			PyErr_Format(PyExc_TypeError,
			             "argument after ** must be a mapping, not %.200s",
			             Py_TYPE(m)->tp_name);
		}
		return NULL;
	}
	out = pylayer_plain_kwargs(d);
	Py_DECREF(d);
	return out;
}

/* The same for library code (pydata.py, library_fixes): a keyword dict a library hands on,
 * read by a check before a compiled callee takes it (None, as a constructor check may be
 * given, stays None). */
static PyObject *library_kwargs(PyObject *self, PyObject *m)
{
	return m == Py_None ? Py_NewRef(m) : merged_kwargs(self, m);
}

static PyMethodDef plain_kwargs_def = {"plain_kwargs", library_kwargs, METH_O,
                                       "A mapping's keyword names made exact str."};

PyObject *pylayer_plain_kwargs_function(void)
{
	return PyCFunction_New(&plain_kwargs_def, NULL);
}

static int attr_check(PyObject *name)
{
	const char *s, *why;
	Py_ssize_t len;

	if (!PyUnicode_Check(name)) {
		PyErr_SetString(PyExc_TypeError, "attribute name must be string");
		return -1;
	}
	s = PyUnicode_AsUTF8AndSize(name, &len);
	if (!s)
		return -1;
	if (strlen(s) != (size_t)len) { /* (read as a C string, the name would end there) */
		PyErr_SetString(PyExc_AttributeError, "an attribute name holds no NUL character");
		return -1;
	}
	why = attr_refusal(s);
	if (why) {
		PyErr_Format(PyExc_AttributeError, "%s: %s%s", why, s, attr_hint(s));
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
	    {"LOAD_ATTR", &op_load_attr},
	    {"STORE_ATTR", &op_store_attr},
	    {"DELETE_ATTR", &op_delete_attr},
	    {"LOAD_METHOD", &op_load_method},
	    {"IMPORT_FROM", &op_import_from},
	    {"EXTENDED_ARG", &op_extended_arg},
	    {"IMPORT_NAME", &op_import_name},
	    {"LOAD_CONST", &op_load_const},
	    {"MATCH_CLASS", &op_match_class},
	    {"IMPORT_STAR", &op_import_star},
	    {"LOAD_NAME", &op_load_name},
	    {"LOAD_GLOBAL", &op_load_global},
	    {"PRECALL", &op_precall},
	    {"CALL", &op_call},
	    {"LOAD_FAST", &op_load_fast},
	    {"LOAD_DEREF", &op_load_deref},
	    {"BUILD_TUPLE", &op_build_tuple},
	    {"BUILD_LIST", &op_build_list},
	    {"BUILD_MAP", &op_build_map},
	    {"STORE_NAME", &op_store_name},
	    {"STORE_GLOBAL", &op_store_global},
	    {"DELETE_NAME", &op_delete_name},
	    {"DELETE_GLOBAL", &op_delete_global},
	};
	PyObject *jrel, *names;

	if (!m)
		return -1;
	map = PyObject_GetAttrString(m, "opmap");
	jrel = PyObject_GetAttrString(m, "hasjrel");
	names = PyObject_GetAttrString(m, "opname");
	Py_DECREF(m);
	for (Py_ssize_t i = 0; jrel && names && PyList_Check(jrel) && PyList_Check(names) &&
	                       i < PyList_GET_SIZE(jrel);
	     i++) {
		long op = PyLong_AsLong(PyList_GET_ITEM(jrel, i));
		const char *n;
		if (op < 0 || op > 255 || op >= PyList_GET_SIZE(names)) {
			PyErr_Clear();
			continue;
		}
		n = PyUnicode_AsUTF8(PyList_GET_ITEM(names, op));
		op_jumps[op] = 1;
		op_jumps_back[op] = n && strstr(n, "BACKWARD");
	}
	Py_XDECREF(jrel);
	Py_XDECREF(names);
	if (!map)
		return -1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		PyObject *v = PyDict_GetItemString(map, ops[i].name);
		if (v)
			*ops[i].slot = (int)PyLong_AsLong(v);
	}
	Py_DECREF(map);
	if (op_load_attr < 0 || op_store_attr < 0 || op_delete_attr < 0 || op_import_from < 0 ||
	    op_extended_arg < 0 || op_import_name < 0 || op_load_const < 0 || op_match_class < 0 ||
	    op_store_name < 0 || op_store_global < 0 || op_delete_name < 0 ||
	    op_delete_global < 0) {
		PyErr_SetString(PyExc_RuntimeError, "opcode table incomplete");
		return -1;
	}
	return 0;
}

/* The longest attribute name bytecode may use. CPython 3.11 gives a class a version (what its
 * specialised attribute reads check a type against) only when an attribute is looked up by a
 * name of at most 100 characters: a class just changed kept version 0 through reads by longer
 * names, the specialiser cached 0 (its later releases refuse to), and an object of any other
 * class at version 0 passed for it (a slot read at its offset in a bytes object: any memory,
 * the sandbox escaped). Attribute instructions are never specialised with the layer on
 * (pyspecialise.c); this bound stays behind that: code the user compiles, and code a library
 * compiles from the user's text (a dataclass's field names), names none longer. */
#define ATTR_NAME_MAX 100

/* A name the code uses as an attribute: refused with the line when the rules say so. */
static int code_name_check(PyCodeObject *co, PyObject *name, Py_ssize_t offset)
{
	const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL, *why;

	if (!s)
		return PyErr_Occurred() ? -1 : 0;
	if (PyUnicode_GET_LENGTH(name) > ATTR_NAME_MAX) {
		PyErr_Format(PyExc_AttributeError,
		             "attribute names longer than %d characters are not allowed in the "
		             "sandbox (line %d)",
		             ATTR_NAME_MAX, PyCode_Addr2Line(co, (int)offset));
		return -1;
	}
	why = attr_refusal(s);
	if (why) {
		PyErr_Format(PyExc_AttributeError, "%s: %s (line %d)%s", why, s,
		             PyCode_Addr2Line(co, (int)offset), attr_hint(s));
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
	if (n == 0) {
		/* The compiler never makes such code; running it would read past its end. */
		PyErr_SetString(PyExc_SystemError, "code without bytecode cannot run");
		goto out;
	}
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
		/* A function takes its builtins from its globals' __builtins__ when it is made: a
		 * module put there would give the functions made after it that module's namespace
		 * by bare names, past the attribute rules. */
		if ((op == op_store_name || op == op_store_global || op == op_delete_name ||
		     op == op_delete_global) &&
		    (Py_ssize_t)arg < PyTuple_GET_SIZE(names) &&
		    PyUnicode_Check(PyTuple_GET_ITEM(names, arg)) &&
		    PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(names, arg),
		                                     "__builtins__") == 0) {
			PyErr_Format(
			    PyExc_NameError,
			    "__builtins__ cannot be assigned in the sandbox (line %d): every "
			    "function uses the sandbox's builtins, by their names",
			    PyCode_Addr2Line(co, (int)i));
			goto out;
		}
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

/* Attribute reads and changes the user's code asks for by name: a real module answers them
 * as its proxy would (pymodguard.c). */
static PyObject *directed_getattr(PyObject *obj, PyObject *name)
{
	void *d = pymodguard_direct();
	PyObject *v = PyObject_GetAttr(obj, name);

	pymodguard_undirect(d);
	return v;
}

static int directed_setattr(PyObject *obj, PyObject *name, PyObject *value)
{
	void *d = pymodguard_direct();
	int rc = PyObject_SetAttr(obj, name, value);

	pymodguard_undirect(d);
	return rc;
}

static PyObject *object_dict(PyObject *obj);

/* getattr(x, '__dict__') and hasattr(x, '__dict__') answer as vars(x). */
static int is_dict_name(PyObject *name)
{
	return PyUnicode_CompareWithASCIIString(name, "__dict__") == 0;
}

/* obj's attribute named by arg, as getattr and hasattr read it for the user's code: '__dict__'
 * as vars(), other names by the attribute rules. New reference, or NULL; *refused is set when
 * the name was (its error is not a missing attribute's, whatever its class). */
static PyObject *checked_read(PyObject *obj, PyObject *arg, int *refused)
{
	PyObject *name = pylayer_exact_str(arg, "attribute name"), *v = NULL;

	*refused = 0;
	if (name && is_dict_name(name))
		v = object_dict(obj);
	else if (name && attr_check(name) == 0)
		v = directed_getattr(obj, name);
	else
		*refused = 1;
	Py_XDECREF(name);
	return v;
}

/* checked_read for hasattr and a getattr with a default: a missing attribute is NULL with no
 * error set, told as CPython's own hasattr tells it (no AttributeError made when the lookup is
 * the generic one, which made them ten times slower than the host's). */
static PyObject *checked_lookup(PyObject *obj, PyObject *arg, int *refused)
{
	PyObject *name, *v = NULL;
	void *d;

	if (!PyUnicode_CheckExact(arg))
		return checked_read(obj, arg, refused);
	*refused = 0;
	if (is_dict_name(arg))
		return object_dict(obj);
	if (attr_check(arg) != 0) {
		*refused = 1;
		return NULL;
	}
	name = Py_NewRef(arg);
	d = pymodguard_direct();
	if (_PyObject_LookupAttr(obj, name, &v) < 0)
		v = NULL;
	pymodguard_undirect(d);
	Py_DECREF(name);
	return v;
}

/* Has obj an attribute of that name, told without reading it: its class's and their bases'
 * dictionaries, its own (a class's: its bases'), never a getter or __getattr__ run. 1, 0, or -1
 * with an error. */
static int has_unread(PyObject *obj, PyObject *name)
{
	PyObject **dp, *found = _PyType_Lookup(Py_TYPE(obj), name);

	if ((!found || pyguard_answers_nothing(found)) && PyType_Check(obj))
		found = _PyType_Lookup((PyTypeObject *)obj, name);
	/* (object's array interface names answer nothing, for any object: not had) */
	if (found)
		return !pyguard_answers_nothing(found);
	dp = _PyObject_GetDictPtr(obj);
	return dp && *dp && PyDict_Check(*dp) ? PyDict_Contains(*dp, name) : 0;
}

static PyObject *checked_getattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *v;
	int refused;

	if (nargs < 2 || nargs > 3) {
		PyErr_SetString(PyExc_TypeError, "getattr expected 2 or 3 arguments");
		return NULL;
	}
	if (nargs == 3) {
		v = checked_lookup(args[0], args[1], &refused);
		if (!v && !refused &&
		    (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_AttributeError))) {
			PyErr_Clear();
			return Py_NewRef(args[2]);
		}
		/* (a name the code may not read that x has not, as hasattr tells it: the default,
		 * as for any missing attribute; one x has stays refused) */
		if (!v && refused && PyUnicode_CheckExact(args[1]) &&
		    PyErr_ExceptionMatches(PyExc_AttributeError)) {
			PyObject *et, *ev, *tb;
			int has;

			PyErr_Fetch(&et, &ev, &tb);
			if ((has = has_unread(args[0], args[1])) == 0) {
				Py_XDECREF(et);
				Py_XDECREF(ev);
				Py_XDECREF(tb);
				return Py_NewRef(args[2]);
			}
			if (has < 0) {
				Py_XDECREF(et);
				Py_XDECREF(ev);
				Py_XDECREF(tb);
				return NULL;
			}
			PyErr_Restore(et, ev, tb);
		}
		return v;
	}
	return checked_read(args[0], args[1], &refused);
}

static PyObject *checked_hasattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *v;
	int refused, has;

	if (nargs != 2) {
		PyErr_SetString(PyExc_TypeError, "hasattr expected 2 arguments");
		return NULL;
	}
	v = checked_lookup(args[0], args[1], &refused);
	if (!v) {
		if (!refused &&
		    (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_AttributeError))) {
			PyErr_Clear();
			Py_RETURN_FALSE;
		}
		/* A name the code may not read (duck typing asks `hasattr(x, '__array__')`): the
		 * answer is whether x has it, found without reading it, as the value never is. */
		if (!refused || !PyUnicode_CheckExact(args[1]) ||
		    !PyErr_ExceptionMatches(PyExc_AttributeError))
			return NULL;
		PyErr_Clear();
		if ((has = has_unread(args[0], args[1])) < 0)
			return NULL;
		return PyBool_FromLong(has);
	}
	Py_DECREF(v);
	Py_RETURN_TRUE;
}

static PyObject *checked_setattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *name;
	int rc;

	if (nargs != 3) {
		PyErr_SetString(PyExc_TypeError, "setattr expected 3 arguments");
		return NULL;
	}
	name = pylayer_exact_str(args[1], "attribute name");
	rc = name && attr_check(name) == 0 ? directed_setattr(args[0], name, args[2]) : -1;
	Py_XDECREF(name);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *checked_delattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *name;
	int rc;

	if (nargs != 2) {
		PyErr_SetString(PyExc_TypeError, "delattr expected 2 arguments");
		return NULL;
	}
	name = pylayer_exact_str(args[1], "attribute name");
	rc = name && attr_check(name) == 0 ? directed_setattr(args[0], name, NULL) : -1;
	Py_XDECREF(name);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* args with its first n strings as exact str copies (a str subclass's own __hash__ and __eq__
 * would make a checked name look up another one). New reference, or NULL. */
static PyObject *exact_names(PyObject *args, Py_ssize_t n)
{
	PyObject *out = PyTuple_New(PyTuple_GET_SIZE(args));

	for (Py_ssize_t i = 0; out && i < PyTuple_GET_SIZE(args); i++) {
		PyObject *a = PyTuple_GET_ITEM(args, i);
		PyObject *v = i < n && PyUnicode_Check(a) ? PyUnicode_FromObject(a) : Py_NewRef(a);
		if (!v)
			Py_CLEAR(out);
		else
			PyTuple_SET_ITEM(out, i, v);
	}
	return out;
}

/* operator.attrgetter / methodcaller read attributes in C: check the names first. */
static PyObject *checked_attrgetter(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *names = exact_names(args, PyTuple_GET_SIZE(args)), *r = NULL;

	for (Py_ssize_t i = 0; names && i < PyTuple_GET_SIZE(names); i++)
		if (attr_check_dotted(PyTuple_GET_ITEM(names, i)) < 0)
			Py_CLEAR(names);
	if (names)
		r = PyObject_Call(real_attrgetter, names, kw);
	Py_XDECREF(names);
	return r;
}

static PyObject *checked_methodcaller(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *exact = exact_names(args, 1), *r = NULL;

	if (exact && (PyTuple_GET_SIZE(exact) == 0 || attr_check(PyTuple_GET_ITEM(exact, 0)) == 0))
		r = PyObject_Call(real_methodcaller, exact, kw);
	Py_XDECREF(exact);
	return r;
}

/* The classes themselves are reachable (type() of an instance): there they check no rule,
 * which the types' own rules enforce when the attribute is read, but while armed they keep
 * only exact copies of the names, so a str subclass's __hash__ and __eq__ cannot make a
 * lookup find another name than the one its characters spell. */
static newfunc attrgetter_new_real, methodcaller_new_real;
static ternaryfunc attrgetter_call_real, methodcaller_call_real;
static destructor attrgetter_dealloc_real, methodcaller_dealloc_real;
/* The getters made while armed (their addresses; forgotten when freed): the user's code chose
 * their names, whoever calls them (a library's singledispatch, pandas' apply). */
static PyObject *armed_getters;

static void getter_made(PyObject *g)
{
	PyObject *k;

	if (!g || !audit_armed)
		return;
	k = PyLong_FromVoidPtr(g);
	if (!armed_getters)
		armed_getters = PyDict_New();
	if (!k || !armed_getters || PyDict_SetItem(armed_getters, k, Py_None) < 0)
		PyErr_Clear(); /* not remembered: its calls read as their caller's frame says */
	Py_XDECREF(k);
}

static int getter_armed(PyObject *g)
{
	PyObject *k =
	    armed_getters && PyDict_GET_SIZE(armed_getters) ? PyLong_FromVoidPtr(g) : NULL;
	int in = k ? PyDict_Contains(armed_getters, k) == 1 : 0;

	Py_XDECREF(k);
	PyErr_Clear();
	return in;
}

static void getter_freed(PyObject *g)
{
	PyObject *t, *v, *tb, *k;

	if (!armed_getters || !PyDict_GET_SIZE(armed_getters))
		return;
	PyErr_Fetch(&t, &v, &tb);
	k = PyLong_FromVoidPtr(g);
	if (k && PyDict_DelItem(armed_getters, k) < 0)
		PyErr_Clear();
	Py_XDECREF(k);
	PyErr_Clear();
	PyErr_Restore(t, v, tb);
}

static void attrgetter_dealloc(PyObject *self)
{
	getter_freed(self);
	attrgetter_dealloc_real(self);
}

static void methodcaller_dealloc(PyObject *self)
{
	getter_freed(self);
	methodcaller_dealloc_real(self);
}

/* Their calls read by name in C, in the caller's frame: for the user's code when it calls, or
 * when it made the getter. */
static PyObject *getter_call(ternaryfunc real, PyObject *self, PyObject *args, PyObject *kw)
{
	void *d = NULL;
	int direct = audit_armed && (pyguard_reader_is_user() || getter_armed(self));
	PyObject *r;

	if (direct)
		d = pymodguard_direct();
	r = real(self, args, kw);
	if (direct)
		pymodguard_undirect(d);
	return r;
}

static PyObject *attrgetter_call(PyObject *self, PyObject *args, PyObject *kw)
{
	return getter_call(attrgetter_call_real, self, args, kw);
}

static PyObject *methodcaller_call(PyObject *self, PyObject *args, PyObject *kw)
{
	return getter_call(methodcaller_call_real, self, args, kw);
}

static PyObject *attrgetter_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *names, *r;

	if (!audit_armed)
		return attrgetter_new_real(type, args, kw);
	names = exact_names(args, PyTuple_GET_SIZE(args));
	r = names ? attrgetter_new_real(type, names, kw) : NULL;
	Py_XDECREF(names);
	getter_made(r);
	return r;
}

static PyObject *methodcaller_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *exact, *r;

	if (!audit_armed)
		return methodcaller_new_real(type, args, kw);
	exact = exact_names(args, 1);
	r = exact ? methodcaller_new_real(type, exact, kw) : NULL;
	Py_XDECREF(exact);
	getter_made(r);
	return r;
}

/* Put those constructors on operator's classes (zygote, once). */
static int operator_classes_fix(void)
{
	PyTypeObject *ag, *mc;

	if (!PyType_Check(real_attrgetter) || !PyType_Check(real_methodcaller)) {
		PyErr_SetString(PyExc_RuntimeError,
		                "operator's getters are not the expected classes");
		return -1;
	}
	ag = (PyTypeObject *)real_attrgetter;
	mc = (PyTypeObject *)real_methodcaller;
	if (!attrgetter_new_real) {
		attrgetter_new_real = ag->tp_new;
		methodcaller_new_real = mc->tp_new;
		attrgetter_call_real = ag->tp_call;
		methodcaller_call_real = mc->tp_call;
		attrgetter_dealloc_real = ag->tp_dealloc;
		methodcaller_dealloc_real = mc->tp_dealloc;
	}
	if (!attrgetter_new_real || !methodcaller_new_real || !attrgetter_call_real ||
	    !methodcaller_call_real) {
		PyErr_SetString(PyExc_RuntimeError, "operator's getters cannot be made");
		return -1;
	}
	ag->tp_new = attrgetter_new;
	mc->tp_new = methodcaller_new;
	/* Calls go through tp_call (a vectorcall would pass it by). */
	ag->tp_call = attrgetter_call;
	mc->tp_call = methodcaller_call;
	ag->tp_flags &= ~Py_TPFLAGS_HAVE_VECTORCALL;
	mc->tp_flags &= ~Py_TPFLAGS_HAVE_VECTORCALL;
	ag->tp_dealloc = attrgetter_dealloc;
	mc->tp_dealloc = methodcaller_dealloc;
	PyType_Modified(ag);
	PyType_Modified(mc);
	return 0;
}

/* string.Formatter.get_field returns the object a field names: check its attributes, and read
 * them as a reader by name (a real module answers as its proxy). The field is split as the
 * real one splits it; the first part is the formatter's get_value's. */
static PyObject *field_split;  /* _string.formatter_field_name_split */
static PyObject *field_parser; /* _string.formatter_parser */

/* "0.a[1].b": the attribute names of a field, as the real splitter finds them, checked by the
 * rules; a field holding a NUL is refused (a scan of its characters as a C string stopped
 * there, and "{0[\\0].__globals__}" read what the rules refuse: V64a H1). 0 or -1. */
static int field_attrs_checked(PyObject *field)
{
	PyObject *split, *item;
	int rc = 0;

	if (!PyUnicode_Check(field))
		return 0;
	if (PyUnicode_FindChar(field, 0, 0, PyUnicode_GET_LENGTH(field), 1) != -1) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_AttributeError,
			                "a format field's name holds no NUL character here");
		return -1;
	}
	if (!(split = PyObject_CallOneArg(field_split, field))) {
		if (!PyErr_ExceptionMatches(PyExc_ValueError))
			return -1;
		PyErr_Clear(); /* (malformed: the real one says so) */
		return 0;
	}
	if (!PyTuple_Check(split) || PyTuple_GET_SIZE(split) != 2) {
		Py_DECREF(split);
		PyErr_SetString(PyExc_TypeError, "field_name did not split");
		return -1;
	}
	{
		PyObject *rest = PyObject_GetIter(PyTuple_GET_ITEM(split, 1));
		while (rest && rc == 0 && (item = PyIter_Next(rest))) {
			if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2 &&
			    PyTuple_GET_ITEM(item, 0) == Py_True)
				rc = attr_check(PyTuple_GET_ITEM(item, 1));
			Py_DECREF(item);
		}
		if (!rest || (rc == 0 && PyErr_Occurred()))
			rc = -1;
		Py_XDECREF(rest);
	}
	Py_DECREF(split);
	return rc;
}

/* The attributes every field of a format text names (in its format specs too), checked by the
 * rules before str.format reads them in C: the module reads were the user's there, other
 * objects' were not (a function of the code's answered '{0.__globals__}'). 0 or -1. */
static int format_fields_checked(PyObject *text, int depth)
{
	PyObject *it, *item;
	int rc = 0;

	if (!PyUnicode_Check(text) || depth > 2)
		return 0; /* (the real one says what is wrong) */
	if (!(it = PyObject_CallOneArg(field_parser, text))) {
		PyErr_Clear(); /* (likewise) */
		return 0;
	}
	while (rc == 0 && (item = PyIter_Next(it))) {
		if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 4) {
			PyObject *field = PyTuple_GET_ITEM(item, 1),
			         *spec = PyTuple_GET_ITEM(item, 2);
			if (PyUnicode_Check(field))
				rc = field_attrs_checked(field);
			if (rc == 0 && PyUnicode_Check(spec))
				rc = format_fields_checked(spec, depth + 1);
		}
		Py_DECREF(item);
	}
	Py_DECREF(it);
	if (rc == 0 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_ValueError))
			return -1;
		PyErr_Clear(); /* (a malformed text: the real one says so) */
	}
	return rc;
}

static PyObject *checked_get_field(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"self", "field_name", "args", "kwargs", NULL};
	PyObject *fmt, *field, *a, *k, *split = NULL, *first, *rest, *obj = NULL, *item;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO:get_field", kwlist, &fmt, &field, &a, &k))
		return NULL;
	if (!PyUnicode_CheckExact(field)) {
		PyErr_SetString(PyExc_TypeError, "field_name must be a str");
		return NULL;
	}
	if (field_attrs_checked(field) < 0)
		return NULL;
	split = PyObject_CallOneArg(field_split, field);
	if (!split || !PyTuple_Check(split) || PyTuple_GET_SIZE(split) != 2) {
		if (split)
			PyErr_SetString(PyExc_TypeError, "field_name did not split");
		goto out;
	}
	first = PyTuple_GET_ITEM(split, 0);
	rest = PyTuple_GET_ITEM(split, 1);
	obj = PyObject_CallMethod(fmt, "get_value", "OOO", first, a, k);
	while (obj && (item = PyIter_Next(rest))) {
		PyObject *v = NULL;
		int is_attr = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2
		                  ? PyObject_IsTrue(PyTuple_GET_ITEM(item, 0))
		                  : -1;
		if (is_attr == 1 && PyUnicode_Check(PyTuple_GET_ITEM(item, 1)))
			v = directed_getattr(obj, PyTuple_GET_ITEM(item, 1));
		else if (is_attr == 0)
			v = PyObject_GetItem(obj, PyTuple_GET_ITEM(item, 1));
		else if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "field_name did not split");
		Py_DECREF(item);
		Py_SETREF(obj, v);
	}
	if (obj && PyErr_Occurred())
		Py_CLEAR(obj);
	if (obj)
		Py_SETREF(obj, PyTuple_Pack(2, obj, first));
out:
	Py_XDECREF(split);
	return obj;
}

/* str.format and str.format_map read the attributes a field names in C, in the caller's
 * frame: the user's code's reads when it calls them, or when the text is not the calling
 * library frame's own (a bound "{0.x}".format the user handed pandas' map or heapq as a key,
 * a '{'-style logging format). A library formatting its own literal text reads as a
 * library's. */
static int format_directed(PyObject *text)
{
	return audit_armed && (pyguard_reader_is_user() || pyguard_text_from_data(text));
}

static PyCFunctionWithKeywords str_format_real;
static PyCFunction str_format_map_real;

static PyObject *str_format(PyObject *self, PyObject *args, PyObject *kw)
{
	int direct = format_directed(self);
	void *d;
	PyObject *r;

	if (direct && format_fields_checked(self, 0) < 0)
		return NULL;
	d = direct ? pymodguard_direct() : NULL;
	r = str_format_real(self, args, kw);

	if (direct)
		pymodguard_undirect(d);
	return r;
}

static PyObject *str_format_map(PyObject *self, PyObject *map)
{
	int direct = format_directed(self);
	void *d;
	PyObject *r;

	if (direct && format_fields_checked(self, 0) < 0)
		return NULL;
	d = direct ? pymodguard_direct() : NULL;
	r = str_format_map_real(self, map);

	if (direct)
		pymodguard_undirect(d);
	return r;
}

/* print() looks sys.stdout up without owning it (CPython 3.11's builtin_print): an argument's
 * __str__ that puts another stream in its place (contextlib.redirect_stdout's __exit__) freed
 * the one print then wrote to. The streams print may write to are held for its call. */
static _PyCFunctionFastWithKeywords print_real;

static PyObject *print_holding(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
	PyObject *out = Py_XNewRef(PySys_GetObject("stdout")),
	         *err = Py_XNewRef(PySys_GetObject("stderr")), *r;

	r = print_real(module, args, nargs, kwnames);
	Py_XDECREF(out);
	Py_XDECREF(err);
	return r;
}

static int print_fix(void)
{
	PyObject *b = PyEval_GetBuiltins(), *p = b ? PyDict_GetItemString(b, "print") : NULL;
	PyMethodDef *def;

	if (!p || !PyCFunction_Check(p)) {
		PyErr_SetString(PyExc_RuntimeError, "print is not the expected function");
		return -1;
	}
	def = ((PyCFunctionObject *)p)->m_ml;
	if (print_real)
		return 0;
	if (def->ml_flags != (METH_FASTCALL | METH_KEYWORDS)) {
		PyErr_SetString(PyExc_RuntimeError, "print takes an unexpected convention");
		return -1;
	}
	print_real = (_PyCFunctionFastWithKeywords)(void (*)(void))def->ml_meth;
	def->ml_meth = (PyCFunction)(void (*)(void))print_holding;
	return 0;
}

/* The interpreter's getattr and hasattr, which library code calls (the user's code has the
 * checked ones): called with a name the calling frame's code does not hold among its constants,
 * the name came from data, possibly the user's (sympy's printer calls getattr(expr,
 * self.printmethod)(...), sklearn's scorer getattr(estimator, method)(...), codecs'
 * StreamReader.__getattr__ getattr(self.stream, name), pprint each field a class lists); such
 * a read is marked as by data, which pydata.c's library-only attributes refuse. A name that
 * hands out an object's own machinery (its attribute access, its state and reduction, its
 * namespace) answers as a missing attribute unless the library names it itself. */
static _PyCFunctionFast getattr_real, hasattr_real;
/* functools.update_wrapper as libraries imported it (sklearn's delayed functions), which reads
 * the wrapper's __dict__ by the name its defaults hold (the one the user's code has is
 * library_fixes' checked version). */
static PyObject *update_wrapper_code;

static int update_wrapper_reads_dict(PyObject *name)
{
	PyFrameObject *f;
	PyCodeObject *co;
	int is;

	if (!update_wrapper_code || PyUnicode_CompareWithASCIIString(name, "__dict__") != 0)
		return 0;
	f = PyEval_GetFrame();
	co = f ? PyFrame_GetCode(f) : NULL;
	is = co && (PyObject *)co == update_wrapper_code;
	Py_XDECREF(co);
	return is;
}

static int machinery_name(PyObject *name)
{
	static const char *const names[] = {
	    "__getattribute__",
	    "__getattr__",
	    "__setattr__",
	    "__delattr__",
	    "__setstate__",
	    "__getstate__",
	    "__reduce__",
	    "__reduce_ex__",
	    "__getnewargs__",
	    "__getnewargs_ex__",
	    "__dict__",
	    "__init_subclass__",
	    "__subclasses__",
	    /* a descriptor's own methods (a bound cached_property.__get__ read a built-in type's
	     * own dict for the code: its setters, past type.__setattr__'s checks, V72b H1), and
	     * what the rules keep from the code: wrapped functions, bound selves, a function's
	     * insides, a class's bases and order */
	    "__get__",
	    "__set__",
	    "__delete__",
	    "__set_name__",
	    "__wrapped__",
	    "__self__",
	    "__func__",
	    "__globals__",
	    "__closure__",
	    "__code__",
	    "__builtins__",
	    "__forward_code__",
	    "__mro__",
	    "__bases__",
	    "__base__",
	    NULL,
	};
	const char *s = PyUnicode_AsUTF8(name);

	if (!s) {
		PyErr_Clear();
		return 1;
	}
	return in_list(s, names);
}

/* A machinery name passes when the calling library code names it itself: loaded as the call's
 * argument, or from a tuple of names its code lists. Holding it as a constant elsewhere is not
 * enough (sympy's PicklableWithSlots.__getstate__ holds '__getstate__' and reads each name of a
 * class's __slots__). */
static int library_names_machinery(PyObject *name)
{
	PyFrameObject *f = PyEval_GetFrame();

	return (f && pylayer_call_passes_const(f, name, 1)) || pyguard_code_lists(name) ||
	       update_wrapper_reads_dict(name);
}

/* A name that is a str subclass names the attribute of its characters, checked as such (passed
 * unchecked, pprint's getattr of a dataclass field it named reached __setstate__: V87c H2):
 * copy gets args with the exact str in the name's place. A new reference to it, or NULL. */
static PyObject *exact_name(PyObject *const *args, Py_ssize_t nargs, PyObject **copy)
{
	PyObject *exact = PyUnicode_FromObject(args[1]);

	for (Py_ssize_t i = 0; exact && i < nargs; i++)
		copy[i] = i == 1 ? exact : args[i];
	return exact;
}

static PyObject *by_data_read(_PyCFunctionFast real, PyObject *module, PyObject *const *args,
                              Py_ssize_t nargs, int has)
{
	PyObject *name = nargs >= 2 ? args[1] : NULL, *name_before, *r;
	void *before;

	if (audit_armed && name && PyUnicode_Check(name) && !PyUnicode_CheckExact(name) &&
	    nargs <= 3) {
		PyObject *copy[3], *exact = exact_name(args, nargs, copy);

		if (!exact)
			return NULL;
		r = by_data_read(real, module, copy, nargs, has);
		Py_DECREF(exact);
		return r;
	}
	if (!audit_armed || !name || !PyUnicode_CheckExact(name) || pyguard_reader_is_user())
		return real(module, args, nargs);
	if (machinery_name(name)) {
		if (library_names_machinery(name))
			return real(module, args, nargs);
		if (has)
			Py_RETURN_FALSE;
		if (nargs == 3)
			return Py_NewRef(args[2]);
		return PyErr_Format(PyExc_AttributeError,
		                    "Forbidden access to dunder attribute: %U (named by data to "
		                    "a library's getattr)",
		                    name);
	}
	if (!pyguard_text_from_data(name))
		return real(module, args, nargs);
	before = pyguard_data_read(name, &name_before);
	r = real(module, args, nargs);
	pyguard_data_read_end(before, name_before);
	return r;
}

static PyObject *getattr_by_data(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	return by_data_read(getattr_real, module, args, nargs, 0);
}

static PyObject *hasattr_by_data(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	return by_data_read(hasattr_real, module, args, nargs, 1);
}

/* The interpreter's setattr and delattr, as library code calls them: a name from data that
 * replaces an object's whole namespace or its class (argparse's setattr(namespace, dest, v) with
 * a dest of '__dict__' emptied logging.root's state, V73b L1) is refused as the user's own
 * statement is, unless the library names it itself. */
static _PyCFunctionFast setattr_real, delattr_real;

static PyObject *by_data_write(_PyCFunctionFast real, const char *what, PyObject *module,
                               PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *name = nargs >= 2 ? args[1] : NULL;

	if (audit_armed && name && PyUnicode_Check(name) && !PyUnicode_CheckExact(name) &&
	    nargs <= 3) {
		PyObject *copy[3], *r, *exact = exact_name(args, nargs, copy);

		if (!exact)
			return NULL;
		r = by_data_write(real, what, module, copy, nargs);
		Py_DECREF(exact);
		return r;
	}
	if (!audit_armed || !name || !PyUnicode_CheckExact(name) ||
	    (PyUnicode_CompareWithASCIIString(name, "__dict__") != 0 &&
	     PyUnicode_CompareWithASCIIString(name, "__class__") != 0) ||
	    pyguard_reader_is_user() || library_names_machinery(name))
		return real(module, args, nargs);
	return PyErr_Format(PyExc_AttributeError,
	                    "Forbidden access to dunder attribute: %U (named by data to a "
	                    "library's %s)",
	                    name, what);
}

static PyObject *setattr_by_data(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	return by_data_write(setattr_real, "setattr", module, args, nargs);
}

static PyObject *delattr_by_data(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	return by_data_write(delattr_real, "delattr", module, args, nargs);
}

static int builtin_swap(const char *name, _PyCFunctionFast *real, _PyCFunctionFast with)
{
	PyObject *b = PyEval_GetBuiltins(), *f = b ? PyDict_GetItemString(b, name) : NULL;
	PyMethodDef *def;

	if (!f || !PyCFunction_Check(f) ||
	    ((PyCFunctionObject *)f)->m_ml->ml_flags != METH_FASTCALL) {
		PyErr_Format(PyExc_RuntimeError, "%s is not the expected function", name);
		return -1;
	}
	def = ((PyCFunctionObject *)f)->m_ml;
	if (*real)
		return 0;
	*real = (_PyCFunctionFast)(void (*)(void))def->ml_meth;
	def->ml_meth = (PyCFunction)(void (*)(void))with;
	return 0;
}

static int getattr_fix(void)
{
	PyObject *ft = PyImport_ImportModule("functools");
	PyObject *uw = ft ? PyObject_GetAttrString(ft, "update_wrapper") : NULL;

	if (!update_wrapper_code && uw && PyFunction_Check(uw))
		update_wrapper_code = Py_NewRef(PyFunction_GET_CODE(uw));
	Py_XDECREF(uw);
	Py_XDECREF(ft);
	if (!update_wrapper_code) {
		PyErr_SetString(PyExc_RuntimeError, "functools.update_wrapper is not as known");
		return -1;
	}
	return builtin_swap("getattr", &getattr_real, getattr_by_data) < 0 ||
	               builtin_swap("hasattr", &hasattr_real, hasattr_by_data) < 0 ||
	               builtin_swap("setattr", &setattr_real, setattr_by_data) < 0 ||
	               builtin_swap("delattr", &delattr_real, delattr_by_data) < 0
	           ? -1
	           : 0;
}

/* Put those on str's methods (zygote, once): the descriptors keep their definitions, whose
 * functions are swapped (their calls read the function from the definition each time). */
static int str_format_fix(void)
{
	PyObject *f = PyDict_GetItemString(PyUnicode_Type.tp_dict, "format");
	PyObject *fm = PyDict_GetItemString(PyUnicode_Type.tp_dict, "format_map");
	PyMethodDef *df, *dfm;

	if (!f || !fm || Py_TYPE(f) != &PyMethodDescr_Type || Py_TYPE(fm) != &PyMethodDescr_Type) {
		PyErr_SetString(PyExc_RuntimeError, "str.format is not the expected method");
		return -1;
	}
	df = ((PyMethodDescrObject *)f)->d_method;
	dfm = ((PyMethodDescrObject *)fm)->d_method;
	if (str_format_real)
		return 0;
	if (df->ml_flags != (METH_VARARGS | METH_KEYWORDS) || dfm->ml_flags != METH_O) {
		PyErr_SetString(PyExc_RuntimeError, "str.format takes an unexpected convention");
		return -1;
	}
	str_format_real = (PyCFunctionWithKeywords)(void (*)(void))df->ml_meth;
	str_format_map_real = dfm->ml_meth;
	df->ml_meth = (PyCFunction)(void (*)(void))str_format;
	dfm->ml_meth = str_format_map;
	return 0;
}

/* __import__ for user code: only the allowlist, and only as proxies (pyproxy.c); a module
 * allowed but not loaded yet is imported by the real machinery (in a worker, the supervisor
 * serves it). C code imports through the caller's builtins too (PyImport_Import, as
 * time.strptime does for _strptime), with an empty list as fromlist, and then takes the
 * module from sys.modules itself: that call gets None when the module is already loaded, so
 * it returns nothing to the user either. */
static PyObject *safe_import(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"name", "globals", "locals", "fromlist", "level", NULL};
	PyObject *name, *globals = NULL, *locals = NULL, *fromlist = NULL, *proxy;
	int level = 0, from;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "U|OOOi:__import__", kwlist, &name, &globals,
	                                 &locals, &fromlist, &level))
		return NULL;
	if (!PyUnicode_CheckExact(name)) {
		/* A str subclass's __hash__ and __eq__ would look up another module than the one
		 * whose name is checked. */
		PyErr_SetString(PyExc_TypeError, "__import__() argument 1 must be a str");
		return NULL;
	}
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
	proxy = pyproxy_get(name, 1);
	if (!proxy)
		return PyErr_Occurred() ? NULL : pyproxy_refuse(name, from);
	/* "import a.b" binds a: its proxy, or the stub of a package only a.b of is allowed. */
	if (!from)
		proxy = pyproxy_binding(name);
	return Py_XNewRef(proxy);
}

/* ---- imports made by C code ----------------------------------------------------------------- */

/* C code imports a module it needs by name (PyImport_Import, PyImport_ImportModule): memoryview's
 * comparison its struct module, datetime its time module, pickle a class's module. CPython's
 * version calls the __import__ in the builtins of the innermost frame's globals and then takes
 * the module from sys.modules: under the user's frames, whatever the code put there (its own
 * function in its builtins dict, or a dict of its own as __builtins__), run in the middle of the
 * C routine (a comparison's buffer freed by that function and read on). Both are replaced
 * (their entries jump here): under the user's frames the sandbox's import is called as a C
 * function (the allowlist, or a module already loaded), elsewhere the interpreter's own; no
 * object any frame's builtins hold is called. */
static PyObject *import_for_c(PyObject *name)
{
	PyObject *fromlist, *r;

	if (!name || !PyUnicode_Check(name)) {
		if (name)
			PyErr_SetString(PyExc_TypeError, "module name must be a str");
		return NULL;
	}
	if (!(fromlist = PyList_New(0)))
		return NULL;
	if (audit_armed && pyguard_reader_is_user()) {
		PyObject *args = Py_BuildValue("(OOOOi)", name, Py_None, Py_None, fromlist, 0);
		r = args ? safe_import(NULL, args, NULL) : NULL;
		Py_XDECREF(args);
	} else {
		r = PyImport_ImportModuleLevelObject(name, NULL, NULL, fromlist, 0);
	}
	Py_DECREF(fromlist);
	if (!r)
		return NULL;
	Py_DECREF(r);
	r = PyImport_GetModule(name);
	if (!r && !PyErr_Occurred())
		PyErr_SetObject(PyExc_KeyError, name);
	return r;
}

static PyObject *import_module_for_c(const char *name)
{
	PyObject *n = PyUnicode_FromString(name), *r = n ? import_for_c(n) : NULL;

	Py_XDECREF(n);
	return r;
}

/* Write n bytes over the zygote's own code at `at` (CPython is linked in): through its
 * /proc/self/mem (zygote_self_mem), which writes a read-only page without making any page
 * writable and executable (a service run with MemoryDenyWriteExecute refuses mprotect with
 * PROT_EXEC); where the kernel refuses that, the page is made writable for the write. 0 or -1
 * with errno. */
int pylayer_code_write(void *at, const void *bytes, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t first = (uintptr_t)at & ~(uintptr_t)(page - 1);
	size_t len = ((uintptr_t)at + n - first + (size_t)page - 1) & ~(size_t)(page - 1);

	if (zygote_self_mem >= 0 &&
	    pwrite(zygote_self_mem, bytes, n, (off_t)(uintptr_t)at) == (ssize_t)n) {
		__builtin___clear_cache((char *)at, (char *)at + n);
		return memcmp(at, bytes, n) == 0 ? 0 : (errno = EIO, -1);
	}
	if (mprotect((void *)first, len, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -1;
	memcpy(at, bytes, n);
	__builtin___clear_cache((char *)at, (char *)at + n);
	return mprotect((void *)first, len, PROT_READ | PROT_EXEC);
}

/* The function at `at` jumps to `to` from its first instruction: an absolute jump through
 * rax, a scratch register at a call's entry. 0 or -1 with errno. */
int pylayer_entry_redirect(void *at, void *to)
{
#if defined(__x86_64__)
	unsigned char jump[12] = {0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe0};
	uintptr_t target = (uintptr_t)to;

	memcpy(jump + 2, &target, sizeof(target));
	return pylayer_code_write(at, jump, sizeof(jump));
#else
	(void)at;
	(void)to;
	errno = ENOSYS;
	return -1;
#endif
}

static int imports_by_c_fix(void)
{
	if (pylayer_entry_redirect((void *)PyImport_Import, (void *)import_for_c) < 0 ||
	    pylayer_entry_redirect((void *)PyImport_ImportModule, (void *)import_module_for_c) <
	        0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	return 0;
}

/* What the user's "from m import a, b" and "import m.a as c" are compiled into (interp.c),
 * instead of IMPORT_FROM: from_names("m", ("a", "b"), 0) gives (m.a, m.b) from m's proxy, a
 * submodule's proxy when m has no such attribute (imported if allowed, as CPython's from-import
 * does); from_names("m.a", None, 0) gives m.a's proxy. Nothing here looks in sys.modules by a
 * name the user's objects give. */
static int is_star(PyObject *o)
{
	return PyUnicode_CheckExact(o) && PyUnicode_CompareWithASCIIString(o, "*") == 0;
}

/* from module import *, into the namespace of the code that runs it (the user's module: the
 * statement is allowed only there): the names the proxy's __all__ lists, each by the attribute
 * rules, else its public names. */
static PyObject *import_star(PyObject *proxy, PyObject *module)
{
	PyObject *g = PyEval_GetGlobals(), *m = pyguard_user_module(), *all, *seq, *names, *k, *v;
	Py_ssize_t pos = 0;
	int rc = 0;

	/* Called from anywhere else (a library handed the builtin as a callback), it would write
	 * that frame's namespace: a library module's. */
	if (!g || !m || g != PyModule_GetDict(m))
		return PyErr_Format(PyExc_ImportError,
		                    "from %U import *: only the code's own namespace takes it",
		                    module);
	all = PyDict_GetItemString(PyModule_GetDict(proxy), "__all__");
	if (!all) {
		names = PyList_New(0);
		while (names && PyDict_Next(PyModule_GetDict(proxy), &pos, &k, &v))
			if (PyUnicode_CheckExact(k) && PyUnicode_READ_CHAR(k, 0) != '_' &&
			    PyList_Append(names, k) < 0)
				Py_CLEAR(names);
		all = names;
	} else {
		Py_INCREF(all);
	}
	seq = all ? PySequence_Fast(all, "__all__ must be a sequence of names") : NULL;
	Py_XDECREF(all);
	if (!seq)
		return NULL;
	for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
		PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
		if (!PyUnicode_CheckExact(name)) {
			PyErr_Format(PyExc_TypeError, "Item in %U.__all__ must be str, not %.100s",
			             module, Py_TYPE(name)->tp_name);
			rc = -1;
			break;
		}
		v = attr_check(name) == 0 ? PyObject_GetAttr(proxy, name) : NULL;
		rc = v ? PyDict_SetItem(g, name, v) : -1;
		Py_XDECREF(v);
	}
	Py_DECREF(seq);
	return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *from_names(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *module, *names, *proxy, *out;
	long level;

	if (nargs != 3 || !PyUnicode_CheckExact(args[0]) ||
	    (args[1] != Py_None && !PyTuple_Check(args[1]) && !is_star(args[1])) ||
	    !PyLong_Check(args[2])) {
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
	proxy = pyproxy_get(module, 1);
	/* "from xml.dom import minidom": the package's stub, its allowed submodules named */
	if (!proxy && !PyErr_Occurred() && names != Py_None && PyTuple_Check(names))
		proxy = pyproxy_from_stub(module, names);
	if (!proxy)
		return PyErr_Occurred() ? NULL : pyproxy_refuse(module, names != Py_None);
	if (names == Py_None)
		return Py_NewRef(proxy);
	if (is_star(names))
		return import_star(proxy, module);
	out = PyTuple_New(PyTuple_GET_SIZE(names));
	for (Py_ssize_t i = 0; out && i < PyTuple_GET_SIZE(names); i++) {
		PyObject *name = PyTuple_GET_ITEM(names, i), *v;

		if (!PyUnicode_CheckExact(name)) {
			PyErr_SetString(PyExc_TypeError, "from_names(module, names, level)");
			Py_CLEAR(out);
			break;
		}
		/* the attribute rules, as for `m.name` (the code may call this with names of its
		 * own: a proxy's __dict__ was handed out) */
		if (attr_check(name) < 0) {
			Py_CLEAR(out);
			break;
		}
		v = PyObject_GetAttr(proxy, name);
		if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) {
			PyObject *full = PyUnicode_FromFormat("%U.%U", module, name);
			const char *why = pyproxy_left_out(module, name);
			PyErr_Clear();
			v = full ? Py_XNewRef(pyproxy_get(full, 1)) : NULL;
			/* No such submodule either: CPython's ImportError, not the import's. */
			if (!v && PyErr_ExceptionMatches(PyExc_ModuleNotFoundError))
				PyErr_Clear();
			if (!v && !PyErr_Occurred()) {
				PyObject *msg = PyUnicode_FromFormat(
				    "cannot import name '%U' from '%U'%s%s", name, module,
				    why ? ": " : "", why ? why : "");
				if (msg) {
					PyErr_SetImportError(msg, module, NULL);
					Py_DECREF(msg);
				}
			}
			Py_XDECREF(full);
		}
		if (!v)
			Py_CLEAR(out);
		else
			PyTuple_SET_ITEM(out, i, v);
	}
	return out;
}

/* exit(code=None), quit(code=None): SystemExit(code), as the interactive ones raise it. */
static PyObject *raise_exit(PyObject *self, PyObject *args)
{
	PyObject *code = NULL, *e;

	(void)self;
	if (!PyArg_UnpackTuple(args, "exit", 0, 1, &code))
		return NULL;
	e = code ? PyObject_CallOneArg(PyExc_SystemExit, code)
	         : PyObject_CallNoArgs(PyExc_SystemExit);
	if (e) {
		PyErr_SetObject(PyExc_SystemExit, e);
		Py_DECREF(e);
	}
	return NULL;
}

/* input(prompt=''): the code runs with no console, so there is nothing to read. The builtin is
 * removed (it would read the worker's stdin); this one writes the prompt where print() writes,
 * reads nothing, and raises EOFError, as input() does at the end of its input, saying what to
 * do instead. */
static PyObject *no_input(PyObject *self, PyObject *args)
{
	PyObject *prompt = NULL, *out;
	int rc = 0;

	(void)self;
	if (!PyArg_UnpackTuple(args, "input", 0, 1, &prompt))
		return NULL;
	out = Py_XNewRef(PySys_GetObject("stdout"));
	if (prompt && out && out != Py_None)
		rc = PyFile_WriteObject(prompt, out, Py_PRINT_RAW);
	Py_XDECREF(out);
	if (rc < 0)
		return NULL;
	PyErr_SetString(PyExc_EOFError,
	                "input() has nothing to read: the code runs without a console, so no one "
	                "can type an answer; put the value in the code instead (name = 'Ada', "
	                "not name = input())");
	return NULL;
}

/* globals(), locals() and vars(): what the user's code asks of its own frame, as a snapshot of
 * its names. The builtins are removed: called from C under a library's frame (a callback) they
 * would answer that frame's namespace, and a writable namespace of the user's would take keys
 * (__builtins__, __name__) its statements cannot write. These answer only a frame of the user's
 * code, read-only at the top level (a copy behind a mapping proxy: writing to it is a TypeError,
 * where the builtin's writes would make variables) and a dict copy in a function (as the
 * builtin's is), in both without the dunder names. */
/* globals() hands the code a read-only snapshot of its names (its namespace's dunder names, the
 * builtins it runs with among them, stay its frames'): a view of them that says so, and what
 * to do instead, when written to (globals()[f'df_{name}'] = ... said only that a mappingproxy
 * takes no assignment). */
struct names_view {
	PyObject_HEAD PyObject *proxy; /* a mappingproxy of the snapshot */
};

static PyObject *names_refused(void)
{
	PyErr_SetString(PyExc_TypeError,
	                "globals() is a read-only snapshot of the code's names in the sandbox: "
	                "assign a name directly (x = ...), or keep values made by name in a dict "
	                "(frames = {}; frames[f'df_{name}'] = df)");
	return NULL;
}

/* Its own methods (those that would write, refused), else the snapshot's (keys, items, get...). */
static PyObject *names_view_getattro(PyObject *self, PyObject *name)
{
	PyObject *r = PyObject_GenericGetAttr(self, name);

	if (r || !PyErr_ExceptionMatches(PyExc_AttributeError) || !PyUnicode_Check(name) ||
	    PyUnicode_READ_CHAR(name, 0) == '_')
		return r;
	PyErr_Clear();
	return PyObject_GetAttr(((struct names_view *)self)->proxy, name);
}

static PyObject *names_view_subscript(PyObject *self, PyObject *key)
{
	return PyObject_GetItem(((struct names_view *)self)->proxy, key);
}

static int names_view_assign(PyObject *self, PyObject *key, PyObject *value)
{
	(void)self;
	(void)key;
	(void)value;
	names_refused();
	return -1;
}

static Py_ssize_t names_view_length(PyObject *self)
{
	return PyObject_Length(((struct names_view *)self)->proxy);
}

static int names_view_contains(PyObject *self, PyObject *key)
{
	return PySequence_Contains(((struct names_view *)self)->proxy, key);
}

static PyObject *names_view_iter(PyObject *self)
{
	return PyObject_GetIter(((struct names_view *)self)->proxy);
}

static PyObject *names_view_repr(PyObject *self)
{
	return PyObject_Repr(((struct names_view *)self)->proxy);
}

static PyObject *names_view_compare(PyObject *self, PyObject *other, int op)
{
	return PyObject_RichCompare(((struct names_view *)self)->proxy, other, op);
}

static PyObject *names_view_refuse(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	(void)args;
	(void)kw;
	return names_refused();
}

static void names_view_dealloc(PyObject *self)
{
	Py_XDECREF(((struct names_view *)self)->proxy);
	PyObject_Free(self);
}

static PyMethodDef names_view_methods[] = {
    {"update", (PyCFunction)(void (*)(void))names_view_refuse, METH_VARARGS | METH_KEYWORDS, NULL},
    {"setdefault", (PyCFunction)(void (*)(void))names_view_refuse, METH_VARARGS | METH_KEYWORDS,
     NULL},
    {"pop", (PyCFunction)(void (*)(void))names_view_refuse, METH_VARARGS | METH_KEYWORDS, NULL},
    {"popitem", (PyCFunction)(void (*)(void))names_view_refuse, METH_VARARGS | METH_KEYWORDS, NULL},
    {"clear", (PyCFunction)(void (*)(void))names_view_refuse, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods names_view_mapping = {
    .mp_length = names_view_length,
    .mp_subscript = names_view_subscript,
    .mp_ass_subscript = names_view_assign,
};

static PySequenceMethods names_view_sequence = {.sq_contains = names_view_contains};

static PyTypeObject names_view_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "globals_snapshot",
    .tp_basicsize = sizeof(struct names_view),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_MAPPING,
    .tp_dealloc = names_view_dealloc,
    .tp_getattro = names_view_getattro,
    .tp_repr = names_view_repr,
    .tp_as_mapping = &names_view_mapping,
    .tp_as_sequence = &names_view_sequence,
    .tp_iter = names_view_iter,
    .tp_richcompare = names_view_compare,
    .tp_methods = names_view_methods,
    .tp_doc = "The code's names when globals() was called; read-only.",
};

static PyObject *names_view_new(PyObject *proxy)
{
	struct names_view *v;

	if (!proxy || (PyType_Ready(&names_view_type) < 0) ||
	    !(v = PyObject_New(struct names_view, &names_view_type))) {
		Py_XDECREF(proxy);
		return NULL;
	}
	v->proxy = proxy;
	return (PyObject *)v;
}

static PyObject *own_names(const char *what, int proxy)
{
	PyFrameObject *f = PyEval_GetFrame();
	PyObject *g, *b, *names, *copy, *key, *value, *r;
	Py_ssize_t pos = 0;
	int user;

	if (!f) {
		PyErr_Format(PyExc_RuntimeError, "%s(): no frame", what);
		return NULL;
	}
	g = PyFrame_GetGlobals(f);
	b = PyFrame_GetBuiltins(f);
	user = pyguard_globals_are_user(g, b);
	Py_XDECREF(b);
	if (!user) {
		Py_XDECREF(g);
		PyErr_Format(PyExc_RuntimeError,
		             "%s() answers the code's own names, not those of a library calling it",
		             what);
		return NULL;
	}
	if (proxy || !(names = PyEval_GetLocals())) {
		PyErr_Clear();
		names = g;
	}
	copy = PyDict_New();
	while (copy && PyDict_Next(names, &pos, &key, &value))
		if (!PyUnicode_Check(key) || PyUnicode_GET_LENGTH(key) < 2 ||
		    PyUnicode_READ_CHAR(key, 0) != '_' || PyUnicode_READ_CHAR(key, 1) != '_')
			if (PyDict_SetItem(copy, key, value) < 0)
				Py_CLEAR(copy);
	proxy = proxy || names == g;
	Py_XDECREF(g);
	if (!copy || !proxy)
		return copy;
	r = PyDictProxy_New(copy);
	Py_DECREF(copy);
	return r;
}

static PyObject *own_globals(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return names_view_new(own_names("globals", 1));
}

static PyObject *own_locals(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return own_names("locals", 0);
}

/* An object's __dict__ (obj.__dict__, which interp.c compiles into this, and vars(obj)): the
 * instance dict of an object of a class the user's code made (its own attributes, which
 * getattr reads anyway); of any other object (a library's, a class, a module: their
 * namespaces hold what the attribute rules refuse) refused. */
/* Is every class of t's MRO a class made by a class statement (object aside)? A built-in
 * class beneath (an exception group, io.FileIO, array.array, dict) guards some attributes of
 * its objects when they are set (setattro): its objects' dicts are not handed out. */
static int python_classes_only(PyTypeObject *t)
{
	static destructor plain_dealloc;
	PyObject *mro = t->tp_mro;

	if (!plain_dealloc) {
		PyObject *probe =
		    PyObject_CallFunction((PyObject *)&PyType_Type, "s()N", "probe", PyDict_New());
		if (!probe) {
			PyErr_Clear();
			return 0;
		}
		plain_dealloc = ((PyTypeObject *)probe)->tp_dealloc;
		Py_DECREF(probe);
	}
	for (Py_ssize_t i = 0; mro && PyTuple_Check(mro) && i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if (c != &PyBaseObject_Type &&
		    (!(c->tp_flags & Py_TPFLAGS_HEAPTYPE) || c->tp_dealloc != plain_dealloc))
			return 0;
	}
	return mro != NULL;
}

/* argparse's Namespace: a plain object of the attributes parse_args set (vars(args) is how
 * scripts read them all); logging's LogRecord, whose attributes a formatter of the code's reads
 * as record.__dict__ (a JSON formatter). Taken in the zygote when their modules are among the
 * imports. types.SimpleNamespace's dict holds the attributes it was given and set, nothing its
 * C code calls. */
static PyTypeObject *argparse_namespace, *log_record, *simple_namespace;

/* Is obj's own __dict__ the user's code's to read (and to replace)? */
static int object_dict_shown(PyObject *obj)
{
	return !PyType_Check(obj) && !PyModule_Check(obj) &&
	       ((pyguard_user_class((PyObject *)Py_TYPE(obj)) &&
	         python_classes_only(Py_TYPE(obj))) ||
	        (argparse_namespace && Py_IS_TYPE(obj, argparse_namespace)) ||
	        (log_record && Py_IS_TYPE(obj, log_record)) ||
	        (simple_namespace && Py_IS_TYPE(obj, simple_namespace)));
}

/* Is obj a function (of Python's, Cython's, functools', a method or a class's wrapper of one),
 * whose own __dict__ holds the attributes update_wrapper copies and nothing its type's C code
 * looks up? A built-in object's dict may hold what its C code calls: a FileIO's readinto was
 * called with a reader's buffer (V66b H1). */
static int function_dict(PyObject *obj)
{
	static const char *const kinds[] = {"functools.partial", "functools._lru_cache_wrapper",
	                                    "classmethod", "staticmethod", NULL};
	const char *n = Py_TYPE(obj)->tp_name, *tail;

	if (PyFunction_Check(obj))
		return 1;
	if (PyMethod_Check(obj)) /* (its __dict__ is its function's) */
		return function_dict(PyMethod_GET_FUNCTION(obj));
	for (const char *const *k = kinds; *k; k++)
		if (strcmp(n, *k) == 0)
			return 1;
	tail = strrchr(n, '.');
	return strcmp(tail ? tail + 1 : n, "cython_function_or_method") == 0;
}

static PyObject *object_dict(PyObject *obj)
{
	if (object_dict_shown(obj))
		return PyObject_GenericGetDict(obj, NULL);
	PyErr_Format(PyExc_AttributeError,
	             "Forbidden access to dunder attribute: __dict__ of a '%.100s' object; an "
	             "object shows its __dict__ (and vars) only when the code defined its class, "
	             "on Python classes alone (not on a built-in class such as Exception or "
	             "dict): dir(x) and getattr(x, name) read any object's attributes "
	             "(dataclasses.asdict for a dataclass, get_params() for a model)",
	             Py_TYPE(obj)->tp_name);
	return NULL;
}

static int argparse_fix(void)
{
	PyObject *m = PyDict_GetItemString(PyImport_GetModuleDict(), "argparse");
	PyObject *ns = m ? PyObject_GetAttrString(m, "Namespace") : NULL;

	if (!m)
		return 0;
	if (!ns || !PyType_Check(ns) || !python_classes_only((PyTypeObject *)ns)) {
		Py_XDECREF(ns);
		PyErr_SetString(PyExc_RuntimeError, "argparse.Namespace is not as known");
		return -1;
	}
	argparse_namespace = (PyTypeObject *)ns; /* kept for good */
	return 0;
}

static int plain_records_fix(void)
{
	PyObject *m = PyDict_GetItemString(PyImport_GetModuleDict(), "logging");
	PyObject *t = m ? PyObject_GetAttrString(m, "LogRecord") : NULL;

	if (m && (!t || !PyType_Check(t) || !python_classes_only((PyTypeObject *)t))) {
		Py_XDECREF(t);
		PyErr_SetString(PyExc_RuntimeError, "logging.LogRecord is not as known");
		return -1;
	}
	log_record = (PyTypeObject *)t; /* kept for good (or NULL) */
	m = PyImport_ImportModule("types");
	t = m ? PyObject_GetAttrString(m, "SimpleNamespace") : NULL;
	Py_XDECREF(m);
	if (!t || !PyType_Check(t) || (((PyTypeObject *)t)->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
		Py_XDECREF(t);
		PyErr_SetString(PyExc_RuntimeError, "types.SimpleNamespace is not as known");
		return -1;
	}
	simple_namespace = (PyTypeObject *)t; /* kept for good */
	return 0;
}

static PyObject *dict_of(PyObject *self, PyObject *obj)
{
	(void)self;
	return object_dict(obj);
}

/* <refused>(obj, name): the read of an attribute the rules refuse, refused where it runs. */
static PyObject *refused_attr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 2 || !PyUnicode_Check(args[1])) {
		PyErr_SetString(PyExc_TypeError, "an attribute read the rules refuse");
		return NULL;
	}
	if (attr_check(args[1]) == 0)
		PyErr_SetString(PyExc_AttributeError, "an attribute read the rules refuse");
	return NULL;
}

int pylayer_attr_refused(const char *name)
{
	return attr_refusal(name) != NULL;
}

int pylayer_match_args_checked(PyObject *v)
{
	const char *s, *why;

	if (!PyTuple_CheckExact(v)) {
		PyErr_Format(
		    PyExc_TypeError,
		    "__match_args__ must be a tuple of attribute names in the sandbox, not "
		    "'%.100s'",
		    Py_TYPE(v)->tp_name);
		return -1;
	}
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); i++) {
		PyObject *name = PyTuple_GET_ITEM(v, i);
		if (!PyUnicode_CheckExact(name)) {
			PyErr_Format(
			    PyExc_TypeError,
			    "__match_args__ must name attributes by plain str, not '%.100s'",
			    Py_TYPE(name)->tp_name);
			return -1;
		}
		/* TypeError: MATCH_CLASS takes an AttributeError for a class without the names */
		if (PyUnicode_GET_LENGTH(name) > ATTR_NAME_MAX) {
			PyErr_Format(PyExc_TypeError,
			             "__match_args__ names an attribute longer than %d characters, "
			             "which the sandbox refuses",
			             ATTR_NAME_MAX);
			return -1;
		}
		if (!(s = PyUnicode_AsUTF8(name)))
			return -1;
		if ((why = attr_refusal(s))) {
			PyErr_Format(PyExc_TypeError,
			             "__match_args__ names an attribute the sandbox "
			             "refuses (%s: %s)",
			             why, s);
			return -1;
		}
	}
	return 0;
}

/* Modules whose functions read an attribute by a name their caller gives (sklearn's
 * get_params of a kernel, a meta-estimator's), loaded late: they read with the user's getattr
 * and hasattr (the attribute rules apply), as library_fixes gives the ones loaded at start. */
void pylayer_reads_with_rules(PyObject *module, const char *name)
{
	static const char *const names[] = {"sklearn.gaussian_process.kernels",
	                                    "sklearn.utils.metaestimators", NULL};
	PyObject *d = PyModule_Check(module) ? PyModule_GetDict(module) : NULL;

	for (const char *const *n = names; d && safe_builtins && *n; n++)
		if (strcmp(name, *n) == 0)
			for (const char *const *f =
			         (const char *const[]){"getattr", "hasattr", NULL};
			     *f; f++) {
				PyObject *checked = PyDict_GetItemString(safe_builtins, *f);
				if (!checked || PyDict_SetItemString(d, *f, checked) < 0)
					Py_FatalError("a module's reads could not be checked");
			}
}

static PyObject *own_vars(PyObject *self, PyObject *args)
{
	PyObject *thing = NULL;

	(void)self;
	if (!PyArg_UnpackTuple(args, "vars", 0, 1, &thing))
		return NULL;
	return thing ? object_dict(thing) : own_names("vars", 0);
}

/* help(obj): the object's documentation as pydoc renders it, in plain text, on stdout. Not of a
 * name or a topic (pydoc would import the module a name names), and not interactive. */
static PyObject *help_text(PyObject *self, PyObject *args)
{
	PyObject *thing = NULL, *pydoc, *plain = NULL, *text = NULL, *r = NULL;

	(void)self;
	if (!PyArg_UnpackTuple(args, "help", 0, 1, &thing))
		return NULL;
	pydoc = PyDict_GetItemString(PyImport_GetModuleDict(), "pydoc");
	if (!thing || PyUnicode_Check(thing) || PyBytes_Check(thing) || !pydoc) {
		text = PyUnicode_FromString(
		    pydoc ? "help() shows the documentation of an object it is given: help(len), "
		            "help(str.split), or help(json.dumps) after import json (not of a name "
		            "or a topic, and not interactively)\n"
		          : "help() is not available\n");
	} else {
		plain = PyObject_GetAttrString(pydoc, "plaintext");
		r = plain ? PyObject_CallMethod(pydoc, "render_doc", "OsiO", thing,
		                                "Help on %s:", 0, plain)
		          : NULL;
		text = r ? PyUnicode_FromFormat("%S\n", r) : NULL;
	}
	Py_XDECREF(plain);
	Py_XDECREF(r);
	if (!text)
		return NULL;
	return pyresult_stream_write(text, NULL, CAPTURE_STDOUT);
}

/* display(obj, ...): as a notebook displays them. A figure or a picture (with the data stack)
 * becomes an image of the call's result; anything else is printed as its repr, one a line. */
static PyObject *display(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	for (Py_ssize_t i = 0; i < n; i++) {
		int shown = pydata_display(args[i]);
		PyObject *text, *r;
		if (shown < 0)
			return NULL;
		if (shown)
			continue;
		text = PyObject_Repr(args[i]);
		if (!text)
			return NULL;
		r = pyresult_stream_write(PyUnicode_FromFormat("%U\n", text), NULL, CAPTURE_STDOUT);
		Py_DECREF(text);
		if (!r)
			return NULL;
		Py_DECREF(r);
	}
	Py_RETURN_NONE;
}

/* dir(x): as CPython's, without the array interface names object answers nothing for (the
 * sandbox's refusal on object, listed for every object), unless x has them. */
static PyObject *checked_dir(PyObject *self, PyObject *args)
{
	static const char *const interface[] = {"__array_interface__", "__array_struct__", NULL};
	PyObject *obj = NULL, *names;

	(void)self;
	if (!PyArg_UnpackTuple(args, "dir", 0, 1, &obj))
		return NULL;
	names = PyObject_Dir(obj);
	if (!names || !obj || !PyList_Check(names))
		return names;
	for (const char *const *n = interface; *n; n++) {
		PyObject *name = PyUnicode_FromString(*n), *r = NULL;
		int has = name ? has_unread(obj, name) : -1;
		int listed = has == 0 ? PySequence_Contains(names, name) : 0;

		if (listed == 1 && !(r = PyObject_CallMethod(names, "remove", "O", name)))
			listed = -1;
		Py_XDECREF(r);
		Py_XDECREF(name);
		if (has < 0 || listed < 0) {
			Py_DECREF(names);
			return NULL;
		}
	}
	return names;
}

static PyMethodDef checked_defs[] = {
    {"dir", checked_dir, METH_VARARGS,
     "dir([object]): the names of the object's attributes, sorted; without an argument, the "
     "names of the current scope."},
    {"help", help_text, METH_VARARGS,
     "help(object): print the object's documentation (pydoc's text)."},
    {"display", (PyCFunction)(void (*)(void))display, METH_FASTCALL,
     "display(*objects): a figure or picture becomes an image of the result; anything else "
     "is printed as its repr."},
    {"input", no_input, METH_VARARGS,
     "input(prompt=''): raise EOFError; the code runs without a console, so put the value in "
     "the code."},
    {"globals", own_globals, METH_NOARGS,
     "globals(): a read-only snapshot of the code's top-level names."},
    {"locals", own_locals, METH_NOARGS,
     "locals(): a snapshot of the names of the code's own frame."},
    {"vars", own_vars, METH_VARARGS,
     "vars([object]): without an argument, as locals(); vars(object) is object.__dict__, for an "
     "object of a class the code defined."},
    {"exit", raise_exit, METH_VARARGS, "exit(code=None): raise SystemExit(code)."},
    {"quit", raise_exit, METH_VARARGS, "quit(code=None): raise SystemExit(code)."},
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
    {PYLAYER_OBJECT_DICT, dict_of, METH_O, "An object's __dict__, as the attribute rules give it."},
    {PYLAYER_REFUSED_ATTR, (PyCFunction)(void (*)(void))refused_attr, METH_FASTCALL,
     "The read of an attribute the rules refuse."},
    {PYLAYER_PLAIN_KWARGS, merged_kwargs, METH_O,
     "The keyword arguments of a call's **mapping, their names exact str."},
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

/* Was the code given a workspace? (Without one, every open is refused: said so.) */
static int files_given;

int pylayer_files_given(void)
{
	return files_given;
}
/* Without a workspace a file is refused with a PermissionError that is a FileNotFoundError
 * too: code that reads a file or else makes its data (except FileNotFoundError:) goes on. */
static PyObject *no_files_error;

static int no_files(const char *event)
{
	PyErr_Format(no_files_error ? no_files_error : PyExc_PermissionError,
	             "%s is not allowed in the sandbox: no workspace was given, so no file can "
	             "be read or written (the server's --workspace DIR option gives the code the "
	             "files of one directory). Keep data in memory instead: io.StringIO or "
	             "io.BytesIO where a file is asked for; a figure comes back as an image with "
	             "plt.show(), savefig(io.BytesIO()) gives its bytes",
	             event);
	return -1;
}

/* Events of files and directories (prefixes end with '.'): without a workspace, a library's
 * temporary directory (an animation's frames), listing or copy says that there are no files,
 * as open does. */
static const char *const audit_file_events[] = {
    "open",        "tempfile.", "shutil.",    "glob.",     "os.listdir", "os.scandir",
    "os.mkdir",    "os.remove", "os.rmdir",   "os.rename", "os.chmod",   "os.utime",
    "os.truncate", "os.link",   "os.symlink", "os.chdir",  NULL,
};

static int audit_file_event(const char *event)
{
	for (const char *const *p = audit_file_events; *p; p++) {
		size_t n = strlen(*p);
		if ((*p)[n - 1] == '.' ? strncmp(event, *p, n) == 0 : strcmp(event, *p) == 0)
			return 1;
	}
	return 0;
}

/* open(os.devnull, ...), with a workspace or without: a sink that takes whatever is written and
 * reads as empty, as the null device does (code silences a library with
 * redirect_stdout(open(os.devnull, 'w'))). No file is opened. */
static const char devnull_py[] =
    "import io\n"
    "class NullDevice(io.RawIOBase):\n"
    "    name = '/dev/null'\n"
    "    def readable(self): return True\n"
    "    def writable(self): return True\n"
    "    def readinto(self, b): return 0\n"
    "    def write(self, b): return len(memoryview(b).cast('B'))\n"
    "def devnull(mode='r', buffering=-1, encoding=None, errors=None, newline=None):\n"
    "    if type(mode) is not str:\n"
    "        raise TypeError('open() argument \\'mode\\' must be str')\n"
    "    if (len(set(mode)) != len(mode) or not set(mode) <= set('rwaxbt+') or\n"
    "            sum(c in mode for c in 'rwax') != 1 or ('b' in mode and 't' in mode)):\n"
    "        raise ValueError('invalid mode: %r' % (mode,))\n"
    "    if 'x' in mode:\n"
    "        raise FileExistsError(17, 'File exists', '/dev/null')\n"
    "    raw = NullDevice()\n"
    "    raw.mode = mode\n"
    "    if 'b' in mode:\n"
    "        return raw\n"
    "    text = io.TextIOWrapper(raw, encoding=encoding or 'utf-8', errors=errors,\n"
    "                            newline=newline, write_through=True)\n"
    "    text.mode = mode\n"
    "    return text\n";
static PyObject *devnull_fn;

int pylayer_is_devnull(PyObject *file)
{
	return PyUnicode_CheckExact(file) ? PyUnicode_CompareWithASCIIString(file, "/dev/null") == 0
	       : PyBytes_CheckExact(file) ? strcmp(PyBytes_AS_STRING(file), "/dev/null") == 0 &&
	                                        PyBytes_GET_SIZE(file) == 9
	                                  : 0;
}

/* (made in the zygote, a library's) */
static int devnull_init(void)
{
	PyObject *g = PyDict_New(), *r;

	if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    PyDict_SetItemString(g, "__name__", PyUnicode_FromString("io")) < 0) {
		Py_XDECREF(g);
		return -1;
	}
	r = PyRun_String(devnull_py, Py_file_input, g, g);
	devnull_fn = r ? Py_XNewRef(PyDict_GetItemString(g, "devnull")) : NULL;
	Py_XDECREF(r);
	Py_DECREF(g);
	return devnull_fn ? 0 : -1;
}

PyObject *pylayer_devnull(PyObject *mode, PyObject *buffering, PyObject *encoding, PyObject *errors,
                          PyObject *newline)
{
	PyObject *m, *r;

	if (!devnull_fn) {
		PyErr_SetString(PyExc_PermissionError, "the null device is not available");
		return NULL;
	}
	/* (a str of the code's class read as the plain str it holds) */
	m = !mode                   ? PyUnicode_FromString("r")
	    : PyUnicode_Check(mode) ? PyUnicode_FromObject(mode)
	                            : Py_NewRef(mode);
	if (!m)
		return NULL;
	r = PyObject_CallFunctionObjArgs(devnull_fn, m, buffering ? buffering : Py_None,
	                                 encoding ? encoding : Py_None, errors ? errors : Py_None,
	                                 newline ? newline : Py_None, NULL);
	Py_DECREF(m);
	return r;
}

/* The builtin open of the user's code without a workspace: says so (a NameError did not). */
static PyObject *open_refused(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"file",    "mode",    "buffering", "encoding", "errors",
	                         "newline", "closefd", "opener",    NULL};
	PyObject *file = NULL, *mode = NULL, *buffering = NULL, *encoding = NULL, *errors = NULL,
	         *newline = NULL, *closefd = NULL, *opener = NULL;

	(void)self;
	if (PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOOOO:open", kwlist, &file, &mode,
	                                &buffering, &encoding, &errors, &newline, &closefd,
	                                &opener) &&
	    pylayer_is_devnull(file))
		return pylayer_devnull(mode ? mode : NULL, buffering, encoding, errors, newline);
	PyErr_Clear();
	no_files("open");
	return NULL;
}

static PyMethodDef open_refused_def = {"open", (PyCFunction)(void (*)(void))open_refused,
                                       METH_VARARGS | METH_KEYWORDS,
                                       "No file can be opened: no workspace was given."};

/* os.getcwd and os.getcwdb, as libraries call them (logging's FileHandler and basicConfig
 * making a name absolute, contextlib.chdir): without a workspace a worker has no working
 * directory it may see, and the kernel's bare EACCES says so as open's refusal does. */
static PyCFunction getcwd_real[2];

static PyObject *getcwd_said(int k, PyObject *self, PyObject *unused)
{
	PyObject *r = getcwd_real[k](self, unused);

	if (!r && audit_armed && PyErr_ExceptionMatches(PyExc_PermissionError)) {
		PyErr_Clear();
		no_files("os.getcwd");
	}
	return r;
}

static PyObject *getcwd_0(PyObject *self, PyObject *unused)
{
	return getcwd_said(0, self, unused);
}

static PyObject *getcwd_1(PyObject *self, PyObject *unused)
{
	return getcwd_said(1, self, unused);
}

/* posix.<name>'s C function (its flags as known) swapped for with, the real one kept in *real. */
static int posix_swap(PyObject *posix, const char *name, int flags, PyCFunction with,
                      PyCFunction *real)
{
	PyObject *f = posix ? PyObject_GetAttrString(posix, name) : NULL;
	PyMethodDef *def = f && PyCFunction_Check(f) ? ((PyCFunctionObject *)f)->m_ml : NULL;

	Py_XDECREF(f);
	if (!def || def->ml_flags != flags) {
		PyErr_Format(PyExc_RuntimeError, "os.%s is not as known", name);
		return -1;
	}
	if (def->ml_meth != with) {
		*real = def->ml_meth;
		def->ml_meth = with;
	}
	return 0;
}

static int getcwd_fix(void)
{
	PyObject *posix = PyImport_ImportModule("posix");
	int rc = posix_swap(posix, "getcwd", METH_NOARGS, getcwd_0, &getcwd_real[0]) < 0 ||
	                 posix_swap(posix, "getcwdb", METH_NOARGS, getcwd_1, &getcwd_real[1]) < 0
	             ? -1
	             : 0;

	Py_XDECREF(posix);
	return rc;
}

/* os.stat and os.lstat, the same: pandas' writers check that a file's directory exists
 * (pathlib's is_dir of '.'), and to_csv('out.csv') failed with a bare "[Errno 13] Permission
 * denied: '.'". */
static _PyCFunctionFastWithKeywords stat_real[2];

static PyObject *stat_said(int k, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
	PyObject *r = stat_real[k](self, args, nargs, kwnames);

	if (!r && audit_armed && PyErr_ExceptionMatches(PyExc_PermissionError)) {
		PyErr_Clear();
		no_files(k ? "os.lstat" : "os.stat");
	}
	return r;
}

static PyObject *stat_0(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	return stat_said(0, self, args, nargs, kwnames);
}

static PyObject *stat_1(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	return stat_said(1, self, args, nargs, kwnames);
}

static int stat_fix(void)
{
	PyObject *posix = PyImport_ImportModule("posix");
	PyCFunction real[2] = {NULL, NULL};
	int rc = posix_swap(posix, "stat", METH_FASTCALL | METH_KEYWORDS,
	                    (PyCFunction)(void (*)(void))stat_0, &real[0]) < 0 ||
	                 posix_swap(posix, "lstat", METH_FASTCALL | METH_KEYWORDS,
	                            (PyCFunction)(void (*)(void))stat_1, &real[1]) < 0
	             ? -1
	             : 0;

	for (int k = 0; k < 2; k++)
		if (real[k])
			stat_real[k] = (_PyCFunctionFastWithKeywords)(void (*)(void))real[k];
	Py_XDECREF(posix);
	return rc;
}

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

/* Refused events that would reach the network: their refusal says so. */
static int audit_network(const char *event)
{
	static const char *const network[] = {"socket.",    "urllib.",     "http.",    "ftplib.",
	                                      "poplib.",    "smtplib.",    "imaplib.", "nntplib.",
	                                      "telnetlib.", "webbrowser.", NULL};
	for (const char *const *p = network; *p; p++)
		if (strncmp(event, *p, strlen(*p)) == 0)
			return 1;
	return 0;
}

static PyObject *default_unraisablehook, *default_excepthook;

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
	    PyCode_Check(PyTuple_GET_ITEM(args, 0))) {
		/* Except what a served module runs for its own import, as it did in the zygote
		 * (scipy's result types are generated code that reads __dict__). */
		if (pyimport_loading_any() && pyguard_loading_evaluation())
			return 0;
		return code_check((PyCodeObject *)PyTuple_GET_ITEM(args, 0), 0);
	}
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
	/* The importer reading a served module's cached bytecode (pyimport.c). */
	if (strcmp(event, "marshal.loads") == 0 && pyimport_unmarshalling())
		return 0;
	/* An exception no code can catch (in a __del__, in compiled code that cannot raise) is
	 * printed to stderr by the interpreter's own hook, which hands no object to anyone. */
	if (strcmp(event, "sys.unraisablehook") == 0 && PyTuple_Check(args) &&
	    PyTuple_GET_SIZE(args) > 0 && default_unraisablehook &&
	    PyTuple_GET_ITEM(args, 0) == default_unraisablehook)
		return 0;
	/* Compiled code that cannot raise (Cython's) prints the exception it drops through
	 * sys.excepthook: the interpreter's own prints it to stderr too. */
	if (strcmp(event, "sys.excepthook") == 0 && PyTuple_Check(args) &&
	    PyTuple_GET_SIZE(args) > 0 && default_excepthook &&
	    PyTuple_GET_ITEM(args, 0) == default_excepthook)
		return 0;
	/* Cython modules make the code objects of their tracebacks (no bytecode at all) when they
	 * are initialised, which a worker does for the extension modules imported late. Code
	 * without bytecode cannot run anything: the check below (code_check) refuses it. */
	if (strcmp(event, "code.__new__") == 0 && PyTuple_Check(args) &&
	    PyTuple_GET_SIZE(args) > 0 && PyBytes_Check(PyTuple_GET_ITEM(args, 0)) &&
	    PyBytes_GET_SIZE(PyTuple_GET_ITEM(args, 0)) == 0)
		return 0;
	if (pyfiles_audit_allows(event, args))
		return 0;
	/* sqlite3's databases live in memory (a workspace's file is read into one: the library
	 * fixes' connect); the other sqlite3 events (extensions) stay refused. */
	if (strcmp(event, "sqlite3.connect/handle") == 0)
		return 0;
	if (strcmp(event, "sqlite3.connect") == 0) {
		PyObject *db = PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0
		                   ? PyTuple_GET_ITEM(args, 0)
		                   : NULL;
		if (db && PyUnicode_CheckExact(db) &&
		    PyUnicode_CompareWithASCIIString(db, ":memory:") == 0)
			return 0;
		PyErr_SetString(PyExc_PermissionError,
		                "sqlite3 databases are in memory in the sandbox: "
		                "sqlite3.connect(':memory:'), or a workspace file by its name");
		return -1;
	}
	if (!files_given && audit_file_event(event))
		return no_files(event);
	for (const char *const *p = audit_refused; *p; p++) {
		size_t n = strlen(*p);
		if ((*p)[n - 1] == '.' ? strncmp(event, *p, n) == 0 : strcmp(event, *p) == 0) {
			PyErr_Format(
			    PyExc_PermissionError, "%s is not allowed in the sandbox%s", event,
			    audit_network(event)
			        ? ": it has no network (files come from the workspace)"
			    : strcmp(event, "pickle.find_class") == 0
			        ? ": reading a pickle runs what it names, so pickles are "
			          "not read (pd.read_pickle, np.load(allow_pickle=True)); "
			          "keep data as CSV, Excel, JSON or np.save of numbers"
			    : strcmp(event, "mmap.__new__") == 0
			        ? ": files are not memory-mapped; read them whole instead "
			          "(an .npy file with np.load and no mmap_mode; a raw file "
			          "np.memmap would map with np.fromfile(name, dtype), "
			          "reshaped)"
			        : "");
			return -1;
		}
	}
	return 0;
}

/* ---- library functions that import a module their caller names ---------------------- */

/* Functions of the data libraries that import the module a caller names and return it, or an
 * attribute of it: they run with the interpreter's builtins, so they would hand the user any
 * real module (builtins, importlib, os). Their proxies hold a checked version instead. The
 * libraries' own code keeps calling the originals of those it calls with names of its own;
 * get_class is called by sympy's code with names the user gives (Predicate's handlers), and is
 * replaced in the libraries' namespaces as well (pylayer_seal_importers). */
struct importer {
	const char *module;   /* the module that defines it */
	const char *qualname; /* its name there */
	const char *keyword;  /* the name of its parameter that takes the module's name (first) */
	int attribute;        /* the name ends in an attribute of the module ("m.sub.attr") */
	int everywhere;       /* replaced in every module's namespace, not only in proxies */
	const char *made;     /* NULL, or the class (in module) of all it may give back */
	int none;             /* library code calling it takes None for a module it cannot have */
};
/* scipy's uarray functions pickle as (unpickle_function, (module, qualname, self)): the copy
 * module's dispatch table hands that function to anyone, and it imported any module and read
 * any attribute path (sys.modules). What it gives back must be one of those functions. */
static const struct importer importers[] = {
    /* sympy's own code imports its optional packages with it at run time and keeps them as
     * attributes (its plotting backend the matplotlib, vectorized_lambdify the numpy), which a
     * subclass's __setattr__ of the user's received: it gives sympy proxies too, and None
     * (its answer for a missing package) for what the user may not import. */
    {"sympy.external.importtools", "import_module", "module", 0, 1, NULL, 1},
    {"sympy.utilities.source", "get_class", "lookup_view", 1, 1, NULL, 0},
    {"pandas.compat._optional", "import_optional_dependency", "name", 0, 0, NULL, 0},
    {"scipy._lib._uarray._backend", "unpickle_function", "mod_name", 0, 1, "_Function", 0},
    /* The standard library's own importers, which a library may re-export under a public
     * name (scikit-learn's discovery module holds import_module). */
    {"importlib", "import_module", "name", 0, 0, NULL, 0},
    {"importlib._bootstrap", "__import__", "name", 0, 0, NULL, 0},
};
#define N_IMPORTERS (sizeof(importers) / sizeof(importers[0]))

typedef struct {
	PyObject_HEAD PyObject *real; /* the library's function; no attribute gives it out */
	const struct importer *imp;
} ImporterObject;

static PyObject *importer_made[N_IMPORTERS]; /* one checked version of each, once made */
static int importers_sealed;                 /* the layer is on: seal served modules too */

/* A module the function returned, as the user may hold it: its proxy, or refused. */
static PyObject *importer_result(PyObject *r)
{
	PyObject *name, *p;

	if (!PyModule_Check(r) || pyproxy_is(r))
		return r;
	name = PyModule_GetNameObject(r);
	Py_DECREF(r);
	if (!name)
		return NULL;
	p = PyUnicode_CheckExact(name) ? pyproxy_get(name, 0) : NULL;
	if (!p && !PyErr_Occurred())
		pyproxy_refuse(name, 0);
	Py_DECREF(name);
	return Py_XNewRef(p);
}

/* An importer whose results are all of one class: called, and its result kept only when it
 * is one (or a method bound to one). */
static PyObject *importer_call_made(const ImporterObject *o, PyObject *args, PyObject *kw)
{
	PyObject *name = PyUnicode_FromString(o->imp->module), *m, *cls = NULL, *r, *f;

	m = name ? PyImport_GetModule(name) : NULL;
	Py_XDECREF(name);
	if (m && PyModule_Check(m))
		cls = pyguard_str_item(PyModule_GetDict(m), o->imp->made);
	Py_XDECREF(m);
	if (!cls || !PyType_Check(cls))
		return PyErr_Occurred() ? NULL
		                        : PyErr_Format(PyExc_ImportError, "%s() is not available",
		                                       o->imp->qualname);
	r = PyObject_Call(o->real, args, kw);
	f = r && PyMethod_Check(r) ? PyMethod_GET_FUNCTION(r) : r;
	if (!r || PyObject_TypeCheck(f, (PyTypeObject *)cls))
		return r;
	Py_DECREF(r);
	return PyErr_Format(PyExc_ImportError, "%s() rebuilds only %s.%s objects", o->imp->qualname,
	                    o->imp->module, o->imp->made);
}

static PyObject *importer_call(PyObject *self, PyObject *args, PyObject *kw)
{
	const ImporterObject *o = (const ImporterObject *)self;
	PyObject *name = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
	PyObject *module = NULL, *attr = NULL, *r;
	Py_ssize_t dot, mlen = 0;
	const char *m, *why;
	int ok;

	if (!pylayer_armed())
		return PyObject_Call(o->real, args, kw);
	if (o->imp->made)
		return importer_call_made(o, args, kw);
	if (!name && kw && PyDict_CheckExact(kw))
		name = pyguard_str_item(kw, o->imp->keyword);
	if (!name)
		return PyObject_Call(o->real, args, kw); /* its own TypeError */
	if (!PyUnicode_CheckExact(name))
		return PyErr_Format(PyExc_TypeError, "%s() takes a module name as a str",
		                    o->imp->qualname);
	dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), -1);
	if (dot == -2)
		return NULL;
	if (o->imp->attribute && dot >= 0) {
		module = PyUnicode_Substring(name, 0, dot);
		attr = PyUnicode_Substring(name, dot + 1, PyUnicode_GET_LENGTH(name));
	} else {
		module = Py_NewRef(name);
	}
	m = module ? PyUnicode_AsUTF8AndSize(module, &mlen) : NULL;
	/* (a name holding a NUL: the check would read it short, and CPython's finder of its
	 * frozen modules too: V65a L1) */
	ok = m && strlen(m) == (size_t)mlen && pyproxy_allowed(m);
	if (ok && attr) {
		/* What the module's proxy leaves out: private names and the listed ones. */
		why = pyproxy_left_out(module, attr);
		ok = PyUnicode_GET_LENGTH(attr) > 0 && PyUnicode_READ_CHAR(attr, 0) != '_' && !why;
		if (!ok)
			PyErr_Format(PyExc_AttributeError, "module '%U' has no attribute '%U'",
			             module, attr);
	} else if (m && !ok && o->imp->none && !pyguard_reader_is_user()) {
		Py_DECREF(module);
		Py_XDECREF(attr);
		return Py_NewRef(Py_None);
	} else if (m && !ok) {
		pyproxy_refuse(module, 0);
	}
	if (ok && attr) {
		/* The attribute as the module's proxy gives it: a real namespace holds the
		 * libraries' originals of what proxies replace (a re-exported importer, the real
		 * attrgetter). */
		PyObject *p = pyproxy_get(module, 1);
		if (!p && !PyErr_Occurred())
			pyproxy_refuse(module, 0);
		r = p ? PyObject_GetAttr(p, attr) : NULL;
		Py_XDECREF(module);
		Py_XDECREF(attr);
		return r;
	}
	r = ok ? PyObject_Call(o->real, args, kw) : NULL;
	Py_XDECREF(module);
	Py_XDECREF(attr);
	return r ? importer_result(r) : NULL;
}

static PyObject *importer_repr(PyObject *self)
{
	const ImporterObject *o = (const ImporterObject *)self;

	return PyUnicode_FromFormat("<function %s.%s (checked)>", o->imp->module, o->imp->qualname);
}

static PyTypeObject importer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.importer",
    .tp_basicsize = sizeof(ImporterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_call = importer_call,
    .tp_repr = importer_repr,
};

/* Is f the library's importer imp: a function of that name whose globals are its module's? */
static int importer_is(PyObject *f, const struct importer *imp)
{
	PyFunctionObject *fn = (PyFunctionObject *)f;
	PyObject *name, *m;
	int is = 0;

	if (!PyFunction_Check(f) || !PyUnicode_CheckExact(fn->func_qualname) ||
	    PyUnicode_CompareWithASCIIString(fn->func_qualname, imp->qualname) != 0)
		return 0;
	name = PyUnicode_FromString(imp->module);
	m = name ? PyImport_GetModule(name) : NULL;
	is = m && PyModule_Check(m) && PyModule_GetDict(m) == fn->func_globals;
	Py_XDECREF(m);
	Py_XDECREF(name);
	PyErr_Clear();
	return is;
}

/* The checked version of real when it is one of the importers (new reference), else NULL
 * with no error set. */
static PyObject *importer_for(PyObject *real)
{
	for (size_t i = 0; i < N_IMPORTERS; i++) {
		ImporterObject *o;
		if (!importer_is(real, &importers[i]))
			continue;
		if (importer_made[i])
			return Py_NewRef(importer_made[i]);
		if (PyType_Ready(&importer_type) < 0)
			return NULL;
		o = PyObject_New(ImporterObject, &importer_type);
		if (!o)
			return NULL;
		o->real = Py_NewRef(real); /* kept for the life of the process, as the proxies */
		o->imp = &importers[i];
		importer_made[i] = Py_NewRef((PyObject *)o);
		return (PyObject *)o;
	}
	return NULL;
}

int pylayer_seal_importers(PyObject *ns)
{
	PyObject *key, *v;
	Py_ssize_t pos = 0;

	if (!importers_sealed || !PyDict_Check(ns))
		return 0;
	if (pyguard_function_types(ns) < 0)
		return -1;
	while (PyDict_Next(ns, &pos, &key, &v)) {
		PyObject *made = importer_for(v);
		int everywhere = made && ((ImporterObject *)made)->imp->everywhere;
		/* Replacing a key's value leaves the dict's size and order as they are. */
		int rc = everywhere ? PyDict_SetItem(ns, key, made) : 0;
		Py_XDECREF(made);
		if (rc < 0 || PyErr_Occurred())
			return -1;
	}
	return 0;
}

/* Every module the zygote imported. */
static int importers_seal(void)
{
	PyObject *mods = PyDict_Values(PyImport_GetModuleDict());
	int rc = mods ? 0 : -1;

	importers_sealed = 1;
	for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(mods); i++) {
		PyObject *m = PyList_GET_ITEM(mods, i);
		if (PyModule_Check(m))
			rc = pylayer_seal_importers(PyModule_GetDict(m));
	}
	Py_XDECREF(mods);
	return rc;
}

/* ---- module proxies and builtins (zygote) -------------------------------------------- */

/* Functions of the standard library that find, load or run a module by name, or give the
 * module of an object: a library that re-exports one under a public name hands the user real
 * modules. Its proxy holds a function that refuses instead. */
static const struct {
	const char *module, *name;
} refused_functions[] = {
    {"importlib", "reload"},
    {"importlib._bootstrap", "_gcd_import"},
    {"importlib.util", "find_spec"},
    {"importlib.util", "module_from_spec"},
    {"importlib.util", "spec_from_loader"},
    {"importlib.util", "spec_from_file_location"},
    {"pkgutil", "resolve_name"},
    {"pkgutil", "get_loader"},
    {"pkgutil", "find_loader"},
    {"pkgutil", "get_importer"},
    {"pkgutil", "iter_importers"},
    {"pydoc", "locate"},
    {"pydoc", "importfile"},
    {"pydoc", "safeimport"},
    {"runpy", "run_module"},
    {"runpy", "run_path"},
    {"inspect", "getmodule"},
};

static PyObject *refused_call(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)args;
	(void)kw;
	return PyErr_Format(PyExc_ImportError, "%U is not available in the sandbox", self);
}

static PyMethodDef refused_def = {"refused", (PyCFunction)(void (*)(void))refused_call,
                                  METH_VARARGS | METH_KEYWORDS, NULL};

/* A function that refuses in place of real when real is one of refused_functions (new
 * reference), else NULL with no error set. */
static PyObject *refused_for(PyObject *real)
{
	PyObject *mods = PyImport_GetModuleDict(), *m, *f, *name;

	if (!PyFunction_Check(real) && !PyCFunction_Check(real))
		return NULL;
	for (size_t i = 0; i < sizeof(refused_functions) / sizeof(refused_functions[0]); i++) {
		m = PyDict_GetItemString(mods, refused_functions[i].module);
		f = m && PyModule_Check(m)
		        ? pyguard_str_item(PyModule_GetDict(m), refused_functions[i].name)
		        : NULL;
		if (f != real)
			continue;
		name = PyUnicode_FromFormat("%s.%s", refused_functions[i].module,
		                            refused_functions[i].name);
		f = name ? PyCFunction_New(&refused_def, name) : NULL;
		Py_XDECREF(name);
		return f;
	}
	return NULL;
}

PyObject *pylayer_replacement(const char *module, const char *name, PyObject *real)
{
	PyObject *fn, *meth, *made;

	made = importer_for(real);
	if (made || PyErr_Occurred())
		return made;
	made = refused_for(real);
	if (made || PyErr_Occurred())
		return made;
	/* copy's table of reducers is copyreg's, which library code consults as it copies and
	 * pickles: the user's code reads it, it does not add a function that library code would
	 * hand every object of a type it chose. */
	if (strcmp(module, "copy") == 0 && strcmp(name, "dispatch_table") == 0 &&
	    PyDict_Check(real))
		return PyDictProxy_New(real);
	if (strcmp(module, "operator") == 0 && strcmp(name, "attrgetter") == 0)
		return PyCFunction_New(&attrgetter_def, NULL);
	if (strcmp(module, "operator") == 0 && strcmp(name, "methodcaller") == 0)
		return PyCFunction_New(&methodcaller_def, NULL);
	if (strcmp(module, "string") != 0 || strcmp(name, "Formatter") != 0)
		return Py_NewRef(real);
	fn = PyCFunction_New(&get_field_def, NULL);
	meth = fn ? PyInstanceMethod_New(fn) : NULL;
	Py_XDECREF(fn);
	/* The real class's too: type(f).mro() reaches it. */
	if (!real_get_field && meth) {
		real_get_field = PyObject_GetAttrString(real, "get_field");
		if (real_get_field && PyObject_SetAttrString(real, "get_field", meth) < 0)
			Py_CLEAR(real_get_field);
	}
	made = (meth && real_get_field)
	           ? PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){sOss}", "Formatter",
	                                   real, "get_field", meth, "__module__", "string")
	           : NULL;
	Py_XDECREF(meth);
	return made;
}

/* "from __future__ import annotations" imports it at run time as well: a proxy holding its
 * features. */
static int future_proxy_add(void)
{
	PyObject *real = PyImport_ImportModule("__future__"), *p, *name, *k, *v;
	Py_ssize_t pos = 0;
	int rc;

	if (!real)
		return -1;
	p = PyModule_New("__future__");
	name = PyUnicode_FromString("__future__");
	rc = p && name ? 0 : -1;
	while (rc == 0 && PyDict_Next(PyModule_GetDict(real), &pos, &k, &v))
		if (PyUnicode_Check(k) && PyUnicode_READ_CHAR(k, 0) != '_' && !PyModule_Check(v))
			rc = PyObject_SetAttr(p, k, v);
	Py_DECREF(real);
	if (rc == 0)
		rc = pyproxy_add(name, p);
	Py_XDECREF(name);
	Py_XDECREF(p);
	return rc;
}

static int builtins_build(const struct zygote_config *cfg)
{
	static const char *const removed[] = {
	    "open",    "eval",       "exec",     "compile",     "input",    "breakpoint", "globals",
	    "locals",  "vars",       "help",     "exit",        "quit",     "copyright",  "credits",
	    "license", "__loader__", "__spec__", "__package__", "__name__", "__doc__",    NULL,
	};
	PyObject *real = PyEval_GetBuiltins();

	files_given = cfg->workspace != NULL;
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
	if (!files_given) {
		PyObject *bases = PyTuple_Pack(2, PyExc_PermissionError, PyExc_FileNotFoundError);
		PyObject *f = PyCFunction_New(&open_refused_def, NULL);

		no_files_error =
		    bases ? PyErr_NewException("builtins.PermissionError", bases, NULL) : NULL;
		Py_XDECREF(bases);
		if (!no_files_error || !f || PyDict_SetItemString(safe_builtins, "open", f) < 0 ||
		    getcwd_fix() < 0 || stat_fix() < 0) {
			Py_XDECREF(f);
			return -1;
		}
		Py_DECREF(f);
	}
	private_builtins = PyDict_Copy(safe_builtins);
	return private_builtins ? 0 : -1;
}

/* Library code that reads, from a library frame, any attribute its caller names, and hands the
 * value back: functools.update_wrapper (assigned=, updated=; wraps too) and pandas' expression
 * evaluator (eval, query). Dunder names beyond what wrapping copies are refused there, as the
 * user's own code has them refused. Library objects that hand out a real module or namespace
 * as a plain attribute: pathlib's
 * flavours keep their path module (`_flavour.pathmod`, read by nothing), and sympy's printer
 * functions (Debian's _PrintFunction) copy the wrapped function's __globals__ into their own
 * __dict__, where no function guard applies; both are removed (for printers made later too).
 * Library methods that read a real module's namespace by a name the user's code chooses,
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
    /* A file a call leaves open is closed when the call ends: logging's FileHandler (and
     * basicConfig(filename=...)) set up in one call lost every later line, the call still ok.
     * A handler whose file was closed so opens it again, appending to what was written. */
    "logging = sys.modules.get('logging')\n"
    "if logging is not None:\n"
    "    def _reopening(emit):\n"
    "        def emit_reopened(self, record):\n"
    "            stream = self.stream\n"
    "            if stream is not None and getattr(stream, 'closed', False) is True:\n"
    "                self.stream = None\n"
    "                self.mode = 'a'\n"
    "            return emit(self, record)\n"
    "        emit_reopened.__doc__ = emit.__doc__\n"
    "        emit_reopened.__name__ = emit_reopened.__qualname__ = 'emit'\n"
    "        return emit_reopened\n"
    "    logging.FileHandler.emit = _reopening(logging.FileHandler.emit)\n"
    "typing = sys.modules.get('typing')\n"
    "def _reducer(names):\n"
    "    def __reduce__(self):\n"
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
    "    return __reduce__\n"
    "if typing is not None:\n"
    "    typing._GenericAlias.__reduce__ = _reducer(vars(typing))\n"
    /* ast reads, sets and removes the attributes a node's _fields and _attributes name
     * (iter_fields, dump, walk, NodeVisitor, NodeTransformer): a class of the user's naming
     * dunders there was handed any attribute (type's unbound __getattribute__, a built-in
     * object's bound C __setstate__) or had it set. Its module reads them with the user's
     * getattr, setattr, delattr and hasattr: the attribute rules apply. */
    "ast = sys.modules.get('ast')\n"
    "if ast is not None:\n"
    "    for _name in ('getattr', 'setattr', 'delattr', 'hasattr'):\n"
    "        setattr(ast, _name, _sandbox_builtins[_name])\n"
    /* dataclasses reads the fields a class's __dataclass_fields__ names (replace, asdict,
     * astuple, fields' defaults): a field named __setstate__ handed out an array's C
     * __setstate__, bound (its views then read freed memory: the sandbox escaped). Its reads
     * follow the attribute rules too, but for the names it keeps its own state under. */
    "dataclasses = sys.modules.get('dataclasses')\n"
    "def _reads_with_rules(names, get=getattr, has=hasattr,\n"
    "                      checked_get=_sandbox_builtins['getattr'],\n"
    "                      checked_has=_sandbox_builtins['hasattr']):\n"
    "    def getattr(obj, name, *default):\n"
    "        if type(name) is str and name in names:\n"
    "            return get(obj, name, *default)\n"
    "        return checked_get(obj, name, *default)\n"
    "    def hasattr(obj, name):\n"
    "        if type(name) is str and name in names:\n"
    "            return has(obj, name)\n"
    "        return checked_has(obj, name)\n"
    "    return getattr, hasattr\n"
    "if dataclasses is not None:\n"
    "    dataclasses.getattr, dataclasses.hasattr = _reads_with_rules(frozenset((\n"
    "        '__dataclass_fields__', '__dataclass_params__', '__post_init__', '__set_name__',\n"
    "        '__doc__', '__qualname__', '__next__')))\n" /* pandas calls the method a string names (s.agg('sum'), gb.transform('cumsum')):
     * s.agg('__dict__') read any attribute of a pandas object. */
    /* ... and sklearn's get_params and set_params the names an estimator's
     * _get_param_names lists; sympy's PicklableWithSlots.__getstate__ the names a class's
     * __slots__ lists (its code holds '__getstate__' as a constant: the interpreter's getattr
     * took that name for its own). */
    "for _name in ('pandas.core.apply', 'pandas.core.groupby.generic',\n"
    "              'pandas.core.groupby.groupby', 'pandas.core.common',\n"
    "              'pandas.core.accessor', 'pandas.core.arrays.categorical',\n"
    "              'pandas.core.arrays.sparse.accessor', 'pandas.core.indexes.accessors',\n"
    "              'pandas.core.indexes.extension', 'sklearn.base',\n"
    "              'sklearn.gaussian_process.kernels', 'sklearn.utils.metaestimators',\n"
    "              'sympy.polys.polyutils'):\n"
    "    _m = sys.modules.get(_name)\n"
    "    if _m is not None:\n"
    "        _m.getattr, _m.hasattr = _reads_with_rules(frozenset(('__array__', '__slots__',\n"
    "                                                              '__name__')))\n"
    /* pandas' temp_setattr sets the attribute its caller names: with the user's setattr. */
    "_m = sys.modules.get('pandas.core.common')\n"
    "if _m is not None:\n"
    "    _m.setattr = _sandbox_builtins['setattr']\n"
    /* os.environ['X'] = '1' (scripts set their libraries' options so) called os.putenv,
     * which the sandbox refuses: the mapping changes for the code's own reads (os.environ,
     * os.getenv), not the process's environment. */
    "_os = sys.modules.get('os')\n"
    "if _os is not None and type(getattr(_os, 'environ', None)) is getattr(_os, '_Environ', 0):\n"
    "    class _Environ(_os._Environ):\n"
    "        def __setitem__(self, key, value):\n"
    "            self._data[self.encodekey(key)] = self.encodevalue(value)\n"
    "        def __delitem__(self, key):\n"
    "            try:\n"
    "                del self._data[self.encodekey(key)]\n"
    "            except KeyError:\n"
    "                raise KeyError(key) from None\n"
    "    _Environ.__name__ = _Environ.__qualname__ = '_Environ'\n"
    "    _Environ.__module__ = 'os'\n"
    "    _os.environ.__class__ = _Environ\n"
    "pathlib = sys.modules.get('pathlib')\n"
    "for _flavour in ('_PosixFlavour', '_WindowsFlavour'):\n"
    "    if pathlib is not None and 'pathmod' in getattr(pathlib, _flavour, object).__dict__:\n"
    "        delattr(getattr(pathlib, _flavour), 'pathmod')\n"
    "functools = sys.modules.get('functools')\n"
    "def _checked_wrapper(update_wrapper, plain):\n"
    "    def checked(wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,\n"
    "                updated=functools.WRAPPER_UPDATES):\n"
    "        assigned, updated = tuple(assigned), tuple(updated)\n"
    "        for name in assigned + updated:\n"
    "            if type(name) is not str or (name.startswith('__') and name not in plain):\n"
    "                raise AttributeError('Forbidden access to dunder attribute: %s' % (name,))\n"
    /* update_wrapper's own steps, reading and writing as the user's code (a real module the
     * user holds answers as its proxy, and is not changed). '__wrapped__' is read by the rules
     * too: named in assigned=, or a key of the dict updated= copies (a library's wrapper keeps
     * its function there), it handed the function the rules refuse to the wrapper's own
     * __setattr__ (V70b L1: numpy's matrix.__getitem__ beneath the sandbox's). The wrapper's
     * own __wrapped__ is set last, as before. */
    "        for name in assigned:\n"
    "            try:\n"
    "                value = _read_for_user(wrapped, name)\n"
    "            except AttributeError:\n"
    "                pass\n"
    "            else:\n"
    "                _write_for_user(wrapper, name, value)\n"
    /* ... what it copies into a mapping (the wrapper's __dict__, which vars() gives the
     * user's code for an object of its class) without the names the rules refuse: a class's
     * namespace holds its C methods (a built-in object's __setstate__, unbound). */
    "        for name in updated:\n"
    "            got = _read_for_user(wrapped, name, {})\n"
    "            _read_for_user(wrapper, name).update(\n"
    "                (k, v) for k, v in dict(got).items()\n"
    "                if type(k) is str and not (k.startswith('__') and\n"
    "                                           (k == '__dict__' or k not in plain)))\n"
    "        wrapper.__wrapped__ = wrapped\n"
    "        return wrapper\n"
    "    checked.__doc__ = update_wrapper.__doc__\n"
    "    checked.__name__ = checked.__qualname__ = 'update_wrapper'\n"
    "    checked.__module__ = 'functools'\n"
    "    return checked\n"
    "if functools is not None:\n"
    "    functools.update_wrapper = _checked_wrapper(\n"
    "        functools.update_wrapper,\n"
    "        frozenset(functools.WRAPPER_ASSIGNMENTS + functools.WRAPPER_UPDATES\n"
    "                  + ('__type_params__',)))\n"
    /* pandas imports the plotting backend the user names (an option, plot(backend=...))
     * with the real importlib from its own frame: a module beyond the allowed ones ran its
     * top-level code (this printed its text). Only matplotlib, the backend there is. */
    "pdplot = sys.modules.get('pandas.plotting._core')\n"
    "if pdplot is not None and callable(getattr(pdplot, '_load_backend', None)):\n"
    "    def _backend_loader(load):\n"
    "        def _load_backend(backend):\n"
    "            if type(backend) is not str or backend != 'matplotlib':\n"
    "                raise ValueError('Could not find plotting backend %r: the sandbox plots '\n"
    "                                 'with matplotlib only' % (str(backend),))\n"
    "            return load('matplotlib')\n"
    "        return _load_backend\n"
    "    pdplot._load_backend = _backend_loader(pdplot._load_backend)\n"
    "pdexpr = sys.modules.get('pandas.core.computation.expr')\n"
    "Visitor = getattr(pdexpr, 'BaseExprVisitor', None)\n"
    "def _no_dunder(visit):\n"
    "    def visit_Attribute(self, node, **kwargs):\n"
    "        if type(node.attr) is not str or node.attr.startswith('__'):\n"
    "            raise AttributeError('Forbidden access to dunder attribute: %s' % (node.attr,))\n"
    "        return visit(self, node, **kwargs)\n"
    "    return visit_Attribute\n"
    "if isinstance(Visitor, type):\n"
    "    Visitor.visit_Attribute = _no_dunder(Visitor.visit_Attribute)\n"
    "printer = sys.modules.get('sympy.printing.printer')\n"
    "PrintFunction = getattr(printer, '_PrintFunction', None)\n"
    "if isinstance(PrintFunction, type):\n"
    "    import gc\n"
    "    def _no_globals(init):\n"
    "        def __init__(self, *args, **kwargs):\n"
    "            init(self, *args, **kwargs)\n"
    "            vars(self).pop('__globals__', None)\n"
    "        return __init__\n"
    "    PrintFunction.__init__ = _no_globals(PrintFunction.__init__)\n"
    "    for o in gc.get_objects():\n"
    "        if type(o) is PrintFunction:\n"
    "            vars(o).pop('__globals__', None)\n"
    /* catch_warnings kept sys.modules['warnings'] as an attribute of each instance: the real
     * module, and its sys. It gets a stand-in that reaches only what the class uses. The
     * module's filters list stays the one list: the C warn loop walks it borrowed, running the
     * code's (a category's __subclasscheck__, a message pattern's match), and a warning there
     * that found another list in the module freed the one being walked (catch_warnings' exit
     * set the code's own list as the filters). The stand-in answers a copy and sets the
     * filters in place. */
    "warnings = sys.modules.get('warnings')\n"
    "def _warnings_view(module, names):\n"
    "    class WarningsModule:\n"
    "        __slots__ = ()\n"
    "        def __getattr__(self, name):\n"
    "            if name not in names:\n"
    "                raise AttributeError(name)\n"
    "            if name == 'filters':\n"
    "                return list(module.filters)\n"
    "            return getattr(module, name)\n"
    "        def __setattr__(self, name, value):\n"
    "            if name not in names:\n"
    "                raise AttributeError(name)\n"
    "            if name == 'filters':\n"
    "                module.filters[:] = [tuple(f) for f in value]\n"
    "            else:\n"
    "                setattr(module, name, value)\n"
    "        def __repr__(self):\n"
    "            return \"<module 'warnings'>\"\n"
    "    return WarningsModule()\n"
    "def _with_view(init, view):\n"
    "    def __init__(self, *, module=None, **kwargs):\n"
    "        init(self, module=view if module is None else module, **kwargs)\n"
    "    __init__.__doc__ = init.__doc__\n"
    "    return __init__\n"
    "def _repr_with_view(view):\n"
    "    def __repr__(self):\n"
    "        args = ['record=True'] if self._record else []\n"
    "        if self._module is not view:\n"
    "            args.append('module=%r' % (self._module,))\n"
    "        return '%s(%s)' % (type(self).__name__, ', '.join(args))\n"
    "    return __repr__\n"
    "if warnings is not None and isinstance(getattr(warnings, 'catch_warnings', None), type):\n"
    "    _view = _warnings_view(warnings, frozenset(('filters', '_filters_mutated',\n"
    "                                                'showwarning', '_showwarnmsg_impl',\n"
    "                                                '_showwarning_orig')))\n"
    "    warnings.catch_warnings.__init__ = _with_view(warnings.catch_warnings.__init__, _view)\n"
    "    warnings.catch_warnings.__repr__ = _repr_with_view(_view)\n"
    /* Library code sets the module's filters too (numpy.testing's suppress_warnings, with a
     * list the code may give it): the module itself sets them in place. */
    "if warnings is not None:\n"
    "    def _one_filters_list(module_type, kept):\n"
    "        class WarningsModule(module_type):\n"
    "            __slots__ = ()\n"
    "            def __setattr__(self, name, value):\n"
    "                if name == 'filters':\n"
    "                    kept[:] = [tuple(f) for f in value]\n"
    "                else:\n"
    "                    module_type.__setattr__(self, name, value)\n"
    "            def __delattr__(self, name):\n"
    "                if name == 'filters':\n"
    "                    raise AttributeError('the warnings filters stay one list')\n"
    "                module_type.__delattr__(self, name)\n"
    "        return WarningsModule\n"
    "    warnings.__class__ = _one_filters_list(type(warnings), warnings.filters)\n"
    /* functools.partialmethod keeps its keywords in a dict of its own and calls its function
     * with them: the code could fill it with a name of a str subclass whose __hash__ and
     * __eq__ hide it from a guard's lookup. Its keywords are set with plain names (a copy)
     * and read as a read-only view. */
    "functools = sys.modules.get('functools')\n"
    "if functools is not None and isinstance(getattr(functools, 'partialmethod', None), type):\n"
    "    import types as _types\n"
    "    def _get_keywords(self):\n"
    "        return _types.MappingProxyType(self.__dict__['keywords'])\n"
    "    def _set_keywords(self, kw):\n"
    "        self.__dict__['keywords'] = _plain_keywords(kw)\n"
    "    functools.partialmethod.keywords = property(_get_keywords, _set_keywords)\n"
    /* A codec's error handler answers a pair (replacement, position); the codec read its
     * input again from the exception after the handler returned, then dropped the pair: a
     * tuple subclass's __del__ gave the exception another object then, freeing the input the
     * codec went on reading. A handler of the user's answers through one that hands the codec
     * a plain tuple of a plain str (or bytes) and int, its own pair gone before. */
    "codecs = sys.modules.get('codecs')\n"
    "if codecs is not None:\n"
    /* An encoder goes on where the handler says; CPython 3.11's UTF-16 encoder, sent back
     * before the error over characters outside the BMP, wrote two code units for each it had
     * made room for one: past its output (V98c H2). A position before the error's start is
     * refused for encoding, as one past the end is. */
    "    def _plain_answer(handler):\n"
    "        def plain(exc):\n"
    "            at = size = obj = None\n"
    "            if isinstance(exc, UnicodeEncodeError):\n"
    "                at, obj = exc.start, exc.object\n"
    "                size = len(obj)\n"
    "            r = handler(exc)\n"
    /* (the encoder keeps its error for its next calls: an object the handler set there gave
     * this check another length than the encoder's, V99b H1) */
    "            if obj is not None and exc.object is not obj:\n"
    "                raise TypeError('an encoding error keeps its object in the sandbox: its '\n"
    "                                'handler does not set another')\n"
    "            if not isinstance(r, tuple) or len(r) != 2:\n"
    "                raise TypeError('an error handler must return a (str or bytes, int) tuple')\n"
    "            s, pos = r\n"
    "            del r\n"
    "            if isinstance(s, str):\n"
    "                s = ''.join([s])\n"
    "            elif isinstance(s, bytes):\n"
    "                s = b''.join([s])\n"
    "            pos = int.__index__(pos) if isinstance(pos, int) else operator.index(pos)\n"
    "            if at is not None and (pos + size if pos < 0 else pos) < at:\n"
    "                raise IndexError('position %d from error handler is before the error '\n"
    "                                 'at %d: an encoder does not go back in the sandbox'\n"
    "                                 % (pos, at))\n"
    "            return (s, pos)\n"
    "        plain.__name__ = plain.__qualname__ = getattr(handler, '__name__', 'handler')\n"
    "        return plain\n"
    /* Python's own handlers stay its own: a 'strict' of the user's ran for every strict
     * encoding in C, a str's UTF-8 among them (PyUnicode_AsUTF8 of a lone surrogate, then
     * cached in the str): the import allowlist checked one module name and importlib asked
     * for another (V87b H1). */
    "    _own_handlers = frozenset(('strict', 'ignore', 'replace', 'xmlcharrefreplace',\n"
    "                               'backslashreplace', 'namereplace', 'surrogateescape',\n"
    "                               'surrogatepass'))\n"
    "    def register_error(name, error_handler, _register=codecs.register_error):\n"
    "        if isinstance(name, str):\n"
    "            name = ''.join([name])\n"
    "        if name in _own_handlers:\n"
    "            raise ValueError(\"the error handler '%s' is Python's own and stays so: \"\n"
    "                             \"register yours under a name of its own and pass \"\n"
    "                             \"errors='that name'\" % name)\n"
    "        if not callable(error_handler):\n"
    "            raise TypeError('handler must be callable')\n"
    "        return _register(name, _plain_answer(error_handler))\n"
    "    register_error.__doc__ = codecs.register_error.__doc__\n"
    "    codecs.register_error = register_error\n"
    /* charmap_decode called a mapping of the user's between its error handler's calls, while
     * it read its input from the exception the handler had (a copy): the mapping dropped the
     * exception's object, and the decoder read on in freed memory. A mapping other than a str
     * is read for the 256 bytes first (a dict's lookups run its keys' __eq__). */
    "    def _charmap_decode(real):\n"
    "        def charmap_decode(data, errors=None, mapping=None):\n"
    "            if mapping is not None and type(mapping) is not str:\n"
    "                table = {}\n"
    "                for b in range(256):\n"
    "                    try:\n"
    "                        table[b] = mapping[b]\n"
    "                    except LookupError:\n"
    "                        pass\n"
    "                mapping = table\n"
    "            return real(data, errors, mapping)\n"
    "        charmap_decode.__doc__ = real.__doc__\n"
    "        return charmap_decode\n"
    "    codecs.charmap_decode = _charmap_decode(codecs.charmap_decode)\n"
    "    _c = sys.modules.get('_codecs')\n"
    "    if _c is not None:\n"
    "        _c.charmap_decode = codecs.charmap_decode\n"
    /* copy rebuilds an object from what its __reduce__ says, then sets the state given on
     * it: a callable of the user's that returned a library class had copy set any attribute on
     * it (an operator, __abstractmethods__), as copy's own change. A class is not rebuilt with
     * state. Nor is a built-in object that was there before (its __setstate__ in C, on an object
     * more than copy holds): a live functools.partial given new arguments while it was calling
     * with the old ones freed them under the call, an ndarray its memory under its views. A
     * built-in object's C __setstate__ gets only the state its own type's C reduce gave (a
     * user's __reduce__ naming np.dtype gave one with an object field over a number: any
     * memory; a subclass's __getstate__, which the C reduce asks, gave a cKDTree or a KDTree
     * indices past its data), and no dunder attribute is set from a state (a function's
     * __defaults__). An
     * array that was there before gets no state whatever its class (MaskedArray's Python
     * __setstate__ hands it to ndarray's, which freed the memory under the array's views), nor
     * does a built-in object that was there before get attributes in its dict (a FileIO's
     * readinto, which its buffered stream would call with the view of its buffer). The state
     * a C __setstate__ gets (a class's own, or one below a Python __setstate__ that hands the
     * state on) is copied with a memo of copy's own, not the caller's: the caller's
     * memo answered in place of any part of it (keyed by the id of an object just freed,
     * which the state's next array reuses), so a tree's own reduce gave its nodes with links
     * of the user's (sklearn's Tree, KDTree, scipy's cKDTree and Rotation: any memory, the
     * sandbox escaped). The __setstate__ checked is the one the object's class holds (found
     * along its MRO, never by an attribute read the class or its metaclass answers: a
     * metaclass's __getattribute__ showed the check a Python function while copy called the
     * C one of the object), and copy's steps after the object is made (its state, its items)
     * are taken here, with that __setstate__ (a function or method of the class: one whose
     * binding the user's code answers is refused). */
    /* A reduce naming the interpreter's getattr (enum members reduce to getattr(class,
     * name), with both the user's to choose: a property named __class__, a member's _name_
     * set) read any attribute from copy's frame: it reads with the user's getattr. */
    "copy = sys.modules.get('copy')\n"
    /* The reduce is the type's own only when no class of Python's in its MRO names
     * __reduce_ex__, __reduce__ or __getstate__ but as a method defined in C by that class:
     * a classmethod, staticmethod, partial or callable object of a subclass passed. */
    "def _own_reduce(x, y, _mro=type.__dict__['__mro__'].__get__,\n"
    "                _dict=type.__dict__['__dict__'].__get__,\n"
    "                _flags=type.__dict__['__flags__'].__get__,\n"
    "                _m=type(object.__reduce__), _w=type(object.__init__),\n"
    "                _cm=type(dict.__dict__['fromkeys']),\n"
    "                _names=('__reduce_ex__', '__reduce__', '__getstate__')):\n"
    "    t = type(x)\n"
    "    if type(y) is not t:\n"
    "        return False\n"
    "    for c in _mro(t):\n"
    "        if not _flags(c) & (1 << 9):\n"
    "            continue\n"
    "        d = _dict(c)\n"
    "        for name in _names:\n"
    "            v = d.get(name)\n"
    "            k = type(v)\n"
    "            if v is not None and not ((k is _m or k is _w or k is _cm) and\n"
    "                                      v.__objclass__ is c):\n"
    "                return False\n"
    "    return True\n"
    "_HEAPTYPE = 1 << 9\n"
    /* Does a class in t's MRO set its state in C (its own, or below a Python __setstate__ that
     * hands the state on: pandas' Categorical, numpy's MaskedArray)? */
    "def _c_setstate(t, _mro=type.__dict__['__mro__'].__get__,\n"
    "                _dict=type.__dict__['__dict__'].__get__, _function=type(lambda: None)):\n"
    "    for c in _mro(t):\n"
    "        v = _dict(c).get('__setstate__')\n"
    "        if v is not None and not isinstance(v, _function):\n"
    "            return True\n"
    "    return False\n"
    "def _same_kinds(a, b):\n"
    "    if type(a) is not type(b):\n"
    "        return False\n"
    "    if type(a) is tuple:\n"
    "        return len(a) == len(b) and all(_same_kinds(p, q) for p, q in zip(a, b))\n"
    "    return True\n"
    "def _class_attr(t, name, _mro=type.__dict__['__mro__'].__get__,\n"
    "                _dict=type.__dict__['__dict__'].__get__):\n"
    "    for c in _mro(t):\n"
    "        v = _dict(c).get(name)\n"
    "        if v is not None:\n"
    "            return v\n"
    "    return None\n"
    "def _no_class_state(reconstruct, deepcopy, _refs=sys.getrefcount, _function=type(lambda: "
    "None),\n"
    "                    _plain=(type(lambda: None), type(object.__reduce__), "
    "type(object.__init__)),\n"
    "                    _name=type.__dict__['__name__'].__get__,\n"
    "                    _flags=type.__dict__['__flags__'].__get__,\n"
    "                    _namespace=type(sys.implementation)):\n"
    "    def _reconstruct(x, memo, func, args, state=None, listiter=None, dictiter=None,\n"
    "                     **kwargs):\n"
    "        if func is getattr:\n"
    "            func = _sandbox_builtins['getattr']\n"
    "        if state is None and listiter is None and dictiter is None:\n"
    "            return reconstruct(x, memo, func, args, **kwargs)\n"
    "        made = func\n"
    "        found = []\n"
    "        def func(*a):\n"
    "            y = made(*a)\n"
    "            if isinstance(y, type):\n"
    "                raise TypeError('copy does not set state on a class')\n"
    "            setstate = _class_attr(type(y), '__setstate__') if state is not None else None\n"
    "            if (setstate is not None and type(setstate) not in _plain and\n"
    "                    type(setstate).__name__ != 'cython_function_or_method'):\n"
    "                raise TypeError('copy sets the state of a %s only through a function or '\n"
    "                                'method of its class' % _name(type(y)))\n"
    "            if (state is not None and setstate is not None and\n"
    "                    not isinstance(setstate, _function) and _refs(y) > 2):\n"
    "                raise TypeError('copy sets the state of a built-in object only on a '\n"
    "                                'new one (this %s was there before)' % _name(type(y)))\n"
    "            np = sys.modules.get('numpy')\n"
    "            if (state is not None and np is not None and isinstance(y, np.ndarray)\n"
    "                    and _refs(y) > 2):\n"
    "                raise TypeError('copy sets the state of an array only on a new one '\n"
    "                                '(this %s was there before)' % _name(type(y)))\n"
    "            if (state is not None and setstate is not None and\n"
    "                    not isinstance(setstate, _function) and not _own_reduce(x, y)):\n"
    "                raise TypeError('copy sets the state of a built-in %s only as its own '\n"
    "                                'reduce gives it' % _name(type(y)))\n"
    "            if (state is not None and setstate is None and isinstance(state, tuple)\n"
    "                    and len(state) == 2 and isinstance(state[1], dict)\n"
    "                    and any(type(k) is not str or (k.startswith('__') and\n"
    "                                                    k.endswith('__'))\n"
    "                            for k in state[1])):\n"
    "                raise TypeError('copy sets no dunder attribute')\n"
    "            if (state is not None and setstate is None and _refs(y) > 2 and\n"
    "                    not _flags(type(y)) & _HEAPTYPE):\n"
    "                raise TypeError('copy sets the attributes of a built-in object only '\n"
    "                                'on a new one (this %s was there before)' % _name(type(y)))\n"
    /* (a built-in object's own dict, filled past its class's setattr: a FileIO's readinto
     * was handed the buffered reader's buffer, used after it was freed: V67b H1) */
    /* (by what it is, not its truth: a mapping of the code's that answers empty: V68b H1) */
    "            d = (state[0] if type(state) is tuple and len(state) == 2 else state)\n"
    "            if (state is not None and setstate is None and\n"
    "                    not _flags(type(y)) & _HEAPTYPE and type(y) is not _namespace and\n"
    "                    d is not None and (type(d) is not dict or len(d))):\n"
    "                raise TypeError('copy sets no attribute of a built-in %s: its class has '\n"
    "                                'no __setstate__' % _name(type(y)))\n"
    "            found.append(setstate)\n"
    "            return y\n"
    "        own = memo\n"
    "        if memo is not None and state is not None and _c_setstate(type(x)):\n"
    "            own = {}\n"
    "        y = reconstruct(x, own, func, args, **kwargs)\n"
    "        deep = own is not None\n"
    "        if state is not None:\n"
    "            given = state\n"
    "            if deep:\n"
    "                state = deepcopy(state, own)\n"
    "            setstate = found[-1]\n"
    /* The checks above read the state before its deep copy, whose memo the copied objects'
     * __deepcopy__ are handed: one that filled it with a forged tuple under the ids the state
     * might have had swapped StringIO's state for (None, '', 0, None), read by its C
     * __setstate__ as a str (V87f H1). What a built-in object is given is what was checked:
     * the same kinds of object, a built-in's dict as empty as it was. */
    "            if deep and (not _flags(type(y)) & _HEAPTYPE or\n"
    "                         (setstate is not None and not isinstance(setstate, _function))):\n"
    "                d = (state[0] if type(state) is tuple and len(state) == 2 else state)\n"
    "                if not _same_kinds(given, state) or (\n"
    "                        setstate is None and not _flags(type(y)) & _HEAPTYPE and\n"
    "                        type(y) is not _namespace and d is not None and\n"
    "                        (type(d) is not dict or len(d))):\n"
    "                    raise TypeError('copy sets the state of a built-in %s only as it was '\n"
    "                                    'read (its deep copy gave another)' % _name(type(y)))\n"
    "            if setstate is not None:\n"
    "                setstate(y, state)\n"
    "            else:\n"
    "                slotstate = None\n"
    "                if isinstance(state, tuple) and len(state) == 2:\n"
    "                    state, slotstate = state\n"
    "                if state is not None:\n"
    "                    y.__dict__.update(state)\n"
    "                if slotstate is not None:\n"
    "                    slotstate = dict(slotstate)\n"
    "                    if any(type(k) is not str or (k.startswith('__') and k.endswith('__'))\n"
    "                           for k in slotstate):\n"
    "                        raise TypeError('copy sets no dunder attribute')\n"
    "                    for key, value in slotstate.items():\n"
    "                        setattr(y, key, value)\n"
    "        for item in listiter if listiter is not None else ():\n"
    "            y.append(deepcopy(item, own) if deep else item)\n"
    "        for key, value in dictiter if dictiter is not None else ():\n"
    "            if deep:\n"
    "                key, value = deepcopy(key, own), deepcopy(value, own)\n"
    "            y[key] = value\n"
    "        if own is not memo:\n"
    "            memo[id(x)] = y\n"
    "        return y\n"
    "    return _reconstruct\n"
    "if copy is not None and callable(getattr(copy, '_reconstruct', None)):\n"
    "    copy._reconstruct = _no_class_state(copy._reconstruct, copy.deepcopy)\n"
    /* The debugger (loaded with the data stack: doctest's runner makes one) runs a module as
     * __main__ by clearing the user's namespace and filling it with the real builtins (its
     * methods, even called on another object); its base runs text in that namespace. No
     * debugger is made or run in a worker (pyimport.c refuses them to late imports too). */
    /* inspect.signature of a built-in parses its text signature and reads the namespace of
     * the module the built-in names, which the type rules refuse to library code too: every
     * signature of a built-in failed (help(), and libraries that ask). The names of its
     * defaults are looked up among the modules instead. */
    /* dataclasses.make_dataclass makes its class in types (types.new_class), then reads
     * that module's namespace for the class's annotations: refused to library code, so it
     * failed for every caller. The class is its caller's, as Python 3.12 makes it; the user's
     * (its module is __main__) unless the namespace names another. */
    /* collections' C _count_elements (Counter.update) adds one to a count it reads from the
     * mapping without owning it: the count's __add__ cleared the Counter and answered
     * NotImplemented, and the interpreter read the freed count's class for its TypeError
     * (any memory, as the class's name). The same loop in Python owns what it adds; the C one
     * still counts a list, tuple or string of plain values into plain counts (no code of the
     * user's can run inside it then: their hashes and comparisons are the interpreter's, and
     * a count plus one stays an int). */
    "collections = sys.modules.get('collections')\n"
    "if collections is not None and callable(getattr(collections, '_count_elements', None)):\n"
    "    def _counted(count_c, plain=frozenset((str, int, float, bytes, bool, type(None))),\n"
    "                 whole=(list, tuple, str)):\n"
    "        def _count_elements(mapping, iterable):\n"
    "            'Tally elements from the iterable.'\n"
    "            if (type(iterable) in whole and plain.issuperset(map(type, iterable)) and\n"
    "                    type(mapping) is collections.Counter and\n"
    "                    len(mapping) <= len(iterable) and\n"
    "                    all(type(v) is int for v in dict.values(mapping))):\n"
    "                return count_c(mapping, iterable)\n"
    "            mapping_get = mapping.get\n"
    "            for elem in iterable:\n"
    "                mapping[elem] = mapping_get(elem, 0) + 1\n"
    "        _count_elements.__module__ = 'collections'\n"
    "        return _count_elements\n"
    "    collections._count_elements = _counted(collections._count_elements)\n"
    "dataclasses = sys.modules.get('dataclasses')\n"
    "def _made_here(make):\n"
    "    def make_dataclass(cls_name, fields, *, bases=(), namespace=None, **kwargs):\n"
    "        namespace = dict(namespace or {})\n"
    "        namespace.setdefault('__module__', '__main__')\n"
    "        return make(cls_name, fields, bases=bases, namespace=namespace, **kwargs)\n"
    "    make_dataclass.__doc__ = make.__doc__\n"
    "    make_dataclass.__module__ = make.__module__\n"
    "    return make_dataclass\n"
    "if dataclasses is not None and callable(getattr(dataclasses, 'make_dataclass', None)):\n"
    "    dataclasses.make_dataclass = _made_here(dataclasses.make_dataclass)\n"
    /* sqlite3's connect (a database in memory; a name is a workspace file, read into memory
     * and written back when it commits) and its authorizer: pysqlite.c. */
    "inspect = sys.modules.get('inspect')\n"
    "class _TextSignatureOf:\n"
    "    __slots__ = ('_of',)\n"
    "    __module__ = None\n"
    "    def __init__(self, of):\n"
    "        self._of = of\n"
    "    @property\n"
    "    def __self__(self):\n"
    "        try:\n"
    "            return self._of.__self__\n"
    "        except AttributeError:\n"
    /* a built-in's module, which the rules hide: bound to a module all the same */
    "            return inspect if type(self._of) is type(len) else None\n"
    "    def __repr__(self):\n"
    "        return repr(self._of)\n"
    "def _from_text(fromstr):\n"
    "    def _signature_fromstr(cls, obj, s, skip_bound_arg=True):\n"
    "        return fromstr(cls, _TextSignatureOf(obj), s, skip_bound_arg)\n"
    "    return _signature_fromstr\n"
    "if inspect is not None and callable(getattr(inspect, '_signature_fromstr', None)):\n"
    "    inspect._signature_fromstr = _from_text(inspect._signature_fromstr)\n"
    /* scikit-learn's array namespace for numpy (get_namespace's, public) forwards any name
     * to the real numpy: numpy.ctypeslib held the real os, ctypes and sys. It gives what the
     * numpy proxy gives: a submodule as its proxy, no private name. */
    "_array_api = sys.modules.get('sklearn.utils._array_api')\n"
    "def _forwarding(getattr_):\n"
    "    def __getattr__(self, name):\n"
    "        if not isinstance(name, str) or (name.startswith('_') and\n"
    "                name not in ('__name__', '__version__', '__doc__')):\n"
    "            raise AttributeError(name)\n"
    "        return _as_user_holds(getattr_(self, name))\n"
    "    return __getattr__\n"
    "if _array_api is not None and isinstance(getattr(_array_api, '_NumPyApiWrapper', None),\n"
    "                                         type):\n"
    "    _array_api._NumPyApiWrapper.__getattr__ = _forwarding(\n"
    "        _array_api._NumPyApiWrapper.__getattr__)\n"
    /* Library functions that import a module and return it (scikit-learn's
     * check_pandas_support gives the real pandas, and from it everything): what they return
     * is what the user may hold, for every caller (library code works with proxies). */
    "def _gives_proxies(fn):\n"
    "    def wrapper(*args, **kwargs):\n"
    "        return _as_user_holds(fn(*args, **kwargs))\n"
    "    wrapper.__name__, wrapper.__qualname__ = fn.__name__, fn.__qualname__\n"
    "    wrapper.__doc__, wrapper.__module__ = fn.__doc__, fn.__module__\n"
    "    return wrapper\n"
    "for _module, _name in (('sklearn.utils', 'check_pandas_support'),):\n"
    "    _m = sys.modules.get(_module)\n"
    "    _fn = getattr(_m, _name, None) if _m is not None else None\n"
    "    if callable(_fn):\n"
    "        _made = _gives_proxies(_fn)\n"
    "        for _holder in list(sys.modules.values()):\n"
    "            _d = getattr(_holder, '__dict__', None)\n"
    "            if isinstance(_d, dict):\n"
    "                for _k, _v in list(_d.items()):\n"
    "                    if _v is _fn:\n"
    "                        _d[_k] = _made\n"
    /* tarfile's gzip stream kept the real zlib module as an attribute of each stream (the
     * code reached its namespace through a library's vars(), and wrote into it through a
     * library's setattr: V71b H1). After it is made, a stream keeps what it uses of zlib. */
    "tarfile = sys.modules.get('tarfile')\n"
    "def _stream_init(init):\n"
    "    made = []\n"
    "    def standin(z):\n"
    "        if not made:\n"
    "            class zlib:\n"
    "                __slots__ = ()\n"
    "                compressobj = staticmethod(z.compressobj)\n"
    "                decompressobj = staticmethod(z.decompressobj)\n"
    "                crc32 = staticmethod(z.crc32)\n"
    "                DEFLATED, MAX_WBITS, DEF_MEM_LEVEL = z.DEFLATED, z.MAX_WBITS, "
    "z.DEF_MEM_LEVEL\n"
    "                error = z.error\n"
    "                def __repr__(self):\n"
    "                    return \"<module 'zlib'>\"\n"
    "            made.append(zlib())\n"
    "        return made[0]\n"
    "    def __init__(self, *args, **kwargs):\n"
    "        init(self, *args, **kwargs)\n"
    "        z = getattr(self, 'zlib', None)\n"
    "        if type(z) is type(sys):\n"
    "            self.zlib = standin(z)\n"
    "    __init__.__doc__ = init.__doc__\n"
    "    return __init__\n"
    "if tarfile is not None and isinstance(getattr(tarfile, '_Stream', None), type):\n"
    "    tarfile._Stream.__init__ = _stream_init(tarfile._Stream.__init__)\n"
    /* argparse and typing call vars() on objects the code hands them (a sub-parser's answer,
     * an action, a class's bases) from their own frames, and hand what it gives back to the
     * code (argparse sets each item on the code's namespace object; typing evaluates the
     * code's annotations in it): a class's raw namespace (type's __subclasses__), a real
     * module's (V71b H1-H2), a library function's (its __wrapped__). Their vars() answers as
     * the code's own does: a module's namespace as the code may see it; the code's own
     * object's dict; any other's (a class's, a library object's: argparse's actions) a copy
     * without dunder names, its modules as the code may hold them. */
    "def _vars_as_user(*args):\n"
    "    if len(args) != 1:\n"
    "        raise TypeError('vars() takes one argument here')\n"
    "    o = args[0]\n"
    "    if isinstance(o, type(sys)):\n"
    "        return _read_for_user(o, '__dict__')\n"
    "    try:\n"
    "        d = _read_for_user(o, '__dict__')\n"
    "    except AttributeError:\n"
    "        d = vars(o)\n"
    "    else:\n"
    "        if not isinstance(o, type) and not any(type(k) is not str or k.startswith('__')\n"
    "                                               for k in d):\n"
    "            return d\n"
    "    out = {}\n"
    "    for k, v in dict(d).items():\n"
    "        if type(k) is str and not k.startswith('__'):\n"
    "            if isinstance(v, type(sys)):\n"
    "                try:\n"
    "                    v = _as_user_holds(v)\n"
    "                except ImportError:\n"
    "                    continue\n"
    "            out[k] = v\n"
    "    return out\n"
    "for _name in ('argparse', 'typing'):\n"
    "    _m = sys.modules.get(_name)\n"
    "    if _m is not None:\n"
    "        _m.vars = _vars_as_user\n"
    "def _no_debugger(self, *args, **kwargs):\n"
    "    raise RuntimeError('the debugger is not available in the sandbox')\n"
    "for _name, _cls, _methods in (\n"
    "        ('bdb', 'Bdb', ('__init__', 'run', 'runeval', 'runctx', 'runcall')),\n"
    "        ('pdb', 'Pdb', ('__init__', '_runmodule', '_runscript'))):\n"
    "    _m = sys.modules.get(_name)\n"
    "    if _m is not None and isinstance(getattr(_m, _cls, None), type):\n"
    "        for _method in _methods:\n"
    "            setattr(getattr(_m, _cls), _method, _no_debugger)\n";

/* _as_user_holds(value): a module as the user may hold it (its proxy, or ImportError), any
 * other value as it is. For the library fixes' forwarders. */
static PyObject *as_user_holds(PyObject *self, PyObject *value)
{
	(void)self;
	return importer_result(Py_NewRef(value));
}

static PyMethodDef as_user_holds_def = {"_as_user_holds", as_user_holds, METH_O, NULL};

/* _read_for_user(obj, name[, default]) and _write_for_user(obj, name, value): the library
 * fixes' readers by a name the user's code chose (functools.update_wrapper's). */
static PyObject *read_for_user(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	PyObject *v;

	(void)self;
	if (n < 2 || n > 3 || !PyUnicode_Check(args[1]))
		return PyErr_Format(PyExc_TypeError, "_read_for_user(obj, name[, default])");
	/* ('__dict__' as vars() answers, but a function's, and a class's namespace as its
	 * read-only view, which update_wrapper copies without the names the rules refuse:
	 * update_wrapper's assigned= and updated= handed out, and filled, a FileIO's own dict,
	 * past its class's guard: V66b H1) */
	v = is_dict_name(args[1]) && !function_dict(args[0]) && !PyType_Check(args[0])
	        ? object_dict(args[0])
	        : directed_getattr(args[0], args[1]);
	if (!v && n == 3 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
		PyErr_Clear();
		return Py_NewRef(args[2]);
	}
	return v;
}

static PyObject *write_for_user(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	if (n != 3 || !PyUnicode_Check(args[1]))
		return PyErr_Format(PyExc_TypeError, "_write_for_user(obj, name, value)");
	if (is_dict_name(args[1]) && !object_dict_shown(args[0]) && !function_dict(args[0]))
		return object_dict(args[0]); /* (its refusal) */
	if (directed_setattr(args[0], args[1], args[2]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef for_user_defs[] = {
    {"_read_for_user", (PyCFunction)(void (*)(void))read_for_user, METH_FASTCALL, NULL},
    {"_write_for_user", (PyCFunction)(void (*)(void))write_for_user, METH_FASTCALL, NULL},
};

static int library_fix(void)
{
	PyObject *g = PyDict_New(), *r = NULL, *f = PyCFunction_New(&as_user_holds_def, NULL);
	PyObject *rd = PyCFunction_New(&for_user_defs[0], NULL);
	PyObject *wr = PyCFunction_New(&for_user_defs[1], NULL);
	PyObject *pk = pylayer_plain_kwargs_function();

	PyObject *code = Py_CompileString(library_fixes, "<sandbox>", Py_file_input);

	if (code && g && f && rd && wr && pk &&
	    PyDict_SetItemString(g, "_plain_keywords", pk) == 0 &&
	    PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0 &&
	    PyDict_SetItemString(g, "_as_user_holds", f) == 0 &&
	    PyDict_SetItemString(g, "_read_for_user", rd) == 0 &&
	    PyDict_SetItemString(g, "_write_for_user", wr) == 0 &&
	    PyDict_SetItemString(g, "_sandbox_builtins", safe_builtins) == 0)
		r = PyEval_EvalCode(code, g, g);
	Py_XDECREF(rd);
	Py_XDECREF(wr);
	Py_XDECREF(pk);
	Py_XDECREF(f);
	Py_XDECREF(code);
	Py_XDECREF(g);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

/* sympy evaluates text the user writes with the real builtins module in the namespace: its
 * expression parser (sympify of a string) copies that module's functions into it, and lambdify
 * puts the module itself there, beside the code it prints from the expression (a Symbol's name
 * is printed as it is). Each gets a view of the sandbox's builtins instead, so that text has the
 * user's builtins, as its code has the user's attribute rules. */
static int sympy_fix(void)
{
	static const char *const modules[] = {"sympy.parsing.sympy_parser",
	                                      "sympy.utilities.lambdify", NULL};
	int rc = 0;

	for (const char *const *mod = modules; rc == 0 && *mod; mod++) {
		PyObject *name = PyUnicode_FromString(*mod);
		PyObject *m = name ? PyImport_GetModule(name) : NULL, *view;

		Py_XDECREF(name);
		if (!m) {
			rc = PyErr_Occurred() ? -1 : 0;
			continue;
		}
		view = pyproxy_view_of(safe_builtins, "builtins");
		rc = view ? PyObject_SetAttrString(m, "builtins", view) : -1;
		Py_XDECREF(view);
		Py_DECREF(m);
	}
	return rc;
}

/* ---- ctypes ---------------------------------------------------------------------------- */

/* ctypes is never in the user's imports, but libraries hand out its classes (numpy's
 * ctypeslib: as_ctypes_type, ndpointer, c_intp), and a ctypes object is memory: a pointer made
 * from a number reads and writes any address (ndpointer(...)(address).contents), a subclass of
 * a base reached through mro() puts a py_object over it. While the layer is armed no ctypes
 * object and no ctypes class is made, by anyone: every ctypes class's constructor (tp_new,
 * which type.__call__, cls.__new__ and the bases' __new__ all reach) and the metatypes' (a new
 * class) refuse. Objects the C code makes from another ctypes object (a cast, .contents) need
 * one to start from. The originals run while the layer is disarmed (the zygote, a worker's
 * start), and classes made then inherit the guard. */
#define CTYPES_BASES 6
static PyTypeObject *ctypes_base[CTYPES_BASES], *ctypes_meta[CTYPES_BASES];
static newfunc ctypes_base_new[CTYPES_BASES], ctypes_meta_new[CTYPES_BASES];
static int ctypes_sealed;

static PyObject *ctypes_refuse(void)
{
	PyErr_SetString(PyExc_PermissionError, "ctypes is not allowed in the sandbox");
	return NULL;
}

static PyObject *ctypes_object_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (audit_armed)
		return ctypes_refuse();
	for (int i = 0; i < CTYPES_BASES; i++)
		if (ctypes_base[i] && PyType_IsSubtype(t, ctypes_base[i]))
			return ctypes_base_new[i](t, args, kw);
	return ctypes_refuse();
}

static PyObject *ctypes_class_new(PyTypeObject *meta, PyObject *args, PyObject *kw)
{
	if (audit_armed)
		return ctypes_refuse();
	for (int i = 0; i < CTYPES_BASES; i++)
		if (ctypes_meta[i] && PyType_IsSubtype(meta, ctypes_meta[i]))
			return ctypes_meta_new[i](meta, args, kw);
	return ctypes_refuse();
}

int pylayer_seal_ctypes(PyObject *module)
{
	static const char *const bases[CTYPES_BASES] = {
	    "_SimpleCData", "Structure", "Union", "_Pointer", "Array", "CFuncPtr",
	};

	if (ctypes_sealed)
		return 0;
	for (int i = 0; i < CTYPES_BASES; i++) {
		PyObject *b = PyObject_GetAttrString(module, bases[i]);
		PyTypeObject *meta;
		if (!b || !PyType_Check(b)) {
			Py_XDECREF(b);
			return b ? (PyErr_Format(PyExc_TypeError, "_ctypes.%s is not a class",
			                         bases[i]),
			            -1)
			         : -1;
		}
		ctypes_base[i] = (PyTypeObject *)b; /* the module keeps it */
		ctypes_base_new[i] = ctypes_base[i]->tp_new;
		Py_DECREF(b);
		meta = Py_TYPE(ctypes_base[i]);
		if (meta == &PyType_Type || !meta->tp_new) {
			PyErr_Format(PyExc_TypeError, "_ctypes.%s has no metatype of its own",
			             bases[i]);
			return -1;
		}
		ctypes_meta[i] = meta;
		ctypes_meta_new[i] = meta->tp_new == ctypes_class_new ? NULL : meta->tp_new;
	}
	for (int i = 0; i < CTYPES_BASES; i++) {
		if (!ctypes_meta_new[i] || !ctypes_base_new[i]) {
			PyErr_SetString(PyExc_TypeError, "_ctypes has no constructors to guard");
			return -1;
		}
		ctypes_meta[i]->tp_new = ctypes_class_new;
		PyType_Modified(ctypes_meta[i]);
		/* The base and the classes made before the guard (they copied its constructor). */
		if (pyguard_replace_new(ctypes_base[i], ctypes_base_new[i], ctypes_object_new) < 0)
			return -1;
	}
	ctypes_sealed = 1;
	return 0;
}

/* _struct.Struct takes its format in __init__, which may be called again on a live Struct: the
 * codes it is packing or unpacking by are freed and remade under it (pack_into went on writing
 * past the bounds it had checked, by codes a re-entered __init__ made; iter_unpack read a new
 * size's worth past its buffer). While armed, a Struct gets its format once: its size is -1
 * until then (read by the class's own getter, which a subclass does not replace). Nor is one
 * used before it has a format (Struct.__new__ alone makes one: pack_into read past its
 * arguments, unpack_from failed inside, sys.getsizeof read its codes through NULL). */
static initproc struct_init_real;
static PyObject *struct_size_get;

/* The Struct's size, -1 before it has a format; -2 on error. */
static Py_ssize_t struct_size(PyObject *self)
{
	PyObject *size = Py_TYPE(struct_size_get)->tp_descr_get(struct_size_get, self, NULL);
	Py_ssize_t n = size ? PyLong_AsSsize_t(size) : -2;

	Py_XDECREF(size);
	return n == -1 && PyErr_Occurred() ? -2 : n;
}

static int struct_init_checked(PyObject *self, PyObject *args, PyObject *kw)
{
	if (pylayer_armed()) {
		Py_ssize_t n = struct_size(self);
		if (n == -2)
			return -1;
		if (n != -1) {
			PyErr_SetString(
			    PyExc_TypeError,
			    "a struct.Struct is given its format once, when it is made (make "
			    "a new Struct for another format)");
			return -1;
		}
	}
	return struct_init_real(self, args, kw);
}

/* Struct's methods that pack or unpack, each run by the one below when it has a format. */
#define STRUCT_METHODS 6
static const char *const struct_method_names[STRUCT_METHODS] = {
    "pack", "pack_into", "unpack", "unpack_from", "iter_unpack", "__sizeof__",
};
static PyObject *struct_method_real[STRUCT_METHODS]; /* their method descriptors */

static PyObject *struct_method(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args), size;
	PyObject *stack[8], **argv = n + 1 <= 8 ? stack : PyMem_New(PyObject *, n + 1), *r;

	if (!argv)
		return PyErr_NoMemory();
	size = pylayer_armed() ? struct_size(self) : 0;
	if (size < 0) {
		if (size == -1)
			PyErr_SetString(PyExc_TypeError,
			                "this struct.Struct has no format (make it "
			                "with struct.Struct(format))");
		r = NULL;
	} else {
		argv[0] = self;
		for (Py_ssize_t k = 0; k < n; k++)
			argv[k + 1] = PyTuple_GET_ITEM(args, k);
		r = PyObject_VectorcallDict(struct_method_real[i], argv, (size_t)n + 1, kw);
	}
	if (argv != stack)
		PyMem_Free(argv);
	return r;
}

#define STRUCT_METHOD(i)                                                                           \
	static PyObject *struct_method_##i(PyObject *self, PyObject *args, PyObject *kw)           \
	{                                                                                          \
		return struct_method(i, self, args, kw);                                           \
	}
STRUCT_METHOD(0)
STRUCT_METHOD(1)
STRUCT_METHOD(2)
STRUCT_METHOD(3)
STRUCT_METHOD(4)
STRUCT_METHOD(5)
static PyCFunctionWithKeywords struct_method_fn[STRUCT_METHODS] = {
    struct_method_0, struct_method_1, struct_method_2,
    struct_method_3, struct_method_4, struct_method_5,
};
static PyMethodDef struct_method_def[STRUCT_METHODS];

static int replace_init(PyTypeObject *t, void *arg)
{
	(void)arg;
	if (t->tp_init == struct_init_real) {
		t->tp_init = struct_init_checked;
		PyType_Modified(t);
	}
	return 0;
}

int pylayer_seal_struct(PyObject *module)
{
	PyObject *cls, *init;
	PyTypeObject *t;
	int rc = -1;

	if (struct_init_real)
		return 0;
	cls = PyObject_GetAttrString(module, "Struct");
	if (!cls)
		return -1;
	t = (PyTypeObject *)cls;
	init = PyType_Check(cls) ? PyDict_GetItemString(t->tp_dict, "__init__") : NULL;
	struct_size_get = PyType_Check(cls) ? PyDict_GetItemString(t->tp_dict, "size") : NULL;
	if (!init || !PyObject_TypeCheck(init, &PyWrapperDescr_Type) ||
	    ((PyWrapperDescrObject *)init)->d_wrapped != (void *)t->tp_init || !struct_size_get ||
	    !Py_TYPE(struct_size_get)->tp_descr_get) {
		PyErr_SetString(PyExc_TypeError, "_struct.Struct is not as known");
		goto out;
	}
	for (int i = 0; i < STRUCT_METHODS; i++) {
		PyObject *m = PyDict_GetItemString(t->tp_dict, struct_method_names[i]), *d;
		if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type)) {
			PyErr_Format(PyExc_TypeError, "_struct.Struct.%s is not as known",
			             struct_method_names[i]);
			goto out;
		}
		struct_method_real[i] = Py_NewRef(m);
		struct_method_def[i] = (PyMethodDef){
		    struct_method_names[i], (PyCFunction)(void (*)(void))struct_method_fn[i],
		    METH_VARARGS | METH_KEYWORDS, ((PyMethodDescrObject *)m)->d_method->ml_doc};
		d = PyDescr_NewMethod(t, &struct_method_def[i]);
		if (!d || PyDict_SetItemString(t->tp_dict, struct_method_names[i], d) < 0) {
			Py_XDECREF(d);
			goto out;
		}
		Py_DECREF(d);
	}
	Py_INCREF(struct_size_get); /* the class keeps it; so does this */
	struct_init_real = t->tp_init;
	/* Struct(fmt) calls the slot; s.__init__(fmt) the wrapper in the class's dict. */
	((PyWrapperDescrObject *)init)->d_wrapped = (void *)struct_init_checked;
	PyType_Modified(t);
	rc = pyguard_walk(t, replace_init, NULL);
out:
	Py_DECREF(cls);
	return rc;
}

/* _csv's reader and writer classes could be made without their constructors in CPython
 * 3.11 (type(csv.reader([]))(), object.__new__ of either): their methods read the fields
 * the constructors set through NULL. Neither class can be made but by csv.reader() and
 * csv.writer(), as in later releases. */
static int csv_class_sealed(PyObject *made)
{
	PyTypeObject *t = made ? Py_TYPE(made) : NULL;

	if (!t)
		return -1;
	t->tp_new = NULL;
	t->tp_flags |= Py_TPFLAGS_DISALLOW_INSTANTIATION;
	PyType_Modified(t);
	Py_DECREF(made);
	return 0;
}

int pylayer_seal_csv(PyObject *module)
{
	PyObject *io = PyImport_ImportModule("io"), *sink;
	int rc;

	sink = io ? PyObject_CallMethod(io, "StringIO", NULL) : NULL;
	Py_XDECREF(io);
	rc = sink && csv_class_sealed(PyObject_CallMethod(module, "reader", "(())")) == 0 &&
	             csv_class_sealed(PyObject_CallMethod(module, "writer", "O", sink)) == 0
	         ? 0
	         : -1;
	Py_XDECREF(sink);
	return rc;
}

/* ---- entry points -------------------------------------------------------------------- */

int pylayer_hook_install(void)
{
	return PySys_AddAuditHook(audit_hook, NULL);
}

void pylayer_arm(int armed)
{
	if (audit_armed == armed)
		return;
	if (audit_armed)
		Py_FatalError("the Python layer cannot be disarmed");
	audit_armed = armed;
	if (mprotect(&armed_page, sizeof(armed_page), PROT_READ) != 0)
		Py_FatalError("the Python layer's switch could not be made read-only");
}

int pylayer_armed(void)
{
	return audit_armed;
}

/* A bound method pickles (and copies: copy.copy takes its __reduce_ex__) as getattr(self,
 * name), with the name of its function, which the user may set to any string, and the getattr
 * of the builtins of the frame that asks: copy's, the interpreter's own. Any attribute of any
 * object was read so, past the rules on names. The reduction of a bound method names the
 * checked getattr while the layer is armed. */
static PyObject *method_reduce(PyObject *self, PyObject *unused)
{
	PyObject *name, *getattr_;

	(void)unused;
	if (!PyMethod_Check(self)) {
		PyErr_SetString(PyExc_TypeError, "__reduce__ of a method, given another object");
		return NULL;
	}
	name = PyObject_GetAttrString(PyMethod_GET_FUNCTION(self), "__name__");
	if (!name)
		return NULL;
	getattr_ =
	    PyDict_GetItemString(audit_armed ? safe_builtins : PyEval_GetBuiltins(), "getattr");
	if (!getattr_) {
		Py_DECREF(name);
		PyErr_SetString(PyExc_RuntimeError, "no getattr among the builtins");
		return NULL;
	}
	return Py_BuildValue("O(ON)", getattr_, PyMethod_GET_SELF(self), name);
}

static PyMethodDef method_reduce_def = {"__reduce__", method_reduce, METH_NOARGS,
                                        "Helper for pickle."};

/* A built-in function or method, a method-wrapper and the descriptors of C classes pickle the
 * same way, with the getattr of the asking frame's builtins: a library's frame (a
 * singledispatchmethod's, calling object.__reduce_ex__ on the user's behalf) handed the user's
 * code the interpreter's own getattr. Their reductions name the checked getattr while armed. */
static struct {
	PyTypeObject *type;
	PyObject *real; /* the class's own __reduce__ */
} reducers[] = {
    {&PyCFunction_Type, NULL},        {&_PyMethodWrapper_Type, NULL}, {&PyMethodDescr_Type, NULL},
    {&PyClassMethodDescr_Type, NULL}, {&PyMemberDescr_Type, NULL},    {&PyGetSetDescr_Type, NULL},
    {&PyWrapperDescr_Type, NULL},
};
static PyObject *real_getattr; /* the interpreter's own */

static PyObject *builtin_reduce(PyObject *self, PyObject *unused)
{
	PyObject *r = NULL, *checked;

	(void)unused;
	for (size_t i = 0; !r && i < sizeof(reducers) / sizeof(reducers[0]); i++)
		if (reducers[i].real && PyObject_TypeCheck(self, reducers[i].type)) {
			r = PyObject_CallOneArg(reducers[i].real, self);
			if (!r)
				return NULL;
		}
	if (!r) {
		PyErr_SetString(PyExc_TypeError, "__reduce__ of a built-in, given another object");
		return NULL;
	}
	if (!audit_armed || !PyTuple_Check(r) || PyTuple_GET_SIZE(r) < 1 ||
	    PyTuple_GET_ITEM(r, 0) != real_getattr)
		return r;
	checked = PyDict_GetItemString(safe_builtins, "getattr");
	if (!checked) {
		Py_DECREF(r);
		PyErr_SetString(PyExc_RuntimeError, "no getattr among the builtins");
		return NULL;
	}
	{
		PyObject *t = PyTuple_GetSlice(r, 0, PyTuple_GET_SIZE(r));
		Py_DECREF(r);
		if (!t)
			return NULL;
		Py_SETREF(PyTuple_GET_ITEM(t, 0), Py_NewRef(checked)); /* t is new: its own */
		return t;
	}
}

static PyMethodDef builtin_reduce_def = {"__reduce__", builtin_reduce, METH_NOARGS,
                                         "Helper for pickle."};

static int method_reduce_fix(void)
{
	PyObject *d = PyDescr_NewMethod(&PyMethod_Type, &method_reduce_def);
	int rc = d ? PyDict_SetItemString(PyMethod_Type.tp_dict, "__reduce__", d) : -1;

	Py_XDECREF(d);
	PyType_Modified(&PyMethod_Type);
	if (rc < 0)
		return -1;
	real_getattr = PyDict_GetItemString(PyEval_GetBuiltins(), "getattr");
	if (!real_getattr) {
		PyErr_SetString(PyExc_RuntimeError, "no getattr among the builtins");
		return -1;
	}
	Py_INCREF(real_getattr);
	for (size_t i = 0; i < sizeof(reducers) / sizeof(reducers[0]); i++) {
		PyTypeObject *t = reducers[i].type;
		PyObject *real = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "__reduce__") : NULL;
		if (!real)
			continue; /* object's, which names no getattr */
		reducers[i].real = Py_NewRef(real);
		d = PyDescr_NewMethod(t, &builtin_reduce_def);
		rc = d ? PyDict_SetItemString(t->tp_dict, "__reduce__", d) : -1;
		Py_XDECREF(d);
		PyType_Modified(t);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int pylayer_init(const struct zygote_config *cfg)
{
	PyObject *op = PyImport_ImportModule("operator");

	/* The interpreter's own unraisable and exception hooks: a hook the user's code set is
	 * refused the objects it would be handed. */
	default_unraisablehook = Py_XNewRef(PySys_GetObject("__unraisablehook__"));
	default_excepthook = Py_XNewRef(PySys_GetObject("__excepthook__"));

	if (op) {
		real_attrgetter = PyObject_GetAttrString(op, "attrgetter");
		real_methodcaller = PyObject_GetAttrString(op, "methodcaller");
		Py_DECREF(op);
	}
	/* The library fixes change real modules' names: before the proxies copy them. */
	if (!field_split) {
		PyObject *st = PyImport_ImportModule("_string");
		field_split = st ? PyObject_GetAttrString(st, "formatter_field_name_split") : NULL;
		field_parser = st ? PyObject_GetAttrString(st, "formatter_parser") : NULL;
		Py_XDECREF(st);
		if (!field_split || !field_parser)
			return -1;
	}
	if (!real_attrgetter || !real_methodcaller || devnull_init() < 0 ||
	    operator_classes_fix() < 0 || str_format_fix() < 0 || print_fix() < 0 ||
	    getattr_fix() < 0 || argparse_fix() < 0 || plain_records_fix() < 0 ||
	    builtins_build(cfg) < 0 || method_reduce_fix() < 0 || library_fix() < 0 ||
	    pyproxy_init(cfg) < 0 || future_proxy_add() < 0 || sympy_fix() < 0 ||
	    importers_seal() < 0 || imports_by_c_fix() < 0)
		return -1;
	return 0;
}

/* f's code (*co, a new reference) and its bytecode (new; NULL, with *co released and no
 * exception set, when it cannot be had). */
static PyObject *frame_bytecode(PyFrameObject *f, PyCodeObject **co)
{
	PyObject *code;

	*co = PyFrame_GetCode(f);
	code = PyCode_GetCode(*co);
	if (!code) {
		PyErr_Clear();
		Py_CLEAR(*co);
	}
	return code;
}

/* Is f's current instruction one of op1, op2 on the attribute name (its own bytecode, as
 * opposed to a call that reaches the attribute in C)? */
static int frame_attr_op(PyFrameObject *f, PyObject *name, int op1, int op2)
{
	PyCodeObject *co;
	PyObject *code = frame_bytecode(f, &co), *names;
	int lasti = PyFrame_GetLasti(f), match = 0;
	const unsigned char *p;
	Py_ssize_t n;
	unsigned int arg;

	if (!code)
		return 0;
	names = co->co_names;
	p = (const unsigned char *)PyBytes_AS_STRING(code);
	n = PyBytes_GET_SIZE(code);
	if (lasti >= 0 && lasti + 1 < n && !(lasti & 1) && (p[lasti] == op1 || p[lasti] == op2)) {
		arg = p[lasti + 1];
		for (int i = lasti - 2, shift = 8; i >= 0 && p[i] == op_extended_arg && shift < 32;
		     i -= 2, shift += 8)
			arg |= (unsigned int)p[i + 1] << shift;
#if PY_VERSION_HEX >= 0x030C0000
		if (p[lasti] == op_load_attr)
			arg >>= 1;
#endif
		match = (Py_ssize_t)arg < PyTuple_GET_SIZE(names) &&
		        PyUnicode_CheckExact(PyTuple_GET_ITEM(names, arg)) &&
		        PyUnicode_Compare(PyTuple_GET_ITEM(names, arg), name) == 0;
	}
	Py_DECREF(code);
	Py_DECREF(co);
	return match;
}

int pylayer_frame_reads(PyFrameObject *f, PyObject *name)
{
	return frame_attr_op(f, name, op_load_attr, op_load_method);
}

int pylayer_frame_attr(PyFrameObject *f, PyObject *name, int store)
{
	PyCodeObject *co;
	PyObject *code;
	int lasti, match = 0;

	if (store)
		return frame_attr_op(f, name, op_store_attr, op_delete_attr);
	if (frame_attr_op(f, name, op_load_attr, op_load_method) ||
	    frame_attr_op(f, name, op_import_from, -1))
		return 1;
	/* A class pattern reads its keywords' attributes of the subject. */
	co = PyFrame_GetCode(f);
	code = PyCode_GetCode(co);
	lasti = PyFrame_GetLasti(f);
	if (code && lasti >= 0 && lasti < PyBytes_GET_SIZE(code) && !(lasti & 1))
		match = ((const unsigned char *)PyBytes_AS_STRING(code))[lasti] == op_match_class;
	if (!code)
		PyErr_Clear();
	Py_XDECREF(code);
	Py_DECREF(co);
	return match;
}

int pylayer_frame_stores(PyFrameObject *f, PyObject *name)
{
	return frame_attr_op(f, name, op_store_attr, op_delete_attr);
}

int pylayer_frame_calls(PyFrameObject *f, const char *const *names)
{
	PyCodeObject *co = PyFrame_GetCode(f);
	PyObject *code = PyCode_GetCode(co);
	int lasti = PyFrame_GetLasti(f), line, calls = 0;
	const unsigned char *p;

	if (!code) {
		PyErr_Clear();
		Py_DECREF(co);
		return 0;
	}
	p = (const unsigned char *)PyBytes_AS_STRING(code);
	if (op_call >= 0 && lasti >= 0 && !(lasti & 1) && lasti + 1 < PyBytes_GET_SIZE(code) &&
	    (p[lasti] == op_call || p[lasti] == op_precall)) {
		line = PyCode_Addr2Line(co, lasti);
		for (int i = lasti - 2; !calls && i >= 0 && PyCode_Addr2Line(co, i) == line;
		     i -= 2) {
			unsigned int arg = p[i + 1];
			PyObject *name;
			if (p[i] != op_load_name && p[i] != op_load_global)
				continue;
			for (int j = i - 2, shift = 8;
			     j >= 0 && p[j] == op_extended_arg && shift < 32; j -= 2, shift += 8)
				arg |= (unsigned int)p[j + 1] << shift;
#if PY_VERSION_HEX >= 0x030B0000
			if (p[i] == op_load_global)
				arg >>= 1; /* its low bit says whether a NULL is pushed too */
#endif
			if ((Py_ssize_t)arg >= PyTuple_GET_SIZE(co->co_names))
				continue;
			name = PyTuple_GET_ITEM(co->co_names, arg);
			for (const char *const *n = names; !calls && *n; n++)
				calls = PyUnicode_Check(name) &&
				        PyUnicode_CompareWithASCIIString(name, *n) == 0;
		}
	}
	Py_DECREF(code);
	Py_DECREF(co);
	return calls;
}

/* The instruction before the one at i (code units, past its inline cache entries and with its
 * EXTENDED_ARG prefixes): its offset, and its argument in *arg; -1 at the start. */
static Py_ssize_t instr_before(const unsigned char *p, Py_ssize_t i, unsigned int *arg)
{
	Py_ssize_t j = i - 2;

	while (j >= 0 && p[j] == 0) /* CACHE */
		j -= 2;
	if (j < 0)
		return -1;
	*arg = p[j + 1];
	for (Py_ssize_t k = j - 2, shift = 8; k >= 0 && p[k] == op_extended_arg && shift < 32;
	     k -= 2, shift += 8)
		*arg |= (unsigned int)p[k + 1] << shift;
	return j;
}

/* Does an instruction push exactly one value and pop none? */
static int pushes_one(int op, unsigned int arg)
{
	if (op == op_load_global)
		return !(arg & 1); /* its low bit pushes a NULL too */
	if (op == op_build_tuple || op == op_build_list || op == op_build_map)
		return arg == 0;
	return op == op_load_const || op == op_load_fast || op == op_load_deref ||
	       op == op_load_name;
}

/* Does a jump of the code land in (from, to]? Code reached there by a jump may have pushed
 * something else than the straight line before it. */
static int jumps_into(const unsigned char *p, Py_ssize_t n, Py_ssize_t from, Py_ssize_t to)
{
	unsigned int ext = 0;

	for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
		unsigned int arg = p[i + 1] | ext;
		Py_ssize_t target;
		if (p[i] == op_extended_arg) {
			ext = arg << 8;
			continue;
		}
		ext = 0;
		if (!op_jumps[p[i]])
			continue;
		target =
		    op_jumps_back[p[i]] ? i + 2 - 2 * (Py_ssize_t)arg : i + 2 + 2 * (Py_ssize_t)arg;
		if (target > from && target <= to)
			return 1;
	}
	return 0;
}

int pylayer_call_passes_const(PyFrameObject *f, PyObject *name, int argi)
{
	PyCodeObject *co;
	PyObject *code = frame_bytecode(f, &co), *k;
	int lasti = PyFrame_GetLasti(f), passes = 0;
	const unsigned char *p;
	Py_ssize_t n, i, konst;
	unsigned int arg = 0, nargs;

	if (!code)
		return 0;
	p = (const unsigned char *)PyBytes_AS_STRING(code);
	n = PyBytes_GET_SIZE(code);
	i = lasti;
	if (op_call < 0 || op_precall < 0 || i < 0 || (i & 1) || i + 1 >= n ||
	    (p[i] != op_call && p[i] != op_precall))
		goto out;
	if (p[i] == op_call) {
		i = instr_before(p, i, &arg);
		if (i < 0 || p[i] != op_precall)
			goto out;
	}
	nargs = p[i + 1];
	if ((unsigned int)argi >= nargs || nargs > 8)
		goto out;
	/* The arguments after argi pushed one instruction each, argi's by LOAD_CONST name. */
	konst = i;
	for (unsigned int a = nargs; a > (unsigned int)argi + 1; a--) {
		konst = instr_before(p, konst, &arg);
		if (konst < 0 || !pushes_one(p[konst], arg))
			goto out;
	}
	konst = instr_before(p, konst, &arg);
	if (konst < 0 || p[konst] != op_load_const ||
	    (Py_ssize_t)arg >= PyTuple_GET_SIZE(co->co_consts))
		goto out;
	k = PyTuple_GET_ITEM(co->co_consts, arg);
	passes = PyUnicode_CheckExact(k) && PyUnicode_Compare(k, name) == 0 &&
	         !jumps_into(p, n, konst, lasti);
	PyErr_Clear();
out:
	Py_DECREF(code);
	Py_DECREF(co);
	return passes;
}

int pylayer_frame_imports_star(PyFrameObject *f)
{
	PyCodeObject *co = PyFrame_GetCode(f);
	PyObject *code = PyCode_GetCode(co);
	int lasti = PyFrame_GetLasti(f), star;

	Py_DECREF(co);
	if (!code) {
		PyErr_Clear();
		return 0;
	}
	star = op_import_star >= 0 && lasti >= 0 && lasti < PyBytes_GET_SIZE(code) &&
	       ((const unsigned char *)PyBytes_AS_STRING(code))[lasti] == op_import_star;
	Py_DECREF(code);
	return star;
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
	return pyproxy_is(m);
}
