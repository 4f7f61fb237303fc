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
	for (size_t i = 0; i < o->n_images; i++)
		free(o->images[i].png);
	free(o->images);
	run_outcome_init(o);
}

int run_image_png_size(const unsigned char *png, size_t n, uint32_t *width, uint32_t *height)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	uint32_t w, h;

	/* signature, then the first chunk: length 13, "IHDR", width and height (big-endian) */
	if (n < 24 || memcmp(png, sig, 8) != 0 || memcmp(png + 8, "\0\0\0\15IHDR", 8) != 0)
		return -EINVAL;
	w = (uint32_t)png[16] << 24 | (uint32_t)png[17] << 16 | (uint32_t)png[18] << 8 | png[19];
	h = (uint32_t)png[20] << 24 | (uint32_t)png[21] << 16 | (uint32_t)png[22] << 8 | png[23];
	if (w == 0 || h == 0)
		return -EINVAL;
	*width = w;
	*height = h;
	return 0;
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
