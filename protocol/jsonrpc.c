/* jsonrpc.c - strict JSON parsing and the JSON-RPC 2.0 envelope: validation, ids, responses.
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

/* The body of a string literal starting after its opening quote: no raw control characters,
 * strict UTF-8, escapes limited to JSON's. Returns the index after the closing quote or 0. */
static size_t lex_string(const unsigned char *p, size_t n, size_t i)
{
	while (i < n) {
		size_t k;

		if (p[i] == '"')
			return i + 1;
		if (p[i] < 0x20)
			return 0;
		if (p[i] == '\\') {
			if (i + 1 >= n || !memchr("\"\\/bfnrtu", p[i + 1], 9))
				return 0;
			i += 2;
			continue;
		}
		k = proto_utf8_seq(p + i, n - i);
		if (k == 0)
			return 0;
		i += k;
	}
	return 0;
}

/* json-c's tokener, even with JSON_TOKENER_STRICT, accepts single-quoted strings, NaN,
 * Infinity and raw control characters in strings, and lets encoded surrogates through its UTF-8
 * check. One pass over the bytes refuses all of them before the tokener runs: outside strings
 * only JSON's structural characters, numbers and the letters of true/false/null may appear. */
static int lex_check(const unsigned char *p, size_t n)
{
	static const char outside[] = " \t\r\n{}[],:0123456789+-.eEtrufalsn";
	size_t i = 0;

	while (i < n) {
		if (p[i] == '"') {
			i = lex_string(p, n, i + 1);
			if (i == 0)
				return -EINVAL;
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
	int rc = -EINVAL;

	if (len > PROTO_MAX_JSON || len > INT_MAX)
		return -EINVAL;
	if (lex_check((const unsigned char *)buf, len) < 0)
		return -EINVAL;
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

int proto_id_valid(json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
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
	if (!proto_id_valid(a) || !proto_id_valid(b))
		return 0;
	if (json_object_get_type(a) != json_object_get_type(b))
		return 0;
	/* Compares string bytes with their length, and integers across json-c's int64/uint64. */
	return json_object_equal(a, b);
}

int jsonrpc_parse_request(json_object *msg, struct jsonrpc_request *req)
{
	json_object *id = NULL, *method = NULL, *params = NULL, *version = NULL;
	int has_id;

	memset(req, 0, sizeof(*req));
	if (!json_object_is_type(msg, json_type_object)) {
		req->error = "Invalid Request: a message must be a JSON object";
		return JSONRPC_INVALID_REQUEST;
	}
	has_id = json_object_object_get_ex(msg, "id", &id);
	json_object_object_get_ex(msg, "method", &method);
	json_object_object_get_ex(msg, "params", &params);
	json_object_object_get_ex(msg, "jsonrpc", &version);
	if (json_object_is_type(method, json_type_string)) {
		req->method = json_object_get_string(method);
		req->method_len = (size_t)json_object_get_string_len(method);
		req->notification = !has_id;
	}
	if (has_id && proto_id_valid(id))
		req->id = id;
	req->params = params;

	if (!proto_string_is(version, "2.0"))
		req->error = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
	else if (has_id && !proto_id_valid(id))
		req->error = "Invalid Request: \"id\" must be a string or an integer";
	else if (!req->method)
		req->error = "Invalid Request: \"method\" must be a string";
	else if (params && !json_object_is_type(params, json_type_object) &&
	         !json_object_is_type(params, json_type_array))
		req->error = "Invalid Request: \"params\" must be an object or an array";
	return req->error ? JSONRPC_INVALID_REQUEST : 0;
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
