/* outq.c - the server's output: whole messages queued in order and written to stdout as fast
 * as the client reads, never blocking the event loop. stdout gets a file description of its
 * own when it is a pipe (so the client's end of a shared description never turns
 * non-blocking); a socket is written with MSG_DONTWAIT; anything else is made non-blocking
 * and put back as it was on close. A few small chunks are made at the start and kept, so that
 * a short message (the server's answer that it ran out of memory) can still be queued when
 * nothing can be allocated. Functions return 0 or -errno. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "supervisor.h"

/* Chunks handed to one writev or sendmsg. */
#define OUTQ_IOV 64

struct outq_chunk {
	STAILQ_ENTRY(outq_chunk) link;
	size_t len, off;
	int spare; /* one of the queue's spares: back to them once written, never freed before */
	char data[];
};

/* A chunk written (or dropped): freed, or back with the spares. */
static void chunk_done(struct outq *q, struct outq_chunk *c)
{
	if (c->spare)
		q->spare[q->n_spare++] = c;
	else
		free(c);
}

/* Make q write to fd (outq_open). */
static int open_fd(struct outq *q, int fd)
{
	struct stat st;
	char path[64];
	int flags, own;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISSOCK(st.st_mode)) {
		q->is_socket = 1;
		return 0;
	}
	if (S_ISFIFO(st.st_mode)) {
		/* Our own open of the pipe: O_NONBLOCK on it touches nobody else. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		own = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (own >= 0) {
			q->fd = q->own_fd = own;
			return 0;
		}
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0)
		return -errno;
	if (!(flags & O_NONBLOCK)) {
		if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
			return -errno;
		q->restore_flags = flags;
	}
	return 0;
}

int outq_open(struct outq *q, int fd)
{
	int rc;

	memset(q, 0, sizeof(*q));
	STAILQ_INIT(&q->chunks);
	q->fd = fd;
	q->own_fd = -1;
	q->restore_flags = -1;
	rc = open_fd(q, fd);
	while (rc == 0 && q->n_spare < OUTQ_SPARES) {
		struct outq_chunk *c = malloc(sizeof(*c) + OUTQ_SPARE_BYTES);
		if (!c) {
			rc = -ENOMEM;
			break;
		}
		c->spare = 1;
		q->spare[q->n_spare++] = c;
	}
	if (rc < 0)
		outq_close(q);
	return rc;
}

void outq_close(struct outq *q)
{
	struct outq_chunk *c;

	while ((c = STAILQ_FIRST(&q->chunks))) {
		STAILQ_REMOVE_HEAD(&q->chunks, link);
		chunk_done(q, c);
	}
	while (q->n_spare > 0)
		free(q->spare[--q->n_spare]);
	q->bytes = 0;
	if (q->restore_flags >= 0)
		(void)fcntl(q->fd, F_SETFL, q->restore_flags);
	if (q->own_fd >= 0)
		close(q->own_fd);
	q->own_fd = -1;
	q->restore_flags = -1;
	q->fd = -1;
}

int outq_push(struct outq *q, const char *data, size_t len, const char *tail, size_t tail_len)
{
	struct outq_chunk *c;

	if (len > SIZE_MAX - sizeof(*c) - tail_len)
		return -ENOMEM;
	c = malloc(sizeof(*c) + len + tail_len);
	if (c)
		c->spare = 0;
	else if (len + tail_len <= OUTQ_SPARE_BYTES && q->n_spare > 0)
		c = q->spare[--q->n_spare];
	else
		return -ENOMEM;
	memcpy(c->data, data, len);
	memcpy(c->data + len, tail, tail_len);
	c->len = len + tail_len;
	c->off = 0;
	STAILQ_INSERT_TAIL(&q->chunks, c, link);
	q->bytes += c->len;
	return 0;
}

size_t outq_bytes(const struct outq *q)
{
	return q->bytes;
}

/* Write what the fd takes now from the queue's head. Returns bytes written, or -errno. */
static ssize_t write_some(struct outq *q)
{
	struct iovec iov[OUTQ_IOV];
	struct outq_chunk *c;
	int n = 0;
	ssize_t w;

	STAILQ_FOREACH(c, &q->chunks, link)
	{
		if (n == OUTQ_IOV)
			break;
		iov[n].iov_base = c->data + c->off;
		iov[n].iov_len = c->len - c->off;
		n++;
	}
	do {
		if (q->is_socket) {
			struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
			w = sendmsg(q->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		} else {
			w = writev(q->fd, iov, n);
		}
	} while (w < 0 && errno == EINTR);
	return w < 0 ? -errno : w;
}

int outq_flush(struct outq *q)
{
	while (!STAILQ_EMPTY(&q->chunks)) {
		ssize_t w = write_some(q);
		size_t left;

		if (w == -EAGAIN)
			return 1;
		if (w < 0)
			return (int)w;
		if (w == 0)
			return -EPIPE;
		left = (size_t)w;
		q->bytes -= left;
		while (left > 0) {
			struct outq_chunk *c = STAILQ_FIRST(&q->chunks);
			size_t k = c->len - c->off < left ? c->len - c->off : left;

			c->off += k;
			left -= k;
			if (c->off == c->len) {
				STAILQ_REMOVE_HEAD(&q->chunks, link);
				chunk_done(q, c);
			}
		}
	}
	return 0;
}

int outq_fd(const struct outq *q)
{
	return q->fd;
}
