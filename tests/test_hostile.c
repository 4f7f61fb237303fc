/* test_hostile.c - the call engine against hostile workers: the server runs with the Python
 * layer off and os, ctypes and threading allowed, so a call's code is as strong as native code,
 * and it writes to its channel (fd 3, the wire of ipc/ipc.h) in every way: forged RESULT frames
 * with the right, a wrong or a guessed sequence, frames of other types, oversized or truncated
 * headers, floods, from threads, at every point of a call and after it; it forks in every way
 * and reads the channel. Every case must end with the supervisor answering a ping within
 * 100 ms, the call answered by its limit + 0.6 s, no new process left, another session's state
 * intact and every answer its own call's; a frame not legal in its state ends the call as
 * crashed, and a forged result changes only its own call's report. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "ipc.h"

#define VERSION "2025-11-25"
#define UNSAFE_ARGS                                                                                \
	"--unsafe-no-python-layer", "--allow-import", "os", "--allow-import", "ctypes",            \
	    "--allow-import", "threading", "--allow-import", "struct", "--allow-import", "json",   \
	    "--allow-import", "time", "--prefork", "0", "--max-sessions", "100"
/* Each case's call runs with this limit and must be answered within it + DEADLINE_SLACK_MS. */
#define LIMIT_S           1.0
#define DEADLINE_SLACK_MS 600
/* A ping must come back within this, while a case runs and after it. */
#define PING_MS           100
/* A session's next call after its process misbehaved between calls: the supervisor waits up to
 * its step time (2 s) for the process to park before it gives the state up. */
#define NEXT_CALL_MS      3000
#define MAXP              256

/* What the supervisor says of a frame not legal in its state. */
#define PROTOCOL_SAYS "broke the protocol"

TestSuite(hostile_frames, .timeout = 240, .fini = e2e_cleanup);
TestSuite(hostile_forks, .timeout = 240, .fini = e2e_cleanup);
TestSuite(hostile_after, .timeout = 240, .fini = e2e_cleanup);
TestSuite(hostile_broker, .timeout = 240, .fini = e2e_cleanup);
static void ws_fini(void);
TestSuite(hostile_replies, .timeout = 240, .fini = ws_fini);

/* Every case's code starts with this: frame() and result() build frames as ipc.h says (u32 LE
 * payload length, a type byte; a RESULT payload is the u32 call sequence and the outcome's
 * JSON, which counts the interpreter's other threads as a worker does), put() writes them to
 * the channel whole. */
static const char prelude[] =
    "import os, struct, json, time, threading, ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def frame(t, p):\n"
    "    return struct.pack('<IB', len(p), ord(t)) + p\n"
    "def outcome(res):\n"
    "    return json.dumps({'status': 'ok', 'stdout': '', 'stderr': '', 'logs': '',\n"
    "                       'result': res, 'result_repr': repr(res), 'error': None,\n"
    "                       'truncated': False,\n"
    "                       'threads': threading.active_count() - 1}).encode()\n"
    "def result(seq, res):\n"
    "    return frame('J', struct.pack('<I', seq & 0xffffffff) + outcome(res))\n"
    "def put(b):\n"
    "    while b:\n"
    "        b = b[os.write(3, b):]\n";

/* sendmsg(2) of a LISTENER frame with fd 0 attached (SCM_RIGHTS), through ctypes. */
#define SENDMSG_LISTENER                                                                           \
	"class iovec(ctypes.Structure):\n"                                                         \
	"    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"                   \
	"class msghdr(ctypes.Structure):\n"                                                        \
	"    _fields_ = [('name', ctypes.c_void_p), ('namelen', ctypes.c_uint32),\n"               \
	"                ('iov', ctypes.POINTER(iovec)), ('iovlen', ctypes.c_size_t),\n"           \
	"                ('control', ctypes.c_void_p), ('controllen', ctypes.c_size_t),\n"         \
	"                ('flags', ctypes.c_int)]\n"                                               \
	"data = ctypes.create_string_buffer(frame('L', b''))\n"                                    \
	"iov = iovec(ctypes.cast(data, ctypes.c_void_p), 5)\n"                                     \
	"cmsg = ctypes.create_string_buffer(struct.pack('<QiiI', 20, 1, 1, 0) + bytes(4))\n"       \
	"m = msghdr(None, 0, ctypes.pointer(iov), 1, ctypes.cast(cmsg, ctypes.c_void_p), 24, 0)\n" \
	"r = libc.sendmsg(3, ctypes.byref(m), 0)\n"

/* A fork(2) from a thread; the thread's outcome is the result. */
#define FORK_FROM_THREAD                                                                           \
	"out = []\n"                                                                               \
	"def child():\n"                                                                           \
	"    try:\n"                                                                               \
	"        pid = os.fork()\n"                                                                \
	"    except OSError as e:\n"                                                               \
	"        out.append(e.errno)\n"                                                            \
	"        return\n"                                                                         \
	"    if pid == 0:\n"                                                                       \
	"        print('CHILD-MARKER', flush=True)\n"                                              \
	"        time.sleep(5)\n"                                                                  \
	"        os._exit(0)\n"                                                                    \
	"    out.append(pid)\n"                                                                    \
	"t = threading.Thread(target=child)\n"                                                     \
	"t.start()\n"                                                                              \
	"t.join()\n"

/* A clone(2) with glibc's fork flags, from the main thread or a thread. */
#define CLONE_FORK_FLAGS "[libc.syscall(56, 0x1200011, 0, 0, 0, 0), ctypes.get_errno()]"

/* Where a case runs. */
enum where {
	NEW_SESSION, /* a new session: the chain's first call, sequence 1 */
	OLD_SESSION, /* a session with state (x = 'state') and calls before */
};

/* What a session's next call must answer after the case. */
enum next {
	NEXT_NONE,  /* no next call */
	NEXT_STATE, /* its state is what it was: x, or for a new session the case's own */
	NEXT_LOST,  /* SessionError: the case's process broke the session */
};

/* One case. In code, @SEQ@ is the call's sequence on its chain and @ID@ its request id: a
 * call that runs to its end returns 't@ID@', a forged result says 'FORGED@ID@'. */
struct hcase {
	const char *name;
	enum where where;
	const char *code;
	const char *status; /* the answer's structuredContent.status */
	const char *type;   /* its error type, NULL: not checked */
	const char *says;   /* a part of its error message (for sandbox_violation: the syscall) */
	const char *result; /* its result_repr, with @ID@; NULL: none */
	enum next next;     /* what a next call in its session answers */
};

/* ---- Running a case ----------------------------------------------------------------------- */

/* The state of the suite's server: a witness session that no case touches, and the session
 * cases of OLD_SESSION run in, with the number of calls its chain ran. */
static const char *witness, *old_session;
static unsigned int old_seq;

/* code with @SEQ@ and @ID@ replaced (held until the test ends). */
static const char *subst(const char *code, unsigned int seq, long long id)
{
	const char *out = "";

	while (*code) {
		const char *s = strstr(code, "@SEQ@"), *i = strstr(code, "@ID@"), *at;

		at = !s ? i : !i ? s : s < i ? s : i;
		if (!at)
			return e2e_fmt("%s%s", out, code);
		out = e2e_fmt("%s%.*s%s", out, (int)(at - code), code,
		              at == s ? e2e_fmt("%u", seq) : e2e_fmt("%lld", id));
		code = at + (at == s ? 5 : 4);
	}
	return out;
}

static const char *session_args(const char *h, const char *more)
{
	return e2e_fmt("{\"session\":\"%s\"%s%s}", h, more ? "," : "", more ? more : "");
}

/* A ping's round trip, which must stay under PING_MS. */
static void ping_within(const char *when, const char *name)
{
	int64_t t0 = mcpc_now_ms();
	json_object *r = e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000));
	int64_t rtt = mcpc_now_ms() - t0;

	cr_assert_not_null(r, "%s: no answer to ping %s", name, when);
	cr_assert_lt(rtt, PING_MS, "%s: a ping %s took %lld ms", name, when, (long long)rtt);
}

/* A new session holding x = 'state'; its chain has run one call. */
/* A session in use: two calls, so that a process waits forked ahead for its next one. Its
 * calls so far: two. */
static const char *state_session(void)
{
	json_object *r = e2e_expect_status("x = 'state'", "{\"session\":\"new\"}", "ok");
	const char *h = e2e_fmt("%s", mcpc_sc_str(r, "session"));

	e2e_expect_status("x", session_args(h, NULL), "ok");
	return h;
}

/* The answer of a session's next call after a case. */
static void check_next(const struct hcase *k, const char *h, long long id, unsigned int seq)
{
	const char *code = k->where == OLD_SESSION ? "x" : "'next'";
	const char *want = k->where == OLD_SESSION ? "'state'" : "'next'";
	int64_t t0 = mcpc_now_ms();
	json_object *r = e2e_call_on(&e2e_srv, code, session_args(h, NULL), NEXT_CALL_MS + 2000);
	int64_t took = mcpc_now_ms() - t0;

	cr_assert_leq(took, NEXT_CALL_MS, "%s: the session's next call took %lld ms", k->name,
	              (long long)took);
	if (k->next == NEXT_LOST) {
		cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError",
		                 "%s: the session's next call ran: %s", k->name, mcpc_json(r));
		return;
	}
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr") ? mcpc_sc_str(r, "result_repr") : "", want,
	                 "%s (call %lld, sequence %u): the session's next call: %s", k->name, id,
	                 seq, mcpc_json(r));
}

/* The processes of the server, once steady: those of the sessions alive and the zygote. */
static int steady_procs(struct mcpc_proc *p)
{
	e2e_steady_descendants(5000);
	return e2e_descendants(p, MAXP);
}

/* Is p among the n processes of set? */
static int known(const struct mcpc_proc *set, int n, const struct mcpc_proc *p)
{
	for (int i = 0; i < n; i++)
		if (set[i].pid == p->pid && set[i].start == p->start)
			return 1;
	return 0;
}

static void run_case(const struct hcase *k)
{
	struct mcpc_proc before[MAXP], after[MAXP];
	int nb, na, fresh = 0, allowed, commits;
	const char *h = k->where == OLD_SESSION ? old_session : "new";
	unsigned int seq = k->where == OLD_SESSION ? old_seq + 1 : 1;
	long long id = (long long)e2e_srv.next_id;
	const char *code = e2e_fmt("%s%s", prelude, subst(k->code, seq, id));
	const char *args = session_args(h, e2e_fmt("\"timeout_seconds\":%g", LIMIT_S));
	const char *status, *session, *why;
	int64_t t0, took;
	json_object *r;

	nb = steady_procs(before);
	t0 = mcpc_now_ms();
	cr_assert_eq(mcpc_call_async(&e2e_srv, code, args), id);
	usleep(50000);
	ping_within("while the case runs", k->name);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, (int)(LIMIT_S * 1000) + 5000));
	took = mcpc_now_ms() - t0;
	cr_assert_not_null(r, "%s: no answer; log:\n%s", k->name, e2e_log());
	cr_assert_leq(took, (int64_t)(LIMIT_S * 1000) + DEADLINE_SLACK_MS,
	              "%s: answered after %lld ms, with a limit of %g s: %s", k->name,
	              (long long)took, LIMIT_S, mcpc_json(r));
	ping_within("after the case", k->name);
	status = mcpc_status(r);
	cr_assert_str_eq(status, k->status, "%s: %s\nlog:\n%s", k->name, mcpc_json(r), e2e_log());
	if (k->type)
		cr_assert_str_eq(mcpc_err_str(r, "type"), k->type, "%s: %s", k->name, mcpc_json(r));
	if (k->says) {
		const struct e2e_refusal want = {k->status, k->type, k->says};
		why = e2e_refusal_mismatch(r, &want);
		cr_assert_null(why, "%s: %s: %s", k->name, why, mcpc_json(r));
	}
	/* Nothing crosses: a result is the case's own (its token or its own forgery). */
	if (k->result)
		cr_assert_str_eq(mcpc_sc_str(r, "result_repr") ? mcpc_sc_str(r, "result_repr") : "",
		                 subst(k->result, seq, id), "%s: %s", k->name, mcpc_json(r));
	else if (mcpc_sc_str(r, "result_repr"))
		cr_assert(strstr(mcpc_sc_str(r, "result_repr"), e2e_fmt("%lld", id)),
		          "%s: the result of another call: %s", k->name, mcpc_json(r));
	cr_assert_null(strstr(mcpc_json(r), "CHILD-MARKER"), "%s: a child ran: %s", k->name,
	               mcpc_json(r));
	session = mcpc_sc_str(r, "session");
	if (k->where == OLD_SESSION) {
		cr_assert_str_eq(session ? session : "", old_session, "%s: %s", k->name,
		                 mcpc_json(r));
		old_seq = seq;
	}
	if (k->next != NEXT_NONE) {
		cr_assert_not_null(session, "%s: no session: %s", k->name, mcpc_json(r));
		check_next(k, session, id, seq);
		if (k->where == OLD_SESSION && k->next == NEXT_STATE)
			old_seq++;
	}
	/* No process of the case's is left: the server's tree is what it was, with the two
	 * processes of a new session that keeps state, without those of a session lost. */
	na = steady_procs(after);
	for (int i = 0; i < na; i++)
		if (!known(before, nb, &after[i]))
			fresh++;
	/* A call that ends ok or error commits: a new session keeps its state. */
	commits = !strcmp(k->status, "ok") || !strcmp(k->status, "error");
	allowed = k->where == OLD_SESSION || (commits && k->next != NEXT_LOST) ? 2 : 0;
	cr_assert_leq(fresh, allowed, "%s: %d new processes (%d before, %d after), %d allowed",
	              k->name, fresh, nb, na, allowed);
	cr_assert_leq(na, nb + (k->where == NEW_SESSION ? allowed : 0),
	              "%s: %d processes after, %d before", k->name, na, nb);
	/* Another session is untouched. */
	e2e_assert_result(e2e_call("w", session_args(witness, NULL)), "w", "\"witness\"");
	if (k->where == OLD_SESSION && k->next == NEXT_LOST) {
		old_session = state_session();
		old_seq = 2;
	}
}

static void run_cases(const struct hcase *cases, size_t n)
{
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	witness = e2e_fmt(
	    "%s", mcpc_sc_str(e2e_expect_status("w = 'witness'", "{\"session\":\"new\"}", "ok"),
	                      "session"));
	old_session = state_session();
	old_seq = 2;
	for (size_t i = 0; i < n; i++) {
		cr_log_info("case %s", cases[i].name);
		run_case(&cases[i]);
	}
	e2e_stop();
}

/* ---- Frames ----------------------------------------------------------------------------- */

static const struct hcase frame_cases[] = {
    {"forged result, right sequence, then its own", NEW_SESSION,
     "put(result(@SEQ@, 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError", PROTOCOL_SAYS, NULL,
     NEXT_NONE},
    {"forged result, right sequence, then it keeps running", NEW_SESSION,
     "put(result(@SEQ@, 'FORGED@ID@'))\ntime.sleep(30)", "crashed", "SandboxError", PROTOCOL_SAYS,
     NULL, NEXT_NONE},
    {"forged result, the next sequence", NEW_SESSION,
     "put(result(@SEQ@ + 1, 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError", PROTOCOL_SAYS,
     NULL, NEXT_NONE},
    {"forged result, sequence 0", NEW_SESSION, "put(result(0, 'FORGED@ID@'))\n't@ID@'", "crashed",
     "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"forged result, sequence 2^32 - 1", NEW_SESSION,
     "put(result(0xffffffff, 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError", PROTOCOL_SAYS,
     NULL, NEXT_NONE},
    {"forged result, the sequence + 2^24 (the park word's width)", NEW_SESSION,
     "put(result(@SEQ@ + (1 << 24), 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"results for every sequence up to 64", NEW_SESSION,
     "put(b''.join(result(s, 'FORGED@ID@') for s in range(64, -1, -1)))\n't@ID@'", "crashed",
     "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"unknown frame type", NEW_SESSION, "put(frame('Z', b'hello'))\n't@ID@'", "crashed",
     "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"LISTENER frame without an fd", NEW_SESSION, "put(frame('L', b''))\n't@ID@'", "crashed",
     "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"LISTENER frame with an fd (sendmsg)", NEW_SESSION, SENDMSG_LISTENER "'t@ID@'",
     "sandbox_violation", "SandboxViolation", "sendmsg", NULL, NEXT_NONE},
    {"READY frame", NEW_SESSION, "put(frame('R', b'{}'))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"CODE frame (the supervisor's)", NEW_SESSION,
     "put(frame('C', struct.pack('<I', @SEQ@) + b'1'))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"header one byte over the frame limit", NEW_SESSION,
     "put(struct.pack('<IB', (8 << 20) + 1, ord('J')))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"header of 4 GiB", NEW_SESSION, "put(struct.pack('<IB', 0xffffffff, ord('J')))\n't@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"truncated frame, then its own result", NEW_SESSION,
     "put(struct.pack('<IB', 100, ord('J')) + b'ab')\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* The frame never completes: the runner's own result disappears into it, and its park
     * without a result is refused, which ends it. */
    {"an 8 MiB frame never finished", NEW_SESSION,
     "put(struct.pack('<IB', 8 << 20, ord('J')) + struct.pack('<I', @SEQ@))\ntime.sleep(30)",
     "crashed", "SandboxError", NULL, NULL, NEXT_NONE},
    {"a forged 8 MiB result, then it keeps running", NEW_SESSION,
     /* Built as bytes: a result this size built with json takes most of the call's second on
      * a loaded machine. */
     "b = outcome('FORGED@ID@')[:-1] + b', \"pad\": \"' + b'x' * (8 << 20) + b'\"}'\n"
     "put(frame('J', struct.pack('<I', @SEQ@) + b))\ntime.sleep(30)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* Parsed, it would be a tree of four million values: seconds of the supervisor's loop
     * (another session's call timed out) and hundreds of MiB it kept. Refused unparsed; the
     * fork would have parked the runner with the claim kept. */
    {"a forged result of four million values, then a fork", NEW_SESSION,
     "body = b'[' + b'0,' * ((8 << 20) // 2 - 200) + b'0]'\n"
     "b = outcome(0).replace(b'\"result\": 0', b'\"result\": ' + body)\n"
     "put(frame('J', struct.pack('<I', @SEQ@) + b))\nos.fork()\ntime.sleep(30)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"endless payload", NEW_SESSION,
     "put(struct.pack('<IB', 8 << 20, ord('J')))\nz = bytes(65536)\nwhile True:\n    put(z)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"flood of 100000 small frames", NEW_SESSION, "put(frame('J', b'x') * 100000)\n't@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"flood of results from four threads at once", NEW_SESSION,
     "def w(i):\n    for k in range(2000):\n        put(result(@SEQ@ + k % 3, 'FORGED@ID@'))\n"
     "ts = [threading.Thread(target=w, args=(i,)) for i in range(4)]\n"
     "[t.start() for t in ts]\n[t.join() for t in ts]\n't@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"forged result between two outputs", NEW_SESSION,
     "print('a' * 1000, flush=True)\nput(result(@SEQ@, 'FORGED@ID@'))\nprint('b' * 1000)\n"
     "'t@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"a thread writes results while the code runs on", NEW_SESSION,
     "def w():\n    while True:\n        put(result(@SEQ@ + 1, 'FORGED@ID@'))\n"
     "        time.sleep(0.01)\n"
     "threading.Thread(target=w, daemon=True).start()\ntime.sleep(30)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* A later call of a session: its chain counts the calls before it. */
    {"forged result with the session's sequence", OLD_SESSION,
     "x = 'changed'\nput(result(@SEQ@, 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_STATE},
    {"forged result with the session's next sequence", OLD_SESSION,
     "x = 'changed'\nput(result(@SEQ@ + 1, 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_STATE},
    {"forged result with the session's previous sequence", OLD_SESSION,
     "x = 'changed'\nput(result(@SEQ@ - 1, 'FORGED@ID@'))\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_STATE},
};

Test(hostile_frames, every_frame_out_of_place_ends_its_call_as_crashed)
{
	run_cases(frame_cases, sizeof(frame_cases) / sizeof(frame_cases[0]));
}

/* ---- Forks and reads ---------------------------------------------------------------------- */

static const struct hcase fork_cases[] = {
    {"os.fork", NEW_SESSION,
     "pid = os.fork()\nif pid == 0:\n    print('CHILD-MARKER', flush=True)\n"
     "    time.sleep(5)\n    os._exit(0)\n't@ID@'",
     "error", "PermissionError", "[Errno 1] Operation not permitted", NULL, NEXT_NONE},
    {"os.fork from a thread", NEW_SESSION, FORK_FROM_THREAD "out", "ok", NULL, NULL, "[1]",
     NEXT_STATE},
    {"clone with fork flags", NEW_SESSION, CLONE_FORK_FLAGS, "ok", NULL, NULL, "[-1, 1]",
     NEXT_STATE},
    {"clone with fork flags from a thread", NEW_SESSION,
     "out = []\nt = threading.Thread(target=lambda: out.append(" CLONE_FORK_FLAGS "))\n"
     "t.start()\nt.join()\nout[0]",
     "ok", NULL, NULL, "[-1, 1]", NEXT_STATE},
    {"raw fork", NEW_SESSION, "libc.syscall(57)\n't@ID@'", "sandbox_violation", "SandboxViolation",
     "fork", NULL, NEXT_NONE},
    {"raw vfork", NEW_SESSION, "libc.syscall(58)\n't@ID@'", "sandbox_violation", "SandboxViolation",
     "vfork", NULL, NEXT_NONE},
    {"clone(SIGCHLD)", NEW_SESSION, "libc.syscall(56, 17, 0, 0, 0, 0)\n't@ID@'",
     "sandbox_violation", "SandboxViolation", "clone", NULL, NEXT_NONE},
    {"fork flood from four threads", NEW_SESSION,
     "def w():\n    while True:\n        try:\n            os.fork()\n"
     "        except OSError:\n            pass\n"
     "for i in range(4):\n    threading.Thread(target=w, daemon=True).start()\n"
     "time.sleep(30)",
     "crashed", "SandboxError", "tried to start a process more than 256 times", NULL, NEXT_NONE},
    {"fork in a later call of a session", OLD_SESSION, "pid = os.fork()\n't@ID@'", "error",
     "PermissionError", "[Errno 1] Operation not permitted", NULL, NEXT_STATE},
    {"clone with fork flags in a later call of a session", OLD_SESSION, CLONE_FORK_FLAGS, "ok",
     NULL, NULL, "[-1, 1]", NEXT_STATE},
    {"read the channel", NEW_SESSION, "os.read(3, 65536)\n't@ID@'", "timeout", "TimeoutError", NULL,
     NULL, NEXT_NONE},
    {"read the channel in a later call of a session", OLD_SESSION,
     "x = 'changed'\nos.read(3, 65536)\n't@ID@'", "timeout", "TimeoutError", NULL, NULL,
     NEXT_STATE},
};

Test(hostile_forks, no_fork_creates_a_process_and_no_read_steals_a_frame)
{
	run_cases(fork_cases, sizeof(fork_cases) / sizeof(fork_cases[0]));
}

/* ---- After the call's result ---------------------------------------------------------------- */

/* A park made from the call's own code (the fork gate cannot tell it from the runner's), and a
 * loop that serves calls as the runner does: serve() parks, and runs the code of a RUN word
 * (ipc.h: IPC_PARK_WORD | cmd << 24 | sequence) with eval, answering with its result. */
#define SERVE                                                                                      \
	"def park():\n"                                                                            \
	"    return libc.syscall(56, 0x1200011, 0, 0, 0, 0)\n"                                     \
	"def exactly(n):\n"                                                                        \
	"    b = b''\n"                                                                            \
	"    while len(b) < n:\n"                                                                  \
	"        b += os.read(3, n - len(b))\n"                                                    \
	"    return b\n"                                                                           \
	"def serve():\n"                                                                           \
	"    while True:\n"                                                                        \
	"        v = park()\n"                                                                     \
	"        if v >= 0x40000000 and (v >> 24) & 0x3f == 1:\n"                                  \
	"            n, t = struct.unpack('<IB', exactly(5))\n"                                    \
	"            p = exactly(n)\n"                                                             \
	"            put(frame('J', p[:4] + outcome(eval(p[4:].decode(), globals()))))\n"

static const struct hcase after_cases[] = {
    /* Its own report, forged: that is all a forgery can change. The code then forks (the
     * process parks in its own code) and never parks again: the session is lost, its next
     * call says so. */
    {"forged result, then fork, in a session's first call", NEW_SESSION,
     "put(result(@SEQ@, 'FORGED@ID@'))\nos.fork()\ntime.sleep(60)", "ok", NULL, NULL,
     "'FORGED@ID@'", NEXT_LOST},
    {"forged result, then fork, in a later call", OLD_SESSION,
     "put(result(@SEQ@, 'FORGED@ID@'))\nos.fork()\ntime.sleep(60)", "ok", NULL, NULL,
     "'FORGED@ID@'", NEXT_LOST},
    {"forged result, then fork and a loop of frames", NEW_SESSION,
     "put(result(@SEQ@, 'FORGED@ID@'))\nos.fork()\nwhile True:\n"
     "    put(result(@SEQ@ + 1, 'FORGED@ID@'))\n    time.sleep(0.01)",
     "ok", NULL, NULL, "'FORGED@ID@'", NEXT_LOST},
    {"a thread writes results after the call's own", NEW_SESSION,
     "def w():\n    time.sleep(0.1)\n    while True:\n"
     "        put(result(@SEQ@ + 1, 'FORGED@ID@'))\n        time.sleep(0.01)\n"
     "threading.Thread(target=w, daemon=True).start()\n't@ID@'",
     "ok", NULL, NULL, "'t@ID@'", NEXT_STATE},
    {"a thread writes results for the session's next call", OLD_SESSION,
     "def w():\n    time.sleep(0.1)\n    while True:\n"
     "        put(result(@SEQ@ + 1, 'FORGED@ID@'))\n        time.sleep(0.01)\n"
     "threading.Thread(target=w, daemon=True).start()\n't@ID@'",
     "ok", NULL, NULL, "'t@ID@'", NEXT_STATE},
    {"a thread reads the channel after the call", OLD_SESSION,
     "def w():\n    while True:\n        print(os.read(3, 65536), flush=True)\n"
     "threading.Thread(target=w, daemon=True).start()\n't@ID@'",
     "ok", NULL, NULL, "'t@ID@'", NEXT_STATE},
    {"a thread forks after the call", OLD_SESSION,
     "def w():\n    time.sleep(0.05)\n    os.fork()\n"
     "threading.Thread(target=w, daemon=True).start()\n't@ID@'",
     "ok", NULL, NULL, "'t@ID@'", NEXT_STATE},
    /* The session's holder is then a process parked in user code: when it is let fork for
     * the next call, the fork returns into that code, which runs on while its child serves
     * the call. The holder must park again before anything goes on: the session is lost
     * within the step time, and the spinning holder is gone (no process is left). */
    {"forged result, then a park from user code whose holder runs on", OLD_SESSION,
     SERVE "put(result(@SEQ@, 'FORGED@ID@'))\nif park() > 0:\n    while True:\n"
           "        pass\nserve()",
     "ok", NULL, NULL, "'FORGED@ID@'", NEXT_LOST},
    /* Such a holder that parks again in time, but computes first whenever a step returns
     * into it (the fork ahead of the next call, in it and in its child; the warm-up; the
     * reap): no call runs, so neither a call's deadline nor a worker's slot holds it. A step
     * needs a few ms of CPU: past ENGINE_STEP_CPU_MS the session is lost. */
    {"forged result, then a park from user code that computes at every step", OLD_SESSION,
     SERVE "put(result(@SEQ@, 'FORGED@ID@'))\nwhile True:\n    v = park()\n"
           "    if v >= 0x40000000 and (v >> 24) & 0x3f == 1:\n"
           "        n, t = struct.unpack('<IB', exactly(5))\n        p = exactly(n)\n"
           "        put(frame('J', p[:4] + outcome(eval(p[4:].decode(), globals()))))\n"
           "        continue\n"
           "    t0 = time.process_time()\n    while time.process_time() - t0 < 1.4:\n"
           "        pass\n",
     "ok", NULL, NULL, "'FORGED@ID@'", NEXT_LOST},
    /* The bound holds for all the steps between two calls: each step under it, but more of
     * them (the fork ahead runs two processes; a runner that ends is forked again). */
    {"the same, computing less than the bound at each step, more in all", OLD_SESSION,
     SERVE "put(result(@SEQ@, 'FORGED@ID@'))\nwhile True:\n    v = park()\n"
           "    if v >= 0x40000000 and (v >> 24) & 0x3f == 1:\n"
           "        n, t = struct.unpack('<IB', exactly(5))\n        p = exactly(n)\n"
           "        put(frame('J', p[:4] + outcome(eval(p[4:].decode(), globals()))))\n"
           "        continue\n"
           "    t0 = time.process_time()\n    while time.process_time() - t0 < 0.6:\n"
           "        pass\n",
     "ok", NULL, NULL, "'FORGED@ID@'", NEXT_LOST},
    /* The same, each process the holder forks ahead computing less than the bound and then
     * ending instead of parking: its CPU counts at its exit (the build before counted none,
     * forked it again and again, and answered the next call with no process for it). */
    {"the same, each process forked for a step computing and then ending", OLD_SESSION,
     SERVE "put(result(@SEQ@, 'FORGED@ID@'))\nwhile True:\n    v = park()\n"
           "    if v == 0:\n        t0 = time.process_time()\n"
           "        while time.process_time() - t0 < 0.6:\n            pass\n"
           "        os._exit(0)\n"
           "    if v >= 0x40000000 and (v >> 24) & 0x3f == 3:\n"
           "        try:\n            while os.waitpid(-1, os.WNOHANG)[0]:\n                pass\n"
           "        except ChildProcessError:\n            pass\n",
     "ok", NULL, NULL, "'FORGED@ID@'", NEXT_LOST},
    /* A runner with threads is kept as a one-thread copy made after its result; here the
     * copy (the child of a park from user code) computes past the call's hard deadline.
     * The deadline still ends the call: timeout, nothing kept, the copy gone. */
    {"forged result, then a copy that runs past the deadline", OLD_SESSION,
     SERVE "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
           "put(result(@SEQ@, 'FORGED@ID@'))\nt0 = time.time()\nif park() > 0:\n"
           "    os._exit(0)\nwhile time.time() - t0 < 2.5:\n    pass\nx = 'changed'\nserve()",
     "timeout", "TimeoutError", NULL, NULL, NEXT_STATE},
    /* Bigger than any worker's (its texts are cut to the limits before they are sent):
     * decoding 8 MiB of JSON held the supervisor's loop for half a second per call. */
    {"a result frame bigger than any call's output", NEW_SESSION,
     "put(frame('J', struct.pack('<I', @SEQ@) + b'{\"status\":\"ok\",\"stdout\":\"' +\n"
     "    b'a' * (7 << 20) + b'\"}'))\ntime.sleep(5)",
     "crashed", "SandboxError", NULL, NULL, NEXT_NONE},
    {"a thread writes before and after the call's own result", NEW_SESSION,
     "def w():\n    while True:\n        put(frame('Z', b'x'))\n        time.sleep(0.001)\n"
     "threading.Thread(target=w, daemon=True).start()\ntime.sleep(0.2)\n't@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
};

Test(hostile_after, a_result_binds_only_its_own_call)
{
	run_cases(after_cases, sizeof(after_cases) / sizeof(after_cases[0]));
}

/* ---- Requests to the broker ------------------------------------------------------------------ */

/* Requests as runner_request makes them (ipc.h): request(kind, name) writes a REQUEST frame,
 * reply() reads the REPLY frame as (type, id, status, body). Kinds: 1 a module's source
 * (IPC_REQ_MODULE), 5 its code (IPC_REQ_MODULE_CODE), 6 a directory (IPC_REQ_MKDIR), 7 a removal
 * (IPC_REQ_REMOVE), 8 a rename (IPC_REQ_RENAME), 9 permission bits (IPC_REQ_CHMOD), 10 times
 * (IPC_REQ_UTIME). */
#define BROKER                                                                                     \
	"def request(kind, name, rid=7):\n"                                                        \
	"    put(frame('Q', struct.pack('<IB', rid, kind) + name))\n"                              \
	"def exactly(n):\n"                                                                        \
	"    b = b''\n"                                                                            \
	"    while len(b) < n:\n"                                                                  \
	"        b += os.read(3, n - len(b))\n"                                                    \
	"    return b\n"                                                                           \
	"def reply():\n"                                                                           \
	"    n, t = struct.unpack('<IB', exactly(5))\n"                                            \
	"    p = exactly(n)\n"                                                                     \
	"    rid, status = struct.unpack('<Ii', p[:8])\n"                                          \
	"    return chr(t), rid, status, p[8:]\n"

static const struct hcase broker_cases[] = {
    {"a module's code, compiled when its cached bytecode is valid", NEW_SESSION,
     BROKER "request(5, b'json.decoder')\nt, rid, st, b = reply()\n"
            "path, rest = b.split(b'\\0', 1)\n"
            "ok = (t, rid, st) == ('A', 7, 0) and path.endswith(b'/json/decoder.py')\n"
            "ok = ok and (rest[:1] == b's' and b'JSONDecoder' in rest or rest[:1] == b'c')\n"
            "'t@ID@' if ok else repr((t, rid, st, path, rest[:40]))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"a module's source", NEW_SESSION,
     BROKER "request(1, b'json')\nt, rid, st, b = reply()\npath, src = b.split(b'\\0', 1)\n"
            "ok = st == 0 and path.endswith(b'/json/__init__.py') and b'def dumps' in src\n"
            "'t@ID@' if ok else repr((t, rid, st, path))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"a module that is not there", NEW_SESSION,
     BROKER "request(5, b'no_such_module.at_all')\nt, rid, st, b = reply()\n"
            "'t@ID@' if (rid, st, b) == (7, -2, b'') else repr((t, rid, st, b))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"a name with a path in it", NEW_SESSION,
     BROKER "request(5, b'../../etc/passwd')\nreply()\n't@ID@'", "crashed", "SandboxError",
     PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"a name with a NUL in it", NEW_SESSION, BROKER "request(1, b'json\\0x')\nreply()\n't@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* A directory asked for without a workspace, with a path that is not UTF-8: refused with
     * its errno, and the call goes on (the path is never read). */
    {"a directory asked for without a workspace", NEW_SESSION,
     BROKER "request(6, struct.pack('<I', 0o755) + b'\\xff\\xfe/x/')\nt, rid, st, b = reply()\n"
            "'t@ID@' if (t, rid, st, b) == ('A', 7, -13, b'') else repr((t, rid, st, b))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    /* Removals and renames without a workspace: refused with their errno, nothing read. */
    {"a removal asked for without a workspace", NEW_SESSION,
     BROKER "request(7, struct.pack('<I', 1) + b'\\xff/x/')\nt, rid, st, b = reply()\n"
            "'t@ID@' if (t, rid, st, b) == ('A', 7, -13, b'') else repr((t, rid, st, b))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"a rename asked for without a workspace", NEW_SESSION,
     BROKER "request(8, b'a\\0/etc/passwd')\nt, rid, st, b = reply()\n"
            "'t@ID@' if (t, rid, st, b) == ('A', 7, -13, b'') else repr((t, rid, st, b))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"a rename with one path", NEW_SESSION, BROKER "request(8, b'a')\nreply()\n't@ID@'", "crashed",
     "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* Permission bits and times without a workspace: refused, nothing read; times cut short
     * end the call. */
    {"permission bits asked for without a workspace", NEW_SESSION,
     BROKER "request(9, struct.pack('<I', 0o777) + b'/etc/passwd')\nt, rid, st, b = reply()\n"
            "'t@ID@' if (t, rid, st, b) == ('A', 7, -13, b'') else repr((t, rid, st, b))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"times asked for without a workspace", NEW_SESSION,
     BROKER "request(10, struct.pack('<IqIqI', 0, 1, 0, 2, 0) + b'/etc/passwd')\n"
            "t, rid, st, b = reply()\n"
            "'t@ID@' if (t, rid, st, b) == ('A', 7, -13, b'') else repr((t, rid, st, b))",
     "ok", NULL, NULL, "'t@ID@'", NEXT_NONE},
    {"times cut short", NEW_SESSION,
     BROKER "request(10, struct.pack('<I', 0) + b'x')\nreply()\n"
            "'t@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"an unknown kind of request", NEW_SESSION, BROKER "request(11, b'json')\nreply()\n't@ID@'",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* A worker reads each reply before it asks again: asking with replies unread ends the
     * call at once (the supervisor would otherwise queue replies for it without bound). */
    {"a second request with the first reply unread", NEW_SESSION,
     BROKER "request(5, b'json.decoder')\nrequest(5, b'json.decoder', 8)\ntime.sleep(5)", "crashed",
     "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"a flood of requests, no reply read", NEW_SESSION,
     BROKER "put(b''.join(frame('Q', struct.pack('<IB', i, 1) + b'zz') for i in range(20000)))\n"
            "time.sleep(5)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    {"a request header cut short", NEW_SESSION, "put(frame('Q', b'\\x07\\0'))\ntime.sleep(5)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
    /* A reply read in part when the call ends: its rest is dropped with the call, and the
     * session's next call reads its own code (the rest read as a frame header, whose length
     * is the request id, swallowed it). */
    {"a reply read in part, then the call ends", OLD_SESSION,
     BROKER "request(5, b'no_such_module', 1 << 20)\nexactly(5)\n't@ID@'", "error",
     "WorkspaceError", "left a reply of the supervisor unread", "'t@ID@'", NEXT_STATE},
    /* The deadline asks, the code stops with TimeoutError: the timeout stays what the call
     * ended with, and the reply left unread says why nothing is kept. */
    {"a reply read in part, then the deadline asks", OLD_SESSION,
     BROKER "request(5, b'no_such_module', 1 << 20)\nexactly(5)\ntime.sleep(5)", "timeout",
     "TimeoutError", "left a reply of the supervisor unread", NULL, NEXT_STATE},
    {"a reply read in part, then the deadline", OLD_SESSION,
     BROKER "import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
            "request(5, b'no_such_module', 1 << 20)\nexactly(5)\ntime.sleep(5)",
     "timeout", NULL, NULL, NULL, NEXT_STATE},
    /* Images in a forged result are checked like the rest of it. */
    {"forged result whose image is not a PNG", NEW_SESSION,
     "o = json.loads(outcome('FORGED@ID@'))\n"
     "o['images'] = [{'width': 1, 'height': 1, 'png': 'AAAA'}]\n"
     "put(frame('J', struct.pack('<I', @SEQ@) + json.dumps(o).encode()))\ntime.sleep(5)",
     "crashed", "SandboxError", PROTOCOL_SAYS, NULL, NEXT_NONE},
};

Test(hostile_broker, requests_are_answered_from_beneath_the_roots_or_end_the_call)
{
	run_cases(broker_cases, sizeof(broker_cases) / sizeof(broker_cases[0]));
}

Test(hostile_broker, a_call_asks_at_most_its_quota)
{
	json_object *r;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	r = e2e_call(e2e_fmt("%s" BROKER "seen = []\nfor i in range(20001):\n"
	                     "    request(5, b'no_such_module', i)\n"
	                     "    t, rid, st, b = reply()\n"
	                     "    if rid != i:\n        raise ValueError(rid)\n"
	                     "    seen.append(st)\n"
	                     "[seen.count(-2), seen[-1]]",
	                     prelude),
	             "{\"timeout_seconds\":25}");
	e2e_assert_result(r, "quota", "[20000,-122]");
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* ---- Replies a call not kept left unread ----------------------------------------------- */

/* A workspace of one file, f.bin (64 KiB), in a directory of its own. */
static char ws_dir[64];

static void ws_make(void)
{
	char buf[4096];
	int fd;

	strcpy(ws_dir, "/tmp/safepy-hostile-ws-XXXXXX");
	cr_assert_not_null(mkdtemp(ws_dir), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(ws_dir, 0755), 0);
	fd = open(e2e_fmt("%s/f.bin", ws_dir), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	memset(buf, 'f', sizeof(buf));
	for (int i = 0; i < 16; i++)
		cr_assert_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
}

static void ws_fini(void)
{
	DIR *d;
	struct dirent *e;

	e2e_cleanup();
	if (!ws_dir[0])
		return;
	if ((d = opendir(ws_dir))) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..")))
				(void)unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	(void)rmdir(ws_dir);
	ws_dir[0] = '\0';
}

/* An inotify watch for the end of the file at path: IN_DELETE_SELF comes once it has no link
 * and no one holds it any more (an fd in a process, or queued in a socket). Returns the inotify
 * fd. */
static int watch_end(const char *path)
{
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	cr_assert_geq(in, 0, "inotify: %s", strerror(errno));
	cr_assert_geq(inotify_add_watch(in, path, IN_DELETE_SELF), 0, "watch %s: %s", path,
	              strerror(errno));
	return in;
}

/* Did the file watched by in end within ms? Closes in. */
static int ended_within(int in, int ms)
{
	struct pollfd p = {.fd = in, .events = POLLIN};
	char buf[4096] __attribute__((aligned(8)));
	int64_t end = mcpc_now_ms() + ms;
	int ended = 0;

	while (!ended && mcpc_now_ms() < end) {
		ssize_t n;

		if (poll(&p, 1, (int)(end - mcpc_now_ms())) <= 0)
			continue;
		n = read(in, buf, sizeof(buf));
		for (ssize_t off = 0; n > 0 && off < n;) {
			const struct inotify_event *ev = (const void *)(buf + off);
			if (ev->mask & IN_DELETE_SELF)
				ended = 1;
			off += (ssize_t)(sizeof(*ev) + ev->len);
		}
	}
	close(in);
	return ended;
}

/* The name of the hidden copy the supervisor makes for a write open, once it shows in the
 * workspace (within ms), or NULL. */
static const char *hidden_copy(int ms)
{
	int64_t end = mcpc_now_ms() + ms;

	while (mcpc_now_ms() < end) {
		DIR *d = opendir(ws_dir);
		struct dirent *e;
		const char *found = NULL;

		cr_assert_not_null(d);
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, ".safepy-tmp-", 12))
				found = e2e_fmt("%s/%s", ws_dir, e->d_name);
		closedir(d);
		if (found)
			return found;
		usleep(2000);
	}
	return NULL;
}

/* How many fds of the engine's processes (the zygote and every worker) are files of the
 * workspace. */
static int workspace_fds(void)
{
	struct mcpc_proc procs[MAXP];
	int n = e2e_descendants(procs, MAXP), count = 0;

	for (int i = 0; i < n; i++) {
		const char *dir = e2e_fmt("/proc/%d/fd", (int)procs[i].pid);
		DIR *d = opendir(dir);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			char link[512];
			ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
			if (len <= 0)
				continue;
			link[len] = '\0';
			if (strstr(link, ws_dir)) {
				cr_log_info("process %d: fd %s -> %s", (int)procs[i].pid, e->d_name,
				            link);
				count++;
			}
		}
		closedir(d);
	}
	return count;
}

/* A call that opens a file of the workspace and never reads the reply (its fd rides on it) is
 * not kept. The reply stayed queued in the session's channel until the session's next call:
 * the supervisor held its memory and the file (an unlinked copy's disk, up to 256 MiB per
 * session). It goes when the call ends: here the file, removed from the workspace, ends
 * though the session runs no other call. */
Test(hostile_replies, a_reply_left_unread_goes_when_its_call_ends)
{
	const char *h, *f;
	json_object *r;
	int in;

	ws_make();
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--workspace", ws_dir), NULL);
	h = state_session();
	r = e2e_call(e2e_fmt("%s"
	                     "put(frame('Q', struct.pack('<IBI', 7, 2, 0) + b'f.bin'))\n"
	                     "time.sleep(0.2)\n"
	                     "x = 'changed'\n"
	                     "'asked'",
	                     prelude),
	             session_args(h, NULL));
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "WorkspaceError", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "left a reply of the supervisor unread"), "%s",
	          mcpc_json(r));
	f = e2e_fmt("%s/f.bin", ws_dir);
	in = watch_end(f);
	cr_assert_eq(unlink(f), 0);
	cr_assert(ended_within(in, 3000),
	          "the file a call not kept was given is still held after it ended; log:\n%s",
	          e2e_log());
	cr_assert_eq(workspace_fds(), 0);
	e2e_assert_result(e2e_call("x", session_args(h, NULL)), "x", "\"state\"");
	e2e_stop();
}

/* A large file copied for a call (an append) is copied a piece at a time between the loop's
 * other work while its request waits, unanswered: a runner that asks again meanwhile asks out
 * of turn. Its call ends as one that broke the protocol, the copy under way goes with it (no
 * hidden file is left, no process of the engine holds a file of the workspace), the file is as
 * it was, and the next call appends to it. */
Test(hostile_replies, a_request_made_while_its_copy_is_made_ends_the_call)
{
	static char buf[1 << 16];
	const char *big;
	struct stat st;
	json_object *r;
	int fd;

	ws_make();
	big = e2e_fmt("%s/big.bin", ws_dir);
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	memset(buf, 'b', sizeof(buf));
	for (int i = 0; i < 1024; i++) /* 64 MiB: sixteen pieces */
		cr_assert_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--workspace", ws_dir, "--workspace-write"),
	               NULL);
	r = e2e_call(e2e_fmt("%s"
	                     "put(frame('Q', struct.pack('<IBI', 7, 2, 2) + b'big.bin') +\n"
	                     "    frame('Q', struct.pack('<IBI', 8, 2, 0) + b'f.bin'))\n"
	                     "time.sleep(5)\n"
	                     "'asked'",
	                     prelude),
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), PROTOCOL_SAYS), "%s", mcpc_json(r));
	cr_assert_null(hidden_copy(200), "the copy of a call that ended was left; log:\n%s",
	               e2e_log());
	cr_assert_eq(workspace_fds(), 0, "a process of the engine holds a file of the workspace");
	cr_assert_eq(stat(big, &st), 0);
	cr_assert_eq(st.st_size, 64 << 20);
	e2e_expect_result("f = open('big.bin', 'a')\n"
	                  "f.write('Z')\n"
	                  "f.close()\n"
	                  "d = open('big.bin', 'rb').read()\n"
	                  "[len(d), d.count(b'b'), d[-1:].decode()]",
	                  "[67108865,67108864,\"Z\"]");
	cr_assert_eq(stat(big, &st), 0);
	cr_assert_eq(st.st_size, (64 << 20) + 1);
	cr_assert_null(hidden_copy(50));
	e2e_stop();
}

/* A session's first call forges its result and parks in its own code: it is the session's
 * holder, and every step between calls (the reap, the warm-up, the fork) returns into that
 * code, which takes whatever waits in the channel (recvmsg of fd 3). Its later calls open a
 * file of the workspace for writing (the supervisor makes a hidden copy, its fd rides on the
 * reply) and leave the reply unread: not kept, the copy unlinked. The reply waited in the
 * channel until the next call, so the holder took the copy's fd at the reap, and the calls
 * forked from it (given no fd, so their fds were not checked) kept it and wrote through it
 * outside any quota (60 of them per session, each up to 256 MiB of disk for the session's
 * life). Nothing queued outlives a call not kept: the holder takes nothing, no process of the
 * session holds a file of the workspace, and each copy ends with its call. */
Test(hostile_replies, a_holder_in_its_own_code_takes_no_reply_of_a_call_not_kept)
{
	static const char code[] =
	    "libc.syscall.restype = ctypes.c_long\n"
	    "def park():\n"
	    "    return libc.syscall(56, 0x1200011, 0, 0, 0, 0)\n"
	    "def exactly(n):\n"
	    "    b = b''\n"
	    "    while len(b) < n:\n"
	    "        b += os.read(3, n - len(b))\n"
	    "    return b\n"
	    "class iovec(ctypes.Structure):\n"
	    "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
	    "class msghdr(ctypes.Structure):\n"
	    "    _fields_ = [('name', ctypes.c_void_p), ('namelen', ctypes.c_uint32),\n"
	    "                ('iov', ctypes.POINTER(iovec)), ('iovlen', ctypes.c_size_t),\n"
	    "                ('control', ctypes.c_void_p), ('controllen', ctypes.c_size_t),\n"
	    "                ('flags', ctypes.c_int)]\n"
	    "held, tries, got = [], 0, 0\n"
	    "def grab():\n"
	    "    global tries, got\n"
	    "    data = ctypes.create_string_buffer(1 << 16)\n"
	    "    cm = ctypes.create_string_buffer(64)\n"
	    "    iov = iovec(ctypes.cast(data, ctypes.c_void_p), 1 << 16)\n"
	    "    m = msghdr(None, 0, ctypes.pointer(iov), 1, ctypes.cast(cm, ctypes.c_void_p), 64, "
	    "0)\n"
	    "    n = libc.recvmsg(3, ctypes.byref(m), 0x40)\n"
	    "    tries += 1\n"
	    "    if n > 0:\n"
	    "        got += 1\n"
	    "    if n > 0 and m.controllen >= 20:\n"
	    "        ln, lvl, typ = struct.unpack('<QII', cm.raw[:16])\n"
	    "        if (lvl, typ) == (1, 1):\n"
	    "            held.append(struct.unpack('<i', cm.raw[16:20])[0])\n"
	    "put(result(1, 'FORGED'))\n"
	    "while True:\n"
	    "    v = park()\n"
	    "    if v >= 0x40000000 and (v >> 24) & 0x3f == 1:\n"
	    "        n, t = struct.unpack('<IB', exactly(5))\n"
	    "        p = exactly(n)\n"
	    "        put(frame('J', p[:4] + outcome(eval(p[4:].decode(), globals()))))\n"
	    "    elif v >= 0x40000000:\n"
	    "        grab()\n";
	const char *h;
	json_object *r;

	ws_make();
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--workspace", ws_dir, "--workspace-write"),
	               NULL);
	/* A first call binds the server's workers to it (tracing): the forger's process is kept
	 * as it is, parked in its own code. */
	e2e_expect_result("6 * 7", "42");
	r = e2e_expect_status(e2e_fmt("%s%s", prelude, code), "{\"session\":\"new\"}", "ok");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "'FORGED'", "%s", mcpc_json(r));
	h = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	for (int i = 0; i < 3; i++) {
		long long id = (long long)e2e_srv.next_id;
		const char *copy;
		int in;

		cr_assert_eq(mcpc_call_async(&e2e_srv,
		                             "put(frame('Q', struct.pack('<IBI', 7, 2, 4) + "
		                             "b'f.bin')) or time.sleep(0.3) or 'asked'",
		                             session_args(h, NULL)),
		             id);
		copy = hidden_copy(5000);
		cr_assert_not_null(copy, "no copy was made for the write open; log:\n%s",
		                   e2e_log());
		in = watch_end(copy);
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 10000));
		cr_assert_not_null(r, "no answer; log:\n%s", e2e_log());
		cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
		cr_assert(
		    strstr(mcpc_err_str(r, "message"), "left a reply of the supervisor unread"),
		    "%s", mcpc_json(r));
		cr_assert(
		    ended_within(in, 3000),
		    "call %d: the copy of a call not kept is still held after it ended; log:\n%s",
		    i, e2e_log());
	}
	/* The holder tried at every step between calls, and the channel was empty each time. */
	r = e2e_call("[held, tries > 0, got]", session_args(h, NULL));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "[[], True, 0]", "%s", mcpc_json(r));
	cr_assert_eq(workspace_fds(), 0, "a process of the engine holds a file of the workspace");
	/* Other calls read the workspace as before. */
	e2e_expect_result("open('f.bin').read(3)", "\"fff\"");
	e2e_stop();
}

/* Every fault of a traced thread stops it for the tracer, and SIGCHLD comes again for each:
 * threads that fault without end (a SIGSEGV handler that returns) kept the supervisor's loop
 * taking their statuses, so pings and other sessions waited for seconds. The loop serves each
 * in turn, and a process past ENGINE_SIGNALS_MAX such stops is ended (it cost the supervisor
 * half a core for the whole time limit, and other sessions' calls 2-4 times their p99): the
 * calls end as crashed, long before their deadline. */
Test(hostile_after, threads_that_fault_without_end_do_not_hold_the_loop)
{
	static const char code[] = "import signal, ctypes, threading, time\n"
	                           "threading.stack_size(1 << 16)\n"
	                           "signal.signal(signal.SIGSEGV, lambda *a: None)\n"
	                           "libc = ctypes.CDLL(None)\n"
	                           "for i in range(60):\n"
	                           "    threading.Thread(target=libc.strlen, "
	                           "args=(ctypes.c_void_p(8),), daemon=True).start()\n"
	                           "time.sleep(30)\n";
	int64_t ids[2], worst = 0, t_end, t_start;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--max-workers", "3"), NULL);
	e2e_expect_result("6 * 7", "42");
	t_start = mcpc_now_ms();
	for (int i = 0; i < 2; i++)
		ids[i] =
		    mcpc_call_async(&e2e_srv, code, "{\"session\":\"new\",\"timeout_seconds\":20}");
	/* Pings for 2.8 s: the threads start once their worker is up, and fault until it ends. */
	t_end = mcpc_now_ms() + 2800;
	while (mcpc_now_ms() < t_end) {
		int64_t t0 = mcpc_now_ms();
		cr_assert_not_null(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 10000)));
		if (mcpc_now_ms() - t0 > worst)
			worst = mcpc_now_ms() - t0;
		usleep(50000);
	}
	for (int i = 0; i < 2; i++) {
		json_object *r = e2e_hold(mcpc_wait_int_id(&e2e_srv, ids[i], 30000));
		cr_assert_str_eq(mcpc_status(r) ? mcpc_status(r) : "", "crashed", "%s",
		                 mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "message"), "more than 256 signals"), "%s",
		          mcpc_json(r));
	}
	cr_assert_lt(mcpc_now_ms() - t_start, 15000, "the calls ran %lld ms",
	             (long long)(mcpc_now_ms() - t_start));
	cr_log_info("worst ping %lld ms", (long long)worst);
	/* Before: 200 ms to over a second. The threads still take the CPU. */
	cr_assert_lt(worst, 250, "a ping took %lld ms while threads faulted", (long long)worst);
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* The limits on a call's report hold whatever its worker writes: a RESULT frame of its own is
 * cut to --max-output and the result's limit (64 KiB) as the worker's capture would have cut
 * it. The session is lost (the forger forks), nothing else is touched. */
Test(hostile_after, a_forged_result_is_held_to_the_output_limits)
{
	json_object *r, *sc;
	const char *text;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--max-output", "1K"), NULL);
	/* A first call binds the server's workers to it (tracing): the forger's is answered when
	 * it parks at its fork, not when its copy would park (a_call_is_answered_only_once...). */
	e2e_expect_status("1", "{\"session\":\"new\"}", "ok");
	r = e2e_call(
	    e2e_fmt(
	        "%s"
	        "o = json.loads(outcome('r'))\n"
	        "o.update(stdout='x' * 600000, stderr='e' * 300000, logs='l' * 600000,\n"
	        "         result='y' * 200000, result_repr='z' * 200000)\n"
	        "o['error'] = {'type': 'E', 'message': 'm' * 200000, 'traceback': 't' * 200000}\n"
	        "put(frame('J', struct.pack('<I', 1) + json.dumps(o).encode()))\n"
	        "os.fork()\ntime.sleep(60)",
	        prelude),
	    "{\"session\":\"new\"}");
	sc = mcpc_structured(r);
	cr_assert_not_null(sc, "%.2000s", mcpc_json(r));
	for (int i = 0; i < 3; i++) {
		const char *name = (const char *[]){"stdout", "stderr", "logs"}[i];
		text = mcpc_sc_str(r, name);
		cr_assert(text && strlen(text) <= 1024 + 64 && text[0] == "xel"[i], "%s: %zu bytes",
		          name, text ? strlen(text) : 0);
	}
	text = mcpc_sc_str(r, "result_repr");
	cr_assert(text && strlen(text) <= 65536 + 64 && text[0] == 'z', "result_repr: %zu bytes",
	          text ? strlen(text) : 0);
	cr_assert(json_object_is_type(e2e_member(sc, "result"), json_type_null),
	          "a result of 200000 characters came through");
	cr_assert(strlen(mcpc_err_str(r, "message")) <= 65536 + 200, "message: %zu bytes",
	          strlen(mcpc_err_str(r, "message")));
	cr_assert(strlen(mcpc_err_str(r, "traceback")) <= 65536 + 64);
	cr_assert(json_object_get_boolean(e2e_member(sc, "truncated")));
	/* Honest output is cut the same way. */
	r = e2e_call("print('a' * 5000)\n'b' * 100000", NULL);
	cr_assert_leq(strlen(mcpc_sc_str(r, "stdout")), 1024 + 64);
	cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* A forged failure without its error was answered with the server's own out-of-memory text
 * ("The server ran out of memory ... Retry later."), blaming the server: it says the report
 * gave no error now. It changes only its own call's answer. */
Test(hostile_after, a_failure_reported_without_its_error_says_so)
{
	json_object *r;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	e2e_expect_status("1", "{\"session\":\"new\"}", "ok");
	r = e2e_call(e2e_fmt("%s"
	                     "o = json.loads(outcome('r'))\n"
	                     "o['status'] = 'error'\n"
	                     "put(frame('J', struct.pack('<I', 1) + json.dumps(o).encode()))\n"
	                     "os.fork()\ntime.sleep(60)",
	                     prelude),
	             "{\"session\":\"new\"}");
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "Error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "The call failed, and its report gave no error.", "%s", mcpc_json(r));
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* A runner killed in the middle of the frame it writes leaves nothing of it in the supervisor:
 * each such frame of 8 MiB stayed in its session's channel until the session ran again. */
Test(hostile_after, a_frame_cut_by_the_end_of_its_call_is_dropped)
{
	const char *sessions[6];
	long before, after;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	for (int i = 0; i < 6; i++)
		sessions[i] = e2e_fmt(
		    "%s", mcpc_sc_str(e2e_expect_status("x = 1", "{\"session\":\"new\"}", "ok"),
		                      "session"));
	before = e2e_proc_status(e2e_srv.pid, "VmRSS");
	for (int i = 0; i < 6; i++)
		e2e_expect_status(
		    e2e_fmt("%s"
		            "import signal\n"
		            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
		            "put(struct.pack('<IB', (8 << 20) - 1, ord('J')) + b'x' "
		            "* ((8 << 20) - 2))\n"
		            "time.sleep(5)",
		            prelude),
		    session_args(sessions[i], "\"timeout_seconds\":1"), "timeout");
	after = e2e_proc_status(e2e_srv.pid, "VmRSS");
	cr_assert_gt(before, 0);
	/* Before: 48 MiB more. One payload's worth may stay in the allocator's free lists. */
	cr_assert_lt(after - before, 16 * 1024, "the supervisor grew from %ld to %ld KiB", before,
	             after);
	for (int i = 0; i < 6; i++)
		e2e_assert_result(e2e_call("x", session_args(sessions[i], NULL)), "x", "1");
	e2e_stop();
}

/* A call that forges its result, then begins an 8 MiB frame it never ends and parks: the
 * supervisor held the frame's buffer for as long as the session lived (8 sessions: 64 MiB
 * outside every limit). A call that parks with a frame unfinished is not kept: it says so, its
 * session is as it was, and the buffer goes with its process. */
Test(hostile_after, a_frame_left_unfinished_at_a_park_is_not_kept)
{
	const char *sessions[6];
	long before, after;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	for (int i = 0; i < 6; i++)
		sessions[i] = e2e_fmt(
		    "%s", mcpc_sc_str(e2e_expect_status("x = 1", "{\"session\":\"new\"}", "ok"),
		                      "session"));
	before = e2e_proc_status(e2e_srv.pid, "VmRSS");
	for (int i = 0; i < 6; i++) {
		json_object *r =
		    e2e_call(e2e_fmt("%s"
		                     "x = 2\n"
		                     "put(result(2, 'FORGED'))\n"
		                     "put(struct.pack('<IB', (8 << 20) - 1, ord('Q')) + b'\\x01' "
		                     "* ((8 << 20) - 3))\n"
		                     "while True:\n"
		                     "    try:\n"
		                     "        os.fork()\n"
		                     "    except OSError:\n"
		                     "        pass\n",
		                     prelude),
		             session_args(sessions[i], NULL));
		cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "message"), "unfinished"), "%s", mcpc_json(r));
	}
	after = e2e_proc_status(e2e_srv.pid, "VmRSS");
	cr_assert_gt(before, 0);
	cr_assert_lt(after - before, 16 * 1024, "the supervisor grew from %ld to %ld KiB", before,
	             after);
	for (int i = 0; i < 6; i++)
		e2e_assert_result(e2e_call("x", session_args(sessions[i], NULL)), "x", "1");
	e2e_stop();
}

/* A session's first call forges its result and parks in its own code: it is the session's holder.
 * When the session's next call comes, its fork of that call's process returns into the code,
 * which begins a frame of 8 MiB, never ends it and parks again. Only a runner parked after its
 * result was checked for a frame left unfinished: the supervisor held each such frame's buffer
 * for as long as its session lived (6 sessions: 48 MiB outside every limit). A process that
 * parks mid-frame breaks the protocol at any park: the frame goes at once and the holder's
 * session is lost. */
Test(hostile_after, a_holder_that_parks_mid_frame_loses_its_session)
{
	const char *sessions[6];
	long before, after;
	json_object *r;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	e2e_expect_result("6 * 7", "42");
	before = e2e_proc_status(e2e_srv.pid, "VmRSS");
	for (int i = 0; i < 6; i++) {
		r = e2e_expect_status(
		    e2e_fmt("%s"
		            "put(result(1, 'FORGED'))\n"
		            "def park():\n"
		            "    while True:\n"
		            "        try:\n"
		            "            return os.fork()\n"
		            "        except OSError:\n"
		            "            time.sleep(0.01)\n"
		            "w, begun = park(), False\n"
		            "while True:\n"
		            "    if w >= 0x40000000 and (w >> 24) & 0x3f == 1:\n"
		            "        os._exit(0)\n"
		            "    if w >= 0x40000000 and (w >> 24) & 0x3f == 3:\n"
		            "        try:\n"
		            "            while os.waitpid(-1, os.WNOHANG)[0]:\n"
		            "                pass\n"
		            "        except ChildProcessError:\n"
		            "            pass\n"
		            "    elif 0 < w < 0x40000000 and not begun:\n"
		            "        begun = True\n"
		            "        put(struct.pack('<IB', 8 << 20, ord('J')) +\n"
		            "            b'x' * ((8 << 20) - 16))\n"
		            "    w = park()\n",
		            prelude),
		    "{\"session\":\"new\"}", "ok");
		sessions[i] = e2e_fmt("%s", mcpc_sc_str(r, "session"));
		/* The holder forks this call's process, and begins its frame. */
		r = e2e_call("'t'", session_args(sessions[i], NULL));
		cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
		cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError", "%s", mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "message"), PROTOCOL_SAYS), "%s", mcpc_json(r));
	}
	after = e2e_proc_status(e2e_srv.pid, "VmRSS");
	cr_assert_gt(before, 0);
	/* Before: 48 MiB more. One payload's worth may stay in the allocator's free lists. */
	cr_assert_lt(after - before, 16 * 1024, "the supervisor grew from %ld to %ld KiB", before,
	             after);
	cr_assert(strstr(e2e_log(), "parked with a frame unfinished"), "log:\n%s", e2e_log());
	r = e2e_call("'t'", session_args(sessions[0], NULL));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError", "%s", mcpc_json(r));
	/* Honest sessions fork their next process, warm it up and keep their state. */
	r = e2e_expect_status("x = 5\nx", "{\"session\":\"new\"}", "ok");
	sessions[0] = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	for (int i = 1; i <= 3; i++) {
		e2e_assert_result(
		    e2e_call(e2e_fmt("x += %d\nx", i), session_args(sessions[0], NULL)), "x",
		    e2e_fmt("%d", 5 + i * (i + 1) / 2));
		usleep(300 * 1000);
	}
	e2e_stop();
}

/* A session's process that forges its result and parks in its own code, then never reaps the
 * processes that ran its later calls (each ends at once), reaches its own bound on tasks: its
 * fork fails. That was taken for the machine out of processes (the log's error for the whole
 * server, new workers held back, the session's calls blaming the server user's limits). It is
 * the session's matter: its calls say its own bound is one of the limits, the server logs no
 * shortage, and other sessions run. */
Test(hostile_after, a_session_that_never_reaps_fails_alone)
{
	const char *h;
	json_object *r = NULL;
	int failed = 0, calls = 0;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	h = e2e_fmt("%s", mcpc_sc_str(e2e_expect_status("x = 1", "{\"session\":\"new\"}", "ok"),
	                              "session"));
	e2e_expect_status(e2e_fmt("%s"
	                          "put(result(2, 'FORGED'))\n"
	                          "while True:\n"
	                          "    try:\n"
	                          "        r = os.fork()\n"
	                          "    except OSError:\n"
	                          "        continue\n"
	                          "    if r >= 0x40000000 and (r >> 24) & 0x3f == 1:\n"
	                          "        os._exit(0)\n",
	                          prelude),
	                  session_args(h, NULL), "ok");
	for (; calls < 100 && !failed; calls++) {
		r = e2e_call("x", session_args(h, NULL));
		failed = strcmp(mcpc_status(r), "crashed") == 0 && mcpc_err_str(r, "type") &&
		         strcmp(mcpc_err_str(r, "type"), "ResourceError") == 0;
	}
	cr_assert(failed, "the session's fork never failed: the test proves nothing; log:\n%s",
	          e2e_log());
	cr_log_info("the session's fork failed at call %d: %s", calls, mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "the session's own bound"), "%s",
	          mcpc_json(r));
	cr_assert_null(strstr(e2e_log(), "cannot create worker processes"),
	               "the session's fork was taken for the server's; log:\n%s", e2e_log());
	for (int i = 0; i < 3; i++)
		e2e_assert_result(
		    e2e_expect_status(e2e_fmt("%d * 2", i), "{\"session\":\"new\"}", "ok"), "i * 2",
		    e2e_fmt("%d", i * 2));
	e2e_stop();
}

/* The user's trace and profile functions never run between calls: the warm-up of the next
 * call's process runs without them (it runs outside any call, where a hook could read what
 * the supervisor left in the channel), and they are back for the next call. */
Test(hostile_after, the_warm_up_runs_no_trace_or_profile_function)
{
	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	e2e_expect_result("import sys\n"
	                  "seen = set()\n"
	                  "def hook(frame, event, arg):\n"
	                  "    seen.add(frame.f_code.co_name)\n"
	                  "sys.settrace(hook)\n"
	                  "sys.setprofile(hook)\n"
	                  "1",
	                  "1");
	/* From its second commit on, a session's next process is forked and warmed up after
	 * each call; a call that comes before the warm-up skips it, so these wait for it. */
	e2e_expect_result("2", "2");
	usleep(500 * 1000);
	e2e_expect_result("3", "3");
	usleep(500 * 1000);
	e2e_expect_result("def probe():\n    return 4\nprobe()\nsys.settrace(None)\n"
	                  "sys.setprofile(None)\n"
	                  "sorted(n for n in seen if n in ('_f', '<listcomp>', 'probe'))",
	                  "[\"probe\"]");
	e2e_stop();
}

/* A call may replace or block the deadline's handler (here with the Python layer off, as any
 * call can once it reaches the real signal module): the next call of its session still gets
 * its TimeoutError at its limit, not only the kill 0.5 s later. */
Test(hostile_after, each_call_gets_its_own_deadline_handler)
{
	json_object *r;
	const char *h;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--allow-import", "signal"), NULL);
	r = e2e_expect_status("import signal\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
	                      "signal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"
	                      "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n1",
	                      "{\"session\":\"new\"}", "ok");
	h = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	r = e2e_call("import time\ntry:\n    time.sleep(10)\nexcept TimeoutError as e:\n"
	             "    print('raised:', e, flush=True)\n    raise",
	             session_args(h, "\"timeout_seconds\":1"));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stdout") ? mcpc_sc_str(r, "stdout") : "", "raised:"),
	          "the code got no TimeoutError at its limit: %s", mcpc_json(r));
	e2e_stop();
}

/* The first workers of a server are not bound to it by tracing yet: a call's state there is
 * kept in a one-thread copy the worker forks. A call that forges its result and forks in its
 * own code gets that copy running its code: the call is answered only once the copy parks, so
 * the copy runs under the call's deadline and in its worker slot, never after the answer. */
Test(hostile_after, a_call_is_answered_only_once_its_copy_has_parked)
{
	json_object *r;
	int64_t t0, took;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
	t0 = mcpc_now_ms();
	r = e2e_call(e2e_fmt("%s%s", prelude,
	                     "put(result(1, 'FORGED'))\n"
	                     "if os.fork() == 0:\n"
	                     "    while True:\n"
	                     "        pass\n"
	                     "'t'"),
	             "{\"session\":\"new\",\"timeout_seconds\":1}");
	took = mcpc_now_ms() - t0;
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert_geq(took, 900, "answered after %lld ms: %s", (long long)took, mcpc_json(r));
	cr_assert_null(strstr(mcpc_json(r), "FORGED"), "%s", mcpc_json(r));
	cr_assert(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 1000)));
	/* An honest call's copy still keeps its state. */
	r = e2e_expect_status("x = 5\nx", "{\"session\":\"new\"}", "ok");
	r = e2e_expect_status("x + 1", e2e_fmt("{\"session\":\"%s\"}", mcpc_sc_str(r, "session")),
	                      "ok");
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "result")), "6");
	e2e_stop();
}

/* The supervisor kills a runner whose one-thread copy exists (the copy is the state now): a
 * copy that then ended instead of parking (an exit, a crash) had the call answered "killed
 * from outside the sandbox (SIGKILL)", the supervisor's own kill. How the copy ended is the
 * call's answer. */
Test(hostile_after, a_copy_that_ends_instead_of_parking_is_told_as_it_ended)
{
	static const struct {
		const char *child, *says;
	} cases[] = {
	    {"os._exit(0)", "exit status 0"},
	    {"ctypes.string_at(8)", "SEGV"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *r;
		const char *msg;

		e2e_start_with(VERSION, ARGS(UNSAFE_ARGS), NULL);
		r = e2e_call(e2e_fmt("%s"
		                     "def park():\n"
		                     "    return libc.syscall(56, 0x1200011, 0, 0, 0, 0)\n"
		                     "put(result(1, 'F'))\n"
		                     "if park() == 0:\n"
		                     "    %s\n"
		                     "while True:\n"
		                     "    park()\n",
		                     prelude, cases[i].child),
		             "{\"session\":\"new\",\"timeout_seconds\":5}");
		msg = mcpc_err_str(r, "message");
		cr_assert_str_eq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
		cr_assert_null(strstr(msg, "killed from outside"), "%s", mcpc_json(r));
		cr_assert(strstr(msg, cases[i].says), "%s: %s", cases[i].child, mcpc_json(r));
		cr_assert(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 1000)));
		e2e_stop();
	}
}

/* ---- What a runner printed, read from its memory ------------------------------------------ */

/* A call's code that ignores the deadline's ask (SIGUSR1), so that only the hard kill ends it,
 * and may rewrite the keeps of its output (ipc.h) through keep(s), a view of keep s's words. */
static const char *keeps_code(unsigned long long at, const char *body)
{
	return e2e_fmt(
	    "import ctypes, os\n"
	    "libc = ctypes.CDLL(None, use_errno=True)\n"
	    "libc.signal(10, ctypes.c_void_p(1))\n"
	    "def keep(s):\n"
	    "    return (ctypes.c_uint64 * %zu).from_address(%llu + %zu * s)\n"
	    "HALF, HEAD, HEAD_LEN, RING, RING_POS, RING_LEN, TOTAL = %zu, %zu, %zu, %zu, "
	    "%zu, %zu, %zu\n"
	    "%s",
	    sizeof(struct ipc_capture_keep) / 8, at, sizeof(struct ipc_capture_keep),
	    offsetof(struct ipc_capture_keep, half) / 8,
	    offsetof(struct ipc_capture_keep, head) / 8,
	    offsetof(struct ipc_capture_keep, head_len) / 8,
	    offsetof(struct ipc_capture_keep, ring) / 8,
	    offsetof(struct ipc_capture_keep, ring_pos) / 8,
	    offsetof(struct ipc_capture_keep, ring_len) / 8,
	    offsetof(struct ipc_capture_keep, total) / 8, body);
}

#define SPIN "while True:\n    pass\n"

/* A runner killed at the hard deadline, or dying, cannot send what it printed: the supervisor
 * reads it from its memory. Keeps the runner rewrote change only its own call's output, held to
 * the output limit; keeps it made unreadable or of another size give no output; the server
 * answers on time, a ping at once, and another session's state stays. */
Test(hostile_after, keeps_a_runner_rewrote_change_only_its_own_output)
{
	static const struct {
		const char *name, *body, *status, *out;
	} cases[] = {
	    {"honest, killed at the hard deadline", "print('MARK-A')\n" SPIN, "timeout",
	     "MARK-A\n"},
	    {"its stdout pointed at its own bytes",
	     "print('MARK-B')\nb = ctypes.create_string_buffer(b'FORGED\\xff')\nk = keep(0)\n"
	     "k[HEAD] = ctypes.addressof(b)\nk[HEAD_LEN] = 7\nk[RING_LEN] = 0\nk[TOTAL] = 7\n" SPIN,
	     "timeout", "FORGED\xef\xbf\xbd"},
	    {"lengths and positions beyond any keep",
	     "print('MARK-C')\nk = keep(0)\nk[HEAD_LEN] = 1 << 63\nk[RING_POS] = (1 << 64) - 1\n"
	     "k[RING_LEN] = 1 << 62\nk[TOTAL] = (1 << 64) - 1\n" SPIN,
	     "timeout", NULL},
	    {"a keep at an address not mapped",
	     "print('MARK-D')\nk = keep(1)\nk[HEAD] = 8\nk[HEAD_LEN] = 4\nk[TOTAL] = 4\n" SPIN,
	     "timeout", ""},
	    {"a keep of another size", "print('MARK-E')\nkeep(2)[HALF] = 12345\n" SPIN, "timeout",
	     ""},
	    {"honest, aborted", "print('MARK-F')\nos.abort()\n", "crashed", "MARK-F\n"},
	    {"honest, killed by the filter", "print('MARK-G')\nlibc.socket(2, 1, 0)\n" SPIN,
	     "sandbox_violation", "MARK-G\n"},
	};
	unsigned long long at = 0;
	const char *w, *at_text;
	char *log = NULL;

	e2e_start_with(VERSION, ARGS(UNSAFE_ARGS, "--log-level", "debug"), NULL);
	w = e2e_fmt("%s",
	            mcpc_sc_str(e2e_expect_status("w = 'witness'", "{\"session\":\"new\"}", "ok"),
	                        "session"));
	log = mcpc_stderr(&e2e_srv);
	at_text = strstr(log, "output keeps at 0x");
	cr_assert_not_null(at_text, "the log does not say where the keeps are:\n%s", log);
	at = strtoull(at_text + strlen("output keeps at "), NULL, 16);
	free(log);
	cr_assert_neq(at, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t t0 = mcpc_now_ms(), took;
		json_object *r =
		    e2e_call_on(&e2e_srv, keeps_code(at, cases[i].body),
		                e2e_fmt("{\"session\":\"new\",\"timeout_seconds\":%g}", LIMIT_S),
		                (int)(LIMIT_S * 1000) + 5000);
		const char *out = mcpc_sc_str(r, "stdout");
		size_t n = out ? (size_t)json_object_get_string_len(
		                     e2e_member(mcpc_structured(r), "stdout"))
		               : 0;

		took = mcpc_now_ms() - t0;
		cr_assert_leq(took, (int64_t)(LIMIT_S * 1000) + DEADLINE_SLACK_MS,
		              "%s: answered after %lld ms", cases[i].name, (long long)took);
		ping_within("after the case", cases[i].name);
		cr_assert_str_eq(mcpc_status(r), cases[i].status, "%s: %s", cases[i].name,
		                 mcpc_json(r));
		cr_assert_not_null(out, "%s: %s", cases[i].name, mcpc_json(r));
		if (cases[i].out)
			cr_assert_str_eq(out, cases[i].out, "%s: %s", cases[i].name, mcpc_json(r));
		else /* the head's stale bytes after the text: NULs, other bytes of its own */
			cr_assert(n <= 65536 + 64 && memmem(out, n, " bytes cut]", 11) &&
			              strncmp(out, "MARK-C\n", 7) == 0,
			          "%s: %zu bytes: %.300s", cases[i].name, n, out);
		e2e_assert_result(e2e_call("w", session_args(w, NULL)), "w", "\"witness\"");
	}
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}
