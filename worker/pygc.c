/* pygc.c - the cyclic collector runs where the interpreter runs Python code, never inside an
 * allocation or another C function's work.
 *
 * CPython 3.11 collects when an allocation of a tracked object takes generation 0 past its
 * threshold: inside whatever C code allocated. A collection runs finalizers (a class's __del__,
 * weakref callbacks, a generator's finally block): the user's code, at a point where the C code
 * holds pointers and sizes across its allocation. tuple(list) makes the tuple, then copies the
 * list's items: a __del__ run by the tuple's allocation that emptied the list and refilled its
 * freed array had the copy take any pointer for an object. No guard of a hook covers that: any
 * allocation is such a point.
 *
 * So in a worker the interpreter's own collection is off for good (the zygote turns it off
 * before it forks). A CPU-time timer (ITIMER_PROF, every TICK_US of the call's CPU time) asks
 * for a collection instead. Its signal handler only queues a pending call: the signal module
 * also runs handlers where C code checks for signals (PyObject_Repr and PyObject_Str do, on an
 * item a list's repr holds without a reference of its own; numpy does), while pending calls
 * run where the evaluation loop checks for them, between two instructions of a Python frame
 * (and in a lock's wait). There the generation is chosen as CPython chooses it: none unless
 * generation 0 is past its threshold, then the oldest past its own, a full collection only
 * when the last one's CPU time is small against the time since (CPython weighs the objects a
 * full collection would look at, which it does not expose). Only while the innermost frame is
 * the user's own code: a collection runs the code's finalizers, and between two instructions
 * of a library's Python code (numpy's sum inside a compiled kernel, a check of the sandbox's
 * between its test and the kernel it guards) a __del__ changed what had been checked (a list
 * grown between explode's two passes, labels written after their check). A tick that comes
 * while a library's frame is innermost collects at a later one, in the user's code.
 *
 * gc.enable, gc.disable and gc.isenabled are that switch, for the code and for the libraries
 * (timeit turns collection off while it times): they never turn the interpreter's own
 * collection back on. gc.collect() collects where it is called, as before. */
#include "interp_internal.h"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#define TICK_US         10000
/* A full collection waits until FULL_SPACING times its last CPU time has passed. */
#define FULL_SPACING    8
/* Asks again (pygc_ask_again) after each tick. */
#define REASKS_PER_TICK 256

static PyObject *collect_fn, *get_count_fn, *get_threshold_fn, *tick_fn;
static int wanted = 1;  /* gc.enable()d: collections are the code's wish */
static int in_call;     /* a call runs: ticks collect */
static int queued;      /* a collection waits among the pending calls */
static int sleeping;    /* the main thread waits in time.sleep */
static int reasked;     /* the signal pending is pygc_ask_again's, not the timer's */
static int reasks_left; /* asks again left until the next tick of the timer */
static pthread_t main_thread;
static PyObject *real_sleep;
static double full_cost; /* CPU seconds of the last full collection of this call */
static double full_end;  /* this process's CPU clock when it ended (0: none yet) */

static double cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Three ints from f(): gc.get_count() or gc.get_threshold(). 0 or -1 (no exception left). */
static int three(PyObject *f, long v[3])
{
	PyObject *t = PyObject_CallNoArgs(f);
	int rc = -1;

	if (t && PyTuple_CheckExact(t) && PyTuple_GET_SIZE(t) == 3) {
		rc = 0;
		for (Py_ssize_t i = 0; i < 3 && rc == 0; i++) {
			v[i] = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
			if (v[i] == -1 && PyErr_Occurred())
				rc = -1;
		}
	}
	Py_XDECREF(t);
	PyErr_Clear();
	return rc;
}

static int collecting; /* a collection of the tick's runs (its finalizers are the code's) */

int pygc_collecting(void)
{
	return collecting > 0;
}

/* The generation a collection of generation's survivors went to. */
static int older(int generation)
{
	return generation < 2 ? generation + 1 : 2;
}

/* Finalizers a collection found wait with their objects alive (pyreentry.c defers them): a
 * cycle with a __del__ survived into the next generation, to be freed only when that one is
 * collected (a loop making such cycles around large buffers ran out of memory meanwhile). Where
 * they may run (the user's own frame is the innermost: where they would run next), they run
 * at once and the survivors' generation is collected again: the cycles go now. (A thread's
 * garbage collected while the main thread waits in threading's join waits for the user's code,
 * its cycles with it.) 1 when they ran. */
static int finalized_now(unsigned long deferred_before)
{
	if (pyreentry_deferred_count() == deferred_before || !pyguard_frame_is_users())
		return 0;
	pyreentry_deferred_run();
	return 1;
}

static void collect(int generation)
{
	double t0 = generation == 2 ? cpu_now() : 0;
	unsigned long deferred = pyreentry_deferred_count();
	PyObject *r;

	collecting++;
	r = PyObject_CallFunction(collect_fn, "i", generation);
	collecting--;
	Py_XDECREF(r);
	PyErr_Clear();
	if (finalized_now(deferred)) {
		collecting++;
		r = PyObject_CallFunction(collect_fn, "i", older(generation));
		collecting--;
		Py_XDECREF(r);
		PyErr_Clear();
	}
	if (generation == 2) {
		full_end = cpu_now();
		full_cost = full_end - t0;
	}
}

/* gc.collect(), the code's or a library's: as CPython's, and when called from the user's own
 * frame, the cycles whose finalizers it found are freed before it returns, as CPython's
 * collection frees them, and counted as it counts them (what each collection freed: a cycle
 * kept alive by its deferred finalizer is freed, and counted, by the second). */
static PyObject *gc_collect(PyObject *self, PyObject *args, PyObject *kw)
{
	unsigned long deferred = pyreentry_deferred_count();
	PyObject *r = PyObject_Call(collect_fn, args, kw), *again;
	long gen = 2;

	(void)self;
	if (!r || !in_call)
		return r;
	if (PyTuple_GET_SIZE(args) == 1 && PyLong_CheckExact(PyTuple_GET_ITEM(args, 0)))
		gen = PyLong_AsLong(PyTuple_GET_ITEM(args, 0));
	else if (PyTuple_GET_SIZE(args) != 0 || (kw && PyDict_GET_SIZE(kw) != 0))
		gen = -1; /* (its generation asked of an object of the code's: not asked again) */
	PyErr_Clear();
	if (gen >= 0 && gen <= 2 && finalized_now(deferred)) {
		again = PyObject_CallFunction(collect_fn, "i", older((int)gen));
		Py_SETREF(r, again ? PyNumber_Add(r, again) : NULL);
		Py_XDECREF(again);
	}
	return r;
}

/* The pending call: a collection of the generation CPython would collect now, if any. Run by
 * the evaluation loop between instructions, with no exception set. In a library's frame only
 * while the code has threads of its own (which could change anything there anyway: the main
 * thread waiting in threading's join collects what they leave). */
static int collect_due(void *unused)
{
	long count[3], threshold[3];

	(void)unused;
	queued = 0;
	/* finalizers deferred while a library ran: the user's frame is the innermost again */
	if (in_call && pyguard_frame_is_users())
		pyreentry_deferred_run();
	if (!in_call || !wanted || (!pyguard_frame_is_users() && worker_python_threads() == 0))
		return 0;
	if (three(get_count_fn, count) == 0 && three(get_threshold_fn, threshold) == 0 &&
	    threshold[0] > 0 && count[0] > threshold[0]) {
		for (int gen = 2; gen >= 0; gen--) {
			if (count[gen] <= threshold[gen])
				continue;
			if (gen == 2 && full_end > 0 &&
			    cpu_now() - full_end < FULL_SPACING * full_cost)
				continue;
			collect(gen);
			break;
		}
	}
	return 0;
}

/* SIGPROF's handler, wherever the signal module runs it (in the main thread): the collection
 * is queued, or, while the main thread waits in time.sleep, made there. */
static PyObject *tick(PyObject *self, PyObject *args)
{
	int timer = !reasked;

	(void)self;
	(void)args;
	reasked = 0;
	if (timer)
		reasks_left = REASKS_PER_TICK;
	if (in_call)
		pyreentry_deferred_tick();
	if (sleeping) {
		sleeping = 0; /* what the collection runs is not the sleep */
		collect_due(NULL);
		sleeping = 1;
	} else if (timer && in_call && wanted && !queued) {
		queued = 1;
		if (Py_AddPendingCall(collect_due, NULL) < 0)
			queued = 0;
	}
	Py_RETURN_NONE;
}

/* Run the tick's handler again at the next point the interpreter checks, for the deferred
 * finalizers (pyreentry.c) that wait for the user's frame to be the innermost one: at most
 * REASKS_PER_TICK times after each tick of the timer. A library running long in Python (openpyxl
 * parsing a workbook) had the handler run at every call and loop of its code, each queueing a
 * collection's look too: 3 times the time the library took alone. Past the budget, the next
 * tick asks again (what waits runs at a tick that finds the user's frame, or within the asks
 * that follow one, or when the call's code ends). */
void pygc_ask_again(void)
{
	if (in_call && reasks_left > 0) {
		reasks_left--;
		reasked = 1;
		(void)PyErr_SetInterruptEx(SIGPROF);
	}
}

/* time.sleep. Pending calls run in a lock's wait (a thread's join, a queue's get) but not in
 * time.sleep, whose wait only runs the signals' handlers: while the main thread sleeps in it, a
 * tick collects where it comes, in the sleep, which holds nothing (the collection's
 * finalizers run as if the sleep had called them). Only the main thread's sleep (the handler
 * runs there, and only there), and only from the moment the argument is a number: the real
 * sleep would ask an object for its __index__, the code's, in the sleep. */
static PyObject *sleep_(PyObject *self, PyObject *arg)
{
	PyObject *secs, *r;
	int was = sleeping;

	(void)self;
	if (!in_call || !pthread_equal(pthread_self(), main_thread))
		return PyObject_CallOneArg(real_sleep, arg);
	if (PyFloat_Check(arg) || PyLong_Check(arg))
		secs = Py_NewRef(arg);
	else if (!(secs = PyNumber_Index(arg)))
		return NULL;
	sleeping = 1;
	r = PyObject_CallOneArg(real_sleep, secs);
	sleeping = was;
	Py_DECREF(secs);
	return r;
}

static PyObject *gc_enable(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	wanted = 1;
	Py_RETURN_NONE;
}

static PyObject *gc_disable(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	wanted = 0;
	Py_RETURN_NONE;
}

int pygc_pause(int paused)
{
	int was = !wanted;

	wanted = !paused;
	return was;
}

static PyObject *gc_isenabled(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(wanted);
}

static PyMethodDef tick_def = {"_collect_tick", tick, METH_VARARGS,
                               "Queue a collection of what the generations' thresholds ask for."};
static PyMethodDef switches[] = {
    {"collect", (PyCFunction)(void (*)(void))gc_collect, METH_VARARGS | METH_KEYWORDS,
     "Run the garbage collector."},
    {"enable", gc_enable, METH_NOARGS, "Enable automatic garbage collection."},
    {"disable", gc_disable, METH_NOARGS, "Disable automatic garbage collection."},
    {"isenabled", gc_isenabled, METH_NOARGS, "Returns true if automatic collection is enabled."},
};
static PyMethodDef sleep_def = {"sleep", sleep_, METH_O,
                                "sleep(seconds)\n\nDelay execution for a given number of seconds."};

static int sleep_init(void)
{
	PyObject *time = PyImport_ImportModule("time"), *name = PyUnicode_FromString("time"), *f;
	int rc = -1;

	if (time && name && (real_sleep = PyObject_GetAttrString(time, "sleep"))) {
		f = PyCFunction_NewEx(&sleep_def, NULL, name);
		rc = f ? PyObject_SetAttrString(time, "sleep", f) : -1;
		Py_XDECREF(f);
	}
	Py_XDECREF(name);
	Py_XDECREF(time);
	return rc;
}

int pygc_init(void)
{
	PyObject *gc = PyImport_ImportModule("gc"), *name;
	int rc = -1;

	if (!gc)
		return -1;
	collect_fn = PyObject_GetAttrString(gc, "collect");
	get_count_fn = PyObject_GetAttrString(gc, "get_count");
	get_threshold_fn = PyObject_GetAttrString(gc, "get_threshold");
	tick_fn = PyCFunction_New(&tick_def, NULL);
	name = PyUnicode_FromString("gc");
	if (collect_fn && get_count_fn && get_threshold_fn && tick_fn && name) {
		rc = 0;
		for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]) && rc == 0; i++) {
			PyObject *f = PyCFunction_NewEx(&switches[i], NULL, name);

			rc = f ? PyObject_SetAttrString(gc, switches[i].ml_name, f) : -1;
			Py_XDECREF(f);
		}
	}
	Py_XDECREF(name);
	Py_DECREF(gc);
	return rc < 0 ? -1 : sleep_init();
}

PyObject *pygc_tick_handler(void)
{
	return tick_fn;
}

void pygc_zygote_ready(void)
{
	PyGC_Disable();
}

static void timer_set(long us)
{
	struct itimerval it = {{0, us}, {0, us}};

	(void)setitimer(ITIMER_PROF, &it, NULL);
}

void pygc_call_begin(void)
{
	/* A new process's CPU clock starts again: a full collection may come at once. */
	PyGC_Disable();
	full_end = full_cost = 0;
	main_thread = pthread_self();
	sleeping = 0;
	in_call = 1;
	reasked = 0;
	reasks_left = REASKS_PER_TICK;
	timer_set(TICK_US);
}

void pygc_call_end(void)
{
	timer_set(0);
	in_call = 0;
}

/* ITIMER_PROF's signal goes to a thread of the process that does not block it, the one
 * running if it can: to a thread the code started, whose handler only marks the signal for the
 * main thread, which sees it when it next runs Python. A main thread waiting for that thread
 * (join, a queue) would not collect the thread's garbage until the thread ended. The code's
 * threads start with it blocked (a thread takes its creator's mask), so it goes to the main
 * thread, and wakes it in its wait: a lock's wait runs the handler and pending calls, time.sleep
 * runs the handler (above). */
void pygc_thread_start(sigset_t *was)
{
	sigset_t prof;

	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &prof, was);
}

void pygc_thread_started(const sigset_t *was)
{
	pthread_sigmask(SIG_SETMASK, was, NULL);
}
