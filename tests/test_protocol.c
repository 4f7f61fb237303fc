/* test_protocol.c - unit tests of protocol/: JSON-RPC validation, MCP lifecycle and tools,
 * line framing, outcome statuses and the size bound of tool responses. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <json-c/json_pointer.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const imports[] = {
    "collections", "datetime", "functools", "itertools",  "json",   "math", "operator",    "queue",
    "random",      "re",       "stat",      "statistics", "string", "time", "unicodedata",
};

static const struct mcp_server_config cfg = {
    .version = "9.8.7",
    .max_timeout_s = 30,
    .cpu_s = 20,
    .memory_bytes = 512u << 20,
    .max_output = 64u << 10,
    .imports = imports,
    .n_imports = N_OF(imports),
};

static const char *const all_versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

/* ---- Helpers ------------------------------------------------------------------------- */

static void handle(struct mcp_conn *c, const char *line, struct mcp_events *ev)
{
	cr_assert_eq(mcp_handle_line(c, line, strlen(line), ev), 0, "handling %s", line);
}

/* A connection that negotiated version (NULL: no initialize at all). */
static void conn_at(struct mcp_conn *c, const char *version)
{
	struct mcp_events ev = {0};
	char line[256];

	mcp_conn_init(c, &cfg);
	if (!version)
		return;
	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	         "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
	         "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
	         version);
	handle(c, line, &ev);
	cr_assert_eq(ev.n, 1);
	mcp_events_clear(&ev);
	cr_assert_str_eq(c->version, version);
	handle(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &ev);
	cr_assert_eq(ev.n, 0);
	cr_assert(c->initialized);
}

/* The context of a request a legacy connection serves now (static storage). */
static const struct mcp_request_ctx *ctx_of(const struct mcp_conn *c)
{
	static struct mcp_request_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	snprintf(ctx.version, sizeof(ctx.version), "%s", c->version[0] ? c->version : "2025-11-25");
	return &ctx;
}

/* How many events of this kind a line gave. */
static size_t count_kind(const struct mcp_events *ev, enum mcp_event_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < ev->n; i++)
		n += ev->ev[i].kind == kind;
	return n;
}

/* The single reply a line produces (a new reference). */
static json_object *reply_of(struct mcp_conn *c, const char *line)
{
	struct mcp_events ev = {0};
	json_object *msg;

	handle(c, line, &ev);
	cr_assert_eq(ev.n, 1, "expected one event for %s, got %zu", line, ev.n);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_REPLY, "expected a reply to %s", line);
	cr_assert_not(ev.is_batch);
	msg = json_object_get(ev.ev[0].msg);
	mcp_events_clear(&ev);
	return msg;
}

/* The value at a JSON pointer, or NULL (missing or null). */
static json_object *at(json_object *o, const char *ptr)
{
	json_object *v = NULL;

	if (json_pointer_get(o, ptr, &v) != 0)
		return NULL;
	return v;
}

static int has(json_object *o, const char *ptr)
{
	json_object *v;

	return json_pointer_get(o, ptr, &v) == 0;
}

static const char *str_at(json_object *o, const char *ptr)
{
	json_object *v = at(o, ptr);

	cr_assert(json_object_is_type(v, json_type_string), "%s is not a string in %s", ptr,
	          json_object_to_json_string(o));
	return json_object_get_string(v);
}

static const char *text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* As the supervisor writes it: "/" unescaped. */
static const char *wire(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	                                             JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void assert_error(json_object *msg, int code, const char *id_json)
{
	json_object *err = at(msg, "/error/code");

	cr_assert(err, "no error in %s", text(msg));
	cr_assert_eq(json_object_get_int(err), code, "code in %s", text(msg));
	cr_assert(has(msg, "/id"), "no id in %s", text(msg));
	cr_assert_str_eq(text(at(msg, "/id")), id_json, "id in %s", text(msg));
	cr_assert_str_eq(str_at(msg, "/jsonrpc"), "2.0");
	cr_assert_not(has(msg, "/result"));
	cr_assert(json_object_is_type(at(msg, "/error/message"), json_type_string));
}

static int valid_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k, j;
	unsigned cp;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (p[i] >= 0xc2 && p[i] <= 0xdf)
			k = 1, cp = p[i] & 0x1f;
		else if (p[i] >= 0xe0 && p[i] <= 0xef)
			k = 2, cp = p[i] & 0x0f;
		else if (p[i] >= 0xf0 && p[i] <= 0xf4)
			k = 3, cp = p[i] & 0x07;
		else
			return 0;
		for (j = 1; j <= k; j++) {
			if (i + j >= n || (p[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* A small JSON Schema checker for the keywords safepy's schemas use. */
static int type_matches(const char *type, json_object *v)
{
	enum json_type t = json_object_get_type(v);

	if (!strcmp(type, "object"))
		return t == json_type_object;
	if (!strcmp(type, "array"))
		return t == json_type_array;
	if (!strcmp(type, "string"))
		return t == json_type_string;
	if (!strcmp(type, "boolean"))
		return t == json_type_boolean;
	if (!strcmp(type, "null"))
		return t == json_type_null;
	if (!strcmp(type, "integer"))
		return t == json_type_int;
	if (!strcmp(type, "number"))
		return t == json_type_int || t == json_type_double;
	cr_assert_fail("unknown schema type %s", type);
	return 0;
}

static int schema_accepts(json_object *schema, json_object *v, char *why, size_t whylen)
{
	json_object *kw, *props = NULL, *sub;
	size_t i;
	int ok;

	if (json_object_object_get_ex(schema, "type", &kw)) {
		ok = 0;
		if (json_object_is_type(kw, json_type_string))
			ok = type_matches(json_object_get_string(kw), v);
		else
			for (i = 0; i < json_object_array_length(kw); i++)
				ok |= type_matches(
				    json_object_get_string(json_object_array_get_idx(kw, i)), v);
		if (!ok) {
			snprintf(why, whylen, "%s does not match type %s", text(v), text(kw));
			return 0;
		}
	}
	if (json_object_object_get_ex(schema, "enum", &kw)) {
		ok = 0;
		for (i = 0; i < json_object_array_length(kw); i++)
			ok |= json_object_equal(json_object_array_get_idx(kw, i), v);
		if (!ok) {
			snprintf(why, whylen, "%s not in enum", text(v));
			return 0;
		}
	}
	if (!json_object_is_type(v, json_type_object))
		return 1;
	json_object_object_get_ex(schema, "properties", &props);
	if (json_object_object_get_ex(schema, "required", &kw))
		for (i = 0; i < json_object_array_length(kw); i++) {
			const char *k = json_object_get_string(json_object_array_get_idx(kw, i));

			if (!json_object_object_get_ex(v, k, NULL)) {
				snprintf(why, whylen, "required key %s missing", k);
				return 0;
			}
		}
	json_object_object_foreach(v, key, val)
	{
		if (json_object_object_get_ex(props, key, &sub)) {
			if (!schema_accepts(sub, val, why, whylen))
				return 0;
		} else if (json_object_object_get_ex(schema, "additionalProperties", &kw) &&
		           !json_object_get_boolean(kw)) {
			snprintf(why, whylen, "key %s not allowed", key);
			return 0;
		}
	}
	return 1;
}

static json_object *tool_entry(struct mcp_conn *c)
{
	json_object *msg = reply_of(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	json_object *tool = json_object_get(at(msg, "/result/tools/0"));

	cr_assert(tool, "no tool in %s", text(msg));
	cr_assert_eq(json_object_array_length(at(msg, "/result/tools")), 1);
	json_object_put(msg);
	return tool;
}

static json_object *output_schema(void)
{
	struct mcp_conn c;
	json_object *tool, *schema;

	conn_at(&c, "2025-11-25");
	tool = tool_entry(&c);
	schema = json_object_get(at(tool, "/outputSchema"));
	json_object_put(tool);
	return schema;
}

static void assert_valid_structured(json_object *resp)
{
	json_object *schema = output_schema();
	char why[512] = "";

	cr_assert(has(resp, "/result/structuredContent"), "no structuredContent in %.300s",
	          text(resp));
	cr_assert(schema_accepts(schema, at(resp, "/result/structuredContent"), why, sizeof(why)),
	          "structuredContent fails outputSchema: %s", why);
	json_object_put(schema);
}

static json_object *call(struct mcp_conn *c, const char *arguments_json)
{
	char line[4096];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":\"call-1\",\"method\":\"tools/call\","
	         "\"params\":{\"name\":\"run_python\",\"arguments\":%s}}",
	         arguments_json);
	return reply_of(c, line);
}

/* ---- jsonrpc: envelopes and errors --------------------------------------------------- */

Test(jsonrpc, replies_to_invalid_json_with_parse_error_and_null_id)
{
	static const char *const lines[] = {
	    "{",
	    "not json",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
	    "{'jsonrpc':'2.0','id':1,'method':'ping'}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}{}",
	    "{\"jsonrpc\":\"2.0\",\"id\":NaN,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":Infinity,\"method\":\"ping\"}",
	    "/* comment */ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x01ng\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\xf4\x90\x80\x80\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\xe2\x82\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\\x41\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"id\\u0000\":2}",
	};
	struct mcp_conn c;
	size_t i;

	conn_at(&c, "2025-11-25");
	for (i = 0; i < N_OF(lines); i++) {
		json_object *msg = reply_of(&c, lines[i]);

		assert_error(msg, JSONRPC_PARSE_ERROR, "null");
		json_object_put(msg);
	}
}

Test(jsonrpc, parse_error_for_nul_bytes_in_a_line)
{
	static const char line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\0";
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, NULL);
	cr_assert_eq(mcp_handle_line(&c, line, sizeof(line) - 1, &ev), 0);
	cr_assert_eq(ev.n, 1);
	assert_error(ev.ev[0].msg, JSONRPC_PARSE_ERROR, "null");
	mcp_events_clear(&ev);
}

Test(jsonrpc, replies_to_invalid_requests_with_invalid_request)
{
	static const struct {
		const char *line;
		const char *id;
	} cases[] = {
	    {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "1"},
	    {"{\"id\":1,\"method\":\"ping\"}", "1"},
	    {"{\"jsonrpc\":2.0,\"id\":\"a\",\"method\":\"ping\"}", "\"a\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1.5e0,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":-0.5,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1e-1,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1e1000000000,\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":7}", "7"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":5}", "7"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":null}", "7"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\",\"params\":\"p\"}", "\"x\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":3}", "8"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":true}", "8"},
	    {"{\"foo\":\"boo\"}", "null"},
	    {"{\"jsonrpc\":\"2.0\"}", "null"},
	    {"{}", "null"},
	    {"1", "null"},
	    {"\"ping\"", "null"},
	    {"null", "null"},
	    {"true", "null"},
	};
	struct mcp_conn c;
	size_t i;

	conn_at(&c, "2025-11-25");
	for (i = 0; i < N_OF(cases); i++) {
		json_object *msg = reply_of(&c, cases[i].line);

		cr_assert_eq(json_object_get_int(at(msg, "/error/code")), JSONRPC_INVALID_REQUEST,
		             "case %s: %s", cases[i].line, text(msg));
		assert_error(msg, JSONRPC_INVALID_REQUEST, cases[i].id);
		json_object_put(msg);
	}
}

Test(jsonrpc, answers_unknown_methods_at_once)
{
	static const char *const methods[] = {
	    "server/discover",
	    "resources/list",
	    "prompts/list",
	    "completion/complete",
	    "notifications/initialized",
	    "Ping",
	    "tools/list ",
	    "",
	    "ping\\u0000",
	};
	struct mcp_conn c;
	char line[256];
	size_t i;

	conn_at(&c, "2025-11-25");
	for (i = 0; i < N_OF(methods); i++) {
		json_object *msg;

		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"%s\"}",
		         i + 100, methods[i]);
		msg = reply_of(&c, line);
		snprintf(line, sizeof(line), "%zu", i + 100);
		assert_error(msg, JSONRPC_METHOD_NOT_FOUND, line);
		json_object_put(msg);
	}
}

Test(jsonrpc, unknown_method_message_is_bounded)
{
	struct mcp_conn c;
	json_object *msg;
	char *line, *method = malloc(10001);

	memset(method, 'm', 10000);
	method[10000] = '\0';
	cr_assert(asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", method) > 0);
	conn_at(&c, NULL);
	msg = reply_of(&c, line);
	assert_error(msg, JSONRPC_METHOD_NOT_FOUND, "1");
	cr_assert_lt(strlen(str_at(msg, "/error/message")), 200);
	cr_assert(strstr(str_at(msg, "/error/message"), "mmmm"));
	json_object_put(msg);
	free(line);
	free(method);
}

/* A name with a NUL was quoted up to it: "ping\u0000x" answered "Method not found: ping", naming
 * a method that exists. Control characters show as '?'. */
Test(jsonrpc, a_name_with_control_characters_is_quoted_whole)
{
	struct mcp_conn c;
	json_object *msg;

	conn_at(&c, NULL);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\\u0000x\\n\"}");
	assert_error(msg, JSONRPC_METHOD_NOT_FOUND, "1");
	cr_assert_str_eq(str_at(msg, "/error/message"), "Method not found: ping?x?");
	json_object_put(msg);
}

Test(jsonrpc, echoes_ids_with_their_type)
{
	static const char *const ids[] = {
	    "0",    "\"0\"",       "123456789012",         "\"abc\"", "-5", "9223372036854775807",
	    "\"\"", "\"\\u00e9\"", "18446744073709551615",
	};
	struct mcp_conn c;
	char line[256];
	size_t i;

	conn_at(&c, "2025-11-25");
	for (i = 0; i < N_OF(ids); i++) {
		json_object *msg;

		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
		         ids[i]);
		msg = reply_of(&c, line);
		cr_assert(has(msg, "/result"), "ping %s: %s", ids[i], text(msg));
		cr_assert_eq(json_object_object_length(at(msg, "/result")), 0);
		if (ids[i][0] == '"')
			cr_assert(json_object_is_type(at(msg, "/id"), json_type_string));
		else
			cr_assert(json_object_is_type(at(msg, "/id"), json_type_int));
		json_object *want = json_tokener_parse(ids[i]);
		cr_assert(mcp_id_equal(at(msg, "/id"), want), "id %s came back as %s", ids[i],
		          text(at(msg, "/id")));
		json_object_put(want);
		json_object_put(msg);
	}
}

Test(jsonrpc, notifications_never_get_a_reply)
{
	static const char *const lines[] = {
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
	    "\"arguments\":{\"code\":\"1\"}}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
	    "{\"jsonrpc\":\"1.0\",\"method\":\"notifications/initialized\"}",
	    "{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":7}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	    "{\"requestId\":null}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	    "{\"requestId\":1.5}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	    "{\"requestId\":{\"a\":1}}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[1]}",
	    "",
	    "   ",
	    "\t\r",
	};
	size_t i, v;

	for (v = 0; v <= N_OF(all_versions); v++) {
		for (i = 0; i < N_OF(lines); i++) {
			struct mcp_events ev = {0};
			struct mcp_conn c;

			conn_at(&c, v < N_OF(all_versions) ? all_versions[v] : NULL);
			handle(&c, lines[i], &ev);
			cr_assert_eq(ev.n, count_kind(&ev, MCP_EV_NOTE), "%s was answered",
			             lines[i]);
			mcp_events_clear(&ev);
		}
	}
}

/* Malformed notifications: never answered, however broken, but the server hears why. */
Test(jsonrpc, malformed_notifications_get_no_reply_but_a_warning)
{
	static const char *const lines[] = {
	    "{\"jsonrpc\":\"1.0\",\"method\":\"notifications/initialized\"}",
	    "{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":7}",
	    "{\"jsonrpc\":\"2.0\",\"method\":7}",
	    "{\"jsonrpc\":\"2.0\",\"method\":null,\"params\":\"x\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":[\"\\u001b[31m\"]}",
	};
	struct mcp_conn c;

	conn_at(&c, "2025-11-25");
	for (size_t i = 0; i < N_OF(lines); i++) {
		struct mcp_events ev = {0};

		handle(&c, lines[i], &ev);
		cr_assert_eq(ev.n, 1, "%s gave %zu events", lines[i], ev.n);
		cr_assert_eq(ev.ev[0].kind, MCP_EV_NOTE, "%s", lines[i]);
		cr_assert(ev.ev[0].warn);
		cr_assert(strstr(ev.ev[0].note, "malformed notification"), "%s", ev.ev[0].note);
		mcp_events_clear(&ev);
	}
}

/* safepy sends no requests: a response from the client is never answered. A valid one is
 * worth a debug line, an invalid one a warning that says what is wrong. */
Test(jsonrpc, responses_from_the_client_are_never_answered)
{
	static const struct {
		const char *line;
		int warn;
		const char *says;
	} cases[] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}", 0, "(id 9)"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":null}", 0, "(id \"s\")"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"result\":1}", 0,
	     "(id 99999999999999999999)"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-1,\"message\":\"m\"}}", 0,
	     "(id 3)"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"m\","
	     "\"data\":[1]}}",
	     0, "(id null)"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"m\"}"
	     "}",
	     1, "both"},
	    {"{\"jsonrpc\":\"2.0\",\"result\":{}}", 1, "no \"id\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", 1, "\"id\" must be"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":{}}", 1, "\"id\" must be"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{\"code\":1,\"message\":\"m\"}}", 1,
	     "\"id\" must be"},
	    {"{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}", 1, "\"jsonrpc\""},
	    {"{\"id\":1,\"error\":{\"code\":1,\"message\":\"m\"}}", 1, "\"jsonrpc\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}", 1, "must be an object"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"m\"}}", 1, "error.code"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}", 1,
	     "error.code"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}", 1, "error.message"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":\"\\u001b]0;x\\u0007\",\"result\":{}}", 0,
	     "(id \"\\u001b]0;x\\u0007\")"},
	};
	size_t v;

	for (v = 0; v <= N_OF(all_versions); v++) {
		for (size_t i = 0; i < N_OF(cases); i++) {
			struct mcp_events ev = {0};
			struct mcp_conn c;

			conn_at(&c, v < N_OF(all_versions) ? all_versions[v] : NULL);
			handle(&c, cases[i].line, &ev);
			cr_assert_eq(ev.n, 1, "%s gave %zu events", cases[i].line, ev.n);
			cr_assert_eq(ev.ev[0].kind, MCP_EV_NOTE, "%s was answered", cases[i].line);
			cr_assert_eq(ev.ev[0].warn, cases[i].warn, "%s: %s", cases[i].line,
			             ev.ev[0].note);
			cr_assert(strstr(ev.ev[0].note, cases[i].says), "%s: %s", cases[i].line,
			          ev.ev[0].note);
			for (const char *p = ev.ev[0].note; *p; p++)
				cr_assert(*p >= 0x20 && *p <= 0x7e, "unprintable note: %s",
				          ev.ev[0].note);
			mcp_events_clear(&ev);
			cr_assert_eq(c.era, v < N_OF(all_versions) ? MCP_ERA_LEGACY : MCP_ERA_OPEN,
			             "a response pins no era");
		}
	}
}

/* In a batch, responses take no place among the replies. */
Test(jsonrpc, responses_in_a_batch_get_no_reply_element)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, "2025-03-26");
	handle(&c,
	       "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":3}]",
	       &ev);
	cr_assert(ev.is_batch);
	cr_assert_eq(count_kind(&ev, MCP_EV_REPLY), 2);
	cr_assert_eq(count_kind(&ev, MCP_EV_NOTE), 1);
	mcp_events_clear(&ev);
}

Test(jsonrpc, id_equality_is_type_exact)
{
	json_object *one = json_object_new_int(1), *one_s = json_object_new_string("1");
	json_object *one_b = json_object_new_int64(1), *two = json_object_new_int(2);
	json_object *big = json_tokener_parse("18446744073709551615");
	json_object *big2 = json_tokener_parse("18446744073709551615");
	json_object *neg = json_object_new_int64(-1);
	json_object *dbl = json_object_new_double(1.5), *t = json_object_new_boolean(1);
	json_object *ab = json_object_new_string_len("a\0b", 3),
	            *ac = json_object_new_string_len("a\0c", 3);

	cr_assert(mcp_id_equal(one, one_b));
	cr_assert(mcp_id_equal(one_s, one_s));
	cr_assert(mcp_id_equal(big, big2));
	cr_assert_not(mcp_id_equal(one, one_s));
	cr_assert_not(mcp_id_equal(one_s, one));
	cr_assert_not(mcp_id_equal(one, two));
	cr_assert_not(mcp_id_equal(big, neg));
	cr_assert_not(mcp_id_equal(one, dbl));
	cr_assert_not(mcp_id_equal(dbl, dbl));
	cr_assert_not(mcp_id_equal(t, t));
	cr_assert_not(mcp_id_equal(NULL, NULL));
	cr_assert_not(mcp_id_equal(one, NULL));
	cr_assert_not(mcp_id_equal(ab, ac));
	json_object *objs[] = {one, one_s, one_b, two, big, big2, neg, dbl, t, ab, ac};
	for (size_t i = 0; i < N_OF(objs); i++)
		json_object_put(objs[i]);
}

/* Number ids as a client may write them: beyond 64 bits, negative zero, integers written with
 * an exponent or a fraction. Each must come back as the same text. */
static const char *const number_ids[] = {
    "99999999999999999999",
    "-99999999999999999999",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "-0",
    "1e3",
    "1E+2",
    "1.0",
    "-1.000",
    "10.50e1",
    "100e-2",
    "0e5",
};

/* The wire text of msg starts with {"jsonrpc":"2.0","id":<id>,"<member>" */
static void assert_id_text(json_object *msg, const char *id, const char *member)
{
	char want[256];

	snprintf(want, sizeof(want), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"%s\"", id, member);
	cr_assert_eq(strncmp(wire(msg), want, strlen(want)), 0, "id %s came back as %s", id,
	             wire(msg));
}

Test(jsonrpc, echoes_number_ids_exactly)
{
	/* Each line is before, the id, after. */
	static const char *const forms[][3] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":", ",\"method\":\"ping\"}", "result"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":", ",\"method\":\"nope\"}", "error"},
	    {"{\"jsonrpc\":\"1.0\",\"id\":", ",\"method\":\"ping\"}", "error"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":",
	     ",\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{}}}",
	     "result"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":", ",\"method\":\"tools/call\",\"params\":{}}", "error"},
	    /* The last of duplicate members counts, as json-c reads it; escaped names too. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{\"id\":2},\"\\u0069d\":",
	     ",\"method\":\"ping\"}", "result"},
	    /* (A member name with an escaped NUL is refused: json-c cut it there, making
	     * "id\u0000x" a second "id"; parse_json_is_strict.) */
	};
	struct mcp_conn c;
	char line[512];

	conn_at(&c, "2025-11-25");
	for (size_t i = 0; i < N_OF(number_ids); i++)
		for (size_t f = 0; f < N_OF(forms); f++) {
			json_object *msg;

			snprintf(line, sizeof(line), "%s%s%s", forms[f][0], number_ids[i],
			         forms[f][1]);
			msg = reply_of(&c, line);
			assert_id_text(msg, number_ids[i], forms[f][2]);
			json_object_put(msg);
		}
}

/* The id of the CALL or CANCEL event a line makes (a new reference). */
static json_object *event_id(struct mcp_conn *c, const char *line, enum mcp_event_kind kind)
{
	struct mcp_events ev = {0};
	json_object *id;

	handle(c, line, &ev);
	cr_assert_eq(ev.n, 1, "%s", line);
	cr_assert_eq(ev.ev[0].kind, kind, "%s", line);
	id = json_object_get(ev.ev[0].id);
	mcp_events_clear(&ev);
	return id;
}

static json_object *cancel_id(struct mcp_conn *c, const char *request_id)
{
	char line[256];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	         "{\"requestId\":%s}}",
	         request_id);
	return event_id(c, line, MCP_EV_CANCEL);
}

Test(mcp, calls_keep_number_ids_and_tokens_exactly)
{
	struct mcp_conn c;
	char line[512], want[256];

	conn_at(&c, "2025-11-25");
	for (size_t i = 0; i < N_OF(number_ids); i++) {
		struct mcp_events ev = {0};
		struct run_outcome o;
		json_object *resp, *n, *cancel;

		snprintf(line, sizeof(line),
		         "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":"
		         "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"},"
		         "\"_meta\":{\"progressToken\":%s}}}",
		         number_ids[i], number_ids[i]);
		handle(&c, line, &ev);
		cr_assert_eq(ev.n, 1);
		cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL, "%s", line);
		/* The response is built later from the stored id. */
		run_outcome_init(&o);
		text_set_str(&o.result_repr, "1");
		resp = mcp_tool_response(&c, &ev.ev[0].args.ctx, ev.ev[0].id, &o);
		assert_id_text(resp, number_ids[i], "result");
		n = mcp_progress_notification(ev.ev[0].progress_token, 1, NULL);
		snprintf(want, sizeof(want), "\"progressToken\":%s,", number_ids[i]);
		cr_assert(strstr(wire(n), want), "token %s came back in %s", number_ids[i],
		          wire(n));
		cancel = cancel_id(&c, number_ids[i]);
		cr_assert_str_eq(wire(cancel), number_ids[i]);
		cr_assert(mcp_id_equal(ev.ev[0].id, cancel), "cancel %s", number_ids[i]);
		json_object_put(cancel);
		json_object_put(n);
		json_object_put(resp);
		run_outcome_clear(&o);
		mcp_events_clear(&ev);
	}
}

static char *repeat(const char *unit, size_t times);

/* Ids and progress tokens are bounded (PROTO_MAX_ID bytes): every answer and heartbeat repeats
 * them and each waiting call keeps them, so a client sending megabyte ids grew the server's
 * memory by that much per waiting call. A longer id is an invalid request answered with a null
 * id; a longer token is not used (the call runs, without progress); at the bound both work. */
Test(mcp, ids_and_progress_tokens_are_bounded)
{
	static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\","
	                           "\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":"
	                           "\"1\"},\"_meta\":{\"progressToken\":%s}}}";
	char *at_bound = repeat("i", PROTO_MAX_ID), *past = repeat("i", PROTO_MAX_ID + 1);
	char *digits = repeat("7", PROTO_MAX_ID + 1);
	char *ok_id, *long_id, *line;
	struct mcp_conn c;
	struct mcp_events ev = {0};
	json_object *msg;

	cr_assert(asprintf(&ok_id, "\"%s\"", at_bound) > 0);
	cr_assert(asprintf(&long_id, "\"%s\"", past) > 0);
	conn_at(&c, "2025-11-25");
	/* At the bound: the call, its id and its token as sent. */
	cr_assert(asprintf(&line, call, ok_id, ok_id) > 0);
	handle(&c, line, &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
	cr_assert_eq(json_object_get_string_len(ev.ev[0].id), PROTO_MAX_ID);
	cr_assert_not_null(ev.ev[0].progress_token);
	mcp_events_clear(&ev);
	free(line);
	/* A token past it: the call runs without one. */
	cr_assert(asprintf(&line, call, "5", long_id) > 0);
	handle(&c, line, &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
	cr_assert_null(ev.ev[0].progress_token);
	mcp_events_clear(&ev);
	free(line);
	/* An id past it, a string or a number: invalid, answered with a null id. */
	cr_assert(asprintf(&line, call, long_id, "1") > 0);
	msg = reply_of(&c, line);
	assert_error(msg, JSONRPC_INVALID_REQUEST, "null");
	cr_assert(strstr(text(msg), "at most 1024 bytes"), "%s", text(msg));
	cr_assert_lt(strlen(text(msg)), 400, "%s", text(msg));
	json_object_put(msg);
	free(line);
	cr_assert(asprintf(&line, call, digits, "1") > 0);
	msg = reply_of(&c, line);
	assert_error(msg, JSONRPC_INVALID_REQUEST, "null");
	json_object_put(msg);
	free(line);
	free(at_bound);
	free(past);
	free(digits);
	free(ok_id);
	free(long_id);
}

Test(mcp, batch_elements_keep_number_ids_exactly)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, "2025-03-26");
	handle(&c,
	       "[ {\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"ping\"} ,"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	       "{\"requestId\":-0}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":[1,{\"id\":2}],\"method\":\"ping\"},"
	       "{\"jsonrpc\":\"2.0\",\"id\":-99999999999999999999,\"method\":\"nope\"},"
	       "\"x\",{},"
	       "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"}}}]",
	       &ev);
	cr_assert(ev.is_batch);
	cr_assert_eq(ev.n, 7);
	assert_id_text(ev.ev[0].msg, "99999999999999999999", "result");
	cr_assert_eq(ev.ev[1].kind, MCP_EV_CANCEL);
	cr_assert_str_eq(wire(ev.ev[1].id), "-0");
	assert_id_text(ev.ev[2].msg, "null", "error");
	assert_id_text(ev.ev[3].msg, "-99999999999999999999", "error");
	assert_id_text(ev.ev[4].msg, "null", "error");
	assert_id_text(ev.ev[5].msg, "null", "error");
	cr_assert_eq(ev.ev[6].kind, MCP_EV_CALL);
	cr_assert_str_eq(wire(ev.ev[6].id), "1.0");
	mcp_events_clear(&ev);
}

Test(jsonrpc, number_ids_are_equal_by_exact_value)
{
	static const struct {
		const char *a, *b;
		int equal;
	} cases[] = {
	    {"99999999999999999999", "99999999999999999999", 1},
	    {"99999999999999999999", "18446744073709551615", 0},
	    {"-99999999999999999999", "-9223372036854775808", 0},
	    {"123456789012345678901234567890", "123456789012345678901234567891", 0},
	    {"1e3", "1000", 1},
	    {"1000", "1E+3", 1},
	    {"10.50e1", "105", 1},
	    {"100e-2", "1", 1},
	    {"1.0", "1", 1},
	    {"-0", "0", 1},
	    {"0e5", "-0.0", 1},
	    {"-1", "1", 0},
	    {"1e3", "1e4", 0},
	    {"1", "\"1\"", 0},
	    {"\"1e3\"", "\"1000\"", 0},
	};
	struct mcp_conn c;

	conn_at(&c, "2025-11-25");
	for (size_t i = 0; i < N_OF(cases); i++) {
		json_object *a = cancel_id(&c, cases[i].a), *b = cancel_id(&c, cases[i].b);

		cr_assert_eq(mcp_id_equal(a, b), cases[i].equal, "%s and %s", cases[i].a,
		             cases[i].b);
		cr_assert_eq(mcp_id_equal(b, a), cases[i].equal, "%s and %s", cases[i].b,
		             cases[i].a);
		json_object_put(a);
		json_object_put(b);
	}
}

Test(jsonrpc, error_response_shape)
{
	json_object *id = json_object_new_string("q");
	json_object *msg = mcp_error_response(id, JSONRPC_INVALID_REQUEST, "message too large");

	cr_assert_str_eq(text(msg), "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"error\":{\"code\":-32600,"
	                            "\"message\":\"message too large\"}}");
	json_object_put(msg);
	json_object_put(id);
	msg = mcp_error_response(NULL, JSONRPC_PARSE_ERROR, "x");
	cr_assert_str_eq(
	    text(msg),
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}");
	json_object_put(msg);
}

Test(jsonrpc, parse_json_is_strict)
{
	static const struct {
		const char *in;
		int ok;
	} cases[] = {
	    {"{}", 1},
	    {" {\"a\":[1,2.5,\"x\",true,null]} \r\n", 1},
	    {"123", 1},
	    {"-0.5e3", 1},
	    {"\"\\ud83d\\ude00\"", 1},
	    {"\"caf\xc3\xa9\"", 1},
	    {"", 0},
	    {"   ", 0},
	    {"{} {}", 0},
	    {"[1,]", 0},
	    {"{'a':1}", 0},
	    {"NaN", 0},
	    {"-Infinity", 0},
	    {"\"a\tb\"", 0},
	    {"\"\xff\"", 0},
	    {"[1] x", 0},
	    {"tru", 0},
	    /* Numbers by JSON's grammar only. */
	    {"[0,-0,10,-10.25,1e5,1E+5,1.5e-5,0.0]", 1},
	    {"{\"a\":-1}", 1},
	    {"00", 0},
	    {"-01", 0},
	    {"[00]", 0},
	    {"1.", 0},
	    {"[1.]", 0},
	    {".5", 0},
	    {"+1", 0},
	    {"1e", 0},
	    {"1e+", 0},
	    {"-", 0},
	    {"[-]", 0},
	    {"1.e5", 0},
	    {"0x10", 0},
	    {"[1-2]", 0},
	    {"[1true]", 0},
	    {"[true1]", 0},
	    {"1ee5", 0},
	    {"\"abc", 0},
	    /* A surrogate escape only as half of a pair (json-c made a lone one U+FFFD: the ids
	     * "\ud800" and "\udbff" were one id, and a cancellation of one cancelled the other). */
	    {"\"\\uD83D\\uDE00x\"", 1},
	    {"\"\\ud800\"", 0},
	    {"\"\\udbffx\"", 0},
	    {"\"\\udc00\"", 0},
	    {"\"\\ud800\\u0041\"", 0},
	    {"\"\\ud800\\n\"", 0},
	    {"\"\\ud83d\\ude0\"", 0},
	    {"\"\\u12\"", 0},
	    /* \u0000 in a value is kept; in a key it is refused (json-c's keys end there: "id\u0000"
	     * was read as a second "id"). */
	    {"{\"a\":\"x\\u0000y\"}", 1},
	    {"[\"\\u0000\"]", 1},
	    {"{\"id\\u0000\":2}", 0},
	    {"{\"a\":1, \"\\u0000\" \t: 2}", 0},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		json_object *o = proto_parse_json(cases[i].in, strlen(cases[i].in));

		cr_assert_eq(o != NULL, cases[i].ok, "parsing <%s>", cases[i].in);
		json_object_put(o);
	}
}

Test(jsonrpc, parse_json_limits_depth)
{
	char deep[2 * 1000 + 1], ok[2 * 60 + 2];
	json_object *o;

	memset(deep, '[', 1000);
	memset(deep + 1000, ']', 1000);
	deep[2000] = '\0';
	cr_assert_null(proto_parse_json(deep, 2000));
	cr_assert_eq(proto_parse(deep, 2000, &o), -E2BIG, "too deep is told apart");
	memset(ok, '[', 60);
	memset(ok + 60, ']', 60);
	o = proto_parse_json(ok, 120);
	cr_assert_not_null(o, "60 levels should parse");
	json_object_put(o);
}

/* A message too deep is answered with the limit it passed, not as text that is not JSON. */
Test(mcp, a_message_too_deep_is_told_so)
{
	struct mcp_conn c;
	char line[512];
	json_object *r;
	int n = snprintf(line, sizeof line,
	                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"a\":");

	conn_at(&c, "2025-11-25");
	for (int i = 0; i < 70; i++)
		line[n++] = '[';
	for (int i = 0; i < 70; i++)
		line[n++] = ']';
	snprintf(line + n, sizeof line - (size_t)n, "}}");
	r = reply_of(&c, line);
	assert_error(r, JSONRPC_PARSE_ERROR, "null");
	cr_assert_str_eq(json_object_get_string(at(r, "/error/message")),
	                 "Parse error: nested deeper than 64 levels");
	json_object_put(r);
}

/* json-c makes an object of every value (about 800 bytes for "{}"): a 4 MiB line of empty
 * objects held a gigabyte and the loop for seconds. A message of more than 65536 values is
 * refused before it is parsed, counted as values (a string, a number, a literal, an object,
 * an array, a key); one of 65536 is parsed. */
Test(mcp, a_message_of_too_many_values_is_refused_unparsed)
{
	static const char *const kinds[] = {"{}", "[]", "0", "\"\"", "null", "true"};
	size_t cap = 70000 * 8 + 128;
	char *line = malloc(cap);
	struct mcp_conn c;
	json_object *r, *o;

	cr_assert_not_null(line);
	conn_at(&c, "2025-11-25");
	for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
		for (int over = 0; over < 2; over++) {
			/* the message's own values: the object, 4 keys, 3 values and the array */
			int values = over ? 70000 : 65536 - 9;
			size_t n =
			    (size_t)snprintf(line, cap,
			                     "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\","
			                     "\"params\":[");
			for (int i = 0; i < values; i++)
				n += (size_t)snprintf(line + n, cap - n, "%s%s", i ? "," : "",
				                      kinds[k]);
			n += (size_t)snprintf(line + n, cap - n, "]}");
			cr_assert_eq(proto_parse(line, n, &o), over ? -EMSGSIZE : 0, "%s",
			             kinds[k]);
			if (!over)
				json_object_put(o);
			r = reply_of(&c, line);
			if (over) {
				assert_error(r, JSONRPC_INVALID_REQUEST, "null");
				cr_assert_str_eq(
				    json_object_get_string(at(r, "/error/message")),
				    "Invalid Request: more than 65536 values in one message");
			} else {
				cr_assert_not_null(at(r, "/result"), "%s: %s", kinds[k],
				                   json_object_to_json_string(r));
			}
			json_object_put(r);
		}
	}
	free(line);
}

/* ---- mcp: lifecycle ------------------------------------------------------------------ */

static json_object *initialize(struct mcp_conn *c, const char *params_json)
{
	char line[1024];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":%s}",
	         params_json);
	return reply_of(c, line);
}

Test(mcp, echoes_each_supported_version)
{
	size_t i;

	for (i = 0; i < N_OF(all_versions); i++) {
		struct mcp_conn c;
		char params[256];
		json_object *msg;

		mcp_conn_init(&c, &cfg);
		snprintf(params, sizeof(params),
		         "{\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":"
		         "{\"name\":\"x\",\"version\":\"1\"}}",
		         all_versions[i]);
		msg = initialize(&c, params);
		cr_assert_str_eq(str_at(msg, "/result/protocolVersion"), all_versions[i]);
		cr_assert_str_eq(c.version, all_versions[i]);
		cr_assert_str_eq(text(at(msg, "/result/capabilities")),
		                 "{\"tools\":{\"listChanged\":false},\"logging\":{}}");
		cr_assert_str_eq(str_at(msg, "/result/serverInfo/name"), "safepy");
		cr_assert_str_eq(str_at(msg, "/result/serverInfo/version"), "9.8.7");
		cr_assert_eq(has(msg, "/result/serverInfo/title"),
		             strcmp(all_versions[i], "2025-06-18") >= 0, "title for %s",
		             all_versions[i]);
		cr_assert_str_eq(text(at(msg, "/id")), "1");
		json_object_put(msg);
	}
}

Test(mcp, answers_other_versions_with_the_latest)
{
	static const char *const params[] = {
	    "{\"protocolVersion\":\"2026-07-28\",\"capabilities\":{}}",
	    "{\"protocolVersion\":\"2099-01-01\"}",
	    "{\"protocolVersion\":\"2024-10-07\"}",
	    "{\"protocolVersion\":\"1900-01-01\"}",
	    "{\"protocolVersion\":\"\"}",
	    "{\"protocolVersion\":\"2025-11-25 \"}",
	    "{\"protocolVersion\":\"2025-11-25\\u0000x\"}",
	    "{\"protocolVersion\":20251125}",
	    "{\"protocolVersion\":null}",
	    "{\"protocolVersion\":[\"2024-11-05\"]}",
	    "{}",
	    "[\"2024-11-05\"]",
	};
	size_t i;

	for (i = 0; i < N_OF(params); i++) {
		struct mcp_conn c;
		json_object *msg;

		mcp_conn_init(&c, &cfg);
		msg = initialize(&c, params[i]);
		cr_assert_str_eq(str_at(msg, "/result/protocolVersion"), "2025-11-25", "for %s",
		                 params[i]);
		cr_assert_str_eq(c.version, "2025-11-25");
		json_object_put(msg);
	}
}

Test(mcp, initialize_without_params_gets_the_latest)
{
	struct mcp_conn c;
	json_object *msg;

	mcp_conn_init(&c, &cfg);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\"}");
	cr_assert_str_eq(str_at(msg, "/result/protocolVersion"), "2025-11-25");
	json_object_put(msg);
}

Test(mcp, instructions_say_what_the_tool_is_for_and_its_limits)
{
	struct mcp_conn c;
	json_object *msg;
	const char *s;

	mcp_conn_init(&c, &cfg);
	msg = initialize(&c, "{\"protocolVersion\":\"2025-11-25\"}");
	s = str_at(msg, "/result/instructions");
	cr_assert(strstr(s, "run_python"), "%s", s);
	cr_assert(strstr(s, "Python 3"), "%s", s);
	cr_assert(strstr(s, "files"), "%s", s);
	cr_assert(strstr(s, "network"), "%s", s);
	cr_assert(strstr(s, "processes"), "%s", s);
	cr_assert(strstr(s, "collections, datetime, functools"), "%s", s);
	cr_assert(strstr(s, "unicodedata"), "%s", s);
	cr_assert(strstr(s, "30 s of wall-clock"), "%s", s);
	cr_assert(strstr(s, "20 s of CPU"), "%s", s);
	cr_assert(strstr(s, "512 MiB"), "%s", s);
	cr_assert(strstr(s, "64 KiB"), "%s", s);
	cr_assert(strstr(s, "persists between calls of a session"), "%s", s);
	cr_assert(strstr(s, "session \"new\""), "%s", s);
	cr_assert(strstr(s, "times out or crashes leaves the session as it was"), "%s", s);
	json_object_put(msg);
}

Test(mcp, second_initialize_renegotiates)
{
	struct mcp_conn c;
	json_object *msg;

	conn_at(&c, "2024-11-05");
	msg = initialize(&c, "{\"protocolVersion\":\"2025-06-18\"}");
	cr_assert_str_eq(str_at(msg, "/result/protocolVersion"), "2025-06-18");
	cr_assert_str_eq(c.version, "2025-06-18");
	json_object_put(msg);
}

Test(mcp, ping_answers_empty_result_even_before_initialize)
{
	struct mcp_conn c;
	json_object *msg;

	mcp_conn_init(&c, &cfg);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"123\",\"method\":\"ping\"}");
	cr_assert_str_eq(text(msg), "{\"jsonrpc\":\"2.0\",\"id\":\"123\",\"result\":{}}");
	json_object_put(msg);
	cr_assert_str_eq(c.version, "");
	cr_assert_not(c.initialized);
}

Test(mcp, initialized_notification_sets_state_without_reply)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;
	json_object *msg;

	mcp_conn_init(&c, &cfg);
	msg = initialize(&c, "{\"protocolVersion\":\"2025-11-25\"}");
	json_object_put(msg);
	cr_assert_not(c.initialized);
	handle(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":{}}",
	       &ev);
	cr_assert_eq(ev.n, 0);
	cr_assert(c.initialized);
	mcp_events_clear(&ev);
}

Test(mcp, unknown_fields_capabilities_and_meta_are_ignored)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;
	json_object *msg;

	mcp_conn_init(&c, &cfg);
	msg = initialize(
	    &c, "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"elicitation\":{},"
	        "\"roots\":{\"listChanged\":true},\"extensions\":{\"io.modelcontextprotocol/"
	        "ui\":{\"mimeTypes\":[\"text/html;profile=mcp-app\"]}},\"future\":[1,{}]},"
	        "\"clientInfo\":{\"name\":\"claude-ai\",\"version\":\"1\",\"icons\":[]},"
	        "\"_meta\":{\"x/y\":1},\"extra\":true}");
	cr_assert_str_eq(str_at(msg, "/result/protocolVersion"), "2025-06-18");
	json_object_put(msg);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":"
	                   "{\"_meta\":{\"progressToken\":1,\"other\":{}}},\"extra\":1}");
	cr_assert(has(msg, "/result/tools/0"), "%s", text(msg));
	json_object_put(msg);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":"
	                   "{\"_meta\":{\"a\":1}},\"unknown\":{\"deep\":[1]}}");
	cr_assert(has(msg, "/result"));
	json_object_put(msg);
	handle(&c,
	       "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
	       "\"run_python\",\"arguments\":{\"code\":\"1\"},\"_meta\":{\"progressToken\":\"t\","
	       "\"io.modelcontextprotocol/related\":{}},\"task\":{}},\"x\":null}",
	       &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
	mcp_events_clear(&ev);
}

/* ---- mcp: tools/list ----------------------------------------------------------------- */

Test(mcp, tool_entry_fields_depend_on_version)
{
	static const struct {
		const char *version;
		int title, output_schema, annotations;
	} cases[] = {
	    {"2024-11-05", 0, 0, 0}, {"2025-03-26", 0, 0, 1}, {"2025-06-18", 1, 1, 1},
	    {"2025-11-25", 1, 1, 1}, {NULL, 1, 1, 1},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		struct mcp_conn c;
		json_object *tool;

		conn_at(&c, cases[i].version);
		tool = tool_entry(&c);
		cr_assert_str_eq(str_at(tool, "/name"), "run_python");
		cr_assert(has(tool, "/description"));
		cr_assert(has(tool, "/inputSchema"));
		cr_assert_eq(has(tool, "/title"), cases[i].title, "title, %s", cases[i].version);
		cr_assert_eq(has(tool, "/outputSchema"), cases[i].output_schema, "outputSchema, %s",
		             cases[i].version);
		cr_assert_eq(has(tool, "/annotations"), cases[i].annotations, "annotations, %s",
		             cases[i].version);
		if (cases[i].title)
			cr_assert_str_eq(str_at(tool, "/title"), "Run Python");
		if (cases[i].annotations)
			cr_assert_str_eq(text(at(tool, "/annotations")),
			                 "{\"title\":\"Run Python\",\"readOnlyHint\":false,"
			                 "\"destructiveHint\":false,\"idempotentHint\":false,"
			                 "\"openWorldHint\":false}");
		json_object_put(tool);
	}
}

Test(mcp, input_schema_takes_code_timeout_session_and_reset)
{
	struct mcp_conn c;
	json_object *tool, *schema;

	conn_at(&c, "2025-11-25");
	tool = tool_entry(&c);
	schema = at(tool, "/inputSchema");
	cr_assert_str_eq(str_at(schema, "/type"), "object");
	cr_assert_str_eq(text(at(schema, "/required")), "[\"code\"]");
	cr_assert(has(schema, "/additionalProperties"));
	cr_assert_not(json_object_get_boolean(at(schema, "/additionalProperties")));
	cr_assert_eq(json_object_object_length(at(schema, "/properties")), 4);
	cr_assert_str_eq(str_at(schema, "/properties/code/type"), "string");
	cr_assert(has(schema, "/properties/code/description"));
	cr_assert_str_eq(str_at(schema, "/properties/timeout_seconds/type"), "number");
	cr_assert_eq(json_object_get_double(at(schema, "/properties/timeout_seconds/maximum")),
	             30.0);
	cr_assert(has(schema, "/properties/timeout_seconds/exclusiveMinimum"));
	cr_assert_eq(
	    json_object_get_double(at(schema, "/properties/timeout_seconds/exclusiveMinimum")),
	    0.0);
	cr_assert(has(schema, "/properties/timeout_seconds/description"));
	cr_assert_str_eq(str_at(schema, "/properties/session/type"), "string");
	cr_assert(has(schema, "/properties/session/description"));
	cr_assert_str_eq(str_at(schema, "/properties/reset/type"), "boolean");
	cr_assert(has(schema, "/properties/reset/description"));
	json_object_put(tool);
}

Test(mcp, description_names_imports_limits_and_sessions)
{
	struct mcp_conn c;
	json_object *tool;
	const char *d;

	conn_at(&c, "2024-11-05");
	tool = tool_entry(&c);
	d = str_at(tool, "/description");
	cr_assert(strstr(d, "printed"), "%s", d);
	cr_assert(strstr(d, "last statement"), "%s", d);
	cr_assert(strstr(d, "collections, datetime, functools, itertools, json, math, operator, "
	                    "queue, random, re, stat, statistics, string, time, unicodedata"),
	          "%s", d);
	cr_assert(strstr(d, "30 s"), "%s", d);
	cr_assert(strstr(d, "512 MiB"), "%s", d);
	cr_assert(strstr(d, "State persists"), "%s", d);
	cr_assert(strstr(d, "changes nothing"), "%s", d);
	json_object_put(tool);
}

Test(mcp, output_schema_matches_the_wire_contract)
{
	json_object *schema = output_schema();
	static const char *const keys[] = {"result",    "result_repr", "logs",    "stdout",
	                                   "stderr",    "error",       "images",  "status",
	                                   "truncated", "duration_ms", "session", "files"};

	cr_assert_str_eq(str_at(schema, "/type"), "object");
	for (size_t i = 0; i < N_OF(keys); i++) {
		char ptr[64];

		snprintf(ptr, sizeof(ptr), "/properties/%s", keys[i]);
		cr_assert(has(schema, ptr), "%s missing", keys[i]);
	}
	cr_assert_eq(json_object_object_length(at(schema, "/properties")), N_OF(keys));
	cr_assert_str_eq(text(at(schema, "/properties/status/enum")),
	                 "[\"ok\",\"error\",\"timeout\",\"memory_limit\",\"output_limit\","
	                 "\"cancelled\",\"crashed\",\"sandbox_violation\"]");
	cr_assert_str_eq(text(at(schema, "/properties/session/type")), "[\"string\",\"null\"]");
	cr_assert_str_eq(text(at(schema, "/properties/result_repr/type")), "[\"string\",\"null\"]");
	cr_assert_str_eq(text(at(schema, "/properties/result")), "{}");
	cr_assert_str_eq(str_at(schema, "/properties/duration_ms/type"), "integer");
	/* files: present with a workspace only, so not required. */
	cr_assert_str_eq(str_at(schema, "/properties/files/type"), "array");
	cr_assert_str_eq(text(at(schema, "/properties/files/items/required")),
	                 "[\"path\",\"bytes\"]");
	json_object_put(schema);
}

Test(mcp, tools_list_rejects_cursors_it_never_issued)
{
	static const struct {
		const char *params;
		int ok;
	} cases[] = {
	    {NULL, 1},
	    {"{}", 1},
	    {"{\"cursor\":null}", 1},
	    {"[]", 1},
	    {"{\"cursor\":\"abc\"}", 0},
	    {"{\"cursor\":\"\"}", 0},
	    {"{\"cursor\":5}", 0},
	    {"{\"cursor\":{}}", 0},
	};
	struct mcp_conn c;
	char line[256];
	size_t i;

	conn_at(&c, "2025-11-25");
	for (i = 0; i < N_OF(cases); i++) {
		json_object *msg;

		if (cases[i].params)
			snprintf(line, sizeof(line),
			         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\","
			         "\"params\":%s}",
			         cases[i].params);
		else
			snprintf(line, sizeof(line),
			         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}");
		msg = reply_of(&c, line);
		if (cases[i].ok) {
			cr_assert(has(msg, "/result/tools/0"), "%s: %s", line, text(msg));
			cr_assert_not(has(msg, "/result/nextCursor"));
		} else {
			assert_error(msg, JSONRPC_INVALID_PARAMS, "5");
		}
		json_object_put(msg);
	}
}

/* ---- mcp: tools/call ----------------------------------------------------------------- */

Test(mcp, valid_call_becomes_a_call_event)
{
	static const struct {
		const char *line;
		const char *code;
		double timeout;
		const char *token; /* JSON text of the progress token, or NULL */
	} cases[] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"code\":\"print(1+1)\"}}}",
	     "print(1+1)", 0, NULL},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"code\":\"x\",\"timeout_seconds\":2.5},"
	     "\"_meta\":{\"progressToken\":2}}}",
	     "x", 2.5, "2"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"timeout_seconds\":30,\"code\":\"\\u00e9\\n\"},"
	     "\"_meta\":{\"progressToken\":\"tok\"}}}",
	     "\xc3\xa9\n", 30, "\"tok\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"code\":\"\",\"timeout_seconds\":1},"
	     "\"_meta\":{\"progressToken\":1.5}}}",
	     "", 1, NULL},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"code\":\"y\"},\"_meta\":{\"progressToken\":null}}}",
	     "y", 0, NULL},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"code\":\"y\"},\"_meta\":{\"progressToken\":{}}}}",
	     "y", 0, NULL},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"run_python\",\"arguments\":{\"code\":\"y\"},\"_meta\":5}}",
	     "y", 0, NULL},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		struct mcp_events ev = {0};
		struct mcp_conn c;

		conn_at(&c, "2025-11-25");
		handle(&c, cases[i].line, &ev);
		cr_assert_eq(ev.n, 1);
		cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL, "%s", cases[i].line);
		cr_assert_null(ev.ev[0].msg);
		cr_assert_str_eq(text(ev.ev[0].id), "1");
		cr_assert_str_eq(ev.ev[0].args.code, cases[i].code);
		cr_assert_eq(ev.ev[0].args.code_len, strlen(cases[i].code));
		cr_assert_eq(ev.ev[0].args.timeout_s, cases[i].timeout);
		if (cases[i].token)
			cr_assert_str_eq(text(ev.ev[0].progress_token), cases[i].token);
		else
			cr_assert_null(ev.ev[0].progress_token);
		mcp_events_clear(&ev);
	}
}

Test(mcp, call_ids_keep_their_type)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, "2025-11-25");
	handle(&c,
	       "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"}}}",
	       &ev);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
	cr_assert(json_object_is_type(ev.ev[0].id, json_type_string));
	cr_assert_str_eq(text(ev.ev[0].id), "\"0\"");
	mcp_events_clear(&ev);
	handle(&c,
	       "{\"jsonrpc\":\"2.0\",\"id\":123456789012,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"}}}",
	       &ev);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
	cr_assert_eq(json_object_get_int64(ev.ev[0].id), 123456789012LL);
	mcp_events_clear(&ev);
}

Test(mcp, bad_tool_name_or_arguments_are_invalid_params)
{
	static const char *const params[] = {
	    "{\"name\":\"run_pythonx\",\"arguments\":{\"code\":\"1\"}}",
	    "{\"name\":\"RUN_PYTHON\",\"arguments\":{\"code\":\"1\"}}",
	    "{\"name\":\"run_python\\u0000\",\"arguments\":{\"code\":\"1\"}}",
	    "{\"name\":\"session\",\"arguments\":{}}",
	    "{\"name\":5,\"arguments\":{\"code\":\"1\"}}",
	    "{\"arguments\":{\"code\":\"1\"}}",
	    "{\"name\":\"run_python\",\"arguments\":[\"1\"]}",
	    "{\"name\":\"run_python\",\"arguments\":\"print(1)\"}",
	    "{\"name\":\"run_python\",\"arguments\":null}",
	    "{\"name\":\"run_python\",\"arguments\":5}",
	    "[\"run_python\"]",
	    "{}",
	};
	struct mcp_conn c;
	char line[512];
	size_t i;

	conn_at(&c, "2025-11-25");
	for (i = 0; i < N_OF(params); i++) {
		json_object *msg;

		snprintf(
		    line, sizeof(line),
		    "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\"params\":%s}",
		    params[i]);
		msg = reply_of(&c, line);
		assert_error(msg, JSONRPC_INVALID_PARAMS, "\"c\"");
		json_object_put(msg);
	}
	json_object *msg =
	    reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\"}");
	assert_error(msg, JSONRPC_INVALID_PARAMS, "\"c\"");
	json_object_put(msg);
}

Test(mcp, unknown_tool_error_names_the_tool)
{
	struct mcp_conn c;
	json_object *msg;

	conn_at(&c, "2025-11-25");
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	                   "{\"name\":\"fetch_url\"}}");
	assert_error(msg, JSONRPC_INVALID_PARAMS, "1");
	cr_assert(strstr(str_at(msg, "/error/message"), "fetch_url"));
	json_object_put(msg);
}

Test(mcp, bad_argument_values_are_tool_errors)
{
	static const struct {
		const char *args;
		const char *says;
	} cases[] = {
	    {"{}", "missing required argument 'code'"},
	    {"{\"code\":5}", "'code' must be a string, not a number"},
	    {"{\"code\":null}", "'code' must be a string, not null"},
	    {"{\"code\":[\"print(1)\"]}", "'code' must be a string, not an array"},
	    {"{\"code\":\"a\\u0000b\"}", "'code' must not contain NUL"},
	    {"{\"code\":\"1\",\"timeout_seconds\":0}", "greater than 0"},
	    {"{\"code\":\"1\",\"timeout_seconds\":-1}", "greater than 0"},
	    {"{\"code\":\"1\",\"timeout_seconds\":-0.0}", "greater than 0"},
	    {"{\"code\":\"1\",\"timeout_seconds\":30.5}", "at most 30"},
	    {"{\"code\":\"1\",\"timeout_seconds\":1e999}", "at most 30"},
	    {"{\"code\":\"1\",\"timeout_seconds\":18446744073709551615}", "at most 30"},
	    {"{\"code\":\"1\",\"timeout_seconds\":\"5\"}", "must be a number, not a string"},
	    {"{\"code\":\"1\",\"timeout_seconds\":true}", "must be a number, not a boolean"},
	    {"{\"code\":\"1\",\"timeout_seconds\":null}", "must be a number, not null"},
	    {"{\"code\":\"1\",\"session\":5}", "'session' must be a string"},
	    {"{\"code\":\"1\",\"session\":\"\"}", "must be \"new\" or a session handle"},
	    {"{\"code\":\"1\",\"session\":\"a b\"}", "must be \"new\" or a session handle"},
	    {"{\"code\":\"1\",\"reset\":\"yes\"}", "'reset' must be a boolean, not a string"},
	    {"{\"code\":\"1\",\"foo\":1}", "unknown argument 'foo'"},
	    {"{\"code\":\"1\",\"Code\":\"2\"}", "unknown argument 'Code'"},
	    {"{\"code\":\"1\",\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1}", "2 more unknown"},
	    {"{\"code\":5,\"session\":null}", "'session' must be a string"},
	};
	size_t i, v;

	for (v = 0; v < N_OF(all_versions); v++) {
		for (i = 0; i < N_OF(cases); i++) {
			struct mcp_conn c;
			json_object *msg;

			conn_at(&c, all_versions[v]);
			msg = call(&c, cases[i].args);
			cr_assert_not(has(msg, "/error"), "%s: %s", cases[i].args, text(msg));
			cr_assert_str_eq(text(at(msg, "/id")), "\"call-1\"");
			cr_assert(json_object_get_boolean(at(msg, "/result/isError")), "%s",
			          cases[i].args);
			cr_assert_str_eq(str_at(msg, "/result/content/0/type"), "text");
			cr_assert(strstr(str_at(msg, "/result/content/0/text"), cases[i].says),
			          "%s: %s", cases[i].args, str_at(msg, "/result/content/0/text"));
			cr_assert(
			    strstr(str_at(msg, "/result/content/0/text"), "InvalidArguments"));
			if (strcmp(all_versions[v], "2025-06-18") < 0) {
				cr_assert_not(has(msg, "/result/structuredContent"));
			} else {
				assert_valid_structured(msg);
				cr_assert_str_eq(str_at(msg, "/result/structuredContent/status"),
				                 "error");
				cr_assert_str_eq(
				    str_at(msg, "/result/structuredContent/error/type"),
				    "InvalidArguments");
				cr_assert(
				    strstr(str_at(msg, "/result/structuredContent/error/message"),
				           cases[i].says));
				cr_assert_str_eq(
				    str_at(msg, "/result/structuredContent/error/traceback"), "");
				cr_assert_str_eq(str_at(msg, "/result/structuredContent/logs"), "");
				cr_assert_null(at(msg, "/result/structuredContent/result"));
				cr_assert_null(at(msg, "/result/structuredContent/result_repr"));
				cr_assert_null(at(msg, "/result/structuredContent/session"));
				cr_assert_eq(json_object_get_int(
				                 at(msg, "/result/structuredContent/duration_ms")),
				             0);
				cr_assert_not(json_object_get_boolean(
				    at(msg, "/result/structuredContent/truncated")));
			}
			json_object_put(msg);
		}
	}
}

/* The supervisor hands a CALL event's code to the worker as a C string: code never holds a NUL,
 * however it is written, so strlen(code) is code_len. */
Test(mcp, call_events_never_carry_a_nul_in_the_code)
{
	static const char *const codes[] = {
	    "\"\\u0000\"",        "\"\\u0000print(1)\"", "\"print(1)\\u0000\"",
	    "\"a\\u0000b\"",      "\"x = '\\u0000'\"",   "\"\\u00e9\\u0000\\ud83d\\ude00\"",
	    "\"print(1)\"",       "\"\\u00e9\\n\"",      "\"\\ud83d\\ude00\"",
	    "\"\\u0001\\u007f\"",
	};
	char line[512];
	size_t i, calls = 0;

	for (i = 0; i < N_OF(codes); i++) {
		struct mcp_events ev = {0};
		struct mcp_conn c;

		conn_at(&c, "2025-03-26");
		snprintf(line, sizeof(line),
		         "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		         "{\"name\":\"run_python\",\"arguments\":{\"code\":%s}}}]",
		         codes[i]);
		handle(&c, line, &ev);
		cr_assert_eq(ev.n, 1);
		if (ev.ev[0].kind == MCP_EV_CALL) {
			cr_assert_eq(strlen(ev.ev[0].args.code), ev.ev[0].args.code_len, "%s",
			             codes[i]);
			calls++;
		} else {
			cr_assert(strstr(text(ev.ev[0].msg), "must not contain NUL"), "%s: %s",
			          codes[i], text(ev.ev[0].msg));
		}
		mcp_events_clear(&ev);
	}
	cr_assert_eq(calls, 4);
}

Test(mcp, missing_arguments_count_as_empty)
{
	struct mcp_conn c;
	json_object *msg;

	conn_at(&c, "2025-11-25");
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	                   "{\"name\":\"run_python\"}}");
	cr_assert(json_object_get_boolean(at(msg, "/result/isError")));
	cr_assert(strstr(str_at(msg, "/result/content/0/text"), "missing required argument"));
	json_object_put(msg);
}

Test(mcp, cancellation_becomes_a_cancel_event)
{
	static const char *const ids[] = {"5", "\"abc\"", "0", "123456789012"};
	size_t i;

	for (i = 0; i < N_OF(ids); i++) {
		struct mcp_events ev = {0};
		struct mcp_conn c;
		char line[256];

		conn_at(&c, "2025-11-25");
		snprintf(line, sizeof(line),
		         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
		         "{\"requestId\":%s,\"reason\":\"McpError: MCP error -32001: Request timed "
		         "out\"}}",
		         ids[i]);
		handle(&c, line, &ev);
		cr_assert_eq(ev.n, 1);
		cr_assert_eq(ev.ev[0].kind, MCP_EV_CANCEL);
		cr_assert_null(ev.ev[0].msg);
		cr_assert_str_eq(text(ev.ev[0].id), ids[i]);
		mcp_events_clear(&ev);
	}
}

Test(mcp, over_long_line_is_answered_with_null_id)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;
	size_t n = PROTO_MAX_LINE + 1;
	char *line = malloc(n);

	memset(line, ' ', n);
	memcpy(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 40);
	conn_at(&c, NULL);
	cr_assert_eq(mcp_handle_line(&c, line, n, &ev), 0);
	cr_assert_eq(ev.n, 1);
	assert_error(ev.ev[0].msg, JSONRPC_INVALID_REQUEST, "null");
	mcp_events_clear(&ev);
	free(line);
}

/* ---- mcp: batches -------------------------------------------------------------------- */

Test(mcp, batches_are_handled_element_by_element_in_2025_03_26)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, "2025-03-26");
	handle(&c,
	       "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
	       "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"}}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"nope\"},"
	       "5,"
	       "[],"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	       "{\"requestId\":\"two\"}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}]",
	       &ev);
	cr_assert(ev.is_batch);
	cr_assert_eq(ev.n, 8);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_REPLY);
	cr_assert_str_eq(text(ev.ev[0].msg), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	cr_assert_eq(ev.ev[1].kind, MCP_EV_CALL);
	cr_assert_str_eq(text(ev.ev[1].id), "\"two\"");
	assert_error(ev.ev[2].msg, JSONRPC_INVALID_REQUEST, "3");
	assert_error(ev.ev[3].msg, JSONRPC_METHOD_NOT_FOUND, "4");
	assert_error(ev.ev[4].msg, JSONRPC_INVALID_REQUEST, "null");
	assert_error(ev.ev[5].msg, JSONRPC_INVALID_REQUEST, "null");
	cr_assert_eq(ev.ev[6].kind, MCP_EV_CANCEL);
	cr_assert_str_eq(text(ev.ev[6].id), "\"two\"");
	cr_assert_eq(ev.ev[7].kind, MCP_EV_REPLY);
	cr_assert(has(ev.ev[7].msg, "/result/tools/0/annotations"));
	cr_assert_str_eq(c.version, "2025-03-26", "initialize in a batch must not renegotiate");
	mcp_events_clear(&ev);
}

Test(mcp, batch_of_notifications_yields_nothing)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, "2025-03-26");
	handle(&c,
	       "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}]",
	       &ev);
	cr_assert(ev.is_batch);
	cr_assert_eq(ev.n, 0);
	mcp_events_clear(&ev);
}

Test(mcp, empty_batch_is_one_invalid_request)
{
	struct mcp_conn c;
	json_object *msg;

	conn_at(&c, "2025-03-26");
	msg = reply_of(&c, "[]");
	assert_error(msg, JSONRPC_INVALID_REQUEST, "null");
	json_object_put(msg);
}

/* A batch's answers leave together once its last call is done: a batch is bounded, and one
 * past the bound runs nothing. */
Test(mcp, a_batch_past_its_bound_is_one_invalid_request)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;
	char line[8192];

	conn_at(&c, "2025-03-26");
	for (int size = PROTO_MAX_BATCH + 1; size >= PROTO_MAX_BATCH; size--) {
		size_t n = (size_t)snprintf(line, sizeof(line), "[");
		for (int i = 0; i < size; i++)
			n += (size_t)snprintf(
			    line + n, sizeof(line) - n,
			    "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
			    "\"params\":{\"name\":\"run_python\",\"arguments\":"
			    "{\"code\":\"1\"}}}",
			    i ? "," : "", i);
		snprintf(line + n, sizeof(line) - n, "]");
		handle(&c, line, &ev);
		if (size > PROTO_MAX_BATCH) {
			cr_assert_eq(ev.n, 1);
			cr_assert_eq(ev.ev[0].kind, MCP_EV_REPLY, "a call of it was started");
			assert_error(ev.ev[0].msg, JSONRPC_INVALID_REQUEST, "null");
			cr_assert(strstr(text(ev.ev[0].msg), "at most 32 messages"), "%s",
			          text(ev.ev[0].msg));
		} else {
			/* At the bound, every call is one. */
			cr_assert_eq(ev.n, PROTO_MAX_BATCH);
			cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
		}
		mcp_events_clear(&ev);
	}
}

Test(mcp, batches_are_refused_in_other_versions)
{
	static const char line[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
	                           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]";
	static const char *const versions[] = {NULL, "2024-11-05", "2025-06-18", "2025-11-25"};
	size_t i;

	for (i = 0; i < N_OF(versions); i++) {
		struct mcp_conn c;
		json_object *msg;

		conn_at(&c, versions[i]);
		msg = reply_of(&c, line);
		assert_error(msg, JSONRPC_INVALID_REQUEST, "null");
		json_object_put(msg);
		msg = reply_of(&c, "[]");
		assert_error(msg, JSONRPC_INVALID_REQUEST, "null");
		json_object_put(msg);
	}
}

Test(mcp, events_clear_is_idempotent)
{
	struct mcp_events ev = {0};
	struct mcp_conn c;

	conn_at(&c, "2025-03-26");
	handle(&c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", &ev);
	cr_assert_eq(ev.n, 1);
	/* A second line into the same events replaces the first line's. */
	handle(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_not(ev.is_batch);
	cr_assert_str_eq(text(ev.ev[0].msg), "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
	mcp_events_clear(&ev);
	mcp_events_clear(&ev);
	cr_assert_eq(ev.n, 0);
	cr_assert_null(ev.ev);
}

/* ---- tool responses ------------------------------------------------------------------ */

/* t set to the C string s, or left absent for NULL. */
static void set_text(struct text *t, const char *s)
{
	text_clear(t);
	if (s)
		cr_assert_eq(text_set_str(t, s), 0);
}

static void outcome_fill(struct run_outcome *o, enum run_status st, const char *out,
                         const char *err, const char *repr)
{
	run_outcome_init(o);
	o->status = st;
	set_text(&o->stdout_text, out);
	set_text(&o->stderr_text, err);
	if (out || err)
		cr_assert_eq(text_printf(&o->logs, "%s%s", out ? out : "", err ? err : ""), 0);
	set_text(&o->result_repr, repr);
	o->duration_ms = 12;
}

static void outcome_error(struct run_outcome *o, const char *type, const char *msg, const char *tb)
{
	set_text(&o->error_type, type);
	set_text(&o->error_message, msg);
	set_text(&o->error_traceback, tb);
}

/* mcp_outcome_text as a C string (malloc'd), checked to hold no NUL. */
static char *outcome_text(const struct run_outcome *o)
{
	struct text t = {0};

	cr_assert_eq(mcp_outcome_text(o, NULL, &t), 0);
	cr_assert_eq(strlen(t.s), t.len);
	return t.s;
}

Test(tool, text_shows_output_then_result)
{
	struct run_outcome o;
	char *t;

	outcome_fill(&o, RUN_OK, "hello\n", NULL, "42");
	t = outcome_text(&o);
	cr_assert_str_eq(t, "hello\nResult: 42");
	free(t);
	set_text(&o.logs, "no newline");
	t = outcome_text(&o);
	cr_assert_str_eq(t, "no newline\nResult: 42");
	free(t);
	run_outcome_clear(&o);
}

Test(tool, text_without_anything_says_no_output)
{
	struct run_outcome o;
	char *t;

	run_outcome_init(&o);
	t = outcome_text(&o);
	cr_assert_str_eq(t, "(no output)");
	free(t);
	set_text(&o.logs, "");
	t = outcome_text(&o);
	cr_assert_str_eq(t, "(no output)");
	free(t);
	run_outcome_clear(&o);
}

Test(tool, text_on_error_shows_output_and_traceback)
{
	struct run_outcome o;
	char *t;

	outcome_fill(&o, RUN_ERROR, "before\n", NULL, NULL);
	outcome_error(&o, "ZeroDivisionError", "division by zero",
	              "Traceback (most recent call last):\n  File \"<code>\", line 2, in "
	              "<module>\nZeroDivisionError: division by zero\n");
	t = outcome_text(&o);
	cr_assert_str_eq(t, "before\nTraceback (most recent call last):\n  File \"<code>\", line "
	                    "2, in <module>\nZeroDivisionError: division by zero\n");
	free(t);
	text_clear(&o.error_traceback);
	t = outcome_text(&o);
	cr_assert_str_eq(t, "before\nError: ZeroDivisionError: division by zero");
	free(t);
	run_outcome_clear(&o);
}

/* A call stopped at the memory limit is told the limit (the server's configured size), so the
 * code can be made to fit; without a configuration the line stays generic. */
Test(tool, memory_limit_line_names_the_limit)
{
	static const struct {
		uint64_t bytes;
		const char *says;
	} cases[] = {
	    {512ull << 20, "allows 512 MiB of address space per call"},
	    {1ull << 30, "allows 1 GiB of address space per call"},
	    {3ull << 30, "allows 3 GiB of address space per call"},
	    {(1ull << 30) + 1, "allows 1073741825 bytes of address space per call"},
	};
	struct mcp_server_config limits = {0};
	struct run_outcome o;
	struct text t = {0};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		outcome_fill(&o, RUN_MEMORY_LIMIT, "partial\n", NULL, NULL);
		outcome_error(&o, "MemoryError", "", NULL);
		limits.memory_bytes = cases[i].bytes;
		cr_assert_eq(mcp_outcome_text(&o, &limits, &t), 0);
		cr_assert(strstr(t.s, "[memory_limit]"), "%s", t.s);
		cr_assert(strstr(t.s, cases[i].says), "%s", t.s);
		cr_assert(strstr(t.s, "--memory"), "%s", t.s);
		run_outcome_clear(&o);
	}
	outcome_fill(&o, RUN_MEMORY_LIMIT, NULL, NULL, NULL);
	cr_assert_eq(mcp_outcome_text(&o, NULL, &t), 0);
	cr_assert(strstr(t.s, "[memory_limit] The code ran out of memory"), "%s", t.s);
	cr_assert_null(strstr(t.s, "allows"), "%s", t.s);
	run_outcome_clear(&o);
	text_clear(&t);
}

/* What a stopped call's structured message says besides its own (a server of 30 s calls). */
#define MEMORY_NOTE                                                                                \
	", the interpreter and its libraries included (the server's --memory option). Work in "    \
	"smaller parts (chunks, smaller dtypes) or ask for a larger limit."
#define TIMEOUT_NOTE                                                                               \
	"A call may run at most 30 s (the server's --timeout; timeout_seconds may lower it). "     \
	"Split long work across calls (a session keeps its state between them) or make it "        \
	"lighter."

/* A client that reads only structuredContent.error learns the limit too: the message of a call
 * stopped at it (the interpreter's own, or none) ends with it and what to do (a call stopped
 * at its own timeout_seconds is told that limit, not only the server's); other statuses keep
 * theirs. */
Test(tool, memory_limit_message_names_the_limit)
{
	static const struct {
		enum run_status status;
		const char *type, *message, *want;
		double timeout_s;
	} cases[] = {
	    {RUN_MEMORY_LIMIT, "MemoryError", "Unable to allocate 38.1 MiB for an array",
	     "Unable to allocate 38.1 MiB for an array. The sandbox allows 512 MiB of address "
	     "space per call" MEMORY_NOTE,
	     0},
	    {RUN_MEMORY_LIMIT, "MemoryError", "",
	     "The sandbox allows 512 MiB of address space per call" MEMORY_NOTE, 0},
	    {RUN_TIMEOUT, "TimeoutError", "stopped after 2 s", "stopped after 2 s. " TIMEOUT_NOTE,
	     0},
	    {RUN_TIMEOUT, "TimeoutError", "stopped after 3 s",
	     "stopped after 3 s. This call's limit was 3 s (its timeout_seconds); a call may run "
	     "at most 30 s (the server's --timeout). Split long work across calls (a session keeps "
	     "its state between them) or make it lighter.",
	     3},
	    {RUN_TIMEOUT, "TimeoutError", "stopped after 30 s", "stopped after 30 s. " TIMEOUT_NOTE,
	     30},
	    {RUN_ERROR, "IndexError", "list index out of range", "list index out of range", 0},
	};
	json_object *id = json_object_new_int(3);

	for (size_t i = 0; i < N_OF(cases); i++) {
		struct run_outcome o;
		struct mcp_conn c;
		struct mcp_request_ctx ctx;
		json_object *msg;

		conn_at(&c, "2025-11-25");
		run_outcome_init(&o);
		o.status = cases[i].status;
		outcome_error(&o, cases[i].type, cases[i].message, NULL);
		ctx = *ctx_of(&c);
		ctx.timeout_s = cases[i].timeout_s;
		msg = mcp_tool_response(&c, &ctx, id, &o);
		cr_assert_str_eq(str_at(msg, "/result/structuredContent/error/message"),
		                 cases[i].want);
		assert_valid_structured(msg);
		json_object_put(msg);
		run_outcome_clear(&o);
	}
	json_object_put(id);
}

Test(tool, text_names_non_error_statuses)
{
	static const struct {
		enum run_status st;
		const char *tag;
	} cases[] = {
	    {RUN_TIMEOUT, "[timeout]"},           {RUN_MEMORY_LIMIT, "[memory_limit]"},
	    {RUN_OUTPUT_LIMIT, "[output_limit]"}, {RUN_CANCELLED, "[cancelled]"},
	    {RUN_CRASHED, "[crashed]"},           {RUN_SANDBOX_VIOLATION, "[sandbox_violation]"},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		struct run_outcome o;
		char *t;

		outcome_fill(&o, cases[i].st, "partial\n", NULL, "ignored");
		t = outcome_text(&o);
		cr_assert(!strncmp(t, "partial\n", 8), "%s", t);
		cr_assert(strstr(t, cases[i].tag), "%s", t);
		cr_assert_null(strstr(t, "Result:"), "%s", t);
		free(t);
		run_outcome_clear(&o);
	}
	struct run_outcome o;
	char *t;

	outcome_fill(&o, RUN_SANDBOX_VIOLATION, NULL, NULL, NULL);
	outcome_error(&o, "SandboxViolation", "blocked system call socket", NULL);
	t = outcome_text(&o);
	cr_assert(!strncmp(t,
	                   "Error: SandboxViolation: blocked system call socket\n"
	                   "[sandbox_violation]",
	                   70),
	          "%s", t);
	free(t);
	run_outcome_clear(&o);
	outcome_fill(&o, RUN_ERROR, NULL, NULL, NULL);
	t = outcome_text(&o);
	cr_assert(!strncmp(t, "Error:", 6), "%s", t);
	cr_assert_null(strstr(t, "["), "%s", t);
	free(t);
	run_outcome_clear(&o);
}

/* The string at ptr is exactly want[0..n), NUL bytes included. */
static void assert_bytes_at(json_object *msg, const char *ptr, const char *want, size_t n)
{
	json_object *v = at(msg, ptr);

	cr_assert(json_object_is_type(v, json_type_string), "%s in %s", ptr, wire(msg));
	cr_assert_eq((size_t)json_object_get_string_len(v), n, "%s: %d bytes, want %zu", ptr,
	             json_object_get_string_len(v), n);
	cr_assert_eq(memcmp(json_object_get_string(v), want, n), 0, "%s in %s", ptr, wire(msg));
}

/* What the code printed, returned or raised reaches the client whole: NUL and every control
 * character are escaped, nothing after a NUL is lost. */
Test(tool, nul_and_every_character_survive_into_the_response)
{
	static const char data[] = "a\0b\x01\x7f\xc3\xa9\0";
	const size_t n = sizeof(data) - 1;
	struct run_outcome o;
	struct mcp_conn c;
	json_object *msg, *id = json_object_new_int(5);
	struct text *f[] = {&o.stdout_text, &o.stderr_text,   &o.logs,
	                    &o.error_type,  &o.error_message, &o.error_traceback};
	struct text t = {0};

	conn_at(&c, "2025-11-25");
	run_outcome_init(&o);
	o.status = RUN_ERROR;
	for (size_t i = 0; i < N_OF(f); i++)
		cr_assert_eq(text_set(f[i], data, n), 0);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	cr_assert_not_null(msg);
	cr_assert(strstr(wire(msg), "a\\u0000b\\u0001"), "%s", wire(msg));
	assert_bytes_at(msg, "/result/structuredContent/stdout", data, n);
	assert_bytes_at(msg, "/result/structuredContent/stderr", data, n);
	assert_bytes_at(msg, "/result/structuredContent/logs", data, n);
	assert_bytes_at(msg, "/result/structuredContent/error/type", data, n);
	assert_bytes_at(msg, "/result/structuredContent/error/message", data, n);
	assert_bytes_at(msg, "/result/structuredContent/error/traceback", data, n);
	/* The text: the logs, a newline, the traceback. */
	cr_assert_eq(mcp_outcome_text(&o, NULL, &t), 0);
	cr_assert_eq(t.len, 2 * n + 1);
	cr_assert_eq(memcmp(t.s, data, n), 0);
	cr_assert_eq(t.s[n], '\n');
	cr_assert_eq(memcmp(t.s + n + 1, data, n), 0);
	assert_bytes_at(msg, "/result/content/0/text", t.s, t.len);
	text_clear(&t);
	json_object_put(msg);
	/* A result value and its repr; the error message of a rolled-back call. */
	run_outcome_clear(&o);
	o.status = RUN_OK;
	cr_assert_eq(text_set(&o.result_repr, data, n), 0);
	o.result = json_object_new_string_len(data, (int)n);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_bytes_at(msg, "/result/structuredContent/result_repr", data, n);
	assert_bytes_at(msg, "/result/structuredContent/result", data, n);
	cr_assert(strstr(str_at(msg, "/result/content/0/text"), "Result: a"));
	cr_assert_eq(json_object_get_string_len(at(msg, "/result/content/0/text")), 8 + n);
	json_object_put(msg);
	run_outcome_clear(&o);
	o.status = RUN_TIMEOUT;
	o.rolled_back = 1;
	cr_assert_eq(text_set(&o.error_message, "stop\0", 5), 0);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	{
		static const char want[] = "stop\0. " TIMEOUT_NOTE " The session is unchanged: its "
		                           "state is as it was before this call.";
		assert_bytes_at(msg, "/result/structuredContent/error/message", want,
		                sizeof(want) - 1);
	}
	json_object_put(msg);
	run_outcome_clear(&o);
	json_object_put(id);
}

/* A response over the budget is cut by the JSON size of its texts: a NUL costs six bytes. */
Test(tool, nul_heavy_response_stays_under_budget)
{
	size_t n = 400000;
	char *nuls = calloc(n, 1);
	struct run_outcome o;
	struct mcp_conn c;
	json_object *msg, *id = json_object_new_int(6);
	size_t len;

	cr_assert_not_null(nuls);
	conn_at(&c, "2025-11-25");
	run_outcome_init(&o);
	cr_assert_eq(text_set(&o.stdout_text, nuls, n), 0);
	cr_assert_eq(text_set(&o.logs, nuls, n), 0);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	cr_assert_not_null(msg);
	cr_assert(json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN, &len));
	cr_assert_leq(len, 900000);
	cr_assert_gt(len, 800000, "cut far more than needed: %zu", len);
	cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	{
		json_object *v = at(msg, "/result/structuredContent/stdout");
		const char *p = json_object_get_string(v);
		size_t vlen = (size_t)json_object_get_string_len(v);
		const char *m = memmem(p, vlen, "bytes cut]", 10);

		/* Head NULs, the marker, tail NULs: nothing else. */
		cr_assert_not_null(m, "no marker");
		cr_assert_eq(p[0], '\0');
		cr_assert_eq(p[vlen - 1], '\0');
		cr_assert_gt(vlen, 40000, "three texts share the budget, a NUL costs 6 bytes");
	}
	json_object_put(msg);
	run_outcome_clear(&o);
	json_object_put(id);
	free(nuls);
}

Test(tool, response_carries_structured_content_by_version)
{
	size_t v;

	for (v = 0; v < N_OF(all_versions); v++) {
		struct run_outcome o;
		struct mcp_conn c;
		json_object *id = json_object_new_int(7), *msg;

		conn_at(&c, all_versions[v]);
		outcome_fill(&o, RUN_OK, "out\n", "err\n", "[1, 2]");
		o.result = json_tokener_parse("[1,2]");
		msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
		cr_assert_str_eq(text(at(msg, "/id")), "7");
		cr_assert_str_eq(str_at(msg, "/result/content/0/text"), "out\nerr\nResult: [1, 2]");
		cr_assert(has(msg, "/result/isError"));
		cr_assert_not(json_object_get_boolean(at(msg, "/result/isError")));
		if (strcmp(all_versions[v], "2025-06-18") < 0) {
			cr_assert_not(has(msg, "/result/structuredContent"));
		} else {
			assert_valid_structured(msg);
			cr_assert_str_eq(text(at(msg, "/result/structuredContent")),
			                 "{\"result\":[1,2],\"result_repr\":\"[1, 2]\",\"logs\":"
			                 "\"out\\nerr\\n\",\"stdout\":\"out\\n\",\"stderr\":"
			                 "\"err\\n\",\"error\":null,\"images\":[],\"status\":"
			                 "\"ok\",\"truncated\":"
			                 "false,\"duration_ms\":12,\"session\":null}");
		}
		json_object_put(msg);
		json_object_put(id);
		run_outcome_clear(&o);
	}
}

Test(tool, every_status_validates_and_is_error_unless_ok)
{
	enum run_status st;

	for (st = RUN_OK; st <= RUN_SANDBOX_VIOLATION; st++) {
		struct run_outcome o;
		struct mcp_conn c;
		json_object *id = json_object_new_string("s"), *msg;

		conn_at(&c, "2025-11-25");
		outcome_fill(&o, st, NULL, NULL, NULL);
		if (st == RUN_ERROR)
			outcome_error(&o, "ValueError", "bad", "Traceback...\nValueError: bad\n");
		o.session = strdup("sess-1");
		o.truncated = 1;
		msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
		assert_valid_structured(msg);
		cr_assert_eq(json_object_get_boolean(at(msg, "/result/isError")), st != RUN_OK);
		cr_assert_str_eq(str_at(msg, "/result/structuredContent/status"),
		                 run_status_name(st));
		cr_assert_str_eq(str_at(msg, "/result/structuredContent/session"), "sess-1");
		cr_assert_str_eq(str_at(msg, "/result/structuredContent/logs"), "");
		cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
		if (st == RUN_ERROR)
			cr_assert_str_eq(
			    text(at(msg, "/result/structuredContent/error")),
			    "{\"type\":\"ValueError\",\"message\":\"bad\",\"traceback\":"
			    "\"Traceback...\\nValueError: bad\\n\"}");
		else
			cr_assert_null(at(msg, "/result/structuredContent/error"));
		json_object_put(msg);
		json_object_put(id);
		run_outcome_clear(&o);
	}
}

static char *repeat(const char *unit, size_t times)
{
	size_t n = strlen(unit);
	char *s = malloc(n * times + 1);

	for (size_t i = 0; i < times; i++)
		memcpy(s + i * n, unit, n);
	s[n * times] = '\0';
	return s;
}

/* The response serialised as the supervisor sends it; checks it is bounded and valid. */
static size_t assert_bounded(json_object *msg)
{
	size_t len;
	const char *s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN, &len);
	json_object *back;

	cr_assert_leq(len, 900000, "response is %zu bytes", len);
	cr_assert(valid_utf8(s, len), "response is not valid UTF-8");
	back = proto_parse_json(s, len);
	cr_assert_not_null(back, "response does not parse back");
	json_object_put(back);
	return len;
}

Test(tool, response_stays_under_budget_with_control_characters)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(1), *msg;
	char *ctl = repeat("\x01\x02", 150000);

	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_ERROR, ctl, ctl, NULL);
	outcome_error(&o, "RuntimeError", "boom",
	              "Traceback (most recent call last):\nRuntimeError: boom\n");
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_bounded(msg);
	assert_valid_structured(msg);
	cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	cr_assert(json_object_get_boolean(at(msg, "/result/isError")));
	cr_assert(strstr(str_at(msg, "/result/structuredContent/logs"), " bytes cut] ...\n"));
	cr_assert(strstr(str_at(msg, "/result/structuredContent/stdout"), " bytes cut] ...\n"));
	/* The head and the tail both survive: the traceback ends the text. */
	const char *t = str_at(msg, "/result/content/0/text");
	cr_assert_eq(t[0], '\x01');
	cr_assert(strstr(t, "RuntimeError: boom\n"), "traceback lost");
	cr_assert(strstr(t, "bytes cut]"));
	/* Small fields are left whole. */
	cr_assert_str_eq(str_at(msg, "/result/structuredContent/error/type"), "RuntimeError");
	cr_assert_str_eq(str_at(msg, "/result/structuredContent/error/traceback"),
	                 "Traceback (most recent call last):\nRuntimeError: boom\n");
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(ctl);
}

Test(tool, response_cuts_on_character_boundaries)
{
	static const char *const units[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
	                                    "a\xe2\x82\xac\"", "\xf0\x9f\x98\x80\n\x01"};
	size_t u;

	for (u = 0; u < N_OF(units); u++) {
		struct run_outcome o;
		struct mcp_conn c;
		json_object *id = json_object_new_int(1), *msg;
		char *big = repeat(units[u], 700001 / strlen(units[u]));

		conn_at(&c, "2025-06-18");
		outcome_fill(&o, RUN_OK, big, NULL, big);
		msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
		assert_bounded(msg);
		assert_valid_structured(msg);
		cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
		cr_assert(
		    strstr(str_at(msg, "/result/structuredContent/result_repr"), "bytes cut"));
		json_object_put(msg);
		json_object_put(id);
		run_outcome_clear(&o);
		free(big);
	}
}

Test(tool, response_bounds_text_for_versions_without_structured_content)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(1), *msg;
	char *ctl = repeat("\x1f", 400000);
	size_t len;

	conn_at(&c, "2025-03-26");
	outcome_fill(&o, RUN_OK, ctl, NULL, NULL);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	len = assert_bounded(msg);
	cr_assert_gt(len, 800000, "cut far more than needed: %zu", len);
	cr_assert_not(has(msg, "/result/structuredContent"));
	cr_assert(strstr(str_at(msg, "/result/content/0/text"), "bytes cut]"));
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(ctl);
}

Test(tool, cut_keeps_head_and_tail_and_counts_what_went)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_string("k"), *msg;
	size_t n = 3000000, head, tail, cut;
	char *orig = malloc(n + 1);
	const char *t, *m, *end;

	for (size_t i = 0; i < n; i++)
		orig[i] = (char)('a' + i % 26);
	orig[n] = '\0';
	conn_at(&c, "2024-11-05");
	outcome_fill(&o, RUN_OK, orig, NULL, NULL);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_bounded(msg);
	t = str_at(msg, "/result/content/0/text");
	m = strstr(t, "\n... [");
	cr_assert_not_null(m);
	cr_assert_eq(sscanf(m, "\n... [%zu bytes cut] ...\n", &cut), 1);
	end = strstr(m, "] ...\n") + 6;
	head = (size_t)(m - t);
	tail = strlen(end);
	cr_assert(!memcmp(t, orig, head), "head is not the start of the output");
	cr_assert(!memcmp(end, orig + n - tail, tail), "tail is not the end of the output");
	cr_assert_eq(head + cut + tail, n);
	cr_assert_gt(head, 400000);
	cr_assert_gt(tail, 400000);
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(orig);
}

Test(tool, cut_response_uses_most_of_the_budget)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(1), *msg;
	char unit[128];
	char *all;
	size_t len;

	/* Every ASCII byte: the escaped sizes must match json-c's exactly, or the response
	 * would come out over budget or be cut much shorter than needed. */
	for (int i = 0; i < 127; i++)
		unit[i] = (char)(i + 1);
	unit[127] = '\0';
	all = repeat(unit, 8000);
	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OUTPUT_LIMIT, all, all, all);
	outcome_error(&o, "OutputLimit", all, all);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	len = assert_bounded(msg);
	cr_assert_geq(len, 890000, "only %zu bytes used", len);
	assert_valid_structured(msg);
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(all);
}

Test(tool, response_with_a_huge_id_still_comes_back)
{
	struct run_outcome o;
	struct mcp_conn c;
	char *big = repeat("i", 1000000);
	json_object *id = json_object_new_string(big), *msg;

	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OK, "out\n", NULL, "1");
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	cr_assert_not_null(msg);
	/* (No request brings such an id any more: it is longer than PROTO_MAX_ID. The response
	 * still holds it whole.) */
	cr_assert(json_object_equal(at(msg, "/id"), id));
	cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(big);
}

Test(tool, response_drops_a_huge_result_value)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(1), *msg, *arr = json_object_new_array();
	char *repr = repeat("x", 1000);

	for (int i = 0; i < 200000; i++)
		json_object_array_add(arr, json_object_new_string("abcd"));
	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OK, "small\n", NULL, repr);
	o.result = arr;
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_bounded(msg);
	assert_valid_structured(msg);
	cr_assert_null(at(msg, "/result/structuredContent/result"));
	cr_assert_str_eq(str_at(msg, "/result/structuredContent/result_repr"), repr);
	cr_assert_str_eq(str_at(msg, "/result/structuredContent/stdout"), "small\n");
	cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(repr);
}

Test(tool, small_response_is_untouched)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(1), *msg;
	/* 64 KiB per stream, the default capture limit, comes back whole. */
	char *big = repeat("line of output\n", 65536 / 15);

	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OK, big, NULL, NULL);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	cr_assert(!strcmp(str_at(msg, "/result/structuredContent/stdout"), big));
	cr_assert(!strcmp(str_at(msg, "/result/structuredContent/logs"), big));
	cr_assert(!strncmp(str_at(msg, "/result/content/0/text"), big, strlen(big)));
	cr_assert_not(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(big);
}

/* ---- linebuf ------------------------------------------------------------------------- */

struct got {
	char *lines[64];
	size_t lens[64];
	size_t n;
	size_t too_long;
	int order[64]; /* 0: line, 1: too long */
	size_t events;
};

static void drain(struct linebuf *lb, struct got *g)
{
	const char *line;
	size_t len;
	int r;

	while ((r = linebuf_next(lb, &line, &len)) != 0) {
		cr_assert_lt(g->events, 64);
		if (r == LINEBUF_TOO_LONG) {
			g->too_long++;
			g->order[g->events++] = 1;
			continue;
		}
		cr_assert_eq(r, LINEBUF_LINE);
		cr_assert_eq(line[len], '\0');
		g->lines[g->n] = malloc(len + 1);
		memcpy(g->lines[g->n], line, len + 1);
		g->lens[g->n++] = len;
		g->order[g->events++] = 0;
	}
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->lines[i]);
}

/* Feed s in chunks of the given size, draining after each; returns the peak capacity. */
static size_t feed_chunked(struct linebuf *lb, const char *s, size_t n, size_t chunk, struct got *g)
{
	size_t off, peak = 0;

	for (off = 0; off < n; off += chunk) {
		size_t k = n - off < chunk ? n - off : chunk;

		cr_assert_eq(linebuf_feed(lb, s + off, k), 0);
		peak = lb->cap > peak ? lb->cap : peak;
		drain(lb, g);
	}
	return peak;
}

Test(linebuf, splits_lines_and_strips_crlf)
{
	static const char in[] = "{\"a\":1}\r\n{\"b\":2}\n\nlast\r\r\nx\ry\npartial";
	static const size_t chunks[] = {1, 2, 3, 5, 7, 4096};
	size_t i;

	for (i = 0; i < N_OF(chunks); i++) {
		struct linebuf lb;
		struct got g = {0};

		linebuf_init(&lb, 100);
		feed_chunked(&lb, in, sizeof(in) - 1, chunks[i], &g);
		cr_assert_eq(g.n, 5, "chunk %zu: %zu lines", chunks[i], g.n);
		cr_assert_str_eq(g.lines[0], "{\"a\":1}");
		cr_assert_str_eq(g.lines[1], "{\"b\":2}");
		cr_assert_eq(g.lens[2], 0);
		cr_assert_str_eq(g.lines[3], "last\r");
		cr_assert_str_eq(g.lines[4], "x\ry");
		cr_assert_eq(g.too_long, 0);
		cr_assert_eq(linebuf_feed(&lb, "\n", 1), 0);
		drain(&lb, &g);
		cr_assert_eq(g.n, 6);
		cr_assert_str_eq(g.lines[5], "partial");
		got_free(&g);
		linebuf_clear(&lb);
	}
}

Test(linebuf, keeps_nul_bytes_inside_lines)
{
	struct linebuf lb;
	struct got g = {0};

	linebuf_init(&lb, 100);
	cr_assert_eq(linebuf_feed(&lb, "a\0b\nc\n", 6), 0);
	drain(&lb, &g);
	cr_assert_eq(g.n, 2);
	cr_assert_eq(g.lens[0], 3);
	cr_assert(!memcmp(g.lines[0], "a\0b", 3));
	got_free(&g);
	linebuf_clear(&lb);
}

Test(linebuf, limit_applies_to_the_line_without_its_ending)
{
	static const size_t chunks[] = {1, 3, 10, 100};
	size_t i;

	for (i = 0; i < N_OF(chunks); i++) {
		struct linebuf lb;
		struct got g = {0};
		char in[64];

		/* 10 bytes ok, 10 bytes + CRLF ok, 11 bytes too long, 11 + CRLF too long. */
		snprintf(in, sizeof(in),
		         "0123456789\n0123456789\r\nABCDEFGHIJK\nabcdefghijk\r\nok\n");
		linebuf_init(&lb, 10);
		feed_chunked(&lb, in, strlen(in), chunks[i], &g);
		cr_assert_eq(g.n, 3, "chunk %zu", chunks[i]);
		cr_assert_str_eq(g.lines[0], "0123456789");
		cr_assert_str_eq(g.lines[1], "0123456789");
		cr_assert_str_eq(g.lines[2], "ok");
		cr_assert_eq(g.too_long, 2, "chunk %zu: %zu", chunks[i], g.too_long);
		cr_assert(g.order[0] == 0 && g.order[1] == 0 && g.order[2] == 1 &&
		          g.order[3] == 1 && g.order[4] == 0);
		got_free(&g);
		linebuf_clear(&lb);
	}
}

Test(linebuf, five_mib_line_is_reported_once_and_reading_continues)
{
	static const size_t chunks[] = {4093, 65536, 65537, 1 << 20, 6 << 20};
	const size_t big = 5u << 20;
	static const char tail[] = "\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n";
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n";
	size_t n = sizeof(head) - 1 + big + sizeof(tail) - 1, i;
	char *in = malloc(n);

	memcpy(in, head, sizeof(head) - 1);
	memset(in + sizeof(head) - 1, 'x', big);
	memcpy(in + sizeof(head) - 1 + big, tail, sizeof(tail) - 1);
	for (i = 0; i < N_OF(chunks); i++) {
		struct linebuf lb;
		struct got g = {0};
		size_t peak;

		linebuf_init(&lb, PROTO_MAX_LINE);
		peak = feed_chunked(&lb, in, n, chunks[i], &g);
		cr_assert_eq(g.too_long, 1, "chunk %zu: %zu reports", chunks[i], g.too_long);
		cr_assert_eq(g.n, 2, "chunk %zu: %zu lines", chunks[i], g.n);
		cr_assert_str_eq(g.lines[0], "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
		cr_assert_str_eq(g.lines[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
		cr_assert(g.order[0] == 0 && g.order[1] == 1 && g.order[2] == 0);
		cr_assert_leq(peak, PROTO_MAX_LINE + 2 + chunks[i], "chunk %zu: peak %zu",
		              chunks[i], peak);
		cr_assert_leq(lb.cap, 128u << 10, "memory kept after the line: %zu", lb.cap);
		got_free(&g);
		linebuf_clear(&lb);
	}
	free(in);
}

Test(linebuf, over_long_line_without_newline_is_reported_before_it_ends)
{
	struct linebuf lb;
	struct got g = {0};
	char chunk[1000];

	memset(chunk, 'y', sizeof(chunk));
	linebuf_init(&lb, 2500);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(linebuf_feed(&lb, chunk, sizeof(chunk)), 0);
		drain(&lb, &g);
	}
	cr_assert_eq(g.too_long, 1);
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(linebuf_feed(&lb, chunk, sizeof(chunk)), 0);
		drain(&lb, &g);
	}
	cr_assert_eq(g.too_long, 1);
	cr_assert_lt(lb.len, 2500);
	cr_assert_eq(linebuf_feed(&lb, "\nnext\n", 6), 0);
	drain(&lb, &g);
	cr_assert_eq(g.too_long, 1);
	cr_assert_eq(g.n, 1);
	cr_assert_str_eq(g.lines[0], "next");
	got_free(&g);
	linebuf_clear(&lb);
}

Test(linebuf, several_over_long_lines_in_one_chunk_keep_their_order)
{
	struct linebuf lb;
	struct got g = {0};
	static const char in[] = "a\nBBBBBBBBBBBB\nc\nDDDDDDDDDDDDDDDD\ne\nFFFFFFFFFFFFFFFFFF";

	linebuf_init(&lb, 5);
	cr_assert_eq(linebuf_feed(&lb, in, sizeof(in) - 1), 0);
	drain(&lb, &g);
	cr_assert_eq(g.n, 3);
	cr_assert_eq(g.too_long, 3);
	static const int want[] = {0, 1, 0, 1, 0, 1};
	for (size_t i = 0; i < N_OF(want); i++)
		cr_assert_eq(g.order[i], want[i], "event %zu", i);
	cr_assert_str_eq(g.lines[2], "e");
	got_free(&g);
	linebuf_clear(&lb);
}

Test(linebuf, nothing_held_means_no_line)
{
	struct linebuf lb;
	const char *line;
	size_t len;

	linebuf_init(&lb, 10);
	cr_assert_eq(linebuf_next(&lb, &line, &len), 0);
	cr_assert_eq(linebuf_feed(&lb, "", 0), 0);
	cr_assert_eq(linebuf_next(&lb, &line, &len), 0);
	linebuf_clear(&lb);
}

/* ---- outcome statuses ---------------------------------------------------------------- */

Test(outcome, status_names_are_the_wire_names)
{
	static const char *const names[] = {
	    "ok",           "error",     "timeout", "memory_limit",
	    "output_limit", "cancelled", "crashed", "sandbox_violation"};

	for (size_t i = 0; i < N_OF(names); i++)
		cr_assert_str_eq(run_status_name((enum run_status)i), names[i]);
}

/* ---- era: which protocol era a connection speaks ------------------------------------- */

#define META_2026_MEMBERS                                                                          \
	"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                              \
	"\"io.modelcontextprotocol/clientCapabilities\":{},"                                       \
	"\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"}"
/* The modern per-request envelope, as a member of params. */
#define ENVELOPE_2026 "\"_meta\":{" META_2026_MEMBERS "}"

static const char *const all_supported[] = {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26",
                                            "2024-11-05"};

/* The reply to a modern request: members are params' members before _meta ("" for none). */
static json_object *modern_reply(struct mcp_conn *c, const char *id, const char *method,
                                 const char *members)
{
	char line[2048];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s" ENVELOPE_2026
	         "}}",
	         id, method, members, *members ? "," : "");
	return reply_of(c, line);
}

/* A connection pinned to the modern era by its first request. */
static void conn_modern(struct mcp_conn *c)
{
	json_object *msg;

	mcp_conn_init(c, &cfg);
	msg = modern_reply(c, "0", "tools/list", "");
	cr_assert(has(msg, "/result/tools/0"), "%s", text(msg));
	json_object_put(msg);
	cr_assert_eq(c->era, MCP_ERA_MODERN);
	cr_assert_str_eq(c->version, "");
}

/* resultType "complete" and _meta serverInfo: what every modern result carries. */
static void assert_modern_result(json_object *msg)
{
	cr_assert(has(msg, "/result"), "not a result: %.300s", text(msg));
	cr_assert_str_eq(str_at(msg, "/result/resultType"), "complete", "in %.300s", text(msg));
	cr_assert_str_eq(str_at(msg, "/result/_meta/io.modelcontextprotocol~1serverInfo/name"),
	                 "safepy");
	cr_assert_str_eq(str_at(msg, "/result/_meta/io.modelcontextprotocol~1serverInfo/version"),
	                 "9.8.7");
}

static void assert_legacy_result(json_object *msg)
{
	cr_assert(has(msg, "/result"), "not a result: %.300s", text(msg));
	cr_assert_not(has(msg, "/result/resultType"), "in %.300s", text(msg));
	cr_assert_not(has(msg, "/result/_meta"), "in %.300s", text(msg));
	cr_assert_not(has(msg, "/result/ttlMs"));
	cr_assert_not(has(msg, "/result/cacheScope"));
}

Test(era, first_message_pins_the_era)
{
	/* reply: 0 a result; a JSON-RPC error code otherwise; 1 no reply at all. */
	static const struct {
		const char *line;
		enum mcp_era era;
		int reply;
		int modern; /* a result in the modern shape */
	} cases[] = {
	    /* initialize without a valid modern claim: the handshake. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	     "{\"protocolVersion\":\"2025-06-18\"}}",
	     MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	     "{\"protocolVersion\":\"2026-07-28\"}}",
	     MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
	     MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\","
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	     MCP_ERA_LEGACY, 0, 0},
	    /* initialize with a valid modern claim: modern, where initialize does not exist. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	     "{\"protocolVersion\":\"2026-07-28\"," ENVELOPE_2026 "}}",
	     MCP_ERA_MODERN, JSONRPC_METHOD_NOT_FOUND, 0},
	    /* No claim: legacy, served at once (before initialize too). */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
	     "{\"_meta\":{\"progressToken\":1,\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	     MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":5}}",
	     MCP_ERA_LEGACY, 0, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}", MCP_ERA_LEGACY,
	     JSONRPC_METHOD_NOT_FOUND, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", MCP_ERA_LEGACY,
	     JSONRPC_METHOD_NOT_FOUND, 0},
	    /* A valid claim for a supported version: modern. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" ENVELOPE_2026
	     "}}",
	     MCP_ERA_MODERN, 0, 1},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	     "\"io.modelcontextprotocol/clientCapabilities\":{\"roots\":{}},\"x/y\":1}}}",
	     MCP_ERA_MODERN, 0, 1},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\",\"params\":"
	     "{" ENVELOPE_2026 "}}",
	     MCP_ERA_MODERN, JSONRPC_METHOD_NOT_FOUND, 0},
	    /* A modern server/discover answers but leaves the era open: a probe. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":"
	     "{" ENVELOPE_2026 "}}",
	     MCP_ERA_PROBE, 0, 1},
	    /* An invalid claim: -32602, nothing pinned. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
	     MCP_ERA_OPEN, JSONRPC_INVALID_PARAMS, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":20260728,"
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	     MCP_ERA_OPEN, JSONRPC_INVALID_PARAMS, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":null,"
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	     MCP_ERA_OPEN, JSONRPC_INVALID_PARAMS, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	     "\"io.modelcontextprotocol/clientCapabilities\":[]}}}",
	     MCP_ERA_OPEN, JSONRPC_INVALID_PARAMS, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	     "\"io.modelcontextprotocol/clientCapabilities\":{},"
	     "\"io.modelcontextprotocol/clientInfo\":\"t\"}}}",
	     MCP_ERA_OPEN, JSONRPC_INVALID_PARAMS, 0},
	    /* A well-formed claim for a version not served statelessly: -32022, nothing pinned. */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\","
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	     MCP_ERA_OPEN, MCP_UNSUPPORTED_VERSION, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":"
	     "{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\","
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	     MCP_ERA_OPEN, MCP_UNSUPPORTED_VERSION, 0},
	    /* Not a classified request: the era stays open. */
	    {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	     "{\"requestId\":3}}",
	     MCP_ERA_OPEN, 1, 0},
	    {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", MCP_ERA_OPEN, 1, 0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", MCP_ERA_OPEN, JSONRPC_PARSE_ERROR,
	     0},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_ERA_OPEN,
	     JSONRPC_INVALID_REQUEST, 0},
	    {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_ERA_OPEN,
	     JSONRPC_INVALID_REQUEST, 0},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		struct mcp_events ev = {0};
		struct mcp_conn c;
		json_object *msg;

		mcp_conn_init(&c, &cfg);
		cr_assert_eq(c.era, MCP_ERA_OPEN);
		handle(&c, cases[i].line, &ev);
		cr_assert_eq(c.era, cases[i].era, "case %zu: era %d, not %d: %s", i, c.era,
		             cases[i].era, cases[i].line);
		if (cases[i].reply == 1) {
			cr_assert(ev.n == 0 || ev.ev[0].kind == MCP_EV_CANCEL, "case %zu", i);
			mcp_events_clear(&ev);
			continue;
		}
		cr_assert_eq(ev.n, 1, "case %zu", i);
		msg = ev.ev[0].msg;
		if (cases[i].reply == 0) {
			if (cases[i].modern)
				assert_modern_result(msg);
			else
				assert_legacy_result(msg);
		} else {
			cr_assert_eq(json_object_get_int(at(msg, "/error/code")), cases[i].reply,
			             "case %zu: %s", i, text(msg));
		}
		mcp_events_clear(&ev);
	}
}

Test(era, unsupported_version_error_names_the_supported_ones)
{
	static const char *const requested[] = {"1900-01-01", "2025-11-25", "2099-01-01", ""};
	char line[1024], want[512];
	size_t i;

	for (i = 0; i < N_OF(requested); i++) {
		struct mcp_conn c;
		json_object *msg;

		mcp_conn_init(&c, &cfg);
		snprintf(line, sizeof(line),
		         "{\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"tools/list\",\"params\":"
		         "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"%s\","
		         "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		         requested[i]);
		msg = reply_of(&c, line);
		assert_error(msg, MCP_UNSUPPORTED_VERSION, "\"u\"");
		cr_assert_str_eq(str_at(msg, "/error/message"), "Unsupported protocol version");
		snprintf(
		    want, sizeof(want),
		    "{\"supported\":[\"2026-07-28\",\"2025-11-25\",\"2025-06-18\",\"2025-03-26\","
		    "\"2024-11-05\"],\"requested\":\"%s\"}",
		    requested[i]);
		cr_assert_str_eq(text(at(msg, "/error/data")), want);
		json_object_put(msg);
	}
}

Test(era, unsupported_version_echo_is_bounded)
{
	char *v = repeat("9", 5000), *line;
	struct mcp_conn c;
	json_object *msg;

	cr_assert(
	    asprintf(&line,
	             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":"
	             "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"%s\","
	             "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	             v) > 0);
	mcp_conn_init(&c, &cfg);
	msg = reply_of(&c, line);
	assert_error(msg, MCP_UNSUPPORTED_VERSION, "1");
	cr_assert_leq(strlen(str_at(msg, "/error/data/requested")), 100);
	cr_assert_gt(strlen(str_at(msg, "/error/data/requested")), 0);
	json_object_put(msg);
	free(line);
	free(v);
}

Test(era, modern_connection_requires_the_envelope)
{
	static const char *const lines[] = {
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":"
	    "{\"_meta\":{\"progressToken\":1}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server/discover\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"nope\"}",
	};
	struct mcp_conn c;
	size_t i;

	conn_modern(&c);
	for (i = 0; i < N_OF(lines); i++) {
		json_object *msg = reply_of(&c, lines[i]);

		assert_error(msg, JSONRPC_INVALID_PARAMS, "5");
		cr_assert(strstr(str_at(msg, "/error/message"),
		                 "Request is missing the required _meta envelope"),
		          "%s", text(msg));
		json_object_put(msg);
		cr_assert_eq(c.era, MCP_ERA_MODERN);
		cr_assert_str_eq(c.version, "");
	}
}

Test(era, modern_connection_checks_each_envelope)
{
	struct mcp_conn c;
	json_object *msg;

	conn_modern(&c);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":"
	                   "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	                   "\"io.modelcontextprotocol/clientCapabilities\":true}}}");
	assert_error(msg, JSONRPC_INVALID_PARAMS, "6");
	json_object_put(msg);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":"
	                   "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2027-01-01\","
	                   "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
	assert_error(msg, MCP_UNSUPPORTED_VERSION, "7");
	cr_assert_str_eq(str_at(msg, "/error/data/requested"), "2027-01-01");
	json_object_put(msg);
	msg = modern_reply(&c, "8", "tools/list", "");
	assert_modern_result(msg);
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_MODERN);
}

Test(era, legacy_connection_answers_server_discover_with_method_not_found)
{
	static const char *const lines[] = {
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"server/discover\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"server/discover\",\"params\":"
	    "{" ENVELOPE_2026 "}}",
	};
	size_t v, i;

	for (v = 0; v <= N_OF(all_versions); v++) {
		for (i = 0; i < N_OF(lines); i++) {
			struct mcp_conn c;
			json_object *msg;

			if (v < N_OF(all_versions)) {
				conn_at(&c, all_versions[v]);
			} else {
				mcp_conn_init(&c, &cfg);
				json_object_put(reply_of(
				    &c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"));
			}
			cr_assert_eq(c.era, MCP_ERA_LEGACY);
			msg = reply_of(&c, lines[i]);
			assert_error(msg, JSONRPC_METHOD_NOT_FOUND, "9");
			json_object_put(msg);
			cr_assert_eq(c.era, MCP_ERA_LEGACY);
		}
	}
}

Test(era, legacy_connection_ignores_modern_envelopes)
{
	struct mcp_conn c;
	json_object *msg;

	conn_at(&c, "2025-06-18");
	msg = modern_reply(&c, "3", "tools/list", "");
	assert_legacy_result(msg);
	cr_assert(has(msg, "/result/tools/0/outputSchema"));
	cr_assert_not(has(msg, "/result/tools/0/icons"), "2025-06-18 has no icons");
	json_object_put(msg);
	msg = modern_reply(&c, "4", "ping", "");
	cr_assert_str_eq(text(msg), "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}");
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_LEGACY);
}

Test(era, probe_then_initialize_falls_back_to_legacy)
{
	struct mcp_conn c;
	json_object *msg;

	mcp_conn_init(&c, &cfg);
	msg = modern_reply(&c, "\"probe\"", "server/discover", "");
	assert_modern_result(msg);
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_PROBE);
	/* A second probe changes nothing. */
	msg = modern_reply(&c, "\"probe2\"", "server/discover", "");
	assert_modern_result(msg);
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_PROBE);
	msg = initialize(&c, "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}");
	cr_assert_str_eq(str_at(msg, "/result/protocolVersion"), "2025-11-25");
	assert_legacy_result(msg);
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_LEGACY);
	msg = modern_reply(&c, "2", "server/discover", "");
	assert_error(msg, JSONRPC_METHOD_NOT_FOUND, "2");
	json_object_put(msg);
}

Test(era, probe_then_modern_request_pins_modern)
{
	struct mcp_conn c;
	json_object *msg;

	mcp_conn_init(&c, &cfg);
	msg = modern_reply(&c, "1", "server/discover", "");
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_PROBE);
	msg = modern_reply(&c, "2", "tools/list", "");
	assert_modern_result(msg);
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_MODERN);
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":"
	                   "{\"protocolVersion\":\"2025-11-25\"}}");
	assert_error(msg, JSONRPC_INVALID_PARAMS, "3");
	json_object_put(msg);
}

Test(era, notifications_are_accepted_in_both_eras)
{
	static const char cancel[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	                             "\"params\":{\"requestId\":\"r\",\"reason\":\"timeout\"}}";
	static const char initialized[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct mcp_events ev = {0};
	struct mcp_conn legacy, modern;

	conn_at(&legacy, "2025-11-25");
	conn_modern(&modern);
	handle(&legacy, cancel, &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CANCEL);
	cr_assert_str_eq(text(ev.ev[0].id), "\"r\"");
	handle(&modern, cancel, &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CANCEL);
	cr_assert_str_eq(text(ev.ev[0].id), "\"r\"");
	/* notifications/initialized means nothing without a handshake. */
	handle(&modern, initialized, &ev);
	cr_assert_eq(ev.n, 0);
	cr_assert_not(modern.initialized);
	cr_assert_eq(modern.era, MCP_ERA_MODERN);
	mcp_events_clear(&ev);
}

Test(era, batches_are_refused_in_the_modern_era)
{
	struct mcp_conn c;
	json_object *msg;

	conn_modern(&c);
	msg = reply_of(&c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
	                   "{" ENVELOPE_2026 "}}]");
	assert_error(msg, JSONRPC_INVALID_REQUEST, "null");
	json_object_put(msg);
}

/* ---- modern: results of the stateless era -------------------------------------------- */

Test(modern, discover_result_advertises_versions_capabilities_and_cache_hints)
{
	struct mcp_conn c;
	json_object *msg, *res;
	size_t i;

	mcp_conn_init(&c, &cfg);
	msg = reply_of(
	    &c, "{\"jsonrpc\":\"2.0\",\"id\":\"server-discover-probe-1\",\"method\":"
	        "\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	        "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientInfo\":{\"name\":"
	        "\"inspector-cli\",\"version\":\"2.12.0\"},\"io.modelcontextprotocol/"
	        "clientCapabilities\":{\"roots\":{\"listChanged\":true},\"extensions\":{\"io."
	        "modelcontextprotocol/tasks\":{},\"io.modelcontextprotocol/skills\":{}}},"
	        "\"io.modelcontextprotocol/logLevel\":\"debug\"}}}");
	cr_assert_str_eq(text(at(msg, "/id")), "\"server-discover-probe-1\"");
	assert_modern_result(msg);
	res = at(msg, "/result");
	cr_assert_eq(json_object_array_length(at(res, "/supportedVersions")), N_OF(all_supported));
	for (i = 0; i < N_OF(all_supported); i++)
		cr_assert_str_eq(json_object_get_string(
		                     json_object_array_get_idx(at(res, "/supportedVersions"), i)),
		                 all_supported[i]);
	cr_assert_str_eq(text(at(res, "/capabilities")), "{\"tools\":{\"listChanged\":false}}");
	cr_assert(json_object_is_type(at(res, "/ttlMs"), json_type_int));
	cr_assert_geq(json_object_get_int64(at(res, "/ttlMs")), 0);
	cr_assert(!strcmp(str_at(res, "/cacheScope"), "public") ||
	          !strcmp(str_at(res, "/cacheScope"), "private"));
	cr_assert(strstr(str_at(res, "/instructions"), "run_python"));
	cr_assert_not(has(res, "/protocolVersion"));
	json_object_put(msg);
}

Test(modern, every_result_carries_result_type_and_server_info)
{
	static const struct {
		const char *method;
		const char *members;
	} cases[] = {
	    {"server/discover", ""},
	    {"tools/list", ""},
	    {"tools/list", "\"cursor\":null"},
	    {"tools/call", "\"name\":\"run_python\",\"arguments\":{\"code\":5}"},
	    {"tools/call", "\"name\":\"run_python\""},
	};
	struct mcp_conn c;
	size_t i;

	conn_modern(&c);
	for (i = 0; i < N_OF(cases); i++) {
		json_object *msg = modern_reply(&c, "11", cases[i].method, cases[i].members);

		assert_modern_result(msg);
		json_object_put(msg);
	}
}

Test(modern, tools_list_has_cache_hints_and_every_tool_field)
{
	struct mcp_conn c, l;
	json_object *msg, *tool, *legacy;

	conn_modern(&c);
	msg = modern_reply(&c, "2", "tools/list", "");
	assert_modern_result(msg);
	cr_assert(json_object_is_type(at(msg, "/result/ttlMs"), json_type_int));
	cr_assert_geq(json_object_get_int64(at(msg, "/result/ttlMs")), 0);
	cr_assert(!strcmp(str_at(msg, "/result/cacheScope"), "public") ||
	          !strcmp(str_at(msg, "/result/cacheScope"), "private"));
	cr_assert_not(has(msg, "/result/nextCursor"));
	cr_assert_eq(json_object_array_length(at(msg, "/result/tools")), 1);
	tool = at(msg, "/result/tools/0");
	cr_assert_str_eq(str_at(tool, "/name"), "run_python");
	cr_assert_str_eq(str_at(tool, "/title"), "Run Python");
	cr_assert(strstr(str_at(tool, "/description"), "collections, datetime"));
	cr_assert_str_eq(str_at(tool, "/inputSchema/type"), "object");
	cr_assert_str_eq(str_at(tool, "/outputSchema/type"), "object");
	cr_assert(has(tool, "/annotations/readOnlyHint"));
	cr_assert(has(tool, "/icons/0/src"));
	/* The same entry as 2025-11-25's: the tool list does not vary by era. */
	conn_at(&l, "2025-11-25");
	legacy = tool_entry(&l);
	cr_assert(json_object_equal(legacy, tool));
	json_object_put(legacy);
	json_object_put(msg);
}

Test(modern, initialize_never_answers_2026_07_28)
{
	static const char *const params[] = {
	    "{\"protocolVersion\":\"2026-07-28\"}",
	    "{\"protocolVersion\":\"2026-07-28\",\"capabilities\":{}," ENVELOPE_2026 "}",
	    "{\"protocolVersion\":\"2026-07-28\",\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2026-07-28\"}}",
	    "{\"protocolVersion\":\"2099-01-01\"}",
	    "{" ENVELOPE_2026 "}",
	};
	size_t i, start;

	for (start = 0; start < 3; start++) {
		for (i = 0; i < N_OF(params); i++) {
			struct mcp_conn c;
			json_object *msg;

			if (start == 0)
				mcp_conn_init(&c, &cfg);
			else if (start == 1)
				conn_at(&c, "2025-11-25");
			else
				conn_modern(&c);
			msg = initialize(&c, params[i]);
			if (has(msg, "/result"))
				cr_assert_str_eq(str_at(msg, "/result/protocolVersion"),
				                 "2025-11-25", "%s", text(msg));
			else
				cr_assert(has(msg, "/error/code"));
			cr_assert(!strstr(text(msg), "\"protocolVersion\":\"2026-07-28\""), "%s",
			          text(msg));
			cr_assert_str_neq(c.version, "2026-07-28");
			json_object_put(msg);
		}
	}
}

Test(modern, ping_and_set_level_are_not_modern_methods)
{
	static const char *const methods[] = {"ping", "logging/setLevel", "initialize",
	                                      "notifications/initialized", "resources/list"};
	struct mcp_conn c;
	size_t i;

	conn_modern(&c);
	for (i = 0; i < N_OF(methods); i++) {
		json_object *msg =
		    modern_reply(&c, "12", methods[i], i == 1 ? "\"level\":\"debug\"" : "");

		assert_error(msg, JSONRPC_METHOD_NOT_FOUND, "12");
		json_object_put(msg);
	}
	cr_assert_eq(c.log_level, 0);
}

Test(modern, tools_call_carries_the_request_context_to_its_response)
{
	struct mcp_events ev = {0};
	struct run_outcome o;
	struct mcp_conn c;
	json_object *msg;
	char line[1024];

	conn_modern(&c);
	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":\"m1\",\"method\":\"tools/call\",\"params\":"
	         "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1+1\"},\"_meta\":"
	         "{\"progressToken\":\"p\"," META_2026_MEMBERS "}}}");
	handle(&c, line, &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
	cr_assert_str_eq(ev.ev[0].args.code, "1+1");
	cr_assert_str_eq(text(ev.ev[0].progress_token), "\"p\"");
	cr_assert(ev.ev[0].args.ctx.modern);
	cr_assert_str_eq(ev.ev[0].args.ctx.version, "2026-07-28");

	outcome_fill(&o, RUN_OK, "", NULL, "2");
	o.result = json_object_new_int(2);
	msg = mcp_tool_response(&c, &ev.ev[0].args.ctx, ev.ev[0].id, &o);
	cr_assert_str_eq(text(at(msg, "/id")), "\"m1\"");
	assert_modern_result(msg);
	assert_valid_structured(msg);
	cr_assert_eq(json_object_get_int(at(msg, "/result/structuredContent/result")), 2);
	cr_assert_not(json_object_get_boolean(at(msg, "/result/isError")));
	cr_assert_str_eq(str_at(msg, "/result/content/0/text"), "Result: 2");
	json_object_put(msg);
	run_outcome_clear(&o);

	/* The context is a copy: the response does not depend on the connection any more. */
	outcome_fill(&o, RUN_TIMEOUT, "x", NULL, NULL);
	msg = mcp_tool_response(&c, &ev.ev[0].args.ctx, ev.ev[0].id, &o);
	assert_modern_result(msg);
	assert_valid_structured(msg);
	cr_assert(json_object_get_boolean(at(msg, "/result/isError")));
	json_object_put(msg);
	run_outcome_clear(&o);
	mcp_events_clear(&ev);
}

Test(modern, legacy_call_context_keeps_the_negotiated_version)
{
	size_t v;

	for (v = 0; v < N_OF(all_versions); v++) {
		struct mcp_events ev = {0};
		struct run_outcome o;
		struct mcp_conn c;
		json_object *msg;

		conn_at(&c, all_versions[v]);
		handle(&c,
		       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		       "{\"name\":\"run_python\",\"arguments\":{\"code\":\"1\"}}}",
		       &ev);
		cr_assert_eq(ev.ev[0].kind, MCP_EV_CALL);
		cr_assert_not(ev.ev[0].args.ctx.modern);
		cr_assert_str_eq(ev.ev[0].args.ctx.version, all_versions[v]);
		/* A renegotiation while the call runs does not change its response's shape. */
		json_object_put(initialize(&c, "{\"protocolVersion\":\"2024-11-05\"}"));
		outcome_fill(&o, RUN_OK, "hi\n", NULL, NULL);
		msg = mcp_tool_response(&c, &ev.ev[0].args.ctx, ev.ev[0].id, &o);
		assert_legacy_result(msg);
		cr_assert_eq(has(msg, "/result/structuredContent"),
		             strcmp(all_versions[v], "2025-06-18") >= 0, "%s", all_versions[v]);
		json_object_put(msg);
		run_outcome_clear(&o);
		mcp_events_clear(&ev);
	}
}

Test(modern, large_response_stays_under_budget_and_keeps_its_meta)
{
	struct mcp_request_ctx ctx = {.version = "2026-07-28", .modern = 1};
	char *big = repeat("\x01x", 400000);
	json_object *id = json_object_new_int(1), *msg;
	struct run_outcome o;
	struct mcp_conn c;

	conn_modern(&c);
	outcome_fill(&o, RUN_OK, big, big, "1");
	msg = mcp_tool_response(&c, &ctx, id, &o);
	assert_bounded(msg);
	assert_modern_result(msg);
	assert_valid_structured(msg);
	cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(big);
}

/* ---- logging: logging/setLevel and notifications/message (legacy era) ---------------- */

static const char *const levels[] = {"debug", "info",     "notice", "warning",
                                     "error", "critical", "alert",  "emergency"};

static json_object *set_level(struct mcp_conn *c, const char *level_json)
{
	char line[256];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"logging/setLevel\",\"params\":"
	         "{\"level\":%s}}",
	         level_json);
	return reply_of(c, line);
}

Test(logging, set_level_takes_rfc5424_levels)
{
	size_t i;

	for (i = 0; i < N_OF(levels); i++) {
		struct mcp_conn c;
		json_object *msg;
		char q[32];

		conn_at(&c, all_versions[i % N_OF(all_versions)]);
		snprintf(q, sizeof(q), "\"%s\"", levels[i]);
		msg = set_level(&c, q);
		cr_assert_str_eq(text(msg), "{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"result\":{}}");
		cr_assert_eq(c.log_level, (int)i + 1);
		json_object_put(msg);
	}
}

Test(logging, set_level_refuses_other_levels)
{
	static const char *const bad[] = {
	    "\"warn\"", "\"DEBUG\"",  "\"\"", "\"debug \"", "\"info\\u0000x\"", "5",
	    "null",     "[\"info\"]", "{}",   "\"trace\"",  "\"fatal\""};
	struct mcp_conn c;
	json_object *msg;
	size_t i;

	conn_at(&c, "2025-11-25");
	json_object_put(set_level(&c, "\"error\""));
	for (i = 0; i < N_OF(bad); i++) {
		msg = set_level(&c, bad[i]);
		assert_error(msg, JSONRPC_INVALID_PARAMS, "\"l\"");
		json_object_put(msg);
		cr_assert_eq(c.log_level, 5, "%s changed the level", bad[i]);
	}
	msg = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\"}");
	assert_error(msg, JSONRPC_INVALID_PARAMS, "1");
	json_object_put(msg);
}

Test(logging, notification_needs_a_level_at_or_below_its_own)
{
	size_t set, lv;

	for (set = 0; set < N_OF(levels); set++) {
		struct mcp_conn c;
		char q[32];

		conn_at(&c, "2025-06-18");
		snprintf(q, sizeof(q), "\"%s\"", levels[set]);
		json_object_put(set_level(&c, q));
		for (lv = 0; lv < N_OF(levels); lv++) {
			json_object *n = mcp_log_notification(&c, levels[lv], "safepy", "event");

			cr_assert_eq(n != NULL, lv >= set, "level %s set, %s sent: %p", levels[set],
			             levels[lv], (void *)n);
			if (n)
				cr_assert_str_eq(str_at(n, "/params/level"), levels[lv]);
			json_object_put(n);
		}
	}
}

Test(logging, notification_shape)
{
	struct mcp_conn c;
	json_object *n;

	conn_at(&c, "2025-11-25");
	json_object_put(set_level(&c, "\"info\""));
	n = mcp_log_notification(&c, "warning", "safepy", "worker 12 killed after the timeout");
	cr_assert_str_eq(wire(n), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	                          "\"params\":{\"level\":\"warning\",\"logger\":\"safepy\","
	                          "\"data\":\"worker 12 killed after the timeout\"}}");
	json_object_put(n);
	n = mcp_log_notification(&c, "error", NULL, "x");
	cr_assert_str_eq(wire(n), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	                          "\"params\":{\"level\":\"error\",\"data\":\"x\"}}");
	cr_assert_not(has(n, "/id"));
	json_object_put(n);
}

/* A log line may be cut inside a character, or name a file by its bytes: the notification's
 * text is valid UTF-8 whatever it was given (each byte that begins no character is U+FFFD). */
Test(logging, notification_text_is_valid_utf8)
{
	struct mcp_conn c;
	json_object *n;

	conn_at(&c, "2025-11-25");
	json_object_put(set_level(&c, "\"info\""));
	n = mcp_log_notification(&c, "info", "safepy",
	                         "call \"\xc3\xa9\xc3\": ok \xff\xfe\xe2\x82");
	cr_assert_str_eq(json_object_get_string(
	                     json_object_object_get(json_object_object_get(n, "params"), "data")),
	                 "call \"\xc3\xa9\xef\xbf\xbd\": ok \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                 "\xef\xbf\xbd");
	json_object_put(n);
}

Test(logging, notification_is_gated_by_the_connection)
{
	struct mcp_conn c;
	json_object *msg, *n;

	/* No level set. */
	conn_at(&c, "2025-11-25");
	cr_assert_null(mcp_log_notification(&c, "emergency", "safepy", "x"));
	/* Unknown level. */
	json_object_put(set_level(&c, "\"debug\""));
	cr_assert_null(mcp_log_notification(&c, "fatal", "safepy", "x"));
	cr_assert_null(mcp_log_notification(&c, "", "safepy", "x"));
	n = mcp_log_notification(&c, "debug", "safepy", "x");
	cr_assert_not_null(n);
	json_object_put(n);
	/* A new initialize is a new session: the level starts over. */
	json_object_put(initialize(&c, "{\"protocolVersion\":\"2025-11-25\"}"));
	cr_assert_eq(c.log_level, 0);
	cr_assert_null(mcp_log_notification(&c, "emergency", "safepy", "x"));

	/* A level set before any initialize: nothing until the handshake. */
	mcp_conn_init(&c, &cfg);
	msg = set_level(&c, "\"debug\"");
	cr_assert(has(msg, "/result"));
	json_object_put(msg);
	cr_assert_eq(c.era, MCP_ERA_LEGACY);
	cr_assert_null(mcp_log_notification(&c, "error", "safepy", "x"));

	/* Never in the modern era, whatever a request's _meta asked for. */
	conn_modern(&c);
	msg = modern_reply(&c, "1", "tools/list", "");
	json_object_put(msg);
	cr_assert_null(mcp_log_notification(&c, "emergency", "safepy", "x"));
}

/* ---- progress: notifications/progress ------------------------------------------------ */

Test(progress, notification_shape)
{
	static const struct {
		const char *token;
		double progress;
		const char *message;
		const char *want;
	} cases[] = {
	    {"2", 1, "1 s elapsed",
	     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
	     "{\"progressToken\":2,\"progress\":1,\"message\":\"1 s elapsed\"}}"},
	    {"\"abc\"", 2.5, NULL,
	     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
	     "{\"progressToken\":\"abc\",\"progress\":2.5}}"},
	    {"0", 0, "",
	     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
	     "{\"progressToken\":0,\"progress\":0,\"message\":\"\"}}"},
	    {"123456789012", 30.25, "running \"x\"",
	     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
	     "{\"progressToken\":123456789012,\"progress\":30.25,\"message\":\"running "
	     "\\\"x\\\"\"}}"},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		json_object *token = json_tokener_parse(cases[i].token);
		json_object *n =
		    mcp_progress_notification(token, cases[i].progress, cases[i].message);

		cr_assert_not_null(n);
		cr_assert_str_eq(wire(n), cases[i].want);
		cr_assert_not(has(n, "/params/total"));
		cr_assert_not(has(n, "/id"));
		/* The token is borrowed, and comes back with its type. */
		cr_assert(json_object_equal(at(n, "/params/progressToken"), token));
		json_object_put(n);
		json_object_put(token);
	}
}

Test(progress, notification_refuses_bad_tokens_and_values)
{
	json_object *tokens[] = {NULL, json_object_new_double(1.5), json_object_new_boolean(1),
	                         json_object_new_object(), json_object_new_array()};
	json_object *ok = json_object_new_string("t"), *n;
	size_t i;

	for (i = 0; i < N_OF(tokens); i++) {
		cr_assert_null(mcp_progress_notification(tokens[i], 1, "m"));
		json_object_put(tokens[i]);
	}
	cr_assert_null(mcp_progress_notification(ok, NAN, NULL));
	cr_assert_null(mcp_progress_notification(ok, INFINITY, NULL));
	n = mcp_progress_notification(ok, 1e300, NULL);
	cr_assert_not_null(n);
	cr_assert(json_object_is_type(at(n, "/params/progress"), json_type_double));
	json_object_put(n);
	json_object_put(ok);
}

/* ---- icons --------------------------------------------------------------------------- */

/* Strict RFC 4648 base64 (padded, no whitespace) into out; its length, or -1 if invalid. */
static long b64_decode(const char *in, unsigned char *out, size_t cap)
{
	static const char digits[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), i, o = 0;

	if (n % 4 != 0)
		return -1;
	for (i = 0; i < n; i += 4) {
		unsigned v = 0, pad = 0;

		for (size_t k = 0; k < 4; k++) {
			const char *d = in[i + k] ? strchr(digits, in[i + k]) : NULL;

			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				pad++;
				v <<= 6;
				continue;
			}
			if (!d || pad)
				return -1;
			v = v << 6 | (unsigned)(d - digits);
		}
		if (o + 3 - pad > cap)
			return -1;
		out[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)v;
	}
	return (long)o;
}

Test(tool, icons_only_from_2025_11_25)
{
	static const struct {
		const char *version; /* NULL: before initialize */
		int icons;
	} cases[] = {
	    {"2024-11-05", 0}, {"2025-03-26", 0}, {"2025-06-18", 0}, {"2025-11-25", 1}, {NULL, 1},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		struct mcp_conn c;
		json_object *tool;

		conn_at(&c, cases[i].version);
		tool = tool_entry(&c);
		cr_assert_eq(has(tool, "/icons"), cases[i].icons, "icons, %s",
		             cases[i].version ? cases[i].version : "(none)");
		json_object_put(tool);
	}
}

Test(tool, icon_is_a_data_uri_of_an_svg)
{
	static const char prefix[] = "data:image/svg+xml;base64,";
	unsigned char svg[4096];
	json_object *msg, *tool;
	struct mcp_conn c;
	const char *src;
	long n;

	conn_modern(&c);
	msg = modern_reply(&c, "1", "tools/list", "");
	tool = json_object_get(at(msg, "/result/tools/0"));
	json_object_put(msg);
	cr_assert_eq(json_object_array_length(at(tool, "/icons")), 1);
	cr_assert_str_eq(str_at(tool, "/icons/0/mimeType"), "image/svg+xml");
	cr_assert_str_eq(text(at(tool, "/icons/0/sizes")), "[\"any\"]");
	cr_assert_not(has(tool, "/icons/0/theme"));
	src = str_at(tool, "/icons/0/src");
	cr_assert_eq(strncmp(src, prefix, sizeof(prefix) - 1), 0, "%s", src);
	n = b64_decode(src + sizeof(prefix) - 1, svg, sizeof(svg) - 1);
	cr_assert_gt(n, 0, "the icon is not valid base64");
	svg[n] = '\0';
	cr_assert_eq(strlen((char *)svg), (size_t)n, "NUL inside the SVG");
	cr_assert(valid_utf8((char *)svg, (size_t)n));
	cr_assert_eq(strncmp((char *)svg, "<svg ", 5), 0, "%s", svg);
	cr_assert(strstr((char *)svg, "xmlns=\"http://www.w3.org/2000/svg\""), "%s", svg);
	cr_assert(strstr((char *)svg, "viewBox="), "%s", svg);
	while (n > 0 && strchr(" \t\r\n", svg[n - 1]))
		svg[--n] = '\0';
	cr_assert_str_eq((char *)svg + n - 6, "</svg>");
	/* Nothing active or external in it. */
	cr_assert_null(strstr((char *)svg, "<script"));
	cr_assert_null(strstr((char *)svg, "href"));
	cr_assert_null(strstr((char *)svg, " on"), "an event attribute? %s", svg);
	json_object_put(tool);
}

#define ROLLBACK_NOTE "The session is unchanged: its state is as it was before this call."

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

Test(tool, rollback_note_appears_once_in_the_text_and_ends_the_message)
{
	static const struct {
		enum run_status status;
		const char *type, *message, *traceback; /* NULL: none */
		const char *want_message;               /* structuredContent.error.message */
	} cases[] = {
	    {RUN_TIMEOUT, "TimeoutError", "stopped after 2 s", "",
	     "stopped after 2 s. " TIMEOUT_NOTE " " ROLLBACK_NOTE},
	    {RUN_MEMORY_LIMIT, "MemoryError", "out of memory.", "Traceback ...\nMemoryError\n",
	     "out of memory. The sandbox allows 512 MiB of address space per call" MEMORY_NOTE
	     " " ROLLBACK_NOTE},
	    {RUN_CRASHED, "Crash", "killed by SIGSEGV!", NULL, "killed by SIGSEGV! " ROLLBACK_NOTE},
	    {RUN_SANDBOX_VIOLATION, "SandboxViolation", "", "", ROLLBACK_NOTE},
	    {RUN_OUTPUT_LIMIT, NULL, NULL, NULL, ROLLBACK_NOTE},
	};
	static const char *const versions[] = {"2024-11-05", "2025-06-18", "2025-11-25"};
	json_object *id = json_object_new_int(7);

	for (size_t v = 0; v < N_OF(versions); v++)
		for (size_t i = 0; i < N_OF(cases); i++) {
			struct run_outcome o;
			struct mcp_conn c;
			json_object *msg;
			const char *t;

			conn_at(&c, versions[v]);
			run_outcome_init(&o);
			o.status = cases[i].status;
			o.session = strdup("0123456789abcdef0123456789abcdef");
			o.rolled_back = 1;
			set_text(&o.logs, "partial output\n");
			outcome_error(&o, cases[i].type, cases[i].message, cases[i].traceback);
			msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
			t = str_at(msg, "/result/content/0/text");
			cr_assert_eq(count_of(t, ROLLBACK_NOTE), 1, "%s %s: %s", versions[v],
			             run_status_name(o.status), t);
			if (strcmp(versions[v], "2025-06-18") >= 0) {
				cr_assert_str_eq(
				    str_at(msg, "/result/structuredContent/error/message"),
				    cases[i].want_message);
				assert_valid_structured(msg);
			}
			/* Not rolled back: no note at all, whatever the status and session. */
			o.rolled_back = 0;
			json_object_put(msg);
			msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
			cr_assert_null(strstr(text(msg), "The session is unchanged"), "%s",
			               text(msg));
			json_object_put(msg);
			run_outcome_clear(&o);
		}
	json_object_put(id);
}

/* A file of the source tree, malloc'd and NUL-terminated, its length in *len. */
static char *source_file(const char *path, size_t *len)
{
	char full[512], *buf;
	FILE *f;
	long n;

	snprintf(full, sizeof(full), "%s/../%s", SAFEPY_TEST_DIR, path);
	f = fopen(full, "rb");
	cr_assert_not_null(f, "cannot open %s", full);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	cr_assert_geq(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

Test(tool, icon_is_protocol_icon_svg_as_it_is)
{
	static const char prefix[] = "data:image/svg+xml;base64,";
	unsigned char svg[4096];
	struct mcp_conn c;
	json_object *tool;
	const char *src;
	size_t len;
	char *file = source_file("protocol/icon.svg", &len);
	long n;

	conn_at(&c, "2025-11-25");
	tool = tool_entry(&c);
	src = str_at(tool, "/icons/0/src");
	cr_assert_eq(strncmp(src, prefix, sizeof(prefix) - 1), 0, "%s", src);
	n = b64_decode(src + sizeof(prefix) - 1, svg, sizeof(svg));
	cr_assert_eq(n, (long)len, "the icon has %ld bytes, protocol/icon.svg %zu", n, len);
	cr_assert_eq(memcmp(svg, file, len), 0, "the icon is not protocol/icon.svg");
	json_object_put(tool);
	free(file);
}

/* A JSON file of the source tree, parsed. */
static json_object *source_json(const char *path)
{
	size_t len;
	char *buf = source_file(path, &len);
	json_object *o = proto_parse_json(buf, len);

	cr_assert_not_null(o, "%s does not parse", path);
	free(buf);
	return o;
}

Test(tool, schemas_are_the_files_with_the_settings_filled_in)
{
	static const char *const output_required[] = {
	    "result", "result_repr", "logs",      "stdout",      "stderr",  "error",
	    "images", "status",      "truncated", "duration_ms", "session",
	};
	json_object *input = source_json("protocol/schemas/run_python.input.json");
	json_object *output = source_json("protocol/schemas/run_python.output.json");
	json_object *tool, *sent, *timeout;
	struct mcp_conn c;

	conn_at(&c, "2025-11-25");
	tool = tool_entry(&c);
	/* What the server settings decide: the timeout's bound, and its description. */
	sent = at(tool, "/inputSchema");
	timeout = at(sent, "/properties/timeout_seconds");
	cr_assert_eq(json_object_get_double(at(timeout, "/maximum")), cfg.max_timeout_s);
	cr_assert(strstr(str_at(timeout, "/description"), "at most 30,"), "%s", text(timeout));
	json_object_object_del(timeout, "maximum");
	json_object_object_del(timeout, "description");
	cr_assert(json_object_equal(sent, input), "inputSchema %s is not the file's %s", text(sent),
	          text(input));
	cr_assert(json_object_equal(at(tool, "/outputSchema"), output),
	          "outputSchema %s is not the file's %s", text(at(tool, "/outputSchema")),
	          text(output));
	cr_assert_str_eq(text(at(input, "/required")), "[\"code\"]");
	cr_assert_eq(json_object_array_length(at(output, "/required")), N_OF(output_required));
	for (size_t i = 0; i < N_OF(output_required); i++)
		cr_assert_str_eq(
		    json_object_get_string(json_object_array_get_idx(at(output, "/required"), i)),
		    output_required[i]);
	cr_assert_str_eq(text(at(output, "/properties/error/required")),
	                 "[\"type\",\"message\",\"traceback\"]");
	json_object_put(tool);
	json_object_put(input);
	json_object_put(output);
}

Test(tool, session_rollback_and_handle_reach_the_text)
{
	static const struct {
		const char *version;
		enum run_status status;
		int says_unchanged, shows_handle;
	} cases[] = {
	    {"2025-11-25", RUN_TIMEOUT, 1, 0}, {"2025-11-25", RUN_MEMORY_LIMIT, 1, 0},
	    {"2025-11-25", RUN_ERROR, 0, 0},   {"2025-11-25", RUN_OK, 0, 0},
	    {"2025-03-26", RUN_OK, 0, 1},      {"2024-11-05", RUN_CRASHED, 1, 1},
	};
	json_object *id = json_object_new_int(7);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mcp_conn c;
		struct run_outcome o;
		json_object *msg;
		const char *text;

		conn_at(&c, cases[i].version);
		run_outcome_init(&o);
		o.status = cases[i].status;
		o.session = strdup("0123456789abcdef0123456789abcdef");
		o.rolled_back = cases[i].says_unchanged;
		if (o.status != RUN_OK) {
			set_text(&o.error_type, "TimeoutError");
			set_text(&o.error_message, "stopped");
		} else {
			set_text(&o.result_repr, "1");
		}
		msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
		text = str_at(msg, "/result/content/0/text");
		cr_assert_eq(strstr(text, "The session is unchanged") != NULL,
		             cases[i].says_unchanged, "%s %s: %s", cases[i].version,
		             run_status_name(o.status), text);
		cr_assert_eq(strstr(text, "[session 0123456789abcdef0123456789abcdef]") != NULL,
		             cases[i].shows_handle, "%s %s: %s", cases[i].version,
		             run_status_name(o.status), text);
		json_object_put(msg);
		run_outcome_clear(&o);
	}
	json_object_put(id);
}

/* ---- text: string buffer and head-and-tail cut --------------------------------------- */

/* JSON-escaped size of s as json-c prints it (quotes excluded). */
static size_t json_len(const char *s)
{
	json_object *o = json_object_new_string(s);
	size_t len;

	json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	json_object_put(o);
	return len - 2;
}

/* Check a cut of orig: valid UTF-8, within max as m measures it, its head a prefix and its
 * tail a suffix of orig, and the marker's count exactly the bytes that went. Returns the
 * count, or SIZE_MAX when there is no marker (then the whole text is a prefix). */
static size_t assert_cut(const char *orig, const char *cut, size_t max, enum text_measure m)
{
	size_t n = strlen(orig), len = strlen(cut), count, head, tail;
	const char *mark, *end;

	cr_assert(valid_utf8(cut, len), "cut is not valid UTF-8");
	cr_assert_leq(m == TEXT_JSON ? json_len(cut) : len, max, "cut of %zu bytes over %zu", n,
	              max);
	mark = strstr(cut, "\n... [");
	if (!mark) {
		cr_assert(!memcmp(cut, orig, len), "a cut without marker is not a prefix");
		return SIZE_MAX;
	}
	cr_assert_eq(sscanf(mark, "\n... [%zu bytes cut] ...\n", &count), 1, "marker: %s", mark);
	end = strstr(mark, " bytes cut] ...\n");
	cr_assert_not_null(end);
	end += strlen(" bytes cut] ...\n");
	head = (size_t)(mark - cut);
	tail = strlen(end);
	cr_assert(!memcmp(cut, orig, head), "head is not the start of the text");
	cr_assert(!memcmp(end, orig + n - tail, tail), "tail is not the end of the text");
	cr_assert_eq(head + count + tail, n, "%zu + %zu + %zu != %zu", head, count, tail, n);
	return count;
}

/* text_cut as a C string (malloc'd): these inputs hold no NUL. */
static char *cut(const char *s, size_t n, size_t max, enum text_measure m)
{
	struct text t = {0};

	cr_assert_eq(text_cut(s, n, max, m, &t), 0);
	cr_assert_eq(strlen(t.s), t.len);
	return t.s;
}

static char *join_cut(const char *head, size_t head_n, uint64_t gap, const char *tail,
                      size_t tail_n)
{
	struct text t = {0};

	cr_assert_eq(text_join_cut(head, head_n, gap, tail, tail_n, &t), 0);
	cr_assert_eq(strlen(t.s), t.len);
	return t.s;
}

Test(text, cut_leaves_text_that_fits_whole)
{
	const char *s = "h\xc3\xa9llo, w\xe2\x82\xacrld";
	size_t n = strlen(s);
	char *out;

	out = cut(s, n, n, TEXT_BYTES); /* exactly the limit */
	cr_assert_str_eq(out, s);
	free(out);
	out = cut(s, n, n + 100, TEXT_BYTES);
	cr_assert_str_eq(out, s);
	free(out);
	out = cut("", 0, 0, TEXT_BYTES);
	cr_assert_str_eq(out, "");
	free(out);
	out = cut("a\"b", 3, 4, TEXT_JSON); /* the quote's escape fits exactly */
	cr_assert_str_eq(out, "a\"b");
	free(out);
}

Test(text, cut_keeps_ascii_head_and_tail_within_the_limit)
{
	char *orig = malloc(1001);

	for (size_t i = 0; i < 1000; i++)
		orig[i] = (char)('a' + i % 26);
	orig[1000] = '\0';
	for (size_t max = 28; max < 1000; max += 7) {
		char *out = cut(orig, 1000, max, TEXT_BYTES);
		size_t count = assert_cut(orig, out, max, TEXT_BYTES);

		cr_assert_neq(count, SIZE_MAX, "no marker at max %zu: %s", max, out);
		free(out);
	}
	/* One byte over the limit: the cut still says what went. */
	{
		char *out = cut(orig, 1000, 999, TEXT_BYTES);
		cr_assert_geq(assert_cut(orig, out, 999, TEXT_BYTES), 1);
		cr_assert_gt(strlen(out), 900);
		free(out);
	}
	free(orig);
}

Test(text, cut_never_splits_a_character)
{
	static const char *const units[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
	                                    "a\xe2\x82\xac", "\xf0\x9f\x98\x80\n\x01\""};

	for (size_t u = 0; u < N_OF(units); u++) {
		char *orig = repeat(units[u], 200);
		size_t n = strlen(orig);

		for (size_t max = 0; max < n; max++) {
			for (int m = TEXT_BYTES; m <= TEXT_JSON; m++) {
				char *out = cut(orig, n, max, (enum text_measure)m);
				assert_cut(orig, out, max, (enum text_measure)m);
				free(out);
			}
		}
		free(orig);
	}
}

Test(text, tiny_limit_keeps_only_the_head_that_fits)
{
	const char *s = "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
	                "0123456789012345678901234567890123456789012345678901234567890123456789";
	size_t n = strlen(s);

	for (size_t max = 0; max < 20; max++) {
		char *out = cut(s, n, max, TEXT_BYTES);

		cr_assert_eq(assert_cut(s, out, max, TEXT_BYTES), SIZE_MAX, "marker at max %zu",
		             max);
		cr_assert_eq(strlen(out), max / 3 * 3 < 9 ? max / 3 * 3 : max, "max %zu: %s", max,
		             out);
		free(out);
	}
}

Test(text, json_measure_counts_escapes)
{
	char *ctl = repeat("\x01\x02\n/x", 50000);
	size_t n = strlen(ctl);
	char *out = cut(ctl, n, 100000, TEXT_JSON);

	assert_cut(ctl, out, 100000, TEXT_JSON);
	cr_assert_gt(json_len(out), 99000, "cut far more than needed: %zu", json_len(out));
	free(out);
	free(ctl);
}

Test(text, join_drops_partial_characters_and_counts_them)
{
	/* The head ends inside a euro sign, the tail starts inside another. */
	const char head[] = "ab\xe2\x82", tail[] = "\x82\xac"
	                                           "cd";
	char *out = join_cut(head, strlen(head), 10, tail, strlen(tail));

	cr_assert_str_eq(out, "ab\n... [14 bytes cut] ...\ncd");
	free(out);
	out = join_cut("", 0, 5, "xyz", 3);
	cr_assert_str_eq(out, "\n... [5 bytes cut] ...\nxyz");
	free(out);
	out = join_cut("\xf0\x9f\x98\x80", 4, 0, "", 0); /* a whole character stays */
	cr_assert_str_eq(out, "\xf0\x9f\x98\x80\n... [0 bytes cut] ...\n");
	free(out);
}

/* The marker is a line of its own: a head that ends inside a line ends at that line's start
 * and a tail that starts inside one at the next line, when the edge is near; a long line is
 * cut where it is. What went is counted either way. */
Test(text, a_cut_ends_and_starts_at_a_line_s_edge_when_one_is_near)
{
	char *orig = repeat("line 1234: xxxxxxxxxx\n", 400), *out; /* 22 bytes a line */
	size_t n = strlen(orig), count;

	out = cut(orig, n, 1000, TEXT_BYTES);
	count = assert_cut(orig, out, 1000, TEXT_BYTES);
	cr_assert_neq(count, SIZE_MAX, "%s", out);
	cr_assert(strstr(out, "xxxxxxxxxx\n... ["), "head ends inside a line: %s", out);
	cr_assert(strstr(out, "cut] ...\nline 1234: "), "tail starts inside a line: %s", out);
	free(out);
	out = join_cut("ab\ncd", 5, 3, "ef\ngh", 5);
	cr_assert_str_eq(out, "ab\n... [9 bytes cut] ...\ngh");
	free(out);
	free(orig);
	orig = repeat("y", 4000); /* one long line */
	out = cut(orig, 4000, 1000, TEXT_BYTES);
	cr_assert_gt(strspn(out, "y"), 400, "%s", out);
	free(out);
	free(orig);
}

Test(text, cut_and_join_keep_nul_bytes)
{
	static const char s[] = "\0\0ab\0cd\0\0";
	const size_t n = sizeof(s) - 1;
	struct text t = {0};

	cr_assert_eq(text_cut(s, n, n, TEXT_BYTES, &t), 0);
	cr_assert_eq(t.len, n);
	cr_assert_eq(memcmp(t.s, s, n), 0);
	/* Measured as JSON each NUL is \u0000: the same text no longer fits. */
	cr_assert_eq(text_cut(s, n, n, TEXT_JSON, &t), 0);
	cr_assert_lt(t.len, n);
	cr_assert_eq(t.s[0], '\0', "the head starts with the first NUL");
	cr_assert_eq(text_join_cut(s, 3, 7, s + n - 2, 2, &t), 0);
	cr_assert_eq(t.len, 3 + strlen("\n... [7 bytes cut] ...\n") + 2);
	cr_assert_eq(memcmp(t.s, "\0\0a\n... [7 bytes cut] ...\n\0\0", t.len), 0);
	cr_assert_eq(t.s[t.len], '\0');
	text_clear(&t);
	cr_assert_null(t.s);
	cr_assert_eq(t.len, 0);
}

Test(text, text_holds_any_bytes_with_their_length)
{
	struct text t = {0};
	struct strbuf b = {0};

	cr_assert_eq(text_set(&t, "x\0y", 3), 0);
	cr_assert_eq(t.len, 3);
	cr_assert_eq(t.s[3], '\0');
	sb_text(&b, &t);
	sb_text(&b, &(struct text){0}); /* no text adds nothing */
	sb_add(&b, "\0", 1);
	cr_assert_eq(sb_take_text(&b, &t), 0);
	cr_assert_eq(t.len, 4);
	cr_assert_eq(memcmp(t.s, "x\0y\0", 5), 0);
	cr_assert_eq(text_printf(&t, "%d-%s", 7, "z"), 0);
	cr_assert_str_eq(t.s, "7-z");
	cr_assert_eq(t.len, 3);
	sb_add(&b, "x", SIZE_MAX);
	cr_assert_eq(sb_take_text(&b, &t), -ENOMEM);
	cr_assert_str_eq(t.s, "7-z", "a failed take leaves the text as it was");
	text_clear(&t);
}

Test(text, strbuf_builds_text)
{
	struct strbuf b = {0};
	char long_arg[1000], *s;

	s = sb_take(&b);
	cr_assert_str_eq(s, "", "an empty buffer gives the empty string");
	free(s);
	memset(long_arg, 'z', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	sb_newline(&b); /* nothing to end */
	sb_str(&b, "one");
	sb_newline(&b);
	sb_newline(&b);
	sb_add(&b, "two\0", 3);
	sb_printf(&b, " %d [%s]", 3, long_arg); /* longer than any scratch buffer */
	cr_assert_eq(b.len, strlen(b.s));
	s = sb_take(&b);
	cr_assert_eq(strncmp(s, "one\ntwo 3 [zzz", 14), 0, "%.20s", s);
	cr_assert_eq(strlen(s), 11 + 999 + 1);
	cr_assert_eq(s[strlen(s) - 1], ']');
	cr_assert_null(b.s);
	cr_assert_eq(b.len, 0);
	free(s);
}

Test(text, strbuf_remembers_a_failed_allocation)
{
	struct strbuf b = {0};
	char *s;

	sb_str(&b, "kept until the failure");
	sb_add(&b, "x", SIZE_MAX); /* cannot be allocated */
	cr_assert(b.failed);
	sb_str(&b, "ignored");
	sb_printf(&b, "%s", "ignored");
	cr_assert_null(sb_take(&b), "a failed buffer gives NULL");
	cr_assert_not(b.failed, "take empties the buffer");
	cr_assert_null(b.s);
	sb_str(&b, "again");
	s = sb_take(&b);
	cr_assert_str_eq(s, "again");
	free(s);
}

/* ---- the workspace ---------------------------------------------------------------------- */

static const struct mcp_server_config ws_cfg_ro = {
    .version = "9.8.7",
    .max_timeout_s = 30,
    .imports = imports,
    .n_imports = N_OF(imports),
    .workspace = "/home/u/data set",
};

static const struct mcp_server_config ws_cfg_rw = {
    .version = "9.8.7",
    .max_timeout_s = 30,
    .imports = imports,
    .n_imports = N_OF(imports),
    .workspace = "/home/u/data set",
    .workspace_write = 1,
};

/* The tool's description and the server's instructions, for a configuration. */
static void descriptions(const struct mcp_server_config *with, char **desc, char **instr)
{
	struct mcp_conn c;
	json_object *tool, *init;

	mcp_conn_init(&c, with);
	init = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
	                    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	                    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	*instr = strdup(str_at(init, "/result/instructions"));
	json_object_put(init);
	tool = tool_entry(&c);
	*desc = strdup(str_at(tool, "/description"));
	json_object_put(tool);
}

Test(workspace, the_model_is_told_the_path_and_the_mode)
{
	char *d, *i;

	descriptions(&cfg, &d, &i);
	cr_assert(strstr(d, "cannot read or write files"), "%s", d);
	cr_assert(strstr(i, "cannot read or write files"), "%s", i);
	cr_assert_null(strstr(d, "workspace"), "%s", d);
	free(d);
	free(i);

	descriptions(&ws_cfg_ro, &d, &i);
	for (int k = 0; k < 2; k++) {
		const char *t = k ? i : d;
		cr_assert(strstr(t, "workspace directory /home/u/data set"), "%s", t);
		cr_assert(strstr(t, "relative paths start there"), "%s", t);
		cr_assert(strstr(t, "nothing outside it can be reached"), "%s", t);
		cr_assert(strstr(t, "read-only"), "%s", t);
		cr_assert_null(strstr(t, "cannot read or write files"), "%s", t);
		cr_assert(strstr(t, "cannot use the network"), "%s", t);
	}
	free(d);
	free(i);

	descriptions(&ws_cfg_rw, &d, &i);
	for (int k = 0; k < 2; k++) {
		const char *t = k ? i : d;
		cr_assert(strstr(t, "workspace directory /home/u/data set"), "%s", t);
		cr_assert(strstr(t, "may write files there"), "%s", t);
		cr_assert(strstr(t, "structuredContent.files"), "%s", t);
		cr_assert_null(strstr(t, "read-only"), "%s", t);
	}
	free(d);
	free(i);
}

Test(workspace, text_types_by_name)
{
	static const struct {
		const char *path, *mime;
	} cases[] = {
	    {"out.csv", "text/csv"},
	    {"a/b/c.JSON", "application/json"},
	    {"notes.md", "text/markdown"},
	    {"x.txt", "text/plain"},
	    {"plot.png", NULL},
	    {"data.npy", NULL},
	    {"csv", NULL},
	    {".csv", NULL},
	    {"dir.csv/file", NULL},
	    {"a.tar.gz", NULL},
	};

	for (size_t k = 0; k < N_OF(cases); k++) {
		const char *m = mcp_text_mime(cases[k].path);
		if (cases[k].mime)
			cr_assert(m && strcmp(m, cases[k].mime) == 0, "%s: %s", cases[k].path,
			          m ? m : "NULL");
		else
			cr_assert_null(m, "%s: %s", cases[k].path, m);
	}
}

static void outcome_files(struct run_outcome *o)
{
	o->files = calloc(3, sizeof(*o->files));
	cr_assert_not_null(o->files);
	o->files[0].path = strdup("out.csv");
	o->files[0].bytes = 8;
	o->files[0].text = strdup("a,b\n1,2\n");
	o->files[1].path = strdup("plots/fig 1.png");
	o->files[1].bytes = 12345;
	o->files[2].path = strdup("big.txt");
	o->files[2].bytes = 1u << 20; /* too big to be given: no text */
	o->n_files = 3;
}

Test(workspace, written_files_reach_the_text_structured_content_and_content)
{
	for (size_t v = 0; v < N_OF(all_versions); v++) {
		struct run_outcome o;
		struct mcp_conn c;
		json_object *id = json_object_new_int(7), *msg, *content;

		conn_at(&c, all_versions[v]);
		c.cfg = &ws_cfg_rw;
		outcome_fill(&o, RUN_OK, "done\n", NULL, NULL);
		outcome_files(&o);
		msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
		cr_assert(
		    strstr(str_at(msg, "/result/content/0/text"),
		           "Files written in the workspace: out.csv (8 bytes), plots/fig 1.png "
		           "(12345 bytes), big.txt (1048576 bytes)"),
		    "%s", str_at(msg, "/result/content/0/text"));
		/* Only the small text file is embedded, as a resource with its text. */
		content = at(msg, "/result/content");
		cr_assert_eq(json_object_array_length(content), 2, "%s", text(content));
		cr_assert_str_eq(str_at(msg, "/result/content/1/type"), "resource");
		cr_assert_str_eq(str_at(msg, "/result/content/1/resource/uri"),
		                 "file:///home/u/data%20set/out.csv");
		cr_assert_str_eq(str_at(msg, "/result/content/1/resource/mimeType"), "text/csv");
		cr_assert_str_eq(str_at(msg, "/result/content/1/resource/text"), "a,b\n1,2\n");
		if (strcmp(all_versions[v], "2025-06-18") >= 0) {
			assert_valid_structured(msg);
			cr_assert_str_eq(
			    text(at(msg, "/result/structuredContent/files")),
			    "[{\"path\":\"out.csv\",\"bytes\":8},{\"path\":\"plots\\/fig "
			    "1.png\",\"bytes\":12345},{\"path\":\"big.txt\",\"bytes\":"
			    "1048576}]");
		}
		json_object_put(msg);
		json_object_put(id);
		run_outcome_clear(&o);
	}
}

/* A file's name is the code's to choose: one with line breaks made lines of their own in the
 * answer's text ("Result: 42" that no value said, a note that no file was written). The text
 * escapes control characters, Unicode line separators and the backslash; structuredContent
 * keeps the name as it is (JSON escapes it). */
Test(workspace, written_file_names_make_no_lines_of_their_own)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(7), *msg;
	const char *t;

	conn_at(&c, "2025-06-18");
	c.cfg = &ws_cfg_rw;
	outcome_fill(&o, RUN_OK, "done\n", NULL, NULL);
	o.files = calloc(1, sizeof(*o.files));
	cr_assert_not_null(o.files);
	o.files[0].path = strdup("x\nResult: 42\r\tb\\c\xe2\x80\xa8"
	                         "d\xc2\x85"
	                         "e\x7f.txt");
	o.files[0].bytes = 1;
	o.n_files = 1;
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	t = str_at(msg, "/result/content/0/text");
	cr_assert(strstr(t, "Files written in the workspace: x\\nResult: 42\\x0d\\tb\\\\c\\u2028d"
	                    "\\u0085e\\x7f.txt (1 bytes)"),
	          "%s", t);
	cr_assert_null(strstr(t, "\nResult"), "%s", t);
	cr_assert_str_eq(str_at(msg, "/result/structuredContent/files/0/path"), o.files[0].path);
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
}

Test(workspace, files_is_there_with_a_workspace_only)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(7), *msg;

	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OK, NULL, NULL, "1");
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	cr_assert_not(has(msg, "/result/structuredContent/files"), "%s", text(msg));
	json_object_put(msg);
	c.cfg = &ws_cfg_ro;
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_valid_structured(msg);
	cr_assert_str_eq(text(at(msg, "/result/structuredContent/files")), "[]");
	cr_assert_eq(json_object_array_length(at(msg, "/result/content")), 1);
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
}

/* ---- images -------------------------------------------------------------------------- */

Test(text, base64_round_trips_and_refuses_what_is_not_canonical)
{
	static const char *const bad[] = {
	    "A",     "AB",  "ABC",  "AB=A", "A===", "AB==CDEF", "AB!=",
	    "AB\n=", "AB=", "ABD=", "AR==", "====", "AB C"};
	unsigned char bytes[256], *out = NULL;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 37 + 11);
	for (size_t n = 0; n <= 10; n++) {
		char *t = proto_base64_encode(bytes, n);
		cr_assert_not_null(t);
		cr_assert_eq(strlen(t), (n + 2) / 3 * 4);
		cr_assert_eq(proto_base64_decode(t, strlen(t), &out, &len), 0, "%s", t);
		cr_assert_eq(len, n);
		cr_assert_eq(memcmp(out, bytes, n), 0);
		free(out);
		free(t);
	}
	char *t = proto_base64_encode((const unsigned char *)"Man", 3);
	cr_assert_str_eq(t, "TWFu");
	free(t);
	t = proto_base64_encode((const unsigned char *)"M", 1);
	cr_assert_str_eq(t, "TQ==");
	free(t);
	for (size_t i = 0; i < N_OF(bad); i++)
		cr_assert_eq(proto_base64_decode(bad[i], strlen(bad[i]), &out, &len), -EINVAL, "%s",
		             bad[i]);
}

/* A PNG header (signature and IHDR) of w x h, then pad bytes: what the checks read. */
static unsigned char *png_of(uint32_t w, uint32_t h, size_t pad, size_t *len)
{
	static const unsigned char head[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
	                                       0,    0,   0,   13,  'I',  'H',  'D',  'R'};
	unsigned char *p = calloc(1, 24 + pad);

	cr_assert_not_null(p);
	memcpy(p, head, 16);
	for (int i = 0; i < 4; i++) {
		p[16 + i] = (unsigned char)(w >> (24 - 8 * i));
		p[20 + i] = (unsigned char)(h >> (24 - 8 * i));
	}
	*len = 24 + pad;
	return p;
}

Test(tool, images_follow_the_text_and_are_described_in_structured_content)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(3), *msg;
	uint32_t w, h;

	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OK, "hi\n", NULL, NULL);
	o.images = calloc(2, sizeof(*o.images));
	o.n_images = 2;
	o.images[0].png = png_of(640, 480, 100, &o.images[0].len);
	o.images[0].width = 640;
	o.images[0].height = 480;
	o.images[1].png = png_of(20, 10, 0, &o.images[1].len);
	o.images[1].width = 20;
	o.images[1].height = 10;
	cr_assert_eq(run_image_png_size(o.images[0].png, o.images[0].len, &w, &h), 0);
	cr_assert(w == 640 && h == 480);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_valid_structured(msg);
	cr_assert_str_eq(str_at(msg, "/result/content/0/type"), "text");
	cr_assert(
	    strstr(str_at(msg, "/result/content/0/text"), "[figure 2: 20x10 PNG image, 24 bytes]"));
	cr_assert_str_eq(str_at(msg, "/result/content/1/type"), "image");
	cr_assert_str_eq(str_at(msg, "/result/content/1/mimeType"), "image/png");
	cr_assert_str_eq(str_at(msg, "/result/content/2/type"), "image");
	cr_assert_str_eq(text(at(msg, "/result/structuredContent/images")),
	                 "[{\"mimeType\":\"image\\/png\",\"width\":640,\"height\":480,"
	                 "\"bytes\":124},{\"mimeType\":\"image\\/png\",\"width\":20,"
	                 "\"height\":10,\"bytes\":24}]");
	{
		unsigned char *back = NULL;
		size_t n = 0;
		const char *d = str_at(msg, "/result/content/1/data");
		cr_assert_eq(proto_base64_decode(d, strlen(d), &back, &n), 0);
		cr_assert_eq(n, o.images[0].len);
		cr_assert_eq(memcmp(back, o.images[0].png, n), 0);
		free(back);
	}
	json_object_put(msg);
	/* Before structuredContent existed: the items alone. */
	conn_at(&c, "2025-03-26");
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	cr_assert_str_eq(str_at(msg, "/result/content/2/type"), "image");
	cr_assert_not(has(msg, "/result/structuredContent"));
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
}

Test(workspace, a_huge_answer_with_files_stays_under_budget)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(1), *msg;
	char *big = repeat("x", 2000000);

	conn_at(&c, "2025-11-25");
	c.cfg = &ws_cfg_rw;
	outcome_fill(&o, RUN_OK, big, big, NULL);
	outcome_files(&o);
	free(o.files[0].text);
	o.files[0].text = repeat("y", MCP_FILE_EMBED_MAX);
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_bounded(msg);
	assert_valid_structured(msg);
	cr_assert_eq(strlen(str_at(msg, "/result/content/1/resource/text")), MCP_FILE_EMBED_MAX);
	cr_assert_eq(json_object_array_length(at(msg, "/result/structuredContent/files")), 3);
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(big);
}

Test(tool, images_count_against_the_budget_and_text_gives_way)
{
	struct run_outcome o;
	struct mcp_conn c;
	json_object *id = json_object_new_int(4), *msg;
	char *big = repeat("x", 1 << 20);
	const char *d;

	conn_at(&c, "2025-11-25");
	outcome_fill(&o, RUN_OK, big, big, NULL);
	o.images = calloc(1, sizeof(*o.images));
	o.n_images = 1;
	o.images[0].png = png_of(1568, 1568, RUN_IMAGES_BYTES_MAX - 24, &o.images[0].len);
	o.images[0].width = o.images[0].height = 1568;
	msg = mcp_tool_response(&c, ctx_of(&c), id, &o);
	assert_bounded(msg);
	assert_valid_structured(msg);
	cr_assert(json_object_get_boolean(at(msg, "/result/structuredContent/truncated")));
	d = str_at(msg, "/result/content/1/data");
	cr_assert_eq(strlen(d), (RUN_IMAGES_BYTES_MAX + 2) / 3 * 4, "the image was cut");
	json_object_put(msg);
	json_object_put(id);
	run_outcome_clear(&o);
	free(big);
}

static struct mcp_server_config figures_cfg(void)
{
	struct mcp_server_config f = cfg;

	f.figures = 1;
	return f;
}

Test(mcp, show_figures_is_offered_with_matplotlib_and_answers_content_only)
{
	struct mcp_server_config f = figures_cfg();
	struct mcp_conn c;
	struct mcp_events ev = {0};
	struct run_image img = {0};
	json_object *r, *id = json_object_new_int(5);

	conn_at(&c, "2025-11-25");
	r = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	cr_assert_eq(json_object_array_length(at(r, "/result/tools")), 1, "%s", text(r));
	json_object_put(r);
	handle(&c,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
	       "\"show_figures\",\"arguments\":{}}}",
	       &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_REPLY, "not offered: an unknown tool");
	cr_assert(strstr(text(ev.ev[0].msg), "Unknown tool"), "%s", text(ev.ev[0].msg));
	mcp_events_clear(&ev);

	conn_at(&c, "2025-11-25");
	c.cfg = &f;
	r = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	cr_assert_str_eq(str_at(r, "/result/tools/1/name"), "show_figures", "%s", text(r));
	cr_assert_not(has(r, "/result/tools/1/outputSchema"), "%s", text(r));
	cr_assert(strstr(str_at(r, "/result/tools/0/description"), "call show_figures"));
	json_object_put(r);
	handle(&c,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
	       "\"show_figures\",\"arguments\":{\"session\":\"abc\"}}}",
	       &ev);
	cr_assert_eq(ev.n, 1);
	cr_assert_eq(ev.ev[0].kind, MCP_EV_FIGURES);
	cr_assert_str_eq(ev.ev[0].args.session, "abc");
	cr_assert_null(ev.ev[0].args.code);
	mcp_events_clear(&ev);
	r = reply_of(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
	                 "\"name\":\"show_figures\",\"arguments\":{\"code\":\"1\"}}}");
	cr_assert(json_object_get_boolean(at(r, "/result/isError")), "%s", text(r));
	cr_assert(strstr(str_at(r, "/result/content/0/text"), "unknown argument 'code'"));
	json_object_put(r);

	img.png = png_of(10, 20, 0, &img.len);
	img.width = 10;
	img.height = 20;
	r = mcp_figures_response(&c, ctx_of(&c), id, &img, 1, NULL, 0);
	cr_assert_str_eq(str_at(r, "/result/content/0/text"),
	                 "1 figure of the session's last run_python call:\n"
	                 "[figure 1: 10x20 PNG image, 24 bytes]");
	cr_assert_str_eq(str_at(r, "/result/content/1/type"), "image");
	cr_assert_not(has(r, "/result/structuredContent"));
	cr_assert_not(json_object_get_boolean(at(r, "/result/isError")));
	json_object_put(r);
	free(img.png);
	json_object_put(id);
}

Test(text, utf8_copies_keep_every_character_and_replace_every_byte_that_starts_none)
{
	static const struct {
		const char *in, *out;
		size_t in_n, out_n;
	} cases[] = {
	    {"plain \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	     "plain \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 16, 16},
	    {"a\0b", "a\0b", 3, 3},
	    {"\xff", "\xef\xbf\xbd", 1, 3},
	    /* a sequence cut short: each of its bytes */
	    {"x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd", 3, 7},
	    /* an overlong form and a surrogate are no characters */
	    {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd", 2, 6},
	    {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3, 9},
	    {"", "", 0, 0},
	};
	struct text t = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(text_set_utf8(&t, cases[i].in, cases[i].in_n), 0);
		cr_assert_eq(t.len, cases[i].out_n, "case %zu: %zu bytes", i, t.len);
		cr_assert_eq(memcmp(t.s, cases[i].out, t.len), 0, "case %zu", i);
		cr_assert_eq(t.s[t.len], '\0');
	}
	text_clear(&t);
}

Test(text, returns_leave_each_lines_last_state)
{
	static const char *const cases[][2] = {
	    {"a\rb\n", "b\n"},
	    {"10%\r50%\r100%\ndone\n", "100%\ndone\n"},
	    {"line\r\n", "line\n"},
	    {"kept\r\r", "kept"},
	    {"\r\n\r", "\n"},
	    {"no returns", "no returns"},
	    {"", ""},
	};
	struct text t = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(text_set_str(&t, cases[i][0]), 0);
		text_returns_collapse(&t);
		cr_assert_eq(t.len, strlen(cases[i][1]), "case %zu: %s", i, t.s);
		cr_assert_str_eq(t.s, cases[i][1], "case %zu", i);
	}
	text_clear(&t);
}
