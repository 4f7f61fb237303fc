/* frame.c - blocking frame I/O on a worker channel (4-byte big-endian length, type, payload).
 * Used inside the sandbox, so only read(2) and write(2). Returns 0 or a negative errno. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol.h"
#include "worker.h"

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

int frame_write(int fd, char type, const void *payload, size_t len)
{
	unsigned char hdr[FRAME_HEADER + 1];
	int rc;

	if (len >= FRAME_MAX)
		return -EMSGSIZE;
	frame_header_put(hdr, (uint32_t)len + 1);
	hdr[FRAME_HEADER] = (unsigned char)type;
	rc = write_all(fd, hdr, sizeof(hdr));
	if (rc == 0 && len > 0)
		rc = write_all(fd, payload, len);
	return rc;
}

int frame_read(int fd, char *type, char **payload, size_t *len, size_t max)
{
	unsigned char hdr[FRAME_HEADER + 1];
	uint32_t n;
	char *buf;
	int rc;

	rc = read_all(fd, hdr, sizeof(hdr));
	if (rc < 0)
		return rc;
	n = frame_header_get(hdr);
	if (n == 0)
		return -EBADMSG;
	n -= 1;
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
	*type = (char)hdr[FRAME_HEADER];
	*payload = buf;
	*len = n;
	return 0;
}
