/* broker.c - what a runner may ask the supervisor for while it runs a call (ipc.h, requests),
 * and the answers. The worker opens no file; the supervisor opens only beneath directories it
 * trusts (openat2 with RESOLVE_BENEATH and no magic links, a regular file, bounded), and within
 * a quota per call. A request that is not well formed is a protocol violation (the caller
 * kills the runner); one that is well formed but cannot be served is answered with an errno.
 * Functions return 0 or -errno. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "engine_internal.h"

/* ---- module roots ------------------------------------------------------------------------- */

void broker_roots_clear(struct module_roots *m)
{
	if (m->stdlib_fd >= 0)
		close(m->stdlib_fd);
	for (size_t i = 0; i < m->roots.n; i++)
		if (m->fds && m->fds[i] >= 0)
			close(m->fds[i]);
	free(m->fds);
	ipc_roots_clear(&m->roots);
	m->fds = NULL;
	m->stdlib_fd = -1;
}

int broker_roots_set(struct module_roots *m, const char *msg, size_t len)
{
	struct ipc_roots r;
	int rc = ipc_roots_decode(msg, len, &r);

	if (rc < 0)
		return rc;
	broker_roots_clear(m);
	m->roots = r;
	m->fds = calloc(r.n + 1, sizeof(int));
	if (!m->fds) {
		broker_roots_clear(m);
		return -ENOMEM;
	}
	/* O_PATH: a handle to resolve beneath, nothing read through it. */
	m->stdlib_fd = open(r.stdlib, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; i < r.n; i++)
		m->fds[i] = open(r.dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

/* ---- replies ------------------------------------------------------------------------------ */

static void reply(struct chain *c, uint32_t id, int status, const void *a, size_t alen,
                  const void *b, size_t blen)
{
	unsigned char head[IPC_REPLY_HEADER], *buf;

	ipc_put_u32(head, id);
	ipc_put_u32(head + 4, (uint32_t)status);
	if (alen == 0 || (buf = malloc(sizeof(head) + alen)) == NULL) {
		if (channel_send(&c->ch, IPC_FRAME_REPLY, head, sizeof(head), b, blen) < 0)
			proc_kill(
			    c->runner); /* no memory to answer: the call crashes, not the server */
		return;
	}
	memcpy(buf, head, sizeof(head));
	memcpy(buf + sizeof(head), a, alen);
	if (channel_send(&c->ch, IPC_FRAME_REPLY, buf, sizeof(head) + alen, b, blen) < 0)
		proc_kill(c->runner);
	free(buf);
}

/* ---- modules ------------------------------------------------------------------------------ */

/* Open rel beneath dirfd: no escape through "..", symlinks or magic links, not blocking on a
 * FIFO. Returns an fd or -errno. */
static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Read a regular file of at most max bytes. Returns 0 with *out (malloc'd) and *len, or
 * -errno (-EFBIG when larger, -EISDIR/-EINVAL for another kind of file). */
static int read_file(int fd, size_t max, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/* Find a module's source: "a.b.c" is a/b/c.py or a/b/c/__init__.py beneath the root of its
 * top-level package (an allowed package), else beneath the standard library. */
static int module_source(const struct module_roots *m, const char *name, char **path, char **src,
                         size_t *len)
{
	char rel[300], top[256];
	size_t tlen = strcspn(name, ".");
	const char *rest = name[tlen] ? name + tlen + 1 : "";
	const char *base = m->roots.stdlib;
	int dirfd = m->stdlib_fd, rc = -ENOENT;

	memcpy(top, name, tlen);
	top[tlen] = '\0';
	for (size_t i = 0; i < m->roots.n; i++)
		if (strcmp(m->roots.names[i], top) == 0) {
			dirfd = m->fds[i];
			base = m->roots.dirs[i];
			name = rest; /* relative to the package's own directory */
			break;
		}
	if (dirfd < 0 || !base)
		return -ENOENT;
	for (int pkg = 0; pkg < 2 && rc == -ENOENT; pkg++) {
		int fd, n;
		char *p;
		if (*name == '\0' && !pkg)
			continue; /* the package itself: only its __init__.py */
		n = snprintf(rel, sizeof(rel), "%s%s%s", name, *name ? (pkg ? "/" : ".py") : "",
		             pkg ? "__init__.py" : "");
		if (n < 0 || (size_t)n >= sizeof(rel))
			return -ENAMETOOLONG;
		for (p = rel; (p = strchr(p, '.')) && p < rel + n - 3; p++)
			*p = '/';
		fd = open_beneath(dirfd, rel);
		if (fd < 0) {
			rc = fd == -ENOENT || fd == -ENOTDIR ? -ENOENT : fd;
			continue;
		}
		rc = read_file(fd, ENGINE_MODULE_MAX, src, len);
		close(fd);
		if (rc == 0 && asprintf(path, "%s/%s", base, rel) < 0) {
			free(*src);
			rc = -ENOMEM;
		}
	}
	return rc;
}

static int request_module(struct chain *c, uint32_t id, const char *data, size_t len)
{
	char name[256], *path = NULL, *src = NULL;
	size_t n = 0;
	int rc;

	if (!ipc_module_name_valid(data, len))
		return -EINVAL;
	memcpy(name, data, len);
	name[len] = '\0';
	rc = module_source(&c->e->modules, name, &path, &src, &n);
	if (rc == 0 && c->served + n > ENGINE_SERVED_PER_CALL)
		rc = -EDQUOT;
	if (rc < 0) {
		reply(c, id, rc, NULL, 0, NULL, 0);
	} else {
		c->served += n;
		reply(c, id, 0, path, strlen(path) + 1, src, n);
	}
	free(path);
	free(src);
	return 0;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

int broker_request(struct chain *c, const char *payload, size_t len)
{
	uint32_t id;
	uint8_t kind;

	if (len < IPC_REQUEST_HEADER)
		return -EINVAL;
	id = ipc_get_u32((const unsigned char *)payload);
	kind = (uint8_t)payload[4];
	if (++c->requests > ENGINE_REQUESTS_PER_CALL) {
		reply(c, id, -EDQUOT, NULL, 0, NULL, 0);
		return 0;
	}
	switch (kind) {
	case IPC_REQ_MODULE:
		return request_module(c, id, payload + IPC_REQUEST_HEADER,
		                      len - IPC_REQUEST_HEADER);
	default:
		return -EINVAL;
	}
}
