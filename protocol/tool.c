/* tool.c - the run_python tool: its tools/list entry (description, schemas, icon), argument
 * validation, and the tools/call result (readable text, structuredContent, size bound).
 * Pure. Functions return 0 or -ENOMEM (tool_parse_args: 1 for bad arguments); builders
 * return a new object or malloc'd text, NULL on ENOMEM. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol_internal.h"
#include "tool_data.h"

/* ---- What the tool is ---------------------------------------------------------------- */

static void sb_bytes(struct strbuf *b, uint64_t n)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && n >= 1024 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	sb_printf(b, "%" PRIu64 " %s", n, units[u]);
}

static void describe_imports(struct strbuf *b, const struct mcp_server_config *cfg)
{
	size_t i;

	if (cfg->n_imports == 0) {
		sb_str(b, "no module can be imported");
		return;
	}
	sb_str(b, "only these modules can be imported: ");
	for (i = 0; i < cfg->n_imports; i++) {
		if (i > 0)
			sb_str(b, ", ");
		sb_str(b, cfg->imports[i]);
	}
}

/* "Limits per call: ..." with the configured values; a zero value means no such limit. */
static void describe_limits(struct strbuf *b, const struct mcp_server_config *cfg)
{
	sb_printf(b, "Limits per call: %g s of wall-clock time (timeout_seconds can lower it)",
	          cfg->max_timeout_s);
	if (cfg->cpu_s > 0)
		sb_printf(b, ", %g s of CPU time", cfg->cpu_s);
	if (cfg->memory_bytes > 0) {
		sb_str(b, ", ");
		sb_bytes(b, cfg->memory_bytes);
		sb_str(b, " of memory");
	}
	if (cfg->max_output > 0) {
		sb_str(b, ", ");
		sb_bytes(b, cfg->max_output);
		sb_str(b, " of captured output per stream (beyond it the head and tail are kept)");
	}
	sb_str(b, ".");
}

/* How long sessions live, with the configured values. */
static void describe_sessions(struct strbuf *b, const struct mcp_server_config *cfg)
{
	if (cfg->max_sessions > 0)
		sb_printf(b,
		          " The server keeps %u sessions (the least recently used is dropped "
		          "beyond that)",
		          cfg->max_sessions);
	if (cfg->session_idle_s > 0)
		sb_printf(b, "%s a session idle for %g minutes expires",
		          cfg->max_sessions > 0 ? ";" : " Sessions are kept until",
		          cfg->session_idle_s / 60);
	if (cfg->max_sessions > 0 || cfg->session_idle_s > 0)
		sb_str(b, "; all end when the server exits.");
}

/* What the code can reach: "cannot read or write files, use the network or start processes,
 * and " without a workspace; its path, its mode and how files are kept with one. */
static void describe_reach(struct strbuf *b, const struct mcp_server_config *cfg)
{
	if (!cfg->workspace) {
		sb_str(b, "cannot read or write files, use the network or start processes, and ");
		return;
	}
	sb_str(b, "works in the workspace directory ");
	sb_str(b, cfg->workspace);
	sb_str(b, ", its current directory: relative paths start there (open('data.csv'), "
	          "os.listdir(), os.walk('.'), pathlib.Path('.').glob('*.csv'), "
	          "pandas.read_csv('data.csv') read its files), absolute paths work inside it, "
	          "and nothing outside it can be reached (a PermissionError says so). ");
	if (cfg->workspace_write)
		sb_str(b,
		       "The code may write files there (open(path, 'w'), to_csv, savefig): they "
		       "are kept when the call completes, or raises an exception, and dropped when "
		       "it fails otherwise (timeout, memory, crash, cancelled); the answer lists "
		       "them in structuredContent.files. Directories can be made (os.makedirs), "
		       "files removed and renamed (os.remove, os.rename, shutil.rmtree) the same "
		       "way, and files left open are closed when the call ends. ");
	else
		sb_str(b, "The workspace is read-only: files cannot be written. ");
	sb_str(b, "The code cannot use the network or start processes, and ");
}

static char *tool_description(const struct mcp_server_config *cfg)
{
	struct strbuf b = {0};

	sb_str(&b, "Run Python 3 code in a sandbox and get back what it printed (stdout and "
	           "stderr, in order) and the value of its last statement (an expression's "
	           "value, or the value a final assignment assigned). When the code raises, the "
	           "traceback comes back together with the output printed before it. The code ");
	describe_reach(&b, cfg);
	describe_imports(&b, cfg);
	sb_str(&b, ". ");
	describe_limits(&b, cfg);
	if (cfg->figures)
		sb_str(
		    &b,
		    " matplotlib figures the code shows (plt.show()) or leaves open come back as "
		    "PNG images after the text, listed in structuredContent.images; if the "
		    "images do not reach you, call show_figures right after this call (same "
		    "session) to get them as images.");
	sb_str(&b, " State persists: variables, functions, classes and imports defined in one call "
	           "are there in the next call of the same session. Without 'session' a call "
	           "uses this connection's default session; pass session \"new\" to start a "
	           "separate one (its handle comes back as structuredContent.session, pass it "
	           "in later calls), or reset: true to start the session from a clean "
	           "interpreter. A call that times out, runs out of memory, crashes or is "
	           "cancelled changes nothing: the session stays exactly as it was before it "
	           "(a call that raises an ordinary exception keeps what it did before the "
	           "exception, as in a REPL).");
	describe_sessions(&b, cfg);
	return sb_take(&b);
}

char *tool_instructions(const struct mcp_server_config *cfg)
{
	struct strbuf b = {0};

	sb_str(&b, "safepy runs Python 3 code for you with its one tool, run_python: use it to "
	           "calculate, transform data, test code and check answers. The code runs in "
	           "real CPython inside a kernel-enforced sandbox on this machine: it ");
	describe_reach(&b, cfg);
	describe_imports(&b, cfg);
	sb_str(&b, ". ");
	describe_limits(&b, cfg);
	sb_str(&b, " State (variables, functions, imports) persists between calls of a session, "
	           "like a REPL: without a 'session' argument calls share this connection's "
	           "default session; session \"new\" starts another, reset: true starts one "
	           "afresh. A call that times out or crashes leaves the session as it was. "
	           "Each result carries the printed output, the value of the last statement, "
	           "and the traceback when the code raised.");
	describe_sessions(&b, cfg);
	return sb_take(&b);
}

/* The tool's annotations, as JSON text. */
static const char annotations_json[] =
    "{\"title\":\"Run Python\",\"readOnlyHint\":false,\"destructiveHint\":false,"
    "\"idempotentHint\":false,\"openWorldHint\":false}";

/* The input schema: protocol/schemas/run_python.input.json (tool_data.h) with the bound and
 * description of timeout_seconds, which the server's settings decide. The output schema is
 * its file as it is. */
static json_object *input_schema(const struct mcp_server_config *cfg)
{
	json_object *schema, *props = NULL, *timeout = NULL;
	char desc[160];

	schema = proto_parse_json(tool_input_schema_json, sizeof(tool_input_schema_json) - 1);
	if (!schema)
		return NULL;
	json_object_object_get_ex(schema, "properties", &props);
	json_object_object_get_ex(props, "timeout_seconds", &timeout);
	snprintf(desc, sizeof(desc),
	         "Wall-clock time limit for this call, in seconds; at most %g, which is also the "
	         "default.",
	         cfg->max_timeout_s);
	if (!timeout ||
	    proto_put(timeout, "maximum", json_object_new_double(cfg->max_timeout_s)) < 0 ||
	    proto_put(timeout, "description", json_object_new_string(desc)) < 0) {
		json_object_put(schema);
		return NULL;
	}
	return schema;
}

/* [{"src":TOOL_ICON_URI,"mimeType":"image/svg+xml","sizes":["any"]}]: the icon, a snake in a
 * box readable at 16 px, is protocol/icon.svg (plain SVG: no script, no external reference),
 * which the build encodes. New array or NULL. */
static json_object *tool_icons(void)
{
	json_object *icons, *icon = NULL, *sizes = NULL;
	int rc;

	icons = json_object_new_array();
	if (!icons)
		return NULL;
	rc = proto_append(icons, icon = json_object_new_object());
	if (rc == 0)
		rc = proto_put(icon, "src", json_object_new_string(TOOL_ICON_URI));
	if (rc == 0)
		rc = proto_put(icon, "mimeType", json_object_new_string("image/svg+xml"));
	if (rc == 0)
		rc = proto_put(icon, "sizes", sizes = json_object_new_array());
	if (rc == 0)
		rc = proto_append(sizes, json_object_new_string("any"));
	if (rc < 0) {
		json_object_put(icons);
		return NULL;
	}
	return icons;
}

json_object *tool_definition(const struct mcp_server_config *cfg, const struct mcp_request_ctx *ctx)
{
	json_object *tool;
	char *desc;
	int rc = -ENOMEM;

	tool = json_object_new_object();
	desc = tool_description(cfg);
	if (!tool || !desc)
		goto out;
	rc = proto_put(tool, "name", json_object_new_string("run_python"));
	if (rc == 0 && mcp_since(ctx, "2025-06-18"))
		rc = proto_put(tool, "title", json_object_new_string("Run Python"));
	if (rc == 0)
		rc = proto_put(tool, "description", json_object_new_string(desc));
	if (rc == 0)
		rc = proto_put(tool, "inputSchema", input_schema(cfg));
	if (rc == 0 && mcp_since(ctx, "2025-06-18"))
		rc = proto_put(
		    tool, "outputSchema",
		    proto_parse_json(tool_output_schema_json, sizeof(tool_output_schema_json) - 1));
	if (rc == 0 && mcp_since(ctx, "2025-03-26"))
		rc = proto_put(tool, "annotations",
		               proto_parse_json(annotations_json, sizeof(annotations_json) - 1));
	if (rc == 0 && mcp_since(ctx, "2025-11-25"))
		rc = proto_put(tool, "icons", tool_icons());
out:
	free(desc);
	if (rc < 0) {
		json_object_put(tool);
		return NULL;
	}
	return tool;
}

/* show_figures: the images of a session's last call again, as content only. */
static const char figures_input_json[] =
    "{\"type\":\"object\",\"properties\":{\"session\":{\"type\":\"string\","
    "\"description\":\"The session whose last run_python call drew the figures: omit for "
    "this connection's default session, or a handle run_python returned.\"}},"
    "\"additionalProperties\":false}";
static const char figures_annotations_json[] =
    "{\"title\":\"Show figures\",\"readOnlyHint\":true,\"destructiveHint\":false,"
    "\"idempotentHint\":true,\"openWorldHint\":false}";

json_object *tool_figures_definition(const struct mcp_server_config *cfg,
                                     const struct mcp_request_ctx *ctx)
{
	json_object *tool = json_object_new_object();
	int rc = tool ? 0 : -ENOMEM;

	(void)cfg;
	if (rc == 0)
		rc = proto_put(tool, "name", json_object_new_string("show_figures"));
	if (rc == 0 && mcp_since(ctx, "2025-06-18"))
		rc = proto_put(tool, "title", json_object_new_string("Show figures"));
	if (rc == 0)
		rc = proto_put(
		    tool, "description",
		    json_object_new_string(
		        "Show the figures (matplotlib) of the last run_python call of a session as "
		        "PNG images, and nothing else: the images a run_python result lists in "
		        "structuredContent.images, for when they did not reach you with it. Runs "
		        "no "
		        "code and changes nothing."));
	if (rc == 0)
		rc =
		    proto_put(tool, "inputSchema",
		              proto_parse_json(figures_input_json, sizeof(figures_input_json) - 1));
	if (rc == 0 && mcp_since(ctx, "2025-03-26"))
		rc = proto_put(tool, "annotations",
		               proto_parse_json(figures_annotations_json,
		                                sizeof(figures_annotations_json) - 1));
	if (rc == 0 && mcp_since(ctx, "2025-11-25"))
		rc = proto_put(tool, "icons", tool_icons());
	if (rc < 0) {
		json_object_put(tool);
		return NULL;
	}
	return tool;
}

/* ---- Arguments ----------------------------------------------------------------------- */

/* Problems beyond this many unknown arguments are only counted. */
#define UNKNOWN_ARGS_LISTED 3
/* Longest argument name quoted back. */
#define ARG_NAME_MAX        64

void run_args_clear(struct run_args *a)
{
	free(a->code);
	free(a->session);
	memset(a, 0, sizeof(*a));
}

static const char *json_kind(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
	case json_type_int:
		return "a number";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "an unknown type";
}

__attribute__((format(printf, 2, 3))) static void problem(struct strbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (b->len > 0)
		sb_str(b, "; ");
	sb_str(b, tmp);
}

static void check_unknown_args(struct strbuf *b, json_object *args)
{
	struct json_object_iter it;
	size_t unknown = 0;

	json_object_object_foreachC(args, it)
	{
		const char *hint = " (run_python takes 'code' and, optionally, 'timeout_seconds', "
		                   "'session' and 'reset')";

		if (!strcmp(it.key, "code") || !strcmp(it.key, "timeout_seconds") ||
		    !strcmp(it.key, "session") || !strcmp(it.key, "reset"))
			continue;
		if (++unknown > UNKNOWN_ARGS_LISTED)
			continue;
		problem(b, "unknown argument '%.*s'%s",
		        (int)proto_clip(it.key, strlen(it.key), ARG_NAME_MAX), it.key, hint);
	}
	if (unknown > UNKNOWN_ARGS_LISTED)
		problem(b, "%zu more unknown arguments", unknown - UNKNOWN_ARGS_LISTED);
}

/* *code and *len, or NULL with a problem noted. */
static const char *check_code(struct strbuf *b, json_object *args, size_t *len)
{
	json_object *code = NULL;
	const char *s;

	if (!json_object_object_get_ex(args, "code", &code)) {
		problem(b, "missing required argument 'code' (the Python source to run, a string)");
		return NULL;
	}
	if (!json_object_is_type(code, json_type_string)) {
		problem(b, "argument 'code' must be a string, not %s", json_kind(code));
		return NULL;
	}
	s = json_object_get_string(code);
	*len = (size_t)json_object_get_string_len(code);
	/* The worker gets a C string, and CPython refuses source with NUL bytes anyway. */
	if (strlen(s) != *len) {
		problem(b, "argument 'code' must not contain NUL characters");
		return NULL;
	}
	return s;
}

/* The timeout in seconds, 0 when absent, or -1 with a problem noted. */
static double check_timeout(struct strbuf *b, json_object *args, double max)
{
	json_object *v = NULL;
	double t;

	if (!json_object_object_get_ex(args, "timeout_seconds", &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
		problem(b, "argument 'timeout_seconds' must be a number, not %s", json_kind(v));
		return -1;
	}
	t = json_object_get_double(v);
	if (isnan(t) || t <= 0) {
		problem(b, "argument 'timeout_seconds' must be greater than 0");
		return -1;
	}
	if (t > max) {
		problem(b, "argument 'timeout_seconds' must be at most %g (the server's limit)",
		        max);
		return -1;
	}
	return t;
}

/* session: a string of 1..128 printable ASCII characters, or absent (NULL). */
static const char *check_session(struct strbuf *b, json_object *args)
{
	json_object *v = NULL;
	const char *s;
	size_t len;

	if (!json_object_object_get_ex(args, "session", &v))
		return NULL;
	if (!json_object_is_type(v, json_type_string)) {
		problem(b, "argument 'session' must be a string (a handle, or \"new\"), not %s",
		        json_kind(v));
		return NULL;
	}
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len == 0 || len > 128) {
		problem(b, "argument 'session' must be \"new\" or a session handle");
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e) {
			problem(b, "argument 'session' must be \"new\" or a session handle");
			return NULL;
		}
	return s;
}

/* reset: a boolean; 0 when absent, -1 with a problem noted. */
static int check_reset(struct strbuf *b, json_object *args)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(args, "reset", &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		problem(b, "argument 'reset' must be a boolean, not %s", json_kind(v));
		return -1;
	}
	return json_object_get_boolean(v) ? 1 : 0;
}

int tool_parse_figures_args(json_object *args, struct run_args *out, char **why)
{
	struct json_object_iter it;
	struct strbuf b = {0};
	const char *session;

	json_object_object_foreachC(args, it)
	{
		if (strcmp(it.key, "session") != 0)
			problem(&b, "unknown argument '%.*s' (show_figures takes only 'session')",
			        (int)proto_clip(it.key, strlen(it.key), ARG_NAME_MAX), it.key);
	}
	session = check_session(&b, args);
	if (b.failed) {
		free(b.s);
		return -ENOMEM;
	}
	if (b.len > 0) {
		*why = sb_take(&b);
		return 1;
	}
	out->session = session ? strdup(session) : NULL;
	return session && !out->session ? -ENOMEM : 0;
}

int tool_parse_args(const struct mcp_conn *c, json_object *args, struct run_args *out, char **why)
{
	const char *session;
	int reset;
	struct strbuf b = {0};
	const char *code;
	size_t len = 0;
	double timeout;
	char *copy;

	assert(json_object_is_type(args, json_type_object));
	check_unknown_args(&b, args);
	code = check_code(&b, args, &len);
	timeout = check_timeout(&b, args, c->cfg->max_timeout_s);
	session = check_session(&b, args);
	reset = check_reset(&b, args);
	if (b.failed) {
		free(b.s);
		return -ENOMEM;
	}
	if (b.len > 0) {
		*why = sb_take(&b);
		return 1;
	}
	assert(code);
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, code, len + 1);
	out->session = session ? strdup(session) : NULL;
	if (session && !out->session) {
		free(copy);
		return -ENOMEM;
	}
	out->code = copy;
	out->code_len = len;
	out->timeout_s = timeout;
	out->reset = reset;
	return 0;
}

/* ---- Results ------------------------------------------------------------------------- */

/* What the text and the error message of a rolled-back call end with. */
#define ROLLBACK_NOTE "The session is unchanged: its state is as it was before this call."

/* Does structuredContent carry an error object (a rolled-back call's says so)? */
static int has_error(const struct run_outcome *o)
{
	return o->error_type.s || o->error_message.s || o->error_traceback.s || o->rolled_back;
}

/* A limit in bytes as people write it: GiB or MiB when whole. */
static void sb_size(struct strbuf *b, uint64_t m)
{
	if (m % (1u << 30) == 0)
		sb_printf(b, "%" PRIu64 " GiB", m >> 30);
	else if (m % (1u << 20) == 0)
		sb_printf(b, "%" PRIu64 " MiB", m >> 20);
	else
		sb_printf(b, "%" PRIu64 " bytes", m);
}

/* A sentence after what b holds: a full stop first if it has none. */
static void sb_sentence(struct strbuf *b, const char *s)
{
	if (b->len > 0) {
		if (!strchr(".!?", b->s[b->len - 1]) || b->s[b->len - 1] == '\0')
			sb_str(b, ".");
		sb_str(b, " ");
	}
	sb_str(b, s);
}

/* structuredContent.error.message when the call's own message does not say it all: for a call
 * stopped at the memory limit, the limit and what to do (a client that reads only the
 * structured error learns it too); for one stopped at the time limit or the CPU limit, the
 * server's limit and what to do; and for a rolled-back call ROLLBACK_NOTE, each after the
 * message. out stays empty when none applies. Returns 0 or -ENOMEM. */
static int error_message(const struct run_outcome *o, const struct mcp_server_config *cfg,
                         double call_timeout_s, struct text *out)
{
	struct strbuf b = {0};
	int memory = o->status == RUN_MEMORY_LIMIT && cfg && cfg->memory_bytes;
	int cpu = o->status == RUN_TIMEOUT && o->cpu_limit_s > 0;
	int timeout = o->status == RUN_TIMEOUT && !cpu && cfg && cfg->max_timeout_s > 0;
	static const char split[] = "Split long work across calls (a session keeps its state "
	                            "between them) or make it lighter.";

	if (!memory && !timeout && !cpu && !o->rolled_back)
		return 0;
	sb_text(&b, &o->error_message);
	if (memory) {
		sb_sentence(&b, "The sandbox allows ");
		sb_size(&b, cfg->memory_bytes);
		sb_str(&b, " of address space per call, the interpreter and its libraries included "
		           "(the server's --memory option). Work in smaller parts (chunks, smaller "
		           "dtypes) or ask for a larger limit.");
	}
	if (timeout) {
		sb_sentence(&b, "");
		if (call_timeout_s > 0 && call_timeout_s < cfg->max_timeout_s)
			sb_printf(
			    &b,
			    "This call's limit was %g s (its timeout_seconds); a call may run "
			    "at most %g s (the server's --timeout). ",
			    call_timeout_s, cfg->max_timeout_s);
		else
			sb_printf(&b,
			          "A call may run at most %g s (the server's --timeout; "
			          "timeout_seconds may lower it). ",
			          cfg->max_timeout_s);
		sb_str(&b, split);
	}
	if (cpu) {
		sb_sentence(&b, "");
		sb_printf(&b,
		          "A call may use at most %u s of CPU time, its threads' together (the "
		          "server's --cpu). ",
		          o->cpu_limit_s);
		sb_str(&b, split);
	}
	if (o->rolled_back)
		sb_sentence(&b, ROLLBACK_NOTE);
	return sb_take_text(&b, out);
}

static int nonempty(const struct text *t)
{
	return t->s && t->len > 0;
}

/* The line added for statuses that are neither ok nor a plain Python error. */
static const char *status_line(const struct run_outcome *o)
{
	switch (o->status) {
	case RUN_TIMEOUT:
		return "[timeout] The code did not finish within its time limit and was stopped.";
	case RUN_MEMORY_LIMIT:
		return "[memory_limit] The code ran out of memory (the sandbox's limit) and was "
		       "stopped.";
	case RUN_OUTPUT_LIMIT:
		return "[output_limit] The code produced more output than the limit allows and "
		       "was stopped.";
	case RUN_CANCELLED:
		return "[cancelled] The call was cancelled by the client.";
	case RUN_CRASHED:
		/* The server short of memory, fds or processes: nothing of the code's crashed. */
		if (o->error_type.s && strcmp(o->error_type.s, "ResourceError") == 0)
			return "[crashed] The server could not serve this call: it ran short of "
			       "resources (the error above says which).";
		return "[crashed] The Python process crashed.";
	case RUN_SANDBOX_VIOLATION:
		return "[sandbox_violation] The code attempted an operation the sandbox forbids "
		       "and was stopped.";
	case RUN_OK:
	case RUN_ERROR:
		break;
	}
	return NULL;
}

/* The memory limit's line names the limit: code that knows it can work in smaller parts. */
static void memory_line(struct strbuf *b, uint64_t m)
{
	sb_str(b, "[memory_limit] The code ran out of memory and was stopped: the sandbox allows ");
	sb_size(b, m);
	sb_str(b, " of address space per call, the interpreter and its libraries included "
	          "(the server's --memory option). Work in smaller parts (chunks, smaller dtypes) "
	          "or ask for a larger limit.");
}

int mcp_status_note(const struct run_outcome *o, const struct mcp_server_config *cfg,
                    struct text *out)
{
	struct strbuf b = {0};
	const char *line = status_line(o);

	if (o->status == RUN_MEMORY_LIMIT && cfg && cfg->memory_bytes)
		memory_line(&b, cfg->memory_bytes);
	else if (line)
		sb_str(&b, line);
	return sb_take_text(&b, out);
}
/* A file's name as the text says it: a name of the code's making with a line break (or any
 * control character, or a Unicode line separator) in it could have made a line of its own in
 * the answer ("Result: ..."). Those are escaped, and so is the backslash. */
static void sb_name(struct strbuf *b, const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p == '\\')
			sb_str(b, "\\\\");
		else if (*p == '\n')
			sb_str(b, "\\n");
		else if (*p == '\t')
			sb_str(b, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			sb_printf(b, "\\x%02x", *p);
		else if (p[0] == 0xc2 && p[1] == 0x85) {
			sb_str(b, "\\u0085");
			p++;
		} else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			sb_printf(b, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
			p += 2;
		} else {
			sb_add(b, (const char *)p, 1);
		}
	}
}

int mcp_outcome_text(const struct run_outcome *o, const struct mcp_server_config *cfg,
                     struct text *out)
{
	struct strbuf b = {0};
	const char *line;

	sb_text(&b, &o->logs);
	if (o->status != RUN_OK) {
		if (nonempty(&o->error_traceback)) {
			sb_newline(&b);
			sb_text(&b, &o->error_traceback);
		} else if (nonempty(&o->error_type) || nonempty(&o->error_message)) {
			sb_newline(&b);
			sb_str(&b, "Error: ");
			sb_text(&b, &o->error_type);
			if (nonempty(&o->error_type) && nonempty(&o->error_message))
				sb_str(&b, ": ");
			sb_text(&b, &o->error_message);
		} else if (o->status == RUN_ERROR) {
			sb_newline(&b);
			sb_str(&b, "Error: the code failed without further details.");
		}
		line = status_line(o);
		if (o->status == RUN_MEMORY_LIMIT && cfg && cfg->memory_bytes) {
			sb_newline(&b);
			memory_line(&b, cfg->memory_bytes);
		} else if (line) {
			sb_newline(&b);
			sb_str(&b, line);
		}
	} else if (o->result_repr.s) {
		sb_newline(&b);
		sb_str(&b, "Result: ");
		sb_text(&b, &o->result_repr);
	}
	for (size_t i = 0; i < o->n_images; i++) {
		sb_newline(&b);
		sb_printf(&b, "[figure %zu: %" PRIu32 "x%" PRIu32 " PNG image, %zu bytes]", i + 1,
		          o->images[i].width, o->images[i].height, o->images[i].len);
	}
	if (o->rolled_back) {
		sb_newline(&b);
		sb_str(&b, ROLLBACK_NOTE);
	}
	for (size_t i = 0; i < o->n_files; i++) {
		if (i == 0) {
			sb_newline(&b);
			sb_str(&b, "Files written in the workspace: ");
		} else {
			sb_str(&b, ", ");
		}
		sb_name(&b, o->files[i].path);
		sb_printf(&b, " (%" PRIu64 " bytes)", o->files[i].bytes);
	}
	if (!b.failed && b.len == 0)
		sb_str(&b, "(no output)");
	return sb_take_text(&b, out);
}

/* ---- Files written --------------------------------------------------------------------- */

const char *mcp_text_mime(const char *path)
{
	static const struct {
		const char *ext, *mime;
	} types[] = {
	    {"csv", "text/csv"},
	    {"tsv", "text/tab-separated-values"},
	    {"txt", "text/plain"},
	    {"log", "text/plain"},
	    {"md", "text/markdown"},
	    {"json", "application/json"},
	    {"jsonl", "application/jsonl"},
	    {"xml", "application/xml"},
	    {"html", "text/html"},
	    {"yaml", "application/yaml"},
	    {"yml", "application/yaml"},
	    {"py", "text/x-python"},
	    {"svg", "image/svg+xml"},
	};
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(dot + 1, types[i].ext) == 0)
			return types[i].mime;
	return NULL;
}

/* "file://" and the absolute path of a workspace file, percent-encoded (RFC 8089). */
static char *file_uri(const char *workspace, const char *rel)
{
	struct strbuf b = {0};
	char abs_path[2 * 4096 + 2];

	snprintf(abs_path, sizeof(abs_path), "%s%s%s", workspace,
	         workspace[strlen(workspace) - 1] == '/' ? "" : "/", rel);
	sb_str(&b, "file://");
	for (const unsigned char *p = (const unsigned char *)abs_path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-._~", *p))
			sb_add(&b, (const char *)p, 1);
		else
			sb_printf(&b, "%%%02X", *p);
	}
	return sb_take(&b);
}

/* structuredContent.files of the result res: [{path, bytes}], with a workspace (empty when
 * nothing was written). */
static int files_structured(json_object *res, const struct mcp_server_config *cfg,
                            const struct run_outcome *o)
{
	json_object *sc = NULL, *files, *f;
	int rc;

	if (!cfg->workspace || !json_object_object_get_ex(res, "structuredContent", &sc))
		return 0;
	files = json_object_new_array();
	rc = proto_put(sc, "files", files);
	for (size_t i = 0; rc == 0 && i < o->n_files; i++) {
		rc = proto_append(files, f = json_object_new_object());
		if (rc == 0)
			rc = proto_put(f, "path", json_object_new_string(o->files[i].path));
		if (rc == 0)
			rc = proto_put(f, "bytes",
			               json_object_new_int64((int64_t)o->files[i].bytes));
	}
	return rc;
}

/* Each small text file written, as an embedded resource (type "resource" with its text): the
 * content every client of the 2024-11-05 protocol and later passes on to the model. */
static int files_content(json_object *content, const struct mcp_server_config *cfg,
                         const struct run_outcome *o)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && cfg->workspace && i < o->n_files; i++) {
		const struct run_file *f = &o->files[i];
		json_object *item, *res = NULL;
		char *uri;
		if (!f->text || !mcp_text_mime(f->path))
			continue;
		uri = file_uri(cfg->workspace, f->path);
		rc = uri ? proto_append(content, item = json_object_new_object()) : -ENOMEM;
		if (rc == 0)
			rc = proto_put(item, "type", json_object_new_string("resource"));
		if (rc == 0)
			rc = proto_put(item, "resource", res = json_object_new_object());
		if (rc == 0)
			rc = proto_put(res, "uri", json_object_new_string(uri));
		if (rc == 0)
			rc = proto_put(res, "mimeType",
			               json_object_new_string(mcp_text_mime(f->path)));
		if (rc == 0)
			rc = proto_put(res, "text", json_object_new_string(f->text));
		free(uri);
	}
	return rc;
}

/* The texts of a response that may be cut to fit the budget, and the result value. */
enum {
	SLOT_TEXT,
	SLOT_LOGS,
	SLOT_STDOUT,
	SLOT_STDERR,
	SLOT_REPR,
	SLOT_ETYPE,
	SLOT_EMSG,
	SLOT_ETB,
	SLOT_RESULT,
	NSLOT
};

/* What goes into one response: text[i] absent is "" for the streams and null otherwise. The
 * texts are borrowed. */
struct shape {
	struct text text[SLOT_RESULT];
	json_object *result; /* borrowed; NULL is JSON null */
	int truncated;
};

/* A JSON string of t's bytes ("" for no text). New object or NULL. */
static json_object *string_of(const struct text *t)
{
	if (t->len > INT32_MAX)
		return NULL;
	return json_object_new_string_len(t->s ? t->s : "", (int)t->len);
}

static int put_text_or_null(json_object *obj, const char *key, const struct text *t)
{
	return t->s ? proto_put(obj, key, string_of(t)) : proto_put_null(obj, key);
}

/* structuredContent.images: [{mimeType, width, height, bytes}] of the image items (which follow
 * the text item of content), no data. New array or NULL. */
static json_object *images_described(const struct run_outcome *o)
{
	json_object *arr = json_object_new_array(), *e;
	int rc = arr ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < o->n_images; i++) {
		rc = proto_append(arr, e = json_object_new_object());
		if (rc == 0)
			rc = proto_put(e, "mimeType", json_object_new_string("image/png"));
		if (rc == 0)
			rc = proto_put(e, "width", json_object_new_int64(o->images[i].width));
		if (rc == 0)
			rc = proto_put(e, "height", json_object_new_int64(o->images[i].height));
		if (rc == 0)
			rc =
			    proto_put(e, "bytes", json_object_new_int64((int64_t)o->images[i].len));
	}
	if (rc < 0) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

/* content's image items: {"type":"image","data":base64,"mimeType":"image/png"}, after the text
 * item. Returns 0 or -ENOMEM. */
int tool_images_append(json_object *content, const struct run_image *images, size_t n)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		char *b64 = proto_base64_encode(images[i].png, images[i].len);
		json_object *item = NULL;

		if (!b64)
			return -ENOMEM;
		rc = proto_append(content, item = json_object_new_object());
		if (rc == 0)
			rc = proto_put(item, "type", json_object_new_string("image"));
		if (rc == 0)
			rc = proto_put(item, "data", json_object_new_string(b64));
		if (rc == 0)
			rc = proto_put(item, "mimeType", json_object_new_string("image/png"));
		free(b64);
	}
	return rc;
}

static json_object *structured_content(const struct run_outcome *o, const struct shape *sh)
{
	json_object *sc, *err = NULL;
	int rc;

	sc = json_object_new_object();
	if (!sc)
		return NULL;
	rc = sh->result ? proto_put(sc, "result", json_object_get(sh->result))
	                : proto_put_null(sc, "result");
	if (rc == 0)
		rc = put_text_or_null(sc, "result_repr", &sh->text[SLOT_REPR]);
	if (rc == 0)
		rc = proto_put(sc, "logs", string_of(&sh->text[SLOT_LOGS]));
	if (rc == 0)
		rc = proto_put(sc, "stdout", string_of(&sh->text[SLOT_STDOUT]));
	if (rc == 0)
		rc = proto_put(sc, "stderr", string_of(&sh->text[SLOT_STDERR]));
	if (rc == 0 && has_error(o)) {
		err = json_object_new_object();
		rc = proto_put(sc, "error", err);
		if (rc == 0)
			rc = proto_put(err, "type", string_of(&sh->text[SLOT_ETYPE]));
		if (rc == 0)
			rc = proto_put(err, "message", string_of(&sh->text[SLOT_EMSG]));
		if (rc == 0)
			rc = proto_put(err, "traceback", string_of(&sh->text[SLOT_ETB]));
	} else if (rc == 0) {
		rc = proto_put_null(sc, "error");
	}
	if (rc == 0)
		rc = proto_put(sc, "images", images_described(o));
	if (rc == 0)
		rc = proto_put(sc, "status", json_object_new_string(run_status_name(o->status)));
	if (rc == 0)
		rc = proto_put(sc, "truncated", json_object_new_boolean(sh->truncated));
	if (rc == 0)
		rc = proto_put(sc, "duration_ms", json_object_new_int64(o->duration_ms));
	if (rc == 0)
		rc = o->session ? proto_put(sc, "session", json_object_new_string(o->session))
		                : proto_put_null(sc, "session");
	if (rc < 0) {
		json_object_put(sc);
		return NULL;
	}
	return sc;
}

static json_object *response_build(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                                   json_object *id, const struct run_outcome *o,
                                   const struct shape *sh)
{
	json_object *res, *content = NULL, *item = NULL;
	int rc;

	res = json_object_new_object();
	if (!res)
		return NULL;
	content = json_object_new_array();
	rc = proto_put(res, "content", content);
	if (rc == 0) {
		item = json_object_new_object();
		rc = proto_append(content, item);
	}
	if (rc == 0)
		rc = proto_put(item, "type", json_object_new_string("text"));
	if (rc == 0)
		rc = proto_put(item, "text", string_of(&sh->text[SLOT_TEXT]));
	if (rc == 0)
		rc = files_content(content, c->cfg, o);
	if (rc == 0)
		rc = tool_images_append(content, o->images, o->n_images);
	if (rc == 0 && mcp_since(ctx, "2025-06-18"))
		rc = proto_put(res, "structuredContent", structured_content(o, sh));
	if (rc == 0 && mcp_since(ctx, "2025-06-18"))
		rc = files_structured(res, c->cfg, o);
	if (rc == 0)
		rc = proto_put(res, "isError", json_object_new_boolean(o->status != RUN_OK));
	if (rc == 0)
		rc = mcp_result_finish(c->cfg, ctx, res);
	if (rc < 0) {
		json_object_put(res);
		return NULL;
	}
	return jsonrpc_result(id, res);
}

static size_t encoded_len(json_object *obj)
{
	size_t len;

	if (!json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN, &len))
		return SIZE_MAX;
	return len;
}

/* The largest per-slot size such that the slots, each capped to it, fit in avail; SIZE_MAX
 * when they fit uncapped. Shrinks only the longest texts. */
static size_t fill_cap(const size_t size[NSLOT], size_t avail)
{
	size_t s[NSLOT], i, j, rem = avail, share;

	memcpy(s, size, sizeof(s));
	for (i = 1; i < NSLOT; i++)
		for (j = i; j > 0 && s[j - 1] > s[j]; j--) {
			size_t t = s[j];

			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	for (i = 0; i < NSLOT; i++) {
		share = rem / (NSLOT - i);
		if (s[i] > share)
			return share;
		rem -= s[i];
	}
	return SIZE_MAX;
}

/* The share of the budget each text may use once the fixed parts are paid for; size[] gets
 * each slot's encoded size. Returns 0 with *cap, or -ENOMEM. */
static int response_cap(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                        json_object *id, const struct run_outcome *o, const struct shape *full,
                        size_t size[NSLOT], size_t *cap)
{
	struct shape bare = *full;
	size_t overhead, biggest = 0;
	json_object *skeleton;
	int i;

	for (i = 0; i < SLOT_RESULT; i++) {
		size[i] = 0;
		if (full->text[i].s) {
			size[i] = proto_escaped_len(full->text[i].s, full->text[i].len);
			bare.text[i] = (struct text){(char *)"", 0};
		}
	}
	size[SLOT_RESULT] = full->result ? encoded_len(full->result) : 0;
	bare.result = NULL;
	skeleton = response_build(c, ctx, id, o, &bare);
	if (!skeleton)
		return -ENOMEM;
	overhead = encoded_len(skeleton);
	json_object_put(skeleton);
	*cap =
	    fill_cap(size, overhead < PROTO_RESPONSE_BUDGET ? PROTO_RESPONSE_BUDGET - overhead : 0);
	/* Only if json-c escapes differently than counted: cut the biggest anyway. */
	for (i = 0; i < NSLOT; i++)
		biggest = size[i] > biggest ? size[i] : biggest;
	if (*cap >= biggest)
		*cap = biggest / 2;
	return 0;
}

/* The response with every slot larger than cap cut to it (a value becomes null; its
 * result_repr stays), marked truncated. New object or NULL. */
static json_object *response_cut(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                                 json_object *id, const struct run_outcome *o,
                                 const struct shape *full, const size_t size[NSLOT], size_t cap)
{
	struct text cut[SLOT_RESULT] = {{0}};
	struct shape sh = *full;
	json_object *resp = NULL;
	int i;

	sh.truncated = 1;
	for (i = 0; i < SLOT_RESULT; i++) {
		if (size[i] <= cap)
			continue;
		if (text_cut(full->text[i].s, full->text[i].len, cap, TEXT_JSON, &cut[i]) < 0)
			goto out;
		sh.text[i] = cut[i];
	}
	if (size[SLOT_RESULT] > cap)
		sh.result = NULL;
	resp = response_build(c, ctx, id, o, &sh);
out:
	for (i = 0; i < SLOT_RESULT; i++)
		text_clear(&cut[i]);
	return resp;
}

json_object *mcp_tool_response(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                               json_object *id, const struct run_outcome *o)
{
	struct text text = {0}, emsg = {0};
	json_object *resp = NULL;
	size_t size[NSLOT], cap;
	struct shape full;

	if (mcp_outcome_text(o, c->cfg, &text) < 0)
		return NULL;
	if (error_message(o, c->cfg, ctx->timeout_s, &emsg) < 0)
		goto out;
	if (o->session && !mcp_since(ctx, "2025-06-18")) {
		/* Without structuredContent the handle has no other way to reach the client. */
		struct strbuf b = {0};

		sb_text(&b, &text);
		sb_printf(&b, "\n[session %s]", o->session);
		if (sb_take_text(&b, &text) < 0)
			goto out;
	}
	memset(&full, 0, sizeof(full));
	full.text[SLOT_TEXT] = text;
	if (mcp_since(ctx, "2025-06-18")) {
		full.text[SLOT_LOGS] = o->logs;
		full.text[SLOT_STDOUT] = o->stdout_text;
		full.text[SLOT_STDERR] = o->stderr_text;
		full.text[SLOT_REPR] = o->result_repr;
		full.text[SLOT_ETYPE] = o->error_type;
		full.text[SLOT_EMSG] = emsg.s ? emsg : o->error_message;
		full.text[SLOT_ETB] = o->error_traceback;
		full.result = o->result;
	}
	full.truncated = o->truncated;
	resp = response_build(c, ctx, id, o, &full);
	if (!resp || encoded_len(resp) <= PROTO_RESPONSE_BUDGET)
		goto out;
	json_object_put(resp);
	resp = NULL;
	if (response_cap(c, ctx, id, o, &full, size, &cap) < 0)
		goto out;
	/* The sizes are exact, so the first round fits unless the id alone is too big. */
	for (;;) {
		resp = response_cut(c, ctx, id, o, &full, size, cap);
		if (!resp || encoded_len(resp) <= PROTO_RESPONSE_BUDGET || cap == 0)
			break;
		json_object_put(resp);
		cap /= 2;
	}
out:
	text_clear(&emsg);
	text_clear(&text);
	return resp;
}

json_object *mcp_figures_response(const struct mcp_conn *c, const struct mcp_request_ctx *ctx,
                                  json_object *id, const struct run_image *images, size_t n,
                                  const char *note, int error)
{
	json_object *res, *content = NULL, *item = NULL;
	struct strbuf b = {0};
	char *text;
	int rc;

	if (note)
		sb_str(&b, note);
	else
		sb_printf(&b, "%zu figure%s of the session's last run_python call:", n,
		          n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		sb_printf(&b, "\n[figure %zu: %" PRIu32 "x%" PRIu32 " PNG image, %zu bytes]", i + 1,
		          images[i].width, images[i].height, images[i].len);
	text = sb_take(&b);
	res = text ? json_object_new_object() : NULL;
	rc = res ? proto_put(res, "content", content = json_object_new_array()) : -ENOMEM;
	if (rc == 0)
		rc = proto_append(content, item = json_object_new_object());
	if (rc == 0)
		rc = proto_put(item, "type", json_object_new_string("text"));
	if (rc == 0)
		rc = proto_put(item, "text", json_object_new_string(text));
	if (rc == 0)
		rc = tool_images_append(content, images, n);
	if (rc == 0)
		rc = proto_put(res, "isError", json_object_new_boolean(error));
	if (rc == 0)
		rc = mcp_result_finish(c->cfg, ctx, res);
	free(text);
	if (rc < 0) {
		json_object_put(res);
		return NULL;
	}
	return jsonrpc_result(id, res);
}
