/* fuzz_tool_args.c - run_python's argument parser: the input is parsed as JSON by our strict
 * parser; an object goes through tool_parse_args, as tools/call hands it over. Accepted
 * arguments must keep the parser's promises (code without NUL and its length, a timeout in
 * range, a printable session name); refused ones must come with an explanation. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol_internal.h"

static const struct mcp_server_config cfg = {
    .version = "0.1.0",
    .max_timeout_s = 30,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *args = proto_parse_json((const char *)data, size);
	struct run_args out = {0};
	struct mcp_conn c;
	char *why = NULL;
	int rc;

	if (!json_object_is_type(args, json_type_object)) {
		json_object_put(args);
		return 0;
	}
	mcp_conn_init(&c, &cfg);
	rc = tool_parse_args(&c, args, &out, &why);
	if (rc == 0) {
		assert(!why);
		assert(out.code && strlen(out.code) == out.code_len);
		assert(out.timeout_s >= 0 && out.timeout_s <= cfg.max_timeout_s);
		if (out.session) {
			size_t n = strlen(out.session);
			assert(n >= 1 && n <= 128);
			for (size_t i = 0; i < n; i++)
				assert(out.session[i] > 0x20 && out.session[i] < 0x7f);
		}
		assert(out.reset == 0 || out.reset == 1);
	} else if (rc == 1) {
		assert(why && *why);
		assert(!out.code && !out.session);
	} else {
		assert(rc == -ENOMEM);
	}
	free(why);
	run_args_clear(&out);
	json_object_put(args);
	return 0;
}
