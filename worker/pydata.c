/* pydata.c - runs pydata.py (embedded by the build) once in the zygote to make the data stack
 * ready; in a worker, turns the figures a call showed or left open into its outcome's images, and
 * numpy and pandas values into plain ones for its JSON result. Functions return 0 / -1 with a
 * Python exception set, unless they say otherwise. */
#include "interp_internal.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pydata_py.h"

static PyObject *figures_fn; /* pydata.py's figures(), or NULL when matplotlib is not loaded */
static PyObject *natural_fn; /* pydata.py's natural(), or NULL when neither numpy nor pandas is */
static PyObject *display_fn; /* pydata.py's display(), or NULL when neither matplotlib nor PIL is */
static PyObject *keep_files_fn; /* pydata.py's keep_files(), or NULL */
static PyObject *call_begin_fn; /* pydata.py's call_begin(), or NULL */

/* vars() for pyplot's code. pyplot.switch_backend makes a class of a backend module's variables,
 * read with vars(): a real module's namespace, which the sandbox gives no code (it holds the real
 * builtins and other modules). A backend's module is read as its proxy, the view user code gets
 * of it (its public names, no modules); anything else as vars() reads it. */
static PyObject *backend_vars(PyObject *self, PyObject *obj)
{
	static const char prefix[] = "matplotlib.backends.";
	PyObject *name, *proxy = NULL, *d, *k, *v;
	Py_ssize_t pos = 0;
	const char *s;

	(void)self;
	if (PyModule_CheckExact(obj) && !pyproxy_is(obj)) {
		name = PyModule_GetNameObject(obj);
		s = name && PyUnicode_CheckExact(name) ? PyUnicode_AsUTF8(name) : NULL;
		if (s && strncmp(s, prefix, sizeof(prefix) - 1) == 0)
			proxy = pyproxy_get(name, 0);
		Py_XDECREF(name);
		if (!proxy && PyErr_Occurred())
			return NULL;
	}
	if (!proxy)
		return PyObject_GetAttrString(obj, "__dict__");
	/* pyproxy_get's reference is borrowed; the proxy's own entries (__getattr__, __all__)
	 * are not the module's variables. */
	d = PyDict_New();
	while (d && PyDict_Next(PyModule_GetDict(proxy), &pos, &k, &v)) {
		s = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
		if (s && strncmp(s, "__", 2) == 0)
			continue;
		if (PyDict_SetItem(d, k, v) < 0)
			Py_CLEAR(d);
	}
	return d;
}

static PyMethodDef backend_vars_def = {"vars", backend_vars, METH_O,
                                       "vars() as matplotlib.pyplot reads a backend's module."};

/* ---- guards in C for what the data libraries do in C ---------------------------------------- */

/* numpy's ndarray(shape, dtype, buffer=..., offset=...) trusted what it was given:
 * - with an object dtype the buffer's bytes are read as object pointers (a bytearray of a number
 *   made any object the user named): with a buffer, the dtype may not hold objects; it is
 *   converted here once and handed on as that dtype (a second conversion could answer otherwise);
 * - a negative offset was not refused: the array began before the buffer, at any distance;
 * - it kept the buffer's object but released its export at once: a bytearray then resized or
 *   cleared left the array over freed memory (a bytearray's header laid there: any memory). The
 *   buffer is handed on pinned: a holder of the export for as long as the array lives, so the
 *   object cannot be resized under it (BufferError, as for any exported bytearray). */
static newfunc ndarray_new_real;
/* The slots replaced below are still reached through their classes' method wrappers
 * (a.__setitem__(k, v), g.__init__(x), dtype.__eq__(o): the wrapper calls the function it was
 * made with). Each replacement is noted here, and once all are made every wrapper of a class
 * in the interpreter that calls a replaced function calls its replacement (rewrap_all). */
#define N_REWRAPS 192
static struct {
	void *real, *guard;
} rewraps[N_REWRAPS];
static int n_rewraps, rewraps_lost;

static void rewrap_note(void *real, void *guard)
{
	for (int i = 0; i < n_rewraps; i++)
		if (rewraps[i].real == real)
			return;
	if (n_rewraps == N_REWRAPS) {
		rewraps_lost = 1;
		return;
	}
	rewraps[n_rewraps].real = real;
	rewraps[n_rewraps++].guard = guard;
}

static int rewrap_type(PyTypeObject *t, void *arg)
{
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	(void)arg;
	while (t->tp_dict && PyDict_Next(t->tp_dict, &pos, &key, &value)) {
		PyWrapperDescrObject *w = (PyWrapperDescrObject *)value;
		if (!PyObject_TypeCheck(value, &PyWrapperDescr_Type))
			continue;
		for (int i = 0; i < n_rewraps; i++)
			if (w->d_wrapped == rewraps[i].real) {
				w->d_wrapped = rewraps[i].guard;
				break;
			}
	}
	return 0;
}

static int rewrap_all(void)
{
	if (rewraps_lost) {
		PyErr_SetString(PyExc_RuntimeError, "more replaced slots than the sandbox notes");
		return -1;
	}
	return pyguard_walk(&PyBaseObject_Type, rewrap_type, NULL);
}

static PyObject *np_dtype;

typedef struct {
	PyObject_HEAD Py_buffer view;
} pinned_object;

static void pinned_dealloc(PyObject *self)
{
	PyBuffer_Release(&((pinned_object *)self)->view);
	Py_TYPE(self)->tp_free(self);
}

static int pinned_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
	pinned_object *p = (pinned_object *)self;

	return PyBuffer_FillInfo(view, self, p->view.buf, p->view.len, p->view.readonly, flags);
}

static PyBufferProcs pinned_as_buffer = {.bf_getbuffer = pinned_getbuffer};

static PyTypeObject pinned_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.PinnedBuffer",
    .tp_basicsize = sizeof(pinned_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = pinned_dealloc,
    .tp_as_buffer = &pinned_as_buffer,
    .tp_doc = "The memory an array was made over, held for as long as the array lives.",
};

/* buffer's memory, held (writable when it is). New reference. */
static PyObject *pinned(PyObject *buffer)
{
	pinned_object *p = PyObject_New(pinned_object, &pinned_type);

	if (!p)
		return NULL;
	if (PyObject_GetBuffer(buffer, &p->view, PyBUF_ANY_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
		PyErr_Clear();
		if (PyObject_GetBuffer(buffer, &p->view, PyBUF_ANY_CONTIGUOUS) < 0) {
			PyObject_Free(p); /* no view to release */
			return NULL;
		}
	}
	return (PyObject *)p;
}

/* numpy 1.x's PyArrayObject, as far as its shape. */
struct np_array {
	PyObject_HEAD char *data;
	int nd;
	Py_ssize_t *dimensions, *strides;
	PyObject *base, *descr;
	int flags;
};
#define NP_C_CONTIGUOUS 0x0001
#define NP_F_CONTIGUOUS 0x0002
#define NP_OWNDATA      0x0004
#define NP_WRITEABLE    0x0400
#define NP_MAXDIMS      32
static int descr_elsize(PyObject *descr);
static char descr_kind(PyObject *descr);
static int descr_subarray(PyObject *descr);
static int descr_has_objects(PyObject *descr);
static int descr_plain(PyObject *descr);
static int descr_is_object(PyObject *descr);
static int dtypes_whole_guard(void);

/* Does the memory an array of these dimensions and strides (NULL: contiguous) reaches stay
 * far from npy_intp's limits? numpy checks an array made over a buffer, or given new strides,
 * against its memory by sums in npy_intp, unchecked: strides of 2**63 wrapped the sums back
 * into range, and an element of the array lay at any address. Below 2**61 each way (and an
 * offset below it), no sum of numpy's overflows, its offset's included, and its own check is
 * exact. An empty array reaches nothing. */
static int extent_bounded(Py_ssize_t elsize, int nd, const Py_ssize_t *dims,
                          const Py_ssize_t *strides)
{
	const __int128 limit = (__int128)1 << 61;
	__int128 lower = 0, upper = elsize;

	if (elsize < 0)
		return 0;
	for (int i = 0; i < nd; i++)
		if (dims[i] <= 0)
			return 1; /* empty, or refused by numpy */
	for (int i = 0; i < nd; i++) {
		if (!strides) {
			upper *= dims[i];
		} else {
			__int128 step = (__int128)strides[i] * (dims[i] - 1);
			if (step > 0)
				upper += step;
			else
				lower += step;
		}
		if (upper >= limit || lower <= -limit)
			return 0;
	}
	return 1;
}

/* o, an int or a sequence of ints (a shape, strides), into out: their number, or -1 with an
 * error. Each item is read once, here: numpy is handed the tuple made of them, so an item's
 * __index__ cannot answer it otherwise. */
static int intp_values(PyObject *o, Py_ssize_t *out, PyObject **tuple)
{
	PyObject *items = NULL, *one;
	Py_ssize_t n;

	/* One number, or a sequence of them (an array of several is both: numpy takes its items) */
	if (!PyIndex_Check(o))
		items = PySequence_Tuple(o);
	else if ((one = PyNumber_Index(o))) {
		items = PyTuple_Pack(1, one);
		Py_DECREF(one);
	} else if (PySequence_Check(o) && PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		items = PySequence_Tuple(o);
	}
	n = items ? PyTuple_GET_SIZE(items) : -1;

	*tuple = NULL;
	if (n > NP_MAXDIMS) {
		PyErr_Format(PyExc_ValueError,
		             "maximum supported dimension for an ndarray is %d, found %zd",
		             NP_MAXDIMS, n);
		n = -1;
	}
	if (n >= 0 && !(*tuple = PyTuple_New(n)))
		n = -1;
	for (Py_ssize_t i = 0; n >= 0 && i < n; i++) {
		PyObject *v = PyNumber_Index(PyTuple_GET_ITEM(items, i));
		out[i] = v ? PyLong_AsSsize_t(v) : -1;
		if (!v || (out[i] == -1 && PyErr_Occurred())) {
			Py_XDECREF(v);
			Py_CLEAR(*tuple);
			n = -1;
			break;
		}
		PyTuple_SET_ITEM(*tuple, i, v);
	}
	Py_XDECREF(items);
	return (int)n;
}

/* The constructor's arguments by position: shape, dtype, buffer, offset, strides, order. */
enum { ND_SHAPE, ND_DTYPE, ND_BUFFER, ND_OFFSET, ND_STRIDES, ND_ARGS };
static const char *const nd_names[ND_ARGS] = {"shape", "dtype", "buffer", "offset", "strides"};

/* The shape and strides of an array made over a buffer, put in given[] as plain tuples (new
 * references; NULL where the caller's stands), checked to stay far from npy_intp's limits with
 * the data type's size: numpy checks them against the buffer and the offset, exactly then.
 * 0, or -1 with an error and both NULL. */
static int nd_extent_given(PyObject **given, PyObject *dtype)
{
	Py_ssize_t dims[NP_MAXDIMS], strides[NP_MAXDIMS], elsize = dtype ? descr_elsize(dtype) : 8;
	PyObject *shape_t = NULL, *strides_t = NULL;
	int nd, ns = -2; /* -2: contiguous */

	if (!given[ND_SHAPE]) {
		given[ND_STRIDES] = NULL; /* no shape: numpy's error */
		return 0;
	}
	if ((nd = intp_values(given[ND_SHAPE], dims, &shape_t)) < 0)
		goto fail;
	if (given[ND_STRIDES] && given[ND_STRIDES] != Py_None &&
	    (ns = intp_values(given[ND_STRIDES], strides, &strides_t)) < 0)
		goto fail;
	/* strides of another length than the shape: numpy's error */
	if ((ns < 0 || ns == nd) && !extent_bounded(elsize, nd, dims, ns >= 0 ? strides : NULL)) {
		PyErr_SetString(PyExc_ValueError, ns >= 0
		                                      ? "strides is incompatible with shape of "
		                                        "requested array and size of buffer"
		                                      : "buffer is too small for requested array");
		goto fail;
	}
	given[ND_SHAPE] = shape_t;
	given[ND_STRIDES] = strides_t;
	return 0;
fail:
	Py_XDECREF(shape_t);
	Py_XDECREF(strides_t);
	given[ND_SHAPE] = given[ND_STRIDES] = NULL;
	return -1;
}

static PyObject *ndarray_new_over_plain(PyTypeObject *t, PyObject *args, PyObject *kw);

/* (keywords by their characters: a str subclass's could hide strides or buffer from the
 * lookups, which numpy still takes) */
static PyObject *ndarray_new_over(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	return pylayer_new_plain(ndarray_new_over_plain, t, args, kw);
}

static PyObject *ndarray_new_over_plain(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	Py_ssize_t n = args && PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : 0;
	PyObject *given[ND_ARGS] = {NULL}, *args2 = NULL, *kw2 = NULL, *r = NULL, *v, *has;
	int objects, buffer;

	if (!pylayer_armed())
		return ndarray_new_real(t, args, kw);
	for (int i = 0; i < ND_ARGS; i++) {
		given[i] = i < n ? PyTuple_GET_ITEM(args, i) : NULL;
		if (!given[i] && kw && PyDict_Check(kw))
			given[i] = PyDict_GetItemString(kw, nd_names[i]);
	}
	/* Without a buffer numpy checks strides given against the memory it makes, by the same
	 * unchecked sums. */
	buffer = given[ND_BUFFER] && given[ND_BUFFER] != Py_None;
	if (!buffer && (!given[ND_STRIDES] || given[ND_STRIDES] == Py_None))
		return ndarray_new_real(t, args, kw);
	/* What is handed on: new references, put back by position or name. */
	v = given[ND_DTYPE] && given[ND_DTYPE] != Py_None
	        ? PyObject_CallOneArg(np_dtype, given[ND_DTYPE])
	        : NULL;
	if (given[ND_DTYPE] && given[ND_DTYPE] != Py_None && !buffer && !v)
		return NULL;
	if (given[ND_DTYPE] && given[ND_DTYPE] != Py_None && buffer) {
		has = v ? PyObject_GetAttrString(v, "hasobject") : NULL;
		objects = has ? PyObject_IsTrue(has) : -1;
		Py_XDECREF(has);
		if (objects != 0) {
			if (objects > 0)
				PyErr_SetString(
				    PyExc_TypeError,
				    "an array of objects is not made over a buffer in the "
				    "sandbox (its bytes would be read as objects)");
			Py_XDECREF(v);
			return NULL;
		}
	}
	given[ND_DTYPE] = v; /* NULL: not given */
	given[ND_BUFFER] = buffer ? pinned(given[ND_BUFFER]) : NULL;
	if (buffer && !given[ND_BUFFER]) {
		given[ND_OFFSET] = given[ND_SHAPE] = given[ND_STRIDES] = NULL;
		goto out;
	}
	if (!buffer) {
		given[ND_OFFSET] = NULL; /* numpy's, unread without a buffer */
	} else if (given[ND_OFFSET] && given[ND_OFFSET] != Py_None) {
		Py_ssize_t off;
		v = PyNumber_Index(given[ND_OFFSET]);
		off = v ? PyLong_AsSsize_t(v) : -1;
		if (v && off < 0 && !PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "offset must be non-negative");
		/* numpy adds it to the array's size unchecked: no buffer is that large */
		if (v && off >= ((Py_ssize_t)1 << 61) && !PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "offset is larger than the buffer");
		if (PyErr_Occurred())
			Py_CLEAR(v);
		given[ND_OFFSET] = v;
		if (!v) {
			given[ND_SHAPE] = given[ND_STRIDES] = NULL;
			goto out;
		}
	} else {
		given[ND_OFFSET] = NULL;
	}
	if (nd_extent_given(given, given[ND_DTYPE]) < 0)
		goto out;
	args2 = PyTuple_New(n);
	kw2 = kw && PyDict_Check(kw) ? PyDict_Copy(kw) : PyDict_New();
	if (!args2 || !kw2)
		goto out;
	for (Py_ssize_t i = 0; i < n; i++)
		PyTuple_SET_ITEM(
		    args2, i,
		    Py_NewRef(i < ND_ARGS && given[i] ? given[i] : PyTuple_GET_ITEM(args, i)));
	for (int i = 0; i < ND_ARGS; i++)
		if (i >= n && given[i] && PyDict_SetItemString(kw2, nd_names[i], given[i]) < 0)
			goto out;
	r = ndarray_new_real(t, args2, kw2);
out:
	for (int i = 0; i < ND_ARGS; i++)
		Py_XDECREF(given[i]);
	Py_XDECREF(args2);
	Py_XDECREF(kw2);
	return r;
}

/* The shape and strides given are read from private copies (numpy read a list of the user's
 * where it was, across each item's __index__: below). */
static PyObject *private_lists(PyObject *o, int depth);
static PyObject *private_kw(PyObject *kw);

static int dtype_args_checked(PyObject *const *args, Py_ssize_t from, Py_ssize_t n,
                              Py_ssize_t data);

/* The type-like arguments among a constructor's copies (args a tuple, kw a dict or NULL) checked
 * (the data types made whole, below). */
static int copies_checked(PyObject *args, PyObject *kw)
{
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	if (PyTuple_Check(args) &&
	    dtype_args_checked(&PyTuple_GET_ITEM(args, 0), 0, PyTuple_GET_SIZE(args), 0) < 0)
		return -1;
	while (kw && PyDict_Check(kw) && PyDict_Next(kw, &pos, &key, &value))
		if (dtype_args_checked(&value, 0, 1, 0) < 0)
			return -1;
	return 0;
}

/* real(t, args, kw) with private copies of the lists in args and kw's values. */
static PyObject *new_with_copies(newfunc real, PyTypeObject *t, PyObject *args, PyObject *kw)
{
	PyObject *args2, *kw2, *r;

	if (!(args2 = private_lists(args, 0)))
		return NULL;
	if (!(kw2 = private_kw(kw)) && kw) {
		Py_DECREF(args2);
		return NULL;
	}
	/* np.dtype's own: the type it makes is checked (new_copied) */
	if (!PyType_IsSubtype(t, (PyTypeObject *)np_dtype) && copies_checked(args2, kw2) < 0) {
		Py_DECREF(args2);
		Py_XDECREF(kw2);
		return NULL;
	}
	r = real(t, args2, kw2);
	Py_DECREF(args2);
	Py_XDECREF(kw2);
	return r;
}

static PyObject *ndarray_new_checked(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	if (!pylayer_armed())
		return ndarray_new_real(t, args, kw);
	return new_with_copies(ndarray_new_over, t, args, kw);
}

/* Object arrays' bytes. numpy hands the memory of an array of objects to any buffer consumer:
 * one that reads it as bytes (np.frombuffer, struct.pack_into, readinto, memoryview.cast) could
 * write object pointers of its own into it, each then an object of any address. While armed, an
 * array holding objects is handed only to a consumer that asks for its format (the compiled
 * libraries' typed buffers do, and check it is objects), and a memoryview of objects is neither
 * cast, assigned to nor handed on as bytes. */
static getbufferproc ndarray_getbuffer_real, memory_getbuffer_real;
static objobjargproc memory_assign_real;
static _PyCFunctionFastWithKeywords memory_cast_real;
static PyObject *ndarray_dtype_get, *dtype_hasobject_get; /* ndarray's own getters */

/* 1 when the array a holds objects, 0 when not, -1 on error. By numpy's own getters: a
 * subclass may answer dtype otherwise. */
static int array_holds_objects(PyObject *a)
{
	PyObject *descr, *has;
	int r;

	descr = Py_TYPE(ndarray_dtype_get)->tp_descr_get(ndarray_dtype_get, a, NULL);
	if (!descr)
		return -1;
	has = Py_TYPE(dtype_hasobject_get)->tp_descr_get(dtype_hasobject_get, descr, NULL);
	Py_DECREF(descr);
	if (!has)
		return -1;
	r = PyObject_IsTrue(has);
	Py_DECREF(has);
	return r;
}

static const char objects_as_bytes[] =
    "the memory of an array of objects is not handed out as bytes in the sandbox (bytes written "
    "there would be read as objects)";

static int ndarray_getbuffer_checked(PyObject *a, Py_buffer *view, int flags)
{
	if (pylayer_armed() && !(flags & PyBUF_FORMAT)) {
		int objects = array_holds_objects(a);
		if (objects != 0) {
			if (objects > 0)
				PyErr_SetString(PyExc_BufferError, objects_as_bytes);
			view->obj = NULL;
			return -1;
		}
	}
	return ndarray_getbuffer_real(a, view, flags);
}

/* A memoryview of objects: its format names objects ('O', alone or in a structure). A
 * released one is left to memoryview's own refusal. */
static int memory_of_objects(PyObject *m)
{
	PyMemoryViewObject *mv = (PyMemoryViewObject *)m;
	const char *format = mv->view.format;

	if (!pylayer_armed() || (mv->flags & _Py_MEMORYVIEW_RELEASED) ||
	    (mv->mbuf->flags & _Py_MANAGED_BUFFER_RELEASED))
		return 0;
	if (format && strchr(format, 'O')) {
		PyErr_SetString(PyExc_TypeError, objects_as_bytes);
		return 1;
	}
	return 0;
}

static int memory_getbuffer_checked(PyObject *m, Py_buffer *view, int flags)
{
	if (!(flags & PyBUF_FORMAT) && memory_of_objects(m)) {
		view->obj = NULL;
		return -1;
	}
	return memory_getbuffer_real(m, view, flags);
}

static int memory_assign_checked(PyObject *m, PyObject *key, PyObject *value)
{
	if (memory_of_objects(m))
		return -1;
	return memory_assign_real(m, key, value);
}

static PyObject *memory_cast_checked(PyObject *m, PyObject *const *args, Py_ssize_t n,
                                     PyObject *names)
{
	if (memory_of_objects(m))
		return NULL;
	return memory_cast_real(m, args, n, names);
}

static int replace_getbuffer(PyTypeObject *t, void *arg)
{
	(void)arg;
	if (t->tp_as_buffer && t->tp_as_buffer->bf_getbuffer == ndarray_getbuffer_real)
		t->tp_as_buffer->bf_getbuffer = ndarray_getbuffer_checked;
	return 0;
}

static int buffers_guard(PyObject *np, PyTypeObject *nd)
{
	PyObject *dtype = PyObject_GetAttrString(np, "dtype"), *cast;
	PyMethodDef *def;

	ndarray_dtype_get = PyDict_GetItemString(nd->tp_dict, "dtype");
	dtype_hasobject_get =
	    dtype && PyType_Check(dtype)
	        ? PyDict_GetItemString(((PyTypeObject *)dtype)->tp_dict, "hasobject")
	        : NULL;
	Py_XDECREF(dtype); /* numpy keeps it */
	cast = PyDict_GetItemString(PyMemoryView_Type.tp_dict, "cast");
	if (!ndarray_dtype_get || !Py_TYPE(ndarray_dtype_get)->tp_descr_get ||
	    !dtype_hasobject_get || !Py_TYPE(dtype_hasobject_get)->tp_descr_get || !cast ||
	    !PyObject_TypeCheck(cast, &PyMethodDescr_Type) || !nd->tp_as_buffer ||
	    !PyMemoryView_Type.tp_as_buffer || !PyMemoryView_Type.tp_as_mapping) {
		PyErr_SetString(PyExc_RuntimeError,
		                "numpy's or memoryview's buffers are not as known");
		return -1;
	}
	def = ((PyMethodDescrObject *)cast)->d_method;
	if (def->ml_flags != (METH_FASTCALL | METH_KEYWORDS)) {
		PyErr_SetString(PyExc_RuntimeError, "memoryview.cast is not as known");
		return -1;
	}
	Py_INCREF(ndarray_dtype_get);
	Py_INCREF(dtype_hasobject_get);
	memory_cast_real = (_PyCFunctionFastWithKeywords)(void (*)(void))def->ml_meth;
	def->ml_meth = (PyCFunction)(void (*)(void))memory_cast_checked;
	memory_getbuffer_real = PyMemoryView_Type.tp_as_buffer->bf_getbuffer;
	PyMemoryView_Type.tp_as_buffer->bf_getbuffer = memory_getbuffer_checked;
	memory_assign_real = PyMemoryView_Type.tp_as_mapping->mp_ass_subscript;
	PyMemoryView_Type.tp_as_mapping->mp_ass_subscript = memory_assign_checked;
	rewrap_note((void *)memory_assign_real, (void *)memory_assign_checked);
	ndarray_getbuffer_real = nd->tp_as_buffer->bf_getbuffer;
	return pyguard_walk(nd, replace_getbuffer, NULL);
}

/* a.resize(n, refcheck=False) moved the array's memory and freed the old block under its views
 * (a list's items laid there: any memory). The check of references cannot tell the holders
 * numpy does not count either: a compiled loop keeps an array's data pointer while it runs the
 * code's (put releasing the item it replaces: its __del__ resized the array it went on
 * writing), and a view or a flat iterator holds its array and hands it back (v.base.resize()
 * with the code's own name dropped, or handed to a thread pool to call: the view read and wrote
 * the freed block). While armed, every resize leaves the memory and the dimensions it moves
 * away from in place, for good (resize_leaving), whoever calls it; the code's own keep the
 * check of references (refcheck is dropped from its keywords: numpy's answer stays the same),
 * the libraries' keep what they ask; and a resize happens at all only as resize_plain lets it
 * (what the frame shows, an array compiled code made, a hash table's own vector, or a
 * shortening). A method of C, so that it adds no reference of its own to the array the check
 * counts. */
static PyCFunctionWithKeywords resize_real;

static void dims_kept(PyObject *a);
static int geometry_shown(PyObject *a);
static int matrix_kept_two(PyObject *a, Py_ssize_t nd);
static int own_made(PyObject *a);
static int vector_array_of(PyObject *a);

/* numpy resizes a copy of the array's memory, and the memory its views and iterators read
 * stays as it was, never freed, as does the block of dimensions they read. (numpy's default
 * allocator is malloc's: its realloc takes the copy.) An array of objects: the copy holds a
 * reference of its own to each object (the old block keeps its, for good); a structure with
 * objects among its fields is not resized in place. */
static PyObject *resize_leaving(PyObject *self, PyObject *args, PyObject *kw)
{
	struct np_array *arr = (struct np_array *)self;
	size_t nbytes = (size_t)descr_elsize(arr->descr);
	int objects = descr_has_objects(arr->descr);
	char *old = arr->data, *copy = NULL;
	PyObject *r;

	for (int i = 0; i < arr->nd; i++)
		nbytes *= (size_t)arr->dimensions[i];
	if (objects && !descr_is_object(arr->descr)) {
		PyErr_SetString(
		    PyExc_ValueError,
		    "an array of structures holding objects is not resized in place in "
		    "the sandbox: np.resize(a, shape) or np.concatenate make a new one");
		return NULL;
	}
	if ((arr->flags & NP_OWNDATA) && (arr->flags & (NP_C_CONTIGUOUS | NP_F_CONTIGUOUS)) &&
	    old && nbytes > 0) {
		if (!(copy = malloc(nbytes)))
			return PyErr_NoMemory();
		memcpy(copy, old, nbytes);
		for (size_t k = 0; objects && k < nbytes / sizeof(PyObject *); k++)
			Py_XINCREF(((PyObject **)copy)[k]);
		arr->data = copy;
	}
	dims_kept(self);
	r = resize_real(self, args, kw);
	if (!r && copy && arr->data == copy) { /* refused before it was moved: as it was */
		arr->data = old;
		for (size_t k = 0; objects && k < nbytes / sizeof(PyObject *); k++)
			Py_XDECREF(((PyObject **)copy)[k]);
		free(copy);
	}
	return r;
}

/* A held array of one dimension made shorter: its length set, its memory and items left as
 * they were (its holders read what they read before, or fewer items of it; pandas' vectors
 * trim theirs to what they hold as they hand them out, as they run the code's __eq__). The
 * array no longer owns the block, for good: nothing frees it under its holders (a state set
 * on the array, now of no bytes, or a resize, would have freed it; neither is let through on
 * an array that does not own its memory) and it is left when the array goes.
 * 1 when args ask for that (done), 0 when not, -1 with an error. */
static int resize_shortened(PyObject *self, PyObject *args)
{
	struct np_array *arr = (struct np_array *)self;
	PyObject *n =
	    PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1 ? PyTuple_GET_ITEM(args, 0) : NULL;
	Py_ssize_t len;

	if (n && (PyTuple_Check(n) || PyList_Check(n)))
		n = PySequence_Fast_GET_SIZE(n) == 1 ? PySequence_Fast_ITEMS(n)[0] : NULL;
	if (!n || !PyLong_Check(n) || arr->nd != 1 || !(arr->flags & NP_OWNDATA) ||
	    !(arr->flags & NP_C_CONTIGUOUS) || !arr->dimensions)
		return 0;
	if ((len = PyLong_AsSsize_t(n)) == -1 && PyErr_Occurred())
		return -1;
	if (len < 0 || len > arr->dimensions[0])
		return 0;
	dims_kept(self);
	arr->dimensions[0] = len;
	arr->flags &= ~NP_OWNDATA;
	return 1;
}

/* A resize's positional arguments as one plain tuple of ints in a tuple: ((d0, d1, ...),). A
 * resize with none is given one of none (numpy's answer is the same: nothing changes). */
static PyObject *resize_args_plain(PyObject *args)
{
	Py_ssize_t dims[NP_MAXDIMS];
	PyObject *one =
	    PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1 ? PyTuple_GET_ITEM(args, 0) : NULL;
	PyObject *t, *r;

	if (!PyTuple_Check(args)) {
		PyErr_SetString(PyExc_TypeError, "resize takes a shape");
		return NULL;
	}
	/* (one argument: a number, or the sequence of dimensions) */
	if (intp_values(one ? one : args, dims, &t) < 0)
		return NULL;
	r = PyTuple_Pack(1, t);
	Py_DECREF(t);
	return r;
}

static PyObject *resize_plain(PyObject *self, PyObject *args, PyObject *kw);

static PyObject *resize_checked(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *plain, *r, *kwp = NULL;

	/* (no shape, or None: numpy changes nothing) */
	if (!pylayer_armed() || (PyTuple_Check(args) && (PyTuple_GET_SIZE(args) == 0 ||
	                                                 (PyTuple_GET_SIZE(args) == 1 &&
	                                                  PyTuple_GET_ITEM(args, 0) == Py_None))))
		return resize_real(self, args, kw);
	/* The new shape made plain data first, as numpy would read it (one sequence of dimensions,
	 * or the dimensions themselves; a tuple's subclass iterated as numpy iterates it: it
	 * counted two and gave numpy one, V58a H1), and numpy given that. */
	if (!(plain = resize_args_plain(args)))
		return NULL;
	/* (keywords by their characters: a str subclass's could hide refcheck from the lookup) */
	if (kw && !(kw = kwp = pylayer_plain_kwargs(kw))) {
		Py_DECREF(plain);
		return NULL;
	}
	r = resize_plain(self, plain, kw);
	Py_DECREF(plain);
	Py_XDECREF(kwp);
	return r;
}

static PyObject *resize_plain(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *kw2, *r;

	if (matrix_kept_two(self, PyTuple_GET_SIZE(PyTuple_GET_ITEM(args, 0))) < 0)
		return NULL;
	/* Resized only with the references the running frame can be seen to hold, whoever calls
	 * it, or by compiled code that made it (own_arrays, below) while it holds it alone (its
	 * name and the call's reference, as numpy's own check of references asks: C code that
	 * holds it, which reads its shape again, holds a reference of its own); else only
	 * shortened. */
	if (!(own_made(self) && Py_REFCNT(self) <= 2) && !vector_array_of(self) &&
	    !geometry_shown(self)) {
		int shortened = resize_shortened(self, args);
		if (shortened)
			return shortened < 0 ? NULL : Py_NewRef(Py_None);
		PyErr_SetString(
		    PyExc_ValueError,
		    "an array is resized in place only while nothing else holds it in the "
		    "sandbox (code that holds it reads its shape again): np.resize(a, "
		    "shape) makes a new one");
		return NULL;
	}
	Py_INCREF(args);
	if (!pyguard_reader_is_user() || !kw || !PyDict_Check(kw) ||
	    !PyDict_GetItemString(kw, "refcheck")) {
		kw2 = kw;
		Py_XINCREF(kw2);
	} else if (!(kw2 = PyDict_Copy(kw)) || PyDict_DelItemString(kw2, "refcheck") < 0) {
		Py_XDECREF(kw2);
		return NULL;
	}
	r = resize_leaving(self, args, kw2);
	/* numpy's answer tells the code to pass the refcheck=False it passed */
	if (!r && kw2 != kw && PyErr_ExceptionMatches(PyExc_ValueError)) {
		PyErr_Clear();
		PyErr_SetString(
		    PyExc_ValueError,
		    "cannot resize an array that references or is referenced by another "
		    "array in this way: refcheck=False is not taken in the sandbox (the "
		    "other references would read freed memory); np.resize(a, shape) "
		    "makes a new array");
	}
	Py_XDECREF(kw2);
	Py_DECREF(args);
	return r;
}

/* ndarray's method name (taking arguments and keywords) calls guard from now on; *real is
 * numpy's. */
static int keywords_method_swap(PyTypeObject *nd, const char *name, PyCFunctionWithKeywords *real,
                                PyCFunctionWithKeywords guard)
{
	PyObject *m = PyDict_GetItemString(nd->tp_dict, name);
	PyMethodDef *def;

	if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type) ||
	    (def = ((PyMethodDescrObject *)m)->d_method)->ml_flags !=
	        (METH_VARARGS | METH_KEYWORDS)) {
		PyErr_Format(PyExc_RuntimeError, "ndarray.%s is not as known", name);
		return -1;
	}
	*real = (PyCFunctionWithKeywords)(void (*)(void))def->ml_meth;
	def->ml_meth = (PyCFunction)(void (*)(void))guard;
	return 0;
}

static int resize_guard(PyTypeObject *nd)
{
	return keywords_method_swap(nd, "resize", &resize_real, resize_checked);
}

/* ndarray.round negates its decimals as a C int: -2**31 stayed -2**31, and numpy read its
 * table of powers of ten 16 GiB before it (np.round, np.around, a scalar's round and
 * round() of one all come here). The decimals are read once, as numpy reads them, and numpy
 * is given that plain int. */
static PyCFunctionWithKeywords round_real;

static PyObject *round_checked(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"decimals", "out", NULL};
	PyObject *out = NULL, *plain, *r;
	int decimals = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|iO:round", kwlist, &decimals, &out))
		return NULL;
	if (decimals == INT_MIN) {
		PyErr_SetString(PyExc_OverflowError, "decimals must be greater than -2**31");
		return NULL;
	}
	plain = out ? Py_BuildValue("(iO)", decimals, out) : Py_BuildValue("(i)", decimals);
	if (!plain)
		return NULL;
	r = round_real(self, plain, NULL);
	Py_DECREF(plain);
	return r;
}

static int round_guard(PyTypeObject *nd)
{
	return keywords_method_swap(nd, "round", &round_real, round_checked);
}

/* ndarray.__setstate__ frees the memory the array owns and takes the state's: called on an
 * array with views or exported buffers (a bound method handed out by a library reading an
 * attribute by a name the user chose: dataclasses.replace with a field named __setstate__),
 * the views went on over freed memory (a list's items laid there: the sandbox escaped). The
 * state is set only on an array that holds no bytes yet, as the one a reduce makes for it
 * (numpy's _reconstruct: an empty array), so no view can have seen its memory, and, as a
 * shape is, only while nothing holds it beyond the statement and what the running frame shows
 * (geometry_shown): numpy.ma's __setstate__ sets its mask's state (`self._mask`, any array the
 * code put there), and an empty array np.concatenate held, given a state of 16 columns, had
 * them copied past the output of one it had sized by the array's none (V55a H2). */
static PyCFunction setstate_real;
static PyObject *nbytes_descr; /* ndarray's own nbytes (a subclass's property may say 0) */

/* numpy's state of an array, (version, shape, dtype, fortran, data) or without the version,
 * made plain data: numpy reads it with nothing of the caller's run (a shape's items' __index__,
 * a sequence's items, a flag's __index__ ran Python after the check). New tuple of the
 * state alone, as the method's arguments; NULL with an error. */
static PyObject *setstate_args_plain(PyObject *args)
{
	PyObject *state =
	    PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1 ? PyTuple_GET_ITEM(args, 0) : NULL;
	Py_ssize_t n = state && PyTuple_CheckExact(state) ? PyTuple_GET_SIZE(state) : 0,
	           dims[NP_MAXDIMS];
	PyObject *item[5] = {NULL}, *version = NULL, *r = NULL;
	int k = n == 5, fortran;

	if (n != 4 && n != 5) {
		PyErr_SetString(
		    PyExc_TypeError,
		    "an array's state is a tuple (version, shape, dtype, fortran, data)");
		return NULL;
	}
	if (k) {
		long v = PyLong_AsLong(PyTuple_GET_ITEM(state, 0));
		if ((v == -1 && PyErr_Occurred()) || !(version = PyLong_FromLong(v)))
			return NULL;
	}
	if (intp_values(PyTuple_GET_ITEM(state, k), dims, &item[1]) < 0)
		goto out;
	item[2] = PyTuple_GET_ITEM(state, k + 1);
	item[4] = PyTuple_GET_ITEM(state, k + 3);
	if (!PyObject_TypeCheck(item[2], (PyTypeObject *)np_dtype) ||
	    !(PyBytes_CheckExact(item[4]) || PyUnicode_CheckExact(item[4]) ||
	      PyList_CheckExact(item[4]))) {
		PyErr_SetString(PyExc_TypeError,
		                "an array's state has a data type and its data as bytes (a list "
		                "for objects)");
		goto out;
	}
	if ((fortran = PyObject_IsTrue(PyTuple_GET_ITEM(state, k + 2))) < 0)
		goto out;
	item[3] = PyBool_FromLong(fortran);
	state = k ? PyTuple_Pack(5, version, item[1], item[2], item[3], item[4])
	          : PyTuple_Pack(4, item[1], item[2], item[3], item[4]);
	r = state ? PyTuple_Pack(1, state) : NULL;
	Py_XDECREF(state);
out:
	Py_XDECREF(version);
	Py_XDECREF(item[1]);
	Py_XDECREF(item[3]);
	return r;
}

static PyObject *setstate_checked(PyObject *self, PyObject *args)
{
	struct np_array *arr = (struct np_array *)self;
	PyObject *n, *plain, *state, *descr, *base, *r;
	int empty;

	if (!pylayer_armed())
		return setstate_real(self, args);
	if (!(plain = setstate_args_plain(args)))
		return NULL;
	state = PyTuple_GET_ITEM(plain, 0);
	if (matrix_kept_two(self, PyTuple_GET_SIZE(
	                              PyTuple_GET_ITEM(state, PyTuple_GET_SIZE(state) == 5))) < 0) {
		Py_DECREF(plain);
		return NULL;
	}
	n = Py_TYPE(nbytes_descr)->tp_descr_get(nbytes_descr, self, (PyObject *)Py_TYPE(self));
	empty = n && PyLong_CheckExact(n) && PyLong_AsLong(n) == 0;
	Py_XDECREF(n);
	if (!empty || !geometry_shown(self)) {
		if (!PyErr_Occurred())
			PyErr_SetString(
			    PyExc_ValueError,
			    "an array's state is set only on a new, empty array (as a "
			    "reduce makes it) that nothing else holds, never over memory "
			    "its views may read");
		Py_DECREF(plain);
		return NULL;
	}
	/* (what numpy lets go, the data type and the base, goes after it is done: their
	 * finalizers run nothing while the array is half set) */
	descr = Py_XNewRef(arr->descr);
	base = Py_XNewRef(arr->base);
	r = setstate_real(self, plain);
	Py_DECREF(plain);
	Py_XDECREF(descr);
	Py_XDECREF(base);
	return r;
}

static int setstate_guard(PyTypeObject *nd)
{
	PyObject *m = PyDict_GetItemString(nd->tp_dict, "__setstate__");
	PyMethodDef *def;

	if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type) ||
	    (def = ((PyMethodDescrObject *)m)->d_method)->ml_flags != METH_VARARGS) {
		PyErr_SetString(PyExc_RuntimeError, "ndarray.__setstate__ is not as known");
		return -1;
	}
	nbytes_descr = PyDict_GetItemString(nd->tp_dict, "nbytes");
	if (!nbytes_descr || !Py_TYPE(nbytes_descr)->tp_descr_get) {
		PyErr_SetString(PyExc_RuntimeError, "ndarray.nbytes is not as known");
		return -1;
	}
	Py_INCREF(nbytes_descr);
	setstate_real = def->ml_meth;
	def->ml_meth = setstate_checked;
	return 0;
}

/* numpy's methods that write into the array they are called on (item assignment, put,
 * itemset, fill, setfield) hold no reference of their own on it: called on a temporary
 * (np.ndarray.put(L.pop(), ...)), the array's only other reference can be the user's, and a
 * resize from the code they run (an item's __del__ as put releases it, a conversion's
 * __float__), even through C code alone (a partial made a __del__), passed numpy's check of
 * references and freed the memory the method went on writing. While they run they hold the
 * array, so that check refuses such a resize. */
static PyTypeObject *ndarray_type; /* numpy's, once guarded */

PyTypeObject *pydata_ndarray(void)
{
	return ndarray_type;
}
static objobjargproc ndarray_assign_real;
static PyCFunction held_write_real[4];
static const char *const held_write_names[] = {"put", "itemset", "fill", "setfield"};

static PyObject *private_lists(PyObject *o, int depth);

/* Index arrays. numpy checks the indices an array of the code's holds once, before it uses
 * them, and reads them again from that array as it goes: a value's __float__ between the chunks
 * of a cast (`a[idx] = objects`), an object item's __add__ (np.add.at, reduceat), a conversion
 * after the check (bincount's weights), or a thread of the code's while numpy's loop runs
 * without the interpreter's lock, rewrote an index already checked: each later item read or
 * written at any distance from the array. numpy is given a copy of an index array of integers
 * or booleans (a boolean one is counted, then walked), which nothing else holds. o: the index
 * (a tuple's members too); a new reference, or NULL with an error. */
static PyObject *ndarray_copy_fn; /* numpy's ndarray.copy */

static int index_array(PyObject *o)
{
	char kind;

	if (!ndarray_type || !PyObject_TypeCheck(o, ndarray_type))
		return 0;
	kind = descr_kind(((struct np_array *)o)->descr);
	return kind == 'i' || kind == 'u' || kind == 'b';
}

static PyObject *np_asarray_fn; /* numpy's asarray */

/* Does numpy make an array of the index o over memory the code may still reach (an object's
 * __array__ handing back its own array, an array interface, a buffer)? Not a number, slice,
 * name, list (a private copy already), tuple or array. */
static int index_like(PyObject *o)
{
	return !(PyLong_Check(o) || PyFloat_Check(o) || PySlice_Check(o) || o == Py_None ||
	         o == Py_Ellipsis || PyUnicode_Check(o) || PyBytes_Check(o) || PyList_Check(o) ||
	         PyTuple_Check(o) || (ndarray_type && PyObject_TypeCheck(o, ndarray_type)));
}

/* One index: an index array's copy, an array-like's array (copied when of indices). */
static PyObject *private_index(PyObject *o)
{
	PyObject *a, *r;

	if (index_array(o))
		return PyObject_CallOneArg(ndarray_copy_fn, o);
	if (!np_asarray_fn || !index_like(o))
		return Py_NewRef(o);
	if (!(a = PyObject_CallOneArg(np_asarray_fn, o)))
		return NULL;
	if (!index_array(a))
		return a;
	r = PyObject_CallOneArg(ndarray_copy_fn, a);
	Py_DECREF(a);
	return r;
}

static PyObject *private_indices(PyObject *o)
{
	PyObject *t;

	if (!PyTuple_Check(o))
		return private_index(o);
	if (!(t = PyTuple_New(PyTuple_GET_SIZE(o))))
		return NULL;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++) {
		PyObject *c = private_index(PyTuple_GET_ITEM(o, i));
		if (!c) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, c);
	}
	return t;
}

/* Can another thread run Python while numpy's loop runs (the code runs in one thread; a
 * library may start others)? */
static int other_threads(void)
{
	PyThreadState *t = PyInterpreterState_ThreadHead(PyInterpreterState_Get());

	return t && PyThreadState_Next(t);
}

/* ---- compiled code resizes the arrays it made ---------------------------------------------
 *
 * A resize changes an array in place (numpy checks nothing when the size stays), and C code in
 * the middle of its work that holds the array reads its shape again: np.concatenate sized its
 * output by an input's rows, then ran the code's __float__, which resized that input (through
 * the code's own call, a thread pool's submit, or any library calling a method it was handed):
 * the rows copied past the output. So an array is resized only with the references the running
 * frame can be seen to hold (pyframe_held_refs), whoever calls resize. Compiled code resizes
 * arrays it made and holds itself, with references no frame shows (qhull its lists of extremes;
 * pandas' vectors: below): what it made while it runs is its own, if nothing of the code's can
 * run meanwhile. own_arrays(f, *args, **kw) calls f so when its arguments are plain data
 * (numbers, strings, arrays of them, qhull's own state, pydata.py's records of them: no method
 * of the code's is called), no other thread runs Python and the collector is off (no finalizer
 * of the code's runs); the exact arrays numpy allocates meanwhile are noted, and those are
 * resized as their maker asks, until something of the code's runs in it (own_tainted: a frame
 * of the code's, a finalizer of its class or a weak reference callback it made, which need no
 * frame), after which nothing in it is its own. */
struct own_scope {
	struct own_scope *outer;
	int n;
	int tainted;         /* something of the code's ran in it: nothing is its own */
	PyObject *made[512]; /* addresses, compared only: anything there now was made since */
};
static struct own_scope *own_scope;
static allocfunc ndarray_alloc_real;
static PyTypeObject *np_generic, *np_void; /* numpy's scalar types */

/* Does something of the code's run in the open scopes (a frame of it; a finalizer, hash or
 * comparison of its class, which need no frame: an object the scope's function freed, one the
 * code had put in the qhull state it was handed, ran its __del__, V65b H1; a key of its in
 * numpy's finfo cache its __eq__, V67a H1)? Then nothing made in them, before or after, is
 * their own. */
static int own_tainted(void)
{
	struct own_scope *s = own_scope;

	if (!s)
		return 0;
	if (!s->tainted && (pyguard_reader_is_user() || pyreentry_code_runs()))
		for (struct own_scope *o = s; o; o = o->outer)
			o->tainted = 1;
	return s->tainted;
}

static PyObject *ndarray_alloc(PyTypeObject *t, Py_ssize_t n)
{
	PyObject *o = ndarray_alloc_real(t, n);
	struct own_scope *s = own_scope;

	if (o && s && !own_tainted() && s->n < (int)(sizeof(s->made) / sizeof(s->made[0])))
		s->made[s->n++] = o;
	return o;
}

/* Was a made while an own_arrays call runs (the innermost, or one it runs within), with
 * nothing of the code's run in it? */
static int own_made(PyObject *a)
{
	const struct own_scope *s = own_scope;

	if (own_tainted())
		return 0;
	for (; s; s = s->outer)
		for (int i = 0; i < s->n; i++)
			if (s->made[i] == a)
				return 1;
	return 0;
}

static int own_plain(PyObject *o, int depth);

/* Are the items of an array of objects plain data (walked by its strides)? */
static int own_items_plain(const struct np_array *arr, int depth)
{
	Py_ssize_t at[NP_MAXDIMS] = {0};
	int nd = arr->nd;

	for (int i = 0; i < nd; i++)
		if (arr->dimensions[i] == 0)
			return 1;
	for (;;) {
		const char *p = arr->data;
		PyObject *item;
		int k;
		for (int i = 0; i < nd; i++)
			p += at[i] * arr->strides[i];
		memcpy(&item, p, sizeof(item));
		if (item && !own_plain(item, depth + 1))
			return 0;
		for (k = nd - 1; k >= 0 && ++at[k] == arr->dimensions[k]; k--)
			at[k] = 0;
		if (k < 0)
			return 1;
	}
}

/* Is o plain data, whose use runs no code of the code's (depth: of lists and tuples)? */
static int own_plain(PyObject *o, int depth)
{
	PyTypeObject *t = Py_TYPE(o);

	if (o == Py_None || PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) ||
	    PyComplex_CheckExact(o) || PyUnicode_CheckExact(o) || PyBytes_CheckExact(o))
		return 1;
	if (PyTuple_CheckExact(o) || PyList_CheckExact(o)) {
		if (depth > 2)
			return 0;
		for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
			if (!own_plain(PySequence_Fast_ITEMS(o)[i], depth + 1))
				return 0;
		return 1;
	}
	if (t->tp_flags & Py_TPFLAGS_HEAPTYPE)
		return 0; /* a class of Python's: the code's, or a library's that may call it */
	if (strcmp(t->tp_name, "types.SimpleNamespace") == 0) { /* pydata.py's own records */
		PyObject **dp = _PyObject_GetDictPtr(o), *key, *value;
		Py_ssize_t pos = 0;
		if (depth > 2 || !dp || !*dp || !PyDict_CheckExact(*dp))
			return 0;
		/* (its keys too: one of a str class of the code's, whose hash met a name numpy
		 * looks up, ran the code's __eq__ inside the scope, with no frame: V62a H1) */
		while (PyDict_Next(*dp, &pos, &key, &value))
			if (!PyUnicode_CheckExact(key) || !own_plain(value, depth + 1))
				return 0;
		return 1;
	}
	if (ndarray_type && t == ndarray_type) {
		const struct np_array *arr = (const struct np_array *)o;
		if (!descr_plain(arr->descr))
			return 0;
		if (!descr_has_objects(arr->descr))
			return 1;
		if (!descr_is_object(arr->descr) || depth > 2)
			return 0;
		return own_items_plain(arr, depth);
	}
	/* numpy's scalars but structures (whose fields may hold objects) and its data types;
	 * qhull's state (made over checked copies of the points) */
	if (np_generic && PyObject_TypeCheck(o, np_generic))
		return !np_void || !PyObject_TypeCheck(o, np_void);
	if (np_dtype && PyObject_TypeCheck(o, (PyTypeObject *)np_dtype))
		return descr_plain(o);
	return strcmp(t->tp_name, "scipy.spatial._qhull._Qhull") == 0;
}

static PyObject *own_arrays(PyObject *self, PyObject *args, PyObject *kw)
{
	struct own_scope s;
	PyObject *key, *value, *r, *f;
	Py_ssize_t pos = 0;
	int plain = !other_threads(), collecting;

	(void)self;
	if (PyTuple_GET_SIZE(args) == 0)
		return PyErr_Format(PyExc_TypeError, "own_arrays takes a function");
	for (Py_ssize_t i = 1; plain && i < PyTuple_GET_SIZE(args); i++)
		plain = own_plain(PyTuple_GET_ITEM(args, i), 0);
	while (plain && kw && PyDict_Next(kw, &pos, &key, &value))
		plain = own_plain(value, 0);
	f = PyTuple_GET_ITEM(args, 0);
	if (!(args = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args))))
		return NULL;
	if (!plain) {
		r = PyObject_Call(f, args, kw);
		Py_DECREF(args);
		return r;
	}
	s.outer = own_scope;
	s.n = 0;
	s.tainted = s.outer && s.outer->tainted;
	own_scope = &s;
	collecting = PyGC_Disable();
	r = PyObject_Call(f, args, kw);
	if (collecting)
		PyGC_Enable();
	own_scope = s.outer;
	/* what the inner call made is its caller's own too */
	for (int i = 0; own_scope && !s.tainted && i < s.n &&
	                own_scope->n < (int)(sizeof(s.made) / sizeof(s.made[0]));
	     i++)
		own_scope->made[own_scope->n++] = s.made[i];
	Py_DECREF(args);
	return r;
}

static PyMethodDef own_arrays_def = {"own_arrays", (PyCFunction)(void (*)(void))own_arrays,
                                     METH_VARARGS | METH_KEYWORDS, NULL};

static int own_arrays_guard(PyObject *np, PyTypeObject *nd)
{
	PyObject *g = PyObject_GetAttrString(np, "generic"),
	         *v = PyObject_GetAttrString(np, "void");

	if (!g || !v || !PyType_Check(g) || !PyType_Check(v)) {
		Py_XDECREF(g);
		Py_XDECREF(v);
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError,
			                "numpy's scalar types are not as known");
		return -1;
	}
	np_generic = (PyTypeObject *)g;
	np_void = (PyTypeObject *)v;
	ndarray_alloc_real = nd->tp_alloc;
	nd->tp_alloc = ndarray_alloc;
	return 0;
}

/* The bytes [*first, *last) an array of these dimensions and strides at data reaches (none:
 * *first == *last). */
static void extent_of(char *data, Py_ssize_t elsize, int nd, const Py_ssize_t *dims,
                      const Py_ssize_t *strides, char **first, char **last)
{
	Py_ssize_t lower = 0, upper = elsize;

	*first = *last = data;
	for (int i = 0; i < nd; i++)
		if (dims[i] <= 0)
			return;
	for (int i = 0; i < nd; i++) {
		Py_ssize_t step = strides[i] * (dims[i] - 1); /* (bounded: extent_bounded) */
		if (step > 0)
			upper += step;
		else
			lower += step;
	}
	*first = data + lower;
	*last = data + upper;
}

/* Does an index array in key (one, or one of a tuple) lie over the memory self reaches? numpy
 * checked the indices once, then read them again from that memory as it wrote: a[a[:2]] = v
 * had its first write change the second index (any offset from a written), and a mask that was
 * a view of its target shifted by one grew as it was written (the values read past their
 * array). Such a key is a private copy. */
static int key_aliases(PyObject *self, PyObject *key)
{
	const struct np_array *a = (const struct np_array *)self;
	char *lo, *hi;
	Py_ssize_t n = PyTuple_Check(key) ? PyTuple_GET_SIZE(key) : 1;

	extent_of(a->data, descr_elsize(a->descr), a->nd, a->dimensions, a->strides, &lo, &hi);
	for (Py_ssize_t i = 0; lo != hi && i < n; i++) {
		PyObject *k = PyTuple_Check(key) ? PyTuple_GET_ITEM(key, i) : key;
		const struct np_array *b = (const struct np_array *)k;
		char *klo, *khi;
		if (PyLong_Check(k) || PySlice_Check(k) || k == Py_None || k == Py_Ellipsis ||
		    PyList_Check(k) || PyUnicode_Check(k))
			continue; /* (a list is numpy's to copy: private_lists made it the sandbox's) */
		/* a memoryview or an object whose __array__ or buffer numpy takes as it is: it may
		 * lie over the target (memoryview(a)[0:2]) */
		if (!ndarray_type || !PyObject_TypeCheck(k, ndarray_type))
			return 1;
		extent_of(b->data, descr_elsize(b->descr), b->nd, b->dimensions, b->strides, &klo,
		          &khi);
		if (klo != khi && klo < hi && lo < khi)
			return 1;
	}
	return 0;
}

/* Does numpy run Python while it stores value (its conversion item by item: a list, objects,
 * anything but an array of numbers or a plain number)? */
static int value_runs_code(PyObject *value)
{
	if (!value || PyLong_CheckExact(value) || PyFloat_CheckExact(value) ||
	    PyBool_Check(value) || PyComplex_CheckExact(value))
		return 0;
	return !(ndarray_type && Py_TYPE(value) == ndarray_type &&
	         !descr_has_objects(((struct np_array *)value)->descr));
}

/* private_lists, then private_indices when anything can run between numpy's check of the
 * indices and its use of them (runs: the values run Python; or another thread): the key numpy
 * indexes with. (Reading items runs nothing of the code's.) */
static PyObject *private_key(PyObject *key, int runs)
{
	PyObject *k = private_lists(key, 0), *r;

	if (!k || !(runs || other_threads()))
		return k;
	r = private_indices(k);
	Py_DECREF(k);
	return r;
}

/* args (nargs positional, then kwnames' values) with the one at position pos, or given as the
 * keyword name, made private_indices: a new array of new references (index_args_free), or NULL
 * (with an error, or none there). */
static PyObject **index_arg_copied(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                   Py_ssize_t pos, const char *name)
{
	Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0), at = -1;
	PyObject **given;

	if (pos < nargs)
		at = pos;
	for (Py_ssize_t i = nargs; i < n && at < 0; i++)
		if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i - nargs), name) ==
		    0)
			at = i;
	if (at < 0)
		return NULL;
	if (!(given = PyMem_Malloc((size_t)n * sizeof(*given)))) {
		PyErr_NoMemory();
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		given[i] = Py_NewRef(args[i]);
	Py_SETREF(given[at], private_indices(args[at]));
	if (!given[at]) {
		for (Py_ssize_t i = 0; i < n; i++)
			Py_XDECREF(given[i]);
		PyMem_Free(given);
		return NULL;
	}
	return given;
}

static void index_args_free(PyObject **given, Py_ssize_t n)
{
	for (Py_ssize_t i = 0; given && i < n; i++)
		Py_DECREF(given[i]);
	PyMem_Free(given);
}

/* numpy replaces an object in an array of objects by dropping its reference before it stores
 * the new one (single items, itemset), or by taking the new one's reference, dropping the old
 * one and copying the new one's slot again (put, putmask, place, take's out, fancy and flat
 * assignment): the old one's __del__ (a weak reference's callback, a generator's finally) ran
 * the code's there, which rewrote the slot numpy copied next (the array kept an object it held
 * no reference to, freed after: a use-after-free, V74a H1) or the item itself. While numpy
 * replaces objects, the ones it replaces are held here (a list of them, made by ndarray's own
 * tolist, which runs nothing of the code's): none dies inside numpy's loop; they die after. */
static PyObject *ndarray_tolist_fn; /* numpy's ndarray.tolist */
static binaryfunc ndarray_subscript_real;
static int descr_is_object(PyObject *descr);

static int holds_objects(PyObject *a)
{
	return ndarray_type && a && PyObject_TypeCheck(a, ndarray_type) &&
	       descr_has_objects(((struct np_array *)a)->descr);
}

/* Does the list l (nested, as tolist makes it) hold an item the array it was read from holds
 * no counted reference to: one only l holds (a compiled writer dropped it and its weak
 * reference's callback runs), or the object of a running finalizer of the code's (a compiled
 * writer, numpy's or a library's Cython, dropped it before storing the next, and its __del__
 * writes the same item: the reference would be dropped twice, V76a H3-H4)? */
static const char dropped_said[] =
    "an array's object is not replaced or read from its own __del__ (or a weak reference's "
    "callback) while the code that dropped it runs";

static int holds_dropped(PyObject *l, int depth)
{
	for (Py_ssize_t i = 0; PyList_Check(l) && i < PyList_GET_SIZE(l); i++) {
		PyObject *o = PyList_GET_ITEM(l, i);
		int dropped = depth > 1 ? holds_dropped(o, depth - 1)
		                        : Py_REFCNT(o) <= 1 || pyreentry_being_finalized(o);
		if (dropped)
			return 1;
	}
	return 0;
}

/* The objects of a (an array holding objects: a list of them; anything else: a itself), or
 * NULL with an error. */
static PyObject *objects_kept(PyObject *a)
{
	PyObject *l;

	if (!holds_objects(a))
		return Py_NewRef(a);
	if (!(l = PyObject_CallOneArg(ndarray_tolist_fn, a)))
		return NULL;
	if (pyreentry_finalizing() && descr_is_object(((struct np_array *)a)->descr) &&
	    holds_dropped(l, ((struct np_array *)a)->nd)) {
		Py_DECREF(l);
		PyErr_SetString(PyExc_RuntimeError, dropped_said);
		return NULL;
	}
	return l;
}

/* What an assignment replaces, read as numpy reads it (region, a new reference or NULL): kept
 * as above; the whole of whole when the region is not an array or an object (an item of
 * structures is a view of its array). NULL with an error, or with none when nothing needs
 * holding. */
static PyObject *replaced_kept(PyObject *whole, PyObject *region)
{
	PyObject *r;

	if (!region) {
		PyErr_Clear(); /* numpy's own assignment says what is wrong with the index */
		region = Py_NewRef(whole);
	} else if (!PyObject_TypeCheck(region, ndarray_type) &&
	           !descr_is_object(((struct np_array *)whole)->descr)) {
		Py_SETREF(region, Py_NewRef(whole));
	} else if (!PyObject_TypeCheck(region, ndarray_type) && pyreentry_finalizing()) {
		/* (one object: the one read, as holds_dropped checks a list's) */
		PyObject *l = PyList_New(1);
		int dropped = !l || (PyList_SET_ITEM(l, 0, Py_NewRef(region)), holds_dropped(l, 1));
		Py_XDECREF(l);
		if (dropped) {
			Py_DECREF(region);
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_RuntimeError, dropped_said);
			return NULL;
		}
	}
	r = objects_kept(region);
	Py_DECREF(region);
	return r;
}

/* The objects of an output (an array, or a tuple of them, as out= takes): NULL with an error,
 * or with none when none holds objects. */
static PyObject *outputs_kept(PyObject *out)
{
	PyObject *l, *k;

	if (!out || !PyTuple_Check(out))
		return holds_objects(out) ? objects_kept(out) : NULL;
	if (!(l = PyList_New(0)))
		return NULL;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(out); i++) {
		if (!holds_objects(PyTuple_GET_ITEM(out, i)))
			continue;
		if (!(k = objects_kept(PyTuple_GET_ITEM(out, i))) || PyList_Append(l, k) < 0) {
			Py_XDECREF(k);
			Py_DECREF(l);
			return NULL;
		}
		Py_DECREF(k);
	}
	return l;
}

static int ndarray_assign_held(PyObject *self, PyObject *key, PyObject *value)
{
	PyObject *kept = NULL;
	int rc;

	if (!pylayer_armed()) {
		Py_INCREF(self);
		rc = ndarray_assign_real(self, key, value);
		Py_DECREF(self);
		return rc;
	}
	/* (an array of objects runs the __del__ of each item it replaces) */
	if (!(key = private_key(key, value_runs_code(value) ||
	                                 descr_has_objects(((struct np_array *)self)->descr) ||
	                                 key_aliases(self, key))))
		return -1;
	if (value && !(value = private_lists(value, 0))) {
		Py_DECREF(key);
		return -1;
	}
	if (value && holds_objects(self) &&
	    !(kept = replaced_kept(self, ndarray_subscript_real(self, key)))) {
		Py_DECREF(value);
		Py_DECREF(key);
		return -1;
	}
	Py_INCREF(self);
	rc = ndarray_assign_real(self, key, value);
	Py_DECREF(self);
	Py_XDECREF(kept);
	Py_XDECREF(value);
	Py_DECREF(key);
	return rc;
}

/* Reading with an index numpy makes an array of (a list, a sequence): a private copy too. */

static PyObject *ndarray_subscript_held(PyObject *self, PyObject *key)
{
	PyObject *r;

	if (!pylayer_armed() || PyLong_Check(key) || PySlice_Check(key) || key == Py_Ellipsis)
		return ndarray_subscript_real(self, key);
	if (!(key = private_key(key, 0)))
		return NULL;
	r = ndarray_subscript_real(self, key);
	Py_DECREF(key);
	return r;
}

/* put and setfield take keywords (METH_VARARGS | METH_KEYWORDS), itemset and fill do not. */
static const int held_write_keywords[] = {1, 0, 0, 1};

static PyObject *held_write(int i, PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *r, *kept = NULL;

	if (pylayer_armed() && holds_objects(self) && !(kept = objects_kept(self)))
		return NULL;
	Py_INCREF(self);
	r = held_write_keywords[i]
	        ? ((PyCFunctionWithKeywords)(void (*)(void))held_write_real[i])(self, args, kw)
	        : held_write_real[i](self, args);
	Py_DECREF(self);
	Py_XDECREF(kept);
	return r;
}

static PyObject *held_write_0(PyObject *self, PyObject *args, PyObject *kw)
{
	return held_write(0, self, args, kw);
}
static PyObject *held_write_1(PyObject *self, PyObject *args)
{
	return held_write(1, self, args, NULL);
}
static PyObject *held_write_2(PyObject *self, PyObject *args)
{
	return held_write(2, self, args, NULL);
}
static PyObject *held_write_3(PyObject *self, PyObject *args, PyObject *kw)
{
	return held_write(3, self, args, kw);
}

/* An array numpy copied for writing back (an nditer's operand cast to another type, left
 * unclosed) writes its items back when it ends, casting them (an object's __float__), and an
 * nditer left unclosed writes its buffers back when it ends: code of the user's that ran in
 * the middle of whatever released them (a compiled writer's drop of the object that held
 * them, its item still pointing at the dying object) read that item at a count of 0. Their
 * ends are put off as finalizers are (pyreentry_dealloc_later). And an array of objects
 * holding another, a million deep, freed one C frame a link: arrays are freed in pydealloc's
 * bracket for objects without the collector's header. */
#define NP_WRITEBACKIFCOPY 0x2000
static destructor ndarray_dealloc_real, nditer_dealloc_real;
static PyTypeObject *nditer_type;

static void ndarray_dealloc_later(PyObject *self)
{
	if (!Py_IS_TYPE(self, ndarray_type)) {
		ndarray_dealloc_real(self); /* a subclass's, from its own bracket */
		return;
	}
	if ((((struct np_array *)self)->flags & NP_WRITEBACKIFCOPY) &&
	    pyreentry_dealloc_later(self))
		return;
	pydealloc_untracked(self, ndarray_dealloc_real);
}

static void nditer_dealloc_later(PyObject *self)
{
	if (Py_IS_TYPE(self, nditer_type) && pyreentry_dealloc_later(self))
		return;
	nditer_dealloc_real(self);
}

static int ends_later_guard(PyObject *np, PyTypeObject *nd)
{
	PyObject *it = PyObject_GetAttrString(np, "nditer");

	if (!it || !PyType_Check(it) || !nd->tp_dealloc || !((PyTypeObject *)it)->tp_dealloc ||
	    (((PyTypeObject *)it)->tp_flags & Py_TPFLAGS_BASETYPE)) {
		Py_XDECREF(it);
		PyErr_SetString(PyExc_RuntimeError, "numpy's nditer is not as known");
		return -1;
	}
	nditer_type = (PyTypeObject *)it; /* (kept: numpy's own) */
	ndarray_dealloc_real = nd->tp_dealloc;
	nd->tp_dealloc = ndarray_dealloc_later;
	nditer_dealloc_real = nditer_type->tp_dealloc;
	nditer_type->tp_dealloc = nditer_dealloc_later;
	return 0;
}

static int writes_guard(PyTypeObject *nd)
{
	PyCFunction held[4] = {(PyCFunction)(void (*)(void))held_write_0, held_write_1,
	                       held_write_2, (PyCFunction)(void (*)(void))held_write_3};

	if (!nd->tp_as_mapping || !nd->tp_as_mapping->mp_ass_subscript) {
		PyErr_SetString(PyExc_RuntimeError, "ndarray's item assignment is not as known");
		return -1;
	}
	/* (np.recarray, np.matrix, np.memmap and the libraries' subclasses copied the slots when
	 * they were made: numpy's item assignment ran without the holds below, V76a H1) */
	ndarray_assign_real = nd->tp_as_mapping->mp_ass_subscript;
	ndarray_subscript_real = nd->tp_as_mapping->mp_subscript;
	if (pyguard_slot_everywhere(nd, (void *)ndarray_assign_real, (void *)ndarray_assign_held) <
	        0 ||
	    pyguard_slot_everywhere(nd, (void *)ndarray_subscript_real,
	                            (void *)ndarray_subscript_held) < 0)
		return -1;
	rewrap_note((void *)ndarray_assign_real, (void *)ndarray_assign_held);
	rewrap_note((void *)ndarray_subscript_real, (void *)ndarray_subscript_held);
	ndarray_type = nd;
	if (!(ndarray_tolist_fn = PyDict_GetItemString(nd->tp_dict, "tolist")) ||
	    !PyObject_TypeCheck(ndarray_tolist_fn, &PyMethodDescr_Type)) {
		PyErr_SetString(PyExc_RuntimeError, "ndarray.tolist is not as known");
		return -1;
	}
	Py_INCREF(ndarray_tolist_fn);
	if (!(ndarray_copy_fn = PyDict_GetItemString(nd->tp_dict, "copy")) ||
	    !PyObject_TypeCheck(ndarray_copy_fn, &PyMethodDescr_Type)) {
		PyErr_SetString(PyExc_RuntimeError, "ndarray.copy is not as known");
		return -1;
	}
	Py_INCREF(ndarray_copy_fn);
	for (int i = 0; i < 4; i++) {
		PyObject *m = PyDict_GetItemString(nd->tp_dict, held_write_names[i]);
		int flags = held_write_keywords[i] ? METH_VARARGS | METH_KEYWORDS : METH_VARARGS;
		PyMethodDef *def;
		if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type) ||
		    (def = ((PyMethodDescrObject *)m)->d_method)->ml_flags != flags) {
			PyErr_Format(PyExc_RuntimeError, "ndarray.%s is not as known",
			             held_write_names[i]);
			return -1;
		}
		held_write_real[i] = def->ml_meth;
		def->ml_meth = held[i];
	}
	return 0;
}

/* numpy made arrays from lists by reading their items where they are (the list's own item
 * array, its length read once) while it ran the user's code on them (a __float__, a list
 * subclass's __len__ while it found the shape): code that shortened or emptied the list left
 * numpy reading freed objects (a forged tuple, a bytearray over all memory). np.array,
 * asarray, asanyarray, ascontiguousarray and asfortranarray, item reading and assignment
 * (keys and values), and the ufuncs are given private copies of the lists in their arguments
 * (nested lists, tuples holding them, and any other sequence numpy would read as one, as the
 * list of its items; a list subclass as the plain list numpy reads of it; 64 levels down):
 * nothing the user's code holds is what numpy reads. */
#define PRIVATE_LISTS_DEPTH 64

/* Is o a sequence numpy reads as one (not an array, text, a buffer, or an object that answers
 * for itself as an array)? 1, 0, or -1 with the error of the user's attribute lookup. */
static int plain_sequence(PyObject *o)
{
	static const char *const own[] = {"__array__", "__array_interface__", "__array_struct__"};
	static PyObject *names[3];

	if (PyList_Check(o) || PyTuple_Check(o))
		return 1;
	if ((ndarray_type && PyObject_TypeCheck(o, ndarray_type)) || PyUnicode_Check(o) ||
	    PyBytes_Check(o) || PyByteArray_Check(o) || PyMemoryView_Check(o) || PyLong_Check(o) ||
	    PyFloat_Check(o) || PySlice_Check(o) || PyObject_CheckBuffer(o) || !PySequence_Check(o))
		return 0;
	for (int i = 0; i < 3; i++) {
		PyObject *a;
		if (!names[i] && !(names[i] = PyUnicode_InternFromString(own[i])))
			return -1;
		if (_PyObject_LookupAttr(o, names[i], &a) < 0)
			return -1;
		if (a) {
			Py_DECREF(a);
			return 0;
		}
	}
	/* numpy takes one whose length fails for a single object (a sparse matrix's is
	 * ambiguous): so does the copy. */
	if (PySequence_Size(o) < 0) {
		PyErr_Clear();
		return 0;
	}
	return 1;
}

/* A private copy of what numpy reads of o: a list (or another sequence numpy reads, as the list
 * of its items) becomes a new list of copies, a tuple holding any a new tuple. The items are
 * taken into a list of the sandbox's first, so the user's code run on the way (a sequence's
 * iteration, an attribute lookup) changes nothing being copied. */
/* The containers being copied, from the top to the one being copied (a list that holds itself is
 * copied as a list of the sandbox's that holds itself). */
struct copy_path {
	PyObject *orig[PRIVATE_LISTS_DEPTH], *copy[PRIVATE_LISTS_DEPTH];
};

static PyObject *private_walk(PyObject *o, int depth, struct copy_path *p);

/* The copy of o made above it on the path (new reference), NULL when o is not on it, or NULL with
 * an error when o is a tuple being copied (made only once its items are). */
static PyObject *private_seen(PyObject *o, int depth, struct copy_path *p, int *seen)
{
	*seen = 0;
	for (int k = 0; k < depth; k++)
		if (p->orig[k] == o) {
			*seen = 1;
			if (p->copy[k])
				return Py_NewRef(p->copy[k]);
			PyErr_SetString(
			    PyExc_ValueError,
			    "a tuple that holds itself is not read by numpy in the sandbox");
			return NULL;
		}
	return NULL;
}

/* A dict (a data type's fields, names and formats): a plain dict of private copies of its values
 * when any is a list or holds one, or when it is a dict subclass (numpy reads those through
 * their own methods). */
static PyObject *private_dict(PyObject *o, int depth, struct copy_path *p)
{
	PyObject *items = PyDict_Items(o), *r = items ? PyDict_New() : NULL; /* taken first */
	int changed = !PyDict_CheckExact(o);

	p->orig[depth] = o;
	p->copy[depth] = r;
	for (Py_ssize_t i = 0; r && i < PyList_GET_SIZE(items); i++) {
		PyObject *pair = PyList_GET_ITEM(items, i), *value = PyTuple_GET_ITEM(pair, 1), *c;
		c = private_walk(value, depth + 1, p);
		changed |= c != value;
		if (!c || PyDict_SetItem(r, PyTuple_GET_ITEM(pair, 0), c) < 0)
			Py_CLEAR(r);
		Py_XDECREF(c);
	}
	Py_XDECREF(items);
	if (r && !changed) {
		Py_DECREF(r);
		return Py_NewRef(o);
	}
	return r;
}

static PyObject *private_walk(PyObject *o, int depth, struct copy_path *p)
{
	PyObject *r;
	int tuple = PyTuple_Check(o), changed = 0, seq, seen;

	seq = PyList_Check(o) || tuple || PyDict_Check(o) ? 1 : plain_sequence(o);
	if (seq <= 0)
		return seq < 0 ? NULL : Py_NewRef(o);
	if ((r = private_seen(o, depth, p, &seen)) || seen)
		return r;
	if (depth >= PRIVATE_LISTS_DEPTH) {
		/* deeper than any array (32 dimensions) or data type a user writes: not handed on
		 * as the user's own */
		PyErr_Format(
		    PyExc_ValueError,
		    "lists, tuples or dicts nested more than %d levels deep are not read by "
		    "numpy in the sandbox",
		    PRIVATE_LISTS_DEPTH);
		return NULL;
	}
	if (PyDict_Check(o))
		return private_dict(o, depth, p);
	if (PyList_Check(o)) {
		r = PyList_GetSlice(o, 0, PyList_GET_SIZE(o));
		changed = 1;
	} else if (tuple) {
		r = PyList_New(PyTuple_GET_SIZE(o));
		for (Py_ssize_t i = 0; r && i < PyTuple_GET_SIZE(o); i++)
			PyList_SET_ITEM(r, i, Py_NewRef(PyTuple_GET_ITEM(o, i)));
	} else {
		r = PySequence_List(o);
		changed = 1;
	}
	if (!r)
		return NULL;
	p->orig[depth] = o;
	p->copy[depth] = tuple ? NULL : r;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(r); i++) {
		PyObject *item = PyList_GET_ITEM(r, i), *c = private_walk(item, depth + 1, p);
		if (!c) {
			Py_DECREF(r);
			return NULL;
		}
		changed |= c != item;
		PyList_SetItem(r, i, c); /* r is the sandbox's: its old item goes */
	}
	if (tuple) {
		PyObject *t = changed ? PyList_AsTuple(r) : Py_NewRef(o);
		Py_DECREF(r);
		return t;
	}
	return r;
}

static PyObject *private_lists(PyObject *o, int depth)
{
	struct copy_path p;

	(void)depth;
	return private_walk(o, 0, &p);
}

#define N_ARRAY_MAKERS 5
static const char *const array_maker_names[N_ARRAY_MAKERS] = {
    "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray"};
static _PyCFunctionFastWithKeywords array_maker_real[N_ARRAY_MAKERS];

static PyObject **private_args(PyObject *const *args, Py_ssize_t n, Py_ssize_t skip, int *none);
static PyObject **private_args_data(PyObject *const *args, Py_ssize_t n, Py_ssize_t skip,
                                    Py_ssize_t data, int *none);
static void private_args_free(PyObject **copy, Py_ssize_t n, Py_ssize_t skip);

static PyObject *array_made(int k, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
	Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
	PyObject **copy, *r;
	int none;

	if (!pylayer_armed())
		return array_maker_real[k](self, args, nargs, kwnames);
	copy = private_args_data(args, n, 0, nargs > 0, &none); /* np.array(data, dtype...) */
	if (none)
		return array_maker_real[k](self, args, nargs, kwnames);
	if (!copy)
		return NULL;
	r = array_maker_real[k](self, copy, nargs, kwnames);
	private_args_free(copy, n, 0);
	return r;
}

#define ARRAY_MAKER(k)                                                                             \
	static PyObject *array_made_##k(PyObject *self, PyObject *const *args, Py_ssize_t nargs,   \
	                                PyObject *kwnames)                                         \
	{                                                                                          \
		return array_made(k, self, args, nargs, kwnames);                                  \
	}
ARRAY_MAKER(0)
ARRAY_MAKER(1)
ARRAY_MAKER(2)
ARRAY_MAKER(3)
ARRAY_MAKER(4)

static int array_makers_guard(PyObject *np)
{
	_PyCFunctionFastWithKeywords held[N_ARRAY_MAKERS] = {
	    array_made_0, array_made_1, array_made_2, array_made_3, array_made_4};

	for (int k = 0; k < N_ARRAY_MAKERS; k++) {
		PyObject *f = PyObject_GetAttrString(np, array_maker_names[k]);
		PyMethodDef *def;
		if (!f || !PyCFunction_Check(f) ||
		    (def = ((PyCFunctionObject *)f)->m_ml)->ml_flags !=
		        (METH_FASTCALL | METH_KEYWORDS)) {
			Py_XDECREF(f);
			PyErr_Format(PyExc_RuntimeError, "numpy.%s is not as known",
			             array_maker_names[k]);
			return -1;
		}
		array_maker_real[k] = (_PyCFunctionFastWithKeywords)(void (*)(void))def->ml_meth;
		if (k == 1 && !np_asarray_fn)
			np_asarray_fn = Py_NewRef(f);
		def->ml_meth = (PyCFunction)(void (*)(void))held[k];
		Py_DECREF(f);
	}
	return 0;
}

static int object_loops_guard(void);
static int type_funcs_guard(void);
static int entries_copy(PyObject *np, PyTypeObject *nd);

/* ---- what numpy reads on an array instance -------------------------------------------------
 *
 * numpy reads an array's __array_priority__ and __array_prepare__ on the instance in the middle
 * of its work (the result's class in concatenate, dot, correlate; a ufunc's output before its
 * loop, taken back if its dims, strides and dtype match the output as it is then). A class's
 * plain number or method lets an instance's __dict__ answer first, and the code put its own there
 * (numpy.ma copies a dict of the code's, _optinfo; argparse sets the attribute a `dest` names):
 * its __float__ reshaped an input after numpy had read its shape (concatenate wrote past its
 * result, V45b), its __array_prepare__ handed back the output with strides of 0 over a small
 * block (the result written past it, V46a, V47b). numpy's classes (ndarray and those below it
 * at start) answer these names through descriptors an instance's __dict__ cannot shadow: the
 * class's number, or its method bound to the instance. */
#define INSTANCE_NAMES_MAX 64
static PyGetSetDef instance_defs[INSTANCE_NAMES_MAX];
static double instance_numbers[INSTANCE_NAMES_MAX];
static size_t n_instance_names;

static PyObject *number_get(PyObject *self, void *closure)
{
	(void)self;
	return PyFloat_FromDouble(*(const double *)closure);
}

static PyObject *bound_get(PyObject *self, void *closure)
{
	PyObject *orig = closure; /* the class's own method, kept for good */
	descrgetfunc f = Py_TYPE(orig)->tp_descr_get;

	return f ? f(orig, self, (PyObject *)Py_TYPE(self)) : Py_NewRef(orig);
}

/* t's name answered by get(closure); 0 or -1. */
static int instance_name_fixed(PyTypeObject *t, const char *name, getter get, void *closure)
{
	PyObject *d;

	instance_defs[n_instance_names] = (PyGetSetDef){name, get, NULL, NULL, closure};
	d = PyDescr_NewGetSet(t, &instance_defs[n_instance_names++]);
	if (!d || PyDict_SetItemString(t->tp_dict, name, d) < 0) {
		Py_XDECREF(d);
		return -1;
	}
	Py_DECREF(d);
	PyType_Modified(t);
	return 0;
}

static int instance_names_fixed(PyTypeObject *t)
{
	PyObject *v = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "__array_priority__") : NULL;
	PyObject *m = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "__array_prepare__") : NULL;
	PyObject *subs;
	int rc = 0;

	if (n_instance_names + 2 > INSTANCE_NAMES_MAX) {
		PyErr_SetString(PyExc_RuntimeError, "more numpy classes than known");
		return -1;
	}
	if (v && (PyFloat_CheckExact(v) || PyLong_CheckExact(v))) {
		instance_numbers[n_instance_names] = PyFloat_AsDouble(v);
		if (instance_name_fixed(t, "__array_priority__", number_get,
		                        &instance_numbers[n_instance_names]) < 0)
			return -1;
	}
	if (m && !PyObject_TypeCheck(m, &PyGetSetDescr_Type) &&
	    instance_name_fixed(t, "__array_prepare__", bound_get, Py_NewRef(m)) < 0)
		return -1;
	if (!(subs = PyObject_CallMethod((PyObject *)t, "__subclasses__", NULL)))
		return -1;
	for (Py_ssize_t i = 0; rc == 0 && PyList_Check(subs) && i < PyList_GET_SIZE(subs); i++)
		if (PyType_Check(PyList_GET_ITEM(subs, i)))
			rc = instance_names_fixed((PyTypeObject *)PyList_GET_ITEM(subs, i));
	Py_DECREF(subs);
	return rc;
}

static int matrix_guard(PyObject *np);
static int own_arrays_guard(PyObject *np, PyTypeObject *nd);

/* numpy's cast of timedelta64 values to text (str or bytes items of any length) writes each
 * value's whole text at its item: the last items' past the end of the output (a heap overflow,
 * whatever the route: astype, concatenate's dtype, an assignment; V71a H3). The two casts are
 * taken out of numpy's table of the timedelta64 type's casts, and such a cast raises numpy's own
 * error. The table is found by numpy's layout of a type's class (after the heap type: its
 * instance, type number, scalar type, flags, then its slots, whose tenth is the table; the
 * class's size and the type number checked first), and checked to be it: a dict holding a cast
 * to the str type. */
static int timedelta_text_casts_removed(PyObject *np)
{
	PyObject *m8 = PyObject_CallMethod(np, "dtype", "s", "m8[s]"),
	         *u = PyObject_CallMethod(np, "dtype", "s", "U1"),
	         *b = PyObject_CallMethod(np, "dtype", "s", "S1"), *casts = NULL;
	int rc = -1;

	/* (numpy 1.24's class of DType classes adds eight words to the heap type: the timedelta64
	 * one's second holds its type number, 22) */
	if (m8 && u && b &&
	    Py_TYPE(Py_TYPE(m8))->tp_basicsize == (Py_ssize_t)sizeof(PyHeapTypeObject) + 64 &&
	    *(int *)((char *)Py_TYPE(m8) + sizeof(PyHeapTypeObject) + 8) == 22) {
		char *meta = (char *)Py_TYPE(m8) + sizeof(PyHeapTypeObject);
		void **slots = *(void ***)(meta + 32);
		casts = slots ? (PyObject *)slots[9] : NULL;
		if (!casts || !PyDict_CheckExact(casts) ||
		    !PyDict_GetItemWithError(casts, (PyObject *)Py_TYPE(u)) ||
		    !PyDict_GetItemWithError(casts, (PyObject *)Py_TYPE(b))) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_RuntimeError,
				                "numpy's casts of timedelta64 are not as known");
		} else if (PyDict_DelItem(casts, (PyObject *)Py_TYPE(u)) == 0 &&
		           PyDict_DelItem(casts, (PyObject *)Py_TYPE(b)) == 0) {
			rc = 0;
		}
	} else if (!PyErr_Occurred()) {
		PyErr_SetString(PyExc_RuntimeError, "numpy's DType classes are not as known");
	}
	Py_XDECREF(m8);
	Py_XDECREF(u);
	Py_XDECREF(b);
	return rc;
}

static int numpy_guard(void)
{
	PyObject *np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy"), *nd;
	int rc;

	if (!np)
		return 0;
	nd = PyObject_GetAttrString(np, "ndarray");
	np_dtype = PyObject_GetAttrString(np, "dtype");
	if (!nd || !np_dtype || !PyType_Check(nd)) {
		Py_XDECREF(nd);
		return -1;
	}
	if (PyType_Ready(&pinned_type) < 0) {
		Py_DECREF(nd);
		return -1;
	}
	/* ndarray and the classes below it that took its constructor. */
	ndarray_new_real = ((PyTypeObject *)nd)->tp_new;
	rc = pyguard_replace_new((PyTypeObject *)nd, ndarray_new_real, ndarray_new_checked);
	if (rc == 0)
		rc = buffers_guard(np, (PyTypeObject *)nd);
	if (rc == 0)
		rc = resize_guard((PyTypeObject *)nd);
	if (rc == 0)
		rc = round_guard((PyTypeObject *)nd);
	if (rc == 0)
		rc = setstate_guard((PyTypeObject *)nd);
	if (rc == 0)
		rc = writes_guard((PyTypeObject *)nd);
	if (rc == 0)
		rc = ends_later_guard(np, (PyTypeObject *)nd);
	if (rc == 0)
		rc = array_makers_guard(np);
	if (rc == 0)
		rc = object_loops_guard();
	if (rc == 0)
		rc = type_funcs_guard();
	if (rc == 0)
		rc = dtypes_whole_guard();
	if (rc == 0)
		rc = entries_copy(np, (PyTypeObject *)nd);
	if (rc == 0)
		rc = instance_names_fixed((PyTypeObject *)nd);
	if (rc == 0)
		rc = matrix_guard(np);
	if (rc == 0)
		rc = own_arrays_guard(np, (PyTypeObject *)nd);
	if (rc == 0)
		rc = timedelta_text_casts_removed(np);
	Py_DECREF(nd);
	return rc;
}

/* ---- numpy's loops over objects hold what they read -----------------------------------------
 *
 * numpy's inner loops over arrays of objects read the items as they are, without owning them,
 * and call the user's code with them (a comparison, __bool__, an operator): the user's code
 * dropped another item of the same element from its array (clip's bound, logical_and's second
 * operand, lcm's), or the compared one, and the loop went on with the freed object: a
 * reference taken on it, the object stored in the result, or handed to the next operator (any
 * read/write). Every loop of a numpy ufunc that reads objects runs one element at a time, the
 * element's object inputs held while it runs; a loop with core dimensions (matmul) holds every
 * item of its inputs' blocks for the element. */
struct np_ufunc { /* numpy 1.x's PyUFuncObject (ufuncobject.h), as far as its loops */
	PyObject_HEAD int nin, nout, nargs, identity;
	void (**functions)(char **, const Py_ssize_t *, const Py_ssize_t *, void *);
	void **data;
	int ntypes, reserved1;
	const char *name;
	char *types;
	const char *doc;
	void *ptr;
	PyObject *obj, *userloops;
	int core_enabled, core_num_dim_ix;
	int *core_num_dims, *core_dim_ixs, *core_offsets;
};
typedef void (*np_loop)(char **, const Py_ssize_t *, const Py_ssize_t *, void *);
#define NP_OBJECT   17 /* NPY_OBJECT */
#define NP_ARGS_MAX 32 /* NPY_MAXARGS */
#define NP_DIMS_MAX 32 /* NPY_MAXDIMS */

struct held_loop {
	np_loop real;
	void *data;
	const struct np_ufunc *u;
	unsigned int objects; /* inputs that are objects, a bit each */
};

/* Append a reference to o to *held (grown). Returns 0 or -1 (no memory). */
static int hold_one(PyObject *o, PyObject ***held, size_t *n, size_t *room)
{
	if (*n == *room) {
		size_t grow = *room ? 2 * *room : 64;
		PyObject **g = PyMem_RawRealloc(*held, grow * sizeof(*g));
		if (!g)
			return -1;
		*held = g;
		*room = grow;
	}
	(*held)[(*n)++] = Py_XNewRef(o);
	return 0;
}

/* Hold the items of input k's block for one element: laid out in its core dimensions.
 * Returns 0 or -1 (no memory). */
static int hold_block(const struct np_ufunc *u, int k, char *at, const Py_ssize_t *dims,
                      const Py_ssize_t *steps, PyObject ***held, size_t *n, size_t *room)
{
	int nd = u->core_num_dims[k], off = u->core_offsets[k];
	Py_ssize_t size[NP_DIMS_MAX], stride[NP_DIMS_MAX], idx[NP_DIMS_MAX] = {0};

	if (nd > NP_DIMS_MAX)
		return -1;
	for (int d = 0; d < nd; d++) {
		size[d] = dims[1 + u->core_dim_ixs[off + d]];
		stride[d] = steps[u->nargs + off + d];
		if (size[d] <= 0)
			return 0;
	}
	for (;;) {
		char *p = at;
		int d;
		for (d = 0; d < nd; d++)
			p += idx[d] * stride[d];
		if (hold_one(*(PyObject **)p, held, n, room) < 0)
			return -1;
		d = nd - 1;
		while (d >= 0 && ++idx[d] == size[d])
			idx[d--] = 0;
		if (d < 0)
			return 0;
	}
}

static void held_objects_loop(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps,
                              void *data)
{
	const struct held_loop *h = data;
	const struct np_ufunc *u = h->u;
	Py_ssize_t one[1 + NP_DIMS_MAX];
	char *at[NP_ARGS_MAX];
	PyObject **held = NULL;
	size_t n = 0, room = 0;

	one[0] = 1;
	for (int d = 0; u->core_enabled && d < u->core_num_dim_ix && d < NP_DIMS_MAX; d++)
		one[1 + d] = dims[1 + d];
	for (Py_ssize_t i = 0; i < dims[0] && !PyErr_Occurred(); i++) {
		int failed = 0;
		for (int k = 0; k < u->nargs; k++)
			at[k] = args[k] + i * steps[k];
		for (int k = 0; k < u->nin && !failed; k++) {
			if (!(h->objects & (1u << k)))
				continue;
			failed = (u->core_enabled
			              ? hold_block(u, k, at[k], dims, steps, &held, &n, &room)
			              : hold_one(*(PyObject **)at[k], &held, &n, &room)) < 0;
		}
		if (failed) {
			PyErr_NoMemory();
		} else {
			h->real(at, one, steps, h->data);
		}
		while (n > 0)
			Py_XDECREF(held[--n]);
	}
	PyMem_RawFree(held);
}

static int hold_object_loops(PyObject *ufunc)
{
	struct np_ufunc *u = (struct np_ufunc *)ufunc;

	if (u->nargs > NP_ARGS_MAX || u->nin > 31 || !u->functions || !u->data || !u->types)
		return 0;
	for (int i = 0; i < u->ntypes; i++) {
		unsigned int objects = 0;
		struct held_loop *h;

		for (int k = 0; k < u->nin; k++)
			if (u->types[i * u->nargs + k] == NP_OBJECT)
				objects |= 1u << k;
		if (!objects || u->functions[i] == held_objects_loop)
			continue;
		if (!(h = PyMem_RawMalloc(sizeof(*h)))) {
			PyErr_NoMemory();
			return -1;
		}
		*h = (struct held_loop){u->functions[i], u->data[i], u, objects};
		u->data[i] = h;
		u->functions[i] = held_objects_loop;
	}
	return 0;
}

/* A ufunc's call and its methods (reduce, accumulate, reduceat, outer, at) convert the lists
 * they are given as np.array does (private copies: private_lists above). */
static PyObject *private_lists(PyObject *o, int depth);
static vectorcallfunc ufunc_call_real;
#define N_UFUNC_METHODS 5
static const char *const ufunc_method_names[N_UFUNC_METHODS] = {"reduce", "accumulate", "reduceat",
                                                                "outer", "at"};
static PyMethodDef *ufunc_method_defs[N_UFUNC_METHODS];
static PyCFunction ufunc_method_real[N_UFUNC_METHODS];

/* args (n of them) with their lists copied (the first skip as they are), or NULL (no list:
 * *none set); the type-like ones checked, but the first data (an array maker's data). */
static PyObject **private_args(PyObject *const *args, Py_ssize_t n, Py_ssize_t skip, int *none)
{
	return private_args_data(args, n, skip, 0, none);
}

static PyObject **private_args_data(PyObject *const *args, Py_ssize_t n, Py_ssize_t skip,
                                    Py_ssize_t data, int *none)
{
	PyObject **copy;
	Py_ssize_t i, any = 0;

	*none = 0;
	/* (an array is a sequence, but neither copied nor checked: a call of arrays and numbers
	 * alone, the usual one, makes no copies) */
	for (i = skip; i < n && !any; i++)
		any = PyList_Check(args[i]) || PyTuple_Check(args[i]) || PyDict_Check(args[i]) ||
		      (!(ndarray_type && PyObject_TypeCheck(args[i], ndarray_type)) &&
		       PySequence_Check(args[i]));
	if (!any) {
		*none = 1;
		return NULL;
	}
	if (!(copy = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(*copy)))) {
		PyErr_NoMemory();
		return NULL;
	}
	for (i = 0; i < skip; i++)
		copy[i] =
		    args[i]; /* borrowed: a method's self gains no reference (resize counts them) */
	for (; i < n; i++)
		if (!(copy[i] = private_lists(args[i], 0))) {
			while (i-- > skip)
				Py_DECREF(copy[i]);
			PyMem_Free(copy);
			return NULL;
		}
	if (dtype_args_checked(copy, skip, n, data) < 0) {
		private_args_free(copy, n, skip);
		return NULL;
	}
	return copy;
}

static void private_args_free(PyObject **copy, Py_ssize_t n, Py_ssize_t skip)
{
	for (Py_ssize_t i = skip; i < n; i++)
		Py_DECREF(copy[i]);
	PyMem_Free(copy);
}

static PyObject *written_kept(PyObject *const *args, Py_ssize_t first, Py_ssize_t n);

static PyObject *ufunc_call_held(PyObject *self, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
	Py_ssize_t n = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
	PyObject **copy, *r;
	int none;

	PyObject *kept;

	if (!pylayer_armed())
		return ufunc_call_real(self, args, nargsf, kwnames);
	copy = private_args(args, n, 0, &none);
	if (!none && !copy)
		return NULL;
	/* (its outputs' objects: out=, or the positional ones after its inputs) */
	kept = written_kept(none ? args : copy, 0, n);
	if (!kept && PyErr_Occurred())
		r = NULL;
	else if (none)
		r = ufunc_call_real(self, args, nargsf, kwnames);
	else
		r = ufunc_call_real(self, copy, PyVectorcall_NARGS(nargsf), kwnames);
	Py_XDECREF(kept);
	if (copy)
		private_args_free(copy, n, 0);
	return r;
}

/* An array a ufunc method writes into: -1 (ValueError) when it is read-only. at and
 * accumulate's out= wrote through read-only arrays (numpy's own check is missing there): an
 * immutable bytes object's bytes, numpy's False, changed. */
static int written_writable(PyObject *o)
{
	if (PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 1) /* out=(a,) */
		o = PyTuple_GET_ITEM(o, 0);
	if (ndarray_type && PyObject_TypeCheck(o, ndarray_type) &&
	    !(((struct np_array *)o)->flags & NP_WRITEABLE)) {
		PyErr_SetString(PyExc_ValueError, "output array is read-only");
		return -1;
	}
	return 0;
}

/* accumulate's out: its fourth argument, or out=. 0, or -1 with the error. */
static int accumulate_out_writable(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	if (nargs > 3 && written_writable(args[3]) < 0)
		return -1;
	for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++)
		if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") == 0 &&
		    written_writable(args[nargs + i]) < 0)
			return -1;
	return 0;
}

/* reduce, accumulate, reduceat and outer take (self, args, nargs, kwnames); at takes a tuple. */
static PyObject *written_kept(PyObject *const *args, Py_ssize_t first, Py_ssize_t n);

static PyObject *ufunc_method(int k, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
	Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
	_PyCFunctionFastWithKeywords real =
	    (_PyCFunctionFastWithKeywords)(void (*)(void))ufunc_method_real[k];
	PyObject **copy, **given = NULL, *r;
	int none;

	if (!pylayer_armed())
		return real(self, args, nargs, kwnames);
	/* reduceat's indices (private_indices) */
	if (k == 2 && !(given = index_arg_copied(args, nargs, kwnames, 1, "indices")) &&
	    PyErr_Occurred())
		return NULL;
	if (given)
		args = given;
	copy = private_args(args, n, 0, &none);
	if (!none && !copy) {
		r = NULL;
	} else if (k == 1 && accumulate_out_writable(none ? args : copy, nargs, kwnames) < 0) {
		r = NULL;
		if (copy)
			private_args_free(copy, n, 0);
	} else {
		/* (out=: accumulate and reduceat copied an item as numpy's put does) */
		PyObject *const *a = none ? args : copy;
		PyObject *kept = written_kept(a, 0, n);
		r = kept || !PyErr_Occurred() ? real(self, a, nargs, kwnames) : NULL;
		Py_XDECREF(kept);
		if (copy)
			private_args_free(copy, n, 0);
	}
	index_args_free(given, n);
	return r;
}

static PyTypeObject *ufunc_methods_type;

static PyObject *ufunc_at_plain(PyObject *self, PyObject *copy);

/* at's indices: private_indices. */
static PyObject *ufunc_at(PyObject *self, PyObject *args)
{
	PyObject *copy, *r;

	if (!pylayer_armed())
		return ufunc_method_real[4](self, args);
	/* numpy read a one-input ufunc's second operand as its output's loop argument: a
	 * second operand there (np.sqrt.at(a, i, b)) made it read a NULL pointer. */
	if (Py_TYPE(self) == ufunc_methods_type && ((struct np_ufunc *)self)->nin == 1 &&
	    PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 2) {
		PyErr_SetString(PyExc_ValueError, "second operand provided when ufunc is unary");
		return NULL;
	}
	if (!(copy = private_lists(args, 0)))
		return NULL;
	if (PyTuple_Check(copy) && PyTuple_GET_SIZE(copy) > 0 &&
	    written_writable(PyTuple_GET_ITEM(copy, 0)) < 0) {
		Py_DECREF(copy);
		return NULL;
	}
	/* (at writes into its first operand: its objects held, as a put's) */
	if (PyTuple_Check(copy) && PyTuple_GET_SIZE(copy) > 0 &&
	    holds_objects(PyTuple_GET_ITEM(copy, 0))) {
		PyObject *kept = objects_kept(PyTuple_GET_ITEM(copy, 0)), *t;
		if (!kept) {
			Py_DECREF(copy);
			return NULL;
		}
		t = ufunc_at_plain(self, copy);
		Py_DECREF(kept);
		Py_DECREF(copy);
		return t;
	}
	r = ufunc_at_plain(self, copy);
	Py_DECREF(copy);
	return r;
}

/* at with its arguments copied: its indices made private. */
static PyObject *ufunc_at_plain(PyObject *self, PyObject *copy)
{
	PyObject *r, *ind;

	Py_INCREF(copy);
	if (PyTuple_Check(copy) && PyTuple_GET_SIZE(copy) > 1) {
		PyObject *t = PyTuple_GetSlice(copy, 0, PyTuple_GET_SIZE(copy));
		if (!t || !(ind = private_indices(PyTuple_GET_ITEM(copy, 1)))) {
			Py_XDECREF(t);
			Py_DECREF(copy);
			return NULL;
		}
		Py_SETREF(PyTuple_GET_ITEM(t, 1), ind); /* t is new: no one else sees it */
		Py_SETREF(copy, t);
	}
	r = ufunc_method_real[4](self, copy);
	Py_DECREF(copy);
	return r;
}

#define UFUNC_METHOD(k)                                                                            \
	static PyObject *ufunc_method_##k(PyObject *self, PyObject *const *args, Py_ssize_t nargs, \
	                                  PyObject *kwnames)                                       \
	{                                                                                          \
		return ufunc_method(k, self, args, nargs, kwnames);                                \
	}
UFUNC_METHOD(0)
UFUNC_METHOD(1)
UFUNC_METHOD(2)
UFUNC_METHOD(3)

static int ufunc_calls_guard(PyTypeObject *t)
{
	PyCFunction held[N_UFUNC_METHODS] = {(PyCFunction)(void (*)(void))ufunc_method_0,
	                                     (PyCFunction)(void (*)(void))ufunc_method_1,
	                                     (PyCFunction)(void (*)(void))ufunc_method_2,
	                                     (PyCFunction)(void (*)(void))ufunc_method_3, ufunc_at};

	for (int k = 0; k < N_UFUNC_METHODS; k++) {
		PyObject *m = PyDict_GetItemString(t->tp_dict, ufunc_method_names[k]);
		int flags = k < 4 ? METH_FASTCALL | METH_KEYWORDS : METH_VARARGS;
		PyMethodDef *def;
		if (!m || !PyObject_TypeCheck(m, &PyMethodDescr_Type) ||
		    (def = ((PyMethodDescrObject *)m)->d_method)->ml_flags != flags) {
			PyErr_Format(PyExc_RuntimeError, "numpy.ufunc.%s is not as known",
			             ufunc_method_names[k]);
			return -1;
		}
		ufunc_method_defs[k] = def;
		ufunc_method_real[k] = def->ml_meth;
		def->ml_meth = held[k];
	}
	ufunc_methods_type = t;
	return 0;
}

/* A ufunc's own call (its vectorcall field): numpy's, then the sandbox's. */
static int ufunc_call_guard(PyObject *ufunc)
{
	PyTypeObject *t = Py_TYPE(ufunc);
	vectorcallfunc *slot;

	if (!(t->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL) || t->tp_vectorcall_offset <= 0) {
		PyErr_SetString(PyExc_RuntimeError, "numpy's ufunc call is not as known");
		return -1;
	}
	slot = (vectorcallfunc *)((char *)ufunc + t->tp_vectorcall_offset);
	if (*slot == ufunc_call_held)
		return 0;
	if (!ufunc_call_real)
		ufunc_call_real = *slot;
	if (*slot != ufunc_call_real) {
		PyErr_SetString(PyExc_RuntimeError, "a ufunc's call is not numpy's");
		return -1;
	}
	*slot = ufunc_call_held;
	return 0;
}

/* The ufuncs of the other loaded modules (scipy.special's, made with numpy's call): their
 * calls copy lists too. */
static int other_ufuncs_guard(PyTypeObject *ufunc_type)
{
	PyObject *mods = PyDict_Values(PyImport_GetModuleDict());
	int rc = 0;

	if (!mods)
		return -1;
	for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(mods); i++) {
		PyObject *d, *k, *v;
		Py_ssize_t pos = 0;
		if (!PyModule_Check(PyList_GET_ITEM(mods, i)) ||
		    !(d = PyModule_GetDict(PyList_GET_ITEM(mods, i))))
			continue;
		while (rc == 0 && PyDict_Next(d, &pos, &k, &v))
			if (Py_TYPE(v) == ufunc_type &&
			    *(vectorcallfunc *)((char *)v + ufunc_type->tp_vectorcall_offset) ==
			        ufunc_call_real)
				rc = ufunc_call_guard(v);
	}
	Py_DECREF(mods);
	return rc;
}

/* np.frompyfunc (and np.vectorize through it): the ufunc it makes calls as the others. */
static PyCFunctionWithKeywords frompyfunc_real;

static PyObject *frompyfunc_held(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *u = frompyfunc_real(self, args, kw);

	if (u && ufunc_call_real && (Py_TYPE(u)->tp_flags & Py_TPFLAGS_HAVE_VECTORCALL) &&
	    Py_TYPE(u)->tp_vectorcall_offset > 0 &&
	    *(vectorcallfunc *)((char *)u + Py_TYPE(u)->tp_vectorcall_offset) == ufunc_call_real &&
	    ufunc_call_guard(u) < 0)
		Py_CLEAR(u);
	return u;
}

/* The function name of numpy's module m (taking arguments and keywords) calls guard from now
 * on; *real is numpy's. */
static int keywords_function_swap(PyObject *m, const char *name, PyCFunctionWithKeywords *real,
                                  PyCFunctionWithKeywords guard)
{
	PyObject *f = PyObject_GetAttrString(m, name);
	PyMethodDef *def;

	if (!f || !PyCFunction_Check(f) ||
	    (def = ((PyCFunctionObject *)f)->m_ml)->ml_flags != (METH_VARARGS | METH_KEYWORDS)) {
		Py_XDECREF(f);
		PyErr_Format(PyExc_RuntimeError, "numpy.%s is not as known", name);
		return -1;
	}
	*real = (PyCFunctionWithKeywords)(void (*)(void))def->ml_meth;
	def->ml_meth = (PyCFunction)(void (*)(void))guard;
	Py_DECREF(f);
	return 0;
}

static int frompyfunc_guard(PyObject *m)
{
	return keywords_function_swap(m, "frompyfunc", &frompyfunc_real, frompyfunc_held);
}

/* numpy.core.multiarray.scalar (how a pickled scalar is made again) took a dtype of objects
 * with no object and read the missing one: a NULL pointer. */
static PyCFunctionWithKeywords scalar_real;

static PyObject *scalar_checked(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"dtype", "obj", NULL};
	PyObject *dtype, *obj = NULL, *has;
	int objects;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:scalar", kwlist, &dtype, &obj))
		return NULL;
	if (!obj) {
		has = Py_TYPE(dtype_hasobject_get)
		          ->tp_descr_get(dtype_hasobject_get, dtype, (PyObject *)Py_TYPE(dtype));
		if (!has) {
			PyErr_Clear(); /* not a dtype: numpy says so */
			return scalar_real(self, args, kw);
		}
		objects = PyObject_IsTrue(has);
		Py_DECREF(has);
		if (objects) {
			if (objects > 0)
				PyErr_SetString(
				    PyExc_TypeError,
				    "scalar() of a dtype holding objects needs its obj");
			return NULL;
		}
	}
	return scalar_real(self, args, kw);
}

static int scalar_guard(PyObject *m)
{
	return keywords_function_swap(m, "scalar", &scalar_real, scalar_checked);
}

/* Every ufunc numpy's compiled module defines. */
static int object_loops_guard(void)
{
	PyObject *m =
	             PyDict_GetItemString(PyImport_GetModuleDict(), "numpy.core._multiarray_umath"),
	         *add, *k, *v;
	PyTypeObject *ufunc_type;
	Py_ssize_t pos = 0;

	if (!m)
		return 0;
	add = PyObject_GetAttrString(m, "add");
	if (!add)
		return -1;
	ufunc_type = Py_TYPE(add);
	Py_DECREF(add);
	if (strcmp(ufunc_type->tp_name, "numpy.ufunc") != 0 ||
	    ufunc_type->tp_basicsize < (Py_ssize_t)sizeof(struct np_ufunc)) {
		PyErr_SetString(PyExc_RuntimeError, "numpy's ufunc is not as known");
		return -1;
	}
	while (PyDict_Next(PyModule_GetDict(m), &pos, &k, &v))
		if (Py_TYPE(v) == ufunc_type &&
		    (hold_object_loops(v) < 0 || ufunc_call_guard(v) < 0))
			return -1;
	if (ufunc_calls_guard(ufunc_type) < 0 || frompyfunc_guard(m) < 0 || scalar_guard(m) < 0)
		return -1;
	return other_ufuncs_guard(ufunc_type);
}

/* ---- numpy's functions of a data type hold what they read ---------------------------------
 *
 * The functions numpy keeps for each built-in data type (its PyArray_ArrFuncs, shared by every
 * dtype of that type) read an array's items without owning them across the user's code:
 * argmax and argmin of objects kept the best item so far across a comparison (one the
 * comparison hold does not cover, a deque's, ran the user's __eq__ on its items, which
 * dropped that item from its array: compared again, freed); the dot of objects handed both
 * items of a product unowned to the operator (a tuple times an object whose __index__ dropped
 * the tuple: the product made from the freed tuple); and a value set into an array (a
 * structured element from a tuple, a datetime from an object), borrowed from the list or array
 * it came from, was read field by field, attribute by attribute, while the conversions ran the
 * user's code (which dropped it). The object type's argmax, argmin and dot are replaced with
 * ones that hold the items they compare or multiply (numpy's semantics otherwise: empty items
 * skipped, the first best kept, the sum started from the first product); every built-in
 * type's setitem holds the value while it is converted. np.vdot's loop of objects is not one of
 * the type's: vdot is given private copies of arrays of objects. */
struct np_arrfuncs {    /* numpy 1.x's PyArray_ArrFuncs (ndarraytypes.h) */
	void *cast[21]; /* NPY_NTYPES_ABI_COMPATIBLE */
	void *getitem;
	int (*setitem)(PyObject *, void *, void *);
	void *copyswapn, *copyswap, *compare;
	int (*argmax)(void *, Py_ssize_t, Py_ssize_t *, void *);
	void (*dotfunc)(char *, Py_ssize_t, char *, Py_ssize_t, char *, Py_ssize_t, void *);
	void *scanfunc, *fromstr, *nonzero, *fill, *fillwithscalar;
	void *sort[3], *argsort[3]; /* NPY_NSORTS */
	PyObject *castdict;
	void *scalarkind, *cancastscalarkindto, *cancastto, *fastclip, *fastputmask, *fasttake;
	int (*argmin)(void *, Py_ssize_t, Py_ssize_t *, void *);
};
struct np_descr { /* numpy 1.x's PyArray_Descr, as far as its functions */
	PyObject_HEAD PyTypeObject *typeobj;
	char kind, type, byteorder, flags;
	int type_num, elsize, alignment;
	void *subarray;
	PyObject *fields, *names;
	struct np_arrfuncs *f;
	PyObject *metadata;
};
static int descr_elsize(PyObject *descr)
{
	return ((struct np_descr *)descr)->elsize;
}

static char descr_kind(PyObject *descr)
{
	return ((struct np_descr *)descr)->kind;
}

static int descr_subarray(PyObject *descr)
{
	return ((struct np_descr *)descr)->subarray != NULL;
}

/* Does the data type hold references (NPY_ITEM_REFCOUNT: objects, or fields of them)? */
static int descr_has_objects(PyObject *descr)
{
	return ((struct np_descr *)descr)->flags & 0x01;
}

/* Is it a data type of one plain kind: no fields (whose names and titles are objects numpy
 * looks up and compares: a title of a str class of the code's ran its __eq__ inside an
 * own_arrays scope, V64b H1), no subarray, no metadata? */
static int descr_plain(PyObject *descr)
{
	const struct np_descr *d = (const struct np_descr *)descr;

	return (!d->fields || d->fields == Py_None) && (!d->names || d->names == Py_None) &&
	       !d->subarray &&
	       (!d->metadata || d->metadata == Py_None ||
	        (PyDict_CheckExact(d->metadata) && PyDict_GET_SIZE(d->metadata) == 0));
}

/* Is it the data type of objects itself (an item a pointer to one)? */
static int descr_is_object(PyObject *descr)
{
	const struct np_descr *d = (const struct np_descr *)descr;

	return d->type_num == NP_OBJECT && d->elsize == (int)sizeof(PyObject *) &&
	       (!d->fields || d->fields == Py_None) && !d->subarray;
}

/* ---- data types whole ----------------------------------------------------------------------
 *
 * numpy adds a structure's field offsets and sizes, and reads the sizes in type strings, in C
 * int without overflow checks: {'offsets': [0, 1], 'formats': ['u1', 'V2147483647'],
 * 'itemsize': 16} made a 16-byte type with a field 2 GiB long (a view of it reached the memory
 * past any array: a bytearray's header rewritten, all memory), and 'V2147483648', lists of
 * large fields and dtype.__setstate__ made negative sizes. A data type is whole when its size
 * is not negative and each field (at an exact int offset) and subarray lies within it, and
 * theirs are whole too. Every way the code hands numpy a new one is checked:
 *   - np.dtype(...) and dtype.__setstate__ check the type made (the state is put back when it
 *     is not whole);
 *   - numpy's functions, methods and constructors convert the type-like arguments they are
 *     given themselves (dtype=, astype, view, zeros...): each string (with a digit: no size
 *     is given without one), list, tuple or dict among the arguments (and in a list or tuple
 *     of at most 32) is converted here first as numpy would, and refused when the type it
 *     makes is not whole (made of plain values, numpy's conversion makes the same one);
 *   - numpy reads no data type from an object of the code's (its dtype attribute, read
 *     twice, could answer otherwise the second time): the conversion sees none;
 *   - the compiled libraries' conversions through numpy's C interface check what they get. */
struct np_subarray {
	PyObject *base, *shape;
};

static int descr_refused; /* set when a data type was refused below */

static int descr_refuse(void)
{
	descr_refused = 1;
	PyErr_SetString(PyExc_ValueError,
	                "this data type is not made in the sandbox: its size, or a field's offset "
	                "and size, is past what numpy counts in a C int (2**31 - 1 bytes)");
	return -1;
}

static int descr_whole(PyObject *o, int depth)
{
	const struct np_descr *d = (const struct np_descr *)o;
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	if (depth > 64 || !PyObject_TypeCheck(o, (PyTypeObject *)np_dtype) || d->elsize < 0)
		return 0;
	if (d->subarray) {
		const struct np_subarray *s = d->subarray;
		long long n = 1;
		if (!s->base || !descr_whole(s->base, depth + 1) || !s->shape ||
		    !PyTuple_Check(s->shape))
			return 0;
		for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(s->shape); i++) {
			PyObject *k = PyTuple_GET_ITEM(s->shape, i);
			long long v = PyLong_CheckExact(k) ? PyLong_AsLongLong(k) : -1;
			if (v < 0 || v > INT32_MAX || (n *= v) > INT32_MAX) {
				PyErr_Clear();
				return 0;
			}
		}
		if (n * descr_elsize(s->base) > d->elsize)
			return 0;
	}
	if (!d->names || d->names == Py_None)
		return 1;
	if (!d->fields || !PyDict_Check(d->fields))
		return 0;
	while (PyDict_Next(d->fields, &pos, &key, &value)) {
		PyObject *off = PyTuple_Check(value) && PyTuple_GET_SIZE(value) >= 2
		                    ? PyTuple_GET_ITEM(value, 1)
		                    : NULL;
		long long at = off && PyLong_CheckExact(off) ? PyLong_AsLongLong(off) : -1;
		if (at < 0 || !descr_whole(PyTuple_GET_ITEM(value, 0), depth + 1) ||
		    at + descr_elsize(PyTuple_GET_ITEM(value, 0)) > d->elsize) {
			PyErr_Clear();
			return 0;
		}
	}
	return 1;
}

static newfunc dtype_new_real; /* numpy's own, the sandbox's private copies aside */

/* o converted as numpy converts a data type argument: -1 with an error when the type made is not
 * whole, or when the conversion failed for a reason that is not o's (recursion, memory, the
 * call's deadline: numpy's own conversion could succeed); 0 when o is no data type (*made 0)
 * or a whole one (*made 1). */
static int dtype_like_whole(PyObject *o, int *made)
{
	PyObject *args = PyTuple_Pack(1, o), *d;
	int whole;

	*made = 0;
	if (!args)
		return -1;
	descr_refused = 0;
	d = dtype_new_real((PyTypeObject *)np_dtype, args, NULL);
	Py_DECREF(args);
	if (!d) {
		if (descr_refused || !PyErr_ExceptionMatches(PyExc_Exception) ||
		    PyErr_ExceptionMatches(PyExc_MemoryError) ||
		    PyErr_ExceptionMatches(PyExc_RecursionError) ||
		    PyErr_ExceptionMatches(PyExc_TimeoutError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	*made = 1;
	whole = descr_whole(d, 0);
	Py_DECREF(d);
	return whole ? 0 : descr_refuse();
}

static int has_digit(const char *s, Py_ssize_t n)
{
	for (Py_ssize_t i = 0; i < n; i++)
		if (s[i] >= '0' && s[i] <= '9')
			return 1;
	return 0;
}

/* Are o's values all plain (exact str, bytes, int, float, bool, None, data types, classes, and
 * exact lists, tuples and dicts of them)? numpy reads those the same each time; anything else
 * runs code of the call's while it is read (an __index__ answering 0, then 1). */
static int plain_tree(PyObject *o, int depth)
{
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	if (depth > 64)
		return 0;
	if (o == Py_None || PyUnicode_CheckExact(o) || PyBytes_CheckExact(o) ||
	    PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) || PyType_Check(o) ||
	    Py_IS_TYPE(o, (PyTypeObject *)np_dtype) ||
	    PyType_IsSubtype(Py_TYPE(o), (PyTypeObject *)np_dtype))
		return 1;
	if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
		for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
			if (!plain_tree(PySequence_Fast_GET_ITEM(o, i), depth + 1))
				return 0;
		return 1;
	}
	if (!PyDict_CheckExact(o))
		return 0;
	while (PyDict_Next(o, &pos, &key, &value))
		if (!plain_tree(key, depth + 1) || !plain_tree(value, depth + 1))
			return 0;
	return 1;
}

/* Strings checked already, whole or no type (their exact text), at most 4096. */
static PyObject *dtype_strs_seen;

/* A string numpy may read as a type (a str or bytes, subclasses too: numpy reads their text):
 * 0, or -1 with an error when the type it names is not whole. */
static int dtype_str_checked(PyObject *o)
{
	PyObject *text = PyUnicode_Check(o)
	                     ? PyUnicode_FromObject(o)
	                     : PyBytes_FromStringAndSize(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
	const char *s;
	Py_ssize_t n;
	int seen, made, rc = 0;

	if (!text)
		return -1;
	if (PyUnicode_Check(text)) {
		s = PyUnicode_AsUTF8AndSize(text, &n);
	} else {
		s = PyBytes_AS_STRING(text);
		n = PyBytes_GET_SIZE(text);
	}
	seen = s ? (dtype_strs_seen ? PySet_Contains(dtype_strs_seen, text) : 0) : -1;
	if (seen == 0 && has_digit(s, n)) {
		rc = dtype_like_whole(text, &made);
		if (rc == 0 && (!dtype_strs_seen || PySet_GET_SIZE(dtype_strs_seen) >= 4096))
			Py_XSETREF(dtype_strs_seen, PySet_New(NULL));
		if (rc == 0 && dtype_strs_seen && PySet_Add(dtype_strs_seen, text) < 0)
			PyErr_Clear();
	}
	Py_DECREF(text);
	return seen < 0 ? -1 : rc;
}

/* The keys of a dict numpy reads as a structure by its parts (names, formats, offsets...). */
static int dict_of_parts(PyObject *o)
{
	static const char *const parts[] = {"names",    "formats", "offsets", "titles",
	                                    "itemsize", "aligned", NULL};

	for (const char *const *k = parts; *k; k++)
		if (PyDict_GetItemString(o, *k))
			return 1;
	return 0;
}

/* Is o a list numpy reads as a structure's fields: each item a (name, type[, shape]) tuple, its
 * name a string or a (title, name) pair? */
static int fields_list(PyObject *o)
{
	if (!PyList_CheckExact(o) || PyList_GET_SIZE(o) == 0)
		return 0;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) {
		PyObject *f = PyList_GET_ITEM(o, i), *name;
		if (!PyTuple_Check(f) || PyTuple_GET_SIZE(f) < 2 || PyTuple_GET_SIZE(f) > 3)
			return 0;
		name = PyTuple_GET_ITEM(f, 0);
		if (!PyUnicode_Check(name) && !PyBytes_Check(name) &&
		    !(PyTuple_Check(name) && PyTuple_GET_SIZE(name) == 2))
			return 0;
	}
	return 1;
}

static int dtype_not_plain(void)
{
	descr_refused = 1;
	PyErr_SetString(
	    PyExc_TypeError,
	    "a data type is made here of strings, numbers, lists, tuples, dicts, numpy's "
	    "types and dtypes (an object of the code's within it is read by numpy "
	    "again, and could answer otherwise)");
	return -1;
}

/* An argument handed to numpy (its private copy): 0, or -1 with an error when numpy would make a
 * data type of it that is not whole, or of values that are not plain. data: an array maker's
 * data, never read as a type itself (its strings and lists are values). */
static int dtype_arg_checked(PyObject *o, int depth, int data)
{
	int made;

	if (PyUnicode_Check(o) || PyBytes_Check(o))
		return data ? 0 : dtype_str_checked(o);
	if (PyDict_Check(o)) {
		if (dict_of_parts(o) && !plain_tree(o, 0))
			return dtype_not_plain();
		return data ? 0 : dtype_like_whole(o, &made);
	}
	if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
		Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
		PyObject *first = n ? PySequence_Fast_GET_ITEM(o, 0) : NULL;
		/* a structure as a list of (name, type[, shape]) fields; a (type, shape), (type,
		 * size) or (type, metadata) pair, the type a name, a class, a dtype, a list of fields
		 * or a dict of parts (a pair of a list of values and an array is data) */
		int type_like =
		    PyList_CheckExact(o)
		        ? fields_list(o)
		        : n == 2 && (PyUnicode_Check(first) || PyBytes_Check(first) ||
		                     PyType_Check(first) || fields_list(first) ||
		                     (PyDict_Check(first) && dict_of_parts(first)) ||
		                     PyObject_TypeCheck(first, (PyTypeObject *)np_dtype));
		if (type_like && !data) {
			if (!plain_tree(o, 0))
				return dtype_not_plain();
			if (dtype_like_whole(o, &made) < 0)
				return -1;
		}
		for (Py_ssize_t i = 0; depth == 0 && n <= 32 && i < n; i++)
			if (dtype_arg_checked(PySequence_Fast_GET_ITEM(o, i), 1, data) < 0)
				return -1;
	}
	return 0;
}

/* args[from, n) handed to numpy, the first data of them an array maker's data. */
static int dtype_args_checked(PyObject *const *args, Py_ssize_t from, Py_ssize_t n, Py_ssize_t data)
{
	for (Py_ssize_t i = from; i < n; i++)
		if (dtype_arg_checked(args[i], 0, i - from < data) < 0)
			return -1;
	return 0;
}

/* dtype.__setstate__ and __reduce__ (numpy's method descriptors); the sandbox's __setstate__
 * in the first's place. */
static PyObject *dtype_setstate_real, *dtype_reduce_real;

static PyObject *dtype_setstate_checked(PyObject *self, PyObject *state)
{
	PyObject *reduced, *old = NULL, *r, *back, *et, *ev, *tb;

	if (!pylayer_armed())
		return PyObject_CallFunctionObjArgs(dtype_setstate_real, self, state, NULL);
	/* the state numpy gives of the type as it is: put back when the new one is not whole */
	reduced = PyObject_CallOneArg(dtype_reduce_real, self);
	if (reduced && PyTuple_Check(reduced) && PyTuple_GET_SIZE(reduced) >= 3)
		old = Py_NewRef(PyTuple_GET_ITEM(reduced, 2));
	Py_XDECREF(reduced);
	if (!old)
		return NULL;
	r = PyObject_CallFunctionObjArgs(dtype_setstate_real, self, state, NULL);
	if (descr_whole(self, 0)) {
		Py_DECREF(old);
		return r;
	}
	PyErr_Fetch(&et, &ev, &tb);
	back = PyObject_CallFunctionObjArgs(dtype_setstate_real, self, old, NULL);
	Py_XDECREF(r);
	Py_XDECREF(back);
	Py_DECREF(old);
	Py_XDECREF(et);
	Py_XDECREF(ev);
	Py_XDECREF(tb);
	PyErr_Clear();
	if (!descr_whole(self, 0))
		Py_FatalError("a data type could not be put back whole");
	descr_refuse();
	return NULL;
}

static PyMethodDef dtype_setstate_def = {"__setstate__", dtype_setstate_checked, METH_O, NULL};

/* Is o's dtype attribute one numpy may read at all: not of a class the code made (its
 * attribute could answer otherwise each time), and of a module only a library's (numpy reads
 * its own module's "dtype", the class)? */
static int dtype_attr_readable(PyObject *o)
{
	PyTypeObject *t = PyType_Check(o) ? (PyTypeObject *)o : Py_TYPE(o);
	PyObject *name, *known;

	if (PyModule_Check(o)) {
		name = PyModule_GetNameObject(o);
		known = name ? PyDict_GetItemWithError(PyImport_GetModuleDict(), name) : NULL;
		Py_XDECREF(name);
		PyErr_Clear();
		return known == o;
	}
	return !(t->tp_flags & Py_TPFLAGS_HEAPTYPE) || pyguard_sealed_class((PyObject *)t);
}

/* numpy's reads of an attribute by name (its PyObject_GetAttrString, through the entry the
 * dynamic linker filled). An object's "dtype", which numpy converts into a data type
 * unchecked, is read once here and handed on as a data type of its own (whole), or as it is
 * when no type is made of it (a plain value numpy cannot read as one either): a string a
 * function's or a library object's attribute the code set is checked as any argument. An
 * object of a class the code made gives none. */
static PyObject *numpy_getattr_string(PyObject *o, const char *name)
{
	PyObject *v, *d;

	if (!pylayer_armed() || name[0] != 'd' || strcmp(name, "dtype") != 0)
		return PyObject_GetAttrString(o, name);
	if (!dtype_attr_readable(o)) {
		PyErr_SetString(PyExc_AttributeError,
		                "numpy reads no data type from an object of a class made in the "
		                "sandbox: give a dtype (np.dtype(...)) or a type's name");
		return NULL;
	}
	if (PyModule_Check(o))
		return PyObject_GetAttrString(o, name);
	if (!(v = PyObject_GetAttrString(o, name)) ||
	    PyObject_TypeCheck(v, (PyTypeObject *)np_dtype))
		return v;
	if (!plain_tree(v, 0)) {
		Py_DECREF(v);
		dtype_not_plain();
		return NULL;
	}
	descr_refused = 0;
	if ((d = PyObject_CallOneArg(np_dtype, v))) {
		Py_DECREF(v);
		return d;
	}
	if (descr_refused || !PyErr_ExceptionMatches(PyExc_Exception) ||
	    PyErr_ExceptionMatches(PyExc_MemoryError) ||
	    PyErr_ExceptionMatches(PyExc_RecursionError) ||
	    PyErr_ExceptionMatches(PyExc_TimeoutError)) {
		Py_DECREF(v);
		return NULL;
	}
	PyErr_Clear();
	return v;
}

#if defined(__x86_64__)
#define JUMP_SLOT R_X86_64_JUMP_SLOT
#elif defined(__aarch64__)
#define JUMP_SLOT R_AARCH64_JUMP_SLOT
#endif

struct slot_patch {
	const char *object, *symbol;
	void *fn;
	int done;
};

/* In the loaded object whose name holds p->object, the entries of its calls of p->symbol (the
 * dynamic linker's jump slots) point to p->fn. */
static int slot_patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct slot_patch *p = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const ElfW(Rela) *rela = NULL;
	const char *strtab = NULL;
	size_t relsz = 0;
	uintptr_t base = info->dlpi_addr, relro = 0, relro_end = 0;
	long page = sysconf(_SC_PAGESIZE);

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, p->object))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			relro = base + info->dlpi_phdr[i].p_vaddr;
			relro_end = relro + info->dlpi_phdr[i].p_memsz;
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		/* the linker made these addresses absolute where it could write them */
		uintptr_t at = dyn->d_un.d_ptr < base ? base + dyn->d_un.d_ptr : dyn->d_un.d_ptr;
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)at;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)at;
		else if (dyn->d_tag == DT_JMPREL)
			rela = (const ElfW(Rela) *)at;
		else if (dyn->d_tag == DT_PLTRELSZ)
			relsz = dyn->d_un.d_val;
	}
	if (!symtab || !strtab || !rela)
		return 1;
	for (size_t i = 0; i < relsz / sizeof(*rela); i++) {
		void **slot = (void **)(base + rela[i].r_offset);
		uintptr_t first = (uintptr_t)slot & ~(uintptr_t)(page - 1);
		int ro = (uintptr_t)slot >= relro && (uintptr_t)slot < relro_end;
		if (ELF64_R_TYPE(rela[i].r_info) != JUMP_SLOT ||
		    strcmp(strtab + symtab[ELF64_R_SYM(rela[i].r_info)].st_name, p->symbol) != 0)
			continue;
		if (ro && mprotect((void *)first, (size_t)page, PROT_READ | PROT_WRITE) < 0)
			return 1;
		*slot = p->fn;
		if (ro && mprotect((void *)first, (size_t)page, PROT_READ) < 0)
			return 1;
		p->done++;
	}
	return 1;
}

static int dtypes_whole_guard(void)
{
	struct slot_patch p = {"numpy/core/_multiarray_umath", "PyObject_GetAttrString",
	                       (void *)numpy_getattr_string, 0};
	PyObject *m, *d = ((PyTypeObject *)np_dtype)->tp_dict;

	dtype_new_real = ((PyTypeObject *)np_dtype)->tp_new;
	dtype_setstate_real = PyDict_GetItemString(d, "__setstate__");
	dtype_reduce_real = PyDict_GetItemString(d, "__reduce__");
	if (!dtype_setstate_real || !PyObject_TypeCheck(dtype_setstate_real, &PyMethodDescr_Type) ||
	    !dtype_reduce_real || !PyObject_TypeCheck(dtype_reduce_real, &PyMethodDescr_Type)) {
		PyErr_SetString(PyExc_RuntimeError, "numpy's dtype.__setstate__ is not as known");
		return -1;
	}
	Py_INCREF(dtype_setstate_real);
	Py_INCREF(dtype_reduce_real);
	m = PyDescr_NewMethod((PyTypeObject *)np_dtype, &dtype_setstate_def);
	if (!m || PyDict_SetItemString(d, "__setstate__", m) < 0) {
		Py_XDECREF(m);
		return -1;
	}
	Py_DECREF(m);
	PyType_Modified((PyTypeObject *)np_dtype);
#ifdef JUMP_SLOT
	dl_iterate_phdr(slot_patch_object, &p);
#endif
	if (p.done == 0) {
		PyErr_SetString(PyExc_RuntimeError,
		                "numpy's reads of a data type from an object could not be guarded");
		return -1;
	}
	return 0;
}

typedef int (*np_setitem)(PyObject *, void *, void *);
#define NP_TYPES 24 /* NPY_NTYPES: the built-in types */
static np_setitem setitem_real[NP_TYPES];

#define HELD_SETITEM(t)                                                                            \
	static int held_setitem_##t(PyObject *op, void *at, void *ap)                              \
	{                                                                                          \
		int r;                                                                             \
		Py_XINCREF(op);                                                                    \
		r = setitem_real[t](op, at, ap);                                                   \
		Py_XDECREF(op);                                                                    \
		return r;                                                                          \
	}
HELD_SETITEM(0)
HELD_SETITEM(1)
HELD_SETITEM(2)
HELD_SETITEM(3)
HELD_SETITEM(4)
HELD_SETITEM(5)
HELD_SETITEM(6)
HELD_SETITEM(7)
HELD_SETITEM(8)
HELD_SETITEM(9)
HELD_SETITEM(10)
HELD_SETITEM(11)
HELD_SETITEM(12)
HELD_SETITEM(13)
HELD_SETITEM(14)
HELD_SETITEM(15)
HELD_SETITEM(16)
HELD_SETITEM(17)
HELD_SETITEM(18)
HELD_SETITEM(19)
HELD_SETITEM(20)
HELD_SETITEM(21)
HELD_SETITEM(22)
HELD_SETITEM(23)
static const np_setitem held_setitem[NP_TYPES] = {
    held_setitem_0,  held_setitem_1,  held_setitem_2,  held_setitem_3,  held_setitem_4,
    held_setitem_5,  held_setitem_6,  held_setitem_7,  held_setitem_8,  held_setitem_9,
    held_setitem_10, held_setitem_11, held_setitem_12, held_setitem_13, held_setitem_14,
    held_setitem_15, held_setitem_16, held_setitem_17, held_setitem_18, held_setitem_19,
    held_setitem_20, held_setitem_21, held_setitem_22, held_setitem_23};

/* The index of the first of n objects at ip that is greater (op Py_GT) or less (Py_LT) than
 * every one before it, the best so far and the one compared held while they are compared. */
static int held_arg_best(PyObject **ip, Py_ssize_t n, Py_ssize_t *best, int op)
{
	Py_ssize_t i;
	PyObject *mp;

	*best = 0;
	for (i = 0; i < n && ip[i] == NULL; ++i)
		;
	if (i >= n)
		return 0;
	mp = Py_NewRef(ip[i]);
	*best = i;
	for (i = i + 1; i < n; ++i) {
		PyObject *val = Py_XNewRef(ip[i]);
		int better;
		if (!val)
			continue;
		better = PyObject_RichCompareBool(val, mp, op);
		if (better < 0) {
			Py_DECREF(val);
			break;
		}
		if (better) {
			Py_SETREF(mp, val);
			*best = i;
		} else {
			Py_DECREF(val);
		}
	}
	Py_DECREF(mp);
	return 0;
}

static int held_argmax(void *ip, Py_ssize_t n, Py_ssize_t *best, void *ap)
{
	(void)ap;
	return held_arg_best(ip, n, best, Py_GT);
}

static int held_argmin(void *ip, Py_ssize_t n, Py_ssize_t *best, void *ap)
{
	(void)ap;
	return held_arg_best(ip, n, best, Py_LT);
}

/* The sum of the products of n pairs of objects (False for a pair with an empty item), into
 * the object at op; each pair held while it is multiplied. */
static void held_dot(char *ip1, Py_ssize_t is1, char *ip2, Py_ssize_t is2, char *op, Py_ssize_t n,
                     void *ignore)
{
	PyObject *sum = NULL, *old;

	(void)ignore;
	for (Py_ssize_t i = 0; i < n; i++, ip1 += is1, ip2 += is2) {
		PyObject *a = Py_XNewRef(*(PyObject **)ip1), *b = Py_XNewRef(*(PyObject **)ip2);
		PyObject *prod = a && b ? PyNumber_Multiply(a, b) : Py_NewRef(Py_False), *next;
		Py_XDECREF(a);
		Py_XDECREF(b);
		if (!prod) {
			Py_XDECREF(sum);
			return;
		}
		if (i == 0) {
			sum = prod;
			continue;
		}
		next = PyNumber_Add(sum, prod);
		Py_DECREF(sum);
		Py_DECREF(prod);
		if (!next)
			return;
		sum = next;
	}
	old = *(PyObject **)op;
	*(PyObject **)op = sum;
	Py_XDECREF(old);
}

/* np.vdot: its own loop of objects, reading the items of the arrays it was given (the user's
 * arrays of objects, as they are) unowned across conjugate() and the operators. An operand
 * that is, or gives, an array of objects is handed on as a private copy (plain ndarray); a list
 * or tuple becomes vdot's own array anyway. */
static PyCFunctionWithKeywords vdot_real;
static PyObject *np_array_fn, *np_asarray_fn;

static PyObject *vdot_operand(PyObject *x)
{
	PyObject *a, *copy, *args, *kw;
	int objects;

	if (PyList_Check(x) || PyTuple_Check(x) || PyLong_Check(x) || PyFloat_Check(x) ||
	    PyComplex_Check(x))
		return Py_NewRef(x);
	a = PyObject_CallOneArg(np_asarray_fn, x);
	if (!a)
		return NULL;
	objects = array_holds_objects(a);
	if (objects <= 0) {
		if (objects < 0)
			Py_CLEAR(a);
		return a;
	}
	args = PyTuple_Pack(1, a);
	kw = Py_BuildValue("{s:O,s:O}", "copy", Py_True, "subok", Py_False);
	copy = args && kw ? PyObject_Call(np_array_fn, args, kw) : NULL;
	Py_XDECREF(args);
	Py_XDECREF(kw);
	Py_DECREF(a);
	return copy;
}

static PyObject *vdot_checked(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *a, *b, *args2, *r;

	if (!pylayer_armed() || !PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 2)
		return vdot_real(self, args, kw);
	a = vdot_operand(PyTuple_GET_ITEM(args, 0));
	b = a ? vdot_operand(PyTuple_GET_ITEM(args, 1)) : NULL;
	args2 = a && b ? PyTuple_Pack(2, a, b) : NULL;
	Py_XDECREF(a);
	Py_XDECREF(b);
	if (!args2)
		return NULL;
	r = vdot_real(self, args2, kw);
	Py_DECREF(args2);
	return r;
}

static int vdot_guard(PyObject *m)
{
	PyObject *vdot = PyObject_GetAttrString(m, "vdot");
	PyMethodDef *def;

	np_array_fn = PyObject_GetAttrString(m, "array");
	np_asarray_fn = PyObject_GetAttrString(m, "asarray");
	if (!vdot || !np_array_fn || !np_asarray_fn || !PyCFunction_Check(vdot) ||
	    ((def = ((PyCFunctionObject *)vdot)->m_ml)->ml_flags & ~METH_KEYWORDS) !=
	        METH_VARARGS) {
		Py_XDECREF(vdot);
		PyErr_SetString(PyExc_RuntimeError, "numpy's vdot is not as known");
		return -1;
	}
	Py_DECREF(vdot); /* the module keeps it */
	if (def->ml_meth != (PyCFunction)(void (*)(void))vdot_checked) {
		vdot_real = (PyCFunctionWithKeywords)(void (*)(void))def->ml_meth;
		def->ml_meth = (PyCFunction)(void (*)(void))vdot_checked;
		def->ml_flags = METH_VARARGS | METH_KEYWORDS;
	}
	return 0;
}

static int type_funcs_guard(void)
{
	static const char codes[] = "?bBhHiIlLqQfdgFDGOSUVMme";
	PyObject *m =
	    PyDict_GetItemString(PyImport_GetModuleDict(), "numpy.core._multiarray_umath");
	struct np_arrfuncs *f[NP_TYPES] = {0};

	if (!m || !np_dtype)
		return 0;
	for (const char *c = codes; *c; c++) {
		struct np_descr *d = (struct np_descr *)PyObject_CallFunction(np_dtype, "s#", c, 1);
		if (!d)
			return -1;
		if (d->type_num >= 0 && d->type_num < NP_TYPES && d->type == *c)
			f[d->type_num] = d->f;
		Py_DECREF(d);
	}
	for (int t = 0; t < NP_TYPES; t++)
		if (!f[t] || !f[t]->setitem) {
			PyErr_SetString(PyExc_RuntimeError, "numpy's data types are not as known");
			return -1;
		}
	/* The layout, by what it says of objects (ordered, with a dot) and structures (neither). */
	if (f[NP_OBJECT]->argmax == NULL || f[NP_OBJECT]->argmin == NULL ||
	    f[NP_OBJECT]->dotfunc == NULL || f[20]->argmax != NULL || f[20]->argmin != NULL ||
	    f[20]->dotfunc != NULL) {
		PyErr_SetString(PyExc_RuntimeError,
		                "numpy's functions of a data type are not as known");
		return -1;
	}
	for (int t = 0; t < NP_TYPES; t++)
		if (f[t]->setitem != held_setitem[t]) {
			setitem_real[t] = f[t]->setitem;
			f[t]->setitem = held_setitem[t];
		}
	f[NP_OBJECT]->argmax = held_argmax;
	f[NP_OBJECT]->argmin = held_argmin;
	f[NP_OBJECT]->dotfunc = held_dot;
	return vdot_guard(m);
}

/* ---- numpy's other entry points read private copies too ------------------------------------
 *
 * Every C entry of numpy's that takes an array-like read a list it was given where it is while
 * it ran the user's code on the items (the attribute lookups that find an item's shape,
 * __index__, __float__): np.concatenate, where, copyto, bincount, interp, broadcast,
 * empty_like, ndarray's take, searchsorted, repeat and reshape, a flat iterator's index, the
 * shape given to ndarray(), a scalar type's value, and the compiled libraries' conversions
 * through numpy's C interface (Cython's, f2py's, scipy's C) read a list its items emptied
 * (SIGSEGV; a freed item used). Each is given private copies of the lists in its arguments, as
 * np.array is (private_lists above):
 *   - the functions of numpy's compiled modules, in place (every name for one is the same
 *     object): the function calls the sandbox's, which calls numpy's with the copies;
 *   - ndarray's methods: the class's dict holds the sandbox's descriptor for each;
 *   - the constructors of the dtype, scalar, broadcast, nditer and busdaycalendar classes, and
 *     the flat iterator's indexing;
 *   - numpy's C interface (the table the compiled libraries call through): the conversions and
 *     operations that take objects.
 * numpy's dispatch to a class's own __array_function__ is kept: the list of candidates it walks
 * is copied, the objects in it are not. */

/* The function numpy's was made into calls this, its self a module of the sandbox's holding
 * numpy's function (made again): a module, so that the function still reads, pickles and names
 * itself as a module's function. */
static struct PyModuleDef copied_holder_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "safepy_numpy_call",
    .m_size = sizeof(PyObject *),
};
static PyObject *dispatch_fns[2]; /* numpy's implement_array_function, _get_implementing_args */
static const Py_ssize_t dispatch_at[2] = {2, 0}; /* where each takes its list of candidates */

/* The dispatch functions: their list of candidates copied, nothing else (the objects in it are
 * what numpy asks for their own __array_function__). */
static PyObject *dispatch_copied(int k, PyObject *real, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
	Py_ssize_t at = dispatch_at[k], n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
	PyObject *given[8], *list, *r;

	/* implement_array_function(implementation, public_api, relevant_args, args, kwargs) calls
	 * the implementation with args and kwargs as it is given them, unchecked: an array.array
	 * for args was read as a tuple whose item was a pointer into its buffer (a forged bytearray
	 * over the address space, V71a H2). numpy's own callers give a tuple and a dict. */
	if (k == 0 && (nargs != 5 || kwnames || !PyTuple_CheckExact(args[3]) ||
	               !PyDict_CheckExact(args[4]))) {
		PyErr_SetString(PyExc_TypeError,
		                "implement_array_function takes (implementation, public_api, "
		                "relevant_args, a tuple of arguments, a dict of keywords)");
		return NULL;
	}
	if (at >= nargs || !PyList_Check(args[at]))
		return PyObject_Vectorcall(real, args, nargs, kwnames);
	if (n > 8) {
		PyErr_SetString(PyExc_TypeError, "too many arguments");
		return NULL;
	}
	memcpy(given, args, (size_t)n * sizeof(*given));
	if (!(list = PyList_GetSlice(args[at], 0, PyList_GET_SIZE(args[at]))))
		return NULL;
	given[at] = list;
	r = PyObject_Vectorcall(real, given, nargs, kwnames);
	Py_DECREF(list);
	return r;
}

/* The objects of every array holding objects among a call's arguments from the first on (n of
 * them, keywords' values included; a tuple's arrays too, as out= takes): numpy's functions and
 * methods write into the array they are given by any name and place (out=, positionally, a
 * putmask's arr=), with loops that drop an object before they copy the slot of the next
 * (replaced_kept above). A new reference (a list); NULL with an error, or with none when no
 * argument holds objects. */
static PyObject *written_kept(PyObject *const *args, Py_ssize_t first, Py_ssize_t n)
{
	PyObject *l = NULL, *k;

	for (Py_ssize_t i = first; i < n; i++) {
		int any = holds_objects(args[i]);
		for (Py_ssize_t j = 0;
		     !any && PyTuple_Check(args[i]) && j < PyTuple_GET_SIZE(args[i]); j++)
			any = holds_objects(PyTuple_GET_ITEM(args[i], j));
		if (!any)
			continue;
		if (!(k = outputs_kept(args[i]))) {
			if (PyErr_Occurred()) {
				Py_XDECREF(l);
				return NULL;
			}
			continue;
		}
		if ((!l && !(l = PyList_New(0))) || PyList_Append(l, k) < 0) {
			Py_DECREF(k);
			Py_XDECREF(l);
			return NULL;
		}
		Py_DECREF(k);
	}
	return l;
}

static PyMethodDef *bincount_ml; /* numpy's bincount's own, known by its address */

static PyObject *function_copied(PyObject *holder, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
	Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
	PyObject *real = *(PyObject **)PyModule_GetState(holder), **copy, **given = NULL, *r;
	int none;

	if (!pylayer_armed())
		return PyObject_Vectorcall(real, args, nargs, kwnames);
	for (int k = 0; k < 2; k++)
		if (real == dispatch_fns[k])
			return dispatch_copied(k, real, args, nargs, kwnames);
	/* bincount's numbers, when it is given weights (private_indices: it sizes its result by
	 * them, then converts the weights) */
	if (((PyCFunctionObject *)real)->m_ml == bincount_ml && (n > 1 || other_threads()) &&
	    !(given = index_arg_copied(args, nargs, kwnames, 0, "list")) && PyErr_Occurred())
		return NULL;
	if (given)
		args = given;
	copy = private_args(args, n, 0, &none);
	if (!none && !copy) {
		r = NULL;
	} else {
		PyObject *const *a = none ? args : copy;
		PyObject *kept = written_kept(a, 0, n);
		r = kept || !PyErr_Occurred() ? PyObject_Vectorcall(real, a, nargs, kwnames) : NULL;
		Py_XDECREF(kept);
		if (copy)
			private_args_free(copy, n, 0);
	}
	index_args_free(given, n);
	return r;
}

static PyMethodDef function_copied_def = {"copied", (PyCFunction)(void (*)(void))function_copied,
                                          METH_FASTCALL | METH_KEYWORDS, NULL};
static vectorcallfunc function_copied_vectorcall;

/* f, one of numpy's C functions, calls numpy's with private copies from now on. */
static int function_copies(PyObject *f)
{
	PyCFunctionObject *c = (PyCFunctionObject *)f;
	PyObject *holder, *real;
	PyMethodDef *def;

	if (c->m_ml->ml_meth == function_copied_def.ml_meth)
		return 0;
	if (c->m_ml->ml_flags & (METH_METHOD | METH_CLASS | METH_STATIC)) {
		PyErr_Format(PyExc_RuntimeError, "numpy's %s is not as known", c->m_ml->ml_name);
		return -1;
	}
	if (!(def = PyMem_RawMalloc(sizeof(*def)))) {
		PyErr_NoMemory();
		return -1;
	}
	holder = PyModule_Create(&copied_holder_def);
	real = holder ? PyCFunction_NewEx(c->m_ml, c->m_self, c->m_module) : NULL;
	if (!real) {
		Py_XDECREF(holder);
		PyMem_RawFree(def);
		return -1;
	}
	*(PyObject **)PyModule_GetState(holder) = real; /* the holder keeps it */
	if (strcmp(c->m_ml->ml_name, "bincount") == 0)
		bincount_ml = c->m_ml;
	*def = function_copied_def;
	def->ml_name = c->m_ml->ml_name;
	def->ml_doc = c->m_ml->ml_doc;
	c->m_ml = def;
	Py_XSETREF(c->m_self, holder);
	c->vectorcall = function_copied_vectorcall;
	return 0;
}

/* The C functions of numpy's compiled modules but those given copies already (the array makers)
 * and those that take no array-like. */
static int functions_copy(void)
{
	static const char *const modules[] = {"numpy.core._multiarray_umath",
	                                      "numpy.fft._pocketfft_internal"};
	static const char *const skip[] = {"array",
	                                   "asarray",
	                                   "asanyarray",
	                                   "ascontiguousarray",
	                                   "asfortranarray",
	                                   "add_docstring",
	                                   "_add_newdoc_ufunc",
	                                   "_reload_guard",
	                                   NULL};
	PyObject *probe = PyCFunction_New(&function_copied_def, NULL),
	         *mods = PyImport_GetModuleDict();

	if (!probe)
		return -1;
	function_copied_vectorcall = ((PyCFunctionObject *)probe)->vectorcall;
	Py_DECREF(probe);
	for (size_t i = 0; i < sizeof(modules) / sizeof(*modules); i++) {
		PyObject *m = PyDict_GetItemString(mods, modules[i]), *d, *key, *value;
		Py_ssize_t pos = 0;
		if (!m)
			continue;
		d = PyModule_GetDict(m);
		if (i == 0) {
			dispatch_fns[0] = PyDict_GetItemString(d, "implement_array_function");
			dispatch_fns[1] = PyDict_GetItemString(d, "_get_implementing_args");
			if (!dispatch_fns[0] || !dispatch_fns[1] ||
			    !PyCFunction_Check(dispatch_fns[0]) ||
			    !PyCFunction_Check(dispatch_fns[1])) {
				PyErr_SetString(PyExc_RuntimeError,
				                "numpy's dispatch is not as known");
				return -1;
			}
		}
		while (PyDict_Next(d, &pos, &key, &value)) {
			const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
			int skipped = 0;
			if (!PyCFunction_CheckExact(value) || !name)
				continue;
			for (const char *const *s = skip; *s && !skipped; s++)
				skipped = strcmp(*s, name) == 0;
			if (skipped)
				continue;
			if (i == 0 && (value == dispatch_fns[0] || value == dispatch_fns[1])) {
				/* they are called as numpy's own from now on */
				PyObject *was = value;
				if (function_copies(was) < 0)
					return -1;
				dispatch_fns[was == dispatch_fns[0] ? 0 : 1] =
				    *(PyObject **)PyModule_GetState(
				        ((PyCFunctionObject *)was)->m_self);
				continue;
			}
			if (function_copies(value) < 0)
				return -1;
		}
	}
	return 0;
}

/* ndarray's methods: the class's dict holds one of these for each, calling numpy's descriptor
 * with the arguments after self copied. */
typedef struct {
	PyObject_HEAD PyObject *real; /* numpy's method descriptor */
	vectorcallfunc vectorcall;
} copied_method;

static PyObject *method_copied(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames)
{
	PyObject *real = ((copied_method *)self)->real, **copy, *r;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf),
	           n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
	int none;

	PyObject *kept;

	if (!pylayer_armed() || nargs < 1)
		return PyObject_Vectorcall(real, args, nargsf, kwnames);
	copy = private_args(args, n, 1, &none);
	if (!none && !copy)
		return NULL;
	kept = written_kept(none ? args : copy, 1, n);
	if (!kept && PyErr_Occurred())
		r = NULL;
	else if (none)
		r = PyObject_Vectorcall(real, args, nargsf, kwnames);
	else
		r = PyObject_Vectorcall(real, copy, nargs, kwnames);
	Py_XDECREF(kept);
	if (copy)
		private_args_free(copy, n, 1);
	return r;
}

static PyObject *method_bind(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None)
		return Py_NewRef(self);
	return PyMethod_New(self, obj);
}

/* What the descriptor says of itself is numpy's. */
static PyObject *method_says(PyObject *self, void *name)
{
	return PyObject_GetAttrString(((copied_method *)self)->real, name);
}

static PyObject *method_repr(PyObject *self)
{
	return PyObject_Repr(((copied_method *)self)->real);
}

static PyObject *method_reduce(PyObject *self, PyObject *unused)
{
	(void)unused;
	return PyObject_CallMethod(((copied_method *)self)->real, "__reduce__", NULL);
}

static PyGetSetDef method_getset[] = {
    {"__name__", method_says, NULL, NULL, "__name__"},
    {"__qualname__", method_says, NULL, NULL, "__qualname__"},
    {"__doc__", method_says, NULL, NULL, "__doc__"},
    {"__objclass__", method_says, NULL, NULL, "__objclass__"},
    {"__text_signature__", method_says, NULL, NULL, "__text_signature__"},
    {NULL},
};

static PyMethodDef method_methods[] = {
    {"__reduce__", method_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyTypeObject copied_method_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "method_descriptor",
    .tp_basicsize = sizeof(copied_method),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(copied_method, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = method_bind,
    .tp_repr = method_repr,
    .tp_getset = method_getset,
    .tp_methods = method_methods,
    .tp_doc = "A method of numpy's, given private copies of the lists in its arguments.",
};

static int methods_copy(PyTypeObject *t)
{
	PyObject *items, *key, *value;
	Py_ssize_t pos = 0;
	int rc = 0;

	if (PyType_Ready(&copied_method_type) < 0 || !(items = PyDict_Copy(t->tp_dict)))
		return -1;
	while (rc == 0 && PyDict_Next(items, &pos, &key, &value)) {
		copied_method *m;
		if (!PyUnicode_Check(key) || !PyObject_TypeCheck(value, &PyMethodDescr_Type) ||
		    PyUnicode_READ_CHAR(key, 0) == '_')
			continue;
		if (!(m = PyObject_New(copied_method, &copied_method_type))) {
			rc = -1;
			break;
		}
		m->real = Py_NewRef(value);
		m->vectorcall = method_copied;
		rc = PyDict_SetItem(t->tp_dict, key, (PyObject *)m);
		Py_DECREF(m);
	}
	Py_DECREF(items);
	PyType_Modified(t);
	return rc;
}

/* The constructors: numpy's tp_new (or tp_init), by class, reached from the class made or its
 * nearest base that has one of numpy's own. */
#define N_MADE_COPIED 96
static struct {
	PyTypeObject *t;
	newfunc new;
	initproc init;
} made_copied[N_MADE_COPIED];
static int n_made_copied;

static PyObject *private_kw(PyObject *kw)
{
	PyObject *copy, *key, *value;
	Py_ssize_t pos = 0;

	if (!kw || !PyDict_Check(kw))
		return Py_XNewRef(kw);
	if (!(copy = PyDict_New()))
		return NULL;
	while (PyDict_Next(kw, &pos, &key, &value)) {
		PyObject *c = private_lists(value, 0);
		if (!c || PyDict_SetItem(copy, key, c) < 0) {
			Py_XDECREF(c);
			Py_DECREF(copy);
			return NULL;
		}
		Py_DECREF(c);
	}
	return copy;
}

static int made_real(PyTypeObject *t, newfunc *new, initproc *init)
{
	for (; t; t = t->tp_base)
		for (int i = 0; i < n_made_copied; i++)
			if (made_copied[i].t == t &&
			    (new ? made_copied[i].new != NULL : made_copied[i].init != NULL)) {
				if (new)
					*new = made_copied[i].new;
				else
					*init = made_copied[i].init;
				return 0;
			}
	PyErr_SetString(PyExc_RuntimeError, "a class of numpy's without its constructor");
	return -1;
}

static PyObject *new_copied(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	newfunc real;
	PyObject *r;

	if (made_real(t, &real, NULL) < 0)
		return NULL;
	if (!pylayer_armed())
		return real(t, args, kw);
	r = new_with_copies(real, t, args, kw);
	if (r && PyObject_TypeCheck(r, (PyTypeObject *)np_dtype) && !descr_whole(r, 0)) {
		Py_DECREF(r);
		descr_refuse();
		return NULL;
	}
	return r;
}

static int init_copied(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *args2, *kw2;
	initproc real;
	int rc;

	if (made_real(Py_TYPE(self), NULL, &real) < 0)
		return -1;
	if (!pylayer_armed())
		return real(self, args, kw);
	if (!(args2 = private_lists(args, 0)))
		return -1;
	if (!(kw2 = private_kw(kw)) && kw) {
		Py_DECREF(args2);
		return -1;
	}
	if (copies_checked(args2, kw2) < 0) {
		Py_DECREF(args2);
		Py_XDECREF(kw2);
		return -1;
	}
	rc = real(self, args2, kw2);
	Py_DECREF(args2);
	Py_XDECREF(kw2);
	return rc;
}

static int replace_init(PyTypeObject *t, void *arg)
{
	initproc *pair = arg;

	if (t->tp_init == pair[0]) {
		t->tp_init = pair[1];
		PyType_Modified(t);
	}
	return 0;
}

/* t and the classes below it that take its constructor: copies first. Each class with one of
 * its own is entered (walked from the top, so a class below finds its base's). */
static int made_copies(PyTypeObject *t, void *init)
{
	int own = init ? t->tp_init && t->tp_init != init_copied &&
	                     t->tp_init != PyBaseObject_Type.tp_init
	               : t->tp_new && t->tp_new != new_copied;

	if (!own)
		return 0;
	if (n_made_copied == N_MADE_COPIED) {
		PyErr_SetString(PyExc_RuntimeError, "too many of numpy's classes");
		return -1;
	}
	made_copied[n_made_copied].t = t;
	if (init) {
		initproc pair[2] = {t->tp_init, init_copied};
		rewrap_note((void *)t->tp_init, (void *)init_copied);
		made_copied[n_made_copied++].init = t->tp_init;
		return pyguard_walk(t, replace_init, pair) < 0 ? -1 : 0;
	}
	made_copied[n_made_copied++].new = t->tp_new;
	return pyguard_replace_new(t, t->tp_new, new_copied) < 0 ? -1 : 0;
}

/* numpy's C interface, the entries that take objects (their positions in the table of numpy
 * 1.x's C interface). A copy that fails leaves what the entry would have stolen released. */
static void **np_api;
enum {
	API_CONVERT_COMMON = 56,
	API_FROM_ANY = 69,
	API_ENSURE_ARRAY = 70,
	API_ENSURE_ANY_ARRAY = 71,
	API_COPY_OBJECT = 84,
	API_CHECK_FROM_ANY = 108,
	API_TAKE = 124,
	API_PUT = 125,
	API_CHOOSE = 128,
	API_SEARCH_SORTED = 131,
	API_INTP_FROM_SEQUENCE = 167,
	API_CONCATENATE = 168,
	API_INNER = 169,
	API_MATRIX_PRODUCT = 170,
	API_DESCR_CONVERTER = 174,
	API_DESCR_CONVERTER2 = 175,
	API_INTP_CONVERTER = 176,
	API_WHERE = 185,
	API_LEXSORT = 189,
	API_MATRIX_PRODUCT2 = 280,
	API_ENTRIES = 300,
};
#define N_API_COPIED 20
static void *api_real[API_ENTRIES];

/* A private copy of o (NULL stays NULL) into *copy: 0, or -1 with the error. */
static int api_copy(PyObject *o, PyObject **copy)
{
	if (!o || !pylayer_armed()) {
		*copy = Py_XNewRef(o);
		return 0;
	}
	return (*copy = private_lists(o, 0)) ? 0 : -1;
}

typedef PyObject *(*api_from_any_fn)(PyObject *, PyObject *, int, int, int, PyObject *);

static PyObject *api_from_any_copied(int k, PyObject *op, PyObject *descr, int min, int max,
                                     int flags, PyObject *context)
{
	PyObject *c, *r;

	if (api_copy(op, &c) < 0) {
		Py_XDECREF(descr); /* stolen */
		return NULL;
	}
	r = ((api_from_any_fn)api_real[k])(c, descr, min, max, flags, context);
	Py_XDECREF(c);
	return r;
}

static PyObject *api_from_any(PyObject *op, PyObject *descr, int min, int max, int flags,
                              PyObject *context)
{
	return api_from_any_copied(API_FROM_ANY, op, descr, min, max, flags, context);
}

static PyObject *api_check_from_any(PyObject *op, PyObject *descr, int min, int max, int flags,
                                    PyObject *context)
{
	return api_from_any_copied(API_CHECK_FROM_ANY, op, descr, min, max, flags, context);
}

/* EnsureArray and EnsureAnyArray steal op. */
static PyObject *api_ensure_copied(int k, PyObject *op)
{
	PyObject *c;

	if (api_copy(op, &c) < 0) {
		Py_XDECREF(op);
		return NULL;
	}
	Py_XDECREF(op);
	return ((PyObject * (*)(PyObject *)) api_real[k])(c);
}

static PyObject *api_ensure_array(PyObject *op)
{
	return api_ensure_copied(API_ENSURE_ARRAY, op);
}

static PyObject *api_ensure_any_array(PyObject *op)
{
	return api_ensure_copied(API_ENSURE_ANY_ARRAY, op);
}

/* The converters (object, out) */
static int api_converter_copied(int k, PyObject *o, void *out)
{
	PyObject *c;
	int rc;

	if (api_copy(o, &c) < 0)
		return 0; /* a converter's failure */
	rc = ((int (*)(PyObject *, void *))api_real[k])(c, out);
	Py_XDECREF(c);
	return rc;
}

static int api_intp_converter(PyObject *o, void *out)
{
	return api_converter_copied(API_INTP_CONVERTER, o, out);
}

/* A data type the compiled libraries convert through numpy's C interface: whole, or refused
 * (a converter's failure). */
static int api_descr_whole(int rc, void *out)
{
	PyObject **d = out;

	if (rc && *d && !descr_whole(*d, 0)) {
		Py_CLEAR(*d);
		descr_refuse();
		return 0;
	}
	return rc;
}

static int api_descr_converter(PyObject *o, void *out)
{
	return api_descr_whole(api_converter_copied(API_DESCR_CONVERTER, o, out), out);
}

static int api_descr_converter2(PyObject *o, void *out)
{
	return api_descr_whole(api_converter_copied(API_DESCR_CONVERTER2, o, out), out);
}

static int api_intp_from_sequence(PyObject *o, void *vals, int n)
{
	PyObject *c;
	int rc;

	if (api_copy(o, &c) < 0)
		return -1;
	rc = ((int (*)(PyObject *, void *, int))api_real[API_INTP_FROM_SEQUENCE])(c, vals, n);
	Py_XDECREF(c);
	return rc;
}

static void *api_convert_common(PyObject *o, int *n)
{
	PyObject *c;
	void *r;

	if (api_copy(o, &c) < 0)
		return NULL;
	r = ((void *(*)(PyObject *, int *))api_real[API_CONVERT_COMMON])(c, n);
	Py_XDECREF(c);
	return r;
}

static int api_copy_object(PyObject *dest, PyObject *src)
{
	PyObject *c;
	int rc;

	if (api_copy(src, &c) < 0)
		return -1;
	rc = ((int (*)(PyObject *, PyObject *))api_real[API_COPY_OBJECT])(dest, c);
	Py_XDECREF(c);
	return rc;
}

/* (object, int): Concatenate, LexSort */
static PyObject *api_object_int(int k, PyObject *o, int axis)
{
	PyObject *c, *r;

	if (api_copy(o, &c) < 0)
		return NULL;
	r = ((PyObject * (*)(PyObject *, int)) api_real[k])(c, axis);
	Py_XDECREF(c);
	return r;
}

static PyObject *api_concatenate(PyObject *o, int axis)
{
	return api_object_int(API_CONCATENATE, o, axis);
}

static PyObject *api_lexsort(PyObject *o, int axis)
{
	return api_object_int(API_LEXSORT, o, axis);
}

/* (a, b, c) of objects, c NULL for the two-argument ones: Inner, MatrixProduct(2), Where */
static PyObject *api_three(int k, int n, PyObject *a, PyObject *b, PyObject *x)
{
	PyObject *c[3] = {NULL}, *r = NULL;

	if (api_copy(a, &c[0]) == 0 && api_copy(b, &c[1]) == 0 && api_copy(x, &c[2]) == 0)
		r = n == 2 ? ((PyObject * (*)(PyObject *, PyObject *)) api_real[k])(c[0], c[1])
		           : ((PyObject * (*)(PyObject *, PyObject *, PyObject *))
		                  api_real[k])(c[0], c[1], c[2]);
	for (int i = 0; i < 3; i++)
		Py_XDECREF(c[i]);
	return r;
}

static PyObject *api_inner(PyObject *a, PyObject *b)
{
	return api_three(API_INNER, 2, a, b, NULL);
}

static PyObject *api_matrix_product(PyObject *a, PyObject *b)
{
	return api_three(API_MATRIX_PRODUCT, 2, a, b, NULL);
}

static PyObject *api_matrix_product2(PyObject *a, PyObject *b, PyObject *out)
{
	PyObject *c[2] = {NULL}, *r = NULL;

	if (api_copy(a, &c[0]) == 0 && api_copy(b, &c[1]) == 0)
		r = ((PyObject * (*)(PyObject *, PyObject *, PyObject *))
		         api_real[API_MATRIX_PRODUCT2])(c[0], c[1], out);
	Py_XDECREF(c[0]);
	Py_XDECREF(c[1]);
	return r;
}

static PyObject *api_where(PyObject *cond, PyObject *x, PyObject *y)
{
	return api_three(API_WHERE, 3, cond, x, y);
}

static PyObject *api_take(PyObject *self, PyObject *indices, int axis, PyObject *out, int mode)
{
	PyObject *c, *r;

	if (api_copy(indices, &c) < 0)
		return NULL;
	r = ((PyObject * (*)(PyObject *, PyObject *, int, PyObject *, int))
	         api_real[API_TAKE])(self, c, axis, out, mode);
	Py_XDECREF(c);
	return r;
}

static PyObject *api_put(PyObject *self, PyObject *values, PyObject *indices, int mode)
{
	PyObject *c[2] = {NULL}, *r = NULL;

	if (api_copy(values, &c[0]) == 0 && api_copy(indices, &c[1]) == 0)
		r = ((PyObject * (*)(PyObject *, PyObject *, PyObject *, int))
		         api_real[API_PUT])(self, c[0], c[1], mode);
	Py_XDECREF(c[0]);
	Py_XDECREF(c[1]);
	return r;
}

static PyObject *api_choose(PyObject *self, PyObject *op, PyObject *out, int mode)
{
	PyObject *c, *r;

	if (api_copy(op, &c) < 0)
		return NULL;
	r = ((PyObject * (*)(PyObject *, PyObject *, PyObject *, int))
	         api_real[API_CHOOSE])(self, c, out, mode);
	Py_XDECREF(c);
	return r;
}

static PyObject *api_search_sorted(PyObject *self, PyObject *op, int side, PyObject *perm)
{
	PyObject *c[2] = {NULL}, *r = NULL;

	if (api_copy(op, &c[0]) == 0 && api_copy(perm, &c[1]) == 0)
		r = ((PyObject * (*)(PyObject *, PyObject *, int, PyObject *))
		         api_real[API_SEARCH_SORTED])(self, c[0], side, c[1]);
	Py_XDECREF(c[0]);
	Py_XDECREF(c[1]);
	return r;
}

static int api_copies(void)
{
	static const struct {
		int at;
		void *fn;
	} entries[N_API_COPIED] = {
	    {API_CONVERT_COMMON, (void *)api_convert_common},
	    {API_FROM_ANY, (void *)api_from_any},
	    {API_ENSURE_ARRAY, (void *)api_ensure_array},
	    {API_ENSURE_ANY_ARRAY, (void *)api_ensure_any_array},
	    {API_COPY_OBJECT, (void *)api_copy_object},
	    {API_CHECK_FROM_ANY, (void *)api_check_from_any},
	    {API_TAKE, (void *)api_take},
	    {API_PUT, (void *)api_put},
	    {API_CHOOSE, (void *)api_choose},
	    {API_SEARCH_SORTED, (void *)api_search_sorted},
	    {API_INTP_FROM_SEQUENCE, (void *)api_intp_from_sequence},
	    {API_CONCATENATE, (void *)api_concatenate},
	    {API_INNER, (void *)api_inner},
	    {API_MATRIX_PRODUCT, (void *)api_matrix_product},
	    {API_DESCR_CONVERTER, (void *)api_descr_converter},
	    {API_DESCR_CONVERTER2, (void *)api_descr_converter2},
	    {API_INTP_CONVERTER, (void *)api_intp_converter},
	    {API_WHERE, (void *)api_where},
	    {API_LEXSORT, (void *)api_lexsort},
	    {API_MATRIX_PRODUCT2, (void *)api_matrix_product2},
	};
	PyObject *m =
	    PyDict_GetItemString(PyImport_GetModuleDict(), "numpy.core._multiarray_umath");
	PyObject *cap = m ? PyObject_GetAttrString(m, "_ARRAY_API") : NULL;

	np_api = cap && PyCapsule_CheckExact(cap) ? PyCapsule_GetPointer(cap, NULL) : NULL;
	Py_XDECREF(cap);
	/* The table as known: its types where numpy 1.x puts them. */
	if (!np_api || np_api[2] != (void *)ndarray_type || np_api[3] != (void *)np_dtype) {
		PyErr_SetString(PyExc_RuntimeError, "numpy's C interface is not as known");
		return -1;
	}
	for (int i = 0; i < N_API_COPIED; i++) {
		int at = entries[i].at;
		if (np_api[at] == entries[i].fn)
			continue;
		api_real[at] = np_api[at];
		np_api[at] = entries[i].fn;
	}
	return 0;
}

/* The slots of numpy's classes that convert the object they are given inside numpy (a
 * comparison's other operand: array, flat iterator, data type and scalar comparisons convert a
 * list where it is, and so does an array comparison whose ufunc failed; a scalar's or a flat
 * iterator's index; a flat iterator's and an nditer's item assignment): each of numpy's functions there is given private copies. numpy
 * calls a base class's slot itself (a scalar's comparison falls back to np.generic's), so the
 * function to call is known by the slot, not by the object's class: each of numpy's functions
 * has one of the sandbox's (numbered below), put in every class that has numpy's. */
enum { SLOT_COMPARE, SLOT_SUBSCRIPT, SLOT_ASSIGN, SLOT_ASSIGN_ITEM, N_SLOTS };
#define N_SLOT_REAL 48
static void *slot_real[N_SLOTS][N_SLOT_REAL];
static int n_slot_real[N_SLOTS];

static PyObject *compare_with(int i, PyObject *self, PyObject *other, int op)
{
	richcmpfunc real = (richcmpfunc)slot_real[SLOT_COMPARE][i];
	PyObject *c, *r;

	if (!pylayer_armed())
		return real(self, other, op);
	if (!(c = private_lists(other, 0)))
		return NULL;
	r = real(self, c, op);
	Py_DECREF(c);
	return r;
}

static PyObject *subscript_with(int i, PyObject *self, PyObject *key)
{
	binaryfunc real = (binaryfunc)slot_real[SLOT_SUBSCRIPT][i];
	PyObject *c, *r;

	if (!pylayer_armed())
		return real(self, key);
	if (!(c = private_lists(key, 0)))
		return NULL;
	r = real(self, c);
	Py_DECREF(c);
	return r;
}

/* The array a flat iterator walks (its base), or, for an nditer, its first operand that holds
 * objects; NULL (no error) for anything else. */
static PyObject *iterated_array(PyObject *it)
{
	PyObject *ops, *r = NULL;

	if (ndarray_type && (r = PyObject_GetAttrString(it, "base")) &&
	    PyObject_TypeCheck(r, ndarray_type))
		return r;
	Py_CLEAR(r);
	PyErr_Clear();
	if (!(ops = PyObject_GetAttrString(it, "operands"))) {
		PyErr_Clear();
		return NULL;
	}
	for (Py_ssize_t i = 0; PyTuple_Check(ops) && i < PyTuple_GET_SIZE(ops) && !r; i++)
		if (holds_objects(PyTuple_GET_ITEM(ops, i)))
			r = Py_NewRef(PyTuple_GET_ITEM(ops, i));
	Py_DECREF(ops);
	return r;
}

static int assign_with(int i, PyObject *self, PyObject *key, PyObject *value)
{
	objobjargproc real = (objobjargproc)slot_real[SLOT_ASSIGN][i];
	PyObject *k, *v = NULL;
	int rc = -1;

	if (!pylayer_armed())
		return real(self, key, value);
	if (!(k = private_lists(key, 0)))
		return -1;
	if (!value || (v = private_lists(value, 0))) {
		/* (a flat iterator's or an nditer's items: what it replaces, held) */
		PyObject *kept = NULL, *base = v ? iterated_array(self) : NULL;
		if (!holds_objects(base) ||
		    (kept = replaced_kept(base, PyObject_GetItem(self, k)))) {
			Py_INCREF(self);
			rc = real(self, k, v);
			Py_DECREF(self);
			Py_XDECREF(kept);
		}
		Py_XDECREF(base);
	}
	Py_XDECREF(v);
	Py_DECREF(k);
	return rc;
}

static int assign_item_with(int i, PyObject *self, Py_ssize_t at, PyObject *value)
{
	ssizeobjargproc real = (ssizeobjargproc)slot_real[SLOT_ASSIGN_ITEM][i];
	PyObject *v = NULL;
	int rc = -1;

	if (!pylayer_armed())
		return real(self, at, value);
	if (!value || (v = private_lists(value, 0))) {
		Py_INCREF(self);
		rc = real(self, at, v);
		Py_DECREF(self);
	}
	Py_XDECREF(v);
	return rc;
}

#define SLOT_FNS(i)                                                                                \
	static PyObject *compare_##i(PyObject *s, PyObject *o, int op)                             \
	{                                                                                          \
		return compare_with(i, s, o, op);                                                  \
	}                                                                                          \
	static PyObject *subscript_##i(PyObject *s, PyObject *k)                                   \
	{                                                                                          \
		return subscript_with(i, s, k);                                                    \
	}                                                                                          \
	static int assign_##i(PyObject *s, PyObject *k, PyObject *v)                               \
	{                                                                                          \
		return assign_with(i, s, k, v);                                                    \
	}                                                                                          \
	static int assign_item_##i(PyObject *s, Py_ssize_t at, PyObject *v)                        \
	{                                                                                          \
		return assign_item_with(i, s, at, v);                                              \
	}

SLOT_FNS(0)
SLOT_FNS(1)
SLOT_FNS(2)
SLOT_FNS(3)
SLOT_FNS(4)
SLOT_FNS(5)
SLOT_FNS(6)
SLOT_FNS(7)
SLOT_FNS(8)
SLOT_FNS(9)
SLOT_FNS(10)
SLOT_FNS(11)
SLOT_FNS(12)
SLOT_FNS(13)
SLOT_FNS(14)
SLOT_FNS(15)
SLOT_FNS(16)
SLOT_FNS(17)
SLOT_FNS(18)
SLOT_FNS(19)
SLOT_FNS(20)
SLOT_FNS(21)
SLOT_FNS(22)
SLOT_FNS(23)
SLOT_FNS(24)
SLOT_FNS(25)
SLOT_FNS(26)
SLOT_FNS(27)
SLOT_FNS(28)
SLOT_FNS(29)
SLOT_FNS(30)
SLOT_FNS(31)
SLOT_FNS(32)
SLOT_FNS(33)
SLOT_FNS(34)
SLOT_FNS(35)
SLOT_FNS(36)
SLOT_FNS(37)
SLOT_FNS(38)
SLOT_FNS(39)
SLOT_FNS(40)
SLOT_FNS(41)
SLOT_FNS(42)
SLOT_FNS(43)
SLOT_FNS(44)
SLOT_FNS(45)
SLOT_FNS(46)
SLOT_FNS(47)

static void *const slot_fn[N_SLOT_REAL][N_SLOTS] = {
    {(void *)compare_0, (void *)subscript_0, (void *)assign_0, (void *)assign_item_0},
    {(void *)compare_1, (void *)subscript_1, (void *)assign_1, (void *)assign_item_1},
    {(void *)compare_2, (void *)subscript_2, (void *)assign_2, (void *)assign_item_2},
    {(void *)compare_3, (void *)subscript_3, (void *)assign_3, (void *)assign_item_3},
    {(void *)compare_4, (void *)subscript_4, (void *)assign_4, (void *)assign_item_4},
    {(void *)compare_5, (void *)subscript_5, (void *)assign_5, (void *)assign_item_5},
    {(void *)compare_6, (void *)subscript_6, (void *)assign_6, (void *)assign_item_6},
    {(void *)compare_7, (void *)subscript_7, (void *)assign_7, (void *)assign_item_7},
    {(void *)compare_8, (void *)subscript_8, (void *)assign_8, (void *)assign_item_8},
    {(void *)compare_9, (void *)subscript_9, (void *)assign_9, (void *)assign_item_9},
    {(void *)compare_10, (void *)subscript_10, (void *)assign_10, (void *)assign_item_10},
    {(void *)compare_11, (void *)subscript_11, (void *)assign_11, (void *)assign_item_11},
    {(void *)compare_12, (void *)subscript_12, (void *)assign_12, (void *)assign_item_12},
    {(void *)compare_13, (void *)subscript_13, (void *)assign_13, (void *)assign_item_13},
    {(void *)compare_14, (void *)subscript_14, (void *)assign_14, (void *)assign_item_14},
    {(void *)compare_15, (void *)subscript_15, (void *)assign_15, (void *)assign_item_15},
    {(void *)compare_16, (void *)subscript_16, (void *)assign_16, (void *)assign_item_16},
    {(void *)compare_17, (void *)subscript_17, (void *)assign_17, (void *)assign_item_17},
    {(void *)compare_18, (void *)subscript_18, (void *)assign_18, (void *)assign_item_18},
    {(void *)compare_19, (void *)subscript_19, (void *)assign_19, (void *)assign_item_19},
    {(void *)compare_20, (void *)subscript_20, (void *)assign_20, (void *)assign_item_20},
    {(void *)compare_21, (void *)subscript_21, (void *)assign_21, (void *)assign_item_21},
    {(void *)compare_22, (void *)subscript_22, (void *)assign_22, (void *)assign_item_22},
    {(void *)compare_23, (void *)subscript_23, (void *)assign_23, (void *)assign_item_23},
    {(void *)compare_24, (void *)subscript_24, (void *)assign_24, (void *)assign_item_24},
    {(void *)compare_25, (void *)subscript_25, (void *)assign_25, (void *)assign_item_25},
    {(void *)compare_26, (void *)subscript_26, (void *)assign_26, (void *)assign_item_26},
    {(void *)compare_27, (void *)subscript_27, (void *)assign_27, (void *)assign_item_27},
    {(void *)compare_28, (void *)subscript_28, (void *)assign_28, (void *)assign_item_28},
    {(void *)compare_29, (void *)subscript_29, (void *)assign_29, (void *)assign_item_29},
    {(void *)compare_30, (void *)subscript_30, (void *)assign_30, (void *)assign_item_30},
    {(void *)compare_31, (void *)subscript_31, (void *)assign_31, (void *)assign_item_31},
    {(void *)compare_32, (void *)subscript_32, (void *)assign_32, (void *)assign_item_32},
    {(void *)compare_33, (void *)subscript_33, (void *)assign_33, (void *)assign_item_33},
    {(void *)compare_34, (void *)subscript_34, (void *)assign_34, (void *)assign_item_34},
    {(void *)compare_35, (void *)subscript_35, (void *)assign_35, (void *)assign_item_35},
    {(void *)compare_36, (void *)subscript_36, (void *)assign_36, (void *)assign_item_36},
    {(void *)compare_37, (void *)subscript_37, (void *)assign_37, (void *)assign_item_37},
    {(void *)compare_38, (void *)subscript_38, (void *)assign_38, (void *)assign_item_38},
    {(void *)compare_39, (void *)subscript_39, (void *)assign_39, (void *)assign_item_39},
    {(void *)compare_40, (void *)subscript_40, (void *)assign_40, (void *)assign_item_40},
    {(void *)compare_41, (void *)subscript_41, (void *)assign_41, (void *)assign_item_41},
    {(void *)compare_42, (void *)subscript_42, (void *)assign_42, (void *)assign_item_42},
    {(void *)compare_43, (void *)subscript_43, (void *)assign_43, (void *)assign_item_43},
    {(void *)compare_44, (void *)subscript_44, (void *)assign_44, (void *)assign_item_44},
    {(void *)compare_45, (void *)subscript_45, (void *)assign_45, (void *)assign_item_45},
    {(void *)compare_46, (void *)subscript_46, (void *)assign_46, (void *)assign_item_46},
    {(void *)compare_47, (void *)subscript_47, (void *)assign_47, (void *)assign_item_47},
};

static void **slot_at(int k, PyTypeObject *t)
{
	switch (k) {
	case SLOT_COMPARE:
		return (void **)&t->tp_richcompare;
	case SLOT_SUBSCRIPT:
		return t->tp_as_mapping ? (void **)&t->tp_as_mapping->mp_subscript : NULL;
	case SLOT_ASSIGN:
		return t->tp_as_mapping ? (void **)&t->tp_as_mapping->mp_ass_subscript : NULL;
	default:
		return t->tp_as_sequence ? (void **)&t->tp_as_sequence->sq_ass_item : NULL;
	}
}

/* t (walked with its subclasses, bases first): a function of numpy's in its slot k is entered
 * (from a class of numpy's own, not a Python class's) and replaced by its number's. */
static int slot_copies(PyTypeObject *t, void *arg)
{
	int k = (int)(intptr_t)arg, i;
	void **at = slot_at(k, t);

	if (!at || !*at)
		return 0;
	for (i = 0; i < n_slot_real[k]; i++)
		if (*at == slot_fn[i][k])
			return 0; /* a table shared with a class seen */
	/* A class of numpy's without a mapping or sequence table of its own shares its base's
	 * (PyType_Ready): one of the interpreter's (str's, for np.str_) is left as it is. */
	for (Py_ssize_t j = 0; k != SLOT_COMPARE && j < PyTuple_GET_SIZE(t->tp_mro); j++) {
		PyTypeObject *b = (PyTypeObject *)PyTuple_GET_ITEM(t->tp_mro, j);
		if (b != t && !(b->tp_flags & Py_TPFLAGS_HEAPTYPE) &&
		    strncmp(b->tp_name, "numpy.", 6) != 0 && slot_at(k, b) == at)
			return 0;
	}
	for (i = 0; i < n_slot_real[k] && slot_real[k][i] != *at; i++)
		;
	if (i == n_slot_real[k]) {
		if (t->tp_flags & Py_TPFLAGS_HEAPTYPE)
			return 0; /* a Python class's own (its methods call numpy's as they are) */
		if (i == N_SLOT_REAL) {
			PyErr_SetString(PyExc_RuntimeError, "too many of numpy's slot functions");
			return -1;
		}
		slot_real[k][n_slot_real[k]++] = *at;
	}
	rewrap_note(slot_real[k][i], slot_fn[i][k]);
	*at = slot_fn[i][k];
	PyType_Modified(t);
	return 0;
}

static int slots_copy(PyObject *np, PyTypeObject *nd)
{
	static const struct {
		const char *name;
		int slot;
	} slots[] = {
	    {"dtype", SLOT_COMPARE},     {"generic", SLOT_COMPARE},    {"flatiter", SLOT_COMPARE},
	    {"generic", SLOT_SUBSCRIPT}, {"nditer", SLOT_ASSIGN},      {"nditer", SLOT_ASSIGN_ITEM},
	    {"broadcast", SLOT_COMPARE}, {"flatiter", SLOT_SUBSCRIPT}, {"flatiter", SLOT_ASSIGN},
	};

	if (pyguard_walk(nd, slot_copies, (void *)(intptr_t)SLOT_COMPARE) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(slots) / sizeof(*slots); i++) {
		PyObject *t = PyObject_GetAttrString(np, slots[i].name);
		int rc = t && PyType_Check(t) ? pyguard_walk((PyTypeObject *)t, slot_copies,
		                                             (void *)(intptr_t)slots[i].slot)
		                              : -1;
		Py_XDECREF(t);
		if (rc < 0) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_RuntimeError, "numpy.%s is not as known",
				             slots[i].name);
			return -1;
		}
	}
	return 0;
}

/* The attributes set with a value numpy reads (ndarray's shape and strides, an nditer's
 * multi_index...): each of numpy's setters is given a private copy. The descriptor's closure
 * carries numpy's pair. */
struct setter_copied {
	getter get;
	setter set;
	void *closure;
};

static PyObject *getter_copied(PyObject *self, void *closure)
{
	struct setter_copied *s = closure;

	return s->get(self, s->closure);
}

/* ndarray's shape, strides and dtype setters (their pairs above). */
static struct setter_copied *shape_setter, *strides_setter, *dtype_setter, *flat_setter;

/* Compiled code keeps the pointer to an array's dimensions and strides it was given
 * (matplotlib's C++ array views hold the array and read PyArray_DIMS and PyArray_STRIDES at
 * each item), and a later conversion may run the code's own, which can set the array's shape
 * (numpy frees that block and makes another: the next array made took the freed one, its
 * strides read as the kept array's, an item read at any distance) or its strides (written in
 * place; with a dtype of one byte, strides checked for one byte had doubles read past the
 * array: its dtype keeps its item size while others hold it). An array held by anything
 * beside the code that sets it gets a copy of the block, which numpy replaces or rewrites;
 * the block the holder read stays as it was, never freed: an old shape of the same memory.
 * Any array the code sets so (a holder that hands its array back, it.base, leaves no reference
 * to count: 16 bytes a dimension kept each time); a library's when more than its name and the
 * statement's reference hold it. */
static void dims_kept(PyObject *a)
{
	struct np_array *arr = (struct np_array *)a;
	size_t n = 2 * (size_t)(arr->nd < 1 ? 1 : arr->nd);
	Py_ssize_t *copy;

	if ((Py_REFCNT(a) <= 2 && !pyguard_reader_is_user()) || arr->nd < 1 || !arr->dimensions ||
	    arr->strides != arr->dimensions + arr->nd)
		return;
	/* numpy's own allocator of these blocks (npy_alloc_cache_dim) takes them from
	 * PyMem_RawMalloc and gives them back to it. */
	if (!(copy = PyMem_RawMalloc(n * sizeof(*copy))))
		return; /* (no memory: numpy's setter fails the same way) */
	memcpy(copy, arr->dimensions, n * sizeof(*copy));
	arr->dimensions = copy;
	arr->strides = copy + arr->nd;
}

/* Do strides on a keep it within the memory under it: the block of the array at the bottom of
 * its bases when that one owns its data, else the buffer that one was made over, else the bytes
 * that one reaches. numpy checked against the buffer from the view's offset in it, but to its
 * length past the offset (getset.c's numbytes): a view starting n bytes into a bytearray reached n
 * bytes past its end (another array's items read and written). The same bounds as as_strided's
 * views (pydata.py DummyArray). */
static int strides_within(PyObject *a, const Py_ssize_t *strides)
{
	const struct np_array *arr = (const struct np_array *)a, *bottom = arr;
	char *first, *last, *lo, *hi;
	Py_buffer view;

	while (bottom->base && ndarray_type && PyObject_TypeCheck(bottom->base, ndarray_type))
		bottom = (const struct np_array *)bottom->base;
	if (bottom->flags & NP_OWNDATA) {
		Py_ssize_t n = descr_elsize(bottom->descr);
		for (int i = 0; i < bottom->nd; i++)
			n *= bottom->dimensions[i];
		first = bottom->data;
		last = first + n;
	} else if (bottom->base && PyObject_CheckBuffer(bottom->base) &&
	           PyObject_GetBuffer(bottom->base, &view, PyBUF_SIMPLE) == 0) {
		first = view.buf;
		last = first + view.len;
		PyBuffer_Release(&view);
	} else {
		PyErr_Clear();
		extent_of(bottom->data, descr_elsize(bottom->descr), bottom->nd, bottom->dimensions,
		          bottom->strides, &first, &last);
	}
	extent_of(arr->data, descr_elsize(arr->descr), arr->nd, arr->dimensions, strides, &lo, &hi);
	return lo == hi || (lo >= first && hi <= last);
}

/* The strides set on the array a, *value, as a plain tuple of ints (the reference replaced),
 * checked to stay far from npy_intp's limits with a's shape, and within the memory under a
 * (strides_within; numpy checks them too, exactly then). 0, or -1 with an error. */
static int strides_checked(PyObject *a, PyObject **value)
{
	const struct np_array *arr = (const struct np_array *)a;
	Py_ssize_t strides[NP_MAXDIMS];
	PyObject *t;
	int n = intp_values(*value, strides, &t);

	if (n < 0)
		return -1;
	Py_SETREF(*value, t);
	if (n == arr->nd &&
	    (!extent_bounded(descr_elsize(arr->descr), arr->nd, arr->dimensions, strides) ||
	     !strides_within(a, strides))) {
		PyErr_SetString(PyExc_ValueError,
		                "strides is not compatible with available memory");
		return -1;
	}
	return 0;
}

/* An array's shape, strides and data type change in place, and C code that holds the array
 * reads them again where it needs them: numpy's searchsorted took the size of a 1-D array, then
 * converted a later argument, whose __array__ (the code's) reshaped the array to one row (or
 * resized it to the same size, or gave it a data type of 8 one-byte items): the search read its
 * items at the new row's stride, far past the block; a ufunc's __array_prepare__ (any object's:
 * numpy looks it up on every input) set strides of 0 on an output whose loop was already fixed,
 * and handed back a small block of the same strides: the result written past it. They change
 * only on an array nothing else holds: the statement's reference and those the running frame
 * shows (geometry_shown), whoever changes them (using a weak reference adds none: an array
 * something refers to weakly has one reference fewer). */
static int weakly_held(PyObject *a)
{
	Py_ssize_t off = Py_TYPE(a)->tp_weaklistoffset;

	return off > 0 && *(PyObject **)((char *)a + off) != NULL;
}

/* The array a library's setter was let change for the code's checked statement
 * (geometry_set), until its first change. */
static PyObject *geometry_granted;

/* Does a change of a's geometry find only the statement's reference and those the running
 * frame can be seen to hold (pyframe_held_refs), whoever changes it, the code or a library by its
 * own statement or a call. Anything more is held by what cannot be seen: C code in the middle of
 * its work (np.concatenate keeps what an input's __array__ answered by one reference of its own,
 * and the code popped its own onto a library's `self.shape = shape`). */
static int geometry_shown(PyObject *a)
{
	return Py_REFCNT(a) <= 1 + pyframe_held_refs(a) - weakly_held(a);
}

/* Is the change of a's attribute name refused (an error set)? (granted: geometry_set let it.) */
static int geometry_refused(PyObject *a, const char *name, int granted)
{
	if (granted || geometry_shown(a))
		return 0;
	PyErr_Format(PyExc_ValueError,
	             "an array's %s is changed in place only while nothing else holds it in the "
	             "sandbox (code that holds it reads it again): %s makes another",
	             name,
	             strcmp(name, "dtype") == 0     ? "a.view(dtype)"
	             : strcmp(name, "strides") == 0 ? "numpy.lib.stride_tricks.as_strided(a, ...)"
	                                            : "a = a.reshape(shape)");
	return 1;
}

/* Was a's change let by geometry_set (then no longer)? */
static int geometry_grant_taken(PyObject *a)
{
	if (a != geometry_granted)
		return 0;
	geometry_granted = NULL;
	return 1;
}

static PyTypeObject *geometry_nd; /* numpy's ndarray, found as geometry_setter makes one */

/* A library's setter of an attribute of arrays as a property's setter (numpy.ma's shape and
 * dtype), made of three parts: before(a), pydata.py's, which may run anything (numpy.ma's mask
 * made a private view); the array's own change, here, with the value made plain data first (a
 * tuple of ints, a data type) and the statement checked as an array's own is (the property hands
 * its arguments on as they are: their references are the statement's), then nothing runs until
 * the change is made (the statement's check is let through once for that array: a grant open
 * while Python ran was taken by the code's own statement, nested under it, on the array C code
 * held then: V53a H1); and after(a), pydata.py's again (the mask follows). */
static PyObject *geometry_set(PyObject *closure, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *before = PyTuple_GET_ITEM(closure, 0), *after = PyTuple_GET_ITEM(closure, 2);
	PyObject *name = PyTuple_GET_ITEM(closure, 1), *a, *value = NULL, *r, *prev, *descr;
	PyTypeObject *nd = geometry_nd;
	int shape = PyUnicode_CompareWithASCIIString(name, "shape") == 0, rc;

	if (nargs != 2) {
		PyErr_SetString(PyExc_TypeError, "a setter takes the object and its value");
		return NULL;
	}
	a = args[0];
	/* (numpy's own ndarray, by identity: a class of the code's may take its name) */
	if (!nd || !PyObject_TypeCheck(a, nd) || !(descr = PyDict_GetItem(nd->tp_dict, name)) ||
	    !Py_TYPE(descr)->tp_descr_set) {
		PyErr_SetString(PyExc_TypeError, "the setter is an array's");
		return NULL;
	}
	if (!(r = PyObject_CallOneArg(before, a)))
		return NULL;
	Py_DECREF(r);
	if (shape) {
		PyObject *given =
		    PyLong_Check(args[1]) ? PyTuple_Pack(1, args[1]) : PySequence_Tuple(args[1]);
		Py_ssize_t n = given ? PyTuple_GET_SIZE(given) : 0;
		if (given && (value = PyTuple_New(n)))
			for (Py_ssize_t i = 0; i < n; i++) {
				Py_ssize_t v = PyNumber_AsSsize_t(PyTuple_GET_ITEM(given, i),
				                                  PyExc_ValueError);
				PyObject *x =
				    v == -1 && PyErr_Occurred() ? NULL : PyLong_FromSsize_t(v);
				if (!x) {
					Py_CLEAR(value);
					break;
				}
				PyTuple_SET_ITEM(value, i, x);
			}
		Py_XDECREF(given);
	} else
		value = PyObject_CallOneArg(np_dtype, args[1]);
	if (!value)
		return NULL;
	if (pylayer_armed() && geometry_refused(a, shape ? "shape" : "dtype", 0)) {
		Py_DECREF(value);
		return NULL;
	}
	prev = geometry_granted;
	geometry_granted = a;
	rc = Py_TYPE(descr)->tp_descr_set(descr, a, value);
	geometry_granted = prev;
	Py_DECREF(value);
	if (rc < 0)
		return NULL;
	return PyObject_CallOneArg(after, a);
}

static PyMethodDef geometry_set_def = {"geometry_set", (PyCFunction)(void (*)(void))geometry_set,
                                       METH_FASTCALL, NULL};

/* pydata.py's geometry_setter(before, name, after): the setter above, of 'shape' or 'dtype'. */
static PyObject *geometry_setter(PyObject *self, PyObject *args)
{
	PyObject *before, *after, *name, *closure, *r;

	(void)self;
	if (!PyArg_ParseTuple(args, "OUO:geometry_setter", &before, &name, &after))
		return NULL;
	if (!PyCallable_Check(before) || !PyCallable_Check(after) ||
	    (PyUnicode_CompareWithASCIIString(name, "shape") != 0 &&
	     PyUnicode_CompareWithASCIIString(name, "dtype") != 0)) {
		PyErr_SetString(PyExc_TypeError,
		                "geometry_setter takes two functions and 'shape' or 'dtype'");
		return NULL;
	}
	if (!geometry_nd) {
		PyObject *np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");
		PyObject *t = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
		if (!t || !PyType_Check(t)) {
			Py_XDECREF(t);
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_RuntimeError,
				                "numpy's ndarray is not as known");
			return NULL;
		}
		geometry_nd = (PyTypeObject *)t; /* (kept for good) */
	}
	if (!(closure = PyTuple_Pack(3, before, name, after)))
		return NULL;
	r = PyCFunction_New(&geometry_set_def, closure);
	Py_DECREF(closure);
	return r;
}

static PyMethodDef geometry_setter_def = {"geometry_setter", geometry_setter, METH_VARARGS, NULL};

/* numpy's matrix gives each new matrix two dimensions in its __array_finalize__ (`self.shape =
 * (1, n)`), while the C code that is making it holds it: a reference no frame shows, as C code
 * in the middle of its work holds the arrays it was given. The matrix numpy allocated last is
 * let take that one change in its first __array_finalize__ (numpy calls it right after the
 * allocation), to two dimensions and the same size, when it has fewer than two (a view, a
 * ravel, a flatten) and is made from an array that is not a matrix of other than two (matrix's
 * own __getitem__ was let too, for numpy's view of its one-dimensional intermediate, which a
 * 0-d array index makes: code of the code's ran in that method's frame and was let too, V61a
 * H1; pydata.py indexes by such an index through a plain view); any other matrix's, as any
 * array's. numpy's transpose and concatenate write the dimensions they made the array with
 * after the finalize: a matrix of one dimension transposed became (n, n) over n items, one of
 * three (`m[np.newaxis]`) wrote three into a block of two (V56a H1), and concatenate's output,
 * made from no array, took k rows of k items (V57a H1, V58a H1-H2): an array made from none
 * (concatenate's, np.ndarray.__new__'s) is not let. And no matrix of one dimension is left for
 * the code: an array becomes one only as numpy makes it (no `__class__` assignment to or from
 * matrix), a resize or a state keeps its two, and the finalize numpy skips while matrix's own
 * __getitem__ indexes (`_getitem`, a bool) is skipped in that method's frame only, with its
 * index made plain data before (a C __index__ ran there and made one: V58a H2). */
static PyTypeObject *matrix_type;
static allocfunc matrix_alloc_real;
static PyObject *matrix_finalize_real;
static PyObject *matrix_newborn; /* borrowed: compared only, until its first finalize */
static PyObject *matrix_getitem_code;
static setter class_set_prev;

static int matrix_of_other_than_two(PyObject *o)
{
	return o && PyObject_TypeCheck(o, matrix_type) && ((struct np_array *)o)->nd != 2;
}

/* A matrix given nd dimensions in place (a resize, a state): 0 when it keeps two (or is no
 * matrix), -1 with an error. A matrix of one transposed or concatenated wrote past its block
 * (V56a, V57a H1: `m.resize((1,))` made one). */
static int matrix_kept_two(PyObject *a, Py_ssize_t nd)
{
	if (!matrix_type || !PyObject_TypeCheck(a, matrix_type) || nd == 2)
		return 0;
	PyErr_SetString(PyExc_ValueError, "a matrix keeps two dimensions in the sandbox: "
	                                  "np.asarray(m) is an array of any shape");
	return -1;
}

static PyObject *matrix_alloc(PyTypeObject *t, Py_ssize_t n)
{
	PyObject *o = matrix_alloc_real(t, n);

	if (o && t == matrix_type)
		matrix_newborn = o;
	return o;
}

/* A matrix's _getitem, read as numpy's finalize reads it, running nothing of the code's: a
 * bool in its class or its own dictionary, whose keys are all str (a key of a str class of the
 * code's, put there by a library's `self.__dict__.update(**kw)`, ran its __eq__ at the
 * lookup: V61a H1), with attribute lookup as object's. 1, 0, or -1 (raise). */
static int matrix_getitem_flag(PyObject *obj)
{
	PyTypeObject *t = Py_TYPE(obj);
	PyObject *mro = t->tp_mro, *d, *v = NULL;
	int on = -1;

	if (t->tp_getattro != PyObject_GenericGetAttr || !mro || !PyTuple_Check(mro))
		return -1;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro) && !v; i++) {
		d = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
		if (!d || !pyreentry_dict_str_only(d))
			return -1;
		v = PyDict_GetItemString(d, "_getitem");
	}
	if (v && v != Py_True && v != Py_False)
		return -1; /* (a descriptor of the class's) */
	if (!(d = PyObject_GenericGetDict(obj, NULL))) {
		PyErr_Clear();
		return -1;
	}
	if (pyreentry_dict_str_only(d)) {
		PyObject *own = PyDict_GetItemString(d, "_getitem");
		v = own ? own : v;
		on = v == Py_True ? 1 : v == Py_False ? 0 : -1;
	}
	Py_DECREF(d);
	return on;
}

static PyObject *matrix_finalize(PyObject *self, PyObject *obj)
{
	PyObject *prev = geometry_granted, *r;
	int newborn = self == matrix_newborn && Py_TYPE(self) == matrix_type &&
	              ((struct np_array *)self)->nd < 2 && obj && obj != Py_None &&
	              !matrix_of_other_than_two(obj);

	if (self == matrix_newborn)
		matrix_newborn = NULL;
	/* (a bool, read as it is: an object of the code's there ran its __bool__ inside the
	 * finalize, while numpy's repeat had the source claim the result's length: V59a H1) */
	if (pylayer_armed() && obj && PyObject_TypeCheck(obj, matrix_type)) {
		int on = matrix_getitem_flag(obj);
		if (on < 0 || (on && !pyframe_runs(matrix_getitem_code))) {
			PyErr_SetString(
			    PyExc_ValueError,
			    "a matrix's _getitem is numpy's own, True while its __getitem__ "
			    "indexes (a matrix has two dimensions)");
			return NULL;
		}
	}
	if (newborn)
		geometry_granted = self;
	r = PyObject_CallFunctionObjArgs(matrix_finalize_real, self, obj, NULL);
	if (newborn)
		geometry_granted = prev;
	return r;
}

static PyMethodDef matrix_finalize_def = {"__array_finalize__", matrix_finalize, METH_O, NULL};

static int class_set_matrix(PyObject *self, PyObject *value, void *closure)
{
	if (pylayer_armed() && value && PyType_Check(value) &&
	    Py_TYPE(self) != (PyTypeObject *)value &&
	    (PyObject_TypeCheck(self, matrix_type) ||
	     PyType_IsSubtype((PyTypeObject *)value, matrix_type))) {
		PyErr_SetString(PyExc_TypeError,
		                "an array becomes a matrix only as numpy makes one in the sandbox "
		                "(np.asmatrix(a); a matrix has two dimensions)");
		return -1;
	}
	return class_set_prev(self, value, closure);
}

static int matrix_guard(PyObject *np)
{
	PyObject *t = PyObject_GetAttrString(np, "matrix"), *f = NULL, *d = NULL;
	int rc = -1;

	if (!t || !PyType_Check(t) || !(((PyTypeObject *)t)->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
	    !(f = PyDict_GetItemString(((PyTypeObject *)t)->tp_dict, "__array_finalize__")) ||
	    !PyFunction_Check(f)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError, "numpy's matrix is not as known");
		goto out;
	}
	matrix_type = (PyTypeObject *)t;
	matrix_finalize_real = Py_NewRef(f);
	if (!(d = PyDescr_NewMethod(matrix_type, &matrix_finalize_def)) ||
	    PyObject_SetAttrString(t, "__array_finalize__", d) < 0)
		goto out;
	matrix_alloc_real = matrix_type->tp_alloc;
	matrix_type->tp_alloc = matrix_alloc;
	Py_CLEAR(d);
	/* numpy's own __getitem__ (pydata.py's makes the index plain data, then calls it) */
	f = PyDict_GetItemString(matrix_type->tp_dict, "__getitem__");
	if (f && PyFunction_Check(f) && ((PyFunctionObject *)f)->func_dict)
		f = PyDict_GetItemString(((PyFunctionObject *)f)->func_dict, "__wrapped__");
	if (!f || !PyFunction_Check(f)) {
		PyErr_SetString(PyExc_RuntimeError, "numpy's matrix.__getitem__ is not as known");
		goto out;
	}
	matrix_getitem_code = Py_NewRef(PyFunction_GET_CODE(f));
	f = PyDict_GetItemString(PyBaseObject_Type.tp_dict, "__class__");
	if (!f || !Py_IS_TYPE(f, &PyGetSetDescr_Type) ||
	    !((PyGetSetDescrObject *)f)->d_getset->set) {
		PyErr_SetString(PyExc_RuntimeError, "object.__class__ is not as known");
		goto out;
	}
	class_set_prev = ((PyGetSetDescrObject *)f)->d_getset->set;
	((PyGetSetDescrObject *)f)->d_getset->set = class_set_matrix;
	rc = 0;
out:
	Py_XDECREF(d);
	Py_XDECREF(t);
	return rc;
}

static int setter_copied(PyObject *self, PyObject *value, void *closure)
{
	struct setter_copied *s = closure;
	int rc, granted = 0;

	if (!pylayer_armed() || !value)
		return s->set(self, value, s->closure);
	granted = geometry_grant_taken(self);
	if (!(value = private_lists(value, 0)))
		return -1;
	/* A shape or strides made plain data first (a tuple of ints: its items' __index__ may
	 * run anything), then the check, then nothing until the change. A shape set to what it
	 * is changes nothing (numpy.ma's `data._mask.shape = data.shape` on a mask the copy
	 * shares with the original): done as it is. */
	if (s == shape_setter || s == strides_setter) {
		const struct np_array *arr = (const struct np_array *)self;
		Py_ssize_t dims[NP_MAXDIMS];
		PyObject *t = NULL;
		int n = s == strides_setter ? strides_checked(self, &value)
		                            : intp_values(value, dims, &t);
		if (s == shape_setter)
			Py_SETREF(value, t);
		if (n < 0 || !value) {
			Py_XDECREF(value);
			return -1;
		}
		if (s == shape_setter && n == arr->nd &&
		    (n == 0 || memcmp(dims, arr->dimensions, (size_t)n * sizeof(*dims)) == 0)) {
			Py_DECREF(value);
			return 0;
		}
		if (geometry_refused(self, s == shape_setter ? "shape" : "strides", granted)) {
			Py_DECREF(value);
			return -1;
		}
	}
	/* numpy's setter converts the value with its own converter, inside, which none of the
	 * checks of a data type sees: it is given the data type np.dtype makes of the value
	 * (checked whole), which it takes as it is. */
	if (s == dtype_setter) {
		PyObject *d = PyObject_CallOneArg(np_dtype, value);
		Py_DECREF(value);
		if (!d)
			return -1;
		value = d;
		/* A flat iterator copied the array's dimensions and strides when made, and reads
		 * items of the array's current size with them (a byte array made one item of 4096
		 * bytes: each item read and written 4095 bytes past it); the iterator hands the
		 * array back (it.base) with no reference to tell it holds it. The code's arrays keep
		 * the size of their items (a.view(dtype) sets it on an array no one else holds yet);
		 * the libraries' change when nothing else holds them. */
		int resized = descr_elsize(value) != descr_elsize(((struct np_array *)self)->descr);
		if (!granted && resized && Py_REFCNT(self) > (pyguard_reader_is_user() ? 1 : 2)) {
			PyErr_SetString(
			    PyExc_ValueError,
			    "an array keeps the size of its items in the sandbox (views "
			    "and iterators of it read items of the new size at the old "
			    "places): a.view(dtype) makes a new array of another");
			Py_DECREF(value);
			return -1;
		}
		/* One of items of another size, or of the same size with a subarray on either side,
		 * changes the array's dimensions (64 doubles made 64 rows of 8 bytes), whoever
		 * changes it (scipy.sparse's dtype setter, `self.data.dtype = t`, on what the code's
		 * `data` handed it: np.concatenate's input, which the library's count of two let
		 * through: V54a H1) */
		if ((resized || descr_subarray(value) ||
		     descr_subarray(((struct np_array *)self)->descr)) &&
		    geometry_refused(self, "dtype", granted)) {
			Py_DECREF(value);
			return -1;
		}
	}
	if (s == shape_setter || s == strides_setter || s == dtype_setter)
		dims_kept(self);
	/* a.flat = values: numpy drops each object before it takes the one it copies, the same
	 * one when values is the array itself (a.flat = a freed an item the array kept, V75a H3):
	 * the array's objects are held while it writes (replaced_kept above) */
	if (s == flat_setter && holds_objects(self)) {
		PyObject *kept = objects_kept(self);
		rc = kept ? s->set(self, value, s->closure) : -1;
		Py_XDECREF(kept);
		Py_DECREF(value);
		return rc;
	}
	rc = s->set(self, value, s->closure);
	Py_DECREF(value);
	return rc;
}

static int setters_copy(PyTypeObject *t)
{
	PyObject *key, *value;
	Py_ssize_t pos = 0;

	while (PyDict_Next(t->tp_dict, &pos, &key, &value)) {
		PyGetSetDescrObject *d = (PyGetSetDescrObject *)value;
		struct setter_copied *s;
		PyGetSetDef *def;
		if (!PyObject_TypeCheck(value, &PyGetSetDescr_Type) || !d->d_getset->set ||
		    d->d_getset->set == setter_copied)
			continue;
		if (!(def = PyMem_RawMalloc(sizeof(*def) + sizeof(*s)))) {
			PyErr_NoMemory();
			return -1;
		}
		s = (struct setter_copied *)(def + 1);
		s->get = d->d_getset->get;
		s->set = d->d_getset->set;
		s->closure = d->d_getset->closure;
		*def = *d->d_getset;
		def->get = s->get ? getter_copied : NULL;
		def->set = setter_copied;
		def->closure = s;
		d->d_getset = def;
		if (strcmp(t->tp_name, "numpy.ndarray") == 0 && strcmp(def->name, "shape") == 0)
			shape_setter = s;
		if (strcmp(t->tp_name, "numpy.ndarray") == 0 && strcmp(def->name, "strides") == 0)
			strides_setter = s;
		if (strcmp(t->tp_name, "numpy.ndarray") == 0 && strcmp(def->name, "dtype") == 0)
			dtype_setter = s;
		if (strcmp(t->tp_name, "numpy.ndarray") == 0 && strcmp(def->name, "flat") == 0)
			flat_setter = s;
	}
	return 0;
}

static int entries_copy(PyObject *np, PyTypeObject *nd)
{
	static const char *const made[][2] = {
	    {"dtype", NULL},    {"generic", NULL},          {"broadcast", NULL},
	    {"nditer", "init"}, {"busdaycalendar", "init"},
	};
	PyObject *flat = PyObject_GetAttrString(np, "flatiter");
	PyTypeObject *ft = flat && PyType_Check(flat) ? (PyTypeObject *)flat : NULL;

	if (!ft || !ft->tp_as_mapping || !ft->tp_as_mapping->mp_subscript ||
	    !ft->tp_as_mapping->mp_ass_subscript) {
		Py_XDECREF(flat);
		PyErr_SetString(PyExc_RuntimeError, "numpy's flat iterator is not as known");
		return -1;
	}
	Py_DECREF(flat); /* numpy keeps it */
	for (size_t i = 0; i < sizeof(made) / sizeof(*made); i++) {
		PyObject *t = PyObject_GetAttrString(np, made[i][0]);
		int rc = t && PyType_Check(t)
		             ? pyguard_walk((PyTypeObject *)t, made_copies,
		                            made[i][1] ? (void *)init_copied : NULL)
		             : -1;
		if (rc == 0)
			rc = setters_copy((PyTypeObject *)t);
		Py_XDECREF(t);
		if (rc < 0) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_RuntimeError, "numpy.%s is not as known",
				             made[i][0]);
			return -1;
		}
	}
	if (functions_copy() < 0 || methods_copy(nd) < 0 || setters_copy(nd) < 0 ||
	    setters_copy(ft) < 0 || slots_copy(np, nd) < 0)
		return -1;
	if (!strides_setter || !dtype_setter) {
		PyErr_SetString(PyExc_RuntimeError,
		                "numpy's strides and dtype setters are not as known");
		return -1;
	}
	return api_copies();
}

/* ---- numpy's generators over a bit generator ----------------------------------------------
 *
 * RandomState(obj) and Generator(obj) take any object with a capsule and a lock as their bit
 * generator and draw through the capsule's function pointers, without owning what they point
 * into: the capsule of a bit generator nobody else held had them draw from freed memory (and
 * write its state there). While armed the bit generator is one of numpy's own, its capsule and
 * lock its class's (held with it); a seed is a value of a built-in type (no capsule of its own
 * to answer with). */
/* A bit generator's capsule points into the bit generator (its state and its functions)
 * without holding it: kept by the code past the bit generator's end, and answered by a
 * Generator subclass's bit_generator (or an object passing for a Generator) to scipy's
 * samplers, which read it by attribute, it had them draw through the function pointers of
 * whatever was laid in the freed object (any native call). The capsule a bit generator hands
 * out is now a new one over the same pointer, holding the bit generator while it lives. */
static const char capsule_name[] = "BitGenerator";
static PyObject *capsule_get_real; /* the class's own descriptor */

static void held_capsule_free(PyObject *capsule)
{
	Py_XDECREF((PyObject *)PyCapsule_GetContext(capsule));
}

static PyObject *held_capsule_get(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *real, *held;
	void *p;

	if (!obj || obj == Py_None)
		return Py_NewRef(self);
	if (!(real = Py_TYPE(capsule_get_real)->tp_descr_get(capsule_get_real, obj, type)))
		return NULL;
	p = PyCapsule_CheckExact(real) ? PyCapsule_GetPointer(real, capsule_name) : NULL;
	Py_DECREF(real);
	if (!p) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "the bit generator has no capsule");
		return NULL;
	}
	if (!(held = PyCapsule_New(p, capsule_name, held_capsule_free)))
		return NULL;
	if (PyCapsule_SetContext(held, Py_NewRef(obj)) < 0) {
		Py_DECREF(obj);
		Py_DECREF(held);
		return NULL;
	}
	return held;
}

/* A descriptor with a setter, so no instance's own capsule (a subclass's instance dict) is
 * read before it: a bit generator given another's capsule drew through a pointer into that
 * one, which it did not hold (freed, then laid over: the state written anywhere). */
static int held_capsule_set(PyObject *self, PyObject *obj, PyObject *value)
{
	(void)self;
	(void)obj;
	(void)value;
	PyErr_SetString(PyExc_AttributeError, "a bit generator's capsule is not set");
	return -1;
}

static PyTypeObject held_capsule_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.HeldCapsule",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_descr_get = held_capsule_get,
    .tp_descr_set = held_capsule_set,
};

static int capsule_guard(PyTypeObject *bit_generator)
{
	PyObject *d;

	if (PyType_Ready(&held_capsule_type) < 0)
		return -1;
	capsule_get_real = PyDict_GetItemString(bit_generator->tp_dict, "capsule");
	if (!capsule_get_real || !Py_TYPE(capsule_get_real)->tp_descr_get) {
		PyErr_SetString(PyExc_TypeError, "numpy's BitGenerator has no capsule as known");
		return -1;
	}
	Py_INCREF(capsule_get_real);
	if (!(d = PyType_GenericNew(&held_capsule_type, NULL, NULL)))
		return -1;
	if (PyDict_SetItemString(bit_generator->tp_dict, "capsule", d) < 0) {
		Py_DECREF(d);
		return -1;
	}
	Py_DECREF(d);
	PyType_Modified(bit_generator);
	return 0;
}

static initproc random_init_real[2];
static PyTypeObject *random_types[2];
static PyObject *bit_generator_type, *bit_generator_attr[2], *bit_generator_name[2];

/* numpy's bit generators that fill in the functions a Generator draws through (BitGenerator
 * itself leaves them NULL: a class of the code's beneath it, made and drawn from, called
 * address 0). */
#define CONCRETE_BIT_GENERATORS 5
static PyTypeObject *concrete_bit_generator[CONCRETE_BIT_GENERATORS];
static PyObject *concrete_init[CONCRETE_BIT_GENERATORS], *init_name;

static int own_bit_generator(PyObject *v)
{
	PyObject *mro = Py_TYPE(v)->tp_mro;
	int concrete = 0;

	if (!PyObject_TypeCheck(v, (PyTypeObject *)bit_generator_type))
		return 0;
	for (int i = 0; i < 2; i++)
		if (_PyType_Lookup(Py_TYPE(v), bit_generator_name[i]) != bit_generator_attr[i])
			return 0;
	for (Py_ssize_t i = 0; mro && !concrete && i < PyTuple_GET_SIZE(mro); i++)
		for (int k = 0; k < CONCRETE_BIT_GENERATORS && !concrete; k++)
			concrete =
			    PyTuple_GET_ITEM(mro, i) == (PyObject *)concrete_bit_generator[k];
	if (concrete) {
		/* (its __init__ numpy's own: a subclass's that skipped it left the state unmade,
		 * the draws through NULL) */
		PyObject *init = _PyType_Lookup(Py_TYPE(v), init_name);
		concrete = 0;
		for (int k = 0; k < CONCRETE_BIT_GENERATORS && !concrete; k++)
			concrete = init && init == concrete_init[k];
	}
	return concrete;
}

static int random_init(int which, PyObject *self, PyObject *args, PyObject *kw)
{
	static const char *const names[2] = {"seed", "bit_generator"};
	PyObject *v, *kwp = NULL;
	int rc;

	/* (keywords by their characters: a str subclass's could hide one from the lookup) */
	if (pylayer_armed() && kw && !(kw = kwp = pylayer_plain_kwargs(kw)))
		return -1;
	v = args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0
	        ? PyTuple_GET_ITEM(args, 0)
	        : (kw && PyDict_Check(kw) ? PyDict_GetItemString(kw, names[which]) : NULL);
	if (pylayer_armed() && !own_bit_generator(v ? v : Py_None) &&
	    (which == 1 || (v && (Py_TYPE(v)->tp_flags & Py_TPFLAGS_HEAPTYPE)))) {
		PyErr_SetString(PyExc_TypeError,
		                which
		                    ? "Generator takes one of numpy's bit generators in the sandbox"
		                    : "RandomState takes a seed (None, an int or ints) or one of "
		                      "numpy's bit generators in the sandbox");
		Py_XDECREF(kwp);
		return -1;
	}
	rc = random_init_real[which](self, args, kw);
	Py_XDECREF(kwp);
	return rc;
}

static int random_state_init(PyObject *self, PyObject *args, PyObject *kw)
{
	return random_init(0, self, args, kw);
}

static int generator_init(PyObject *self, PyObject *args, PyObject *kw)
{
	return random_init(1, self, args, kw);
}

static int replace_random_init(PyTypeObject *t, void *arg)
{
	int which = *(int *)arg;

	if (t->tp_init == random_init_real[which]) {
		t->tp_init = which ? generator_init : random_state_init;
		rewrap_note((void *)random_init_real[which], (void *)t->tp_init);
		PyType_Modified(t);
	}
	return 0;
}

static int random_guard(void)
{
	static const char *const classes[2] = {"RandomState", "Generator"};
	static const char *const attrs[2] = {"capsule", "lock"};
	PyObject *random = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy.random");

	if (!random)
		return 0;
	bit_generator_type = PyObject_GetAttrString(random, "BitGenerator");
	if (!bit_generator_type || !PyType_Check(bit_generator_type))
		goto unknown;
	{
		static const char *const concrete[CONCRETE_BIT_GENERATORS] = {
		    "MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64"};
		for (int k = 0; k < CONCRETE_BIT_GENERATORS; k++) {
			PyObject *c = PyObject_GetAttrString(random, concrete[k]);
			if (!c || !PyType_Check(c)) {
				Py_XDECREF(c);
				goto unknown;
			}
			concrete_bit_generator[k] = (PyTypeObject *)c; /* kept */
			if (!init_name && !(init_name = PyUnicode_InternFromString("__init__")))
				return -1;
			concrete_init[k] = _PyType_Lookup((PyTypeObject *)c, init_name);
			if (!concrete_init[k])
				goto unknown;
			Py_INCREF(concrete_init[k]);
		}
	}
	if (capsule_guard((PyTypeObject *)bit_generator_type) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		PyObject *t = PyObject_GetAttrString(random, classes[i]);
		if (!(bit_generator_name[i] = PyUnicode_InternFromString(attrs[i])) ||
		    !(bit_generator_attr[i] = Py_XNewRef(_PyType_Lookup(
		          (PyTypeObject *)bit_generator_type, bit_generator_name[i]))) ||
		    !t || !PyType_Check(t) || !((PyTypeObject *)t)->tp_init) {
			Py_XDECREF(t);
			goto unknown;
		}
		random_types[i] = (PyTypeObject *)t; /* numpy.random keeps it */
		Py_DECREF(t);
		random_init_real[i] = random_types[i]->tp_init;
		if (pyguard_walk(random_types[i], replace_random_init, &i) < 0)
			return -1;
	}
	return 0;
unknown:
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError, "numpy.random is not as known");
	return -1;
}

/* ---- raw Fortran wrappers ------------------------------------------------------------------
 *
 * The libraries' Fortran wrappers hand their arguments to Fortran as they are: the sizes, the
 * work arrays and the state a routine keeps between calls (SLSQP wrote 100.0 at the offset a
 * caller's n3 said, VODE continued with the length of y it had before: a chosen overflow). The
 * libraries call them with arguments they made; the user's code gets them only by a way round:
 * scipy's deprecated modules hand out their private modules' wrappers (scipy.optimize.slsqp),
 * and library classes hold some (an ode integrator's runner, BFGS's BLAS routines). The proxies
 * give none (pyproxy.c); while armed one is not called from the user's code, and one a class
 * holds is read only by library code. */
#define FORTRAN_TYPES_MAX 32
static PyTypeObject *fortran_types[FORTRAN_TYPES_MAX]; /* one a module: f2py's type is static */
static ternaryfunc fortran_call_real[FORTRAN_TYPES_MAX];
static int n_fortran_types;

int pydata_is_fortran(PyObject *v)
{
	PyTypeObject *t = Py_TYPE(v);

	return !(t->tp_flags & Py_TPFLAGS_HEAPTYPE) && strcmp(t->tp_name, "fortran") == 0;
}

/* An argument of a Fortran wrapper as it is handed on: a read-only array (or what numpy reads as
 * one: a memoryview, an object's __array__) as a writable copy of it, since f2py gives an array
 * it may overwrite (overwrite_a=True, intent(in,out)) to Fortran read-only or not (LAPACK's
 * factors were written into an immutable bytes object); anything else as it is. New
 * reference. */
static PyObject *fortran_arg(PyObject *v)
{
	PyObject *a, *args, *kw, *copy;

	if (v == Py_None || PyLong_Check(v) || PyFloat_Check(v) || PyComplex_Check(v) ||
	    PyUnicode_Check(v) || PyBytes_Check(v) || PyList_Check(v) || PyTuple_Check(v) ||
	    (PyCallable_Check(v) && !(ndarray_type && PyObject_TypeCheck(v, ndarray_type))) ||
	    !np_asarray_fn || !np_array_fn)
		return Py_NewRef(v); /* (f2py makes arrays of its own of sequences) */
	if (ndarray_type && PyObject_TypeCheck(v, ndarray_type))
		a = Py_NewRef(v);
	else if (!(a = PyObject_CallOneArg(np_asarray_fn, v)))
		return NULL;
	if (!ndarray_type || !PyObject_TypeCheck(a, ndarray_type) ||
	    (((struct np_array *)a)->flags & NP_WRITEABLE))
		return a;
	args = PyTuple_Pack(1, a);
	kw = Py_BuildValue("{s:O,s:O,s:s}", "copy", Py_True, "subok", Py_False, "order", "K");
	copy = args && kw ? PyObject_Call(np_array_fn, args, kw) : NULL;
	Py_XDECREF(args);
	Py_XDECREF(kw);
	Py_DECREF(a);
	return copy;
}

/* args and kw with fortran_arg's arguments (new references), or -1. */
static int fortran_args(PyObject *args, PyObject *kw, PyObject **args2, PyObject **kw2)
{
	PyObject *key, *v;
	Py_ssize_t pos = 0, n = PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : 0;

	*kw2 = NULL;
	if (!(*args2 = PyTuple_New(n)))
		return -1;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *a = fortran_arg(PyTuple_GET_ITEM(args, i));
		if (!a)
			goto fail;
		PyTuple_SET_ITEM(*args2, i, a);
	}
	if (!kw)
		return 0;
	if (!PyDict_Check(kw) || !(*kw2 = PyDict_New()))
		goto fail;
	while (PyDict_Next(kw, &pos, &key, &v)) {
		PyObject *a = fortran_arg(v);
		int rc = a ? PyDict_SetItem(*kw2, key, a) : -1;
		Py_XDECREF(a);
		if (rc < 0)
			goto fail;
	}
	return 0;
fail:
	Py_CLEAR(*args2);
	Py_CLEAR(*kw2);
	return -1;
}

static PyObject *fortran_call(PyObject *self, PyObject *args, PyObject *kw)
{
	for (int i = 0; i < n_fortran_types; i++) {
		PyObject *args2, *kw2, *r;
		if (Py_TYPE(self) != fortran_types[i])
			continue;
		if (!pylayer_armed())
			return fortran_call_real[i](self, args, kw);
		if (pyguard_reader_is_user()) {
			PyErr_SetString(
			    PyExc_TypeError,
			    "a raw Fortran wrapper is not called from the user's code in the "
			    "sandbox (the library's own functions call it)");
			return NULL;
		}
		if (fortran_args(args, kw, &args2, &kw2) < 0)
			return NULL;
		r = fortran_call_real[i](self, args2, kw2);
		Py_DECREF(args2);
		Py_XDECREF(kw2);
		return r;
	}
	PyErr_SetString(PyExc_SystemError, "a Fortran wrapper of an unknown module");
	return NULL;
}

static int fortran_type_guard(PyTypeObject *t)
{
	for (int i = 0; i < n_fortran_types; i++)
		if (fortran_types[i] == t)
			return 0;
	if (n_fortran_types == FORTRAN_TYPES_MAX || !t->tp_call) {
		PyErr_SetString(PyExc_RuntimeError, "more Fortran wrapper modules than known");
		return -1;
	}
	fortran_types[n_fortran_types] = t;
	fortran_call_real[n_fortran_types++] = t->tp_call;
	rewrap_note((void *)t->tp_call, (void *)fortran_call);
	t->tp_call = fortran_call;
	return 0;
}

/* An attribute of a library class given to library code that reads it, not to the user's: a
 * raw Fortran wrapper a class holds, or an attribute pydata.py names in library_only (below).
 * The user's code reading one is refused with the reason it was put here. */
typedef struct {
	PyObject_HEAD PyObject *inner; /* the attribute's own value or descriptor */
	PyObject *name;                /* its name */
	const char *why;
} library_only_object;

static void library_only_dealloc(PyObject *self)
{
	Py_XDECREF(((library_only_object *)self)->inner);
	Py_XDECREF(((library_only_object *)self)->name);
	Py_TYPE(self)->tp_free(self);
}

/* Library code reads it (its bytecode, compiled code it called, getattr with the name among
 * its constants); a library function's getattr by a name from data (CategoricalAccessor's
 * getattr(self._parent, name), typing's alias __getattr__, with an object and a name the user
 * gave) is refused as the user's own read. */
static PyObject *library_only_get(PyObject *self, PyObject *obj, PyObject *type)
{
	library_only_object *lo = (library_only_object *)self;
	descrgetfunc get = Py_TYPE(lo->inner)->tp_descr_get;

	if (pylayer_armed() && (pyguard_reader_is_user() || pyguard_read_by_data(lo->name))) {
		PyErr_SetString(PyExc_AttributeError, lo->why);
		return NULL;
	}
	return get ? get(lo->inner, obj, type) : Py_NewRef(lo->inner);
}

static PyTypeObject library_only_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.LibraryOnly",
    .tp_basicsize = sizeof(library_only_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = library_only_dealloc,
    .tp_descr_get = library_only_get,
    .tp_doc = "An attribute of a library class, read by library code only.",
};

/* Class t's attribute name (its value inner) put behind a LibraryOnly refusing with why. */
static int library_only_put(PyTypeObject *t, PyObject *name, PyObject *inner, const char *why)
{
	library_only_object *lo;
	int rc;

	if (Py_TYPE(inner) == &library_only_type)
		return 0;
	if (!(lo = PyObject_New(library_only_object, &library_only_type)))
		return -1;
	lo->inner = Py_NewRef(inner);
	lo->name = Py_NewRef(name);
	lo->why = why;
	/* The value at an existing key: the dict does not resize. */
	rc = PyDict_SetItem(t->tp_dict, name, (PyObject *)lo);
	Py_DECREF(lo);
	if (rc == 0)
		PyType_Modified(t);
	return rc;
}

/* Every Fortran wrapper in the loaded modules and their classes: its type's calls guarded, and
 * a class's put behind a LibraryOnly. */
static int fortran_guard(void)
{
	PyObject *modules = PyImport_GetModuleDict(), *mod, *key, *v, *items = NULL;
	Py_ssize_t pos = 0;
	int rc = -1;

	if (PyType_Ready(&library_only_type) < 0 || !(items = PyDict_Values(modules)))
		return -1;
	for (Py_ssize_t m = 0; m < PyList_GET_SIZE(items); m++) {
		PyObject *d;
		mod = PyList_GET_ITEM(items, m);
		if (!PyModule_Check(mod) || !(d = PyModule_GetDict(mod)))
			continue;
		pos = 0;
		while (PyDict_Next(d, &pos, &key, &v)) {
			PyObject *ck, *cv, *cd;
			Py_ssize_t cpos = 0;
			if (pydata_is_fortran(v) && fortran_type_guard(Py_TYPE(v)) < 0)
				goto out;
			if (!PyType_Check(v) || !(cd = ((PyTypeObject *)v)->tp_dict))
				continue;
			while (PyDict_Next(cd, &cpos, &ck, &cv)) {
				if (!pydata_is_fortran(cv))
					continue;
				if (fortran_type_guard(Py_TYPE(cv)) < 0 ||
				    library_only_put(
				        (PyTypeObject *)v, ck, cv,
				        "a raw Fortran wrapper a library class holds is "
				        "not given to the user's code in the sandbox") < 0)
					goto out;
			}
		}
	}
	rc = 0;
out:
	Py_DECREF(items);
	return rc;
}

/* ---- attributes for library code only ------------------------------------------------------
 *
 * Some compiled classes keep objects by borrowed pointer and rely on their callers to keep them
 * alive (pandas' object hash tables keep each key's address, and compare later keys with it): a
 * table the user's code filled itself, then freed a key of, compared with the freed block (a
 * fake object laid there: any memory). The attributes pydata.py names in library_only
 * ((class, name) pairs: methods, and fields that hand out such a table or the array its keys
 * are held by) are given to library code only, which uses them as the class expects; the
 * user's code reading one is refused. */
static int library_attrs_guard(PyObject *g)
{
	PyObject *names = PyDict_GetItemString(g, "library_only");

	if (!names)
		return 0;
	if (!PyList_Check(names) || PyType_Ready(&library_only_type) < 0) {
		PyErr_SetString(PyExc_TypeError, "library_only is not a list");
		return -1;
	}
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
		PyObject *pair = PyList_GET_ITEM(names, i), *inner, *why_obj;
		PyTypeObject *t;
		const char *why = "this attribute of a compiled library class is used by the "
		                  "library itself only in the sandbox (it keeps objects without "
		                  "holding them)";
		/* (class, name), or (class, name, why): the refusal's own reason. */
		if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 3 &&
		    PyUnicode_Check(why_obj = PyTuple_GET_ITEM(pair, 2))) {
			if (!(why = PyUnicode_AsUTF8(why_obj)))
				return -1;
			/* Its text lives as long as the tuple, kept in library_only for good. */
		} else if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) != 2) {
			PyErr_SetString(PyExc_TypeError, "library_only holds (class, name[, why])");
			return -1;
		}
		if (!PyTuple_Check(pair) || !PyType_Check(PyTuple_GET_ITEM(pair, 0)) ||
		    !(t = (PyTypeObject *)PyTuple_GET_ITEM(pair, 0))->tp_dict ||
		    !(inner = PyDict_GetItemWithError(t->tp_dict, PyTuple_GET_ITEM(pair, 1)))) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError,
				                "library_only names an attribute a class has not");
			return -1;
		}
		if (library_only_put(t, PyTuple_GET_ITEM(pair, 1), inner, why) < 0)
			return -1;
	}
	return 0;
}

/* pydata.py's checks of C classes' constructor arguments, {class: check}: while armed, a class
 * (or one beneath it) is initialised with the arguments its check returns. */
#define INIT_CHECKED_MAX 40
static struct {
	PyTypeObject *type;
	initproc real;
	PyObject *check;
} init_checked[INIT_CHECKED_MAX];
static int n_init_checked;

static int init_checked_call(PyObject *self, PyObject *args, PyObject *kw)
{
	for (int i = 0; i < n_init_checked; i++) {
		PyObject *r, *a, *k;
		int rc;
		if (!PyObject_TypeCheck(self, init_checked[i].type))
			continue;
		if (!pylayer_armed())
			return init_checked[i].real(self, args, kw);
		/* (the check and the class both get the keywords by their characters: a str
		 * subclass's could hide one from the check's lookup) */
		if (kw && !(kw = pylayer_plain_kwargs(kw)))
			return -1;
		r = PyObject_CallFunctionObjArgs(init_checked[i].check, args ? args : Py_None,
		                                 kw ? kw : Py_None, NULL);
		Py_XDECREF(kw);
		if (!r)
			return -1;
		if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 ||
		    !PyTuple_Check(a = PyTuple_GET_ITEM(r, 0)) ||
		    ((k = PyTuple_GET_ITEM(r, 1)) != Py_None && !PyDict_Check(k))) {
			Py_DECREF(r);
			PyErr_SetString(PyExc_SystemError,
			                "a constructor check answered no arguments");
			return -1;
		}
		rc = init_checked[i].real(self, a, k == Py_None ? NULL : k);
		Py_DECREF(r);
		return rc;
	}
	PyErr_SetString(PyExc_SystemError, "a checked constructor of an unknown class");
	return -1;
}

static int replace_checked_init(PyTypeObject *t, void *arg)
{
	initproc real = *(initproc *)arg;

	if (t->tp_init == real) {
		rewrap_note((void *)real, (void *)init_checked_call);
		t->tp_init = init_checked_call;
		PyType_Modified(t);
	}
	return 0;
}

static int inits_check(PyObject *g)
{
	PyObject *checks = PyDict_GetItemString(g, "init_checks"), *key, *value;
	Py_ssize_t pos = 0;

	while (checks && PyDict_Next(checks, &pos, &key, &value)) {
		PyTypeObject *t = (PyTypeObject *)key;
		initproc real;
		if (!PyType_Check(key) || !t->tp_init || n_init_checked == INIT_CHECKED_MAX) {
			PyErr_SetString(PyExc_TypeError,
			                "a constructor check is not for a C class");
			return -1;
		}
		real = t->tp_init;
		init_checked[n_init_checked].type = t;
		init_checked[n_init_checked].real = real;
		init_checked[n_init_checked++].check = Py_NewRef(value);
		if (pyguard_walk(t, replace_checked_init, &real) < 0)
			return -1;
	}
	return 0;
}

/* pydata.py's checks of C classes that take their arguments in tp_new (Cython's __cinit__,
 * run before any __init__), {class: check}: while armed, a class (or one beneath it) is made
 * with the arguments its check returns. */
#define NEW_CHECKED_MAX 16
static struct {
	PyTypeObject *type;
	newfunc real;
	PyObject *check;
} new_checked[NEW_CHECKED_MAX];
static int n_new_checked;

static PyObject *new_checked_call(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	for (int i = 0; i < n_new_checked; i++) {
		PyObject *r, *a, *k, *made;
		if (!PyType_IsSubtype(t, new_checked[i].type))
			continue;
		if (!pylayer_armed())
			return new_checked[i].real(t, args, kw);
		/* (keywords by their characters, as for the init checks) */
		if (kw && !(kw = pylayer_plain_kwargs(kw)))
			return NULL;
		r = PyObject_CallFunctionObjArgs(new_checked[i].check, args ? args : Py_None,
		                                 kw ? kw : Py_None, NULL);
		Py_XDECREF(kw);
		if (!r)
			return NULL;
		if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 ||
		    !PyTuple_Check(a = PyTuple_GET_ITEM(r, 0)) ||
		    ((k = PyTuple_GET_ITEM(r, 1)) != Py_None && !PyDict_Check(k))) {
			Py_DECREF(r);
			PyErr_SetString(PyExc_SystemError,
			                "a constructor check answered no arguments");
			return NULL;
		}
		made = new_checked[i].real(t, a, k == Py_None ? NULL : k);
		Py_DECREF(r);
		return made;
	}
	PyErr_SetString(PyExc_SystemError, "a checked constructor of an unknown class");
	return NULL;
}

static int news_check(PyObject *g)
{
	PyObject *checks = PyDict_GetItemString(g, "new_checks"), *key, *value;
	Py_ssize_t pos = 0;

	while (checks && PyDict_Next(checks, &pos, &key, &value)) {
		PyTypeObject *t = (PyTypeObject *)key;
		if (!PyType_Check(key) || !t->tp_new || t->tp_new == new_checked_call ||
		    n_new_checked == NEW_CHECKED_MAX) {
			PyErr_SetString(PyExc_TypeError,
			                "a constructor check is not for a C class");
			return -1;
		}
		new_checked[n_new_checked].type = t;
		new_checked[n_new_checked].real = t->tp_new;
		new_checked[n_new_checked++].check = Py_NewRef(value);
		if (pyguard_replace_new(t, t->tp_new, new_checked_call) < 0)
			return -1;
	}
	return 0;
}

/* pydata.py's methods for C classes (their dicts: the classes are immutable), {(class, name):
 * function}: a method found there runs instead of the C one. */
static int types_patch(PyObject *g)
{
	PyObject *patches = PyDict_GetItemString(g, "type_patches"), *key, *value;
	Py_ssize_t pos = 0;

	while (patches && PyDict_Next(patches, &pos, &key, &value)) {
		PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(key, 0);
		if (PyDict_SetItem(t->tp_dict, PyTuple_GET_ITEM(key, 1), value) < 0)
			return -1;
		PyType_Modified(t);
	}
	return 0;
}

/* pydata.py's pair_items: C classes (PIL's ImagePath.Path) whose item assignment, p[i] = (x, y),
 * took the address of the point in the object's array before reading the two numbers: a number
 * whose __float__ shrank the array (p.compact()) made the write land in freed memory. The point
 * is read here first, as the class reads it, into a tuple of two floats: the class's own
 * assignment then runs nothing of the user's. */
#define PAIR_TYPES_MAX 2
static struct {
	PyTypeObject *type;
	ssizeobjargproc real;
} pair_types[PAIR_TYPES_MAX];
static int n_pair_types;

/* A new reference: v's two numbers as floats when v is a pair, else v (refused by the class with
 * nothing read); NULL when a number is not one. */
static PyObject *pair_of_floats(PyObject *v)
{
	double x, y;

	if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2)
		return Py_NewRef(v);
	x = PyFloat_AsDouble(PyTuple_GET_ITEM(v, 0));
	if (x == -1.0 && PyErr_Occurred())
		return NULL;
	y = PyFloat_AsDouble(PyTuple_GET_ITEM(v, 1));
	if (y == -1.0 && PyErr_Occurred())
		return NULL;
	return Py_BuildValue("(dd)", x, y);
}

static int pair_assign(PyObject *self, Py_ssize_t i, PyObject *v)
{
	for (int k = 0; k < n_pair_types; k++) {
		ssizeobjargproc real = pair_types[k].real;
		Py_ssize_t n;
		int rc;
		if (!PyObject_TypeCheck(self, pair_types[k].type))
			continue;
		n = Py_TYPE(self)->tp_as_sequence->sq_length(self);
		if (n < 0)
			return -1;
		if (!v || i < 0 || i >= n) /* refused by the class, nothing read */
			return real(self, i, v);
		if (!(v = pair_of_floats(v)))
			return -1;
		rc = real(self, i, v);
		Py_DECREF(v);
		return rc;
	}
	PyErr_SetString(PyExc_SystemError, "an item assignment of an unknown class");
	return -1;
}

static int pair_items_guard(PyObject *g)
{
	PyObject *types = PyDict_GetItemString(g, "pair_items");

	for (Py_ssize_t i = 0; types && PyList_Check(types) && i < PyList_GET_SIZE(types); i++) {
		PyTypeObject *t = (PyTypeObject *)PyList_GET_ITEM(types, i);
		PyWrapperDescrObject *w;
		if (!PyType_Check(t) || !t->tp_as_sequence || !t->tp_as_sequence->sq_ass_item ||
		    !t->tp_as_sequence->sq_length || n_pair_types == PAIR_TYPES_MAX ||
		    !(w = (PyWrapperDescrObject *)PyDict_GetItemString(t->tp_dict,
		                                                       "__setitem__")) ||
		    !PyObject_TypeCheck(w, &PyWrapperDescr_Type) ||
		    w->d_wrapped != (void *)t->tp_as_sequence->sq_ass_item) {
			PyErr_SetString(PyExc_TypeError, "a class of points is not as known");
			return -1;
		}
		pair_types[n_pair_types].type = t;
		pair_types[n_pair_types++].real = t->tp_as_sequence->sq_ass_item;
		t->tp_as_sequence->sq_ass_item = pair_assign;
		w->d_wrapped = (void *)pair_assign;
		PyType_Modified(t);
	}
	return 0;
}

/* pydata.py's mat_reader: scipy.io.matlab's reader of MATLAB 5 files (the Cython class
 * VarReader5) looked up the numpy dtype of each data element in a C array of 20 by the element's
 * data type, read from the file, unchecked: the types with no dtype held NULL (SIGSEGV), those
 * past the array read the words after it as dtypes (an array of any dtype over the file's bytes).
 * Every element's tag is read by the class's first C method (cread_tag, the first entry of its
 * table of C methods, which its other methods call through): it is replaced by one that refuses
 * a data type with no dtype (ValueError) before any lookup. probe(type) reads one tag of that
 * type: read before, refused after (else the table is not as known and is left as it was). */
typedef int (*mat_tag_fn)(PyObject *self, uint32_t *type, uint32_t *count, char *data);
static mat_tag_fn mat_tag_real;
static uint32_t mat_types; /* bit t: data type t has a dtype */

static int mat_tag_checked(PyObject *self, uint32_t *type, uint32_t *count, char *data)
{
	int rc = mat_tag_real(self, type, count, data);

	if (rc >= 0 && (*type >= 32 || !(mat_types >> *type & 1))) {
		PyErr_Format(PyExc_ValueError,
		             "a data element of type %u in the MATLAB file: no such data type",
		             (unsigned)*type);
		return -1;
	}
	return rc;
}

/* 1 when probe(type) read the tag, 0 when it was refused (ValueError), -1 otherwise. */
static int mat_probe(PyObject *probe, long type)
{
	PyObject *r = PyObject_CallFunction(probe, "l", type);
	int rc;

	if (!r) {
		if (!PyErr_ExceptionMatches(PyExc_ValueError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	rc = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 3 && PyLong_Check(PyTuple_GET_ITEM(r, 0)) &&
	             PyLong_AsLong(PyTuple_GET_ITEM(r, 0)) == type
	         ? 1
	         : -1;
	Py_DECREF(r);
	return rc;
}

static int mat_reader_guard(PyObject *g)
{
	PyObject *spec = PyDict_GetItemString(g, "mat_reader"), *cls, *types, *probe, *cap;
	mat_tag_fn *table;

	if (!spec || !PyList_Check(spec) || PyList_GET_SIZE(spec) == 0)
		return 0; /* scipy is not loaded */
	if (PyList_GET_SIZE(spec) != 3)
		goto unknown;
	cls = PyList_GET_ITEM(spec, 0);
	types = PyList_GET_ITEM(spec, 1);
	probe = PyList_GET_ITEM(spec, 2);
	if (!PyType_Check(cls) || !PyTuple_Check(types) ||
	    !(cap = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, "__pyx_vtable__")) ||
	    !PyCapsule_CheckExact(cap) || !(table = PyCapsule_GetPointer(cap, NULL)))
		goto unknown;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++) {
		long t = PyLong_AsLong(PyTuple_GET_ITEM(types, i));
		if (t < 1 || t >= 20) /* the array's length */
			goto unknown;
		mat_types |= 1u << t;
	}
	if (mat_probe(probe, 20) != 1)
		goto unknown;
	mat_tag_real = table[0];
	table[0] = mat_tag_checked;
	if (mat_probe(probe, 20) == 0 && mat_probe(probe, 9) == 1)
		return 0;
	table[0] = mat_tag_real;
unknown:
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_TypeError, "scipy.io.matlab's VarReader5 is not as known");
	return -1;
}

/* The packages of the data stack: without one loaded, only the part of pydata.py before its
 * data stack is compiled (the rest cost the zygote of every server 1.6 MiB). */
static const char *const data_packages[] = {"numpy",    "pandas",  "scipy", "sympy", "matplotlib",
                                            "openpyxl", "sklearn", "PIL",   "tqdm",  NULL};
static const char data_part[] = "\n# ==== the data stack:";

/* The source to compile: NULL for the whole file, or a copy of the part before the data stack
 * (to be freed). */
static char *source_for_these_modules(void)
{
	const char *cut;

	for (const char *const *m = data_packages; *m; m++)
		if (PyDict_GetItemString(PyImport_GetModuleDict(), *m))
			return NULL;
	cut = strstr(pydata_py, data_part);
	return cut ? strndup(pydata_py, (size_t)(cut - pydata_py) + 1) : NULL;
}

/* The classes pydata.py names in final_classes may not be subclassed by the code. */
/* ---- pandas' vectors grow the arrays they made ------------------------------------------------
 *
 * pandas' hash tables collect what they find in vectors, each over an array of its own (its
 * `ao`, a field of compiled code no frame shows) that it grows in place as it appends, and
 * trims once when it hands it out (to_array; it never grows it again after: pandas refuses).
 * Those arrays are resized as the vector asks until it hands them out: each vector's array is
 * noted when the vector is made, and forgotten when it is freed (the fields of the array and
 * of the flag that says it was handed out are found once, in a vector made at start). Any
 * other array is resized only with the references its frame shows. */
struct vector_kind {
	PyTypeObject *t;
	newfunc new_real;
	destructor dealloc_real;
	Py_ssize_t ao_at;    /* offset of the array's field in the vector */
	Py_ssize_t shown_at; /* and of its flag that says it handed the array out */
};
static struct vector_kind vector_kinds[16];
static int n_vector_kinds;

struct vector_array {
	PyObject *vector, *ao; /* borrowed: the vector holds its array */
};
static struct vector_array *vector_arrays;
static size_t n_vector_arrays, cap_vector_arrays;

static const struct vector_kind *vector_kind_of(PyTypeObject *t)
{
	for (; t; t = t->tp_base)
		for (int i = 0; i < n_vector_kinds; i++)
			if (vector_kinds[i].t == t)
				return &vector_kinds[i];
	return NULL;
}

static void vector_forget(PyObject *v)
{
	for (size_t i = 0; i < n_vector_arrays; i++)
		if (vector_arrays[i].vector == v)
			vector_arrays[i--] = vector_arrays[--n_vector_arrays];
}

static int vector_array_of(PyObject *a)
{
	for (size_t i = 0; i < n_vector_arrays; i++) {
		PyObject *v = vector_arrays[i].vector;
		const struct vector_kind *k;
		int shown;
		if (vector_arrays[i].ao != a || !(k = vector_kind_of(Py_TYPE(v))))
			continue;
		memcpy(&shown, (char *)v + k->shown_at, sizeof(shown));
		return *(PyObject **)((char *)v + k->ao_at) == a && !shown;
	}
	return 0;
}

static PyObject *vector_new(PyTypeObject *t, PyObject *args, PyObject *kw)
{
	const struct vector_kind *k = vector_kind_of(t);
	PyObject *v, *ao;

	if (!k)
		return PyErr_Format(PyExc_TypeError, "%s is not a vector as known", t->tp_name);
	if (!(v = k->new_real(t, args, kw)))
		return NULL;
	ao = *(PyObject **)((char *)v + k->ao_at);
	if (!ao)
		return v;
	if (n_vector_arrays == cap_vector_arrays) {
		size_t cap = cap_vector_arrays ? 2 * cap_vector_arrays : 64;
		struct vector_array *grown =
		    PyMem_RawRealloc(vector_arrays, cap * sizeof(*vector_arrays));
		if (!grown) {
			Py_DECREF(v);
			return PyErr_NoMemory();
		}
		vector_arrays = grown;
		cap_vector_arrays = cap;
	}
	vector_arrays[n_vector_arrays].vector = v;
	vector_arrays[n_vector_arrays++].ao = ao;
	return v;
}

static void vector_dealloc(PyObject *v)
{
	const struct vector_kind *k = vector_kind_of(Py_TYPE(v));

	vector_forget(v);
	k->dealloc_real(v);
}

/* Where in a vector of class t its array is (the one field that is the array to_array hands
 * out, in a vector made here) and its flag (the one int that to_array turned from 0 to 1):
 * 0, or -1 when either is not found once. */
static int vector_fields(PyTypeObject *t, Py_ssize_t *ao_at, Py_ssize_t *shown_at)
{
	PyObject *v = PyObject_CallNoArgs((PyObject *)t), *ao = NULL;
	char before[256];
	Py_ssize_t size = t->tp_basicsize;

	*ao_at = *shown_at = -1;
	if (v && size <= (Py_ssize_t)sizeof(before)) {
		memcpy(before, v, (size_t)size);
		ao = PyObject_CallMethod(v, "to_array", NULL);
	}
	if (ao && ndarray_type && Py_TYPE(ao) == ndarray_type) {
		for (Py_ssize_t off = sizeof(PyObject);
		     off + (Py_ssize_t)sizeof(PyObject *) <= size; off += sizeof(PyObject *))
			if (*(PyObject **)((char *)v + off) == ao)
				*ao_at = *ao_at == -1 ? off : -2;
		for (Py_ssize_t off = sizeof(PyObject); off + (Py_ssize_t)sizeof(int) <= size;
		     off += sizeof(int)) {
			int was, now;
			memcpy(&was, before + off, sizeof(was));
			memcpy(&now, (char *)v + off, sizeof(now));
			if (was == 0 && now == 1)
				*shown_at = *shown_at == -1 ? off : -2;
		}
	}
	PyErr_Clear();
	Py_XDECREF(ao);
	Py_XDECREF(v);
	return *ao_at >= 0 && *shown_at >= 0 ? 0 : -1;
}

static int vectors_guard(void)
{
	PyObject *m = PyDict_GetItemString(PyImport_GetModuleDict(), "pandas._libs.hashtable");
	PyObject *names, *dict;

	if (!m)
		return 0;
	if (!(dict = PyModule_GetDict(m)) || !(names = PyDict_Keys(dict)))
		return -1;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
		PyObject *name = PyList_GET_ITEM(names, i), *c = PyDict_GetItem(dict, name);
		PyTypeObject *t = (PyTypeObject *)c;
		const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
		size_t len = n ? strlen(n) : 0;
		Py_ssize_t ao_at, shown_at;
		if (!n || !c || !PyType_Check(c) || len <= 6 ||
		    strcmp(n + len - 6, "Vector") != 0 || (t->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
		    !t->tp_new || !t->tp_dealloc)
			continue;
		if (vector_fields(t, &ao_at, &shown_at) < 0)
			continue; /* (no array of its own: a StringVector's is made when handed out) */
		if (n_vector_kinds == (int)(sizeof(vector_kinds) / sizeof(vector_kinds[0]))) {
			Py_DECREF(names);
			PyErr_SetString(PyExc_RuntimeError, "pandas has more vectors than known");
			return -1;
		}
		vector_kinds[n_vector_kinds++] =
		    (struct vector_kind){t, t->tp_new, t->tp_dealloc, ao_at, shown_at};
		t->tp_new = vector_new;
		t->tp_dealloc = vector_dealloc;
	}
	Py_DECREF(names);
	return 0;
}

static int final_guard(PyObject *g)
{
	PyObject *list = PyDict_GetItemString(g, "final_classes");

	if (!list || !PyList_Check(list))
		return 0;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
		PyObject *t = PyList_GET_ITEM(list, i);
		if (!PyType_Check(t)) {
			PyErr_SetString(PyExc_TypeError, "final_classes holds a class only");
			return -1;
		}
		((PyTypeObject *)t)->tp_flags &= ~Py_TPFLAGS_BASETYPE;
	}
	return 0;
}

/* pandas' cached property (pydata.py _cached_properties): its __get__ read the object's _cache
 * with PyDict_Contains, no check that it is a dict (a bytearray's bytes were read as a dict's
 * table). The same, with the cache read once and refused unless it is a dict. */
static descrgetfunc cached_get_real;
static PyObject *str_cache, *str_fget, *str_name;

static PyObject *cached_get(PyObject *self, PyObject *obj, PyObject *type)
{
	PyObject *cache = NULL, *fget = NULL, *name = NULL, *val = NULL;

	if (!obj || obj == Py_None)
		return cached_get_real(self, obj, type);
	if (_PyObject_LookupAttr(obj, str_cache, &cache) < 0 ||
	    !(fget = PyObject_GetAttr(self, str_fget)) ||
	    !(name = PyObject_GetAttr(self, str_name)))
		goto out;
	if (!cache || cache == Py_None) {
		/* (getattr(obj, '_cache', None) is None: obj._cache = {}, or no cache at all) */
		Py_XSETREF(cache, PyDict_New());
		if (!cache)
			goto out;
		if (PyObject_SetAttr(obj, str_cache, cache) < 0) {
			if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
				PyErr_Clear();
				val = PyObject_CallOneArg(fget, obj);
			}
			goto out;
		}
	}
	if (!PyDict_Check(cache)) {
		PyErr_Format(PyExc_TypeError, "%.100s's _cache is a %.100s, not a dict",
		             Py_TYPE(obj)->tp_name, Py_TYPE(cache)->tp_name);
		goto out;
	}
	val = Py_XNewRef(PyDict_GetItemWithError(cache, name));
	if (val || PyErr_Occurred())
		goto out;
	val = PyObject_CallOneArg(fget, obj);
	if (val && PyDict_SetItem(cache, name, val) < 0)
		Py_CLEAR(val);
out:
	Py_XDECREF(cache);
	Py_XDECREF(fget);
	Py_XDECREF(name);
	return val;
}

static int cached_get_replaced(PyTypeObject *t, void *unused)
{
	(void)unused;
	if (t->tp_descr_get == cached_get_real) {
		t->tp_descr_get = cached_get;
		PyType_Modified(t);
	}
	return 0;
}

static int cached_guard(PyObject *g)
{
	PyObject *c = PyDict_GetItemString(g, "cached_property_class");
	PyTypeObject *t = (PyTypeObject *)c;

	if (!c || c == Py_None)
		return 0;
	if (!PyType_Check(c) || !t->tp_descr_get || t->tp_descr_get == cached_get) {
		PyErr_SetString(PyExc_TypeError, "pandas' cached property is not as known");
		return -1;
	}
	if (!(str_cache = PyUnicode_InternFromString("_cache")) ||
	    !(str_fget = PyUnicode_InternFromString("fget")) ||
	    !(str_name = PyUnicode_InternFromString("name")))
		return -1;
	cached_get_real = t->tp_descr_get;
	/* (any class beneath it too, and their __get__ wrappers) */
	return pyguard_walk(t, cached_get_replaced, NULL) < 0
	           ? -1
	           : pyguard_slot_everywhere(t, (void *)cached_get_real, (void *)cached_get);
}

static PyObject *files_given(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(pylayer_files_given());
}

static PyMethodDef files_given_def = {"files_given", files_given, METH_NOARGS,
                                      "Was the code given a workspace?"};

int pydata_init(void)
{
	PyObject *g = PyDict_New(), *name = PyUnicode_FromString("safepy_data"), *code = NULL,
	         *r = NULL, *prepare, *pyplot, *vars = NULL, *tb = NULL, *checked = NULL,
	         *own = NULL, *plain = NULL, *files = NULL;
	char *source = source_for_these_modules();
	int rc = -1;

	if (!g || !name || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    PyDict_SetItemString(g, "__name__", name) < 0 || !(tb = PyModule_New("traceback")) ||
	    pyresult_traceback_fill(tb) < 0 ||
	    PyDict_SetItemString(g, "sandbox_traceback", tb) < 0 ||
	    !(checked = PyCFunction_New(&geometry_setter_def, NULL)) ||
	    PyDict_SetItemString(g, "geometry_setter", checked) < 0 ||
	    !(own = PyCFunction_New(&own_arrays_def, NULL)) ||
	    PyDict_SetItemString(g, "own_arrays", own) < 0 ||
	    !(plain = pylayer_plain_kwargs_function()) ||
	    PyDict_SetItemString(g, "_plain_names", plain) < 0 ||
	    !(files = PyCFunction_New(&files_given_def, NULL)) ||
	    PyDict_SetItemString(g, "_files_given", files) < 0)
		goto out;
	code = Py_CompileString(source ? source : pydata_py, "<safepy data>", Py_file_input);
	r = code ? PyEval_EvalCode(code, g, g) : NULL;
	if (!r)
		goto out;
	Py_DECREF(r);
	prepare = PyDict_GetItemString(g, "prepare");
	r = prepare ? PyObject_CallNoArgs(prepare) : NULL;
	if (!r || types_patch(g) < 0 || inits_check(g) < 0 || news_check(g) < 0 ||
	    numpy_guard() < 0 || fortran_guard() < 0 || random_guard() < 0 ||
	    library_attrs_guard(g) < 0 || pair_items_guard(g) < 0 || mat_reader_guard(g) < 0 ||
	    final_guard(g) < 0 || cached_guard(g) < 0 || vectors_guard() < 0 || rewrap_all() < 0 ||
	    pyreentry_texts_hold_all() < 0)
		goto out;
	pyplot = PyDict_GetItemString(PyImport_GetModuleDict(), "matplotlib.pyplot");
	if (pyplot) {
		figures_fn = Py_XNewRef(PyDict_GetItemString(g, "figures"));
		vars = PyCFunction_New(&backend_vars_def, NULL);
		if (!vars || PyObject_SetAttrString(pyplot, "vars", vars) < 0)
			goto out;
	}
	if (PyDict_GetItemString(PyImport_GetModuleDict(), "matplotlib.pyplot") ||
	    PyDict_GetItemString(PyImport_GetModuleDict(), "PIL.Image"))
		display_fn = Py_XNewRef(PyDict_GetItemString(g, "display"));
	keep_files_fn = Py_XNewRef(PyDict_GetItemString(g, "keep_files"));
	call_begin_fn = Py_XNewRef(PyDict_GetItemString(g, "call_begin"));
	if (PyDict_GetItemString(PyImport_GetModuleDict(), "numpy") ||
	    PyDict_GetItemString(PyImport_GetModuleDict(), "pandas"))
		natural_fn = Py_XNewRef(PyDict_GetItemString(g, "natural"));
	rc = 0;
out:
	free(source);
	Py_XDECREF(vars);
	Py_XDECREF(tb);
	Py_XDECREF(checked);
	Py_XDECREF(own);
	Py_XDECREF(plain);
	Py_XDECREF(files);
	Py_XDECREF(r);
	Py_XDECREF(code);
	Py_XDECREF(name);
	Py_XDECREF(g); /* its functions keep it */
	return rc;
}

/* One (png, width, height) of figures() into im. 0, or -1 (a TypeError when malformed). */
static int image_take(PyObject *t, struct run_image *im)
{
	const char *p;
	Py_ssize_t n;
	uint32_t w, h;

	if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3 ||
	    !PyBytes_Check(PyTuple_GET_ITEM(t, 0))) {
		PyErr_SetString(PyExc_TypeError, "figures() gave something else than images");
		return -1;
	}
	p = PyBytes_AS_STRING(PyTuple_GET_ITEM(t, 0));
	n = PyBytes_GET_SIZE(PyTuple_GET_ITEM(t, 0));
	/* The header is what counts: the supervisor checks it again. */
	if (run_image_png_size((const unsigned char *)p, (size_t)n, &w, &h) < 0) {
		PyErr_SetString(PyExc_TypeError, "figures() gave something else than a PNG");
		return -1;
	}
	im->png = malloc((size_t)n);
	if (!im->png) {
		PyErr_NoMemory();
		return -1;
	}
	memcpy(im->png, p, (size_t)n);
	im->len = (size_t)n;
	im->width = w;
	im->height = h;
	return 0;
}

/* fn (none: nothing) called with no arguments; an error is dropped. */
static void call_quietly(PyObject *fn)
{
	PyObject *r = fn ? PyObject_CallNoArgs(fn) : NULL;

	Py_XDECREF(r);
	PyErr_Clear();
}

void pydata_call_begin(void)
{
	call_quietly(call_begin_fn);
}

void pydata_keep_files(void)
{
	call_quietly(keep_files_fn); /* (on an error the files close as they would have) */
}

/* msg (a new reference, or NULL) written to the call's stderr; errors are dropped. */
static void stderr_note(PyObject *msg)
{
	PyObject *w =
	    msg ? PyObject_CallMethod(capture_stream(CAPTURE_STDERR), "write", "O", msg) : NULL;

	Py_XDECREF(w);
	Py_XDECREF(msg);
	PyErr_Clear();
}

int pydata_figures(struct run_outcome *out, PyObject *value, int *late)
{
	PyObject *r, *list, *dropped;
	Py_ssize_t n;

	*late = 0;
	if (!figures_fn)
		return 0;
	r = PyObject_CallFunction(figures_fn, "IIIIO", (unsigned)RUN_IMAGE_SIDE_MAX,
	                          (unsigned)RUN_IMAGE_BYTES_MAX, (unsigned)RUN_IMAGES_BYTES_MAX,
	                          (unsigned)RUN_IMAGES_MAX, value ? value : Py_None);
	if (!r)
		return -1;
	if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3 ||
	    !PyList_Check(PyTuple_GET_ITEM(r, 0))) {
		Py_DECREF(r);
		PyErr_SetString(PyExc_TypeError, "figures() gave something else than images");
		return -1;
	}
	list = PyTuple_GET_ITEM(r, 0);
	dropped = PyTuple_GET_ITEM(r, 1);
	n = PyList_GET_SIZE(list);
	if (n > RUN_IMAGES_MAX)
		n = RUN_IMAGES_MAX;
	out->images = n ? calloc((size_t)n, sizeof(*out->images)) : NULL;
	for (Py_ssize_t i = 0; out->images && i < n; i++) {
		if (image_take(PyList_GET_ITEM(list, i), &out->images[i]) < 0) {
			Py_DECREF(r);
			return -1;
		}
		out->n_images = (size_t)i + 1;
	}
	if (PyLong_Check(PyTuple_GET_ITEM(r, 2)) && PyLong_AsLong(PyTuple_GET_ITEM(r, 2)) > 0) {
		stderr_note(PyUnicode_FromFormat(
		    "[%ld figure(s) not returned: the call's time ran out while the figures left "
		    "open were drawn for its result (close the ones not needed: plt.close(fig))]\n",
		    PyLong_AsLong(PyTuple_GET_ITEM(r, 2))));
		*late = 1;
	}
	if (PyLong_Check(dropped) && PyLong_AsLong(dropped) > 0)
		stderr_note(PyUnicode_FromFormat(
		    "[%ld figure(s) not returned: at most %d images of %d pixels a side and %u KiB "
		    "in all come back with a call]\n",
		    PyLong_AsLong(dropped), RUN_IMAGES_MAX, RUN_IMAGE_SIDE_MAX,
		    RUN_IMAGES_BYTES_MAX >> 10));
	Py_DECREF(r);
	return 0;
}

PyObject *pydata_natural(PyObject *v)
{
	PyObject *r;

	if (!natural_fn)
		return NULL;
	r = PyObject_CallOneArg(natural_fn, v);
	if (!r || r == Py_NotImplemented) {
		PyErr_Clear();
		Py_XDECREF(r);
		return NULL;
	}
	return r;
}

int pydata_display(PyObject *obj)
{
	PyObject *r;
	int shown;

	if (!display_fn)
		return 0;
	r = PyObject_CallOneArg(display_fn, obj);
	shown = r ? PyObject_IsTrue(r) : -1;
	Py_XDECREF(r);
	return shown;
}
