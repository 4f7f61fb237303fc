/* pydealloc.c - a long chain of objects is freed without a C frame for each link.
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
    NULL,
};

#define DEEP_MAX 32

static destructor real_dealloc[DEEP_MAX];

static void deep_dealloc(PyObject *op, destructor self, destructor real)
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
		deep_dealloc(op, deep_##i, real_dealloc[i]);                                       \
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

static const destructor deep_slots[DEEP_MAX] = {
    deep_0,  deep_1,  deep_2,  deep_3,  deep_4,  deep_5,  deep_6,  deep_7,
    deep_8,  deep_9,  deep_10, deep_11, deep_12, deep_13, deep_14, deep_15,
    deep_16, deep_17, deep_18, deep_19, deep_20, deep_21, deep_22, deep_23,
    deep_24, deep_25, deep_26, deep_27, deep_28, deep_29, deep_30, deep_31,
};

int pydealloc_init(void)
{
	PyObject *g = PyDict_New(), *r;
	int n = 0;

	if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    !(r = PyRun_String("import collections, functools, itertools, operator, types",
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
	return 0;
}
