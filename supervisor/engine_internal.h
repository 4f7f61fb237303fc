/* engine_internal.h - the call engine's parts, shared by engine.c (API, queue, scheduling),
 * chain.c (a chain's state machine), channel.c (its socket), session.c, zygote_ctl.c,
 * gate.c (fork gate answers), trace.c (ptrace) and verdict.c (how a call ended). Nothing
 * outside supervisor/ includes it. Functions return 0 or a negative errno unless noted. */
#ifndef SAFEPY_ENGINE_INTERNAL_H
#define SAFEPY_ENGINE_INTERNAL_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "policy.h"
#include "supervisor.h"

/* glibc's <sys/queue.h> lacks the variant that allows removing the current element. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)                                                 \
	for ((var) = TAILQ_FIRST(head); (var) && ((tvar) = TAILQ_NEXT(var, field), 1);             \
	     (var) = (tvar))
#endif

/* ---- Limits the engine enforces on processes ---------------------------------------- */

/* Between the soft deadline (SIGUSR1: TimeoutError inside the code, so what it printed
 * comes back) and SIGKILL. */
#define ENGINE_SOFT_KILL_GRACE_MS   500
/* The deadline asks again this long after the first time, within the grace: code that caught
 * the TimeoutError and went on (an except Exception around each item, a library's around each
 * fit) gets one that is not an Exception, and ends with what it printed rather than at the
 * kill, which loses it. */
#define ENGINE_SOFT_AGAIN_MS        200
/* Signal-delivery stops a process may take, the collector's SIGPROF aside: the deadline's
 * and the CPU limit's are a few, and a fault without a handler ends the process. A process
 * past it is taking faults under a handler of its own without end, each one a stop the
 * supervisor serves before other sessions' work. */
#define ENGINE_SIGNALS_MAX          256
/* Fork attempts of a call's code refused (the gate's notifications the loop answers), a process
 * at most: code that retried without end kept the supervisor's loop answering 20000 a second. */
#define ENGINE_FORKS_MAX            256
/* A process the supervisor resumed outside a call (a new runner warming up, a holder
 * forking or reaping, a runner making the copy that keeps its state) must park again within
 * this, or its chain is taken for hostile. */
#define ENGINE_STEP_MS              2000
/* The CPU time a chain's processes may use in all its steps between two calls: ENGINE_STEP_CPU_MS,
 * and ENGINE_STEP_CPU_GIB_MS more per GiB of --memory, checked every ENGINE_STEP_POLL_MS and at
 * each park and exit. A process parked inside a call's own code returns into that code at each
 * step: without this it computed for the whole step time at every step (a bound per step was
 * passed by making the steps many: a runner that exits instead of parking is forked again),
 * outside any call's limits and slot. A warm-up or a reap takes 10-20 ms of CPU, a fork ~17 ms
 * per GiB the session holds; on a loaded virtual machine a warm-up's page faults were seen to
 * take 180 ms, hence the margin. */
#define ENGINE_STEP_CPU_MS          1000
#define ENGINE_STEP_CPU_GIB_MS      100
#define ENGINE_STEP_POLL_MS         100
/* How many times (1, 2, 4, ... ms apart: 63 ms in all) a runner parked with threads after its
 * result is asked its thread count again before its one-thread copy is made. */
#define ENGINE_SETTLE_TRIES         6
/* A fresh worker must be sandboxed and parked within this after the spawn request. */
#define ENGINE_BOOT_MS              10000
/* Runners that failed to come up in a row before a session stops preparing them. */
#define ENGINE_PREP_FAILURES_MAX    3
/* Zygote restarts: the first after 2 s, doubling up to 30 s while start-up keeps failing. */
#define ENGINE_ZYGOTE_RETRY_MS      1000
#define ENGINE_ZYGOTE_RETRY_MAX     30000
/* pids.max of a chain's cgroup: its processes and their threads. */
#define ENGINE_CGROUP_PIDS          64
/* oom_score_adj of a process running a call: the OOM killer takes it before the state. */
#define ENGINE_RUNNER_OOM_ADJ       "1000"
/* Bytes read from one chain's channel per event-loop turn. */
#define ENGINE_READ_PER_TURN        65536
/* Child statuses taken in one turn of the loop: threads that fault without end each stop
 * for the tracer at every fault, and an unbounded drain kept the loop from everything else. */
#define ENGINE_WAITS_PER_TURN       64
/* Bytes read at most when a process parks or exits, to judge what it wrote first: a whole
 * frame of the largest size and a socket buffer's worth. */
#define ENGINE_READ_DRAIN           (IPC_FRAME_MAX + (1u << 20))
/* Bytes of images all sessions keep for show_figures; beyond it the least recently used
 * sessions' go first. */
#define ENGINE_IMAGES_KEPT_MAX      (32u << 20)
/* What a runner may ask for during one call (broker.c): requests, and bytes served. */
#define ENGINE_REQUESTS_PER_CALL    IPC_REQUESTS_PER_CALL
#define ENGINE_SERVED_PER_CALL      IPC_SERVED_PER_CALL
/* The largest module source served. */
#define ENGINE_MODULE_MAX           (4u << 20)
/* The workspace (broker.c): the largest file a call may open to read, the files a call may
 * write, their bytes in all, the fds a call may be given, the entries of one listing. */
#define ENGINE_WS_READ_MAX          IPC_WS_READ_MAX
#define ENGINE_WS_FILES_PER_CALL    IPC_WS_FILES_PER_CALL
#define ENGINE_WS_DIRS_PER_CALL     IPC_WS_DIRS_PER_CALL
#define ENGINE_WS_REMOVALS_PER_CALL IPC_WS_REMOVALS_PER_CALL
/* Directories of failed calls that wait for other calls to end before they go. */
#define ENGINE_WS_ORPHANS_MAX       4096
/* Orphans tried when a call ends: the supervisor's work there stays small however many wait. */
#define ENGINE_WS_ORPHANS_RETRY     32
#define ENGINE_WS_ORPHANS_RETRY_US  2000
#define ENGINE_WS_ORPHANS_SLICE_MS  10 /* between the slices of a pass */
/* An orphan is kept (its directory held open) only while this many fds stay free besides. */
#define ENGINE_WS_ORPHAN_FD_ROOM    256
#define ENGINE_WS_BYTES_PER_CALL    IPC_WS_BYTES_PER_CALL
#define ENGINE_WS_FDS_PER_CALL      IPC_WS_FDS_PER_CALL
#define ENGINE_WS_LIST_MAX          IPC_WS_LIST_MAX
/* While a call writes files, their size is checked this often: a call that writes more than
 * its quota is stopped (each file is bounded by RLIMIT_FSIZE, all of them by this check). */
#define ENGINE_WS_CHECK_MS          100
/* A file copied for a call ("a", "r+", chmod, utime, a rename that cannot link) at least this
 * large is copied this much at a turn of the loop, between its other work (broker.c fill). */
#define ENGINE_WS_COPY_PIECE        (4u << 20)
/* How long a commit waits for another server's on the same workspace (broker.c commit_lock). */
#define ENGINE_WS_LOCK_WAIT_MS      2000
/* File descriptors the supervisor keeps free for what it opens only for a moment (a /proc
 * file, a broker request's files, a zygote restart's socket pair): nothing it keeps (a
 * chain, a workspace write in progress) may take these. */
#define ENGINE_FD_RESERVE           4
/* After the zygote could not fork a worker, ready workers are not made again for this long
 * (calls still try at once); doubling up to ENGINE_ZYGOTE_RETRY_MAX. */
#define ENGINE_SPAWN_RETRY_MS       1000

/* ---- Processes and chains ------------------------------------------------------------ */

/* What a process of a chain is to the supervisor. It never decides this itself. */
enum proc_role {
	ROLE_FREE = 0, /* slot unused */
	ROLE_HOLDER,   /* holds a session's committed state; parked or stopped, runs no call */
	ROLE_RUNNER,   /* runs (or is ready to run) a call */
	ROLE_NEWBORN,  /* forked on the supervisor's word; its role comes with its first park */
	ROLE_GONE,     /* killed or replaced: only its exit is awaited */
};

/* Which thread's system call the seccomp filter killed (from the exit stops). */
struct sysreport {
	int have;
	unsigned int arch;
	long nr;
	uint64_t args[6];
	pid_t tid;
};

struct proc {
	pid_t pid; /* 0: slot free */
	enum proc_role role;
	int fresh;  /* the zygote forked it: unless its chain is bound, it dies with the zygote */
	int parked; /* its main thread waits in the gate: notif is held */
	uint64_t notif; /* that notification's id */
	int threads;    /* its threads when it parked (from /proc) */
	int killed;     /* SIGKILL sent */
	int cpu_ms;     /* CPU time at its exit stop, -1 unknown */
	int step_cpu0;  /* its CPU time when let go for a step (a newborn: 0), -1 none */
	int signals;    /* its signal-delivery stops but the collector's tick (trace.c) */
	int forks;      /* its code's fork attempts refused (its threads' included) */
	struct sysreport sys;
};

#define CHAIN_PROCS 8

/* A chain's states: one process at most runs code at any time, every other is parked in the
 * gate (verified single-threaded) or not yet let go. The legal transitions are a table in
 * chain.c; docs/engine.md draws them. */
enum chain_state {
	CH_BOOTING,  /* a fresh worker: pid, listener, ready frame and first park awaited */
	CH_IDLE,     /* its runner is parked and ready (its holder parked, if any) */
	CH_RUNNING,  /* the runner has the call's code; the deadline runs */
	CH_RESULT,   /* the runner reported a result; it must park (or the deadline ends it) */
	CH_SNAPSHOT, /* committing a runner with threads: it forks a one-thread copy */
	CH_PARKED,   /* only the holder, parked: a session's state between calls */
	CH_FORKING,  /* the holder forks the next runner */
	CH_WARMING,  /* the new runner warms up */
	CH_REAPING,  /* the runner is gone: the holder reaps it */
	CH_DEAD,     /* everything killed: waiting to see every process gone */
	CH_NSTATES
};

/* Why the supervisor ended a call's runner (or a whole chain). */
enum kill_reason {
	KILL_NONE = 0,
	KILL_TIMEOUT,  /* the wall clock */
	KILL_CANCEL,   /* the client cancelled */
	KILL_SHUTDOWN, /* the server stops */
	KILL_PROTOCOL, /* it broke the wire protocol: a frame or park not legal in its state */
	KILL_DONE,     /* its work is over (answered, replaced, rolled back) */
	KILL_ZYGOTE,   /* the zygote that forked it is gone */
	KILL_LOST,     /* the chain's state is gone (its holder died, or misbehaved) */
	KILL_RESOURCE, /* the supervisor ran out of memory or fds serving the call */
	KILL_QUOTA,    /* it wrote more to the workspace than a call may */
	KILL_SIGNALS,  /* it took signals without end (faults under a handler of its own) */
	KILL_FORKS,    /* its code tried to fork without end */
	KILL_CPU,      /* its one-thread copy used the CPU time the call had left */
};

/* The chain's socket: frames in (bounded work per turn), frames out (queued). */
struct channel {
	struct watch w;
	/* the frame being received: its header, then its payload */
	unsigned char hdr[IPC_FRAME_HEADER];
	size_t hdr_len;
	char type;
	char *payload;
	size_t payload_len, payload_got;
	pid_t sender; /* who wrote the bytes of the frame being received */
	/* bytes still to send: tx[tx_off, tx_len) of a buffer of tx_cap bytes, which grows by
	 * doubling and is compacted only when a frame does not fit: each byte is copied a
	 * bounded number of times however many frames wait */
	char *tx;
	size_t tx_len, tx_off, tx_cap;
	/* the workers' end, which we keep too: what a runner left unread there when it ended
	 * (a reply it read half of) is ours to take out before the next call's code, or the
	 * next runner would read the rest as the start of a frame; with it held, our end never
	 * reads the end of the stream: the workers' exits say when they are gone (-1: not kept) */
	int peer;
	int dirty; /* a call ran and did not commit: what it left unread may be there */
};

struct chain {
	TAILQ_ENTRY(chain) link;
	struct engine *e;
	unsigned int id; /* for the log */
	enum chain_state state;
	struct session *session; /* whose state it holds or builds; NULL: pool or one-shot */
	struct proc procs[CHAIN_PROCS];
	struct proc *holder, *runner, *newborn;
	struct channel ch;
	struct watch listener; /* the fork gate of every process of the chain; fd -1 if none */
	int traced;            /* the fresh worker was seized: every process is traced */
	/* spawned with IPC_SPAWN_TRACED: its fresh worker has no parent-death signal, its life is
	 * bound to the supervisor's by EXITKILL alone (it must be traced, or it is killed), and it
	 * outlives the zygote: it may hold a session's state itself */
	int bound;
	/* booting */
	uint32_t req_id;
	int generation;      /* the zygote that forks it */
	uint64_t capture_at; /* where its processes' capture keeps are (salvage.c) */
	int got_listener, got_ready;
	int64_t spawned_ms;
	/* the call */
	struct engine_call *call; /* given to this chain, answered or not yet */
	int dispatched;           /* its code went to the runner: the deadline runs */
	uint32_t seq;             /* the call's sequence on this chain */
	struct run_outcome claim; /* what the runner reported (RESULT) */
	int have_claim;
	/* what the runner printed, read from its memory when it did not report (salvage.c) */
	struct text salvage[IPC_CAPTURE_KEEPS];
	int have_salvage, salvage_cut;
	enum kill_reason kill; /* why the runner was killed */
	int holder_lost;       /* the holder died unasked */
	int runner_gone;       /* the runner's exit was seen: runner_status, runner_last */
	int runner_status;
	struct proc runner_last;
	int newborn_gone; /* the newborn died before it parked */
	int copy_status;  /* CH_SNAPSHOT: how the runner's copy ended (copy_gone) */
	struct proc copy_last;
	int copy_gone;
	int snap_answer;        /* CH_SNAPSHOT: the call is answered once its copy parks */
	int soft_asks;          /* times the soft timer fired for the call */
	unsigned int requests;  /* requests of the call (broker.c) */
	size_t served;          /* bytes of modules read for the call */
	uint64_t ws_copied;     /* bytes of workspace files copied for its "a" and "r+" opens */
	struct ws_copy *copy;   /* a copy under way; its request waits for it (broker.c) */
	unsigned int fds_given; /* workspace fds given to the call */
	unsigned int fds_write; /* of them, to write ("w", "a", "x", "r+"): bounded in all */
	struct ws_file *writes; /* files the call writes, moved into place if it commits */
	size_t n_writes;
	/* files of the call's it removed or replaced while it may hold them open to write: held
	 * (O_PATH) until it ends, their bytes counted in its quota */
	int *held;
	size_t n_held;
	int held_lost;       /* one could not be held: its bytes cannot be counted */
	struct ws_dir *dirs; /* directories the call made, removed again if it does not commit */
	size_t n_dirs;
	struct ws_removal *removals; /* names it removes, gone when it commits */
	size_t n_removals;
	unsigned int write_ids; /* the last ws_file.id given */
	int writes_refused;     /* over the quota, or files left open: none is kept */
	int reap_sent;          /* REAPING: the holder was told to reap */
	struct timer soft, hard, step;
	int64_t step_end;   /* a step's deadline (the step timer also fires to check its CPU) */
	int step_cpu_used;  /* CPU of its finished steps since its last call was dispatched, ms */
	int copy_cpu_max;   /* SNAPSHOT: the CPU (ms) the runner's copy may use, what the call had
	                     * left when the copy was made; -1 none */
	struct timer quota; /* while the call has files to write: their size (broker.c) */
	/* a runner that parked after its result with threads: asked again for its count, since
	 * a thread just joined may still be ending (settle_tries so far) */
	struct timer settle;
	int settle_tries;
	uint64_t ooms_before;
	struct cgroup_worker cg;
	int has_cg;
	int prep_failures;
	int prep_unforked;    /* the last runner that failed to come up was never forked */
	int call_failures;    /* runners for the chain's call that failed to come up */
	unsigned int commits; /* calls whose state it keeps: a session in use again after 2 */
};

TAILQ_HEAD(chain_list, chain);
TAILQ_HEAD(call_list, engine_call);

/* ---- Sessions ----------------------------------------------------------------------- */

struct session {
	TAILQ_ENTRY(session) link; /* in use order: the least recently used first */
	struct engine *e;
	char handle[33];
	char *handle_copy;   /* the next answer's copy of it, made ahead (NULL: made then) */
	struct chain *chain; /* holds its state; NULL: empty (a fresh worker starts it) */
	struct chain *old;   /* during a reset call: the state it replaces until it commits */
	int lost;            /* its state was lost: calls fail until a reset */
	char lost_why[160];
	struct engine_call *active; /* the call given to a chain, or queued for one */
	struct call_list pending;   /* calls after it, in arrival order */
	int64_t last_used;
	struct timer idle;
	/* the images of its last completed call (a copy), for show_figures */
	struct run_image *images;
	size_t n_images, images_bytes;
};

TAILQ_HEAD(session_list, session);

/* ---- The engine ---------------------------------------------------------------------- */

/* The user's workspace (broker.c), when configured: the only files a call can reach. */
struct workspace {
	int fd;      /* O_PATH|O_DIRECTORY, -1: no workspace */
	int lock_fd; /* it again, to read: the lock servers sharing it commit under, or -1 */
	char *path;  /* its absolute path, symbolic links resolved */
	int writable;
	/* its owner (the directory's), with the owner's groups: a supervisor running as root
	 * serves the workspace's requests with the owner's file system identity (as_owner), so
	 * the kernel meets every permission as the owner would (broker.c ws_identity) */
	uid_t owner_uid;
	gid_t owner_gid; /* the owner's own group (the directory's when the owner has no entry) */
	int as_owner;
	gid_t *groups, *root_groups; /* the owner's, and the supervisor's own to go back to */
	int n_groups, n_root_groups;
	/* a directory that is not part of it wherever it appears in it (the zygote's cache), by
	 * identity; and the workspace's own, where looking up for it stops */
	int excluded;
	int ex_fd; /* it, O_PATH, to count its own directories (broker.c ws_excluded_depth) */
	dev_t ex_dev, root_dev;
	ino_t ex_ino, root_ino;
	/* the mount the workspace lies on: a writable one takes changes only there, not on a
	 * mount within it (broker.c ws_dir_changes); mnt_known: told by statx */
	uint64_t mnt_id;
	int mnt_known;
	/* the interpreter's module directories, by identity, when the workspace takes writes: no
	 * call changes a name in one (broker.c ws_dir_in_modules); in_mods: the workspace is one
	 * of them or lies in one */
	struct ws_id {
		dev_t dev;
		ino_t ino;
	} * mods;
	size_t n_mods;
	int in_mods;
	/* directories calls that did not commit made, that waited for other calls' pending
	 * files (broker.c dir_orphans_retry), the deepest first */
	struct ws_dir *orphans;
	size_t n_orphans;
	size_t orphans_next; /* where the next retry starts (dir_orphans_retry) */
	size_t orphans_pass; /* orphans the current pass has still to try */
};

/* A file a call writes: a hidden file beside its target, moved over it on commit. */
/* A large file being copied for a call's request, a piece at a time: the request is asked
 * again when it is done, and takes the copy in place of its own (broker.c fill). */
struct ws_copy {
	struct timer piece;
	int src, dst, dirfd; /* the file copied, the copy, the copy's directory (O_PATH) */
	char tmp[64];        /* the copy's hidden name there */
	dev_t src_dev, dir_dev;
	ino_t src_ino, dir_ino;
	struct timespec src_mtime;
	off_t pos, end; /* copied up to pos, of end */
	int done;
	int taken;           /* the request asked again took it */
	unsigned int serial; /* which copy (a request asked again may start another) */
	uint32_t id;         /* the request */
	uint8_t kind;
	char *payload;
	size_t len;
};

struct ws_file {
	int dirfd;     /* the target's directory, O_PATH */
	char tmp[64];  /* the hidden file's name there */
	char *name;    /* the target's name there */
	char *rel;     /* its path in the workspace, for the answer */
	int exclusive; /* created with "x": never replaces a file */
	/* its hidden file is another name of a file on disk (a rename): written through only
	 * once it is a copy of its own (pending_own_copy) */
	int linked;
	unsigned int id; /* for the removal of a rename's old name (ws_removal.rename) */
	/* it could not take its name on commit nor go back to the one it was renamed from: its
	 * hidden file holds bytes no name holds, and stays */
	int keep;
	/* its hidden file began as a copy of the file on disk ('a', 'r+', chmod, utime): that
	 * file as it was copied, which must still be the one on disk when the call commits */
	int copied;
	/* an fd of its hidden file to write went to the worker, which may write through it
	 * after the file is dropped (broker.c pending_hold) */
	int given;
	char *src_rel; /* where it was copied from (a rename moves the file, not its source) */
	int src_fd;    /* the file copied, held open until the call ends (0: none) */
	dev_t src_dev;
	ino_t src_ino;
	off_t src_size;
	struct timespec src_mtime; /* not ctime: another call's rename links the file (nlink) */
};

/* A directory a call made. It is made at once: it holds nothing of the call's before the call
 * commits (its files are hidden until then). When the call does not commit, it is removed
 * again if it is still the same directory and empty (another call may have used it). */
struct ws_dir {
	char *rel; /* its path in the workspace */
	dev_t dev;
	ino_t ino;
	/* the directory, held open: its inode number is no other directory's while it is kept
	 * (a file system reuses a removed directory's at once); -1 for an orphan kept when the
	 * supervisor had no fd to spare */
	int fd;
	/* Its permission bits as made, and what the call's chmod and utime set (and the times
	 * before the first): when it stays (another call's files are in it), they are put back
	 * unless changed since (broker.c dir_attrs_back). */
	mode_t mode, mode_set;
	struct timespec times_before[2], mtime_set;
	unsigned int chmod_set : 1, times_set : 1;
};

/* A name a call removes: a file (this one, by identity) or an empty directory. Nothing changes
 * on disk before the call commits (other calls see the name as it was); meanwhile the call
 * itself no longer finds it. */
struct ws_removal {
	int dir;
	int dirfd; /* its directory, O_PATH */
	char *name;
	int objfd; /* what it removes, O_PATH: held, so its inode is not another file's meanwhile */
	dev_t dev;
	ino_t ino;
	unsigned int rename; /* the write of a rename it belongs to (ws_file.id), or 0 */
};

/* Where modules are served from (broker.c): the zygote's report, with a handle on each. */
struct module_roots {
	struct ipc_roots roots;
	int stdlib_fd; /* O_PATH, -1 */
	int *fds;      /* one per package, -1 when it could not be opened */
};

struct engine {
	const struct config *cfg;
	const char *zygote_exe;
	/* the supervisor's own sandbox, and the process that starts the zygote for it */
	struct confine_report confined;
	struct starter starter;
	/* the zygote */
	pid_t zpid;
	struct watch zctl;
	int zready;
	int zever; /* a zygote was ready once */
	int generation;
	uint64_t zcapture; /* where its workers' capture keeps are (ipc.h); 0: not told */
	int zfailures;     /* start-ups that failed in a row */
	char zerror[IPC_ZYGOTE_FAIL_TEXT + 320]; /* why the last start-up failed */
	/* which allowed module the last start-up could not import, and why ("" if none) */
	char zimport[IPC_ZYGOTE_FAIL_TEXT + 320];
	int zoom; /* it was stopped because the supervisor ran out of memory */
	struct timer zretry;
	/* calls, chains, sessions */
	struct call_list queue; /* calls waiting for a chain */
	struct chain_list chains;
	struct session_list sessions;
	unsigned int n_sessions;
	size_t images_kept; /* bytes of images the sessions keep (ENGINE_IMAGES_KEPT_MAX) */
	unsigned int next_chain_id;
	uint32_t next_req;
	struct timer kick;    /* schedule soon (not from inside the caller) */
	struct timer respawn; /* schedule when ready workers may be made again */
	struct timer reap;    /* take the statuses a turn left waiting */
	struct timer orphans; /* the rest of a pass over the workspace's orphans (broker.c) */
	char *layers;         /* the first ready worker's sandbox report */
	struct module_roots modules;
	struct workspace ws;
	/* where the zygote may write its libraries' caches (engine_cache_open), or NULL; and an
	 * O_PATH fd of it for the supervisor's Landlock rule, -1 */
	char *cache;
	int cache_fd;
	int cache_base_fd; /* safepy's cache directory (O_PATH), left out of the workspace, -1 */
	int can_trace;     /* -1 unknown */
	int warned_trace;
	int stopping;
	/* the supervisor's own resources */
	int fd_dir;            /* /proc/self/fd, to count what is open; -1 */
	int fds_short;         /* out of fds: said once in the log until they come back */
	int procs_short;       /* processes cannot be created: likewise */
	int64_t spawn_retry;   /* no ready worker is made before this (a fork failed) */
	int64_t spawn_backoff; /* the next wait after a failed fork */
	/* an answer's error type and message when its own could not be allocated: taken by
	 * that answer, made again after it */
	struct text oom_type, oom_message;
};

/* ---- engine.c ---- */

/* Answer a call: its done() runs now; the session's next call is queued. o is consumed
 * (cleared). Detaches the call from its chain. */
void engine_answer(struct engine *e, struct engine_call *c, struct run_outcome *o);
/* Make what answers need ahead of time (the strings of an answer short of memory, each
 * session's copy of its handle); what cannot be made now is tried again later. */
void engine_reserve(struct engine *e);
/* Answer a call with a status and a message of ours. */
void engine_fail(struct engine *e, struct engine_call *c, enum run_status st, const char *type,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Run the scheduler on the next loop turn. */
void engine_kick(struct engine *e);
/* A call given to a chain that died before running it: back to the head of the queue. */
void engine_requeue(struct engine *e, struct engine_call *c);
/* The wall-clock limit of a call, in seconds. */
double engine_call_timeout(const struct engine *e, const struct engine_call *c);
/* The chain a process belongs to (any role), and its record; NULL if none. */
struct chain *engine_chain_of(struct engine *e, pid_t pid, struct proc **p);
/* File descriptors the supervisor may still keep: its RLIMIT_NOFILE, less those open, less
 * those booting chains are about to receive, less ENGINE_FD_RESERVE. Negative when over;
 * INT_MAX when it cannot tell. */
int engine_fd_room(struct engine *e);
/* Is the supervisor out of fds right now (the next one it opens would fail)? */
int engine_fds_exhausted(struct engine *e);
/* Fds it holds per chain: its channel, its gate listener, its cgroup's directory when each
 * chain has one; and the zygote's end of the channel while it is made. */
int engine_fds_per_chain(const struct engine *e);
/* The supervisor ran short of fds (short_now 1), or has them again (0): logged once each
 * way, not per call. */
void engine_fds_short(struct engine *e, int short_now);
/* A fork for a worker failed with err (short_now 1), or one succeeded (0): logged once
 * each way; ready workers are not made again for a while after a failure. */
void engine_procs_short(struct engine *e, int short_now, int err);
/* The message of a call that could not start because the supervisor is out of fds
 * (malloc'd, or NULL). */
char *engine_fds_message(struct engine *e);

/* ---- chain.c ---- */

/* Ask the zygote for a fresh worker: a new chain in CH_BOOTING in *out; for_call: a call
 * waits for it (it parks without a warm-up). Returns 0, -EAGAIN (the zygote is not ready),
 * -EMFILE/-ENFILE (the supervisor has not the fds a chain needs), -ENOMEM, or another -errno. */
int chain_spawn(struct engine *e, int for_call, struct chain **out);
/* The zygote forked the chain's worker. */
void chain_on_pid(struct chain *c, pid_t pid);
/* The zygote that forked the chain's fresh worker is gone: that worker dies with it. */
void chain_on_zygote_lost(struct chain *c);
/* The zygote could not fork it (errno). The chain is dead. */
void chain_on_spawn_error(struct chain *c, int err);
/* Bytes came from sender with their fds cut off (MSG_CTRUNC): more fds than any frame
 * carries (a violation), or the supervisor had no room for them. */
void chain_on_fds_cut(struct chain *c, pid_t sender);
/* A frame from sender could not be read: the supervisor had no memory for it. Its writer's
 * work ends (a call's runner: the call says why), not as a violation. */
void chain_on_nomem(struct chain *c, pid_t sender);
/* One whole frame from the channel, written by sender (kernel-verified). payload is
 * borrowed; fds (already taken from the socket) are the chain's to close. */
void chain_on_frame(struct chain *c, pid_t sender, char type, const char *payload, size_t len,
                    const int *fds, size_t n_fds);
/* A fork attempt reached the gate: from thread tid of the chain, notification id. Answers it
 * (now or later). */
void chain_on_park(struct chain *c, pid_t tid, uint64_t id);
/* A process forked by a process of the chain appeared (stopped at its birth). Returns 1 if
 * the chain expected it (it is recorded), 0 if not (the caller kills it). */
int chain_on_birth(struct chain *c, pid_t pid, pid_t parent);
/* A process of the chain is gone; status is its wait status. */
void chain_on_exit(struct chain *c, struct proc *p, int status);
/* The channel closed: every process of the chain closed its end. */
void chain_on_hangup(struct chain *c);
/* Give the chain a call (engine scheduling): it runs as soon as the chain is ready. */
void chain_give(struct chain *c, struct engine_call *call);
/* Its call was cancelled: if it runs, kill and roll back (answered when the runner is
 * gone); if not, answer it cancelled now and keep the chain. */
void chain_cancel(struct chain *c);
/* Prepare a runner for a parked session's next call, if none is ready. */
void chain_prepare(struct chain *c);
/* Kill the runner of the chain's call; its answer says why (the holder stays). */
void chain_kill_runner(struct chain *c, enum kill_reason why);
/* The runner will not report: keep what it printed, read from the memory of its thread tid
 * (once a call; the call's verdict carries it). */
void chain_salvage(struct chain *c, pid_t tid);
/* Process p of c took more than ENGINE_SIGNALS_MAX signals: it is ended (a runner's call with
 * KILL_SIGNALS). */
void chain_signal_storm(struct chain *c, struct proc *p);
/* Kill every process of the chain; it is freed once all are gone. Its call, if any, is
 * answered per why. */
void chain_kill(struct chain *c, enum kill_reason why);
/* Free a chain (the engine does, at the start of a loop turn, once it is CH_DEAD and every
 * process is gone; and at shutdown). */
void chain_free(struct chain *c);
/* Is the chain dead with every process gone? */
int chain_is_finished(const struct chain *c);
/* Is the chain free for a call of an empty session or a one-shot call? */
int chain_is_spare(const struct chain *c);
/* Does the chain hold or build a call right now (counts towards max_workers)? */
int chain_is_busy(const struct chain *c);
/* Name of a state, for logs and docs. */
const char *chain_state_name(enum chain_state s);

/* ---- channel.c ---- */

/* Set up the channel on our end fd (non-blocking, SO_PASSCRED, watched); peer is the
 * workers' end, which the channel owns from here on. */
int channel_open(struct channel *ch, int fd, int peer, watch_fn fn, void *data);
void channel_close(struct channel *ch);
/* Queue a frame to send (prefix then body) and send what the socket takes. 0 or -ENOMEM. */
int channel_send(struct channel *ch, char type, const void *prefix, size_t plen, const void *body,
                 size_t blen);
/* The same with fd attached to the frame (borrowed: the kernel takes its own reference).
 * The frame must go out at once with its fd: -EAGAIN when earlier bytes are still queued. */
int channel_send_fd(struct channel *ch, char type, const void *prefix, size_t plen,
                    const void *body, size_t blen, int fd);
/* Send what is queued (on EPOLLOUT). */
void channel_flush(struct channel *ch);
/* Bytes we sent (or still hold to send) that the other end has not read: a worker that reads
 * every reply it asks for has none when it parks. Never 0 when the kernel cannot say. */
size_t channel_unread(const struct channel *ch);
/* Before a call's code: nothing of the workers' side may read the channel now (every
 * process of the chain is parked); drop what we still hold to send and what is unread on
 * their end (fds included), so the code is the first byte the runner reads. Returns the
 * bytes dropped. */
size_t channel_discard(struct channel *ch);
/* A process ended, or broke the protocol mid-frame: the frame it was writing will never end
 * (its buffer is freed now). */
void channel_forget(struct channel *ch, pid_t pid);
/* Is a frame begun and not ended by pid (0: by anyone)? What its writer said it would send is
 * held meanwhile. A worker writes every frame whole before it parks. */
int channel_partial(const struct channel *ch, pid_t pid);
/* Read at most budget bytes and hand each whole frame to the chain (which may kill its
 * writer but is never freed meanwhile). Returns 0 when the socket has nothing more, 1 when
 * the budget ran out first, -EPIPE when the channel closed (every writer is gone). */
int channel_read(struct channel *ch, struct chain *c, size_t budget);

/* ---- session.c ---- */

/* The session was just used: last in the use order, its idle timer restarted. */
void session_touch(struct session *s);
/* The session's chain committed a call: c holds its state now (the old state, if any, is
 * killed by the caller). */
void session_committed(struct session *s, struct chain *c);
/* Keep a copy of the images of o, a completed call of s, in place of the last ones (none when
 * it has none); others' go, least recently used first, beyond ENGINE_IMAGES_KEPT_MAX. A copy
 * that cannot be made keeps none. */
void session_keep_images(struct session *s, const struct run_outcome *o);
/* A call of the session ended without changing its state (rolled back): a reset call gives
 * the old state back. */
void session_rolled_back(struct session *s, struct chain *c);
/* The session's state is gone (its holder died, or misbehaved): later calls fail with
 * SessionError until a reset. */
void session_lose(struct session *s, struct chain *c, const char *why);
/* The chain that held or built the session's state is going away: forget it. */
void session_drop_chain(struct session *s, struct chain *c);
/* Evict idle sessions over the limit, least recently used first, to make room for room
 * more. */
void sessions_evict(struct engine *e, unsigned int room);
/* Free every session (shutdown). */
void sessions_free_all(struct engine *e);

/* ---- zygote_ctl.c ---- */

/* Start the zygote (fork, exec with an empty environment, send its configuration). */
int zygote_start(struct engine *e);
/* Ask the zygote for a worker whose channel end is fd (sent, then closed here); flags are
 * IPC_SPAWN_*. */
int zygote_request(struct engine *e, uint32_t req_id, uint32_t flags, int fd);
/* Stop it (close the socket, SIGKILL). */
void zygote_stop(struct engine *e);
/* Is the zygote of this generation gone (exited, reaped or not)? */
int zygote_gone(struct engine *e, int generation);
/* The zygote of this generation forked no worker in time: kill it, so that it restarts. */
void zygote_wedged(struct engine *e, int generation);
/* Is it ready to spawn? */
int zygote_ready(const struct engine *e);
/* The zygote exited (reaped by engine_sigchld): restart it, with backoff if it failed to
 * start. */
void zygote_exited(struct engine *e, int status);

/* ---- gate.c ---- */

/* Watch the chain's listener fd (taken). */
int gate_open(struct chain *c, int fd);
void gate_close(struct chain *c);
/* Answer a held park: let the fork happen. */
int gate_continue(struct chain *c, struct proc *p);
/* Answer a held park with a command word. */
int gate_command(struct chain *c, struct proc *p, enum ipc_park_cmd cmd, uint32_t arg);
/* Refuse a fork attempt (EPERM), e.g. from user code. */
void gate_refuse(struct chain *c, uint64_t id);

/* ---- broker.c ---- */

/* A REQUEST frame's payload from the chain's runner: answer it (a REPLY frame). Returns 0,
 * or -EINVAL when it is not well formed (a protocol violation). */
int broker_request(struct chain *c, const char *payload, size_t len);
/* The zygote's "D" message: where modules are. Returns 0 or -errno. */
int broker_roots_set(struct module_roots *m, const char *msg, size_t len);
void broker_roots_clear(struct module_roots *m);
/* Open the workspace directory (cfg's). Returns 0 (also without one) or -errno. */
int broker_workspace_open(struct workspace *ws, const char *dir, int writable);
void broker_workspace_close(struct workspace *ws);
/* The next slice of a pass over the directories that wait for other calls (a timer's). */
void broker_orphans_more(struct timer *t);
/* Every orphan that can go goes, at once (the supervisor stops). */
void broker_orphans_settle(struct engine *e);
/* Leave the directory dirfd out of the workspace (the zygote's cache: what a call writes there
 * would reach every later zygote): requests that resolve to it or beneath it, by whatever path
 * or mount, are refused. Returns 0 or -errno. */
int broker_workspace_exclude(struct workspace *ws, int dirfd);
int broker_workspace_modules(struct workspace *ws, const struct module_roots *m);
int broker_workspace_system(const struct workspace *ws, const char *zygote_exe, const char **which);
/* The call's writes: move them into place (commit; the written files are added to o), or
 * remove them. Either way the chain's list is emptied. */
void broker_writes_commit(struct chain *c, struct run_outcome *o);
void broker_writes_drop(struct chain *c);
/* Are the call's writes within the quota? 0 or -EDQUOT. */
int broker_writes_check(const struct chain *c);
/* The quota timer fired: stop a runner whose writes are over the quota, else check again. */
void broker_writes_watch(struct chain *c);

/* ---- trace.c ---- */

/* Attach to a fresh worker (PTRACE_SEIZE with exit, fork and clone events, EXITKILL): every
 * process and thread it makes is traced from its birth. Returns 0 or -errno. */
int trace_seize(pid_t pid);
/* A stop of a traced task (from engine_sigchld): handle it and let the task go on. */
void trace_stop(struct engine *e, pid_t pid, int status);
/* What /proc says of a task: its process, its parent, its threads. Returns 0 or -errno. */
int proc_status(pid_t tid, pid_t *tgid, pid_t *ppid, int *threads);
/* The threads of a process (by its leader's pid), from the link count of /proc/PID/task.
 * Returns the count or -errno. */
int proc_threads(pid_t pid);
/* utime + stime of a process (all its threads, live and ended), in ms; -1 when unknown. */
int proc_cpu_ms(pid_t pid);
/* SIGKILL a process (only ever one the engine knows alive: the tracer or the subreaper sees
 * its exit before its pid can be reused). */
void proc_kill(struct proc *p);
/* Make the OOM killer take this process (a call's runner) before the others. */
void proc_prefer_oom(pid_t pid);
/* How many fds above n the process has open, below n other than /dev/null, and at n other than
 * the socket chan is our copy of (its channel; logged) (from /proc), or -errno. */
int proc_fds_beyond(pid_t pid, int n, int chan);
/* Keep one fd (a file of its own, /dev/null) for the /proc reads above: when the supervisor
 * is out of fds (its limit, or the system's), a read closes it to get one, then takes it
 * again. 0 or -errno. */
int proc_spare_open(void);
void proc_spare_close(void);

/* ---- salvage.c ---- */

/* What the runner tid (a thread of it whose memory is still there) printed: its keeps at at,
 * each checked against max_output's sizes, into out (stdout, stderr, the log; replacing what
 * they held), *truncated set when a stream's middle was cut. Returns 0, or -ENOENT (no
 * address), -EFAULT (unreadable), -EPROTO (keeps of another size), -ENOMEM; out is empty on
 * failure. */
int salvage_read(pid_t tid, uint64_t at, size_t max_output, struct text out[IPC_CAPTURE_KEEPS],
                 int *truncated);

/* ---- verdict.c: how a call ended, from what the supervisor knows of its process ---- */

struct verdict_in {
	enum kill_reason kill; /* why the supervisor ended the runner, KILL_NONE if it did not */
	int have_status;       /* status is the runner's wait status */
	int status;
	const struct sysreport *sys; /* the killed syscall, or NULL */
	pid_t pid;                   /* the runner */
	int ran;                     /* it had the call's code: it set its sandbox up before */
	int cpu_ms;                  /* its CPU time at exit, -1 unknown */
	uint64_t ooms;               /* OOM kills in its cgroup during the call */
	double timeout_s;            /* the call's wall-clock limit */
	unsigned int cpu_s;          /* the CPU limit */
	uint64_t memory;             /* the memory limit */
};

struct verdict {
	enum run_status status;
	int cpu; /* stopped at the CPU limit */
	const char *type;
	char message[512];
};

/* Pure: the status, error type and message of a call whose runner ended without a result
 * the supervisor could take. */
void verdict_decide(const struct verdict_in *in, struct verdict *out);

#endif
