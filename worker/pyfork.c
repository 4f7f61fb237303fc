/* pyfork.c - forks inside a session without running Python code: the fork hooks that
 * os.register_at_fork keeps (random's reseed, threading's clean-up, and any a library or the
 * user added) are dropped before each fork of a worker, so nothing a call changed can run
 * around a fork. The hook lists live in the interpreter's state, which only CPython's
 * internal headers describe; this file is the one place that includes them. */
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
