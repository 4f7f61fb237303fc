/* broker.c - what a runner may ask the supervisor for while it runs a call (ipc.h, requests),
 * and the answers. The worker opens no file; the supervisor opens only beneath directories it
 * trusts (openat2 with RESOLVE_BENEATH and no magic links, a regular file, bounded), and within
 * a quota per call. A request that is not well formed is a protocol violation (the caller
 * kills the runner); one that is well formed but cannot be served is answered with an errno.
 * Functions return 0 or -errno. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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

/* Send a reply: its header, then a and b (either may be empty), with fd attached when it is
 * not -1 (closed here either way). No memory to build it: an ENOMEM reply instead. No room
 * to send it: the call ends (a runner that does not read its answers, or the server short
 * of memory), not the server. */
static void reply_fd(struct chain *c, uint32_t id, int status, const void *a, size_t alen,
                     const void *b, size_t blen, int fd)
{
	unsigned char small[512], *buf = small;
	int rc;

	if (IPC_REPLY_HEADER + alen > sizeof(small) && !(buf = malloc(IPC_REPLY_HEADER + alen))) {
		buf = small;
		status = -ENOMEM;
		alen = blen = 0;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	ipc_put_u32(buf, id);
	ipc_put_u32(buf + 4, (uint32_t)status);
	if (alen)
		memcpy(buf + IPC_REPLY_HEADER, a, alen);
	rc = channel_send_fd(&c->ch, IPC_FRAME_REPLY, buf, IPC_REPLY_HEADER + alen, b, blen, fd);
	if (buf != small)
		free(buf);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		chain_kill_runner(c, rc == -ENOMEM ? KILL_RESOURCE : KILL_PROTOCOL);
}

static void reply(struct chain *c, uint32_t id, int status, const void *a, size_t alen,
                  const void *b, size_t blen)
{
	reply_fd(c, id, status, a, alen, b, blen, -1);
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

/* ---- the workspace ------------------------------------------------------------------------ */

#define WS_TMP_PREFIX ".safepy-tmp-"

int broker_workspace_open(struct workspace *ws, const char *dir, int writable)
{
	char *real;

	ws->fd = -1;
	ws->path = NULL;
	ws->writable = writable;
	if (!dir)
		return 0;
	real = realpath(dir, NULL);
	if (!real)
		return -errno;
	ws->fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ws->fd < 0) {
		int err = -errno;
		free(real);
		return err;
	}
	ws->path = real;
	return 0;
}

void broker_workspace_close(struct workspace *ws)
{
	if (ws->fd >= 0)
		close(ws->fd);
	free(ws->path);
	ws->fd = -1;
	ws->path = NULL;
}

static int valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k) {
		k = proto_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0)
			return 0;
	}
	return 1;
}

/* A request's path as a path relative to the workspace, into rel. Absolute paths must be
 * the workspace or beneath it (as text: the resolution beneath it comes later). Returns 0, or
 * -ENOENT (empty), -ENAMETOOLONG, -EINVAL (NUL, not UTF-8), -EACCES (outside it, or one of
 * the hidden files of writes in progress). */
static int ws_relative(const struct workspace *ws, const char *p, size_t n, char *rel, size_t cap)
{
	size_t wl = strlen(ws->path);

	if (n == 0)
		return -ENOENT;
	if (n >= PATH_MAX || n >= cap)
		return -ENAMETOOLONG;
	if (memchr(p, '\0', n) || !valid_utf8(p, n))
		return -EINVAL;
	if (p[0] == '/') {
		if (n < wl || memcmp(p, ws->path, wl) != 0 || (n > wl && p[wl] != '/'))
			return -EACCES;
		p += wl;
		n -= wl;
		while (n > 0 && *p == '/') {
			p++;
			n--;
		}
	}
	if (n == 0) {
		strcpy(rel, ".");
		return 0;
	}
	memcpy(rel, p, n);
	rel[n] = '\0';
	/* Pending writes' hidden files are the supervisor's, never named by a call. */
	for (const char *q = rel; q; q = strchr(q, '/')) {
		q += *q == '/';
		if (strncmp(q, WS_TMP_PREFIX, strlen(WS_TMP_PREFIX)) == 0)
			return -EACCES;
	}
	return 0;
}

/* Resolve beneath the workspace: no "..", absolute symbolic link or magic link leads out.
 * A way out is EACCES, as the rest of the workspace's refusals. */
static int ws_open(const struct workspace *ws, const char *rel, int flags)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, ws->fd, rel, &how, sizeof(how));

	if (fd >= 0)
		return (int)fd;
	return errno == EXDEV || errno == ELOOP ? -EACCES : -errno;
}

static void stat_reply(struct chain *c, uint32_t id, const struct stat *st, int fd)
{
	struct ipc_stat s = {
	    .mode = st->st_mode,
	    .nlink = (uint32_t)st->st_nlink,
	    .size = (uint64_t)st->st_size,
	    .atime_ns = (int64_t)st->st_atim.tv_sec * 1000000000 + st->st_atim.tv_nsec,
	    .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
	    .ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	    .ino = st->st_ino,
	    .dev = st->st_dev,
	};
	unsigned char buf[IPC_STAT_BYTES];

	ipc_stat_put(buf, &s);
	reply_fd(c, id, 0, buf, sizeof(buf), NULL, 0, fd);
}

/* The call's pending write of rel, or NULL. */
static struct ws_file *pending(struct chain *c, const char *rel)
{
	for (size_t i = 0; i < c->n_writes; i++)
		if (strcmp(c->writes[i].rel, rel) == 0)
			return &c->writes[i];
	return NULL;
}

static void write_free(struct ws_file *f, int remove)
{
	if (remove && f->dirfd >= 0)
		(void)unlinkat(f->dirfd, f->tmp, 0);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->name);
	free(f->rel);
	memset(f, 0, sizeof(*f));
	f->dirfd = -1;
}

/* rel's directory, opened beneath the workspace, and its last component (a name of its own:
 * not ".", "..", or empty). */
static int ws_parent(const struct workspace *ws, const char *rel, char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	int fd;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EISDIR;
	if (slash) {
		memcpy(dir, rel, (size_t)(slash - rel));
		dir[slash - rel] = '\0';
	} else {
		strcpy(dir, ".");
	}
	fd = ws_open(ws, *dir ? dir : "/", O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	*name = strdup(base);
	if (!*name) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}

static int copy_into(int dst, int src)
{
	for (;;) {
		ssize_t n = copy_file_range(src, NULL, dst, NULL, 1 << 30, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
	}
}

/* A file the call writes: a hidden file beside the target (filled with the target's bytes
 * for "a" and "r+"), given to the worker; moved over the target when the call commits. */
static int ws_open_write(struct chain *c, const char *rel, enum ipc_open_mode mode, int *out,
                         struct stat *st)
{
	const struct workspace *ws = &c->e->ws;
	struct ws_file f = {.dirfd = -1}, *old, *grown;
	unsigned char rnd[6];
	struct stat cur;
	int exists, fd = -1, rc;

	if (!ws->writable)
		return -EROFS;
	if (c->n_writes >= ENGINE_WS_FILES_PER_CALL && !pending(c, rel))
		return -EDQUOT;
	/* The write keeps its directory open until the call ends: not from the fds the
	 * supervisor keeps for its own use. */
	if (engine_fd_room(c->e) < 1)
		return -EMFILE;
	f.dirfd = ws_parent(ws, rel, &f.name);
	if (f.dirfd < 0)
		return f.dirfd;
	exists = fstatat(f.dirfd, f.name, &cur, AT_SYMLINK_NOFOLLOW) == 0;
	rc = -EACCES; /* never replace a link, a directory, a device */
	if (exists && !S_ISREG(cur.st_mode))
		goto fail;
	rc = -EEXIST;
	if (exists && mode == IPC_OPEN_CREATE)
		goto fail;
	rc = -ENOENT;
	if (!exists && mode == IPC_OPEN_UPDATE && !pending(c, rel))
		goto fail;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		rc = -EIO;
		goto fail;
	}
	snprintf(f.tmp, sizeof(f.tmp), WS_TMP_PREFIX "%d-%u-%02x%02x%02x%02x%02x%02x",
	         (int)getpid(), c->id, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	fd = openat(f.dirfd, f.tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	if (mode == IPC_OPEN_APPEND || mode == IPC_OPEN_UPDATE) {
		/* What the call wrote before, or what the file holds. */
		old = pending(c, rel);
		int src = old      ? openat(old->dirfd, old->tmp, O_RDONLY | O_CLOEXEC)
		          : exists ? openat(f.dirfd, f.name,
		                            O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
		                   : -2;
		if (src == -1 || (src >= 0 && copy_into(fd, src) < 0)) {
			rc = -errno ? -errno : -EIO;
			if (src >= 0)
				close(src);
			goto fail;
		}
		if (src >= 0)
			close(src);
		if (mode == IPC_OPEN_APPEND && fcntl(fd, F_SETFL, O_APPEND) < 0) {
			rc = -errno;
			goto fail;
		}
	}
	f.rel = strdup(rel);
	f.exclusive = mode == IPC_OPEN_CREATE;
	if (!f.rel || fstat(fd, st) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	old = pending(c, rel);
	if (old) {
		write_free(old, 1); /* written again: the last one counts */
		*old = f;
	} else {
		grown = realloc(c->writes, (c->n_writes + 1) * sizeof(*grown));
		if (!grown) {
			rc = -ENOMEM;
			goto fail;
		}
		c->writes = grown;
		c->writes[c->n_writes++] = f;
	}
	*out = fd;
	return 0;
fail:
	if (fd >= 0) {
		close(fd);
		(void)unlinkat(f.dirfd, f.tmp, 0);
	}
	f.tmp[0] = '\0';
	write_free(&f, 0);
	return rc;
}

static int request_open(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	char rel[PATH_MAX];
	struct stat st;
	uint32_t mode;
	struct ws_file *w;
	int fd = -1, rc;

	if (len < 4)
		return -EINVAL;
	mode = ipc_get_u32((const unsigned char *)data);
	if (ws->fd < 0)
		rc = -EACCES;
	else if (mode > IPC_OPEN_UPDATE)
		rc = -EINVAL;
	else if (c->fds_given >= ENGINE_WS_FDS_PER_CALL)
		rc = -EMFILE;
	else
		rc = ws_relative(ws, data + 4, len - 4, rel, sizeof(rel));
	if (rc == 0 && mode != IPC_OPEN_READ) {
		rc = ws_open_write(c, rel, (enum ipc_open_mode)mode, &fd, &st);
	} else if (rc == 0) {
		/* What the call itself wrote, or the file. Non-blocking: a FIFO never hangs us. */
		w = pending(c, rel);
		fd = w ? openat(w->dirfd, w->tmp, O_RDONLY | O_CLOEXEC)
		       : ws_open(ws, rel, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
		if (fd < 0)
			rc = w ? -errno : fd;
		else if (fstat(fd, &st) < 0)
			rc = -errno;
		else if (S_ISDIR(st.st_mode))
			rc = -EISDIR;
		else if (!S_ISREG(st.st_mode))
			rc = -EACCES; /* a FIFO, a socket, a device */
		else if ((uint64_t)st.st_size > ENGINE_WS_READ_MAX)
			rc = -EFBIG;
		if (rc < 0 && fd >= 0) {
			close(fd);
			fd = -1;
		}
	}
	if (rc < 0) {
		reply(c, id, rc, NULL, 0, NULL, 0);
		return 0;
	}
	c->fds_given++;
	stat_reply(c, id, &st, fd);
	return 0;
}

static int request_stat(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	char rel[PATH_MAX];
	struct stat st;
	struct ws_file *w;
	uint32_t flags;
	int fd, rc;

	if (len < 4)
		return -EINVAL;
	flags = ipc_get_u32((const unsigned char *)data);
	rc = ws->fd < 0                   ? -EACCES
	     : flags & ~IPC_STAT_NOFOLLOW ? -EINVAL
	                                  : ws_relative(ws, data + 4, len - 4, rel, sizeof(rel));
	if (rc == 0 && (w = pending(c, rel)) != NULL) {
		rc = fstatat(w->dirfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
	} else if (rc == 0) {
		fd = ws_open(ws, rel, O_PATH | (flags & IPC_STAT_NOFOLLOW ? O_NOFOLLOW : 0));
		rc = fd;
		if (fd >= 0) {
			rc = fstat(fd, &st) == 0 ? 0 : -errno;
			close(fd);
		}
	}
	if (rc < 0)
		reply(c, id, rc, NULL, 0, NULL, 0);
	else
		stat_reply(c, id, &st, -1);
	return 0;
}

static char entry_type(int dirfd, const struct dirent *d)
{
	struct stat st;
	unsigned char t = d->d_type;

	if (t == DT_UNKNOWN && fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		t = S_ISREG(st.st_mode)   ? DT_REG
		    : S_ISDIR(st.st_mode) ? DT_DIR
		    : S_ISLNK(st.st_mode) ? DT_LNK
		                          : DT_UNKNOWN;
	return t == DT_REG   ? IPC_ENTRY_FILE
	       : t == DT_DIR ? IPC_ENTRY_DIR
	       : t == DT_LNK ? IPC_ENTRY_LINK
	                     : IPC_ENTRY_OTHER;
}

static int request_list(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	struct strbuf out = {0};
	char rel[PATH_MAX];
	struct dirent *d;
	size_t count = 0;
	DIR *dir = NULL;
	int fd, rc;

	rc = ws->fd < 0 ? -EACCES : ws_relative(ws, data, len, rel, sizeof(rel));
	fd = rc == 0 ? ws_open(ws, rel, O_RDONLY | O_DIRECTORY) : rc;
	if (fd >= 0) {
		dir = fdopendir(fd);
		if (!dir) {
			rc = -errno;
			close(fd);
		}
	} else {
		rc = fd;
	}
	while (dir && (d = readdir(dir)) != NULL && count < ENGINE_WS_LIST_MAX) {
		char t;
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0 ||
		    strncmp(d->d_name, WS_TMP_PREFIX, strlen(WS_TMP_PREFIX)) == 0)
			continue;
		t = entry_type(dirfd(dir), d);
		sb_add(&out, &t, 1);
		sb_add(&out, d->d_name, strlen(d->d_name) + 1);
		count++;
	}
	if (dir) {
		/* Files the call created there, not on disk yet. */
		size_t rl = strcmp(rel, ".") == 0 ? 0 : strlen(rel);
		for (size_t i = 0; i < c->n_writes; i++) {
			const char *r = c->writes[i].rel;
			struct stat st;
			if ((rl ? strncmp(r, rel, rl) == 0 && r[rl] == '/' &&
			              !strchr(r + rl + 1, '/')
			        : !strchr(r, '/')) &&
			    fstatat(c->writes[i].dirfd, c->writes[i].name, &st,
			            AT_SYMLINK_NOFOLLOW) < 0) {
				sb_add(&out, "f", 1);
				sb_add(&out, c->writes[i].name, strlen(c->writes[i].name) + 1);
			}
		}
		closedir(dir);
	}
	if (rc == 0 && out.failed)
		rc = -ENOMEM;
	if (rc < 0)
		reply(c, id, rc, NULL, 0, NULL, 0);
	else
		reply(c, id, 0, NULL, 0, out.s, out.len);
	free(out.s);
	return 0;
}

void broker_writes_drop(struct chain *c)
{
	for (size_t i = 0; i < c->n_writes; i++)
		write_free(&c->writes[i], 1);
	free(c->writes);
	c->writes = NULL;
	c->n_writes = 0;
}

int broker_writes_check(const struct chain *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->n_writes; i++) {
		struct stat st;
		if (fstatat(c->writes[i].dirfd, c->writes[i].tmp, &st, AT_SYMLINK_NOFOLLOW) == 0)
			total += (uint64_t)st.st_size;
	}
	return total > ENGINE_WS_BYTES_PER_CALL ? -EDQUOT : 0;
}

void broker_writes_commit(struct chain *c, struct run_outcome *o)
{
	struct run_file *files = c->n_writes ? calloc(c->n_writes, sizeof(*files)) : NULL;
	size_t n = 0;

	for (size_t i = 0; i < c->n_writes; i++) {
		struct ws_file *f = &c->writes[i];
		struct stat st;
		unsigned int flags = f->exclusive ? RENAME_NOREPLACE : 0;
		if (fstatat(f->dirfd, f->tmp, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    renameat2(f->dirfd, f->tmp, f->dirfd, f->name, flags) < 0) {
			log_msg(LOG_WARN, "workspace: %s not written: %s", f->rel, strerror(errno));
			continue; /* write_free below removes the hidden file */
		}
		f->tmp[0] = '\0';
		if (files) {
			files[n].path = f->rel;
			files[n].bytes = (uint64_t)st.st_size;
			f->rel = NULL;
			n++;
		}
	}
	for (size_t i = 0; i < c->n_writes; i++)
		write_free(&c->writes[i], c->writes[i].tmp[0] != '\0');
	free(c->writes);
	c->writes = NULL;
	c->n_writes = 0;
	o->files = files;
	o->n_files = n;
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
	payload += IPC_REQUEST_HEADER;
	len -= IPC_REQUEST_HEADER;
	switch (kind) {
	case IPC_REQ_MODULE:
		return request_module(c, id, payload, len);
	case IPC_REQ_OPEN:
		return request_open(c, id, payload, len);
	case IPC_REQ_STAT:
		return request_stat(c, id, payload, len);
	case IPC_REQ_LIST:
		return request_list(c, id, payload, len);
	default:
		return -EINVAL;
	}
}
