/* worker.h - the zygote (CPython initialised once, forks one worker per call) and the worker
 * (sandbox entry, then the restricted interpreter runs the code and writes one result frame).
 * From fork() until the code runs the worker fails closed: a setup step that fails ends it
 * with one of the exit codes of ipc.h. Everything else returns 0 or a negative errno. */
#ifndef SAFEPY_WORKER_H
#define SAFEPY_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "ipc.h"
#include "policy.h"

/* ---- Sandbox ------------------------------------------------------------------------- */

struct sandbox_config {
	uint64_t memory_bytes; /* RLIMIT_AS */
	unsigned int cpu_s;    /* RLIMIT_CPU soft; the hard limit is one second more */
	uid_t uid;             /* when started as root: the unprivileged user to become */
	gid_t gid;
	int try_namespaces;          /* unshare user+net+ipc when the kernel allows */
	int try_landlock;            /* Landlock with no rules when the kernel has it */
	const struct policy *policy; /* borrowed; built once in the zygote */
	/* borrowed: the same without threads (policy_build_session_nothreads), for a worker
	 * whose tasks nothing bounds; NULL: always policy */
	const struct policy *policy_nothreads;
	/* borrowed, or NULL: the fork gate (policy_gate_build); when set, policy is
	 * policy_build_session's */
	const struct policy *gate;
	int tasks_cgroup; /* the supervisor puts each chain in a cgroup with pids.max */
	/* set by sandbox_zygote_namespaces: the zygote made one network and IPC namespace pair
	 * that every worker shares; a worker then makes only its own user namespace */
	int shared_netns;
	/* The workspace (0 and 0 without one): RLIMIT_NOFILE SANDBOX_NOFILE_WORKSPACE instead of
	 * SANDBOX_NOFILE, so files the supervisor passes fit; RLIMIT_FSIZE above 0 when its files
	 * may be written. */
	int workspace;
	uint64_t fsize;
	/* Set per spawn (IPC_SPAWN_TRACED): the supervisor traces its workers, so this one takes
	 * no parent-death signal; EXITKILL binds its life to the supervisor's once it is seized,
	 * and before that it runs no code of the user's and exits when its gate or channel
	 * closes. */
	int bound;
	/* Set per spawn (IPC_SPAWN_COLD): a call waits for this worker, which does not warm up. */
	int cold;
};

/* The fds a worker may hold: its four fixed ones and few more; with a workspace, the files it
 * opens (the worker makes no fd itself: each is one the supervisor passed). */
#define SANDBOX_NOFILE           8
#define SANDBOX_NOFILE_WORKSPACE 64

enum layer_state {
	LAYER_ACTIVE = 0,
	LAYER_UNAVAILABLE, /* the kernel or environment does not offer it; safepy runs without */
	LAYER_FAILED,      /* offered but failed: the worker ends (fail closed) */
	LAYER_NOT_NEEDED,  /* e.g. the uid switch when not started as root */
};

enum sandbox_layer {
	SANDBOX_FDS = 0,
	SANDBOX_SETSID,
	SANDBOX_PDEATHSIG,
	SANDBOX_RLIMITS,
	SANDBOX_UID,
	SANDBOX_NAMESPACES,
	SANDBOX_TASKS,
	SANDBOX_CAPS,
	SANDBOX_NNP,
	SANDBOX_LANDLOCK,
	SANDBOX_FORK_GATE,
	SANDBOX_SECCOMP,
	SANDBOX_NLAYERS
};

struct sandbox_layer_report {
	enum layer_state state;
	int err;         /* errno of the failure, 0 if none */
	char detail[96]; /* e.g. "ABI 7", "user+net+ipc", "uid 65534" */
};

struct sandbox_report {
	struct sandbox_layer_report layer[SANDBOX_NLAYERS];
};

/* "seccomp", "no_new_privs", ... */
const char *sandbox_layer_name(enum sandbox_layer l);
const char *layer_state_name(enum layer_state s);

/* In the zygote, once, before Python starts (it must be single-threaded): make the network
 * and IPC namespaces every worker will share, empty (loopback down). As root it needs no user
 * namespace; otherwise the zygote enters a user namespace of its own that maps its uid and
 * gid to themselves. Sets cfg->shared_netns; when the kernel refuses, workers make their own
 * as before. Returns 0, or a negative errno when the uid could not be mapped: the namespaces
 * exist and are shared, but workers cannot make user namespaces of their own (they report
 * it). */
int sandbox_zygote_namespaces(struct sandbox_config *cfg);

/* Enter the sandbox in a freshly forked, single-threaded process, in this order: fds (stdin,
 * stdout, stderr become /dev/null, channel_fd moves to POLICY_FD_CHANNEL, every other fd is
 * closed), setsid, PR_SET_PDEATHSIG(SIGKILL) and a re-check that getppid() == parent (not for
 * a bound worker: cfg->bound),
 * rlimits, the switch to cfg->uid/gid when running as root, user+net+ipc namespaces, a bound
 * on its tasks (RLIMIT_NPROC inside its own user namespace, or the cgroup's pids.max, or no
 * threads at all), capabilities dropped (effective, permitted, inheritable, bounding, ambient), no_new_privs,
 * Landlock with no rules, PR_SET_DUMPABLE 1 (so the supervisor can attach with ptrace to
 * report a killed syscall; the zygote holds no secrets), the fork gate when cfg->gate is set
 * (its listener goes to the supervisor as an IPC_FRAME_LISTENER frame on the channel, with
 * the fd attached by SCM_RIGHTS, and is closed here), seccomp last.
 * Fills *report. A failing mandatory step calls _exit(WORKER_EXIT_*): it never returns then.
 * Optional layers (namespaces, Landlock) the kernel does not offer are reported unavailable. */
void sandbox_enter(const struct sandbox_config *cfg, int channel_fd, pid_t parent,
                   struct sandbox_report *report);

/* The report as JSON: {"seccomp":{"state":"active","detail":"..."}, ...}. New object. */
json_object *sandbox_report_json(const struct sandbox_report *r);

/* ---- The zygote ---------------------------------------------------------------------- */

/* Everything the zygote needs, filled by the supervisor's option parser. */
struct zygote_config {
	struct sandbox_config sandbox;
	const char *const *imports; /* allowed modules (pre-imported), sorted */
	size_t n_imports;
	size_t max_output;          /* bytes kept per captured stream */
	size_t max_result;          /* bytes of result_repr / serialised result */
	int unsafe_no_python_layer; /* test-only: no import allowlist, builtins, attribute rules
	                              * or audit hook */
	int control_fd;             /* the control socket to the supervisor */
	const char *workspace;      /* its absolute path, or NULL: no file can be reached */
	int workspace_write;        /* its files may be written */
	const char *cache;          /* a directory the zygote may write libraries' caches in, or
	                             * NULL */
};

/* Run the zygote: initialise CPython (isolated, no site, empty environment, audit hook),
 * import and pre-warm the allowed modules, build the seccomp policy, gc.freeze(), then serve
 * spawn requests until the control socket closes. Never returns; exits 0 on a closed control
 * socket, a ZYGOTE_EXIT_* code if start-up failed. */
void zygote_main(const struct zygote_config *cfg) __attribute__((noreturn));

/* A worker after its sandbox, for the rest of its life and of every process forked from it:
 * park in the fork gate and do what the supervisor's answer says (ipc.h, the fork gate's
 * answers): fork, run a call, warm up, reap. Never returns. */
void runner_serve(void) __attribute__((noreturn));

#endif
