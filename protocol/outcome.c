/* outcome.c - struct run_outcome: its statuses and their names, init and clear.
 * The worker's encoding of an outcome is the wire's (ipc/). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocol_internal.h"

static const char *const status_names[] = {
    [RUN_OK] = "ok",
    [RUN_ERROR] = "error",
    [RUN_TIMEOUT] = "timeout",
    [RUN_MEMORY_LIMIT] = "memory_limit",
    [RUN_OUTPUT_LIMIT] = "output_limit",
    [RUN_CANCELLED] = "cancelled",
    [RUN_CRASHED] = "crashed",
    [RUN_SANDBOX_VIOLATION] = "sandbox_violation",
};

#define NSTATUS (sizeof(status_names) / sizeof(status_names[0]))

const char *run_status_name(enum run_status s)
{
	assert((size_t)s < NSTATUS);
	/* Out of range only through a bug; "crashed" keeps the result an error that validates. */
	return (size_t)s < NSTATUS ? status_names[s] : "crashed";
}

void run_outcome_init(struct run_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->status = RUN_OK;
}

void run_outcome_clear(struct run_outcome *o)
{
	text_clear(&o->stdout_text);
	text_clear(&o->stderr_text);
	text_clear(&o->logs);
	json_object_put(o->result);
	text_clear(&o->result_repr);
	text_clear(&o->error_type);
	text_clear(&o->error_message);
	text_clear(&o->error_traceback);
	free(o->session);
	for (size_t i = 0; i < o->n_files; i++) {
		free(o->files[i].path);
		free(o->files[i].text);
	}
	free(o->files);
	run_outcome_init(o);
}

int run_status_parse(const char *s, size_t n, enum run_status *out)
{
	for (size_t i = 0; i < NSTATUS; i++) {
		if (strlen(status_names[i]) == n && memcmp(status_names[i], s, n) == 0) {
			*out = (enum run_status)i;
			return 0;
		}
	}
	return -EINVAL;
}
