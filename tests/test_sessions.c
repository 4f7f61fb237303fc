/* test_sessions.c - end-to-end tests of sessions (state kept between run_python calls) against
 * the real safepy binary over MCP stdio: handles, what persists, rollback of failed calls,
 * ordering, eviction and expiry, reset, that user code never creates a process, and that no
 * process outlives the server. Each test starts its own server and, at its end, checks that
 * every line the server wrote on stdout was a JSON-RPC message. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* The protocol version these tests speak. */
#define VERSION          "2025-06-18"
/* The kernel layer alone: the Python layer off, so code can reach os and ctypes. */
#define UNSAFE_ARGS      "--unsafe-no-python-layer", "--allow-import", "os", "--allow-import", "ctypes"
/* What the SessionError message tells the client to do. */
#define HOW_TO_START_ONE "session \"new\""
/* random.seed(42); random.random() in CPython (Mersenne Twister, version 2 seeding). */
#define SEED42_FIRST     "0.6394267984578837"

TestSuite(sessions, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_state, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_rollback, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_order, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_limits, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_reset, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_processes, .timeout = 60, .fini = e2e_cleanup);
TestSuite(session_cli, .timeout = 60, .fini = e2e_cleanup);

/* ---- Harness ------------------------------------------------------------------------------ */

/* Extra arguments naming a session (NULL: the default session) and any more members
 * (a JSON members text such as "\"reset\":true", or NULL). */
static const char *extra(const char *session, const char *more)
{
	if (!session && !more)
		return NULL;
	if (!session)
		return e2e_fmt("{%s}", more);
	return e2e_fmt("{\"session\":\"%s\"%s%s}", session, more ? "," : "", more ? more : "");
}

/* A call in session (NULL: the default session) that must come back as a tool result within
 * ms. */
static json_object *call_full(const char *session, const char *more, const char *code, int ms)
{
	return e2e_call_on(&e2e_srv, code, extra(session, more), ms);
}

static json_object *call_in(const char *session, const char *code)
{
	return call_full(session, NULL, code, E2E_CALL_MS);
}

static json_object *expect_status_in(const char *session, const char *more, const char *code,
                                     const char *status)
{
	return e2e_expect_status(code, extra(session, more), status);
}

/* The call ran in the session it named (or, for the default session, in some session). */
static void check_handle(json_object *r, const char *session)
{
	const char *h = mcpc_sc_str(r, "session");

	cr_assert_not_null(h, "no structuredContent.session: %s", mcpc_json(r));
	cr_assert_geq(strlen(h), 32, "handle too short: %s", mcpc_json(r));
	if (session && strcmp(session, "new") != 0)
		cr_assert_str_eq(h, session, "ran in another session: %s", mcpc_json(r));
}

static json_object *ok_in(const char *session, const char *code)
{
	json_object *r = expect_status_in(session, NULL, code, "ok");

	check_handle(r, session);
	return r;
}

static void expect_result_in(const char *session, const char *code, const char *json)
{
	e2e_assert_result(ok_in(session, code), code, json);
}

static json_object *expect_error_in(const char *session, const char *code, const char *type)
{
	json_object *r = expect_status_in(session, NULL, code, "error");

	cr_assert_str_eq(mcpc_err_str(r, "type"), type, "error type for:\n%s\n%s", code,
	                 mcpc_json(r));
	check_handle(r, session);
	return r;
}

/* Start a new session with code that must succeed, and put it in use (a second call, None:
 * from then on a process waits forked ahead for its next call); returns its handle. */
static const char *new_session(const char *code)
{
	json_object *r = expect_status_in("new", NULL, code, "ok");
	const char *h = mcpc_sc_str(r, "session");

	cr_assert_not_null(h, "a new session's call carries no handle: %s", mcpc_json(r));
	cr_assert_geq(strlen(h), 32, "handle too short: %s", mcpc_json(r));
	cr_assert_str_neq(h, "new", "%s", mcpc_json(r));
	h = e2e_fmt("%s", h);
	expect_status_in(h, NULL, "None", "ok");
	return h;
}

/* A failed call's message says the session is unchanged. */
static void says_unchanged(json_object *r)
{
	cr_assert(strstr(mcpc_err_str(r, "message"), "unchanged"),
	          "the message of a rolled-back call does not say the session is unchanged: %s",
	          mcpc_json(r));
}

static void expect_session_error(const char *session, const char *code)
{
	json_object *r = call_in(session, code);

	cr_assert(e2e_is_error(r), "a call in session %s ran: %s", session, mcpc_json(r));
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), HOW_TO_START_ONE),
	          "the message does not say how to start a new session: %s", mcpc_json(r));
	cr_assert(mcpc_text(r) && strstr(mcpc_text(r), "SessionError"), "text: %s", mcpc_json(r));
}

/* ---- Processes ------------------------------------------------------------------------------ */

#define MAXP 256

static int in_set(const struct mcpc_proc *p, const struct mcpc_proc *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i].pid == p->pid && set[i].start == p->start)
			return 1;
	return 0;
}

/* The processes in after that were not in before, into out; returns how many. */
static int new_procs(const struct mcpc_proc *before, int nb, const struct mcpc_proc *after, int na,
                     struct mcpc_proc *out, int max)
{
	int k = 0;

	for (int i = 0; i < na && k < max; i++)
		if (!in_set(&after[i], before, nb))
			out[k++] = after[i];
	return k;
}

/* ---- Handles and the contract --------------------------------------------------------------- */

Test(sessions, default_session_keeps_state_and_has_a_handle)
{
	json_object *a, *b;

	e2e_start_with(VERSION, NULL, NULL);
	a = ok_in(NULL, "x = 41");
	b = ok_in(NULL, "x + 1");
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(b), "result")), 42, "%s",
	             mcpc_json(b));
	cr_assert_str_eq(mcpc_sc_str(a, "session"), mcpc_sc_str(b, "session"),
	                 "the default session changed handle: %s / %s", mcpc_json(a), mcpc_json(b));
	e2e_stop();
}

Test(sessions, new_session_handle_resumes_it)
{
	const char *h, *dflt;

	e2e_start_with(VERSION, NULL, NULL);
	dflt = mcpc_sc_str(ok_in(NULL, "d = 'default'"), "session");
	h = new_session("y = 'abc'");
	cr_assert_str_neq(h, dflt, "a new session got the default session's handle");
	expect_result_in(h, "y * 2", "\"abcabc\"");
	expect_result_in(h, "y = y.upper()\ny", "\"ABC\"");
	expect_result_in(h, "y", "\"ABC\"");
	expect_result_in(NULL, "d", "\"default\"");
	e2e_stop();
}

Test(sessions, handles_are_long_distinct_and_opaque)
{
	enum { N = 20 };
	const char *h[N];

	e2e_start_with(VERSION, ARGS("--max-sessions", "32"), NULL);
	for (int i = 0; i < N; i++) {
		h[i] = new_session(e2e_fmt("n = %d", i));
		for (const char *p = h[i]; *p; p++)
			cr_assert(*p > 0x20 && *p < 0x7f && *p != '"' && *p != '\\',
			          "handle %s is not plain printable text", h[i]);
		for (int k = 0; k < i; k++)
			cr_assert_str_neq(h[i], h[k], "two new sessions got handle %s", h[i]);
	}
	/* Each handle still names its own session. */
	for (int i = 0; i < N; i += 7)
		expect_result_in(h[i], "n", e2e_fmt("%d", i));
	e2e_stop();
}

Test(sessions, every_result_carries_its_handle)
{
	const char *h;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--timeout", "2"), NULL);
	h = new_session("x = 1");
	r = expect_error_in(h, "1/0", "ZeroDivisionError");
	check_handle(r, h);
	r = expect_status_in(h, NULL, "while True:\n    pass", "timeout");
	check_handle(r, h);
	r = expect_status_in(h, NULL, "b = bytearray(10**10)", "memory_limit");
	check_handle(r, h);
	r = expect_status_in(h, "\"reset\":true", "z = 2", "ok");
	check_handle(r, h);
	r = expect_status_in(NULL, NULL, "1/0", "error");
	check_handle(r, NULL);
	cr_assert_str_neq(mcpc_sc_str(r, "session"), h, "%s", mcpc_json(r));
	e2e_stop();
}

Test(sessions, unknown_handle_is_a_session_error)
{
	const char *h;
	char *forged;

	e2e_start_with(VERSION, NULL, NULL);
	h = new_session("kept = 'yes'");
	expect_session_error("nope", "kept");
	expect_session_error("0123456789abcdef0123456789abcdef", "kept");
	/* One digit off a real handle names nothing. */
	forged = strdup(h);
	forged[0] = forged[0] == 'a' ? 'b' : 'a';
	expect_session_error(forged, "kept");
	free(forged);
	/* The default session's name is not a handle. */
	expect_session_error("default", "kept");
	expect_result_in(h, "kept", "\"yes\"");
	e2e_stop();
}

Test(sessions, session_error_message_is_exact)
{
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	r = call_in("ffffffffffffffffffffffffffffffff", "1");
	cr_log_info("SessionError message: %s", mcpc_err_str(r, "message"));
	cr_assert(!strncmp(mcpc_err_str(r, "message"),
	                   "Unknown or expired session \"ffffffffffffffffffffffffffffffff\".", 62),
	          "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "Pass session \"new\" to start a new one"),
	          "%s", mcpc_json(r));
	e2e_stop();
}

Test(sessions, bad_session_and_reset_values_are_refused)
{
	static const char *const bad[] = {
	    "\"session\":5",
	    "\"session\":\"\"",
	    "\"session\":null",
	    "\"session\":[\"new\"]",
	    "\"reset\":\"yes\"",
	    "\"reset\":1",
	    "\"session\":\"new\",\"reset\":\"true\"",
	};

	e2e_start_with(VERSION, NULL, NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *r =
		    e2e_hold(mcpc_call(&e2e_srv, "'ran'", e2e_fmt("{%s}", bad[i]), E2E_CALL_MS));

		cr_assert_not_null(r, "no answer for %s", bad[i]);
		if (mcpc_error(r)) {
			cr_assert_eq(json_object_get_int(e2e_member(mcpc_error(r), "code")), -32602,
			             "arguments %s: %s", bad[i], mcpc_json(r));
			continue;
		}
		cr_assert(e2e_is_error(r), "arguments {%s} must be refused: %s", bad[i],
		          mcpc_json(r));
		cr_assert_null(strstr(mcpc_json(r), "'ran'"), "the code ran with {%s}: %s", bad[i],
		               mcpc_json(r));
	}
	e2e_stop();
}

Test(sessions, schema_declares_session_and_reset)
{
	json_object *r, *tool, *props, *out;

	e2e_start_with(VERSION, NULL, NULL);
	r = e2e_hold(mcpc_request(&e2e_srv, "tools/list", NULL, 10000));
	tool = json_object_array_get_idx(e2e_member(mcpc_result(r), "tools"), 0);
	props = e2e_member(e2e_member(tool, "inputSchema"), "properties");
	cr_assert_str_eq(json_object_get_string(e2e_member(e2e_member(props, "session"), "type")),
	                 "string", "%s", mcpc_json(tool));
	cr_assert_str_eq(json_object_get_string(e2e_member(e2e_member(props, "reset"), "type")),
	                 "boolean", "%s", mcpc_json(tool));
	out = e2e_member(e2e_member(tool, "outputSchema"), "properties");
	cr_assert_not_null(e2e_member(out, "session"), "outputSchema has no session: %s",
	                   mcpc_json(tool));
	e2e_stop();
}

/* ---- What persists -------------------------------------------------------------------------- */

Test(session_state, variables_functions_classes_and_instances_persist)
{
	const char *h;

	e2e_start_with(VERSION, NULL, NULL);
	h = new_session("count = 3\ndef double(v):\n    return v * 2\n"
	                "class Box:\n    def __init__(self, v):\n        self.v = v\n"
	                "    def get(self):\n        return self.v\n");
	ok_in(h, "b = Box(double(count))");
	expect_result_in(h, "[count, double(5), b.get(), isinstance(b, Box), type(b).__name__]",
	                 "[3,10,6,true,\"Box\"]");
	ok_in(h, "class Sub(Box):\n    def get(self):\n        return super().get() + 1\n"
	         "s = Sub(1)\nb.v = 100");
	expect_result_in(h, "[s.get(), b.get(), count]", "[2,100,3]");
	e2e_stop();
}

Test(session_state, imports_persist)
{
	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "import json\nfrom collections import Counter\nimport math as m");
	expect_result_in(NULL, "json.dumps({'a': 1})", "\"{\\\"a\\\": 1}\"");
	expect_result_in(NULL, "[Counter('aab')['a'], m.factorial(5)]", "[2,120]");
	e2e_stop();
}

Test(session_state, generator_advances_across_calls)
{
	const char *h;

	e2e_start_with(VERSION, NULL, NULL);
	h = new_session("g = (i*i for i in range(10))");
	expect_result_in(h, "next(g)", "0");
	expect_result_in(h, "next(g)", "1");
	expect_result_in(h, "next(g)", "4");
	expect_result_in(h, "list(g)", "[9,16,25,36,49,64,81]");
	expect_error_in(h, "next(g)", "StopIteration");
	e2e_stop();
}

Test(session_state, closures_persist)
{
	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "def counter():\n    n = 0\n    def inc():\n        nonlocal n\n"
	            "        n += 1\n        return n\n    return inc\ninc = counter()");
	expect_result_in(NULL, "inc()", "1");
	expect_result_in(NULL, "inc()", "2");
	expect_result_in(NULL, "[inc(), inc()]", "[3,4]");
	e2e_stop();
}

Test(session_state, random_state_continues_across_calls)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, NULL, NULL);
	/* The same computation in one call is CPython's value... */
	r = ok_in("new", "import random\nrandom.seed(42)\nrandom.random()");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), SEED42_FIRST, "%s", mcpc_json(r));
	/* ...and split over two calls of a session it is the same. */
	h = new_session("import random\nrandom.seed(42)");
	r = ok_in(h, "random.random()");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), SEED42_FIRST,
	                 "the session lost its random state between calls: %s", mcpc_json(r));
	r = ok_in(h, "random.random()");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "0.025010755222666936", "%s", mcpc_json(r));
	e2e_stop();
}

Test(session_state, exception_keeps_what_ran_before_it)
{
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	r = expect_error_in(NULL, "a = 1\nb = [2]\nraise ValueError('stop')\nc = 3", "ValueError");
	check_handle(r, NULL);
	cr_assert_null(strstr(mcpc_err_str(r, "message"), "unchanged"),
	               "a committed exception must not say the session is unchanged: %s",
	               mcpc_json(r));
	expect_result_in(NULL, "[a, b]", "[1,[2]]");
	expect_error_in(NULL, "c", "NameError");
	/* A mutation before the exception is kept too. */
	expect_error_in(NULL, "b.append(3)\n1/0", "ZeroDivisionError");
	expect_result_in(NULL, "b", "[2,3]");
	/* A syntax error runs nothing. */
	expect_error_in(NULL, "d = 4\na = ;", "SyntaxError");
	expect_error_in(NULL, "d", "NameError");
	expect_result_in(NULL, "a", "1");
	e2e_stop();
}

Test(session_state, sessions_are_isolated)
{
	const char *one, *two;

	e2e_start_with(VERSION, NULL, NULL);
	one = new_session("x = 'one'\ndef only_one():\n    return 1");
	two = new_session("x = 'two'");
	expect_result_in(one, "x", "\"one\"");
	expect_result_in(two, "x", "\"two\"");
	expect_error_in(two, "only_one()", "NameError");
	expect_error_in(NULL, "x", "NameError");
	ok_in(two, "x = 'changed'");
	expect_result_in(one, "[x, only_one()]", "[\"one\",1]");
	e2e_stop();
}

/* ---- Rollback of calls that do not complete --------------------------------------------------- */

Test(session_rollback, timeout_leaves_the_session_unchanged)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, ARGS("--timeout", "2"), NULL);
	ok_in(NULL, "x = 1\nitems = [1]");
	r = expect_status_in(NULL, NULL, "x = 2\nitems.append(2)\nnew_name = 1\nwhile True: pass",
	                     "timeout");
	says_unchanged(r);
	expect_result_in(NULL, "[x, items]", "[1,[1]]");
	expect_error_in(NULL, "new_name", "NameError");
	/* The same in a named session, with the per-call limit. */
	h = new_session("x = 10");
	r = expect_status_in(h, "\"timeout_seconds\":1", "x = 20\nimport time\ntime.sleep(60)",
	                     "timeout");
	says_unchanged(r);
	expect_result_in(h, "x", "10");
	e2e_stop();
}

/* What the model reads of a rolled-back call: the text content, and a message in sentences. */
static void explains_rollback(json_object *r)
{
	const char *msg = mcpc_err_str(r, "message"),
	           *at = strstr(msg, " The session is unchanged");

	says_unchanged(r);
	cr_assert(!at || at == msg || strchr(".!?)", at[-1]),
	          "the message runs into the note without a full stop: %s", msg);
	cr_assert(mcpc_text(r) && strstr(mcpc_text(r), "unchanged"),
	          "the text content does not say the session is unchanged: %s", mcpc_json(r));
}

Test(session_rollback, rollback_is_explained_in_the_text_and_the_message)
{
	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "x = 1");
	explains_rollback(
	    expect_status_in(NULL, "\"timeout_seconds\":1", "x = 2\nwhile True: pass", "timeout"));
	explains_rollback(
	    expect_status_in(NULL, NULL, "x = 3\nb = bytearray(10**10)", "memory_limit"));
	expect_result_in(NULL, "x", "1");
	e2e_stop();
}

Test(session_rollback, caught_timeout_still_rolls_back)
{
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "x = 1");
	r = expect_status_in(NULL, "\"timeout_seconds\":1",
	                     "x = 2\ntry:\n    while True:\n        pass\nexcept BaseException:\n"
	                     "    pass\ny = 'after'",
	                     "timeout");
	says_unchanged(r);
	expect_result_in(NULL, "x", "1");
	expect_error_in(NULL, "y", "NameError");
	e2e_stop();
}

/* A __del__ that runs past the deadline: the TimeoutError raised in it is one Python ignores,
 * the statement that freed the object goes on, and the call is a timeout that says so (it said
 * the code caught the error). The object stays (the call rolled back). */
Test(session_rollback, a_timeout_inside_del_is_said_and_rolls_back)
{
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "class D:\n    def __del__(self):\n        while True:\n            pass\n"
	            "x = D()\nn = 1");
	r = expect_status_in(NULL, "\"timeout_seconds\":1", "n = 2\nx = 5\ny = 'after'", "timeout");
	cr_assert(strstr(mcpc_err_str(r, "message"), "as in a __del__"), "%s", mcpc_json(r));
	says_unchanged(r);
	expect_result_in(NULL, "n", "1");
	expect_error_in(NULL, "y", "NameError");
	e2e_stop();
}

Test(session_rollback, memory_limit_leaves_the_session_unchanged)
{
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "x = 1");
	r = expect_status_in(NULL, NULL, "x = 2\nb = bytearray(10**10)", "memory_limit");
	says_unchanged(r);
	expect_result_in(NULL, "x", "1");
	r = expect_status_in(NULL, NULL,
	                     "x = 3\nchunks = []\nwhile True:\n    chunks.append('x' * 10**6)",
	                     "memory_limit");
	says_unchanged(r);
	expect_result_in(NULL, "x", "1");
	expect_error_in(NULL, "chunks", "NameError");
	e2e_stop();
}

Test(session_rollback, crash_leaves_the_session_unchanged)
{
	json_object *r;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	ok_in(NULL, "import ctypes\nx = 1");
	r = expect_status_in(NULL, NULL, "x = 2\nctypes.string_at(0)", "crashed");
	says_unchanged(r);
	expect_result_in(NULL, "x", "1");
	e2e_stop();
}

Test(session_rollback, sandbox_violation_leaves_the_session_unchanged)
{
	json_object *r;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	ok_in(NULL, "import ctypes\nx = 1");
	r = expect_status_in(NULL, NULL, "x = 2\nctypes.CDLL(None).syscall(41, 2, 1, 0)",
	                     "sandbox_violation");
	says_unchanged(r);
	expect_result_in(NULL, "x", "1");
	e2e_stop();
}

Test(session_rollback, cancel_leaves_the_session_unchanged)
{
	int64_t id;

	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "x = 1");
	id = mcpc_call_async(&e2e_srv, "x = 2\nwhile True:\n    pass", NULL);
	usleep(500000);
	e2e_cancel(id);
	expect_result_in(NULL, "x", "1");
	cr_assert_not(e2e_seen(id, 1000), "the cancelled call was answered");
	e2e_stop();
}

Test(session_rollback, cancelled_queued_call_never_runs)
{
	int64_t slow, queued;
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "x = 1");
	slow = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(1)\nx = 2", NULL);
	queued = mcpc_call_async(&e2e_srv, "x = 100", NULL);
	usleep(200000);
	e2e_cancel(queued);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, E2E_CALL_MS));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	expect_result_in(NULL, "x", "2");
	cr_assert_not(e2e_seen(queued, 500), "the cancelled queued call was answered");
	e2e_stop();
}

Test(session_rollback, failed_first_call_leaves_a_new_session_empty)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, NULL, NULL);
	r = expect_status_in("new", "\"timeout_seconds\":1", "x = 1\nwhile True: pass", "timeout");
	h = mcpc_sc_str(r, "session");
	cr_assert_not_null(h, "a failed first call carries no handle: %s", mcpc_json(r));
	h = e2e_fmt("%s", h);
	says_unchanged(r);
	expect_error_in(h, "x", "NameError");
	ok_in(h, "x = 5");
	expect_result_in(h, "x", "5");
	e2e_stop();
}

Test(session_rollback, alternating_failures_and_commits)
{
	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "n = 0\nlog = []");
	for (int i = 1; i <= 4; i++) {
		expect_result_in(NULL, "n += 1\nlog.append(n)\nn", e2e_fmt("%d", i));
		expect_status_in(NULL, "\"timeout_seconds\":1",
		                 "n += 100\nlog.append(n)\nwhile True: pass", "timeout");
	}
	expect_result_in(NULL, "[n, log]", "[4,[1,2,3,4]]");
	e2e_stop();
}

/* ---- Order and concurrency ------------------------------------------------------------------ */

Test(session_order, calls_in_one_session_run_in_arrival_order)
{
	int64_t ids[3];
	const char *want[] = {"1", "11", "22"};

	e2e_start_with(VERSION, ARGS("--max-workers", "4"), NULL);
	ids[0] = mcpc_call_async(&e2e_srv, "x = 1", NULL);
	ids[1] = mcpc_call_async(&e2e_srv, "x += 10\nimport time\ntime.sleep(0.3)\nx", NULL);
	ids[2] = mcpc_call_async(&e2e_srv, "x * 2", NULL);
	for (int i = 0; i < 3; i++) {
		json_object *r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));

		cr_assert_not_null(r, "answer %d missing; stderr:\n%s", i, e2e_log());
		cr_assert_eq(json_object_get_int64(e2e_member(r, "id")), ids[i],
		             "answer %d out of order: %s", i, mcpc_json(r));
		cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), want[i], "%s", mcpc_json(r));
	}
	e2e_stop();
}

Test(session_order, calls_in_a_named_session_queue_behind_each_other)
{
	const char *h, *e;
	int64_t ids[4];

	e2e_start_with(VERSION, ARGS("--max-workers", "4"), NULL);
	h = new_session("log = []");
	e = extra(h, NULL);
	for (int i = 0; i < 4; i++)
		ids[i] = mcpc_call_async(
		    &e2e_srv,
		    e2e_fmt("import time\ntime.sleep(0.%d)\nlog.append(%d)\nlog", 4 - i, i), e);
	for (int i = 0; i < 4; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], E2E_CALL_MS));

		cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	}
	expect_result_in(h, "log", "[0,1,2,3]");
	e2e_stop();
}

Test(session_order, different_sessions_run_concurrently)
{
	const char *a, *b;
	int64_t ia, ib, t0, dt;
	json_object *ra, *rb;

	e2e_start_with(VERSION, ARGS("--max-workers", "2"), NULL);
	a = new_session("import time");
	b = new_session("import time");
	t0 = mcpc_now_ms();
	ia = mcpc_call_async(&e2e_srv, "time.sleep(1.5)\n'a'", extra(a, NULL));
	ib = mcpc_call_async(&e2e_srv, "time.sleep(1.5)\n'b'", extra(b, NULL));
	ra = e2e_hold(mcpc_wait_int_id(&e2e_srv, ia, E2E_CALL_MS));
	rb = e2e_hold(mcpc_wait_int_id(&e2e_srv, ib, E2E_CALL_MS));
	dt = mcpc_now_ms() - t0;
	cr_assert_str_eq(mcpc_sc_str(ra, "result_repr"), "'a'", "%s", mcpc_json(ra));
	cr_assert_str_eq(mcpc_sc_str(rb, "result_repr"), "'b'", "%s", mcpc_json(rb));
	cr_log_info("two 1.5 s calls in two sessions took %lld ms", (long long)dt);
	cr_assert_lt(dt, 2800, "two sessions ran one after the other: %lld ms", (long long)dt);
	e2e_stop();
}

Test(session_order, a_busy_session_does_not_block_another)
{
	int64_t slow, fast;
	json_object *first;

	e2e_start_with(VERSION, ARGS("--max-workers", "2"), NULL);
	ok_in(NULL, "import time");
	slow = mcpc_call_async(&e2e_srv, "time.sleep(3)\n'slow'", NULL);
	fast = mcpc_call_async(&e2e_srv, "'fast'", "{\"session\":\"new\"}");
	first = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
	cr_assert_not_null(first);
	cr_assert_eq(json_object_get_int64(e2e_member(first, "id")), fast,
	             "the new session waited for the busy default session: %s", mcpc_json(first));
	first = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, E2E_CALL_MS));
	cr_assert_str_eq(mcpc_sc_str(first, "result_repr"), "'slow'", "%s", mcpc_json(first));
	e2e_stop();
}

/* ---- Eviction and expiry -------------------------------------------------------------------- */

Test(session_limits, least_recently_used_session_is_evicted)
{
	const char *a, *b, *c;

	e2e_start_with(VERSION, ARGS("--max-sessions", "2"), NULL);
	a = new_session("v = 'a'");
	b = new_session("v = 'b'");
	c = new_session("v = 'c'");
	expect_session_error(a, "v");
	expect_result_in(b, "v", "\"b\"");
	expect_result_in(c, "v", "\"c\"");
	e2e_stop();
}

Test(session_limits, a_used_session_is_not_the_one_evicted)
{
	const char *a, *b, *c;

	e2e_start_with(VERSION, ARGS("--max-sessions", "2"), NULL);
	a = new_session("v = 'a'");
	b = new_session("v = 'b'");
	expect_result_in(a, "v", "\"a\"");
	c = new_session("v = 'c'");
	expect_session_error(b, "v");
	expect_result_in(a, "v", "\"a\"");
	expect_result_in(c, "v", "\"c\"");
	e2e_stop();
}

Test(session_limits, evicted_session_leaves_no_process)
{
	struct mcpc_proc before[MAXP], after[MAXP];
	int nb, na;

	e2e_start_with(VERSION, ARGS("--max-sessions", "1", "--prefork", "0"), NULL);
	new_session("v = 1");
	new_session("v = 2");
	nb = e2e_steady_descendants(3000);
	e2e_descendants(before, MAXP);
	for (int i = 3; i < 8; i++)
		new_session(e2e_fmt("v = %d", i));
	na = e2e_settle_descendants(nb, 3000);
	e2e_descendants(after, MAXP);
	cr_assert_leq(na, nb, "evicted sessions left processes: %d before, %d after", nb, na);
	e2e_stop();
}

/* Sessions asked for while every other is busy are made beyond the bound (their calls wait
 * for a worker); once their calls are done, those beyond it go, least recently used first: a
 * burst of new sessions leaves at most --max-sessions of them, and their processes only. */
Test(session_limits, a_burst_of_new_sessions_is_brought_back_to_the_bound)
{
	struct mcpc_proc p[MAXP];
	int64_t ids[12];
	const char *handles[12];
	int kept = 0, n;

	e2e_start_with(VERSION, ARGS("--max-sessions", "2", "--max-workers", "2", "--prefork", "0"),
	               NULL);
	for (int i = 0; i < 12; i++)
		ids[i] =
		    mcpc_call_async(&e2e_srv, e2e_fmt("v = %d\nv", i), "{\"session\":\"new\"}");
	for (int i = 0; i < 12; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], E2E_CALL_MS));
		cr_assert_not_null(r, "call %d was not answered", i);
		cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
		handles[i] = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	}
	/* The processes of two sessions (each its holder, after one commit) and the zygote. */
	n = e2e_settle_descendants(3, 5000);
	e2e_descendants(p, MAXP);
	cr_assert_leq(n, 3, "%d processes after the burst, with --max-sessions 2", n);
	for (int i = 0; i < 12; i++) {
		json_object *r = e2e_call("v", e2e_fmt("{\"session\":\"%s\"}", handles[i]));
		if (!strcmp(mcpc_status(r), "ok")) {
			cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), e2e_fmt("%d", i), "%s",
			                 mcpc_json(r));
			kept++;
		}
	}
	cr_assert_leq(kept, 2, "%d sessions kept, with --max-sessions 2", kept);
	cr_assert_geq(kept, 1, "no session of the burst was kept");
	e2e_stop();
}

Test(session_limits, idle_session_expires)
{
	const char *idle, *busy;

	e2e_start_with(VERSION, ARGS("--session-idle", "1"), NULL);
	idle = new_session("v = 'idle'");
	busy = new_session("v = 'busy'");
	for (int i = 0; i < 6; i++) {
		usleep(450000);
		expect_result_in(busy, "v", "\"busy\"");
	}
	expect_session_error(idle, "v");
	expect_result_in(busy, "v", "\"busy\"");
	e2e_stop();
}

Test(session_limits, idle_default_session_starts_again_empty)
{
	json_object *a, *b;

	e2e_start_with(VERSION, ARGS("--session-idle", "1"), NULL);
	a = ok_in(NULL, "v = 'old'");
	usleep(2500000);
	b = call_in(NULL, "v");
	cr_assert_str_eq(mcpc_err_str(b, "type"), "NameError",
	                 "an expired default session still answered: %s", mcpc_json(b));
	cr_assert_str_neq(mcpc_sc_str(a, "session"), mcpc_sc_str(b, "session"),
	                  "the expired default session kept its handle: %s", mcpc_json(b));
	e2e_stop();
}

/* What a user expects of --session-idle: the memory of an idle session is given back without
 * another call arriving. The server sweeps idle sessions at least once a minute. */
Test(session_limits, idle_session_process_ends_without_another_call, .timeout = 150)
{
	struct mcpc_proc before[MAXP], after[MAXP], parked[8];
	int nb, na, np, left;
	int64_t t0;

	e2e_start_with(VERSION, ARGS("--session-idle", "1", "--prefork", "0"), NULL);
	nb = e2e_steady_descendants(3000);
	e2e_descendants(before, MAXP);
	new_session("v = list(range(1000))");
	e2e_steady_descendants(3000);
	na = e2e_descendants(after, MAXP);
	np = new_procs(before, nb, after, na, parked, 8);
	/* The parked process and the process it forked ahead for the next call. */
	cr_assert_eq(np, 2, "%d new processes for one parked session", np);
	t0 = mcpc_now_ms();
	left = mcpc_wait_procs_gone(parked, np, 75000);
	cr_log_info("the parked process of a session idle for 1 s ended after %lld ms",
	            (long long)(mcpc_now_ms() - t0));
	fprintf(stderr,
	        "sessions: the parked process of a session idle for 1 s ended after %lld ms\n",
	        (long long)(mcpc_now_ms() - t0));
	cr_assert_eq(left, 0, "an expired session's process is still alive 75 s later");
	e2e_stop();
}

/* ---- Reset ---------------------------------------------------------------------------------- */

Test(session_reset, reset_starts_from_a_clean_interpreter)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, NULL, NULL);
	h = mcpc_sc_str(ok_in(NULL, "x = 5"), "session");
	h = e2e_fmt("%s", h);
	r = expect_status_in(NULL, "\"reset\":true", "x", "error");
	cr_assert_str_eq(mcpc_err_str(r, "type"), "NameError", "%s", mcpc_json(r));
	check_handle(r, h);
	expect_error_in(NULL, "x", "NameError");
	/* reset:false changes nothing. */
	ok_in(NULL, "y = 6");
	r = expect_status_in(NULL, "\"reset\":false", "y", "ok");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "6", "%s", mcpc_json(r));
	e2e_stop();
}

Test(session_reset, reset_of_a_named_session_keeps_its_handle_and_others)
{
	json_object *r;
	const char *a, *b;

	e2e_start_with(VERSION, NULL, NULL);
	a = new_session("x = 1\nimport json");
	b = new_session("x = 2");
	r = expect_status_in(a, "\"reset\":true", "y = 3", "ok");
	check_handle(r, a);
	expect_result_in(a, "y", "3");
	expect_error_in(a, "x", "NameError");
	expect_error_in(a, "json", "NameError");
	expect_result_in(b, "x", "2");
	e2e_stop();
}

Test(session_reset, reset_that_fails_leaves_the_session_unchanged)
{
	json_object *r;

	e2e_start_with(VERSION, NULL, NULL);
	ok_in(NULL, "x = 5");
	r = expect_status_in(NULL, "\"reset\":true,\"timeout_seconds\":1", "while True: pass",
	                     "timeout");
	says_unchanged(r);
	/* The message says the session is unchanged: then x is still there. */
	expect_result_in(NULL, "x", "5");
	e2e_stop();
}

/* ---- Processes ------------------------------------------------------------------------------ */

/* Run code that tries to create a process in session h ("new", or an existing session) and
 * check that it created none: the marker never shows, and the server's process count settles
 * back to what it was (plus the two processes of a new session whose call completed). The
 * server runs with --prefork 0, so its processes are the zygote and the parked sessions.
 * Returns the response. */
static json_object *creates_no_process(const char *h, const char *code)
{
	struct mcpc_proc before[MAXP], after[MAXP], extra_p[MAXP];
	int nb, na, ne, k, allowed;
	json_object *r;

	nb = e2e_steady_descendants(3000);
	e2e_descendants(before, MAXP);
	r = call_in(h, code);
	cr_assert_null(strstr(mcpc_json(r), "CHILD-MARKER"), "a child ran: %s", mcpc_json(r));
	/* A new session whose call completed is parked: one process more (a process is forked
	 * ahead for a session's next call only from its second call on). */
	allowed = nb + (h && !strcmp(h, "new") &&
	                (!strcmp(mcpc_status(r), "ok") || !strcmp(mcpc_status(r), "error")));
	/* A child would sleep 5 s: count before then, and again once the count is steady, since
	 * the process forked ahead may not exist yet at the first count. */
	k = e2e_settle_descendants(allowed, 1500);
	if (k <= allowed)
		k = e2e_steady_descendants(1500);
	na = e2e_descendants(after, MAXP);
	ne = new_procs(before, nb, after, na, extra_p, MAXP);
	if (k > allowed)
		for (int i = 0; i < ne; i++)
			cr_log_error("process %d appeared during:\n%s", (int)extra_p[i].pid, code);
	cr_assert_leq(k, allowed,
	              "%d processes before, %d after (%d allowed, new: %d) for:\n%s\n%s\n"
	              "server stderr:\n%s",
	              nb, k, allowed, ne, code, mcpc_json(r), e2e_log());
	return r;
}

static void fork_is_refused(const char *h)
{
	json_object *r = creates_no_process(
	    h, "import os, time\npid = os.fork()\nif pid == 0:\n    print('CHILD-MARKER')\n"
	       "    time.sleep(5)\n    os._exit(0)\npid");
	const char *why = e2e_refusal_mismatch(r, &E2E_EPERM);

	/* The fork gate: the supervisor refuses a fork it did not ask for. */
	cr_assert_null(why, "os.fork() was not refused with EPERM (%s): %s", why, mcpc_json(r));
}

Test(session_processes, os_fork_is_refused_in_every_call_of_a_session)
{
	const char *h;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--prefork", "0"), NULL);
	/* In a session's first call (a fresh worker)... */
	fork_is_refused("new");
	/* ...and in a later call (a fork of the parked process). */
	h = new_session("kept = 'state'");
	fork_is_refused(h);
	expect_result_in(h, "kept", "\"state\"");
	fork_is_refused(h);
	ok_in(NULL, "other = 1");
	ok_in(NULL, "other");
	fork_is_refused(NULL);
	fork_is_refused(NULL);
	expect_result_in(h, "kept", "\"state\"");
	e2e_stop();
}

/* A raw clone(2) with exactly glibc's fork flags fails with EPERM (the fork gate), clone3(2)
 * with ENOSYS (the filter), a raw fork(2) or any other clone kills the call; none creates a
 * process. */
static void raw_clones_are_refused(const char *h)
{
	static const struct {
		const char *attack;
		const char *result;  /* [return, errno] when the call completes */
		const char *syscall; /* the syscall that killed it, else */
	} attacks[] = {
	    /* clone(CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD, 0, 0, 0, 0) */
	    {"r = libc.syscall(56, 0x1200011, 0, 0, 0, 0)", "[-1,1]", NULL},
	    /* clone(SIGCHLD, 0, ...): a plain fork */
	    {"r = libc.syscall(56, 17, 0, 0, 0, 0)", NULL, "clone"},
	    /* fork() */
	    {"r = libc.syscall(57)", NULL, "fork"},
	    /* clone3 with a valid struct clone_args {exit_signal = SIGCHLD} */
	    {"args = (ctypes.c_uint64 * 11)()\nargs[4] = 17\n"
	     "r = libc.syscall(435, ctypes.byref(args), 88)",
	     "[-1,38]", NULL},
	};

	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		const char *code =
		    e2e_fmt("import ctypes, time\nlibc = ctypes.CDLL(None, use_errno=True)\n%s\n"
		            "if r == 0:\n    print('CHILD-MARKER')\n    time.sleep(5)\n"
		            "    libc.syscall(60, 0)\n[r, ctypes.get_errno()]",
		            attacks[i].attack);
		json_object *r = creates_no_process(h, code);

		if (attacks[i].result) {
			cr_assert_str_eq(mcpc_status(r), "ok", "%s\n%s", code, mcpc_json(r));
			e2e_assert_result(r, code, attacks[i].result);
		} else {
			const struct e2e_refusal killed = {"sandbox_violation", "SandboxViolation",
			                                   attacks[i].syscall};
			const char *why = e2e_refusal_mismatch(r, &killed);

			cr_assert_null(why, "not killed (%s):\n%s\n%s", why, code, mcpc_json(r));
		}
	}
}

Test(session_processes, raw_clone_is_refused_and_the_session_goes_on)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--prefork", "0"), NULL);
	h = new_session("kept = 'state'");
	/* The brief's exact probe: a clone with fork flags returns -1 with EPERM. */
	r = creates_no_process(h, "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
	                          "[libc.syscall(56, 0x1200011, 0, 0, 0, 0), ctypes.get_errno()]");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "[-1, 1]",
	                 "clone with fork flags was not refused with EPERM: %s", mcpc_json(r));
	raw_clones_are_refused(h);
	expect_result_in(h, "kept", "\"state\"");
	raw_clones_are_refused("new");
	e2e_stop();
}

/* User code registered as an at-fork hook never runs around the forks the supervisor asks a
 * session's processes for: those forks drop every hook first, so nothing a call changed runs
 * outside a call. The hook would fork (guarding against itself: os.fork() inside it runs the
 * before-hooks again) and record what happened. */
static void hook_cannot_fork(const char *when)
{
	json_object *r;
	const char *h;

	h = new_session(e2e_fmt("import os, time\nforks = []\n"
	                        "inside = []\n"
	                        "def hook():\n    if inside:\n        return\n"
	                        "    inside.append(1)\n    try:\n        pid = os.fork()\n"
	                        "    except OSError as e:\n        forks.append(repr(e))\n"
	                        "        return\n    finally:\n        inside.clear()\n"
	                        "    if pid == 0:\n        time.sleep(5)\n        os._exit(0)\n"
	                        "    forks.append(pid)\n"
	                        "os.register_at_fork(%s=hook)\nkept = 'state'",
	                        when));
	r = creates_no_process(h, "x = 1");
	cr_assert_str_eq(mcpc_status(r), "ok",
	                 "a %s at-fork hook broke the next call of its session: %s", when,
	                 mcpc_json(r));
	r = ok_in(h, "[kept, x, forks]");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "['state', 1, []]",
	                 "the %s hook ran around a session's fork: %s", when, mcpc_json(r));
	cr_assert_null(strstr(e2e_log(), "refused a fork from pid"),
	               "a fork of the %s hook reached the gate; log:\n%s", when, e2e_log());
}

Test(session_processes, before_fork_hook_cannot_create_a_process)
{
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--prefork", "0"), NULL);
	hook_cannot_fork("before");
	e2e_stop();
}

Test(session_processes, after_in_parent_hook_cannot_create_a_process)
{
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--prefork", "0"), NULL);
	hook_cannot_fork("after_in_parent");
	e2e_stop();
}

/* Three sessions with state and a call stuck in one of them; end the server with sig (0: EOF,
 * after which the stuck call is answered at its 2 s timeout) and check it exits within 3 s and
 * leaves no process behind. */
static void exit_with_sessions(int sig)
{
	struct mcpc_proc procs[MAXP];
	const char *h[3];
	int n, left, base;
	int64_t t0, id;

	e2e_start_with(VERSION, sig ? NULL : ARGS("--timeout", "2"), NULL);
	for (int i = 0; i < 3; i++)
		h[i] = new_session(e2e_fmt("data = list(range(%d))", 1000 * (i + 1)));
	base = e2e_steady_descendants(3000);
	id = mcpc_call_async(&e2e_srv, "while True:\n    pass", extra(h[1], NULL));
	for (int i = 0; i < 100 && e2e_descendants(procs, MAXP) <= base; i++)
		usleep(20000);
	n = e2e_descendants(procs, MAXP);
	cr_assert_geq(n, 5, "expected the zygote, 3 parked sessions and a running call: %d", n);
	t0 = mcpc_now_ms();
	if (sig) {
		cr_assert_eq(mcpc_signal(&e2e_srv, sig), 0);
	} else {
		mcpc_close_stdin(&e2e_srv);
		cr_assert_not_null(e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 8000)),
		                   "the stuck call was not answered after EOF");
		t0 = mcpc_now_ms();
	}
	cr_assert_eq(mcpc_wait_exit(&e2e_srv, 3000), 0, "server still running 3 s after %s",
	             sig ? strsignal(sig) : "EOF and the last answer");
	cr_log_info("exit after %s took %lld ms", sig ? strsignal(sig) : "EOF",
	            (long long)(mcpc_now_ms() - t0));
	if (!sig)
		cr_assert(WIFEXITED(e2e_srv.status) && WEXITSTATUS(e2e_srv.status) == 0,
		          "status 0x%x after EOF", e2e_srv.status);
	left = mcpc_wait_procs_gone(procs, n, 2000);
	for (int i = 0; i < n; i++)
		if (mcpc_proc_alive(&procs[i]))
			cr_log_error("pid %d survived the server", (int)procs[i].pid);
	cr_assert_eq(left, 0, "%d of the server's %d processes survived it", left, n);
	cr_assert_eq(e2e_srv.bad_lines, 0, "bad stdout line: %s", e2e_srv.first_bad);
	mcpc_free(&e2e_srv);
}

Test(session_processes, eof_with_sessions_leaves_no_process)
{
	exit_with_sessions(0);
}

Test(session_processes, sigterm_with_sessions_leaves_no_process)
{
	exit_with_sessions(SIGTERM);
}

Test(session_processes, sigkill_with_sessions_leaves_no_process)
{
	exit_with_sessions(SIGKILL);
}

/* Unique memory (Private_Clean + Private_Dirty, kB) of a process, and its Rss and Pss; -1 when
 * it cannot be read. */
static long private_kb(pid_t pid, long *rss, long *pss)
{
	char path[64], line[256];
	long priv = 0;
	int found = 0;
	FILE *f;

	*rss = *pss = -1;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long v;

		if (sscanf(line, "Private_Clean: %ld", &v) == 1 ||
		    sscanf(line, "Private_Dirty: %ld", &v) == 1) {
			priv += v;
			found++;
		} else if (sscanf(line, "Rss: %ld", &v) == 1) {
			*rss = v;
		} else if (sscanf(line, "Pss: %ld", &v) == 1) {
			*pss = v;
		}
	}
	fclose(f);
	return found == 2 ? priv : -1;
}

/* The processes that appeared in the server's tree since the baseline: the parked sessions,
 * each its parked process and the process it forked ahead for the next call. */
static int parked_since(const struct mcpc_proc *baseline, int nb, pid_t *pids, int max)
{
	struct mcpc_proc after[MAXP], fresh[16];
	int na, nf;

	e2e_steady_descendants(3000);
	na = e2e_descendants(after, MAXP);
	nf = new_procs(baseline, nb, after, na, fresh, 16);
	cr_assert_geq(nf, 1, "no parked session process");
	for (int i = 0; i < nf && i < max; i++)
		pids[i] = fresh[i].pid;
	return nf < max ? nf : max;
}

static void report_memory(const char *what, const struct mcpc_proc *baseline, int nb,
                          int expect_procs)
{
	pid_t pids[16];
	long total = 0, pss_total = 0;
	int n = parked_since(baseline, nb, pids, 16);

	cr_assert_eq(n, expect_procs, "%d session processes, expected %d", n, expect_procs);
	for (int i = 0; i < n; i++) {
		long rss, pss, priv = private_kb(pids[i], &rss, &pss);
		cr_assert_geq(priv, 0, "cannot read /proc/%d/smaps_rollup", (int)pids[i]);
		total += priv;
		pss_total += pss;
	}
	/* A session's parked process and its prepared runner share their pages copy-on-write:
	 * Pss counts those once between them (and a share of the zygote's). */
	cr_log_info("parked sessions after %s: %d processes, private %ld kB, Pss %ld kB", what, n,
	            total, pss_total);
	fprintf(stderr,
	        "sessions: parked sessions after %s: %d processes, private %ld kB, Pss %ld kB\n",
	        what, n, total, pss_total);
}

Test(session_processes, parked_session_memory_is_measured)
{
	struct mcpc_proc known[MAXP];
	int nk;
	const char *small, *big;

	e2e_start_with(VERSION, ARGS("--prefork", "0"), NULL);
	e2e_steady_descendants(3000);
	nk = e2e_descendants(known, MAXP);
	small = new_session("x = list(range(10))");
	/* Each session in use: its parked process and the one forked ahead for its next call. */
	report_memory("x = list(range(10)), two calls", known, nk, 2);
	ok_in(small, "y = 1");
	report_memory("x = list(range(10)), three calls", known, nk, 2);
	big = new_session("big = list(range(10**6))");
	report_memory("both sessions, big = list(range(10**6)) two calls", known, nk, 4);
	ok_in(big, "y = 1");
	report_memory("both sessions, big = list(range(10**6)) three calls", known, nk, 4);
	e2e_stop();
}

/* ---- One-shot command ------------------------------------------------------------------------ */

/* Does s hold something that looks like a session handle (32 hex digits in a row)? */
static int has_handle(const char *s)
{
	size_t run = 0;

	for (; *s; s++) {
		run = strchr("0123456789abcdef", *s) ? run + 1 : 0;
		if (run >= 32)
			return 1;
	}
	return 0;
}

/* safepy run prints, after the error, the line an MCP client gets for a call a limit stopped:
 * which limit, and what to do (a library's own message, "Unable to allocate 38 MiB", read as
 * absurd); a plain error has none. */
Test(session_cli, run_says_which_limit_stopped_the_code)
{
	char *out = NULL, *err = NULL;
	int st = 0;

	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, ARGS("run", "-c", "b = bytearray(10**10)"), NULL,
	                          30000, &out, &err, &st),
	             0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 4, "status 0x%x, stderr: %s", st, err);
	cr_assert(strstr(err, "MemoryError\n[memory_limit] The code ran out of memory and was "
	                      "stopped: the sandbox allows 512 MiB of address space per call"),
	          "stderr: %s", err);
	free(out);
	free(err);
	cr_assert_eq(
	    mcpc_run_cmd(SAFEPY_BIN, ARGS("run", "-c", "1 / 0"), NULL, 30000, &out, &err, &st), 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
	cr_assert(strstr(err, "ZeroDivisionError: division by zero\n"), "stderr: %s", err);
	cr_assert_null(strstr(err, "[error]"), "stderr: %s", err);
	cr_assert_null(strstr(err, "[memory_limit]"), "stderr: %s", err);
	free(out);
	free(err);
}

Test(session_cli, run_c_stays_one_shot)
{
	char *out = NULL, *err = NULL;
	int st = 0;

	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, ARGS("run", "-c", "x = 6\nx * 7"), NULL, 30000, &out,
	                          &err, &st),
	             0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	cr_assert_str_eq(out, "42\n", "stdout: %s", out);
	cr_assert_not(has_handle(err), "a session handle on stderr: %s", err);
	cr_assert_null(strstr(err, "SessionError"), "stderr: %s", err);
	free(out);
	free(err);
	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, ARGS("run", "-c", "x"), NULL, 30000, &out, &err, &st),
	             0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
	cr_assert(strstr(err, "NameError"), "stderr: %s", err);
	cr_assert_not(has_handle(out) || has_handle(err), "a session handle: %s\n%s", out, err);
	free(out);
	free(err);
}

/* A call that ends just before its deadline with a thread still running is kept as a
 * one-thread copy of its process; the deadline's signal, sent as the call ended, reaches the
 * process as it forks the copy or waits at the fork gate. It restarted the copy's fork (the
 * call was answered "its state could not be kept"), or ended the wait with EINTR (answered
 * "SandboxError", its session lost): a process that parks holds every signal until the park
 * returns. Every such call keeps its session or says it timed out. (The first delays end well
 * before the deadline, so that some calls are kept on a loaded machine too.) */
Test(session_limits, the_deadline_signal_during_a_copy_does_not_lose_the_call)
{
	static const double delays[] = {0.70, 0.80, 0.86, 0.90, 0.93, 0.95, 0.97, 0.99};
	int kept = 0;

	e2e_start_with(VERSION, ARGS("--allow-import", "threading", "--timeout", "1"), NULL);
	for (int i = 0; i < 16; i++) {
		json_object *r = e2e_call(
		    e2e_fmt("import threading, time\n"
		            "t = threading.Thread(target=time.sleep, args=(3,), daemon=True)\n"
		            "t.start()\ntime.sleep(%.2f)\nx = %d\n'done'",
		            delays[i % 8], i),
		    "{\"session\":\"new\"}");
		const char *status = mcpc_status(r);

		if (strcmp(status, "ok") == 0) {
			e2e_assert_result(r, "'done'", "\"done\"");
			e2e_assert_result(e2e_call("x", e2e_fmt("{\"session\":\"%s\"}",
			                                        mcpc_sc_str(r, "session"))),
			                  "x", e2e_fmt("%d", i));
			kept++;
		} else {
			cr_assert_str_eq(status, "timeout", "call %d: %s", i, mcpc_json(r));
		}
	}
	cr_assert_gt(kept, 1, "only %d of 16 calls kept their state; log:\n%s", kept, e2e_log());
	e2e_stop();
}

/* A thread waiting inside a comparison as its call ends: the session's one-thread copy kept the
 * comparison's window open for good (the thread that would close it is not in the copy), and
 * every block older than it freed in the session's later calls was kept too: a 150 MB list
 * replaced by another ran out of 300 MiB. The copy starts with no window open. */
Test(session_limits, a_thread_inside_a_comparison_as_the_call_ends_keeps_no_memory_for_good)
{
	const char *h;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--allow-import", "threading", "--memory", "300M"), NULL);
	r = expect_status_in("new", NULL,
	                     "import threading, time\n"
	                     "ev = threading.Event()\n"
	                     "class S:\n"
	                     "    def __eq__(self, o):\n"
	                     "        ev.wait()\n"
	                     "        return True\n"
	                     "def inside():\n"
	                     "    S() == S()\n"
	                     "big = [bytes(1000) for _ in range(150000)]\n"
	                     "threading.Thread(target=inside, daemon=True).start()\n"
	                     "time.sleep(0.2)\n"
	                     "'started'",
	                     "ok");
	h = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	for (int i = 0; i < 3; i++)
		expect_result_in(h,
		                 "del big\n"
		                 "big = [bytes(1000) for _ in range(150000)]\n"
		                 "len(big)",
		                 "150000");
	e2e_stop();
}

/* A call that leaves threads running keeps its state in a one-thread copy of its process, and the
 * copy runs the call's code too (the interpreter's after-fork clean-up drops a thread's
 * threading.local, whose __del__ is the code's) on a CPU count of its own: a call used 1.85 s of
 * its 2 s in the runner and as much again in the copy, and was answered ok with that state kept.
 * The copy may use only what the call had left: the call is stopped at the CPU limit and the
 * session keeps its state from before. */
Test(session_limits, the_copy_of_a_call_with_threads_has_only_the_call_s_cpu_left)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--cpu", "2", "--timeout", "60"), NULL);
	r = expect_status_in("new", NULL, "x = 1", "ok");
	h = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	r = expect_status_in(
	    h, NULL,
	    "import threading, time, _thread\n"
	    "def burn(until_cpu, wall_end, done):\n"
	    "    try:\n"
	    "        while time.process_time() < until_cpu and time.time() < wall_end:\n"
	    "            sum(range(1000))\n"
	    "    finally:\n"
	    "        done.append(1)\n"
	    "class InTheCopy:\n"
	    "    def __del__(self):\n"
	    "        global burned_in_copy\n"
	    "        done = []\n"
	    "        for _ in range(2):\n"
	    "            _thread.start_new_thread(burn, (1.5, time.time() + 1.2, done))\n"
	    "        while len(done) < 2:\n"
	    "            time.sleep(0.01)\n"
	    "        time.sleep(0.1)\n"
	    "        burned_in_copy = time.process_time()\n"
	    "loc = threading.local()\n"
	    "ev = threading.Event()\n"
	    "def keeper():\n"
	    "    loc.v = InTheCopy()\n"
	    "    ev.wait()\n"
	    "threading.Thread(target=keeper, daemon=True).start()\n"
	    "x = 2\n"
	    "burn(1.85, time.time() + 60, [])\n"
	    "time.process_time()",
	    "timeout");
	cr_assert(strstr(mcpc_err_str(r, "message"), "CPU time limit of 2 s"),
	          "not stopped at the CPU limit: %s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "the server's --cpu"),
	          "the CPU limit's hint is missing: %s", mcpc_json(r));
	cr_assert_not(strstr(mcpc_err_str(r, "message"), "--timeout"),
	              "the wall-clock limit's hint given for the CPU limit: %s", mcpc_json(r));
	says_unchanged(r);
	expect_result_in(h, "[x, 'burned_in_copy' in globals()]", "[1,false]");
	e2e_stop();
}

/* A call that leaves threads running keeps its state in a one-thread copy of its process. The
 * copy was a plain clone with every fork hook dropped: a thread inside malloc (a sqlite3 query
 * in the background) left the allocator's lock held for good, and the session's next call that
 * freed that thread's memory hung until killed; a thread logging left logging's lock held, and
 * every later logging call hung; threading still listed the threads gone. The copy is made as
 * os.fork makes its child (the allocator's locks taken around it, threading's and logging's
 * clean-up run in it): the session's next calls free, log and count threads as on the host. */
Test(session_limits, threads_running_as_the_call_ends_leave_no_lock_held)
{
	e2e_start_with(VERSION, ARGS("--allow-import", "threading", "--timeout", "3"), NULL);
	for (int i = 0; i < 4; i++) {
		const char *h = mcpc_sc_str(
		    expect_status_in(
		        "new", NULL,
		        "import threading, logging, sqlite3, time\n"
		        "class Slow:\n"
		        "    def __str__(self):\n"
		        "        sum(range(20000))\n"
		        "        return 'slow'\n"
		        "def logs():\n"
		        "    while True:\n"
		        "        logging.getLogger('bg').warning('tick %s', Slow())\n"
		        "G = []\n"
		        "def allocs():\n"
		        "    G.append([bytes(5000) for i in range(2000)])\n"
		        "    sqlite3.connect(':memory:', check_same_thread=False).execute(\n"
		        "        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
		        "WHERE '\n"
		        "        'x<100000000) SELECT count(*) FROM (SELECT randomblob(300) b FROM "
		        "c '\n"
		        "        'ORDER BY b)').fetchall()\n"
		        "for f in (logs, allocs):\n"
		        "    threading.Thread(target=f, daemon=True).start()\n"
		        "while not G:\n"
		        "    time.sleep(0.001)\n"
		        "time.sleep(0.05)\n"
		        "'started'",
		        "ok"),
		    "session");

		cr_assert_not_null(h);
		h = e2e_fmt("%s", h);
		expect_result_in(
		    h,
		    "logging.getLogger('main').warning('hello')\n"
		    "G.clear()\n"
		    "[threading.active_count(), [t.name for t in threading.enumerate()]]",
		    "[1,[\"MainThread\"]]");
	}
	e2e_stop();
}

/* A call that starts threads and joins them ends with its process alone once the threads'
 * last steps in the C library are done, a little after join() returned: the engine asks again
 * before it makes a one-thread copy (a copy made while a thread still held a C library lock
 * could never start a thread again, or never park). Under load, with several sessions, every
 * such call keeps its state and the next one can start threads. */
Test(session_limits, calls_that_join_their_threads_keep_the_session_under_load)
{
	static const char *const codes[] = {
	    "x += 1\nx",
	    "import threading\nt = threading.Thread(target=lambda: sum(range(200000)))\nt.start()\n"
	    "t.join()\nx += 1\nx",
	    "import threading\nev = threading.Event()\n"
	    "ts = [threading.Thread(target=ev.wait, args=(0.05,)) for _ in range(3)]\n"
	    "[t.start() for t in ts]\n[t.join() for t in ts]\nx += 1\nx",
	    "sum(i * i for i in range(300000))\nx += 1\nx",
	};
	enum { SESSIONS = 8, ROUNDS = 40, HOGS = 4 };
	const char *h[SESSIONS];
	pid_t hogs[HOGS];
	const char *bad = NULL;
	int64_t ids[SESSIONS];
	int round[SESSIONS], left = SESSIONS;

	e2e_start_with(VERSION, ARGS("--allow-import", "threading", "--max-workers", "8"), NULL);
	for (int k = 0; k < SESSIONS; k++)
		h[k] =
		    e2e_fmt("{\"session\":\"%s\"}",
		            mcpc_sc_str(e2e_expect_status("x = 0", "{\"session\":\"new\"}", "ok"),
		                        "session"));
	for (int k = 0; k < HOGS; k++) {
		hogs[k] = fork();
		cr_assert_geq(hogs[k], 0);
		if (hogs[k] == 0) {
			/* Busy until killed, or until the test process ends whatever way. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				;
		}
	}
	/* Each session's next call goes as soon as its last is answered. */
	for (int k = 0; k < SESSIONS; k++) {
		round[k] = 1;
		ids[k] = mcpc_call_async(&e2e_srv, codes[(k + 1) % 4], h[k]);
	}
	while (left > 0 && !bad) {
		json_object *r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
		int64_t id =
		    r && e2e_member(r, "id") ? json_object_get_int64(e2e_member(r, "id")) : -1;
		int k = 0;

		if (!r) {
			bad = "no answer in time";
			break;
		}
		while (k < SESSIONS && ids[k] != id)
			k++;
		if (k == SESSIONS)
			continue; /* a notification */
		if (strcmp(mcpc_status(r), "ok") != 0 ||
		    json_object_get_int(e2e_member(mcpc_structured(r), "result")) != round[k]) {
			bad = e2e_fmt("session %d, call %d: %s", k, round[k], mcpc_json(r));
			break;
		}
		if (++round[k] > ROUNDS) {
			ids[k] = -1;
			left--;
			continue;
		}
		ids[k] = mcpc_call_async(&e2e_srv, codes[(k + round[k]) % 4], h[k]);
	}
	for (int k = 0; k < HOGS; k++) {
		kill(hogs[k], SIGKILL);
		waitpid(hogs[k], NULL, 0);
	}
	cr_assert_null(bad, "%s", bad);
	e2e_stop();
}
