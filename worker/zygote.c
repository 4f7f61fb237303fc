/* zygote.c - the zygote: CPython initialised once, then one fork per spawn request; and a
 * fresh worker's start after that fork (sandbox, listener and ready frames, then the park
 * loop of runner.c). The zygote never sees a request's code or result: those travel on the
 * worker's channel. Start-up failures end the zygote with a ZYGOTE_EXIT_* code. */
#include "worker_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int control_send(int fd, char type, uint32_t a, uint32_t b)
{
	unsigned char msg[IPC_ZYGOTE_MSG];

	ipc_zygote_msg_put(msg, type, a, b);
	if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) != (ssize_t)sizeof(msg))
		return -errno;
	return 0;
}

/* "no module named 'x'" when the module itself is missing, else "Type: message" of the
 * exception that importing it raised. Clears the exception. */
static void import_failure_text(const char *module, struct strbuf *b)
{
	PyObject *type, *value, *tb, *name, *s;

	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	name = value && PyErr_GivenExceptionMatches(type, PyExc_ModuleNotFoundError)
	           ? PyObject_GetAttrString(value, "name")
	           : NULL;
	PyErr_Clear();
	if (name && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, module) == 0) {
		sb_printf(b, "no module named '%s'", module);
	} else {
		const char *tn = type ? ((PyTypeObject *)type)->tp_name : "Exception";
		Py_ssize_t n = 0;
		const char *m = NULL;

		s = value ? PyObject_Str(value) : NULL;
		m = s ? PyUnicode_AsUTF8AndSize(s, &n) : NULL;
		sb_printf(b, "importing it raised %s", tn);
		if (m && n > 0) {
			sb_str(b, ": ");
			sb_add(b, m, (size_t)n);
		}
		Py_XDECREF(s);
		PyErr_Clear();
	}
	Py_XDECREF(name);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
}

void zygote_import_failed(const struct zygote_config *cfg, size_t index)
{
	unsigned char msg[IPC_ZYGOTE_FAIL_MAX];
	struct strbuf b = {0};
	const char *module = cfg->imports[index];
	char *text;
	size_t n;

	import_failure_text(module, &b);
	text = sb_take(&b);
	if (!text)
		text = strdup("out of memory");
	n = ipc_zygote_fail_put(msg, (uint32_t)index, text ? text : "", text ? strlen(text) : 0);
	if (send(cfg->control_fd, msg, n, MSG_NOSIGNAL) != (ssize_t)n)
		fprintf(stderr, "safepy zygote: cannot import allowed module '%s': %s\n", module,
		        text ? text : "");
	free(text);
}

/* A fresh worker, from the fork to the park loop. Fails closed at every step. */
static void worker_start(const struct sandbox_config *sb, int channel, pid_t zygote)
    __attribute__((noreturn));
static void worker_start(const struct sandbox_config *sb, int channel, pid_t zygote)
{
	struct sandbox_report report;
	json_object *rep;
	const char *text;
	sigset_t xfsz;

	/* The zygote blocks SIGCHLD for its signalfd; a worker must not inherit that. It blocks
	 * SIGXFSZ: a write past RLIMIT_FSIZE fails with EFBIG, and the signal stays pending
	 * rather than stopping the worker for its tracer at each such write (the supervisor
	 * ends a process that takes signals without end). */
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	if (sigprocmask(SIG_SETMASK, &xfsz, NULL) < 0)
		_exit(WORKER_EXIT_SIGMASK);
	sandbox_enter(sb, channel, zygote, &report);
	/* From here on only the seccomp allowlist works. */
	if (!sb->cold)
		interp_warm_up();
	rep = sandbox_report_json(&report);
	text = rep ? json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PLAIN) : "{}";
	if (ipc_frame_write(POLICY_FD_CHANNEL, IPC_FRAME_READY, NULL, 0, text, strlen(text)) < 0)
		_exit(WORKER_EXIT_CHANNEL);
	json_object_put(rep);
	runner_serve();
}

static pid_t spawn(const struct sandbox_config *sb, int channel)
{
	pid_t self = getpid(), pid;

	PyOS_BeforeFork();
	pid = fork();
	if (pid == 0) {
		/* Reseeds random and resets threading state in the child: the zygote's fork
		 * hooks are the library's own, no user code has run here. */
		PyOS_AfterFork_Child();
		worker_start(sb, channel, self);
	}
	PyOS_AfterFork_Parent();
	return pid;
}

/* The directory of the standard library: dirname(os.__file__). New string or NULL. */
static char *stdlib_dir(void)
{
	PyObject *m = PyImport_ImportModule("os"), *v = NULL;
	const char *p;
	char *out = NULL, *slash;

	if (m)
		v = PyObject_GetAttrString(m, "__file__");
	if (v && PyUnicode_Check(v) && (p = PyUnicode_AsUTF8(v)))
		out = strdup(p);
	if (out && (slash = strrchr(out, '/')))
		*slash = '\0';
	PyErr_Clear();
	Py_XDECREF(v);
	Py_XDECREF(m);
	return out;
}

/* Tell the supervisor where the modules a worker may import later live: the standard
 * library, and each package the zygote loaded outside it (the allowed ones and what they
 * import). Returns 0, -1 when they cannot be found or encoded, -2 when the control socket is
 * closed. */
static int send_roots(int control)
{
	struct ipc_roots r = {0};
	size_t len = 0;
	char *msg;
	int rc = -1;

	r.stdlib = stdlib_dir();
	if (!r.stdlib || pyimport_roots(&r) < 0)
		goto out;
	msg = ipc_roots_encode(&r, &len);
	if (msg)
		rc = send(control, msg, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -2;
	free(msg);
out:
	ipc_roots_clear(&r);
	return rc;
}

static int freeze_gc(void)
{
	PyObject *gc = PyImport_ImportModule("gc"), *r;

	if (!gc)
		return -1;
	r = PyObject_CallMethod(gc, "collect", NULL);
	Py_XDECREF(r);
	if (r) {
		r = PyObject_CallMethod(gc, "freeze", NULL);
		Py_XDECREF(r);
	}
	Py_DECREF(gc);
	return r ? 0 : -1;
}

/* Reap exited workers and report each status (a traced worker reaches us after the
 * supervisor, its tracer, has seen it). Returns 0, or -1 when the supervisor is gone. */
static int reap_workers(int sfd, int control)
{
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	while (read(sfd, &si, sizeof(si)) > 0)
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (control_send(control, IPC_ZYGOTE_EXIT, (uint32_t)pid, (uint32_t)status) < 0)
			return -1;
	return 0;
}

/* One spawn request: fork a worker for the channel that came with it. Returns 0, or -1
 * when the control socket is closed or broken (then the zygote exits). */
static int serve_spawn(int control, const struct sandbox_config *sb)
{
	unsigned char msg[IPC_ZYGOTE_MSG + 1];
	struct ipc_recv_info info;
	uint32_t id, flags;
	struct sandbox_config spawned = *sb;
	ssize_t n;
	char type;
	pid_t pid;
	int rc;

	n = ipc_recv(control, msg, sizeof(msg), 0, &info);
	if (n == 0 || n == -ECONNRESET)
		exit(0); /* the supervisor closed the control socket */
	if (n < 0) {
		fprintf(stderr, "safepy zygote: control socket: %s\n", strerror((int)-n));
		exit(ZYGOTE_EXIT_SETUP);
	}
	if (ipc_zygote_msg_get(msg, (size_t)n, &type, &id, &flags) < 0 ||
	    type != IPC_ZYGOTE_SPAWN || (flags & ~IPC_SPAWN_FLAGS) || info.n_fds != 1 ||
	    info.truncated) {
		for (size_t i = 0; i < info.n_fds; i++)
			close(info.fds[i]);
		fprintf(stderr, "safepy zygote: malformed control message\n");
		exit(ZYGOTE_EXIT_SETUP);
	}
	spawned.bound = (flags & IPC_SPAWN_TRACED) != 0;
	spawned.cold = (flags & IPC_SPAWN_COLD) != 0;
	pid = spawn(&spawned, info.fds[0]);
	close(info.fds[0]);
	if (pid < 0)
		rc = control_send(control, IPC_ZYGOTE_ERR, id, (uint32_t)errno);
	else
		rc = control_send(control, IPC_ZYGOTE_PID, id, (uint32_t)pid);
	return rc < 0 ? -1 : 0;
}

void zygote_main(const struct zygote_config *cfg)
{
	struct sandbox_config sb = cfg->sandbox;
	struct policy *policy = NULL, *nothreads = NULL, *gate = NULL;
	int fd = cfg->control_fd, sfd, rc;
	sigset_t chld;

	/* The layer's writes into our own code go through a handle on our memory, opened while
	 * the process may (before its namespace, before it is made non-dumpable; a supervisor
	 * run as root keeps /proc read-only, and the layer writes otherwise then). */
	zygote_self_mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	/* Before Python: unshare(CLONE_NEWUSER) needs a single-threaded process; and before
	 * the process is made non-dumpable, which gives its /proc files (uid_map) to root. */
	rc = sandbox_zygote_namespaces(&sb);
	if (rc < 0)
		fprintf(stderr,
		        "safepy zygote: mapping our uid in the workers' namespace: %s (workers "
		        "run without a user namespace of their own)\n",
		        strerror(-rc));
	/* Workers share our memory: keep it unreadable from outside, and die with the
	 * supervisor. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    getppid() == 1) {
		fprintf(stderr, "safepy zygote: prctl: %s\n", strerror(errno));
		exit(ZYGOTE_EXIT_SETUP);
	}
	if (chdir("/") < 0) {
		fprintf(stderr, "safepy zygote: chdir /: %s\n", strerror(errno));
		exit(ZYGOTE_EXIT_SETUP);
	}
	/* matplotlib keeps its font list in the one directory the supervisor lets us write; it
	 * builds it once, and later zygotes read it. */
	if (cfg->cache)
		setenv("MPLCONFIGDIR", cfg->cache, 1);
	/* Numeric libraries run in the calling thread: a pool made in the zygote would be lost at
	 * each fork, and one made in a call would be missing from the copy of its process that
	 * keeps the session's state (the library would wait for it for ever: such a call is not
	 * kept, chain.c). OMP_THREAD_LIMIT holds even where a function asks OpenMP for more
	 * threads (scikit-learn's n_threads). */
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	setenv("OMP_NUM_THREADS", "1", 1);
	setenv("OMP_THREAD_LIMIT", "1", 1);
	setenv("MKL_NUM_THREADS", "1", 1);
	/* matplotlib renders without a display, into memory (pydata.py). */
	setenv("MPLBACKEND", "Agg", 1);
	rc = interp_init(cfg);
	if (zygote_self_mem >= 0)
		close(zygote_self_mem);
	zygote_self_mem = -1;
	if (rc < 0)
		exit(ZYGOTE_EXIT_PYTHON);
	/* Every worker may hold a session, so it gets the fork gate and the session policy;
	 * both programs are generated here, once. */
	rc = policy_build_session(&policy);
	if (rc == 0)
		rc = policy_build_session_nothreads(&nothreads);
	if (rc == 0)
		rc = policy_gate_build(&gate);
	if (rc < 0) {
		fprintf(stderr, "safepy zygote: building the seccomp policy failed: %s\n",
		        strerror(-rc));
		exit(ZYGOTE_EXIT_POLICY);
	}
	sb.policy = policy;
	sb.policy_nothreads = nothreads;
	sb.gate = gate;
	if (pyfork_zygote_hooks() < 0 || freeze_gc() < 0) {
		PyErr_Print();
		exit(ZYGOTE_EXIT_PYTHON);
	}
	/* Workers are our children: we reap them and report each exit status. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 ||
	    (sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		fprintf(stderr, "safepy zygote: signalfd: %s\n", strerror(errno));
		exit(ZYGOTE_EXIT_SETUP);
	}
	rc = send_roots(fd);
	if (rc == -1) {
		fprintf(stderr, "safepy zygote: cannot tell where the modules are\n");
		exit(ZYGOTE_EXIT_PYTHON);
	}
	if (rc < 0 || control_send(fd, IPC_ZYGOTE_READY, (uint32_t)capture_keeps_at(),
	                           (uint32_t)((uint64_t)capture_keeps_at() >> 32)) < 0)
		exit(0);
	for (;;) {
		struct pollfd pfd[2] = {{fd, POLLIN, 0}, {sfd, POLLIN, 0}};

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			exit(ZYGOTE_EXIT_SETUP);
		}
		if ((pfd[1].revents & POLLIN) && reap_workers(sfd, fd) < 0)
			exit(0);
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && serve_spawn(fd, &sb) < 0)
			exit(0);
	}
}
