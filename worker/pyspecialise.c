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
 * The zygote links CPython statically, with every entry point of the specialiser wrapped at
 * link time (-Wl,--wrap: the interpreter's calls come here, __real_ names CPython's). With the
 * layer on, an attribute instruction that would be specialised becomes its generic form for
 * good (as CPython itself does for operators it has no form for), a subscript is specialised
 * only for an exact list, tuple or dict, a call site keeps its generic form where the form
 * written would read past its arguments, and whatever else a specialiser writes is kept only
 * if it is one of the forms listed in form_runs (a form this file does not know, as a later
 * release might add, becomes generic). This holds from before the interpreter starts, for
 * every thread the process ever has, in the zygote as in each worker: no other form is ever
 * written, so none can run. Kernel-only mode (no Python layer) keeps every form. A build with
 * CPython as a shared library cannot wrap the entry points: it runs no specialised form
 * at all (interp.c). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <opcode.h>
#include <sys/mman.h>
#include "internal/pycore_code.h"

#include "interp_internal.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pyspecialise.c wraps CPython 3.11's specialiser"
#endif

/* Every form, with the Python layer off: set once, before the interpreter starts, on a page of
 * its own made read-only then (the zygote is not position-independent: one write at a fixed
 * address would otherwise turn the attribute forms back on). */
static union {
	volatile int on;
	char page[4096];
} every_form_page __attribute__((aligned(4096)));
#define every_form (every_form_page.on)

int pyspecialise_every_form(int every)
{
	every_form = every;
	return mprotect(&every_form_page, sizeof(every_form_page), PROT_READ);
}

/* The specialised forms that run with the layer on, each checked form by form against 3.11's
 * evaluation loop: what it reads, it checks at each run. Anything else a specialiser writes
 * (a form of a later release included) becomes the generic form. */
static const unsigned char form_runs[256] = {
    [LOAD_GLOBAL_MODULE] = 1,
    [LOAD_GLOBAL_BUILTIN] = 1,
    [BINARY_OP_ADD_INT] = 1,
    [BINARY_OP_ADD_FLOAT] = 1,
    [BINARY_OP_ADD_UNICODE] = 1,
    [BINARY_OP_INPLACE_ADD_UNICODE] = 1,
    [BINARY_OP_MULTIPLY_INT] = 1,
    [BINARY_OP_MULTIPLY_FLOAT] = 1,
    [BINARY_OP_SUBTRACT_INT] = 1,
    [BINARY_OP_SUBTRACT_FLOAT] = 1,
    [COMPARE_OP_FLOAT_JUMP] = 1,
    [COMPARE_OP_INT_JUMP] = 1,
    [COMPARE_OP_STR_JUMP] = 1,
    [UNPACK_SEQUENCE_TWO_TUPLE] = 1,
    [UNPACK_SEQUENCE_TUPLE] = 1,
    [UNPACK_SEQUENCE_LIST] = 1,
    [BINARY_SUBSCR_LIST_INT] = 1,
    [BINARY_SUBSCR_TUPLE_INT] = 1,
    [BINARY_SUBSCR_DICT] = 1,
    [STORE_SUBSCR_LIST_INT] = 1,
    [STORE_SUBSCR_DICT] = 1,
    [PRECALL_BUILTIN_CLASS] = 1,
    [PRECALL_BUILTIN_FAST_WITH_KEYWORDS] = 1,
    [PRECALL_METHOD_DESCRIPTOR_FAST_WITH_KEYWORDS] = 1, /* not for a call without arguments */
    [PRECALL_NO_KW_BUILTIN_FAST] = 1,
    [PRECALL_NO_KW_BUILTIN_O] = 1,
    [PRECALL_NO_KW_ISINSTANCE] = 1,
    [PRECALL_NO_KW_LEN] = 1,
    [PRECALL_NO_KW_LIST_APPEND] = 1,
    [PRECALL_NO_KW_METHOD_DESCRIPTOR_FAST] = 1, /* not for a call without arguments */
    [PRECALL_NO_KW_METHOD_DESCRIPTOR_NOARGS] = 1,
    [PRECALL_NO_KW_METHOD_DESCRIPTOR_O] = 1,
    [PRECALL_NO_KW_STR_1] = 1,
    [PRECALL_NO_KW_TUPLE_1] = 1,
    [PRECALL_NO_KW_TYPE_1] = 1,
    [PRECALL_BOUND_METHOD] = 1,
    [PRECALL_PYFUNC] = 1,
    [CALL_PY_EXACT_ARGS] = 1,
    [CALL_PY_WITH_DEFAULTS] = 1,
};

/* Each entry point of the specialiser as CPython has it (__real_) and as the interpreter reaches
 * it through the linker (__wrap_, below). */
#define ENTRY(ret, name, params)                                                                   \
	ret __real_##name params;                                                                  \
	ret __wrap_##name params;
ENTRY(int, _Py_Specialize_LoadAttr, (PyObject * owner, _Py_CODEUNIT *instr, PyObject *name))
ENTRY(int, _Py_Specialize_StoreAttr, (PyObject * owner, _Py_CODEUNIT *instr, PyObject *name))
ENTRY(int, _Py_Specialize_LoadMethod, (PyObject * owner, _Py_CODEUNIT *instr, PyObject *name))
ENTRY(int, _Py_Specialize_LoadGlobal,
      (PyObject * globals, PyObject *builtins, _Py_CODEUNIT *instr, PyObject *name))
ENTRY(int, _Py_Specialize_BinarySubscr, (PyObject * container, PyObject *sub, _Py_CODEUNIT *instr))
ENTRY(int, _Py_Specialize_StoreSubscr, (PyObject * container, PyObject *sub, _Py_CODEUNIT *instr))
ENTRY(int, _Py_Specialize_Call,
      (PyObject * callable, _Py_CODEUNIT *instr, int nargs, PyObject *kwnames))
ENTRY(int, _Py_Specialize_Precall,
      (PyObject * callable, _Py_CODEUNIT *instr, int nargs, PyObject *kwnames, int oparg))
ENTRY(void, _Py_Specialize_BinaryOp,
      (PyObject * lhs, PyObject *rhs, _Py_CODEUNIT *instr, int oparg, PyObject **locals))
ENTRY(void, _Py_Specialize_CompareOp,
      (PyObject * lhs, PyObject *rhs, _Py_CODEUNIT *instr, int oparg))
ENTRY(void, _Py_Specialize_UnpackSequence, (PyObject * seq, _Py_CODEUNIT *instr, int oparg))
#undef ENTRY

/* What a specialiser wrote at instr, kept if it may run (the adaptive form, which asks again
 * later, and the generic one included); otherwise the generic form base, for good. */
static void keep_known(_Py_CODEUNIT *instr, int adaptive, int base)
{
	int op = _Py_OPCODE(*instr);

	if (!every_form && op != adaptive && op != base && !form_runs[op])
		_Py_SET_OPCODE(*instr, base);
}

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

int __wrap__Py_Specialize_LoadGlobal(PyObject *globals, PyObject *builtins, _Py_CODEUNIT *instr,
                                     PyObject *name)
{
	int rc = __real__Py_Specialize_LoadGlobal(globals, builtins, instr, name);

	keep_known(instr, LOAD_GLOBAL_ADAPTIVE, LOAD_GLOBAL);
	return rc;
}

/* An exact list, tuple or dict gets its form (checked at each run); anything else would get
 * its class's __getitem__ by the class's version, or no form: none. */
int __wrap__Py_Specialize_BinarySubscr(PyObject *container, PyObject *sub, _Py_CODEUNIT *instr)
{
	int rc;

	if (!every_form && !PyList_CheckExact(container) && !PyTuple_CheckExact(container) &&
	    !PyDict_CheckExact(container))
		return not_now(instr);
	rc = __real__Py_Specialize_BinarySubscr(container, sub, instr);
	keep_known(instr, BINARY_SUBSCR_ADAPTIVE, BINARY_SUBSCR);
	return rc;
}

int __wrap__Py_Specialize_StoreSubscr(PyObject *container, PyObject *sub, _Py_CODEUNIT *instr)
{
	int rc = __real__Py_Specialize_StoreSubscr(container, sub, instr);

	keep_known(instr, STORE_SUBSCR_ADAPTIVE, STORE_SUBSCR);
	return rc;
}

/* A function with more defaults than parameters (its __defaults__ set so by a library: the
 * user's code may not) gets no form: 3.11's specialiser computes a negative count of required
 * arguments for it. */
int __wrap__Py_Specialize_Call(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                               PyObject *kwnames)
{
	int rc;

	if (!every_form && PyFunction_Check(callable)) {
		PyFunctionObject *f = (PyFunctionObject *)callable;
		PyObject *defaults = f->func_defaults;

		if (!PyCode_Check(f->func_code) ||
		    (defaults &&
		     (!PyTuple_Check(defaults) ||
		      PyTuple_GET_SIZE(defaults) > ((PyCodeObject *)f->func_code)->co_argcount)))
			return not_now(instr);
	}
	rc = __real__Py_Specialize_Call(callable, instr, nargs, kwnames);
	keep_known(instr, CALL_ADAPTIVE, CALL);
	return rc;
}

/* The two forms for a method of the fast calling convention read the method's self as the
 * first of the call's arguments, bound or not, and check only its class: with no argument in
 * the call and none bound (a site specialised for x.pop() then reached with the method found
 * as a plain attribute, or p() for p = list.pop), the slot they read lies past the stack's
 * top. A leftover object of the method's class there was taken as self, called with -1
 * arguments and released once more than it was held: a freed object still in use, and
 * through it all memory (the sandbox escaped). A call site without arguments (oparg, with its
 * extended bytes, is 0) keeps the generic form for such a method; every other form counts the
 * arguments it reads at each run. */
int __wrap__Py_Specialize_Precall(PyObject *callable, _Py_CODEUNIT *instr, int nargs,
                                  PyObject *kwnames, int oparg)
{
	int rc = __real__Py_Specialize_Precall(callable, instr, nargs, kwnames, oparg);

	if (!every_form && oparg == 0 &&
	    (_Py_OPCODE(*instr) == PRECALL_NO_KW_METHOD_DESCRIPTOR_FAST ||
	     _Py_OPCODE(*instr) == PRECALL_METHOD_DESCRIPTOR_FAST_WITH_KEYWORDS))
		_Py_SET_OPCODE(*instr, PRECALL);
	keep_known(instr, PRECALL_ADAPTIVE, PRECALL);
	return rc;
}

void __wrap__Py_Specialize_BinaryOp(PyObject *lhs, PyObject *rhs, _Py_CODEUNIT *instr, int oparg,
                                    PyObject **locals)
{
	__real__Py_Specialize_BinaryOp(lhs, rhs, instr, oparg, locals);
	keep_known(instr, BINARY_OP_ADAPTIVE, BINARY_OP);
}

void __wrap__Py_Specialize_CompareOp(PyObject *lhs, PyObject *rhs, _Py_CODEUNIT *instr, int oparg)
{
	__real__Py_Specialize_CompareOp(lhs, rhs, instr, oparg);
	keep_known(instr, COMPARE_OP_ADAPTIVE, COMPARE_OP);
}

void __wrap__Py_Specialize_UnpackSequence(PyObject *seq, _Py_CODEUNIT *instr, int oparg)
{
	__real__Py_Specialize_UnpackSequence(seq, instr, oparg);
	keep_known(instr, UNPACK_SEQUENCE_ADAPTIVE, UNPACK_SEQUENCE);
}
