/* test_lifetimes.c - the lifetimes of the engine's objects (calls, sessions, chains, the zygote)
 * where they end early: eviction, cancellation before a call starts, the failure of a session's
 * first call, the zygote killed as it starts. Several requests arrive in one write, so one turn
 * of the server's loop handles them together. The sanitizer build runs this suite with an ASan
 * supervisor (and a plain zygote): a use after free aborts the server, a leak makes its exit
 * status non-zero, and every test ends by checking the server exits with status 0. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define VERSION "2025-11-25"
#define MAXP    256
/* An ASan server takes longer to exit (LeakSanitizer looks at the whole heap). */
#define EXIT_MS 15000

TestSuite(lifetimes, .timeout = 120, .fini = e2e_cleanup);

/* ---- Helpers -------------------------------------------------------------------------- */

/* One tools/call line for run_python (no newline), with request id id and the arguments
 * {"code": code} plus the members of extra (a JSON object text, or NULL). */
static const char *call_line(int64_t id, const char *code, const char *extra)
{
	json_object *msg = json_object_new_object(), *params = json_object_new_object();
	json_object *args = extra ? json_tokener_parse(extra) : json_object_new_object();
	const char *line;

	cr_assert_not_null(args, "bad extra arguments: %s", extra);
	json_object_object_add(args, "code", json_object_new_string(code));
	json_object_object_add(params, "name", json_object_new_string("run_python"));
	json_object_object_add(params, "arguments", args);
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_new_int64(id));
	json_object_object_add(msg, "method", json_object_new_string("tools/call"));
	json_object_object_add(msg, "params", params);
	line = e2e_fmt("%s", json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
	json_object_put(msg);
	return line;
}

static const char *cancel_line(int64_t id)
{
	return e2e_fmt("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	               "\"params\":{\"requestId\":%lld}}",
	               (long long)id);
}

/* A fresh request id (the client's counter moves on with it). */
static int64_t next_id(void)
{
	return e2e_srv.next_id++;
}

/* Send lines (NULL-terminated) in a single write. */
static void send_together(const char *const *lines)
{
	const char *all = "";

	for (size_t i = 0; lines[i]; i++)
		all = e2e_fmt("%s%s\n", all, lines[i]);
	cr_assert_eq(mcpc_send_raw(&e2e_srv, all, strlen(all)), 0, "cannot write to the server");
}

#define TOGETHER(...) send_together((const char *const[]){__VA_ARGS__, NULL})

/* The answer to request id, within ms. */
static json_object *answer(int64_t id, int ms)
{
	json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, ms));

	cr_assert_not_null(r, "no answer to request %lld; log:\n%s", (long long)id, e2e_log());
	cr_assert_not_null(mcpc_structured(r), "not a tool result: %s", mcpc_json(r));
	return r;
}

/* A ping answered after everything sent before it was handled; then id was never answered. */
static void never_answered(int64_t id)
{
	cr_assert_not_null(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000)), "no ping answer");
	cr_assert_not(e2e_seen(id, 300), "cancelled request %lld was answered", (long long)id);
}

/* The server's processes once steady (the zygote, and two per session that holds state). */
static int steady_procs(void)
{
	struct mcpc_proc p[MAXP];

	e2e_steady_descendants(5000);
	return e2e_descendants(p, MAXP);
}

/* End the server: it exits with status 0 (a sanitizer report would make it fail) and leaves
 * no process behind. */
static void stop_clean(void)
{
	struct mcpc_proc p[MAXP];
	int n = e2e_descendants(p, MAXP);

	e2e_finish(&e2e_srv, EXIT_MS);
	cr_assert_eq(mcpc_wait_procs_gone(p, n, 3000), 0, "a process outlived the server");
	mcpc_free(&e2e_srv);
	e2e_release();
}

/* ---- Eviction ----------------------------------------------------------------------------- */

/* With room for one session, a session busy with a call and a new session whose first call
 * runs out of memory, both in one write: the busy session cannot be evicted, the new one
 * rolls back; the next new session evicts what is idle. */
Test(lifetimes, one_session_of_room_busy_call_and_new_session_out_of_memory)
{
	const char *a;
	int64_t busy, big;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--max-sessions", "1", "--prefork", "0"), NULL);
	a = e2e_fmt("%s", mcpc_sc_str(e2e_expect_status("x = 1", "{\"session\":\"new\"}", "ok"),
	                              "session"));
	busy = next_id();
	big = next_id();
	TOGETHER(
	    call_line(busy, "import time\ntime.sleep(0.5)\nx", e2e_fmt("{\"session\":\"%s\"}", a)),
	    call_line(big, "x = [0] * 10**9", "{\"session\":\"new\"}"));
	r = answer(big, 30000);
	cr_assert_str_eq(mcpc_status(r), "memory_limit", "%s", mcpc_json(r));
	r = answer(busy, 30000);
	e2e_assert_result(r, "x", "1");
	/* The new session's rollback left it empty; a and it are idle: the next one evicts. */
	r = e2e_call("y = 2", "{\"session\":\"new\"}");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	r = e2e_call("x", e2e_fmt("{\"session\":\"%s\"}", a));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError", "a was not evicted: %s",
	                 mcpc_json(r));
	cr_assert_leq(steady_procs(), 3, "the zygote and one session's two processes");
	stop_clean();
}

/* A call queued for a worker while the session whose room it needs is evicted. */
Test(lifetimes, eviction_while_calls_are_queued)
{
	const char *idle;
	int64_t ids[4];
	json_object *r;

	e2e_start_with(VERSION, ARGS("--max-sessions", "1", "--max-workers", "1", "--prefork", "0"),
	               NULL);
	idle =
	    e2e_fmt("%s", mcpc_sc_str(e2e_expect_status("kept = 1", "{\"session\":\"new\"}", "ok"),
	                              "session"));
	for (int i = 0; i < 4; i++)
		ids[i] = next_id();
	TOGETHER(call_line(ids[0], "import time\ntime.sleep(0.3)\n0", "{\"session\":\"new\"}"),
	         call_line(ids[1], "1", "{\"session\":\"new\"}"),
	         call_line(ids[2], "kept", e2e_fmt("{\"session\":\"%s\"}", idle)),
	         call_line(ids[3], "3", "{\"session\":\"new\"}"));
	for (int i = 0; i < 4; i++) {
		r = answer(ids[i], 30000);
		if (i == 2)
			cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError",
			                 "the idle session was not evicted: %s", mcpc_json(r));
		else
			e2e_assert_result(r, "n", e2e_fmt("%d", i));
	}
	cr_assert_leq(steady_procs(), 1 + 2 * 3, "more processes than three sessions hold");
	stop_clean();
}

/* ---- Cancellation before start -------------------------------------------------------------- */

/* Call A, call B and a cancellation of B in one write, ten times, with room for two sessions:
 * B never runs and is never answered; nothing is left of it. */
Test(lifetimes, call_call_and_cancel_in_one_write)
{
	e2e_start_with(VERSION, ARGS("--max-sessions", "2", "--prefork", "0"), NULL);
	for (int i = 0; i < 10; i++) {
		int64_t a = next_id(), b = next_id();

		TOGETHER(call_line(a, e2e_fmt("%d", i), "{\"session\":\"new\"}"),
		         call_line(b, "import time\ntime.sleep(10)", "{\"session\":\"new\"}"),
		         cancel_line(b));
		e2e_assert_result(answer(a, 30000), "i", e2e_fmt("%d", i));
		never_answered(b);
		cr_assert_leq(steady_procs(), 1 + 2 * 2,
		              "round %d: more processes than two "
		              "sessions hold",
		              i);
	}
	stop_clean();
}

/* A call queued behind another (no worker free, or its session busy) and cancelled there:
 * it never runs, its session goes on. */
Test(lifetimes, cancellation_before_start)
{
	const char *s;
	int64_t busy, queued, same, after;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--max-workers", "1", "--prefork", "0"), NULL);
	s = e2e_fmt("%s", mcpc_sc_str(e2e_expect_status("n = 0", "{\"session\":\"new\"}", "ok"),
	                              "session"));
	busy = next_id();
	queued = next_id();
	same = next_id();
	after = next_id();
	TOGETHER(call_line(busy, "import time\ntime.sleep(0.3)\nn += 1\nn",
	                   e2e_fmt("{\"session\":\"%s\"}", s)),
	         call_line(queued, "print('RAN')", "{\"session\":\"new\"}"),
	         call_line(same, "n += 100", e2e_fmt("{\"session\":\"%s\"}", s)),
	         cancel_line(queued), cancel_line(same),
	         call_line(after, "n", e2e_fmt("{\"session\":\"%s\"}", s)));
	e2e_assert_result(answer(busy, 30000), "n", "1");
	r = answer(after, 30000);
	e2e_assert_result(r, "n", "1");
	never_answered(queued);
	never_answered(same);
	cr_assert_null(strstr(e2e_log(), "RAN"), "a cancelled call ran");
	stop_clean();
}

/* A reset cancelled before it starts (its fresh worker still booting, or just started)
 * leaves the session as it was. */
Test(lifetimes, reset_cancelled_before_start_keeps_the_state)
{
	e2e_start_with(VERSION, ARGS("--prefork", "0"), NULL);
	for (int i = 0; i < 6; i++) {
		const char *h = e2e_fmt(
		    "%s", mcpc_sc_str(e2e_expect_status("x = 'old'", "{\"session\":\"new\"}", "ok"),
		                      "session"));
		const char *args = e2e_fmt("{\"session\":\"%s\"}", h);
		int64_t id = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(1)\nx = 'reset'",
		                             e2e_fmt("{\"session\":\"%s\",\"reset\":true}", h));

		usleep(1000 * (i % 3));
		e2e_cancel(id);
		never_answered(id);
		e2e_assert_result(e2e_call("x", args), "x", "\"old\"");
	}
	stop_clean();
}

/* ---- Failure of a first call ---------------------------------------------------------------- */

/* A new session's first call fails in each way a call can: the session stays, empty. */
Test(lifetimes, failure_of_a_first_call)
{
	static const struct {
		const char *code, *extra, *status;
	} fails[] = {
	    {"x = 1\nwhile True:\n    pass", "\"timeout_seconds\":0.3", "timeout"},
	    {"x = 1\ny = [0] * 10**9", NULL, "memory_limit"},
	    {"x = 1\nimport os\nos._exit(3)", NULL, "crashed"},
	    {"x = 1\nimport os\nos.kill(os.getpid(), 9)", NULL, "sandbox_violation"},
	};

	e2e_start_with(VERSION,
	               ARGS("--unsafe-no-python-layer", "--allow-import", "os", "--prefork", "0"),
	               NULL);
	for (size_t i = 0; i < sizeof(fails) / sizeof(fails[0]); i++) {
		const char *extra = fails[i].extra
		                        ? e2e_fmt("{\"session\":\"new\",%s}", fails[i].extra)
		                        : "{\"session\":\"new\"}";
		json_object *r = e2e_call(fails[i].code, extra);
		const char *h = mcpc_sc_str(r, "session");

		cr_assert_str_eq(mcpc_status(r), fails[i].status, "%s\n%s", fails[i].code,
		                 mcpc_json(r));
		cr_assert_not_null(h, "%s", mcpc_json(r));
		e2e_assert_result(e2e_call("'x' in globals()", e2e_fmt("{\"session\":\"%s\"}", h)),
		                  "x in globals", "false");
	}
	/* A first call cancelled while it runs. */
	{
		int64_t id = mcpc_call_async(&e2e_srv, "import time\nx = 1\ntime.sleep(10)",
		                             "{\"session\":\"new\"}");
		usleep(200000);
		e2e_cancel(id);
		never_answered(id);
	}
	cr_assert_leq(steady_procs(), 1 + 2 * 4, "more processes than four sessions hold");
	stop_clean();
}

/* ---- The zygote killed as it starts ----------------------------------------------------------- */

/* The server's first child (the zygote) as soon as it exists; 0 if none within ms. */
static pid_t first_child(int ms)
{
	int64_t until = mcpc_now_ms() + ms;

	while (mcpc_now_ms() < until) {
		struct mcpc_proc p[MAXP];
		int n = e2e_descendants(p, MAXP);

		if (n > 0)
			return p[0].pid;
		usleep(500);
	}
	return 0;
}

/* A zygote killed from outside, even before it is ready, is not a zygote that cannot start:
 * it is started again at once, and calls do not fail for it. */
Test(lifetimes, zygote_killed_as_it_starts)
{
	json_object *r;
	char *log;

	cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_BIN, ARGS("--prefork", "1"), NULL), 0);
	/* Kill each zygote as soon as it appears, three times. */
	for (int i = 0; i < 3; i++) {
		pid_t z = first_child(5000);

		cr_assert_gt(z, 0, "no zygote appeared");
		cr_assert_eq(kill(z, SIGKILL), 0);
		usleep(100000);
	}
	log = mcpc_stderr(&e2e_srv);
	cr_assert_null(strstr(log, "failed to start"),
	               "a killed zygote counted as one that cannot "
	               "start:\n%s",
	               log);
	cr_assert(strstr(log, "exited (killed by signal 9); restarting it"), "%s", log);
	free(log);
	r = e2e_hold(mcpc_initialize(&e2e_srv, VERSION));
	cr_assert_not_null(mcpc_result(r), "initialize failed: %s", mcpc_json(r));
	for (int i = 0; i < 5; i++)
		e2e_expect_result("1 + 1", "2");
	stop_clean();
}
