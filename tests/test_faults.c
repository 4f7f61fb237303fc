/* test_faults.c - the call engine under faults, against the real safepy binary over MCP
 * stdio: processes of the server's tree killed with SIGKILL from outside (what the OOM killer
 * does in a cgroup), one at a time at chosen points, then at random every 200 ms under a mixed
 * load of about 2,000 calls. Every call is answered once with its own outcome, the server
 * stays up and returns to idle, a session whose process died says so, the others keep their
 * state. Code reads its own pid (os is allowed; the Python layer stays on). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define VERSION    "2025-11-25"
/* What a lost session's SessionError tells the client. */
#define LOST_SAYS  "state was lost"
#define RESET_SAYS "reset: true"
#define NEW_SAYS   "session: \"new\""

TestSuite(faults, .timeout = 180, .fini = e2e_cleanup);

/* ---- Helpers -------------------------------------------------------------------------- */

static const char *in_session(const char *h, const char *more)
{
	return e2e_fmt("{\"session\":\"%s\"%s%s}", h, more ? "," : "", more ? more : "");
}

/* A new session whose first call is code; returns its handle. */
static const char *new_session(const char *code)
{
	json_object *r = e2e_expect_status(code, "{\"session\":\"new\"}", "ok");
	const char *h = mcpc_sc_str(r, "session");

	cr_assert_not_null(h, "no handle: %s", mcpc_json(r));
	return e2e_fmt("%s", h);
}

/* Run code in session h; it must succeed. The process that ran it holds the session's state
 * now (the call is not the session's first): its pid is the result. */
static pid_t holder_of(const char *h)
{
	json_object *r = e2e_call("import os\nos.getpid()", in_session(h, NULL));

	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	return (pid_t)json_object_get_int(e2e_member(mcpc_structured(r), "result"));
}

/* SIGKILL pid and wait until the server reaped it (its /proc entry is gone): a call sent
 * before then may still find the session's prepared process, which holds the state. */
static void kill_and_reap(pid_t pid)
{
	char path[64];

	cr_assert_eq(kill(pid, SIGKILL), 0, "kill %d: %s", (int)pid, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	for (int i = 0; i < 500 && access(path, F_OK) == 0; i++)
		usleep(10000);
	cr_assert_neq(access(path, F_OK), 0, "%d was not reaped within 5 s", (int)pid);
}

/* A call in h whose answer must be the SessionError of a lost session. */
static void says_lost(const char *h, const char *code)
{
	json_object *r = e2e_call(code, in_session(h, NULL));
	const char *msg = mcpc_err_str(r, "message");

	cr_assert_str_eq(mcpc_err_str(r, "type"), "SessionError",
	                 "a session whose process was killed ran a call: %s", mcpc_json(r));
	cr_assert(strstr(msg, LOST_SAYS) && strstr(msg, RESET_SAYS) && strstr(msg, NEW_SAYS),
	          "the SessionError does not say the state was lost and how to start again: %s",
	          msg);
}

/* ---- One kill at a chosen point --------------------------------------------------------- */

/* The holder dies while a call of its session runs, and the call then fails (cancelled or
 * timed out): the session's state is gone, so its next call must say so rather than run in an
 * empty interpreter; another session keeps its value. */
static void holder_dies_during_call(int cancel)
{
	const char *h, *other;
	pid_t holder;
	int64_t id;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--allow-import", "os"), NULL);
	other = new_session("kept = 'other'");
	h = new_session("x = 41");
	holder = holder_of(h);
	id = mcpc_call_async(&e2e_srv, "import time\nprint('started', flush=True)\ntime.sleep(30)",
	                     in_session(h, cancel ? NULL : "\"timeout_seconds\":1"));
	usleep(300000);
	cr_assert_not(e2e_seen(id, 0), "the call ended early");
	cr_assert_eq(kill(holder, SIGKILL), 0, "kill %d: %s", (int)holder, strerror(errno));
	if (cancel) {
		usleep(100000);
		e2e_cancel(id);
		r = e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000));
		cr_assert_not_null(r, "no answer to ping after the cancellation");
		cr_assert_not(e2e_seen(id, 500), "the cancelled call was answered");
	} else {
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 5000));
		cr_assert_not_null(r, "the call with a 1 s limit was not answered within 5 s");
		cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "message"), "state is lost"),
		          "the call's answer does not say the state is lost: %s", mcpc_json(r));
	}
	says_lost(h, "x");
	e2e_assert_result(e2e_call("kept", in_session(other, NULL)), "kept", "\"other\"");
	e2e_stop();
}

Test(faults, holder_killed_during_a_cancelled_call_loses_the_session)
{
	holder_dies_during_call(1);
}

Test(faults, holder_killed_during_a_timed_out_call_loses_the_session)
{
	holder_dies_during_call(0);
}

/* The holder dies while a call of its session runs, and the call completes: the runner holds
 * the state the call committed, so nothing is lost; the answer and the next call say so. */
Test(faults, holder_killed_during_a_call_that_completes_keeps_the_new_state)
{
	const char *h;
	pid_t holder, now;
	int64_t id;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--allow-import", "os"), NULL);
	h = new_session("x = 41");
	holder = holder_of(h);
	id = mcpc_call_async(&e2e_srv,
	                     "import time\nprint('started', flush=True)\ntime.sleep(1)\nx += 1\nx",
	                     in_session(h, NULL));
	usleep(300000);
	cr_assert_not(e2e_seen(id, 0), "the call ended early");
	kill_and_reap(holder);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 5000));
	cr_assert_not_null(r, "the call was not answered within 5 s");
	e2e_assert_result(r, "x += 1", "42");
	now = holder_of(h);
	cr_assert_neq(now, holder, "the killed holder still runs the session's calls");
	e2e_assert_result(e2e_call("x", in_session(h, NULL)), "x", "42");
	e2e_stop();
}

/* A lost session stays lost until a reset commits: a reset that fails (here it times out)
 * leaves it lost, not empty, and one that succeeds starts it afresh. */
Test(faults, failed_reset_of_a_lost_session_leaves_it_lost)
{
	const char *h;
	json_object *r;

	e2e_start_with(VERSION, ARGS("--allow-import", "os"), NULL);
	h = new_session("x = 41");
	kill_and_reap(holder_of(h));
	says_lost(h, "x");
	r = e2e_call("import time\ntime.sleep(30)",
	             in_session(h, "\"reset\":true,\"timeout_seconds\":0.5"));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	says_lost(h, "y = 1");
	r = e2e_call("y = 2\ny", in_session(h, "\"reset\":true"));
	e2e_assert_result(r, "y = 2", "2");
	e2e_assert_result(e2e_call("y", in_session(h, NULL)), "y", "2");
	e2e_stop();
}

/* ---- The storm -------------------------------------------------------------------------
 * About 2,000 calls, at most 12 in flight, one issued every 20 ms at most: in the default
 * session and six named ones (each holds a counter n), in new sessions, raising errors,
 * timing out after 0.2 s, cancelled; meanwhile a random process of the server's tree is
 * killed every 200 ms. Each call's answer names the call (a token t<id>) and, for the
 * counter, the pid that ran it and its parent: the parent of a session's runner is the process
 * that holds its state, so a call that ran on another state shows. */

#define STORM_CALLS     2000
#define STORM_INFLIGHT  12
#define STORM_PACE_MS   20
#define STORM_KILL_MS   200
#define STORM_NAMED     6
#define STORM_SESSIONS  (STORM_NAMED + 1) /* the last is the default session */
#define STORM_MAX_IDS   8192              /* request ids: calls and pings */
#define STORM_MAX_KILLS 2048
#define STORM_DRAIN_MS  60000 /* after the last call is issued, its answers come within this */
/* Sessions expire this long after their last call, so the server can be seen back at idle
 * after the storm; long enough that none expires during it on a loaded machine. */
#define STORM_IDLE_S    "8"

enum kind { K_COUNT, K_NEW, K_ERROR, K_TIMEOUT, K_CANCEL, K_RESET, K_KINDS };

static const char *const kind_names[K_KINDS] = {"count",   "new",    "error",
                                                "timeout", "cancel", "reset"};

struct scall {
	int64_t id;
	enum kind kind;
	int sess;           /* -1: a new session */
	int64_t cancel_at;  /* when to cancel it, 0: never */
	int cancelled;      /* the cancellation was sent */
	int cancel_settled; /* the ping sent after it was answered: no answer may follow */
	int answered;
	int kills_at_issue; /* kills before it was sent */
};

struct ssession {
	const char *handle; /* NULL: the default session */
	int n;              /* the counter its state holds */
	pid_t holder;       /* the process holding the state; 0 after a reset (a copy) */
	pid_t prev;         /* the holder before that */
	int kills_at_reset; /* kills before the reset was sent */
	int lost;           /* a SessionError said so: a reset comes next */
};

static struct storm {
	unsigned int seed; /* as given; rng is the generator's state */
	unsigned int rng;
	pid_t server;
	struct scall calls[STORM_CALLS];
	int ncalls;
	int call_of[STORM_MAX_IDS]; /* request id -> call index + 1 */
	int ping_of[STORM_MAX_IDS]; /* ping id -> call index + 1 */
	struct ssession sess[STORM_SESSIONS];
	int rr; /* round robin over the sessions */
	pid_t killed[STORM_MAX_KILLS];
	int nkills, zygote_kills;
	int status_count[8];
	int session_errors, losses, raced_cancels, violations;
	int64_t t_start, t_end;
} S;

static const char *const status_names[] = {
    "ok", "error", "timeout", "memory_limit", "crashed", "cancelled", "sandbox_violation"};

__attribute__((format(printf, 1, 2))) static void violation(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (S.violations++ < 30)
		cr_log_error("seed %u: %s", S.seed, msg);
}

static int was_killed(pid_t pid)
{
	for (int i = 0; pid > 0 && i < S.nkills; i++)
		if (S.killed[i] == pid)
			return 1;
	return 0;
}

static void kill_one(void)
{
	struct mcpc_proc p[256];
	int n = e2e_descendants(p, 256), k;

	if (n <= 0 || S.nkills >= STORM_MAX_KILLS)
		return;
	k = rand_r(&S.rng) % n;
	if (!mcpc_proc_alive(&p[k]))
		return;
	S.zygote_kills += e2e_is_unsandboxed(p[k].pid);
	if (kill(p[k].pid, SIGKILL) == 0) {
		S.killed[S.nkills++] = p[k].pid;
	}
}

static const char *session_extra(int sess, const char *more)
{
	const char *h = sess < 0 ? "new" : S.sess[sess].handle;

	if (!h)
		return more ? e2e_fmt("{%s}", more) : NULL;
	return in_session(h, more);
}

static const char *count_code(int64_t id, int reset)
{
	return e2e_fmt("import os\nn %s 1\n['t%lld', n, os.getpid(), os.getppid()]",
	               reset ? "=" : "+=", (long long)id);
}

/* Issue the next call. */
static void issue(void)
{
	struct scall *c = &S.calls[S.ncalls];
	int r = rand_r(&S.rng) % 100, sess = -1;
	int64_t id = e2e_srv.next_id;
	const char *code, *extra;

	if (r < 45)
		c->kind = K_COUNT;
	else if (r < 60)
		c->kind = K_NEW;
	else if (r < 75)
		c->kind = K_ERROR;
	else if (r < 90)
		c->kind = K_TIMEOUT;
	else
		c->kind = K_CANCEL;
	if (c->kind != K_NEW && !(c->kind == K_CANCEL && r >= 97)) {
		/* The default session comes up twice as often as each named one. */
		static const int order[] = {0, 1, STORM_NAMED, 2, 3, STORM_NAMED, 4, 5};
		sess = order[S.rr++ % (int)(sizeof(order) / sizeof(order[0]))];
		if (S.sess[sess].lost)
			c->kind = K_RESET;
	}
	switch (c->kind) {
	case K_COUNT:
		code = count_code(id, 0);
		extra = session_extra(sess, NULL);
		break;
	case K_NEW:
		code = count_code(id, 1);
		extra = session_extra(sess, NULL);
		break;
	case K_RESET:
		code = count_code(id, 1);
		extra = session_extra(sess, "\"reset\":true");
		S.sess[sess].lost = 0; /* until its answer says otherwise */
		break;
	case K_ERROR:
		code = e2e_fmt(
		    "import os\nn += 1\n"
		    "raise ValueError('t%lld %%d %%d %%d' %% (n, os.getpid(), os.getppid()))",
		    (long long)id);
		extra = session_extra(sess, NULL);
		break;
	case K_TIMEOUT:
		code = e2e_fmt("import time\nprint('t%lld')\ntime.sleep(10)", (long long)id);
		extra = session_extra(sess, "\"timeout_seconds\":0.2");
		break;
	default:
		code = e2e_fmt("import time\nprint('t%lld')\ntime.sleep(30)", (long long)id);
		extra = session_extra(sess, NULL);
		c->cancel_at = mcpc_now_ms() + rand_r(&S.rng) % 300;
		break;
	}
	cr_assert_lt(id, STORM_MAX_IDS);
	c->id = mcpc_call_async(&e2e_srv, code, extra);
	cr_assert_eq(c->id, id, "request ids are not sequential");
	c->sess = sess;
	c->kills_at_issue = S.nkills;
	S.call_of[id] = ++S.ncalls;
}

/* The token and the counter's fields of an answer: from the result of a counting call, or
 * from the ValueError of an error call. Returns 1 when found. */
static int read_fields(json_object *r, int is_error, long long *tok, int *n, int *pid, int *ppid)
{
	json_object *res = e2e_member(mcpc_structured(r), "result");

	if (is_error)
		return !strcmp(mcpc_err_str(r, "type"), "ValueError") &&
		       sscanf(mcpc_err_str(r, "message"), "t%lld %d %d %d", tok, n, pid, ppid) == 4;
	if (!json_object_is_type(res, json_type_array) || json_object_array_length(res) != 4)
		return 0;
	*n = json_object_get_int(json_object_array_get_idx(res, 1));
	*pid = json_object_get_int(json_object_array_get_idx(res, 2));
	*ppid = json_object_get_int(json_object_array_get_idx(res, 3));
	return sscanf(json_object_get_string(json_object_array_get_idx(res, 0)), "t%lld", tok) == 1;
}

/* A SessionError: its text, and whether the session may have lost its state: a process that
 * held it was killed. */
static void check_session_error(struct scall *c, struct ssession *s, json_object *r)
{
	const char *msg = mcpc_err_str(r, "message");

	S.session_errors++;
	if (!strstr(msg, LOST_SAYS) || !strstr(msg, RESET_SAYS) || !strstr(msg, NEW_SAYS)) {
		violation("call %lld (%s): SessionError that does not say the state was lost: %s",
		          (long long)c->id, kind_names[c->kind], msg);
		return;
	}
	if (!s->lost) {
		int why = s->holder ? was_killed(s->holder) || was_killed(s->prev)
		                    : S.nkills > s->kills_at_reset;
		if (!why)
			violation("call %lld: session %d lost though neither %d nor %d was killed "
			          "(the server is %d): %s",
			          (long long)c->id, c->sess, (int)s->holder, (int)s->prev,
			          (int)S.server, msg);
		S.losses++;
	}
	s->lost = 1;
}

/* An answer that carries the counter: the state it ran on must be the session's. */
static void check_count(struct scall *c, struct ssession *s, json_object *r, int is_error)
{
	long long tok = -1;
	int n = 0, pid = 0, ppid = 0;

	if (!read_fields(r, is_error, &tok, &n, &pid, &ppid)) {
		violation("call %lld (%s): answer without its fields: %s", (long long)c->id,
		          kind_names[c->kind], mcpc_json(r));
		return;
	}
	if (tok != c->id) {
		violation("call %lld: answered with the outcome of call %lld", (long long)c->id,
		          tok);
		return;
	}
	if (!s)
		return; /* a new session */
	if (c->kind == K_RESET) {
		if (n != 1)
			violation("call %lld: a reset ran on an old state (n=%d)", (long long)c->id,
			          n);
		*s = (struct ssession){
		    .handle = s->handle, .n = n, .kills_at_reset = c->kills_at_issue};
		return;
	}
	if (s->lost)
		violation("call %lld: ran in a session that had said its state was lost: %s",
		          (long long)c->id, mcpc_json(r));
	else if (n != s->n + 1)
		violation("call %lld: the counter was %d, not %d: another state", (long long)c->id,
		          n - 1, s->n);
	else if (s->holder && ppid != s->holder && !(ppid == S.server && was_killed(s->holder)))
		violation("call %lld: ran in a fork of %d, not of the session's holder %d",
		          (long long)c->id, ppid, (int)s->holder);
	s->n = n;
	s->prev = s->holder ? s->holder : ppid;
	s->holder = pid;
}

static void check_answer(struct scall *c, json_object *r)
{
	struct ssession *s = c->sess >= 0 ? &S.sess[c->sess] : NULL;
	const char *status = mcpc_status(r), *type = mcpc_err_str(r, "type");
	const char *out = mcpc_sc_str(r, "stdout");
	int st = -1;

	if (c->answered++) {
		violation("call %lld answered twice", (long long)c->id);
		return;
	}
	if (c->cancel_settled)
		violation("call %lld answered after its cancellation", (long long)c->id);
	else if (c->cancelled)
		S.raced_cancels++;
	if (!mcpc_structured(r)) {
		violation("call %lld: no tool result: %s", (long long)c->id, mcpc_json(r));
		return;
	}
	for (int i = 0; i < 7; i++)
		if (!strcmp(status, status_names[i]))
			st = i;
	if (st < 0) {
		violation("call %lld: status %s", (long long)c->id, status);
		return;
	}
	S.status_count[st]++;
	if (out && *out && strcmp(out, e2e_fmt("t%lld\n", (long long)c->id)) != 0)
		violation("call %lld: the output of another call: %s", (long long)c->id, out);
	if (!strcmp(status, "ok") || (!strcmp(status, "error") && strcmp(type, "SessionError"))) {
		if (c->kind == K_TIMEOUT || c->kind == K_CANCEL)
			violation("call %lld (%s) ended %s: %s", (long long)c->id,
			          kind_names[c->kind], status, mcpc_json(r));
		else if (!strcmp(status, "error") != (c->kind == K_ERROR))
			violation("call %lld (%s): %s", (long long)c->id, kind_names[c->kind],
			          mcpc_json(r));
		else
			check_count(c, s, r, c->kind == K_ERROR);
		return;
	}
	if (!strcmp(status, "error")) {
		if (!s)
			violation("call %lld in a new session: %s", (long long)c->id, mcpc_json(r));
		else
			check_session_error(c, s, r);
		return;
	}
	/* Not run to its end: killed (crashed), timed out, or the sandbox could not start. */
	if (!strcmp(status, "timeout") ? c->kind != K_TIMEOUT : strcmp(status, "crashed") != 0)
		violation("call %lld (%s) ended %s (an external SIGKILL is a crash): %s",
		          (long long)c->id, kind_names[c->kind], status, mcpc_json(r));
	else if (!strcmp(status, "crashed") && strcmp(type, "SandboxError") != 0)
		violation("call %lld crashed with %s: %s", (long long)c->id, type, mcpc_json(r));
	if (s && strstr(mcpc_err_str(r, "message"), "state is lost")) {
		if (!s->lost && !(was_killed(s->holder) || was_killed(s->prev) || !s->holder))
			violation("call %lld: says the state is lost though %d was not killed",
			          (long long)c->id, (int)s->holder);
		S.losses += !s->lost;
		s->lost = 1;
	}
	if (s && c->kind == K_RESET)
		s->lost = 1; /* a failed reset leaves the session lost */
}

static void take_message(json_object *m)
{
	json_object *jid = e2e_member(m, "id");
	int64_t id = jid ? json_object_get_int64(jid) : -1;

	if (!jid || e2e_member(m, "method"))
		return; /* a notification */
	if (id < 0 || id >= STORM_MAX_IDS) {
		violation("answer to an unknown id: %s", mcpc_json(m));
	} else if (S.ping_of[id]) {
		S.calls[S.ping_of[id] - 1].cancel_settled = 1;
	} else if (S.call_of[id]) {
		check_answer(&S.calls[S.call_of[id] - 1], m);
	} else {
		violation("answer to an unknown id: %s", mcpc_json(m));
	}
}

static int outstanding(void)
{
	int n = 0;

	for (int i = 0; i < S.ncalls; i++)
		n += !S.calls[i].answered && !S.calls[i].cancelled;
	return n;
}

static void send_cancels(int64_t now)
{
	for (int i = 0; i < S.ncalls; i++) {
		struct scall *c = &S.calls[i];
		int64_t ping;

		if (!c->cancel_at || c->cancelled || c->answered || now < c->cancel_at)
			continue;
		e2e_cancel(c->id);
		c->cancelled = 1;
		/* The server reads its input in order: once the ping is answered, the cancellation
		 * was handled, and the call must never be answered. */
		ping = mcpc_request_async(&e2e_srv, "ping", NULL);
		cr_assert_lt(ping, STORM_MAX_IDS);
		S.ping_of[ping] = i + 1;
	}
}

/* Set up the sessions: each holds n = 1 in a process whose pid is known. */
static void storm_sessions(void)
{
	for (int i = 0; i < STORM_SESSIONS; i++) {
		struct ssession *s = &S.sess[i];
		json_object *r;
		long long tok;
		int n, pid, ppid;

		s->handle = i < STORM_NAMED ? new_session("n = 0") : NULL;
		if (!s->handle)
			e2e_ok("n = 0");
		r = e2e_call(count_code(e2e_srv.next_id, 0), session_extra(i, NULL));
		cr_assert(read_fields(r, 0, &tok, &n, &pid, &ppid) && n == 1, "%s", mcpc_json(r));
		s->n = 1;
		s->holder = pid;
		s->prev = ppid;
	}
}

Test(faults, storm_of_kills_under_a_mixed_load, .timeout = 240)
{
	struct mcpc_proc idle[256];
	int idle_fds, idle_procs, fds = -1, procs = -1;
	int64_t now, next_issue, next_kill, deadline;
	const char *env_seed = getenv("SAFEPY_FAULTS_SEED");

	memset(&S, 0, sizeof(S));
	S.seed = env_seed ? (unsigned int)strtoul(env_seed, NULL, 10)
	                  : (unsigned int)time(NULL) ^ (unsigned int)getpid();
	S.rng = S.seed;
	cr_log_info("storm: seed %u (SAFEPY_FAULTS_SEED=%u repeats it)", S.seed, S.seed);
	/* SAFEPY_FAULTS_DEBUG=1 adds --log-level debug (with SAFEPY_FAULTS_LOG to keep it). */
	e2e_start_with(VERSION,
	               ARGS("--allow-import", "os", "--max-workers", "12", "--max-sessions", "32",
	                    "--session-idle", STORM_IDLE_S,
	                    getenv("SAFEPY_FAULTS_DEBUG") ? "--log-level" : NULL, "debug"),
	               NULL);
	S.server = e2e_srv.pid;
	/* Idle is the zygote and its ready worker (--prefork 1): under load the zygote may take
	 * longer to start than a steady count needs. */
	for (int64_t until = mcpc_now_ms() + 20000;
	     e2e_descendants(idle, 256) < 2 && mcpc_now_ms() < until;)
		usleep(20000);
	e2e_steady_descendants(5000);
	idle_procs = e2e_descendants(idle, 256);
	idle_fds = mcpc_fd_count(S.server);
	storm_sessions();

	S.t_start = now = mcpc_now_ms();
	next_issue = next_kill = now;
	deadline = now + STORM_CALLS * STORM_PACE_MS + STORM_DRAIN_MS;
	while (S.ncalls < STORM_CALLS || outstanding() > 0) {
		json_object *m;

		now = mcpc_now_ms();
		if (now >= deadline)
			e2e_save_log("SAFEPY_FAULTS_LOG");
		cr_assert_lt(now, deadline,
		             "seed %u: %d of %d calls issued, %d unanswered; log:\n%s", S.seed,
		             S.ncalls, STORM_CALLS, outstanding(), e2e_log());
		if (S.ncalls < STORM_CALLS && now >= next_issue && outstanding() < STORM_INFLIGHT) {
			issue();
			next_issue += STORM_PACE_MS;
			if (next_issue < now - 1000)
				next_issue = now; /* no burst after a stall */
		}
		send_cancels(now);
		if (now >= next_kill) {
			kill_one();
			next_kill += STORM_KILL_MS;
		}
		while ((m = mcpc_next(&e2e_srv, 2)))
			take_message(e2e_hold(m));
		cr_assert(mcpc_alive(&e2e_srv), "seed %u: the server died; log:\n%s", S.seed,
		          e2e_log());
	}
	S.t_end = mcpc_now_ms();
	/* The pings after the last cancellations, and anything late. */
	deadline = mcpc_now_ms() + 1000;
	while (mcpc_now_ms() < deadline) {
		json_object *m = mcpc_next(&e2e_srv, 50);

		if (m)
			take_message(e2e_hold(m));
	}
	for (int i = 0; i < S.ncalls; i++)
		cr_assert(!S.calls[i].cancelled || S.calls[i].cancel_settled,
		          "the ping after cancelling call %lld was not answered",
		          (long long)S.calls[i].id);
	cr_log_info("storm: %d calls in %.1f s (%.1f calls/s), %d kills (%d of the zygote), "
	            "seed %u",
	            S.ncalls, (S.t_end - S.t_start) / 1000.0,
	            S.ncalls * 1000.0 / (double)(S.t_end - S.t_start), S.nkills, S.zygote_kills,
	            S.seed);
	cr_log_info("storm: answers ok %d, error %d (SessionError %d), timeout %d, crashed %d, "
	            "memory_limit %d, cancelled %d, sandbox_violation %d; %d cancelled unanswered, "
	            "%d answered before their cancellation arrived; %d sessions lost",
	            S.status_count[0], S.status_count[1], S.session_errors, S.status_count[2],
	            S.status_count[4], S.status_count[3], S.status_count[5], S.status_count[6],
	            S.ncalls - S.status_count[0] - S.status_count[1] - S.status_count[2] -
	                S.status_count[3] - S.status_count[4] - S.status_count[5] -
	                S.status_count[6],
	            S.raced_cancels, S.losses);

	e2e_save_log("SAFEPY_FAULTS_LOG");
	/* Every session holds its counter, or says it lost it and a reset starts it again. The
	 * last kill may have hit the zygote as it started: a fresh worker may take a few seconds. */
	for (int i = 0; i < STORM_SESSIONS; i++) {
		int64_t until = mcpc_now_ms() + 20000;
		json_object *r;

		do {
			int reset = S.sess[i].lost;
			struct scall c = {.id = e2e_srv.next_id,
			                  .kind = reset ? K_RESET : K_COUNT,
			                  .sess = i,
			                  .kills_at_issue = S.nkills};

			r = e2e_call(count_code(c.id, reset),
			             session_extra(i, reset ? "\"reset\":true" : NULL));
			check_answer(&c, r);
			if (strcmp(mcpc_status(r), "ok") != 0)
				usleep(200000);
		} while (strcmp(mcpc_status(r), "ok") != 0 && mcpc_now_ms() < until);
		cr_assert_str_eq(mcpc_status(r), "ok", "seed %u: session %d after the storm: %s",
		                 S.seed, i, mcpc_json(r));
	}
	cr_assert_eq(S.violations, 0, "seed %u: %d violations (see above); log:\n%s", S.seed,
	             S.violations, e2e_log());

	/* Idle again once every session expired: the same processes' count and fds. */
	deadline = mcpc_now_ms() + 30000;
	while (mcpc_now_ms() < deadline) {
		e2e_steady_descendants(3000);
		procs = e2e_descendants(idle, 256);
		fds = mcpc_fd_count(S.server);
		if (procs == idle_procs && fds == idle_fds)
			break;
		usleep(200000);
	}
	cr_log_info("storm: idle before %d processes, %d fds; after %d processes, %d fds",
	            idle_procs, idle_fds, procs, fds);
	cr_assert_eq(procs, idle_procs, "seed %u: %d processes left, %d when idle before", S.seed,
	             procs, idle_procs);
	cr_assert_eq(fds, idle_fds, "seed %u: the server holds %d fds, %d when idle before", S.seed,
	             fds, idle_fds);
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* ---- A session's first process ---------------------------------------------------------
 * Once the supervisor traces its workers, a fresh worker takes no parent-death signal (its
 * life is bound to the supervisor's by EXITKILL): the process that ran a new session's first
 * call holds its state itself, no copy is made, and the zygote's death takes nothing with it. */
Test(faults, a_new_sessions_first_process_holds_its_state_and_outlives_the_zygote)
{
	json_object *r;
	const char *h;
	pid_t first, zygote;

	/* Workers made before the first was traced take the signal: none is made ahead here. */
	e2e_start_with(VERSION, ARGS("--allow-import", "os", "--prefork", "0"), NULL);
	e2e_expect_status("1", "{\"session\":\"new\"}", "ok"); /* the first worker is traced */
	r = e2e_expect_status("import os\nx = 41\nos.getpid()", "{\"session\":\"new\"}", "ok");
	h = e2e_fmt("%s", mcpc_sc_str(r, "session"));
	first = (pid_t)json_object_get_int(e2e_member(mcpc_structured(r), "result"));
	r = e2e_call("import os\nos.getppid()", in_session(h, NULL));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), first,
	             "the session's second call did not run in a fork of the process that ran "
	             "its first (%d): %s",
	             (int)first, mcpc_json(r));
	zygote = e2e_zygote();
	cr_assert_gt(zygote, 0, "no zygote among the server's processes");
	kill_and_reap(zygote);
	r = e2e_call("x += 1\nx", in_session(h, NULL));
	e2e_assert_result(r, "x += 1", "42");
	e2e_expect_status("1", "{\"session\":\"new\"}", "ok");
	e2e_assert_result(e2e_call("x", in_session(h, NULL)), "x", "42");
	e2e_stop();
}
