/* interp_internal.h - shared by the restricted interpreter's files: interp.c (start-up, running
 * the code), pylayer.c (rules, imports, audit hook), pyproxy.c (module proxies), pyguard.c (the
 * rules on the types), pyfiles.c (the workspace), pydata.c (the data stack, figures) and
 * pyresult.c (values into the outcome). Nothing else includes it. All functions need the GIL,
 * but pylayer_hook_install. */
#ifndef SAFEPY_INTERP_INTERNAL_H
#define SAFEPY_INTERP_INTERNAL_H

#include <signal.h>

#include "worker_internal.h"

/* The file name of the user's code in its code objects and tracebacks. */
#define INTERP_FILENAME      "<code>"
/* The builtin the user's from-imports are compiled into; not an identifier, so user code
 * cannot name it. */
#define PYLAYER_FROM_NAMES   " safepy from"
/* The builtins the user's reads of an attribute the rules refuse are compiled into (interp.c):
 * obj.__dict__ as <dict>(obj), any other as <refused>(obj, name), which raises where it runs
 * (a refusal in a branch never taken no longer refuses the whole program). */
#define PYLAYER_OBJECT_DICT  " safepy dict"
#define PYLAYER_REFUSED_ATTR " safepy refused"
#define PYLAYER_PLAIN_KWARGS " safepy kwargs"

/* ---- pylayer.c: the Python layer ---- */

/* Install the audit hook (unarmed). Before Py_Initialize, so it sees every event of the
 * interpreter's life. Returns 0 or -1. */
int pylayer_hook_install(void);
/* Arm the hook: from the first code a worker runs until it ends (user code can run in
 * anything Python does after that: finalizers, __str__, __repr__, a mutated library object),
 * so nothing disarms it in a worker. The zygote never arms it. */
void pylayer_arm(int armed);
/* Is the hook armed? */
int pylayer_armed(void);
/* Was the code given a workspace (its files)? Known once pylayer_init has run. */
int pylayer_files_given(void);
/* Is file the null device's name? And a sink that reads as empty, as open(os.devnull, mode,
 * ...) would give (arguments may be NULL): a new reference, or NULL with an exception. */
int pylayer_is_devnull(PyObject *file);
PyObject *pylayer_devnull(PyObject *mode, PyObject *buffering, PyObject *encoding, PyObject *errors,
                          PyObject *newline);
/* fn(t, arg) on t and every class beneath it (a class with several bases, once for each);
 * fn returns 0 to go on, 1 to skip what is beneath t, -1 on error. 0 or -1. */
int pyguard_walk(PyTypeObject *t, int (*fn)(PyTypeObject *, void *), void *arg);
int pyguard_slot_everywhere(PyTypeObject *t, void *real, void *guard);
/* Is descr one of object's __array_interface__ and __array_struct__, which answer no object
 * (AttributeError)? */
int pyguard_answers_nothing(PyObject *descr);
/* Is t a library's class the zygote had (sealed)? */
int pyguard_sealed_class(PyObject *t);
/* Give t, and every class beneath it whose constructor is old (it copied it when it was
 * made), the constructor new. 0 or -1. */
int pyguard_replace_new(PyTypeObject *t, newfunc old, newfunc new);
/* Is o on the value stack of the innermost frame (the object its current instruction works
 * on is)? */
int pymodguard_frame_holds(PyObject *o);
/* Guard the _ctypes module's classes: no ctypes object or class is made while armed. */
int pylayer_seal_ctypes(PyObject *module);
/* Guard _struct.Struct: while armed, a Struct gets its format once. */
int pylayer_seal_struct(PyObject *module);
/* Guard _csv: its reader and writer are made only by csv.reader() and csv.writer(). */
int pylayer_seal_csv(PyObject *module);
/* pyreentry.c: array.array's item assignment (pyreentry_seal_array, when the module loads) and
 * bytearray's searches (pyreentry_guard, once) take plain numbers while armed, so no code of
 * the user's runs inside them. */
int pyreentry_seal_array(PyObject *module);
int pyreentry_guard(void);
/* Hold the operands of a class's Python comparisons while they run (its slot as CPython made
 * it: a class made, or its comparisons set, later too). */
void pyreentry_class_guard(PyTypeObject *t);
int pyreentry_texts_hold_all(void);
void pyreentry_hold_until_end(PyObject *o);
/* Is a finalizer of a class made in a call running (its writes are never an import's)? */
int pyreentry_finalizing(void);
/* Is o the object of a finalizer of the code's that is running? */
int pyreentry_being_finalized(PyObject *o);
/* Is code of the code's running with or without a frame: such a finalizer, or a hash or
 * comparison of a class made after the zygote? */
int pyreentry_code_runs(void);
/* Finalizers (__del__, weak reference callbacks, C classes' finalizers) that come while a call
 * runs wait for the user's own frame (a pending call, a collector's tick) or the end of the
 * code: run them now, and what they defer in turn. */
void pyreentry_deferred_run(void);
/* How many finalizers have been deferred so far (a count that only grows). */
unsigned long pyreentry_deferred_count(void);
/* An extension module imported late made classes: their finalizers are deferred too. */
void pyreentry_finalizers_again(void);
/* o's count has reached 0 in its class's tp_dealloc and its end runs code: keep it (its count 1,
 * a list's) and release it where finalizers run, its tp_dealloc then going on. 1, or 0: end it
 * now (the data stack not loaded, not armed, or this is that release). Memory running out ends
 * the process. */
int pyreentry_dealloc_later(PyObject *o);
/* The collector's tick: deferred finalizers waiting for the user's frame are queued if it is the
 * innermost, else asked about again at the next check. */
void pyreentry_deferred_tick(void);
/* A slot of self's class runs: counted as code of the code's while it does when the class is
 * one made after the zygote (pyreentry_code_runs); what begin answers goes to end. */
int pyreentry_slot_begin(PyObject *self);
void pyreentry_slot_end(int code);
/* A class made in a call beneath numpy.ndarray defines none of an array's own attributes
 * (shape, dtype, ...): 0, or -1 with TypeError. */
int pyreentry_array_class_checked(PyTypeObject *t);
/* The same before type() makes a class of name, bases and namespace ns (plain str keys). */
int pyreentry_array_class_planned(PyObject *name, PyObject *bases, PyObject *ns);
/* Release the operands of the last comparisons (held until the C code that asked went on). */
void pyreentry_release_held(void);
/* May the user's code set name on class cls to value (NULL: deleted; an exception group's split
 * is its own, a number's comparisons are its own)? 0, or -1 with TypeError. */
int pyreentry_class_attr_checked(PyObject *cls, PyObject *name, PyObject *value);
/* The raw stream behind the one a buffered stream was given while armed (steals raw; a new
 * reference, or NULL with an exception set). */
PyObject *pyreentry_raw_inner(PyObject *raw);
/* Are the dict's keys all exact str: a lookup of a str in it runs no code? */
int pyreentry_dict_str_only(PyObject *d);
/* Read the numbers of the opcodes the bytecode check looks at. Returns 0 or -1. */
int pylayer_opcodes_load(void);
/* Build the curated builtins and the module proxies of the allowed imports (cfg borrowed, only
 * during the call), after those modules are imported and sys.stdout is captured. 0 or -1. */
int pylayer_init(const struct zygote_config *cfg);
/* Write n bytes over the zygote's own code (CPython's, linked in), before any call runs. 0 or
 * -1 with errno. */
int pylayer_code_write(void *at, const void *bytes, size_t n);
int pylayer_entry_redirect(void *at, void *to);
/* Check a code object and the code nested in it against the attribute rules. Returns 0, or
 * -1 with AttributeError naming the attribute and line. */
int pylayer_code_check(PyCodeObject *co);
/* Do the attribute rules refuse the name (a dunder beyond the allowed ones, an internal)? */
int pylayer_attr_refused(const char *name);
/* A class pattern's positional sub-patterns read, in C, the attributes its class's
 * __match_args__ names (MATCH_CLASS): as the code's own attribute reads, they must be names the
 * rules allow, in an exact tuple of exact str. 0, or -1 with TypeError. */
int pylayer_match_args_checked(PyObject *v);
/* A module loaded late whose functions read attributes by names their callers give: it reads
 * with the user's getattr and hasattr. */
void pylayer_reads_with_rules(PyObject *module, const char *name);
/* Is f executing an attribute read of name in its own bytecode (LOAD_ATTR, LOAD_METHOD), as
 * opposed to a call that reads it in C (getattr, an attrgetter)? */
int pylayer_frame_reads(PyFrameObject *f, PyObject *name);
/* Is f executing, in its own bytecode, a read of name (LOAD_ATTR, LOAD_METHOD, IMPORT_FROM,
 * MATCH_CLASS: its keywords) or, with store, a store or deletion of it? */
int pylayer_frame_attr(PyFrameObject *f, PyObject *name, int store);
/* Is f executing an attribute store or deletion of name in its own bytecode (STORE_ATTR,
 * DELETE_ATTR), as opposed to a call that makes it in C (setattr, type.__setattr__)? */
int pylayer_frame_stores(PyFrameObject *f, PyObject *name);
/* Is f executing a call (CALL, PRECALL) on a line of its own code that loads one of names
 * (NULL-terminated) by name: as the call of exec(...) in that code is, and not a call made
 * from C while f is innermost (a finalizer, a callback)? */
int pylayer_frame_calls(PyFrameObject *f, const char *const *names);
/* Is the innermost call f makes passing, as its positional argument argi, the constant name
 * loaded right there (no jump landing between the load and the call)? */
int pylayer_call_passes_const(PyFrameObject *f, PyObject *name, int argi);
/* Is f executing "from m import *" (which reads m's namespace when m has no __all__)? */
int pylayer_frame_imports_star(PyFrameObject *f);
/* The builtins dict for user code (borrowed). The user's code can change it. */
PyObject *pylayer_builtins(void);
/* A copy of it that only our own code uses (borrowed). */
PyObject *pylayer_builtins_private(void);
/* Is m one of the module proxies? */
int pylayer_is_proxy(PyObject *m);
/* What a proxy of module holds for its attribute name whose real value is real: a checked
 * replacement (operator.attrgetter, string.Formatter), or real. New reference, or NULL. */
PyObject *pylayer_replacement(const char *module, const char *name, PyObject *real);
/* Replace, in a module's namespace, the library importers that are checked everywhere
 * (pylayer.c: sympy's get_class) with their checked versions: for each module the zygote
 * imported, and for each served late once it ran. 0, or -1 with an exception set. */
int pylayer_seal_importers(PyObject *ns);

/* ---- pyproxy.c: module proxies ---- */

/* Keep a copy of the allowlist and make the proxies of the allowed modules imported so far
 * (zygote, after sys.stdout is captured). Returns 0 or -1. */
int pyproxy_init(const struct zygote_config *cfg);
/* Is name (a dotted module name) on the allowlist: an allowed module or a public submodule of
 * one? */
int pyproxy_allowed(const char *name);
/* The proxy of the allowed module name (borrowed), made when the module is loaded; import: load
 * it first if it is not (the real import machinery). NULL without an exception when name is
 * not allowed (or, without import, not loaded); NULL with one when the import failed. */
PyObject *pyproxy_get(PyObject *name, int import);
/* What "import name" binds once name's proxy exists: the proxy of its top-level package, or
 * the stub of a package only some submodules of are allowed. Borrowed, or NULL. */
PyObject *pyproxy_binding(PyObject *name);
/* "from name import a, b" where name is a package only some submodules of are allowed and a, b
 * are such submodules: name's stub, each of them imported (borrowed). NULL without an exception
 * when that is not so; NULL with one when an import failed. */
PyObject *pyproxy_from_stub(PyObject *name, PyObject *fromlist);
/* Register view as the proxy of name (a module the allowlist does not name: __future__). */
int pyproxy_add(PyObject *name, PyObject *view);
/* A module named name holding a copy of dict's items, registered as a view made for the user
 * (its __dict__ may be read). New reference, or NULL. */
PyObject *pyproxy_view_of(PyObject *dict, const char *name);
/* Is m a proxy, a stub or a view? */
int pyproxy_is(PyObject *m);
/* Give the code's sys.stdout and sys.stderr (its proxy's and the real sys's) back the call's
 * capture streams, at each call's start. 0 or -1. */
int pyproxy_streams_reset(void);
/* ImportError "Import of|from name is not allowed. Authorized imports are: [...]". NULL. */
PyObject *pyproxy_refuse(PyObject *name, int from);
/* A module the sandbox made to be the user's module of that name (its proxy is of it), and the
 * function such modules import with (the user's own import: a proxy, or the refusal). */
int pyproxy_made_add(PyObject *name, PyObject *module);
PyObject *pyproxy_made_import(void);
/* The Debian package that brings the module name of --imports data ("python3-pandas"), or
 * NULL. */
const char *pyproxy_debian_package(const char *name);
/* Why the proxy of module leaves out name although it is public (io.open), or NULL. */
const char *pyproxy_left_out(PyObject *module, PyObject *name);

/* ---- pysqlite.c: SQLite databases ---- */

/* Set up every SQLite database the process opens from now on (defensive, no extensions, no
 * fts3_tokenizer). 0 or -1. */
int pysqlite_init(void);
/* Refuse closing a connection (and the like) from within one of its callbacks, and make a
 * workspace file's connections (read into memory, written back when they commit). 0 / -1. */
int pysqlite_guard(void);
/* At the end of a call: the workspace databases' commits not yet written are written. */
void pysqlite_call_end(void);

/* ---- pymodguard.c: real modules read by the user's code ---- */

/* Make the real modules' type (before any is sealed). 0 or -1. */
int pymodguard_init(void);
/* Give real module m the guarded type (not a proxy, the user's module or a module of another
 * type). */
void pymodguard_seal(PyObject *m);
/* Seal every module in sys.modules but __main__, unless its size is what it was last time. */
void pymodguard_seal_all(void);
/* Is m a sealed real module? */
int pymodguard_sealed(PyObject *m);
/* Reads of sealed modules made in the current frame are the worker's own (its C code reads for
 * the user) until pymodguard_untrust is given what this returned. */
void *pymodguard_trust(void);
void pymodguard_untrust(void *before);
/* Reads of sealed modules made in the current frame until pymodguard_undirect are the user's
 * code's (a reader by name it called: getattr, an attrgetter, str.format). */
void *pymodguard_direct(void);
void pymodguard_undirect(void *before);
/* Is a reader by name the user's code asked for (getattr, an attrgetter or methodcaller it
 * made or calls, str.format) working in the current frame? Its reads are the user's. */
int pymodguard_directed(void);

/* ---- pyguard.c: the rules on the types ---- */

/* The value the dict d holds under the key name, found by comparing the characters of the
 * keys that are str itself: no key's __hash__ or __eq__ runs (a lookup runs the __eq__ of a key
 * whose hash collides, and that code can change or free what the caller holds). Borrowed, or
 * NULL. */
PyObject *pyguard_str_item(PyObject *d, const char *name);

/* Replace the descriptors that lead to namespaces, frames, code and modules on the built-in
 * types with checked ones, and exec and eval in the interpreter's builtins (zygote, after
 * pylayer_init). Returns 0 or -1. */
int pyguard_install(void);
/* Guard the function types of other kinds (Cython's) that the namespace ns, or a class in it,
 * holds: their namespace, closure and code, as a Python function's. 0, or -1 with an
 * exception. */
int pyguard_function_types(PyObject *ns);
/* Is the innermost frame the user's code? */
int pyguard_reader_is_user(void);
/* Is the innermost frame the user's own code (a function or module it wrote)? */
int pyguard_frame_is_users(void);
/* Does the running code act for a served module's import (its code is on the stack, with no
 * frame of the user's code above it)? Such code is treated as the zygote's imports were. */
int pyguard_for_loading_module(void);
/* Is an exec or eval made for a served module's import by that import's own code: as
 * pyguard_for_loading_module, with no class being made, and the innermost frame's bytecode
 * calling exec or eval (pylayer_frame_calls)? */
int pyguard_loading_evaluation(void);
/* The user's namespace and its module (borrowed, kept alive by the caller): the functions the
 * user defines keep their internals, the module its __dict__. */
void pyguard_user(PyObject *ns, PyObject *module);
/* Are these a frame's globals and builtins of the user's code (see frame_is_user)? */
int pyguard_globals_are_user(PyObject *globals, PyObject *builtins);
/* Is this read of the attribute name made by getattr or hasattr called in the innermost frame
 * with a name that is not among that code's constants (a name from data, which the user may
 * have chosen)? Reads by the frame's bytecode, or by compiled code it called, are not. */
int pyguard_read_by_data(PyObject *name);
int pyguard_text_from_data(PyObject *text);
/* Does the innermost frame's code hold name in a tuple among its constants (a loop over the
 * names it lists: enum's "for name in ('__repr__', ..., '__reduce_ex__')")? */
int pyguard_code_lists(PyObject *name);
/* Mark (and unmark, with what the mark returned) the read the interpreter's getattr or hasattr
 * makes now, for the frame calling it, of a name its code does not hold. */
void *pyguard_data_read(PyObject *name, PyObject **name_before);
void pyguard_data_read_end(void *before, PyObject *name_before);
/* Is t a class the user's code made (a heap class neither the zygote's nor a module's)? */
int pyguard_user_class(PyObject *t);
/* The user's module (borrowed; NULL before the first call). */
PyObject *pyguard_user_module(void);
/* A call begins: the classes made from now on are its own (a library may finish them). */
void pyguard_call_begin(void);
/* 0 while the interpreter has class versions to spare, else -1 with RuntimeError (the
 * session's process must not run on: a version given twice confuses two classes). */
int pyguard_versions_left(void);

/* ---- pygc.c: the cyclic collector ---- */

/* In the zygote: gc.enable, disable and isenabled become the switch of the tick's collections
 * (for every caller), and the tick's handler is made. 0 or -1. */
int pygc_init(void);

/* pydealloc.c: the deallocators of iterators and wrappers that CPython 3.11.2 left without its
 * trashcan are bracketed with it (a chain of a million filter() objects overflowed the stack
 * when freed), and the slots that read nested objects without a depth count (a tuple's hash, a
 * generic alias's hash and attributes, a classmethod's __get__) count theirs; once, in the
 * zygote. */
int pydealloc_init(void);
/* A deallocator of type self (CPython's real one: real) run inside the trashcan's bracket, for
 * a type whose slot the worker replaced (the bracket's own check names the slot). */
void pydealloc_bracket(PyObject *op, destructor self, destructor real);
/* The same for an object of a type without the collector's header (numpy's arrays): op's real
 * deallocator run now, or put aside while frees are nested deeply and run when they unwind. */
void pydealloc_untracked(PyObject *op, destructor real);
/* SIGPROF's handler (borrowed), installed with the deadline's. */
PyObject *pygc_tick_handler(void);
/* The zygote is ready to fork: the interpreter's own collection, at allocations, is off for
 * good. */
void pygc_zygote_ready(void);
/* A call begins and ends: its CPU-time tick runs collections while it runs. */
void pygc_call_begin(void);
/* Is a collection the tick asked for running (what its finalizers do is never an import's)? */
int pygc_collecting(void);
/* Have the tick's handler run at the interpreter's next check (for what waits for the user's
 * frame; a bounded number of times after each tick). */
void pygc_ask_again(void);
/* Pause the tick's collections (paused 1) or let them run as gc.enable() would (0), as gc.disable
 * and gc.enable do; returns whether they were paused. */
int pygc_pause(int paused);
void pygc_call_end(void);
/* Around the start of a thread of the code's: the thread starts with the tick's signal
 * blocked, so that it goes to the main thread. */
void pygc_thread_start(sigset_t *was);
void pygc_thread_started(const sigset_t *was);

/* ---- pytiming.c: %time and %timeit ---- */

/* _safepy_time and _safepy_timeit into builtins, the dict the code's builtins are. 0 or -1. */
int pytiming_install(PyObject *builtins);
/* A %%time cell: its start (begin 1), and its times printed when it ended well (0). 0, or -1
 * with the error the code's stdout raised. */
int pytiming_cell(int begin);

/* ---- pyfiles.c: the workspace ---- */

/* With a workspace (zygote, after the Python layer is built): open, os.open, os.stat, lstat,
 * fstat, listdir, scandir, access and getcwd answer from the workspace through the supervisor,
 * os.dup refuses, for every caller. Returns 0 or -1. */
int pyfiles_init(const struct zygote_config *cfg);
/* Is there a module's file for top, a top-level module name, in the workspace (top.py or
 * top/__init__.py)? 1 or 0 (0 without a workspace), no exception set. */
int pyfiles_has_module(const char *top);
/* The built-in open (new reference), once pyfiles_init has made it the workspace's. */
PyObject *pyfiles_open(void);
/* A call starts; it ends: every file object it opened is closed (what it buffered is written,
 * and a later use is "I/O operation on closed file"). Nothing without a workspace. */
void pyfiles_call_begin(void);
void pyfiles_call_end(void);
/* exc (borrowed) is the use of a file object that was closed when an earlier call ended: its
 * message says so. */
void pyfiles_explain(PyObject *exc);
/* Does the workspace let an audit event pass that the hook refuses otherwise: the real open on
 * an fd the supervisor passed, glob's listing? 1 or 0. */
int pyfiles_audit_allows(const char *event, PyObject *args);

/* ---- pydata.c: the data stack and the figures ---- */

/* In the zygote, after the allowed modules are imported: run pydata.py's prepare() (imports and
 * exercises the data stack that is loaded, makes matplotlib render with no file). 0 or -1. */
int pydata_init(void);
/* numpy.ndarray once the data stack is guarded, else NULL. */
PyTypeObject *pydata_ndarray(void);
/* Is v one of the libraries' raw Fortran wrappers (f2py's)? */
int pydata_is_fortran(PyObject *v);
/* In a worker at the end of a call, armed: the figures the call showed or left open, and its
 * value when that is a figure (an earlier call's, shown again), become out's images (within
 * RUN_IMAGES_MAX, RUN_IMAGE_SIDE_MAX, RUN_IMAGE_BYTES_MAX and RUN_IMAGES_BYTES_MAX; a note on
 * stderr counts those left out) and are closed. value may be NULL. 0, or -1 with the
 * exception rendering raised. */
int pydata_figures(struct run_outcome *out, PyObject *value, int *late);
/* At the end of a call, before its files close: the objects made in it that read their
 * workspace file later (an image opened lazily, an .npz, an Excel file) read its bytes from
 * memory from now on (pydata.py keep_files). Still armed. */
void pydata_keep_files(void);
/* At a call's start: the images an earlier call's finalizers kept after its own were taken
 * are dropped (they were not this call's). */
void pydata_call_begin(void);
/* display(obj) of a figure or a picture: it becomes an image of this call's result. 1 when
 * obj is one, 0 when not (or without the data stack), -1 on error. Armed. */
int pydata_display(PyObject *obj);

/* The plain value (lists, dicts, numbers, strings, None) that stands for v, a numpy or pandas
 * value, in a result's JSON (pydata.py's natural(), within its bounds), or NULL when it has
 * none (no exception set). Runs library code: call it armed. New reference. */
PyObject *pydata_natural(PyObject *v);

/* ---- pyresult.c: values into the outcome ---- */

/* Fill out->result_repr (repr() of value, cut to max bytes) and out->result (value as JSON
 * when it has a natural form, by exact type, and encodes to at most max bytes). value is
 * borrowed and not None. repr() runs the user's code: call it with the hook armed. Sets
 * *truncated when something was cut. Returns 0, or -1 with the exception repr() raised set
 * (result_repr then says repr() failed). */
int pyresult_value(struct run_outcome *out, PyObject *value, size_t max, int *truncated);
/* Fill out's error type, message and traceback (each cut to max bytes; out->truncated set when
 * cut) from exc (borrowed), the raised exception; src is the user's code, quoted in the
 * traceback. Frames are read from their C structures; str() of the exceptions runs the user's
 * code: call it with the hook armed. */
void pyresult_error(struct run_outcome *out, PyObject *exc, const char *src, size_t max);
/* The running call's source (NULL after it), for the traceback view's lines of its frames. */
void pyresult_call_source(const char *src);
/* linecache.getline finds a line of the code's through the frames running it (warnings show
 * the code's line under their own). 0, or -1 with an exception. */
int pyresult_linecache_install(void);
/* The running call's rewrite of a notebook command moved line lineno's statement: from column
 * from on, the compiled line's columns are delta right of the text's (tracebacks mark the
 * text's). */
void pyresult_line_moved(long lineno, long from, long delta);
/* The nearest of names[0..n) to name as CPython's "Did you mean" finds one, or NULL. */
const char *pyresult_nearest(const char *name, char *const *names, size_t n);
/* Where line lineno (1-based) of src starts, lines ending as the parser's do, or NULL. */
const char *pyresult_line_at(const char *src, long lineno);
/* The code objects the call's source src compiled into (any may be NULL): its functions'
 * traceback entries show its lines in later calls. */
void pyresult_call_codes(const char *src, PyObject *body, PyObject *expr, PyObject *assign);
/* traceback as user code sees it: format_exc, print_exc, format_exception, print_exception
 * and format_exception_only, formatted as an uncaught exception's traceback is (no frame,
 * no file reached). Adds them to module; 0 or -1. */
int pyresult_traceback_fill(PyObject *module);
/* text (taken) written as print() writes it to file, or (none) to sys.stdout or sys.stderr
 * (which: CAPTURE_STDOUT or CAPTURE_STDERR), else the call's own stream. None, or NULL. */
PyObject *pyresult_stream_write(PyObject *text, PyObject *file, int which);
/* In the zygote: logging's Formatter.formatException and Handler.handleError format as the
 * traceback view does (the real ones walk frames). 0 (also without logging), or -1. */
int pyresult_logging_prepare(void);

#endif
