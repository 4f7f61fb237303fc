/* ipc.h - the wire between the supervisor and its Python processes: frames on a worker's
 * channel, the words the fork gate answers a parked process with, the zygote's control
 * messages and configuration, worker exit codes and their names, passing fds, and the codec
 * of a call's outcome. One codec both sides use; every integer on the wire is little-endian.
 * Decoders treat their input as hostile. Functions return 0 or a negative errno unless their
 * comment says otherwise; out-params are written only on success. */
#ifndef SAFEPY_IPC_H
#define SAFEPY_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <json-c/json.h>

#include "protocol.h"

/* ---- Integers ------------------------------------------------------------------------- */

void ipc_put_u32(unsigned char *p, uint32_t v);
uint32_t ipc_get_u32(const unsigned char *p);
void ipc_put_u64(unsigned char *p, uint64_t v);
uint64_t ipc_get_u64(const unsigned char *p);

/* ---- Frames on a worker's channel ------------------------------------------------------
 * A frame is a header of IPC_FRAME_HEADER bytes, u32 payload length then one type byte,
 * followed by the payload. The channel is a stream socket every process of one chain (a
 * worker and the processes forked from it) shares; the supervisor tells who wrote a frame by
 * the kernel's SCM_CREDENTIALS, never by what the frame says. */

#define IPC_FRAME_HEADER       5
/* Largest payload either side accepts. */
#define IPC_FRAME_MAX          (8u << 20)
/* Values (array elements, object members) an outcome may hold: a result of at most 64 KiB of
 * JSON has fewer than 32 Ki of them (ipc_outcome_decode). */
#define IPC_OUTCOME_VALUES_MAX (1u << 16)

enum ipc_frame_type {
	/* worker -> supervisor, once, before READY: empty; the fork gate's listener rides on
	 * it as SCM_RIGHTS */
	IPC_FRAME_LISTENER = 'L',
	/* worker -> supervisor, once: the sandbox layer report (JSON) */
	IPC_FRAME_READY = 'R',
	/* supervisor -> worker: u32 call sequence, then the code (UTF-8, no NUL) */
	IPC_FRAME_CODE = 'C',
	/* worker -> supervisor: u32 call sequence, then the outcome (ipc_outcome_encode) */
	IPC_FRAME_RESULT = 'J',
	/* runner -> supervisor, while it runs a call: u32 request id, u8 kind, the request */
	IPC_FRAME_REQUEST = 'Q',
	/* supervisor -> runner: u32 request id, i32 status (0 or -errno), the reply; an fd may
	 * ride on it as SCM_RIGHTS */
	IPC_FRAME_REPLY = 'A',
};

/* Bytes of a CODE or RESULT payload before its body: the call's sequence number. */
#define IPC_SEQ_BYTES 4

/* What a runner may ask the supervisor for while it runs a call. */
enum ipc_request_kind {
	/* the source of a module: the request is its dotted name; the reply is its file's path
	 * (for __file__ and tracebacks), a NUL, then its text (.py) */
	IPC_REQ_MODULE = 1,
	/* a file of the workspace: u32 mode (enum ipc_open_mode), then its path; the reply is
	 * the file's struct ipc_stat, with its fd attached */
	IPC_REQ_OPEN = 2,
	/* what a path of the workspace is: u32 flags (IPC_STAT_NOFOLLOW), then the path; the reply
	 * is a struct ipc_stat */
	IPC_REQ_STAT = 3,
	/* the entries of a directory of the workspace: the place to go on from (IPC_LIST_PLACE
	 * bytes: u32 0, u32 0 for the directory or 1 + an index among the files the call made
	 * there, u64 the directory's offset; all 0: the start), then the path; the reply is u32 1
	 * if entries are left, and the place to ask from next (u32, u64), then, for each entry,
	 * one type byte (IPC_ENTRY_*), its name and a NUL, IPC_WS_LIST_CHUNK bytes at most */
	IPC_REQ_LIST = 4,
	/* a module, compiled if it can be: the request is its dotted name; the reply is its
	 * file's path, a NUL, then IPC_MODULE_CODE and the marshalled code of its cached bytecode
	 * (the .pyc's body after its header) when that is valid for the source (magic number,
	 * timestamp flags, the source's mtime and size), else IPC_MODULE_SOURCE and its text */
	IPC_REQ_MODULE_CODE = 5,
	/* a directory of the workspace made: u32 mode, then its path; the reply is empty */
	IPC_REQ_MKDIR = 6,
	/* a file of the workspace removed (u32 0), or an empty directory (u32 IPC_REMOVE_DIR):
	 * then its path; the reply is empty */
	IPC_REQ_REMOVE = 7,
	/* a file of the workspace renamed, over a file of the new name if there is one: its path,
	 * a NUL, then the new path; the reply is empty (a rename is a file written under the new
	 * name and the old name removed, both when the call commits) */
	IPC_REQ_RENAME = 8,
	/* the permission bits of a file of the workspace (u32 mode, at most 0777), then its
	 * path; the reply is empty. A file the call does not write yet becomes one (a copy of
	 * it, as for IPC_OPEN_UPDATE) whose bits change; a directory only if the call made it */
	IPC_REQ_CHMOD = 9,
	/* the access and modification times of the same (u32 0, then IPC_UTIME_BYTES: the
	 * access time's seconds (i64) and nanoseconds (u32, or IPC_UTIME_NOW), then the
	 * modification time's), then its path; the reply is empty */
	IPC_REQ_UTIME = 10,
};

#define IPC_UTIME_BYTES 24
#define IPC_UTIME_NOW   0x3fffffffu /* a time of "now": the kernel's UTIME_NOW */

#define IPC_REMOVE_DIR 0x1u

/* The byte after the path's NUL in an IPC_REQ_MODULE_CODE reply. */
#define IPC_MODULE_CODE   'c'
#define IPC_MODULE_SOURCE 's'
/* Bytes of a .pyc's header: magic, flags, source mtime, source size (u32 LE each). */
#define IPC_PYC_HEADER    16

#define IPC_REQUEST_HEADER    5 /* u32 id, u8 kind */
/* Requests one call may make, and the bytes of modules and listings served to it in all. */
#define IPC_REQUESTS_PER_CALL 20000
#define IPC_SERVED_PER_CALL   (256u << 20)
#define IPC_REPLY_HEADER      8 /* u32 id, i32 status */

/* How a workspace file is opened (the first u32 of an OPEN request). Writing goes to a hidden
 * file beside the target, moved over it when the call commits. */
enum ipc_open_mode {
	IPC_OPEN_READ = 0,   /* an existing file, read only */
	IPC_OPEN_WRITE = 1,  /* created or emptied ("w") */
	IPC_OPEN_APPEND = 2, /* created or appended to ("a") */
	IPC_OPEN_CREATE = 3, /* created, and it must not exist ("x") */
	IPC_OPEN_UPDATE = 4, /* an existing file, read and written ("r+") */
};

#define IPC_STAT_NOFOLLOW 0x1u /* lstat: a symbolic link is described, not followed */

/* What one call may do with the workspace. The supervisor's broker enforces these; the worker
 * names them in its errors. */
#define IPC_WS_READ_MAX          (1ull << 30)   /* bytes of the largest file opened to read */
#define IPC_WS_FILES_PER_CALL    100            /* files written */
#define IPC_WS_DIRS_PER_CALL     256            /* directories made */
#define IPC_WS_REMOVALS_PER_CALL 256            /* files and directories removed */
#define IPC_WS_BYTES_PER_CALL    (256ull << 20) /* bytes of the files written, in all */
#define IPC_WS_FDS_PER_CALL      1000           /* files opened to write, in all */
#define IPC_WS_LIST_MAX          100000         /* entries of one directory listed */
/* bytes of entries in one LIST reply: a listing of a large directory is served in turns of
 * the supervisor's loop, each short */
#define IPC_WS_LIST_CHUNK        (128u << 10)
#define IPC_LIST_PLACE           16 /* a LIST place: u32 (more, or 0), u32, u64 */
/* directories a path names beneath the workspace: each costs the supervisor a walk on every
 * request (the left-out directory is looked for above it) */
#define IPC_WS_DEPTH_MAX         64

/* A path's kind, as a LIST reply's type byte and in struct ipc_stat. */
#define IPC_ENTRY_FILE  'f'
#define IPC_ENTRY_DIR   'd'
#define IPC_ENTRY_LINK  'l'
#define IPC_ENTRY_OTHER 'o'

/* What a STAT or OPEN reply says of a file: fixed little-endian fields. */
struct ipc_stat {
	uint32_t mode; /* st_mode */
	uint32_t nlink;
	uint64_t size;
	int64_t atime_ns, mtime_ns, ctime_ns;
	uint64_t ino, dev;
};
#define IPC_STAT_BYTES 56

void ipc_stat_put(unsigned char out[IPC_STAT_BYTES], const struct ipc_stat *st);
/* Returns 0, or -EINVAL when len is not IPC_STAT_BYTES. */
int ipc_stat_get(const unsigned char *in, size_t len, struct ipc_stat *st);

void ipc_frame_header_put(unsigned char h[IPC_FRAME_HEADER], char type, uint32_t payload_len);
/* Read a header. Returns 0, or -EMSGSIZE when the payload would exceed IPC_FRAME_MAX. */
int ipc_frame_header_get(const unsigned char h[IPC_FRAME_HEADER], char *type,
                         uint32_t *payload_len);

/* Blocking frame I/O for a worker (read(2) and write(2) only: it runs under seccomp).
 * Write one frame whose payload is prefix then body (either may be empty). */
int ipc_frame_write(int fd, char type, const void *prefix, size_t plen, const void *body,
                    size_t blen);
/* Read one frame of at most max payload bytes. *payload is malloc'd and NUL-terminated.
 * Returns 0, -EPIPE at EOF, -EMSGSIZE, -ENOMEM or another -errno. */
int ipc_frame_read(int fd, char *type, char **payload, size_t *len, size_t max);
/* The same with recvmsg for the header: an fd that came with the frame goes to *passed (-1
 * when none; O_CLOEXEC; more than one is an error, -EPROTO, and all are closed). */
int ipc_frame_read_fd(int fd, char *type, char **payload, size_t *len, size_t max, int *passed);

/* ---- The fork gate's answers -----------------------------------------------------------
 * A worker process that waits for the supervisor "parks": it calls fork, which the gate turns
 * into a seccomp user notification and holds. The supervisor answers with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE (the fork happens) or by making the call return a word:
 * a value no pid can have (pids stay below 1 << 22), naming a command and a 24-bit argument. */

#define IPC_PARK_WORD     0x40000000u
#define IPC_PARK_ARG_MASK 0x00ffffffu

enum ipc_park_cmd {
	IPC_PARK_RUN = 1,  /* read frames up to the CODE frame of sequence arg, run it, report */
	IPC_PARK_WARM = 2, /* fault in what a call touches, then park again */
	IPC_PARK_REAP = 3, /* reap every finished child, then park again */
};

/* The word for a command (a positive int). */
uint32_t ipc_park_word(enum ipc_park_cmd cmd, uint32_t arg);
/* Is the value a park call returned a command word? Returns 1 with *cmd and *arg, else 0. */
int ipc_park_decode(long v, enum ipc_park_cmd *cmd, uint32_t *arg);

/* ---- Worker exit codes ------------------------------------------------------------------
 * From fork() until the code runs a worker fails closed: a setup step that fails ends it
 * with one of these. The supervisor tells a setup failure from a crash (a signal) and from a
 * normal end. */
#define WORKER_EXIT_OK        0
#define WORKER_EXIT_FDS       90 /* could not arrange the fds */
#define WORKER_EXIT_SETSID    91
#define WORKER_EXIT_PDEATHSIG 92 /* prctl failed, or the parent was already gone */
#define WORKER_EXIT_RLIMIT    93
#define WORKER_EXIT_SETUID    94 /* running as root: could not switch to the sandbox user */
#define WORKER_EXIT_NAMESPACE 95 /* unshare succeeded partially or failed unexpectedly */
#define WORKER_EXIT_CAPS      96
#define WORKER_EXIT_NNP       97
#define WORKER_EXIT_LANDLOCK  98 /* Landlock is available but could not be applied */
#define WORKER_EXIT_DUMPABLE  99
#define WORKER_EXIT_SECCOMP   100
#define WORKER_EXIT_CHANNEL   101 /* the channel broke or carried a malformed frame */
#define WORKER_EXIT_INTERP    102 /* the interpreter could not produce a result frame */
/* the fork gate could not be loaded, its listener sent, or it answered a park with something
 * unknown */
#define WORKER_EXIT_GATE      103
/* the signal mask inherited from the zygote could not be cleared */
#define WORKER_EXIT_SIGMASK   104
/* the supervisor refused its park: it had not taken the worker's result (the worker broke
 * the protocol) */
#define WORKER_EXIT_REFUSED   105
/* a class CPython had made or changed could not be guarded (memory ran out as the sandbox
 * guarded it): the process ended rather than run the code on with the class unguarded */
#define WORKER_EXIT_GUARD     106
/* a dict held a key of another kind than its table's entries (the code changed the dict under
 * its own insert): the process ended before anything read the table */
#define WORKER_EXIT_DICT      107
/* memory ran out as a finalizer or a free was put off: the process ended rather than run it
 * inside the code that dropped its object */
#define WORKER_EXIT_DEFER     108

/* Describe a worker exit code, e.g. "seccomp could not be loaded". NULL if not ours. */
const char *ipc_worker_exit_reason(int code);

/* Exit codes of safepy-zygote when it cannot start. */
#define ZYGOTE_EXIT_SETUP  2 /* prctl, chdir, signal handling or the control socket failed */
#define ZYGOTE_EXIT_PYTHON 3 /* CPython or an allowed module could not be initialised */
#define ZYGOTE_EXIT_POLICY 4 /* the seccomp filters could not be built */
#define ZYGOTE_EXIT_CONFIG 5 /* the configuration message was missing or malformed */

/* Describe a zygote exit code. NULL if not ours. */
const char *ipc_zygote_exit_reason(int code);

/* ---- The zygote's control socket (SOCK_SEQPACKET) ----------------------------------------
 *   config         supervisor -> zygote, first and once: "K" then the JSON configuration
 *   spawn request  supervisor -> zygote: "S" u32 request_id, u32 flags (IPC_SPAWN_*), with
 *                  the worker's channel end attached as SCM_RIGHTS
 *   spawn reply    zygote -> supervisor: "P" u32 request_id, u32 pid   (worker forked)
 *                                        "E" u32 request_id, u32 errno (fork failed)
 *   ready          zygote -> supervisor: "Z" once, after start-up (interpreter ready): u32
 *                  the low and u32 the high half of where its capture's keeps are (below)
 *   module roots   zygote -> supervisor: "D" then JSON, once, before "Z": where the modules
 *                  its workers may import later are ({"stdlib": dir, "packages": {name: dir}},
 *                  and optionally "pyc": {"tag": cache tag, "magic": 8 hex digits})
 *   exit           zygote -> supervisor: "X" u32 pid, u32 wait status (a worker was reaped)
 *   import failed  zygote -> supervisor: "F" u32 index into the configuration's imports, then
 *                  why that module cannot be imported (UTF-8 text, at most
 *                  IPC_ZYGOTE_FAIL_TEXT bytes), once, just before it exits at start-up */
#define IPC_ZYGOTE_CONFIG    'K'
#define IPC_ZYGOTE_SPAWN     'S'
#define IPC_ZYGOTE_PID       'P'
#define IPC_ZYGOTE_ERR       'E'
#define IPC_ZYGOTE_READY     'Z'
#define IPC_ZYGOTE_EXIT      'X'
#define IPC_ZYGOTE_ROOTS     'D'
#define IPC_ZYGOTE_FAIL      'F'
#define IPC_ZYGOTE_MSG       9 /* bytes of every message but the config, the roots and a failure */
/* Spawn flags. TRACED: the supervisor traces its workers (it seized one already), so the
 * worker's life is bound to the supervisor's by ptrace's EXITKILL once it is seized, and it
 * takes no parent-death signal: it may outlive the zygote and hold a session's state
 * itself. */
#define IPC_SPAWN_TRACED     1u
/* COLD: a call waits for this worker: it parks without warming up (what a warm-up touches,
 * the call touches, and the call would wait for both). */
#define IPC_SPAWN_COLD       2u
#define IPC_SPAWN_FLAGS      (IPC_SPAWN_TRACED | IPC_SPAWN_COLD)
/* Largest configuration message. */
#define IPC_CONFIG_MAX       (64u << 10)
/* Longest text of an import-failed message, and the largest such message. */
#define IPC_ZYGOTE_FAIL_TEXT 400
#define IPC_ZYGOTE_FAIL_MAX  (5 + IPC_ZYGOTE_FAIL_TEXT)

/* A fixed-size control message: type, two u32. */
void ipc_zygote_msg_put(unsigned char m[IPC_ZYGOTE_MSG], char type, uint32_t a, uint32_t b);
/* Returns 0 with the fields, or -EINVAL when len is not IPC_ZYGOTE_MSG. */
int ipc_zygote_msg_get(const unsigned char *m, size_t len, char *type, uint32_t *a, uint32_t *b);

/* An import-failed message into m (at least IPC_ZYGOTE_FAIL_MAX bytes): index, then why[0..n)
 * cut to IPC_ZYGOTE_FAIL_TEXT bytes on a character boundary. Returns its length. */
size_t ipc_zygote_fail_put(unsigned char *m, uint32_t index, const char *why, size_t n);
/* Read an import-failed message (hostile: the zygote is not trusted to name anything). Returns
 * 0 with *index and the text in why (len bytes at least 1, NUL-terminated; every byte that is
 * not printable UTF-8 becomes '?'), or -EINVAL when it is not one. */
int ipc_zygote_fail_get(const unsigned char *m, size_t n, uint32_t *index, char *why, size_t len);

/* What the zygote and its workers are configured with: the supervisor's options, sent as the
 * zygote's first control message. Caller-owned: ipc_config_clear. */
struct ipc_config {
	uint64_t memory_bytes;      /* RLIMIT_AS of a worker */
	uint32_t cpu_s;             /* RLIMIT_CPU soft; the hard limit is one second more */
	uint32_t uid, gid;          /* when started as root: the sandbox user */
	int try_namespaces;         /* unshare user+net+ipc when the kernel allows */
	int try_landlock;           /* Landlock with no rules when the kernel has it */
	uint64_t max_output;        /* bytes kept per captured stream */
	uint64_t max_result;        /* bytes of result_repr and the JSON result */
	int unsafe_no_python_layer; /* test-only */
	int tasks_cgroup;           /* each chain has a cgroup whose pids.max bounds its tasks */
	char **imports;             /* owned: allowed modules, sorted */
	size_t n_imports;
	char *workspace;     /* owned: the workspace's absolute path (symbolic links resolved), or
	                      * NULL without one ("" on the wire) */
	int workspace_write; /* its files may be written */
	/* owned: a directory the zygote may write its libraries' caches in (matplotlib's font
	 * list), absolute; NULL without one ("" on the wire) */
	char *cache;
};

/* The configuration as "K" + JSON. Returns malloc'd bytes and their length, or NULL. */
char *ipc_config_encode(const struct ipc_config *c, size_t *len);
/* Parse a "K" message. Returns 0, -EINVAL or -ENOMEM; *c is written only on success. */
int ipc_config_decode(const char *buf, size_t len, struct ipc_config *c);
void ipc_config_clear(struct ipc_config *c);

/* Where the modules a worker may import after the zygote's start live: the standard library's
 * directory, and the directory of each allowed package. The zygote (which never runs user
 * code) reports them; the supervisor serves module sources only from beneath them. Caller-owned:
 * ipc_roots_clear. */
struct ipc_roots {
	char *stdlib; /* owned, absolute */
	char **names; /* owned: top-level package names */
	char **dirs;  /* owned: their directories, absolute */
	size_t n;
	/* owned, or NULL: the interpreter's cache tag ("cpython-311"), which names its cached
	 * bytecode in __pycache__; with it, the magic number that starts those files */
	char *cache_tag;
	unsigned char magic[4];
};

/* The roots as "D" + JSON. Returns malloc'd bytes and their length, or NULL. */
char *ipc_roots_encode(const struct ipc_roots *r, size_t *len);
/* Parse a "D" message: absolute paths without NUL or "..", names that are identifiers, a cache
 * tag of [a-z0-9-] (1 to 32) with 4 bytes of magic. Returns 0, -EINVAL or -ENOMEM; *r is
 * written only on success. */
int ipc_roots_decode(const char *buf, size_t len, struct ipc_roots *r);
void ipc_roots_clear(struct ipc_roots *r);
/* Is s[0..n) a dotted module name of identifiers ("a.b_c.d"), at most 255 bytes? */
int ipc_module_name_valid(const char *s, size_t n);

/* ---- Passing fds and knowing the sender -------------------------------------------------- */

/* Send buf with fd attached (SCM_RIGHTS) in one sendmsg. Returns 0, -EPIPE for a short send,
 * or -errno. */
int ipc_send_fd(int sock, const void *buf, size_t len, int fd);
/* One sendmsg of n segments (flags: MSG_DONTWAIT, ...; MSG_NOSIGNAL is added), with fd
 * attached when it is not -1. On a stream socket the fd goes with the first byte sent.
 * Returns the bytes sent or -errno (-EAGAIN with MSG_DONTWAIT: nothing sent, no fd passed). */
ssize_t ipc_sendv_fd(int sock, const struct iovec *iov, size_t n, int fd, int flags);

/* What one ipc_recv call received. */
struct ipc_recv_info {
	pid_t sender; /* SCM_CREDENTIALS pid (the socket has SO_PASSCRED), 0 when absent */
	int fds[4];   /* fds that came attached, O_CLOEXEC; the caller owns them */
	size_t n_fds;
	int truncated; /* more fds or control data than fitted: they were closed or lost */
};

/* recvmsg with MSG_CMSG_CLOEXEC and the given flags. Returns bytes (0 at EOF) or -errno. On a
 * unix stream socket with SO_PASSCRED, one call never returns bytes of two writers. */
ssize_t ipc_recv(int sock, void *buf, size_t len, int flags, struct ipc_recv_info *info);

/* ---- What a runner printed ---------------------------------------------------------------
 * The worker keeps each of its streams (stdout, stderr, and the two interleaved: the log) as
 * the first half of its budget and a ring of the last half. The zygote tells the supervisor
 * where its keeps are (IPC_ZYGOTE_READY), and every worker forked from it has them there: the
 * supervisor reads a runner's keeps from its memory when the runner cannot send them (killed
 * at the hard deadline, dead of a crash or of the filter). What it reads there is the runner's
 * claim about its own call, as a RESULT frame is, and is checked as one. */

enum ipc_capture_stream { IPC_CAPTURE_STDOUT, IPC_CAPTURE_STDERR, IPC_CAPTURE_LOG };
#define IPC_CAPTURE_KEEPS 3

struct ipc_capture_keep {
	size_t half; /* bytes kept at each end: ipc_capture_half */
	char *head;  /* half bytes: the first ones written */
	size_t head_len;
	char *ring;      /* half bytes: the last ones, from ring_pos on, oldest first */
	size_t ring_pos; /* next write position */
	size_t ring_len; /* bytes held (<= half) */
	uint64_t total;  /* bytes written */
};

/* The bytes kept at each end of stream s when a call may print max_output bytes of each. */
size_t ipc_capture_half(size_t max_output, enum ipc_capture_stream s);
/* The text of keep k, whose head and ring bytes are head[0..k->head_len) and ring[0..k->half)
 * (borrowed: the keep's own, or copies the supervisor read): the head, then, when bytes were
 * dropped between them, a marker counting them (and *truncated set), then the ring, oldest byte
 * first. Any field's value is safe: lengths beyond half count as half. Into *out (replacing
 * what it held). */
int ipc_capture_text(const struct ipc_capture_keep *k, const char *head, const char *ring,
                     int *truncated, struct text *out);

/* ---- The outcome of a call ----------------------------------------------------------------- */

/* Encode an outcome as a RESULT frame's JSON body. Returns malloc'd NUL-terminated text and
 * its length, or NULL on ENOMEM. Every character of the texts is kept (NUL as \u0000);
 * invalid UTF-8 in them becomes U+FFFD. */
char *ipc_outcome_encode(const struct run_outcome *o, size_t *len);
/* Parse a worker's outcome. Hostile input: size, depth, trailing bytes, every field's type and
 * every string's UTF-8 are checked; strings may hold any character, NUL included. Returns 0 or
 * -EINVAL/-ENOMEM; out written on success. */
int ipc_outcome_decode(const char *buf, size_t len, struct run_outcome *out);

#endif
