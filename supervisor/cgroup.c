/* cgroup.c - per-worker cgroups inside a cgroup v2 subtree that systemd delegated to us
 * (Delegate=yes): detect the delegation, move our own processes into a leaf (the "no internal
 * processes" rule), enable the memory and pids controllers, and create, fill, kill and
 * remove one child cgroup per worker. Functions return 0 or a negative errno and never log;
 * struct cgroup carries a human-readable reason for the start-up log and `safepy doctor`. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "supervisor.h"

#define CGROUP_LEAF       "supervisor" /* where the supervisor and the zygote live */
#define CGROUP_MOVE_TRIES 8            /* rounds of emptying our cgroup (children may fork) */

static void reason(struct cgroup *cg, enum cgroup_state st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reason(struct cgroup *cg, enum cgroup_state st, const char *fmt, ...)
{
	va_list ap;

	cg->state = st;
	va_start(ap, fmt);
	vsnprintf(cg->reason, sizeof(cg->reason), fmt, ap);
	va_end(ap);
}

/* Read a small cgroup file (NUL-terminated). Returns bytes read or -errno. */
static ssize_t read_at(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n, off = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)off < len - 1) {
		n = read(fd, buf + off, len - 1 - (size_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		off += n;
	}
	buf[off] = '\0';
	close(fd);
	return off;
}

/* Write s to a cgroup file in one write(2), as the kernel expects. Returns 0 or -errno. */
static int write_at(int dirfd, const char *name, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	do
		n = write(fd, s, len);
	while (n < 0 && errno == EINTR);
	n = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	close(fd);
	return (int)n;
}

/* Does the whitespace-separated list contain word? */
static int has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n'))
			return 1;
	return 0;
}

int cgroup_parse_self(const char *text, char *out, size_t len)
{
	const char *p = text;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);

		/* cgroup v2 is the line with hierarchy id 0 and no controller list. */
		if (n >= 4 && strncmp(p, "0::/", 4) == 0) {
			if (n - 3 >= len)
				return -ENAMETOOLONG;
			memcpy(out, p + 3, n - 3);
			out[n - 3] = '\0';
			return 0;
		}
		p = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int cgroup_parse_mountinfo_line(const char *line, char *mnt, size_t mlen, char *root, size_t rlen)
{
	struct mount_entry e;
	int rc = mount_entry_parse(line, &e);

	if (rc < 0)
		return rc;
	if (strcmp(e.fstype, "cgroup2") != 0)
		rc = -ENOENT;
	else if (strlen(e.mnt) >= mlen || strlen(e.root) >= rlen)
		rc = -ENAMETOOLONG;
	else {
		memcpy(mnt, e.mnt, strlen(e.mnt) + 1);
		memcpy(root, e.root, strlen(e.root) + 1);
	}
	mount_entry_free(&e);
	return rc;
}

/* The cgroup2 mount that shows our cgroup, and our cgroup's directory on it. */
static int find_own_dir(struct cgroup *cg, char *own, size_t ownlen)
{
	char self[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX];
	char *text = NULL, *line = NULL;
	size_t cap = 0, rl;
	FILE *f;
	int rc = -ENOENT, fd;
	ssize_t n;

	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	text = malloc(8192);
	n = text ? read(fd, text, 8191) : -1;
	close(fd);
	if (n < 0) {
		free(text);
		return text ? -errno : -ENOMEM;
	}
	text[n] = '\0';
	rc = cgroup_parse_self(text, self, sizeof(self));
	free(text);
	if (rc < 0)
		return rc;
	snprintf(own, ownlen, "%s", self);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	rc = -ENODEV;
	while (getline(&line, &cap, f) > 0) {
		if (cgroup_parse_mountinfo_line(line, mnt, sizeof(mnt), root, sizeof(root)) < 0)
			continue;
		/* The mount's root must be our cgroup or above it (a bind mount of a subtree
		 * shows only that subtree). */
		rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (rl && (strncmp(self, root, rl) != 0 || (self[rl] && self[rl] != '/')))
			continue;
		if ((size_t)snprintf(cg->path, sizeof(cg->path), "%s%s", mnt,
		                     strcmp(self + rl, "/") == 0 ? "" : self + rl) >=
		    sizeof(cg->path)) {
			rc = -ENAMETOOLONG;
			break;
		}
		rc = 0;
		break;
	}
	free(line);
	fclose(f);
	return rc;
}

/* systemd marks a cgroup it delegated with the xattr "1": trusted.delegate (readable with
 * CAP_SYS_ADMIN) and user.delegate (readable by anyone), both since v251. Returns 1, 0. */
static int is_marked_delegated(int dirfd)
{
	static const char *const names[] = {"user.delegate", "trusted.delegate"};
	char v[8];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ssize_t n = fgetxattr(dirfd, names[i], v, sizeof(v));
		if (n == 1 && v[0] == '1')
			return 1;
	}
	return 0;
}

void cgroup_init(struct cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->dirfd = -1;
	cg->state = CGROUP_UNAVAILABLE;
	snprintf(cg->reason, sizeof(cg->reason), "not probed");
}

void cgroup_clear(struct cgroup *cg)
{
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	cg->dirfd = -1;
}

int cgroup_probe(struct cgroup *cg, unsigned int want)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} ctl[] = {{CGROUP_WANT_MEMORY, "memory"}, {CGROUP_WANT_PIDS, "pids"}};
	char own[PATH_MAX], controllers[512], missing[64] = "";
	ssize_t n;
	int rc;

	cgroup_clear(cg);
	cg->want = want;
	rc = find_own_dir(cg, own, sizeof(own));
	if (rc < 0) {
		reason(cg, CGROUP_UNAVAILABLE, "no cgroup v2 hierarchy shows our cgroup (%s)",
		       strerror(-rc));
		return rc;
	}
	cg->dirfd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dirfd < 0) {
		rc = -errno;
		reason(cg, CGROUP_UNAVAILABLE, "cannot open %s: %s", cg->path, strerror(-rc));
		return rc;
	}
	/* Writable files are not enough: a desktop app's scope under user@.service is owned
	 * by the user too, and shares the cgroup with the app. Only a marked cgroup is ours. */
	if (!is_marked_delegated(cg->dirfd)) {
		reason(cg, CGROUP_UNAVAILABLE, "no delegated cgroup (%s has no delegate mark)",
		       own);
		rc = -EPERM;
		goto fail;
	}
	if (faccessat(cg->dirfd, ".", W_OK, AT_EACCESS) < 0 ||
	    faccessat(cg->dirfd, "cgroup.procs", W_OK, AT_EACCESS) < 0 ||
	    faccessat(cg->dirfd, "cgroup.subtree_control", W_OK, AT_EACCESS) < 0) {
		rc = -errno;
		reason(cg, CGROUP_UNAVAILABLE, "delegated cgroup %s is not writable by us: %s", own,
		       strerror(-rc));
		goto fail;
	}
	n = read_at(cg->dirfd, "cgroup.controllers", controllers, sizeof(controllers));
	if (n < 0) {
		rc = (int)n;
		reason(cg, CGROUP_UNAVAILABLE, "cannot read %s/cgroup.controllers: %s", own,
		       strerror(-rc));
		goto fail;
	}
	for (size_t i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++)
		if ((want & ctl[i].bit) && !has_word(controllers, ctl[i].name))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
			         "%s%s", missing[0] ? ", " : "", ctl[i].name);
	if (missing[0]) {
		reason(cg, CGROUP_UNAVAILABLE, "delegated cgroup %s lacks controllers: %s", own,
		       missing);
		rc = -EOPNOTSUPP;
		goto fail;
	}
	reason(cg, CGROUP_UNAVAILABLE, "delegated cgroup %s (not set up yet)", own);
	return 0;
fail:
	cgroup_clear(cg);
	return rc;
}

/* Move every process of our cgroup into the leaf. Returns 0 or -errno. */
static int move_all_to_leaf(struct cgroup *cg, int leaf)
{
	char procs[4096], pid[24];

	for (int round = 0; round < CGROUP_MOVE_TRIES; round++) {
		ssize_t n = read_at(cg->dirfd, "cgroup.procs", procs, sizeof(procs));
		char *p, *save = NULL;
		int moved = 0;

		if (n < 0)
			return (int)n;
		for (p = strtok_r(procs, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
			int rc;
			snprintf(pid, sizeof(pid), "%s", p);
			rc = write_at(leaf, "cgroup.procs", pid);
			if (rc < 0 && rc != -ESRCH) /* ESRCH: it exited meanwhile */
				return rc;
			moved++;
		}
		if (!moved)
			return 0;
	}
	return -EBUSY;
}

int cgroup_setup(struct cgroup *cg)
{
	char ctl[32];
	int leaf = -1, rc;

	if (cg->dirfd < 0)
		return -EBADF;
	if (mkdirat(cg->dirfd, CGROUP_LEAF, 0755) < 0 && errno != EEXIST) {
		rc = -errno;
		reason(cg, CGROUP_FAILED, "cannot create %s/" CGROUP_LEAF ": %s", cg->path,
		       strerror(-rc));
		goto out;
	}
	leaf = openat(cg->dirfd, CGROUP_LEAF, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (leaf < 0) {
		rc = -errno;
		reason(cg, CGROUP_FAILED, "cannot open %s/" CGROUP_LEAF ": %s", cg->path,
		       strerror(-rc));
		goto out;
	}
	/* Controllers can be enabled for children only once no process is left here. */
	rc = move_all_to_leaf(cg, leaf);
	if (rc < 0) {
		reason(cg, CGROUP_FAILED, "cannot move our processes into %s/" CGROUP_LEAF ": %s",
		       cg->path, strerror(-rc));
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		unsigned int bit = i == 0 ? CGROUP_WANT_MEMORY : CGROUP_WANT_PIDS;
		if (!(cg->want & bit))
			continue;
		snprintf(ctl, sizeof(ctl), "+%s", i == 0 ? "memory" : "pids");
		rc = write_at(cg->dirfd, "cgroup.subtree_control", ctl);
		if (rc < 0) {
			reason(cg, CGROUP_FAILED,
			       "cannot enable %s in %s/cgroup.subtree_control: %s", ctl + 1,
			       cg->path, strerror(-rc));
			goto out;
		}
	}
	reason(cg, CGROUP_ACTIVE, "delegated cgroup %s: one child per worker%s%s", cg->path,
	       cg->want & CGROUP_WANT_MEMORY ? ", memory" : "",
	       cg->want & CGROUP_WANT_PIDS ? ", pids" : "");
	rc = 0;
out:
	if (leaf >= 0)
		close(leaf);
	return rc;
}

int cgroup_worker_create(struct cgroup *cg, const struct cgroup_limits *lim,
                         struct cgroup_worker *w)
{
	char name[sizeof(w->name)], v[32];
	int fd, rc;

	if (cg->state != CGROUP_ACTIVE || cg->dirfd < 0)
		return -ENODEV;
	snprintf(name, sizeof(name), "w%u", ++cg->next_id);
	if (mkdirat(cg->dirfd, name, 0755) < 0)
		return -errno;
	fd = openat(cg->dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = 0;
	if (lim->memory_max) {
		snprintf(v, sizeof(v), "%" PRIu64, lim->memory_max);
		rc = write_at(fd, "memory.max", v);
		/* Without swap accounting the file is absent and nothing can be swapped
		 * unaccounted anyway. */
		if (rc == 0 && lim->no_swap) {
			rc = write_at(fd, "memory.swap.max", "0");
			if (rc == -ENOENT)
				rc = 0;
		}
	}
	if (rc == 0 && lim->pids_max) {
		snprintf(v, sizeof(v), "%" PRIu64, lim->pids_max);
		rc = write_at(fd, "pids.max", v);
	}
	if (rc < 0)
		goto fail;
	w->dirfd = fd;
	memcpy(w->name, name, sizeof(name));
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(cg->dirfd, name, AT_REMOVEDIR);
	return rc;
}

int cgroup_worker_attach(const struct cgroup_worker *w, pid_t pid)
{
	char v[24];

	snprintf(v, sizeof(v), "%d", (int)pid);
	return write_at(w->dirfd, "cgroup.procs", v);
}

int cgroup_worker_oom_kills(const struct cgroup_worker *w, uint64_t *n)
{
	char ev[1024], *p;
	ssize_t len = read_at(w->dirfd, "memory.events", ev, sizeof(ev));

	if (len < 0)
		return (int)len;
	for (p = ev; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, "oom_kill ", 9) == 0) {
			*n = strtoull(p + 9, NULL, 10);
			return 0;
		}
	return -ENOENT;
}

int cgroup_worker_kill(const struct cgroup_worker *w)
{
	return write_at(w->dirfd, "cgroup.kill", "1");
}

int cgroup_worker_remove(struct cgroup *cg, struct cgroup_worker *w)
{
	if (w->dirfd < 0)
		return 0;
	if (unlinkat(cg->dirfd, w->name, AT_REMOVEDIR) < 0)
		return -errno; /* EBUSY while a process (even a dying one) is inside */
	close(w->dirfd);
	w->dirfd = -1;
	w->name[0] = '\0';
	return 0;
}
