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

/* Open a module's source: "a.b.c" is a/b/c.py or a/b/c/__init__.py beneath the root of its
 * top-level package (a package the zygote loaded), else beneath the standard library. Returns
 * the fd, with its directory fd and its path relative to it (rel, relsize bytes) and the
 * root's path (*base, borrowed); or -errno. */
static int module_open(const struct module_roots *m, const char *name, int *dirfd, char *rel,
                       size_t relsize, const char **base)
{
	char top[256];
	size_t tlen = strcspn(name, ".");
	const char *rest = name[tlen] ? name + tlen + 1 : "";
	int rc = -ENOENT;

	*base = m->roots.stdlib;
	*dirfd = m->stdlib_fd;
	memcpy(top, name, tlen);
	top[tlen] = '\0';
	for (size_t i = 0; i < m->roots.n; i++)
		if (strcmp(m->roots.names[i], top) == 0) {
			*dirfd = m->fds[i];
			*base = m->roots.dirs[i];
			name = rest; /* relative to the package's own directory */
			break;
		}
	if (*dirfd < 0 || !*base)
		return -ENOENT;
	for (int pkg = 0; pkg < 2 && rc == -ENOENT; pkg++) {
		int n;
		char *p;
		if (*name == '\0' && !pkg)
			continue; /* the package itself: only its __init__.py */
		n = snprintf(rel, relsize, "%s%s%s", name, *name ? (pkg ? "/" : ".py") : "",
		             pkg ? "__init__.py" : "");
		if (n < 0 || (size_t)n >= relsize)
			return -ENAMETOOLONG;
		for (p = rel; (p = strchr(p, '.')) && p < rel + n - 3; p++)
			*p = '/';
		rc = open_beneath(*dirfd, rel);
		if (rc == -ENOTDIR)
			rc = -ENOENT;
	}
	return rc;
}

/* The cached bytecode of the source rel (open as fd) beneath dirfd, when it is valid for it:
 * __pycache__/<stem>.<tag>.pyc with this interpreter's magic number, timestamp flags, and the
 * source's mtime and size. Returns 0 with *out (malloc'd, the whole file) and *len, or -errno
 * (-ESTALE when it is not valid). */
static int pyc_read(const struct module_roots *m, int dirfd, const char *rel, int fd, char **out,
                    size_t *len)
{
	const char *slash = strrchr(rel, '/'), *stem = slash ? slash + 1 : rel;
	char pyc[320];
	struct stat st;
	unsigned char *h;
	int pfd, rc, n;

	if (!m->roots.cache_tag || fstat(fd, &st) < 0)
		return -ENOENT;
	n = snprintf(pyc, sizeof(pyc), "%.*s__pycache__/%.*s.%s.pyc", (int)(stem - rel), rel,
	             (int)(strlen(stem) - 3), stem, m->roots.cache_tag);
	if (n < 0 || (size_t)n >= sizeof(pyc))
		return -ENAMETOOLONG;
	pfd = open_beneath(dirfd, pyc);
	if (pfd < 0)
		return pfd;
	rc = read_file(pfd, ENGINE_MODULE_MAX, out, len);
	close(pfd);
	if (rc < 0)
		return rc;
	h = (unsigned char *)*out;
	if (*len < IPC_PYC_HEADER || memcmp(h, m->roots.magic, 4) != 0 || ipc_get_u32(h + 4) != 0 ||
	    ipc_get_u32(h + 8) != (uint32_t)st.st_mtime ||
	    ipc_get_u32(h + 12) != (uint32_t)st.st_size) {
		free(*out);
		return -ESTALE;
	}
	return 0;
}

/* IPC_REQ_MODULE and IPC_REQ_MODULE_CODE. */
static int request_module(struct chain *c, uint32_t id, const char *data, size_t len, int code)
{
	const struct module_roots *m = &c->e->modules;
	char name[256], rel[300], *path = NULL, *body = NULL;
	const char *base = NULL;
	size_t n = 0, skip = 0;
	int rc, fd, dirfd = -1;
	char kind = IPC_MODULE_SOURCE;

	if (!ipc_module_name_valid(data, len))
		return -EINVAL;
	memcpy(name, data, len);
	name[len] = '\0';
	fd = rc = module_open(m, name, &dirfd, rel, sizeof(rel), &base);
	if (fd >= 0) {
		if (code && pyc_read(m, dirfd, rel, fd, &body, &n) == 0) {
			kind = IPC_MODULE_CODE;
			skip = IPC_PYC_HEADER;
			rc = 0;
		} else {
			rc = read_file(fd, ENGINE_MODULE_MAX, &body, &n);
		}
		close(fd);
	}
	if (rc == 0 && asprintf(&path, "%s/%s%c%c", base, rel, '\0', kind) < 0) {
		path = NULL;
		rc = -ENOMEM;
	}
	if (rc == 0 && c->served + n > ENGINE_SERVED_PER_CALL)
		rc = -EDQUOT;
	if (rc < 0) {
		reply(c, id, rc, NULL, 0, NULL, 0);
	} else {
		/* path, its NUL, and for IPC_REQ_MODULE_CODE the kind byte */
		size_t plen = strlen(path) + 1 + (code ? 1 : 0);
		c->served += n;
		reply(c, id, 0, path, plen, body + skip, n - skip);
	}
	free(path);
	free(body);
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
	case IPC_REQ_MODULE_CODE:
		return request_module(c, id, payload + IPC_REQUEST_HEADER, len - IPC_REQUEST_HEADER,
		                      kind == IPC_REQ_MODULE_CODE);
	default:
		return -EINVAL;
	}
}
