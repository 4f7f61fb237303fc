/* server.c - `safepy serve`: MCP over stdin/stdout. Reads lines into a bounded buffer,
 * hands them to protocol/, runs tool calls on the engine, writes one JSON message per line.
 * Only JSON-RPC reaches stdout; every error becomes a response or a log line on stderr.
 * Output goes through a queue written as the client reads (outq.c): a client that stops
 * reading never stops the event loop, so deadlines, kills, cancellations and heartbeats keep
 * their time. Past OUT_BOUND of queued output nothing new is read and no call is started until
 * half of it is written; nothing is dropped or reordered. A request whose answer cannot be
 * made for want of memory gets an error made without allocating (queued in one of outq's
 * spares); without memory to read into, stdin is read again a moment later. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "supervisor.h"

struct batch {
	json_object *replies; /* array, owned */
	int waiting;          /* tool calls of the batch not yet answered */
	int open;             /* its line is still being handled: not complete yet */
};

struct pending {
	struct engine_call call; /* first: the engine hands it back */
	json_object *id;         /* owned */
	struct run_args args;
	struct batch *batch;   /* NULL outside a batch */
	json_object *progress; /* the client's progressToken (owned), or NULL */
	struct timer beat;     /* the next progress heartbeat */
	int beats;
	int cancelled;
	int started;  /* handed to the engine: on S.pending */
	int deferred; /* waiting to start: on S.deferred */
	struct pending *next;
};

#define HEARTBEAT_MS   1000
/* Output queued for the client beyond which stdin is not read and no call is started; both
 * resume when the queue is below OUT_RESUME. */
#define OUT_BOUND      (64u << 20)
#define OUT_RESUME     (OUT_BOUND / 2)
/* Code of deferred calls, or their number, beyond which stdin is not read either (each new
 * call's id is compared with every call's waiting or running). */
#define DEFER_BOUND    (64u << 20)
#define DEFER_MAX      1024
/* Code of calls started and not answered (each waits with its code for its session or a
 * worker) beyond which no other call starts: they wait deferred, under DEFER_BOUND. */
#define STARTED_BOUND  (64u << 20)
/* After a failed start, how long the engine has to answer the calls already asked. */
#define FAIL_DRAIN_MS  2000
/* Calls started and not answered, at least (or twice --max-workers): each may still add a
 * response of up to about a megabyte to the queue, so this bounds what the queue can pass
 * OUT_BOUND by. */
#define INFLIGHT_MIN   64
/* At exit, how long the output still queued may take to reach a client that reads. */
#define EXIT_FLUSH_MS  2000
/* A client of the team box's socket that sends no complete message within this long is
 * closed: each connection holds a supervisor, a zygote and a worker ready, and the socket's
 * MaxConnections counts them all (silent connections locked the others out). */
#define SILENT_PEER_MS 60000
/* Without memory to read requests into, stdin is read again after this long. */
#define STDIN_RETRY_MS 100

struct server {
	const struct config *cfg;
	struct engine *engine;
	struct mcp_server_config mcfg;
	struct mcp_conn conn;
	struct linebuf lb;
	struct watch in;
	int in_watched;
	struct timer in_retry; /* armed: stdin is not read until memory may be back */
	struct timer silent;   /* armed: a peer that has sent no message yet */
	struct watch sig;
	struct outq out;
	struct watch outw; /* stdout, watched for EPOLLOUT while the queue waits */
	int out_watched;
	int throttled; /* the queue passed OUT_BOUND and has not drained to OUT_RESUME */
	int started;   /* the zygote was ready once, or its first start failed */
	int status;    /* the exit status: 0, or why start-up failed */
	int signalled; /* a signal asked it to stop */
	int failing;   /* the first start failed: answering what was asked, then stopping */
	int fail_timed_out;
	struct timer fail_timer;
	struct pending *pending;
	struct pending *deferred, **deferred_tail; /* not started yet, in arrival order */
	size_t deferred_bytes;
	size_t n_deferred;
	size_t started_bytes; /* code of the calls started and not answered */
	unsigned int inflight, max_inflight;
	char default_session[40]; /* handle of this connection's default session, "" if none */
	int in_eof; /* stdin closed: nothing more is read; what was asked is answered */
	int stop;
};

static struct server S;

/* Write what stdout takes now; watch it for the rest. A broken stdout ends the server. */
static void out_flush(void)
{
	int rc = outq_flush(&S.out);

	if (rc < 0) {
		if (S.out_watched)
			loop_del(&S.outw);
		S.out_watched = 0;
		outq_close(&S.out);
		if (!S.stop)
			log_msg(LOG_ERROR, "stdout: %s; shutting down", strerror(-rc));
		S.stop = 1;
		return;
	}
	if (rc == 1 && !S.out_watched) {
		if (loop_add(&S.outw, EPOLLOUT) < 0) {
			log_msg(LOG_ERROR, "cannot watch stdout: %s; shutting down",
			        strerror(errno));
			S.stop = 1;
			return;
		}
		S.out_watched = 1;
	} else if (rc == 0 && S.out_watched) {
		loop_del(&S.outw);
		S.out_watched = 0;
	}
	if (outq_bytes(&S.out) >= OUT_BOUND && !S.throttled) {
		S.throttled = 1;
		log_msg(LOG_WARN,
		        "the client is not reading: %zu bytes wait for it; reading and "
		        "starting calls pause until half is written",
		        outq_bytes(&S.out));
	} else if (S.throttled && outq_bytes(&S.out) < OUT_RESUME) {
		S.throttled = 0;
		log_msg(LOG_INFO, "the client reads again: reading and starting calls resume");
	}
}

static void stdout_event(struct watch *w, uint32_t events)
{
	out_flush();
}

/* Queue one line (a message without its newline) for stdout, whole, and write what it takes
 * now. Returns 0, or -ENOMEM when it could not be queued (nothing is). */
static int emit_text(const char *s, size_t len)
{
	if (S.out.fd < 0)
		return 0; /* stdout broke: nobody reads */
	if (outq_push(&S.out, s, len, "\n", 1) < 0)
		return -ENOMEM;
	if (!S.out_watched)
		out_flush();
	else if (outq_bytes(&S.out) >= OUT_BOUND && !S.throttled)
		out_flush(); /* says it is throttled */
	return 0;
}

/* A request's answer could not be made for want of memory: an error made without
 * allocating, to id (NULL: JSON null), saying the server ran out of memory while it did
 * what. */
static void emit_oom(json_object *id, const char *what)
{
	char idt[80], text[OUTQ_SPARE_BYTES - 1];

	mcp_id_text(id, idt, sizeof(idt));
	if (emit_text(text, mcp_oom_text(idt, what, text, sizeof(text))) < 0)
		log_msg(LOG_ERROR, "out of memory, and no spare left for the error that says so: "
		                   "a request goes unanswered");
}

/* Queue one message and its newline for stdout, whole; 0, or -ENOMEM when it could not be
 * encoded or queued (nothing is). */
static int emit(json_object *msg)
{
	size_t len;
	const char *s = json_object_to_json_string_length(
	    msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	if (!s || emit_text(s, len) < 0) {
		log_msg(LOG_ERROR, "out of memory writing a message");
		return -ENOMEM;
	}
	return 0;
}

static void batch_done(struct batch *b)
{
	if (b->waiting > 0 || b->open)
		return;
	/* Once stopping, a batch that lost calls is not sent half. */
	if (!S.stop && json_object_array_length(b->replies) > 0 && emit(b->replies) < 0)
		emit_oom(NULL, "writing the answers to a batch (the calls in it ran, and kept what "
		               "they changed: check before running them again)");
	json_object_put(b->replies);
	free(b);
}

/* Send or collect one reply to id (takes ownership of msg; NULL: it could not be made for
 * want of memory, and an error made without memory goes instead). */
static void reply(struct batch *b, json_object *id, json_object *msg)
{
	if (!id && msg)
		id = json_object_object_get(msg, "id");
	if (msg && b && json_object_array_add(b->replies, msg) == 0)
		return;
	if (!msg)
		log_msg(LOG_ERROR, "out of memory building a response");
	if (!msg || emit(msg) < 0)
		emit_oom(
		    id, "building the answer to this request (a call it answers ran, and kept what "
		        "it changed in files and in its session: check before running it again)");
	json_object_put(msg);
}

/* Unlink p from the list it is on, if any. */
static void pending_unlink(struct pending *p)
{
	struct pending **pp;

	if (!p->started && !p->deferred)
		return;
	for (pp = p->started ? &S.pending : &S.deferred; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (p->deferred) {
		S.deferred_tail = &S.deferred;
		for (struct pending *q = S.deferred; q; q = q->next)
			S.deferred_tail = &q->next;
		S.deferred_bytes -= p->args.code_len;
		S.n_deferred--;
		p->deferred = 0;
	}
}

static void pending_free(struct pending *p)
{
	timer_cancel(&p->beat);
	json_object_put(p->id);
	json_object_put(p->progress);
	run_args_clear(&p->args);
	free(p);
}

/* The call is over (answered or not): forget it, and complete its batch if it was the last. */
static void finish(struct pending *p)
{
	struct batch *b = p->batch;

	pending_unlink(p);
	pending_free(p);
	if (b) {
		b->waiting--;
		batch_done(b);
	}
}

static void call_done(struct engine_call *c, struct run_outcome *o)
{
	struct pending *p = (struct pending *)c;

	S.inflight--;
	S.started_bytes -= p->args.code_len;
	if (!p->cancelled) {
		log_msg(LOG_INFO, "call %s%s%s: %s in %lld ms", json_object_to_json_string(p->id),
		        S.cfg->peer ? " from " : "", S.cfg->peer ? S.cfg->peer : "",
		        run_status_name(o->status), (long long)o->duration_ms);
		reply(p->batch, p->id, mcp_tool_response(&S.conn, &p->args.ctx, p->id, o));
	} else {
		log_msg(LOG_INFO, "call %s: cancelled", json_object_to_json_string(p->id));
	}
	finish(p);
}

/* The session a call names: the connection's default (created on first use, and again if
 * it was evicted), a new one, or an existing handle; NULL when the handle is unknown. */
static struct session *resolve_session(const char *name)
{
	struct session *s;

	if (name && strcmp(name, "new") == 0)
		return engine_session_new(S.engine);
	if (name)
		return engine_session_find(S.engine, name);
	s = S.default_session[0] ? engine_session_find(S.engine, S.default_session) : NULL;
	if (!s) {
		if (S.default_session[0])
			log_msg(LOG_INFO, "the default session was evicted or expired; starting "
			                  "a new one");
		s = engine_session_new(S.engine);
		if (s)
			snprintf(S.default_session, sizeof(S.default_session), "%s",
			         engine_session_handle(s));
	}
	return s;
}

/* While a call with a progress token runs: a heartbeat a second, its progress counting
 * up, none after the response or a cancel. */
static void heartbeat(struct timer *t)
{
	struct pending *p = t->data;
	char msg[96];
	json_object *n;

	if (p->cancelled)
		return;
	p->beats++;
	snprintf(msg, sizeof(msg), "running, %lld s elapsed",
	         (long long)((now_ms() - p->call.started_ms) / 1000));
	/* Not while the client is behind on reading: a heartbeat missed is no loss, and those
	 * of calls waiting would grow the queue past its bound. */
	n = S.throttled ? NULL : mcp_progress_notification(p->progress, p->beats, msg);
	if (n) {
		(void)emit(n);
		json_object_put(n);
	}
	timer_arm(&p->beat, now_ms() + HEARTBEAT_MS);
}

/* Hand a call to the engine, now: its session first (an unknown one is answered at once). */
static void launch(struct pending *p)
{
	p->call.session = resolve_session(p->args.session);
	if (!p->call.session && (!p->args.session || strcmp(p->args.session, "new") == 0)) {
		/* Only memory could be short: a new session evicts the least recently used. */
		reply(p->batch, p->id, NULL);
		finish(p);
		return;
	}
	if (!p->call.session) {
		struct run_outcome o;
		run_outcome_init(&o);
		o.status = RUN_ERROR;
		text_set_str(&o.error_type, "SessionError");
		text_printf(
		    &o.error_message,
		    "Unknown or expired session \"%.64s\". Sessions end when evicted (the "
		    "server keeps %u, least recently used first), after %g minutes idle, or "
		    "when the server restarts. Pass session \"new\" to start a new one, or "
		    "leave session out to use the default session.",
		    p->args.session ? p->args.session : "", S.cfg->max_sessions,
		    S.cfg->session_idle_s / 60);
		text_set_str(&o.error_traceback, "");
		reply(p->batch, p->id, mcp_tool_response(&S.conn, &p->args.ctx, p->id, &o));
		run_outcome_clear(&o);
		finish(p);
		return;
	}
	p->call.reset = p->args.reset;
	p->call.code = p->args.code;
	p->call.code_len = p->args.code_len;
	p->call.timeout_s = p->args.timeout_s;
	p->call.done = call_done;
	p->started = 1;
	p->next = S.pending;
	S.pending = p;
	S.inflight++;
	S.started_bytes += p->args.code_len;
	if (p->progress)
		timer_arm(&p->beat, now_ms() + HEARTBEAT_MS);
	engine_submit(S.engine, &p->call);
}

/* May one more call start now? Not while the client is behind on reading, nor past the
 * calls, or the code, that may be started and unanswered at once. */
static int may_launch(void)
{
	return !S.stop && !S.throttled && S.inflight < S.max_inflight &&
	       (S.inflight == 0 || S.started_bytes < STARTED_BOUND);
}

/* Start the deferred calls that may start now, in arrival order. */
static void launch_deferred(void)
{
	while (S.deferred && may_launch()) {
		struct pending *p = S.deferred;

		S.deferred = p->next;
		if (!S.deferred)
			S.deferred_tail = &S.deferred;
		S.deferred_bytes -= p->args.code_len;
		S.n_deferred--;
		p->deferred = 0;
		launch(p);
	}
}

/* Is a call with this id still to be answered? */
static int id_in_progress(json_object *id)
{
	for (struct pending *p = S.pending; p; p = p->next)
		if (!p->cancelled && mcp_id_equal(p->id, id))
			return 1;
	for (struct pending *p = S.deferred; p; p = p->next)
		if (mcp_id_equal(p->id, id))
			return 1;
	return 0;
}

/* Is id that of a call still to be answered? Then the request is refused (said to the client,
 * with a null id): two answers with one id could not be told apart, nor a cancellation aimed;
 * the id's answer stays the call's in progress. Any request: a ping with a call's id was
 * answered with it too. */
static int id_taken(json_object *id, struct batch *b)
{
	if (!id || !id_in_progress(id))
		return 0;
	log_msg(LOG_WARN, "request %s: refused, a call with that id is in progress",
	        json_object_to_json_string(id));
	reply(b, NULL,
	      mcp_error_response(NULL, JSONRPC_INVALID_REQUEST,
	                         "Invalid Request: a request with this id is still in "
	                         "progress (ids must be unique)"));
	return 1;
}

static void start_call(struct mcp_event *ev, struct batch *b)
{
	struct pending *p;

	if (id_taken(ev->id, b))
		return;
	p = calloc(1, sizeof(*p));
	if (!p) {
		reply(b, ev->id, NULL);
		return;
	}
	p->id = json_object_get(ev->id);
	timer_init(&p->beat, heartbeat, p);
	p->progress = json_object_get(ev->progress_token);
	p->args = ev->args;
	memset(&ev->args, 0, sizeof(ev->args));
	p->batch = b;
	if (b)
		b->waiting++;
	/* Behind calls already waiting, or while nothing may start: wait, in order. */
	if (S.deferred || !may_launch()) {
		p->next = NULL;
		p->deferred = 1;
		*S.deferred_tail = p;
		S.deferred_tail = &p->next;
		S.deferred_bytes += p->args.code_len;
		S.n_deferred++;
		return;
	}
	launch(p);
}

/* show_figures: the images the session's last call drew, answered at once (no code runs). */
static void show_figures(struct mcp_event *ev, struct batch *b)
{
	const char *name = ev->args.session ? ev->args.session : S.default_session;
	struct session *s = name[0] ? engine_session_find(S.engine, name) : NULL;
	const struct run_image *images = NULL;
	const char *note = NULL;
	json_object *r;
	size_t n = 0;

	if (s)
		images = engine_session_images(s, &n);
	if (!s && ev->args.session)
		note = "Unknown or expired session: pass the handle run_python returned, or leave "
		       "session out for this connection's default session.";
	else if (n == 0)
		note =
		    "No figures: the last run_python call of this session drew none (or they are "
		    "no longer kept).";
	r = mcp_figures_response(&S.conn, &ev->args.ctx, ev->id, images, n, note,
	                         !s && ev->args.session);
	reply(b, ev->id, r);
}

static void cancel_call(json_object *id)
{
	for (struct pending *p = S.pending; p; p = p->next) {
		if (!p->cancelled && mcp_id_equal(p->id, id)) {
			p->cancelled = 1;
			engine_cancel(S.engine, &p->call);
			return;
		}
	}
	/* One that has not started yet just goes: a cancelled call gets no response. */
	for (struct pending *p = S.deferred; p; p = p->next) {
		if (mcp_id_equal(p->id, id)) {
			log_msg(LOG_INFO, "call %s: cancelled before it started",
			        json_object_to_json_string(p->id));
			finish(p);
			return;
		}
	}
}

static void handle_line(const char *line, size_t len)
{
	struct mcp_events evs = {0};
	struct batch *b = NULL;

	timer_cancel(&S.silent);
	if (mcp_handle_line(&S.conn, line, len, &evs) < 0) {
		log_msg(LOG_ERROR, "out of memory handling a message%s",
		        evs.oom_answer ? "; it is answered with an error" : "");
		if (evs.oom_answer) {
			char text[OUTQ_SPARE_BYTES - 1];
			if (emit_text(
			        text,
			        mcp_oom_text(evs.oom_id,
			                     "handling this request (it was not run: retry later)",
			                     text, sizeof(text))) < 0)
				log_msg(LOG_ERROR, "no spare left for that error: the request goes "
				                   "unanswered");
		}
		mcp_events_clear(&evs);
		return;
	}
	if (evs.is_batch) {
		b = calloc(1, sizeof(*b));
		if (b) {
			b->replies = json_object_new_array();
			b->open = 1;
		}
		if (!b || !b->replies) {
			free(b);
			b = NULL;
		}
	}
	for (size_t i = 0; i < evs.n; i++) {
		struct mcp_event *ev = &evs.ev[i];
		switch (ev->kind) {
		case MCP_EV_REPLY:
			if (!id_taken(json_object_object_get(ev->msg, "id"), b))
				reply(b, ev->id, ev->msg);
			else
				json_object_put(ev->msg);
			ev->msg = NULL;
			break;
		case MCP_EV_CALL:
			start_call(ev, b);
			break;
		case MCP_EV_CANCEL:
			cancel_call(ev->id);
			break;
		case MCP_EV_NOTE:
			log_msg(ev->warn ? LOG_WARN : LOG_DEBUG, "%s", ev->note);
			break;
		case MCP_EV_FIGURES:
			if (!id_taken(ev->id, b))
				show_figures(ev, b);
			break;
		}
	}
	mcp_events_clear(&evs);
	if (b) {
		b->open = 0;
		batch_done(b);
	}
}

/* Is reading (and handling what was read) paused: the client is behind on reading, or the
 * code of calls waiting to start is too much to take more? */
static int input_paused(void)
{
	return S.throttled || S.deferred_bytes >= DEFER_BOUND || S.n_deferred >= DEFER_MAX ||
	       S.failing;
}

/* Handle the complete lines already read, until they run out or input pauses. */
static void handle_lines(void)
{
	const char *line;
	size_t len;
	int r;

	while (!S.stop && !input_paused() && (r = linebuf_next(&S.lb, &line, &len)) != 0) {
		if (r == LINEBUF_TOO_LONG) {
			char says[96];
			json_object *e;

			snprintf(says, sizeof(says),
			         "Message too large: a JSON-RPC message may be at most %u bytes",
			         PROTO_MAX_LINE);
			e = mcp_error_response(NULL, JSONRPC_INVALID_REQUEST, says);
			log_msg(LOG_WARN, "dropped a message over %u bytes", PROTO_MAX_LINE);
			if (!e || emit(e) < 0)
				emit_oom(NULL,
				         "answering a message too large to read (it was not run)");
			json_object_put(e);
			continue;
		}
		if (len == 0)
			continue;
		handle_line(line, len);
	}
}

static void silent_peer(struct timer *t)
{
	(void)t;
	log_msg(LOG_WARN, "the client sent nothing in %d s: closing the connection",
	        SILENT_PEER_MS / 1000);
	S.stop = 1;
}

/* Memory may be back: pump() watches stdin again. */
static void stdin_retry(struct timer *t)
{
	(void)t;
	log_msg(LOG_INFO, "reading requests again");
}

static void stdin_event(struct watch *w, uint32_t events)
{
	char buf[65536];
	ssize_t n;

	/* What is read is kept whole: without room for it, nothing is read (nor lost) for a
	 * moment, and the requests wait in the pipe (pump() stops watching stdin meanwhile). */
	if (linebuf_reserve(&S.lb, sizeof(buf)) < 0) {
		log_msg(LOG_ERROR, "out of memory reading requests; trying again in %d ms",
		        STDIN_RETRY_MS);
		timer_arm(&S.in_retry, now_ms() + STDIN_RETRY_MS);
		return;
	}
	n = read(w->fd, buf, sizeof(buf));
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		log_msg(LOG_ERROR, "stdin: %s", strerror(errno));
		S.stop = 1;
		return;
	}
	if (n == 0) {
		/* The client is done asking: what it asked is answered (a last message without its
		 * newline too), then the server stops (drained()). SIGTERM stops at once. */
		S.in_eof = 1;
		if (linebuf_feed(&S.lb, "\n", 1) < 0) {
			log_msg(LOG_ERROR, "out of memory reading stdin");
			S.stop = 1;
			return;
		}
		handle_lines();
		if (S.pending || S.deferred || S.lb.len > S.lb.taken)
			log_msg(LOG_INFO, "stdin closed; answering the calls asked, then stopping");
		else
			log_msg(LOG_DEBUG, "stdin closed; shutting down");
		return;
	}
	if (linebuf_feed(&S.lb, buf, (size_t)n) < 0) {
		log_msg(LOG_ERROR, "out of memory reading stdin"); /* not after linebuf_reserve */
		S.stop = 1;
		return;
	}
	handle_lines();
}

/* After every event: start what may start, handle lines left while input was paused, and
 * watch stdin only while its input is wanted (and every line read was handled, so linebuf
 * stays bounded). Never inside an engine callback: engine_submit happens here or in a line's
 * handling only. */
static void pump(void)
{
	int want;

	launch_deferred();
	handle_lines();
	want = !S.stop && !S.in_eof && !input_paused() && !S.in_retry.armed;
	if (want && !S.in_watched) {
		if (loop_add(&S.in, EPOLLIN) < 0) {
			log_msg(LOG_ERROR, "cannot watch stdin: %s", strerror(errno));
			S.stop = 1;
			return;
		}
		S.in_watched = 1;
	} else if (!want && S.in_watched) {
		/* Removed, not just muted: a hang-up would still be reported. */
		loop_del(&S.in);
		S.in_watched = 0;
	}
}

/* At exit, give the output still queued a short while to reach a client that reads. */
static void drain_output(void)
{
	int64_t deadline = now_ms() + EXIT_FLUSH_MS;

	while (S.out.fd >= 0 && outq_bytes(&S.out) > 0 && now_ms() < deadline) {
		struct pollfd p = {.fd = outq_fd(&S.out), .events = POLLOUT};
		int rc;

		if (poll(&p, 1, (int)(deadline - now_ms())) <= 0)
			break;
		rc = outq_flush(&S.out);
		if (rc < 0)
			break;
	}
	if (outq_bytes(&S.out) > 0)
		log_msg(LOG_WARN, "%zu bytes of output were not read by the client",
		        outq_bytes(&S.out));
}

static void signal_event(struct watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	/* One signal a turn (the watch is level-triggered): SIGCHLD comes again and again while
	 * traced threads fault, and reading on would keep the loop here. */
	if (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			engine_sigchld(S.engine);
		} else {
			log_msg(LOG_INFO, "signal %d; shutting down", (int)si.ssi_signo);
			S.stop = 1;
			S.signalled = 1;
		}
	}
}

/* Server events (never the user's output) for a client that asked with logging/setLevel. */
static void log_to_client(enum log_level l, const char *text)
{
	static const char *const levels[] = {"error", "warning", "info", "debug"};
	json_object *n = mcp_log_notification(&S.conn, levels[l], "safepy", text);

	if (n) {
		(void)emit(n); /* a notification: no answer is owed */
		json_object_put(n);
	}
}

int signals_block(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Until the zygote was ready once: note when it is, or stop the server when its first start
 * failed (exit status 2 for an allowed module that cannot be imported, else 1). */
static void started(char *why, size_t len)
{
	int rc = engine_start_state(S.engine, why, len);

	if (rc == 0)
		return;
	S.started = 1;
	if (rc < 0) {
		/* Nothing more is read; the calls already asked are answered with the error (the
		 * engine fails them as it places them), then the server stops (failing()). */
		fprintf(stderr, "safepy: %s\n", why);
		S.status = rc == -EINVAL ? 2 : 1;
		S.failing = 1;
		timer_arm(&S.fail_timer, now_ms() + FAIL_DRAIN_MS);
	}
}

/* After stdin closed: stop once every call asked is answered and every message read is
 * handled. */
static void drained(void)
{
	if (S.in_eof && !S.pending && !S.deferred && S.lb.len <= S.lb.taken)
		S.stop = 1;
}

/* After a failed start: stop once every call asked is answered, or when the engine took too
 * long to answer them. */
static void failing(void)
{
	if (S.failing && ((!S.pending && !S.deferred) || S.fail_timed_out))
		S.stop = 1;
}

static void fail_timeout(struct timer *t)
{
	(void)t;
	S.fail_timed_out = 1;
}

int server_main(const struct config *cfg, const char *zygote_exe)
{
	char why[640];
	int rc, sfd;

	memset(&S, 0, sizeof(S));
	S.cfg = cfg;
	S.mcfg.version = SAFEPY_VERSION;
	S.mcfg.max_timeout_s = cfg->timeout_s;
	S.mcfg.cpu_s = cfg->cpu_s;
	S.mcfg.memory_bytes = cfg->memory;
	S.mcfg.max_output = cfg->max_output;
	S.mcfg.imports = (const char *const *)cfg->imports;
	S.mcfg.n_imports = cfg->n_imports;
	S.mcfg.max_sessions = cfg->max_sessions;
	S.mcfg.session_idle_s = cfg->session_idle_s;
	S.deferred_tail = &S.deferred;
	S.max_inflight = cfg->max_workers > INFLIGHT_MIN / 2 ? 2 * cfg->max_workers : INFLIGHT_MIN;
	S.mcfg.workspace = cfg->workspace;
	S.mcfg.workspace_write = cfg->workspace_write;
	S.mcfg.figures = config_allows_matplotlib(cfg);
	mcp_conn_init(&S.conn, &S.mcfg);
	linebuf_init(&S.lb, PROTO_MAX_LINE);
	sfd = signals_block();
	rc = sfd < 0 ? sfd : loop_init();
	if (rc == 0)
		rc = outq_open(&S.out, STDOUT_FILENO);
	if (rc < 0) {
		log_msg(LOG_ERROR, "cannot set up the event loop and stdout: %s", strerror(-rc));
		return 1;
	}
	/* The supervisor confines itself before any request is read; the zygote starts in the
	 * loop's first turn. */
	rc = engine_new(cfg, zygote_exe, &S.engine);
	if (rc < 0) {
		log_msg(LOG_ERROR, "the server did not start: %s", strerror(-rc));
		outq_close(&S.out);
		return 1;
	}
	S.sig = (struct watch){.fd = sfd, .fn = signal_event};
	S.in = (struct watch){.fd = STDIN_FILENO, .fn = stdin_event};
	S.outw = (struct watch){.fd = outq_fd(&S.out), .fn = stdout_event};
	timer_init(&S.in_retry, stdin_retry, NULL);
	timer_init(&S.fail_timer, fail_timeout, NULL);
	timer_init(&S.silent, silent_peer, NULL);
	if (cfg->peer)
		timer_arm(&S.silent, now_ms() + SILENT_PEER_MS);
	if (loop_add(&S.sig, EPOLLIN) < 0) {
		log_msg(LOG_ERROR, "cannot watch signals: %s", strerror(errno));
		engine_free(S.engine);
		outq_close(&S.out);
		return 1;
	}
	/* Requests are read while the zygote starts: initialize is answered at once, calls wait
	 * in the engine's queue for the zygote. If it cannot import an allowed module, the server
	 * stops right there, naming it (started()). */
	log_msg(LOG_INFO, "safepy %s serving MCP on stdio (max %u workers, %g s per call)",
	        SAFEPY_VERSION, cfg->max_workers, cfg->timeout_s);
	if (cfg->workspace)
		log_msg(LOG_INFO, "workspace: %s (%s)", cfg->workspace,
		        cfg->workspace_write ? "read-write" : "read-only");
	log_set_sink(log_to_client);
#ifdef SAFEPY_FAILALLOC
	failalloc_arm(); /* the test build: allocations may fail from here on */
#endif
	pump();
	while (!S.stop) {
		rc = loop_run_once(-1);
		if (rc < 0) {
			log_msg(LOG_ERROR, "event loop: %s", strerror(-rc));
			break;
		}
		if (!S.started)
			started(why, sizeof(why));
		pump();
		failing();
		drained();
	}
	S.stop = 1;
	/* The client left before the zygote was ready: the options are still checked, so that a
	 * bad one is said (and the exit status says it) however short the session. */
	if (!S.started && !S.signalled &&
	    engine_start_wait(S.engine, &S.signalled, why, sizeof(why)))
		started(why, sizeof(why));
	log_set_sink(NULL);
	timer_cancel(&S.in_retry);
	timer_cancel(&S.fail_timer);
	if (S.in_watched)
		loop_del(&S.in);
	/* Calls still running or waiting get no response: the client is gone or asked us to
	 * stop. */
	while (S.deferred)
		finish(S.deferred);
	for (struct pending *p = S.pending; p; p = p->next)
		p->cancelled = 1;
	engine_free(S.engine);
	while (S.pending)
		finish(S.pending);
	if (S.out_watched)
		loop_del(&S.outw);
	drain_output();
	outq_close(&S.out);
	linebuf_clear(&S.lb);
	return S.status;
}
