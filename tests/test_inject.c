/* test_inject.c - the server when the machine runs short, against the real safepy binary over
 * MCP stdio: the supervisor out of file descriptors (a low RLIMIT_NOFILE from the start, or
 * lowered under it while it runs), process creation failing (a scratch pids cgroup whose
 * pids.max is lowered, when /sys/fs/cgroup allows), the zygote SIGKILLed with calls in flight,
 * and allocations failing in the engine (safepy-failalloc, a test build of the supervisor).
 * Every call is answered, with its result or an error that names what ran short; the server
 * keeps serving, recovers when the resource comes back, and returns to its idle process tree
 * and fd count: nothing is lost or leaked. Nothing here asserts on timing. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define VERSION    "2025-11-25"
#define PRLIMIT    "/usr/bin/prlimit"
#define MAXP       256
#define MAX_ARGS   48
/* What the answer of a call that could not start for want of fds says. */
#define FDS_SAYS   "run out of file descriptors"
/* ... and of one for which no process could be made. */
#define PROCS_SAYS "No process could be created"
/* An ASan server takes longer to exit (LeakSanitizer looks at the whole heap). */
#define EXIT_MS    15000

static void inject_fini(void);

TestSuite(inject_fds, .timeout = 240, .fini = inject_fini);
TestSuite(inject_zygote, .timeout = 240, .fini = inject_fini);

/* ---- Helpers -------------------------------------------------------------------------- */

/* How many times the server's log says s. */
static int log_count(const char *s)
{
	char *log = mcpc_stderr(&e2e_srv);
	int n = 0;

	for (const char *p = log; p && (p = strstr(p, s)); p += strlen(s))
		n++;
	free(log);
	return n;
}

/* Start the server as argv (bin first, then its arguments: pre, safepy's path, args). */
static void start_as(const char *bin, const char *const *pre, const char *const *args,
                     const char *const *env)
{
	const char *argv[MAX_ARGS];
	size_t n = 0;

	for (size_t i = 0; pre && pre[i]; i++)
		argv[n++] = pre[i];
	if (pre)
		argv[n++] = SAFEPY_BIN;
	for (size_t i = 0; args && args[i] && n < MAX_ARGS - 3; i++)
		argv[n++] = args[i];
	/* SAFEPY_INJECT_DEBUG=1: the server logs at debug level (with SAFEPY_INJECT_LOG). */
	if (getenv("SAFEPY_INJECT_DEBUG")) {
		argv[n++] = "--log-level";
		argv[n++] = "debug";
	}
	argv[n] = NULL;
	e2e_open(&e2e_srv, bin, argv, env, VERSION);
}

/* Start safepy with RLIMIT_NOFILE soft (and hard) from its first instruction. */
static void start_with_nofile(int soft, int hard, const char *const *args)
{
	if (access(PRLIMIT, X_OK) != 0)
		cr_skip_test("%s is needed to start the server with a low RLIMIT_NOFILE", PRLIMIT);
	start_as(PRLIMIT, ARGS(e2e_fmt("--nofile=%d:%d", soft, hard), "--"), args, NULL);
}

/* Set the running server's RLIMIT_NOFILE (prlimit(2) on another process: skipped when this
 * test may not). */
static void set_nofile(int soft, int hard)
{
	char *out = NULL, *err = NULL;
	int status = 0, rc;

	rc = mcpc_run_cmd(
	    PRLIMIT,
	    ARGS("--pid", e2e_fmt("%d", (int)e2e_srv.pid), e2e_fmt("--nofile=%d:%d", soft, hard)),
	    NULL, 10000, &out, &err, &status);
	if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0 && strstr(err, "ermission")) {
		free(out);
		free(err);
		cr_skip_test("this test may not change the server's limits (prlimit: permission)");
	}
	cr_assert(rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "prlimit failed: %s",
	          err ? err : strerror(-rc));
	free(out);
	free(err);
}

/* A call's answer must be the ResourceError of a server out of fds. */
static void says_out_of_fds(json_object *r, int limit)
{
	const char *msg = mcpc_err_str(r, "message");

	cr_assert_str_eq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "ResourceError", "%s", mcpc_json(r));
	cr_assert(strstr(msg, FDS_SAYS) && strstr(msg, e2e_fmt("limit %d", limit)) &&
	              strstr(msg, "ulimit -n"),
	          "the answer does not say the server ran out of fds, its limit and what to do: "
	          "%s",
	          msg);
}

/* After each test, passed or failed: its log kept (SAFEPY_INJECT_LOG), the server gone. */
static void inject_fini(void)
{
	if (e2e_srv.stderr_path[0])
		e2e_save_log("SAFEPY_INJECT_LOG");
	e2e_cleanup();
}

/* The server back at idle: as many processes and fds as idle_procs and idle_fds. */
static void back_to_idle(int idle_procs, int idle_fds, int ms)
{
	struct mcpc_proc p[MAXP];
	int64_t until = mcpc_now_ms() + ms;
	int procs = -1, fds = -1;

	do {
		e2e_steady_descendants(3000);
		procs = e2e_descendants(p, MAXP);
		fds = mcpc_fd_count(e2e_srv.pid);
		if (procs == idle_procs && fds == idle_fds)
			break;
		usleep(200000);
	} while (mcpc_now_ms() < until);
	cr_log_info("idle before: %d processes, %d fds; after: %d processes, %d fds", idle_procs,
	            idle_fds, procs, fds);
	cr_assert_eq(procs, idle_procs, "%d processes left, %d when idle before; log:\n%s", procs,
	             idle_procs, e2e_log());
	cr_assert_eq(fds, idle_fds, "the server holds %d fds, %d when idle before; log:\n%s", fds,
	             idle_fds, e2e_log());
}

/* The server at idle, once the zygote and the ready worker (--prefork 1) are up: its
 * processes and fds. */
static void idle_baseline(int *procs, int *fds)
{
	struct mcpc_proc p[MAXP];
	int64_t until = mcpc_now_ms() + 20000;

	while (e2e_descendants(p, MAXP) < 2 && mcpc_now_ms() < until)
		usleep(50000);
	*procs = e2e_steady_descendants(5000);
	*fds = mcpc_fd_count(e2e_srv.pid);
	cr_assert_eq(*procs, 2, "no zygote and ready worker at idle; log:\n%s", e2e_log());
	cr_assert_gt(*fds, 0);
}

/* Stop the server: it exits with status 0 on EOF (an ASan build: without a leak). */
static void end_server(void)
{
	e2e_save_log("SAFEPY_INJECT_LOG");
	e2e_finish(&e2e_srv, EXIT_MS);
	mcpc_free(&e2e_srv);
	e2e_release();
}

/* Nothing in the log says a worker was taken for hostile, or died refused. */
static void no_false_blame(void)
{
	cr_assert_eq(log_count("not allowed in state"), 0,
	             "a worker was blamed for the server's shortage; log:\n%s", e2e_log());
	cr_assert_eq(log_count("killing it"), 0, "a worker was killed; log:\n%s", e2e_log());
}

/* ---- Out of file descriptors -------------------------------------------------------------
 * Each chain of processes costs the supervisor two fds (its channel and its fork gate's
 * listener), and each session keeps its chain. Started with 32, the server fits a few. */

#define FDS_LIMIT   32
#define FDS_BURST   30
#define FDS_IDLE_S  "3"
#define FDS_IDLE_MS 3000

/* The scenario of a client that opens many sessions at once: they are all answered, those
 * that found no fds with the error that says so (after the calls that were running ended,
 * never as a crash), the log says it once, the sessions made keep their state, and once they
 * expire the server serves new sessions again with the fds it had when idle. */
Test(inject_fds, sessions_over_the_limit_fail_clearly_and_the_server_recovers)
{
	int64_t ids[FDS_BURST];
	const char *handles[FDS_BURST];
	int values[FDS_BURST], made = 0, refused = 0, idle_procs, idle_fds;

	start_with_nofile(
	    FDS_LIMIT, FDS_LIMIT,
	    ARGS("--max-workers", "8", "--max-sessions", "100", "--session-idle", FDS_IDLE_S));
	idle_baseline(&idle_procs, &idle_fds);

	for (int i = 0; i < FDS_BURST; i++)
		ids[i] = mcpc_call_async(
		    &e2e_srv, e2e_fmt("import time\ntime.sleep(0.3)\nx = %d\nx", i + 100),
		    "{\"session\":\"new\"}");
	for (int i = 0; i < FDS_BURST; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], E2E_CALL_MS));

		cr_assert_not_null(r, "call %d was not answered; log:\n%s", i, e2e_log());
		cr_assert_not_null(mcpc_structured(r), "not a tool result: %s", mcpc_json(r));
		if (strcmp(mcpc_status(r), "ok") == 0) {
			e2e_assert_result(r, "x", e2e_fmt("%d", i + 100));
			handles[made] = e2e_fmt("%s", mcpc_sc_str(r, "session"));
			values[made++] = i + 100;
		} else {
			says_out_of_fds(r, FDS_LIMIT);
			refused++;
		}
	}
	cr_log_info("%d sessions made, %d refused for want of fds", made, refused);
	cr_assert_gt(made, 0, "no session could be made; log:\n%s", e2e_log());
	cr_assert_gt(refused, 0, "%d fds fit every session: the test proves nothing", FDS_LIMIT);
	cr_assert_eq(log_count("out of file descriptors"), 1,
	             "the log does not say it once; log:\n%s", e2e_log());
	no_false_blame();

	/* The sessions made keep their state, and the server answers at once. */
	for (int i = 0; i < made; i++)
		e2e_assert_result(e2e_call("x", e2e_fmt("{\"session\":\"%s\"}", handles[i])), "x",
		                  e2e_fmt("%d", values[i]));
	cr_assert_not_null(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000)), "no pong");

	/* They expire: their fds come back, and new sessions are served again. */
	usleep((FDS_IDLE_MS + 500) * 1000);
	back_to_idle(idle_procs, idle_fds, 20000);
	for (int i = 0; i < 3; i++)
		e2e_expect_result(e2e_fmt("y = %d\ny", i), e2e_fmt("%d", i));
	e2e_assert_result(e2e_expect_status("7 * 6", "{\"session\":\"new\"}", "ok"), "7 * 6", "42");
	cr_assert_eq(log_count("file descriptors are available again"), 1,
	             "the log does not say the fds came back; log:\n%s", e2e_log());
	usleep((FDS_IDLE_MS + 500) * 1000);
	back_to_idle(idle_procs, idle_fds, 20000);
	end_server();
}

/* The code of a call that asks the supervisor for a module's source itself (the Python layer
 * is off) and returns the reply: its frame type, request id and status (0 or -errno). */
static const char broker_ask[] = "import os, struct\n"
                                 "def frame(t, p):\n"
                                 "    return struct.pack('<IB', len(p), ord(t)) + p\n"
                                 "os.write(3, frame('Q', struct.pack('<IB', 7, 1) + b'json'))\n"
                                 "def read(n):\n"
                                 "    b = b''\n"
                                 "    while len(b) < n:\n"
                                 "        b += os.read(3, n - len(b))\n"
                                 "    return b\n"
                                 "n, t = struct.unpack('<IB', read(5))\n"
                                 "body = read(n)\n"
                                 "[chr(t), *struct.unpack('<Ii', body[:8])]";

/* The limit lowered under the running server to what it has open: no fd is free. A broker
 * request that needs one is answered EMFILE (the worker decides what to make of it), the
 * runner's park is still judged (a /proc read takes the supervisor's spare fd), a call that
 * needs a new worker says the fds ran out; with the limit back, everything works again. */
Test(inject_fds, a_limit_lowered_at_run_time_fails_requests_not_chains)
{
	int open_now;
	json_object *r;

	start_with_nofile(256, 256,
	                  ARGS("--unsafe-no-python-layer", "--allow-import", "os", "--allow-import",
	                       "struct", "--max-sessions", "100"));
	/* The default session holds a chain, a ready worker waits. */
	e2e_expect_result("1 + 1", "2");
	e2e_steady_descendants(5000);
	open_now = mcpc_fd_count(e2e_srv.pid);
	cr_assert_gt(open_now, 0);
	set_nofile(open_now, 256);

	r = e2e_expect_status(broker_ask, NULL, "ok");
	e2e_assert_result(r, "broker_ask", e2e_fmt("[\"A\", 7, %d]", -EMFILE));
	/* The ready worker serves one new session; the next finds no fds. */
	e2e_expect_status("s = 1", "{\"session\":\"new\"}", "ok");
	says_out_of_fds(e2e_call("s = 2", "{\"session\":\"new\"}"), open_now);
	e2e_expect_result("2 + 2", "4"); /* the default session still runs */
	no_false_blame();
	cr_assert_eq(log_count("out of file descriptors"), 1, "log:\n%s", e2e_log());

	set_nofile(256, 256);
	e2e_assert_result(e2e_expect_status(broker_ask, NULL, "ok"), "broker_ask", "[\"A\", 7, 0]");
	e2e_assert_result(e2e_expect_status("3 * 3", "{\"session\":\"new\"}", "ok"), "3 * 3", "9");
	cr_assert_eq(log_count("file descriptors are available again"), 1, "log:\n%s", e2e_log());
	end_server();
}

/* A workspace change the server has no fd to hold (other calls hold them; here the limit is
 * lowered to what it has open) is refused with ENFILE, whose message says the server is short,
 * not the call (EMFILE says the call used its own quota): nothing is written, and with the limit
 * back the same call writes the file. */
Test(inject_fds, a_workspace_change_without_server_fds_blames_the_server)
{
	static const char write_one[] = "def put(name):\n"
	                                "    try:\n"
	                                "        with open(name, 'w') as f:\n"
	                                "            f.write('kept')\n"
	                                "        return 'written'\n"
	                                "    except OSError as e:\n"
	                                "        return [e.errno, 'in the server' in str(e)]\n"
	                                "def mk(name):\n"
	                                "    import os\n"
	                                "    try:\n"
	                                "        os.mkdir(name)\n"
	                                "        return 'made'\n"
	                                "    except OSError as e:\n"
	                                "        return [e.errno, 'in the server' in str(e)]\n"
	                                "[put('a.txt'), mk('d')]";
	char dir[] = "/tmp/safepy-inject-ws-XXXXXX", path[64];
	int open_now;
	struct stat st;

	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(dir, 0777), 0);
	start_with_nofile(256, 256, ARGS("--workspace", dir, "--workspace-write"));
	e2e_expect_result("1 + 1", "2");
	e2e_steady_descendants(5000);
	open_now = mcpc_fd_count(e2e_srv.pid);
	cr_assert_gt(open_now, 0);
	set_nofile(open_now, 256);

	e2e_expect_result(write_one, e2e_fmt("[[%d, true], [%d, true]]", ENFILE, ENFILE));
	snprintf(path, sizeof(path), "%s/a.txt", dir);
	cr_assert(stat(path, &st) < 0 && errno == ENOENT, "a refused write left %s", path);
	snprintf(path, sizeof(path), "%s/d", dir);
	cr_assert(stat(path, &st) < 0 && errno == ENOENT, "a refused mkdir left %s", path);
	no_false_blame();

	set_nofile(256, 256);
	e2e_expect_result(write_one, "[\"written\", \"made\"]");
	end_server();
	snprintf(path, sizeof(path), "%s/a.txt", dir);
	cr_assert(stat(path, &st) == 0 && st.st_size == 4, "the write was not kept");
	snprintf(path, sizeof(path), "%s/d", dir);
	cr_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory was not kept");
	cr_assert_eq(system(e2e_fmt("rm -rf '%s'", dir)), 0);
}

/* ---- stderr nobody reads --------------------------------------------------------------------
 * A client that gives the server a pipe as stderr and never reads it: the pipe fills with log
 * lines. The server went on writing into it and stopped (its loop, deadlines and signals all
 * waited on the pipe). Lines that find it full are dropped; the next that goes out counts them. */

#define TEXT_MAX (1 << 20) /* more than the pipe and the lines of the calls after it */

Test(inject_fds, a_stderr_nobody_reads_stops_nothing)
{
	char fifo[] = "/tmp/safepy-inject-fifo-XXXXXX";
	int hold, drain;
	ssize_t n;
	json_object *r;
	int64_t slow;
	size_t got = 0;
	char *text = NULL;

	cr_assert_not_null(mkdtemp(fifo));
	cr_assert_eq(rmdir(fifo), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	/* Held open by the test so the pipe lives, and never read until the end. */
	hold = open(fifo, O_RDWR | O_CLOEXEC);
	cr_assert_geq(hold, 0);
	start_as("/bin/sh", ARGS("-c", "exec \"$@\" 2>\"$0\"", fifo), ARGS("--log-level", "debug"),
	         NULL);
	slow = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(60)", "{\"timeout_seconds\":2}");
	/* Each is ignored with a warning: about 100 bytes of log, 200 KiB in all. */
	for (int i = 0; i < 2000; i++)
		cr_assert_eq(
		    mcpc_send(&e2e_srv,
		              e2e_fmt("{\"jsonrpc\":\"1.0\",\"method\":\"notifications/x%d\"}", i)),
		    0);
	cr_assert_not_null(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 10000)),
	                   "no pong with stderr full");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 20000));
	cr_assert_not_null(r, "the call past its deadline was not answered with stderr full");
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	e2e_expect_result("6 * 7", "42");

	/* Read now: what was written, then a line that says how many were dropped (written by
	 * the next line that goes out: it may come while the pipe is being emptied, and is looked
	 * for in all that was read). */
	drain = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_geq(drain, 0);
	text = calloc(1, TEXT_MAX + 1);
	cr_assert_not_null(text);
	while (got < TEXT_MAX && (n = read(drain, text + got, TEXT_MAX - got)) > 0)
		got += (size_t)n;
	e2e_expect_result("1 + 1", "2");
	for (int64_t until = mcpc_now_ms() + 5000;
	     !strstr(text, "were dropped") && got < TEXT_MAX && mcpc_now_ms() < until;) {
		n = read(drain, text + got, TEXT_MAX - got);
		if (n > 0)
			got += (size_t)n;
		else
			usleep(50000);
	}
	cr_assert(strstr(text, "log lines were dropped (stderr was not read)"),
	          "no count of the "
	          "lines dropped: %s",
	          text);
	free(text);
	end_server();
	close(drain);
	close(hold);
	unlink(fifo);
}

/* Started with stdin or stdout closed, the server says which and exits 2 (it said "cannot watch
 * stdin: File exists" or "stdout: Invalid argument" and exited 0; with stderr closed, its log
 * went into its own signalfd). With stderr closed it still serves. */
Test(inject_fds, closed_standard_fds_are_refused_or_survived)
{
	static const struct {
		const char *redirect, *says;
	} cases[] = {{"<&-", "stdin is closed"}, {">&-", "stdout is closed"}};
	char *out = NULL, *err = NULL;
	int status = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(mcpc_run_cmd("/bin/sh",
		                          ARGS("-c", e2e_fmt("exec \"$0\" %s", cases[i].redirect),
		                               SAFEPY_BIN),
		                          NULL, 20000, &out, &err, &status),
		             0);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2,
		          "%s: status 0x%x, stderr %s", cases[i].redirect, status, err);
		cr_assert(strstr(err, cases[i].says), "%s: stderr: %s", cases[i].redirect, err);
		free(out);
		free(err);
	}
	start_as("/bin/sh", ARGS("-c", "exec \"$0\" \"$@\" 2>&-"), NULL, NULL);
	e2e_expect_result("6 * 7", "42");
	end_server();
}

/* 90 calls of 4 MiB of code each, for one busy session: they wait their turn with their code.
 * The calls started (up to 64 at once) held theirs besides the 64 MiB bound on the code of
 * calls not started: 320 MiB in the supervisor. The code of calls started is bounded too: the
 * rest wait, not read, and every call is answered. */
Test(inject_fds, code_waiting_for_its_session_is_bounded)
{
	enum { CALLS = 90 };
	int64_t ids[CALLS];
	long peak = 0, rss;
	char *code = malloc((4u << 20) + 64);

	cr_assert_not_null(code);
	code[0] = '#';
	/* Within the largest message (4 MiB) with the request around it. */
	memset(code + 1, 'x', (4u << 20) - 4096);
	strcpy(code + (4u << 20) - 4095, "\nimport time\ntime.sleep(0.02)\nn = 1");
	start_as(SAFEPY_BIN, NULL, ARGS("--timeout", "60"), NULL);
	/* The session is busy meanwhile: the calls behind wait with their code. */
	ids[0] = mcpc_call_async(&e2e_srv, "import time\ntime.sleep(8)\nn = 0", NULL);
	for (int i = 1; i < CALLS; i++) {
		ids[i] = mcpc_call_async(&e2e_srv, code, NULL);
		cr_assert_gt(ids[i], 0);
		if ((rss = e2e_proc_status(e2e_srv.pid, "VmRSS")) > peak)
			peak = rss;
	}
	for (int i = 0; i < CALLS; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], 120000));
		cr_assert_not_null(r, "call %d was not answered", i);
		cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	}
	free(code);
	cr_log_info("the supervisor's peak while the calls were sent: %ld KiB", peak);
	/* The bounds: 64 MiB started, 64 MiB deferred, a line being read, the allocator's own. */
	cr_assert_lt(peak, 220 * 1024, "the supervisor grew to %ld KiB", peak);
	end_server();
}

/* ---- Signals as processes park -------------------------------------------------------------
 * The supervisor signals a runner at its call's deadline (SIGUSR1), which may reach it just as
 * the call ends and the process waits at the fork gate (to park as the session's holder, or to
 * fork the one-thread copy of a process with threads left). Such a signal ended the wait with
 * EINTR: the process exited as if the gate had failed, the call was answered "SandboxError"
 * and a session lost what it made. Here a process of the test sends SIGUSR1 to every process
 * of the server's chains about every millisecond while calls run: a call may end with the
 * TimeoutError the signal raises in its code (its session then as it was before), but every
 * call is answered, none crashed, and a session keeps what each call that succeeded made (and
 * is there at the end, even if none of its calls ran between two signals). */

TestSuite(inject_signals, .timeout = 240, .fini = inject_fini);

Test(inject_signals, a_signal_as_a_process_parks_loses_nothing)
{
	const char *session;
	pid_t starter, zygote, pester;
	int x = 0, kept = 0, fresh = 0, status;

	e2e_start_with(VERSION, ARGS("--allow-import", "threading"), NULL);
	session = e2e_fmt(
	    "{\"session\":\"%s\"}",
	    mcpc_sc_str(e2e_expect_status("x = 0", "{\"session\":\"new\"}", "ok"), "session"));
	starter = e2e_starter();
	zygote = e2e_zygote();
	cr_assert(starter > 0 && zygote > 0, "no zygote; log:\n%s", e2e_log());
	pester = fork();
	cr_assert_geq(pester, 0);
	if (pester == 0) {
		/* It ends with the test, whatever its end, or with the server. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		for (;;) {
			struct mcpc_proc p[MAXP];
			int n = mcpc_descendants(e2e_srv.pid, p, MAXP);

			if (n <= 0)
				_exit(0);
			for (int i = 0; i < n; i++)
				if (p[i].pid != starter && p[i].pid != zygote)
					(void)kill(p[i].pid, SIGUSR1);
			usleep(500 + (useconds_t)(random() % 4000));
		}
	}
	for (int i = 0; i < 90; i++) {
		/* Every third call leaves a thread sleeping: its process forks a one-thread copy. */
		const char *code = i % 3 == 2 ? "import threading, time\n"
		                                "threading.Thread(target=time.sleep, args=(0.3,), "
		                                "daemon=True).start()\nx += 1\nx"
		                              : "x += 1\nx";
		json_object *r =
		    i % 2 ? e2e_call("'done'", "{\"session\":\"new\"}") : e2e_call(code, session);
		const char *st = mcpc_status(r);

		cr_assert(strcmp(st, "ok") == 0 || strcmp(st, "timeout") == 0,
		          "call %d was answered %s: %s", i, st, mcpc_json(r));
		if (strcmp(st, "ok") != 0)
			continue;
		if (i % 2) {
			e2e_assert_result(r, "'done'", "\"done\"");
			fresh++;
		} else {
			e2e_assert_result(r, "x", e2e_fmt("%d", ++x));
			kept++;
		}
	}
	(void)kill(pester, SIGKILL);
	cr_assert_eq(waitpid(pester, &status, 0), pester);
	cr_log_info("%d calls of the session and %d new sessions succeeded of 45 each", kept,
	            fresh);
	cr_assert_gt(fresh, 0, "no call succeeded; log:\n%s", e2e_log());
	e2e_assert_result(e2e_call("x", session), "x", e2e_fmt("%d", x));
	end_server();
}

/* ---- Process creation failing --------------------------------------------------------------
 * The server runs in a scratch pids cgroup (cgroup v2 with the pids controller enabled at its
 * root, or the v1 pids hierarchy) whose pids.max the test lowers below what it holds: no
 * process of the server's tree can fork, as with a user's RLIMIT_NPROC reached. Skipped where
 * no such cgroup can be made (not root, a read-only /sys/fs/cgroup). */

static char pids_cg[PATH_MAX]; /* the scratch cgroup's directory, "" if none */

static int write_text(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		rc = -errno;
	close(fd);
	return rc;
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int is_fs(const char *path, const char *type)
{
	char *out = NULL, *err = NULL;
	int status = 0, yes;

	if (mcpc_run_cmd("/usr/bin/stat", ARGS("-fc", "%T", path), NULL, 5000, &out, &err,
	                 &status) < 0)
		return 0;
	yes =
	    WIFEXITED(status) && WEXITSTATUS(status) == 0 && strncmp(out, type, strlen(type)) == 0;
	free(out);
	free(err);
	return yes;
}

/* Remove a scratch cgroup: kill what is left in it, wait for it to empty, rmdir. */
static void pids_cg_remove(const char *dir)
{
	char path[PATH_MAX + 32], procs[4096];
	int64_t until = mcpc_now_ms() + 10000;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	while (read_text(path, procs, sizeof(procs)) == 0 && procs[0] && mcpc_now_ms() < until) {
		for (char *p = procs; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
			if (atoi(p) > 0)
				kill(atoi(p), SIGKILL);
		usleep(50000);
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		cr_log_warn("could not remove %s: %s", dir, strerror(errno));
}

static void pids_cleanup(void)
{
	inject_fini();
	if (pids_cg[0])
		pids_cg_remove(pids_cg);
	pids_cg[0] = '\0';
}

/* Make the scratch cgroup (scratch cgroups of earlier runs that were killed go first). */
static void pids_cg_make(void)
{
	const char *base = NULL;
	char ctl[PATH_MAX + 32], text[512];
	DIR *dir;
	struct dirent *d;

	if (geteuid() != 0)
		cr_skip_test("needs root to make a scratch pids cgroup");
	if (is_fs("/sys/fs/cgroup", "cgroup2")) {
		base = "/sys/fs/cgroup";
		snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", base);
		if (read_text(ctl, text, sizeof(text)) < 0 || !strstr(text, "pids"))
			cr_skip_test("the pids controller is not enabled at the cgroup v2 root");
	} else if (is_fs("/sys/fs/cgroup/pids", "cgroupfs")) {
		base = "/sys/fs/cgroup/pids";
	} else {
		cr_skip_test("no cgroup hierarchy with the pids controller");
	}
	dir = opendir(base);
	while (dir && (d = readdir(dir)))
		if (strncmp(d->d_name, "safepy-inject-", 14) == 0 &&
		    kill(atoi(d->d_name + 14), 0) < 0) {
			snprintf(ctl, sizeof(ctl), "%s/%s", base, d->d_name);
			pids_cg_remove(ctl);
		}
	if (dir)
		closedir(dir);
	snprintf(pids_cg, sizeof(pids_cg), "%s/safepy-inject-%d", base, (int)getpid());
	if (mkdir(pids_cg, 0755) < 0) {
		int err = errno;
		pids_cg[0] = '\0';
		cr_skip_test("cannot make a cgroup under %s: %s", base, strerror(err));
	}
}

static void pids_max(const char *v)
{
	cr_assert_eq(write_text(e2e_fmt("%s/pids.max", pids_cg), v), 0, "pids.max %s: %s", v,
	             strerror(errno));
}

/* A call's answer must be the ResourceError of a fork that failed. */
static void says_no_process(json_object *r, const char *unchanged)
{
	const char *msg = mcpc_err_str(r, "message");

	cr_assert_str_eq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "ResourceError", "%s", mcpc_json(r));
	cr_assert(strstr(msg, PROCS_SAYS) && strstr(msg, "pids.max") && strstr(msg, "RLIMIT_NPROC"),
	          "the answer does not say no process could be made and which limits: %s", msg);
	if (unchanged)
		cr_assert(strstr(msg, unchanged), "the answer does not say \"%s\": %s", unchanged,
		          msg);
}

TestSuite(inject_procs_cg, .timeout = 240, .fini = pids_cleanup);

/* With pids.max below what the server holds: a call that needs a new worker fails with an
 * error naming the limits (the ready worker still serves one), a session's call whose
 * process cannot fork fails saying the session is unchanged (its prepared process still
 * serves one), the log says it once, the server keeps answering; with the limit lifted,
 * calls run again, the session has its state, and the server returns to idle. */
Test(inject_procs_cg, a_process_limit_fails_calls_clearly_and_the_server_recovers)
{
	int idle_procs, idle_fds;
	const char *s, *in_s;
	json_object *r;

	pids_cg_make();
	start_as("/bin/sh", ARGS("-c", "echo $$ >\"$0/cgroup.procs\" && exec \"$@\"", pids_cg),
	         ARGS("--max-sessions", "20", "--session-idle", FDS_IDLE_S), NULL);
	idle_baseline(&idle_procs, &idle_fds);
	r = e2e_expect_status("x = 1\nx", "{\"session\":\"new\"}", "ok");
	s = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	in_s = e2e_fmt("{\"session\":\"%s\"}", s);
	e2e_expect_status("x += 1\nx", in_s, "ok");
	/* Its holder and the process ready for its next call, the zygote, a ready worker (the
	 * last two are forked after the call: under load they may come after its answer). */
	e2e_steady_descendants(5000);
	cr_assert_eq(e2e_settle_descendants(4, 10000), 4, "log:\n%s", e2e_log());

	pids_max("1");
	e2e_assert_result(e2e_expect_status("10", "{\"session\":\"new\"}", "ok"), "10", "10");
	for (int i = 0; i < 3; i++)
		says_no_process(e2e_call("11", "{\"session\":\"new\"}"), NULL);
	e2e_assert_result(e2e_expect_status("x += 1\nx", in_s, "ok"), "x", "3");
	says_no_process(e2e_call("x += 1\nx", in_s), "The session is unchanged");
	cr_assert_not_null(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000)), "no pong");
	cr_assert_eq(log_count("cannot create worker processes"), 1,
	             "the log does not say it once; log:\n%s", e2e_log());
	no_false_blame();

	pids_max("max");
	e2e_assert_result(e2e_expect_status("12", "{\"session\":\"new\"}", "ok"), "12", "12");
	e2e_assert_result(e2e_expect_status("x", in_s, "ok"), "x", "3");
	cr_assert_eq(log_count("worker processes can be created again"), 1, "log:\n%s", e2e_log());
	usleep((FDS_IDLE_MS + 500) * 1000);
	back_to_idle(idle_procs, idle_fds, 30000);
	end_server();
}

/* ---- The zygote killed under load ----------------------------------------------------------
 * Sessions hold their state in processes forked from a fresh worker (a one-thread copy after
 * its first call): those outlive the zygote. Fresh workers are the zygote's children and die
 * with it. */

#define Z_SESSIONS  4
#define Z_PER       3 /* calls queued in each session */
#define Z_NEW       10
#define Z_CALLS     (Z_SESSIONS * Z_PER + Z_NEW)
/* What the answer of a call whose fresh worker died with the zygote says. */
#define ZYGOTE_SAYS "exited while this call ran"

/* With calls running and queued in sessions and new sessions, the zygote is SIGKILLed: it is
 * restarted; every call is answered: the sessions' calls with their results (their
 * processes survive), a new session's call with its result or, when its fresh worker died
 * with the zygote, an error that says so; the sessions keep their state, and the server
 * returns to its idle process tree and fds. */
Test(inject_zygote, killed_under_load_every_call_is_answered)
{
	const char *handles[Z_SESSIONS];
	int64_t ids[Z_CALLS];
	int kind[Z_CALLS]; /* the session of the call, -1: a new session */
	const char *made[Z_NEW];
	int value[Z_NEW];
	int n[Z_SESSIONS], idle_procs, idle_fds, ok_new = 0, died = 0, in_s = 0, in_new = 0;
	pid_t zygote, again = 0;
	int64_t until;

	start_as(SAFEPY_BIN, NULL,
	         ARGS("--allow-import", "os", "--max-workers", "4", "--max-sessions", "40",
	              "--session-idle", FDS_IDLE_S),
	         NULL);
	idle_baseline(&idle_procs, &idle_fds);
	e2e_expect_result("n = 1\nn", "1"); /* the default session */
	for (int s = 0; s < Z_SESSIONS; s++) {
		json_object *r = e2e_expect_status("n = 0", "{\"session\":\"new\"}", "ok");
		handles[s] = e2e_fmt("{\"session\":\"%s\"}", mcpc_sc_str(r, "session"));
		e2e_assert_result(e2e_expect_status("n += 1\nn", handles[s], "ok"), "n", "1");
		n[s] = 1;
	}
	zygote = e2e_zygote();
	cr_assert_gt(zygote, 0, "no zygote found");

	/* Session calls and new sessions, alternately. */
	for (int i = 0; i < Z_CALLS; i++) {
		int to_session = in_new >= Z_NEW || (in_s < Z_SESSIONS * Z_PER && i % 2 == 0);
		if (to_session) {
			kind[i] = in_s++ % Z_SESSIONS;
			ids[i] = mcpc_call_async(
			    &e2e_srv, "import time\ntime.sleep(0.1)\nn += 1\nn", handles[kind[i]]);
		} else {
			kind[i] = -1;
			in_new++;
			ids[i] = mcpc_call_async(
			    &e2e_srv, e2e_fmt("import time\ntime.sleep(0.1)\nv = %d\nv", i),
			    "{\"session\":\"new\"}");
		}
	}
	/* The default session used just before (its idle time is short: FDS_IDLE_S). */
	e2e_expect_result("n", "1");
	usleep(150000);
	cr_assert_eq(kill(zygote, SIGKILL), 0, "kill %d: %s", (int)zygote, strerror(errno));

	for (int i = 0; i < Z_CALLS; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], 60000)), *res;
		const char *st;

		cr_assert_not_null(r, "call %d was not answered; log:\n%s", i, e2e_log());
		cr_assert_not_null(mcpc_structured(r), "not a tool result: %s", mcpc_json(r));
		st = mcpc_status(r);
		res = e2e_member(mcpc_structured(r), "result");
		if (kind[i] >= 0) {
			/* Its processes are not the zygote's children: they were not touched. */
			cr_assert_str_eq(st, "ok", "a session's call failed: %s", mcpc_json(r));
			cr_assert_eq(json_object_get_int(res), n[kind[i]] + 1, "session %d: %s",
			             kind[i], mcpc_json(r));
			n[kind[i]]++;
		} else if (!strcmp(st, "ok")) {
			cr_assert_eq(json_object_get_int(res), i, "%s", mcpc_json(r));
			made[ok_new] = e2e_fmt("{\"session\":\"%s\"}", mcpc_sc_str(r, "session"));
			value[ok_new++] = i;
		} else {
			cr_assert_str_eq(st, "crashed", "%s", mcpc_json(r));
			cr_assert(strstr(mcpc_err_str(r, "message"), ZYGOTE_SAYS),
			          "the answer does not say what happened: %s", mcpc_json(r));
			died++;
		}
	}
	/* The default session's processes are not the zygote's children either. */
	e2e_expect_result("n", "1");
	cr_log_info("new sessions: %d ran, %d died with the zygote", ok_new, died);
	cr_assert_gt(ok_new, 0, "no new session ran after the zygote's restart");
	until = mcpc_now_ms() + 20000;
	while (mcpc_now_ms() < until && ((again = e2e_zygote()) == 0 || again == zygote))
		usleep(50000);
	cr_assert(again > 0 && again != zygote, "no new zygote; log:\n%s", e2e_log());
	cr_assert_eq(log_count("the Python zygote exited (killed by signal 9); restarting it"), 1,
	             "log:\n%s", e2e_log());
	for (int s = 0; s < Z_SESSIONS; s++)
		e2e_assert_result(e2e_expect_status("n", handles[s], "ok"), "n",
		                  e2e_fmt("%d", n[s]));
	for (int k = 0; k < ok_new; k++)
		e2e_assert_result(e2e_expect_status("v", made[k], "ok"), "v",
		                  e2e_fmt("%d", value[k]));
	e2e_expect_result("1 + 1", "2");
	usleep((FDS_IDLE_MS + 500) * 1000);
	back_to_idle(idle_procs, idle_fds, 30000);
	end_server();
}

/* A zygote that forks nothing (stopped here; hung or swapped out alike): a call waiting for a
 * worker would wait for ever. The zygote that forked no worker within the start time is
 * restarted, and the call is answered. */
Test(inject_zygote, a_stuck_zygote_is_restarted_and_the_waiting_call_answered)
{
	pid_t zygote;
	json_object *r;
	int64_t id;

	start_as(SAFEPY_BIN, NULL, ARGS("--prefork", "0"), NULL);
	e2e_expect_status("1", "{\"session\":\"new\"}", "ok");
	zygote = e2e_zygote();
	cr_assert_gt(zygote, 0, "no zygote found");
	cr_assert_eq(kill(zygote, SIGSTOP), 0, "stop %d: %s", (int)zygote, strerror(errno));
	id = mcpc_call_async(&e2e_srv, "6 * 7", "{\"session\":\"new\"}");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 30000));
	cr_assert_not_null(r, "the call waiting for a worker was not answered; log:\n%s",
	                   e2e_log());
	e2e_assert_result(r, "6 * 7", "42");
	cr_assert_eq(log_count("forked no worker within"), 1, "log:\n%s", e2e_log());
	cr_assert_neq(e2e_zygote(), zygote, "the stuck zygote is still the zygote");
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}
