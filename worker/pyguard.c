/* pyguard.c - the attribute rules on the built-in types themselves (checked descriptors that
 * refuse while armed, whoever asks: bytecode, getattr, match, format, attrgetter, copy, C code),
 * exec/eval that give library-evaluated code the sandbox's builtins, and frame views for
 * library code. Functions return 0 / -1 (or NULL) with a Python exception set. */
#include "interp_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyguard.c replaces descriptors of CPython 3.11's built-in types"
#endif

static PyObject *user_ns;                 /* the user's namespace (borrowed; kept by interp.c) */
static PyObject *str_builtins, *str_name; /* "__builtins__", "__name__" (interned) */
static PyObject *user_module; /* its module, sys.modules['__main__'] in a worker (borrowed) */

/* ---- who may read what ------------------------------------------------------------------- */

/* A rule says, for one object, whether the attribute may be used while the hook is armed. */
typedef int (*guard_allow)(PyObject *obj);

static int allow_never(PyObject *obj)
{
	(void)obj;
	return 0;
}

static int allow_always(PyObject *obj)
{
	(void)obj;
	return 1;
}

/* A function the user's code defined: its globals are the user's namespace, its code was
 * checked, its closure holds what the user's code held. */
static int allow_user_function(PyObject *obj)
{
	return PyFunction_Check(obj) && user_ns && PyFunction_GET_GLOBALS(obj) == user_ns;
}

/* Frames between a read and the module code it serves, at most. */
#define LOADING_FRAMES_MAX 256

static PyObject *real_builtins, *real_builtins_mod; /* the interpreter's builtins */

/* Is f a frame of code the user wrote? Its globals are the user's namespace, or its builtins
 * are not the interpreter's: library code runs with those, and text that library helpers
 * evaluate for the user (a typing.ForwardRef, a namedtuple's fields) runs under the globals the
 * helper was given with other builtins, the sandbox's (namespace_checked) or any the user put
 * in those globals, and so do the functions it makes. */
int pyguard_globals_are_user(PyObject *g, PyObject *b)
{
	return (g && g == user_ns) || (b && real_builtins && b != real_builtins);
}

static int frame_is_user(PyFrameObject *f)
{
	PyObject *g = PyFrame_GetGlobals(f), *b = PyFrame_GetBuiltins(f);
	int user = pyguard_globals_are_user(g, b);

	Py_XDECREF(g);
	Py_XDECREF(b);
	return user;
}

/* Is this read made for the code of a served module being imported late (pyimport.c): by that
 * module's code, or by functions its bytecode called, each called by the bytecode of the one
 * before? Its decorators read the internals of the functions it defines, and the namespace of
 * its own module (sympy's public(), numpy's dispatch checks), as they did in the zygote for the
 * modules imported there. A hook of the user's that the import reaches has its frame on the way,
 * or is C code (a slot the user set to a property, a partial) whose callee was called from C:
 * what either asks for is refused. */
int pyguard_for_loading_module(void)
{
	PyFrameObject *f = pyimport_loading_any() && !pyreentry_finalizing() && !pygc_collecting()
	                       ? PyEval_GetFrame()
	                       : NULL;
	int allow = 0;

	Py_XINCREF(f);
	for (int i = 0; f && i < LOADING_FRAMES_MAX; i++) {
		PyCodeObject *c = PyFrame_GetCode(f);
		PyObject *g = PyFrame_GetGlobals(f);
		PyFrameObject *back;
		int user = frame_is_user(f), found = g && pyimport_loading(g) == (PyObject *)c;

		Py_XDECREF(g);
		Py_DECREF(c);
		if (user || found || pyframe_called_from_c(f)) {
			allow = found && !user;
			break;
		}
		back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
	Py_XDECREF(f);
	return allow;
}

/* type.__new__ calls in progress, innermost last: the arguments each was given (a class is
 * being made: its descriptors' __set_name__ and its bases' __init_subclass__ run inside, before
 * the class is returned). */
#define MAKING_MAX 64
static PyObject *type_new_args[MAKING_MAX];
static int type_new_depth;
/* exec and eval calls in progress (evaluate_fast). A served module's own evaluation is never
 * one made inside another: the garbage collector, run by an allocation of that module's own
 * exec, ran a finalizer of the user's (a partial of exec) there, with the module's frame
 * innermost on its exec line. */
static int eval_depth;
/* Metaclass calls in progress (a class statement, type(name, bases, ns)), innermost last: the
 * class each made, once type.__new__ returned it (NULL before); its metaclass's __new__ and
 * __init__ finish it after that. */
static PyObject *constructing[MAKING_MAX];
static int n_constructing;

/* A callable the user's code planted runs from C while a module's frame is innermost: a hook a
 * class's making calls (__init_subclass__), a finalizer (a __del__ that is a partial of exec,
 * freed by sympy.abc's own loop), a callback. Only the module's own call of exec or eval
 * counts as the module's. */
int pyguard_loading_evaluation(void)
{
	static const char *const evaluators[] = {"exec", "eval", NULL};
	PyFrameObject *f;

	if (type_new_depth || eval_depth > 1 || !pyguard_for_loading_module())
		return 0;
	f = PyEval_GetFrame();
	return f && pylayer_frame_calls(f, evaluators);
}

/* Is the read the user's: the innermost frame is its code (a function or module the user
 * wrote), or a reader by name it asked for works there (an attrgetter or methodcaller it made,
 * called by a library function it handed it to: ElementTree's XML calls a target's close(),
 * heapq a key; the frame is the library's, the name the user's). */
static int reader_is_user(void)
{
	PyFrameObject *f = PyEval_GetFrame();

	return f && (frame_is_user(f) || pymodguard_directed());
}

int pyguard_reader_is_user(void)
{
	return reader_is_user();
}

int pyguard_frame_is_users(void)
{
	PyFrameObject *f = PyEval_GetFrame();

	return f && frame_is_user(f);
}

/* What a function's code and defaults say of it: read by library code, of any function
 * (inspect.signature: matplotlib's savefig, pandas, scipy and sympy decorators). A code object
 * reaches constants and names only; defaults are objects the library holds. The user's own
 * code reads them of its own functions only (and the attribute rules refuse the names in it). */
/* The name a guard is asked about (borrowed; set by guard_get and guard_set while its rule
 * decides). */
static PyObject *guard_reading;

/* Does the code of f hold name among its constants: itself (unless only listed), or in a tuple
 * of them? */
static int code_holds(PyFrameObject *f, PyObject *name, int only_listed)
{
	PyCodeObject *co = PyFrame_GetCode(f);
	PyObject *consts = co->co_consts;
	int found = 0;

	for (Py_ssize_t i = 0; !found && i < PyTuple_GET_SIZE(consts); i++) {
		PyObject *k = PyTuple_GET_ITEM(consts, i);
		if (PyTuple_Check(k)) {
			for (Py_ssize_t j = 0; !found && j < PyTuple_GET_SIZE(k); j++)
				found = PyUnicode_Check(PyTuple_GET_ITEM(k, j)) &&
				        PyUnicode_Compare(PyTuple_GET_ITEM(k, j), name) == 0;
		} else if (!only_listed) {
			found = PyUnicode_Check(k) && PyUnicode_Compare(k, name) == 0;
		}
	}
	PyErr_Clear();
	Py_DECREF(co);
	return found;
}

static int code_names(PyFrameObject *f, PyObject *name)
{
	return code_holds(f, name, 0);
}

int pyguard_code_lists(PyObject *name)
{
	PyFrameObject *f = PyEval_GetFrame();

	return f && PyUnicode_Check(name) && code_holds(f, name, 1);
}

/* Library code asking for the attribute by its own name: its bytecode reads (store: writes)
 * it, or calls getattr (setattr) with the name among its constants (inspect's
 * getattr(obj, '__code__', None)). Not a read by a name the user chose (ast.iter_fields
 * reads getattr(node, f) for each of the node's _fields, which the user's code may set on any
 * object), nor a callable the user handed the library. */
static int library_names_it(int store)
{
	static const char *const getters[] = {"getattr", NULL}, *const setters[] = {"setattr",
	                                                                            NULL};
	PyFrameObject *f = PyEval_GetFrame();

	if (!f || !guard_reading || reader_is_user())
		return 0;
	if (store ? pylayer_frame_stores(f, guard_reading) : pylayer_frame_reads(f, guard_reading))
		return 1;
	return pylayer_frame_calls(f, store ? setters : getters) && code_names(f, guard_reading);
}

/* The read the interpreter's getattr or hasattr is making for a library frame by a name that
 * frame's code does not hold (pyguard_data_read): the frame and the name. */
static _Thread_local PyFrameObject *data_frame;
static _Thread_local PyObject *data_name;

void *pyguard_data_read(PyObject *name, PyObject **name_before)
{
	void *before = data_frame;

	*name_before = data_name;
	data_frame = PyEval_GetFrame();
	data_name = name;
	return before;
}

void pyguard_data_read_end(void *before, PyObject *name_before)
{
	data_frame = before;
	data_name = name_before;
}

int pyguard_read_by_data(PyObject *name)
{
	static const char *const getters[] = {"getattr", "hasattr", NULL};
	PyFrameObject *f = PyEval_GetFrame();

	if (!f || !PyUnicode_Check(name))
		return 0;
	/* Made by the interpreter's getattr or hasattr, called (however the code held it: a
	 * global, a default argument, a local) with a name its caller's code does not hold. */
	if (data_frame == f && data_name && PyUnicode_Compare(data_name, name) == 0)
		return 1;
	PyErr_Clear();
	return pylayer_frame_calls(f, getters) && !code_names(f, name);
}

/* Is text data to the innermost frame, not among its code's constants? A format string a
 * library frame holds as a literal formats its own objects; one it was handed (a bound
 * "{0.x}".format passed as a key or a mapper, logging's '{' style) names what the user chose. */
int pyguard_text_from_data(PyObject *text)
{
	PyFrameObject *f = PyEval_GetFrame();

	return f && PyUnicode_Check(text) && !code_names(f, text);
}

/* Is obj a function the innermost frame, a library's, made (its code is among the frame's
 * constants: a nested function, a lambda)? Compiled code the frame calls counts its arguments
 * by its code (f2py's callbacks: COBYLA's calcfc); the frame could have read it itself. */
static int made_by_reader(PyObject *obj)
{
	PyFrameObject *f = PyEval_GetFrame();
	PyCodeObject *c;
	int made = 0;

	if (!f || !PyFunction_Check(obj) || reader_is_user())
		return 0;
	c = PyFrame_GetCode(f);
	for (Py_ssize_t i = 0; !made && i < PyTuple_GET_SIZE(c->co_consts); i++)
		made = PyTuple_GET_ITEM(c->co_consts, i) == PyFunction_GET_CODE(obj);
	Py_DECREF(c);
	return made;
}

/* The library's own read is of an object its bytecode holds: the function whose code is read
 * is on the value stack of the frame whose instruction reads it. A read by a callable the user
 * made run there in C (a __getattr__ or a property's getter that is a partial of
 * object.__getattribute__: no frame of its own) is of another function. */
static int allow_introspection(PyObject *obj)
{
	return allow_user_function(obj) || (library_names_it(0) && pymodguard_frame_holds(obj)) ||
	       made_by_reader(obj);
}

/* A function's defaults are changed by its own code's owner: the user's functions by the
 * user, a library's by the library (a user's change reached every later call of it). */
static int allow_defaults_change(PyObject *obj)
{
	return allow_user_function(obj) || (library_names_it(1) && pymodguard_frame_holds(obj));
}

/* Is the read made by a served module's import (pyguard_for_loading_module), in the bytecode of
 * the innermost frame? A read made in C (getattr, an attrgetter, a property's getter) is not
 * taken for one: the user's code can chain such callables on a class that the import uses (a
 * property whose getter is a partial of an attrgetter), and they run with no frame of their own,
 * so the innermost frame would be the module's. */
static int loading_read(void)
{
	PyFrameObject *f = PyEval_GetFrame();

	return f && guard_reading && pylayer_frame_reads(f, guard_reading) &&
	       pyguard_for_loading_module();
}

/* Is the read that of "from m import *" in the bytecode of a served module's import, in its
 * innermost frame? m has no __all__: CPython copies the public names of m's namespace into the
 * module imported (a library's namespace; the user gets nothing). matplotlib.pylab, which
 * pandas imports to plot dates, does so with pyplot. */
static int star_import_read(void)
{
	PyFrameObject *f = PyEval_GetFrame();
	PyCodeObject *c;
	PyObject *g;
	int star;

	if (!f || frame_is_user(f) || !pylayer_frame_imports_star(f))
		return 0;
	c = PyFrame_GetCode(f);
	g = PyFrame_GetGlobals(f);
	star = g && pyimport_loading(g) == (PyObject *)c;
	Py_XDECREF(g);
	Py_DECREF(c);
	return star;
}

/* The user's functions, and a function of a module being imported when the read is made for
 * that import. */
static int allow_user_or_loading_function(PyObject *obj)
{
	return allow_user_function(obj) ||
	       (PyFunction_Check(obj) && pyimport_loading(PyFunction_GET_GLOBALS(obj)) &&
	        loading_read());
}

/* A built-in function bound to a module (len, math.sqrt, sys.getsizeof) would hand out the
 * real module; one bound to an object ([].append) hands out that object. */
static int allow_non_module_self(PyObject *obj)
{
	PyObject *self = PyCFunction_Check(obj) ? PyCFunction_GET_SELF(obj) : NULL;

	return !self || !PyModule_Check(self);
}

/* object.__subclasses__() reaches every class (the importers among them); the subclasses of
 * a class defined in Python are classes defined in Python. abc's C code asks an ABC for its
 * subclasses inside every isinstance() that reaches it. */
static int allow_heap_type(PyObject *obj)
{
	return PyType_Check(obj) && (((PyTypeObject *)obj)->tp_flags & Py_TPFLAGS_HEAPTYPE);
}

static int library_change_allowed(PyObject *t, PyObject *name);

/* type.__abstractmethods__ is set by abc on the classes it makes; its setter writes the class's
 * dict: never a built-in type's, and a library's class only as any change of it is allowed
 * (type_setattro_checked). */
static int allow_abstract_set(PyObject *obj)
{
	PyObject *name;
	int ok;

	if (!allow_heap_type(obj))
		return 0;
	name = PyUnicode_InternFromString("__abstractmethods__");
	ok = name && library_change_allowed(obj, name) == 0;
	Py_XDECREF(name);
	PyErr_Clear(); /* the rule's own refusal says it */
	return ok;
}

/* A real module's namespace holds other real modules and the real builtins; libraries reach
 * it by name (sys.modules[cls.__module__].__dict__ in dataclasses, typing, enum), so a class
 * claiming to live in os must not get os's namespace. The user's own module and the
 * proxies are views made for the user; a module being imported gives its namespace to a read
 * made for its import. */
static int library_calls_vars(void);

static int allow_user_module(PyObject *obj)
{
	return obj == user_module || pylayer_is_proxy(obj) || library_calls_vars() ||
	       (PyModule_Check(obj) && pyimport_loading(PyModule_GetDict(obj)) && loading_read()) ||
	       (PyModule_Check(obj) && star_import_read());
}

/* Is the read a library's own vars(m) call (its bytecode names vars and calls it on that line),
 * not the user's? pyplot's switch_backend fills a class with vars() of the backend module it
 * imported; the reads by a name the user can choose (sys.modules[cls.__module__].__dict__) are
 * attribute reads in the bytecode, and stay refused. */
static int library_calls_vars(void)
{
	static const char *const names[] = {"vars", NULL};
	PyFrameObject *f = PyEval_GetFrame();

	return f && !frame_is_user(f) && pylayer_frame_calls(f, names);
}

/* object.__getstate__ reads an object's dict through its type's dict offset, past every
 * __dict__ descriptor: a class's offset is that of its own dict, so object.__getstate__(int)
 * gave int's writable dict (a guard replaced in ModuleType's, a cached slot freed under the
 * type cache), and a real module's its namespace. object.__reduce_ex__ asks for the state by
 * this name (its own __reduce__ is left alone: it compares it with the one it cached). Classes
 * and modules keep theirs. */
static int allow_state(PyObject *obj)
{
	return !PyType_Check(obj) && !PyModule_Check(obj);
}

/* ---- the guarded descriptor -------------------------------------------------------------- */

/* A check of a value read or set: 0, or -1 with the exception raised. */
typedef int (*guard_value)(PyObject *value);

PyObject *pyguard_str_item(PyObject *d, const char *name)
{
	PyObject *key, *item;
	Py_ssize_t pos = 0;

	while (PyDict_Next(d, &pos, &key, &item))
		if (PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, name) == 0)
			return item;
	return NULL;
}

/* A real module, or a namespace: a module's dict or the builtins (a dict naming itself with
 * __name__ beside what only a module's namespace holds). The user's module and the proxies
 * are views made for the user. Runs no Python code: a lookup would call the __eq__ of a key
 * whose hash collides, and that code could free the values being walked. */
static int is_namespace(PyObject *v)
{
	if (v == user_module || v == user_ns || pylayer_is_proxy(v))
		return 0;
	if (PyModule_Check(v))
		return 1;
	return PyDict_Check(v) && pyguard_str_item(v, "__name__") &&
	       (pyguard_str_item(v, "__builtins__") || pyguard_str_item(v, "__spec__") ||
	        pyguard_str_item(v, "__loader__") || pyguard_str_item(v, "__import__"));
}

/* Does v, or an item or value of it (tuples, lists and dicts, three levels down), hold one?
 * Each item is held while it is looked at. */
static int holds_namespace(PyObject *v, int depth)
{
	int found = 0;

	if (is_namespace(v))
		return 1;
	if (depth > 3)
		return 0;
	if (PyTuple_Check(v) || PyList_Check(v)) {
		for (Py_ssize_t i = 0; !found && i < PySequence_Fast_GET_SIZE(v); i++) {
			PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(v, i));
			found = holds_namespace(item, depth + 1);
			Py_DECREF(item);
		}
	} else if (PyDict_Check(v)) {
		PyObject *key, *item;
		Py_ssize_t pos = 0;
		while (!found && PyDict_Next(v, &pos, &key, &item)) {
			Py_INCREF(item);
			found = holds_namespace(item, depth + 1);
			Py_DECREF(item);
		}
	}
	return found;
}

/* Library code reads any function's defaults (allow_introspection), and library code that
 * reads an attribute the caller names (functools.update_wrapper's assigned=, pandas' eval)
 * hands what it read to the user: defaults that hold a real module or a namespace are not
 * given out. No function of the standard library or the data stack keeps one there. */
static int value_no_namespace(PyObject *value)
{
	if (!holds_namespace(value, 0))
		return 0;
	PyErr_SetString(PyExc_AttributeError,
	                "Forbidden access to dunder attribute: defaults that hold a module");
	return -1;
}

/* A code object set as a function's __code__ obeys the rules of the user's code: typing
 * compiles annotation strings (ForwardRef.__forward_code__) without the exec event's check. */
static int value_code_checked(PyObject *value)
{
	return PyCode_Check(value) ? pylayer_code_check((PyCodeObject *)value) : 0;
}

/* AttributeError.obj is the object whose attribute could not be read: CPython stores it for
 * every failed read, whoever made the read. A read the guards refused, or a library's read of
 * a real module's missing attribute (enum's _convert_, dataclasses' field defaults), raised an
 * error that carried the real module to whoever caught it. Such an object reads as None. */
static int hide_namespace(PyObject *value)
{
	return holds_namespace(value, 0);
}

struct guard_rule {
	PyTypeObject *type;
	const char *name;
	guard_allow get;   /* may obj's attribute be read while armed? */
	guard_allow set;   /* may it be set or deleted while armed? */
	guard_value value; /* NULL, or what a value set must pass while armed */
	guard_value got;   /* NULL, or what a value read must pass while armed */
	guard_value hide;  /* NULL, or: is a value read given as None while armed? */
};

typedef struct {
	PyObject_HEAD PyObject *orig; /* the descriptor it replaced (owned) */
	PyObject *name;               /* owned */
	const struct guard_rule *rule;
} GuardObject;

static PyObject *guard_refuse(GuardObject *g)
{
	const char *s = PyUnicode_AsUTF8(g->name);
	size_t n = s ? strlen(s) : 0;
	int dunder = n > 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_';

	if (!s)
		return NULL;
	PyErr_Format(
	    PyExc_AttributeError, "%s: %s",
	    dunder ? "Forbidden access to dunder attribute" : "Forbidden access to attribute", s);
	return NULL;
}

/* type.attr (obj NULL) gives the guard itself, never the descriptor it replaced: that one would
 * read the attribute unchecked. */
static PyObject *guard_get(PyObject *self, PyObject *obj, PyObject *type)
{
	GuardObject *g = (GuardObject *)self;
	PyObject *v;
	int allowed;

	if (!obj)
		return Py_NewRef(self);
	guard_reading = g->name;
	allowed = !pylayer_armed() || g->rule->get(obj);
	guard_reading = NULL;
	if (!allowed)
		return guard_refuse(g);
	v = Py_TYPE(g->orig)->tp_descr_get(g->orig, obj, type);
	if (v && g->rule->got && pylayer_armed() && g->rule->got(v) < 0)
		Py_CLEAR(v);
	if (v && g->rule->hide && pylayer_armed() && g->rule->hide(v))
		Py_SETREF(v, Py_NewRef(Py_None));
	return v;
}

static int guard_set(PyObject *self, PyObject *obj, PyObject *value)
{
	GuardObject *g = (GuardObject *)self;
	int allowed;

	guard_reading = g->name;
	allowed = !pylayer_armed() || g->rule->set(obj);
	guard_reading = NULL;
	if (!allowed) {
		guard_refuse(g);
		return -1;
	}
	if (pylayer_armed() && value && g->rule->value && g->rule->value(value) < 0)
		return -1;
	return Py_TYPE(g->orig)->tp_descr_set(g->orig, obj, value);
}

/* type.__subclasses__(object): the unbound method called with its receiver. */
static PyObject *guard_call(PyObject *self, PyObject *args, PyObject *kw)
{
	GuardObject *g = (GuardObject *)self;

	if (pylayer_armed() && PyTuple_GET_SIZE(args) > 0 &&
	    !g->rule->get(PyTuple_GET_ITEM(args, 0)))
		return guard_refuse(g);
	return PyObject_Call(g->orig, args, kw);
}

static void guard_dealloc(PyObject *self)
{
	Py_XDECREF(((GuardObject *)self)->orig);
	Py_XDECREF(((GuardObject *)self)->name);
	PyObject_Free(self);
}

static PyObject *guard_repr(PyObject *self)
{
	return PyObject_Repr(((GuardObject *)self)->orig);
}

static PyObject *guard_name(PyObject *self, void *closure)
{
	(void)closure;
	return Py_NewRef(((GuardObject *)self)->name);
}

/* __qualname__, __objclass__ and __doc__ of the descriptor replaced: texts and its type. */
static PyObject *guard_orig_attr(PyObject *self, void *closure)
{
	return PyObject_GetAttrString(((GuardObject *)self)->orig, (const char *)closure);
}

static PyGetSetDef guard_getset[] = {
    {"__name__", guard_name, NULL, NULL, NULL},
    {"__qualname__", guard_orig_attr, NULL, NULL, "__qualname__"},
    {"__objclass__", guard_orig_attr, NULL, NULL, "__objclass__"},
    {"__doc__", guard_orig_attr, NULL, NULL, "__doc__"},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Replaces getset and member descriptors (data descriptors: an instance's __dict__ cannot
 * shadow them). */
static PyTypeObject guard_data_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.guarded_attribute",
    .tp_basicsize = sizeof(GuardObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_doc = "An attribute the sandbox checks before reading it.",
    .tp_dealloc = guard_dealloc,
    .tp_repr = guard_repr,
    .tp_getset = guard_getset,
    .tp_descr_get = guard_get,
    .tp_descr_set = guard_set,
};

/* Replaces method descriptors: checked when bound and when called unbound. */
static PyTypeObject guard_method_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.guarded_method",
    .tp_basicsize = sizeof(GuardObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_doc = "A method the sandbox checks before binding or calling it.",
    .tp_dealloc = guard_dealloc,
    .tp_repr = guard_repr,
    .tp_call = guard_call,
    .tp_getset = guard_getset,
    .tp_descr_get = guard_get,
};

/* The descriptors of CPython 3.11's built-in types that lead from an object to a namespace,
 * a frame, code or a real module, from the tables of funcobject.c, frameobject.c, genobject.c,
 * traceback.c, methodobject.c, typeobject.c and moduleobject.c:
 *   function  __globals__, __builtins__, __closure__ (members); __code__, __defaults__,
 *             __kwdefaults__ (getsets): the user's own functions keep them (typing and
 *             singledispatch read __globals__ and __code__; namedtuple sets __defaults__ of
 *             a function it makes); library code reads __code__, __defaults__ and
 *             __kwdefaults__ of any function (allow_introspection; defaults holding a module
 *             or a namespace are given to no one: value_no_namespace), and the code of a module
 *             served late __globals__ too while it is imported (pyguard_for_loading_module);
 *             __builtins__ is the writable builtins dict: never.
 *   frame     every attribute and clear(): frames are the way to every namespace.
 *   generator gi_frame, gi_code; coroutine cr_frame, cr_code; async generator ag_frame, ag_code.
 *   traceback tb_frame.
 *   builtin_function_or_method __self__ when it is a module.
 *   type      __subclasses__ of a built-in (static) type.
 *   module    __dict__ of a real module (but for a served module's import, as above).
 *   AttributeError obj: a real module or a namespace reads as None (hide_namespace).
 *   type      __abstractmethods__ set on a built-in type or, by the user's code, a library's
 *             class (its setter writes the class's dict).
 *   object    __getstate__ of a class or a module (allow_state; object.__reduce_ex__ reads the
 *             state through it).
 * Left alone, with the reason: cell_contents (cells come only from __closure__, guarded, or
 * frames); code objects (reachable only through the guarded attributes above); method
 * __self__/__func__ and method-wrapper __self__ (the receiver and a function: nothing the
 * public attributes of the allowed modules do not already reach); type __mro__, __bases__,
 * __base__, __dict__ (classes and their functions, whose internals are guarded; dataclasses,
 * enum, typing and copyreg read them in every call); gi_yieldfrom, cr_await, ag_await (the
 * delegate, itself a generator whose frame is guarded); BaseException __traceback__ (a
 * traceback, whose frame is guarded). The attribute rules of pylayer.c still refuse most of
 * these names in the user's code, with a friendlier message. */
static struct guard_rule rules[] = {
    {&PyFunction_Type, "__globals__", allow_user_or_loading_function, allow_never, NULL, NULL,
     NULL},
    {&PyFunction_Type, "__builtins__", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFunction_Type, "__closure__", allow_user_function, allow_never, NULL, NULL, NULL},
    {&PyFunction_Type, "__code__", allow_introspection, allow_user_function, value_code_checked,
     NULL, NULL},
    {&PyFunction_Type, "__defaults__", allow_introspection, allow_defaults_change, NULL,
     value_no_namespace, NULL},
    {&PyFunction_Type, "__kwdefaults__", allow_introspection, allow_defaults_change, NULL,
     value_no_namespace, NULL},
    {&PyFrame_Type, "f_back", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_builtins", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_code", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_globals", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_locals", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_lasti", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_lineno", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_trace", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_trace_lines", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "f_trace_opcodes", allow_never, allow_never, NULL, NULL, NULL},
    {&PyFrame_Type, "clear", allow_never, allow_never, NULL, NULL, NULL},
    {&PyGen_Type, "gi_frame", allow_never, allow_never, NULL, NULL, NULL},
    {&PyGen_Type, "gi_code", allow_never, allow_never, NULL, NULL, NULL},
    {&PyCoro_Type, "cr_frame", allow_never, allow_never, NULL, NULL, NULL},
    {&PyCoro_Type, "cr_code", allow_never, allow_never, NULL, NULL, NULL},
    {&PyAsyncGen_Type, "ag_frame", allow_never, allow_never, NULL, NULL, NULL},
    {&PyAsyncGen_Type, "ag_code", allow_never, allow_never, NULL, NULL, NULL},
    {&PyTraceBack_Type, "tb_frame", allow_never, allow_never, NULL, NULL, NULL},
    {&PyCFunction_Type, "__self__", allow_non_module_self, allow_never, NULL, NULL, NULL},
    {&PyType_Type, "__subclasses__", allow_heap_type, allow_never, NULL, NULL, NULL},
    {&PyType_Type, "__abstractmethods__", allow_always, allow_abstract_set, NULL, NULL, NULL},
    {&PyModule_Type, "__dict__", allow_user_module, allow_never, NULL, NULL, NULL},
    {&PyBaseObject_Type, "__getstate__", allow_state, allow_never, NULL, NULL, NULL},
    /* type: PyExc_AttributeError, set by pyguard_install */
    {NULL, "obj", allow_always, allow_always, NULL, NULL, hide_namespace},
};

static int guard_install(struct guard_rule *r)
{
	PyObject *dict = r->type->tp_dict, *orig;
	PyTypeObject *kind;
	GuardObject *g;

	orig = dict ? PyDict_GetItemString(dict, r->name) : NULL;
	if (!orig || !Py_TYPE(orig)->tp_descr_get) {
		PyErr_Format(PyExc_RuntimeError, "%s.%s is not a descriptor", r->type->tp_name,
		             r->name);
		return -1;
	}
	if (Py_TYPE(orig) == &guard_data_type || Py_TYPE(orig) == &guard_method_type)
		return 0;
	kind = Py_TYPE(orig)->tp_descr_set ? &guard_data_type : &guard_method_type;
	g = PyObject_New(GuardObject, kind);
	if (!g)
		return -1;
	g->orig = Py_NewRef(orig);
	g->name = PyUnicode_FromString(r->name);
	g->rule = r;
	if (!g->name || PyDict_SetItemString(dict, r->name, (PyObject *)g) < 0) {
		Py_DECREF(g);
		return -1;
	}
	Py_DECREF(g);
	/* The type's attribute cache and the specialised bytecode key on its version. */
	PyType_Modified(r->type);
	return 0;
}

/* ---- sqlite3's connections ---------------------------------------------------------------- */

/* The authorizer the library fixes give every connection keeps its databases in memory (no
 * ATTACH of a file): no code sets another (the fixes took the method before these guards; a
 * rule that let library frames through was passed by a methodcaller the user handed to a
 * library function, which calls it with its own frame innermost). An extension would be
 * native code. */
static struct guard_rule sqlite_rules[] = {
    {NULL, "set_authorizer", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "enable_load_extension", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "load_extension", allow_never, allow_never, NULL, NULL, NULL},
};

static int sqlite_guard_install(void)
{
	PyObject *m = PyImport_ImportModule("sys"), *mods, *sq, *t;

	mods = m ? PyObject_GetAttrString(m, "modules") : NULL;
	Py_XDECREF(m);
	sq = mods ? PyDict_GetItemString(mods, "_sqlite3") : NULL;
	t = sq ? PyObject_GetAttrString(sq, "Connection") : NULL;
	Py_XDECREF(mods);
	PyErr_Clear();
	if (!t)
		return 0; /* not imported: not allowed */
	for (size_t i = 0; i < sizeof(sqlite_rules) / sizeof(sqlite_rules[0]); i++) {
		sqlite_rules[i].type = (PyTypeObject *)t;
		if (PyType_Check(t) &&
		    pyguard_str_item(((PyTypeObject *)t)->tp_dict, sqlite_rules[i].name) &&
		    guard_install(&sqlite_rules[i]) < 0) {
			Py_DECREF(t);
			return -1;
		}
	}
	Py_DECREF(t); /* the module keeps it */
	return 0;
}

/* ---- functions of other kinds ------------------------------------------------------------ */

/* Cython's functions (pandas, scipy, numpy.random) keep their module's namespace, their
 * closure and their code in getsets of their own type, under Python's names and older ones:
 * the rules on PyFunction_Type do not see them. They get the same rules, on every such type a
 * module's namespace or its classes hold (some modules bring a type of their own). */
static const struct guard_rule function_like[] = {
    {NULL, "__globals__", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "func_globals", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "__builtins__", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "__closure__", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "func_closure", allow_never, allow_never, NULL, NULL, NULL},
    {NULL, "__code__", allow_introspection, allow_never, NULL, NULL, NULL},
    {NULL, "func_code", allow_introspection, allow_never, NULL, NULL, NULL},
    {NULL, "__defaults__", allow_introspection, allow_never, NULL, value_no_namespace, NULL},
    {NULL, "func_defaults", allow_introspection, allow_never, NULL, value_no_namespace, NULL},
    {NULL, "__kwdefaults__", allow_introspection, allow_never, NULL, value_no_namespace, NULL},
};

#define FUNCTION_TYPES_MAX 64
static PyTypeObject *function_types[FUNCTION_TYPES_MAX];
static size_t n_function_types;

/* t, when it is a function type of its own (its dict names __globals__). */
static int function_type_guard(PyTypeObject *t)
{
	struct guard_rule *r;
	const size_t n = sizeof(function_like) / sizeof(function_like[0]);

	if (t == &PyFunction_Type || !t->tp_dict || !pyguard_str_item(t->tp_dict, "__globals__"))
		return 0;
	for (size_t i = 0; i < n_function_types; i++)
		if (function_types[i] == t)
			return 0;
	if (n_function_types == FUNCTION_TYPES_MAX) {
		PyErr_Format(PyExc_RuntimeError, "more than %d kinds of functions",
		             FUNCTION_TYPES_MAX);
		return -1;
	}
	/* Guards keep their rule for good: so does the process. */
	r = PyMem_RawMalloc(sizeof(function_like));
	if (!r) {
		PyErr_NoMemory();
		return -1;
	}
	memcpy(r, function_like, sizeof(function_like));
	function_types[n_function_types++] = t;
	for (size_t i = 0; i < n; i++) {
		PyObject *d = pyguard_str_item(t->tp_dict, r[i].name);
		r[i].type = t;
		if (d && Py_TYPE(d)->tp_descr_get && guard_install(&r[i]) < 0)
			return -1;
	}
	return 0;
}

/* The type of v and its bases. */
static int function_types_of(PyObject *v)
{
	PyObject *mro = Py_TYPE(v)->tp_mro;

	if (!mro || !PyTuple_Check(mro))
		return function_type_guard(Py_TYPE(v));
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++)
		if (PyType_Check(PyTuple_GET_ITEM(mro, i)) &&
		    function_type_guard((PyTypeObject *)PyTuple_GET_ITEM(mro, i)) < 0)
			return -1;
	return 0;
}

int pyguard_function_types(PyObject *ns)
{
	PyObject *key, *v;
	Py_ssize_t pos = 0;

	if (!PyDict_Check(ns))
		return 0;
	/* The zygote's sweep (pylayer_init) comes before pyguard_install. */
	if (PyType_Ready(&guard_data_type) < 0 || PyType_Ready(&guard_method_type) < 0)
		return -1;
	while (PyDict_Next(ns, &pos, &key, &v)) {
		PyObject *key2, *item;
		Py_ssize_t pos2 = 0;

		if (function_types_of(v) < 0)
			return -1;
		if (!PyType_Check(v) || !((PyTypeObject *)v)->tp_dict)
			continue;
		while (PyDict_Next(((PyTypeObject *)v)->tp_dict, &pos2, &key2, &item))
			if (function_types_of(item) < 0)
				return -1;
	}
	return 0;
}

/* ---- code that libraries evaluate -------------------------------------------------------- */

static PyObject *real_exec, *real_eval; /* the originals */

/* Is d the namespace of a module the interpreter holds? */
static int module_namespace(PyObject *d)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	while (PyDict_Next(PyImport_GetModuleDict(), &pos, &k, &v))
		if (PyModule_Check(v) && PyModule_GetDict(v) == d)
			return 1;
	return 0;
}

/* Has d a key that is not a str but hashes as "__builtins__"? Each lookup of that name calls
 * the key's __eq__, which may answer one way here and the other in exec (CPython then puts in
 * the calling library's builtins, the real ones, and the caller can read them back from d).
 * The hashes the dict stored are compared, so no code of the keys runs. */
static int builtins_imitated(PyObject *d)
{
	Py_hash_t want = PyObject_Hash(str_builtins), hash;
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	while (_PyDict_Next(d, &pos, &k, &v, &hash))
		if (hash == want && !PyUnicode_CheckExact(k))
			return 1;
	return 0;
}

/* The real modules and namespaces a library's namespace for generated code holds: the code is
 * built from the user's text (sympy's experimental_lambdify writes a symbol's name into it, and
 * a symbol named np evaluated to the real numpy). A module becomes its proxy when the user may
 * import it, else it goes, as a namespace does; the generated code then reads them as the
 * user's code would; the item under keep (the builtins a namespace names) stays. 1 when
 * something changed, 0 when not, -1 with an exception. */
static int modules_proxied(PyObject *d, PyObject *keep)
{
	PyObject *items = PyDict_Items(d);
	int rc = items ? 0 : -1, changed = 0;

	for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
		PyObject *k = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
		PyObject *v = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1), *name, *p = NULL;

		if (k == keep || !is_namespace(v))
			continue;
		name = PyModule_Check(v) ? PyModule_GetNameObject(v) : NULL;
		PyErr_Clear();
		if (name && PyUnicode_CheckExact(name))
			p = pyproxy_get(name, 0);
		Py_XDECREF(name);
		PyErr_Clear();
		rc = p ? PyDict_SetItem(d, k, p) : PyDict_DelItem(d, k);
		changed = 1;
	}
	Py_XDECREF(items);
	return rc < 0 ? rc : changed;
}

/* Put a copy of the sandbox's builtins in d as its __builtins__: d may be a dict the user's code
 * holds (given to a library that evaluates in it), and the builtins every frame of the user's
 * runs with are not handed to it to change. */
static int builtins_put(PyObject *d)
{
	PyObject *copy = PyDict_Copy(pylayer_builtins());
	int rc = copy ? PyDict_SetItem(d, str_builtins, copy) : -1;

	Py_XDECREF(copy);
	return rc;
}

/* The namespace eval() or exec() may run code in for a library while armed: d itself, with the
 * sandbox's builtins put in when it names none (CPython would put in the caller's, the real
 * ones) or names the real ones but is no module's (a copy the library made of its globals, as
 * the decorator package scipy keeps does); or, when d is a real module's namespace (typing's
 * globals, a library's globals()), a fresh one that keeps only its __name__. New reference, or
 * NULL. */
static PyObject *namespace_checked(PyObject *d, int globals, int *loading)
{
	PyObject *b, *fresh, *name;

	if (!PyDict_Check(d))
		return Py_NewRef(d); /* exec and eval raise their own TypeError */
	if (globals && builtins_imitated(d)) {
		PyErr_SetString(PyExc_TypeError,
		                "exec() and eval() refuse globals with a key that is not a str but "
		                "hashes as '__builtins__'");
		return NULL;
	}
	b = PyDict_GetItemWithError(d, str_builtins);
	if (!b && PyErr_Occurred())
		return NULL;
	if (!b) {
		if ((globals && builtins_put(d) < 0) || modules_proxied(d, str_builtins) < 0)
			return NULL;
		return Py_NewRef(d);
	}
	if (b != real_builtins && b != real_builtins_mod) {
		/* (a module given as the builtins, a proxy: its namespace read by bare names, past
		 * the attribute rules; the sandbox's instead) */
		if (PyModule_Check(b) && builtins_put(d) < 0)
			return NULL;
		return modules_proxied(d, str_builtins) < 0 ? NULL : Py_NewRef(d);
	}
	/* A served module evaluating in its own namespace while it is imported (scipy.stats
	 * deletes its docstring parts with exec: globals and locals both that namespace), with
	 * no user code on the way: that namespace, but the code runs with the sandbox's builtins
	 * (evaluate_unnested puts them in for the call). Code given locals of its own is code
	 * generated to define something (dataclasses writes the names of a class's fields into
	 * the __init__ it makes, and the user's code may have changed them): it gets a fresh
	 * namespace, as after the import. */
	if (loading && pyimport_loading(d) && pyguard_loading_evaluation()) {
		*loading = 1;
		return Py_NewRef(d);
	}
	if (!module_namespace(d)) {
		if (builtins_put(d) < 0 || modules_proxied(d, str_builtins) < 0)
			return NULL;
		return Py_NewRef(d);
	}
	fresh = PyDict_New();
	if (!fresh)
		return NULL;
	name = PyDict_GetItemWithError(d, str_name);
	if ((!name && PyErr_Occurred()) || builtins_put(fresh) < 0 ||
	    (name && PyDict_SetItem(fresh, str_name, name) < 0)) {
		Py_DECREF(fresh);
		return NULL;
	}
	return fresh;
}

/* mpmath's summator source: "def hypsum_P_Q_A_B_Z(coeffs, z, prec, wp, epsshift,
 * magnitude_check, **kwargs):" and a body of its own text. Only the function's name is made of
 * what the caller gave (the types of its parameters, compared with == and joined): a str whose
 * __eq__ lies put code there. The name must be what the types it stands for spell. */
static int hypsum_source(PyObject *src)
{
	static const char head[] = "def hypsum_";
	static const char tail[] = "(coeffs, z, prec, wp, epsshift, magnitude_check, **kwargs):\n";
	const char *s = PyUnicode_CheckExact(src) ? PyUnicode_AsUTF8(src) : NULL;
	int parts = 0;

	if (!s) {
		PyErr_Clear();
		return 0;
	}
	if (strncmp(s, head, sizeof(head) - 1) != 0)
		return 0;
	s += sizeof(head) - 1;
	/* P_Q_: digits; A_B_: parameter types; then the argument's type. */
	for (; parts < 2; parts++) {
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
		if (*s++ != '_')
			return 0;
	}
	for (; parts < 4; parts++) {
		while (*s && strchr("ZQRC", *s))
			s++;
		if (*s++ != '_')
			return 0;
	}
	if (*s != 'R' && *s != 'C')
		return 0;
	s++;
	if (strncmp(s, tail, sizeof(tail) - 1) != 0)
		return 0;
	s += sizeof(tail) - 1;
	/* One function: every later line is its body, indented. */
	for (const char *nl = s - 1; nl; nl = strchr(nl + 1, '\n'))
		if (nl[1] != ' ' || nl[2] != ' ' || nl[3] != ' ' || nl[4] != ' ')
			return 0;
	return 1;
}

/* Modules that generate code at run time from text of their own and run it in their own
 * namespace: mpmath's hypergeometric summators (hyp1f1, hyp2f1, and sympy's integrals and
 * normal distributions through them) are written for the types of their parameters, and name
 * the module's constants. Their source is checked to be the one the module writes. */
static const struct {
	const char *module, *calls;
	int (*source_ok)(PyObject *src);
} generators[] = {
    {"mpmath.libmp.libhyper", "exec_", hypsum_source},
};

/* Is g the namespace of such a module, given by that module's own bytecode, which calls the
 * evaluator by its name on that line (not a callable of the user's run from C under it), with
 * source that module writes? */
static int generator_namespace(PyObject *g, PyObject *src)
{
	PyFrameObject *f = PyEval_GetFrame();
	PyObject *name, *fg;
	int own;

	if (!f || frame_is_user(f) || !PyDict_Check(g))
		return 0;
	fg = PyFrame_GetGlobals(f);
	own = fg == g;
	Py_XDECREF(fg);
	name = own ? PyDict_GetItemWithError(g, str_name) : NULL;
	if (!name || !PyUnicode_CheckExact(name)) {
		PyErr_Clear();
		return 0;
	}
	for (size_t i = 0; i < sizeof(generators) / sizeof(generators[0]); i++) {
		const char *const calls[] = {generators[i].calls, NULL};
		if (PyUnicode_CompareWithASCIIString(name, generators[i].module) == 0 &&
		    module_namespace(g) && pylayer_frame_calls(f, calls) &&
		    generators[i].source_ok(src))
			return 1;
	}
	return 0;
}

/* exec(source, globals=None, locals=None, /, *, closure=None) and eval(...): typing evaluates
 * annotation strings, dataclasses and namedtuple execute generated text that holds the user's
 * field names. The "exec" audit event checks the code itself. */
static PyObject *evaluate_unnested(PyObject *real, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	PyObject *g, *l, *cg = NULL, *cl = NULL, *call = NULL, *r = NULL;
	int loading = 0, explicit;

	if (n < 1 || n > 3)
		return PyObject_Call(real, args, kw);
	g = n > 1 ? PyTuple_GET_ITEM(args, 1) : Py_None;
	l = n > 2 ? PyTuple_GET_ITEM(args, 2) : Py_None;
	/* A module's namespace given by its own code (exec(code, globals())): a callable run from
	 * C under its frame (a finalizer) gives none, and cannot name it. */
	explicit = g != Py_None;
	if (g == Py_None) {
		g = PyEval_GetGlobals();
		if (l == Py_None)
			l = PyEval_GetLocals();
		if (!g)
			return PyObject_Call(real, args, kw);
	}
	if (!l || l == Py_None)
		l = g;
	if (explicit && generator_namespace(g, PyTuple_GET_ITEM(args, 0))) {
		/* A copy of its namespace, with the sandbox's builtins: what the code defines
		 * reads the module's names, and changes none of them. */
		cg = PyDict_Copy(g);
		if (cg && builtins_put(cg) < 0)
			Py_CLEAR(cg);
	} else {
		cg = namespace_checked(g, 1, l == g && explicit ? &loading : NULL);
	}
	cl = !cg ? NULL : l == g ? Py_NewRef(cg) : namespace_checked(l, 0, NULL);
	if (cl)
		call = PyTuple_Pack(3, PyTuple_GET_ITEM(args, 0), cg, cl);
	if (call && loading) {
		/* The module's own builtins back once the code ran, whatever it raised. */
		PyObject *own = PyDict_GetItemWithError(cg, str_builtins), *t, *v, *tb;
		Py_XINCREF(own);
		if (own && PyDict_SetItem(cg, str_builtins, pylayer_builtins()) == 0) {
			r = PyObject_Call(real, call, kw);
			PyErr_Fetch(&t, &v, &tb);
			if (PyDict_SetItem(cg, str_builtins, own) < 0) {
				Py_CLEAR(r);
				Py_XDECREF(t);
				Py_XDECREF(v);
				Py_XDECREF(tb);
			} else {
				PyErr_Restore(t, v, tb);
			}
		}
		Py_XDECREF(own);
	} else if (call) {
		r = PyObject_Call(real, call, kw);
	}
	Py_XDECREF(call);
	Py_XDECREF(cl);
	Py_XDECREF(cg);
	return r;
}

/* The interpreter's exec and eval are held by libraries besides builtins (mpmath's and six's
 * exec_, a function's default): one run from C under a library's frame (a __del__ that is a
 * partial of it) took that frame's globals and builtins, a module's real namespace. The
 * builtin function objects themselves check: every object of a builtin shares its method
 * definition, whose function becomes these; the originals are called through copies of it. */
static PyMethodDef orig_exec_def, orig_eval_def;

static PyObject *evaluate_fast(PyObject *real, PyObject *const *args, Py_ssize_t n,
                               PyObject *kwnames)
{
	PyObject *tuple, *kw = NULL, *r = NULL;

	if (!pylayer_armed())
		return PyObject_Vectorcall(real, args, (size_t)n, kwnames);
	/* Counted before anything is allocated: a collection run by this call's own allocations
	 * runs finalizers inside it. */
	eval_depth++;
	tuple = PyTuple_New(n);
	if (!tuple) {
		eval_depth--;
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
	if (kwnames && PyTuple_GET_SIZE(kwnames)) {
		kw = PyDict_New();
		for (Py_ssize_t i = 0; kw && i < PyTuple_GET_SIZE(kwnames); i++)
			if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
				Py_CLEAR(kw);
		if (!kw)
			goto out;
	}
	r = evaluate_unnested(real, tuple, kw);
out:
	Py_XDECREF(kw);
	Py_DECREF(tuple);
	eval_depth--;
	return r;
}

static PyObject *exec_fast(PyObject *self, PyObject *const *args, Py_ssize_t n, PyObject *kwnames)
{
	(void)self;
	return evaluate_fast(real_exec, args, n, kwnames);
}

/* eval takes no keywords (METH_FASTCALL alone). */
static PyObject *eval_fast(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	return evaluate_fast(real_eval, args, n, NULL);
}

/* Builtins that answer with the calling frame's namespace (globals(), locals(), vars()): run from
 * C under a library's frame (a default_factory, a finalizer, a key function), they answered with
 * that frame's (a module's real globals). They answer a call in a library's own bytecode (its
 * line loads the name and calls), and the user's code for its own frame. __import__ and
 * breakpoint below. */
static PyMethodDef orig_globals_def, orig_locals_def, orig_vars_def, orig_import_def,
    orig_breakpoint_def;

/* 1 when name may answer now; 0 with PermissionError. */
static int frame_builtin_allowed(const char *name)
{
	const char *const names[] = {name, NULL};
	PyFrameObject *f = PyEval_GetFrame();

	if (!pylayer_armed())
		return 1;
	if (f && (frame_is_user(f) || pylayer_frame_calls(f, names)))
		return 1;
	PyErr_Format(PyExc_PermissionError,
	             "%s() is not available here in the sandbox: it answers only the code that "
	             "calls it by name",
	             name);
	return 0;
}

static PyObject *globals_checked(PyObject *self, PyObject *unused)
{
	return frame_builtin_allowed("globals") ? orig_globals_def.ml_meth(self, unused) : NULL;
}

static PyObject *locals_checked(PyObject *self, PyObject *unused)
{
	return frame_builtin_allowed("locals") ? orig_locals_def.ml_meth(self, unused) : NULL;
}

static PyObject *vars_checked(PyObject *self, PyObject *args)
{
	/* vars(obj) reads obj's __dict__ (the attribute rules hold); vars() the frame's. */
	if (PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 0 && !frame_builtin_allowed("vars"))
		return NULL;
	return orig_vars_def.ml_meth(self, args);
}

/* Libraries' compiled code calls the builtin __import__ from C (Cython's import statements):
 * any library frame may. The user's code imports through the sandbox's; with the real one
 * in hand, it would get real modules. */
static PyObject *import_checked(PyObject *self, PyObject *const *args, Py_ssize_t n,
                                PyObject *kwnames)
{
	if (pylayer_armed() && reader_is_user()) {
		PyErr_SetString(
		    PyExc_PermissionError,
		    "__import__ is not available in the sandbox: use the import statement");
		return NULL;
	}
	return ((_PyCFunctionFastWithKeywords)(void (*)(void))orig_import_def.ml_meth)(self, args,
	                                                                               n, kwnames);
}

static PyObject *breakpoint_checked(PyObject *self, PyObject *const *args, Py_ssize_t n,
                                    PyObject *kwnames)
{
	if (pylayer_armed()) {
		PyErr_SetString(PyExc_PermissionError,
		                "breakpoint() is not available in the sandbox");
		return NULL;
	}
	return ((_PyCFunctionFastWithKeywords)(void (*)(void))orig_breakpoint_def.ml_meth)(
	    self, args, n, kwnames);
}

/* The builtin name's definition takes fast (of the convention flags); its original is kept in
 * copy. 0 or -1. */
static int builtin_guarded(PyObject *b, const char *name, PyMethodDef *copy, PyCFunction fast,
                           int flags)
{
	PyObject *f = PyDict_GetItemString(b, name);
	PyMethodDef *def;

	if (!f || !PyCFunction_Check(f)) {
		PyErr_Format(PyExc_RuntimeError, "builtin %s missing", name);
		return -1;
	}
	def = ((PyCFunctionObject *)f)->m_ml;
	if ((def->ml_flags & (METH_VARARGS | METH_FASTCALL | METH_KEYWORDS | METH_NOARGS)) !=
	    flags) {
		PyErr_Format(PyExc_RuntimeError, "builtin %s takes an unexpected convention", name);
		return -1;
	}
	*copy = *def;
	def->ml_meth = fast;
	return 0;
}

/* The builtin name (the interpreter's exec or eval) checks through fast from now on; its
 * original, a new object over a copy of its definition, is returned. */
static PyObject *builtin_checked(PyObject *b, const char *name, PyMethodDef *copy, PyCFunction fast,
                                 int flags)
{
	if (builtin_guarded(b, name, copy, fast, flags) < 0)
		return NULL;
	return PyCFunction_NewEx(copy, PyCFunction_GET_SELF(PyDict_GetItemString(b, name)), NULL);
}

static int evaluators_install(void)
{
	PyObject *b = PyEval_GetBuiltins();

	real_builtins = b;
	real_builtins_mod = PyImport_ImportModule("builtins");
	if (builtin_guarded(b, "globals", &orig_globals_def, globals_checked, METH_NOARGS) < 0 ||
	    builtin_guarded(b, "locals", &orig_locals_def, locals_checked, METH_NOARGS) < 0 ||
	    builtin_guarded(b, "vars", &orig_vars_def, vars_checked, METH_VARARGS) < 0 ||
	    builtin_guarded(b, "__import__", &orig_import_def,
	                    (PyCFunction)(void (*)(void))import_checked,
	                    METH_FASTCALL | METH_KEYWORDS) < 0 ||
	    builtin_guarded(b, "breakpoint", &orig_breakpoint_def,
	                    (PyCFunction)(void (*)(void))breakpoint_checked,
	                    METH_FASTCALL | METH_KEYWORDS) < 0)
		return -1;
	real_exec =
	    builtin_checked(b, "exec", &orig_exec_def, (PyCFunction)(void (*)(void))exec_fast,
	                    METH_FASTCALL | METH_KEYWORDS);
	real_eval = builtin_checked(b, "eval", &orig_eval_def,
	                            (PyCFunction)(void (*)(void))eval_fast, METH_FASTCALL);
	if (!real_builtins_mod || !real_exec || !real_eval) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError, "builtins exec or eval missing");
		return -1;
	}
	return 0;
}

/* ---- frames as libraries see them -------------------------------------------------------- */

/* sys._getframe for library code: a view of a frame that tells a library what it asks a caller's
 * frame for (the module's name: namedtuple, typing, enum, matplotlib's and scipy's helpers; the
 * caller's names: pandas' query and eval, sympy's var) and holds nothing more. A frame of the
 * user's code shows its own globals and locals; any other frame shows only its module's name,
 * empty locals, and its code's file and function names. The real frames stay out of reach. */
typedef struct {
	PyObject_HEAD PyFrameObject *frame; /* owned; no attribute gives it out */
} FrameViewObject;

static PyTypeObject frame_view_type;
static PyObject *real_getframe;  /* sys._getframe, used while unarmed (the zygote) */
static PyObject *namespace_type; /* types.SimpleNamespace */

static PyObject *frame_view_new(PyFrameObject *f)
{
	FrameViewObject *v;

	if (!f)
		Py_RETURN_NONE;
	v = PyObject_GC_New(FrameViewObject, &frame_view_type);
	if (!v)
		return NULL;
	v->frame = (PyFrameObject *)Py_NewRef(f);
	PyObject_GC_Track(v);
	return (PyObject *)v;
}

/* A view kept in the frame's own locals makes a cycle: the collector breaks it. */
static int frame_view_traverse(PyObject *self, visitproc visit, void *arg)
{
	Py_VISIT(((FrameViewObject *)self)->frame);
	return 0;
}

static int frame_view_clear(PyObject *self)
{
	Py_CLEAR(((FrameViewObject *)self)->frame);
	return 0;
}

static void frame_view_dealloc(PyObject *self)
{
	PyObject_GC_UnTrack(self);
	frame_view_clear(self);
	PyObject_GC_Del(self);
}

/* The frame a view shows, or NULL with ValueError when the collector cleared it. Borrowed. */
static PyFrameObject *view_frame(PyObject *self)
{
	PyFrameObject *f = ((FrameViewObject *)self)->frame;

	if (!f)
		PyErr_SetString(PyExc_ValueError, "the frame is gone");
	return f;
}

static PyObject *view_globals(PyObject *self, void *closure)
{
	PyFrameObject *f = view_frame(self);
	PyObject *g = f ? PyFrame_GetGlobals(f) : NULL, *d, *name;

	(void)closure;
	if (!g || g == user_ns)
		return g;
	/* Held: making the dict may run a collection, and a finalizer may change g. */
	name = Py_XNewRef(PyDict_GetItemWithError(g, str_name));
	d = name || !PyErr_Occurred() ? PyDict_New() : NULL;
	if (d && name && PyDict_SetItem(d, str_name, name) < 0)
		Py_CLEAR(d);
	Py_XDECREF(name);
	Py_DECREF(g);
	return d;
}

static PyObject *view_locals(PyObject *self, void *closure)
{
	PyFrameObject *f = view_frame(self);
	PyObject *g = f ? PyFrame_GetGlobals(f) : NULL;
	int user = g && g == user_ns;

	(void)closure;
	if (!f)
		return NULL;
	Py_XDECREF(g);
	return user ? PyFrame_GetLocals(f) : PyDict_New();
}

static PyObject *view_back(PyObject *self, void *closure)
{
	PyFrameObject *f = view_frame(self), *b = f ? PyFrame_GetBack(f) : NULL;
	PyObject *v = f ? frame_view_new(b) : NULL;

	(void)closure;
	Py_XDECREF(b);
	return v;
}

static PyObject *view_code(PyObject *self, void *closure)
{
	PyFrameObject *f = view_frame(self);
	PyCodeObject *c = f ? PyFrame_GetCode(f) : NULL;
	PyObject *ns = NULL, *kw, *none;

	(void)closure;
	if (!c)
		return NULL;
	kw = Py_BuildValue("{sOsOsi}", "co_filename", c->co_filename, "co_name", c->co_name,
	                   "co_firstlineno", c->co_firstlineno);
	none = PyTuple_New(0);
	if (kw && none)
		ns = PyObject_Call(namespace_type, none, kw);
	Py_XDECREF(none);
	Py_XDECREF(kw);
	Py_DECREF(c);
	return ns;
}

static PyObject *view_lineno(PyObject *self, void *closure)
{
	PyFrameObject *f = view_frame(self);

	(void)closure;
	return f ? PyLong_FromLong(PyFrame_GetLineNumber(f)) : NULL;
}

static PyGetSetDef frame_view_getset[] = {
    {"f_globals", view_globals, NULL, NULL, NULL}, {"f_locals", view_locals, NULL, NULL, NULL},
    {"f_back", view_back, NULL, NULL, NULL},       {"f_code", view_code, NULL, NULL, NULL},
    {"f_lineno", view_lineno, NULL, NULL, NULL},   {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject frame_view_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.frame",
    .tp_basicsize = sizeof(FrameViewObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "What the sandbox shows of a frame: names, never namespaces but the user's.",
    .tp_dealloc = frame_view_dealloc,
    .tp_traverse = frame_view_traverse,
    .tp_clear = frame_view_clear,
    .tp_getset = frame_view_getset,
};

/* sys._getframe([depth]): the real frame while unarmed, else a view of it. */
static PyObject *getframe_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyFrameObject *f;
	long depth = 0;
	PyObject *v;

	(void)self;
	if (!pylayer_armed())
		return PyObject_Vectorcall(real_getframe, args, (size_t)nargs, NULL);
	if (nargs > 1) {
		PyErr_SetString(PyExc_TypeError, "_getframe expected at most 1 argument");
		return NULL;
	}
	if (nargs == 1 && (depth = PyLong_AsLong(args[0])) == -1 && PyErr_Occurred())
		return NULL;
	f = PyEval_GetFrame();
	Py_XINCREF(f);
	for (; f && depth > 0; depth--) {
		PyFrameObject *b = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = b;
	}
	if (!f) {
		PyErr_SetString(PyExc_ValueError, "call stack is not deep enough");
		return NULL;
	}
	v = frame_view_new(f);
	Py_DECREF(f);
	return v;
}

static PyMethodDef getframe_def = {"_getframe", (PyCFunction)(void (*)(void))getframe_view,
                                   METH_FASTCALL, "A view of a frame of the call stack."};

static int getframe_install(void)
{
	PyObject *sys = PyImport_ImportModule("sys"), *types = PyImport_ImportModule("types"), *f;
	int rc = -1;

	if (!sys || !types || PyType_Ready(&frame_view_type) < 0)
		goto out;
	namespace_type = PyObject_GetAttrString(types, "SimpleNamespace");
	if (!namespace_type)
		goto out;
	real_getframe = PyObject_GetAttrString(sys, "_getframe");
	f = real_getframe ? PyCFunction_New(&getframe_def, NULL) : NULL;
	if (f)
		rc = PyObject_SetAttrString(sys, "_getframe", f);
	Py_XDECREF(f);
out:
	Py_XDECREF(types);
	Py_XDECREF(sys);
	return rc;
}

/* ---- libraries' classes ------------------------------------------------------------------ */

static setattrofunc real_type_setattro;         /* CPython's type.__setattr__ */
static PyObject *str_mro, *type_mro;            /* "mro", and type.mro (a metaclass's own: below) */
static PyObject *early_guard_key, *early_guard; /* the early class guard's entry (below) */
static int mro_refused(const char *whose);

/* The classes that existed when the zygote was sealed, sorted by address: all libraries'. */
static PyObject **sealed;
static size_t n_sealed;

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (PyObject *const *)a, y = (uintptr_t) * (PyObject *const *)b;

	return x < y ? -1 : x > y;
}

static int sealed_class(PyObject *t)
{
	return n_sealed && bsearch(&t, sealed, n_sealed, sizeof(*sealed), ptr_cmp) != NULL;
}

int pyguard_sealed_class(PyObject *t)
{
	return sealed_class(t);
}

/* The classes made during the current call (by the user's code, by a library for it: a
 * namedtuple, a sympy function, an abc; by a module imported late), as an open-addressed set of
 * addresses, emptied when a call begins. A library finishes such a class after making it: abc,
 * enum and sympy's metaclasses set its attributes from C, in their __new__ and __init__ that
 * type() calls (so with no frame of the import under them). The addresses are not references:
 * a class leaves the set when it is freed (type_dealloc_checked), so that a class made at its
 * address later (a late import's, which is a library's) is not taken for one of the call's. */
static PyObject **fresh;
static size_t fresh_cap, n_fresh;

static size_t fresh_slot(PyObject *t)
{
	return ((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull & (fresh_cap - 1);
}

static int fresh_class(PyObject *t)
{
	if (!n_fresh)
		return 0;
	for (size_t i = fresh_slot(t);; i = (i + 1) & (fresh_cap - 1)) {
		if (fresh[i] == t)
			return 1;
		if (!fresh[i])
			return 0;
	}
}

static int fresh_add(PyObject *t)
{
	if ((n_fresh + 1) * 2 > fresh_cap) {
		size_t old_cap = fresh_cap, cap = fresh_cap ? fresh_cap * 2 : 256;
		PyObject **old = fresh, **grown = PyMem_Calloc(cap, sizeof(*grown));
		if (!grown) {
			PyErr_NoMemory();
			return -1;
		}
		fresh = grown;
		fresh_cap = cap;
		n_fresh = 0;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i] && fresh_add(old[i]) < 0)
				return -1;
		PyMem_Free(old);
	}
	for (size_t i = fresh_slot(t);; i = (i + 1) & (fresh_cap - 1)) {
		if (fresh[i] == t)
			return 0;
		if (!fresh[i]) {
			fresh[i] = t;
			n_fresh++;
			return 0;
		}
	}
}

/* t leaves the set (its entry's cluster placed again after it, as linear probing needs). */
static void fresh_remove(PyObject *t)
{
	size_t i, j;

	if (!n_fresh)
		return;
	for (i = fresh_slot(t); fresh[i] != t; i = (i + 1) & (fresh_cap - 1))
		if (!fresh[i])
			return;
	fresh[i] = NULL;
	n_fresh--;
	for (j = (i + 1) & (fresh_cap - 1); fresh[j]; j = (j + 1) & (fresh_cap - 1)) {
		PyObject *e = fresh[j];
		fresh[j] = NULL;
		n_fresh--;
		(void)fresh_add(e); /* (the set is not fuller than before: no allocation) */
	}
}

/* Every class's deallocation (subclasses of type reach it through subtype_dealloc). */
static destructor real_type_dealloc;

static void type_dealloc_checked(PyObject *t)
{
	fresh_remove(t);
	real_type_dealloc(t);
}

void pyguard_call_begin(void)
{
	if (n_fresh)
		memset(fresh, 0, fresh_cap * sizeof(*fresh));
	n_fresh = 0;
}

/* A class of a library: one the zygote had, or one a module's code made (not the user's,
 * whose classes say they live in __main__; a class the user's code names another module is
 * its own to lose). A class the zygote had stays a library's whatever its __module__ says
 * later (functools.update_wrapper copied the user's '__main__' onto pandas.Series). */
static int library_class(PyObject *t)
{
	PyObject *m;

	if (!PyType_Check(t) || !(((PyTypeObject *)t)->tp_flags & Py_TPFLAGS_HEAPTYPE))
		return 0; /* CPython refuses changes to the built-in types itself */
	if (sealed_class(t))
		return 1;
	m = pyguard_str_item(((PyTypeObject *)t)->tp_dict, "__module__");
	return !m || !PyUnicode_CheckExact(m) ||
	       PyUnicode_CompareWithASCIIString(m, "__main__") != 0;
}

int pyguard_user_class(PyObject *t)
{
	return PyType_Check(t) && (((PyTypeObject *)t)->tp_flags & Py_TPFLAGS_HEAPTYPE) &&
	       !library_class(t);
}

/* The frame that asks for a change of a class: the innermost, or past the metaclass __setattr__
 * or __delattr__ frames of a library that pass it on (enum's), the one that called them; a
 * frame of the user's stops the walk. New reference, or NULL. */
static PyFrameObject *change_asker(void)
{
	PyFrameObject *f = PyEval_GetFrame(), *back;

	Py_XINCREF(f);
	for (int i = 0; f && i < 4; i++) {
		PyCodeObject *c = PyFrame_GetCode(f);
		int in_setter = PyUnicode_CompareWithASCIIString(c->co_name, "__setattr__") == 0 ||
		                PyUnicode_CompareWithASCIIString(c->co_name, "__delattr__") == 0;
		Py_DECREF(c);
		if (!in_setter || frame_is_user(f))
			return f;
		back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
	Py_XDECREF(f);
	return NULL;
}

/* Is the change asked for by the user's code: its frame, or a metaclass's __setattr__ the
 * user's frame called (enum's)? */
static int change_is_users(void)
{
	PyFrameObject *f = change_asker();
	int user = f && frame_is_user(f);

	Py_XDECREF(f);
	return user;
}

/* Is a change of name asked by a library's own statement (cls.name = v, del cls.name in its
 * bytecode, Dummy._count += 1 in sympy), past the metaclass __setattr__ that passes it on
 * (enum's)? A change made in C under a library's frame (setattr, type.__setattr__) is not:
 * the user's code gets C callables run there (a map of type.__setattr__ that
 * collections.Counter consumes, functools.update_wrapper given a library class). */
static int library_stores(PyObject *name)
{
	PyFrameObject *f = change_asker();
	int stores = f && !frame_is_user(f) && pylayer_frame_stores(f, name);

	Py_XDECREF(f);
	return stores;
}

/* Is t a class being made now: by a metaclass call in progress (its metaclass's __new__ and
 * __init__ finish it: abc, enum, sympy set its attributes from C), or by a type.__new__ in
 * progress that has not returned it yet (its descriptors' __set_name__ set attributes on it)?
 * The latter is known by the arguments: its name, and its bases' very tuple (or object's). */
static int being_made(PyObject *t)
{
	PyTypeObject *tp = (PyTypeObject *)t;

	for (int i = 0; i < n_constructing; i++)
		if (constructing[i] == t)
			return 1;
	for (int i = type_new_depth - 1; i >= 0 && i < MAKING_MAX; i--) {
		PyObject *a = type_new_args[i], *name, *bases;
		if (!a || !PyTuple_Check(a) || PyTuple_GET_SIZE(a) != 3)
			continue;
		name = PyTuple_GET_ITEM(a, 0);
		bases = PyTuple_GET_ITEM(a, 1);
		if (!PyUnicode_Check(name) || !PyTuple_Check(bases) || sealed_class(t) ||
		    PyUnicode_CompareWithASCIIString(name, tp->tp_name) != 0)
			continue;
		if (PyTuple_GET_SIZE(bases) ? tp->tp_bases == bases
		                            : tp->tp_base == &PyBaseObject_Type)
			return 1;
	}
	return 0;
}

/* Would setting name on t, a class made during the call, replace what a library's class it
 * derives from (one the zygote had) defines? A library makes classes during a call for the
 * user (make_dataclass, a functional enum: a library finishing them sets new names) and for
 * itself (matplotlib's subplot classes, made at the first polar plot and kept for later
 * calls): a library frame the code can run anything in (the executor, asyncio's callbacks)
 * set Axes' get_title on the latter for the code. A hook is the library's (below); a
 * docstring, which every class's own dict holds, is not. */
static int overrides_library(PyObject *t, PyObject *name)
{
	PyObject *mro = ((PyTypeObject *)t)->tp_mro, *m;
	const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
	size_t len = n ? strlen(n) : 0;

	if (!n || !mro || !PyTuple_Check(mro)) {
		PyErr_Clear();
		return 1;
	}
	/* A dunder is a hook CPython or a library calls (__setattr__ took every write matplotlib
	 * made into its polar axes, __eq__ their comparisons): set by a library frame only on a
	 * class types.new_class made (make_dataclass: its __init__, __eq__, __setattr__), and
	 * __module__, which says so, not even there; while a module is imported, its names only
	 * (typing's NamedTuple finishes the class a library's statement makes: __qualname__,
	 * __doc__, __orig_bases__). No hook then: the code's finalizers run inside an import too (the collector),
	 * and handed such a write to a library frame (contextlib's callbacks). */
	m = pyguard_str_item(((PyTypeObject *)t)->tp_dict, "__module__");
	if (len > 4 && strncmp(n, "__", 2) == 0 && strcmp(n + len - 2, "__") == 0 &&
	    !(pyimport_loading_any() &&
	      (strcmp(n, "__qualname__") == 0 || strcmp(n, "__doc__") == 0 ||
	       strcmp(n, "__annotations__") == 0 || strcmp(n, "__orig_bases__") == 0)) &&
	    (!m || !PyUnicode_CheckExact(m) || PyUnicode_CompareWithASCIIString(m, "types") != 0 ||
	     strcmp(n, "__module__") == 0))
		return 1;
	if (strcmp(n, "__doc__") == 0)
		return 0;
	for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if (!(base->tp_flags & Py_TPFLAGS_HEAPTYPE) || !sealed_class((PyObject *)base) ||
		    !base->tp_dict)
			continue;
		if (PyDict_GetItemWithError(base->tp_dict, name))
			return 1;
		if (PyErr_Occurred())
			return 1;
	}
	return 0;
}

/* May a library's class be changed now? Not by the user's code; by a library's code: while a
 * served module is imported; in its own statement (a dunder not on a class the zygote had:
 * functools.update_wrapper's own "wrapper.__wrapped__ = wrapped" took any class); while the
 * class is being made (being_made); when the class was made during this call outside an
 * import (a namedtuple, a functional enum, a sympy function: a library finishing what it made
 * for the user). A class a late import made is finished once made: a hook set on it
 * afterwards (__init_subclass__, through a map of type.__setattr__) ran the user's callable
 * inside the next import that subclassed it. 0 or -1 with PermissionError. */
static int library_change_allowed(PyObject *t, PyObject *name)
{
	const char *why, *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
	size_t len = n ? strlen(n) : 0;
	/* A dunder may be a hook CPython or a library calls from C (__init_subclass__, __eq__,
	 * __set_name__). */
	int hook = !n || (len > 4 && strncmp(n, "__", 2) == 0 && strcmp(n + len - 2, "__") == 0);

	PyErr_Clear();
	if (!pylayer_armed() || !library_class(t))
		return 0;
	if (change_is_users())
		why = "";
	else if (pyguard_for_loading_module() ||
	         (library_stores(name) && !(hook && sealed_class(t))) || being_made(t) ||
	         (fresh_class(t) && !overrides_library(t, name)))
		return 0;
	else
		why = ", and a library function changes it for the user's code";
	PyErr_Format(PyExc_PermissionError,
	             "%s.%S cannot be changed in the sandbox: it is a library's class%s (subclass "
	             "it to change it)",
	             ((PyTypeObject *)t)->tp_name, name, why);
	return -1;
}

/* Setting or deleting an attribute of a class. The libraries' classes are shared by their own
 * code, which runs with the interpreter's builtins and reads their attributes from C: a
 * property or an operator the user's code set on one ran inside the libraries' imports and
 * code generation (an enum's __or__ during gettext's import, dataclasses.Field's name while
 * dataclasses wrote an __init__). The user's code changes its own classes only. */
static int interface_guard_tree(PyTypeObject *t);
static int interface_name(PyObject *name);
static PyObject *interface_refused(PyObject *name);
static int match_args_name(PyObject *name);

/* A comparison: setting one gives the class CPython's slot again. */
static int pyguard_operator_name(PyObject *name)
{
	static const char *const names[] = {
	    "__eq__",      "__ne__",       "__lt__",        "__le__",      "__gt__",
	    "__ge__",      "__add__",      "__radd__",      "__sub__",     "__rsub__",
	    "__mul__",     "__rmul__",     "__mod__",       "__rmod__",    "__divmod__",
	    "__rdivmod__", "__lshift__",   "__rlshift__",   "__rshift__",  "__rrshift__",
	    "__and__",     "__rand__",     "__xor__",       "__rxor__",    "__or__",
	    "__ror__",     "__floordiv__", "__rfloordiv__", "__truediv__", "__rtruediv__",
	    "__matmul__",  "__rmatmul__",  "__pow__",       "__rpow__",    NULL};
	for (const char *const *n = names; *n; n++)
		if (PyUnicode_CompareWithASCIIString(name, *n) == 0)
			return 1;
	return 0;
}

/* ---- type versions ------------------------------------------------------------------------ */

/* CPython 3.11 numbers the versions of classes (what its specialised instructions check a
 * type against, and what its attribute cache is keyed by) from one 32-bit counter that only
 * grows: each lookup on a class changed since its last one takes the next. Past 2**32 it
 * wraps, and two live classes share a version (the cache answers a lookup on one with what it
 * found on the other, a value it does not own; where attribute instructions are specialised
 * (none are with the layer on: pyspecialise.c), an object of one passes the other's slot
 * read: any memory). A loop changing a class
 * and reading it takes one per turn (and one per subclass read), so a session could use them
 * up in minutes of calls. Where the counter stands is read from a class of our own (changed,
 * then looked up: it takes the next version); past half its range no class may be changed
 * and no call runs in the process: a new session starts at the zygote's count. Read at each
 * call's start, and every VERSION_PROBE_EVERY changes of a class within one (between two
 * reads, each change renumbers at most the classes that exist, which memory bounds far below
 * the half left), and every VERSION_PROBE_EVERY classes made (each takes one at its first
 * lookup). */
#define VERSIONS_USED_MAX   (1U << 31)
#define VERSION_PROBE_EVERY 256
static PyTypeObject *version_probe;
static PyObject *version_probe_name;
static unsigned int changes_unprobed;

static int versions_probe_make(void)
{
	static PyType_Slot slots[] = {{0, NULL}};
	static PyType_Spec spec = {"safepy.version_probe", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT,
	                           slots};

	version_probe = (PyTypeObject *)PyType_FromSpec(&spec);
	version_probe_name = PyUnicode_InternFromString("probe");
	return version_probe && version_probe_name ? 0 : -1;
}

static newfunc type_new_real;

static PyObject *type_new_counted(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (++changes_unprobed >= VERSION_PROBE_EVERY && pyguard_versions_left() < 0)
		return NULL;
	return type_new_real(t, args, kw);
}

int pyguard_versions_left(void)
{
	unsigned int v;

	changes_unprobed = 0;
	if (!version_probe)
		return 0;
	PyType_Modified(version_probe);
	(void)_PyType_Lookup(version_probe, version_probe_name);
	v = version_probe->tp_version_tag;
	if (v != 0 && v < VERSIONS_USED_MAX)
		return 0;
	PyErr_SetString(PyExc_RuntimeError,
	                "this session changed classes too many times (the interpreter's class "
	                "versions are used up): start a new session");
	return -1;
}

/* The recursion levels a class's guard may use after CPython has made or changed the class (a
 * walk of its subclasses, the early guard's __set_name__ called by type()): code that made
 * or changed a class just under the recursion limit had the guard fail with RecursionError
 * after the change was done, the class (or its subclasses) left with CPython's own slots. */
#define GUARD_HEADROOM 64

/* A class CPython made or changed whose guard could not be put on (memory ran out in the
 * guard's walk, or in type() after the class had its slots and before the early guard ran): the
 * code could reach it still (a half-made class stays in its bases' subclass lists, which abc's
 * subclass check walks), so the process ends instead, failing closed. */
_Noreturn static void guard_failed_closed(void)
{
	_exit(WORKER_EXIT_GUARD);
}

/* 0 when the guard has its recursion levels left, else -1 with RecursionError (nothing was
 * done yet). */
static int guard_headroom(const char *doing)
{
	if (PyThreadState_Get()->recursion_remaining >= GUARD_HEADROOM)
		return 0;
	PyErr_Format(PyExc_RecursionError, "maximum recursion depth exceeded while %s", doing);
	return -1;
}

/* The change type.__setattr__'s checks let through, while CPython makes it (its own setters
 * below take it as checked). */
static struct type_setting {
	PyObject *self, *name, *value;
} type_setting;

static int bases_class_checked(PyTypeObject *t, void *unused)
{
	(void)unused;
	return pyreentry_array_class_checked(t) < 0 ? -1 : 0;
}

/* A class given new bases (by a library's setattr with a name the code chose, or type's own
 * descriptor) answers what its new MRO holds: the checks a class gets when it is made (beneath
 * ndarray, a number type) run again on it and its subclasses, and on a refusal it gets its old
 * bases back. 0, or -1 with the refusal. */
static int bases_refused(PyTypeObject *t, PyObject *old_bases)
{
	PyObject *type, *value, *tb, *name;
	struct type_setting was;

	if (pyguard_walk(t, bases_class_checked, NULL) == 0)
		return 0;
	PyErr_Fetch(&type, &value, &tb);
	name = PyUnicode_InternFromString("__bases__");
	was = type_setting; /* (the bases it had passed: set as they were, unchecked) */
	type_setting.self = (PyObject *)t;
	type_setting.name = name;
	type_setting.value = old_bases;
	if (!name || real_type_setattro((PyObject *)t, name, old_bases) < 0 ||
	    interface_guard_tree(t) < 0)
		guard_failed_closed();
	type_setting = was;
	Py_DECREF(name);
	PyErr_Restore(type, value, tb);
	return -1;
}

static int type_setattro_guarded(PyObject *self, PyObject *name, PyObject *value)
{
	struct type_setting was;
	PyObject *old_bases = NULL;
	int rc;

	if (pylayer_armed() && guard_headroom("changing a class") < 0)
		return -1;
	if (library_change_allowed(self, name) < 0 ||
	    pyreentry_class_attr_checked(self, name, value) < 0)
		return -1;
	if (++changes_unprobed >= VERSION_PROBE_EVERY && pyguard_versions_left() < 0)
		return -1;
	if (pylayer_armed() && interface_name(name)) {
		interface_refused(name);
		return -1;
	}
	if (pylayer_armed() && value && match_args_name(name) &&
	    pylayer_match_args_checked(value) < 0)
		return -1;
	/* On any class: a metaclass finds mro through its bases, a mixin's among them. The
	 * guard's entry is the sandbox's alone. */
	if (pylayer_armed() && PyUnicode_Check(name) && PyUnicode_Compare(name, str_mro) == 0)
		return mro_refused(((PyTypeObject *)self)->tp_name);
	if (pylayer_armed() && PyUnicode_Check(name) && early_guard_key &&
	    PyUnicode_Compare(name, early_guard_key) == 0) {
		PyErr_Format(PyExc_TypeError, "%U is the sandbox's own name", early_guard_key);
		return -1;
	}
	/* The bases and the MRO a class had are kept until the code ends: C code walking them
	 * (abc's subclass check reads the MRO after the code's __subclasshook__, which may set
	 * __bases__) holds them borrowed. */
	if (pylayer_armed() && PyUnicode_Check(name) &&
	    PyUnicode_CompareWithASCIIString(name, "__bases__") == 0) {
		PyTypeObject *t = (PyTypeObject *)self;
		if (t->tp_bases)
			pyreentry_hold_until_end(Py_NewRef(t->tp_bases));
		if (t->tp_mro)
			pyreentry_hold_until_end(Py_NewRef(t->tp_mro));
	}
	if (pylayer_armed() && PyUnicode_Check(name) &&
	    PyUnicode_CompareWithASCIIString(name, "__bases__") == 0)
		old_bases = Py_XNewRef(((PyTypeObject *)self)->tp_bases);
	was = type_setting;
	type_setting.self = self;
	type_setting.name = name;
	type_setting.value = value;
	rc = real_type_setattro(self, name, value);
	type_setting = was;
	/* CPython gives the class (and its subclasses) a new attribute lookup for these: the
	 * guard goes back on each (typing.NamedTuple sets __bases__ of the class it makes). The
	 * change is made (or partly, when CPython failed after it): a guard that cannot follow it
	 * ends the process. */
	if (pylayer_armed() && PyUnicode_Check(name) &&
	    (PyUnicode_CompareWithASCIIString(name, "__getattr__") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "__getattribute__") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "__setattr__") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "__bases__") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "__del__") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "__repr__") == 0 ||
	     PyUnicode_CompareWithASCIIString(name, "__str__") == 0 ||
	     pyguard_operator_name(name)) &&
	    interface_guard_tree((PyTypeObject *)self) < 0)
		guard_failed_closed();
	if (rc == 0 && old_bases && bases_refused((PyTypeObject *)self, old_bases) < 0)
		rc = -1;
	Py_XDECREF(old_bases);
	return rc;
}

/* The value a class's attribute had is released only once the change is made and CPython has
 * told the class's caches: the store dropped it first (its finalizers ran) and told the caches
 * after, and a finalizer reading the attribute got the object being freed from the type's
 * attribute cache (a freed object handed to the code). */
static int type_setattro_checked(PyObject *self, PyObject *name, PyObject *value)
{
	PyObject *key = NULL, *old = NULL;
	int rc;

	if (PyType_Check(self) && ((PyTypeObject *)self)->tp_dict && PyUnicode_Check(name)) {
		key = PyUnicode_CheckExact(name) ? Py_NewRef(name) : PyUnicode_FromObject(name);
		old = key ? PyDict_GetItemWithError(((PyTypeObject *)self)->tp_dict, key) : NULL;
		Py_XINCREF(old);
		Py_XDECREF(key);
		if (PyErr_Occurred()) {
			Py_XDECREF(old);
			return -1;
		}
	}
	rc = type_setattro_guarded(self, name, value);
	Py_XDECREF(old);
	return rc;
}

/* type.__setattr__(cls, name, value), and so super().__setattr__ in a metaclass. */
static PyObject *type_setattr_method(PyObject *self, PyObject *args)
{
	PyObject *name, *value;

	if (!PyArg_ParseTuple(args, "OO:__setattr__", &name, &value))
		return NULL;
	return type_setattro_checked(self, name, value) < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *type_delattr_method(PyObject *self, PyObject *args)
{
	PyObject *name;

	if (!PyArg_ParseTuple(args, "O:__delattr__", &name))
		return NULL;
	return type_setattro_checked(self, name, NULL) < 0 ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef type_setattr_def = {"__setattr__", type_setattr_method, METH_VARARGS,
                                       "Implement setattr(self, name, value)."};
static PyMethodDef type_delattr_def = {"__delattr__", type_delattr_method, METH_VARARGS,
                                       "Implement delattr(self, name)."};

/* Every metaclass that took type's slot when it was made, and their subclasses. */
static int metaclasses_checked(PyTypeObject *t, int depth)
{
	PyObject *subs;
	int rc = 0;

	if (t->tp_setattro == real_type_setattro)
		t->tp_setattro = type_setattro_checked;
	if (depth > 64)
		return 0;
	subs = PyObject_CallMethod((PyObject *)&PyType_Type, "__subclasses__", "O", t);
	if (!subs)
		return -1;
	for (Py_ssize_t i = 0; rc == 0 && PyList_Check(subs) && i < PyList_GET_SIZE(subs); i++)
		if (PyType_Check(PyList_GET_ITEM(subs, i)))
			rc = metaclasses_checked((PyTypeObject *)PyList_GET_ITEM(subs, i),
			                         depth + 1);
	Py_DECREF(subs);
	return rc;
}

/* type's own descriptors set a class's __name__, __bases__, __module__, ... when called
 * directly (type.__dict__['__bases__'].__set__(cls, ...), which a library's read handed the
 * code: V72b H1), past type.__setattr__'s checks: a library's class renamed, a class re-based
 * onto one the checks at its making refused. Each setter goes through those checks first; the
 * change they let through (the class, name and value they checked) reaches CPython's setter. */
struct type_setter {
	const char *name;
	setter real;
};
static struct type_setter type_setters[16];

static int type_set_checked(PyObject *self, PyObject *value, void *closure)
{
	const struct type_setter *ts = closure;
	PyObject *name;
	int rc;

	if (!pylayer_armed() ||
	    (self == type_setting.self && value == type_setting.value && type_setting.name &&
	     PyUnicode_CompareWithASCIIString(type_setting.name, ts->name) == 0))
		return ts->real(self, value, NULL);
	if (!(name = PyUnicode_InternFromString(ts->name)))
		return -1;
	rc = type_setattro_checked(self, name, value);
	Py_DECREF(name);
	return rc;
}

static int type_setters_checked(void)
{
	size_t n = 0;

	for (PyGetSetDef *d = PyType_Type.tp_getset; d && d->name; d++) {
		if (!d->set || d->set == type_set_checked)
			continue;
		if (n == sizeof(type_setters) / sizeof(type_setters[0])) {
			PyErr_SetString(PyExc_RuntimeError, "type has more setters than known");
			return -1;
		}
		type_setters[n].name = d->name;
		type_setters[n].real = d->set;
		d->closure = &type_setters[n++];
		d->set = type_set_checked;
	}
	return 0;
}

static int classes_guard_install(void)
{
	PyObject *set, *del;
	int rc;

	if (type_setters_checked() < 0)
		return -1;
	real_type_setattro = PyType_Type.tp_setattro;
	if (versions_probe_make() < 0)
		return -1;
	type_new_real = PyType_Type.tp_new;
	if (pyguard_replace_new(&PyType_Type, type_new_real, type_new_counted) < 0)
		return -1;
	set = PyDescr_NewMethod(&PyType_Type, &type_setattr_def);
	del = PyDescr_NewMethod(&PyType_Type, &type_delattr_def);
	rc = set && del && PyDict_SetItemString(PyType_Type.tp_dict, "__setattr__", set) == 0 &&
	             PyDict_SetItemString(PyType_Type.tp_dict, "__delattr__", del) == 0
	         ? metaclasses_checked(&PyType_Type, 0)
	         : -1;
	Py_XDECREF(set);
	Py_XDECREF(del);
	PyType_Modified(&PyType_Type);
	return rc;
}

/* ---- modules that classes hold ----------------------------------------------------------- */

/* A library class that holds a real module or a namespace as an attribute hands it to whoever
 * reads the attribute: pathlib's _WindowsFlavour its ntpath (and so the real os), the class
 * matplotlib makes of a backend module's variables that module's builtins and modules. A
 * module the user may import becomes its proxy there; any other module, and a namespace, goes
 * (no library reads them back: pathlib's flavours name their path module, matplotlib's backend
 * class copies a module's variables). A descriptor that gave them to library code only was
 * passed by C code running inside a library's read of the same name. */
static int held_values_guard(PyTypeObject *t)
{
	int rc;

	if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE) || !t->tp_dict)
		return 0;
	rc = modules_proxied(t->tp_dict, NULL);
	if (rc > 0)
		PyType_Modified(t);
	return rc < 0 ? -1 : 0;
}

/* ---- numpy's array interface -------------------------------------------------------------- */

/* numpy makes an array over the memory an object's __array_interface__ names by its address
 * (a dict's 'data': (address, read-only)), or its __array_struct__ by a C struct, whatever the
 * object: a class of the user's, a library's object that keeps what it is given (sklearn's
 * Bunch, scipy's OptimizeResult, SimpleNamespace, a module: keyword arguments, copy's state)
 * read and wrote any address of the worker. Only the classes that define the names themselves
 * answer them now: ndarray, PIL's Image, the strided view of pydata.py, none of them the
 * user's. object has both names as data descriptors that answer no object (AttributeError)
 * and cannot be set: they come before any instance's dict, and answer for every class that
 * does not define its own. The attribute lookups that go on after an AttributeError stop there
 * too: a class's __getattr__ (the hook CPython gives classes with __getattr__ or
 * __getattribute__, slot_tp_getattr_hook, wrapped on every class that has it) and a module's
 * __getattr__ (module_getattro, wrapped). A class made while the layer is armed may not define
 * the names, nor get them set later. The generic lookup of other classes stays as it is (the
 * interpreter specializes attribute reads on it). */
static getattrofunc getattr_hook;         /* slot_tp_getattr_hook */
static getattrofunc plain_getattro;       /* slot_tp_getattro: __getattribute__ alone */
static getattrofunc module_getattro_real; /* module_getattro */
static PyObject *str_interface, *str_struct, *str_match_args;

typedef struct {
	PyObject_HEAD PyObject *name;
} refusal_object;

static int interface_name(PyObject *name)
{
	if (name == str_interface || name == str_struct)
		return 1;
	/* An interned string of the same text is the same object. */
	if (!PyUnicode_Check(name) || PyUnicode_CHECK_INTERNED(name))
		return 0;
	return PyUnicode_Compare(name, str_interface) == 0 ||
	       PyUnicode_Compare(name, str_struct) == 0;
}

static PyObject *interface_refused(PyObject *name)
{
	PyErr_Format(PyExc_AttributeError,
	             "%U is not available in the sandbox (numpy's array interface names memory "
	             "by its address: give the class an __array__ method instead)",
	             name);
	return NULL;
}

static PyObject *refusal_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None)
		return Py_NewRef(self); /* read on a class: numpy takes a descriptor for no array */
	return interface_refused(((refusal_object *)self)->name);
}

static int refusal_set(PyObject *self, PyObject *obj, PyObject *value)
{
	(void)obj;
	(void)value;
	PyErr_Format(PyExc_AttributeError,
	             "%U cannot be set in the sandbox (numpy's array "
	             "interface names memory by its address)",
	             ((refusal_object *)self)->name);
	return -1;
}

static PyTypeObject refusal_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "array_interface_refused",
    .tp_basicsize = sizeof(refusal_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_descr_get = refusal_get,
    .tp_descr_set = refusal_set,
};

/* Does obj's class answer name itself (a class of its own defines it), not object's refusal? */
static int interface_defined(PyObject *obj, PyObject *name)
{
	PyObject *d = _PyType_Lookup(Py_TYPE(obj), name);

	return d && Py_TYPE(d) != &refusal_type;
}

int pyguard_answers_nothing(PyObject *descr)
{
	return descr && Py_TYPE(descr) == &refusal_type;
}

static int match_args_name(PyObject *name)
{
	return name == str_match_args ||
	       (PyUnicode_Check(name) && PyUnicode_Compare(name, str_match_args) == 0);
}

/* A class's __match_args__ as a metaclass's __getattribute__ or __getattr__ answers it (the
 * lookup MATCH_CLASS makes): names the rules allow, or an error (r consumed). */
static PyObject *match_args_answer(PyObject *obj, PyObject *name, PyObject *r)
{
	if (r && PyType_Check(obj) && pylayer_armed() && match_args_name(name) &&
	    pylayer_match_args_checked(r) < 0)
		Py_CLEAR(r);
	return r;
}

static PyObject *interface_getattro_plain(PyObject *obj, PyObject *name);

/* An object of a class made after the zygote answers __class__ with its type, whatever its
 * __getattribute__ says: isinstance() reads __class__ of an object whose type is not the class
 * asked, and a __getattribute__ answering str for it had the data stack's wrappers take the
 * object for a string (their compiled kernels check the type). 1 when *r is that answer. */
static int class_answered(PyObject *obj, PyObject *name, PyObject **r)
{
	static PyObject *str_class;

	if (!str_class && !(str_class = PyUnicode_InternFromString("__class__")))
		return 0; /* the lookup goes on: it checks nothing of its own */
	if ((name != str_class &&
	     (!PyUnicode_Check(name) || PyUnicode_Compare(name, str_class) != 0)) ||
	    sealed_class((PyObject *)Py_TYPE(obj)))
		return 0;
	*r = Py_NewRef((PyObject *)Py_TYPE(obj));
	return 1;
}

/* (obj is held: the lookup runs the code's __getattribute__ and properties before it calls
 * __getattr__ with obj, and C code may have handed obj over borrowed from a field that code
 * emptied: __getattr__ got a freed object) CPython's hook puts its plain dispatcher in the
 * slot of a class with __getattribute__ and no __getattr__, before it runs that
 * __getattribute__: the lookups the code made meanwhile, and every later one when it moved the
 * object to another class, went unchecked (a __getattribute__ of the code's answered numpy's
 * __array_interface__ with any address, a class pattern's __match_args__ any name). For such a
 * class the wrapped dispatcher goes into the slot first, and the lookup is made through it:
 * the hook is called only for classes with __getattr__, where it leaves the slot as it is. */
static PyObject *interface_getattro_hook(PyObject *obj, PyObject *name)
{
	static PyObject *str_getattr;
	PyTypeObject *t = Py_TYPE(obj);
	PyObject *r;
	int code;

	if (!str_getattr && !(str_getattr = PyUnicode_InternFromString("__getattr__")))
		return NULL;
	if (class_answered(obj, name, &r))
		return r;
	if (plain_getattro && !_PyType_Lookup(t, str_getattr)) {
		t->tp_getattro = interface_getattro_plain;
		return interface_getattro_plain(obj, name);
	}
	if (interface_name(name) && !interface_defined(obj, name))
		return interface_refused(name);
	Py_INCREF(obj);
	Py_INCREF(t);
	code = pyreentry_slot_begin(obj);
	r = getattr_hook(obj, name);
	pyreentry_slot_end(code);
	r = match_args_answer(obj, name, r);
	if (plain_getattro && t->tp_getattro == plain_getattro)
		t->tp_getattro = interface_getattro_plain;
	Py_DECREF(t);
	Py_DECREF(obj);
	return r;
}

static PyObject *interface_getattro_plain(PyObject *obj, PyObject *name)
{
	PyObject *r;
	int code;

	if (class_answered(obj, name, &r))
		return r;
	if (interface_name(name) && !interface_defined(obj, name))
		return interface_refused(name);
	Py_INCREF(obj);
	code = pyreentry_slot_begin(obj);
	r = plain_getattro(obj, name);
	pyreentry_slot_end(code);
	r = match_args_answer(obj, name, r);
	Py_DECREF(obj);
	return r;
}

/* A module's lookup calls its __getattr__ when the name is not there, holding the hook
 * borrowed from the module's dict: a hook whose own work removed it from the dict (a bound
 * dict.get whose key's __eq__ deleted it) was freed while it ran. It is held. */
static PyObject *interface_module_getattro(PyObject *m, PyObject *name)
{
	static PyObject *hook_name;
	PyObject *d, *hook, *r;

	if (interface_name(name))
		return interface_refused(name);
	if (!hook_name && !(hook_name = PyUnicode_InternFromString("__getattr__")))
		return NULL;
	d = PyModule_Check(m) ? PyModule_GetDict(m) : NULL;
	hook = d ? Py_XNewRef(PyDict_GetItemWithError(d, hook_name)) : NULL;
	if (!hook && PyErr_Occurred())
		return NULL;
	r = module_getattro_real(m, name);
	Py_XDECREF(hook);
	return r;
}

/* t's lookup, wrapped when it goes on after an AttributeError; and its comparison slot held
 * (pyreentry.c). */
static void interface_guard(PyTypeObject *t)
{
	pyreentry_class_guard(t);
	if (getattr_hook && t->tp_getattro == getattr_hook)
		t->tp_getattro = interface_getattro_hook;
	else if (plain_getattro && t->tp_getattro == plain_getattro)
		t->tp_getattro = interface_getattro_plain;
	else if (module_getattro_real && t->tp_getattro == module_getattro_real)
		t->tp_getattro = interface_module_getattro;
}

int pyguard_walk(PyTypeObject *t, int (*fn)(PyTypeObject *, void *), void *arg)
{
	PyObject *subs;
	int rc;

	if ((rc = fn(t, arg)) != 0)
		return rc < 0 ? -1 : 0;
	subs = PyObject_CallMethod((PyObject *)&PyType_Type, "__subclasses__", "O", t);
	if (!subs)
		return -1;
	for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(subs); i++)
		if (PyType_Check(PyList_GET_ITEM(subs, i)))
			rc = pyguard_walk((PyTypeObject *)PyList_GET_ITEM(subs, i), fn, arg);
	Py_DECREF(subs);
	return rc;
}

/* A C class's slot function replaced by a guard: its classes made before (a subclass copies
 * its base's slot functions when it is made: traceback's StackSummary, a list, kept list's
 * own slice assignment, V75b H2), and the wrappers in their dicts that call it (t.__getitem__,
 * made with the slot function it had, V75b H1), point at the guard too. */
static int slot_replaced(PyTypeObject *t, void *arg)
{
	void **pair = arg;
	void **tables[2] = {(void **)t->tp_as_mapping, (void **)t->tp_as_sequence};
	size_t sizes[2] = {sizeof(PyMappingMethods) / sizeof(void *),
	                   sizeof(PySequenceMethods) / sizeof(void *)};
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	for (int i = 0; i < 2; i++)
		for (size_t j = 0; tables[i] && j < sizes[i]; j++)
			if (tables[i][j] == pair[0])
				tables[i][j] = pair[1];
	while (t->tp_dict && PyDict_Next(t->tp_dict, &pos, &k, &v))
		if (PyObject_TypeCheck(v, &PyWrapperDescr_Type) &&
		    ((PyWrapperDescrObject *)v)->d_wrapped == pair[0])
			((PyWrapperDescrObject *)v)->d_wrapped = pair[1];
	PyType_Modified(t);
	return 0;
}

int pyguard_slot_everywhere(PyTypeObject *t, void *real, void *guard)
{
	void *pair[2] = {real, guard};

	return pyguard_walk(t, slot_replaced, pair);
}

static int replace_new(PyTypeObject *t, void *arg)
{
	newfunc *pair = arg;

	if (t->tp_new == pair[0]) {
		t->tp_new = pair[1];
		PyType_Modified(t);
	}
	return 0;
}

int pyguard_replace_new(PyTypeObject *t, newfunc old, newfunc new)
{
	newfunc pair[2] = {old, new};

	return pyguard_walk(t, replace_new, pair);
}

/* t and the classes beneath it, through the subclass lists CPython keeps (weak references by
 * address): nothing is allocated, so a walk run after a class was changed cannot fail for
 * memory (a list of the subclasses could, with the change made). -1 only past any depth a
 * hierarchy reaches. */
static int interface_guard_walk(PyTypeObject *t, int depth)
{
	PyObject *key, *ref;
	Py_ssize_t pos = 0;

	if (depth > 10000)
		return -1;
	interface_guard(t);
	if (!t->tp_subclasses || !PyDict_Check(t->tp_subclasses))
		return 0;
	while (PyDict_Next(t->tp_subclasses, &pos, &key, &ref)) {
		PyObject *sub = PyWeakref_Check(ref) ? PyWeakref_GET_OBJECT(ref) : NULL;
		if (sub && PyType_Check(sub) &&
		    interface_guard_walk((PyTypeObject *)sub, depth + 1) < 0)
			return -1;
	}
	return 0;
}

static int interface_guard_tree(PyTypeObject *t)
{
	return interface_guard_walk(t, 0);
}

static int early_guard_init(void);
static int mro_init(void);

/* A class of object's whose method name is fn (object.__repr__, which takes no name: its
 * lookups fail), made to read the lookup CPython gives such a class. */
static PyObject *probe_class(const char *name, PyObject *fn)
{
	PyObject *ns = PyDict_New(), *cls = NULL;

	if (ns && PyDict_SetItemString(ns, name, fn) == 0)
		cls = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)O", "safepy_probe",
		                            (PyObject *)&PyBaseObject_Type, ns);
	Py_XDECREF(ns);
	return cls;
}

/* slot_tp_getattr_hook (the lookup of a class with __getattr__), slot_tp_getattro (the one its
 * hook leaves in the slot of a class with __getattribute__ and no __getattr__ at its first
 * lookup), module_getattro, and object's two refusals. */
static int interface_init(void)
{
	PyObject *fn = NULL, *cls = NULL, *obj = NULL, *v;
	int rc = -1;

	str_interface = PyUnicode_InternFromString("__array_interface__");
	str_struct = PyUnicode_InternFromString("__array_struct__");
	str_match_args = PyUnicode_InternFromString("__match_args__");
	if (!str_interface || !str_struct || !str_match_args || PyType_Ready(&refusal_type) < 0 ||
	    early_guard_init() < 0 || mro_init() < 0)
		goto out;
	fn = PyObject_GetAttrString((PyObject *)&PyBaseObject_Type, "__repr__");
	if (!fn || !(cls = probe_class("__getattr__", fn)))
		goto out;
	getattr_hook = ((PyTypeObject *)cls)->tp_getattro;
	module_getattro_real = PyModule_Type.tp_getattro;
	Py_CLEAR(cls);
	if (!(cls = probe_class("__getattribute__", fn)) || !(obj = PyObject_CallNoArgs(cls)))
		goto out;
	v = PyObject_GetAttrString(obj, "x");
	Py_XDECREF(v);
	PyErr_Clear();
	plain_getattro = ((PyTypeObject *)cls)->tp_getattro;
	if (!getattr_hook || getattr_hook == PyObject_GenericGetAttr || !module_getattro_real ||
	    !plain_getattro || plain_getattro == getattr_hook ||
	    plain_getattro == PyObject_GenericGetAttr) {
		PyErr_SetString(PyExc_RuntimeError, "no attribute hook found for classes");
		goto out;
	}
	PyModule_Type.tp_getattro = interface_module_getattro;
	PyType_Modified(&PyModule_Type);
	for (int i = 0; i < 2; i++) {
		refusal_object *r = PyObject_New(refusal_object, &refusal_type);
		if (!r)
			goto out;
		r->name = Py_NewRef(i ? str_struct : str_interface);
		rc = PyDict_SetItem(PyBaseObject_Type.tp_dict, r->name, (PyObject *)r);
		Py_DECREF(r);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	PyType_Modified(&PyBaseObject_Type);
	rc = 0;
out:
	Py_XDECREF(fn);
	Py_XDECREF(cls);
	Py_XDECREF(obj);
	return rc;
}

static newfunc real_type_new;      /* CPython's type.__new__ */
static ternaryfunc real_type_call; /* CPython's type.__call__ */

/* Calling a metaclass with a class's name, bases and namespace: the class it makes is being
 * made until the call returns (being_made). Every other call of a class goes straight on. */
static PyObject *type_call_checked(PyObject *callee, PyObject *args, PyObject *kw)
{
	PyObject *r;
	int slot = n_constructing;

	if (!PyType_FastSubclass((PyTypeObject *)callee, Py_TPFLAGS_TYPE_SUBCLASS) ||
	    !PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 3 || slot >= MAKING_MAX)
		return real_type_call(callee, args, kw);
	constructing[slot] = NULL;
	n_constructing = slot + 1;
	r = real_type_call(callee, args, kw);
	n_constructing = slot;
	return r;
}

/* ---- a class guarded before its __set_name__ and __init_subclass__ run ----------------------
 * type() runs the code's __set_name__ of each value and the bases' __init_subclass__ before it
 * returns the class it made, and this file's guard of the class (its held slots) came only
 * after: code in those hooks used the class with CPython's own slots (a __get__ called
 * borrowed). The namespace type() is given starts with an entry of ours whose __set_name__,
 * run before every other (in the namespace's order), guards the class and takes the entry out
 * of it again. */

static PyObject *early_guard_set_name(PyObject *self, PyObject *args)
{
	PyObject *owner, *name;

	(void)self;
	if (!PyArg_ParseTuple(args, "OO:__set_name__", &owner, &name))
		return NULL;
	if (PyType_Check(owner) && name == early_guard_key) {
		PyTypeObject *t = (PyTypeObject *)owner;
		if (t->tp_dict && PyDict_DelItem(t->tp_dict, name) < 0)
			guard_failed_closed(); /* the class is made: it is guarded, or nothing runs */
		PyType_Modified(t);
		interface_guard(t);
	}
	Py_RETURN_NONE;
}

static PyMethodDef early_guard_methods[] = {
    {"__set_name__", early_guard_set_name, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static int early_guard_init(void)
{
	PyType_Slot slots[] = {{Py_tp_methods, early_guard_methods}, {0, NULL}};
	PyType_Spec spec = {"sandbox.ClassGuard", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT, slots};
	PyObject *t = PyType_FromSpec(&spec);

	early_guard_key = PyUnicode_InternFromString("__sandbox_class_guard__");
	early_guard = t ? PyObject_CallNoArgs(t) : NULL;
	Py_XDECREF(t);
	return early_guard && early_guard_key ? 0 : -1;
}

/* ---- a metaclass's own mro() --------------------------------------------------------------
 * type() calls the metaclass's mro() with the class half made, before anything of the
 * sandbox's runs for it (and again when a class a failed type() left half made is readied at
 * its next use): it could take the guard's entry out of the class's dict. No class of
 * CPython's or the libraries' defines one; a class made or changed in the sandbox may not
 * (defined in its namespace, set or deleted later: a metaclass finds mro through its bases, a
 * mixin's among them), and a class whose metaclass has one anyway is refused before it is
 * made. */
static int mro_refused(const char *whose)
{
	PyErr_Format(PyExc_TypeError,
	             "a metaclass's own mro() is not run in the sandbox (%.100s would have one): "
	             "classes get the usual order of their bases",
	             whose ? whose : "?");
	return -1;
}

/* Does a class of metaclass m get its MRO from anything but type.mro? */
static int mro_of_its_own(PyTypeObject *m)
{
	return !type_mro || _PyType_Lookup(m, str_mro) != type_mro;
}

static int mro_init(void)
{
	str_mro = PyUnicode_InternFromString("mro");
	type_mro = str_mro ? PyDict_GetItemWithError(PyType_Type.tp_dict, str_mro) : NULL;
	Py_XINCREF(type_mro);
	return type_mro ? 0 : -1;
}

/* A name a class the code makes may not give itself, in its namespace or as a slot (a member
 * descriptor of the class): numpy's interface names, the guard's entry, a metaclass's mro, and
 * __class__, which isinstance() reads of an object whose type is not the class asked (a
 * property or a slot answering str made the checks of the data stack's wrappers, which ask
 * isinstance(), take an object for what the compiled code, which checks its type, does not).
 * 0, or -1 with the error. */
static int class_name_refused(PyObject *k, PyObject *cls_name)
{
	if (PyUnicode_Compare(k, early_guard_key) == 0) {
		PyErr_Format(PyExc_TypeError, "a class may not name %U: the sandbox uses that name",
		             early_guard_key);
		return -1;
	}
	if (interface_name(k)) {
		interface_refused(k);
		return -1;
	}
	if (PyUnicode_Compare(k, str_mro) == 0)
		return mro_refused(PyUnicode_Check(cls_name) ? PyUnicode_AsUTF8(cls_name) : NULL);
	if (PyUnicode_CompareWithASCIIString(k, "__class__") == 0) {
		PyErr_SetString(
		    PyExc_TypeError,
		    "a class may not define __class__ in the sandbox (isinstance() would "
		    "take its objects for another class's)");
		return -1;
	}
	return 0;
}

/* A class's __slots__: a str, or an exact tuple, list or dict of them (type() would iterate
 * anything else, running the code's iterator while it makes the class), none a name
 * class_name_refused refuses. */
static int slots_checked(PyObject *slots, PyObject *cls_name)
{
	PyObject *key, *v;
	Py_ssize_t pos = 0;

	if (PyUnicode_CheckExact(slots))
		return class_name_refused(slots, cls_name);
	if (PyDict_CheckExact(slots)) {
		while (PyDict_Next(slots, &pos, &key, &v))
			if (!PyUnicode_CheckExact(key) || class_name_refused(key, cls_name) < 0)
				goto plain;
		return 0;
	}
	if (!PyTuple_CheckExact(slots) && !PyList_CheckExact(slots))
		goto plain;
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(slots); i++) {
		key = PySequence_Fast_GET_ITEM(slots, i);
		if (!PyUnicode_CheckExact(key) || class_name_refused(key, cls_name) < 0)
			goto plain;
	}
	return 0;
plain:
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError,
		                "a class's __slots__ are a str, or a tuple, list or "
		                "dict of str, in the sandbox");
	return -1;
}

/* args of type(name, bases, ns) with ns replaced by a dict of ours: the guard's entry first,
 * then ns's entries as its storage holds them, each name a plain str and none of numpy's
 * interface names (refused before the class exists). type() would copy a dict subclass through
 * its keys() and __getitem__, the code's: they could replace or drop the guard's entry, or give
 * names never checked. args itself when the guard is not armed (a new reference either way;
 * NULL with an error). */
static PyObject *early_guarded_args(PyObject *args)
{
	PyObject *ns, *ns2, *k, *v, *r;
	Py_ssize_t pos = 0;

	if (!early_guard || !pylayer_armed() || !PyTuple_Check(args) ||
	    PyTuple_GET_SIZE(args) != 3 || !PyDict_Check(PyTuple_GET_ITEM(args, 2)))
		return Py_NewRef(args);
	ns = PyTuple_GET_ITEM(args, 2);
	ns2 = PyDict_New();
	if (!ns2 || PyDict_SetItem(ns2, early_guard_key, early_guard) < 0)
		goto fail;
	/* Plain str keys only, and no code of the user's runs while the entries are copied. A key
	 * of a str subclass hashing as '__repr__' ran its __eq__ inside every lookup of that name
	 * in the class, where CPython's slot functions hold the object they were called for
	 * borrowed: the __eq__ freed it, and the method ran on a fake object made in its memory.
	 * (Names set later are plain already: type's setattr copies a subclass's.) */
	while (PyDict_Next(ns, &pos, &k, &v)) {
		if (!PyUnicode_CheckExact(k)) {
			PyErr_Format(PyExc_TypeError,
			             "a class's attribute names must be plain str, not %.100s",
			             Py_TYPE(k)->tp_name);
			goto fail;
		}
		if (class_name_refused(k, PyTuple_GET_ITEM(args, 0)) < 0)
			goto fail;
		if (match_args_name(k) && pylayer_match_args_checked(v) < 0)
			goto fail;
		if (PyUnicode_CompareWithASCIIString(k, "__slots__") == 0 &&
		    slots_checked(v, PyTuple_GET_ITEM(args, 0)) < 0)
			goto fail;
		if (PyDict_SetItem(ns2, k, v) < 0)
			goto fail;
	}
	if (pyreentry_array_class_planned(PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1),
	                                  ns2) < 0)
		goto fail;
	r = PyTuple_Pack(3, PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1), ns2);
	Py_DECREF(ns2);
	return r;
fail:
	Py_XDECREF(ns2);
	return NULL;
}

/* type() failed: the class it made, if it got that far, was left in the namespace's
 * __classcell__, where the class's methods (super(), __class__) hand it to the code, half made
 * (readied again at its next use, past every check made before type()) or never guarded. The
 * cell is emptied: those methods fail as they do when a class body's cell was never set. */
static void half_made_dropped(PyObject *ns)
{
	PyObject *cell, *et, *ev, *tb;

	/* type()'s error stays the call's (a lookup that cannot allocate would clear it) */
	PyErr_Fetch(&et, &ev, &tb);
	cell = PyDict_GetItemString(ns, "__classcell__");
	if (cell && PyCell_Check(cell) && PyCell_GET(cell))
		(void)PyCell_Set(cell, NULL);
	PyErr_Clear();
	PyErr_Restore(et, ev, tb);
}

/* Is a class that still holds the guard's entry among the subclasses of bases (a tuple: the
 * classes a class made with them is listed under; object's when it is empty)? Read without
 * allocating or running code (an error is pending). */
static int half_made_reachable(PyObject *bases)
{
	Py_ssize_t n = PyTuple_Check(bases) ? PyTuple_GET_SIZE(bases) : 0;

	for (Py_ssize_t i = 0; i < (n ? n : 1); i++) {
		PyObject *b = n ? PyTuple_GET_ITEM(bases, i) : (PyObject *)&PyBaseObject_Type;
		PyObject *subs = PyType_Check(b) ? ((PyTypeObject *)b)->tp_subclasses : NULL;
		PyObject *key, *ref;
		Py_ssize_t pos = 0;
		if (!subs || !PyDict_Check(subs))
			continue;
		while (PyDict_Next(subs, &pos, &key, &ref)) {
			PyObject *sub = PyWeakref_Check(ref) ? PyWeakref_GET_OBJECT(ref) : NULL;
			PyObject *d =
			    sub && PyType_Check(sub) ? ((PyTypeObject *)sub)->tp_dict : NULL;
			if (d && PyDict_Check(d) &&
			    _PyDict_GetItem_KnownHash(d, early_guard_key,
			                              ((PyASCIIObject *)early_guard_key)->hash) ==
			        early_guard)
				return 1;
		}
	}
	return 0;
}

/* Classes made later (matplotlib makes one of a backend module's variables when the backend
 * is switched): held as they are made. */
static PyObject *type_new_checked(PyTypeObject *meta, PyObject *args, PyObject *kw)
{
	PyObject *t, *ns, *guarded;
	PyTypeObject *winner = NULL;
	int depth = type_new_depth;

	if (pylayer_armed() && guard_headroom("making a class") < 0)
		return NULL;
	ns = PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 3 ? PyTuple_GET_ITEM(args, 2) : NULL;
	/* type.__new__ hands the call to the bases' most derived metaclass when that one has a
	 * __new__ of its own (the user's, or a library's, which comes back here): whatever that
	 * gives is not made here. A __new__ of the code's that returned an existing class (a
	 * library's) had it recorded as made in this call, and library frames could then change
	 * it for the code. */
	if (ns && PyTuple_Check(PyTuple_GET_ITEM(args, 1))) {
		winner = _PyType_CalculateMetaclass(meta, PyTuple_GET_ITEM(args, 1));
		if (!winner)
			PyErr_Clear(); /* type.__new__ raises it again */
		else if (winner != meta && winner->tp_new != real_type_new)
			return real_type_new(meta, args, kw);
	}
	/* Refused before the class exists: its names, then a metaclass's own mro(). */
	guarded = early_guarded_args(args);
	if (guarded && winner && pylayer_armed() && mro_of_its_own(winner)) {
		mro_refused(winner->tp_name);
		Py_CLEAR(guarded);
	}
	if (!guarded)
		return NULL;
	if (depth < MAKING_MAX)
		type_new_args[depth] = args;
	type_new_depth++;
	t = real_type_new(meta, guarded, kw);
	/* type() failed with the class readied, its slots in place, and the entry still in it (an
	 * allocation between the two failed): the class is alive, in its bases' subclass lists,
	 * and never guarded. (One that failed before it was readied, an inconsistent MRO, is in
	 * no list and is freed with its cycle.) The lists are read whatever the entry's count did:
	 * the code can free another holder of it during the call. */
	if (!t && pylayer_armed() && early_guard &&
	    half_made_reachable(PyTuple_GET_ITEM(guarded, 1)))
		guard_failed_closed();
	if (!t && guarded != args)
		half_made_dropped(PyTuple_GET_ITEM(guarded, 2));
	Py_DECREF(guarded);
	type_new_depth = depth;
	if (t && n_constructing > 0 && !constructing[n_constructing - 1])
		constructing[n_constructing - 1] = t;

	/* The class is made and guarded: a check after it that cannot be made (memory ran out)
	 * ends the process, as the class stays reachable through its bases whatever is
	 * returned. The array rule's refusal, made before type() already, is not expected here. */
	if (t && PyType_Check(t) && held_values_guard((PyTypeObject *)t) < 0)
		guard_failed_closed();
	if (t && PyType_Check(t) && pyreentry_array_class_checked((PyTypeObject *)t) < 0)
		guard_failed_closed();
	if (t && PyType_Check(t) && pylayer_armed() && !pyguard_for_loading_module() &&
	    fresh_add(t) < 0)
		guard_failed_closed();
	if (t && PyType_Check(t))
		interface_guard((PyTypeObject *)t);
	return t;
}

/* t and every class beneath it, once each (seen: their addresses). */
static int held_values_sweep(PyTypeObject *t, PyObject *seen, int depth)
{
	PyObject *id = PyLong_FromVoidPtr(t), *subs;
	int rc;

	if (!id)
		return -1;
	rc = PySet_Contains(seen, id);
	if (rc == 0)
		rc = PySet_Add(seen, id);
	Py_DECREF(id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (t->tp_new == real_type_new)
		t->tp_new = type_new_checked;
	interface_guard(t);
	if (held_values_guard(t) < 0 || depth > 256)
		return depth > 256 ? 0 : -1;
	subs = PyObject_CallMethod((PyObject *)&PyType_Type, "__subclasses__", "O", t);
	if (!subs)
		return -1;
	for (Py_ssize_t i = 0; rc == 0 && PyList_Check(subs) && i < PyList_GET_SIZE(subs); i++)
		if (PyType_Check(PyList_GET_ITEM(subs, i)))
			rc = held_values_sweep((PyTypeObject *)PyList_GET_ITEM(subs, i), seen,
			                       depth + 1);
	Py_DECREF(subs);
	return rc;
}

/* The heap types among seen (the addresses of every class), as the sealed ones. */
static int sealed_record(PyObject *seen)
{
	PyObject *it = PyObject_GetIter(seen), *id;

	if (!it)
		return -1;
	sealed = PyMem_Calloc((size_t)PySet_GET_SIZE(seen) + 1, sizeof(*sealed));
	while (sealed && (id = PyIter_Next(it))) {
		PyObject *t = PyLong_AsVoidPtr(id);
		Py_DECREF(id);
		/* Held for good: a class freed later must not leave its address to one of the
		 * user's. */
		if (t && PyType_Check(t) && (((PyTypeObject *)t)->tp_flags & Py_TPFLAGS_HEAPTYPE))
			sealed[n_sealed++] = Py_NewRef(t);
	}
	Py_DECREF(it);
	if (!sealed)
		return PyErr_NoMemory(), -1;
	if (PyErr_Occurred())
		return -1;
	qsort(sealed, n_sealed, sizeof(*sealed), ptr_cmp);
	return 0;
}

/* Every class there is (the zygote's imports are done), and type.__new__ from here on. */
static int held_values_install(void)
{
	PyObject *seen = PySet_New(NULL);
	int rc;

	if (!seen)
		return -1;
	if (interface_init() < 0)
		return -1;
	real_type_new = PyType_Type.tp_new;
	real_type_call = PyType_Type.tp_call;
	PyType_Type.tp_call = type_call_checked;
	real_type_dealloc = PyType_Type.tp_dealloc;
	PyType_Type.tp_dealloc = type_dealloc_checked;
	rc = held_values_sweep(&PyBaseObject_Type, seen, 0);
	if (rc == 0)
		rc = sealed_record(seen);
	Py_DECREF(seen);
	return rc;
}

/* ---- a class's dict behind its mappingproxy -------------------------------------------- */

/* A mappingproxy passes comparisons and | to the dict it wraps: dict answers NotImplemented to
 * an object of the user's, whose reflected method (__eq__, __ror__) then got the dict itself.
 * type.__dict__ is such a proxy: the user's code held int's or dict's own dict, changed what
 * every dict does, and crashed the worker by deleting a method the type cache still pointed
 * to; a proxy over a mapping of the user's, compared with one, passed it on the same way. Both
 * sides are now seen through every proxy, a dict found there as a copy. */

/* CPython 3.11's mappingproxyobject (descrobject.c), which no header declares. */
typedef struct {
	PyObject_HEAD PyObject *mapping;
} ProxyLayout;

/* What a comparison or | may see of v: a dict behind any number of proxies as a copy (a plain
 * dict, even of a subclass), another mapping behind them as it is (it is the user's own), and
 * anything else as it is. The slots the proxy had are never called: they unwrap to the dict
 * itself. New reference. */
static PyObject *proxy_seen(PyObject *v)
{
	PyObject *m = v;

	for (int depth = 0; PyObject_TypeCheck(m, &PyDictProxy_Type) && depth < 64; depth++)
		m = ((ProxyLayout *)m)->mapping;
	if (m != v && PyDict_Check(m))
		return PyDict_Copy(m);
	return Py_NewRef(m);
}

static PyObject *proxy_richcompare_checked(PyObject *v, PyObject *w, int op)
{
	PyObject *a = proxy_seen(v), *b = a ? proxy_seen(w) : NULL, *r;

	r = a && b ? PyObject_RichCompare(a, b, op) : NULL;
	Py_XDECREF(a);
	Py_XDECREF(b);
	return r;
}

static PyObject *proxy_or_checked(PyObject *left, PyObject *right)
{
	PyObject *l = proxy_seen(left), *r = l ? proxy_seen(right) : NULL, *res;

	res = l && r ? PyNumber_Or(l, r) : NULL;
	Py_XDECREF(l);
	Py_XDECREF(r);
	return res;
}

/* The slots, and the methods in the type's dict that call the old ones directly (they go:
 * object's comparisons and the operators remain). */
static int mappingproxy_guard_install(void)
{
	static const char *const direct[] = {"__eq__", "__ne__", "__lt__",  "__le__", "__gt__",
	                                     "__ge__", "__or__", "__ror__", NULL};
	PyObject *d = PyDictProxy_Type.tp_dict;

	if (!d || !PyDictProxy_Type.tp_as_number)
		return -1;
	PyDictProxy_Type.tp_richcompare = proxy_richcompare_checked;
	PyDictProxy_Type.tp_as_number->nb_or = proxy_or_checked;
	for (const char *const *n = direct; *n; n++)
		if (pyguard_str_item(d, *n) && PyDict_DelItemString(d, *n) < 0)
			return -1;
	PyType_Modified(&PyDictProxy_Type);
	return 0;
}

/* ---- entry points ------------------------------------------------------------------------ */

/* ---- generic aliases' substitution ----------------------------------------------------------
 * CPython substitutes a generic alias's parameters (list[T][int], (int | T)[str]) in C, reading
 * __typing_subst__, __typing_is_unpacked_typevartuple__, __typing_prepare_subst__,
 * __typing_unpacked_tuple_args__ and __parameters__ of the alias's arguments and of what it is
 * given by name, and trusts their answers: an argument whose class's __getattr__ said it was
 * unpacked had its substitution spliced in as a tuple, unchecked (a complex read as a tuple
 * whose item was any address: a forged bytearray over all memory, V74b H1); one that answered
 * only after the alias's parameters were found was looked up at index -1; one whose lookup
 * raised left a NULL used. A substitution runs only on what answers those names as the
 * libraries do: classes (of type or a library's metaclass) with none of them defined by a
 * class of the code's; instances of the libraries' classes, looked up as objects are or by
 * typing's own __getattr__, with none of them in their own namespace; generic aliases and
 * unions of such; typing's unpacking only of a TypeVarTuple or a tuple. Anything else is
 * refused (TypeError) before CPython reads a name. */
static binaryfunc alias_subscript_real[2];
static PyTypeObject *union_type;

static int library_typing_class(PyTypeObject *c)
{
	PyObject *m;

	if (!(c->tp_flags & Py_TPFLAGS_HEAPTYPE))
		return 1;
	m = sealed_class((PyObject *)c) ? pyguard_str_item(c->tp_dict, "__module__") : NULL;
	return m && PyUnicode_Check(m) && PyUnicode_CompareWithASCIIString(m, "typing") == 0;
}

/* Does the namespace d define a name CPython's substitution reads? */
static int typing_names_in(PyObject *d)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	while (d && PyDict_Check(d) && PyDict_Next(d, &pos, &k, &v)) {
		/* (a key of a str class of the code's hashes and compares as it says: any name) */
		const char *n = PyUnicode_CheckExact(k) ? PyUnicode_AsUTF8(k) : NULL;
		if (!n) {
			PyErr_Clear();
			return 1;
		}
		if (strncmp(n, "__typing_", 9) == 0)
			return 1;
	}
	return 0;
}

/* Do t's classes define none of those names but the libraries' (classes the zygote had)? */
static int names_plain(PyTypeObject *t)
{
	PyObject *mro = t->tp_mro;

	if (!mro || !PyTuple_Check(mro))
		return 0;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if ((c->tp_flags & Py_TPFLAGS_HEAPTYPE) && !sealed_class((PyObject *)c) &&
		    typing_names_in(c->tp_dict))
			return 0;
	}
	return 1;
}

/* Are the lookups on t's objects the libraries': names_plain, and the lookup hook an
 * object's (or a type's: plain), or typing's __getattr__? */
static int lookups_plain(PyTypeObject *t, getattrofunc plain)
{
	PyObject *mro = t->tp_mro;

	if (!names_plain(t))
		return 0;
	if (t->tp_getattro == plain)
		return 1;
	if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE))
		return 0;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if (c->tp_flags & Py_TPFLAGS_HEAPTYPE &&
		    (pyguard_str_item(c->tp_dict, "__getattr__") ||
		     pyguard_str_item(c->tp_dict, "__getattribute__")) &&
		    !library_typing_class(c))
			return 0;
	}
	return 1;
}

static int substitutable(PyObject *o, int depth);

static int all_substitutable(PyObject *t, int depth)
{
	if (!t || !PyTuple_Check(t))
		return t == NULL;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
		if (!substitutable(PyTuple_GET_ITEM(t, i), depth))
			return 0;
	return 1;
}

/* An attribute of a C alias that answers it itself (its origin, arguments, parameters). */
static int alias_part_substitutable(PyObject *o, const char *name, int tuple, int depth)
{
	PyObject *v = PyObject_GetAttrString(o, name);
	int ok;

	if (!v) {
		PyErr_Clear();
		return 0;
	}
	ok = tuple ? all_substitutable(v, depth) : substitutable(v, depth);
	Py_DECREF(v);
	return ok;
}

static int substitutable(PyObject *o, int depth)
{
	PyTypeObject *t = Py_TYPE(o);
	PyObject **dp;

	if (depth > 32)
		return 0;
	/* a class: looked up by its metaclass, a library's (enum's __getattr__ answers no dunder
	 * name), in its own namespaces */
	if (PyType_Check(o))
		return (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE) || sealed_class((PyObject *)t)) &&
		       names_plain(t) && names_plain((PyTypeObject *)o);
	if (t == &Py_GenericAliasType)
		return alias_part_substitutable(o, "__origin__", 0, depth + 1) &&
		       alias_part_substitutable(o, "__args__", 1, depth + 1);
	if (t == union_type)
		return alias_part_substitutable(o, "__args__", 1, depth + 1);
	if (t == &PyList_Type || t == &PyTuple_Type)
		return 1; /* (a ParamSpec's arguments: each is checked by typing's own code) */
	if ((t->tp_flags & Py_TPFLAGS_HEAPTYPE) && !sealed_class((PyObject *)t))
		return 0; /* an object of the code's: nothing a type expression needs */
	if (!lookups_plain(t, PyObject_GenericGetAttr))
		return 0;
	dp = _PyObject_GetDictPtr(o);
	if (dp && *dp && typing_names_in(*dp))
		return 0;
	/* typing's unpacking (*tuple[...], Unpack[Ts]): only of a TypeVarTuple or a tuple's alias
	 * (another made CPython use a NULL its lookup left, or splice what is no tuple) */
	if (strcmp(t->tp_name, "_UnpackGenericAlias") == 0 && library_typing_class(t)) {
		PyObject *args = PyObject_GetAttrString(o, "__args__"), *a, *origin;
		int ok = 0;
		if (args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1) {
			a = PyTuple_GET_ITEM(args, 0);
			if (strcmp(Py_TYPE(a)->tp_name, "TypeVarTuple") == 0 &&
			    library_typing_class(Py_TYPE(a))) {
				ok = 1;
			} else if ((origin = PyObject_GetAttrString(a, "__origin__"))) {
				ok = origin == (PyObject *)&PyTuple_Type;
				Py_DECREF(origin);
			}
		}
		Py_XDECREF(args);
		PyErr_Clear();
		return ok;
	}
	return 1;
}

static PyObject *alias_subscript(int k, PyObject *self, PyObject *key)
{
	int ok;

	if (!pylayer_armed())
		return alias_subscript_real[k](self, key);
	ok = alias_part_substitutable(self, "__args__", 1, 0) &&
	     alias_part_substitutable(self, "__parameters__", 1, 0) &&
	     (PyTuple_Check(key) ? all_substitutable(key, 0) : substitutable(key, 0));
	if (!ok) {
		PyErr_SetString(PyExc_TypeError,
		                "a generic alias is substituted in the sandbox only with types, "
		                "typing's variables and forms, and aliases of them");
		return NULL;
	}
	return alias_subscript_real[k](self, key);
}

static PyObject *generic_alias_subscript(PyObject *self, PyObject *key)
{
	return alias_subscript(0, self, key);
}

static PyObject *union_subscript(PyObject *self, PyObject *key)
{
	return alias_subscript(1, self, key);
}

static int aliases_guard_install(void)
{
	PyObject *u = PyNumber_Or((PyObject *)&PyLong_Type, (PyObject *)&PyUnicode_Type);

	if (!u)
		return -1;
	union_type = Py_TYPE(u);
	Py_DECREF(u);
	if (!Py_GenericAliasType.tp_as_mapping ||
	    !Py_GenericAliasType.tp_as_mapping->mp_subscript || !union_type->tp_as_mapping ||
	    !union_type->tp_as_mapping->mp_subscript) {
		PyErr_SetString(PyExc_RuntimeError, "generic aliases are not as known");
		return -1;
	}
	if (Py_GenericAliasType.tp_as_mapping->mp_subscript != generic_alias_subscript) {
		alias_subscript_real[0] = Py_GenericAliasType.tp_as_mapping->mp_subscript;
		if (pyguard_slot_everywhere(&Py_GenericAliasType, (void *)alias_subscript_real[0],
		                            (void *)generic_alias_subscript) < 0)
			return -1;
	}
	if (union_type->tp_as_mapping->mp_subscript != union_subscript) {
		alias_subscript_real[1] = union_type->tp_as_mapping->mp_subscript;
		if (pyguard_slot_everywhere(union_type, (void *)alias_subscript_real[1],
		                            (void *)union_subscript) < 0)
			return -1;
	}
	return 0;
}

int pyguard_install(void)
{
	str_builtins = PyUnicode_InternFromString("__builtins__");
	str_name = PyUnicode_InternFromString("__name__");
	if (!str_builtins || !str_name || PyType_Ready(&guard_data_type) < 0 ||
	    PyType_Ready(&guard_method_type) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (!rules[i].type)
			rules[i].type = (PyTypeObject *)PyExc_AttributeError;
		if (guard_install(&rules[i]) < 0)
			return -1;
	}
	if (classes_guard_install() < 0 || held_values_install() < 0 ||
	    mappingproxy_guard_install() < 0 || sqlite_guard_install() < 0 ||
	    aliases_guard_install() < 0)
		return -1;
	return evaluators_install() < 0 ? -1 : getframe_install();
}

void pyguard_user(PyObject *ns, PyObject *module)
{
	user_ns = ns;
	user_module = module;
}

PyObject *pyguard_user_module(void)
{
	return user_module;
}
