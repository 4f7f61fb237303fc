/* pyframe.c - what a running frame says of how it was called, which only CPython's internal
 * headers describe: the Python layer (pyguard.c) tells a frame its caller's bytecode called
 * from one that C code called (a slot, a property's getter, a partial). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_code.h"
#include "internal/pycore_frame.h"
#include "opcode.h"

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

/* The running frame's variable i (a cell's contents when it is one: its own or its closure's,
 * each cell holding a reference of its own), borrowed, or NULL. */
static PyObject *frame_local(_PyInterpreterFrame *f, int i)
{
	PyObject *v = _PyFrame_GetLocalsArray(f)[i];

	if (v &&
	    (_PyLocals_GetKind(f->f_code->co_localspluskinds, i) & (CO_FAST_CELL | CO_FAST_FREE)) &&
	    PyCell_Check(v))
		v = PyCell_GET(v);
	return v;
}

/* Is the running frame one of code's (a code object)? */
int pyframe_runs(PyObject *code)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL;

	return f && (PyObject *)f->f_code == code;
}

struct holders {
	PyObject *dicts[32], *seqs[32]; /* each counted once */
	int ndicts, nseqs;
};

static int holders_has(PyObject *const *set, int n, PyObject *c)
{
	for (int k = 0; k < n; k++)
		if (set[k] == c)
			return 1;
	return 0;
}

/* v, a variable's or a name's value: the container of its that holds references of its own (a
 * list's items, a dict's values, an object's attributes) noted in h, unless `seen` (when not
 * NULL) has it already. */
static void holders_note(struct holders *h, const struct holders *seen, PyObject *v, PyObject *o)
{
	PyObject **dp, *c;
	int seq;

	if (v == o || PyModule_Check(v))
		return;
	/* (not a tuple's: a call given `*t` hands its items on without a reference of its own,
	 * and the statement's reference counted beside them was the tuple's) */
	if ((seq = PyList_CheckExact(v)) || PyDict_CheckExact(v))
		c = v;
	else if ((dp = _PyObject_GetDictPtr(v)) && *dp && PyDict_Check(*dp))
		c = *dp;
	else
		return;
	if (seen &&
	    holders_has(seq ? seen->seqs : seen->dicts, seq ? seen->nseqs : seen->ndicts, c))
		return;
	if (seq && !holders_has(h->seqs, h->nseqs, c) && h->nseqs < 32)
		h->seqs[h->nseqs++] = c; /* (past the first few: not counted, never too many) */
	if (!seq && !holders_has(h->dicts, h->ndicts, c) && h->ndicts < 32)
		h->dicts[h->ndicts++] = c;
}

static int holders_count(const struct holders *h, PyObject *o)
{
	PyObject *key, *value;
	int n = 0;

	for (int k = 0; k < h->ndicts; k++)
		for (Py_ssize_t pos = 0; PyDict_Next(h->dicts[k], &pos, &key, &value);)
			n += value == o;
	for (int k = 0; k < h->nseqs; k++)
		for (Py_ssize_t i = 0; i < PyList_GET_SIZE(h->seqs[k]); i++)
			n += PyList_GET_ITEM(h->seqs[k], i) == o;
	return n;
}

/* How many references to o the running frame can be seen to hold: its own variables (its
 * closure's cells among them), its module's names, the items of the lists and dicts its
 * variables and names are (numpy's meshgrid reshapes `output[0]`), and the attributes of the
 * objects they are (`self._mask`: an object's dictionary of attributes), each list or
 * dictionary counted once however many variables and names lead to it (the module's
 * dictionary among them). Each is a reference of its own, so a count of o's references no
 * greater than these and the statement's leaves none to anything else (C code in the middle
 * of its work holding o). */
int pyframe_held_refs(PyObject *o)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL;
	PyObject *g, *key, *value;
	struct holders h = {0}, more = {0};
	Py_ssize_t pos = 0;
	int n = 0;

	if (!f || !f->f_code)
		return 0;
	g = f->f_globals && PyDict_Check(f->f_globals) ? f->f_globals : NULL;
	for (int i = 0; i < f->f_code->co_nlocalsplus; i++) {
		PyObject *v = frame_local(f, i);
		if (!v)
			continue;
		n += v == o;
		holders_note(&h, NULL, v, o);
	}
	n += holders_count(&h, o);
	/* the module's names, then what they hold, looked at only when still needed (a library's
	 * module has hundreds of names; a list of a million items) */
	if (!g || Py_REFCNT(o) <= 1 + n || holders_has(h.dicts, h.ndicts, g))
		return n;
	more.dicts[more.ndicts++] = g;
	n += holders_count(&more, o);
	if (Py_REFCNT(o) <= 1 + n || h.ndicts == 32)
		return n; /* (32: not counted, never counted twice) */
	more.ndicts = 0;
	h.dicts[h.ndicts++] = g;
	while (PyDict_Next(g, &pos, &key, &value))
		holders_note(&more, &h, value, o);
	return n + holders_count(&more, o);
}

/* One number of an exception table (the interpreter's format: groups of 6 bits, the first
 * group's byte of an entry marked by bit 7, more groups to come marked by bit 6) at *p, which
 * goes past it; -1 at the table's end or past any offset a code object has. */
static long table_number(const unsigned char **p, const unsigned char *end)
{
	long v;

	if (*p >= end)
		return -1;
	v = **p & 63;
	while (**p & 64) {
		if (++*p >= end || v > (1L << 30))
			return -1;
		v = (v << 6) | (**p & 63);
	}
	++*p;
	return v;
}

/* Does an entry of code's exception table cover the instruction at index: would an exception
 * raised there run a handler (a try's except or finally, a with's exit)? Each entry is its
 * start and length in code units, then its handler and stack depth, skipped. */
static int handler_covers(PyCodeObject *code, long index)
{
	const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(code->co_exceptiontable);
	const unsigned char *end = p + PyBytes_GET_SIZE(code->co_exceptiontable);

	while (p < end) {
		long start = table_number(&p, end), size = table_number(&p, end);

		if (start < 0 || size < 0)
			return 1; /* not read as the interpreter reads it: as if it ran code */
		if (start <= index && index < start + size)
			return 1;
		while (p < end && !(*p & 128))
			p++;
	}
	return 0;
}

/* Does closing gen, a suspended generator or coroutine, run code: a handler of its own that
 * covers the yield it waits at (a try, a with: its code's exception table; close raises
 * GeneratorExit there) or an iterator it delegates to (yield from, await: the one CPython's
 * close closes first, found as CPython finds it)? A generator that never started, or anything
 * that has ended, runs nothing; nor one left at a yield no handler covers (a library's loop
 * that yields, whatever handlers it has elsewhere: its close was deferred, and every check of
 * the interpreter in the library asked again whether the user's frame was back, which made pure
 * Python libraries run at half speed). */
int pyframe_gen_close_runs_code(PyObject *gen)
{
	PyGenObject *g = (PyGenObject *)gen;
	_PyInterpreterFrame *f = (_PyInterpreterFrame *)g->gi_iframe;
	_Py_CODEUNIT next;
	int op;

	if (g->gi_frame_state >= FRAME_COMPLETED)
		return 0;
	/* (a coroutine never awaited warns; an asynchronous generator calls its event loop's hook) */
	if (!PyGen_CheckExact(gen))
		return 1;
	if (g->gi_frame_state != FRAME_SUSPENDED)
		return 0;
	next = f->prev_instr[1];
	op = _Py_OPCODE(next);
	if ((op == RESUME || op == RESUME_QUICK) && _Py_OPARG(next) >= 2)
		return 1;
	return handler_covers(g->gi_code, (long)(f->prev_instr - _PyCode_CODE(g->gi_code)));
}
