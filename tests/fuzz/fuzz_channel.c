/* fuzz_channel.c - the supervisor's frame assembler (supervisor/channel.c), in-process: the
 * input is written into a real socketpair in segments, channel_read assembles frames with a
 * budget per call, and a stub chain_on_frame records what it is handed. Until the first
 * violation (an over-long header), the frames must be exactly those a plain reference parser
 * finds in the stream, each NUL-terminated and from our own pid (SCM_CREDENTIALS). */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine_internal.h"

#define MAX_FRAMES 4096

struct got {
	char type;
	const char *payload; /* NULL: a violation */
	size_t len;
	pid_t sender;
};

static struct got frames[MAX_FRAMES];
static size_t n_frames;
static char *copies[MAX_FRAMES];

void chain_on_frame(struct chain *c, pid_t sender, char type, const char *payload, size_t len,
                    const int *fds, size_t n_fds)
{
	size_t i = n_frames++;

	assert(n_fds == 0);
	assert(i < MAX_FRAMES);
	if (payload) {
		assert(len <= IPC_FRAME_MAX && payload[len] == '\0');
		copies[i] = malloc(len + 1);
		assert(copies[i]);
		memcpy(copies[i], payload, len + 1);
	}
	frames[i] = (struct got){type, payload ? copies[i] : NULL, len, sender};
}

/* Fds cut off, or no memory for a frame: nothing after it is compared, as after a
 * violation (neither happens here: no fds are sent, and ASan aborts rather than fail). */
void chain_on_fds_cut(struct chain *c, pid_t sender)
{
	chain_on_frame(c, sender, 0, NULL, 0, NULL, 0);
}

void chain_on_nomem(struct chain *c, pid_t sender)
{
	chain_on_frame(c, sender, 0, NULL, 0, NULL, 0);
}

/* Compare what the channel handed over with the frames of s[0..n). */
static void compare(const unsigned char *s, size_t n)
{
	size_t pos = 0, i = 0;

	for (; i < n_frames; i++) {
		uint32_t len;
		char type;

		if (!frames[i].payload)
			return; /* a violation: what the channel drops after it depends on reads */
		assert(frames[i].sender == getpid());
		assert(n - pos >= IPC_FRAME_HEADER);
		assert(ipc_frame_header_get(s + pos, &type, &len) == 0);
		assert(frames[i].type == type && frames[i].len == len);
		assert(n - pos - IPC_FRAME_HEADER >= len);
		assert(memcmp(frames[i].payload, s + pos + IPC_FRAME_HEADER, len) == 0);
		pos += IPC_FRAME_HEADER + len;
	}
	/* Nothing complete was left behind, unless a header is over-long. */
	if (n - pos >= IPC_FRAME_HEADER) {
		uint32_t len;
		char type;

		if (ipc_frame_header_get(s + pos, &type, &len) == 0)
			assert(n - pos - IPC_FRAME_HEADER < len);
	}
}

static void ready(struct watch *w, uint32_t events)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int looped;
	struct channel ch;
	struct chain *c = (struct chain *)&ch; /* never looked at by the stub */
	const unsigned char *s;
	size_t n, off = 0, seg, budget;
	int sv[2], rc;

	if (size < 2)
		return 0;
	if (!looped) {
		assert(loop_init() == 0);
		looped = 1;
	}
	seg = 1 + data[0] % 61;
	budget = 1 + (size_t)data[1] * 13;
	s = data + 2;
	n = size - 2;
	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	assert(channel_open(&ch, sv[0], -1, ready, NULL) == 0);
	n_frames = 0;
	while (off < n) {
		size_t k = n - off < seg ? n - off : seg;
		ssize_t w = send(sv[1], s + off, k, MSG_NOSIGNAL);

		assert(w == (ssize_t)k);
		off += k;
		while ((rc = channel_read(&ch, c, budget)) == 1)
			;
		assert(rc == 0);
	}
	/* The end of the stream comes when the socket is released, which is at once unless
	 * another process holds the file for a moment (one reading /proc/PID/fd): then a read
	 * finds it still open and empty. Wait for the end rather than take that for it. */
	close(sv[1]);
	for (int tries = 0;; tries++) {
		struct pollfd p = {.fd = sv[0], .events = POLLIN};

		while ((rc = channel_read(&ch, c, budget)) == 1)
			;
		if (rc != 0 || tries == 50)
			break;
		(void)poll(&p, 1, 100);
	}
	assert(rc == -EPIPE);
	compare(s, n);
	channel_close(&ch);
	for (size_t i = 0; i < n_frames; i++) {
		free(copies[i]);
		copies[i] = NULL;
	}
	return 0;
}
