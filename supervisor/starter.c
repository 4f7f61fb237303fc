/* starter.c - the zygote starter: a process forked at start-up, before the supervisor loads
 * its own seccomp filter, whose only work is to start safepy-zygote when the supervisor asks.
 * The supervisor can then refuse itself execve and fork for good: the one process left that
 * can exec runs one fixed program, with a fixed argv and an environment of the time zone
 * only, and reads nothing but a one-byte request with the zygote's control socket.
 *
 * The zygote is created with CLONE_PARENT, so it is the supervisor's child, as if the
 * supervisor had forked it: the supervisor reaps it, its parent-death signal follows the
 * supervisor, and the supervisor, its ancestor, may trace the workers it forks. The starter
 * inherits the supervisor's Landlock domain (the zygote may execute only itself and its
 * loader) and is not dumpable. It dies with the supervisor, or when its socket closes. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipc.h"
#include "supervisor.h"

#define ZYGOTE_CONTROL_FD 3
#define STARTER_FD        3
#define STARTER_REPLY_MS  5000
#define STARTER_REQUEST   'Z'

/* The server's time zone, when TZ names one: a zone's name ("Europe/Paris", ":Europe/Paris")
 * or a rule ("CET-1CEST,M3.5.0,M10.5.0/3"), never a file's path (":/x", "/x", ".."). The
 * code's local time is then the user's, as on the host. NULL otherwise (the system's zone). */
static char *tz_setting(void)
{
	static char setting[80];
	const char *tz = getenv("TZ");
	size_t n = tz ? strlen(tz) : 0;

	if (n == 0 || n >= sizeof(setting) - 3 || tz[tz[0] == ':'] == '/' || strstr(tz, ".."))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!((tz[i] >= 'A' && tz[i] <= 'Z') || (tz[i] >= 'a' && tz[i] <= 'z') ||
		      (tz[i] >= '0' && tz[i] <= '9') || strchr("_+-/,.:<>", tz[i])))
			return NULL;
	memcpy(setting, "TZ=", 3);
	memcpy(setting + 3, tz, n + 1);
	return setting;
}

/* In the zygote, before exec: stdin and stdout /dev/null, stderr kept (the zygote's start-up
 * errors go to the log), the control socket on fd 3, nothing else, an environment of the time
 * zone only (tz_setting), no blocked signals, death with the supervisor. */
static void zygote_exec(const char *exe, int sock, pid_t supervisor) __attribute__((noreturn));
static void zygote_exec(const char *exe, int sock, pid_t supervisor)
{
	char *const argv[] = {(char *)"safepy-zygote", NULL};
	char *const envp[] = {tz_setting(), NULL};
	sigset_t none;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(sock, ZYGOTE_CONTROL_FD) < 0)
		_exit(127);
	syscall(SYS_close_range, ZYGOTE_CONTROL_FD + 1, ~0U, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor)
		_exit(127);
	execve(exe, argv, envp);
	_exit(127);
}

/* One request: a byte with one fd. Returns the fd, 0 at the end (EOF, error), -1 for a
 * malformed request. */
static int starter_recv(void)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = u.buf,
	                     .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(STARTER_FD, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (byte != STARTER_REQUEST || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || fd < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void starter_main(const char *exe, int sock, pid_t supervisor) __attribute__((noreturn));
static void starter_main(const char *exe, int sock, pid_t supervisor)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* Nothing of the client's: stdin and stdout /dev/null (the client sees EOF when the
	 * supervisor closes them), stderr kept for the zygote. */
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(sock, STARTER_FD) < 0)
		_exit(127);
	syscall(SYS_close_range, STARTER_FD + 1, ~0U, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != supervisor)
		_exit(0);
	for (;;) {
		int32_t reply;
		int fd = starter_recv();
		long pid;

		if (fd == 0)
			_exit(0);
		if (fd < 0) {
			reply = -EINVAL;
		} else {
			/* Like fork(), but the new process is the supervisor's child. */
			pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
			if (pid == 0)
				zygote_exec(exe, fd, supervisor);
			reply = pid < 0 ? -errno : (int32_t)pid;
			close(fd);
		}
		if (send(STARTER_FD, &reply, sizeof(reply), MSG_NOSIGNAL) != sizeof(reply))
			_exit(0);
	}
}

int starter_start(struct starter *s, const char *zygote_exe)
{
	pid_t self = getpid();
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0)
		starter_main(zygote_exe, sv[1], self);
	close(sv[1]);
	s->fd = sv[0];
	s->pid = pid;
	return 0;
}

int starter_spawn(struct starter *s, int sock, pid_t *out)
{
	unsigned char req = STARTER_REQUEST;
	struct pollfd p = {.fd = s->fd, .events = POLLIN};
	int32_t reply;
	ssize_t n;
	int rc;

	if (s->fd < 0)
		return -ECHILD;
	/* A reply that came after an earlier request timed out answers nothing now. */
	while (recv(s->fd, &reply, sizeof(reply), MSG_DONTWAIT) > 0)
		;
	rc = ipc_send_fd(s->fd, &req, 1, sock);
	if (rc < 0)
		return rc == -EPIPE || rc == -ECONNRESET ? -ECHILD : rc;
	/* A fork's time: the loop waits for it, as it waited for its own fork before. */
	do
		rc = poll(&p, 1, STARTER_REPLY_MS);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return rc == 0 ? -ETIMEDOUT : -errno;
	n = recv(s->fd, &reply, sizeof(reply), 0);
	if (n == 0)
		return -ECHILD;
	if (n != sizeof(reply))
		return n < 0 ? -errno : -EIO;
	if (reply <= 0)
		return reply < 0 ? reply : -EIO;
	*out = reply;
	return 0;
}

void starter_stop(struct starter *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->pid = 0;
}
