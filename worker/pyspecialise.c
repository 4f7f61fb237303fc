/* pyspecialise.c - which of CPython 3.11's specialised instructions run with the Python layer on.
 *
 * After an instruction has run a few times, CPython 3.11 rewrites it into a form specialised
 * for what it met, with what it found cached in the instruction (PEP 659). Two kinds of form:
 *   - forms that check, at each run, what they read: an operand of exactly int, float or str
 *     (BINARY_OP_*, COMPARE_OP_*_JUMP), exactly a list, tuple or dict with the index in range
 *     (BINARY_SUBSCR_LIST_INT, _TUPLE_INT, _DICT, STORE_SUBSCR_*, UNPACK_SEQUENCE_*), a
 *     callable by its exact type, calling convention and count of arguments (PRECALL_*), a
 *     function by its version (CALL_PY_*), a globals or builtins dict by its keys' version
 *     (LOAD_GLOBAL_*). A function's and a dict's keys' versions come from counters that stop
 *     at their end rather than wrap, and any change to what the form relies on (a function's
 *     code or defaults, a dict's keys) takes the version away. These run as CPython runs them,
 *     but one case below.
 *   - forms guarded by a class's version tag alone, which read an object at an offset the
 *     specialiser found in its class: the attribute forms (LOAD_ATTR_*, STORE_ATTR_*,
 *     LOAD_METHOD_*) and the call of a class's own __getitem__ (BINARY_SUBSCR_GETITEM). Its
 *     specialiser cached versions it should not have (0, for a class changed by a dict key's
 *     __eq__ run inside it, for a class left unready by a failed creation, for one read only
 *     by names too long to give it a version), and the class-version counter wraps: an object
 *     of another class then passed the guard, and a slot read at its offset inside a bytes
 *     object gave a fake bytearray over all memory (the sandbox escaped). These never run.
 * The case: the two forms for a method of the fast calling convention do not count the
 * arguments they read (see __wrap__Py_Specialize_Precall).
 *
 * The zygote links CPython statically, with the specialiser's entry points for these wrapped at
 * link time (-Wl,--wrap: the interpreter's calls come here, __real_ names CPython's). With the
 * layer on, an attribute instruction that would be specialised becomes its generic form for
 * good (as CPython itself does for operators it has no form for), a subscript is specialised
 * only for an exact list, tuple or dict, and a call site keeps its generic form where the
 * form written would read past its arguments. This holds from before the interpreter starts,
 * for every thread the process ever has, in the zygote as in each worker: no such form is
 * ever written, so none can run. Kernel-only mode (no Python layer) keeps every form. A build
 * with CPython as a shared library cannot wrap the entry points: it runs no specialised form
 * at all (interp.c). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <opcode.h>
#include "internal/pycore_code.h"

#include "interp_internal.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyspecialise.c wraps CPython 3.11's specialiser"
#endif

/* Every form, with the Python layer off; set once, before the interpreter starts. */
static int every_form;

void pyspecialise_every_form(int every)
{
	every_form = every;
}

int __real__Py_Specialize_LoadAttr(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name);
int __real__Py_Specialize_StoreAttr(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name);
int __real__Py_Specialize_LoadMethod(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name);
int __real__Py_Specialize_BinarySubscr(PyObject *container, PyObject *sub, _Py_CODEUNIT *instr);
int __real__Py_Specialize_Call(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                               PyObject *kwnames);
int __real__Py_Specialize_Precall(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                                  PyObject *kwnames, int oparg);

int __wrap__Py_Specialize_LoadAttr(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name);
int __wrap__Py_Specialize_StoreAttr(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name);
int __wrap__Py_Specialize_LoadMethod(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name);
int __wrap__Py_Specialize_BinarySubscr(PyObject *container, PyObject *sub, _Py_CODEUNIT *instr);
int __wrap__Py_Specialize_Call(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                               PyObject *kwnames);
int __wrap__Py_Specialize_Precall(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                                  PyObject *kwnames, int oparg);

/* The instruction's adaptive counter (its first cache entry) backed off, as CPython does when
 * it found no form: it asks again after exponentially more runs. */
static int not_now(_Py_CODEUNIT *instr)
{
	instr[1] = adaptive_counter_backoff(instr[1]);
	return 0;
}

/* An attribute instruction: generic for good, but with every form allowed. */
static int generic_form(int (*real)(PyObject *, _Py_CODEUNIT *, PyObject *), int opcode,
                        PyObject *owner, _Py_CODEUNIT *instr, PyObject *name)
{
	if (every_form)
		return real(owner, instr, name);
	_Py_SET_OPCODE(*instr, opcode);
	return 0;
}

int __wrap__Py_Specialize_LoadAttr(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name)
{
	return generic_form(__real__Py_Specialize_LoadAttr, LOAD_ATTR, owner, instr, name);
}

int __wrap__Py_Specialize_StoreAttr(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name)
{
	return generic_form(__real__Py_Specialize_StoreAttr, STORE_ATTR, owner, instr, name);
}

int __wrap__Py_Specialize_LoadMethod(PyObject *owner, _Py_CODEUNIT *instr, PyObject *name)
{
	return generic_form(__real__Py_Specialize_LoadMethod, LOAD_METHOD, owner, instr, name);
}

/* An exact list, tuple or dict gets its form (checked at each run); anything else would get
 * its class's __getitem__ by the class's version, or no form: none. */
int __wrap__Py_Specialize_BinarySubscr(PyObject *container, PyObject *sub, _Py_CODEUNIT *instr)
{
	if (every_form || PyList_CheckExact(container) || PyTuple_CheckExact(container) ||
	    PyDict_CheckExact(container))
		return __real__Py_Specialize_BinarySubscr(container, sub, instr);
	return not_now(instr);
}

/* A function with more defaults than parameters (its __defaults__ set so) gets no form: 3.11's
 * specialiser computes a negative count of required arguments for it. */
int __wrap__Py_Specialize_Call(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                               PyObject *kwnames)
{
	if (!every_form && PyFunction_Check(callable)) {
		PyFunctionObject *f = (PyFunctionObject *)callable;
		PyObject *defaults = f->func_defaults;

		if (!PyCode_Check(f->func_code) ||
		    (defaults &&
		     (!PyTuple_Check(defaults) ||
		      PyTuple_GET_SIZE(defaults) > ((PyCodeObject *)f->func_code)->co_argcount)))
			return not_now(instr);
	}
	return __real__Py_Specialize_Call(callable, instr, nargs, kwnames);
}

/* The two forms for a method descriptor of the fast calling convention read the method's self
 * as the first of the call's arguments, bound or not, and check only its class: with no
 * argument in the call and none bound (a site specialised for x.pop() then reached with the
 * method found as a plain attribute, or p() for p = list.pop), the slot they read lies past
 * the stack's top. A leftover object of the method's class there was taken as self, called
 * with -1 arguments and released once more than it was held: a freed object still in use, and
 * through it all memory (the sandbox escaped). A call site without arguments keeps the generic
 * form for such a method; every other form counts the arguments it reads at each run. */
int __wrap__Py_Specialize_Precall(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                                  PyObject *kwnames, int oparg)
{
	int rc = __real__Py_Specialize_Precall(callable, instr, nargs, kwnames, oparg);

	if (!every_form && oparg == 0 &&
	    (_Py_OPCODE(*instr) == PRECALL_NO_KW_METHOD_DESCRIPTOR_FAST ||
	     _Py_OPCODE(*instr) == PRECALL_METHOD_DESCRIPTOR_FAST_WITH_KEYWORDS))
		_Py_SET_OPCODE(*instr, PRECALL);
	return rc;
}
