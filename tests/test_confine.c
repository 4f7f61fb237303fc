/* test_confine.c - the supervisor's own sandbox (supervisor/confine.c, seccomp/self.c,
 * supervisor/starter.c).
 *
 * self: a forked child confines itself exactly as the supervisor does, then plays a
 *   supervisor whose JSON handling was taken over: it tries to run a shell, start processes
 *   and threads, open network sockets, map executable memory, write into a traced process,
 *   read and write the user's files, and signal processes outside its own. Each attempt must
 *   fail with the right errno *and* leave no trace (no file written, no process started), while
 *   what the supervisor does need (its own files, socket pairs, the zygote starter) still works.
 * server: the real server is confined (its /proc status), and every duty still works under it:
 *   sessions, timeouts, cancellation, the zygote's restart, shutdown; with the starter killed
 *   from outside it keeps answering and says why Python can no longer start. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "landlock.h"
#include "supervisor.h"

/* ---- helpers ------------------------------------------------------------------------- */

/* A field of /proc/<pid>/status, or -1. */
static int status_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	int v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':' &&
		    sscanf(line + n + 1, "%d", &v) == 1)
			break;
	fclose(f);
	return v;
}

static const char *zygote_path(void)
{
	static char path[PATH_MAX];
	const char *slash = strrchr(SAFEPY_BIN, '/');

	snprintf(path, sizeof(path), "%.*s/safepy-zygote", (int)(slash - SAFEPY_BIN), SAFEPY_BIN);
	return path;
}

/* A scratch directory outside everything the supervisor may reach (not under /usr, /etc,
 * /proc, /sys, /dev), with a file the user keeps there. */
static char scratch[PATH_MAX], secret[PATH_MAX + 16];

static void make_scratch(void)
{
	int fd;

	snprintf(scratch, sizeof(scratch), "/tmp/safepy-confine-XXXXXX");
	cr_assert_not_null(mkdtemp(scratch), "mkdtemp: %s", strerror(errno));
	snprintf(secret, sizeof(secret), "%s/secret", scratch);
	fd = open(secret, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "key", 3), 3);
	close(fd);
}

static void remove_scratch(void)
{
	char path[PATH_MAX + 16];

	if (!scratch[0])
		return;
	unlink(secret);
	snprintf(path, sizeof(path), "%s/written", scratch);
	unlink(path);
	snprintf(path, sizeof(path), "%s/from-shell", scratch);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stderr", scratch);
	unlink(path);
	rmdir(scratch);
	scratch[0] = '\0';
}

/* The child's stderr, where the supervisor's trap writes. */
static char errlog[PATH_MAX + 16];

/* Run fn in a forked child that first confines itself as the supervisor does (with the real
 * zygote as the one program the starter may run). fn returns 0 when every check held, or a
 * line number; the child's exit status carries it. Returns fn's result. */
static int in_confined_child(int (*fn)(const struct confine_report *, struct starter *))
{
	pid_t pid;
	int status;

	snprintf(errlog, sizeof(errlog), "%s/stderr", scratch);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct confine_paths p = {.zygote_exe = zygote_path(),
		                          .cgroup_fd = -1,
		                          .workspace_fd = -1,
		                          .cache_fd = -1};
		struct confine_report r;
		struct starter st;
		int fd = open(errlog, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(200);
		if (confine_self(&p, &st, &r) < 0)
			_exit(201);
		_exit(fn(&r, &st));
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the confined child died of signal %d", WTERMSIG(status));
	cr_assert_neq(WEXITSTATUS(status), 200, "the child could not redirect stderr");
	cr_assert_neq(WEXITSTATUS(status), 201, "confine_self failed");
	return WEXITSTATUS(status);
}

/* In the child: a check that returns the line that failed, counted from CHECK_BASE (an exit
 * status has 8 bits; the checks live within 250 lines of it). */
#define CHECK_BASE 160
#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return __LINE__ - CHECK_BASE;                                              \
	} while (0)

/* fn's checks all held in a confined child. */
#define EXPECT_CONFINED(fn)                                                                        \
	do {                                                                                       \
		int rc_ = in_confined_child(fn);                                                   \
		cr_assert_eq(rc_, 0, "the check at line %d failed", CHECK_BASE + rc_);             \
	} while (0)

static char *slurp(const char *path)
{
	static char buf[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static long landlock_or_skip(void)
{
	long abi = landlock_abi();

	if (abi < 1)
		cr_skip_test("this kernel has no Landlock");
	return abi;
}

TestSuite(self, .init = make_scratch, .fini = remove_scratch, .timeout = 60);

/* ---- self: what the kernel says ---------------------------------------------------------- */

static int check_status(const struct confine_report *r, struct starter *st)
{
	CHECK(status_field(getpid(), "NoNewPrivs") == 1);
	CHECK(status_field(getpid(), "Seccomp") == 2);
	CHECK(r->nnp == 1 && r->seccomp_rows > 0);
	CHECK(strstr(r->detail, "seccomp allowlist") != NULL);
	/* The starter shares no_new_privs and Landlock, not the filter: it must exec. */
	CHECK(st->pid > 0 && st->fd >= 0);
	CHECK(status_field(st->pid, "NoNewPrivs") == 1);
	CHECK(status_field(st->pid, "Seccomp") == 0);
	CHECK(status_field(st->pid, "PPid") == getpid());
	return 0;
}

Test(self, the_kernel_reports_seccomp_and_no_new_privs)
{
	EXPECT_CONFINED(check_status);
}

/* ---- self: no program, no process, no thread ---------------------------------------------- */

static int check_no_exec(const struct confine_report *r, struct starter *st)
{
	char cmd[PATH_MAX + 64], path[PATH_MAX + 16];
	char *const envp[] = {NULL};
	int rc;

	(void)r;
	(void)st;
	snprintf(path, sizeof(path), "%s/from-shell", scratch);
	snprintf(cmd, sizeof(cmd), "echo owned > %s", path);
	{
		char *const argv[] = {(char *)"sh", (char *)"-c", cmd, NULL};
		rc = execve("/bin/sh", argv, envp);
	}
	CHECK(rc == -1 && errno == EPERM);
	{
		char *const argv[] = {(char *)"sh", (char *)"-c", cmd, NULL};
		rc = (int)syscall(SYS_execveat, AT_FDCWD, "/bin/sh", argv, envp, 0);
	}
	CHECK(rc == -1 && errno == EPERM);
	/* The loader would run any program it is given. */
	{
		char *const argv[] = {(char *)"ld.so", (char *)"/bin/sh", (char *)"-c", cmd, NULL};
		rc = execve("/lib64/ld-linux-x86-64.so.2", argv, envp);
	}
	CHECK(rc == -1 && errno == EPERM);
	return 0;
}

Test(self, no_program_can_be_run)
{
	char path[PATH_MAX + 16];
	const char *log;

	EXPECT_CONFINED(check_no_exec);
	snprintf(path, sizeof(path), "%s/from-shell", scratch);
	cr_assert_neq(access(path, F_OK), 0, "the shell ran: %s exists", path);
	log = slurp(errlog);
	cr_assert(strstr(log, "own filter refused system call 59\n") != NULL,
	          "the refused execve was not logged: %s", log);
	cr_assert(strstr(log, "own filter refused system call 322\n") != NULL,
	          "the refused execveat was not logged: %s", log);
}

static void *thread_fn(void *arg)
{
	return arg;
}

static int check_no_process(const struct confine_report *r, struct starter *st)
{
	char path[64], *kids;
	pthread_t t;
	pid_t pid;

	(void)r;
	pid = fork();
	if (pid == 0)
		_exit(0); /* a started child would be seen below */
	CHECK(pid == -1 && errno == EPERM);
	CHECK(syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0) == -1 && errno == EPERM);
	CHECK(pthread_create(&t, NULL, thread_fn, NULL) != 0);
	/* The only child is the starter. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	kids = slurp(path);
	snprintf(path, sizeof(path), "%d ", (int)st->pid);
	CHECK(strcmp(kids, path) == 0);
	return 0;
}

Test(self, no_process_or_thread_can_start)
{
	EXPECT_CONFINED(check_no_process);
}

/* ---- self: no network, no executable memory, no writes into tracees -------------------- */

static int check_no_network(const struct confine_report *r, struct starter *st)
{
	int sv[2];

	(void)r;
	(void)st;
	CHECK(socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == EPERM);
	CHECK(socket(AF_INET6, SOCK_DGRAM, 0) == -1 && errno == EPERM);
	CHECK(socket(AF_UNIX, SOCK_STREAM, 0) == -1 && errno == EPERM);
	CHECK(socket(AF_NETLINK, SOCK_RAW, 0) == -1 && errno == EPERM);
	CHECK(socketpair(AF_INET, SOCK_STREAM, 0, sv) == -1 && errno == EPERM);
	/* What it needs: a worker's channel. */
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[0], "x", 1) == 1);
	return 0;
}

Test(self, no_socket_but_socket_pairs)
{
	EXPECT_CONFINED(check_no_network);
}

static int check_no_exec_memory(const struct confine_report *r, struct starter *st)
{
	void *p;

	(void)r;
	(void)st;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p == MAP_FAILED && errno == EPERM);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK(mprotect(p, 4096, PROT_READ | PROT_EXEC) == -1 && errno == EPERM);
	CHECK(syscall(SYS_pkey_mprotect, p, 4096, PROT_READ | PROT_EXEC, -1) == -1 &&
	      errno == EPERM);
	CHECK(syscall(SYS_memfd_create, "x", 0) == -1 && errno == EPERM);
	return 0;
}

Test(self, no_executable_memory)
{
	EXPECT_CONFINED(check_no_exec_memory);
}

static int check_no_tracee_writes(const struct confine_report *r, struct starter *st)
{
	char buf[8] = "";
	struct iovec local = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct iovec remote = {.iov_base = (void *)&local, .iov_len = sizeof(buf)};

	(void)r;
	CHECK(ptrace(PTRACE_ATTACH, st->pid, NULL, NULL) == -1 && errno == EPERM);
	CHECK(ptrace(PTRACE_POKEDATA, st->pid, NULL, NULL) == -1 && errno == EPERM);
	CHECK(ptrace(PTRACE_SETREGS, st->pid, NULL, NULL) == -1 && errno == EPERM);
	CHECK(syscall(SYS_process_vm_writev, st->pid, &local, 1, &remote, 1, 0) == -1 &&
	      errno == EPERM);
	/* The starter is not dumpable (a fork of the supervisor): its memory is not ours to
	 * open either. */
	{
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)st->pid);
		CHECK(open(path, O_RDWR | O_CLOEXEC) == -1);
	}
	return 0;
}

Test(self, no_writes_into_other_processes)
{
	EXPECT_CONFINED(check_no_tracee_writes);
}

/* ---- self: files (Landlock) -------------------------------------------------------------- */

static int check_files(const struct confine_report *r, struct starter *st)
{
	char path[PATH_MAX + 16], buf[16];
	int fd;

	(void)st;
	CHECK(r->landlock_abi >= 1);
	/* The user's files: not readable, not writable, not removable. */
	CHECK(open(secret, O_RDONLY | O_CLOEXEC) == -1 && errno == EACCES);
	snprintf(path, sizeof(path), "%s/written", scratch);
	CHECK(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600) == -1 && errno == EACCES);
	CHECK(unlinkat(AT_FDCWD, secret, 0) == -1 && errno == EACCES);
	CHECK(syscall(SYS_renameat2, AT_FDCWD, secret, AT_FDCWD, path, 0) == -1 &&
	      (errno == EACCES || errno == EXDEV));
	CHECK(open("/etc/hostname", O_WRONLY | O_CLOEXEC) == -1);
	/* The system's files: readable. /dev/null: writable. */
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) > 0);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
	return 0;
}

Test(self, the_users_files_are_out_of_reach)
{
	char path[PATH_MAX + 16], buf[8] = "";
	int fd;

	landlock_or_skip();
	EXPECT_CONFINED(check_files);
	fd = open(secret, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "the secret file was removed");
	cr_assert_eq(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	cr_assert_str_eq(buf, "key");
	snprintf(path, sizeof(path), "%s/written", scratch);
	cr_assert_neq(access(path, F_OK), 0, "%s was created", path);
}

static int check_signals(const struct confine_report *r, struct starter *st)
{
	(void)r;
	/* Outside its domain: the test runner that forked it. Inside: the starter. */
	CHECK(kill(getppid(), 0) == -1 && errno == EPERM);
	CHECK(kill(st->pid, 0) == 0);
	return 0;
}

Test(self, signals_reach_only_its_own_processes)
{
	if (landlock_or_skip() < 6)
		cr_skip_test("this kernel's Landlock has no signal scoping (ABI 6)");
	EXPECT_CONFINED(check_signals);
}

/* ---- self: the starter ------------------------------------------------------------------ */

static int check_starter(const struct confine_report *r, struct starter *st)
{
	char path[64], exe[PATH_MAX];
	int sv[2], status;
	ssize_t n;
	pid_t pid = 0;

	(void)r;
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(starter_spawn(st, sv[1], &pid) == 0);
	close(sv[1]);
	/* Our child, running the zygote. */
	CHECK(pid > 0 && status_field(pid, "PPid") == getpid());
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 200; i++) {
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, zygote_path()) == 0)
				break;
		}
		usleep(5000);
	}
	CHECK(n > 0 && strcmp(exe, zygote_path()) == 0);
	/* Without its configuration it stops; we reap it. */
	close(sv[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	/* A starter that is gone: a clear error, no hang. */
	CHECK(kill(st->pid, SIGKILL) == 0);
	CHECK(waitpid(st->pid, &status, 0) == st->pid);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(starter_spawn(st, sv[1], &pid) == -ECHILD);
	return 0;
}

Test(self, the_starter_starts_the_zygote_as_the_supervisors_child)
{
	EXPECT_CONFINED(check_starter);
}

/* ---- self: a call the table does not list ------------------------------------------------ */

static int check_trap(const struct confine_report *r, struct starter *st)
{
	(void)r;
	(void)st;
	CHECK(syscall(SYS_uname, NULL) == -1 && errno == EPERM);
	CHECK(syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0) == -1 && errno == EPERM);
	CHECK(syscall(SYS_landlock_create_ruleset, NULL, 0, 1) == -1 && errno == EPERM);
	/* Still alive and working. */
	CHECK(getpid() > 0);
	return 0;
}

Test(self, an_unlisted_call_fails_with_eperm_and_is_logged)
{
	const char *log;

	EXPECT_CONFINED(check_trap);
	log = slurp(errlog);
	cr_assert(strstr(log, "own filter refused system call 63\n") != NULL, "%s", log);
	cr_assert(strstr(log, "own filter refused system call 157\n") != NULL, "%s", log);
}

/* ---- relay: `safepy connect` once connected ----------------------------------------------- */

Test(self, the_relay_only_relays)
{
	int p[2], status;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char c;
		int bad = 0;
		if (confine_relay() < 0)
			_exit(10);
		bad |= status_field(getpid(), "Seccomp") != -1; /* fopen itself is refused */
		bad |= open("/etc/passwd", O_RDONLY) != -1 ? 2 : 0;
		bad |= socket(AF_INET, SOCK_STREAM, 0) != -1 ? 4 : 0;
		bad |= fork() == 0 ? 8 : 0;
		bad |= read(p[0], &c, 1) == 1 && c == 'r' ? 0 : 16;
		bad |= write(STDERR_FILENO, "", 0) == 0 ? 0 : 32;
		_exit(bad);
	}
	close(p[0]);
	cr_assert_eq(write(p[1], "r", 1), 1);
	close(p[1]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the relay died of signal %d", WTERMSIG(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "relay checks failed: mask %d", WEXITSTATUS(status));
}

/* ---- server: the real one -------------------------------------------------------------- */

TestSuite(server, .fini = e2e_cleanup, .timeout = 120);

Test(server, is_confined_and_its_starter_is_not_filtered)
{
	pid_t starter;

	e2e_start(NULL);
	e2e_expect_result("1 + 1", "2");
	cr_assert_eq(status_field(e2e_srv.pid, "Seccomp"), 2);
	cr_assert_eq(status_field(e2e_srv.pid, "NoNewPrivs"), 1);
	starter = e2e_starter();
	cr_assert_gt(starter, 0, "no zygote starter among the server's children");
	cr_assert_eq(status_field(starter, "PPid"), e2e_srv.pid);
	cr_assert_eq(status_field(starter, "NoNewPrivs"), 1);
	cr_assert_eq(status_field(starter, "Seccomp"), 0);
	e2e_stop();
}

Test(server, every_duty_works_under_it)
{
	struct mcpc_proc p[64];
	json_object *jid;
	int64_t id;
	int n;

	e2e_start(NULL);
	/* Sessions: state kept across calls and errors. */
	e2e_ok("x = 41");
	e2e_expect_error("raise ValueError('no')", "ValueError");
	e2e_expect_result("x + 1", "42");
	/* A timeout (the deadline, the kill, the rollback). */
	e2e_expect_status("x = 0\nwhile True:\n    pass", "{\"timeout_seconds\": 1}", "timeout");
	e2e_expect_result("x", "41");
	/* Cancellation of a running call. */
	id = mcpc_call_async(&e2e_srv, "while True:\n    pass", "{\"session\": \"new\"}");
	jid = json_object_new_int64(id);
	usleep(300000);
	e2e_cancel(id);
	e2e_expect_result("'after the cancel'", "\"after the cancel\"");
	cr_assert_not(mcpc_seen_id(&e2e_srv, jid, 500), "the cancelled call was answered");
	json_object_put(jid);
	/* The zygote killed from outside: started again (through the starter). */
	n = e2e_descendants(p, 64);
	for (int i = 0; i < n; i++)
		if (status_field(p[i].pid, "Seccomp") == 0)
			cr_assert_eq(kill(p[i].pid, SIGKILL), 0);
	e2e_expect_result("'a fresh worker'", "\"a fresh worker\"");
	e2e_expect_result("[1, 2][1]", "2");
	/* Shutdown: exit 0, every process gone, nothing refused (e2e_stop checks the log). */
	n = mcpc_descendants(e2e_srv.pid, p, 64);
	e2e_stop();
	cr_assert_eq(mcpc_wait_procs_gone(p, n, 3000), 0, "processes outlived the server");
}

Test(server, a_starter_killed_from_outside_leaves_a_clear_error)
{
	struct mcpc_proc p[64];
	json_object *r, *tools;
	pid_t starter;
	int n;

	e2e_start(NULL);
	e2e_expect_result("1", "1");
	starter = e2e_starter();
	cr_assert_gt(starter, 0);
	cr_assert_eq(kill(starter, SIGKILL), 0);
	/* The zygote still runs: calls still work. */
	e2e_expect_result("2", "2");
	/* Once the zygote is gone too, none can start, and the calls say so. */
	n = e2e_descendants(p, 64);
	for (int i = 0; i < n; i++)
		if (status_field(p[i].pid, "Seccomp") == 0)
			cr_assert_eq(kill(p[i].pid, SIGKILL), 0);
	/* (A worker forked before the kill may still take a call, and die with its zygote.) */
	for (int i = 0; i < 50; i++) {
		r = e2e_call("3", "{\"session\": \"new\"}");
		if (strstr(mcpc_json(r), "restart safepy"))
			break;
		usleep(20000);
	}
	cr_assert(e2e_is_error(r), "calls still ran: %s", mcpc_json(r));
	cr_assert(strstr(mcpc_json(r), "restart safepy") != NULL, "unclear: %s", mcpc_json(r));
	/* The server itself still answers. */
	tools = e2e_hold(mcpc_request(&e2e_srv, "tools/list", NULL, 5000));
	cr_assert_not_null(mcpc_result(tools), "tools/list failed: %s", mcpc_json(tools));
	e2e_stop();
}
