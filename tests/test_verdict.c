/* test_verdict.c - unit tests of supervisor/verdict.c: every row of how a call ended when its
 * runner gave no result the supervisor could take. Pure: no process, no server. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/audit.h>

#include "engine_internal.h"

/* A wait status: exited with code, or killed by sig. */
#define EXITED(code) (((code)&0xff) << 8)
#define KILLED(sig)  ((sig)&0x7f)

static struct verdict_in base(void)
{
	return (struct verdict_in){
	    .kill = KILL_NONE,
	    .have_status = 1,
	    .status = EXITED(0),
	    .sys = NULL,
	    .pid = 4242,
	    .cpu_ms = -1,
	    .ooms = 0,
	    .timeout_s = 2.5,
	    .cpu_s = 30,
	    .memory = 512ull << 20,
	};
}

static struct verdict decide(const struct verdict_in *in)
{
	struct verdict v;

	memset(&v, 0x5a, sizeof(v));
	verdict_decide(in, &v);
	return v;
}

static void expect(const struct verdict_in *in, enum run_status st, const char *type,
                   const char *says)
{
	struct verdict v = decide(in);

	cr_assert_eq(v.status, st, "status %s, want %s (%s)", run_status_name(v.status),
	             run_status_name(st), v.message);
	cr_assert_str_eq(v.type, type);
	cr_assert(strstr(v.message, says), "message \"%s\" does not say \"%s\"", v.message, says);
}

/* The supervisor's own reason decides, whatever the status says. */
Test(verdict, the_supervisors_reason_wins_over_any_status)
{
	static const int statuses[] = {EXITED(0),      EXITED(1),       KILLED(SIGKILL),
	                               KILLED(SIGSYS), KILLED(SIGXCPU), KILLED(SIGSEGV)};
	static const struct {
		enum kill_reason kill;
		enum run_status st;
		const char *type, *says;
	} rows[] = {
	    {KILL_CANCEL, RUN_CANCELLED, "Cancelled", "cancelled"},
	    {KILL_TIMEOUT, RUN_TIMEOUT, "TimeoutError", "time limit of 2.5 s"},
	    {KILL_PROTOCOL, RUN_CRASHED, "SandboxError", "broke the protocol"},
	    {KILL_ZYGOTE, RUN_CRASHED, "SandboxError", "please retry"},
	    {KILL_SHUTDOWN, RUN_CANCELLED, "Cancelled", "shutting down"},
	    {KILL_LOST, RUN_CRASHED, "SandboxError", "state is lost"},
	    {KILL_RESOURCE, RUN_CRASHED, "ResourceError", "out of memory or file descriptors"},
	    {KILL_QUOTA, RUN_OUTPUT_LIMIT, "WorkspaceError", "no file was written"},
	    {KILL_CPU, RUN_TIMEOUT, "TimeoutError", "CPU time limit of 30 s"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (size_t j = 0; j < sizeof(statuses) / sizeof(statuses[0]); j++) {
			struct verdict_in in = base();
			in.kill = rows[i].kill;
			in.status = statuses[j];
			expect(&in, rows[i].st, rows[i].type, rows[i].says);
		}
}

Test(verdict, a_killed_syscall_is_named)
{
	struct sysreport sys = {.have = 1, .arch = AUDIT_ARCH_X86_64, .nr = SYS_socket};
	struct verdict_in in = base();

	in.status = KILLED(SIGSYS);
	in.sys = &sys;
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "system call 'socket'");
	sys.arch = AUDIT_ARCH_I386;
	sys.nr = 39; /* mkdir on i386 */
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "'mkdir' (i386 entry point)");
}

Test(verdict, a_sigsys_without_a_report_is_still_a_violation)
{
	struct sysreport none = {0};
	struct verdict_in in = base();

	in.status = KILLED(SIGSYS);
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "not allowed");
	in.sys = &none;
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "not allowed");
}

/* abort() signals its own process with tgkill, which the filter kills: a crash, not an
 * escape attempt. */
Test(verdict, abort_is_a_crash_not_a_violation)
{
	struct sysreport sys = {.have = 1, .arch = AUDIT_ARCH_X86_64, .nr = SYS_tgkill};
	struct verdict_in in = base();

	in.status = KILLED(SIGSYS);
	in.sys = &sys;
	sys.args[0] = 4242;
	sys.args[2] = SIGABRT;
	expect(&in, RUN_CRASHED, "InterpreterCrash", "aborted");
	sys.args[0] = 1; /* another process: an attack */
	sys.args[2] = SIGTERM;
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "'tgkill'");
	/* Dressed as an abort: SIGABRT to another process, or another signal to its own. */
	sys.args[0] = 1;
	sys.args[2] = SIGABRT;
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "'tgkill'");
	sys.args[0] = 4242;
	sys.args[2] = SIGKILL;
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "'tgkill'");
	sys.nr = SYS_tkill; /* abort() never uses it */
	sys.args[0] = 4242;
	sys.args[1] = SIGABRT;
	expect(&in, RUN_SANDBOX_VIOLATION, "SandboxViolation", "'tkill'");
}

Test(verdict, the_cpu_limit_is_a_timeout)
{
	struct verdict_in in = base();

	in.status = KILLED(SIGXCPU);
	expect(&in, RUN_TIMEOUT, "TimeoutError", "CPU time limit of 30 s");
	cr_assert(decide(&in).cpu, "the CPU limit is not marked as such");
	/* The hard limit's SIGKILL, told by the CPU time used. */
	in.status = KILLED(SIGKILL);
	in.cpu_ms = 30000;
	expect(&in, RUN_TIMEOUT, "TimeoutError", "CPU time limit");
	cr_assert(decide(&in).cpu, "the CPU limit is not marked as such");
	in.cpu_ms = 29000;
	expect(&in, RUN_CRASHED, "SandboxError", "killed from outside");
	cr_assert_not(decide(&in).cpu);
	/* The wall clock is not the CPU limit. */
	in.kill = KILL_TIMEOUT;
	expect(&in, RUN_TIMEOUT, "TimeoutError", "time limit");
	cr_assert_not(decide(&in).cpu, "the wall clock's limit is marked as the CPU's");
	/* A session's one-thread copy stopped at what its call had left. */
	in.kill = KILL_CPU;
	cr_assert(decide(&in).cpu, "the copy's CPU limit is not marked as such");
}

/* A SIGKILL is the memory limit only when the cgroup counted an OOM kill during the call. */
Test(verdict, sigkill_is_memory_only_with_an_oom_kill)
{
	struct verdict_in in = base();

	in.status = KILLED(SIGKILL);
	expect(&in, RUN_CRASHED, "SandboxError", "killed from outside");
	in.ooms = 1;
	expect(&in, RUN_MEMORY_LIMIT, "MemoryError", "512 MiB");
}

Test(verdict, other_signals_are_crashes_named)
{
	struct verdict_in in = base();

	in.status = KILLED(SIGSEGV);
	expect(&in, RUN_CRASHED, "InterpreterCrash", "signal 11, SEGV");
	/* A segmentation fault says the commonest cause the code can give: deep nesting. */
	expect(&in, RUN_CRASHED, "InterpreterCrash", "runs the C stack out");
	/* and that a library short of memory near the limit can crash so (a 3M-row merge) */
	expect(&in, RUN_CRASHED, "InterpreterCrash", "near the call's limit (512 MiB");
	in.status = KILLED(SIGBUS);
	expect(&in, RUN_CRASHED, "InterpreterCrash", "BUS");
}

Test(verdict, exit_codes_are_named)
{
	struct verdict_in in = base();

	in.status = EXITED(WORKER_EXIT_SECCOMP);
	expect(&in, RUN_CRASHED, "SandboxError", "refuses to run code without seccomp");
	in.status = EXITED(WORKER_EXIT_GATE);
	expect(&in, RUN_CRASHED, "SandboxError", "refuses to run code without seccomp");
	/* After the runner had the code (its sandbox was set up then), the same exit status is
	 * the code's own: no set-up failure is told (V55c L1). */
	in.ran = 1;
	expect(&in, RUN_CRASHED, "SandboxError",
	       "The worker ended without a result (exit status 103).");
	in.status = EXITED(WORKER_EXIT_SECCOMP);
	expect(&in, RUN_CRASHED, "SandboxError", "ended without a result (exit status 100)");
	/* every set-up status (the resource limits, the namespaces, Landlock: V77b L1) */
	for (int code = WORKER_EXIT_FDS; code <= WORKER_EXIT_SECCOMP; code++) {
		char want[64];
		snprintf(want, sizeof(want), "ended without a result (exit status %d).", code);
		in.status = EXITED(code);
		expect(&in, RUN_CRASHED, "SandboxError", want);
	}
	/* a status the worker also ends with after the code ran is told as either */
	in.status = EXITED(WORKER_EXIT_CHANNEL);
	expect(&in, RUN_CRASHED, "SandboxError",
	       "exit status 101: the channel broke or carried a malformed frame, or the code "
	       "ended its process with that status");
	in.ran = 0;
	in.status = EXITED(WORKER_EXIT_CHANNEL);
	expect(&in, RUN_CRASHED, "SandboxError", "exit status 101: the channel broke");
	in.status = EXITED(0);
	expect(&in, RUN_CRASHED, "SandboxError", "exit status 0: the worker ended normally");
	in.status = EXITED(7);
	expect(&in, RUN_CRASHED, "SandboxError", "exit status 7)");
}

Test(verdict, no_status_is_a_crash)
{
	struct verdict_in in = base();

	in.have_status = 0;
	expect(&in, RUN_CRASHED, "SandboxError", "ended without a result");
}
