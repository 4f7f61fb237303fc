/* capture.c - the worker's sys.stdout and sys.stderr: bounded in-memory captures that keep
 * the head and the tail of each stream and of the interleaved log. Python C API; functions
 * return 0 / -1 with a Python exception set, or NULL on ENOMEM where they return text. */
#include "worker_internal.h"

#include <stdlib.h>
#include <string.h>

/* A stream's kept bytes: the first half of the budget, then a ring of the last half. */
struct keep {
	size_t half; /* bytes kept at each end */
	char *head;  /* owned, half bytes */
	size_t head_len;
	char *ring;      /* owned, half bytes */
	size_t ring_pos; /* next write position */
	size_t ring_len; /* bytes held (<= half) */
	uint64_t total;  /* bytes written */
};

#define N_STREAMS 2 /* stdout, stderr */
#define N_KEEPS   3 /* the streams and the log */

static struct keep keeps[N_KEEPS]; /* indexed by enum capture_stream */
_Static_assert(CAPTURE_STDERR + 1 == N_STREAMS && CAPTURE_LOG + 1 == N_KEEPS,
               "keeps[] and streams[] are indexed by enum capture_stream");
static uint64_t flood_limit;
static uint64_t written;
static int flooded;
static PyObject *streams[N_STREAMS];
static PyObject *output_limit_error;

static int keep_init(struct keep *k, size_t half)
{
	k->half = half;
	k->head = malloc(half ? half : 1);
	k->ring = malloc(half ? half : 1);
	if (!k->head || !k->ring)
		return -1;
	return 0;
}

static void keep_add(struct keep *k, const char *p, size_t n)
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

char *capture_text(int s, int *truncated)
{
	struct keep *k = &keeps[s];
	size_t start = k->half ? (k->ring_pos + k->half - k->ring_len) % k->half : 0;
	size_t first = k->ring_len < k->half - start ? k->ring_len : k->half - start;
	uint64_t gap = k->total - k->head_len - k->ring_len;
	struct strbuf b = {0};
	char *tail, *out;

	if (gap == 0) /* the head and the ring meet: nothing was dropped */
		sb_add(&b, k->head, k->head_len);
	sb_add(&b, k->ring + start, first); /* the ring, oldest byte first */
	sb_add(&b, k->ring, k->ring_len - first);
	if (gap == 0)
		return sb_take(&b);
	*truncated = 1;
	tail = sb_take(&b);
	if (!tail)
		return NULL;
	out = text_join_cut(k->head, k->head_len, gap, tail, k->ring_len);
	free(tail);
	return out;
}

void capture_reset(void)
{
	for (int i = 0; i < N_KEEPS; i++) {
		keeps[i].head_len = 0;
		keeps[i].ring_pos = 0;
		keeps[i].ring_len = 0;
		keeps[i].total = 0;
	}
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

static PyObject *stream_write(StreamObject *self, PyObject *arg)
{
	PyObject *bytes;
	const char *p;
	Py_ssize_t n;

	if (!PyUnicode_Check(arg)) {
		PyErr_Format(PyExc_TypeError, "write() argument must be str, not %.80s",
		             Py_TYPE(arg)->tp_name);
		return NULL;
	}
	if (flooded) {
		PyErr_SetString(output_limit_error, "the output limit was exceeded; "
		                                    "further output is discarded");
		return NULL;
	}
	bytes = PyUnicode_AsEncodedString(arg, "utf-8", "backslashreplace");
	if (!bytes)
		return NULL;
	p = PyBytes_AS_STRING(bytes);
	n = PyBytes_GET_SIZE(bytes);
	keep_add(&keeps[self->which], p, (size_t)n);
	keep_add(&keeps[CAPTURE_LOG], p, (size_t)n);
	written += (uint64_t)n;
	Py_DECREF(bytes);
	if (written > flood_limit) {
		flooded = 1;
		PyErr_Format(output_limit_error, "more than %llu bytes of output were written",
		             (unsigned long long)flood_limit);
		return NULL;
	}
	return PyLong_FromSsize_t(PyUnicode_GET_LENGTH(arg));
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

static PyMethodDef stream_methods[] = {
    {"write", (PyCFunction)stream_write, METH_O, "Write a string to the captured output."},
    {"writelines", (PyCFunction)stream_writelines, METH_O, "Write each string."},
    {"flush", (PyCFunction)stream_none, METH_NOARGS, "Nothing to flush."},
    {"isatty", (PyCFunction)stream_false, METH_NOARGS, "Not a terminal."},
    {"readable", (PyCFunction)stream_false, METH_NOARGS, "Not readable."},
    {"seekable", (PyCFunction)stream_false, METH_NOARGS, "Not seekable."},
    {"writable", (PyCFunction)stream_true, METH_NOARGS, "Writable."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
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

int capture_init(size_t max, uint64_t flood)
{
	size_t half = max / 2;

	if (keep_init(&keeps[CAPTURE_STDOUT], half) || keep_init(&keeps[CAPTURE_STDERR], half) ||
	    keep_init(&keeps[CAPTURE_LOG], max)) {
		PyErr_NoMemory();
		return -1;
	}
	flood_limit = flood;
	if (PyType_Ready(&stream_type) < 0)
		return -1;
	output_limit_error = PyErr_NewExceptionWithDoc(
	    "builtins.OutputLimitExceeded", "The code wrote more output than the sandbox accepts.",
	    PyExc_BaseException, NULL);
	if (!output_limit_error)
		return -1;
	for (int i = 0; i < N_STREAMS; i++) {
		StreamObject *s = PyObject_New(StreamObject, &stream_type);
		if (!s)
			return -1;
		s->which = i;
		streams[i] = (PyObject *)s;
	}
	return 0;
}

PyObject *capture_stream(enum capture_stream s)
{
	return streams[s];
}
