/* connect.c - `safepy connect [SOCKET]`: relays stdin to a Unix stream socket and the socket
 * to stdout, so an MCP client (or ssh) reaches a socket-activated server as a stdio server.
 * Bounded buffers both ways; stdin EOF half-closes the socket, socket EOF ends the relay once
 * stdout has everything. Nothing but the server's bytes reaches stdout; errors go to stderr.
 * connect_main returns the exit status: 0 when the server closed the connection, 1 on error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor.h"

#define RELAY_BUF    65536
/* stdin and stdout are shared with whoever started us, so they stay blocking (setting
 * O_NONBLOCK would change the caller's file description too). After POLLOUT a pipe has a
 * free slot, and a write of at most PIPE_BUF bytes into it does not block. */
#define STDOUT_CHUNK 4096

struct pipebuf {
	char data[RELAY_BUF];
	size_t off, len; /* bytes [off, off + len) wait to be written */
	int eof;         /* the source ended */
};

static size_t pipebuf_room(const struct pipebuf *b)
{
	return sizeof(b->data) - b->off - b->len;
}

/* Read what is there into the free tail (one read after POLLIN cannot block). Returns 0,
 * or -errno. */
static int pipebuf_fill(struct pipebuf *b, int fd)
{
	ssize_t n;

	if (b->len == 0)
		b->off = 0;
	else if (pipebuf_room(b) == 0) {
		memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
	}
	n = read(fd, b->data + b->off + b->len, pipebuf_room(b));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		b->eof = 1;
	b->len += (size_t)n;
	return 0;
}

/* Write up to max bytes of what waits. Returns 0, or -errno. */
static int pipebuf_drain(struct pipebuf *b, int fd, size_t max)
{
	size_t want = b->len < max ? b->len : max;
	ssize_t n = write(fd, b->data + b->off, want);

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	b->off += (size_t)n;
	b->len -= (size_t)n;
	return 0;
}

static int connect_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A Unix stream connect completes at once or fails (EAGAIN: backlog full). */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static const char *connect_hint(int err)
{
	switch (err) {
	case -EACCES:
		return " (is your user in the safepy group? `id` lists your groups; log in again "
		       "after being added)";
	case -ENOENT:
	case -ECONNREFUSED:
		return " (is safepy.socket running? `systemctl status safepy.socket`)";
	case -EAGAIN:
		return " (the server's backlog is full; try again)";
	default:
		return "";
	}
}

int connect_main(const struct config *cfg)
{
	struct pipebuf *up = NULL, *down = NULL; /* stdin -> socket, socket -> stdout */
	const char *path = cfg->connect_path ? cfg->connect_path : SAFEPY_SOCKET_PATH;
	int sock, rc = 1, wr_shut = 0, err0;

	signal(SIGPIPE, SIG_IGN); /* a closed stdout or socket is an error return, not a kill */
	sock = connect_socket(path);
	if (sock < 0) {
		fprintf(stderr, "safepy connect: %s: %s%s\n", path, strerror(-sock),
		        connect_hint(sock));
		return 1;
	}
	up = calloc(1, sizeof(*up));
	down = calloc(1, sizeof(*down));
	if (!up || !down) {
		fprintf(stderr, "safepy connect: out of memory\n");
		goto out;
	}
	/* Connected: from here it only relays bytes (confine.c). */
	err0 = confine_relay();
	if (err0 < 0) {
		fprintf(stderr, "safepy connect: could not confine the relay: %s\n",
		        strerror(-err0));
		goto out;
	}
	for (;;) {
		struct pollfd p[3] = {
		    {.fd = -1, .events = POLLIN},  /* stdin */
		    {.fd = sock, .events = 0},     /* socket */
		    {.fd = -1, .events = POLLOUT}, /* stdout */
		};
		int err;

		if (down->eof && down->len == 0) {
			rc = 0; /* the server closed and stdout has all it sent */
			break;
		}
		if (up->eof && up->len == 0 && !wr_shut) {
			/* The client is done: tell the server (it sees EOF and ends the session)
			 * but keep reading its answers. */
			if (shutdown(sock, SHUT_WR) < 0 && errno != ENOTCONN) {
				fprintf(stderr, "safepy connect: shutdown: %s\n", strerror(errno));
				break;
			}
			wr_shut = 1;
		}
		if (!up->eof && pipebuf_room(up) + up->off > 0)
			p[0].fd = STDIN_FILENO;
		if (up->len > 0)
			p[1].events |= POLLOUT;
		if (!down->eof && pipebuf_room(down) + down->off > 0)
			p[1].events |= POLLIN;
		if (down->len > 0)
			p[2].fd = STDOUT_FILENO;
		if (p[1].events == 0)
			p[1].fd = -1; /* else a hung-up socket would wake poll at once, forever */
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "safepy connect: poll: %s\n", strerror(errno));
			break;
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			err = pipebuf_fill(up, STDIN_FILENO);
			if (err) {
				fprintf(stderr, "safepy connect: stdin: %s\n", strerror(-err));
				break;
			}
		}
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) && (p[1].events & POLLIN)) {
			err = pipebuf_fill(down, sock);
			if (err == -ECONNRESET)
				down->eof = 1; /* the server went away: flush what it sent */
			else if (err) {
				fprintf(stderr, "safepy connect: %s: %s\n", path, strerror(-err));
				break;
			}
		}
		if ((p[1].revents & (POLLOUT | POLLERR | POLLHUP)) && up->len > 0) {
			err = pipebuf_drain(up, sock, up->len);
			if (err == -EPIPE || err == -ECONNRESET) {
				/* The server stopped reading: drop the rest, keep its answers. */
				up->eof = 1;
				up->len = 0;
				wr_shut = 1;
			} else if (err) {
				fprintf(stderr, "safepy connect: %s: %s\n", path, strerror(-err));
				break;
			}
		}
		if (p[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
			err = pipebuf_drain(down, STDOUT_FILENO, STDOUT_CHUNK);
			if (err) {
				/* The client stopped reading: nobody is left to answer. */
				if (err != -EPIPE)
					fprintf(stderr, "safepy connect: stdout: %s\n",
					        strerror(-err));
				rc = err == -EPIPE ? 0 : 1;
				break;
			}
		}
		if (p[2].revents & POLLNVAL || p[0].revents & POLLNVAL) {
			fprintf(stderr, "safepy connect: stdin or stdout is closed\n");
			break;
		}
	}
out:
	free(down);
	free(up);
	close(sock);
	return rc;
}
