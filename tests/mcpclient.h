/* mcpclient.h - a small MCP client for the end-to-end tests: starts the safepy binary with pipes,
 * sends JSON-RPC lines, reads and checks every line the server writes on stdout.
 * Functions return 0 or a negative errno, or NULL on timeout/EOF/error; they never exit. */
#ifndef SAFEPY_MCPCLIENT_H
#define SAFEPY_MCPCLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

/* Longest stdout line the client accepts (the server keeps its messages far below 1 MB). */
#define MCPC_MAX_LINE   (16u << 20)
/* Messages read while waiting for another id, kept for later. */
#define MCPC_MAX_QUEUED 256
/* Stdout lines kept for inspection after a check failed. */
#define MCPC_BAD_KEEP   512

/* One running server. Caller-owned: mcpc_start / mcpc_free. */
struct mcpc {
	pid_t pid;  /* the server; -1 once reaped */
	int in_fd;  /* write end of the server's stdin; -1 once closed */
	int out_fd; /* read end of the server's stdout; -1 at EOF */
	char *buf;  /* owned: stdout bytes not yet split into lines */
	size_t len, cap;
	char stderr_path[64];                /* temp file that receives the server's stderr */
	int64_t next_id;                     /* next request id mcpc_request uses */
	json_object *queue[MCPC_MAX_QUEUED]; /* owned: messages not yet claimed */
	size_t nqueue;
	unsigned lines;                /* stdout lines read */
	unsigned bad_lines;            /* stdout lines that were not a JSON-RPC message */
	char first_bad[MCPC_BAD_KEEP]; /* the first of them, cut */
	int status;                    /* wait status once reaped */
};

/* Start SAFEPY_BIN-like binary `bin` with args (NULL-terminated, may be NULL) and extra
 * environment entries "K=V" (NULL-terminated, may be NULL) added to the test's environment.
 * The server's stderr goes to a temp file. Returns 0 or -errno. */
int mcpc_start(struct mcpc *c, const char *bin, const char *const *args, const char *const *env);
/* Kill the server if still running (SIGKILL), reap it, free everything, remove the stderr file. */
void mcpc_free(struct mcpc *c);

/* Send one line (a newline is added). Drains the server's stdout while blocked so a large
 * line cannot deadlock. Returns 0 or -errno (-EPIPE once the server closed stdin). */
int mcpc_send(struct mcpc *c, const char *line);
/* Send raw bytes of length n as they are (no newline added). */
int mcpc_send_raw(struct mcpc *c, const char *data, size_t n);
/* Serialise msg (borrowed) on one line and send it. */
int mcpc_send_json(struct mcpc *c, json_object *msg);

/* Next message from stdout: first any queued one, else read within timeout_ms.
 * Returns a new reference, or NULL on timeout or EOF. Lines that are not JSON-RPC are counted
 * in bad_lines and skipped. */
json_object *mcpc_next(struct mcpc *c, int timeout_ms);
/* Wait for the response whose id equals id (type included), queueing every other message.
 * Returns a new reference, or NULL on timeout or EOF. */
json_object *mcpc_wait_id(struct mcpc *c, json_object *id, int timeout_ms);
json_object *mcpc_wait_int_id(struct mcpc *c, int64_t id, int timeout_ms);
/* Is a message with this id already queued, or does one arrive within timeout_ms? Returns 1 and
 * leaves it queued, or 0. */
int mcpc_seen_id(struct mcpc *c, json_object *id, int timeout_ms);

/* Send a request with a fresh integer id; params takes ownership (may be NULL). Returns the id. */
int64_t mcpc_request_async(struct mcpc *c, const char *method, json_object *params);
/* Send a request and wait for its response (new reference, or NULL). */
json_object *mcpc_request(struct mcpc *c, const char *method, json_object *params, int timeout_ms);
/* Send a notification; params takes ownership (may be NULL). Returns 0 or -errno. */
int mcpc_notify(struct mcpc *c, const char *method, json_object *params);

/* initialize with protocolVersion version, then notifications/initialized.
 * Returns the initialize response (new reference) or NULL. */
json_object *mcpc_initialize(struct mcpc *c, const char *version);

/* Start a run_python call: arguments {"code": code} merged with the members of extra_args
 * (a JSON object text, may be NULL). Returns the request id, or -1 if extra_args does not parse. */
int64_t mcpc_call_async(struct mcpc *c, const char *code, const char *extra_args);
/* The same, waiting for the response (new reference, or NULL on timeout). */
json_object *mcpc_call(struct mcpc *c, const char *code, const char *extra_args, int timeout_ms);

/* Borrowed views into a response; NULL when absent. */
json_object *mcpc_result(json_object *resp);
json_object *mcpc_error(json_object *resp);
json_object *mcpc_structured(json_object *resp);
/* content[0].text of a tools/call response, or NULL. */
const char *mcpc_text(json_object *resp);
/* structuredContent[key] as a string; NULL when absent or not a string. */
const char *mcpc_sc_str(json_object *resp, const char *key);
/* structuredContent.status, or "" when absent. */
const char *mcpc_status(json_object *resp);
/* structuredContent.error[key] as a string, or "" when absent. */
const char *mcpc_err_str(json_object *resp, const char *key);
/* The JSON text of a message (borrowed, valid while msg lives). */
const char *mcpc_json(json_object *msg);

/* Is this a valid JSON-RPC 2.0 message (request, notification, response, or a non-empty array of
 * them)? */
int mcpc_is_jsonrpc(json_object *msg);

/* Close the server's stdin. */
void mcpc_close_stdin(struct mcpc *c);
/* Wait up to timeout_ms for the server to exit, reading (and checking) its remaining stdout.
 * Returns 0 with c->status set, or -ETIMEDOUT. */
int mcpc_wait_exit(struct mcpc *c, int timeout_ms);
/* Send a signal to the server. Returns 0 or -errno. */
int mcpc_signal(struct mcpc *c, int sig);
/* Is the server still running (not exited, not reaped)? */
int mcpc_alive(struct mcpc *c);
/* The server's stderr so far (malloc'd, NUL-terminated; "" on error). */
char *mcpc_stderr(struct mcpc *c);

/* ---- Processes ------------------------------------------------------------------------ */

/* A process identity that survives pid reuse: pid and start time (clock ticks since boot). */
struct mcpc_proc {
	pid_t pid;
	unsigned long long start;
};

/* All live descendants of pid (children of every thread, recursively), at most max.
 * Returns how many were written, or -errno (-ENOENT when the kernel has no
 * /proc/PID/task/TID/children). */
int mcpc_descendants(pid_t pid, struct mcpc_proc *out, int max);
/* Open fds of a process, -1 when unreadable. */
int mcpc_fd_count(pid_t pid);
/* Is this process still alive (same start time, not a zombie)? */
int mcpc_proc_alive(const struct mcpc_proc *p);
/* Wait up to timeout_ms until none of procs is alive. Returns how many are still alive. */
int mcpc_wait_procs_gone(const struct mcpc_proc *procs, int n, int timeout_ms);

/* ---- One-shot commands ------------------------------------------------------------------ */

/* Run bin with args (NULL-terminated), feeding stdin_data (may be NULL: /dev/null), collecting
 * stdout and stderr (malloc'd, NUL-terminated) within timeout_ms. Returns 0 with *status the
 * wait status, or -errno (-ETIMEDOUT: the process was killed). */
int mcpc_run_cmd(const char *bin, const char *const *args, const char *stdin_data, int timeout_ms,
                 char **out, char **err, int *status);
/* The same, with the number of bytes of each output (which may hold NUL bytes) in *out_len and
 * *err_len (either may be NULL). */
int mcpc_run_cmd_len(const char *bin, const char *const *args, const char *stdin_data,
                     int timeout_ms, char **out, size_t *out_len, char **err, size_t *err_len,
                     int *status);

/* Milliseconds on the monotonic clock. */
int64_t mcpc_now_ms(void);

#endif
