/* self.c - the supervisor's own seccomp policy: what its event loop, the tracer, the fork-gate
 * answers, the module and workspace broker and the cgroup code need once start-up is done,
 * and nothing else; and the smaller one of `safepy connect`'s relay. A bug in the supervisor's
 * JSON handling then cannot run a program, start a process, open a socket or change the
 * filters: the zygote is started by a process forked before the filter (supervisor/starter.c).
 * Which files it may open is Landlock's to say (supervisor/confine.c). x86_64 only. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>

#include "policy_rows.h"

/* The table reads best as one row a line. */
/* clang-format off */
/* Default action: SIGSYS, which the supervisor answers with EPERM and a log line naming the
 * number (a trap, not a kill: a call the table forgot must not take every client's session
 * with it). */
const struct policy_rule policy_self_table[] = {
	/* I/O on the fds it holds: stdio, channels, gate listeners, broker files, cgroup files. */
	ALLOW("read", "requests, frames, /proc and cgroup files, module sources"),
	ALLOW("write", "responses, log lines, cgroup limits, workspace copies"),
	ALLOW("readv", "libc's buffered reads"),
	ALLOW("writev", "libc's buffered writes"),
	ALLOW("pread64", "module sources at an offset"),
	ALLOW("lseek", "file offsets"),
	ALLOW("close", "every fd it opened"),
	ALLOW("close_range", "closing a worker's fds at once"),
	ALLOW_IF("fcntl", ARG_EQ(1, F_GETFD), "close-on-exec checks"),
	ALLOW_IF("fcntl", ARG_EQ(1, F_SETFD), "close-on-exec on received fds"),
	ALLOW_IF("fcntl", ARG_EQ(1, F_GETFL), "non-blocking channels"),
	ALLOW_IF("fcntl", ARG_EQ(1, F_SETFL), "non-blocking channels"),
	ALLOW_IF("fcntl", ARG_EQ(1, F_DUPFD_CLOEXEC), "a second handle on an fd it holds"),

	/* Files: Landlock decides which (the system's files read-only, the delegated cgroup and
	 * the workspace writable). */
	ALLOW("openat", "/proc of its workers, cgroup files, module sources"),
	ALLOW("openat2", "workspace files, resolved beneath the workspace"),
	ALLOW("newfstatat", "stat of module sources, workspace files, a worker's /proc/<pid>/task"),
	ALLOW("fstat", "stat of an open file"),
	ALLOW("fstatfs", "the file system of a workspace file: the kernel's own (procfs, sysfs) are refused"),
	ALLOW("statx", "libc's newer stat path"),
	ALLOW("faccessat2", "may a workspace file be replaced: the server could write it itself"),
	ALLOW("faccessat", "the same, where the kernel has no faccessat2"),
	ALLOW("getdents64", "/proc/<pid>/task and fd directories, workspace listings"),
	ALLOW("readlink", "resolving module roots"),
	ALLOW("readlinkat", "resolving module roots"),
	ALLOW("getcwd", "resolving relative paths"),
	ALLOW("mkdirat", "a worker's cgroup; a directory a call makes in the workspace"),
	ALLOW("unlinkat", "a finished worker's cgroup; a dropped workspace copy or directory"),
	ALLOW("renameat", "a committed workspace copy moved into place (libc's call without flags)"),
	ALLOW("renameat2", "a committed workspace copy moved into place, never replacing for 'x'"),
	ALLOW("linkat", "a renamed workspace file's second name, until its call commits"),
	ALLOW("fchmod", "a workspace copy takes the mode of the file it replaces, or the call's chmod"),
	ALLOW_IF("utimensat", ARG_EQ(1, 0), "the times a call sets on its workspace copy (futimens: an fd, no path)"),
	ALLOW("fchown", "a workspace copy takes the owner of the file it replaces (as root)"),
	ALLOW("setfsuid", "as root, a workspace's requests run as its owner meets the files"),
	ALLOW("setfsgid", "the same, with the owner's group"),
	ALLOW("setgroups", "the same, with the owner's groups, and back"),
	ALLOW("capget", "as root, serving a workspace root owns: the capabilities in effect before a request"),
	ALLOW("capset", "the same: those that pass file permissions out of effect for the request, and back (never beyond the permitted set)"),
	ALLOW("copy_file_range", "a workspace file opened to append starts as a copy of it"),
	ALLOW("sync_file_range", "a large workspace copy's pieces start to be written as they are made, not all at once when it is moved into place"),
	ALLOW("ftruncate", "workspace files"),
	ALLOW("flock", "servers sharing a workspace commit one at a time"),
	ALLOW("fsync", "a committed workspace file"),
	ALLOW("fdatasync", "a committed workspace file"),

	/* The event loop. */
	ALLOW("epoll_wait", "the loop"),
	ALLOW("epoll_pwait", "the loop"),
	ALLOW("epoll_ctl", "watching channels and listeners"),
	ALLOW("poll", "waiting for the zygote starter's answer"),
	ALLOW("ppoll", "waiting for the zygote starter's answer"),
	ALLOW("rt_sigprocmask", "signals arrive by signalfd"),
	ALLOW("rt_sigaction", "the SIGSYS answer to this filter"),
	ALLOW("rt_sigreturn", "returning from that answer"),
	ALLOW("restart_syscall", "a wait interrupted by a signal"),
	ALLOW("clock_gettime", "deadlines and timestamps"),
	ALLOW("gettimeofday", "log timestamps"),
	ALLOW("clock_nanosleep", "short waits at shutdown"),
	ALLOW("nanosleep", "short waits at shutdown"),

	/* Channels to the workers and the zygote: socket pairs only. */
	ALLOW_IF("socketpair", ARG_EQ(0, AF_UNIX), "a new worker's channel"),
	ALLOW("sendmsg", "frames with fds and credentials"),
	ALLOW("recvmsg", "frames with fds and credentials"),
	ALLOW("sendto", "frames"),
	ALLOW("recvfrom", "frames"),
	ALLOW("shutdown", "closing a channel one way"),
	ALLOW_IF("setsockopt", ARG_EQ(1, SOL_SOCKET), "SO_PASSCRED on a channel"),
	ALLOW_IF("getsockopt", ARG_EQ(1, SOL_SOCKET), "socket errors and credentials"),

	/* Its processes: the zygote, the workers it traces, the zygote starter. Landlock keeps
	 * signals and ptrace to processes of its own domain where the kernel can. */
	ALLOW("wait4", "reaping"),
	ALLOW("waitid", "reaping"),
	ALLOW("kill", "ending a worker or the zygote"),
	ALLOW("tgkill", "ending a worker's thread"),
	/* Tracing its workers (exits, forks, the syscall a filter killed): the requests that read,
	 * none that writes a tracee's memory or registers. */
	ALLOW_IF("ptrace", ARG_EQ(0, PTRACE_SEIZE), "tracing a new worker"),
	ALLOW_IF("ptrace", ARG_EQ(0, PTRACE_CONT), "letting a stopped worker go on"),
	ALLOW_IF("ptrace", ARG_EQ(0, PTRACE_GETEVENTMSG), "a fork's new pid, an exit's status"),
	ALLOW_IF("ptrace", ARG_EQ(0, PTRACE_GETREGS), "the syscall a filter killed (older kernels)"),
	ALLOW_IF("ptrace", ARG_EQ(0, PTRACE_GET_SYSCALL_INFO), "the syscall a filter killed"),
	ALLOW("process_vm_readv", "what a runner printed, read when it cannot send it (killed at the hard deadline, dying): Landlock keeps it to its own processes"),
	ALLOW("pidfd_open", "a handle on a worker"),
	ALLOW("pidfd_send_signal", "ending a worker by its handle"),
	ALLOW_IF("ioctl", ARG_EQ(1, SECCOMP_IOCTL_NOTIF_RECV), "the fork gate: a park"),
	ALLOW_IF("ioctl", ARG_EQ(1, SIOCOUTQ), "a channel's unread replies, before a call is kept"),
	ALLOW_IF("ioctl", ARG_EQ(1, SECCOMP_IOCTL_NOTIF_SEND), "the fork gate: an answer"),
	ALLOW_IF("ioctl", ARG_EQ(1, SECCOMP_IOCTL_NOTIF_ID_VALID), "the fork gate: is it still waiting"),
	ALLOW_IF("ioctl", ARG_EQ(1, TCGETS), "isatty: the C library asks it of stdout before its first write (safepy run > file)"),
	ALLOW_IF("seccomp", ARG_EQ(0, SECCOMP_GET_NOTIF_SIZES), "the fork gate's message sizes"),
	ALLOW("getrusage", "CPU time of reaped processes"),

	/* Memory, never executable: no new code can be mapped. */
	ALLOW("brk", "malloc"),
	ALLOW_IF("mmap", ARG_CLEAR(2, PROT_EXEC), "malloc, big buffers"),
	ALLOW_IF("mprotect", ARG_CLEAR(2, PROT_EXEC), "malloc arenas"),
	ALLOW("munmap", "freeing"),
	ALLOW("mremap", "growing buffers"),
	ALLOW("madvise", "malloc trimming"),

	/* Calls that cannot harm. */
	ALLOW("futex", "libc locks"),
	ALLOW("getrandom", "hash seeds"),
	ALLOW("getpid", "its own pid"),
	ALLOW("gettid", "its own tid"),
	ALLOW("getppid", "its parent"),
	ALLOW("getuid", "identity"),
	ALLOW("geteuid", "identity"),
	ALLOW("getgid", "identity"),
	ALLOW("getegid", "identity"),
	ALLOW("sched_yield", "lock back-off"),
	ALLOW_IF("prlimit64", ARG_EQ(2, 0), "reading limits; never setting one"),
	ALLOW("exit", "the end"),
	ALLOW("exit_group", "the end"),

	/* Refused, listed to document them. */
	KILL("execve", "runs another program: the zygote starter does that, and only that"),
	KILL("execveat", "runs another program"),
	/* Failed at once rather than trapped: libc makes these with every signal blocked, and a
	 * trap that cannot be delivered kills. */
	ERRNO("fork", EPERM, "creates a process"),
	ERRNO("vfork", EPERM, "creates a process"),
	ERRNO("clone", EPERM, "creates a process or a thread: it has no use for either"),
	ERRNO("clone3", EPERM, "creates a process or a thread"),
	KILL("socket", "network: its only sockets are socket pairs"),
	KILL("connect", "network"),
	KILL("bind", "network"),
	KILL("listen", "network"),
	KILL("accept4", "network"),
	KILL("process_vm_writev", "writes another process's memory"),
	KILL("memfd_create", "staging for fileless exec"),
	KILL("pkey_mprotect", "mprotect without the PROT_EXEC check"),
	KILL("prctl", "process state: dumpable, no_new_privs, names"),
	KILL("setrlimit", "raising its own limits"),
	KILL("unshare", "new namespaces"),
	KILL("setns", "enters another namespace"),
	KILL("mount", "filesystem namespace changes"),
	KILL("bpf", "kernel attack surface"),
	KILL("io_uring_setup", "io_uring operations bypass seccomp"),
	KILL("userfaultfd", "a classic kernel-exploit primitive"),
	KILL("perf_event_open", "kernel attack surface"),
	KILL("keyctl", "the user's keyring"),
	KILL("landlock_restrict_self", "its rules are set once"),
};

/* `safepy connect` relays bytes between stdio and one connected socket. */
const struct policy_rule policy_relay_table[] = {
	ALLOW("read", "stdin and the socket"),
	ALLOW("write", "stdout, the socket, error lines"),
	ALLOW("poll", "waiting for either side"),
	ALLOW("ppoll", "waiting for either side"),
	ALLOW("shutdown", "half-closing the socket at stdin's end"),
	ALLOW("close", "the end"),
	ALLOW("rt_sigreturn", "returning from the SIGSYS answer"),
	ALLOW("restart_syscall", "a wait interrupted by a signal"),
	ALLOW("brk", "malloc"),
	ALLOW_IF("mmap", ARG_CLEAR(2, PROT_EXEC), "malloc"),
	ALLOW("munmap", "free"),
	ALLOW("futex", "libc locks"),
	ALLOW("exit", "the end"),
	ALLOW("exit_group", "the end"),
};
/* clang-format on */

const size_t policy_self_table_len = sizeof(policy_self_table) / sizeof(policy_self_table[0]);
const size_t policy_relay_table_len = sizeof(policy_relay_table) / sizeof(policy_relay_table[0]);

int policy_build_self(struct policy **out)
{
	return policy_build_rows(policy_self_table, policy_self_table_len, NULL, 0, 0,
	                         SCMP_ACT_TRAP, out);
}

int policy_build_relay(struct policy **out)
{
	return policy_build_rows(policy_relay_table, policy_relay_table_len, NULL, 0, 0,
	                         SCMP_ACT_TRAP, out);
}
