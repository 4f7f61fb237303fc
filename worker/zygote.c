/* zygote.c - the zygote: CPython initialised once, then one fork per spawn request; and the
 * worker's life after the fork (sandbox, ready frame, code, run, result frame, _exit).
 * The zygote never sees a request's code or result: those travel on the worker's channel. */
#include "worker_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int control_send(int fd, char type, uint32_t a, uint32_t b)
{
	unsigned char msg[ZYGOTE_MSG_LEN];

	msg[0] = (unsigned char)type;
	put_u32(msg + 1, a);
	put_u32(msg + 5, b);
	if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) != (ssize_t)sizeof(msg))
		return -errno;
	return 0;
}

/* Receive one request and its attached fd (-1 if none). Returns bytes, 0 at EOF, -errno. */
static ssize_t control_recv(int fd, unsigned char *buf, size_t len, int *passed)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {buf, len};
	struct msghdr mh = {0};
	struct cmsghdr *c;
	ssize_t n;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	*passed = -1;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*passed < 0)
				*passed = f;
			else
				close(f);
		}
	}
	return n;
}

/* Run one call's code in this process and send its result frame. */
static void run_and_report(const char *code, size_t len)
{
	struct run_outcome out;
	char *result;
	size_t n = 0;

	run_outcome_init(&out);
	interp_run(code, len, &out);
	result = outcome_encode(&out, &n);
	if (!result || frame_write(POLICY_FD_CHANNEL, FRAME_RESULT, result, n) < 0)
		_exit(WORKER_EXIT_INTERP);
	free(result);
	run_outcome_clear(&out);
}

/* A session's parked process: wait for the next call's code (or for the word to prepare:
 * then the child forks ahead and waits for the code itself), fork the process that runs it
 * (the supervisor answers the fork gate for this one fork), and wait for that child. If the
 * child's call commits, the supervisor kills this process and the child is the new parked
 * state; otherwise the child is killed and this process reports it and waits again. The
 * child continues in this same loop as the new parked process. */
static void park(void) __attribute__((noreturn));
static void park(void)
{
	for (;;) {
		unsigned char word[4];
		char *code = NULL, type = 0;
		size_t len = 0;
		PyObject *saved;
		pid_t pid;
		int status = 0, rc;

		rc = frame_read(POLICY_FD_CHANNEL, &type, &code, &len, PROTO_MAX_LINE);
		if (rc == -EPIPE)
			_exit(WORKER_EXIT_OK); /* the supervisor is gone or let the session go */
		if (rc < 0 || (type != FRAME_CODE && type != FRAME_PREPARE) || strlen(code) != len)
			_exit(WORKER_EXIT_CHANNEL);
		saved = interp_fork_save();
		PyOS_BeforeFork();
		/* Python code (the fork hooks, finalizers) runs only before this frame: the
		 * supervisor lets a fork through only after it, so no fork user code makes can
		 * take this call's approval. */
		if (frame_write(POLICY_FD_CHANNEL, FRAME_FORKING, NULL, 0) < 0)
			_exit(WORKER_EXIT_CHANNEL);
		pid = fork();
		if (pid == 0) {
			PyOS_AfterFork_Child();
			interp_fork_restore(saved);
			put_u32(word, (uint32_t)getpid());
			if (frame_write(POLICY_FD_CHANNEL, FRAME_STARTED, word, 4) < 0)
				_exit(WORKER_EXIT_CHANNEL);
			if (type == FRAME_PREPARE) {
				/* Forked ahead of the call: fault in what a call touches, then
				 * wait for the code (the parked process reads nothing meanwhile). */
				free(code);
				code = NULL;
				interp_warm_up();
				if (frame_read(POLICY_FD_CHANNEL, &type, &code, &len,
				               PROTO_MAX_LINE) < 0 ||
				    type != FRAME_CODE || strlen(code) != len)
					_exit(WORKER_EXIT_CHANNEL);
			}
			run_and_report(code, len);
			free(code);
			continue;
		}
		PyOS_AfterFork_Parent();
		Py_XDECREF(saved);
		free(code);
		if (pid < 0) {
			status = (int)(0xFFFF0000u | (unsigned int)errno);
		} else {
			while (waitpid(pid, &status, 0) < 0)
				if (errno != EINTR)
					_exit(WORKER_EXIT_CHANNEL);
		}
		put_u32(word, (uint32_t)status);
		if (frame_write(POLICY_FD_CHANNEL, FRAME_WAITED, word, 4) < 0)
			_exit(WORKER_EXIT_CHANNEL);
	}
}

/* The worker, from the fork to _exit. Fails closed at every step. */
static void worker_run(const struct sandbox_config *sb, int channel, pid_t zygote)
    __attribute__((noreturn));
static void worker_run(const struct sandbox_config *sb, int channel, pid_t zygote)
{
	struct sandbox_report report;
	json_object *rep;
	const char *text;
	char *code = NULL;
	size_t len = 0;
	char type = 0;
	sigset_t none;

	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		_exit(WORKER_EXIT_FDS);
	sandbox_enter(sb, channel, zygote, &report);
	/* From here on only the seccomp allowlist works. */
	interp_warm_up();
	rep = sandbox_report_json(&report);
	text = rep ? json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN) : "{}";
	if (frame_write(POLICY_FD_CHANNEL, FRAME_READY, text, strlen(text)) < 0)
		_exit(WORKER_EXIT_CHANNEL);
	json_object_put(rep);
	if (frame_read(POLICY_FD_CHANNEL, &type, &code, &len, PROTO_MAX_LINE) < 0 ||
	    type != FRAME_CODE || strlen(code) != len)
		_exit(WORKER_EXIT_CHANNEL);
	/* The first call runs here; then this process holds the session's state. */
	run_and_report(code, len);
	free(code);
	park();
}

static pid_t spawn(const struct sandbox_config *sb, int channel)
{
	pid_t self = getpid(), pid;

	PyOS_BeforeFork();
	pid = fork();
	if (pid == 0) {
		/* Reseeds random and resets threading state in the child. */
		PyOS_AfterFork_Child();
		worker_run(sb, channel, self);
	}
	PyOS_AfterFork_Parent();
	return pid;
}

static int freeze_gc(void)
{
	PyObject *gc = PyImport_ImportModule("gc"), *r;

	if (!gc)
		return -1;
	r = PyObject_CallMethod(gc, "collect", NULL);
	Py_XDECREF(r);
	if (r) {
		r = PyObject_CallMethod(gc, "freeze", NULL);
		Py_XDECREF(r);
	}
	Py_DECREF(gc);
	return r ? 0 : -1;
}

void zygote_main(const struct zygote_config *cfg)
{
	struct sandbox_config sb = cfg->sandbox;
	struct policy *policy = NULL, *gate = NULL;
	int fd = cfg->control_fd, sfd, rc;
	sigset_t chld;

	/* Workers share our memory: keep it unreadable from outside, and die with the
	 * supervisor. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    getppid() == 1) {
		fprintf(stderr, "safepy zygote: prctl: %s\n", strerror(errno));
		exit(2);
	}
	if (chdir("/") < 0) {
		fprintf(stderr, "safepy zygote: chdir /: %s\n", strerror(errno));
		exit(2);
	}
	/* Numeric libraries must not start thread pools in the zygote: fork keeps one thread. */
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	setenv("OMP_NUM_THREADS", "1", 1);
	setenv("MKL_NUM_THREADS", "1", 1);
	if (interp_init(cfg) < 0)
		exit(3);
	/* Every worker may hold a session, so it gets the fork gate and the session policy. */
	rc = policy_build_session(&policy);
	if (rc == 0)
		rc = policy_gate_build(&gate);
	if (rc < 0) {
		fprintf(stderr, "safepy zygote: building the seccomp policy failed: %s\n",
		        strerror(-rc));
		exit(4);
	}
	sb.policy = policy;
	sb.gate = gate;
	if (freeze_gc() < 0) {
		PyErr_Print();
		exit(3);
	}
	/* Workers are our children: we reap them and report each exit status (a traced worker
	 * reaches us after the supervisor, its tracer, has seen it). */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 ||
	    (sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		fprintf(stderr, "safepy zygote: signalfd: %s\n", strerror(errno));
		exit(2);
	}
	if (control_send(fd, ZYGOTE_MSG_READY, 0, 0) < 0)
		exit(0);
	for (;;) {
		struct pollfd pfd[2] = {{fd, POLLIN, 0}, {sfd, POLLIN, 0}};
		unsigned char msg[ZYGOTE_MSG_LEN + 1];
		int channel;
		ssize_t n;
		uint32_t id;
		pid_t pid;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			exit(2);
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			int status;
			while (read(sfd, &si, sizeof(si)) > 0)
				;
			while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
				if (control_send(fd, ZYGOTE_MSG_EXIT, (uint32_t)pid,
				                 (uint32_t)status) < 0)
					exit(0);
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = control_recv(fd, msg, sizeof(msg), &channel);

		if (n == 0 || n == -ECONNRESET)
			exit(0); /* the supervisor closed the control socket */
		if (n < 0) {
			fprintf(stderr, "safepy zygote: control socket: %s\n", strerror((int)-n));
			exit(2);
		}
		if (n != ZYGOTE_MSG_LEN || msg[0] != ZYGOTE_MSG_SPAWN || channel < 0) {
			if (channel >= 0)
				close(channel);
			fprintf(stderr, "safepy zygote: malformed control message\n");
			exit(2);
		}
		id = get_u32(msg + 1);
		pid = spawn(&sb, channel);
		close(channel);
		if (pid < 0)
			rc = control_send(fd, ZYGOTE_MSG_ERR, id, (uint32_t)errno);
		else
			rc = control_send(fd, ZYGOTE_MSG_PID, id, (uint32_t)pid);
		if (rc < 0)
			exit(0);
	}
}
