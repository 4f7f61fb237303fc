/* protocol.h - MCP (JSON-RPC 2.0 over newline-delimited stdio) for safepy, on json-c.
 * Pure functions: no I/O, no globals, no logging. Functions return 0 or a negative errno
 * unless their comment says otherwise; out-params are written only on success. */
#ifndef SAFEPY_PROTOCOL_H
#define SAFEPY_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* Largest JSON-RPC message accepted from the client, in bytes (without the newline). */
#define PROTO_MAX_LINE       (4u << 20)
/* Longest id (a string's bytes, a number's JSON text) and progress token accepted: every
 * answer and progress notification repeats them, and each call waiting keeps them; a longer
 * id is an invalid request, a longer token is not used (no progress is sent). */
#define PROTO_MAX_ID         1024
#define PROTO_MAX_ID_TEXT    "1024" /* the same, for messages */
/* json-c tokener depth for client messages and worker frames. */
#define PROTO_MAX_DEPTH      64
#define PROTO_MAX_DEPTH_TEXT "64" /* the same, for messages */
/* Most messages in one batch (2025-03-26): a batch's answers go out together, in one line,
 * once its last call is done, so the bound on queued output cannot see them; this bounds them
 * (each call's answer is bounded by the output and result limits). */
#define PROTO_MAX_BATCH      32

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

/* Text that may hold any byte, NUL included: what user code printed, returned or raised
 * travels this way, never as a C string. s is owned, NULL for no text; when set, s[len] is a
 * NUL, so s prints as a C string up to its first NUL, but only len says where it ends.
 * Caller-owned: zero-initialise (or text_init), then text_clear. */
struct text {
	char *s;
	size_t len;
};

void text_init(struct text *t);
void text_clear(struct text *t);
/* Replace what t holds with a copy of s[0..n). Returns 0, or -ENOMEM with t unchanged. */
int text_set(struct text *t, const char *s, size_t n);
/* The same for the C string s. */
int text_set_str(struct text *t, const char *s);
/* Replace what t holds with a copy of s[0..n) (any bytes) in which every byte that starts no
 * UTF-8 character is U+FFFD. Returns 0, or -ENOMEM with t unchanged. */
int text_set_utf8(struct text *t, const char *s, size_t n);
/* Each line of t as a terminal or a notebook shows it: what its last carriage return left (a
 * progress bar redrawn a thousand times is its last state, not a thousand copies), a line's
 * "\r\n" its text. In place. */
void text_returns_collapse(struct text *t);
/* Replace what t holds with s[0..n), taking ownership of s (malloc'd, s[n] == '\0'). */
void text_take(struct text *t, char *s, size_t n);
/* Replace what t holds with formatted text. Returns 0, or -ENOMEM with t unchanged. */
int text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growing NUL-terminated buffer of any bytes (NULs included: len is its length). Caller-owned:
 * zero-initialise, then sb_take or sb_take_text. A failed allocation is remembered: later
 * appends do nothing and taking gives NULL / -ENOMEM. */
struct strbuf {
	char *s; /* owned; NULL until something is added */
	size_t len, cap;
	int failed;
};

/* Append s[0..n) (copies). */
void sb_add(struct strbuf *b, const char *s, size_t n);
/* Append the C string s (copies). */
void sb_str(struct strbuf *b, const char *s);
/* Append t's bytes (copies; nothing for no text). */
void sb_text(struct strbuf *b, const struct text *t);
/* Append formatted text, however long. */
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start a new line unless the text is empty or already ends with one. */
void sb_newline(struct strbuf *b);
/* The text as a C string (owned by the caller; "" when nothing was added), or NULL when an
 * allocation failed. Either way the buffer is empty again. For text without NUL bytes. */
char *sb_take(struct strbuf *b);
/* The bytes into *out (replacing what it held; "" when nothing was added). Returns 0, or
 * -ENOMEM when an allocation failed (out unchanged). Either way the buffer is empty again. */
int sb_take_text(struct strbuf *b, struct text *out);

/* How text_cut measures a text: its bytes, or the bytes it takes inside a JSON string as
 * json-c prints it (escapes counted). */
enum text_measure { TEXT_BYTES, TEXT_JSON };

/* s[0..n) (borrowed, any bytes) in at most max bytes as m measures them: unchanged if it fits,
 * else its head and tail, cut on character boundaries, around the marker
 * "\n... [N bytes cut] ...\n" (N: the bytes removed). When max leaves no room for the marker,
 * only the head that fits. A copy goes into *out (replacing what it held). Returns 0 or -ENOMEM
 * (out unchanged). */
int text_cut(const char *s, size_t n, size_t max, enum text_measure m, struct text *out);
/* The text of a stream whose middle is gone: head[0..head_n), the marker, tail[0..tail_n),
 * where gap bytes were dropped between them. A partial character at the end of head or at
 * the start of tail is dropped too and counted in the marker. Both borrowed. Into *out
 * (replacing what it held); returns 0 or -ENOMEM (out unchanged). */
int text_join_cut(const char *head, size_t head_n, uint64_t gap, const char *tail, size_t tail_n,
                  struct text *out);

/* s[0..n) in base64 (RFC 4648, with padding), NUL-terminated. Returns malloc'd text, or NULL
 * on ENOMEM. */
char *proto_base64_encode(const unsigned char *s, size_t n);
/* Decode base64 text t[0..n) (padding required, nothing else but the alphabet). Returns 0 with
 * *out (malloc'd) and *len, -EINVAL for text that is not canonical base64, or -ENOMEM. */
int proto_base64_decode(const char *t, size_t n, unsigned char **out, size_t *len);

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
	const char *workspace;     /* the code's working directory, absolute; NULL: none */
	int workspace_write;       /* the code may write files there */
	int figures;               /* offer show_figures (matplotlib is allowed) */
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
	int modern;       /* modern era: results carry resultType and _meta serverInfo */
	double timeout_s; /* a tools/call's own timeout_seconds; 0: none given */
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

/* Images of one call's result: PNG, at most RUN_IMAGES_MAX of them, each at most
 * RUN_IMAGE_SIDE_MAX pixels on its longer side and RUN_IMAGE_BYTES_MAX bytes, all of them
 * together at most RUN_IMAGES_BYTES_MAX bytes (whose base64 leaves the text of a response about
 * 200 KB of its budget). The worker renders a figure at a lower resolution until it fits. */
#define RUN_IMAGES_MAX       8
#define RUN_IMAGE_SIDE_MAX   1568
#define RUN_IMAGE_BYTES_MAX  (400u << 10)
#define RUN_IMAGES_BYTES_MAX (512u << 10)

/* One image of a call's result. */
struct run_image {
	unsigned char *png; /* owned: the PNG file's bytes */
	size_t len;
	uint32_t width, height; /* from its header */
};

/* The width and height a PNG's header gives. Returns 0, or -EINVAL when png[0..n) does not
 * start with a PNG signature and an IHDR chunk, or a side is 0. */
int run_image_png_size(const unsigned char *png, size_t n, uint32_t *width, uint32_t *height);

/* The most threads a worker's outcome may say its interpreter has besides the call's own. */
#define RUN_THREADS_MAX 4096

/* The outcome of one call, as the worker reports it and the client receives it.
 * Caller-owned: run_outcome_init/run_outcome_clear. Every text is owned, UTF-8, may hold any
 * character (NUL included) and may be absent (s NULL: reported as "" for the streams, null for
 * the others). */
struct run_outcome {
	enum run_status status;
	struct text stdout_text;
	struct text stderr_text;
	struct text logs;        /* stdout and stderr in the order written */
	json_object *result;     /* owned reference; NULL is JSON null */
	struct text result_repr; /* absent: no value */
	struct text error_type;  /* all three absent: no error */
	struct text error_message;
	struct text error_traceback;
	int truncated;
	struct run_image *images; /* owned array of n_images: the figures, in order */
	size_t n_images;
	int64_t duration_ms;
	char *session; /* the handle of the session the call ran in; NULL for one-shot calls */
	/* Threads of the interpreter's besides the call's own when its report was made (started
	 * by the code's Python), as its worker counts them: a claim, which decides no more than
	 * whether that call's state can be kept. At most RUN_THREADS_MAX. */
	int threads;
	/* The call did not complete and its session was put back as it was before it (set by
	 * the engine, not carried in result frames). mcp_tool_response says so once in the text
	 * and at the end of structuredContent.error.message; error_message never says it. */
	int rolled_back;
	/* The call was stopped at the CPU limit of this many seconds (set by the engine, never by
	 * a worker); 0 otherwise. */
	unsigned int cpu_limit_s;
	/* Files of the workspace the call wrote, moved into place when it committed: their paths
	 * relative to the workspace (owned), sizes, and the text of a small text file (owned,
	 * valid UTF-8; NULL when it is not given to the client with the answer). Set by the
	 * engine, never by a worker. */
	struct run_file {
		char *path;
		uint64_t bytes;
		char *text;
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
	MCP_EV_NOTE,   /* nothing to send, something to log: note (warn or debug) */
	/* show_figures for args.session (args.code is NULL): answer with mcp_figures_response
	 * from the images the session kept */
	MCP_EV_FIGURES,
};

struct mcp_event {
	enum mcp_event_kind kind;
	json_object *msg;            /* REPLY: the complete response object, owned */
	json_object *id;             /* CALL: the request id; CANCEL: params.requestId; owned ref */
	json_object *progress_token; /* CALL: params._meta.progressToken or NULL; owned ref */
	struct run_args args;        /* CALL; args.ctx is the request's context */
	/* NOTE: what the client sent that got no reply (a response, since safepy sends no
	 * requests, or a malformed notification) and why: owned, printable ASCII. warn: it was
	 * malformed; otherwise it is worth a debug line only. */
	char *note;
	int warn;
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
 * malformed request becomes an error reply. Notifications (a "method" member and no "id") and
 * responses (an "id" with "result" or "error", no "method") are never answered, even when
 * malformed; what is wrong with them comes out as a NOTE event. Updates c: its era,
 * initialize/initialized, the log level. Returns 0 or -ENOMEM. */
int mcp_handle_line(struct mcp_conn *c, const char *line, size_t len, struct mcp_events *out);

/* A JSON-RPC error response. id is borrowed (NULL means JSON null). Returns a new object. */
json_object *mcp_error_response(json_object *id, int code, const char *message);
/* The text of a JSON-RPC error response (-32603) to the id whose JSON text is id (NULL or "":
 * null; a request's id text as mcp_events.oom_id or mcp_id_text gives it) saying the
 * server ran out of memory while it did what (a fixed phrase, no quotes or backslashes, that
 * says what the client may do about it), put
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

/* The JSON-RPC response of show_figures: content is a text item (note, or a line saying how
 * many figures follow) and the n images (the last run_python call's of the session) as image
 * items; no structuredContent (the tool declares no outputSchema: clients that show the model
 * only structuredContent when it is present show it these images). isError when error is set
 * (note then says why). ctx, id, images and note are borrowed. Returns a new object, or NULL on
 * ENOMEM. */
json_object *mcp_figures_response(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                                  json_object *id, const struct run_image *images, size_t n,
                                  const char *note, int error);

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

/* The text of content[0] for an outcome into *out (replacing what it held); cfg (may be NULL)
 * gives the limits a stopped call's line names. Returns 0 or -ENOMEM (out unchanged). */
int mcp_outcome_text(const struct run_outcome *o, const struct mcp_server_config *cfg,
                     struct text *out);
/* The line that text adds for a call stopped by a limit, the sandbox or a crash (empty for ok
 * and a plain error) into *out. Returns 0 or -ENOMEM. */
int mcp_status_note(const struct run_outcome *o, const struct mcp_server_config *cfg,
                    struct text *out);
/* Files written by a call are given to the client with the answer when they are this small
 * (each, and in all) and of a text type (mcp_text_mime). */
#define MCP_FILE_EMBED_MAX  (8u << 10)
#define MCP_FILES_EMBED_MAX (32u << 10)
/* The MIME type of a file of text by its name ("text/csv" for "a/b.csv"), or NULL. */
const char *mcp_text_mime(const char *path);

/* Does a JSON id equal another? Strings by their bytes, numbers by their exact value as the
 * client wrote them (1e3 is 1000; 99999999999999999999 is not 18446744073709551615); a
 * string never equals a number (1 and "1" differ). */
int mcp_id_equal(json_object *a, json_object *b);

/* ---- JSON and text ------------------------------------------------------------------- */

/* Largest JSON text proto_parse_json accepts. */
#define PROTO_MAX_JSON        (8u << 20)
/* Most values (numbers, strings, literals, objects, arrays) in one JSON text: json-c makes an
 * object of each (about 800 bytes for "{}", three bytes of text), and a line of 4 MiB of empty
 * objects held a gigabyte and the loop for seconds. (A worker's result holds fewer, its own
 * bound.) */
#define PROTO_MAX_VALUES      65536
#define PROTO_MAX_VALUES_TEXT "65536" /* the same, for messages */

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if p[0..n) does not start with one. */
size_t proto_utf8_seq(const unsigned char *p, size_t n);

/* Parse one JSON text strictly (depth-limited, no trailing bytes). Returns a new object or NULL. */
json_object *proto_parse_json(const char *buf, size_t len);
/* The same, telling why it failed: UTF-8 and lexical pre-check, depth-limited tokener, only
 * whitespace after the value. Returns 0 with *out a new object (NULL for a JSON null) or
 * -EINVAL / -ENOMEM, -E2BIG when nested deeper than PROTO_MAX_DEPTH, or -EMSGSIZE with more
 * than PROTO_MAX_VALUES values. */
int proto_parse(const char *buf, size_t len, json_object **out);

#endif
