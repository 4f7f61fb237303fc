/* pysqlite.c - every SQLite database the worker opens, whoever opens it (sqlite3.connect, the
 * Connection class called directly, a subclass, a connection initialised again), is set up in C
 * when it opens: defensive (no writable schema, no shadow tables written by SQL), no extension
 * loading, schemas not trusted, and fts3_tokenizer() gone. That function hands out the address
 * of a tokenizer inside the library and, given one back, calls through it: native code chosen by
 * the SQL. The Python layer's authorizer (pylayer.c) keeps the databases in memory on top. */
#include <sqlite3.h>

#include "interp_internal.h"

static void fts3_tokenizer_refused(sqlite3_context *ctx, int n, sqlite3_value **v)
{
	(void)n;
	(void)v;
	sqlite3_result_error(ctx,
	                     "fts3_tokenizer() is not available in the sandbox (it hands out and "
	                     "takes native pointers)",
	                     -1);
}

static int on_open(sqlite3 *db, char **err, const struct sqlite3_api_routines *api)
{
	static const int off[] = {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
	                          SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER,
	                          SQLITE_DBCONFIG_TRUSTED_SCHEMA};
	int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);

	(void)api;
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(off) / sizeof(off[0]); i++)
		rc = sqlite3_db_config(db, off[i], 0, (int *)0);
	/* The function of every arity FTS3 gives it, replaced (same name, arity and encoding). */
	for (int n = -1; rc == SQLITE_OK && n <= 2; n++)
		if (n != 0)
			rc = sqlite3_create_function_v2(db, "fts3_tokenizer", n, SQLITE_UTF8, NULL,
			                                fts3_tokenizer_refused, NULL, NULL, NULL);
	if (rc != SQLITE_OK && err)
		*err = sqlite3_mprintf("the sandbox could not set up the database");
	return rc;
}

int pysqlite_init(void)
{
	/* Registered before any database opens; SQLite runs it at each open. */
	if (sqlite3_auto_extension((void (*)(void))(void *)on_open) == SQLITE_OK)
		return 0;
	PyErr_SetString(PyExc_RuntimeError,
	                "SQLite's set-up of each database cannot be registered");
	return -1;
}

/* CPython 3.11's sqlite3 module crashes when a connection is closed, initialised again or
 * given another callback from inside one of its own callbacks (a function, an aggregate, a
 * collation, the progress handler or the trace callback, running during a statement): the
 * statement that called it goes on with freed state. The callbacks a connection is given are
 * counted while they run, and those calls are refused meanwhile, as ProgrammingError. The
 * methods are the Connection and Cursor classes' own (their dicts: the classes are
 * immutable), so subclasses and calls through the class get them too. */
static const char guard_py[] =
    "import sqlite3, sys\n"
    "running = [0]\n"
    "def refuse(what):\n"
    "    if running[0]:\n"
    "        raise sqlite3.ProgrammingError(what + ' is not allowed from within one of the '\n"
    "                                       \"connection's callbacks\")\n"
    "class Counted:\n"
    "    __slots__ = ('_f',)\n"
    "    def __init__(self, f):\n"
    "        self._f = f\n"
    "    def __call__(self, *args):\n"
    "        running[0] += 1\n"
    "        try:\n"
    "            return self._f(*args)\n"
    "        finally:\n"
    "            running[0] -= 1\n"
    "class CountedAggregate:\n"
    "    __slots__ = ('_o',)\n"
    "    def __init__(self, o):\n"
    "        self._o = o\n"
    "    def step(self, *args):\n"
    "        return Counted(self._o.step)(*args)\n"
    "    def finalize(self):\n"
    "        return Counted(self._o.finalize)()\n"
    "    def value(self):\n"
    "        return Counted(self._o.value)()\n"
    "    def inverse(self, *args):\n"
    "        return Counted(self._o.inverse)(*args)\n"
    "def counted(f):\n"
    "    return None if f is None else Counted(f)\n"
    "def aggregate(cls):\n"
    "    return None if cls is None else Counted(lambda: CountedAggregate(cls()))\n"
    "C, K = sqlite3.Connection, sqlite3.Cursor\n"
    "installs = {}\n"
    "def install(cls, name):\n"
    "    def deco(f):\n"
    "        orig = getattr(cls, name)\n"
    "        def method(self, *args, **kwargs):\n"
    "            refuse(name + '()')\n"
    "            return f(orig, self, *args, **kwargs)\n"
    "        method.__name__ = method.__qualname__ = name\n"
    "        method.__doc__ = orig.__doc__\n"
    "        installs[(cls, name)] = method\n"
    "        return f\n"
    "    return deco\n"
    "@install(C, 'close')\n"
    "def _(orig, self):\n"
    "    return orig(self)\n"
    "@install(C, '__init__')\n"
    "def _(orig, self, *args, **kwargs):\n"
    "    return orig(self, *args, **kwargs)\n"
    "@install(K, 'close')\n"
    "def _(orig, self):\n"
    "    return orig(self)\n"
    "@install(C, 'create_function')\n"
    "def _(orig, self, name, narg, func, *, deterministic=False):\n"
    "    return orig(self, name, narg, counted(func), deterministic=deterministic)\n"
    "@install(C, 'create_aggregate')\n"
    "def _(orig, self, name, n_arg, aggregate_class):\n"
    "    return orig(self, name, n_arg, aggregate(aggregate_class))\n"
    "@install(C, 'create_window_function')\n"
    "def _(orig, self, name, num_params, aggregate_class, /):\n"
    "    return orig(self, name, num_params, aggregate(aggregate_class))\n"
    "@install(C, 'create_collation')\n"
    "def _(orig, self, name, callback, /):\n"
    "    return orig(self, name, counted(callback))\n"
    "@install(C, 'set_progress_handler')\n"
    "def _(orig, self, progress_handler, n):\n"
    "    return orig(self, counted(progress_handler), n)\n"
    "@install(C, 'set_trace_callback')\n"
    "def _(orig, self, trace_callback):\n"
    "    return orig(self, counted(trace_callback))\n"
    /* Statements run again from inside a callback: a cursor's own statement was freed while
     * it fetched (text_factory running execute again). */
    "for cls, name in ((C, 'execute'), (C, 'executemany'), (C, 'executescript'),\n"
    "                  (K, 'execute'), (K, 'executemany'), (K, 'executescript')):\n"
    "    install(cls, name)(lambda orig, self, *a, **k: orig(self, *a, **k))\n"
    /* Callables the module calls while a statement runs, set as attributes or registered. */
    "def factory(cls, name):\n"
    "    slot = cls.__dict__[name]\n"
    "    def get(self):\n"
    "        v = slot.__get__(self, cls)\n"
    "        return v._f if type(v) is Counted else v\n"
    "    def put(self, v):\n"
    "        refuse(name)\n"
    "        slot.__set__(self, Counted(v) if callable(v) and v not in (str, bytes, bytearray)\n"
    "                     else v)\n"
    "    installs[(cls, name)] = property(get, put, doc=slot.__doc__)\n"
    "for cls, name in ((C, 'text_factory'), (C, 'row_factory'), (K, 'row_factory')):\n"
    "    factory(cls, name)\n"
    "register_converter, register_adapter = sqlite3.register_converter, sqlite3.register_adapter\n"
    "def _converter(typename, converter):\n"
    "    return register_converter(typename, counted(converter))\n"
    "def _adapter(type, adapter):\n"
    "    return register_adapter(type, counted(adapter))\n"
    "_converter.__doc__, _adapter.__doc__ = register_converter.__doc__, register_adapter.__doc__\n"
    "_converter.__name__, _adapter.__name__ = 'register_converter', 'register_adapter'\n"
    "for m in (sqlite3, sys.modules.get('sqlite3.dbapi2')):\n"
    "    if m is not None:\n"
    "        m.register_converter, m.register_adapter = _converter, _adapter\n";

int pysqlite_guard(void)
{
	PyObject *g, *r = NULL, *installs, *key, *value;
	Py_ssize_t pos = 0;
	int rc = -1;

	if (!PyDict_GetItemString(PyImport_GetModuleDict(), "sqlite3"))
		return 0; /* not imported: nothing to guard */
	g = PyDict_New();
	if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto out;
	r = PyRun_String(guard_py, Py_file_input, g, g);
	installs = r ? PyDict_GetItemString(g, "installs") : NULL;
	if (!installs)
		goto out;
	while (PyDict_Next(installs, &pos, &key, &value)) {
		PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(key, 0);
		if (PyDict_SetItem(t->tp_dict, PyTuple_GET_ITEM(key, 1), value) < 0)
			goto out;
		PyType_Modified(t);
	}
	rc = 0;
out:
	Py_XDECREF(r);
	Py_XDECREF(g);
	return rc;
}
