/* harness.c - the plumbing the end-to-end suites share: the server under test, what a test
 * keeps until it ends, and calls that assert what came back. Failures end the test through
 * Criterion's assertions; nothing here returns an error. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define MAX_PROCS 256

struct mcpc e2e_srv;

static json_object **held;
static size_t nheld, held_cap;
static char **strs;
static size_t nstrs, strs_cap;
static char *(*log_source)(void);

/* Append p to a growing array of pointers. */
static void keep(void ***arr, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void **na = realloc(*arr, ncap * sizeof(*na));

		cr_assert_not_null(na, "out of memory");
		*arr = na;
		*cap = ncap;
	}
	(*arr)[(*n)++] = p;
}

json_object *e2e_hold(json_object *o)
{
	if (o)
		keep((void ***)&held, &nheld, &held_cap, o);
	return o;
}

const char *e2e_fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	cr_assert_geq(n, 0, "vasprintf failed");
	keep((void ***)&strs, &nstrs, &strs_cap, s);
	return s;
}

void e2e_release(void)
{
	for (size_t i = 0; i < nheld; i++)
		json_object_put(held[i]);
	nheld = 0;
	for (size_t i = 0; i < nstrs; i++)
		free(strs[i]);
	nstrs = 0;
}

void e2e_cleanup(void)
{
	if (e2e_srv.stderr_path[0])
		mcpc_free(&e2e_srv);
	e2e_release();
}

void e2e_log_from(char *(*source)(void))
{
	log_source = source;
}

const char *e2e_log(void)
{
	static char tail[3000];
	char *s = log_source ? log_source() : mcpc_stderr(&e2e_srv);
	size_t n = s ? strlen(s) : 0;

	snprintf(tail, sizeof(tail), "%s",
	         !s                     ? ""
	         : n > sizeof(tail) - 1 ? s + n - (sizeof(tail) - 1)
	                                : s);
	free(s);
	return tail;
}

/* args followed by the words of SAFEPY_TEST_EXTRA_ARGS (CTest runs a suite once more with
 * them: the kernel layer's escape tests with --imports data). Held until e2e_release; args
 * itself when there are none. */
static const char *const *with_extra_args(const char *const *args)
{
	const char *extra = getenv("SAFEPY_TEST_EXTRA_ARGS");
	const char **out;
	char *words, *save = NULL;
	size_t n = 0, k = 0;

	if (!extra || !*extra)
		return args;
	while (args && args[n])
		n++;
	out = calloc(n + strlen(extra) / 2 + 2, sizeof(*out));
	words = strdup(extra);
	cr_assert(out && words);
	for (; k < n; k++)
		out[k] = args[k];
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
		out[k++] = e2e_fmt("%s", w);
	free(words);
	keep((void ***)&strs, &nstrs, &strs_cap, (void *)out);
	return out;
}

void e2e_open(struct mcpc *c, const char *bin, const char *const *args, const char *const *env,
              const char *version)
{
	json_object *r;

	args = with_extra_args(args);
	cr_assert_eq(mcpc_start(c, bin, args, env), 0, "cannot start %s", bin);
	r = e2e_hold(mcpc_initialize(c, version));
	cr_assert_not_null(r, "no answer to initialize; log:\n%s", e2e_log());
	cr_assert_not_null(mcpc_result(r), "initialize failed: %s", mcpc_json(r));
}

void e2e_start(const char *const *args)
{
	e2e_start_with("2025-11-25", args, NULL);
}

void e2e_start_with(const char *version, const char *const *args, const char *const *env)
{
	e2e_open(&e2e_srv, SAFEPY_BIN, args, env, version);
}

void e2e_finish(struct mcpc *c, int ms)
{
	cr_assert(mcpc_alive(c), "the server died during the test (status 0x%x); log:\n%s",
	          c->status, e2e_log());
	mcpc_close_stdin(c);
	cr_assert_eq(mcpc_wait_exit(c, ms), 0, "the server was still running %d ms after EOF", ms);
	cr_assert(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0,
	          "the server ended with status 0x%x after EOF; log:\n%s", c->status, e2e_log());
	cr_assert_eq(c->bad_lines, 0, "%u stdout line(s) were not JSON-RPC, first: %s",
	             c->bad_lines, c->first_bad);
	/* Every test that ends here checks the supervisor's own filter: nothing it did was
	 * refused. */
	{
		char *log = mcpc_stderr(c);
		const char *hit = log ? strstr(log, "own filter refused") : NULL;
		char line[160] = "";

		if (hit)
			snprintf(line, sizeof(line), "%.*s", (int)strcspn(hit, "\n"), hit);
		free(log);
		cr_assert(!hit, "the supervisor's own filter refused a call it made: %s", line);
	}
}

void e2e_stop(void)
{
	e2e_finish(&e2e_srv, 3000);
	mcpc_free(&e2e_srv);
	e2e_release();
}

json_object *e2e_member(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

int e2e_is_error(json_object *resp)
{
	return json_object_get_boolean(e2e_member(mcpc_result(resp), "isError"));
}

json_object *e2e_call_on(struct mcpc *c, const char *code, const char *extra, int ms)
{
	json_object *r = e2e_hold(mcpc_call(c, code, extra, ms));

	cr_assert_not_null(r, "no response within %d ms to:\n%s\nlog:\n%s", ms, code, e2e_log());
	cr_assert_not_null(mcpc_result(r), "JSON-RPC error for:\n%s\n%s", code, mcpc_json(r));
	cr_assert_not_null(mcpc_structured(r), "no structuredContent: %s", mcpc_json(r));
	return r;
}

json_object *e2e_call(const char *code, const char *extra)
{
	return e2e_call_on(&e2e_srv, code, extra, E2E_CALL_MS);
}

json_object *e2e_expect_status(const char *code, const char *extra, const char *status)
{
	json_object *r = e2e_call(code, extra);

	cr_assert_str_eq(mcpc_status(r), status, "status for:\n%s\n%s", code, mcpc_json(r));
	cr_assert_eq(e2e_is_error(r), strcmp(status, "ok") != 0,
	             "isError does not match the status: %s", mcpc_json(r));
	return r;
}

json_object *e2e_ok(const char *code)
{
	return e2e_expect_status(code, NULL, "ok");
}

void e2e_assert_result(json_object *r, const char *code, const char *json)
{
	json_object *want = json_tokener_parse(json);
	json_object *got = e2e_member(mcpc_structured(r), "result");
	int same;

	/* A result that is not JSON would compare equal to a missing one. */
	cr_assert(want || strcmp(json, "null") == 0, "the expected result is not JSON: %s", json);
	same = json_object_equal(got, want);

	json_object_put(want);
	cr_assert(same, "code:\n%s\nresult %s, want %s\n%s", code, mcpc_json(got), json,
	          mcpc_json(r));
}

void e2e_expect_result(const char *code, const char *json)
{
	e2e_assert_result(e2e_ok(code), code, json);
}

json_object *e2e_expect_error(const char *code, const char *type)
{
	json_object *r = e2e_expect_status(code, NULL, "error");

	cr_assert_str_eq(mcpc_err_str(r, "type"), type, "error type for:\n%s\n%s", code,
	                 mcpc_json(r));
	return r;
}

const struct e2e_refusal E2E_DUNDER = {"error", "AttributeError",
                                       "Forbidden access to dunder attribute: "};
const struct e2e_refusal E2E_INTERNAL = {"error", "AttributeError",
                                         "Forbidden access to attribute: "};
const struct e2e_refusal E2E_IMPORT = {"error", "ModuleNotFoundError",
                                       " is not allowed. Authorized imports are: "};
const struct e2e_refusal E2E_EACCES = {"error", "PermissionError", "[Errno 13] Permission denied"};
const struct e2e_refusal E2E_EPERM = {"error", "PermissionError",
                                      "[Errno 1] Operation not permitted"};

/* Does msg name one of the syscalls in names ("a|b"), as 'a'? */
static int names_syscall(const char *msg, const char *names)
{
	const char *n = names;

	for (;;) {
		size_t len = strcspn(n, "|");
		char quoted[64];

		if (len + 3 <= sizeof(quoted)) {
			snprintf(quoted, sizeof(quoted), "'%.*s'", (int)len, n);
			if (strstr(msg, quoted))
				return 1;
		}
		if (!n[len])
			return 0;
		n += len + 1;
	}
}

const char *e2e_refusal_mismatch(json_object *r, const struct e2e_refusal *want)
{
	const char *status = mcpc_status(r), *type = mcpc_err_str(r, "type");
	const char *msg = mcpc_err_str(r, "message");

	if (strcmp(status, want->status) != 0)
		return e2e_fmt("status %s, want %s", status, want->status);
	if (!e2e_is_error(r))
		return e2e_fmt("isError is not set");
	if (want->type && strcmp(type, want->type) != 0)
		return e2e_fmt("%s, want %s", type, want->type);
	if (!want->message)
		return NULL;
	if (!strcmp(want->status, "sandbox_violation") ? !names_syscall(msg, want->message)
	                                               : !strstr(msg, want->message))
		return e2e_fmt("the message does not say \"%s\": %s", want->message, msg);
	return NULL;
}

void e2e_cancel(int64_t id)
{
	char line[160];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
	         "{\"requestId\":%lld,\"reason\":\"test\"}}",
	         (long long)id);
	cr_assert_eq(mcpc_send(&e2e_srv, line), 0, "cannot send the cancellation");
}

int e2e_seen(int64_t id, int ms)
{
	json_object *jid = json_object_new_int64(id);
	int r = mcpc_seen_id(&e2e_srv, jid, ms);

	json_object_put(jid);
	return r;
}

/* Is pid the zygote starter: the one process of the server's tree that is a fork of the
 * supervisor itself (same name, no exec)? */
static int is_starter(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return strcmp(comm, "safepy\n") == 0;
}

static int all_descendants(struct mcpc_proc *p, int max)
{
	int n = mcpc_descendants(e2e_srv.pid, p, max);

	if (n == -ENOENT)
		cr_skip_test("process tracking needs /proc/PID/task/TID/children "
		             "(CONFIG_PROC_CHILDREN), which this kernel lacks");
	cr_assert_geq(n, 0, "cannot list the server's processes: %s", strerror(-n));
	return n;
}

int e2e_descendants(struct mcpc_proc *p, int max)
{
	int n = all_descendants(p, max), k = 0;

	for (int i = 0; i < n; i++)
		if (!is_starter(p[i].pid))
			p[k++] = p[i];
	return k;
}

pid_t e2e_starter(void)
{
	struct mcpc_proc p[MAX_PROCS];
	int n = all_descendants(p, MAX_PROCS);

	for (int i = 0; i < n; i++)
		if (is_starter(p[i].pid))
			return p[i].pid;
	return 0;
}

long e2e_proc_status(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

int e2e_is_unsandboxed(pid_t pid)
{
	return e2e_proc_status(pid, "Seccomp") == 0;
}

void e2e_save_log(const char *env)
{
	const char *path = getenv(env);
	char *log;
	FILE *f;

	if (!path || !(f = fopen(path, "we")))
		return;
	log = mcpc_stderr(&e2e_srv);
	fputs(log, f);
	fclose(f);
	free(log);
}

pid_t e2e_zygote(void)
{
	struct mcpc_proc p[MAX_PROCS];
	int n = e2e_descendants(p, MAX_PROCS);

	for (int i = 0; i < n; i++)
		if (e2e_is_unsandboxed(p[i].pid))
			return p[i].pid;
	return 0;
}

int e2e_settle_descendants(int n, int ms)
{
	struct mcpc_proc p[MAX_PROCS];
	int64_t deadline = mcpc_now_ms() + ms;
	int k;

	while ((k = e2e_descendants(p, MAX_PROCS)) > n && mcpc_now_ms() < deadline)
		usleep(20000);
	return k;
}

int e2e_steady_descendants(int ms)
{
	struct mcpc_proc p[MAX_PROCS];
	int64_t deadline = mcpc_now_ms() + ms, since = mcpc_now_ms();
	int k = e2e_descendants(p, MAX_PROCS);

	while (mcpc_now_ms() < deadline && mcpc_now_ms() - since < 300) {
		int now;

		usleep(20000);
		now = e2e_descendants(p, MAX_PROCS);
		if (now != k) {
			k = now;
			since = mcpc_now_ms();
		}
	}
	return k;
}
