/* fuzz_wire.c - the small decoders of the worker wire, each fed the input: a frame header
 * (ipc_frame_header_get), a park call's return value (ipc_park_decode), a zygote control
 * message (ipc_zygote_msg_get) and an import-failed message (ipc_zygote_fail_get). What they
 * accept must encode back to the same bytes. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

static void header(const uint8_t *data, size_t size)
{
	unsigned char h[IPC_FRAME_HEADER], again[IPC_FRAME_HEADER];
	uint32_t len = 0;
	char type = 0;

	if (size < IPC_FRAME_HEADER)
		return;
	memcpy(h, data, sizeof(h));
	if (ipc_frame_header_get(h, &type, &len) < 0) {
		assert(ipc_get_u32(h) > IPC_FRAME_MAX);
		return;
	}
	assert(len <= IPC_FRAME_MAX);
	ipc_frame_header_put(again, type, len);
	assert(memcmp(h, again, sizeof(h)) == 0);
}

static void park(const uint8_t *data, size_t size)
{
	enum ipc_park_cmd cmd;
	uint32_t arg;
	long v = 0;

	memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));
	if (ipc_park_decode(v, &cmd, &arg)) {
		/* Any command comes out (the runner refuses those it does not know), never from a
		 * value a fork can return: a pid (below 1 << 22), 0 or an error. */
		assert(v >= (long)IPC_PARK_WORD && v <= INT32_MAX);
		assert((arg & ~IPC_PARK_ARG_MASK) == 0 && (unsigned int)cmd <= 0x3f);
		assert((long)ipc_park_word(cmd, arg) == v);
	} else {
		assert(v < (long)IPC_PARK_WORD || v > INT32_MAX);
	}
}

static void control(const uint8_t *data, size_t size)
{
	unsigned char again[IPC_ZYGOTE_MSG];
	uint32_t a, b;
	char type;

	if (ipc_zygote_msg_get(data, size, &type, &a, &b) < 0) {
		assert(size != IPC_ZYGOTE_MSG);
		return;
	}
	ipc_zygote_msg_put(again, type, a, b);
	assert(memcmp(again, data, IPC_ZYGOTE_MSG) == 0);
}

static void import_failed(const uint8_t *data, size_t size)
{
	unsigned char again[IPC_ZYGOTE_FAIL_MAX];
	char why[IPC_ZYGOTE_FAIL_TEXT + 1];
	uint32_t index;
	size_t n, len;

	if (ipc_zygote_fail_get(data, size, &index, why, sizeof(why)) < 0)
		return;
	len = strlen(why);
	assert(len <= IPC_ZYGOTE_FAIL_TEXT);
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)why[i];
		assert(ch >= 0x20 && ch != 0x7f);
		if (ch == 0xc2 && i + 1 < len)
			assert((unsigned char)why[i + 1] >= 0xa0);
	}
	assert(proto_utf8_seq((const unsigned char *)why, len) || len == 0);
	/* What it read is a message of its own. */
	n = ipc_zygote_fail_put(again, index, why, len);
	assert(n == 5 + len);
	assert(ipc_zygote_fail_get(again, n, &index, why, sizeof(why)) == 0);
	assert(strlen(why) == len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	header(data, size);
	park(data, size);
	control(data, size);
	import_failed(data, size);
	return 0;
}
