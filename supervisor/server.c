/* server.c - `safepy serve`: MCP over stdin/stdout. Reads lines into a bounded buffer,
 * hands them to protocol/, runs tool calls on the engine, writes one JSON message per line.
 * Only JSON-RPC reaches stdout; every error becomes a response or a log line on stderr. */
#include <errno.h>
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
	struct pending *next;
};

#define HEARTBEAT_MS 1000

struct server {
	const struct config *cfg;
	struct engine *engine;
	struct mcp_server_config mcfg;
	struct mcp_conn conn;
	struct linebuf lb;
	struct watch in;
	struct watch sig;
	struct timer in_retry; /* armed: stdin is not watched until memory may be back */
	struct pending *pending;
	char default_session[40]; /* handle of this connection's default session, "" if none */
	int stop;
};

static struct server S;

/* Write s[0..len) whole; 0, or -1 when stdout is gone (the server then stops). */
static int write_all(const char *s, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(STDOUT_FILENO, s + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_ERROR, "stdout: %s; shutting down", strerror(errno));
			S.stop = 1;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* Write one line (a message without its newline) to stdout, whole. */
static void emit_text(const char *s, size_t len)
{
	char *line = malloc(len + 1);

	if (!line) {
		/* Two writes then: the line is still whole, stdout has no other writer. */
		if (write_all(s, len) == 0)
			write_all("\n", 1);
		return;
	}
	memcpy(line, s, len);
	line[len++] = '\n';
	write_all(line, len);
	free(line);
}

/* A request's answer could not be made for want of memory: an error made without
 * allocating, to id (NULL: JSON null), saying the server ran out of memory while it did
 * what. */
static void emit_oom(json_object *id, const char *what)
{
	char idt[80], text[512];

	mcp_id_text(id, idt, sizeof(idt));
	emit_text(text, mcp_oom_text(idt, what, text, sizeof(text)));
}

/* Write one message and its newline to stdout, whole; 0, or -ENOMEM when it could not be
 * encoded (nothing is written). */
static int emit(json_object *msg)
{
	size_t len;
	const char *s = json_object_to_json_string_length(
	    msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	if (!s) {
		log_msg(LOG_ERROR, "out of memory writing a message");
		return -ENOMEM;
	}
	emit_text(s, len);
	return 0;
}

static void batch_done(struct batch *b)
{
	if (b->waiting > 0)
		return;
	if (json_object_array_length(b->replies) > 0 && emit(b->replies) < 0)
		emit_oom(NULL, "writing the answers to a batch");
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
	if (!msg || emit(msg) < 0)
		emit_oom(id, "building the answer to this request");
	json_object_put(msg);
}

static void pending_free(struct pending *p)
{
	struct pending **pp;

	for (pp = &S.pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	timer_cancel(&p->beat);
	json_object_put(p->id);
	json_object_put(p->progress);
	run_args_clear(&p->args);
	free(p);
}

static void call_done(struct engine_call *c, struct run_outcome *o)
{
	struct pending *p = (struct pending *)c;
	struct batch *b = p->batch;

	if (!p->cancelled) {
		log_msg(LOG_INFO, "call %s%s%s: %s in %lld ms", json_object_to_json_string(p->id),
		        S.cfg->peer ? " from " : "", S.cfg->peer ? S.cfg->peer : "",
		        run_status_name(o->status), (long long)o->duration_ms);
		reply(b, p->id, mcp_tool_response(&S.conn, &p->args.ctx, p->id, o));
	} else {
		log_msg(LOG_INFO, "call %s: cancelled", json_object_to_json_string(p->id));
	}
	pending_free(p);
	if (b) {
		b->waiting--;
		batch_done(b);
	}
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
	n = mcp_progress_notification(p->progress, p->beats, msg);
	if (n) {
		emit(n);
		json_object_put(n);
	}
	timer_arm(&p->beat, now_ms() + HEARTBEAT_MS);
}

static void start_call(struct mcp_event *ev, struct batch *b)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p) {
		reply(b, ev->id, NULL);
		return;
	}
	p->id = json_object_get(ev->id);
	timer_init(&p->beat, heartbeat, p);
	if (ev->progress_token) {
		p->progress = json_object_get(ev->progress_token);
		timer_arm(&p->beat, now_ms() + HEARTBEAT_MS);
	}
	p->args = ev->args;
	memset(&ev->args, 0, sizeof(ev->args));
	p->batch = b;
	p->call.session = resolve_session(p->args.session);
	if (!p->call.session && (!p->args.session || strcmp(p->args.session, "new") == 0)) {
		/* Only memory could be short: a new session evicts the least recently used. */
		reply(b, p->id, NULL);
		pending_free(p); /* not linked yet: only frees */
		return;
	}
	if (!p->call.session) {
		struct run_outcome o;
		run_outcome_init(&o);
		o.status = RUN_ERROR;
		o.error_type = strdup("SessionError");
		if (asprintf(
		        &o.error_message,
		        "Unknown or expired session \"%.64s\". Sessions end when evicted (the "
		        "server keeps %u, least recently used first), after %g minutes idle, or "
		        "when the server restarts. Pass session \"new\" to start a new one, or "
		        "leave session out to use the default session.",
		        p->args.session ? p->args.session : "", S.cfg->max_sessions,
		        S.cfg->session_idle_s / 60) < 0)
			o.error_message = NULL;
		o.error_traceback = strdup("");
		reply(b, p->id, mcp_tool_response(&S.conn, &p->args.ctx, p->id, &o));
		run_outcome_clear(&o);
		pending_free(p); /* not linked yet: only frees */
		return;
	}
	p->call.reset = p->args.reset;
	p->call.code = p->args.code;
	p->call.code_len = p->args.code_len;
	p->call.timeout_s = p->args.timeout_s;
	p->call.done = call_done;
	p->next = S.pending;
	S.pending = p;
	if (b)
		b->waiting++;
	engine_submit(S.engine, &p->call);
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
}

static void handle_line(const char *line, size_t len)
{
	struct mcp_events evs = {0};
	struct batch *b = NULL;

	if (mcp_handle_line(&S.conn, line, len, &evs) < 0) {
		log_msg(LOG_ERROR, "out of memory handling a message%s",
		        evs.oom_answer ? "; it is answered with an error" : "");
		if (evs.oom_answer) {
			char text[512];
			emit_text(text, mcp_oom_text(evs.oom_id, "handling this request", text,
			                             sizeof(text)));
		}
		mcp_events_clear(&evs);
		return;
	}
	if (evs.is_batch) {
		b = calloc(1, sizeof(*b));
		if (b)
			b->replies = json_object_new_array();
		if (!b || !b->replies) {
			free(b);
			b = NULL;
		}
	}
	for (size_t i = 0; i < evs.n; i++) {
		struct mcp_event *ev = &evs.ev[i];
		switch (ev->kind) {
		case MCP_EV_REPLY:
			reply(b, ev->id, ev->msg);
			ev->msg = NULL;
			break;
		case MCP_EV_CALL:
			start_call(ev, b);
			break;
		case MCP_EV_CANCEL:
			cancel_call(ev->id);
			break;
		}
	}
	mcp_events_clear(&evs);
	if (b)
		batch_done(b);
}

#define STDIN_RETRY_MS 100

/* Watch stdin again after a shortage of memory. */
static void stdin_retry(struct timer *t)
{
	(void)t;
	if (loop_add(&S.in, EPOLLIN) < 0) {
		timer_arm(&S.in_retry, now_ms() + STDIN_RETRY_MS);
		return;
	}
	log_msg(LOG_INFO, "reading requests again");
}

static void stdin_event(struct watch *w, uint32_t events)
{
	char buf[65536];
	ssize_t n;
	const char *line;
	size_t len;
	int r;

	/* What is read is kept whole: without room for it, nothing is read (nor lost) for a
	 * moment, and the requests wait in the pipe. */
	if (linebuf_reserve(&S.lb, sizeof(buf)) < 0) {
		log_msg(LOG_ERROR, "out of memory reading requests; trying again in %d ms",
		        STDIN_RETRY_MS);
		loop_del(&S.in);
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
		log_msg(LOG_DEBUG, "stdin closed; shutting down");
		S.stop = 1;
		return;
	}
	if (linebuf_feed(&S.lb, buf, (size_t)n) < 0) {
		log_msg(LOG_ERROR, "out of memory reading stdin"); /* not after linebuf_reserve */
		S.stop = 1;
		return;
	}
	while ((r = linebuf_next(&S.lb, &line, &len)) != 0 && !S.stop) {
		if (r == LINEBUF_TOO_LONG) {
			char says[96];
			json_object *e;

			snprintf(says, sizeof(says),
			         "Message too large: a JSON-RPC message may be at most %u bytes",
			         PROTO_MAX_LINE);
			e = mcp_error_response(NULL, JSONRPC_INVALID_REQUEST, says);
			log_msg(LOG_WARN, "dropped a message over %u bytes", PROTO_MAX_LINE);
			emit(e);
			json_object_put(e);
			continue;
		}
		if (len == 0)
			continue;
		handle_line(line, len);
	}
}

static void signal_event(struct watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	while (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			engine_sigchld(S.engine);
		} else {
			log_msg(LOG_INFO, "signal %d; shutting down", (int)si.ssi_signo);
			S.stop = 1;
		}
	}
}

/* Server events (never the user's output) for a client that asked with logging/setLevel. */
static void log_to_client(enum log_level l, const char *text)
{
	static const char *const levels[] = {"error", "warning", "info", "debug"};
	json_object *n = mcp_log_notification(&S.conn, levels[l], "safepy", text);

	if (n) {
		emit(n);
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

int server_main(const struct config *cfg, const char *zygote_exe)
{
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
	mcp_conn_init(&S.conn, &S.mcfg);
	linebuf_init(&S.lb, PROTO_MAX_LINE);
	sfd = signals_block();
	rc = sfd < 0 ? sfd : loop_init();
	if (rc < 0) {
		log_msg(LOG_ERROR, "cannot set up the event loop: %s", strerror(-rc));
		return 1;
	}
	/* The zygote starts before any request is read. */
	rc = engine_new(cfg, zygote_exe, &S.engine);
	if (rc < 0) {
		log_msg(LOG_ERROR, "cannot start the Python zygote: %s", strerror(-rc));
		return 1;
	}
	S.sig = (struct watch){.fd = sfd, .fn = signal_event};
	S.in = (struct watch){.fd = STDIN_FILENO, .fn = stdin_event};
	timer_init(&S.in_retry, stdin_retry, NULL);
	if (loop_add(&S.sig, EPOLLIN) < 0 || loop_add(&S.in, EPOLLIN) < 0) {
		log_msg(LOG_ERROR, "cannot watch stdin: %s", strerror(errno));
		engine_free(S.engine);
		return 1;
	}
	log_msg(LOG_INFO, "safepy %s serving MCP on stdio (max %u workers, %g s per call)",
	        SAFEPY_VERSION, cfg->max_workers, cfg->timeout_s);
	log_set_sink(log_to_client);
#ifdef SAFEPY_FAILALLOC
	failalloc_arm(); /* the test build: allocations may fail from here on */
#endif
	while (!S.stop) {
		rc = loop_run_once(-1);
		if (rc < 0) {
			log_msg(LOG_ERROR, "event loop: %s", strerror(-rc));
			break;
		}
	}
	log_set_sink(NULL);
	/* Calls still running get no response: the client is gone or asked us to stop. */
	for (struct pending *p = S.pending; p; p = p->next)
		p->cancelled = 1;
	engine_free(S.engine);
	while (S.pending) {
		struct pending *p = S.pending;
		struct batch *b = p->batch;
		pending_free(p);
		if (b && --b->waiting == 0) {
			json_object_put(b->replies);
			free(b);
		}
	}
	timer_cancel(&S.in_retry);
	linebuf_clear(&S.lb);
	return 0;
}
