/* capture.c - the worker's sys.stdout and sys.stderr: bounded in-memory captures that keep
 * the head and the tail of each stream and of the interleaved log, every character written
 * (NUL included). Each stream's .buffer takes bytes: valid UTF-8 is kept as it is, every
 * other byte becomes a \xNN escape, as decoding with "backslashreplace" gives. Python C API;
 * functions return 0 / -1 with a Python exception set, or -ENOMEM where they return text. */
#include "worker_internal.h"

#include <stdlib.h>
#include <string.h>

#define N_STREAMS 2                 /* stdout, stderr */
#define N_KEEPS   IPC_CAPTURE_KEEPS /* the streams and the log */

/* Each stream's kept bytes (ipc.h), indexed by enum capture_stream. */
static struct ipc_capture_keep keeps[N_KEEPS];
_Static_assert(CAPTURE_STDERR + 1 == N_STREAMS && CAPTURE_LOG + 1 == N_KEEPS,
               "keeps[] and streams[] are indexed by enum capture_stream");
/* Bytes written to a stream's buffer that end inside a UTF-8 sequence: the next bytes may
 * complete it. At most 3. */
struct pending {
	char b[4];
	size_t n;
};

static uint64_t flood_limit;
static uint64_t written;
static int flooded;
static PyObject *streams[N_STREAMS];
static PyObject *buffers[N_STREAMS];
static struct pending pending[N_STREAMS];
static PyObject *output_limit_error;

static int keep_init(struct ipc_capture_keep *k, size_t half)
{
	k->half = half;
	k->head = malloc(half ? half : 1);
	k->ring = malloc(half ? half : 1);
	if (!k->head || !k->ring)
		return -1;
	return 0;
}

static void keep_add(struct ipc_capture_keep *k, const char *p, size_t n)
{
	k->total += n;
	if (k->head_len < k->half) {
		size_t take = k->half - k->head_len;
		if (take > n)
			take = n;
		memcpy(k->head + k->head_len, p, take);
		k->head_len += take;
		p += take;
		n -= take;
	}
	if (k->half == 0)
		return;
	if (n >= k->half) {
		p += n - k->half;
		n = k->half;
	}
	while (n > 0) {
		size_t room = k->half - k->ring_pos;
		size_t take = n < room ? n : room;
		memcpy(k->ring + k->ring_pos, p, take);
		k->ring_pos = (k->ring_pos + take) % k->half;
		k->ring_len = k->ring_len + take > k->half ? k->half : k->ring_len + take;
		p += take;
		n -= take;
	}
}

static void flush_pending(int which);

int capture_text(int s, int *truncated, struct text *out)
{
	int rc;

	for (int i = 0; i < N_STREAMS; i++)
		flush_pending(i);
	rc = ipc_capture_text(&keeps[s], keeps[s].head, keeps[s].ring, truncated, out);
	if (rc == 0)
		text_returns_collapse(out);
	return rc;
}

uintptr_t capture_keeps_at(void)
{
	return (uintptr_t)keeps;
}

void capture_reset(void)
{
	for (int i = 0; i < N_KEEPS; i++) {
		keeps[i].head_len = 0;
		keeps[i].ring_pos = 0;
		keeps[i].ring_len = 0;
		keeps[i].total = 0;
	}
	for (int i = 0; i < N_STREAMS; i++)
		pending[i].n = 0;
	written = 0;
	flooded = 0;
}

int capture_flooded(void)
{
	return flooded;
}

/* ---- the stream type ---- */

typedef struct {
	PyObject_HEAD int which;
} StreamObject;

/* Keep UTF-8 text p[0..n) written to stream which. Returns 0, or -1 with OutputLimitExceeded
 * set once the flood limit is passed. */
static int capture_add(int which, const char *p, size_t n)
{
	keep_add(&keeps[which], p, n);
	keep_add(&keeps[CAPTURE_LOG], p, n);
	written += (uint64_t)n;
	if (written > flood_limit) {
		flooded = 1;
		PyErr_Format(output_limit_error, "more than %llu bytes of output were written",
		             (unsigned long long)flood_limit);
		return -1;
	}
	return 0;
}

static int refuse_when_flooded(void)
{
	if (!flooded)
		return 0;
	PyErr_SetString(output_limit_error, "the output limit was exceeded; further output is "
	                                    "discarded");
	return -1;
}

/* Keep the str s: every character, a lone surrogate as its backslash escape. */
static int capture_str(int which, PyObject *s)
{
	PyObject *bytes = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
	int rc;

	if (!bytes)
		return -1;
	rc = capture_add(which, PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
	Py_DECREF(bytes);
	return rc;
}

/* Keep bytes p[0..n) written to a stream's buffer, after the pending bytes of an earlier
 * write: decoded as UTF-8 with "backslashreplace", except for an incomplete sequence at the
 * end, which stays pending when final is 0. */
static int capture_bytes(int which, const char *p, size_t n, int final)
{
	struct pending *pd = &pending[which];
	Py_ssize_t used = 0;
	PyObject *s;
	char *all;
	size_t total = pd->n + n;
	int rc;

	if (total == 0)
		return 0;
	all = PyMem_Malloc(total);
	if (!all) {
		PyErr_NoMemory();
		return -1;
	}
	memcpy(all, pd->b, pd->n);
	memcpy(all + pd->n, p, n);
	s = PyUnicode_DecodeUTF8Stateful(all, (Py_ssize_t)total, "backslashreplace",
	                                 final ? NULL : &used);
	if (final)
		used = (Py_ssize_t)total;
	if (!s) {
		PyMem_Free(all);
		return -1;
	}
	/* What the decoder left should be the start of a sequence: at most 3 bytes. In a worker
	 * it has also held back a lone byte that cannot start one (0x80-0xBF), which then held
	 * back every later write: when it leaves more, all is decoded as it stands, escaped. */
	pd->n = total - (size_t)used;
	if (pd->n > 3) {
		Py_DECREF(s);
		pd->n = 0;
		s = PyUnicode_DecodeUTF8(all, (Py_ssize_t)total, "backslashreplace");
		if (!s) {
			PyMem_Free(all);
			return -1;
		}
	}
	memcpy(pd->b, all + used, pd->n);
	PyMem_Free(all);
	rc = capture_str(which, s);
	Py_DECREF(s);
	return rc;
}

/* The bytes a stream's buffer holds back become escapes: the stream is read, or text follows. */
static void flush_pending(int which)
{
	PyObject *type, *value, *tb;

	if (pending[which].n == 0)
		return;
	/* Called where no exception may leak out: an error here (memory, the flood limit
	 * already counted) is dropped. */
	PyErr_Fetch(&type, &value, &tb);
	if (capture_bytes(which, "", 0, 1) < 0)
		PyErr_Clear();
	pending[which].n = 0;
	PyErr_Restore(type, value, tb);
}

static PyObject *stream_write(StreamObject *self, PyObject *arg)
{
	if (!PyUnicode_Check(arg)) {
		PyErr_Format(PyExc_TypeError, "write() argument must be str, not %.80s",
		             Py_TYPE(arg)->tp_name);
		return NULL;
	}
	if (refuse_when_flooded() < 0)
		return NULL;
	flush_pending(self->which);
	if (capture_str(self->which, arg) < 0)
		return NULL;
	return PyLong_FromSsize_t(PyUnicode_GET_LENGTH(arg));
}

static PyObject *buffer_write(StreamObject *self, PyObject *arg)
{
	Py_buffer view;
	PyObject *r = NULL;

	if (PyUnicode_Check(arg)) {
		PyErr_SetString(PyExc_TypeError, "a bytes-like object is required, not 'str'");
		return NULL;
	}
	if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
		return NULL;
	if (refuse_when_flooded() == 0 &&
	    capture_bytes(self->which, view.buf, (size_t)view.len, 0) == 0)
		r = PyLong_FromSsize_t(view.len);
	PyBuffer_Release(&view);
	return r;
}

static PyObject *stream_none(StreamObject *self, PyObject *unused)
{
	Py_RETURN_NONE;
}

static PyObject *stream_false(StreamObject *self, PyObject *unused)
{
	Py_RETURN_FALSE;
}

static PyObject *stream_true(StreamObject *self, PyObject *unused)
{
	Py_RETURN_TRUE;
}

static PyObject *stream_writelines(StreamObject *self, PyObject *lines)
{
	PyObject *it = PyObject_GetIter(lines), *item;

	if (!it)
		return NULL;
	while ((item = PyIter_Next(it))) {
		PyObject *r = stream_write(self, item);
		Py_DECREF(item);
		if (!r) {
			Py_DECREF(it);
			return NULL;
		}
		Py_DECREF(r);
	}
	Py_DECREF(it);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *stream_get_buffer(StreamObject *self, void *closure)
{
	return Py_NewRef(buffers[self->which]);
}

static PyObject *stream_get_encoding(StreamObject *self, void *closure)
{
	return PyUnicode_FromString("utf-8");
}

static PyObject *stream_get_closed(StreamObject *self, void *closure)
{
	Py_RETURN_FALSE;
}

static PyObject *stream_get_name(StreamObject *self, void *closure)
{
	return PyUnicode_FromString(self->which == CAPTURE_STDOUT ? "<stdout>" : "<stderr>");
}

static PyObject *stream_repr(StreamObject *self)
{
	return PyUnicode_FromFormat("<captured %s>",
	                            self->which == CAPTURE_STDOUT ? "stdout" : "stderr");
}

static PyObject *buffer_repr(StreamObject *self)
{
	return PyUnicode_FromFormat("<captured %s buffer>",
	                            self->which == CAPTURE_STDOUT ? "stdout" : "stderr");
}

/* No file descriptor underneath: io.UnsupportedOperation, as an in-memory stream raises (the
 * fallbacks of code that asks, except OSError or except io.UnsupportedOperation, catch it). */
static PyObject *unsupported_operation; /* io.UnsupportedOperation */

static PyObject *stream_fileno(StreamObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	PyErr_SetString(unsupported_operation, "fileno");
	return NULL;
}

/* sys.stdout.reconfigure(encoding='utf-8'), which scripts call first thing: the captured
 * output is UTF-8 text already, written whole; the keywords a text stream takes are taken and
 * change nothing. */
static PyObject *stream_reconfigure(StreamObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"encoding",       "errors",        "newline",
	                         "line_buffering", "write_through", NULL};
	PyObject *v[5] = {NULL};

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOOO:reconfigure", kwlist, &v[0], &v[1],
	                                 &v[2], &v[3], &v[4]))
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef stream_methods[] = {
    {"write", (PyCFunction)stream_write, METH_O, "Write a string to the captured output."},
    {"writelines", (PyCFunction)stream_writelines, METH_O, "Write each string."},
    {"flush", (PyCFunction)stream_none, METH_NOARGS, "Nothing to flush."},
    {"isatty", (PyCFunction)stream_false, METH_NOARGS, "Not a terminal."},
    {"fileno", (PyCFunction)stream_fileno, METH_NOARGS, "No file descriptor: raises."},
    {"readable", (PyCFunction)stream_false, METH_NOARGS, "Not readable."},
    {"seekable", (PyCFunction)stream_false, METH_NOARGS, "Not seekable."},
    {"writable", (PyCFunction)stream_true, METH_NOARGS, "Writable."},
    {"reconfigure", (PyCFunction)(void (*)(void))stream_reconfigure, METH_VARARGS | METH_KEYWORDS,
     "Takes a text stream's settings; the output is UTF-8 text, written whole, whatever they "
     "say."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef buffer_methods[] = {
    {"write", (PyCFunction)buffer_write, METH_O, "Write bytes to the captured output."},
    {"flush", (PyCFunction)stream_none, METH_NOARGS, "Nothing to flush."},
    {"isatty", (PyCFunction)stream_false, METH_NOARGS, "Not a terminal."},
    {"fileno", (PyCFunction)stream_fileno, METH_NOARGS, "No file descriptor: raises."},
    {"readable", (PyCFunction)stream_false, METH_NOARGS, "Not readable."},
    {"seekable", (PyCFunction)stream_false, METH_NOARGS, "Not seekable."},
    {"writable", (PyCFunction)stream_true, METH_NOARGS, "Writable."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef buffer_getset[] = {
    {"closed", (getter)stream_get_closed, NULL, "False", NULL},
    {"name", (getter)stream_get_name, NULL, "stream name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"buffer", (getter)stream_get_buffer, NULL, "the binary stream underneath", NULL},
    {"encoding", (getter)stream_get_encoding, NULL, "utf-8", NULL},
    {"closed", (getter)stream_get_closed, NULL, "False", NULL},
    {"name", (getter)stream_get_name, NULL, "stream name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject stream_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.CapturedOutput",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Captured output of the running code.",
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_repr = (reprfunc)stream_repr,
};

static PyTypeObject buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.CapturedBuffer",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Captured output of the running code, written as bytes.",
    .tp_methods = buffer_methods,
    .tp_getset = buffer_getset,
    .tp_repr = (reprfunc)buffer_repr,
};

int capture_init(size_t max, uint64_t flood)
{
	if (keep_init(&keeps[CAPTURE_STDOUT], ipc_capture_half(max, IPC_CAPTURE_STDOUT)) ||
	    keep_init(&keeps[CAPTURE_STDERR], ipc_capture_half(max, IPC_CAPTURE_STDERR)) ||
	    keep_init(&keeps[CAPTURE_LOG], ipc_capture_half(max, IPC_CAPTURE_LOG))) {
		PyErr_NoMemory();
		return -1;
	}
	flood_limit = flood;
	if (PyType_Ready(&stream_type) < 0 || PyType_Ready(&buffer_type) < 0)
		return -1;
	{
		PyObject *io = PyImport_ImportModule("io");
		unsupported_operation =
		    io ? PyObject_GetAttrString(io, "UnsupportedOperation") : NULL;
		Py_XDECREF(io);
		if (!unsupported_operation)
			return -1;
	}
	output_limit_error = PyErr_NewExceptionWithDoc(
	    "builtins.OutputLimitExceeded", "The code wrote more output than the sandbox accepts.",
	    PyExc_BaseException, NULL);
	if (!output_limit_error)
		return -1;
	for (int i = 0; i < N_STREAMS; i++) {
		StreamObject *s = PyObject_New(StreamObject, &stream_type);
		StreamObject *b = PyObject_New(StreamObject, &buffer_type);
		if (!s || !b) {
			Py_XDECREF(s);
			Py_XDECREF(b);
			return -1;
		}
		s->which = i;
		b->which = i;
		streams[i] = (PyObject *)s;
		buffers[i] = (PyObject *)b;
	}
	return 0;
}

PyObject *capture_stream(enum capture_stream s)
{
	return streams[s];
}
