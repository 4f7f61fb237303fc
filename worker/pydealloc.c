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

/* The types, as Python expressions over the modules imported below, and what is done to each:
 * FREED, its deallocator bracketed; NEXT, its next() counted (an iterator whose next calls the
 * next of the one it holds: below, nested reads); CALLED, called through its tp_call, which
 * CPython counts as a level of recursion (its vectorcall, which calls what it holds, is not: a
 * million partials, each with an attribute so that none folds into the next, or generic
 * aliases called one through the other ran the stack out; past the recursion limit now, a
 * RecursionError). */
#define FREED  1
#define NEXT   2
#define CALLED 4
#define LOADED 8 /* a library's, taken if it is loaded (data mode) */

static const struct {
	const char *type;
	int roles;
} types[] = {
    {"filter", FREED | NEXT},
    {"enumerate", FREED | NEXT},
    {"staticmethod", FREED},
    {"classmethod", FREED},
    {"property", FREED},
    {"slice", FREED},
    {"types.MappingProxyType", FREED},
    {"types.MethodType", FREED},
    {"type(iter(int, 0))", FREED | NEXT},
    {"operator.itemgetter", FREED},
    {"collections.deque", FREED},
    {"type(iter(collections.deque()))", FREED},
    {"collections.defaultdict", FREED},
    {"type(functools.cmp_to_key(int)(0))", FREED},
    {"itertools.islice", FREED | NEXT},
    {"itertools.takewhile", FREED | NEXT},
    {"itertools.dropwhile", FREED | NEXT},
    {"itertools.starmap", FREED | NEXT},
    {"itertools.accumulate", FREED | NEXT},
    {"itertools.compress", FREED | NEXT},
    {"itertools.filterfalse", FREED | NEXT},
    {"itertools.cycle", FREED | NEXT},
    {"itertools.pairwise", FREED | NEXT},
    {"itertools.groupby", FREED | NEXT},
    {"type(next(itertools.groupby([0]))[1])", FREED | NEXT},
    {"itertools.zip_longest", FREED | NEXT},
    {"itertools.repeat", FREED},
    {"itertools.chain", FREED | NEXT},
    {"functools.partial", FREED | CALLED},
    {"types.GenericAlias", FREED | CALLED},
    {"super", FREED},
    {"map", FREED | NEXT},
    {"type(_ag().asend(None))", FREED},
    {"type(anext(_ag(), None))", FREED},
    {"type(collections.namedtuple('_P', 'a').a)", FREED},
    {"json.scanner.c_make_scanner", FREED},
    {"json.encoder.c_make_encoder", FREED},
    {"type(csv.reader([]))", FREED | NEXT},
    {"zip", NEXT},
    {"reversed", NEXT},
    {"type(itertools.tee([])[0])", NEXT},
    {"type(functools.lru_cache(None)(len))", FREED},
    /* (Cython's classes have no trashcan: one holding another, found on a public class's MRO;
     * nor numpy's ufuncs, one the identity of the next) */
    {"sys.modules['pandas._libs.indexing'].NDFrameIndexerBase", FREED | LOADED},
    {"sys.modules['pandas._libs.arrays'].NDArrayBacked", FREED | LOADED},
    {"sys.modules['pandas._libs.properties'].AxisProperty", FREED | LOADED},
    {"sys.modules['pandas._libs.internals'].BlockManager", FREED | LOADED},
    {"sys.modules['numpy'].ufunc", FREED | LOADED},
    {NULL, 0},
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

/* ---- objects without the collector's header -------------------------------------------------
 * The trashcan keeps the objects it puts aside in their collector header: a type that has none
 * (numpy's arrays: an array of objects holds any object, another array of objects too) cannot
 * use it. The same bracket for them, with the objects put aside in a list of this thread's:
 * past a depth of UNTRACKED_MAX such frees, an object at a count of 0 waits there (nothing
 * reaches it: a weak reference to an object at 0 gives None), and the outermost free frees
 * what waits, each in its turn at a depth of 1. Memory running out for the list ends the
 * process: freed there, the chain would run the stack out. */
#define UNTRACKED_MAX 50

struct untracked_later {
	PyObject *op;
	destructor real;
};

static _Thread_local int untracked_depth;
static _Thread_local struct untracked_later *untracked_list;
static _Thread_local size_t untracked_len, untracked_cap;

/* Room for twice as many objects put aside (the zygote makes room for 1024 in the thread that
 * forks the workers). 0 or -1. */
static int untracked_grow(void)
{
	size_t cap = untracked_cap ? 2 * untracked_cap : 1024;
	struct untracked_later *l = PyMem_RawRealloc(untracked_list, cap * sizeof(*l));

	if (!l)
		return -1;
	untracked_list = l;
	untracked_cap = cap;
	return 0;
}

void pydealloc_untracked(PyObject *op, destructor real)
{
	if (untracked_depth >= UNTRACKED_MAX) {
		/* (freed here, the chain would run the stack out) */
		if (untracked_len == untracked_cap && untracked_grow() < 0)
			_exit(WORKER_EXIT_DEFER);
		untracked_list[untracked_len++] = (struct untracked_later){op, real};
		return;
	}
	untracked_depth++;
	real(op);
	if (untracked_depth == 1)
		while (untracked_len > 0) {
			struct untracked_later l = untracked_list[--untracked_len];
			l.real(l.op);
		}
	untracked_depth--;
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
    deep_0,  deep_1,  deep_2,  deep_3,  deep_4,  deep_5,  deep_6,  deep_7,  deep_8,  deep_9,
    deep_10, deep_11, deep_12, deep_13, deep_14, deep_15, deep_16, deep_17, deep_18, deep_19,
    deep_20, deep_21, deep_22, deep_23, deep_24, deep_25, deep_26, deep_27, deep_28, deep_29,
    deep_30, deep_31, deep_32, deep_33, deep_34, deep_35, deep_36, deep_37, deep_38, deep_39,
    deep_40, deep_41, deep_42, deep_43, deep_44, deep_45, deep_46, deep_47,
};

/* ---- nested reads ----------------------------------------------------------------------------
 * Some slots go into what an object holds with a C call each and no depth count (CPython's
 * comparisons, repr and calls through tp_call count theirs): a tuple's hash hashes its items, a
 * generic alias's hash, attribute reads and calls go to its origin, a bound method's hash and
 * attribute reads to its function, a classmethod's __get__ to the callable it wraps, the
 * __isabstractmethod__ of a classmethod, staticmethod or property to what it wraps (abc reads
 * it of every name in a class's body), an iterator's next to the iterator it was made over
 * (filter of a map of an enumerate ...). A million of them nested overflowed the stack
 * (SIGSEGV). Each is counted here, per thread, and a nesting deeper than NESTED_MAX is a
 * RecursionError (some 10,000 levels take well under a megabyte of stack).
 *
 * A slot is replaced in its type, in every class derived from it that copied it (one made
 * before: a namedtuple, collections.abc's Callable alias), and in its wrapper in the type's
 * dict, from which a class made later takes it (CPython's slot update finds the wrapper in the
 * class's bases). */
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

static hashfunc tuple_hash_real, alias_hash_real, method_hash_real, void_hash_real;
static getattrofunc alias_getattro_real, method_getattro_real;
static ternaryfunc alias_call_real;
static descrgetfunc classmethod_get_real;
static getter abstract_real[3]; /* classmethod's, staticmethod's, property's */

#define COUNTED_HASH(name, what)                                                                   \
	static Py_hash_t name##_hash_nested(PyObject *o)                                           \
	{                                                                                          \
		Py_hash_t h;                                                                       \
		if (nested_enter(what) < 0)                                                        \
			return -1;                                                                 \
		h = name##_hash_real(o);                                                           \
		nested_depth--;                                                                    \
		return h;                                                                          \
	}
COUNTED_HASH(tuple, "hashing a tuple")
COUNTED_HASH(alias, "hashing a generic alias")
COUNTED_HASH(method, "hashing a bound method")
COUNTED_HASH(void, "hashing a numpy record")

#define COUNTED_GETATTRO(name, what)                                                               \
	static PyObject *name##_getattro_nested(PyObject *o, PyObject *attr)                       \
	{                                                                                          \
		PyObject *r;                                                                       \
		if (nested_enter(what) < 0)                                                        \
			return NULL;                                                               \
		r = name##_getattro_real(o, attr);                                                 \
		nested_depth--;                                                                    \
		return r;                                                                          \
	}
COUNTED_GETATTRO(alias, "reading a generic alias's attribute")
COUNTED_GETATTRO(method, "reading a bound method's attribute")

static PyObject *alias_call_nested(PyObject *o, PyObject *args, PyObject *kw)
{
	PyObject *r;

	if (nested_enter("calling a generic alias") < 0)
		return NULL;
	r = alias_call_real(o, args, kw);
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

#define COUNTED_ABSTRACT(i)                                                                        \
	static PyObject *abstract_nested_##i(PyObject *o, void *closure)                           \
	{                                                                                          \
		PyObject *r;                                                                       \
		if (nested_enter("reading __isabstractmethod__") < 0)                              \
			return NULL;                                                               \
		r = abstract_real[i](o, closure);                                                  \
		nested_depth--;                                                                    \
		return r;                                                                          \
	}
COUNTED_ABSTRACT(0)
COUNTED_ABSTRACT(1)
COUNTED_ABSTRACT(2)
static const getter abstract_nested[3] = {abstract_nested_0, abstract_nested_1, abstract_nested_2};

#define NEXT_MAX 24

static iternextfunc next_real[NEXT_MAX];

#define COUNTED_NEXT(i)                                                                            \
	static PyObject *next_nested_##i(PyObject *o)                                              \
	{                                                                                          \
		PyObject *r;                                                                       \
		if (nested_enter("getting an iterator's next item") < 0)                           \
			return NULL;                                                               \
		r = next_real[i](o);                                                               \
		nested_depth--;                                                                    \
		return r;                                                                          \
	}
COUNTED_NEXT(0)
COUNTED_NEXT(1)
COUNTED_NEXT(2)
COUNTED_NEXT(3)
COUNTED_NEXT(4)
COUNTED_NEXT(5)
COUNTED_NEXT(6)
COUNTED_NEXT(7)
COUNTED_NEXT(8)
COUNTED_NEXT(9)
COUNTED_NEXT(10)
COUNTED_NEXT(11)
COUNTED_NEXT(12)
COUNTED_NEXT(13)
COUNTED_NEXT(14)
COUNTED_NEXT(15)
COUNTED_NEXT(16)
COUNTED_NEXT(17)
COUNTED_NEXT(18)
COUNTED_NEXT(19)
COUNTED_NEXT(20)
COUNTED_NEXT(21)
COUNTED_NEXT(22)
COUNTED_NEXT(23)

static const iternextfunc next_nested[NEXT_MAX] = {
    next_nested_0,  next_nested_1,  next_nested_2,  next_nested_3,  next_nested_4,  next_nested_5,
    next_nested_6,  next_nested_7,  next_nested_8,  next_nested_9,  next_nested_10, next_nested_11,
    next_nested_12, next_nested_13, next_nested_14, next_nested_15, next_nested_16, next_nested_17,
    next_nested_18, next_nested_19, next_nested_20, next_nested_21, next_nested_22, next_nested_23,
};

/* What slot_replaced puts where: the slot at offset, where it holds real, is nested. */
struct slot_change {
	size_t offset;
	void *real, *nested;
};

static int slot_replaced(PyTypeObject *t, void *arg)
{
	struct slot_change *c = arg;
	void **slot = (void **)((char *)t + c->offset);

	if (*slot == c->real) {
		*slot = c->nested;
		PyType_Modified(t);
	}
	return 0;
}

/* t's slot at offset counted: *real takes CPython's function, its wrapper named name (or none)
 * calls nested, and t and the classes derived from it have nested in the slot. 0 or -1. */
static int slot_count(PyTypeObject *t, size_t offset, const char *name, void **real, void *nested)
{
	PyObject *d = name ? PyDict_GetItemString(t->tp_dict, name) : NULL;

	*real = *(void **)((char *)t + offset);
	if (!*real || (name && (!d || !PyObject_TypeCheck(d, &PyWrapperDescr_Type) ||
	                        ((PyWrapperDescrObject *)d)->d_wrapped != *real))) {
		PyErr_Format(PyExc_SystemError, "%s.%s is not as known", t->tp_name,
		             name ? name : "slot");
		return -1;
	}
	if (d)
		((PyWrapperDescrObject *)d)->d_wrapped = nested;
	return pyguard_walk(t, slot_replaced, &(struct slot_change){offset, *real, nested});
}

static int flag_cleared(PyTypeObject *t, void *flag)
{
	t->tp_flags &= ~*(unsigned long *)flag;
	PyType_Modified(t);
	return 0;
}

/* The getter of t's attribute name counted. 0 or -1. */
static int getter_count(PyTypeObject *t, const char *name, int i)
{
	PyObject *d = PyDict_GetItemString(t->tp_dict, name);
	PyGetSetDef *gs;

	if (!d || !PyObject_TypeCheck(d, &PyGetSetDescr_Type) ||
	    !(gs = ((PyGetSetDescrObject *)d)->d_getset)->get) {
		PyErr_Format(PyExc_SystemError, "%s.%s is not as known", t->tp_name, name);
		return -1;
	}
	abstract_real[i] = gs->get;
	gs->get = abstract_nested[i];
	return 0;
}

/* io's IncrementalNewlineDecoder holds the decoder it is given, any object, and is not a
 * collected type (no trashcan for it): a million of them, each the next one's decoder, freed
 * one C frame a link. A decoder is not one of them (a class of the code's holding one is freed
 * in its own bracket). */
static PyTypeObject *newline_type;
static initproc newline_init_real;

static int newline_init(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *decoder = NULL;

	if (args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0)
		decoder = PyTuple_GET_ITEM(args, 0);
	else if (kw && PyDict_Check(kw))
		decoder = PyDict_GetItemString(kw, "decoder");
	if (decoder && PyObject_TypeCheck(decoder, newline_type)) {
		PyErr_SetString(PyExc_TypeError, "an IncrementalNewlineDecoder's decoder is not "
		                                 "another one in the sandbox");
		return -1;
	}
	return newline_init_real(self, args, kw);
}

#define AT(slot) offsetof(PyTypeObject, slot)

static PyObject *void_type; /* numpy's, or None */

static int nested_init(PyObject *g)
{
	if (slot_count(&PyTuple_Type, AT(tp_hash), "__hash__", (void **)&tuple_hash_real,
	               tuple_hash_nested) < 0 ||
	    slot_count(&Py_GenericAliasType, AT(tp_hash), "__hash__", (void **)&alias_hash_real,
	               alias_hash_nested) < 0 ||
	    slot_count(&Py_GenericAliasType, AT(tp_getattro), "__getattribute__",
	               (void **)&alias_getattro_real, alias_getattro_nested) < 0 ||
	    slot_count(&Py_GenericAliasType, AT(tp_call), "__call__", (void **)&alias_call_real,
	               alias_call_nested) < 0 ||
	    slot_count(&PyMethod_Type, AT(tp_hash), "__hash__", (void **)&method_hash_real,
	               method_hash_nested) < 0 ||
	    slot_count(&PyMethod_Type, AT(tp_getattro), "__getattribute__",
	               (void **)&method_getattro_real, method_getattro_nested) < 0 ||
	    slot_count(&PyClassMethod_Type, AT(tp_descr_get), "__get__",
	               (void **)&classmethod_get_real, classmethod_get_nested) < 0 ||
	    getter_count(&PyClassMethod_Type, "__isabstractmethod__", 0) < 0 ||
	    getter_count(&PyStaticMethod_Type, "__isabstractmethod__", 1) < 0 ||
	    getter_count(&PyProperty_Type, "__isabstractmethod__", 2) < 0)
		return -1;
	/* (numpy's record hashes its fields, one of which may be another record) */
	void_type =
	    PyRun_String("getattr(sys.modules.get('numpy'), 'void', None)", Py_eval_input, g, g);
	if (!void_type || (void_type != Py_None &&
	                   (!PyType_Check(void_type) ||
	                    slot_count((PyTypeObject *)void_type, AT(tp_hash), "__hash__",
	                               (void **)&void_hash_real, void_hash_nested) < 0))) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_SystemError, "numpy.void is not a type");
		return -1;
	}
	newline_type =
	    (PyTypeObject *)PyRun_String("io.IncrementalNewlineDecoder", Py_eval_input, g, g);
	if (!newline_type || !PyType_Check(newline_type) ||
	    slot_count(newline_type, AT(tp_init), "__init__", (void **)&newline_init_real,
	               newline_init) < 0) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_SystemError,
			                "io.IncrementalNewlineDecoder is not a type");
		return -1;
	}
	return 0;
}

/* The type of table entry e taken as its roles say: its deallocator bracketed (the FREED
 * types' deep slot *freed), called through tp_call, its next counted (the NEXT types' *next).
 * 0 or -1. */
static int type_take(PyObject *g, int e, int *freed, int *next)
{
	PyObject *t = PyRun_String(types[e].type, Py_eval_input, g, g);
	PyTypeObject *type = (PyTypeObject *)t;
	int rc = 0;

	if (!t && (types[e].roles & LOADED) && PyErr_ExceptionMatches(PyExc_KeyError)) {
		PyErr_Clear(); /* (not loaded) */
		return 0;
	}
	if (!t || !PyType_Check(t)) {
		if (t)
			PyErr_Format(PyExc_SystemError, "%s: not a type", types[e].type);
		Py_XDECREF(t);
		return -1;
	}
	if (types[e].roles & FREED) {
		if (*freed == DEEP_MAX || !PyType_HasFeature(type, Py_TPFLAGS_HAVE_GC) ||
		    type->tp_is_gc) {
			PyErr_Format(PyExc_SystemError, "%s: not a collected type to bracket",
			             types[e].type);
			rc = -1;
		} else {
			real_dealloc[*freed] = type->tp_dealloc;
			type->tp_dealloc = deep_slots[(*freed)++];
		}
	}
	if (rc == 0 && (types[e].roles & CALLED))
		rc = pyguard_walk(type, flag_cleared, &(unsigned long){Py_TPFLAGS_HAVE_VECTORCALL});
	if (rc == 0 && (types[e].roles & NEXT)) {
		if (*next == NEXT_MAX) {
			PyErr_Format(PyExc_SystemError, "%s: no slot left to count", types[e].type);
			rc = -1;
		} else {
			rc = slot_count(type, AT(tp_iternext), "__next__",
			                (void **)&next_real[*next], next_nested[*next]);
			(*next)++;
		}
	}
	Py_DECREF(t);
	return rc;
}

int pydealloc_init(void)
{
	static int done;
	PyObject *g, *r;
	int freed = 0, next = 0, rc = 0;

	if (done++)
		return 0; /* (once: a second time would wrap the wrappers) */
	g = PyDict_New();
	if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    !(r = PyRun_String("import collections, csv, functools, io, itertools, json, "
	                       "operator, sys, types\nasync def _ag():\n    yield\n",
	                       Py_file_input, g, g))) {
		Py_XDECREF(g);
		return -1;
	}
	Py_DECREF(r);
	for (int e = 0; rc == 0 && types[e].type; e++)
		rc = type_take(g, e, &freed, &next);
	if (rc == 0 && untracked_grow() < 0) {
		PyErr_NoMemory();
		rc = -1;
	}
	if (rc == 0)
		rc = nested_init(g);
	Py_DECREF(g);
	return rc;
}
