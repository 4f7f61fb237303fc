/* test_sandbox.c - the kernel layer holds when the Python layer is bypassed: native code in a
 * real worker sandbox (a forked child that calls sandbox_enter with the filters the zygote
 * gives every worker: the fork gate, then the session policy) tries each forbidden thing with
 * raw syscalls. Every test asserts the denial (SIGSYS, the policy's errno, or the supervisor's
 * EPERM for a fork) and the absence of the effect. The filters are only ever loaded in forked
 * children; after them a worker talks only through fd 3 and its exit. The test plays the
 * supervisor: it takes the gate's listener from the channel and refuses every fork it did not
 * ask for, as the supervisor does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <json-c/json.h>
#include <seccomp.h>

#include "protocol.h"
#include "worker.h"

/* Temp dirs made by a test, removed after it even when an assertion ended it early. */
#define MAX_TMPDIRS 4
static char tmpdirs[MAX_TMPDIRS][PATH_MAX];
static int ntmpdirs;

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void tmpdirs_remove(void)
{
	for (int i = 0; i < ntmpdirs; i++)
		nftw(tmpdirs[i], rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	ntmpdirs = 0;
}

TestSuite(sandbox, .timeout = 20, .fini = tmpdirs_remove);

#define SANDBOX_TEST_UID 65534
#define SANDBOX_TEST_GID 65534
#define WAIT_MS          10000
#define CHANNEL_MS       5000
#define SECRET           "safepy-test-secret-3f9c1a"
#define I386_NR_MKDIR    39
#define I386_NR_GETPID   20
#define X32_SYSCALL_BIT  0x40000000L
#define GLIBC_FORK_FLAGS 0x1200011L /* CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD */

/* ---- Raw syscalls: no libc wrapper between the attack and the kernel ------------------- */

#if defined(__x86_64__)
static inline __attribute__((always_inline)) long raw6(long nr, long a1, long a2, long a3, long a4,
                                                       long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
	return ret;
}

/* The i386 entry point from 64-bit code; pointers must be below 4 GiB. */
static inline __attribute__((always_inline)) long raw_int80(long nr, long a1, long a2)
{
	long ret;

	__asm__ volatile("int $0x80"
	                 : "=a"(ret)
	                 : "a"(nr), "b"(a1), "c"(a2)
	                 : "r8", "r9", "r10", "r11", "memory");
	return ret;
}
#else
#error "the sandbox tests are written for x86_64"
#endif

#define raw0(nr)                raw6((nr), 0, 0, 0, 0, 0, 0)
#define raw1(nr, a)             raw6((nr), (long)(a), 0, 0, 0, 0, 0)
#define raw2(nr, a, b)          raw6((nr), (long)(a), (long)(b), 0, 0, 0, 0)
#define raw3(nr, a, b, c)       raw6((nr), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define raw4(nr, a, b, c, d)    raw6((nr), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define raw5(nr, a, b, c, d, e) raw6((nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

/* ---- Inside the worker: only memory, read(3), write(3) and _exit ----------------------- */

/* The report of the sandbox_enter call of this process (valid in the worker only). */
static struct sandbox_report worker_report;

static void chan_write(const char *s, size_t len)
{
	while (len > 0) {
		long n = raw3(SYS_write, POLICY_FD_CHANNEL, s, len);

		if (n <= 0)
			_exit(3);
		s += n;
		len -= (size_t)n;
	}
}

static void say(const char *s)
{
	chan_write(s, strlen(s));
}

/* "name=<raw return>\n": a negative value is -errno. */
static void say_ret(const char *name, long ret)
{
	char buf[96];
	int n = snprintf(buf, sizeof(buf), "%s=%ld\n", name, ret);

	chan_write(buf, (size_t)n);
}

/* Block until the test writes a byte (or closes its end). */
static void await_test(void)
{
	char c;

	(void)raw3(SYS_read, POLICY_FD_CHANNEL, &c, 1);
}

/* ---- In the test runner ------------------------------------------------------------------ */

struct worker {
	pid_t pid;
	int chan;     /* the test's end of the worker's channel */
	int listener; /* the fork gate's listener, which the test holds as the supervisor does; -1
	               * when the worker ended before sending it, or once it hung up */
	int refused;  /* the forks the test refused with EPERM */
};

struct spawn_opts {
	const struct sandbox_config *cfg; /* NULL: default_config() */
	int channel_at;                   /* move the channel to this fd first; -1: leave it */
	pid_t parent;                     /* passed to sandbox_enter; 0: the real parent */
	void (*pre)(void *);              /* runs in the child before sandbox_enter */
	void *pre_arg;
};

static struct policy *test_gate, *test_session_policy, *test_nothreads_policy;

/* The filters every worker of the zygote loads, in its order: the fork gate, then the session
 * policy (or, for a worker whose tasks nothing bounds, the one without threads). Built once,
 * before any fork, as the zygote does. Where libseccomp or the kernel has
 * no user notification no worker can run at all (the zygote refuses to start): skip. */
static void filters_build(void)
{
	int rc;

	if (!test_gate) {
		rc = policy_gate_build(&test_gate);
		if (rc == -EOPNOTSUPP)
			cr_skip_test("no seccomp user notification here (libseccomp API level %u): "
			             "no worker can have the fork gate",
			             seccomp_api_get());
		cr_assert_eq(rc, 0, "policy_gate_build: %s", strerror(-rc));
	}
	if (!test_session_policy) {
		rc = policy_build_session(&test_session_policy);
		cr_assert_eq(rc, 0, "policy_build_session: %s", strerror(-rc));
	}
	if (!test_nothreads_policy) {
		rc = policy_build_session_nothreads(&test_nothreads_policy);
		cr_assert_eq(rc, 0, "policy_build_session_nothreads: %s", strerror(-rc));
	}
}

static struct sandbox_config default_config(void)
{
	struct sandbox_config cfg = {
	    .memory_bytes = 512ULL << 20,
	    .cpu_s = 10,
	    .uid = SANDBOX_TEST_UID,
	    .gid = SANDBOX_TEST_GID,
	    .try_namespaces = 1,
	    .try_landlock = 1,
	};

	filters_build();
	cfg.gate = test_gate;
	cfg.policy = test_session_policy;
	cfg.policy_nothreads = test_nothreads_policy;
	return cfg;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first thing on a worker's channel, which the supervisor takes as it comes: one
 * IPC_FRAME_LISTENER frame (a header, no payload) with the gate's listener attached.
 * *listener is that fd (O_CLOEXEC here), or -1 when the channel closed first (the worker
 * ended before its gate). No Criterion assertion. Returns 0, -ETIMEDOUT or -EPROTO. */
static int take_listener(int chan, int *listener)
{
	unsigned char frame[IPC_FRAME_HEADER] = {0};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	uint32_t len = 1;
	char type = 0;
	struct iovec iov = {.iov_base = frame, .iov_len = sizeof(frame)};
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = control.buf,
	                     .msg_controllen = sizeof(control.buf)};
	struct pollfd p = {.fd = chan, .events = POLLIN};
	struct cmsghdr *cmsg;
	ssize_t n;
	int fd = -1;

	*listener = -1;
	if (poll(&p, 1, CHANNEL_MS) != 1)
		return -ETIMEDOUT;
	n = recvmsg(chan, &msg, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (cmsg && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
	    cmsg->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	if (n != (ssize_t)sizeof(frame) || ipc_frame_header_get(frame, &type, &len) < 0 ||
	    len != 0 || type != IPC_FRAME_LISTENER || (msg.msg_flags & MSG_CTRUNC) || fd < 0) {
		if (fd >= 0)
			close(fd);
		return -EPROTO;
	}
	*listener = fd;
	return 0;
}

/* Fork a worker that enters the sandbox and runs body(arg), then exits 0, and take the
 * listener of its fork gate as the supervisor does. No Criterion assertion here: a middle
 * process (not the test) may call it. Returns 0 or -errno. */
static int spawn_worker_opts(const struct spawn_opts *o, void (*body)(void *), void *arg,
                             struct worker *w)
{
	struct sandbox_config def;
	const struct sandbox_config *cfg = o->cfg;
	pid_t parent = getpid();
	int sv[2];

	if (!cfg) {
		def = default_config();
		cfg = &def;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	w->pid = fork();
	if (w->pid < 0) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		return -err;
	}
	if (w->pid == 0) {
		int chan = sv[1];

		if (o->channel_at >= 0) {
			if (dup2(sv[1], o->channel_at) != o->channel_at)
				_exit(120);
			chan = o->channel_at;
		}
		if (o->pre)
			o->pre(o->pre_arg);
		sandbox_enter(cfg, chan, o->parent ? o->parent : parent, &worker_report);
		body(arg);
		_exit(0);
	}
	close(sv[1]);
	w->chan = sv[0];
	w->listener = -1;
	w->refused = 0;
	return cfg->gate ? take_listener(w->chan, &w->listener) : 0;
}

/* A worker that sent its listener. */
static struct worker spawn_worker_cfg(const struct sandbox_config *cfg, void (*body)(void *),
                                      void *arg)
{
	struct spawn_opts o = {.cfg = cfg, .channel_at = -1};
	struct worker w;
	int rc = spawn_worker_opts(&o, body, arg, &w);

	cr_assert_eq(rc, 0, "spawn failed: %s", strerror(-rc));
	cr_assert_geq(w.listener, 0, "the worker ended before it sent its listener");
	return w;
}

static struct worker spawn_worker(void (*body)(void *), void *arg)
{
	return spawn_worker_cfg(NULL, body, arg);
}

static void worker_close(struct worker *w)
{
	if (w->listener >= 0)
		close(w->listener);
	w->listener = -1;
	close(w->chan);
}

/* Wait for the next question on the listener: a fork with glibc's exact flags (the main
 * filter kills every other clone before it can ask). The caller answers with gate_respond. */
static struct seccomp_notif *gate_receive(int listener)
{
	struct seccomp_notif *req = NULL;
	struct pollfd p = {.fd = listener, .events = POLLIN};
	int rc;

	rc = seccomp_notify_alloc(&req, NULL);
	cr_assert_eq(rc, 0, "seccomp_notify_alloc: %s", strerror(-rc));
	cr_assert_eq(poll(&p, 1, CHANNEL_MS), 1, "no fork reached the listener");
	cr_assert(p.revents & POLLIN, "listener revents %#x", p.revents);
	rc = seccomp_notify_receive(listener, req);
	cr_assert_eq(rc, 0, "seccomp_notify_receive: %s", strerror(-rc));
	cr_assert_eq(req->data.arch, AUDIT_ARCH_X86_64);
	cr_assert_eq(req->data.nr, SYS_clone, "syscall %d asked", req->data.nr);
	cr_assert_eq(req->data.args[0], (uint64_t)GLIBC_FORK_FLAGS, "clone flags %#llx",
	             (unsigned long long)req->data.args[0]);
	return req;
}

/* error 0: the fork happens (SECCOMP_USER_NOTIF_FLAG_CONTINUE); else it fails with -error. */
static void gate_respond(int listener, struct seccomp_notif *req, int error)
{
	struct seccomp_notif_resp *resp = NULL;
	int rc;

	rc = seccomp_notify_alloc(NULL, &resp);
	cr_assert_eq(rc, 0, "seccomp_notify_alloc: %s", strerror(-rc));
	cr_assert_eq(seccomp_notify_id_valid(listener, req->id), 0, "the asker is gone");
	resp->id = req->id;
	resp->val = 0;
	resp->error = error;
	resp->flags = error == 0 ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	rc = seccomp_notify_respond(listener, resp);
	cr_assert_eq(rc, 0, "seccomp_notify_respond: %s", strerror(-rc));
	seccomp_notify_free(req, resp);
}

/* Answer the next question, which must come from pid. */
static void gate_answer(int listener, pid_t pid, int error)
{
	struct seccomp_notif *req = gate_receive(listener);

	cr_assert_eq((pid_t)req->pid, pid, "asked by %d, expected %d", (int)req->pid, (int)pid);
	gate_respond(listener, req, error);
}

/* POLLIN is a question; POLLHUP alone says only that every gated process has ended. */
static void expect_no_question(const struct worker *w)
{
	struct pollfd p = {.fd = w->listener, .events = POLLIN};

	cr_assert(poll(&p, 1, 0) >= 0 && (p.revents & POLLIN) == 0,
	          "a question is waiting on the listener (revents %#x)", p.revents);
}

/* What the supervisor does with the listener while it waits for something else: refuse each
 * fork it did not ask for with EPERM, and close the listener once it hangs up (every gated
 * process has ended). p is the listener's pollfd after a poll. */
static void gate_serve(struct worker *w, const struct pollfd *p)
{
	if (p->revents & POLLIN) {
		gate_respond(w->listener, gate_receive(w->listener), -EPERM);
		w->refused++;
	} else if (p->revents & (POLLHUP | POLLERR)) {
		close(w->listener);
		w->listener = -1;
	}
}

/* Wait up to ms for the worker's channel to be readable (or at its end), serving the gate
 * meanwhile. 1 when readable, 0 on timeout. */
static int worker_await(struct worker *w, int ms)
{
	int64_t end = now_ms() + ms;

	for (;;) {
		struct pollfd p[2] = {{.fd = w->chan, .events = POLLIN},
		                      {.fd = w->listener, .events = POLLIN}};
		int64_t left = end - now_ms();
		int n;

		if (left < 0)
			return 0;
		n = poll(p, 2, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		cr_assert_geq(n, 0, "poll: %s", strerror(errno));
		if (n == 0)
			return 0;
		if (w->listener >= 0)
			gate_serve(w, &p[1]);
		if (p[0].revents)
			return 1;
	}
}

/* What the worker sends until EOF, a pause of CHANNEL_MS or a full buffer; NUL-terminated.
 * Returns the length. */
static size_t worker_read_all(struct worker *w, char *buf, size_t cap)
{
	size_t len = 0;

	while (len + 1 < cap && worker_await(w, CHANNEL_MS)) {
		ssize_t got = read(w->chan, buf + len, cap - 1 - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	buf[len] = '\0';
	return len;
}

/* One line the worker sends (up to '\n'); NUL-terminated, 0 on timeout or EOF. */
static size_t worker_read_line(struct worker *w, char *buf, size_t cap)
{
	size_t len = 0;

	while (len + 1 < cap) {
		if (!worker_await(w, CHANNEL_MS) || read(w->chan, buf + len, 1) != 1)
			break;
		if (buf[len++] == '\n')
			break;
	}
	buf[len] = '\0';
	return len;
}

/* Read exactly one line's worth of bytes (up to '\n'); NUL-terminated, 0 on timeout/EOF. For a
 * middle process: no Criterion assertion, no gate served. */
static size_t chan_read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t len = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (len + 1 < cap) {
		if (poll(&p, 1, timeout_ms) <= 0 || read(fd, buf + len, 1) != 1)
			break;
		if (buf[len++] == '\n')
			break;
	}
	buf[len] = '\0';
	return len;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The wait status of pid, or -1 if it did not end within ms (it is then killed). */
static int wait_status_ms(pid_t pid, long ms)
{
	int status;

	for (long waited = 0;; waited++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (waited >= ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		sleep_ms(1);
	}
}

/* The wait status of a process that is not a worker. */
static int wait_status(pid_t pid)
{
	int status = wait_status_ms(pid, WAIT_MS);

	cr_assert_neq(status, -1, "process %d did not end", (int)pid);
	return status;
}

/* The worker's wait status, serving its gate until it ends. */
static int worker_wait(struct worker *w)
{
	int status;

	for (int64_t end = now_ms() + WAIT_MS;;) {
		struct pollfd p = {.fd = w->listener, .events = POLLIN};
		pid_t r = waitpid(w->pid, &status, WNOHANG);

		if (r == w->pid)
			return status;
		cr_assert(r == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
		if (now_ms() > end) {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, &status, 0);
			cr_assert_fail("worker %d did not end", (int)w->pid);
		}
		if (poll(&p, 1, 1) > 0 && w->listener >= 0)
			gate_serve(w, &p);
	}
}

/* Wake a worker blocked in await_test; it may be dead already (no SIGPIPE then). */
static void tell_worker(int chan)
{
	(void)send(chan, "x", 1, MSG_NOSIGNAL);
}

static void assert_sigsys(int status)
{
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "expected SIGSYS, got %s %d",
	          WIFSIGNALED(status) ? "signal" : "exit code",
	          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void assert_exit(int status, int code)
{
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == code,
	          "expected exit %d, got %s %d (%s)", code,
	          WIFSIGNALED(status) ? "signal" : "exit code",
	          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
	          WIFEXITED(status) && ipc_worker_exit_reason(WEXITSTATUS(status))
	              ? ipc_worker_exit_reason(WEXITSTATUS(status))
	              : "-");
}

/* Run body in a worker to its end, as the supervisor would: what it sent (in buf) and its wait
 * status; *refused: how many of its forks were refused. */
static int run_worker(void (*body)(void *), void *arg, char *buf, size_t cap, int *refused)
{
	struct worker w = spawn_worker(body, arg);
	int status;

	worker_read_all(&w, buf, cap);
	status = worker_wait(&w);
	*refused = w.refused;
	worker_close(&w);
	return status;
}

/* Run body in a worker; it must die by SIGSYS having sent nothing at all, and no fork of its
 * reached the gate. */
static void expect_killed(void (*body)(void *), void *arg)
{
	char buf[256];
	int refused, status = run_worker(body, arg, buf, sizeof(buf), &refused);

	assert_sigsys(status);
	cr_assert_str_empty(buf, "the worker went on after the forbidden call: %s", buf);
	cr_assert_eq(refused, 0, "a fork reached the gate before the kill");
}

/* Run body in a worker; it must exit 0 having had forks refused times refused by the
 * supervisor. Returns what it sent (in buf). */
static void expect_completes_refused(void (*body)(void *), void *arg, int refused, char *buf,
                                     size_t cap)
{
	int got, status = run_worker(body, arg, buf, cap, &got);

	assert_exit(status, 0);
	cr_assert_eq(got, refused, "%d fork(s) reached the gate, expected %d", got, refused);
}

/* Run body in a worker; it must exit 0 without asking for a fork. Returns what it sent. */
static void expect_completes(void (*body)(void *), void *arg, char *buf, size_t cap)
{
	expect_completes_refused(body, arg, 0, buf, cap);
}

/* A fresh directory with the given mode, which the sandbox uid could use without the
 * sandbox (so a denial is the sandbox's doing, not the file mode's). Removed by .fini. */
static void tmpdir_make(char *path, size_t cap, mode_t mode)
{
	cr_assert_lt(ntmpdirs, MAX_TMPDIRS);
	cr_assert_lt((size_t)snprintf(path, cap, "/tmp/safepy-sandbox-XXXXXX"), cap);
	cr_assert_not_null(mkdtemp(path), "mkdtemp: %s", strerror(errno));
	snprintf(tmpdirs[ntmpdirs++], PATH_MAX, "%s", path);
	cr_assert_eq(chmod(path, mode), 0);
}

static void path_join(char *out, size_t cap, const char *dir, const char *name)
{
	cr_assert_lt((size_t)snprintf(out, cap, "%s/%s", dir, name), cap);
}

static void write_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

	cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	cr_assert_eq(close(fd), 0);
	cr_assert_eq(chmod(path, mode), 0);
}

static void assert_absent(const char *path)
{
	struct stat st;

	cr_assert(lstat(path, &st) != 0 && errno == ENOENT, "%s exists: the call had an effect",
	          path);
}

/* Drop to the sandbox uid when root: a process the worker could reach without seccomp. */
static void become_sandbox_user(void)
{
	if (geteuid() != 0)
		return;
	if (setgroups(0, NULL) != 0 ||
	    setresgid(SANDBOX_TEST_GID, SANDBOX_TEST_GID, SANDBOX_TEST_GID) != 0 ||
	    setresuid(SANDBOX_TEST_UID, SANDBOX_TEST_UID, SANDBOX_TEST_UID) != 0)
		_exit(121);
}

/* A process that waits to be killed, as the sandbox uid and dumpable: without the sandbox
 * the worker could signal it, trace it and read its memory. */
static pid_t spawn_victim(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		become_sandbox_user();
		/* After the uid switch, which resets both. */
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent)
			_exit(122);
		for (;;)
			pause();
	}
	return pid;
}

static void assert_alive_then_kill(pid_t pid)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "victim %d is gone (status %#x)", (int)pid,
	             status);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* The value of a "Name:\t..." line of /proc/<pid>/status, into out. 0 or -1. */
static int proc_status_field(pid_t pid, const char *name, char *out, size_t cap)
{
	char path[64], line[256];
	size_t nlen = strlen(name);
	int rc = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, nlen) == 0 && line[nlen] == ':') {
			snprintf(out, cap, "%s", line + nlen + 1 + strspn(line + nlen + 1, " \t"));
			out[strcspn(out, "\n")] = '\0';
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* ---- Files ------------------------------------------------------------------------------ */

struct paths {
	char dir[PATH_MAX];
	char file[PATH_MAX];
	char other[PATH_MAX];
};

/* Proof the test means something: the sandbox uid reads the secret without the sandbox. */
static void assert_readable_unsandboxed(const char *path)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char buf[64] = {0};
		int fd;

		become_sandbox_user();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		_exit(fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && strstr(buf, SECRET) ? 0 : 1);
	}
	status = wait_status(pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	          "control: the sandbox uid cannot read %s even without the sandbox", path);
}

static void make_secret(struct paths *p)
{
	tmpdir_make(p->dir, sizeof(p->dir), 0755);
	path_join(p->file, sizeof(p->file), p->dir, "secret.txt");
	write_file(p->file, SECRET "\n", 0644);
	assert_readable_unsandboxed(p->file);
}

/* Send whatever an fd would yield, so a leak shows on the channel. */
static void leak_fd(long fd)
{
	char buf[128];
	long n;

	if (fd < 0)
		return;
	n = raw3(SYS_read, fd, buf, sizeof(buf));
	if (n > 0)
		chan_write(buf, (size_t)n);
}

static void body_open_secret(void *arg)
{
	const struct paths *p = arg;
	long fd;

	fd = raw2(SYS_open, p->file, O_RDONLY);
	say_ret("open", fd);
	leak_fd(fd);
	fd = raw4(SYS_openat, AT_FDCWD, p->file, O_RDONLY, 0);
	say_ret("openat", fd);
	leak_fd(fd);
}

Test(sandbox, open_of_a_readable_secret_gets_eacces_and_no_content)
{
	struct paths p;
	char buf[512];

	make_secret(&p);
	expect_completes(body_open_secret, &p, buf, sizeof(buf));
	cr_expect(strstr(buf, "open=-13\n"), "open: %s", buf);
	cr_expect(strstr(buf, "openat=-13\n"), "openat: %s", buf);
	cr_expect_null(strstr(buf, SECRET), "the secret reached the channel");
}

static void body_create(void *arg)
{
	const struct paths *p = arg;

	say_ret("openat", raw4(SYS_openat, AT_FDCWD, p->file, O_CREAT | O_WRONLY, 0644));
	say_ret("open", raw3(SYS_open, p->other, O_CREAT | O_WRONLY | O_TRUNC, 0644));
}

static void body_create_other(void *arg)
{
	const struct paths *p = arg;

	say_ret("create", raw4(SYS_openat, AT_FDCWD, p->other, O_CREAT | O_WRONLY, 0644));
}

Test(sandbox, openat_creat_in_a_world_writable_dir_is_denied_and_creates_nothing)
{
	struct paths p;
	char buf[256];

	tmpdir_make(p.dir, sizeof(p.dir), 0777);
	path_join(p.file, sizeof(p.file), p.dir, "new-file");
	path_join(p.other, sizeof(p.other), p.dir, "other-file");
	expect_completes(body_create, &p, buf, sizeof(buf));
	cr_expect(strstr(buf, "openat=-13\n"), "openat: %s", buf);
	cr_expect(strstr(buf, "open=-13\n"), "open: %s", buf);
	assert_absent(p.file);
	assert_absent(p.other);
}

static void body_openat2(void *arg)
{
	const struct paths *p = arg;
	struct open_how read_how = {.flags = O_RDONLY};
	struct open_how create_how = {.flags = O_CREAT | O_WRONLY, .mode = 0644};
	long fd;

	fd = raw4(SYS_openat2, AT_FDCWD, p->file, &read_how, sizeof(read_how));
	say_ret("openat2-read", fd);
	leak_fd(fd);
	say_ret("openat2-create",
	        raw4(SYS_openat2, AT_FDCWD, p->other, &create_how, sizeof(create_how)));
}

Test(sandbox, openat2_gets_enosys_and_has_no_effect)
{
	struct paths p;
	char buf[512];

	make_secret(&p);
	cr_assert_eq(chmod(p.dir, 0777), 0);
	path_join(p.other, sizeof(p.other), p.dir, "created-by-openat2");
	expect_completes(body_openat2, &p, buf, sizeof(buf));
	cr_expect(strstr(buf, "openat2-read=-38\n"), "openat2 read: %s", buf);
	cr_expect(strstr(buf, "openat2-create=-38\n"), "openat2 create: %s", buf);
	cr_expect_null(strstr(buf, SECRET), "the secret reached the channel");
	assert_absent(p.other);
}

/* ---- Network ---------------------------------------------------------------------------- */

static void body_socket_inet(void *arg)
{
	(void)arg;
	say_ret("socket", raw3(SYS_socket, AF_INET, SOCK_STREAM, 0));
}

Test(sandbox, socket_af_inet_is_killed)
{
	expect_killed(body_socket_inet, NULL);
}

static void body_socket_unix(void *arg)
{
	(void)arg;
	say_ret("socket", raw3(SYS_socket, AF_UNIX, SOCK_STREAM, 0));
}

Test(sandbox, socket_af_unix_is_killed)
{
	expect_killed(body_socket_unix, NULL);
}

static void body_socketpair(void *arg)
{
	int sv[2];

	(void)arg;

	say_ret("socketpair", raw4(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv));
}

Test(sandbox, socketpair_is_killed)
{
	expect_killed(body_socketpair, NULL);
}

static void body_connect_unix(void *arg)
{
	const struct sockaddr_un *addr = arg;
	long s = raw3(SYS_socket, AF_UNIX, SOCK_STREAM, 0);

	say_ret("socket", s);
	say_ret("connect", raw3(SYS_connect, s, addr, sizeof(*addr)));
	chan_write("hello", 5);
	(void)raw3(SYS_write, s, "hello", 5);
}

Test(sandbox, denies_socket_and_no_connection_is_made)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct pollfd p;
	char dir[PATH_MAX];
	int ls;

	tmpdir_make(dir, sizeof(dir), 0777);
	cr_assert_lt((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/s", dir),
	             sizeof(addr.sun_path));
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	cr_assert_geq(ls, 0);
	cr_assert_eq(bind(ls, (struct sockaddr *)&addr, sizeof(addr)), 0);
	cr_assert_eq(chmod(addr.sun_path, 0777), 0);
	cr_assert_eq(listen(ls, 4), 0);

	expect_killed(body_connect_unix, &addr);
	p = (struct pollfd){.fd = ls, .events = POLLIN};
	cr_assert_eq(poll(&p, 1, 200), 0, "a connection is pending on the listener");
	cr_assert(accept4(ls, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EAGAIN,
	          "a connection was accepted");
	close(ls);
}

/* ---- Exec ------------------------------------------------------------------------------- */

struct exec_case {
	char dir[PATH_MAX];
	char marker[PATH_MAX];
	char script[PATH_MAX];
	char cmd[PATH_MAX + 16];
};

static void body_exec_sh(void *arg)
{
	struct exec_case *e = arg;
	char *const argv[] = {"sh", "-c", e->cmd, NULL};
	char *const envp[] = {NULL};

	say_ret("execve", raw3(SYS_execve, "/bin/sh", argv, envp));
}

Test(sandbox, execve_of_bin_sh_is_killed_and_runs_nothing)
{
	struct exec_case e;

	tmpdir_make(e.dir, sizeof(e.dir), 0777);
	path_join(e.marker, sizeof(e.marker), e.dir, "MARKER");
	snprintf(e.cmd, sizeof(e.cmd), "touch %s", e.marker);
	expect_killed(body_exec_sh, &e);
	sleep_ms(50); /* a shell, had it started, would have touched MARKER by now */
	assert_absent(e.marker);
}

static void body_exec_script(void *arg)
{
	struct exec_case *e = arg;
	char *const argv[] = {e->script, NULL};
	char *const envp[] = {NULL};

	say_ret("execve", raw3(SYS_execve, e->script, argv, envp));
}

Test(sandbox, execve_of_a_shell_script_is_killed_and_runs_nothing)
{
	struct exec_case e;
	char text[PATH_MAX + 32];

	tmpdir_make(e.dir, sizeof(e.dir), 0777);
	path_join(e.marker, sizeof(e.marker), e.dir, "MARKER");
	path_join(e.script, sizeof(e.script), e.dir, "script.sh");
	snprintf(text, sizeof(text), "#!/bin/sh\ntouch %s\n", e.marker);
	write_file(e.script, text, 0755);
	expect_killed(body_exec_script, &e);
	sleep_ms(50);
	assert_absent(e.marker);
}

static void body_execveat(void *arg)
{
	struct exec_case *e = arg;
	char *const argv[] = {"sh", "-c", e->cmd, NULL};
	char *const envp[] = {NULL};

	say_ret("execveat", raw5(SYS_execveat, AT_FDCWD, "/bin/sh", argv, envp, 0));
}

Test(sandbox, execveat_is_killed_and_runs_nothing)
{
	struct exec_case e;

	tmpdir_make(e.dir, sizeof(e.dir), 0777);
	path_join(e.marker, sizeof(e.marker), e.dir, "MARKER");
	snprintf(e.cmd, sizeof(e.cmd), "touch %s", e.marker);
	expect_killed(body_execveat, &e);
	sleep_ms(50);
	assert_absent(e.marker);
}

/* ---- Processes -------------------------------------------------------------------------- */

/* A would-be child announces itself with "C" and leaves; only raw syscalls, so a vfork
 * child would not touch its parent's stack frames. */
#define CHILD_ANNOUNCES(ret)                                                                       \
	do {                                                                                       \
		if ((ret) == 0) {                                                                  \
			raw3(SYS_write, POLICY_FD_CHANNEL, "C", 1);                                \
			raw1(SYS_exit_group, 0);                                                   \
		}                                                                                  \
	} while (0)

static void body_fork(void *arg)
{
	long r = raw0(SYS_fork);

	(void)arg;

	CHILD_ANNOUNCES(r);
	say_ret("fork", r);
}

static void body_vfork(void *arg)
{
	long r = raw0(SYS_vfork);

	(void)arg;

	CHILD_ANNOUNCES(r);
	say_ret("vfork", r);
}

/* A raw clone with the flags *arg. */
static void body_clone(void *arg)
{
	int ctid = 0;
	long r = raw5(SYS_clone, *(const long *)arg, 0, 0, &ctid, 0);

	CHILD_ANNOUNCES(r);
	say_ret("clone", r);
}

static void body_glibc_fork(void *arg)
{
	pid_t pid = fork();

	(void)arg;

	CHILD_ANNOUNCES(pid);
	say_ret("fork", pid);
	say_ret("errno", pid < 0 ? errno : 0);
}

Test(sandbox, fork_is_killed_and_no_child_runs)
{
	expect_killed(body_fork, NULL);
}

Test(sandbox, vfork_is_killed_and_no_child_runs)
{
	expect_killed(body_vfork, NULL);
}

/* The session policy lets a clone with glibc's fork flags reach the gate; the supervisor
 * refuses it, as every fork it did not ask for. */
Test(sandbox, clone_with_glibc_fork_flags_is_refused_with_eperm_and_no_child_runs)
{
	long flags = GLIBC_FORK_FLAGS;
	char buf[64];

	expect_completes_refused(body_clone, &flags, 1, buf, sizeof(buf));
	cr_assert_str_eq(buf, "clone=-1\n", "not refused with EPERM, or a child ran: %s", buf);
}

Test(sandbox, a_glibc_fork_is_refused_with_eperm_and_no_child_runs)
{
	char buf[64];

	expect_completes_refused(body_glibc_fork, NULL, 1, buf, sizeof(buf));
	cr_assert_str_eq(buf, "fork=-1\nerrno=1\n", "not refused with EPERM, or a child ran: %s",
	                 buf);
}

/* Any other flags: the main filter kills the clone before the gate could ask. */
Test(sandbox, clone_with_any_other_flags_is_killed_and_no_child_runs)
{
	static long flags[] = {
	    SIGCHLD,                                      /* a plain fork */
	    CLONE_VFORK | CLONE_VM | SIGCHLD,             /* posix_spawn's */
	    GLIBC_FORK_FLAGS | CLONE_NEWUSER,             /* fork into a new user namespace */
	    GLIBC_FORK_FLAGS | CLONE_PARENT,              /* a sibling, not a child */
	    GLIBC_FORK_FLAGS & ~(long)CLONE_CHILD_SETTID, /* glibc's flags, one bit off */
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		expect_killed(body_clone, &flags[i]);
}

static void body_clone3(void *arg)
{
	struct clone_args ca = {.exit_signal = SIGCHLD};
	long r = raw2(SYS_clone3, &ca, sizeof(ca));

	(void)arg;

	CHILD_ANNOUNCES(r);
	say_ret("clone3", r);
}

Test(sandbox, clone3_gets_enosys_and_no_child_runs)
{
	char buf[128];

	expect_completes(body_clone3, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "clone3=-38\n", "no ENOSYS, or a child ran: %s", buf);
}

/* ---- Signals and tracing ---------------------------------------------------------------- */

static void body_kill_parent_sigterm(void *arg)
{
	(void)arg;
	say_ret("kill", raw2(SYS_kill, raw0(SYS_getppid), SIGTERM));
}

static void body_kill_getppid_sigkill(void *arg)
{
	(void)arg;
	say_ret("kill", raw2(SYS_kill, raw0(SYS_getppid), SIGKILL));
}

/* The worker's parent is the victim: a middle process that spawns the worker, reports its
 * wait status on a pipe, then waits to be killed. Returns the middle's pid. */
static pid_t spawn_via_victim_parent(void (*body)(void *), int *status_out)
{
	int pfd[2], status = -1;
	pid_t test = getpid(), middle;

	filters_build(); /* before the forks, as the zygote does */
	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	middle = fork();
	cr_assert_geq(middle, 0);
	if (middle == 0) {
		struct spawn_opts o = {.channel_at = -1};
		struct worker w;
		int st = -1;

		close(pfd[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != test)
			_exit(123);
		if (spawn_worker_opts(&o, body, NULL, &w) == 0)
			st = wait_status_ms(w.pid, WAIT_MS);
		if (write(pfd[1], &st, sizeof(st)) != (ssize_t)sizeof(st))
			_exit(124);
		for (;;)
			pause();
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &status, sizeof(status)), (ssize_t)sizeof(status),
	             "the middle process did not report");
	close(pfd[0]);
	*status_out = status;
	return middle;
}

Test(sandbox, kill_of_the_parent_with_sigterm_is_killed_and_the_parent_lives)
{
	int status;
	pid_t parent = spawn_via_victim_parent(body_kill_parent_sigterm, &status);

	assert_sigsys(status);
	assert_alive_then_kill(parent);
}

Test(sandbox, kill_of_getppid_with_sigkill_is_killed_and_the_parent_lives)
{
	int status;
	pid_t parent = spawn_via_victim_parent(body_kill_getppid_sigkill, &status);

	assert_sigsys(status);
	assert_alive_then_kill(parent);
}

static void body_kill_victim(void *arg)
{
	say_ret("kill", raw2(SYS_kill, *(pid_t *)arg, SIGKILL));
}

Test(sandbox, kill_of_a_same_uid_sibling_is_killed_and_the_sibling_lives)
{
	pid_t victim = spawn_victim();

	expect_killed(body_kill_victim, &victim);
	assert_alive_then_kill(victim);
}

static void body_tgkill_victim(void *arg)
{
	pid_t v = *(pid_t *)arg;

	say_ret("tgkill", raw3(SYS_tgkill, v, v, SIGKILL));
}

Test(sandbox, tgkill_of_a_same_uid_sibling_is_killed_and_the_sibling_lives)
{
	pid_t victim = spawn_victim();

	expect_killed(body_tgkill_victim, &victim);
	assert_alive_then_kill(victim);
}

static void body_ptrace_attach(void *arg)
{
	say_ret("ptrace", raw4(SYS_ptrace, PTRACE_ATTACH, *(pid_t *)arg, 0, 0));
	/* Stay alive: a tracer that exits detaches, which would hide the attach. */
	await_test();
}

Test(sandbox, ptrace_attach_is_killed_and_nothing_is_traced)
{
	pid_t victim = spawn_victim();
	struct worker w = spawn_worker(body_ptrace_attach, &victim);
	char buf[128], tracer[32];

	worker_read_line(&w, buf, sizeof(buf));
	/* Read while the worker, had it survived, would still hold the trace. */
	cr_assert_eq(proc_status_field(victim, "TracerPid", tracer, sizeof(tracer)), 0);
	cr_expect_str_eq(tracer, "0", "the victim is traced by %s", tracer);
	tell_worker(w.chan);
	assert_sigsys(worker_wait(&w));
	cr_expect_str_empty(buf, "the worker went on after ptrace: %s", buf);
	worker_close(&w);
	assert_alive_then_kill(victim);
}

/* Filled by the test runner after the fork, so the worker's copy never holds it. */
static char runner_secret[64];

static void body_process_vm_readv(void *arg)
{
	char got[sizeof(runner_secret)] = {0};
	struct iovec local = {got, sizeof(got)};
	struct iovec remote = {runner_secret, sizeof(runner_secret)};
	long n;

	(void)arg;

	await_test(); /* the runner has written its secret */
	n = raw6(SYS_process_vm_readv, raw0(SYS_getppid), (long)&local, 1, (long)&remote, 1, 0);
	say_ret("process_vm_readv", n);
	if (n > 0)
		chan_write(got, (size_t)n);
}

Test(sandbox, process_vm_readv_of_the_runner_is_killed_and_reads_nothing)
{
	struct worker w = spawn_worker(body_process_vm_readv, NULL);
	char buf[256];

	snprintf(runner_secret, sizeof(runner_secret), "%s", SECRET);
	cr_assert_eq(write(w.chan, "g", 1), 1);
	worker_read_all(&w, buf, sizeof(buf));
	assert_sigsys(worker_wait(&w));
	cr_assert_null(strstr(buf, SECRET), "the runner's secret reached the worker");
	cr_assert_str_empty(buf, "the worker went on: %s", buf);
	worker_close(&w);
}

/* ---- Kernel attack surface and executable memory ---------------------------------------- */

static void body_io_uring(void *arg)
{
	char params[120] = {0}; /* struct io_uring_params */

	(void)arg;

	say_ret("io_uring_setup", raw2(SYS_io_uring_setup, 4, params));
}

Test(sandbox, io_uring_setup_is_killed)
{
	expect_killed(body_io_uring, NULL);
}

static void body_memfd(void *arg)
{
	(void)arg;
	say_ret("memfd_create", raw2(SYS_memfd_create, "x", 0));
}

Test(sandbox, memfd_create_is_killed)
{
	expect_killed(body_memfd, NULL);
}

static void body_mmap_exec(void *arg)
{
	(void)arg;
	say_ret("mmap",
	        raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}

Test(sandbox, mmap_with_prot_exec_is_killed)
{
	expect_killed(body_mmap_exec, NULL);
}

static void body_mprotect_exec(void *arg)
{
	long p =
	    raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;

	if (p < 0 && p > -4096) {
		say_ret("mmap", p);
		return;
	}
	say_ret("mprotect", raw3(SYS_mprotect, p, 4096, PROT_READ | PROT_EXEC));
}

Test(sandbox, mprotect_adding_prot_exec_is_killed)
{
	expect_killed(body_mprotect_exec, NULL);
}

/* ---- File descriptors ------------------------------------------------------------------- */

static void body_write_fd0(void *arg)
{
	(void)arg;
	say_ret("write0", raw3(SYS_write, 0, "x", 1));
}

static void body_write_fd4(void *arg)
{
	(void)arg;
	say_ret("write4", raw3(SYS_write, 4, "x", 1));
}

Test(sandbox, write_to_fd_0_is_killed)
{
	expect_killed(body_write_fd0, NULL);
}

/* Fds above the channel are workspace files the supervisor passed; a worker has none it was
 * not given (it can make none): a write to one fails with EBADF and reaches nothing. */
Test(sandbox, write_to_an_fd_it_was_not_given_is_ebadf)
{
	char buf[64];

	expect_completes(body_write_fd4, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "write4=-9\n");
}

static void move_to_fd_7(void *arg)
{
	if (dup2(*(int *)arg, 7) != 7)
		_exit(125);
}

static void body_ready_then_wait(void *arg)
{
	(void)arg;
	say("ready\n");
	await_test();
}

Test(sandbox, an_fd_left_open_before_entry_is_closed)
{
	struct spawn_opts o = {.channel_at = -1, .pre = move_to_fd_7};
	struct pollfd p;
	struct worker w;
	char buf[32];
	int pfd[2];

	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	o.pre_arg = &pfd[1];
	cr_assert_eq(spawn_worker_opts(&o, body_ready_then_wait, NULL, &w), 0);
	close(pfd[1]);
	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	p = (struct pollfd){.fd = pfd[0], .events = POLLIN};
	cr_assert_eq(poll(&p, 1, 2000), 1, "the pipe's write end is still open somewhere");
	cr_assert_eq(read(pfd[0], buf, sizeof(buf)), 0, "expected EOF on the pipe");
	cr_assert_eq(waitpid(w.pid, NULL, WNOHANG), 0, "the worker is not alive");
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	close(pfd[0]);
	worker_close(&w);
}

/* The parent's view of the worker's fd table while it waits: 0-2 /dev/null, 3 the channel
 * (the socket whose other end the test holds), nothing else. */
static void assert_fd_table(pid_t pid, int test_end)
{
	char dir[64], path[384], target[128], want_chan[64];
	struct dirent *de;
	struct stat st;
	int count = 0;
	DIR *d;

	cr_assert_eq(fstat(test_end, &st), 0);
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		cr_skip("cannot list %s (%s): the fd table is not checked", dir, strerror(errno));
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		count++;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		cr_assert_gt(n, 0);
		target[n] = '\0';
		if (strcmp(de->d_name, "3") == 0) {
			cr_assert(strncmp(target, "socket:[", 8) == 0, "fd 3 is %s", target);
			/* The peer's inode differs from the test end's but is also a socket. */
			snprintf(want_chan, sizeof(want_chan), "socket:[%lu]",
			         (unsigned long)st.st_ino);
			cr_assert_str_neq(target, want_chan, "fd 3 is the test's own end");
		} else {
			cr_assert(strlen(de->d_name) == 1 && de->d_name[0] >= '0' &&
			              de->d_name[0] <= '2',
			          "unexpected fd %s -> %s", de->d_name, target);
			cr_assert_str_eq(target, "/dev/null", "fd %s is %s", de->d_name, target);
		}
	}
	closedir(d);
	cr_assert_eq(count, 4, "the worker holds %d fds", count);
}

static void check_channel_at(int at)
{
	struct spawn_opts o = {.channel_at = at};
	struct worker w;
	char buf[32];

	cr_assert_eq(spawn_worker_opts(&o, body_ready_then_wait, NULL, &w), 0);
	worker_read_line(&w, buf, sizeof(buf));
	cr_assert_str_eq(buf, "ready\n", "channel starting on fd %d: nothing arrived", at);
	assert_fd_table(w.pid, w.chan);
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

Test(sandbox, stdio_is_dev_null_and_the_channel_is_fd_3)
{
	check_channel_at(-1);
}

Test(sandbox, a_channel_starting_on_fd_0_1_2_or_3_ends_on_fd_3)
{
	for (int at = 0; at <= 3; at++)
		check_channel_at(at);
	check_channel_at(42);
}

/* ---- Other architectures' entry points -------------------------------------------------- */

struct mkdir_case {
	char dir[PATH_MAX];
	char target[PATH_MAX];
	char *low; /* a copy of target below 4 GiB, for int 0x80 */
};

static void body_int80_mkdir(void *arg)
{
	const struct mkdir_case *m = arg;

	say_ret("int80-mkdir", raw_int80(I386_NR_MKDIR, (long)m->low, 0755));
}

/* 1 if this kernel runs i386 syscalls from 64-bit code (tried in an unsandboxed child). */
static int i386_entry_works(void)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(raw_int80(I386_NR_GETPID, 0, 0) == raw0(SYS_getpid) ? 0 : 1);
	status = wait_status(pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

Test(sandbox, i386_int80_mkdir_is_killed_and_creates_nothing)
{
	struct mkdir_case m;
	int ia32 = i386_entry_works();

	tmpdir_make(m.dir, sizeof(m.dir), 0777);
	path_join(m.target, sizeof(m.target), m.dir, "made-by-int80");
	m.low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
	             -1, 0);
	cr_assert_neq(m.low, MAP_FAILED);
	cr_assert_lt((uintptr_t)m.low, 1ULL << 32);
	snprintf(m.low, 4096, "%s", m.target);

	if (ia32) {
		expect_killed(body_int80_mkdir, &m);
	} else {
		struct worker w = spawn_worker(body_int80_mkdir, &m);
		int status = worker_wait(&w);

		worker_close(&w);
		cr_assert(!WIFEXITED(status), "int 0x80 returned in the sandbox");
	}
	assert_absent(m.target);
	munmap(m.low, 4096);
	if (!ia32) {
		tmpdirs_remove(); /* a skipped test's .fini does not run */
		cr_skip("i386 emulation is off in this kernel: int 0x80 faults before seccomp; "
		        "the seccomp arch check was not exercised");
	}
}

static void body_x32_mkdir(void *arg)
{
	const struct mkdir_case *m = arg;

	say_ret("x32-mkdir", raw2(X32_SYSCALL_BIT | SYS_mkdir, m->target, 0755));
}

Test(sandbox, x32_mkdir_is_killed_and_creates_nothing)
{
	struct mkdir_case m;

	tmpdir_make(m.dir, sizeof(m.dir), 0777);
	path_join(m.target, sizeof(m.target), m.dir, "made-by-x32");
	/* libseccomp sends nr >= 0x40000000 to the bad-arch action, x32 on or off. */
	expect_killed(body_x32_mkdir, &m);
	assert_absent(m.target);
}

/* ---- What must keep working ------------------------------------------------------------- */

static void body_hello(void *arg)
{
	(void)arg;
	say("hello over fd 3\n");
}

Test(sandbox, a_write_to_the_channel_arrives)
{
	char buf[64];

	expect_completes(body_hello, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "hello over fd 3\n");
}

static void body_getrandom(void *arg)
{
	unsigned char a[16] = {0}, b[16] = {0};

	(void)arg;

	say_ret("getrandom", raw3(SYS_getrandom, a, sizeof(a), 0));
	(void)raw3(SYS_getrandom, b, sizeof(b), 0);
	say_ret("differ", memcmp(a, b, sizeof(a)) != 0);
}

Test(sandbox, getrandom_works)
{
	char buf[64];

	expect_completes(body_getrandom, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "getrandom=16\ndiffer=1\n");
}

static void body_clocks(void *arg)
{
	struct timespec ts = {0};

	(void)arg;

	say_ret("monotonic", clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && ts.tv_sec > 0);
	say_ret("realtime", clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec > 1600000000);
	/* CPU clocks are not in the vDSO: this one really enters the kernel. */
	say_ret("cputime", raw2(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &ts));
}

Test(sandbox, clock_gettime_works)
{
	char buf[128];

	expect_completes(body_clocks, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "monotonic=1\nrealtime=1\ncputime=0\n");
}

/* Another process's CPU clock (pid 1's: ((~pid) << 3) | CPUCLOCK_SCHED) and resolution:
 * EINVAL from the filter, the buffer untouched; the worker's own CPU clocks still work. */
static void body_foreign_clocks(void *arg)
{
	struct timespec ts = {.tv_sec = 77, .tv_nsec = 0};
	long pid1 = (~1L) * 8 | 2;

	(void)arg;
	say_ret("pid1", raw2(SYS_clock_gettime, pid1, &ts));
	say_ret("untouched", ts.tv_sec == 77);
	say_ret("pid1res", raw2(SYS_clock_getres, pid1, &ts));
	say_ret("pid1sleep", raw4(SYS_clock_nanosleep, pid1, 0, (long)&ts, 0));
	say_ret("own", raw2(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts));
}

Test(sandbox, another_process_s_cpu_clock_is_einval_and_its_own_works)
{
	char buf[128];

	expect_completes(body_foreign_clocks, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "pid1=-22\nuntouched=1\npid1res=-22\npid1sleep=-22\nown=0\n");
}

static void body_affinity(void *arg)
{
	unsigned long mask[16] = {0};

	(void)arg;
	say_ret("own", raw3(SYS_sched_getaffinity, 0, sizeof(mask), mask) > 0 && mask[0] != 0);
	say_ret("pid1", raw3(SYS_sched_getaffinity, 1, sizeof(mask), mask));
}

Test(sandbox, its_own_cpu_mask_only)
{
	char buf[64];

	expect_completes(body_affinity, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "own=1\npid1=-1\n");
}

/* A shared mapping (anonymous or not) would be shared by every process forked after it: the
 * filter kills it. */
static void body_mmap_shared(void *arg)
{
	(void)arg;
	(void)raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	say("shared mapping made\n");
}

Test(sandbox, a_shared_mapping_is_killed)
{
	expect_killed(body_mmap_shared, NULL);
}

static void *thread_sleep(void *arg)
{
	struct timespec ts = {.tv_sec = 60};

	(void)arg;
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

/* In its own user namespace the worker's tasks are counted by RLIMIT_NPROC: its threads stop
 * at the bound (64 tasks with the main one) with EAGAIN, and the worker goes on. */
static void body_thread_bound(void *arg)
{
	pthread_attr_t attr;
	int n = 0, rc = 0;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 65536);
	while (n < 500) {
		pthread_t t;
		rc = pthread_create(&t, &attr, thread_sleep, NULL);
		if (rc != 0)
			break;
		n++;
	}
	say_ret("threads", n);
	say_ret("error", rc);
}

Test(sandbox, threads_stop_at_the_task_bound)
{
	char buf[64];

	expect_completes(body_thread_bound, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "threads=63\nerror=11\n", "%s", buf);
}

static void *thread_main(void *arg)
{
	(void)arg;
	say("in thread\n");
	return (void *)42L;
}

static void body_thread(void *arg)
{
	pthread_t t;
	void *ret = NULL;
	int rc, joined;

	(void)arg;

	/* The thread says its line before the join returns; the main thread says its own after,
	 * so the order is the same on every run. */
	rc = pthread_create(&t, NULL, thread_main, NULL);
	joined = rc == 0 ? pthread_join(t, &ret) : -1;
	say_ret("create", rc);
	say_ret("join", joined);
	say_ret("ret", (long)ret);
}

Test(sandbox, a_thread_can_be_created_and_joined)
{
	char buf[128];

	expect_completes(body_thread, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "in thread\ncreate=0\njoin=0\nret=42\n");
}

/* Through a volatile pointer so the compiler cannot elide or fold the allocations. */
static void *(*volatile test_malloc)(size_t) = malloc;

static void body_malloc(void *arg)
{
	size_t small = 100UL << 20;
	char *p = test_malloc(small);

	(void)arg;

	if (p)
		memset(p, 0xa5, small);
	say_ret("100MiB", p != NULL);
	say_ret("2GiB", test_malloc(2UL << 30) != NULL);
}

Test(sandbox, malloc_of_100_mib_works_and_2_gib_fails)
{
	char buf[64];

	expect_completes(body_malloc, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "100MiB=1\n2GiB=0\n");
}

static void body_spin(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;

	for (;;)
		n++;
}

Test(sandbox, a_busy_loop_dies_by_sigxcpu_at_the_cpu_limit)
{
	struct sandbox_config cfg = default_config();
	struct rusage ru;
	struct worker w;
	double cpu;
	int status = -1;

	cfg.cpu_s = 1;
	w = spawn_worker_cfg(&cfg, body_spin, NULL);
	/* CPU time, not wall-clock time, is limited: on a loaded machine 1 s of CPU can take
	 * several seconds, hence the wide wall budget and the check on the rusage. */
	for (int ms = 0; ms < 15000; ms++) {
		pid_t r = wait4(w.pid, &status, WNOHANG, &ru);

		cr_assert_geq(r, 0, "wait4: %s", strerror(errno));
		if (r == w.pid)
			break;
		status = -1;
		sleep_ms(1);
	}
	if (status == -1) {
		kill(w.pid, SIGKILL);
		waitpid(w.pid, NULL, 0);
		cr_assert_fail("the busy loop was still running after 15 s");
	}
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU, "expected SIGXCPU, got %s %d",
	          WIFSIGNALED(status) ? "signal" : "exit",
	          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	      ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
	/* The kernel holds RLIMIT_CPU against tick-sampled time, wait4 reports the precise run
	 * time: on a busy or virtual machine the second can fall short of the limit by a tenth. */
	cr_expect(cpu >= 0.75 && cpu < 2.0, "the worker used %.2f s of CPU", cpu);
	worker_close(&w);
}

/* ---- The report ------------------------------------------------------------------------- */

static void body_report(void *arg)
{
	json_object *j = sandbox_report_json(&worker_report);
	const char *s;

	(void)arg;

	if (!j)
		_exit(4);
	s = json_object_to_json_string_ext(j,
	                                   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	chan_write(s, strlen(s));
	json_object_put(j);
}

static const char *layer_state_of(json_object *report, const char *layer, const char **detail)
{
	json_object *l, *v;

	cr_assert(json_object_object_get_ex(report, layer, &l), "no \"%s\" in the report", layer);
	if (detail)
		*detail =
		    json_object_object_get_ex(l, "detail", &v) ? json_object_get_string(v) : "";
	cr_assert(json_object_object_get_ex(l, "state", &v));
	return json_object_get_string(v);
}

Test(sandbox, the_report_shows_every_layer_and_the_mandatory_ones_active)
{
	static const char *const active[] = {"fds",       "setsid",       "pdeathsig",
	                                     "rlimits",   "capabilities", "no_new_privs",
	                                     "fork_gate", "seccomp"};
	const char *missing[2], *detail;
	size_t nmissing = 0;
	json_object *report;
	char buf[4096];

	expect_completes(body_report, NULL, buf, sizeof(buf));
	report = json_tokener_parse(buf);
	cr_assert_not_null(report, "not JSON: %s", buf);
	cr_log_info("worker sandbox report: %s", buf);
	cr_assert_eq(json_object_object_length(report), SANDBOX_NLAYERS);
	for (size_t i = 0; i < sizeof(active) / sizeof(active[0]); i++)
		cr_assert_str_eq(layer_state_of(report, active[i], NULL), "active", "layer %s",
		                 active[i]);
	cr_assert_str_eq(layer_state_of(report, "uid", NULL),
	                 geteuid() == 0 ? "active" : "not needed");

	if (strcmp(layer_state_of(report, "namespaces", &detail), "active") == 0)
		cr_assert_str_eq(detail, "user+net+ipc");
	else
		missing[nmissing++] = "namespaces";
	if (strcmp(layer_state_of(report, "landlock", &detail), "active") == 0)
		cr_assert(strncmp(detail, "ABI ", 4) == 0, "landlock detail: %s", detail);
	else
		missing[nmissing++] = "landlock";
	json_object_put(report);
	for (size_t i = 0; i < nmissing; i++)
		cr_log_warn("layer %s is not active on this machine: %s", missing[i], buf);
	if (nmissing)
		cr_skip("optional layer(s) unavailable here: %s%s%s", missing[0],
		        nmissing > 1 ? ", " : "", nmissing > 1 ? missing[1] : "");
}

Test(sandbox, as_root_the_worker_runs_as_the_sandbox_uid)
{
	struct worker w;
	char buf[32], uid[64], gid[64], groups[64];

	if (geteuid() != 0)
		cr_skip("not running as root: the uid layer is not needed");
	w = spawn_worker(body_ready_then_wait, NULL);
	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	cr_assert_eq(proc_status_field(w.pid, "Uid", uid, sizeof(uid)), 0);
	cr_assert_eq(proc_status_field(w.pid, "Gid", gid, sizeof(gid)), 0);
	cr_assert_eq(proc_status_field(w.pid, "Groups", groups, sizeof(groups)), 0);
	cr_assert_str_eq(uid, "65534\t65534\t65534\t65534");
	cr_assert_str_eq(gid, "65534\t65534\t65534\t65534");
	cr_assert_str_empty(groups);
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

/* What a process of the sandbox uid, not the worker's parent, can do to a worker: a bit per
 * access the kernel granted (the exit status), 64 when a control failed. */
static int reach_as_sandbox_uid(pid_t worker)
{
	char path[64], status[64], buf[8];
	struct iovec mine = {buf, sizeof(buf)}, theirs = {(void *)0x400000, sizeof(buf)};
	int fd, pfd, got = 0;

	if (setgroups(0, NULL) != 0 ||
	    setresgid(SANDBOX_TEST_GID, SANDBOX_TEST_GID, SANDBOX_TEST_GID) != 0 ||
	    setresuid(SANDBOX_TEST_UID, SANDBOX_TEST_UID, SANDBOX_TEST_UID) != 0 ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) /* as a daemon of that uid is */
		return 64;
	/* Controls: the worker's status is readable (it is that pid, of that uid), and the
	 * process's own memory is. */
	if (proc_status_field(worker, "Uid", status, sizeof(status)) != 0 ||
	    strcmp(status, "65534\t65534\t65534\t65534") != 0 ||
	    (fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC)) < 0)
		return 64;
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)worker);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		got |= 1;
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)worker);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		got |= 2;
		close(fd);
	}
	if (process_vm_readv(worker, &mine, 1, &theirs, 1, 0) >= 0 || errno != EPERM)
		got |= 4;
	pfd = (int)syscall(SYS_pidfd_open, worker, 0);
	if (pfd < 0)
		return 64;
	fd = (int)syscall(SYS_pidfd_getfd, pfd, 0, 0);
	if (fd >= 0 || errno != EPERM)
		got |= 8;
	return got;
}

/* As root, workers run as the sandbox uid, which other processes of the host may have (nobody
 * is shared with other daemons). While a worker was dumpable the kernel let any process of
 * that uid into it: its fds (pidfd_getfd: the channel, a workspace file the root supervisor
 * opened), its memory (/proc/<pid>/mem, process_vm_readv), its environment. A worker whose ids
 * were switched stays non-dumpable: each is refused (the root supervisor traces it through its
 * capability). */
Test(sandbox, as_root_another_process_of_the_sandbox_uid_cannot_reach_a_worker)
{
	struct worker w;
	char buf[32];
	pid_t pid;
	int st;

	if (geteuid() != 0)
		cr_skip("not running as root: workers keep the server's uid");
	w = spawn_worker(body_ready_then_wait, NULL);
	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(reach_as_sandbox_uid(w.pid));
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the probe died: %d", st);
	cr_assert_neq(WEXITSTATUS(st), 64, "a control failed");
	cr_assert_eq(WEXITSTATUS(st), 0,
	             "a process of the sandbox uid reached the worker (bits: 1 mem, 2 environ, 4 "
	             "process_vm_readv, 8 pidfd_getfd): %d",
	             WEXITSTATUS(st));
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

/* ---- Seen from outside: the parent checks the kernel's view, not the worker's report ---- */

static void assert_status_field(pid_t pid, const char *name, const char *want)
{
	char got[128];

	cr_assert_eq(proc_status_field(pid, name, got, sizeof(got)), 0, "no %s in status", name);
	cr_assert_str_eq(got, want, "%s is %s, expected %s", name, got, want);
}

/* 1 if /proc/<pid>/ns/<ns> differs from ours, 0 if the same, -1 if unreadable. */
static int ns_differs(pid_t pid, const char *ns)
{
	char path[64], theirs[64], ours[64];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	a = readlink(path, theirs, sizeof(theirs) - 1);
	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	b = readlink(path, ours, sizeof(ours) - 1);
	if (a <= 0 || b <= 0)
		return -1;
	theirs[a] = ours[b] = '\0';
	return strcmp(theirs, ours) != 0;
}

Test(sandbox, the_kernel_shows_no_caps_no_new_privs_and_a_seccomp_filter)
{
	struct worker w = spawn_worker(body_ready_then_wait, NULL);
	int user, net, ipc;
	char buf[32];

	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	assert_status_field(w.pid, "CapInh", "0000000000000000");
	assert_status_field(w.pid, "CapPrm", "0000000000000000");
	assert_status_field(w.pid, "CapEff", "0000000000000000");
	assert_status_field(w.pid, "CapAmb", "0000000000000000");
	assert_status_field(w.pid, "NoNewPrivs", "1");
	assert_status_field(w.pid, "Seccomp", "2"); /* SECCOMP_MODE_FILTER */
	user = ns_differs(w.pid, "user");
	net = ns_differs(w.pid, "net");
	ipc = ns_differs(w.pid, "ipc");
	cr_assert(user == net && net == ipc, "namespaces partly unshared: user %d net %d ipc %d",
	          user, net, ipc);
	/* The bounding set can only be dropped with CAP_SETPCAP: as root or in the new userns. */
	if (user == 1 || geteuid() == 0)
		assert_status_field(w.pid, "CapBnd", "0000000000000000");
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
	if (user != 1)
		cr_skip("the worker shares our namespaces (userns unavailable: %d): the namespace "
		        "layer and the bounding-set drop are not checked",
		        user);
}

/* Soft and hard limit from /proc/<pid>/limits ("unlimited" is RLIM_INFINITY). 0 or -1. */
static int proc_limit(pid_t pid, const char *name, rlim_t *soft, rlim_t *hard)
{
	char path[64], line[256], s[32], h[32];
	size_t nlen = strlen(name);
	int rc = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, nlen) != 0 || line[nlen] != ' ')
			continue;
		if (sscanf(line + nlen, "%31s %31s", s, h) == 2) {
			*soft = strcmp(s, "unlimited") ? strtoull(s, NULL, 10) : RLIM_INFINITY;
			*hard = strcmp(h, "unlimited") ? strtoull(h, NULL, 10) : RLIM_INFINITY;
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}

static rlim_t min_rlim(rlim_t a, rlim_t b)
{
	return a < b ? a : b;
}

/* Never raised above what the runner has: the expected value is the lower of the two. */
static void assert_limit(pid_t pid, const char *name, int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit cur;
	rlim_t s, h;

	cr_assert_eq(getrlimit(resource, &cur), 0);
	cr_assert_eq(proc_limit(pid, name, &s, &h), 0, "no \"%s\" in limits", name);
	cr_assert_eq(h, min_rlim(hard, cur.rlim_max), "%s hard %llu", name, (unsigned long long)h);
	cr_assert_eq(s, min_rlim(min_rlim(soft, cur.rlim_cur), h), "%s soft %llu", name,
	             (unsigned long long)s);
}

Test(sandbox, the_kernel_shows_the_rlimits)
{
	struct worker w = spawn_worker(body_ready_then_wait, NULL);
	char buf[32];

	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	assert_limit(w.pid, "Max address space", RLIMIT_AS, 512ULL << 20, 512ULL << 20);
	assert_limit(w.pid, "Max cpu time", RLIMIT_CPU, 10, 11);
	assert_limit(w.pid, "Max file size", RLIMIT_FSIZE, 0, 0);
	assert_limit(w.pid, "Max core file size", RLIMIT_CORE, 0, 0);
	assert_limit(w.pid, "Max locked memory", RLIMIT_MEMLOCK, 0, 0);
	assert_limit(w.pid, "Max msgqueue size", RLIMIT_MSGQUEUE, 0, 0);
	assert_limit(w.pid, "Max open files", RLIMIT_NOFILE, 8, 8);
	assert_limit(w.pid, "Max pending signals", RLIMIT_SIGPENDING, 16, 16);
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

/* With a workspace: room for the files the supervisor passes, and a size a file written may
 * reach; the rest as without. */
Test(sandbox, a_workspace_raises_nofile_and_fsize_only)
{
	struct sandbox_config cfg = default_config();
	struct worker w;
	char buf[32];

	cfg.workspace = 1;
	cfg.fsize = 1000001;
	w = spawn_worker_cfg(&cfg, body_ready_then_wait, NULL);
	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	assert_limit(w.pid, "Max file size", RLIMIT_FSIZE, 1000001, 1000001);
	assert_limit(w.pid, "Max open files", RLIMIT_NOFILE, SANDBOX_NOFILE_WORKSPACE,
	             SANDBOX_NOFILE_WORKSPACE);
	assert_limit(w.pid, "Max core file size", RLIMIT_CORE, 0, 0);
	assert_limit(w.pid, "Max address space", RLIMIT_AS, 512ULL << 20, 512ULL << 20);
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

static void body_ready_then_sleep(void *arg)
{
	struct timespec ts = {10, 0};

	(void)arg;
	say("ready\n");
	/* Not a read on the channel: its closing must not be what ends the worker. */
	(void)raw4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* PR_SET_PDEATHSIG is cleared by any later credential change (the uid switch as root), so
 * this checks the worker still has it once the whole sandbox is in place. */
Test(sandbox, the_worker_dies_with_its_parent)
{
	pid_t test = getpid(), middle, worker = 0;
	int pfd[2], status;

	filters_build();
	/* Orphans are re-parented to us, so the worker's end can be observed. */
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	middle = fork();
	cr_assert_geq(middle, 0);
	if (middle == 0) {
		struct spawn_opts o = {.channel_at = -1};
		struct worker w;
		char buf[16];

		close(pfd[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != test)
			_exit(123);
		if (spawn_worker_opts(&o, body_ready_then_sleep, NULL, &w) != 0 ||
		    chan_read_line(w.chan, buf, sizeof(buf), CHANNEL_MS) == 0 ||
		    write(pfd[1], &w.pid, sizeof(w.pid)) != (ssize_t)sizeof(w.pid))
			_exit(124);
		for (;;)
			pause();
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &worker, sizeof(worker)), (ssize_t)sizeof(worker),
	             "the middle process did not report a ready worker");
	close(pfd[0]);
	cr_assert_eq(kill(middle, SIGKILL), 0);
	cr_assert_eq(waitpid(middle, NULL, 0), middle);
	status = wait_status_ms(worker, 3000);
	cr_assert_neq(status, -1, "the worker outlived its parent by 3 s");
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	          "the worker ended otherwise: %#x", status);
}

/* ---- Optional layers off: seccomp alone must hold --------------------------------------- */

static void body_open_create_report(void *arg)
{
	body_open_secret(arg);
	body_create_other(arg);
	body_report(NULL);
}

Test(sandbox, without_landlock_and_namespaces_seccomp_alone_denies_files)
{
	struct sandbox_config cfg = default_config();
	struct worker w;
	struct paths p;
	json_object *report;
	char buf[4096], *json;

	cfg.try_landlock = 0;
	cfg.try_namespaces = 0;
	make_secret(&p);
	cr_assert_eq(chmod(p.dir, 0777), 0);
	path_join(p.other, sizeof(p.other), p.dir, "created-without-landlock");
	w = spawn_worker_cfg(&cfg, body_open_create_report, &p);
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
	cr_expect(strstr(buf, "open=-13\n"), "open: %s", buf);
	cr_expect(strstr(buf, "openat=-13\n"), "openat: %s", buf);
	cr_expect(strstr(buf, "create=-13\n"), "create: %s", buf);
	cr_expect_null(strstr(buf, SECRET), "the secret reached the channel");
	assert_absent(p.other);
	json = strchr(buf, '{');
	cr_assert_not_null(json, "no report: %s", buf);
	report = json_tokener_parse(json);
	cr_assert_not_null(report, "not JSON: %s", json);
	cr_assert_str_eq(layer_state_of(report, "landlock", NULL), "unavailable");
	cr_assert_str_eq(layer_state_of(report, "namespaces", NULL), "unavailable");
	cr_assert_str_eq(layer_state_of(report, "seccomp", NULL), "active");
	cr_assert_str_eq(layer_state_of(report, "capabilities", NULL), "active");
	json_object_put(report);
}

static void body_socket_udp(void *arg)
{
	(void)arg;
	say_ret("socket", raw3(SYS_socket, AF_INET, SOCK_DGRAM, 0));
}

Test(sandbox, without_landlock_and_namespaces_seccomp_alone_kills_socket)
{
	struct sandbox_config cfg = default_config();
	struct worker w;
	char buf[64];

	cfg.try_landlock = 0;
	cfg.try_namespaces = 0;
	w = spawn_worker_cfg(&cfg, body_socket_udp, NULL);
	worker_read_all(&w, buf, sizeof(buf));
	assert_sigsys(worker_wait(&w));
	cr_assert_str_empty(buf, "socket returned: %s", buf);
	worker_close(&w);
}

/* ---- Failing closed --------------------------------------------------------------------- */

static void body_unreachable(void *arg)
{
	(void)arg;
	say("sandbox_enter returned\n");
}

Test(sandbox, a_parent_already_gone_ends_the_worker_before_any_code_runs)
{
	/* A pid that is not the parent stands for a parent that died before the prctl. */
	struct spawn_opts o = {.channel_at = -1, .parent = 1};
	struct worker w;
	char buf[64];

	cr_assert_eq(spawn_worker_opts(&o, body_unreachable, NULL, &w), 0);
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), WORKER_EXIT_PDEATHSIG);
	cr_assert_str_empty(buf);
	worker_close(&w);
}

Test(sandbox, no_policy_ends_the_worker_with_the_seccomp_code)
{
	struct sandbox_config cfg = default_config();
	struct worker w;
	char buf[64];

	cfg.policy = NULL;
	w = spawn_worker_cfg(&cfg, body_unreachable, NULL);
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), WORKER_EXIT_SECCOMP);
	cr_assert_str_empty(buf);
	worker_close(&w);
}

Test(sandbox, a_bad_channel_fd_ends_the_worker_with_the_fds_code)
{
	struct sandbox_config cfg = default_config();
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct sandbox_report r;

		sandbox_enter(&cfg, 1000, getppid(), &r); /* fd 1000 is not open */
		_exit(0);
	}
	assert_exit(wait_status(pid), WORKER_EXIT_FDS);
}

Test(sandbox, names_and_exit_reasons_cover_every_value)
{
	for (int l = 0; l < SANDBOX_NLAYERS; l++) {
		cr_assert_not_null(sandbox_layer_name(l));
		for (int k = 0; k < l; k++)
			cr_assert_str_neq(sandbox_layer_name(l), sandbox_layer_name(k));
	}
	cr_assert_null(sandbox_layer_name(SANDBOX_NLAYERS));
	cr_assert_str_eq(layer_state_name(LAYER_ACTIVE), "active");
	cr_assert_str_eq(layer_state_name(LAYER_UNAVAILABLE), "unavailable");
	cr_assert_str_eq(layer_state_name(LAYER_FAILED), "failed");
	cr_assert_str_eq(layer_state_name(LAYER_NOT_NEEDED), "not needed");
}

Test(sandbox, report_json_names_the_errno_of_a_failed_layer)
{
	struct sandbox_report r;
	json_object *j, *l, *v;

	memset(&r, 0, sizeof(r));
	r.layer[SANDBOX_LANDLOCK].state = LAYER_UNAVAILABLE;
	r.layer[SANDBOX_LANDLOCK].err = ENOSYS;
	snprintf(r.layer[SANDBOX_LANDLOCK].detail, sizeof(r.layer[0].detail), "not here");
	j = sandbox_report_json(&r);
	cr_assert_not_null(j);
	cr_assert(json_object_object_get_ex(j, "landlock", &l));
	cr_assert(json_object_object_get_ex(l, "state", &v));
	cr_assert_str_eq(json_object_get_string(v), "unavailable");
	cr_assert(json_object_object_get_ex(l, "errno", &v));
	cr_assert_str_eq(json_object_get_string(v), "Function not implemented");
	cr_assert(json_object_object_get_ex(j, "seccomp", &l));
	cr_assert_not(json_object_object_get_ex(l, "errno", &v));
	json_object_put(j);
}

/* ---- The fork gate: the test answers as the supervisor --------------------------------- */

/* What the fd is, from /proc/self/fd. */
static void fd_target(int fd, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, cap - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* What the worker sends until a line equal to last (kept in buf). */
static void worker_read_through(struct worker *w, const char *last, char *buf, size_t cap)
{
	size_t len = 0, ll = strlen(last);

	buf[0] = '\0';
	while (len + 1 < cap) {
		size_t got = worker_read_line(w, buf + len, cap - len);

		if (got == 0)
			break;
		len += got;
		if (len >= ll && strcmp(buf + len - ll, last) == 0 &&
		    (len == ll || buf[len - ll - 1] == '\n'))
			break;
	}
}

/* The tests that count a worker's children need the kernel's list of them. */
static void skip_without_proc_children(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	if (access(path, R_OK) != 0)
		cr_skip_test("%s: %s; counting a process's children needs CONFIG_PROC_CHILDREN",
		             path, strerror(errno));
}

/* No child of pid, as the kernel lists them. */
static void assert_no_children(pid_t pid)
{
	char path[64], buf[128] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_eq(n, 0, "worker %d has children: %s", (int)pid, buf);
}

Test(sandbox, a_worker_sends_its_listener_first_and_reports_the_fork_gate)
{
	struct worker w = spawn_worker(body_report, NULL);
	const char *detail;
	json_object *report;
	char buf[4096], what[64];

	/* spawn_worker took the listener frame: nothing came before it. */
	fd_target(w.listener, what, sizeof(what));
	cr_assert_str_eq(what, "anon_inode:seccomp notify");
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), 0);
	report = json_tokener_parse(buf);
	cr_assert_not_null(report, "not JSON: %s", buf);
	cr_assert_eq(json_object_object_length(report), SANDBOX_NLAYERS);
	cr_assert_str_eq(layer_state_of(report, "fork_gate", &detail), "active");
	/* Linux 5.19+: a process parked in the gate can run no signal handler. */
	cr_assert_str_eq(detail, "listener sent to the supervisor; parked processes wait killable");
	cr_assert_str_eq(layer_state_of(report, "seccomp", NULL), "active");
	json_object_put(report);
	worker_close(&w);
}

/* Seccomp_filters of /proc/<pid>/status (kernel 5.9+), or -1. */
static int seccomp_filters(pid_t pid)
{
	char v[32];

	return proc_status_field(pid, "Seccomp_filters", v, sizeof(v)) == 0 ? atoi(v) : -1;
}

Test(sandbox, a_worker_has_the_gate_and_the_session_filter_and_no_listener_of_its_own)
{
	struct worker w = spawn_worker(body_ready_then_wait, NULL);
	int ours = seccomp_filters(getpid());
	char buf[32];

	cr_assert(worker_read_line(&w, buf, sizeof(buf)) > 0, "worker not ready");
	assert_status_field(w.pid, "Seccomp", "2");
	if (ours >= 0)
		cr_assert_eq(seccomp_filters(w.pid), ours + 2, "the gate and the session filter");
	/* 0-2, the channel; the listener was closed before the main filter. */
	assert_fd_table(w.pid, w.chan);
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

/* Native code's forks: a raw clone with glibc's flags, then glibc's fork(); a child that
 * runs says "C". The worker reports what each returned, and wait4(-1, WNOHANG) (-10, ECHILD:
 * it has no child). With arg set it first waits for the test. */
static void body_user_forks(void *arg)
{
	int ctid = 0;
	pid_t pid;
	long r;

	if (arg)
		await_test();
	r = raw5(SYS_clone, GLIBC_FORK_FLAGS, 0, 0, &ctid, 0);
	CHILD_ANNOUNCES(r);
	say_ret("clone", r);
	pid = fork();
	CHILD_ANNOUNCES(pid);
	say_ret("fork", pid);
	say_ret("errno", pid < 0 ? errno : 0);
	say_ret("wait4", raw4(SYS_wait4, -1, NULL, WNOHANG, NULL));
	say("done\n");
	await_test();
}

Test(sandbox, forks_the_supervisor_refuses_fail_with_eperm_and_make_no_process)
{
	struct worker w;
	char buf[256], rest[64];

	skip_without_proc_children();
	w = spawn_worker(body_user_forks, NULL);
	gate_answer(w.listener, w.pid, -EPERM); /* the raw clone */
	gate_answer(w.listener, w.pid, -EPERM); /* glibc's fork() */
	worker_read_through(&w, "done\n", buf, sizeof(buf));
	cr_assert_str_eq(buf, "clone=-1\nfork=-1\nerrno=1\nwait4=-10\ndone\n",
	                 "not refused with EPERM, or a child ran: %s", buf);
	assert_no_children(w.pid);
	expect_no_question(&w);
	tell_worker(w.chan);
	worker_read_all(&w, rest, sizeof(rest));
	assert_exit(worker_wait(&w), 0);
	cr_assert_str_empty(rest, "after the worker: %s", rest);
	cr_assert_eq(w.refused, 0, "a third fork reached the gate");
	worker_close(&w);
}

/* One fork (glibc), reaped before anything is said: a child that ran said "C" first. */
static void body_one_fork(void *arg)
{
	int status = -1;
	long reaped = 0;
	pid_t pid;

	(void)arg;
	pid = fork();
	CHILD_ANNOUNCES(pid);
	if (pid > 0)
		reaped = raw4(SYS_wait4, pid, &status, 0, NULL);
	say_ret("forked", pid > 0);
	say_ret("reaped", reaped == pid);
	say_ret("status", status);
	say_ret("wait4", raw4(SYS_wait4, -1, NULL, WNOHANG, NULL));
}

/* What a parked process does for the next call, when the supervisor asked it to. */
Test(sandbox, a_fork_the_supervisor_allows_makes_exactly_one_child)
{
	struct worker w = spawn_worker(body_one_fork, NULL);
	char buf[256];

	gate_answer(w.listener, w.pid, 0);
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), 0);
	cr_assert_str_eq(buf, "Cforked=1\nreaped=1\nstatus=0\nwait4=-10\n", "%s", buf);
	cr_assert_eq(w.refused, 0, "a second fork reached the gate");
	worker_close(&w);
}

/* The allowed child forks in turn: the same gate, the same listener, asked by the child. */
static void body_child_forks_too(void *arg)
{
	int status = -1;
	long reaped = 0;
	pid_t pid;

	(void)arg;
	pid = fork();
	if (pid == 0) {
		pid_t inner = fork();

		CHILD_ANNOUNCES(inner);
		say_ret("inner", inner);
		say_ret("inner_errno", inner < 0 ? errno : 0);
		raw1(SYS_exit_group, 0);
	}
	if (pid > 0)
		reaped = raw4(SYS_wait4, pid, &status, 0, NULL);
	say_ret("outer", pid > 0 && reaped == pid);
	say_ret("status", status);
}

Test(sandbox, the_child_of_an_allowed_fork_is_still_gated)
{
	struct worker w;
	struct seccomp_notif *req;
	char buf[256], ppid[32], want[32];

	skip_without_proc_children();
	w = spawn_worker(body_child_forks_too, NULL);
	gate_answer(w.listener, w.pid, 0);
	req = gate_receive(w.listener);
	cr_assert_neq((pid_t)req->pid, w.pid, "the second fork should be the child's");
	/* While its fork waits for us, the asker is the worker's child. */
	cr_assert_eq(proc_status_field((pid_t)req->pid, "PPid", ppid, sizeof(ppid)), 0);
	snprintf(want, sizeof(want), "%d", (int)w.pid);
	cr_assert_str_eq(ppid, want);
	assert_no_children((pid_t)req->pid);
	gate_respond(w.listener, req, -EPERM);
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), 0);
	cr_assert_str_eq(buf, "inner=-1\ninner_errno=1\nouter=1\nstatus=0\n", "%s", buf);
	cr_assert_eq(w.refused, 0, "a third fork reached the gate");
	worker_close(&w);
}

/* What a session's processes meet when the supervisor is gone. */
Test(sandbox, with_the_listener_closed_forks_fail_with_enosys_and_make_no_process)
{
	struct worker w;
	char buf[256];

	skip_without_proc_children();
	w = spawn_worker(body_user_forks, "wait");
	cr_assert_eq(close(w.listener), 0);
	w.listener = -1;
	tell_worker(w.chan);
	worker_read_through(&w, "done\n", buf, sizeof(buf));
	cr_assert_str_eq(buf, "clone=-38\nfork=-1\nerrno=38\nwait4=-10\ndone\n", "%s", buf);
	assert_no_children(w.pid);
	tell_worker(w.chan);
	assert_exit(worker_wait(&w), 0);
	worker_close(&w);
}

Test(sandbox, a_gate_that_is_not_one_ends_the_worker_with_the_gate_code)
{
	struct sandbox_config cfg = default_config();
	struct spawn_opts o = {.cfg = &cfg, .channel_at = -1};
	struct worker w;
	char buf[64];

	cfg.gate = test_session_policy; /* not policy_gate_build's: policy_gate_load refuses it */
	cr_assert_eq(spawn_worker_opts(&o, body_unreachable, NULL, &w), 0);
	cr_assert_eq(w.listener, -1, "a listener came");
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), WORKER_EXIT_GATE);
	cr_assert_str_empty(buf);
	worker_close(&w);
}

static void shut_channel_42(void *arg)
{
	(void)arg;
	if (shutdown(42, SHUT_WR) != 0)
		_exit(126);
}

Test(sandbox, a_listener_that_cannot_be_sent_ends_the_worker_with_the_gate_code)
{
	struct sandbox_config cfg = default_config();
	struct spawn_opts o = {.cfg = &cfg, .channel_at = 42, .pre = shut_channel_42};
	struct worker w;
	char buf[64];

	cr_assert_eq(spawn_worker_opts(&o, body_unreachable, NULL, &w), 0);
	cr_assert_eq(w.listener, -1, "a listener came");
	worker_read_all(&w, buf, sizeof(buf));
	assert_exit(worker_wait(&w), WORKER_EXIT_GATE);
	cr_assert_str_empty(buf);
	worker_close(&w);
}
