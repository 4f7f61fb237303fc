/* confine.c - the supervisor sandboxes itself once start-up is done, so that a bug in what it
 * parses (JSON from the client, frames from hostile workers) cannot become a shell:
 *
 *   no_new_privs;
 *   Landlock, where the kernel has it: the system's files read-only (/usr, /lib*, /etc,
 *     /sys; /proc too for root), executing only safepy-zygote and its ELF loader, writing only
 *     the delegated cgroup, the workspace (when writable), /dev/null and, unless root, what
 *     the uid may write in /proc (its own processes' files); no TCP; signals and
 *     abstract sockets only within its own processes (which Landlock also makes the only ones
 *     it may trace);
 *   its own seccomp allowlist (seccomp/self.c): no exec, no fork, no socket but socket pairs,
 *     no executable memory, only the ptrace requests the tracer uses.
 *
 * The zygote starter (starter.c) is forked between the two: inside the Landlock domain, so
 * the zygote and every worker are in it too (and the supervisor may trace them), but before
 * the filter, so the zygote can be exec'd. A system call the filter refuses fails with EPERM
 * and is logged, number and all.
 *
 * `safepy connect` confines itself once connected: no files at all, and a filter that lets it
 * relay bytes and nothing else. Functions return 0 or a negative errno. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "landlock.h"
#include "policy.h"
#include "supervisor.h"

/* Read-only: the system's files, which the zygote reads too (it inherits the domain): the
 * C library and Python's, the data stack, ld.so.cache and the time zone, /proc of its own
 * processes, CPU facts in /sys. Absent ones are skipped. */
static const char *const confine_read_dirs[] = {
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/etc", "/sys",
};
static const char *const confine_read_files[] = {"/dev/urandom", "/dev/random", "/dev/zero"};

#define CONFINE_WORKSPACE_RW                                                                       \
	(LANDLOCK_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG |             \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                            \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_REFER)
#define CONFINE_CGROUP_RW                                                                          \
	(LANDLOCK_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR |             \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR)
#define CONFINE_EXEC (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE)

/* ---- the trap: a refused call fails with EPERM and says so ---------------------------- */

static void confine_sigsys(int sig, siginfo_t *si, void *ctx)
{
	static const char head[] = "safepy: the supervisor's own filter refused system call ";
	ucontext_t *uc = ctx;
	char msg[sizeof(head) + 16], digits[12];
	size_t n = sizeof(head) - 1, d = 0;
	unsigned int nr = (unsigned int)si->si_syscall;
	int saved = errno;

	(void)sig;
	memcpy(msg, head, n);
	do
		digits[d++] = (char)('0' + nr % 10);
	while ((nr /= 10) != 0 && d < sizeof(digits));
	while (d > 0)
		msg[n++] = digits[--d];
	msg[n++] = '\n';
	(void)!write(STDERR_FILENO, msg, n);
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
#else
	(void)uc;
#endif
	errno = saved;
}

static int confine_seccomp(const struct policy *p)
{
	struct sigaction sa = {.sa_sigaction = confine_sigsys, .sa_flags = SA_SIGINFO};
	sigset_t sys;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return -errno;
	/* A blocked SIGSYS would make the kernel kill the process instead. */
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	if (sigprocmask(SIG_UNBLOCK, &sys, NULL) < 0)
		return -errno;
	return policy_load(p);
}

/* ---- Landlock --------------------------------------------------------------------------- */

/* The ELF loader named in exe's PT_INTERP, into out. Returns 0, -ENOENT when exe names none
 * (static), or another negative errno. */
static int confine_interp(const char *exe, char *out, size_t len)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;
	int fd = open(exe, O_RDONLY | O_CLOEXEC), rc = -ENOENT;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_phentsize != sizeof(ph)) {
		rc = -ENOEXEC;
		goto out;
	}
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph)) {
			rc = -ENOEXEC;
			break;
		}
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz < 2 || ph.p_filesz > len ||
		    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz ||
		    out[ph.p_filesz - 1] != '\0') {
			rc = -ENOEXEC;
			break;
		}
		rc = 0;
		break;
	}
out:
	(void)close(fd);
	return rc;
}

/* Rules for a path that may be absent. */
static int confine_allow_opt(int rs, const struct landlock_handled *h, const char *path,
                             uint64_t access)
{
	int rc = landlock_allow_path(rs, h, path, access);

	return rc == -ENOENT ? 0 : rc;
}

static int confine_landlock(const struct confine_paths *p, struct confine_report *r)
{
	struct landlock_handled h;
	char interp[PATH_MAX];
	long abi = landlock_abi();
	int rs, rc = 0;
	size_t i;

	if (abi < 0) {
		snprintf(r->landlock, sizeof(r->landlock), "Landlock: %s",
		         abi == -ENOSYS || abi == -EOPNOTSUPP ? "not in this kernel"
		                                              : strerror((int)-abi));
		return 0;
	}
	landlock_handled_all(abi, &h);
	rs = landlock_ruleset(&h);
	if (rs < 0)
		return rs;
	for (i = 0; rc == 0 && i < sizeof(confine_read_dirs) / sizeof(confine_read_dirs[0]); i++)
		rc = confine_allow_opt(rs, &h, confine_read_dirs[i], LANDLOCK_READ);
	for (i = 0; rc == 0 && i < sizeof(confine_read_files) / sizeof(confine_read_files[0]); i++)
		rc = confine_allow_opt(rs, &h, confine_read_files[i], LANDLOCK_ACCESS_FS_READ_FILE);
	/* /proc: read, and, unless we are root, write what the uid may write there anyway: its
	 * own processes' files (a runner's oom_score_adj, the zygote's uid_map). Root keeps
	 * /proc read-only: /proc/sys is root's to write. */
	if (rc == 0)
		rc = landlock_allow_path(rs, &h, "/proc",
		                         LANDLOCK_READ |
		                             (geteuid() != 0 ? LANDLOCK_ACCESS_FS_WRITE_FILE : 0));
	if (rc == 0)
		rc = landlock_allow_path(rs, &h, "/dev/null",
		                         LANDLOCK_ACCESS_FS_READ_FILE |
		                             LANDLOCK_ACCESS_FS_WRITE_FILE);
	if (rc == 0)
		rc = landlock_allow_path(rs, &h, p->zygote_exe, CONFINE_EXEC);
	if (rc == 0) {
		rc = confine_interp(p->zygote_exe, interp, sizeof(interp));
		if (rc == 0)
			rc = landlock_allow_path(rs, &h, interp, CONFINE_EXEC);
		else if (rc == -ENOENT)
			rc = 0;
	}
	if (rc == 0 && p->cgroup_fd >= 0)
		rc = landlock_allow_fd(rs, &h, p->cgroup_fd, CONFINE_CGROUP_RW);
	if (rc == 0 && p->workspace_fd >= 0)
		rc =
		    landlock_allow_fd(rs, &h, p->workspace_fd,
		                      p->workspace_writable ? CONFINE_WORKSPACE_RW : LANDLOCK_READ);
	if (rc == 0 && p->cache_fd >= 0)
		rc = landlock_allow_fd(rs, &h, p->cache_fd, CONFINE_WORKSPACE_RW);
	if (rc < 0) {
		(void)close(rs);
		return rc;
	}
	rc = landlock_enforce(rs);
	if (rc < 0)
		return rc;
	r->landlock_abi = abi;
	snprintf(r->landlock, sizeof(r->landlock),
	         "Landlock ABI %ld: system files read-only, executes only safepy-zygote, writes "
	         "only%s%s%s /dev/null%s%s",
	         abi, p->cgroup_fd >= 0 ? " its cgroup," : "",
	         p->workspace_fd >= 0 && p->workspace_writable ? " the workspace," : "",
	         p->cache_fd >= 0 ? " the zygote's cache," : "",
	         geteuid() != 0 ? ", its processes' /proc files" : "",
	         abi >= 6 ? "; signals only its own processes" : "");
	return 0;
}

/* ---- the two entries ------------------------------------------------------------------- */

int confine_self(const struct confine_paths *p, struct starter *st, struct confine_report *r)
{
	struct policy *pol = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	st->fd = -1;
	st->pid = 0;
	/* Built first: libseccomp generates the program in memory (a memfd), which the filter
	 * would refuse afterwards. */
	rc = policy_build_self(&pol);
	if (rc < 0 && rc != -EOPNOTSUPP)
		return rc;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		rc = -errno;
		goto out;
	}
	r->nnp = 1;
	rc = confine_landlock(p, r);
	if (rc < 0)
		goto out;
	rc = starter_start(st, p->zygote_exe);
	if (rc < 0)
		goto out;
#if defined(__SANITIZE_ADDRESS__)
	/* The sanitizer build's runtime makes calls of its own (the leak checker forks a tracer
	 * at exit): its supervisor keeps no_new_privs and Landlock only. */
	policy_free(pol);
	pol = NULL;
#endif
	if (pol) {
		rc = confine_seccomp(pol);
		if (rc < 0)
			goto out;
		r->seccomp_rows = (unsigned int)policy_self_table_len;
	}
	snprintf(r->detail, sizeof(r->detail), "no_new_privs; %s; %s",
	         pol ? "its own seccomp allowlist (no exec, no fork, no sockets)"
	             : "no seccomp allowlist (not on this architecture, or a sanitizer build)",
	         r->landlock);
	rc = 0;
out:
	policy_free(pol);
	return rc;
}

int confine_relay(void)
{
	struct policy *pol = NULL;
	struct landlock_handled h;
	long abi;
	int rc, rs;

	rc = policy_build_relay(&pol);
	if (rc < 0)
		return rc == -EOPNOTSUPP ? 0 : rc;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		rc = -errno;
		goto out;
	}
	/* No rule: no file at all. */
	abi = landlock_abi();
	if (abi >= 1) {
		landlock_handled_all(abi, &h);
		rs = landlock_ruleset(&h);
		rc = rs < 0 ? rs : landlock_enforce(rs);
		if (rc < 0)
			goto out;
	}
	rc = confine_seccomp(pol);
out:
	policy_free(pol);
	return rc;
}
