/* log.c - leveled log lines on stderr. stdout belongs to JSON-RPC alone. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "supervisor.h"

static enum log_level threshold = LOG_INFO;
static void (*sink_fn)(enum log_level l, const char *text);
static int in_sink;

void log_set_level(enum log_level l)
{
	threshold = l;
}

void log_set_sink(void (*sink)(enum log_level l, const char *text))
{
	sink_fn = sink;
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	char line[2048];
	va_list ap;
	int n;

	if (l > threshold && !sink_fn)
		return;
	n = snprintf(line, sizeof(line), "safepy: %s: ", names[l]);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (l <= threshold)
		fprintf(stderr, "%s\n", line);
	/* A sink that logs must not feed itself. */
	if (sink_fn && !in_sink && n > 0 && (size_t)n < sizeof(line)) {
		in_sink = 1;
		sink_fn(l, line + n);
		in_sink = 0;
	}
}
