/* broker.c - what a runner may ask the supervisor for while it runs a call (ipc.h, requests),
 * and the answers. The worker opens no file; the supervisor opens only beneath directories it
 * trusts (openat2 with RESOLVE_BENEATH and no magic links, a regular file, bounded), and within
 * a quota per call. A request that is not well formed is a protocol violation (the caller
 * kills the runner); one that is well formed but cannot be served is answered with an errno:
 * EMFILE when the call has used its own quota of files, ENFILE when the supervisor has no fd
 * left to hold what the call asks for (calls running meanwhile hold them: not this call's doing).
 * Functions return 0 or -errno. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
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

	/* A request waiting for a copy (fill) is answered when it is asked again. */
	if (status == -EINPROGRESS && c->copy && !c->copy->done) {
		if (fd >= 0)
			close(fd);
		return;
	}
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
	/* Spent: nothing more is opened or read for this call. */
	if (c->served >= ENGINE_SERVED_PER_CALL) {
		reply(c, id, -EDQUOT, NULL, 0, NULL, 0);
		return 0;
	}
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
	/* What was read counts, served or not: the quota bounds the work. */
	c->served += n;
	if (rc == 0 && c->served > ENGINE_SERVED_PER_CALL)
		rc = -EDQUOT;
	if (rc < 0) {
		reply(c, id, rc, NULL, 0, NULL, 0);
	} else {
		/* path, its NUL, and for IPC_REQ_MODULE_CODE the kind byte */
		size_t plen = strlen(path) + 1 + (code ? 1 : 0);
		reply(c, id, 0, path, plen, body + skip, n - skip);
	}
	free(path);
	free(body);
	return 0;
}

/* ---- the workspace ------------------------------------------------------------------------ */

#define WS_TMP_PREFIX    ".safepy-tmp-"
/* Walks of a path with ".." the kernel gave up on (EAGAIN) before the request fails. */
#define WS_RESOLVE_TRIES 64

/* The kernel's overflow group ("nogroup"): an owner with no entry in the user database is
 * given it, and no other. */
#define WS_NO_GROUP ((gid_t)65534)

/* A supervisor running as root, serving a workspace another user owns: the owner's groups
 * (their own group and those the group database lists them in; none for an owner with no
 * entry), and the supervisor's own to go back to. */
static int ws_owner_groups(struct workspace *ws)
{
	struct passwd *pw = getpwuid(ws->owner_uid);
	int n = 0;

	if (pw) {
		ws->owner_gid = pw->pw_gid;
		(void)getgrouplist(pw->pw_name, pw->pw_gid, NULL, &n);
		if (n < 1 || !(ws->groups = calloc((size_t)n, sizeof(gid_t))) ||
		    getgrouplist(pw->pw_name, pw->pw_gid, ws->groups, &n) < 0)
			return -ENOMEM;
	} else {
		/* No group of theirs is known (the directory's may be any, root's after a chown
		 * of the uid alone): the group no one is in, and no other. */
		if (!(ws->groups = calloc(1, sizeof(gid_t))))
			return -ENOMEM;
		ws->owner_gid = WS_NO_GROUP;
		ws->groups[n++] = WS_NO_GROUP;
	}
	ws->n_groups = n;
	if ((n = getgroups(0, NULL)) < 0 ||
	    !(ws->root_groups = calloc((size_t)n + 1, sizeof(gid_t))) ||
	    (n = getgroups(n, ws->root_groups)) < 0)
		return -ENOMEM;
	ws->n_root_groups = n;
	ws->as_owner = 1;
	return 0;
}

/* A supervisor running as root, serving a workspace root owns: the capabilities that pass file
 * permissions (DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER) out of effect (owner) or back, so that
 * the kernel meets every permission as root without them would (the mode bits of a file,
 * another user's private directory on the way): ws_may's checks alone left a file root cannot
 * read by its bits readable through a copy ('a', 'r+', a rename) and crossed a directory
 * closed to searches. The capabilities in effect before are put back as they were; failing
 * to is fatal. Nothing for any other supervisor or workspace. */
static int ws_root_bits(const struct workspace *ws, int owner)
{
	static const cap_value_t pass[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER};
	static cap_t before;
	cap_t caps;

	if (ws->fd < 0 || geteuid() != 0)
		return 0;
	if (!owner) {
		if (!before)
			return 0;
		if (cap_set_proc(before) < 0) {
			log_msg(LOG_ERROR,
			        "workspace: cannot take the server's capabilities back: %s",
			        strerror(errno));
			abort();
		}
		cap_free(before);
		before = NULL;
		return 0;
	}
	if (before || !(before = cap_get_proc()) || !(caps = cap_dup(before)))
		goto fail;
	if (cap_set_flag(caps, CAP_EFFECTIVE, (int)(sizeof(pass) / sizeof(pass[0])), pass,
	                 CAP_CLEAR) < 0 ||
	    cap_set_proc(caps) < 0) {
		cap_free(caps);
		goto fail;
	}
	cap_free(caps);
	return 0;
fail:
	if (before) {
		cap_free(before);
		before = NULL;
	}
	return -EACCES;
}

/* Take the workspace owner's file system identity (owner) or the supervisor's own back: with
 * the owner's, every path the kernel walks, every file it opens, creates, links or checks
 * (faccessat with AT_EACCESS) is checked as the owner would meet it, the search permission of
 * each directory on the way included, and the capabilities that pass file permissions are out
 * of effect. Nothing when the supervisor is not root or the owner is. Failing to go back is
 * fatal: the supervisor does not go on with another's identity. */
static int ws_identity(const struct workspace *ws, int owner)
{
	if (!ws->as_owner)
		return ws_root_bits(ws, owner);
	if (owner) {
		if (setgroups((size_t)ws->n_groups, ws->groups) < 0)
			return -errno;
		(void)setfsgid(ws->owner_gid);
		(void)setfsuid(ws->owner_uid);
		if ((uid_t)setfsuid((uid_t)-1) == ws->owner_uid &&
		    (gid_t)setfsgid((gid_t)-1) == ws->owner_gid)
			return 0;
	}
	(void)setfsuid(geteuid());
	(void)setfsgid(getegid());
	if (setgroups((size_t)ws->n_root_groups, ws->root_groups) < 0 ||
	    (uid_t)setfsuid((uid_t)-1) != geteuid()) {
		log_msg(LOG_ERROR, "workspace: cannot take the server's own identity back: %s",
		        strerror(errno));
		abort();
	}
	return owner ? -EACCES : 0;
}

/* fchown with the supervisor's own identity (a file the owner replaces keeps its owner). */
static int ws_chown(const struct workspace *ws, int fd, uid_t uid, gid_t gid)
{
	int rc;

	if (ws->as_owner)
		(void)setfsuid(geteuid());
	rc = fchown(fd, uid, gid);
	if (ws->as_owner)
		(void)setfsuid(ws->owner_uid);
	return rc;
}

static int fd_mount_id(int fd, uint64_t *id);

int broker_workspace_open(struct workspace *ws, const char *dir, int writable)
{
	struct stat st;
	char *real;

	ws->fd = -1;
	ws->lock_fd = -1;
	ws->ex_fd = -1;
	ws->path = NULL;
	ws->excluded = 0;
	ws->mods = NULL;
	ws->n_mods = 0;
	ws->in_mods = 0;
	ws->orphans = NULL;
	ws->n_orphans = 0;
	ws->groups = ws->root_groups = NULL;
	ws->n_groups = ws->n_root_groups = 0;
	ws->as_owner = 0;
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
	if (fstat(ws->fd, &st) < 0) {
		int err = -errno;
		broker_workspace_close(ws);
		return err;
	}
	/* (flock takes no O_PATH fd; a directory the server cannot read goes without the lock) */
	if (writable)
		ws->lock_fd = openat(ws->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ws->root_dev = st.st_dev;
	ws->root_ino = st.st_ino;
	ws->mnt_known = fd_mount_id(ws->fd, &ws->mnt_id) == 0;
	ws->owner_uid = st.st_uid;
	ws->owner_gid = st.st_gid;
	if (geteuid() == 0 && st.st_uid != 0) {
		int rc = ws_owner_groups(ws);
		if (rc < 0) {
			broker_workspace_close(ws);
			return rc;
		}
	}
	return 0;
}

static int ws_in_groups(const struct workspace *ws, gid_t gid)
{
	if (gid == ws->owner_gid)
		return 1;
	for (int i = 0; i < ws->n_groups; i++)
		if (ws->groups[i] == gid)
			return 1;
	return 0;
}

/* May the workspace's owner do what mask asks (R_OK, W_OK, X_OK) to a file like st? A
 * supervisor running as root checks the mode bits as the owner would meet them, besides the
 * kernel's checks with the owner's identity (ws_identity): a read-only file, a directory closed
 * to writes or another user's private file stays as it is, whatever the steps that follow a
 * check do as root (a commit's renames). Any other supervisor: the kernel checks, as itself. */
static int ws_may(const struct workspace *ws, const struct stat *st, int mask)
{
	unsigned int bits;

	if (geteuid() != 0)
		return 1;
	if (st->st_uid == ws->owner_uid)
		bits = (st->st_mode >> 6) & 7;
	else if (ws_in_groups(ws, st->st_gid))
		bits = (st->st_mode >> 3) & 7;
	else
		bits = st->st_mode & 7;
	return (bits & (unsigned int)mask) == (unsigned int)mask;
}

void broker_workspace_close(struct workspace *ws)
{
	if (ws->fd >= 0)
		close(ws->fd);
	if (ws->lock_fd >= 0)
		close(ws->lock_fd);
	ws->lock_fd = -1;
	free(ws->path);
	for (size_t i = 0; i < ws->n_orphans; i++) {
		free(ws->orphans[i].rel);
		if (ws->orphans[i].fd >= 0)
			close(ws->orphans[i].fd);
	}
	if (ws->ex_fd >= 0)
		close(ws->ex_fd);
	ws->ex_fd = -1;
	free(ws->orphans);
	free(ws->groups);
	free(ws->root_groups);
	ws->groups = ws->root_groups = NULL;
	ws->n_groups = ws->n_root_groups = 0;
	ws->as_owner = 0;
	ws->orphans = NULL;
	ws->n_orphans = 0;
	ws->fd = -1;
	ws->path = NULL;
	ws->excluded = 0;
	free(ws->mods);
	ws->mods = NULL;
	ws->n_mods = 0;
	ws->in_mods = 0;
}

int broker_workspace_exclude(struct workspace *ws, int dirfd)
{
	struct stat st, root;

	if (ws->fd < 0 || dirfd < 0)
		return 0;
	/* By identity, not by path: a bind mount or a second path reaches the same directory. */
	if (fstat(dirfd, &st) < 0 || fstat(ws->fd, &root) < 0)
		return -errno;
	ws->ex_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (ws->ex_fd < 0)
		return -errno;
	ws->excluded = 1;
	ws->ex_dev = st.st_dev;
	ws->ex_ino = st.st_ino;
	ws->root_dev = root.st_dev;
	ws->root_ino = root.st_ino;
	return 0;
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

/* rel without "." components and repeated slashes (a trailing slash is kept, and a last "."
 * is one: "f/." names f as a directory): one file, one spelling, so that a call finds its own
 * pending writes however it names them. ".." stays: only the resolution beneath the workspace
 * knows where it leads. Returns how many directories deep the path goes, as ".." leaves them
 * (what the walks start from). */
static size_t ws_normalize(char *rel)
{
	size_t len = strlen(rel);
	char *out = rel, *p = rel;
	int trailing =
	    len && (rel[len - 1] == '/' || (rel[len - 1] == '.' && len > 1 && rel[len - 2] == '/'));
	size_t depth = 0;

	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.')
			depth -= depth > 0;
		else
			depth++;
		if (out != rel)
			*out++ = '/';
		memmove(out, p, n);
		out += n;
		p += n + (p[n] == '/');
	}
	if (out == rel)
		*out++ = '.';
	else if (trailing)
		*out++ = '/';
	*out = '\0';
	return depth;
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
		/* The workspace "/" holds every absolute path. */
		if (wl > 1 && (n < wl || memcmp(p, ws->path, wl) != 0 || (n > wl && p[wl] != '/')))
			return -EACCES;
		if (wl > 1) {
			p += wl;
			n -= wl;
		}
	}
	memcpy(rel, p, n);
	rel[n] = '\0';
	if (ws_normalize(rel) > IPC_WS_DEPTH_MAX)
		return -ENAMETOOLONG;
	/* Pending writes' hidden files are the supervisor's, never named by a call. */
	for (const char *q = rel; q; q = strchr(q, '/')) {
		q += *q == '/';
		if (strncmp(q, WS_TMP_PREFIX, strlen(WS_TMP_PREFIX)) == 0)
			return -EACCES;
	}
	return 0;
}

/* Is fd on one of the kernel's own file systems (procfs, sysfs and their kin)? Their files are
 * regular files that describe the process that opens them, which is the supervisor here
 * (/proc/self/environ, /proc/self/mem), and the other processes it may read (the sessions'
 * workers): a workspace that holds one (the read-only `--workspace /`, a tree with /proc
 * mounted in it) gives none of it. One that cannot be told is taken for one. */
static int ws_kernel_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return 1;
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case SELINUX_MAGIC:
	case SMACK_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:
	case DEVPTS_SUPER_MAGIC:
	case NSFS_MAGIC:
	case BINFMTFS_MAGIC:
		return 1;
	default:
		return 0;
	}
}

/* Resolve rel beneath dirfd (the workspace, or a directory in it): no "..", absolute symbolic
 * link or magic link leads out, and nothing on the kernel's own file systems. A way out is
 * EACCES, as the rest of the workspace's refusals. */
static int ws_resolve(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
	    /* openat2 refuses O_PATH with any flag but O_CLOEXEC, O_DIRECTORY and O_NOFOLLOW. */
	    .flags = (uint64_t)(flags | O_CLOEXEC | (flags & O_PATH ? 0 : O_NOCTTY)),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	/* With "..", a rename anywhere on the machine during the walk makes the kernel give up
	 * (EAGAIN): it cannot tell the walk stayed beneath. Walk again. */
	for (int tries = 0;; tries++) {
		fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
		if (fd >= 0 && ws_kernel_fs((int)fd)) {
			close((int)fd);
			return -EACCES;
		}
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN || tries >= WS_RESOLVE_TRIES)
			break;
	}
	return errno == EXDEV || errno == ELOOP ? -EACCES : -errno;
}

/* The directory part of rel (whose last '/' is slash, or NULL) into dir (PATH_MAX bytes; rel
 * is shorter): "." for a bare name. */
static void ws_dirname(const char *rel, const char *slash, char *dir)
{
	if (slash) {
		memcpy(dir, rel, (size_t)(slash - rel));
		dir[slash - rel] = '\0';
	} else {
		strcpy(dir, ".");
	}
}

/* How many directories up from a request's directory the left-out one is looked for at most,
 * and how many directories beneath it are counted to look less far (ws_excluded_depth). */
#define WS_EXCLUDED_DEPTH 256
#define WS_EXCLUDED_DIRS  32

/* How many levels of directories the left-out directory holds beneath it now (0: none; the
 * zygote's cache makes none, and no call can make one there): a request's directory in it is
 * at most that many levels below it. WS_EXCLUDED_DEPTH when that cannot be told, or when it
 * holds more than WS_EXCLUDED_DIRS directories. Read with the supervisor's own identity (the
 * cache is its own, 0700). */
static int ws_excluded_depth(const struct workspace *ws)
{
	struct {
		int fd, depth;
	} todo[WS_EXCLUDED_DIRS + 1];
	int n = 0, dirs = 0, deepest = 0, known = 1;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (ws->as_owner)
		(void)setfsuid(geteuid());
	todo[n].fd = openat(ws->ex_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	todo[n++].depth = 0;
	while (known && n > 0) {
		int depth = todo[--n].depth;

		d = todo[n].fd >= 0 ? fdopendir(todo[n].fd) : NULL;
		if (!d) {
			if (todo[n].fd >= 0)
				close(todo[n].fd);
			known = 0;
			break;
		}
		deepest = depth > deepest ? depth : deepest;
		for (errno = 0; known && (de = readdir(d)); errno = 0) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (de->d_type != DT_DIR &&
			    (de->d_type != DT_UNKNOWN ||
			     fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			     !S_ISDIR(st.st_mode)))
				continue;
			if (++dirs > WS_EXCLUDED_DIRS) {
				known = 0;
				break;
			}
			todo[n].fd = openat(dirfd(d), de->d_name,
			                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			todo[n++].depth = depth + 1;
		}
		known = known && errno == 0;
		closedir(d);
	}
	while (n > 0)
		if (todo[--n].fd >= 0)
			close(todo[n].fd);
	if (ws->as_owner)
		(void)setfsuid(ws->owner_uid);
	return known && deepest < WS_EXCLUDED_DEPTH ? deepest : WS_EXCLUDED_DEPTH;
}

/* How many directories up a request's directory is looked at most for a module directory:
 * further than any path can name. */
#define WS_MODULES_DEPTH (PATH_MAX / 2)

/* Is the directory fd0, or one above it (up to the directory stop, or "/" when stop is NULL),
 * one of ids (n)? When that cannot be told, it is; past limit levels up, past_limit. fd0
 * stays open. */
static int dir_up_finds(int fd0, const struct ws_id *ids, size_t n, const struct ws_id *stop,
                        int limit, int past_limit)
{
	struct stat st;
	dev_t pdev = 0;
	ino_t pino = 0;
	int fd = fd0, in = 0;

	for (int depth = 0;; depth++) {
		if (fstat(fd, &st) < 0 || depth > limit) {
			in = depth > limit ? past_limit : 1;
			break;
		}
		for (size_t i = 0; i < n && !in; i++)
			in = st.st_dev == ids[i].dev && st.st_ino == ids[i].ino;
		if (in || (stop && st.st_dev == stop->dev && st.st_ino == stop->ino) ||
		    (depth > 0 && st.st_dev == pdev && st.st_ino == pino))
			break; /* (the directory to stop at, or "/": its own parent) */
		pdev = st.st_dev;
		pino = st.st_ino;
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd != fd0)
			close(fd);
		fd = up;
		if (fd < 0)
			return 1;
	}
	if (fd != fd0)
		close(fd);
	return in;
}

/* Is the directory dirfd (beneath the workspace), or one above it up to the workspace and at
 * most limit levels up (ws_excluded_depth), the directory the workspace leaves out? When that
 * cannot be told, it is. dirfd stays open. */
static int ws_dir_left_out_within(const struct workspace *ws, int dirfd, int limit)
{
	return ws->excluded && dir_up_finds(dirfd, &(struct ws_id){ws->ex_dev, ws->ex_ino}, 1,
	                                    &(struct ws_id){ws->root_dev, ws->root_ino}, limit, 0);
}

static int ws_dir_left_out(const struct workspace *ws, int dirfd)
{
	return ws->excluded && ws_dir_left_out_within(ws, dirfd, ws_excluded_depth(ws));
}

/* Is the object fd (O_PATH, beneath the workspace) the left-out directory or in it: a
 * directory by itself, anything else by the directory its path names. When that cannot be
 * told, it is. */
static int ws_object_left_out(const struct workspace *ws, int fd, int limit)
{
	char proc[64], path[PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	int dfd, out;

	if (fstat(fd, &st) < 0)
		return 1;
	if (S_ISDIR(st.st_mode))
		return ws_dir_left_out_within(ws, fd, limit);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, path, sizeof(path) - 1);
	if (n <= 0 || (size_t)n >= sizeof(path) - 1 || path[0] != '/')
		return 1;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (slash == path)
		slash[1] = '\0'; /* in "/" */
	else
		*slash = '\0';
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 1;
	out = ws_dir_left_out_within(ws, dfd, limit);
	close(dfd);
	return out;
}

/* Is rel (beneath the workspace) in the directory the workspace leaves out, or that directory?
 * Its directory is resolved for this alone; a path that does not resolve is not (the request
 * fails on its own). */
static int ws_rel_left_out(const struct workspace *ws, const char *rel)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	int fd, out, limit;

	if (!ws->excluded)
		return 0;
	limit = ws_excluded_depth(ws);
	/* The object as named, and as its links lead (LIST and STAT follow them). */
	for (int follow = 0; follow < 2; follow++) {
		fd = ws_resolve(ws->fd, rel, O_PATH | (follow ? 0 : O_NOFOLLOW));
		if (fd < 0)
			continue;
		out = ws_object_left_out(ws, fd, limit);
		close(fd);
		if (out)
			return 1;
	}
	ws_dirname(rel, slash, dir);
	fd = ws_resolve(ws->fd, dir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return 0;
	out = ws_dir_left_out_within(ws, fd, limit);
	close(fd);
	return out;
}

/* Open for reading the regular file rel is beneath dirfd, of at most max bytes. It is resolved
 * to a handle first (O_PATH: nothing is opened), its kind and size are checked, and only then
 * is it opened, through the handle: a FIFO, a device or a socket is never opened, not even by
 * a race that swaps one in. With followed, a link rel names is followed (beneath dirfd, as
 * every link of its path) and *followed says so. Returns the fd with *st, or -errno (-EISDIR;
 * -EACCES for a link not followed, a FIFO, a device, a socket; -EFBIG). */
static int ws_open_regular(int dirfd, const char *rel, uint64_t max, struct stat *st, int *followed)
{
	char proc[64];
	struct stat now;
	int pfd, fd, rc, follow = 0;

	pfd = ws_resolve(dirfd, rel, O_PATH | O_NOFOLLOW);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, st) < 0) {
		rc = -errno;
		goto out;
	}
	if (S_ISLNK(st->st_mode) && followed) {
		/* (a link only: a file named as it is costs one resolution) */
		close(pfd);
		pfd = ws_resolve(dirfd, rel, O_PATH);
		if (pfd < 0)
			return pfd;
		if (fstat(pfd, st) < 0) {
			rc = -errno;
			goto out;
		}
		follow = *followed = 1;
	}
	rc = S_ISDIR(st->st_mode)          ? -EISDIR
	     : !S_ISREG(st->st_mode)       ? -EACCES
	     : (uint64_t)st->st_size > max ? -EFBIG
	                                   : 0;
	if (rc < 0)
		goto out;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) /* without procfs: by name again, and compared below */
		fd = errno == ENOENT
		         ? ws_resolve(dirfd, rel, O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW))
		         : -errno;
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		close(fd);
		rc = -EACCES;
		goto out;
	}
	*st = now;
	rc = fd;
out:
	close(pfd);
	return rc;
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

/* Names the call removes (below): gone for it, though on disk until it commits. */
static struct ws_removal *removal_in(struct chain *c, int dirfd, const char *name);
static int gone_in(struct chain *c, int dirfd, const char *name);
static int gone_named(struct chain *c, const char *rel);
static int dir_gone(struct chain *c, int dirfd);
static void removal_free(struct ws_removal *r);
static int removal_holds(const struct ws_removal *r);

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
	if (f->src_fd > 0)
		close(f->src_fd);
	free(f->name);
	free(f->rel);
	free(f->src_rel);
	memset(f, 0, sizeof(*f));
	f->dirfd = -1;
}

/* Is the directory dirfd, or one above it up to the workspace's own (up to "/" when to_root),
 * one of the interpreter's module directories? When that cannot be told, it is. */
static int ws_dir_in_modules(const struct workspace *ws, int dirfd, int to_root)
{
	struct stat root;

	if (ws->in_mods)
		return 1;
	if (!ws->n_mods)
		return 0;
	if (fstat(ws->fd, &root) < 0)
		return 1;
	return dir_up_finds(dirfd, ws->mods, ws->n_mods,
	                    to_root ? NULL : &(struct ws_id){root.st_dev, root.st_ino},
	                    WS_MODULES_DEPTH, 1);
}

/* May a call change a name in the directory dirfd (beneath the workspace)? Not on a mount
 * within the workspace: what a bind mount there shows (the interpreter's standard library,
 * a package's subdirectory, safepy's own directory), mounted before the start or after, is
 * not the workspace's to change (V61d H1, V62b H3): -EROFS; nor in the interpreter's module
 * directories on the workspace's own (-EACCES). When that cannot be told, it may not. */
static int ws_dir_changes(const struct workspace *ws, int dirfd)
{
	struct stat st;
	uint64_t id;

	if (ws->mnt_known ? fd_mount_id(dirfd, &id) < 0 || id != ws->mnt_id
	                  : fstat(dirfd, &st) < 0 || st.st_dev != ws->root_dev)
		return -EROFS;
	return ws_dir_in_modules(ws, dirfd, 0) ? -EACCES : 0;
}

/* The directories of the system's programs, libraries and configuration (the server's own,
 * the interpreter's, and what the dynamic linker reads) */
static const char *const system_dirs[] = {"/usr",   "/etc",   "/bin",    "/sbin", "/lib",
                                          "/lib32", "/lib64", "/libx32", "/boot", NULL};

/* The id of the mount the file fd lies on (statx, Linux 5.8). 0 or -errno. */
static int fd_mount_id(int fd, uint64_t *id)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	*id = stx.stx_mnt_id;
	return 0;
}

/* The place on its filesystem (mount_place) of the directory path (absolute, no symbolic
 * links; opened as fd), through the mount fd lies on: found by its id, not by the path (a
 * mount covered by another on a directory above it is not the one the path reaches: V62b
 * H1). 0, 1 when that mount is not shown but is the mount same_id (the two compare by path),
 * or -errno. */
static int dir_place(const struct mount_table *t, int fd, const char *path, uint64_t same_id,
                     struct mount_place *p)
{
	const struct mount_entry *e;
	uint64_t id;
	int rc = fd_mount_id(fd, &id);

	if (rc < 0)
		return rc;
	if (!(e = mount_table_by_id(t, id)))
		return id == same_id ? 1 : -ENOENT; /* (in a chroot: not shown) */
	return mount_place(e, path, p);
}

/* Does the workspace meet any of the directories dirs (n, absolute, no symbolic links) on
 * their filesystems: does the place it shows (mount_place; and, on an overlay, its upper
 * directory's, where its writes land: V62b H2) hold or lie in a place one of them shows (its
 * own, and those of the mounts within it)? A workspace inside a bind mount of a directory of
 * /usr is seen here and not by walking up the directories, and nothing is changed on a mount
 * within the workspace (ws_dir_changes). -1, the index in dirs of one it meets, or n when
 * that cannot be told (V62b H4-H5). */
static int ws_mounts_meet(const struct workspace *ws, const char *const *dirs, size_t n)
{
	struct mount_table t;
	struct mount_place wsp[2] = {{0}}, dir = {0};
	const struct mount_entry *we;
	char *upper = NULL, *real = NULL;
	size_t n_ws = 1;
	uint64_t wid = 0;
	int met = -1, rc;

	if (mount_table_read(&t) < 0)
		return (int)n;
	if (fd_mount_id(ws->fd, &wid) < 0 || !(we = mount_table_by_id(&t, wid)) ||
	    mount_place(we, ws->path, &wsp[0]) < 0)
		met = (int)n;
	if (met < 0 && strcmp(we->fstype, "overlay") == 0 &&
	    (upper = mount_option(we, "upperdir"))) {
		int fd = open(upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
		/* (an upper directory this namespace does not show is none of these) */
		if (fd >= 0 && (!(real = realpath(upper, NULL)) ||
		                dir_place(&t, fd, real, 0, &wsp[n_ws++]) != 0))
			met = (int)n;
		if (fd >= 0)
			close(fd);
	}
	for (size_t d = 0; met < 0 && d < n; d++) {
		int fd = open(dirs[d], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			met = errno == ENOENT ? -1 : (int)n; /* (not on this system) */
			continue;
		}
		rc = dir_place(&t, fd, dirs[d], wid, &dir);
		close(fd);
		if (rc == 1) {
			if (path_within(ws->path, dirs[d]) || path_within(dirs[d], ws->path))
				met = (int)d;
			continue;
		}
		if (rc < 0) {
			met = (int)n;
			break;
		}
		for (size_t w = 0; met < 0 && w < n_ws; w++)
			if (mount_places_meet(&wsp[w], &dir))
				met = (int)d;
		for (size_t i = 0; met < 0 && i < t.n; i++) {
			if (!path_within(t.v[i].mnt, dirs[d]))
				continue;
			free(dir.path);
			if (!(dir.path = strdup(t.v[i].root))) {
				met = (int)n;
				break;
			}
			dir.dev = t.v[i].dev;
			for (size_t w = 0; met < 0 && w < n_ws; w++)
				if (mount_places_meet(&wsp[w], &dir))
					met = (int)d;
		}
	}
	free(dir.path);
	for (size_t w = 0; w < n_ws; w++)
		free(wsp[w].path);
	free(upper);
	free(real);
	mount_table_free(&t);
	return met;
}

/* A workspace that takes writes must neither hold nor lie in the system's directories nor the
 * server's programs' own (zygote_exe's, the server's executable's): a call there could change
 * what the server runs (the interpreter's zip of its standard library in /usr/lib, a library
 * the linker loads, the zygote itself: run by the next server before its sandbox, as root:
 * V56b H1). By identity, either way, and by what the mounts show (ws_mounts_meet). 0, or 1
 * with the directory it meets in *which (static), NULL when that cannot be told. */
int broker_workspace_system(const struct workspace *ws, const char *zygote_exe, const char **which)
{
	static char own[2][PATH_MAX], real[sizeof(system_dirs) / sizeof(system_dirs[0])][PATH_MAX];
	const char *dirs[sizeof(system_dirs) / sizeof(system_dirs[0]) + 2];
	struct stat root, st;
	size_t n = 0;
	ssize_t len;
	char *slash;
	int met;

	if (ws->fd < 0 || !ws->writable || fstat(ws->fd, &root) < 0)
		return 0;
	*which = NULL; /* (cannot be told) */
	for (size_t i = 0; system_dirs[i]; i++)
		if (realpath(system_dirs[i], real[i]))
			dirs[n++] = real[i];
		else if (errno != ENOENT)
			return 1;
	/* (a program whose directory cannot be named: V62b H4) */
	len = readlink("/proc/self/exe", own[0], sizeof(own[0]) - 1);
	if (len <= 0 || len >= (ssize_t)sizeof(own[0]) - 1)
		return 1;
	own[0][len] = '\0';
	if ((slash = strrchr(own[0], '/')) && slash != own[0]) {
		*slash = '\0';
		dirs[n++] = own[0];
	}
	if (zygote_exe) {
		if (!realpath(zygote_exe, own[1]))
			return 1;
		if ((slash = strrchr(own[1], '/')) && slash != own[1]) {
			*slash = '\0';
			dirs[n++] = own[1];
		}
	}
	for (size_t i = 0; i < n; i++) {
		int fd = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC), meets;
		if (fd < 0)
			continue; /* (not on this system) */
		meets = fstat(fd, &st) < 0 ||
		        dir_up_finds(fd, &(struct ws_id){root.st_dev, root.st_ino}, 1, NULL,
		                     WS_MODULES_DEPTH, 1) ||
		        dir_up_finds(ws->fd, &(struct ws_id){st.st_dev, st.st_ino}, 1, NULL,
		                     WS_MODULES_DEPTH, 1);
		close(fd);
		if (meets) {
			*which = dirs[i];
			return 1;
		}
	}
	met = ws_mounts_meet(ws, dirs, n);
	if (met < 0)
		return 0;
	*which = met < (int)n ? dirs[met] : NULL;
	return 1;
}

/* Note the directory fd's identity in ids (n of them), once. */
static void ws_id_note(struct ws_id *ids, size_t *n, int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	for (size_t i = 0; i < *n; i++)
		if (ids[i].dev == st.st_dev && ids[i].ino == st.st_ino)
			return;
	ids[(*n)++] = (struct ws_id){st.st_dev, st.st_ino};
}

/* The interpreter's module directories, by identity, for a workspace that takes writes: the
 * standard library's, and those that hold the packages (the zygote's roots are the packages of
 * its mode; another mode imports others from beside them): no call changes a name in one that
 * lies in the workspace, nor anything when the workspace lies in one (a module a call wrote in
 * scipy's directory was imported by a later call as the library's own, run with the real
 * builtins: V55c H1). Looked up from each request's directory to the workspace's own. 0, or
 * -errno. */
int broker_workspace_modules(struct workspace *ws, const struct module_roots *m)
{
	struct ws_id *ids;
	size_t n = 0;

	free(ws->mods);
	ws->mods = NULL;
	ws->n_mods = 0;
	ws->in_mods = 0;
	if (ws->fd < 0 || !ws->writable)
		return 0;
	if (!(ids = calloc(2 * m->roots.n + 1, sizeof(*ids))))
		return -ENOMEM;
	/* (a root the supervisor could not open is one it serves no module from) */
	ws_id_note(ids, &n, m->stdlib_fd);
	for (size_t i = 0; m->fds && i < m->roots.n; i++) {
		int up =
		    m->fds[i] >= 0 ? openat(m->fds[i], "..", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		ws_id_note(ids, &n, m->fds[i]);
		ws_id_note(ids, &n, up);
		if (up >= 0)
			close(up);
	}
	ws->mods = ids;
	ws->n_mods = n;
	if (ws_dir_in_modules(ws, ws->fd, 1)) {
		ws->in_mods = 1;
		log_msg(LOG_WARN,
		        "the workspace %s lies in the interpreter's modules: calls change nothing "
		        "in it",
		        ws->path);
	}
	return 0;
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
	ws_dirname(rel, slash, dir);
	fd = ws_resolve(ws->fd, dir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	if (ws_dir_left_out(ws, fd)) {
		close(fd);
		return -EACCES;
	}
	*name = strdup(base);
	if (!*name) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}

/* Is the directory a the same as the directory b (fds)? */
static int same_dir(int a, int b)
{
	struct stat x, y;

	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* The call's pending write of name in the directory dirfd, by the directory's identity: one
 * file however its path is spelled (links, ".."). NULL if none. */
static struct ws_file *pending_in(struct chain *c, int dirfd, const char *name)
{
	for (size_t i = 0; i < c->n_writes; i++)
		if (strcmp(c->writes[i].name, name) == 0 && same_dir(c->writes[i].dirfd, dirfd))
			return &c->writes[i];
	return NULL;
}

/* The call's pending write of the file rel names, however it is spelled, or NULL. */
static struct ws_file *pending_named(struct chain *c, const char *rel)
{
	struct ws_file *w = pending(c, rel);
	char *name = NULL;
	int fd;

	if (w || c->n_writes == 0)
		return w;
	fd = ws_parent(&c->e->ws, rel, &name);
	if (fd < 0)
		return NULL;
	w = pending_in(c, fd, name);
	close(fd);
	free(name);
	return w;
}

/* How many links to a file a read follows through the call's own writes and removals. */
#define WS_LINKS_FOLLOWED 8

/* rel names a link (its last component): the path it leads to, as the call's writes and
 * removals are named (the link's directory, then its target), in out (PATH_MAX). 1 when it is
 * a link, 0 when not (or when it cannot be read: the request fails on its own), -errno for a
 * target that cannot be named so (absolute: it leads out). */
static int ws_link_target(const struct workspace *ws, const char *rel, char *out)
{
	char target[PATH_MAX], *name = NULL;
	const char *slash = strrchr(rel, '/');
	int fd = ws_parent(ws, rel, &name), n;
	ssize_t len;

	if (fd < 0)
		return 0;
	len = readlinkat(fd, name, target, sizeof(target) - 1);
	close(fd);
	free(name);
	if (len <= 0)
		return 0;
	target[len] = '\0';
	if (target[0] == '/')
		return -EACCES;
	n = slash ? snprintf(out, PATH_MAX, "%.*s/%s", (int)(slash - rel), rel, target)
	          : snprintf(out, PATH_MAX, "%s", target);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 1;
}

/* What reading rel (following links to files) finds of the call's own: its pending write
 * (*w), or a removal (1); 0 for the file on disk. A link's target the call wrote or removed is
 * what the link reads (the file on disk was read: the old bytes, a removed file). */
static int ws_read_pending(struct chain *c, const char *rel, struct ws_file **w)
{
	char cur[PATH_MAX], next[PATH_MAX];

	*w = pending_named(c, rel);
	if (*w)
		return 0;
	if (gone_named(c, rel))
		return 1;
	if (c->n_writes == 0 && c->n_removals == 0)
		return 0;
	snprintf(cur, sizeof(cur), "%s", rel);
	for (int k = 0; k < WS_LINKS_FOLLOWED && ws_link_target(&c->e->ws, cur, next) == 1; k++) {
		memcpy(cur, next, sizeof(cur));
		*w = pending_named(c, cur);
		if (*w)
			return 0;
		if (gone_named(c, cur))
			return 1;
	}
	return 0;
}

/* Copy bytes [from, to) of src into dst at the same offsets; 1 when src ended before to. */
static int copy_range(int dst, int src, off_t from, off_t to)
{
	loff_t in = from, out = from;

	while (in < to) {
		size_t want = (uint64_t)(to - in) < (1u << 30) ? (size_t)(to - in) : 1u << 30;
		ssize_t n = copy_file_range(src, &in, dst, &out, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 1;
	}
	return 0;
}

/* Copy src's data in [*pos, end) into dst at the same offsets, no more than budget bytes of it
 * at this turn; only src's data is copied, its holes stay holes (a sparse file of the code's,
 * made in an instant, costs nothing to copy, and the copy is as sparse). Returns 0 when more
 * is left, 1 when done (dst then as long as src was measured, or as src was when it ended
 * sooner: a file still growing gives no more), or -errno. */
static int copy_piece(int dst, int src, off_t *pos, off_t end, uint64_t budget)
{
	while (*pos < end) {
		off_t data = lseek(src, *pos, SEEK_DATA), stop = end;
		int rc;

		if (data < 0 && errno == ENXIO)
			break; /* holes to the end */
		if (data < 0 && errno != EINVAL)
			return -errno;
		if (data < 0) {
			data = *pos; /* no holes known here */
		} else if (data >= end) {
			break;
		} else if ((stop = lseek(src, data, SEEK_HOLE)) < 0) {
			return -errno;
		} else if (stop > end) {
			stop = end;
		}
		if (budget == 0)
			return 0;
		if ((uint64_t)(stop - data) > budget)
			stop = data + (off_t)budget;
		if ((rc = copy_range(dst, src, data, stop)) != 0)
			return rc;
		budget -= (uint64_t)(stop - data);
		*pos = stop;
	}
	*pos = end;
	return ftruncate(dst, end) < 0 ? -errno : 1;
}

/* Copy the first size bytes of src into the empty dst at once. */
static int copy_into(int dst, int src, uint64_t size)
{
	off_t pos = 0;
	int rc = copy_piece(dst, src, &pos, (off_t)size, UINT64_MAX);

	return rc < 0 ? rc : 0;
}

/* The request being served (broker_request, copy_step): a large copy keeps it, to ask it
 * again once the copy is done. */
static struct {
	uint32_t id;
	uint8_t kind;
	const char *payload;
	size_t len;
} asking;

static unsigned int copy_serial;

static int hidden_name(const struct chain *c, char *buf, size_t cap);

static void copy_free(struct chain *c)
{
	struct ws_copy *k = c->copy;

	if (!k)
		return;
	timer_cancel(&k->piece);
	if (!k->taken) {
		/* A copy thrown away (its file changed meanwhile: the request copies again) counts
		 * as what a copy taken does, so a file changed over and over is not copied for ever. */
		uint64_t made = k->pos > 0 ? (uint64_t)k->pos : 0;

		c->ws_copied = made > ENGINE_WS_BYTES_PER_CALL - c->ws_copied
		                   ? ENGINE_WS_BYTES_PER_CALL
		                   : c->ws_copied + made;
		(void)unlinkat(k->dirfd, k->tmp, 0);
	}
	close(k->src);
	if (k->dst >= 0)
		close(k->dst);
	close(k->dirfd);
	free(k->payload);
	free(k);
	c->copy = NULL;
}

static void copy_step(struct timer *t);

/* Start the copy of the first size bytes of src into a copy of dst (what the request made
 * of it: its mode, its owner), which takes dst's file under a name of its own. -EINPROGRESS:
 * the request waits, unanswered. Where the copy cannot be kept (no fd or memory to spare for
 * it), it is made at once, as a small one. */
static int copy_start(struct chain *c, int ddir, const char *tmp, int dst, int src, uint64_t size)
{
	struct ws_copy *k;
	struct stat s, d;

	copy_free(c); /* one made before, for a file since changed */
	if (!asking.payload || engine_fd_room(c->e) < 4 || fstat(src, &s) < 0 ||
	    fstat(ddir, &d) < 0 || !(k = calloc(1, sizeof(*k))))
		return copy_into(dst, src, size);
	k->src = fcntl(src, F_DUPFD_CLOEXEC, 0);
	k->dst = fcntl(dst, F_DUPFD_CLOEXEC, 0);
	k->dirfd = fcntl(ddir, F_DUPFD_CLOEXEC, 0);
	k->payload = malloc(asking.len + 1);
	if (k->src < 0 || k->dst < 0 || k->dirfd < 0 || !k->payload ||
	    hidden_name(c, k->tmp, sizeof(k->tmp)) < 0 ||
	    renameat2(ddir, tmp, ddir, k->tmp, RENAME_NOREPLACE) < 0) {
		k->taken = 1; /* its name is not the copy's: nothing of it to remove */
		c->copy = k;
		copy_free(c);
		return copy_into(dst, src, size);
	}
	memcpy(k->payload, asking.payload, asking.len);
	k->len = asking.len;
	k->id = asking.id;
	k->kind = asking.kind;
	k->src_dev = s.st_dev;
	k->src_ino = s.st_ino;
	k->src_mtime = s.st_mtim;
	k->dir_dev = d.st_dev;
	k->dir_ino = d.st_ino;
	k->end = (off_t)size;
	k->serial = ++copy_serial;
	timer_init(&k->piece, copy_step, c);
	timer_arm(&k->piece, now_ms());
	c->copy = k;
	return -EINPROGRESS;
}

/* The finished copy k is what the request asks again for: the same file measured alike, into
 * the same directory, made alike. */
static int copy_same(const struct ws_copy *k, int ddir, int dst, int src, uint64_t size)
{
	struct stat s, d, a, b;

	return k->done && fstat(src, &s) == 0 && fstat(ddir, &d) == 0 && fstat(dst, &a) == 0 &&
	       fstat(k->dst, &b) == 0 && s.st_dev == k->src_dev && s.st_ino == k->src_ino &&
	       (uint64_t)s.st_size == size && (off_t)size == k->end &&
	       s.st_mtim.tv_sec == k->src_mtime.tv_sec &&
	       s.st_mtim.tv_nsec == k->src_mtime.tv_nsec && d.st_dev == k->dir_dev &&
	       d.st_ino == k->dir_ino && a.st_mode == b.st_mode && a.st_uid == b.st_uid &&
	       a.st_gid == b.st_gid;
}

/* Fill the empty hidden file *dst, named tmp in ddir, with the first size bytes of src. A
 * small file is copied at once. A larger one is copied a piece at a time between the loop's
 * other work, every other call served meanwhile (a quarter of a GiB read from disk held every
 * session for over a second): the first ask starts the copy and its request waits, unanswered
 * (-EINPROGRESS); once the copy is done the request is asked again, as if it came then, and
 * finds it here: the copy takes tmp's name and *dst is its fd. */
static int fill(struct chain *c, int ddir, const char *tmp, int *dst, int src, uint64_t size)
{
	struct ws_copy *k = c->copy;

	if (size < ENGINE_WS_COPY_PIECE)
		return copy_into(*dst, src, size);
	if (!k || !copy_same(k, ddir, *dst, src, size))
		return copy_start(c, ddir, tmp, *dst, src, size);
	/* Not a rename over tmp's empty file: a file system may write all of a file renamed over
	 * another at once (ext4's replace-by-rename rule), holding the loop. */
	if (unlinkat(ddir, tmp, 0) < 0 ||
	    renameat2(k->dirfd, k->tmp, ddir, tmp, RENAME_NOREPLACE) < 0)
		return -errno;
	k->taken = 1;
	close(*dst);
	*dst = k->dst;
	k->dst = -1;
	return 0;
}

/* A file the call opens to write again: its hidden file once more, as a second open of a file
 * on disk is the same file. What either fd writes stays, and counts against the call's bytes;
 * a hidden file replaced by a new one would have kept its bytes out of both while the first fd
 * wrote on. "w" empties it, "a" appends to it, "r+" reads and writes it from the start. */
static int pending_reopen(const struct ws_file *w, enum ipc_open_mode mode, int *out,
                          struct stat *st)
{
	int fd = openat(w->dirfd, w->tmp,
	                O_RDWR | O_CLOEXEC | O_NOFOLLOW | (mode == IPC_OPEN_WRITE ? O_TRUNC : 0) |
	                    (mode == IPC_OPEN_APPEND ? O_APPEND : 0));

	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		rc = -errno;
	else if (!S_ISREG(st->st_mode))
		rc = -EACCES;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

/* The path of the file name in the directory dirfd, relative to the workspace, as the
 * directory resolved (no "..", one spelling for one file), into out; 0, -ENAMETOOLONG, -ESTALE
 * when the directory is not found beneath the workspace's path (the workspace moved or
 * removed, another mount of it), or -EINVAL when the path is not UTF-8 (a link of the host's
 * with a UTF-8 name led to a directory whose name is not: the name goes into the answer's
 * JSON, and into later calls' comparisons, only as UTF-8, as a call's own names do). */
static int ws_canonical(const struct workspace *ws, int dirfd, const char *name, char *out,
                        size_t cap)
{
	char proc[64], dir[PATH_MAX];
	size_t n = strlen(ws->path);
	ssize_t len;
	int w;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	len = readlink(proc, dir, sizeof(dir) - 1);
	if (len < 0 || (size_t)len >= sizeof(dir) - 1)
		return -ENAMETOOLONG;
	dir[len] = '\0';
	if (n == 1) /* the workspace "/" */
		n = 0;
	if (strncmp(dir, ws->path, n) != 0 || (dir[n] != '\0' && dir[n] != '/')) {
		/* The workspace was moved or removed while the server runs: the names other calls
		 * compare theirs with cannot be made. */
		static int said;
		if (!said++)
			log_msg(LOG_WARN,
			        "workspace: %s is no longer there (moved or removed): "
			        "no file is written until the server starts again",
			        ws->path);
		return -ESTALE;
	}
	/* In the workspace's own directory (also when it is "/"), the name alone. */
	w = dir[n] && dir[n + 1] ? snprintf(out, cap, "%s/%s", dir + n + 1, name)
	                         : snprintf(out, cap, "%s", name);
	if (w < 0 || (size_t)w >= cap)
		return -ENAMETOOLONG;
	return valid_utf8(out, (size_t)w) ? 0 : -EINVAL;
}

/* A new hidden name (the supervisor's, never a call's: ws_relative) into buf. */
static int hidden_name(const struct chain *c, char *buf, size_t cap)
{
	unsigned char rnd[6];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	snprintf(buf, cap, WS_TMP_PREFIX "%d-%u-%02x%02x%02x%02x%02x%02x", (int)getpid(), c->id,
	         rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	return 0;
}

/* A new hidden file in the directory ddir, named into tmp (64 bytes): a copy of the file sname
 * in sdir (with bytes: its content, counted against what the call may write, as the copies
 * behind "a" and "r+" are; without: empty), with its owner (as root) and mode. */
static int hidden_copy(struct chain *c, int sdir, const char *sname, int ddir, char *tmp,
                       int with_bytes)
{
	struct stat st;
	int src = -1, dst = -1, rc;

	if ((rc = hidden_name(c, tmp, 64)) < 0)
		return rc;
	if (with_bytes) {
		src = ws_open_regular(sdir, sname, ENGINE_WS_BYTES_PER_CALL, &st, NULL);
		if (src < 0)
			return src == -EFBIG ? -EDQUOT : src;
		if ((uint64_t)st.st_size > ENGINE_WS_BYTES_PER_CALL - c->ws_copied) {
			close(src);
			return -EDQUOT;
		}
	} else if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		return -errno;
	}
	dst = openat(ddir, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (dst < 0) {
		rc = -errno;
		goto out;
	}
	rc = fchmod(dst, st.st_mode & 01777) < 0 ? -errno : 0;
	if (rc == 0 && geteuid() == 0 && (c->e->ws.as_owner || st.st_uid != 0 || st.st_gid != 0) &&
	    ws_chown(&c->e->ws, dst, st.st_uid, st.st_gid) < 0)
		log_msg(LOG_WARN, "workspace: a copy of %s keeps root as its owner: %s", sname,
		        strerror(errno));
	if (rc == 0 && src >= 0) {
		rc = fill(c, ddir, tmp, &dst, src, (uint64_t)st.st_size);
		if (rc != -EINPROGRESS)
			c->ws_copied += (uint64_t)st.st_size;
	}
	if (rc < 0)
		(void)unlinkat(ddir, tmp, 0);
out:
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	return rc;
}

/* A renamed file's hidden file is a second name of the file on disk: before it is written
 * through it becomes a copy of its own ("w": an empty one), so the file on disk is as it was
 * until the call commits. */
static int pending_own_copy(struct chain *c, struct ws_file *w, enum ipc_open_mode mode)
{
	char tmp[64];
	int rc = hidden_copy(c, w->dirfd, w->tmp, w->dirfd, tmp, mode != IPC_OPEN_WRITE);

	if (rc < 0)
		return rc;
	if (unlinkat(w->dirfd, w->tmp, 0) < 0) {
		rc = -errno;
		(void)unlinkat(w->dirfd, tmp, 0);
		return rc;
	}
	memcpy(w->tmp, tmp, sizeof(tmp));
	w->linked = 0;
	return 0;
}

/* A file the call writes: a hidden file beside the target (filled with the target's bytes
 * for "a" and "r+"), given to the worker; moved over the target when the call commits. Opened
 * again in the same call, the same hidden file (pending_reopen). */
static int ws_open_write(struct chain *c, const char *asked, enum ipc_open_mode mode, int given,
                         int *out, struct stat *st)
{
	const struct workspace *ws = &c->e->ws;
	struct ws_file f = {.dirfd = -1}, *old, *grown;
	char canon[PATH_MAX];
	const char *rel = asked;
	struct stat cur, dir_st;
	int exists, fd = -1, src = -1, rc;

	if (!ws->writable)
		return -EROFS;
	/* The write keeps its directory open until the call ends (and the file it copies, for
	 * "a" and "r+"): not from the fds the supervisor keeps for its own use. */
	if (engine_fd_room(c->e) < (mode == IPC_OPEN_APPEND || mode == IPC_OPEN_UPDATE ? 2 : 1))
		return -ENFILE;
	f.dirfd = ws_parent(ws, asked, &f.name);
	if (f.dirfd < 0)
		return f.dirfd;
	if ((rc = ws_dir_changes(ws, f.dirfd)) < 0)
		goto fail;
	/* A name no directory holds would be written, then fail to move into place. */
	rc = -ENAMETOOLONG;
	if (strlen(f.name) > NAME_MAX)
		goto fail;
	/* The file by the one name its directory gives it: "d/../x" and "x" are one write, and
	 * the answer names it as short as it is. A directory whose name is too long to read back
	 * is refused: other calls could not tell the file is pending. */
	if ((rc = ws_canonical(ws, f.dirfd, f.name, canon, sizeof(canon))) < 0)
		goto fail;
	rel = canon;
	rc = -EDQUOT;
	if (c->n_writes >= ENGINE_WS_FILES_PER_CALL && !pending_in(c, f.dirfd, f.name))
		goto fail;
	/* In a directory the call removed, nothing is made; a name it removed holds no file. */
	rc = -ENOENT;
	if (dir_gone(c, f.dirfd))
		goto fail;
	exists = !gone_in(c, f.dirfd, f.name) &&
	         fstatat(f.dirfd, f.name, &cur, AT_SYMLINK_NOFOLLOW) == 0;
	rc = -EACCES; /* never replace a link, a directory, a device */
	if (exists && !S_ISREG(cur.st_mode))
		goto fail;
	/* Nor a file the server could not write in place: moving a file over it needs only the
	 * directory's permission (a read-only file, another user's file, which would become the
	 * server's). */
	rc = -EPERM;
	if (exists && (faccessat(f.dirfd, f.name, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0 ||
	               !ws_may(ws, &cur, W_OK)))
		goto fail;
	/* The file goes into its directory by a rename: the directory must take writes. */
	rc = -EACCES;
	if (fstat(f.dirfd, &dir_st) < 0 || !ws_may(ws, &dir_st, W_OK | X_OK))
		goto fail;
	/* A file the call itself wrote exists for it, as on disk. */
	rc = -EEXIST;
	if ((exists || pending_in(c, f.dirfd, f.name)) && mode == IPC_OPEN_CREATE)
		goto fail;
	rc = -ENOENT;
	if (!exists && mode == IPC_OPEN_UPDATE && !pending_in(c, f.dirfd, f.name))
		goto fail;
	old = pending_in(c, f.dirfd, f.name);
	if (old) {
		write_free(&f, 0);
		if (old->linked && (rc = pending_own_copy(c, old, mode)) < 0)
			return rc;
		old->given |= given;
		return pending_reopen(old, mode, out, st);
	}
	if ((rc = hidden_name(c, f.tmp, sizeof(f.tmp))) < 0)
		goto fail;
	fd = openat(f.dirfd, f.tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	/* The file it replaces keeps its owner (a supervisor started as root writes the user's
	 * files as theirs) and its permissions, but never set-user-ID or set-group-ID: the new
	 * file is made by the supervisor, and must not become a program that runs as it. */
	if (exists && fchmod(fd, cur.st_mode & 01777) < 0) {
		rc = -errno;
		goto fail;
	}
	if (exists && geteuid() == 0 && (ws->as_owner || cur.st_uid != 0 || cur.st_gid != 0) &&
	    ws_chown(ws, fd, cur.st_uid, cur.st_gid) < 0)
		log_msg(LOG_WARN, "workspace: %s keeps root as its owner: %s", rel,
		        strerror(errno));
	/* A new file is the owner's (made with their identity); with the workspace root's own,
	 * its directory's owner's, as one its owner made would be (root's otherwise: a file the
	 * user could not change). */
	if (!exists && !ws->as_owner && geteuid() == 0 &&
	    (dir_st.st_uid != 0 || dir_st.st_gid != 0) &&
	    fchown(fd, dir_st.st_uid, dir_st.st_gid) < 0)
		log_msg(LOG_WARN, "workspace: %s is root's: %s", rel, strerror(errno));
	if (mode == IPC_OPEN_APPEND || mode == IPC_OPEN_UPDATE) {
		/* What the file holds: no more than a call may write, as the copy counts. */
		struct stat src_st;
		if (exists) {
			src = ws_open_regular(f.dirfd, f.name, ENGINE_WS_BYTES_PER_CALL, &src_st,
			                      NULL);
			rc = src; /* -EFBIG: more than a call may copy, at any time */
			if (src < 0)
				goto fail;
			/* Every copy counts against what the call may write, a file copied
			 * again and again included: the supervisor's work stays bounded. */
			rc = -EDQUOT;
			if ((uint64_t)src_st.st_size > ENGINE_WS_BYTES_PER_CALL - c->ws_copied)
				goto fail;
			rc = fill(c, f.dirfd, f.tmp, &fd, src, (uint64_t)src_st.st_size);
			if (rc != -EINPROGRESS)
				c->ws_copied += (uint64_t)src_st.st_size;
			if (rc < 0)
				goto fail;
			f.copied = 1;
			f.src_rel = strdup(rel);
			if (!f.src_rel) {
				rc = -ENOMEM;
				goto fail;
			}
			f.src_dev = src_st.st_dev;
			f.src_ino = src_st.st_ino;
			f.src_size = src_st.st_size;
			f.src_mtime = src_st.st_mtim;
			f.src_fd = src; /* held: its inode's number is not given to another */
			src = -1;
			/* "r+" starts at the beginning; "a" writes at the end whatever the offset. */
			if (lseek(fd, 0, SEEK_SET) < 0) {
				rc = -errno;
				goto fail;
			}
		}
		if (mode == IPC_OPEN_APPEND && fcntl(fd, F_SETFL, O_APPEND) < 0) {
			rc = -errno;
			goto fail;
		}
	}
	f.rel = strdup(rel);
	/* 'x', and 'a' on a name with no file: another call's file made there meanwhile is not
	 * replaced ('a' would drop what the other appended, both answered ok). */
	f.exclusive = mode == IPC_OPEN_CREATE || (mode == IPC_OPEN_APPEND && !exists);
	f.id = ++c->write_ids;
	rc = -ENOMEM;
	if (!f.rel)
		goto fail;
	if (fstat(fd, st) < 0) {
		rc = -errno;
		goto fail;
	}
	grown = realloc(c->writes, (c->n_writes + 1) * sizeof(*grown));
	if (!grown) {
		rc = -ENOMEM;
		goto fail;
	}
	c->writes = grown;
	f.given = given;
	c->writes[c->n_writes++] = f;
	if (!c->quota.armed)
		timer_arm(&c->quota, now_ms() + ENGINE_WS_CHECK_MS);
	*out = fd;
	return 0;
fail:
	if (src >= 0)
		close(src);
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
	/* Files opened to read are not counted: the supervisor keeps nothing of one once its fd
	 * is passed, the worker's fd limit bounds those open at once, and each open is a request,
	 * bounded per call. A call reads a thousand files one at a time. */
	else if (mode != IPC_OPEN_READ && c->fds_write >= ENGINE_WS_FDS_PER_CALL)
		rc = -EMFILE;
	else
		rc = ws_relative(ws, data + 4, len - 4, rel, sizeof(rel));
	if (rc == 0 && ws_rel_left_out(ws, rel))
		rc = -EACCES;
	if (rc == 0 && mode != IPC_OPEN_READ) {
		rc = ws_open_write(c, rel, (enum ipc_open_mode)mode, 1, &fd, &st);
	} else if (rc == 0) {
		/* What the call itself wrote, or the file (unless the call removed it). */
		int gone = ws_read_pending(c, rel, &w), followed = 0;

		fd = w      ? ws_open_regular(w->dirfd, w->tmp, ENGINE_WS_READ_MAX, &st, NULL)
		     : gone ? -ENOENT
		            : ws_open_regular(ws->fd, rel, ENGINE_WS_READ_MAX, &st, &followed);
		rc = fd < 0 ? fd : 0;
		/* A link followed (a file's link to another of the workspace, as stat and a listing
		 * follow them), or a path through directories (a host process may swap one for a
		 * link between the name's check and this open): what was opened, not only its
		 * name, is outside the cache. A name in the workspace's own directory is neither. */
		if (rc == 0 && (followed || strchr(rel, '/')) && ws->excluded &&
		    ws_object_left_out(ws, fd, ws_excluded_depth(ws))) {
			close(fd);
			rc = -EACCES;
		}
		if (rc == 0 && !w && !ws_may(ws, &st, R_OK)) {
			close(fd);
			rc = -EACCES;
		}
	}
	if (rc < 0) {
		reply(c, id, rc, NULL, 0, NULL, 0);
		return 0;
	}
	c->fds_given++;
	if (mode != IPC_OPEN_READ)
		c->fds_write++;
	stat_reply(c, id, &st, fd);
	return 0;
}

static int request_stat(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	char rel[PATH_MAX];
	struct stat st;
	struct ws_file *w = NULL;
	uint32_t flags;
	int fd, rc, gone = 0;

	if (len < 4)
		return -EINVAL;
	flags = ipc_get_u32((const unsigned char *)data);
	rc = ws->fd < 0                   ? -EACCES
	     : flags & ~IPC_STAT_NOFOLLOW ? -EINVAL
	                                  : ws_relative(ws, data + 4, len - 4, rel, sizeof(rel));
	if (rc == 0 && ws_rel_left_out(ws, rel))
		rc = -EACCES;
	if (rc == 0) {
		/* Followed, a link leads to what the call wrote or removed, as a read does. */
		if (flags & IPC_STAT_NOFOLLOW) {
			w = pending_named(c, rel);
			gone = !w && gone_named(c, rel);
		} else {
			gone = ws_read_pending(c, rel, &w);
		}
	}
	if (rc == 0 && w) {
		rc = fstatat(w->dirfd, w->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
	} else if (rc == 0 && gone) {
		rc = -ENOENT;
	} else if (rc == 0) {
		fd = ws_resolve(ws->fd, rel, O_PATH | (flags & IPC_STAT_NOFOLLOW ? O_NOFOLLOW : 0));
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

/* A listing's place: in the directory at its own offset (telldir: any 64 bits, a network file
 * system's cookie included), or among the files the call made there, at an index. */
struct list_place {
	uint32_t in_writes; /* 0: in the directory; else 1 + the index among the call's files */
	uint64_t offset;    /* the directory's offset (0: its start) */
};

/* One chunk of a listing. */
struct listing {
	struct strbuf out;
	size_t count;
	int more; /* the chunk is full: the listing goes on at next */
	struct list_place next;
};

/* Add one entry to the chunk; 0 once it is full (the entry left for the next), else 1. */
static int list_add(struct listing *l, char type, const char *name)
{
	size_t n = strlen(name) + 1;

	if (l->count > 0 && (l->count >= ENGINE_WS_LIST_MAX ||
	                     l->out.len + 1 + n > IPC_WS_LIST_CHUNK - IPC_LIST_PLACE))
		return 0;
	l->count++;
	sb_add(&l->out, &type, 1);
	sb_add(&l->out, name, n);
	return 1;
}

/* os.listdir and os.scandir: a directory's entries, a chunk a request, each chunk one short
 * turn of the loop (a listing of 30000 long names in one reply held it for a quarter of a
 * second). A chunk goes on from the directory's own offset, as readdir does, so no entry is
 * read twice. */
static int request_list(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	struct stat st;
	struct listing l = {0};
	struct list_place from;
	unsigned char next[IPC_LIST_PLACE];
	char rel[PATH_MAX];
	struct dirent *d;
	DIR *dir = NULL;
	int fd, rc;

	if (len < IPC_LIST_PLACE)
		return -EINVAL;
	from.in_writes = ipc_get_u32((const unsigned char *)data + 4);
	from.offset = ipc_get_u64((const unsigned char *)data + 8);
	data += IPC_LIST_PLACE;
	len -= IPC_LIST_PLACE;
	rc = ws->fd < 0 ? -EACCES : ws_relative(ws, data, len, rel, sizeof(rel));
	/* Listings count against the bytes served to the call, as modules do: a call listing a
	 * huge directory again and again spends the supervisor's time, not its own. */
	if (rc == 0 && c->served >= ENGINE_SERVED_PER_CALL)
		rc = -EDQUOT;
	if (rc == 0 && ws_rel_left_out(ws, rel))
		rc = -EACCES;
	if (rc == 0 && gone_named(c, rel))
		rc = -ENOENT;
	fd = rc == 0 ? ws_resolve(ws->fd, rel, O_RDONLY | O_DIRECTORY) : rc;
	if (fd >= 0 && dir_gone(c, fd)) {
		close(fd);
		fd = -ENOENT;
	}
	if (fd >= 0 && (fstat(fd, &st) < 0 || !ws_may(ws, &st, R_OK))) {
		close(fd);
		fd = -EACCES;
	}
	if (fd >= 0) {
		dir = fdopendir(fd);
		if (!dir) {
			rc = -errno;
			close(fd);
		}
	} else {
		rc = fd;
	}
	if (dir && !from.in_writes && from.offset)
		seekdir(dir, (long)from.offset);
	while (dir && !from.in_writes) {
		long at = telldir(dir);
		if (!(d = readdir(dir))) {
			from.in_writes = 1;
			break;
		}
		/* A name the call removed is gone, or listed below with the file the call
		 * wrote there since (a rename away, then a new file by that name). */
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0 ||
		    strncmp(d->d_name, WS_TMP_PREFIX, strlen(WS_TMP_PREFIX)) == 0 ||
		    (c->n_removals > 0 && removal_in(c, dirfd(dir), d->d_name)))
			continue;
		if (!list_add(&l, entry_type(dirfd(dir), d), d->d_name)) {
			l.more = 1;
			l.next.offset = (uint64_t)at;
			break;
		}
	}
	if (dir) {
		/* Files the call created there (the directory by its identity), not on disk yet. */
		for (size_t i = from.in_writes ? from.in_writes - 1 : 0; !l.more && i < c->n_writes;
		     i++) {
			if (same_dir(c->writes[i].dirfd, dirfd(dir)) &&
			    (removal_in(c, c->writes[i].dirfd, c->writes[i].name) ||
			     fstatat(c->writes[i].dirfd, c->writes[i].name, &st,
			             AT_SYMLINK_NOFOLLOW) < 0) &&
			    !list_add(&l, IPC_ENTRY_FILE, c->writes[i].name)) {
				l.more = 1;
				l.next.in_writes = (uint32_t)i + 1;
			}
		}
		closedir(dir);
	}
	if (rc == 0 && l.out.failed)
		rc = -ENOMEM;
	c->served += l.out.len;
	ipc_put_u32(next, (uint32_t)l.more);
	ipc_put_u32(next + 4, l.next.in_writes);
	ipc_put_u64(next + 8, l.next.offset);
	if (rc < 0)
		reply(c, id, rc, NULL, 0, NULL, 0);
	else
		reply(c, id, 0, next, sizeof(next), l.out.s, l.out.len);
	free(l.out.s);
	return 0;
}

/* os.mkdir: made at once, beneath the workspace, never over anything (a file the call writes
 * included); its mode without set-ID or sticky bits, less the server's umask; a directory the
 * server made as root is its parent's owner's. */
static int request_mkdir(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	char rel[PATH_MAX], canon[PATH_MAX];
	struct ws_dir *grown;
	struct ws_removal *w;
	struct stat st, parent_st;
	char *name = NULL;
	uint32_t mode;
	int pfd = -1, fd = -1, made = 0, rc;
	size_t n;

	if (len < 4)
		return -EINVAL;
	mode = ipc_get_u32((const unsigned char *)data);
	rc = ws->fd < 0      ? -EACCES
	     : !ws->writable ? -EROFS
	                     : ws_relative(ws, data + 4, len - 4, rel, sizeof(rel));
	/* "d/" is the directory d. (rel holds nothing when the path was refused.) */
	for (n = rc == 0 ? strlen(rel) : 0; n > 1 && rel[n - 1] == '/'; n--)
		rel[n - 1] = '\0';
	if (rc == 0 && ws_rel_left_out(ws, rel))
		rc = -EACCES;
	if (rc == 0 && c->n_dirs >= ENGINE_WS_DIRS_PER_CALL)
		rc = -EDQUOT;
	/* The directory is held open until the call ends (struct ws_dir). */
	if (rc == 0 && engine_fd_room(c->e) < 1)
		rc = -ENFILE;
	if (rc == 0 && (pfd = ws_parent(ws, rel, &name)) < 0)
		rc = pfd == -EISDIR ? -EEXIST : pfd; /* ".", "..": there already */
	if (rc == 0)
		rc = ws_dir_changes(ws, pfd);
	if (rc == 0 && strlen(name) > NAME_MAX)
		rc = -ENAMETOOLONG;
	if (rc == 0 && pending_in(c, pfd, name))
		rc = -EEXIST;
	if (rc == 0 && dir_gone(c, pfd))
		rc = -ENOENT;
	if (rc == 0 && (fstat(pfd, &parent_st) < 0 || !ws_may(ws, &parent_st, W_OK | X_OK)))
		rc = -EACCES;
	/* A directory the call removed is there again: its removal is forgotten (what it removed
	 * in it stays removed). A file it removed is still on disk: the name is taken. A name
	 * another call emptied meanwhile is made as any other. */
	if (rc == 0 && (w = removal_in(c, pfd, name)) != NULL) {
		int held = removal_holds(w);
		if (w->dir || !held) {
			/* The others keep their order: directories go in the order removed. */
			size_t i = (size_t)(w - c->removals);
			int dir = w->dir;
			removal_free(w);
			memmove(w, w + 1, (c->n_removals - i - 1) * sizeof(*w));
			c->n_removals--;
			if (dir && held)
				goto out;
			/* gone already (another call removed it): made below */
		} else {
			rc = -EEXIST;
		}
	}
	/* Kept by the one name its parent gives it ("d/../e" is "e"), which other calls compare
	 * theirs with: a parent whose name is too long to read back is refused. */
	if (rc == 0)
		rc = ws_canonical(ws, pfd, name, canon, sizeof(canon));
	if (rc == 0 && mkdirat(pfd, name, (mode & 0777) | 0700) < 0)
		rc = -errno;
	made = rc == 0;
	if (rc == 0) {
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		rc = fd < 0 || fstat(fd, &st) < 0 ? -errno : 0;
	}
	if (rc == 0 && !ws->as_owner && geteuid() == 0 &&
	    (parent_st.st_uid != 0 || parent_st.st_gid != 0) &&
	    fchown(fd, parent_st.st_uid, parent_st.st_gid) < 0)
		log_msg(LOG_WARN, "workspace: %s is root's: %s", rel, strerror(errno));
	if (rc == 0) {
		grown = realloc(c->dirs, (c->n_dirs + 1) * sizeof(*grown));
		rc = -ENOMEM;
		if (grown) {
			c->dirs = grown;
			grown[c->n_dirs].rel = strdup(canon);
			grown[c->n_dirs].dev = st.st_dev;
			grown[c->n_dirs].ino = st.st_ino;
			grown[c->n_dirs].fd = fd;
			grown[c->n_dirs].mode = st.st_mode & 07777;
			grown[c->n_dirs].chmod_set = 0;
			grown[c->n_dirs].times_set = 0;
			if (grown[c->n_dirs].rel) {
				c->n_dirs++;
				fd = -1; /* kept */
				rc = 0;
			}
		}
	}
	if (rc < 0 && made)
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
out:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	free(name);
	reply(c, id, rc, NULL, 0, NULL, 0);
	return 0;
}

/* Is the entry name of the directory dfd a directory that goes if calls in progress do not
 * commit: an orphan that waits, or one a call in progress made? By identity, as they were
 * made: no path is compared (orphans can be thousands, their paths long). */
static int dir_pending_at(const struct engine *e, int dfd, const char *name)
{
	const struct chain *c;
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	for (size_t i = 0; i < e->ws.n_orphans; i++)
		if (e->ws.orphans[i].rel && e->ws.orphans[i].dev == st.st_dev &&
		    e->ws.orphans[i].ino == st.st_ino)
			return 1;
	TAILQ_FOREACH(c, &e->chains, link)
	for (size_t i = 0; i < c->n_dirs; i++)
		if (c->dirs[i].rel && c->dirs[i].dev == st.st_dev && c->dirs[i].ino == st.st_ino)
			return 1;
	return 0;
}

/* Does the directory dfd hold only what calls in progress put there (their hidden files, and
 * directories that go as well if they do not commit)? */
static int dir_only_pending(const struct engine *e, int dfd)
{
	struct dirent *d;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), only = 1;
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (only && (d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0 ||
		    strncmp(d->d_name, WS_TMP_PREFIX, strlen(WS_TMP_PREFIX)) == 0)
			continue;
		only = dir_pending_at(e, dirfd(dir), d->d_name);
	}
	closedir(dir);
	return only;
}

/* A directory a call that did not commit made stays (another call's files are in it): the
 * permission bits and times its chmod and utime set go back to what they were, unless they
 * were changed since. */
static void dir_attrs_back(const struct ws_dir *d)
{
	struct stat st;

	if (d->fd < 0 || (!d->chmod_set && !d->times_set) || fstat(d->fd, &st) < 0 ||
	    st.st_dev != d->dev || st.st_ino != d->ino)
		return;
	if (d->chmod_set && (st.st_mode & 07777) == d->mode_set && fchmod(d->fd, d->mode) < 0)
		log_msg(LOG_WARN, "workspace: %s keeps a failed call's mode: %s", d->rel,
		        strerror(errno));
	if (d->times_set && st.st_mtim.tv_sec == d->mtime_set.tv_sec &&
	    st.st_mtim.tv_nsec == d->mtime_set.tv_nsec && futimens(d->fd, d->times_before) < 0)
		log_msg(LOG_WARN, "workspace: %s keeps a failed call's times: %s", d->rel,
		        strerror(errno));
}

/* Remove a directory a call that did not commit made, if it is still that directory and
 * empty. Returns 1 when it is gone (or is another directory now), 0 when it holds only what
 * calls in progress put there (it waits for them: dir_orphans_retry), -1 when a call's file
 * or directory was committed there (it stays). */
static int dir_remove(const struct engine *e, const struct ws_dir *d)
{
	const struct workspace *ws = &e->ws;
	char *name = NULL;
	struct stat st;
	int pfd = ws->fd >= 0 ? ws_parent(ws, d->rel, &name) : -1, rc = 1, dfd;

	if (pfd < 0)
		return 1;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_dev == d->dev && st.st_ino == d->ino && unlinkat(pfd, name, AT_REMOVEDIR) < 0) {
		if (errno == ENOTEMPTY || errno == EEXIST) {
			dfd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			rc = dfd >= 0 && dir_only_pending(e, dfd) ? 0 : -1;
			if (dfd >= 0)
				close(dfd);
			if (rc < 0)
				dir_attrs_back(d);
		} else {
			log_msg(LOG_WARN, "workspace: %s not removed: %s", d->rel, strerror(errno));
		}
	}
	close(pfd);
	free(name);
	return rc;
}

/* Directories that calls which did not commit made, and that held another call's pending
 * files when they ended: each goes once those calls have ended without committing there. A
 * call's end starts a pass over them all, made in slices: each tries at least
 * ENGINE_WS_ORPHANS_RETRY in turn, or more within ENGINE_WS_ORPHANS_RETRY_US (a try walks its
 * path and reads the directory), and the next comes ENGINE_WS_ORPHANS_SLICE_MS later, so that
 * thousands waiting, with long paths, never hold the supervisor's loop for long. */
static void dir_orphans_retry(struct engine *e, int all)
{
	struct workspace *ws = &e->ws;
	size_t n = ws->n_orphans, start = n ? ws->orphans_next % n : 0, tried = 0, kept = 0, end,
	       next = 0;
	int64_t until = now_us() + ENGINE_WS_ORPHANS_RETRY_US;

	/* The deepest came first (dirs_end): a parent is tried after its children. */
	for (size_t k = 0; k < n && tried < ws->orphans_pass &&
	                   (all || tried < ENGINE_WS_ORPHANS_RETRY || now_us() < until);
	     k++, tried++) {
		struct ws_dir *d = &ws->orphans[(start + k) % n];
		if (dir_remove(e, d) != 0) {
			free(d->rel);
			d->rel = NULL;
			if (d->fd >= 0)
				close(d->fd);
			d->fd = -1;
		}
	}
	/* The next slice starts after the last one tried: at the place, among those kept, of the
	 * first that came after it. */
	end = n ? (start + tried) % n : 0;
	for (size_t i = 0; i < n; i++) {
		if (i == end)
			next = kept;
		if (ws->orphans[i].rel)
			ws->orphans[kept++] = ws->orphans[i];
	}
	ws->n_orphans = kept;
	ws->orphans_next = kept ? next % kept : 0;
	ws->orphans_pass = kept ? ws->orphans_pass - tried : 0;
	if (ws->orphans_pass > 0 && !all)
		timer_arm(&e->orphans, now_ms() + ENGINE_WS_ORPHANS_SLICE_MS);
}

/* A pass over every orphan, in order (the deepest first), in slices from here on. */
static void dir_orphans_pass(struct engine *e)
{
	e->ws.orphans_pass = e->ws.n_orphans;
	e->ws.orphans_next = 0;
	dir_orphans_retry(e, 0);
}

void broker_orphans_more(struct timer *t)
{
	dir_orphans_retry(t->data, 0);
}

void broker_orphans_settle(struct engine *e)
{
	size_t before;

	timer_cancel(&e->orphans);
	do {
		before = e->ws.n_orphans;
		e->ws.orphans_pass = before;
		e->ws.orphans_next = 0;
		dir_orphans_retry(e, 1);
	} while (e->ws.n_orphans > 0 && e->ws.n_orphans < before);
}

/* Keep d (its rel and fd move) among the orphans, its directory held open; beyond their bound,
 * or when the supervisor has no fds to spare for it, it is left in place. */
static void dir_orphan_add(struct engine *e, struct ws_dir *d, int *room)
{
	struct workspace *ws = &e->ws;
	struct ws_dir *grown;

	/* Known only by its inode number, it could be another directory by the time it is tried
	 * (ext4 reuses the number of one removed): an orphan holds its directory, or is not kept. */
	if (d->fd < 0 || --*room < ENGINE_WS_ORPHAN_FD_ROOM ||
	    ws->n_orphans >= ENGINE_WS_ORPHANS_MAX ||
	    !(grown = realloc(ws->orphans, (ws->n_orphans + 1) * sizeof(*grown)))) {
		log_msg(LOG_WARN, "workspace: %s is left in place (a call that failed made it)",
		        d->rel);
		free(d->rel);
		if (d->fd >= 0)
			close(d->fd);
	} else {
		ws->orphans = grown;
		ws->orphans[ws->n_orphans++] = *d;
	}
	d->rel = NULL;
	d->fd = -1;
}

/* Forget the directories the call made; remove them (the deepest first) when it did not
 * commit; then try again those that waited for other calls. */
static void dirs_end(struct chain *c, int remove)
{
	struct workspace *ws = &c->e->ws;
	/* Counted once: each directory kept open was open already. */
	int room = remove && c->n_dirs ? engine_fd_room(c->e) + (int)c->n_dirs : 0;

	for (size_t i = c->n_dirs; i-- > 0;) {
		/* Its own deeper ones are gone or kept already: not pending any more. */
		if (remove && dir_remove(c->e, &c->dirs[i]) == 0)
			dir_orphan_add(c->e, &c->dirs[i], &room);
		free(c->dirs[i].rel);
		c->dirs[i].rel = NULL;
		if (c->dirs[i].fd >= 0)
			close(c->dirs[i].fd);
		c->dirs[i].fd = -1;
	}
	free(c->dirs);
	c->dirs = NULL;
	c->n_dirs = 0;
	if (ws->n_orphans > 0)
		dir_orphans_pass(c->e);
}

/* ---- removals and renames ------------------------------------------------------------------ */

static void outcome_note(struct run_outcome *o, const char *line);

/* In a directory with the sticky bit, only a file's owner or the directory's removes or
 * renames it (the commit does so as the supervisor: the rule is checked here, as the owner, or
 * as the supervisor's own user when it is not root). */
static int ws_sticky_refuses(const struct workspace *ws, int dirfd, const struct stat *st)
{
	uid_t who = ws->as_owner ? ws->owner_uid : geteuid();
	struct stat dir;

	if (who == 0)
		return 0;
	if (fstat(dirfd, &dir) < 0)
		return 1;
	return (dir.st_mode & S_ISVTX) && st->st_uid != who && dir.st_uid != who;
}

/* A file that is not the server's to remove or replace: not a regular file, or one it could
 * not write (its permissions as the workspace's owner meets them, as for writes). */
static int ws_replaceable(const struct workspace *ws, int dirfd, const char *name,
                          const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EACCES;
	if (faccessat(dirfd, name, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0 ||
	    !ws_may(ws, st, W_OK) || ws_sticky_refuses(ws, dirfd, st))
		return -EPERM;
	return 0;
}

/* A directory whose names the call changes: beneath the workspace, not left out, taking
 * writes. */
static int ws_parent_writable(const struct workspace *ws, const char *rel, char **name)
{
	struct stat st;
	int fd = ws_parent(ws, rel, name), rc = 0;

	if (fd < 0)
		return fd;
	if (strlen(*name) > NAME_MAX)
		rc = -ENAMETOOLONG;
	else if (fstat(fd, &st) < 0 || !ws_may(ws, &st, W_OK | X_OK))
		rc = -EACCES;
	/* The kernel's word as the owner (an ACL may close what the mode bits open): the names
	 * change at the commit, as root. */
	else if (ws->as_owner && faccessat(fd, "", W_OK | X_OK, AT_EACCESS | AT_EMPTY_PATH) < 0)
		rc = -EACCES;
	else
		rc = ws_dir_changes(ws, fd);
	if (rc < 0) {
		close(fd);
		free(*name);
		*name = NULL;
		return rc;
	}
	return fd;
}

/* The call's removal of name in the directory dirfd (by the directory's identity), or NULL. */
static struct ws_removal *removal_in(struct chain *c, int dirfd, const char *name)
{
	for (size_t i = 0; i < c->n_removals; i++)
		if (strcmp(c->removals[i].name, name) == 0 && same_dir(c->removals[i].dirfd, dirfd))
			return &c->removals[i];
	return NULL;
}

/* Is name in dirfd gone for the call: removed, and not written again since? */
static int gone_in(struct chain *c, int dirfd, const char *name)
{
	return c->n_removals > 0 && removal_in(c, dirfd, name) && !pending_in(c, dirfd, name);
}

/* Is the path rel gone for the call? */
static int gone_named(struct chain *c, const char *rel)
{
	char *name = NULL;
	int fd, gone;

	if (c->n_removals == 0)
		return 0;
	fd = ws_parent(&c->e->ws, rel, &name);
	if (fd < 0)
		return 0;
	gone = gone_in(c, fd, name);
	close(fd);
	free(name);
	return gone;
}

/* Is the directory dirfd one the call removed? */
static int dir_gone(struct chain *c, int dirfd)
{
	struct stat st;

	if (c->n_removals == 0 || fstat(dirfd, &st) < 0)
		return 0;
	for (size_t i = 0; i < c->n_removals; i++)
		if (c->removals[i].dir && c->removals[i].dev == st.st_dev &&
		    c->removals[i].ino == st.st_ino)
			return 1;
	return 0;
}

static void removal_free(struct ws_removal *r)
{
	if (r->dirfd >= 0)
		close(r->dirfd);
	if (r->objfd >= 0)
		close(r->objfd);
	free(r->name);
	memset(r, 0, sizeof(*r));
	r->dirfd = r->objfd = -1;
}

/* Does the name still hold what the call removes? */
static int removal_holds(const struct ws_removal *r)
{
	struct stat st;

	return fstatat(r->dirfd, r->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == r->dev &&
	       st.st_ino == r->ino;
}

/* Record the removal of name in dirfd, the object st describes. */
static int removal_add(struct chain *c, int dirfd, const char *name, const struct stat *st,
                       unsigned int rename)
{
	struct ws_removal r = {.dir = S_ISDIR(st->st_mode), .objfd = -1, .rename = rename}, *grown;
	struct stat now;

	if (c->n_removals >= ENGINE_WS_REMOVALS_PER_CALL)
		return -EDQUOT;
	if (engine_fd_room(c->e) < 2)
		return -ENFILE;
	r.dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	/* The object itself, held: its inode number is no other file's until the call ends, so
	 * the commit removes the name only if it still holds this very file. */
	r.objfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (r.objfd >= 0 &&
	    (fstat(r.objfd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino)) {
		removal_free(&r);
		return -EBUSY; /* replaced meanwhile */
	}
	r.dev = st->st_dev;
	r.ino = st->st_ino;
	r.name = strdup(name);
	grown = r.dirfd >= 0 && r.objfd >= 0 && r.name
	            ? realloc(c->removals, (c->n_removals + 1) * sizeof(*grown))
	            : NULL;
	if (!grown) {
		removal_free(&r);
		return -ENOMEM;
	}
	c->removals = grown;
	c->removals[c->n_removals++] = r;
	return 0;
}

/* Forget the call's pending write w (its hidden file goes). */
/* A file of the call's it drops (removes, or replaces by a rename) may still be open in the
 * worker to write: its name goes, its bytes stay on disk as long as the worker holds it, and
 * they still count in the call's quota until the call ends. Not being able to hold it counts
 * as over the quota. */
static void pending_hold(struct chain *c, const struct ws_file *w)
{
	int fd, *grown;

	if (!w->given || w->dirfd < 0 || !w->tmp[0])
		return;
	fd = engine_fd_room(c->e) >= 1 ? openat(w->dirfd, w->tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC)
	                               : -1;
	grown = fd >= 0 ? realloc(c->held, (c->n_held + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		if (fd >= 0)
			close(fd);
		c->held_lost = 1;
		return;
	}
	c->held = grown;
	c->held[c->n_held++] = fd;
}

static void held_free(struct chain *c)
{
	for (size_t i = 0; i < c->n_held; i++)
		close(c->held[i]);
	free(c->held);
	c->held = NULL;
	c->n_held = 0;
	c->held_lost = 0;
}

static void pending_drop(struct chain *c, struct ws_file *w)
{
	size_t i = (size_t)(w - c->writes);

	pending_hold(c, w);
	write_free(w, 1);
	c->writes[i] = c->writes[--c->n_writes];
}

/* os.remove: the file is gone for the call at once, and from disk when the call commits (if it
 * is still that file); a file the call itself wrote goes at once. */
static int remove_file(struct chain *c, int pfd, const char *name)
{
	struct ws_file *w = pending_in(c, pfd, name);
	struct stat st;
	int rc;

	if (!removal_in(c, pfd, name) && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if ((rc = ws_replaceable(&c->e->ws, pfd, name, &st)) < 0)
			return rc;
		if ((rc = removal_add(c, pfd, name, &st, 0)) < 0)
			return rc;
	} else if (!w) {
		return -ENOENT;
	}
	if (w)
		pending_drop(c, w);
	return 0;
}

/* Does the directory dfd hold nothing for the call: every entry one it removes? A hidden file
 * is a file written there (by this call or another), not yet in place. */
static int dir_empty_for(struct chain *c, int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), empty = 1;
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *d;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (empty && (d = readdir(dir)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			empty = !pending_in(c, dfd, d->d_name) && removal_in(c, dfd, d->d_name);
	closedir(dir);
	return empty;
}

/* os.rmdir: a directory the call made goes at once; another is gone for the call at once, and
 * from disk when the call commits, if it is empty then. */
static int remove_dir(struct chain *c, int pfd, const char *name)
{
	struct stat st;
	int dfd, empty;

	if (gone_in(c, pfd, name))
		return -ENOENT;
	/* (a file the call wrote there, on disk yet or not, over a directory it removed or not:
	 * the name is that file for the call) */
	if (pending_in(c, pfd, name))
		return -ENOTDIR;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -ENOENT;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (ws_sticky_refuses(&c->e->ws, pfd, &st))
		return -EPERM;
	dfd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	empty = dir_empty_for(c, dfd);
	close(dfd);
	if (!empty)
		return -ENOTEMPTY;
	for (size_t i = 0; i < c->n_dirs; i++) {
		if (c->dirs[i].dev != st.st_dev || c->dirs[i].ino != st.st_ino)
			continue;
		/* The call's own, empty on disk: nothing of another call's is in it. */
		if (unlinkat(pfd, name, AT_REMOVEDIR) < 0)
			return -errno;
		free(c->dirs[i].rel);
		if (c->dirs[i].fd >= 0)
			close(c->dirs[i].fd);
		memmove(&c->dirs[i], &c->dirs[i + 1], (c->n_dirs - i - 1) * sizeof(c->dirs[0]));
		c->n_dirs--;
		return 0;
	}
	return removal_add(c, pfd, name, &st, 0);
}

static int request_remove(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	char rel[PATH_MAX];
	char *name = NULL;
	uint32_t flags;
	int pfd = -1, rc;
	size_t n;

	if (len < 4)
		return -EINVAL;
	flags = ipc_get_u32((const unsigned char *)data);
	rc = ws->fd < 0                ? -EACCES
	     : flags & ~IPC_REMOVE_DIR ? -EINVAL
	     : !ws->writable           ? -EROFS
	                               : ws_relative(ws, data + 4, len - 4, rel, sizeof(rel));
	/* "d/" is the directory d. */
	for (n = rc == 0 && (flags & IPC_REMOVE_DIR) ? strlen(rel) : 0; n > 1 && rel[n - 1] == '/';
	     n--)
		rel[n - 1] = '\0';
	if (rc == 0 && ws_rel_left_out(ws, rel))
		rc = -EACCES;
	if (rc == 0 && (pfd = ws_parent_writable(ws, rel, &name)) < 0)
		rc = pfd == -EISDIR && (flags & IPC_REMOVE_DIR) ? -EINVAL : pfd; /* ".", ".." */
	if (rc == 0)
		rc = flags & IPC_REMOVE_DIR ? remove_dir(c, pfd, name) : remove_file(c, pfd, name);
	if (pfd >= 0)
		close(pfd);
	free(name);
	reply(c, id, rc, NULL, 0, NULL, 0);
	return 0;
}

/* A directory the call made (by its identity), opened, or -1. */
static int made_dir(const struct chain *c, const char *rel, struct ws_dir **which)
{
	struct stat st;
	int fd;

	if (c->n_dirs == 0)
		return -1;
	fd = ws_resolve(c->e->ws.fd, rel, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0)
		for (size_t i = 0; i < c->n_dirs; i++)
			if (c->dirs[i].dev == st.st_dev && c->dirs[i].ino == st.st_ino) {
				*which = &c->dirs[i];
				return fd;
			}
	close(fd);
	return -1;
}

/* A time of an IPC_REQ_UTIME request (seconds, nanoseconds), or -EINVAL. */
static int utime_get(const unsigned char *p, struct timespec *ts)
{
	uint64_t sec = (uint64_t)ipc_get_u32(p) | (uint64_t)ipc_get_u32(p + 4) << 32;
	uint32_t nsec = ipc_get_u32(p + 8);

	if (nsec == IPC_UTIME_NOW) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_NOW;
		return 0;
	}
	if (nsec >= 1000000000u)
		return -EINVAL;
	ts->tv_sec = (time_t)(int64_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

/* IPC_REQ_CHMOD, IPC_REQ_UTIME: what changes is a file the call writes (so that nothing
 * changes on disk before it commits, and nothing if it does not: a file it has not written
 * becomes a copy of its own first, as when it is opened for update) or a directory the call
 * made (on disk already: its permissions keep the owner's access, so that the call's files
 * can still be placed in it). Nothing beyond the permission bits: a file the supervisor
 * makes never becomes a program that runs as its owner. */
static int request_attr(struct chain *c, uint32_t id, const char *data, size_t len, int times)
{
	const struct workspace *ws = &c->e->ws;
	const size_t head = 4 + (times ? IPC_UTIME_BYTES : 0);
	const unsigned char *u = (const unsigned char *)data;
	struct timespec ts[2];
	char rel[PATH_MAX];
	struct stat st;
	uint32_t word;
	int fd = -1, dir, slash = 0, rc;
	size_t n, before = c->n_writes;
	struct ws_dir *made = NULL;
	int before_known;

	if (len < head)
		return -EINVAL;
	word = ipc_get_u32(u);
	rc = ws->fd < 0                                                                 ? -EACCES
	     : times && word != 0                                                       ? -EINVAL
	     : !times && word & ~0777u                                                  ? -EPERM
	     : times && (utime_get(u + 4, &ts[0]) < 0 || utime_get(u + 16, &ts[1]) < 0) ? -EINVAL
	     : !ws->writable                                                            ? -EROFS
	                     : ws_relative(ws, data + head, len - head, rel, sizeof(rel));
	for (n = rc == 0 ? strlen(rel) : 0; n > 1 && rel[n - 1] == '/'; n--) {
		rel[n - 1] = '\0';
		slash = 1; /* "x/" names a directory */
	}
	if (rc == 0 && ws_rel_left_out(ws, rel))
		rc = -EACCES;
	if (rc < 0) {
		reply(c, id, rc, NULL, 0, NULL, 0);
		return 0;
	}
	fd = gone_named(c, rel) ? -1 : made_dir(c, rel, &made);
	dir = fd >= 0;
	if (!dir && slash) {
		reply(c, id, -ENOTDIR, NULL, 0, NULL, 0);
		return 0;
	}
	/* A directory it did not make is on disk for every call: it stays as it is. */
	if (!dir && !gone_named(c, rel) &&
	    (fd = ws_resolve(ws->fd, rel, O_PATH | O_DIRECTORY)) >= 0)
		rc = -EPERM;
	else if (!dir)
		rc = ws_open_write(c, rel, IPC_OPEN_UPDATE, 0, &fd, &st);
	if (rc == 0 && dir && !times && (word & 0700) != 0700)
		rc = -EPERM;
	/* (a directory's times before the call first set them: put back if it stays) */
	before_known = dir && times && made->times_set;
	if (rc == 0 && dir && times && !made->times_set && fstat(fd, &st) == 0) {
		made->times_before[0] = st.st_atim;
		made->times_before[1] = st.st_mtim;
		before_known = 1;
	}
	if (rc == 0 && !times && fchmod(fd, (mode_t)word) < 0)
		rc = -errno;
	if (rc == 0 && times && futimens(fd, ts) < 0)
		rc = -errno;
	if (rc == 0 && dir && fstat(fd, &st) == 0) {
		if (times && before_known) {
			made->mtime_set = st.st_mtim;
			made->times_set = 1;
		} else if (!times) {
			made->mode_set = st.st_mode & 07777;
			made->chmod_set = 1;
		}
	}
	if (fd >= 0)
		close(fd);
	/* The copy made for this request goes when the change fails: the file was not changed.
	 * It is the last of the call's writes, and no fd of it was given. */
	if (rc < 0 && c->n_writes > before)
		write_free(&c->writes[--c->n_writes], 1);
	reply(c, id, rc, NULL, 0, NULL, 0);
	return 0;
}

/* A file of the call's, moved: its hidden file goes to the new directory under a new hidden
 * name, and takes the new name. */
static int pending_move(struct chain *c, struct ws_file *w, int dp, const char *dname,
                        const char *drel)
{
	char tmp[64], *rel = strdup(drel), *name = strdup(dname);
	int fd = fcntl(dp, F_DUPFD_CLOEXEC, 0), rc;

	rc = !rel || !name || fd < 0 ? -ENOMEM : hidden_name(c, tmp, sizeof(tmp));
	if (rc == 0 && renameat2(w->dirfd, w->tmp, dp, tmp, RENAME_NOREPLACE) < 0)
		rc = -errno;
	if (rc < 0) {
		free(rel);
		free(name);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(w->dirfd);
	free(w->rel);
	free(w->name);
	w->dirfd = fd;
	w->rel = rel;
	w->name = name;
	w->exclusive = 0;
	memcpy(w->tmp, tmp, sizeof(tmp));
	return 0;
}

/* A file on disk, renamed: a pending write of the new name whose hidden file is a second name
 * of the same file (a hard link: no byte copied, its owner, mode and identity kept, as a
 * rename keeps them), and the old name removed. */
static int pending_link(struct chain *c, int sp, const char *sname, const struct stat *sst, int dp,
                        const char *dname, const char *drel, int replacing)
{
	struct ws_file f = {.dirfd = -1, .linked = 1}, *grown;
	int rc;

	/* One that replaces a pending file of the call's takes its place in the count. */
	if (c->n_writes >= ENGINE_WS_FILES_PER_CALL + (size_t)replacing)
		return -EDQUOT;
	if (engine_fd_room(c->e) < 2)
		return -ENFILE;
	if ((rc = hidden_name(c, f.tmp, sizeof(f.tmp))) < 0)
		return rc;
	/* Where there can be no second name (another file system; a file of another user's,
	 * which the kernel's protected_hardlinks refuses), a copy. */
	if (linkat(sp, sname, dp, f.tmp, 0) < 0) {
		if (errno == ENOENT || errno == ENOMEM)
			return -errno;
		if ((rc = hidden_copy(c, sp, sname, dp, f.tmp, 1)) < 0)
			return rc;
		f.linked = 0;
	}
	f.dirfd = fcntl(dp, F_DUPFD_CLOEXEC, 0);
	f.name = strdup(dname);
	f.rel = strdup(drel);
	grown = f.dirfd >= 0 && f.name && f.rel
	            ? realloc(c->writes, (c->n_writes + 1) * sizeof(*grown))
	            : NULL;
	if (!grown) {
		(void)unlinkat(dp, f.tmp, 0);
		f.tmp[0] = '\0';
		write_free(&f, 0);
		return -ENOMEM;
	}
	f.id = ++c->write_ids;
	c->writes = grown;
	c->writes[c->n_writes++] = f;
	if ((rc = removal_add(c, sp, sname, sst, f.id)) < 0) {
		pending_drop(c, &c->writes[c->n_writes - 1]);
		return rc;
	}
	return 0;
}

/* os.rename, os.replace: the new name holds the file and the old one none, for the call at
 * once and on disk when it commits. Directories are not renamed (the call's pending files and
 * made directories are kept by their paths). */
static int rename_file(struct chain *c, int sp, const char *sname, int dp, const char *dname,
                       const char *drel)
{
	const struct workspace *ws = &c->e->ws;
	struct ws_file *sw = pending_in(c, sp, sname), *dw = pending_in(c, dp, dname);
	struct stat sst, dst, tst;
	int s_disk =
	    !removal_in(c, sp, sname) && fstatat(sp, sname, &sst, AT_SYMLINK_NOFOLLOW) == 0;
	int d_disk =
	    !removal_in(c, dp, dname) && fstatat(dp, dname, &dst, AT_SYMLINK_NOFOLLOW) == 0;
	int rc;

	if ((!s_disk && !sw) || dir_gone(c, dp))
		return -ENOENT;
	/* Two names of one file, the first the call's rename of it: nothing to do either. */
	if (sw && sw->linked && d_disk && !dw &&
	    fstatat(sw->dirfd, sw->tmp, &tst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    tst.st_dev == dst.st_dev && tst.st_ino == dst.st_ino)
		return 0;
	if (s_disk && S_ISDIR(sst.st_mode) && !sw)
		return -EXDEV; /* shutil.move copies then */
	if (s_disk && (rc = ws_replaceable(ws, sp, sname, &sst)) < 0)
		return rc;
	if (d_disk && (rc = ws_replaceable(ws, dp, dname, &dst)) < 0)
		return rc;
	/* A file on disk renamed onto the call's rename of a second name of it. */
	if (!sw && dw && dw->linked &&
	    fstatat(dw->dirfd, dw->tmp, &tst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    tst.st_dev == sst.st_dev && tst.st_ino == sst.st_ino)
		return 0;
	/* One file by two names: nothing to do, as rename(2) does. */
	if (sw ? sw == dw : !dw && d_disk && sst.st_dev == dst.st_dev && sst.st_ino == dst.st_ino)
		return 0;
	if (sw) {
		/* The old name on disk goes too: it no longer holds a file. */
		if (s_disk && (rc = removal_add(c, sp, sname, &sst, sw->id)) < 0)
			return rc;
		if ((rc = pending_move(c, sw, dp, dname, drel)) < 0) {
			if (s_disk)
				removal_free(&c->removals[--c->n_removals]);
			return rc;
		}
		if (dw)
			pending_drop(c, dw); /* may move sw's entry: not used after */
		return 0;
	}
	if (dw) {
		/* The new name's pending file goes once the rename is made (its entry may move
		 * when the array grows: kept by its place). */
		size_t di = (size_t)(dw - c->writes);
		if ((rc = pending_link(c, sp, sname, &sst, dp, dname, drel, 1)) < 0)
			return rc;
		pending_drop(c, &c->writes[di]);
		return 0;
	}
	return pending_link(c, sp, sname, &sst, dp, dname, drel, 0);
}

static int request_rename(struct chain *c, uint32_t id, const char *data, size_t len)
{
	const struct workspace *ws = &c->e->ws;
	const char *nul = memchr(data, '\0', len);
	char src[PATH_MAX], dst[PATH_MAX], canon[PATH_MAX];
	char *sname = NULL, *dname = NULL;
	int sp = -1, dp = -1, rc;

	if (!nul)
		return -EINVAL;
	rc = ws->fd < 0      ? -EACCES
	     : !ws->writable ? -EROFS
	                     : ws_relative(ws, data, (size_t)(nul - data), src, sizeof(src));
	if (rc == 0)
		rc = ws_relative(ws, nul + 1, len - (size_t)(nul - data) - 1, dst, sizeof(dst));
	if (rc == 0 && (ws_rel_left_out(ws, src) || ws_rel_left_out(ws, dst)))
		rc = -EACCES;
	if (rc == 0 && (sp = ws_parent_writable(ws, src, &sname)) < 0)
		rc = sp;
	if (rc == 0 && (dp = ws_parent_writable(ws, dst, &dname)) < 0)
		rc = dp;
	/* Kept by the one name its directory gives it, as a write is. */
	if (rc == 0)
		rc = ws_canonical(ws, dp, dname, canon, sizeof(canon));
	if (rc == 0)
		rc = rename_file(c, sp, sname, dp, dname, canon);
	if (sp >= 0)
		close(sp);
	if (dp >= 0)
		close(dp);
	free(sname);
	free(dname);
	reply(c, id, rc, NULL, 0, NULL, 0);
	return 0;
}

/* Forget the call's removals. */
static void removals_free(struct chain *c)
{
	for (size_t i = 0; i < c->n_removals; i++)
		removal_free(&c->removals[i]);
	free(c->removals);
	c->removals = NULL;
	c->n_removals = 0;
}

/* Forget the call's writes (the hidden files of those not in place go, except a renamed
 * file's that could not be put back) and its removals. */
static void broker_writes_drop_files(struct chain *c)
{
	copy_free(c);
	for (size_t i = 0; i < c->n_writes; i++)
		write_free(&c->writes[i], c->writes[i].tmp[0] != '\0' && !c->writes[i].keep);
	free(c->writes);
	c->writes = NULL;
	c->n_writes = 0;
	removals_free(c);
	held_free(c);
}

void broker_writes_drop(struct chain *c)
{
	broker_writes_drop_files(c);
	dirs_end(c, 1);
}

int broker_writes_check(const struct chain *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->n_writes; i++) {
		struct stat st;
		/* A renamed file's second name holds none of the call's bytes. */
		if (!c->writes[i].linked &&
		    fstatat(c->writes[i].dirfd, c->writes[i].tmp, &st, AT_SYMLINK_NOFOLLOW) == 0)
			total += (uint64_t)st.st_size;
	}
	for (size_t i = 0; i < c->n_held; i++) {
		struct stat st;
		if (fstat(c->held[i], &st) == 0)
			total += (uint64_t)st.st_size;
	}
	return c->held_lost || total > ENGINE_WS_BYTES_PER_CALL ? -EDQUOT : 0;
}

/* The text of a small file of text the call wrote, to give to the client with the answer
 * (read from its hidden file, before it is moved into place), or NULL. *budget is what the
 * answer may still carry. */
static char *file_text(const struct workspace *ws, const struct ws_file *f, size_t *budget)
{
	size_t cap = *budget < MCP_FILE_EMBED_MAX ? *budget : MCP_FILE_EMBED_MAX, got = 0;
	struct stat st;
	char *buf;
	int fd;

	if (!mcp_text_mime(f->rel))
		return NULL;
	fd = ws_open_regular(f->dirfd, f->tmp, cap, &st, NULL);
	if (fd < 0)
		return NULL;
	/* Read at the commit, as the supervisor: a file the owner cannot read (their own, renamed)
	 * is not shown. */
	if (!ws_may(ws, &st, R_OK)) {
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!buf || got != (size_t)st.st_size || memchr(buf, '\0', got) || !valid_utf8(buf, got)) {
		free(buf);
		return NULL;
	}
	buf[got] = '\0';
	*budget -= got;
	return buf;
}

void broker_writes_watch(struct chain *c)
{
	if (!c->runner || c->runner->killed || (c->n_writes == 0 && c->n_held == 0))
		return;
	if (broker_writes_check(c) < 0) {
		log_msg(LOG_INFO, "chain %u: its call wrote more than its quota: stopped", c->id);
		c->writes_refused = 1;
		if (c->kill == KILL_NONE)
			c->kill = KILL_QUOTA;
		proc_kill(c->runner);
		return;
	}
	timer_arm(&c->quota, now_ms() + ENGINE_WS_CHECK_MS);
}

/* Add a line to what the call wrote on stderr (and to its logs), with the bytes it holds. */
static void outcome_note(struct run_outcome *o, const char *line)
{
	struct text *ts[] = {&o->stderr_text, &o->logs};
	size_t add = strlen(line);

	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		size_t had = ts[i]->s ? ts[i]->len : 0;
		char *s = malloc(had + add + 1);
		if (!s)
			return;
		if (had)
			memcpy(s, ts[i]->s, had);
		memcpy(s + had, line, add + 1);
		text_take(ts[i], s, had + add);
	}
}

/* Why the call's removals and renames cannot be made as they are, or NULL; *what names the
 * file. Every one is checked before anything changes (the supervisor makes one call's changes
 * at a time, so none comes between): a name that no longer holds what the call removed or
 * renamed (another call, or something outside, changed it meanwhile), a directory that holds
 * what the call did not remove, a name the call writes held by what the write cannot replace
 * (a directory, not a regular file, a file where 'x' made one). Any of them and none of the
 * call's changes is made: one made without the others would lose the files the others keep
 * (a swap through a third name, half made; a file copied, then removed, whose copy could not
 * be placed). */
/* Is the file a write was copied from still on disk as it was copied: 0; or changed: 1, or
 * gone (or no longer reached as it was): -ENOENT; -ENOMEM, -EMFILE or -ENFILE when that
 * cannot be told (the server short of memory or fds). */
static int copied_still(struct chain *c, const struct ws_file *f)
{
	char *name = NULL;
	struct stat st;
	int pfd = ws_parent(&c->e->ws, f->src_rel, &name), rc;

	if (pfd < 0)
		return pfd == -ENOMEM || pfd == -EMFILE || pfd == -ENFILE ? pfd : -ENOENT;
	/* The copied file is held (src_fd): a file now by that name with its inode number is
	 * that file, not one given the number after it was freed. */
	rc = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0
	         ? (errno == ENOMEM ? -ENOMEM : -ENOENT)
	     : st.st_dev != f->src_dev || st.st_ino != f->src_ino || st.st_size != f->src_size ||
	             st.st_mtim.tv_sec != f->src_mtime.tv_sec ||
	             st.st_mtim.tv_nsec != f->src_mtime.tv_nsec
	         ? 1
	         : 0;
	close(pfd);
	free(name);
	return rc;
}

static const char *commit_conflict(struct chain *c, const char **what)
{
	int rc;

	for (size_t i = 0; i < c->n_removals; i++) {
		const struct ws_removal *r = &c->removals[i];
		*what = r->name;
		if (!removal_holds(r))
			return "was changed by another call meanwhile";
		if (r->dir && !dir_empty_for(c, r->objfd))
			return "holds files another call put there meanwhile";
	}
	for (size_t i = 0; i < c->n_writes; i++) {
		const struct ws_file *f = &c->writes[i];
		const struct ws_removal *r;
		struct stat st;
		*what = f->copied ? f->src_rel : f->rel;
		/* Changed in place ('a', 'r+', chmod, utime; renamed since, or not): its copy holds
		 * the file as it was, and would replace (or bring back) what another call (or
		 * anyone) wrote or removed there since. */
		if (f->copied && (rc = copied_still(c, f)) != 0)
			return rc == -ENOENT
			           ? "was removed by another call meanwhile (the call changed it)"
			       : rc < 0
			           ? "could not be checked against other calls' changes (the "
			             "server "
			             "is short of memory or file descriptors)"
			           : "was changed by another call meanwhile (the call changed it "
			             "in place: its copy would have undone the other's change)";
		*what = f->rel;
		if (fstatat(f->dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		r = removal_in(c, f->dirfd, f->name);
		if (S_ISDIR(st.st_mode) && !(r && r->dir))
			return "is a directory another call made meanwhile";
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			return "is not a regular file";
		if (f->exclusive && !r)
			return "was made by another call meanwhile (the call created it new, with "
			       "'x' "
			       "or 'a')";
	}
	return NULL;
}

/* A file that could not take a name the commit freed for it: a renamed one (from disk, or
 * written by the call and renamed) goes back to its old name, which the commit removed;
 * failing that, or for another file, its hidden file stays, said in the log: never lost.
 * (Every name was checked first: only a refusal of the file system itself comes here.) */
static void rename_put_back(struct chain *c, struct ws_file *f)
{
	for (size_t i = 0; i < c->n_removals; i++) {
		const struct ws_removal *r = &c->removals[i];
		if (r->rename == f->id &&
		    renameat2(f->dirfd, f->tmp, r->dirfd, r->name, RENAME_NOREPLACE) == 0) {
			f->tmp[0] = '\0';
			return;
		}
	}
	/* Not a rename, or its old name is taken: the bytes stay in the hidden file. */
	log_msg(LOG_WARN, "workspace: %s kept as %s", f->rel, f->tmp);
	f->keep = 1;
}

/* Move the write f into place; 0, or -1 with a note on the call's stderr. */
static int place(const struct workspace *ws, struct ws_file *f, struct run_outcome *o,
                 struct run_file *files, size_t *n, size_t *budget, int noreplace)
{
	struct stat st;
	unsigned int flags = f->exclusive || noreplace ? RENAME_NOREPLACE : 0;
	char *text = files ? file_text(ws, f, budget) : NULL;
	char note[PATH_MAX + 160];

	if (fstatat(f->dirfd, f->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    renameat2(f->dirfd, f->tmp, f->dirfd, f->name, flags) == 0) {
		f->tmp[0] = '\0';
		if (files) {
			files[*n].path = f->rel;
			files[*n].bytes = (uint64_t)st.st_size;
			files[*n].text = text;
			f->rel = NULL;
			(*n)++;
		}
		return 0;
	}
	log_msg(LOG_WARN, "workspace: %s not written: %s", f->rel, strerror(errno));
	snprintf(note, sizeof(note), "safepy: %s was not written: %s\n", f->rel,
	         errno == EEXIST ? "a file of that name appeared meanwhile" : strerror(errno));
	outcome_note(o, note);
	free(text);
	return -1;
}

/* Servers sharing a workspace commit one at a time, as one server's calls do: a commit checks
 * every name, then changes them, and another server's commit between the two was lost (an
 * append answered ok, then replaced by a copy made before it). An advisory lock on the
 * workspace's directory is held for the commit; one held by another longer than
 * ENGINE_WS_LOCK_WAIT_MS (a server that hangs, a process of the host's) leaves the call's
 * changes unmade. 1: held; 0: none to take (no lock, or a file system that has none);
 * -EWOULDBLOCK. */
static int commit_lock(const struct workspace *ws)
{
	const struct timespec pause = {0, 1000000};
	int64_t end = now_ms() + ENGINE_WS_LOCK_WAIT_MS;

	if (ws->lock_fd < 0)
		return 0;
	while (flock(ws->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			static int said;
			if (!said++)
				log_msg(LOG_WARN,
				        "workspace: %s takes no lock (%s): servers sharing it "
				        "may lose each other's changes",
				        ws->path, strerror(errno));
			return 0;
		}
		if (now_ms() >= end)
			return -EWOULDBLOCK;
		(void)nanosleep(&pause, NULL);
	}
	return 1;
}

void broker_writes_commit(struct chain *c, struct run_outcome *o)
{
	struct run_file *files = c->n_writes ? calloc(c->n_writes, sizeof(*files)) : NULL;
	size_t n = 0, budget = MCP_FILES_EMBED_MAX;
	const char *what = NULL, *why = NULL;
	char busy[128];
	int failed = 0, locked = 0;

	if (c->n_writes > 0 || c->n_removals > 0) {
		locked = commit_lock(&c->e->ws);
		what = c->e->ws.path;
		if (locked < 0) {
			snprintf(
			    busy, sizeof(busy),
			    "was being changed by another server for over %d s (another safepy "
			    "on the same workspace)",
			    ENGINE_WS_LOCK_WAIT_MS / 1000);
			why = busy;
		}
	}
	if (!why)
		why = commit_conflict(c, &what);
	if (why) {
		char note[PATH_MAX + 200];
		snprintf(note, sizeof(note),
		         "safepy: no file of this call was written, removed or renamed: %s %s\n",
		         what, why);
		log_msg(LOG_INFO, "chain %u: %s", c->id, note + 8);
		outcome_note(o, note);
		free(files);
		broker_writes_drop_files(c);
		dirs_end(c, 1); /* as for a call that failed: nothing of it is kept */
		o->files = NULL;
		o->n_files = 0;
		if (locked > 0)
			(void)flock(c->e->ws.lock_fd, LOCK_UN);
		return;
	}
	/* What the file system refuses though every name was checked (an immutable file, a
	 * mount): first the files whose names nothing of the call's frees, and at the first that
	 * fails nothing is removed and nothing more placed, so no file the call removes goes
	 * before its copy is in place. */
	for (size_t i = 0; !failed && i < c->n_writes; i++)
		if (!removal_in(c, c->writes[i].dirfd, c->writes[i].name))
			failed = place(&c->e->ws, &c->writes[i], o, files, &n, &budget, 0) < 0;
	if (failed) {
		outcome_note(o, "safepy: so no file of this call was removed or renamed, and its "
		                "other files were not written\n");
		goto out;
	}
	/* Then the names the call removed, files then directories (in the order removed: the
	 * deepest first, as they had to be), then the files that take those names. One that still
	 * fails goes back to the name it was renamed from, or its hidden file is kept: never
	 * lost. */
	for (int dirs = 0; dirs < 2; dirs++) {
		for (size_t i = 0; i < c->n_removals; i++) {
			const struct ws_removal *r = &c->removals[i];
			char note[NAME_MAX + 160];
			if (r->dir != dirs ||
			    unlinkat(r->dirfd, r->name, dirs ? AT_REMOVEDIR : 0) == 0)
				continue;
			log_msg(LOG_WARN, "workspace: %s not removed: %s", r->name,
			        strerror(errno));
			snprintf(note, sizeof(note), "safepy: %s was not removed: %s\n", r->name,
			         strerror(errno));
			outcome_note(o, note);
		}
	}
	for (size_t i = 0; i < c->n_writes; i++) {
		struct ws_file *f = &c->writes[i];
		/* Its name is free now: what holds it (a file put back, one not removed) stays. */
		if (f->tmp[0] && removal_in(c, f->dirfd, f->name) &&
		    place(&c->e->ws, f, o, files, &n, &budget, 1) < 0)
			rename_put_back(c, f);
	}
out:
	if (locked > 0)
		(void)flock(c->e->ws.lock_fd, LOCK_UN);
	broker_writes_drop_files(c);
	dirs_end(c, 0);
	o->files = files;
	o->n_files = n;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

static int workspace_request(struct chain *c, uint32_t id, uint8_t kind, const char *payload,
                             size_t len);
static int ask_workspace(struct chain *c, uint32_t id, uint8_t kind, const char *payload,
                         size_t len);

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
	if (kind == IPC_REQ_MODULE || kind == IPC_REQ_MODULE_CODE)
		return request_module(c, id, payload, len, kind == IPC_REQ_MODULE_CODE);
	return ask_workspace(c, id, kind, payload, len);
}

/* A copy's next piece; once it is done, its request asked again. */
static void copy_step(struct timer *t)
{
	struct chain *c = t->data;
	struct ws_copy *k = c->copy;
	unsigned int serial;
	char *payload;
	off_t from;
	int rc;

	if (!k)
		return;
	if (c->state != CH_RUNNING) { /* its worker asks no more */
		copy_free(c);
		return;
	}
	from = k->pos;
	rc = copy_piece(k->dst, k->src, &k->pos, k->end, ENGINE_WS_COPY_PIECE);
	/* Its writing starts now, a piece at a time: not all of it at once where a file system
	 * writes a file out as it replaces another (ext4, when the call commits). */
	if (rc >= 0 && k->pos > from)
		(void)sync_file_range(k->dst, from, k->pos - from, SYNC_FILE_RANGE_WRITE);
	if (rc == 0) {
		timer_arm(&k->piece, now_ms());
		return;
	}
	if (rc < 0) {
		uint32_t id = k->id;
		copy_free(c);
		reply(c, id, rc, NULL, 0, NULL, 0);
		engine_kick(c->e);
		return;
	}
	k->done = 1;
	serial = k->serial;
	payload = k->payload; /* the request's own while it is asked again */
	k->payload = NULL;
	rc = ask_workspace(c, k->id, k->kind, payload, k->len);
	free(payload);
	if (c->copy && c->copy->serial == serial)
		copy_free(c); /* taken, or not wanted any more */
	if (rc < 0)
		chain_kill_runner(c, rc == -ENOMEM ? KILL_RESOURCE : KILL_PROTOCOL);
	engine_kick(c->e);
}

/* The workspace's requests, with its owner's identity when the supervisor is root. */
static int ask_workspace(struct chain *c, uint32_t id, uint8_t kind, const char *payload,
                         size_t len)
{
	int rc = ws_identity(&c->e->ws, 1);

	if (rc < 0) {
		log_msg(LOG_ERROR, "workspace: cannot take its owner's identity: %s",
		        strerror(-rc));
		reply(c, id, -EACCES, NULL, 0, NULL, 0);
		return 0;
	}
	asking.id = id;
	asking.kind = kind;
	asking.payload = payload;
	asking.len = len;
	rc = workspace_request(c, id, kind, payload, len);
	asking.payload = NULL;
	(void)ws_identity(&c->e->ws, 0);
	return rc;
}

static int workspace_request(struct chain *c, uint32_t id, uint8_t kind, const char *payload,
                             size_t len)
{
	switch (kind) {
	case IPC_REQ_OPEN:
		return request_open(c, id, payload, len);
	case IPC_REQ_STAT:
		return request_stat(c, id, payload, len);
	case IPC_REQ_LIST:
		return request_list(c, id, payload, len);
	case IPC_REQ_MKDIR:
		return request_mkdir(c, id, payload, len);
	case IPC_REQ_REMOVE:
		return request_remove(c, id, payload, len);
	case IPC_REQ_RENAME:
		return request_rename(c, id, payload, len);
	case IPC_REQ_CHMOD:
	case IPC_REQ_UTIME:
		return request_attr(c, id, payload, len, kind == IPC_REQ_UTIME);
	default:
		return -EINVAL;
	}
}
