/* trace.c - the supervisor as the tracer of every worker process. A fresh worker is seized
 * with exit, fork and clone events and EXITKILL: each process and thread born from it is
 * traced from its first instruction, and every one dies with the supervisor. A stop is
 * handled and the task goes on: a new process is shown to its chain (which kills one it did
 * not ask for), an exit stop records which thread's system call the filter killed (and the
 * CPU time of a process killed outright), a signal reaches its task unless it is SIGCHLD,
 * which no worker uses (held back, it can run no handler). Functions return 0 or -errno. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>

#include "engine_internal.h"

#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif

int trace_seize(pid_t pid)
{
	long opts =
	    PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACECLONE;

	return ptrace(PTRACE_SEIZE, pid, 0, opts) == 0 ? 0 : -errno;
}

/* The spare fd: its own open file, so closing it frees a slot of the system's table too. */
static int spare = -1;

int proc_spare_open(void)
{
	if (spare < 0)
		spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return spare < 0 ? -errno : 0;
}

void proc_spare_close(void)
{
	if (spare >= 0)
		close(spare);
	spare = -1;
}

/* open(2), and when the supervisor is out of fds, once more in the spare's place (a park
 * misjudged for want of an fd would end its process); spared_done retakes the spare. */
static int open_spared(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && spare >= 0) {
		proc_spare_close();
		fd = open(path, flags);
	}
	return fd;
}

static void spared_done(void)
{
	int err = errno;

	if (spare < 0)
		(void)proc_spare_open();
	errno = err;
}

/* Read a small /proc file of a task into buf (NUL-terminated). Returns bytes or -errno. */
static ssize_t proc_read(pid_t tid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, file);
	fd = open_spared(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		n = -errno;
		spared_done();
		return n;
	}
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	spared_done();
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static long status_field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

int proc_status(pid_t tid, pid_t *tgid, pid_t *ppid, int *threads)
{
	char buf[2048];
	ssize_t n = proc_read(tid, "status", buf, sizeof(buf));
	long t, p, th;

	if (n < 0)
		return (int)n;
	t = status_field(buf, "\nTgid:");
	p = status_field(buf, "\nPPid:");
	th = status_field(buf, "\nThreads:");
	if (t <= 0 || p < 0 || th <= 0)
		return -EINVAL;
	if (tgid)
		*tgid = (pid_t)t;
	if (ppid)
		*ppid = (pid_t)p;
	if (threads)
		*threads = (int)th;
	return 0;
}

/* A process's thread count without formatting its whole status: the kernel counts a
 * process's threads in the link count of its /proc/PID/task directory (2 + the threads, the
 * same counter status's Threads: line prints). One stat instead of an open, a read of a
 * status the kernel renders in full, and a close: it is asked at every park. Returns the
 * count, or -errno (-ESRCH when the process is gone). */
int proc_threads(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	if (st.st_nlink < 3)
		return -ESRCH;
	return st.st_nlink - 2 > INT32_MAX ? -EOVERFLOW : (int)(st.st_nlink - 2);
}

int proc_cpu_ms(pid_t pid)
{
	char buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long hz = sysconf(_SC_CLK_TCK);

	if (proc_read(pid, "stat", buf, sizeof(buf)) <= 0 || hz <= 0)
		return -1;
	/* The command name may hold spaces and parentheses: fields follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (int)((ut + st) * 1000 / (unsigned long long)hz);
}

void proc_kill(struct proc *p)
{
	if (p->pid <= 0)
		return;
	if (!p->killed)
		(void)kill(p->pid, SIGKILL);
	p->killed = 1;
	p->parked = 0;
}

/* Raising one's own process's score needs no privilege. Where /proc is not writable to the
 * supervisor (it keeps it read-only when it runs as root) that is known after one try. */
void proc_prefer_oom(pid_t pid)
{
	static int refused;
	char path[64];
	int fd;

	if (refused)
		return;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		refused = errno == EACCES || errno == EPERM || errno == EROFS;
		return;
	}
	if (write(fd, ENGINE_RUNNER_OOM_ADJ, strlen(ENGINE_RUNNER_OOM_ADJ)) < 0)
		log_msg(LOG_DEBUG, "oom_score_adj of %d: %s", (int)pid, strerror(errno));
	close(fd);
}

/* Is fd n of the process (its /proc/PID/fd directory: dfd) the socket chan is the supervisor's
 * copy of? Through the link, stat reaches the socket itself: the same socket has the same
 * device and inode, whatever fd holds it. */
static int proc_fd_is(int dfd, const char *name, int chan)
{
	struct stat want, got;

	return chan >= 0 && fstat(chan, &want) == 0 && fstatat(dfd, name, &got, 0) == 0 &&
	       S_ISSOCK(got.st_mode) && got.st_dev == want.st_dev && got.st_ino == want.st_ino;
}

int proc_fds_beyond(pid_t pid, int n, int chan)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int count = 0, fd;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	fd = open_spared(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		spared_done();
		return err;
	}
	dir = fdopendir(fd);
	if (!dir) {
		int err = -errno;
		close(fd);
		spared_done();
		return err;
	}
	while ((d = readdir(dir)) != NULL) {
		char link[16];
		ssize_t len;
		int v;

		if (d->d_name[0] == '.')
			continue;
		v = atoi(d->d_name);
		if (v > n) {
			count++;
			continue;
		}
		if (v == n) {
			/* The channel's number holds the chain's channel: a file moved there (the
			 * filter once let close(0x100000003) close the channel) would pass as it. */
			if (!proc_fd_is(dirfd(dir), d->d_name, chan)) {
				log_msg(
				    LOG_WARN,
				    "process %d: its fd %d is not its channel: a file left open "
				    "there, it is not kept",
				    (int)pid, n);
				count++;
			}
			continue;
		}
		/* Below the channel only /dev/null: the filter once tested an fd with all 64 bits
		 * while the kernel reads 32, so native code closed 0-2 (an fd with its upper half
		 * set) and had a file it was passed land there. */
		len = readlinkat(dirfd(dir), d->d_name, link, sizeof(link));
		if (len != (ssize_t)strlen("/dev/null") ||
		    memcmp(link, "/dev/null", (size_t)len) != 0)
			count++;
	}
	closedir(dir);
	spared_done();
	return count;
}

/* A traced thread is about to exit. When its process dies of the filter's SIGSYS, find the
 * thread whose system call the filter kills: every thread of the process stops here, and the
 * one the policy table refuses is the culprit. */
static void exit_stop(struct engine *e, pid_t tid)
{
	unsigned long msg = 0;
	struct user_regs_struct regs;
	struct {
		uint8_t op;
		uint8_t pad[3];
		uint32_t arch;
		uint64_t rest[16];
	} info;
	struct sysreport r;
	struct proc *p = NULL;
	struct chain *c;
	pid_t tgid = tid;
	int err, status;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) != 0)
		return;
	status = (int)msg;
	/* A process the chain knows is its own thread group; any other task is a thread, whose
	 * process /proc names. */
	c = engine_chain_of(e, tid, &p);
	if (!c || !p) {
		if (proc_status(tid, &tgid, NULL, NULL) < 0 || tgid == tid)
			return;
		c = engine_chain_of(e, tgid, &p);
		if (!c || !p)
			return;
	}
	/* A process let go for a step that ends instead of parking, in any way (an exit of its
	 * own too), used its CPU all the same: its count is read at each of its tasks' exit, the
	 * last read the largest, and chain_on_exit adds it to the step's. */
	if (p->step_cpu0 >= 0) {
		int used = proc_cpu_ms(tgid);
		if (used > p->cpu_ms)
			p->cpu_ms = used;
	}
	if (!WIFSIGNALED(status))
		return;
	/* Its memory is still there: what a dying runner printed is read (the first of its
	 * threads to stop here; a runner killed at the hard deadline was read before). */
	if (p == c->runner)
		chain_salvage(c, tid);
	if (WTERMSIG(status) == SIGKILL && tid == tgid) {
		/* How much CPU it used tells a runner killed at its CPU limit; the verdict of no
		 * other process weighs it. */
		if (p == c->runner)
			p->cpu_ms = proc_cpu_ms(tid);
		return;
	}
	if (WTERMSIG(status) != SIGSYS || p->sys.have || ptrace(PTRACE_GETREGS, tid, 0, &regs) != 0)
		return;
	memset(&r, 0, sizeof(r));
	r.arch = AUDIT_ARCH_X86_64;
	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info) > 0 && info.arch)
		r.arch = info.arch;
	r.nr = (long)regs.orig_rax;
	if (r.arch == AUDIT_ARCH_I386) {
		uint64_t a[6] = {regs.rbx, regs.rcx, regs.rdx, regs.rsi, regs.rdi, regs.rbp};
		memcpy(r.args, a, sizeof(a));
	} else {
		uint64_t a[6] = {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9};
		memcpy(r.args, a, sizeof(a));
	}
	r.tid = tid;
	if (r.nr < 0 || policy_check(r.arch, r.nr, r.args, &err) != POLICY_KILL)
		return; /* this thread was only taken down with the process */
	r.have = 1;
	p->sys = r;
}

/* A signal-delivery stop of task tid, counted against its process's ENGINE_SIGNALS_MAX. */
static void signal_stop(struct engine *e, pid_t tid)
{
	struct proc *p = NULL;
	struct chain *c = engine_chain_of(e, tid, &p);
	pid_t tgid = 0;

	if (!c && proc_status(tid, &tgid, NULL, NULL) == 0)
		c = engine_chain_of(e, tgid, &p);
	if (c && p && ++p->signals == ENGINE_SIGNALS_MAX + 1)
		chain_signal_storm(c, p);
}

void trace_stop(struct engine *e, pid_t pid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16, inject = 0;
	unsigned long child = 0;

	switch (event) {
	case PTRACE_EVENT_STOP: {
		/* A task's first stop (auto-attached at its birth), or a group stop. A new
		 * process is its chain's to accept; a new thread just goes on. */
		pid_t tgid = 0, ppid = 0;
		struct proc *known = NULL;
		if (!engine_chain_of(e, pid, &known) && proc_status(pid, &tgid, &ppid, NULL) == 0 &&
		    tgid == pid) {
			struct chain *c = engine_chain_of(e, ppid, NULL);
			if (!c || !chain_on_birth(c, pid, ppid)) {
				log_msg(LOG_WARN,
				        "process %d appeared without being asked for; killing it",
				        (int)pid);
				(void)kill(pid, SIGKILL);
			}
		}
		break;
	}
	case PTRACE_EVENT_FORK:
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &child) == 0) {
			struct chain *c = engine_chain_of(e, pid, NULL);
			if (!c || !chain_on_birth(c, (pid_t)child, pid)) {
				log_msg(LOG_WARN,
				        "process %d appeared without being asked for; killing it",
				        (int)child);
				(void)kill((pid_t)child, SIGKILL);
			}
		}
		break;
	case PTRACE_EVENT_EXIT:
		exit_stop(e, pid);
		break;
	case 0:
		/* A signal on its way to the task: deliver it, but for SIGCHLD. */
		inject = sig == SIGCHLD ? 0 : sig;
		if (sig != SIGCHLD && sig != SIGPROF)
			signal_stop(e, pid);
		break;
	default:
		break;
	}
	(void)ptrace(PTRACE_CONT, pid, 0, (void *)(long)inject);
}
