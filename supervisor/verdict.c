/* verdict.c - how a call ended when its runner gave no result the supervisor could take:
 * from why the supervisor ended it, its wait status, the system call the filter killed, its
 * CPU time and its cgroup's OOM count, to a status, an error type and a message. Pure: no
 * I/O, no globals; the table of cases is the order of the tests below. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <linux/audit.h>

#include "engine_internal.h"

static void set(struct verdict *v, enum run_status st, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set(struct verdict *v, enum run_status st, const char *type, const char *fmt, ...)
{
	va_list ap;

	v->status = st;
	v->cpu = 0;
	v->type = type;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
}

/* The supervisor ended it: its reason decides, whatever the process said or how it died. */
static int by_kill(const struct verdict_in *in, struct verdict *v)
{
	switch (in->kill) {
	case KILL_CANCEL:
		set(v, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
		return 1;
	case KILL_TIMEOUT:
		set(v, RUN_TIMEOUT, "TimeoutError",
		    "Execution exceeded the time limit of %g s and was stopped.", in->timeout_s);
		return 1;
	case KILL_PROTOCOL:
		set(v, RUN_CRASHED, "SandboxError",
		    "The worker broke the protocol with the server (a message not allowed at "
		    "that point) and was stopped.");
		return 1;
	case KILL_ZYGOTE:
		set(v, RUN_CRASHED, "SandboxError",
		    "The Python interpreter process exited while this call ran; it is being "
		    "restarted: please retry.");
		return 1;
	case KILL_SHUTDOWN:
		set(v, RUN_CANCELLED, "Cancelled", "The server is shutting down.");
		return 1;
	case KILL_LOST:
		set(v, RUN_CRASHED, "SandboxError",
		    "The session's process ended unexpectedly; its state is lost.");
		return 1;
	case KILL_RESOURCE:
		set(v, RUN_CRASHED, "ResourceError",
		    "The server ran out of memory or file descriptors while serving this call, "
		    "and stopped it. Retry later.");
		return 1;
	case KILL_QUOTA:
		set(v, RUN_OUTPUT_LIMIT, "WorkspaceError",
		    "The call wrote more to the workspace than one call may (%llu MiB) and was "
		    "stopped: no file was written.",
		    (unsigned long long)(ENGINE_WS_BYTES_PER_CALL >> 20));
		return 1;
	case KILL_SIGNALS:
		set(v, RUN_CRASHED, "InterpreterCrash",
		    "The code took more than %d signals (faults it handled itself, again and "
		    "again) "
		    "and was stopped.",
		    ENGINE_SIGNALS_MAX);
		return 1;
	case KILL_CPU:
		set(v, RUN_TIMEOUT, "TimeoutError",
		    "Execution exceeded the CPU time limit of %u s and was stopped.", in->cpu_s);
		v->cpu = 1;
		return 1;
	case KILL_FORKS:
		set(v, RUN_CRASHED, "SandboxError",
		    "The code tried to start a process more than %d times and was stopped: no "
		    "process can be started in the sandbox.",
		    ENGINE_FORKS_MAX);
		return 1;
	case KILL_DONE:
	case KILL_NONE:
		break;
	}
	return 0;
}

static int by_signal(const struct verdict_in *in, struct verdict *v)
{
	int sig = WTERMSIG(in->status);

	if (sig == SIGSYS) {
		char name[64];
		if (!in->sys || !in->sys->have) {
			set(v, RUN_SANDBOX_VIOLATION, "SandboxViolation",
			    "The sandbox stopped the code: it made a system call that is not "
			    "allowed.");
			return 1;
		}
		policy_syscall_name(in->sys->arch, in->sys->nr, name, sizeof(name));
		/* abort() signals its own process with tgkill(its pid, a tid, SIGABRT), which
		 * the filter kills. Any other target or signal is an attempt on another
		 * process (or one dressed as an abort). */
		if (strcmp(name, "tgkill") == 0 && in->sys->args[0] == (uint64_t)in->pid &&
		    in->sys->args[2] == SIGABRT) {
			set(v, RUN_CRASHED, "InterpreterCrash",
			    "The interpreter aborted (often memory exhaustion inside C code).");
			return 1;
		}
		set(v, RUN_SANDBOX_VIOLATION, "SandboxViolation",
		    "The sandbox stopped the code: it attempted the system call '%s'%s, which is "
		    "not allowed (no files, network, processes or signals).",
		    name, in->sys->arch == AUDIT_ARCH_I386 ? " (i386 entry point)" : "");
		return 1;
	}
	if (sig == SIGXCPU ||
	    (sig == SIGKILL && in->cpu_ms >= 0 && (uint64_t)in->cpu_ms >= in->cpu_s * 1000ull)) {
		set(v, RUN_TIMEOUT, "TimeoutError",
		    "Execution exceeded the CPU time limit of %u s and was stopped.", in->cpu_s);
		v->cpu = 1;
		return 1;
	}
	if (sig == SIGKILL && in->ooms > 0) {
		set(v, RUN_MEMORY_LIMIT, "MemoryError",
		    "The code used more than the memory limit (%llu MiB) and was stopped.",
		    (unsigned long long)(in->memory >> 20));
		return 1;
	}
	if (sig == SIGKILL) {
		set(v, RUN_CRASHED, "SandboxError",
		    "The process running the code was killed from outside the sandbox (SIGKILL).");
		return 1;
	}
	/* The commonest cause of a SIGSEGV the code can give is its C stack running out: CPython
	 * 3.11 recurses in C without a bound through some nestings (hashing nested tuples,
	 * stepping or freeing nested iterators), deeper than any stack the memory limit allows. */
	if (sig == SIGSEGV)
		set(v, RUN_CRASHED, "InterpreterCrash",
		    "The interpreter crashed (signal %d, SEGV). Data nested hundreds of "
		    "thousands of levels deep (tuples, iterators wrapping iterators) runs the C "
		    "stack out this way; a library's compiled code given a value it does not check "
		    "(a NaN coordinate, a huge size), or one that ran short of memory near the "
		    "call's limit (%llu MiB: work on less data at once, delete what is no longer "
		    "needed), can fail so too.",
		    sig, (unsigned long long)(in->memory >> 20));
	else
		set(v, RUN_CRASHED, "InterpreterCrash", "The interpreter crashed (signal %d, %s).",
		    sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "unknown");
	return 1;
}

static void by_exit(const struct verdict_in *in, struct verdict *v)
{
	int code = WEXITSTATUS(in->status);
	const char *why = ipc_worker_exit_reason(code);

	int setup =
	    code == WORKER_EXIT_SECCOMP || code == WORKER_EXIT_NNP || code == WORKER_EXIT_GATE;
	/* the statuses a worker ends with only while it sets its sandbox up */
	int before_code = (code >= WORKER_EXIT_FDS && code <= WORKER_EXIT_SECCOMP) ||
	                  code == WORKER_EXIT_GATE || code == WORKER_EXIT_SIGMASK;

	if (setup && !in->ran)
		set(v, RUN_CRASHED, "SandboxError",
		    "The sandbox could not be set up (%s); safepy refuses to run code without "
		    "seccomp and no_new_privs. Run `safepy doctor`.",
		    why ? why : "unknown");
	else if (before_code && in->ran) /* set up before it had the code: the code's own exit */
		set(v, RUN_CRASHED, "SandboxError",
		    "The worker ended without a result (exit status %d).", code);
	else if (in->ran && why && code != WORKER_EXIT_OK)
		/* the worker's own status after the code ran, or the code's exit with that status */
		set(v, RUN_CRASHED, "SandboxError",
		    "The worker ended without a result (exit status %d: %s, or the code ended "
		    "its process with that status).",
		    code, why);
	else
		set(v, RUN_CRASHED, "SandboxError",
		    "The worker ended without a result (exit status %d%s%s).", code,
		    why ? ": " : "", why ? why : "");
}

void verdict_decide(const struct verdict_in *in, struct verdict *out)
{
	memset(out, 0, sizeof(*out));
	if (by_kill(in, out))
		return;
	if (!in->have_status) {
		set(out, RUN_CRASHED, "SandboxError",
		    "The process running the code ended without a result.");
		return;
	}
	if (WIFSIGNALED(in->status) && by_signal(in, out))
		return;
	if (WIFEXITED(in->status)) {
		by_exit(in, out);
		return;
	}
	set(out, RUN_CRASHED, "SandboxError", "The worker ended without a result.");
}
