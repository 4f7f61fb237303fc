/* fuzz_mcp_line.c - the MCP line handler: every line of the input (split at '\n') goes to one
 * connection through mcp_handle_line, as server.c hands them over, and every event it yields is
 * carried through: replies serialised, calls answered with mcp_tool_response, progress tokens
 * turned into notifications, cancellations compared with mcp_id_equal. Whatever comes out must
 * be a JSON-RPC message our own strict parser reads back. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol_internal.h"

static const char *const imports[] = {"json", "math"};

static const struct mcp_server_config cfg = {
    .version = "0.1.0",
    .max_timeout_s = 30,
    .cpu_s = 30,
    .memory_bytes = 512u << 20,
    .max_output = 64u << 10,
    .imports = imports,
    .n_imports = 2,
    .max_sessions = 16,
    .session_idle_s = 1800,
};

/* msg as the server writes it, checked: strict JSON in UTF-8 (json-c's tokener, which is not
 * instrumented: reading our own output back is not what is fuzzed), an object (or, for a
 * batch, an array of them) whose "jsonrpc" is "2.0". */
static void emit(json_object *msg)
{
	size_t len, n;
	const char *s = json_object_to_json_string_length(
	    msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	json_object *back, *one;
	struct json_tokener *tok;

	if (!s)
		return;
	assert(strlen(s) == len); /* a raw NUL would end the line early */
	assert(!memchr(s, '\n', len));
	tok = json_tokener_new_ex(PROTO_MAX_DEPTH);
	assert(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	back = json_tokener_parse_ex(tok, s, (int)len);
	assert(back && json_tokener_get_parse_end(tok) == len);
	json_tokener_free(tok);
	n = json_object_is_type(back, json_type_array) ? json_object_array_length(back) : 1;
	for (size_t i = 0; i < n; i++) {
		one = json_object_is_type(back, json_type_array)
		          ? json_object_array_get_idx(back, i)
		          : back;
		assert(json_object_is_type(one, json_type_object));
		assert(proto_string_is(json_object_object_get(one, "jsonrpc"), "2.0"));
	}
	json_object_put(back);
}

/* A finished call with every text in play, NULs and cut markers included. */
static void answer_call(const struct mcp_conn *c, struct mcp_event *ev, unsigned int n)
{
	static const enum run_status statuses[] = {
	    RUN_OK,           RUN_ERROR,     RUN_TIMEOUT, RUN_MEMORY_LIMIT,
	    RUN_OUTPUT_LIMIT, RUN_CANCELLED, RUN_CRASHED, RUN_SANDBOX_VIOLATION};
	struct run_outcome o;
	json_object *resp;

	/* The arguments as tool_parse_args promises them. */
	assert(ev->args.code && strlen(ev->args.code) == ev->args.code_len);
	assert(ev->args.timeout_s >= 0 && ev->args.timeout_s <= cfg.max_timeout_s);
	assert(!ev->args.session ||
	       (strlen(ev->args.session) > 0 && strlen(ev->args.session) <= 128));
	run_outcome_init(&o);
	o.status = statuses[n % 8];
	o.rolled_back = n & 8;
	text_set(&o.stdout_text, ev->args.code, ev->args.code_len);
	text_set(&o.logs, "a\0b", 3);
	if (o.status != RUN_OK) {
		text_set_str(&o.error_type, "ValueError");
		text_set(&o.error_message, ev->args.code, ev->args.code_len);
		text_set_str(&o.error_traceback, "");
	} else {
		text_set(&o.result_repr, ev->args.code, ev->args.code_len);
		o.result = json_object_new_string_len(ev->args.code, (int)ev->args.code_len);
	}
	if (ev->args.session)
		o.session = strdup("0123456789abcdef0123456789abcdef");
	resp = mcp_tool_response(c, &ev->args.ctx, ev->id, &o);
	if (resp) {
		emit(resp);
		json_object_put(resp);
	}
	run_outcome_clear(&o);
	if (ev->progress_token) {
		json_object *note = mcp_progress_notification(ev->progress_token, n + 1, "running");
		assert(note); /* the handler hands over only usable tokens */
		emit(note);
		json_object_put(note);
	}
	assert(mcp_id_equal(ev->id, ev->id));
}

static void handle(struct mcp_conn *c, const char *line, size_t len, unsigned int *calls)
{
	struct mcp_events evs = {0};
	json_object *note;

	if (mcp_handle_line(c, line, len, &evs) < 0) {
		mcp_events_clear(&evs);
		return;
	}
	for (size_t i = 0; i < evs.n; i++) {
		struct mcp_event *ev = &evs.ev[i];

		switch (ev->kind) {
		case MCP_EV_REPLY:
			emit(ev->msg);
			break;
		case MCP_EV_CALL:
			answer_call(c, ev, (*calls)++);
			break;
		case MCP_EV_CANCEL:
			assert(ev->id && mcp_id_equal(ev->id, ev->id));
			break;
		case MCP_EV_NOTE:
			assert(ev->note && strlen(ev->note) > 0);
			break;
		case MCP_EV_FIGURES: {
			/* The session kept no image: the answer says so. */
			json_object *r = mcp_figures_response(c, &ev->args.ctx, ev->id, NULL, 0,
			                                      "no figures", 1);
			if (r) {
				emit(r);
				json_object_put(r);
			}
			break;
		}
		}
	}
	mcp_events_clear(&evs);
	note = mcp_log_notification(c, "info", "safepy", "a server event");
	if (note) {
		emit(note);
		json_object_put(note);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	unsigned int calls = 0;
	struct mcp_conn c;

	mcp_conn_init(&c, &cfg);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		handle(&c, p, (size_t)(nl - p), &calls);
		p = nl + 1;
	}
	return 0;
}
