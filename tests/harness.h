/* harness.h - the plumbing the end-to-end suites share, on top of mcpclient: the server under
 * test (one per test: Criterion runs each test in its own process), responses kept until the
 * test ends, and calls that assert what came back. Every function asserts with Criterion, so a
 * failed check ends the test; none of them may be called outside a test. */
#ifndef SAFEPY_HARNESS_H
#define SAFEPY_HARNESS_H

#include <stdint.h>
#include <json-c/json.h>

#include "mcpclient.h"

/* How long a call may take before the test gives up on it. */
#define E2E_CALL_MS 30000
/* A NULL-terminated argument list. */
#define ARGS(...)   ((const char *const[]){__VA_ARGS__, NULL})

/* The server under test; e2e_start starts it, e2e_stop ends it. */
extern struct mcpc e2e_srv;

/* ---- What the test keeps ---------------------------------------------------------------- */

/* Keep o (takes ownership; may be NULL) until e2e_release. Returns o, borrowed. */
json_object *e2e_hold(json_object *o);
/* printf into a string kept until e2e_release (borrowed). */
__attribute__((format(printf, 1, 2))) const char *e2e_fmt(const char *f, ...);
/* Drop everything held and formatted. */
void e2e_release(void);
/* For TestSuite .fini, after every test passed or failed: kill the server if it is still
 * running and drop what the test kept. */
void e2e_cleanup(void);

/* ---- Failure messages ------------------------------------------------------------------- */

/* Where e2e_log reads: a function returning malloc'd text. NULL: the server's stderr. */
void e2e_log_from(char *(*source)(void));
/* The last 3000 bytes of that log (a static buffer, overwritten by the next call). */
const char *e2e_log(void);

/* ---- Starting and stopping -------------------------------------------------------------- */

/* Start bin with args (NULL-terminated, may be NULL) and extra environment entries env (may
 * be NULL) on c as an MCP server over stdio, and initialize it with protocol version. */
void e2e_open(struct mcpc *c, const char *bin, const char *const *args, const char *const *env,
              const char *version);
/* e2e_open of SAFEPY_BIN on e2e_srv with protocol version 2025-11-25. */
void e2e_start(const char *const *args);
/* The same with another version and extra environment entries (may be NULL). */
void e2e_start_with(const char *version, const char *const *args, const char *const *env);
/* c is still running, exits with status 0 within ms of EOF on its stdin, and every line it
 * wrote on stdout was a JSON-RPC message. c is not freed. */
void e2e_finish(struct mcpc *c, int ms);
/* e2e_finish of e2e_srv within 3 s, then free it and drop what the test kept. */
void e2e_stop(void);

/* ---- Reading responses ------------------------------------------------------------------ */

/* o[key] (borrowed), or NULL when o is not an object or has no such key. */
json_object *e2e_member(json_object *o, const char *key);
/* result.isError of a tools/call response. */
int e2e_is_error(json_object *resp);

/* ---- Calls ------------------------------------------------------------------------------ */

/* A run_python call on c (extra: more arguments as a JSON object text, or NULL) that must come
 * back within ms as a tool result with structuredContent. Returns the response, held. */
json_object *e2e_call_on(struct mcpc *c, const char *code, const char *extra, int ms);
/* e2e_call_on e2e_srv within E2E_CALL_MS. */
json_object *e2e_call(const char *code, const char *extra);
/* A call whose structuredContent.status is status, with isError set unless it is "ok". */
json_object *e2e_expect_status(const char *code, const char *extra, const char *status);
/* A call with status "ok". */
json_object *e2e_ok(const char *code);
/* structuredContent.result of r equals the JSON text json (code names the call). */
void e2e_assert_result(json_object *r, const char *code, const char *json);
/* An "ok" call whose result equals the JSON text json. */
void e2e_expect_result(const char *code, const char *json);
/* A call with status "error" and an exception of this type. */
json_object *e2e_expect_error(const char *code, const char *type);

/* ---- Refusals -------------------------------------------------------------------------- */

/* How a refused call must come back: structuredContent.status, the exception type and a part
 * of its message. For "sandbox_violation" (type "SandboxViolation"), message lists the
 * syscalls the message may name, as "a|b"; it must name one of them in quotes. An attack check
 * that accepted any failure would pass on a typo in the attack (a NameError). */
struct e2e_refusal {
	const char *status;
	const char *type;    /* structuredContent.error.type; NULL: not checked */
	const char *message; /* NULL: the message is not checked */
};

/* The refusals of the Python layer and of the kernel that the suites expect most. */
extern const struct e2e_refusal E2E_DUNDER;   /* AttributeError: a dunder attribute */
extern const struct e2e_refusal E2E_INTERNAL; /* AttributeError: frame or code internals */
extern const struct e2e_refusal E2E_IMPORT; /* ModuleNotFoundError: a module not on the allowlist */
extern const struct e2e_refusal E2E_EACCES; /* PermissionError: a file the filter denies */
extern const struct e2e_refusal E2E_EPERM;  /* PermissionError: a fork the gate refused */

/* NULL when r came back as want says (isError set too), else what differs (held until
 * e2e_release). A predicate, not an assertion: the suites check it is not vacuous. */
const char *e2e_refusal_mismatch(json_object *r, const struct e2e_refusal *want);

/* ---- Cancellation ----------------------------------------------------------------------- */

/* Send notifications/cancelled for the request with this integer id. */
void e2e_cancel(int64_t id);
/* Is the response to this integer id queued, or does it arrive within ms? (Kept queued.) */
int e2e_seen(int64_t id, int ms);

/* ---- The server's processes ------------------------------------------------------------- */

/* The engine's live processes (the server's descendants but the zygote starter: the zygote
 * and its workers), at most max, into p; returns how many. Skips the test when the kernel has
 * no /proc/PID/task/TID/children. */
int e2e_descendants(struct mcpc_proc *p, int max);
/* The zygote starter's pid (the fork of the supervisor that starts the zygote), 0: none. */
pid_t e2e_starter(void);
/* The number after "field:" in /proc/PID/status (Seccomp, VmHWM, ...), or -1. */
long e2e_proc_status(pid_t pid, const char *field);
/* Does pid run without a seccomp filter? Of the descendants (starter aside) only the zygote. */
int e2e_is_unsandboxed(pid_t pid);
/* With the environment variable env set, copy the server's log to the file it names (for a
 * failure's post-mortem). */
void e2e_save_log(const char *env);
/* The zygote's pid, 0: none. */
pid_t e2e_zygote(void);
/* Wait up to ms until the server has at most n descendants; returns how many it has. */
int e2e_settle_descendants(int n, int ms);
/* Wait up to ms until the number of descendants has stayed the same for 300 ms (a parked
 * session forks the process for its next call just after each call); returns it. */
int e2e_steady_descendants(int ms);

/* Python for the tests of a comparison handed a datetime it does not own: FAKE_DATETIME_HEAD
 * makes state, spray and TZc (a tzinfo whose utcoffset reads its slot x); FAKE_DATETIME_BODY,
 * after the code's TZ, makes D (a datetime of a 96-byte block) and FAKE_DT, the bytes of a fake
 * aware datetime whose tzinfo is a fake TZc with x a bytearray over all memory. Needs
 * `datetime as dtm` and `struct`. */
#define FAKE_DATETIME_HEAD                                                                         \
	"state = {'phase': 0}\n"                                                                   \
	"spray = []\n"                                                                             \
	"class TZc(dtm.tzinfo):\n"                                                                 \
	"    __slots__ = ('x',)\n"                                                                 \
	"    def utcoffset(self, dt):\n"                                                           \
	"        state['got'] = type(self.x).__name__\n"                                           \
	"        return dtm.timedelta(0)\n"
#define FAKE_DATETIME_BODY                                                                         \
	"class D(dtm.datetime):\n"                                                                 \
	"    __slots__ = ('prev', 'next', 'key', '__weakref__')\n"                                 \
	"keep_ba = bytes(struct.pack('<QQqqQQq', 0x100000, id(bytearray), 2**47, 2**47, 0, 0, "    \
	"0))\n"                                                                                    \
	"keep_tz = bytes(struct.pack('<QQQ', 0x100000, id(TZc), id(keep_ba) + 32))\n"              \
	"data = bytes([2020 >> 8, 2020 & 255, 1, 1, 0, 0, 0, 0, 0, 0])\n"                          \
	"body = (struct.pack('<QQq', 0x100000, id(dtm.datetime), -1) + b'\\x01' + data + "         \
	"b'\\x00' * 5 +\n"                                                                         \
	"        struct.pack('<Q', id(keep_tz) + 32))\n"                                           \
	"FAKE_DT = (b'\\x00' * 16 + body).ljust(95, b'\\x00')\n"

#endif
