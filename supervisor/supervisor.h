/* supervisor.h - the parts of the safepy executable: options, logging, the event loop, the
 * call engine (zygote + workers), and the three front ends (serve, run, doctor).
 * Functions return 0 or a negative errno unless noted. */
#ifndef SAFEPY_SUPERVISOR_H
#define SAFEPY_SUPERVISOR_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "ipc.h"
#include "protocol.h"

/* ---- options (config.c) ---- */

enum command { CMD_SERVE, CMD_RUN, CMD_DOCTOR, CMD_CONNECT };

/* Where safepy.socket listens (contrib/systemd); `safepy connect` connects there. */
#define SAFEPY_SOCKET_PATH "/run/safepy/safepy.sock"

struct cgroup;

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

struct config {
	enum command cmd;
	double timeout_s;   /* wall clock per call */
	unsigned int cpu_s; /* RLIMIT_CPU per worker */
	uint64_t memory;    /* RLIMIT_AS per worker */
	size_t max_output;  /* bytes kept per captured stream */
	size_t max_result;  /* bytes of result_repr and the JSON result */
	unsigned int max_workers;
	unsigned int max_sessions; /* sessions kept; the least recently used is evicted */
	double session_idle_s;     /* an idle session expires after this */
	unsigned int prefork;      /* idle workers kept ready */
	char **imports;            /* owned, sorted, unique */
	size_t n_imports;
	int imports_seed;
	int imports_data; /* --imports data: the default set and the data stack */
	enum log_level log_level;
	uid_t uid; /* sandbox user when started as root */
	gid_t gid;
	int unsafe_no_python_layer;
	int no_namespaces;
	int no_landlock;
	int show_policy;          /* doctor --policy */
	char *workspace;          /* owned: --workspace, absolute, links resolved; NULL: none */
	int workspace_write;      /* --workspace-write */
	const char *run_code;     /* run -c */
	const char *run_file;     /* run FILE, or "-" */
	const char *connect_path; /* connect SOCKET; NULL: SAFEPY_SOCKET_PATH */
	/* Set by main.c, borrowed: who is on the other end of stdin ("uid 1000 (alice) pid
	 * 4242", from SO_PEERCRED when stdin is a Unix socket), or NULL when unknown. */
	const char *peer;
	/* Set by main.c, borrowed: the delegated cgroup (state CGROUP_ACTIVE when workers can
	 * get their own cgroups), or NULL before it is probed. */
	struct cgroup *cgroup;
};

/* Parse argv into *cfg (defaults first). Prints help or version and sets *exit_now to the
 * exit status when the invocation asks for them. Returns 0, or -EINVAL with a message in
 * err. */
int config_parse(struct config *cfg, int argc, char **argv, int *exit_now, char *err,
                 size_t errlen);
void config_clear(struct config *cfg);
/* Is name one of the modules of cfg's import set (--imports), not one --allow-import added? */
int config_import_is_builtin(const struct config *cfg, const char *name);
/* Is name (an allowed module) a package of its own, not a standard-library module of the import
 * sets (seed, default, data's io, csv, warnings)? Its version is worth reporting. */
int config_import_is_package(const char *name);
/* Is matplotlib, or a module of it, allowed? (It draws figures, and keeps a cache on disk.) */
int config_allows_matplotlib(const struct config *cfg);
/* The zygote's configuration (ipc.h) for these options. Its strings are borrowed from cfg. */
void config_to_ipc(const struct config *cfg, struct ipc_config *out);

/* ---- logging (log.c): stderr only, never stdout ---- */

void log_set_level(enum log_level l);
/* Write log lines to stderr without waiting from now on (before the server starts). */
void log_open(void);
/* Also hand each line to sink (the MCP server forwards server events to a client that
 * asked for them with logging/setLevel). NULL removes it. */
void log_set_sink(void (*sink)(enum log_level l, const char *text));
void log_msg(enum log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* in into out[0..cap), NUL-terminated, with control characters (C0, C1, DEL) and bidirectional
 * overrides written as \xNN: text a call chose, shown on a terminal or in the log, forges no
 * line of the server's. */
void log_escape(const char *in, char *out, size_t cap);

/* ---- the event loop (loop.c): epoll, one thread ---- */

struct watch;
typedef void (*watch_fn)(struct watch *w, uint32_t events);

struct watch {
	int fd;
	watch_fn fn;
	void *data;
};

int loop_init(void);
int loop_add(struct watch *w, uint32_t events);
int loop_mod(struct watch *w, uint32_t events);
void loop_del(struct watch *w);
/* Wait up to timeout_ms (-1: forever) or until the next timer is due, dispatch one fd event,
 * then run the timers that are due. Returns 0 or -errno. */
int loop_run_once(int timeout_ms);
/* Milliseconds on the monotonic clock. */
int64_t now_ms(void);
/* Microseconds on the monotonic clock. */
int64_t now_us(void);

/* A timer the loop owns once armed. Caller-owned storage: timer_init, then arm and cancel
 * freely; cancel it before freeing its storage. */
struct timer;
typedef void (*timer_fn)(struct timer *t);
struct timer {
	TAILQ_ENTRY(timer) link;
	int64_t at; /* now_ms() when it fires */
	int armed;
	timer_fn fn;
	void *data;
};
TAILQ_HEAD(timer_list, timer);

void timer_init(struct timer *t, timer_fn fn, void *data);
/* Fire at `at` (ms on the monotonic clock), replacing an earlier arming. */
void timer_arm(struct timer *t, int64_t at);
void timer_cancel(struct timer *t);

/* ---- the server's output (outq.c) ---- */

/* Messages waiting for a client that may read slowly: whole chunks, written in order without
 * blocking. Caller-owned: outq_open / outq_close. */
/* Chunks made at outq_open for messages that must go out when memory is short: outq_push
 * takes one when it cannot allocate, and it comes back once written. */
#define OUTQ_SPARES      64
#define OUTQ_SPARE_BYTES 512
struct outq_chunk;
struct outq {
	STAILQ_HEAD(outq_list, outq_chunk) chunks;
	struct outq_chunk *spare[OUTQ_SPARES]; /* the spares not in use: spare[0..n_spare) */
	int n_spare;
	size_t bytes;      /* queued, not yet written */
	int fd;            /* what is written to (-1 once closed) */
	int own_fd;        /* our own open of a pipe, or -1 */
	int is_socket;     /* written with MSG_DONTWAIT */
	int restore_flags; /* the fd's flags before O_NONBLOCK, or -1 */
};

/* Write fd through a queue, without blocking: a pipe is opened again for a file description
 * of our own, a socket is written with MSG_DONTWAIT, anything else gets O_NONBLOCK until
 * outq_close. */
int outq_open(struct outq *q, int fd);
/* Drop what is queued, put fd back as it was. */
void outq_close(struct outq *q);
/* Queue data[0..len) then tail[0..tail_len) as one chunk (copies). Without memory, a chunk of
 * up to OUTQ_SPARE_BYTES goes in a spare if one is free. Returns 0 or -ENOMEM. */
int outq_push(struct outq *q, const char *data, size_t len, const char *tail, size_t tail_len);
/* Write what the fd takes now. Returns 0 when the queue is empty, 1 when the fd takes no more
 * for now (wait for EPOLLOUT on outq_fd), or -errno when it is broken (-EPIPE: no reader). */
int outq_flush(struct outq *q);
/* Bytes queued. */
size_t outq_bytes(const struct outq *q);
/* The fd to watch for EPOLLOUT. */
int outq_fd(const struct outq *q);

/* ---- the engine (engine.c) ---- */

struct engine;
struct engine_call;
struct session;
struct chain;

typedef void (*call_done_fn)(struct engine_call *c, struct run_outcome *o);

/* One call. Caller-owned; the engine borrows it from engine_submit until done() runs. */
struct engine_call {
	const char *code; /* borrowed, NUL-terminated, no NUL inside */
	size_t code_len;
	double timeout_s;        /* 0: the configured limit */
	struct session *session; /* NULL: a one-shot call in a fresh worker */
	int reset;               /* start the session from a clean interpreter first */
	call_done_fn done;       /* called once with the outcome (the callee may clear it) */
	/* the engine's */
	TAILQ_ENTRY(engine_call) link; /* in the engine's queue or its session's */
	struct chain *chain;           /* the chain that runs it, once given one */
	int64_t started_ms;            /* when it was submitted */
	int queued;                    /* on a queue (link is in use) */
	/* When each step happened (now_us), for the debug log and bench/profile: submitted, its
	 * code sent to a runner, its result read, its runner seen parked, answered. */
	struct {
		int64_t submit, dispatch, result, park, answer;
	} times;
};

/* Start the engine and its zygote (zygote_exe: the safepy-zygote executable). */
int engine_new(const struct config *cfg, const char *zygote_exe, struct engine **out);
/* A new, empty session with a fresh handle (evicting the least recently used idle session
 * beyond the limit), or NULL on ENOMEM. Owned by the engine. */
struct session *engine_session_new(struct engine *e);
/* The session with this handle, or NULL when unknown, expired or evicted. */
struct session *engine_session_find(struct engine *e, const char *handle);
/* Its handle: 32 hex digits, 128 bits from getrandom. */
const char *engine_session_handle(const struct session *s);
/* The images of its last completed call (borrowed, valid until its next call completes or it
 * ends), *n of them; none (NULL, 0) when that call drew none or they were dropped for room. */
const struct run_image *engine_session_images(const struct session *s, size_t *n);
/* Queue a call; calls of one session run one at a time in arrival order. done() is never
 * called from inside engine_submit. */
void engine_submit(struct engine *e, struct engine_call *c);
/* Stop a call. One that has not started is removed, its session untouched; one that runs is
 * killed and its session rolled back. done() runs with RUN_CANCELLED, maybe later. */
void engine_cancel(struct engine *e, struct engine_call *c);
/* Kill every process and the zygote, reap them all (waits up to about a second). */
void engine_free(struct engine *e);
/* Handle SIGCHLD: reap, follow the traced processes' stops. */
void engine_sigchld(struct engine *e);
/* Run the event loop until the zygote is ready (returns 1), its first start failed, or *stop is
 * set (returns 0). A failure returns -EINVAL when an allowed module cannot be imported (why
 * names it and the option that allowed it), else -EIO, with the reason in why[0..len). The
 * caller's signal watch must already feed engine_sigchld. */
int engine_start_wait(struct engine *e, const int *stop, char *why, size_t len);
/* The same without waiting: 1 once the zygote was ready, 0 while its first start goes on, or
 * the failure as above. */
int engine_start_state(const struct engine *e, char *why, size_t len);
/* The first worker's sandbox report (JSON text), or NULL before one was ready. */
const char *engine_layers(struct engine *e);
/* What confines the supervisor itself. */
const struct confine_report *engine_confinement(const struct engine *e);
/* Is the ptrace report of killing syscalls available? -1 unknown, 0 no, 1 yes. */
int engine_can_name_syscalls(struct engine *e);

/* ---- front ends ---- */

/* Exit statuses of `safepy run` (also listed in --help and safepy(1)). */
enum run_exit {
	RUN_EXIT_OK = 0,
	RUN_EXIT_ERROR = 1, /* the code raised an exception */
	RUN_EXIT_USAGE = 2, /* a bad option or file, or an allowed module that cannot be imported */
	RUN_EXIT_TIMEOUT = 3,
	RUN_EXIT_MEMORY = 4,
	RUN_EXIT_OUTPUT = 5,
	RUN_EXIT_CRASHED = 6,
	RUN_EXIT_SANDBOX = 7,     /* a sandbox violation */
	RUN_EXIT_INTERRUPTED = 8, /* a signal stopped safepy first */
	RUN_EXIT_SAFEPY = 9,      /* safepy could not run the code: the sandbox could not start */
};

int server_main(const struct config *cfg, const char *zygote_exe);
int runcmd_main(const struct config *cfg, const char *zygote_exe);
int doctor_main(const struct config *cfg, const char *zygote_exe);

/* `safepy connect`: relay stdin/stdout to the Unix socket cfg->connect_path. Returns the
 * exit status (0 when the server closed the connection). Needs no zygote. */
int connect_main(const struct config *cfg);

/* ---- the supervisor's own sandbox (confine.c) and the zygote starter (starter.c) ---- */

/* The process that starts the zygote (see starter.c). Caller-owned. */
struct starter {
	int fd;    /* its socket, -1: none */
	pid_t pid; /* our child; reaped with the others */
};

/* Fork the starter. Returns 0 or -errno. */
int starter_start(struct starter *s, const char *zygote_exe);
/* Start the zygote with sock as its control socket; *pid is our child. Returns 0, -ECHILD
 * when the starter is gone, -ETIMEDOUT, or the fork's -errno. */
int starter_spawn(struct starter *s, int sock, pid_t *pid);
/* Close its socket: it exits. */
void starter_stop(struct starter *s);

/* What the supervisor must reach once it is confined. */
struct confine_paths {
	const char *zygote_exe;
	int cgroup_fd;    /* the delegated cgroup's directory, -1 */
	int workspace_fd; /* the workspace, -1 */
	int workspace_writable;
	int cache_fd; /* where the zygote writes its libraries' caches, -1 */
};

/* What confinement is in force, for the log and doctor. */
struct confine_report {
	int nnp;                   /* no_new_privs set */
	unsigned int seccomp_rows; /* its filter's table rows, 0: no filter */
	long landlock_abi;         /* 0: no Landlock */
	char landlock[256];
	char detail[400];
};

/* Confine the supervisor (no_new_privs, Landlock, the starter forked, then its seccomp
 * filter). Returns 0 (*r says what is in force, *st is the starter) or -errno: the supervisor
 * must not go on. */
int confine_self(const struct confine_paths *p, struct starter *st, struct confine_report *r);
/* Confine `safepy connect` once connected: no files, only relaying. Returns 0 or -errno. */
int confine_relay(void);

/* ---- the client on stdin (peer.c) ---- */

/* Describe the process connected to fd when fd is a Unix socket (SO_PEERCRED): "uid 1000
 * (alice) pid 4242" into buf. Returns 0, -ENOTSOCK for a pipe or terminal, -EAFNOSUPPORT for
 * another socket family, -ENAMETOOLONG when buf is too small, or another -errno. */
int peer_describe(int fd, char *buf, size_t len);

/* ---- cgroups (cgroup.c): one cgroup per worker in a delegated cgroup v2 subtree ---- */

#define CGROUP_WANT_MEMORY 0x1u
#define CGROUP_WANT_PIDS   0x2u

enum cgroup_state {
	CGROUP_UNAVAILABLE, /* no delegated cgroup (or not probed): rlimits alone bound workers */
	CGROUP_ACTIVE,      /* set up: cgroup_worker_create works */
	CGROUP_FAILED,      /* delegated, but setting it up failed */
};

/* Caller-owned: cgroup_init / cgroup_clear. */
struct cgroup {
	enum cgroup_state state;
	char reason[PATH_MAX + 160]; /* what is active, or why not: for the log and doctor */
	char path[PATH_MAX];         /* the delegated cgroup's directory, once probed */
	unsigned int want;           /* CGROUP_WANT_* */
	int dirfd;                   /* the delegated cgroup, -1 */
	unsigned int next_id;        /* names children w1, w2, ... */
};

/* Limits of one worker's cgroup; 0 leaves a limit unset. */
struct cgroup_limits {
	uint64_t memory_max; /* memory.max, bytes */
	int no_swap;         /* memory.swap.max = 0 (with memory_max) */
	uint64_t pids_max;   /* pids.max: tasks, counting a child at fork before it moves */
};

/* Caller-owned; valid after cgroup_worker_create until cgroup_worker_remove succeeds. */
struct cgroup_worker {
	int dirfd;
	char name[16];
};

/* Initialise *cg as unavailable. */
void cgroup_init(struct cgroup *cg);
/* Close what *cg holds (the cgroups themselves stay; systemd removes the unit's tree). */
void cgroup_clear(struct cgroup *cg);
/* Read-only: find our cgroup on the cgroup v2 mount, check that systemd marked it delegated
 * (user.delegate or trusted.delegate xattr "1"), that we may write it, and that the wanted
 * controllers (CGROUP_WANT_*) are available. Returns 0 (then call cgroup_setup), or -errno
 * with cg->state CGROUP_UNAVAILABLE and cg->reason saying why. Changes nothing. */
int cgroup_probe(struct cgroup *cg, unsigned int want);
/* After a successful probe: create the leaf "supervisor", move every process of our cgroup
 * into it, enable the wanted controllers for children. Call it before the zygote starts.
 * Returns 0 with cg->state CGROUP_ACTIVE, or -errno with CGROUP_FAILED and a reason. */
int cgroup_setup(struct cgroup *cg);
/* Create a child cgroup wN with the limits. Returns 0 with *w filled, or -errno (-ENODEV when
 * cg is not active); on failure nothing is left behind. */
int cgroup_worker_create(struct cgroup *cg, const struct cgroup_limits *lim,
                         struct cgroup_worker *w);
/* Move process pid (its whole thread group) into the worker's cgroup. Memory it already
 * uses stays charged where it was; what it allocates from now on is charged here. */
int cgroup_worker_attach(const struct cgroup_worker *w, pid_t pid);
/* memory.events oom_kill: processes the kernel killed at memory.max. Returns 0 or -errno. */
int cgroup_worker_oom_kills(const struct cgroup_worker *w, uint64_t *n);
/* SIGKILL every process in the worker's cgroup (cgroup.kill, Linux 5.14+). */
int cgroup_worker_kill(const struct cgroup_worker *w);
/* Remove the worker's cgroup. Returns 0, or -EBUSY while a process is still inside (try
 * again after reaping it); *w stays valid on failure. */
int cgroup_worker_remove(struct cgroup *cg, struct cgroup_worker *w);
/* Exposed for tests. The cgroup v2 path in /proc/self/cgroup text (the "0::" line) into out.
 * Returns 0, -ENOENT without such a line, -ENAMETOOLONG. */
int cgroup_parse_self(const char *text, char *out, size_t len);
/* One /proc/self/mountinfo line: for a cgroup2 mount, its mount point and the cgroup it
 * shows as root (octal escapes decoded). Returns 0, -ENOENT for another fs type, -EINVAL
 * for a malformed line, -ENAMETOOLONG. */
int cgroup_parse_mountinfo_line(const char *line, char *mnt, size_t mlen, char *root, size_t rlen);

/* mounts.c: the mounts /proc/self/mountinfo shows. One line's fields: the mount's id, its
 * device, the directory of the filesystem it shows as its root, its mount point (escapes
 * decoded), the filesystem's type and its own options (as shown: see mount_option). */
struct mount_entry {
	uint64_t id;
	dev_t dev;
	char *root, *mnt, *fstype, *opts;
};
/* 0, -EINVAL for a malformed line, -ENOMEM; e is freed with mount_entry_free. */
int mount_entry_parse(const char *line, struct mount_entry *e);
void mount_entry_free(struct mount_entry *e);
struct mount_table {
	struct mount_entry *v;
	size_t n;
};
/* The mounts of this process's namespace (every line understood, or -EINVAL). 0 or -errno. */
int mount_table_read(struct mount_table *t);
void mount_table_free(struct mount_table *t);
const struct mount_entry *mount_table_by_id(const struct mount_table *t, uint64_t id);
/* The value of the filesystem's option name (name=value), escapes decoded: a new string, or
 * NULL when it has none (or no memory). */
char *mount_option(const struct mount_entry *e, const char *name);
/* Is the absolute path dir or beneath it (by name)? */
int path_within(const char *path, const char *dir);
/* What an absolute path (no symbolic links) names on its filesystem: the device and the path
 * from the filesystem's root, through the mount e that shows it (-ENOENT when the path does
 * not lie at or beneath e's mount point). p->path is allocated (free it; NULL at first). */
struct mount_place {
	dev_t dev;
	char *path;
};
int mount_place(const struct mount_entry *e, const char *path, struct mount_place *p);
/* Do two places hold one the other (the same device, one path within the other)? */
int mount_places_meet(const struct mount_place *a, const struct mount_place *b);

/* Signals the front ends watch through a signalfd. */
int signals_block(void);

#endif
