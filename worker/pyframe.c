/* pyframe.c - what a running frame says of how it was called, which only CPython's internal
 * headers describe: the Python layer (pyguard.c) tells a frame its caller's bytecode called
 * from one that C code called (a slot, a property's getter, a partial). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_code.h"
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

/* What a super() without arguments takes from its caller's frame (CPython reads them borrowed):
 * the frame's first argument (a cell's contents when it is one) and the class of its __class__
 * cell, each a new reference, or NULL where the frame has none (CPython's own init then says
 * why). */
void pyframe_super_parts(PyObject **first, PyObject **cls)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL;
	PyCodeObject *co;
	PyObject **locals, *a;

	*first = *cls = NULL;
	if (!f)
		return;
	co = f->f_code;
	if (co->co_argcount == 0 || co->co_nlocalsplus == 0)
		return;
	locals = _PyFrame_GetLocalsArray(f);
	a = locals[0];
	if (a && (_PyLocals_GetKind(co->co_localspluskinds, 0) & CO_FAST_CELL) &&
	    _PyInterpreterFrame_LASTI(f) >= 0 && PyCell_Check(a))
		a = PyCell_GET(a);
	*first = Py_XNewRef(a);
	for (int i = co->co_nlocals + co->co_nplaincellvars; i < co->co_nlocalsplus; i++) {
		PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, i);
		if (PyUnicode_Check(name) &&
		    PyUnicode_CompareWithASCIIString(name, "__class__") == 0) {
			if (locals[i] && PyCell_Check(locals[i]))
				*cls = Py_XNewRef(PyCell_GET(locals[i]));
			break;
		}
	}
}

/* The running frame's variable i (a cell's contents when it is one), borrowed, or NULL. */
static PyObject *frame_local(_PyInterpreterFrame *f, int i)
{
	PyObject *v = _PyFrame_GetLocalsArray(f)[i];

	if (v && (_PyLocals_GetKind(f->f_code->co_localspluskinds, i) & CO_FAST_CELL) &&
	    PyCell_Check(v))
		v = PyCell_GET(v);
	return v;
}

/* How many of the running frame's own variables (a cell's contents included) are o. */
int pyframe_local_refs(PyObject *o)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL;
	int n = 0;

	if (!f || !f->f_code)
		return 0;
	for (int i = 0; i < f->f_code->co_nlocalsplus; i++)
		n += frame_local(f, i) == o;
	return n;
}

/* How many references to o the running frame can be seen to hold: its own variables, its
 * module's names, the items of the lists and tuples its variables are (numpy's meshgrid
 * reshapes `output[0]`), and the attributes of the objects its variables are (`self._mask`: an
 * object's dictionary of attributes), each list, tuple or dictionary counted once however
 * many variables name it (the module's dictionary among them). Each is a reference of its own, so a count of o's
 * references no greater than these and the statement's leaves none to anything else (C code in
 * the middle of its work holding o). */
int pyframe_held_refs(PyObject *o)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL;
	PyObject *seen[16], *seqs[16], *key, *value;
	int n = 0, nseen = 0, nseqs = 0;

	if (!f || !f->f_code)
		return 0;
	if (f->f_globals && PyDict_Check(f->f_globals))
		seen[nseen++] = f->f_globals;
	for (int i = 0; i < f->f_code->co_nlocalsplus; i++) {
		PyObject *v = frame_local(f, i), **dp, *d;
		int counted = 0;
		if (!v)
			continue;
		n += v == o;
		if (v != o && (PyList_CheckExact(v) || PyTuple_CheckExact(v))) {
			for (int k = 0; k < nseqs; k++)
				counted |= seqs[k] == v;
			if (!counted && nseqs < (int)(sizeof(seqs) / sizeof(seqs[0])))
				seqs[nseqs++] = v;
			continue;
		}
		if (v == o || !(dp = _PyObject_GetDictPtr(v)) || !(d = *dp) || !PyDict_Check(d))
			continue;
		for (int k = 0; k < nseen; k++)
			counted |= seen[k] == d;
		if (counted || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
			continue; /* (past the first few: not counted, never too many) */
		seen[nseen++] = d;
	}
	for (int k = 0; k < nseen; k++)
		for (Py_ssize_t pos = 0; PyDict_Next(seen[k], &pos, &key, &value);)
			n += value == o;
	for (int k = 0; k < nseqs; k++)
		for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seqs[k]); i++)
			n += PySequence_Fast_ITEMS(seqs[k])[i] == o;
	return n;
}
