/* wire.c - the fixed parts of the wire: integers, frame headers, blocking frame I/O for a
 * worker, the fork gate's answer words, the zygote's control messages and the exit codes'
 * names. Functions return 0 or a negative errno. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"

void ipc_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

uint32_t ipc_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ipc_put_u64(unsigned char *p, uint64_t v)
{
	ipc_put_u32(p, (uint32_t)v);
	ipc_put_u32(p + 4, (uint32_t)(v >> 32));
}

uint64_t ipc_get_u64(const unsigned char *p)
{
	return (uint64_t)ipc_get_u32(p) | (uint64_t)ipc_get_u32(p + 4) << 32;
}

void ipc_frame_header_put(unsigned char h[IPC_FRAME_HEADER], char type, uint32_t payload_len)
{
	ipc_put_u32(h, payload_len);
	h[4] = (unsigned char)type;
}

int ipc_frame_header_get(const unsigned char h[IPC_FRAME_HEADER], char *type, uint32_t *payload_len)
{
	uint32_t n = ipc_get_u32(h);

	if (n > IPC_FRAME_MAX)
		return -EMSGSIZE;
	*type = (char)h[4];
	*payload_len = n;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ipc_frame_write(int fd, char type, const void *prefix, size_t plen, const void *body,
                    size_t blen)
{
	unsigned char hdr[IPC_FRAME_HEADER];
	int rc;

	if (plen > IPC_FRAME_MAX || blen > IPC_FRAME_MAX - plen)
		return -EMSGSIZE;
	ipc_frame_header_put(hdr, type, (uint32_t)(plen + blen));
	rc = write_all(fd, hdr, sizeof(hdr));
	if (rc == 0 && plen > 0)
		rc = write_all(fd, prefix, plen);
	if (rc == 0 && blen > 0)
		rc = write_all(fd, body, blen);
	return rc;
}

/* The header of a frame, with the fd that rode on it (recvmsg until the header is whole). */
static int read_header_fd(int fd, unsigned char *hdr, int *passed)
{
	size_t got = 0;

	*passed = -1;
	while (got < IPC_FRAME_HEADER) {
		struct ipc_recv_info info;
		ssize_t n = ipc_recv(fd, hdr + got, IPC_FRAME_HEADER - got, 0, &info);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			return (int)n;
		}
		for (size_t i = 0; i < info.n_fds; i++) {
			if (*passed < 0 && info.n_fds == 1 && !info.truncated) {
				*passed = info.fds[i];
			} else {
				close(info.fds[i]);
				if (*passed >= 0)
					close(*passed);
				*passed = -1;
				return -EPROTO;
			}
		}
		if (n == 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

static int frame_read(int fd, char *type, char **payload, size_t *len, size_t max, int *passed)
{
	unsigned char hdr[IPC_FRAME_HEADER];
	uint32_t n;
	char t, *buf;
	int rc;

	rc = passed ? read_header_fd(fd, hdr, passed) : read_all(fd, hdr, sizeof(hdr));
	if (rc < 0)
		return rc;
	rc = ipc_frame_header_get(hdr, &t, &n);
	if (rc < 0)
		return rc;
	if (n > max)
		return -EMSGSIZE;
	buf = malloc((size_t)n + 1);
	if (!buf)
		return -ENOMEM;
	rc = read_all(fd, buf, n);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*type = t;
	*payload = buf;
	*len = n;
	return 0;
}

int ipc_frame_read(int fd, char *type, char **payload, size_t *len, size_t max)
{
	return frame_read(fd, type, payload, len, max, NULL);
}

int ipc_frame_read_fd(int fd, char *type, char **payload, size_t *len, size_t max, int *passed)
{
	int rc = frame_read(fd, type, payload, len, max, passed);

	if (rc < 0 && *passed >= 0) {
		close(*passed);
		*passed = -1;
	}
	return rc;
}

uint32_t ipc_park_word(enum ipc_park_cmd cmd, uint32_t arg)
{
	return IPC_PARK_WORD | ((uint32_t)cmd & 0x3f) << 24 | (arg & IPC_PARK_ARG_MASK);
}

int ipc_park_decode(long v, enum ipc_park_cmd *cmd, uint32_t *arg)
{
	if (v < (long)IPC_PARK_WORD || v > (long)INT32_MAX)
		return 0;
	*cmd = (enum ipc_park_cmd)(((uint32_t)v >> 24) & 0x3f);
	*arg = (uint32_t)v & IPC_PARK_ARG_MASK;
	return 1;
}

void ipc_zygote_msg_put(unsigned char m[IPC_ZYGOTE_MSG], char type, uint32_t a, uint32_t b)
{
	m[0] = (unsigned char)type;
	ipc_put_u32(m + 1, a);
	ipc_put_u32(m + 5, b);
}

int ipc_zygote_msg_get(const unsigned char *m, size_t len, char *type, uint32_t *a, uint32_t *b)
{
	if (len != IPC_ZYGOTE_MSG)
		return -EINVAL;
	*type = (char)m[0];
	*a = ipc_get_u32(m + 1);
	*b = ipc_get_u32(m + 5);
	return 0;
}

size_t ipc_zygote_fail_put(unsigned char *m, uint32_t index, const char *why, size_t n)
{
	size_t i = 0, k;

	/* Whole characters only; bytes that are not UTF-8 are kept one by one, as they are. */
	while (i < n && i < IPC_ZYGOTE_FAIL_TEXT) {
		k = proto_utf8_seq((const unsigned char *)why + i, n - i);
		k = k ? k : 1;
		if (i + k > IPC_ZYGOTE_FAIL_TEXT)
			break;
		i += k;
	}
	m[0] = (unsigned char)IPC_ZYGOTE_FAIL;
	ipc_put_u32(m + 1, index);
	memcpy(m + 5, why, i);
	return 5 + i;
}

int ipc_zygote_fail_get(const unsigned char *m, size_t n, uint32_t *index, char *why, size_t len)
{
	size_t i = 5, o = 0, k;

	if (n < 5 || n > IPC_ZYGOTE_FAIL_MAX || m[0] != (unsigned char)IPC_ZYGOTE_FAIL || len == 0)
		return -EINVAL;
	while (i < n && o + 1 < len) {
		k = proto_utf8_seq(m + i, n - i);
		/* Control characters (C0, DEL, C1) never reach a terminal through the log. */
		if (k == 0 || (k == 1 && (m[i] < 0x20 || m[i] == 0x7f)) ||
		    (k == 2 && m[i] == 0xc2 && m[i + 1] < 0xa0)) {
			why[o++] = '?';
			i++;
			continue;
		}
		if (o + k >= len)
			break;
		memcpy(why + o, m + i, k);
		o += k;
		i += k;
	}
	why[o] = '\0';
	*index = ipc_get_u32(m + 1);
	return 0;
}

const char *ipc_worker_exit_reason(int code)
{
	switch (code) {
	case WORKER_EXIT_OK:
		return "the worker ended normally";
	case WORKER_EXIT_FDS:
		return "the worker's fds could not be arranged";
	case WORKER_EXIT_SETSID:
		return "setsid failed";
	case WORKER_EXIT_PDEATHSIG:
		return "the parent-death signal could not be set, or the parent was gone";
	case WORKER_EXIT_RLIMIT:
		return "a resource limit could not be set";
	case WORKER_EXIT_SETUID:
		return "could not switch to the sandbox user";
	case WORKER_EXIT_NAMESPACE:
		return "the namespaces could not be created";
	case WORKER_EXIT_CAPS:
		return "the capabilities could not be dropped";
	case WORKER_EXIT_NNP:
		return "no_new_privs could not be set";
	case WORKER_EXIT_LANDLOCK:
		return "Landlock is available but could not be applied";
	case WORKER_EXIT_DUMPABLE:
		return "the worker could not be made dumpable";
	case WORKER_EXIT_SECCOMP:
		return "the seccomp filter could not be loaded";
	case WORKER_EXIT_CHANNEL:
		return "the channel broke or carried a malformed frame";
	case WORKER_EXIT_INTERP:
		return "the interpreter could not produce a result frame";
	case WORKER_EXIT_GATE:
		return "the fork gate could not be loaded, or answered with something unknown";
	case WORKER_EXIT_SIGMASK:
		return "the signal mask could not be cleared";
	case WORKER_EXIT_REFUSED:
		return "the supervisor refused to let it wait: it had not taken its result";
	case WORKER_EXIT_GUARD:
		return "a class the code made or changed could not be guarded (memory ran out), "
		       "and the process ended rather than run on with it";
	case WORKER_EXIT_DICT:
		return "the code changed a dict under its own insert, leaving a key of another "
		       "kind "
		       "than its table's, and the process ended before anything read it";
	case WORKER_EXIT_DEFER:
		return "memory ran out as a finalizer or a free was put off, and the process ended "
		       "rather than run it inside the code that dropped its object";
	}
	return NULL;
}

const char *ipc_zygote_exit_reason(int code)
{
	switch (code) {
	case ZYGOTE_EXIT_SETUP:
		return "its process setup (prctl, chdir, signals or control socket) failed";
	case ZYGOTE_EXIT_PYTHON:
		return "Python or an allowed module could not be initialised";
	case ZYGOTE_EXIT_POLICY:
		return "the seccomp filters could not be built";
	case ZYGOTE_EXIT_CONFIG:
		return "its configuration was missing or malformed";
	}
	return NULL;
}

static void put_u64(unsigned char *p, uint64_t v)
{
	ipc_put_u32(p, (uint32_t)v);
	ipc_put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get_u64(const unsigned char *p)
{
	return (uint64_t)ipc_get_u32(p) | (uint64_t)ipc_get_u32(p + 4) << 32;
}

void ipc_stat_put(unsigned char out[IPC_STAT_BYTES], const struct ipc_stat *st)
{
	ipc_put_u32(out, st->mode);
	ipc_put_u32(out + 4, st->nlink);
	put_u64(out + 8, st->size);
	put_u64(out + 16, (uint64_t)st->atime_ns);
	put_u64(out + 24, (uint64_t)st->mtime_ns);
	put_u64(out + 32, (uint64_t)st->ctime_ns);
	put_u64(out + 40, st->ino);
	put_u64(out + 48, st->dev);
}

int ipc_stat_get(const unsigned char *in, size_t len, struct ipc_stat *st)
{
	if (len != IPC_STAT_BYTES)
		return -EINVAL;
	st->mode = ipc_get_u32(in);
	st->nlink = ipc_get_u32(in + 4);
	st->size = get_u64(in + 8);
	st->atime_ns = (int64_t)get_u64(in + 16);
	st->mtime_ns = (int64_t)get_u64(in + 24);
	st->ctime_ns = (int64_t)get_u64(in + 32);
	st->ino = get_u64(in + 40);
	st->dev = get_u64(in + 48);
	return 0;
}
