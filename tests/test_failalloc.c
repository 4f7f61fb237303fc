/* test_failalloc.c - the supervisor whose own allocations fail (label `failalloc`): the test
 * build safepy-failalloc (tests/failalloc.h) fails the allocations of its engine, its MCP line
 * handling and the JSON values it builds on a schedule, from when it starts serving. Every
 * request still gets exactly one answer: its right one, or an error that says the server ran
 * out of memory; the server never crashes, serves again once memory is back, and ends with
 * status 0 (the sanitizer build: without a leak, which LeakSanitizer would turn into a
 * failure). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define VERSION  "2025-11-25"
#define N_REQ    48
#define OOM_SAYS "ran out of memory"

TestSuite(failalloc, .timeout = 240, .fini = e2e_cleanup);

/* What request i is, and what its right answer holds. */
enum kind { K_DEFAULT, K_NEW, K_RAISE, K_BIG, K_LIST, K_PING, N_KINDS };

static int64_t send_request(int i)
{
	switch ((enum kind)(i % N_KINDS)) {
	case K_DEFAULT:
		return mcpc_call_async(&e2e_srv, "x = 6 * 7\nx", NULL);
	case K_NEW:
		return mcpc_call_async(&e2e_srv, "6 * 7", "{\"session\":\"new\"}");
	case K_RAISE:
		return mcpc_call_async(&e2e_srv, "raise ValueError('boom')",
		                       "{\"session\":\"new\"}");
	case K_BIG:
		return mcpc_call_async(&e2e_srv, "print('y' * 200000)\n6 * 7", NULL);
	case K_LIST:
		return mcpc_request_async(&e2e_srv, "tools/list", NULL);
	default:
		return mcpc_request_async(&e2e_srv, "ping", NULL);
	}
}

/* A JSON-RPC error saying the server ran out of memory? */
static int oom_error(json_object *r)
{
	json_object *e = mcpc_error(r);
	const char *msg = json_object_get_string(e2e_member(e, "message"));

	return e && json_object_get_int(e2e_member(e, "code")) == -32603 && msg &&
	       strstr(msg, OOM_SAYS);
}

/* A tool result saying the server could not serve the call for want of resources? */
static int resource_error(json_object *r)
{
	const char *type = mcpc_err_str(r, "type"), *msg = mcpc_err_str(r, "message");
	const char *text = mcpc_text(r);

	return mcpc_status(r) && strcmp(mcpc_status(r), "crashed") == 0 && type &&
	       strcmp(type, "ResourceError") == 0 && msg && strstr(msg, "memory") && text &&
	       !strstr(text, "Python process crashed");
}

/* Is r the right answer to request i? */
static int right(int i, json_object *r)
{
	const char *st = mcpc_status(r);
	json_object *res = mcpc_result(r);

	switch ((enum kind)(i % N_KINDS)) {
	case K_DEFAULT:
	case K_NEW:
	case K_BIG:
		return st && strcmp(st, "ok") == 0 &&
		       json_object_get_int(e2e_member(mcpc_structured(r), "result")) == 42;
	case K_RAISE:
		return st && strcmp(st, "error") == 0 && mcpc_err_str(r, "type") &&
		       strcmp(mcpc_err_str(r, "type"), "ValueError") == 0;
	case K_LIST:
		return json_object_is_type(e2e_member(res, "tools"), json_type_array) &&
		       json_object_array_length(e2e_member(res, "tools")) == 1;
	default:
		return res && json_object_is_type(res, json_type_object);
	}
}

/* Initialize, again while the server answers that it ran out of memory doing so. */
static void initialize(void)
{
	for (int tries = 0; tries < 100; tries++) {
		json_object *r = e2e_hold(mcpc_initialize(&e2e_srv, VERSION));
		cr_assert_not_null(r, "no answer to initialize; log:\n%s", e2e_log());
		if (mcpc_result(r))
			return;
		cr_assert(oom_error(r), "initialize failed otherwise: %s", mcpc_json(r));
	}
	cr_assert_fail("initialize never succeeded; log:\n%s", e2e_log());
}

/* Run the requests with allocations failing on schedule (SAFEPY_FAILALLOC's syntax), which
 * must make exactly `fails` of them fail; then, memory back, the server serves. */
static void under_schedule(const char *schedule, int fails)
{
	int64_t id[N_REQ];
	int n_right = 0, n_oom = 0, n_resource = 0;
	char *log;

	cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_FAILALLOC_BIN, ARGS("--prefork", "1"),
	                        ARGS(e2e_fmt("SAFEPY_FAILALLOC=%s", schedule))),
	             0);
	initialize();
	for (int i = 0; i < N_REQ; i++)
		id[i] = send_request(i);
	for (int i = 0; i < N_REQ; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id[i], E2E_CALL_MS));
		cr_assert_not_null(r, "request %d (id %lld) got no answer; log:\n%s", i,
		                   (long long)id[i], e2e_log());
		if (right(i, r))
			n_right++;
		else if (oom_error(r))
			n_oom++;
		else if (resource_error(r))
			n_resource++;
		else
			cr_assert_fail(
			    "request %d: neither its answer nor a clear memory error: %s", i,
			    mcpc_json(r));
	}
	cr_log_info("%s: %d right, %d JSON-RPC memory errors, %d ResourceError results", schedule,
	            n_right, n_oom, n_resource);
	cr_assert_gt(n_oom + n_resource, 0, "no request felt the failures");
	/* Every failure the schedule allows has happened: from here memory is plenty. */
	e2e_assert_result(e2e_call("6 * 7", "{\"session\":\"new\"}"), "6 * 7", "42");
	e2e_assert_result(e2e_call("6 * 7", NULL), "6 * 7", "42");
	e2e_finish(&e2e_srv, 10000);
	log = mcpc_stderr(&e2e_srv);
	cr_assert(strstr(log, e2e_fmt("failalloc: %d of ", fails)),
	          "not every failure of the schedule happened; log:\n%s", e2e_log());
	cr_assert(!strstr(log, "out of memory reading stdin"), "log:\n%s", e2e_log());
	free(log);
}

/* Each failure isolated: the MCP line handler, responses, the engine's frames and chains.
 * The period is above what answering initialize allocates (37 now): with one at or below it,
 * every attempt at initialize would meet a failure until the schedule ran out. */
Test(failalloc, every_53rd_allocation_fails)
{
	under_schedule("every=53,max=25", 25);
}
