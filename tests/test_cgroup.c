/* test_cgroup.c - the cgroup module: parsers from tables, then, as root on a writable cgroup v2
 * mount, for real in a scratch cgroup that the test marks delegated the way systemd does
 * (user.delegate=1) and removes afterwards. The test process itself moves into the scratch
 * cgroup, plays the supervisor, and moves back at the end. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "supervisor.h"

static void cleanup(void);

TestSuite(cgroup_parse, .timeout = 10);
TestSuite(cgroup, .timeout = 60, .fini = cleanup);

/* ---- Parsers ------------------------------------------------------------------------------ */

Test(cgroup_parse, finds_the_v2_line_of_proc_self_cgroup)
{
	static const struct {
		const char *text;
		int rc;
		const char *path;
	} cases[] = {
	    {"0::/system.slice/system-safepy.slice/safepy@3-1000-0.service\n", 0,
	     "/system.slice/system-safepy.slice/safepy@3-1000-0.service"},
	    {"0::/\n", 0, "/"},
	    {"12:pids:/a\n4:memory:/b\n1:name=systemd:/c\n0::/d/e\n", 0, "/d/e"},
	    {"0::/no-newline", 0, "/no-newline"},
	    {"4:memory:/only-v1\n1:name=systemd:/x\n", -ENOENT, NULL},
	    {"", -ENOENT, NULL},
	    {"0::relative\n", -ENOENT, NULL},
	};
	char out[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cgroup_parse_self(cases[i].text, out, sizeof(out));
		cr_expect_eq(rc, cases[i].rc, "case %zu: rc %d", i, rc);
		if (rc == 0 && cases[i].path)
			cr_expect_str_eq(out, cases[i].path, "case %zu", i);
	}
	cr_expect_eq(cgroup_parse_self("0::/abcdef\n", out, 4), -ENAMETOOLONG);
}

Test(cgroup_parse, reads_cgroup2_mounts_from_mountinfo)
{
	static const struct {
		const char *line;
		int rc;
		const char *mnt, *root;
	} cases[] = {
	    {"35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 "
	     "cgroup2 rw,nsdelegate,memory_recursiveprot\n",
	     0, "/sys/fs/cgroup", "/"},
	    {"36 25 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime - cgroup2 "
	     "cgroup2 rw\n",
	     0, "/sys/fs/cgroup/unified", "/"},
	    {"90 80 0:31 /docker/abc /sys/fs/cgroup ro,nosuid master:1 - cgroup2 cgroup rw\n", 0,
	     "/sys/fs/cgroup", "/docker/abc"},
	    {"91 80 0:31 / /mnt/cg\\040two rw - cgroup2 none rw\n", 0, "/mnt/cg two", "/"},
	    {"30 24 0:25 / /sys/fs/cgroup rw,nosuid shared:4 - tmpfs tmpfs ro,mode=755\n", -ENOENT,
	     NULL, NULL},
	    {"37 25 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", -ENOENT, NULL,
	     NULL},
	    {"garbage\n", -EINVAL, NULL, NULL},
	    {"1 2 3 4 5 6 no separator cgroup2\n", -EINVAL, NULL, NULL},
	};
	char mnt[PATH_MAX], root[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cgroup_parse_mountinfo_line(cases[i].line, mnt, sizeof(mnt), root,
		                                     sizeof(root));
		cr_expect_eq(rc, cases[i].rc, "case %zu: rc %d", i, rc);
		if (rc == 0) {
			cr_expect_str_eq(mnt, cases[i].mnt, "case %zu", i);
			cr_expect_str_eq(root, cases[i].root, "case %zu", i);
		}
	}
}

/* What a path names on its filesystem, through the mount that shows it: a bind mount of a
 * directory names that directory (the workspace's start check compares these). */
Test(cgroup_parse, mount_places_name_what_a_bind_mount_shows)
{
	static const char *const lines[] = {
	    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n",
	    "40 22 0:35 / /tmp rw shared:2 - tmpfs tmpfs rw\n",
	    "41 22 8:1 /usr/share/doc /srv/ws/m rw shared:1 - ext4 /dev/sda1 rw\n",
	    "42 22 0:35 /own /srv/w\\040s/tools rw - tmpfs tmpfs rw\n",
	    "43 22 0:36 / /usr/lib/python3 rw - overlay overlay "
	    "rw,lowerdir=/a\\054b:/c,upperdir=/tmp/up\\054per,workdir=/tmp/wk\n",
	};
	struct mount_entry v[sizeof(lines) / sizeof(lines[0])];
	struct mount_table t = {v, sizeof(lines) / sizeof(lines[0])};
	struct mount_place a = {0}, b = {0};
	char *o;

	for (size_t i = 0; i < t.n; i++)
		cr_assert_eq(mount_entry_parse(lines[i], &v[i]), 0, "line %zu", i);
	cr_expect_eq(v[2].id, 41);
	cr_expect_eq(v[2].dev, makedev(8, 1));
	cr_expect_str_eq(v[3].mnt, "/srv/w s/tools");
	cr_expect_str_eq(v[4].fstype, "overlay");
	o = mount_option(&v[4], "upperdir");
	cr_expect_str_eq(o, "/tmp/up,per");
	free(o);
	o = mount_option(&v[4], "lowerdir");
	cr_expect_str_eq(o, "/a,b:/c");
	free(o);
	cr_expect_null(mount_option(&v[4], "upper"));
	cr_expect_null(mount_option(&v[0], "upperdir"));
	cr_expect_eq(mount_table_by_id(&t, 42), &v[3]);
	cr_expect_null(mount_table_by_id(&t, 7));
	{
		struct mount_entry bad;
		cr_expect_eq(mount_entry_parse("22 1 8:x / / rw - ext4 /dev/sda1 rw\n", &bad),
		             -EINVAL);
		cr_expect_eq(mount_entry_parse("22 1 8:1 / / rw\n", &bad), -EINVAL);
		cr_expect_eq(mount_entry_parse("x 1 8:1 / / rw - ext4 /dev/sda1 rw\n", &bad),
		             -EINVAL);
	}

	cr_assert_eq(mount_place(&v[0], "/usr/share", &a), 0);
	cr_expect_str_eq(a.path, "/usr/share");
	cr_assert_eq(mount_place(&v[1], "/tmp", &b), 0);
	cr_expect_str_eq(b.path, "/");
	cr_expect_eq(b.dev, makedev(0, 35));
	cr_assert_eq(mount_place(&v[1], "/tmp/x/y", &b), 0);
	cr_expect_str_eq(b.path, "/x/y");
	cr_expect_eq(mount_place(&v[1], "/tmpx", &b), -ENOENT);
	cr_assert_eq(mount_place(&v[2], "/srv/ws/m/a", &b), 0);
	cr_expect_str_eq(b.path, "/usr/share/doc/a");
	cr_expect(mount_places_meet(&a, &b));
	cr_assert_eq(mount_place(&v[3], "/srv/w s/tools/safepy", &a), 0);
	cr_expect_str_eq(a.path, "/own/safepy");
	cr_assert_eq(mount_place(&v[1], "/tmp/own", &b), 0);
	cr_expect(mount_places_meet(&a, &b));
	cr_assert_eq(mount_place(&v[1], "/tmp/owner", &b), 0);
	cr_expect_not(mount_places_meet(&a, &b));
	cr_assert_eq(mount_place(&v[4], "/usr/lib/python3/dist-packages", &a), 0);
	cr_expect_str_eq(a.path, "/dist-packages");
	cr_assert_eq(mount_place(&v[0], "/usr/lib/python3x", &b), 0);
	cr_expect_not(mount_places_meet(&a, &b));

	cr_expect(path_within("/a/b", "/"));
	cr_expect(path_within("/a/b", "/a/"));
	cr_expect(path_within("/a", "/a"));
	cr_expect_not(path_within("/ab", "/a"));
	free(a.path);
	free(b.path);
	for (size_t i = 0; i < t.n; i++)
		mount_entry_free(&v[i]);
}

/* ---- For real, in a scratch cgroup -------------------------------------------------------- */

static char mnt[PATH_MAX];     /* the cgroup2 mount point */
static char home[PATH_MAX];    /* the test process's own cgroup, to go back to */
static char scratch[PATH_MAX]; /* absolute directory of the scratch cgroup, "" if none */
static pid_t child = -1;

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		rc = -errno;
	close(fd);
	return rc;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* The cgroup (v2 path) of a process. */
static void cgroup_of(pid_t pid, char *out, size_t len)
{
	char path[64], text[4096];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	cr_assert_eq(read_file(path, text, sizeof(text)), 0);
	cr_assert_eq(cgroup_parse_self(text, out, len), 0, "%s", text);
}

static int move_to(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 16], v[24];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(v, sizeof(v), "%d", (int)pid);
	return write_file(path, v);
}

static void cleanup(void)
{
	char path[2 * PATH_MAX + 32];

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	if (!scratch[0])
		return;
	snprintf(path, sizeof(path), "%s%s", mnt, strcmp(home, "/") == 0 ? "" : home);
	if (move_to(path, getpid()) < 0)
		cr_log_warn("could not move back to %s", path);
	for (int i = 1; i <= 8; i++) {
		snprintf(path, sizeof(path), "%s/w%d", scratch, i);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/supervisor", scratch);
	rmdir(path);
	if (rmdir(scratch) < 0 && errno != ENOENT)
		cr_log_warn("could not remove %s: %s", scratch, strerror(errno));
	scratch[0] = '\0';
}

/* Create the scratch cgroup next to nothing of systemd's (under the mount's root), optionally
 * marked delegated, and move this process into it; skip where that is impossible. */
static void enter_scratch(int mark)
{
	char line[PATH_MAX * 2 + 256], root[PATH_MAX];
	FILE *f;

	if (geteuid() != 0)
		cr_skip_test("needs root to create a scratch cgroup");
	f = fopen("/proc/self/mountinfo", "re");
	cr_assert_not_null(f);
	mnt[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (cgroup_parse_mountinfo_line(line, mnt, sizeof(mnt), root, sizeof(root)) == 0 &&
		    strcmp(root, "/") == 0)
			break;
		else
			mnt[0] = '\0';
	fclose(f);
	if (!mnt[0])
		cr_skip_test("no cgroup v2 mount showing the whole hierarchy");
	cgroup_of(getpid(), home, sizeof(home));
	if (snprintf(scratch, sizeof(scratch), "%s/safepy-test-%d", mnt, (int)getpid()) >=
	    (int)sizeof(scratch))
		cr_skip_test("cgroup mount path too long: %s", mnt);
	if (mkdir(scratch, 0755) < 0) {
		int err = errno;
		scratch[0] = '\0';
		cr_skip_test("cannot create a cgroup under %s: %s", mnt, strerror(err));
	}
	if (mark && setxattr(scratch, "user.delegate", "1", 1, 0) < 0 &&
	    setxattr(scratch, "trusted.delegate", "1", 1, 0) < 0)
		cr_skip_test("cannot mark %s delegated: %s", scratch, strerror(errno));
	if (move_to(scratch, getpid()) < 0)
		cr_skip_test("cannot move into %s: %s", scratch, strerror(errno));
}

/* The scratch cgroup's path as the kernel names it (relative to the mount). */
static const char *scratch_rel(void)
{
	return scratch + strlen(mnt);
}

/* Which of memory and pids the scratch cgroup can hand to children here. */
static unsigned int available_controllers(void)
{
	char path[PATH_MAX + 32], text[512];
	unsigned int have = 0;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", scratch);
	cr_assert_eq(read_file(path, text, sizeof(text)), 0);
	if (strstr(text, "memory"))
		have |= CGROUP_WANT_MEMORY;
	if (strstr(text, "pids"))
		have |= CGROUP_WANT_PIDS;
	return have;
}

Test(cgroup, unmarked_cgroup_is_not_delegated)
{
	struct cgroup cg;

	enter_scratch(0);
	cgroup_init(&cg);
	cr_assert_eq(cgroup_probe(&cg, 0), -EPERM, "%s", cg.reason);
	cr_assert_eq(cg.state, CGROUP_UNAVAILABLE);
	cr_assert_not_null(strstr(cg.reason, "no delegate mark"), "%s", cg.reason);
	cr_assert_eq(cg.dirfd, -1);
	cgroup_clear(&cg);
}

Test(cgroup, marked_cgroup_is_found_and_controllers_checked)
{
	struct cgroup cg;
	unsigned int have;
	int rc;

	enter_scratch(1);
	cgroup_init(&cg);
	cr_assert_eq(cgroup_probe(&cg, 0), 0, "%s", cg.reason);
	cr_assert_str_eq(cg.path, scratch);
	cr_assert_eq(cg.state, CGROUP_UNAVAILABLE, "a probe alone sets nothing up");
	have = available_controllers();
	rc = cgroup_probe(&cg, CGROUP_WANT_MEMORY | CGROUP_WANT_PIDS);
	if (have == (CGROUP_WANT_MEMORY | CGROUP_WANT_PIDS)) {
		cr_assert_eq(rc, 0, "%s", cg.reason);
	} else {
		cr_assert_eq(rc, -EOPNOTSUPP, "%s", cg.reason);
		cr_assert_not_null(
		    strstr(cg.reason, (have & CGROUP_WANT_MEMORY) ? "pids" : "memory"), "%s",
		    cg.reason);
		cr_log_info("here: %s", cg.reason);
	}
	cgroup_clear(&cg);
}

Test(cgroup, unprivileged_user_without_write_access_is_refused)
{
	struct cgroup cg;
	int status;

	enter_scratch(1);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(10);
		cgroup_init(&cg);
		if (cgroup_probe(&cg, 0) != -EACCES)
			_exit(11);
		_exit(strstr(cg.reason, "not writable") ? 0 : 12);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	child = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x", status);
}

/* What systemd does for DynamicUser= with Delegate=: the unit's cgroup directory and its
 * cgroup.procs, cgroup.subtree_control and cgroup.threads belong to the service's uid. That
 * uid, unprivileged, can then set up the leaf and a worker's cgroup. */
Test(cgroup, unprivileged_owner_of_a_delegated_cgroup_sets_it_up)
{
	static const char *const owned[] = {"", "/cgroup.procs", "/cgroup.subtree_control",
	                                    "/cgroup.threads"};
	char path[PATH_MAX + 32];
	int status;

	enter_scratch(1);
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", scratch, owned[i]);
		cr_assert_eq(chown(path, 61184, 61184), 0, "chown %s: %s", path, strerror(errno));
	}
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct cgroup_limits none = {0};
		struct cgroup_worker w = {.dirfd = -1};
		struct cgroup cg;

		if (setresgid(61184, 61184, 61184) < 0 || setresuid(61184, 61184, 61184) < 0)
			_exit(10);
		cgroup_init(&cg);
		if (cgroup_probe(&cg, 0) < 0)
			_exit(11);
		if (cgroup_setup(&cg) < 0 || cg.state != CGROUP_ACTIVE)
			_exit(12);
		if (cgroup_worker_create(&cg, &none, &w) < 0)
			_exit(13);
		if (cgroup_worker_attach(&w, getpid()) < 0)
			_exit(14);
		_exit(0);
	}
	cr_assert_eq(waitpid(child, &status, 0), child);
	child = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x (exit %d)", status,
	          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

Test(cgroup, leaf_and_one_cgroup_per_worker)
{
	char want[PATH_MAX + 32], got[PATH_MAX], path[PATH_MAX + 32], v[64];
	struct cgroup_limits lim = {0};
	struct cgroup_worker w = {.dirfd = -1}, w2 = {.dirfd = -1};
	struct cgroup cg;
	unsigned int have;
	int pfd[2], status, rc;

	enter_scratch(1);
	have = available_controllers();
	cgroup_init(&cg);
	cr_assert_eq(cgroup_probe(&cg, have), 0, "%s", cg.reason);
	cr_assert_eq(cgroup_setup(&cg), 0, "%s", cg.reason);
	cr_assert_eq(cg.state, CGROUP_ACTIVE);
	cr_assert_not_null(strstr(cg.reason, scratch), "%s", cg.reason);

	/* No process is left in the delegated cgroup itself: we are in its leaf. */
	cgroup_of(getpid(), got, sizeof(got));
	snprintf(want, sizeof(want), "%s/supervisor", scratch_rel());
	cr_assert_str_eq(got, want);
	snprintf(path, sizeof(path), "%s/cgroup.procs", scratch);
	cr_assert_eq(read_file(path, v, sizeof(v)), 0);
	cr_assert_str_empty(v, "processes left in %s: %s", scratch, v);

	/* A worker: a child that waits, moved into its own cgroup with limits. */
	cr_assert_eq(pipe(pfd), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		char c;
		close(pfd[1]);
		(void)!read(pfd[0], &c, 1);
		_exit(0);
	}
	close(pfd[0]);
	if (have & CGROUP_WANT_MEMORY) {
		lim.memory_max = 64ull << 20;
		lim.no_swap = 1;
	}
	if (have & CGROUP_WANT_PIDS)
		lim.pids_max = 3;
	rc = cgroup_worker_create(&cg, &lim, &w);
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	cr_assert_str_eq(w.name, "w1");
	cr_assert_eq(cgroup_worker_attach(&w, child), 0);
	cgroup_of(child, got, sizeof(got));
	snprintf(want, sizeof(want), "%s/w1", scratch_rel());
	cr_assert_str_eq(got, want);
	if (have & CGROUP_WANT_MEMORY) {
		uint64_t kills = 99;
		snprintf(path, sizeof(path), "%s/w1/memory.max", scratch);
		cr_assert_eq(read_file(path, v, sizeof(v)), 0);
		cr_assert_str_eq(v, "67108864");
		snprintf(path, sizeof(path), "%s/w1/memory.swap.max", scratch);
		if (read_file(path, v, sizeof(v)) == 0)
			cr_assert_str_eq(v, "0");
		cr_assert_eq(cgroup_worker_oom_kills(&w, &kills), 0);
		cr_assert_eq(kills, 0);
	} else {
		cr_log_info("memory controller not available here: memory.max untested");
	}
	if (have & CGROUP_WANT_PIDS) {
		snprintf(path, sizeof(path), "%s/w1/pids.max", scratch);
		cr_assert_eq(read_file(path, v, sizeof(v)), 0);
		cr_assert_str_eq(v, "3");
	} else {
		cr_log_info("pids controller not available here: pids.max untested");
	}

	/* Limits the cgroup cannot take leave nothing behind. */
	if (!(have & CGROUP_WANT_MEMORY)) {
		struct cgroup_limits mem = {.memory_max = 64ull << 20};
		cr_assert_eq(cgroup_worker_create(&cg, &mem, &w2), -ENOENT);
		snprintf(path, sizeof(path), "%s/w2", scratch);
		cr_assert_neq(access(path, F_OK), 0, "%s was left behind", path);
	}

	/* Busy while the worker lives; cgroup.kill ends it; then it goes. */
	cr_assert_eq(cgroup_worker_remove(&cg, &w), -EBUSY);
	cr_assert_geq(w.dirfd, 0);
	cr_assert_eq(cgroup_worker_kill(&w), 0);
	cr_assert_eq(waitpid(child, &status, 0), child);
	child = -1;
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status 0x%x", status);
	for (int i = 0; (rc = cgroup_worker_remove(&cg, &w)) == -EBUSY && i < 100; i++)
		usleep(10000);
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	cr_assert_eq(w.dirfd, -1);
	snprintf(path, sizeof(path), "%s/w1", scratch);
	cr_assert_neq(access(path, F_OK), 0);
	close(pfd[1]);
	cgroup_clear(&cg);
}

/* main.c probes and sets up before doctor runs, and doctor reports the state with the
 * reason: here in a marked cgroup, whatever this machine's controllers allow. */
Test(cgroup, doctor_reports_the_delegated_cgroup)
{
	char *out = NULL, line[512];
	FILE *p;
	unsigned int have;
	int found = 0;

	enter_scratch(1);
	have = available_controllers();
	p = popen(SAFEPY_BIN " doctor 2>/dev/null", "re");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p))
		if (strncmp(line, "cgroups ", 8) == 0) {
			found = 1;
			out = strdup(line);
		}
	pclose(p);
	cr_assert(found, "doctor printed no cgroups line");
	if (have == (CGROUP_WANT_MEMORY | CGROUP_WANT_PIDS))
		cr_assert_not_null(strstr(out, "active"), "%s", out);
	else
		cr_assert_not_null(strstr(out, "lacks controllers"), "%s", out);
	cr_assert_not_null(strstr(out, scratch_rel()), "%s", out);
	cr_log_info("%s", out);
	free(out);
}
