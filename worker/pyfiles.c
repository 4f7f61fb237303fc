/* pyfiles.c - the workspace as Python sees it. The worker opens no file: open, os.open, stat,
 * lstat, fstat, listdir, scandir, access, mkdir and getcwd ask the supervisor (runner_request), which
 * resolves the path beneath the workspace and passes back a descriptor. The built-in functions'
 * own objects are changed in place, once, in the zygote, so every reference to them answers
 * this way: builtins.open, io.open, os.stat, a library's saved copy of them, the import system.
 * Anything outside the workspace is a PermissionError naming it. The files a call opened are
 * closed when it ends. Functions return NULL / -1 with a Python exception set. */
#include "interp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ws_path; /* the workspace (borrowed from the configuration), or NULL */
static size_t ws_len;
static int ws_writable;

/* The fds the supervisor passed, and what it said of each file. An entry may outlive its fd
 * (a file object closes its fd itself): fstat checks the fd is still open. */
static struct {
	int used;
	struct ipc_stat st;
} fdtab[SANDBOX_NOFILE_WORKSPACE];
static int fdtab_used; /* an entry was set since the table was last cleared */

/* Weak references to the file objects the call opened (each one and its raw file): closed,
 * and what they buffered written, when the call ends. */
static PyObject *opened;
/* A file object was closed when its call ended: its later use says why it is closed. */
static int closed_at_end;

/* The original functions, for what the workspace does not answer (an fd of its own, dir_fd). */
static PyObject *orig_open, *orig_os_open, *orig_stat, *orig_lstat, *orig_fstat, *orig_listdir,
    *orig_scandir, *orig_access, *orig_mkdir, *orig_remove, *orig_unlink, *orig_rmdir, *orig_rename,
    *orig_replace, *orig_chmod, *orig_utime;
static PyObject *stat_result; /* os.stat_result */
static PyObject *dir_entry;   /* DirEntry and ScandirIterator (below) */
static PyObject *scandir_iterator;

/* ---- errors ------------------------------------------------------------------------------- */

/* Raise the OSError the supervisor's answer (a positive errno) means, with the file's name
 * (and a rename's second name, or NULL). */
/* A path outside the workspace is refused with a PermissionError that is a FileNotFoundError
 * too, as every file is without a workspace: code that reads /home/user/sales.csv or else makes
 * its data (except FileNotFoundError:) goes on. */
static PyObject *outside_error;

/* The absolute path dir/p (p itself when absolute) with its '.' and '..' resolved by its text
 * into out (size bytes): 0, or -1 when it does not fit. Links are the broker's to follow. */
static int path_resolved(const char *dir, const char *p, char *out, size_t size)
{
	size_t len = 0;

	for (int part = p[0] == '/' ? 1 : 0; part < 2; part++) {
		const char *c = part ? p : dir;
		while (*c) {
			size_t n;
			while (*c == '/')
				c++;
			n = strcspn(c, "/");
			if (n == 2 && c[0] == '.' && c[1] == '.') {
				while (len > 0 && out[len - 1] != '/')
					len--;
				if (len > 0)
					len--;
			} else if (n && !(n == 1 && c[0] == '.')) {
				if (len + 1 + n + 1 > size)
					return -1;
				out[len++] = '/';
				memcpy(out + len, c, n);
				len += n;
			}
			c += n;
		}
	}
	out[len] = '\0';
	return 0;
}

/* Does the path p lead outside the workspace by its text? */
static int path_outside(const char *p)
{
	char ws[PATH_MAX + 1], at[2 * PATH_MAX + 2];
	size_t n;

	if (path_resolved("/", ws_path, ws, sizeof(ws)) < 0 ||
	    path_resolved(ws_path, p, at, sizeof(at)) < 0)
		return 0;
	n = strlen(ws);
	return !(strncmp(at, ws, n) == 0 && (at[n] == '/' || at[n] == '\0'));
}

/* The path object path_take converted last, and its text: an os.PathLike of the code's is asked
 * for its path once, there, never again in an error's making. (Compared by identity only.) */
static const void *taken_obj;
static char taken_path[PATH_MAX];

/* Is filename (a path the call gave: str, bytes, or the os.PathLike path_take converted last)
 * outside the workspace? */
static int outside_ws(PyObject *filename)
{
	const char *p = NULL;

	if (!ws_path || ws_path[0] != '/' || !filename)
		return 0;
	if (PyUnicode_Check(filename))
		p = PyUnicode_AsUTF8(filename);
	else if (PyBytes_Check(filename))
		p = PyBytes_AS_STRING(filename);
	else if ((const void *)filename == taken_obj)
		p = taken_path;
	PyErr_Clear();
	return p ? path_outside(p) : 0;
}

static void *raise_errno2(int err, PyObject *filename, PyObject *filename2)
{
	PyObject *type = PyExc_OSError, *e;
	char msg[PATH_MAX + 256];

	if (err == EACCES && !filename2 && outside_ws(filename)) {
		if (!outside_error) {
			PyObject *bases =
			    PyTuple_Pack(2, PyExc_PermissionError, PyExc_FileNotFoundError);
			outside_error =
			    bases ? PyErr_NewException("builtins.PermissionError", bases, NULL)
			          : NULL;
			Py_XDECREF(bases);
		}
		type = outside_error ? outside_error : PyExc_PermissionError;
		PyErr_Clear();
		snprintf(msg, sizeof(msg),
		         "Permission denied: the path is outside the workspace %s, which holds the "
		         "only files the code can reach (its working directory: name them relative "
		         "to it, as 'data.csv' or 'sub/x.json')",
		         ws_path);
		err = -1;
	}
	switch (err) {
	case -1:
		err = EACCES;
		break;
	case EACCES:
		type = PyExc_PermissionError;
		snprintf(
		    msg, sizeof(msg),
		    "Permission denied: only regular files and directories in the workspace %s "
		    "can be reached, as its owner's permissions let them be",
		    ws_path);
		break;
	case EPERM:
		type = PyExc_PermissionError;
		snprintf(msg, sizeof(msg),
		         "Operation not permitted: the file cannot be written by the server (its "
		         "permissions or its owner do not let it), so it is not replaced");
		break;
	case EROFS:
		type = PyExc_PermissionError;
		if (ws_writable) /* (V61d L1, V62b H3) */
			snprintf(msg, sizeof(msg),
			         "Read-only file system: this part of the workspace %s is mounted "
			         "read-only, or is another file system mounted in it (calls change "
			         "only the workspace's own)",
			         ws_path);
		else
			snprintf(msg, sizeof(msg),
			         "Read-only file system: the workspace %s can be read, not written "
			         "(the server was started without --workspace-write)",
			         ws_path);
		break;
	case EDQUOT:
		snprintf(
		    msg, sizeof(msg),
		    "Disk quota exceeded: one call may write (or rename) at most %d files of the "
		    "workspace, %llu MiB in all (files it changes are copied first, and count), "
		    "make at most %d directories, remove at most %d files and directories, ask "
		    "for files at most %d times and be sent at most %u MiB of listings and "
		    "modules; a later call may go on",
		    IPC_WS_FILES_PER_CALL, IPC_WS_BYTES_PER_CALL >> 20, IPC_WS_DIRS_PER_CALL,
		    IPC_WS_REMOVALS_PER_CALL, IPC_REQUESTS_PER_CALL, IPC_SERVED_PER_CALL >> 20);
		break;
	case EMFILE:
		snprintf(msg, sizeof(msg),
		         "Too many open files: one call may have at most %d files of the workspace "
		         "open at once, and open %d to write in all",
		         SANDBOX_NOFILE_WORKSPACE - POLICY_FD_CHANNEL - 1, IPC_WS_FDS_PER_CALL);
		break;
	case ENFILE:
		snprintf(
		    msg, sizeof(msg),
		    "Too many open files in the server: the server has no file descriptor left "
		    "to hold this workspace change (the calls running now hold them; try again "
		    "when they end, or ask for the server's limit to be raised: ulimit -n)");
		break;
	case EFBIG:
		snprintf(msg, sizeof(msg),
		         "File too large: one call may read files of at most %llu MiB",
		         (unsigned long long)(IPC_WS_READ_MAX >> 20));
		break;
	case EOVERFLOW:
		snprintf(msg, sizeof(msg),
		         "Value too large: the directory has more entries than one listing holds "
		         "(%d)",
		         IPC_WS_LIST_MAX);
		break;
	case ENAMETOOLONG:
		snprintf(msg, sizeof(msg),
		         "File name too long: a workspace path names at most %d directories, and "
		         "its directory's full name fits in %d bytes",
		         IPC_WS_DEPTH_MAX, PATH_MAX);
		break;
	case ESTALE:
		snprintf(
		    msg, sizeof(msg),
		    "Stale file handle: the workspace %s was moved or removed while the server "
		    "runs; no file is written until the server starts again",
		    ws_path);
		break;
	case EXDEV:
		snprintf(
		    msg, sizeof(msg),
		    "Invalid cross-device link: directories, and files from one file system to "
		    "another, are not renamed in the workspace; shutil.move(src, dst) moves them "
		    "(it copies, then removes)");
		break;
	default:
		snprintf(msg, sizeof(msg), "%s", strerror(err));
		break;
	}
	/* OSError picks its subclass from the errno (FileNotFoundError, IsADirectoryError...). */
	e = filename2 ? PyObject_CallFunction(type, "isOiO", err, msg, filename, 0, filename2)
	              : PyObject_CallFunction(type, "isO", err, msg, filename ? filename : Py_None);
	if (e) {
		PyErr_SetObject((PyObject *)Py_TYPE(e), e);
		Py_DECREF(e);
	}
	return NULL;
}

static void *raise_errno(int err, PyObject *filename)
{
	return raise_errno2(err, filename, NULL);
}

/* A file larger than a call may write, opened to change in place: it is copied first, and no
 * later call can copy more (the quota's message says a later call may go on). */
static void raise_too_large_to_change(PyObject *filename)
{
	PyObject *e;
	char msg[512];

	snprintf(msg, sizeof(msg),
	         "File too large: a file opened to change in place ('a', 'r+') is copied first, "
	         "and one call may write at most %llu MiB in all: this one can be read, not "
	         "changed; write what is new to another file (or read it and write a new one)",
	         IPC_WS_BYTES_PER_CALL >> 20);
	e = PyObject_CallFunction(PyExc_OSError, "isO", EFBIG, msg, filename ? filename : Py_None);
	if (e) {
		PyErr_SetObject((PyObject *)Py_TYPE(e), e);
		Py_DECREF(e);
	}
}

/* ---- arguments ---------------------------------------------------------------------------- */

/* The arguments of a METH_FASTCALL | METH_KEYWORDS call by name: out[i] is the argument called
 * names[i] (borrowed), NULL when it was not given. The first npos may come by position. */
static int args_take(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *const *names, int n, int npos, PyObject **out)
{
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

	for (int i = 0; i < n; i++)
		out[i] = NULL;
	if (nargs > npos) {
		PyErr_Format(PyExc_TypeError,
		             "%s() takes at most %d positional arguments (%zd given)", fn, npos,
		             nargs);
		return -1;
	}
	for (Py_ssize_t i = 0; i < nargs; i++)
		out[i] = args[i];
	for (Py_ssize_t k = 0; k < nkw; k++) {
		PyObject *key = PyTuple_GET_ITEM(kwnames, k);
		int i;
		for (i = 0; i < n; i++)
			if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
				break;
		if (i == n) {
			PyErr_Format(PyExc_TypeError,
			             "%s() got an unexpected keyword argument '%U'", fn, key);
			return -1;
		}
		if (out[i]) {
			PyErr_Format(PyExc_TypeError,
			             "argument for %s() given by name ('%s') and position", fn,
			             names[i]);
			return -1;
		}
		out[i] = args[nargs + k];
	}
	return 0;
}

/* Is the argument absent or None? */
static int absent(PyObject *o)
{
	return !o || o == Py_None;
}

/* A path argument as the bytes of a path the workspace may hold: str, bytes or os.PathLike,
 * without NUL, not empty, absolute only inside the workspace. *as_bytes tells whether it was
 * given as bytes. New reference, or NULL with the exception (PermissionError outside). */
static PyObject *path_take(PyObject *path, int *as_bytes)
{
	PyObject *fs = PyOS_FSPath(path), *b = NULL;
	const char *p;
	Py_ssize_t n;

	if (!fs)
		return NULL;
	if (as_bytes)
		*as_bytes = PyBytes_Check(fs);
	if (!PyUnicode_FSConverter(fs, &b)) {
		Py_DECREF(fs);
		return NULL;
	}
	Py_DECREF(fs);
	p = PyBytes_AS_STRING(b);
	n = PyBytes_GET_SIZE(b);
	taken_obj = path;
	snprintf(taken_path, sizeof(taken_path), "%s", p);
	if (n == 0) {
		Py_DECREF(b);
		return raise_errno(ENOENT, path);
	}
	if (n >= PATH_MAX) {
		Py_DECREF(b);
		return raise_errno(ENAMETOOLONG, path);
	}
	/* Outside as text: refused without asking. The supervisor checks again, and resolves. */
	if (p[0] == '/' && ws_len > 1 &&
	    ((size_t)n < ws_len || memcmp(p, ws_path, ws_len) != 0 ||
	     ((size_t)n > ws_len && p[ws_len] != '/'))) {
		Py_DECREF(b);
		return raise_errno(EACCES, path);
	}
	return b;
}

/* ---- asking the supervisor ---------------------------------------------------------------- */

/* One request: kind, a u32 word first when with_word, then the path. Returns the supervisor's
 * status (0 or -errno) with *reply (malloc'd) and *fd (-1 when none came; fd may be NULL). A
 * broken channel ends the worker: nothing after it could reach the supervisor. */
static int ask(enum ipc_request_kind kind, int with_word, uint32_t word, PyObject *path,
               char **reply, size_t *rlen, int *fd)
{
	size_t n = (size_t)PyBytes_GET_SIZE(path), off = with_word ? 4 : 0;
	char *buf = malloc(off + n);
	int status = 0, rc;

	if (!buf) {
		PyErr_NoMemory();
		return INT_MIN;
	}
	if (with_word)
		ipc_put_u32((unsigned char *)buf, word);
	memcpy(buf + off, PyBytes_AS_STRING(path), n);
	if (fd)
		*fd = -1;
	rc = runner_request(kind, buf, off + n, &status, reply, rlen, fd);
	free(buf);
	if (rc < 0)
		_exit(WORKER_EXIT_CHANNEL);
	if (status < 0) {
		free(*reply);
		*reply = NULL;
		if (fd && *fd >= 0) {
			close(*fd);
			*fd = -1;
		}
	}
	return status;
}

static PyObject *stat_new(const struct ipc_stat *st)
{
	const int64_t g = 1000000000;
	int64_t t[3] = {st->atime_ns, st->mtime_ns, st->ctime_ns}, sec[3];
	PyObject *seq, *extra, *r;

	for (int i = 0; i < 3; i++)
		sec[i] = t[i] >= 0 ? t[i] / g : -((-t[i] + g - 1) / g);
	/* uid and gid are the supervisor's business: the worker's own ids show. */
	seq = Py_BuildValue("(kKKkiiKLLL)", (unsigned long)st->mode, (unsigned long long)st->ino,
	                    (unsigned long long)st->dev, (unsigned long)st->nlink, 0, 0,
	                    (unsigned long long)st->size, (long long)sec[0], (long long)sec[1],
	                    (long long)sec[2]);
	extra = Py_BuildValue(
	    "{s:d,s:d,s:d,s:L,s:L,s:L,s:i,s:K,s:i}", "st_atime", (double)t[0] / 1e9, "st_mtime",
	    (double)t[1] / 1e9, "st_ctime", (double)t[2] / 1e9, "st_atime_ns", (long long)t[0],
	    "st_mtime_ns", (long long)t[1], "st_ctime_ns", (long long)t[2], "st_blksize", 4096,
	    "st_blocks", (unsigned long long)((st->size + 511) / 512), "st_rdev", 0);
	r = seq && extra ? PyObject_CallFunctionObjArgs(stat_result, seq, extra, NULL) : NULL;
	Py_XDECREF(seq);
	Py_XDECREF(extra);
	return r;
}

/* An fd the supervisor passed: 1, with its entry; 0 for any other. */
static int fd_ours(long fd)
{
	return fd > POLICY_FD_CHANNEL && fd < SANDBOX_NOFILE_WORKSPACE && fdtab[fd].used;
}

/* The fd an int names, or -1 when it names none (negative, or beyond an int). Leaves no error
 * set: the real function then says what is wrong with it. */
static int fd_value(PyObject *o)
{
	long fd = PyLong_AsLong(o);

	if (fd == -1 && PyErr_Occurred())
		PyErr_Clear();
	return fd < 0 || fd > INT_MAX ? -1 : (int)fd;
}

static int fds_open(void)
{
	int n = 0;

	for (int fd = POLICY_FD_CHANNEL + 1; fd < SANDBOX_NOFILE_WORKSPACE; fd++)
		if (fdtab[fd].used) {
			/* A file object may have closed it: lseek says so (EBADF). */
			if (lseek(fd, 0, SEEK_CUR) < 0 && errno == EBADF)
				fdtab[fd].used = 0;
			else
				n++;
		}
	return n;
}

/* Open path (bytes) in mode: the fd, or -1 with the exception. */
static int open_fd(PyObject *path, enum ipc_open_mode mode, PyObject *filename)
{
	struct ipc_stat st;
	char *reply = NULL;
	size_t rlen = 0;
	int fd = -1, status;

	/* A reply's fd that does not fit is dropped by the kernel, after the supervisor counted
	 * the file as opened (and, for a write, as written): never ask without room for it. */
	if (fds_open() >= SANDBOX_NOFILE_WORKSPACE - POLICY_FD_CHANNEL - 1) {
		raise_errno(EMFILE, filename);
		return -1;
	}
	status = ask(IPC_REQ_OPEN, 1, (uint32_t)mode, path, &reply, &rlen, &fd);
	if (status == INT_MIN)
		return -1;
	if (status == -EFBIG && (mode == IPC_OPEN_APPEND || mode == IPC_OPEN_UPDATE)) {
		raise_too_large_to_change(filename);
		return -1;
	}
	if (status < 0) {
		raise_errno(-status, filename);
		return -1;
	}
	if (fd < 0 || fd >= SANDBOX_NOFILE_WORKSPACE ||
	    ipc_stat_get((unsigned char *)reply, rlen, &st) < 0) {
		free(reply);
		if (fd >= 0)
			close(fd);
		raise_errno(EMFILE, filename);
		return -1;
	}
	free(reply);
	fdtab[fd].used = 1;
	fdtab[fd].st = st;
	fdtab_used = 1;
	return fd;
}

static void fd_forget(int fd)
{
	if (fd > POLICY_FD_CHANNEL && fd < SANDBOX_NOFILE_WORKSPACE)
		fdtab[fd].used = 0;
}

/* stat or lstat of a path of the workspace. */
static PyObject *stat_path(PyObject *pathobj, int follow)
{
	PyObject *path = path_take(pathobj, NULL), *r;
	struct ipc_stat st;
	char *reply = NULL;
	size_t rlen = 0;
	int status;

	if (!path)
		return NULL;
	status = ask(IPC_REQ_STAT, 1, follow ? 0 : IPC_STAT_NOFOLLOW, path, &reply, &rlen, NULL);
	Py_DECREF(path);
	if (status == INT_MIN)
		return NULL;
	if (status < 0)
		return raise_errno(-status, pathobj);
	r = ipc_stat_get((unsigned char *)reply, rlen, &st) < 0 ? raise_errno(EIO, pathobj)
	                                                        : stat_new(&st);
	free(reply);
	return r;
}

/* Is there a module's file for top, a top-level module name, in the workspace (top.py, or
 * top/__init__.py)? 1 or 0, no exception set (asked when an import is refused, to say why). */
int pyfiles_has_module(const char *top)
{
	static const char *const ends[] = {".py", "/__init__.py"};
	int found = 0;

	if (!ws_path || !top[0] || strchr(top, '/') || strlen(top) > NAME_MAX - 12)
		return 0;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]) && !found; i++) {
		PyObject *path = PyBytes_FromFormat("%s%s", top, ends[i]);
		struct ipc_stat st;
		char *reply = NULL;
		size_t rlen = 0;
		int status;

		if (!path)
			break;
		status = ask(IPC_REQ_STAT, 1, 0, path, &reply, &rlen, NULL);
		Py_DECREF(path);
		found = status == 0 && ipc_stat_get((unsigned char *)reply, rlen, &st) == 0 &&
		        S_ISREG(st.mode);
		free(reply);
	}
	PyErr_Clear();
	return found;
}

/* fstat of an fd the supervisor passed: what it said, with the size the file has now. */
static PyObject *stat_fd(int fd)
{
	struct ipc_stat st = fdtab[fd].st;
	off_t cur = lseek(fd, 0, SEEK_CUR), end;

	if (cur < 0 && errno == EBADF) {
		fdtab[fd].used = 0;
		return raise_errno(EBADF, NULL);
	}
	end = cur < 0 ? -1 : lseek(fd, 0, SEEK_END);
	if (end >= 0) {
		st.size = (uint64_t)end;
		(void)lseek(fd, cur, SEEK_SET);
	}
	return stat_new(&st);
}

/* ---- the functions ------------------------------------------------------------------------ */

/* The file objects of the call: tracked so that they are closed when it ends. */
static int track(PyObject *obj)
{
	PyObject *ref = PyWeakref_NewRef(obj, NULL);
	int rc = ref ? PyList_Append(opened, ref) : -1;

	Py_XDECREF(ref);
	return rc;
}

/* open()'s mode as the supervisor's: CPython's rules, checked before anything is asked (a
 * write is a write even if the file object then fails). Returns 0 with *mode and the flags
 * os.open would use, or -1 with ValueError. */
static int mode_parse(PyObject *modeobj, enum ipc_open_mode *mode, int *flags)
{
	const char *m = PyUnicode_AsUTF8(modeobj);
	int seen[128] = {0}, kinds;

	if (!m)
		return -1;
	for (const char *c = m; *c; c++) {
		if (!strchr("rwxabt+", *c) || seen[(unsigned char)*c]++) {
			PyErr_Format(PyExc_ValueError, "invalid mode: '%s'", m);
			return -1;
		}
	}
	if (seen['t'] && seen['b']) {
		PyErr_SetString(PyExc_ValueError, "can't have text and binary mode at once");
		return -1;
	}
	kinds = seen['r'] + seen['w'] + seen['x'] + seen['a'];
	if (kinds > 1) {
		PyErr_SetString(PyExc_ValueError,
		                "must have exactly one of create/read/write/append mode");
		return -1;
	}
	if (kinds == 0) {
		PyErr_SetString(PyExc_ValueError,
		                "Must have exactly one of create/read/write/append "
		                "mode and at most one plus");
		return -1;
	}
	*mode = seen['r']   ? (seen['+'] ? IPC_OPEN_UPDATE : IPC_OPEN_READ)
	        : seen['w'] ? IPC_OPEN_WRITE
	        : seen['a'] ? IPC_OPEN_APPEND
	                    : IPC_OPEN_CREATE;
	*flags = (seen['+']   ? O_RDWR
	          : seen['r'] ? O_RDONLY
	                      : O_WRONLY) |
	         (seen['w'] ? O_CREAT | O_TRUNC : 0) | (seen['a'] ? O_CREAT | O_APPEND : 0) |
	         (seen['x'] ? O_CREAT | O_EXCL : 0) | O_CLOEXEC;
	return 0;
}

/* What the real open refuses before it opens anything, refused here before the supervisor is
 * asked (a file opened to write is emptied when its call commits): arguments of the wrong
 * type, and text arguments in binary mode. a: open()'s arguments as ws_open takes them. */
static int open_args_check(PyObject *modeobj, PyObject *const *a)
{
	static const char *const text_args[] = {"encoding", "errors", "newline"};
	static const char *const article[] = {"an", "an", "a"};
	int binary = PyUnicode_FindChar(modeobj, 'b', 0, PyUnicode_GET_LENGTH(modeobj), 1) >= 0;

	if (a[2] && !PyLong_Check(a[2])) {
		PyErr_Format(PyExc_TypeError, "'%.50s' object cannot be interpreted as an integer",
		             Py_TYPE(a[2])->tp_name);
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		PyObject *v = a[3 + i];
		if (absent(v))
			continue;
		if (!PyUnicode_Check(v)) {
			PyErr_Format(PyExc_TypeError,
			             "open() argument '%s' must be str or None, not %.50s",
			             text_args[i], Py_TYPE(v)->tp_name);
			return -1;
		}
		if (binary) {
			PyErr_Format(PyExc_ValueError, "binary mode doesn't take %s %s argument",
			             article[i], text_args[i]);
			return -1;
		}
	}
	return 0;
}

/* The raw file under a file object (itself when unbuffered). New reference. */
static PyObject *raw_of(PyObject *f)
{
	PyObject *o = Py_NewRef(f), *next;

	for (int i = 0; i < 2; i++) {
		next = PyObject_GetAttrString(o, i == 0 ? "buffer" : "raw");
		if (!next) {
			PyErr_Clear();
			continue;
		}
		Py_DECREF(o);
		o = next;
	}
	/* The file's own raw stream, behind the one io's buffered streams are given (pyreentry.c). */
	return pyreentry_raw_inner(o);
}

/* open(file, mode='r', buffering=-1, encoding=None, errors=None, newline=None, closefd=True,
 * opener=None): a path of the workspace opened by the supervisor, the file object built on its
 * fd by the real open. An fd is the real open's (the audit hook lets it through only for an fd
 * the supervisor passed). */
static PyObject *ws_open(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = {"file",   "mode",    "buffering", "encoding",
	                                    "errors", "newline", "closefd",   "opener"};
	PyObject *a[8], *file, *modeobj, *path = NULL, *f = NULL, *raw = NULL, *call = NULL;
	enum ipc_open_mode mode;
	int flags, fd = -1;

	(void)self;
	if (args_take("open", args, nargs, kwnames, names, 8, 8, a) < 0)
		return NULL;
	file = a[0];
	if (!file) {
		PyErr_SetString(PyExc_TypeError, "open() missing required argument 'file' (pos 1)");
		return NULL;
	}
	if (!PyUnicode_Check(file) && !PyBytes_Check(file) && PyNumber_Check(file))
		return PyObject_Vectorcall(orig_open, args, (size_t)nargs, kwnames);
	if (pylayer_is_devnull(file))
		return pylayer_devnull(a[1], a[2], a[3], a[4], a[5]);
	modeobj = a[1] ? a[1] : NULL;
	if (modeobj && !PyUnicode_Check(modeobj)) {
		PyErr_Format(PyExc_TypeError, "open() argument 'mode' must be str, not %.50s",
		             Py_TYPE(modeobj)->tp_name);
		return NULL;
	}
	if (!modeobj)
		modeobj = PyUnicode_FromString("r");
	else
		Py_INCREF(modeobj);
	if (!modeobj || mode_parse(modeobj, &mode, &flags) < 0 || open_args_check(modeobj, a) < 0)
		goto out;
	if (a[6] && PyObject_IsTrue(a[6]) == 0) {
		PyErr_SetString(PyExc_ValueError, "Cannot use closefd=False with file name");
		goto out;
	}
	if (!absent(a[7])) {
		/* An opener is handed the path and returns an fd: os.open's (ours) or any. */
		PyObject *r = PyObject_CallFunction(a[7], "Oi", file, flags);
		if (!r)
			goto out;
		fd = PyLong_Check(r) ? fd_value(r) : -1;
		if (fd < 0)
			PyErr_Format(PyExc_ValueError, "opener returned %R", r);
		Py_DECREF(r);
		if (fd < 0)
			goto out;
		/* Only a file the supervisor passed; any other fd (the channel, stdio) is not
		 * ours to wrap, nor to close on failure. */
		if (!fd_ours(fd)) {
			PyErr_Format(
			    PyExc_PermissionError,
			    "open is not allowed in the sandbox: the opener's fd %d is not "
			    "a file of the workspace",
			    fd);
			goto out;
		}
	} else {
		path = path_take(file, NULL);
		if (!path)
			goto out;
		fd = open_fd(path, mode, file);
		if (fd < 0)
			goto out;
	}
	call = Py_BuildValue("(iOOOOOO)", fd, modeobj, a[2] ? a[2] : Py_None, a[3] ? a[3] : Py_None,
	                     a[4] ? a[4] : Py_None, a[5] ? a[5] : Py_None, Py_True);
	if (call && !a[2]) {
		/* buffering: -1 is the default, which None is not. */
		PyObject *minus = PyLong_FromLong(-1);
		if (!minus || PyTuple_SetItem(call, 2, minus) < 0)
			Py_CLEAR(call);
	}
	f = call ? PyObject_Call(orig_open, call, NULL) : NULL;
	if (!f) {
		close(fd);
		fd_forget(fd);
		goto out;
	}
	raw = raw_of(f);
	/* As a file opened by name: its name is the path, as given. */
	if (PyObject_SetAttrString(raw, "name", file) < 0 || track(f) < 0 || track(raw) < 0)
		Py_CLEAR(f); /* its dealloc closes the fd */
out:
	Py_XDECREF(raw);
	Py_XDECREF(call);
	Py_XDECREF(path);
	Py_XDECREF(modeobj);
	return f;
}

/* os.open(path, flags, mode=0o777, *, dir_fd=None) */
static PyObject *ws_os_open(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
	static const char *const names[] = {"path", "flags", "mode", "dir_fd"};
	PyObject *a[4], *path;
	enum ipc_open_mode mode;
	long flags;
	int acc, fd;

	(void)self;
	if (args_take("open", args, nargs, kwnames, names, 4, 3, a) < 0)
		return NULL;
	if (!a[0] || !a[1]) {
		PyErr_SetString(PyExc_TypeError,
		                "open() missing required argument 'path' or 'flags'");
		return NULL;
	}
	if (!absent(a[3]))
		return PyObject_Vectorcall(orig_os_open, args, (size_t)nargs, kwnames);
	flags = PyLong_AsLong(a[1]);
	if (flags == -1 && PyErr_Occurred())
		return NULL;
	acc = (int)flags & O_ACCMODE;
	if ((flags & O_CREAT) && (flags & O_EXCL))
		mode = IPC_OPEN_CREATE;
	else if (acc == O_RDONLY && !(flags & (O_CREAT | O_TRUNC | O_APPEND)))
		mode = IPC_OPEN_READ;
	else if (flags & O_TRUNC)
		mode = IPC_OPEN_WRITE;
	else if (flags & O_APPEND)
		mode = IPC_OPEN_APPEND;
	else
		mode = IPC_OPEN_UPDATE; /* written in place: the file's bytes first */
	path = path_take(a[0], NULL);
	if (!path)
		return NULL;
	fd = open_fd(path, mode, a[0]);
	if (fd < 0 && mode == IPC_OPEN_UPDATE && (flags & O_CREAT) &&
	    PyErr_ExceptionMatches(PyExc_FileNotFoundError)) {
		PyErr_Clear();
		fd = open_fd(path, IPC_OPEN_WRITE, a[0]);
	}
	Py_DECREF(path);
	return fd < 0 ? NULL : PyLong_FromLong(fd);
}

/* os.stat(path, *, dir_fd=None, follow_symlinks=True) */
static PyObject *ws_stat(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = {"path", "dir_fd", "follow_symlinks"};
	PyObject *a[3];
	int follow = 1;

	(void)self;
	if (args_take("stat", args, nargs, kwnames, names, 3, 1, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_SetString(PyExc_TypeError, "stat() missing required argument 'path' (pos 1)");
		return NULL;
	}
	if (!absent(a[1]))
		return PyObject_Vectorcall(orig_stat, args, (size_t)nargs, kwnames);
	if (PyLong_Check(a[0])) {
		int fd = fd_value(a[0]);
		return fd_ours(fd) ? stat_fd(fd)
		                   : PyObject_Vectorcall(orig_stat, args, (size_t)nargs, kwnames);
	}
	if (a[2] && (follow = PyObject_IsTrue(a[2])) < 0)
		return NULL;
	return stat_path(a[0], follow);
}

/* os.lstat(path, *, dir_fd=None) */
static PyObject *ws_lstat(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	static const char *const names[] = {"path", "dir_fd"};
	PyObject *a[2];

	(void)self;
	if (args_take("lstat", args, nargs, kwnames, names, 2, 1, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_SetString(PyExc_TypeError,
		                "lstat() missing required argument 'path' (pos 1)");
		return NULL;
	}
	if (!absent(a[1]))
		return PyObject_Vectorcall(orig_lstat, args, (size_t)nargs, kwnames);
	return stat_path(a[0], 0);
}

/* os.fstat(fd) */
static PyObject *ws_fstat(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	static const char *const names[] = {"fd"};
	PyObject *a[1];
	int fd;

	(void)self;
	if (args_take("fstat", args, nargs, kwnames, names, 1, 1, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_SetString(PyExc_TypeError, "fstat() missing required argument 'fd' (pos 1)");
		return NULL;
	}
	fd = PyLong_Check(a[0]) ? fd_value(a[0]) : -1;
	if (fd_ours(fd))
		return stat_fd(fd);
	return PyObject_Vectorcall(orig_fstat, args, (size_t)nargs, kwnames);
}

/* The entries of a directory of the workspace: a list of (name, kind) with names as str, or as
 * bytes when the path was. The supervisor serves a large directory's in chunks, each telling
 * the place the next goes on from, which is asked for as it was given. */
static PyObject *list_dir(PyObject *pathobj, int *as_bytes)
{
	PyObject *path = path_take(pathobj, as_bytes), *out = path ? PyList_New(0) : NULL;
	PyObject *req = NULL;
	unsigned char place[IPC_LIST_PLACE] = {0};
	uint32_t more = 0;

	do {
		char *reply = NULL;
		size_t rlen = 0;
		int status;

		/* the place to go on from, then the path */
		Py_XSETREF(req, out ? PyBytes_FromStringAndSize(NULL, IPC_LIST_PLACE +
		                                                          PyBytes_GET_SIZE(path))
		                    : NULL);
		if (!req) {
			Py_CLEAR(out);
			break;
		}
		memcpy(PyBytes_AS_STRING(req), place, IPC_LIST_PLACE);
		memcpy(PyBytes_AS_STRING(req) + IPC_LIST_PLACE, PyBytes_AS_STRING(path),
		       (size_t)PyBytes_GET_SIZE(path));
		status = ask(IPC_REQ_LIST, 0, 0, req, &reply, &rlen, NULL);
		if (status == INT_MIN || status < 0 || rlen < IPC_LIST_PLACE) {
			Py_CLEAR(out);
			if (status != INT_MIN)
				raise_errno(status < 0 ? -status : EIO, pathobj);
			free(reply);
			break;
		}
		memcpy(place, reply, IPC_LIST_PLACE);
		more = ipc_get_u32(place);
		/* (a chunk that leaves more to come has an entry: it never goes on from itself) */
		if (more && rlen == IPC_LIST_PLACE) {
			Py_CLEAR(out);
			raise_errno(EIO, pathobj);
		}
		for (size_t i = IPC_LIST_PLACE; out && i < rlen;) {
			char kind = reply[i];
			const char *name = reply + i + 1, *end = memchr(name, '\0', rlen - i - 1);
			PyObject *n, *item;
			if (i + 1 >= rlen || !end) {
				Py_CLEAR(out);
				raise_errno(EIO, pathobj);
				break;
			}
			n = *as_bytes ? PyBytes_FromStringAndSize(name, end - name)
			              : PyUnicode_DecodeFSDefaultAndSize(name, end - name);
			item = n ? Py_BuildValue("(NC)", n, kind) : NULL;
			if (!item || PyList_Append(out, item) < 0)
				Py_CLEAR(out);
			Py_XDECREF(item);
			i = (size_t)(end - reply) + 1;
		}
		free(reply);
		if (out && more && PyList_GET_SIZE(out) > IPC_WS_LIST_MAX) {
			Py_CLEAR(out);
			raise_errno(EOVERFLOW, pathobj);
		}
	} while (out && more);
	Py_XDECREF(req);
	Py_XDECREF(path);
	return out;
}

/* os.listdir(path=None) */
static PyObject *ws_listdir(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
	static const char *const names[] = {"path"};
	PyObject *a[1], *dot = NULL, *entries, *out;
	int as_bytes = 0;

	(void)self;
	if (args_take("listdir", args, nargs, kwnames, names, 1, 1, a) < 0)
		return NULL;
	if (!absent(a[0]) && PyLong_Check(a[0]))
		return PyObject_Vectorcall(orig_listdir, args, (size_t)nargs, kwnames);
	if (absent(a[0]))
		a[0] = dot = PyUnicode_FromString(".");
	entries = a[0] ? list_dir(a[0], &as_bytes) : NULL;
	Py_XDECREF(dot);
	if (!entries)
		return NULL;
	out = PyList_New(PyList_GET_SIZE(entries));
	for (Py_ssize_t i = 0; out && i < PyList_GET_SIZE(entries); i++)
		PyList_SET_ITEM(out, i,
		                Py_NewRef(PyTuple_GET_ITEM(PyList_GET_ITEM(entries, i), 0)));
	Py_DECREF(entries);
	return out;
}

/* os.scandir(path=None): DirEntry objects from one listing. */
static PyObject *ws_scandir(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
	static const char *const names[] = {"path"};
	PyObject *a[1], *dot = NULL, *top = NULL, *entries = NULL, *list = NULL, *it = NULL;
	int as_bytes = 0;

	(void)self;
	if (args_take("scandir", args, nargs, kwnames, names, 1, 1, a) < 0)
		return NULL;
	if (!absent(a[0]) && PyLong_Check(a[0]))
		return PyObject_Vectorcall(orig_scandir, args, (size_t)nargs, kwnames);
	if (absent(a[0]))
		a[0] = dot = PyUnicode_FromString(".");
	/* entry.path joins the path as given (a str or bytes path) and the name. */
	top = a[0] ? PyOS_FSPath(a[0]) : NULL;
	entries = top ? list_dir(top, &as_bytes) : NULL;
	list = entries ? PyList_New(0) : NULL;
	for (Py_ssize_t i = 0; list && i < PyList_GET_SIZE(entries); i++) {
		PyObject *e = PyList_GET_ITEM(entries, i), *name = PyTuple_GET_ITEM(e, 0), *full,
		         *d;
		Py_ssize_t tn = as_bytes ? PyBytes_GET_SIZE(top) : PyUnicode_GET_LENGTH(top);
		int slash = tn > 0 && (as_bytes ? PyBytes_AS_STRING(top)[tn - 1] == '/'
		                                : PyUnicode_READ_CHAR(top, tn - 1) == '/');
		full = as_bytes ? PyBytes_FromFormat("%s%s%s", PyBytes_AS_STRING(top),
		                                     slash ? "" : "/", PyBytes_AS_STRING(name))
		                : PyUnicode_FromFormat("%U%s%U", top, slash ? "" : "/", name);
		d = full ? PyObject_CallFunction(dir_entry, "OOO", name, full,
		                                 PyTuple_GET_ITEM(e, 1))
		         : NULL;
		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(full);
		Py_XDECREF(d);
	}
	if (list)
		it = PyObject_CallOneArg(scandir_iterator, list);
	Py_XDECREF(list);
	Py_XDECREF(entries);
	Py_XDECREF(top);
	Py_XDECREF(dot);
	return it;
}

/* os.access(path, mode, *, dir_fd=None, effective_ids=False, follow_symlinks=True) */
static PyObject *ws_access(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
	static const char *const names[] = {"path", "mode", "dir_fd", "effective_ids",
	                                    "follow_symlinks"};
	PyObject *a[5], *st, *m;
	long mode, st_mode;
	int follow = 1, ok;

	(void)self;
	if (args_take("access", args, nargs, kwnames, names, 5, 2, a) < 0)
		return NULL;
	if (!a[0] || !a[1]) {
		PyErr_SetString(PyExc_TypeError,
		                "access() missing required argument 'path' or 'mode'");
		return NULL;
	}
	if (!absent(a[2]) || PyLong_Check(a[0]))
		return PyObject_Vectorcall(orig_access, args, (size_t)nargs, kwnames);
	mode = PyLong_AsLong(a[1]);
	if ((mode == -1 && PyErr_Occurred()) || (a[4] && (follow = PyObject_IsTrue(a[4])) < 0))
		return NULL;
	st = stat_path(a[0], follow);
	if (!st) {
		/* access() answers False for any error, as the real one. */
		if (PyErr_ExceptionMatches(PyExc_OSError)) {
			PyErr_Clear();
			Py_RETURN_FALSE;
		}
		return NULL;
	}
	m = PyObject_GetAttrString(st, "st_mode");
	Py_DECREF(st);
	st_mode = m ? PyLong_AsLong(m) : -1;
	Py_XDECREF(m);
	if (st_mode == -1 && PyErr_Occurred())
		return NULL;
	ok = (!(mode & W_OK) || ws_writable) &&
	     (!(mode & X_OK) || S_ISDIR(st_mode) || (st_mode & 0111));
	return PyBool_FromLong(ok);
}

/* os.getcwd(): the workspace, where relative paths start. */
static PyObject *ws_getcwd(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyUnicode_DecodeFSDefault(ws_path);
}

static PyObject *ws_getcwdb(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyBytes_FromString(ws_path);
}

/* A request whose reply is empty, about payload (whose reference is given up): None, or the
 * OSError the answer means, naming name (and name2, or NULL). */
static PyObject *ask_empty(enum ipc_request_kind kind, int with_word, uint32_t word,
                           PyObject *payload, PyObject *name, PyObject *name2)
{
	char *reply = NULL;
	size_t rlen = 0;
	int status = ask(kind, with_word, word, payload, &reply, &rlen, NULL);

	Py_DECREF(payload);
	free(reply);
	if (status == INT_MIN)
		return NULL;
	if (status < 0)
		return raise_errno2(-status, name, name2);
	Py_RETURN_NONE;
}

/* os.mkdir(path, mode=0o777, *, dir_fd=None): made by the supervisor at once, removed again
 * if the call fails. */
static PyObject *ws_mkdir(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	static const char *const names[] = {"path", "mode", "dir_fd"};
	PyObject *a[3], *path;
	long mode = 0777;

	(void)self;
	if (args_take("mkdir", args, nargs, kwnames, names, 3, 2, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_SetString(PyExc_TypeError,
		                "mkdir() missing required argument 'path' (pos 1)");
		return NULL;
	}
	if (!absent(a[2]))
		return PyObject_Vectorcall(orig_mkdir, args, (size_t)nargs, kwnames);
	if (a[1]) {
		mode = PyLong_AsLong(a[1]);
		if (mode == -1 && PyErr_Occurred())
			return NULL;
	}
	path = path_take(a[0], NULL);
	if (!path)
		return NULL;
	return ask_empty(IPC_REQ_MKDIR, 1, (uint32_t)mode & 0777, path, a[0], NULL);
}

/* os.remove, os.unlink (dir_fd=None): the file goes at once, and comes back if the call does
 * not commit. os.rmdir: an empty directory, the same way. */
static PyObject *ws_remove_common(const char *fn, PyObject *orig, uint32_t flags,
                                  PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = {"path", "dir_fd"};
	PyObject *a[2], *path;

	if (args_take(fn, args, nargs, kwnames, names, 2, 1, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_Format(PyExc_TypeError, "%s() missing required argument 'path' (pos 1)", fn);
		return NULL;
	}
	if (!absent(a[1]))
		return PyObject_Vectorcall(orig, args, (size_t)nargs, kwnames);
	path = path_take(a[0], NULL);
	if (!path)
		return NULL;
	return ask_empty(IPC_REQ_REMOVE, 1, flags, path, a[0], NULL);
}

static PyObject *ws_remove(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
	(void)self;
	return ws_remove_common("remove", orig_remove, 0, args, nargs, kwnames);
}

static PyObject *ws_unlink(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
	(void)self;
	return ws_remove_common("unlink", orig_unlink, 0, args, nargs, kwnames);
}

static PyObject *ws_rmdir(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	(void)self;
	return ws_remove_common("rmdir", orig_rmdir, IPC_REMOVE_DIR, args, nargs, kwnames);
}

/* os.rename, os.replace (no dir fds): a file, over a file of the new name if there is one;
 * undone if the call does not commit. */
static PyObject *ws_rename_common(const char *fn, PyObject *orig, PyObject *const *args,
                                  Py_ssize_t nargs, PyObject *kwnames)
{
	static const char *const names[] = {"src", "dst", "src_dir_fd", "dst_dir_fd"};
	PyObject *a[4], *src, *dst, *both = NULL;

	if (args_take(fn, args, nargs, kwnames, names, 4, 2, a) < 0)
		return NULL;
	if (!a[0] || !a[1]) {
		PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", fn,
		             a[0] ? "dst" : "src", a[0] ? 2 : 1);
		return NULL;
	}
	if (!absent(a[2]) || !absent(a[3]))
		return PyObject_Vectorcall(orig, args, (size_t)nargs, kwnames);
	src = path_take(a[0], NULL);
	dst = src ? path_take(a[1], NULL) : NULL;
	if (dst) {
		both = PyBytes_FromStringAndSize(NULL,
		                                 PyBytes_GET_SIZE(src) + 1 + PyBytes_GET_SIZE(dst));
		if (both) {
			char *p = PyBytes_AS_STRING(both);
			memcpy(p, PyBytes_AS_STRING(src), (size_t)PyBytes_GET_SIZE(src));
			p[PyBytes_GET_SIZE(src)] = '\0';
			memcpy(p + PyBytes_GET_SIZE(src) + 1, PyBytes_AS_STRING(dst),
			       (size_t)PyBytes_GET_SIZE(dst));
		}
	}
	Py_XDECREF(src);
	Py_XDECREF(dst);
	if (!both)
		return NULL;
	/* OSError's filename2 names the destination, as the real rename's does. */
	return ask_empty(IPC_REQ_RENAME, 0, 0, both, a[0], a[1]);
}

static PyObject *ws_rename(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
	(void)self;
	return ws_rename_common("rename", orig_rename, args, nargs, kwnames);
}

static PyObject *ws_replace(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
	(void)self;
	return ws_rename_common("replace", orig_replace, args, nargs, kwnames);
}

/* What IPC_REQ_CHMOD and IPC_REQ_UTIME refuse (EPERM), said as it is. */
static PyObject *attr_answer(enum ipc_request_kind kind, uint32_t word, PyObject *payload,
                             PyObject *name)
{
	char *reply = NULL;
	size_t rlen = 0;
	int status = ask(kind, 1, word, payload, &reply, &rlen, NULL);
	PyObject *e;

	Py_DECREF(payload);
	free(reply);
	if (status == INT_MIN)
		return NULL;
	if (status == -EPERM) {
		e = PyObject_CallFunction(
		    PyExc_PermissionError, "isO", EPERM,
		    "Operation not permitted: in the workspace a call changes the permission bits "
		    "(0o777, no others) and the times of files the server can write, and of "
		    "directories the call made",
		    name);
		if (e) {
			PyErr_SetObject((PyObject *)Py_TYPE(e), e);
			Py_DECREF(e);
		}
		return NULL;
	}
	if (status < 0)
		return raise_errno(-status, name);
	Py_RETURN_NONE;
}

/* os.chmod(path, mode, *, dir_fd=None, follow_symlinks=True): the call's copy of the file
 * changes (a directory the call made changes at once); an fd, a dir_fd or no following go to
 * the original, which the sandbox refuses. */
static PyObject *ws_chmod(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	static const char *const names[] = {"path", "mode", "dir_fd", "follow_symlinks"};
	PyObject *a[4], *path;
	long mode;
	int follow = 1;

	(void)self;
	if (args_take("chmod", args, nargs, kwnames, names, 4, 2, a) < 0)
		return NULL;
	if (!a[0] || !a[1]) {
		PyErr_Format(PyExc_TypeError, "chmod() missing required argument '%s' (pos %d)",
		             a[0] ? "mode" : "path", a[0] ? 2 : 1);
		return NULL;
	}
	if (a[3] && (follow = PyObject_IsTrue(a[3])) < 0)
		return NULL;
	if (PyLong_Check(a[0]) || !absent(a[2]) || !follow)
		return PyObject_Vectorcall(orig_chmod, args, (size_t)nargs, kwnames);
	mode = PyLong_AsLong(a[1]);
	if (mode == -1 && PyErr_Occurred())
		return NULL;
	/* os.chmod takes a C int. */
	if (mode > INT_MAX || mode < INT_MIN) {
		PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C int");
		return NULL;
	}
	path = path_take(a[0], NULL);
	if (!path)
		return NULL;
	/* The kernel keeps the low 12 bits, as chmod does: os.stat(p).st_mode | stat.S_IEXEC
	 * carries the file type (S_IFREG), which changes nothing. Set-user-ID, set-group-ID and
	 * sticky stay refused (sent as 07777, which the supervisor refuses), and a negative mode
	 * (all of them to the kernel) too. */
	if (mode >= 0)
		mode &= 07777;
	return attr_answer(IPC_REQ_CHMOD, mode < 0 || mode > 0777 ? 07777 : (uint32_t)mode, path,
	                   a[0]);
}

/* One time of os.utime: a number of seconds (int or float) or of nanoseconds (ns), into
 * seconds and nanoseconds. 0 or -1. */
static int utime_part(PyObject *v, int ns, int64_t *sec, uint32_t *nsec)
{
	PyObject *q = NULL, *r = NULL, *billion, *pair;
	long long s;
	long n;

	if (!ns && PyFloat_Check(v)) {
		double d = PyFloat_AS_DOUBLE(v), f = floor(d);
		if (!isfinite(d) || f < -9.2e18 || f > 9.2e18) {
			PyErr_SetString(PyExc_OverflowError, "timestamp out of range");
			return -1;
		}
		*sec = (int64_t)f;
		n = (long)floor((d - f) * 1e9);
		if (n >= 1000000000) {
			(*sec)++;
			n -= 1000000000;
		}
		*nsec = (uint32_t)n;
		return 0;
	}
	if (!PyLong_Check(v)) {
		PyErr_Format(PyExc_TypeError, "utime: %s must be a tuple of two %s",
		             ns ? "ns" : "'times'", ns ? "ints" : "numbers");
		return -1;
	}
	if (!ns) {
		s = PyLong_AsLongLong(v);
		if (s == -1 && PyErr_Occurred())
			return -1;
		*sec = s;
		*nsec = 0;
		return 0;
	}
	billion = PyLong_FromLong(1000000000);
	pair = billion ? PyNumber_Divmod(v, billion) : NULL;
	Py_XDECREF(billion);
	if (!pair)
		return -1;
	q = PyTuple_GET_ITEM(pair, 0);
	r = PyTuple_GET_ITEM(pair, 1);
	s = PyLong_AsLongLong(q);
	n = PyLong_AsLong(r);
	Py_DECREF(pair);
	if ((s == -1 || n == -1) && PyErr_Occurred())
		return -1;
	*sec = s;
	*nsec = (uint32_t)n;
	return 0;
}

/* os.utime(path, times=None, *, ns=None, dir_fd=None, follow_symlinks=True): as chmod. */
static PyObject *ws_utime(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	static const char *const names[] = {"path", "times", "ns", "dir_fd", "follow_symlinks"};
	PyObject *a[5], *path, *pair, *payload;
	int64_t sec[2] = {0, 0};
	uint32_t nsec[2] = {IPC_UTIME_NOW, IPC_UTIME_NOW};
	int follow = 1, ns;
	unsigned char *p;
	Py_ssize_t n;

	(void)self;
	if (args_take("utime", args, nargs, kwnames, names, 5, 2, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_SetString(PyExc_TypeError,
		                "utime() missing required argument 'path' (pos 1)");
		return NULL;
	}
	if (a[4] && (follow = PyObject_IsTrue(a[4])) < 0)
		return NULL;
	if (PyLong_Check(a[0]) || !absent(a[3]) || !follow)
		return PyObject_Vectorcall(orig_utime, args, (size_t)nargs, kwnames);
	if (!absent(a[1]) && a[2]) {
		PyErr_SetString(PyExc_ValueError,
		                "utime: you may specify either 'times' or 'ns' but not both");
		return NULL;
	}
	ns = a[2] != NULL;
	pair = ns ? a[2] : absent(a[1]) ? NULL : a[1];
	if (pair && (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2)) {
		PyErr_Format(PyExc_TypeError, "utime: %s must be a tuple of two %s",
		             ns ? "ns" : "'times'", ns ? "ints" : "ints or floats");
		return NULL;
	}
	for (int i = 0; pair && i < 2; i++)
		if (utime_part(PyTuple_GET_ITEM(pair, i), ns, &sec[i], &nsec[i]) < 0)
			return NULL;
	path = path_take(a[0], NULL);
	if (!path)
		return NULL;
	n = PyBytes_GET_SIZE(path);
	payload = PyBytes_FromStringAndSize(NULL, IPC_UTIME_BYTES + n);
	if (!payload) {
		Py_DECREF(path);
		return NULL;
	}
	p = (unsigned char *)PyBytes_AS_STRING(payload);
	for (int i = 0; i < 2; i++) {
		ipc_put_u32(p + 12 * i, (uint32_t)(uint64_t)sec[i]);
		ipc_put_u32(p + 12 * i + 4, (uint32_t)((uint64_t)sec[i] >> 32));
		ipc_put_u32(p + 12 * i + 8, nsec[i]);
	}
	memcpy(p + IPC_UTIME_BYTES, PyBytes_AS_STRING(path), (size_t)n);
	Py_DECREF(path);
	return attr_answer(IPC_REQ_UTIME, 0, payload, a[0]);
}

/* os.dup(fd): a worker makes no fd (the filter would end it) but a new handle on its /dev/null
 * (fds 0-2: scipy's message streams, pydata.py) or on a workspace file the supervisor passed
 * (numpy's fromfile and tofile read and write through C stdio on a copy of a file object's
 * fd): the copy is the same file, known as the original is. */
static PyObject *ws_dup(PyObject *self, PyObject *fd)
{
	PyObject *e;
	long n = PyLong_Check(fd) ? PyLong_AsLong(fd) : -1;

	(void)self;
	PyErr_Clear();
	if ((n >= 0 && n <= 2) || fd_ours(n)) {
		int copy = fcntl((int)n, F_DUPFD_CLOEXEC, 0);
		if (copy < 0)
			return PyErr_SetFromErrno(PyExc_OSError);
		if (n > 2) {
			if (copy >= SANDBOX_NOFILE_WORKSPACE) {
				close(copy);
				return raise_errno(EMFILE, NULL);
			}
			fdtab[copy] = fdtab[n];
		}
		return PyLong_FromLong(copy);
	}
	e = PyObject_CallFunction(PyExc_OSError, "is", ENOTSUP,
	                          "Operation not supported: file descriptors cannot be copied in "
	                          "the sandbox (read the file through its file object)");
	if (e) {
		PyErr_SetObject((PyObject *)Py_TYPE(e), e);
		Py_DECREF(e);
	}
	return NULL;
}

/* Ours in place of the originals: same names and calling conventions (checked), their docs. */
static PyMethodDef def_open = {"open", (PyCFunction)(void (*)(void))ws_open,
                               METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_os_open = {"open", (PyCFunction)(void (*)(void))ws_os_open,
                                  METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_stat = {"stat", (PyCFunction)(void (*)(void))ws_stat,
                               METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_lstat = {"lstat", (PyCFunction)(void (*)(void))ws_lstat,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_fstat = {"fstat", (PyCFunction)(void (*)(void))ws_fstat,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_listdir = {"listdir", (PyCFunction)(void (*)(void))ws_listdir,
                                  METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_scandir = {"scandir", (PyCFunction)(void (*)(void))ws_scandir,
                                  METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_access = {"access", (PyCFunction)(void (*)(void))ws_access,
                                 METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_mkdir = {"mkdir", (PyCFunction)(void (*)(void))ws_mkdir,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
/* os.fsync(fd) of a workspace file open in the call: it returns. The file is the call's own
 * copy until the call's files are moved into place at its end, so a sync now would make
 * nothing durable that the move does not replace (the worker may not sync anyway). */
static PyObject *ws_fsync(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	static const char *const names[] = {"fd"};
	PyObject *a[1];
	int fd;

	(void)self;
	if (args_take("fsync", args, nargs, kwnames, names, 1, 1, a) < 0)
		return NULL;
	if (!a[0]) {
		PyErr_SetString(PyExc_TypeError, "fsync() missing required argument 'fd' (pos 1)");
		return NULL;
	}
	if ((fd = PyObject_AsFileDescriptor(a[0])) < 0)
		return NULL;
	/* (a file of the workspace, still open: one a file object closed is EBADF, as there; its
	 * offset asked, which the filter lets a workspace fd do) */
	if (!fd_ours(fd) || (lseek(fd, 0, SEEK_CUR) < 0 && errno == EBADF)) {
		errno = EBADF;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	Py_RETURN_NONE;
}

static PyMethodDef def_fsync = {"fsync", (PyCFunction)(void (*)(void))ws_fsync,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_remove = {"remove", (PyCFunction)(void (*)(void))ws_remove,
                                 METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_unlink = {"unlink", (PyCFunction)(void (*)(void))ws_unlink,
                                 METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_rmdir = {"rmdir", (PyCFunction)(void (*)(void))ws_rmdir,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_rename = {"rename", (PyCFunction)(void (*)(void))ws_rename,
                                 METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_replace = {"replace", (PyCFunction)(void (*)(void))ws_replace,
                                  METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_chmod = {"chmod", (PyCFunction)(void (*)(void))ws_chmod,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_utime = {"utime", (PyCFunction)(void (*)(void))ws_utime,
                                METH_FASTCALL | METH_KEYWORDS, NULL};
static PyMethodDef def_getcwd = {"getcwd", ws_getcwd, METH_NOARGS, NULL};
static PyMethodDef def_getcwdb = {"getcwdb", ws_getcwdb, METH_NOARGS, NULL};
static PyMethodDef def_dup = {"dup", ws_dup, METH_O, NULL};

/* Make module.name run def instead; *orig (may be NULL) gets a function of the original. */
static int patch(PyObject *module, const char *name, PyMethodDef *def, PyObject **orig)
{
	PyObject *f = PyObject_GetAttrString(module, name);
	PyCFunctionObject *cf;

	if (!f)
		return -1;
	/* The same calling convention: the function object's vectorcall, chosen for it when
	 * it was made, calls whatever ml_meth its method definition names. */
	if (!PyCFunction_Check(f) || PyCFunction_GET_FLAGS(f) != def->ml_flags) {
		PyErr_Format(PyExc_RuntimeError, "%s.%s is not the built-in function expected",
		             PyModule_GetName(module), name);
		Py_DECREF(f);
		return -1;
	}
	cf = (PyCFunctionObject *)f;
	if (orig) {
		*orig = PyCFunction_NewEx(cf->m_ml, cf->m_self, cf->m_module);
		if (!*orig) {
			Py_DECREF(f);
			return -1;
		}
	}
	def->ml_doc = cf->m_ml->ml_doc;
	cf->m_ml = def;
	Py_DECREF(f); /* the module keeps it */
	return 0;
}

/* DirEntry and the iterator os.scandir returns, as CPython's behave (a symbolic link that
 * leads out of the workspace is neither a file nor a directory). Run with the real builtins
 * in the zygote; their functions' globals are out of the user's reach (pyguard.c). */
static const char helpers[] =
    "import stat as _st\n"
    "from posix import stat as _stat\n"
    "class DirEntry:\n"
    "    __slots__ = ('name', 'path', '_kind', '_stat', '_lstat')\n"
    "    def __init__(self, name, path, kind):\n"
    "        self.name = name\n"
    "        self.path = path\n"
    "        self._kind = kind\n"
    "        self._stat = self._lstat = None\n"
    "    def __repr__(self):\n"
    "        return '<DirEntry %r>' % (self.name,)\n"
    "    def __fspath__(self):\n"
    "        return self.path\n"
    "    def is_symlink(self):\n"
    "        return self._kind == 'l'\n"
    "    def stat(self, *, follow_symlinks=True):\n"
    "        if follow_symlinks and self._kind == 'l':\n"
    "            if self._stat is None:\n"
    "                self._stat = _stat(self.path)\n"
    "            return self._stat\n"
    "        if self._lstat is None:\n"
    "            self._lstat = _stat(self.path, follow_symlinks=False)\n"
    "        return self._lstat\n"
    "    def _is(self, kind, test, follow_symlinks):\n"
    "        if self._kind == 'l' and follow_symlinks:\n"
    "            try:\n"
    "                return test(self.stat().st_mode)\n"
    "            except (FileNotFoundError, PermissionError):\n"
    "                return False\n"
    "        return self._kind == kind\n"
    "    def is_dir(self, *, follow_symlinks=True):\n"
    "        return self._is('d', _st.S_ISDIR, follow_symlinks)\n"
    "    def is_file(self, *, follow_symlinks=True):\n"
    "        return self._is('f', _st.S_ISREG, follow_symlinks)\n"
    "    def inode(self):\n"
    "        return self.stat(follow_symlinks=False).st_ino\n"
    "class ScandirIterator:\n"
    "    __slots__ = ('_it',)\n"
    "    def __init__(self, entries):\n"
    "        self._it = iter(entries)\n"
    "    def __iter__(self):\n"
    "        return self\n"
    "    def __next__(self):\n"
    "        return next(self._it)\n"
    "    def close(self):\n"
    "        self._it = iter(())\n"
    "    def __enter__(self):\n"
    "        return self\n"
    "    def __exit__(self, *exc):\n"
    "        self.close()\n"
    "for _c in (DirEntry, ScandirIterator):\n"
    "    _c.__module__ = 'posix'\n"
    /* numpy writes and reads .npy files through C stdio on a copy of the file's fd when
     * it thinks it has a real file: through the file object instead. */
    "import sys\n"
    "_format = sys.modules.get('numpy.lib.format')\n"
    "if _format is not None:\n"
    "    _format.isfileobj = lambda f: False\n"
    "del sys, _format, _c\n";

static int helpers_load(void)
{
	PyObject *g = PyDict_New(), *r = NULL;

	if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0 &&
	    PyDict_SetItemString(g, "__name__", PyUnicode_FromString("posix")) == 0)
		r = PyRun_String(helpers, Py_file_input, g, g);
	if (r) {
		dir_entry = Py_XNewRef(PyDict_GetItemString(g, "DirEntry"));
		scandir_iterator = Py_XNewRef(PyDict_GetItemString(g, "ScandirIterator"));
	}
	Py_XDECREF(r);
	Py_XDECREF(g);
	return dir_entry && scandir_iterator ? 0 : -1;
}

/* ---- entry points ------------------------------------------------------------------------- */

int pyfiles_init(const struct zygote_config *cfg)
{
	PyObject *io = NULL, *posix = NULL;
	int rc = -1;

	ws_path = cfg->workspace;
	ws_len = strlen(ws_path);
	ws_writable = cfg->workspace_write;
	/* A write over RLIMIT_FSIZE fails with EFBIG instead of ending the worker. */
	if (ws_writable && signal(SIGXFSZ, SIG_IGN) == SIG_ERR) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	opened = PyList_New(0);
	io = PyImport_ImportModule("_io");
	posix = PyImport_ImportModule("posix");
	if (!opened || !io || !posix || helpers_load() < 0)
		goto out;
	stat_result = PyObject_GetAttrString(posix, "stat_result");
	if (!stat_result || patch(io, "open", &def_open, &orig_open) < 0 ||
	    patch(posix, "open", &def_os_open, &orig_os_open) < 0 ||
	    patch(posix, "stat", &def_stat, &orig_stat) < 0 ||
	    patch(posix, "lstat", &def_lstat, &orig_lstat) < 0 ||
	    patch(posix, "fstat", &def_fstat, &orig_fstat) < 0 ||
	    patch(posix, "listdir", &def_listdir, &orig_listdir) < 0 ||
	    patch(posix, "scandir", &def_scandir, &orig_scandir) < 0 ||
	    patch(posix, "access", &def_access, &orig_access) < 0 ||
	    patch(posix, "mkdir", &def_mkdir, &orig_mkdir) < 0 ||
	    patch(posix, "remove", &def_remove, &orig_remove) < 0 ||
	    patch(posix, "unlink", &def_unlink, &orig_unlink) < 0 ||
	    patch(posix, "rmdir", &def_rmdir, &orig_rmdir) < 0 ||
	    patch(posix, "rename", &def_rename, &orig_rename) < 0 ||
	    patch(posix, "replace", &def_replace, &orig_replace) < 0 ||
	    patch(posix, "chmod", &def_chmod, &orig_chmod) < 0 ||
	    patch(posix, "utime", &def_utime, &orig_utime) < 0 ||
	    patch(posix, "fsync", &def_fsync, NULL) < 0 ||
	    patch(posix, "getcwd", &def_getcwd, NULL) < 0 ||
	    patch(posix, "getcwdb", &def_getcwdb, NULL) < 0 ||
	    patch(posix, "dup", &def_dup, NULL) < 0)
		goto out;
	rc = 0;
out:
	Py_XDECREF(io);
	Py_XDECREF(posix);
	return rc;
}

PyObject *pyfiles_open(void)
{
	PyObject *io = PyImport_ImportModule("_io"), *f;

	if (!io)
		return NULL;
	f = PyObject_GetAttrString(io, "open");
	Py_DECREF(io);
	return f;
}

/* Forget the fds and file objects of the call (a call that opened none leaves nothing). */
static void forget_all(void)
{
	if (fdtab_used)
		memset(fdtab, 0, sizeof(fdtab));
	fdtab_used = 0;
	if (PyList_GET_SIZE(opened) > 0 &&
	    PyList_SetSlice(opened, 0, PyList_GET_SIZE(opened), NULL) < 0)
		PyErr_Clear();
}

void pyfiles_call_begin(void)
{
	if (ws_path)
		forget_all();
}

void pyfiles_call_end(void)
{
	if (!ws_path)
		return;
	/* Each file object first (it writes what it buffered), then its raw file. */
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(opened); i++) {
		PyObject *f = PyWeakref_GetObject(PyList_GET_ITEM(opened, i)), *r;
		if (f == Py_None)
			continue;
		Py_INCREF(f);
		r = PyObject_GetAttrString(f, "closed");
		if (r == Py_False)
			closed_at_end = 1;
		Py_XDECREF(r);
		PyErr_Clear();
		r = PyObject_CallMethod(f, "close", NULL);
		if (!r) {
			/* (its name is the path the code gave: a str or bytes is shown, nothing of
			 * the code's runs while the message is made; its __repr__ replaced
			 * sys.stderr, which CPython holds borrowed there) */
			PyObject *name = PyObject_GetAttrString(f, "name");
			PyErr_Clear();
			if (name && (PyUnicode_CheckExact(name) || PyBytes_CheckExact(name)))
				PySys_FormatStderr("safepy: the file %R was not written completely "
				                   "when the call ended\n",
				                   name);
			else
				PySys_WriteStderr(
				    "safepy: a file was not written completely when the "
				    "call ended\n");
			Py_XDECREF(name);
			PyErr_Clear();
		}
		Py_XDECREF(r);
		Py_DECREF(f);
	}
	forget_all();
}

/* Is e the ValueError CPython's io raises for a closed file ("I/O operation on closed file.",
 * "readline of closed file", "seek of closed file", "write to closed file"...)? Its message, or
 * NULL. Only a ValueError itself with one str argument: nothing of the user's runs. */
static const char *closed_file_message(PyObject *e)
{
	PyObject *args = Py_IS_TYPE(e, (PyTypeObject *)PyExc_ValueError)
	                     ? ((PyBaseExceptionObject *)e)->args
	                     : NULL;
	const char *m;
	size_t n;

	if (!args || !PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) != 1 ||
	    !PyUnicode_CheckExact(PyTuple_GET_ITEM(args, 0)))
		return NULL;
	m = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
	if (!m) {
		PyErr_Clear();
		return NULL;
	}
	n = strlen(m);
	return strcmp(m, "I/O operation on closed file.") == 0 ||
	               strcmp(m, "I/O operation on closed file") == 0 ||
	               strcmp(m, "write to closed file") == 0 ||
	               (n > 15 && n < 40 && strcmp(m + n - 15, " of closed file") == 0)
	           ? m
	           : NULL;
}

void pyfiles_explain(PyObject *exc)
{
	/* The exception, or one it was raised from or while handling (a library that turned
	 * the file's error into its own): a few links of its chain. */
	for (int depth = 0; closed_at_end && exc && depth < 8; depth++) {
		const char *m = closed_file_message(exc);
		PyObject *args =
		    m ? PyUnicode_FromFormat(
		            "%s. Files of the workspace are closed when the call that "
		            "opened them ends, and so are the files of objects that "
		            "read theirs later (zipfile.ZipFile, a file object given "
		            "to a library; an image, .npz or Excel file opened by name "
		            "keeps its file's bytes, up to 256 MiB a call): open the "
		            "file again in this call.",
		            strcmp(m, "I/O operation on closed file.") == 0
		                ? "I/O operation on closed file"
		                : m)
		      : NULL;
		PyObject *tuple = args ? PyTuple_Pack(1, args) : NULL;

		if (tuple && PyObject_SetAttrString(exc, "args", tuple) < 0)
			PyErr_Clear();
		Py_XDECREF(tuple);
		Py_XDECREF(args);
		PyErr_Clear();
		exc = PyExceptionInstance_Check(exc) ? ((PyBaseExceptionObject *)exc)->cause
		                                           ? ((PyBaseExceptionObject *)exc)->cause
		                                           : ((PyBaseExceptionObject *)exc)->context
		                                     : NULL;
	}
}

int pyfiles_audit_allows(const char *event, PyObject *args)
{
	if (!ws_path)
		return 0;
	/* The real open building a file object on an fd the supervisor passed. */
	if (strcmp(event, "open") == 0 && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0 &&
	    PyLong_CheckExact(PyTuple_GET_ITEM(args, 0))) {
		long fd = PyLong_AsLong(PyTuple_GET_ITEM(args, 0));
		if (fd == -1 && PyErr_Occurred()) {
			PyErr_Clear();
			return 0;
		}
		return fd_ours(fd);
	}
	/* os.walk and glob list directories with os.scandir, which the workspace answers; shutil
	 * copies, moves, removes and archives with the functions it answers (open, scandir, stat,
	 * mkdir, remove, rename, chmod, utime). Its chown stays refused (os.chown is). */
	static const char *const answered[] = {
	    "os.walk",         "glob.glob",           "glob.glob/2",           "shutil.copyfile",
	    "shutil.copymode", "shutil.copystat",     "shutil.copytree",       "shutil.rmtree",
	    "shutil.move",     "shutil.make_archive", "shutil.unpack_archive", NULL,
	};

	for (const char *const *a = answered; *a; a++)
		if (strcmp(event, *a) == 0)
			return 1;
	return 0;
}
