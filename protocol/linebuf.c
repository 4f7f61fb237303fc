/* linebuf.c - split the client's byte stream into newline-terminated lines, in bounded memory:
 * an over-long line is dropped as it arrives and reported once, and reading goes on after it.
 * Returns 0 or -ENOMEM (feed), LINEBUF_* or 0 (next). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

/* Capacity kept after a large line has gone; more is given back. */
#define LINEBUF_KEEP (64u << 10)

void linebuf_init(struct linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof(*lb));
	lb->max = max;
}

void linebuf_clear(struct linebuf *lb)
{
	size_t max = lb->max;

	free(lb->buf);
	linebuf_init(lb, max);
}

/* Forget the bytes already returned (moving the rest to the front) and give memory back
 * after a large line. Only between calls: a returned line stays valid until the next one. */
static void compact(struct linebuf *lb)
{
	char *p;

	if (lb->taken == lb->len) {
		lb->len = lb->scan = lb->taken = 0;
	} else if (lb->taken > 0) {
		memmove(lb->buf, lb->buf + lb->taken, lb->len - lb->taken);
		lb->len -= lb->taken;
		lb->scan -= lb->taken;
		lb->taken = 0;
	}
	if (lb->cap > 2 * LINEBUF_KEEP && lb->len < LINEBUF_KEEP) {
		p = realloc(lb->buf, LINEBUF_KEEP);
		if (p) {
			lb->buf = p;
			lb->cap = LINEBUF_KEEP;
		}
	}
}

static int reserve(struct linebuf *lb, size_t n)
{
	size_t need = lb->len + n, want, bound;
	char *p;

	if (need < n)
		return -ENOMEM;
	if (need <= lb->cap)
		return 0;
	/* Double, but not past the longest line plus this chunk: the documented bound. */
	want = lb->cap ? lb->cap * 2 : 4096;
	bound = lb->max + 2 + n < n ? SIZE_MAX : lb->max + 2 + n;
	if (want > bound)
		want = bound;
	if (want < need)
		want = need;
	p = realloc(lb->buf, want);
	if (!p)
		return -ENOMEM;
	lb->buf = p;
	lb->cap = want;
	return 0;
}

/* Length of the unterminated line at the end of buf, given that the last n bytes just came. */
static size_t tail_length(const struct linebuf *lb, size_t n)
{
	const char *nl;
	size_t old = lb->len - n;

	nl = memrchr(lb->buf + old, '\n', n);
	if (nl)
		return (size_t)(lb->buf + lb->len - nl - 1);
	/* buf[0..scan) holds no newline (linebuf_next searched it), so look only past scan. */
	nl = lb->scan < old ? memrchr(lb->buf + lb->scan, '\n', old - lb->scan) : NULL;
	return nl ? (size_t)(lb->buf + lb->len - nl - 1) : lb->len;
}

/* The caller drains linebuf_next after each feed; then a dropped line's report comes after the
 * lines before it and before those after it, and memory stays within max plus n. */
int linebuf_reserve(struct linebuf *lb, size_t n)
{
	compact(lb);
	return reserve(lb, n);
}

int linebuf_feed(struct linebuf *lb, const char *data, size_t n)
{
	const char *nl;
	size_t tail;

	compact(lb);
	if (lb->discarding) {
		nl = memchr(data, '\n', n);
		if (!nl)
			return 0;
		lb->discarding = 0;
		n -= (size_t)(nl + 1 - data);
		data = nl + 1;
	}
	if (n == 0)
		return 0;
	if (reserve(lb, n) < 0)
		return -ENOMEM;
	memcpy(lb->buf + lb->len, data, n);
	lb->len += n;
	/* max + 1: the line may still end in "\r\n", and the '\r' does not count. */
	tail = tail_length(lb, n);
	if (tail > lb->max + 1) {
		lb->len -= tail;
		if (lb->scan > lb->len)
			lb->scan = lb->len;
		lb->discarding = 1;
		lb->overflowed = 1;
		compact(lb);
	}
	return 0;
}

int linebuf_next(struct linebuf *lb, const char **line, size_t *len)
{
	size_t start, end;
	char *nl;

	/* Cheap when everything was taken; otherwise moving bytes waits for the next feed. */
	if (lb->taken == lb->len)
		compact(lb);
	start = lb->taken;
	if (lb->scan < lb->taken)
		lb->scan = lb->taken;
	nl = lb->scan < lb->len ? memchr(lb->buf + lb->scan, '\n', lb->len - lb->scan) : NULL;
	if (!nl) {
		lb->scan = lb->len;
		if (lb->overflowed) {
			lb->overflowed = 0;
			return LINEBUF_TOO_LONG;
		}
		return 0;
	}
	end = (size_t)(nl - lb->buf);
	lb->taken = lb->scan = end + 1;
	if (end > start && lb->buf[end - 1] == '\r')
		end--;
	/* A whole over-long line can arrive within one chunk. */
	if (end - start > lb->max)
		return LINEBUF_TOO_LONG;
	lb->buf[end] = '\0';
	*line = lb->buf + start;
	*len = end - start;
	return LINEBUF_LINE;
}
