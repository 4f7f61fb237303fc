/* jsonrpc.c - strict JSON parsing and the JSON-RPC 2.0 envelope: validation, ids (echoed and
 * compared as the client wrote them), responses.
 * Pure: no I/O, no globals. Returns 0 or a negative errno (JSONRPC_* codes where noted);
 * allocation failures from json-c surface as -ENOMEM or a NULL object. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "protocol_internal.h"

size_t proto_utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (n == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		need = 1;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		need = 2;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		need = 3;
	else
		return 0; /* continuation byte, overlong lead (c0, c1) or beyond U+10FFFF */
	/* The second byte's range excludes overlongs, surrogates and code points over U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n <= need || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i <= need; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return need + 1;
}

size_t proto_clip(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

size_t proto_escaped_len(const char *s, size_t n)
{
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		/* json-c's json_escape_str: short escapes, then \u00XX for other controls; '/' is
		 * escaped unless JSON_C_TO_STRING_NOSLASHESCAPE, so count the worst case. */
		if (ch == '"' || ch == '\\' || ch == '/' || ch == '\b' || ch == '\f' ||
		    ch == '\n' || ch == '\r' || ch == '\t')
			len += 2;
		else if (ch < 0x20)
			len += 6;
		else
			len += 1;
	}
	return len;
}

/* The 16-bit unit of a \u escape at p (4 hex digits), or -1. */
static long lex_unit(const unsigned char *p, size_t n)
{
	long v = 0;

	if (n < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		int c = p[k], d = c >= '0' && c <= '9'   ? c - '0'
		                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
		                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                                         : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The body of a string literal starting after its opening quote: no raw control characters,
 * strict UTF-8, escapes limited to JSON's, and a \u escape of a surrogate only as half of a
 * pair (json-c turned a lone one into U+FFFD: two ids "\ud800" and "\udbff" became one). *nul
 * is set when the text holds \u0000. Returns the index after the closing quote or 0. */
static size_t lex_string(const unsigned char *p, size_t n, size_t i, int *nul)
{
	while (i < n) {
		size_t k;

		if (p[i] == '"')
			return i + 1;
		if (p[i] < 0x20)
			return 0;
		if (p[i] == '\\') {
			long u, lo;
			if (i + 1 >= n || !memchr("\"\\/bfnrtu", p[i + 1], 9))
				return 0;
			if (p[i + 1] != 'u') {
				i += 2;
				continue;
			}
			u = lex_unit(p + i + 2, n - i - 2);
			if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
				return 0;
			*nul |= u == 0;
			i += 6;
			if (u < 0xd800 || u > 0xdbff)
				continue;
			lo = i + 1 < n && p[i] == '\\' && p[i + 1] == 'u'
			         ? lex_unit(p + i + 2, n - i - 2)
			         : -1;
			if (lo < 0xdc00 || lo > 0xdfff)
				return 0;
			i += 6;
			continue;
		}
		k = proto_utf8_seq(p + i, n - i);
		if (k == 0)
			return 0;
		i += k;
	}
	return 0;
}

/* The end of the JSON number at p[i] (a minus or a digit), or 0 when it is not one: json-c
 * reads "00" and "-01" as 0 and -1, and "1." as 1. */
static size_t lex_number(const unsigned char *p, size_t n, size_t i)
{
#define DIGITS(p, n, i) ((i) < (n) && (p)[i] >= '0' && (p)[i] <= '9')
	size_t j;

	if (p[i] == '-')
		i++;
	if (!DIGITS(p, n, i))
		return 0;
	if (p[i++] != '0')
		while (DIGITS(p, n, i))
			i++;
	if (i < n && p[i] == '.') {
		if (!DIGITS(p, n, i + 1))
			return 0;
		for (i++; DIGITS(p, n, i); i++)
			;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		j = i + 1;
		if (j < n && (p[j] == '+' || p[j] == '-'))
			j++;
		if (!DIGITS(p, n, j))
			return 0;
		for (i = j; DIGITS(p, n, i); i++)
			;
	}
	/* A number ends at a structural character or white space ("01" is two tokens). */
	if (i < n && !memchr(" \t\r\n,]}", p[i], 7))
		return 0;
	return i;
#undef DIGITS
}

/* json-c's tokener, even with JSON_TOKENER_STRICT, accepts single-quoted strings, NaN,
 * Infinity, raw control characters in strings and numbers JSON has not ("00", "-01", "1."),
 * and lets encoded surrogates through its UTF-8 check. One pass over the bytes refuses all of
 * them before the tokener runs: outside strings only JSON's structural characters, numbers by
 * JSON's grammar and the letters of true/false/null may appear. A key may not hold \u0000:
 * json-c's keys end there ("id\u0000" was read as a second "id"). */
static int lex_check(const unsigned char *p, size_t n)
{
	static const char outside[] = " \t\r\n{}[],:truefalsn";
	size_t i = 0, values = 0;

	while (i < n) {
		/* a value starts: a number, a string (a key too), an object, an array, a literal */
		if ((memchr("-0123456789\"{[", p[i], 14) && p[i]) ||
		    ((p[i] == 't' || p[i] == 'f' || p[i] == 'n') &&
		     (i == 0 || !memchr("truefalsn", p[i - 1], 9)))) {
			if (++values > PROTO_MAX_VALUES)
				return -EMSGSIZE;
		}
		if (p[i] == '-' || (p[i] >= '0' && p[i] <= '9')) {
			i = lex_number(p, n, i);
			if (i == 0)
				return -EINVAL;
			continue;
		}
		if (p[i] == '"') {
			int nul = 0;
			i = lex_string(p, n, i + 1, &nul);
			if (i == 0)
				return -EINVAL;
			if (nul) {
				size_t j = i;
				while (j < n && memchr(" \t\r\n", p[j], 4))
					j++;
				if (j < n && p[j] == ':')
					return -EINVAL;
			}
			continue;
		}
		if (p[i] == '\0' || !memchr(outside, p[i], sizeof(outside) - 1))
			return -EINVAL;
		i++;
	}
	return 0;
}

int proto_parse(const char *buf, size_t len, json_object **out)
{
	struct json_tokener *tok = NULL;
	enum json_tokener_error err;
	json_object *obj = NULL;
	size_t end;
	int rc = -EINVAL, lex;

	if (len > PROTO_MAX_JSON || len > INT_MAX)
		return -EINVAL;
	if ((lex = lex_check((const unsigned char *)buf, len)) < 0)
		return lex;
	tok = json_tokener_new_ex(PROTO_MAX_DEPTH);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	err = json_tokener_get_error(tok);
	if (err == json_tokener_success) {
		end = json_tokener_get_parse_end(tok);
		for (; end < len; end++)
			if (!memchr(" \t\r\n", buf[end], 4))
				goto out;
	} else if (err == json_tokener_continue) {
		/* A bare number or literal ends only at a delimiter: supply one. Everything before
		 * was consumed, so nothing can trail. */
		obj = json_tokener_parse_ex(tok, " ", 1);
		if (json_tokener_get_error(tok) != json_tokener_success)
			goto out;
	} else {
		if (err == json_tokener_error_depth)
			rc = -E2BIG;
		goto out;
	}
	*out = obj;
	obj = NULL;
	rc = 0;
out:
	json_object_put(obj);
	json_tokener_free(tok);
	return rc;
}

json_object *proto_parse_json(const char *buf, size_t len)
{
	json_object *obj;

	if (proto_parse(buf, len, &obj) < 0)
		return NULL;
	return obj;
}

int proto_put(json_object *obj, const char *key, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int proto_put_null(json_object *obj, const char *key)
{
	return json_object_object_add(obj, key, NULL) < 0 ? -ENOMEM : 0;
}

int proto_append(json_object *arr, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* ---- Numbers as written ------------------------------------------------------------- */

/* A JSON number's exact value: (-1)^neg x 0.D x 10^point, where D, its significant digits
 * (no leading or trailing zeros), are the count digits from s[first] on, any '.' skipped.
 * Zero is {s, 0, 0, 0, 0} whatever its sign and exponent. */
struct decimal {
	const char *s;
	size_t first, count;
	int64_t point;
	int neg;
};

/* Exponents of more digits than this (leading zeros aside) are refused: no id needs one. */
#define EXPONENT_DIGITS_MAX 9

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Read s[0..n), which must be exactly one JSON number. Returns 0 or -EINVAL. */
static int decimal_parse(const char *s, size_t n, struct decimal *d)
{
	struct decimal r = {.s = s};
	size_t i = 0, digits = 0, int_digits = 0, lead = 0, last = 0, e;
	int64_t exp = 0;
	int dot = 0, exp_neg = 0;

	if (i < n && s[i] == '-')
		r.neg = 1, i++;
	if (i >= n || !is_digit(s[i]) || (s[i] == '0' && i + 1 < n && is_digit(s[i + 1])))
		return -EINVAL;
	/* Digits are counted from 1: lead zeros before the first non-zero one, last is the
	 * last non-zero one. */
	for (; i < n && (is_digit(s[i]) || (s[i] == '.' && !dot)); i++) {
		if (s[i] == '.') {
			if (i + 1 >= n || !is_digit(s[i + 1]))
				return -EINVAL;
			dot = 1;
			int_digits = digits;
			continue;
		}
		digits++;
		if (s[i] == '0')
			continue;
		if (last == 0) {
			r.first = i;
			lead = digits - 1;
		}
		last = digits;
	}
	if (!dot)
		int_digits = digits;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			exp_neg = s[i++] == '-';
		if (i >= n || !is_digit(s[i]))
			return -EINVAL;
		while (i < n && s[i] == '0')
			i++;
		for (e = 0; i < n && is_digit(s[i]); i++, e++) {
			if (e == EXPONENT_DIGITS_MAX)
				return -EINVAL;
			exp = exp * 10 + (s[i] - '0');
		}
	}
	if (i != n)
		return -EINVAL;
	if (last == 0) {
		r.neg = 0;
	} else {
		r.count = last - lead;
		r.point = (int64_t)int_digits - (int64_t)lead + (exp_neg ? -exp : exp);
	}
	*d = r;
	return 0;
}

static int decimal_is_integer(const struct decimal *d)
{
	return d->count == 0 || d->point >= (int64_t)d->count;
}

static int decimal_equal(const struct decimal *a, const struct decimal *b)
{
	size_t i = a->first, j = b->first, k;

	if (a->neg != b->neg || a->count != b->count || a->point != b->point)
		return 0;
	for (k = 0; k < a->count; k++, i++, j++) {
		i += a->s[i] == '.';
		j += b->s[j] == '.';
		if (a->s[i] != b->s[j])
			return 0;
	}
	return 1;
}

/* The value of a JSON number object, read from its JSON text: exact for the numbers
 * jsonrpc_keep_id_texts marked. Returns 0, -EINVAL (not a number, or not one we can read
 * exactly) or -ENOMEM. */
static int number_value(json_object *o, struct decimal *d)
{
	const char *s;
	size_t n;

	if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double))
		return -EINVAL;
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	if (!s)
		return -ENOMEM;
	return decimal_parse(s, n, d);
}

/* ---- Finding a member's text --------------------------------------------------------- */

/* The walk below runs over text proto_parse accepted, but stays within n whatever it reads. */

static size_t skip_ws(const char *p, size_t n, size_t i)
{
	while (i < n && memchr(" \t\r\n", p[i], 4))
		i++;
	return i;
}

/* The end of the string literal whose opening quote is p[i]. */
static size_t string_end(const char *p, size_t n, size_t i)
{
	for (i++; i < n && p[i] != '"'; i++)
		if (p[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

/* The end of the value that starts at p[i]. */
static size_t value_end(const char *p, size_t n, size_t i)
{
	size_t depth = 0;

	while (i < n) {
		if (p[i] == '"') {
			i = string_end(p, n, i);
		} else if (p[i] == '{' || p[i] == '[') {
			depth++;
			i++;
		} else if (p[i] == '}' || p[i] == ']') {
			if (depth == 0)
				return i;
			depth--;
			i++;
		} else if (depth == 0) {
			/* A number or a literal: it ends at a delimiter. */
			while (i < n && !memchr(" \t\r\n,:]}", p[i], 9))
				i++;
			return i;
		} else {
			i++;
		}
		if (depth == 0)
			return i;
	}
	return n;
}

static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The character a short escape \c stands for (\" \\ \/ stand for themselves). */
static unsigned int unescape(unsigned int c)
{
	switch (c) {
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	}
	return c;
}

/* Does the string literal at p[i] read as the ASCII name key, as json-c reads object keys
 * (escapes decoded, the name cut at a decoded NUL)? *end: the index after it. */
static int key_is(const char *p, size_t n, size_t i, const char *key, size_t *end)
{
	size_t k = 0;
	int same = 1, cut = 0;

	*end = string_end(p, n, i);
	for (i++; i + 1 < *end; i++) {
		unsigned int c = (unsigned char)p[i];

		if (c == '\\') {
			c = (unsigned char)p[++i];
			if (c == 'u') {
				c = 0;
				for (int h = 0; h < 4 && i + 1 < *end; h++) {
					int v = hex_value(p[++i]);

					c = c << 4 | (unsigned int)(v < 0 ? 0 : v);
				}
			} else {
				c = unescape(c);
			}
		}
		if (cut)
			continue;
		if (c == 0)
			cut = 1;
		else if (c >= 0x80 || key[k] != (char)c)
			same = 0;
		else
			k++;
	}
	return same && key[k] == '\0';
}

/* In the object whose text starts at p[i], the text [*vs, *ve) of the value of the last
 * member named key (json-c keeps the last of duplicate names). Returns 1 if there is one. */
static int member_text(const char *p, size_t n, size_t i, const char *key, size_t *vs, size_t *ve)
{
	size_t end, start;
	int found = 0, is_key;

	i = skip_ws(p, n, i);
	if (i >= n || p[i] != '{')
		return 0;
	i = skip_ws(p, n, i + 1);
	while (i < n && p[i] == '"') {
		is_key = key_is(p, n, i, key, &end);
		i = skip_ws(p, n, end);
		if (i >= n || p[i] != ':')
			return 0;
		start = skip_ws(p, n, i + 1);
		i = value_end(p, n, start);
		if (is_key) {
			*vs = start;
			*ve = i;
			found = 1;
		}
		i = skip_ws(p, n, i);
		if (i < n && p[i] == ',')
			i = skip_ws(p, n, i + 1);
	}
	return found;
}

size_t jsonrpc_id_text(const char *buf, size_t len, int *request, char *out, size_t cap)
{
	size_t vs, ve, ms, me, i;
	int is_string;

	*request = member_text(buf, len, 0, "method", &ms, &me) &&
	           member_text(buf, len, 0, "id", &vs, &ve);
	if (!*request || ve <= vs || ve - vs >= cap)
		return 0;
	/* Only what needs no decoding is copied: a plain string, or a number's characters. */
	is_string = buf[vs] == '"';
	if (is_string && (ve - vs < 2 || buf[ve - 1] != '"'))
		return 0;
	for (i = vs + (size_t)is_string; i < ve - (size_t)is_string; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (is_string ? c < 0x20 || c >= 0x7f || c == '"' || c == '\\'
		              : !memchr("-+.eE0123456789", c, 15))
			return 0;
	}
	memcpy(out, buf + vs, ve - vs);
	out[ve - vs] = '\0';
	return ve - vs;
}

/* The numbers of a message that go back to the client: its id, the request a cancellation
 * names, a call's progress token. */
static const char *const id_paths[][4] = {
    {"id", NULL},
    {"params", "requestId", NULL},
    {"params", "_meta", "progressToken", NULL},
};

/* If the value at path in msg (whose text is p[i..n)) is a number, make it print as written. */
static int keep_text(json_object *msg, const char *p, size_t n, size_t i, const char *const *path)
{
	json_object *v = msg;
	struct decimal d;
	size_t vs = i, ve = n;
	char *copy;

	for (; *path; path++)
		if (!json_object_object_get_ex(v, *path, &v) ||
		    !member_text(p, ve, vs, *path, &vs, &ve))
			return 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return 0;
	/* The walk and json-c agree on valid JSON; should they not, json-c's text stays. */
	if (decimal_parse(p + vs, ve - vs, &d) < 0)
		return 0;
	copy = strndup(p + vs, ve - vs);
	if (!copy)
		return -ENOMEM;
	json_object_set_serializer(v, json_object_userdata_to_json_string, copy,
	                           json_object_free_userdata);
	return 0;
}

static int keep_texts(json_object *msg, const char *p, size_t n, size_t i)
{
	size_t k;
	int rc;

	if (!json_object_is_type(msg, json_type_object))
		return 0;
	for (k = 0; k < sizeof(id_paths) / sizeof(id_paths[0]); k++) {
		rc = keep_text(msg, p, n, i, id_paths[k]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int jsonrpc_keep_id_texts(json_object *msg, const char *buf, size_t len)
{
	size_t i = skip_ws(buf, len, 0), idx, end;
	int rc;

	if (!json_object_is_type(msg, json_type_array))
		return keep_texts(msg, buf, len, i);
	if (i >= len || buf[i] != '[')
		return 0;
	i = skip_ws(buf, len, i + 1);
	/* Arrays keep their order: the idx-th element's text is the idx-th value. */
	for (idx = 0; idx < json_object_array_length(msg) && i < len && buf[i] != ']'; idx++) {
		end = value_end(buf, len, i);
		rc = keep_texts(json_object_array_get_idx(msg, idx), buf, end, i);
		if (rc < 0)
			return rc;
		i = skip_ws(buf, len, end);
		if (i < len && buf[i] == ',')
			i = skip_ws(buf, len, i + 1);
	}
	return 0;
}

/* 1 when id is a string or an integer of at most PROTO_MAX_ID bytes, 0 when it is not, -ENOMEM
 * when there was no memory to read its number. */
static int id_check(json_object *id)
{
	struct decimal d;
	size_t n = 0;
	int rc;

	if (json_object_is_type(id, json_type_string))
		return (size_t)json_object_get_string_len(id) <= PROTO_MAX_ID;
	if ((json_object_is_type(id, json_type_int) || json_object_is_type(id, json_type_double)) &&
	    (!json_object_to_json_string_length(id, JSON_C_TO_STRING_PLAIN, &n) ||
	     n > PROTO_MAX_ID))
		return n > PROTO_MAX_ID ? 0 : -ENOMEM;
	rc = number_value(id, &d);
	if (rc == -ENOMEM)
		return rc;
	return rc == 0 && decimal_is_integer(&d);
}

int proto_id_valid(json_object *id)
{
	return id_check(id) == 1;
}

int proto_string_is(json_object *o, const char *s)
{
	size_t n = strlen(s);

	return json_object_is_type(o, json_type_string) &&
	       (size_t)json_object_get_string_len(o) == n &&
	       memcmp(json_object_get_string(o), s, n) == 0;
}

int mcp_id_equal(json_object *a, json_object *b)
{
	struct decimal x, y;

	if (!proto_id_valid(a) || !proto_id_valid(b))
		return 0;
	if (a == b)
		return 1;
	/* Strings compare their bytes with their length; a string never equals a number. */
	if (json_object_is_type(a, json_type_string) || json_object_is_type(b, json_type_string))
		return json_object_equal(a, b);
	return number_value(a, &x) == 0 && number_value(b, &y) == 0 && decimal_equal(&x, &y);
}

int jsonrpc_parse_request(json_object *msg, struct jsonrpc_request *req)
{
	json_object *id = NULL, *method = NULL, *params = NULL, *version = NULL;
	int has_id, has_method, id_ok;

	memset(req, 0, sizeof(*req));
	if (!json_object_is_type(msg, json_type_object)) {
		req->error = "Invalid Request: a message must be a JSON object";
		return JSONRPC_INVALID_REQUEST;
	}
	has_id = json_object_object_get_ex(msg, "id", &id);
	has_method = json_object_object_get_ex(msg, "method", &method);
	json_object_object_get_ex(msg, "params", &params);
	json_object_object_get_ex(msg, "jsonrpc", &version);
	/* Without an id nobody awaits an answer, however malformed the rest is. */
	req->notification = has_method && !has_id;
	if (json_object_is_type(method, json_type_string)) {
		req->method = json_object_get_string(method);
		req->method_len = (size_t)json_object_get_string_len(method);
	}
	id_ok = has_id ? id_check(id) : 0;
	if (id_ok != 0)
		req->id = id;
	req->params = params;
	/* No memory to read the id: not the client's fault (the answer says so). */
	if (id_ok == -ENOMEM)
		return -ENOMEM;

	if (!proto_string_is(version, "2.0"))
		req->error = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
	else if (has_id && id_ok == 0)
		req->error = "Invalid Request: \"id\" must be a string or an integer (of at "
		             "most " PROTO_MAX_ID_TEXT " bytes)";
	else if (!req->method)
		req->error = "Invalid Request: \"method\" must be a string";
	else if (params && !json_object_is_type(params, json_type_object) &&
	         !json_object_is_type(params, json_type_array))
		req->error = "Invalid Request: \"params\" must be an object or an array";
	return req->error ? JSONRPC_INVALID_REQUEST : 0;
}

int jsonrpc_is_response(json_object *msg)
{
	return json_object_is_type(msg, json_type_object) &&
	       !json_object_object_get_ex(msg, "method", NULL) &&
	       (json_object_object_get_ex(msg, "result", NULL) ||
	        json_object_object_get_ex(msg, "error", NULL));
}

const char *jsonrpc_response_problem(json_object *msg)
{
	json_object *id = NULL, *err = NULL, *code = NULL, *message = NULL;
	int has_result = json_object_object_get_ex(msg, "result", NULL);
	int has_error = json_object_object_get_ex(msg, "error", &err);

	if (!proto_string_is(json_object_object_get(msg, "jsonrpc"), "2.0"))
		return "\"jsonrpc\" must be \"2.0\"";
	if (!json_object_object_get_ex(msg, "id", &id))
		return "it has no \"id\"";
	if (has_result && has_error)
		return "it has both \"result\" and \"error\"";
	if (id ? !proto_id_valid(id) : has_result)
		return "\"id\" must be a string or an integer (null only with an error)";
	if (!has_error)
		return NULL;
	if (!json_object_is_type(err, json_type_object))
		return "\"error\" must be an object";
	if (!json_object_object_get_ex(err, "code", &code) ||
	    !json_object_is_type(code, json_type_int))
		return "\"error.code\" must be an integer";
	if (!json_object_object_get_ex(err, "message", &message) ||
	    !json_object_is_type(message, json_type_string))
		return "\"error.message\" must be a string";
	return NULL;
}

/* {"jsonrpc":"2.0","id":id}, id borrowed (NULL is JSON null). New object or NULL. */
static json_object *envelope(json_object *id)
{
	json_object *msg = json_object_new_object();
	int rc;

	if (!msg)
		return NULL;
	rc = proto_put(msg, "jsonrpc", json_object_new_string("2.0"));
	if (rc == 0)
		rc = id ? proto_put(msg, "id", json_object_get(id)) : proto_put_null(msg, "id");
	if (rc < 0) {
		json_object_put(msg);
		return NULL;
	}
	return msg;
}

json_object *jsonrpc_result(json_object *id, json_object *result)
{
	json_object *msg = envelope(id);

	if (!msg) {
		json_object_put(result);
		return NULL;
	}
	if (proto_put(msg, "result", result) < 0) {
		json_object_put(msg);
		return NULL;
	}
	return msg;
}

json_object *jsonrpc_error(json_object *id, int code, const char *message, json_object *data)
{
	json_object *msg = envelope(id), *err;
	int rc;

	if (!msg) {
		json_object_put(data);
		return NULL;
	}
	/* Attached first, err is released with msg whatever fails next. */
	err = json_object_new_object();
	rc = proto_put(msg, "error", err);
	if (rc == 0)
		rc = proto_put(err, "code", json_object_new_int(code));
	if (rc == 0)
		rc = proto_put(err, "message", json_object_new_string(message ? message : "Error"));
	if (data && rc == 0)
		rc = proto_put(err, "data", data);
	else
		json_object_put(data);
	if (rc < 0) {
		json_object_put(msg);
		return NULL;
	}
	return msg;
}

json_object *mcp_error_response(json_object *id, int code, const char *message)
{
	return jsonrpc_error(id, code, message, NULL);
}

json_object *jsonrpc_notification(const char *method, json_object *params)
{
	json_object *msg = json_object_new_object();
	int rc;

	if (!msg) {
		json_object_put(params);
		return NULL;
	}
	rc = proto_put(msg, "jsonrpc", json_object_new_string("2.0"));
	if (rc == 0)
		rc = proto_put(msg, "method", json_object_new_string(method));
	if (rc == 0)
		rc = proto_put(msg, "params", params);
	else
		json_object_put(params);
	if (rc < 0) {
		json_object_put(msg);
		return NULL;
	}
	return msg;
}
