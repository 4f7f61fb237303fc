/* interp.c - the restricted interpreter's life: CPython initialised once in the zygote (isolated,
 * no site, audit hook first, allowed modules imported, output captured, Python layer built), and
 * the armed per-call run: compile (from-imports rewritten), run in the session's __main__, fill
 * the outcome. interp_init: 0 or -1 (message on stderr); helpers: 0 / -1 with an exception set. */
#include "interp_internal.h"

#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define RESULT_TMP          " safepy value" /* not an identifier: user code cannot name it */
/* Writing more than this many times max_output in all (both streams) raises
 * OutputLimitExceeded in the code. */
#define OUTPUT_FLOOD_FACTOR 1024
/* Statements nested deeper than this (blocks in blocks in ...) are refused. */
#define STMT_NESTING_MAX    200
/* Address space set aside while the code runs and given back on MemoryError, so that the
 * error can still be formatted and reported under RLIMIT_AS. A mapping of its own, never
 * touched: it costs the call no page faults, and unmapping it surely returns the space (a
 * malloc'd block could come from the heap's middle). */
#define MEMORY_RESERVE      (1u << 20)

int zygote_self_mem = -1;
static const struct zygote_config *zcfg;
static int python_layer = 1;
static volatile sig_atomic_t deadline_hit;
static volatile sig_atomic_t deadline_asks; /* how many times the deadline asked this call */

static PyObject *real_compile; /* builtins.compile */
static int ast_classes_take(void);
static int threads_start_through_entry(void);
static PyObject *timeout_error; /* raised in the code by the deadline handler */
static PyObject *timeout_again; /* raised when it asks again: not an Exception */
static PyObject *user_globals;  /* the user's namespace, created by the first run */
static PyObject *user_module;   /* its module, sys.modules['__main__'] */

/* ---- start-up (zygote) --------------------------------------------------------------- */

static int import_and_keep(const char *name)
{
	PyObject *m = PyImport_ImportModule(name);

	if (!m)
		return -1;
	Py_DECREF(m);
	return 0;
}

/* Lazily imported helpers and caches that would need a file in the worker. */
static int prewarm(void)
{
	static const char *const codecs[] = {
	    "encodings.ascii",
	    "encodings.latin_1",
	    "encodings.utf_8",
	    "encodings.utf_8_sig",
	    "encodings.utf_16",
	    "encodings.utf_32",
	    "encodings.cp1252",
	    "encodings.cp437",
	    "encodings.iso8859_15",
	    "encodings.idna",
	    "encodings.punycode",
	    "encodings.raw_unicode_escape",
	    "encodings.unicode_escape",
	    "encodings.hex_codec",
	    "encodings.base64_codec",
	    "encodings.rot_13",
	    /* the East Asian codecs, with their compiled tables (a worker loads no compiled
	     * module; their classes are the libraries', whose states setstate takes) */
	    "encodings.shift_jis",
	    "encodings.shift_jis_2004",
	    "encodings.shift_jisx0213",
	    "encodings.cp932",
	    "encodings.euc_jp",
	    "encodings.euc_jis_2004",
	    "encodings.euc_jisx0213",
	    "encodings.iso2022_jp",
	    "encodings.iso2022_jp_1",
	    "encodings.iso2022_jp_2",
	    "encodings.iso2022_jp_2004",
	    "encodings.iso2022_jp_3",
	    "encodings.iso2022_jp_ext",
	    "encodings.iso2022_kr",
	    "encodings.gb2312",
	    "encodings.gbk",
	    "encodings.gb18030",
	    "encodings.hz",
	    "encodings.big5",
	    "encodings.big5hkscs",
	    "encodings.cp950",
	    "encodings.euc_kr",
	    "encodings.cp949",
	    "encodings.johab",
	    NULL,
	};
	/* Standard modules kept frozen in CPython that served modules import (pathlib, imported
	 * late by argparse's users, imports ntpath): importlib runs a frozen module's code with
	 * exec, which gives code that names no builtins the sandbox's (pyguard.c), and its own
	 * imports would then be refused. */
	static const char *const frozen[] = {"ntpath", "importlib.util", "importlib.machinery",
	                                     NULL};
	static const char *const code =
	    "import datetime, time\n"
	    "datetime.datetime.strptime('2024-01-02 03:04:05', '%Y-%m-%d %H:%M:%S')\n"
	    "time.localtime(); time.strftime('%c'); time.tzname\n"
	    "try:\n"
	    "    import hashlib; hashlib.sha256(b'x').hexdigest(); hashlib.md5(b'x').hexdigest()\n"
	    "except Exception: pass\n"
	    "try:\n"
	    "    import decimal; decimal.Decimal('1.1') + 1\n"
	    "except Exception: pass\n"
	    "'x'.encode('idna'); 'x'.encode('cp1252')\n"
	    /* help(obj) renders with it (pylayer.c) */
	    "try:\n"
	    "    import pydoc\n"
	    "except Exception: pass\n";
	PyObject *g, *r;

	for (const char *const *c = codecs; *c; c++)
		if (import_and_keep(*c) < 0)
			PyErr_Clear(); /* a codec this build lacks is simply not offered */
	for (const char *const *m = frozen; *m; m++)
		if (import_and_keep(*m) < 0)
			return -1;
	g = PyDict_New();
	if (!g)
		return -1;
	if (PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0) {
		Py_DECREF(g);
		return -1;
	}
	r = PyRun_String(code, Py_file_input, g, g);
	Py_DECREF(g);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

/* The workers' HOME: nobody's, which does not exist. os.path.expanduser() reads it (a "~/data.csv"
 * a library is given then fails to open as any path does); without it, it would ask for the
 * passwd entry of getuid(), a system call the workers' filter does not allow. Set after the
 * zygote's own imports (matplotlib keeps its caches under the real one). */
static int worker_home(void)
{
	PyObject *g = PyDict_New(), *r = NULL;

	if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0)
		r = PyRun_String("import os\nos.environ['HOME'] = '/nonexistent'\n", Py_file_input,
		                 g, g);
	Py_XDECREF(g);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

static PyObject *real_builtin(const char *name)
{
	PyObject *b = PyEval_GetBuiltins(); /* borrowed; the zygote's real builtins */
	PyObject *f = b ? PyDict_GetItemString(b, name) : NULL;

	if (!f)
		PyErr_Format(PyExc_RuntimeError, "builtin %s missing", name);
	return f;
}

/* SIGUSR1 (the supervisor's deadline) and SIGXCPU (the CPU soft limit) raise TimeoutError in
 * the running code, so what it printed so far comes back; a hard kill follows if it does not
 * end. The deadline asks again within the grace: code that caught the TimeoutError and went
 * on (an except Exception around each item; scikit-learn's around each fit of a search) then
 * gets a TimeoutError that is a BaseException only, as KeyboardInterrupt is, which such
 * clauses let through: it ends with what it printed, where the kill would lose it. */
static PyObject *deadline_handler(PyObject *self, PyObject *args)
{
	int sig = 0, again = deadline_hit != 0;

	if (PyTuple_GET_SIZE(args) > 0)
		sig = (int)PyLong_AsLong(PyTuple_GET_ITEM(args, 0));
	deadline_hit = sig ? sig : 1;
	deadline_asks++;
	if (again)
		PyErr_SetString(
		    timeout_again,
		    "the time limit was reached, and the code went on after the "
		    "TimeoutError raised in it (an except clause caught it): this one is "
		    "not an Exception, so except Exception lets it through");
	else
		PyErr_SetString(timeout_error, sig == SIGXCPU ? "CPU time limit reached"
		                                              : "wall-clock time limit reached");
	return NULL;
}

static PyMethodDef deadline_def = {"_deadline", deadline_handler, METH_VARARGS,
                                   "Raise the timeout in the running code."};

/* The deadline handler, and _signal's signal and getsignal (built-in functions; the signal
 * module's are Python wrappers that convert to enums, whose globals a call could change, and
 * whose enum code touches dozens of pages of a freshly forked process), kept to put the
 * handler back before each call. */
static PyObject *deadline_h, *signal_fn, *getsignal_fn;
/* This process's warm-up armed them, and no code ran since: its call need not. */
static int signals_warm;

/* The handler of sig, installed unless it is (the signal module says which handler it runs;
 * code reaches the disposition in the kernel only through it). Returns 0 or -1. */
static int signal_arm(int sig, PyObject *handler)
{
	PyObject *now = PyObject_CallFunction(getsignal_fn, "i", sig), *r;

	if (now == handler) {
		Py_DECREF(now);
		return 0;
	}
	Py_XDECREF(now);
	r = PyObject_CallFunction(signal_fn, "iO", sig, handler);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

/* Install the handlers of both signals and of the collector's tick (SIGPROF, pygc.c), and
 * unblock them. Returns 0, or -1 with an error. */
static int signals_arm(void)
{
	sigset_t both;
	int rc = signal_arm(SIGUSR1, deadline_h) < 0 || signal_arm(SIGXCPU, deadline_h) < 0 ||
	                 signal_arm(SIGPROF, pygc_tick_handler()) < 0
	             ? -1
	             : 0;

	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGXCPU);
	sigaddset(&both, SIGPROF);
	(void)pthread_sigmask(SIG_UNBLOCK, &both, NULL);
	return rc;
}

static int signals_setup(void)
{
	PyObject *signal = PyImport_ImportModule("_signal");

	if (!signal)
		return -1;
	signal_fn = PyObject_GetAttrString(signal, "signal");
	getsignal_fn = PyObject_GetAttrString(signal, "getsignal");
	deadline_h = PyCFunction_New(&deadline_def, NULL);
	Py_DECREF(signal);
	if (!signal_fn || !getsignal_fn || !deadline_h || signals_arm() < 0)
		return -1;
	timeout_error = PyExc_TimeoutError;
	timeout_again = PyErr_NewExceptionWithDoc(
	    "builtins.TimeoutError",
	    "The time limit, asked again after the code caught the first TimeoutError: a "
	    "BaseException only, as KeyboardInterrupt is.",
	    PyExc_BaseException, NULL);
	return timeout_again ? 0 : -1;
}

static int add_site_packages(void)
{
	PyObject *site = PyImport_ImportModule("site"), *dirs, *path;
	int rc = -1;

	if (!site)
		return -1;
	dirs = PyObject_CallMethod(site, "getsitepackages", NULL);
	path = PySys_GetObject("path"); /* borrowed */
	if (dirs && path) {
		rc = 0;
		for (Py_ssize_t i = 0; i < PyList_Size(dirs) && rc == 0; i++)
			rc = PyList_Append(path, PyList_GET_ITEM(dirs, i));
	}
	Py_XDECREF(dirs);
	Py_DECREF(site);
	return rc;
}

/* collections.OrderedDict's C type (3.11's) takes a node, or an index into its node table,
 * before a lookup that runs the user's __eq__ and uses it after: an __eq__ that deleted a key
 * or cleared the dict left pop, move_to_end and item assignment on a freed node (any memory
 * read and written). collections is imported with the C type hidden, so its own pure Python
 * OrderedDict, the same API over a dict and links of its own, is the one every library and
 * the user's code get; the C type is then nowhere to be found. Its links are made when an
 * OrderedDict is made, as the C type's are, not in __init__ alone: a subclass whose __init__
 * does not call OrderedDict's (scipy's LRUDict, under quad_vec) failed at its first item. */
static const char odict_pure_py[] =
    "import sys, _collections\n"
    "if 'collections' in sys.modules:\n"
    "    raise RuntimeError('collections was imported before OrderedDict was chosen')\n"
    "c_type = _collections.OrderedDict\n"
    "del _collections.OrderedDict\n"
    "import collections\n"
    "if collections.OrderedDict is c_type or type(collections.OrderedDict) is not type:\n"
    "    raise RuntimeError('collections kept the C OrderedDict')\n"
    "def __new__(cls, /, *args, **kwds):\n"
    "    self = dict.__new__(cls)\n"
    "    self._OrderedDict__hardroot = collections._Link()\n"
    "    self._OrderedDict__root = root = collections._proxy(self._OrderedDict__hardroot)\n"
    "    root.prev = root.next = root\n"
    "    self._OrderedDict__map = {}\n"
    "    return self\n"
    "collections.OrderedDict.__new__ = __new__\n";

/* Run the zygote's own Python source src in a namespace of its own (its frames, in a
 * traceback, are "<sandbox>"'s). 0 or -1. */
static int zygote_run(const char *src)
{
	PyObject *g = PyDict_New(), *code = NULL, *r = NULL;

	if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0 &&
	    (code = Py_CompileString(src, "<sandbox>", Py_file_input)))
		r = PyEval_EvalCode(code, g, g);
	Py_XDECREF(code);
	Py_XDECREF(g);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

/* concurrent.futures as the sandbox has it: a worker has one thread and no processes, so its
 * executors run each task when it is submitted, in the call's own thread (scikit-learn's n_jobs
 * does the same), and hand back done futures: map(), submit(), as_completed() and wait() answer
 * as a pool's would, the tasks taking turns (as_completed in the order they completed, as a
 * pool's: the set it was given had it yield in an order of their addresses). Its futures,
 * waits and exceptions are the real module's; its pools, threads and process machinery are not
 * reached. A task that waits for
 * one submitted after it (a queue's get) would wait until the time limit: a wait on a
 * condition (queue.Queue, threading.Event, Semaphore, Barrier) with no timeout, while no other
 * thread runs, raises RuntimeError saying so. */
static const char futures_py[] =
    "import sys, types\n"
    "import concurrent\n"
    "import concurrent.futures as real\n"
    "from concurrent.futures import _base\n"
    "_completions = __import__('itertools').count()\n"
    "class ThreadPoolExecutor(_base.Executor):\n"
    "    \"\"\"An executor that runs each task when it is submitted, in the call's own thread:\n"
    "    the sandbox has no threads or processes. Results, exceptions and the order of map()\n"
    "    are a pool's; the tasks run one after another.\"\"\"\n"
    "    def __init__(self, max_workers=None, thread_name_prefix='', initializer=None,\n"
    "                 initargs=()):\n"
    "        if max_workers is not None and max_workers <= 0:\n"
    "            raise ValueError('max_workers must be greater than 0')\n"
    "        if initializer is not None and not callable(initializer):\n"
    "            raise TypeError('initializer must be a callable')\n"
    "        self._max_workers = max_workers or 1\n"
    "        self._initializer, self._initargs = initializer, initargs\n"
    "        self._started = self._shutdown = False\n"
    "    def submit(self, fn, /, *args, **kwargs):\n"
    "        if self._shutdown:\n"
    "            raise RuntimeError('cannot schedule new futures after shutdown')\n"
    "        if not self._started:\n"
    "            self._started = True\n"
    "            if self._initializer is not None:\n"
    "                self._initializer(*self._initargs)\n"
    "        future = _base.Future()\n"
    "        future.set_running_or_notify_cancel()\n"
    "        try:\n"
    "            result = fn(*args, **kwargs)\n"
    "        except (Exception, SystemExit) as e:  # (a pool's thread keeps exit() too)\n"
    "            future.set_exception(e)\n"
    "        else:\n"
    "            future.set_result(result)\n"
    "        future._completed_as = next(_completions)\n"
    "        return future\n"
    "    submit.__doc__ = _base.Executor.submit.__doc__\n"
    "    def shutdown(self, wait=True, *, cancel_futures=False):\n"
    "        self._shutdown = True\n"
    "    shutdown.__doc__ = _base.Executor.shutdown.__doc__\n"
    "class ProcessPoolExecutor(ThreadPoolExecutor):\n"
    "    __doc__ = ThreadPoolExecutor.__doc__\n"
    "    def __init__(self, max_workers=None, mp_context=None, initializer=None, initargs=(),\n"
    "                 *, max_tasks_per_child=None):\n"
    "        super().__init__(max_workers, '', initializer, initargs)\n"
    "m = types.ModuleType('concurrent.futures', real.__doc__)\n"
    "m.__all__ = ('FIRST_COMPLETED', 'FIRST_EXCEPTION', 'ALL_COMPLETED', 'CancelledError',\n"
    "             'TimeoutError', 'BrokenExecutor', 'InvalidStateError', 'Future', 'Executor',\n"
    "             'wait', 'as_completed', 'ThreadPoolExecutor', 'ProcessPoolExecutor')\n"
    "for cls in (ThreadPoolExecutor, ProcessPoolExecutor):\n"
    "    cls.__module__ = 'concurrent.futures'\n"
    "    setattr(m, cls.__name__, cls)\n"
    "for name in m.__all__[:11]:\n"
    "    setattr(m, name, getattr(real, name))\n"
    "def as_completed(fs, timeout=None):\n"
    "    fs = set(fs)\n"
    "    done = sorted((f for f in fs if isinstance(getattr(f, '_completed_as', None), int)),\n"
    "                  key=lambda f: f._completed_as)\n"
    "    yield from done\n"
    "    if len(done) < len(fs):\n"
    "        yield from real.as_completed(fs.difference(done), timeout)\n"
    "as_completed.__doc__ = real.as_completed.__doc__\n"
    "as_completed.__module__ = 'concurrent.futures'\n"
    "m.as_completed = as_completed\n"
    "sys.modules['concurrent.futures'] = concurrent.futures = m\n"
    "import threading, _thread\n"
    "real_wait = threading.Condition.wait\n"
    "def wait(self, timeout=None):\n"
    "    if (timeout is None and _thread._count() == 0 and not threading._limbo and\n"
    "            len(threading._active) <= 1):\n"
    "        raise RuntimeError('this wait would never end: no other thread runs to notify it '\n"
    "                           '(in the sandbox an executor runs each task when it is '\n"
    "                           'submitted, in the call\\'s own thread: a task cannot wait '\n"
    "                           'for one submitted after it)')\n"
    "    return real_wait(self, timeout)\n"
    "wait.__doc__, wait.__module__, wait.__qualname__ = real_wait.__doc__, 'threading', \\\n"
    "    'Condition.wait'\n"
    "threading.Condition.wait = wait\n";

/* asyncio as the sandbox has it: an event loop of callbacks, timers, futures and tasks, with
 * no file descriptor to watch (a worker has no sockets, pipes, subprocesses or signals to
 * wait for). Its selector waits for the next timer; a loop with nothing ready and no timer
 * would wait forever, and raises RuntimeError saying so. The default executor is the sandbox's
 * (concurrent.futures above: each task runs when it is submitted), so run_in_executor and
 * to_thread run the function in the call's own thread, and the loop's shutdown waits for no
 * thread. asyncio.SelectorEventLoop and DefaultEventLoopPolicy are these, so
 * set_event_loop_policy(None) comes back to them. The tasks and futures are asyncio's pure
 * Python ones: its C accelerator's are not loaded (their callbacks' lists and a task's step
 * trusted state across the code's __eq__ and __del__); a task's stack is empty (frames are
 * out of reach). With threads allowed, a thread may hand the loop work (call_soon_threadsafe):
 * while one runs, the loop looks every 5 ms. asyncio is imported without ssl, as on a
 * build without it (a third of its import time; there is no network to speak TLS on). */
static const char asyncio_py[] =
    "import sys, time\n"
    "had_ssl = sys.modules.get('ssl', False)\n"
    "sys.modules['ssl'] = None\n"
    "try:\n"
    "    import asyncio\n"
    "finally:\n"
    "    if had_ssl is False:\n"
    "        del sys.modules['ssl']\n"
    "    else:\n"
    "        sys.modules['ssl'] = had_ssl\n"
    "from asyncio import base_events, events, tasks\n"
    "import threading, _thread\n"
    "def others():\n"
    "    return _thread._count() > 0 or threading._limbo or len(threading._active) > 1\n"
    "class _Timers:\n"
    "    def select(self, timeout=None):\n"
    "        # (a thread the code started may hand the loop work: looked for every 5 ms)\n"
    "        if (timeout is None or timeout > 0.005) and others():\n"
    "            time.sleep(0.005)\n"
    "            return []\n"
    "        if timeout is None:\n"
    "            raise RuntimeError('the event loop would wait forever: no callback is ready '\n"
    "                               'and no timer is set, and nothing else can wake it in the '\n"
    "                               'sandbox (no sockets, pipes, subprocesses, signals or '\n"
    "                               'threads): a future nothing will set, or a task that '\n"
    "                               'waits for itself?')\n"
    "        if timeout > 0:\n"
    "            time.sleep(timeout)\n"
    "        return []\n"
    "    def close(self):\n"
    "        pass\n"
    "class TimerEventLoop(base_events.BaseEventLoop):\n"
    "    \"\"\"The sandbox's event loop: callbacks, timers, futures and tasks; no I/O.\"\"\"\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self._selector = _Timers()\n"
    "    def _process_events(self, event_list):\n"
    "        pass\n"
    "    def _write_to_self(self):\n"
    "        pass\n"
    "    async def shutdown_default_executor(self):\n"
    "        self._executor_shutdown_called = True\n"
    "        if self._default_executor is not None:\n"
    "            self._default_executor.shutdown(wait=True)\n"
    "    shutdown_default_executor.__doc__ = \\\n"
    "        base_events.BaseEventLoop.shutdown_default_executor.__doc__\n"
    /* What needs a process or a socket is refused, saying why (the base loop's
     * NotImplementedError said nothing). */
    "def _refused(name, why):\n"
    "    async def refused(self, *args, **kwargs):\n"
    "        raise PermissionError(why)\n"
    "    refused.__name__ = refused.__qualname__ = name\n"
    "    return refused\n"
    "for _name in ('subprocess_exec', 'subprocess_shell'):\n"
    "    setattr(TimerEventLoop, _name, _refused(_name,\n"
    "        'the code runs in one process in the sandbox: no program or other process can '\n"
    "        'be started'))\n"
    "for _name in ('create_connection', 'create_server', 'create_unix_connection',\n"
    "              'create_unix_server', 'create_datagram_endpoint', 'connect_accepted_socket',\n"
    "              'getaddrinfo', 'getnameinfo', 'sock_connect', 'sock_accept', 'sendfile'):\n"
    "    setattr(TimerEventLoop, _name, _refused(_name,\n"
    "        'the sandbox has no network: data must come with the code (a literal, a string to '\n"
    "        'parse) or, with a workspace, from a file in it'))\n"
    "class TimerEventLoopPolicy(events.BaseDefaultEventLoopPolicy):\n"
    "    _loop_factory = TimerEventLoop\n"
    "for cls in (TimerEventLoop, TimerEventLoopPolicy):\n"
    "    cls.__module__ = 'asyncio'\n"
    "asyncio.SelectorEventLoop, asyncio.DefaultEventLoopPolicy = (TimerEventLoop,\n"
    "                                                             TimerEventLoopPolicy)\n"
    "asyncio.set_event_loop_policy(TimerEventLoopPolicy())\n"
    "def get_stack(self, *, limit=None):\n"
    "    return []\n"
    "get_stack.__doc__ = tasks.Task.get_stack.__doc__ + '\\n(Frames are out of reach in the '\\\n"
    "    'sandbox: none.)'\n"
    "tasks.Task.get_stack = get_stack\n";

/* Is name among the modules the configuration allows? */
static int config_imports(const struct zygote_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_imports; i++)
		if (strcmp(cfg->imports[i], name) == 0)
			return 1;
	return 0;
}

/* platform, importlib, importlib.util, importlib.metadata, timeit and types as the user's code
 * has them: the facts platform gives, taken in the zygote (no program is run, no file read
 * later); the "is it installed" checks (import_module, find_spec, metadata.version) answered
 * by the sandbox's own import, which gives what "import name" gives, or its refusal; timeit of
 * callables (statements as text would be compiled from text); types' classes and helpers that
 * type() of an object or a class statement gives anyway (SimpleNamespace, FunctionType for
 * isinstance, new_class), without CodeType, FrameType and CellType (code objects, frames and
 * cells made of parts). The real modules stay the libraries'. */
static const char made_py[] =
    "import sys, types, struct, collections, os\n"
    "import platform as P\n"
    "def module(name, doc, names):\n"
    "    m = types.ModuleType(name, doc)\n"
    "    for k, v in names.items():\n"
    "        if ((isinstance(v, type) or type(v) is types.FunctionType) and\n"
    "                getattr(v, '__module__', None) in (None, 'builtins')):\n"
    "            v.__module__ = name\n"
    "        setattr(m, k, v)\n"
    "    made[name] = m\n"
    "made = {}\n"
    "u = os.uname()\n"
    "try:\n"
    "    libc = P.libc_ver()\n"
    "except Exception:\n"
    "    libc = ('', '')\n"
    "try:\n"
    "    plat = (P.platform(), P.platform(terse=True))\n"
    "except Exception:\n"
    "    plat = (u.sysname, u.sysname)\n"
    "uname_result = collections.namedtuple('uname_result',\n"
    "                                      'system node release version machine processor')\n"
    "uname_value = uname_result(u.sysname, '', u.release, u.version, u.machine, '')\n"
    "pv = (P.python_version(), P.python_version_tuple(), P.python_implementation(),\n"
    "      P.python_compiler(), P.python_build(), P.python_branch(), P.python_revision())\n"
    "bits = str(struct.calcsize('P') * 8) + 'bit'\n"
    "def fact(v):\n"
    "    return lambda: v\n"
    "def platform(aliased=False, terse=False):\n"
    "    return plat[1] if terse else plat[0]\n"
    "def architecture(executable=None, bits=bits, linkage='ELF'):\n"
    "    return bits, linkage\n"
    "def libc_ver(executable=None, lib='', version='', chunksize=16384):\n"
    "    return libc if libc[0] else (lib, version)\n"
    "def freedesktop_os_release():\n"
    "    raise OSError(2, 'The sandbox reads no file of the system: no os-release')\n"
    "names = dict(platform=platform, architecture=architecture, libc_ver=libc_ver,\n"
    "             freedesktop_os_release=freedesktop_os_release, uname_result=uname_result)\n"
    "for k, v in dict(system=u.sysname, node='', release=u.release, version=u.version,\n"
    "                 machine=u.machine, processor='', uname=uname_value,\n"
    "                 python_version=pv[0], python_version_tuple=pv[1],\n"
    "                 python_implementation=pv[2], python_compiler=pv[3],\n"
    "                 python_build=pv[4], python_branch=pv[5], python_revision=pv[6],\n"
    "                 mac_ver=('', ('', '', ''), ''), win32_ver=('', '', '', ''),\n"
    "                 win32_edition=None, win32_is_iot=False).items():\n"
    "    f = fact(v)\n"
    "    f.__name__ = f.__qualname__ = k\n"
    "    f.__doc__ = getattr(P, k).__doc__\n"
    "    names[k] = f\n"
    "module('platform', P.__doc__, names)\n"
    "\n"
    "def relative(name, package):\n"
    "    if not isinstance(name, str):\n"
    "        raise TypeError('module name must be str, not ' + type(name).__name__)\n"
    "    if name.startswith('.'):\n"
    "        if not package:\n"
    "            raise TypeError(\"the 'package' argument is required to perform a relative \"\n"
    "                            'import for ' + repr(name))\n"
    "        raise ImportError('Relative imports are not supported')\n"
    "def import_module(name, package=None):\n"
    "    \"\"\"Import a module: what \"import name as m\" binds to m.\"\"\"\n"
    "    relative(name, package)\n"
    "    return import_view(str.__str__(name))\n"
    "def reload(module):\n"
    "    \"\"\"Modules are not reloaded in the sandbox: they stay as first imported.\"\"\"\n"
    "    raise ImportError('Modules are not reloaded in the sandbox: they stay as first '\n"
    "                      'imported (restart the session for a fresh interpreter)')\n"
    "def invalidate_caches():\n"
    "    \"\"\"Nothing to do: the modules the sandbox has do not change.\"\"\"\n"
    "module('importlib', 'Importing modules by name, as the sandbox allows them.',\n"
    "       dict(import_module=import_module, reload=reload,\n"
    "            invalidate_caches=invalidate_caches))\n"
    "class ModuleSpec:\n"
    "    \"\"\"What find_spec says of a module that imports here.\"\"\"\n"
    "    loader = loader_state = cached = origin = submodule_search_locations = None\n"
    "    has_location = False\n"
    "    def __init__(self, name):\n"
    "        self.name = name\n"
    "        self.parent = name.rpartition('.')[0]\n"
    "    def __repr__(self):\n"
    "        return 'ModuleSpec(name=%r)' % (self.name,)\n"
    "def find_spec(name, package=None):\n"
    "    \"\"\"A spec of the module when \"import name\" works here, else None.\"\"\"\n"
    "    relative(name, package)\n"
    "    try:\n"
    "        import_view(str.__str__(name))\n"
    "    except ImportError:\n"
    "        return None\n"
    "    return ModuleSpec(name)\n"
    "module('importlib.util', 'find_spec: whether a module imports here.',\n"
    "       dict(find_spec=find_spec, ModuleSpec=ModuleSpec))\n"
    "class PackageNotFoundError(ModuleNotFoundError):\n"
    "    \"\"\"The package is not installed, or not importable here.\"\"\"\n"
    "    def __str__(self):\n"
    "        return 'No package metadata was found for %s' % (self.name,)\n"
    "    @property\n"
    "    def name(self):\n"
    "        return self.args[0] if self.args else None\n"
    "dists = {'numpy': 'numpy', 'pandas': 'pandas', 'scipy': 'scipy', 'sympy': 'sympy',\n"
    "         'matplotlib': 'matplotlib', 'seaborn': 'seaborn', 'scikit-learn': 'sklearn',\n"
    "         'sklearn': 'sklearn', 'mpmath': 'mpmath', 'tabulate': 'tabulate',\n"
    "         'openpyxl': 'openpyxl', 'pytz': 'pytz', 'python-dateutil': 'dateutil',\n"
    "         'pillow': 'PIL', 'tqdm': 'tqdm', 'pyyaml': 'yaml'}\n"
    "def version(distribution_name):\n"
    "    \"\"\"The version of an installed package the code can import here.\"\"\"\n"
    "    if not isinstance(distribution_name, str):\n"
    "        raise TypeError('a distribution name must be str')\n"
    "    mod = dists.get(distribution_name.lower().replace('_', '-'))\n"
    "    try:\n"
    "        v = getattr(import_view(mod), '__version__', None) if mod else None\n"
    "    except ImportError:\n"
    "        v = None\n"
    "    if type(v) is not str:\n"
    "        raise PackageNotFoundError(distribution_name)\n"
    "    return v\n"
    "module('importlib.metadata', 'version: the version of an installed package.',\n"
    "       dict(version=version, PackageNotFoundError=PackageNotFoundError))\n"
    "import time, itertools, timeit as T\n"
    "def statement(stmt, what):\n"
    "    if callable(stmt):\n"
    "        return stmt\n"
    "    if isinstance(stmt, str) and stmt.strip() in ('', 'pass'):\n"
    "        return lambda: None\n"
    "    raise ValueError('timeit takes the %s as a callable here (the sandbox runs code as '\n"
    "                     'code, not from text): timeit.timeit(lambda: f(x), number=1000)'\n"
    "                     % what)\n"
    "class Timer:\n"
    "    \"\"\"Time a callable: Timer(lambda: f(x)).timeit(number=1000) is the seconds the\n"
    "    calls took together (statements as text are not run here).\"\"\"\n"
    "    def __init__(self, stmt='pass', setup='pass', timer=time.perf_counter, globals=None):\n"
    "        self.stmt = statement(stmt, 'statement')\n"
    "        self.setup = statement(setup, 'setup')\n"
    "        self.timer = timer\n"
    "    def timeit(self, number=1000000):\n"
    "        self.setup()\n"
    "        stmt, timer = self.stmt, self.timer\n"
    "        t0 = timer()\n"
    "        for _ in itertools.repeat(None, number):\n"
    "            stmt()\n"
    "        return timer() - t0\n"
    "    def repeat(self, repeat=5, number=1000000):\n"
    "        return [self.timeit(number) for _ in range(repeat)]\n"
    "    def autorange(self, callback=None):\n"
    "        i = 1\n"
    "        while True:\n"
    "            for j in 1, 2, 5:\n"
    "                number = i * j\n"
    "                time_taken = self.timeit(number)\n"
    "                if callback:\n"
    "                    callback(number, time_taken)\n"
    "                if time_taken >= 0.2:\n"
    "                    return (number, time_taken)\n"
    "            i *= 10\n"
    "def timeit(stmt='pass', setup='pass', timer=time.perf_counter, number=1000000,\n"
    "           globals=None):\n"
    "    return Timer(stmt, setup, timer, globals).timeit(number)\n"
    "def repeat(stmt='pass', setup='pass', timer=time.perf_counter, repeat=5, number=1000000,\n"
    "           globals=None):\n"
    "    return Timer(stmt, setup, timer, globals).repeat(repeat, number)\n"
    "for f in (timeit, repeat):\n"
    "    f.__doc__ = getattr(T, f.__name__).__doc__\n"
    "module('timeit', 'Timing callables: timeit.timeit(lambda: f(x), number=1000).',\n"
    "       dict(Timer=Timer, timeit=timeit, repeat=repeat, default_timer=time.perf_counter,\n"
    "            default_number=1000000, default_repeat=5))\n"
    "del time, T\n"
    "T = types\n"
    "m = types.ModuleType('types', T.__doc__)\n"
    "for k in ('SimpleNamespace', 'MappingProxyType', 'MethodType', 'FunctionType',\n"
    "          'LambdaType', 'GeneratorType', 'CoroutineType', 'AsyncGeneratorType',\n"
    "          'BuiltinFunctionType', 'BuiltinMethodType', 'ModuleType', 'TracebackType',\n"
    "          'NoneType', 'EllipsisType', 'NotImplementedType', 'GenericAlias', 'UnionType',\n"
    "          'DynamicClassAttribute', 'new_class', 'resolve_bases', 'prepare_class'):\n"
    "    setattr(m, k, getattr(T, k))\n"
    "made['types'] = m\n"
    "del T, m\n"
    "tempfile_py()\n"
    "if want_yaml:\n"
    "    yaml_py()\n"
    "del sys, os, P, struct, types, collections, u, names\n";

/* tempfile as the user's code has it: TemporaryFile and SpooledTemporaryFile keep their data in
 * memory (no workspace needed); NamedTemporaryFile, TemporaryDirectory and mkdtemp make their
 * file or directory in the workspace's working directory through the workspace's own os and
 * io (what the code could make itself), and remove it as tempfile does (closed, cleaned up,
 * or dropped: a file or directory the code let go of is removed with its object). mkstemp's
 * file descriptor is not given. */
static const char tempfile_py[] =
    "def tempfile_py():\n"
    "    import io, errno, random, tempfile as T\n"
    "    rng = random.Random()\n"
    "    letters = 'abcdefghijklmnopqrstuvwxyz0123456789_'\n"
    "    def views():\n"
    "        try:\n"
    "            return import_view('os'), import_view('io')\n"
    "        except ImportError:\n"
    "            raise FileNotFoundError(errno.ENOENT,\n"
    "                'No temporary directory: files come only with a workspace (the '\n"
    "                \"server's --workspace DIR option); TemporaryFile() and \"\n"
    "                'SpooledTemporaryFile() keep their data in memory') from None\n"
    "    def candidates(os, dir, prefix, suffix):\n"
    "        dir = os.getcwd() if dir is None else dir\n"
    "        for _ in range(T.TMP_MAX):\n"
    "            name = ''.join(rng.choice(letters) for _ in range(8))\n"
    "            yield os.path.abspath(os.path.join(dir, (prefix or 'tmp') + name + (suffix or "
    "'')))\n"
    "        raise FileExistsError(errno.EEXIST, 'No usable temporary file name found')\n"
    "    def gettempdir():\n"
    "        return views()[0].getcwd()\n"
    "    def gettempdirb():\n"
    "        return views()[0].fsencode(gettempdir())\n"
    "    def gettempprefix():\n"
    "        return 'tmp'\n"
    "    def gettempprefixb():\n"
    "        return b'tmp'\n"
    "    def mkdtemp(suffix=None, prefix=None, dir=None):\n"
    "        os = views()[0]\n"
    "        for path in candidates(os, dir, prefix, suffix):\n"
    "            try:\n"
    "                os.mkdir(path, 0o700)\n"
    "            except FileExistsError:\n"
    "                continue\n"
    "            return path\n"
    "    def mkstemp(suffix=None, prefix=None, dir=None, text=False):\n"
    "        raise OSError(errno.EPERM, 'mkstemp hands out a file descriptor, which the sandbox '\n"
    "                      'does not: NamedTemporaryFile(delete=False) gives a file and its "
    "name')\n"
    "    def remove_tree(os, path):\n"
    "        for root, dirs, files in os.walk(path, topdown=False):\n"
    "            for name in files:\n"
    "                os.remove(os.path.join(root, name))\n"
    "            for name in dirs:\n"
    "                os.rmdir(os.path.join(root, name))\n"
    "        os.rmdir(path)\n"
    "    class TemporaryDirectory:\n"
    "        \"\"\"A directory made in the workspace, removed with what it holds by cleanup() or\n"
    "        at the end of a with block.\"\"\"\n"
    "        def __init__(self, suffix=None, prefix=None, dir=None, ignore_cleanup_errors=False):\n"
    "            self.name = mkdtemp(suffix, prefix, dir)\n"
    "            self._ignore_errors = ignore_cleanup_errors\n"
    "        def __repr__(self):\n"
    "            return '<TemporaryDirectory %r>' % (self.name,)\n"
    "        def __enter__(self):\n"
    "            return self.name\n"
    "        def __exit__(self, *exc):\n"
    "            self.cleanup()\n"
    "        def cleanup(self):\n"
    "            os = views()[0]\n"
    "            if not os.path.exists(self.name):\n"
    "                return\n"
    "            try:\n"
    "                remove_tree(os, self.name)\n"
    "            except OSError:\n"
    "                if not self._ignore_errors:\n"
    "                    raise\n"
    "        def __del__(self):\n"
    "            try:\n"
    "                self.cleanup()\n"
    "            except Exception:\n"
    "                pass\n"
    "    class NamedFile:\n"
    "        \"\"\"A file made in the workspace, with its name; removed when closed "
    "(delete=True).\"\"\"\n"
    "        _open = False\n"
    "        def __init__(self, file, name, delete):\n"
    "            self.file, self.name, self.delete, self._open = file, name, delete, True\n"
    "        def __del__(self):\n"
    "            try:\n"
    "                self.close()\n"
    "            except Exception:\n"
    "                pass\n"
    "        def __getattr__(self, name):\n"
    "            return getattr(self.file, name)\n"
    "        def __iter__(self):\n"
    "            return iter(self.file)\n"
    "        def __enter__(self):\n"
    "            self.file.__enter__()\n"
    "            return self\n"
    "        def __exit__(self, *exc):\n"
    "            self.close()\n"
    "        def __repr__(self):\n"
    "            return '<tempfile.NamedTemporaryFile %r>' % (self.name,)\n"
    "        def close(self):\n"
    "            if not self._open:\n"
    "                return\n"
    "            self._open = False\n"
    "            try:\n"
    "                self.file.close()\n"
    "            finally:\n"
    "                if self.delete:\n"
    "                    try:\n"
    "                        views()[0].remove(self.name)\n"
    "                    except FileNotFoundError:\n"
    "                        pass\n"
    "    def NamedTemporaryFile(mode='w+b', buffering=-1, encoding=None, newline=None,\n"
    "                           suffix=None, prefix=None, dir=None, delete=True, *, errors=None):\n"
    "        os, io_ = views()\n"
    "        for path in candidates(os, dir, prefix, suffix):\n"
    "            try:\n"
    "                io_.open(path, 'xb').close()\n"
    "            except FileExistsError:\n"
    "                continue\n"
    "            try:\n"
    "                f = io_.open(path, mode, buffering, encoding=encoding, newline=newline,\n"
    "                             errors=errors)\n"
    "            except BaseException:\n"
    "                os.remove(path)\n"
    "                raise\n"
    "            return NamedFile(f, path, delete)\n"
    "    class SpooledBytes(io.BytesIO):\n"
    "        def rollover(self):\n"
    "            \"\"\"Kept in memory: nothing to do.\"\"\"\n"
    "    class SpooledText(io.StringIO):\n"
    "        def rollover(self):\n"
    "            \"\"\"Kept in memory: nothing to do.\"\"\"\n"
    "    def TemporaryFile(mode='w+b', buffering=-1, encoding=None, newline=None, suffix=None,\n"
    "                      prefix=None, dir=None, *, errors=None):\n"
    "        return SpooledBytes() if 'b' in mode else SpooledText(newline=newline)\n"
    "    def SpooledTemporaryFile(max_size=0, mode='w+b', buffering=-1, encoding=None,\n"
    "                             newline=None, suffix=None, prefix=None, dir=None, *,\n"
    "                             errors=None):\n"
    "        return TemporaryFile(mode, newline=newline)\n"
    "    names = dict(TemporaryFile=TemporaryFile, SpooledTemporaryFile=SpooledTemporaryFile,\n"
    "                 NamedTemporaryFile=NamedTemporaryFile, "
    "TemporaryDirectory=TemporaryDirectory,\n"
    "                 mkdtemp=mkdtemp, mkstemp=mkstemp, gettempdir=gettempdir,\n"
    "                 gettempdirb=gettempdirb, gettempprefix=gettempprefix,\n"
    "                 gettempprefixb=gettempprefixb, TMP_MAX=T.TMP_MAX, tempdir=None)\n"
    "    for k in ('TemporaryFile', 'SpooledTemporaryFile', 'NamedTemporaryFile', 'mkdtemp',\n"
    "              'mkstemp', 'gettempdir'):\n"
    "        names[k].__doc__ = getattr(T, k).__doc__\n"
    "    NamedFile.__name__ = NamedFile.__qualname__ = '_TemporaryFileWrapper'\n"
    "    module('tempfile', 'Temporary files: in memory (TemporaryFile), or in the workspace '\n"
    "           '(NamedTemporaryFile, TemporaryDirectory), removed as they are closed.', names)\n";

/* yaml as the user's code has it: what it reads and writes is YAML's plain data (mappings,
 * sequences, strings, numbers, dates, sets), the safe loader's and dumper's; a loader or dumper
 * that makes or writes any other object (the full and unsafe ones: an object of any class,
 * built by calling it) is refused (FullLoader, the one code most often names, loads with the
 * safe one: the same result for plain data), and the real classes stay out of reach (the names
 * the code passes as Loader= and Dumper= stand for them). */
static const char yaml_py[] =
    "def yaml_py():\n"
    "    try:\n"
    "        import yaml as Y\n"
    "    except ModuleNotFoundError:\n"
    "        return  # not installed: its import says which package brings it\n"

    "    class SafeLoader:\n"
    "        \"\"\"The safe loader: YAML's plain data (yaml.load(s, "
    "Loader=yaml.SafeLoader)).\"\"\"\n"
    "    class BaseLoader:\n"
    "        \"\"\"The base loader: every scalar a string.\"\"\"\n"
    "    class SafeDumper:\n"
    "        \"\"\"The safe dumper: YAML's plain data.\"\"\"\n"
    "    class Refused:\n"
    "        \"\"\"A loader or dumper of objects of any class: refused here.\"\"\"\n"
    "    # The pure Python ones: libyaml's composer recurses in C on nested collections\n"
    "    # (a few hundred thousand '[' overflowed the stack); these raise RecursionError.\n"
    "    class FullLoader:\n"
    "        \"\"\"The safe loader here: the full one also makes Python objects.\"\"\"\n"
    "    loaders = {SafeLoader: Y.SafeLoader, BaseLoader: Y.BaseLoader,\n"
    "               FullLoader: Y.SafeLoader}\n"
    "    dumper = Y.SafeDumper\n"
    "    def loader(Loader):\n"
    "        if Loader is None:\n"
    "            return loaders[SafeLoader]\n"
    "        try:\n"
    "            return loaders[Loader]\n"
    "        except (KeyError, TypeError):\n"
    "            raise ValueError('yaml loads with SafeLoader or BaseLoader here (safe_load): '\n"
    "                             'a loader that makes objects of any class is not given') from "
    "None\n"
    "    def check_dumper(Dumper):\n"
    "        if Dumper is not None and Dumper is not SafeDumper:\n"
    "            raise ValueError('yaml dumps with SafeDumper here (safe_dump): plain data '\n"
    "                             '(dicts, lists, strings, numbers, dates, sets)')\n"
    "    def safe_load(stream):\n"
    "        return Y.load(stream, loaders[SafeLoader])\n"
    "    def safe_load_all(stream):\n"
    "        return Y.load_all(stream, loaders[SafeLoader])\n"
    "    def load(stream, Loader=None):\n"
    "        return Y.load(stream, loader(Loader))\n"
    "    def load_all(stream, Loader=None):\n"
    "        return Y.load_all(stream, loader(Loader))\n"
    "    def safe_dump(data, stream=None, **kwds):\n"
    "        return Y.dump_all([data], stream, Dumper=dumper, **kwds)\n"
    "    def safe_dump_all(documents, stream=None, **kwds):\n"
    "        return Y.dump_all(documents, stream, Dumper=dumper, **kwds)\n"
    "    def dump(data, stream=None, Dumper=None, **kwds):\n"
    "        check_dumper(Dumper)\n"
    "        return Y.dump_all([data], stream, Dumper=dumper, **kwds)\n"
    "    def dump_all(documents, stream=None, Dumper=None, **kwds):\n"
    "        check_dumper(Dumper)\n"
    "        return Y.dump_all(documents, stream, Dumper=dumper, **kwds)\n"
    "    names = dict(safe_load=safe_load, safe_load_all=safe_load_all, load=load,\n"
    "                 load_all=load_all, safe_dump=safe_dump, safe_dump_all=safe_dump_all,\n"
    "                 dump=dump, dump_all=dump_all, SafeLoader=SafeLoader,\n"
    "                 CSafeLoader=SafeLoader, BaseLoader=BaseLoader, CBaseLoader=BaseLoader,\n"
    "                 SafeDumper=SafeDumper, CSafeDumper=SafeDumper)\n"
    "    names.update(FullLoader=FullLoader, CFullLoader=FullLoader)\n"
    "    for k in ('Loader', 'UnsafeLoader', 'CLoader', 'CUnsafeLoader', 'Dumper', 'CDumper'):\n"
    "        names[k] = type(k, (Refused,), {'__doc__': Refused.__doc__})\n"
    "    for k in ('safe_load', 'safe_load_all', 'safe_dump', 'safe_dump_all', 'load',\n"
    "              'load_all', 'dump', 'dump_all'):\n"
    "        names[k].__doc__ = getattr(Y, k).__doc__\n"
    "    for k in ('YAMLError', 'MarkedYAMLError'):\n"
    "        names[k] = getattr(Y, k)\n"
    "    names['__version__'] = Y.__version__\n"
    "    module('yaml', 'YAML: safe_load and safe_dump of plain data.', names)\n";

static int made_modules(int want_yaml)
{
	PyObject *g = PyDict_New(), *imp = pyproxy_made_import(), *code = NULL, *r = NULL, *made;
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	int rc = -1;

	if (!g || !imp || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    PyDict_SetItemString(g, "import_view", imp) < 0 ||
	    PyDict_SetItemString(g, "want_yaml", want_yaml ? Py_True : Py_False) < 0)
		goto out;
	/* These define yaml_py() and tempfile_py(), which made_py calls. */
	for (size_t i = 0; i < 2; i++) {
		code = Py_CompileString(i ? tempfile_py : yaml_py, "<sandbox's modules>",
		                        Py_file_input);
		r = code ? PyEval_EvalCode(code, g, g) : NULL;
		if (!r)
			goto out;
		Py_CLEAR(r);
		Py_CLEAR(code);
	}
	/* Named so in tracebacks: the sandbox's module, not the code's. */
	code = Py_CompileString(made_py, "<sandbox's modules>", Py_file_input);
	r = code ? PyEval_EvalCode(code, g, g) : NULL;
	made = r ? PyDict_GetItemString(g, "made") : NULL;
	if (!made || !PyDict_Check(made))
		goto out;
	rc = 0;
	while (rc == 0 && PyDict_Next(made, &pos, &k, &v))
		rc = pyproxy_made_add(k, v);
out:
	Py_XDECREF(r);
	Py_XDECREF(code);
	Py_XDECREF(imp);
	Py_XDECREF(g);
	return rc;
}

/* The allowed module name did not import (the exception is set). When it is a package of the
 * data stack that is not installed, say so once, clear the exception and return 1: it stays
 * allowed, and importing it in a call fails naming its Debian package (pyproxy.c). Otherwise
 * 0, the exception still set. */
static int import_missing_package(const char *name)
{
	const char *pkg = pyproxy_debian_package(name);

	if (!pkg || !PyErr_ExceptionMatches(PyExc_ModuleNotFoundError))
		return 0;
	PyErr_Clear();
	fprintf(stderr, "safepy zygote: %s is not installed: apt install %s (imports of it fail)\n",
	        name, pkg);
	return 1;
}

/* The error on stderr itself: sys.stderr may already be a call's capture. */
static void report_python_error(const char *what)
{
	PyObject *type, *value, *tb, *text;
	const char *s;

	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	text = value ? PyObject_Repr(value) : NULL;
	s = text ? PyUnicode_AsUTF8(text) : NULL;
	fprintf(stderr, "safepy zygote: %s failed: %s\n", what, s ? s : "(no description)");
	PyErr_Clear();
	Py_XDECREF(text);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
}

int interp_init(const struct zygote_config *cfg)
{
	PyPreConfig pre;
	PyConfig config;
	PyStatus st;
	PyObject *sys, *stdin_empty;

	zcfg = cfg;
	python_layer = !cfg->unsafe_no_python_layer;
#ifdef SAFEPY_CHECKED_SPECIALISER
	if (pyspecialise_every_form(!python_layer) < 0) {
		perror("safepy zygote: the specialiser's switch could not be made read-only");
		return -1;
	}
#endif
	/* The hook comes first, so it sees every event of the interpreter's life. */
	if (python_layer && pylayer_hook_install() < 0) {
		fprintf(stderr, "safepy zygote: PySys_AddAuditHook failed\n");
		return -1;
	}
	/* UTF-8 mode: file names and the default encoding of text files are UTF-8 whatever the
	 * locale the server started in (under the C locale a file named données.csv, or an 'é'
	 * written to a text file, failed with UnicodeEncodeError). */
	PyPreConfig_InitIsolatedConfig(&pre);
	pre.utf8_mode = 1;
	st = Py_PreInitialize(&pre);
	if (PyStatus_Exception(st)) {
		fprintf(stderr, "safepy zygote: Python did not start: %s\n",
		        st.err_msg ? st.err_msg : "unknown error");
		return -1;
	}
	PyConfig_InitIsolatedConfig(&config);
	config.site_import = 0;
	config.install_signal_handlers = 0;
	config.write_bytecode = 0;
	config.user_site_directory = 0;
	config.buffered_stdio = 0;
	st = PyConfig_SetBytesString(&config, &config.program_name, "python3");
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st)) {
		fprintf(stderr, "safepy zygote: Python did not start: %s\n",
		        st.err_msg ? st.err_msg : "unknown error");
		return -1;
	}
	if (add_site_packages() < 0)
		PyErr_Clear(); /* extra modules then come only from the standard library */
	/* ElementTree's C accelerator (3.11's) reads freed memory when a comparison the user's
	 * code gives empties an element during find() or remove(): the worker crashed. Its
	 * module's pure Python Element, the same API, is the one every library gets. */
	if (python_layer &&
	    PyDict_SetItemString(PyImport_GetModuleDict(), "_elementtree", Py_None) < 0)
		return -1;
	/* ZoneInfo's C type (3.11's) trusts what a subclass's caches give: it wrote a byte into
	 * whatever object the subclass's _weak_cache.setdefault returned, and walked its strong
	 * cache calling a key's __eq__, which could clear the cache and free the node it stood on
	 * (either: any memory read and written). The module's pure Python ZoneInfo, the same API
	 * over the same zone files, is the one every library and the user's code get. */
	if (python_layer &&
	    PyDict_SetItemString(PyImport_GetModuleDict(), "_zoneinfo", Py_None) < 0)
		return -1;
	/* yaml's libyaml binding is not used (its composer recursed in C until the stack ran
	 * out; the worker's yaml loads and dumps in Python) and cost every worker 7 MB. */
	if (PyDict_SetItemString(PyImport_GetModuleDict(), "yaml._yaml", Py_None) < 0 ||
	    PyDict_SetItemString(PyImport_GetModuleDict(), "_yaml", Py_None) < 0)
		return -1;
	if (python_layer && zygote_run(odict_pure_py) < 0) {
		report_python_error("choosing OrderedDict");
		return -1;
	}
	if (python_layer && zygote_run(futures_py) < 0) {
		report_python_error("making concurrent.futures");
		return -1;
	}
	/* asyncio's C tasks and futures are never loaded (asyncio_py): its pure Python ones. */
	if (python_layer && PyDict_SetItemString(PyImport_GetModuleDict(), "_asyncio", Py_None) < 0)
		return -1;
	if (python_layer && config_imports(cfg, "asyncio") && zygote_run(asyncio_py) < 0) {
		report_python_error("making asyncio's event loop");
		return -1;
	}
	if (python_layer && made_modules(config_imports(cfg, "yaml")) < 0) {
		report_python_error("making platform and importlib");
		return -1;
	}
	for (size_t i = 0; i < cfg->n_imports; i++) {
		if (strcmp(cfg->imports[i], "sys") == 0 || import_and_keep(cfg->imports[i]) == 0)
			continue;
		/* A package of the data stack that is not installed: said, and its imports fail
		 * naming the Debian package. Anything else stops the start: a typo must not
		 * leave a server whose every call fails. */
		if (import_missing_package(cfg->imports[i]))
			continue;
		zygote_import_failed(cfg, i);
		return -1;
	}
	if (prewarm() < 0) {
		report_python_error("pre-warming");
		return -1;
	}
	if (pydata_init() < 0) {
		report_python_error("preparing the data libraries");
		return -1;
	}
	if (pyresult_logging_prepare() < 0) {
		report_python_error("preparing logging");
		return -1;
	}
	if (pyimport_init() < 0 || worker_home() < 0) {
		report_python_error("setting up the importer");
		return -1;
	}
	real_compile = real_builtin("compile");
	/* The ast module first: it adds to the classes of _ast, which are then made immutable. */
	if (!real_compile || import_and_keep("ast") < 0 || ast_classes_take() < 0 ||
	    pylayer_opcodes_load() < 0) {
		report_python_error("loading the compiler");
		return -1;
	}
	Py_INCREF(real_compile);
	if (capture_init(cfg->max_output, (uint64_t)cfg->max_output * OUTPUT_FLOOD_FACTOR) < 0 ||
	    pygc_init() < 0 || pydealloc_init() < 0 || signals_setup() < 0) {
		report_python_error("setting up output capture");
		return -1;
	}
	sys = PyImport_ImportModule("sys");
	/* The code has no console: what a library reads as standard input (argparse's
	 * FileType('r') of '-') is an empty text stream, not a file object over the worker's fd 0. */
	stdin_empty =
	    python_layer ? PyObject_CallMethod(PyImport_AddModule("io"), "StringIO", NULL) : NULL;
	if (!sys ||
	    (python_layer &&
	     (!stdin_empty || PyObject_SetAttrString(sys, "stdin", stdin_empty) < 0)) ||
	    PyObject_SetAttrString(sys, "stdout", capture_stream(CAPTURE_STDOUT)) < 0 ||
	    PyObject_SetAttrString(sys, "stderr", capture_stream(CAPTURE_STDERR)) < 0) {
		Py_XDECREF(stdin_empty);
		report_python_error("redirecting sys.stdout");
		return -1;
	}
	Py_XDECREF(stdin_empty);
	Py_DECREF(sys);
	if (pysqlite_init() < 0) {
		report_python_error("setting up SQLite");
		return -1;
	}
	if (python_layer && pysqlite_guard() < 0) {
		report_python_error("guarding SQLite's callbacks");
		return -1;
	}
	if (python_layer && pyreentry_guard() < 0) {
		report_python_error("guarding bytearray's searches");
		return -1;
	}
	if (python_layer &&
	    (pylayer_init(cfg) < 0 || pyguard_install() < 0 || threads_start_through_entry() < 0)) {
		report_python_error("building the Python layer");
		return -1;
	}
	if (cfg->workspace && pyfiles_init(cfg) < 0) {
		report_python_error("setting up the workspace");
		return -1;
	}
	if (pytiming_install(python_layer ? pylayer_builtins() : PyEval_GetBuiltins()) < 0 ||
	    (python_layer && pytiming_install(pylayer_builtins_private()) < 0)) {
		report_python_error("adding the timing commands");
		return -1;
	}
	if (pyresult_linecache_install() < 0) {
		report_python_error("finding the code's lines for warnings");
		return -1;
	}
	if (python_layer) {
		if (pymodguard_init() < 0) {
			report_python_error("guarding the real modules");
			return -1;
		}
		pymodguard_seal_all();
	}
	/* From here on collections run only where pygc.c's tick runs them. */
	pygc_zygote_ready();
	return 0;
}

/* The raised exception, normalised, with its traceback attached; clears the indicator. */
static PyObject *exception_take(void)
{
	PyObject *type, *val, *tb;

	PyErr_Fetch(&type, &val, &tb);
	if (!type)
		return NULL;
	PyErr_NormalizeException(&type, &val, &tb);
	if (tb && val)
		PyException_SetTraceback(val, tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	return val;
}

/* Is exc a SystemExit whose code is None or 0: the code asked to end as a script ends when
 * it succeeds (sys.exit(), sys.exit(0), sys.exit(main()), raise SystemExit)? Another code
 * (a number, a message) stays the call's error. The code is read from the object, not as an
 * attribute: nothing of the user's runs (an int of a subclass of the user's is read as an
 * int). */
static int exit_success(PyObject *exc)
{
	PyObject *code;
	int overflow = 0;

	if (!exc || !PyErr_GivenExceptionMatches(exc, PyExc_SystemExit))
		return 0;
	code = ((PySystemExitObject *)exc)->code;
	if (!code || code == Py_None)
		return 1;
	return PyLong_Check(code) && PyLong_AsLongAndOverflow(code, &overflow) == 0 && !overflow;
}

/* ---- running the code ---------------------------------------------------------------- */

struct program {
	PyObject *body;      /* code object: every statement but a value-giving last one */
	PyObject *last_expr; /* eval-mode code of the last expression or assigned value */
	PyObject *assign;    /* code that binds the targets from RESULT_TMP */
	PyObject *aug_name;  /* name whose value is the result (x += 1) */
};

static void program_clear(struct program *p)
{
	Py_CLEAR(p->body);
	Py_CLEAR(p->last_expr);
	Py_CLEAR(p->assign);
	Py_CLEAR(p->aug_name);
}

static PyObject *compile_node(PyObject *node, const char *mode)
{
	PyObject *code = PyObject_CallFunction(real_compile, "Ossii", node, INTERP_FILENAME, mode,
	                                       PyCF_ALLOW_TOP_LEVEL_AWAIT, 1);

	if (code && python_layer && pylayer_code_check((PyCodeObject *)code) < 0)
		Py_CLEAR(code);
	return code;
}

/* The classes of _ast that building a program names, taken when the zygote starts (a call may
 * rebind the ast module's names). */
enum ast_cls {
	AST_BASE,
	AST_MODULE,
	AST_EXPRESSION,
	AST_EXPR,
	AST_ASSIGN,
	AST_ANNASSIGN,
	AST_AUGASSIGN,
	AST_IMPORT,
	AST_IMPORTFROM,
	AST_NAME,
	AST_CALL,
	AST_CONSTANT,
	AST_TUPLE,
	AST_LOAD,
	AST_STORE,
	AST_ATTRIBUTE,
	AST_KEYWORD,
	AST_N
};
static const char *const ast_names[AST_N] = {
    [AST_BASE] = "AST",
    [AST_MODULE] = "Module",
    [AST_EXPRESSION] = "Expression",
    [AST_EXPR] = "Expr",
    [AST_ASSIGN] = "Assign",
    [AST_ANNASSIGN] = "AnnAssign",
    [AST_AUGASSIGN] = "AugAssign",
    [AST_IMPORT] = "Import",
    [AST_IMPORTFROM] = "ImportFrom",
    [AST_NAME] = "Name",
    [AST_CALL] = "Call",
    [AST_CONSTANT] = "Constant",
    [AST_TUPLE] = "Tuple",
    [AST_LOAD] = "Load",
    [AST_STORE] = "Store",
    [AST_ATTRIBUTE] = "Attribute",
    [AST_KEYWORD] = "keyword",
};
static PyTypeObject *ast_classes[AST_N];
/* The attributes that place an expression or a statement in the source. */
static const char *const ast_location[] = {"lineno", "col_offset", "end_lineno", "end_col_offset",
                                           NULL};

/* Every class of the _ast module and its version tag when the zygote started. CPython gives a
 * class a new tag, or none, whenever it or a base is changed: a class with its tag is the class
 * as CPython made it. */
struct ast_tag {
	PyTypeObject *type;
	unsigned int tag;
};
static struct ast_tag *ast_tags;
static size_t n_ast_tags;

/* Take the classes, and make every class of _ast immutable: the parser builds a program's tree
 * from them and the rewriting below reads and makes their objects, which must run CPython's C
 * code only (a class whose attribute is a property, or whose __init__ is replaced, runs the
 * user's code in the middle of it: sympy hands out instances of these classes). Subclasses of
 * them stay the user's to change. */
static int ast_classes_take(void)
{
	PyObject *m = PyImport_ImportModule("_ast"), *d, *key, *v;
	PyObject *probe = PyUnicode_InternFromString("__setattr__");
	PyTypeObject *base;
	Py_ssize_t pos = 0;
	size_t n = 0;
	int rc = -1;

	d = m ? PyModule_GetDict(m) : NULL;
	for (size_t i = 0; d && i < AST_N; i++) {
		v = PyDict_GetItemString(d, ast_names[i]);
		if (!v || !PyType_Check(v)) {
			PyErr_Format(PyExc_ImportError, "_ast has no class %s", ast_names[i]);
			goto out;
		}
		ast_classes[i] = (PyTypeObject *)Py_NewRef(v);
	}
	base = ast_classes[AST_BASE];
	if (!probe || !base)
		goto out;
	while (PyDict_Next(d, &pos, &key, &v))
		n += PyType_Check(v) && PyType_IsSubtype((PyTypeObject *)v, base);
	ast_tags = calloc(n ? n : 1, sizeof(*ast_tags));
	if (!ast_tags) {
		PyErr_NoMemory();
		goto out;
	}
	pos = 0;
	while (PyDict_Next(d, &pos, &key, &v) && n_ast_tags < n) {
		PyTypeObject *t = (PyTypeObject *)v;
		if (!PyType_Check(v) || !PyType_IsSubtype(t, base))
			continue;
		t->tp_flags |= Py_TPFLAGS_IMMUTABLETYPE;
		PyType_Modified(t);
		(void)_PyType_Lookup(t, probe); /* a lookup gives the class its tag */
		ast_tags[n_ast_tags++] = (struct ast_tag){t, t->tp_version_tag};
	}
	rc = 0;
out:
	Py_XDECREF(probe);
	Py_XDECREF(m);
	return rc;
}

/* Is every class of _ast as the zygote left it? They are immutable; this is a second check. */
static int ast_pristine(void)
{
	for (size_t i = 0; i < n_ast_tags; i++) {
		const PyTypeObject *t = ast_tags[i].type;
		if (!(t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) ||
		    t->tp_version_tag != ast_tags[i].tag)
			return 0;
	}
	return n_ast_tags > 0;
}

/* A new node of class c made from the arguments fmt builds (a tuple), placed where the parser
 * placed loc (none when loc is NULL). Returns a new reference or NULL. Steals the references
 * fmt's N units name, also on failure. */
static PyObject *ast_node(enum ast_cls c, PyObject *loc, const char *fmt, ...)
{
	PyObject *args, *node = NULL;
	va_list ap;

	va_start(ap, fmt);
	args = Py_VaBuildValue(fmt, ap);
	va_end(ap);
	if (args && PyTuple_CheckExact(args))
		node = PyObject_Call((PyObject *)ast_classes[c], args, NULL);
	else if (args)
		PyErr_SetString(PyExc_SystemError, "ast_node: arguments are not a tuple");
	Py_XDECREF(args);
	for (const char *const *a = ast_location; node && loc && *a; a++) {
		PyObject *v = PyObject_GetAttrString(loc, *a);
		if (!v || PyObject_SetAttrString(node, *a, v) < 0)
			Py_CLEAR(node);
		Py_XDECREF(v);
	}
	return node;
}

/* A node's field (a new reference; NULL, with no error set, when it has none), read from its
 * __dict__. */
static PyObject *ast_field(PyObject *node, const char *name)
{
	PyObject *dict = PyObject_GenericGetDict(node, NULL), *v;

	v = dict ? PyDict_GetItemString(dict, name) : NULL;
	Py_XINCREF(v);
	Py_XDECREF(dict);
	return v;
}

/* A field that must be an exact str (a new reference, or NULL with an error set). */
static PyObject *ast_str_field(PyObject *node, const char *name)
{
	PyObject *v = ast_field(node, name);

	if (v && PyUnicode_CheckExact(v))
		return v;
	Py_XDECREF(v);
	if (!PyErr_Occurred())
		PyErr_Format(PyExc_SystemError, "the parser gave a %s that is not a str", name);
	return NULL;
}

/* A read of an attribute the rules refuse, as a call placed where it was: obj.__dict__ as
 * <dict>(obj), obj.name as <refused>(obj, 'name'), which raise (or give what the rules allow)
 * when they run. A new reference; NULL, with no error set, when node is no such read. */
static PyObject *refused_read(PyObject *node)
{
	PyObject *attr, *ctx, *value, *r = NULL;
	const char *a;

	if (!Py_IS_TYPE(node, ast_classes[AST_ATTRIBUTE]))
		return NULL;
	attr = ast_field(node, "attr");
	ctx = ast_field(node, "ctx");
	value = ast_field(node, "value");
	a = attr && PyUnicode_CheckExact(attr) ? PyUnicode_AsUTF8(attr) : NULL;
	if (!a || !ctx || !value || !Py_IS_TYPE(ctx, ast_classes[AST_LOAD]))
		;
	else if (strcmp(a, "__dict__") == 0)
		r = ast_node(AST_CALL, node, "(N[O][])",
		             ast_node(AST_NAME, node, "(sN)", PYLAYER_OBJECT_DICT,
		                      ast_node(AST_LOAD, NULL, "()")),
		             value);
	else if (pylayer_attr_refused(a))
		r = ast_node(AST_CALL, node, "(N[ON][])",
		             ast_node(AST_NAME, node, "(sN)", PYLAYER_REFUSED_ATTR,
		                      ast_node(AST_LOAD, NULL, "()")),
		             value, ast_node(AST_CONSTANT, node, "(O)", attr));
	Py_XDECREF(attr);
	Py_XDECREF(ctx);
	Py_XDECREF(value);
	return r;
}

/* Does the source name, after a dot, an attribute the rules refuse? Such a program is
 * rewritten (refused_read); one this misses (a comment between the dot and the name) is still
 * refused whole by the bytecode check. */
static int names_refused_read(const char *src)
{
	for (const char *p = strchr(src, '.'); p; p = strchr(p + 1, '.')) {
		const char *q = p + 1;
		char name[128];
		size_t n = 0;

		while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' || *q == '\\')
			q++;
		while (n + 1 < sizeof(name) && (isalnum((unsigned char)*q) || *q == '_'))
			name[n++] = *q++;
		name[n] = '\0';
		if (n && !isdigit((unsigned char)name[0]) && pylayer_attr_refused(name))
			return 1;
	}
	return 0;
}

/* A call's **mapping (a keyword node without a name) through <kwargs>(mapping): its names
 * reach the callee as exact str, so that a str subclass's __hash__ and __eq__ cannot hide a
 * keyword from a guard's lookup that the callee still takes by its characters. */
static int kwargs_plain(PyObject *dict)
{
	PyObject *arg = PyDict_GetItemString(dict, "arg"), *value, *call;
	int rc;

	if (arg != Py_None || !(value = PyDict_GetItemString(dict, "value")))
		return 0;
	call = ast_node(
	    AST_CALL, value, "(N[O][])",
	    ast_node(AST_NAME, value, "(sN)", PYLAYER_PLAIN_KWARGS, ast_node(AST_LOAD, NULL, "()")),
	    value);
	rc = call ? PyDict_SetItemString(dict, "value", call) : -1;
	Py_XDECREF(call);
	return rc;
}

/* __import__ must stay in the builtins for import statements; a name load of it in user
 * code becomes a name that does not exist, so it raises NameError at run time (hide_import);
 * reads of attributes the rules refuse become calls that refuse them when they run
 * (refused_reads); a call's **mapping goes through kwargs_plain (plain_kwargs). Every node of
 * the tree is visited from a stack of its own (a long chain of operators is deep). */
static int names_rewrite(PyObject *tree, int hide_import, int refused_reads, int plain_kwargs)
{
	PyObject *stack = PyList_New(0), *hidden = NULL;
	int rc = stack && PyList_Append(stack, tree) == 0 ? 0 : -1;

	while (rc == 0 && PyList_GET_SIZE(stack) > 0) {
		Py_ssize_t n = PyList_GET_SIZE(stack), pos = 0;
		PyObject *node = Py_NewRef(PyList_GET_ITEM(stack, n - 1));
		PyObject *dict = NULL, *key, *v;

		rc = PyList_SetSlice(stack, n - 1, n, NULL);
		if (rc == 0)
			dict = PyObject_GenericGetDict(node, NULL);
		if (dict && plain_kwargs && Py_IS_TYPE(node, ast_classes[AST_KEYWORD]))
			rc = kwargs_plain(dict);
		if (!dict || rc < 0) {
			rc = -1;
		} else if (Py_IS_TYPE(node, ast_classes[AST_NAME])) {
			v = hide_import ? PyDict_GetItemString(dict, "id") : NULL;
			if (v && PyUnicode_CheckExact(v) &&
			    PyUnicode_CompareWithASCIIString(v, "__import__") == 0) {
				if (!hidden)
					hidden = PyUnicode_FromString("__import__ (not available)");
				rc = hidden ? PyDict_SetItemString(dict, "id", hidden) : -1;
			}
		} else {
			while (rc == 0 && PyDict_Next(dict, &pos, &key, &v)) {
				if (PyObject_TypeCheck(v, ast_classes[AST_BASE])) {
					/* The key is there: setting it resizes nothing. */
					PyObject *r = refused_reads ? refused_read(v) : NULL;
					rc = r                  ? PyDict_SetItem(dict, key, r)
					     : PyErr_Occurred() ? -1
					                        : 0;
					if (rc == 0)
						rc = PyList_Append(stack, r ? r : v);
					Py_XDECREF(r);
					continue;
				}
				for (Py_ssize_t i = 0;
				     rc == 0 && PyList_CheckExact(v) && i < PyList_GET_SIZE(v);
				     i++) {
					PyObject *item = PyList_GET_ITEM(v, i), *r;
					if (!PyObject_TypeCheck(item, ast_classes[AST_BASE]))
						continue;
					r = refused_reads ? refused_read(item) : NULL;
					/* The list takes r's reference and drops the read's. */
					if (r && PyList_SetItem(v, i, r) == 0)
						item = r;
					rc = PyErr_Occurred() ? -1 : PyList_Append(stack, item);
				}
			}
		}
		Py_XDECREF(dict);
		Py_DECREF(node);
	}
	Py_XDECREF(stack);
	Py_XDECREF(hidden);
	return rc < 0 || PyErr_Occurred() ? -1 : 0;
}

/* <from_names>(module, names, level), placed where stmt was. New reference, or NULL. */
static PyObject *from_names_call(PyObject *stmt, PyObject *module, PyObject *names, PyObject *level)
{
	return ast_node(
	    AST_CALL, stmt, "(N[NNN][])",
	    ast_node(AST_NAME, stmt, "(sN)", PYLAYER_FROM_NAMES, ast_node(AST_LOAD, NULL, "()")),
	    ast_node(AST_CONSTANT, stmt, "(O)", module), ast_node(AST_CONSTANT, stmt, "(O)", names),
	    ast_node(AST_CONSTANT, stmt, "(O)", level));
}

/* "from m import a as b, c" as "b, c = <from_names>('m', ('a', 'c'), 0)", and "import m.a as
 * c" as "c = <from_names>('m.a', None, 0)": IMPORT_FROM, which CPython compiles both into,
 * falls back on sys.modules (pylayer.c, code_check). Returns the statements that replace stmt
 * (a new list), Py_None (new reference) when it stays, or NULL. Every node is made by the
 * classes' C code and placed where stmt was. */
static PyObject *import_rewrite(PyObject *stmt, int from, int in_def)
{
	PyObject *names = ast_field(stmt, "names"), *out = PyList_New(0), *keep = NULL;
	int changed = 0, rc = 0;

	if (!names || !PyList_CheckExact(names) || !out)
		goto fail;
	if (from) {
		PyObject *module = ast_field(stmt, "module"), *level = ast_field(stmt, "level");
		PyObject *targets = PyList_New(0), *wanted = PyList_New(0), *t = NULL;
		/* The compiler reads future statements; the names they import are fixed by it. */
		int stays = module && PyUnicode_CheckExact(module) &&
		            PyUnicode_CompareWithASCIIString(module, "__future__") == 0;
		int star = 0;

		rc = targets && wanted && module &&
		             (module == Py_None || PyUnicode_CheckExact(module)) && level &&
		             PyLong_CheckExact(level)
		         ? 0
		         : -1;
		for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(names); i++) {
			PyObject *a = Py_NewRef(PyList_GET_ITEM(names, i));
			PyObject *name = ast_str_field(a, "name"), *as = ast_field(a, "asname");
			PyObject *bind = as && as != Py_None ? as : name;

			rc = name && as && PyUnicode_CheckExact(bind) ? 0 : -1;
			if (rc == 0 && PyUnicode_CompareWithASCIIString(name, "*") == 0) {
				star = 1;
				/* In a function or a class: as it is, the compiler's SyntaxError. */
				stays = stays || in_def;
			}
			t = rc == 0 ? ast_node(AST_NAME, stmt, "(ON)", bind,
			                       ast_node(AST_STORE, NULL, "()"))
			            : NULL;
			if (!t || PyList_Append(targets, t) < 0 || PyList_Append(wanted, name) < 0)
				rc = -1;
			Py_XDECREF(t);
			Py_XDECREF(name);
			Py_XDECREF(as);
			Py_DECREF(a);
		}
		if (rc == 0 && !stays) {
			/* from . import x: no module; from_names refuses the level. "from m import *"
			 * as "<from_names>('m', '*', 0)": IMPORT_STAR read the names an object's
			 * __all__ lists in C, from whatever the builtins' __import__ (a name the code
			 * can set) gave; from_names reads the proxy's, by the rules. */
			PyObject *mod =
			    module == Py_None ? PyUnicode_FromString("") : Py_NewRef(module);
			PyObject *what = star ? PyUnicode_FromString("*") : PyList_AsTuple(wanted);
			PyObject *call =
			    mod && what ? from_names_call(stmt, mod, what, level) : NULL;
			PyObject *tgt = call && !star ? ast_node(AST_TUPLE, stmt, "(ON)", targets,
			                                         ast_node(AST_STORE, NULL, "()"))
			                              : NULL;
			PyObject *made = !call  ? NULL
			                 : star ? ast_node(AST_EXPR, stmt, "(O)", call)
			                 : tgt  ? ast_node(AST_ASSIGN, stmt, "([O]O)", tgt, call)
			                        : NULL;

			rc = made ? PyList_Append(out, made) : -1;
			changed = rc == 0;
			Py_XDECREF(made);
			Py_XDECREF(tgt);
			Py_XDECREF(call);
			Py_XDECREF(what);
			Py_XDECREF(mod);
		}
		Py_XDECREF(targets);
		Py_XDECREF(wanted);
		Py_XDECREF(module);
		Py_XDECREF(level);
		if (rc < 0)
			goto fail;
		goto done;
	}
	/* import a, b.c as d, e: "b.c as d" becomes a call; the others stay imports, in order. */
	for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(names); i++) {
		PyObject *a = Py_NewRef(PyList_GET_ITEM(names, i));
		PyObject *name = ast_str_field(a, "name"), *as = ast_field(a, "asname");

		if (!name || !as || (as != Py_None && !PyUnicode_CheckExact(as))) {
			rc = -1;
		} else if (as != Py_None &&
		           PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), 1) >= 0) {
			PyObject *zero = PyLong_FromLong(0);
			PyObject *call = zero ? from_names_call(stmt, name, Py_None, zero) : NULL;
			PyObject *tgt = call ? ast_node(AST_NAME, stmt, "(ON)", as,
			                                ast_node(AST_STORE, NULL, "()"))
			                     : NULL;
			PyObject *assign =
			    tgt ? ast_node(AST_ASSIGN, stmt, "([O]O)", tgt, call) : NULL;

			changed = 1;
			Py_CLEAR(keep);
			rc = assign ? PyList_Append(out, assign) : -1;
			Py_XDECREF(assign);
			Py_XDECREF(tgt);
			Py_XDECREF(call);
			Py_XDECREF(zero);
		} else {
			if (!keep) {
				PyObject *imp = ast_node(AST_IMPORT, stmt, "([])");
				keep = imp ? ast_field(imp, "names") : NULL;
				rc = keep && PyList_CheckExact(keep) ? PyList_Append(out, imp) : -1;
				Py_XDECREF(imp);
			}
			if (rc == 0)
				rc = PyList_Append(keep, a);
		}
		Py_XDECREF(name);
		Py_XDECREF(as);
		Py_DECREF(a);
	}
	if (rc < 0)
		goto fail;
done:
	if (PyErr_Occurred())
		goto fail;
	if (!changed) {
		Py_DECREF(out);
		out = Py_NewRef(Py_None);
	}
	Py_XDECREF(keep);
	Py_XDECREF(names);
	return out;
fail:
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_SystemError, "rewriting an import failed");
	Py_XDECREF(out);
	Py_XDECREF(keep);
	Py_XDECREF(names);
	return NULL;
}

/* The statement lists of a statement (a body, orelse, finalbody) and of its except clauses
 * and match cases. Statements hold statements only there: expressions hold none. */
static const char *const stmt_lists[] = {"body", "orelse", "finalbody", NULL};
static const char *const clause_lists[] = {"handlers", "cases", NULL};

/* Does stmt open a scope of its own (a function or a class)? */
static int scope_stmt(PyObject *stmt)
{
	const char *n = _PyType_Name(Py_TYPE(stmt));

	return strcmp(n, "FunctionDef") == 0 || strcmp(n, "AsyncFunctionDef") == 0 ||
	       strcmp(n, "ClassDef") == 0;
}

/* Rewrite, in place, the import statements of a statement list and of the lists nested in
 * its statements (import_rewrite); in_def: the list is in a function or a class. Returns 0 or
 * -1. */
static int imports_rewrite(PyObject *list, int depth, int in_def)
{
	if (depth > STMT_NESTING_MAX) {
		PyErr_SetString(PyExc_RecursionError, "statements nested too deeply");
		return -1;
	}
	for (Py_ssize_t k = 0; PyList_CheckExact(list) && k < PyList_GET_SIZE(list); k++) {
		PyObject *stmt = Py_NewRef(PyList_GET_ITEM(list, k));
		int rc = 0;

		if (Py_IS_TYPE(stmt, ast_classes[AST_IMPORT]) ||
		    Py_IS_TYPE(stmt, ast_classes[AST_IMPORTFROM])) {
			PyObject *r = import_rewrite(
			    stmt, Py_IS_TYPE(stmt, ast_classes[AST_IMPORTFROM]), in_def);
			if (!r) {
				rc = -1;
			} else if (r != Py_None) {
				Py_ssize_t n = PyList_GET_SIZE(r);
				rc = PyList_SetSlice(list, k, k + 1, r);
				k += n - 1;
			}
			Py_XDECREF(r);
			Py_DECREF(stmt);
			if (rc < 0)
				return -1;
			continue;
		}
		for (const char *const *f = stmt_lists; rc == 0 && *f; f++) {
			PyObject *sub = ast_field(stmt, *f);
			if (sub)
				rc = imports_rewrite(sub, depth + 1, in_def || scope_stmt(stmt));
			Py_XDECREF(sub);
		}
		for (const char *const *f = clause_lists; rc == 0 && *f; f++) {
			PyObject *clauses = ast_field(stmt, *f);
			for (Py_ssize_t c = 0; rc == 0 && clauses && PyList_CheckExact(clauses) &&
			                       c < PyList_GET_SIZE(clauses);
			     c++) {
				PyObject *clause = Py_NewRef(PyList_GET_ITEM(clauses, c));
				PyObject *sub = ast_field(clause, "body");
				if (sub)
					rc = imports_rewrite(sub, depth + 1, in_def);
				Py_XDECREF(sub);
				Py_DECREF(clause);
			}
			Py_XDECREF(clauses);
		}
		Py_DECREF(stmt);
		if (rc < 0 || PyErr_Occurred())
			return -1;
	}
	return 0;
}

/* How the last top-level statement gives the result: as an expression's value, as the value
 * it assigns, or not at all (an augmented assignment is read back by name after the run). */
enum last_kind { LAST_NONE = 0, LAST_EXPR, LAST_ASSIGN };

/* Parse, split off the last statement when it gives the result, compile, check. */
static int ascii_only(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/* Whether the text may hold a call's **mapping: a "**" that follows "(" or "," on its line, or
 * starts a line (a comment or a continued line between). A power operator follows an operand
 * (a name, a number, a closing bracket) and keeps the program on the parser's fast path. */
static int kwargs_unpacked(const char *src)
{
	const char *p, *q;

	for (p = strstr(src, "**"); p; p = strstr(p + 2, "**")) {
		for (q = p; q > src && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\f'); q--)
			;
		if (q == src || !(isalnum((unsigned char)q[-1]) || q[-1] == '_' || q[-1] == ')' ||
		                  q[-1] == ']' || q[-1] == '}'))
			return 1;
	}
	return 0;
}

static int program_build(const char *src, struct program *p)
{
	/* The code came as text (JSON), sent on as UTF-8: a coding declaration in it is a
	 * comment. Honoured, it would make the text the parser reads another than the one
	 * checked here (for "import", "__import__" and bytes beyond ASCII). */
	PyCompilerFlags flags = {PyCF_ONLY_AST | PyCF_IGNORE_COOKIE, PY_MINOR_VERSION};
	PyObject *tree, *body = NULL, *last = NULL, *value = NULL, *targets = NULL;
	Py_ssize_t n;
	enum last_kind kind = LAST_NONE;
	int rc = -1, ascii = ascii_only(src), imports_last;
	/* Reads the rules refuse are rewritten into calls (names_rewrite); a name spelled beyond
	 * ASCII may be one (NFKC), and __import__ as a name is hidden. */
	int refused = python_layer && (!ascii || names_refused_read(src));
	int hide = python_layer && (!ascii || strstr(src, "__import__"));
	int kwargs = python_layer && kwargs_unpacked(src);

#ifdef SAFEPY_C_PARSER
	/* Nothing to rewrite: built from the parser's C tree, no ast object made. The parser
	 * folds identifiers to NFKC (fullwidth letters spell __import__ too): source with bytes
	 * beyond ASCII goes through the ast objects, whose names are checked as the parser made
	 * them. */
	if (!python_layer || (!strstr(src, "import") && !refused && !kwargs)) {
		if (pycompile_program(src, INTERP_FILENAME, RESULT_TMP, &p->body, &p->last_expr,
		                      &p->assign, &p->aug_name) < 0)
			return -1;
		if (python_layer &&
		    (pylayer_code_check((PyCodeObject *)p->body) < 0 ||
		     (p->last_expr && pylayer_code_check((PyCodeObject *)p->last_expr) < 0) ||
		     (p->assign && pylayer_code_check((PyCodeObject *)p->assign) < 0))) {
			program_clear(p);
			return -1;
		}
		return 0;
	}
#endif
	tree = Py_CompileStringExFlags(src, INTERP_FILENAME, Py_file_input, &flags, -1);
	if (!tree)
		return -1;
	if ((refused || hide || kwargs) && names_rewrite(tree, hide, refused, kwargs) < 0)
		goto out;
	body = ast_field(tree, "body");
	if (!body || !PyList_CheckExact(body))
		goto out;
	/* (an import rewritten into an assignment is still no result) */
	n = PyList_GET_SIZE(body);
	imports_last =
	    n > 0 && (Py_IS_TYPE(PyList_GET_ITEM(body, n - 1), ast_classes[AST_IMPORT]) ||
	              Py_IS_TYPE(PyList_GET_ITEM(body, n - 1), ast_classes[AST_IMPORTFROM]));
	if (python_layer && strstr(src, "import") && imports_rewrite(body, 0, 0) < 0)
		goto out;
	n = PyList_GET_SIZE(body);
	if (n > 0 && !imports_last) {
		last = PyList_GET_ITEM(body, n - 1);
		Py_INCREF(last);
		if (Py_IS_TYPE(last, ast_classes[AST_EXPR])) {
			kind = LAST_EXPR;
		} else if (Py_IS_TYPE(last, ast_classes[AST_ASSIGN])) {
			kind = LAST_ASSIGN;
			targets = ast_field(last, "targets");
		} else if (Py_IS_TYPE(last, ast_classes[AST_ANNASSIGN])) {
			PyObject *v = ast_field(last, "value");
			if (v && v != Py_None) {
				PyObject *t = ast_field(last, "target");
				kind = LAST_ASSIGN;
				targets = t ? Py_BuildValue("[O]", t) : NULL;
				Py_XDECREF(t);
			}
			Py_XDECREF(v);
		} else if (Py_IS_TYPE(last, ast_classes[AST_AUGASSIGN])) {
			PyObject *t = ast_field(last, "target");
			if (t && Py_IS_TYPE(t, ast_classes[AST_NAME]))
				p->aug_name = ast_str_field(t, "id");
			Py_XDECREF(t);
		}
		if (PyErr_Occurred())
			goto out;
	}
	if (kind != LAST_NONE) {
		PyObject *expr;
		value = ast_field(last, "value");
		if (!value || (kind == LAST_ASSIGN && (!targets || !PyList_CheckExact(targets))) ||
		    PySequence_DelItem(body, n - 1) < 0)
			goto out;
		expr = ast_node(AST_EXPRESSION, NULL, "(O)", value);
		if (!expr)
			goto out;
		p->last_expr = compile_node(expr, "eval");
		Py_DECREF(expr);
		if (!p->last_expr)
			goto out;
	}
	if (kind == LAST_ASSIGN) {
		/* targets = RESULT_TMP, placed where the last statement was. */
		PyObject *name =
		    ast_node(AST_NAME, last, "(sN)", RESULT_TMP, ast_node(AST_LOAD, NULL, "()"));
		PyObject *assign = name ? ast_node(AST_ASSIGN, last, "(OO)", targets, name) : NULL;
		PyObject *mod = assign ? ast_node(AST_MODULE, NULL, "([O][])", assign) : NULL;

		if (mod)
			p->assign = compile_node(mod, "exec");
		Py_XDECREF(name);
		Py_XDECREF(assign);
		Py_XDECREF(mod);
		if (!p->assign)
			goto out;
	}
	p->body = compile_node(tree, "exec");
	if (p->body)
		rc = 0;
out:
	Py_XDECREF(tree);
	Py_XDECREF(body);
	Py_XDECREF(last);
	Py_XDECREF(value);
	Py_XDECREF(targets);
	if (rc < 0)
		program_clear(p);
	return rc;
}

/* The builtins the user's code runs with, or (private) a copy of them that user code never
 * holds; with the Python layer off, the real ones. */
static PyObject *builtins_for(int private)
{
	if (!python_layer)
		return PyEval_GetBuiltins();
	return private ? pylayer_builtins_private() : pylayer_builtins();
}

/* The user's namespace: the dict of a new module that becomes sys.modules['__main__'], the
 * module the user's classes say they live in (dataclasses, typing and enum look it up
 * there). New reference, or NULL. */
static PyObject *user_namespace_new(void)
{
	PyObject *m = PyModule_New("__main__"), *g;

	if (!m)
		return NULL;
	g = PyModule_GetDict(m);
	if (PyDict_SetItemString(g, "__builtins__", builtins_for(0)) < 0 ||
	    PyDict_SetItemString(PyImport_GetModuleDict(), "__main__", m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	user_module = m; /* kept for the life of the process, with its dict */
	if (python_layer)
		pyguard_user(g, m);
	return Py_NewRef(g);
}

/* A program that awaits at its top level (as a notebook's cell may: await main()) is compiled
 * as a coroutine; its parts run on one asyncio.Runner for the call, made at the first of them
 * and closed when the program ends (its tasks still pending are cancelled, as asyncio.run
 * cancels them). */
static PyObject *top_runner;

/* The error of a top level the runner ran starts at the code's frames, as the error of a
 * program run straight does: the runner's and the loop's frames before them are left out. */
static void from_the_code(void)
{
	PyObject *t, *v, *tb;

	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	for (PyObject *at = tb; at && PyTraceBack_Check(at);
	     at = (PyObject *)((PyTracebackObject *)at)->tb_next) {
		PyCodeObject *co = PyFrame_GetCode(((PyTracebackObject *)at)->tb_frame);
		const char *file = PyUnicode_AsUTF8(co->co_filename);
		int ours = file && strcmp(file, INTERP_FILENAME) == 0;

		Py_DECREF(co);
		PyErr_Clear();
		if (ours) {
			Py_INCREF(at);
			Py_SETREF(tb, at);
			if (v)
				PyException_SetTraceback(v, at);
			break;
		}
	}
	PyErr_Restore(t, v, tb);
}

static PyObject *top_await(PyObject *coro)
{
	PyObject *r = NULL;

	if (!top_runner && (!python_layer || config_imports(zcfg, "asyncio"))) {
		PyObject *asyncio = PyImport_ImportModule("asyncio");
		top_runner = asyncio ? PyObject_CallMethod(asyncio, "Runner", NULL) : NULL;
		Py_XDECREF(asyncio);
	}
	if (top_runner) {
		r = PyObject_CallMethod(top_runner, "run", "O", coro);
		if (!r)
			from_the_code();
		return r;
	}
	/* (a coroutine never started, closed: no "never awaited" warning) */
	r = PyObject_CallMethod(coro, "close", NULL);
	Py_XDECREF(r);
	if (!PyErr_Occurred())
		PyErr_SetString(
		    PyExc_RuntimeError,
		    "'await' at the top level runs on asyncio's event loop, and asyncio is "
		    "not among the allowed imports");
	return NULL;
}

static void top_runner_close(void)
{
	PyObject *t, *v, *tb, *r;

	if (!top_runner)
		return;
	PyErr_Fetch(&t, &v, &tb);
	r = PyObject_CallMethod(top_runner, "close", NULL);
	Py_XDECREF(r);
	PyErr_Clear();
	Py_CLEAR(top_runner);
	PyErr_Restore(t, v, tb);
}

/* Run code in g with the builtins b. b is put back first: when g names no __builtins__ (the
 * user's code can delete the name), CPython runs the code with the interpreter's own, the
 * real builtins. */
static PyObject *eval_in(PyObject *code, PyObject *g, PyObject *b)
{
	PyObject *r;

	if (PyDict_SetItemString(g, "__builtins__", b) < 0)
		return NULL;
	r = PyEval_EvalCode(code, g, g);
	if (r && (((PyCodeObject *)code)->co_flags & CO_COROUTINE) && PyCoro_CheckExact(r))
		Py_SETREF(r, top_await(r));
	pyreentry_release_held();
	return r;
}

/* Run the program in g with the builtins b; returns the last value (new ref, may be None) or
 * NULL with an error. */
static PyObject *program_steps(struct program *p, PyObject *g, PyObject *b);

static PyObject *program_run(struct program *p, PyObject *g, PyObject *b)
{
	PyObject *value = program_steps(p, g, b);

	top_runner_close();
	return value;
}

static PyObject *program_steps(struct program *p, PyObject *g, PyObject *b)
{
	PyObject *r, *value = NULL;

	r = eval_in(p->body, g, b);
	if (!r)
		return NULL;
	Py_DECREF(r);
	if (p->last_expr) {
		value = eval_in(p->last_expr, g, b);
		if (!value)
			return NULL;
	}
	if (p->assign) {
		if (PyDict_SetItemString(g, RESULT_TMP, value) < 0) {
			Py_DECREF(value);
			return NULL;
		}
		r = eval_in(p->assign, g, b);
		PyDict_DelItemString(g, RESULT_TMP);
		if (!r) {
			Py_DECREF(value);
			return NULL;
		}
		Py_DECREF(r);
	}
	if (p->aug_name) {
		value = PyDict_GetItemWithError(g, p->aug_name);
		if (!value)
			return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
		Py_INCREF(value);
	}
	return value ? value : Py_NewRef(Py_None);
}

/* A program with imports is built through the ast module's objects (program_build): parse
 * one to them and compile it, all in CPython's C code while the classes are pristine (the
 * caller checks), so that their pages are touched too. Nothing of it is kept or run. */
static void warm_ast_objects(void)
{
#ifdef SAFEPY_C_PARSER
	PyCompilerFlags flags = {PyCF_ONLY_AST, PY_MINOR_VERSION};
	PyObject *tree = Py_CompileStringExFlags("import math as _m\n_m.pi\n", INTERP_FILENAME,
	                                         Py_file_input, &flags, -1);
	PyObject *code = tree ? compile_node(tree, "exec") : NULL;

	Py_XDECREF(code);
	Py_XDECREF(tree);
	PyErr_Clear();
#endif
}

/* CPython 3.11 rewrites instructions into forms specialised for what they met; those guarded
 * by a class's version alone (attribute reads at a slot's offset or a dict's hint, a class's
 * __getitem__) trusted versions its specialiser cached wrongly: an object of another class
 * passed the guard (a slot read at its offset in a bytes object: a fake bytearray over all
 * memory, the sandbox escaped). With CPython linked statically, pyspecialise.c keeps the
 * specialiser from ever writing those forms, and keeps only the forms checked to run safely
 * (nothing to do here: specialising_off is empty). A build with CPython as a
 * shared library cannot reach its specialiser: with the Python layer on, no specialised form
 * runs there. The interpreter's tracing switch, set on the thread's base frame record with no
 * trace or profile function, makes every instruction run as its generic form (each frame
 * takes the switch from the one that called it) and the specialiser is never asked: pure-
 * Python work is slower by what specialisation gave. Setting a trace or profile function,
 * which would put the switch back as it found it, is refused while the layer is armed
 * (sys.settrace, sys.setprofile); it is set again at each call's start and after each
 * warm-up, and a thread's entry sets it for the thread. */
#ifdef SAFEPY_CHECKED_SPECIALISER
static void specialising_off(void)
{
}
#else
#define TRACING_SWITCH_ON 255

static void specialising_off(void)
{
	if (python_layer)
		PyThreadState_Get()->cframe->use_tracing = TRACING_SWITCH_ON;
}
#endif

/* A thread the code starts (with threading among --allow-import's modules) begins with a
 * frame record of its own: its entry sets the switch there before any of the thread's Python
 * runs. It starts with the collector's tick blocked (pygc_thread_start): the tick goes to the
 * main thread, which takes it even while it waits for the thread. _thread.start_new_thread,
 * and threading's own reference to it, start threads through the entry. */
static PyObject *real_start_new_thread;

static PyObject *thread_entry(PyObject *self, PyObject *unused)
{
	(void)unused;
	specialising_off();
	return PyObject_Call(PyTuple_GET_ITEM(self, 0), PyTuple_GET_ITEM(self, 1),
	                     PyTuple_GET_ITEM(self, 2) == Py_None ? NULL
	                                                          : PyTuple_GET_ITEM(self, 2));
}

static PyMethodDef thread_entry_def = {"thread_entry", thread_entry, METH_NOARGS, NULL};

static PyObject *start_new_thread(PyObject *self, PyObject *args)
{
	PyObject *func, *fargs, *kw = Py_None, *bound, *entry, *r;

	(void)self;
	if (!PyArg_UnpackTuple(args, "start_new_thread", 2, 3, &func, &fargs, &kw))
		return NULL;
	if (!PyCallable_Check(func) || !PyTuple_Check(fargs) ||
	    (kw != Py_None && !PyDict_Check(kw)))
		return PyObject_Call(real_start_new_thread, args, NULL); /* its own TypeError */
	bound = PyTuple_Pack(3, func, fargs, kw);
	entry = bound ? PyCFunction_New(&thread_entry_def, bound) : NULL;
	Py_XDECREF(bound);
	r = NULL;
	if (entry) {
		sigset_t was;

		pygc_thread_start(&was);
		r = PyObject_CallFunction(real_start_new_thread, "O()", entry);
		pygc_thread_started(&was);
		Py_DECREF(entry);
	}
	return r;
}

static PyMethodDef start_new_thread_def = {
    "start_new_thread", start_new_thread, METH_VARARGS,
    "Start a new thread and return its identifier (its code runs unspecialised)."};

static int threads_start_through_entry(void)
{
	PyObject *thread = PyImport_ImportModule("_thread"), *name, *threading = NULL, *fn;
	int rc = -1;

	if (!thread)
		return -1;
	real_start_new_thread = PyObject_GetAttrString(thread, "start_new_thread");
	fn = real_start_new_thread ? PyCFunction_New(&start_new_thread_def, NULL) : NULL;
	name = PyUnicode_FromString("threading");
	if (fn && name && PyObject_SetAttrString(thread, "start_new_thread", fn) == 0 &&
	    PyObject_SetAttrString(thread, "start_new", fn) == 0) {
		/* threading took its own reference when it was imported. */
		threading = PyImport_GetModule(name);
		rc = threading          ? PyObject_SetAttrString(threading, "_start_new_thread", fn)
		     : PyErr_Occurred() ? -1
		                        : 0;
	}
	Py_XDECREF(threading);
	Py_XDECREF(name);
	Py_XDECREF(fn);
	Py_DECREF(thread);
	return rc;
}

/* Touch, in a fresh worker, the pages a call touches (compiler, evaluator, result
 * encoding), so their copy-on-write faults happen before the code arrives rather than on
 * the caller's clock. Leaves no state behind: a scratch namespace, no output. A session's
 * next runner warms up in a fork of its state, which the user's code may have changed: the
 * hook is armed, and the snippet runs with builtins no user code holds. */
void interp_warm_up(void)
{
	/* Built as a call's code is, through the objects of the ast module's classes, only while
	 * those are as CPython made them (they are immutable: this is a second check), since this
	 * runs outside any call. Otherwise compiled in C from source. */
	static const char *const snippet = "def _f(n):\n    return [i * 2 for i in range(n)]\n"
	                                   "_x = {'a': _f(3), 'b': 'text'}\n_x\n";
	struct program prog = {0};
	PyObject *g = PyDict_New(), *v = NULL;
	/* No collection here (it would run the finalizers of what the user's code left behind,
	 * outside any call): a worker collects only while a call runs (pygc.c). */
	/* Nor the trace or profile function a call may have set: they are the user's code, and
	 * this runs outside any call. They are back for the next call. */
	PyThreadState *ts = PyThreadState_Get();
	Py_tracefunc trace = ts->c_tracefunc, profile = ts->c_profilefunc;
	PyObject *trace_obj = Py_XNewRef(ts->c_traceobj),
	         *profile_obj = Py_XNewRef(ts->c_profileobj);

	PyEval_SetTrace(NULL, NULL);
	PyEval_SetProfile(NULL, NULL);
	pylayer_arm(python_layer);
	/* Off the call's path: the handlers its call needs (an earlier call may have changed
	 * them). */
	signals_warm = signals_arm() == 0;
	PyErr_Clear();
	if (g && ast_pristine()) {
		if (program_build(snippet, &prog) < 0)
			PyErr_Clear();
		warm_ast_objects();
	} else {
		prog.body =
		    Py_CompileStringExFlags(snippet, INTERP_FILENAME, Py_file_input, NULL, -1);
		prog.last_expr =
		    Py_CompileStringExFlags("_x", INTERP_FILENAME, Py_eval_input, NULL, -1);
	}
	if (g && prog.body && prog.last_expr)
		v = program_run(&prog, g, builtins_for(1));
	if (v) {
		struct run_outcome scratch;
		int trunc = 0;

		run_outcome_init(&scratch);
		pyresult_value(&scratch, v, zcfg->max_result, &trunc);
		run_outcome_clear(&scratch);
	}
	PyErr_Clear();
	Py_XDECREF(v);
	Py_XDECREF(g);
	program_clear(&prog);
	PyEval_SetProfile(profile, profile_obj);
	PyEval_SetTrace(trace, trace_obj);
	Py_XDECREF(profile_obj);
	Py_XDECREF(trace_obj);
	PyErr_Clear();
	specialising_off();
}

/* ---- notebook commands ---------------------------------------------------------------- */

/* Does text (n bytes) parse, by the parser alone (no code object), as start (Py_eval_input: an
 * expression; Py_file_input: statements)? An expression with await, yield or := is taken as not
 * one: it could not be a lambda's body. */
static int parses(const char *text, size_t n, int start)
{
	PyCompilerFlags flags = {PyCF_ONLY_AST | PyCF_IGNORE_COOKIE, PY_MINOR_VERSION};
	char *s = strndup(text, n);
	PyObject *tree = NULL;

	if (s && !(start == Py_eval_input &&
	           (strstr(s, "await") || strstr(s, "yield") || strstr(s, ":="))))
		tree = Py_CompileStringExFlags(s, INTERP_FILENAME, start, &flags, -1);
	free(s);
	Py_XDECREF(tree);
	PyErr_Clear();
	return tree != NULL;
}

/* The length of a statement's text before its comment (a # outside a string), without the
 * spaces before it. */
static size_t before_comment(const char *p, size_t len)
{
	char quote = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (quote) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == quote)
				quote = 0;
		} else if (p[i] == '\'' || p[i] == '"') {
			quote = p[i];
		} else if (p[i] == '#') {
			break;
		}
	}
	if (i > len)
		i = len;
	while (i > 0 && (p[i - 1] == ' ' || p[i - 1] == '\t' || p[i - 1] == '\r'))
		i--;
	return i;
}

/* A statement that opens a block (or ends one): the timing commands time simple ones. */
static int opens_block(const char *p, size_t len)
{
	static const char *const words[] = {"for",   "while",  "if",      "elif", "else",
	                                    "try",   "except", "finally", "with", "def",
	                                    "class", "async",  "match",   "case", NULL};

	if (len > 0 && p[0] == '@')
		return 1;
	for (const char *const *w = words; *w; w++) {
		size_t k = strlen(*w);
		if (len >= k && strncmp(p, *w, k) == 0 &&
		    (len == k || !(isalnum((unsigned char)p[k]) || p[k] == '_')))
			return 1;
	}
	return 0;
}

/* %timeit's options before its statement (-n N, -r R, -p P, -q; -o, -t and -c are taken and
 * change nothing here): *p moves past them. 0, or -1 when an option is not one of these. */
static int timeit_options(const char **p, const char *end, long *number, long *repeat,
                          long *precision, int *quiet)
{
	const char *q = *p;

	while (q < end && q[0] == '-' && q + 1 < end && isalpha((unsigned char)q[1])) {
		char opt = q[1];
		q += 2;
		if (opt == 'n' || opt == 'r' || opt == 'p') {
			char *after;
			long v;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			v = strtol(q, &after, 10);
			if (after == q || after > end)
				return -1;
			*(opt == 'n' ? number : opt == 'r' ? repeat : precision) = v;
			q = after;
		} else if (opt == 'q') {
			*quiet = 1;
		} else if (opt != 'o' && opt != 't' && opt != 'c') {
			return -1;
		}
		if (q < end && *q != ' ' && *q != '\t')
			return -1;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
	}
	*p = q;
	return 0;
}

static void note_stderr(const char *note)
{
	PyObject *msg = PyUnicode_DecodeUTF8(note, (Py_ssize_t)strlen(note), "replace"), *w;

	w = msg ? PyObject_CallMethod(capture_stream(CAPTURE_STDERR), "write", "O", msg) : NULL;
	Py_XDECREF(w);
	Py_XDECREF(msg);
	PyErr_Clear();
}

/* code with the bytes [from, to) replaced by with (n bytes): malloc'd, or NULL. */
static char *spliced(const char *code, size_t from, size_t to, const char *with, size_t n)
{
	size_t len = strlen(code), size = len - (to - from) + n + 1;
	char *out = malloc(size);

	if (!out)
		return NULL;
	memcpy(out, code, from);
	memcpy(out + from, with, n);
	memcpy(out + from + n, code + to, len - to + 1);
	return out;
}

/* A %time or %timeit line's statement (stmt, len bytes, at column col of the line that starts
 * at line) as the calls of pytiming.c, in place of the command and its statement: an
 * expression as _safepy_time(lambda: (...)), its value the line's, or _safepy_timeit(lambda:
 * (...), n, r, p, q); another simple statement in a with _safepy_time(): block (a %timeit of
 * one is timed once, said on stderr). NULL when the line cannot be so written (it stays as it
 * was for the caller's own rewrite). The columns of the statement moved: pyresult.c marks
 * tracebacks under the line as written. */
static char *timed_line(const char *code, const char *line, const char *cmd_at, const char *end,
                        int timeit, long lineno)
{
	long number = 0, repeat = 0, precision = 3;
	int quiet = 0, expr;
	const char *stmt = cmd_at + strcspn(cmd_at, " \t");
	size_t len, head_len;
	char head[160], tail[96], *text, *out;

	while (stmt < end && (*stmt == ' ' || *stmt == '\t'))
		stmt++;
	if (timeit && timeit_options(&stmt, end, &number, &repeat, &precision, &quiet) < 0)
		return NULL;
	len = before_comment(stmt, (size_t)(end - stmt));
	if (len == 0 || stmt[len - 1] == '\\' || opens_block(stmt, len))
		return NULL;
	/* (an expression's value is the line's only at the top level; an indented one, in a class
	 * body or a method, is timed as a statement: a lambda there would not see the class's names
	 * or super()'s frame) */
	expr = parses(stmt, len, Py_eval_input) && (cmd_at == line || timeit);
	if (expr && timeit)
		snprintf(head, sizeof(head), "_safepy_timeit(lambda: (");
	else if (expr)
		snprintf(head, sizeof(head), "_safepy_time(lambda: (");
	else
		snprintf(head, sizeof(head), "with _safepy_time(): ");
	if (expr && timeit)
		snprintf(tail, sizeof(tail), "), %ld, %ld, %ld, %s)", number, repeat, precision,
		         quiet ? "True" : "False");
	else
		snprintf(tail, sizeof(tail), "%s", expr ? "))" : "");
	head_len = strlen(head);
	if (!(text = malloc(head_len + len + strlen(tail) + 1)))
		return NULL;
	memcpy(text, head, head_len);
	memcpy(text + head_len, stmt, len);
	strcpy(text + head_len + len, tail);
	if (!parses(text, strlen(text), Py_file_input)) {
		free(text);
		return NULL;
	}
	out =
	    spliced(code, (size_t)(cmd_at - code), (size_t)(stmt + len - code), text, strlen(text));
	free(text);
	if (out) {
		pyresult_line_moved(lineno, (long)(cmd_at - line) + (long)head_len,
		                    (long)head_len - (long)(stmt - cmd_at));
		if (timeit && !expr) {
			char note[256];
			snprintf(
			    note, sizeof(note),
			    "[line %ld: %%timeit times an expression in a loop; this statement is "
			    "not one, so it ran once, timed as %%time does]\n",
			    lineno);
			note_stderr(note);
		}
	}
	return out;
}

/* Notebook commands an assistant writes as a cell's first lines (%matplotlib inline, !pip
 * install x, %time f()) are no Python: the whole cell failed with a SyntaxError. A line the
 * parser refuses that starts (after its indentation) with % or %% and a letter, or with ! and
 * a letter, is handled here. %time and %timeit (and %%time and %%timeit followed by a
 * statement) time their statement (timed_line); %%time or %%timeit alone on the cell's first
 * line times the whole cell (*cell set; %%timeit's cell runs once). Any other becomes "pass",
 * and a note on stderr says so (a timing command that cannot be timed keeps its statement,
 * untimed). Returns the new text (malloc'd), or NULL when line lineno of code is no such
 * command. */
static char *magic_out(const char *code, long lineno, int *cell)
{
	static const char *const timing[] = {"%%timeit", "%%time", "%timeit", "%time", NULL};
	const char *line, *p, *end, *keep = NULL;
	char *out, *at, note[256];
	size_t len, n = strlen(code), cell_k;
	int timeit = 0;

	if (!(line = pyresult_line_at(code, lineno)))
		return NULL;
	p = line + strspn(line, " \t");
	end = p + strcspn(p, "\r\n");
	len = (size_t)(end - p);
	if (!((p[0] == '%' &&
	       (isalpha((unsigned char)p[1]) || (p[1] == '%' && isalpha((unsigned char)p[2])))) ||
	      (p[0] == '!' && isalpha((unsigned char)p[1]))))
		return NULL;
	for (const char *const *t = timing; *t && !keep; t++) {
		size_t k = strlen(*t);
		if (len > k && strncmp(p, *t, k) == 0 && (p[k] == ' ' || p[k] == '\t')) {
			keep = p + k + strspn(p + k, " \t");
			timeit = strstr(*t, "timeit") != NULL;
		}
	}
	if (keep && keep < end && (out = timed_line(code, line, p, end, timeit, lineno)))
		return out;
	if (keep && keep[0] == '-')
		keep = NULL; /* options it does not know: no statement to keep */
	cell_k = strncmp(p, "%%timeit", 8) == 0 ? 8 : strncmp(p, "%%time", 6) == 0 ? 6 : 0;
	if (!keep && cell_k && p == code + strspn(code, " \t\r\n") &&
	    p + cell_k + strspn(p + cell_k, " \t\r") == end) {
		*cell = cell_k == 8 ? 2 : 1;
		if (*cell == 2) {
			snprintf(note, sizeof(note),
			         "[line %ld: %%%%timeit's cell ran once, timed as %%%%time does]\n",
			         lineno);
			note_stderr(note);
		}
		if (!(out = strdup(code)))
			return NULL;
		memset(out + (p - code), ' ', len);
		return out;
	}
	snprintf(note, sizeof(note), "[line %ld: %.*s is a notebook command, not Python: %s]\n",
	         lineno, (int)(len > 120 ? 120 : len), p,
	         keep                                           ? "its statement runs, untimed"
	         : strstr(p, "pip ") && strstr(p, "pip ") < end ? "skipped (packages cannot be "
	                                                          "installed in the sandbox)"
	                                                        : "skipped");
	note_stderr(note);
	if (keep) {
		/* the command's words taken out, the statement as it is (no padding: a string or a
		 * continuation the statement opens goes on the next line) */
		out = spliced(code, (size_t)(p - code), (size_t)(keep - code), "", 0);
		if (out)
			pyresult_line_moved(lineno, (long)(p - line), -(long)(keep - p));
		return out;
	}
	out = malloc(n + 1);
	if (!out)
		return NULL;
	memcpy(out, code, n + 1);
	at = out + (p - code);
	if (len < 4) {
		memset(at, ' ', len);
	} else {
		memcpy(at, "pass", 4);
		memset(at + 4, ' ', len - 4);
	}
	return out;
}

/* The line of the SyntaxError raised, or 0. The error stays raised. */
static long syntax_lineno(void)
{
	PyObject *t, *v, *tb, *l;
	long n = 0;

	if (!PyErr_ExceptionMatches(PyExc_SyntaxError))
		return 0;
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	l = v ? PyObject_GetAttrString(v, "lineno") : NULL;
	if (l && PyLong_Check(l))
		n = PyLong_AsLong(l);
	Py_XDECREF(l);
	PyErr_Clear();
	PyErr_Restore(t, v, tb);
	return n;
}

void interp_run(const char *code, struct run_outcome *out)
{
	struct program prog = {0};
	PyObject *g = NULL, *value = NULL, *exc = NULL;
	void *reserve = mmap(NULL, MEMORY_RESERVE, PROT_READ | PROT_WRITE,
	                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int trunc = 0, failed, memory, late = 0, cell = 0;

	/* A byte order mark before the code is not part of it (as in a file the interpreter
	 * reads). */
	if (strncmp(code, "\xef\xbb\xbf", 3) == 0)
		code += 3;
	capture_reset();
	/* The deadline raises TimeoutError in this call whatever an earlier call of the session
	 * did to its signal handlers or mask (the hard kill follows it in any case). */
	if (!signals_warm && signals_arm() < 0)
		PyErr_Clear();
	signals_warm = 0;
	/* Until the result is sent, modules the code or its libraries import late are asked of
	 * the supervisor. */
	pyimport_serving(1);
	/* Modules imported since the last call (a late import seals what it runs itself). */
	pymodguard_seal_all();
	/* Armed for good: from here on anything Python runs may be the user's code. */
	pylayer_arm(python_layer);
	/* A deadline signal can land after the previous call's code ended (between its result
	 * and its park): CPython keeps it pending. It belongs to that call: handle it here and
	 * drop what it raised, so this call does not start with a TimeoutError. */
	if (PyErr_CheckSignals() < 0)
		PyErr_Clear();
	deadline_hit = 0;
	deadline_asks = 0;
	pygc_call_begin();
	pyfiles_call_begin();
	pyguard_call_begin();
	pydata_call_begin();
	/* What the session's code set as sys.stdout and sys.stderr last call stays its: this
	 * call's output is captured. (Dropping them may run the code's finalizers: in the call.) */
	if (pyproxy_streams_reset() < 0)
		PyErr_Clear();
	/* One namespace per process, kept across calls: a session's state. */
	if (!user_globals)
		user_globals = user_namespace_new();
	g = user_globals;
	Py_XINCREF(g);
	pyresult_call_source(code);
	specialising_off();
	if (g && pyguard_versions_left() == 0) {
		int built = program_build(code, &prog);
		char *plain = NULL, *next;

		for (int i = 0; built < 0 && i < 64; i++) {
			next = magic_out(plain ? plain : code, syntax_lineno(), &cell);
			if (!next)
				break;
			PyErr_Clear();
			free(plain);
			plain = next;
			built = program_build(plain, &prog);
		}
		free(plain);
		if (built == 0) {
			pyresult_call_codes(code, prog.body, prog.last_expr, prog.assign);
			if (cell)
				pytiming_cell(1);
			value = program_run(&prog, g, builtins_for(0));
			if (cell && value && pytiming_cell(0) < 0)
				Py_CLEAR(value);
		}
	}
	if (!value) {
		exc = exception_take();
		/* sys.exit(0), sys.exit(), sys.exit(main()): the script ended as it does when it
		 * succeeds, and the call is ok, with no result. */
		if (exit_success(exc))
			Py_CLEAR(exc);
		if (exc && PyErr_GivenExceptionMatches(exc, PyExc_MemoryError) &&
		    reserve != MAP_FAILED) {
			munmap(reserve, MEMORY_RESERVE);
			reserve = MAP_FAILED;
		}
	} else if (value != Py_None) {
		/* repr() runs the user's code: still armed. */
		if (pyresult_value(out, value, zcfg->max_result, &trunc) < 0)
			exc = exception_take();
	}
	/* The figures it showed or left open, as images: still armed (matplotlib runs the user's
	 * callbacks). The memory running out while rendering is the call's error; the time running
	 * out there (the deadline's first ask, once the code itself had ended) leaves the figures
	 * not yet drawn out (late, said on stderr), and the call as the code left it unless the
	 * deadline asks again before it is told; any other failure is said on stderr and leaves
	 * the call as it was. */
	if (!deadline_hit && !capture_flooded() && pydata_figures(out, value, &late) < 0) {
		PyObject *e = exception_take();
		if (!exc && e &&
		    (deadline_hit || PyErr_GivenExceptionMatches(e, PyExc_MemoryError) ||
		     capture_flooded())) {
			exc = e;
		} else {
			PyObject *msg = e ? PyUnicode_FromFormat("[figures not returned: %s: %S]\n",
			                                         Py_TYPE(e)->tp_name, e)
			                  : NULL;
			PyObject *w = msg ? PyObject_CallMethod(capture_stream(CAPTURE_STDERR),
			                                        "write", "O", msg)
			                  : NULL;
			Py_XDECREF(w);
			Py_XDECREF(msg);
			Py_XDECREF(e);
			PyErr_Clear();
		}
	}
	/* Still armed: formatting the error runs the exceptions' __str__. */
	if (exc) {
		pyfiles_explain(exc);
		pyresult_error(out, exc, code, zcfg->max_result);
	}
	memory = exc && PyErr_GivenExceptionMatches(exc, PyExc_MemoryError);
	/* Releasing the value, the exception (its frames) and the program runs finalizers: still
	 * in the call, armed, and before the output is taken, so what they print comes back. */
	failed = exc != NULL;
	Py_CLEAR(exc);
	Py_CLEAR(value);
	program_clear(&prog);
	/* the finalizers the code's end deferred, and its last release's */
	pyreentry_deferred_run();
	/* The files it opened end with it, what they buffered written, before its output is
	 * taken (a file that could not be written says so there); the databases' commits made in
	 * SQL first, and the objects that read their file later given its bytes. */
	pydata_keep_files();
	pysqlite_call_end();
	pyfiles_call_end();
	/* What those deferred runs, and the files it opened end too (a finalizer run there opened
	 * a file that stayed open into the next call, whose writes then went to whatever file had
	 * taken its fd): again while that defers more, a few rounds. */
	for (int round = 0; round < 3; round++) {
		unsigned long seen = pyreentry_deferred_count();
		pyreentry_deferred_run();
		pyfiles_call_end();
		if (pyreentry_deferred_count() == seen)
			break;
	}
	pygc_call_end();
	pyresult_call_source(NULL);
	/* The deadline came while the figures were drawn, after the code ended, and asked once:
	 * the call is as the code left it (its files kept); asked again, the call's end ran past
	 * the grace and may have been cut short: a timeout, as any. */
	if (late && !failed && deadline_asks == 1 && !capture_flooded())
		deadline_hit = 0;
	if (failed) {
		if (deadline_hit)
			out->status = RUN_TIMEOUT;
		else if (capture_flooded())
			out->status = RUN_OUTPUT_LIMIT;
		else if (memory)
			out->status = RUN_MEMORY_LIMIT;
		else
			out->status = RUN_ERROR;
	} else if (deadline_hit || capture_flooded()) {
		/* The code caught the exception we raised in it and finished anyway. */
		out->status = deadline_hit ? RUN_TIMEOUT : RUN_OUTPUT_LIMIT;
		text_set_str(&out->error_type,
		             deadline_hit ? "TimeoutError" : "OutputLimitExceeded");
		text_set_str(&out->error_message,
		             deadline_hit
		                 ? "the time limit was reached (the code went on after the "
		                   "TimeoutError raised in it: it caught it, or it was raised "
		                   "where Python ignores exceptions, as in a __del__)"
		                 : "the output limit was exceeded (the code went on after the "
		                   "exception raised in it: it caught it, or it was raised "
		                   "where Python ignores exceptions, as in a __del__)");
		text_set_str(&out->error_traceback, "");
	} else {
		out->status = RUN_OK;
	}
	capture_text(CAPTURE_STDOUT, &trunc, &out->stdout_text);
	capture_text(CAPTURE_STDERR, &trunc, &out->stderr_text);
	capture_text(CAPTURE_LOG, &trunc, &out->logs);
	/* Nothing of this call stays in the keeps, where the supervisor may read a runner's
	 * output when it cannot send it: a session's next call starts with none. */
	capture_reset();
	out->truncated = out->truncated || trunc;
	Py_XDECREF(g);
	if (reserve != MAP_FAILED)
		munmap(reserve, MEMORY_RESERVE);
	pyimport_serving(0);
}
