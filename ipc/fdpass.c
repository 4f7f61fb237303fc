/* fdpass.c - sendmsg of segments with one fd attached, and recvmsg that returns the attached fds and the
 * sender's pid (SCM_CREDENTIALS). Functions return 0/bytes or a negative errno. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "ipc.h"

ssize_t ipc_sendv_fd(int sock, const struct iovec *iov, size_t n, int fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr mh = {.msg_iov = (struct iovec *)(uintptr_t)iov, .msg_iovlen = n};
	ssize_t k;

	if (fd >= 0) {
		struct cmsghdr *c;
		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		k = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (k < 0 && errno == EINTR);
	return k < 0 ? -errno : k;
}

int ipc_send_fd(int sock, const void *buf, size_t len, int fd)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	ssize_t n = ipc_sendv_fd(sock, &iov, 1, fd, 0);

	if (n < 0)
		return (int)n;
	/* A part of the message would leave a stream out of step: fail, never resend. */
	return n == (ssize_t)len ? 0 : -EPIPE;
}

ssize_t ipc_recv(int sock, void *buf, size_t len, int flags, struct ipc_recv_info *info)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
	                    .msg_iovlen = 1,
	                    .msg_control = control.buf,
	                    .msg_controllen = sizeof(control.buf)};
	ssize_t n;

	memset(info, 0, sizeof(*info));
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			info->sender = uc.pid;
		} else if (c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (info->n_fds < sizeof(info->fds) / sizeof(info->fds[0])) {
					info->fds[info->n_fds++] = fd;
				} else {
					(void)close(fd);
					info->truncated = 1;
				}
			}
		}
	}
	if (mh.msg_flags & MSG_CTRUNC)
		info->truncated = 1;
	return n;
}
