/* protocol_internal.h - helpers shared by the files of protocol/; nothing outside includes it.
 * Same conventions as protocol.h: 0 or a negative errno, out-params written only on success. */
#ifndef SAFEPY_PROTOCOL_INTERNAL_H
#define SAFEPY_PROTOCOL_INTERNAL_H

#include "protocol.h"

/* The latest legacy version: its shapes are used before initialize, and it answers an
 * initialize asking for a version safepy does not know (2026-07-28 included). */
#define PROTO_VERSION_LATEST  "2025-11-25"
/* The modern (stateless) version served to requests that carry the _meta envelope. */
#define PROTO_VERSION_MODERN  "2026-07-28"
/* The only version that accepts JSON-RPC batches. */
#define PROTO_VERSION_BATCH   "2025-03-26"
/* Upper bound of one encoded tool response, as json_object_to_json_string_ext(...,
 * JSON_C_TO_STRING_PLAIN) prints it; clients refuse results over 1 MB. */
#define PROTO_RESPONSE_BUDGET 900000u

/* ---- jsonrpc.c ----------------------------------------------------------------------- */

/* The longest prefix of s[0..n) of at most max bytes that ends on a character boundary. */
size_t proto_clip(const char *s, size_t n, size_t max);
/* Bytes json-c's JSON_C_TO_STRING_PLAIN uses for s[0..n) inside a string (quotes excluded). */
size_t proto_escaped_len(const char *s, size_t n);
/* Add val (ownership taken, also on failure) under key. Returns 0 or -ENOMEM; a NULL val counts
 * as an allocation failure, so use proto_put_null for JSON null. */
int proto_put(json_object *obj, const char *key, json_object *val);
int proto_put_null(json_object *obj, const char *key);
/* Same for arrays. */
int proto_append(json_object *arr, json_object *val);
/* Is id usable as a JSON-RPC id: a string, or a number whose value is an integer however it
 * is written (99999999999999999999, -0, 1e3 and 1.0 are; 1.5 is not)? */
int proto_id_valid(json_object *id);
/* Is o a JSON string, and if so is it exactly the C string s (no embedded NUL)? */
int proto_string_is(json_object *o, const char *s);

/* One message's envelope. Every pointer is borrowed from the message. */
struct jsonrpc_request {
	json_object *id;    /* the id if it is usable (valid), else NULL */
	const char *method; /* NULL unless a string */
	size_t method_len;
	json_object *params; /* NULL when absent or null */
	int notification;    /* a "method" member and no "id" member: never answered */
	const char *error;   /* why the envelope is invalid */
};

/* Check the JSON-RPC 2.0 envelope of msg. Returns 0 if valid, else JSONRPC_INVALID_REQUEST
 * with req->error, req->id (NULL unless valid) and req->notification filled, or -ENOMEM when
 * there was no memory to read the id (req->id is the id then). */
int jsonrpc_parse_request(json_object *msg, struct jsonrpc_request *req);
/* For a line that could not be parsed (for want of memory): *request says whether its text
 * has the members "method" and "id"; if so, and the id's text is a plain string or number
 * shorter than cap, it goes to out (NUL-terminated). Returns its length, 0 if none. Reads
 * within buf[0..len) whatever the text is. */
size_t jsonrpc_id_text(const char *buf, size_t len, int *request, char *out, size_t cap);
/* Is msg a JSON-RPC response: an object with "result" or "error" and no "method"? */
int jsonrpc_is_response(json_object *msg);
/* What is wrong with the response msg, or NULL when it is a valid one. */
const char *jsonrpc_response_problem(json_object *msg);
/* Make the numbers of msg that go back to the client print exactly as the client wrote them
 * in buf[0..len), the text msg was parsed from (json-c clamps integers to 64 bits and drops
 * the sign of -0): the id, params.requestId and params._meta.progressToken of the message, or
 * of each element of a batch. Returns 0 or -ENOMEM. */
int jsonrpc_keep_id_texts(json_object *msg, const char *buf, size_t len);
/* {"jsonrpc":"2.0","id":id,"result":result}. id borrowed, result taken (also on failure).
 * Returns a new object or NULL on ENOMEM. */
json_object *jsonrpc_result(json_object *id, json_object *result);
/* {"jsonrpc":"2.0","id":id,"error":{code,message,data}}. id borrowed (NULL is JSON null), data
 * taken (also on failure; NULL: no data member). Returns a new object or NULL on ENOMEM. */
json_object *jsonrpc_error(json_object *id, int code, const char *message, json_object *data);
/* {"jsonrpc":"2.0","method":method,"params":params}. params taken (also on failure).
 * Returns a new object or NULL on ENOMEM. */
json_object *jsonrpc_notification(const char *method, json_object *params);

/* ---- mcp.c --------------------------------------------------------------------------- */

/* Does the request's version date from since or later? */
int mcp_since(const struct mcp_request_ctx *ctx, const char *since);
/* Make result (a result object) a modern one when ctx is modern: add resultType "complete"
 * and _meta["io.modelcontextprotocol/serverInfo"]. Nothing for a legacy ctx. Returns 0 or
 * -ENOMEM (result is then in an unspecified state; the caller drops it). */
int mcp_result_finish(const struct mcp_server_config *cfg, const struct mcp_request_ctx *ctx,
                      json_object *result);

/* ---- tool.c -------------------------------------------------------------------------- */

/* The run_python entry of tools/list for the request's version. New object or NULL. */
json_object *tool_definition(const struct mcp_server_config *cfg,
                             const struct mcp_request_ctx *ctx);
/* The instructions of the initialize and server/discover results. malloc'd, or NULL on
 * ENOMEM. */
char *tool_instructions(const struct mcp_server_config *cfg);
/* Validate run_python's arguments (an object). Returns 0 with *out filled, 1 with *why a
 * malloc'd explanation when an argument is bad, or -ENOMEM. */
int tool_parse_args(const struct mcp_conn *c, json_object *args, struct run_args *out, char **why);
/* The show_figures entry of tools/list (offered when cfg->figures). New object or NULL. */
json_object *tool_figures_definition(const struct mcp_server_config *cfg,
                                     const struct mcp_request_ctx *ctx);
/* Validate show_figures' arguments (an object): out->session only. Returns 0, 1 with *why, or
 * -ENOMEM, as tool_parse_args. */
int tool_parse_figures_args(json_object *args, struct run_args *out, char **why);
/* Append n images to a result's content array as image items (base64 PNG). Returns 0 or
 * -ENOMEM. */
int tool_images_append(json_object *content, const struct run_image *images, size_t n);

#endif
