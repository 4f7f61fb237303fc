/* log.c - leveled log lines on stderr. stdout belongs to JSON-RPC alone. A line never blocks
 * the server: stderr is written without waiting (a client that never reads the pipe it gave
 * as stderr would otherwise stop the event loop, its deadlines and its signals), and lines that
 * find it full are dropped and counted; the next line that goes out says how many. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"

static enum log_level threshold = LOG_INFO;
static void (*sink_fn)(enum log_level l, const char *text);
static int in_sink;
static int log_fd = STDERR_FILENO; /* stderr, or our own non-blocking open of its pipe */
static int log_socket;             /* stderr is a socket: sent without waiting */
static unsigned long dropped;      /* lines that found stderr full since the last one out */

void log_open(void)
{
	struct stat st;
	char path[64];
	int fd;

	if (fstat(STDERR_FILENO, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		log_socket = 1;
		return;
	}
	if (!S_ISFIFO(st.st_mode))
		return; /* a file or a terminal */
	/* Our own open of the pipe: O_NONBLOCK on it touches no other process's stderr. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", STDERR_FILENO);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		log_fd = fd;
}

/* Write a whole line (at most PIPE_BUF bytes: a pipe takes it whole or not at all). */
static int put(const char *s, size_t len)
{
	ssize_t n;

	do
		n = log_socket ? send(STDERR_FILENO, s, len, MSG_DONTWAIT | MSG_NOSIGNAL)
		               : write(log_fd, s, len);
	while (n < 0 && errno == EINTR);
	return n > 0 ? 0 : -1;
}

static void emit(const char *line, size_t len)
{
	if (dropped) {
		char note[128];
		int k = snprintf(note, sizeof(note),
		                 "safepy: warn: %lu log lines were dropped (stderr was not read)\n",
		                 dropped);
		if (put(note, (size_t)k) < 0) {
			dropped++;
			return;
		}
		dropped = 0;
	}
	if (put(line, len) < 0)
		dropped++;
}

void log_set_level(enum log_level l)
{
	threshold = l;
}

void log_set_sink(void (*sink)(enum log_level l, const char *text))
{
	sink_fn = sink;
}

/* The bytes of a character that could make one log line look like several, or hide what it
 * says on a terminal (control characters, C1 controls, bidirectional overrides), at s: their
 * number, or 0 for any other. */
static size_t unprintable(const unsigned char *s)
{
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 1;
	if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	if (s[0] == 0xe2 && ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
	                     (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)))
		return 3;
	return 0;
}

/* in with each such character written as \xNN escapes (a name a call chose, logged as it is,
 * could otherwise forge a line of the server's log), into out[0..cap), NUL-terminated. */
void log_escape(const char *in, char *out, size_t cap)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, k;

	while (*s) {
		k = unprintable(s);
		if (k == 0) {
			if (o + 1 >= cap)
				break;
			out[o++] = (char)*s++;
			continue;
		}
		if (o + 4 * k >= cap)
			break;
		for (; k > 0; k--, s++)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *s);
	}
	out[o] = '\0';
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	char text[2048], line[2048];
	va_list ap;
	int n;
	size_t len;

	if (l > threshold && !sink_fn)
		return;
	n = snprintf(line, sizeof(line), "safepy: %s: ", names[l]);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(line))
		log_escape(text, line + n, sizeof(line) - (size_t)n);
	if (l <= threshold) {
		len = strnlen(line, sizeof(line) - 2);
		line[len] = '\n';
		emit(line, len + 1);
		line[len] = '\0';
	}
	/* A sink that logs must not feed itself. */
	if (sink_fn && !in_sink && n > 0 && (size_t)n < sizeof(line)) {
		in_sink = 1;
		sink_fn(l, line + n);
		in_sink = 0;
	}
}
