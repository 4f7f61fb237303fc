/* pyframe.c - what a running frame says of how it was called, which only CPython's internal
 * headers describe: the Python layer (pyguard.c) tells a frame its caller's bytecode called
 * from one that C code called (a slot, a property's getter, a partial). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_frame.h"

#include "worker_internal.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyframe.c reads the frames of CPython 3.11"
#endif

int pyframe_called_from_c(PyFrameObject *f)
{
	/* The interpreter runs a Python function that bytecode calls in the caller's own loop; a
	 * frame that starts a loop of its own was called from C. */
	return f->f_frame && f->f_frame->is_entry;
}
