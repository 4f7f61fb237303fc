/* test_kernel.c - the kernel layer alone, end to end (--unsafe-no-python-layer, with os,
 * ctypes, threading and mmap importable): a bound on a chain's tasks, no memory shared past a
 * rollback, no other process's CPU clock, the CPU mask of itself only, and the syscall report
 * naming the thread that made the killed call. Each attack is shown to fail and to have no
 * effect; a control shows the same code works where it is allowed. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

TestSuite(kernel_tasks, .timeout = 120, .fini = e2e_cleanup);
TestSuite(kernel_memory, .timeout = 120, .fini = e2e_cleanup);
TestSuite(kernel_clocks, .timeout = 120, .fini = e2e_cleanup);
TestSuite(kernel_report, .timeout = 120, .fini = e2e_cleanup);

#define UNSAFE                                                                                     \
	"--unsafe-no-python-layer", "--allow-import", "os", "--allow-import", "ctypes",            \
	    "--allow-import", "threading", "--allow-import", "mmap"

static const char *in_session(const char *h)
{
	return e2e_fmt("{\"session\":\"%s\"}", h);
}

/* A new session whose first call is code; returns its handle. */
static const char *new_session(const char *code)
{
	json_object *r = e2e_expect_status(code, "{\"session\":\"new\"}", "ok");
	const char *h = mcpc_sc_str(r, "session");

	cr_assert_not_null(h, "%s", mcpc_json(r));
	return e2e_fmt("%s", h);
}

static const char *result_of(json_object *r)
{
	const char *s = mcpc_sc_str(r, "result_repr");

	cr_assert_not_null(s, "no result: %s", mcpc_json(r));
	return s;
}

/* Threads that sleep for secs, with small stacks so that memory is not what stops them. */
#define THREADS(n, secs)                                                                           \
	"import threading, time\nthreading.stack_size(65536)\nts = []\nerr = None\n"               \
	"try:\n    for i in range(" #n "):\n"                                                      \
	"        t = threading.Thread(target=time.sleep, args=(" #secs ",)); t.start(); "          \
	"ts.append(t)\n"                                                                           \
	"except RuntimeError as e:\n    err = str(e)\n"
/* ... and all of them joined before the call ends. */
#define JOINED "[t.join() for t in ts]\n"

/* The tasks of one chain are bounded: in its own user namespace RLIMIT_NPROC counts only
 * them. Before, one call could leave thousands of threads and exhaust the host's pids. */
Test(kernel_tasks, threads_stop_at_the_bound_of_the_chain)
{
	json_object *r;
	int n;

	e2e_start(ARGS(UNSAFE));
	r = e2e_expect_status(THREADS(500, 1) JOINED "[len(ts), err]", NULL, "ok");
	cr_assert_eq(sscanf(result_of(r), "[%d,", &n), 1, "%s", result_of(r));
	cr_log_info("threads started before the bound: %d", n);
	cr_assert(n > 8 && n < 64, "threads started: %d (want the bound of 64 tasks)", n);
	cr_assert(strstr(result_of(r), "can't start new thread"), "%s", result_of(r));
	e2e_stop();
}

/* Threads left running do not reach the session's state: the process that keeps it is a
 * one-thread copy of the runner, so the next call has the whole bound again (the threads of
 * the call before would count against it if they lived on in the session's processes). */
Test(kernel_tasks, threads_do_not_outlive_their_call)
{
	json_object *r;
	const char *h;

	e2e_start(ARGS(UNSAFE));
	h = new_session(THREADS(20, 3) "len(ts)");
	r = e2e_expect_status(THREADS(500, 1) JOINED "len(ts)", in_session(h), "ok");
	cr_assert_gt(atoi(result_of(r)), 55, "the bound was not there in full: %s", result_of(r));
	e2e_stop();
}

/* A call that ends with its session's whole task bound still running cannot be kept: no copy
 * of its process can be made. It says so, and the session is as it was. */
Test(kernel_tasks, a_call_ending_with_the_bound_running_is_not_kept)
{
	json_object *r;
	const char *h;

	e2e_start(ARGS(UNSAFE));
	h = new_session("kept = 'before'");
	r = e2e_call(THREADS(500, 3) "kept = 'after'\nlen(ts)", in_session(h));
	cr_assert_null(e2e_refusal_mismatch(
	                   r, &(struct e2e_refusal){"error", "SessionError", "could not be kept"}),
	               "%s", mcpc_json(r));
	r = e2e_expect_status("kept", in_session(h), "ok");
	cr_assert_str_eq(result_of(r), "'before'");
	/* The code's own error comes first, its message left out when it has none. */
	r = e2e_call(THREADS(500, 3) "kept = 'raised'\nraise KeyError", in_session(h));
	cr_assert_null(e2e_refusal_mismatch(
	                   r, &(struct e2e_refusal){"error", "SessionError",
	                                            "The code ended with KeyError, and its state "
	                                            "could not be kept"}),
	               "%s", mcpc_json(r));
	r = e2e_expect_status("kept", in_session(h), "ok");
	cr_assert_str_eq(result_of(r), "'before'");
	e2e_stop();
}

/* A thread the interpreter does not know (started by native code: a compiled library's pool)
 * would be missing from a one-thread copy of the call's process, and the library would wait
 * for it for ever in the session's later calls: such a call is not kept, and says so after
 * its own error if it raised one; what it printed and returned still comes back. Threads the
 * code's Python started are kept as before (the copy's threading forgets them). */
#define NATIVE_THREAD                                                                              \
	"import ctypes\nlibc = ctypes.CDLL(None)\nt = ctypes.c_ulong()\n"                          \
	"assert libc.pthread_create(ctypes.byref(t), None, libc.sleep, ctypes.c_void_p(30)) == "   \
	"0\n"

Test(kernel_tasks, a_call_leaving_threads_python_does_not_know_is_not_kept)
{
	json_object *r;
	const char *h;

	e2e_start(ARGS(UNSAFE));
	h = new_session("kept = 'before'");
	r = e2e_call(NATIVE_THREAD "kept = 'after'\nprint('printed')\n'returned'", in_session(h));
	cr_assert_null(e2e_refusal_mismatch(
	                   r, &(struct e2e_refusal){"error", "SessionError", "left 1 thread of a"}),
	               "%s", mcpc_json(r));
	cr_assert_str_eq(result_of(r), "'returned'", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "printed\n", "%s", mcpc_json(r));
	r = e2e_call(NATIVE_THREAD "kept = 'raised'\nraise ValueError('its own')", in_session(h));
	cr_assert_null(
	    e2e_refusal_mismatch(r, &(struct e2e_refusal){"error", "ValueError", "its own"}), "%s",
	    mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "could not be kept"), "%s", mcpc_json(r));
	r = e2e_expect_status("kept", in_session(h), "ok");
	cr_assert_str_eq(result_of(r), "'before'");
	/* The control: a thread of the code's Python, still sleeping as the call ends. */
	e2e_expect_status("import threading, time\n"
	                  "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
	                  "kept = 'python'",
	                  in_session(h), "ok");
	r = e2e_expect_status("kept, threading.active_count()", in_session(h), "ok");
	cr_assert_str_eq(result_of(r), "('python', 1)");
	e2e_stop();
}

/* Without a user namespace (and without a cgroup) nothing would count a worker's tasks:
 * threads are refused. */
Test(kernel_tasks, without_a_user_namespace_threads_are_refused)
{
	json_object *r;

	e2e_start(ARGS(UNSAFE, "--no-namespaces"));
	r = e2e_expect_status(THREADS(5, 1) "[len(ts), err]", NULL, "ok");
	cr_assert_str_eq(result_of(r), "[0, \"can't start new thread\"]");
	e2e_stop();
}

/* A shared mapping would be shared by the whole chain of forks: a write in a call that is
 * rolled back would be seen by the next one. No shared mapping can be made. */
Test(kernel_memory, no_memory_is_shared_past_a_rollback)
{
	json_object *r;
	const char *h;

	e2e_start(ARGS(UNSAFE));
	h = new_session("page = bytearray(4096)\n'private'");
	r = e2e_call("import mmap\nm = mmap.mmap(-1, 4096)\nm[0] = 65", in_session(h));
	cr_assert_null(e2e_refusal_mismatch(r, &(struct e2e_refusal){"sandbox_violation",
	                                                             "SandboxViolation", "mmap"}),
	               "%s",
	               e2e_refusal_mismatch(r, &(struct e2e_refusal){"sandbox_violation",
	                                                             "SandboxViolation", "mmap"}));
	/* The session is as it was, and has no mapping. */
	r = e2e_expect_status("'m' in dir(), page[0]", in_session(h), "ok");
	cr_assert_str_eq(result_of(r), "(False, 0)");
	/* A private anonymous mapping (what malloc makes) still works. */
	r = e2e_expect_status("import mmap\nm = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)\n"
	                      "m[0] = 65\nm[0]",
	                      in_session(h), "ok");
	cr_assert_str_eq(result_of(r), "65");
	e2e_stop();
}

/* A negative clock id names another process's CPU clock: the supervisor's, other sessions'
 * workers', any process on the machine. Only the worker's own clocks can be read. */
Test(kernel_clocks, another_processs_cpu_clock_cannot_be_read)
{
	json_object *r;
	const char *code;

	e2e_start(ARGS(UNSAFE));
	code = e2e_fmt("import os, time\nout = []\nfor pid in (1, %d, os.getppid()):\n"
	               "    try:\n        out.append(time.clock_gettime(((~pid) << 3) | 2))\n"
	               "    except OSError as e:\n        out.append(e.errno)\n"
	               "out += [time.process_time() >= 0, time.thread_time() >= 0, "
	               "time.clock_gettime(time.CLOCK_MONOTONIC) > 0]\nout",
	               (int)e2e_srv.pid);
	r = e2e_expect_status(code, NULL, "ok");
	cr_assert_str_eq(result_of(r), "[22, 22, 22, True, True, True]",
	                 "a foreign CPU clock was read: %s", result_of(r));
	r = e2e_expect_status("import time\ntry:\n    time.clock_getres(((~1) << 3) | 2)\n"
	                      "    n = 0\nexcept OSError as e:\n    n = e.errno\nn",
	                      NULL, "ok");
	cr_assert_str_eq(result_of(r), "22");
	e2e_stop();
}

Test(kernel_clocks, its_own_cpu_mask_only)
{
	json_object *r;

	e2e_start(ARGS(UNSAFE));
	r = e2e_expect_status("import os\nlen(os.sched_getaffinity(0)) >= 1", NULL, "ok");
	cr_assert_str_eq(result_of(r), "True");
	r = e2e_expect_status("import os\ntry:\n    os.sched_getaffinity(1)\n    n = 0\n"
	                      "except OSError as e:\n    n = e.errno\nn",
	                      NULL, "ok");
	cr_assert_str_eq(result_of(r), "1", "pid 1's mask: %s", result_of(r));
	e2e_stop();
}

/* Several threads allocating make glibc count the CPUs (sched_getaffinity of itself): that is
 * allowed now, so the worker is not killed for it. */
Test(kernel_report, threads_that_allocate_are_not_killed)
{
	json_object *r;

	e2e_start(ARGS(UNSAFE));
	r = e2e_expect_status(
	    "import threading\nout = []\n"
	    "def work():\n    out.append(len([bytearray(100000) for _ in range(50)]))\n"
	    "ts = [threading.Thread(target=work) for _ in range(12)]\n"
	    "[t.start() for t in ts]\n[t.join() for t in ts]\nsum(out)",
	    NULL, "ok");
	cr_assert_str_eq(result_of(r), "600");
	e2e_stop();
}

/* The syscall report names the call of the thread the filter killed, not the main thread's. */
Test(kernel_report, the_killed_thread_s_syscall_is_named)
{
	json_object *r;

	e2e_start(ARGS(UNSAFE));
	r = e2e_call("import threading, ctypes, time\nlibc = ctypes.CDLL(None)\n"
	             "t = threading.Thread(target=lambda: libc.socket(2, 1, 0))\n"
	             "t.start()\ntime.sleep(5)",
	             NULL);
	cr_assert_null(e2e_refusal_mismatch(r, &(struct e2e_refusal){"sandbox_violation",
	                                                             "SandboxViolation", "socket"}),
	               "%s", mcpc_json(r));
	/* The main thread slept in clock_nanosleep: it is not the one named. */
	cr_assert_null(strstr(mcpc_err_str(r, "message"), "nanosleep"), "%s", mcpc_json(r));
	e2e_stop();
}
