/* fuzz_outcome.c - the decoder of a worker's RESULT body (ipc_outcome_decode), hostile input.
 * What it accepts must survive a round trip (encode, decode again: the same texts, byte for
 * byte) and become a tool response that our strict parser reads back. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

static void same_text(const struct text *a, const struct text *b)
{
	assert(!a->s == !b->s);
	if (!a->s)
		return;
	assert(a->len == b->len);
	assert(memcmp(a->s, b->s, a->len) == 0);
	assert(a->s[a->len] == '\0' && b->s[b->len] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mcp_server_config cfg = {.version = "0.1.0", .max_timeout_s = 30};
	static const struct mcp_request_ctx ctx = {.version = "2025-11-25"};
	struct run_outcome o, back;
	struct mcp_conn c;
	json_object *resp, *id;
	char *json;
	size_t len;

	run_outcome_init(&o);
	o.duration_ms = 7;
	if (ipc_outcome_decode((const char *)data, size, &o) < 0) {
		assert(o.duration_ms == 7 && !o.stdout_text.s && !o.result); /* untouched */
		return 0;
	}
	/* Texts that came in valid come back the same. */
	json = ipc_outcome_encode(&o, &len);
	assert(json && strlen(json) == len);
	run_outcome_init(&back);
	assert(ipc_outcome_decode(json, len, &back) == 0);
	assert(back.status == o.status && back.truncated == o.truncated);
	same_text(&o.stdout_text, &back.stdout_text);
	same_text(&o.stderr_text, &back.stderr_text);
	same_text(&o.logs, &back.logs);
	same_text(&o.result_repr, &back.result_repr);
	same_text(&o.error_type, &back.error_type);
	same_text(&o.error_message, &back.error_message);
	same_text(&o.error_traceback, &back.error_traceback);
	assert(json_object_equal(o.result, back.result));
	free(json);
	run_outcome_clear(&back);
	/* The client's answer: bounded, and valid JSON. */
	mcp_conn_init(&c, &cfg);
	id = json_object_new_int(1);
	resp = mcp_tool_response(&c, &ctx, id, &o);
	if (resp) {
		const char *s =
		    json_object_to_json_string_length(resp, JSON_C_TO_STRING_PLAIN, &len);
		json_object *reparsed = proto_parse_json(s, len);

		assert(len <= 900000);
		assert(reparsed);
		json_object_put(reparsed);
		json_object_put(resp);
	}
	json_object_put(id);
	run_outcome_clear(&o);
	return 0;
}
