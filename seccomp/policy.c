/* policy.c - the worker's seccomp policy as one table, and the libseccomp code that builds it.
 * x86_64 only. Functions return 0 or a negative errno (libseccomp's own codes pass through);
 * they never log and never exit. */
#include "policy.h"

#include <errno.h>
#include <linux/audit.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* glibc 2.36 pthread_create's clone flags (sysdeps/unix/sysv/linux/createthread.c), = 0x3d0f00.
 * Exactly these, so a thread can be started but never a process. */
#define POLICY_THREAD_CLONE_FLAGS                                                                  \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |        \
	 CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

/* x32 syscalls enter through the x86_64 entry point with this bit set in the number. */
#define POLICY_X32_SYSCALL_BIT 0x40000000L

/* The table reads best as one row a line. */
/* clang-format off */
#define ALLOW(n, why)	{.name = (n), .action = POLICY_ALLOW, .reason = (why)}
#define ALLOW_IF(n, t, why) {.name = (n), .action = POLICY_ALLOW_IF, .when = t, .reason = (why)}
#define ERRNO(n, e, why) {.name = (n), .action = POLICY_ERRNO, .err = (e), .reason = (why)}
#define KILL(n, why)	{.name = (n), .action = POLICY_KILL, .reason = (why)}
/* Argument tests of ALLOW_IF rows: arg i equals v (all 64 bits); arg i has none of bits. */
#define ARG_EQ(i, v)	{.argno = (i), .mask = UINT64_MAX, .value = (uint64_t)(v)}
#define ARG_CLEAR(i, bits) {.argno = (i), .mask = (uint64_t)(bits), .value = 0}

/* Default action KILL_PROCESS: a syscall missing from this table ends the worker. */
const struct policy_rule policy_table[] = {
	/* I/O only on the worker's own fds; fixed numbers, as the zygote builds the filter. */
	ALLOW_IF("write", ARG_EQ(0, 1), "stdout: /dev/null in a worker; stray writes vanish"),
	ALLOW_IF("write", ARG_EQ(0, 2), "stderr: /dev/null in a worker; CPython's fatal errors"),
	ALLOW_IF("write", ARG_EQ(0, POLICY_FD_CHANNEL), "the channel: output, the result frame"),
	ALLOW_IF("read", ARG_EQ(0, POLICY_FD_CHANNEL), "the channel: the code to run"),

	/* Memory, never executable: no new code can be mapped. */
	ALLOW("brk", "malloc's main arena; glibc takes an errno as the new break: SIGSEGV"),
	ALLOW_IF("mmap", ARG_CLEAR(2, PROT_EXEC), "obmalloc arenas, big objects, thread stacks"),
	ALLOW_IF("mprotect", ARG_CLEAR(2, PROT_EXEC), "thread stack guard pages, thread arenas"),
	ALLOW("munmap", "freeing arenas and big objects"),
	ALLOW("mremap", "growing big lists and bytearrays"),
	ALLOW("madvise", "glibc releases a finished thread's stack"),

	/* Threads, never processes. */
	ALLOW_IF("clone", ARG_EQ(0, POLICY_THREAD_CLONE_FLAGS), "threading; exact flags: no fork"),
	ALLOW("futex", "the GIL, locks, Thread.join"),
	ALLOW("set_robust_list", "glibc per-thread setup"),
	ALLOW("rseq", "glibc per-thread setup; ENOSYS crashes threaded code"),
	ALLOW("exit", "ends a thread"),
	ALLOW("exit_group", "ends the worker: _exit()"),

	/* Time, randomness, identity: calls that "cannot fail", so never an errno. */
	ALLOW("getrandom", "random.seed(), SystemRandom, os.urandom"),
	ALLOW("clock_gettime", "CPU clocks (time.process_time) always enter the kernel"),
	ALLOW("clock_getres", "time.get_clock_info"),
	ALLOW("gettimeofday", "vDSO fallback of time.time()"),
	ALLOW("clock_nanosleep", "time.sleep (CPython 3.11 sleeps with TIMER_ABSTIME)"),
	ALLOW("nanosleep", "sleeps in native code"),
	ALLOW("getpid", "os.getpid; an errno would come back as the pid"),
	ALLOW("gettid", "threading.get_native_id, glibc locks"),
	ALLOW("getppid", "os.getppid; an errno would come back as the pid"),
	ALLOW("sched_yield", "lock back-off"),

	/* Signals within the worker only. */
	ALLOW("rt_sigreturn", "return from a handler (CPython handles SIGINT)"),
	ALLOW("rt_sigaction", "signal handlers"),
	ALLOW("rt_sigprocmask", "pthread_create blocks signals around clone"),
	ALLOW("restart_syscall", "resumes a sleep interrupted by a signal"),

	/* Harmless Python paths reach these: an errno is an exception, a kill a dead worker. */
	ERRNO("open", EACCES, "lazy imports (_strptime, encodings.*): PermissionError"),
	ERRNO("openat", EACCES, "lazy imports (_strptime, encodings.*): PermissionError"),
	ERRNO("newfstatat", EACCES, "importlib and linecache stat source files"),
	ERRNO("stat", EACCES, "importlib and linecache stat source files"),
	ERRNO("lstat", EACCES, "os.path helpers in tracebacks"),
	ERRNO("fstat", EACCES, "buffer sizing of a new file object"),
	ERRNO("statx", EACCES, "glibc's newer stat path"),
	ERRNO("access", EACCES, "existence checks in path handling"),
	ERRNO("faccessat", EACCES, "existence checks in path handling"),
	ERRNO("faccessat2", EACCES, "glibc's access() on new kernels"),
	ERRNO("readlink", EACCES, "path resolution (os.path.realpath)"),
	ERRNO("readlinkat", EACCES, "path resolution (os.path.realpath)"),
	ERRNO("getcwd", EACCES, "relative paths in importlib"),
	ERRNO("getdents64", EACCES, "importlib's directory listing cache"),
	ERRNO("ioctl", ENOTTY, "isatty() probes; so no TIOCSTI and no device ioctls"),
	ERRNO("clone3", ENOSYS, "flags behind a pointer; glibc falls back to clone only on ENOSYS"),
	ERRNO("openat2", ENOSYS, "open_how behind a pointer; ENOSYS makes libc fall back"),

	/* Killed by the default action, listed to document them: a kill is an escape attempt. */
	KILL("execve", "runs another program"),
	KILL("execveat", "runs another program"),
	KILL("fork", "creates a process"),
	KILL("vfork", "creates a process"),
	KILL("unshare", "new namespaces: more kernel attack surface"),
	KILL("setns", "enters another namespace"),
	KILL("socket", "network and local IPC"),
	KILL("socketpair", "local IPC"),
	KILL("connect", "network"),
	KILL("bind", "network"),
	KILL("sendto", "network"),
	KILL("sendmsg", "network; passes fds"),
	KILL("recvmsg", "network; receives fds"),
	KILL("kill", "signals another process"),
	KILL("tkill", "signals a thread, possibly of another process"),
	KILL("tgkill", "signals another process's threads"),
	KILL("rt_sigqueueinfo", "signals another process"),
	KILL("rt_tgsigqueueinfo", "signals another process's threads"),
	KILL("pidfd_open", "a handle on another process"),
	KILL("pidfd_send_signal", "signals another process"),
	KILL("pidfd_getfd", "steals another process's fds"),
	KILL("ptrace", "debugs another process"),
	KILL("process_vm_readv", "reads another process's memory"),
	KILL("process_vm_writev", "writes another process's memory"),
	KILL("kcmp", "probes another process's kernel objects"),
	KILL("io_uring_setup", "io_uring operations bypass seccomp"),
	KILL("io_uring_enter", "io_uring operations bypass seccomp"),
	KILL("io_uring_register", "io_uring operations bypass seccomp"),
	KILL("userfaultfd", "a classic kernel-exploit primitive"),
	KILL("perf_event_open", "kernel attack surface, side channels"),
	KILL("bpf", "kernel attack surface"),
	KILL("keyctl", "the inherited keyring is not namespaced"),
	KILL("add_key", "the inherited keyring is not namespaced"),
	KILL("request_key", "the inherited keyring is not namespaced"),
	KILL("personality", "READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE"),
	KILL("prctl", "process state: dumpable, no_new_privs, names"),
	KILL("arch_prctl", "process state: TLS base, CPUID faulting"),
	KILL("seccomp", "filters are set up before the code runs"),
	KILL("setrlimit", "limits are set up before the code runs"),
	KILL("prlimit64", "limits are set up before the code runs; other processes' too"),
	KILL("setpriority", "scheduling of this and other processes"),
	KILL("memfd_create", "staging for fileless exec"),
	KILL("pkey_mprotect", "mprotect without the PROT_EXEC check"),
	KILL("remap_file_pages", "obsolete memory call"),
	KILL("shmget", "SysV shared memory with other processes"),
	KILL("shmat", "SysV shared memory with other processes"),
	KILL("mount", "filesystem namespace changes"),
	KILL("umount2", "filesystem namespace changes"),
	KILL("pivot_root", "filesystem namespace changes"),
	KILL("chroot", "filesystem namespace changes"),
	KILL("close", "the worker's fds are fixed; nothing for the code to close"),
	KILL("dup", "the worker has no use for fd manipulation"),
	KILL("dup2", "the worker has no use for fd manipulation"),
	KILL("dup3", "the worker has no use for fd manipulation"),
	KILL("fcntl", "the worker has no use for fd manipulation"),
	KILL("lseek", "no files are open in a worker"),
	KILL("pipe", "new fds for IPC"),
	KILL("pipe2", "new fds for IPC"),
	KILL("creat", "creates files"),
	KILL("unlink", "deletes files"),
	KILL("unlinkat", "deletes files"),
	KILL("rename", "moves files"),
	KILL("renameat2", "moves files"),
	KILL("mkdir", "creates directories"),
	KILL("chmod", "changes file modes"),
	KILL("chown", "changes file owners"),
	KILL("truncate", "truncates files"),
	KILL("ioperm", "raw I/O ports"),
	KILL("iopl", "raw I/O ports"),
};
/* clang-format on */

const size_t policy_table_len = sizeof(policy_table) / sizeof(policy_table[0]);

struct policy {
	scmp_filter_ctx ctx;
};

/* Add one table row to ctx. KILL rows add nothing: the default action covers them, and a
 * syscall that this libseccomp does not know cannot be made anyway. */
static int policy_add_rule(scmp_filter_ctx ctx, const struct policy_rule *r)
{
	struct scmp_arg_cmp cmp;
	int nr;

	if (r->action == POLICY_KILL)
		return 0;
	nr = seccomp_syscall_resolve_name(r->name);
	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	switch (r->action) {
	case POLICY_ALLOW:
		return seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, nr, 0);
	case POLICY_ALLOW_IF:
		if (r->when.argno > 5)
			return -EINVAL;
		cmp = (struct scmp_arg_cmp){.arg = r->when.argno,
		                            .op = SCMP_CMP_MASKED_EQ,
		                            .datum_a = r->when.mask,
		                            .datum_b = r->when.value};
		return seccomp_rule_add_exact_array(ctx, SCMP_ACT_ALLOW, nr, 1, &cmp);
	case POLICY_ERRNO:
		return seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 0);
	case POLICY_KILL:
		break;
	}
	return -EINVAL;
}

/* The filter's attributes: kill on a foreign arch (i386 int 0x80), real errnos from the
 * kernel, and no_new_privs set again by seccomp_load (the caller has set it already). */
static int policy_set_attrs(scmp_filter_ctx ctx)
{
	int rc;

	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		return rc;
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (rc < 0)
		return rc;
	return seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
}

int policy_build(struct policy **out)
{
	struct policy *p = NULL;
	scmp_filter_ctx ctx = NULL;
	size_t i;
	int rc;

	/* The table (syscall names, clone flags, the x32 reasoning) is x86_64's. */
	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return -EOPNOTSUPP;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	/* seccomp_init adds the native arch only: every other arch meets the bad-arch action. */
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = policy_set_attrs(ctx);
	if (rc < 0)
		goto out;
	for (i = 0; i < policy_table_len; i++) {
		rc = policy_add_rule(ctx, &policy_table[i]);
		if (rc < 0)
			goto out;
	}
	p->ctx = ctx;
	*out = p;
	return 0;
out:
	seccomp_release(ctx);
	free(p);
	return rc;
}

/* seccomp_load generates the BPF program here, so it allocates and frees: brk, mmap and
 * munmap are in the table for that too. */
int policy_load(const struct policy *p)
{
	return seccomp_load(p->ctx);
}

void policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	seccomp_release(p->ctx);
	free(p);
}

int policy_export_pfc(const struct policy *p, int fd)
{
	return seccomp_export_pfc(p->ctx, fd);
}

int policy_export_bpf(const struct policy *p, int fd)
{
	return seccomp_export_bpf(p->ctx, fd);
}

/* libseccomp's arch token for an audit arch; 0 when this policy does not name that arch. */
static uint32_t policy_scmp_arch(unsigned int audit_arch)
{
	switch (audit_arch) {
	case AUDIT_ARCH_X86_64:
		return SCMP_ARCH_X86_64;
	case AUDIT_ARCH_I386:
		return SCMP_ARCH_X86;
	default:
		return 0;
	}
}

const char *policy_syscall_name(unsigned int audit_arch, long nr, char *buf, size_t len)
{
	uint32_t arch = policy_scmp_arch(audit_arch);
	const char *prefix = "";
	char *name = NULL;

	/* x32 numbers carry a bit and arrive with the x86_64 audit arch. */
	if (arch == SCMP_ARCH_X86_64 && nr >= 0 && (nr & POLICY_X32_SYSCALL_BIT) != 0) {
		arch = SCMP_ARCH_X32;
		prefix = "x32 ";
	}
	if (arch != 0 && nr >= 0 && nr <= INT32_MAX)
		name = seccomp_syscall_resolve_num_arch(arch, (int)nr);
	if (name != NULL)
		snprintf(buf, len, "%s%s", prefix, name);
	else if (*prefix != '\0')
		snprintf(buf, len, "%ssyscall %ld", prefix, nr & ~POLICY_X32_SYSCALL_BIT);
	else
		snprintf(buf, len, "syscall %ld", nr);
	free(name);
	return buf;
}
