/* fuzz_linebuf.c - the line framing of the client's stream (linebuf), against a plain
 * reference: the input is fed in chunks whose size comes from its first byte, and what comes
 * out must be the stream's lines in order ('\r' before '\n' removed), with each line longer
 * than the limit reported once instead: when it is complete, or as soon as what arrived of it
 * is too long (the rest of it is then dropped). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

#define MAX 64

/* The reference reads s[0..fed): its next line starts at *pos; skip: the line at *pos was
 * reported too long before it ended, and its rest is gone. */
struct ref {
	const char *s;
	size_t pos;
	int skip;
};

/* Length of the line at r->pos when it ends before fed ('\r' removed), else SIZE_MAX. */
static size_t ref_line(struct ref *r, size_t fed, size_t *next)
{
	const char *nl = memchr(r->s + r->pos, '\n', fed - r->pos);
	size_t l;

	if (!nl)
		return SIZE_MAX;
	l = (size_t)(nl - (r->s + r->pos));
	*next = r->pos + l + 1;
	if (l > 0 && r->s[r->pos + l - 1] == '\r')
		l--;
	return l;
}

static void check(struct ref *r, size_t fed, int got, const char *line, size_t len)
{
	size_t l, next;

	if (r->skip) {
		/* linebuf went on after the dropped rest: that line ended before fed. */
		l = ref_line(r, fed, &next);
		assert(l != SIZE_MAX);
		r->pos = next;
		r->skip = 0;
	}
	l = ref_line(r, fed, &next);
	if (got == LINEBUF_LINE) {
		assert(l != SIZE_MAX && l <= MAX);
		assert(len == l && memcmp(line, r->s + r->pos, l) == 0 && line[len] == '\0');
		r->pos = next;
	} else if (l != SIZE_MAX) {
		assert(l > MAX);
		r->pos = next;
	} else {
		assert(fed - r->pos > MAX + 1); /* reported before its end */
		r->skip = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct linebuf lb;
	struct ref r = {0};
	const char *line = NULL;
	size_t n, off = 0, len = 0, chunk, l, next;
	int got;

	if (size < 1)
		return 0;
	chunk = 1 + data[0] % 97;
	r.s = (const char *)data + 1;
	n = size - 1;
	linebuf_init(&lb, MAX);
	while (off < n) {
		size_t k = n - off < chunk ? n - off : chunk;

		assert(linebuf_feed(&lb, r.s + off, k) == 0);
		off += k;
		while ((got = linebuf_next(&lb, &line, &len)) != 0)
			check(&r, off, got, line, len);
		/* Memory stays within the longest line accepted and one feed. */
		assert(lb.cap <= MAX + 2 + chunk);
	}
	/* Everything complete came out. */
	if (!r.skip) {
		l = ref_line(&r, n, &next);
		assert(l == SIZE_MAX);
	}
	linebuf_clear(&lb);
	return 0;
}
