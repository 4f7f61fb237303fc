/* mcp.c - one client line in, the events it causes out: the protocol era (legacy handshake or
 * modern stateless requests), version negotiation, method dispatch, JSON-RPC batches, and the
 * server's notifications (progress, log). Pure: state lives in struct mcp_conn.
 * Bad input becomes an error reply (or nothing, for notifications); only -ENOMEM fails. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol_internal.h"

#ifndef SAFEPY_VERSION
#define SAFEPY_VERSION "0.0.0"
#endif

/* Versions served, newest first. Modern ones are served statelessly to requests carrying the
 * _meta envelope; legacy ones are negotiated by initialize, which echoes them and answers
 * anything else with PROTO_VERSION_LATEST. */
static const char *const modern_versions[] = {PROTO_VERSION_MODERN};
static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                              "2024-11-05"};

/* The per-request envelope of the modern era, in params._meta, and the server's identity in
 * a modern result's _meta. */
#define META_VERSION      "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT_INFO  "io.modelcontextprotocol/clientInfo"
#define META_SERVER_INFO  "io.modelcontextprotocol/serverInfo"

/* The syslog severities, least severe first; mcp_conn.log_level is an index here plus one. */
static const char *const log_levels[] = {"debug", "info",     "notice", "warning",
                                         "error", "critical", "alert",  "emergency"};

/* Longest piece of client text (method, tool name, version) quoted back in an error. */
#define QUOTE_MAX 100

/* Cache hints of tools/list and server/discover in the modern era. The tool list is fixed for
 * the process, but a restarted server may be configured differently: no caching promised. */
#define CACHE_TTL_MS 0
#define CACHE_SCOPE  "public"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef int (*request_fn)(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                          const struct jsonrpc_request *req, struct mcp_events *out);

void mcp_conn_init(struct mcp_conn *c, const struct mcp_server_config *cfg)
{
	assert(cfg);
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
}

int mcp_since(const struct mcp_request_ctx *ctx, const char *since)
{
	/* Versions are ISO dates, and only ever one of ours: string order is date order. */
	return strcmp(ctx->version, since) >= 0;
}

/* The context of a request served in the legacy era. */
static void legacy_ctx(const struct mcp_conn *c, struct mcp_request_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	snprintf(ctx->version, sizeof(ctx->version), "%s",
	         c->version[0] ? c->version : PROTO_VERSION_LATEST);
}

static const char *server_version(const struct mcp_server_config *cfg)
{
	return cfg->version ? cfg->version : SAFEPY_VERSION;
}

/* serverInfo / _meta serverInfo: {name, title, version}. New object or NULL. */
static json_object *server_info(const struct mcp_server_config *cfg, int title)
{
	json_object *info = json_object_new_object();
	int rc;

	if (!info)
		return NULL;
	rc = proto_put(info, "name", json_object_new_string("safepy"));
	if (rc == 0 && title)
		rc = proto_put(info, "title", json_object_new_string("safepy"));
	if (rc == 0)
		rc = proto_put(info, "version", json_object_new_string(server_version(cfg)));
	if (rc < 0) {
		json_object_put(info);
		return NULL;
	}
	return info;
}

int mcp_result_finish(const struct mcp_server_config *cfg, const struct mcp_request_ctx *ctx,
                      json_object *result)
{
	json_object *meta = NULL;
	int rc;

	if (!ctx->modern)
		return 0;
	rc = proto_put(result, "resultType", json_object_new_string("complete"));
	if (rc < 0)
		return rc;
	if (!json_object_object_get_ex(result, "_meta", &meta) ||
	    !json_object_is_type(meta, json_type_object)) {
		rc = proto_put(result, "_meta", meta = json_object_new_object());
		if (rc < 0)
			return rc;
	}
	return proto_put(meta, META_SERVER_INFO, server_info(cfg, 1));
}

void mcp_events_clear(struct mcp_events *e)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		json_object_put(e->ev[i].msg);
		json_object_put(e->ev[i].id);
		json_object_put(e->ev[i].progress_token);
		run_args_clear(&e->ev[i].args);
		free(e->ev[i].note);
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

/* Queue the response carrying result (taken, also on failure), made modern for a modern ctx. */
static int reply_result(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                        struct mcp_events *out, json_object *id, json_object *result)
{
	if (!result)
		return -ENOMEM;
	if (mcp_result_finish(c->cfg, ctx, result) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	return reply(out, jsonrpc_result(id, result));
}

static int reply_error(struct mcp_events *out, json_object *id, int code, const char *message)
{
	return reply(out, mcp_error_response(id, code, message));
}

/* An error whose message quotes client text, clipped to QUOTE_MAX bytes; a control character
 * in it (a NUL cut the quote short: "ping\u0000x" was quoted as "ping", a method that exists)
 * is shown as '?'. */
static int reply_error_quoting(struct mcp_events *out, json_object *id, int code,
                               const char *prefix, const char *text, size_t len)
{
	char msg[256];
	size_t at = strlen(prefix), n = proto_clip(text, len, QUOTE_MAX);

	if (at > sizeof(msg) - 1)
		at = sizeof(msg) - 1;
	memcpy(msg, prefix, at);
	for (size_t i = 0; i < n && at + 1 < sizeof(msg); i++)
		msg[at++] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
	msg[at] = '\0';
	return reply_error(out, id, code, msg);
}

static int method_is(const struct jsonrpc_request *req, const char *name)
{
	return req->method_len == strlen(name) && memcmp(req->method, name, req->method_len) == 0;
}

/* params as an object, or NULL when absent or an array (by-position params carry nothing). */
static json_object *params_object(const struct jsonrpc_request *req)
{
	return json_object_is_type(req->params, json_type_object) ? req->params : NULL;
}

/* Every version served, modern first, newest first. New array or NULL. */
static json_object *supported_versions(void)
{
	json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; arr && i < N_OF(modern_versions); i++)
		if (proto_append(arr, json_object_new_string(modern_versions[i])) < 0)
			goto fail;
	for (i = 0; arr && i < N_OF(legacy_versions); i++)
		if (proto_append(arr, json_object_new_string(legacy_versions[i])) < 0)
			goto fail;
	return arr;
fail:
	json_object_put(arr);
	return NULL;
}

/* ---- Eras ---------------------------------------------------------------------------- */

/* What a message's params._meta says about the modern era. The claim is the presence of the
 * protocol-version key; once claimed, the envelope must be well-formed, and only then is the
 * version looked at. */
enum claim {
	CLAIM_NONE,        /* no claim: legacy traffic */
	CLAIM_INVALID,     /* a claim with a malformed envelope */
	CLAIM_UNSUPPORTED, /* a well-formed envelope naming a version not served statelessly */
	CLAIM_MODERN,      /* a well-formed envelope naming a modern version served */
};

/* The claim of params (may be NULL). *version (borrowed) is the claimed version for
 * CLAIM_UNSUPPORTED and CLAIM_MODERN, *why the problem for CLAIM_INVALID. */
static enum claim envelope_claim(json_object *params, const char **version, const char **why)
{
	json_object *meta = NULL, *v = NULL, *caps = NULL, *info = NULL;
	size_t i;

	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_is_type(meta, json_type_object) ||
	    !json_object_object_get_ex(meta, META_VERSION, &v))
		return CLAIM_NONE;
	if (!json_object_object_get_ex(meta, META_CAPABILITIES, &caps)) {
		*why = "Invalid _meta envelope: " META_CAPABILITIES " is missing";
		return CLAIM_INVALID;
	}
	if (!json_object_is_type(v, json_type_string)) {
		*why = "Invalid _meta envelope: " META_VERSION " must be a string";
		return CLAIM_INVALID;
	}
	if (!json_object_is_type(caps, json_type_object)) {
		*why = "Invalid _meta envelope: " META_CAPABILITIES " must be an object";
		return CLAIM_INVALID;
	}
	/* Optional (SHOULD), but an Implementation object when present. */
	if (json_object_object_get_ex(meta, META_CLIENT_INFO, &info) &&
	    !json_object_is_type(info, json_type_object)) {
		*why = "Invalid _meta envelope: " META_CLIENT_INFO " must be an object";
		return CLAIM_INVALID;
	}
	for (i = 0; i < N_OF(modern_versions); i++)
		if (proto_string_is(v, modern_versions[i])) {
			*version = modern_versions[i];
			return CLAIM_MODERN;
		}
	*version = json_object_get_string(v);
	return CLAIM_UNSUPPORTED;
}

/* -32022 with data {supported, requested}; the requested version is clipped to QUOTE_MAX. */
static int reply_unsupported(struct mcp_events *out, json_object *id, const char *requested)
{
	json_object *data = json_object_new_object();
	int rc;

	if (!data)
		return -ENOMEM;
	rc = proto_put(data, "supported", supported_versions());
	if (rc == 0)
		rc = proto_put(
		    data, "requested",
		    json_object_new_string_len(
		        requested, (int)proto_clip(requested, strlen(requested), QUOTE_MAX)));
	if (rc < 0) {
		json_object_put(data);
		return rc;
	}
	return reply(
	    out, jsonrpc_error(id, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version", data));
}

/* Decide which era serves a request, pinning the connection's era if it is still open (on
 * every message until one pins it). Returns 1 with *ctx filled when the request is to be
 * served, 0 once an error reply is queued, or -ENOMEM. */
static int classify_request(struct mcp_conn *c, const struct jsonrpc_request *req,
                            struct mcp_request_ctx *ctx, struct mcp_events *out)
{
	const char *version = NULL, *why = NULL;
	enum claim claim;

	/* A legacy connection ignores _meta (a client may send it; it means nothing here). */
	if (c->era == MCP_ERA_LEGACY) {
		legacy_ctx(c, ctx);
		return 1;
	}
	claim = envelope_claim(params_object(req), &version, &why);
	if (c->era != MCP_ERA_MODERN &&
	    (claim == CLAIM_NONE || (claim != CLAIM_MODERN && method_is(req, "initialize")))) {
		c->era = MCP_ERA_LEGACY;
		legacy_ctx(c, ctx);
		return 1;
	}
	switch (claim) {
	case CLAIM_NONE:
		return reply_error(
		    out, req->id, JSONRPC_INVALID_PARAMS,
		    "Request is missing the required _meta envelope: this connection "
		    "speaks MCP " PROTO_VERSION_MODERN ", whose requests carry " META_VERSION
		    " and " META_CAPABILITIES " in params._meta");
	case CLAIM_INVALID:
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS, why);
	case CLAIM_UNSUPPORTED:
		return reply_unsupported(out, req->id, version);
	case CLAIM_MODERN:
		break;
	}
	/* A dual-era client may probe with server/discover and still fall back to initialize. */
	if (c->era != MCP_ERA_MODERN)
		c->era = method_is(req, "server/discover") ? MCP_ERA_PROBE : MCP_ERA_MODERN;
	memset(ctx, 0, sizeof(*ctx));
	snprintf(ctx->version, sizeof(ctx->version), "%s", version);
	ctx->modern = 1;
	return 1;
}

/* ---- Legacy lifecycle ---------------------------------------------------------------- */

static const char *negotiate(json_object *params)
{
	json_object *want = NULL;
	size_t i;

	json_object_object_get_ex(params, "protocolVersion", &want);
	for (i = 0; i < N_OF(legacy_versions); i++)
		if (proto_string_is(want, legacy_versions[i]))
			return legacy_versions[i];
	return PROTO_VERSION_LATEST;
}

/* {"tools":{"listChanged":false}}, and "logging":{} if logging/setLevel is served. */
static json_object *capabilities(int logging)
{
	json_object *caps = json_object_new_object(), *tools = NULL;
	int rc;

	if (!caps)
		return NULL;
	rc = proto_put(caps, "tools", tools = json_object_new_object());
	if (rc == 0)
		rc = proto_put(tools, "listChanged", json_object_new_boolean(0));
	if (rc == 0 && logging)
		rc = proto_put(caps, "logging", json_object_new_object());
	if (rc < 0) {
		json_object_put(caps);
		return NULL;
	}
	return caps;
}

static json_object *initialize_result(const struct mcp_conn *c, const struct mcp_request_ctx *ctx)
{
	json_object *res;
	char *instructions;
	int rc;

	res = json_object_new_object();
	instructions = tool_instructions(c->cfg);
	if (!res || !instructions) {
		rc = -ENOMEM;
		goto out;
	}
	rc = proto_put(res, "protocolVersion", json_object_new_string(c->version));
	if (rc == 0)
		rc = proto_put(res, "capabilities", capabilities(1));
	if (rc == 0)
		rc =
		    proto_put(res, "serverInfo", server_info(c->cfg, mcp_since(ctx, "2025-06-18")));
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

/* Lenient: a missing or unknown version gets the latest, and a second initialize renegotiates
 * (a new session: initialized and the log level start over). */
static int on_initialize(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                         const struct jsonrpc_request *req, struct mcp_events *out)
{
	struct mcp_request_ctx now;

	(void)ctx;
	snprintf(c->version, sizeof(c->version), "%s", negotiate(params_object(req)));
	c->initialized = 0;
	c->log_level = 0;
	legacy_ctx(c, &now);
	return reply_result(c, &now, out, req->id, initialize_result(c, &now));
}

static int on_ping(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                   const struct jsonrpc_request *req, struct mcp_events *out)
{
	return reply_result(c, ctx, out, req->id, json_object_new_object());
}

/* The index of a severity name in log_levels, or -1. */
static int log_level_index(json_object *name)
{
	size_t i;

	for (i = 0; i < N_OF(log_levels); i++)
		if (proto_string_is(name, log_levels[i]))
			return (int)i;
	return -1;
}

static int on_set_level(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                        const struct jsonrpc_request *req, struct mcp_events *out)
{
	json_object *level = NULL;
	int i;

	json_object_object_get_ex(params_object(req), "level", &level);
	i = log_level_index(level);
	if (i < 0)
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS,
		                   "Invalid params: \"level\" must be one of debug, info, notice, "
		                   "warning, error, critical, alert, emergency");
	c->log_level = i + 1;
	return reply_result(c, ctx, out, req->id, json_object_new_object());
}

/* ---- Both eras ----------------------------------------------------------------------- */

static int put_cache_hints(json_object *res)
{
	int rc = proto_put(res, "ttlMs", json_object_new_int(CACHE_TTL_MS));

	return rc == 0 ? proto_put(res, "cacheScope", json_object_new_string(CACHE_SCOPE)) : rc;
}

static int on_discover(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                       const struct jsonrpc_request *req, struct mcp_events *out)
{
	json_object *res = json_object_new_object();
	char *instructions = tool_instructions(c->cfg);
	int rc = -ENOMEM;

	if (!res || !instructions)
		goto out;
	rc = proto_put(res, "supportedVersions", supported_versions());
	/* Logging is deprecated in 2026-07-28 and not served statelessly: not declared. */
	if (rc == 0)
		rc = proto_put(res, "capabilities", capabilities(0));
	if (rc == 0)
		rc = proto_put(res, "instructions", json_object_new_string(instructions));
	if (rc == 0)
		rc = put_cache_hints(res);
out:
	free(instructions);
	if (rc < 0) {
		json_object_put(res);
		return rc;
	}
	return reply_result(c, ctx, out, req->id, res);
}

static int on_tools_list(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                         const struct jsonrpc_request *req, struct mcp_events *out)
{
	json_object *cursor = NULL, *res, *list;
	int rc;

	/* We never issue a cursor (one page), so any cursor is one we did not issue.
	 * A null cursor is the same as none. */
	json_object_object_get_ex(params_object(req), "cursor", &cursor);
	if (cursor)
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS,
		                   "Invalid params: unknown cursor");
	res = json_object_new_object();
	if (!res)
		return -ENOMEM;
	list = json_object_new_array();
	rc = proto_put(res, "tools", list);
	if (rc == 0)
		rc = proto_append(list, tool_definition(c->cfg, ctx));
	if (rc == 0 && c->cfg->figures)
		rc = proto_append(list, tool_figures_definition(c->cfg, ctx));
	if (rc == 0 && ctx->modern)
		rc = put_cache_hints(res);
	if (rc < 0) {
		json_object_put(res);
		return rc;
	}
	return reply_result(c, ctx, out, req->id, res);
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

/* Bad argument values are a tool result with isError, not a JSON-RPC error: the model reads
 * what was wrong and can correct its call. */
static int reply_invalid_args(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                              json_object *id, char *why, struct mcp_events *out)
{
	struct run_outcome o;
	int rc;

	run_outcome_init(&o);
	o.status = RUN_ERROR;
	text_take(&o.error_message, why, strlen(why));
	rc = text_set_str(&o.error_type, "InvalidArguments");
	if (rc == 0)
		rc = reply(out, mcp_tool_response(c, ctx, id, &o));
	run_outcome_clear(&o);
	return rc;
}

static int on_tools_call(struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                         const struct jsonrpc_request *req, struct mcp_events *out)
{
	json_object *params = params_object(req), *name = NULL, *args = NULL, *empty = NULL;
	struct run_args ra = {0};
	struct mcp_event *ev;
	char *why = NULL;
	int rc, figures;

	if (!json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return reply_error(out, req->id, JSONRPC_INVALID_PARAMS,
		                   "Invalid params: tools/call needs a tool \"name\" string");
	figures = c->cfg->figures && proto_string_is(name, "show_figures");
	if (!proto_string_is(name, "run_python") && !figures)
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
	rc = figures ? tool_parse_figures_args(args, &ra, &why)
	             : tool_parse_args(c, args, &ra, &why);
	json_object_put(empty);
	if (rc < 0)
		return rc;
	if (rc > 0 && figures) {
		json_object *r = mcp_figures_response(c, ctx, req->id, NULL, 0, why, 1);
		free(why);
		return r ? reply(out, r) : -ENOMEM;
	}
	if (rc > 0)
		return reply_invalid_args(c, ctx, req->id, why, out);
	ev = events_add(out, figures ? MCP_EV_FIGURES : MCP_EV_CALL);
	if (!ev) {
		run_args_clear(&ra);
		return -ENOMEM;
	}
	ev->id = json_object_get(req->id);
	ev->progress_token = json_object_get(progress_token(params));
	ev->args = ra;
	ev->args.ctx = *ctx;
	ev->args.ctx.timeout_s = ev->args.timeout_s;
	return 0;
}

struct method {
	const char *name;
	request_fn fn;
};

/* What each era serves. Anything else, in either era, is -32601 at once: a legacy server's
 * prompt -32601 to server/discover is how a probing client learns to fall back. */
static const struct method legacy_methods[] = {
    {"initialize", on_initialize},      {"ping", on_ping},
    {"logging/setLevel", on_set_level}, {"tools/list", on_tools_list},
    {"tools/call", on_tools_call},
};
static const struct method modern_methods[] = {
    {"server/discover", on_discover},
    {"tools/list", on_tools_list},
    {"tools/call", on_tools_call},
};

/* Notifications never get a reply and never pin the era (in 2026-07-28 they carry no
 * envelope, so they say nothing about it); unknown ones and malformed cancellations are
 * ignored (races between a reply and its cancellation are normal). */
static int on_notification(struct mcp_conn *c, const struct jsonrpc_request *req,
                           struct mcp_events *out)
{
	json_object *rid = NULL;
	struct mcp_event *ev;

	if (method_is(req, "notifications/initialized")) {
		if (c->era != MCP_ERA_MODERN)
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

/* A NOTE event: "what (id ID): why", with_id: the id (NULL: null) as the client wrote it,
 * bounded; every byte that is not printable ASCII shown as '?'. */
static int note(struct mcp_events *out, int warn, const char *what, int with_id, json_object *id,
                const char *why)
{
	struct mcp_event *ev;
	struct strbuf b = {0};
	char *s;

	sb_str(&b, what);
	if (with_id) {
		size_t n = 4;
		const char *t =
		    id ? json_object_to_json_string_length(id, JSON_C_TO_STRING_PLAIN, &n) : "null";

		sb_str(&b, " (id ");
		if (t)
			sb_add(&b, t, proto_clip(t, n, QUOTE_MAX));
		sb_str(&b, ")");
	}
	if (why) {
		sb_str(&b, ": ");
		sb_str(&b, why);
	}
	s = sb_take(&b);
	if (!s)
		return -ENOMEM;
	for (char *p = s; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	ev = events_add(out, MCP_EV_NOTE);
	if (!ev) {
		free(s);
		return -ENOMEM;
	}
	ev->note = s;
	ev->warn = warn;
	return 0;
}

/* A response from the client: safepy sends no requests, so none is awaited. Never answered;
 * an invalid one is worth a warning. */
static int on_response(json_object *msg, struct mcp_events *out)
{
	json_object *id = NULL;
	const char *why = jsonrpc_response_problem(msg);
	int has_id = json_object_object_get_ex(msg, "id", &id);

	if (why)
		return note(out, 1, "ignored an invalid JSON-RPC response from the client", has_id,
		            id, why);
	return note(out, 0, "ignored a response from the client", 1, id,
	            "safepy sends no requests");
}

static int handle_message(struct mcp_conn *c, json_object *msg, int in_batch,
                          struct mcp_events *out)
{
	const struct method *table;
	struct mcp_request_ctx ctx;
	struct jsonrpc_request req;
	size_t i, n;
	int rc;

	if (jsonrpc_is_response(msg))
		return on_response(msg, out);
	rc = jsonrpc_parse_request(msg, &req);
	if (rc == -ENOMEM)
		return rc;
	if (rc != 0)
		return req.notification
		           ? note(out, 1, "ignored a malformed notification from the client", 0,
		                  NULL, req.error)
		           : reply_error(out, req.id, JSONRPC_INVALID_REQUEST, req.error);
	if (req.notification)
		return on_notification(c, &req, out);
	if (in_batch && method_is(&req, "initialize"))
		return reply_error(out, req.id, JSONRPC_INVALID_REQUEST,
		                   "Invalid Request: initialize must not be part of a batch");
	rc = classify_request(c, &req, &ctx, out);
	if (rc <= 0)
		return rc;
	table = ctx.modern ? modern_methods : legacy_methods;
	n = ctx.modern ? N_OF(modern_methods) : N_OF(legacy_methods);
	for (i = 0; i < n; i++)
		if (method_is(&req, table[i].name))
			return table[i].fn(c, &ctx, &req, out);
	return reply_error_quoting(out, req.id, JSONRPC_METHOD_NOT_FOUND,
	                           "Method not found: ", req.method, req.method_len);
}

/* Batches exist only in 2025-03-26. Each element yields its own events, in order. */
#define MCP_STR_(x) #x
#define MCP_STR(x)  MCP_STR_(x)

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
	if (n > PROTO_MAX_BATCH)
		return reply_error(out, NULL, JSONRPC_INVALID_REQUEST,
		                   "Invalid Request: a batch holds at most " MCP_STR(
		                       PROTO_MAX_BATCH) " messages; send more in separate lines");
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

/* After rc (< 0) handling line, parsed into msg (NULL: not parsed): is an answer owed, and to
 * which id? A notification or a response never gets one. */
static void oom_owed(const char *line, size_t len, json_object *msg, int rc, struct mcp_events *out)
{
	struct jsonrpc_request req;

	if (rc != -ENOMEM)
		return;
	if (msg && json_object_is_type(msg, json_type_array)) {
		out->oom_answer = 1;
	} else if (!msg) {
		jsonrpc_id_text(line, len, &out->oom_answer, out->oom_id, sizeof(out->oom_id));
	} else {
		jsonrpc_parse_request(msg, &req);
		if (req.method && req.id) {
			out->oom_answer = 1;
			mcp_id_text(req.id, out->oom_id, sizeof(out->oom_id));
		}
	}
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
		     : rc == -E2BIG
		         ? reply_error(out, NULL, JSONRPC_PARSE_ERROR,
		                       "Parse error: nested deeper than " PROTO_MAX_DEPTH_TEXT
		                       " levels")
		     : rc == -EMSGSIZE
		         ? reply_error(out, NULL, JSONRPC_INVALID_REQUEST,
		                       "Invalid Request: more than " PROTO_MAX_VALUES_TEXT
		                       " values in one message")
		         : reply_error(out, NULL, JSONRPC_PARSE_ERROR,
		                       "Parse error: not a valid UTF-8 JSON text");
	else if ((rc = jsonrpc_keep_id_texts(msg, line, len)) == 0)
		rc = json_object_is_type(msg, json_type_array) ? handle_batch(c, msg, out)
		                                               : handle_message(c, msg, 0, out);
	if (rc < 0) {
		mcp_events_clear(out);
		oom_owed(line, len, msg, rc, out);
	}
	json_object_put(msg);
	return rc;
}

void mcp_id_text(json_object *id, char *out, size_t cap)
{
	char num[24];
	size_t n = 0;
	const char *s = NULL;

	/* Made without allocating where it can be: a number's text as the client wrote it
	 * (kept by jsonrpc_keep_id_texts), or its value. */
	if (id && json_object_is_type(id, json_type_int) && json_object_get_userdata(id)) {
		s = json_object_get_userdata(id);
		n = strlen(s);
	} else if (id && json_object_is_type(id, json_type_int)) {
		snprintf(num, sizeof(num), "%" PRId64, json_object_get_int64(id));
		s = num;
		n = strlen(s);
	} else if (id) {
		s = json_object_to_json_string_length(id, JSON_C_TO_STRING_PLAIN, &n);
	}

	if (!s || n >= cap)
		n = 0;
	if (cap > 0) {
		memcpy(out, s ? s : "", n);
		out[n] = '\0';
	}
}

size_t mcp_oom_text(const char *id, const char *what, char *out, size_t cap)
{
	int k = snprintf(out, cap,
	                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":"
	                 "\"The server ran out of memory %s.\"}}",
	                 id && *id ? id : "null", JSONRPC_INTERNAL_ERROR, what);

	return k < 0 ? 0 : (size_t)k < cap ? (size_t)k : cap - 1;
}

/* ---- Server notifications ------------------------------------------------------------ */

/* progress as JSON: an integer when it is one (most heartbeats), else a short decimal. */
static json_object *progress_value(double progress)
{
	char s[32];

	/* Within +-2^53 every integer is exact, and the cast is defined. */
	if (progress > -9007199254740992.0 && progress < 9007199254740992.0 &&
	    progress == (double)(int64_t)progress)
		return json_object_new_int64((int64_t)progress);
	snprintf(s, sizeof(s), "%.15g", progress);
	return json_object_new_double_s(progress, s);
}

json_object *mcp_progress_notification(json_object *token, double progress, const char *message)
{
	json_object *params;
	int rc;

	if (!proto_id_valid(token) || !isfinite(progress))
		return NULL;
	params = json_object_new_object();
	if (!params)
		return NULL;
	rc = proto_put(params, "progressToken", json_object_get(token));
	if (rc == 0)
		rc = proto_put(params, "progress", progress_value(progress));
	if (rc == 0 && message)
		rc = proto_put(params, "message", json_object_new_string(message));
	if (rc < 0) {
		json_object_put(params);
		return NULL;
	}
	return jsonrpc_notification("notifications/progress", params);
}

/* text with every byte that does not begin a valid UTF-8 sequence replaced by U+FFFD: a log
 * line may be cut inside a character, or name a file or a module by bytes. New string, or
 * NULL. */
static char *utf8_valid_copy(const char *text)
{
	size_t n = strlen(text), o = 0;
	char *out = malloc(3 * n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0, k; i < n; i += k) {
		k = proto_utf8_seq((const unsigned char *)text + i, n - i);
		if (k == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			k = 1;
			continue;
		}
		memcpy(out + o, text + i, k);
		o += k;
	}
	out[o] = '\0';
	return out;
}

json_object *mcp_log_notification(const struct mcp_conn *c, const char *level, const char *logger,
                                  const char *text)
{
	json_object *params;
	char *valid;
	int i, rc;

	if (c->era != MCP_ERA_LEGACY || !c->version[0] || c->log_level == 0)
		return NULL;
	for (i = 0; i < (int)N_OF(log_levels) && strcmp(level, log_levels[i]) != 0; i++)
		;
	if (i == (int)N_OF(log_levels) || i + 1 < c->log_level)
		return NULL;
	params = json_object_new_object();
	if (!params)
		return NULL;
	rc = proto_put(params, "level", json_object_new_string(log_levels[i]));
	if (rc == 0 && logger)
		rc = proto_put(params, "logger", json_object_new_string(logger));
	valid = rc == 0 ? utf8_valid_copy(text ? text : "") : NULL;
	rc = valid ? proto_put(params, "data", json_object_new_string(valid)) : -ENOMEM;
	free(valid);
	if (rc < 0) {
		json_object_put(params);
		return NULL;
	}
	return jsonrpc_notification("notifications/message", params);
}
