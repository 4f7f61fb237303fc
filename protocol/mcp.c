/* mcp.c - one client line in, the events it causes out: the MCP lifecycle, version
 * negotiation, method dispatch and JSON-RPC batches. Pure: state lives in struct mcp_conn.
 * Bad input becomes an error reply (or nothing, for notifications); only -ENOMEM fails. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol_internal.h"

#ifndef SAFEPY_VERSION
#define SAFEPY_VERSION "0.0.0"
#endif

/* Versions echoed by initialize; anything else is answered with PROTO_VERSION_LATEST. */
static const char *const versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

/* Longest piece of client text (method, tool name) quoted back in an error message. */
#define QUOTE_MAX 100

typedef int (*request_fn)(struct mcp_conn *c, const struct jsonrpc_request *req,
                          struct mcp_events *out);

void mcp_conn_init(struct mcp_conn *c, const struct mcp_server_config *cfg)
{
	assert(cfg);
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
}

int mcp_version_since(const struct mcp_conn *c, const char *since)
{
	const char *v = c->version[0] ? c->version : PROTO_VERSION_LATEST;

	/* Versions are ISO dates, and only ever one of ours: string order is date order. */
	return strcmp(v, since) >= 0;
}

void mcp_events_clear(struct mcp_events *e)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		json_object_put(e->ev[i].msg);
		json_object_put(e->ev[i].id);
		json_object_put(e->ev[i].progress_token);
		run_args_clear(&e->ev[i].args);
	}
	free(e->ev);
	memset(e, 0, sizeof(*e));
}

/* A new zeroed event at the end of out, or NULL on ENOMEM. */
static struct mcp_event *events_add(struct mcp_events *out, enum mcp_event_kind kind)
{
	struct mcp_event *ev;
	size_t n = out->n;

	/* The capacity is implied by n: 4, then doubling, so reallocate at 0 and at 4, 8, 16... */
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		ev = reallocarray(out->ev, n ? 2 * n : 4, sizeof(*ev));
		if (!ev)
			return NULL;
		out->ev = ev;
	}
	ev = &out->ev[out->n++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	return ev;
}

/* Queue msg (taken, also on failure) as a reply. */
static int reply(struct mcp_events *out, json_object *msg)
{
	struct mcp_event *ev;

	if (!msg)
		return -ENOMEM;
	ev = events_add(out, MCP_EV_REPLY);
	if (!ev) {
		json_object_put(msg);
		return -ENOMEM;
	}
	ev->msg = msg;
	return 0;
}

static int reply_result(struct mcp_events *out, json_object *id, json_object *result)
{
	if (!result)
		return -ENOMEM;
	return reply(out, jsonrpc_result(id, result));
}

static int reply_error(struct mcp_events *out, json_object *id, int code, const char *message)
{
	return reply(out, mcp_error_response(id, code, message));
}

/* An error whose message quotes client text, clipped to QUOTE_MAX bytes. */
static int reply_error_quoting(struct mcp_events *out, json_object *id, int code,
                               const char *prefix, const char *text, size_t len)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s%.*s", prefix, (int)proto_clip(text, len, QUOTE_MAX), text);
	return reply_error(out, id, code, msg);
}

/* params as an object, or NULL when absent or an array (by-position params carry nothing). */
static json_object *params_object(const struct jsonrpc_request *req)
{
	return json_object_is_type(req->params, json_type_object) ? req->params : NULL;
}

static const char *negotiate(json_object *params)
{
	json_object *want = NULL;
	size_t i;

	json_object_object_get_ex(params, "protocolVersion", &want);
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (proto_string_is(want, versions[i]))
			return versions[i];
	return PROTO_VERSION_LATEST;
}

static json_object *initialize_result(const struct mcp_conn *c)
{
	const char *version = c->cfg->version ? c->cfg->version : SAFEPY_VERSION;
	json_object *res, *caps = NULL, *tools = NULL, *info = NULL;
	char *instructions;
	int rc;

	res = json_object_new_object();
	instructions = tool_instructions(c->cfg);
	if (!res || !instructions) {
		rc = -ENOMEM;
		goto out;
	}
	/* Each object is attached before it is filled, so res owns everything built. */
	rc = proto_put(res, "protocolVersion", json_object_new_string(c->version));
	if (rc == 0)
		rc = proto_put(res, "capabilities", caps = json_object_new_object());
	if (rc == 0)
		rc = proto_put(caps, "tools", tools = json_object_new_object());
	if (rc == 0)
		rc = proto_put(tools, "listChanged", json_object_new_boolean(0));
	if (rc == 0)
		rc = proto_put(res, "serverInfo", info = json_object_new_object());
	if (rc == 0)
		rc = proto_put(info, "name", json_object_new_string("safepy"));
	if (rc == 0 && mcp_version_since(c, "2025-06-18"))
		rc = proto_put(info, "title", json_object_new_string("safepy"));
	if (rc == 0)
		rc = proto_put(info, "version", json_object_new_string(version));
	if (rc == 0)
		rc = proto_put(res, "instructions", json_object_new_string(instructions));
out:
	free(instructions);
	if (rc < 0) {
		json_object_put(res);
		return NULL;
	}
	return res;
}

/* Lenient: a missing or unknown version gets the latest, and a second initialize renegotiates. */
static int on_initialize(struct mcp_conn *c, const struct jsonrpc_request *req,
                         struct mcp_events *out)
{
	snprintf(c->version, sizeof(c->version), "%s", negotiate(params_object(req)));
	c->initialized = 0;
	return reply_result(out, req->id, initialize_result(c));
}

static int on_ping(struct mcp_conn *c, const struct jsonrpc_request *req, struct mcp_events *out)
{
	(void)c;
	return reply_result(out, req->id, json_object_new_object());
}

static int on_tools_list(struct mcp_conn *c, const struct jsonrpc_request *req,
                         struct mcp_events *out)
{
	json_object *cursor = NULL, *res, *list;

	/* We never issue a cursor (one tool, one page), so any cursor is one we did not issue.
	 * A null cursor is the same as none. */
	json_object_object_get_ex(params_object(req), "cursor", &cursor);
	if (cursor)
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS,
		                   "Invalid params: unknown cursor");
	res = json_object_new_object();
	if (!res)
		return -ENOMEM;
	list = json_object_new_array();
	if (proto_put(res, "tools", list) < 0 || proto_append(list, tool_definition(c)) < 0) {
		json_object_put(res);
		return -ENOMEM;
	}
	return reply_result(out, req->id, res);
}

/* params._meta.progressToken if it is a string or an integer, else NULL. Borrowed. */
static json_object *progress_token(json_object *params)
{
	json_object *meta = NULL, *token = NULL;

	if (json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_is_type(meta, json_type_object) &&
	    json_object_object_get_ex(meta, "progressToken", &token) && proto_id_valid(token))
		return token;
	return NULL;
}

/* Bad argument values are a tool result with isError (SEP-1303), not a JSON-RPC error. */
static int reply_invalid_args(const struct mcp_conn *c, json_object *id, char *why,
                              struct mcp_events *out)
{
	struct run_outcome o;
	int rc;

	run_outcome_init(&o);
	o.status = RUN_ERROR;
	o.error_type = strdup("InvalidArguments");
	o.error_message = why;
	rc = o.error_type ? reply(out, mcp_tool_response(c, id, &o)) : -ENOMEM;
	run_outcome_clear(&o);
	return rc;
}

static int on_tools_call(struct mcp_conn *c, const struct jsonrpc_request *req,
                         struct mcp_events *out)
{
	json_object *params = params_object(req), *name = NULL, *args = NULL, *empty = NULL;
	struct run_args ra = {0};
	struct mcp_event *ev;
	char *why = NULL;
	int rc;

	if (!json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS,
		                   "Invalid params: tools/call needs a tool \"name\" string");
	if (!proto_string_is(name, "run_python"))
		return reply_error_quoting(out, req->id, JSONRPC_INVALID_PARAMS,
		                           "Unknown tool: ", json_object_get_string(name),
		                           (size_t)json_object_get_string_len(name));
	if (!json_object_object_get_ex(params, "arguments", &args)) {
		args = empty = json_object_new_object();
		if (!empty)
			return -ENOMEM;
	} else if (!json_object_is_type(args, json_type_object)) {
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS,
		                   "Invalid params: \"arguments\" must be an object");
	}
	rc = tool_parse_args(c, args, &ra, &why);
	json_object_put(empty);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return reply_invalid_args(c, req->id, why, out);
	ev = events_add(out, MCP_EV_CALL);
	if (!ev) {
		run_args_clear(&ra);
		return -ENOMEM;
	}
	ev->id = json_object_get(req->id);
	ev->progress_token = json_object_get(progress_token(params));
	ev->args = ra;
	return 0;
}

static const struct {
	const char *method;
	request_fn fn;
} requests[] = {
    {"initialize", on_initialize},
    {"ping", on_ping},
    {"tools/list", on_tools_list},
    {"tools/call", on_tools_call},
};

static int method_is(const struct jsonrpc_request *req, const char *name)
{
	return req->method_len == strlen(name) && memcmp(req->method, name, req->method_len) == 0;
}

/* Notifications never get a reply; unknown ones and malformed cancellations are ignored
 * (races between a reply and its cancellation are normal). */
static int on_notification(struct mcp_conn *c, const struct jsonrpc_request *req,
                           struct mcp_events *out)
{
	json_object *rid = NULL;
	struct mcp_event *ev;

	if (method_is(req, "notifications/initialized")) {
		c->initialized = 1;
	} else if (method_is(req, "notifications/cancelled") &&
	           json_object_object_get_ex(params_object(req), "requestId", &rid) &&
	           proto_id_valid(rid)) {
		ev = events_add(out, MCP_EV_CANCEL);
		if (!ev)
			return -ENOMEM;
		ev->id = json_object_get(rid);
	}
	return 0;
}

static int handle_message(struct mcp_conn *c, json_object *msg, int in_batch,
                          struct mcp_events *out)
{
	struct jsonrpc_request req;
	size_t i;

	if (jsonrpc_parse_request(msg, &req) != 0)
		return req.notification
		           ? 0
		           : reply_error(out, req.id, JSONRPC_INVALID_REQUEST, req.error);
	if (req.notification)
		return on_notification(c, &req, out);
	if (in_batch && method_is(&req, "initialize"))
		return reply_error(out, req.id, JSONRPC_INVALID_REQUEST,
		                   "Invalid Request: initialize must not be part of a batch");
	for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		if (method_is(&req, requests[i].method))
			return requests[i].fn(c, &req, out);
	return reply_error_quoting(out, req.id, JSONRPC_METHOD_NOT_FOUND,
	                           "Method not found: ", req.method, req.method_len);
}

/* Batches exist only in 2025-03-26. Each element yields its own events, in order. */
static int handle_batch(struct mcp_conn *c, json_object *arr, struct mcp_events *out)
{
	size_t i, n = json_object_array_length(arr);
	int rc;

	if (strcmp(c->version, PROTO_VERSION_BATCH) != 0)
		return reply_error(out, NULL, JSONRPC_INVALID_REQUEST,
		                   "Invalid Request: batches are not supported in this "
		                   "protocol version");
	if (n == 0)
		return reply_error(out, NULL, JSONRPC_INVALID_REQUEST,
		                   "Invalid Request: empty batch");
	out->is_batch = 1;
	for (i = 0; i < n; i++) {
		rc = handle_message(c, json_object_array_get_idx(arr, i), 1, out);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int is_blank(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!memchr(" \t\r", line[i], 3))
			return 0;
	return 1;
}

int mcp_handle_line(struct mcp_conn *c, const char *line, size_t len, struct mcp_events *out)
{
	json_object *msg = NULL;
	int rc;

	mcp_events_clear(out);
	/* A blank line carries no message (a stray newline, a keep-alive): nothing to answer. */
	if (is_blank(line, len))
		return 0;
	if (len > PROTO_MAX_LINE)
		rc = reply_error(out, NULL, JSONRPC_INVALID_REQUEST,
		                 "Invalid Request: message too large");
	else if ((rc = proto_parse(line, len, &msg)) < 0)
		rc = rc == -ENOMEM ? rc
		                   : reply_error(out, NULL, JSONRPC_PARSE_ERROR,
		                                 "Parse error: not a valid UTF-8 JSON text");
	else if (json_object_is_type(msg, json_type_array))
		rc = handle_batch(c, msg, out);
	else
		rc = handle_message(c, msg, 0, out);
	json_object_put(msg);
	if (rc < 0)
		mcp_events_clear(out);
	return rc;
}
