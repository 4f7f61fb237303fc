/* pyfork.c - forks inside a session without running Python code: the fork hooks that
 * os.register_at_fork keeps (random's reseed, threading's clean-up, and any a library or the
 * user added) are dropped before each fork of a worker, so nothing a call changed can run
 * around a fork. The hook lists live in the interpreter's state, which only CPython's
 * internal headers describe; this file and pyframe.c are the places that include them. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_interp.h"
#include "internal/pycore_pystate.h"

#include "worker_internal.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyfork.c reads the fork hook lists of CPython 3.11's interpreter state"
#endif

void pyfork_drop_hooks(void)
{
	PyInterpreterState *interp = _PyInterpreterState_GET();

	Py_CLEAR(interp->before_forkers);
	Py_CLEAR(interp->after_forkers_parent);
	Py_CLEAR(interp->after_forkers_child);
}

/* ---- the zygote's hooks ---------------------------------------------------------------- */

/* A fresh worker is forked from the zygote, which has run its last Python code by then: the
 * hooks that run in each worker cost it pages of the zygote's memory, and on machines where a
 * first touch of a page after fork is dear, most of its start. Two of them are made cheaper,
 * once, before the zygote serves:
 *   threading's clean-up leaves the module's state as it is when the zygote has one thread
 *   and the module knows no other (checked once: the zygote starts no thread later, and forks
 *   from C, outside any Python code, so no lock of the module is held): it goes then, and
 *   stays otherwise;
 *   random's reseed (Random.seed of the module's instance, in Python) becomes the same two
 *   steps called from C: the C generator's seed from the OS, then gauss_next = None.
 * Every other hook (logging's, numpy's reseed, matplotlib's font cache) runs as registered. */

static PyObject *seed_c; /* _random.Random.seed, the C method */

static PyObject *reseed_random(PyObject *inst, PyObject *unused)
{
	PyObject *r;

	(void)unused;
	r = PyObject_CallOneArg(seed_c, inst);
	if (!r)
		return NULL;
	Py_DECREF(r);
	if (PyObject_SetAttrString(inst, "gauss_next", Py_None) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef reseed_def = {"reseed_random", reseed_random, METH_NOARGS,
                                 "random's after-fork reseed, from C"};

/* sys.modules[name], a new reference, or NULL (an error set only when the lookup failed). */
static PyObject *module_loaded(const char *name)
{
	PyObject *n = PyUnicode_FromString(name), *m;

	if (!n)
		return NULL;
	m = PyImport_GetModule(n);
	Py_DECREF(n);
	return m;
}

/* Is f class cls's method name bound to inst? */
static int is_method_of(PyObject *f, PyObject *inst, PyObject *cls, const char *name)
{
	PyObject *want;
	int same;

	if (!PyMethod_Check(f) || PyMethod_GET_SELF(f) != inst)
		return 0;
	want = PyObject_GetAttrString(cls, name);
	if (!want) {
		PyErr_Clear();
		return 0;
	}
	same = PyMethod_GET_FUNCTION(f) == want;
	Py_DECREF(want);
	return same;
}

/* The zygote's only thread is threading's main thread, and the module knows no other: then
 * threading's clean-up after a fork would leave its state as it is. Returns 1 or 0. */
static int threading_single(void)
{
	static const char *const check =
	    "import threading as t\n"
	    "m = t._main_thread\n"
	    "ok = (t.current_thread() is m and list(t._active.values()) == [m] and not t._limbo\n"
	    "      and set(t._dangling) <= {m} and t._shutdown_locks <= {m._tstate_lock})\n";
	PyObject *g = PyDict_New(), *r = NULL, *ok;
	int single = 0;

	if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0)
		r = PyRun_String(check, Py_file_input, g, g);
	ok = r ? PyDict_GetItemString(g, "ok") : NULL;
	single = ok == Py_True;
	Py_XDECREF(r);
	Py_XDECREF(g);
	PyErr_Clear();
	return single;
}

int pyfork_zygote_hooks(void)
{
	PyInterpreterState *interp = _PyInterpreterState_GET();
	PyObject *list = interp->after_forkers_child, *threading = NULL, *after = NULL,
	         *random = NULL, *inst = NULL, *cls = NULL, *crandom = NULL, *ccls = NULL;
	int rc = -1;

	if (!list)
		return 0;
	/* Only modules already imported have hooks. */
	threading = module_loaded("threading");
	random = module_loaded("random");
	crandom = module_loaded("_random");
	if (PyErr_Occurred())
		goto out;
	if (threading && !(after = PyObject_GetAttrString(threading, "_after_fork")))
		goto out;
	if (random && crandom) {
		inst = PyObject_GetAttrString(random, "_inst");
		cls = PyObject_GetAttrString(random, "Random");
		ccls = PyObject_GetAttrString(crandom, "Random");
		if (!inst || !cls || !ccls)
			goto out;
		if (!seed_c && !(seed_c = PyObject_GetAttrString(ccls, "seed")))
			goto out;
	}
	for (Py_ssize_t i = PyList_GET_SIZE(list) - 1; i >= 0; i--) {
		PyObject *f = PyList_GET_ITEM(list, i);

		if (after && f == after && threading_single()) {
			if (PySequence_DelItem(list, i) < 0)
				goto out;
		} else if (inst && is_method_of(f, inst, cls, "seed") &&
		           PyObject_IsInstance(inst, ccls) == 1) {
			PyObject *c = PyCFunction_New(&reseed_def, inst);

			if (!c || PyList_SetItem(list, i, c) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	Py_XDECREF(threading);
	Py_XDECREF(after);
	Py_XDECREF(random);
	Py_XDECREF(inst);
	Py_XDECREF(cls);
	Py_XDECREF(crandom);
	Py_XDECREF(ccls);
	return rc;
}
