/* interp_internal.h - shared by the restricted interpreter's files: interp.c (CPython start-up,
 * running the code), pylayer.c (the Python layer's rules, imports and audit hook), pyguard.c
 * (the rules on the types themselves), pyfiles.c (the workspace) and pyresult.c (values into
 * the outcome).
 * Nothing else includes it. All functions need the GIL, except pylayer_hook_install. */
#ifndef SAFEPY_INTERP_INTERNAL_H
#define SAFEPY_INTERP_INTERNAL_H

#include "worker_internal.h"

/* The file name of the user's code in its code objects and tracebacks. */
#define INTERP_FILENAME    "<code>"
/* The builtin the user's from-imports are compiled into; not an identifier, so user code
 * cannot name it. */
#define PYLAYER_FROM_NAMES " safepy from"

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
/* Read the numbers of the opcodes the bytecode check looks at. Returns 0 or -1. */
int pylayer_opcodes_load(void);
/* Build the curated builtins and the module proxies of the allowed imports (cfg borrowed, only
 * during the call), after those modules are imported and sys.stdout is captured. 0 or -1. */
int pylayer_init(const struct zygote_config *cfg);
/* Check a code object and the code nested in it against the attribute rules. Returns 0, or
 * -1 with AttributeError naming the attribute and line. */
int pylayer_code_check(PyCodeObject *co);
/* The builtins dict for user code (borrowed). The user's code can change it. */
PyObject *pylayer_builtins(void);
/* A copy of it that only our own code uses (borrowed). */
PyObject *pylayer_builtins_private(void);
/* Is m one of the module proxies? */
int pylayer_is_proxy(PyObject *m);

/* ---- pyguard.c: the rules on the types ---- */

/* Replace the descriptors that lead to namespaces, frames, code and modules on the built-in
 * types with checked ones, and exec and eval in the interpreter's builtins (zygote, after
 * pylayer_init). Returns 0 or -1. */
int pyguard_install(void);
/* The user's namespace and its module (borrowed, kept alive by the caller): the functions the
 * user defines keep their internals, the module its __dict__. */
void pyguard_user(PyObject *ns, PyObject *module);

/* ---- pyfiles.c: the workspace ---- */

/* With a workspace (zygote, after the Python layer is built): open, os.open, os.stat, lstat,
 * fstat, listdir, scandir, access and getcwd answer from the workspace through the supervisor,
 * os.dup refuses, for every caller. Returns 0 or -1. */
int pyfiles_init(const struct zygote_config *cfg);
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

#endif
