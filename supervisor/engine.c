/* engine.c - runs calls in workers and keeps sessions: starts (and restarts) the zygote,
 * keeps pre-forked workers ready, schedules up to max_workers calls, enforces the wall clock
 * (a soft SIGUSR1 so the code's output comes back, then SIGKILL), cancels, and names the
 * syscall that killed a worker (it attaches with ptrace and reads the registers at the exit
 * stop). A session is a chain of forks: the process that ran the last committed call stays
 * parked; the next call runs in a fork of it that the supervisor approves through the fork
 * gate (seccomp user notification); a call that fails is killed and the parked process stays.
 * Nothing from a worker is trusted: frames are bounded and validated by outcome_decode.
 * Errors are reported through the call's outcome; the engine itself keeps serving. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>

#include "supervisor.h"

#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif

#define SOFT_KILL_GRACE_MS 500  /* between the deadline signal and SIGKILL */
#define WAITED_GRACE_MS    2000 /* for a parked process to report its child gone */

enum wstate {
	W_SPAWNING, /* asked the zygote; no pid yet */
	W_BOOTING,  /* pid known or ready seen; waiting for the other */
	W_IDLE,     /* fresh, sandboxed, waiting for code */
	W_RUNNING,  /* a call runs: in this process (fresh) or in its fork (parked) */
	W_PARKED,   /* holds a session's state, waiting for the next call */
	W_WAITING,  /* a session call was rolled back; waiting for the parked process */
	W_DONE,     /* dying: waiting for its exit */
};

enum kill_reason {
	KILL_NONE,
	KILL_TIMEOUT,
	KILL_CANCEL,
	KILL_SHUTDOWN,
	KILL_BAD_FRAME,
	KILL_FINISHED,
	KILL_ZYGOTE
};

struct session {
	struct session *next;
	struct engine *engine;
	char handle[33];
	struct worker *parked;       /* NULL: empty, the next call starts in a fresh worker */
	struct worker *before_reset; /* the state a running reset call replaces, kept until it
	                              * commits, so a failed reset changes nothing */
	struct engine_call *active;  /* the call being run or waiting its turn globally */
	struct engine_call *pending, *pending_tail; /* calls after it, in arrival order */
	int64_t last_used;                          /* for idle expiry */
	uint64_t used_seq; /* for least-recently-used eviction (ms can tie) */
};

struct worker {
	struct worker *next;
	struct engine *engine;
	struct session *session; /* the session whose state this worker holds or builds */
	enum wstate state;
	uint32_t req_id;
	pid_t pid; /* the process that holds the state (or runs a fresh call) */
	int pidfd;
	pid_t runner; /* the process running the current call (pid, or its fork) */
	int runner_pidfd;
	int forked;            /* the current call runs in a fork of pid */
	int expect_fork;       /* pid said it forks next (FRAME_FORKING): one fork allowed */
	int code_sent;         /* code or PREPARE went to the parked process; FORKING may follow */
	int spare;             /* a runner forked ahead of the next call (FRAME_PREPARE) */
	int prep_failures;     /* spares that died idle in a row; preparing stops at 3 */
	int refusals;          /* forks refused during this call (logged once) */
	struct watch chan;     /* our end of the worker's channel */
	struct watch listener; /* the fork gate's notifications, fd -1 if none */
	unsigned char *rx;     /* bytes received, up to one frame */
	size_t rx_len, rx_cap;
	char *tx; /* the code frame still to send */
	size_t tx_len, tx_off;
	int ready; /* FRAME_READY seen */
	int traced;
	int generation; /* the zygote that forked it */
	struct engine_call *call;
	int64_t soft_deadline, hard_deadline, waited_deadline;
	enum kill_reason kill; /* why the current runner (or the worker) was killed */
	long sys_nr;           /* from the exit stop, when a runner was killed by SIGSYS */
	unsigned int sys_arch;
	unsigned long long sys_arg0, sys_arg2;
	pid_t sys_pid;
	int have_sys;
	int64_t spawned_ms;
	struct cgroup_worker cg; /* its own cgroup under a delegated one */
	uint64_t ooms_before;    /* memory.events oom_kill when the current call started */
	int has_cg;
};

struct engine {
	const struct config *cfg;
	const char *zygote_exe;
	/* the zygote */
	pid_t zpid;
	struct watch zctl;
	int zready;
	int generation;
	int zfailures;     /* consecutive start-up failures */
	int64_t zretry_at; /* when start-up failed: next attempt */
	char zerror[256];  /* why start-up failed */
	/* calls, workers, sessions */
	struct engine_call *queue, *queue_tail;
	struct worker *workers;
	struct session *sessions;
	unsigned int n_sessions;
	uint64_t use_seq;
	uint32_t next_req;
	char *layers;  /* first ready worker's sandbox report */
	int can_trace; /* -1 unknown */
	int warned_trace;
};

static void worker_kill(struct worker *w, enum kill_reason why);
static void runner_kill(struct worker *w, enum kill_reason why);
static void schedule(struct engine *e);
static void session_next(struct engine *e, struct session *s);

/* ---- outcomes ---- */

static void call_finish(struct engine *e, struct engine_call *c, struct run_outcome *o)
{
	struct session *s = c->session;

	o->duration_ms = now_ms() - c->started_ms;
	c->worker = NULL;
	if (s && !o->session)
		o->session = strdup(s->handle);
	if (s && s->active == c && s->before_reset) {
		/* A reset call: its fresh state replaces the old one only if it committed. */
		struct worker *old = s->before_reset;
		s->before_reset = NULL;
		if (s->parked && (o->status == RUN_OK || o->status == RUN_ERROR)) {
			old->session = NULL;
			worker_kill(old, KILL_FINISHED);
		} else {
			if (s->parked) {
				s->parked->session = NULL;
				worker_kill(s->parked, KILL_FINISHED);
			}
			s->parked = old;
		}
	}
	c->done(c, o);
	if (s && s->active == c) {
		s->active = NULL;
		s->last_used = now_ms();
		session_next(e, s);
	}
}

/* msg followed by the sentence saying the session did not change (new string or NULL). */
static char *rollback_note(const char *msg)
{
	static const char note[] = "The session is unchanged: its state is as it was before "
	                           "this call.";
	size_t n = msg ? strlen(msg) : 0;
	char *out = NULL;

	if (n == 0)
		return strdup(note);
	if (asprintf(&out, "%s%s %s", msg, strchr(".!?", msg[n - 1]) ? "" : ".", note) < 0)
		return NULL;
	return out;
}

/* Finish a call with a status and a message of ours (no worker output). */
static void call_fail(struct engine *e, struct engine_call *c, enum run_status st, const char *type,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void call_fail(struct engine *e, struct engine_call *c, enum run_status st, const char *type,
                      const char *fmt, ...)
{
	struct run_outcome o;
	va_list ap;
	char *msg = NULL, *full = NULL;

	run_outcome_init(&o);
	o.status = st;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg && c->session && st != RUN_CANCELLED) {
		full = rollback_note(msg);
		if (full) {
			free(msg);
			msg = full;
		}
	}
	o.error_type = strdup(type);
	o.error_message = msg;
	o.error_traceback = strdup("");
	call_finish(e, c, &o);
	run_outcome_clear(&o);
}

/* ---- sessions ---- */

/* Start the next waiting call of a session. */
static void session_next(struct engine *e, struct session *s)
{
	struct engine_call *c = s->pending;

	if (s->active || !c)
		return;
	s->pending = c->next;
	if (!s->pending)
		s->pending_tail = NULL;
	c->next = NULL;
	s->active = c;
	if (e->queue_tail)
		e->queue_tail->next = c;
	else
		e->queue = c;
	e->queue_tail = c;
}

static void session_free(struct engine *e, struct session *s)
{
	struct session **pp;

	for (pp = &e->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	if (s->parked) {
		s->parked->session = NULL;
		worker_kill(s->parked, KILL_FINISHED);
	}
	if (s->before_reset) {
		s->before_reset->session = NULL;
		worker_kill(s->before_reset, KILL_FINISHED);
	}
	e->n_sessions--;
	free(s);
}

/* Evict idle sessions: those idle too long, then the least recently used over the limit. */
static void sessions_evict(struct engine *e, unsigned int room)
{
	int64_t now = now_ms();

	for (struct session *s = e->sessions, *next; s; s = next) {
		next = s->next;
		if (!s->active && now - s->last_used > (int64_t)(e->cfg->session_idle_s * 1000)) {
			log_msg(LOG_INFO, "session %.8s… expired after %g s idle", s->handle,
			        e->cfg->session_idle_s);
			session_free(e, s);
		}
	}
	while (e->n_sessions + room > e->cfg->max_sessions) {
		struct session *lru = NULL;
		for (struct session *s = e->sessions; s; s = s->next)
			if (!s->active && (!lru || s->used_seq < lru->used_seq))
				lru = s;
		if (!lru)
			break; /* every session is busy: allow more for now */
		log_msg(LOG_INFO, "session %.8s… evicted (least recently used of %u)", lru->handle,
		        e->cfg->max_sessions);
		session_free(e, lru);
	}
}

struct session *engine_session_new(struct engine *e)
{
	unsigned char raw[16];
	struct session *s;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return NULL;
	sessions_evict(e, 1);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(s->handle + 2 * i, 3, "%02x", raw[i]);
	s->engine = e;
	s->last_used = now_ms();
	s->used_seq = ++e->use_seq;
	s->next = e->sessions;
	e->sessions = s;
	e->n_sessions++;
	return s;
}

struct session *engine_session_find(struct engine *e, const char *handle)
{
	for (struct session *s = e->sessions; s; s = s->next) {
		if (strcmp(s->handle, handle) != 0)
			continue;
		if (!s->active &&
		    now_ms() - s->last_used > (int64_t)(e->cfg->session_idle_s * 1000)) {
			session_free(e, s); /* expired, though not swept yet */
			return NULL;
		}
		return s;
	}
	return NULL;
}

const char *engine_session_handle(const struct session *s)
{
	return s->handle;
}

/* ---- the zygote ---- */

static void zygote_event(struct watch *w, uint32_t events);

static int zygote_start(struct engine *e)
{
	int sv[2] = {-1, -1};
	char **argv;
	pid_t pid;

	argv = config_zygote_argv(e->cfg);
	if (!argv)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int err = -errno;
		for (char **a = argv; *a; a++)
			free(*a);
		free(argv);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		char *const envp[] = {NULL};
		sigset_t none;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* An empty environment, stdout to /dev/null, the control socket on fd 3. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(sv[1], 3) < 0)
			_exit(127);
		syscall(SYS_close_range, 4, ~0U, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execve(e->zygote_exe, argv, envp);
		_exit(127);
	}
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
	close(sv[1]);
	if (pid < 0) {
		int err = -errno;
		close(sv[0]);
		return err;
	}
	e->zpid = pid;
	e->zready = 0;
	e->generation++;
	e->zctl.fd = sv[0];
	e->zctl.fn = zygote_event;
	e->zctl.data = e;
	if (loop_add(&e->zctl, EPOLLIN) < 0) {
		close(sv[0]);
		e->zctl.fd = -1;
		return -EIO;
	}
	log_msg(LOG_DEBUG, "zygote started (pid %d)", (int)pid);
	return 0;
}

static void zygote_close(struct engine *e)
{
	if (e->zctl.fd >= 0) {
		loop_del(&e->zctl);
		close(e->zctl.fd);
		e->zctl.fd = -1;
	}
}

static struct worker *worker_by_req(struct engine *e, uint32_t id)
{
	for (struct worker *w = e->workers; w; w = w->next)
		if (w->state == W_SPAWNING && w->req_id == id)
			return w;
	return NULL;
}

/* The worker a process belongs to: its holder or its runner. */
static struct worker *worker_by_pid(struct engine *e, pid_t pid)
{
	for (struct worker *w = e->workers; w; w = w->next)
		if (w->pid == pid || (w->runner == pid && pid > 0))
			return w;
	return NULL;
}

static void worker_activate(struct worker *w);
static void worker_free(struct worker *w);
static void worker_exited(struct worker *w, pid_t pid, int status);

/* The zygote is gone: calls whose worker it had not forked yet fail; forked workers die of
 * their parent-death signal and are reported when reaped. Parked sessions are not its
 * children after their first call: they stay. */
static void zygote_lost(struct engine *e, const char *why)
{
	int started = e->zready;

	zygote_close(e);
	if (!e->zready) {
		e->zfailures++;
		snprintf(e->zerror, sizeof(e->zerror), "%s", why);
		e->zretry_at = now_ms() + (e->zfailures > 5 ? 30000 : 1000 << e->zfailures);
		log_msg(LOG_ERROR, "the Python zygote failed to start: %s", why);
	} else {
		e->zfailures = 0;
		e->zretry_at = now_ms();
		log_msg(LOG_WARN, "the Python zygote exited (%s); restarting it", why);
	}
	for (struct worker *w = e->workers, *next; w; w = next) {
		next = w->next;
		if (w->generation != e->generation || w->state == W_DONE)
			continue;
		if (w->state == W_PARKED || w->state == W_WAITING || w->forked)
			continue; /* a session's chain: no longer the zygote's children */
		if (!w->traced) {
			/* Nobody will report its exit now: it dies of its parent-death signal. */
			struct engine_call *c = w->call;
			w->call = NULL;
			if (w->session && w->session->parked == w)
				w->session->parked = NULL;
			worker_kill(w, KILL_ZYGOTE);
			worker_free(w);
			if (c && started)
				call_fail(e, c, RUN_CRASHED, "SandboxError",
				          "The Python interpreter process exited (%s); it is being "
				          "restarted: please retry.",
				          why);
			else if (c)
				call_fail(e, c, RUN_CRASHED, "SandboxError",
				          "The Python sandbox could not start (%s). See the server "
				          "log.",
				          why);
		} else {
			worker_kill(w, KILL_ZYGOTE);
		}
	}
	if (!e->zready) {
		/* Start-up failed: calls waiting for a fresh worker cannot run now. */
		for (struct engine_call **pp = &e->queue; *pp;) {
			struct engine_call *c = *pp;
			if (c->session && c->session->parked && !c->reset) {
				pp = &c->next;
				continue;
			}
			*pp = c->next;
			c->next = NULL;
			call_fail(e, c, RUN_CRASHED, "SandboxError",
			          "The Python sandbox could not start: %s. See the server log.",
			          e->zerror);
		}
		e->queue_tail = NULL;
		for (struct engine_call *c = e->queue; c; c = c->next)
			e->queue_tail = c;
	}
	e->zready = 0;
}

/* With a delegated cgroup, each worker (and so each session's chain of processes) gets its
 * own cgroup: memory.max, memory.swap.max 0, pids.max. Without one, rlimits remain. */
static void worker_cgroup(struct worker *w)
{
	const struct config *cfg = w->engine->cfg;
	struct cgroup_limits lim = {.memory_max = cfg->memory, .no_swap = 1, .pids_max = 64};
	int rc;

	if (!cfg->cgroup || cfg->cgroup->state != CGROUP_ACTIVE)
		return;
	rc = cgroup_worker_create(cfg->cgroup, &lim, &w->cg);
	if (rc == 0) {
		rc = cgroup_worker_attach(&w->cg, w->pid);
		if (rc < 0)
			cgroup_worker_remove(cfg->cgroup, &w->cg);
	}
	if (rc < 0) {
		log_msg(LOG_WARN, "no cgroup for worker %d: %s", (int)w->pid, strerror(-rc));
		return;
	}
	w->has_cg = 1;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void zygote_event(struct watch *wt, uint32_t events)
{
	struct engine *e = wt->data;
	unsigned char msg[ZYGOTE_MSG_LEN + 1];
	ssize_t n = recv(wt->fd, msg, sizeof(msg), MSG_DONTWAIT);
	uint32_t id, val;
	struct worker *w;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The socket closes as the zygote exits: say how it ended when it has. */
		char why[96];
		int status;
		pid_t r = 0;
		snprintf(why, sizeof(why), "its control socket closed");
		for (int i = 0;
		     i < 50 && e->zpid > 0 && (r = waitpid(e->zpid, &status, WNOHANG)) == 0; i++)
			usleep(2000);
		if (r == e->zpid && r > 0) {
			e->zpid = 0;
			if (WIFEXITED(status))
				snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(status));
			else if (WIFSIGNALED(status))
				snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
		}
		zygote_lost(e, why);
		schedule(e);
		return;
	}
	if (n != ZYGOTE_MSG_LEN) {
		log_msg(LOG_ERROR, "malformed message from the zygote; restarting it");
		kill(e->zpid, SIGKILL);
		zygote_lost(e, "it sent a malformed message");
		schedule(e);
		return;
	}
	id = get_u32(msg + 1);
	val = get_u32(msg + 5);
	switch (msg[0]) {
	case ZYGOTE_MSG_READY:
		e->zready = 1;
		e->zfailures = 0;
		log_msg(LOG_DEBUG, "zygote ready");
		break;
	case ZYGOTE_MSG_PID:
		w = worker_by_req(e, id);
		if (!w)
			break;
		w->pid = (pid_t)val;
		w->runner = w->pid;
		w->pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
		worker_cgroup(w);
		w->state = W_BOOTING;
		if (w->ready)
			worker_activate(w);
		break;
	case ZYGOTE_MSG_EXIT:
		/* Traced workers were reported to us as their tracer already. */
		w = worker_by_pid(e, (pid_t)id);
		if (w && !w->traced && w->pid == (pid_t)id)
			worker_exited(w, (pid_t)id, (int)val);
		break;
	case ZYGOTE_MSG_ERR:
		w = worker_by_req(e, id);
		if (!w)
			break;
		log_msg(LOG_ERROR, "the zygote could not fork a worker: %s", strerror((int)val));
		if (w->call) {
			struct engine_call *c = w->call;
			w->call = NULL;
			call_fail(e, c, RUN_CRASHED, "SandboxError",
			          "Could not start a worker process: %s", strerror((int)val));
		}
		worker_free(w);
		break;
	default:
		log_msg(LOG_ERROR, "unknown message from the zygote");
		break;
	}
	schedule(e);
}

/* ---- workers ---- */

static void worker_event(struct watch *wt, uint32_t events);
static void listener_event(struct watch *wt, uint32_t events);

static void close_watch(struct watch *wt)
{
	if (wt->fd >= 0) {
		loop_del(wt);
		close(wt->fd);
		wt->fd = -1;
	}
}

static void worker_free(struct worker *w)
{
	struct engine *e = w->engine;
	struct worker **pp;

	for (pp = &e->workers; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	if (w->session && w->session->parked == w)
		w->session->parked = NULL;
	close_watch(&w->chan);
	close_watch(&w->listener);
	if (w->has_cg) {
		/* Its processes are gone; a straggler makes this fail, and the unit's cgroup
		 * tree goes with the service anyway. */
		cgroup_worker_kill(&w->cg);
		if (cgroup_worker_remove(e->cfg->cgroup, &w->cg) < 0)
			log_msg(LOG_DEBUG, "cgroup %s not removed yet", w->cg.name);
	}
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->runner_pidfd >= 0)
		close(w->runner_pidfd);
	free(w->rx);
	free(w->tx);
	free(w);
}

static int send_with_fd(int sock, const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct msghdr mh = {0};
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/* Ask the zygote for a worker. Returns the worker or NULL. */
static struct worker *worker_spawn(struct engine *e)
{
	unsigned char msg[ZYGOTE_MSG_LEN] = {ZYGOTE_MSG_SPAWN};
	struct worker *w;
	int sv[2];

	if (e->zctl.fd < 0)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_msg(LOG_ERROR, "socketpair: %s", strerror(errno));
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	w->engine = e;
	w->state = W_SPAWNING;
	w->req_id = ++e->next_req;
	w->pidfd = w->runner_pidfd = -1;
	w->generation = e->generation;
	w->spawned_ms = now_ms();
	w->chan = (struct watch){.fd = sv[0], .fn = worker_event, .data = w};
	w->listener = (struct watch){.fd = -1, .fn = listener_event, .data = w};
	msg[1] = (unsigned char)w->req_id;
	msg[2] = (unsigned char)(w->req_id >> 8);
	msg[3] = (unsigned char)(w->req_id >> 16);
	msg[4] = (unsigned char)(w->req_id >> 24);
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0 || loop_add(&w->chan, EPOLLIN) < 0 ||
	    send_with_fd(e->zctl.fd, msg, sizeof(msg), sv[1]) < 0) {
		log_msg(LOG_ERROR, "could not ask the zygote for a worker: %s", strerror(errno));
		close(sv[1]);
		close_watch(&w->chan);
		free(w);
		return NULL;
	}
	close(sv[1]);
	w->next = e->workers;
	e->workers = w;
	return w;
}

static void send_signal(int pidfd, pid_t pid, int sig)
{
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	else if (pid > 0)
		kill(pid, sig);
}

/* Kill the whole worker: its holder and its runner. */
static void worker_kill(struct worker *w, enum kill_reason why)
{
	if (w->kill == KILL_NONE || why == KILL_SHUTDOWN)
		w->kill = why;
	send_signal(w->pidfd, w->pid, SIGKILL);
	if (w->forked)
		send_signal(w->runner_pidfd, w->runner, SIGKILL);
	w->soft_deadline = w->hard_deadline = w->waited_deadline = 0;
	w->state = W_DONE;
}

/* Kill only the process running the current call; a parked holder stays. */
static void runner_kill(struct worker *w, enum kill_reason why)
{
	if (!w->forked) {
		worker_kill(w, why);
		return;
	}
	if (w->kill == KILL_NONE)
		w->kill = why;
	w->expect_fork = 0;
	if (w->runner > 0)
		send_signal(w->runner_pidfd, w->runner, SIGKILL);
	w->soft_deadline = w->hard_deadline = 0;
	/* The parked process reports its child gone; if it does not, the session is lost. */
	if (!w->waited_deadline)
		w->waited_deadline = now_ms() + WAITED_GRACE_MS + SOFT_KILL_GRACE_MS;
}

static void worker_send_pending(struct worker *w)
{
	while (w->tx && w->tx_off < w->tx_len) {
		ssize_t n = send(w->chan.fd, w->tx + w->tx_off, w->tx_len - w->tx_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN) {
				loop_mod(&w->chan, EPOLLIN | EPOLLOUT);
				return;
			}
			if (errno == EINTR)
				continue;
			break; /* the worker died: its exit tells the story */
		}
		w->tx_off += (size_t)n;
	}
	free(w->tx);
	w->tx = NULL;
	if (w->chan.fd >= 0)
		loop_mod(&w->chan, EPOLLIN);
}

/* Append one frame to what is still to send, and send what can be sent. 0 or -ENOMEM. */
static int worker_queue_frame(struct worker *w, char type, const char *payload, size_t len)
{
	size_t pending = w->tx ? w->tx_len - w->tx_off : 0;
	char *buf = malloc(pending + FRAME_HEADER + 1 + len);

	if (!buf)
		return -ENOMEM;
	if (pending)
		memcpy(buf, w->tx + w->tx_off, pending);
	frame_header_put((unsigned char *)buf + pending, (uint32_t)(len + 1));
	buf[pending + FRAME_HEADER] = type;
	if (len)
		memcpy(buf + pending + FRAME_HEADER + 1, payload, len);
	free(w->tx);
	w->tx = buf;
	w->tx_len = pending + FRAME_HEADER + 1 + len;
	w->tx_off = 0;
	worker_send_pending(w);
	return 0;
}

/* A parked session forks the next call's process ahead of time, so a call only has to send
 * its code; the fork goes through the gate like any other. */
static void worker_prepare(struct worker *w)
{
	if (!w->session || w->state != W_PARKED || w->forked || w->prep_failures >= 3 ||
	    w->chan.fd < 0)
		return;
	w->forked = 1;
	w->spare = 1;
	w->code_sent = 1;
	w->expect_fork = 0;
	w->refusals = 0;
	w->runner = 0;
	if (w->runner_pidfd >= 0)
		close(w->runner_pidfd);
	w->runner_pidfd = -1;
	if (worker_queue_frame(w, FRAME_PREPARE, NULL, 0) < 0) {
		w->forked = w->spare = w->code_sent = 0;
		w->prep_failures = 3;
	}
}

static double call_timeout(const struct engine *e, const struct engine_call *c)
{
	return c->timeout_s > 0 && c->timeout_s < e->cfg->timeout_s ? c->timeout_s
	                                                            : e->cfg->timeout_s;
}

/* Give a call to a fresh or parked worker: queue its code frame and start the clock. */
static void worker_start_call(struct worker *w, struct engine_call *c)
{
	struct engine *e = w->engine;

	w->call = c;
	c->worker = w;
	w->kill = KILL_NONE;
	w->have_sys = 0;
	w->ooms_before = 0;
	if (w->has_cg)
		cgroup_worker_oom_kills(&w->cg, &w->ooms_before);
	if (w->state == W_PARKED && w->spare) {
		/* The runner forked ahead is waiting for this code. */
		w->spare = 0;
	} else if (w->state == W_PARKED) {
		/* The parked process forks the runner; the gate lets exactly that fork through,
		 * once the process says it is about to make it. */
		w->forked = 1;
		w->expect_fork = 0;
		w->code_sent = 1;
		w->refusals = 0;
		w->runner = 0;
		if (w->runner_pidfd >= 0)
			close(w->runner_pidfd);
		w->runner_pidfd = -1;
	} else {
		w->forked = 0;
		w->runner = w->pid;
	}
	w->state = W_RUNNING;
	if (worker_queue_frame(w, FRAME_CODE, c->code, c->code_len) < 0) {
		w->call = NULL;
		worker_kill(w, KILL_SHUTDOWN);
		call_fail(e, c, RUN_CRASHED, "SandboxError", "out of memory in the server");
		return;
	}
	w->soft_deadline = now_ms() + (int64_t)(call_timeout(e, c) * 1000);
	w->hard_deadline = w->soft_deadline + SOFT_KILL_GRACE_MS;
	worker_send_pending(w);
}

/* pid known and sandbox entered: attach (to name a killing syscall, and to follow a
 * session's forks), then work. */
static void worker_activate(struct worker *w)
{
	struct engine *e = w->engine;

	if (ptrace(PTRACE_SEIZE, w->pid, 0,
	           PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK) == 0) {
		w->traced = 1;
		e->can_trace = 1;
	} else {
		if (e->can_trace != 1)
			e->can_trace = 0;
		if (!e->warned_trace) {
			log_msg(LOG_WARN,
			        "cannot attach to workers (%s): a sandbox violation will not name "
			        "its syscall",
			        strerror(errno));
			e->warned_trace = 1;
		}
	}
	if (w->call)
		worker_start_call(w, w->call);
	else
		w->state = W_IDLE;
}

/* Describe how a runner ended without delivering a result, and fail its call. */
static void report_runner_end(struct worker *w, struct engine_call *c, int status)
{
	struct engine *e = w->engine;
	double t = call_timeout(e, c);

	switch (w->kill) {
	case KILL_CANCEL:
		call_fail(e, c, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
		return;
	case KILL_TIMEOUT:
		call_fail(e, c, RUN_TIMEOUT, "TimeoutError",
		          "Execution exceeded the time limit of %g s and was stopped.", t);
		return;
	case KILL_BAD_FRAME:
		call_fail(e, c, RUN_OUTPUT_LIMIT, "OutputLimitError",
		          "The worker sent a result larger than %u bytes or malformed.", FRAME_MAX);
		return;
	case KILL_ZYGOTE:
		call_fail(e, c, RUN_CRASHED, "SandboxError",
		          "The Python interpreter process exited while this call ran; it has "
		          "been restarted: please retry.");
		return;
	case KILL_SHUTDOWN:
		call_fail(e, c, RUN_CANCELLED, "Cancelled", "The server is shutting down.");
		return;
	default:
		break;
	}
	if ((unsigned int)status >= 0xFFFF0000u) {
		call_fail(e, c, RUN_CRASHED, "SandboxError",
		          "The session could not start a process for this call: %s.",
		          strerror((int)((unsigned int)status & 0xFFFF)));
		return;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
		char name[64];
		if (!w->have_sys) {
			call_fail(e, c, RUN_SANDBOX_VIOLATION, "SandboxViolation",
			          "The sandbox stopped the code: it made a system call that is "
			          "not allowed.");
			return;
		}
		policy_syscall_name(w->sys_arch, w->sys_nr, name, sizeof(name));
		if ((strcmp(name, "tgkill") == 0 || strcmp(name, "tkill") == 0) &&
		    (w->sys_arg2 == SIGABRT || w->sys_arg0 == (unsigned long long)w->sys_pid)) {
			call_fail(
			    e, c, RUN_CRASHED, "InterpreterCrash",
			    "The interpreter aborted (often memory exhaustion inside C code).");
			return;
		}
		log_msg(LOG_WARN, "worker %d killed by the sandbox: syscall %s", (int)w->sys_pid,
		        name);
		call_fail(e, c, RUN_SANDBOX_VIOLATION, "SandboxViolation",
		          "The sandbox stopped the code: it attempted the system call '%s'%s, "
		          "which is not allowed (no files, network, processes or signals).",
		          name, w->sys_arch == AUDIT_ARCH_I386 ? " (i386 entry point)" : "");
		return;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
		call_fail(e, c, RUN_TIMEOUT, "TimeoutError",
		          "Execution exceeded the CPU time limit of %u s and was stopped.",
		          e->cfg->cpu_s);
		return;
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		uint64_t ooms = 0;
		if (sig == SIGKILL && w->has_cg && cgroup_worker_oom_kills(&w->cg, &ooms) == 0 &&
		    ooms > w->ooms_before)
			call_fail(e, c, RUN_MEMORY_LIMIT, "MemoryError",
			          "The code used more than the memory limit (%llu MiB) and was "
			          "stopped.",
			          (unsigned long long)(e->cfg->memory >> 20));
		else if (sig == SIGKILL)
			call_fail(e, c, RUN_MEMORY_LIMIT, "MemoryError",
			          "The worker was killed (SIGKILL), most likely by the system's "
			          "out-of-memory killer.");
		else
			call_fail(e, c, RUN_CRASHED, "InterpreterCrash",
			          "The interpreter crashed (signal %d, %s).", sig, strsignal(sig));
		return;
	}
	if (WIFEXITED(status)) {
		const char *why = worker_exit_reason(WEXITSTATUS(status));
		if (WEXITSTATUS(status) == WORKER_EXIT_SECCOMP ||
		    WEXITSTATUS(status) == WORKER_EXIT_NNP ||
		    WEXITSTATUS(status) == WORKER_EXIT_GATE)
			call_fail(e, c, RUN_CRASHED, "SandboxError",
			          "The sandbox could not be set up (%s); safepy refuses to run "
			          "code without seccomp and no_new_privs. Run `safepy doctor`.",
			          why ? why : "unknown");
		else
			call_fail(e, c, RUN_CRASHED, "SandboxError",
			          "The worker ended without a result (exit status %d%s%s).",
			          WEXITSTATUS(status), why ? ": " : "", why ? why : "");
	}
}

/* The parked process reported its child gone (or we gave up waiting): the session is ready
 * again, and the call, if not answered yet, ends. */
static void worker_waited(struct worker *w, int status)
{
	struct engine_call *c = w->call;

	/* The runner should be gone; a runner that forged this frame is not let to linger. */
	if (w->runner > 0 && w->runner != w->pid)
		send_signal(w->runner_pidfd, w->runner, SIGKILL);
	w->call = NULL;
	w->forked = 0;
	w->expect_fork = 0;
	w->runner = 0;
	if (w->runner_pidfd >= 0)
		close(w->runner_pidfd);
	w->runner_pidfd = -1;
	w->waited_deadline = 0;
	w->soft_deadline = w->hard_deadline = 0;
	if (!c && w->spare)
		w->prep_failures++; /* the spare died before any call came */
	w->spare = 0;
	if (w->state != W_DONE)
		w->state = W_PARKED;
	if (c)
		report_runner_end(w, c, status);
	w->kill = KILL_NONE;
	worker_prepare(w);
}

/* A result frame: commit the session's new state or roll it back. */
static void worker_result(struct worker *w, const char *p, size_t len)
{
	struct engine *e = w->engine;
	struct engine_call *c = w->call;
	struct session *s = w->session;
	struct run_outcome o;
	int commit;

	run_outcome_init(&o);
	if (outcome_decode(p, len, &o) < 0) {
		run_outcome_clear(&o);
		runner_kill(w, KILL_BAD_FRAME);
		return;
	}
	w->call = NULL;
	w->soft_deadline = w->hard_deadline = 0;
	commit = s && (o.status == RUN_OK || o.status == RUN_ERROR);
	if (!s) {
		/* A one-shot call: the worker's life ends with it. */
		worker_kill(w, KILL_FINISHED);
	} else if (commit) {
		if (w->forked) {
			/* The runner holds the new state: the old parked process goes. */
			send_signal(w->pidfd, w->pid, SIGKILL);
			if (w->pidfd >= 0)
				close(w->pidfd);
			w->pid = w->runner;
			w->pidfd = w->runner_pidfd;
			w->runner_pidfd = -1;
		}
		w->forked = 0;
		w->spare = 0;
		w->expect_fork = 0;
		w->prep_failures = 0;
		w->state = W_PARKED;
		s->parked = w;
	} else if (w->forked) {
		/* Roll back: the runner goes, the parked process reports it and stays. */
		runner_kill(w, KILL_FINISHED);
		w->state = W_WAITING;
	} else {
		/* The session's first state never came to be: it stays empty. */
		worker_kill(w, KILL_FINISHED);
		if (s->parked == w)
			s->parked = NULL;
	}
	if (s && !commit && o.status != RUN_CANCELLED) {
		char *m = rollback_note(o.error_message);
		if (m) {
			free(o.error_message);
			o.error_message = m;
		}
	}
	if (c)
		call_finish(e, c, &o);
	run_outcome_clear(&o);
	/* After the answer is out: fork the process for the session's next call. */
	if (commit)
		worker_prepare(w);
}

/* A runner's pid, from the trusted fork event or from its FRAME_STARTED (checked to be a
 * child of the parked process). */
/* The process running a call is the one the OOM killer should pick, not the parked state
 * it was forked from (raising one's own process's score needs no privilege). */
static void prefer_oom_victim(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1000", 4) != 4)
		log_msg(LOG_DEBUG, "oom_score_adj of %d: %s", (int)pid, strerror(errno));
	close(fd);
}

static void worker_runner_known(struct worker *w, pid_t child)
{
	if (w->runner > 0 || child <= 0)
		return;
	w->runner = child;
	w->runner_pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	prefer_oom_victim(child);
	if (w->kill != KILL_NONE)
		send_signal(w->runner_pidfd, w->runner, SIGKILL);
}

/* Is pid a child of parent? (for a runner pid a worker reports about itself) */
static int is_child_of(pid_t pid, pid_t parent)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nPPid:");
	return p && atoi(p + 6) == (int)parent;
}

/* A complete frame from a worker. */
static void worker_frame(struct worker *w, char type, const char *p, size_t len)
{
	struct engine *e = w->engine;

	switch (type) {
	case FRAME_READY:
		if (w->ready || (w->state != W_SPAWNING && w->state != W_BOOTING))
			break;
		w->ready = 1;
		log_msg(LOG_DEBUG, "worker %d ready %lld ms after the spawn request", (int)w->pid,
		        (long long)(now_ms() - w->spawned_ms));
		if (!e->layers) {
			e->layers = strndup(p, len);
			log_msg(LOG_INFO, "sandbox layers: %.*s", (int)len, p);
		}
		if (w->pid > 0 && w->state == W_BOOTING)
			worker_activate(w);
		return;
	case FRAME_LISTENER:
		/* The fd rides on this frame; worker_read took it. Nothing else to do. */
		if (len == 0 && !w->ready)
			return;
		break;
	case FRAME_FORKING:
		if ((w->state == W_RUNNING || w->state == W_PARKED) && w->forked && w->code_sent &&
		    len == 0) {
			w->code_sent = 0;
			w->expect_fork = 1;
			return;
		}
		break;
	case FRAME_STARTED:
		if ((w->state == W_RUNNING || w->state == W_PARKED) && w->forked && len == 4) {
			pid_t child = (pid_t)get_u32((const unsigned char *)p);
			if (w->runner == 0 && is_child_of(child, w->pid))
				worker_runner_known(w, child);
			return;
		}
		break;
	case FRAME_WAITED:
		if ((w->state == W_RUNNING || w->state == W_WAITING || w->state == W_PARKED) &&
		    w->forked && len == 4) {
			worker_waited(w, (int)get_u32((const unsigned char *)p));
			return;
		}
		break;
	case FRAME_RESULT:
		if (w->state == W_RUNNING && w->call) {
			worker_result(w, p, len);
			return;
		}
		break;
	default:
		break;
	}
	log_msg(LOG_WARN, "worker %d sent an unexpected frame; killing it", (int)w->pid);
	if (w->call)
		runner_kill(w, KILL_BAD_FRAME);
	else
		worker_kill(w, KILL_BAD_FRAME);
}

/* Read with recvmsg: the fork gate's listener arrives as an attached fd, once, before the
 * worker is ready; any other fd is closed and ends the worker. */
static ssize_t chan_recv(struct worker *w, void *buf, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {0};
	struct cmsghdr *c;
	ssize_t n;
	int bad = 0;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	n = recvmsg(w->chan.fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (!w->ready && w->listener.fd < 0) {
				w->listener.fd = fd;
				if (loop_add(&w->listener, EPOLLIN) < 0) {
					close(fd);
					w->listener.fd = -1;
				}
			} else {
				close(fd);
				bad = 1;
			}
		}
	}
	if (mh.msg_flags & MSG_CTRUNC)
		bad = 1;
	if (bad) {
		log_msg(LOG_WARN, "worker %d passed an unexpected fd; killing it", (int)w->pid);
		worker_kill(w, KILL_BAD_FRAME);
	}
	return n;
}

static void worker_read(struct worker *w)
{
	while (w->chan.fd >= 0) {
		ssize_t n;
		if (w->rx_cap - w->rx_len < 65536) {
			size_t cap = w->rx_cap ? w->rx_cap * 2 : 65536;
			unsigned char *p;
			if (cap > FRAME_MAX + FRAME_HEADER + 65536)
				cap = FRAME_MAX + FRAME_HEADER + 65536;
			if (cap <= w->rx_len) {
				worker_kill(w, KILL_BAD_FRAME);
				return;
			}
			p = realloc(w->rx, cap);
			if (!p) {
				worker_kill(w, KILL_BAD_FRAME);
				return;
			}
			w->rx = p;
			w->rx_cap = cap;
		}
		n = chan_recv(w, w->rx + w->rx_len, w->rx_cap - w->rx_len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				close_watch(&w->chan);
			return;
		}
		if (n == 0) {
			/* Every process of the worker closed its end: the exits tell the story. */
			close_watch(&w->chan);
			return;
		}
		w->rx_len += (size_t)n;
		/* Take every complete frame. */
		while (w->rx_len >= FRAME_HEADER) {
			uint32_t flen = frame_header_get(w->rx);
			if (flen == 0 || flen > FRAME_MAX) {
				worker_kill(w, KILL_BAD_FRAME);
				w->rx_len = 0;
				return;
			}
			if (w->rx_len < FRAME_HEADER + (size_t)flen)
				break;
			worker_frame(w, (char)w->rx[FRAME_HEADER],
			             (const char *)w->rx + FRAME_HEADER + 1, flen - 1);
			memmove(w->rx, w->rx + FRAME_HEADER + flen,
			        w->rx_len - FRAME_HEADER - flen);
			w->rx_len -= FRAME_HEADER + flen;
			if (w->state == W_DONE)
				return;
		}
	}
}

static void worker_event(struct watch *wt, uint32_t events)
{
	struct worker *w = wt->data;
	struct engine *e = w->engine;

	if (events & EPOLLOUT)
		worker_send_pending(w);
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		worker_read(w);
	schedule(e);
}

/* The fork gate: continue the one fork we asked a parked process for, refuse any other. */
static void listener_event(struct watch *wt, uint32_t events)
{
	struct worker *w = wt->data;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	int allow;

	if (events & (EPOLLHUP | EPOLLERR) && !(events & EPOLLIN)) {
		close_watch(wt);
		return;
	}
	if (seccomp_notify_alloc(&req, &resp) < 0)
		return;
	/* FRAME_FORKING was written before the clone that is waiting here: read it first. */
	if (w->chan.fd >= 0)
		worker_read(w);
	if (seccomp_notify_receive(wt->fd, req) < 0) {
		/* The requester died meanwhile (libseccomp reports every failure alike). Once
		 * every process of the chain is gone the listener hangs up: then it closes. */
		if (events & EPOLLHUP)
			close_watch(wt);
		seccomp_notify_free(req, resp);
		return;
	}
	allow = w->expect_fork && (pid_t)req->pid == w->pid &&
	        (w->state == W_RUNNING || w->state == W_PARKED);
	resp->id = req->id;
	resp->val = 0;
	resp->error = allow ? 0 : -EPERM;
	resp->flags = allow ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	if (allow)
		w->expect_fork = 0;
	else if (w->refusals++ == 0)
		log_msg(LOG_WARN,
		        "refused a fork from pid %u (sessions create processes only on "
		        "the supervisor's word)",
		        req->pid);
	if (seccomp_notify_respond(wt->fd, resp) < 0 && allow)
		log_msg(LOG_DEBUG, "fork approval not delivered: %s", strerror(errno));
	seccomp_notify_free(req, resp);
}

/* A stop of a traced process: record the syscall of a SIGSYS death, follow a session's
 * fork, and let it go on. */
static void traced_stop(struct engine *e, pid_t pid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	struct worker *w = worker_by_pid(e, pid);

	if (event == PTRACE_EVENT_EXIT && w) {
		unsigned long msg = 0;
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 && WIFSIGNALED((int)msg) &&
		    WTERMSIG((int)msg) == SIGSYS) {
			struct user_regs_struct regs;
			struct {
				uint8_t op;
				uint8_t pad[3];
				uint32_t arch;
				uint64_t rest[16];
			} info;
			if (ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0) {
				w->sys_nr = (long)regs.orig_rax;
				w->sys_arg0 = regs.rdi;
				w->sys_arg2 = regs.rdx;
				w->sys_arch = AUDIT_ARCH_X86_64;
				w->sys_pid = pid;
				memset(&info, 0, sizeof(info));
				if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info) > 0 &&
				    info.arch)
					w->sys_arch = info.arch;
				if (w->sys_arch == AUDIT_ARCH_I386)
					w->sys_arg0 = regs.rbx;
				w->have_sys = 1;
			}
		}
	} else if (event == PTRACE_EVENT_FORK && w && w->pid == pid && w->forked) {
		unsigned long child = 0;
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &child) == 0)
			worker_runner_known(w, (pid_t)child);
	}
	/* Events and group stops resume plainly; a signal for the process is delivered. */
	ptrace(PTRACE_CONT, pid, 0, event ? 0 : (void *)(long)sig);
}

/* A process of a worker is gone. */
static void worker_exited(struct worker *w, pid_t pid, int status)
{
	struct engine *e = w->engine;

	/* Drain what it wrote first: a result may commit or roll back, and so change which
	 * process pid is. */
	if (w->chan.fd >= 0 && w->state != W_DONE)
		worker_read(w);
	if (w->forked && pid == w->runner) {
		/* A session call's runner died without a result. Its parked process reaps it and
		 * reports; the call ends now (we know the status: we trace it). */
		if (w->call && w->state == W_RUNNING) {
			struct engine_call *c = w->call;
			w->call = NULL;
			w->state = W_WAITING;
			if (!w->waited_deadline)
				w->waited_deadline = now_ms() + WAITED_GRACE_MS;
			report_runner_end(w, c, status);
		}
		return;
	}
	if (pid != w->pid)
		return;
	/* The holder is gone: report its call, forget the worker. */
	if (w->call && !w->forked) {
		struct engine_call *c = w->call;
		w->call = NULL;
		report_runner_end(w, c, status);
	} else if (w->call) {
		/* The parked process died under a running call: the session is lost with it. */
		struct engine_call *c = w->call;
		w->call = NULL;
		send_signal(w->runner_pidfd, w->runner, SIGKILL);
		call_fail(e, c, RUN_CRASHED, "SandboxError",
		          "The session's process ended unexpectedly; its state is lost.");
	} else if (w->session && w->session->parked == w && w->kill == KILL_NONE) {
		log_msg(LOG_WARN,
		        "session %.8s…: its parked process ended; the session starts "
		        "empty again",
		        w->session->handle);
	}
	worker_free(w);
}

void engine_sigchld(struct engine *e)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
		struct worker *w;

		if (pid <= 0)
			break;
		if (pid == e->zpid) {
			char why[96];
			if (WIFEXITED(status))
				snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(status));
			else
				snprintf(why, sizeof(why), "signal %d", WTERMSIG(status));
			e->zpid = 0;
			if (e->zctl.fd >= 0)
				zygote_lost(e, why);
			continue;
		}
		if (WIFSTOPPED(status)) {
			traced_stop(e, pid, status);
			continue;
		}
		w = worker_by_pid(e, pid);
		if (w)
			worker_exited(w, pid, status);
	}
	schedule(e);
}

/* ---- scheduling ---- */

static int worker_busy(const struct worker *w)
{
	return w->call != NULL && w->state != W_DONE;
}

static int worker_free_for_call(const struct worker *w)
{
	return !w->call && !w->session && w->kill == KILL_NONE &&
	       (w->state == W_IDLE || w->state == W_SPAWNING || w->state == W_BOOTING);
}

static void schedule(struct engine *e)
{
	unsigned int busy = 0, free_ = 0;

	if (e->zctl.fd < 0 && e->zpid == 0 && now_ms() >= e->zretry_at &&
	    (e->zfailures == 0 || e->queue || e->cfg->prefork)) {
		if (zygote_start(e) < 0)
			e->zretry_at = now_ms() + 1000;
	}
	for (struct worker *w = e->workers; w; w = w->next) {
		if (worker_busy(w))
			busy++;
		else if (worker_free_for_call(w))
			free_++;
	}
	for (struct engine_call **pp = &e->queue; *pp && busy < e->cfg->max_workers;) {
		struct engine_call *c = *pp;
		struct session *s = c->session;
		struct worker *w = NULL, *booting = NULL;

		if (s && s->parked && c->reset && s->parked->state == W_PARKED) {
			s->before_reset = s->parked;
			s->parked = NULL;
		}
		if (s && s->parked) {
			if (s->parked->state != W_PARKED) {
				pp = &c->next; /* still rolling back the previous call */
				continue;
			}
			w = s->parked;
		} else {
			for (struct worker *x = e->workers; x; x = x->next) {
				if (!worker_free_for_call(x))
					continue;
				if (x->state == W_IDLE) {
					w = x;
					break;
				}
				if (!booting)
					booting = x;
			}
			if (!w && booting) {
				w = booting;
			} else if (!w) {
				if (e->zctl.fd < 0) {
					if (e->zfailures > 0) {
						/* The sandbox cannot start: say so now. */
						*pp = c->next;
						c->next = NULL;
						call_fail(e, c, RUN_CRASHED, "SandboxError",
						          "The Python sandbox could not start: %s. "
						          "See the server log.",
						          e->zerror);
						continue;
					}
					break;
				}
				w = worker_spawn(e);
				if (!w)
					break;
			} else {
				free_--;
			}
			w->session = s;
		}
		*pp = c->next;
		c->next = NULL;
		busy++;
		if (w->state == W_IDLE || w->state == W_PARKED) {
			worker_start_call(w, c);
		} else {
			w->call = c;
			c->worker = w;
		}
	}
	e->queue_tail = NULL;
	for (struct engine_call *c = e->queue; c; c = c->next)
		e->queue_tail = c;
	while (e->zctl.fd >= 0 && free_ < e->cfg->prefork &&
	       busy + free_ < e->cfg->max_workers + e->cfg->prefork) {
		if (!worker_spawn(e))
			break;
		free_++;
	}
}

/* ---- public ---- */

int engine_new(const struct config *cfg, const char *zygote_exe, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	int rc;

	if (!e)
		return -ENOMEM;
	e->cfg = cfg;
	e->zygote_exe = zygote_exe;
	e->zctl.fd = -1;
	e->can_trace = -1;
	/* A session's processes outlive their parents (each call's process replaces the one
	 * before it): they come to us, not to init. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_msg(LOG_WARN, "cannot become a subreaper: %s", strerror(errno));
	rc = zygote_start(e);
	if (rc < 0) {
		free(e);
		return rc;
	}
	schedule(e);
	*out = e;
	return 0;
}

void engine_submit(struct engine *e, struct engine_call *c)
{
	struct session *s = c->session;

	c->next = NULL;
	c->worker = NULL;
	c->started_ms = now_ms();
	if (s) {
		s->last_used = c->started_ms;
		s->used_seq = ++e->use_seq;
		if (s->active) {
			/* One call at a time per session, in arrival order. */
			if (s->pending_tail)
				s->pending_tail->next = c;
			else
				s->pending = c;
			s->pending_tail = c;
			return;
		}
		s->active = c;
	}
	if (e->queue_tail)
		e->queue_tail->next = c;
	else
		e->queue = c;
	e->queue_tail = c;
	schedule(e);
}

static int unlink_call(struct engine_call **head, struct engine_call **tail, struct engine_call *c)
{
	for (struct engine_call **pp = head; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			*tail = NULL;
			for (struct engine_call *x = *head; x; x = x->next)
				*tail = x;
			return 1;
		}
	}
	return 0;
}

void engine_cancel(struct engine *e, struct engine_call *c)
{
	struct session *s = c->session;

	if (c->worker) {
		struct worker *w = c->worker;
		if (w->state == W_RUNNING) {
			runner_kill(w, KILL_CANCEL);
			return; /* reported when the runner is gone */
		}
		/* Not started yet: the worker stays for the next call. */
		w->call = NULL;
		c->worker = NULL;
		call_fail(e, c, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
		return;
	}
	if (unlink_call(&e->queue, &e->queue_tail, c) ||
	    (s && unlink_call(&s->pending, &s->pending_tail, c))) {
		call_fail(e, c, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
		schedule(e);
	}
}

int engine_timeout(struct engine *e)
{
	int64_t now = now_ms(), next = -1;

	for (struct worker *w = e->workers; w; w = w->next) {
		int64_t d[3] = {w->soft_deadline, w->hard_deadline, w->waited_deadline};
		for (int i = 0; i < 3; i++)
			if (d[i] && (next < 0 || d[i] < next))
				next = d[i];
	}
	if (e->zctl.fd < 0 && e->zpid == 0 && (next < 0 || e->zretry_at < next))
		next = e->zretry_at;
	for (struct session *s = e->sessions; s; s = s->next) {
		int64_t expiry = s->last_used + (int64_t)(e->cfg->session_idle_s * 1000) + 1;
		if (!s->active && (next < 0 || expiry < next))
			next = expiry; /* an idle session expires */
	}
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

void engine_tick(struct engine *e)
{
	int64_t now = now_ms();

	for (struct worker *w = e->workers, *next; w; w = next) {
		next = w->next;
		if (w->soft_deadline && now >= w->soft_deadline) {
			/* Ask the code to stop: TimeoutError is raised in it and what it printed
			 * comes back. */
			w->soft_deadline = 0;
			if (w->runner > 0)
				send_signal(w->runner_pidfd, w->runner, SIGUSR1);
		} else if (w->hard_deadline && now >= w->hard_deadline) {
			if (w->forked && w->runner <= 0)
				worker_kill(w, KILL_TIMEOUT); /* the fork never came: drop it all */
			else
				runner_kill(w, KILL_TIMEOUT);
		} else if (w->waited_deadline && now >= w->waited_deadline) {
			log_msg(LOG_WARN,
			        "session process %d did not report its call's end; "
			        "dropping the session",
			        (int)w->pid);
			w->waited_deadline = 0;
			if (w->call) {
				struct engine_call *c = w->call;
				w->call = NULL;
				report_runner_end(w, c, 0);
			}
			if (w->session && w->session->parked == w)
				w->session->parked = NULL;
			w->session = NULL;
			worker_kill(w, KILL_FINISHED);
		}
	}
	if (e->sessions)
		sessions_evict(e, 0);
	schedule(e);
}

void engine_free(struct engine *e)
{
	int64_t until;

	if (!e)
		return;
	for (struct worker *w = e->workers; w; w = w->next) {
		worker_kill(w, KILL_SHUTDOWN);
		if (w->call) {
			w->call->worker = NULL;
			w->call = NULL;
		}
	}
	zygote_close(e);
	if (e->zpid > 0)
		kill(e->zpid, SIGKILL);
	/* Reap everything: workers are traced by us or our children (as their subreaper), the
	 * zygote is our child. */
	until = now_ms() + 1000;
	while (now_ms() < until) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0)
			break;
		if (pid == 0) {
			usleep(2000);
			continue;
		}
		if (pid == e->zpid)
			e->zpid = 0;
		else if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, pid, 0, 0);
	}
	while (e->workers)
		worker_free(e->workers);
	while (e->sessions) {
		struct session *s = e->sessions;
		e->sessions = s->next;
		free(s);
	}
	free(e->layers);
	free(e);
}

const char *engine_layers(struct engine *e)
{
	return e->layers;
}

int engine_can_name_syscalls(struct engine *e)
{
	return e->can_trace;
}
