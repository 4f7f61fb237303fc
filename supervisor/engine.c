/* engine.c - runs calls in workers: starts (and restarts) the zygote, keeps pre-forked
 * workers ready, schedules up to max_workers calls, enforces the wall clock (a soft
 * SIGUSR1 so the code's output comes back, then SIGKILL), cancels, and names the syscall
 * that killed a worker (it attaches with ptrace and reads the registers at its exit stop).
 * Nothing from a worker is trusted: frames are bounded and validated by outcome_decode.
 * Errors are reported through the call's outcome; the engine itself keeps serving. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
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

#define SOFT_KILL_GRACE_MS 500 /* between the deadline signal and SIGKILL */

enum wstate {
	W_SPAWNING, /* asked the zygote; no pid yet */
	W_BOOTING,  /* pid known or ready seen; waiting for the other */
	W_IDLE,     /* sandboxed, waiting for code */
	W_RUNNING,  /* code sent */
	W_DONE,     /* outcome delivered (or none due); waiting for the exit */
};

enum kill_reason { KILL_NONE, KILL_TIMEOUT, KILL_CANCEL, KILL_SHUTDOWN, KILL_BAD_FRAME,
		   KILL_FINISHED, KILL_ZYGOTE };

struct worker {
	struct worker *next;
	struct engine *engine;
	enum wstate state;
	uint32_t req_id;
	pid_t pid;
	int pidfd;
	struct watch chan;        /* our end of the worker's channel */
	unsigned char *rx;        /* bytes received, up to one frame */
	size_t rx_len, rx_cap;
	char *tx;                 /* the code frame still to send */
	size_t tx_len, tx_off;
	int ready;                /* FRAME_READY seen */
	int traced;
	int generation;           /* the zygote that forked it */
	struct engine_call *call;
	int64_t soft_deadline, hard_deadline;
	enum kill_reason kill;
	long sys_nr;              /* from the exit stop, when killed by SIGSYS */
	unsigned int sys_arch;
	unsigned long long sys_arg0, sys_arg2;
	int have_sys;
	int64_t spawned_ms;
};

struct engine {
	const struct config *cfg;
	const char *zygote_exe;
	/* the zygote */
	pid_t zpid;
	struct watch zctl;
	int zready;
	int generation;
	int zfailures;            /* consecutive start-up failures */
	int64_t zretry_at;        /* when start-up failed: next attempt */
	char zerror[256];         /* why start-up failed */
	/* calls and workers */
	struct engine_call *queue, *queue_tail;
	struct worker *workers;
	uint32_t next_req;
	char *layers;             /* first ready worker's sandbox report */
	int can_trace;            /* -1 unknown */
	int warned_trace;
};

static void worker_kill(struct worker *w, enum kill_reason why);
static void schedule(struct engine *e);

/* ---- outcomes ---- */

static void call_finish(struct engine *e, struct engine_call *c, struct run_outcome *o)
{
	o->duration_ms = now_ms() - c->started_ms;
	c->worker = NULL;
	c->done(c, o);
}

/* Finish a call with a status and a message of ours (no worker output). */
static void call_fail(struct engine *e, struct engine_call *c, enum run_status st,
		      const char *type, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void call_fail(struct engine *e, struct engine_call *c, enum run_status st,
		      const char *type, const char *fmt, ...)
{
	struct run_outcome o;
	va_list ap;
	char *msg = NULL;

	run_outcome_init(&o);
	o.status = st;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	o.error_type = strdup(type);
	o.error_message = msg;
	o.error_traceback = strdup("");
	call_finish(e, c, &o);
	run_outcome_clear(&o);
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

static struct worker *worker_by_pid(struct engine *e, pid_t pid)
{
	for (struct worker *w = e->workers; w; w = w->next)
		if (w->pid == pid)
			return w;
	return NULL;
}

static void worker_activate(struct worker *w);
static void worker_free(struct worker *w);
static void worker_exited(struct worker *w, int status);

/* The zygote is gone: calls whose worker it had not forked yet fail; forked workers die of
 * their parent-death signal and are reported when reaped. */
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
		if (w->generation != e->generation)
			continue;
		if (!w->traced) {
			/* Nobody will report its exit now: it dies of its parent-death signal. */
			struct engine_call *c = w->call;
			w->call = NULL;
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
		} else if (w->state != W_DONE) {
			worker_kill(w, KILL_ZYGOTE);
		}
	}
	if (!e->zready) {
		/* Start-up failed: calls waiting for a worker cannot run now. */
		while (e->queue) {
			struct engine_call *c = e->queue;
			e->queue = c->next;
			call_fail(e, c, RUN_CRASHED, "SandboxError",
				  "The Python sandbox could not start: %s. See the server log.",
				  e->zerror);
		}
		e->queue_tail = NULL;
	}
	e->zready = 0;
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
		for (int i = 0; i < 50 && e->zpid > 0 && (r = waitpid(e->zpid, &status, WNOHANG)) == 0;
		     i++)
			usleep(2000);
		if (r == e->zpid && r > 0) {
			e->zpid = 0;
			if (WIFEXITED(status))
				snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(status));
			else if (WIFSIGNALED(status))
				snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
		}
		zygote_lost(e, why);
		return;
	}
	if (n != ZYGOTE_MSG_LEN) {
		log_msg(LOG_ERROR, "malformed message from the zygote; restarting it");
		kill(e->zpid, SIGKILL);
		zygote_lost(e, "it sent a malformed message");
		return;
	}
	id = (uint32_t)msg[1] | (uint32_t)msg[2] << 8 | (uint32_t)msg[3] << 16 |
	     (uint32_t)msg[4] << 24;
	val = (uint32_t)msg[5] | (uint32_t)msg[6] << 8 | (uint32_t)msg[7] << 16 |
	      (uint32_t)msg[8] << 24;
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
		w->pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
		w->state = W_BOOTING;
		if (w->ready)
			worker_activate(w);
		break;
	case ZYGOTE_MSG_EXIT:
		/* Traced workers were reported to us as their tracer already. */
		w = worker_by_pid(e, (pid_t)id);
		if (w && !w->traced)
			worker_exited(w, (int)val);
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

static void worker_free(struct worker *w)
{
	struct engine *e = w->engine;
	struct worker **pp;

	for (pp = &e->workers; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	if (w->chan.fd >= 0) {
		loop_del(&w->chan);
		close(w->chan.fd);
	}
	if (w->pidfd >= 0)
		close(w->pidfd);
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
	w->pidfd = -1;
	w->generation = e->generation;
	w->spawned_ms = now_ms();
	w->chan.fd = sv[0];
	w->chan.fn = worker_event;
	w->chan.data = w;
	msg[1] = (unsigned char)w->req_id;
	msg[2] = (unsigned char)(w->req_id >> 8);
	msg[3] = (unsigned char)(w->req_id >> 16);
	msg[4] = (unsigned char)(w->req_id >> 24);
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0 || loop_add(&w->chan, EPOLLIN) < 0 ||
	    send_with_fd(e->zctl.fd, msg, sizeof(msg), sv[1]) < 0) {
		log_msg(LOG_ERROR, "could not ask the zygote for a worker: %s", strerror(errno));
		close(sv[1]);
		w->next = NULL;
		w->engine = e;
		/* not linked yet */
		if (w->chan.fd >= 0) {
			loop_del(&w->chan);
			close(w->chan.fd);
		}
		free(w);
		return NULL;
	}
	close(sv[1]);
	w->next = e->workers;
	e->workers = w;
	return w;
}

static void worker_kill(struct worker *w, enum kill_reason why)
{
	if (w->kill == KILL_NONE || why == KILL_SHUTDOWN)
		w->kill = why;
	if (w->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
	else if (w->pid > 0)
		kill(w->pid, SIGKILL);
	w->soft_deadline = w->hard_deadline = 0;
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
	loop_mod(&w->chan, EPOLLIN);
}

/* Give a call to a ready worker: queue its code frame and start the clock. */
static void worker_start_call(struct worker *w, struct engine_call *c)
{
	struct engine *e = w->engine;
	double t = c->timeout_s > 0 && c->timeout_s < e->cfg->timeout_s ? c->timeout_s
									   : e->cfg->timeout_s;
	size_t len = c->code_len + 1;

	w->call = c;
	c->worker = w;
	w->state = W_RUNNING;
	w->tx = malloc(FRAME_HEADER + len);
	if (!w->tx) {
		worker_kill(w, KILL_SHUTDOWN);
		w->call = NULL;
		call_fail(e, c, RUN_CRASHED, "SandboxError", "out of memory in the server");
		return;
	}
	frame_header_put((unsigned char *)w->tx, (uint32_t)len);
	w->tx[FRAME_HEADER] = FRAME_CODE;
	memcpy(w->tx + FRAME_HEADER + 1, c->code, c->code_len);
	w->tx_len = FRAME_HEADER + len;
	w->tx_off = 0;
	w->soft_deadline = now_ms() + (int64_t)(t * 1000);
	w->hard_deadline = w->soft_deadline + SOFT_KILL_GRACE_MS;
	worker_send_pending(w);
}

/* pid known and sandbox entered: attach (to name a killing syscall), then work. */
static void worker_activate(struct worker *w)
{
	struct engine *e = w->engine;

	if (ptrace(PTRACE_SEIZE, w->pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0) {
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

/* Classify a worker that ended without delivering a result. */
static void worker_report_exit(struct worker *w, int status)
{
	struct engine *e = w->engine;
	struct engine_call *c = w->call;
	double t;

	w->call = NULL;
	if (!c)
		return;
	t = c->timeout_s > 0 && c->timeout_s < e->cfg->timeout_s ? c->timeout_s : e->cfg->timeout_s;
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
			  "The worker sent a result larger than %u bytes or malformed.",
			  FRAME_MAX);
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
		    (w->sys_arg2 == SIGABRT || w->sys_arg0 == (unsigned long long)w->pid)) {
			call_fail(e, c, RUN_CRASHED, "InterpreterCrash",
				  "The interpreter aborted (often memory exhaustion inside C code).");
			return;
		}
		log_msg(LOG_WARN, "worker %d killed by the sandbox: syscall %s", (int)w->pid, name);
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
		call_fail(e, c, sig == SIGKILL ? RUN_MEMORY_LIMIT : RUN_CRASHED,
			  sig == SIGKILL ? "MemoryError" : "InterpreterCrash",
			  sig == SIGKILL ? "The worker was killed (SIGKILL), most likely by the "
					   "system's out-of-memory killer."
					 : "The interpreter crashed (signal %d, %s).",
			  sig, strsignal(sig));
		return;
	}
	if (WIFEXITED(status)) {
		const char *why = worker_exit_reason(WEXITSTATUS(status));
		if (WEXITSTATUS(status) == WORKER_EXIT_SECCOMP ||
		    WEXITSTATUS(status) == WORKER_EXIT_NNP)
			call_fail(e, c, RUN_CRASHED, "SandboxError",
				  "The sandbox could not be set up (%s); safepy refuses to run "
				  "code without seccomp and no_new_privs. Run `safepy doctor`.",
				  why ? why : "unknown");
		else
			call_fail(e, c, RUN_CRASHED, "SandboxError",
				  "The worker ended without a result (%s).",
				  why ? why : "exit status without a frame");
	}
}

/* A complete frame from a worker. */
static void worker_frame(struct worker *w, char type, const char *p, size_t len)
{
	struct engine *e = w->engine;
	struct run_outcome o;

	if (type == FRAME_READY && !w->ready && w->state != W_RUNNING) {
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
	}
	if (type == FRAME_RESULT && w->state == W_RUNNING && w->call) {
		struct engine_call *c = w->call;
		run_outcome_init(&o);
		if (outcome_decode(p, len, &o) < 0) {
			run_outcome_clear(&o);
			worker_kill(w, KILL_BAD_FRAME);
			return;
		}
		w->call = NULL;
		w->state = W_DONE;
		/* Done: the worker exits by itself; make sure of it. */
		worker_kill(w, KILL_FINISHED);
		call_finish(e, c, &o);
		run_outcome_clear(&o);
		return;
	}
	worker_kill(w, KILL_BAD_FRAME);
}

static void worker_read(struct worker *w)
{
	for (;;) {
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
		n = recv(w->chan.fd, w->rx + w->rx_len, w->rx_cap - w->rx_len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				loop_del(&w->chan);
				close(w->chan.fd);
				w->chan.fd = -1;
			}
			return;
		}
		if (n == 0) {
			/* The worker closed its end: it is exiting; the reap reports it. */
			loop_del(&w->chan);
			close(w->chan.fd);
			w->chan.fd = -1;
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
			memmove(w->rx, w->rx + FRAME_HEADER + flen, w->rx_len - FRAME_HEADER - flen);
			w->rx_len -= FRAME_HEADER + flen;
			if (w->state == W_DONE || w->kill != KILL_NONE)
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

/* A stop of a traced worker: record the syscall of a SIGSYS death, then let it go on. */
static void worker_stopped(struct worker *w, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;

	if (event == PTRACE_EVENT_EXIT) {
		unsigned long msg = 0;
		if (ptrace(PTRACE_GETEVENTMSG, w->pid, 0, &msg) == 0 && WIFSIGNALED((int)msg) &&
		    WTERMSIG((int)msg) == SIGSYS) {
			struct user_regs_struct regs;
			struct {
				uint8_t op;
				uint8_t pad[3];
				uint32_t arch;
				uint64_t rest[16];
			} info;
			if (ptrace(PTRACE_GETREGS, w->pid, 0, &regs) == 0) {
				w->sys_nr = (long)regs.orig_rax;
				w->sys_arg0 = regs.rdi;
				w->sys_arg2 = regs.rdx;
				w->sys_arch = AUDIT_ARCH_X86_64;
				memset(&info, 0, sizeof(info));
				if (ptrace(PTRACE_GET_SYSCALL_INFO, w->pid, sizeof(info), &info) > 0 &&
				    info.arch)
					w->sys_arch = info.arch;
				if (w->sys_arch == AUDIT_ARCH_I386) {
					w->sys_arg0 = regs.rbx;
					w->sys_arg2 = regs.rdx;
				}
				w->have_sys = 1;
			}
		}
		ptrace(PTRACE_CONT, w->pid, 0, 0);
		return;
	}
	if (event == PTRACE_EVENT_STOP) {
		ptrace(PTRACE_CONT, w->pid, 0, 0);
		return;
	}
	/* A signal for the worker: deliver it. */
	ptrace(PTRACE_CONT, w->pid, 0, (void *)(long)sig);
}

/* A worker is gone: drain what it wrote, report its call, forget it. */
static void worker_exited(struct worker *w, int status)
{
	if (w->chan.fd >= 0 && w->state != W_DONE && w->kill == KILL_NONE)
		worker_read(w);
	if (w->call)
		worker_report_exit(w, status);
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
		w = worker_by_pid(e, pid);
		if (!w)
			continue;
		if (WIFSTOPPED(status)) {
			worker_stopped(w, status);
			continue;
		}
		worker_exited(w, status);
	}
	schedule(e);
}

/* ---- scheduling ---- */

static void schedule(struct engine *e)
{
	unsigned int busy = 0, free_ = 0;

	if (e->zctl.fd < 0 && e->zpid == 0 && now_ms() >= e->zretry_at &&
	    (e->zfailures == 0 || e->queue || e->cfg->prefork)) {
		if (zygote_start(e) < 0)
			e->zretry_at = now_ms() + 1000;
	}
	for (struct worker *w = e->workers; w; w = w->next) {
		if (w->state == W_DONE || w->kill != KILL_NONE)
			continue;
		if (w->call)
			busy++;
		else
			free_++;
	}
	while (e->queue && busy < e->cfg->max_workers) {
		struct engine_call *c = e->queue;
		struct worker *w = NULL, *booting = NULL;

		for (struct worker *x = e->workers; x; x = x->next) {
			if (x->call || x->kill != KILL_NONE)
				continue;
			if (x->state == W_IDLE) {
				w = x;
				break;
			}
			if ((x->state == W_SPAWNING || x->state == W_BOOTING) && !booting)
				booting = x;
		}
		if (!w && booting) {
			w = booting;
		} else if (!w) {
			if (e->zctl.fd < 0) {
				if (e->zfailures > 0) {
					/* The sandbox cannot start: say so now. */
					e->queue = c->next;
					if (!e->queue)
						e->queue_tail = NULL;
					call_fail(e, c, RUN_CRASHED, "SandboxError",
						  "The Python sandbox could not start: %s. See "
						  "the server log.",
						  e->zerror);
					continue;
				}
				break;
			}
			w = worker_spawn(e);
			if (!w)
				break;
			free_++;
		}
		e->queue = c->next;
		if (!e->queue)
			e->queue_tail = NULL;
		c->next = NULL;
		free_--;
		busy++;
		if (w->state == W_IDLE)
			worker_start_call(w, c);
		else {
			w->call = c;
			c->worker = w;
		}
	}
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
	c->next = NULL;
	c->worker = NULL;
	c->started_ms = now_ms();
	if (e->queue_tail)
		e->queue_tail->next = c;
	else
		e->queue = c;
	e->queue_tail = c;
	schedule(e);
}

void engine_cancel(struct engine *e, struct engine_call *c)
{
	struct engine_call **pp;

	if (c->worker) {
		struct worker *w = c->worker;
		if (w->state == W_RUNNING) {
			worker_kill(w, KILL_CANCEL);
			return; /* reported when reaped */
		}
		/* Not started yet: the worker stays for the next call. */
		w->call = NULL;
		c->worker = NULL;
		call_fail(e, c, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
		return;
	}
	for (pp = &e->queue; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			if (e->queue_tail == c) {
				e->queue_tail = NULL;
				for (struct engine_call *x = e->queue; x; x = x->next)
					e->queue_tail = x;
			}
			call_fail(e, c, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
			return;
		}
	}
}

int engine_timeout(struct engine *e)
{
	int64_t now = now_ms(), next = -1;

	for (struct worker *w = e->workers; w; w = w->next) {
		int64_t d = w->soft_deadline ? w->soft_deadline : w->hard_deadline;
		if (d && (next < 0 || d < next))
			next = d;
	}
	if (e->zctl.fd < 0 && e->zpid == 0 && (next < 0 || e->zretry_at < next))
		next = e->zretry_at;
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

void engine_tick(struct engine *e)
{
	int64_t now = now_ms();

	for (struct worker *w = e->workers; w; w = w->next) {
		if (w->soft_deadline && now >= w->soft_deadline) {
			/* Ask the code to stop: TimeoutError is raised in it and what it printed
			 * comes back. */
			w->soft_deadline = 0;
			if (w->pidfd >= 0)
				syscall(SYS_pidfd_send_signal, w->pidfd, SIGUSR1, NULL, 0);
		} else if (w->hard_deadline && now >= w->hard_deadline) {
			worker_kill(w, KILL_TIMEOUT);
		}
	}
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
			struct engine_call *c = w->call;
			w->call = NULL;
			c->worker = NULL;
		}
	}
	zygote_close(e);
	if (e->zpid > 0)
		kill(e->zpid, SIGKILL);
	/* Reap everything: workers are traced by us, the zygote is our child. */
	until = now_ms() + 1000;
	while ((e->workers || e->zpid > 0) && now_ms() < until) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0)
			break;
		if (pid == 0) {
			usleep(2000);
			continue;
		}
		if (pid == e->zpid) {
			e->zpid = 0;
			continue;
		}
		for (struct worker *w = e->workers; w; w = w->next) {
			if (w->pid != pid)
				continue;
			if (WIFSTOPPED(status))
				ptrace(PTRACE_CONT, pid, 0, 0);
			else
				worker_free(w);
			break;
		}
	}
	while (e->workers)
		worker_free(e->workers);
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
