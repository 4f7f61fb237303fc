/* test_team.c - the team box: safepy behind real socket activation (systemd-socket-activate
 * --accept --inetd, which hands each connection to a new `safepy serve` as stdin/stdout, as
 * StandardInput=socket does), `safepy connect` as the client's stdio, the SO_PEERCRED log,
 * and the socket's group permission model. Each test starts its own activator. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "supervisor.h"

static void cleanup(void);

TestSuite(team, .timeout = 120, .fini = cleanup);
TestSuite(connect, .timeout = 60, .fini = cleanup);
TestSuite(peer, .timeout = 30);

/* ---- Harness ------------------------------------------------------------------------------ */

static char dir[64];      /* scratch directory, "" when none */
static char sock[128];    /* the activator's listening socket */
static char logpath[128]; /* the activator's and the servers' stderr */
static pid_t activator = -1;
static struct mcpc cli[2];

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		for (;;) {
			ssize_t n;
			if (cap - len < 4096) {
				char *nb = realloc(buf, cap + 65536);
				if (!nb)
					break;
				buf = nb;
				cap += 65536;
			}
			n = read(fd, buf + len, cap - len - 1);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(fd);
	}
	if (!buf)
		return strdup("");
	buf[len] = '\0';
	return buf;
}

/* The activator's log (malloc'd). */
static char *activator_log(void)
{
	return logpath[0] ? slurp(logpath) : strdup("");
}

/* The pids of the servers the activator spawned, from its "Spawned ... as PID n." lines. */
static int spawned_pids(pid_t *out, int max)
{
	char *log = activator_log(), *p = log;
	int n = 0;

	while (n < max && (p = strstr(p, "Spawned ")) != NULL) {
		char *as = strstr(p, " as PID ");
		char *eol = strchr(p, '\n');
		if (!as || (eol && as > eol))
			break;
		out[n++] = (pid_t)strtol(as + 8, NULL, 10);
		p = as + 8;
	}
	free(log);
	return n;
}

static int proc_running(pid_t pid)
{
	char path[64], buf[512], *rp;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static int find_in_path(const char *name)
{
	char buf[4096];
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/safepy-team-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	/* Reachable by the unprivileged uids of the permission test. */
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(sock, sizeof(sock), "%s/safepy.sock", dir);
	snprintf(logpath, sizeof(logpath), "%s/activator.log", dir);
	e2e_log_from(activator_log);
}

/* systemd-socket-activate --accept --inetd -l SOCK safepy serve, its stderr (and the
 * servers') into logpath; returns once the socket exists. */
static void start_activator(void)
{
	struct stat st;
	int64_t deadline;

	if (!find_in_path("systemd-socket-activate"))
		cr_skip_test("systemd-socket-activate is not installed (Debian: systemd)");
	make_dir();
	activator = fork();
	cr_assert_geq(activator, 0, "fork: %s", strerror(errno));
	if (activator == 0) {
		int null = open("/dev/null", O_RDWR);
		int log = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(log, 2) < 0)
			_exit(126);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execlp("systemd-socket-activate", "systemd-socket-activate", "--accept", "--inetd",
		       "-l", sock, SAFEPY_BIN, "serve", (char *)NULL);
		_exit(127);
	}
	deadline = mcpc_now_ms() + 10000;
	while (stat(sock, &st) != 0 || !S_ISSOCK(st.st_mode)) {
		int status;
		if (waitpid(activator, &status, WNOHANG) == activator) {
			char *log = activator_log();
			activator = -1;
			cr_assert_fail("systemd-socket-activate exited (status 0x%x):\n%s", status,
			               log);
		}
		cr_assert_lt(mcpc_now_ms(), deadline, "no socket at %s after 10 s", sock);
		usleep(10000);
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* After every test: clients, then the activator, then any server still running. */
static void cleanup(void)
{
	pid_t pids[16];
	int n;

	for (int i = 0; i < 2; i++)
		if (cli[i].stderr_path[0])
			mcpc_free(&cli[i]);
	e2e_release();
	n = logpath[0] ? spawned_pids(pids, 16) : 0;
	if (activator > 0) {
		kill(activator, SIGTERM);
		waitpid(activator, NULL, 0);
		activator = -1;
	}
	/* A server whose client is gone sees EOF and exits by itself. */
	for (int64_t end = mcpc_now_ms() + 5000; mcpc_now_ms() < end;) {
		int alive = 0;
		for (int i = 0; i < n; i++)
			alive |= proc_running(pids[i]);
		if (!alive)
			break;
		usleep(20000);
	}
	for (int i = 0; i < n; i++)
		if (proc_running(pids[i]))
			kill(pids[i], SIGKILL);
	if (dir[0]) {
		if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
			cr_log_warn("could not remove %s", dir);
		dir[0] = '\0';
	}
	logpath[0] = '\0';
}

/* A client whose stdio is `safepy connect SOCK` (optionally under a wrapper such as setpriv),
 * initialised. */
static void client_start(struct mcpc *c, const char *bin, const char *const *args)
{
	e2e_open(c, bin, args, NULL, "2025-06-18");
}

/* Close the client's stdin: the relay half-closes, the server ends, the relay exits 0, and
 * every line that reached the client was JSON-RPC. */
static void client_stop(struct mcpc *c)
{
	char *err;

	e2e_finish(c, 5000);
	err = mcpc_stderr(c);
	cr_assert_str_empty(err, "safepy connect wrote to stderr:\n%s", err);
	free(err);
	mcpc_free(c);
}

/* ---- Socket activation -------------------------------------------------------------------- */

Test(team, each_connection_gets_its_own_server_and_default_session)
{
	static const struct e2e_refusal unknown_session = {"error", "SessionError", NULL};
	pid_t pids[4];
	char want[128];
	const char *ha, *hb;
	json_object *r;
	char *log;

	start_activator();
	client_start(&cli[0], SAFEPY_BIN, ARGS("connect", sock));
	client_start(&cli[1], SAFEPY_BIN, ARGS("connect", sock));

	r = e2e_call_on(&cli[0], "secret = 'set in A'\nsecret", NULL, E2E_CALL_MS);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "'set in A'", "%s", mcpc_json(r));
	ha = mcpc_sc_str(r, "session");
	cr_assert_not_null(ha, "no session handle: %s", mcpc_json(r));

	/* B's default session is its own: A's variable does not exist there. */
	r = e2e_call_on(&cli[1], "secret", NULL, E2E_CALL_MS);
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "NameError", "%s", mcpc_json(r));
	hb = mcpc_sc_str(r, "session");
	cr_assert_not_null(hb, "no session handle: %s", mcpc_json(r));
	cr_assert_str_neq(ha, hb, "both connections ran in session %s", ha);

	/* A's handle means nothing to B's server: sessions live in one process. */
	snprintf(want, sizeof(want), "{\"session\": \"%s\"}", ha);
	r = e2e_call_on(&cli[1], "secret", want, E2E_CALL_MS);
	cr_assert_null(e2e_refusal_mismatch(r, &unknown_session), "B reached A's session: %s",
	               mcpc_json(r));

	r = e2e_call_on(&cli[0], "secret", NULL, E2E_CALL_MS);
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "'set in A'", "%s", mcpc_json(r));

	/* Two server processes, both alive while both connections are open. */
	cr_assert_eq(spawned_pids(pids, 4), 2, "expected two spawned servers; log:\n%s", e2e_log());
	cr_assert_neq(pids[0], pids[1]);
	cr_assert(proc_running(pids[0]) && proc_running(pids[1]),
	          "servers %d and %d are not both running", (int)pids[0], (int)pids[1]);

	/* Each server named its client from SO_PEERCRED: the relay's uid and pid. */
	log = activator_log();
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "client: uid %u", (unsigned)getuid());
		cr_assert_not_null(strstr(log, want), "no '%s' in the log:\n%s", want, log);
		snprintf(want, sizeof(want), " pid %d\n", (int)cli[i].pid);
		cr_assert_not_null(strstr(log, want), "no client line for pid %d:\n%s",
		                   (int)cli[i].pid, log);
	}
	free(log);

	client_stop(&cli[0]);
	client_stop(&cli[1]);
}

Test(team, connect_relays_a_full_mcp_exchange)
{
	json_object *r, *tools, *tool, *res;

	start_activator();
	client_start(&cli[0], SAFEPY_BIN, ARGS("connect", sock));

	r = e2e_hold(mcpc_request(&cli[0], "tools/list", NULL, E2E_CALL_MS));
	cr_assert_not_null(r, "no answer to tools/list; log:\n%s", e2e_log());
	tools = e2e_member(mcpc_result(r), "tools");
	cr_assert(json_object_is_type(tools, json_type_array) &&
	              json_object_array_length(tools) >= 1,
	          "%s", mcpc_json(r));
	tool = json_object_array_get_idx(tools, 0);
	cr_assert_str_eq(json_object_get_string(e2e_member(tool, "name")), "run_python", "%s",
	                 mcpc_json(r));

	r = e2e_call_on(&cli[0], "print('hello over the socket')\n6 * 7", NULL, E2E_CALL_MS);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	res = e2e_member(mcpc_structured(r), "result");
	cr_assert_eq(json_object_get_int(res), 42, "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "hello over the socket\n", "%s", mcpc_json(r));

	client_stop(&cli[0]);
}

/* The units give the socket mode 0660, group safepy: a member connects (and the server logs
 * the member's uid, not its own), anyone else gets EACCES and a hint. */
Test(team, socket_group_decides_who_connects)
{
	char gid_arg[32], *out, *err, want[64], *log;
	const char *const nobody[] = {
	    "--reuid=65534", "--regid=65534", "--clear-groups", SAFEPY_BIN, "connect", sock, NULL};
	int status;

	if (geteuid() != 0)
		cr_skip_test("needs root to connect as other users");
	if (access("/usr/bin/setpriv", X_OK) != 0)
		cr_skip_test("setpriv is not installed (Debian: util-linux)");
	start_activator();
	cr_assert_eq(chown(sock, 0, 4242), 0, "chown: %s", strerror(errno));
	cr_assert_eq(chmod(sock, 0660), 0, "chmod: %s", strerror(errno));

	cr_assert_eq(mcpc_run_cmd("/usr/bin/setpriv", nobody, "{}\n", 10000, &out, &err, &status),
	             0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x", status);
	cr_assert_str_empty(out, "stdout: %s", out);
	cr_assert_not_null(strstr(err, "Permission denied"), "%s", err);
	cr_assert_not_null(strstr(err, "safepy group"), "%s", err);
	free(out);
	free(err);

	snprintf(gid_arg, sizeof(gid_arg), "--groups=4242");
	client_start(&cli[0], "/usr/bin/setpriv",
	             ARGS("--reuid=65534", "--regid=65534", gid_arg, SAFEPY_BIN, "connect", sock));
	cr_assert_str_eq(mcpc_status(e2e_call_on(&cli[0], "1 + 1", NULL, E2E_CALL_MS)), "ok");
	log = activator_log();
	snprintf(want, sizeof(want), "client: uid 65534");
	cr_assert_not_null(strstr(log, want), "no '%s' in the log:\n%s", want, log);
	free(log);
	client_stop(&cli[0]);
}

/* ---- The relay alone ---------------------------------------------------------------------- */

#define UP_BYTES   (300 * 1024)  /* more than the relay's buffer */
#define DOWN_BYTES (1024 * 1024) /* likewise, and more than a pipe holds */

/* A one-connection server: reads until EOF (which only the relay's half-close gives), then
 * answers with the byte count and DOWN_BYTES of pattern, and closes. */
static pid_t fake_server(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;

	cr_assert_geq(lfd, 0);
	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(lfd, 1), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static char buf[65536];
		size_t got = 0, off = 0;
		char head[64];
		int c = accept(lfd, NULL, NULL);
		ssize_t n;

		if (c < 0)
			_exit(2);
		while ((n = read(c, buf, sizeof(buf))) > 0)
			got += (size_t)n;
		if (n < 0)
			_exit(3);
		n = snprintf(head, sizeof(head), "received %zu\n", got);
		if (write(c, head, (size_t)n) != n)
			_exit(4);
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (char)('a' + i % 26);
		while (off < DOWN_BYTES) {
			n = write(c, buf, sizeof(buf));
			if (n <= 0)
				_exit(5);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(lfd);
	return pid;
}

Test(connect, half_closes_then_flushes_everything)
{
	char path[160], head[64], *in, *out, *err;
	pid_t srv;
	int status, sstatus;
	size_t hl;

	make_dir();
	snprintf(path, sizeof(path), "%s/fake.sock", dir);
	srv = fake_server(path);
	in = malloc(UP_BYTES + 1);
	cr_assert_not_null(in);
	memset(in, 'q', UP_BYTES);
	in[UP_BYTES] = '\0';
	cr_assert_eq(
	    mcpc_run_cmd(SAFEPY_BIN, ARGS("connect", path), in, 30000, &out, &err, &status), 0,
	    "safepy connect did not finish");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x, stderr: %s", status,
	          err);
	cr_assert_eq(waitpid(srv, &sstatus, 0), srv);
	cr_assert(WIFEXITED(sstatus) && WEXITSTATUS(sstatus) == 0, "fake server: 0x%x", sstatus);
	hl = (size_t)snprintf(head, sizeof(head), "received %d\n", UP_BYTES);
	cr_assert_eq(strncmp(out, head, hl), 0, "stdout starts with %.40s", out);
	cr_assert_eq(strlen(out), hl + DOWN_BYTES, "stdout has %zu bytes", strlen(out));
	for (size_t i = 0; i < DOWN_BYTES; i += 4099)
		cr_assert_eq(out[hl + i], 'a' + (int)((i % 65536) % 26), "byte %zu", i);
	cr_assert_str_empty(err, "stderr: %s", err);
	free(in);
	free(out);
	free(err);
}

Test(connect, fails_with_a_hint_and_nothing_on_stdout)
{
	char path[160], *out, *err;
	int status;

	make_dir();
	snprintf(path, sizeof(path), "%s/nobody-listens.sock", dir);
	cr_assert_eq(
	    mcpc_run_cmd(SAFEPY_BIN, ARGS("connect", path), "{}\n", 10000, &out, &err, &status), 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x", status);
	cr_assert_str_empty(out);
	cr_assert_not_null(strstr(err, "safepy connect: "), "%s", err);
	cr_assert_not_null(strstr(err, "safepy.socket"), "%s", err);
	free(out);
	free(err);
	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, ARGS("connect", "--timeout", "3"), NULL, 10000, &out,
	                          &err, &status),
	             0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status 0x%x", status);
	cr_assert_str_empty(out);
	free(out);
	free(err);
}

/* ---- SO_PEERCRED -------------------------------------------------------------------------- */

Test(peer, names_the_process_at_the_other_end)
{
	char buf[160], want[64];
	int sv[2], p[2], udp;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(peer_describe(sv[0], buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "uid %u", (unsigned)getuid());
	cr_assert_eq(strncmp(buf, want, strlen(want)), 0, "%s", buf);
	snprintf(want, sizeof(want), " pid %d", (int)getpid());
	cr_assert_not_null(strstr(buf, want), "%s", buf);
	cr_assert_eq(peer_describe(sv[0], buf, 8), -ENAMETOOLONG);
	close(sv[0]);
	close(sv[1]);

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(peer_describe(p[0], buf, sizeof(buf)), -ENOTSOCK);
	close(p[0]);
	close(p[1]);

	udp = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp >= 0) {
		cr_assert_eq(peer_describe(udp, buf, sizeof(buf)), -EAFNOSUPPORT);
		close(udp);
	}
}
