/* failalloc.c - which allocations of safepy-failalloc fail (failalloc.h): a count, and the
 * schedule SAFEPY_FAILALLOC gives. The supervisor is single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failalloc.h"

static int ready, armed;
static long every, after, most, seen, failed;

static void report(void)
{
	fprintf(stderr, "failalloc: %ld of %ld allocations failed\n", failed, seen);
}

static void parse(void)
{
	const char *s = getenv("SAFEPY_FAILALLOC");

	ready = 1;
	while (s && *s) {
		const char *eq = strchr(s, '=');
		long v = eq ? strtol(eq + 1, NULL, 10) : 0;
		if (strncmp(s, "every=", 6) == 0)
			every = v;
		else if (strncmp(s, "after=", 6) == 0)
			after = v;
		else if (strncmp(s, "max=", 4) == 0)
			most = v;
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	if (every > 0)
		atexit(report);
}

void failalloc_arm(void)
{
	if (!ready)
		parse();
	armed = 1;
}

int failalloc_fail(void)
{
	if (!armed || every <= 0)
		return 0;
	if (++seen <= after || (most > 0 && failed >= most) || seen % every != 0)
		return 0;
	failed++;
	return 1;
}
