/* policy.c - the worker's seccomp policy as one table, and the libseccomp code that builds it.
 * x86_64 only. Functions return 0 or a negative errno (libseccomp's own codes pass through);
 * they never log and never exit. */
#include "policy.h"
#include "policy_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

/* Newer than Debian 12's uapi headers (Linux 5.19). */
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* The clone flags of glibc 2.36's pthread_create, = 0x3d0f00. Exactly these, so a thread can
 * be started but never a process. */
#define POLICY_THREAD_CLONE_FLAGS                                                                  \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |        \
	 CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

/* The clone flags of glibc 2.36's fork(), = 0x1200011: the child's tid is written to and
 * cleared from its struct pthread, SIGCHLD at its exit. */
#define POLICY_FORK_CLONE_FLAGS (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)

/* libseccomp's API level that has SCMP_ACT_NOTIFY and the notify calls. */
#define POLICY_API_NOTIFY 5

/* x32 syscalls enter through the x86_64 entry point with this bit set in the number. */
#define POLICY_X32_SYSCALL_BIT 0x40000000L

/* The bits of a futex operation that name the command; FUTEX_PRIVATE_FLAG (128) and
 * FUTEX_CLOCK_REALTIME (256) are options of any command, other bits make the kernel refuse it. */
#define POLICY_FUTEX_CMD 0x7f

/* The mapping type bits of mmap's flags (MAP_SHARED 1, MAP_PRIVATE 2, MAP_SHARED_VALIDATE 3). */
#define POLICY_MAP_TYPE 0x3

/* The largest clock id of the system clocks (CLOCK_TAI is 11); a negative id, seen as a large
 * unsigned number, names another process's or thread's CPU clock. */
#define POLICY_CLOCK_MAX 15

/* The table reads best as one row a line. */
/* clang-format off */
/* Default action KILL_PROCESS: a syscall missing from this table ends the worker. */
const struct policy_rule policy_table[] = {
	/* I/O only on the worker's own fds; fixed numbers, as the zygote builds the filter. */
	ALLOW_IF("write", ARG_EQ(0, 1), "stdout: /dev/null in a worker; stray writes vanish"),
	ALLOW_IF("write", ARG_EQ(0, 2), "stderr: /dev/null in a worker; CPython's fatal errors"),
	ALLOW_IF("write", ARG_EQ(0, POLICY_FD_CHANNEL), "the channel: output, the result frame"),
	ALLOW_IF("read", ARG_EQ(0, POLICY_FD_CHANNEL), "the channel: the code to run"),
	ALLOW_IF("recvmsg", ARG_EQ(0, POLICY_FD_CHANNEL), "the channel: a workspace file's fd comes with its answer"),

	/* Files of the workspace: the supervisor opened them and passed their fds. The worker
	 * cannot make an fd of its own (open, socket, pipe, memfd, eventfd: all denied; only a
	 * new handle on /dev/null or on one of these, below), so every fd above the channel is
	 * one of these or /dev/null. Fds 4-63 as the kernel reads them (ALLOW_FD): fds 0-3 can
	 * never be closed, so no file ever lands there. */
	ALLOW_FD("read", "a workspace file"),
	ALLOW_FD("pread64", "a workspace file, at an offset"),
	ALLOW_FD("write", "a workspace file it writes (a hidden copy until the call commits)"),
	ALLOW_FD("lseek", "seek and tell on a workspace file"),
	ALLOW_FD("ftruncate", "a workspace file it writes"),
	ALLOW_FD("close", "done with a workspace file"),
	/* From an fd with its upper half set: killed (the worker's own passes 4). No flags:
	 * CLOSE_RANGE_UNSHARE gave a thread a table of its own, whose workspace files the check
	 * of a parked runner's open files (its leader's table) did not see; the thread wrote on
	 * past the call's quota. */
	ALLOW_IF2("close_range", ARG_MASKED(0, ~(uint64_t)3, 4), ARG_EQ(2, 0), "the worker closes every workspace file when a call ends (fds 4-7)"),
	ALLOW_IF2("close_range", ARG_MASKED(0, ~(uint64_t)7, 8), ARG_EQ(2, 0), "the worker closes every workspace file when a call ends (fds 8-15)"),
	ALLOW_IF2("close_range", ARG_MASKED(0, ~(uint64_t)15, 16), ARG_EQ(2, 0), "the worker closes every workspace file when a call ends (fds 16-31)"),
	ALLOW_IF2("close_range", ARG_MASKED(0, ~(uint64_t)31, 32), ARG_EQ(2, 0), "the worker closes every workspace file when a call ends (fds 32-63)"),
	ALLOW_IF2("fcntl", ARG_LE(0, 2), ARG_EQ(1, F_DUPFD_CLOEXEC), "a new handle on /dev/null (fds 0-2): scipy's qhull writes its messages to a stream made on a temporary file"),
	/* A second handle on a workspace file (numpy's fromfile and tofile read and write one with
	 * C stdio): the same file, so every fd above the channel stays a workspace file. The fds
	 * 4-63 (RLIMIT_NOFILE), by masks on all 64 bits: the kernel reads an fd as 32 bits, and a
	 * test "above 3" passed 0x100000003, the channel. */
	ALLOW_IF2("fcntl", ARG_MASKED(0, ~(uint64_t)3, 4), ARG_EQ(1, F_DUPFD_CLOEXEC), "a second handle on a workspace file (fds 4-7)"),
	ALLOW_IF2("fcntl", ARG_MASKED(0, ~(uint64_t)7, 8), ARG_EQ(1, F_DUPFD_CLOEXEC), "a second handle on a workspace file (fds 8-15)"),
	ALLOW_IF2("fcntl", ARG_MASKED(0, ~(uint64_t)15, 16), ARG_EQ(1, F_DUPFD_CLOEXEC), "a second handle on a workspace file (fds 16-31)"),
	ALLOW_IF2("fcntl", ARG_MASKED(0, ~(uint64_t)31, 32), ARG_EQ(1, F_DUPFD_CLOEXEC), "a second handle on a workspace file (fds 32-63)"),
	ALLOW_IF("fcntl", ARG_EQ(1, F_GETFL), "fdopen asks an fd's mode"),

	/* Memory, never executable: no new code can be mapped. */
	ALLOW("brk", "malloc's main arena; glibc takes an errno as the new break: SIGSEGV"),
	ALLOW_IF3("mmap", ARG_EQ(0, 0), ARG_CLEAR(2, PROT_EXEC), ARG_MASKED(3, POLICY_MAP_TYPE | MAP_ANONYMOUS, MAP_PRIVATE | MAP_ANONYMOUS),
		  "obmalloc arenas, big objects, thread stacks; private: a shared page would outlive a rollback; anonymous: a workspace file mapped would outlive its fd, and the call"),
	ERRNO_IF3("mmap", ARG_GT(0, 0), ARG_CLEAR(2, PROT_EXEC), ARG_MASKED(3, POLICY_MAP_TYPE | MAP_ANONYMOUS, MAP_PRIVATE | MAP_ANONYMOUS), EPERM,
		  "an address of its choosing: mappings spread 1 GiB apart cost page tables the address-space limit does not count (glibc's thread arenas then ask without one)"),
	ALLOW_IF("mprotect", ARG_CLEAR(2, PROT_EXEC), "thread stack guard pages, thread arenas"),
	ALLOW("munmap", "freeing arenas and big objects"),
	ALLOW_IF("mremap", ARG_CLEAR(3, MREMAP_FIXED | MREMAP_DONTUNMAP), "growing big lists and bytearrays, where the kernel finds room"),
	/* The advice glibc, CPython and numpy give; not the advice that merges pages with other
	 * processes' (MADV_MERGEABLE: a timing channel to their contents where the kernel's
	 * same-page merging runs), pushes pages to swap (MADV_PAGEOUT, MADV_COLD: I/O for the
	 * host) or changes what a fork inherits. */
	ALLOW_IF("madvise", ARG_LE(2, MADV_DONTNEED), "glibc releases a finished thread's stack and freed memory (MADV_DONTNEED); the access-pattern hints"),
	ALLOW_IF("madvise", ARG_EQ(2, MADV_FREE), "memory freed lazily"),
	ALLOW_IF("madvise", ARG_MASKED(2, ~(uint64_t)1, MADV_HUGEPAGE), "numpy asks huge pages for big arrays (MADV_HUGEPAGE, MADV_NOHUGEPAGE)"),
	ALLOW_IF("madvise", ARG_MASKED(2, ~(uint64_t)1, MADV_DONTDUMP), "MADV_DONTDUMP, MADV_DODUMP"),

	/* Threads, never processes. */
	{.name = "clone", .action = POLICY_ALLOW_IF, .when = {ARG_EQ(0, POLICY_THREAD_CLONE_FLAGS)},
	 .n_when = 1, .starts_thread = 1, .reason = "threading; exact flags: no fork"},
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_WAIT), "the GIL, locks, Thread.join"),
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_WAKE), "the GIL, locks, a thread's end"),
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_WAIT_BITSET), "timed waits (Lock.acquire(timeout=))"),
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_WAKE_BITSET), "wakes of bitset waits"),
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_WAKE_OP), "condition variables"),
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_REQUEUE), "condition variables"),
	ALLOW_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_CMP_REQUEUE), "condition variables"),
	ERRNO_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_LOCK_PI), ENOSYS, "priority-inheritance futexes name another thread's id: which ids exist on the host"),
	ERRNO_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_TRYLOCK_PI), ENOSYS, "as FUTEX_LOCK_PI"),
	ERRNO_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_UNLOCK_PI), ENOSYS, "as FUTEX_LOCK_PI"),
	ERRNO_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_WAIT_REQUEUE_PI), ENOSYS, "as FUTEX_LOCK_PI"),
	ERRNO_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_CMP_REQUEUE_PI), ENOSYS, "as FUTEX_LOCK_PI"),
	ERRNO_IF("futex", ARG_MASKED(1, POLICY_FUTEX_CMD, FUTEX_LOCK_PI2), ENOSYS, "as FUTEX_LOCK_PI"),
	ALLOW("set_robust_list", "glibc per-thread setup"),
	ALLOW("rseq", "glibc per-thread setup; ENOSYS crashes threaded code"),
	ALLOW("exit", "ends a thread"),
	ALLOW("exit_group", "ends the worker: _exit()"),

	/* Time, randomness, identity: calls that "cannot fail", so never an errno. */
	ALLOW("getrandom", "random.seed(), SystemRandom, os.urandom"),
	ALLOW_IF("clock_gettime", ARG_LE(0, POLICY_CLOCK_MAX), "its own CPU clocks (time.process_time) enter the kernel"),
	ERRNO_IF("clock_gettime", ARG_GT(0, POLICY_CLOCK_MAX), EINVAL, "another process's CPU clock: a clock it has not"),
	ALLOW_IF("clock_getres", ARG_LE(0, POLICY_CLOCK_MAX), "time.get_clock_info"),
	ERRNO_IF("clock_getres", ARG_GT(0, POLICY_CLOCK_MAX), EINVAL, "another process's CPU clock"),
	ALLOW("gettimeofday", "vDSO fallback of time.time()"),
	ALLOW_IF("clock_nanosleep", ARG_LE(0, POLICY_CLOCK_MAX), "time.sleep (CPython 3.11 sleeps with TIMER_ABSTIME)"),
	ERRNO_IF("clock_nanosleep", ARG_GT(0, POLICY_CLOCK_MAX), EINVAL, "sleeping on another process's CPU clock"),
	ALLOW("nanosleep", "sleeps in native code"),
	ALLOW("getpid", "os.getpid; an errno would come back as the pid"),
	ALLOW("gettid", "threading.get_native_id, glibc locks"),
	ALLOW("getppid", "os.getppid; an errno would come back as the pid"),
	ALLOW("sched_yield", "lock back-off"),
	ALLOW("getrusage", "its own resource use, or its threads' or reaped children's (scipy's dual_annealing)"),
	ALLOW("times", "os.times(): its own CPU times"),
	ALLOW_IF("setitimer", ARG_EQ(0, ITIMER_PROF), "the cyclic collector's tick (worker/pygc.c): a timer of its own CPU time"),
	ALLOW_IF("sched_getaffinity", ARG_EQ(0, 0), "glibc counts the CPUs it may use (malloc arenas): its own mask"),
	ERRNO_IF("sched_getaffinity", ARG_GT(0, 0), EPERM, "another process's CPU mask"),

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
	/* Safe as an errno: the kernel runs nothing of it, and the answer is the one a file
	 * system without fallocate gives, which callers handle (numpy goes on to write the file;
	 * glibc's posix_fallocate falls back to its emulation, whose fstat fails above, so it
	 * returns EBADF). Allowed, it would reserve disk blocks on a workspace file beyond what
	 * the call's writes count, or punch holes in a file it reads. */
	ERRNO("fallocate", EOPNOTSUPP, "numpy's tofile reserves the space of 16 MiB or more first; the file is written all the same"),

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
	KILL("recvmsg", "receives fds, but from the channel"),
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
	KILL("close", "fds 0-3 are the worker's fixed ones; none is 64 or above (RLIMIT_NOFILE)"),
	KILL("dup", "the worker has no use for fd manipulation"),
	KILL("dup2", "the worker has no use for fd manipulation"),
	KILL("dup3", "the worker has no use for fd manipulation"),
	KILL("fcntl", "the worker has no use for fd manipulation"),
	KILL("lseek", "fds 0-3 are not files"),
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

/* policy_build_session adds these to the table: a session's parked process forks the
 * process that runs the next call and reaps it. Only ever loaded on top of the fork gate,
 * which sends every clone allowed here to the supervisor; it refuses user code's forks. */
const struct policy_rule policy_session_table[] = {
	ALLOW_IF("clone", ARG_EQ(0, POLICY_FORK_CLONE_FLAGS), "fork(); the gate asks first"),
	ALLOW("wait4", "the parked process reaps the call's process and reports its status"),
};
/* clang-format on */

const size_t policy_table_len = sizeof(policy_table) / sizeof(policy_table[0]);
const size_t policy_session_table_len =
    sizeof(policy_session_table) / sizeof(policy_session_table[0]);

struct policy {
	scmp_filter_ctx ctx;
	int is_gate;           /* built by policy_gate_build: policy_gate_load takes only these */
	struct sock_fprog bpf; /* the program, generated once when built */
};

/* Generate the BPF program once, so that loading it in each worker is one seccomp(2) call.
 * libseccomp writes it to an fd: a memfd, read back into memory. */
static int policy_compile(struct policy *p)
{
	struct sock_filter *insns = NULL;
	off_t size;
	int fd, rc;

	fd = memfd_create("safepy-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = seccomp_export_bpf(p->ctx, fd);
	if (rc < 0)
		goto out;
	size = lseek(fd, 0, SEEK_CUR);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		rc = -EINVAL;
		goto out;
	}
	insns = malloc((size_t)size);
	if (!insns) {
		rc = -ENOMEM;
		goto out;
	}
	if (pread(fd, insns, (size_t)size, 0) != size) {
		rc = -EIO;
		goto out;
	}
	p->bpf.len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	p->bpf.filter = insns;
	insns = NULL;
	rc = 0;
out:
	free(insns);
	(void)close(fd);
	return rc;
}

/* A row's argument tests as libseccomp comparisons. Returns how many, or -EINVAL. */
static int policy_row_cmps(const struct policy_rule *r, struct scmp_arg_cmp cmp[POLICY_MAX_TESTS])
{
	static const enum scmp_compare ops[] = {
	    [POLICY_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
	    [POLICY_LE] = SCMP_CMP_LE,
	    [POLICY_GT] = SCMP_CMP_GT,
	};

	if (r->n_when > POLICY_MAX_TESTS)
		return -EINVAL;
	for (unsigned int i = 0; i < r->n_when; i++) {
		const struct policy_arg_test *t = &r->when[i];
		if (t->argno > 5 || (unsigned int)t->op >= sizeof(ops) / sizeof(ops[0]))
			return -EINVAL;
		cmp[i] = (struct scmp_arg_cmp){
		    .arg = t->argno,
		    .op = ops[t->op],
		    .datum_a = t->op == POLICY_MASKED_EQ ? t->mask : t->value,
		    .datum_b = t->op == POLICY_MASKED_EQ ? t->value : 0,
		};
	}
	return (int)r->n_when;
}

/* Add one table row to ctx. KILL rows add nothing: the default action covers them, and a
 * syscall that this libseccomp does not know cannot be made anyway. */
static int policy_add_rule(scmp_filter_ctx ctx, const struct policy_rule *r)
{
	struct scmp_arg_cmp cmp[POLICY_MAX_TESTS];
	uint32_t action;
	int nr, n;

	if (r->action == POLICY_KILL)
		return 0;
	nr = seccomp_syscall_resolve_name(r->name);
	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	n = policy_row_cmps(r, cmp);
	if (n < 0 || (r->action == POLICY_ALLOW_IF && n == 0) ||
	    (r->action == POLICY_ALLOW && n > 0))
		return -EINVAL;
	action = r->action == POLICY_ERRNO ? SCMP_ACT_ERRNO((uint32_t)r->err) : SCMP_ACT_ALLOW;
	return seccomp_rule_add_exact_array(ctx, action, nr, (unsigned int)n, n ? cmp : NULL);
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

/* The row that answers a thread's start when threads are not allowed. */
static const struct policy_rule policy_no_thread_row =
    ERRNO_IF("clone", ARG_EQ(0, POLICY_THREAD_CLONE_FLAGS), EAGAIN,
             "threads: nothing bounds how many this worker could start");

int policy_build_rows(const struct policy_rule *rows, size_t n, const struct policy_rule *extra,
                      size_t n_extra, int no_threads, uint32_t def_action, struct policy **out)
{
	struct policy *p = NULL;
	scmp_filter_ctx ctx = NULL;
	size_t i;
	int rc;

	/* The tables (syscall names, clone flags, the x32 reasoning) are x86_64's. */
	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return -EOPNOTSUPP;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	/* seccomp_init adds the native arch only: every other arch meets the bad-arch action. */
	ctx = seccomp_init(def_action);
	if (ctx == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = policy_set_attrs(ctx);
	if (rc < 0)
		goto out;
	for (i = 0; i < n; i++) {
		const struct policy_rule *r = &rows[i];
		rc = policy_add_rule(ctx,
		                     no_threads && r->starts_thread ? &policy_no_thread_row : r);
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < n_extra; i++) {
		rc = policy_add_rule(ctx, &extra[i]);
		if (rc < 0)
			goto out;
	}
	p->ctx = ctx;
	rc = policy_compile(p);
	if (rc < 0) {
		p->ctx = NULL;
		goto out;
	}
	*out = p;
	return 0;
out:
	seccomp_release(ctx);
	free(p);
	return rc;
}

int policy_build(struct policy **out)
{
	return policy_build_rows(policy_table, policy_table_len, NULL, 0, 0, SCMP_ACT_KILL_PROCESS,
	                         out);
}

int policy_build_session(struct policy **out)
{
	return policy_build_rows(policy_table, policy_table_len, policy_session_table,
	                         policy_session_table_len, 0, SCMP_ACT_KILL_PROCESS, out);
}

int policy_build_session_nothreads(struct policy **out)
{
	return policy_build_rows(policy_table, policy_table_len, policy_session_table,
	                         policy_session_table_len, 1, SCMP_ACT_KILL_PROCESS, out);
}

/* Default allow: the gate only decides who answers a fork, the filter loaded after it
 * decides what is allowed at all. A clone without CLONE_THREAD creates a process whatever its
 * other flags (masked compare: only that bit counts); fork, vfork and clone3 are left to the
 * main filter, which kills them or fails them with ENOSYS. */
int policy_gate_build(struct policy **out)
{
	struct scmp_arg_cmp no_thread = {
	    .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = CLONE_THREAD, .datum_b = 0};
	struct policy *p = NULL;
	scmp_filter_ctx ctx = NULL;
	int rc;

	if (seccomp_arch_native() != SCMP_ARCH_X86_64)
		return -EOPNOTSUPP;
	/* Below level 5 this libseccomp or kernel has no user notification. */
	if (seccomp_api_get() < POLICY_API_NOTIFY)
		return -EOPNOTSUPP;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* The same attributes: a foreign arch or an x32 number kills here too. */
	rc = policy_set_attrs(ctx);
	if (rc < 0)
		goto out;
	rc = seccomp_rule_add_exact_array(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(clone), 1, &no_thread);
	if (rc < 0)
		goto out;
	p->ctx = ctx;
	p->is_gate = 1;
	rc = policy_compile(p);
	if (rc < 0) {
		p->ctx = NULL;
		goto out;
	}
	*out = p;
	return 0;
out:
	seccomp_release(ctx);
	free(p);
	return rc;
}

static long policy_seccomp(unsigned long flags, const struct sock_fprog *prog)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
}

/* The program was generated when the policy was built: loading it is one system call, which
 * allocates nothing. */
int policy_load(const struct policy *p)
{
	if (p->is_gate)
		return -EINVAL;
	return policy_seccomp(0, &p->bpf) == 0 ? 0 : -errno;
}

/* The listener comes from the kernel (SECCOMP_FILTER_FLAG_NEW_LISTENER). Once the supervisor
 * has received a notification, the waiting process can only be interrupted by a fatal signal
 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19): a process parked in the gate cannot
 * run a signal handler. Older kernels refuse the flag; the gate then loads without it and
 * *killable is 0. One listener per filter chain: a second gate in a process, or in a
 * descendant of one, fails with EBUSY. */
int policy_gate_load(const struct policy *p, int *listener, int *killable)
{
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	long fd;
	int fdflags, rc;

	if (!p->is_gate)
		return -EINVAL;
	fd = policy_seccomp(flags | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &p->bpf);
	*killable = fd >= 0;
	if (fd < 0 && errno == EINVAL)
		fd = policy_seccomp(flags, &p->bpf);
	if (fd < 0)
		return -errno;
	/* From here the gate is in force: a caller that gets an error must not go on. The
	 * kernel makes the listener O_CLOEXEC; make sure, it must never reach user code. */
	fdflags = fcntl((int)fd, F_GETFD);
	if (fdflags < 0 ||
	    ((fdflags & FD_CLOEXEC) == 0 && fcntl((int)fd, F_SETFD, fdflags | FD_CLOEXEC) < 0)) {
		rc = -errno;
		(void)close((int)fd);
		return rc;
	}
	*listener = (int)fd;
	return 0;
}

void policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	seccomp_release(p->ctx);
	free(p->bpf.filter);
	free(p);
}

int policy_export_pfc(const struct policy *p, int fd)
{
	return seccomp_export_pfc(p->ctx, fd);
}

int policy_export_bpf(const struct policy *p, int fd)
{
	size_t n = p->bpf.len * sizeof(struct sock_filter);
	const char *b = (const char *)p->bpf.filter;

	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		b += w;
		n -= (size_t)w;
	}
	return 0;
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

/* Do a row's tests hold for these arguments? */
static int policy_row_holds(const struct policy_rule *r, const uint64_t args[6])
{
	for (unsigned int i = 0; i < r->n_when; i++) {
		const struct policy_arg_test *t = &r->when[i];
		uint64_t a = t->argno <= 5 ? args[t->argno] : 0;
		int ok = t->op == POLICY_LE   ? a <= t->value
		         : t->op == POLICY_GT ? a > t->value
		                              : (a & t->mask) == t->value;
		if (t->argno > 5 || !ok)
			return 0;
	}
	return 1;
}

/* Look a syscall up in rows; 1 with the action when a row decides it. */
static int policy_rows_decide(const struct policy_rule *rows, size_t n, int nr,
                              const uint64_t args[6], enum policy_action *action, int *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *r = &rows[i];
		if (r->action == POLICY_KILL || seccomp_syscall_resolve_name(r->name) != nr ||
		    !policy_row_holds(r, args))
			continue;
		*action = r->action == POLICY_ERRNO ? POLICY_ERRNO : POLICY_ALLOW;
		*err = r->action == POLICY_ERRNO ? r->err : 0;
		return 1;
	}
	return 0;
}

enum policy_action policy_check(unsigned int audit_arch, long nr, const uint64_t args[6], int *err)
{
	enum policy_action a = POLICY_KILL;

	*err = 0;
	if (audit_arch != AUDIT_ARCH_X86_64 || nr < 0 || nr > INT32_MAX ||
	    (nr & POLICY_X32_SYSCALL_BIT) != 0)
		return POLICY_KILL;
	if (policy_rows_decide(policy_table, policy_table_len, (int)nr, args, &a, err) ||
	    policy_rows_decide(policy_session_table, policy_session_table_len, (int)nr, args, &a,
	                       err))
		return a;
	return POLICY_KILL;
}
