/* pyresult.c - a run's values into the outcome: the last value's repr (bounded) and its
 * exact-type JSON form, and an exception's type, message and traceback, formatted in C from the
 * frames' structures (no user code but repr() and the exceptions' __str__, which run armed; no
 * audit events, no files). Python errors met here are cleared and become text; a failed
 * allocation leaves a field NULL. */
#include "interp_internal.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JSON form of a value: at most this deep and this many values in all, else none. */
#define RESULT_DEPTH          32
#define RESULT_NODES          100000
/* Chained exceptions (__cause__, __context__) shown before the one raised. */
#define TRACEBACK_CHAIN_MAX   8
/* A traceback's entries, all of them (format_one's limit). */
#define TRACEBACK_ALL         LONG_MIN
/* Exception groups: sub-exceptions shown of one group, groups shown nested, and sub-exceptions
 * shown in all (CPython's traceback bounds the first two alike; the third bounds the work of a
 * group that holds the same group many times over). */
#define TRACEBACK_GROUP_WIDTH 15
#define TRACEBACK_GROUP_DEPTH 10
#define TRACEBACK_GROUP_TOTAL 1000
/* A syntax error's caret is placed at most this many columns in. */
#define CARET_COLUMN_MAX      4096

/* ---- values: repr and JSON ----------------------------------------------------------- */

/* The str s as UTF-8 into *out, every character kept (NUL too; a lone surrogate becomes a
 * backslash escape). Returns 0, or -1 with *out unchanged (the Python error cleared). */
static PyObject *utf8_part(PyObject *s, Py_ssize_t from, Py_ssize_t to)
{
	PyObject *part = PyUnicode_Substring(s, from, to), *b;

	if (!part)
		return NULL;
	b = PyUnicode_AsEncodedString(part, "utf-8", "backslashreplace");
	Py_DECREF(part);
	return b;
}

/* The bytes s[from..to) takes in UTF-8 with backslashreplace (a lone surrogate: \udxxx). */
static uint64_t utf8_size(PyObject *s, Py_ssize_t from, Py_ssize_t to)
{
	int kind = PyUnicode_KIND(s);
	const void *d = PyUnicode_DATA(s);
	uint64_t n = 0;

	if (kind == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(s))
		return (uint64_t)(to - from);
	for (Py_ssize_t i = from; i < to; i++) {
		Py_UCS4 c = PyUnicode_READ(kind, d, i);
		n += c < 0x80                    ? 1
		     : c < 0x800                 ? 2
		     : c >= 0xd800 && c < 0xe000 ? 6
		     : c < 0x10000               ? 3
		                                 : 4;
	}
	return n;
}

/* Texts longer than this many characters are taken as their head and tail, each half of it,
 * around the cut marker (every text is kept to far less): encoded whole, a repr of hundreds of
 * MiB took more memory than the call had left, and the text was lost. */
#define UTF8_WHOLE_MAX (1 << 20)

static int utf8_text(PyObject *s, struct text *out)
{
	Py_ssize_t len = PyUnicode_GET_LENGTH(s), half = UTF8_WHOLE_MAX / 2;
	PyObject *b, *tail;
	int rc;

	if (len <= UTF8_WHOLE_MAX) {
		b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
		if (!b) {
			PyErr_Clear();
			return -1;
		}
		rc = text_set(out, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
		Py_DECREF(b);
		return rc < 0 ? -1 : 0;
	}
	b = utf8_part(s, 0, half);
	tail = b ? utf8_part(s, len - half, len) : NULL;
	if (!b || !tail) {
		Py_XDECREF(b);
		PyErr_Clear();
		return -1;
	}
	rc = text_join_cut(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b),
	                   utf8_size(s, half, len - half), PyBytes_AS_STRING(tail),
	                   (size_t)PyBytes_GET_SIZE(tail), out);
	Py_DECREF(b);
	Py_DECREF(tail);
	return rc < 0 ? -1 : 0;
}

/* t cut to at most max bytes around the cut marker; *truncated is set when it was cut. When
 * the cut cannot be allocated, t stays whole. */
static void result_bound(struct text *t, size_t max, int *truncated)
{
	if (t->len <= max)
		return;
	if (text_cut(t->s, t->len, max, TEXT_BYTES, t) == 0)
		*truncated = 1;
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
	/* A numpy value's conversion runs Python code (a subclass's own item()) that may change
	 * or empty the container: each item, key and value is held while it is converted, and the
	 * size is read again at every step. */
	if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
		json_object *arr = json_object_new_array_ext((int)PySequence_Fast_GET_SIZE(v));
		if (!arr)
			return -1;
		for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++) {
			PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(v, i));
			json_object *e = NULL;
			int rc = to_json(item, depth + 1, nodes, &e);
			Py_DECREF(item);
			if (rc < 0 || json_object_array_add(arr, e) < 0) {
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
			const char *ks;
			int rc = -1;
			Py_INCREF(k);
			Py_INCREF(x);
			ks = PyUnicode_CheckExact(k) ? PyUnicode_AsUTF8AndSize(k, &klen) : NULL;
			if (ks && strlen(ks) == (size_t)klen &&
			    to_json(x, depth + 1, nodes, &e) == 0 &&
			    json_object_object_add(obj, ks, e) == 0)
				rc = 0;
			Py_DECREF(k);
			Py_DECREF(x);
			if (rc < 0) {
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

/* The sources of the session's calls, oldest first, each with the code it compiled into: a
 * function an earlier call defined shows that call's lines (the code of every call is named
 * INTERP_FILENAME). Bounded: the oldest are dropped first, and their functions' entries then
 * show no line rather than another call's. */
#define CALL_SOURCES_KEPT (16u << 20)
#define CALL_SOURCES_MAX  4096

/* A line whose statement the call's rewrite of a notebook command moved (interp.c): in the
 * line as compiled, the columns from `from` on are the statement's, delta columns right of where
 * it stands as written; those before it are the rewrite's own. */
struct line_move {
	long lineno, from, delta;
};
#define MOVES_MAX 64

struct call_text {
	PyObject *codes; /* the code objects the call's source compiled into (a tuple) */
	char *src;
	size_t len;
	struct line_move *moves;
	size_t n_moves;
};
/* The running call's source, for the lines of its own frames; NULL outside a call. */
static const char *call_source;
/* The running call's moved lines, until its codes are kept. */
static struct line_move moves_now[MOVES_MAX];
static size_t moves_now_n;
static struct call_text call_texts[CALL_SOURCES_MAX];
static size_t call_texts_n, call_texts_bytes;

static void call_text_drop_oldest(void)
{
	call_texts_bytes -= call_texts[0].len;
	Py_DECREF(call_texts[0].codes);
	free(call_texts[0].src);
	free(call_texts[0].moves);
	memmove(call_texts, call_texts + 1, (call_texts_n - 1) * sizeof(call_texts[0]));
	call_texts_n--;
}

void pyresult_call_codes(const char *src, PyObject *body, PyObject *expr, PyObject *assign)
{
	size_t len = strlen(src);
	struct call_text t = {NULL, NULL, len, NULL, 0};

	if (len > CALL_SOURCES_KEPT)
		return;
	t.codes = PyTuple_Pack(3, body ? body : Py_None, expr ? expr : Py_None,
	                       assign ? assign : Py_None);
	t.src = t.codes ? strdup(src) : NULL;
	if (t.src && moves_now_n && (t.moves = malloc(moves_now_n * sizeof(*t.moves))) != NULL) {
		memcpy(t.moves, moves_now, moves_now_n * sizeof(*t.moves));
		t.n_moves = moves_now_n;
	}
	if (!t.src || (moves_now_n && !t.moves)) {
		Py_XDECREF(t.codes);
		free(t.src);
		PyErr_Clear();
		return;
	}
	while (call_texts_n &&
	       (call_texts_n == CALL_SOURCES_MAX || call_texts_bytes + len > CALL_SOURCES_KEPT))
		call_text_drop_oldest();
	call_texts[call_texts_n++] = t;
	call_texts_bytes += len;
}

/* Is co the code c or nested in it (a function, a class body, a comprehension)? */
static int code_within(PyObject *c, PyCodeObject *co, int depth)
{
	PyObject *consts;

	if (c == (PyObject *)co)
		return 1;
	if (!PyCode_Check(c) || depth > 200)
		return 0;
	consts = ((PyCodeObject *)c)->co_consts;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); i++)
		if (PyCode_Check(PyTuple_GET_ITEM(consts, i)) &&
		    code_within(PyTuple_GET_ITEM(consts, i), co, depth + 1))
			return 1;
	return 0;
}

/* The source of the call whose code holds co; the current one's (src) when no call was kept. */
static const char *source_of(PyCodeObject *co, const char *src)
{
	if (!call_texts_n)
		return src;
	for (size_t i = call_texts_n; i-- > 0;)
		for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(call_texts[i].codes); k++)
			if (code_within(PyTuple_GET_ITEM(call_texts[i].codes, k), co, 0))
				return call_texts[i].src;
	return NULL;
}

/* ---- where on its line an entry failed ----------------------------------------------------
 * CPython 3.11 marks the expression an entry's instruction ran under its source line: ^ under
 * all of it, or, for a binary operation or a subscript, ~ under the operands and ^ under the
 * operator or the index (found by parsing the expression alone), and nothing when the
 * expression is the whole line. The same rules here, from the instruction's position in its
 * code object; the expression is parsed to an AST only (no code object, no audit event). */

/* Characters (UTF-8 sequences) in the first n bytes of s. */
static size_t utf8_chars(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

static int caret_space(char c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

/* The int field name of an AST node, read from its own dict (no lookup through its class),
 * or -1. */
static long node_int(PyObject *node, const char *name)
{
	PyObject *d = node ? PyObject_GenericGetDict(node, NULL) : NULL;
	PyObject *v = d ? PyDict_GetItemString(d, name) : NULL;
	long n = v && PyLong_CheckExact(v) ? PyLong_AsLong(v) : -1;

	Py_XDECREF(d);
	PyErr_Clear();
	return n;
}

/* The field name of an AST node (borrowed: the node's dict holds it), or NULL. */
static PyObject *node_field(PyObject *node, const char *name)
{
	PyObject *d = node ? PyObject_GenericGetDict(node, NULL) : NULL;
	PyObject *v = d ? PyDict_GetItemString(d, name) : NULL;

	Py_XDECREF(d);
	PyErr_Clear();
	return v;
}

static int node_is(PyObject *node, const char *kind)
{
	return node && strcmp(Py_TYPE(node)->tp_name, kind) == 0;
}

/* A number's characters from p on, as the tokenizer reads them (digits, letters, _, ., and a
 * sign after a decimal's exponent): their count. */
static size_t number_run(const char *p)
{
	int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	size_t n = 0;

	for (;;) {
		if (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '.')
			n++;
		else if (!hex && (p[n] == '+' || p[n] == '-') && n > 0 &&
		         (p[n - 1] == 'e' || p[n - 1] == 'E'))
			n++;
		else
			return n;
	}
}

/* Is s (n characters) a number as Python writes one: 0x.., 0o.., 0b.. of their digits, or a
 * decimal with an optional fraction, exponent and j, underscores between digits? */
static int plain_number(const char *s, size_t n)
{
	size_t i = 0;
	int digits = 0;

	if (n > 2 && s[0] == '0' && strchr("xXoObB", s[1])) {
		const char *set = strchr("xX", s[1])   ? "0123456789abcdefABCDEF_"
		                  : strchr("oO", s[1]) ? "01234567_"
		                                       : "01_";
		for (i = 2; i < n; i++)
			if (!strchr(set, s[i]))
				return 0;
		return 1;
	}
	while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'))
		digits = 1, i++;
	if (i < n && s[i] == '.')
		for (i++; i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'); i++)
			digits = 1;
	if (digits && i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == n || !isdigit((unsigned char)s[i]))
			return 0;
		while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'))
			i++;
	}
	if (digits && i < n && (s[i] == 'j' || s[i] == 'J'))
		i++;
	return digits && i == n;
}

/* Could parsing seg (NUL-terminated) warn? The tokenizer of 3.11 warns of an escape it does
 * not know (\d, or an octal past \377, in a str that is not raw) and of a number run into a
 * name (1if, 0xfor, 1.if): a warning runs the warnings module's filters and hooks, which are
 * the code's to set, and no code of the code's runs while a traceback is formatted. So a
 * segment with a backslash, or with a number the tokenizer would not read whole, is not
 * parsed. */
static int segment_may_warn(const char *seg)
{
	for (const char *p = seg; *p; p++) {
		if (*p == '\\')
			return 1;
		/* a number starts at a digit, or at a dot before one, outside a name */
		if ((isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) &&
		    (p == seg || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
		                   (unsigned char)p[-1] >= 0x80))) {
			size_t n = number_run(p);
			if (!plain_number(p, n))
				return 1;
			p += n - 1;
		}
	}
	return 0;
}

/* The anchors of seg (n bytes, the failing expression): the byte offsets in seg where the ^
 * part starts and ends. 1 when found, else 0 (also for a segment whose parse could warn: its
 * marks are ^ only). */
static int caret_anchors(const char *seg, size_t n, size_t *left, size_t *right)
{
	PyCompilerFlags flags = {PyCF_ONLY_AST, PY_MINOR_VERSION};
	PyObject *type, *value, *tb, *mod, *body, *stmt, *e;
	char *text;
	int found = 0;

	if (n == 0 || n > 4096 || memchr(seg, '\0', n))
		return 0;
	if (!(text = strndup(seg, n)))
		return 0;
	if (segment_may_warn(text)) {
		free(text);
		return 0;
	}
	PyErr_Fetch(&type, &value, &tb);
	mod = Py_CompileStringExFlags(text, "<segment>", Py_file_input, &flags, -1);
	body = node_field(mod, "body");
	stmt = body && PyList_CheckExact(body) && PyList_GET_SIZE(body) == 1
	           ? PyList_GET_ITEM(body, 0)
	           : NULL;
	e = node_is(stmt, "Expr") ? node_field(stmt, "value") : NULL;
	if (node_is(e, "BinOp")) {
		long l = node_int(node_field(e, "left"), "end_col_offset");
		long r = node_int(node_field(e, "right"), "col_offset");
		/* the operator: the first byte between the operands that is not a space, two
		 * bytes when the next is not one either (//, **, <<) */
		for (long i = l; l >= 0 && r <= (long)n && i < r; i++) {
			if (caret_space(text[i]))
				continue;
			*left = (size_t)i;
			*right = (size_t)i + 1 + (i + 1 < r && !caret_space(text[i + 1]));
			found = 1;
			break;
		}
	} else if (node_is(e, "Subscript")) {
		long l = node_int(node_field(e, "value"), "end_col_offset");
		long r = node_int(node_field(e, "slice"), "end_col_offset");
		if (l >= 0 && r >= l && (size_t)r + 1 <= n) {
			*left = (size_t)l;
			*right = (size_t)r + 1;
			found = 1;
		}
	}
	Py_XDECREF(mod);
	PyErr_Clear();
	PyErr_Restore(type, value, tb);
	free(text);
	return found;
}

/* The marks under line (len bytes, as in the file; shown from byte shown on) for the
 * instruction at lasti of co, when it ran on line lineno. */
static void caret_line(struct strbuf *b, const char *line, size_t len, size_t shown,
                       PyCodeObject *co, int lasti, long lineno, const struct line_move *mv)
{
	int sl, sc, el, ec;
	size_t start, end, lead, width, left = 0, right = 0, seg_l, seg_r;
	int anchors = 0;

	if (lasti < 0 || !PyCode_Addr2Location(co, lasti, &sl, &sc, &el, &ec) || sl != lineno)
		return;
	if (mv) {
		/* the rewrite's own part of the line (the timing call around the statement) has
		 * no marks; the statement's are where it is written */
		if (sc < mv->from)
			return;
		sc -= (int)mv->delta;
		if (el == sl)
			ec -= (int)mv->delta;
	}
	if (sc < 0 || ec < 0 || (size_t)sc > len)
		return;
	lead = utf8_chars(line, shown);
	start = utf8_chars(line, (size_t)sc);
	if (el == sl && (size_t)ec <= len && ec >= sc) {
		end = utf8_chars(line, (size_t)ec);
		anchors = caret_anchors(line + sc, (size_t)(ec - sc), &seg_l, &seg_r);
		if (anchors) {
			left = start + utf8_chars(line + sc, seg_l);
			right = start + utf8_chars(line + sc, seg_r);
		}
	} else {
		/* an expression over more lines: up to this line's last character */
		size_t e = len;
		while (e > 0 && caret_space(line[e - 1]))
			e--;
		end = utf8_chars(line, e);
	}
	width = utf8_chars(line + shown, len - shown);
	if (start < lead || end <= start || (!anchors && end - start == width))
		return;
	sb_str(b, "    ");
	for (size_t i = lead; i < start; i++)
		sb_str(b, " ");
	for (size_t i = start; i < end; i++)
		sb_str(b, anchors && (i < left || i >= right) ? "~" : "^");
	sb_str(b, "\n");
}

/* Line lineno (1-based) of the user's source, without its newline, and the marks under it of
 * the instruction at lasti of co. */
/* The move of line lineno of src, a kept call's source or the running call's, or NULL. */
static const struct line_move *line_moved(const char *src, long lineno)
{
	const struct line_move *m = moves_now;
	size_t n = moves_now_n;

	for (size_t i = 0; i < call_texts_n; i++)
		if (call_texts[i].src == src) {
			m = call_texts[i].moves;
			n = call_texts[i].n_moves;
			break;
		}
	if (src != call_source && m == moves_now)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (m[i].lineno == lineno)
			return &m[i];
	return NULL;
}

/* Where line lineno (1-based) of src starts, its lines ending as the parser's do (at \n, \r\n
 * or a lone \r), or NULL past its end. */
const char *pyresult_line_at(const char *src, long lineno)
{
	const char *p = src;

	for (long i = 1; i < lineno && p; i++) {
		p += strcspn(p, "\r\n");
		p = *p == '\0' ? NULL : p + (p[0] == '\r' && p[1] == '\n' ? 2 : 1);
	}
	return lineno < 1 ? NULL : p;
}

static void source_line(const char *src, long lineno, struct strbuf *b, PyCodeObject *co, int lasti)
{
	const char *p = pyresult_line_at(src, lineno), *q, *e;

	if (!p || !*p)
		return;
	for (q = p; *q == ' ' || *q == '\t';)
		q++;
	e = q + strcspn(q, "\r\n");
	sb_str(b, "    ");
	sb_add(b, q, (size_t)(e - q));
	sb_str(b, "\n");
	caret_line(b, p, (size_t)(e - p), (size_t)(q - p), co, lasti, lineno,
	           line_moved(src, lineno));
}

/* The exception type's name, "module.qualname" outside builtins and __main__, into *out
 * (left as it was when nothing can be read). Runs no Python code: __module__ is found among
 * the class's keys that are str itself (a key of the user's whose hash collides would have its
 * __eq__ run by a lookup, and could give the exception another class and free this one). */
static void type_name(PyTypeObject *type, struct text *out)
{
	PyObject *mod = NULL, *qual = PyType_GetQualName(type);
	struct text q = {0}, m = {0};

	if (!qual || utf8_text(qual, &q) < 0) {
		PyErr_Clear();
		Py_XDECREF(qual);
		text_set_str(out, type->tp_name);
		return;
	}
	if (type->tp_dict)
		mod = pyguard_str_item(type->tp_dict, "__module__");
	if (mod && PyUnicode_Check(mod) && utf8_text(mod, &m) == 0 &&
	    !(m.len == strlen(m.s) && (!strcmp(m.s, "builtins") || !strcmp(m.s, "__main__")))) {
		struct strbuf b = {0};

		sb_text(&b, &m);
		sb_str(&b, ".");
		sb_text(&b, &q);
		sb_take_text(&b, out);
	}
	if (!out->s) {
		/* q's bytes move to out. */
		text_take(out, q.s, q.len);
		text_init(&q);
	}
	text_clear(&q);
	text_clear(&m);
	Py_DECREF(qual);
	PyErr_Clear();
}

/* str(exc), under the sandbox (the user's __str__ may run), into *out. */
static void exc_message(PyObject *exc, struct text *out)
{
	PyObject *s = PyObject_Str(exc);

	if (!s) {
		PyErr_Clear();
		text_set_str(out, "<str() of the exception failed>");
		return;
	}
	if (utf8_text(s, out) < 0)
		text_set_str(out, "<str() of the exception could not be encoded: out of memory>");
	Py_DECREF(s);
	PyErr_Clear();
}

/* The str s's UTF-8 bytes appended to b (every character kept), or alt when it has none. */
static void sb_pystr(struct strbuf *b, PyObject *s, const char *alt)
{
	Py_ssize_t n = 0;
	const char *p = s && PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &n) : NULL;

	if (p)
		sb_add(b, p, (size_t)n);
	else
		sb_str(b, alt);
	PyErr_Clear();
}

/* "Type: message" (or "Type" for an empty message) and a newline. */
static void sb_exc_line(struct strbuf *b, const struct text *tn, const char *alt,
                        const struct text *msg)
{
	if (tn->s)
		sb_text(b, tn);
	else
		sb_str(b, alt);
	if (msg->len > 0) {
		sb_str(b, ": ");
		sb_text(b, msg);
	}
	sb_str(b, "\n");
}

/* The exception's notes (add_note: a list in its __notes__), one a line after its own, as
 * CPython prints them: a str as it is, anything else as its str(). Read from the exception's
 * own dict (no attribute lookup of the code's). */
static void sb_notes(struct strbuf *b, PyObject *exc)
{
	PyObject **dictp = _PyObject_GetDictPtr(exc), *notes, *list;

	if (!dictp || !*dictp || !PyDict_Check(*dictp))
		return;
	/* A list or tuple itself, copied with nothing of the code's run (a subclass's __iter__
	 * that deleted __notes__ had the copy ask the freed list its __len__), and the copy's
	 * items held while each note's __str__ runs. */
	notes = PyDict_GetItemString(*dictp, "__notes__");
	if (!notes || !(PyList_CheckExact(notes) || PyTuple_CheckExact(notes)))
		return;
	if (!(list = PySequence_List(notes))) {
		PyErr_Clear();
		return;
	}
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
		PyObject *note = PyList_GET_ITEM(list, i);
		PyObject *s = PyUnicode_Check(note) ? Py_NewRef(note) : PyObject_Str(note);

		sb_pystr(b, s, "<str() of the note failed>");
		sb_str(b, "\n");
		Py_XDECREF(s);
		PyErr_Clear();
	}
	Py_DECREF(list);
}

/* The sources of the library files an uncaught exception's traceback passes through, each
 * asked of the supervisor once (pyimport_library_source: the installed module files only), a
 * few files per traceback, with where each line starts (a deep recursion in one file looks up
 * many lines of it). */
#define TRACEBACK_SOURCES 16
struct tb_sources {
	size_t n;
	struct {
		char *path, *text; /* text NULL: not served */
		size_t lines, *start;
	} e[TRACEBACK_SOURCES];
};

static void tb_sources_clear(struct tb_sources *lib)
{
	for (size_t i = 0; i < lib->n; i++) {
		free(lib->e[i].path);
		free(lib->e[i].text);
		free(lib->e[i].start);
	}
	lib->n = 0;
}

/* Where each line of text starts: 0, or -1 (no memory). */
static int line_starts(const char *text, size_t *lines, size_t **start)
{
	size_t n = 1, k = 0;

	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	*start = malloc(n * sizeof(size_t));
	if (!*start)
		return -1;
	(*start)[k++] = 0;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		(*start)[k++] = (size_t)(p + 1 - text);
	*lines = n;
	return 0;
}

/* Line lineno of the library file path, as CPython shows it (stripped, undecodable bytes
 * replaced), when its source is served. */
static void library_line(struct tb_sources *lib, const char *path, long lineno, struct strbuf *b,
                         PyCodeObject *co, int lasti)
{
	const char *p = NULL, *e, *raw;
	size_t i;
	PyObject *line;

	for (i = 0; i < lib->n && strcmp(lib->e[i].path, path) != 0; i++)
		;
	if (i == lib->n) {
		if (lib->n == TRACEBACK_SOURCES || !(lib->e[i].path = strdup(path)))
			return;
		lib->e[i].text = pyimport_library_source(path);
		lib->e[i].start = NULL;
		if (lib->e[i].text &&
		    line_starts(lib->e[i].text, &lib->e[i].lines, &lib->e[i].start) < 0) {
			free(lib->e[i].text);
			lib->e[i].text = NULL;
		}
		lib->n++;
	}
	if (!lib->e[i].text || lineno < 1 || (size_t)lineno > lib->e[i].lines)
		return;
	p = raw = lib->e[i].text + lib->e[i].start[lineno - 1];
	while (*p == ' ' || *p == '\t' || *p == '\f')
		p++;
	e = p + strcspn(p, "\r\n");
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e == p)
		return;
	line = PyUnicode_DecodeUTF8(p, (Py_ssize_t)(e - p), "replace");
	if (line) {
		sb_str(b, "    ");
		sb_pystr(b, line, "");
		sb_str(b, "\n");
		caret_line(b, raw, (size_t)(e - raw), (size_t)(p - raw), co, lasti, lineno, NULL);
	}
	Py_XDECREF(line);
	PyErr_Clear();
}

/* Entries of a traceback shown of a run of the same one (CPython's traceback: 3). */
#define TRACEBACK_REPEATS_SHOWN 3

static void repeats_line(struct strbuf *b, long same)
{
	if (same > TRACEBACK_REPEATS_SHOWN)
		sb_printf(b, "  [Previous line repeated %ld more time%s]\n",
		          same - TRACEBACK_REPEATS_SHOWN,
		          same - TRACEBACK_REPEATS_SHOWN > 1 ? "s" : "");
}

/* Where an exception's text goes: inside the margins of the groups it belongs to (depth 0:
 * none), as CPython's traceback nests the sub-exceptions of an exception group. */
struct tb_margin {
	int depth;
	int need_close; /* the group's closing line is still to come */
	long shown;     /* sub-exceptions shown so far (TRACEBACK_GROUP_TOTAL) */
	PyObject *seen; /* the exceptions shown, by address (a set, made at the first) */
};

/* Note exc as shown; was it shown before? (Without memory for the set, nothing is. The
 * depths and counts bound the text then, as a chain's cycle through a group.) */
static int margin_seen(struct tb_margin *m, PyObject *exc, int note)
{
	PyObject *key;
	int was = 0;

	if (!m->seen && !(m->seen = PySet_New(NULL))) {
		PyErr_Clear();
		return 0;
	}
	if (!(key = PyLong_FromVoidPtr(exc))) {
		PyErr_Clear();
		return 0;
	}
	was = PySet_Contains(m->seen, key) == 1;
	if (note && PySet_Add(m->seen, key) < 0)
		PyErr_Clear();
	Py_DECREF(key);
	return was;
}

static void margin_clear(struct tb_margin *m)
{
	Py_CLEAR(m->seen);
}

static void sb_indent(struct strbuf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_str(b, "  ");
}

/* text[0..len) appended to b, each line inside m's margins: two spaces a level, then margin
 * ('|'; '+' on the line a group's text starts with) and a space. */
static void emit(struct strbuf *b, const struct tb_margin *m, const char *text, size_t len,
                 char margin)
{
	const char *p = text, *end = text + len;

	if (m->depth == 0) {
		sb_add(b, text, len);
		return;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl + 1 : end;

		sb_indent(b, m->depth);
		sb_add(b, &margin, 1);
		sb_str(b, " ");
		sb_add(b, p, (size_t)(e - p));
		p = e;
	}
}

static void emit_str(struct strbuf *b, const struct tb_margin *m, const char *s, char margin)
{
	emit(b, m, s, strlen(s), margin);
}

/* emit what t holds, and empty it. */
static void emit_buf(struct strbuf *b, const struct tb_margin *m, struct strbuf *t)
{
	if (t->failed)
		b->failed = 1;
	else if (t->len > 0)
		emit(b, m, t->s, t->len, '|');
	free(t->s);
	*t = (struct strbuf){0};
}

/* The sub-exceptions of an exception group (a new reference to its tuple: the C structure's,
 * which the code cannot change), or NULL for any other exception. */
static PyObject *group_members(PyObject *exc)
{
	PyBaseExceptionGroupObject *g = (PyBaseExceptionGroupObject *)exc;

	if (!PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_BaseExceptionGroup) || !g->excs ||
	    !PyTuple_Check(g->excs))
		return NULL;
	return Py_NewRef(g->excs);
}

/* A traceback's entries (limit > 0: the first limit; < 0: the last -limit; 0: none;
 * TRACEBACK_ALL: all), without the line before them. With lib, library frames show their
 * lines. Returns whether any was shown. */
static int exc_entries(PyObject *exc, const char *src, long limit, struct tb_sources *lib,
                       struct strbuf *b)
{
	static PyObject *safepy_prefix;
	PyObject *tb = PyException_GetTraceback(exc);
	long n = 0, skip = 0, k = 0;
	int any = 0;

	/* None when the code set it so (with_traceback(None)): no traceback to walk. */
	if (tb && !PyTraceBack_Check(tb))
		Py_CLEAR(tb);
	if (!safepy_prefix && !(safepy_prefix = PyUnicode_InternFromString("<safepy "))) {
		Py_XDECREF(tb);
		return 0;
	}
	for (PyTracebackObject *t = (PyTracebackObject *)tb; t; t = t->tb_next)
		n++;
	if (limit != TRACEBACK_ALL) {
		skip = limit < 0 ? (n + limit > 0 ? n + limit : 0) : 0;
		n = limit < 0 ? n - skip : (limit < n ? limit : n);
	}
	if (tb && n > 0) {
		/* The same entry again and again (a recursion) is shown three times, then
		 * counted, as CPython's traceback does: 1000 entries ran past the output bound. */
		PyCodeObject *last = NULL;
		long last_line = -1, same = 0;

		any = 1;
		for (PyTracebackObject *t = (PyTracebackObject *)tb; t && k < skip + n;
		     t = t->tb_next) {
			if (k++ < skip)
				continue;
			/* The C structures, not the attributes: tb_frame is refused while armed. */
			PyCodeObject *co = PyFrame_GetCode(t->tb_frame);
			long lineno = t->tb_lineno;
			const char *file;
			/* (the sandbox's own wrappers, <safepy data> and <safepy importer>, are no
			 * frames of the code's or a library's: CPython would have none there) */
			if (PyUnicode_Check(co->co_filename) &&
			    PyUnicode_Tailmatch(co->co_filename, safepy_prefix, 0, PY_SSIZE_T_MAX,
			                        -1) == 1) {
				Py_DECREF(co);
				continue;
			}
			if (co == last && lineno == last_line) {
				if (++same > TRACEBACK_REPEATS_SHOWN) {
					Py_DECREF(co);
					continue;
				}
			} else {
				repeats_line(b, same);
				Py_XSETREF(last, (PyCodeObject *)Py_NewRef(co));
				last_line = lineno;
				same = 1;
			}
			file = PyUnicode_AsUTF8(co->co_filename);
			PyErr_Clear();
			sb_str(b, "  File \"");
			sb_pystr(b, co->co_filename, "?");
			sb_printf(b, "\", line %ld, in ", lineno);
			sb_pystr(b, co->co_name, "?");
			sb_str(b, "\n");
			if (file && strcmp(file, INTERP_FILENAME) == 0)
				source_line(source_of(co, src), lineno, b, co, t->tb_lasti);
			else if (file && lib)
				library_line(lib, file, lineno, b, co, t->tb_lasti);
			PyErr_Clear();
			Py_DECREF(co);
		}
		repeats_line(b, same);
		Py_XDECREF(last);
	}
	Py_XDECREF(tb);
	return any;
}

/* The exception's own lines after its entries: "Type: message" (a syntax error's place before
 * it), then its notes. */
static void format_line(PyObject *exc, const struct text *msg, struct strbuf *b)
{
	struct text tn = {0};

	type_name(Py_TYPE(exc), &tn);
	if (PyErr_GivenExceptionMatches(exc, PyExc_SyntaxError)) {
		PySyntaxErrorObject *se = (PySyntaxErrorObject *)exc;
		long lineno =
		    se->lineno && PyLong_Check(se->lineno) ? PyLong_AsLong(se->lineno) : 0;
		long offset =
		    se->offset && PyLong_Check(se->offset) ? PyLong_AsLong(se->offset) : 0;
		const char *file = se->filename && PyUnicode_Check(se->filename)
		                       ? PyUnicode_AsUTF8(se->filename)
		                       : NULL;

		/* The file it names (ast.parse(text, filename=...), a library's own), as CPython
		 * shows it; the code's own is <code>. */
		PyErr_Clear();
		sb_printf(b, "  File \"%s\", line %ld\n", file && *file ? file : INTERP_FILENAME,
		          lineno);
		if (se->text && PyUnicode_Check(se->text)) {
			Py_ssize_t tlen = 0;
			const char *t = PyUnicode_AsUTF8AndSize(se->text, &tlen);
			if (t) {
				size_t lead = 0, len = 0;
				while (lead < (size_t)tlen && (t[lead] == ' ' || t[lead] == '\t'))
					lead++;
				while (lead + len < (size_t)tlen && t[lead + len] != '\r' &&
				       t[lead + len] != '\n')
					len++;
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
			struct text m = {0};
			utf8_text(se->msg, &m);
			sb_exc_line(b, &tn, "SyntaxError", &m);
			sb_notes(b, exc);
			text_clear(&m);
			text_clear(&tn);
			return;
		}
	}
	sb_exc_line(b, &tn, "Exception", msg);
	sb_notes(b, exc);
	text_clear(&tn);
}

static void format_chain(PyObject *exc, const char *src, const struct text *msg, long limit,
                         int depth, struct tb_sources *lib, struct tb_margin *m, struct strbuf *b);

/* An exception group's sub-exceptions, each under a numbered line, the last closed, as
 * CPython's traceback shows them. */
static void format_members(PyObject *members, const char *src, long limit, struct tb_sources *lib,
                           struct tb_margin *m, struct strbuf *b)
{
	Py_ssize_t n = PyTuple_GET_SIZE(members);
	Py_ssize_t shown = n <= TRACEBACK_GROUP_WIDTH ? n : TRACEBACK_GROUP_WIDTH + 1;

	m->need_close = 0;
	for (Py_ssize_t i = 0; i < shown; i++) {
		int last = i == shown - 1, cut = i >= TRACEBACK_GROUP_WIDTH;

		if (last)
			m->need_close = 1;
		sb_indent(b, m->depth);
		sb_str(b, i == 0 ? "+-" : "  ");
		if (cut)
			sb_str(b, "+---------------- ... ----------------\n");
		else
			sb_printf(b, "+---------------- %zd ----------------\n", i + 1);
		m->depth++;
		if (cut) {
			Py_ssize_t more = n - TRACEBACK_GROUP_WIDTH;
			char line[64];
			snprintf(line, sizeof(line), "and %zd more exception%s\n", more,
			         more > 1 ? "s" : "");
			emit_str(b, m, line, '|');
		} else if (m->shown >= TRACEBACK_GROUP_TOTAL) {
			emit_str(b, m, "... (more sub-exceptions than are shown)\n", '|');
		} else {
			PyObject *sub = PyTuple_GET_ITEM(members, i);
			struct text sm = {0};

			m->shown++;
			exc_message(sub, &sm);
			format_chain(sub, src, &sm, limit, 0, lib, m, b);
			text_clear(&sm);
		}
		if (last && m->need_close) {
			sb_indent(b, m->depth);
			sb_str(b, "+------------------------------------\n");
			m->need_close = 0;
		}
		m->depth--;
	}
}

/* One exception: its traceback's entries (limit as exc_entries'), then its line; an
 * exception group's sub-exceptions after it. */
static void format_one(PyObject *exc, const char *src, const struct text *msg, long limit,
                       struct tb_sources *lib, struct tb_margin *m, struct strbuf *b)
{
	PyObject *members = group_members(exc);
	struct strbuf t = {0};
	int top = members && m->depth == 0;

	if (members && m->depth > TRACEBACK_GROUP_DEPTH) {
		char line[64];
		snprintf(line, sizeof(line), "... (max_group_depth is %d)\n",
		         TRACEBACK_GROUP_DEPTH);
		emit_str(b, m, line, '|');
		Py_DECREF(members);
		return;
	}
	if (top)
		m->depth++;
	if (exc_entries(exc, src, limit, lib, &t)) {
		emit_str(b, m,
		         members ? "Exception Group Traceback (most recent call last):\n"
		                 : "Traceback (most recent call last):\n",
		         top ? '+' : '|');
		emit_buf(b, m, &t);
	}
	free(t.s);
	t = (struct strbuf){0};
	format_line(exc, msg, &t);
	emit_buf(b, m, &t);
	if (members) {
		format_members(members, src, limit, lib, m, b);
		Py_DECREF(members);
	}
	if (top)
		m->depth = 0;
}

/* The whole traceback, with chained exceptions first as CPython prints them. */
static void format_chain(PyObject *exc, const char *src, const struct text *msg, long limit,
                         int depth, struct tb_sources *lib, struct tb_margin *m, struct strbuf *b)
{
	PyObject *cause = PyException_GetCause(exc);
	PyObject *ctx = PyException_GetContext(exc);

	/* An exception already shown is not shown again as a cause or a context (a group whose
	 * member's context is the group), as CPython's traceback keeps them. */
	(void)margin_seen(m, exc, 1);
	if (depth < TRACEBACK_CHAIN_MAX) {
		PyObject *before = NULL;
		const char *link = NULL;
		/* A cause shown already leaves the context to show, if it is not suppressed. */
		if (cause && PyExceptionInstance_Check(cause) && !margin_seen(m, cause, 0)) {
			before = cause;
			link = "\nThe above exception was the direct cause of the following "
			       "exception:\n\n";
		} else if (ctx && PyExceptionInstance_Check(ctx) &&
		           !((PyBaseExceptionObject *)exc)->suppress_context &&
		           !margin_seen(m, ctx, 0)) {
			before = ctx;
			link = "\nDuring handling of the above exception, another exception "
			       "occurred:\n\n";
		}
		if (before) {
			struct text cm = {0};
			exc_message(before, &cm);
			format_chain(before, src, &cm, limit, depth + 1, lib, m, b);
			text_clear(&cm);
			emit_str(b, m, link, '|');
		}
	}
	Py_XDECREF(cause);
	Py_XDECREF(ctx);
	format_one(exc, src, msg, limit, lib, m, b);
}

/* ---- entry points -------------------------------------------------------------------- */

/* "name 'eval' is not defined" reads like a typo: the NameError of a builtin the sandbox
 * leaves out says why. */
static int not_here_hint(PyObject *exc, struct text *msg)
{
	static const struct {
		const char *name, *why;
	} names[] = {
	    {"eval", "the sandbox runs code as code, not from text (write the code out; "
	             "ast.literal_eval reads a literal, json.loads a JSON text)"},
	    {"exec", "the sandbox runs code as code, not from text (write the code out; "
	             "ast.literal_eval reads a literal, json.loads a JSON text)"},
	    {"compile", "the sandbox runs code as code, not from text (write the code out; "
	                "ast.literal_eval reads a literal, json.loads a JSON text)"},
	    {"breakpoint", "the code runs without a console, so no debugger can stop it (print "
	                   "the values to look at, or assert what should hold)"},
	    {"__file__", "the code runs as a cell, not from a file (files are named relative to "
	                 "the working directory, the workspace when there is one: os.getcwd(), "
	                 "pathlib.Path('.'))"},
	};
	char want[64], *with;

	if (!Py_IS_TYPE(exc, (PyTypeObject *)PyExc_NameError) || !msg->s)
		return 0;
	/* The name interp.c gives a read of __import__ in the code. */
	if (strcmp(msg->s, "name '__import__ (not available)' is not defined") == 0) {
		text_set_str(msg, "__import__ is not available in the sandbox: use the import "
		                  "statement (import sys), or importlib.import_module('sys')");
		return 1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "name '%s' is not defined", names[i].name);
		if (strcmp(msg->s, want) != 0)
			continue;
		if (asprintf(&with, "%s: %s", want, names[i].why) >= 0) {
			text_set_str(msg, with);
			free(with);
		}
		return 1;
	}
	return 0;
}

/* ---- "Did you mean" --------------------------------------------------------------------
 * CPython 3.11 prints an uncaught NameError or AttributeError with the nearest name it knows
 * ("name 'sale_df' is not defined. Did you mean: 'sales_df'?"): the names of the frame that
 * failed, then its globals, then its builtins, or the object's attributes, each list taken
 * only when it has fewer than 750 names, and a name only within a third of the characters
 * changed (a case change costs half a change). The same here, with no code of the code's run:
 * exact str names read from the structures (an object's attributes from its own dict and its
 * class's, never through dir()), private names only for a private name, dunder names never. */
#define SUGGEST_CANDIDATES 750
#define SUGGEST_SIZE       40
#define SUGGEST_MOVE       2
#define SUGGEST_CASE       1

static size_t suggest_cost(char a, char b)
{
	if ((a & 31) != (b & 31))
		return SUGGEST_MOVE;
	if (a == b)
		return 0;
	if (a >= 'A' && a <= 'Z')
		a = (char)(a + ('a' - 'A'));
	if (b >= 'A' && b <= 'Z')
		b = (char)(b + ('a' - 'A'));
	return a == b ? SUGGEST_CASE : SUGGEST_MOVE;
}

/* The edit distance of a and b, or max + 1 when it is more than max. */
static size_t suggest_distance(const char *a, size_t an, const char *b, size_t bn, size_t max)
{
	size_t row[SUGGEST_SIZE], result = 0;

	while (an && bn && a[0] == b[0])
		a++, an--, b++, bn--;
	while (an && bn && a[an - 1] == b[bn - 1])
		an--, bn--;
	if (an == 0 || bn == 0)
		return (an + bn) * SUGGEST_MOVE;
	if (an > SUGGEST_SIZE || bn > SUGGEST_SIZE)
		return max + 1;
	if (bn < an) {
		const char *t = a;
		size_t tn = an;
		a = b, an = bn, b = t, bn = tn;
	}
	if ((bn - an) * SUGGEST_MOVE > max)
		return max + 1;
	for (size_t i = 0; i < an; i++)
		row[i] = (i + 1) * SUGGEST_MOVE;
	for (size_t j = 0; j < bn; j++) {
		size_t distance = result = j * SUGGEST_MOVE, minimum = SIZE_MAX;
		for (size_t i = 0; i < an; i++) {
			size_t substitute = distance + suggest_cost(b[j], a[i]);
			size_t keep;
			distance = row[i];
			keep = (result < distance ? result : distance) + SUGGEST_MOVE;
			result = keep < substitute ? keep : substitute;
			row[i] = result;
			if (result < minimum)
				minimum = result;
		}
		if (minimum > max)
			return max + 1;
	}
	return result;
}

/* The nearest of names (a list, tuple or dict's keys: exact str only) to name, or NULL.
 * Borrowed (names holds it). */
static PyObject *suggest_from(PyObject *names, PyObject *name)
{
	Py_ssize_t n, pos = 0, nn;
	const char *ns = PyUnicode_AsUTF8AndSize(name, &nn);
	PyObject *k, *v, *best = NULL;
	size_t best_d = 0;

	n = PyDict_Check(names) ? PyDict_Size(names) : PySequence_Fast_GET_SIZE(names);
	if (!ns || n >= SUGGEST_CANDIDATES) {
		PyErr_Clear();
		return best;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		Py_ssize_t kn;
		const char *ks;
		size_t max, d;

		if (PyDict_Check(names)) {
			if (!PyDict_Next(names, &pos, &k, &v))
				break;
		} else {
			k = PySequence_Fast_GET_ITEM(names, i);
		}
		if (!PyUnicode_CheckExact(k) || !(ks = PyUnicode_AsUTF8AndSize(k, &kn))) {
			PyErr_Clear();
			continue;
		}
		if (kn == nn && memcmp(ks, ns, (size_t)nn) == 0)
			continue;
		max = (size_t)(nn + kn + 3) * SUGGEST_MOVE / 6;
		if (best && best_d == 0)
			break;
		if (best && best_d - 1 < max)
			max = best_d - 1;
		d = suggest_distance(ns, (size_t)nn, ks, (size_t)kn, max);
		if (d > max)
			continue;
		best = k;
		best_d = d;
	}
	return best;
}

/* Adds the exact str keys of dict d to set (a name starting with _ only when name does, and
 * no dunder name): -1 when set holds too many to suggest from. Iterating a dict and adding
 * exact str to a set runs no code. */
static int names_add(PyObject *set, PyObject *d, PyObject *name)
{
	Py_ssize_t pos = 0;
	PyObject *k, *v;
	int private = PyUnicode_READ_CHAR(name, 0) == '_';

	if (!d || !PyDict_Check(d))
		return 0;
	while (PyDict_Next(d, &pos, &k, &v)) {
		if (!PyUnicode_CheckExact(k) || PyUnicode_GET_LENGTH(k) == 0)
			continue;
		if (PyUnicode_READ_CHAR(k, 0) == '_' &&
		    (!private || (PyUnicode_GET_LENGTH(k) > 1 && PyUnicode_READ_CHAR(k, 1) == '_')))
			continue;
		if (PySet_Add(set, k) < 0 || PySet_GET_SIZE(set) >= SUGGEST_CANDIDATES)
			return -1;
	}
	return 0;
}

/* The names dir(obj) would list that could be meant for name, read from the structures (the
 * object's own dict, its class's and their bases' dicts; a class's and its bases'), so that no
 * __dir__, __getattr__ or __class__ of the code's runs: a new list, or NULL (none, or too many
 * to suggest from, as CPython's limit on dir()). */
static PyObject *attribute_names(PyObject *obj, PyObject *name)
{
	PyObject *set = PySet_New(NULL), *mro, *list = NULL, **dictptr;
	PyTypeObject *t = PyType_Check(obj) ? (PyTypeObject *)obj : Py_TYPE(obj);
	int bad = !set;

	if (!bad && !PyType_Check(obj) && (dictptr = _PyObject_GetDictPtr(obj)) != NULL)
		bad = names_add(set, *dictptr, name) < 0;
	mro = t->tp_mro;
	if (!bad && mro && PyTuple_Check(mro)) {
		for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro) && !bad; i++) {
			PyObject *base = PyTuple_GET_ITEM(mro, i);
			if (PyType_Check(base))
				bad = names_add(set, ((PyTypeObject *)base)->tp_dict, name) < 0;
		}
	} else if (!bad) {
		bad = names_add(set, t->tp_dict, name) < 0;
	}
	if (!bad)
		list = PySequence_List(set);
	Py_XDECREF(set);
	PyErr_Clear();
	return list;
}

const char *pyresult_nearest(const char *name, char *const *names, size_t n)
{
	size_t nn = strlen(name), best_d = 0;
	const char *best = NULL;

	for (size_t i = 0; i < n && n < SUGGEST_CANDIDATES; i++) {
		size_t kn = strlen(names[i]), max = (nn + kn + 3) * SUGGEST_MOVE / 6, d;
		if (strcmp(names[i], name) == 0)
			continue;
		if (best && best_d - 1 < max)
			max = best_d - 1;
		d = suggest_distance(name, nn, names[i], kn, max);
		if (d <= max && (!best || d < best_d)) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}

/* Does msg end with CPython's own words for a missing name (not a refusal of the layer's,
 * which says more)? */
static int plain_missing(const char *msg, PyObject *name, int attribute)
{
	const char *n = PyUnicode_AsUTF8(name);
	char *tail;
	int plain;

	if (!n || !msg ||
	    asprintf(&tail, attribute ? " has no attribute '%s'" : "'%s' is not defined", n) < 0) {
		PyErr_Clear();
		return 0;
	}
	plain = strlen(msg) >= strlen(tail) && strcmp(msg + strlen(msg) - strlen(tail), tail) == 0;
	free(tail);
	return plain;
}

/* The name exc (a NameError or AttributeError) suggests, as a new str, or NULL. msg is its
 * text. */
static PyObject *name_suggestion(PyObject *exc, const char *msg)
{
	PyObject *name, *best = NULL, *names;

	if (PyErr_GivenExceptionMatches(exc, PyExc_NameError)) {
		PyTracebackObject *tb =
		    (PyTracebackObject *)((PyBaseExceptionObject *)exc)->traceback;
		PyCodeObject *co;
		PyFrameObject *f;

		name = ((PyNameErrorObject *)exc)->name;
		if (!name || !PyUnicode_CheckExact(name) || !tb || !PyTraceBack_Check(tb) ||
		    !plain_missing(msg, name, 0))
			return NULL;
		while (tb->tb_next && PyTraceBack_Check(tb->tb_next))
			tb = tb->tb_next;
		f = tb->tb_frame;
		co = PyFrame_GetCode(f);
		best = Py_XNewRef(suggest_from(co->co_localsplusnames, name));
		Py_DECREF(co);
		if (!best && (names = PyFrame_GetGlobals(f)) != NULL) {
			if (PyDict_Check(names))
				best = Py_XNewRef(suggest_from(names, name));
			Py_DECREF(names);
		}
		if (!best && (names = PyFrame_GetBuiltins(f)) != NULL) {
			if (PyDict_Check(names))
				best = Py_XNewRef(suggest_from(names, name));
			Py_DECREF(names);
		}
		return best;
	}
	if (PyErr_GivenExceptionMatches(exc, PyExc_AttributeError)) {
		PyAttributeErrorObject *ae = (PyAttributeErrorObject *)exc;

		name = ae->name;
		if (!name || !PyUnicode_CheckExact(name) || !ae->obj ||
		    !plain_missing(msg, name, 1))
			return NULL;
		/* a module's proxy (pyproxy.c): the names its own dict holds */
		if (PyModule_Check(ae->obj) && pylayer_is_proxy(ae->obj)) {
			names = PyModule_GetDict(ae->obj);
			return names && PyDict_CheckExact(names)
			           ? Py_XNewRef(suggest_from(names, name))
			           : NULL;
		}
		if (PyModule_Check(ae->obj) || PyUnicode_GET_LENGTH(name) == 0 ||
		    !(names = attribute_names(ae->obj, name)))
			return NULL;
		best = Py_XNewRef(suggest_from(names, name));
		Py_DECREF(names);
		return best;
	}
	return NULL;
}

/* msg with ". Did you mean: 'x'?" after it when exc suggests a name. */
static void suggestion_add(PyObject *exc, struct text *msg)
{
	PyObject *type, *value, *tb, *s;
	const char *n;
	char *with;

	PyErr_Fetch(&type, &value, &tb);
	s = msg->s ? name_suggestion(exc, msg->s) : NULL;
	n = s ? PyUnicode_AsUTF8(s) : NULL;
	if (n && asprintf(&with, "%s. Did you mean: '%s'?", msg->s, n) >= 0) {
		text_set_str(msg, with);
		free(with);
	}
	Py_XDECREF(s);
	PyErr_Clear();
	PyErr_Restore(type, value, tb);
}

void pyresult_error(struct run_outcome *out, PyObject *exc, const char *src, size_t max)
{
	struct strbuf tb = {0};
	struct tb_sources lib = {0};
	struct tb_margin margin = {0};
	int trunc = 0;

	type_name(Py_TYPE(exc), &out->error_type);
	exc_message(exc, &out->error_message);
	if (!not_here_hint(exc, &out->error_message))
		suggestion_add(exc, &out->error_message);
	/* The call's error: its library frames with their lines, as CPython prints them (the
	 * traceback module's text, which code may ask for in a loop, shows none). SystemExit has
	 * its line alone, as CPython prints no traceback for it: argparse's usage error (said on
	 * stderr) ends so, not with the parser's frames and the exceptions it handled. */
	if (PyErr_GivenExceptionMatches(exc, PyExc_SystemExit))
		format_one(exc, src, &out->error_message, 0, &lib, &margin, &tb);
	else
		format_chain(exc, src, &out->error_message, TRACEBACK_ALL, 0, &lib, &margin, &tb);
	margin_clear(&margin);
	tb_sources_clear(&lib);
	if (sb_take_text(&tb, &out->error_traceback) < 0)
		text_set_str(&out->error_traceback, "");
	result_bound(&out->error_message, max, &trunc);
	result_bound(&out->error_traceback, max, &trunc);
	if (trunc)
		out->truncated = 1;
}

int pyresult_value(struct run_outcome *out, PyObject *value, size_t max, int *truncated)
{
	PyObject *r = PyObject_Repr(value);
	size_t nodes = 0, len = 0;

	if (!r) {
		text_set_str(&out->result_repr, "<repr() failed>");
		return -1;
	}
	if (utf8_text(r, &out->result_repr) < 0)
		text_set_str(&out->result_repr, "<repr() could not be encoded: out of memory>");
	result_bound(&out->result_repr, max, truncated);
	Py_DECREF(r);
	if (to_json(value, 0, &nodes, &out->result) < 0) {
		out->result = NULL;
	} else if (out->result &&
	           (!json_object_to_json_string_length(out->result, JSON_C_TO_STRING_PLAIN, &len) ||
	            len > max)) {
		json_object_put(out->result);
		out->result = NULL;
		*truncated = 1;
	}
	return 0;
}

/* ---- traceback, as user code sees it --------------------------------------------------- */

/* linecache.getline as the warnings module's formatter (and traceback's stack summaries) call
 * it: a line of the code's (<code>) is the line of a frame on the stack now running that line,
 * from the source of the call that frame's code came from (so a function an earlier call
 * defined shows its own call's line); none is found for a line no frame runs now (a traceback
 * already unwound: its own view shows those lines). Any other file is linecache's own. */
static PyObject *linecache_getline_real;

static PyObject *code_getline(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *filename =
	    PyTuple_Check(args) && PyTuple_GET_SIZE(args) >= 2 ? PyTuple_GET_ITEM(args, 0) : NULL;
	PyObject *lineno_obj = filename ? PyTuple_GET_ITEM(args, 1) : NULL;
	PyObject *line, *r;
	PyFrameObject *f;
	const char *src = NULL, *p, *e;
	long lineno;

	(void)self;
	if (!filename || !PyUnicode_CheckExact(filename) || !PyLong_CheckExact(lineno_obj) ||
	    PyUnicode_CompareWithASCIIString(filename, INTERP_FILENAME) != 0)
		return PyObject_Call(linecache_getline_real, args, kw);
	lineno = PyLong_AsLong(lineno_obj);
	if (lineno < 1) {
		PyErr_Clear();
		return PyUnicode_FromString("");
	}
	for (f = PyThreadState_GetFrame(PyThreadState_Get()); f && !src;) {
		PyCodeObject *co = PyFrame_GetCode(f);
		PyFrameObject *back;

		if (PyUnicode_Check(co->co_filename) &&
		    PyUnicode_CompareWithASCIIString(co->co_filename, INTERP_FILENAME) == 0 &&
		    PyFrame_GetLineNumber(f) == lineno)
			src = source_of(co, call_source);
		Py_DECREF(co);
		back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
	Py_XDECREF(f);
	if (!src || !(p = pyresult_line_at(src, lineno)) || !*p)
		return PyUnicode_FromString("");
	e = p + strcspn(p, "\r\n");
	line = PyUnicode_DecodeUTF8(p, e - p, "replace");
	r = line ? PyUnicode_FromFormat("%U\n", line) : NULL;
	Py_XDECREF(line);
	return r;
}

static PyMethodDef code_getline_def = {"getline", (PyCFunction)(void (*)(void))code_getline,
                                       METH_VARARGS | METH_KEYWORDS,
                                       "The line lineno of the file filename, as text."};

int pyresult_linecache_install(void)
{
	PyObject *lc = PyImport_ImportModule("linecache"), *f;
	int rc = -1;

	if (!lc)
		return -1;
	if ((linecache_getline_real = PyObject_GetAttrString(lc, "getline")) != NULL &&
	    (f = PyCFunction_New(&code_getline_def, NULL)) != NULL) {
		rc = PyObject_SetAttrString(lc, "getline", f);
		Py_DECREF(f);
	}
	Py_DECREF(lc);
	return rc;
}

void pyresult_call_source(const char *src)
{
	call_source = src;
	if (src)
		moves_now_n = 0;
}

void pyresult_line_moved(long lineno, long from, long delta)
{
	if (moves_now_n < MOVES_MAX)
		moves_now[moves_now_n++] = (struct line_move){lineno, from, delta};
}

/* The text CPython's traceback module gives for exc (None: "NoneType: None"): the chain, one
 * exception with its traceback, or (only) its last line. limit as the module's. */
static PyObject *tb_text(PyObject *exc, PyObject *limit_obj, int chain, int only)
{
	struct strbuf b = {0};
	struct text m = {0};
	struct tb_margin margin = {0};
	long limit = TRACEBACK_ALL;
	PyObject *r;

	if (limit_obj && limit_obj != Py_None) {
		limit = PyLong_AsLong(limit_obj);
		if (limit == -1 && PyErr_Occurred())
			return NULL;
		if (limit == TRACEBACK_ALL)
			limit++;
	}
	if (exc == Py_None) {
		sb_str(&b, "NoneType: None\n");
	} else {
		exc_message(exc, &m);
		if (only) {
			format_line(exc, &m, &b); /* a syntax error's place too, and the notes */
		} else if (chain) {
			format_chain(exc, call_source ? call_source : "", &m, limit, 0, NULL,
			             &margin, &b);
		} else {
			format_one(exc, call_source ? call_source : "", &m, limit, NULL, &margin,
			           &b);
		}
		text_clear(&m);
	}
	margin_clear(&margin);
	if (b.failed) {
		free(b.s);
		return PyErr_NoMemory();
	}
	r = PyUnicode_DecodeUTF8(b.s ? b.s : "", (Py_ssize_t)b.len, "replace");
	free(b.s);
	return r;
}

/* The exception of format_exception's arguments: exc itself, or value when the old three are
 * given (value and tb both, or neither). Borrowed, or NULL with the module's errors. */
static PyObject *tb_exception(PyObject *exc, PyObject *value, PyObject *tb)
{
	if ((value == NULL) != (tb == NULL)) {
		PyErr_SetString(PyExc_ValueError, "Both or neither of value and tb must be given");
		return NULL;
	}
	if (value)
		exc = value;
	if (exc != Py_None && !PyExceptionInstance_Check(exc)) {
		PyErr_Format(PyExc_TypeError, "Exception expected for value, %s found",
		             Py_TYPE(exc)->tp_name);
		return NULL;
	}
	return exc;
}

/* The exception being handled (sys.exception()), new reference: None when there is none. */
static PyObject *tb_handled(void)
{
	PyObject *e = PyErr_GetHandledException();

	return e ? e : Py_NewRef(Py_None);
}

/* text (a new reference, taken; NULL: the error stands) written to file as print() writes it;
 * no file: the stream sys names (sys.stdout or sys.stderr: the code's, or contextlib's
 * redirection), else the call's own. None, or NULL. */
PyObject *pyresult_stream_write(PyObject *text, PyObject *file, int which)
{
	PyObject *r;

	if (!text)
		return NULL;
	if (!file || file == Py_None)
		file = PySys_GetObject(which == CAPTURE_STDOUT ? "stdout" : "stderr");
	if (!file || file == Py_None)
		file = capture_stream(which);
	/* Held: the stream's write may replace the sys stream that held it. */
	Py_INCREF(file);
	r = PyObject_CallMethod(file, "write", "O", text);
	Py_DECREF(file);
	Py_DECREF(text);
	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_NONE;
}

/* text written to file as print() would (no file: the code's sys.stderr). */
static PyObject *tb_print(PyObject *text, PyObject *file)
{
	return pyresult_stream_write(text, file, CAPTURE_STDERR);
}

/* text (a new reference, or NULL) as format_exception's list of lines. */
static PyObject *tb_lines(PyObject *text)
{
	PyObject *lines;

	if (!text)
		return NULL;
	lines = PyUnicode_Splitlines(text, 1);
	Py_DECREF(text);
	return lines;
}

static PyObject *tb_format_exception(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"", "value", "tb", "limit", "chain", NULL};
	PyObject *exc, *value = NULL, *tb = NULL, *limit = NULL;
	int chain = 1;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOp:format_exception", names, &exc, &value,
	                                 &tb, &limit, &chain) ||
	    !(exc = tb_exception(exc, value, tb)))
		return NULL;
	return tb_lines(tb_text(exc, limit, chain, 0));
}

static PyObject *tb_print_exception(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"", "value", "tb", "limit", "file", "chain", NULL};
	PyObject *exc, *value = NULL, *tb = NULL, *limit = NULL, *file = NULL;
	int chain = 1;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOp:print_exception", names, &exc, &value,
	                                 &tb, &limit, &file, &chain) ||
	    !(exc = tb_exception(exc, value, tb)))
		return NULL;
	return tb_print(tb_text(exc, limit, chain, 0), file);
}

static PyObject *tb_format_exception_only(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"", "value", NULL};
	PyObject *exc, *value = NULL;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:format_exception_only", names, &exc,
	                                 &value) ||
	    !(exc = tb_exception(value ? value : exc, NULL, NULL)))
		return NULL;
	return tb_lines(tb_text(exc, NULL, 0, 1));
}

static PyObject *tb_format_exc(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"limit", "chain", NULL};
	PyObject *limit = NULL, *exc, *text;
	int chain = 1;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op:format_exc", names, &limit, &chain))
		return NULL;
	exc = tb_handled();
	text = tb_text(exc, limit, chain, 0);
	Py_DECREF(exc);
	return text;
}

static PyObject *tb_print_exc(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"limit", "file", "chain", NULL};
	PyObject *limit = NULL, *file = NULL, *exc, *text;
	int chain = 1;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOp:print_exc", names, &limit, &file, &chain))
		return NULL;
	exc = tb_handled();
	text = tb_text(exc, limit, chain, 0);
	Py_DECREF(exc);
	return tb_print(text, file);
}

/* ---- traceback's entries: extract_tb, format_tb, extract_stack, format_list ... --------------- */

/* traceback.FrameSummary: an entry as a named 4-tuple (filename, lineno, name, line), and
 * traceback.StackSummary: a list of them with format(). Made once, immutable. */
static PyTypeObject *frame_summary;
static PyTypeObject *stack_summary;

static PyStructSequence_Field frame_summary_fields[] = {
    {"filename", "the file of the entry's code"},
    {"lineno", "the line the entry was at"},
    {"name", "the entry's function"},
    {"line", "the line's text, stripped ('' when its source is not at hand)"},
    {"locals", "None: locals are not captured"},
    {NULL, NULL},
};
static PyStructSequence_Desc frame_summary_desc = {
    "traceback.FrameSummary", "An entry of a traceback or a stack.", frame_summary_fields, 4};

/* As the real one shows an entry: <FrameSummary file F, line N in NAME>. */
static PyObject *frame_summary_repr(PyObject *self)
{
	return PyUnicode_FromFormat("<FrameSummary file %S, line %S in %S>",
	                            PyTuple_GET_ITEM(self, 0), PyTuple_GET_ITEM(self, 1),
	                            PyTuple_GET_ITEM(self, 2));
}

/* The entry of code co at lineno. Runs no Python code. */
static PyObject *summary_of(PyCodeObject *co, long lineno)
{
	PyObject *fs = PyStructSequence_New(frame_summary), *line = NULL;
	const char *file = PyUnicode_AsUTF8(co->co_filename);
	struct strbuf b = {0};

	PyErr_Clear();
	if (!fs)
		return NULL;
	if (file && strcmp(file, INTERP_FILENAME) == 0)
		source_line(source_of(co, call_source ? call_source : ""), lineno, &b, co, -1);
	if (b.failed) {
		free(b.s);
		Py_DECREF(fs);
		return PyErr_NoMemory();
	}
	/* source_line's "    text\n": the text, stripped as the real one strips it. */
	while (b.len > 4 &&
	       (b.s[b.len - 1] == '\n' || b.s[b.len - 1] == ' ' || b.s[b.len - 1] == '\t'))
		b.len--;
	line = PyUnicode_DecodeUTF8(b.len > 4 ? b.s + 4 : "", b.len > 4 ? (Py_ssize_t)b.len - 4 : 0,
	                            "replace");
	free(b.s);
	if (!line) {
		Py_DECREF(fs);
		return NULL;
	}
	PyStructSequence_SetItem(fs, 0, Py_NewRef(co->co_filename));
	PyStructSequence_SetItem(fs, 1, PyLong_FromLong(lineno));
	PyStructSequence_SetItem(fs, 2, Py_NewRef(co->co_name));
	PyStructSequence_SetItem(fs, 3, line);
	PyStructSequence_SetItem(fs, 4, Py_NewRef(Py_None));
	if (!PyStructSequence_GetItem(fs, 1))
		Py_CLEAR(fs);
	return fs;
}

/* limit as the module takes it: NULL or None for all (TRACEBACK_ALL). 0, or -1 with an error. */
static int tb_limit(PyObject *obj, long *limit)
{
	*limit = TRACEBACK_ALL;
	if (!obj || obj == Py_None)
		return 0;
	*limit = PyLong_AsLong(obj);
	if (*limit == -1 && PyErr_Occurred())
		return -1;
	if (*limit == TRACEBACK_ALL)
		(*limit)++;
	return 0;
}

/* entries (a list, stolen) cut to limit as the real extract does (limit >= 0: the first limit
 * of them; < 0: the last -limit), reversed when asked, as a StackSummary. */
static PyObject *summary_list(PyObject *entries, long limit, int reverse)
{
	Py_ssize_t n;
	PyObject *r;

	if (!entries)
		return NULL;
	n = PyList_GET_SIZE(entries);
	if (limit != TRACEBACK_ALL) {
		Py_ssize_t from = 0, to = n;
		if (limit >= 0)
			to = limit < n ? (Py_ssize_t)limit : n;
		else
			from = -limit < n ? n + (Py_ssize_t)limit : 0;
		if (PyList_SetSlice(entries, to, n, NULL) < 0 ||
		    PyList_SetSlice(entries, 0, from, NULL) < 0) {
			Py_DECREF(entries);
			return NULL;
		}
	}
	if (reverse && PyList_Reverse(entries) < 0) {
		Py_DECREF(entries);
		return NULL;
	}
	r = PyObject_CallOneArg((PyObject *)stack_summary, entries);
	Py_DECREF(entries);
	return r;
}

/* The entries of traceback tb (None: none), oldest first. */
static PyObject *tb_entries(PyObject *tb)
{
	PyObject *entries = PyList_New(0);

	if (!entries || tb == Py_None)
		return entries;
	if (!PyTraceBack_Check(tb)) {
		Py_DECREF(entries);
		PyErr_Format(PyExc_TypeError, "a traceback is expected, not %.200s",
		             Py_TYPE(tb)->tp_name);
		return NULL;
	}
	/* The C structures, not the attributes: tb_frame and tb_next are refused while armed. A
	 * traceback's chain is fixed once made (tb_next is refused), and the list holds tb. */
	for (PyTracebackObject *t = (PyTracebackObject *)tb; t; t = t->tb_next) {
		PyCodeObject *co = PyFrame_GetCode(t->tb_frame);
		PyObject *fs = summary_of(co, t->tb_lineno);
		Py_DECREF(co);
		if (!fs || PyList_Append(entries, fs) < 0) {
			Py_XDECREF(fs);
			Py_DECREF(entries);
			return NULL;
		}
		Py_DECREF(fs);
	}
	return entries;
}

/* The entries of the caller's stack, most recent first. f: None only (frames are out of the
 * code's reach). */
static PyObject *stack_entries(PyObject *f)
{
	PyObject *entries;
	PyFrameObject *frame;

	if (f && f != Py_None) {
		PyErr_SetString(
		    PyExc_TypeError,
		    "frames are not available in the sandbox: leave f out (the stack of "
		    "the caller)");
		return NULL;
	}
	if (!(entries = PyList_New(0)))
		return NULL;
	frame = PyEval_GetFrame();
	Py_XINCREF(frame);
	while (frame) {
		PyCodeObject *co = PyFrame_GetCode(frame);
		PyObject *fs = summary_of(co, PyFrame_GetLineNumber(frame));
		PyFrameObject *back = PyFrame_GetBack(frame);
		Py_DECREF(co);
		Py_DECREF(frame);
		frame = back;
		if (!fs || PyList_Append(entries, fs) < 0) {
			Py_XDECREF(fs);
			Py_XDECREF(frame);
			Py_DECREF(entries);
			return NULL;
		}
		Py_DECREF(fs);
	}
	return entries;
}

/* The four fields of an entry (a FrameSummary or any 4-item sequence), new references. */
static int entry_fields(PyObject *e, PyObject *out[4])
{
	PyObject *t = Py_IS_TYPE(e, frame_summary) ? Py_NewRef(e) : PySequence_Tuple(e);

	if (!t)
		return -1;
	if (!Py_IS_TYPE(e, frame_summary) && PyTuple_GET_SIZE(t) != 4) {
		PyErr_Format(PyExc_ValueError,
		             "an entry is (filename, lineno, name, line): %zd "
		             "values",
		             PyTuple_GET_SIZE(t));
		Py_DECREF(t);
		return -1;
	}
	for (int i = 0; i < 4; i++)
		out[i] = Py_NewRef(PyTuple_GET_ITEM(t, i));
	Py_DECREF(t);
	return 0;
}

/* Append s (stolen; NULL: an error already set) to list. 0 or -1. */
static int append_new(PyObject *list, PyObject *s)
{
	int rc = s ? PyList_Append(list, s) : -1;

	Py_XDECREF(s);
	return rc;
}

/* An entry's lines: '  File "F", line N, in NAME' and its stripped source line, if any. */
static PyObject *entry_text(PyObject *const f[4])
{
	PyObject *line, *stripped, *s;

	if (f[3] == Py_None)
		return PyUnicode_FromFormat("  File \"%S\", line %S, in %S\n", f[0], f[1], f[2]);
	line = PyObject_Str(f[3]);
	/* str's own strip: a subclass's could give anything. */
	stripped =
	    line ? PyObject_CallMethod((PyObject *)&PyUnicode_Type, "strip", "O", line) : NULL;
	Py_XDECREF(line);
	if (!stripped)
		return NULL;
	s = PyUnicode_GET_LENGTH(stripped) > 0
	        ? PyUnicode_FromFormat("  File \"%S\", line %S, in %S\n    %U\n", f[0], f[1], f[2],
	                               stripped)
	        : PyUnicode_FromFormat("  File \"%S\", line %S, in %S\n", f[0], f[1], f[2]);
	Py_DECREF(stripped);
	return s;
}

/* The real StackSummary.format: a string per entry, a run of more than three of the same
 * (file, line, name) counted. list is any sequence of entries (copied first: the code's
 * __eq__ or __str__ may change it). */
static PyObject *format_entries(PyObject *list)
{
	PyObject *items = PySequence_Tuple(list), *out = items ? PyList_New(0) : NULL;
	PyObject *last[4] = {NULL};
	long same = 0;
	int rc = out ? 0 : -1;

	for (Py_ssize_t i = 0; rc == 0 && i <= PyTuple_GET_SIZE(items); i++) {
		PyObject *f[4] = {NULL};
		int eq = 0, end = i == PyTuple_GET_SIZE(items);

		if (!end && entry_fields(PyTuple_GET_ITEM(items, i), f) < 0)
			break;
		eq = !end && last[0] != NULL;
		for (int k = 0; k < 3 && eq == 1; k++)
			eq = PyObject_RichCompareBool(f[k], last[k], Py_EQ);
		if (eq < 0)
			rc = -1;
		else if (!eq && same > TRACEBACK_REPEATS_SHOWN)
			rc = append_new(out, PyUnicode_FromFormat(
			                         "  [Previous line repeated %ld more time%s]\n",
			                         same - TRACEBACK_REPEATS_SHOWN,
			                         same - TRACEBACK_REPEATS_SHOWN > 1 ? "s" : ""));
		if (rc == 0 && !end) {
			same = eq ? same + 1 : 1;
			if (same <= TRACEBACK_REPEATS_SHOWN)
				rc = append_new(out, entry_text(f));
		}
		for (int k = 0; k < 4; k++)
			Py_XSETREF(last[k], f[k]);
	}
	for (int k = 0; k < 4; k++)
		Py_XDECREF(last[k]);
	Py_XDECREF(items);
	if (rc < 0 || PyErr_Occurred())
		Py_CLEAR(out);
	return out;
}

/* The strings of format_entries joined, written to file as print_exception writes. */
static PyObject *print_entries(PyObject *lines, PyObject *file)
{
	PyObject *empty, *text;

	if (!lines)
		return NULL;
	empty = PyUnicode_New(0, 0);
	text = empty ? PyUnicode_Join(empty, lines) : NULL;
	Py_XDECREF(empty);
	Py_DECREF(lines);
	return tb_print(text, file);
}

/* extract_tb, format_tb and print_tb (stack 0: of a traceback), extract_stack, format_stack
 * and print_stack (1: of the caller's stack), as their arguments ask. */
enum { ENTRIES_EXTRACT, ENTRIES_FORMAT, ENTRIES_PRINT };

static PyObject *entries_call(PyObject *args, PyObject *kw, int stack, int what)
{
	static char *tb_names[] = {"tb", "limit", "file", NULL};
	static char *tb_names2[] = {"tb", "limit", NULL};
	static char *stack_names[] = {"f", "limit", "file", NULL};
	static char *stack_names2[] = {"f", "limit", NULL};
	static const char *const formats[2][3] = {
	    {"O|O:extract_tb", "O|O:format_tb", "O|OO:print_tb"},
	    {"|OO:extract_stack", "|OO:format_stack", "|OOO:print_stack"},
	};
	char **names = what == ENTRIES_PRINT ? (stack ? stack_names : tb_names)
	                                     : (stack ? stack_names2 : tb_names2);
	PyObject *from = NULL, *limit_obj = NULL, *file = NULL, *s;
	long limit;

	if (!PyArg_ParseTupleAndKeywords(args, kw, formats[stack][what], names, &from, &limit_obj,
	                                 &file) ||
	    tb_limit(limit_obj, &limit) < 0)
		return NULL;
	s = summary_list(stack ? stack_entries(from) : tb_entries(from), limit, stack);
	if (!s || what == ENTRIES_EXTRACT)
		return s;
	Py_SETREF(s, format_entries(s));
	return what == ENTRIES_FORMAT ? s : print_entries(s, file);
}

#define ENTRIES_FN(fn, stack, what)                                                                \
	static PyObject *fn(PyObject *self, PyObject *args, PyObject *kw)                          \
	{                                                                                          \
		(void)self;                                                                        \
		return entries_call(args, kw, stack, what);                                        \
	}

ENTRIES_FN(tb_extract_tb, 0, ENTRIES_EXTRACT)
ENTRIES_FN(tb_format_tb, 0, ENTRIES_FORMAT)
ENTRIES_FN(tb_print_tb, 0, ENTRIES_PRINT)
ENTRIES_FN(tb_extract_stack, 1, ENTRIES_EXTRACT)
ENTRIES_FN(tb_format_stack, 1, ENTRIES_FORMAT)
ENTRIES_FN(tb_print_stack, 1, ENTRIES_PRINT)

static PyObject *tb_format_list(PyObject *self, PyObject *list)
{
	(void)self;
	return format_entries(list);
}

static PyObject *tb_print_list(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"extracted_list", "file", NULL};
	PyObject *list, *file = NULL;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:print_list", names, &list, &file))
		return NULL;
	return print_entries(format_entries(list), file);
}

static PyObject *stack_format(PyObject *self, PyObject *unused)
{
	(void)unused;
	return format_entries(self);
}

static PyObject *stack_from_list(PyObject *cls, PyObject *list)
{
	PyObject *items = PySequence_List(list), *r;

	if (!items)
		return NULL;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
		PyObject *f[4], *fs;
		if (entry_fields(PyList_GET_ITEM(items, i), f) < 0) {
			Py_DECREF(items);
			return NULL;
		}
		if (!(fs = PyStructSequence_New(frame_summary))) {
			for (int k = 0; k < 4; k++)
				Py_DECREF(f[k]);
			Py_DECREF(items);
			return NULL;
		}
		for (int k = 0; k < 4; k++)
			PyStructSequence_SetItem(fs, k, f[k]);
		PyStructSequence_SetItem(fs, 4, Py_NewRef(Py_None));
		PyList_SetItem(items, i, fs);
	}
	r = PyObject_CallOneArg(cls, items);
	Py_DECREF(items);
	return r;
}

static PyMethodDef stack_summary_methods[] = {
    {"format", stack_format, METH_NOARGS,
     PyDoc_STR("format()\n--\n\nA string per entry, as a traceback shows it.")},
    {"from_list", stack_from_list, METH_O | METH_CLASS,
     PyDoc_STR("from_list(a_list)\n--\n\nA StackSummary of FrameSummary entries or "
               "(filename, lineno, name, line) tuples.")},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot stack_summary_slots[] = {
    {Py_tp_doc, (void *)"A list of FrameSummary entries of a traceback or a stack."},
    {Py_tp_methods, stack_summary_methods},
    {0, NULL},
};

static PyType_Spec stack_summary_spec = {"traceback.StackSummary", 0, 0,
                                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
                                         stack_summary_slots};

/* Both types, once (the zygote fills the module). 0 or -1. */
static int summary_types(void)
{
	if (!frame_summary) {
		frame_summary = PyStructSequence_NewType(&frame_summary_desc);
		if (!frame_summary)
			return -1;
		frame_summary->tp_repr = frame_summary_repr;
		frame_summary->tp_flags |= Py_TPFLAGS_IMMUTABLETYPE;
		PyType_Modified(frame_summary);
	}
	if (!stack_summary) {
		PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyList_Type);
		stack_summary =
		    bases ? (PyTypeObject *)PyType_FromSpecWithBases(&stack_summary_spec, bases)
		          : NULL;
		Py_XDECREF(bases);
		if (!stack_summary)
			return -1;
	}
	return 0;
}

#define TB_FN(name, fn, doc)                                                                       \
	{                                                                                          \
		name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS,               \
		    PyDoc_STR(doc)                                                                 \
	}

static PyMethodDef traceback_functions[] = {
    TB_FN("format_exc", tb_format_exc,
          "format_exc(limit=None, chain=True)\n--\n\nThe exception being handled, "
          "formatted as the traceback printed for an uncaught one."),
    TB_FN("print_exc", tb_print_exc,
          "print_exc(limit=None, file=None, chain=True)\n--\n\nPrint format_exc() to file "
          "(default: sys.stderr)."),
    TB_FN("format_exception", tb_format_exception,
          "format_exception(exc, /, value, tb, limit=None, chain=True)\n--\n\nThe lines "
          "of an exception's traceback and its message."),
    TB_FN("print_exception", tb_print_exception,
          "print_exception(exc, /, value, tb, limit=None, file=None, chain=True)\n--\n\n"
          "Print an exception's traceback and message to file (default: sys.stderr)."),
    TB_FN("format_exception_only", tb_format_exception_only,
          "format_exception_only(exc, /, value)\n--\n\nThe line naming an exception's type "
          "and message."),
    TB_FN("extract_tb", tb_extract_tb,
          "extract_tb(tb, limit=None)\n--\n\nThe entries of a traceback (FrameSummary: "
          "filename, lineno, name, line), oldest first."),
    TB_FN("format_tb", tb_format_tb,
          "format_tb(tb, limit=None)\n--\n\nA string per entry of a traceback."),
    TB_FN("print_tb", tb_print_tb,
          "print_tb(tb, limit=None, file=None)\n--\n\nPrint a traceback's entries to file "
          "(default: sys.stderr)."),
    TB_FN("extract_stack", tb_extract_stack,
          "extract_stack(f=None, limit=None)\n--\n\nThe entries of the caller's stack, "
          "oldest first."),
    TB_FN("format_stack", tb_format_stack,
          "format_stack(f=None, limit=None)\n--\n\nA string per entry of the caller's "
          "stack."),
    TB_FN("print_stack", tb_print_stack,
          "print_stack(f=None, limit=None, file=None)\n--\n\nPrint the caller's stack to "
          "file (default: sys.stderr)."),
    TB_FN("print_list", tb_print_list,
          "print_list(extracted_list, file=None)\n--\n\nPrint format_list(extracted_list) to "
          "file (default: sys.stderr)."),
    {"format_list", tb_format_list, METH_O,
     PyDoc_STR("format_list(extracted_list)\n--\n\nA string per entry of a list of "
               "FrameSummary entries or (filename, lineno, name, line) tuples.")},
    {NULL, NULL, 0, NULL},
};

int pyresult_traceback_fill(PyObject *module)
{
	if (summary_types() < 0 || PyModule_AddFunctions(module, traceback_functions) < 0 ||
	    PyModule_AddObjectRef(module, "FrameSummary", (PyObject *)frame_summary) < 0 ||
	    PyModule_AddObjectRef(module, "StackSummary", (PyObject *)stack_summary) < 0)
		return -1;
	return 0;
}

/* ---- logging's tracebacks ------------------------------------------------------------------ */

/* logging.Formatter.formatException(self, ei): the traceback as format_exception's, without
 * its last newline (the real one walks the frames, which are out of reach). */
static PyObject *log_format_exception(PyObject *self, PyObject *args)
{
	PyObject *ei, *value = Py_None, *text, *cut;
	Py_ssize_t n;

	(void)self;
	if (!PyArg_ParseTuple(args, "O:formatException", &ei))
		return NULL;
	if (PyTuple_Check(ei) && PyTuple_GET_SIZE(ei) >= 2 &&
	    PyExceptionInstance_Check(PyTuple_GET_ITEM(ei, 1)))
		value = PyTuple_GET_ITEM(ei, 1);
	text = tb_text(value, NULL, 1, 0);
	if (!text)
		return NULL;
	n = PyUnicode_GET_LENGTH(text);
	if (n == 0 || PyUnicode_READ_CHAR(text, n - 1) != '\n')
		return text;
	cut = PyUnicode_Substring(text, 0, n - 1);
	Py_DECREF(text);
	return cut;
}

/* logging.Handler.handleError(self, record): what the real one prints on stderr when a record
 * cannot be emitted (the error, the record's message and arguments), when the module's
 * raiseExceptions says to. */
static PyObject *log_handle_error(PyObject *self, PyObject *args)
{
	PyObject *record, *logging, *raise, *exc, *tb, *msg = NULL, *rargs = NULL, *text = NULL;
	int on;

	(void)self;
	if (!PyArg_ParseTuple(args, "O:handleError", &record))
		return NULL;
	logging = PyDict_GetItemString(PyImport_GetModuleDict(), "logging");
	raise = logging ? PyObject_GetAttrString(logging, "raiseExceptions") : NULL;
	on = raise ? PyObject_IsTrue(raise) : 1;
	Py_XDECREF(raise);
	PyErr_Clear();
	if (on <= 0)
		Py_RETURN_NONE;
	exc = tb_handled();
	tb = tb_text(exc, NULL, 1, 0);
	Py_DECREF(exc);
	if (tb) {
		msg = PyObject_GetAttrString(record, "msg");
		rargs = msg ? PyObject_GetAttrString(record, "args") : NULL;
		text = rargs ? PyUnicode_FromFormat("--- Logging error ---\n%UMessage: %R\n"
		                                    "Arguments: %S\n",
		                                    tb, msg, rargs)
		             : NULL;
	}
	Py_XDECREF(tb);
	Py_XDECREF(msg);
	Py_XDECREF(rargs);
	return tb_print(text, NULL);
}

static PyMethodDef log_format_exception_def = {
    "formatException", log_format_exception, METH_VARARGS,
    PyDoc_STR("Format the exception of an exc_info tuple as a traceback's text.")};
static PyMethodDef log_handle_error_def = {
    "handleError", log_handle_error, METH_VARARGS,
    PyDoc_STR("Say on stderr that a record could not be emitted, and why.")};

/* Make type.name the method def, on the type. 0 or -1. */
static int method_set(PyObject *module, const char *type_name, PyMethodDef *def)
{
	PyObject *type = PyObject_GetAttrString(module, type_name), *m;
	int rc = -1;

	if (type && PyType_Check(type)) {
		m = PyDescr_NewMethod((PyTypeObject *)type, def);
		rc = m ? PyObject_SetAttrString(type, def->ml_name, m) : -1;
		Py_XDECREF(m);
	} else if (type) {
		PyErr_Format(PyExc_TypeError, "logging.%s is not a class", type_name);
	}
	Py_XDECREF(type);
	return rc;
}

int pyresult_logging_prepare(void)
{
	PyObject *logging = PyDict_GetItemString(PyImport_GetModuleDict(), "logging");

	if (!logging)
		return 0;
	return method_set(logging, "Formatter", &log_format_exception_def) < 0 ||
	               method_set(logging, "Handler", &log_handle_error_def) < 0
	           ? -1
	           : 0;
}
