/* doctor.c - `safepy doctor`: starts the real zygote, runs a canary call through a real
 * worker and prints each sandbox layer as active, unavailable or failed, with the reason.
 * Exit status 0 when code can run (seccomp and no_new_privs active, canary ok), else 1. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "policy.h"
#include "supervisor.h"

static struct {
	struct engine *engine;
	int finished;
	struct run_outcome out;
} D;

static void done(struct engine_call *c, struct run_outcome *o)
{
	D.out = *o;
	run_outcome_init(o); /* ownership moves to D.out */
	D.finished = 1;
}

static void sig_event(struct watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	/* One signal a turn (the watch is level-triggered): SIGCHLD comes again and again while
	 * traced threads fault, and reading on would keep the loop here. */
	if (read(w->fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	if (si.ssi_signo == SIGCHLD)
		engine_sigchld(D.engine);
	else
		D.finished = -1;
}

static const char *layer_field(json_object *layers, const char *name, const char *field)
{
	json_object *l, *f;

	if (!layers || !json_object_object_get_ex(layers, name, &l) ||
	    !json_object_object_get_ex(l, field, &f))
		return NULL;
	return json_object_get_string(f);
}

/* One of the worker's filters, under its heading, as libseccomp's PFC text. */
static int show_filter(const char *what, const char *heading, int (*build)(struct policy **))
{
	struct policy *p = NULL;
	int rc = build(&p);

	if (rc == 0) {
		printf("%s", heading);
		fflush(stdout);
		rc = policy_export_pfc(p, STDOUT_FILENO);
	}
	if (rc < 0)
		fprintf(stderr, "safepy: %s: %s\n", what, strerror(-rc));
	policy_free(p);
	return rc;
}

/* `safepy doctor --policy`: the filters every worker loads, in the order it loads them (the
 * zygote builds them in zygote_main, the worker loads them in sandbox_enter). */
static int show_policy(void)
{
	printf(
	    "# safepy %s: the two seccomp filters every worker loads, in this order. The kernel\n"
	    "# runs both on each syscall and takes the first action in seccomp's precedence\n"
	    "# (kill, then errno, then the gate's question to the supervisor, then allow).\n",
	    SAFEPY_VERSION);
	if (show_filter("building the fork gate",
	                "#\n# ==== 1 of 2: the fork gate (policy_gate_build), loaded first ====\n"
	                "# Every clone that does not make a thread waits for the supervisor's "
	                "answer:\n# action 0x7fc00000 is SECCOMP_RET_USER_NOTIF.\n",
	                policy_gate_build) < 0)
		return 1;
	if (show_filter("building the worker policy",
	                "#\n# ==== 2 of 2: the worker policy (policy_build_session), loaded last "
	                "====\n# The default-deny allowlist, with the fork and wait4 a session's "
	                "parked process needs.\n",
	                policy_build_session) < 0)
		return 1;
	if (show_filter(
	        "building the supervisor's own policy",
	        "#\n# ==== and the supervisor's own filter (policy_build_self) ====\n"
	        "# Loaded by safepy itself once start-up is done; a call it does not list "
	        "raises\n# SIGSYS (action 0x00030000), answered with EPERM and a log line.\n",
	        policy_build_self) < 0)
		return 1;
	return 0;
}

/* A field of /proc/self/status ("Seccomp", "NoNewPrivs"), or -1. */
static int self_status(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	int v = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':' &&
		    sscanf(line + n + 1, "%d", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The supervisor's own sandbox, as the kernel reports it and as confine.c set it up. */
static int show_self(const struct engine *e)
{
	const struct confine_report *r = engine_confinement(e);
	int seccomp = self_status("Seccomp"), nnp = self_status("NoNewPrivs");
	int ok = nnp == 1 && (seccomp == 2 || r->seccomp_rows == 0);

	printf("%-16s %-12s Seccomp %d, NoNewPrivs %d (/proc/self/status); %s\n", "supervisor",
	       ok ? "confined" : "NOT confined", seccomp, nnp, r->detail);
	return ok;
}

/* Run code in a fresh worker and wait for its outcome (into D.out). */
static void doctor_run(const char *code)
{
	static struct engine_call call;

	memset(&call, 0, sizeof(call));
	run_outcome_clear(&D.out);
	D.finished = 0;
	call.code = code;
	call.code_len = strlen(code);
	call.done = done;
	engine_submit(D.engine, &call);
	while (!D.finished)
		if (loop_run_once(-1) < 0)
			break;
}

/* The allowed packages (config_import_is_package) and their versions, imported as a call
 * imports them: "numpy 1.24.2", or why it cannot be imported. */
static void show_packages(const struct config *cfg)
{
	struct strbuf b = {0};
	size_t n = 0;

	sb_str(&b, "_r = []\n");
	for (size_t i = 0; i < cfg->n_imports; i++) {
		const char *m = cfg->imports[i];
		if (!config_import_is_package(m))
			continue;
		n++;
		sb_printf(&b,
		          "try:\n    import %s\n    _r.append('%s ' + str(getattr(%s, "
		          "'__version__', '(no version)')))\n"
		          "except Exception as e:\n    _r.append('%s: ' + str(e))\n",
		          m, m, m, m);
	}
	sb_str(&b, "print('\\n'.join(_r))\n");
	if (n == 0 || b.failed) {
		free(sb_take(&b));
		return;
	}
	char *code = sb_take(&b);
	doctor_run(code);
	printf("packages:\n");
	if (D.finished == 1 && D.out.status == RUN_OK && D.out.stdout_text.s) {
		for (char *line = strtok(D.out.stdout_text.s, "\n"); line;
		     line = strtok(NULL, "\n"))
			printf("  %s\n", line);
	} else {
		printf("  could not be listed: %s\n",
		       D.out.error_message.s ? D.out.error_message.s : "no outcome");
	}
	free(code);
}

int doctor_main(const struct config *cfg, const char *zygote_exe)
{
	static const char *const order[] = {
	    "seccomp",  "no_new_privs", "capabilities", "rlimits",    "fds",
	    "setsid",   "pdeathsig",    "uid",          "namespaces", "tasks",
	    "landlock", "fork_gate",    NULL,
	};
	struct engine_call call = {0};
	struct watch sig;
	json_object *layers = NULL;
	const char *code = "import sys\nsys.version";
	char why[640];
	int sfd, ok = 1, rc;
	int64_t t0;

	if (cfg->show_policy)
		return show_policy();
	memset(&D, 0, sizeof(D));
	run_outcome_init(&D.out);
	sfd = signals_block();
	if (sfd < 0 || loop_init() < 0)
		return 1;
	rc = engine_new(cfg, zygote_exe, &D.engine);
	if (rc < 0) {
		printf("zygote          failed     %s\n", strerror(-rc));
		return 1;
	}
	sig = (struct watch){.fd = sfd, .fn = sig_event};
	loop_add(&sig, EPOLLIN);
	rc = engine_start_wait(D.engine, &D.finished, why, sizeof(why));
	if (rc <= 0) {
		if (rc < 0) {
			printf("zygote          failed     %s\n", why);
			fprintf(stderr, "safepy: %s\n", why);
		}
		engine_free(D.engine);
		return rc == -EINVAL ? 2 : 1;
	}
	if (cfg->imports_seed)
		code = "1 + 1";
	/* With a workspace the canary lists it: the broker answers too. */
	if (cfg->workspace)
		code = "import os\nlen(os.listdir())";
	call.code = code;
	call.code_len = strlen(code);
	call.done = done;
	t0 = now_ms();
	engine_submit(D.engine, &call);
	while (!D.finished) {
		if (loop_run_once(-1) < 0)
			break;
	}
	printf("safepy %s doctor\n\n", SAFEPY_VERSION);
	if (engine_layers(D.engine))
		layers = json_tokener_parse(engine_layers(D.engine));
	printf("%-16s %-12s %s\n", "layer", "state", "detail");
	for (const char *const *n = order; *n; n++) {
		const char *st = layer_field(layers, *n, "state");
		const char *detail = layer_field(layers, *n, "detail");
		const char *err = layer_field(layers, *n, "errno");
		printf("%-16s %-12s %s%s%s\n", *n, st ? st : "unknown", detail ? detail : "",
		       err ? (detail && *detail ? "; " : "") : "", err ? err : "");
		if ((strcmp(*n, "seccomp") == 0 || strcmp(*n, "no_new_privs") == 0 ||
		     strcmp(*n, "fork_gate") == 0) &&
		    (!st || strcmp(st, "active") != 0))
			ok = 0;
	}
	switch (engine_can_name_syscalls(D.engine)) {
	case 1:
		printf("%-16s %-12s %s\n", "syscall report", "active",
		       "ptrace exit stop names a killed syscall");
		break;
	case 0:
		printf("%-16s %-12s %s\n", "syscall report", "unavailable",
		       "cannot ptrace workers (Yama ptrace_scope?); violations are reported "
		       "without the syscall name");
		break;
	default:
		printf("%-16s %-12s\n", "syscall report", "unknown");
	}
	if (cfg->cgroup && cfg->cgroup->state == CGROUP_ACTIVE)
		printf("%-16s %-12s %s\n", "cgroups", "active", cfg->cgroup->reason);
	else
		printf("%-16s %-12s %s; rlimits remain\n", "cgroups",
		       cfg->cgroup && cfg->cgroup->state == CGROUP_FAILED ? "failed"
		                                                          : "unavailable",
		       cfg->cgroup ? cfg->cgroup->reason : "no delegated cgroup");
	show_self(D.engine);
	printf("%-16s %-12s %s\n", "python layer", cfg->unsafe_no_python_layer ? "OFF" : "active",
	       cfg->unsafe_no_python_layer ? "--unsafe-no-python-layer (testing only)"
	                                   : "import allowlist, curated builtins, attribute "
	                                     "rules, audit hook");
	printf("\nlimits: %g s wall clock, %u s CPU, %llu MiB memory, %zu bytes per stream, "
	       "%u workers\n",
	       cfg->timeout_s, cfg->cpu_s, (unsigned long long)(cfg->memory >> 20), cfg->max_output,
	       cfg->max_workers);
	printf("imports:");
	for (size_t i = 0; i < cfg->n_imports; i++)
		printf(" %s", cfg->imports[i]);
	printf("\n");
	if (cfg->workspace)
		printf("workspace:      %s (%s)%s%s\n", cfg->workspace,
		       cfg->workspace_write
		           ? "read-write: a call's files are moved into place when "
		             "it completes"
		           : "read-only",
		       D.finished == 1 && D.out.status == RUN_OK ? "; entries the canary listed: "
		                                                 : "",
		       D.finished == 1 && D.out.status == RUN_OK && D.out.result_repr.s
		           ? D.out.result_repr.s
		           : "");
	else
		printf(
		    "workspace:      none (no file can be reached; --workspace DIR gives one)\n");
	if (D.finished == 1 && D.out.status == RUN_OK) {
		printf("canary call:    ok in %lld ms (%.*s)\n", (long long)(now_ms() - t0),
		       (int)D.out.result_repr.len, D.out.result_repr.s ? D.out.result_repr.s : "");
	} else {
		ok = 0;
		printf("canary call:    FAILED: %s: %s\n",
		       D.out.error_type.s ? D.out.error_type.s : "?",
		       D.out.error_message.s ? D.out.error_message.s : "no outcome");
	}
	if (ok)
		show_packages(cfg);
	printf("\n%s\n", ok ? "verdict: safepy can run code here."
	                    : "verdict: safepy will NOT run code here (seccomp and no_new_privs "
	                      "are required).");
	json_object_put(layers);
	run_outcome_clear(&D.out);
	engine_free(D.engine);
	return ok ? 0 : 1;
}
