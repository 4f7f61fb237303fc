/* runner.c - the life of a worker after its sandbox, and of every process forked from it.
 * It parks: calls fork(), which the fork gate holds as a notification until the supervisor
 * answers. The supervisor lets the fork happen, or makes the call return a command word
 * (ipc.h): run a call, warm up, reap. The process decides nothing itself: which process holds
 * a session's state, which one runs a call and when anything forks is the supervisor's state.
 * Runs under seccomp (read and write on the channel, the session policy); a broken channel or
 * an unknown answer ends the process with a WORKER_EXIT_* code. */
#include "worker_internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* glibc's fork without its atfork handlers (glibc 2.34+): the clone with glibc's fork flags,
 * which is what the gate and the session policy expect. */
extern pid_t _Fork(void);

int worker_python_threads(void)
{
	PyThreadState *t = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
	int n = -1;

	for (; t && n < RUN_THREADS_MAX; t = PyThreadState_Next(t))
		n++;
	return n < 0 ? 0 : n;
}

/* In the one-thread copy of a process that had other threads: what they held of Python's own
 * is let go, as in the child of os.fork: threading forgets them (threading.enumerate() listed
 * them in the session's next calls), logging's locks are made anew (one a thread held as it
 * logged blocked every later logging call of the session). The other fork hooks (the random
 * generators' reseeds) stay dropped: the copy is the session, with its state as it was. Runs
 * the libraries' code, armed, under the call's deadline. */
static void after_copy(void)
{
	static const char *const hooks[][2] = {
	    {"threading", "_after_fork"},
	    {"logging", "_after_at_fork_child_reinit_locks"},
	};

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		PyObject *name = PyUnicode_FromString(hooks[i][0]);
		PyObject *m = name ? PyImport_GetModule(name) : NULL;
		PyObject *f = m ? PyObject_GetAttrString(m, hooks[i][1]) : NULL;
		PyObject *r = f ? PyObject_CallNoArgs(f) : NULL;

		Py_XDECREF(r);
		Py_XDECREF(f);
		Py_XDECREF(m);
		Py_XDECREF(name);
		PyErr_Clear();
	}
}

/* Fork, or be told what to do: returns 0 in a new child, a pid in the parent, a command
 * word, or -errno. No Python code runs around it (but in a one-thread copy: after_copy). */
static long park(void)
{
	sigset_t all, was;
	pid_t v;
	int err, copy;

	/* No signal reaches this thread while it parks: the deadline's SIGUSR1 (sent as a call
	 * ends, or to a runner with threads forking its one-thread copy) would end the wait at
	 * the gate with EINTR, the supervisor's answer finding no one, or start the fork again.
	 * Held until the park returns, it arrives as if sent a moment later: in the code, or at
	 * the next call's start, which drops it. SIGKILL still ends the wait. */
	sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &was);
	pyfork_drop_hooks();
	/* With other threads, glibc's own fork: it takes the allocator's and stdio's locks
	 * around the clone, so no lock another thread held (a thread inside malloc) is held for
	 * good in the copy. Alone, no lock can be held: the plain clone. */
	copy = worker_python_threads() > 0;
	PyOS_BeforeFork();
	v = copy ? fork() : _Fork();
	err = errno;
	if (v == 0) {
		if (copy)
			pyreentry_after_copy();
		PyOS_AfterFork_Child();
	} else {
		PyOS_AfterFork_Parent();
	}
	(void)pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (v == 0) {
		if (copy)
			after_copy();
		return 0;
	}
	return v < 0 ? -err : v;
}

/* The call's code: the CODE frame of this sequence. Frames before it were meant for a
 * process of this chain that is gone (a runner killed before it read its code): skipped.
 * Returns the payload (malloc'd) and its length. */
static char *code_frame(uint32_t seq, size_t *len)
{
	for (;;) {
		char type, *payload = NULL;
		size_t n = 0;
		int rc = ipc_frame_read(POLICY_FD_CHANNEL, &type, &payload, &n, IPC_FRAME_MAX);

		if (rc == -EPIPE)
			_exit(WORKER_EXIT_OK); /* the supervisor is gone */
		if (rc < 0)
			_exit(WORKER_EXIT_CHANNEL);
		if (type == IPC_FRAME_CODE && n >= IPC_SEQ_BYTES &&
		    (ipc_get_u32((const unsigned char *)payload) & IPC_PARK_ARG_MASK) == seq) {
			*len = n;
			return payload;
		}
		free(payload);
	}
}

/* Run one call's code and send its RESULT frame, which repeats the call's sequence. */
static void run_call(uint32_t seq)
{
	struct run_outcome out;
	unsigned char echo[IPC_SEQ_BYTES];
	size_t n = 0, rlen = 0;
	char *frame = code_frame(seq, &n), *result;

	memcpy(echo, frame, IPC_SEQ_BYTES);
	/* The supervisor never sends NUL in code (the client's is refused before). */
	if (memchr(frame + IPC_SEQ_BYTES, '\0', n - IPC_SEQ_BYTES))
		_exit(WORKER_EXIT_CHANNEL);
	run_outcome_init(&out);
	interp_run(frame + IPC_SEQ_BYTES, &out);
	free(frame);
	/* The workspace's files the code opened end with the call: none reaches the session's
	 * state (the supervisor checks). */
	(void)syscall(SYS_close_range, POLICY_FD_CHANNEL + 1, ~0U, 0);
	out.threads = worker_python_threads();
	result = ipc_outcome_encode(&out, &rlen);
	if (!result || ipc_frame_write(POLICY_FD_CHANNEL, IPC_FRAME_RESULT, echo, sizeof(echo),
	                               result, rlen) < 0)
		_exit(WORKER_EXIT_INTERP);
	free(result);
	run_outcome_clear(&out);
}

int runner_request(enum ipc_request_kind kind, const void *data, size_t len, int *status,
                   char **reply, size_t *rlen, int *fd)
{
	static uint32_t next_id;
	unsigned char head[IPC_REQUEST_HEADER];
	uint32_t id = ++next_id;
	int rc;

	ipc_put_u32(head, id);
	head[4] = (unsigned char)kind;
	rc = ipc_frame_write(POLICY_FD_CHANNEL, IPC_FRAME_REQUEST, head, sizeof(head), data, len);
	if (rc < 0)
		return rc;
	for (;;) {
		char type, *payload = NULL;
		size_t n = 0;

		int passed = -1;

		rc = ipc_frame_read_fd(POLICY_FD_CHANNEL, &type, &payload, &n, IPC_FRAME_MAX,
		                       &passed);
		if (rc < 0)
			return rc;
		if (type != IPC_FRAME_REPLY || n < IPC_REPLY_HEADER ||
		    ipc_get_u32((const unsigned char *)payload) != id || (passed >= 0 && !fd)) {
			if (passed >= 0)
				close(passed);
			free(payload);
			return -EPROTO;
		}
		if (fd)
			*fd = passed;
		*status = (int)ipc_get_u32((const unsigned char *)payload + 4);
		*rlen = n - IPC_REPLY_HEADER;
		memmove(payload, payload + IPC_REPLY_HEADER, *rlen + 1);
		*reply = payload;
		return 0;
	}
}

/* Reap every finished child: the process that ran a call which did not commit. */
static void reap(void)
{
	int status;

	while (waitpid(-1, &status, WNOHANG) > 0)
		;
}

void runner_serve(void)
{
	for (;;) {
		enum ipc_park_cmd cmd;
		uint32_t arg;
		long v = park();

		if (v == -ENOSYS)
			_exit(WORKER_EXIT_OK); /* no listener left: the supervisor is gone */
		if (v == -EAGAIN || v == -ENOMEM)
			continue; /* the fork it allowed failed: the supervisor sees no child */
		if (v == -EPERM)
			_exit(WORKER_EXIT_REFUSED);
		if (v < 0)
			_exit(WORKER_EXIT_GATE);
		if (!ipc_park_decode(v, &cmd, &arg))
			continue; /* forked: parent and child each park again */
		switch (cmd) {
		case IPC_PARK_RUN:
			run_call(arg);
			break;
		case IPC_PARK_WARM:
			interp_warm_up();
			break;
		case IPC_PARK_REAP:
			reap();
			break;
		default:
			_exit(WORKER_EXIT_GATE);
		}
	}
}
