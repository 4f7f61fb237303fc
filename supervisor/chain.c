/* chain.c - a chain of worker processes and its state machine. A chain is a fresh worker from
 * the zygote and the processes forked from it: a holder (a session's committed state), a
 * runner (runs a call) and, while one is being made, a newborn. At most one of them runs code
 * at a time; every other waits in the fork gate (verified single-threaded) or has not been
 * let go yet. Events (frames, parks, births, exits, timers) only record facts; chain_advance
 * alone changes the state, through chain_set_state and its table of legal transitions. What
 * a process writes or how it parks is a claim: a frame not legal in its state, or a park from
 * the wrong process, kills that process; a runner's claim changes only its own call's report.
 * Deadlines end when the runner is parked or gone, never when it says so. */
#include <assert.h>
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

static const char *const state_names[CH_NSTATES] = {
    [CH_BOOTING] = "booting", [CH_IDLE] = "idle",         [CH_RUNNING] = "running",
    [CH_RESULT] = "result",   [CH_SNAPSHOT] = "snapshot", [CH_PARKED] = "parked",
    [CH_FORKING] = "forking", [CH_WARMING] = "warming",   [CH_REAPING] = "reaping",
    [CH_DEAD] = "dead",
};

const char *chain_state_name(enum chain_state s)
{
	return (unsigned int)s < CH_NSTATES ? state_names[s] : "?";
}

/* The legal transitions: from a state (row) to the states whose bits are set. */
#define TO(s) (1u << (s))
static const unsigned int transitions[CH_NSTATES] = {
    [CH_BOOTING] = TO(CH_IDLE) | TO(CH_DEAD),
    [CH_IDLE] = TO(CH_RUNNING) | TO(CH_REAPING) | TO(CH_DEAD),
    [CH_RUNNING] = TO(CH_RESULT) | TO(CH_REAPING) | TO(CH_DEAD),
    [CH_RESULT] = TO(CH_PARKED) | TO(CH_SNAPSHOT) | TO(CH_REAPING) | TO(CH_DEAD),
    [CH_SNAPSHOT] = TO(CH_PARKED) | TO(CH_REAPING) | TO(CH_DEAD),
    [CH_PARKED] = TO(CH_FORKING) | TO(CH_DEAD),
    [CH_FORKING] = TO(CH_WARMING) | TO(CH_RUNNING) | TO(CH_PARKED) | TO(CH_REAPING) | TO(CH_DEAD),
    [CH_WARMING] = TO(CH_IDLE) | TO(CH_REAPING) | TO(CH_DEAD),
    [CH_REAPING] = TO(CH_PARKED) | TO(CH_DEAD),
    [CH_DEAD] = 0,
};
#undef TO

/* The frames a process may write, by the chain's state and the writer's role. Any other
 * frame is a violation: its writer is killed. */
struct frame_rule {
	enum chain_state state;
	char type;
	enum proc_role from;
	int (*take)(struct chain *c, const char *payload, size_t len, const int *fds, size_t n_fds);
};

static int take_listener(struct chain *c, const char *payload, size_t len, const int *fds,
                         size_t n_fds);
static int take_ready(struct chain *c, const char *payload, size_t len, const int *fds,
                      size_t n_fds);
static int take_result(struct chain *c, const char *payload, size_t len, const int *fds,
                       size_t n_fds);
static int take_request(struct chain *c, const char *payload, size_t len, const int *fds,
                        size_t n_fds);

static const struct frame_rule frame_rules[] = {
    {CH_BOOTING, IPC_FRAME_LISTENER, ROLE_RUNNER, take_listener},
    {CH_BOOTING, IPC_FRAME_READY, ROLE_RUNNER, take_ready},
    {CH_RUNNING, IPC_FRAME_RESULT, ROLE_RUNNER, take_result},
    {CH_RUNNING, IPC_FRAME_REQUEST, ROLE_RUNNER, take_request},
};

static void chain_advance(struct chain *c);

static void chain_set_state(struct chain *c, enum chain_state to)
{
	if (!(transitions[c->state] & (1u << to))) {
		log_msg(LOG_ERROR, "chain %u: no transition from %s to %s", c->id,
		        chain_state_name(c->state), chain_state_name(to));
		assert(!"illegal chain transition");
		to = CH_DEAD;
	}
	log_msg(LOG_DEBUG, "chain %u: %s -> %s", c->id, chain_state_name(c->state),
	        chain_state_name(to));
	c->state = to;
	timer_cancel(&c->step);
	c->copy_cpu_max = -1;
	if (to == CH_FORKING || to == CH_WARMING || to == CH_REAPING || to == CH_SNAPSHOT) {
		c->step_end = now_ms() + ENGINE_STEP_MS;
		timer_arm(&c->step, now_ms() + ENGINE_STEP_POLL_MS);
	}
}

/* ---- steps -------------------------------------------------------------------------- */

static void lose(struct chain *c, const char *why);

/* A step outside a call: a holder forking or reaping, a new runner warming up. (A runner
 * making its copy in CH_SNAPSHOT is still under its call's deadline: the call is answered
 * once the copy has parked.) */
static int step_state(const struct chain *c)
{
	return c->state == CH_FORKING || c->state == CH_WARMING || c->state == CH_REAPING;
}

/* p is let go for a step: its CPU time from now on is the step's. */
static void step_start(struct proc *p)
{
	p->step_cpu0 = proc_cpu_ms(p->pid);
}

/* The CPU a step may take, in ms. */
static int step_cpu_max(const struct chain *c)
{
	return ENGINE_STEP_CPU_MS + (int)(c->e->cfg->memory >> 30) * ENGINE_STEP_CPU_GIB_MS;
}

/* Has p, in this step, used more CPU than the chain's steps have left? Only the kernel's count
 * is read. *used: its CPU in this step. */
static int step_overran(const struct chain *c, const struct proc *p, int *used)
{
	int now;

	*used = 0;
	if (!p->pid || p->killed || p->role == ROLE_GONE || p->step_cpu0 < 0)
		return 0;
	now = proc_cpu_ms(p->pid);
	if (now < 0)
		return 0;
	*used = now - p->step_cpu0;
	return c->step_cpu_used + *used > step_cpu_max(c);
}

/* A process computed past a step's CPU: it runs code of its own (its holder parked inside a
 * call's code, and the step returned into it, or into the child forked there). The session
 * is hostile: lost. */
static void step_overrun(struct chain *c, const struct proc *p, int used)
{
	log_msg(LOG_WARN,
	        "chain %u: process %d used %d ms of CPU in a step of state %s, %d in its steps "
	        "since its last call (at most %d); it runs code outside any call",
	        c->id, (int)p->pid, used, chain_state_name(c->state), c->step_cpu_used + used,
	        step_cpu_max(c));
	lose(c, "a process of the session computed outside a call");
}

/* The step timer, before the step's deadline. */
static void step_check(struct chain *c)
{
	int used = 0;

	for (int i = 0; i < CHAIN_PROCS; i++) {
		struct proc *p = &c->procs[i];
		if (!p->parked && step_overran(c, p, &used)) {
			step_overrun(c, p, used);
			return;
		}
	}
	timer_arm(&c->step, c->step_end < now_ms() + ENGINE_STEP_POLL_MS
	                        ? c->step_end
	                        : now_ms() + ENGINE_STEP_POLL_MS);
}

/* The step timer while a runner's copy is made: the copy stopped once it has used the CPU
 * time its call had left (its own count starts at the fork; RLIMIT_CPU gives it a whole new
 * limit). */
static void snapshot_check(struct chain *c)
{
	struct proc *n = c->newborn;
	int used, left = ENGINE_STEP_POLL_MS;

	if (n && !n->parked && !n->killed && c->copy_cpu_max >= 0 &&
	    (used = proc_cpu_ms(n->pid)) >= 0) {
		if (used >= c->copy_cpu_max) {
			log_msg(LOG_DEBUG,
			        "chain %u: the copy %d used %d ms of CPU, the call had %d", c->id,
			        (int)n->pid, used, c->copy_cpu_max);
			if (c->kill == KILL_NONE)
				c->kill = KILL_CPU;
			proc_kill(n);
			return;
		}
		if (c->copy_cpu_max - used < left)
			left = c->copy_cpu_max - used;
	}
	timer_arm(&c->step, c->step_end < now_ms() + left ? c->step_end : now_ms() + left);
}

/* ---- processes ------------------------------------------------------------------------ */

static struct proc *proc_find(struct chain *c, pid_t pid)
{
	if (pid <= 0)
		return NULL;
	for (int i = 0; i < CHAIN_PROCS; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	return NULL;
}

static struct proc *proc_add(struct chain *c, pid_t pid, enum proc_role role)
{
	for (int i = 0; i < CHAIN_PROCS; i++) {
		struct proc *p = &c->procs[i];
		if (p->pid == 0) {
			memset(p, 0, sizeof(*p));
			p->pid = pid;
			p->role = role;
			p->cpu_ms = -1;
			p->step_cpu0 = -1;
			return p;
		}
	}
	return NULL;
}

/* A process the chain no longer needs: killed, its exit still awaited. */
static void proc_retire(struct chain *c, struct proc *p)
{
	if (!p)
		return;
	proc_kill(p);
	p->role = ROLE_GONE;
	if (c->holder == p)
		c->holder = NULL;
	if (c->runner == p)
		c->runner = NULL;
	if (c->newborn == p)
		c->newborn = NULL;
}

static int procs_left(const struct chain *c)
{
	for (int i = 0; i < CHAIN_PROCS; i++)
		if (c->procs[i].pid)
			return 1;
	return 0;
}

int chain_is_finished(const struct chain *c)
{
	return c->state == CH_DEAD && !procs_left(c);
}

int chain_is_spare(const struct chain *c)
{
	return !c->session && !c->call && !c->holder &&
	       (c->state == CH_IDLE || c->state == CH_BOOTING);
}

int chain_is_busy(const struct chain *c)
{
	return c->call && c->state != CH_DEAD;
}

/* ---- answers ------------------------------------------------------------------------ */

static int committed(const struct run_outcome *o)
{
	return o->status == RUN_OK || o->status == RUN_ERROR;
}

/* Append a sentence to the outcome's error message. */
static void note(struct run_outcome *o, const char *sentence)
{
	struct text *m = &o->error_message;
	struct strbuf b = {0};

	if (m->len > 0) {
		sb_text(&b, m);
		if (m->s[m->len - 1] == '\0' || !strchr(".!?", m->s[m->len - 1]))
			sb_str(&b, ".");
		sb_str(&b, " ");
	}
	sb_str(&b, sentence);
	sb_take_text(&b, m);
}

/* What the runner printed, read from its memory (chain_salvage): forgotten. */
static void salvage_clear(struct chain *c)
{
	for (int i = 0; i < IPC_CAPTURE_KEEPS; i++)
		text_clear(&c->salvage[i]);
	c->have_salvage = 0;
	c->salvage_cut = 0;
}

void chain_salvage(struct chain *c, pid_t tid)
{
	int rc;

	if (!c->call || !c->dispatched || c->have_claim || c->have_salvage)
		return;
	rc = salvage_read(tid, c->capture_at, c->e->cfg->max_output, c->salvage, &c->salvage_cut);
	if (rc == 0)
		c->have_salvage = 1;
	else
		log_msg(LOG_DEBUG, "chain %u: the output of process %d could not be read (%s)",
		        c->id, (int)tid, strerror(-rc));
}

/* Answer the chain's call with o (consumed). rolled_back: a session call failed and the
 * session is as it was; a lost holder is said instead. */
static void answer(struct chain *c, struct run_outcome *o, int rolled_back)
{
	struct engine_call *call = c->call;

	if (!call) {
		run_outcome_clear(o);
		return;
	}
	timer_cancel(&c->soft);
	timer_cancel(&c->hard);
	timer_cancel(&c->quota);
	timer_cancel(&c->settle);
	if (call->session && rolled_back && c->holder_lost) {
		note(o, "The session's process ended unexpectedly while this call ran; the "
		        "session's state is lost.");
		rolled_back = 0;
	}
	o->rolled_back = call->session && rolled_back;
	/* The files it wrote follow the call: kept when it completed and was not undone, and
	 * its writes were within bounds. A runner with threads is killed after its report
	 * (KILL_DONE) and answered once it is gone: nothing writes any more, its report stands. */
	if (committed(o) && !o->rolled_back && !c->writes_refused &&
	    (c->kill == KILL_NONE || c->kill == KILL_DONE)) {
		broker_writes_commit(c, o);
	} else {
		/* A call stopped (a limit, a crash) after it changed files says they are not kept
		 * (a checkpoint it wrote before its deadline too). */
		if (!committed(o) && !c->writes_refused &&
		    (c->n_writes > 0 || c->n_removals > 0 || c->n_dirs > 0))
			note(o, "Nothing it changed in the workspace was kept: a call's files are "
			        "written when it completes.");
		broker_writes_drop(c);
	}
	c->writes_refused = 0;
	c->call = NULL;
	c->dispatched = 0;
	salvage_clear(c);
	engine_answer(c->e, call, o);
}

/* Answer with the runner's own report. */
static void answer_claim(struct chain *c, int rolled_back)
{
	struct run_outcome o = c->claim;

	run_outcome_init(&c->claim);
	c->have_claim = 0;
	/* A timeout its deadline never asked for is the CPU limit's (the code stopped at its
	 * signal): the answer names that limit, not the wall-clock one. */
	if (o.status == RUN_TIMEOUT && c->soft_asks == 0)
		o.cpu_limit_s = c->e->cfg->cpu_s;
	answer(c, &o, rolled_back);
}

/* Answer with the runner's report of a call that committed: the chain holds the session's
 * state now (a reset call's chain replaces the one before it). */
static void answer_commit(struct chain *c)
{
	if (c->session)
		session_committed(c->session, c);
	answer_claim(c, 0);
}

static int outcome_bound(struct run_outcome *o, const struct config *cfg);

/* Answer from what the supervisor knows of the runner's end. */
static void answer_verdict(struct chain *c, int have_status, int status, const struct proc *r)
{
	struct engine *e = c->e;
	struct verdict_in in = {
	    .kill = c->kill,
	    .have_status = have_status,
	    .status = status,
	    .sys = r ? &r->sys : NULL,
	    .pid = r ? r->pid : 0,
	    .ran = c->dispatched,
	    .cpu_ms = r ? r->cpu_ms : -1,
	    .timeout_s = c->call ? engine_call_timeout(e, c->call) : e->cfg->timeout_s,
	    .cpu_s = e->cfg->cpu_s,
	    .memory = e->cfg->memory,
	};
	struct verdict v;
	struct run_outcome o;
	uint64_t ooms = 0;

	if (c->has_cg && cgroup_worker_oom_kills(&c->cg, &ooms) == 0 && ooms > c->ooms_before)
		in.ooms = ooms - c->ooms_before;
	verdict_decide(&in, &v);
	if (v.status == RUN_SANDBOX_VIOLATION && r && r->sys.have) {
		char name[64];
		log_msg(LOG_WARN, "chain %u: process %d killed by the sandbox: syscall %s", c->id,
		        (int)r->sys.tid,
		        policy_syscall_name(r->sys.arch, r->sys.nr, name, sizeof(name)));
	}
	run_outcome_init(&o);
	o.status = v.status;
	o.cpu_limit_s = v.cpu ? e->cfg->cpu_s : 0;
	text_set_str(&o.error_type, v.type);
	text_set_str(&o.error_message, v.message);
	text_set_str(&o.error_traceback, "");
	if (c->have_salvage) {
		/* What it printed before it was stopped, or died. */
		text_take(&o.stdout_text, c->salvage[IPC_CAPTURE_STDOUT].s,
		          c->salvage[IPC_CAPTURE_STDOUT].len);
		text_take(&o.stderr_text, c->salvage[IPC_CAPTURE_STDERR].s,
		          c->salvage[IPC_CAPTURE_STDERR].len);
		text_take(&o.logs, c->salvage[IPC_CAPTURE_LOG].s, c->salvage[IPC_CAPTURE_LOG].len);
		for (int i = 0; i < IPC_CAPTURE_KEEPS; i++)
			text_init(&c->salvage[i]);
		o.truncated = c->salvage_cut;
		if (outcome_bound(&o, e->cfg) < 0) {
			text_clear(&o.stdout_text);
			text_clear(&o.stderr_text);
			text_clear(&o.logs);
		}
	}
	c->have_claim = 0;
	run_outcome_clear(&c->claim);
	answer(c, &o, c->kill != KILL_LOST);
}

/* ---- killing ------------------------------------------------------------------------ */

/* Kill the runner (why says what its call's answer will be); the holder stays. */
void chain_kill_runner(struct chain *c, enum kill_reason why)
{
	if (c->kill == KILL_NONE)
		c->kill = why;
	if (c->runner)
		proc_kill(c->runner);
	timer_cancel(&c->soft);
	timer_cancel(&c->hard);
}

/* The session's state is gone with this chain. */
static void lose(struct chain *c, const char *why)
{
	if (c->session)
		session_lose(c->session, c, why);
	chain_kill(c, KILL_LOST);
}

/* A process broke the protocol: a frame or a park not legal in its state. */
static void violation(struct chain *c, struct proc *p, const char *what)
{
	if (!p || p->killed || p->role == ROLE_GONE)
		return;
	log_msg(LOG_WARN, "chain %u: process %d (%s) %s in state %s; killing it", c->id,
	        (int)p->pid,
	        p == c->runner   ? "runner"
	        : p == c->holder ? "holder"
	                         : "newborn",
	        what, chain_state_name(c->state));
	if (p == c->runner && c->state != CH_WARMING && c->state != CH_BOOTING)
		chain_kill_runner(c, KILL_PROTOCOL);
	else if (p == c->runner && c->state == CH_WARMING)
		proc_kill(p);
	else if (p == c->runner)
		chain_kill(c, KILL_PROTOCOL);
	else
		lose(c, "a process of the session broke the protocol");
}

void chain_signal_storm(struct chain *c, struct proc *p)
{
	if (p == c->runner && c->state != CH_WARMING && c->state != CH_BOOTING) {
		log_msg(LOG_WARN, "chain %u: runner %d took more than %d signals; killing it",
		        c->id, (int)p->pid, ENGINE_SIGNALS_MAX);
		chain_kill_runner(c, KILL_SIGNALS);
	} else {
		violation(c, p, "took signals without end");
	}
}

void chain_kill(struct chain *c, enum kill_reason why)
{
	if (c->state == CH_DEAD)
		return;
	if (c->kill == KILL_NONE || why == KILL_SHUTDOWN)
		c->kill = why;
	for (int i = 0; i < CHAIN_PROCS; i++)
		if (c->procs[i].pid) {
			proc_kill(&c->procs[i]);
			c->procs[i].role = ROLE_GONE;
		}
	c->holder = c->runner = c->newborn = NULL;
	if (c->call) {
		if (c->dispatched || c->kill == KILL_SHUTDOWN || c->kill == KILL_LOST) {
			if (c->kill == KILL_LOST && !c->dispatched && c->call->session) {
				struct engine_call *call = c->call;
				const char *lost = call->session->lost_why[0]
				                       ? call->session->lost_why
				                       : "its process ended unexpectedly";
				c->call = NULL;
				call->chain = NULL;
				engine_fail(c->e, call, RUN_ERROR, "SessionError",
				            "The session's state was lost (%s). Pass reset: true "
				            "to start it "
				            "afresh, or session: \"new\" for a new session.",
				            lost);
			} else {
				answer_verdict(c, 0, 0, NULL);
			}
		} else {
			/* Not started: it goes back to the queue for another chain. */
			struct engine_call *call = c->call;
			c->call = NULL;
			call->chain = NULL;
			engine_requeue(c->e, call);
		}
	}
	if (c->session)
		session_drop_chain(c->session, c);
	broker_writes_drop(c);
	timer_cancel(&c->soft);
	timer_cancel(&c->hard);
	timer_cancel(&c->quota);
	timer_cancel(&c->settle);
	channel_close(&c->ch);
	gate_close(c);
	if (c->has_cg)
		(void)cgroup_worker_kill(&c->cg);
	chain_set_state(c, CH_DEAD);
	engine_kick(c->e);
}

/* ---- booting ---------------------------------------------------------------------- */

static void chain_channel_event(struct watch *w, uint32_t events);
static void chain_timer(struct timer *t);

int chain_spawn(struct engine *e, int for_call, struct chain **out)
{
	struct chain *c;
	int sv[2], rc;

	if (!zygote_ready(e))
		return -EAGAIN;
	/* Its fds, and the reserve beside them: a chain made with the last ones would fail at
	 * its first /proc read, or lose its gate listener in transit. */
	if (engine_fd_room(e) < engine_fds_per_chain(e))
		return -EMFILE;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	c->e = e;
	c->id = ++e->next_chain_id;
	c->state = CH_BOOTING;
	c->req_id = ++e->next_req;
	c->generation = e->generation;
	c->capture_at = e->zcapture;
	c->spawned_ms = now_ms();
	c->listener.fd = -1;
	c->ch.w.fd = -1;
	c->ch.peer = -1;
	run_outcome_init(&c->claim);
	timer_init(&c->soft, chain_timer, c);
	timer_init(&c->hard, chain_timer, c);
	timer_init(&c->step, chain_timer, c);
	timer_init(&c->quota, chain_timer, c);
	timer_init(&c->settle, chain_timer, c);
	/* Once a worker was seized, tracing works: later ones rely on it instead of a
	 * parent-death signal. */
	c->bound = e->can_trace == 1;
	rc = channel_open(&c->ch, sv[0], sv[1], chain_channel_event, c);
	if (rc == 0)
		rc = zygote_request(
		    e, c->req_id,
		    (c->bound ? IPC_SPAWN_TRACED : 0) | (for_call ? IPC_SPAWN_COLD : 0), sv[1]);
	if (rc < 0) {
		log_msg(LOG_ERROR, "could not ask the zygote for a worker: %s", strerror(-rc));
		channel_close(&c->ch);
		free(c);
		return rc;
	}
	timer_arm(&c->step, now_ms() + ENGINE_BOOT_MS);
	TAILQ_INSERT_TAIL(&e->chains, c, link);
	*out = c;
	return 0;
}

/* With a delegated cgroup, each chain gets its own: memory.max, no swap, pids.max. */
static void chain_cgroup(struct chain *c, pid_t pid)
{
	const struct config *cfg = c->e->cfg;
	struct cgroup_limits lim = {
	    .memory_max = cfg->memory, .no_swap = 1, .pids_max = ENGINE_CGROUP_PIDS};
	int rc;

	if (!cfg->cgroup || cfg->cgroup->state != CGROUP_ACTIVE)
		return;
	rc = cgroup_worker_create(cfg->cgroup, &lim, &c->cg);
	if (rc == 0) {
		rc = cgroup_worker_attach(&c->cg, pid);
		if (rc < 0)
			cgroup_worker_remove(cfg->cgroup, &c->cg);
	}
	if (rc < 0) {
		log_msg(LOG_WARN, "no cgroup for worker %d: %s", (int)pid, strerror(-rc));
		return;
	}
	c->has_cg = 1;
}

void chain_on_pid(struct chain *c, pid_t pid)
{
	if (c->state != CH_BOOTING || c->runner)
		return;
	c->runner = proc_add(c, pid, ROLE_RUNNER);
	if (!c->runner) {
		(void)kill(pid, SIGKILL);
		chain_kill(c, KILL_DONE);
		return;
	}
	c->runner->fresh = 1;
	engine_procs_short(c->e, 0, 0);
	(void)loop_mod(&c->ch.w, EPOLLIN);
	chain_cgroup(c, pid);
	chain_advance(c);
}

/* The worker is sandboxed and dumpable (its ready frame says so, and it cannot lie about
 * that: a process that is not lets no tracer in): attach, so every process and thread it
 * makes is traced from its birth. */
static int chain_trace(struct chain *c)
{
	struct engine *e = c->e;

	if (trace_seize(c->runner->pid) == 0) {
		c->traced = 1;
		e->can_trace = 1;
		return 0;
	}
	if (c->bound) {
		/* Nothing would bind its life to the supervisor's: it goes, and later workers take
		 * a parent-death signal again. */
		log_msg(LOG_WARN, "chain %u: its worker could not be traced (%s); killing it",
		        c->id, strerror(errno));
		e->can_trace = 0;
		return -1;
	}
	if (e->can_trace != 1)
		e->can_trace = 0;
	if (!e->warned_trace) {
		log_msg(
		    LOG_WARN,
		    "cannot trace workers (%s): sessions keep no state, and a sandbox violation "
		    "will not name its syscall",
		    strerror(errno));
		e->warned_trace = 1;
	}
	return 0;
}

/* The message of a call for which no process could be made; kept: its session holds the
 * state it had. */
static void fail_no_process(struct chain *c, const char *what, int err, int kept)
{
	struct engine_call *call = c->call;

	c->call = NULL;
	call->chain = NULL;
	if (!err) {
		engine_fail(c->e, call, RUN_CRASHED, "ResourceError",
		            "No process could be created for this call: %s.%s", what,
		            kept ? " The session is unchanged." : "");
		return;
	}
	engine_fail(c->e, call, RUN_CRASHED, "ResourceError",
	            "No process could be created for this call: %s (%s%s%s). Retry later.%s", what,
	            strerror(err),
	            err == EAGAIN ? ": a limit on processes is reached, the server user's "
	                            "RLIMIT_NPROC or its cgroup's pids.max"
	                          : "",
	            err == EAGAIN && c->holder ? ", or the session's own bound on its processes"
	                                         " and threads (its earlier calls' processes not "
	                                         "yet gone)"
	                                       : "",
	            kept ? " The session is unchanged." : "");
}

void chain_on_spawn_error(struct chain *c, int err)
{
	engine_procs_short(c->e, 1, err);
	if (c->call && c->state == CH_BOOTING)
		fail_no_process(c, "the fork of a new worker failed", err,
		                c->call->session && c->call->session->old);
	chain_kill(c, KILL_DONE);
}

void chain_on_zygote_lost(struct chain *c)
{
	struct proc *r = c->runner;

	if (c->state == CH_BOOTING) {
		chain_kill(c, KILL_ZYGOTE);
	} else if (c->bound && c->traced) {
		/* Its processes have no parent-death signal: they live on, the supervisor's children
		 * now (its subreaper), bound to it by EXITKILL. */
	} else if (c->holder && c->holder->fresh) {
		lose(c, "the Python interpreter process exited");
	} else if (!c->holder && r && r->fresh &&
	           (c->state == CH_IDLE || c->state == CH_RUNNING || c->state == CH_RESULT)) {
		/* A call not started goes to another chain; one running is answered so. */
		chain_kill(c, KILL_ZYGOTE);
	}
	/* Otherwise its fresh worker is making the copy that keeps a session's state: the copy
	 * is not the zygote's child and lives on. */
}

static int take_listener(struct chain *c, const char *payload, size_t len, const int *fds,
                         size_t n_fds)
{
	(void)payload;
	if (c->got_listener || c->got_ready || len != 0 || n_fds != 1)
		return -1;
	if (gate_open(c, fds[0]) < 0)
		return -1;
	c->got_listener = 1;
	return 0;
}

static int take_ready(struct chain *c, const char *payload, size_t len, const int *fds,
                      size_t n_fds)
{
	struct engine *e = c->e;

	(void)fds;
	if (c->got_ready || n_fds != 0)
		return -1;
	c->got_ready = 1;
	if (chain_trace(c) < 0) {
		chain_kill(c, KILL_DONE);
		return 0;
	}
	if (!e->layers) {
		e->layers = strndup(payload, len);
		log_msg(LOG_INFO, "sandbox layers: %.*s", (int)len, payload);
	}
	log_msg(LOG_DEBUG, "chain %u: worker ready %lld ms after the spawn request", c->id,
	        (long long)(now_ms() - c->spawned_ms));
	return 0;
}

/* ---- frames --------------------------------------------------------------------------- */

/* Room for the marker a cut text carries ("\n... [N bytes cut] ...\n") beside its bytes. */
#define CUT_MARKER_ROOM 64

/* t within max bytes, as the worker keeps it; *truncated set when it was cut. */
static int text_bound(struct text *t, size_t max, int *truncated)
{
	if (!t->s || t->len <= max + CUT_MARKER_ROOM)
		return 0;
	*truncated = 1;
	return text_cut(t->s, t->len, max, TEXT_BYTES, t);
}

/* The limits on what a call reports hold whatever its worker says: a worker that writes its own
 * RESULT frame is not held by its capture code. Returns 0 or -ENOMEM. */
static int outcome_bound(struct run_outcome *o, const struct config *cfg)
{
	size_t n = 0;
	int trunc = 0;

	if (text_bound(&o->stdout_text, cfg->max_output, &trunc) < 0 ||
	    text_bound(&o->stderr_text, cfg->max_output, &trunc) < 0 ||
	    text_bound(&o->logs, cfg->max_output, &trunc) < 0 ||
	    text_bound(&o->result_repr, cfg->max_result, &trunc) < 0 ||
	    text_bound(&o->error_message, cfg->max_result, &trunc) < 0 ||
	    text_bound(&o->error_traceback, cfg->max_result, &trunc) < 0)
		return -ENOMEM;
	if (o->result &&
	    (!json_object_to_json_string_length(o->result, JSON_C_TO_STRING_PLAIN, &n) ||
	     n > cfg->max_result + CUT_MARKER_ROOM)) {
		/* Too big for its JSON form: the client has its repr. */
		json_object_put(o->result);
		o->result = NULL;
		trunc = 1;
	}
	if (trunc)
		o->truncated = 1;
	return 0;
}

/* The most a worker's RESULT holds: its three texts cut to --max-output and four to the
 * result's limit (the repr, the JSON value, the error's message and traceback), every byte
 * escaped at worst (\u00XX), the images as base64, and room for the rest. A bigger frame is no
 * worker's: decoding 8 MiB of JSON held the loop for half a second. */
static size_t result_frame_max(const struct config *cfg)
{
	uint64_t n = 6ull * (3ull * cfg->max_output + 4ull * cfg->max_result) +
	             ((uint64_t)RUN_IMAGES_BYTES_MAX / 3 + RUN_IMAGES_MAX + 1) * 4 + (64u << 10);

	return n > IPC_FRAME_MAX ? IPC_FRAME_MAX : (size_t)n;
}

static int take_result(struct chain *c, const char *payload, size_t len, const int *fds,
                       size_t n_fds)
{
	struct run_outcome o;
	int rc;

	(void)fds;
	if (n_fds != 0 || len < IPC_SEQ_BYTES || len > result_frame_max(c->e->cfg) ||
	    ipc_get_u32((const unsigned char *)payload) != c->seq)
		return -1;
	run_outcome_init(&o);
	rc = ipc_outcome_decode(payload + IPC_SEQ_BYTES, len - IPC_SEQ_BYTES, &o);
	if (rc == 0)
		rc = outcome_bound(&o, c->e->cfg);
	/* A failure reported without its error (the worker could not write it out, or forged
	 * it) says so, not that the server ran short of memory (engine.c's text for an error the
	 * supervisor could not write out). */
	if (rc == 0 && o.status != RUN_OK && (!o.error_type.s || !o.error_message.s) &&
	    (text_set_str(&o.error_type, "Error") < 0 ||
	     text_set_str(&o.error_message, "The call failed, and its report gave no error.") < 0))
		rc = -ENOMEM;
	if (rc == -ENOMEM) {
		/* Not the runner's fault: its call ends saying the server ran short. */
		run_outcome_clear(&o);
		chain_kill_runner(c, KILL_RESOURCE);
		return 0;
	}
	if (rc < 0) {
		run_outcome_clear(&o);
		return -1;
	}
	run_outcome_clear(&c->claim);
	c->claim = o;
	c->have_claim = 1;
	if (c->call)
		c->call->times.result = now_us();
	return 0;
}

/* A request of the running call (a module's source, ...): answered by the broker. */
static int take_request(struct chain *c, const char *payload, size_t len, const int *fds,
                        size_t n_fds)
{
	(void)fds;
	/* A worker reads each reply before it asks again: one that asks with replies unread
	 * would make the supervisor queue (and copy) without bound; one that asks while its
	 * request waits for a copy (broker.c fill) asks out of turn too. */
	int rc;

	if (channel_unread(&c->ch) != 0 || n_fds != 0 || c->copy)
		return -1;
	rc = broker_request(c, payload, len);
	if (rc == -ENOMEM) {
		/* Not the runner's fault: its call ends saying the server ran short. */
		chain_kill_runner(c, KILL_RESOURCE);
		return 0;
	}
	return rc == 0 ? 0 : -1;
}

void chain_on_frame(struct chain *c, pid_t sender, char type, const char *payload, size_t len,
                    const int *fds, size_t n_fds)
{
	struct proc *p = proc_find(c, sender);
	int taken = 0;

	if (c->state != CH_DEAD && p && !p->killed && p->role != ROLE_GONE) {
		for (size_t i = 0; i < sizeof(frame_rules) / sizeof(frame_rules[0]); i++) {
			const struct frame_rule *r = &frame_rules[i];
			if (r->state == c->state && r->type == type && r->from == p->role &&
			    r->take(c, payload, len, fds, n_fds) == 0) {
				taken = 1;
				break;
			}
		}
		if (!taken)
			violation(c, p, "sent a frame not allowed");
	}
	/* Fds a frame did not keep: the listener is the only one ever kept. */
	for (size_t i = 0; i < n_fds; i++)
		if (!taken || type != IPC_FRAME_LISTENER)
			(void)close(fds[i]);
	if (c->state != CH_DEAD)
		chain_advance(c);
}

void chain_on_fds_cut(struct chain *c, pid_t sender)
{
	struct proc *p = proc_find(c, sender);

	/* Only a booting worker sends an fd (its gate listener). Without it the chain cannot
	 * be used, through no fault of the worker's: its call (not started) waits for another. */
	if (c->state == CH_BOOTING && !c->got_listener && p && p == c->runner &&
	    engine_fds_exhausted(c->e)) {
		engine_fds_short(c->e, 1);
		log_msg(LOG_DEBUG, "chain %u: its gate listener was lost for want of an fd", c->id);
		chain_kill(c, KILL_DONE);
		return;
	}
	chain_on_frame(c, sender, 0, NULL, 0, NULL, 0);
}

void chain_on_nomem(struct chain *c, pid_t sender)
{
	struct proc *p = proc_find(c, sender);

	if (c->state == CH_DEAD || !p || p->killed || p->role == ROLE_GONE)
		return;
	log_msg(LOG_ERROR, "chain %u: no memory for a frame of process %d", c->id, (int)p->pid);
	if (p == c->runner && (c->state == CH_RUNNING || c->state == CH_RESULT))
		chain_kill_runner(c, KILL_RESOURCE);
	else if (c->state == CH_BOOTING)
		chain_kill(c, KILL_DONE); /* its call, not started, waits for another */
	else
		violation(c, p, "sent a frame"); /* none is allowed in its state anyway */
	chain_advance(c);
}

void chain_on_hangup(struct chain *c)
{
	/* Every end closed, ours of the workers' included (a channel opened without it): they
	 * are gone or going; their exits tell the rest. */
	channel_close(&c->ch);
}

static void chain_channel_event(struct watch *w, uint32_t events)
{
	struct chain *c = w->data;

	if (c->state == CH_BOOTING && !c->runner) {
		/* Who the worker is comes from the zygote: until then its frames wait. (We hold
		 * the workers' end too, so a chain's channel does not hang up: a worker that is
		 * gone says so by its exit, or by the boot deadline.) */
		if (events & (EPOLLHUP | EPOLLERR))
			chain_on_hangup(c);
		else
			(void)loop_mod(&c->ch.w, 0);
		return;
	}
	if (events & EPOLLOUT)
		channel_flush(&c->ch);
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
	    channel_read(&c->ch, c, ENGINE_READ_PER_TURN) == -EPIPE)
		chain_on_hangup(c);
	engine_kick(c->e);
}

/* ---- parks -------------------------------------------------------------------------- */

/* The runner's code had a fork refused: past ENGINE_FORKS_MAX its call ends. */
static void fork_refused(struct chain *c, struct proc *p)
{
	if (++p->forks != ENGINE_FORKS_MAX + 1)
		return;
	log_msg(LOG_WARN, "chain %u: runner %d tried to fork more than %d times; killing it", c->id,
	        (int)p->pid, ENGINE_FORKS_MAX);
	chain_kill_runner(c, KILL_FORKS);
}

void chain_on_park(struct chain *c, pid_t tid, uint64_t id)
{
	struct proc *p = proc_find(c, tid);
	pid_t tgid = 0;
	int threads = 0;

	if (c->state == CH_DEAD)
		return;
	if (!p) {
		/* A thread's fork attempt, or an unknown process's. Threads of the running
		 * call's process are user code: refused, as a fork from it would be. */
		struct proc *owner = NULL;
		if (proc_status(tid, &tgid, NULL, NULL) == 0)
			owner = proc_find(c, tgid);
		gate_refuse(c, id);
		if (owner && owner == c->runner &&
		    (c->state == CH_RUNNING || c->state == CH_RESULT)) {
			fork_refused(c, owner);
			return;
		}
		if (owner)
			violation(c, owner, "forked from a thread");
		return;
	}
	if (p->killed || p->role == ROLE_GONE)
		return; /* dying: the notification dies with it */
	if (p == c->runner && c->state == CH_RUNNING) {
		/* User code forking: sessions create processes only on the supervisor's word. */
		gate_refuse(c, id);
		fork_refused(c, p);
		return;
	}
	threads = proc_threads(tid);
	if (threads < 0) {
		gate_refuse(c, id);
		return; /* gone meanwhile */
	}
	p->parked = 1;
	p->notif = id;
	p->threads = threads;
	log_msg(LOG_DEBUG, "chain %u: %d (%s) parked with %d thread%s in state %s", c->id, (int)tid,
	        p == c->runner   ? "runner"
	        : p == c->holder ? "holder"
	                         : "newborn",
	        threads, threads == 1 ? "" : "s", chain_state_name(c->state));
	/* Only a runner that has reported its result may park with threads running: it will
	 * not be kept (a one-thread copy is, or nothing). Any other process must be alone. */
	if (threads != 1 &&
	    !(p == c->runner && (c->state == CH_RESULT || c->state == CH_SNAPSHOT))) {
		violation(c, p, "parked with threads running");
		return;
	}
	/* A frame begun and not ended by the process that parks: a worker writes each frame whole
	 * before it parks (and what it wrote is read before its park is judged), and the
	 * supervisor would hold what the frame said it would bring, up to the largest frame, for as
	 * long as the session lives: a holder parked inside a call's own code began one of 8 MiB
	 * in the fork of the next call's process and parked again, in every session. The frame
	 * goes now, and its writer broke the protocol (a holder's or a newborn's session is lost).
	 * A runner parked after its result is judged by decide(): its call is not kept. */
	if (channel_partial(&c->ch, p->pid) && !(p == c->runner && c->state == CH_RESULT)) {
		channel_forget(&c->ch, p->pid);
		violation(c, p, "parked with a frame unfinished");
		return;
	}
	if (step_state(c)) {
		int used = 0;
		if (step_overran(c, p, &used)) {
			step_overrun(c, p, used);
			return;
		}
		if (p->step_cpu0 >= 0) {
			c->step_cpu_used += used;
			log_msg(
			    LOG_DEBUG,
			    "chain %u: %d used %d ms of CPU in the step, %d since the last call",
			    c->id, (int)p->pid, used, c->step_cpu_used);
		}
	}
	p->step_cpu0 = -1;
	chain_advance(c);
}

/* ---- births and exits --------------------------------------------------------------- */

int chain_on_birth(struct chain *c, pid_t pid, pid_t parent)
{
	struct proc *p;

	if (c->newborn && c->newborn->pid == pid)
		return 1; /* seen already (its birth stop and its parent's fork event) */
	p = proc_find(c, parent);
	/* Only the process asked to fork, once. */
	if (!p || c->newborn || p->killed ||
	    !((c->state == CH_FORKING && p == c->holder) ||
	      (c->state == CH_SNAPSHOT && p == c->runner)))
		return 0;
	c->newborn = proc_add(c, pid, ROLE_NEWBORN);
	if (!c->newborn)
		return 0;
	if (c->state == CH_FORKING)
		c->newborn->step_cpu0 = 0; /* a child's count starts at its fork */
	engine_procs_short(c->e, 0, 0);
	if (c->state == CH_SNAPSHOT) {
		/* The copy runs the call's code too (the interpreter's after-fork work calls
		 * the code's finalizers) on a CPU count of its own: it may use what the call
		 * had left. */
		int used = proc_cpu_ms(c->runner->pid), max = (int)c->e->cfg->cpu_s * 1000;
		c->copy_cpu_max = used < 0 ? max : used < max ? max - used : 0;
		proc_kill(c->runner); /* its copy exists: its work is done */
	}
	chain_advance(c);
	return 1;
}

void chain_on_exit(struct chain *c, struct proc *p, int status)
{
	int was_runner = p == c->runner, was_holder = p == c->holder, was_newborn = p == c->newborn;
	int step_used = 0;
	struct proc copy;

	log_msg(LOG_DEBUG, "chain %u: process %d (%s) ended, status %#x", c->id, (int)p->pid,
	        was_runner    ? "runner"
	        : was_holder  ? "holder"
	        : was_newborn ? "newborn"
	                      : "gone",
	        status);
	/* What it wrote before it ended is judged first: a result, or a violation. */
	if (was_runner && c->state != CH_DEAD && c->ch.w.fd >= 0 &&
	    channel_read(&c->ch, c, ENGINE_READ_DRAIN) == -EPIPE)
		chain_on_hangup(c);
	/* A frame it left half written is dropped now, not when another process writes. */
	channel_forget(&c->ch, p->pid);
	copy = *p;
	memset(p, 0, sizeof(*p));
	/* A process that ends in a step instead of parking used its CPU all the same (its count
	 * read at its exit stop). */
	if (copy.step_cpu0 >= 0 && copy.cpu_ms >= copy.step_cpu0 && c->state != CH_DEAD) {
		step_used = copy.cpu_ms - copy.step_cpu0;
		c->step_cpu_used += step_used;
	}
	if (was_holder) {
		c->holder = NULL;
		if (!copy.killed && c->state != CH_DEAD) {
			c->holder_lost = 1;
			log_msg(LOG_WARN, "chain %u: holder %d ended (status %#x)", c->id,
			        (int)copy.pid, status);
		}
	}
	if (was_newborn) {
		c->newborn = NULL;
		c->newborn_gone = 1;
		if (c->state == CH_SNAPSHOT) {
			c->copy_status = status;
			c->copy_last = copy;
			c->copy_gone = 1;
		}
	}
	if (was_runner) {
		/* A fresh worker dies with its zygote (its parent-death signal): say that, not
		 * "killed from outside". */
		if (copy.fresh && !c->bound && !copy.killed && c->kill == KILL_NONE &&
		    WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
		    zygote_gone(c->e, c->generation))
			c->kill = KILL_ZYGOTE;
		c->runner = NULL;
		c->runner_status = status;
		c->runner_gone = 1;
		c->runner_last = copy;
	}
	if (c->state != CH_DEAD && c->step_cpu_used > step_cpu_max(c) && step_used > 0) {
		c->step_cpu_used -= step_used;
		step_overrun(c, &copy, step_used);
	}
	if (c->state != CH_DEAD)
		chain_advance(c);
	else
		engine_kick(c->e);
}

/* ---- the call ----------------------------------------------------------------------- */

/* Write the call's code to the channel, then let the runner read it. */
static void dispatch(struct chain *c)
{
	struct engine_call *call = c->call;
	struct engine *e = c->e;
	unsigned char seq[IPC_SEQ_BYTES];
	int64_t now = now_ms();
	size_t dropped;
	int rc;

	/* Every process of the chain is parked, and each was judged at its park for a frame it
	 * left unfinished (or its frame went at its exit): one still here has a writer the chain
	 * does not know of. The call does not start on it (its own frames would be read as its
	 * rest), and the buffer goes with the chain. */
	if (channel_partial(&c->ch, 0)) {
		log_msg(LOG_WARN, "chain %u: a frame of process %d is unfinished before a call",
		        c->id, (int)c->ch.sender);
		lose(c, "a process of the session broke the protocol");
		return;
	}
	c->seq = (c->seq + 1) & IPC_PARK_ARG_MASK;
	ipc_put_u32(seq, c->seq);
	c->step_cpu_used = 0;
	c->kill = KILL_NONE;
	c->have_claim = 0;
	salvage_clear(c);
	c->holder_lost = 0;
	c->runner_gone = 0;
	c->runner->sys.have = 0;
	c->runner->cpu_ms = -1;
	c->ooms_before = 0;
	c->requests = 0;
	c->served = 0;
	c->ws_copied = 0;
	c->fds_given = 0;
	c->fds_write = 0;
	c->settle_tries = 0;
	c->soft_asks = 0;
	if (c->has_cg)
		(void)cgroup_worker_oom_kills(&c->cg, &c->ooms_before);
	proc_prefer_oom(c->runner->pid);
	c->dispatched = 1;
	chain_set_state(c, CH_RUNNING);
	timer_arm(&c->soft, now + (int64_t)(engine_call_timeout(e, call) * 1000));
	timer_arm(&c->hard, c->soft.at + ENGINE_SOFT_KILL_GRACE_MS);
	call->times.dispatch = now_us();
	/* A call that committed read every reply (not_keepable), and what one not kept left went
	 * before any process ran again (channel_quiet): nothing is left, this is a backstop. */
	dropped = c->ch.dirty ? channel_discard(&c->ch) : 0;
	c->ch.dirty = 1;
	if (dropped)
		log_msg(LOG_DEBUG, "chain %u: %zu bytes an earlier runner left unread dropped",
		        c->id, dropped);
	rc = channel_send(&c->ch, IPC_FRAME_CODE, seq, sizeof(seq), call->code, call->code_len);
	if (rc < 0) { /* its exit tells the rest */
		chain_kill_runner(c, rc == -ENOMEM ? KILL_RESOURCE : KILL_PROTOCOL);
		return;
	}
	/* The answer fails only when the process is gone or going (its zygote died, ...): its
	 * exit says what happened. */
	if (gate_command(c, c->runner, IPC_PARK_RUN, c->seq) < 0)
		proc_kill(c->runner);
}

void chain_give(struct chain *c, struct engine_call *call)
{
	c->call = call;
	call->chain = c;
	c->dispatched = 0;
	c->call_failures = 0;
	chain_advance(c);
}

void chain_cancel(struct chain *c)
{
	if (!c->call)
		return;
	if (c->dispatched) {
		chain_kill_runner(c, KILL_CANCEL); /* answered when it is gone */
		return;
	}
	{
		struct engine_call *call = c->call;
		c->call = NULL;
		call->chain = NULL;
		/* A fresh chain given to a new session or a reset holds nothing of the session:
		 * it is spare again, and a reset's session keeps its old state. */
		if (c->session && !c->holder)
			session_drop_chain(c->session, c);
		engine_fail(c->e, call, RUN_CANCELLED, "Cancelled", "The call was cancelled.");
	}
	chain_advance(c);
}

void chain_prepare(struct chain *c)
{
	chain_advance(c);
}

/* ---- timers ----------------------------------------------------------------------- */

_Static_assert(ENGINE_SOFT_AGAIN_MS < ENGINE_SOFT_KILL_GRACE_MS,
               "the deadline asks again before the kill");

static void chain_timer(struct timer *t)
{
	struct chain *c = t->data;

	if (t == &c->soft) {
		/* Ask the code to stop: TimeoutError is raised in it and what it printed comes
		 * back. Asked twice: the second is not an Exception (ENGINE_SOFT_AGAIN_MS). */
		if (c->runner && !c->runner->killed &&
		    (c->soft_asks == 0 || c->state == CH_RUNNING)) {
			(void)kill(c->runner->pid, SIGUSR1);
			if (++c->soft_asks == 1)
				timer_arm(&c->soft, now_ms() + ENGINE_SOFT_AGAIN_MS);
		}
	} else if (t == &c->hard) {
		/* Code inside a long native computation never sees the deadline's asks: what it
		 * printed is read before it goes. */
		if (c->runner && !c->runner->killed && c->state == CH_RUNNING)
			chain_salvage(c, c->runner->pid);
		chain_kill_runner(c, KILL_TIMEOUT);
	} else if (t == &c->settle) {
		if (c->runner && c->runner->parked && !c->runner->killed && c->state == CH_RESULT) {
			int n = proc_threads(c->runner->pid);
			if (n > 0)
				c->runner->threads = n;
		}
	} else if (t == &c->quota) {
		if (c->state == CH_RUNNING || c->state == CH_RESULT)
			broker_writes_watch(c);
	} else if (c->state == CH_BOOTING) {
		log_msg(LOG_WARN, "chain %u: the worker did not start within %d ms", c->id,
		        ENGINE_BOOT_MS);
		/* Not even forked: the zygote is the one stuck (a call waiting for a worker would
		 * wait for ever). */
		if (!c->runner)
			zygote_wedged(c->e, c->generation);
		chain_kill(c, KILL_DONE);
	} else if (step_state(c) && now_ms() < c->step_end) {
		step_check(c);
	} else if (c->state == CH_SNAPSHOT && now_ms() < c->step_end) {
		snapshot_check(c);
	} else if (c->state == CH_WARMING) {
		/* The new runner did not park in time: it goes, the holder stays. */
		if (c->runner)
			violation(c, c->runner, "did not park in time");
	} else if (c->state == CH_FORKING || c->state == CH_REAPING || c->state == CH_SNAPSHOT) {
		lose(c, "a process of the session did not park in time");
	}
	chain_advance(c);
	engine_kick(c->e);
}

/* ---- the state machine -------------------------------------------------------------- */

/* Before a process of the chain other than a call's runner is let run (the holder reaps or
 * forks, the newborn warms up): nothing the supervisor sent may wait for it in the channel. A
 * call not kept may leave replies unread there and in our send queue, a workspace file's fd
 * among them: a holder parked in its own code took them at the next step, and the processes
 * forked from it held the file past every later call's check (those calls were given no fd);
 * until then they held the supervisor's memory (up to the largest frame) and the file's disk.
 * Every process of the chain is parked (one thread, in the kernel) or killed here, so none
 * reads the workers' end while we drain it. A call that committed read every reply
 * (not_keepable): after it this costs one ioctl. */
static void channel_quiet(struct chain *c, const char *before)
{
	size_t dropped;

	if (c->ch.w.fd < 0 || (!c->ch.dirty && channel_unread(&c->ch) == 0))
		return;
	dropped = channel_discard(&c->ch);
	c->ch.dirty = 0;
	if (dropped)
		log_msg(LOG_DEBUG, "chain %u: %zu bytes a call left unread dropped before %s",
		        c->id, dropped, before);
}

/* A runner that failed to come up: kill it; the holder reaps it. */
#define PREP_UNFORKED "could not be forked"
static void prep_failed(struct chain *c, const char *why)
{
	c->prep_failures++;
	c->prep_unforked = strcmp(why, PREP_UNFORKED) == 0;
	if (c->call && !c->dispatched)
		c->call_failures++;
	/* Forks that fail while processes cannot be made were said once already. */
	log_msg(c->e->procs_short ? LOG_DEBUG : LOG_WARN,
	        "chain %u: the next runner %s (%d in a row)", c->id, why, c->prep_failures);
	if (c->runner)
		proc_retire(c, c->runner);
	if (c->newborn)
		proc_retire(c, c->newborn);
	chain_set_state(c, CH_REAPING);
	c->reap_sent = 0;
}

/* The runner is gone or going and the call was answered: to REAPING with a holder (the state
 * stays), or the end of the chain without one. */
static void after_call(struct chain *c)
{
	if (c->runner)
		proc_retire(c, c->runner);
	if (c->holder) {
		chain_set_state(c, CH_REAPING);
		c->reap_sent = 0;
		return;
	}
	if (c->holder_lost) {
		/* The holder died while the call ran: later calls must hear the state is gone,
		 * not run in an empty interpreter. */
		lose(c, "its process ended unexpectedly");
		return;
	}
	if (c->session)
		session_drop_chain(c->session, c);
	chain_kill(c, KILL_DONE);
}

/* The runner parked after its result: commit (it becomes the holder, or a copy of it does)
 * or roll back. */
static const char writes_over_quota[] =
    "The call wrote more to the workspace than one call may (256 MiB): no file was written.";

/* A call that cannot be kept whatever it reported: its writes over the quota (its status is
 * output_limit), files left open by its process or a reply it left unread, which would reach
 * the session's state (error). Returns the reason or NULL. */
static const char *not_keepable(struct chain *c, pid_t pid, enum run_status *st)
{
	int left;

	/* A reply left unread in the channel could carry a file past the checks below, into
	 * the next process that reads it. A worker reads every reply it asks for. */
	*st = RUN_ERROR;
	if (channel_unread(&c->ch) != 0)
		return "The call left a reply of the supervisor unread when it ended: nothing it "
		       "did "
		       "is kept.";
	/* A frame begun and not ended: the supervisor would hold what it was said to bring (up
	 * to the largest frame) for as long as the session lives. */
	if (channel_partial(&c->ch, 0))
		return "The call left a message to the supervisor unfinished when it ended: "
		       "nothing "
		       "it did is kept.";
	/* A call given no fd has none: a worker cannot make one (its only new handles are on
	 * its /dev/null), it receives fds only on the channel, and nothing the supervisor sent
	 * an earlier call outlives that call (not_keepable above, channel_quiet): its holder has
	 * none either. */
	if (c->e->ws.fd < 0 || c->fds_given == 0)
		return NULL;
	*st = RUN_OUTPUT_LIMIT;
	if (broker_writes_check(c) < 0)
		return writes_over_quota;
	*st = RUN_ERROR;
	left = proc_fds_beyond(pid, POLICY_FD_CHANNEL, c->ch.peer);
	if (left < 0)
		return "The server could not tell whether the call left files open (it is short of "
		       "memory or file descriptors): nothing the call did is kept; try it again.";
	if (left > 0)
		return "The call left files open when it ended: nothing it did is kept.";
	return NULL;
}

/* Turn the runner's report into a WorkspaceError: the call cannot be kept. */
static void claim_refused(struct chain *c, enum run_status st, const char *why)
{
	if (c->soft_asks > 0 && c->claim.status == RUN_TIMEOUT && st == RUN_ERROR) {
		/* Its deadline asked the code to stop, and it stopped: the timeout is what the
		 * call ended with (a request of a thread stopped with it left its reply unread),
		 * and why nothing is kept follows. */
		note(&c->claim, why);
	} else {
		c->claim.status = st;
		(void)text_set_str(&c->claim.error_traceback, "");
		if (text_set_str(&c->claim.error_type, "WorkspaceError") < 0 ||
		    text_set_str(&c->claim.error_message, why) < 0)
			log_msg(LOG_WARN,
			        "out of memory while refusing a call's workspace changes");
	}
	c->writes_refused = 1;
	if (c->kill == KILL_NONE)
		c->kill = KILL_DONE;
}

/* A call that ends with threads its interpreter does not know (a compiled library's pool:
 * OpenMP's, when a function is asked for more than one thread) cannot be kept: a one-thread
 * copy of its process would lack them, and the library, which believes they wait for work,
 * would wait for them for ever in the session's next call that uses it. Said after the
 * call's own error, if it raised one. The count of the interpreter's threads is the worker's
 * claim: a false one loses, or hangs, that session only. */
static void foreign_threads_refused(struct chain *c, int n)
{
	struct run_outcome *o = &c->claim;
	char why[512];

	snprintf(why, sizeof(why),
	         "The call finished, but its state could not be kept: it left %d thread%s of a "
	         "compiled library running (a pool such as OpenMP's, made when a function is asked "
	         "for more than one thread), which a later call would wait for for ever. Ask the "
	         "library for one thread (n_threads=1, n_jobs=1).%s",
	         n, n == 1 ? "" : "s",
	         c->n_writes > 0 || c->n_removals > 0 || c->n_dirs > 0
	             ? " Nothing it changed in the workspace was kept."
	             : "");
	if (o->error_type.s) {
		note(o, why);
	} else {
		o->status = RUN_ERROR;
		if (text_set_str(&o->error_type, "SessionError") < 0 ||
		    text_set_str(&o->error_traceback, "") < 0 ||
		    text_set_str(&o->error_message, why) < 0)
			log_msg(LOG_WARN, "out of memory while refusing a call's state");
	}
	if (c->kill == KILL_NONE)
		c->kill = KILL_DONE;
}

static void decide(struct chain *c)
{
	struct proc *r = c->runner;
	enum run_status st = RUN_ERROR;
	const char *refused = not_keepable(c, r->pid, &st);
	int commit;

	if (c->call)
		c->call->times.park = now_us();
	if (refused)
		claim_refused(c, st, refused);
	/* Without tracing no process could be followed from its birth: no state is kept. */
	commit = c->session && c->traced && committed(&c->claim) && c->kill == KILL_NONE;
	/* Threads the code joined may still be ending (their last steps in the C library hold
	 * its locks): a copy made now could inherit a lock held for good. Asked again a few
	 * times, 1, 2, 4, ... ms apart, before a copy is made. */
	if (commit && r->threads != 1 && c->settle_tries < ENGINE_SETTLE_TRIES) {
		timer_arm(&c->settle, now_ms() + (1 << c->settle_tries));
		c->settle_tries++;
		return;
	}
	if (commit && r->threads - 1 > c->claim.threads) {
		foreign_threads_refused(c, r->threads - 1 - c->claim.threads);
		commit = 0;
	}

	if (!commit) {
		if (r->threads == 1) {
			/* Verifiably stopped: its report stands. */
			answer_claim(c, !(c->session && !c->traced && committed(&c->claim)));
			after_call(c);
		} else {
			chain_kill_runner(c, KILL_DONE); /* answered when it is gone */
		}
		return;
	}
	c->ch.dirty = 0;
	if (r->threads == 1 && (!r->fresh || c->bound)) {
		/* The runner becomes the session's state; the old one goes (or went: a holder
		 * killed while the call ran takes nothing with it once the call committed). */
		answer_commit(c);
		if (c->holder)
			proc_retire(c, c->holder);
		r->role = ROLE_HOLDER;
		c->holder = r;
		c->holder_lost = 0;
		c->runner = NULL;
		c->prep_failures = 0;
		c->commits++;
		chain_set_state(c, CH_PARKED);
		return;
	}
	/* A fresh worker with a parent-death signal (it dies with the zygote) or a runner with
	 * threads: its one-thread copy becomes the state, and the call is answered when the copy
	 * has parked. The copy returns from the fork wherever the runner forked: after a forged
	 * result, in the call's own code. Answered before, its code would run on without the
	 * call's deadline or its worker slot. */
	c->snap_answer = 1;
	c->newborn_gone = 0;
	c->copy_gone = 0;
	chain_set_state(c, CH_SNAPSHOT);
	if (gate_continue(c, r) < 0)
		chain_kill_runner(c, KILL_DONE);
}

static void advance_booting(struct chain *c)
{
	if (c->runner_gone) {
		answer_verdict(c, 1, c->runner_status, &c->runner_last);
		chain_kill(c, KILL_DONE);
		return;
	}
	if (c->runner && c->got_listener && c->got_ready && c->runner->parked) {
		timer_cancel(&c->step);
		chain_set_state(c, CH_IDLE);
	}
}

static void advance_idle(struct chain *c)
{
	if (c->holder_lost) {
		lose(c, "its process ended unexpectedly");
		return;
	}
	if (c->runner_gone) {
		if (c->holder) {
			prep_failed(c, "ended while idle");
		} else {
			chain_kill(c, KILL_DONE);
		}
		return;
	}
	if (c->call && !c->dispatched && c->runner && c->runner->parked)
		dispatch(c);
}

static void advance_running(struct chain *c)
{
	if (c->runner_gone) {
		if (c->kill == KILL_DONE && c->have_claim)
			answer_claim(c, 1); /* a runner with threads, killed after its report */
		else
			answer_verdict(c, 1, c->runner_status, &c->runner_last);
		after_call(c);
		return;
	}
	if (c->state == CH_RUNNING && c->have_claim)
		chain_set_state(c, CH_RESULT);
	if (c->state == CH_RESULT && c->runner && c->runner->parked && !c->runner->killed)
		decide(c);
}

/* The runner asked for its copy is back without one: the fork failed (its tasks are at their
 * bound, or the machine has no more). */
static void snapshot_failed(struct chain *c)
{
	struct proc *r = c->runner;
	enum run_status st = RUN_ERROR;
	const char *why;

	if (r->threads == 1) {
		/* Alone in its process: it keeps the state itself, once what its threads did after
		 * the checks (writes they had in flight into files it had closed) is checked again:
		 * they are gone, their writes done. */
		if (c->snap_answer && (why = not_keepable(c, r->pid, &st)) != NULL) {
			claim_refused(c, st, why);
			c->snap_answer = 0;
			answer_claim(c, 1);
			after_call(c);
			return;
		}
		if (c->snap_answer)
			answer_commit(c);
		c->snap_answer = 0;
		r->role = ROLE_HOLDER;
		c->holder = r;
		c->holder_lost = 0;
		c->runner = NULL;
		c->commits++;
		chain_set_state(c, CH_PARKED);
		return;
	}
	if (c->snap_answer) {
		struct run_outcome o = c->claim;

		/* The call ran, but its state cannot be kept: say so, with what it printed and the
		 * error the code ended with (a thread bomb's "can't start new thread"). */
		struct text ended = {0};

		run_outcome_init(&c->claim);
		c->have_claim = 0;
		c->snap_answer = 0;
		if (o.status == RUN_ERROR && o.error_type.len > 0 && o.error_message.len > 0)
			(void)text_printf(&ended, "The code ended with %s: %s, and its",
			                  o.error_type.s, o.error_message.s);
		else if (o.status == RUN_ERROR && o.error_type.len > 0)
			(void)text_printf(&ended, "The code ended with %s, and its",
			                  o.error_type.s);
		(void)text_set_str(&o.error_traceback, "");
		(void)text_set_str(&o.error_type, "SessionError");
		(void)text_printf(
		    &o.error_message,
		    "%s state could not be kept: %d threads were still running when it "
		    "ended, and no one-thread copy of its process could be made (a "
		    "session's processes and threads are limited to %d).",
		    ended.s ? ended.s : "The call finished, but its", r->threads,
		    ENGINE_CGROUP_PIDS);
		text_clear(&ended);
		o.status = RUN_ERROR;
		answer(c, &o, 1);
		after_call(c);
		return;
	}
	lose(c, "its state could not be copied");
}

static void advance_snapshot(struct chain *c)
{
	struct proc *n = c->newborn;

	if (n && n->parked && c->e->ws.fd >= 0 && c->fds_given > 0 &&
	    proc_fds_beyond(n->pid, POLICY_FD_CHANNEL, c->ch.peer) != 0) {
		/* Files opened after the runner parked reached its copy: it cannot be kept. */
		proc_kill(n);
		n->parked = 0;
		return;
	}
	if (n && c->snap_answer && c->kill != KILL_NONE) {
		/* The call's deadline passed (or it was cancelled) while its copy was made: nothing
		 * of it is kept, and the copy goes now; the verdict is said once it is gone. */
		proc_kill(n);
		return;
	}
	if (n && n->parked && c->snap_answer && c->runner) {
		/* The runner's threads may still be writing into files it closed (a write in flight
		 * keeps its file): it goes first, and the call's files are checked and kept once it
		 * is gone (its exit brings the chain back here). */
		proc_kill(c->runner);
		return;
	}
	if (n && n->parked && c->snap_answer) {
		if (c->e->ws.fd >= 0 && c->fds_given > 0 && broker_writes_check(c) < 0) {
			claim_refused(c, RUN_OUTPUT_LIMIT, writes_over_quota);
			c->snap_answer = 0;
			proc_retire(c, n);
			answer_claim(c, 1);
			after_call(c);
			return;
		}
	}
	if (n && n->parked) {
		/* The copy is the session's state now. */
		if (c->snap_answer)
			answer_commit(c);
		c->snap_answer = 0;
		if (c->runner)
			proc_retire(c, c->runner);
		if (c->holder)
			proc_retire(c, c->holder);
		n->role = ROLE_HOLDER;
		c->holder = n;
		c->holder_lost = 0;
		c->newborn = NULL;
		c->prep_failures = 0;
		c->commits++;
		chain_set_state(c, CH_PARKED);
		return;
	}
	if (!n && !c->newborn_gone && c->runner && c->runner->parked) {
		snapshot_failed(c);
		return;
	}
	if (!n && (c->runner_gone || c->newborn_gone)) {
		/* No copy: the call's state is not kept. */
		if (c->snap_answer) {
			c->snap_answer = 0;
			/* The runner was killed because its copy existed: how the copy ended (an
			 * exit, a crash, the sandbox's kill) is what happened to the call, not the
			 * supervisor's SIGKILL ("killed from outside"). */
			int killed =
			    c->runner ? c->runner->killed : c->runner_gone && c->runner_last.killed;
			if (c->copy_gone && killed && c->kill == KILL_NONE)
				answer_verdict(c, 1, c->copy_status, &c->copy_last);
			else
				answer_verdict(c, c->runner_gone, c->runner_status,
				               &c->runner_last);
			after_call(c);
		} else {
			lose(c, "its state could not be copied");
		}
	}
}

static void advance_parked(struct chain *c)
{
	struct proc *h = c->holder;

	if (c->holder_lost || !h) {
		lose(c, "its process ended unexpectedly");
		return;
	}
	if (!h->parked || !c->traced)
		return;
	if (c->call && !c->dispatched && c->call_failures >= ENGINE_PREP_FAILURES_MAX) {
		/* Its state stays; the call cannot run in it now. Forks that failed ran into a
		 * limit on processes; processes forked that ended before they parked did not (the
		 * session's own code may end them: no limit is blamed). */
		if (c->prep_unforked)
			fail_no_process(c, "the session's process could not fork the one to run it",
			                EAGAIN, 1);
		else
			fail_no_process(
			    c,
			    "the processes the session's process forked to run it ended "
			    "before they were ready",
			    0, 1);
		return;
	}
	/* The next call's process is forked ahead of it only for a session in use: one whose
	 * state was kept twice. A session started for one call (session "new") costs one fork
	 * less; its next call, if any, waits for the fork. */
	if (c->call || (c->commits >= 2 && c->prep_failures < ENGINE_PREP_FAILURES_MAX)) {
		c->newborn_gone = 0;
		channel_quiet(c, "the fork");
		chain_set_state(c, CH_FORKING);
		step_start(h);
		if (gate_continue(c, h) < 0)
			lose(c, "its process could not fork");
	}
}

static void advance_forking(struct chain *c)
{
	struct proc *n = c->newborn;

	if (c->holder_lost || !c->holder) {
		lose(c, "its process ended unexpectedly");
		return;
	}
	if (c->newborn_gone) {
		prep_failed(c, "ended before it parked");
		return;
	}
	/* The holder parks again too before anything goes on: the fork returned into it, and
	 * no process of a chain runs unwatched (a park forged from a call's own code would
	 * otherwise leave its holder running user code outside any call). */
	if (n && n->parked && c->holder->parked) {
		n->role = ROLE_RUNNER;
		c->runner = n;
		c->newborn = NULL;
		c->runner_gone = 0;
		if (c->call && !c->dispatched) {
			dispatch(c); /* a call is waiting: no warm-up */
			return;
		}
		channel_quiet(c, "the warm-up");
		chain_set_state(c, CH_WARMING);
		step_start(n);
		if (gate_command(c, n, IPC_PARK_WARM, 0) < 0)
			prep_failed(c, "could not be warmed up");
		return;
	}
	if (!n && c->holder->parked) {
		/* The holder is back without a child: the fork failed (its errno stays in the
		 * holder: a limit on processes, or no memory for one). That is the session's own
		 * matter until the zygote finds the same: its bound on tasks counts what its own
		 * processes left unreaped, and a session's process may say anything. */
		prep_failed(c, PREP_UNFORKED);
	}
}

static void advance_warming(struct chain *c)
{
	if (c->holder_lost || !c->holder) {
		lose(c, "its process ended unexpectedly");
		return;
	}
	if (c->runner_gone) {
		prep_failed(c, "ended while warming up");
		return;
	}
	if (c->runner && c->runner->parked) {
		c->prep_failures = 0;
		chain_set_state(c, CH_IDLE);
		if (c->call && !c->dispatched)
			dispatch(c);
	}
}

static void advance_reaping(struct chain *c)
{
	struct proc *h = c->holder;

	if (c->holder_lost || !h) {
		lose(c, "its process ended unexpectedly");
		return;
	}
	/* Its runner (or newborn) must be gone before the holder can reap it. */
	if (c->runner || c->newborn || !h->parked)
		return;
	for (int i = 0; i < CHAIN_PROCS; i++)
		if (c->procs[i].pid && c->procs[i].role == ROLE_GONE)
			return;
	if (!c->reap_sent) {
		/* The call's runner is gone: what it left unread goes now, not at the session's
		 * next call (the holder runs first). */
		channel_quiet(c, "the reap");
		c->reap_sent = 1;
		step_start(h);
		if (gate_command(c, h, IPC_PARK_REAP, 0) < 0)
			lose(c, "its process could not reap");
		return;
	}
	chain_set_state(c, CH_PARKED);
}

static void chain_advance(struct chain *c)
{
	enum chain_state before;

	do {
		before = c->state;
		switch (c->state) {
		case CH_BOOTING:
			advance_booting(c);
			break;
		case CH_IDLE:
			advance_idle(c);
			break;
		case CH_RUNNING:
		case CH_RESULT:
			advance_running(c);
			break;
		case CH_SNAPSHOT:
			advance_snapshot(c);
			break;
		case CH_PARKED:
			advance_parked(c);
			break;
		case CH_FORKING:
			advance_forking(c);
			break;
		case CH_WARMING:
			advance_warming(c);
			break;
		case CH_REAPING:
			advance_reaping(c);
			break;
		case CH_DEAD:
		case CH_NSTATES:
			break;
		}
	} while (c->state != before && c->state != CH_DEAD);
	engine_kick(c->e);
}

/* ---- freeing ------------------------------------------------------------------------ */

void chain_free(struct chain *c)
{
	struct engine *e = c->e;

	TAILQ_REMOVE(&e->chains, c, link);
	timer_cancel(&c->soft);
	timer_cancel(&c->hard);
	timer_cancel(&c->step);
	timer_cancel(&c->quota);
	timer_cancel(&c->settle);
	channel_close(&c->ch);
	gate_close(c);
	if (c->has_cg) {
		(void)cgroup_worker_kill(&c->cg);
		if (cgroup_worker_remove(e->cfg->cgroup, &c->cg) < 0)
			log_msg(LOG_DEBUG, "cgroup %s not removed yet", c->cg.name);
	}
	broker_writes_drop(c);
	run_outcome_clear(&c->claim);
	salvage_clear(c);
	free(c);
}
