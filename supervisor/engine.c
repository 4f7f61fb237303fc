/* engine.c - runs calls on chains of worker processes: the API the front ends use, the queue
 * of calls waiting for a chain, the pool of fresh workers, scheduling up to max_workers, the
 * zygote's restarts, reaping, and freeing what is finished (only here, at the start of a loop
 * turn, so no callback ever runs on freed memory). Nothing a worker says is trusted: chain.c
 * judges it. Errors reach the caller as the call's outcome; the engine keeps serving. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine_internal.h"

double engine_call_timeout(const struct engine *e, const struct engine_call *c)
{
	return c->timeout_s > 0 && c->timeout_s < e->cfg->timeout_s ? c->timeout_s
	                                                            : e->cfg->timeout_s;
}

struct chain *engine_chain_of(struct engine *e, pid_t pid, struct proc **out)
{
	struct chain *c;

	if (pid <= 0)
		return NULL;
	TAILQ_FOREACH(c, &e->chains, link)
	for (int i = 0; i < CHAIN_PROCS; i++)
		if (c->procs[i].pid == pid) {
			if (out)
				*out = &c->procs[i];
			return c;
		}
	return NULL;
}

void engine_kick(struct engine *e)
{
	if (!e->kick.armed && !e->stopping)
		timer_arm(&e->kick, now_ms());
}

static void enqueue(struct engine *e, struct engine_call *c, int head)
{
	if (head)
		TAILQ_INSERT_HEAD(&e->queue, c, link);
	else
		TAILQ_INSERT_TAIL(&e->queue, c, link);
	c->queued = 1;
	engine_kick(e);
}

void engine_requeue(struct engine *e, struct engine_call *c)
{
	enqueue(e, c, 1);
}

void engine_reserve(struct engine *e)
{
	struct session *s;

	if (!e->oom_type.s)
		(void)text_set_str(&e->oom_type, "ResourceError");
	if (!e->oom_message.s)
		(void)text_set_str(
		    &e->oom_message,
		    "The server ran out of memory while serving this call, so not all "
		    "of its outcome could be reported. Retry later.");
	TAILQ_FOREACH(s, &e->sessions, link)
	if (!s->handle_copy)
		s->handle_copy = strdup(s->handle);
}

void engine_answer(struct engine *e, struct engine_call *c, struct run_outcome *o)
{
	struct session *s = c->session;
	struct engine_call *next;

	o->duration_ms = now_ms() - c->started_ms;
	c->times.answer = now_us();
	/* Where the call's time went, for bench/profile: each step in microseconds after the
	 * one before it (-1: the step did not happen). */
	{
		int64_t steps[] = {c->times.submit, c->times.dispatch, c->times.result,
		                   c->times.park, c->times.answer};
		long long d[4];
		for (int i = 0; i < 4; i++)
			d[i] = steps[i] && steps[i + 1] ? (long long)(steps[i + 1] - steps[i]) : -1;
		log_msg(LOG_DEBUG, "steps (us): queued %lld, ran %lld, parked %lld, answered %lld",
		        d[0], d[1], d[2], d[3]);
	}
	/* What an answer needs is made ahead, so that a server short of memory still says
	 * which session the call ran in and why it failed. */
	if (s && !o->session) {
		o->session = s->handle_copy ? s->handle_copy : strdup(s->handle);
		s->handle_copy = NULL;
	}
	/* A failed call whose error could not be written out in full (its type or message)
	 * says the server was short of memory, whatever ended it: a message without its type
	 * read as a crash of the code. */
	if (o->status != RUN_OK && (!o->error_message.s || !o->error_type.s)) {
		text_clear(&o->error_message);
		text_clear(&o->error_type);
		o->error_message = e->oom_message;
		text_init(&e->oom_message);
		o->error_type = e->oom_type;
		text_init(&e->oom_type);
	}
	c->chain = NULL;
	if (c->queued) {
		if (s && s->active != c)
			TAILQ_REMOVE(&s->pending, c, link);
		else
			TAILQ_REMOVE(&e->queue, c, link);
		c->queued = 0;
	}
	/* A call that ran and completed is the session's state now: its figures are the last. */
	if (s && c->times.result && (o->status == RUN_OK || o->status == RUN_ERROR) &&
	    !o->rolled_back)
		session_keep_images(s, o);
	if (s && s->active == c) {
		s->active = NULL;
		session_touch(s);
		next = TAILQ_FIRST(&s->pending);
		if (next) {
			TAILQ_REMOVE(&s->pending, next, link);
			s->active = next;
			enqueue(e, next, 0);
		}
	}
	/* Last: the caller may free c. */
	c->done(c, o);
	run_outcome_clear(o);
	engine_reserve(e);
	engine_kick(e);
}

void engine_fail(struct engine *e, struct engine_call *c, enum run_status st, const char *type,
                 const char *fmt, ...)
{
	struct run_outcome o;
	char *m = NULL;
	va_list ap;

	run_outcome_init(&o);
	o.status = st;
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) >= 0)
		text_take(&o.error_message, m, strlen(m));
	va_end(ap);
	text_set_str(&o.error_type, type);
	text_set_str(&o.error_traceback, "");
	engine_answer(e, c, &o);
}

/* ---- the supervisor's own resources ------------------------------------------------------- */

static int cgroups_active(const struct engine *e)
{
	return e->cfg->cgroup && e->cfg->cgroup->state == CGROUP_ACTIVE;
}

int engine_fds_per_chain(const struct engine *e)
{
	return 4 + cgroups_active(e);
}

static int fd_limit(void)
{
	struct rlimit rl;

	/* Read each time: a limit changed from outside (prlimit) counts at once. */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > INT_MAX)
		return INT_MAX;
	return (int)rl.rlim_cur;
}

/* Fds open in the supervisor (its /proc/self/fd, read on the fd kept for it), or -errno. */
static int fds_open(struct engine *e)
{
	char buf[4096] __attribute__((aligned(8)));
	ssize_t len;
	int n = 0;

	if (e->fd_dir < 0)
		return -EBADF;
	if (lseek(e->fd_dir, 0, SEEK_SET) < 0)
		return -errno;
	while ((len = getdents64(e->fd_dir, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < len;) {
			const struct dirent64 *d = (const struct dirent64 *)(void *)(buf + off);
			n += d->d_name[0] != '.';
			off += d->d_reclen;
		}
	return len < 0 ? -errno : n;
}

int engine_fd_room(struct engine *e)
{
	int limit = fd_limit(), open = fds_open(e), coming = 0;
	struct chain *c;

	if (limit == INT_MAX || open < 0)
		return INT_MAX;
	TAILQ_FOREACH(c, &e->chains, link)
	if (c->state == CH_BOOTING)
		coming += !c->got_listener + (cgroups_active(e) && !c->has_cg);
	return limit - open - coming - ENGINE_FD_RESERVE;
}

int engine_fds_exhausted(struct engine *e)
{
	int fd = fcntl(e->fd_dir >= 0 ? e->fd_dir : STDERR_FILENO, F_DUPFD_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EMFILE || errno == ENFILE;
}

static unsigned int sessions_holding(const struct engine *e)
{
	const struct session *s;
	unsigned int n = 0;

	TAILQ_FOREACH(s, &e->sessions, link)
	n += s->chain != NULL;
	return n;
}

void engine_fds_short(struct engine *e, int short_now)
{
	if (short_now == e->fds_short)
		return;
	e->fds_short = short_now;
	if (short_now)
		log_msg(LOG_ERROR,
		        "out of file descriptors (limit %d, %d open, %u sessions holding %d "
		        "each): calls that need a new worker wait while others run, and fail when "
		        "none does; raise the limit (ulimit -n, LimitNOFILE=) or lower "
		        "--max-sessions",
		        fd_limit(), fds_open(e), sessions_holding(e), engine_fds_per_chain(e) - 1);
	else
		log_msg(LOG_INFO, "file descriptors are available again");
}

char *engine_fds_message(struct engine *e)
{
	unsigned int held = sessions_holding(e);
	char *m = NULL, sessions[160] = "";

	if (held)
		snprintf(sessions, sizeof(sessions),
		         " Each open session holds %d (%u are open): end sessions you no longer "
		         "need or let them expire, or",
		         engine_fds_per_chain(e) - 1, held);
	if (asprintf(&m,
	             "The server has run out of file descriptors (limit %d), so no worker "
	             "could be started for this call.%s%s raise the server's limit (ulimit -n, "
	             "LimitNOFILE=). Then retry.",
	             fd_limit(), sessions, held ? "" : " Ask its administrator to") < 0)
		m = NULL;
	return m;
}

void engine_procs_short(struct engine *e, int short_now, int err)
{
	if (!short_now) {
		e->spawn_retry = 0;
		e->spawn_backoff = 0;
		if (e->procs_short)
			log_msg(LOG_INFO, "worker processes can be created again");
		e->procs_short = 0;
		return;
	}
	e->spawn_backoff = e->spawn_backoff ? e->spawn_backoff * 2 : ENGINE_SPAWN_RETRY_MS;
	if (e->spawn_backoff > ENGINE_ZYGOTE_RETRY_MAX)
		e->spawn_backoff = ENGINE_ZYGOTE_RETRY_MAX;
	e->spawn_retry = now_ms() + e->spawn_backoff;
	if (e->procs_short)
		return;
	e->procs_short = 1;
	log_msg(LOG_ERROR,
	        "cannot create worker processes (fork: %s%s): calls that need a new one fail "
	        "until processes can be created again",
	        strerror(err),
	        err == EAGAIN ? "; a limit on processes is reached: the user's RLIMIT_NPROC, or "
	                        "pids.max of the cgroup"
	                      : "");
}

/* ---- scheduling ------------------------------------------------------------------------ */

static unsigned int busy_chains(struct engine *e)
{
	struct chain *c;
	unsigned int n = 0;

	TAILQ_FOREACH(c, &e->chains, link)
	if (chain_is_busy(c))
		n++;
	return n;
}

/* A chain for a call that starts from a fresh interpreter: an idle one, else one still
 * booting, else a new one (chain_spawn's errors: -EAGAIN when the zygote is not ready). */
static int spare_chain(struct engine *e, struct chain **out)
{
	struct chain *c, *booting = NULL;

	TAILQ_FOREACH(c, &e->chains, link)
	{
		if (!chain_is_spare(c))
			continue;
		if (c->state == CH_IDLE) {
			*out = c;
			return 0;
		}
		if (!booting)
			booting = c;
	}
	if (booting) {
		*out = booting;
		return 0;
	}
	return chain_spawn(e, 1, out);
}

/* A call that cannot have a chain for want of the supervisor's own resources: it waits
 * while a running call may give some back, else it fails saying why. Returns 1 when the
 * call left the queue. */
static int starved(struct engine *e, struct engine_call *call, int err)
{
	char *m = NULL;

	if (err == -EMFILE || err == -ENFILE) {
		engine_fds_short(e, 1);
		if (busy_chains(e) > 0)
			return 0;
		m = engine_fds_message(e);
	}
	TAILQ_REMOVE(&e->queue, call, link);
	call->queued = 0;
	engine_fail(e, call, RUN_CRASHED, "ResourceError", "%s%s",
	            m ? m
	            : err == -EMFILE || err == -ENFILE
	                ? "The server has run out of file descriptors."
	                : "The server is out of memory: no worker "
	                  "could be started for this call. Retry "
	                  "later.",
	            call->session && call->session->chain ? " The session is unchanged." : "");
	free(m);
	return 1;
}

/* Give the call a chain, or say why it cannot have one. Returns 1 when the call left the
 * queue, 0 when it must wait. */
static int place(struct engine *e, struct engine_call *call)
{
	struct session *s = call->session;
	struct chain *c = NULL;

	if (s && s->lost && !call->reset) {
		TAILQ_REMOVE(&e->queue, call, link);
		call->queued = 0;
		engine_fail(e, call, RUN_ERROR, "SessionError",
		            "The session's state was lost (%s). Pass reset: true to start it "
		            "afresh, or session: \"new\" for a new session.",
		            s->lost_why);
		return 1;
	}
	if (s && s->chain && !call->reset) {
		c = s->chain;
		if (c->call)
			return 0; /* still answering its previous call */
	} else {
		int rc = spare_chain(e, &c);
		if (rc == -EMFILE || rc == -ENFILE || rc == -ENOMEM)
			return starved(e, call, rc);
		if (rc < 0) {
			if (e->zfailures > 0 && e->zoom)
				return starved(e, call, -ENOMEM); /* ours, not the sandbox's */
			if (e->zfailures > 0) {
				TAILQ_REMOVE(&e->queue, call, link);
				call->queued = 0;
				engine_fail(
				    e, call, RUN_CRASHED, "SandboxError",
				    "The Python sandbox could not start: %s. See the server log.",
				    e->zimport[0] ? e->zimport : e->zerror);
				return 1;
			}
			return 0;
		}
		if (s) {
			if (call->reset && s->chain) {
				if (s->old) {
					/* An earlier reset never committed: its chain goes. */
					struct chain *old = s->old;
					session_drop_chain(s, old);
					chain_kill(old, KILL_DONE);
				}
				s->old = s->chain;
			}
			/* A lost session stays lost until this call commits. */
			s->chain = c;
			c->session = s;
		}
	}
	TAILQ_REMOVE(&e->queue, call, link);
	call->queued = 0;
	chain_give(c, call);
	return 1;
}

static void schedule(struct timer *t)
{
	struct engine *e = t->data;
	struct chain *c, *next;
	struct engine_call *call, *cnext;
	unsigned int busy, spare = 0;

	/* Sessions made while every other was busy (calls queued for new sessions) pass the
	 * bound: those beyond it go once they are idle, least recently used first. Here, outside
	 * any chain's own handling, a session's chain may be killed. */
	if (!e->stopping)
		sessions_evict(e, 0);
	TAILQ_FOREACH_SAFE(c, &e->chains, link, next)
	if (chain_is_finished(c))
		chain_free(c);
	if (e->stopping)
		return;
	busy = busy_chains(e);
	TAILQ_FOREACH_SAFE(call, &e->queue, link, cnext)
	{
		if (busy >= e->cfg->max_workers)
			break;
		if (place(e, call))
			busy = busy_chains(e);
	}
	/* Fds back (sessions ended, a limit raised): said once, with room for two chains so
	 * that a server at its limit does not say it at every call. */
	if (e->fds_short && engine_fd_room(e) >= 2 * engine_fds_per_chain(e))
		engine_fds_short(e, 0);
	TAILQ_FOREACH(c, &e->chains, link)
	if (chain_is_spare(c))
		spare++;
	/* Ready workers, but not while the last fork for one failed, nor into the fds kept
	 * for calls. */
	while (zygote_ready(e) && spare < e->cfg->prefork &&
	       busy + spare < e->cfg->max_workers + e->cfg->prefork && now_ms() >= e->spawn_retry) {
		if (chain_spawn(e, 0, &c) < 0)
			break;
		spare++;
	}
	if (e->spawn_retry && spare < e->cfg->prefork && !e->respawn.armed)
		timer_arm(&e->respawn, e->spawn_retry);
}

static void respawn(struct timer *t)
{
	engine_kick(t->data);
}

static void reap_more(struct timer *t)
{
	engine_sigchld(t->data);
}

static void zygote_retry(struct timer *t)
{
	struct engine *e = t->data;

	if (e->zpid > 0 || e->stopping)
		return;
	if (e->zfailures > 0 && TAILQ_EMPTY(&e->queue) && e->cfg->prefork == 0)
		return; /* nothing needs it now; the next call starts it */
	if (zygote_start(e) < 0)
		timer_arm(&e->zretry, now_ms() + ENGINE_ZYGOTE_RETRY_MS);
	engine_kick(e);
}

/* Everything the supervisor opens at start-up is open: confine it (confine.c). */
static int engine_confine(struct engine *e)
{
	struct confine_paths p = {
	    .zygote_exe = e->zygote_exe,
	    .cgroup_fd = e->cfg->cgroup && e->cfg->cgroup->state == CGROUP_ACTIVE
	                     ? e->cfg->cgroup->dirfd
	                     : -1,
	    .workspace_fd = e->ws.fd,
	    .workspace_writable = e->ws.writable,
	    .cache_fd = e->cache_fd,
	};
	int rc = confine_self(&p, &e->starter, &e->confined);

	if (rc < 0) {
		log_msg(LOG_ERROR, "the supervisor could not confine itself: %s", strerror(-rc));
		return rc;
	}
	log_msg(LOG_DEBUG, "supervisor confined: %s", e->confined.detail);
	return 0;
}

/* ---- the API ------------------------------------------------------------------------ */

/* The directory of safepy's cache: systemd's $CACHE_DIRECTORY, else $XDG_CACHE_HOME/safepy,
 * else ~/.cache/safepy, in base (PATH_MAX). 0, or -1 when there is none (no home directory). */
static int cache_base(char *base)
{
	const char *sd = getenv("CACHE_DIRECTORY"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw = NULL;
	int n;

	if (!home || home[0] != '/')
		home = (pw = getpwuid(geteuid())) ? pw->pw_dir : NULL;
	if (sd && sd[0] == '/' && !strchr(sd, ':'))
		n = snprintf(base, PATH_MAX, "%s", sd);
	else if (xdg && xdg[0] == '/')
		n = snprintf(base, PATH_MAX, "%s/safepy", xdg);
	else if (home && home[0] == '/' && strcmp(home, "/") != 0)
		n = snprintf(base, PATH_MAX, "%s/.cache/safepy", home);
	else
		n = -1;
	return n < 0 || n >= PATH_MAX - 16 ? -1 : 0;
}

/* Does the directory dirfd (O_PATH) hold nothing but what matplotlib writes in its cache (its
 * font list, "fontlist-*" files)? Else the name of the first other entry, in other (NAME_MAX). */
static int cache_only_matplotlib(int dirfd, char *other)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ok = 1;
	struct dirent *de;
	struct stat st;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		snprintf(other, NAME_MAX + 1, "(unreadable: %s)", strerror(errno));
		return 0;
	}
	for (errno = 0; ok && (de = readdir(d)); errno = 0) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		ok = strncmp(de->d_name, "fontlist-", 9) == 0 &&
		     fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     S_ISREG(st.st_mode);
		if (!ok)
			snprintf(other, NAME_MAX + 1, "%s", de->d_name);
	}
	if (ok && errno != 0) {
		snprintf(other, NAME_MAX + 1, "(unreadable: %s)", strerror(errno));
		ok = 0;
	}
	closedir(d);
	return ok;
}

/* Make (mode 0700) and hold safepy's cache directory, before the supervisor confines itself:
 * it is left out of the workspace whatever this server imports (a server without matplotlib
 * served it as any workspace directory, and a call of its code wrote a matplotlibrc there that
 * every later zygote with matplotlib read, and evaluated, before its sandbox). With matplotlib,
 * its directory in it is the one the zygote may write: one that holds anything but matplotlib's
 * font list (a configuration or a style matplotlib would read there) is moved aside and made
 * anew. Without it matplotlib cannot start, so a failure is said, and the rest of the server
 * works on. */
static void engine_cache_open(struct engine *e)
{
	char base[PATH_MAX], other[NAME_MAX + 1];
	int matplotlib = config_allows_matplotlib(e->cfg), bfd, fd;
	struct stat st;

	if (!matplotlib && !e->cfg->workspace)
		return;
	if (cache_base(base) < 0) {
		if (matplotlib)
			log_msg(LOG_WARN, "no cache directory for matplotlib (no home directory): "
			                  "it cannot be imported");
		return;
	}
	/* The parents of base are the user's: made if missing, like any program's cache. */
	for (char *s = strchr(base + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(base, 0700) < 0 && errno != EEXIST)
			break;
		if (!s)
			break;
		*s = '/';
	}
	bfd = open(base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0 || fstat(bfd, &st) < 0 || st.st_uid != geteuid()) {
		log_msg(LOG_WARN, "the cache directory %s: %s%s", base,
		        bfd < 0 ? strerror(errno) : "not ours",
		        matplotlib ? " (matplotlib cannot be imported)" : "");
		if (bfd >= 0)
			close(bfd);
		return;
	}
	e->cache_base_fd = bfd;
	if (!matplotlib)
		return;
	for (int tries = 0;; tries++) {
		char aside[64];

		if (mkdirat(bfd, "matplotlib", 0700) < 0 && errno != EEXIST) {
			log_msg(LOG_WARN,
			        "cannot make %s/matplotlib: %s (matplotlib cannot be imported)",
			        base, strerror(errno));
			return;
		}
		fd = openat(bfd, "matplotlib", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
			log_msg(LOG_WARN, "%s/matplotlib: %s (matplotlib cannot be imported)", base,
			        fd < 0 ? strerror(errno) : "not ours");
			if (fd >= 0)
				close(fd);
			return;
		}
		if (cache_only_matplotlib(fd, other))
			break;
		close(fd);
		/* Kept for the user to see, out of matplotlib's way: it starts with a new cache. */
		snprintf(aside, sizeof(aside), "matplotlib.refused-%lld-%d", (long long)time(NULL),
		         (int)getpid());
		if (tries > 0 || renameat(bfd, "matplotlib", bfd, aside) < 0) {
			log_msg(
			    LOG_WARN,
			    "%s/matplotlib holds %s, which safepy does not write there, and could "
			    "not be moved aside (%s): matplotlib would read it as its "
			    "configuration, so it cannot be imported",
			    base, other, tries > 0 ? "it came back" : strerror(errno));
			return;
		}
		log_msg(
		    LOG_WARN,
		    "%s/matplotlib held %s, which safepy does not write there (matplotlib would "
		    "have read it as its configuration): moved aside to %s/%s; matplotlib starts "
		    "with a new cache",
		    base, other, base, aside);
	}
	if (asprintf(&e->cache, "%s/matplotlib", base) < 0) {
		e->cache = NULL;
		close(fd);
		return;
	}
	e->cache_fd = fd;
}

static void engine_cache_close(struct engine *e)
{
	if (e->cache_fd >= 0)
		close(e->cache_fd);
	e->cache_fd = -1;
	if (e->cache_base_fd >= 0)
		close(e->cache_base_fd);
	e->cache_base_fd = -1;
	free(e->cache);
	e->cache = NULL;
}

int engine_new(const struct config *cfg, const char *zygote_exe, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	const char *which;
	int rc;

	if (!e)
		return -ENOMEM;
	e->cfg = cfg;
	e->zygote_exe = zygote_exe;
	e->zctl.fd = -1;
	e->can_trace = -1;
	e->modules.stdlib_fd = -1;
	e->cache_fd = -1;
	e->cache_base_fd = -1;
	TAILQ_INIT(&e->queue);
	TAILQ_INIT(&e->chains);
	TAILQ_INIT(&e->sessions);
	timer_init(&e->kick, schedule, e);
	timer_init(&e->zretry, zygote_retry, e);
	timer_init(&e->respawn, respawn, e);
	timer_init(&e->reap, reap_more, e);
	timer_init(&e->orphans, broker_orphans_more, e);
	/* The workspace is held from the start: a directory renamed or replaced later is not
	 * followed; the path the code is told stays the one opened. */
	rc = broker_workspace_open(&e->ws, cfg->workspace, cfg->workspace_write);
	if (rc < 0) {
		log_msg(LOG_ERROR, "cannot open the workspace %s: %s", cfg->workspace,
		        strerror(-rc));
		free(e);
		return rc;
	}
	if (e->ws.path && strcmp(e->ws.path, cfg->workspace) != 0) {
		log_msg(LOG_ERROR, "the workspace %s changed to %s since it was checked",
		        cfg->workspace, e->ws.path);
		broker_workspace_close(&e->ws);
		free(e);
		return -ESTALE;
	}
	if (broker_workspace_system(&e->ws, zygote_exe, &which)) {
		if (which)
			log_msg(
			    LOG_ERROR,
			    "--workspace-write: the workspace %s holds or lies in %s, the system's "
			    "or safepy's own programs and libraries: a call could change what the "
			    "server runs. Give it a directory of data",
			    e->ws.path, which);
		else
			log_msg(
			    LOG_ERROR,
			    "--workspace-write: cannot tell whether the workspace %s holds or lies "
			    "in the system's or safepy's own programs and libraries (their paths, "
			    "or the mounts /proc/self/mountinfo shows, do not tell: a chroot that "
			    "is not a mount point?): a call could change what the server runs. "
			    "Give it a directory of data on a mount that is shown",
			    e->ws.path);
		broker_workspace_close(&e->ws);
		free(e);
		return -EPERM;
	}
	engine_cache_open(e);
	rc = broker_workspace_exclude(&e->ws, e->cache_base_fd);
	if (rc < 0) {
		log_msg(LOG_ERROR, "cannot tell whether the workspace holds safepy's cache: %s",
		        strerror(-rc));
		broker_workspace_close(&e->ws);
		engine_cache_close(e);
		free(e);
		return rc;
	}
	/* Opened before the supervisor confines itself; kept for counting and for a /proc read
	 * when out of fds. */
	e->fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->fd_dir < 0 || proc_spare_open() < 0)
		log_msg(LOG_WARN, "cannot open /proc/self/fd or /dev/null: %s", strerror(errno));
	/* A session's processes outlive their parents (each committed call's process replaces
	 * the one before it): they come to us, not to init. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_msg(LOG_WARN, "cannot become a subreaper: %s", strerror(errno));
	rc = engine_confine(e);
	if (rc < 0) {
		starter_stop(&e->starter);
		if (e->fd_dir >= 0)
			close(e->fd_dir);
		proc_spare_close();
		broker_workspace_close(&e->ws);
		engine_cache_close(e);
		free(e);
		return rc;
	}
	engine_reserve(e);
	/* The zygote starts in the loop's first turn, after what the client has already sent
	 * (its initialize, answered without it): asking the starter is a fork's wait. */
	timer_arm(&e->zretry, now_ms());
	*out = e;
	return 0;
}

void engine_submit(struct engine *e, struct engine_call *c)
{
	struct session *s = c->session;

	c->chain = NULL;
	c->queued = 0;
	c->started_ms = now_ms();
	memset(&c->times, 0, sizeof(c->times));
	c->times.submit = now_us();
	if (s) {
		session_touch(s);
		if (s->active) {
			/* One call at a time per session, in arrival order. */
			TAILQ_INSERT_TAIL(&s->pending, c, link);
			c->queued = 1;
			return;
		}
		s->active = c;
	}
	if (e->zpid == 0 && !e->zretry.armed)
		timer_arm(&e->zretry, now_ms());
	enqueue(e, c, 0);
}

void engine_cancel(struct engine *e, struct engine_call *c)
{
	if (c->chain) {
		chain_cancel(c->chain);
		return;
	}
	if (c->queued)
		engine_fail(e, c, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
}

void engine_sigchld(struct engine *e)
{
	for (int n = 0;; n++) {
		struct proc *p = NULL;
		struct chain *c;
		int status;
		pid_t pid;

		if (n == ENGINE_WAITS_PER_TURN) {
			/* The rest in a later turn, after the events waiting (a timer a
			 * millisecond on: one due now would run again in this turn). */
			if (!e->reap.armed)
				timer_arm(&e->reap, now_ms() + 1);
			break;
		}
		pid = waitpid(-1, &status, WNOHANG | __WALL);
		if (pid <= 0)
			break;
		if (pid == e->zpid) {
			zygote_exited(e, status);
			continue;
		}
		if (WIFSTOPPED(status)) {
			trace_stop(e, pid, status);
			continue;
		}
		/* A process of a chain (a thread's end, or an unknown process, needs nothing). */
		c = engine_chain_of(e, pid, &p);
		if (c && p)
			chain_on_exit(c, p, status);
	}
	engine_kick(e);
}

const struct confine_report *engine_confinement(const struct engine *e)
{
	return &e->confined;
}

const char *engine_layers(struct engine *e)
{
	return e->layers;
}

int engine_can_name_syscalls(struct engine *e)
{
	return e->can_trace;
}

void engine_free(struct engine *e)
{
	struct chain *c, *next;
	struct engine_call *call;
	int64_t until;

	if (!e)
		return;
	/* Every call is answered (the front end may drop the answers), every process killed. */
	TAILQ_FOREACH(c, &e->chains, link)
	chain_kill(c, KILL_SHUTDOWN);
	while ((call = TAILQ_FIRST(&e->queue)))
		engine_fail(e, call, RUN_CANCELLED, "Cancelled", "The server is shutting down.");
	e->stopping = 1;
	{
		struct session *s;
		TAILQ_FOREACH(s, &e->sessions, link)
		while ((call = TAILQ_FIRST(&s->pending)))
			engine_fail(e, call, RUN_CANCELLED, "Cancelled",
			            "The server is shutting down.");
	}
	zygote_stop(e);
	starter_stop(&e->starter);
	/* Reap everything: chain processes are traced by us or are our children (as their
	 * subreaper), the zygote is our child. */
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
			(void)ptrace(PTRACE_CONT, pid, 0, 0);
	}
	sessions_free_all(e);
	TAILQ_FOREACH_SAFE(c, &e->chains, link, next)
	chain_free(c);
	broker_orphans_settle(e);
	timer_cancel(&e->kick);
	timer_cancel(&e->zretry);
	timer_cancel(&e->reap);
	timer_cancel(&e->orphans);
	timer_cancel(&e->respawn);
	if (e->fd_dir >= 0)
		close(e->fd_dir);
	proc_spare_close();
	broker_roots_clear(&e->modules);
	broker_workspace_close(&e->ws);
	engine_cache_close(e);
	free(e->layers);
	text_clear(&e->oom_type);
	text_clear(&e->oom_message);
	free(e);
}
