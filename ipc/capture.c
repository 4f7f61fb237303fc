/* capture.c - the layout of what a worker printed, shared by the worker that keeps it and the
 * supervisor that may read it from the worker's memory (ipc.h). Pure: no I/O, no globals. */
#include <errno.h>

#include "ipc.h"

size_t ipc_capture_half(size_t max_output, enum ipc_capture_stream s)
{
	return s == IPC_CAPTURE_LOG ? max_output : max_output / 2;
}

int ipc_capture_text(const struct ipc_capture_keep *k, const char *head, const char *ring,
                     int *truncated, struct text *out)
{
	size_t half = k->half, head_len = k->head_len < half ? k->head_len : half;
	size_t ring_len = k->ring_len < half ? k->ring_len : half;
	size_t pos = half ? k->ring_pos % half : 0, start, first;
	uint64_t kept = (uint64_t)head_len + ring_len;
	struct strbuf b = {0};
	struct text tail = {0};
	int rc;

	start = half ? (pos + half - ring_len) % half : 0;
	first = ring_len < half - start ? ring_len : half - start;
	if (k->total <= kept) /* the head and the ring meet: nothing was dropped */
		sb_add(&b, head, head_len);
	sb_add(&b, ring + start, first); /* the ring, oldest byte first */
	sb_add(&b, ring, ring_len - first);
	if (k->total <= kept)
		return sb_take_text(&b, out);
	*truncated = 1;
	rc = sb_take_text(&b, &tail);
	if (rc == 0)
		rc = text_join_cut(head, head_len, k->total - kept, tail.s, tail.len, out);
	text_clear(&tail);
	return rc;
}
