/* main.c - safepy's entry: parse options; connect needs nothing more. Otherwise find
 * safepy-zygote, note who the client is (SO_PEERCRED) and set up a delegated cgroup when
 * systemd gave us one, then serve, run or doctor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "supervisor.h"

#ifdef SAFEPY_ZYGOTE_PATH
/* This build uses a zygote built elsewhere (cmake -DSAFEPY_ZYGOTE=...: the sanitizer build),
 * and only that one. Returns 0 with the path in out. */
static int find_zygote(char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s", SAFEPY_ZYGOTE_PATH) < len && access(out, X_OK) == 0)
		return 0;
	return -ENOENT;
}
#else
/* safepy-zygote lives next to safepy in the build tree, and in libexec when installed:
 * first relative to safepy's own directory (so a package built for /usr works whatever the
 * build's prefix was), then in the configured directory. Returns 0 with the path in out. */
static int find_zygote(char *out, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, len, "%s/safepy-zygote", exe) < len &&
			    access(out, X_OK) == 0)
				return 0;
			if ((size_t)snprintf(out, len, "%s/%s/safepy-zygote", exe,
			                     SAFEPY_LIBEXEC_REL) < len &&
			    access(out, X_OK) == 0)
				return 0;
		}
	}
	if ((size_t)snprintf(out, len, "%s/safepy-zygote", SAFEPY_LIBEXECDIR) < len &&
	    access(out, X_OK) == 0)
		return 0;
	return -ENOENT;
}
#endif

/* Under socket activation stdin is the client's connection: name the user in the log. */
static void note_peer(struct config *cfg)
{
	static char peer[160];
	int rc = peer_describe(STDIN_FILENO, peer, sizeof(peer));

	if (rc == 0) {
		cfg->peer = peer;
		log_msg(LOG_INFO, "client: %s", peer);
	} else if (rc != -ENOTSOCK) {
		log_msg(LOG_DEBUG, "client: unknown (%s)", strerror(-rc));
	}
}

/* With Delegate=yes each worker can get its own cgroup; set up the subtree before the
 * zygote starts, so that it and the supervisor sit in the leaf. */
static void setup_cgroup(struct config *cfg, struct cgroup *cg)
{
	cgroup_init(cg);
	if (cgroup_probe(cg, CGROUP_WANT_MEMORY | CGROUP_WANT_PIDS) == 0)
		cgroup_setup(cg);
	cfg->cgroup = cg;
	if (cg->state == CGROUP_ACTIVE)
		log_msg(cfg->cmd == CMD_SERVE ? LOG_INFO : LOG_DEBUG, "cgroups: active, %s",
		        cg->reason);
	else
		log_msg(cfg->cmd == CMD_SERVE ? LOG_INFO : LOG_DEBUG,
		        "cgroups: %s, %s; rlimits remain",
		        cg->state == CGROUP_FAILED ? "failed" : "unavailable", cg->reason);
}

/* What one call changing the workspace may hold open in the supervisor until it ends: the
 * directory of each file it writes and the file it copied for it ("a", "r+"), each directory
 * it makes, each name it removes (its directory and the object), each file it wrote then
 * dropped (at most one per open to write: broker.c pending_hold), and a large copy under way
 * (the file, the copy, its directory: broker.c fill). */
#define WS_FDS_HELD_PER_CALL                                                                       \
	(2 * IPC_WS_FILES_PER_CALL + IPC_WS_DIRS_PER_CALL + 2 * IPC_WS_REMOVALS_PER_CALL +         \
	 IPC_WS_FDS_PER_CALL + 3)
/* Besides: the failed calls' directories kept to be removed later, and the supervisor's own. */
#define WS_FDS_BESIDES 2048

/* Calls that change the workspace hold fds in the supervisor (WS_FDS_HELD_PER_CALL each,
 * max_workers calls at once): take what the hard limit on fds allows, and say when even that
 * is short (a call that then finds none left is told the server is short, not the call). */
static void fds_for_workspace(const struct config *cfg)
{
	struct rlimit rl;
	uint64_t want = (uint64_t)WS_FDS_HELD_PER_CALL * cfg->max_workers + WS_FDS_BESIDES;

	if (!cfg->workspace_write || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		log_msg(LOG_WARN,
		        "the fd limit (%llu) is below what %u calls writing files may hold (%llu): "
		        "raise it (ulimit -n) or lower --max-workers",
		        (unsigned long long)rl.rlim_cur, cfg->max_workers,
		        (unsigned long long)want);
}

/* fds 0, 1 and 2 open from the start (on /dev/null where they were closed): nothing the
 * server opens takes their place. Returns a mask of those that were closed. */
static int std_fds_open(void)
{
	int closed = 0;

	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);
			if (null != fd) {
				if (null >= 0)
					close(null);
				return -1;
			}
			closed |= 1 << fd;
		}
	return closed;
}

int main(int argc, char **argv)
{
	static char self[PATH_MAX];
	static struct cgroup cg;
	struct config cfg;
	char err[256];
	int exit_now, rc, closed = std_fds_open();

	if (closed < 0)
		return 2;
	if (config_parse(&cfg, argc, argv, &exit_now, err, sizeof(err)) < 0) {
		fprintf(stderr, "safepy: %s\n", err);
		config_clear(&cfg);
		return 2;
	}
	if (exit_now >= 0) {
		config_clear(&cfg);
		return exit_now;
	}
	log_set_level(cfg.log_level);
	log_open();
	if (cfg.cmd == CMD_SERVE && (closed & 3)) {
		/* The client speaks on stdin and hears on stdout: without them nothing is served. */
		log_msg(LOG_ERROR, "%s closed: a client talks to the server over stdin and stdout",
		        (closed & 3) == 3 ? "stdin and stdout are"
		        : closed & 1      ? "stdin is"
		                          : "stdout is");
		config_clear(&cfg);
		return 2;
	}
	if (cfg.cmd == CMD_CONNECT) {
		rc = connect_main(&cfg);
		config_clear(&cfg);
		return rc;
	}
	/* The supervisor holds the client's session: keep its memory away from other
	 * processes of the same user. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		log_msg(LOG_WARN, "could not make the supervisor non-dumpable");
	if (find_zygote(self, sizeof(self)) < 0) {
		log_msg(LOG_ERROR,
		        "cannot find safepy-zygote (looked next to safepy, in %s "
		        "relative to it, and in %s)",
		        SAFEPY_LIBEXEC_REL, SAFEPY_LIBEXECDIR);
		rc = cfg.cmd == CMD_RUN ? RUN_EXIT_SAFEPY : 1;
		config_clear(&cfg);
		return rc;
	}
	if (cfg.unsafe_no_python_layer)
		log_msg(LOG_WARN,
		        "*** --unsafe-no-python-layer: the Python layer is OFF (no import "
		        "allowlist, builtins curation, attribute rules or audit hook). For "
		        "testing the kernel sandbox only. ***");
	if (cfg.cmd == CMD_SERVE)
		note_peer(&cfg);
	fds_for_workspace(&cfg);
	setup_cgroup(&cfg, &cg);
	switch (cfg.cmd) {
	case CMD_RUN:
		rc = runcmd_main(&cfg, self);
		break;
	case CMD_DOCTOR:
		rc = doctor_main(&cfg, self);
		break;
	default:
		rc = server_main(&cfg, self);
		break;
	}
	cgroup_clear(&cg);
	config_clear(&cfg);
	return rc;
}
