/* pyreentry.c - C methods of CPython 3.11 that call the user's code in the middle of their work
 * (an argument's __index__ or __float__) after they have checked an index against a buffer or
 * taken the buffer's address: the user's code resizes the object meanwhile, and the method goes
 * on with the old index or address. array.array's item assignment wrote a value of the user's
 * past its buffer (a bytearray's header overwritten: any memory, then the real builtins), and
 * bytearray's searches read a freed buffer. While armed, the arguments are made plain numbers
 * before the method runs, so nothing of the user's runs inside it; the method gives the same
 * answer and raises the same exceptions as before. And io's buffered streams hand their raw
 * stream a memoryview of their own buffer to read into or write from, which outlived the buffer
 * when the raw stream kept it (a user's readinto, or one set on a file's raw object): each is
 * made over a raw stream of the sandbox's own that copies through memory of its own. And C
 * code that keeps an object it does not own across the user's code (a comparison's operands,
 * an itertools iterator's state, deque.index's items, a Unicode error's object, a text
 * stream's buffer and snapshot): held, refused when re-entered, or read only where it agrees
 * (below). And C code that trusts what the user's code answers (a readinto's count, a
 * separator's length) or hands it memory it does not own (a codec's view of the caller's
 * buffer): checked, or given plain objects and copies.
 *
 * The methods are the classes' own: their dicts' descriptors (a call through the class, a
 * subclass, a bound method), their slots and the slots' wrappers in the dicts (a[i] = x and
 * a.__setitem__(i, x)) are all replaced. Functions return 0 / -1 with a Python exception set. */
#include "interp_internal.h"

#include <datetime.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

/* ---- making arguments plain --------------------------------------------------------------- */

/* v as array.array of this typecode would read it, without the user's code: an int for the
 * integer codes (by __index__), a float for 'f' and 'd' (by __float__ or __index__), anything
 * else as it is (characters are str, read without code). New reference. */
static PyObject *array_plain(int typecode, PyObject *v)
{
	if (PyLong_CheckExact(v) || PyFloat_CheckExact(v) || !strchr("bBhHiIlLqQfd", typecode))
		return Py_NewRef(v);
	if (typecode == 'f' || typecode == 'd') {
		double d = PyFloat_AsDouble(v);
		if (d == -1.0 && PyErr_Occurred())
			return NULL;
		return PyFloat_FromDouble(d);
	}
	return PyNumber_Index(v);
}

/* An argument of bytearray's searches: an int (a byte to find, a start or an end) made plain;
 * buffers, tuples of them and None as they are. New reference. */
static PyObject *index_plain(PyObject *v)
{
	if (PyLong_CheckExact(v) || v == Py_None || PyTuple_Check(v) || PyObject_CheckBuffer(v) ||
	    !PyIndex_Check(v))
		return Py_NewRef(v);
	return PyNumber_Index(v);
}

/* A start, an end or a subscript: an int by its __index__ (a buffer that is also a number, a
 * numpy integer, is read as the number it is here). New reference. */
static PyObject *position_plain(PyObject *v)
{
	if (PyLong_CheckExact(v) || v == Py_None || !PyIndex_Check(v))
		return Py_NewRef(v);
	return PyNumber_Index(v);
}

static PyTypeObject *array_type;
static PyObject *array_typecode_get; /* array's own getter */

static int array_typecode(PyObject *self)
{
	PyObject *t = Py_TYPE(array_typecode_get)->tp_descr_get(array_typecode_get, self, NULL);
	int code = t && PyUnicode_Check(t) && PyUnicode_GET_LENGTH(t) == 1
	               ? (int)PyUnicode_READ_CHAR(t, 0)
	               : -1;

	Py_XDECREF(t);
	if (code < 0 && !PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError, "not an array");
	return code;
}

/* ---- methods ------------------------------------------------------------------------------ */

enum fix {
	FIX_LAST_ITEM, /* array.append(v), insert(i, v): the value */
	FIX_ITEMS,     /* array.extend(iterable): a list of plain values */
	FIX_LIST, /* array.fromlist(list): a list of plain values (anything else refused by it) */
	FIX_INDEXES, /* bytearray's searches: every argument */
	FIX_SEP,     /* bytes', bytearray's and memoryview's hex: the separator (sep_plain) */
	FIX_BYTES,   /* bytearray.extend(iterable): a list of its items (bytes_items) */
};

struct guarded {
	PyTypeObject **type;
	const char *name;
	enum fix fix;
	PyObject *real; /* the class's own method descriptor */
	PyMethodDef def;
};

static PyTypeObject *bytes_type = &PyBytes_Type, *memoryview_type = &PyMemoryView_Type;

static struct guarded guarded[] = {
    {&array_type, "append", FIX_LAST_ITEM, NULL, {0}},
    {&array_type, "insert", FIX_LAST_ITEM, NULL, {0}},
    {&array_type, "extend", FIX_ITEMS, NULL, {0}},
    {&array_type, "fromlist", FIX_LIST, NULL, {0}},
    {NULL, "find", FIX_INDEXES, NULL, {0}},
    {NULL, "rfind", FIX_INDEXES, NULL, {0}},
    {NULL, "index", FIX_INDEXES, NULL, {0}},
    {NULL, "rindex", FIX_INDEXES, NULL, {0}},
    {NULL, "count", FIX_INDEXES, NULL, {0}},
    {NULL, "startswith", FIX_INDEXES, NULL, {0}},
    {NULL, "endswith", FIX_INDEXES, NULL, {0}},
    {NULL, "hex", FIX_SEP, NULL, {0}},
    {&bytes_type, "hex", FIX_SEP, NULL, {0}},
    {&memoryview_type, "hex", FIX_SEP, NULL, {0}},
    {NULL, "extend", FIX_BYTES, NULL, {0}},
};
#define N_GUARDED (sizeof(guarded) / sizeof(guarded[0]))

/* The items of an iterable as a new list of plain values (the iteration, the user's code,
 * runs here, before the array is touched); an array as it is. New reference. */
static PyObject *items_plain(int typecode, PyObject *v)
{
	PyObject *list;

	if (PyObject_TypeCheck(v, array_type))
		return Py_NewRef(v);
	list = PyList_Check(v) ? PyList_GetSlice(v, 0, PyList_GET_SIZE(v)) : PySequence_List(v);
	for (Py_ssize_t i = 0; list && i < PyList_GET_SIZE(list); i++) {
		PyObject *p = array_plain(typecode, PyList_GET_ITEM(list, i));
		if (!p)
			Py_CLEAR(list);
		else
			PyList_SetItem(list, i, p);
	}
	return list;
}

/* bytes.hex(sep), bytearray.hex(sep) and memoryview.hex(sep) took the buffer's address, then
 * asked len(sep) (a subclass's __len__ freed the buffer that was then read). While armed sep
 * is an exact str or bytes, copied from what it holds; anything else answers as CPython's
 * would after its len(). New reference. */
static PyObject *sep_plain(PyObject *sep)
{
	Py_ssize_t n;

	if (PyUnicode_CheckExact(sep) || PyBytes_CheckExact(sep))
		return Py_NewRef(sep);
	if (PyUnicode_Check(sep))
		return _PyUnicode_Copy(sep);
	if (PyBytes_Check(sep))
		return PyBytes_FromStringAndSize(PyBytes_AS_STRING(sep), PyBytes_GET_SIZE(sep));
	n = PyObject_Length(sep);
	if (n < 0)
		return NULL;
	if (n != 1)
		PyErr_SetString(PyExc_ValueError, "sep must be length 1.");
	else
		PyErr_SetString(PyExc_TypeError, "sep must be str or bytes.");
	return NULL;
}

/* bytearray.extend sizes a new buffer by the iterable's __length_hint__: a hint of 0 gave the
 * buffer every empty bytearray shares, and the first item was written into it (a byte of the
 * user's over that static memory; the next empty bytearray held it). A buffer is taken as it is;
 * any other iterable's items are read first, into a list, whose length is its own. */
static PyObject *bytes_items(PyObject *v)
{
	PyObject *it, *list;

	if (PyObject_CheckBuffer(v))
		return Py_NewRef(v);
	it = PyObject_GetIter(v);
	if (!it) {
		if (PyErr_ExceptionMatches(PyExc_TypeError)) {
			PyErr_Clear();
			PyErr_Format(PyExc_TypeError, "can't extend bytearray with %.100s",
			             Py_TYPE(v)->tp_name);
		}
		return NULL;
	}
	list = PySequence_List(it);
	Py_DECREF(it);
	return list;
}

static PyObject *guarded_call(size_t g, PyObject *self, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	PyObject *stack[8], **argv = n + 1 <= 8 ? stack : PyMem_New(PyObject *, n + 1), *r = NULL;
	PyObject *sep, *kw2 = NULL, *kwp = NULL;
	Py_ssize_t made = 0;
	int typecode = 0;

	if (!argv)
		return PyErr_NoMemory();
	argv[0] = self;
	/* (keywords by their characters: a str subclass's could hide one from the lookup) */
	if (pylayer_armed() && kw) {
		if (!(kwp = pylayer_plain_kwargs(kw)))
			goto out;
		kw = kwp;
	}
	/* hex's separator given by name */
	if (pylayer_armed() && guarded[g].fix == FIX_SEP && kw && PyDict_Check(kw) &&
	    (sep = PyDict_GetItemString(kw, "sep"))) {
		PyObject *plain = sep_plain(sep);

		kw2 = plain ? PyDict_Copy(kw) : NULL;
		if (kw2 && PyDict_SetItemString(kw2, "sep", plain) < 0)
			Py_CLEAR(kw2);
		Py_XDECREF(plain);
		if (!kw2)
			goto out;
		kw = kw2;
	}
	if (pylayer_armed() && guarded[g].type == &array_type &&
	    (typecode = array_typecode(self)) < 0)
		goto out;
	for (; made < n; made++) {
		PyObject *a = PyTuple_GET_ITEM(args, made);
		if (!pylayer_armed())
			a = Py_NewRef(a);
		else if (guarded[g].fix == FIX_SEP)
			a = made == 0 ? sep_plain(a) : Py_NewRef(a);
		else if (guarded[g].fix == FIX_INDEXES)
			a = made == 0 ? index_plain(a) : position_plain(a);
		else if (guarded[g].fix == FIX_BYTES)
			a = bytes_items(a);
		else if (made != n - 1)
			a = Py_NewRef(a);
		else if (guarded[g].fix == FIX_LAST_ITEM)
			a = array_plain(typecode, a);
		else if (guarded[g].fix == FIX_LIST && !PyList_Check(a))
			a = Py_NewRef(a);
		else
			a = items_plain(typecode, a);
		if (!a)
			goto out;
		argv[made + 1] = a;
	}
	r = PyObject_VectorcallDict(guarded[g].real, argv, (size_t)n + 1, kw);
out:
	Py_XDECREF(kw2);
	Py_XDECREF(kwp);
	for (Py_ssize_t i = 0; i < made; i++)
		Py_DECREF(argv[i + 1]);
	if (argv != stack)
		PyMem_Free(argv);
	return r;
}

#define GUARDED(i)                                                                                 \
	static PyObject *guarded_##i(PyObject *self, PyObject *args, PyObject *kw)                 \
	{                                                                                          \
		return guarded_call(i, self, args, kw);                                            \
	}
GUARDED(0)
GUARDED(1)
GUARDED(2)
GUARDED(3)
GUARDED(4)
GUARDED(5)
GUARDED(6)
GUARDED(7)
GUARDED(8)
GUARDED(9)
GUARDED(10)
GUARDED(11)
GUARDED(12)
GUARDED(13)
GUARDED(14)
static PyCFunctionWithKeywords guarded_fn[] = {
    guarded_0, guarded_1, guarded_2,  guarded_3,  guarded_4,  guarded_5,  guarded_6,  guarded_7,
    guarded_8, guarded_9, guarded_10, guarded_11, guarded_12, guarded_13, guarded_14,
};
_Static_assert(sizeof(guarded_fn) / sizeof(guarded_fn[0]) == N_GUARDED,
               "a function for each guarded method");

/* Replace the methods of t that guarded[] names for it by their guards. */
static int guard_methods(PyTypeObject *t, PyTypeObject **which)
{
	for (size_t g = 0; g < N_GUARDED; g++) {
		PyObject *m, *d;
		if (guarded[g].type != which)
			continue;
		m = PyDict_GetItemString(t->tp_dict, guarded[g].name);
		if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type)) {
			PyErr_Format(PyExc_TypeError, "%s.%s is not as known", t->tp_name,
			             guarded[g].name);
			return -1;
		}
		guarded[g].real = Py_NewRef(m);
		guarded[g].def = (PyMethodDef){
		    guarded[g].name, (PyCFunction)(void (*)(void))guarded_fn[g],
		    METH_VARARGS | METH_KEYWORDS, ((PyMethodDescrObject *)m)->d_method->ml_doc};
		d = PyDescr_NewMethod(t, &guarded[g].def);
		if (!d || PyDict_SetItemString(t->tp_dict, guarded[g].name, d) < 0) {
			Py_XDECREF(d);
			return -1;
		}
		Py_DECREF(d);
	}
	PyType_Modified(t);
	return 0;
}

/* A slot's wrapper in t's dict (t.__setitem__, t.__contains__) calls the slot function it was
 * made with: pointed at the guard too. */
static int rewrap(PyTypeObject *t, const char *name, void *real, void *guard)
{
	PyObject *w = PyDict_GetItemString(t->tp_dict, name);

	if (!w || !PyObject_TypeCheck(w, &PyWrapperDescr_Type)) {
		PyErr_Format(PyExc_TypeError, "%s.%s is not as known", t->tp_name, name);
		return -1;
	}
	if (((PyWrapperDescrObject *)w)->d_wrapped == real)
		((PyWrapperDescrObject *)w)->d_wrapped = guard;
	return 0;
}

/* ---- array.array's item assignment -------------------------------------------------------- */

static objobjargproc array_assign_real;
static ssizeobjargproc array_assign_item_real;

static int array_assign(PyObject *self, PyObject *key, PyObject *value)
{
	int typecode, rc;

	if (!value || !pylayer_armed() || PySlice_Check(key))
		return array_assign_real(self, key, value);
	if ((typecode = array_typecode(self)) < 0 || !(value = array_plain(typecode, value)))
		return -1;
	rc = array_assign_real(self, key, value);
	Py_DECREF(value);
	return rc;
}

static int array_assign_item(PyObject *self, Py_ssize_t i, PyObject *value)
{
	int typecode, rc;

	if (!value || !pylayer_armed())
		return array_assign_item_real(self, i, value);
	if ((typecode = array_typecode(self)) < 0 || !(value = array_plain(typecode, value)))
		return -1;
	rc = array_assign_item_real(self, i, value);
	Py_DECREF(value);
	return rc;
}

/* array.tofile took the array's size once, then copied 64 KiB blocks from its buffer between
 * calls of the file's write(): a write() that shrank the array had the next blocks read past
 * its end (freed memory, another object's contents). While armed the array's bytes are copied
 * first (its own tobytes) and written from the copy, in the same blocks. */
static PyObject *array_tofile_real, *array_tobytes_real;
static PyObject *call_on(PyObject *real, PyObject *self, PyObject *args, PyObject *kw);
static int replace_method(PyTypeObject *t, const char *name, PyMethodDef *def, PyObject **real);

static PyObject *array_tofile(PyObject *self, PyObject *args, PyObject *kw)
{
	const Py_ssize_t block = 64 * 1024;
	PyObject *f, *data;
	Py_ssize_t n;

	if (!pylayer_armed() || PyTuple_GET_SIZE(args) != 1 || (kw && PyDict_GET_SIZE(kw)))
		return call_on(array_tofile_real, self, args, kw);
	f = PyTuple_GET_ITEM(args, 0);
	if (!(data = PyObject_CallOneArg(array_tobytes_real, self)))
		return NULL;
	if (!PyBytes_Check(data)) {
		Py_DECREF(data);
		PyErr_SetString(PyExc_TypeError, "not an array");
		return NULL;
	}
	n = PyBytes_GET_SIZE(data);
	for (Py_ssize_t at = 0; at < n; at += block) {
		PyObject *b = PyBytes_FromStringAndSize(PyBytes_AS_STRING(data) + at,
		                                        n - at < block ? n - at : block),
		         *r;
		r = b ? PyObject_CallMethod(f, "write", "O", b) : NULL;
		Py_XDECREF(b);
		if (!r) {
			Py_DECREF(data);
			return NULL;
		}
		Py_DECREF(r);
	}
	Py_DECREF(data);
	Py_RETURN_NONE;
}

static PyMethodDef array_tofile_def = {"tofile", (PyCFunction)(void (*)(void))array_tofile,
                                       METH_VARARGS | METH_KEYWORDS, NULL};

/* array's iterator lets go of its array once exhausted, and its C __setstate__ read the size of
 * the array it no longer had (SIGSEGV; copy.copy of an iterator rebuilds it by iter() of its
 * array, which an array subclass's __iter__ answered with an exhausted one). Its own reduce says
 * whether it still has an array (a state comes with it); an exhausted iterator ignores a state,
 * as a list's does. */
static PyObject *arrayiter_setstate_real, *arrayiter_reduce_real;

static PyObject *arrayiter_setstate(PyObject *self, PyObject *state)
{
	PyObject *red = PyObject_CallOneArg(arrayiter_reduce_real, self);
	Py_ssize_t n;

	if (!red)
		return NULL;
	n = PyTuple_Check(red) ? PyTuple_GET_SIZE(red) : -1;
	Py_DECREF(red);
	if (n == 2)
		Py_RETURN_NONE;
	if (n != 3)
		return PyErr_Format(PyExc_SystemError, "array's iterator is not as known");
	return PyObject_CallFunctionObjArgs(arrayiter_setstate_real, self, state, NULL);
}

static PyMethodDef arrayiter_setstate_def = {"__setstate__", arrayiter_setstate, METH_O, NULL};

static int arrayiter_guard(PyObject *cls)
{
	PyObject *a = PyObject_CallFunction(cls, "s", "b"), *it = a ? PyObject_GetIter(a) : NULL;
	PyTypeObject *t = it ? Py_TYPE(it) : NULL;
	int rc = -1;

	if (t) {
		arrayiter_reduce_real = Py_XNewRef(PyDict_GetItemString(t->tp_dict, "__reduce__"));
		if (!arrayiter_reduce_real ||
		    !PyObject_TypeCheck(arrayiter_reduce_real, &PyMethodDescr_Type))
			PyErr_SetString(PyExc_TypeError, "array's iterator is not as known");
		else
			rc = replace_method(t, "__setstate__", &arrayiter_setstate_def,
			                    &arrayiter_setstate_real);
	}
	Py_XDECREF(it);
	Py_XDECREF(a);
	return rc;
}

int pyreentry_seal_array(PyObject *module)
{
	PyObject *cls;
	PyTypeObject *t;

	if (array_type)
		return 0;
	cls = PyObject_GetAttrString(module, "array");
	if (!cls)
		return -1;
	t = (PyTypeObject *)cls;
	array_typecode_get =
	    PyType_Check(cls) ? PyDict_GetItemString(t->tp_dict, "typecode") : NULL;
	if (!array_typecode_get || !Py_TYPE(array_typecode_get)->tp_descr_get ||
	    !t->tp_as_mapping || !t->tp_as_mapping->mp_ass_subscript || !t->tp_as_sequence ||
	    !t->tp_as_sequence->sq_ass_item) {
		PyErr_SetString(PyExc_TypeError, "array.array is not as known");
		Py_DECREF(cls);
		return -1;
	}
	Py_INCREF(array_typecode_get);
	array_type = t; /* the module keeps it */
	Py_DECREF(cls);
	/* (a subclass the zygote made copied them: openpyxl's StyleArray, V76a H2) */
	array_assign_real = t->tp_as_mapping->mp_ass_subscript;
	array_assign_item_real = t->tp_as_sequence->sq_ass_item;
	if (pyguard_slot_everywhere(t, (void *)array_assign_real, (void *)array_assign) < 0 ||
	    pyguard_slot_everywhere(t, (void *)array_assign_item_real, (void *)array_assign_item) <
	        0)
		return -1;
	array_tobytes_real = Py_XNewRef(PyDict_GetItemString(t->tp_dict, "tobytes"));
	if (!array_tobytes_real || !PyObject_TypeCheck(array_tobytes_real, &PyMethodDescr_Type)) {
		PyErr_SetString(PyExc_TypeError, "array.array.tobytes is not as known");
		return -1;
	}
	if (replace_method(t, "tofile", &array_tofile_def, &array_tofile_real) < 0 ||
	    arrayiter_guard((PyObject *)t) < 0)
		return -1;
	return guard_methods(t, &array_type);
}

/* ---- bytearray's searches ----------------------------------------------------------------- */

static objobjproc bytearray_contains_real;
static objobjargproc bytearray_assign_real;
static ssizeobjargproc bytearray_item_real;

/* A subscript made plain: an int, or a slice of ints and None (its __index__ ran here). New
 * reference. */
static PyObject *key_plain(PyObject *key)
{
	PyObject *part[3], *r;

	if (!PySlice_Check(key))
		return position_plain(key);
	part[0] = position_plain(((PySliceObject *)key)->start);
	part[1] = part[0] ? position_plain(((PySliceObject *)key)->stop) : NULL;
	part[2] = part[1] ? position_plain(((PySliceObject *)key)->step) : NULL;
	r = part[2] ? PySlice_New(part[0], part[1], part[2]) : NULL;
	for (int i = 0; i < 3; i++)
		Py_XDECREF(part[i]);
	return r;
}

/* b[i] = v, b[i:j:k] = v, del b[...]: the buffer's address was taken before the subscript's
 * __index__ ran, and before b[i] = v's value's __index__, either of which could resize it (the
 * byte went into the freed buffer: a bytearray's header there, any memory). Both are made
 * plain first. */
static int bytearray_assign(PyObject *self, PyObject *key, PyObject *value)
{
	int rc, item;

	if (!pylayer_armed())
		return bytearray_assign_real(self, key, value);
	if (!(key = key_plain(key)))
		return -1;
	item = value && !PySlice_Check(key);
	if (item && !(value = position_plain(value))) {
		Py_DECREF(key);
		return -1;
	}
	rc = bytearray_assign_real(self, key, value);
	if (item)
		Py_DECREF(value);
	Py_DECREF(key);
	return rc;
}

/* The same through the sequence slot (C code's PySequence_SetItem): the value's __index__ ran
 * after the index was checked against the length, which it could shrink. */
static int bytearray_item(PyObject *self, Py_ssize_t i, PyObject *value)
{
	int rc;

	if (!pylayer_armed() || !value)
		return bytearray_item_real(self, i, value);
	if (!(value = position_plain(value)))
		return -1;
	rc = bytearray_item_real(self, i, value);
	Py_DECREF(value);
	return rc;
}

static int bytearray_contains(PyObject *self, PyObject *v)
{
	int rc;

	if (!pylayer_armed())
		return bytearray_contains_real(self, v);
	if (!(v = index_plain(v)))
		return -1;
	rc = bytearray_contains_real(self, v);
	Py_DECREF(v);
	return rc;
}

/* ---- operands held through comparisons ------------------------------------------------------ */

/* CPython 3.11's C code hands comparisons objects it does not own: itertools.groupby its keys,
 * deque.index an item, list comparison the items that differ, a comparison of two lists or
 * tuples their items. The user's __eq__ then dropped the object (advancing the groupby,
 * clearing the deque or the lists) and answered NotImplemented, and the interpreter called the
 * reflected method, or named the operands' classes in its TypeError, on a freed object: the
 * user's code got the freed object back as self, and memory laid over it made a bytearray
 * spanning the address space (the real builtins, sys.modules and posix followed).
 *
 * The comparisons of every class with Python comparisons (the user's among them) and of lists,
 * tuples, dicts, sets, ordered dicts and dict views hold both operands while they run, and two
 * lists compared hold the items they compare last. When one answers NotImplemented and an
 * operand has no other owner left (only the hold keeps it: whoever passed it did not own it),
 * the interpreter would go on with a freed object: that is refused with RuntimeError instead.
 * Nothing else changes: an operand someone owns is never affected. */

/* Would dropping the holds free an operand? */
static int operand_dying(PyObject *v, PyObject *w)
{
	Py_ssize_t held = v == w ? 2 : 1;

	return Py_REFCNT(v) <= held || Py_REFCNT(w) <= held;
}

/* r, or the refusal when it is NotImplemented with an operand only the hold keeps. */
static PyObject *unless_dying(PyObject *r, PyObject *v, PyObject *w)
{
	if (r == Py_NotImplemented && pylayer_armed() && operand_dying(v, w)) {
		Py_DECREF(r);
		PyErr_SetString(PyExc_RuntimeError,
		                "an object was freed while it was being compared or operated on");
		r = NULL;
	}
	return r;
}

static PyObject *operands_checked(PyObject *r, PyObject *v, PyObject *w)
{
	r = unless_dying(r, v, w);
	Py_DECREF(v);
	Py_DECREF(w);
	return r;
}

/* The operands of a comparison are released only once the C code that asked for it has gone
 * on: when the next comparison starts, or when the code that ran ends (each part of a call's
 * program). numpy's maximum and minimum of objects took a reference to the operand the
 * comparison chose after it returned, and the user's __ge__ had dropped the array's own: the
 * reference was taken on freed memory, and the freed object stored in the result (any
 * read/write). Only the last comparison's operands (and those of comparisons made inside it)
 * wait so. */
struct held {
	PyObject **items;
	size_t n, room;
};

static struct held later;
/* What is kept until the code that ran ends, whatever runs meanwhile (hold_until_end). */
static struct held ended;

/* Keep o (a reference handed over) in h. Without memory for it, o is kept for good: never
 * released early. */
static void hold(struct held *h, PyObject *o)
{
	if (h->n == h->room) {
		size_t room = h->room ? 2 * h->room : 64;
		PyObject **grown = PyMem_RawRealloc(h->items, room * sizeof(*grown));
		if (!grown)
			return;
		h->items = grown;
		h->room = room;
	}
	h->items[h->n++] = o;
}

static int compare_depth; /* comparison windows open (below) */
static int releasing_plain;

static int simple_object(PyObject *o)
{
	PyTypeObject *t = Py_TYPE(o);

	return t == &PyLong_Type || t == &PyFloat_Type || t == &PyUnicode_Type ||
	       t == &PyBytes_Type || t == &PyBool_Type || t == &PyComplex_Type || o == Py_None;
}

/* Does dropping a reference to o free no more than o's own blocks and those of plain items, with
 * no code run (no finalizer, no callback: nothing that could clear a container)? */
static int plain_release(PyObject *o)
{
	PyObject **items;

	if (Py_REFCNT(o) > 1 || simple_object(o))
		return 1;
	if (PyList_CheckExact(o))
		items = ((PyListObject *)o)->ob_item;
	else if (PyTuple_CheckExact(o))
		items = ((PyTupleObject *)o)->ob_item;
	else
		return 0;
	if (Py_SIZE(o) > 64)
		return 0;
	for (Py_ssize_t i = 0; i < Py_SIZE(o); i++)
		if (items[i] && !simple_object(items[i]))
			return 0;
	return 1;
}

/* Released inside a comparison's window (the next comparison's), an object's memory is kept
 * until the window closes, like all memory older than the window freed in it; but an object
 * whose release runs nothing and frees only its own blocks (a list of numbers compared in a
 * loop) cannot free a table a lookup walks: its memory goes at once. */
static void release(struct held *h)
{
	while (h->n > 0) {
		PyObject *o = h->items[--h->n];
		int plain = compare_depth && plain_release(o);

		releasing_plain += plain;
		Py_DECREF(o); /* a __del__ may compare, and add to the list: taken in this loop */
		releasing_plain -= plain;
	}
}

static void release_held(void)
{
	release(&later);
}

void pyreentry_release_held(void)
{
	PyObject *type, *value, *tb;

	if (later.n == 0 && ended.n == 0)
		return;
	PyErr_Fetch(&type, &value, &tb);
	release(&later);
	release(&ended);
	PyErr_Restore(type, value, tb);
}

/* Keep o (a reference handed over) until the code that ran ends (pyreentry_release_held): no
 * C function the code called is running then. */
static void hold_until_end(PyObject *o)
{
	hold(&ended, o);
}

void pyreentry_hold_until_end(PyObject *o)
{
	hold_until_end(o);
}

/* Keep o (a reference handed over) until release_held. */
static void hold_until_later(PyObject *o)
{
	hold(&later, o);
}

static PyObject *compared(PyObject *r, PyObject *v, PyObject *w)
{
	r = unless_dying(r, v, w);
	hold_until_later(v);
	hold_until_later(w);
	return r;
}

struct held_compare {
	richcmpfunc
	    real; /* the slot as CPython made it (classes that inherit it are found by it) */
	richcmpfunc call; /* what runs: real, or a version of its own */
	richcmpfunc held;
};

/* ---- memory freed under a comparison ------------------------------------------------------
 *
 * A dict's or a set's lookup compares a stored key with the one asked for and then checks that
 * the table it walks is still the container's by its address alone: the key's __eq__ (the
 * code's) cleared the container and filled it again, the allocator gave the new table the old
 * one's address, and the lookup read the new table's entries at the old one's offsets (a hash
 * taken for an object: a fake bytearray over all memory; a set's discard dropping a reference
 * past its new table: a freed object reused). While a comparison runs (a window is open), the
 * blocks the interpreter frees are kept, and freed when the outermost window closes: no table
 * made inside it takes a freed table's address. A block made inside the newest open window is
 * freed at once (no lookup under way can know its address): a comparison that makes and drops
 * much (a class's __eq__ running a long loop) keeps no more than what existed before it. */
static PyMemAllocatorEx alloc_obj_real, alloc_mem_real;

/* The open windows, oldest first, each by its serial (windows are numbered as they open), and
 * whether it has closed (threads may close theirs out of order): the newest open one is the
 * last after the closed ones on top are taken off. A window opened with no room left is not
 * numbered (serial 0): while one is open, every block freed is kept. */
#define WINDOWS_MAX 4096
static struct {
	unsigned long serial[WINDOWS_MAX];
	unsigned char closed[WINDOWS_MAX];
	size_t n, unnumbered;
	unsigned long last; /* the serial of the newest window opened, open or not */
} windows;

/* The blocks the interpreter allocated while a window was open and that are still in use, each
 * with the serial of the newest window opened before it was made: a block made after every open
 * window opened can be freed at once (no lookup under way knows its address: each took its
 * table's address before its window opened). Open addressing, linear probing. */
struct born {
	uintptr_t p; /* 0: empty */
	unsigned long serial;
};
static struct {
	struct born *slots;
	size_t cap, n; /* cap a power of two, or 0 */
} born;

static struct {
	void **p;
	unsigned char *obj;
	size_t n, cap;
} freed_later;

static size_t born_home(uintptr_t p)
{
	return (size_t)(((uint64_t)p * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (born.cap - 1);
}

static void born_put(uintptr_t p, unsigned long serial)
{
	size_t i;

	if (born.cap == 0 || 2 * (born.n + 1) > born.cap) {
		size_t cap = born.cap ? 2 * born.cap : 1024;
		struct born *old = born.slots, *slots = calloc(cap, sizeof(*slots));
		size_t oldcap = born.cap;

		if (!slots)
			return; /* not recorded: freed in a window, it is kept (the safe side) */
		born.slots = slots;
		born.cap = cap;
		born.n = 0;
		for (size_t j = 0; j < oldcap; j++)
			if (old[j].p)
				born_put(old[j].p, old[j].serial);
		free(old);
	}
	for (i = born_home(p); born.slots[i].p && born.slots[i].p != p;
	     i = (i + 1) & (born.cap - 1))
		;
	if (!born.slots[i].p)
		born.n++;
	born.slots[i].p = p;
	born.slots[i].serial = serial;
}

/* The serial p was made under, taking it out; 0 when it was not made in a window. */
static unsigned long born_take(uintptr_t p)
{
	size_t i, j, mask = born.cap - 1;
	unsigned long serial;

	if (born.n == 0)
		return 0;
	for (i = born_home(p); born.slots[i].p != p; i = (i + 1) & mask)
		if (!born.slots[i].p)
			return 0;
	serial = born.slots[i].serial;
	/* Shift back the entries after it that would no longer be found past the hole. */
	for (j = (i + 1) & mask; born.slots[j].p; j = (j + 1) & mask) {
		size_t home = born_home(born.slots[j].p);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			born.slots[i] = born.slots[j];
			i = j;
		}
	}
	born.slots[i].p = 0;
	born.n--;
	return serial;
}

static void born_clear(void)
{
	if (born.n == 0)
		return;
	if (born.cap > 65536) {
		free(born.slots);
		born.slots = NULL;
		born.cap = 0;
	} else {
		memset(born.slots, 0, born.cap * sizeof(*born.slots));
	}
	born.n = 0;
}

static void freed_flush(void)
{
	for (size_t i = 0; i < freed_later.n; i++) {
		if (freed_later.obj[i])
			alloc_obj_real.free(alloc_obj_real.ctx, freed_later.p[i]);
		else
			alloc_mem_real.free(alloc_mem_real.ctx, freed_later.p[i]);
	}
	freed_later.n = 0;
}

/* Keep p (freed under a comparison) until the outermost window closes; without room to keep
 * it, it is never freed (a block lost, never one handed out again). */
static void freed_keep(void *p, int obj)
{
	if (freed_later.n == freed_later.cap) {
		size_t cap = freed_later.cap ? 2 * freed_later.cap : 256;
		void **np = realloc(freed_later.p, cap * sizeof(*np));
		unsigned char *no;

		if (!np)
			return;
		freed_later.p = np;
		if (!(no = realloc(freed_later.obj, cap)))
			return;
		freed_later.obj = no;
		freed_later.cap = cap;
	}
	freed_later.p[freed_later.n] = p;
	freed_later.obj[freed_later.n++] = (unsigned char)obj;
}

/* The serial of the newest open window (every block made after it opened may go at once). */
static unsigned long window_newest(void)
{
	if (windows.unnumbered)
		return ULONG_MAX;
	return windows.n ? windows.serial[windows.n - 1] : 0;
}

/* p freed while a window is open: freed now if it was made after the newest open window
 * opened, else kept. */
static void freed_in_window(const PyMemAllocatorEx *real, void *ctx, void *p, int obj)
{
	unsigned long serial = born_take((uintptr_t)p);

	if (serial && serial >= window_newest())
		real->free(ctx, p);
	else
		freed_keep(p, obj);
}

static void free_obj_kept(void *ctx, void *p)
{
	if (!compare_depth || !p || releasing_plain)
		alloc_obj_real.free(ctx, p);
	else
		freed_in_window(&alloc_obj_real, ctx, p, 1);
}

static void free_mem_kept(void *ctx, void *p)
{
	if (!compare_depth || !p || releasing_plain)
		alloc_mem_real.free(ctx, p);
	else
		freed_in_window(&alloc_mem_real, ctx, p, 0);
}

static void *made(void *p)
{
	if (compare_depth && p)
		born_put((uintptr_t)p, windows.last);
	return p;
}

static void *malloc_obj_seen(void *ctx, size_t n)
{
	return made(alloc_obj_real.malloc(ctx, n));
}

static void *calloc_obj_seen(void *ctx, size_t k, size_t n)
{
	return made(alloc_obj_real.calloc(ctx, k, n));
}

static void *malloc_mem_seen(void *ctx, size_t n)
{
	return made(alloc_mem_real.malloc(ctx, n));
}

static void *calloc_mem_seen(void *ctx, size_t k, size_t n)
{
	return made(alloc_mem_real.calloc(ctx, k, n));
}

/* A block moved by realloc is made anew; its old address was freed by the allocator itself
 * (the tables whose addresses lookups check are never reallocated). */
static void *moved(void *p, void *q)
{
	if (compare_depth && q && q != p) {
		if (p)
			born_take((uintptr_t)p);
		born_put((uintptr_t)q, windows.last);
	}
	return q;
}

static void *realloc_obj_seen(void *ctx, void *p, size_t n)
{
	return moved(p, alloc_obj_real.realloc(ctx, p, n));
}

static void *realloc_mem_seen(void *ctx, void *p, size_t n)
{
	return moved(p, alloc_mem_real.realloc(ctx, p, n));
}

static int freed_under_compares_install(void)
{
	PyMemAllocatorEx a;

	PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &alloc_obj_real);
	PyMem_GetAllocator(PYMEM_DOMAIN_MEM, &alloc_mem_real);
	a = alloc_obj_real;
	a.malloc = malloc_obj_seen;
	a.calloc = calloc_obj_seen;
	a.realloc = realloc_obj_seen;
	a.free = free_obj_kept;
	PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &a);
	a = alloc_mem_real;
	a.malloc = malloc_mem_seen;
	a.calloc = calloc_mem_seen;
	a.realloc = realloc_mem_seen;
	a.free = free_mem_kept;
	PyMem_SetAllocator(PYMEM_DOMAIN_MEM, &a);
	return 0;
}

/* Open a window: the memory freed until it closes is kept (but what was made inside it), and
 * the objects held by earlier comparisons are let go (their __del__ runs inside it too). Its
 * serial, for window_close. */
static unsigned long window_open(void)
{
	unsigned long serial = ++windows.last;

	compare_depth++;
	if (windows.n < WINDOWS_MAX) {
		windows.serial[windows.n] = serial;
		windows.closed[windows.n++] = 0;
	} else {
		windows.unnumbered++;
		serial = 0;
	}
	release_held();
	return serial;
}

static void window_close(unsigned long serial)
{
	if (!serial) {
		windows.unnumbered--;
	} else {
		for (size_t i = windows.n; i-- > 0;)
			if (windows.serial[i] == serial) {
				windows.closed[i] = 1;
				break;
			}
		while (windows.n && windows.closed[windows.n - 1])
			windows.n--;
	}
	if (--compare_depth == 0) {
		if (freed_later.n)
			freed_flush();
		born_clear();
	}
}

/* In the one-thread copy of a process that had other threads: the windows they had open (a
 * thread waiting inside a comparison as the call ended) are gone with them, and the thread that
 * forked has none open (it parks between calls). Left open, every block older than them freed in
 * the session's later calls would be kept for good. */
void pyreentry_after_copy(void)
{
	windows.n = 0;
	windows.unnumbered = 0;
	compare_depth = 0;
	releasing_plain = 0;
	freed_flush();
	born_clear();
}

/* f(v, w, op) inside a window. */
static PyObject *compare_counted(richcmpfunc f, PyObject *v, PyObject *w, int op)
{
	unsigned long serial = window_open();
	PyObject *r = f(v, w, op);

	window_close(serial);
	return r;
}

#define HELD_COMPARE(i)                                                                            \
	static PyObject *held_compare_##i(PyObject *v, PyObject *w, int op);                       \
	static PyObject *held_compare_##i(PyObject *v, PyObject *w, int op)                        \
	{                                                                                          \
		extern struct held_compare held_compares[];                                        \
		Py_INCREF(v);                                                                      \
		Py_INCREF(w);                                                                      \
		return compared(compare_counted(held_compares[i].call, v, w, op), v, w);           \
	}

/* ---- every comparison holds its operands ---------------------------------------------------
 *
 * C code hands objects it does not own to a comparison: a weak proxy its referent, a cell its
 * contents, numpy an item of an array of objects, a lookup a key of its table. The comparison
 * can run the code's (a class's __eq__, an aware datetime's utcoffset, a Decimal reading a
 * Rational's numerator, the truth of the answer), which dropped the object's last holder: the
 * comparison went on in a freed block the code had laid a fake object over (V41a, V42a). And a
 * dict's or a set's lookup, after the comparison, checked that the table it walks was still the
 * container's by its address alone: the code's __eq__ cleared the container and filled it again,
 * the allocator gave the new table the old address, and the lookup read the new table's entries
 * at the old offsets.
 *
 * PyObject_RichCompare and PyObject_RichCompareBool, whoever calls them (the interpreter, its
 * modules, numpy's and every extension's calls through their tables, calls through pointers),
 * jump from their first instruction to the versions here: they hold both operands while the
 * comparison runs, run it in a window (the memory freed inside it is kept, but what was made
 * inside it, until the outermost closes: no new table takes a freed table's address), and hold
 * the operands past it, until the next comparison starts or the code that ran ends (numpy's
 * maximum of objects took a reference to the operand chosen after the comparison returned; a
 * lookup's own release of the key it compared would run its __del__ before the lookup's
 * check). The order of the slots tried is CPython's. */
static const char *const compare_op_names[] = {"<", "<=", "==", "!=", ">", ">="};

static PyObject *compare_slots(PyObject *v, PyObject *w, int op)
{
	richcmpfunc f;
	PyObject *r;
	int reflected = 0;

	if (!Py_IS_TYPE(v, Py_TYPE(w)) && PyType_IsSubtype(Py_TYPE(w), Py_TYPE(v)) &&
	    (f = Py_TYPE(w)->tp_richcompare) != NULL) {
		reflected = 1;
		if ((r = f(w, v, _Py_SwappedOp[op])) != Py_NotImplemented)
			return r;
		Py_DECREF(r);
	}
	if ((f = Py_TYPE(v)->tp_richcompare) != NULL) {
		if ((r = f(v, w, op)) != Py_NotImplemented)
			return r;
		Py_DECREF(r);
	}
	if (!reflected && (f = Py_TYPE(w)->tp_richcompare) != NULL) {
		if ((r = f(w, v, _Py_SwappedOp[op])) != Py_NotImplemented)
			return r;
		Py_DECREF(r);
	}
	if (op == Py_EQ || op == Py_NE)
		return Py_NewRef((v == w) == (op == Py_EQ) ? Py_True : Py_False);
	PyErr_Format(PyExc_TypeError,
	             "'%s' not supported between instances of '%.100s' and '%.100s'",
	             compare_op_names[op], Py_TYPE(v)->tp_name, Py_TYPE(w)->tp_name);
	return NULL;
}

static int plain_number(PyTypeObject *t)
{
	return t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type;
}

/* Two objects of types whose comparison runs nothing else and frees nothing: both of one of
 * int, str, float, bytes, or numbers of int, float and bool mixed (numpy's arange compares its
 * int and float bounds; int's and float's comparisons of each other are C's alone). */
static int plain_pair(PyObject *v, PyObject *w)
{
	PyTypeObject *t = Py_TYPE(v), *u = Py_TYPE(w);

	if (t == u)
		return t == &PyLong_Type || t == &PyUnicode_Type || t == &PyFloat_Type ||
		       t == &PyBytes_Type || t == &PyBool_Type;
	return plain_number(t) && plain_number(u);
}

/* The comparison in a window, its operands held by the caller. */
static PyObject *compare_in_window(PyObject *v, PyObject *w, int op)
{
	unsigned long serial;
	PyObject *r;

	if (Py_EnterRecursiveCall(" in comparison"))
		return NULL;
	serial = window_open();
	r = compare_slots(v, w, op);
	window_close(serial);
	Py_LeaveRecursiveCall();
	return r;
}

static PyObject *richcompare_held(PyObject *v, PyObject *w, int op)
{
	PyObject *r;

	if (!v || !w || op < Py_LT || op > Py_GE) {
		if (!PyErr_Occurred())
			PyErr_BadInternalCall();
		return NULL;
	}
	if (plain_pair(v, w))
		return compare_slots(v, w, op);
	Py_INCREF(v);
	Py_INCREF(w);
	r = compare_in_window(v, w, op);
	hold_until_later(v);
	hold_until_later(w);
	return r;
}

static int richcompare_bool_held(PyObject *v, PyObject *w, int op)
{
	unsigned long serial;
	PyObject *r;
	int k;

	if (v == w && v && (op == Py_EQ || op == Py_NE))
		return op == Py_EQ;
	if (!v || !w || op < Py_LT || op > Py_GE) {
		if (!PyErr_Occurred())
			PyErr_BadInternalCall();
		return -1;
	}
	if (plain_pair(v, w)) {
		if (!(r = compare_slots(v, w, op)))
			return -1;
		k = PyBool_Check(r) ? r == Py_True : PyObject_IsTrue(r);
		Py_DECREF(r);
		return k;
	}
	Py_INCREF(v);
	Py_INCREF(w);
	serial = window_open(); /* the answer's truth runs in it too */
	r = compare_in_window(v, w, op);
	k = !r ? -1 : PyBool_Check(r) ? r == Py_True : PyObject_IsTrue(r);
	Py_XDECREF(r);
	window_close(serial);
	hold_until_later(v);
	hold_until_later(w);
	return k;
}

static int comparisons_held(void)
{
	if (pylayer_entry_redirect((void *)PyObject_RichCompare, (void *)richcompare_held) < 0 ||
	    pylayer_entry_redirect((void *)PyObject_RichCompareBool,
	                           (void *)richcompare_bool_held) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	return 0;
}
/* A hash or a comparison of a class made after the zygote (the code's, or a class of its
 * making through a library) runs: code of the code's, though it may have no frame (C
 * callables as its __eq__ or __hash__: a key of the code's in numpy's finfo cache ran them
 * inside qhull's own_arrays scope, V67a H1). */
static int code_slots;

static int code_class(PyObject *o)
{
	PyTypeObject *t = Py_TYPE(o);

	return (t->tp_flags & Py_TPFLAGS_HEAPTYPE) && !pyguard_sealed_class((PyObject *)t);
}

static PyObject *held_compare_0(PyObject *v, PyObject *w, int op)
{
	extern struct held_compare held_compares[];
	int code = code_class(v) || code_class(w);
	PyObject *r;

	Py_INCREF(v);
	Py_INCREF(w);
	code_slots += code;
	r = compared(compare_counted(held_compares[0].call, v, w, op), v, w);
	code_slots -= code;
	return r;
}

static hashfunc hash_real; /* slot_tp_hash */

static Py_hash_t hash_counted(PyObject *self)
{
	int code = code_class(self);
	Py_hash_t h;

	code_slots += code;
	h = hash_real(self);
	code_slots -= code;
	return h;
}

/* Every other slot of a Python class that calls a method of its class (CPython's slot_*
 * functions: __index__, __float__, __len__, __getitem__, __call__, __iter__, __next__, __get__,
 * __set__, __init__, __bool__, __contains__, the in-place operators) is counted the same: a
 * method of the code's may be C callables with no frame in any slot (np.finfo's eps with a
 * __float__ of partials ran inside qhull's scope, V69a H1), and whatever the slot runs (a
 * descriptor's __get__ answering the method too) runs inside the count. __repr__ and __str__,
 * the binary operators and the attribute hooks are counted where they are held; __new__ and
 * __setattr__ are not (CPython tells a class's own from a built-in one's by its slot). */
int pyreentry_slot_begin(PyObject *self)
{
	int code = code_class(self);

	code_slots += code;
	return code;
}

void pyreentry_slot_end(int code)
{
	code_slots -= code;
}

#define COUNTED_SLOT(name, type, ret, params, args)                                                \
	static type slot_##name##_real;                                                            \
	static ret slot_##name##_counted params                                                    \
	{                                                                                          \
		int code = pyreentry_slot_begin(self);                                             \
		ret r = slot_##name##_real args;                                                   \
		code_slots -= code;                                                                \
		return r;                                                                          \
	}
#define COUNTED_UNARY(name) COUNTED_SLOT(name, unaryfunc, PyObject *, (PyObject * self), (self))
#define COUNTED_BINARY(name)                                                                       \
	COUNTED_SLOT(name, binaryfunc, PyObject *, (PyObject * self, PyObject * a), (self, a))
COUNTED_UNARY(iter)
COUNTED_UNARY(iternext)
COUNTED_UNARY(await)
COUNTED_UNARY(aiter)
COUNTED_UNARY(anext)
COUNTED_UNARY(neg)
COUNTED_UNARY(pos)
COUNTED_UNARY(abs)
COUNTED_UNARY(invert)
COUNTED_UNARY(int)
COUNTED_UNARY(float)
COUNTED_UNARY(index)
COUNTED_SLOT(bool, inquiry, int, (PyObject * self), (self))
COUNTED_SLOT(sq_length, lenfunc, Py_ssize_t, (PyObject * self), (self))
COUNTED_SLOT(mp_length, lenfunc, Py_ssize_t, (PyObject * self), (self))
COUNTED_BINARY(getitem)
COUNTED_SLOT(sq_item, ssizeargfunc, PyObject *, (PyObject * self, Py_ssize_t i), (self, i))
COUNTED_SLOT(sq_ass_item, ssizeobjargproc, int, (PyObject * self, Py_ssize_t i, PyObject *v),
             (self, i, v))
COUNTED_SLOT(setitem, objobjargproc, int, (PyObject * self, PyObject *k, PyObject *v), (self, k, v))
COUNTED_SLOT(descr_set, descrsetfunc, int, (PyObject * self, PyObject *o, PyObject *v),
             (self, o, v))
COUNTED_SLOT(contains, objobjproc, int, (PyObject * self, PyObject *v), (self, v))
COUNTED_SLOT(call, ternaryfunc, PyObject *, (PyObject * self, PyObject *a, PyObject *k),
             (self, a, k))
COUNTED_SLOT(descr_get, descrgetfunc, PyObject *, (PyObject * self, PyObject *o, PyObject *t),
             (self, o, t))
COUNTED_SLOT(init, initproc, int, (PyObject * self, PyObject *a, PyObject *k), (self, a, k))
COUNTED_SLOT(ipow, ternaryfunc, PyObject *, (PyObject * self, PyObject *a, PyObject *m),
             (self, a, m))
COUNTED_BINARY(iadd)
COUNTED_BINARY(isub)
COUNTED_BINARY(imul)
COUNTED_BINARY(imod)
COUNTED_BINARY(ilshift)
COUNTED_BINARY(irshift)
COUNTED_BINARY(iand)
COUNTED_BINARY(ixor)
COUNTED_BINARY(ior)
COUNTED_BINARY(ifloordiv)
COUNTED_BINARY(itruediv)
COUNTED_BINARY(imatmul)

static PyObject *probe_class(const char *src, const char *name);

/* Where a slot is: in the type itself (table SIZE_MAX) or in the table of methods whose pointer
 * lies at table; the method a probe class defines for it. */
struct counted_slot {
	size_t table, offset;
	const char *method;
	void **real, *counted;
};

#define T_SLOT(f)  SIZE_MAX, offsetof(PyTypeObject, f)
#define AM_SLOT(f) offsetof(PyTypeObject, tp_as_async), offsetof(PyAsyncMethods, f)
#define NB_SLOT(f) offsetof(PyTypeObject, tp_as_number), offsetof(PyNumberMethods, f)
#define SQ_SLOT(f) offsetof(PyTypeObject, tp_as_sequence), offsetof(PySequenceMethods, f)
#define MP_SLOT(f) offsetof(PyTypeObject, tp_as_mapping), offsetof(PyMappingMethods, f)
#define COUNTED(where, method, name)                                                               \
	{                                                                                          \
		where, method, (void **)&slot_##name##_real, (void *)slot_##name##_counted         \
	}
static const struct counted_slot counted_slots[] = {
    COUNTED(T_SLOT(tp_iter), "__iter__", iter),
    COUNTED(T_SLOT(tp_iternext), "__next__", iternext),
    COUNTED(T_SLOT(tp_call), "__call__", call),
    COUNTED(T_SLOT(tp_descr_get), "__get__", descr_get),
    COUNTED(T_SLOT(tp_descr_set), "__set__", descr_set),
    COUNTED(T_SLOT(tp_init), "__init__", init),
    COUNTED(AM_SLOT(am_await), "__await__", await),
    COUNTED(AM_SLOT(am_aiter), "__aiter__", aiter),
    COUNTED(AM_SLOT(am_anext), "__anext__", anext),
    COUNTED(NB_SLOT(nb_negative), "__neg__", neg),
    COUNTED(NB_SLOT(nb_positive), "__pos__", pos),
    COUNTED(NB_SLOT(nb_absolute), "__abs__", abs),
    COUNTED(NB_SLOT(nb_invert), "__invert__", invert),
    COUNTED(NB_SLOT(nb_int), "__int__", int),
    COUNTED(NB_SLOT(nb_float), "__float__", float),
    COUNTED(NB_SLOT(nb_index), "__index__", index),
    COUNTED(NB_SLOT(nb_bool), "__bool__", bool),
    COUNTED(NB_SLOT(nb_inplace_add), "__iadd__", iadd),
    COUNTED(NB_SLOT(nb_inplace_subtract), "__isub__", isub),
    COUNTED(NB_SLOT(nb_inplace_multiply), "__imul__", imul),
    COUNTED(NB_SLOT(nb_inplace_remainder), "__imod__", imod),
    COUNTED(NB_SLOT(nb_inplace_lshift), "__ilshift__", ilshift),
    COUNTED(NB_SLOT(nb_inplace_rshift), "__irshift__", irshift),
    COUNTED(NB_SLOT(nb_inplace_and), "__iand__", iand),
    COUNTED(NB_SLOT(nb_inplace_xor), "__ixor__", ixor),
    COUNTED(NB_SLOT(nb_inplace_or), "__ior__", ior),
    COUNTED(NB_SLOT(nb_inplace_floor_divide), "__ifloordiv__", ifloordiv),
    COUNTED(NB_SLOT(nb_inplace_true_divide), "__itruediv__", itruediv),
    COUNTED(NB_SLOT(nb_inplace_matrix_multiply), "__imatmul__", imatmul),
    COUNTED(NB_SLOT(nb_inplace_power), "__ipow__", ipow),
    COUNTED(SQ_SLOT(sq_length), "__len__", sq_length),
    COUNTED(SQ_SLOT(sq_item), "__getitem__", sq_item),
    COUNTED(SQ_SLOT(sq_ass_item), "__setitem__", sq_ass_item),
    COUNTED(SQ_SLOT(sq_contains), "__contains__", contains),
    COUNTED(MP_SLOT(mp_length), "__len__", mp_length),
    COUNTED(MP_SLOT(mp_subscript), "__getitem__", getitem),
    COUNTED(MP_SLOT(mp_ass_subscript), "__setitem__", setitem),
};
#undef COUNTED
#define N_COUNTED_SLOTS (sizeof(counted_slots) / sizeof(counted_slots[0]))

/* Where t keeps slot s, or NULL when t has no such table. */
static void **counted_slot_at(PyTypeObject *t, const struct counted_slot *s)
{
	char *base = (char *)t;

	if (s->table != SIZE_MAX && !(base = *(char **)((char *)t + s->table)))
		return NULL;
	return (void **)(base + s->offset);
}

static void slots_counted(PyTypeObject *t)
{
	if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE))
		return;
	for (size_t i = 0; i < N_COUNTED_SLOTS; i++) {
		void **at = counted_slot_at(t, &counted_slots[i]);
		if (at && *counted_slots[i].real && *at == *counted_slots[i].real)
			*at = counted_slots[i].counted;
	}
}

/* CPython's slots, read off a class made here with every method above. */
static int counted_slots_init(void)
{
	char src[4096];
	size_t n = (size_t)snprintf(src, sizeof(src), "class Slots:\n");
	PyObject *cls;

	for (size_t i = 0; i < N_COUNTED_SLOTS && n < sizeof(src); i++)
		n += (size_t)snprintf(src + n, sizeof(src) - n,
		                      "    def %s(self, *a): return NotImplemented\n",
		                      counted_slots[i].method);
	if (n >= sizeof(src) || !(cls = probe_class(src, "Slots")))
		return PyErr_Occurred() ? -1
		                        : (PyErr_SetString(PyExc_RuntimeError, "no probe"), -1);
	for (size_t i = 0; i < N_COUNTED_SLOTS; i++) {
		void **at = counted_slot_at((PyTypeObject *)cls, &counted_slots[i]);
		if (!at || !*at) {
			Py_DECREF(cls);
			PyErr_Format(PyExc_RuntimeError, "a class's %s slot is not as known",
			             counted_slots[i].method);
			return -1;
		}
		*counted_slots[i].real = *at;
	}
	Py_DECREF(cls);
	return 0;
}

HELD_COMPARE(1)
HELD_COMPARE(2)
HELD_COMPARE(3)
HELD_COMPARE(4)
HELD_COMPARE(5)
HELD_COMPARE(6)
HELD_COMPARE(7)
/* 0: the classes' Python comparisons (slot_tp_richcompare), then list, tuple, dict, set (and
 * frozenset), OrderedDict, dict_keys, dict_items. */
struct held_compare held_compares[] = {
    {NULL, NULL, held_compare_0}, {NULL, NULL, held_compare_1}, {NULL, NULL, held_compare_2},
    {NULL, NULL, held_compare_3}, {NULL, NULL, held_compare_4}, {NULL, NULL, held_compare_5},
    {NULL, NULL, held_compare_6}, {NULL, NULL, held_compare_7},
};
#define N_HELD_COMPARES (sizeof(held_compares) / sizeof(held_compares[0]))

/* Two lists compared: CPython's order, with the items that differ held while they are
 * compared again by the operator asked (CPython hands them over unowned: the user's __hash__
 * or __eq__ inside that comparison emptied the lists and freed them). */
static PyObject *list_compare(PyObject *v, PyObject *w, int op)
{
	PyListObject *vl = (PyListObject *)v, *wl = (PyListObject *)w;
	PyObject *a, *b, *r;
	Py_ssize_t i;

	if (!PyList_Check(v) || !PyList_Check(w))
		Py_RETURN_NOTIMPLEMENTED;
	if (Py_SIZE(vl) != Py_SIZE(wl) && (op == Py_EQ || op == Py_NE))
		return Py_NewRef(op == Py_EQ ? Py_False : Py_True);
	for (i = 0; i < Py_SIZE(vl) && i < Py_SIZE(wl); i++) {
		int k;
		a = vl->ob_item[i];
		b = wl->ob_item[i];
		if (a == b)
			continue;
		Py_INCREF(a);
		Py_INCREF(b);
		k = PyObject_RichCompareBool(a, b, Py_EQ);
		Py_DECREF(a);
		Py_DECREF(b);
		if (k < 0)
			return NULL;
		if (!k)
			break;
	}
	if (i >= Py_SIZE(vl) || i >= Py_SIZE(wl))
		Py_RETURN_RICHCOMPARE(Py_SIZE(vl), Py_SIZE(wl), op);
	if (op == Py_EQ)
		Py_RETURN_FALSE;
	if (op == Py_NE)
		Py_RETURN_TRUE;
	a = Py_NewRef(vl->ob_item[i]);
	b = Py_NewRef(wl->ob_item[i]);
	r = PyObject_RichCompare(a, b, op);
	Py_DECREF(a);
	Py_DECREF(b);
	return r;
}

static void binops_guard(PyTypeObject *t);
static int plain_names_swap(PyTypeObject *t, void *unused);
static destructor finalize_real; /* CPython's slot that calls a class's __del__ */
static void finalize_counted(PyObject *self);
static void finalize_inherited(PyObject *self);

/* A class's comparison slot and binary operators, held (a class made, or its comparisons or
 * operators set, later: again). */
static void eg_class_guard(PyTypeObject *t);

static void texts_hold(PyTypeObject *t);

void pyreentry_class_guard(PyTypeObject *t)
{
	(void)plain_names_swap(t, NULL);
	/* (Python classes only: a built-in type keeps its own, which finalize_inherited finds
	 * beneath the Python classes of an MRO) */
	if (finalize_real && (t->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
		if (t->tp_finalize == finalize_real)
			t->tp_finalize = finalize_counted;
		else if (t->tp_finalize && t->tp_finalize != finalize_counted)
			t->tp_finalize = finalize_inherited;
	}
	binops_guard(t);
	eg_class_guard(t);
	texts_hold(t);
	for (size_t i = 0; i < N_HELD_COMPARES; i++)
		if (held_compares[i].real && t->tp_richcompare == held_compares[i].real)
			t->tp_richcompare = held_compares[i].held;
	if (hash_real && t->tp_hash == hash_real)
		t->tp_hash = hash_counted;
	slots_counted(t);
}

/* ---- operands held through a class's binary operators ------------------------------------ */

/* C code hands binary operators objects it does not own: numpy's loops over arrays of objects
 * (np.add, x + y, dot, reduce) pass the arrays' items as they are. A class's operator
 * (slot_nb_add, ...) calls __add__, and on NotImplemented the other operand's __radd__: the
 * user's __add__ had dropped the other operand from its array, and __radd__ ran on a freed
 * object laid over with a forged one (any object, a bytearray spanning the address space).
 * A class's binary operators are this file's: CPython's logic, with both operands held while
 * it runs, and the same refusal as the comparisons when NotImplemented is left with an operand
 * nobody else owns. The check of the other operand's slot (is it a class's operator too?)
 * takes CPython's and this file's alike. */
struct held_binop {
	const char *name, *rname; /* __add__, __radd__ */
	size_t offset;            /* of the slot in PyNumberMethods */
	PyObject *dunder, *rdunder;
	binaryfunc real; /* CPython's slot_nb_... */
	binaryfunc held;
};

static struct held_binop held_binops[];

static binaryfunc binop_slot(PyTypeObject *t, size_t i)
{
	return t->tp_as_number ? *(binaryfunc *)((char *)t->tp_as_number + held_binops[i].offset)
	                       : NULL;
}

static int binop_is_class_slot(PyTypeObject *t, size_t i)
{
	binaryfunc f = binop_slot(t, i);

	return f && (f == held_binops[i].real || f == held_binops[i].held);
}

/* The method name of self's class, called with (self, other); NotImplemented when it has
 * none. */
static PyObject *binop_call(PyObject *name, PyObject *self, PyObject *other)
{
	PyObject *f = _PyType_Lookup(Py_TYPE(self), name), *r;
	descrgetfunc get;

	if (!f)
		return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
	if (PyType_HasFeature(Py_TYPE(f), Py_TPFLAGS_METHOD_DESCRIPTOR)) {
		PyObject *args[2] = {self, other};
		Py_INCREF(f);
		r = PyObject_Vectorcall(f, args, 2, NULL);
	} else {
		get = Py_TYPE(f)->tp_descr_get;
		f = get ? get(f, self, (PyObject *)Py_TYPE(self)) : Py_NewRef(f);
		if (!f)
			return NULL;
		r = PyObject_CallOneArg(f, other);
	}
	Py_DECREF(f);
	return r;
}

/* Does right's class define rname otherwise than left's? */
static int binop_overloaded(PyObject *left, PyObject *right, PyObject *rname)
{
	PyObject *a, *b;
	int ok;

	if (_PyObject_LookupAttr((PyObject *)Py_TYPE(right), rname, &b) < 0)
		return -1;
	if (!b)
		return 0;
	if (_PyObject_LookupAttr((PyObject *)Py_TYPE(left), rname, &a) < 0) {
		Py_DECREF(b);
		return -1;
	}
	if (!a) {
		Py_DECREF(b);
		return 1;
	}
	ok = PyObject_RichCompareBool(a, b, Py_NE);
	Py_DECREF(a);
	Py_DECREF(b);
	return ok;
}

/* CPython's dispatch of a binary operator between two operands, both held: the right operand's
 * reflected method first when its class is a subclass of the left's that defines it otherwise,
 * then the left's method, then the right's reflected one. is_slot tells whether a class's slot
 * i is a class's operator (CPython's slot or this file's). */
static PyObject *dispatch_held(PyObject *self, PyObject *other, PyObject *dunder, PyObject *rdunder,
                               int (*is_slot)(PyTypeObject *, size_t), size_t i)
{
	int do_other, code = code_class(self) || code_class(other);
	PyObject *r;

	Py_INCREF(self);
	Py_INCREF(other);
	code_slots += code;
	do_other = Py_TYPE(self) != Py_TYPE(other) && is_slot(Py_TYPE(other), i);
	if (is_slot(Py_TYPE(self), i)) {
		if (do_other && PyType_IsSubtype(Py_TYPE(other), Py_TYPE(self))) {
			int ok = binop_overloaded(self, other, rdunder);
			if (ok < 0) {
				r = NULL;
				goto out;
			}
			if (ok) {
				r = binop_call(rdunder, other, self);
				if (r != Py_NotImplemented)
					goto out;
				Py_DECREF(r);
				do_other = 0;
			}
		}
		r = binop_call(dunder, self, other);
		if (r != Py_NotImplemented || Py_TYPE(other) == Py_TYPE(self))
			goto out;
		Py_DECREF(r);
	}
	r = do_other ? binop_call(rdunder, other, self) : Py_NewRef(Py_NotImplemented);
out:
	code_slots -= code;
	return operands_checked(r, self, other);
}

static PyObject *binop_held(size_t i, PyObject *self, PyObject *other)
{
	return dispatch_held(self, other, held_binops[i].dunder, held_binops[i].rdunder,
	                     binop_is_class_slot, i);
}

#define HELD_BINOP(i)                                                                              \
	static PyObject *held_binop_##i(PyObject *v, PyObject *w)                                  \
	{                                                                                          \
		return binop_held(i, v, w);                                                        \
	}
HELD_BINOP(0)
HELD_BINOP(1)
HELD_BINOP(2)
HELD_BINOP(3)
HELD_BINOP(4)
HELD_BINOP(5)
HELD_BINOP(6)
HELD_BINOP(7)
HELD_BINOP(8)
HELD_BINOP(9)
HELD_BINOP(10)
HELD_BINOP(11)
HELD_BINOP(12)

#define NB(slot) offsetof(PyNumberMethods, slot)
static struct held_binop held_binops[] = {
    {"__add__", "__radd__", NB(nb_add), NULL, NULL, NULL, held_binop_0},
    {"__sub__", "__rsub__", NB(nb_subtract), NULL, NULL, NULL, held_binop_1},
    {"__mul__", "__rmul__", NB(nb_multiply), NULL, NULL, NULL, held_binop_2},
    {"__mod__", "__rmod__", NB(nb_remainder), NULL, NULL, NULL, held_binop_3},
    {"__divmod__", "__rdivmod__", NB(nb_divmod), NULL, NULL, NULL, held_binop_4},
    {"__lshift__", "__rlshift__", NB(nb_lshift), NULL, NULL, NULL, held_binop_5},
    {"__rshift__", "__rrshift__", NB(nb_rshift), NULL, NULL, NULL, held_binop_6},
    {"__and__", "__rand__", NB(nb_and), NULL, NULL, NULL, held_binop_7},
    {"__xor__", "__rxor__", NB(nb_xor), NULL, NULL, NULL, held_binop_8},
    {"__or__", "__ror__", NB(nb_or), NULL, NULL, NULL, held_binop_9},
    {"__floordiv__", "__rfloordiv__", NB(nb_floor_divide), NULL, NULL, NULL, held_binop_10},
    {"__truediv__", "__rtruediv__", NB(nb_true_divide), NULL, NULL, NULL, held_binop_11},
    {"__matmul__", "__rmatmul__", NB(nb_matrix_multiply), NULL, NULL, NULL, held_binop_12},
};
#undef NB
#define N_HELD_BINOPS (sizeof(held_binops) / sizeof(held_binops[0]))

/* ** with a class's __pow__/__rpow__: the two-operand form held as the others; with a modulus,
 * only the left operand's __pow__ is asked (as CPython does), both held. */
static ternaryfunc power_real;
static PyObject *pow_dunder, *rpow_dunder;

static int power_is_class_slot(PyTypeObject *t, size_t unused);

static PyObject *held_power(PyObject *self, PyObject *other, PyObject *mod)
{
	PyObject *r;
	int code;

	if (mod == Py_None)
		return dispatch_held(self, other, pow_dunder, rpow_dunder, power_is_class_slot, 0);
	if (!power_is_class_slot(Py_TYPE(self), 0))
		Py_RETURN_NOTIMPLEMENTED;
	Py_INCREF(self);
	Py_INCREF(other);
	code = pyreentry_slot_begin(self);
	r = PyObject_VectorcallMethod(pow_dunder, (PyObject *[]){self, other, mod}, 3, NULL);
	code_slots -= code;
	return operands_checked(r, self, other);
}

static int power_is_class_slot(PyTypeObject *t, size_t unused)
{
	ternaryfunc f = t->tp_as_number ? t->tp_as_number->nb_power : NULL;

	(void)unused;
	return f && (f == power_real || f == held_power);
}

/* A class's binary operators, held (a class made, or an operator set, later: again). */
static void binops_guard(PyTypeObject *t)
{
	if (!t->tp_as_number || !(t->tp_flags & Py_TPFLAGS_HEAPTYPE))
		return;
	for (size_t i = 0; i < N_HELD_BINOPS; i++)
		if (held_binops[i].real && binop_slot(t, i) == held_binops[i].real)
			*(binaryfunc *)((char *)t->tp_as_number + held_binops[i].offset) =
			    held_binops[i].held;
	if (power_real && t->tp_as_number->nb_power == power_real)
		t->tp_as_number->nb_power = held_power;
}

/* CPython's operator slots, read off a class made here with every operator. */
/* A class made here from src, Python source that defines it as name: CPython's slots for
 * the methods it defines are read off it. A new reference, or NULL with an error set. */
static PyObject *probe_class(const char *src, const char *name)
{
	PyObject *g = PyDict_New(), *code = NULL, *r = NULL, *cls = NULL;

	if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0)
		code = Py_CompileString(src, "<sandbox probe>", Py_file_input);
	if (code)
		r = PyEval_EvalCode(code, g, g);
	if (r) {
		cls = Py_XNewRef(PyDict_GetItemString(g, name));
		if (!cls || !PyType_Check(cls)) {
			Py_CLEAR(cls);
			PyErr_Format(PyExc_RuntimeError, "no class %s was made", name);
		}
	}
	Py_XDECREF(r);
	Py_XDECREF(code);
	Py_XDECREF(g);
	return cls;
}

static int held_binops_init(void)
{
	PyObject *cls = NULL;
	PyTypeObject *t;
	char src[2048];
	size_t n;
	int rc = -1;

	n = (size_t)snprintf(src, sizeof(src), "class Operators:\n");
	for (size_t i = 0; i < N_HELD_BINOPS && n < sizeof(src); i++)
		n += (size_t)snprintf(src + n, sizeof(src) - n,
		                      "    def %s(self, other): return NotImplemented\n",
		                      held_binops[i].name);
	if (n < sizeof(src))
		n += (size_t)snprintf(
		    src + n, sizeof(src) - n,
		    "    def __pow__(self, other, mod=None): return NotImplemented\n");
	cls = n < sizeof(src) ? probe_class(src, "Operators") : NULL;
	if (!cls || !((PyTypeObject *)cls)->tp_as_number) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError,
			                "no class with Python operators was made");
		goto out;
	}
	t = (PyTypeObject *)cls;
	for (size_t i = 0; i < N_HELD_BINOPS; i++) {
		held_binops[i].real = binop_slot(t, i);
		held_binops[i].dunder = PyUnicode_InternFromString(held_binops[i].name);
		held_binops[i].rdunder = PyUnicode_InternFromString(held_binops[i].rname);
		if (!held_binops[i].real || !held_binops[i].dunder || !held_binops[i].rdunder)
			goto out;
	}
	power_real = t->tp_as_number->nb_power;
	pow_dunder = PyUnicode_InternFromString("__pow__");
	rpow_dunder = PyUnicode_InternFromString("__rpow__");
	if (!power_real || !pow_dunder || !rpow_dunder)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !PyErr_Occurred())
		PyErr_SetString(PyExc_RuntimeError, "an operator to hold is missing");
	Py_XDECREF(cls);
	return rc;
}

/* The comparison slot CPython gives a class with Python comparisons, read off one made here,
 * and the containers' comparisons, held. */
static int held_operands_init(void)
{
	static const char src[] = "class Operators:\n"
	                          "    def __eq__(self, other): return NotImplemented\n";
	PyObject *cls = probe_class(src, "Operators");
	PyTypeObject *t,
	    *statics[] = {&PyList_Type,  &PyTuple_Type,    &PyDict_Type,     &PySet_Type,
	                  &PyODict_Type, &PyDictKeys_Type, &PyDictItems_Type};
	int rc = -1;

	if (!cls)
		return -1;
	t = (PyTypeObject *)cls;
	held_compares[0].real = held_compares[0].call = t->tp_richcompare;
	for (size_t i = 0; i < sizeof(statics) / sizeof(statics[0]); i++) {
		/* dict_keys and dict_items share one comparison: held once. */
		if (statics[i]->tp_richcompare == held_compares[i].held) {
			held_compares[i + 1] = held_compares[i];
			continue;
		}
		held_compares[i + 1].real = held_compares[i + 1].call = statics[i]->tp_richcompare;
		statics[i]->tp_richcompare = held_compares[i + 1].held;
	}
	held_compares[1].call = list_compare;
	/* frozenset shares set's comparison. */
	if (PyFrozenSet_Type.tp_richcompare == held_compares[4].real)
		PyFrozenSet_Type.tp_richcompare = held_compares[4].held;
	for (size_t i = 0; i < N_HELD_COMPARES; i++)
		if (!held_compares[i].real) {
			PyErr_SetString(PyExc_RuntimeError, "a comparison to hold is missing");
			goto out;
		}
	rc = 0;
out:
	Py_DECREF(cls);
	return rc;
}

/* ---- itertools' iterators stepped from inside their own step ------------------------------ */

/* CPython 3.11's itertools keep what they read of their own state in locals across the call
 * of the user's code (the iterator they step, a key's __eq__, a value's __add__), and that code
 * could step the same object again: islice went on with the iterator the inner step had freed
 * (its next method then ran on memory laid over it), pairwise packed the item the inner step had
 * dropped, count handed its freed running count to the other operand's __radd__, zip_longest
 * released an iterator twice. A generator refuses to be resumed while it runs; while armed, an
 * itertools iterator refuses the same (RuntimeError), which leaves each step whole. */
#define ITER_TYPES_MAX 40
static struct {
	PyTypeObject *type;
	iternextfunc real;
} iter_types[ITER_TYPES_MAX];
static size_t n_iter_types;
static PyObject **stepping; /* the iterators stepping now, innermost last */
static Py_ssize_t n_stepping, stepping_room;

static iternextfunc iter_real(PyTypeObject *t)
{
	for (; t; t = t->tp_base)
		for (size_t i = 0; i < n_iter_types; i++)
			if (iter_types[i].type == t)
				return iter_types[i].real;
	return NULL;
}

static PyObject *iter_step(PyObject *self)
{
	iternextfunc real = iter_real(Py_TYPE(self));
	PyObject *r;

	if (!real) {
		PyErr_SetString(PyExc_SystemError, "a guarded iterator of no known class");
		return NULL;
	}
	if (!pylayer_armed())
		return real(self);
	for (Py_ssize_t i = n_stepping - 1; i >= 0; i--)
		if (stepping[i] == self) {
			PyErr_Format(PyExc_RuntimeError, "%s stepped from inside its own step",
			             Py_TYPE(self)->tp_name);
			return NULL;
		}
	if (n_stepping == stepping_room) {
		Py_ssize_t room = stepping_room ? 2 * stepping_room : 16;
		PyObject **more = PyMem_Realloc(stepping, (size_t)room * sizeof(*more));
		if (!more)
			return PyErr_NoMemory();
		stepping = more;
		stepping_room = room;
	}
	stepping[n_stepping++] = self;
	r = real(self);
	n_stepping--;
	return r;
}

/* Make the iterator class v refuse a step from inside its own step (iter_step). */
static int iter_guard_type(PyObject *v)
{
	PyTypeObject *t = (PyTypeObject *)v;

	if (!PyType_Check(v) || !t->tp_iternext || t->tp_iternext == iter_step ||
	    t->tp_iternext == &_PyObject_NextNotImplemented)
		return 0;
	if (n_iter_types == ITER_TYPES_MAX) {
		PyErr_SetString(PyExc_RuntimeError, "more iterator classes to guard than known");
		return -1;
	}
	iter_types[n_iter_types].type = (PyTypeObject *)Py_NewRef(v);
	iter_types[n_iter_types++].real = t->tp_iternext;
	if (PyDict_GetItemString(t->tp_dict, "__next__") &&
	    rewrap(t, "__next__", (void *)t->tp_iternext, (void *)iter_step) < 0)
		return -1;
	t->tp_iternext = iter_step;
	PyType_Modified(t);
	return 0;
}

/* csv's reader, stepped from inside its own step (its input iterator's __next__ asking it for
 * the next record), appended the outer step's fields to the list the inner step had taken
 * (NULL: SIGSEGV): it refuses as itertools' iterators do. */
static int csv_reader_guard(void)
{
	PyObject *csv = PyImport_ImportModule("_csv"), *r = NULL, *empty = PyTuple_New(0);
	int rc = -1;

	if (csv && empty)
		r = PyObject_CallMethod(csv, "reader", "(O)", empty);
	if (r)
		rc = iter_guard_type((PyObject *)Py_TYPE(r));
	Py_XDECREF(r);
	Py_XDECREF(empty);
	Py_XDECREF(csv);
	return rc;
}

static int itertools_guard(void)
{
	PyObject *it = PyImport_ImportModule("itertools"), *d, *k, *v;
	Py_ssize_t pos = 0;

	if (!it)
		return -1;
	d = PyModule_GetDict(it);
	while (d && PyDict_Next(d, &pos, &k, &v))
		if (iter_guard_type(v) < 0) {
			Py_DECREF(it);
			return -1;
		}
	Py_DECREF(it);
	/* The iterator iter() makes over an object with only __getitem__: a __getitem__ stepping
	 * the same iterator, both steps ending in IndexError, dropped the iterator's one reference
	 * to the object twice (the object freed while a list still held it). */
	if (iter_guard_type((PyObject *)&PySeqIter_Type) < 0)
		return -1;
	return csv_reader_guard();
}

/* ---- itertools' pickle states ------------------------------------------------------------- */

/* copy.deepcopy rebuilds an itertools iterator from what its C __reduce__ gives and hands the
 * state to its C __setstate__, and the user's code runs while the state is copied (an item's
 * __deepcopy__ gets the memo, and the memo answers for any object's copy): the states are
 * checked here as the iterators will use them.
 * - cycle's __reduce__ handed out its own list of saved items (kept alive in the memo): the
 *   user shortened it, and cycle, past its first pass, read the item at its old index (freed:
 *   any memory, then the real builtins). Its reduce and __setstate__ now give and take copies,
 *   and a step past the first pass checks the index against the list (the head of 3.11's
 *   cycle struct: it, saved, index; checked at start).
 * - tee's __setstate__ checked its index only against the size of a data block: a tee set
 *   past the items its block holds read slots never written (any pointer). The index is
 *   checked against the items the block holds (its own reduce counts them).
 * - combinations, combinations_with_replacement and permutations given a state when they
 *   yield nothing (r past the pool's size, or an empty pool) read past their pool or their
 *   indices (SIGSEGV, any pointer): such a state is refused. */
struct cycle_head {
	PyObject_HEAD PyObject *it;
	PyObject *saved;
	Py_ssize_t index;
	int firstpass;
};

static PyTypeObject *cycle_type, *tee_type, *teedata_type;
static iternextfunc cycle_next_real;
static PyObject *cycle_setstate_real, *cycle_reduce_real, *tee_setstate_real, *teedata_reduce;

static PyObject *cycle_step(PyObject *self)
{
	const struct cycle_head *h = (const struct cycle_head *)self;

	if (!h->it && (!PyList_Check(h->saved) ||
	               (PyList_GET_SIZE(h->saved) && h->index >= PyList_GET_SIZE(h->saved)))) {
		PyErr_SetString(PyExc_RuntimeError, "itertools.cycle's saved items changed size");
		return NULL;
	}
	return cycle_next_real(self);
}

/* As 3.11's cycle.__reduce__, with a copy of the saved items. */
static PyObject *cycle_reduce(PyObject *self, PyObject *unused)
{
	const struct cycle_head *h = (const struct cycle_head *)self;
	PyObject *saved, *it, *r;

	(void)unused;
	if (!PyList_Check(h->saved))
		return PyErr_Format(PyExc_RuntimeError,
		                    "itertools.cycle's saved items are no list");
	if (!(saved = PyList_GetSlice(h->saved, 0, PyList_GET_SIZE(h->saved))))
		return NULL;
	if (h->it)
		return Py_BuildValue("O(O)(NO)", Py_TYPE(self), h->it, saved,
		                     h->firstpass ? Py_True : Py_False);
	it = PyObject_GetIter(saved);
	if (it && h->index != 0) {
		r = PyObject_CallMethod(it, "__setstate__", "n", h->index);
		Py_XDECREF(r);
		if (!r)
			Py_CLEAR(it);
	}
	if (!it) {
		Py_DECREF(saved);
		return NULL;
	}
	return Py_BuildValue("O(N)(NO)", Py_TYPE(self), it, saved, Py_True);
}

static PyMethodDef cycle_reduce_def = {"__reduce__", cycle_reduce, METH_NOARGS, NULL};

/* cycle.__setstate__((saved, firstpass)) keeps a copy of saved. */
static PyObject *cycle_setstate(PyObject *self, PyObject *state)
{
	PyObject *own, *r;

	if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 2 ||
	    !PyList_Check(PyTuple_GET_ITEM(state, 0)))
		return PyObject_CallFunctionObjArgs(cycle_setstate_real, self, state, NULL);
	own = PyList_GetSlice(PyTuple_GET_ITEM(state, 0), 0,
	                      PyList_GET_SIZE(PyTuple_GET_ITEM(state, 0)));
	own = own ? Py_BuildValue("(NO)", own, PyTuple_GET_ITEM(state, 1)) : NULL;
	if (!own)
		return NULL;
	r = PyObject_CallFunctionObjArgs(cycle_setstate_real, self, own, NULL);
	Py_DECREF(own);
	return r;
}

static PyMethodDef cycle_setstate_def = {"__setstate__", cycle_setstate, METH_O, NULL};

/* tee.__setstate__((data, index)): index at most the items data holds. */
static PyObject *tee_setstate(PyObject *self, PyObject *state)
{
	PyObject *index, *red = NULL, *own = NULL, *r = NULL;
	Py_ssize_t i, held = -1;

	if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 2 ||
	    !Py_IS_TYPE(PyTuple_GET_ITEM(state, 0), teedata_type))
		return PyObject_CallFunctionObjArgs(tee_setstate_real, self, state, NULL);
	if (!(index = PyNumber_Index(PyTuple_GET_ITEM(state, 1))))
		return NULL;
	/* the block's reduce: (class, (iterator, [items held], next block)) */
	red = PyObject_CallOneArg(teedata_reduce, PyTuple_GET_ITEM(state, 0));
	if (red && PyTuple_Check(red) && PyTuple_GET_SIZE(red) == 2 &&
	    PyTuple_Check(PyTuple_GET_ITEM(red, 1)) &&
	    PyTuple_GET_SIZE(PyTuple_GET_ITEM(red, 1)) == 3 &&
	    PyList_Check(PyTuple_GET_ITEM(PyTuple_GET_ITEM(red, 1), 1)))
		held = PyList_GET_SIZE(PyTuple_GET_ITEM(PyTuple_GET_ITEM(red, 1), 1));
	else if (red)
		PyErr_SetString(PyExc_SystemError, "itertools' tee data is not as known");
	if (held >= 0 && !PyIter_Check(PyTuple_GET_ITEM(PyTuple_GET_ITEM(red, 1), 0))) {
		PyErr_SetString(PyExc_TypeError, "the tee's data reads no iterator");
		goto out;
	}
	i = held < 0 ? -1 : PyLong_AsSsize_t(index);
	if (held < 0 || (i == -1 && PyErr_Occurred())) {
		if (held >= 0 && PyErr_ExceptionMatches(PyExc_OverflowError)) {
			PyErr_Clear();
			i = PY_SSIZE_T_MAX; /* refused below, as too large */
		} else {
			goto out;
		}
	}
	if (i > held) {
		PyErr_SetString(PyExc_ValueError, "Index out of range (past the items the tee's "
		                                  "data holds)");
		goto out;
	}
	if ((own = PyTuple_Pack(2, PyTuple_GET_ITEM(state, 0), index)))
		r = PyObject_CallFunctionObjArgs(tee_setstate_real, self, own, NULL);
out:
	Py_XDECREF(own);
	Py_XDECREF(red);
	Py_DECREF(index);
	return r;
}

static PyMethodDef tee_setstate_def = {"__setstate__", tee_setstate, METH_O, NULL};

/* A tee's data block made by its own class took any object as the source it reads on: a tee set
 * on it called PyIter_Next on an int (no tp_iternext: a call through NULL). The source must be
 * an iterator (tee's __setstate__ checks the source of the block it is given too). */
static newfunc teedata_new_real;
static int held_slot(PyTypeObject *t, size_t offset, void *held, void **real);

static PyObject *teedata_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (PyTuple_Check(args) && PyTuple_GET_SIZE(args) >= 1 &&
	    !PyIter_Check(PyTuple_GET_ITEM(args, 0))) {
		PyErr_SetString(PyExc_TypeError, "a tee's data reads an iterator");
		return NULL;
	}
	return teedata_new_real(t, args, kw);
}

/* combinations (0), combinations_with_replacement (1), permutations (2): a state only when
 * they yield something (the pool and r as their own reduce gives them). */
#define POOL_TYPES 3
static const char *const pool_names[POOL_TYPES] = {"combinations", "combinations_with_replacement",
                                                   "permutations"};
static PyObject *pool_setstate_real[POOL_TYPES], *pool_reduce_real[POOL_TYPES];

static PyObject *pool_setstate(int k, PyObject *self, PyObject *state)
{
	PyObject *red = PyObject_CallOneArg(pool_reduce_real[k], self), *args;
	Py_ssize_t n = -1, r = -1;

	/* (class, (pool, r)[, state]) */
	args = red && PyTuple_Check(red) && PyTuple_GET_SIZE(red) >= 2 ? PyTuple_GET_ITEM(red, 1)
	                                                               : NULL;
	if (args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 2 &&
	    PyTuple_Check(PyTuple_GET_ITEM(args, 0)) && PyLong_Check(PyTuple_GET_ITEM(args, 1))) {
		n = PyTuple_GET_SIZE(PyTuple_GET_ITEM(args, 0));
		r = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 1));
	} else if (red) {
		PyErr_Format(PyExc_SystemError, "itertools.%s is not as known", pool_names[k]);
	}
	Py_XDECREF(red);
	if (r < 0)
		return NULL;
	if (k == 1 ? n == 0 && r > 0 : r > n)
		return PyErr_Format(PyExc_ValueError,
		                    "itertools.%s of %zd from %zd items yields nothing: it takes "
		                    "no state",
		                    pool_names[k], r, n);
	return PyObject_CallFunctionObjArgs(pool_setstate_real[k], self, state, NULL);
}

static PyObject *pool_setstate_0(PyObject *self, PyObject *state)
{
	return pool_setstate(0, self, state);
}

static PyObject *pool_setstate_1(PyObject *self, PyObject *state)
{
	return pool_setstate(1, self, state);
}

static PyObject *pool_setstate_2(PyObject *self, PyObject *state)
{
	return pool_setstate(2, self, state);
}

static PyMethodDef pool_setstate_def[POOL_TYPES] = {
    {"__setstate__", pool_setstate_0, METH_O, NULL},
    {"__setstate__", pool_setstate_1, METH_O, NULL},
    {"__setstate__", pool_setstate_2, METH_O, NULL},
};

/* The head of the cycle struct as cycle_step and cycle_reduce read it: a new cycle over a list
 * of three has its iterator, an empty list, index 0; four steps later no iterator, the three
 * items saved, index 1. */
static int cycle_head_check(void)
{
	PyObject *items = Py_BuildValue("[sss]", "a", "b", "c"), *c, *x;
	const struct cycle_head *h;
	int fits = 0;

	c = items ? PyObject_CallOneArg((PyObject *)cycle_type, items) : NULL;
	if (c && cycle_type->tp_basicsize >= (Py_ssize_t)sizeof(struct cycle_head)) {
		h = (const struct cycle_head *)c;
		fits = h->it && h->saved && PyList_CheckExact(h->saved) &&
		       PyList_GET_SIZE(h->saved) == 0 && h->index == 0 && h->firstpass == 0;
		for (int i = 0; fits && i < 4; i++) {
			x = cycle_next_real(c);
			fits = x && x == PyList_GET_ITEM(items, i % 3);
			Py_XDECREF(x);
		}
		fits = fits && !h->it && PyList_CheckExact(h->saved) &&
		       PyList_GET_SIZE(h->saved) == 3 &&
		       PyList_GET_ITEM(h->saved, 0) == PyList_GET_ITEM(items, 0) && h->index == 1 &&
		       h->firstpass == 0;
	}
	Py_XDECREF(c);
	Py_XDECREF(items);
	if (fits)
		return 0;
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError, "itertools.cycle's state is not as known");
	return -1;
}

static PyTypeObject *itertools_class(PyObject *it, const char *name)
{
	PyObject *t = PyObject_GetAttrString(it, name);

	if (t && !PyType_Check(t)) {
		PyErr_Format(PyExc_TypeError, "itertools.%s is not as known", name);
		Py_CLEAR(t);
	}
	Py_XDECREF(t); /* itertools keeps it */
	return (PyTypeObject *)t;
}

/* A C __setstate__ of an itertools iterator changes what the iterator steps, and copy calls it
 * (on the object a reduce's constructor gave) while the user's code runs: chain's, called from
 * inside a step of that chain, replaced the generator it was running, which was freed while it
 * ran (its frame then laid over by the user's memory: the sandbox escaped). While armed, an
 * iterator stepping now refuses a state (RuntimeError), as it refuses to be stepped again. */
static struct {
	PyTypeObject *type;
	PyObject *real;
} setstate_types[ITER_TYPES_MAX];
static size_t n_setstate_types;

static PyObject *iter_setstate(PyObject *self, PyObject *state)
{
	PyObject *real = NULL;

	for (PyTypeObject *t = Py_TYPE(self); t && !real; t = t->tp_base)
		for (size_t i = 0; i < n_setstate_types && !real; i++)
			if (setstate_types[i].type == t)
				real = setstate_types[i].real;
	if (!real) {
		PyErr_SetString(PyExc_SystemError, "a guarded iterator of no known class");
		return NULL;
	}
	for (Py_ssize_t i = n_stepping - 1; pylayer_armed() && i >= 0; i--)
		if (stepping[i] == self)
			return PyErr_Format(PyExc_RuntimeError, "%s given a state while it steps",
			                    Py_TYPE(self)->tp_name);
	return PyObject_CallFunctionObjArgs(real, self, state, NULL);
}

static PyMethodDef iter_setstate_def = {"__setstate__", iter_setstate, METH_O, NULL};

/* Every itertools class with a __setstate__ of its own (cycle's, tee's and the pools' already
 * checked beneath). */
static int iter_setstates_guard(void)
{
	for (size_t i = 0; i < n_iter_types; i++) {
		PyTypeObject *t = iter_types[i].type;
		if (!PyDict_GetItemString(t->tp_dict, "__setstate__"))
			continue;
		if (replace_method(t, "__setstate__", &iter_setstate_def,
		                   &setstate_types[n_setstate_types].real) < 0)
			return -1;
		setstate_types[n_setstate_types++].type = t;
	}
	return 0;
}

static int itertools_states_guard(void)
{
	PyObject *it = PyImport_ImportModule("itertools");
	int rc = -1;

	if (!it || !(cycle_type = itertools_class(it, "cycle")) ||
	    !(tee_type = itertools_class(it, "_tee")) ||
	    !(teedata_type = itertools_class(it, "_tee_dataobject")))
		goto out;
	for (size_t i = 0; i < n_iter_types; i++)
		if (iter_types[i].type == cycle_type) {
			cycle_next_real = iter_types[i].real;
			iter_types[i].real = cycle_step;
		}
	teedata_reduce = Py_XNewRef(PyDict_GetItemString(teedata_type->tp_dict, "__reduce__"));
	if (!cycle_next_real || !teedata_reduce || !teedata_type->tp_new ||
	    !PyObject_TypeCheck(teedata_reduce, &PyMethodDescr_Type)) {
		PyErr_SetString(PyExc_TypeError, "itertools' cycle and tee are not as known");
		goto out;
	}
	if (cycle_head_check() < 0 ||
	    replace_method(cycle_type, "__reduce__", &cycle_reduce_def, &cycle_reduce_real) < 0 ||
	    replace_method(cycle_type, "__setstate__", &cycle_setstate_def, &cycle_setstate_real) <
	        0 ||
	    replace_method(tee_type, "__setstate__", &tee_setstate_def, &tee_setstate_real) < 0 ||
	    held_slot(teedata_type, offsetof(PyTypeObject, tp_new), (void *)teedata_new,
	              (void **)&teedata_new_real) < 0)
		goto out;
	for (int k = 0; k < POOL_TYPES; k++) {
		PyTypeObject *t = itertools_class(it, pool_names[k]);
		if (!t)
			goto out;
		pool_reduce_real[k] = Py_XNewRef(PyDict_GetItemString(t->tp_dict, "__reduce__"));
		if (!pool_reduce_real[k] ||
		    !PyObject_TypeCheck(pool_reduce_real[k], &PyMethodDescr_Type)) {
			PyErr_Format(PyExc_TypeError, "itertools.%s is not as known",
			             pool_names[k]);
			goto out;
		}
		if (replace_method(t, "__setstate__", &pool_setstate_def[k],
		                   &pool_setstate_real[k]) < 0)
			goto out;
	}
	rc = iter_setstates_guard();
out:
	Py_XDECREF(it);
	return rc;
}

/* ---- functools.partial's state ------------------------------------------------------------ */

/* partial.__setstate__ checked the function, arguments and keywords of its state but kept any
 * object as the partial's instance dict, which the interpreter reads as a dict (its method
 * lookup read a bytes object's data as the dict's keys, then wrote a version into them: any
 * memory). copy.deepcopy hands a new partial of a subclass the state copied through the user's
 * memo. The state must be (callable, tuple, dict or None, dict or None), for a subclass too; a
 * dict subclass as the instance dict is what setting __dict__ takes too.
 * A partial's call hands its function and arguments on without owning them (its vectorcall
 * passes the argument tuple's items; a subclass's call, the function): a __setstate__ while it
 * called freed them under the callee (a list bisect was searching; a list.index walking). The
 * state replaced is kept until the code that ran ends, when no call of the partial runs. */
static PyObject *partial_setstate_real, *partial_reduce;

static PyObject *partial_setstate(PyObject *self, PyObject *state)
{
	PyObject *kw, *dict, *before, *r, *plain, *state2;

	if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 4 ||
	    !PyCallable_Check(PyTuple_GET_ITEM(state, 0)) ||
	    !PyTuple_CheckExact(PyTuple_GET_ITEM(state, 1)) ||
	    ((kw = PyTuple_GET_ITEM(state, 2)) != Py_None && !PyDict_Check(kw)) ||
	    ((dict = PyTuple_GET_ITEM(state, 3)) != Py_None && !PyDict_Check(dict))) {
		PyErr_SetString(PyExc_TypeError, "invalid partial state: (callable, tuple, dict or "
		                                 "None, dict or None) expected");
		return NULL;
	}
	/* The state as partial's own __reduce__ reads it from the object (a subclass's methods
	 * and properties are not asked). */
	before = PyObject_CallOneArg(partial_reduce, self);
	if (!before)
		return NULL;
	/* its keywords by their characters (pylayer_plain_kwargs) */
	plain = kw == Py_None ? Py_NewRef(kw) : pylayer_plain_kwargs(kw);
	state2 = plain ? PyTuple_Pack(4, PyTuple_GET_ITEM(state, 0), PyTuple_GET_ITEM(state, 1),
	                              plain, PyTuple_GET_ITEM(state, 3))
	               : NULL;
	r = state2 ? PyObject_CallFunctionObjArgs(partial_setstate_real, self, state2, NULL) : NULL;
	Py_XDECREF(state2);
	Py_XDECREF(plain);
	hold_until_end(before);
	return r;
}

static PyMethodDef partial_setstate_def = {"__setstate__", partial_setstate, METH_O, NULL};

/* A partial's keywords are given to its function by their characters: a str subclass's name
 * whose __hash__ and __eq__ lie would hide a keyword from a guard's lookup, and its keywords
 * dict was the object itself, which the code could fill after the partial was made. While
 * armed a partial is made with plain names (pylayer_plain_kwargs), and its keywords read as a
 * read-only view. */
static newfunc partial_new_real;
static PyObject *partial_keywords_real;

static PyObject *partial_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	return pylayer_new_plain(partial_new_real, t, args, kw);
}

static PyObject *partial_keywords(PyObject *self, void *closure)
{
	descrgetfunc get = Py_TYPE(partial_keywords_real)->tp_descr_get;
	PyObject *kw = get ? get(partial_keywords_real, self, (PyObject *)Py_TYPE(self)) : NULL, *r;

	(void)closure;
	if (!kw || !PyDict_Check(kw))
		return kw;
	r = PyDictProxy_New(kw);
	Py_DECREF(kw);
	return r;
}

static PyGetSetDef partial_keywords_def = {"keywords", partial_keywords, NULL,
                                           "the keyword arguments a call of it is given, read "
                                           "only",
                                           NULL};

static int partial_guard(void)
{
	PyObject *f = PyImport_ImportModule("_functools"), *t;
	int rc = -1;

	t = f ? PyObject_GetAttrString(f, "partial") : NULL;
	if (t && !PyType_Check(t))
		PyErr_SetString(PyExc_TypeError, "functools.partial is not as known");
	else if (t && (partial_reduce = PyDict_GetItemString(((PyTypeObject *)t)->tp_dict,
	                                                     "__reduce__")) == NULL)
		PyErr_SetString(PyExc_TypeError, "functools.partial has no __reduce__");
	else if (t)
		rc = replace_method((PyTypeObject *)t, "__setstate__", &partial_setstate_def,
		                    &partial_setstate_real);
	if (rc == 0) {
		PyTypeObject *pt = (PyTypeObject *)t;
		PyObject *d;

		rc = -1;
		partial_keywords_real = PyDict_GetItemString(pt->tp_dict, "keywords");
		if (!partial_keywords_real || !pt->tp_new) {
			PyErr_SetString(PyExc_TypeError, "functools.partial is not as known");
		} else if ((d = PyDescr_NewGetSet(pt, &partial_keywords_def)) != NULL) {
			Py_INCREF(partial_keywords_real);
			rc = PyDict_SetItemString(pt->tp_dict, "keywords", d);
			Py_DECREF(d);
			partial_new_real = pt->tp_new;
			pt->tp_new = partial_new;
			PyType_Modified(pt);
		}
	}
	Py_XINCREF(partial_reduce);
	Py_XDECREF(t);
	Py_XDECREF(f);
	return rc;
}

/* ---- deque.index and the text of Unicode errors ----------------------------------------- */

/* deque.index compared each item without owning it: the comparison (a Decimal's asks whether
 * the other is a numbers.Rational, which runs a class's __subclasshook__) emptied the deque and
 * freed the item, and the reflected __eq__ got the freed memory. While armed the search runs
 * over a list of the items (each owned), with CPython's bounds and errors; a deque changed by
 * a comparison raises RuntimeError as CPython's does. */
static PyObject *deque_index_real;

static PyObject *deque_index(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	PyObject *items, *r = NULL;
	Py_ssize_t start = 0, stop = PY_SSIZE_T_MAX, len;

	if (!pylayer_armed())
		return PyObject_Vectorcall(deque_index_real,
		                           (PyObject *[]){self, n > 0 ? args[0] : NULL,
		                                          n > 1 ? args[1] : NULL,
		                                          n > 2 ? args[2] : NULL},
		                           (size_t)n + 1, NULL);
	if (n < 1 || n > 3) {
		PyErr_Format(PyExc_TypeError, "index expected 1 to 3 arguments, got %zd", n);
		return NULL;
	}
	if ((n > 1 && !_PyEval_SliceIndexNotNone(args[1], &start)) ||
	    (n > 2 && !_PyEval_SliceIndexNotNone(args[2], &stop)))
		return NULL;
	if (!(items = PySequence_List(self)))
		return NULL;
	len = PyList_GET_SIZE(items);
	if (start < 0 && (start += len) < 0)
		start = 0;
	if (stop < 0 && (stop += len) < 0)
		stop = 0;
	if (stop > len)
		stop = len;
	for (Py_ssize_t i = start; i < stop && !r; i++) {
		int k = PyObject_RichCompareBool(PyList_GET_ITEM(items, i), args[0], Py_EQ);
		if (k < 0)
			break;
		if (PyObject_Length(self) != len) {
			PyErr_SetString(PyExc_RuntimeError, "deque mutated during iteration");
			break;
		}
		if (k > 0)
			r = PyLong_FromSsize_t(i);
	}
	if (!r && !PyErr_Occurred())
		PyErr_Format(PyExc_ValueError, "%R is not in deque", args[0]);
	Py_DECREF(items);
	return r;
}

static PyMethodDef deque_index_def = {"index", (PyCFunction)(void (*)(void))deque_index,
                                      METH_FASTCALL, NULL};

static int deque_guard(void)
{
	PyObject *c = PyImport_ImportModule("collections"), *cls, *d;
	int rc = -1;

	cls = c ? PyObject_GetAttrString(c, "deque") : NULL;
	Py_XDECREF(c);
	if (!cls)
		return -1;
	if (PyType_Check(cls) &&
	    (deque_index_real = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, "index"))) {
		Py_INCREF(deque_index_real);
		deque_index_def.ml_doc =
		    ((PyMethodDescrObject *)deque_index_real)->d_method->ml_doc;
		d = PyDescr_NewMethod((PyTypeObject *)cls, &deque_index_def);
		rc = d ? PyDict_SetItemString(((PyTypeObject *)cls)->tp_dict, "index", d) : -1;
		Py_XDECREF(d);
		PyType_Modified((PyTypeObject *)cls);
	} else {
		PyErr_SetString(PyExc_TypeError, "collections.deque is not as known");
	}
	Py_DECREF(cls);
	return rc;
}

/* str() of a UnicodeDecodeError (and Encode, Translate) reads its object at its start for the
 * one-character message, checking only start < the object's length: a negative start, or an
 * object of another type (a float's bits read as a length), read any address. The message is
 * made from the object only when start and object agree; otherwise it is the reason. */
static reprfunc unicode_error_str_real[3];

static PyObject *unicode_error_str(int i, PyObject *self)
{
	PyUnicodeErrorObject *e = (PyUnicodeErrorObject *)self;
	PyObject *reason = NULL, *encoding = NULL, *r = NULL, *was_reason, *was_encoding;
	int bytes = i == 0;
	Py_ssize_t len;

	if (!pylayer_armed() || !e->object)
		return unicode_error_str_real[i](self);
	/* The reason's and encoding's text first (the user's __str__ may change the error): the
	 * real str then finds plain strings there and runs nothing of the user's after the
	 * check below. */
	if (!(reason = PyObject_Str(e->reason ? e->reason : Py_None)) ||
	    (i < 2 && !(encoding = PyObject_Str(e->encoding ? e->encoding : Py_None))))
		goto out;
	if (!e->object) {
		r = PyUnicode_FromString("");
		goto out;
	}
	if (bytes ? !PyBytes_Check(e->object) : !PyUnicode_Check(e->object))
		len = -1;
	else
		len = bytes ? PyBytes_GET_SIZE(e->object) : PyUnicode_GET_LENGTH(e->object);
	if (!(e->start >= 0 && e->start < len && e->end >= e->start)) {
		r = Py_NewRef(reason);
		goto out;
	}
	was_reason = e->reason;
	was_encoding = e->encoding;
	e->reason = reason;
	if (i < 2)
		e->encoding = encoding;
	r = unicode_error_str_real[i](self);
	e->reason = was_reason;
	if (i < 2)
		e->encoding = was_encoding;
out:
	Py_XDECREF(reason);
	Py_XDECREF(encoding);
	return r;
}

static PyObject *unicode_error_str_0(PyObject *self)
{
	return unicode_error_str(0, self);
}
static PyObject *unicode_error_str_1(PyObject *self)
{
	return unicode_error_str(1, self);
}
static PyObject *unicode_error_str_2(PyObject *self)
{
	return unicode_error_str(2, self);
}

static int unicode_errors_guard(void)
{
	PyTypeObject *t[3] = {(PyTypeObject *)PyExc_UnicodeDecodeError,
	                      (PyTypeObject *)PyExc_UnicodeEncodeError,
	                      (PyTypeObject *)PyExc_UnicodeTranslateError};
	reprfunc guard[3] = {unicode_error_str_0, unicode_error_str_1, unicode_error_str_2};

	for (int i = 0; i < 3; i++) {
		unicode_error_str_real[i] = t[i]->tp_str;
		t[i]->tp_str = guard[i];
		if (PyDict_GetItemString(t[i]->tp_dict, "__str__") &&
		    rewrap(t[i], "__str__", (void *)unicode_error_str_real[i], (void *)guard[i]) <
		        0)
			return -1;
	}
	return 0;
}

/* ---- list's slice assignment -------------------------------------------------------------- */

/* a[i:j:k] = v computed the slice's positions and length, then iterated v (the user's
 * __iter__), which could empty the list: the items were written at the old positions, past
 * the new end (a NULL array at the least). The value is made a list first. */
static objobjargproc list_assign_real;

static int list_assign(PyObject *self, PyObject *key, PyObject *value)
{
	int rc;

	if (!value || !PySlice_Check(key) || PyList_CheckExact(value) ||
	    PyTuple_CheckExact(value) || !pylayer_armed())
		return list_assign_real(self, key, value);
	if (!(value = PySequence_Fast(value, ((PySliceObject *)key)->step == Py_None
	                                         ? "can only assign an iterable"
	                                         : "must assign iterable to extended slice")))
		return -1;
	rc = list_assign_real(self, key, value);
	Py_DECREF(value);
	return rc;
}

/* ---- callables C code calls without owning them ------------------------------------------ */

/* CPython 3.11 calls a callable it reads from its own object's field without a reference of
 * its own: iter(callable, sentinel)'s step, a defaultdict's default_factory, a property's
 * getter, setter and deleter, a staticmethod called, a classmethod bound. The user's code,
 * running inside that call, cleared the field (the iterator finished from inside, the factory
 * set to None, the property or staticmethod initialised again): a bound built-in method freed
 * while it ran (list.sort on its freed list wrote its size and item array into a block laid
 * over it: any memory, the real builtins). Each is held for the call. The layouts are
 * CPython 3.11's, which no header declares. */
typedef struct {
	PyObject_HEAD PyObject *it_callable, *it_sentinel;
} calliter_layout;
typedef struct {
	PyDictObject dict;
	PyObject *default_factory;
} defdict_layout;
typedef struct {
	PyObject_HEAD PyObject *prop_get, *prop_set, *prop_del, *prop_doc, *prop_name;
	int getter_doc;
} property_layout;
typedef struct {
	PyObject_HEAD PyObject *callable, *dict;
} method_wrapper_layout; /* staticmethod's and classmethod's */

static iternextfunc calliter_next_real;
static descrgetfunc property_get_real, classmethod_get_real;
static descrsetfunc property_set_real;

/* iter(callable, sentinel)'s step, with both held; a sentinel cleared by the call (the
 * iterator finished from inside it) ends the iterator. */
static PyObject *calliter_next(PyObject *self)
{
	calliter_layout *it = (calliter_layout *)self;
	PyObject *c = Py_XNewRef(it->it_callable), *s = Py_XNewRef(it->it_sentinel), *r;
	int ok = 1;

	if (!c) {
		Py_XDECREF(s);
		return NULL;
	}
	r = PyObject_CallNoArgs(c);
	if (r && s && it->it_sentinel && (ok = PyObject_RichCompareBool(s, r, Py_EQ)) == 0)
		goto out;
	if (r ? ok > 0 : PyErr_ExceptionMatches(PyExc_StopIteration)) {
		if (!r)
			PyErr_Clear();
		Py_CLEAR(it->it_callable);
		Py_CLEAR(it->it_sentinel);
	}
	Py_CLEAR(r);
out:
	Py_DECREF(c);
	Py_XDECREF(s);
	return r;
}

/* (A property of an object of a class made after the zygote runs counted as the class's
 * slots do: its functions may be C callables with no frame, run by C code that reads an
 * attribute, a metaclass's __mro__ by numpy's.) */
static PyObject *property_get(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *f = Py_XNewRef(((property_layout *)self)->prop_get), *r;
	int code = obj ? pyreentry_slot_begin(obj) : 0;

	r = property_get_real(self, obj, type);
	code_slots -= code;
	Py_XDECREF(f);
	return r;
}

static int property_set(PyObject *self, PyObject *obj, PyObject *value)
{
	property_layout *p = (property_layout *)self;
	PyObject *set = Py_XNewRef(p->prop_set), *del = Py_XNewRef(p->prop_del);
	int code = pyreentry_slot_begin(obj), rc = property_set_real(self, obj, value);

	code_slots -= code;
	Py_XDECREF(set);
	Py_XDECREF(del);
	return rc;
}

static PyObject *staticmethod_call(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *c = Py_XNewRef(((method_wrapper_layout *)self)->callable), *r;

	if (!c) {
		PyErr_SetString(PyExc_RuntimeError, "uninitialized staticmethod object");
		return NULL;
	}
	r = PyObject_Call(c, args, kw);
	Py_DECREF(c);
	return r;
}

static PyObject *classmethod_get(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *c = Py_XNewRef(((method_wrapper_layout *)self)->callable),
	         *r = classmethod_get_real(self, obj, type);

	Py_XDECREF(c);
	return r;
}

static PyObject *defdict_missing_real;

static PyObject *defdict_missing(PyObject *self, PyObject *key)
{
	PyObject *f = Py_XNewRef(((defdict_layout *)self)->default_factory),
	         *r = PyObject_CallFunctionObjArgs(defdict_missing_real, self, key, NULL);

	Py_XDECREF(f);
	return r;
}

static PyMethodDef defdict_missing_def = {"__missing__", defdict_missing, METH_O, NULL};

/* real (a method descriptor) called on self with args and kw, as the replaced method was. */
static PyObject *call_on(PyObject *real, PyObject *self, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0;
	PyObject *stack[8], **argv = n < 8 ? stack : PyMem_New(PyObject *, (size_t)n + 1), *r;

	if (!argv)
		return PyErr_NoMemory();
	argv[0] = self;
	for (Py_ssize_t k = 0; k < n; k++)
		argv[k + 1] = PyTuple_GET_ITEM(args, k);
	r = PyObject_VectorcallDict(real, argv, (size_t)n + 1, kw);
	if (argv != stack)
		PyMem_Free(argv);
	return r;
}

/* Replace t's method descriptor name by one made of def; *real gets the old one. */
static int replace_method(PyTypeObject *t, const char *name, PyMethodDef *def, PyObject **real)
{
	PyObject *m = PyDict_GetItemString(t->tp_dict, name), *d;

	if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type)) {
		PyErr_Format(PyExc_TypeError, "%s.%s is not as known", t->tp_name, name);
		return -1;
	}
	*real = Py_NewRef(m);
	def->ml_doc = ((PyMethodDescrObject *)m)->d_method->ml_doc;
	d = PyDescr_NewMethod(t, def);
	if (!d || PyDict_SetItemString(t->tp_dict, name, d) < 0) {
		Py_XDECREF(d);
		return -1;
	}
	Py_DECREF(d);
	PyType_Modified(t);
	return 0;
}

/* Slot replacements handed to the classes beneath (a subclass made earlier copied the slot). */
struct slot_swap {
	size_t offset; /* of the slot in PyTypeObject */
	void *real, *held;
};

static int swap_slot(PyTypeObject *t, void *arg)
{
	struct slot_swap *s = arg;
	void **slot = (void **)((char *)t + s->offset);

	if (*slot == s->real) {
		*slot = s->held;
		PyType_Modified(t);
	}
	return 0;
}

static int held_slot(PyTypeObject *t, size_t offset, void *held, void **real)
{
	struct slot_swap s = {offset, *(void **)((char *)t + offset), held};

	*real = s.real;
	return pyguard_walk(t, swap_slot, &s);
}

/* property.getter(None), .setter(None) and .deleter(None) dropped a reference to None they did
 * not own (each call: None freed, the worker aborted). The reference is given to them. */
static PyObject *property_copy_real[3];

static PyObject *property_copy(int i, PyObject *self, PyObject *f)
{
	if (f == Py_None)
		Py_INCREF(Py_None);
	return PyObject_CallFunctionObjArgs(property_copy_real[i], self, f, NULL);
}

static PyObject *property_getter(PyObject *self, PyObject *f)
{
	return property_copy(0, self, f);
}

static PyObject *property_setter(PyObject *self, PyObject *f)
{
	return property_copy(1, self, f);
}

static PyObject *property_deleter(PyObject *self, PyObject *f)
{
	return property_copy(2, self, f);
}

static PyMethodDef property_copy_def[3] = {
    {"getter", property_getter, METH_O, NULL},
    {"setter", property_setter, METH_O, NULL},
    {"deleter", property_deleter, METH_O, NULL},
};

static int callables_guard(void)
{
	PyObject *c = PyImport_ImportModule("collections"), *dd;
	int rc = -1;

	dd = c ? PyObject_GetAttrString(c, "defaultdict") : NULL;
	Py_XDECREF(c);
	if (!dd || !PyType_Check(dd) ||
	    ((PyTypeObject *)dd)->tp_basicsize != (Py_ssize_t)sizeof(defdict_layout)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "collections.defaultdict is not as known");
		goto out;
	}
	if (PyCallIter_Type.tp_basicsize != (Py_ssize_t)sizeof(calliter_layout) ||
	    PyProperty_Type.tp_basicsize != (Py_ssize_t)sizeof(property_layout) ||
	    PyStaticMethod_Type.tp_basicsize != (Py_ssize_t)sizeof(method_wrapper_layout) ||
	    PyClassMethod_Type.tp_basicsize != (Py_ssize_t)sizeof(method_wrapper_layout)) {
		PyErr_SetString(PyExc_TypeError, "a callable's holder is not as known");
		goto out;
	}
	if (replace_method((PyTypeObject *)dd, "__missing__", &defdict_missing_def,
	                   &defdict_missing_real) < 0)
		goto out;
	for (int i = 0; i < 3; i++)
		if (replace_method(&PyProperty_Type, property_copy_def[i].ml_name,
		                   &property_copy_def[i], &property_copy_real[i]) < 0)
			goto out;
	if (held_slot(&PyCallIter_Type, offsetof(PyTypeObject, tp_iternext), (void *)calliter_next,
	              (void **)&calliter_next_real) < 0 ||
	    rewrap(&PyCallIter_Type, "__next__", (void *)calliter_next_real,
	           (void *)calliter_next) < 0)
		goto out;
	if (held_slot(&PyProperty_Type, offsetof(PyTypeObject, tp_descr_get), (void *)property_get,
	              (void **)&property_get_real) < 0 ||
	    rewrap(&PyProperty_Type, "__get__", (void *)property_get_real, (void *)property_get) <
	        0 ||
	    held_slot(&PyProperty_Type, offsetof(PyTypeObject, tp_descr_set), (void *)property_set,
	              (void **)&property_set_real) < 0 ||
	    rewrap(&PyProperty_Type, "__set__", (void *)property_set_real, (void *)property_set) <
	        0 ||
	    rewrap(&PyProperty_Type, "__delete__", (void *)property_set_real,
	           (void *)property_set) < 0)
		goto out;
	{
		void *real;
		if (held_slot(&PyStaticMethod_Type, offsetof(PyTypeObject, tp_call),
		              (void *)staticmethod_call, &real) < 0 ||
		    rewrap(&PyStaticMethod_Type, "__call__", real, (void *)staticmethod_call) < 0)
			goto out;
	}
	if (held_slot(&PyClassMethod_Type, offsetof(PyTypeObject, tp_descr_get),
	              (void *)classmethod_get, (void **)&classmethod_get_real) < 0 ||
	    rewrap(&PyClassMethod_Type, "__get__", (void *)classmethod_get_real,
	           (void *)classmethod_get) < 0)
		goto out;
	rc = 0;
out:
	Py_XDECREF(dd);
	return rc;
}

/* functools.cmp_to_key's keys handed their comparison function the objects they wrap without
 * owning them: a key's obj set to None from inside the comparison (a C callable such as
 * dict.get, whose default's __hash__ ran it) freed the object the comparison then returned
 * (full escape). The layout is CPython 3.11's keyobject. */
typedef struct {
	PyObject_HEAD PyObject *cmp, *object;
} key_layout;

static PyTypeObject *key_type;
static richcmpfunc key_compare_real;

static PyObject *key_compare(PyObject *a, PyObject *b, int op)
{
	PyObject *held[3] = {NULL, NULL, NULL}, *r;

	if (Py_TYPE(a) == key_type) {
		held[0] = Py_XNewRef(((key_layout *)a)->cmp);
		held[1] = Py_XNewRef(((key_layout *)a)->object);
	}
	if (Py_TYPE(b) == key_type)
		held[2] = Py_XNewRef(((key_layout *)b)->object);
	r = key_compare_real(a, b, op);
	for (int i = 0; i < 3; i++)
		Py_XDECREF(held[i]);
	return r;
}

/* str() of an OSError read its errno, strerror and filenames, then formatted them, running the
 * errno's __str__ first: that set filename to None and freed it before its repr (full
 * escape). They are held for the call. */
static reprfunc oserror_str_real;

static PyObject *oserror_str(PyObject *self)
{
	PyOSErrorObject *e = (PyOSErrorObject *)self;
	PyObject *held[4] = {Py_XNewRef(e->myerrno), Py_XNewRef(e->strerror),
	                     Py_XNewRef(e->filename), Py_XNewRef(e->filename2)},
	         *r = oserror_str_real(self);

	for (int i = 0; i < 4; i++)
		Py_XDECREF(held[i]);
	return r;
}

/* bytearray % args formatted over the bytearray's own buffer while the arguments' __bytes__,
 * __index__ and __repr__ ran: one that cleared it had the rest copied from the freed block.
 * While armed the format is a copy. */
static binaryfunc bytearray_mod_real;

static PyObject *bytearray_mod(PyObject *v, PyObject *w)
{
	PyObject *copy, *r;

	if (!pylayer_armed() || !PyByteArray_Check(v))
		return bytearray_mod_real(v, w);
	if (!(copy = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(v), PyByteArray_GET_SIZE(v))))
		return NULL;
	r = PyNumber_Remainder(copy, w);
	Py_DECREF(copy);
	if (r && PyBytes_Check(r))
		Py_SETREF(r, PyByteArray_FromObject(r));
	return r;
}

/* bytearray.__init__ of an existing bytearray (b.__init__(iterable)) appended each item in
 * place, checking its room against the size alone: an iterator (or an item's __index__) that
 * deleted the bytearray's head meanwhile moved its start, and the next items went past its
 * buffer (a neighbour's header written). While armed an iterable source is read first, into a
 * list of plain ints (each item's __index__ run then, its range checked as bytearray's own
 * words say), before the bytearray is touched. */
static initproc bytearray_init_real;

static PyObject *byte_values(PyObject *source)
{
	PyObject *it = PyObject_GetIter(source), *list, *item;

	if (!it) {
		if (PyErr_ExceptionMatches(PyExc_TypeError)) {
			PyErr_Clear();
			PyErr_Format(PyExc_TypeError, "cannot convert '%.200s' object to bytearray",
			             Py_TYPE(source)->tp_name);
		}
		return NULL;
	}
	list = PyList_New(0);
	while (list && (item = PyIter_Next(it)) != NULL) {
		PyObject *n = PyNumber_Index(item);
		long v = n ? PyLong_AsLong(n) : -1;

		Py_DECREF(item);
		if (n && !(v == -1 && PyErr_Occurred()) && (v < 0 || v > 255))
			PyErr_SetString(PyExc_ValueError, "byte must be in range(0, 256)");
		if (n && PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_OverflowError)) {
			PyErr_Clear();
			PyErr_SetString(PyExc_ValueError, "byte must be in range(0, 256)");
		}
		Py_XDECREF(n);
		if (PyErr_Occurred() || !(n = PyLong_FromLong(v)) || PyList_Append(list, n) < 0)
			Py_CLEAR(list);
		Py_XDECREF(n);
	}
	Py_DECREF(it);
	if (list && PyErr_Occurred())
		Py_CLEAR(list);
	return list;
}

static int bytearray_init(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *source = NULL, *plain = NULL, *args2 = NULL, *kw2 = NULL;
	int rc = -1;

	if (!pylayer_armed() || !PyTuple_Check(args))
		return bytearray_init_real(self, args, kw);
	/* (its keywords by their characters: a str subclass's could hide source from a lookup) */
	if (kw && !(kw2 = pylayer_plain_kwargs(kw)))
		return -1;
	if (PyTuple_GET_SIZE(args) > 0)
		source = PyTuple_GET_ITEM(args, 0);
	else if (kw2 && PyDict_Check(kw2))
		source = PyDict_GetItemString(kw2, "source");
	if (!source || PyUnicode_Check(source) || PyObject_CheckBuffer(source)) {
		rc = bytearray_init_real(self, args, kw2);
		goto out;
	}
	Py_INCREF(source);
	/* a count, as bytearray's own reads it (an __index__ raising TypeError makes the source
	 * an iterable there too) */
	if (PyIndex_Check(source)) {
		Py_ssize_t count = PyNumber_AsSsize_t(source, PyExc_OverflowError);
		if (count != -1 || !PyErr_Occurred())
			plain = PyLong_FromSsize_t(count);
		else if (PyErr_ExceptionMatches(PyExc_TypeError))
			PyErr_Clear();
	}
	if (!plain && !PyErr_Occurred())
		plain = byte_values(source);
	Py_DECREF(source);
	if (!plain)
		goto out;
	if (PyTuple_GET_SIZE(args) > 0) {
		/* a new tuple: the caller's is not changed */
		args2 = PyTuple_New(PyTuple_GET_SIZE(args));
		for (Py_ssize_t i = 0; args2 && i < PyTuple_GET_SIZE(args); i++)
			PyTuple_SET_ITEM(args2, i,
			                 Py_NewRef(i == 0 ? plain : PyTuple_GET_ITEM(args, i)));
		rc = args2 ? bytearray_init_real(self, args2, kw2) : -1;
	} else {
		PyObject *kw3 = PyDict_Copy(kw2);
		rc = kw3 && PyDict_SetItemString(kw3, "source", plain) == 0
		         ? bytearray_init_real(self, args, kw3)
		         : -1;
		Py_XDECREF(kw3);
	}
out:
	Py_XDECREF(plain);
	Py_XDECREF(args2);
	Py_XDECREF(kw2);
	return rc;
}

static int borrowed_fields_guard(void)
{
	PyObject *ft = PyImport_ImportModule("functools"), *k;
	void *real;
	int rc = -1;

	k = ft ? PyObject_CallMethod(ft, "cmp_to_key", "O", (PyObject *)&PyLong_Type) : NULL;
	if (!k || Py_TYPE(k)->tp_basicsize != (Py_ssize_t)sizeof(key_layout) ||
	    !Py_TYPE(k)->tp_richcompare) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "functools.cmp_to_key is not as known");
		goto out;
	}
	key_type = Py_TYPE(k);
	key_compare_real = key_type->tp_richcompare;
	key_type->tp_richcompare = key_compare;
	PyType_Modified(key_type);
	if (held_slot((PyTypeObject *)PyExc_OSError, offsetof(PyTypeObject, tp_str),
	              (void *)oserror_str, &real) < 0 ||
	    rewrap((PyTypeObject *)PyExc_OSError, "__str__", real, (void *)oserror_str) < 0)
		goto out;
	oserror_str_real = (reprfunc)real;
	bytearray_mod_real = PyByteArray_Type.tp_as_number->nb_remainder;
	PyByteArray_Type.tp_as_number->nb_remainder = bytearray_mod;
	if (rewrap(&PyByteArray_Type, "__mod__", (void *)bytearray_mod_real,
	           (void *)bytearray_mod) < 0 ||
	    rewrap(&PyByteArray_Type, "__rmod__", (void *)bytearray_mod_real,
	           (void *)bytearray_mod) < 0)
		goto out;
	bytearray_init_real = PyByteArray_Type.tp_init;
	PyByteArray_Type.tp_init = bytearray_init;
	if (rewrap(&PyByteArray_Type, "__init__", (void *)bytearray_init_real,
	           (void *)bytearray_init) < 0)
		goto out;
	PyType_Modified(&PyByteArray_Type);
	rc = 0;
out:
	Py_XDECREF(k);
	Py_XDECREF(ft);
	return rc;
}

/* ---- generators thrown into from inside their own throw ----------------------------------- */

/* A generator or coroutine suspended in `yield from` / `await` hands throw() (and close()) to
 * the iterator it waits on, marked running meanwhile; CPython 3.11 does not ask whether it is
 * running first. That iterator's own throw() calling the generator's throw() again popped the
 * generator's stack once more at each level: its local variables were freed while its frame
 * still held them, and the generator returned a fake object made in their memory. A running
 * generator, coroutine, or one driven by a coroutine's __await__ or an asynchronous
 * generator's asend/athrow, is refused, as later CPython refuses it, and so is one that waits
 * on a running one (run_call). */
#define GEN_EXECUTING 0 /* PyGenObject's frame state while it runs (FRAME_EXECUTING) */

enum { RUN_GEN, RUN_CORO, RUN_WRAPPER, RUN_ASEND, RUN_ATHROW, N_RUN };

/* The coroutine wrapper, asend and athrow objects: the generator they drive, first. */
struct gen_driver {
	PyObject_HEAD PyObject *gen;
};

static PyTypeObject *const run_types[N_RUN] = {
    &PyGen_Type,
    &PyCoro_Type,
    &_PyCoroWrapper_Type,
    &_PyAsyncGenASend_Type,
    &_PyAsyncGenAThrow_Type,
};
static PyObject *run_real[N_RUN][2]; /* throw, close */

static int gen_like(PyObject *o)
{
	return PyGen_CheckExact(o) || PyCoro_CheckExact(o) || PyAsyncGen_CheckExact(o);
}

static int gen_driven_by(PyObject *o)
{
	return Py_IS_TYPE(o, &_PyCoroWrapper_Type) || Py_IS_TYPE(o, &_PyAsyncGenASend_Type) ||
	       Py_IS_TYPE(o, &_PyAsyncGenAThrow_Type);
}

/* The generator g waits on (yield from, await) when it is one too, or NULL (a new reference).
 * The getters are C: nothing of the code's runs. */
static PyObject *delegate_of(PyObject *g)
{
	const char *name = PyCoro_CheckExact(g)       ? "cr_await"
	                   : PyAsyncGen_CheckExact(g) ? "ag_await"
	                                              : "gi_yieldfrom";
	PyObject *d = PyObject_GetAttrString(g, name), *inner;

	if (!d) {
		PyErr_Clear();
		return NULL;
	}
	if (gen_like(d))
		return d;
	inner = gen_driven_by(d) ? Py_XNewRef(((struct gen_driver *)d)->gen) : NULL;
	Py_DECREF(d);
	if (inner && !gen_like(inner))
		Py_CLEAR(inner);
	return inner;
}

/* CPython hands a throw() or close() down the chain of generators waiting on each other
 * itself, without a method or a check: the generator called and every one it waits on must be
 * at rest (a generator suspended in `yield from outer` took a throw() into the running outer). */
static PyObject *run_call(int k, int close, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *g = Py_XNewRef(k <= RUN_CORO ? self : ((struct gen_driver *)self)->gen), *next;

	for (int depth = 0; g && gen_like(g) && depth < 100000; depth++) {
		/* (a generator, coroutine and asynchronous generator share their head) */
		if (((PyGenObject *)g)->gi_frame_state == GEN_EXECUTING) {
			Py_DECREF(g);
			PyErr_SetString(PyExc_ValueError, "generator already executing");
			return NULL;
		}
		next = delegate_of(g);
		Py_DECREF(g);
		g = next;
	}
	Py_XDECREF(g);
	return call_on(run_real[k][close], self, args, kw);
}

#define RUN_GUARDS(k)                                                                              \
	static PyObject *run_throw_##k(PyObject *self, PyObject *args, PyObject *kw)               \
	{                                                                                          \
		return run_call(k, 0, self, args, kw);                                             \
	}                                                                                          \
	static PyObject *run_close_##k(PyObject *self, PyObject *args, PyObject *kw)               \
	{                                                                                          \
		return run_call(k, 1, self, args, kw);                                             \
	}
RUN_GUARDS(0)
RUN_GUARDS(1)
RUN_GUARDS(2)
RUN_GUARDS(3)
RUN_GUARDS(4)

#define RUN_DEFS(k)                                                                                \
	{                                                                                          \
		{"throw", (PyCFunction)(void (*)(void))run_throw_##k,                              \
		 METH_VARARGS | METH_KEYWORDS, NULL},                                              \
		{                                                                                  \
			"close", (PyCFunction)(void (*)(void))run_close_##k,                       \
			    METH_VARARGS | METH_KEYWORDS, NULL                                     \
		}                                                                                  \
	}
static PyMethodDef run_defs[N_RUN][2] = {RUN_DEFS(0), RUN_DEFS(1), RUN_DEFS(2), RUN_DEFS(3),
                                         RUN_DEFS(4)};

static int generators_guard(void)
{
	for (int k = 0; k < N_RUN; k++) {
		if (run_types[k]->tp_basicsize < (Py_ssize_t)sizeof(struct gen_driver)) {
			PyErr_Format(PyExc_TypeError, "%s is not as known", run_types[k]->tp_name);
			return -1;
		}
		for (int m = 0; m < 2; m++)
			if (replace_method(run_types[k], run_defs[k][m].ml_name, &run_defs[k][m],
			                   &run_real[k][m]) < 0)
				return -1;
	}
	return 0;
}

/* ---- finalizers of classes made in a call ---------------------------------------------------
 * A class's __del__ runs wherever its object dies: in the middle of a late import too (the
 * collector between two of its module's instructions; an entry evicted from a library's
 * cache by the module's own code), with the module's frame the current one. One that is C
 * code (a partial of setattr) has no frame of its own, and its writes were taken for the
 * module's. While a finalizer of a class made in a call runs, nothing is the import's. */
static int finalizing; /* finalizers of classes made in a call running */
/* The objects whose finalizers run, innermost last (a finalizer's own object may still sit in
 * the array slot a compiled writer dropped it from: pyreentry_being_finalized). */
#define FINALIZING_MAX 64
static PyObject *finalizing_objects[FINALIZING_MAX];

static void finalizing_begin(PyObject *self)
{
	if (finalizing < FINALIZING_MAX)
		finalizing_objects[finalizing] = self;
	finalizing++;
}

static void finalizing_end(void)
{
	finalizing--;
}

int pyreentry_being_finalized(PyObject *o)
{
	/* (past the record's room, any object may be one) */
	if (finalizing > FINALIZING_MAX)
		return 1;
	for (int i = 0; i < finalizing && i < FINALIZING_MAX; i++)
		if (finalizing_objects[i] == o)
			return 1;
	return 0;
}

/* ---- finalizers deferred to the user's own code -------------------------------------------
 * Compiled libraries drop the object a slot holds before they store the next one: numpy's
 * copies into arrays of objects, and Cython's every assignment (an object array's item through
 * a memoryview, as pandas' pad_inplace fills, an extension class's attribute). An object whose
 * last reference that was ran its finalizer there, with the slot still pointing at it: code the
 * finalizer ran that wrote the same slot through another compiled writer dropped the object a
 * second time (freed while the array still held it: a forged object in its place). Holds around
 * numpy's own writes cannot see Cython's, and CPython's own C code does the same (3.11's
 * contextvar_set drops the context's old map before it writes the variable's cache). So in
 * every mode, a finalizer of the code's (a class's __del__, a C finalizer a class of the code's
 * inherits, a weak reference's callback) that comes while a call runs is deferred: its object
 * is kept (resurrected, as a __del__ that stores self does) and the finalizer runs where no
 * library is halfway through a write: between two instructions of the user's own frame (a
 * pending call, as the collector's ticks), or when the call's code ends. (A collection the tick
 * makes is such a point, but not what its finalizers run in turn: they are deferred too.) The
 * same holds for the finalizers of C classes (io's close, which calls a raw object's methods:
 * the code's) and for the deallocation of objects whose end runs code
 * (pyreentry_dealloc_later). */
/* list of (None, object) to finalize, (object,) to release, (callback, arguments), oldest
 * first */
static PyObject *deferred;
static int deferred_queued;          /* deferred_due waits among the pending calls */
static PyObject *dropping;           /* an object whose deferred finalizer ran, being released */
static unsigned long deferred_total; /* entries ever kept */

static int deferred_due(void *unused);

/* Memory ran out as a finalizer or a release was put off: running it now, inside the library
 * code that dropped its object, is what putting it off prevents (a __del__ that set the attribute
 * its setter was dropping freed the old value twice), so the process ends. */
_Noreturn static void defer_failed_closed(void)
{
	_exit(WORKER_EXIT_DEFER);
}

/* Add an entry of n items to the deferred list and see that the pending call will run it: the
 * entry is in the list before it holds them (an entry that could not be kept is released
 * holding nothing: a tuple freed deep in a chain of frees is put aside by CPython's trashcan,
 * with what it holds still held, V98a H1). Ends the process when memory runs out. Leaves the
 * error indicator as it found it. */
static void deferred_add(PyObject *const *items, Py_ssize_t n)
{
	PyObject *type, *value, *tb, *entry;

	PyErr_Fetch(&type, &value, &tb);
	entry = PyTuple_New(n);
	if (!entry || (!deferred && !(deferred = PyList_New(0))) ||
	    PyList_Append(deferred, entry) < 0)
		defer_failed_closed();
	for (Py_ssize_t i = 0; i < n; i++)
		PyTuple_SET_ITEM(entry, i, Py_NewRef(items[i]));
	Py_DECREF(entry); /* (the list's now) */
	deferred_total++;
	if (!deferred_queued) {
		deferred_queued = 1;
		if (Py_AddPendingCall(deferred_due, NULL) < 0)
			deferred_queued = 0;
	}
	PyErr_Restore(type, value, tb);
}

/* Keep (cb, o) to run later, if finalizers are deferred now: 1, or 0 (run it now). */
static int defer(PyObject *cb, PyObject *o)
{
	if (!pylayer_armed())
		return 0;
	deferred_add((PyObject *[]){cb, o}, 2);
	return 1;
}

/* Generators, coroutines and asynchronous generators that go suspended run their handlers
 * (finally, with, except) and close what they delegate to when they die: deferred the same.
 * One whose close runs no code (never started, ended, or with no handler: a generator
 * expression that any() left) goes at once. */
static PyTypeObject *const gen_types[] = {&PyGen_Type, &PyCoro_Type, &PyAsyncGen_Type};
#define N_GEN_TYPES (sizeof(gen_types) / sizeof(gen_types[0]))
static destructor gen_finalize_real[N_GEN_TYPES];

static destructor gen_finalizer_of(PyObject *self)
{
	for (size_t i = 0; i < N_GEN_TYPES; i++)
		if (Py_IS_TYPE(self, gen_types[i]))
			return gen_finalize_real[i];
	return NULL;
}

static void gen_finalize_deferred(PyObject *self)
{
	destructor f = gen_finalizer_of(self);

	if (pyframe_gen_close_runs_code(self) && (self == dropping || defer(Py_None, self)))
		return;
	if (f)
		f(self);
}

static int gen_finalizers_deferred(void)
{
	for (size_t i = 0; i < N_GEN_TYPES; i++) {
		gen_finalize_real[i] = gen_types[i]->tp_finalize;
		if (!gen_finalize_real[i]) {
			PyErr_Format(PyExc_TypeError, "%s's finalizer is not as known",
			             gen_types[i]->tp_name);
			return -1;
		}
		gen_types[i]->tp_finalize = gen_finalize_deferred;
	}
	return 0;
}

/* The other finalizers of C classes (io's, asyncio's futures'): each class that has one of its
 * own, with it, so that a class beneath that copied the slot finds it. */
#define C_FINALIZERS_MAX 256
static struct {
	PyTypeObject *t;
	destructor real;
} c_finalizers[C_FINALIZERS_MAX];
static int n_c_finalizers;

static void finalize_c_deferred(PyObject *self);

static destructor c_finalizer_of(PyTypeObject *t)
{
	for (int i = 0; i < n_c_finalizers; i++)
		if (c_finalizers[i].t == t)
			return c_finalizers[i].real;
	return NULL;
}

/* The finalizer self's class runs: CPython's __del__ slot, a generator's, or a C class's (one it
 * inherits too: io.IOBase's calls the object's close, which the code may have made anything),
 * found beneath the wrappers of this file. */
static destructor finalizer_of(PyObject *self)
{
	PyObject *mro = Py_TYPE(self)->tp_mro;

	if (Py_TYPE(self)->tp_finalize == gen_finalize_deferred)
		return gen_finalizer_of(self);
	for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		destructor f = b->tp_finalize;
		if (!f || f == finalize_inherited)
			continue;
		if (f == finalize_counted)
			return finalize_real;
		if (f == finalize_c_deferred) {
			if ((f = c_finalizer_of(b)))
				return f;
			continue;
		}
		return f;
	}
	return NULL;
}

static void finalize_now(PyObject *self)
{
	destructor f = finalizer_of(self);

	finalizing_begin(self);
	if (f)
		f(self);
	finalizing_end();
}

static void finalize_counted(PyObject *self)
{
	/* (a class that is not collected calls its finalizer at every release: not again for the
	 * release that follows the one deferred) */
	if (self == dropping || defer(Py_None, self))
		return;
	finalize_now(self);
}

/* A class made in a call that inherits a C base's finalizer: that one, counted the same. */
static void finalize_inherited(PyObject *self)
{
	if (self == dropping || defer(Py_None, self))
		return;
	finalize_now(self);
}

/* A C class's own finalizer (and a library class's beneath it that copied it). */
static void finalize_c_deferred(PyObject *self)
{
	destructor f;

	if (self == dropping || defer(Py_None, self))
		return;
	if ((f = finalizer_of(self)))
		f(self);
}

/* Every class the interpreter has now whose finalizer is not one of this file's: a C class's
 * own is kept in the table and replaced; a library class's __del__ (CPython's slot) is
 * counted and deferred as the code's (tempfile's, tqdm's: they call the objects they hold). */
static int c_finalizer_deferred(PyTypeObject *t, void *unused)
{
	destructor f = t->tp_finalize;

	(void)unused;
	if (!f || f == finalize_counted || f == finalize_inherited || f == finalize_c_deferred ||
	    f == gen_finalize_deferred)
		return 0;
	if (f == finalize_real) {
		t->tp_finalize = finalize_counted;
		return 0;
	}
	if (!c_finalizer_of(t)) {
		if (n_c_finalizers == C_FINALIZERS_MAX) {
			PyErr_SetString(PyExc_RuntimeError,
			                "more C classes with finalizers than known");
			return -1;
		}
		c_finalizers[n_c_finalizers].t = t;
		c_finalizers[n_c_finalizers++].real = f;
	}
	t->tp_finalize = finalize_c_deferred;
	return 0;
}

static int c_finalizers_deferred(void)
{
	return pyguard_walk(&PyBaseObject_Type, c_finalizer_deferred, NULL);
}

void pyreentry_finalizers_again(void)
{
	if (finalize_real && c_finalizers_deferred() < 0)
		PyErr_Clear();
}

/* The end of o, whose count has just reached 0 in its class's tp_dealloc, put off as a
 * finalizer is (its end runs code: an iterator's write-back casts objects through their
 * __float__): o is kept (its count 1 again, the list's) and released where finalizers run,
 * its tp_dealloc then going on (pyreentry_dealloc_dropping). 1, or 0: end it now. */
int pyreentry_dealloc_later(PyObject *o)
{
	if (!pydata_ndarray() || !pylayer_armed() || o == dropping)
		return 0;
	Py_SET_REFCNT(o, 1);
	deferred_add(&o, 1);
	/* (the count the list holds: never a release here) */
	Py_SET_REFCNT(o, Py_REFCNT(o) - 1);
	return 1;
}

static void callback_now(PyObject *cb, PyObject *args)
{
	PyObject *r;

	finalizing_begin(NULL);
	r = PyObject_Call(cb, args, NULL);
	finalizing_end();
	if (!r)
		PyErr_WriteUnraisable(cb);
	Py_XDECREF(r);
}

/* Run what was deferred, oldest first, and what that defers in turn. */
static void deferred_run(void)
{
	PyObject *type, *value, *tb;

	if (!deferred || PyList_GET_SIZE(deferred) == 0)
		return;
	PyErr_Fetch(&type, &value, &tb);
	while (deferred && PyList_GET_SIZE(deferred) > 0) {
		PyObject *batch = deferred;

		deferred = NULL;
		for (Py_ssize_t i = 0; i < PyList_GET_SIZE(batch); i++) {
			PyObject *e = PyList_GET_ITEM(batch, i), *was = dropping;
			int release = PyTuple_GET_SIZE(e) == 1;
			PyObject *cb = release ? NULL : PyTuple_GET_ITEM(e, 0);
			PyObject *o = PyTuple_GET_ITEM(e, release ? 0 : 1);

			if (release || cb == Py_None) {
				if (!release)
					finalize_now(o);
				/* the entry's reference goes with it: not finalized or put off again */
				dropping = o;
				Py_INCREF(Py_None);
				PyTuple_SET_ITEM(e, release ? 0 : 1, Py_None);
				Py_DECREF(o);
				dropping = was;
			} else {
				callback_now(cb, o);
			}
		}
		Py_DECREF(batch);
	}
	PyErr_Restore(type, value, tb);
}

/* The pending call: in the user's own frame only. Come in a library's, it asks the collector's
 * tick handler to look again at the next point the interpreter checks (a bounded number of times
 * after each tick: pygc_ask_again), which queues it once the user's frame is the innermost.
 * Not in a library's frame while threads run either, although a thread switch may run any code
 * there: the sandbox's own checks (pydata.py) run there between a check of an array and the
 * kernel it guards, and a finalizer a thread's garbage queued ran in that gap within
 * milliseconds (a thread's switch alone took seconds to hit it: V82b). */
static int deferred_due(void *unused)
{
	(void)unused;
	deferred_queued = 0;
	if (pyguard_frame_is_users())
		deferred_run();
	else if (deferred && PyList_GET_SIZE(deferred) > 0)
		pygc_ask_again();
	return 0;
}

void pyreentry_deferred_run(void)
{
	deferred_run();
}

unsigned long pyreentry_deferred_count(void)
{
	return deferred_total;
}

void pyreentry_deferred_tick(void)
{
	if (!deferred || PyList_GET_SIZE(deferred) == 0 || deferred_queued)
		return;
	if (!pyguard_frame_is_users()) {
		pygc_ask_again();
		return;
	}
	deferred_queued = 1;
	if (Py_AddPendingCall(deferred_due, NULL) < 0)
		deferred_queued = 0;
}

int pyreentry_finalizing(void)
{
	return finalizing > 0;
}

int pyreentry_code_runs(void)
{
	return finalizing > 0 || code_slots > 0;
}

/* A weak reference's callback runs where its object dies, inside whatever C code dropped the
 * last reference, and may be C callables with no frame: the code's weakref.ref(x, cb) (the
 * type is reachable from objects the libraries hold) is made with cb wrapped, so that it runs
 * as a finalizer of the code's does, counted (an array a library held died inside compiled
 * code's own_arrays scope and its callback ran the code's there). */
struct counted_cb {
	PyObject_HEAD PyObject *cb;
};

static PyObject *counted_cb_call(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *cb = Py_NewRef(((struct counted_cb *)self)->cb), *r;

	if (!kw && PyTuple_Check(args) && defer(cb, args)) {
		Py_DECREF(cb);
		Py_RETURN_NONE;
	}
	finalizing_begin(NULL);
	r = PyObject_Call(cb, args, kw);
	finalizing_end();
	Py_DECREF(cb);
	return r;
}

static int counted_cb_traverse(PyObject *self, visitproc visit, void *arg)
{
	Py_VISIT(((struct counted_cb *)self)->cb);
	return 0;
}

static int counted_cb_clear(PyObject *self)
{
	Py_CLEAR(((struct counted_cb *)self)->cb);
	return 0;
}

static void counted_cb_dealloc(PyObject *self)
{
	PyObject_GC_UnTrack(self);
	counted_cb_clear(self);
	PyObject_GC_Del(self);
}

static PyTypeObject counted_cb_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "weakref_callback",
    .tp_basicsize = sizeof(struct counted_cb),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_call = counted_cb_call,
    .tp_traverse = counted_cb_traverse,
    .tp_clear = counted_cb_clear,
    .tp_dealloc = counted_cb_dealloc,
};

static newfunc weakref_new_real;

static PyObject *weakref_new_counted(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	PyObject *cb, *nargs, *r;
	struct counted_cb *c;

	if (!pylayer_armed() || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 2 ||
	    (cb = PyTuple_GET_ITEM(args, 1)) == Py_None || Py_IS_TYPE(cb, &counted_cb_type))
		return weakref_new_real(t, args, kw);
	/* (a new tuple: a slice of the whole is the caller's own, R(*t) the code's t) */
	if (!(nargs = PyTuple_New(PyTuple_GET_SIZE(args))))
		return NULL;
	if (!(c = PyObject_GC_New(struct counted_cb, &counted_cb_type))) {
		Py_DECREF(nargs);
		return NULL;
	}
	c->cb = Py_NewRef(cb);
	PyObject_GC_Track((PyObject *)c);
	for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(args); k++)
		PyTuple_SET_ITEM(nargs, k,
		                 k == 1 ? (PyObject *)c : Py_NewRef(PyTuple_GET_ITEM(args, k)));
	r = weakref_new_real(t, nargs, kw);
	Py_DECREF(nargs);
	return r;
}

/* t and the classes beneath it that make their references as it does. */
static int weakref_classes_counted(PyTypeObject *t)
{
	PyObject *subs;

	if (t->tp_new == weakref_new_real)
		t->tp_new = weakref_new_counted;
	if (!(subs = PyObject_CallMethod((PyObject *)t, "__subclasses__", NULL)))
		return -1;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++)
		if (weakref_classes_counted((PyTypeObject *)PyList_GET_ITEM(subs, i)) < 0) {
			Py_DECREF(subs);
			return -1;
		}
	Py_DECREF(subs);
	return 0;
}

static int weakref_callbacks_guard(void)
{
	if (PyType_Ready(&counted_cb_type) < 0)
		return -1;
	weakref_new_real = _PyWeakref_RefType.tp_new;
	if (!weakref_new_real) {
		PyErr_SetString(PyExc_TypeError, "weakref.ref is not as known");
		return -1;
	}
	return weakref_classes_counted(&_PyWeakref_RefType);
}

/* CPython's __del__ slot, from a class that has one. */
static int finalizers_guard(void)
{
	PyObject *t = PyObject_CallFunction((PyObject *)&PyType_Type, "s(){sO}", "probe", "__del__",
	                                    (PyObject *)&PyLong_Type);

	if (!t)
		return -1;
	finalize_real = ((PyTypeObject *)t)->tp_finalize;
	Py_DECREF(t);
	t = PyObject_CallFunction((PyObject *)&PyType_Type, "s(){sO}", "probe", "__hash__",
	                          (PyObject *)&PyLong_Type);
	if (!t)
		return -1;
	hash_real = ((PyTypeObject *)t)->tp_hash;
	Py_DECREF(t);
	if (!hash_real) {
		PyErr_SetString(PyExc_TypeError, "a class's __hash__ slot is not as known");
		return -1;
	}
	if (!finalize_real) {
		PyErr_SetString(PyExc_TypeError, "a class's __del__ slot is not as known");
		return -1;
	}
	return 0;
}

/* ---- numpy arrays' own attributes ------------------------------------------------------------
 * Checks of the libraries' Python code read an array's shape (and dtype, strides, len) by
 * attribute, and their C code then uses the array's own: an ndarray subclass of the code's
 * whose shape property answered another shape than its memory has (scipy.ndimage's indices
 * and outputs, cdist's out) had the C code write past it (any address). Compiled kernels also
 * take an array's size of the array and its memory of what its view() or astype() answers
 * (pandas' date offsets walked the size over a shorter array: writes past it). And numpy's C
 * code calls a subclass's __array_finalize__ while it builds an array, and reads its
 * __array_priority__ in the middle of a routine: the code reshaped the array being built
 * (concatenate then copied by the new shape, past the block), took a view of an input whose
 * dimension repeat had set to the repeated total (all memory past it), reshaped an input under
 * concatenate and dot (V43b). A class made in a call beneath numpy.ndarray may not define them,
 * nor the lookup itself. */
static const char *const array_own[] = {
    "shape",
    "dtype",
    "strides",
    "ndim",
    "size",
    "itemsize",
    "nbytes",
    "flags",
    "data",
    "base",
    "T",
    "ctypes",
    "__len__",
    "__getattribute__",
    "__getattr__",
    "view",
    "astype",
    "ravel",
    "reshape",
    "copy",
    "flatten",
    "squeeze",
    "transpose",
    "__array__",
    "__array_finalize__",
    "__array_priority__",
    "__array_prepare__",
    NULL,
};

/* Why the class may not define name. */
static const char *array_own_why(const char *name)
{
	return name && strcmp(name, "__array_finalize__") == 0
	           ? "numpy's C code calls it in the middle of its work on arrays of the class "
	             "(and "
	             "numpy's own subclasses' finalizers call methods a subclass overrides): "
	             "subclass numpy.ndarray itself"
	       : name && (strcmp(name, "__array_priority__") == 0 ||
	                  strcmp(name, "__array_prepare__") == 0)
	           ? "numpy's C code reads or calls it in the middle of its work on arrays of the "
	             "class"
	           : "numpy's checks read it of a subclass, and its C code uses the array's own";
}

static int array_own_name(PyObject *name)
{
	for (const char *const *n = array_own; PyUnicode_Check(name) && *n; n++)
		if (PyUnicode_CompareWithASCIIString(name, *n) == 0)
			return 1;
	return 0;
}

static int array_own_refused(PyTypeObject *t, PyObject *name)
{
	PyErr_Format(PyExc_TypeError, "%s cannot define %S in the sandbox: %s", t->tp_name, name,
	             array_own_why(PyUnicode_AsUTF8(name)));
	return -1;
}

/* The class of t's MRO that defines name, or NULL. */
static PyTypeObject *defined_by(PyTypeObject *t, const char *name)
{
	PyObject *mro = t->tp_mro;

	for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if (b->tp_dict && PyDict_GetItemString(b->tp_dict, name))
			return b;
	}
	return NULL;
}

/* Is b numpy's own (ndarray, or one of numpy's subclasses the zygote had: MaskedArray,
 * matrix, recarray answer honestly), or object (its __getattribute__)? */
static int numpy_own(PyTypeObject *b, PyTypeObject *nd)
{
	PyObject *m;
	const char *s;

	if (b == nd || b == &PyBaseObject_Type)
		return 1;
	/* (an array class: numpy.lib's Arrayterator is numpy's too, and answers the shape the
	 * code set on it) */
	if (!PyType_IsSubtype(b, nd) || !pyguard_sealed_class((PyObject *)b) || !b->tp_dict)
		return 0;
	m = PyDict_GetItemString(b->tp_dict, "__module__");
	s = m && PyUnicode_CheckExact(m) ? PyUnicode_AsUTF8(m) : NULL;
	if (!s)
		PyErr_Clear();
	return s && (strcmp(s, "numpy") == 0 || strncmp(s, "numpy.", 6) == 0);
}

/* ---- numbers of the code's -------------------------------------------------------------
 * A class beneath int, float, complex or numpy's scalars is a number to C code, which reads its
 * value; the checks in Python before it read what the class answers: an int subclass whose
 * comparisons answered the range check (scikit-learn's interaction constraints, scipy's
 * B-spline degree, a blur radius) had compiled code index by its real value (histograms
 * written past, knots read past), and one whose __float__ answered another value than the one
 * checked gave C code that value. A class made in a call beneath them takes its comparisons,
 * arithmetic and conversions only from classes that answer by the value (C's, enum's): not
 * from its own namespace, a mixin (UserString compares its data), or a later assignment. */
static const char *const number_own[] = {
    "__lt__",       "__le__",        "__eq__",        "__ne__",      "__gt__",       "__ge__",
    "__add__",      "__radd__",      "__iadd__",      "__sub__",     "__rsub__",     "__isub__",
    "__mul__",      "__rmul__",      "__imul__",      "__truediv__", "__rtruediv__", "__itruediv__",
    "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__",     "__rmod__",     "__imod__",
    "__divmod__",   "__rdivmod__",   "__pow__",       "__rpow__",    "__ipow__",     "__lshift__",
    "__rlshift__",  "__ilshift__",   "__rshift__",    "__rrshift__", "__irshift__",  "__and__",
    "__rand__",     "__iand__",      "__or__",        "__ror__",     "__ior__",      "__xor__",
    "__rxor__",     "__ixor__",      "__neg__",       "__pos__",     "__abs__",      "__invert__",
    "__int__",      "__float__",     "__index__",     "__complex__", "__bool__",     "__round__",
    "__trunc__",    "__floor__",     "__ceil__",      NULL,
};

/* And a class beneath datetime's date, time or timedelta is a date to compiled code: pandas'
 * reads a date's fields by their names (its JSON writer, Period, the offsets) and indexed its
 * table of month lengths by the month a class's property answered (V98b H3/H4: ints past the
 * table read back). Such a class takes its fields from the classes that answer by value. */
static const char *const date_own[] = {
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "microsecond",
    "tzinfo",
    "fold",
    "value",
    "nanosecond",
    "days",
    "seconds",
    "microseconds",
    /* (which would answer any of them: V99a H1) */
    "__getattribute__",
    "__getattr__",
    NULL,
};

static const struct value_kind {
	const char *const *own; /* the names compiled code reads of the value */
	const char *why;
} number_kind = {number_own,
                 "a class beneath int, float, complex or a numpy scalar is a number to compiled "
                 "code, which reads its value, not what the class answers"},
  date_kind = {date_own, "a class beneath datetime's date, time or timedelta is a date to "
                         "compiled code, which reads its fields, not what the class answers"};

#define NUMBER_TYPES 7

/* The i-th class of values: int, float, complex, numpy's scalars (numpy.generic: its integers
 * are not beneath int) when numpy is loaded, datetime's date, time and timedelta; NULL past
 * them. */
static PyTypeObject *number_type(size_t i)
{
	static PyTypeObject *generic;

	if (i < 3)
		return (PyTypeObject *[]){&PyLong_Type, &PyFloat_Type, &PyComplex_Type}[i];
	if (i > 3)
		return i < NUMBER_TYPES && PyDateTimeAPI
		           ? (PyTypeObject *[]){PyDateTimeAPI->DateType, PyDateTimeAPI->TimeType,
		                                PyDateTimeAPI->DeltaType}[i - 4]
		           : NULL;
	if (!generic) {
		PyObject *type, *value, *tb, *name, *np, *g = NULL;
		PyErr_Fetch(&type, &value, &tb);
		name = PyUnicode_FromString("numpy");
		np = name ? PyImport_GetModule(name) : NULL;
		Py_XDECREF(name);
		if (np) {
			g = PyObject_GetAttrString(np, "generic");
			Py_DECREF(np);
		}
		if (g && PyType_Check(g))
			generic = (PyTypeObject *)g; /* kept: numpy stays loaded */
		else
			Py_XDECREF(g);
		PyErr_Clear();
		PyErr_Restore(type, value, tb); /* (what was pending before the lookup) */
	}
	return generic;
}

static const struct value_kind *type_kind(size_t i)
{
	return i < 4 ? &number_kind : &date_kind;
}

/* The kind of values t is a class of, or NULL. */
static const struct value_kind *number_class(PyTypeObject *t)
{
	for (size_t i = 0; i < NUMBER_TYPES; i++)
		if (number_type(i) && PyType_IsSubtype(t, number_type(i)))
			return type_kind(i);
	return NULL;
}

static int number_own_name(const struct value_kind *kind, PyObject *name)
{
	for (const char *const *n = kind->own; PyUnicode_Check(name) && *n; n++)
		if (PyUnicode_CompareWithASCIIString(name, *n) == 0)
			return 1;
	return 0;
}

static int number_own_refused(const struct value_kind *kind, PyObject *cls_name, const char *name)
{
	PyErr_Format(PyExc_TypeError, "%S cannot define %s in the sandbox: %s", cls_name, name,
	             kind->why);
	return -1;
}

/* Does b answer a number's comparisons, arithmetic and conversions by its value: a class of C
 * (int, float, numpy's scalars, object) or enum's (its Flag's operators work on the values)?
 * A library's Python class need not (UserString compares its data, which the code sets). */
static int answers_by_value(PyTypeObject *b)
{
	PyObject *m;
	const char *s;

	if (!(b->tp_flags & Py_TPFLAGS_HEAPTYPE))
		return 1;
	if (!pyguard_sealed_class((PyObject *)b) || !b->tp_dict)
		return 0;
	m = PyDict_GetItemString(b->tp_dict, "__module__");
	s = m && PyUnicode_CheckExact(m) ? PyUnicode_AsUTF8(m) : NULL;
	if (!s)
		PyErr_Clear();
	return s && strcmp(s, "enum") == 0;
}

/* Is v what a class of t's MRO that answers by value defines as name (enum gives each flag
 * class Flag's own __or__ and the like)? */
static int library_value(PyTypeObject *t, const char *name, PyObject *v)
{
	PyObject *mro = t->tp_mro;

	for (Py_ssize_t i = 0; v && mro && i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if (answers_by_value(b) && b->tp_dict &&
		    PyDict_GetItemString(b->tp_dict, name) == v)
			return 1;
	}
	return 0;
}

static int number_class_checked(PyTypeObject *t)
{
	const struct value_kind *kind = number_class(t);

	for (const char *const *n = kind ? kind->own : NULL; n && *n; n++) {
		PyTypeObject *b = defined_by(t, *n);
		if (b && !answers_by_value(b) &&
		    !library_value(t, *n, PyDict_GetItemString(b->tp_dict, *n))) {
			PyObject *name = PyUnicode_FromString(t->tp_name);
			if (name)
				number_own_refused(kind, name, *n);
			Py_XDECREF(name);
			return -1;
		}
	}
	return 0;
}

/* May a class of the code's take name from b? From numpy's own classes, yes, but a finalizer
 * from ndarray's only: numpy's Python finalizers (MaskedArray's, matrix's) call methods a
 * subclass overrides (_update_from, _getitem) while numpy builds an array. */
static int array_own_taken(PyTypeObject *b, PyTypeObject *nd, const char *name)
{
	if (strcmp(name, "__array_finalize__") == 0)
		return b == nd || b == &PyBaseObject_Type;
	return numpy_own(b, nd);
}

int pyreentry_array_class_checked(PyTypeObject *t)
{
	PyTypeObject *nd = pydata_ndarray();

	if (pylayer_armed() && number_class_checked(t) < 0)
		return -1;
	if (!pylayer_armed() || !nd || !PyType_IsSubtype(t, nd) || t == nd)
		return 0;
	/* what the class answers, from wherever in its MRO (a mixin's, scipy's spmatrix's) */
	for (const char *const *n = array_own; *n; n++) {
		PyTypeObject *b = defined_by(t, *n);
		if (b && !array_own_taken(b, nd, *n)) {
			PyObject *name = PyUnicode_FromString(*n);
			if (name)
				array_own_refused(t, name);
			Py_XDECREF(name);
			return -1;
		}
	}
	return 0;
}

/* The MRO of bases[i], a class (NULL when it is not one). */
static PyObject *base_mro(PyObject *bases, Py_ssize_t i)
{
	PyObject *b = PyTuple_GET_ITEM(bases, i);

	return PyType_Check(b) ? ((PyTypeObject *)b)->tp_mro : NULL;
}

/* The same rule before type() makes the class (name, bases, its namespace ns, a dict of plain
 * str keys): a class kept after type() failed (its __classcell__ holds it) was never checked.
 * Refused when one of the bases is an array class and the namespace, its __slots__ or a class
 * of a base's MRO other than numpy's defines one of the names (wherever it would come in the
 * class's MRO: more than the check above, never less). */
static int number_class_planned(PyObject *name, PyObject *bases, PyObject *ns)
{
	const struct value_kind *kind = NULL;
	PyObject *slots = PyDict_GetItemString(ns, "__slots__");

	for (Py_ssize_t i = 0; !kind && i < PyTuple_GET_SIZE(bases); i++)
		if (PyType_Check(PyTuple_GET_ITEM(bases, i)))
			kind = number_class((PyTypeObject *)PyTuple_GET_ITEM(bases, i));
	/* (a date's slots are descriptors of its class: a str, or a tuple or list of str) */
	if (kind && slots && !PyUnicode_CheckExact(slots)) {
		int plain = PyTuple_CheckExact(slots) || PyList_CheckExact(slots);

		for (Py_ssize_t i = 0; plain && i < PySequence_Fast_GET_SIZE(slots); i++) {
			PyObject *slot = PySequence_Fast_GET_ITEM(slots, i);
			plain = PyUnicode_CheckExact(slot);
			if (plain && number_own_name(kind, slot))
				return number_own_refused(kind, name, PyUnicode_AsUTF8(slot));
		}
		if (!plain) {
			PyErr_Format(
			    PyExc_TypeError,
			    "%U: the __slots__ of a class of numbers or dates are a str, or "
			    "a tuple or list of str, in the sandbox",
			    name);
			return -1;
		}
	}
	if (kind && slots && PyUnicode_CheckExact(slots) && number_own_name(kind, slots))
		return number_own_refused(kind, name, PyUnicode_AsUTF8(slots));
	for (const char *const *n = kind ? kind->own : NULL; n && *n; n++) {
		if (PyDict_GetItemString(ns, *n))
			return number_own_refused(kind, name, *n);
		for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bases); i++) {
			PyObject *mro = base_mro(bases, i);
			for (Py_ssize_t k = 0; mro && k < PyTuple_GET_SIZE(mro); k++) {
				PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, k);
				PyObject *v =
				    b->tp_dict ? PyDict_GetItemString(b->tp_dict, *n) : NULL;
				if (v && !answers_by_value(b) &&
				    !library_value((PyTypeObject *)PyTuple_GET_ITEM(bases, i), *n,
				                   v))
					return number_own_refused(kind, name, *n);
			}
		}
	}
	return 0;
}

/* Is k one of numpy's protocol names (__array__, __array_ufunc__, __array_function__, ...)? */
static int numpy_protocol_name(PyObject *k)
{
	const char *s = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;

	if (!s)
		PyErr_Clear();
	return s && strncmp(s, "__array", 7) == 0;
}

/* numpy looks its protocol names up on a class (the class's metaclass's descriptors first) in
 * the middle of its work: a numpy scalar's comparison, asking whether to defer to the other
 * operand's class, ran a property of the code's metaclass, which freed the scalar being compared
 * (V43b H1). A metaclass made in a call defines none of them, nor takes one from a class of the
 * code's among its bases. */
static int metaclass_numpy_names_planned(PyObject *name, PyObject *bases, PyObject *ns)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	int meta = 0;

	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bases); i++)
		if (PyType_Check(PyTuple_GET_ITEM(bases, i)) &&
		    PyType_IsSubtype((PyTypeObject *)PyTuple_GET_ITEM(bases, i), &PyType_Type))
			meta = 1;
	if (!meta)
		return 0;
	while (PyDict_Next(ns, &pos, &k, &v))
		if (numpy_protocol_name(k))
			goto refused;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bases); i++) {
		PyObject *mro = base_mro(bases, i);
		for (Py_ssize_t j = 0; mro && j < PyTuple_GET_SIZE(mro); j++) {
			PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, j);
			if (!(b->tp_flags & Py_TPFLAGS_HEAPTYPE) || !b->tp_dict)
				continue;
			for (pos = 0; PyDict_Next(b->tp_dict, &pos, &k, &v);)
				if (numpy_protocol_name(k))
					goto refused;
		}
	}
	return 0;
refused:
	PyErr_Format(PyExc_TypeError,
	             "%U cannot define %S in the sandbox: it is a metaclass, and numpy looks the "
	             "name up on classes in the middle of its work",
	             name, k);
	return -1;
}

int pyreentry_array_class_planned(PyObject *name, PyObject *bases, PyObject *ns)
{
	PyTypeObject *nd = pydata_ndarray();
	PyObject *slots;
	int array = 0;

	if (!pylayer_armed() || !PyTuple_Check(bases) || !PyDict_Check(ns))
		return 0;
	if (number_class_planned(name, bases, ns) < 0 ||
	    metaclass_numpy_names_planned(name, bases, ns) < 0)
		return -1;
	if (!nd)
		return 0;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bases); i++)
		if (PyType_Check(PyTuple_GET_ITEM(bases, i)) &&
		    PyType_IsSubtype((PyTypeObject *)PyTuple_GET_ITEM(bases, i), nd))
			array = 1;
	if (!array)
		return 0;
	/* Slots become descriptors of the class: plain names only, read without its code. */
	slots = PyDict_GetItemString(ns, "__slots__");
	if (slots && !PyUnicode_CheckExact(slots)) {
		int plain = PyTuple_CheckExact(slots) || PyList_CheckExact(slots);

		for (Py_ssize_t i = 0; plain && i < PySequence_Fast_GET_SIZE(slots); i++)
			plain = PyUnicode_CheckExact(PySequence_Fast_GET_ITEM(slots, i));
		if (!plain) {
			PyErr_Format(
			    PyExc_TypeError,
			    "%U: the __slots__ of a class of arrays are a str, or a tuple or "
			    "list of str, in the sandbox",
			    name);
			return -1;
		}
	}
	for (const char *const *n = array_own; *n; n++) {
		int defined = PyDict_GetItemString(ns, *n) != NULL;

		if (slots && PyUnicode_CheckExact(slots))
			defined = defined || PyUnicode_CompareWithASCIIString(slots, *n) == 0;
		for (Py_ssize_t i = 0; slots && !PyUnicode_CheckExact(slots) && !defined &&
		                       i < PySequence_Fast_GET_SIZE(slots);
		     i++)
			defined = PyUnicode_CompareWithASCIIString(
			              PySequence_Fast_GET_ITEM(slots, i), *n) == 0;
		for (Py_ssize_t i = 0; !defined && i < PyTuple_GET_SIZE(bases); i++) {
			PyObject *mro = base_mro(bases, i);
			for (Py_ssize_t k = 0; mro && !defined && k < PyTuple_GET_SIZE(mro); k++) {
				PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, k);
				defined = b->tp_dict && PyDict_GetItemString(b->tp_dict, *n) &&
				          !array_own_taken(b, nd, *n);
			}
		}
		if (defined) {
			PyErr_Format(PyExc_TypeError, "%U cannot define %s in the sandbox: %s",
			             name, *n, array_own_why(*n));
			return -1;
		}
	}
	return 0;
}

/* Is t, or any class beneath it, a subclass of base (an array class, an exception group: a
 * mixin is beneath one when such a class is made of it, and that class finds its attributes)?
 * 1 (also past 64 levels, where a guard would rather refuse), 0, or -1 with an exception. */
static int subclass_beneath(PyTypeObject *t, PyTypeObject *base, int depth)
{
	PyObject *subs;
	int found = 0;

	if (PyType_IsSubtype(t, base) || depth > 64)
		return 1;
	subs = PyObject_CallMethod((PyObject *)&PyType_Type, "__subclasses__", "O", t);
	if (!subs)
		return -1;
	for (Py_ssize_t i = 0; found == 0 && PyList_Check(subs) && i < PyList_GET_SIZE(subs); i++)
		if (PyType_Check(PyList_GET_ITEM(subs, i)))
			found = subclass_beneath((PyTypeObject *)PyList_GET_ITEM(subs, i), base,
			                         depth + 1);
	Py_DECREF(subs);
	return found;
}

/* ---- a bound method's repr ------------------------------------------------------------------
 * A bound method's repr looks up its function's __qualname__ (and __name__) while it holds
 * the method, its function and its object borrowed (a list's repr hands it the method the same
 * way): a key of the code's in the function's instance dict, hashing as the name, ran its
 * __eq__ there, which freed them, and the object's __repr__ ran on a fake made in their memory.
 * They are held while it runs. */
static reprfunc method_repr_real;

static PyObject *method_repr_held(PyObject *m)
{
	PyObject *f = Py_XNewRef(PyMethod_GET_FUNCTION(m)),
	         *self = Py_XNewRef(PyMethod_GET_SELF(m));
	PyObject *r;

	Py_INCREF(m);
	r = method_repr_real(m);
	Py_XDECREF(f);
	Py_XDECREF(self);
	Py_DECREF(m);
	return r;
}

static int method_repr_guard(void)
{
	method_repr_real = PyMethod_Type.tp_repr;
	PyMethod_Type.tp_repr = method_repr_held;
	return rewrap(&PyMethod_Type, "__repr__", (void *)method_repr_real,
	              (void *)method_repr_held);
}

/* ---- a list's repr ---------------------------------------------------------------------------
 * A list's repr hands each item to repr() borrowed from the list: an item's __repr__ (or
 * something it reads, a property of a GenericAlias's argument, a slice's field) that emptied
 * the list freed the item, or the object whose repr was running, under it (a fake object in
 * its memory, the real builtins). The same text, each item held while it is turned to text. */
static PyObject *list_repr_held(PyObject *v)
{
	PyObject *parts, *sep = NULL, *joined = NULL, *r = NULL;
	int rc = Py_ReprEnter(v);

	if (rc != 0)
		return rc > 0 ? PyUnicode_FromString("[...]") : NULL;
	parts = PyList_New(0);
	for (Py_ssize_t i = 0; parts && i < PyList_GET_SIZE(v); i++) {
		PyObject *item = Py_NewRef(PyList_GET_ITEM(v, i)), *s = NULL;
		if (Py_EnterRecursiveCall(" while getting the repr of an object") == 0) {
			s = PyObject_Repr(item);
			Py_LeaveRecursiveCall();
		}
		Py_DECREF(item);
		if (!s || PyList_Append(parts, s) < 0)
			Py_CLEAR(parts);
		Py_XDECREF(s);
	}
	if (parts && (sep = PyUnicode_FromString(", ")) && (joined = PyUnicode_Join(sep, parts)))
		r = PyUnicode_FromFormat("[%U]", joined);
	Py_XDECREF(joined);
	Py_XDECREF(sep);
	Py_XDECREF(parts);
	Py_ReprLeave(v);
	return r;
}

static int list_repr_guard(void)
{
	void *real;

	/* (list and the subclasses made before, which copied its slot) */
	if (held_slot(&PyList_Type, offsetof(PyTypeObject, tp_repr), (void *)list_repr_held,
	              &real) < 0)
		return -1;
	return rewrap(&PyList_Type, "__repr__", real, (void *)list_repr_held);
}

/* ---- an object held while its own repr or str runs -----------------------------------------
 * repr() and str() of a value C code holds borrowed (a field of an exception, a classmethod, a
 * slice, an item of a tuple) hand it over as it is: when the value's repr is C code that turns
 * its own fields to text (a slice's, a tuple's), and a field's __repr__ drops the holder's
 * reference (sets the exception's args, calls the classmethod's __init__ again), the value is
 * freed while its repr runs, and the next field is read from freed memory (a fake object's
 * __repr__ called). Every C repr and str but those of the plain values (which run no code) is
 * reached through one function that holds the object while the type's own runs: the one the
 * type's __repr__ (__str__) wrapper names, as CPython itself would have called. */
static reprfunc repr_of_python, str_of_python; /* CPython's slot for a class's own method */
static PyObject *dunder_repr, *dunder_str;

/* The texts being made through text_held, innermost last: C code that calls its base type's
 * slot itself (a defaultdict's repr calls dict's) comes back for the same object with no
 * repr() in between (the interpreter's recursion depth as it was), and is given the next one
 * along the MRO, as its direct call meant (the type's own again recursed for ever); a repr()
 * of the object from inside its own (a dict holding itself) is a repr as any other. */
#define TEXTS_MAKING_MAX 1024
static _Thread_local struct {
	PyObject *self;
	size_t offset;
	Py_ssize_t at; /* where in the MRO of self's type the function called was found */
	int depth;     /* the thread's recursion_remaining when it was called */
} texts_making[TEXTS_MAKING_MAX];
static _Thread_local int n_texts_making;

static PyObject *text_held(PyObject *self, PyObject *name, size_t offset, reprfunc held)
{
	PyObject *mro = Py_XNewRef(Py_TYPE(self)->tp_mro), *d = NULL, *r;
	Py_ssize_t from = 0, at = -1;
	int top = n_texts_making - 1, depth = PyThreadState_Get()->recursion_remaining;

	if (top >= 0 && texts_making[top].self == self && texts_making[top].offset == offset &&
	    texts_making[top].depth == depth)
		from = texts_making[top].at + 1;
	Py_INCREF(self);
	/* the first type along the MRO whose dict names it (names are plain str: no code runs) */
	for (Py_ssize_t i = from; mro && PyTuple_Check(mro) && !d && i < PyTuple_GET_SIZE(mro);
	     i++) {
		PyObject *t = PyTuple_GET_ITEM(mro, i);
		PyObject *dict = PyType_Check(t) ? ((PyTypeObject *)t)->tp_dict : NULL;
		d = dict ? Py_XNewRef(PyDict_GetItemWithError(dict, name)) : NULL;
		if (d)
			at = i;
		else if (PyErr_Occurred())
			break;
	}
	Py_XDECREF(mro);
	if (PyErr_Occurred()) {
		r = NULL;
	} else if (d && Py_IS_TYPE(d, &PyWrapperDescr_Type) &&
	           (size_t)((PyWrapperDescrObject *)d)->d_base->offset == offset &&
	           ((PyWrapperDescrObject *)d)->d_wrapped != (void *)held &&
	           PyObject_TypeCheck(self, PyDescr_TYPE(d))) {
		if (n_texts_making == TEXTS_MAKING_MAX) {
			r = PyErr_Format(
			    PyExc_RecursionError,
			    "maximum recursion depth exceeded while getting the %U of an "
			    "object",
			    name);
		} else {
			texts_making[n_texts_making].self = self;
			texts_making[n_texts_making].offset = offset;
			texts_making[n_texts_making].depth = depth;
			texts_making[n_texts_making++].at = at;
			r = ((reprfunc)((PyWrapperDescrObject *)d)->d_wrapped)(self);
			n_texts_making--;
		}
	} else if (d) {
		int code = pyreentry_slot_begin(self);
		r = PyObject_CallOneArg(d, self);
		code_slots -= code;
	} else {
		r = PyErr_Format(PyExc_TypeError, "%s has no %U", Py_TYPE(self)->tp_name, name);
	}
	Py_XDECREF(d);
	Py_DECREF(self);
	return r;
}

static PyObject *repr_held(PyObject *self)
{
	return text_held(self, dunder_repr, offsetof(PyTypeObject, tp_repr), repr_held);
}

static PyObject *str_held(PyObject *self)
{
	return text_held(self, dunder_str, offsetof(PyTypeObject, tp_str), str_held);
}

/* Is f one of the plain values' reprs or strs, which run no code of anyone's? */
static int text_plain(reprfunc f)
{
	PyTypeObject *plain[] = {&PyLong_Type,     &PyFloat_Type,     &PyUnicode_Type,
	                         &PyBytes_Type,    &PyBool_Type,      &PyComplex_Type,
	                         Py_TYPE(Py_None), &PyBaseObject_Type};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (f == plain[i]->tp_repr || f == plain[i]->tp_str)
			return 1;
	return 0;
}

/* t's slot at offset, when it is the C function its wrapper names, becomes held. */
static void text_hold_slot(PyTypeObject *t, size_t offset, PyObject *name, reprfunc python,
                           reprfunc held)
{
	reprfunc *slot = (reprfunc *)((char *)t + offset);
	PyObject *d;

	if (!*slot || *slot == held || *slot == python || text_plain(*slot))
		return;
	d = _PyType_Lookup(t, name);
	if (d && Py_IS_TYPE(d, &PyWrapperDescr_Type) &&
	    (size_t)((PyWrapperDescrObject *)d)->d_base->offset == offset &&
	    ((PyWrapperDescrObject *)d)->d_wrapped == (void *)*slot)
		*slot = held;
}

static void texts_hold(PyTypeObject *t)
{
	if (!dunder_repr)
		return;
	text_hold_slot(t, offsetof(PyTypeObject, tp_repr), dunder_repr, repr_of_python, repr_held);
	text_hold_slot(t, offsetof(PyTypeObject, tp_str), dunder_str, str_of_python, str_held);
}

static int texts_hold_one(PyTypeObject *t, void *unused)
{
	(void)unused;
	texts_hold(t);
	return 0;
}

int pyreentry_texts_hold_all(void)
{
	return dunder_repr ? pyguard_walk(&PyBaseObject_Type, texts_hold_one, NULL) : 0;
}

static int texts_guard(void)
{
	static const char src[] = "class Texts:\n"
	                          "    def __repr__(self): return ''\n"
	                          "    def __str__(self): return ''\n";
	PyObject *cls = probe_class(src, "Texts");
	int rc = -1;

	if (!cls)
		return -1;
	repr_of_python = ((PyTypeObject *)cls)->tp_repr;
	str_of_python = ((PyTypeObject *)cls)->tp_str;
	dunder_repr = PyUnicode_InternFromString("__repr__");
	dunder_str = PyUnicode_InternFromString("__str__");
	if (!repr_of_python || !str_of_python || !dunder_repr || !dunder_str)
		goto out;
	rc = pyreentry_texts_hold_all();
out:
	Py_DECREF(cls);
	return rc;
}

/* ---- a class's __get__, super()'s object, a replaced class ----------------------------------
 * Three places CPython 3.11 keeps an object borrowed while the code's runs:
 *   a class's __get__ is called as it is found in the class's dict: a __get__ that is a bound
 *   method of a list (L.index), whose comparisons deleted the class's __get__, had the method,
 *   the list and its items freed while list.index walked them (a fake item compared);
 *   a super() without arguments takes its object from the caller's frame and asks its
 *   __class__, a property of the code's, which emptied the cell that held it: super kept a
 *   freed object (a fake one's methods called);
 *   an object's class replaced (its __class__ set) loses that reference, and a collection the
 *   code ran freed the old class while C code still used it (abc's instance check, an object's
 *   dealloc across its __del__, which then called a fake class's slots: any function).
 * The __get__ is held while it runs, super()'s object and class while super is made, and a
 * replaced class until the code ends. */
static descrgetfunc descr_get_real; /* CPython's slot for a class's Python __get__ */
static PyObject *dunder_get;

static PyObject *descr_get_held(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *get = Py_XNewRef(_PyType_Lookup(Py_TYPE(self), dunder_get)), *r;

	if (!get)
		return descr_get_real(self, obj, type);
	Py_INCREF(self);
	r = PyObject_CallFunctionObjArgs(get, self, obj ? obj : Py_None, type ? type : Py_None,
	                                 NULL);
	Py_DECREF(self);
	Py_DECREF(get);
	return r;
}

/* (the classes made before the table below names the held slot) */
static int descr_get_hold_one(PyTypeObject *t, void *unused)
{
	(void)unused;
	if (t->tp_descr_get == descr_get_real)
		t->tp_descr_get = descr_get_held;
	return 0;
}

static initproc super_init_real;

/* super, property, staticmethod and classmethod are initialised once while armed: __init__
 * again on a live one replaced the object or callable it holds, which C code using it held
 * borrowed (super's attribute lookup hands its object to the descriptor; a property's
 * __isabstractmethod__ asks its getter): freed under that code. */
typedef struct {
	PyObject_HEAD PyTypeObject *type;
	PyObject *obj;
	PyTypeObject *obj_type;
} super_layout;

static int init_once(int made, const char *what)
{
	if (made && pylayer_armed()) {
		PyErr_Format(PyExc_TypeError,
		             "a %s is initialised once in the sandbox (make a new one)", what);
		return -1;
	}
	return 0;
}

static initproc property_init_real, staticmethod_init_real, classmethod_init_real;

static int property_init_once(PyObject *self, PyObject *args, PyObject *kw)
{
	property_layout *p = (property_layout *)self;

	if (init_once(p->prop_get || p->prop_set || p->prop_del || p->prop_doc, "property") < 0)
		return -1;
	return property_init_real(self, args, kw);
}

static int staticmethod_init_once(PyObject *self, PyObject *args, PyObject *kw)
{
	if (init_once(((method_wrapper_layout *)self)->callable != NULL, "staticmethod") < 0)
		return -1;
	return staticmethod_init_real(self, args, kw);
}

static int classmethod_init_once(PyObject *self, PyObject *args, PyObject *kw)
{
	if (init_once(((method_wrapper_layout *)self)->callable != NULL, "classmethod") < 0)
		return -1;
	return classmethod_init_real(self, args, kw);
}

static int inits_once_guard(void)
{
	struct {
		PyTypeObject *t;
		initproc *real, once;
	} inits[] = {{&PyProperty_Type, &property_init_real, property_init_once},
	             {&PyStaticMethod_Type, &staticmethod_init_real, staticmethod_init_once},
	             {&PyClassMethod_Type, &classmethod_init_real, classmethod_init_once}};

	if (PySuper_Type.tp_basicsize != (Py_ssize_t)sizeof(super_layout)) {
		PyErr_SetString(PyExc_TypeError, "super is not as known");
		return -1;
	}
	for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); i++) {
		void *real;
		if (held_slot(inits[i].t, offsetof(PyTypeObject, tp_init), (void *)inits[i].once,
		              &real) < 0 ||
		    rewrap(inits[i].t, "__init__", real, (void *)inits[i].once) < 0)
			return -1;
		*inits[i].real = (initproc)real;
	}
	return 0;
}

static int super_init_held(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *first = NULL, *cls = NULL;
	int rc;

	if (init_once(((super_layout *)self)->type != NULL, "super") < 0)
		return -1;
	if (PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 0 && (!kw || !PyDict_Size(kw)))
		pyframe_super_parts(&first, &cls);
	rc = super_init_real(self, args, kw);
	Py_XDECREF(first);
	Py_XDECREF(cls);
	return rc;
}

/* super(): the call of the class itself, which does the init's work */
static vectorcallfunc super_call_real;

static PyObject *super_call_held(PyObject *t, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
	PyObject *first = NULL, *cls = NULL, *r;

	if (PyVectorcall_NARGS(nargsf) == 0 && !kwnames)
		pyframe_super_parts(&first, &cls);
	r = super_call_real(t, args, nargsf, kwnames);
	Py_XDECREF(first);
	Py_XDECREF(cls);
	return r;
}

static setter class_set_real;

static int class_set_held(PyObject *self, PyObject *value, void *closure)
{
	PyObject *old = Py_NewRef((PyObject *)Py_TYPE(self));
	int rc = class_set_real(self, value, closure);

	if (rc == 0 && pylayer_armed())
		hold_until_end(old);
	else
		Py_DECREF(old);
	return rc;
}

static int kept_objects_guard(void)
{
	static const char src[] = "class Descriptor:\n"
	                          "    def __get__(self, obj, type=None): return self\n";
	PyObject *cls = probe_class(src, "Descriptor"), *d;
	int rc = -1;

	dunder_get = PyUnicode_InternFromString("__get__");
	if (!cls || !((PyTypeObject *)cls)->tp_descr_get || !dunder_get) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError,
			                "no class with a Python __get__ was made");
		goto out;
	}
	descr_get_real = ((PyTypeObject *)cls)->tp_descr_get;
	if (pyguard_walk(&PyBaseObject_Type, descr_get_hold_one, NULL) < 0)
		goto out;
	/* A class made later gets CPython's slot for its __get__ from the table of slots its
	 * wrappers point into: that entry names the held one, so the class has it from the start
	 * (its __init_subclass__ and __set_name__ run inside type() before the class is guarded). */
	d = PyDict_GetItemString(PyProperty_Type.tp_dict, "__get__");
	if (!d || !Py_IS_TYPE(d, &PyWrapperDescr_Type) ||
	    ((PyWrapperDescrObject *)d)->d_base->function != (void *)descr_get_real) {
		PyErr_SetString(PyExc_TypeError, "property.__get__ is not as known");
		goto out;
	}
	((PyWrapperDescrObject *)d)->d_base->function = (void *)descr_get_held;
	if (inits_once_guard() < 0)
		goto out;
	super_call_real = PySuper_Type.tp_vectorcall;
	if (super_call_real)
		PySuper_Type.tp_vectorcall = super_call_held;
	super_init_real = PySuper_Type.tp_init;
	PySuper_Type.tp_init = super_init_held;
	if (rewrap(&PySuper_Type, "__init__", (void *)super_init_real, (void *)super_init_held) < 0)
		goto out;
	d = PyDict_GetItemString(PyBaseObject_Type.tp_dict, "__class__");
	if (!d || !Py_IS_TYPE(d, &PyGetSetDescr_Type) ||
	    !((PyGetSetDescrObject *)d)->d_getset->set) {
		PyErr_SetString(PyExc_TypeError, "object.__class__ is not as known");
		goto out;
	}
	class_set_real = ((PyGetSetDescrObject *)d)->d_getset->set;
	((PyGetSetDescrObject *)d)->d_getset->set = class_set_held;
	rc = 0;
out:
	Py_XDECREF(cls);
	return rc;
}

/* ---- attribute names of str subclasses ----------------------------------------------------- */

/* The generic setattr keeps the instance's dict borrowed while it calls the name's __hash__
 * and the __eq__ of the keys it meets: a str subclass's that replaced the dict
 * (object.__setattr__(o, '__dict__', d)) had the entry written into the freed dict (a fake
 * dict's keys: a write anywhere). Every class whose setattr is the generic one, and
 * object.__setattr__ and __delattr__, take the name as a plain str first (the builtin setattr
 * passes one already) and hold the instance's dict while they set. */

/* The instance's dict when it has one made (borrowed), else NULL: a Python class's is beside
 * the object (3.11's managed dict; NULL while its values are inline, whose keys are plain str),
 * another's at its dict offset. Nothing is made. */
static PyObject *instance_dict(PyObject *self)
{
	PyTypeObject *t = Py_TYPE(self);
	PyObject **p;

	if (t->tp_flags & Py_TPFLAGS_MANAGED_DICT)
		return ((PyObject **)self)[-3];
	if (!t->tp_dictoffset)
		return NULL;
	p = _PyObject_GetDictPtr(self);
	return p ? *p : NULL;
}

/* A field C code reads borrowed while the code's own runs (a key's __eq__ in the lookup):
 * an instance's dict, a function's defaults (a call looks its keyword defaults up in the dict
 * it holds borrowed). What one held is kept until the code that ran ends when it is replaced. */
static void replaced_kept(PyObject *self, PyObject *name)
{
	PyObject *old;

	/* (the names are dunders of 8 characters or more: most sets stop here) */
	if (PyUnicode_GET_LENGTH(name) < 8 || PyUnicode_READ_CHAR(name, 0) != '_')
		return;
	if (PyUnicode_CompareWithASCIIString(name, "__dict__") != 0 &&
	    (!PyFunction_Check(self) ||
	     (PyUnicode_CompareWithASCIIString(name, "__kwdefaults__") != 0 &&
	      PyUnicode_CompareWithASCIIString(name, "__defaults__") != 0)))
		return;
	old = PyObject_GenericGetAttr(self, name);
	if (old)
		hold_until_end(old);
	else
		PyErr_Clear();
}

static int generic_setattr_plain(PyObject *self, PyObject *name, PyObject *value)
{
	/* held: a key of the code's in it (a str subclass's __eq__) runs inside the insertion */
	PyObject *plain = NULL, *dict = Py_XNewRef(instance_dict(self));
	int rc;

	if (PyUnicode_Check(name) && !PyUnicode_CheckExact(name)) {
		plain =
		    PyUnicode_FromObject(name); /* an exact copy: nothing of the subclass runs */
		if (!plain) {
			Py_XDECREF(dict);
			return -1;
		}
		name = plain;
	}
	if (PyUnicode_CheckExact(name))
		replaced_kept(self, name);
	rc = PyObject_GenericSetAttr(self, name, value);
	Py_XDECREF(plain);
	Py_XDECREF(dict);
	return rc;
}

/* t's setattr slot and the wrappers in its dict that call the generic one. */
static int plain_names_swap(PyTypeObject *t, void *unused)
{
	static const char *const names[] = {"__setattr__", "__delattr__"};

	(void)unused;
	if (t->tp_setattro == PyObject_GenericSetAttr) {
		t->tp_setattro = generic_setattr_plain;
		PyType_Modified(t);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		PyObject *w = t->tp_dict ? PyDict_GetItemString(t->tp_dict, names[i]) : NULL;
		if (w && PyObject_TypeCheck(w, &PyWrapperDescr_Type) &&
		    ((PyWrapperDescrObject *)w)->d_wrapped == (void *)PyObject_GenericSetAttr)
			((PyWrapperDescrObject *)w)->d_wrapped = (void *)generic_setattr_plain;
	}
	return 0;
}

static int plain_names_guard(void)
{
	return pyguard_walk(&PyBaseObject_Type, plain_names_swap, NULL);
}

/* ---- decimal's signal maps ----------------------------------------------------------------
 *
 * A decimal Context's traps and flags are maps over bits inside the Context, which they do not
 * own: one kept after its Context was freed (tr = Context().traps) read and set bits of whatever
 * was laid there (a list's item pointer moved onto a fake object: full escape), and one made by
 * its class alone pointed nowhere (SIGSEGV). While armed a Context hands out a map of the
 * sandbox's own that holds the Context and reaches its signals through it for each use; what
 * it gives back (keys, items, a copy) holds neither. */
typedef struct {
	PyObject_HEAD PyObject *context, *name;
} signals_object;

static getattrofunc context_getattro_real;
static PyObject *signals_names[2]; /* "traps", "flags" */

static void signals_dealloc(PyObject *self)
{
	Py_XDECREF(((signals_object *)self)->context);
	Py_XDECREF(((signals_object *)self)->name);
	Py_TYPE(self)->tp_free(self);
}

/* The Context's own map: a new reference, used only while self holds the Context. */
static PyObject *signals_real(PyObject *self)
{
	signals_object *s = (signals_object *)self;

	return context_getattro_real(s->context, s->name);
}

static Py_ssize_t signals_length(PyObject *self)
{
	PyObject *m = signals_real(self);
	Py_ssize_t n = m ? PyObject_Size(m) : -1;

	Py_XDECREF(m);
	return n;
}

static PyObject *signals_get(PyObject *self, PyObject *key)
{
	PyObject *m = signals_real(self), *r = m ? PyObject_GetItem(m, key) : NULL;

	Py_XDECREF(m);
	return r;
}

static int signals_set(PyObject *self, PyObject *key, PyObject *value)
{
	PyObject *m = signals_real(self);
	int rc = !m ? -1 : value ? PyObject_SetItem(m, key, value) : PyObject_DelItem(m, key);

	Py_XDECREF(m);
	return rc;
}

static int signals_contains(PyObject *self, PyObject *key)
{
	PyObject *v = signals_get(self, key);

	if (v) {
		Py_DECREF(v);
		return 1;
	}
	if (PyErr_ExceptionMatches(PyExc_KeyError)) {
		PyErr_Clear();
		return 0;
	}
	return -1;
}

static PyTypeObject signals_type;

/* The signals (the map's keys, a tuple's iterator: it holds no map). */
static PyObject *signals_iter(PyObject *self)
{
	PyObject *m = signals_real(self), *r = m ? PyObject_GetIter(m) : NULL;

	Py_XDECREF(m);
	return r;
}

static PyObject *signals_repr(PyObject *self)
{
	PyObject *m = signals_real(self), *r = m ? PyObject_Repr(m) : NULL;

	Py_XDECREF(m);
	return r;
}

static PyObject *signals_copy(PyObject *self, PyObject *unused)
{
	PyObject *m = signals_real(self), *r = m ? PyObject_CallMethod(m, "copy", NULL) : NULL;

	(void)unused;
	Py_XDECREF(m);
	return r;
}

static PyObject *signals_compare(PyObject *self, PyObject *other, int op)
{
	PyObject *a, *b, *r;

	if (!PyObject_TypeCheck(self, &signals_type))
		Py_RETURN_NOTIMPLEMENTED;
	if (!(a = signals_copy(self, NULL)))
		return NULL;
	b = PyObject_TypeCheck(other, &signals_type) ? signals_copy(other, NULL) : Py_NewRef(other);
	r = b ? PyObject_RichCompare(a, b, op) : NULL;
	Py_DECREF(a);
	Py_XDECREF(b);
	return r;
}

/* keys(), values(), items() and get() as lists and values: a view would hold the map. */
static PyObject *signals_listed(PyObject *self, int what)
{
	PyObject *copy = signals_copy(self, NULL), *r;

	if (!copy)
		return NULL;
	r = what == 0 ? PyDict_Keys(copy) : what == 1 ? PyDict_Values(copy) : PyDict_Items(copy);
	Py_DECREF(copy);
	return r;
}

static PyObject *signals_keys(PyObject *self, PyObject *unused)
{
	(void)unused;
	return signals_listed(self, 0);
}

static PyObject *signals_values(PyObject *self, PyObject *unused)
{
	(void)unused;
	return signals_listed(self, 1);
}

static PyObject *signals_items(PyObject *self, PyObject *unused)
{
	(void)unused;
	return signals_listed(self, 2);
}

static PyObject *signals_get_default(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	PyObject *r;

	if (n < 1 || n > 2) {
		PyErr_SetString(PyExc_TypeError, "get expected 1 or 2 arguments");
		return NULL;
	}
	r = signals_get(self, args[0]);
	if (!r && PyErr_ExceptionMatches(PyExc_KeyError)) {
		PyErr_Clear();
		r = Py_NewRef(n > 1 ? args[1] : Py_None);
	}
	return r;
}

static PyObject *signals_update(PyObject *self, PyObject *other)
{
	PyObject *m = signals_real(self),
	         *r = m ? PyObject_CallMethod(m, "update", "O", other) : NULL;

	Py_XDECREF(m);
	return r;
}

static PyMappingMethods signals_mapping = {signals_length, signals_get, signals_set};
static PySequenceMethods signals_sequence = {.sq_contains = signals_contains};
static PyMethodDef signals_methods[] = {
    {"copy", signals_copy, METH_NOARGS, "The signals and their values, as a dict."},
    {"keys", signals_keys, METH_NOARGS, "The signals, as a list."},
    {"values", signals_values, METH_NOARGS, "Their values, as a list."},
    {"items", signals_items, METH_NOARGS, "(signal, value) pairs, as a list."},
    {"get", (PyCFunction)(void (*)(void))signals_get_default, METH_FASTCALL,
     "The value of a signal, or the default."},
    {"update", signals_update, METH_O, "Set the values of the signals other gives."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject signals_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "decimal.Signals",
    .tp_basicsize = sizeof(signals_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = signals_dealloc,
    .tp_as_mapping = &signals_mapping,
    .tp_as_sequence = &signals_sequence,
    .tp_iter = signals_iter,
    .tp_repr = signals_repr,
    .tp_richcompare = signals_compare,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_methods = signals_methods,
    .tp_doc = "A decimal Context's traps or flags, reached through the Context.",
};

static PyObject *context_getattro(PyObject *self, PyObject *name)
{
	for (int i = 0; pylayer_armed() && PyUnicode_Check(name) && i < 2; i++) {
		signals_object *s;
		if (PyUnicode_Compare(name, signals_names[i]) != 0)
			continue;
		if (!(s = PyObject_New(signals_object, &signals_type)))
			return NULL;
		s->context = Py_NewRef(self);
		s->name = Py_NewRef(signals_names[i]);
		return (PyObject *)s;
	}
	return context_getattro_real(self, name);
}

/* Decimal's comparisons and __format__ take the thread's current Context borrowed (the context
 * variable holds it), then run the code's: a comparison with a Rational reads its numerator
 * and denominator, asks isinstance() (a metaclass's __subclasscheck__), format reads its
 * override dict. There decimal.setcontext(), or a localcontext's exit, freed the Context in use,
 * and the comparison wrote its status into whatever took the memory. They hold it while they
 * run. */
static PyMethodDef *method_def(PyTypeObject *t, const char *name, int flags);
static richcmpfunc dec_richcompare_real;
static PyCFunction dec_format_real;
static PyObject *decimal_getcontext;

static PyObject *dec_richcompare_holding(PyObject *v, PyObject *w, int op)
{
	PyObject *ctx = PyObject_CallNoArgs(decimal_getcontext), *r;

	if (!ctx)
		return NULL;
	r = dec_richcompare_real(v, w, op);
	Py_DECREF(ctx);
	return r;
}

static PyObject *dec_format_holding(PyObject *self, PyObject *args)
{
	PyObject *ctx = PyObject_CallNoArgs(decimal_getcontext), *r;

	if (!ctx)
		return NULL;
	r = dec_format_real(self, args);
	Py_DECREF(ctx);
	return r;
}

static int decimal_context_held(PyObject *d)
{
	static const char *const compare[] = {"__lt__", "__le__", "__eq__",
	                                      "__ne__", "__gt__", "__ge__"};
	PyObject *dec = PyObject_GetAttrString(d, "Decimal");
	PyMethodDef *format;
	void *real;
	int rc = -1;

	decimal_getcontext = PyObject_GetAttrString(d, "getcontext");
	if (!dec || !PyType_Check(dec) || !decimal_getcontext ||
	    !(format = method_def((PyTypeObject *)dec, "__format__", METH_VARARGS)) ||
	    !((PyTypeObject *)dec)->tp_richcompare) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "decimal.Decimal is not as known");
		goto out;
	}
	if (held_slot((PyTypeObject *)dec, offsetof(PyTypeObject, tp_richcompare),
	              (void *)dec_richcompare_holding, &real) < 0)
		goto out;
	dec_richcompare_real = (richcmpfunc)real;
	for (size_t i = 0; i < sizeof(compare) / sizeof(compare[0]); i++)
		if (rewrap((PyTypeObject *)dec, compare[i], real, (void *)dec_richcompare_holding) <
		    0)
			goto out;
	dec_format_real = format->ml_meth;
	format->ml_meth = dec_format_holding;
	rc = 0;
out:
	Py_XDECREF(dec);
	return rc;
}

/* contextvars' Context compares two contexts' maps by walking the first one borrowed while it
 * compares their values, the code's __eq__: a decimal.setcontext() there, inside c1.run(...),
 * replaced c1's map and freed the one being walked (fake nodes laid in its memory: a fake
 * bytearray over all memory). Both maps are held while the comparison runs. (CPython 3.11's
 * layout: the map after the previous context.) */
struct py_context {
	PyObject_HEAD PyObject *ctx_prev;
	PyObject *ctx_vars;
};

static richcmpfunc context_richcompare_real;

static PyObject *context_richcompare_holding(PyObject *v, PyObject *w, int op)
{
	PyObject *vv = NULL, *wv = NULL, *r;

	if (PyContext_CheckExact(v))
		vv = Py_XNewRef(((struct py_context *)v)->ctx_vars);
	if (PyContext_CheckExact(w))
		wv = Py_XNewRef(((struct py_context *)w)->ctx_vars);
	r = context_richcompare_real(v, w, op);
	Py_XDECREF(vv);
	Py_XDECREF(wv);
	return r;
}

static int context_compare_guard(void)
{
	static const char *const compare[] = {"__lt__", "__le__", "__eq__",
	                                      "__ne__", "__gt__", "__ge__"};
	void *real;

	if (!PyContext_Type.tp_richcompare) {
		PyErr_SetString(PyExc_TypeError, "contextvars.Context is not as known");
		return -1;
	}
	if (held_slot(&PyContext_Type, offsetof(PyTypeObject, tp_richcompare),
	              (void *)context_richcompare_holding, &real) < 0)
		return -1;
	context_richcompare_real = (richcmpfunc)real;
	for (size_t i = 0; i < sizeof(compare) / sizeof(compare[0]); i++) {
		PyObject *w = PyDict_GetItemString(PyContext_Type.tp_dict, compare[i]);
		if (w && PyObject_TypeCheck(w, &PyWrapperDescr_Type) &&
		    rewrap(&PyContext_Type, compare[i], real, (void *)context_richcompare_holding) <
		        0)
			return -1;
	}
	return 0;
}

/* memoryview's hash took the view's memory, then hashed the object exporting it (the code's
 * __hash__ of an array.array subclass), which released the view and emptied the array: the
 * hash was computed over the freed block (a byte at a time, the memory of what the code laid
 * there). The exporter is hashed first, then the view's bytes are copied (refused if it was
 * released meanwhile) and hashed: the same value, as bytes hash. */
static hashfunc memory_hash_real;

static Py_hash_t memory_hash_checked(PyObject *self)
{
	PyMemoryViewObject *mv = (PyMemoryViewObject *)self;
	const char *f = mv->view.format;
	PyObject *obj, *bytes;
	Py_hash_t h;

	if (f && (*f == '@' || *f == '=' || *f == '<' || *f == '>' || *f == '!'))
		f++;
	/* (its own answer, or its own error before any code runs: writable, released, a format
	 * other than bytes) */
	if (!pylayer_armed() || mv->hash != -1 || !mv->view.readonly || !mv->view.obj ||
	    (mv->flags & _Py_MEMORYVIEW_RELEASED) ||
	    (f && !((*f == 'B' || *f == 'b' || *f == 'c') && f[1] == '\0')))
		return memory_hash_real(self);
	obj = Py_NewRef(mv->view.obj);
	h = PyObject_Hash(obj);
	Py_DECREF(obj);
	if (h == -1)
		return -1;
	/* a copy of the view made after the code ran (tobytes refuses a released view) */
	if (!(bytes = PyObject_CallMethod(self, "tobytes", NULL)))
		return -1;
	h = PyObject_Hash(bytes);
	Py_DECREF(bytes);
	if (h != -1 && !(mv->flags & _Py_MEMORYVIEW_RELEASED))
		mv->hash = h;
	return h;
}

static int memory_hash_guard(void)
{
	memory_hash_real = PyMemoryView_Type.tp_hash;
	if (!memory_hash_real) {
		PyErr_SetString(PyExc_TypeError, "memoryview's hash is not as known");
		return -1;
	}
	PyMemoryView_Type.tp_hash = memory_hash_checked;
	return rewrap(&PyMemoryView_Type, "__hash__", (void *)memory_hash_real,
	              (void *)memory_hash_checked);
}

/* mv[i] = v ran the key's __index__ (the code's) after the view was checked, and mv[i, j] = v
 * after it had taken the view's memory: the __index__ released the view and emptied the
 * bytearray under it, and a view of bytes ('c') still wrote the value's byte at the old address,
 * unchecked (an immutable bytes object laid in the freed block changed; twice over a bytearray's
 * and a bytes' lengths: all memory, the real builtins). Reads and slices took the memory before
 * their keys' __index__ the same way. While armed the key is made plain first, as the view
 * would read it: an int, a tuple of ints, a slice of ints and None, each by its __index__ in the
 * view's own order and only as far as the view reads it (not for a released or 0-dim view, nor
 * past an index it refuses); then the view's own subscript runs on the plain key, and nothing
 * of the code's runs between its check and its use of the address. The value's conversions
 * (__index__, __float__, __bool__) come after the address too, but the view checks again after
 * each that it was not released; a bytes value ('c') runs none. */
static binaryfunc memory_subscript_real;
static objobjargproc memory_assign_real;

/* Does the view read a key at all, or refuse before it (released, no dimensions)? */
static int memory_reads_key(PyMemoryViewObject *mv)
{
	return !(mv->flags & _Py_MEMORYVIEW_RELEASED) &&
	       !(mv->mbuf->flags & _Py_MANAGED_BUFFER_RELEASED) && mv->view.ndim > 0;
}

/* An item format the view reads (one character, after '@'); any other is refused before the
 * key by an assignment and by a tuple's read. */
static int memory_format_known(PyMemoryViewObject *mv)
{
	const char *f = mv->view.format;

	if (f[0] == '@')
		f++;
	return f[0] && !f[1];
}

/* An index made plain: an int by its __index__; one too large for an index is refused as the
 * view refuses it, naming the key's own class. New reference. */
static PyObject *memory_index_plain(PyObject *key)
{
	PyObject *r = PyNumber_Index(key);

	if (r && PyLong_AsSsize_t(r) == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		PyErr_Format(PyExc_IndexError, "cannot fit '%.200s' into an index-sized integer",
		             Py_TYPE(key)->tp_name);
		Py_CLEAR(r);
	}
	return r;
}

/* A tuple of indexes, one for each of the view's dimensions? */
static int memory_indexes(PyMemoryViewObject *mv, PyObject *key)
{
	if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != mv->view.ndim)
		return 0;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++)
		if (!PyIndex_Check(PyTuple_GET_ITEM(key, i)))
			return 0;
	return 1;
}

/* Such a tuple made plain in order, up to the first index out of its dimension's bounds (the
 * view refuses it before it reads the next). New reference. */
static PyObject *memory_indexes_plain(PyMemoryViewObject *mv, PyObject *key)
{
	Py_ssize_t n = PyTuple_GET_SIZE(key), k;
	PyObject *r = PyTuple_New(n), *x;
	int read = 1;

	for (Py_ssize_t i = 0; r && i < n; i++) {
		x = PyTuple_GET_ITEM(key, i);
		if (!(x = read && !PyLong_CheckExact(x) ? memory_index_plain(x) : Py_NewRef(x))) {
			Py_CLEAR(r);
			break;
		}
		PyTuple_SET_ITEM(r, i, x);
		if (!read)
			continue;
		if ((k = PyLong_AsSsize_t(x)) == -1 && PyErr_Occurred()) {
			PyErr_Clear(); /* too large (an int as it was): refused as it is */
			read = 0;
			continue;
		}
		if (k < 0)
			k += mv->view.shape[i];
		read = k >= 0 && k < mv->view.shape[i];
	}
	return r;
}

/* A slice's step, start and stop made plain in the order the view reads them, up to the first
 * it refuses (not an index; a step of 0). New reference. */
static PyObject *memory_slice_plain(PyObject *key)
{
	PySliceObject *s = (PySliceObject *)key;
	PyObject *part[3] = {s->step, s->start, s->stop}, *r = NULL;
	int read = 1, made;

	for (made = 0; made < 3; made++) {
		PyObject *x = part[made];
		int plain = x == Py_None || PyLong_CheckExact(x);

		if (!plain && !PyIndex_Check(x))
			read = 0;
		if (!(part[made] = read && !plain ? PyNumber_Index(x) : Py_NewRef(x)))
			goto out;
		if (made == 0 && PyLong_CheckExact(part[0]) && _PyLong_Sign(part[0]) == 0)
			read = 0;
	}
	r = PySlice_New(part[1], part[2], part[0]);
out:
	while (made-- > 0)
		Py_DECREF(part[made]);
	return r;
}

static PyObject *memory_subscript_plain(PyObject *self, PyObject *key)
{
	PyMemoryViewObject *mv = (PyMemoryViewObject *)self;
	PyObject *r;

	if (!pylayer_armed() || !memory_reads_key(mv) || PyLong_CheckExact(key))
		return memory_subscript_real(self, key);
	if (PyIndex_Check(key))
		key = memory_index_plain(key);
	else if (PySlice_Check(key))
		key = memory_slice_plain(key);
	else if (memory_indexes(mv, key) && memory_format_known(mv))
		key = memory_indexes_plain(mv, key);
	else
		return memory_subscript_real(self, key);
	if (!key)
		return NULL;
	r = memory_subscript_real(self, key);
	Py_DECREF(key);
	return r;
}

static int memory_assign_plain(PyObject *self, PyObject *key, PyObject *value)
{
	PyMemoryViewObject *mv = (PyMemoryViewObject *)self;
	Py_buffer src;
	int rc;

	if (!pylayer_armed() || !value || !memory_reads_key(mv) || !memory_format_known(mv) ||
	    mv->view.readonly || PyLong_CheckExact(key))
		return memory_assign_real(self, key, value);
	if (PyIndex_Check(key) && mv->view.ndim == 1) {
		key = memory_index_plain(key);
	} else if (PySlice_Check(key) && mv->view.ndim == 1) {
		/* (the value's buffer is asked for before the key is read) */
		if (PyObject_GetBuffer(value, &src, PyBUF_FULL_RO) < 0)
			return -1;
		PyBuffer_Release(&src);
		key = memory_slice_plain(key);
	} else if (memory_indexes(mv, key)) {
		key = memory_indexes_plain(mv, key);
	} else {
		return memory_assign_real(self, key, value);
	}
	if (!key)
		return -1;
	rc = memory_assign_real(self, key, value);
	Py_DECREF(key);
	return rc;
}

static int memory_subscripts_guard(void)
{
	PyMappingMethods *m = PyMemoryView_Type.tp_as_mapping;

	if (!m || !m->mp_subscript || !m->mp_ass_subscript) {
		PyErr_SetString(PyExc_TypeError, "memoryview's subscripts are not as known");
		return -1;
	}
	memory_subscript_real = m->mp_subscript;
	memory_assign_real = m->mp_ass_subscript;
	m->mp_subscript = memory_subscript_plain;
	m->mp_ass_subscript = memory_assign_plain;
	if (rewrap(&PyMemoryView_Type, "__getitem__", (void *)memory_subscript_real,
	           (void *)memory_subscript_plain) < 0 ||
	    rewrap(&PyMemoryView_Type, "__setitem__", (void *)memory_assign_real,
	           (void *)memory_assign_plain) < 0 ||
	    rewrap(&PyMemoryView_Type, "__delitem__", (void *)memory_assign_real,
	           (void *)memory_assign_plain) < 0)
		return -1;
	return 0;
}

static int decimal_guard(void)
{
	PyObject *d = PyImport_GetModule(PyUnicode_InternFromString("decimal")), *c;
	void *real;
	int rc = -1;

	if (!d) /* not among the allowed modules: never loaded in a worker */
		return PyErr_Occurred() ? -1 : 0;
	c = PyObject_GetAttrString(d, "Context");
	if (!c || !PyType_Check(c) || !((PyTypeObject *)c)->tp_getattro ||
	    ((PyTypeObject *)c)->tp_getattro == PyObject_GenericGetAttr) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "decimal.Context is not as known");
		goto out;
	}
	if (PyType_Ready(&signals_type) < 0 ||
	    !(signals_names[0] = PyUnicode_InternFromString("traps")) ||
	    !(signals_names[1] = PyUnicode_InternFromString("flags")))
		goto out;
	if (held_slot((PyTypeObject *)c, offsetof(PyTypeObject, tp_getattro),
	              (void *)context_getattro, &real) < 0)
		goto out;
	context_getattro_real = (getattrofunc)real;
	if (rewrap((PyTypeObject *)c, "__getattribute__", real, (void *)context_getattro) < 0)
		goto out;
	rc = decimal_context_held(d);
out:
	Py_XDECREF(c);
	Py_XDECREF(d);
	return rc;
}

/* ---- context variables set with the old map held -------------------------------------------
 * CPython 3.11's contextvar_set drops the context's old map of variables before it writes the
 * variable's cache (borrowed): a __del__ of the value only the old map held that set the same
 * variable left the cache naming a value the map no longer held (reset(token): held only by
 * the token, freed with it, and every get() handed the freed object out). decimal sets its
 * own variable the same way from C (setcontext, localcontext's enter and exit). Each of these
 * runs with a copy of the current context held (the same map): nothing dies inside, and the
 * map, released after, runs such a __del__ once the cache is written. */
#define N_CTX_HELD 5
static PyCFunction ctx_held_real[N_CTX_HELD];

static PyObject *ctx_held_call(int k, PyObject *self, PyObject *arg)
{
	PyObject *held = PyContext_CopyCurrent(), *r;

	if (!held)
		return NULL;
	r = ctx_held_real[k](self, arg);
	Py_DECREF(held);
	return r;
}

static PyObject *ctx_held_0(PyObject *s, PyObject *a)
{
	return ctx_held_call(0, s, a);
}

static PyObject *ctx_held_1(PyObject *s, PyObject *a)
{
	return ctx_held_call(1, s, a);
}

static PyObject *ctx_held_2(PyObject *s, PyObject *a)
{
	return ctx_held_call(2, s, a);
}

static PyObject *ctx_held_3(PyObject *s, PyObject *a)
{
	return ctx_held_call(3, s, a);
}

static PyObject *ctx_held_4(PyObject *s, PyObject *a)
{
	return ctx_held_call(4, s, a);
}

/* The C function of o (a method descriptor or a built-in function) of flags, swapped for the
 * k-th holder. */
static int ctx_held_swap(PyObject *o, int flags, int k)
{
	static const PyCFunction with[N_CTX_HELD] = {ctx_held_0, ctx_held_1, ctx_held_2, ctx_held_3,
	                                             ctx_held_4};
	PyMethodDef *def = !o ? NULL
	                   : PyObject_TypeCheck(o, &PyMethodDescr_Type)
	                       ? ((PyMethodDescrObject *)o)->d_method
	                   : PyCFunction_Check(o) ? ((PyCFunctionObject *)o)->m_ml
	                                          : NULL;

	if (!def || (def->ml_flags & ~METH_COEXIST) != flags) {
		PyErr_SetString(PyExc_TypeError, "a context variable's setter is not as known");
		return -1;
	}
	if (def->ml_meth != with[k]) {
		ctx_held_real[k] = def->ml_meth;
		def->ml_meth = with[k];
	}
	return 0;
}

static int contextvars_guard(void)
{
	PyObject *d = PyContextVar_Type.tp_dict, *dec, *f = NULL, *cm = NULL, *cmt = NULL;
	int rc = -1;

	if (!d || ctx_held_swap(PyDict_GetItemString(d, "set"), METH_O, 0) < 0 ||
	    ctx_held_swap(PyDict_GetItemString(d, "reset"), METH_O, 1) < 0)
		return -1;
	dec = PyImport_GetModule(PyUnicode_InternFromString("decimal"));
	if (!dec) /* not among the allowed modules: never loaded in a worker */
		return PyErr_Occurred() ? -1 : 0;
	f = PyObject_GetAttrString(dec, "setcontext");
	cm = f ? PyObject_CallMethod(dec, "localcontext", NULL) : NULL;
	cmt = cm ? (PyObject *)Py_TYPE(cm) : NULL;
	if (cmt && ((PyTypeObject *)cmt)->tp_dict && ctx_held_swap(f, METH_O, 2) == 0 &&
	    ctx_held_swap(PyDict_GetItemString(((PyTypeObject *)cmt)->tp_dict, "__enter__"),
	                  METH_NOARGS, 3) == 0 &&
	    ctx_held_swap(PyDict_GetItemString(((PyTypeObject *)cmt)->tp_dict, "__exit__"),
	                  METH_VARARGS, 4) == 0)
		rc = 0;
	Py_XDECREF(cm);
	Py_XDECREF(f);
	Py_DECREF(dec);
	return rc;
}

/* ---- compressors used before they were initialised ----------------------------------------
 *
 * bz2's and lzma's compressors and decompressors made by __new__ alone (or by a subclass whose
 * __init__ did not call theirs) have no lock, and their methods took it: SIGSEGV. Their
 * methods refuse an object whose lock (the last field of each, CPython 3.11's layout) was never
 * made. */
#define UNINIT_MAX 6
static struct {
	PyObject *real;
	Py_ssize_t lock_at;
	int decompressor; /* 1: bz2's, 2: lzma's (below) */
} uninit[UNINIT_MAX];
static int n_uninit;

/* A decompressor whose decompress() failed kept its stream's input pointer where the failure
 * left it: into the caller's data when a MemoryError came as it copied the tail it had not
 * read (the data freed, the next decompress() wrote its input there: another object's bytes,
 * and read on from it), or in the middle of a block that a data error stopped (called again,
 * libbz2 resumed its selectors and wrote past a stack array). After any failure the stream has
 * no input and the decompressor is at its end: a later decompress() raises EOFError, as one
 * after the stream's end does. CPython 3.11's layouts: */
struct bz2_decompressor_layout {
	PyObject_HEAD struct {
		char *next_in;
		unsigned int avail_in, total_in_lo32, total_in_hi32;
		char *next_out;
		unsigned int avail_out, total_out_lo32, total_out_hi32;
		void *state, *bzalloc, *bzfree, *opaque;
	} bzs;
	char eof;
	PyObject *unused_data;
	char needs_input;
	char *input_buffer;
	size_t input_buffer_size, bzs_avail_in_real;
	PyThread_type_lock lock;
};
struct lzma_decompressor_layout {
	PyObject_HEAD void *alloc[3];
	struct {
		const uint8_t *next_in;
		size_t avail_in;
		uint64_t total_in;
		uint8_t *next_out;
		size_t avail_out;
		uint64_t total_out;
		void *allocator, *internal, *reserved_ptr[4];
		uint64_t reserved_int[2];
		size_t reserved_size[2];
		int reserved_enum[2];
	} lzs;
	int check;
	char eof;
	PyObject *unused_data;
	char needs_input;
	uint8_t *input_buffer;
	size_t input_buffer_size;
	PyThread_type_lock lock;
};

static void decompressor_ended(int kind, PyObject *self)
{
	PyThread_type_lock lock =
	    *(PyThread_type_lock *)((char *)self +
	                            (kind == 1 ? offsetof(struct bz2_decompressor_layout, lock)
	                                       : offsetof(struct lzma_decompressor_layout, lock)));

	if (!PyThread_acquire_lock(lock, 0)) {
		Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock(lock, 1);
		Py_END_ALLOW_THREADS
	}
	if (kind == 1) {
		struct bz2_decompressor_layout *d = (struct bz2_decompressor_layout *)self;
		d->bzs.next_in = NULL;
		d->bzs.avail_in = 0;
		d->bzs_avail_in_real = 0;
		d->needs_input = 0;
		d->eof = 1;
	} else {
		struct lzma_decompressor_layout *d = (struct lzma_decompressor_layout *)self;
		d->lzs.next_in = NULL;
		d->lzs.avail_in = 0;
		d->needs_input = 0;
		d->eof = 1;
	}
	PyThread_release_lock(lock);
}

static PyObject *uninit_call(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *r;

	if (!*(void **)((char *)self + uninit[i].lock_at)) {
		PyErr_Format(PyExc_ValueError,
		             "this %s was not initialised (its __init__ did not run)",
		             Py_TYPE(self)->tp_name);
		return NULL;
	}
	r = call_on(uninit[i].real, self, args, kw);
	if (!r && uninit[i].decompressor)
		decompressor_ended(uninit[i].decompressor, self);
	return r;
}

#define UNINIT_FN(i)                                                                               \
	static PyObject *uninit_##i(PyObject *self, PyObject *args, PyObject *kw)                  \
	{                                                                                          \
		return uninit_call(i, self, args, kw);                                             \
	}
UNINIT_FN(0)
UNINIT_FN(1)
UNINIT_FN(2)
UNINIT_FN(3)
UNINIT_FN(4)
UNINIT_FN(5)
static PyCFunctionWithKeywords uninit_fn[UNINIT_MAX] = {uninit_0, uninit_1, uninit_2,
                                                        uninit_3, uninit_4, uninit_5};
static PyMethodDef uninit_def[UNINIT_MAX];

static int compressors_guard(void)
{
	static const char *const where[][3] = {
	    {"bz2", "BZ2Compressor", "compress"},     {"bz2", "BZ2Compressor", "flush"},
	    {"bz2", "BZ2Decompressor", "decompress"}, {"lzma", "LZMACompressor", "compress"},
	    {"lzma", "LZMACompressor", "flush"},      {"lzma", "LZMADecompressor", "decompress"},
	};

	for (int i = 0; i < UNINIT_MAX; i++) {
		PyObject *name = PyUnicode_FromString(where[i][0]), *m, *t;
		m = name ? PyImport_GetModule(name) : NULL;
		Py_XDECREF(name);
		if (!m) { /* not among the allowed modules */
			if (PyErr_Occurred())
				return -1;
			continue;
		}
		t = PyObject_GetAttrString(m, where[i][1]);
		Py_DECREF(m);
		if (!t || !PyType_Check(t)) {
			Py_XDECREF(t);
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_TypeError, "%s.%s is not as known", where[i][0],
				             where[i][1]);
			return -1;
		}
		uninit[n_uninit].lock_at =
		    ((PyTypeObject *)t)->tp_basicsize - (Py_ssize_t)sizeof(void *);
		uninit[n_uninit].decompressor = strcmp(where[i][2], "decompress") != 0 ? 0
		                                : strcmp(where[i][0], "bz2") == 0      ? 1
		                                                                       : 2;
		if (uninit[n_uninit].decompressor &&
		    ((PyTypeObject *)t)->tp_basicsize !=
		        (Py_ssize_t)(uninit[n_uninit].decompressor == 1
		                         ? sizeof(struct bz2_decompressor_layout)
		                         : sizeof(struct lzma_decompressor_layout))) {
			Py_DECREF(t);
			PyErr_Format(PyExc_TypeError, "%s.%s is not as known", where[i][0],
			             where[i][1]);
			return -1;
		}
		uninit_def[n_uninit] =
		    (PyMethodDef){where[i][2], (PyCFunction)(void (*)(void))uninit_fn[n_uninit],
		                  METH_VARARGS | METH_KEYWORDS, NULL};
		if (replace_method((PyTypeObject *)t, where[i][2], &uninit_def[n_uninit],
		                   &uninit[n_uninit].real) < 0) {
			Py_DECREF(t);
			return -1;
		}
		n_uninit++;
		Py_DECREF(t); /* its module keeps it */
	}
	return 0;
}

/* ---- StringIO after a failed allocation -----------------------------------------------------
 *
 * StringIO marks itself as holding its text in its own buffer before it makes that buffer the
 * text's size (realize, and getvalue's make_intermediate): when the allocation failed (a
 * MemoryError the code can cause near the memory limit) it was left "realized" over a tiny
 * buffer with the text's length, and seek and read copied the heap past the buffer (another
 * object's bytes read back). A StringIO a method left so is no longer used: its methods raise
 * ValueError, as on an object never initialised (its text is gone). CPython 3.11's layout: */
struct stringio_layout {
	PyObject_HEAD Py_UCS4 *buf;
	Py_ssize_t pos, string_size;
	size_t buf_size;
	int state;
	PyObject *accu_large, *accu_small; /* _PyAccu */
	char ok, closed, readuniversal, readtranslate;
	PyObject *decoder, *readnl, *writenl, *dict, *weakreflist;
};
#define STRINGIO_REALIZED 1

#define STRINGIO_METHODS 6
static const char *const stringio_names[STRINGIO_METHODS] = {
    "getvalue", "read", "readline", "write", "truncate", "__getstate__"};
static PyObject *stringio_real[STRINGIO_METHODS];
static PyMethodDef stringio_defs[STRINGIO_METHODS];
static iternextfunc stringio_next_real;

static PyObject *stringio_checked(PyObject *self, PyObject *r)
{
	struct stringio_layout *s = (struct stringio_layout *)self;

	if (!r && s->state == STRINGIO_REALIZED && s->string_size > 0 &&
	    (size_t)s->string_size > s->buf_size)
		s->ok = 0;
	return r;
}

static PyObject *stringio_call(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	return stringio_checked(self, call_on(stringio_real[i], self, args, kw));
}

#define STRINGIO_FN(i)                                                                             \
	static PyObject *stringio_##i(PyObject *self, PyObject *args, PyObject *kw)                \
	{                                                                                          \
		return stringio_call(i, self, args, kw);                                           \
	}
STRINGIO_FN(0)
STRINGIO_FN(1)
STRINGIO_FN(2)
STRINGIO_FN(3)
STRINGIO_FN(4)
STRINGIO_FN(5)
static PyCFunctionWithKeywords stringio_fn[STRINGIO_METHODS] = {stringio_0, stringio_1, stringio_2,
                                                                stringio_3, stringio_4, stringio_5};

static PyObject *stringio_next(PyObject *self)
{
	return stringio_checked(self, stringio_next_real(self));
}

static int stringio_guard(void)
{
	PyObject *io = PyImport_ImportModule("_io"), *t;

	if (!io)
		return -1;
	t = PyObject_GetAttrString(io, "StringIO");
	Py_DECREF(io);
	if (!t || !PyType_Check(t) ||
	    ((PyTypeObject *)t)->tp_basicsize != (Py_ssize_t)sizeof(struct stringio_layout)) {
		Py_XDECREF(t);
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "io.StringIO is not as known");
		return -1;
	}
	for (int i = 0; i < STRINGIO_METHODS; i++) {
		stringio_defs[i] =
		    (PyMethodDef){stringio_names[i], (PyCFunction)(void (*)(void))stringio_fn[i],
		                  METH_VARARGS | METH_KEYWORDS, NULL};
		if (replace_method((PyTypeObject *)t, stringio_names[i], &stringio_defs[i],
		                   &stringio_real[i]) < 0) {
			Py_DECREF(t);
			return -1;
		}
	}
	if (held_slot((PyTypeObject *)t, offsetof(PyTypeObject, tp_iternext), (void *)stringio_next,
	              (void **)&stringio_next_real) < 0 ||
	    rewrap((PyTypeObject *)t, "__next__", (void *)stringio_next_real,
	           (void *)stringio_next) < 0) {
		Py_DECREF(t);
		return -1;
	}
	Py_DECREF(t); /* its module keeps it */
	return 0;
}

/* ---- OrderedDict's walks over its nodes ------------------------------------------------------
 *
 * OrderedDict's repr, copy and == walk its nodes by pointer and look each key up on the way:
 * the key's __hash__ or __eq__ deleted its own node, and the walk went on from the freed node
 * (memory laid there: a fake key, a fake bytearray over all memory). While armed they work
 * over the items as its iterator gives them (which holds what it reads and refuses a changed
 * dict). */
static reprfunc odict_repr_real;
static richcmpfunc odict_compare_real;
static PyObject *odict_copy_real;

static PyObject *odict_repr(PyObject *self)
{
	PyObject *items, *pieces, *r;
	int i;

	if (!pylayer_armed())
		return odict_repr_real(self);
	if (PyObject_Size(self) == 0)
		return PyErr_Occurred() ? NULL
		                        : PyUnicode_FromFormat("%s()", _PyType_Name(Py_TYPE(self)));
	if ((i = Py_ReprEnter(self)) != 0)
		return i > 0 ? PyUnicode_FromString("...") : NULL;
	items = PyObject_CallMethod(self, "items", NULL);
	pieces = items ? PySequence_List(items) : NULL;
	r = pieces ? PyUnicode_FromFormat("%s(%R)", _PyType_Name(Py_TYPE(self)), pieces) : NULL;
	Py_XDECREF(pieces);
	Py_XDECREF(items);
	Py_ReprLeave(self);
	return r;
}

static PyObject *odict_compare(PyObject *v, PyObject *w, int op)
{
	PyObject *same, *kv = NULL, *kw = NULL;
	int eq;

	if (!pylayer_armed() || !PyODict_Check(v) || !PyODict_Check(w) ||
	    (op != Py_EQ && op != Py_NE))
		return odict_compare_real(v, w, op);
	/* As dicts first, then their keys' order, each read by the iterator. */
	if (!(same = PyDict_Type.tp_richcompare(v, w, Py_EQ)))
		return NULL;
	eq = same == Py_True;
	Py_DECREF(same);
	if (eq) {
		kv = PySequence_List(v);
		kw = kv ? PySequence_List(w) : NULL;
		eq = kw ? PyObject_RichCompareBool(kv, kw, Py_EQ) : -1;
		Py_XDECREF(kv);
		Py_XDECREF(kw);
		if (eq < 0)
			return NULL;
	}
	return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *odict_copy(PyObject *self, PyObject *unused)
{
	PyObject *items, *pieces, *copy;

	(void)unused;
	if (!pylayer_armed())
		return PyObject_CallOneArg(odict_copy_real, self);
	items = PyObject_CallMethod(self, "items", NULL);
	pieces = items ? PySequence_List(items) : NULL;
	Py_XDECREF(items);
	copy = pieces ? PyObject_CallNoArgs((PyObject *)Py_TYPE(self)) : NULL;
	for (Py_ssize_t i = 0; copy && i < PyList_GET_SIZE(pieces); i++) {
		PyObject *kv = PyList_GET_ITEM(pieces, i);
		if (!PyTuple_Check(kv) || PyTuple_GET_SIZE(kv) != 2) {
			PyErr_SetString(PyExc_TypeError, "items() must give (key, value) pairs");
			Py_CLEAR(copy);
		} else if (PyObject_SetItem(copy, PyTuple_GET_ITEM(kv, 0),
		                            PyTuple_GET_ITEM(kv, 1)) < 0) {
			Py_CLEAR(copy);
		}
	}
	Py_XDECREF(pieces);
	return copy;
}

static PyMethodDef odict_copy_def = {"copy", odict_copy, METH_NOARGS, NULL};

static int odict_guard(void)
{
	void *real;

	if (held_slot(&PyODict_Type, offsetof(PyTypeObject, tp_repr), (void *)odict_repr, &real) <
	        0 ||
	    rewrap(&PyODict_Type, "__repr__", real, (void *)odict_repr) < 0)
		return -1;
	odict_repr_real = (reprfunc)real;
	/* The comparison slot holds its operands (held_operands_init) and calls this one. */
	for (size_t i = 0; i < N_HELD_COMPARES && !odict_compare_real; i++)
		if (PyODict_Type.tp_richcompare == held_compares[i].held) {
			odict_compare_real = held_compares[i].call;
			held_compares[i].call = odict_compare;
			if (rewrap(&PyODict_Type, "__eq__", (void *)held_compares[i].real,
			           (void *)held_compares[i].held) < 0 ||
			    rewrap(&PyODict_Type, "__ne__", (void *)held_compares[i].real,
			           (void *)held_compares[i].held) < 0)
				return -1;
		}
	if (!odict_compare_real) {
		PyErr_SetString(PyExc_RuntimeError, "OrderedDict's comparison is not held");
		return -1;
	}
	return replace_method(&PyODict_Type, "copy", &odict_copy_def, &odict_copy_real);
}

/* ---- io.TextIOWrapper re-entered ---------------------------------------------------------- */

/* TextIOWrapper's methods hand work to its buffer (the user's code, for a buffer or raw stream
 * of the user's) or to its decoder (a codec of the user's) and then go on with what they had
 * before: a write of the same wrapper from inside its write had its bytes replaced but counted
 * (the next flush sent uninitialised memory); a detach() from inside a write left the buffer
 * NULL that the write then called (SIGSEGV), and from inside a read dropped the BufferedReader
 * under its own read (its freed buffer then written); a seek() from the decoder's getstate()
 * freed the snapshot tell() went on reading; a detach() from inside the write its flush
 * makes left the buffer NULL that flush then called. While a wrapper reads, writes, seeks,
 * tells or flushes, those of its methods that change its buffer, decoder or snapshot raise
 * RuntimeError (tell, which seek calls, and flush, which tell, seek, close and the others call,
 * are let through: they change none of them). */
enum text_op {
	TEXT_READ,
	TEXT_READLINE,
	TEXT_NEXT,
	TEXT_TELL,
	TEXT_SEEK,
	TEXT_TRUNCATE,
	TEXT_WRITE,
	TEXT_DETACH,
	TEXT_CLOSE,
	TEXT_RECONFIGURE,
	TEXT_FLUSH,
	TEXT_OPS
};

static const char *const text_op_names[TEXT_OPS] = {"read",  "readline",    "__next__", "tell",
                                                    "seek",  "truncate",    "write",    "detach",
                                                    "close", "reconfigure", "flush"};
static PyObject *text_real[TEXT_OPS]; /* the class's own method descriptors (not __next__) */
static iternextfunc text_next_real;
static struct text_running {
	PyObject *self;
	enum text_op op;
} * text_running; /* the wrappers' methods running now */
static Py_ssize_t n_text_running, text_running_room;

static int text_busy(PyObject *self, enum text_op what)
{
	if (what == TEXT_TELL || what == TEXT_FLUSH)
		return 0;
	for (Py_ssize_t i = n_text_running - 1; i >= 0; i--)
		if (text_running[i].self == self) {
			PyErr_Format(PyExc_RuntimeError,
			             "reentrant call inside TextIOWrapper.%s (%s called while the "
			             "same text stream runs %s)",
			             text_op_names[text_running[i].op], text_op_names[what],
			             text_op_names[text_running[i].op]);
			return 1;
		}
	return 0;
}

static int text_enter(PyObject *self, enum text_op op)
{
	if (text_busy(self, op))
		return -1;
	if (n_text_running == text_running_room) {
		Py_ssize_t room = text_running_room ? 2 * text_running_room : 16;
		struct text_running *more =
		    PyMem_Realloc(text_running, (size_t)room * sizeof(*more));
		if (!more) {
			PyErr_NoMemory();
			return -1;
		}
		text_running = more;
		text_running_room = room;
	}
	text_running[n_text_running++] = (struct text_running){self, op};
	return 0;
}

static void text_leave(PyObject *self)
{
	for (Py_ssize_t k = n_text_running - 1; k >= 0; k--)
		if (text_running[k].self == self) {
			memmove(&text_running[k], &text_running[k + 1],
			        (size_t)(n_text_running - k - 1) * sizeof(*text_running));
			n_text_running--;
			return;
		}
}

static PyObject *text_call(enum text_op op, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *r;

	if (text_enter(self, op) < 0)
		return NULL;
	r = call_on(text_real[op], self, args, kw);
	text_leave(self);
	return r;
}

static PyObject *text_next(PyObject *self)
{
	PyObject *r;

	if (text_enter(self, TEXT_NEXT) < 0)
		return NULL;
	r = text_next_real(self);
	text_leave(self);
	return r;
}

#define TEXT_METHOD(op, fn)                                                                        \
	static PyObject *fn(PyObject *self, PyObject *args, PyObject *kw)                          \
	{                                                                                          \
		return text_call(op, self, args, kw);                                              \
	}
TEXT_METHOD(TEXT_READ, text_read)
TEXT_METHOD(TEXT_READLINE, text_readline)

/* CPython 3.11's textio struct (Modules/_io/textio.c), as far as tell() reads it; checked
 * against a wrapper that has read a known chunk when the guard is installed (text_tail_fits). */
struct textio_state {
	PyObject_HEAD int ok;
	int detached;
	Py_ssize_t chunk_size;
	PyObject *buffer, *encoding, *encoder, *decoder, *readnl, *errors;
	const char *writenl;
	char line_buffering, write_through, readuniversal, readtranslate, writetranslate, seekable,
	    has_read1, telling, finalizing;
	void *encodefunc;
	char encoding_start_of_stream;
	PyObject *decoded_chars;
	Py_ssize_t decoded_chars_used;
	PyObject *pending_bytes;
	Py_ssize_t pending_bytes_count;
	PyObject *snapshot;
	double b2cratio;
	PyObject *raw, *weakreflist, *dict;
};

/* tell() guesses where in its snapshot's bytes the characters read so far end: the bytes-per-
 * character ratio of the last chunk read times their count, then decodes that many bytes from
 * the snapshot unchecked. A seek() to a cookie keeps the ratio of an earlier chunk (4 for
 * emoji) and sets a snapshot of another (ASCII): the decoder was handed 4 times the snapshot's
 * bytes, another object's among them (V87c H1). A ratio that would reach past the snapshot is
 * dropped first: tell() then walks the snapshot from its start, as it does for a ratio of 0. */
static void text_tell_bounded(PyObject *self)
{
	struct textio_state *t = (struct textio_state *)self;
	PyObject *next;

	if (Py_TYPE(self)->tp_basicsize < (Py_ssize_t)sizeof(*t) || !t->ok || t->detached ||
	    !t->snapshot || !PyTuple_Check(t->snapshot) || PyTuple_GET_SIZE(t->snapshot) != 2)
		return;
	next = PyTuple_GET_ITEM(t->snapshot, 1);
	if (!PyBytes_Check(next) || t->decoded_chars_used <= 0)
		return;
	if (!(t->b2cratio * (double)t->decoded_chars_used <= (double)PyBytes_GET_SIZE(next)))
		t->b2cratio = 0.0;
}

static PyObject *text_tell(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *r;

	if (text_enter(self, TEXT_TELL) < 0)
		return NULL;
	text_tell_bounded(self);
	r = call_on(text_real[TEXT_TELL], self, args, kw);
	text_leave(self);
	return r;
}
TEXT_METHOD(TEXT_SEEK, text_seek)
TEXT_METHOD(TEXT_TRUNCATE, text_truncate)
TEXT_METHOD(TEXT_WRITE, text_write)
TEXT_METHOD(TEXT_DETACH, text_detach)
TEXT_METHOD(TEXT_CLOSE, text_close)
TEXT_METHOD(TEXT_FLUSH, text_flush)

#define TEXT_DEF(name, fn)                                                                         \
	{                                                                                          \
		name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, NULL          \
	}
static PyMethodDef text_defs[TEXT_OPS] = {
    [TEXT_READ] = TEXT_DEF("read", text_read),
    [TEXT_READLINE] = TEXT_DEF("readline", text_readline),
    [TEXT_TELL] = TEXT_DEF("tell", text_tell),
    [TEXT_SEEK] = TEXT_DEF("seek", text_seek),
    [TEXT_TRUNCATE] = TEXT_DEF("truncate", text_truncate),
    [TEXT_WRITE] = TEXT_DEF("write", text_write),
    [TEXT_DETACH] = TEXT_DEF("detach", text_detach),
    [TEXT_CLOSE] = TEXT_DEF("close", text_close),
    [TEXT_FLUSH] = TEXT_DEF("flush", text_flush),
};

/* ---- arguments C code takes for what they are not ---------------------------------------- */

/* TextIOWrapper.reconfigure compared an encoding that is not a str with "locale" as if it were
 * one: a bytes object's contents read as a string's fields, and a legacy string's "ready"
 * step freed the pointer they held (any address). While armed encoding and errors are a str
 * or None. */
static PyObject *reconfigure_real;

static PyObject *reconfigure(PyObject *self, PyObject *args, PyObject *kw)
{
	static const char *const names[] = {"encoding", "errors", NULL};
	PyObject *r, *kwp = NULL;

	/* (keywords by their characters: a str subclass's could hide one from the lookup) */
	if (pylayer_armed() && kw && !(kw = kwp = pylayer_plain_kwargs(kw)))
		return NULL;
	if (pylayer_armed() && kw && PyDict_Check(kw))
		for (const char *const *n = names; *n; n++) {
			PyObject *v = PyDict_GetItemString(kw, *n);
			if (v && v != Py_None && !PyUnicode_Check(v)) {
				Py_XDECREF(kwp);
				return PyErr_Format(
				    PyExc_TypeError,
				    "reconfigure() argument '%s' must be str or None, "
				    "not %.100s",
				    *n, Py_TYPE(v)->tp_name);
			}
		}
	if (text_enter(self, TEXT_RECONFIGURE) < 0) {
		Py_XDECREF(kwp);
		return NULL;
	}
	r = call_on(reconfigure_real, self, args, kw);
	text_leave(self);
	Py_XDECREF(kwp);
	return r;
}

static PyMethodDef reconfigure_def = {"reconfigure", (PyCFunction)(void (*)(void))reconfigure,
                                      METH_VARARGS | METH_KEYWORDS, NULL};

/* bytearray.join took its own buffer's address and length, then iterated the argument: a
 * generator that cleared the bytearray had the join copy from the freed block. While armed
 * the items are read first. */
static PyObject *bytearray_join_real;

static PyObject *bytearray_join(PyObject *self, PyObject *iterable)
{
	PyObject *items = pylayer_armed() ? PySequence_List(iterable) : Py_NewRef(iterable), *r;

	if (!items)
		return NULL;
	r = PyObject_CallFunctionObjArgs(bytearray_join_real, self, items, NULL);
	Py_DECREF(items);
	return r;
}

static PyMethodDef bytearray_join_def = {"join", bytearray_join, METH_O, NULL};

/* except* took what an exception group's split() answered as a pair without checking it (an
 * int's digits read as the pair's two items: any object made of chosen memory). split is
 * BaseExceptionGroup's own while armed: a class with its own split (or lookup) is not
 * instantiated, none is given one later, and no instance gets one of its own. */
static newfunc eg_new_real;
static setattrofunc eg_setattro_real;

/* The names through which a group's split is found: defined by a class, set on a class (or
 * its bases), set on an instance. */
static const char *const eg_defined[] = {"split", "__getattr__", "__getattribute__", NULL};
static const char *const eg_class_set[] = {"split", "__getattr__", "__getattribute__", "__bases__",
                                           NULL};
static const char *const eg_instance_set[] = {"split", "__class__", NULL};

static int eg_name(PyObject *name, const char *const *names)
{
	for (; PyUnicode_Check(name) && *names; names++)
		if (PyUnicode_CompareWithASCIIString(name, *names) == 0)
			return 1;
	return 0;
}

static int eg_refused(PyObject *name)
{
	PyErr_Format(PyExc_TypeError,
	             "an exception group's %S is its class's own in the sandbox (except* reads "
	             "what split() answers)",
	             name);
	return -1;
}

int pyreentry_class_attr_checked(PyObject *cls, PyObject *name, PyObject *value)
{
	int found;

	PyTypeObject *nd = pydata_ndarray();

	/* (on a class beneath ndarray, or a mixin of one) */
	if (pylayer_armed() && PyType_Check(cls) && nd && cls != (PyObject *)nd &&
	    array_own_name(name) && subclass_beneath((PyTypeObject *)cls, nd, 0) != 0)
		return PyErr_Occurred() ? -1 : array_own_refused((PyTypeObject *)cls, name);
	/* (on a class beneath int, float, complex or a date, or a mixin of one) */
	for (size_t i = 0; pylayer_armed() && PyType_Check(cls) && i < NUMBER_TYPES; i++) {
		if (number_type(i) && number_own_name(type_kind(i), name) &&
		    !library_value((PyTypeObject *)cls, PyUnicode_AsUTF8(name), value) &&
		    (found = subclass_beneath((PyTypeObject *)cls, number_type(i), 0)) != 0) {
			if (found < 0)
				return -1;
			PyObject *cls_name = PyUnicode_FromString(((PyTypeObject *)cls)->tp_name);
			if (cls_name)
				number_own_refused(type_kind(i), cls_name, PyUnicode_AsUTF8(name));
			Py_XDECREF(cls_name);
			return -1;
		}
	}
	if (!pylayer_armed() || !PyType_Check(cls) || !eg_name(name, eg_class_set))
		return 0;
	if ((found = subclass_beneath((PyTypeObject *)cls, (PyTypeObject *)PyExc_BaseExceptionGroup,
	                              0)) != 0)
		return found < 0 ? -1 : eg_refused(name);
	return 0;
}

static PyObject *eg_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	PyObject *mro = t->tp_mro;

	for (Py_ssize_t i = 0; pylayer_armed() && mro && i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		if (!(b->tp_flags & Py_TPFLAGS_HEAPTYPE) || !b->tp_dict)
			continue;
		for (const char *const *n = eg_defined; *n; n++)
			if (PyDict_GetItemString(b->tp_dict, *n)) {
				PyErr_Format(PyExc_TypeError,
				             "an exception group's %s is its class's own "
				             "in the sandbox "
				             "(except* reads what split() answers)",
				             *n);
				return NULL;
			}
	}
	return eg_new_real(t, args, kw);
}

static int eg_setattro(PyObject *self, PyObject *name, PyObject *value)
{
	if (pylayer_armed() && eg_name(name, eg_instance_set))
		return eg_refused(name);
	return eg_setattro_real(self, name, value);
}

/* A class of the user's beneath an exception group got CPython's generic setattro, not the
 * group's: CPython gives a new class the C function the __setattr__ found along its MRO wraps
 * (object's), so e.split = f on an instance of class EG(ExceptionGroup) was set, and except*
 * read its answer as a pair (the sandbox escaped). Each such class gets the group's setattro
 * when it is made and when its __setattr__ or bases change (pyguard.c); one with a __setattr__
 * of its own reaches a group's attributes only through object.__setattr__, which refuses to
 * jump over the group's C setattro. */
static void eg_class_guard(PyTypeObject *t)
{
	if (eg_setattro_real && t != (PyTypeObject *)PyExc_BaseExceptionGroup &&
	    PyType_IsSubtype(t, (PyTypeObject *)PyExc_BaseExceptionGroup) &&
	    (t->tp_setattro == eg_setattro_real || t->tp_setattro == PyObject_GenericSetAttr))
		t->tp_setattro = eg_setattro;
}

/* A group's split as a data descriptor: an instance's dict, however it is reached (a library
 * reading __dict__ by a name the user chose), cannot shadow it; it gives BaseExceptionGroup's
 * own split, and is not set. */
static PyObject *eg_split_real;

static PyObject *eg_split_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)self;
	if (!obj || obj == Py_None)
		return Py_NewRef(eg_split_real);
	return Py_TYPE(eg_split_real)->tp_descr_get(eg_split_real, obj, type);
}

static int eg_split_set(PyObject *self, PyObject *obj, PyObject *value)
{
	static PyObject *name;

	(void)self;
	(void)obj;
	(void)value;
	if (!name && !(name = PyUnicode_InternFromString("split")))
		return -1;
	return eg_refused(name);
}

static PyTypeObject eg_split_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.GroupSplit",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_descr_get = eg_split_get,
    .tp_descr_set = eg_split_set,
    .tp_doc = "An exception group's split, its class's own.",
};

static int exception_groups_guard(void)
{
	PyTypeObject *t = (PyTypeObject *)PyExc_BaseExceptionGroup;
	PyObject *guard;
	void *real;

	eg_split_real = Py_XNewRef(PyDict_GetItemString(t->tp_dict, "split"));
	if (!eg_split_real || !PyObject_TypeCheck(eg_split_real, &PyMethodDescr_Type) ||
	    PyType_Ready(&eg_split_type) < 0) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError,
			                "BaseExceptionGroup.split is not as known");
		return -1;
	}
	guard = PyType_GenericAlloc(&eg_split_type, 0);
	if (!guard || PyDict_SetItemString(t->tp_dict, "split", guard) < 0) {
		Py_XDECREF(guard);
		return -1;
	}
	Py_DECREF(guard);
	PyType_Modified(t);

	eg_new_real = t->tp_new;
	if (pyguard_replace_new(t, eg_new_real, eg_new) < 0 ||
	    held_slot(t, offsetof(PyTypeObject, tp_setattro), (void *)eg_setattro, &real) < 0)
		return -1;
	eg_setattro_real = (setattrofunc)real;
	/* BaseException's __setattr__ wrapper serves the groups too: object.__setattr__ and
	 * BaseException.__setattr__ refuse to jump over a C setattro of a class beneath. */
	return 0;
}

/* ---- zoneinfo's loader -----------------------------------------------------------------------
 *
 * ZoneInfo's C loader (CPython 3.11) builds a zone from what zoneinfo._common.load_data, a
 * Python reading of the TZif file, answers, and checks a transition's type index only against
 * one past the last type (the real bound is an assert): ZoneInfo.from_file of a file whose
 * transition named the type after the last had the zone's offsets read past their arrays, DST
 * offsets written past theirs, and utcoffset() answer the object at an address laid past the
 * array of types (a fake bytearray over all memory: full read/write). The module's load_data
 * is one of the sandbox's (the C loader looks it up there at each load; the user's code reads
 * no attribute of that module, nor changes one of a real module): it hands on what the reading
 * answered only when every transition names one of the types, the transitions' times and types
 * are as many, and so are the types' offsets, DST flags and names (no transition without a
 * type), all of them plain ints, strs and tuples (nothing of the user's runs in the loader). */
static PyObject *tz_load_data_real;

static int tz_invalid(const char *what)
{
	PyErr_Format(PyExc_ValueError, "invalid TZif data: %s", what);
	return -1;
}

/* Are t's n items plain: ints (bounded by [0, below) if below > 0; a bool too if flag) or, for
 * text, strs? */
static int tz_items(PyObject *t, Py_ssize_t n, Py_ssize_t below, int flag, int text)
{
	if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != n)
		return tz_invalid("its tables do not agree in length");
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *v = PyTuple_GET_ITEM(t, i);
		if (text) {
			if (!PyUnicode_CheckExact(v))
				return tz_invalid("a zone's name is not a str");
			continue;
		}
		if (!PyLong_CheckExact(v) && !(flag && PyBool_Check(v)))
			return tz_invalid("a table holds something else than an int");
		if (below > 0) {
			Py_ssize_t k = PyLong_AsSsize_t(v);
			if (k == -1 && PyErr_Occurred())
				PyErr_Clear();
			if (k < 0 || k >= below)
				return tz_invalid(
				    "a transition names a type the file does not have");
		}
	}
	return 0;
}

/* Would the C loader's derivation of DST offsets read the transition after the last one? It
 * looks at the next transition for a DST type whose offset the one before did not tell, also
 * at the last transition: it read past the table (and indexed the types with what it found
 * there). Its loop, as it runs, on checked tables (no zone of the tz database gets there). */
static int tz_dst_reads_past(PyObject *trans_idx, PyObject *utcoffs, PyObject *isdsts)
{
	Py_ssize_t n = PyTuple_GET_SIZE(trans_idx), nt = PyTuple_GET_SIZE(utcoffs), found = 0;
	long long *dstoffs = nt > 0 ? PyMem_Calloc((size_t)nt, sizeof(*dstoffs)) : NULL;
	int past = 0;

#define TZ_IDX(i) PyLong_AsSsize_t(PyTuple_GET_ITEM(trans_idx, (i)))
#define TZ_OFF(i) PyLong_AsLongLong(PyTuple_GET_ITEM(utcoffs, (i)))
#define TZ_DST(i) PyObject_IsTrue(PyTuple_GET_ITEM(isdsts, (i)))
	if (nt > 0 && !dstoffs)
		return 1; /* refused for want of memory: never read past */
	for (Py_ssize_t i = 1; i < n && found < nt; i++) {
		Py_ssize_t idx = TZ_IDX(i), comp = TZ_IDX(i - 1);
		long long dstoff = 0, utcoff = TZ_OFF(idx);

		if (TZ_DST(idx) != 1 || dstoffs[idx] != 0)
			continue;
		if (TZ_DST(comp) != 1)
			dstoff = utcoff - TZ_OFF(comp);
		if (!dstoff && idx < nt - 1) {
			if (i + 1 >= n) {
				past = 1;
				break;
			}
			comp = TZ_IDX(i + 1);
			if (TZ_DST(comp) == 1)
				continue;
			dstoff = utcoff - TZ_OFF(comp);
		}
		if (dstoff) {
			found++;
			dstoffs[idx] = dstoff;
		}
	}
#undef TZ_IDX
#undef TZ_OFF
#undef TZ_DST
	PyMem_Free(dstoffs);
	PyErr_Clear(); /* an offset past a C long: the loader refuses it itself */
	return past;
}

static PyObject *tz_load_data(PyObject *unused, PyObject *fobj)
{
	PyObject *d = PyObject_CallOneArg(tz_load_data_real, fobj), *tz;
	Py_ssize_t transitions, types;

	(void)unused;
	if (!d)
		return NULL;
	if (!PyTuple_CheckExact(d) || PyTuple_GET_SIZE(d) != 6 ||
	    !PyTuple_CheckExact(PyTuple_GET_ITEM(d, 1)) ||
	    !PyTuple_CheckExact(PyTuple_GET_ITEM(d, 2))) {
		tz_invalid("not as read");
		goto bad;
	}
	transitions = PyTuple_GET_SIZE(PyTuple_GET_ITEM(d, 1));
	types = PyTuple_GET_SIZE(PyTuple_GET_ITEM(d, 2));
	tz = PyTuple_GET_ITEM(d, 5);
	if (transitions > 0 && types == 0) {
		tz_invalid("transitions without a type");
		goto bad;
	}
	if (tz_items(PyTuple_GET_ITEM(d, 0), transitions, types, 0, 0) < 0 ||
	    tz_items(PyTuple_GET_ITEM(d, 1), transitions, 0, 0, 0) < 0 ||
	    tz_items(PyTuple_GET_ITEM(d, 2), types, 0, 0, 0) < 0 ||
	    tz_items(PyTuple_GET_ITEM(d, 3), types, 0, 1, 0) < 0 ||
	    tz_items(PyTuple_GET_ITEM(d, 4), types, 0, 0, 1) < 0)
		goto bad;
	if (tz != Py_None && !PyBytes_CheckExact(tz)) {
		tz_invalid("its TZ string is not bytes");
		goto bad;
	}
	if (tz_dst_reads_past(PyTuple_GET_ITEM(d, 0), PyTuple_GET_ITEM(d, 2),
	                      PyTuple_GET_ITEM(d, 3))) {
		tz_invalid("its last transition's DST offset cannot be told");
		goto bad;
	}
	return d; /* tuples of ints, strs and bytes: nothing in it changes */
bad:
	Py_DECREF(d);
	return NULL;
}

static PyMethodDef tz_load_data_def = {"load_data", tz_load_data, METH_O, NULL};

static int zoneinfo_guard(void)
{
	PyObject *name = PyUnicode_FromString("zoneinfo._common"), *m, *f;
	int rc = -1;

	m = name ? PyImport_GetModule(name) : NULL;
	Py_XDECREF(name);
	if (!m) /* zoneinfo is not among the allowed modules */
		return PyErr_Occurred() ? -1 : 0;
	tz_load_data_real = PyObject_GetAttrString(m, "load_data");
	if (!tz_load_data_real || !PyFunction_Check(tz_load_data_real)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError,
			                "zoneinfo._common.load_data is not as known");
		goto out;
	}
	f = PyCFunction_New(&tz_load_data_def, NULL);
	if (f && PyObject_SetAttrString(m, "load_data", f) == 0)
		rc = 0;
	Py_XDECREF(f);
out:
	Py_DECREF(m);
	return rc;
}

/* ---- pyexpat's parsers -----------------------------------------------------------------------
 *
 * An expat parser (CPython 3.11's pyexpat over expat) lets the handlers it calls while it
 * parses reach it again: Parse (or ParseFile, or ElementTree's XMLParser.feed) called from a
 * handler on the same parser moved expat's input buffer, and the outer parse went on reading
 * the freed one; buffer_text set false (or buffer_size changed) from the character data handler
 * freed the buffer the text was then copied into (NULL written); ordered_attributes changed
 * from inside a start tag (an interned name's __hash__) had a dict filled as a list. And a
 * parser made by ExternalEntityParserCreate shares its parent's DTD without holding the
 * parent: the parent freed, the sub-parser wrote its declarations into the freed tables. A
 * parser is not parsed again while it parses (RuntimeError), its settings are not changed
 * while it parses (RuntimeError; its handlers are), and ExternalEntityParserCreate is refused
 * while armed (ElementTree does not use it). A change that flushes the text a failed parse
 * left (the character data handler set again, buffer_text, buffer_size) runs that handler
 * outside any parse: the parser is as busy then. */
#define EXPAT_PARSE 2
static PyObject *expat_parse_real[EXPAT_PARSE]; /* Parse, ParseFile */
static PyObject *expat_subparser_real;
static PyObject **expat_parsing; /* the parsers parsing now */
static PyObject *expat_kept;     /* handlers replaced while a parse ran (expat_setattro) */
static Py_ssize_t n_expat_parsing, expat_parsing_room;

static int expat_busy(PyObject *self)
{
	for (Py_ssize_t i = n_expat_parsing - 1; i >= 0; i--)
		if (expat_parsing[i] == self)
			return 1;
	return 0;
}

/* The parser self runs code of the user's: a parse, or a change that flushes its buffered
 * text through its character data handler (that handler set again, buffer_text or buffer_size
 * changed: outside a parse too, after one that failed). Until expat_leave it is busy. */
static int expat_enter(PyObject *self)
{
	if (n_expat_parsing == expat_parsing_room) {
		Py_ssize_t room = expat_parsing_room ? 2 * expat_parsing_room : 16;
		PyObject **more = PyMem_Realloc(expat_parsing, (size_t)room * sizeof(*more));
		if (!more) {
			PyErr_NoMemory();
			return -1;
		}
		expat_parsing = more;
		expat_parsing_room = room;
	}
	expat_parsing[n_expat_parsing++] = self;
	return 0;
}

/* rc, or -1 when the handlers kept cannot go once no parser is busy. */
static int expat_leave(PyObject *self, int rc)
{
	for (Py_ssize_t k = n_expat_parsing - 1; k >= 0; k--)
		if (expat_parsing[k] == self) {
			expat_parsing[k] = expat_parsing[--n_expat_parsing];
			break;
		}
	/* No parser runs code: the handlers replaced meanwhile can go. */
	if (n_expat_parsing == 0 && PyList_GET_SIZE(expat_kept) > 0 &&
	    PyList_SetSlice(expat_kept, 0, PyList_GET_SIZE(expat_kept), NULL) < 0)
		return -1;
	return rc;
}

static PyObject *expat_parse(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *r;

	if (expat_busy(self)) {
		PyErr_SetString(PyExc_RuntimeError, "this XML parser is parsing already (Parse "
		                                    "called again from one of its handlers)");
		return NULL;
	}
	if (expat_enter(self) < 0)
		return NULL;
	r = call_on(expat_parse_real[i], self, args, kw);
	if (expat_leave(self, 0) < 0)
		Py_CLEAR(r);
	return r;
}

static PyObject *expat_parse_0(PyObject *self, PyObject *args, PyObject *kw)
{
	return expat_parse(0, self, args, kw);
}

static PyObject *expat_parse_1(PyObject *self, PyObject *args, PyObject *kw)
{
	return expat_parse(1, self, args, kw);
}

static PyMethodDef expat_parse_def[EXPAT_PARSE] = {
    {"Parse", (PyCFunction)(void (*)(void))expat_parse_0, METH_VARARGS | METH_KEYWORDS, NULL},
    {"ParseFile", (PyCFunction)(void (*)(void))expat_parse_1, METH_VARARGS | METH_KEYWORDS, NULL},
};

static PyObject *expat_subparser(PyObject *self, PyObject *args, PyObject *kw)
{
	if (pylayer_armed()) {
		PyErr_SetString(PyExc_PermissionError,
		                "ExternalEntityParserCreate is not allowed in the sandbox (its "
		                "parser shares its parent's tables without holding the parent)");
		return NULL;
	}
	return call_on(expat_subparser_real, self, args, kw);
}

static PyMethodDef expat_subparser_def = {"ExternalEntityParserCreate",
                                          (PyCFunction)(void (*)(void))expat_subparser,
                                          METH_VARARGS | METH_KEYWORDS, NULL};

/* The settings the parse reads as it goes (the handlers are not among them). */
#define EXPAT_SETTINGS 5
static const char *const expat_setting_names[EXPAT_SETTINGS] = {
    "buffer_text", "buffer_size", "ordered_attributes", "specified_attributes",
    "namespace_prefixes"};
static PyObject *expat_setting_real[EXPAT_SETTINGS];
static PyGetSetDef expat_setting_def[EXPAT_SETTINGS];

static PyObject *expat_setting_get(PyObject *self, void *i)
{
	PyObject *real = expat_setting_real[(size_t)i];

	return Py_TYPE(real)->tp_descr_get(real, self, (PyObject *)Py_TYPE(self));
}

static int expat_setting_set(PyObject *self, PyObject *value, void *i)
{
	PyObject *real = expat_setting_real[(size_t)i];

	if (expat_busy(self)) {
		PyErr_Format(PyExc_RuntimeError,
		             "an XML parser's %s is not changed while it parses (set it before)",
		             expat_setting_names[(size_t)i]);
		return -1;
	}
	/* buffer_text and buffer_size flush the text a failed parse left, through the handler */
	if (expat_enter(self) < 0)
		return -1;
	return expat_leave(self, Py_TYPE(real)->tp_descr_set(real, self, value));
}

/* A handler set to None while its parser parses (from another handler, or from an interned
 * name's __hash__): pyexpat had checked the handler was there, then ran the user's code, then
 * called the NULL left in its place (SIGSEGV). While the parser parses, None sets a handler
 * that does nothing. */
static setattrofunc expat_setattro_real;

static PyObject *expat_nothing(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	Py_RETURN_NONE;
}

static PyMethodDef expat_nothing_def = {"nothing", expat_nothing, METH_VARARGS,
                                        "A handler cleared while its parser parsed."};
static PyObject *expat_nothing_fn;

/* A name of pyexpat's handler table: ...Handler, and DefaultHandlerExpand. */
static int expat_is_handler(PyObject *name)
{
	Py_ssize_t n = PyUnicode_Check(name) ? PyUnicode_GET_LENGTH(name) : 0;
	PyObject *tail = n > 7 ? PyUnicode_Substring(name, n - 7, n) : NULL;
	int is = (tail && PyUnicode_CompareWithASCIIString(tail, "Handler") == 0) ||
	         (n && PyUnicode_CompareWithASCIIString(name, "DefaultHandlerExpand") == 0);

	Py_XDECREF(tail);
	PyErr_Clear();
	return is;
}

static int expat_setattro(PyObject *self, PyObject *name, PyObject *value)
{
	PyObject *old;
	int rc;

	if (!expat_is_handler(name))
		return expat_setattro_real(self, name, value);
	/* A handler set outside a parse: the character data handler's flushes the text a failed
	 * parse left through the handler it replaces, which may set handlers in turn. */
	if (!expat_busy(self)) {
		if (expat_enter(self) < 0)
			return -1;
		return expat_leave(self, expat_setattro_real(self, name, value));
	}
	if (value == Py_None)
		value = expat_nothing_fn;
	/* pyexpat calls a handler borrowed from its table: one replaced from inside itself (or
	 * from code it ran: an interned name's __hash__) was freed while it ran (a bound dict
	 * method wrote into its freed dict). The handler replaced is held until the parse ends. */
	old = PyObject_GetAttr(self, name);
	if (!old)
		return -1;
	if (old != Py_None && old != value && PyList_Append(expat_kept, old) < 0) {
		Py_DECREF(old);
		return -1;
	}
	rc = expat_setattro_real(self, name, value);
	Py_DECREF(old);
	return rc;
}

static int expat_guard(void)
{
	PyObject *m = PyImport_ImportModule("pyexpat"), *t;
	PyTypeObject *type;
	int rc = -1;

	if (!m) { /* a Python built without expat: no parser to guard */
		if (!PyErr_ExceptionMatches(PyExc_ImportError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	t = PyObject_GetAttrString(m, "XMLParserType");
	type = (PyTypeObject *)t;
	if (!t || !PyType_Check(t) || (type->tp_flags & Py_TPFLAGS_BASETYPE)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "pyexpat.XMLParserType is not as known");
		goto out;
	}
	for (int i = 0; i < EXPAT_PARSE; i++)
		if (replace_method(type, expat_parse_def[i].ml_name, &expat_parse_def[i],
		                   &expat_parse_real[i]) < 0)
			goto out;
	if (replace_method(type, expat_subparser_def.ml_name, &expat_subparser_def,
	                   &expat_subparser_real) < 0)
		goto out;
	for (size_t i = 0; i < EXPAT_SETTINGS; i++) {
		PyObject *real = PyDict_GetItemString(type->tp_dict, expat_setting_names[i]), *d;
		if (!real || !PyObject_TypeCheck(real, &PyGetSetDescr_Type)) {
			PyErr_Format(PyExc_TypeError, "pyexpat's %s is not as known",
			             expat_setting_names[i]);
			goto out;
		}
		expat_setting_real[i] = Py_NewRef(real);
		expat_setting_def[i] =
		    (PyGetSetDef){expat_setting_names[i], expat_setting_get, expat_setting_set,
		                  ((PyGetSetDescrObject *)real)->d_getset->doc, (void *)i};
		d = PyDescr_NewGetSet(type, &expat_setting_def[i]);
		if (!d || PyDict_SetItemString(type->tp_dict, expat_setting_names[i], d) < 0) {
			Py_XDECREF(d);
			goto out;
		}
		Py_DECREF(d);
	}
	expat_nothing_fn = PyCFunction_New(&expat_nothing_def, NULL);
	expat_kept = PyList_New(0);
	if (!expat_nothing_fn || !expat_kept || !type->tp_setattro)
		goto out;
	expat_setattro_real = type->tp_setattro;
	type->tp_setattro = expat_setattro;
	PyType_Modified(type);
	rc = 0;
out:
	Py_XDECREF(t);
	Py_DECREF(m);
	return rc;
}

/* ---- json's C encoder --------------------------------------------------------------------- */

/* json's C encoder (json.encoder.c_make_encoder, type() of an encoder) took its markers dict
 * from the caller and asked it whether the id of a list or dict it was encoding (borrowed from
 * its container) was in it: a key of the user's with that hash ran its __eq__, which emptied
 * the container and freed the object; the encoder then stored and encoded the freed object.
 * An encoder has markers of its own (a new empty dict, as JSONEncoder passes
 * every time) when it was given a dict, and its markers attribute gives a copy of them. */
static newfunc json_encoder_new_real;
static PyObject *json_markers_real; /* the class's own member descriptor */
static Py_ssize_t json_markers_offset;

static PyObject *json_encoder_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	PyObject *self = json_encoder_new_real(t, args, kw), **markers;

	if (!self)
		return NULL;
	markers = (PyObject **)((char *)self + json_markers_offset);
	if (*markers && *markers != Py_None) {
		PyObject *own = PyDict_New();
		if (!own) {
			Py_DECREF(self);
			return NULL;
		}
		Py_SETREF(*markers, own);
	}
	return self;
}

static PyObject *json_markers_get(PyObject *self, void *unused)
{
	PyObject *m = Py_TYPE(json_markers_real)
	                  ->tp_descr_get(json_markers_real, self, (PyObject *)Py_TYPE(self));

	(void)unused;
	if (m && PyDict_Check(m))
		Py_SETREF(m, PyDict_Copy(m));
	return m;
}

static int json_markers_set(PyObject *self, PyObject *value, void *unused)
{
	(void)unused;
	return Py_TYPE(json_markers_real)->tp_descr_set(json_markers_real, self, value);
}

static PyGetSetDef json_markers_def = {"markers", json_markers_get, json_markers_set, NULL, NULL};

/* ---- datetime's pickle states ------------------------------------------------------------ */

/* date(state) and datetime(state[, tzinfo]) (the form their pickles use) checked only the
 * state's month: year 0, or a day past its month, made a date whose weekday is negative, and
 * ctime() read the day names before their table (SIGSEGV). A state that names no date (or no
 * time of day) is refused as the arguments' own would be. */
static newfunc date_new_real, datetime_new_real, time_new_real;

/* time(state[, tzinfo]): CPython checks the hour only. */
static int time_state_bad(PyObject *args, PyObject *kw)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	unsigned int b[6];
	PyObject *state;

	if (n < 1 || n > 2 || (kw && PyDict_GET_SIZE(kw)))
		return 0;
	state = PyTuple_GET_ITEM(args, 0);
	if (PyBytes_Check(state) && PyBytes_GET_SIZE(state) == 6) {
		for (Py_ssize_t i = 0; i < 6; i++)
			b[i] = (unsigned char)PyBytes_AS_STRING(state)[i];
	} else if (PyUnicode_Check(state) && PyUnicode_GET_LENGTH(state) == 6) {
		for (Py_ssize_t i = 0; i < 6; i++)
			if ((b[i] = PyUnicode_READ_CHAR(state, i)) > 255)
				return 0;
	} else {
		return 0;
	}
	if ((b[0] & 0x7fu) > 23)
		return 0; /* not taken for a state: the arguments' own errors */
	return b[1] > 59 || b[2] > 59 || (b[3] << 16 | b[4] << 8 | b[5]) > 999999;
}

static PyObject *time_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (time_state_bad(args, kw)) {
		PyErr_SetString(PyExc_ValueError, "the time's state names no time of day");
		return NULL;
	}
	return time_new_real(t, args, kw);
}

static int date_state_bad(PyObject *args, PyObject *kw, int with_time)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args), size = with_time ? 10 : 4;
	static const unsigned char days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	unsigned int b[10], year, month, leap;
	PyObject *state;

	if (n < 1 || n > (with_time ? 2 : 1) || (kw && PyDict_GET_SIZE(kw)))
		return 0;
	state = PyTuple_GET_ITEM(args, 0);
	if (PyBytes_Check(state) && PyBytes_GET_SIZE(state) == size) {
		for (Py_ssize_t i = 0; i < size; i++)
			b[i] = (unsigned char)PyBytes_AS_STRING(state)[i];
	} else if (PyUnicode_Check(state) && PyUnicode_GET_LENGTH(state) == size) {
		for (Py_ssize_t i = 0; i < size; i++)
			if ((b[i] = PyUnicode_READ_CHAR(state, i)) > 255)
				return 0; /* not Latin-1: refused as it was */
	} else {
		return 0;
	}
	year = b[0] << 8 | b[1];
	month = b[2] & (with_time ? 0x7fu : 0xffu);
	if (month < 1 || month > 12)
		return 0; /* not taken for a state: the arguments' own errors */
	leap = month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
	if (year < 1 || year > 9999 || b[3] < 1 || b[3] > days[month - 1] + leap)
		return 1;
	return with_time &&
	       (b[4] > 23 || b[5] > 59 || b[6] > 59 || (b[7] << 16 | b[8] << 8 | b[9]) > 999999);
}

static PyObject *date_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (date_state_bad(args, kw, 0)) {
		PyErr_SetString(PyExc_ValueError, "the date's state names no date");
		return NULL;
	}
	return date_new_real(t, args, kw);
}

static PyObject *datetime_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (date_state_bad(args, kw, 1)) {
		PyErr_SetString(PyExc_ValueError, "the datetime's state names no date and time");
		return NULL;
	}
	return datetime_new_real(t, args, kw);
}

/* datetime.astimezone, datetime.utctimetuple and tzinfo.fromutc (the default one) add a
 * timedelta to a datetime of a subclass by calling that class with the sum's fields, then take
 * what the call returned for a datetime (CPython 3.11): a __new__ of the user's that returned a
 * bytearray had astimezone store the tzinfo over its buffer pointer, one that returned an int
 * had fromutc read a pointer from its digits (either: any memory read and written). Given a
 * datetime of a subclass, they work on an exact datetime of the same fields, and the result
 * goes back to the subclass by calling it, as the sum did (what that call returns is handed to
 * the code, never taken for a datetime). */
static PyCFunctionWithKeywords astimezone_real;
static PyCFunction utctimetuple_real, fromutc_real;

static PyObject *exact_datetime(PyObject *dt)
{
	return PyDateTimeAPI->DateTime_FromDateAndTimeAndFold(
	    PyDateTime_GET_YEAR(dt), PyDateTime_GET_MONTH(dt), PyDateTime_GET_DAY(dt),
	    PyDateTime_DATE_GET_HOUR(dt), PyDateTime_DATE_GET_MINUTE(dt),
	    PyDateTime_DATE_GET_SECOND(dt), PyDateTime_DATE_GET_MICROSECOND(dt),
	    PyDateTime_DATE_GET_TZINFO(dt), PyDateTime_DATE_GET_FOLD(dt),
	    PyDateTimeAPI->DateTimeType);
}

/* r (an exact datetime, else as it is) as a datetime of type t. Steals r. */
static PyObject *datetime_as(PyTypeObject *t, PyObject *r)
{
	PyObject *back, *kw = NULL;

	if (!r || !PyDateTime_CheckExact(r) || t == PyDateTimeAPI->DateTimeType)
		return r;
	if (PyDateTime_DATE_GET_FOLD(r) && !(kw = Py_BuildValue("{s:i}", "fold", 1))) {
		Py_DECREF(r);
		return NULL;
	}
	back = Py_BuildValue("(iiiiiiiO)", PyDateTime_GET_YEAR(r), PyDateTime_GET_MONTH(r),
	                     PyDateTime_GET_DAY(r), PyDateTime_DATE_GET_HOUR(r),
	                     PyDateTime_DATE_GET_MINUTE(r), PyDateTime_DATE_GET_SECOND(r),
	                     PyDateTime_DATE_GET_MICROSECOND(r), PyDateTime_DATE_GET_TZINFO(r));
	Py_DECREF(r);
	r = back ? PyObject_Call((PyObject *)t, back, kw) : NULL;
	Py_XDECREF(back);
	Py_XDECREF(kw);
	return r;
}

static PyObject *astimezone_exact(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *copy, *r;

	if (!PyDateTime_Check(self) || PyDateTime_CheckExact(self))
		return astimezone_real(self, args, kw);
	copy = exact_datetime(self);
	r = copy ? astimezone_real(copy, args, kw) : NULL;
	Py_XDECREF(copy);
	return datetime_as(Py_TYPE(self), r);
}

static PyObject *utctimetuple_exact(PyObject *self, PyObject *unused)
{
	PyObject *copy, *r;

	if (!PyDateTime_Check(self) || PyDateTime_CheckExact(self))
		return utctimetuple_real(self, unused);
	copy = exact_datetime(self);
	r = copy ? utctimetuple_real(copy, unused) : NULL;
	Py_XDECREF(copy);
	return r;
}

static PyObject *fromutc_exact(PyObject *self, PyObject *dt)
{
	PyObject *copy, *r;

	if (!PyDateTime_Check(dt) || PyDateTime_CheckExact(dt))
		return fromutc_real(self, dt);
	copy = exact_datetime(dt);
	r = copy ? fromutc_real(self, copy) : NULL;
	Py_XDECREF(copy);
	return datetime_as(Py_TYPE(dt), r);
}

/* The method's definition in the type's own dict, if its convention is flags. */
static PyMethodDef *method_def(PyTypeObject *t, const char *name, int flags)
{
	PyObject *d = PyDict_GetItemString(t->tp_dict, name);

	if (!d || Py_TYPE(d) != &PyMethodDescr_Type ||
	    ((PyMethodDescrObject *)d)->d_method->ml_flags != flags)
		return NULL;
	return ((PyMethodDescrObject *)d)->d_method;
}

static int datetime_subclass_guard(void)
{
	PyMethodDef *az, *utt, *fu;

	if (astimezone_real)
		return 0;
	PyDateTime_IMPORT;
	if (!PyDateTimeAPI)
		return -1;
	az = method_def(PyDateTimeAPI->DateTimeType, "astimezone", METH_VARARGS | METH_KEYWORDS);
	utt = method_def(PyDateTimeAPI->DateTimeType, "utctimetuple", METH_NOARGS);
	fu = method_def(PyDateTimeAPI->TZInfoType, "fromutc", METH_O);
	if (!az || !utt || !fu) {
		PyErr_SetString(PyExc_TypeError, "datetime's methods are not as known");
		return -1;
	}
	astimezone_real = (PyCFunctionWithKeywords)(void (*)(void))az->ml_meth;
	utctimetuple_real = utt->ml_meth;
	fromutc_real = fu->ml_meth;
	az->ml_meth = (PyCFunction)(void (*)(void))astimezone_exact;
	utt->ml_meth = utctimetuple_exact;
	fu->ml_meth = fromutc_exact;
	return 0;
}

static int datetime_guard(void)
{
	PyObject *m = PyImport_ImportModule("datetime"), *d = NULL, *dt = NULL, *tm = NULL;
	int rc = -1;

	if (m) {
		d = PyObject_GetAttrString(m, "date");
		dt = PyObject_GetAttrString(m, "datetime");
		tm = PyObject_GetAttrString(m, "time");
	}
	if (tm && PyType_Check(tm) && ((PyTypeObject *)tm)->tp_new) {
		time_new_real = ((PyTypeObject *)tm)->tp_new;
		((PyTypeObject *)tm)->tp_new = time_new;
		PyType_Modified((PyTypeObject *)tm);
	} else {
		Py_CLEAR(d); /* refused below */
	}
	if (d && dt && PyType_Check(d) && PyType_Check(dt) && ((PyTypeObject *)d)->tp_new &&
	    ((PyTypeObject *)dt)->tp_new &&
	    PyType_IsSubtype((PyTypeObject *)dt, (PyTypeObject *)d)) {
		date_new_real = ((PyTypeObject *)d)->tp_new;
		datetime_new_real = ((PyTypeObject *)dt)->tp_new;
		((PyTypeObject *)d)->tp_new = date_new;
		((PyTypeObject *)dt)->tp_new = datetime_new;
		PyType_Modified((PyTypeObject *)d);
		PyType_Modified((PyTypeObject *)dt);
		rc = 0;
	} else if (!PyErr_Occurred()) {
		PyErr_SetString(PyExc_TypeError, "datetime's classes are not as known");
	}
	Py_XDECREF(m);
	Py_XDECREF(d);
	Py_XDECREF(dt);
	Py_XDECREF(tm);
	return rc;
}

static int json_guard(void)
{
	PyObject *m = PyImport_ImportModule("_json"), *t = NULL, *d = NULL;
	PyTypeObject *type;
	PyMemberDef *member;
	int rc = -1;

	if (!m) { /* a Python built without _json: json encodes in Python */
		if (!PyErr_ExceptionMatches(PyExc_ImportError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	t = PyObject_GetAttrString(m, "make_encoder");
	type = (PyTypeObject *)t;
	json_markers_real = t && PyType_Check(t)
	                        ? Py_XNewRef(PyDict_GetItemString(type->tp_dict, "markers"))
	                        : NULL;
	member = json_markers_real && PyObject_TypeCheck(json_markers_real, &PyMemberDescr_Type)
	             ? ((PyMemberDescrObject *)json_markers_real)->d_member
	             : NULL;
	if (!member || member->type != T_OBJECT || !type->tp_new ||
	    Py_TYPE(json_markers_real)->tp_descr_get == NULL ||
	    Py_TYPE(json_markers_real)->tp_descr_set == NULL) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "_json.make_encoder is not as known");
		goto out;
	}
	json_markers_offset = member->offset;
	json_markers_def.doc = member->doc;
	d = PyDescr_NewGetSet(type, &json_markers_def);
	if (!d || PyDict_SetItemString(type->tp_dict, "markers", d) < 0)
		goto out;
	rc = held_slot(type, offsetof(PyTypeObject, tp_new), (void *)json_encoder_new,
	               (void **)&json_encoder_new_real);
out:
	Py_XDECREF(d);
	Py_XDECREF(t);
	Py_DECREF(m);
	return rc;
}

/* ---- counts and arguments the user's code answers ---------------------------------------- */

/* io.RawIOBase.read(n) made a bytearray of n bytes, called self.readinto on it and copied as
 * many bytes as readinto said it read, unchecked (any length of the heap past the bytearray).
 * While armed, a count outside the bytearray is a ValueError, as in later CPython. */
static PyObject *rawio_read_real;

static PyObject *rawio_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *b, *res, *r = NULL;
	Py_ssize_t n, got;

	/* (any size, not an exact int only: True, an int's subclass went to CPython's own
	 * copy: V69b H1) */
	if (!pylayer_armed() || nargs != 1 || args[0] == Py_None)
		return PyObject_Vectorcall(rawio_read_real,
		                           (PyObject *[]){self, nargs ? args[0] : NULL},
		                           (size_t)nargs + 1, NULL);
	n = PyNumber_AsSsize_t(args[0], NULL);
	if (n == -1 && PyErr_Occurred())
		return NULL;
	if (n < 0) { /* readall, an overflow clipped: CPython's own answer */
		PyObject *all = PyLong_FromSsize_t(-1);
		r = all ? PyObject_Vectorcall(rawio_read_real, (PyObject *[]){self, all}, 2, NULL)
		        : NULL;
		Py_XDECREF(all);
		return r;
	}
	b = PyByteArray_FromStringAndSize(NULL, n);
	if (!b)
		return NULL;
	/* (zeroed: a readinto that wrote nothing and said it had read it all handed back
	 * what the heap held there, V69b L1) */
	memset(PyByteArray_AS_STRING(b), 0, (size_t)n);
	res = PyObject_CallMethod(self, "readinto", "O", b);
	if (!res || res == Py_None) {
		r = res;
		goto out;
	}
	got = PyNumber_AsSsize_t(res, PyExc_ValueError);
	Py_DECREF(res);
	if (got == -1 && PyErr_Occurred())
		goto out;
	if (got < 0 || got > PyByteArray_GET_SIZE(b)) {
		PyErr_Format(PyExc_ValueError, "readinto returned %zd outside buffer size %zd", got,
		             PyByteArray_GET_SIZE(b));
		goto out;
	}
	r = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(b), got);
out:
	Py_DECREF(b);
	return r;
}

static PyMethodDef rawio_read_def = {"read", (PyCFunction)(void (*)(void))rawio_read, METH_FASTCALL,
                                     NULL};

/* unicode_escape's decoder, given an error handler, went on in the error's copy of its input;
 * an invalid escape after that was kept as a pointer into the copy and read, for its warning,
 * once the copy was freed (CVE-2025-4516; a 300 kB input: SIGSEGV). While armed a decode
 * with a handler other than strict runs as CPython's when it calls no handler (a strict
 * decode succeeds), or when the handler is a built-in one and no escape the decoder would
 * warn of can follow its first error; otherwise it is refused (ValueError). All the codec's paths (bytes.decode, codecs.decode,
 * its incremental decoder and stream reader) call the one C function, replaced in place. */
static _PyCFunctionFast unicode_escape_real;
/* The built-in handlers that decode: they leave the error's object as it is (a handler of the
 * user's may set another, in which the decoder goes on, unchecked here). Registering a name
 * again replaces the handler, not these. */
#define ESCAPE_HANDLERS 4
static const char *const escape_handler_names[ESCAPE_HANDLERS] = {
    "ignore", "replace", "backslashreplace", "surrogateescape"};
static PyObject *escape_handlers[ESCAPE_HANDLERS];

static int escape_valid(unsigned char c)
{
	return strchr("\n\\'\"abfnrtv01234567xNuU", c) && c != '\0';
}

/* Could the decoder warn of an escape at or after from (any backslash then a byte that is
 * not an escape: the error handler may resume anywhere), with none before it? */
static int escape_warned_late(const unsigned char *s, Py_ssize_t len, Py_ssize_t from)
{
	Py_ssize_t i = 0;

	if (from > len)
		from = len;
	while (i < from) {
		if (s[i] != '\\') {
			i++;
			continue;
		}
		if (i + 1 < len && !escape_valid(s[i + 1]))
			return 0; /* warned of before the first error: a pointer into the input */
		i += 2;
	}
	for (i = from > 0 ? from - 1 : 0; i + 1 < len; i++)
		if (s[i] == '\\' && !escape_valid(s[i + 1]))
			return 1;
	return 0;
}

static PyObject *unicode_escape_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *data, *strict = NULL, *r = NULL, *type, *value, *tb, *handler;
	const char *name;
	Py_ssize_t start = 0;
	int got, known = 0;

	if (!pylayer_armed() || nargs < 2 || nargs > 3 || args[1] == Py_None ||
	    (PyUnicode_Check(args[1]) && PyUnicode_CompareWithASCIIString(args[1], "strict") == 0))
		return unicode_escape_real(module, args, nargs);
	if (PyUnicode_Check(args[0]))
		data = PyUnicode_AsUTF8String(args[0]);
	else if (PyObject_CheckBuffer(args[0]))
		data = PyBytes_FromObject(args[0]);
	else
		return unicode_escape_real(module, args, nargs);
	if (!data || !(strict = PyUnicode_FromString("strict")))
		goto out;
	r = unicode_escape_real(module, (PyObject *[]){data, strict, nargs > 2 ? args[2] : NULL},
	                        nargs);
	if (r || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
		goto out;
	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	got = value ? PyUnicodeDecodeError_GetStart(value, &start) : -1;
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
	if (got == 0 && !PyUnicode_Check(args[1]))
		goto out_real; /* CPython's TypeError, before it decodes */
	name = got == 0 ? PyUnicode_AsUTF8(args[1]) : NULL;
	handler = name ? PyCodec_LookupError(name) : NULL;
	if (!handler && name && PyErr_ExceptionMatches(PyExc_LookupError))
		goto out_real; /* an unknown name: CPython's own LookupError */
	for (int k = 0; handler && k < ESCAPE_HANDLERS; k++)
		known = known || handler == escape_handlers[k];
	Py_XDECREF(handler);
	PyErr_Clear();
	if (!known || escape_warned_late((const unsigned char *)PyBytes_AS_STRING(data),
	                                 PyBytes_GET_SIZE(data), start)) {
		PyErr_SetString(PyExc_ValueError,
		                "unicode_escape decoding with an error handler is refused in the "
		                "sandbox when an invalid escape sequence follows an error, or when "
		                "the handler is not a built-in one (decode with errors='strict')");
		goto out;
	}
out_real:
	PyErr_Clear();
	r = unicode_escape_real(module, (PyObject *[]){data, args[1], nargs > 2 ? args[2] : NULL},
	                        nargs);
out:
	Py_XDECREF(strict);
	Py_XDECREF(data);
	return r;
}

static PyMethodDef *unicode_escape_def;

static int unicode_escape_guard(void)
{
	PyObject *m = PyImport_ImportModule("_codecs"), *f;
	int rc = -1;

	f = m ? PyObject_GetAttrString(m, "unicode_escape_decode") : NULL;
	if (!f || !PyCFunction_Check(f) || PyCFunction_GET_FLAGS(f) != METH_FASTCALL) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError,
			                "_codecs.unicode_escape_decode is not as known");
		goto out;
	}
	for (int k = 0; k < ESCAPE_HANDLERS; k++)
		if (!(escape_handlers[k] = PyCodec_LookupError(escape_handler_names[k])))
			goto out;
	unicode_escape_def = ((PyCFunctionObject *)f)->m_ml;
	unicode_escape_real = (_PyCFunctionFast)(void (*)(void))unicode_escape_def->ml_meth;
	unicode_escape_def->ml_meth = (PyCFunction)(void (*)(void))unicode_escape_decode;
	rc = 0;
out:
	Py_XDECREF(f);
	Py_XDECREF(m);
	return rc;
}

/* The built-in error handlers that read the error's object from its start: CPython 3.11
 * clamps an empty object's start to -1, and backslashreplace, xmlcharrefreplace, namereplace,
 * surrogateescape and surrogatepass, called by the code with an error over an empty str (or
 * bytes) subclass, read the element before its data: the end of another object's (V98c H1).
 * An error over an empty object is answered as later CPythons answer it: nothing to replace,
 * go on at 0. The codecs never call a handler so (an empty input has no error). */
#define READING_HANDLERS 5
#define ON_ENCODE        1
#define ON_DECODE        2
#define ON_TRANSLATE     4
static const struct {
	const char *name;
	int handles; /* the errors it handles: others get its TypeError, nothing read */
} reading_handlers[READING_HANDLERS] = {
    {"backslashreplace", ON_ENCODE | ON_DECODE | ON_TRANSLATE},
    {"xmlcharrefreplace", ON_ENCODE},
    {"namereplace", ON_ENCODE},
    {"surrogateescape", ON_ENCODE | ON_DECODE},
    {"surrogatepass", ON_ENCODE | ON_DECODE},
};
static PyCFunction reading_handler_real[READING_HANDLERS];

static PyObject *reading_handler(int k, PyObject *self, PyObject *exc)
{
	PyObject *obj = NULL;
	Py_ssize_t len;

	if (PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_UnicodeEncodeError) &&
	    (reading_handlers[k].handles & ON_ENCODE))
		obj = PyUnicodeEncodeError_GetObject(exc);
	else if (PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_UnicodeDecodeError) &&
	         (reading_handlers[k].handles & ON_DECODE))
		obj = PyUnicodeDecodeError_GetObject(exc);
	else if (PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_UnicodeTranslateError) &&
	         (reading_handlers[k].handles & ON_TRANSLATE))
		obj = PyUnicodeTranslateError_GetObject(exc);
	else
		return reading_handler_real[k](self, exc);
	if (!obj)
		return NULL;
	len = PyUnicode_Check(obj) ? PyUnicode_GET_LENGTH(obj)
	      : PyBytes_Check(obj) ? PyBytes_GET_SIZE(obj)
	                           : -1;
	Py_DECREF(obj);
	if (len == 0)
		return Py_BuildValue("(sn)", "", (Py_ssize_t)0);
	return reading_handler_real[k](self, exc);
}

#define READING_HANDLER(k)                                                                         \
	static PyObject *reading_handler_##k(PyObject *self, PyObject *exc)                        \
	{                                                                                          \
		return reading_handler(k, self, exc);                                              \
	}
READING_HANDLER(0)
READING_HANDLER(1)
READING_HANDLER(2)
READING_HANDLER(3)
READING_HANDLER(4)

static int handlers_guard(void)
{
	static const PyCFunction checked[READING_HANDLERS] = {reading_handler_0, reading_handler_1,
	                                                      reading_handler_2, reading_handler_3,
	                                                      reading_handler_4};

	for (int k = 0; k < READING_HANDLERS; k++) {
		PyObject *h = PyCodec_LookupError(reading_handlers[k].name);
		PyMethodDef *def;

		if (!h || !PyCFunction_Check(h) || PyCFunction_GET_FLAGS(h) != METH_O) {
			if (h)
				PyErr_Format(PyExc_TypeError,
				             "the %s error handler is not as known",
				             reading_handlers[k].name);
			Py_XDECREF(h);
			return -1;
		}
		def = ((PyCFunctionObject *)h)->m_ml;
		if (def->ml_meth != checked[k]) {
			reading_handler_real[k] = def->ml_meth;
			def->ml_meth = checked[k];
		}
		Py_DECREF(h);
	}
	return 0;
}

static int counts_guard(void)
{
	PyObject *io = PyImport_ImportModule("_io"), *t;
	int rc = -1;

	t = io ? PyObject_GetAttrString(io, "_RawIOBase") : NULL;
	if (!t || !PyType_Check(t)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "io.RawIOBase is not as known");
		goto out;
	}
	if (replace_method((PyTypeObject *)t, "read", &rawio_read_def, &rawio_read_real) < 0)
		goto out;
	if (guard_methods(&PyBytes_Type, &bytes_type) < 0 ||
	    guard_methods(&PyMemoryView_Type, &memoryview_type) < 0)
		goto out;
	rc = unicode_escape_guard() < 0 ? -1 : handlers_guard();
out:
	Py_XDECREF(t);
	Py_XDECREF(io);
	return rc;
}

/* ---- a codec's decode function handed a view it does not own ------------------------------ */

/* bytes.decode, bytearray.decode and str(b, encoding) hand a codec's decode function a
 * memoryview over the caller's buffer that owns nothing: a decode function of the user's that
 * kept it read the freed buffer through it, for as long as it liked. While armed the search
 * functions codecs.register is given answer with a decode function that hands the user's a
 * copy of such a view (bytes); the CodecInfo's attributes (its .decode too) are the user's. The
 * code runs with only the builtins it names. */
static const char codecs_py[] =
    "def wrap(register):\n"
    "    def plain_decoder(decode):\n"
    "        def decoder(data, *args, **kw):\n"
    "            if type(data) is memoryview and data.obj is None:\n"
    "                data = bytes(data)\n"
    "            return decode(data, *args, **kw)\n"
    "        return decoder\n"
    "    def searching(search_function):\n"
    "        def search(name):\n"
    "            info = search_function(name)\n"
    "            if not isinstance(info, tuple) or len(info) != 4:\n"
    "                return info\n"
    "            items = (info[0], plain_decoder(info[1]), info[2], info[3])\n"
    "            if type(info) is tuple:\n"
    "                return items\n"
    "            plain = tuple.__new__(type(info), items)\n"
    "            state = getattr(info, '__dict__', None)\n"
    "            if state is not None:\n"
    "                plain.__dict__.update(state)\n"
    "            return plain\n"
    "        return search\n"
    "    def codecs_register(search_function):\n"
    "        if not callable(search_function):\n"
    "            raise TypeError('argument must be callable')\n"
    "        return register(searching(search_function))\n"
    "    codecs_register.__name__ = codecs_register.__qualname__ = 'register'\n"
    "    codecs_register.__doc__ = register.__doc__\n"
    "    return codecs_register\n";

static int codecs_guard(void)
{
	static const char *const names[] = {"bytes",     "callable",   "getattr", "isinstance",
	                                    "len",       "memoryview", "tuple",   "type",
	                                    "TypeError", NULL};
	PyObject *m = PyImport_ImportModule("_codecs"), *codecs = PyImport_ImportModule("codecs");
	PyObject *g = PyDict_New(), *b = PyDict_New(), *code = NULL, *r = NULL, *reg = NULL;
	int rc = -1;

	if (!m || !codecs || !g || !b)
		goto out;
	for (const char *const *n = names; *n; n++) {
		PyObject *v = PyDict_GetItemString(PyEval_GetBuiltins(), *n);
		if (!v || PyDict_SetItemString(b, *n, v) < 0)
			goto out;
	}
	code = Py_CompileString(codecs_py, "<sandbox codecs>", Py_file_input);
	if (!code || PyDict_SetItemString(g, "__builtins__", b) < 0)
		goto out;
	r = PyEval_EvalCode(code, g, g);
	reg = r ? PyObject_GetAttrString(m, "register") : NULL;
	if (!reg)
		goto out;
	Py_DECREF(r);
	r = PyObject_CallFunctionObjArgs(PyDict_GetItemString(g, "wrap"), reg, NULL);
	if (!r || PyObject_SetAttrString(m, "register", r) < 0 ||
	    PyObject_SetAttrString(codecs, "register", r) < 0)
		goto out;
	rc = 0;
out:
	Py_XDECREF(reg);
	Py_XDECREF(r);
	Py_XDECREF(code);
	Py_XDECREF(b);
	Py_XDECREF(g);
	Py_XDECREF(codecs);
	Py_XDECREF(m);
	return rc;
}

static int buffered_guard(void);

/* A dict insert decides whether its table must become one for keys of any kind before it looks
 * the key up, and the lookup runs a stored key's __eq__ (the code's): clearing the dict there
 * gave it the interpreter's shared empty table, which is of the str-only kind, and the insert
 * grew a table of that kind for a key that is not a str (d[k] = v, setdefault, an lru cache
 * cleared by its own key): str lookups then read that key as a str, of the length and at the
 * address the code wrote (any memory read). The shared empty table is made of the general kind:
 * a table grown from it (an insert after a clear, an update of an empty dict) is general; an
 * empty dict's first insert makes its table by its key's kind, as before. (CPython 3.11's
 * layout of a keys table: its reference count, then two sizes and its kind, one byte each.) */
struct dict_keys_head {
	Py_ssize_t refcnt;
	uint8_t log2_size, log2_index_bytes, kind;
};
#define DICT_KEYS_GENERAL 0
#define DICT_KEYS_UNICODE 1

int pyreentry_dict_str_only(PyObject *d)
{
	Py_ssize_t pos = 0;
	PyObject *k, *v;

	if (!PyDict_Check(d))
		return 0;
	if (((struct dict_keys_head *)((PyDictObject *)d)->ma_keys)->kind != DICT_KEYS_GENERAL)
		return 1;
	while (PyDict_Next(d, &pos, &k, &v)) /* (a table grown from empty is general: above) */
		if (!PyUnicode_CheckExact(k))
			return 0;
	return 1;
}

static int dict_empty_keys_general(void)
{
	PyObject *d = PyDict_New();
	struct dict_keys_head *k;

	if (!d)
		return -1;
	k = (struct dict_keys_head *)((PyDictObject *)d)->ma_keys;
	Py_DECREF(d);
	if (k->log2_size != 0 || (k->kind != DICT_KEYS_UNICODE && k->kind != DICT_KEYS_GENERAL)) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the dict's shared empty table is not as known");
		return -1;
	}
	k->kind = DICT_KEYS_GENERAL;
	return 0;
}

/* The empty table is not the only way to a str-only table under an insert: the __eq__ can
 * clear the dict and store a str (a new str-only table with room), or empty it and update it
 * from a dict of str keys (the other's table cloned). insertdict, CPython's one insert into a
 * table (it is never inlined: each caller calls it), chose the table's kind before the lookup
 * and writes the key as a str entry then. Every call of it in the zygote's code calls
 * insertdict_kind_checked instead, which calls it and then looks: a key that is not a str in
 * a table of str entries (the code made it so; CPython would read it as a str) ends the process,
 * failing closed, before anything reads the table. dict.setdefault (its own insert) is checked
 * the same way. */
static int (*insertdict_real)(PyDictObject *, PyObject *, Py_hash_t, PyObject *);

struct dict_keys_layout {
	Py_ssize_t refcnt;
	uint8_t log2_size, log2_index_bytes, kind;
	uint32_t version;
	Py_ssize_t usable, nentries;
	char indices[];
};

/* Does a table of str entries hold key (a pointer compared only: it may be gone)? */
static int str_table_holds(PyDictObject *mp, PyObject *key)
{
	struct dict_keys_layout *k = (struct dict_keys_layout *)mp->ma_keys;
	PyObject **entries;

	if (k->kind == DICT_KEYS_GENERAL)
		return 0;
	entries = (PyObject **)(k->indices + ((size_t)1 << k->log2_index_bytes));
	for (Py_ssize_t i = 0; i < k->nentries; i++)
		if (entries[2 * i] == key) /* {me_key, me_value} */
			return 1;
	return 0;
}

_Noreturn static void dict_kind_failed_closed(void)
{
	_exit(WORKER_EXIT_DICT);
}

static int insertdict_kind_checked(PyDictObject *mp, PyObject *key, Py_hash_t hash, PyObject *value)
{
	int str = PyUnicode_CheckExact(key), rc = insertdict_real(mp, key, hash, value);

	if (rc == 0 && !str && str_table_holds(mp, key))
		dict_kind_failed_closed();
	return rc;
}

static PyCFunction dict_setdefault_real;

static PyObject *dict_setdefault_checked(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	PyObject *key = n > 0 ? args[0] : NULL, *r;
	int str = key && PyUnicode_CheckExact(key);

	r = ((_PyCFunctionFast)(void (*)(void))dict_setdefault_real)(self, args, n);
	if (r && key && !str && str_table_holds((PyDictObject *)self, key))
		dict_kind_failed_closed();
	return r;
}

static int dict_setdefault_guard(void)
{
	PyObject *m = PyDict_GetItemString(PyDict_Type.tp_dict, "setdefault");
	PyMethodDef *def;

	if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type) ||
	    (def = ((PyMethodDescrObject *)m)->d_method)->ml_flags != METH_FASTCALL) {
		PyErr_SetString(PyExc_RuntimeError, "dict.setdefault is not as known");
		return -1;
	}
	dict_setdefault_real = def->ml_meth;
	def->ml_meth = (PyCFunction)(void (*)(void))dict_setdefault_checked;
	return 0;
}

/* ---- a set's count ------------------------------------------------------------------------------
 *
 * CPython's set add keeps a free slot it saw before it compares a key with the code's __eq__, and
 * then checks only that the table (a small set's inline one: always at the same address) and the
 * compared entry are unchanged: a finalizer or an __eq__ that emptied and refilled the set had the
 * new key written over a live one and the count raised (V45a L1). The set's clear, pop and
 * deallocation walk its table by that count: past its end (a reference dropped on each word pair
 * there: glibc's heap check ended the process), or for ever. They count the table again first
 * (the key written over stays alive for good: a reference lost, never one dropped twice). */
static void set_recount(PyObject *o)
{
	PySetObject *so = (PySetObject *)o;
	Py_ssize_t used = 0, fill = 0;

	if (!PyAnySet_Check(o))
		return;
	for (Py_ssize_t i = 0; i <= so->mask; i++) {
		PyObject *k = so->table[i].key;
		if (k) {
			fill++;
			used += k != _PySet_Dummy;
		}
	}
	so->used = used;
	so->fill = fill;
}

static destructor set_dealloc_real;
static PyCFunction set_pop_real;
static inquiry set_clear_real; /* CPython's static set_clear_internal (static_calls_checked) */

static void set_dealloc_recounted(PyObject *o)
{
	set_recount(o);
	set_dealloc_real(o);
}

/* (CPython's own trashcan bracket in the set's deallocator names its slot, which this replaced:
 * it is bracketed here, or a million nested frozensets freed one C frame a set) */
static void set_dealloc_counted(PyObject *o)
{
	pydealloc_bracket(o, set_dealloc_counted, set_dealloc_recounted);
}

static PyObject *set_pop_counted(PyObject *self, PyObject *unused)
{
	set_recount(self);
	return set_pop_real(self, unused);
}

/* The set's clear, wherever it is called from (set.clear, -=, ^=, difference_update,
 * symmetric_difference_update, __init__, PySet_Clear, the collector's tp_clear). */
static int set_clear_recounted(PyObject *o)
{
	set_recount(o);
	return set_clear_real(o);
}

/* The method def of t's method name (METH_NOARGS), or NULL with an exception. */
static PyMethodDef *noargs_method(PyTypeObject *t, const char *name)
{
	PyObject *m = PyDict_GetItemString(t->tp_dict, name);

	if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type) ||
	    ((PyMethodDescrObject *)m)->d_method->ml_flags != METH_NOARGS) {
		PyErr_Format(PyExc_RuntimeError, "%s.%s is not as known", t->tp_name, name);
		return NULL;
	}
	return ((PyMethodDescrObject *)m)->d_method;
}

/* The deallocation and pop (the clear: static_calls_checked). */
static int set_count_guard(void)
{
	PyMethodDef *pop = noargs_method(&PySet_Type, "pop");

	if (!pop)
		return -1;
	if (PySet_Type.tp_dealloc != PyFrozenSet_Type.tp_dealloc) {
		PyErr_SetString(PyExc_RuntimeError, "the sets' slots are not as known");
		return -1;
	}
	set_dealloc_real = PySet_Type.tp_dealloc;
	PySet_Type.tp_dealloc = set_dealloc_counted;
	PyFrozenSet_Type.tp_dealloc = set_dealloc_counted;
	set_pop_real = pop->ml_meth;
	pop->ml_meth = set_pop_counted;
	return 0;
}

/* The zygote's symbol table (it is not position-independent: a symbol's value is its address):
 * the addresses of the local functions wanted[0..n) (each defined once) and the bounds of the
 * code section. 0 or -1. */
static int self_functions(const char *const *wanted, uintptr_t *fns, size_t n, uintptr_t *text_lo,
                          uintptr_t *text_hi)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), rc = -1;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL, *strtab = NULL;
	Elf64_Sym *syms = NULL;
	size_t nsyms = 0;

	*text_lo = *text_hi = 0;
	for (size_t k = 0; k < n; k++)
		fns[k] = 0;
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_type != ET_EXEC ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
	               (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	names = malloc(sh[eh.e_shstrndx].sh_size + 1);
	if (!names ||
	    pread(fd, names, sh[eh.e_shstrndx].sh_size, (off_t)sh[eh.e_shstrndx].sh_offset) !=
	        (ssize_t)sh[eh.e_shstrndx].sh_size)
		goto out;
	names[sh[eh.e_shstrndx].sh_size] = '\0';
	for (int i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name < sh[eh.e_shstrndx].sh_size &&
		    strcmp(names + sh[i].sh_name, ".text") == 0) {
			*text_lo = sh[i].sh_addr;
			*text_hi = sh[i].sh_addr + sh[i].sh_size;
		}
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum || syms)
			continue;
		nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
		syms = malloc(sh[i].sh_size);
		strtab = malloc(sh[sh[i].sh_link].sh_size + 1);
		if (!syms || !strtab ||
		    pread(fd, syms, sh[i].sh_size, (off_t)sh[i].sh_offset) !=
		        (ssize_t)sh[i].sh_size ||
		    pread(fd, strtab, sh[sh[i].sh_link].sh_size,
		          (off_t)sh[sh[i].sh_link].sh_offset) != (ssize_t)sh[sh[i].sh_link].sh_size)
			goto out;
		strtab[sh[sh[i].sh_link].sh_size] = '\0';
		for (size_t j = 0; j < nsyms; j++)
			for (size_t k = 0; k < n; k++)
				if (ELF64_ST_TYPE(syms[j].st_info) == STT_FUNC &&
				    syms[j].st_name < sh[sh[i].sh_link].sh_size &&
				    strcmp(strtab + syms[j].st_name, wanted[k]) == 0) {
					if (fns[k] && fns[k] != syms[j].st_value)
						goto out; /* two functions of that name */
					fns[k] = syms[j].st_value;
				}
	}
	rc = *text_lo < *text_hi ? 0 : -1;
	for (size_t k = 0; k < n; k++)
		if (!fns[k] || fns[k] < *text_lo || fns[k] >= *text_hi)
			rc = -1;
out:
	free(sh);
	free(names);
	free(syms);
	free(strtab);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Every direct call (or jump) in the zygote's code [lo, hi) to fns[k] is made to tos[k]: a
 * relative call's 32-bit displacement rewritten; found[k] counts them. 0 or -1. */
static int calls_redirect(const uintptr_t *fns, const uintptr_t *tos, int *found, size_t n,
                          uintptr_t lo, uintptr_t hi)
{
	for (size_t k = 0; k < n; k++)
		found[k] = 0;
	for (const unsigned char *p = (const unsigned char *)lo; (uintptr_t)p + 5 <= hi; p++) {
		int32_t rel, now;
		int64_t d;
		uintptr_t target;
		size_t k;

		if (*p != 0xe8 && *p != 0xe9)
			continue;
		memcpy(&rel, p + 1, sizeof(rel));
		target = (uintptr_t)(p + 5) + (intptr_t)rel;
		for (k = 0; k < n && fns[k] != target; k++)
			;
		if (k == n)
			continue;
		d = (int64_t)tos[k] - (int64_t)(uintptr_t)(p + 5);
		if (d != (int32_t)d) {
			PyErr_SetString(PyExc_RuntimeError, "a checked call is out of reach");
			return -1;
		}
		now = (int32_t)d;
		if (pylayer_code_write((void *)((uintptr_t)p + 1), &now, sizeof(now)) < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		found[k]++;
	}
	return 0;
}

/* CPython's static functions whose every call in the zygote's code goes through a checked
 * version: the dict's insert (insertdict_kind_checked) and the set's clear
 * (set_clear_recounted). */
static int static_calls_checked(void)
{
	static const char *const names[] = {"insertdict", "set_clear_internal"};
	uintptr_t fns[2],
	    tos[2] = {(uintptr_t)insertdict_kind_checked, (uintptr_t)set_clear_recounted};
	uintptr_t lo, hi;
	int found[2];

	if (self_functions(names, fns, 2, &lo, &hi) < 0) {
		PyErr_SetString(
		    PyExc_RuntimeError,
		    "the dict's insert or the set's clear is not in the zygote's symbols");
		return -1;
	}
	insertdict_real = (int (*)(PyDictObject *, PyObject *, Py_hash_t, PyObject *))fns[0];
	set_clear_real = (inquiry)fns[1];
	if (PySet_Type.tp_clear != set_clear_real || PyFrozenSet_Type.tp_clear != set_clear_real) {
		PyErr_SetString(PyExc_RuntimeError, "the sets' clear is not as known");
		return -1;
	}
	if (calls_redirect(fns, tos, found, 2, lo, hi) < 0)
		return -1;
	if (!found[0] || !found[1]) {
		PyErr_SetString(PyExc_RuntimeError,
		                "no call of the dict's insert or of the set's clear was found");
		return -1;
	}
	PySet_Type.tp_clear = set_clear_recounted;
	PyFrozenSet_Type.tp_clear = set_clear_recounted;
	return dict_setdefault_guard();
}

/* ---- dicts' reverse iterators ----------------------------------------------------------------
 *
 * reversed(d) (and of its keys, values and items) checked only that the dict's size was the one
 * it started with: the code deleted keys and added as many, the dict's table was made again
 * smaller, and the iterator's position (an index into the old table's entries) read past the
 * new table's end, in the next block of the heap: a bytes object of the code's, whose words it
 * returned as an object (a bytearray over all memory). Its position past the table's entries
 * (or, for a split table, past its values) is the dictionary changed during iteration, as
 * CPython says when the size changes. */
typedef struct {
	PyObject_HEAD PyDictObject *di_dict;
	Py_ssize_t di_used;
	Py_ssize_t di_pos;
	PyObject *di_result;
	Py_ssize_t len;
} dictiter_layout;

static PyTypeObject *const rev_iter_types[] = {&PyDictRevIterKey_Type, &PyDictRevIterValue_Type,
                                               &PyDictRevIterItem_Type};
#define N_REV_ITERS (sizeof(rev_iter_types) / sizeof(rev_iter_types[0]))
static iternextfunc rev_next_real[N_REV_ITERS];

static PyObject *rev_next(int k, PyObject *self)
{
	dictiter_layout *it = (dictiter_layout *)self;
	PyDictObject *d = it->di_dict;

	if (d && it->di_used == d->ma_used && it->di_pos >= 0 &&
	    it->di_pos >=
	        (d->ma_values ? d->ma_used : ((struct dict_keys_layout *)d->ma_keys)->nentries)) {
		PyErr_SetString(PyExc_RuntimeError, "dictionary changed during iteration");
		it->di_used = -1; /* as CPython's: the error stays */
		return NULL;
	}
	return rev_next_real[k](self);
}

static PyObject *rev_next_0(PyObject *self)
{
	return rev_next(0, self);
}

static PyObject *rev_next_1(PyObject *self)
{
	return rev_next(1, self);
}

static PyObject *rev_next_2(PyObject *self)
{
	return rev_next(2, self);
}

static int dict_reversed_guard(void)
{
	static const iternextfunc held[N_REV_ITERS] = {rev_next_0, rev_next_1, rev_next_2};

	for (size_t k = 0; k < N_REV_ITERS; k++) {
		PyTypeObject *t = rev_iter_types[k];
		if (t->tp_basicsize != (Py_ssize_t)sizeof(dictiter_layout)) {
			PyErr_Format(PyExc_TypeError, "%s is not as known", t->tp_name);
			return -1;
		}
		if (held_slot(t, offsetof(PyTypeObject, tp_iternext), (void *)held[k],
		              (void **)&rev_next_real[k]) < 0 ||
		    rewrap(t, "__next__", (void *)rev_next_real[k], (void *)held[k]) < 0)
			return -1;
	}
	return 0;
}

/* ---- East Asian codecs' states ---- */

/* The East Asian codecs' incremental decoders (_multibytecodec) copy a state given to setstate
 * into the codec's state bytes as they are: an iso2022 decoder then looked up a character set
 * it does not have past the end of its table and called what it found there (setstate((b'',
 * 0)) alone: SIGSEGV). A text stream's tell and seek give back states getstate gave. While
 * armed a decoder takes a state getstate gave for an object of its class, one of the
 * libraries' (the answers are kept for each such class), or the state it has; its pending
 * bytes are its own. (An encoder's state only says what it designated last: any is safe.) */
static PyObject *mb_getstate_real, *mb_setstate_real;
static PyObject *mb_states; /* {a library's decoder class: {the flags its getstate gave}} */

/* A decoder state's flags, borrowed, or NULL. */
static PyObject *mb_flags(PyObject *state)
{
	if (state && PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2 &&
	    PyBytes_Check(PyTuple_GET_ITEM(state, 0)) &&
	    PyLong_CheckExact(PyTuple_GET_ITEM(state, 1)))
		return PyTuple_GET_ITEM(state, 1);
	return NULL;
}

static PyObject *mb_getstate(PyObject *self, PyObject *unused)
{
	PyObject *r = PyObject_CallOneArg(mb_getstate_real, self), *flags, *set;
	PyObject *t = (PyObject *)Py_TYPE(self);

	(void)unused;
	if (!r || !(flags = mb_flags(r)) || !pyguard_sealed_class(t))
		return r;
	set = PyDict_GetItemWithError(mb_states, t);
	if (!set && !PyErr_Occurred() && (set = PySet_New(NULL))) {
		int rc = PyDict_SetItem(mb_states, t, set);
		Py_DECREF(set); /* (the dict holds it) */
		if (rc < 0)
			set = NULL;
	}
	if (!set || PySet_Add(set, flags) < 0)
		Py_CLEAR(r);
	return r;
}

static PyObject *mb_setstate(PyObject *self, PyObject *state)
{
	PyObject *flags = mb_flags(state), *set, *now, *plain, *r;
	int known = 0;

	if (!pylayer_armed())
		return PyObject_CallFunctionObjArgs(mb_setstate_real, self, state, NULL);
	if (!flags)
		return PyErr_Format(PyExc_TypeError,
		                    "setstate() takes a (bytes, int) pair, what getstate() gave");
	if (pyguard_sealed_class((PyObject *)Py_TYPE(self)) &&
	    (set = PyDict_GetItemWithError(mb_states, (PyObject *)Py_TYPE(self))))
		known = PySet_Contains(set, flags);
	if (known == 0 && !PyErr_Occurred()) {
		now = PyObject_CallOneArg(mb_getstate_real, self);
		known = now && mb_flags(now) ? PyObject_RichCompareBool(mb_flags(now), flags, Py_EQ)
		                             : -1;
		Py_XDECREF(now);
	}
	if (known < 0 || PyErr_Occurred())
		return NULL;
	if (!known)
		return PyErr_Format(
		    PyExc_ValueError,
		    "a state that getstate() did not give is not taken in the sandbox "
		    "(the decoder would read a character set it does not have)");
	plain = PyTuple_Pack(2, PyTuple_GET_ITEM(state, 0), flags);
	r = plain ? PyObject_CallFunctionObjArgs(mb_setstate_real, self, plain, NULL) : NULL;
	Py_XDECREF(plain);
	return r;
}

static PyMethodDef mb_getstate_def = {"getstate", mb_getstate, METH_NOARGS, NULL};
static PyMethodDef mb_setstate_def = {"setstate", mb_setstate, METH_O, NULL};

static int multibyte_guard(void)
{
	PyObject *m = PyImport_ImportModule("_multibytecodec"), *t;
	int rc;

	if (!m) { /* (a build without the East Asian codecs) */
		PyErr_Clear();
		return 0;
	}
	t = PyObject_GetAttrString(m, "MultibyteIncrementalDecoder");
	Py_DECREF(m);
	rc = t && PyType_Check(t) && (mb_states = PyDict_New()) &&
	             replace_method((PyTypeObject *)t, "getstate", &mb_getstate_def,
	                            &mb_getstate_real) == 0 &&
	             replace_method((PyTypeObject *)t, "setstate", &mb_setstate_def,
	                            &mb_setstate_real) == 0
	         ? 0
	         : -1;
	if (rc < 0 && !PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError,
		                "_multibytecodec.MultibyteIncrementalDecoder is not "
		                "as known");
	Py_XDECREF(t);
	return rc;
}

int pyreentry_guard(void)
{
	PyTypeObject *t = &PyByteArray_Type;

	if (held_operands_init() < 0 || held_binops_init() < 0 || itertools_guard() < 0 ||
	    itertools_states_guard() < 0 || partial_guard() < 0 || deque_guard() < 0 ||
	    unicode_errors_guard() < 0 || callables_guard() < 0 || exception_groups_guard() < 0 ||
	    borrowed_fields_guard() < 0 || decimal_guard() < 0 || context_compare_guard() < 0 ||
	    memory_hash_guard() < 0 || compressors_guard() < 0 || odict_guard() < 0 ||
	    counts_guard() < 0 || codecs_guard() < 0 || generators_guard() < 0 ||
	    contextvars_guard() < 0 || plain_names_guard() < 0 || finalizers_guard() < 0 ||
	    gen_finalizers_deferred() < 0 || c_finalizers_deferred() < 0 ||
	    counted_slots_init() < 0 || weakref_callbacks_guard() < 0 || method_repr_guard() < 0 ||
	    list_repr_guard() < 0 || texts_guard() < 0 || kept_objects_guard() < 0 ||
	    dict_empty_keys_general() < 0 || static_calls_checked() < 0 || set_count_guard() < 0 ||
	    freed_under_compares_install() < 0 || comparisons_held() < 0 ||
	    dict_reversed_guard() < 0 || stringio_guard() < 0 || multibyte_guard() < 0)
		return -1;
	if (replace_method(t, "join", &bytearray_join_def, &bytearray_join_real) < 0)
		return -1;
	if (memory_subscripts_guard() < 0)
		return -1;
	if (zoneinfo_guard() < 0 || expat_guard() < 0 || json_guard() < 0 || datetime_guard() < 0 ||
	    datetime_subclass_guard() < 0)
		return -1;
	/* (the classes beneath list and bytearray the zygote made, traceback's StackSummary among
	 * them, copied their slots when they were made: pyguard_slot_everywhere) */
	list_assign_real = PyList_Type.tp_as_mapping->mp_ass_subscript;
	if (pyguard_slot_everywhere(&PyList_Type, (void *)list_assign_real, (void *)list_assign) <
	    0)
		return -1;

	bytearray_contains_real = t->tp_as_sequence->sq_contains;
	bytearray_assign_real = t->tp_as_mapping->mp_ass_subscript;
	bytearray_item_real = t->tp_as_sequence->sq_ass_item;
	if (pyguard_slot_everywhere(t, (void *)bytearray_contains_real,
	                            (void *)bytearray_contains) < 0 ||
	    pyguard_slot_everywhere(t, (void *)bytearray_assign_real, (void *)bytearray_assign) <
	        0 ||
	    pyguard_slot_everywhere(t, (void *)bytearray_item_real, (void *)bytearray_item) < 0)
		return -1;
	if (guard_methods(t, NULL) < 0)
		return -1;
	return buffered_guard();
}

/* ---- io's buffered streams ---------------------------------------------------------------- */

/* The raw stream a buffered stream is made over, while armed: the one given, behind methods
 * that hand it bytes and never the buffered stream's memoryview (no instance dict: nothing of
 * the user's answers for them). Its raw stream is set once and read only through the slot's
 * own descriptor (taken off the class); while one of its methods runs it holds the buffered
 * stream it is under (_owner, a weak reference) and counts the call (_calls): a detach of the
 * buffered stream from there is refused. */
static const char raw_py[] =
    "class Raw:\n"
    "    \"A raw stream, read and written through copies.\"\n"
    "    __slots__ = ('_raw', '_owner', '_calls')\n"
    "    def __init__(self, raw):\n"
    "        try:\n"
    "            _inner(self)\n"
    "        except AttributeError:\n"
    "            pass\n"
    "        else:\n"
    "            raise ValueError('a raw stream is wrapped once')\n"
    "        _slot.__set__(self, raw)\n"
    "        self._owner = None\n"
    "        self._calls = 0\n"
    "    def readinto(self, b):\n"
    "        data = _inner(self).read(len(b))\n"
    "        if data is None:\n"
    "            return None\n"
    "        data = bytes(data)\n"
    "        b[:len(data)] = data\n"
    "        return len(data)\n"
    "    def readall(self):\n"
    "        readall = getattr(_inner(self), 'readall', None)\n"
    "        if readall is not None:\n"
    "            data = readall()\n"
    "            return None if data is None else bytes(data)\n"
    "        chunks = []\n"
    "        while True:\n"
    "            data = _inner(self).read(65536)\n"
    "            if not data:\n"
    "                return b''.join(chunks) if chunks or data is not None else None\n"
    "            chunks.append(bytes(data))\n"
    "    def read(self, size=-1):\n"
    "        data = _inner(self).read(size)\n"
    "        return None if data is None else bytes(data)\n"
    "    def write(self, b):\n"
    "        return _inner(self).write(bytes(b))\n"
    "    def readable(self):\n"
    "        return _inner(self).readable()\n"
    "    def writable(self):\n"
    "        return _inner(self).writable()\n"
    "    def seekable(self):\n"
    "        return _inner(self).seekable()\n"
    "    def seek(self, *args):\n"
    "        return _inner(self).seek(*args)\n"
    "    def tell(self):\n"
    "        return _inner(self).tell()\n"
    "    def truncate(self, *args):\n"
    "        return _inner(self).truncate(*args)\n"
    "    def flush(self):\n"
    "        return _inner(self).flush()\n"
    "    def close(self):\n"
    "        return _inner(self).close()\n"
    "    def fileno(self):\n"
    "        return _inner(self).fileno()\n"
    "    def isatty(self):\n"
    "        return _inner(self).isatty()\n"
    "    def _closed(self):\n"
    "        return _inner(self).closed\n"
    "    def __getattr__(self, name):\n"
    "        return getattr(_inner(self), name)\n"
    "    def __repr__(self):\n"
    "        return repr(_inner(self))\n"
    "_slot = Raw.__dict__['_raw']\n"
    "_inner = _slot.__get__\n"
    "del Raw._raw\n"
    "def _held(f):\n"
    "    def call(self, *args):\n"
    "        o = self._owner\n"
    "        owner = None if o is None else o()\n"
    "        self._calls += 1\n"
    "        try:\n"
    "            return f(self, *args)\n"
    "        finally:\n"
    "            self._calls -= 1\n"
    "            del owner\n"
    "    call.__name__ = f.__name__\n"
    "    return call\n"
    "for _n in ('readinto', 'readall', 'read', 'write', 'readable', 'writable', "
    "'seekable', "
    "'seek',\n"
    "           'tell', 'truncate', 'flush', 'close', 'fileno', 'isatty', '_closed', "
    "'__getattr__',\n"
    "           '__repr__'):\n"
    "    setattr(Raw, _n, _held(Raw.__dict__[_n]))\n"
    "Raw.closed = property(Raw._closed)\n"
    "del Raw._closed, _n\n";

#define BUFFERED_TYPES 3
static PyObject *raw_class;
static PyObject *raw_slot;        /* Raw's _raw slot, off the class */
static PyTypeObject *fileio_type; /* io.FileIO: its methods are C, and not replaced (below) */
static setattrofunc fileio_setattro_real;

/* A FileIO's methods are not replaced on the object while armed: a readinto set in its dict
 * would be called by its buffered stream with the view of the stream's buffer (the method
 * found in the instance's dict comes first). FileIO raw streams are not wrapped, so that
 * reading a file line by line does not go through Python for every line (raw.closed). */
static int fileio_setattro(PyObject *self, PyObject *name, PyObject *value)
{
	if (pylayer_armed() && PyUnicode_Check(name) && _PyType_Lookup(Py_TYPE(self), name)) {
		PyErr_Format(PyExc_AttributeError,
		             "'%s' object attribute '%U' is not replaced in the sandbox",
		             Py_TYPE(self)->tp_name, name);
		return -1;
	}
	return fileio_setattro_real(self, name, value);
}
static initproc buffered_init_real[BUFFERED_TYPES];
static PyObject *buffered_sizeof[BUFFERED_TYPES]; /* each class's own __sizeof__ */

/* A buffered stream is initialised once while armed: __init__ again frees the buffer a read
 * or write under way is using (called from the raw stream's read, it freed the memory the
 * read then copied into). Its own __sizeof__ counts its buffer once it has one. */
static int buffered_fresh(int i, PyObject *self)
{
	PyObject *size = PyObject_CallOneArg(buffered_sizeof[i], self);
	Py_ssize_t n = size ? PyLong_AsSsize_t(size) : -1;

	Py_XDECREF(size);
	if (n < 0)
		return -1;
	if (n > Py_TYPE(self)->tp_basicsize) {
		PyErr_SetString(PyExc_ValueError, "a buffered stream is initialised once in the "
		                                  "sandbox (make a new one)");
		return -1;
	}
	return 0;
}

static int buffered_init_plain(int i, PyObject *self, PyObject *args, PyObject *kw);

static int buffered_init(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *kwp = NULL;
	int rc;

	if (!pylayer_armed())
		return buffered_init_real[i](self, args, kw);
	if (buffered_fresh(i, self) < 0)
		return -1;
	/* (keywords by their characters: a str subclass's could hide raw from the lookup) */
	if (kw && !(kwp = pylayer_plain_kwargs(kw)))
		return -1;
	rc = buffered_init_plain(i, self, args, kwp);
	Py_XDECREF(kwp);
	return rc;
}

static int buffered_init_plain(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *raw = NULL, *wrapped, *args2 = NULL, *kw2 = NULL;
	int rc;

	if (PyTuple_GET_SIZE(args) > 0)
		raw = PyTuple_GET_ITEM(args, 0);
	else if (kw)
		raw = PyDict_GetItemString(kw, "raw");
	if (!raw || Py_IS_TYPE(raw, (PyTypeObject *)raw_class) || Py_IS_TYPE(raw, fileio_type))
		return buffered_init_real[i](self, args, kw);
	wrapped = PyObject_CallOneArg(raw_class, raw);
	if (!wrapped)
		return -1;
	if (PyTuple_GET_SIZE(args) > 0) {
		args2 = PyTuple_New(PyTuple_GET_SIZE(args));
		for (Py_ssize_t k = 0; args2 && k < PyTuple_GET_SIZE(args); k++)
			PyTuple_SET_ITEM(args2, k,
			                 Py_NewRef(k == 0 ? wrapped : PyTuple_GET_ITEM(args, k)));
	} else {
		kw2 = PyDict_Copy(kw);
		if (kw2 && PyDict_SetItemString(kw2, "raw", wrapped) < 0)
			Py_CLEAR(kw2);
	}
	rc = args2 || kw2 ? buffered_init_real[i](self, args2 ? args2 : args, kw2 ? kw2 : kw) : -1;
	if (rc == 0) {
		PyObject *owner = PyWeakref_NewRef(self, NULL);
		rc = owner ? PyObject_SetAttrString(wrapped, "_owner", owner) : -1;
		Py_XDECREF(owner);
	}
	Py_DECREF(wrapped);
	Py_XDECREF(args2);
	Py_XDECREF(kw2);
	return rc;
}

/* A buffered stream's detach() and raw hand back the raw stream the user gave, not the
 * sandbox's Raw over it; detach is refused while a method of that Raw runs (the buffered
 * stream reads, writes or seeks through it: it went on with its raw stream NULL). */
static PyObject *buffered_detach_real[BUFFERED_TYPES];
static PyObject *buffered_raw_real[BUFFERED_TYPES]; /* each class's own member descriptor */

static PyObject *buffered_raw(int i, PyObject *self)
{
	return Py_TYPE(buffered_raw_real[i])->tp_descr_get(buffered_raw_real[i], self, NULL);
}

static PyObject *buffered_detach(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *raw = buffered_raw(i, self), *calls;
	Py_ssize_t n = 0;

	if (!raw) {
		if (!PyErr_ExceptionMatches(PyExc_ValueError) &&
		    !PyErr_ExceptionMatches(PyExc_AttributeError))
			return NULL;
		PyErr_Clear(); /* detached or not initialised: CPython's detach says which */
	} else if (Py_IS_TYPE(raw, (PyTypeObject *)raw_class)) {
		calls = PyObject_GetAttrString(raw, "_calls");
		n = calls ? PyLong_AsSsize_t(calls) : -1;
		Py_XDECREF(calls);
	}
	Py_XDECREF(raw);
	if (n < 0)
		return NULL;
	if (n > 0) {
		PyErr_SetString(PyExc_RuntimeError, "reentrant call inside a buffered stream "
		                                    "(detach called while it uses its raw stream)");
		return NULL;
	}
	return pyreentry_raw_inner(call_on(buffered_detach_real[i], self, args, kw));
}

static PyObject *buffered_raw_get(PyObject *self, void *i)
{
	return pyreentry_raw_inner(buffered_raw((int)(intptr_t)i, self));
}

#define BUFFERED_DETACH(i)                                                                         \
	static PyObject *buffered_detach_##i(PyObject *self, PyObject *args, PyObject *kw)         \
	{                                                                                          \
		return buffered_detach(i, self, args, kw);                                         \
	}
BUFFERED_DETACH(0)
BUFFERED_DETACH(1)
BUFFERED_DETACH(2)
static PyMethodDef buffered_detach_def[BUFFERED_TYPES] = {
    {"detach", (PyCFunction)(void (*)(void))buffered_detach_0, METH_VARARGS | METH_KEYWORDS, NULL},
    {"detach", (PyCFunction)(void (*)(void))buffered_detach_1, METH_VARARGS | METH_KEYWORDS, NULL},
    {"detach", (PyCFunction)(void (*)(void))buffered_detach_2, METH_VARARGS | METH_KEYWORDS, NULL},
};
static PyGetSetDef buffered_raw_def[BUFFERED_TYPES] = {
    {"raw", buffered_raw_get, NULL, NULL, (void *)0},
    {"raw", buffered_raw_get, NULL, NULL, (void *)1},
    {"raw", buffered_raw_get, NULL, NULL, (void *)2},
};

/* t's raw member (read only) replaced by a getter of the same doc that unwraps. */
static int replace_raw(int i, PyTypeObject *t)
{
	PyObject *m = PyDict_GetItemString(t->tp_dict, "raw"), *d;

	if (!m || !PyObject_TypeCheck(m, &PyMemberDescr_Type) || !Py_TYPE(m)->tp_descr_get) {
		PyErr_Format(PyExc_TypeError, "%s.raw is not as known", t->tp_name);
		return -1;
	}
	buffered_raw_real[i] = Py_NewRef(m);
	buffered_raw_def[i].doc = ((PyMemberDescrObject *)m)->d_member->doc;
	d = PyDescr_NewGetSet(t, &buffered_raw_def[i]);
	if (!d || PyDict_SetItemString(t->tp_dict, "raw", d) < 0) {
		Py_XDECREF(d);
		return -1;
	}
	Py_DECREF(d);
	PyType_Modified(t);
	return 0;
}

#define BUFFERED(i)                                                                                \
	static int buffered_init_##i(PyObject *self, PyObject *args, PyObject *kw)                 \
	{                                                                                          \
		return buffered_init(i, self, args, kw);                                           \
	}
BUFFERED(0)
BUFFERED(1)
BUFFERED(2)
static initproc buffered_init_fn[BUFFERED_TYPES] = {buffered_init_0, buffered_init_1,
                                                    buffered_init_2};

static int replace_init(PyTypeObject *t, void *arg)
{
	int i = *(int *)arg;

	if (t->tp_init == buffered_init_real[i]) {
		t->tp_init = buffered_init_fn[i];
		PyType_Modified(t);
	}
	return 0;
}

/* io.TextIOWrapper, initialised again from inside its buffer's read1, went on with the state
 * it had freed (a SystemError; after a detach() there, a NULL decoder: SIGSEGV): once while
 * armed too, its own buffer member set by then, and never after it was initialised or
 * detached (the head of 3.11's textio struct: ok, detached; checked at start). */
static initproc text_init_real;
static PyObject *text_buffer_get;

struct textio_head {
	PyObject_HEAD int ok;
	int detached;
};

static int text_init_checked(PyObject *self, PyObject *args, PyObject *kw)
{
	if (pylayer_armed()) {
		PyObject *b = Py_TYPE(text_buffer_get)->tp_descr_get(text_buffer_get, self, NULL);
		const struct textio_head *h = (const struct textio_head *)self;
		int fresh = b == Py_None && !h->ok && !h->detached;
		Py_XDECREF(b);
		if (!b)
			return -1;
		if (!fresh) {
			PyErr_SetString(PyExc_ValueError,
			                "a text stream is initialised once in the "
			                "sandbox (make a new one)");
			return -1;
		}
	}
	return text_init_real(self, args, kw);
}

static int replace_text_init(PyTypeObject *t, void *arg)
{
	(void)arg;
	if (t->tp_init == text_init_real) {
		t->tp_init = text_init_checked;
		PyType_Modified(t);
	}
	return 0;
}

/* The textio struct's tail as text_tell_bounded reads it: a wrapper that has read one
 * character of ten 2-byte ones holds them all, one used, their 20 bytes as its snapshot, and a
 * ratio of 2. */
static int text_tail_fits(PyObject *io, PyTypeObject *type)
{
	PyObject *b = PyObject_CallMethod(io, "BytesIO", "y#",
	                                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	                                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	                                  (Py_ssize_t)20),
	         *w, *r;
	int fits = 0;

	w = b ? PyObject_CallFunction((PyObject *)type, "Os", b, "utf-8") : NULL;
	r = w ? PyObject_CallMethod(w, "read", "i", 1) : NULL;
	if (r && type->tp_basicsize == (Py_ssize_t)sizeof(struct textio_state)) {
		const struct textio_state *t = (const struct textio_state *)w;
		fits = t->b2cratio == 2.0 && t->decoded_chars_used == 1 && t->decoded_chars &&
		       PyUnicode_Check(t->decoded_chars) &&
		       PyUnicode_GET_LENGTH(t->decoded_chars) == 10 && t->snapshot &&
		       PyTuple_Check(t->snapshot) && PyTuple_GET_SIZE(t->snapshot) == 2 &&
		       PyBytes_Check(PyTuple_GET_ITEM(t->snapshot, 1)) &&
		       PyBytes_GET_SIZE(PyTuple_GET_ITEM(t->snapshot, 1)) == 20;
	}
	Py_XDECREF(r);
	Py_XDECREF(w);
	Py_XDECREF(b);
	return fits;
}

/* The textio struct's head as text_init_checked reads it: a new wrapper is ok and not
 * detached, then detached; and its tail as text_tell_bounded reads it. */
static int text_head_check(PyObject *io, PyTypeObject *type)
{
	PyObject *b = PyObject_CallMethod(io, "BytesIO", NULL), *w, *r;
	int fits = 0;

	w = b ? PyObject_CallFunction((PyObject *)type, "Os", b, "utf-8") : NULL;
	if (w && Py_TYPE(w)->tp_basicsize >= (Py_ssize_t)sizeof(struct textio_head)) {
		const struct textio_head *h = (const struct textio_head *)w;
		fits = h->ok == 1 && h->detached == 0;
		r = PyObject_CallMethod(w, "detach", NULL);
		fits = fits && r && h->ok == 1 && h->detached == 1;
		Py_XDECREF(r);
	}
	Py_XDECREF(w);
	Py_XDECREF(b);
	if (fits && text_tail_fits(io, type))
		return 0;
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError, "io.TextIOWrapper's state is not as known");
	return -1;
}

static int text_guard(PyObject *io)
{
	PyObject *t = PyObject_GetAttrString(io, "TextIOWrapper");
	PyTypeObject *type = (PyTypeObject *)t;

	if (!t || !PyType_Check(t) ||
	    !(text_buffer_get = Py_XNewRef(PyDict_GetItemString(type->tp_dict, "buffer"))) ||
	    !Py_TYPE(text_buffer_get)->tp_descr_get) {
		Py_XDECREF(t);
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "io.TextIOWrapper is not as known");
		return -1;
	}
	Py_DECREF(t); /* io keeps it */
	if (text_head_check(io, type) < 0)
		return -1;
	if (replace_method(type, "reconfigure", &reconfigure_def, &reconfigure_real) < 0)
		return -1;
	for (int op = 0; op < TEXT_OPS; op++)
		if (text_defs[op].ml_name &&
		    replace_method(type, text_defs[op].ml_name, &text_defs[op], &text_real[op]) < 0)
			return -1;
	text_next_real = type->tp_iternext;
	if (rewrap(type, "__next__", (void *)text_next_real, (void *)text_next) < 0 ||
	    held_slot(type, offsetof(PyTypeObject, tp_iternext), (void *)text_next,
	              (void **)&text_next_real) < 0)
		return -1;
	text_init_real = type->tp_init;
	if (rewrap(type, "__init__", (void *)text_init_real, (void *)text_init_checked) < 0)
		return -1;
	return pyguard_walk(type, replace_text_init, NULL);
}

/* FileIO's own dict (filled past its setattr: copy's reconstruction, logging's record
 * factory, update_wrapper; V66b, V67b, V68b H1-H2) came before its methods: a readinto there
 * was handed a buffered reader's buffer (a write a writer's), kept, and used after the reader
 * freed it. Its methods, its bases' too, are data descriptors on FileIO itself: found before
 * any instance's dict, answering as the methods do (the method itself on the class). */
struct method_fixed {
	PyObject_HEAD PyObject *method;
};

static PyObject *method_fixed_get(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *m = ((struct method_fixed *)self)->method;

	if (!obj || obj == Py_None || !Py_TYPE(m)->tp_descr_get)
		return Py_NewRef(m);
	return Py_TYPE(m)->tp_descr_get(m, obj, type);
}

static int method_fixed_set(PyObject *self, PyObject *obj, PyObject *value)
{
	(void)self;
	PyErr_Format(PyExc_AttributeError, "'%s' object's methods are not replaced in the sandbox",
	             Py_TYPE(obj)->tp_name);
	(void)value;
	return -1;
}

static void method_fixed_dealloc(PyObject *self)
{
	Py_XDECREF(((struct method_fixed *)self)->method);
	PyObject_Free(self);
}

static PyTypeObject method_fixed_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "method_descriptor",
    .tp_basicsize = sizeof(struct method_fixed),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_descr_get = method_fixed_get,
    .tp_descr_set = method_fixed_set,
    .tp_dealloc = method_fixed_dealloc,
};

static int fileio_methods_fixed(PyTypeObject *t)
{
	PyObject *mro = t->tp_mro, *key, *value;

	if (PyType_Ready(&method_fixed_type) < 0)
		return -1;
	for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
		Py_ssize_t pos = 0;
		if (c == &PyBaseObject_Type || !c->tp_dict)
			continue;
		while (PyDict_Next(c->tp_dict, &pos, &key, &value)) {
			struct method_fixed *f;
			PyObject *own;
			if (!PyUnicode_Check(key) || !Py_IS_TYPE(value, &PyMethodDescr_Type) ||
			    PyUnicode_GetLength(key) < 1 || PyUnicode_READ_CHAR(key, 0) == '_')
				continue;
			own = PyDict_GetItemWithError(t->tp_dict, key);
			if (own && Py_IS_TYPE(own, &method_fixed_type))
				continue;
			if ((own && own != value) || PyErr_Occurred())
				continue; /* (FileIO's own, met first) */
			if (!(f = PyObject_New(struct method_fixed, &method_fixed_type)))
				return -1;
			f->method = Py_NewRef(value);
			if (PyDict_SetItem(t->tp_dict, key, (PyObject *)f) < 0) {
				Py_DECREF(f);
				return -1;
			}
			Py_DECREF(f);
		}
	}
	PyType_Modified(t);
	return 0;
}

static int buffered_guard(void)
{
	static const char *const names[BUFFERED_TYPES] = {"BufferedReader", "BufferedWriter",
	                                                  "BufferedRandom"};
	PyObject *io = PyImport_ImportModule("io"), *g = PyDict_New(), *code = NULL, *r = NULL;
	int rc = -1;

	code = g ? Py_CompileString(raw_py, "<sandbox io>", Py_file_input) : NULL;
	if (!io || !code || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto out;
	r = PyEval_EvalCode(code, g, g);
	raw_class = r ? Py_XNewRef(PyDict_GetItemString(g, "Raw")) : NULL;
	raw_slot = r ? Py_XNewRef(PyDict_GetItemString(g, "_slot")) : NULL;
	if (!raw_class || !raw_slot || !Py_TYPE(raw_slot)->tp_descr_get)
		goto out;
	{
		PyObject *f = PyObject_GetAttrString(io, "FileIO");
		if (!f || !PyType_Check(f) || !((PyTypeObject *)f)->tp_setattro) {
			Py_XDECREF(f);
			PyErr_SetString(PyExc_TypeError, "io.FileIO is not as known");
			goto out;
		}
		fileio_type = (PyTypeObject *)f; /* io keeps it */
		Py_DECREF(f);
		fileio_setattro_real = fileio_type->tp_setattro;
		fileio_type->tp_setattro = fileio_setattro;
		if (fileio_methods_fixed(fileio_type) < 0)
			goto out;
	}
	for (int i = 0; i < BUFFERED_TYPES; i++) {
		PyObject *t = PyObject_GetAttrString(io, names[i]);
		PyTypeObject *type = (PyTypeObject *)t;
		if (!t || !PyType_Check(t)) {
			Py_XDECREF(t);
			PyErr_Format(PyExc_TypeError, "io.%s is not as known", names[i]);
			goto out;
		}
		Py_DECREF(t); /* io keeps it */
		buffered_sizeof[i] = Py_XNewRef(PyDict_GetItemString(type->tp_dict, "__sizeof__"));
		if (!buffered_sizeof[i]) {
			PyErr_Format(PyExc_TypeError, "io.%s.__sizeof__ is not as known", names[i]);
			goto out;
		}
		if (replace_method(type, "detach", &buffered_detach_def[i],
		                   &buffered_detach_real[i]) < 0 ||
		    replace_raw(i, type) < 0)
			goto out;
		buffered_init_real[i] = type->tp_init;
		if (rewrap(type, "__init__", (void *)buffered_init_real[i],
		           (void *)buffered_init_fn[i]) < 0 ||
		    pyguard_walk(type, replace_init, &i) < 0)
			goto out;
	}
	rc = text_guard(io);
out:
	Py_XDECREF(r);
	Py_XDECREF(code);
	Py_XDECREF(g);
	Py_XDECREF(io);
	return rc;
}

PyObject *pyreentry_raw_inner(PyObject *raw)
{
	if (raw_class && raw && Py_IS_TYPE(raw, (PyTypeObject *)raw_class)) {
		PyObject *inner = Py_TYPE(raw_slot)->tp_descr_get(raw_slot, raw, NULL);
		Py_DECREF(raw);
		return inner;
	}
	return raw;
}
