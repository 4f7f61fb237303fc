/* protocol.h - MCP (JSON-RPC 2.0 over newline-delimited stdio) for safepy, on json-c.
 * Pure functions: no I/O, no globals, no logging. Functions return 0 or a negative errno
 * unless their comment says otherwise; out-params are written only on success. */
#ifndef SAFEPY_PROTOCOL_H
#define SAFEPY_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* Largest JSON-RPC message accepted from the client, in bytes (without the newline). */
#define PROTO_MAX_LINE  (4u << 20)
/* json-c tokener depth for client messages and worker frames. */
#define PROTO_MAX_DEPTH 64

/* JSON-RPC and MCP error codes. */
#define JSONRPC_PARSE_ERROR      -32700
#define JSONRPC_INVALID_REQUEST  -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS   -32602
#define JSONRPC_INTERNAL_ERROR   -32603
/* MCP 2026-07-28: the request's protocol version is not served; data {supported, requested}. */
#define MCP_UNSUPPORTED_VERSION  -32022

/* ---- Line framing -------------------------------------------------------------------- */

/* Splits a byte stream into lines. Caller-owned storage: linebuf_init/linebuf_clear. */
struct linebuf {
	char *buf;      /* owned */
	size_t len;     /* bytes held */
	size_t cap;     /* allocated */
	size_t max;     /* longest line accepted */
	size_t scan;    /* bytes of buf already searched for '\n' */
	int discarding; /* inside an over-long line: drop bytes until the next '\n' */
	int overflowed; /* an over-long line was seen and not yet reported */
	size_t taken;   /* bytes at the front of buf already returned; dropped by the next feed */
};

#define LINEBUF_LINE     1
#define LINEBUF_TOO_LONG 2

void linebuf_init(struct linebuf *lb, size_t max);
void linebuf_clear(struct linebuf *lb);
/* Append n bytes read from the stream. Memory stays bounded by max plus n when the caller
 * takes every line with linebuf_next before feeding again. Returns 0 or -ENOMEM. */
int linebuf_feed(struct linebuf *lb, const char *data, size_t n);
/* Make room for n more bytes, so that feeding that many cannot fail for want of memory (the
 * reader then need not read what it could not keep). Returns 0 or -ENOMEM. */
int linebuf_reserve(struct linebuf *lb, size_t n);
/* Take the next complete line. Returns LINEBUF_LINE with *line (borrowed, valid until the
 * next linebuf_* call, NUL-terminated, trailing '\r' removed) and *len; LINEBUF_TOO_LONG once
 * for each line longer than max (its bytes are discarded); 0 when no complete line is held. */
int linebuf_next(struct linebuf *lb, const char **line, size_t *len);

/* ---- Text helpers -------------------------------------------------------------------- */

/* A growing NUL-terminated string. Caller-owned: zero-initialise, then sb_take. A failed
 * allocation is remembered: later appends do nothing and sb_take returns NULL. */
struct strbuf {
	char *s; /* owned; NULL until something is added */
	size_t len, cap;
	int failed;
};

/* Append s[0..n) (copies). */
void sb_add(struct strbuf *b, const char *s, size_t n);
/* Append the C string s (copies). */
void sb_str(struct strbuf *b, const char *s);
/* Append formatted text, however long. */
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start a new line unless the text is empty or already ends with one. */
void sb_newline(struct strbuf *b);
/* The text (owned by the caller; "" when nothing was added), or NULL when an allocation
 * failed. Either way the buffer is empty again. */
char *sb_take(struct strbuf *b);

/* How text_cut measures a text: its bytes, or the bytes it takes inside a JSON string as
 * json-c prints it (escapes counted). */
enum text_measure { TEXT_BYTES, TEXT_JSON };

/* s[0..n) (borrowed) in at most max bytes as m measures them: unchanged if it fits, else its
 * head and tail, cut on character boundaries, around the marker "\n... [N bytes cut] ...\n"
 * (N: the bytes removed). When max leaves no room for the marker, only the head that fits.
 * Returns a malloc'd copy, or NULL on ENOMEM. */
char *text_cut(const char *s, size_t n, size_t max, enum text_measure m);
/* The text of a stream whose middle is gone: head[0..head_n), the marker, tail[0..tail_n),
 * where gap bytes were dropped between them. A partial character at the end of head or at
 * the start of tail is dropped too and counted in the marker. Both borrowed. Returns
 * malloc'd text, or NULL on ENOMEM. */
char *text_join_cut(const char *head, size_t head_n, uint64_t gap, const char *tail, size_t tail_n);

/* ---- What the server is -------------------------------------------------------------- */

/* Server settings the protocol layer reports (tool description, schema bounds).
 * Borrowed by struct mcp_conn; must outlive it. */
struct mcp_server_config {
	const char *version;        /* server version, e.g. "0.1.0" */
	double max_timeout_s;       /* upper bound of timeout_seconds */
	double cpu_s;               /* CPU seconds per call */
	uint64_t memory_bytes;      /* address space per worker */
	size_t max_output;          /* bytes kept per captured stream */
	const char *const *imports; /* allowed imports, sorted */
	size_t n_imports;
	unsigned int max_sessions; /* sessions kept (least recently used evicted) */
	double session_idle_s;     /* an idle session expires after this */
};

/* Which protocol era a connection speaks (MCP 2026-07-28 versioning rules). The first request
 * that is not a modern server/discover pins it: an initialize without a valid modern envelope,
 * or any request without an envelope, pins LEGACY (the initialize handshake, 2024-11-05 to
 * 2025-11-25); a request whose params._meta envelope names a modern version served pins
 * MODERN (stateless: every request carries its context). Notifications never pin it. */
enum mcp_era {
	MCP_ERA_OPEN = 0, /* nothing classified yet */
	MCP_ERA_PROBE,    /* only modern server/discover so far: answered, not pinned */
	MCP_ERA_LEGACY,
	MCP_ERA_MODERN,
};

/* One client connection's protocol state. Caller-owned: mcp_conn_init (no clear needed). */
struct mcp_conn {
	const struct mcp_server_config *cfg; /* borrowed */
	enum mcp_era era;
	/* Legacy era: the negotiated protocol version, "" before initialize (and always "" in
	 * the modern era, where each request names its own). */
	char version[16];
	int initialized; /* legacy era: notifications/initialized seen */
	/* Legacy era: the level logging/setLevel set, 1 (debug) to 8 (emergency); 0: none. */
	int log_level;
};

void mcp_conn_init(struct mcp_conn *c, const struct mcp_server_config *cfg);

/* What the response to one request depends on, fixed when the request arrives. A plain value,
 * copied along with a call, whose response is built after the call finishes. */
struct mcp_request_ctx {
	/* The version whose shapes the response uses: in the legacy era the negotiated one
	 * (the latest, 2025-11-25, before initialize); in the modern era the request's
	 * io.modelcontextprotocol/protocolVersion. */
	char version[16];
	int modern; /* modern era: results carry resultType and _meta serverInfo */
};

/* ---- run_python ---------------------------------------------------------------------- */

/* Validated arguments of one run_python call. Caller-owned: run_args_clear. */
struct run_args {
	char *code; /* owned, NUL-terminated UTF-8 without a NUL inside: strlen(code) == code_len */
	size_t code_len;
	double timeout_s; /* 0: the server default */
	char *session;    /* owned or NULL: the connection's default session; "new": a new one;
	                   * otherwise a handle the server minted */
	int reset;        /* start the session from a clean interpreter first */
	/* Not an argument: the context of the tools/call request, for mcp_tool_response. It
	 * travels with the arguments, which the caller keeps until it answers the call. */
	struct mcp_request_ctx ctx;
};

void run_args_clear(struct run_args *a);

enum run_status {
	RUN_OK = 0,
	RUN_ERROR,
	RUN_TIMEOUT,
	RUN_MEMORY_LIMIT,
	RUN_OUTPUT_LIMIT,
	RUN_CANCELLED,
	RUN_CRASHED,
	RUN_SANDBOX_VIOLATION,
};

/* The outcome of one call, as the worker reports it and the client receives it.
 * Caller-owned: run_outcome_init/run_outcome_clear. Every string is owned, UTF-8, may be NULL
 * (reported as "" for the text streams, null for the others). */
struct run_outcome {
	enum run_status status;
	char *stdout_text;
	char *stderr_text;
	char *logs;          /* stdout and stderr in the order written */
	json_object *result; /* owned reference; NULL is JSON null */
	char *result_repr;   /* NULL: no value */
	char *error_type;    /* NULL: no error */
	char *error_message;
	char *error_traceback;
	int truncated;
	int64_t duration_ms;
	char *session; /* the handle of the session the call ran in; NULL for one-shot calls */
	/* The call did not complete and its session was put back as it was before it (set by
	 * the engine, not carried in result frames). mcp_tool_response says so once in the text
	 * and at the end of structuredContent.error.message; error_message never says it. */
	int rolled_back;
	/* Files of the workspace the call wrote, moved into place when it committed: their paths
	 * relative to the workspace (owned) and sizes. */
	struct run_file {
		char *path;
		uint64_t bytes;
	} * files;
	size_t n_files;
};

void run_outcome_init(struct run_outcome *o);
void run_outcome_clear(struct run_outcome *o);
/* "ok", "error", "timeout", ... */
const char *run_status_name(enum run_status s);
/* The status named s[0..n). Returns 0 or -EINVAL. */
int run_status_parse(const char *s, size_t n, enum run_status *out);

/* ---- Messages in, events out --------------------------------------------------------- */

enum mcp_event_kind {
	MCP_EV_REPLY,  /* send msg */
	MCP_EV_CALL,   /* start run_python with args; answer later with mcp_tool_response */
	MCP_EV_CANCEL, /* notifications/cancelled for request id */
};

struct mcp_event {
	enum mcp_event_kind kind;
	json_object *msg;            /* REPLY: the complete response object, owned */
	json_object *id;             /* CALL: the request id; CANCEL: params.requestId; owned ref */
	json_object *progress_token; /* CALL: params._meta.progressToken or NULL; owned ref */
	struct run_args args;        /* CALL; args.ctx is the request's context */
};

/* The events of one line. Caller-owned: zero-initialise, then mcp_events_clear. */
struct mcp_events {
	struct mcp_event *ev; /* owned array */
	size_t n;
	/* the line was a JSON-RPC batch: the replies of its elements, including later tool
	 * responses, go out as one JSON array */
	int is_batch;
	/* After mcp_handle_line's -ENOMEM: an answer is owed all the same (the line held a
	 * request, or a batch), to the id whose JSON text is oom_id ("": null, the id could not
	 * be told, or the line was a batch). */
	int oom_answer;
	char oom_id[80];
};

void mcp_events_clear(struct mcp_events *e);

/* Handle one line from the client (without its newline). Never fails on bad input: every
 * malformed message becomes an error reply (or nothing, for a notification). Updates c: its
 * era, initialize/initialized, the log level. Returns 0 or -ENOMEM. */
int mcp_handle_line(struct mcp_conn *c, const char *line, size_t len, struct mcp_events *out);

/* A JSON-RPC error response. id is borrowed (NULL means JSON null). Returns a new object. */
json_object *mcp_error_response(json_object *id, int code, const char *message);
/* The text of a JSON-RPC error response (-32603) to the id whose JSON text is id (NULL or "":
 * null; a request's id text as mcp_events.oom_id or mcp_id_text gives it) saying the
 * server ran out of memory while it did what (a fixed phrase, no quotes or backslashes), put
 * in out[0..cap) without allocating memory of its own, so that it can be sent when nothing
 * else could be made. Returns its length (without the NUL). */
size_t mcp_oom_text(const char *id, const char *what, char *out, size_t cap);
/* id's JSON text (id borrowed; NULL: null) in out[0..cap), "" when it does not fit or
 * cannot be made. */
void mcp_id_text(json_object *id, char *out, size_t cap);

/* The JSON-RPC response for a finished run_python call: content[0] text an LLM reads
 * easily, isError unless RUN_OK, structuredContent for versions that have it, and in the
 * modern era resultType "complete" and _meta serverInfo. ctx is the request's context (the
 * CALL event's args.ctx), c supplies the server's identity; c, ctx and id are borrowed.
 * Keeps the encoded message under about 900 KB by trimming text. Returns a new object, or
 * NULL on ENOMEM. */
json_object *mcp_tool_response(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                               json_object *id, const struct run_outcome *o);

/* A notifications/progress message for a call whose request carried a progress token:
 * {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,
 * "progress":progress,"message":message}}. token is borrowed and must be a string or an
 * integer; progress must be finite, and the caller makes it grow from one notification to
 * the next and sends none after the call's response. total is never sent. message may be
 * NULL (then omitted); it is sent whatever the version: it exists from 2025-03-26, and older
 * clients ignore a field they do not know. Returns a new object, or NULL on ENOMEM, a bad
 * token or a non-finite progress. */
json_object *mcp_progress_notification(json_object *token, double progress, const char *message);

/* A notifications/message log entry {level, logger, data: text} about a server event (never
 * the user's output). level is a syslog severity: "debug", "info", "notice", "warning",
 * "error", "critical", "alert" or "emergency"; logger may be NULL (then omitted); c is
 * borrowed. Returns a new object, or NULL when it must not be sent: c is not in the legacy
 * era, has had no initialize, or has set no level at or below level with logging/setLevel;
 * also NULL for an unknown level and on ENOMEM. Never in the modern era: there a request
 * opts in with _meta io.modelcontextprotocol/logLevel (deprecated), which safepy does not
 * implement. */
json_object *mcp_log_notification(const struct mcp_conn *c, const char *level, const char *logger,
                                  const char *text);

/* The text of content[0] for an outcome (also printed by `safepy run`). Returns malloc'd. */
char *mcp_outcome_text(const struct run_outcome *o);

/* Does a JSON id equal another? Strings by their bytes, numbers by their exact value as the
 * client wrote them (1e3 is 1000; 99999999999999999999 is not 18446744073709551615); a
 * string never equals a number (1 and "1" differ). */
int mcp_id_equal(json_object *a, json_object *b);

/* ---- JSON and text ------------------------------------------------------------------- */

/* Largest JSON text proto_parse_json accepts. */
#define PROTO_MAX_JSON (8u << 20)

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if p[0..n) does not start with one. */
size_t proto_utf8_seq(const unsigned char *p, size_t n);

/* Parse one JSON text strictly (depth-limited, no trailing bytes). Returns a new object or NULL. */
json_object *proto_parse_json(const char *buf, size_t len);

#endif
