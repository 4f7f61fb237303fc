/* pyresult.c - a run's values into the outcome: the last value's repr (bounded) and its
 * exact-type JSON form, and an exception's type, message and traceback, formatted in C from the
 * frames' structures (no user code but repr() and the exceptions' __str__, which run armed; no
 * audit events, no files). Python errors met here are cleared and become text; a failed
 * allocation leaves a field NULL. */
#include "interp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JSON form of a value: at most this deep and this many values in all, else none. */
#define RESULT_DEPTH        32
#define RESULT_NODES        100000
/* Chained exceptions (__cause__, __context__) shown before the one raised. */
#define TRACEBACK_CHAIN_MAX 8
/* A syntax error's caret is placed at most this many columns in. */
#define CARET_COLUMN_MAX    4096

/* ---- values: repr and JSON ----------------------------------------------------------- */

static char *utf8_dup(PyObject *s)
{
	PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
	char *out;

	if (!b)
		return NULL;
	out = strndup(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
	Py_DECREF(b);
	return out;
}

/* s (owned, may be NULL) cut to at most max bytes around the cut marker; *truncated is set
 * when it was cut. When the cut cannot be allocated, s stays whole. */
static char *result_bound(char *s, size_t max, int *truncated)
{
	size_t n = s ? strlen(s) : 0;
	char *cut;

	if (n <= max)
		return s;
	cut = text_cut(s, n, max, TEXT_BYTES);
	if (!cut)
		return s;
	free(s);
	*truncated = 1;
	return cut;
}

/* Exact-type conversion, and numpy and pandas values through pydata_natural (library code,
 * armed). Returns 0 and *out (NULL = null), or -1 when the value has no natural JSON form. */
static int to_json(PyObject *v, int depth, size_t *nodes, json_object **out)
{
	if (++*nodes > RESULT_NODES || depth > RESULT_DEPTH)
		return -1;
	if (v == Py_None) {
		*out = NULL;
		return 0;
	}
	if (PyBool_Check(v)) {
		*out = json_object_new_boolean(v == Py_True);
		return *out ? 0 : -1;
	}
	if (PyLong_CheckExact(v)) {
		int overflow = 0;
		long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
		if (overflow || (x == -1 && PyErr_Occurred())) {
			PyErr_Clear();
			return -1;
		}
		*out = json_object_new_int64(x);
		return *out ? 0 : -1;
	}
	if (PyFloat_CheckExact(v)) {
		double d = PyFloat_AS_DOUBLE(v);
		if (!isfinite(d))
			return -1;
		*out = json_object_new_double(d);
		return *out ? 0 : -1;
	}
	if (PyUnicode_CheckExact(v)) {
		Py_ssize_t n;
		const char *s = PyUnicode_AsUTF8AndSize(v, &n);
		if (!s) {
			PyErr_Clear();
			return -1;
		}
		*out = json_object_new_string_len(s, (int)n);
		return *out ? 0 : -1;
	}
	if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
		PyObject *seq = v;
		Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
		json_object *arr = json_object_new_array_ext((int)n);
		if (!arr)
			return -1;
		for (Py_ssize_t i = 0; i < n && i < PySequence_Fast_GET_SIZE(seq); i++) {
			json_object *e = NULL;
			if (to_json(PySequence_Fast_GET_ITEM(seq, i), depth + 1, nodes, &e) < 0 ||
			    json_object_array_add(arr, e) < 0) {
				json_object_put(e);
				json_object_put(arr);
				return -1;
			}
		}
		*out = arr;
		return 0;
	}
	if (PyDict_CheckExact(v)) {
		json_object *obj = json_object_new_object();
		PyObject *k, *x;
		Py_ssize_t pos = 0;
		if (!obj)
			return -1;
		while (PyDict_Next(v, &pos, &k, &x)) {
			json_object *e = NULL;
			Py_ssize_t klen = 0;
			const char *ks =
			    PyUnicode_CheckExact(k) ? PyUnicode_AsUTF8AndSize(k, &klen) : NULL;
			if (!ks || strlen(ks) != (size_t)klen ||
			    to_json(x, depth + 1, nodes, &e) < 0 ||
			    json_object_object_add(obj, ks, e) < 0) {
				PyErr_Clear();
				json_object_put(e);
				json_object_put(obj);
				return -1;
			}
		}
		*out = obj;
		return 0;
	}
	/* numpy and pandas values: the plain value that stands for them, if any. */
	{
		PyObject *plain = pydata_natural(v);
		int rc = plain ? to_json(plain, depth + 1, nodes, out) : -1;
		Py_XDECREF(plain);
		return rc;
	}
}

/* ---- tracebacks (formatted in C: no audit events, no files) -------------------------- */

/* Line lineno (1-based) of the user's source, without its newline. */
static void source_line(const char *src, long lineno, struct strbuf *b)
{
	const char *p = src, *e;

	for (long i = 1; i < lineno && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return;
	while (*p == ' ' || *p == '\t')
		p++;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	if (e > p && e[-1] == '\r')
		e--;
	sb_str(b, "    ");
	sb_add(b, p, (size_t)(e - p));
	sb_str(b, "\n");
}

static char *type_name(PyObject *type)
{
	PyObject *mod = NULL, *qual = PyType_GetQualName((PyTypeObject *)type);
	PyObject *dict = ((PyTypeObject *)type)->tp_dict;
	char *out = NULL;
	const char *q;

	if (!qual) {
		PyErr_Clear();
		return strdup(((PyTypeObject *)type)->tp_name);
	}
	q = PyUnicode_AsUTF8(qual);
	if (dict)
		mod = PyDict_GetItemString(dict, "__module__");
	if (q && mod && PyUnicode_Check(mod)) {
		const char *m = PyUnicode_AsUTF8(mod);
		if (m && strcmp(m, "builtins") != 0 && strcmp(m, "__main__") != 0) {
			if (asprintf(&out, "%s.%s", m, q) < 0)
				out = NULL;
		}
	}
	if (!out && q)
		out = strdup(q);
	Py_DECREF(qual);
	PyErr_Clear();
	return out;
}

/* str(exc), under the sandbox: the user's __str__ may run. */
static char *exc_message(PyObject *exc)
{
	PyObject *s = PyObject_Str(exc);
	char *out;

	if (!s) {
		PyErr_Clear();
		return strdup("<str() of the exception failed>");
	}
	out = utf8_dup(s);
	Py_DECREF(s);
	PyErr_Clear();
	return out ? out : strdup("");
}

static void format_one(PyObject *exc, const char *src, const char *msg, struct strbuf *b)
{
	PyObject *tb = PyException_GetTraceback(exc);
	char *tn = type_name((PyObject *)Py_TYPE(exc));

	if (tb) {
		sb_str(b, "Traceback (most recent call last):\n");
		for (PyTracebackObject *t = (PyTracebackObject *)tb; t; t = t->tb_next) {
			/* The C structures, not the attributes: tb_frame is refused while armed. */
			PyCodeObject *co = PyFrame_GetCode(t->tb_frame);
			long lineno = t->tb_lineno;
			const char *file = PyUnicode_AsUTF8(co->co_filename);
			const char *name = PyUnicode_AsUTF8(co->co_name);
			PyErr_Clear();
			sb_printf(b, "  File \"%s\", line %ld, in %s\n", file ? file : "?", lineno,
			          name ? name : "?");
			if (file && strcmp(file, INTERP_FILENAME) == 0)
				source_line(src, lineno, b);
			Py_DECREF(co);
		}
		Py_DECREF(tb);
	}
	if (PyErr_GivenExceptionMatches(exc, PyExc_SyntaxError)) {
		PySyntaxErrorObject *se = (PySyntaxErrorObject *)exc;
		long lineno =
		    se->lineno && PyLong_Check(se->lineno) ? PyLong_AsLong(se->lineno) : 0;
		long offset =
		    se->offset && PyLong_Check(se->offset) ? PyLong_AsLong(se->offset) : 0;
		sb_printf(b, "  File \"%s\", line %ld\n", INTERP_FILENAME, lineno);
		if (se->text && PyUnicode_Check(se->text)) {
			const char *t = PyUnicode_AsUTF8(se->text);
			size_t lead = t ? strspn(t, " \t") : 0;
			if (t) {
				size_t len = strcspn(t + lead, "\r\n");
				sb_str(b, "    ");
				sb_add(b, t + lead, len);
				sb_str(b, "\n    ");
				for (long i = 1; i < offset - (long)lead && i < CARET_COLUMN_MAX;
				     i++)
					sb_str(b, " ");
				sb_str(b, "^\n");
			}
		}
		PyErr_Clear();
		if (se->msg && PyUnicode_Check(se->msg)) {
			char *m = utf8_dup(se->msg);
			sb_printf(b, "%s: %s\n", tn ? tn : "SyntaxError", m ? m : "");
			free(m);
			free(tn);
			return;
		}
	}
	if (msg && *msg)
		sb_printf(b, "%s: %s\n", tn ? tn : "Exception", msg);
	else
		sb_printf(b, "%s\n", tn ? tn : "Exception");
	free(tn);
}

/* The whole traceback, with chained exceptions first as CPython prints them. */
static void format_chain(PyObject *exc, const char *src, const char *msg, int depth,
                         struct strbuf *b)
{
	PyObject *cause = PyException_GetCause(exc);
	PyObject *ctx = PyException_GetContext(exc);

	if (depth < TRACEBACK_CHAIN_MAX) {
		if (cause && PyExceptionInstance_Check(cause)) {
			char *m = exc_message(cause);
			format_chain(cause, src, m, depth + 1, b);
			free(m);
			sb_str(b, "\nThe above exception was the direct cause of the following "
			          "exception:\n\n");
		} else if (ctx && PyExceptionInstance_Check(ctx) &&
		           !((PyBaseExceptionObject *)exc)->suppress_context) {
			char *m = exc_message(ctx);
			format_chain(ctx, src, m, depth + 1, b);
			free(m);
			sb_str(b, "\nDuring handling of the above exception, another exception "
			          "occurred:\n\n");
		}
	}
	Py_XDECREF(cause);
	Py_XDECREF(ctx);
	format_one(exc, src, msg, b);
}

/* ---- entry points -------------------------------------------------------------------- */

void pyresult_error(struct run_outcome *out, PyObject *exc, const char *src, size_t max)
{
	struct strbuf tb = {0};
	char *msg = exc_message(exc), *tb_text;
	int trunc = 0;

	out->error_type = type_name((PyObject *)Py_TYPE(exc));
	format_chain(exc, src, msg, 0, &tb);
	out->error_message = result_bound(msg, max, &trunc);
	tb_text = sb_take(&tb);
	out->error_traceback = result_bound(tb_text ? tb_text : strdup(""), max, &trunc);
	if (trunc)
		out->truncated = 1;
}

int pyresult_value(struct run_outcome *out, PyObject *value, size_t max, int *truncated)
{
	PyObject *r = PyObject_Repr(value);
	size_t nodes = 0;

	if (!r) {
		out->result_repr = strdup("<repr() failed>");
		return -1;
	}
	out->result_repr = result_bound(utf8_dup(r), max, truncated);
	Py_DECREF(r);
	if (to_json(value, 0, &nodes, &out->result) < 0) {
		out->result = NULL;
	} else if (out->result && strlen(json_object_to_json_string_ext(
	                              out->result, JSON_C_TO_STRING_PLAIN)) > max) {
		json_object_put(out->result);
		out->result = NULL;
		*truncated = 1;
	}
	return 0;
}
