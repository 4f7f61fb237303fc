/* pyreentry.c - C methods of CPython 3.11 that call the user's code in the middle of their work
 * (an argument's __index__ or __float__) after they have checked an index against a buffer or
 * taken the buffer's address: the user's code resizes the object meanwhile, and the method goes
 * on with the old index or address. array.array's item assignment wrote a value of the user's
 * past its buffer (a bytearray's header overwritten: any memory, then the real builtins), and
 * bytearray's searches read a freed buffer. While armed, the arguments are made plain numbers
 * before the method runs, so nothing of the user's runs inside it; the method gives the same
 * answer and raises the same exceptions as before.
 *
 * The methods are the classes' own: their dicts' descriptors (a call through the class, a
 * subclass, a bound method), their slots and the slots' wrappers in the dicts (a[i] = x and
 * a.__setitem__(i, x)) are all replaced. Functions return 0 / -1 with a Python exception set. */
#include "interp_internal.h"

#include <string.h>

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
};

struct guarded {
	PyTypeObject **type;
	const char *name;
	enum fix fix;
	PyObject *real; /* the class's own method descriptor */
	PyMethodDef def;
};

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

static PyObject *guarded_call(size_t g, PyObject *self, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	PyObject *stack[8], **argv = n + 1 <= 8 ? stack : PyMem_New(PyObject *, n + 1), *r = NULL;
	Py_ssize_t made = 0;
	int typecode = 0;

	if (!argv)
		return PyErr_NoMemory();
	argv[0] = self;
	if (pylayer_armed() && guarded[g].fix != FIX_INDEXES &&
	    (typecode = array_typecode(self)) < 0)
		goto out;
	for (; made < n; made++) {
		PyObject *a = PyTuple_GET_ITEM(args, made);
		if (!pylayer_armed())
			a = Py_NewRef(a);
		else if (guarded[g].fix == FIX_INDEXES)
			a = index_plain(a);
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
static PyCFunctionWithKeywords guarded_fn[] = {
    guarded_0, guarded_1, guarded_2, guarded_3, guarded_4,  guarded_5,
    guarded_6, guarded_7, guarded_8, guarded_9, guarded_10,
};

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
	array_assign_real = t->tp_as_mapping->mp_ass_subscript;
	array_assign_item_real = t->tp_as_sequence->sq_ass_item;
	t->tp_as_mapping->mp_ass_subscript = array_assign;
	t->tp_as_sequence->sq_ass_item = array_assign_item;
	if (rewrap(t, "__setitem__", (void *)array_assign_real, (void *)array_assign) < 0 ||
	    rewrap(t, "__setitem__", (void *)array_assign_item_real, (void *)array_assign_item) < 0)
		return -1;
	return guard_methods(t, &array_type);
}

/* ---- bytearray's searches ----------------------------------------------------------------- */

static objobjproc bytearray_contains_real;

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

int pyreentry_guard(void)
{
	PyTypeObject *t = &PyByteArray_Type;

	bytearray_contains_real = t->tp_as_sequence->sq_contains;
	t->tp_as_sequence->sq_contains = bytearray_contains;
	if (rewrap(t, "__contains__", (void *)bytearray_contains_real, (void *)bytearray_contains) <
	    0)
		return -1;
	return guard_methods(t, NULL);
}
