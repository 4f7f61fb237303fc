/* pytiming.c - the notebook's timing commands: %time and %timeit lines (interp.c rewrites them
 * into calls of the two builtins here) print what a notebook prints for them.
 *
 *   %time x = f()      CPU times: user 1.2 ms, sys: 12 µs, total: 1.21 ms
 *                      Wall time: 1.21 ms
 *   %timeit f()        3.21 µs ± 40.1 ns per loop (mean ± std. dev. of 7 runs, 100,000 loops
 *                      each)
 *
 * _safepy_time(fn) calls fn and prints its times (the value comes back: a %time of the last
 * expression is the call's result); _safepy_time() is a context manager that times its block
 * (a statement). _safepy_timeit(fn, number=0, repeat=0, precision=3, quiet=False) calls fn
 * number times per run (0: the first power of ten whose run takes 0.2 s or more), repeat
 * runs (0: 7, fewer when each takes seconds), with automatic collection paused as the timeit
 * module pauses it. Times print on the
 * code's sys.stdout, as print() writes. Nothing here holds or reads anything of the code's
 * beyond the function it is given. */
#include "interp_internal.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

/* %timeit's runs, unless told (-r); with the number of loops its own, runs of a long statement
 * take at most about RUNS_BUDGET_S in all. */
#define REPEAT_DEFAULT 7
#define RUNS_BUDGET_S  10.0

struct clocks {
	double wall, user, sys;
};

static double seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clocks_now(struct clocks *c)
{
	struct rusage ru;

	c->wall = monotonic();
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		c->user = seconds(&ru.ru_utime);
		c->sys = seconds(&ru.ru_stime);
	} else {
		c->user = c->sys = 0;
	}
}

/* t seconds as a notebook writes it: precision significant digits in s, ms, µs or ns, or days,
 * hours, minutes and seconds from a minute up. */
static void time_text(char *buf, size_t size, double t, int precision)
{
	static const char *const units[] = {"s", "ms", "\xc2\xb5s", "ns"};
	static const double scale[] = {1, 1e3, 1e6, 1e9};
	int order = 3;

	if (t >= 60.0) {
		static const struct {
			const char *suffix;
			double length;
		} parts[] = {{"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}};
		double left = t;
		size_t at = 0;

		buf[0] = '\0';
		for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
			long v = (long)(left / parts[i].length);
			if (v > 0) {
				left = fmod(left, parts[i].length);
				at +=
				    (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%ld%s",
				                     at ? " " : "", v, parts[i].suffix);
			}
			if (left < 1 || at >= size)
				break;
		}
		return;
	}
	if (t > 0.0) {
		/* -(floor(log10(t)) // 3), floor division as Python's */
		double f = floor(log10(t));
		order = (int)-floor(f / 3.0);
		if (order > 3)
			order = 3;
		if (order < 0)
			order = 0;
		/* (a time of a whole unit whose logarithm came out a little under it, 1 us as
		 * 1e-06 is: 1000 of the smaller unit, printed "1e+03 ns") */
		while (order > 0 && t * scale[order] >= 999.5)
			order--;
	}
	snprintf(buf, size, "%.*g %s", precision, t * scale[order], units[order]);
}

/* text on the code's sys.stdout (0), or -1 with the error its write raised. */
static int print_text(const char *text)
{
	PyObject *out = PySys_GetObject("stdout"); /* borrowed */

	if (!out || out == Py_None)
		return 0;
	return PyFile_WriteString(text, out);
}

static int print_times(const struct clocks *a, const struct clocks *b)
{
	char user[64], sys[64], total[64], wall[64], line[320];
	double u = b->user - a->user, s = b->sys - a->sys;

	time_text(user, sizeof(user), u > 0 ? u : 0, 3);
	time_text(sys, sizeof(sys), s > 0 ? s : 0, 3);
	time_text(total, sizeof(total), u + s > 0 ? u + s : 0, 3);
	time_text(wall, sizeof(wall), b->wall - a->wall, 3);
	snprintf(line, sizeof(line), "CPU times: user %s, sys: %s, total: %s\nWall time: %s\n",
	         user, sys, total, wall);
	return print_text(line);
}

/* ---- _safepy_time() as a context manager ---- */

typedef struct {
	PyObject_HEAD struct clocks start;
} TimerObject;

static PyObject *timer_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	clocks_now(&((TimerObject *)self)->start);
	return Py_NewRef(self);
}

static PyObject *timer_exit(PyObject *self, PyObject *args)
{
	struct clocks end;
	PyObject *type = Py_None, *value, *tb;

	clocks_now(&end);
	if (!PyArg_UnpackTuple(args, "__exit__", 0, 3, &type, &value, &tb))
		return NULL;
	/* a block that raised prints no times, as the notebook's %time prints none */
	if (type == Py_None && print_times(&((TimerObject *)self)->start, &end) < 0)
		return NULL;
	Py_RETURN_FALSE;
}

static PyMethodDef timer_methods[] = {
    {"__enter__", timer_enter, METH_NOARGS, NULL},
    {"__exit__", timer_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject timer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "safepy.timer",
    .tp_basicsize = sizeof(TimerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The block of a %time line, timed.",
    .tp_methods = timer_methods,
};

/* _safepy_time(fn): fn() timed; _safepy_time(): a timer for a with block. */
static PyObject *time_(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	struct clocks a, b;
	PyObject *r;

	(void)self;
	if (nargs > 1) {
		PyErr_SetString(PyExc_TypeError, "_safepy_time takes at most one function");
		return NULL;
	}
	if (nargs == 0) {
		TimerObject *t = PyObject_New(TimerObject, &timer_type);
		if (t)
			clocks_now(&t->start);
		return (PyObject *)t;
	}
	clocks_now(&a);
	r = PyObject_CallNoArgs(args[0]);
	clocks_now(&b);
	if (r && print_times(&a, &b) < 0)
		Py_CLEAR(r);
	return r;
}

/* ---- _safepy_timeit ---- */

/* Seconds that number calls of fn took, or -1 with the error one raised. */
static double run(PyObject *fn, long number)
{
	double t0 = monotonic();

	for (long i = 0; i < number; i++) {
		PyObject *r = PyObject_CallNoArgs(fn);
		if (!r)
			return -1;
		Py_DECREF(r);
	}
	return monotonic() - t0;
}

static PyObject *timeit_(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"fn", "number", "repeat", "precision", "quiet", NULL};
	PyObject *fn;
	long number = 0, repeat = 0;
	int precision = 3, quiet = 0, was;
	double *runs, best = 0, worst = 0, mean = 0, var = 0;
	char m[64], sd[64], line[512], loops[32];
	int ok = 1;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|llip:_safepy_timeit", kwlist, &fn, &number,
	                                 &repeat, &precision, &quiet))
		return NULL;
	if (number < 0 || repeat < 0 || repeat > 1000 || precision < 1 || precision > 17) {
		PyErr_SetString(
		    PyExc_ValueError,
		    "%timeit takes -n 0 or more loops, -r 1 to 1000 runs and -p 1 to 17 "
		    "digits");
		return NULL;
	}
	if (!(runs = PyMem_Calloc(repeat ? (size_t)repeat : REPEAT_DEFAULT, sizeof(*runs))))
		return PyErr_NoMemory();
	was = pygc_pause(1);
	if (number == 0) {
		/* the first power of ten whose run takes 0.2 s or more (at most 10**9) */
		double t = 0;
		for (int i = 0; i < 10 && ok; i++) {
			number = (long)pow(10, i);
			t = run(fn, number);
			ok = t >= 0;
			if (t >= 0.2)
				break;
		}
		/* runs of a second or more: as many as fit in RUNS_BUDGET_S (the call's time limit
		 * would end seven runs of a few seconds; the runs are said) */
		if (!repeat && t > RUNS_BUDGET_S / REPEAT_DEFAULT)
			repeat = t >= RUNS_BUDGET_S ? 1 : (long)(RUNS_BUDGET_S / t);
	}
	if (!repeat)
		repeat = REPEAT_DEFAULT;
	for (long k = 0; k < repeat && ok; k++)
		ok = (runs[k] = run(fn, number)) >= 0;
	pygc_pause(was);
	if (!ok) {
		PyMem_Free(runs);
		return NULL;
	}
	for (long k = 0; k < repeat; k++) {
		double t = runs[k] / (double)number;
		best = k == 0 || t < best ? t : best;
		worst = t > worst ? t : worst;
		mean += t / (double)repeat;
	}
	for (long k = 0; k < repeat; k++) {
		double d = runs[k] / (double)number - mean;
		var += d * d / (double)repeat;
	}
	PyMem_Free(runs);
	if (quiet)
		Py_RETURN_NONE;
	if (worst > 4 * best && best > 0 && worst > 1e-6) {
		snprintf(
		    line, sizeof(line),
		    "The slowest run took %0.2f times longer than the fastest. This could mean "
		    "that an intermediate result is being cached.\n",
		    worst / best);
		if (print_text(line) < 0)
			return NULL;
	}
	time_text(m, sizeof(m), mean, precision);
	time_text(sd, sizeof(sd), sqrt(var), precision);
	/* the loops with thousands separated by commas */
	{
		char digits[24];
		size_t n = (size_t)snprintf(digits, sizeof(digits), "%ld", number), at = 0;
		for (size_t i = 0; i < n && at + 2 < sizeof(loops); i++) {
			if (i > 0 && (n - i) % 3 == 0)
				loops[at++] = ',';
			loops[at++] = digits[i];
		}
		loops[at] = '\0';
	}
	snprintf(line, sizeof(line),
	         "%s \xc2\xb1 %s per loop (mean \xc2\xb1 std. dev. of %ld run%s, %s loop%s each)\n",
	         m, sd, repeat, repeat == 1 ? "" : "s", loops, number == 1 ? "" : "s");
	if (print_text(line) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef time_def = {"_safepy_time", (PyCFunction)(void (*)(void))time_, METH_FASTCALL,
                               "_safepy_time(fn) calls fn and prints its times; _safepy_time() "
                               "times a with block (a %time line)."};
static PyMethodDef timeit_def = {
    "_safepy_timeit", (PyCFunction)(void (*)(void))timeit_, METH_VARARGS | METH_KEYWORDS,
    "_safepy_timeit(fn, number=0, repeat=7, precision=3, quiet=False): fn timed over "
    "repeated loops (a %timeit line)."};

int pytiming_install(PyObject *builtins)
{
	PyObject *t, *ti;
	int rc;

	if (PyType_Ready(&timer_type) < 0)
		return -1;
	t = PyCFunction_New(&time_def, NULL);
	ti = PyCFunction_New(&timeit_def, NULL);
	rc = t && ti && PyDict_SetItemString(builtins, time_def.ml_name, t) == 0 &&
	             PyDict_SetItemString(builtins, timeit_def.ml_name, ti) == 0
	         ? 0
	         : -1;
	Py_XDECREF(t);
	Py_XDECREF(ti);
	return rc;
}

/* A %%time cell: its start (begin 1), and its times printed when it ended well (0). 0, or -1
 * with the error the code's stdout raised. */
int pytiming_cell(int begin)
{
	static struct clocks start;
	struct clocks end;

	if (begin) {
		clocks_now(&start);
		return 0;
	}
	clocks_now(&end);
	return print_times(&start, &end);
}
