/* pysqlite.c - every SQLite database the worker opens, whoever opens it (sqlite3.connect, the
 * Connection class called directly, a subclass, a connection initialised again), is set up in C
 * when it opens: defensive (no writable schema, no shadow tables written by SQL), no extension
 * loading, schemas not trusted, and fts3_tokenizer() gone. That function hands out the address
 * of a tokenizer inside the library and, given one back, calls through it: native code chosen by
 * the SQL. The authorizer every connection gets (workspace_py below) keeps the databases in
 * memory on top; a workspace file is read into one and written back when it commits. */
#include <sqlite3.h>

#include "interp_internal.h"
#include <structmember.h>

/* Each database counts the transactions it commits, whatever commits them (commit(), COMMIT
 * or a statement committed on its own in SQL, executescript): a workspace connection has
 * changes to write back when its count moved (the Python below). The count belongs to the
 * database: the function safepy_commits() reads it and frees it with the database (and takes
 * the hook off first, if the function is replaced: the Python refuses that too). */
struct commits {
	sqlite3 *db;
	sqlite3_uint64 n;
};

static int on_commit(void *arg)
{
	((struct commits *)arg)->n++;
	return 0; /* the commit goes on */
}

static void commits_read(sqlite3_context *ctx, int n, sqlite3_value **v)
{
	(void)n;
	(void)v;
	sqlite3_result_int64(ctx, (sqlite3_int64)((struct commits *)sqlite3_user_data(ctx))->n);
}

static void commits_free(void *arg)
{
	struct commits *c = arg;
	void *hooked = sqlite3_commit_hook(c->db, NULL, NULL);

	if (hooked && hooked != arg) /* another count's hook: put back */
		sqlite3_commit_hook(c->db, on_commit, hooked);
	sqlite3_free(c);
}

static sqlite3 *last_opened; /* checks the layout of the sqlite3 module's connections */

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
	if (rc == SQLITE_OK) {
		struct commits *c = sqlite3_malloc64(sizeof(*c));
		if (!c)
			rc = SQLITE_NOMEM;
		else {
			c->db = db;
			c->n = 0;
			sqlite3_commit_hook(db, on_commit, c);
			/* On failure SQLite has called commits_free already. */
			rc = sqlite3_create_function_v2(db, "safepy_commits", 0, SQLITE_UTF8, c,
			                                commits_read, NULL, NULL, commits_free);
		}
	}
	if (rc != SQLITE_OK && err)
		*err = sqlite3_mprintf("the sandbox could not set up the database");
	last_opened = db;
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
    "        if ending():\n"
    "            return None\n"
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
    /* User code also runs during a statement by other routes than the callbacks (a __del__
     * of a callback's result, an adapter's __conform__, a parameter sequence's __getitem__,
     * executemany's iterator): closing the connection, initialising it again or replacing
     * what a statement uses then left the statement with a closed database and freed
     * callbacks. The methods that run statements mark their connection while they run (enter,
     * leave; iterating a cursor too), and those calls are refused on a marked connection. */
    "frees = {'close', '__init__', 'set_progress_handler', 'set_trace_callback',\n"
    "         'create_function', 'create_aggregate', 'create_window_function',\n"
    "         'create_collation', 'backup', 'deserialize'}\n"
    "steps = {'execute', 'executemany', 'executescript', 'commit', 'rollback', '__exit__',\n"
    "         'backup', 'fetchone', 'fetchmany', 'fetchall', '__next__'}\n"
    "def install(cls, name):\n"
    "    def deco(f):\n"
    "        orig = getattr(cls, name)\n"
    "        def method(self, *args, **kwargs):\n"
    "            refuse(name + '()')\n"
    /* (names by their characters: a str subclass's could hide target from the lookup) */
    "            kwargs = {str.__str__(k) if isinstance(k, str) else k: v\n"
    "                      for k, v in kwargs.items()}\n"
    "            held = (self,)\n"
    "            if name == 'backup':\n"
    "                held = (self, args[0] if args else kwargs.get('target'))\n"
    "            if cls is C and name in frees and any(in_call(o) for o in held):\n"
    "                raise sqlite3.ProgrammingError(name + '() is not allowed while a statement '\n"
    "                                               'of the connection runs')\n"
    "            if name not in steps:\n"
    "                return f(orig, self, *args, **kwargs)\n"
    "            for o in held:\n"
    "                enter(o)\n"
    "            try:\n"
    "                return f(orig, self, *args, **kwargs)\n"
    "            finally:\n"
    "                for o in held:\n"
    "                    leave()\n"
    "        method.__name__ = method.__qualname__ = name\n"
    "        method.__doc__ = orig.__doc__\n"
    "        installs[(cls, name)] = method\n"
    "        return f\n"
    "    return deco\n"
    /* A workspace connection writes what it committed when it closes (ws_close below); one
     * initialised again is not the file's any more. */
    "@install(C, 'close')\n"
    "def _(orig, self):\n"
    "    try:\n"
    "        ws_close(self)\n"
    "    finally:\n"
    "        orig(self)\n"
    "@install(C, '__init__')\n"
    "def _(orig, self, *args, **kwargs):\n"
    "    if workspace_of(self) is not None:\n"
    "        ws_close(self)\n"
    "        del self.__dict__['_workspace']\n"
    "    return orig(self, *args, **kwargs)\n"
    "@install(C, 'commit')\n"
    "def _(orig, self):\n"
    "    r = orig(self)\n"
    "    conn, w = ws_connection(self)\n"
    "    if w is not None:\n"
    "        write(conn, w)\n"
    "    return r\n"
    "@install(C, '__exit__')\n"
    "def _(orig, self, t, v, tb, /):\n"
    "    r = orig(self, t, v, tb)\n"
    "    conn, w = ws_connection(self)\n"
    "    if w is not None:\n"
    "        (write if t is None else after)(conn, w)\n"
    "    return r\n"
    /* A backup replaces the target's database: a workspace file's is written at once. The
     * progress callback is counted like the others. */
    "@install(C, 'backup')\n"
    "def _(orig, self, target, *, pages=-1, progress=None, name='main', sleep=0.250):\n"
    "    conn, w = ws_connection(self)\n"
    "    if w is not None:\n"
    "        before(conn, w)\n"
    "    r = orig(self, target, pages=pages, progress=counted(progress), name=name,\n"
    "             sleep=sleep)\n"
    "    wt = workspace_of(target)\n"
    "    if wt is not None:\n"
    "        write(target, wt, replace=True)\n"
    "    return r\n"
    "@install(K, 'close')\n"
    "def _(orig, self):\n"
    "    return orig(self)\n"
    "def passed(orig, self, *args, **kwargs):\n"
    "    return orig(self, *args, **kwargs)\n"
    "for cls, name in ((C, 'rollback'), (C, 'deserialize'), (K, 'fetchone'), (K, 'fetchmany'),\n"
    "                  (K, 'fetchall'), (K, '__next__')):\n"
    "    if name in cls.__dict__:\n"
    "        install(cls, name)(passed)\n"
    "@install(C, 'create_function')\n"
    "def _(orig, self, name, narg, func, *, deterministic=False):\n"
    "    name = reserved(name)\n"
    "    return orig(self, name, narg, counted(func), deterministic=deterministic)\n"
    "@install(C, 'create_aggregate')\n"
    "def _(orig, self, name, n_arg, aggregate_class):\n"
    "    name = reserved(name)\n"
    "    return orig(self, name, n_arg, aggregate(aggregate_class))\n"
    "@install(C, 'create_window_function')\n"
    "def _(orig, self, name, num_params, aggregate_class, /):\n"
    "    name = reserved(name)\n"
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
     * it fetched (text_factory running execute again). On a workspace connection a statement
     * first sees what other connections wrote to the file (before), and what it commits is
     * written back (after; VACUUM INTO a workspace file: vacuum_into). */
    "def ran(orig, self, *a, **k):\n"
    "    denied[0] = None\n"
    "    try:\n"
    "        return run_statement(orig, self, *a, **k)\n"
    "    except sqlite3.DatabaseError as e:\n"
    "        if denied[0] and e.args == ('not authorized',):\n"
    "            e.add_note(denied[0])\n"
    "        raise\n"
    "    finally:\n"
    "        denied[0] = None\n"
    "def run_statement(orig, self, *a, **k):\n"
    "    if a and type(a[0]) is str and vacuum_start(a[0]):\n"
    "        conn = self if isinstance(self, C) else cursor_connection(self)\n"
    "        if vacuum_into(conn, a):\n"
    "            return self if isinstance(self, K) else Connection_dict['cursor'](self)\n"
    "    conn = (self if type(self) in kind_types else\n"
    "            cursor_connection(self) if isinstance(self, K) else None)\n"
    "    w = None if conn is None else workspace_of(conn)\n"
    "    if w is None:\n"
    "        return orig(self, *a, **k)\n"
    "    before(conn, w)\n"
    "    try:\n"
    "        return orig(self, *a, **k)\n"
    "    finally:\n"
    "        after(conn, w)\n"
    "for cls, name in ((C, 'execute'), (C, 'executemany'), (C, 'executescript'),\n"
    "                  (K, 'execute'), (K, 'executemany'), (K, 'executescript')):\n"
    "    install(cls, name)(ran)\n"
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

/* A workspace's file is a database in memory: connect() reads the file into one, and what the
 * database commits is written back through the workspace (so the call's transaction takes it).
 * commit(), the end of a with block, a backup into it and close() write it at once; a commit
 * made in SQL (COMMIT, executescript, a statement committed on its own) is written when the
 * connection commits, closes, another connection of the call uses the file, or the call ends
 * (call_end: a loop of statements writes the file once). Connections to one file see each
 * other's commits: a statement of a connection with nothing left to write reads the file again
 * when another connection of the process wrote it, or when it changed since the last call. A
 * connection whose file another connection or call wrote since it read it does not overwrite
 * it: its write is refused (OperationalError). The file is written in place ('r+', or 'x' for
 * a new one), so a call that commits another change to it after this call wrote it and before
 * this call ends wins, as with any file changed in place: this call's files are not written,
 * and its stderr says so (a plain 'w' replaced the other's commit unseen). A backup into a
 * connection or VACUUM INTO replaces the file's content whatever it held. The authorizer
 * keeps every database in memory (no ATTACH of a file, no temporary files' directory); the
 * user's code cannot replace it (pyguard.c). mode=ro (a URI) makes a read-only connection;
 * VACUUM INTO a workspace file is made from a backup. */
static const char workspace_py[] =
    "import io, os, re\n"
    "Connection_dict, Cursor_dict = dict(C.__dict__), dict(K.__dict__)\n"
    "def original(name):\n"
    "    m = Connection_dict[name]\n"
    "    return lambda self, *a, **k: m(self, *a, **k)\n"
    "c_execute, c_serialize = original('execute'), original('serialize')\n"
    "c_deserialize = original('deserialize')\n"
    "c_rollback, c_close, c_backup = original('rollback'), original('close'), original('backup')\n"
    "set_authorizer = original('set_authorizer')\n"
    "cursor_connection = Cursor_dict['connection'].__get__\n"
    /* What a statement was refused for, said with sqlite's bare "not authorized" (ran). */
    "denied = [None]\n"
    "def deny(why):\n"
    "    denied[0] = why\n"
    "    return sqlite3.SQLITE_DENY\n"
    "def authorizer(action, arg1, arg2, db, source):\n"
    "    if action == sqlite3.SQLITE_ATTACH and arg1 not in ('', ':memory:'):\n"
    "        return deny('ATTACH of a database file is not available in the sandbox: connect '\n"
    "                    'to each file (sqlite3.connect(\\'other.db\\')) and move rows between '\n"
    "                    'them (pandas read_sql and to_sql), or copy one into the other with '\n"
    "                    'backup(); ATTACH \\':memory:\\' works')\n"
    "    if (action == sqlite3.SQLITE_PRAGMA and arg1 == 'temp_store' and\n"
    "            (arg2 is None or str(arg2).strip('\\'\" ').upper() in ('MEMORY', '2'))):\n"
    "        return sqlite3.SQLITE_OK  # what the sandbox sets: asked, or set again\n"
    "    if action == sqlite3.SQLITE_PRAGMA and arg1 in ('temp_store', 'temp_store_directory',\n"
    "                                                   'data_store_directory',\n"
    "                                                   'writable_schema'):\n"
    "        return deny(f'PRAGMA {arg1} is not available in the sandbox (sqlite keeps its '\n"
    "                    'temporary data in memory there)')\n"
    "    if action == sqlite3.SQLITE_FUNCTION and arg2 == 'fts3_tokenizer':\n"
    "        return deny('fts3_tokenizer() is not available in the sandbox')\n"
    "    return sqlite3.SQLITE_OK\n"
    "def read_only_authorizer(action, arg1, arg2, db, source):\n"
    "    if action == sqlite3.SQLITE_PRAGMA and arg1 == 'query_only':\n"
    "        return deny('this connection is read-only (mode=ro): PRAGMA query_only stays on')\n"
    "    return authorizer(action, arg1, arg2, db, source)\n"
    "class Workspace:\n"
    "    __slots__ = ('path', 'key', 'readonly', 'gen', 'stat', 'marker', 'epoch')\n"
    "written = {}\n"
    "pending = {}\n"
    "epoch = [0]\n"
    "kinds = {}\n"
    "kind_types = set()\n"
    "def kind(factory):\n"
    "    k = kinds.get(factory)\n"
    "    if k is None:\n"
    "        k = kinds[factory] = type(factory.__name__, (factory,),\n"
    "                                  {'__module__': factory.__module__})\n"
    "        kind_types.add(k)\n"
    "    return k\n"
    "def workspace_of(conn):\n"
    "    if type(conn) not in kind_types:\n"
    "        return None\n"
    "    w = conn.__dict__.get('_workspace')\n"
    "    return w if type(w) is Workspace else None\n"
    "def file_stat(path):\n"
    "    try:\n"
    "        s = os.stat(path)\n"
    "    except OSError:\n"
    "        return None\n"
    "    return (s.st_ino, s.st_size, s.st_mtime_ns)\n"
    "def file_data(path):\n"
    "    try:\n"
    "        with io.open(path, 'rb') as f:\n"
    "            return f.read()\n"
    "    except PermissionError as e:\n"
    "        raise PermissionError(f'{e} (sqlite3 databases are in memory in the sandbox: '\n"
    "                              \"connect(':memory:'), or a workspace file by its \"\n"
    "                              'name)') from None\n"
    "    except FileNotFoundError:\n"
    "        return None\n"
    "def load(conn, w, data):\n"
    "    if data:\n"
    "        set_authorizer(conn, None)\n"
    "        try:\n"
    "            c_deserialize(conn, data)\n"
    "        finally:\n"
    "            set_authorizer(conn, read_only_authorizer if w.readonly else authorizer)\n"
    "    w.gen = written.get(w.key, 0)\n"
    "    w.marker = track(conn)[0]\n"
    "    w.epoch = epoch[0]\n"
    "def changed_since_read(w):\n"
    "    return sqlite3.OperationalError(\n"
    "        f'{w.path!r} changed since this connection read it (another connection or call '\n"
    "        'wrote it): the changes committed on this connection are not written to it; '\n"
    "        'connect again and make them again')\n"
    "def write(conn, w, replace=False):\n"
    "    state = track(conn)\n"
    "    if state is None or state[2]:\n"
    "        return\n"
    "    pending.pop(id(conn), None)\n"
    "    if state[0] == w.marker and not replace:\n"
    "        return\n"
    "    if w.readonly:\n"
    "        w.marker = state[0]\n"
    "        return\n"
    "    if not replace and (written.get(w.key, 0) != w.gen or file_stat(w.path) != w.stat):\n"
    "        raise changed_since_read(w)\n"
    "    try:\n"
    "        data = c_serialize(conn)\n"
    "    except sqlite3.OperationalError:\n"
    "        data = b''\n"
    "    mode = 'wb' if replace else 'xb' if w.stat is None else 'r+b'\n"
    "    with io.open(w.path, mode) as f:\n"
    "        f.write(data)\n"
    "        f.truncate()\n"
    "    w.gen = written[w.key] = written.get(w.key, 0) + 1\n"
    "    w.stat = file_stat(w.path)\n"
    "    w.marker = state[0]\n"
    "def write_others(conn, key):\n"
    "    for other in list(pending.values()):\n"
    "        if other is not conn and workspace_of(other).key == key:\n"
    "            try:\n"
    "                write(other, workspace_of(other))\n"
    "            except sqlite3.Error:\n"
    "                pass\n"
    "def before(conn, w):\n"
    "    if pending:\n"
    "        write_others(conn, w.key)\n"
    "    if written.get(w.key, 0) == w.gen and w.epoch == epoch[0]:\n"
    "        return\n"
    "    state = track(conn)\n"
    "    if state is None:\n"
    "        return\n"
    "    stale = written.get(w.key, 0) != w.gen\n"
    "    if not stale and w.epoch != epoch[0]:\n"
    "        w.epoch = epoch[0]\n"
    "        stale = file_stat(w.path) != w.stat\n"
    "    if stale and state[0] == w.marker and not state[1] and not state[2]:\n"
    "        st = file_stat(w.path)\n"
    "        data = file_data(w.path)\n"
    "        if data:\n"
    "            load(conn, w, data)\n"
    "            w.stat = st\n"
    "def after(conn, w):\n"
    "    state = track(conn)\n"
    "    if state is not None and state[0] != w.marker:\n"
    "        pending[id(conn)] = conn\n"
    "def ws_connection(obj):\n"
    "    conn = (obj if isinstance(obj, C) else\n"
    "            cursor_connection(obj) if isinstance(obj, K) else None)\n"
    "    w = workspace_of(conn)\n"
    "    return (conn, w) if w is not None else (None, None)\n"
    "def ws_close(conn):\n"
    "    w = workspace_of(conn)\n"
    "    if w is None:\n"
    "        return\n"
    "    pending.pop(id(conn), None)\n"
    "    state = track(conn)\n"
    "    if state is not None and state[0] != w.marker:\n"
    "        if state[2]:\n"
    "            c_rollback(conn)\n"
    "        write(conn, w)\n"
    "def call_end():\n"
    "    for conn in list(pending.values()):\n"
    "        w = workspace_of(conn)\n"
    "        try:\n"
    "            write(conn, w)\n"
    "        except Exception as e:\n"
    "            pending.pop(id(conn), None)\n"
    "            print(f'safepy: sqlite3: the changes committed to {w.path!r} were not written: '\n"
    "                  f'{e}', file=sys.stderr)\n"
    "    epoch[0] += 1\n"
    "def uri_parts(name):\n"
    "    if not name.startswith('file:'):\n"
    "        return name, False\n"
    "    def unquote(s):\n"
    "        def text(m):\n"
    "            return bytes.fromhex(m.group().replace('%', '')).decode('utf-8', 'replace')\n"
    "        return re.sub(r'(%[0-9A-Fa-f]{2})+', text, s)\n"
    "    rest = name[5:].partition('#')[0]\n"
    "    path, _, query = rest.partition('?')\n"
    "    if path.startswith('//'):\n"
    "        authority, slash, tail = path[2:].partition('/')\n"
    "        if authority not in ('', 'localhost'):\n"
    "            raise sqlite3.OperationalError(f'invalid uri authority: {authority}')\n"
    "        path = slash + tail\n"
    "    path = unquote(path)\n"
    "    params = {}\n"
    "    for item in query.split('&') if query else ():\n"
    "        k, _, v = item.partition('=')\n"
    "        params[unquote(k)] = unquote(v)\n"
    "    mode = params.pop('mode', 'rwc')\n"
    "    immutable = params.pop('immutable', '0') not in ('0', 'false', 'off', 'no')\n"
    "    params.pop('nolock', None)\n"
    "    params.pop('psow', None)\n"
    "    if params.get('cache', 'private') == 'private':\n"
    "        params.pop('cache', None)\n"
    "    if mode == 'memory' or path == ':memory:':\n"
    "        raise refused(name)\n"
    "    if params or mode not in ('ro', 'rw', 'rwc'):\n"
    "        raise PermissionError(\n"
    "            f'sqlite3 URI parameters {sorted(params) or [\"mode=\" + mode]} are not '\n"
    "            'available'\n"
    "            ' in the sandbox: its databases are in memory, each connection its own '\n"
    "            \"(mode=ro, rw and rwc are; immutable=1 is read-only)\")\n"
    "    return path, 'ro' if immutable else mode\n"
    "def refused(database):\n"
    "    return PermissionError('sqlite3 databases are in memory in the sandbox: '\n"
    "                           \"connect(':memory:'), or a workspace file by its name\"\n"
    "                           f' (not {database!r})')\n"
    "def connect_with(real):\n"
    "    def connect(database, timeout=5.0, detect_types=0, isolation_level='DEFERRED',\n"
    "                check_same_thread=True, factory=sqlite3.Connection,\n"
    "                cached_statements=128, uri=False):\n"
    "        memory = isinstance(database, str) and database == ':memory:'\n"
    "        path = None if memory else os.fspath(database)\n"
    "        mode = 'rwc'\n"
    "        if path is not None and uri and isinstance(path, str):\n"
    "            path, mode = uri_parts(path)\n"
    "        if path is not None and (not isinstance(path, str) or path == ''):\n"
    "            raise refused(database)\n"
    "        w = data = None\n"
    "        if path is not None:\n"
    "            w = Workspace()\n"
    "            w.path, w.readonly = path, mode == 'ro'\n"
    "            try:\n"
    "                w.key = os.path.abspath(path)\n"
    "            except Exception:\n"
    "                w.key = os.path.normpath(path)\n"
    "            write_others(None, w.key)\n"
    "            w.stat = file_stat(path)\n"
    "            data = file_data(path)\n"
    "            if data is None and mode in ('ro', 'rw'):\n"
    "                raise sqlite3.OperationalError('unable to open database file')\n"
    "            factory = kind(factory)\n"
    "        conn = real(':memory:', timeout, detect_types, isolation_level, check_same_thread,\n"
    "                    factory, cached_statements)\n"
    "        if data:\n"
    "            c_deserialize(conn, data)\n"
    "        c_execute(conn, 'PRAGMA temp_store = MEMORY')\n"
    "        if w is not None:\n"
    "            if w.readonly:\n"
    "                c_execute(conn, 'PRAGMA query_only = ON')\n"
    "            conn.__dict__['_workspace'] = w\n"
    "            load(conn, w, None)\n"
    "        set_authorizer(conn, read_only_authorizer if w is not None and w.readonly\n"
    "                       else authorizer)\n"
    "        return conn\n"
    "    connect.__doc__ = real.__doc__\n"
    "    connect.__module__ = 'sqlite3'\n"
    "    return connect\n"
    "vacuum_into_sql = "
    "re.compile(r'\\s*vacuum(?:\\s+(\\w+|\"[^\"]*\"))?\\s+into\\s+(.*?)[\\s;]*',\n"
    "                             re.I | re.S)\n"
    "vacuum_start = re.compile(r'\\s*vacuum\\b', re.I).match\n"
    "def vacuum_into(conn, args):\n"
    "    m = vacuum_into_sql.fullmatch(args[0]) if args and isinstance(args[0], str) else None\n"
    "    if m is None:\n"
    "        return None\n"
    "    schema, target = m.group(1) or 'main', m.group(2)\n"
    "    params = args[1] if len(args) > 1 else ()\n"
    "    if schema.startswith('\"'):\n"
    "        schema = schema[1:-1]\n"
    "    if re.fullmatch(r\"'([^']|'')*'\", target):\n"
    "        target = target[1:-1].replace(\"''\", \"'\")\n"
    "    elif target == '?' and isinstance(params, (list, tuple)) and len(params) == 1:\n"
    "        target = params[0]\n"
    "    elif target[:1] in ':@$' and isinstance(params, dict) and target[1:] in params:\n"
    "        target = params[target[1:]]\n"
    "    else:\n"
    "        raise sqlite3.OperationalError(\n"
    "            'VACUUM INTO takes a file name in quotes or one parameter in the sandbox')\n"
    "    if not isinstance(target, str) or target == ':memory:':\n"
    "        return None\n"
    "    if track(conn) is not None and track(conn)[2]:\n"
    "        raise sqlite3.OperationalError('cannot VACUUM from within a transaction')\n"
    "    if file_stat(target) is not None and file_stat(target)[1] > 0:\n"
    "        raise sqlite3.OperationalError('output file already exists')\n"
    "    w = workspace_of(conn)\n"
    "    if w is not None:\n"
    "        before(conn, w)\n"
    "    copy = sqlite3.connect(target)\n"
    "    try:\n"
    "        c_backup(conn, copy, name=schema)\n"
    "        c_execute(copy, 'VACUUM')\n"
    "        write(copy, workspace_of(copy), replace=True)\n"
    "    finally:\n"
    "        c_close(copy)\n"
    "    return True\n"
    /* The name as the exact str of its characters: a str subclass's lower() answered another
     * name than the one registered (V87c L1). */
    "def reserved(name):\n"
    "    if isinstance(name, str):\n"
    "        name = ''.join([name])\n"
    "        if name.lower() == 'safepy_commits':\n"
    "            raise sqlite3.ProgrammingError('safepy_commits is the sandbox\\'s own function')\n"
    "    return name\n"
    "sqlite3.connect = connect_with(sqlite3.connect)\n"
    "sys.modules['sqlite3.dbapi2'].connect = sqlite3.connect\n";

/* CPython 3.11's connection object starts with its database (_sqlite/connection.h); checked
 * when the guard is installed. */
struct py_connection {
	PyObject_HEAD sqlite3 *db;
};

static PyObject *connection_type, *call_end, *cursor_type;

/* track(conn): (commits, a statement running, in a transaction), or None when it is closed. */
static PyObject *track(PyObject *self, PyObject *conn)
{
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	void *c;
	int busy = 0;

	(void)self;
	if (!connection_type || !PyObject_TypeCheck(conn, (PyTypeObject *)connection_type))
		Py_RETURN_NONE;
	db = ((struct py_connection *)conn)->db;
	if (!db)
		Py_RETURN_NONE;
	c = sqlite3_commit_hook(db, NULL, NULL);
	if (!c)
		Py_RETURN_NONE;
	sqlite3_commit_hook(db, on_commit, c);
	while (!busy && (st = sqlite3_next_stmt(db, st)))
		busy = sqlite3_stmt_busy(st);
	return Py_BuildValue("(KOO)", (unsigned long long)((struct commits *)c)->n,
	                     busy ? Py_True : Py_False,
	                     sqlite3_get_autocommit(db) ? Py_False : Py_True);
}

static PyMethodDef track_def = {"track", track, METH_O, NULL};

/* A cursor or connection that ends resets or finalizes its statements, and SQLite then
 * finalizes the aggregates they left running: the code's finalize() ran in the middle of
 * whatever released the cursor (a compiled writer's drop of the object that held it, its item
 * still pointing at the dying object, read there at a count of 0). While a cursor or a
 * connection ends, the callbacks it would run are not called (their answers are dropped
 * anyway). */
static destructor cursor_dealloc_real, connection_dealloc_real;
static int ending;

static void cursor_dealloc_ending(PyObject *self)
{
	ending++;
	cursor_dealloc_real(self);
	ending--;
}

static void connection_dealloc_ending(PyObject *self)
{
	ending++;
	connection_dealloc_real(self);
	ending--;
}

/* (in the trashcan's bracket: a cursor's row_factory may be another cursor, a million long) */
static void cursor_dealloc_quiet(PyObject *self)
{
	pydealloc_bracket(self, cursor_dealloc_quiet, cursor_dealloc_ending);
}

static void connection_dealloc_quiet(PyObject *self)
{
	pydealloc_bracket(self, connection_dealloc_quiet, connection_dealloc_ending);
}

static PyObject *is_ending(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBool_FromLong(ending > 0);
}

static PyMethodDef ending_def = {"ending", is_ending, METH_NOARGS, NULL};

static int ends_quiet(void)
{
	PyTypeObject *k = (PyTypeObject *)cursor_type, *c = (PyTypeObject *)connection_type;

	if (!k->tp_dealloc || !c->tp_dealloc) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the sqlite3 module's classes are not as known");
		return -1;
	}
	cursor_dealloc_real = k->tp_dealloc;
	k->tp_dealloc = cursor_dealloc_quiet;
	connection_dealloc_real = c->tp_dealloc;
	c->tp_dealloc = connection_dealloc_quiet;
	return 0;
}

/* The connections whose statements run now (guard_py's steps; iterating a cursor), innermost
 * last, each with a reference. */
static PyObject *in_calls[256];
static int n_in_calls;
static Py_ssize_t cursor_connection_offset = -1;
static iternextfunc cursor_next;

/* A connection's own object, its cursor's connection (read where the Cursor class keeps it,
 * whatever a subclass calls connection), or None. */
static PyObject *connection_of(PyObject *o)
{
	PyObject *conn = Py_None;

	if (connection_type && PyObject_TypeCheck(o, (PyTypeObject *)connection_type))
		conn = o;
	else if (cursor_type && cursor_connection_offset > 0 &&
	         PyObject_TypeCheck(o, (PyTypeObject *)cursor_type)) {
		conn = *(PyObject **)((char *)o + cursor_connection_offset);
		if (!conn)
			conn = Py_None;
	}
	Py_INCREF(conn);
	return conn;
}

static int enter_call(PyObject *o)
{
	if (n_in_calls == (int)(sizeof in_calls / sizeof *in_calls)) {
		PyErr_SetString(PyExc_RecursionError,
		                "too many sqlite3 statements run inside each other");
		return -1;
	}
	in_calls[n_in_calls++] = connection_of(o);
	return 0;
}

static void leave_call(void)
{
	if (n_in_calls > 0) {
		n_in_calls--;
		Py_DECREF(in_calls[n_in_calls]);
	}
}

static PyObject *enter(PyObject *self, PyObject *o)
{
	(void)self;
	if (enter_call(o) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *leave(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	leave_call();
	Py_RETURN_NONE;
}

/* in_call(conn): does a statement of the connection (or of the cursor's) run now? */
static PyObject *in_call(PyObject *self, PyObject *o)
{
	PyObject *conn = connection_of(o);
	int i, found = 0;

	(void)self;
	for (i = 0; conn != Py_None && i < n_in_calls && !found; i++)
		found = in_calls[i] == conn;
	Py_DECREF(conn);
	return PyBool_FromLong(found);
}

static PyObject *cursor_next_marked(PyObject *cur)
{
	PyObject *r;

	if (enter_call(cur) < 0)
		return NULL;
	r = cursor_next(cur);
	leave_call();
	return r;
}

static PyMethodDef call_defs[] = {
    {"enter", enter, METH_O, NULL},
    {"leave", leave, METH_NOARGS, NULL},
    {"in_call", in_call, METH_O, NULL},
};

/* Finds where a cursor keeps its connection (the Cursor class's connection member), and marks
 * its connection while a for loop steps it. */
static int cursor_marked(PyObject *sqlite3_module, PyObject *g)
{
	PyObject *d, *fn;
	size_t i;

	cursor_type = PyObject_GetAttrString(sqlite3_module, "Cursor");
	if (!cursor_type || !PyType_Check(cursor_type))
		return -1;
	d = PyDict_GetItemString(((PyTypeObject *)cursor_type)->tp_dict, "connection");
	if (!d || Py_TYPE(d) != &PyMemberDescr_Type ||
	    (((PyMemberDescrObject *)d)->d_member->type != T_OBJECT &&
	     ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX)) {
		PyErr_SetString(
		    PyExc_RuntimeError,
		    "the sqlite3 module's cursors are not laid out as this worker reads them");
		return -1;
	}
	cursor_connection_offset = ((PyMemberDescrObject *)d)->d_member->offset;
	for (i = 0; i < sizeof call_defs / sizeof *call_defs; i++) {
		fn = PyCFunction_New(&call_defs[i], NULL);
		if (!fn || PyDict_SetItemString(g, call_defs[i].ml_name, fn) < 0) {
			Py_XDECREF(fn);
			return -1;
		}
		Py_DECREF(fn);
	}
	if (!cursor_next) {
		cursor_next = ((PyTypeObject *)cursor_type)->tp_iternext;
		((PyTypeObject *)cursor_type)->tp_iternext = cursor_next_marked;
	}
	return 0;
}

void pysqlite_call_end(void)
{
	PyObject *type, *value, *tb, *r;

	if (!call_end)
		return;
	PyErr_Fetch(&type, &value, &tb);
	r = PyObject_CallNoArgs(call_end);
	if (!r)
		PyErr_Clear();
	Py_XDECREF(r);
	PyErr_Restore(type, value, tb);
}

/* Does a connection hold its database where struct py_connection says? */
static int layout_checked(PyObject *sqlite3_module)
{
	PyObject *conn, *r;
	int ok;

	last_opened = NULL;
	conn = PyObject_CallMethod(sqlite3_module, "connect", "s", ":memory:");
	if (!conn)
		return -1;
	ok = PyObject_TypeCheck(conn, (PyTypeObject *)connection_type) && last_opened &&
	     ((struct py_connection *)conn)->db == last_opened;
	r = PyObject_CallMethod(conn, "close", NULL);
	Py_XDECREF(r);
	Py_DECREF(conn);
	if (!r)
		return -1;
	if (!ok)
		PyErr_SetString(PyExc_RuntimeError,
		                "the sqlite3 module's connections are not laid out as this worker "
		                "reads them");
	return ok ? 0 : -1;
}

int pysqlite_guard(void)
{
	PyObject *g, *r = NULL, *r2 = NULL, *installs, *key, *value, *mod, *fn;
	Py_ssize_t pos = 0;
	int rc = -1;

	mod = PyDict_GetItemString(PyImport_GetModuleDict(), "sqlite3");
	if (!mod)
		return 0; /* not imported: nothing to guard */
	g = PyDict_New();
	if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0)
		goto out;
	connection_type = PyObject_GetAttrString(mod, "Connection");
	if (!connection_type || !PyType_Check(connection_type) || layout_checked(mod) < 0)
		goto out;
	fn = PyCFunction_New(&track_def, NULL);
	if (!fn || PyDict_SetItemString(g, "track", fn) < 0) {
		Py_XDECREF(fn);
		goto out;
	}
	Py_DECREF(fn);
	if (cursor_marked(mod, g) < 0 || ends_quiet() < 0)
		goto out;
	fn = PyCFunction_New(&ending_def, NULL);
	if (!fn || PyDict_SetItemString(g, "ending", fn) < 0) {
		Py_XDECREF(fn);
		goto out;
	}
	Py_DECREF(fn);
	r = PyRun_String(guard_py, Py_file_input, g, g);
	r2 = r ? PyRun_String(workspace_py, Py_file_input, g, g) : NULL;
	installs = r2 ? PyDict_GetItemString(g, "installs") : NULL;
	call_end = r2 ? PyDict_GetItemString(g, "call_end") : NULL;
	if (!installs || !call_end)
		goto out;
	Py_INCREF(call_end);
	while (PyDict_Next(installs, &pos, &key, &value)) {
		PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(key, 0);
		if (PyDict_SetItem(t->tp_dict, PyTuple_GET_ITEM(key, 1), value) < 0)
			goto out;
		PyType_Modified(t);
	}
	rc = 0;
out:
	Py_XDECREF(r2);
	Py_XDECREF(r);
	Py_XDECREF(g);
	return rc;
}
