/* text.c - text helpers shared by the worker and the supervisor: text with an explicit length
 * (any byte, NUL included), a growing buffer that remembers a failed allocation, the one
 * head-and-tail cut (UTF-8 safe, one marker), and base64 (images travel in it). Pure: no I/O,
 * no globals. Functions return 0 or -ENOMEM; sb_take returns malloc'd text, NULL on ENOMEM. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol_internal.h"

/* What a cut leaves between the head and the tail it keeps; the count is the bytes removed. */
#define CUT_MARKER     "\n... [%" PRIu64 " bytes cut] ...\n"
/* Room for the marker with the longest count: UINT64_MAX has 20 digits. */
#define CUT_MARKER_MAX (sizeof(CUT_MARKER) + 20)
/* A buffer's first allocation, and sb_printf's scratch space. */
#define SB_FIRST_CAP   256

/* ---- Text with a length -------------------------------------------------------------- */

void text_init(struct text *t)
{
	t->s = NULL;
	t->len = 0;
}

void text_clear(struct text *t)
{
	free(t->s);
	text_init(t);
}

void text_take(struct text *t, char *s, size_t n)
{
	free(t->s);
	t->s = s;
	t->len = n;
}

int text_set(struct text *t, const char *s, size_t n)
{
	char *copy;

	if (n == SIZE_MAX)
		return -ENOMEM;
	copy = malloc(n + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, n);
	copy[n] = '\0';
	text_take(t, copy, n);
	return 0;
}

int text_set_str(struct text *t, const char *s)
{
	return text_set(t, s, strlen(s));
}

int text_set_utf8(struct text *t, const char *s, size_t n)
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	size_t i, k, o = 0;
	char *clean;

	if (n > (SIZE_MAX - 1) / 3)
		return -ENOMEM;
	/* Each byte that starts no character becomes 3 bytes at most. */
	clean = malloc(3 * n + 1);
	if (!clean)
		return -ENOMEM;
	for (i = 0; i < n; i += k) {
		k = proto_utf8_seq(p + i, n - i);
		if (k == 0) {
			memcpy(clean + o, replacement, 3);
			o += 3;
			k = 1;
		} else {
			memcpy(clean + o, s + i, k);
			o += k;
		}
	}
	clean[o] = '\0';
	text_take(t, clean, o);
	return 0;
}

void text_returns_collapse(struct text *t)
{
	size_t w = 0, r = 0;

	while (r < t->len) {
		char *nl = memchr(t->s + r, '\n', t->len - r);
		size_t end = nl ? (size_t)(nl - t->s) : t->len, a = r, b = end;

		/* the last segment between returns that holds anything */
		while (b > r && t->s[b - 1] == '\r')
			b--;
		for (a = b; a > r && t->s[a - 1] != '\r'; a--)
			;
		memmove(t->s + w, t->s + a, b - a);
		w += b - a;
		if (nl)
			t->s[w++] = '\n';
		r = nl ? end + 1 : end;
	}
	t->len = w;
	if (t->s)
		t->s[w] = '\0';
}

int text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	text_take(t, s, (size_t)n);
	return 0;
}

/* ---- String buffer ------------------------------------------------------------------- */

void sb_add(struct strbuf *b, const char *s, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->failed)
		return;
	if (n > SIZE_MAX - b->len - 1) {
		b->failed = 1;
		return;
	}
	need = b->len + n + 1;
	if (need > b->cap) {
		cap = b->cap ? b->cap : SB_FIRST_CAP;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		p = realloc(b->s, cap);
		if (!p) {
			b->failed = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sb_str(struct strbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

void sb_text(struct strbuf *b, const struct text *t)
{
	if (t->s)
		sb_add(b, t->s, t->len);
}

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	char tmp[SB_FIRST_CAP], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if ((size_t)n < sizeof(tmp)) {
		sb_add(b, tmp, (size_t)n);
		return;
	}
	/* Longer than the scratch buffer: format again into one of the right size. */
	big = malloc((size_t)n + 1);
	if (!big) {
		b->failed = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_add(b, big, (size_t)n);
	free(big);
}

void sb_newline(struct strbuf *b)
{
	if (b->len > 0 && b->s[b->len - 1] != '\n')
		sb_add(b, "\n", 1);
}

char *sb_take(struct strbuf *b)
{
	char *s = b->s;

	if (b->failed) {
		free(s);
		s = NULL;
	} else if (!s) {
		s = strdup("");
	}
	memset(b, 0, sizeof(*b));
	return s;
}

int sb_take_text(struct strbuf *b, struct text *out)
{
	size_t n = b->len;
	char *s = sb_take(b);

	if (!s)
		return -ENOMEM;
	text_take(out, s, n);
	return 0;
}

/* ---- Head-and-tail cut --------------------------------------------------------------- */

static int utf8_continuation(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* Length of s[0..n) without a partial character at its end. */
static size_t utf8_head_end(const char *s, size_t n)
{
	size_t i = n, need;
	unsigned char lead;

	while (i > 0 && utf8_continuation(s[i - 1]) && n - i < 3)
		i--;
	if (i == 0)
		return n; /* only continuation bytes: not UTF-8, nothing to protect */
	lead = (unsigned char)s[i - 1];
	if (lead < 0x80)
		return i; /* stray continuation bytes after ASCII go too */
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return n - (i - 1) >= need ? n : i - 1;
}

/* Offset of the first character that starts in s[0..n). */
static size_t utf8_tail_start(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && utf8_continuation(s[i]))
		i++;
	return i;
}

static size_t measure(const char *s, size_t n, enum text_measure m)
{
	return m == TEXT_JSON ? proto_escaped_len(s, n) : n;
}

static int marker_print(char buf[CUT_MARKER_MAX], uint64_t count)
{
	return snprintf(buf, CUT_MARKER_MAX, CUT_MARKER, count);
}

/* The marker is a line of its own: the head ends at the end of a line, and the tail starts at
 * the start of one, when one is within LINE_SLACK bytes (a few more bytes go, said in the
 * count); a long line is cut where it is. */
#define LINE_SLACK 160

static size_t head_line_end(const char *s, size_t h)
{
	for (size_t i = h; i > 0 && h - i < LINE_SLACK; i--)
		if (s[i - 1] == '\n')
			return i - 1; /* (its newline too: the marker starts with one) */
	return h;
}

static size_t tail_line_start(const char *s, size_t t, size_t n)
{
	for (size_t i = t; i < n && i - t < LINE_SLACK; i++)
		if (s[i] == '\n')
			return i + 1;
	return t;
}

int text_join_cut(const char *head, size_t head_n, uint64_t gap, const char *tail, size_t tail_n,
                  struct text *out)
{
	size_t h = head_line_end(head, utf8_head_end(head, head_n));
	size_t t = tail_line_start(tail, utf8_tail_start(tail, tail_n), tail_n), mlen, n;
	char marker[CUT_MARKER_MAX], *s;

	mlen = (size_t)marker_print(marker, gap + (head_n - h) + t);
	n = h + mlen + (tail_n - t);
	s = malloc(n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, head, h);
	memcpy(s + h, marker, mlen);
	memcpy(s + h + mlen, tail + t, tail_n - t);
	s[n] = '\0';
	text_take(out, s, n);
	return 0;
}

int text_cut(const char *s, size_t n, size_t max, enum text_measure m, struct text *out)
{
	size_t budget, used = 0, head = 0, tail = n, room, w;
	char marker[CUT_MARKER_MAX];

	if (measure(s, n, m) <= max)
		return text_set(out, s, n);
	/* The marker never counts more than n bytes: its width with n bounds the real one. */
	room = measure(marker, (size_t)marker_print(marker, n), m);
	budget = max >= room ? (max - room) / 2 : max;
	while (head < n && (w = measure(s + head, 1, m)) <= budget - used) {
		used += w;
		head++;
	}
	if (max < room) /* no room for the marker: as much of the head as fits */
		return text_set(out, s, utf8_head_end(s, head));
	budget = max - room - budget;
	used = 0;
	while (tail > head && (w = measure(s + tail - 1, 1, m)) <= budget - used) {
		used += w;
		tail--;
	}
	return text_join_cut(s, head, tail - head, s + tail, n - tail, out);
}

/* ---- base64 ---------------------------------------------------------------------------- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *proto_base64_encode(const unsigned char *s, size_t n)
{
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
		             (i + 2 < n ? s[i + 2] : 0);
		*o++ = b64_alphabet[v >> 18 & 63];
		*o++ = b64_alphabet[v >> 12 & 63];
		*o++ = i + 1 < n ? b64_alphabet[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64_alphabet[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;

	return p ? (int)(p - b64_alphabet) : -1;
}

int proto_base64_decode(const char *t, size_t n, unsigned char **out, size_t *len)
{
	unsigned char *buf;
	size_t o = 0;

	if (n % 4 != 0)
		return -EINVAL;
	buf = malloc(n / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i += 4) {
		int last = i + 4 == n, pad = last ? (t[i + 3] == '=') + (t[i + 2] == '=') : 0;
		int a = b64_value(t[i]), b = b64_value(t[i + 1]);
		int c = pad >= 2 ? 0 : b64_value(t[i + 2]), d = pad >= 1 ? 0 : b64_value(t[i + 3]);
		uint32_t v;
		if (a < 0 || b < 0 || c < 0 || d < 0 || (pad == 1 && t[i + 2] == '=')) {
			free(buf);
			return -EINVAL;
		}
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		/* Canonical: the bits the padding leaves out are zero. */
		if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff))) {
			free(buf);
			return -EINVAL;
		}
		buf[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			buf[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			buf[o++] = (unsigned char)v;
	}
	*out = buf;
	*len = o;
	return 0;
}
