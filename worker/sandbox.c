/* sandbox.c - the worker's sandbox entry: fds, session, parent death, rlimits, uid,
 * namespaces, capabilities, no_new_privs, Landlock, dumpable, the fork gate and seccomp, in
 * that order.
 * Runs in a freshly forked single-threaded child and fails closed: a mandatory step that
 * fails ends the process with its WORKER_EXIT_* code; it never returns half-sandboxed. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "landlock.h"
#include "protocol.h"
#include "worker.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define SANDBOX_FIRST_CLOSED_FD (POLICY_FD_CHANNEL + 1)
#define SANDBOX_SIGPENDING      16
/* Tasks (processes and threads) of one chain: a session's holder, runner and newborn, and
 * the runner's threads. The same number as the supervisor's cgroup pids.max. */
#define SANDBOX_MAX_TASKS       64

static void layer_set(struct sandbox_report *r, enum sandbox_layer l, enum layer_state s, int err,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void layer_set(struct sandbox_report *r, enum sandbox_layer l, enum layer_state s, int err,
                      const char *fmt, ...)
{
	va_list ap;

	r->layer[l].state = s;
	r->layer[l].err = err;
	va_start(ap, fmt);
	vsnprintf(r->layer[l].detail, sizeof(r->layer[l].detail), fmt, ap);
	va_end(ap);
}

/* Record the failure, then end the worker: nothing after a failed step may run. */
static void __attribute__((noreturn))
fail(struct sandbox_report *r, enum sandbox_layer l, int code, int err, const char *what)
{
	layer_set(r, l, LAYER_FAILED, err, "%s", what);
	_exit(code);
}

static int close_from(unsigned int first)
{
	struct rlimit rl;

	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	/* Before 5.9: close every number below the fd limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1U << 20))
		rl.rlim_cur = 1U << 20;
	for (unsigned int fd = first; fd < rl.rlim_cur; fd++)
		(void)close(fd);
	return 0;
}

/* 0, 1, 2 <- /dev/null; channel_fd -> POLICY_FD_CHANNEL; everything else closed. The channel
 * is first copied above POLICY_FD_CHANNEL so that any number it starts on (0..3 included)
 * is safe to overwrite. */
static void enter_fds(int channel_fd, struct sandbox_report *r)
{
	int chan, null;

	chan = fcntl(channel_fd, F_DUPFD_CLOEXEC, SANDBOX_FIRST_CLOSED_FD);
	if (chan < 0)
		fail(r, SANDBOX_FDS, WORKER_EXIT_FDS, errno, "channel fd unusable");
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		fail(r, SANDBOX_FDS, WORKER_EXIT_FDS, errno, "open /dev/null");
	for (int fd = 0; fd <= 2; fd++) {
		/* dup2(fd, fd) keeps FD_CLOEXEC, hence the explicit F_SETFD. */
		if (dup2(null, fd) != fd || fcntl(fd, F_SETFD, 0) != 0)
			fail(r, SANDBOX_FDS, WORKER_EXIT_FDS, errno, "stdio to /dev/null");
	}
	if (dup2(chan, POLICY_FD_CHANNEL) != POLICY_FD_CHANNEL ||
	    fcntl(POLICY_FD_CHANNEL, F_SETFD, 0) != 0)
		fail(r, SANDBOX_FDS, WORKER_EXIT_FDS, errno, "channel to fd 3");
	/* Also closes chan and null (both >= 4 or already replaced). */
	if (close_from(SANDBOX_FIRST_CLOSED_FD) != 0)
		fail(r, SANDBOX_FDS, WORKER_EXIT_FDS, errno, "close_range");
	if (fcntl(POLICY_FD_CHANNEL, F_GETFD) != 0)
		fail(r, SANDBOX_FDS, WORKER_EXIT_FDS, errno, "channel lost");
	layer_set(r, SANDBOX_FDS, LAYER_ACTIVE, 0, "0-2 /dev/null, channel on 3, others closed");
}

static void enter_session(struct sandbox_report *r)
{
	if (setsid() < 0)
		fail(r, SANDBOX_SETSID, WORKER_EXIT_SETSID, errno, "setsid");
	layer_set(r, SANDBOX_SETSID, LAYER_ACTIVE, 0, "new session, no controlling tty");
}

/* Called twice: early, and again after the last credential change, because the kernel
 * clears the parent-death signal whenever the euid, egid or fsuid change (commit_creds), as
 * the switch away from root does. */
static void arm_pdeathsig(const struct sandbox_config *cfg, pid_t parent, struct sandbox_report *r)
{
	int sig = 0;

	if (cfg->bound) {
		layer_set(r, SANDBOX_PDEATHSIG, LAYER_ACTIVE, 0,
		          "none: bound to the supervisor (traced, EXITKILL)");
		return;
	}

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		fail(r, SANDBOX_PDEATHSIG, WORKER_EXIT_PDEATHSIG, errno, "PR_SET_PDEATHSIG");
	if (prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) != 0 || sig != SIGKILL)
		fail(r, SANDBOX_PDEATHSIG, WORKER_EXIT_PDEATHSIG, errno, "PR_GET_PDEATHSIG");
	/* The parent may have died before the prctl: then nobody would ever kill us. */
	if (getppid() != parent)
		fail(r, SANDBOX_PDEATHSIG, WORKER_EXIT_PDEATHSIG, 0, "parent already gone");
	layer_set(r, SANDBOX_PDEATHSIG, LAYER_ACTIVE, 0, "SIGKILL when parent %d dies",
	          (int)parent);
}

/* Lower a limit, never raise it: unprivileged setrlimit cannot raise a hard limit, and a
 * lower limit set by the user is stricter still. The hard limit is lowered with the soft so
 * the worker could not raise it back (seccomp also kills setrlimit). */
static int limit_lower(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit cur, want;

	if (getrlimit(resource, &cur) != 0)
		return -1;
	want.rlim_max = hard < cur.rlim_max ? hard : cur.rlim_max;
	want.rlim_cur = soft < cur.rlim_cur ? soft : cur.rlim_cur;
	if (want.rlim_cur > want.rlim_max)
		want.rlim_cur = want.rlim_max;
	/* soft < hard for CPU, so SIGXCPU (not SIGKILL) names the cause. */
	if (resource == RLIMIT_CPU && want.rlim_cur == want.rlim_max && want.rlim_max > 1)
		want.rlim_cur = want.rlim_max - 1;
	return setrlimit(resource, &want);
}

static void enter_rlimits(const struct sandbox_config *cfg, struct sandbox_report *r)
{
	const struct {
		int resource;
		rlim_t value;
		const char *name;
	} zero_or_small[] = {
	    /* Files written reach only fds of the workspace the supervisor passed: beyond this,
	     * a write fails with EFBIG (SIGXFSZ is ignored, interp.c). */
	    {RLIMIT_FSIZE, (rlim_t)cfg->fsize, "RLIMIT_FSIZE"},
	    {RLIMIT_CORE, 0, "RLIMIT_CORE"},
	    {RLIMIT_MEMLOCK, 0, "RLIMIT_MEMLOCK"},
	    {RLIMIT_MSGQUEUE, 0, "RLIMIT_MSGQUEUE"},
	    {RLIMIT_NOFILE, cfg->workspace ? SANDBOX_NOFILE_WORKSPACE : SANDBOX_NOFILE,
	     "RLIMIT_NOFILE"},
	    {RLIMIT_SIGPENDING, SANDBOX_SIGPENDING, "RLIMIT_SIGPENDING"},
	};
	rlim_t cpu = cfg->cpu_s;
	struct rlimit as, cpu_now, fsize;

	if (limit_lower(RLIMIT_AS, cfg->memory_bytes, cfg->memory_bytes) != 0)
		fail(r, SANDBOX_RLIMITS, WORKER_EXIT_RLIMIT, errno, "RLIMIT_AS");
	if (limit_lower(RLIMIT_CPU, cpu, cpu + 1) != 0)
		fail(r, SANDBOX_RLIMITS, WORKER_EXIT_RLIMIT, errno, "RLIMIT_CPU");
	for (size_t i = 0; i < sizeof(zero_or_small) / sizeof(zero_or_small[0]); i++) {
		if (limit_lower(zero_or_small[i].resource, zero_or_small[i].value,
		                zero_or_small[i].value) != 0)
			fail(r, SANDBOX_RLIMITS, WORKER_EXIT_RLIMIT, errno, zero_or_small[i].name);
	}
	/* Report what is in force: a stricter limit inherited from the user is kept. */
	if (getrlimit(RLIMIT_AS, &as) != 0 || getrlimit(RLIMIT_CPU, &cpu_now) != 0 ||
	    getrlimit(RLIMIT_FSIZE, &fsize) != 0)
		fail(r, SANDBOX_RLIMITS, WORKER_EXIT_RLIMIT, errno, "getrlimit");
	layer_set(r, SANDBOX_RLIMITS, LAYER_ACTIVE, 0,
	          "as %llu MiB, cpu %llu s, nofile %d, sigpending %d, fsize %llu, "
	          "core/memlock/msgqueue 0",
	          (unsigned long long)(as.rlim_cur >> 20), (unsigned long long)cpu_now.rlim_cur,
	          cfg->workspace ? SANDBOX_NOFILE_WORKSPACE : SANDBOX_NOFILE, SANDBOX_SIGPENDING,
	          (unsigned long long)fsize.rlim_cur);
}

/* 1 when the ids were switched (the worker was started as root), 0 when kept. */
static int enter_uid(const struct sandbox_config *cfg, struct sandbox_report *r)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) != 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, errno, "getresuid");
	/* A real or saved uid 0 could be taken back with setuid(0): switch then too (and fail
	 * closed if that is not permitted). */
	if (ru != 0 && eu != 0 && su != 0) {
		layer_set(r, SANDBOX_UID, LAYER_NOT_NEEDED, 0, "not root: uid %u",
		          (unsigned int)eu);
		return 0;
	}
	if (setgroups(0, NULL) != 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, errno, "setgroups");
	if (setresgid(cfg->gid, cfg->gid, cfg->gid) != 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, errno, "setresgid");
	if (setresuid(cfg->uid, cfg->uid, cfg->uid) != 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, errno, "setresuid");
	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, errno, "getresuid");
	if (ru != cfg->uid || eu != cfg->uid || su != cfg->uid || rg != cfg->gid ||
	    eg != cfg->gid || sg != cfg->gid)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, 0, "ids not switched");
	if (getgroups(0, NULL) != 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, 0, "supplementary groups kept");
	/* The switch must be irreversible (this also catches cfg->uid == 0). */
	if (setuid(0) == 0 || setgid(0) == 0)
		fail(r, SANDBOX_UID, WORKER_EXIT_SETUID, 0, "root regained");
	layer_set(r, SANDBOX_UID, LAYER_ACTIVE, 0, "uid %u gid %u", (unsigned int)cfg->uid,
	          (unsigned int)cfg->gid);
	return 1;
}

/* Write s to a /proc/self file. Returns 0 or -errno. */
static int write_self(const char *name, const char *s)
{
	char path[64];
	size_t n = strlen(s);
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, n) != (ssize_t)n)
		rc = -errno;
	close(fd);
	return rc;
}

int sandbox_zygote_namespaces(struct sandbox_config *cfg)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int rc;

	cfg->shared_netns = 0;
	if (!cfg->try_namespaces)
		return 0;
	/* Root may make them in place; workers switch to their user before their own. */
	if (uid == 0) {
		if (unshare(CLONE_NEWNET | CLONE_NEWIPC) == 0)
			cfg->shared_netns = 1;
		return 0;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC) != 0)
		return 0; /* refused: each worker tries its own, and reports */
	cfg->shared_netns = 1;
	/* Our uid and gid, mapped to themselves: files stay ours, and workers can make their own
	 * user namespace inside this one. */
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)uid, (unsigned int)uid);
	rc = write_self("uid_map", map);
	if (rc == 0)
		rc = write_self("setgroups", "deny");
	if (rc == 0) {
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)gid, (unsigned int)gid);
		rc = write_self("gid_map", map);
	}
	return rc;
}

/* Returns 1 when the worker has its own user namespace. */
static int enter_namespaces(const struct sandbox_config *cfg, struct sandbox_report *r)
{
	if (!cfg->try_namespaces) {
		layer_set(r, SANDBOX_NAMESPACES, LAYER_UNAVAILABLE, 0, "not tried (disabled)");
		return 0;
	}
	/* The network and IPC namespaces are the zygote's, one pair for every worker: empty,
	 * and no worker can make a socket or an IPC object in them (seccomp). The user
	 * namespace is the worker's own: its tasks are counted in it. */
	if (cfg->shared_netns) {
		if (unshare(CLONE_NEWUSER) == 0) {
			layer_set(r, SANDBOX_NAMESPACES, LAYER_ACTIVE, 0,
			          "user (its own) + net+ipc (the zygote's, shared by workers)");
			return 1;
		}
		if (errno == ENOSPC || errno == EUSERS) /* too many user namespaces */
			fail(r, SANDBOX_NAMESPACES, WORKER_EXIT_NAMESPACE, errno, "unshare(user)");
		layer_set(r, SANDBOX_NAMESPACES, LAYER_UNAVAILABLE, errno,
		          "unshare(user) refused; net+ipc: the zygote's");
		return 0;
	}
	/* No uid_map: the worker keeps its kernel uid and shows as the overflow uid inside. */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC) == 0) {
		layer_set(r, SANDBOX_NAMESPACES, LAYER_ACTIVE, 0, "user+net+ipc");
		return 1;
	}
	switch (errno) {
	case EPERM:
	case EINVAL:
	case ENOSPC:
	case EUSERS:
	case ENOSYS:
		layer_set(r, SANDBOX_NAMESPACES, LAYER_UNAVAILABLE, errno,
		          "unshare(user+net+ipc) refused");
		return 0;
	default:
		fail(r, SANDBOX_NAMESPACES, WORKER_EXIT_NAMESPACE, errno, "unshare(user+net+ipc)");
	}
}

/* Bound the tasks (processes and threads) of the worker and everything forked from it. In its
 * own user namespace RLIMIT_NPROC counts only that namespace's tasks of its uid (Linux 5.14+
 * counts per namespace), i.e. this chain's. Outside one it would count every process of the
 * user on the machine: then the cgroup's pids.max bounds them, or, with neither, the worker
 * starts no thread at all. Returns 1 when threads must be refused. */
static int enter_tasks(const struct sandbox_config *cfg, int own_userns, struct sandbox_report *r)
{
	if (own_userns) {
		if (limit_lower(RLIMIT_NPROC, SANDBOX_MAX_TASKS, SANDBOX_MAX_TASKS) != 0)
			fail(r, SANDBOX_TASKS, WORKER_EXIT_RLIMIT, errno, "RLIMIT_NPROC");
		layer_set(r, SANDBOX_TASKS, LAYER_ACTIVE, 0,
		          "RLIMIT_NPROC %d in its own user namespace", SANDBOX_MAX_TASKS);
		return 0;
	}
	if (cfg->tasks_cgroup) {
		layer_set(r, SANDBOX_TASKS, LAYER_ACTIVE, 0, "pids.max %d of its cgroup",
		          SANDBOX_MAX_TASKS);
		return 0;
	}
	if (!cfg->policy_nothreads)
		fail(r, SANDBOX_TASKS, WORKER_EXIT_SECCOMP, 0, "no bound on tasks");
	layer_set(r, SANDBOX_TASKS, LAYER_ACTIVE, 0,
	          "no user namespace or cgroup to count them: threads are refused");
	return 1;
}

/* 1 if any capability is set in the effective, permitted or inheritable set, 0 if none,
 * -1 on error. */
static int caps_any_set(cap_value_t max)
{
	static const cap_flag_t flags[] = {CAP_EFFECTIVE, CAP_PERMITTED, CAP_INHERITABLE};
	cap_flag_value_t v;
	cap_t caps;
	int rc = 0;

	caps = cap_get_proc();
	if (!caps)
		return -1;
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]) && rc == 0; f++) {
		for (cap_value_t c = 0; c < max && rc == 0; c++) {
			if (cap_get_flag(caps, c, flags[f], &v) != 0)
				rc = -1;
			else if (v != CAP_CLEAR)
				rc = 1;
		}
	}
	cap_free(caps);
	return rc;
}

static int cap_effective(cap_value_t c)
{
	cap_flag_value_t v;
	cap_t caps;
	int rc;

	caps = cap_get_proc();
	if (!caps)
		return -1;
	rc = cap_get_flag(caps, c, CAP_EFFECTIVE, &v) == 0 ? v == CAP_SET : -1;
	cap_free(caps);
	return rc;
}

/* The bounding set goes first: dropping it needs CAP_SETPCAP, which clearing the effective
 * set would remove (inside a new user namespace the worker holds it until then). */
static void enter_caps(struct sandbox_report *r)
{
	cap_value_t max = cap_max_bits();
	int bound_dropped = 1, setpcap;
	cap_t none;

	setpcap = cap_effective(CAP_SETPCAP);
	if (setpcap < 0)
		fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "cap_get_proc");
	for (cap_value_t c = 0; c < max; c++) {
		if (cap_drop_bound(c) == 0)
			continue;
		/* Without CAP_SETPCAP (not root, no user namespace) there is nothing to drop. */
		if (errno == EPERM && !setpcap) {
			bound_dropped = 0;
			break;
		}
		fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "PR_CAPBSET_DROP");
	}
	if (bound_dropped) {
		for (cap_value_t c = 0; c < max; c++) {
			if (cap_get_bound(c) != 0)
				fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "bounding set kept");
		}
	}
	/* EINVAL: a kernel without ambient capabilities (< 4.3), so none to clear. */
	if (cap_reset_ambient() != 0 && errno != EINVAL)
		fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "PR_CAP_AMBIENT_CLEAR_ALL");
	none = cap_init();
	if (!none)
		fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "cap_init");
	if (cap_set_proc(none) != 0)
		fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "capset");
	cap_free(none);
	if (caps_any_set(max) != 0)
		fail(r, SANDBOX_CAPS, WORKER_EXIT_CAPS, errno, "capabilities still set");
	if (bound_dropped)
		layer_set(r, SANDBOX_CAPS, LAYER_ACTIVE, 0,
		          "effective/permitted/inheritable/ambient empty, bounding set dropped");
	else
		layer_set(r, SANDBOX_CAPS, LAYER_ACTIVE, EPERM,
		          "effective/permitted/inheritable/ambient empty, bounding set kept "
		          "(no CAP_SETPCAP)");
}

static void enter_nnp(struct sandbox_report *r)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		fail(r, SANDBOX_NNP, WORKER_EXIT_NNP, errno, "PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		fail(r, SANDBOX_NNP, WORKER_EXIT_NNP, errno, "no_new_privs not set");
	layer_set(r, SANDBOX_NNP, LAYER_ACTIVE, 0, "set");
}

/* Every right the ABI knows is handled and no rule grants any: no filesystem access, no TCP
 * bind/connect (ABI >= 4), no abstract unix connect or signal outside the domain (ABI >= 6). */
static void enter_landlock(const struct sandbox_config *cfg, struct sandbox_report *r)
{
	struct landlock_handled h;
	long abi;
	int fd, rc;

	if (!cfg->try_landlock) {
		layer_set(r, SANDBOX_LANDLOCK, LAYER_UNAVAILABLE, 0, "not tried (disabled)");
		return;
	}
	abi = landlock_abi();
	if (abi == -ENOSYS || abi == -EOPNOTSUPP) {
		layer_set(r, SANDBOX_LANDLOCK, LAYER_UNAVAILABLE, (int)-abi, "not in this kernel");
		return;
	}
	if (abi < 1)
		fail(r, SANDBOX_LANDLOCK, WORKER_EXIT_LANDLOCK, (int)-abi, "ABI probe");
	landlock_handled_all(abi, &h);
	fd = landlock_ruleset(&h);
	if (fd < 0)
		fail(r, SANDBOX_LANDLOCK, WORKER_EXIT_LANDLOCK, -fd, "landlock_create_ruleset");
	/* Closed before seccomp, which kills close. */
	rc = landlock_enforce(fd);
	if (rc < 0)
		fail(r, SANDBOX_LANDLOCK, WORKER_EXIT_LANDLOCK, -rc, "landlock_restrict_self");
	layer_set(r, SANDBOX_LANDLOCK, LAYER_ACTIVE, 0, "ABI %ld", abi);
}

/* The listener as one IPC_FRAME_LISTENER frame (a header, no payload) with the fd attached,
 * in one sendmsg so the supervisor finds the fd with the frame's first byte. */
static int send_listener(int listener)
{
	unsigned char frame[IPC_FRAME_HEADER];

	ipc_frame_header_put(frame, IPC_FRAME_LISTENER, 0);
	return ipc_send_fd(POLICY_FD_CHANNEL, frame, sizeof(frame), listener);
}

/* Sessions: every fork asks the supervisor first. The gate goes before the main filter, which
 * kills the sendmsg and close this needs; the main filter is loaded under the gate, and the
 * two combine by precedence (a kill or errno there wins over a question). */
static void enter_fork_gate(const struct sandbox_config *cfg, struct sandbox_report *r)
{
	int listener = -1, killable = 0, rc;

	if (!cfg->gate) {
		layer_set(r, SANDBOX_FORK_GATE, LAYER_NOT_NEEDED, 0, "no sessions");
		return;
	}
	rc = policy_gate_load(cfg->gate, &listener, &killable);
	if (rc != 0)
		fail(r, SANDBOX_FORK_GATE, WORKER_EXIT_GATE, -rc, "policy_gate_load");
	rc = send_listener(listener);
	if (rc != 0)
		fail(r, SANDBOX_FORK_GATE, WORKER_EXIT_GATE, -rc, "send the listener");
	/* Not even native code may answer its own forks: the supervisor holds the only copy. */
	if (close(listener) != 0)
		fail(r, SANDBOX_FORK_GATE, WORKER_EXIT_GATE, errno, "close the listener");
	layer_set(r, SANDBOX_FORK_GATE, LAYER_ACTIVE, 0,
	          killable ? "listener sent to the supervisor; parked processes wait killable"
	                   : "listener sent to the supervisor");
}

void sandbox_enter(const struct sandbox_config *cfg, int channel_fd, pid_t parent,
                   struct sandbox_report *report)
{
	const struct policy *policy = cfg->policy;
	int rc, own_userns, switched;

	/* A layer never reached must not read as active (LAYER_ACTIVE is 0). */
	for (int l = 0; l < SANDBOX_NLAYERS; l++)
		layer_set(report, l, LAYER_FAILED, 0, "not reached");

	enter_fds(channel_fd, report);
	enter_session(report);
	arm_pdeathsig(cfg, parent, report);
	enter_rlimits(cfg, report);
	switched = enter_uid(cfg, report);
	own_userns = enter_namespaces(cfg, report);
	if (enter_tasks(cfg, own_userns, report))
		policy = cfg->policy_nothreads;
	enter_caps(report);
	/* no_new_privs before Landlock and seccomp: both need it when unprivileged. */
	enter_nnp(report);
	enter_landlock(cfg, report);
	arm_pdeathsig(cfg, parent, report);
	/* The supervisor attaches to the worker (ptrace) and, at the exit stop, reads the
	 * registers of a syscall that killed it; the kernel lets it when the worker is dumpable
	 * and of its uid, or when it holds CAP_SYS_PTRACE. A worker that kept the supervisor's
	 * uid is made dumpable (for its own user only). One switched to another uid is traced by
	 * the root supervisor through its capability and stays non-dumpable: any other process
	 * of that uid (nobody is shared with other daemons) would pass the same check, take the
	 * worker's channel and workspace fds (pidfd_getfd), read and write its memory
	 * (/proc/<pid>/mem, process_vm_writev); and its memory goes to no core dump handler. */
	if (prctl(PR_SET_DUMPABLE, switched ? 0 : 1, 0, 0, 0) != 0 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != !switched)
		_exit(WORKER_EXIT_DUMPABLE);
	enter_fork_gate(cfg, report);

	/* Last: from here only read(3), write(1|2|3) and the allowlist work. */
	rc = policy ? policy_load(policy) : -EINVAL;
	if (rc != 0)
		fail(report, SANDBOX_SECCOMP, WORKER_EXIT_SECCOMP, -rc, "policy_load");
	layer_set(report, SANDBOX_SECCOMP, LAYER_ACTIVE, 0, "default-deny allowlist loaded");
}

const char *sandbox_layer_name(enum sandbox_layer l)
{
	static const char *const names[SANDBOX_NLAYERS] = {
	    [SANDBOX_FDS] = "fds",
	    [SANDBOX_SETSID] = "setsid",
	    [SANDBOX_PDEATHSIG] = "pdeathsig",
	    [SANDBOX_RLIMITS] = "rlimits",
	    [SANDBOX_UID] = "uid",
	    [SANDBOX_NAMESPACES] = "namespaces",
	    [SANDBOX_TASKS] = "tasks",
	    [SANDBOX_CAPS] = "capabilities",
	    [SANDBOX_NNP] = "no_new_privs",
	    [SANDBOX_LANDLOCK] = "landlock",
	    [SANDBOX_FORK_GATE] = "fork_gate",
	    [SANDBOX_SECCOMP] = "seccomp",
	};

	if ((unsigned int)l >= SANDBOX_NLAYERS)
		return NULL;
	return names[l];
}

const char *layer_state_name(enum layer_state s)
{
	switch (s) {
	case LAYER_ACTIVE:
		return "active";
	case LAYER_UNAVAILABLE:
		return "unavailable";
	case LAYER_FAILED:
		return "failed";
	case LAYER_NOT_NEEDED:
		return "not needed";
	}
	return NULL;
}

/* Touches only memory (strerrordesc_np, unlike strerror, never loads a translation), so a
 * worker may call it after its filter. */
json_object *sandbox_report_json(const struct sandbox_report *r)
{
	json_object *all, *one;

	all = json_object_new_object();
	if (!all)
		return NULL;
	for (int l = 0; l < SANDBOX_NLAYERS; l++) {
		const struct sandbox_layer_report *lr = &r->layer[l];
		const char *state = layer_state_name(lr->state);

		one = json_object_new_object();
		if (!one)
			goto fail;
		if (json_object_object_add(all, sandbox_layer_name(l), one) != 0) {
			json_object_put(one);
			goto fail;
		}
		if (json_object_object_add(one, "state",
		                           json_object_new_string(state ? state : "unknown")) ||
		    json_object_object_add(one, "detail", json_object_new_string(lr->detail)))
			goto fail;
		if (lr->err != 0) {
			const char *text = strerrordesc_np(lr->err);

			if (json_object_object_add(one, "errno",
			                           json_object_new_string(text ? text : "unknown")))
				goto fail;
		}
	}
	return all;
fail:
	json_object_put(all);
	return NULL;
}
