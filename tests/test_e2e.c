/* test_e2e.c - end-to-end tests of the real safepy binary over MCP stdio: the protocol, the
 * run_python contract, what users of the old product rely on, limits, cancellation,
 * concurrency, shutdown, and the one-shot commands. Each test starts its own server and, at its
 * end, checks that every line the server wrote on stdout was a JSON-RPC message. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "protocol.h"

TestSuite(protocol, .timeout = 90, .fini = e2e_cleanup);
TestSuite(run_python, .timeout = 90, .fini = e2e_cleanup);
TestSuite(old_product, .timeout = 90, .fini = e2e_cleanup);
TestSuite(limits, .timeout = 120, .fini = e2e_cleanup);
TestSuite(exits, .timeout = 90, .fini = e2e_cleanup);
TestSuite(cancel, .timeout = 90, .fini = e2e_cleanup);
TestSuite(concurrency, .timeout = 90, .fini = e2e_cleanup);
TestSuite(shutdown, .timeout = 90, .fini = e2e_cleanup);
TestSuite(cli, .timeout = 90, .fini = e2e_cleanup);

/* ---- Harness: what only this suite needs ---------------------------------------------------- */

/* A JSON-RPC error response with this code. */
static void expect_rpc_error(json_object *r, int code)
{
	cr_assert_not_null(r, "no response");
	cr_assert_not_null(mcpc_error(r), "expected JSON-RPC error %d, got %s", code, mcpc_json(r));
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_error(r), "code")), code, "%s",
	             mcpc_json(r));
}

static json_object *send_wait(const char *line, json_object *id, int ms)
{
	cr_assert_eq(mcpc_send(&e2e_srv, line), 0);
	return e2e_hold(mcpc_wait_id(&e2e_srv, id, ms));
}

static json_object *send_wait_int(const char *line, int64_t id)
{
	json_object *jid = json_object_new_int64(id), *r = send_wait(line, jid, 10000);

	json_object_put(jid);
	return r;
}

/* ---- Protocol ----------------------------------------------------------------------------- */

Test(protocol, echoes_each_supported_version)
{
	static const char *const versions[] = {"2024-11-05", "2025-03-26", "2025-06-18",
	                                       "2025-11-25"};

	for (size_t i = 0; i < 4; i++) {
		json_object *r, *res;

		cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_BIN, NULL, NULL), 0);
		r = e2e_hold(mcpc_initialize(&e2e_srv, versions[i]));
		res = mcpc_result(r);
		cr_assert_not_null(res, "initialize %s: %s", versions[i], mcpc_json(r));
		cr_assert_str_eq(json_object_get_string(e2e_member(res, "protocolVersion")),
		                 versions[i]);
		cr_assert_str_eq(
		    json_object_get_string(e2e_member(e2e_member(res, "serverInfo"), "name")),
		    "safepy");
		cr_assert(json_object_is_type(e2e_member(e2e_member(res, "capabilities"), "tools"),
		                              json_type_object),
		          "%s", mcpc_json(r));
		cr_assert(json_object_is_type(e2e_member(e2e_member(res, "serverInfo"), "version"),
		                              json_type_string));
		e2e_stop();
	}
}

Test(protocol, answers_unknown_versions_with_latest)
{
	static const char *const versions[] = {"1999-01-01", "2026-07-28", "2025-01-01"};

	for (size_t i = 0; i < 3; i++) {
		json_object *r;

		cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_BIN, NULL, NULL), 0);
		r = e2e_hold(mcpc_initialize(&e2e_srv, versions[i]));
		cr_assert_not_null(mcpc_result(r), "%s", mcpc_json(r));
		cr_assert_str_eq(
		    json_object_get_string(e2e_member(mcpc_result(r), "protocolVersion")),
		    "2025-11-25", "asked %s: %s", versions[i], mcpc_json(r));
		e2e_stop();
	}
}

Test(protocol, answers_ping_before_initialize)
{
	json_object *id = json_object_new_string("p-1"), *r;

	cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_BIN, NULL, NULL), 0);
	r = send_wait("{\"jsonrpc\":\"2.0\",\"id\":\"p-1\",\"method\":\"ping\"}", id, 30000);
	json_object_put(id);
	cr_assert_not_null(r, "no answer to ping; stderr:\n%s", e2e_log());
	cr_assert(json_object_is_type(e2e_member(r, "id"), json_type_string), "id type lost: %s",
	          mcpc_json(r));
	cr_assert(json_object_is_type(mcpc_result(r), json_type_object), "%s", mcpc_json(r));
	cr_assert_eq(json_object_object_length(mcpc_result(r)), 0, "%s", mcpc_json(r));
	e2e_stop();
}

Test(protocol, lists_one_run_python_tool)
{
	json_object *r, *tools, *tool, *schema, *req;
	int has_code = 0;

	e2e_start(NULL);
	r = e2e_hold(mcpc_request(&e2e_srv, "tools/list", NULL, 10000));
	cr_assert_not_null(mcpc_result(r), "%s", mcpc_json(r));
	tools = e2e_member(mcpc_result(r), "tools");
	cr_assert(json_object_is_type(tools, json_type_array));
	cr_assert_eq(json_object_array_length(tools), 1, "%s", mcpc_json(r));
	cr_assert_null(e2e_member(mcpc_result(r), "nextCursor"), "one tool needs no cursor");
	tool = json_object_array_get_idx(tools, 0);
	cr_assert_str_eq(json_object_get_string(e2e_member(tool, "name")), "run_python");
	cr_assert(json_object_is_type(e2e_member(tool, "description"), json_type_string));
	schema = e2e_member(tool, "inputSchema");
	cr_assert_str_eq(json_object_get_string(e2e_member(schema, "type")), "object");
	cr_assert_str_eq(json_object_get_string(e2e_member(
	                     e2e_member(e2e_member(schema, "properties"), "code"), "type")),
	                 "string");
	req = e2e_member(schema, "required");
	for (size_t i = 0;
	     json_object_is_type(req, json_type_array) && i < json_object_array_length(req); i++)
		has_code |=
		    !strcmp(json_object_get_string(json_object_array_get_idx(req, i)), "code");
	cr_assert(has_code, "code is not required: %s", mcpc_json(schema));
	cr_assert_str_eq(
	    json_object_get_string(e2e_member(e2e_member(tool, "outputSchema"), "type")), "object",
	    "2025-11-25 tools declare an outputSchema: %s", mcpc_json(tool));
	e2e_stop();
}

Test(protocol, older_versions_get_no_structured_content)
{
	json_object *r, *tool;

	e2e_start_with("2024-11-05", NULL, NULL);
	r = e2e_hold(mcpc_request(&e2e_srv, "tools/list", NULL, 10000));
	tool = json_object_array_get_idx(e2e_member(mcpc_result(r), "tools"), 0);
	cr_assert_not_null(tool, "%s", mcpc_json(r));
	cr_assert_null(e2e_member(tool, "outputSchema"), "2024-11-05 has no outputSchema: %s",
	               mcpc_json(tool));
	r = e2e_hold(mcpc_call(&e2e_srv, "print('hi')\n6*7", NULL, E2E_CALL_MS));
	cr_assert_not_null(mcpc_result(r), "%s", mcpc_json(r));
	cr_assert_null(mcpc_structured(r), "2024-11-05 has no structuredContent: %s", mcpc_json(r));
	cr_assert_not(e2e_is_error(r));
	cr_assert_not_null(mcpc_text(r));
	cr_assert(strstr(mcpc_text(r), "hi") && strstr(mcpc_text(r), "42"), "text: %s",
	          mcpc_text(r));
	e2e_stop();
}

Test(protocol, unknown_method_is_method_not_found)
{
	e2e_start(NULL);
	expect_rpc_error(e2e_hold(mcpc_request(&e2e_srv, "resources/list", NULL, 5000)), -32601);
	expect_rpc_error(e2e_hold(mcpc_request(&e2e_srv, "server/discover", NULL, 5000)), -32601);
	e2e_stop();
}

Test(protocol, answers_ping_and_unknown_methods_while_code_runs)
{
	int64_t busy, ping;
	json_object *r, *jid;

	e2e_start(NULL);
	busy = mcpc_call_async(&e2e_srv, "while True: pass", "{\"timeout_seconds\": 5}");
	usleep(300000);
	expect_rpc_error(e2e_hold(mcpc_request(&e2e_srv, "prompts/list", NULL, 3000)), -32601);
	ping = mcpc_request_async(&e2e_srv, "ping", NULL);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ping, 3000));
	cr_assert_not_null(mcpc_result(r), "ping not answered while a call runs");
	jid = json_object_new_int64(busy);
	cr_assert_not(mcpc_seen_id(&e2e_srv, jid, 0), "the busy call answered before the pings");
	json_object_put(jid);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, busy, 20000));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	e2e_stop();
}

Test(protocol, garbage_line_is_parse_error_with_null_id)
{
	json_object *r;

	e2e_start(NULL);
	cr_assert_eq(mcpc_send(&e2e_srv, "{this is not json"), 0);
	r = e2e_hold(mcpc_next(&e2e_srv, 5000));
	expect_rpc_error(r, -32700);
	cr_assert(json_object_object_get_ex(r, "id", NULL) ? e2e_member(r, "id") == NULL : 1,
	          "id must be null: %s", mcpc_json(r));
	cr_assert_eq(mcpc_send(&e2e_srv, "[1,2"), 0);
	expect_rpc_error(e2e_hold(mcpc_next(&e2e_srv, 5000)), -32700);
	e2e_expect_result("1+1", "2");
	e2e_stop();
}

Test(protocol, malformed_requests_are_invalid_request)
{
	e2e_start(NULL);
	expect_rpc_error(send_wait_int("{\"jsonrpc\":\"2.0\",\"id\":11}", 11), -32600);
	expect_rpc_error(send_wait_int("{\"jsonrpc\":\"1.0\",\"id\":12,\"method\":\"ping\"}", 12),
	                 -32600);
	expect_rpc_error(send_wait_int("{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":7}", 13), -32600);
	e2e_expect_result("2+2", "4");
	e2e_stop();
}

Test(protocol, too_long_line_gets_an_error_then_serving_goes_on)
{
	size_t n = PROTO_MAX_LINE + 4096;
	char *line = malloc(n + 64), says[96];
	json_object *r;

	cr_assert_not_null(line);
	e2e_start(NULL);
	/* A well-formed request that is too long: the size limit, not the parser, must catch it. */
	strcpy(line, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"ping\",\"params\":{\"pad\":\"");
	memset(line + strlen(line), 'x', n);
	strcpy(line + n, "\"}}");
	cr_assert_eq(mcpc_send(&e2e_srv, line), 0);
	free(line);
	r = e2e_hold(mcpc_next(&e2e_srv, 20000));
	cr_assert_not_null(r, "no answer to an over-long line");
	cr_assert_not_null(mcpc_error(r), "over-long line must get an error: %s", mcpc_json(r));
	/* The message states the limit the server applies. */
	snprintf(says, sizeof(says), "at most %u bytes", PROTO_MAX_LINE);
	cr_assert(strstr(mcpc_json(r), says), "the error does not say \"%s\": %s", says,
	          mcpc_json(r));
	e2e_expect_result("'still' + ' serving'", "\"still serving\"");
	e2e_stop();
}

Test(protocol, long_line_under_the_limit_is_accepted)
{
	size_t n = 3u << 20;
	char *code = malloc(n + 64);

	cr_assert_not_null(code);
	e2e_start(NULL);
	strcpy(code, "s = '");
	memset(code + 5, 'y', n);
	strcpy(code + 5 + n, "'\nlen(s)");
	e2e_expect_result(code, "3145728");
	free(code);
	e2e_stop();
}

Test(protocol, batch_under_2025_03_26)
{
	json_object *r, *ids[3] = {NULL};

	e2e_start_with("2025-03-26", NULL, NULL);
	cr_assert_eq(mcpc_send(&e2e_srv,
	                       "[{\"jsonrpc\":\"2.0\",\"id\":1001,\"method\":\"ping\"},"
	                       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
	                       "{\"jsonrpc\":\"2.0\",\"id\":1002,\"method\":\"tools/call\","
	                       "\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":"
	                       "\"6*7\"}}},"
	                       "{\"jsonrpc\":\"2.0\",\"id\":1003,\"method\":\"tools/list\"}]"),
	             0);
	r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
	cr_assert(json_object_is_type(r, json_type_array), "batch answer must be an array: %s",
	          mcpc_json(r));
	cr_assert_eq(json_object_array_length(r), 3, "%s", mcpc_json(r));
	for (size_t i = 0; i < 3; i++) {
		json_object *m = json_object_array_get_idx(r, i);
		int64_t id = json_object_get_int64(e2e_member(m, "id"));

		cr_assert(id >= 1001 && id <= 1003 && !ids[id - 1001], "%s", mcpc_json(r));
		ids[id - 1001] = m;
	}
	cr_assert_not(e2e_is_error(ids[1]), "%s", mcpc_json(ids[1]));
	cr_assert(strstr(mcpc_text(ids[1]) ? mcpc_text(ids[1]) : "", "42"), "%s",
	          mcpc_json(ids[1]));
	cr_assert_not_null(e2e_member(mcpc_result(ids[2]), "tools"));
	/* A batch of notifications only gets no answer at all. */
	cr_assert_eq(
	    mcpc_send(&e2e_srv, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]"),
	    0);
	r = e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000));
	cr_assert_not_null(mcpc_result(r),
	                   "the next message after a notification-only batch "
	                   "must be the ping answer: %s",
	                   mcpc_json(r));
	cr_assert_eq(e2e_srv.nqueue, 0, "unexpected message: %s", mcpc_json(e2e_srv.queue[0]));
	e2e_stop();
}

Test(protocol, batch_refused_after_2025_03_26)
{
	json_object *r;

	e2e_start_with("2025-06-18", NULL, NULL);
	cr_assert_eq(mcpc_send(&e2e_srv, "[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}]"),
	             0);
	r = e2e_hold(mcpc_next(&e2e_srv, 5000));
	expect_rpc_error(r, -32600);
	cr_assert_null(e2e_member(r, "id"), "id must be null: %s", mcpc_json(r));
	e2e_stop();
}

Test(protocol, notifications_get_no_reply)
{
	json_object *r;

	e2e_start(NULL);
	mcpc_notify(&e2e_srv, "notifications/initialized", NULL);
	mcpc_notify(&e2e_srv, "notifications/whatever", json_object_new_object());
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	                    "\"params\":{\"requestId\":424242}}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	/* Nothing may answer the notifications: the next message is the ping's answer. */
	r = e2e_hold(mcpc_next(&e2e_srv, 5000));
	cr_assert_not_null(r, "no answer to ping");
	cr_assert_eq(json_object_get_int(e2e_member(r, "id")), 9, "a notification got a reply: %s",
	             mcpc_json(r));
	cr_assert_not_null(mcpc_result(r), "%s", mcpc_json(r));
	e2e_stop();
}

/* safepy sends no requests: a response from the client gets no reply, valid or not, and an
 * invalid one is logged; a malformed notification gets no reply either. */
Test(protocol, responses_and_malformed_notifications_get_no_reply)
{
	json_object *r;
	char *log;

	e2e_start(NULL);
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	mcpc_send(&e2e_srv,
	          "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-1,\"message\":\"m\"}}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{},\"error\":{\"code\":1,"
	                    "\"message\":\"m\"}}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"result\":{}}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"method\":7}");
	mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	r = e2e_hold(mcpc_next(&e2e_srv, 5000));
	cr_assert_not_null(r, "no answer to ping");
	cr_assert_eq(json_object_get_int(e2e_member(r, "id")), 9, "something else was answered: %s",
	             mcpc_json(r));
	cr_assert_not_null(mcpc_result(r), "%s", mcpc_json(r));
	log = mcpc_stderr(&e2e_srv);
	cr_assert(strstr(log,
	                 "warn: ignored an invalid JSON-RPC response from the client (id 2): it "
	                 "has both"),
	          "%s", log);
	cr_assert(
	    strstr(log, "warn: ignored an invalid JSON-RPC response from the client: it has no"),
	    "%s", log);
	cr_assert(strstr(log, "warn: ignored a malformed notification"), "%s", log);
	cr_assert_null(strstr(log, "(id 1)"), "a valid response is no warning: %s", log);
	free(log);
	e2e_stop();
}

Test(protocol, unknown_tool_and_bad_arguments)
{
	e2e_start(NULL);
	expect_rpc_error(send_wait_int("{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\","
	                               "\"params\":{\"name\":\"nope\",\"arguments\":{}}}",
	                               21),
	                 -32602);
	expect_rpc_error(send_wait_int("{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\","
	                               "\"params\":{\"name\":\"run_python\",\"arguments\":\"1\"}}",
	                               22),
	                 -32602);
	e2e_stop();
}

Test(protocol, bad_argument_values_are_tool_errors)
{
	static const char *const bad[] = {
	    "{\"code\":\"1\",\"bogus\":1}",
	    "{\"code\":\"1\",\"timeout_seconds\":100000}",
	    "{\"code\":\"1\",\"timeout_seconds\":\"5\"}",
	    "{\"code\":\"1\",\"timeout_seconds\":-1}",
	};
	static const char *const bad_code[] = {"{\"code\":5}", "{}"};

	e2e_start(NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[256];
		json_object *r;

		snprintf(line, sizeof(line),
		         "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\",\"params\":"
		         "{\"name\":\"run_python\",\"arguments\":%s}}",
		         30 + i, bad[i]);
		r = send_wait_int(line, (int64_t)(30 + i));
		cr_assert_not_null(mcpc_result(r), "arguments %s: want a tool error, got %s",
		                   bad[i], mcpc_json(r));
		cr_assert(e2e_is_error(r), "arguments %s must be refused: %s", bad[i],
		          mcpc_json(r));
	}
	/* code missing or not a string: a tool error or invalid params, never a run. */
	for (size_t i = 0; i < 2; i++) {
		char line[256];
		json_object *r;

		snprintf(line, sizeof(line),
		         "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\",\"params\":"
		         "{\"name\":\"run_python\",\"arguments\":%s}}",
		         40 + i, bad_code[i]);
		r = send_wait_int(line, (int64_t)(40 + i));
		cr_assert_not_null(r);
		if (mcpc_error(r))
			expect_rpc_error(r, -32602);
		else
			cr_assert(e2e_is_error(r), "arguments %s: %s", bad_code[i], mcpc_json(r));
	}
	e2e_stop();
}

Test(protocol, ids_keep_their_type)
{
	json_object *id = json_object_new_string("7"), *r;

	e2e_start(NULL);
	r = send_wait("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"tools/call\",\"params\":{"
	              "\"name\":\"run_python\",\"arguments\":{\"code\":\"7\"}}}",
	              id, E2E_CALL_MS);
	json_object_put(id);
	cr_assert_not_null(r, "no answer for string id \"7\"");
	cr_assert(json_object_is_type(e2e_member(r, "id"), json_type_string), "%s", mcpc_json(r));
	r = send_wait_int("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}", 0);
	cr_assert_not_null(r);
	cr_assert(json_object_is_type(e2e_member(r, "id"), json_type_int), "%s", mcpc_json(r));
	e2e_stop();
}

/* A call whose id is that of a call still in progress: both ran and both answers carried the
 * id (the client could not tell them apart; a cancellation reached the later one). It is
 * refused as an invalid request (answered with a null id: the id's answer stays the first
 * call's), which runs and answers; once answered, the id may be used again. So is any other
 * request with that id. */
Test(protocol, an_id_in_progress_is_not_taken_again)
{
	static const char call[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"run_python\",\"arguments\":{\"code\":\"%s\"}}}";
	json_object *r;

	e2e_start(NULL);
	cr_assert_eq(mcpc_send(&e2e_srv, e2e_fmt(call, "import time\\ntime.sleep(1)\\n'first'")),
	             0);
	cr_assert_eq(mcpc_send(&e2e_srv, e2e_fmt(call, "'second'")), 0);
	/* Any request: a ping or tools/list with the id was answered with it too. */
	cr_assert_eq(mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}"), 0);
	cr_assert_eq(
	    mcpc_send(&e2e_srv, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}"), 0);
	for (int i = 0; i < 3; i++) {
		r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
		cr_assert_not_null(r, "no answer");
		cr_assert(json_object_is_type(e2e_member(r, "id"), json_type_null), "%s",
		          mcpc_json(r));
		cr_assert_eq(json_object_get_int(e2e_member(e2e_member(r, "error"), "code")),
		             -32600, "%s", mcpc_json(r));
	}
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, 7, E2E_CALL_MS));
	cr_assert_not_null(r, "the first call was not answered");
	e2e_assert_result(r, "'first'", "\"first\"");
	{
		json_object *seven = json_object_new_int(7);
		int again = mcpc_seen_id(&e2e_srv, seven, 500);
		json_object_put(seven);
		cr_assert_not(again, "a second answer with the id came");
	}
	r = send_wait_int(e2e_fmt(call, "'again'"), 7);
	e2e_assert_result(r, "'again'", "\"again\"");
	e2e_stop();
}

Test(protocol, debug_logging_stays_on_stderr)
{
	char *log;

	e2e_start(ARGS("--log-level", "debug"));
	e2e_ok("print('to stdout of the code')\n1");
	e2e_expect_error("1/0", "ZeroDivisionError");
	log = mcpc_stderr(&e2e_srv);
	cr_assert(strlen(log) > 0, "debug level logs nothing on stderr");
	free(log);
	e2e_stop();
}

/* ---- The run_python contract --------------------------------------------------------------- */

Test(run_python, structured_content_has_every_key)
{
	static const char *const keys[] = {"result",      "result_repr", "logs",   "stdout",
	                                   "stderr",      "error",       "status", "truncated",
	                                   "duration_ms", "session"};
	json_object *r, *sc, *content;

	e2e_start(NULL);
	r = e2e_ok("1+1");
	sc = mcpc_structured(r);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert(json_object_object_get_ex(sc, keys[i], NULL), "key %s missing: %s",
		          keys[i], mcpc_json(sc));
	cr_assert_eq(json_object_get_int(e2e_member(sc, "result")), 2);
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "2");
	cr_assert_null(e2e_member(sc, "error"));
	/* The call ran in the connection's default session, which has a handle too. */
	cr_assert(json_object_is_type(e2e_member(sc, "session"), json_type_string), "%s",
	          mcpc_json(sc));
	cr_assert_geq(strlen(mcpc_sc_str(r, "session")), 32, "%s", mcpc_json(sc));
	cr_assert_str_eq(mcpc_sc_str(r, "logs"), "");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "");
	cr_assert(json_object_is_type(e2e_member(sc, "truncated"), json_type_boolean));
	cr_assert_not(json_object_get_boolean(e2e_member(sc, "truncated")));
	cr_assert(json_object_is_type(e2e_member(sc, "duration_ms"), json_type_int));
	cr_assert_geq(json_object_get_int64(e2e_member(sc, "duration_ms")), 0);
	content = e2e_member(mcpc_result(r), "content");
	cr_assert_str_eq(
	    json_object_get_string(e2e_member(json_object_array_get_idx(content, 0), "type")),
	    "text");
	cr_assert(strstr(mcpc_text(r), "Result: 2"), "text: %s", mcpc_text(r));
	e2e_stop();
}

Test(run_python, last_expression_is_the_result)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result("x = 5\nx * 2", "10");
	e2e_expect_result("'ab' * 2", "\"abab\"");
	e2e_expect_result("{'a': [1, 2.5, None, True], 'b': {'c': 'd'}}",
	                  "{\"a\":[1,2.5,null,true],\"b\":{\"c\":\"d\"}}");
	e2e_expect_result("2**62", "4611686018427387904");
	/* Beyond 64 bits JSON has no exact form: null or the exact number, and an exact repr. */
	r = e2e_ok("2**100");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "1267650600228229401496703205376");
	cr_assert(!e2e_member(mcpc_structured(r), "result") ||
	              !strcmp(mcpc_json(e2e_member(mcpc_structured(r), "result")),
	                      "1267650600228229401496703205376"),
	          "inexact: %s", mcpc_json(r));
	r = e2e_ok("'x'");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "'x'");
	e2e_stop();
}

Test(run_python, assignment_value_is_the_result)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result("x = 5", "5");
	e2e_expect_result("a = b = 'hi'", "\"hi\"");
	r = e2e_ok("a, b = 1, 2");
	cr_assert(json_object_equal(e2e_member(mcpc_structured(r), "result"),
	                            e2e_hold(json_tokener_parse("[1,2]"))),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "(1, 2)");
	e2e_stop();
}

Test(run_python, statement_without_value_gives_null)
{
	static const char *const codes[] = {"import math",
	                                    "for i in range(3):\n    y = i",
	                                    "def f():\n    return 1",
	                                    "pass",
	                                    "x = 1\ndel x",
	                                    "from math import sqrt as sq",
	                                    "import json as j, math\nfrom math import (pi,\n  e)"};

	e2e_start(NULL);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		json_object *r = e2e_ok(codes[i]);
		json_object *sc = mcpc_structured(r);

		cr_assert_null(e2e_member(sc, "result"), "%s: %s", codes[i], mcpc_json(r));
		cr_assert_null(e2e_member(sc, "result_repr"), "%s: %s", codes[i], mcpc_json(r));
	}
	e2e_stop();
}

Test(run_python, non_json_value_has_null_result_and_a_repr)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("class Point:\n    def __repr__(self):\n        return 'Point()'\nPoint()");
	cr_assert_null(e2e_member(mcpc_structured(r), "result"), "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "Point()");
	cr_assert(strstr(mcpc_text(r), "Point()"), "%s", mcpc_text(r));
	e2e_stop();
}

Test(run_python, logs_keep_stdout_and_stderr_in_order)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')\n"
	           "sys.stderr.write('d\\n')\n");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "a\nc\n");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "b\nd\n");
	cr_assert_str_eq(mcpc_sc_str(r, "logs"), "a\nb\nc\nd\n");
	e2e_stop();
}

Test(run_python, print_behaves_as_cpython)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("print('a', 'b', sep='-', end='!')\nprint()\nprint(1, 2.5, None, [3], sep='|')\n"
	           "print('no newline', end='')");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "a-b!\n1|2.5|None|[3]\nno newline");
	r = e2e_ok("print('é ✓ 日本')");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "é ✓ 日本\n");
	e2e_stop();
}

/* The string at a JSON pointer of r is exactly want[0..n), NUL bytes included. */
static void assert_bytes(json_object *r, const char *ptr, const char *want, size_t n)
{
	json_object *v = NULL;

	cr_assert_eq(json_pointer_get(r, ptr, &v), 0, "no %s in %s", ptr, mcpc_json(r));
	cr_assert(json_object_is_type(v, json_type_string), "%s in %s", ptr, mcpc_json(r));
	cr_assert_eq((size_t)json_object_get_string_len(v), n, "%s has %d bytes, want %zu: %s", ptr,
	             json_object_get_string_len(v), n, mcpc_json(r));
	cr_assert_eq(memcmp(json_object_get_string(v), want, n), 0, "%s in %s", ptr, mcpc_json(r));
}

#define SC       "/result/structuredContent/"
#define BYTES(s) s, sizeof(s) - 1

/* What the code prints, returns and raises comes back whole on every path: a NUL does not end
 * the text, nothing is dropped, and no truncated flag is needed. */
Test(run_python, nul_and_every_character_come_back_intact)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import sys\nprint('a\\x00b')\nprint('\\x00', file=sys.stderr)\n'c\\x00d'");
	assert_bytes(r, SC "stdout", BYTES("a\0b\n"));
	assert_bytes(r, SC "stderr", BYTES("\0\n"));
	assert_bytes(r, SC "logs", BYTES("a\0b\n\0\n"));
	assert_bytes(r, SC "result", BYTES("c\0d"));
	assert_bytes(r, SC "result_repr", BYTES("'c\\x00d'"));
	assert_bytes(r, "/result/content/0/text", BYTES("a\0b\n\0\nResult: 'c\\x00d'"));
	cr_assert_not(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	/* A repr that holds a NUL itself; every control character but the carriage return (a
	 * line's last state after one comes back: carriage_returns_leave_what_a_terminal_shows)
	 * and the C1 range. */
	r = e2e_ok("class R:\n    def __repr__(self):\n        return 'r\\x00s'\n"
	           "print(''.join(chr(i) for i in range(32) if i != 13) + '\\x7f\\x80\\x9f')\nR()");
	assert_bytes(r, SC "result_repr", BYTES("r\0s"));
	assert_bytes(r, SC "stdout",
	             BYTES("\0\1\2\3\4\5\6\a\b\t\n\v\f\16\17\20\21\22\23\24\25\26\27\30\31\32"
	                   "\33\34\35\36\37\177\302\200\302\237\n"));
	/* An exception's message, its type's name and the traceback. */
	r = e2e_expect_error("raise ValueError('a\\x00b')", "ValueError");
	assert_bytes(r, SC "error/message", BYTES("a\0b"));
	cr_assert(memmem(json_object_get_string(json_object_object_get(
	                     e2e_member(mcpc_structured(r), "error"), "traceback")),
	                 (size_t)json_object_get_string_len(json_object_object_get(
	                     e2e_member(mcpc_structured(r), "error"), "traceback")),
	                 "ValueError: a\0b\n", 15),
	          "%s", mcpc_json(r));
	r = e2e_call("class E(Exception):\n    pass\nE.__qualname__ = 'E\\x00F'\nraise E('m')",
	             NULL);
	assert_bytes(r, SC "error/type", BYTES("E\0F"));
	e2e_stop();
}

/* Bytes through sys.stdout.buffer: valid UTF-8 as it is (split across writes too), any other
 * byte as a \xNN escape; a lone surrogate printed as text comes back as its escape. */
Test(run_python, bytes_and_invalid_utf8_come_back_as_escapes)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import sys\nb = sys.stdout.buffer\nb.write(b'a\\xffb\\xc3')\n"
	           "b.write(b'\\xa9\\x00')\nb.write(bytearray(b'\\xe2\\x82'))\nprint('!')\n"
	           "sys.stderr.buffer.write(memoryview(b'\\xf0\\x9f'))\nprint('\\udcff')\n"
	           "b.write(b'\\xe2')");
	assert_bytes(r, SC "stdout", BYTES("a\\xffb\303\251\0\\xe2\\x82!\n\\udcff\n\\xe2"));
	assert_bytes(r, SC "stderr", BYTES("\\xf0\\x9f"));
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), 1, "%s",
	             mcpc_json(r));
	/* A lone continuation byte, then more: it held back every later write (SystemError). */
	r = e2e_ok("import sys\nb = sys.stdout.buffer\nb.write(b'\\x8b')\nb.write(b'abcd')\n"
	           "b.write(b'\\xe2\\x88')\nb.write(b'\\x9a!')\nb.write(b'\\xff')");
	assert_bytes(r, SC "stdout", BYTES("\\x8babcd\342\210\232!\\xff"));
	/* str is refused as in CPython; print to the buffer is a TypeError. */
	e2e_expect_error("import sys\nsys.stdout.buffer.write('text')", "TypeError");
	e2e_stop();
}

Test(run_python, output_before_an_exception_is_returned)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("print('before')\nx = 1\n1/0\nprint('after')", "ZeroDivisionError");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "before\n");
	cr_assert(strstr(mcpc_err_str(r, "message"), "division by zero"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "line 3"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_text(r), "before") && strstr(mcpc_text(r), "ZeroDivisionError"),
	          "text: %s", mcpc_text(r));
	cr_assert(strstr(mcpc_text(r), "before") < strstr(mcpc_text(r), "ZeroDivisionError"),
	          "printed output comes first: %s", mcpc_text(r));
	e2e_stop();
}

Test(run_python, traceback_points_at_user_lines)
{
	json_object *r;
	const char *tb;

	e2e_start(NULL);
	r = e2e_expect_error("def inner(x):\n    y = x + 1\n    raise ValueError('bad %d' % y)\n\n"
	                     "def outer():\n    inner(1)\n\nouter()\n",
	                     "ValueError");
	tb = mcpc_err_str(r, "traceback");
	cr_assert_str_eq(mcpc_err_str(r, "message"), "bad 2");
	cr_assert(strstr(tb, "line 3") && strstr(tb, "line 6") && strstr(tb, "line 8"),
	          "traceback: %s", tb);
	cr_assert(strstr(tb, "inner") && strstr(tb, "outer"), "traceback: %s", tb);
	cr_assert(strstr(mcpc_text(r), "ValueError: bad 2"), "text: %s", mcpc_text(r));
	e2e_stop();
}

Test(run_python, syntax_error_is_reported)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("x = 1\na = ;\n", "SyntaxError");
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "line 2") ||
	              strstr(mcpc_err_str(r, "message"), "line 2"),
	          "%s", mcpc_json(r));
	e2e_expect_error("def f(:\n    pass", "SyntaxError");
	e2e_stop();
}

Test(run_python, exceptions_keep_their_types)
{
	e2e_start(NULL);
	e2e_expect_error("import math\nmath.sqrt(-1)", "ValueError");
	e2e_expect_error("{}['k']", "KeyError");
	e2e_expect_error("undefined_name", "NameError");
	e2e_expect_error("int('x')", "ValueError");
	e2e_expect_error("assert 1 == 2, 'nope'", "AssertionError");
	e2e_expect_error("class MyErr(Exception): pass\nraise MyErr('m')", "MyErr");
	e2e_stop();
}

Test(run_python, generators_and_coroutines)
{
	e2e_start(NULL);
	e2e_expect_result("def gen(n):\n    for i in range(n):\n        got = yield i\n"
	                  "        if got: yield got\n"
	                  "def chain():\n    yield from gen(2)\n    yield from 'ab'\n"
	                  "g = gen(3)\nfirst = next(g)\nsent = g.send('S')\n"
	                  "[first, sent, list(chain()), sum(x * x for x in range(4))]",
	                  "[0,\"S\",[0,1,\"a\",\"b\"],14]");
	e2e_expect_result("seen = []\ndef lazy():\n    for i in range(3):\n        seen.append(i)\n"
	                  "        yield i\n"
	                  "it = (x * 2 for x in lazy())\nfirst = next(it)\n[first, seen]",
	                  "[0,[0]]");
	e2e_expect_result("async def inner():\n    return 20\nasync def outer():\n"
	                  "    return await inner() + 1\n"
	                  "c = outer()\ntry:\n    c.send(None)\nexcept StopIteration as e:\n"
	                  "    r = e.value\nr",
	                  "21");
	e2e_stop();
}

Test(run_python, match_walrus_and_unpacking)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "def kind(v):\n    match v:\n        case {'op': 'add', 'args': [a, b]}:\n"
	    "            return a + b\n        case [x, *rest]:\n"
	    "            return len(rest)\n        case str() as s if s:\n"
	    "            return s.upper()\n        case _:\n            return None\n"
	    "[kind({'op': 'add', 'args': [2, 3]}), kind([1, 2, 3]), kind('hi'), kind(0)]",
	    "[5,2,\"HI\",null]");
	e2e_expect_result("data = [1, 5, 9]\nif (n := len(data)) > 2:\n    big = [y for x in data "
	                  "if (y := x * 2) > 5]\n"
	                  "a, *b = 'xyz'\n[first, [second, third]] = [1, [2, 3]]\n"
	                  "d = {'k': 1}\nm = {**d, 'j': 2}\n[n, big, a, b, first, third, m]",
	                  "[3,[10,18],\"x\",[\"y\",\"z\"],1,3,{\"k\":1,\"j\":2}]");
	e2e_stop();
}

Test(run_python, decorators_and_classes)
{
	e2e_start(NULL);
	e2e_expect_result("import functools\ndef twice(f):\n    @functools.wraps(f)\n"
	                  "    def w(*a, **k):\n        return f(*a, **k) * 2\n    return w\n"
	                  "@twice\ndef add(a, b):\n    'adds'\n    return a + b\n"
	                  "class Temp:\n    scale = 'C'\n    def __init__(self, deg):\n"
	                  "        self._deg = deg\n    @property\n    def deg(self):\n"
	                  "        return self._deg\n    @deg.setter\n    def deg(self, v):\n"
	                  "        self._deg = v\n    @classmethod\n    def unit(cls):\n"
	                  "        return cls.scale\n    @staticmethod\n    def zero():\n"
	                  "        return 0\n"
	                  "t = Temp(20)\nt.deg = 25\n[add(1, 2), add.__name__, add.__doc__, t.deg, "
	                  "Temp.unit(), Temp.zero()]",
	                  "[6,\"add\",\"adds\",25,\"C\",0]");
	e2e_expect_result("class Base:\n    def __init__(self, x):\n        self.x = x\n"
	                  "    def who(self):\n        return 'base'\n"
	                  "class Child(Base):\n    def __init__(self, x, y):\n"
	                  "        super().__init__(x)\n        self.y = y\n"
	                  "    def who(self):\n        return 'child<' + super().who() + '>'\n"
	                  "c = Child(1, 2)\n[c.x, c.y, c.who(), isinstance(c, Base), "
	                  "type(c).__name__]",
	                  "[1,2,\"child<base>\",true,\"Child\"]");
	e2e_stop();
}

Test(run_python, enums_work)
{
	e2e_start(NULL);
	e2e_expect_result("from enum import Enum, IntFlag\nclass Color(Enum):\n    RED = 1\n"
	                  "    BLUE = 2\nclass Perm(IntFlag):\n    R = 4\n    W = 2\n"
	                  "[Color(2).name, Color.RED.value, len(Color), int(Perm.R | Perm.W)]",
	                  "[\"BLUE\",1,2,6]");
	e2e_stop();
}

Test(run_python, dataclasses_work)
{
	e2e_start(NULL);
	e2e_expect_result("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n"
	                  "P(1).x",
	                  "1");
	e2e_expect_result("from dataclasses import dataclass, field, asdict\n"
	                  "@dataclass(order=True)\nclass P:\n    x: int\n    tags: list = "
	                  "field(default_factory=list)\n"
	                  "ps = sorted([P(3), P(1, ['a'])])\n[ps[0].x, ps[0].tags, repr(P(2)), "
	                  "asdict(P(5))]",
	                  "[1,[\"a\"],\"P(x=2, tags=[])\",{\"x\":5,\"tags\":[]}]");
	e2e_stop();
}

Test(run_python, scopes_and_arguments)
{
	e2e_start(NULL);
	e2e_expect_result("count = 0\ndef bump():\n    global count\n    count += 1\n"
	                  "def counter():\n    n = 0\n    def inc():\n        nonlocal n\n"
	                  "        n += 1\n        return n\n    return inc\n"
	                  "bump(); bump()\ninc = counter(); inc(); inc()\n[count, inc()]",
	                  "[2,3]");
	e2e_expect_result(
	    "def f(a, b, *rest, key='k', **kw):\n    return [a, b, list(rest), key, kw]\n"
	    "def g(x, /, y, *, z):\n    return x + y + z\n"
	    "args = (3, 4)\nopts = {'z': 5}\n"
	    "[f(1, 2, 3, 4), f(1, 2, key='K', extra=1), g(1, *args[:1], **opts), "
	    "(lambda a, b=10: a + b)(1)]",
	    "[[1,2,[3,4],\"k\",{}],[1,2,[],\"K\",{\"extra\":1}],9,11]");
	e2e_expect_result("def m(x=[]):\n    x.append(1)\n    return len(x)\nm(); m()\nm()", "3");
	e2e_stop();
}

Test(run_python, control_flow_is_cpython)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "out = []\nfor i in range(4):\n    if i == 1:\n        continue\n"
	    "    out.append(i)\nelse:\n    out.append('else')\n"
	    "def f():\n    try:\n        return 'try'\n    finally:\n"
	    "        out.append('finally')\n"
	    "r = f()\ntry:\n    raise KeyError('k')\nexcept (ValueError, KeyError) as e:\n"
	    "    out.append(type(e).__name__)\nelse:\n    out.append('no')\n"
	    "try:\n    try:\n        1/0\n    except ZeroDivisionError:\n        raise\n"
	    "except ZeroDivisionError:\n    out.append('reraised')\n"
	    "[out, r, 0 or 'x', 1 and 'y', [] or None]",
	    "[[0,2,3,\"else\",\"finally\",\"KeyError\",\"reraised\"],\"try\",\"x\","
	    "\"y\",null]");
	e2e_expect_result(
	    "class Ctx:\n    def __init__(self):\n        self.log = []\n"
	    "    def __enter__(self):\n        self.log.append('in')\n        return self\n"
	    "    def __exit__(self, *exc):\n        self.log.append('out')\n        return True\n"
	    "c = Ctx()\nwith c:\n    raise ValueError\nc.log",
	    "[\"in\",\"out\"]");
	e2e_stop();
}

Test(run_python, ordinary_dunders_work)
{
	e2e_start(NULL);
	e2e_expect_result("def f():\n    'doc'\n[f.__name__, f.__doc__]", "[\"f\",\"doc\"]");
	e2e_expect_result("class V:\n    def __init__(self, x):\n        self.x = x\n"
	                  "    def __add__(self, o):\n        return V(self.x + o.x)\n"
	                  "    def __eq__(self, o):\n        return self.x == o.x\n"
	                  "    def __len__(self):\n        return self.x\n"
	                  "[len(V(1) + V(2)), V(1) == V(1)]",
	                  "[3,true]");
	e2e_stop();
}

Test(run_python, forbidden_builtins_are_name_errors_and_open_says_why)
{
	/* input() is there, and raises EOFError; globals(), locals() and vars() answer a snapshot
	 * of the code's own names (test_pylayer.c). The call's error says why eval, exec and
	 * compile are not there. */
	static const char *const names[] = {"eval", "exec", "compile", "breakpoint"};
	char code[2048] = "missing = []\n";
	json_object *r;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(code);

		snprintf(code + n, sizeof(code) - n,
		         "try:\n    %s\nexcept NameError:\n    missing.append('%s')\n", names[i],
		         names[i]);
	}
	strcat(code, "missing");
	e2e_start(NULL);
	e2e_expect_result(code, "[\"eval\",\"exec\",\"compile\",\"breakpoint\"]");
	/* Without a workspace open says why no file can be had; its error is a FileNotFoundError
	 * too, so that code that reads a file or else makes its data goes on. */
	r = e2e_expect_error("open('/etc/passwd')", "PermissionError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "no workspace was given"), "%s", mcpc_json(r));
	e2e_expect_result(
	    "try:\n    with open('settings.json') as f:\n        r = f.read()\n"
	    "except FileNotFoundError as e:\n"
	    "    r = ['defaults', isinstance(e, PermissionError), isinstance(e, OSError)]\n"
	    "r",
	    "[\"defaults\",true,true]");
	r = e2e_expect_error("eval('1 + 1')", "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"),
	                 "name 'eval' is not defined: the sandbox runs code as code"),
	          "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "runs code as code"), "%s", mcpc_json(r));
	r = e2e_expect_error("x = 1\nbreakpoint()", "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"),
	                 "name 'breakpoint' is not defined: the code runs without a console"),
	          "%s", mcpc_json(r));
	/* A script's Path(__file__).parent: the code is a cell, and says so. */
	r = e2e_expect_error("here = __file__", "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"),
	                 "name '__file__' is not defined: the code runs as a cell"),
	          "%s", mcpc_json(r));
	e2e_stop();
}

/* sys.stdout.reconfigure(encoding='utf-8'), the first line of many scripts, failed the whole
 * script (AttributeError): it takes a text stream's settings and changes nothing, the output
 * being UTF-8 text already. */
Test(run_python, stdout_takes_reconfigure)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok(
	    "import sys\n"
	    "sys.stdout.reconfigure(encoding='utf-8')\n"
	    "sys.stderr.reconfigure(encoding='utf-8', errors='replace', line_buffering=True)\n"
	    "print('caf\u00e9')\n"
	    "1");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "caf\u00e9\n", "%s", mcpc_json(r));
	e2e_expect_error("import sys\nsys.stdout.reconfigure('utf-8')", "TypeError");
	e2e_stop();
}

/* sys.stdout = io.StringIO() (code capturing what a function prints) set the proxy's name
 * only: print() went on writing to the call's output, and the capture stayed empty; and
 * sys.stdout = sys.__stdout__ was refused. Both streams are the ones print(), logging and the
 * interpreter write to; the next call's output is captured whatever the last one left set. */
Test(run_python, sys_stdout_set_by_the_code_is_where_print_writes)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import io, sys, logging\n"
	           "print('a')\n"
	           "keep = io.StringIO()\n"
	           "sys.stdout = keep\n"
	           "print('kept')\n"
	           "sys.stdout.write('kept too\\n')\n"
	           "sys.stdout = sys.__stdout__\n"
	           "sys.stderr = err = io.StringIO()\n"
	           "logging.warning('logged')\n"
	           "sys.stderr = sys.__stderr__\n"
	           "print('b', file=sys.stderr)\n"
	           "sys.stdout = io.StringIO()\n"
	           "[keep.getvalue(), err.getvalue(), isinstance(sys, type(io))]");
	e2e_assert_result(r, "captured",
	                  "[\"kept\\nkept too\\n\",\"WARNING:root:logged\\n\",true]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "a\n", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "b\n", "%s", mcpc_json(r));
	/* A script's habits: sys.path is a list of its own, sys.executable is not known; what
	 * sys leaves out says so. */
	r = e2e_ok("print('next')\nsys.path.append('.')\n"
	           "try:\n    sys.modules\nexcept AttributeError as e:\n    why = str(e)\n"
	           "[sys.stdout is sys.__stdout__, sys.path, sys.executable, 'no modules' in why]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "next\n", "%s", mcpc_json(r));
	e2e_assert_result(r, "reset", "[true,[\".\"],\"\",true]");
	/* Standard input is empty, as at the end of a file (no console): a puzzle's readline
	 * gives '', input() says why. */
	e2e_expect_result("input = sys.stdin.readline\n"
	                  "try:\n"
	                  "    __builtins__['input']()\n"
	                  "except EOFError as e:\n"
	                  "    why = str(e)\n"
	                  "[input(), sys.stdin.read(), list(sys.stdin), 'console' in why]",
	                  "[\"\",\"\",[],true]");
	e2e_stop();
}

/* with ThreadPoolExecutor() as ex: ex.map(f, items) (code "speeding up" work per item) was
 * refused with the other thread modules. The executors run each task as it is submitted, in
 * the call's own thread: results, exceptions, as_completed (in the order the tasks completed)
 * and wait as a pool's; the pools'
 * own modules stay refused, and no thread is started. */
Test(run_python, concurrent_futures_run_each_task_as_it_is_submitted)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "from concurrent.futures import ThreadPoolExecutor, ProcessPoolExecutor, as_completed\n"
	    "import concurrent.futures as cf\n"
	    "order = []\n"
	    "def sq(x):\n"
	    "    order.append(x)\n"
	    "    if x == 3:\n"
	    "        raise ValueError('three')\n"
	    "    if x == 2:\n"
	    "        exit(2)\n"
	    "    return x * x\n"
	    "with ThreadPoolExecutor(max_workers=4, initializer=order.append, initargs=('init',)) "
	    "as ex:\n"
	    "    futs = {ex.submit(sq, i): i for i in range(5)}\n"
	    "    out = {}\n"
	    "    for f in as_completed(futs):\n"
	    "        try:\n"
	    "            out[futs[f]] = f.result()\n"
	    "        except (ValueError, SystemExit) as e:\n"
	    "            out[futs[f]] = str(e)\n"
	    "with ProcessPoolExecutor() as ex:\n"
	    "    m = list(ex.map(abs, [-1, -2, 3]))\n"
	    "done, pending = cf.wait([ThreadPoolExecutor().submit(len, 'ab')])\n"
	    "try:\n"
	    "    ex.submit(len, 'a')\n"
	    "    after = 'ran'\n"
	    "except RuntimeError:\n"
	    "    after = 'refused'\n"
	    "try:\n"
	    "    import concurrent.futures.thread\n"
	    "    t = 'imported'\n"
	    "except ImportError:\n"
	    "    t = 'refused'\n"
	    "[sorted(out.items()), order, m, [d.result() for d in done], len(pending), after, t,\n"
	    " list(out)]",
	    "[[[0,0],[1,1],[2,\"2\"],[3,\"three\"],[4,16]],[\"init\",0,1,2,3,4],[1,2,3],[2],0,"
	    "\"refused\",\"refused\",[0,1,2,3,4]]");
	e2e_stop();
}

/* A task that waits for one submitted after it (a queue's consumer) waited until the time
 * limit: a wait on a condition with no timeout while no other thread runs raises, saying why.
 * A wait with a timeout still waits; with threads allowed, a thread that sets an event (or is
 * starting, the Thread's own start waits for it) is waited for. */
Test(run_python, a_wait_no_thread_can_end_is_refused)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("import queue\nfrom concurrent.futures import ThreadPoolExecutor\n"
	                     "q = queue.Queue()\n"
	                     "def consumer():\n    return [q.get() for i in range(2)]\n"
	                     "with ThreadPoolExecutor(2) as ex:\n    f = ex.submit(consumer)\n"
	                     "    q.put(1); q.put(2)\nf.result()",
	                     "RuntimeError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "this wait would never end"), "%s",
	          mcpc_json(r));
	e2e_expect_result("import time, queue\nq = queue.Queue()\nt0 = time.monotonic()\n"
	                  "try:\n    q.get(timeout=0.2)\nexcept queue.Empty:\n    e = 'empty'\n"
	                  "[time.monotonic() - t0 >= 0.2, e]",
	                  "[true,\"empty\"]");
	e2e_stop();
	e2e_start(ARGS("--allow-import", "threading"));
	e2e_expect_result("import threading, queue, time\nev = threading.Event()\n"
	                  "def later():\n    time.sleep(0.2); ev.set()\n"
	                  "lt = threading.Thread(target=later)\nlt.start()\n"
	                  "q = queue.Queue()\nt = threading.Thread(target=lambda: q.put(5))\n"
	                  "t.start()\ngot = q.get()\nt.join()\nset = ev.wait()\nlt.join()\n"
	                  "try:\n    q.get()\n    alone = 'waited'\nexcept RuntimeError:\n"
	                  "    alone = 'refused'\n[set, got, alone]",
	                  "[true,5,\"refused\"]");
	e2e_stop();
}

/* Output comes back as a terminal or a notebook shows it: a line redrawn after carriage
 * returns (a progress bar, a counter) is its last state, not every state one after another. */
Test(run_python, carriage_returns_leave_what_a_terminal_shows)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import sys\nfor i in range(1000):\n    print(f'\\r{i}/999', end='')\n"
	           "print()\nprint('a\\r\\nb')\nprint('keep\\rover')\n"
	           "sys.stderr.write('\\r 0%\\r 50%\\r100%\\n')\nprint('done', end='\\r')\n1");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "999/999\na\nb\nover\ndone", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "100%\n", "%s", mcpc_json(r));
	e2e_stop();
}

/* The server's time zone is the code's local time, as on the host (the zygote started with an
 * empty environment, so a TZ the user set gave UTC); a TZ that names a file is not followed. */
Test(run_python, local_time_is_the_servers_time_zone)
{
	e2e_start_with("2025-11-25", NULL, ARGS("TZ=XYZ-3"));
	e2e_expect_result("import time, datetime\n"
	                  "now = datetime.datetime.now().astimezone()\n"
	                  "[time.strftime('%Z %z'), now.utcoffset().total_seconds()]",
	                  "[\"XYZ +0300\",10800.0]");
	e2e_stop();
	e2e_start_with("2025-11-25", NULL, ARGS("TZ=:/etc/passwd"));
	e2e_expect_result("import time\ntime.strftime('%z')", "\"+0000\"");
	e2e_stop();
}

/* asyncio runs coroutines, tasks and timers on the sandbox's event loop, which watches no file
 * descriptor: gather, sleep, queues, timeouts, task groups, to_thread (in the call's thread) as
 * on the host; a loop that could never wake raises RuntimeError (not the time limit); the
 * loop classes code names are that loop (the real selector loop's epoll was killed); no
 * connection is made and no process started, each refusal saying why; the tasks are the pure
 * Python ones. */
Test(run_python, asyncio_runs_tasks_and_timers_on_a_loop_without_io)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result(
	    "import asyncio, time\n"
	    "async def fetch(i, d):\n    await asyncio.sleep(d)\n    return i * 10\n"
	    "async def main():\n"
	    "    t0 = time.monotonic()\n"
	    "    r = await asyncio.gather(*(fetch(i, 0.1 * (3 - i)) for i in range(3)))\n"
	    "    took = time.monotonic() - t0\n"
	    "    q = asyncio.Queue()\n"
	    "    async def prod():\n        for i in range(3):\n            await q.put(i)\n"
	    "        await q.put(None)\n"
	    "    async def cons():\n        out = []\n"
	    "        while (x := await q.get()) is not None:\n            out.append(x)\n"
	    "        return out\n"
	    "    _, c = await asyncio.gather(prod(), cons())\n"
	    "    try:\n        await asyncio.wait_for(asyncio.sleep(5), 0.05)\n"
	    "    except asyncio.TimeoutError:\n        c.append('timeout')\n"
	    "    async with asyncio.TaskGroup() as tg:\n        t = tg.create_task(fetch(7, 0))\n"
	    "    x = await asyncio.to_thread(sum, [1, 2, 3])\n"
	    "    return [r, 0.3 <= took < 0.6, c, t.result(), x]\n"
	    "out = asyncio.run(main())\n"
	    "loop = asyncio.SelectorEventLoop()\n"
	    "out.append(loop.run_until_complete(fetch(2, 0)))\nloop.close()\n"
	    "asyncio.set_event_loop_policy(None)\n"
	    "out.append(asyncio.run(fetch(3, 0)))\n"
	    "out + [asyncio.Task.__module__, asyncio.Future.__module__]",
	    "[[0,10,20],true,[0,1,2,\"timeout\"],70,6,20,30,\"asyncio.tasks\","
	    "\"asyncio.futures\"]");
	r = e2e_expect_error("import asyncio\n"
	                     "async def stuck():\n"
	                     "    await asyncio.get_running_loop().create_future()\n"
	                     "asyncio.run(stuck())",
	                     "RuntimeError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "the event loop would wait forever"), "%s",
	          mcpc_json(r));
	r = e2e_expect_error(
	    "import asyncio\nasyncio.run(asyncio.open_connection('127.0.0.1', 80))",
	    "PermissionError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "the sandbox has no network"), "%s",
	          mcpc_json(r));
	/* Processes and Unix sockets too, saying why (the base loop said nothing). */
	e2e_expect_result("import asyncio\nout = []\n"
	                  "async def main():\n"
	                  "    for f in (lambda: asyncio.create_subprocess_exec('true'),\n"
	                  "              lambda: asyncio.create_subprocess_shell('true'),\n"
	                  "              lambda: asyncio.open_unix_connection('/tmp/x')):\n"
	                  "        try:\n"
	                  "            await f()\n"
	                  "        except PermissionError as e:\n"
	                  "            out.append(str(e)[:24])\n"
	                  "asyncio.run(main())\nout",
	                  "[\"the code runs in one pro\",\"the code runs in one pro\","
	                  "\"the sandbox has no netwo\"]");
	/* The system's own loops and child watchers (a real selector loop set any signal's
	 * handler, a watcher started a thread) are out of reach; a task's stack is empty. */
	e2e_expect_result(
	    "import asyncio\nout = []\n"
	    "for f in (lambda: asyncio.unix_events, lambda: asyncio.ThreadedChildWatcher,\n"
	    "          lambda: asyncio.selector_events):\n"
	    "    try:\n        f()\n        out.append('reached')\n"
	    "    except AttributeError:\n        out.append('AttributeError')\n"
	    "try:\n    import asyncio.unix_events\nexcept ImportError:\n"
	    "    out.append('ImportError')\n"
	    "async def bad():\n    raise ValueError('x')\n"
	    "async def main():\n    t = asyncio.create_task(bad())\n"
	    "    await asyncio.sleep(0)\n    return t.get_stack()\n"
	    "out + [asyncio.run(main())]",
	    "[\"AttributeError\",\"AttributeError\",\"AttributeError\",\"ImportError\",[]]");
	/* A top level that awaits, as a notebook's cell: run on one loop for the call (a task
	 * made in the body is awaited by the last expression), its error's traceback from the
	 * code's own frames. */
	e2e_expect_result("import asyncio\nasync def f(x):\n    await asyncio.sleep(0)\n"
	                  "    return x * 2\nt = asyncio.create_task(f(4))\nr = await f(5)\n"
	                  "[r, await t]",
	                  "[10,8]");
	r = e2e_expect_error("import asyncio\nasync def f():\n    1/0\nawait f()",
	                     "ZeroDivisionError");
	cr_assert(!strncmp(mcpc_err_str(r, "traceback"),
	                   "Traceback (most recent call last):\n  File \"<code>\", line 4, in "
	                   "<module>\n",
	                   72),
	          "%s", mcpc_json(r));
	e2e_stop();
}

/* A recursion's traceback repeated its one entry a thousand times, past the output bound
 * (the error's own line lost): shown three times, then counted, as CPython shows it. */
Test(run_python, a_recursions_traceback_counts_its_repeats)
{
	json_object *r;
	const char *tb, *p;
	int shown = 0;

	e2e_start(NULL);
	r = e2e_expect_error("def f(n):\n    return f(n + 1)\nf(0)", "RecursionError");
	tb = mcpc_err_str(r, "traceback");
	for (p = strstr(tb, "line 2, in f"); p; p = strstr(p + 1, "line 2, in f"))
		shown++;
	cr_assert_eq(shown, 3, "%s", tb);
	cr_assert(strstr(tb, "  [Previous line repeated ") && strstr(tb, " more times]\n"), "%s",
	          tb);
	cr_assert(strstr(tb, "RecursionError: maximum recursion depth exceeded"), "%s", tb);
	cr_assert_lt(strlen(tb), 1024, "%s", tb);
	/* Entries that differ are all shown. */
	r = e2e_expect_error("def a(n):\n    return b(n)\ndef b(n):\n    return 1 / n\na(0)",
	                     "ZeroDivisionError");
	tb = mcpc_err_str(r, "traceback");
	cr_assert(strstr(tb, "line 5, in <module>") && strstr(tb, "line 2, in a") &&
	              strstr(tb, "line 4, in b") && !strstr(tb, "repeated"),
	          "%s", tb);
	e2e_stop();
}

Test(run_python, dunder_import_is_not_a_builtin)
{
	e2e_start(NULL);
	/* The spec lists __import__ with the refused builtins. */
	e2e_expect_error("__import__", "NameError");
	e2e_stop();
}

Test(run_python, dunder_import_keeps_the_allowlist)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_error("import builtins", "ModuleNotFoundError");
	r = e2e_call("try:\n    f = __import__\nexcept NameError:\n    f = None\n"
	             "f('os') if f else 'absent'",
	             NULL);
	/* Refused before the code runs (NameError), or a guarded function that refuses os. */
	cr_assert(!strcmp(mcpc_status(r), "ok")
	              ? !strcmp(mcpc_sc_str(r, "result_repr"), "'absent'")
	              : !strcmp(mcpc_err_str(r, "type"), "ModuleNotFoundError") ||
	                    !strcmp(mcpc_err_str(r, "type"), "NameError"),
	          "%s", mcpc_json(r));
	e2e_stop();
}

Test(run_python, each_new_session_starts_fresh)
{
	static const char new_session[] = "{\"session\": \"new\"}";
	json_object *a, *b, *c, *r;

	e2e_start(NULL);
	e2e_expect_status("secret_value = 41", new_session, "ok");
	r = e2e_expect_status("secret_value", new_session, "error");
	cr_assert_str_eq(mcpc_err_str(r, "type"), "NameError", "state leaked: %s", mcpc_json(r));
	/* Nor is it in the default session. */
	e2e_expect_error("secret_value", "NameError");
	/* Each new session's worker reseeds random after the fork: no two share a stream. */
	a = e2e_expect_status("import random\nrandom.random()", new_session, "ok");
	b = e2e_expect_status("import random\nrandom.random()", new_session, "ok");
	c = e2e_expect_status("import random\nrandom.random()", new_session, "ok");
	cr_assert(strcmp(mcpc_sc_str(a, "result_repr"), mcpc_sc_str(b, "result_repr")) &&
	              strcmp(mcpc_sc_str(b, "result_repr"), mcpc_sc_str(c, "result_repr")) &&
	              strcmp(mcpc_sc_str(a, "result_repr"), mcpc_sc_str(c, "result_repr")),
	          "new sessions share a random stream: %s %s %s", mcpc_sc_str(a, "result_repr"),
	          mcpc_sc_str(b, "result_repr"), mcpc_sc_str(c, "result_repr"));
	cr_assert(strcmp(mcpc_sc_str(a, "session"), mcpc_sc_str(b, "session")) &&
	              strcmp(mcpc_sc_str(b, "session"), mcpc_sc_str(c, "session")),
	          "new sessions share a handle: %s %s", mcpc_json(a), mcpc_json(b));
	e2e_stop();
}

/* An exception may have no traceback (with_traceback(None)), also as another's cause or
 * context: it is formatted as CPython does, without one. */
Test(run_python, an_exception_without_a_traceback_is_formatted)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("raise ValueError('a') from KeyError('b').with_traceback(None)",
	                     "ValueError");
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "KeyError: 'b'\n\nThe above exception"),
	          "%s", mcpc_json(r));
	r = e2e_expect_error("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
	                     "    e.with_traceback(None)\n    raise ValueError('x')",
	                     "ValueError");
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "line 5"), "%s", mcpc_json(r));
	r = e2e_expect_error("raise ValueError('c').with_traceback(None)", "ValueError");
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "ValueError: c"), "%s", mcpc_json(r));
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* The zygote's fork hooks are trimmed (threading's clean-up goes when it has one thread): a
 * fresh worker's threading still knows itself as the main and only thread, and starts, names
 * and joins threads. */
Test(run_python, a_fresh_worker_is_the_only_thread_its_threading_knows)
{
	static const char new_session[] = "{\"session\": \"new\"}";
	json_object *r;

	e2e_start(ARGS("--allow-import", "threading"));
	r = e2e_expect_status(
	    "import threading\nm = threading.main_thread()\n"
	    "[threading.current_thread() is m, threading.active_count(), "
	    "threading.get_ident() == m.ident, m.is_alive(), len(threading.enumerate())]",
	    new_session, "ok");
	e2e_assert_result(r, "threading in a fresh worker", "[true,1,true,true,1]");
	r = e2e_expect_status("import threading\nseen = []\n"
	                      "t = threading.Thread(target=lambda: seen.append("
	                      "threading.current_thread() is not threading.main_thread()))\n"
	                      "t.start()\nt.join()\n"
	                      "[seen, t.is_alive(), threading.active_count()]",
	                      new_session, "ok");
	e2e_assert_result(r, "a thread in a fresh worker", "[[true],false,1]");
	e2e_stop();
}

/* With no worker kept ready, a call waits for a fresh one, which parks without warming up
 * (the warm-up is also where a worker arms its deadline handler): such calls keep every
 * guarantee of a warmed worker. */
Test(run_python, a_call_that_waits_for_a_cold_worker_keeps_every_guarantee)
{
	static const char new_session[] = "{\"session\": \"new\"}";
	json_object *a, *b, *r;

	e2e_start(ARGS("--prefork", "0"));
	e2e_expect_result("x = 6\nx * 7", "42");
	r = e2e_expect_status("while True: pass", "{\"session\": \"new\", \"timeout_seconds\": 1}",
	                      "timeout");
	cr_assert_str_eq(mcpc_err_str(r, "type"), "TimeoutError", "%s", mcpc_json(r));
	a = e2e_expect_status("import random\nrandom.random()", new_session, "ok");
	b = e2e_expect_status("import random\nrandom.random()", new_session, "ok");
	cr_assert(strcmp(mcpc_sc_str(a, "result_repr"), mcpc_sc_str(b, "result_repr")),
	          "two cold workers drew the same numbers: %s", mcpc_sc_str(a, "result_repr"));
	e2e_expect_error("open('/etc/passwd')", "PermissionError");
	r = e2e_expect_error("__import__('sys').stderr", "NameError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "__import__ is not available in the sandbox: use the import statement "
	                 "(import sys), or importlib.import_module('sys')",
	                 "%s", mcpc_json(r));
	e2e_expect_result("x", "6");
	e2e_stop();
}

/* Programs that import nothing are compiled from the parser's C tree; those that do, through
 * the ast module's objects (their imports are rewritten). Both give the same result, output,
 * error and place in the code. */
Test(run_python, programs_without_imports_give_what_programs_with_them_give)
{
	static const char *const programs[] = {
	    "1 + 1",
	    "x = 5",
	    "y: int = 7",
	    "z: int",
	    "x = 1\nx += 2",
	    "a, b = 1, 2",
	    "a = b = [1, 2]",
	    "d = {}\nd['k'] = 3",
	    "print('hi')\n3 * 4",
	    "def f():\n    return 2\nf()",
	    "",
	    "# only a comment",
	    "[i * i for i in range(4)]",
	    "if True:\n    5",
	    "1; 2; 3",
	    "f'{1 + 1}'",
	    "class C:\n    v = 4\nC.v",
	    "raise ValueError('boom')",
	    "x.y = 3",
	    "def g():\n    return 1 / 0\ng()",
	    "'\\u00e9t\\u00e9'",
	};
	char with[512];

	e2e_start(NULL);
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		json_object *a, *b, *sa, *sb;
		const char *ta, *tb;

		snprintf(with, sizeof(with), "import math\n%s", programs[i]);
		a = e2e_call(programs[i], "{\"session\": \"new\"}");
		b = e2e_call(with, "{\"session\": \"new\"}");
		sa = mcpc_structured(a);
		sb = mcpc_structured(b);
		cr_assert(sa && sb, "no structured content for %s", programs[i]);
		static const char *const keys[] = {"status", "result", "result_repr", "logs"};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			ta = json_object_to_json_string(e2e_member(sa, keys[k]));
			tb = json_object_to_json_string(e2e_member(sb, keys[k]));
			cr_assert_str_eq(ta, tb, "%s of %s: %s without an import, %s with one",
			                 keys[k], programs[i], ta, tb);
		}
		ta = mcpc_err_str(a, "type");
		tb = mcpc_err_str(b, "type");
		ta = ta && *ta ? ta : NULL;
		tb = tb && *tb ? tb : NULL;
		cr_assert((!ta && !tb) || (ta && tb && strcmp(ta, tb) == 0),
		          "error of %s: %s without an import, %s with one", programs[i],
		          ta ? ta : "none", tb ? tb : "none");
		if (ta) {
			/* The same line of the program, one further down with the import. */
			char line[64];
			int n = 1;
			for (const char *c = programs[i]; *c; c++)
				n += *c == '\n';
			snprintf(line, sizeof(line), "line %d", n);
			cr_assert(strstr(mcpc_err_str(a, "traceback"), line),
			          "the traceback of %s names no %s: %s", programs[i], line,
			          mcpc_err_str(a, "traceback"));
			snprintf(line, sizeof(line), "line %d", n + 1);
			cr_assert(strstr(mcpc_err_str(b, "traceback"), line),
			          "the traceback of %s names no %s: %s", with, line,
			          mcpc_err_str(b, "traceback"));
		}
	}
	/* Syntax errors name their line either way. */
	e2e_expect_error("x = 1\n1 +", "SyntaxError");
	cr_assert(strstr(mcpc_err_str(e2e_expect_error("x = 1\n1 +", "SyntaxError"), "message"),
	                 "line 2"));
	e2e_stop();
}

Test(run_python, useful_modules_work)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import time, datetime\nt = time.time()\ntime.sleep(0.05)\n"
	    "d = datetime.datetime.strptime('2024-02-29', '%Y-%m-%d')\n"
	    "[time.time() - t >= 0.05, d.strftime('%A'), time.localtime().tm_year > 2000, "
	    "time.process_time() >= 0]",
	    "[true,\"Thursday\",true,true]");
	e2e_expect_result(
	    "import hashlib, zlib, base64, struct, decimal, fractions, statistics\n"
	    "[hashlib.sha256(b'x').hexdigest()[:8], zlib.crc32(b'x'), "
	    "base64.b64encode(b'hi').decode(), struct.unpack('<I', b'\\x01\\0\\0\\0')[0], "
	    "str(decimal.Decimal('1.1') + decimal.Decimal('2.2')), "
	    "str(fractions.Fraction(1, 3) * 3), statistics.median([3, 1, 2])]",
	    "[\"2d711642\",2363233923,\"aGk=\",1,\"3.3\",\"1\",2]");
	e2e_expect_result("import random\nrandom.seed(7)\na = random.random()\nrandom.seed(7)\n"
	                  "a == random.random()",
	                  "true");
	e2e_stop();
}

/* ---- What users of the old product rely on ------------------------------------------------- */

Test(old_product, result_and_logs_keys)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("print('hello')\nx = 6\nx * 7");
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), 42);
	cr_assert_str_eq(mcpc_sc_str(r, "logs"), "hello\n");
	e2e_stop();
}

Test(old_product, import_refusal_keeps_its_wording)
{
	json_object *r, *list;
	const char *msg, *open;
	char *py;

	e2e_start(NULL);
	r = e2e_expect_error("import os", "ModuleNotFoundError");
	msg = mcpc_err_str(r, "message");
	cr_assert(!strncmp(msg, "Import of os is not allowed. Authorized imports are: [", 54),
	          "message: %s", msg);
	cr_assert(strstr(mcpc_text(r), "Import of os is not allowed"), "%s", mcpc_text(r));
	/* The list is a Python list of names, sorted, with the promised modules. */
	/* The list, then what to use instead (pyproxy.c refusal_hints). */
	open = strchr(msg, '[');
	py = strndup(open, (size_t)(strchr(open, ']') + 1 - open));
	for (char *p = py; *p; p++)
		if (*p == '\'')
			*p = '"';
	list = e2e_hold(json_tokener_parse(py));
	free(py);
	cr_assert(json_object_is_type(list, json_type_array), "not a list: %s", open);
	for (size_t i = 1; i < json_object_array_length(list); i++)
		cr_assert_lt(strcmp(json_object_get_string(json_object_array_get_idx(list, i - 1)),
		                    json_object_get_string(json_object_array_get_idx(list, i))),
		             0, "not sorted: %s", open);
	cr_assert(strstr(open, "'json'") && strstr(open, "'math'") && strstr(open, "'statistics'"),
	          "%s", open);
	cr_assert_null(strstr(open, "'os'"), "%s", open);
	e2e_expect_error("from os import path", "ModuleNotFoundError");
	e2e_expect_error("import subprocess", "ModuleNotFoundError");
	e2e_expect_error("import math, socket", "ModuleNotFoundError");
	e2e_stop();
}

/* The refusal of a module code often reaches for (tar archives, processes, the network,
 * pickle, os without a workspace, logging's file handlers, resource limits) keeps its wording and its list, then says what to do
 * instead. */
Test(old_product, import_refusal_says_what_to_use_instead)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "def refusal(name, f):\n"
	    "    try:\n"
	    "        f()\n"
	    "    except ImportError as e:\n"
	    "        m = str(e)\n"
	    "        return [m.startswith('Import of %s is not allowed. Authorized imports are: [' "
	    "% "
	    "name),\n"
	    "                m[m.index(']') + 1:][:40]]\n"
	    "def a():\n    import threading\n"
	    "def b():\n    import subprocess\n"
	    "def c():\n    import socket\n"
	    "def d():\n    import urllib.request\n"
	    "def e():\n    import pickle\n"
	    "def f():\n    import os\n"
	    "def g():\n    import locale\n"
	    "def h():\n    import mmap\n"
	    "def i():\n    import statsmodels.api as sm\n"
	    "def j():\n    import inspect\n"
	    "def k():\n    import joblib\n"
	    "def l():\n    import logging.config\n"
	    "def m():\n    import getpass\n"
	    "def n():\n    import tracemalloc\n"
	    "def o():\n    import resource\n"
	    "def p():\n    import numpy as np\n"
	    "def q():\n    from xml.sax.saxutils import escape\n"
	    "def r():\n    import weakref\n"
	    "def s():\n    import unittest\n"
	    "def u():\n    import contextvars\n"
	    "[refusal('threading', a), refusal('subprocess', b), refusal('socket', c),\n"
	    " refusal('urllib.request', d), refusal('pickle', e), refusal('os', f),\n"
	    " refusal('locale', g), refusal('mmap', h), refusal('statsmodels.api', i),\n"
	    " refusal('inspect', j), refusal('joblib', k), refusal('logging.config', l),\n"
	    " refusal('getpass', m), refusal('tracemalloc', n), refusal('resource', o),\n"
	    " refusal('numpy', p), refusal('xml.sax.saxutils', q), refusal('weakref', r),\n"
	    " refusal('unittest', s), refusal('contextvars', u)]",
	    "[[true,\". The code runs in one thread, start to \"],"
	    "[true,\". The code runs in one process: no progr\"],"
	    "[true,\". The sandbox has no network: data must \"],"
	    "[true,\". The sandbox has no network: data must \"],"
	    "[true,\". Pickled data is not read in the sandbo\"],"
	    "[true,\". Files come only with a workspace (the \"],"
	    "[true,\". Format numbers with f'{x:,.2f}' (and s\"],"
	    "[true,\". Read a workspace file with open() and \"],"
	    "[true,\". statsmodels is not one of the sandbox'\"],"
	    "[true,\". A function's or class's signature and \"],"
	    "[true,\". joblib is not available: the code runs\"],"
	    "[true,\". logging itself works: logging.basicCon\"],"
	    "[true,\". No one is at a terminal to type a pass\"],"
	    "[true,\". The server sets the call's limits (its\"],"
	    "[true,\". The server sets the call's limits (its\"],"
	    "[true,\". That is one of the data libraries, whi\"],"
	    "[false,\". Read and write XML with xml.etree.Elem\"],"
	    "[true,\". Weak references are not available in t\"],"
	    "[true,\". Test runners are not available in the \"],"
	    "[true,\". Context variables are not available in\"]]");
	/* a misspelt module: the nearest allowed one, as CPython's "Did you mean" */
	e2e_expect_result("def tail(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "    except ImportError as e:\n"
	                  "        return str(e).rsplit(']', 1)[1]\n"
	                  "def a():\n    import collectons\n"
	                  "def b():\n    from jsonn import loads\n"
	                  "def c():\n    import urlib.parse\n"
	                  "def d():\n    import zzqqxx\n"
	                  "[tail(a), tail(b), tail(c), tail(d)]",
	                  "[\". Did you mean: 'collections'?\",\". Did you mean: 'json'?\","
	                  "\". Did you mean: 'urllib.parse'?\",\"\"]");
	e2e_stop();
}

/* Refused names code often reaches for say what reads the same thing. */
Test(old_product, dunder_refusals_say_what_to_use_instead)
{
	static const struct {
		const char *code, *says;
	} cases[] = {
	    {"import json\njson.__dict__",
	     "Forbidden access to dunder attribute: __dict__ of a 'module' object; an object shows "
	     "its __dict__ (and vars) only when the code defined its class"},
	    {"int.__mro__", "Forbidden access to dunder attribute: __mro__; cls.mro() lists the "
	                    "classes it derives from, and isinstance(), issubclass() and "
	                    "type(x).__name__"},
	    {"getattr(int, '__bases__')",
	     "Forbidden access to dunder attribute: __bases__; cls.mro() lists the classes"},
	    {"bool.__base__", "Forbidden access to dunder attribute: __base__; cls.mro() lists"},
	    {"ValueError().__suppress_context__", "__suppress_context__; an error's __cause__ and "
	                                          "__context__ name the errors before it"},
	    {"import functools\n@functools.lru_cache\ndef f(x):\n    return x\nf.__wrapped__",
	     "Forbidden access to dunder attribute: __wrapped__; call the decorated function"},
	    {"def f(a, b=2):\n    return a\nf.__defaults__",
	     "__defaults__; help(f) shows a function's signature with its defaults"},
	    {"def f():\n    pass\nf.__code__", "__code__; help(f) shows a function's signature"},
	    {"[].append.__self__", "__self__; keep the object whose method it is"},
	};

	e2e_start(NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *r = e2e_expect_error(cases[i].code, "AttributeError");
		const char *msg = json_object_get_string(
		    e2e_member(e2e_member(mcpc_structured(r), "error"), "message"));

		cr_assert(msg && strstr(msg, cases[i].says), "%s\n%s", cases[i].code, mcpc_json(r));
	}
	e2e_stop();
}

Test(old_product, import_refusal_is_catchable)
{
	e2e_start(NULL);
	e2e_expect_result("try:\n    import socket\nexcept ImportError as e:\n    r = str(e)\n"
	                  "r.startswith('Import of socket is not allowed')",
	                  "true");
	e2e_expect_result("try:\n    import ctypes\nexcept Exception:\n    r = 'caught'\nr",
	                  "\"caught\"");
	e2e_stop();
}

Test(old_product, promised_modules_are_importable)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import json, string, functools, operator\n"
	    "[json.loads(json.dumps({'a': [1]})), string.ascii_lowercase[:3], "
	    "functools.reduce(operator.add, [1, 2, 3]), operator.itemgetter(1)('xy')]",
	    "[{\"a\":[1]},\"abc\",6,\"y\"]");
	e2e_stop();
}

static const char *const default_modules =
    "collections datetime itertools math queue random re stat statistics time unicodedata "
    "json string functools operator fractions decimal heapq bisect cmath numbers copy "
    "dataclasses enum typing textwrap difflib array struct base64 binascii hashlib zlib "
    "calendar pprint abc contextlib sys";

Test(old_product, default_allowlist_is_importable)
{
	char code[2048] = "", want[64];
	char *mods = strdup(default_modules), *save = NULL;
	int n = 0;

	for (char *m = strtok_r(mods, " ", &save); m; m = strtok_r(NULL, " ", &save), n++) {
		size_t len = strlen(code);

		snprintf(code + len, sizeof(code) - len, "import %s\n", m);
	}
	free(mods);
	strcat(code, "ok = 1\nfrom collections import Counter, OrderedDict, deque\n"
	             "from itertools import permutations\nfrom typing import List\n"
	             "len(list(permutations(range(4))))");
	snprintf(want, sizeof(want), "24");
	e2e_start(NULL);
	e2e_expect_result(code, want);
	cr_assert_eq(n, 38);
	e2e_stop();
}

Test(old_product, seed_imports_are_the_first_eleven)
{
	e2e_start(ARGS("--imports", "seed"));
	e2e_expect_result("import collections, datetime, itertools, math, queue, random, re, stat, "
	                  "statistics, time, unicodedata\nmath.factorial(5)",
	                  "120");
	e2e_expect_error("import json", "ModuleNotFoundError");
	e2e_expect_error("import functools", "ModuleNotFoundError");
	e2e_stop();
}

Test(old_product, allow_import_adds_a_module)
{
	e2e_start(NULL);
	e2e_expect_error("import plistlib", "ModuleNotFoundError");
	e2e_stop();
	e2e_start(ARGS("--allow-import", "plistlib"));
	e2e_expect_result("import plistlib\nplistlib.loads(plistlib.dumps({'a': 1}))", "{\"a\":1}");
	e2e_stop();
}

Test(old_product, sys_is_a_curated_view)
{
	e2e_start(NULL);
	e2e_expect_result("import sys\nsys.stdout.write('w')\nsys.stdout.flush()\n"
	                  "[isinstance(sys.version, str), sys.version_info[0]]",
	                  "[true,3]");
	e2e_stop();
}

/* ---- Limits -------------------------------------------------------------------------------- */

Test(limits, infinite_loop_times_out)
{
	int64_t t0;
	json_object *r;

	e2e_start(ARGS("--timeout", "2"));
	t0 = mcpc_now_ms();
	r = e2e_call_on(&e2e_srv, "print('started')\nwhile True:\n    pass", NULL, 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert(e2e_is_error(r));
	cr_assert_geq(mcpc_now_ms() - t0, 1500, "a 2 s limit ended the call early: %s",
	              mcpc_json(r));
	cr_assert_geq(json_object_get_int64(e2e_member(mcpc_structured(r), "duration_ms")), 1500,
	              "%s", mcpc_json(r));
	e2e_expect_result("'alive'", "\"alive\"");
	/* A sleeping worker uses no CPU: the wall clock still ends it. */
	r = e2e_call_on(&e2e_srv, "import time\ntime.sleep(100)", NULL, 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	e2e_stop();
}

/* Code that catches the TimeoutError and goes on (an except Exception around each item, a
 * library's around each fit of a search) was killed 0.5 s later, and everything it printed was
 * lost. The deadline asks again within the grace with one that is not an Exception: the call
 * ends with what it printed, a timeout that says why. Code that lets the first one through
 * gets it as before, and a finally clause still runs. */
Test(limits, code_that_catches_the_timeout_keeps_its_output)
{
	json_object *r;
	const char *out, *msg;

	e2e_start(NULL);
	r = e2e_call_on(
	    &e2e_srv,
	    "import time\nfor i in range(100):\n    try:\n"
	    "        print('item', i, flush=True)\n        time.sleep(0.3)\n"
	    "    except Exception as e:\n        print('skipping', i, type(e).__name__)\n",
	    "{\"timeout_seconds\": 1}", 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	out = mcpc_sc_str(r, "stdout");
	msg = mcpc_err_str(r, "message");
	cr_assert(out && strstr(out, "item 0\n") && strstr(out, "skipping") &&
	              strstr(out, "TimeoutError"),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "TimeoutError", "%s", mcpc_json(r));
	cr_assert(msg && strstr(msg, "went on after"), "%s", mcpc_json(r));
	r = e2e_call_on(&e2e_srv,
	                "try:\n    while True:\n        pass\nexcept TimeoutError as e:\n"
	                "    print('caught:', e)\n    raise\nfinally:\n    print('cleaned up')",
	                "{\"timeout_seconds\": 1}", 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	out = mcpc_sc_str(r, "stdout");
	cr_assert(out && strstr(out, "caught: wall-clock time limit reached") &&
	              strstr(out, "cleaned up"),
	          "%s", mcpc_json(r));
	e2e_expect_result("'alive'", "\"alive\"");
	e2e_stop();
}

/* Code that never lets the deadline's asks end it (it catches BaseException, or sits in a long
 * native computation) is killed at the hard deadline: what it printed until then is read from
 * its process and comes back with the timeout (it was lost with the process). */
Test(limits, a_call_killed_at_the_hard_deadline_keeps_what_it_printed)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_call_on(&e2e_srv,
	                "import sys\nprint('before')\nprint('to stderr', file=sys.stderr)\n"
	                "for i in range(3):\n    print(f'step {i}\\r', end='')\nprint()\n"
	                "while True:\n    try:\n        while True:\n            pass\n"
	                "    except BaseException:\n        pass\n",
	                "{\"timeout_seconds\": 1}", 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "TimeoutError", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "before\nstep 2\n", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "to stderr\n", "%s", mcpc_json(r));
	/* A session's call killed so keeps its output too, and the session its state. */
	r = e2e_expect_status("x = 1\nprint('kept')", "{\"session\": \"new\"}", "ok");
	r = e2e_call_on(
	    &e2e_srv,
	    e2e_fmt("print('second', x)\nx = 2\nwhile True:\n    try:\n"
	            "        while True:\n            pass\n"
	            "    except BaseException:\n        pass\n"),
	    e2e_fmt("{\"session\": \"%s\", \"timeout_seconds\": 1}", mcpc_sc_str(r, "session")),
	    10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "second 1\n", "%s", mcpc_json(r));
	e2e_assert_result(
	    e2e_call("x", e2e_fmt("{\"session\": \"%s\"}", mcpc_sc_str(r, "session"))), "x", "1");
	e2e_stop();
}

Test(limits, timeout_seconds_lowers_the_limit)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_call_on(&e2e_srv, "while True:\n    pass", "{\"timeout_seconds\": 1}", 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	r = e2e_call_on(&e2e_srv, "import time\ntime.sleep(0.2)\n'fine'",
	                "{\"timeout_seconds\": 5}", 10000);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	e2e_stop();
}

Test(limits, cpu_limit_ends_a_busy_worker)
{
	json_object *r;

	e2e_start(ARGS("--cpu", "1", "--timeout", "30"));
	r = e2e_call_on(&e2e_srv, "while True:\n    pass", NULL, 15000);
	cr_assert(e2e_is_error(r), "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	/* The code stopped itself at the CPU limit's signal: its message names the CPU limit
	 * and the option that sets it, not the wall-clock one it did not reach. */
	cr_assert(strstr(mcpc_err_str(r, "message"), "CPU time limit reached") &&
	              strstr(mcpc_err_str(r, "message"), "at most 1 s of CPU time") &&
	              strstr(mcpc_err_str(r, "message"), "the server's --cpu") &&
	              !strstr(mcpc_err_str(r, "message"), "--timeout"),
	          "%s", mcpc_json(r));
	e2e_expect_result("3*3", "9");
	e2e_stop();
}

Test(limits, memory_bombs_hit_the_memory_limit)
{
	static const char *const bombs[] = {
	    "x = 'a' * 10**10",
	    "x = [0] * 10**10",
	    "chunks = []\nwhile True:\n    chunks.append('x' * 10**6)",
	    "b = bytearray(2**40)",
	};

	e2e_start(NULL);
	for (size_t i = 0; i < sizeof(bombs) / sizeof(bombs[0]); i++)
		e2e_expect_status(bombs[i], NULL, "memory_limit");
	e2e_expect_result("len('a' * 10**6)", "1000000");
	e2e_stop();
}

Test(limits, memory_flag_takes_a_suffix)
{
	e2e_start(ARGS("--memory", "200M"));
	e2e_expect_status("b = bytearray(300 * 2**20)", NULL, "memory_limit");
	e2e_expect_result("len(bytearray(50 * 2**20))", "52428800");
	e2e_stop();
}

Test(limits, output_flood_is_bounded)
{
	json_object *r;
	const char *out;

	e2e_start(ARGS("--timeout", "5"));
	r = e2e_call_on(&e2e_srv, "while True:\n    print('x' * 1000)", NULL, 20000);
	cr_assert(!strcmp(mcpc_status(r), "output_limit") || !strcmp(mcpc_status(r), "timeout"),
	          "status %s", mcpc_status(r));
	cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	out = mcpc_sc_str(r, "stdout");
	cr_assert_not_null(out);
	cr_assert_leq(strlen(out), 64 * 1024 + 1024, "stdout is %zu bytes", strlen(out));
	cr_assert_gt(strlen(out), 1000, "the head of the output was kept");
	cr_assert_lt(strlen(mcpc_json(r)), 1000000, "message too large for clients");
	cr_assert_not_null(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000)));
	e2e_expect_result("'after flood'", "\"after flood\"");
	/* The same on stderr. */
	r = e2e_call_on(&e2e_srv, "import sys\nwhile True:\n    sys.stderr.write('e' * 1000)", NULL,
	                20000);
	cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	cr_assert_leq(strlen(mcpc_sc_str(r, "stderr")), 64 * 1024 + 1024);
	e2e_stop();
}

/* A result or an exception whose text is hundreds of MiB (the repr of 50 MiB of bytes that are
 * not ASCII: 200 MiB) was lost: encoding it whole took more memory than the call had, and the
 * answer said "ok" with no result and nothing truncated (the exception: an empty message).
 * Such a text comes back cut around the marker, its head and tail kept, and truncated set. */
Test(limits, a_text_too_large_to_encode_whole_is_cut_not_lost)
{
	static const char *const codes[] = {"b'\\xff' * (50 << 20)", "bytearray(50 << 20)",
	                                    "raise ValueError(b'HEAD' + b'\\xff' * (50 << 20) + "
	                                    "b'TAIL')"};
	json_object *r;
	const char *text;

	e2e_start(ARGS("--timeout", "30"));
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		r = e2e_call_on(&e2e_srv, codes[i], NULL, 60000);
		cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")),
		          "%s: not truncated: %.300s", codes[i], mcpc_json(r));
		text = i < 2 ? mcpc_sc_str(r, "result_repr") : mcpc_err_str(r, "message");
		cr_assert(text && strlen(text) > 1000 && strlen(text) <= 64 * 1024 + 256,
		          "%s: %.300s", codes[i], mcpc_json(r));
		cr_assert(strstr(text, "bytes cut]"), "%s: no cut marker: %.300s", codes[i], text);
		if (i == 0)
			cr_assert(!strncmp(text, "b'\\xff\\xff", 10) &&
			              !strcmp(text + strlen(text) - 5, "\\xff'"),
			          "%s: head or tail lost: %.60s", codes[i], text);
		if (i == 2)
			cr_assert(!strncmp(text, "b'HEAD", 6) &&
			              strstr(text + strlen(text) - 10, "TAIL'"),
			          "%s: head or tail lost: %.60s", codes[i], text);
	}
	e2e_expect_result("'after'", "\"after\"");
	e2e_stop();
}

Test(limits, max_output_keeps_head_and_tail)
{
	json_object *r;
	const char *out;
	size_t n;

	e2e_start(ARGS("--max-output", "1000"));
	r = e2e_call("print('HEAD' + 'x' * 5000 + 'TAIL')\n'done'", NULL);
	cr_assert(!strcmp(mcpc_status(r), "ok") || !strcmp(mcpc_status(r), "output_limit"),
	          "status %s", mcpc_status(r));
	cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	out = mcpc_sc_str(r, "stdout");
	n = strlen(out);
	cr_assert_leq(n, 1000 + 256, "stdout is %zu bytes: %s", n, out);
	cr_assert(!strncmp(out, "HEAD", 4), "head lost: %.60s", out);
	cr_assert(n > 5 && strstr(out + n - 6, "TAIL"), "tail lost: %s",
	          out + (n > 60 ? n - 60 : 0));
	e2e_stop();
}

/* Long texts keep their head and tail around one marker, cut on character boundaries. */
static void assert_cut_text(const char *what, const char *s, const char *head, const char *tail,
                            size_t max)
{
	size_t n = strlen(s), cut = 0;
	const char *m = strstr(s, "\n... [");

	cr_assert_leq(n, max, "%s is %zu bytes", what, n);
	cr_assert(!strncmp(s, head, strlen(head)), "%s: head lost: %.60s", what, s);
	cr_assert(n >= strlen(tail) && !strcmp(s + n - strlen(tail), tail), "%s: tail lost: %s",
	          what, s + (n > 60 ? n - 60 : 0));
	cr_assert_not_null(m, "%s has no marker", what);
	cr_assert_eq(sscanf(m, "\n... [%zu bytes cut] ...\n", &cut), 1, "%s: %.60s", what, m);
	cr_assert_gt(cut, 0);
}

Test(limits, long_texts_are_cut_with_one_marker)
{
	json_object *r;

	e2e_start(ARGS("--max-output", "1000"));
	/* result_repr (64 KiB by default), two-byte characters at every cut point */
	r = e2e_ok("'\\u00e9' * 100000");
	assert_cut_text("result_repr", mcpc_sc_str(r, "result_repr"), "'\xc3\xa9", "\xc3\xa9'",
	                64 * 1024);
	cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	/* the error message and the traceback */
	r = e2e_expect_error("raise ValueError('<' + '\\u20ac' * 100000 + '>')", "ValueError");
	assert_cut_text("message", mcpc_err_str(r, "message"), "<\xe2\x82\xac", "\xe2\x82\xac>",
	                64 * 1024);
	assert_cut_text("traceback", mcpc_err_str(r, "traceback"), "Traceback", "\xe2\x82\xac>\n",
	                64 * 1024);
	/* captured output, four-byte characters */
	r = e2e_call("print('[' + '\\U0001F600' * 1000 + ']')", NULL);
	assert_cut_text("stdout", mcpc_sc_str(r, "stdout"), "[\xf0\x9f\x98\x80",
	                "\xf0\x9f\x98\x80]\n", 1000 + 64);
	e2e_stop();
}

Test(limits, looping_repr_times_out_that_call_only)
{
	json_object *r;

	e2e_start(ARGS("--timeout", "2"));
	r = e2e_call_on(
	    &e2e_srv,
	    "class Loop:\n    def __repr__(self):\n        while True:\n            pass\n"
	    "Loop()",
	    NULL, 10000);
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	e2e_expect_result("[1, 2]", "[1,2]");
	e2e_stop();
}

Test(limits, deep_recursion_is_a_recursion_error)
{
	e2e_start(NULL);
	e2e_expect_error("def f(n):\n    return f(n + 1)\nf(0)", "RecursionError");
	e2e_expect_result(
	    "import sys\ndef depth(n):\n    return n if n == 0 else depth(n - 1) + 1\n"
	    "depth(500)",
	    "500");
	e2e_stop();
}

/* ---- BaseException and friends --------------------------------------------------------------- */

Test(exits, system_exit_is_an_error_and_the_server_goes_on)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("print('bye')\nraise SystemExit(3)", "SystemExit");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "bye\n");
	e2e_expect_error("raise KeyboardInterrupt", "KeyboardInterrupt");
	e2e_expect_error("raise GeneratorExit", "GeneratorExit");
	e2e_expect_error("class Weird(BaseException):\n    pass\nraise Weird('w')", "Weird");
	/* The interactive exit() and quit() end a script as sys.exit does: with a nonzero code
	 * or a message, an error that says it. */
	r = e2e_expect_error("print('done')\nexit(1)", "SystemExit");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "done\n");
	r = e2e_expect_error("quit(2)", "SystemExit");
	cr_assert_str_eq(mcpc_err_str(r, "message"), "2", "%s", mcpc_json(r));
	r = e2e_expect_error("import sys\nsys.exit('no input file')", "SystemExit");
	cr_assert_str_eq(mcpc_err_str(r, "message"), "no input file", "%s", mcpc_json(r));
	e2e_expect_result("'still here'", "\"still here\"");
	e2e_stop();
}

/* sys.exit(0), sys.exit(None), sys.exit() and raise SystemExit were errors with a traceback
 * ("SystemExit: 0"), though a script ends so when it succeeds (sys.exit(main()) of a main that
 * returns 0). They end the call as ok now, with no result, its output and its names kept; a
 * nonzero code stays an error (above). */
Test(exits, system_exit_with_code_0_or_none_is_ok)
{
	static const char *const ok_exits[] = {
	    "sys.exit(0)",     "sys.exit(None)",
	    "sys.exit()",      "raise SystemExit",
	    "exit()",          "quit(0)",
	    "sys.exit(False)", "try:\n    1 / 0\nexcept ZeroDivisionError:\n    sys.exit(0)"};
	json_object *r;

	e2e_start(NULL);
	for (size_t i = 0; i < sizeof(ok_exits) / sizeof(ok_exits[0]); i++) {
		r = e2e_call(e2e_fmt("import sys\nprint('done')\nn = %zu\n%s\nprint('not reached')",
		                     i, ok_exits[i]),
		             NULL);
		cr_assert_str_eq(mcpc_status(r), "ok", "%s: %s", ok_exits[i], mcpc_json(r));
		cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "done\n", "%s", ok_exits[i]);
		e2e_expect_result("n", e2e_fmt("%zu", i));
	}
	r = e2e_call("import sys\ndef main():\n    print('report written')\n    return 0\n"
	             "if __name__ == '__main__':\n    sys.exit(main())",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "report written\n");
	e2e_assert_result(r, "sys.exit(main())", "null");
	e2e_expect_error("import sys\nsys.exit(3)", "SystemExit");
	e2e_expect_result("'still here'", "\"still here\"");
	e2e_stop();
}

Test(exits, base_exception_in_repr_or_finally)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_call("class Bad:\n    def __repr__(self):\n        raise SystemExit(1)\nBad()",
	             NULL);
	cr_assert(e2e_is_error(r), "%s", mcpc_json(r));
	r = e2e_call("try:\n    1/0\nfinally:\n    raise KeyboardInterrupt", NULL);
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	e2e_expect_result("1", "1");
	e2e_stop();
}

/* ---- Cancellation -------------------------------------------------------------------------- */

/* CPU time (ticks) a process has used, or -1. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return -1;
	/* After "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime. */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

Test(cancel, cancelled_call_never_answers_and_its_worker_dies)
{
	struct mcpc_proc during[64], runner = {0};
	long long busiest = -1, before[64];
	int nrun;
	int64_t id;
	json_object *jid;

	e2e_start(NULL);
	e2e_ok("1");
	id = mcpc_call_async(&e2e_srv, "while True:\n    pass", NULL);
	jid = json_object_new_int64(id);
	/* The process running the call is the one spinning: the descendant that used the most
	 * CPU over 700 ms (not in all: the zygote's start may have cost more on a loaded
	 * machine). A session forks it ahead of the call, so it is not necessarily a new
	 * process. */
	usleep(300000);
	nrun = e2e_descendants(during, 64);
	for (int i = 0; i < nrun; i++)
		before[i] = cpu_ticks(during[i].pid);
	usleep(700000);
	for (int i = 0; i < nrun; i++) {
		long long t = cpu_ticks(during[i].pid) - before[i];
		if (before[i] >= 0 && t > busiest) {
			busiest = t;
			runner = during[i];
		}
	}
	cr_assert_gt(busiest, 0, "no process is running the call");
	e2e_cancel(id);
	e2e_expect_result("'next call'", "\"next call\"");
	cr_assert_not(mcpc_seen_id(&e2e_srv, jid, 2000), "the cancelled call was answered");
	json_object_put(jid);
	cr_assert_eq(mcpc_wait_procs_gone(&runner, 1, 3000), 0,
	             "the cancelled call's worker %d is still alive", (int)runner.pid);
	e2e_stop();
}

Test(cancel, cancelled_queued_call_never_answers)
{
	int64_t a, b;
	json_object *ja, *jb;

	e2e_start(ARGS("--max-workers", "1"));
	a = mcpc_call_async(&e2e_srv, "while True:\n    pass", NULL);
	b = mcpc_call_async(&e2e_srv, "'queued'", NULL);
	ja = json_object_new_int64(a);
	jb = json_object_new_int64(b);
	usleep(300000);
	e2e_cancel(b);
	e2e_cancel(a);
	e2e_expect_result("'fresh'", "\"fresh\"");
	cr_assert_not(mcpc_seen_id(&e2e_srv, ja, 1000), "cancelled running call answered");
	cr_assert_not(mcpc_seen_id(&e2e_srv, jb, 0), "cancelled queued call answered");
	json_object_put(ja);
	json_object_put(jb);
	e2e_stop();
}

Test(cancel, cancel_matches_the_id_type)
{
	json_object *r;
	char line[160];
	int64_t id;

	e2e_start(NULL);
	id = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(1)\n'done'", NULL);
	/* "5" is not 5: this notice names no running request. */
	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	         "{\"requestId\":\"%lld\"}}",
	         (long long)id);
	cr_assert_eq(mcpc_send(&e2e_srv, line), 0);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, E2E_CALL_MS));
	cr_assert_not_null(r, "a cancel with a string id stopped the call with an integer id");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "'done'", "%s", mcpc_json(r));
	e2e_stop();
}

Test(cancel, cancelling_a_finished_call_is_harmless)
{
	json_object *r;
	int64_t id;

	e2e_start(NULL);
	id = mcpc_call_async(&e2e_srv, "40 + 2", NULL);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, E2E_CALL_MS));
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), 42);
	e2e_cancel(id);
	e2e_cancel(id + 1000);
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* ---- Concurrency --------------------------------------------------------------------------- */

Test(concurrency, calls_run_side_by_side)
{
	int64_t slow, fast;
	json_object *first, *second;

	e2e_start(ARGS("--max-workers", "2"));
	/* Calls of one session run one at a time: these two run in sessions of their own. */
	slow = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(3)\n'slow'",
	                       "{\"session\": \"new\"}");
	fast = mcpc_call_async(&e2e_srv, "'fast'", "{\"session\": \"new\"}");
	first = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
	second = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
	cr_assert_not_null(first);
	cr_assert_not_null(second);
	cr_assert_eq(json_object_get_int64(e2e_member(first, "id")), fast,
	             "the fast call waited for the slow one: %s", mcpc_json(first));
	cr_assert_eq(json_object_get_int64(e2e_member(second, "id")), slow);
	cr_assert_str_eq(mcpc_sc_str(first, "result_repr"), "'fast'");
	cr_assert_str_eq(mcpc_sc_str(second, "result_repr"), "'slow'");
	e2e_stop();
}

Test(concurrency, queued_calls_run_in_order)
{
	int64_t ids[3];
	const char *want[] = {"'A'", "'B'", "'C'"};

	e2e_start(ARGS("--max-workers", "1"));
	ids[0] = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(1)\n'A'", NULL);
	ids[1] = mcpc_call_async(&e2e_srv, "'B'", NULL);
	ids[2] = mcpc_call_async(&e2e_srv, "'C'", NULL);
	for (int i = 0; i < 3; i++) {
		json_object *r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));

		cr_assert_not_null(r);
		cr_assert_eq(json_object_get_int64(e2e_member(r, "id")), ids[i], "order: %s",
		             mcpc_json(r));
		cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), want[i]);
	}
	e2e_stop();
}

Test(concurrency, many_calls_all_answer_correctly)
{
	enum { N = 24 };
	int64_t ids[N];

	e2e_start(NULL);
	for (int i = 0; i < N; i++) {
		char code[64];

		snprintf(code, sizeof(code), "print(%d)\n%d * %d", i, i, i);
		ids[i] = mcpc_call_async(&e2e_srv, code, NULL);
	}
	for (int i = 0; i < N; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], 60000));
		char out[16];

		cr_assert_not_null(r, "call %d not answered", i);
		cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), i * i,
		             "%s", mcpc_json(r));
		snprintf(out, sizeof(out), "%d\n", i);
		cr_assert_str_eq(mcpc_sc_str(r, "stdout"), out);
	}
	e2e_stop();
}

/* ---- Shutdown ------------------------------------------------------------------------------ */

/* Start a stuck call, capture the server's processes, end the server with `how`, and check that
 * it exits within 3 s and leaves no process behind. Closing stdin asks nothing more: the call
 * asked is answered first (here, at its 2 s timeout); SIGTERM stops at once. */
static void shutdown_with_stuck_worker(int sig)
{
	struct mcpc_proc procs[64];
	int n, left;
	int64_t id;

	e2e_start(sig ? NULL : ARGS("--timeout", "2"));
	e2e_ok("1");
	n = e2e_settle_descendants(0, 300);
	id = mcpc_call_async(&e2e_srv, "while True:\n    pass", NULL);
	for (int i = 0; i < 100 && e2e_descendants(procs, 64) <= n; i++)
		usleep(20000);
	n = e2e_descendants(procs, 64);
	cr_assert_geq(n, 1, "no worker process seen for the stuck call");
	if (sig) {
		cr_assert_eq(mcpc_signal(&e2e_srv, sig), 0);
	} else {
		json_object *r;
		mcpc_close_stdin(&e2e_srv);
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 8000));
		cr_assert_not_null(r, "the call asked before EOF was not answered");
		cr_assert_str_eq(mcpc_sc_str(r, "status"), "timeout", "%s", mcpc_json(r));
	}
	cr_assert_eq(mcpc_wait_exit(&e2e_srv, 3000), 0, "server still running 3 s after %s",
	             sig ? "SIGTERM" : "EOF and the last answer");
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

Test(shutdown, eof_exits_and_kills_every_worker)
{
	shutdown_with_stuck_worker(0);
}

Test(shutdown, sigterm_exits_and_kills_every_worker)
{
	shutdown_with_stuck_worker(SIGTERM);
}

/* A client that writes its requests and closes stdin (a pipe: printf ... | safepy) gets every
 * answer, the last message's too when it has no newline, then the server exits 0. */
Test(shutdown, eof_answers_what_was_asked_then_exits)
{
	static const char input[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	    "\"protocolVersion\":"
	    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"
	    "\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"run_python\",\"arguments\":{\"code\":\"import time\\ntime.sleep(0.5)\\n6 * 7\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"run_python\",\"arguments\":{\"code\":\"print('last')\"}}}";
	json_object *r;

	cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_BIN, NULL, NULL), 0);
	cr_assert_eq(mcpc_send_raw(&e2e_srv, input, sizeof(input) - 1), 0);
	mcpc_close_stdin(&e2e_srv);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, 1, 20000));
	cr_assert_not_null(r, "call 1 was not answered");
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), 42, "%s",
	             mcpc_json(r));
	cr_assert_not_null(e2e_hold(mcpc_wait_int_id(&e2e_srv, 2, 5000)), "ping not answered");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, 3, 20000));
	cr_assert_not_null(r, "the last message, without a newline, was not answered");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "last\n", "%s", mcpc_json(r));
	cr_assert_eq(mcpc_wait_exit(&e2e_srv, 5000), 0, "server still running after its answers");
	cr_assert(WIFEXITED(e2e_srv.status) && WEXITSTATUS(e2e_srv.status) == 0, "status 0x%x",
	          e2e_srv.status);
	cr_assert_eq(e2e_srv.bad_lines, 0, "bad stdout line: %s", e2e_srv.first_bad);
	mcpc_free(&e2e_srv);
}

Test(shutdown, idle_eof_before_initialize)
{
	cr_assert_eq(mcpc_start(&e2e_srv, SAFEPY_BIN, NULL, NULL), 0);
	mcpc_close_stdin(&e2e_srv);
	cr_assert_eq(mcpc_wait_exit(&e2e_srv, 10000), 0, "server ignores EOF before initialize");
	cr_assert(WIFEXITED(e2e_srv.status) && WEXITSTATUS(e2e_srv.status) == 0, "status 0x%x",
	          e2e_srv.status);
	cr_assert_eq(e2e_srv.lines, 0, "the server wrote on stdout unasked");
	mcpc_free(&e2e_srv);
}

/* ---- A client that stops reading --------------------------------------------------------- */

TestSuite(backpressure, .timeout = 180, .fini = e2e_cleanup);

/* Write a line to the server's stdin without reading its stdout (mcpc_send drains it). */
static void send_without_reading(const char *line)
{
	size_t n = strlen(line), off = 0;

	while (off <= n) {
		struct pollfd p = {.fd = e2e_srv.in_fd, .events = POLLOUT};
		const char *data = off < n ? line + off : "\n";
		size_t k = off < n ? n - off : 1;
		ssize_t w;

		cr_assert_gt(poll(&p, 1, 10000), 0, "the server stopped reading its stdin");
		w = write(e2e_srv.in_fd, data, k);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		cr_assert_gt(w, 0, "write: %s", strerror(errno));
		off += (size_t)w;
	}
}

/* A run_python call (extra: more arguments as JSON text, or NULL) sent without reading; a
 * progress token when progress is not NULL. */
static void call_without_reading(int64_t id, const char *code, const char *extra,
                                 const char *progress)
{
	json_object *msg = json_object_new_object(), *params = json_object_new_object(),
	            *args = extra ? json_tokener_parse(extra) : json_object_new_object();

	if (progress) {
		json_object *meta = json_object_new_object();

		json_object_object_add(meta, "progressToken", json_object_new_string(progress));
		json_object_object_add(params, "_meta", meta);
	}
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_new_int64(id));
	json_object_object_add(msg, "method", json_object_new_string("tools/call"));
	json_object_object_add(params, "name", json_object_new_string("run_python"));
	json_object_object_add(args, "code", json_object_new_string(code));
	json_object_object_add(params, "arguments", args);
	json_object_object_add(msg, "params", params);
	send_without_reading(json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
	json_object_put(msg);
}

/* The server's descendant that burns CPU: the runaway's runner. */
static struct mcpc_proc find_burner(void)
{
	struct mcpc_proc procs[64];
	long long before[64];
	int n = e2e_descendants(procs, 64), best = -1;
	long long most = 0;

	for (int i = 0; i < n; i++)
		before[i] = cpu_ticks(procs[i].pid);
	usleep(200000);
	for (int i = 0; i < n; i++) {
		long long now = cpu_ticks(procs[i].pid);

		if (now >= 0 && before[i] >= 0 && now - before[i] > most) {
			most = now - before[i];
			best = i;
		}
	}
	/* Even when the machine is busy, a loop that never sleeps shows up. */
	cr_assert_geq(best, 0, "no process of the server burns CPU");
	return procs[best];
}

/* Wait until the log (the server's stderr) has a line containing what, within ms. */
static int log_has(const char *what, int ms)
{
	int64_t deadline = mcpc_now_ms() + ms;

	do {
		char *log = mcpc_stderr(&e2e_srv);
		int found = strstr(log, what) != NULL;

		free(log);
		if (found)
			return 1;
		usleep(50000);
	} while (mcpc_now_ms() < deadline);
	return 0;
}

/* A runaway that swallows TimeoutError keeps its deadline while the client reads nothing and
 * 300 answers of about 120 KB each pile up; when the client reads again, every answer is
 * there, in order. */
Test(backpressure, a_client_that_stops_reading_stops_no_deadline)
{
	static const char runaway[] =
	    "while True:\n    try:\n        while True:\n            pass\n"
	    "    except BaseException:\n        pass\n";
	struct mcpc_proc burner;
	int64_t sent, gone_at = -1, last_change, cancel_sent;
	long long ticks, t;
	json_object *r;
	int n = 300, got = 0, timed_out = 0, beats = 0;

	e2e_start(NULL);
	e2e_expect_result("1", "1"); /* the default session exists */
	sent = mcpc_now_ms();
	call_without_reading(100000, runaway, "{\"timeout_seconds\":1,\"session\":\"new\"}",
	                     "runaway");
	usleep(150000);
	burner = find_burner();
	for (int i = 1; i <= n; i++) {
		char code[96];

		snprintf(code, sizeof(code), "print(%d, 'x' * 40000)\n%d", i, i);
		call_without_reading(100000 + i, code, NULL, NULL);
	}
	/* A call that sleeps, cancelled while nobody reads: the cancellation takes effect. */
	call_without_reading(99999, "import time\ntime.sleep(30)", "{\"session\":\"new\"}", NULL);
	send_without_reading("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	                     "\"params\":{\"requestId\":99999}}");
	cancel_sent = mcpc_now_ms();
	/* The runner must stop burning by its limit plus the grace before the kill (1.5 s), with
	 * some slack for scheduling, though nobody reads the answers. */
	ticks = cpu_ticks(burner.pid);
	last_change = mcpc_now_ms();
	while (mcpc_now_ms() - sent < 5000) {
		usleep(10000);
		t = cpu_ticks(burner.pid);
		if (t < 0 || !mcpc_proc_alive(&burner)) {
			gone_at = mcpc_now_ms();
			break;
		}
		if (t != ticks) {
			ticks = t;
			last_change = mcpc_now_ms();
		} else if (mcpc_now_ms() - last_change >= 300) {
			gone_at = last_change;
			break;
		}
	}
	cr_assert_geq(gone_at, 0, "the runaway still burns CPU 5 s after it started");
	cr_log_info("the runaway stopped %lld ms after its call was sent",
	            (long long)(gone_at - sent));
	cr_assert_leq(gone_at - sent, 1900, "the runaway stopped %lld ms after its call was sent",
	              (long long)(gone_at - sent));
	cr_assert(log_has("call 99999: cancelled", 3000), "the cancellation was not handled:\n%s",
	          e2e_log());
	cr_assert_lt(mcpc_now_ms() - cancel_sent, 5000, "the cancellation took its time");
	/* The server went on: every call ran while the client still read nothing. */
	cr_assert(log_has(e2e_fmt("call %d: ok", 100000 + n), 60000),
	          "the last call did not run while the client was not reading:\n%s", e2e_log());
	/* Now read: every answer, in order, whole. */
	while (got < n || !timed_out) {
		const char *out;

		r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
		cr_assert_not_null(r, "only %d answers and %s the runaway's", got,
		                   timed_out ? "" : "not");
		if (e2e_member(r, "method")) {
			/* The runaway's heartbeat: it beat on time, before its answer. */
			cr_assert_str_eq(json_object_get_string(e2e_member(r, "method")),
			                 "notifications/progress");
			cr_assert_not(timed_out, "a heartbeat after the answer");
			beats++;
			continue;
		}
		cr_assert_neq(json_object_get_int64(e2e_member(r, "id")), 99999,
		              "the cancelled call was answered");
		if (json_object_get_int64(e2e_member(r, "id")) == 100000) {
			cr_assert_str_eq(mcpc_status(r), "timeout", "%.300s", mcpc_json(r));
			cr_assert_geq(beats, 1, "no heartbeat in the runaway's 1.5 s");
			timed_out = 1;
			continue;
		}
		got++;
		cr_assert_eq(json_object_get_int64(e2e_member(r, "id")), 100000 + got,
		             "answer %d is out of order: %.200s", got, mcpc_json(r));
		cr_assert_str_eq(mcpc_status(r), "ok", "%.300s", mcpc_json(r));
		cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), got);
		out = mcpc_sc_str(r, "stdout");
		cr_assert(out && strlen(out) == strlen(e2e_fmt("%d ", got)) + 40000 + 1,
		          "stdout of call %d", got);
		if (got % 50 == 0)
			e2e_release(); /* 120 KB each: do not hold them all */
	}
	cr_assert_eq(e2e_srv.bad_lines, 0, "bad stdout line: %s", e2e_srv.first_bad);
	e2e_stop();
}

/* Past 64 MiB of unread output the server stops reading stdin and starts no call; when the
 * client reads again everything comes, in order, and the server reads again. */
Test(backpressure, past_the_bound_nothing_is_read_or_started_until_it_drains)
{
	const int n = 300;
	int reads_paused = 0, last_ok = 0, got = 0, pings = 0;
	size_t written = 0;
	char line[128];
	json_object *r;

	e2e_start(ARGS("--max-output", "512K"));
	e2e_expect_result("1", "1");
	/* Stdout, logs and the text (three copies of 0.5 MB) cut to the response budget: about
	 * 0.6 MB of answer each, 300 of them far more than 64 MiB (120 were barely more: all of
	 * them could run before the queue passed the bound). */
	for (int i = 1; i <= n; i++)
		call_without_reading(i, "s = 'y' * 500000\nprint(s)\n1", NULL, NULL);
	cr_assert(log_has("the client is not reading", 60000),
	          "the server never said it stopped:\n%s", e2e_log());
	usleep(1000000);
	/* No call started once the queue passed the bound (a few in flight may end). */
	{
		char *log = mcpc_stderr(&e2e_srv);

		for (int i = 1; i <= n; i++)
			if (strstr(log, e2e_fmt("call %d: ok", i)))
				last_ok = i;
		free(log);
	}
	cr_log_info(
	    "%d calls ran before the server stopped starting them; it holds %ld KiB at most",
	    last_ok, e2e_proc_status(e2e_srv.pid, "VmHWM"));
	/* The queue (64 MiB) and the answers of the calls in flight when it filled. */
	cr_assert_lt(e2e_proc_status(e2e_srv.pid, "VmHWM"), 200 * 1024,
	             "the server grew to %ld KiB", e2e_proc_status(e2e_srv.pid, "VmHWM"));
	cr_assert_lt(last_ok, n, "every call ran though nobody read");
	cr_assert_gt(last_ok, 30, "the server stopped early, at call %d", last_ok);
	/* Nor does it read: its stdin pipe fills up. */
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"ping\",\"method\":\"ping\"}\n");
	for (int k = 0; k < 20000 && !reads_paused; k++) {
		ssize_t w = write(e2e_srv.in_fd, line, strlen(line));

		if (w < 0 && errno == EAGAIN) {
			usleep(200000); /* one more chance to read it */
			w = write(e2e_srv.in_fd, line, strlen(line));
			reads_paused = w < 0 && errno == EAGAIN;
			if (reads_paused)
				break;
		}
		if (w > 0) {
			written += (size_t)w;
			pings++;
			cr_assert_eq(w, (ssize_t)strlen(line), "a torn line");
		}
	}
	cr_assert(reads_paused, "the server kept reading: %zu bytes of pings taken", written);
	/* Read everything: the calls in order, every ping answered. */
	while (got < n || pings > 0) {
		json_object *id;

		r = e2e_hold(mcpc_next(&e2e_srv, E2E_CALL_MS));
		cr_assert_not_null(r, "%d answers of %d, %d pings unanswered", got, n, pings);
		id = e2e_member(r, "id");
		if (json_object_is_type(id, json_type_string)) {
			cr_assert_not_null(mcpc_result(r));
			pings--;
			continue;
		}
		got++;
		cr_assert_eq(json_object_get_int64(id), got, "answer %d is out of order", got);
		cr_assert_str_eq(mcpc_status(r), "ok", "%.300s", mcpc_json(r));
		if (got % 10 == 0)
			e2e_release();
	}
	cr_assert(log_has("the client reads again", 1000), "%s", e2e_log());
	e2e_stop();
}

/* ---- One-shot commands ----------------------------------------------------------------------- */

static int run_cmd(const char *const *args, const char *input, char **out, char **err)
{
	int status = 0;

	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, args, input, 30000, out, err, &status), 0,
	             "command did not finish in 30 s");
	return status;
}

/* The server's own bytes, not a parser's view of them: ids beyond 64 bits and -0 come back as
 * the client wrote them. */
Test(protocol, number_ids_come_back_as_written)
{
	static const char *const want[] = {
	    "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"result\":{}}\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":-0,\"result\":{}}\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1e3,\"error\":{\"code\":-32601,",
	    "{\"jsonrpc\":\"2.0\",\"id\":-99999999999999999999,\"result\":{\"content\":",
	};
	char *out, *err;
	int st = run_cmd(ARGS("serve"),
	                 "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"ping\"}\n"
	                 "{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"ping\"}\n"
	                 "{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"nope\"}\n"
	                 "{\"jsonrpc\":\"2.0\",\"id\":-99999999999999999999,\"method\":"
	                 "\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{}}}\n",
	                 &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(strstr(out, want[i]), "no %s in:\n%s", want[i], out);
	free(out);
	free(err);
}

Test(cli, run_c_prints_output_then_the_result)
{
	char *out, *err;
	int st = run_cmd(ARGS("run", "-c",
	                      "print('hi')\nimport sys\nprint('oops', "
	                      "file=sys.stderr)\n6*7"),
	                 NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	cr_assert(!strncmp(out, "hi\n", 3), "stdout: %s", out);
	cr_assert(strstr(out, "42"), "stdout: %s", out);
	cr_assert_null(strstr(out, "oops"), "stderr text on stdout: %s", out);
	cr_assert(strstr(err, "oops"), "stderr: %s", err);
	free(out);
	free(err);
}

/* The result's repr is on a line of its own after output that does not end a line (it was
 * joined to it: "bin8"); -c is given once (a second one replaced the first silently). */
Test(cli, run_result_is_on_its_own_line_and_c_is_given_once)
{
	char *out, *err;
	int st =
	    run_cmd(ARGS("run", "-c", "import sys\nsys.stdout.write('bin')\n8"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	cr_assert_str_eq(out, "bin\n8\n");
	free(out);
	free(err);
	st = run_cmd(ARGS("run", "-c", "1", "-c", "2"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status 0x%x", st);
	cr_assert_str_eq(out, "");
	cr_assert(strstr(err, "-c is given once"), "stderr: %s", err);
	free(out);
	free(err);
}

/* Output to a file or to /dev/null: whether stdout is a terminal is asked (ioctl TCGETS) before
 * the first write, which the supervisor's own filter refused with a line on stderr. */
Test(cli, run_into_a_file_says_nothing_more)
{
	char path[] = "/tmp/safepy-run-out-XXXXXX", *out, *err, got[64] = "";
	int fd = mkstemp(path), st = 0;
	FILE *f;

	cr_assert_geq(fd, 0);
	close(fd);
	for (int i = 0; i < 2; i++) {
		const char *to = i ? path : "/dev/null";
		cr_assert_eq(
		    mcpc_run_cmd("/bin/sh",
		                 ARGS("-c", e2e_fmt("exec '%s' run -c 'print(6 * 7)' > '%s'",
		                                    SAFEPY_BIN, to)),
		                 NULL, 30000, &out, &err, &st),
		    0);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st,
		          err);
		cr_assert_str_eq(err, "", "into %s, stderr: %s", to, err);
		free(out);
		free(err);
	}
	f = fopen(path, "re");
	cr_assert_not_null(f);
	cr_assert_gt(fread(got, 1, sizeof(got) - 1, f), 0);
	fclose(f);
	unlink(path);
	cr_assert_str_eq(got, "42\n");
}

/* `safepy run` writes the code's bytes as they are: a NUL does not end the output. */
Test(cli, run_prints_every_byte)
{
	char *out, *err;
	size_t olen, elen;
	int st;

	cr_assert_eq(mcpc_run_cmd_len(SAFEPY_BIN,
	                              ARGS("run", "-c",
	                                   "import sys\nprint('a\\x00b')\n"
	                                   "print('e\\x00', file=sys.stderr)\n"
	                                   "class R:\n    def __repr__(self):\n"
	                                   "        return 'r\\x00s'\nR()"),
	                              NULL, 30000, &out, &olen, &err, &elen, &st),
	             0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	cr_assert_eq(olen, 8, "stdout: %zu bytes", olen);
	cr_assert_eq(memcmp(out, "a\0b\nr\0s\n", 8), 0);
	cr_assert_eq(elen, 3, "stderr: %zu bytes: %s", elen, err);
	cr_assert_eq(memcmp(err, "e\0\n", 3), 0);
	free(out);
	free(err);
	cr_assert_eq(mcpc_run_cmd_len(SAFEPY_BIN, ARGS("run", "-c", "raise ValueError('x\\x00y')"),
	                              NULL, 30000, &out, &olen, &err, &elen, &st),
	             0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x", st);
	cr_assert_eq(olen, 0);
	cr_assert(elen > 16 && memcmp(err + elen - 16, "ValueError: x\0y\n", 16) == 0, "stderr: %s",
	          err);
	free(out);
	free(err);
}

Test(cli, run_c_error_exits_non_zero)
{
	char *out, *err;
	int st = run_cmd(ARGS("run", "-c", "print('partial')\n1/0"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "status 0x%x", st);
	cr_assert(strstr(out, "partial"), "stdout: %s", out);
	cr_assert(strstr(err, "ZeroDivisionError") || strstr(out, "ZeroDivisionError"),
	          "stdout: %s\nstderr: %s", out, err);
	free(out);
	free(err);
	st = run_cmd(ARGS("run", "-c", "import os"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "status 0x%x", st);
	cr_assert(strstr(err, "Import of os is not allowed") ||
	              strstr(out, "Import of os is not allowed"),
	          "stdout: %s\nstderr: %s", out, err);
	free(out);
	free(err);
}

/* The exit status says how the call ended (the table of --help and safepy(1)). */
Test(cli, run_exit_status_says_how_the_call_ended)
{
	const struct {
		const char *const *args;
		int status;
	} cases[] = {
	    {ARGS("run", "-c", "1"), 0},
	    {ARGS("run", "-c", "1/0"), 1},
	    {ARGS("run", "--timeout", "0.5", "-c", "while True: pass"), 3},
	    {ARGS("run", "-c", "x = 'a' * 10**10"), 4},
	    {ARGS("run", "--max-output", "64", "-c", "while True: print('x' * 1000)"), 5},
	    {ARGS("run", "--allow-import", "os", "--unsafe-no-python-layer", "-c",
	          "import os\nos.kill(os.getppid(), 9)"),
	     7},
	    {ARGS("run", "--timeout", "nope", "-c", "1"), 2},
	    {ARGS("run", "/nonexistent/file.py"), 2},
	};
	char *out, *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = run_cmd(cases[i].args, NULL, &out, &err);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == cases[i].status,
		          "case %zu (%s): status 0x%x, want exit %d; stderr: %s", i,
		          cases[i].args[2], st, cases[i].status, err);
		free(out);
		free(err);
	}
	{
		int st = run_cmd(ARGS("--help"), NULL, &out, &err);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		cr_assert(strstr(out, "3 timeout") && strstr(out, "7 sandbox violation") &&
		              strstr(out, "9 safepy could not run the code"),
		          "--help does not list the exit statuses: %s", out);
		free(out);
		free(err);
	}
}

/* run and doctor print what was asked for: no log lines (the layer report) unless asked. */
Test(cli, run_and_doctor_log_only_when_asked)
{
	char *out, *err;
	int st = run_cmd(ARGS("run", "-c", "print('hi')\n2"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s", st, err);
	cr_assert_str_eq(out, "hi\n2\n");
	cr_assert_str_eq(err, "", "stderr: %s", err);
	free(out);
	free(err);
	st = run_cmd(ARGS("doctor"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s", st, err);
	cr_assert_str_eq(err, "", "stderr: %s", err);
	/* Every layer the worker reports has its line (tasks had none). */
	for (const char *const *l =
	         (const char *const[]){"fds", "setsid", "pdeathsig", "rlimits", "uid", "namespaces",
	                               "tasks", "capabilities", "no_new_privs", "landlock",
	                               "fork_gate", "seccomp", NULL};
	     *l; l++) {
		char line[64];
		snprintf(line, sizeof(line), "\n%-16s ", *l);
		cr_assert(strstr(out, line), "no %s line: %s", *l, out);
	}
	free(out);
	free(err);
	st = run_cmd(ARGS("run", "--log-level", "info", "-c", "1"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert(strstr(err, "info: sandbox layers: {"), "asked for info: %s", err);
	free(out);
	free(err);
}

/* The server keeps logging what it does at info. */
Test(cli, serve_logs_at_info)
{
	char *log;

	e2e_start(NULL);
	e2e_expect_result("1", "1");
	log = mcpc_stderr(&e2e_srv);
	cr_assert(strstr(log, "info: safepy " SAFEPY_VERSION " serving MCP on stdio"), "%s", log);
	cr_assert(strstr(log, "info: sandbox layers: {"), "%s", log);
	free(log);
	e2e_stop();
}

/* An allowed module that cannot be imported stops every command, naming the option and the
 * module: run and doctor before they do anything; serve, which answers initialize at once,
 * as soon as the zygote finds it out (here, with only initialize asked, nothing else is
 * answered). */
Test(cli, allow_import_of_a_missing_module_stops_start_up)
{
	static const char want[] =
	    "safepy: --allow-import i_do_not_exist: no module named 'i_do_not_exist'\n";
	const char *const *cmds[] = {
	    ARGS("serve", "--allow-import", "i_do_not_exist"),
	    ARGS("run", "--allow-import", "i_do_not_exist", "-c", "1"),
	    ARGS("doctor", "--allow-import", "i_do_not_exist"),
	};
	char *out, *err;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int64_t t0 = mcpc_now_ms();
		int st =
		    run_cmd(cmds[i],
		            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		            "{\"protocolVersion\":\"2025-11-25\"}}\n",
		            &out, &err);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: status 0x%x; stderr: %s",
		          cmds[i][0], st, err);
		cr_assert(strstr(err, want), "%s: stderr: %s", cmds[i][0], err);
		cr_assert_lt(mcpc_now_ms() - t0, 10000);
		if (i == 0 && out[0]) {
			static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{";
			cr_assert(strncmp(out, init, sizeof(init) - 1) == 0 &&
			              strchr(out, '\n') == out + strlen(out) - 1,
			          "serve answered more than initialize: %s", out);
		}
		free(out);
		free(err);
	}
}

/* serve reads requests while the zygote starts: calls asked before it found a bad module are
 * answered with the error that names it, then the server stops (exit status 2) though the
 * client is still there. */
Test(cli, serve_answers_the_calls_asked_before_a_bad_module_was_found)
{
	static const char lines[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":"
	    "\"t\",\"version\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"run_python\",\"arguments\":{\"code\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"run_python\",\"arguments\":{\"code\":\"2\"}}}\n";
	struct mcpc c;

	cr_assert_eq(mcpc_start(&c, SAFEPY_BIN, ARGS("--allow-import", "i_do_not_exist"), NULL), 0);
	/* One write: every line is read before the zygote can have failed. */
	cr_assert_eq(mcpc_send_raw(&c, lines, sizeof(lines) - 1), 0);
	cr_assert_not_null(mcpc_result(mcpc_wait_int_id(&c, 0, 10000)), "initialize");
	for (int64_t id = 1; id <= 2; id++) {
		json_object *r = mcpc_wait_int_id(&c, id, 10000);
		cr_assert_not_null(r, "call %lld was not answered", (long long)id);
		cr_assert_str_eq(mcpc_err_str(r, "type"), "SandboxError", "%s", mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "message"),
		                 "--allow-import i_do_not_exist: no module named 'i_do_not_exist'"),
		          "%s", mcpc_json(r));
	}
	cr_assert_eq(mcpc_wait_exit(&c, 10000), 0, "the server did not stop");
	cr_assert(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2, "status 0x%x", c.status);
	mcpc_free(&c);
}

/* A bad value names its option and what the option accepts, and nothing starts. */
Test(cli, bad_values_name_the_option_and_the_accepted_forms)
{
	const struct {
		const char *const *args;
		const char *says;
	} cases[] = {
	    {ARGS("--allow-import", "numpy.*"),
	     "--allow-import 'numpy.*': wildcards are not accepted; expected one module name"},
	    {ARGS("--allow-import", "../x"), "--allow-import '../x': not a module name; expected"},
	    {ARGS("--timeout", "0"), "--timeout '0': expected seconds, a number greater than 0"},
	    {ARGS("--timeout"), "--timeout needs a value: seconds"},
	    {ARGS("--cpu", "1.5"), "--cpu '1.5': expected whole seconds from 1 to 86400"},
	    {ARGS("--memory", "1K"), "--memory '1K': expected a size of at least 32M"},
	    {ARGS("--max-output", "1G"), "--max-output '1G': expected a size from 64 bytes to 16M"},
	    {ARGS("--max-workers", "0"), "--max-workers '0': expected a whole number from 1"},
	    {ARGS("--prefork", "-1"), "--prefork '-1': expected a whole number from 0 to 64"},
	    {ARGS("--max-sessions", "x"), "--max-sessions 'x': expected a whole number"},
	    {ARGS("--session-idle", "inf"), "--session-idle 'inf': expected seconds"},
	    {ARGS("--imports", "all"), "--imports 'all': expected default or seed"},
	    {ARGS("--log-level", "loud"),
	     "--log-level 'loud': expected error, warn, info or debug"},
	    {ARGS("--user", "0"), "--user '0': workers must not run as root"},
	    {ARGS("--user", "no-such-user-here"), "--user 'no-such-user-here': no such user"},
	    {ARGS("--policy"), "--policy is an option of safepy doctor only"},
	    {ARGS("-c", "1"), "-c is an option of safepy run only"},
	};
	char *out, *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = run_cmd(cases[i].args, "", &out, &err);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: status 0x%x",
		          cases[i].args[0], st);
		cr_assert(strstr(err, cases[i].says), "want \"%s\" in: %s", cases[i].says, err);
		cr_assert_str_eq(out, "");
		free(out);
		free(err);
	}
}

Test(cli, run_file_and_stdin)
{
	char path[] = "/tmp/safepy-e2e-run-XXXXXX";
	int fd = mkstemp(path), st;
	const char *code = "total = sum(range(10))\nprint('total', total)\ntotal\n";
	char *out, *err;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, code, strlen(code)), (ssize_t)strlen(code));
	close(fd);
	chmod(path, 0644);
	st = run_cmd(ARGS("run", path), NULL, &out, &err);
	unlink(path);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	cr_assert(!strncmp(out, "total 45\n", 9) && strstr(out + 9, "45"), "stdout: %s", out);
	free(out);
	free(err);
	st = run_cmd(ARGS("run", "-"), code, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	cr_assert(!strncmp(out, "total 45\n", 9) && strstr(out + 9, "45"), "stdout: %s", out);
	free(out);
	free(err);
}

Test(cli, run_limits_apply)
{
	char *out, *err;
	int st = run_cmd(ARGS("run", "-c", "x = 'a' * 10**10"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "status 0x%x", st);
	free(out);
	free(err);
	st = run_cmd(ARGS("run", "-c", "raise SystemExit(1)"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "SystemExit(1) is an error: 0x%x", st);
	free(out);
	free(err);
	st = run_cmd(ARGS("run", "-c", "raise SystemExit(0)"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SystemExit(0) is a success: 0x%x", st);
	free(out);
	free(err);
}

Test(cli, doctor_reports_each_layer)
{
	static const char *const layers[] = {"seccomp", "no_new_privs", "capabilities",
	                                     "rlimits", "namespaces",   "landlock"};
	static const char *const states[] = {"active", "unavailable", "failed", "not needed",
	                                     "not_needed"};
	char *out, *err;
	int st = run_cmd(ARGS("doctor"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "doctor exit 0x%x\n%s\n%s", st, out, err);
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		char *copy = strdup(out), *save = NULL, *found = NULL;

		for (char *line = strtok_r(copy, "\n", &save); line && !found;
		     line = strtok_r(NULL, "\n", &save))
			if (!strncasecmp(line, layers[i], strlen(layers[i])))
				found = line;
		cr_assert_not_null(found, "doctor does not report %s:\n%s", layers[i], out);
		if (!strcmp(layers[i], "seccomp") || !strcmp(layers[i], "no_new_privs"))
			cr_assert(strstr(found, " active"), "mandatory layer not active: %s",
			          found);
		else {
			int known = 0;

			for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++)
				known |= strstr(found, states[k]) != NULL;
			cr_assert(known, "no state in: %s", found);
		}
		free(copy);
	}
	free(out);
	free(err);
}

/* The filters a worker loads, in its order: the fork gate, then the policy with what a
 * session's parked process needs (wait4). */
Test(cli, doctor_policy_prints_the_filters_workers_load)
{
	char *out, *err, *gate, *policy;
	int st = run_cmd(ARGS("doctor", "--policy"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x, stderr: %s", st, err);
	gate = strstr(out, "# ==== 1 of 2: the fork gate");
	policy = strstr(out, "# ==== 2 of 2: the worker policy");
	cr_assert(gate && policy && gate < policy, "no labelled filters, gate first:\n%.2000s",
	          out);
	*policy = '\0';
	/* libseccomp prints SECCOMP_RET_USER_NOTIF as a number. */
	cr_assert(strstr(gate, "syscall \"clone\"") && strstr(gate, "action 0x7fc00000"),
	          "the gate asks the supervisor about clone:\n%s", gate);
	cr_assert_null(strstr(gate, "wait4"), "%s", gate);
	policy++;
	cr_assert(strstr(policy, "syscall \"wait4\""), "the session policy allows wait4:\n%s",
	          policy);
	cr_assert(strstr(policy, "syscall \"read\""), "%s", policy);
	cr_assert_null(strstr(policy, "action 0x7fc00000"), "%s", policy);
	free(out);
	free(err);
}

Test(cli, version_and_help)
{
	char *out, *err;
	int st = run_cmd(ARGS("--version"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert(strstr(out, SAFEPY_VERSION), "--version: %s", out);
	free(out);
	free(err);
	st = run_cmd(ARGS("--help"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert(strstr(out, "--timeout") && strstr(out, "run"), "--help: %s", out);
	free(out);
	free(err);
}

Test(cli, bad_option_fails_without_touching_stdout)
{
	char *out, *err;
	int st = run_cmd(ARGS("serve", "--no-such-option"), NULL, &out, &err);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "status 0x%x", st);
	cr_assert_str_eq(out, "", "stdout: %s", out);
	cr_assert(strlen(err) > 0);
	free(out);
	free(err);
	st = run_cmd(ARGS("--memory", "lots"), NULL, &out, &err);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "status 0x%x", st);
	cr_assert_str_eq(out, "", "stdout: %s", out);
	free(out);
	free(err);
}

Test(cli, unsafe_switch_warns_on_stderr)
{
	char *log;

	e2e_start(ARGS("--unsafe-no-python-layer"));
	e2e_expect_result("1+1", "2");
	log = mcpc_stderr(&e2e_srv);
	cr_assert(strcasestr(log, "unsafe") || strcasestr(log, "warning"), "no warning: %s", log);
	free(log);
	e2e_stop();
}

Test(progress, heartbeats_count_up_while_the_code_runs_and_stop_after_the_response, .timeout = 60,
     .fini = e2e_cleanup)
{
	json_object *params, *r = NULL;
	int64_t id, last = 0, beats = 0;
	int64_t t0;

	e2e_start(NULL);
	params = json_tokener_parse("{\"name\":\"run_python\",\"arguments\":{\"code\":\"import "
	                            "time\\ntime.sleep(2.6)\\n'done'\"},"
	                            "\"_meta\":{\"progressToken\":\"p-1\"}}");
	id = mcpc_request_async(&e2e_srv, "tools/call", params);
	for (;;) {
		json_object *m = e2e_hold(mcpc_next(&e2e_srv, 10000));
		json_object *method, *p, *tok, *prog;
		cr_assert_not_null(m, "no response; stderr:\n%s", e2e_log());
		if (json_object_object_get_ex(m, "id", NULL)) {
			cr_assert_eq(json_object_get_int64(e2e_member(m, "id")), id);
			r = m;
			break;
		}
		cr_assert(json_object_object_get_ex(m, "method", &method));
		if (strcmp(json_object_get_string(method), "notifications/progress"))
			continue;
		cr_assert(json_object_object_get_ex(m, "params", &p));
		cr_assert(json_object_object_get_ex(p, "progressToken", &tok));
		cr_assert_str_eq(json_object_get_string(tok), "p-1");
		cr_assert(json_object_object_get_ex(p, "progress", &prog));
		cr_assert_gt(json_object_get_int64(prog), last, "progress must increase: %s",
		             mcpc_json(m));
		last = json_object_get_int64(prog);
		beats++;
	}
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_geq(beats, 2, "only %lld heartbeats in 2.6 s", (long long)beats);
	/* Nothing about that call after its response. */
	t0 = mcpc_now_ms();
	while (mcpc_now_ms() - t0 < 1500) {
		json_object *m = e2e_hold(mcpc_next(&e2e_srv, 200));
		cr_assert_null(m, "a message after the response: %s", m ? mcpc_json(m) : "");
	}
	/* A call without a token gets none. */
	r = e2e_hold(mcpc_call(&e2e_srv, "import time\ntime.sleep(1.3)\n1", NULL, E2E_CALL_MS));
	cr_assert_str_eq(mcpc_status(r), "ok");
	cr_assert_null(e2e_hold(mcpc_next(&e2e_srv, 300)));
	e2e_stop();
}

Test(logging, set_level_sends_server_events_never_user_output, .timeout = 60, .fini = e2e_cleanup)
{
	json_object *r;
	int events = 0;

	e2e_start(NULL);
	r = e2e_hold(mcpc_request(&e2e_srv, "logging/setLevel",
	                          json_tokener_parse("{\"level\":\"info\"}"), E2E_CALL_MS));
	cr_assert_not_null(mcpc_result(r), "%s", mcpc_json(r));
	r = e2e_hold(mcpc_request(&e2e_srv, "logging/setLevel",
	                          json_tokener_parse("{\"level\":\"loud\"}"), E2E_CALL_MS));
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_error(r), "code")), -32602, "%s",
	             mcpc_json(r));
	r = e2e_hold(mcpc_call(&e2e_srv, "print('USER-OUTPUT-MARK')\n1", NULL, E2E_CALL_MS));
	cr_assert_str_eq(mcpc_status(r), "ok");
	for (;;) {
		json_object *m = e2e_hold(mcpc_next(&e2e_srv, 500)), *p, *data;
		if (!m)
			break;
		cr_assert_str_eq(json_object_get_string(e2e_member(m, "method")),
		                 "notifications/message", "%s", mcpc_json(m));
		cr_assert(json_object_object_get_ex(m, "params", &p));
		cr_assert(json_object_object_get_ex(p, "data", &data));
		cr_assert_null(strstr(mcpc_json(m), "USER-OUTPUT-MARK"), "%s", mcpc_json(m));
		events++;
	}
	/* The server logs each call at info: at least that one event arrived. */
	cr_assert_geq(events, 1);
	e2e_stop();
}

/* A byte order mark before the code (an editor's, kept by a client that read a file) is not
 * part of it, as in a file the interpreter reads: it was a SyntaxError. */
Test(run_python, a_byte_order_mark_before_the_code_is_not_part_of_it)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result("\xef\xbb\xbfx = 1\nx + 1", "2");
	r = e2e_expect_error("\xef\xbb\xbf"
	                     "int('x')",
	                     "ValueError");
	cr_assert(strstr(mcpc_json(r), "line 1, in <module>\\n    int('x')\\n"), "%s",
	          mcpc_json(r));
	e2e_stop();
}
