/* test_outq.c - the server's output queue (supervisor/outq.c): whole messages, in order,
 * written without blocking to a pipe, a socket or anything else, and stdout's own file
 * description left as it was. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor.h"

/* Read everything the pipe or socket holds now into buf (grows); returns the bytes read. */
static size_t drain(int fd, char **buf, size_t *len)
{
	char chunk[65536];
	size_t got = 0;
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		*buf = realloc(*buf, *len + (size_t)n + 1);
		cr_assert_not_null(*buf);
		memcpy(*buf + *len, chunk, (size_t)n);
		*len += (size_t)n;
		(*buf)[*len] = '\0';
		got += (size_t)n;
	}
	return got;
}

/* Push 1000 numbered messages of 1 KB into q (on the write end of rd's pipe or socket), write
 * them out as the reader takes them, and check that every byte arrived in order. */
static void fill_and_drain(struct outq *q, int rd)
{
	char msg[1024], *buf = NULL;
	size_t len = 0, total = 0;
	int rc, blocked = 0;

	cr_assert_eq(fcntl(rd, F_SETFL, O_NONBLOCK), 0);
	for (int i = 0; i < 1000; i++) {
		memset(msg, 'a' + i % 26, sizeof(msg));
		snprintf(msg, 16, "%06d", i);
		cr_assert_eq(outq_push(q, msg, sizeof(msg) - 1, "\n", 1), 0);
		total += sizeof(msg);
		rc = outq_flush(q);
		cr_assert(rc == 0 || rc == 1, "flush: %d", rc);
		blocked |= rc == 1;
	}
	cr_assert(blocked, "1 MB went into a pipe nobody read");
	cr_assert_gt(outq_bytes(q), 0);
	cr_assert_lt(outq_bytes(q), total);
	while ((rc = outq_flush(q)) == 1)
		drain(rd, &buf, &len);
	cr_assert_eq(rc, 0);
	cr_assert_eq(outq_bytes(q), 0);
	drain(rd, &buf, &len);
	cr_assert_eq(len, total, "%zu of %zu bytes", len, total);
	for (int i = 0; i < 1000; i++) {
		char want[16];

		snprintf(want, sizeof(want), "%06d", i);
		cr_assert_eq(memcmp(buf + (size_t)i * 1024, want, 6), 0, "message %d out of place",
		             i);
		cr_assert_eq(buf[(size_t)i * 1024 + 1023], '\n');
	}
	free(buf);
}

Test(outq, a_pipe_gets_its_own_nonblocking_description)
{
	struct outq q;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(outq_open(&q, p[1]), 0);
	cr_assert_neq(outq_fd(&q), p[1], "a pipe is opened again");
	cr_assert(fcntl(outq_fd(&q), F_GETFL) & O_NONBLOCK);
	cr_assert_not(fcntl(p[1], F_GETFL) & O_NONBLOCK, "the shared description stays blocking");
	fill_and_drain(&q, p[0]);
	outq_close(&q);
	cr_assert_eq(outq_fd(&q), -1);
	cr_assert_not(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	close(p[0]);
	close(p[1]);
}

Test(outq, a_socket_is_written_without_blocking_and_left_as_it_was)
{
	struct outq q;
	int sv[2], sndbuf = 4096;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	cr_assert_eq(outq_open(&q, sv[1]), 0);
	cr_assert_eq(outq_fd(&q), sv[1]);
	cr_assert_not(fcntl(sv[1], F_GETFL) & O_NONBLOCK, "MSG_DONTWAIT, not O_NONBLOCK");
	fill_and_drain(&q, sv[0]);
	outq_close(&q);
	close(sv[0]);
	close(sv[1]);
}

Test(outq, anything_else_is_nonblocking_until_closed)
{
	struct outq q;
	int fd = open("/dev/null", O_WRONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(outq_open(&q, fd), 0);
	cr_assert_eq(outq_fd(&q), fd);
	cr_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
	cr_assert_eq(outq_push(&q, "x", 1, "\n", 1), 0);
	cr_assert_eq(outq_flush(&q), 0);
	outq_close(&q);
	cr_assert_not(fcntl(fd, F_GETFL) & O_NONBLOCK, "put back as it was");
	close(fd);
}

Test(outq, a_reader_that_left_is_epipe_and_nothing_is_lost_before)
{
	struct outq q;
	char buf[16] = {0};
	int p[2];

	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(outq_open(&q, p[1]), 0);
	cr_assert_eq(outq_push(&q, "one", 3, "\n", 1), 0);
	cr_assert_eq(outq_flush(&q), 0);
	cr_assert_eq(read(p[0], buf, sizeof(buf)), 4);
	cr_assert_str_eq(buf, "one\n");
	close(p[0]);
	cr_assert_eq(outq_push(&q, "two", 3, "\n", 1), 0);
	cr_assert_eq(outq_flush(&q), -EPIPE);
	outq_close(&q);
	close(p[1]);
}
