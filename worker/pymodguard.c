/* pymodguard.c - a real module, read by the user's code, reads as its proxy.
 *
 * The user's code gets proxies of the allowed modules; the real modules stay with the
 * libraries. A library that hands one out (an attribute of an object, a forwarder, a function
 * that returns the module it imported) gave the user's code everything that module holds:
 * sys, os, importlib, the real builtins, and from them any module by name. So every real
 * module in sys.modules takes a type of its own, a subclass of the module type that differs
 * in two things:
 *   - its attribute slots ask who reads: a read made while the innermost frame is the user's
 *     code (its bytecode, or a C callable it called: getattr, an attrgetter, format, a class
 *     pattern) is answered by the module's proxy, as `import` would give it, or refused for a
 *     module the user may not import; a change is refused. Library code reads and changes as
 *     before.
 *   - it has no instance dict offset: object.__getattribute__ and ModuleType.__getattribute__,
 *     which read a module's namespace through the offset (past the slots above), find nothing.
 *     The slots read the namespace itself.
 * CPython specialises attribute reads of an exact module (LOAD_ATTR_MODULE, LOAD_METHOD_MODULE)
 * past every slot; the subclass's are never specialised, so every read reaches them.
 *
 * The worker's own C code that reads real modules for the user (the proxies' lookups, the
 * checked importer) runs under the user's frame: it marks that frame trusted while it works
 * (pymodguard_trust), and only reads made in that very frame are the library's. Code the user
 * planted that runs meanwhile has a frame of its own. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_frame.h"
#include "internal/pycore_pystate.h"

#include "interp_internal.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pymodguard.c reads the frames of CPython 3.11"
#endif

static PyTypeObject *guarded_type;                  /* the real modules' type */
static PyObject *str_name, *str_spec, *str_getattr; /* interned */
/* Per thread: the frame the worker's own C code reads for the user in, and the frame a reader
 * by name (getattr) was called in. */
static _Thread_local _PyInterpreterFrame *trusted, *directed;
static Py_ssize_t sealed_size = -1; /* sys.modules' size when last sealed (pymodguard_seal_all) */

static _PyInterpreterFrame *current(void)
{
	return _PyThreadState_GET()->cframe->current_frame;
}

/* While armed, the frame the read is made in, unless it is one the worker's own C code reads
 * for the user in. */
static _PyInterpreterFrame *reading_frame(void)
{
	_PyInterpreterFrame *f = pylayer_armed() ? current() : NULL;

	return f != trusted ? f : NULL;
}

/* Is this read (store: change) of name the user's? Made in the user's frame by its own
 * bytecode (an attribute read, store or deletion of that name, a class pattern), or by a
 * reader by name it asked for, in the frame that called the reader (getattr, an attrgetter it
 * made or called, str.format, string.Formatter, functools.update_wrapper). C code the
 * interpreter runs under the user's frame for other reasons (a warning's filters, a repr, an
 * import) reads as a library's. */
static int by_user(PyObject *name, int store)
{
	_PyInterpreterFrame *f = reading_frame();
	PyFrameObject *fo;

	if (!f)
		return 0;
	/* A reader by name the user's code asked for, whose caller may be a library's frame (a
	 * getter the user's code made, called by singledispatch; a Formatter's vformat). */
	if (f == directed)
		return 1;
	if (!pyguard_globals_are_user(f->f_globals, f->f_builtins))
		return 0;
	fo = PyEval_GetFrame();
	return fo && pylayer_frame_attr(fo, name, store);
}

/* Mark the current frame in *slot; the mark before is returned, to be put back. */
static void *mark(_PyInterpreterFrame **slot)
{
	void *before = *slot;

	*slot = current();
	return before;
}

void *pymodguard_trust(void)
{
	return mark(&trusted);
}

void pymodguard_untrust(void *before)
{
	trusted = before;
}

void *pymodguard_direct(void)
{
	return mark(&directed);
}

void pymodguard_undirect(void *before)
{
	directed = before;
}

int pymodguard_directed(void)
{
	return directed && pylayer_armed() && current() == directed;
}

/* module.attr as the module type answers it, from the namespace itself. New reference. */
static PyObject *library_read(PyObject *m, PyObject *name)
{
	PyObject *d = PyModule_GetDict(m), *v, *ga, *mname, *spec;
	int initializing;

	v = _PyObject_GenericGetAttrWithDict(m, name, d, 1);
	if (v || PyErr_Occurred())
		return v;
	ga = PyDict_GetItemWithError(d, str_getattr);
	if (ga)
		return PyObject_CallOneArg(ga, name);
	if (PyErr_Occurred())
		return NULL;
	mname = PyDict_GetItemWithError(d, str_name);
	if (!mname || !PyUnicode_Check(mname))
		return PyErr_Occurred() ? NULL
		                        : PyErr_Format(PyExc_AttributeError,
		                                       "module has no attribute '%U'", name);
	spec = PyDict_GetItemWithError(d, str_spec);
	if (!spec && PyErr_Occurred())
		return NULL;
	Py_INCREF(mname);
	Py_XINCREF(spec);
	initializing = _PyModuleSpec_IsInitializing(spec);
	Py_XDECREF(spec);
	if (initializing > 0)
		PyErr_Format(PyExc_AttributeError,
		             "partially initialized module '%U' has no attribute '%U' (most likely "
		             "due to a circular import)",
		             mname, name);
	else if (initializing == 0)
		PyErr_Format(PyExc_AttributeError, "module '%U' has no attribute '%U'", mname,
		             name);
	Py_DECREF(mname);
	return NULL;
}

/* The proxy of real module m (borrowed), NULL without an exception when the user's code may
 * not import it: its name must give m in sys.modules. */
static PyObject *proxy_of(PyObject *m)
{
	PyObject *d = PyModule_GetDict(m), *mname, *real, *proxy = NULL;
	void *t;

	mname = PyDict_GetItemWithError(d, str_name);
	if (!mname || !PyUnicode_CheckExact(mname))
		return NULL;
	real = PyDict_GetItemWithError(PyImport_GetModuleDict(), mname);
	if (real != m)
		return NULL;
	t = pymodguard_trust();
	proxy = pyproxy_get(mname, 0);
	pymodguard_untrust(t);
	return proxy;
}

static PyObject *refused(PyObject *m)
{
	PyObject *mname = PyModule_GetNameObject(m);

	if (!mname) {
		PyErr_Clear();
		mname = PyUnicode_FromString("?");
		if (!mname)
			return NULL;
	}
	PyErr_Format(PyExc_AttributeError,
	             "module '%U' is a library's own: its attributes are not available to this "
	             "code (it may not be imported here)",
	             mname);
	Py_DECREF(mname);
	return NULL;
}

/* m.name read for the user's code: as its proxy answers (an import would give the proxy). */
static PyObject *user_read(PyObject *m, PyObject *name)
{
	PyObject *proxy = proxy_of(m);

	if (!proxy)
		return PyErr_Occurred() ? NULL : refused(m);
	return PyObject_GetAttr(proxy, name);
}

/* The code never holds the interpreter's import machinery (importlib._bootstrap): a read of
 * it is the interpreter's own, made for the code in C even while a reader by name runs (a
 * module's repr inside "{0}".format(module) read its _module_repr as the user's and was
 * refused: V61c L2). */
static int interpreters_own(PyObject *m)
{
	return m == _PyInterpreterState_GET()->importlib;
}

static PyObject *guarded_getattro(PyObject *m, PyObject *name)
{
	return !interpreters_own(m) && by_user(name, 0) ? user_read(m, name)
	                                                : library_read(m, name);
}

static int refuse_change(PyObject *m)
{
	PyObject *mname = PyModule_GetNameObject(m);

	if (mname)
		PyErr_Format(PyExc_AttributeError,
		             "module '%U' is a library's own: this code cannot change it", mname);
	Py_XDECREF(mname);
	return -1;
}

static int guarded_setattro(PyObject *m, PyObject *name, PyObject *value)
{
	if (by_user(name, 1))
		return refuse_change(m);
	return _PyObject_GenericSetAttrWithDict(m, name, value, PyModule_GetDict(m));
}

/* The type's __getattribute__, __setattr__ and __delattr__ called by name (held through an
 * attrgetter of the type, then called by any frame: a library's singledispatch called the
 * user's). Library code reads a module by its attributes, never through these: every call
 * while armed is the user's. */
static PyObject *method_getattribute(PyObject *m, PyObject *name)
{
	if (!PyUnicode_Check(name))
		return PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%.200s'",
		                    Py_TYPE(name)->tp_name);
	return reading_frame() ? user_read(m, name) : library_read(m, name);
}

static PyObject *method_setattr(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
	if (n != 2 || !PyUnicode_Check(args[0]))
		return PyErr_Format(PyExc_TypeError, "__setattr__ takes a name and a value");
	if ((reading_frame()
	         ? refuse_change(m)
	         : _PyObject_GenericSetAttrWithDict(m, args[0], args[1], PyModule_GetDict(m))) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *method_delattr(PyObject *m, PyObject *name)
{
	if (!PyUnicode_Check(name))
		return PyErr_Format(PyExc_TypeError, "attribute name must be string");
	if ((reading_frame()
	         ? refuse_change(m)
	         : _PyObject_GenericSetAttrWithDict(m, name, NULL, PyModule_GetDict(m))) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyMethodDef guarded_methods[] = {
    {"__getattribute__", method_getattribute, METH_O | METH_COEXIST, NULL},
    {"__setattr__", (PyCFunction)(void (*)(void))method_setattr, METH_FASTCALL | METH_COEXIST,
     NULL},
    {"__delattr__", method_delattr, METH_O | METH_COEXIST, NULL},
    {NULL, NULL, 0, NULL},
};

/* type(sys)(name) is how importlib makes a module: an ordinary one, as before the seal. */
static PyObject *guarded_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	(void)type;
	return PyObject_Call((PyObject *)&PyModule_Type, args, kw);
}

static PyType_Slot guarded_slots[] = {
    {Py_tp_new, guarded_new},
    {Py_tp_getattro, guarded_getattro},
    {Py_tp_setattro, guarded_setattro},
    {Py_tp_methods, guarded_methods},
    {0, NULL},
};

static PyType_Spec guarded_spec = {
    .name = "module",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = guarded_slots,
};

/* A bound method hands an attribute it does not have to its function (self.set.__kwdefaults__
 * in a library reads the function's, with the method on the stack): the method whose read is
 * being handed on, while it is. */
static getattrofunc method_getattro_real;
static PyObject *method_reading;

static PyObject *method_getattro(PyObject *m, PyObject *name)
{
	PyObject *outer = method_reading, *r;

	method_reading = m;
	r = method_getattro_real(m, name);
	method_reading = outer;
	return r;
}

int pymodguard_init(void)
{
	PyObject *t;

	str_name = PyUnicode_InternFromString("__name__");
	str_spec = PyUnicode_InternFromString("__spec__");
	str_getattr = PyUnicode_InternFromString("__getattr__");
	if (!str_name || !str_spec || !str_getattr)
		return -1;
	method_getattro_real = PyMethod_Type.tp_getattro;
	PyMethod_Type.tp_getattro = method_getattro;
	t = PyType_FromSpecWithBases(&guarded_spec, (PyObject *)&PyModule_Type);
	if (!t)
		return -1;
	guarded_type = (PyTypeObject *)t;
	/* No dict offset: the generic lookups find no namespace (the slots read md_dict). The
	 * layout is the module type's, so the objects can take this type. */
	guarded_type->tp_dictoffset = 0;
	PyType_Modified(guarded_type);
	return 0;
}

int pymodguard_frame_holds(PyObject *o)
{
	_PyInterpreterFrame *f = current();
	PyObject **stack;
	int n;

	if (!f || !f->f_code)
		return 0;
	/* The value stack's slots (those above its current depth may hold what was there before:
	 * only pointers are compared, none is read). */
	stack = f->localsplus + f->f_code->co_nlocalsplus;
	n = f->f_code->co_stacksize;
	for (int i = 0; i < n; i++)
		if (stack[i] == o || (method_reading && stack[i] == method_reading &&
		                      PyMethod_GET_FUNCTION(method_reading) == o))
			return 1;
	return 0;
}

void pymodguard_seal(PyObject *m)
{
	/* _ctypes, _struct, _csv and array, whenever they are loaded (the zygote's libraries, or late): their
	 * classes first. */
	if (PyModule_Check(m)) {
		const char *name = PyModule_GetName(m);
		if (!name)
			PyErr_Clear();
		else if (strcmp(name, "_ctypes") == 0 && pylayer_seal_ctypes(m) < 0)
			Py_FatalError("the ctypes classes could not be guarded");
		else if (strcmp(name, "_struct") == 0 && pylayer_seal_struct(m) < 0)
			Py_FatalError("the struct classes could not be guarded");
		else if (strcmp(name, "_csv") == 0 && pylayer_seal_csv(m) < 0)
			Py_FatalError("the csv classes could not be guarded");
		else if (strcmp(name, "array") == 0 && pyreentry_seal_array(m) < 0)
			Py_FatalError("the array class could not be guarded");
		else
			pylayer_reads_with_rules(m, name);
	}
	if (!guarded_type || !PyModule_CheckExact(m) || pyproxy_is(m) || m == pyguard_user_module())
		return;
	Py_INCREF(guarded_type); /* the instance's reference to its heap type */
	Py_SET_TYPE(m, guarded_type);
}

int pymodguard_sealed(PyObject *m)
{
	return guarded_type && Py_TYPE(m) == guarded_type;
}

void pymodguard_seal_all(void)
{
	PyObject *mods = PyImport_GetModuleDict(), *key, *m;
	Py_ssize_t pos = 0;

	if (!guarded_type || !PyDict_Check(mods) || PyDict_GET_SIZE(mods) == sealed_size)
		return;
	while (PyDict_Next(mods, &pos, &key, &m))
		if (!PyUnicode_Check(key) || PyUnicode_CompareWithASCIIString(key, "__main__") != 0)
			pymodguard_seal(m);
	sealed_size = PyDict_GET_SIZE(mods);
}
