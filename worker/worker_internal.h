/* worker_internal.h - shared between the zygote, the interpreter and the output capture.
 * Nothing outside worker/ includes it. All functions need the GIL. */
#ifndef SAFEPY_WORKER_INTERNAL_H
#define SAFEPY_WORKER_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "protocol.h"
#include "worker.h"

/* ---- capture.c: sys.stdout / sys.stderr replacements ---- */

/* CAPTURE_LOG, both streams in the order written, is only read (capture_text). */
enum capture_stream {
	CAPTURE_STDOUT = IPC_CAPTURE_STDOUT,
	CAPTURE_STDERR = IPC_CAPTURE_STDERR,
	CAPTURE_LOG = IPC_CAPTURE_LOG,
};

/* Create the two stream objects (zygote). Each keeps max bytes (head and tail); the shared
 * log keeps 2*max. Writing more than flood bytes in all raises OutputLimitExceeded.
 * Returns 0 or -1 with a Python exception set. */
int capture_init(size_t max, uint64_t flood);
/* Borrowed reference to a stream object. */
PyObject *capture_stream(enum capture_stream s);
/* The text kept for a stream (or the log, CAPTURE_LOG), every byte written (NUL included),
 * into *out (replacing what it held). *truncated is set when bytes were cut. Returns 0 or
 * -ENOMEM (out unchanged). */
int capture_text(int s, int *truncated, struct text *out);
/* Forget what earlier calls wrote (a session's next call starts with empty captures). */
void capture_reset(void);
/* Did the code write more than the flood limit? */
int capture_flooded(void);
/* Where the keeps are (ipc.h: the supervisor may read them from a worker's memory). */
uintptr_t capture_keeps_at(void);

/* ---- runner.c ---- */

/* Ask the supervisor while a call runs (ipc.h, requests): write a REQUEST frame, read its
 * REPLY. Returns 0 with *status (0 or the supervisor's -errno), *reply (malloc'd,
 * NUL-terminated, *rlen bytes before the NUL) and *fd, the fd that came with it (-1 if none;
 * fd may be NULL for a request that never brings one); or a negative errno when the channel
 * broke or carried something else (-EPROTO). */
int runner_request(enum ipc_request_kind kind, const void *data, size_t len, int *status,
                   char **reply, size_t *rlen, int *fd);
/* How many threads the interpreter has besides this one (the code's, started by its Python; at
 * most RUN_THREADS_MAX): with the GIL held, none is added or removed as the list is read.
 * Threads the kernel has beyond these are a compiled library's own, which a one-thread copy of
 * the process would lack. */
int worker_python_threads(void);

/* ---- zygote.c ---- */

/* At start-up, the allowed module cfg->imports[index] could not be imported (the exception is
 * set): say why to the supervisor in an import-failed control message (on stderr when that
 * cannot be sent). Clears the exception. */
void zygote_import_failed(const struct zygote_config *cfg, size_t index);

/* ---- pyimport.c ---- */

/* In the zygote, after the allowed modules are imported: find the directories of the packages
 * loaded outside the standard library, map their extension modules (dlopen without init; also
 * the standard library's when there is any such package), and put the worker's finder on
 * sys.meta_path. Returns 0 or -1 with a Python exception set. */
int pyimport_init(void);
/* A call runs (1) or not (0): only while one runs may a module be asked of the supervisor. */
void pyimport_serving(int on);
/* When globals is the namespace of a served module whose code runs now (its import is under
 * way): that module's code object (borrowed); else NULL. */
PyObject *pyimport_loading(PyObject *globals);
/* Is the importer unmarshalling a served module's bytecode (its marshal.loads audit event)? */
int pyimport_unmarshalling(void);
/* Is the code of any served module running now? */
int pyimport_loading_any(void);
/* While a call runs: the text (malloc'd, NUL-terminated) of the library module whose file is
 * path (a code object's absolute co_filename), for a traceback's lines. Asked of the
 * supervisor as an import asks (IPC_REQ_MODULE: module files beneath the standard library or a
 * package directory the zygote found, nothing else), by the dotted name of where path lies
 * beneath them, and kept only when the file served is path itself. NULL: no call running, not
 * a library module's file, not served. No Python code runs. */
char *pyimport_library_source(const char *path);
/* Fill r's names and dirs (not stdlib) with the package directories pyimport_init found.
 * Returns 0, or -1 on ENOMEM (r holds what was filled: ipc_roots_clear). */
int pyimport_roots(struct ipc_roots *r);

/* ---- pylayer.c ---- */

/* o as an exact str (a str subclass: a copy of its characters, so that no __hash__ or __eq__
 * of the user's decides a lookup), new reference; NULL with a TypeError naming what when o is
 * no str. */
PyObject *pylayer_exact_str(PyObject *o, const char *what);
/* kw (a call's keyword dict) with its keys exact str copies (a str subclass's __hash__ and
 * __eq__ could hide a keyword from a guard's lookup that the callee still takes by its
 * characters; a key that is no str is refused, as CPython's calls refuse it): kw itself when
 * they are, else a new dict. New reference, or NULL with a TypeError. */
PyObject *pylayer_plain_kwargs(PyObject *kw);
PyObject *pylayer_plain_kwargs_function(void);
PyObject *pylayer_new_plain(newfunc real, PyTypeObject *t, PyObject *args, PyObject *kw);

/* ---- pyfork.c ---- */

/* Drop the interpreter's fork hooks (os.register_at_fork's lists), so a fork runs no Python
 * code. Before each fork of a worker. */
void pyfork_drop_hooks(void);
/* In a one-thread copy of the process, before any Python code runs: the comparison windows the
 * other threads had open are closed (pyreentry.c). */
void pyreentry_after_copy(void);
/* Make the hooks a fresh worker runs after its fork from the zygote cheaper, without changing
 * what they do (see pyfork.c). Once, in the zygote, before it serves. Returns 0 or -1 (a
 * Python error set). */
int pyfork_zygote_hooks(void);

/* ---- pyframe.c ---- */

/* Was the running frame f called from C code (a slot, a built-in function, a property's
 * getter) rather than by its caller's bytecode? */
int pyframe_called_from_c(PyFrameObject *f);
void pyframe_super_parts(PyObject **first, PyObject **cls);
/* How many references to o the running frame can be seen to hold (its variables, its
 * module's names, the attributes of its variables' objects). */
int pyframe_held_refs(PyObject *o);
/* Is the running frame one of code's (a code object)? */
int pyframe_runs(PyObject *code);
/* Does closing gen (a generator, coroutine or asynchronous generator) run code: a handler of its
 * own, an iterator it delegates to, or (a coroutine never awaited) a warning? */
int pyframe_gen_close_runs_code(PyObject *gen);

/* ---- pycompile.c (built with CPython linked statically: SAFEPY_C_PARSER) ---- */

/* Compile a program whose source needs no rewriting as program_build does (interp.c): the
 * statements but a value-giving last one (body), that value's expression (last_expr), the
 * binding of an assignment's targets from the name result_tmp (assign), or the name an
 * augmented assignment sets (aug_name); absent parts NULL. From CPython's C syntax tree, with
 * no Python object per node. Returns 0, or -1 with a Python error set (all four NULL). */
int pycompile_program(const char *src, const char *filename, const char *result_tmp,
                      PyObject **body, PyObject **last_expr, PyObject **assign,
                      PyObject **aug_name);

/* ---- pyspecialise.c (built with CPython linked statically: SAFEPY_CHECKED_SPECIALISER) ---- */

/* Let CPython's specialiser write every form (the Python layer off), or only those checked to
 * run safely with the layer on. Once, before the interpreter starts. Returns 0 or -1. */
int pyspecialise_every_form(int every);

/* ---- interp.c ---- */

/* The zygote's /proc/self/mem, opened while the process is still dumpable (its /proc files are
 * root's after): the Python layer writes jumps into CPython's code through it (pylayer.c). -1
 * when it could not be opened; closed by the zygote once the interpreter is initialised. */
extern int zygote_self_mem;

/* Initialise CPython in the zygote. Returns 0 or -1 (message on stderr). */
int interp_init(const struct zygote_config *cfg);
/* Pre-fault what a call touches, in an idle worker (no state is left behind). */
void interp_warm_up(void);
/* Run code (NUL-terminated, no NUL inside) in a worker and fill *out (never fails: errors
 * become the outcome). The user's namespace persists across runs in one process and its
 * forks (a session's state). */
void interp_run(const char *code, struct run_outcome *out);

#endif
