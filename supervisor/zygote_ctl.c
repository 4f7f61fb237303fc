/* zygote_ctl.c - the supervisor's side of the zygote: start it (by the starter, starter.c;
 * its configuration as the control socket's first message), ask it for workers,
 * hear what it says, and restart it when it exits, with a backoff while start-up fails.
 * The zygote holds no secrets and never sees a request; what it says is still checked.
 * Functions return 0 or -errno. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_internal.h"

static void zygote_event(struct watch *w, uint32_t events);

int zygote_start(struct engine *e)
{
	struct ipc_config ic;
	int sv[2] = {-1, -1};
	size_t len = 0;
	char *conf;
	pid_t pid;
	int rc;

	config_to_ipc(e->cfg, &ic);
	ic.cache = e->cache;
	conf = ipc_config_encode(&ic, &len);
	if (!conf)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int err = -errno;
		free(conf);
		return err;
	}
	/* Queued before the zygote runs: its first read finds it. */
	if (send(sv[0], conf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		int err = -errno;
		free(conf);
		close(sv[0]);
		close(sv[1]);
		return err ? err : -EIO;
	}
	free(conf);
	rc = starter_spawn(&e->starter, sv[1], &pid);
	close(sv[1]);
	if (rc < 0) {
		close(sv[0]);
		/* Queued calls are answered with this (engine.c: place). Without the starter no
		 * zygote can start again: only a new server can. */
		e->zfailures++;
		if (rc == -ECHILD)
			snprintf(e->zerror, sizeof(e->zerror),
			         "the process that starts it is gone (killed from outside?); "
			         "restart safepy");
		else
			snprintf(e->zerror, sizeof(e->zerror), "starting it failed: %s",
			         strerror(-rc));
		log_msg(LOG_ERROR, "the Python zygote could not start: %s", e->zerror);
		return rc;
	}
	e->zpid = pid;
	e->zready = 0;
	e->zimport[0] = '\0';
	e->generation++;
	e->zctl = (struct watch){.fd = sv[0], .fn = zygote_event, .data = e};
	if (loop_add(&e->zctl, EPOLLIN) < 0) {
		close(sv[0]);
		e->zctl.fd = -1;
		kill(pid, SIGKILL);
		return -EIO;
	}
	log_msg(LOG_DEBUG, "zygote started (pid %d)", (int)pid);
	return 0;
}

void zygote_wedged(struct engine *e, int generation)
{
	if (generation != e->generation || e->zpid <= 0 || zygote_gone(e, generation))
		return;
	/* Stopped, hung, or swapped out for good: its exit restarts it (zygote_exited). */
	log_msg(LOG_WARN, "the Python zygote forked no worker within %d ms; restarting it",
	        ENGINE_BOOT_MS);
	(void)kill(e->zpid, SIGKILL);
}

int zygote_gone(struct engine *e, int generation)
{
	siginfo_t si;

	if (generation != e->generation || e->zpid <= 0)
		return 1;
	/* Exited, not reaped yet (its workers' exits may be seen first): it stays a zombie. */
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)e->zpid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == e->zpid;
}

int zygote_ready(const struct engine *e)
{
	return e->zctl.fd >= 0 && e->zready;
}

int zygote_request(struct engine *e, uint32_t req_id, uint32_t flags, int fd)
{
	unsigned char msg[IPC_ZYGOTE_MSG];

	ipc_zygote_msg_put(msg, IPC_ZYGOTE_SPAWN, req_id, flags);
	return e->zctl.fd < 0 ? -ENOTCONN : ipc_send_fd(e->zctl.fd, msg, sizeof(msg), fd);
}

static void zygote_close(struct engine *e)
{
	if (e->zctl.fd < 0)
		return;
	loop_del(&e->zctl);
	close(e->zctl.fd);
	e->zctl.fd = -1;
	e->zready = 0;
}

void zygote_stop(struct engine *e)
{
	zygote_close(e);
	if (e->zpid > 0)
		kill(e->zpid, SIGKILL);
}

static struct chain *chain_by_req(struct engine *e, uint32_t id)
{
	struct chain *c;

	TAILQ_FOREACH(c, &e->chains, link)
	if (c->state == CH_BOOTING && c->req_id == id && c->generation == e->generation)
		return c;
	return NULL;
}

/* The zygote's fresh workers that it had not forked yet will never come; the ones it
 * forked die of their parent-death signal, but for those of bound chains (chain.c). */
static void zygote_lost(struct engine *e)
{
	struct chain *c, *next;

	zygote_close(e);
	TAILQ_FOREACH_SAFE(c, &e->chains, link, next)
	if (c->generation == e->generation)
		chain_on_zygote_lost(c);
}

void zygote_exited(struct engine *e, int status)
{
	char why[96];
	/* A zygote killed by a signal (from outside: an OOM kill, an administrator) says nothing
	 * about whether it can start: only an exit status of its own counts as a failed start. */
	int started = e->zready || WIFSIGNALED(status);
	int64_t delay;

	if (WIFEXITED(status)) {
		const char *r = ipc_zygote_exit_reason(WEXITSTATUS(status));
		snprintf(why, sizeof(why), "exit status %d%s%s", WEXITSTATUS(status), r ? ": " : "",
		         r ? r : "");
	} else {
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
	}
	e->zpid = 0;
	zygote_lost(e);
	if (started) {
		e->zfailures = 0;
		delay = 0;
		log_msg(LOG_WARN, "the Python zygote exited (%s); restarting it", why);
	} else {
		e->zfailures++;
		snprintf(e->zerror, sizeof(e->zerror), "%s", e->zimport[0] ? e->zimport : why);
		delay = (int64_t)ENGINE_ZYGOTE_RETRY_MS << (e->zfailures < 5 ? e->zfailures : 5);
		if (delay > ENGINE_ZYGOTE_RETRY_MAX)
			delay = ENGINE_ZYGOTE_RETRY_MAX;
		/* The first start's failure is the front end's to report (engine_start_wait). */
		log_msg(e->zever ? LOG_ERROR : LOG_DEBUG, "the Python zygote failed to start: %s",
		        e->zerror);
	}
	if (!e->stopping)
		timer_arm(&e->zretry, now_ms() + delay);
	engine_kick(e);
}

/* The zygote could not import an allowed module: keep the sentence the front ends print. Its
 * exit, which follows, makes the start-up a failure. */
static void zygote_import_failed(struct engine *e, const unsigned char *msg, size_t n)
{
	char why[IPC_ZYGOTE_FAIL_TEXT + 1];
	uint32_t index;
	const char *name;

	if (e->zready || ipc_zygote_fail_get(msg, n, &index, why, sizeof(why)) < 0 ||
	    index >= e->cfg->n_imports) {
		log_msg(LOG_ERROR, "malformed message from the zygote; restarting it");
		zygote_stop(e);
		return;
	}
	name = e->cfg->imports[index];
	if (config_import_is_builtin(e->cfg, name))
		snprintf(e->zimport, sizeof(e->zimport),
		         "the standard module %s (of --imports %s) cannot be imported: %s", name,
		         e->cfg->imports_seed ? "seed" : "default", why);
	else
		snprintf(e->zimport, sizeof(e->zimport), "--allow-import %s: %s", name, why);
	log_msg(LOG_DEBUG, "zygote: %s", e->zimport);
}

int engine_start_state(const struct engine *e, char *why, size_t len)
{
	if (e->zready || e->zever)
		return 1;
	if (e->zfailures > 0 && e->zimport[0]) {
		snprintf(why, len, "%s", e->zimport);
		return -EINVAL;
	}
	if (e->zfailures > 0) {
		snprintf(why, len, "the Python zygote failed to start: %s", e->zerror);
		return -EIO;
	}
	return 0;
}

int engine_start_wait(struct engine *e, const int *stop, char *why, size_t len)
{
	while (!*stop) {
		int rc = engine_start_state(e, why, len);
		if (rc != 0)
			return rc;
		if (loop_run_once(-1) < 0)
			break;
	}
	return 0;
}

static void zygote_event(struct watch *w, uint32_t events)
{
	struct engine *e = w->data;
	static unsigned char msg[IPC_CONFIG_MAX + 1];
	ssize_t n = recv(w->fd, msg, sizeof(msg), MSG_DONTWAIT);
	uint32_t a, b;
	struct chain *c;
	char type;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* It is exiting (or broke its socket): engine_sigchld reaps it and says how it
		 * ended. */
		zygote_stop(e);
		return;
	}
	if (msg[0] == IPC_ZYGOTE_ROOTS && !e->zready) {
		int rc = broker_roots_set(&e->modules, (const char *)msg, (size_t)n);
		if (rc == 0)
			rc = broker_workspace_modules(&e->ws, &e->modules);
		if (rc < 0) {
			log_msg(LOG_ERROR, "the zygote's module roots %s (%s); restarting it",
			        rc == -ENOMEM ? "could not be kept" : "are malformed",
			        strerror(-rc));
			e->zoom = rc == -ENOMEM;
			zygote_stop(e);
		}
		return;
	}
	if (msg[0] == (unsigned char)IPC_ZYGOTE_FAIL) {
		zygote_import_failed(e, msg, (size_t)n);
		return;
	}
	if (ipc_zygote_msg_get(msg, (size_t)n, &type, &a, &b) < 0) {
		log_msg(LOG_ERROR, "malformed message from the zygote; restarting it");
		zygote_stop(e);
		return;
	}
	switch (type) {
	case IPC_ZYGOTE_READY:
		e->zready = 1;
		e->zcapture = (uint64_t)b << 32 | a;
		e->zever = 1;
		e->zfailures = 0;
		e->zoom = 0;
		log_msg(LOG_DEBUG, "zygote ready (its workers' output keeps at 0x%llx)",
		        (unsigned long long)e->zcapture);
		break;
	case IPC_ZYGOTE_PID:
		c = chain_by_req(e, a);
		if (c && b > 1 && b <= INT32_MAX)
			chain_on_pid(c, (pid_t)b);
		break;
	case IPC_ZYGOTE_ERR:
		c = chain_by_req(e, a);
		if (c)
			chain_on_spawn_error(c, (int)b);
		break;
	case IPC_ZYGOTE_EXIT: {
		/* A traced worker's exit reached us as its tracer already. */
		struct proc *p = NULL;
		c = engine_chain_of(e, (pid_t)a, &p);
		if (c && p && !c->traced)
			chain_on_exit(c, p, (int)b);
		break;
	}
	default:
		log_msg(LOG_ERROR, "unknown message from the zygote");
		break;
	}
	engine_kick(e);
}
