/* test_salvage.c - unit tests of supervisor/salvage.c: what a runner printed, read from its
 * memory. A child process holds keeps laid out as an honest or a hostile runner could leave
 * them; the test reads them as the supervisor does (process_vm_readv), after wiping its own
 * copies, so that only the child's memory can answer. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_internal.h"

/* --max-output of these cases: each stream keeps 32 bytes at each end, the log 64. */
#define MAX_OUTPUT 64
#define HALF       32

static struct ipc_capture_keep keeps[IPC_CAPTURE_KEEPS];
static char heads[IPC_CAPTURE_KEEPS][MAX_OUTPUT], rings[IPC_CAPTURE_KEEPS][MAX_OUTPUT];
static pid_t child;

/* An honest keep of stream s holding text (it fits in the head). */
static void honest(int s, const char *text)
{
	size_t n = strlen(text);

	keeps[s] = (struct ipc_capture_keep){
	    .half = ipc_capture_half(MAX_OUTPUT, s),
	    .head = heads[s],
	    .head_len = n,
	    .ring = rings[s],
	    .total = n,
	};
	memcpy(heads[s], text, n);
}

static void all_honest(void)
{
	honest(IPC_CAPTURE_STDOUT, "out\n");
	honest(IPC_CAPTURE_STDERR, "err\n");
	honest(IPC_CAPTURE_LOG, "out\nerr\n");
}

/* Fork the child that holds the keeps as they are now, then wipe the test's own copies. */
static void hold(void)
{
	int p[2];
	char c;

	cr_assert_eq(pipe(p), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(p[0]);
		(void)!write(p[1], "r", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	memset(keeps, 0, sizeof(keeps));
	memset(heads, 0, sizeof(heads));
	memset(rings, 0, sizeof(rings));
}

static void release(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = 0;
	}
}

TestSuite(salvage, .fini = release);

/* salvage_read of the child's keeps into out (filled with stale text first). */
static int read_child(struct text out[IPC_CAPTURE_KEEPS], int *cut)
{
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++) {
		text_init(&out[s]);
		cr_assert_eq(text_set_str(&out[s], "stale"), 0);
	}
	*cut = 0;
	return salvage_read(child, (uintptr_t)keeps, MAX_OUTPUT, out, cut);
}

static void assert_text(const struct text *t, const char *want, size_t n)
{
	cr_assert_eq(t->len, n, "%zu bytes: %.*s", t->len, (int)t->len, t->s ? t->s : "");
	cr_assert_eq(memcmp(t->s, want, n), 0, "%.*s", (int)t->len, t->s);
}

static void assert_empty(struct text out[IPC_CAPTURE_KEEPS])
{
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++)
		cr_assert_null(out[s].s, "stream %d kept %.*s", s, (int)out[s].len, out[s].s);
}

Test(salvage, each_stream_comes_back_from_the_runners_memory)
{
	struct text out[IPC_CAPTURE_KEEPS];
	int cut;

	all_honest();
	hold();
	cr_assert_eq(read_child(out, &cut), 0);
	assert_text(&out[IPC_CAPTURE_STDOUT], "out\n", 4);
	assert_text(&out[IPC_CAPTURE_STDERR], "err\n", 4);
	assert_text(&out[IPC_CAPTURE_LOG], "out\nerr\n", 8);
	cr_assert_eq(cut, 0);
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++)
		text_clear(&out[s]);
}

Test(salvage, a_stream_whose_middle_went_is_its_head_a_marker_and_its_ring_oldest_first)
{
	struct text out[IPC_CAPTURE_KEEPS];
	const char *o;
	int cut;

	all_honest();
	memset(heads[0], 'h', HALF);
	/* the ring wrapped: its oldest byte is at ring_pos */
	memcpy(rings[0], "0123456789abcdefghijklmnopqrstuv", HALF);
	keeps[0].head_len = HALF;
	keeps[0].ring_pos = 10;
	keeps[0].ring_len = HALF;
	keeps[0].total = 1000;
	hold();
	cr_assert_eq(read_child(out, &cut), 0);
	o = out[0].s;
	cr_assert_eq(cut, 1);
	cr_assert_eq(strspn(o, "h"), HALF, "%s", o);
	cr_assert_not_null(strstr(o, "[936 bytes cut]"), "%s", o);
	cr_assert_str_eq(o + out[0].len - HALF, "abcdefghijklmnopqrstuv0123456789", "%s", o);
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++)
		text_clear(&out[s]);
}

Test(salvage, bytes_that_are_not_utf8_become_replacement_characters_and_returns_collapse)
{
	struct text out[IPC_CAPTURE_KEEPS];
	int cut;

	all_honest();
	honest(IPC_CAPTURE_STDOUT, "\xff ok\xc3\nbar 1\rbar 2\n");
	hold();
	cr_assert_eq(read_child(out, &cut), 0);
	assert_text(&out[0], "\xef\xbf\xbd ok\xef\xbf\xbd\nbar 2\n", 16);
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++)
		text_clear(&out[s]);
}

Test(salvage, forged_lengths_and_positions_read_no_more_than_a_keep_holds)
{
	struct text out[IPC_CAPTURE_KEEPS];
	int cut;

	all_honest();
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++) {
		memset(heads[s], 'x', sizeof(heads[s]));
		memset(rings[s], 'y', sizeof(rings[s]));
		keeps[s].head_len = (size_t)1 << 62;
		keeps[s].ring_len = (size_t)1 << 62;
		keeps[s].ring_pos = ((size_t)1 << 63) | 5;
	}
	keeps[0].total = 1;          /* fewer bytes written than kept */
	keeps[1].total = UINT64_MAX; /* more than any call writes */
	hold();
	cr_assert_eq(read_child(out, &cut), 0);
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++) {
		size_t half = ipc_capture_half(MAX_OUTPUT, s);
		cr_assert_leq(out[s].len, 2 * half + 64, "stream %d: %zu bytes", s, out[s].len);
		cr_assert_eq(strspn(out[s].s, "x"), half, "%s", out[s].s);
	}
	cr_assert_eq(out[0].len, 2 * HALF, "%s", out[0].s);
	cr_assert_not_null(strstr(out[1].s, " bytes cut]"), "%s", out[1].s);
	cr_assert_eq(cut, 1);
	for (int s = 0; s < IPC_CAPTURE_KEEPS; s++)
		text_clear(&out[s]);
}

Test(salvage, keeps_of_another_size_give_nothing)
{
	struct text out[IPC_CAPTURE_KEEPS];
	int cut;

	all_honest();
	keeps[IPC_CAPTURE_LOG].half = 1u << 30;
	hold();
	cr_assert_eq(read_child(out, &cut), -EPROTO);
	assert_empty(out);
}

Test(salvage, addresses_that_are_not_mapped_give_nothing)
{
	struct text out[IPC_CAPTURE_KEEPS];
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int cut;

	cr_assert_neq(gone, MAP_FAILED);
	cr_assert_eq(munmap(gone, 4096), 0);
	all_honest();
	keeps[IPC_CAPTURE_STDERR].head = gone;
	hold();
	cr_assert_eq(read_child(out, &cut), -EFAULT);
	assert_empty(out);
	release();

	all_honest();
	keeps[IPC_CAPTURE_STDOUT].ring = (char *)8;
	keeps[IPC_CAPTURE_STDOUT].ring_len = 1;
	keeps[IPC_CAPTURE_STDOUT].total = 5;
	hold();
	cr_assert_eq(read_child(out, &cut), -EFAULT);
	assert_empty(out);

	cr_assert_eq(salvage_read(child, (uintptr_t)gone, MAX_OUTPUT, out, &cut), -EFAULT);
	assert_empty(out);
	cr_assert_eq(salvage_read(child, 0, MAX_OUTPUT, out, &cut), -ENOENT);
	release();
	/* a runner already gone */
	cr_assert_eq(read_child(out, &cut), -EFAULT);
	assert_empty(out);
}
