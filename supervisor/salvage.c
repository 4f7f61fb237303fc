/* salvage.c - what a runner printed, read from its memory when it will not send it: killed at
 * the hard deadline (code inside a long native computation), or dying (a crash, the filter, the
 * CPU or memory limit), its report never comes, and without this its output went with it.
 *
 * The worker's keeps (ipc.h) are where its zygote said, in every process forked from it. Every
 * byte read there is the runner's claim about its own call, as a RESULT frame is: the reads go
 * through process_vm_readv (a bad address fails, nothing is mapped into the supervisor), each
 * keep must have the size this server gives it, its lengths are taken at most at that size,
 * and the text is made valid UTF-8. A hostile runner can make its own call show other bytes of
 * its own memory, or nothing; it cannot make the supervisor read more, or elsewhere. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "engine_internal.h"

/* n bytes at the runner's address at into buf: all of them, or -EFAULT. */
static int read_at(pid_t tid, uint64_t at, void *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)at, n};

	if (n == 0)
		return 0;
	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* Keep s's text, read from the runner. */
static int salvage_keep(pid_t tid, const struct ipc_capture_keep *remote, size_t half,
                        int *truncated, struct text *out)
{
	struct ipc_capture_keep k = *remote;
	struct text raw = {0};
	char *head, *ring;
	int rc = -ENOMEM;

	if (k.half != half)
		return -EPROTO;
	k.head_len = k.head_len < half ? k.head_len : half;
	k.ring_len = k.ring_len < half ? k.ring_len : half;
	head = malloc(half ? half : 1);
	ring = malloc(half ? half : 1);
	if (head && ring) {
		rc = read_at(tid, (uintptr_t)k.head, head, k.head_len);
		if (rc == 0 && k.ring_len > 0)
			rc = read_at(tid, (uintptr_t)k.ring, ring, half);
		if (rc == 0)
			rc = ipc_capture_text(&k, head, ring, truncated, &raw);
		if (rc == 0)
			rc = text_set_utf8(out, raw.s ? raw.s : "", raw.len);
		if (rc == 0)
			text_returns_collapse(out);
	}
	text_clear(&raw);
	free(head);
	free(ring);
	return rc;
}

int salvage_read(pid_t tid, uint64_t at, size_t max_output, struct text out[IPC_CAPTURE_KEEPS],
                 int *truncated)
{
	struct ipc_capture_keep keeps[IPC_CAPTURE_KEEPS];
	int rc;

	if (at == 0)
		return -ENOENT;
	rc = read_at(tid, at, keeps, sizeof(keeps));
	for (int s = 0; rc == 0 && s < IPC_CAPTURE_KEEPS; s++)
		rc = salvage_keep(tid, &keeps[s], ipc_capture_half(max_output, s), truncated,
		                  &out[s]);
	if (rc < 0)
		for (int s = 0; s < IPC_CAPTURE_KEEPS; s++)
			text_clear(&out[s]);
	return rc;
}
