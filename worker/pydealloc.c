/* pydealloc.c - a long chain of objects is freed, hashed or read without a C frame for each
 * link (nested reads: below the deallocators).
 *
 * Freeing an object frees what it holds, one C call inside the other. CPython's containers
 * (list, tuple, dict, frames, functions, subclasses' instances) bracket their deallocators with
 * its trashcan: past a depth of 50 an object is put aside and freed when the stack has unwound.
 * In CPython 3.11.2 many iterators and wrappers have no trashcan: a chain of a million filter()
 * or enumerate() objects (x = filter(None, x) in a loop), properties, classmethods, mapping
 * proxies, bound methods, deques, default dicts, slices or itertools objects freed one C frame
 * per link and overflowed the worker's stack (SIGSEGV).
 *
 * pydealloc_init, once in the zygote, brackets each such type's deallocator with the trashcan,
 * as CPython's own are: the object is untracked by the collector first (the trashcan keeps its
 * list of deferred objects in the collector's header), the real deallocator runs inside the
 * bracket, tracked again just before it (some deallocators untrack with CPython's unchecked
 * macro, which needs a tracked object; nothing can collect in between). An instance of a
 * subclass is freed by CPython's subtype_dealloc, which has its own bracket and then calls the
 * base's deallocator: that goes straight to the real one (the trashcan is for the exact type
 * only, or an object would be deferred half freed). */
#include "interp_internal.h"

/* The types, as Python expressions over the modules imported below. */
static const char *const deep_types[] = {
    "filter",
    "enumerate",
    "staticmethod",
    "classmethod",
    "property",
    "slice",
    "types.MappingProxyType",
    "types.MethodType",
    "type(iter(int, 0))",
    "operator.itemgetter",
    "collections.deque",
    "type(iter(collections.deque()))",
    "collections.defaultdict",
    "type(functools.cmp_to_key(int)(0))",
    "itertools.islice",
    "itertools.takewhile",
    "itertools.dropwhile",
    "itertools.starmap",
    "itertools.accumulate",
    "itertools.compress",
    "itertools.filterfalse",
    "itertools.cycle",
    "itertools.pairwise",
    "itertools.groupby",
    "type(next(itertools.groupby([0]))[1])",
    "itertools.zip_longest",
    "itertools.repeat",
    "itertools.chain",
    "functools.partial",
    "types.GenericAlias",
    "super",
    "map",
    "type(_ag().asend(None))",
    "type(anext(_ag(), None))",
    "type(collections.namedtuple('_P', 'a').a)",
    "json.scanner.c_make_scanner",
    "json.encoder.c_make_encoder",
    "type(csv.reader([]))",
    NULL,
};

#define DEEP_MAX 48

static destructor real_dealloc[DEEP_MAX];

void pydealloc_bracket(PyObject *op, destructor self, destructor real)
{
	if (Py_TYPE(op)->tp_dealloc != self) {
		real(op); /* a subclass's instance, from subtype_dealloc */
		return;
	}
	PyObject_GC_UnTrack(op);
	Py_TRASHCAN_BEGIN(op, self) PyObject_GC_Track(op);
	real(op);
	Py_TRASHCAN_END
}

#define DEEP(i)                                                                                    \
	static void deep_##i(PyObject *op)                                                         \
	{                                                                                          \
		pydealloc_bracket(op, deep_##i, real_dealloc[i]);                                  \
	}
DEEP(0)
DEEP(1)
DEEP(2)
DEEP(3)
DEEP(4)
DEEP(5)
DEEP(6)
DEEP(7)
DEEP(8)
DEEP(9)
DEEP(10)
DEEP(11)
DEEP(12)
DEEP(13)
DEEP(14)
DEEP(15)
DEEP(16)
DEEP(17)
DEEP(18)
DEEP(19)
DEEP(20)
DEEP(21)
DEEP(22)
DEEP(23)
DEEP(24)
DEEP(25)
DEEP(26)
DEEP(27)
DEEP(28)
DEEP(29)
DEEP(30)
DEEP(31)
DEEP(32)
DEEP(33)
DEEP(34)
DEEP(35)
DEEP(36)
DEEP(37)
DEEP(38)
DEEP(39)
DEEP(40)
DEEP(41)
DEEP(42)
DEEP(43)
DEEP(44)
DEEP(45)
DEEP(46)
DEEP(47)

static const destructor deep_slots[DEEP_MAX] = {
    deep_0,  deep_1,  deep_2,  deep_3,  deep_4,  deep_5,  deep_6,  deep_7,
    deep_8,  deep_9,  deep_10, deep_11, deep_12, deep_13, deep_14, deep_15,
    deep_16, deep_17, deep_18, deep_19, deep_20, deep_21, deep_22, deep_23,
    deep_24, deep_25, deep_26, deep_27, deep_28, deep_29, deep_30, deep_31,
    deep_32, deep_33, deep_34, deep_35, deep_36, deep_37, deep_38, deep_39,
    deep_40, deep_41, deep_42, deep_43, deep_44, deep_45, deep_46, deep_47,
};

/* ---- nested reads ----------------------------------------------------------------------------
 * A few slots go into what an object holds with a C call each and no depth count (CPython's
 * comparisons and repr count theirs): a tuple's hash hashes its items, a generic alias's hash
 * and attribute reads go to its origin, a classmethod's __get__ to the callable it wraps (a
 * classmethod of a classmethod ...). A million of them nested overflowed the stack (SIGSEGV).
 * Each is counted here, per thread, and a nesting deeper than NESTED_MAX is a RecursionError
 * (some 10,000 levels take well under a megabyte of stack). */
#define NESTED_MAX 10000

static _Thread_local int nested_depth;

static int nested_enter(const char *what)
{
	if (nested_depth >= NESTED_MAX) {
		PyErr_Format(PyExc_RecursionError,
		             "maximum recursion depth exceeded while %s (more than %d levels of "
		             "nesting)",
		             what, NESTED_MAX);
		return -1;
	}
	nested_depth++;
	return 0;
}

static hashfunc tuple_hash_real, alias_hash_real;
static getattrofunc alias_getattro_real;
static descrgetfunc classmethod_get_real;

static Py_hash_t tuple_hash_nested(PyObject *o)
{
	Py_hash_t h;

	if (nested_enter("hashing a tuple") < 0)
		return -1;
	h = tuple_hash_real(o);
	nested_depth--;
	return h;
}

static Py_hash_t alias_hash_nested(PyObject *o)
{
	Py_hash_t h;

	if (nested_enter("hashing a generic alias") < 0)
		return -1;
	h = alias_hash_real(o);
	nested_depth--;
	return h;
}

static PyObject *alias_getattro_nested(PyObject *o, PyObject *name)
{
	PyObject *r;

	if (nested_enter("reading a generic alias's attribute") < 0)
		return NULL;
	r = alias_getattro_real(o, name);
	nested_depth--;
	return r;
}

static PyObject *classmethod_get_nested(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *r;

	if (nested_enter("binding a classmethod") < 0)
		return NULL;
	r = classmethod_get_real(self, obj, type);
	nested_depth--;
	return r;
}

/* t and every class derived from it that took its hash (a namedtuple's class made before
 * now copied the slot's value when it was made). 0 or -1. */
static int hash_replace(PyTypeObject *t, hashfunc real, hashfunc nested)
{
	PyObject *subs;

	if (t->tp_hash == real)
		t->tp_hash = nested;
	if (!(subs = PyObject_CallMethod((PyObject *)t, "__subclasses__", NULL)))
		return -1;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++)
		if (hash_replace((PyTypeObject *)PyList_GET_ITEM(subs, i), real, nested) < 0) {
			Py_DECREF(subs);
			return -1;
		}
	Py_DECREF(subs);
	return 0;
}

/* t's wrapper of its slot, named name, made to call nested where it called real: a class
 * derived from t later takes its slot's function from that wrapper (CPython's slot update
 * finds the wrapper in the class's bases), and t.name(x) calls it. 0 or -1. */
static int wrapper_retarget(PyTypeObject *t, const char *name, void *real, void *nested)
{
	PyObject *d = PyDict_GetItemString(t->tp_dict, name);

	if (!d || !PyObject_TypeCheck(d, &PyWrapperDescr_Type) ||
	    ((PyWrapperDescrObject *)d)->d_wrapped != real) {
		PyErr_Format(PyExc_SystemError, "%s.%s is not the wrapper of its slot", t->tp_name,
		             name);
		return -1;
	}
	((PyWrapperDescrObject *)d)->d_wrapped = nested;
	return 0;
}

static int nested_init(void)
{
	if (tuple_hash_real)
		return 0; /* (once) */
	tuple_hash_real = PyTuple_Type.tp_hash;
	alias_hash_real = Py_GenericAliasType.tp_hash;
	alias_getattro_real = Py_GenericAliasType.tp_getattro;
	classmethod_get_real = PyClassMethod_Type.tp_descr_get;
	if (!tuple_hash_real || !alias_hash_real || !alias_getattro_real || !classmethod_get_real) {
		PyErr_SetString(PyExc_SystemError, "a nested read's slot is empty");
		return -1;
	}
	if (wrapper_retarget(&PyTuple_Type, "__hash__", tuple_hash_real, tuple_hash_nested) < 0 ||
	    wrapper_retarget(&Py_GenericAliasType, "__hash__", alias_hash_real,
	                     alias_hash_nested) < 0 ||
	    wrapper_retarget(&Py_GenericAliasType, "__getattribute__", alias_getattro_real,
	                     alias_getattro_nested) < 0 ||
	    wrapper_retarget(&PyClassMethod_Type, "__get__", classmethod_get_real,
	                     classmethod_get_nested) < 0)
		return -1;
	Py_GenericAliasType.tp_hash = alias_hash_nested;
	Py_GenericAliasType.tp_getattro = alias_getattro_nested;
	PyClassMethod_Type.tp_descr_get = classmethod_get_nested;
	PyType_Modified(&PyTuple_Type);
	PyType_Modified(&Py_GenericAliasType);
	PyType_Modified(&PyClassMethod_Type);
	return hash_replace(&PyTuple_Type, tuple_hash_real, tuple_hash_nested);
}

int pydealloc_init(void)
{
	PyObject *g = PyDict_New(), *r;
	int n = 0;

	if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    !(r = PyRun_String("import collections, csv, functools, itertools, json, operator, "
	                       "types\nasync def _ag():\n    yield\n",
	                       Py_file_input, g, g))) {
		Py_XDECREF(g);
		return -1;
	}
	Py_DECREF(r);
	for (const char *const *e = deep_types; *e; e++) {
		PyObject *t = PyRun_String(*e, Py_eval_input, g, g);
		PyTypeObject *type = (PyTypeObject *)t;

		if (!t || !PyType_Check(t) || n == DEEP_MAX ||
		    !PyType_HasFeature(type, Py_TPFLAGS_HAVE_GC) || type->tp_is_gc) {
			if (t)
				PyErr_Format(PyExc_SystemError,
				             "%s: not a collected type to bracket", *e);
			Py_XDECREF(t);
			Py_DECREF(g);
			return -1;
		}
		/* (once: a second init would wrap the wrapper) */
		if (type->tp_dealloc != deep_slots[n]) {
			real_dealloc[n] = type->tp_dealloc;
			type->tp_dealloc = deep_slots[n];
		}
		n++;
		Py_DECREF(t);
	}
	Py_DECREF(g);
	return nested_init();
}
