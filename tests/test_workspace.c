/* test_workspace.c - the workspace end to end, against the real binary over MCP stdio: code
 * reads the files of one directory (--workspace) with ordinary Python and library code, writes
 * files there (--workspace-write) that are kept when its call completes and dropped when it
 * fails, within quotas; and every way out fails and leaves no trace. Each test builds its own
 * tree: BASE/ws is the workspace, BASE/out and BASE itself are outside it and hold a secret
 * file of known content and a marker file. An attack test checks the attack was refused as
 * expected, that the secret never appears in any answer, and that nothing outside the
 * workspace was created, removed or changed. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "protocol.h"

#define SECRET      "SAFEPY-SECRET-7f3a9c2e"
#define MARKER      "marker, never to change\n"
/* The errno values the answers carry. */
#define E_EMFILE    "24"
#define E_EDQUOT    "122"
#define E_EFBIG     "27"
/* The Python layer off, raw access to the channel: code as strong as native code. */
#define NATIVE_ARGS "--unsafe-no-python-layer", "--allow-import", "os", "--allow-import", "struct"

static void ws_fini(void);

TestSuite(ws_read, .timeout = 120, .fini = ws_fini);
TestSuite(ws_write, .timeout = 120, .fini = ws_fini);
TestSuite(ws_attack, .timeout = 120, .fini = ws_fini);
TestSuite(ws_native, .timeout = 120, .fini = ws_fini);

/* ---- The tree ----------------------------------------------------------------------------- */

static char base[64];     /* mkdtemp */
static char ws[128];      /* base/ws: the workspace */
static char outside[128]; /* base/out: a directory outside it */
static char before[16384];

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static const char *in_ws(const char *rel)
{
	return e2e_fmt("%s/%s", ws, rel);
}

static char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Everything outside the workspace, as text: each entry's path, type, size, mtime, and the
 * content of the small files. */
static struct {
	char *out;
	size_t len, cap;
} snap;

static int snap_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	char line[1024];
	int n;

	(void)f;
	if (strncmp(path, ws, strlen(ws)) == 0 && (path[strlen(ws)] == '/' || !path[strlen(ws)]))
		return 0;
	n = snprintf(line, sizeof(line), "%s %d %lld %lld.%09ld %s\n", path, type,
	             (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
	             S_ISREG(st->st_mode) && st->st_size < 200 ? slurp(path) : "");
	if (snap.len + (size_t)n + 1 <= snap.cap) {
		memcpy(snap.out + snap.len, line, (size_t)n + 1);
		snap.len += (size_t)n;
	}
	return 0;
}

static void outside_state(char *out, size_t cap)
{
	snap.out = out;
	snap.len = 0;
	snap.cap = cap;
	out[0] = '\0';
	cr_assert_eq(nftw(base, snap_one, 16, FTW_PHYS), 0);
}

/* Build the tree. */
static void tree(void)
{
	strcpy(base, "/tmp/safepy-ws-XXXXXX");
	cr_assert_not_null(mkdtemp(base), "mkdtemp: %s", strerror(errno));
	/* Workers may run as another user (nobody, when the tests run as root): only the
	 * supervisor opens files, but the tree must not depend on that. */
	cr_assert_eq(chmod(base, 0755), 0);
	snprintf(ws, sizeof(ws), "%s/ws", base);
	snprintf(outside, sizeof(outside), "%s/out", base);
	cr_assert_eq(mkdir(ws, 0755), 0);
	cr_assert_eq(mkdir(in_ws("sub"), 0755), 0);
	cr_assert_eq(mkdir(outside, 0755), 0);
	put_file(in_ws("data.csv"), "a,b\n1,2\n3,4\n");
	put_file(in_ws("sub/x.json"), "{\"k\": [1, 2]}\n");
	put_file(in_ws("nums.txt"), "1 2\n3 4\n");
	put_file(e2e_fmt("%s/secret.txt", outside), SECRET "\n");
	put_file(e2e_fmt("%s/marker.txt", outside), MARKER);
	put_file(e2e_fmt("%s/secret.txt", base), SECRET "\n");
	put_file(e2e_fmt("%s/marker.txt", base), MARKER);
	outside_state(before, sizeof(before));
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void ws_fini(void)
{
	e2e_cleanup();
	if (base[0])
		nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	base[0] = '\0';
}

/* Start the server on the tree's workspace with more arguments (NULL-terminated, or NULL). */
static void start(const char *const *more)
{
	const char *args[24] = {"--workspace", ws};
	size_t n = 2;

	tree();
	for (size_t i = 0; more && more[i]; i++) {
		cr_assert_lt(n + 1, sizeof(args) / sizeof(args[0]));
		args[n++] = more[i];
	}
	args[n] = NULL;
	e2e_start(args);
}

/* Nothing outside the workspace changed since the tree was built. */
static void outside_unchanged(void)
{
	static char now[16384];

	outside_state(now, sizeof(now));
	cr_assert_str_eq(now, before, "something outside the workspace changed:\n%s\nwas:\n%s", now,
	                 before);
}

/* No hidden file of a write in progress is left in the workspace. */
static int hidden_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	return strncmp(path + f->base, ".safepy-tmp-", 12) == 0;
}

static void no_hidden_files(void)
{
	cr_assert_eq(nftw(ws, hidden_one, 16, FTW_PHYS), 0, "a hidden file was left in %s", ws);
}

/* The answer carries no byte of the secret. */
static void no_secret(json_object *r)
{
	cr_assert_null(strstr(mcpc_json(r), SECRET), "the secret leaked: %s", mcpc_json(r));
}

static json_object *ok_result(const char *code, const char *json)
{
	json_object *r = e2e_ok(code);

	e2e_assert_result(r, code, json);
	no_secret(r);
	return r;
}

/* A Python snippet that calls f(*args) for each case and returns [errno or 'ok', ...]. */
#define TRY_EACH                                                                                   \
	"def attempt(f, *a, **k):\n"                                                               \
	"    try:\n"                                                                               \
	"        r = f(*a, **k)\n"                                                                 \
	"        if hasattr(r, 'read'):\n"                                                         \
	"            r = r.read()\n"                                                               \
	"        return ['ok', repr(r)[:80]]\n"                                                    \
	"    except OSError as e:\n"                                                               \
	"        return [type(e).__name__, e.errno, 'workspace ' + os.getcwd() in str(e)]\n"       \
	"    except ValueError as e:\n"                                                            \
	"        return ['ValueError', str(e)]\n"                                                  \
	"    except TypeError as e:\n"                                                             \
	"        return ['TypeError']\n"

/* ---- Reading ------------------------------------------------------------------------------ */

Test(ws_read, ordinary_python_reads_and_lists_the_workspace)
{
	start(NULL);
	ok_result("import csv, json\n"
	          "with open('data.csv') as f:\n"
	          "    rows = list(csv.reader(f))\n"
	          "rows, json.load(open('sub/x.json', 'rb')), open('nums.txt').read()",
	          "[[[\"a\",\"b\"],[\"1\",\"2\"],[\"3\",\"4\"]],{\"k\":[1,2]},\"1 2\\n3 4\\n\"]");
	ok_result(
	    "import os\n"
	    "[sorted(os.listdir()), sorted(os.listdir('sub')), os.path.exists('data.csv'),\n"
	    " os.path.isfile('data.csv'), os.path.isdir('sub'), os.path.getsize('data.csv'),\n"
	    " os.path.exists('nope'), sorted((d, sorted(f)) for d, _, f in os.walk('.'))]",
	    "[[\"data.csv\",\"nums.txt\",\"sub\"],[\"x.json\"],true,true,true,12,false,"
	    "[[\".\",[\"data.csv\",\"nums.txt\"]],[\"./sub\",[\"x.json\"]]]]");
	ok_result(
	    "import pathlib, glob\n"
	    "p = pathlib.Path('.')\n"
	    "[sorted(str(x) for x in p.glob('*.csv')), sorted(str(x) for x in p.rglob('*.json')),\n"
	    " pathlib.Path('sub/x.json').read_text(), pathlib.Path('data.csv').stat().st_size,\n"
	    " sorted(glob.glob('**/*', recursive=True)), [e.name for e in sorted(p.iterdir())]]",
	    "[[\"data.csv\"],[\"sub/x.json\"],\"{\\\"k\\\": [1, 2]}\\n\",12,"
	    "[\"data.csv\",\"nums.txt\",\"sub\",\"sub/x.json\"],[\"data.csv\",\"nums.txt\","
	    "\"sub\"]]");
	ok_result("import os\n"
	          "with os.scandir('sub') as it:\n"
	          "    e = next(it)\n"
	          "[e.name, e.path, e.is_file(), e.is_dir(), e.is_symlink(), e.stat().st_size]",
	          "[\"x.json\",\"sub/x.json\",true,false,false,14]");
	outside_unchanged();
	e2e_stop();
}

/* A file's methods are its class's, whatever its own dict holds: a readinto put there past
 * its setattr (a logging record factory's record, copy's reconstruction, update_wrapper) was
 * handed the buffered reader's buffer, kept, and used after the reader freed it (V66b, V67b,
 * V68b H1-H2). The build before calls it. */
Test(ws_read, a_file_s_methods_are_its_class_s)
{
	start(NULL);
	ok_result("import logging\n"
	          "f = open('nums.txt', 'rb', buffering=16)\n"
	          "raw = f.raw\n"
	          "kept = []\n"
	          "def readinto(mv):\n"
	          "    kept.append(mv)\n"
	          "    return 0\n"
	          "old = logging.getLogRecordFactory()\n"
	          "logging.setLogRecordFactory(lambda *a, **k: raw)\n"
	          "try:\n"
	          "    logging.makeLogRecord({'readinto': readinto, 'write': readinto})\n"
	          "finally:\n"
	          "    logging.setLogRecordFactory(old)\n"
	          "r = f.read(1).decode()\n"
	          "[len(kept), r]\n",
	          "[0,\"1\"]");
	e2e_stop();
}

/* Listings count against the bytes a call may be served (256 MiB, as modules): a call that
 * lists a large directory again and again is answered EDQUOT once it has had them, and the
 * next call lists again (a red team had the supervisor spend 65% of a core for one call). */
Test(ws_read, listings_count_against_what_a_call_is_served)
{
	json_object *r;
	int64_t n;

	start(ARGS("--timeout", "60"));
	cr_assert_eq(mkdir(in_ws("big"), 0755), 0);
	for (int i = 0; i < 20000; i++)
		put_file(in_ws(e2e_fmt("big/f%06d_%040d", i, 0)), "");
	r = e2e_ok("import os\n"
	           "n, err = 0, None\n"
	           "try:\n"
	           "    while n < 2000:\n"
	           "        os.listdir('big')\n"
	           "        n += 1\n"
	           "except OSError as e:\n"
	           "    err = e.errno\n"
	           "[n, err]");
	n = json_object_get_int64(
	    json_object_array_get_idx(e2e_member(mcpc_structured(r), "result"), 0));
	/* 20000 names of 48 bytes and a type byte: about 1 MiB a listing. */
	cr_assert(n >= 200 && n <= 300, "%s", mcpc_json(r));
	cr_assert_eq(json_object_get_int(
	                 json_object_array_get_idx(e2e_member(mcpc_structured(r), "result"), 1)),
	             122, "%s", mcpc_json(r));
	ok_result("import os\nlen(os.listdir('big'))", "20000");
	e2e_stop();
}

Test(ws_read, relative_paths_start_at_the_workspace)
{
	start(NULL);
	ok_result(e2e_fmt("import os, pathlib\n"
	                  "[os.getcwd() == %s, str(pathlib.Path.cwd()) == %s,\n"
	                  " os.path.abspath('data.csv') == %s + '/data.csv',\n"
	                  " open(%s + '/data.csv').read() == open('./sub/../data.csv').read(),\n"
	                  " str(pathlib.Path('data.csv').resolve()) == %s + '/data.csv']",
	                  e2e_fmt("'%s'", ws), e2e_fmt("'%s'", ws), e2e_fmt("'%s'", ws),
	                  e2e_fmt("'%s'", ws), e2e_fmt("'%s'", ws)),
	          "[true,true,true,true,true]");
	/* A last "." names a directory, as a trailing slash does: a file's is none (V55c L2) */
	ok_result("import os\n" TRY_EACH
	          "[attempt(os.stat, 'data.csv/.'), attempt(open, 'data.csv/.'),\n"
	          " attempt(open, 'data.csv/'), os.path.isdir('sub/.'), os.path.exists('sub/./'),\n"
	          " os.path.exists('data.csv/.')]",
	          "[[\"NotADirectoryError\",20,false],[\"NotADirectoryError\",20,false],"
	          "[\"NotADirectoryError\",20,false],true,true,false]");
	e2e_stop();
}

/* The workspace's own modules are not imported (their code would run as a library's); the
 * refusal says so, and the file is not run. A link to a file outside says nothing of it. */
Test(ws_read, a_workspace_module_is_not_imported_and_the_refusal_says_why)
{
	json_object *r;

	start(NULL);
	put_file(in_ws("helpers.py"), "print('ran')\n");
	cr_assert_eq(mkdir(in_ws("pkg"), 0755), 0);
	put_file(in_ws("pkg/__init__.py"), "print('ran')\n");
	cr_assert_eq(mkdir(in_ws("notmod"), 0755), 0);
	cr_assert_eq(symlink(e2e_fmt("%s/secret.txt", outside), in_ws("link.py")), 0);
	r = ok_result(
	    "out = []\n"
	    "try:\n    import helpers\nexcept ModuleNotFoundError as e:\n"
	    "    out.append(str(e))\n"
	    "try:\n    from pkg.sub import x\nexcept ModuleNotFoundError as e:\n"
	    "    out.append(str(e)[:58])\n"
	    "try:\n    import link\nexcept ModuleNotFoundError as e:\n"
	    "    out.append(str(e)[:40])\n"
	    "try:\n    import notmod\nexcept ModuleNotFoundError as e:\n"
	    "    out.append(str(e)[:40])\n"
	    "out",
	    "[\"Import of helpers is not allowed: helpers is a module of the workspace's "
	    "files, and the sandbox imports installed modules only. Run its code in a call "
	    "of the session (what a call defines stays for its next calls)\","
	    "\"Import from pkg.sub is not allowed: pkg is a module of the\","
	    "\"Import of link is not allowed. Authorize\","
	    "\"Import of notmod is not allowed. Authori\"]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "", "%s", mcpc_json(r));
	outside_unchanged();
	e2e_stop();
}

/* A file's buffered stream calls its raw FileIO's readinto with a view of the stream's own
 * buffer: a readinto put in the FileIO's dict (by setattr, or by copy setting a state on it)
 * would have kept the view past the buffer. Its methods are not replaced; reading, line by
 * line too, works as before. */
Test(ws_read, a_files_raw_methods_are_not_replaced)
{
	start(NULL);
	ok_result("import copy\n"
	          "keep = []\n"
	          "f = open('data.csv', 'rb')\n"
	          "def t(fn):\n"
	          "    try:\n"
	          "        fn()\n"
	          "        return 'ran'\n"
	          "    except (AttributeError, TypeError):\n"
	          "        return 'refused'\n"
	          "class R:\n"
	          "    def __reduce__(self):\n"
	          "        return ((lambda: f.raw), (), {'readinto': keep.append})\n"
	          "tries = [t(lambda: setattr(f.raw, 'readinto', keep.append)), t(lambda: "
	          "copy.copy(R())),\n"
	          "         t(lambda: setattr(f.raw, 'read', keep.append))]\n"
	          "[tries, f.read(3).decode(), keep, type(f.raw).__name__,\n"
	          " sum(1 for _ in open('data.csv')) > 0]",
	          "[[\"refused\",\"refused\",\"refused\"],\"a,b\",[],\"FileIO\",true]");
	e2e_stop();
}

/* The workspace's path is said where the model reads it, and at start. */
Test(ws_read, the_model_is_told_where_the_workspace_is)
{
	json_object *r;
	const char *d;

	start(NULL);
	r = e2e_hold(mcpc_request(&e2e_srv, "tools/list", NULL, 5000));
	cr_assert_not_null(r);
	d = json_object_get_string(e2e_member(
	    json_object_array_get_idx(e2e_member(mcpc_result(r), "tools"), 0), "description"));
	cr_assert(d && strstr(d, e2e_fmt("workspace directory %s", ws)), "%s", d);
	cr_assert(strstr(d, "read-only"), "%s", d);
	cr_assert(strstr(e2e_log(), e2e_fmt("workspace: %s (read-only)", ws)), "%s", e2e_log());
	e2e_stop();
}

Test(ws_read, pandas_reads_a_csv)
{
	json_object *r;

	start(ARGS("--allow-import", "pandas"));
	r = e2e_call("import pandas as pd\n"
	             "df = pd.read_csv('data.csv')\n"
	             "[df.shape[0], int(df['b'].sum())]",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") != 0)
		cr_skip_test("pandas cannot be imported in a worker here: %s",
		             mcpc_err_str(r, "message"));
	e2e_assert_result(r, "pandas", "[2,6]");
	e2e_stop();
}

Test(ws_read, numpy_loads_text)
{
	json_object *r;

	start(ARGS("--allow-import", "numpy"));
	r = e2e_call("import numpy as np\n"
	             "a = np.loadtxt('nums.txt')\n"
	             "[a.shape[0], float(a.sum()), float(np.genfromtxt('data.csv', delimiter=',',\n"
	             " skip_header=1).sum())]",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") != 0)
		cr_skip_test("numpy cannot be imported in a worker here: %s",
		             mcpc_err_str(r, "message"));
	e2e_assert_result(r, "numpy", "[2,10.0,10.0]");
	e2e_stop();
}

/* Without --workspace every file operation is refused as before: no open, no os, and the
 * kernel denies what native code tries. */
Test(ws_read, without_a_workspace_nothing_changes)
{
	json_object *r;

	tree();
	e2e_start(NULL);
	r = e2e_expect_error("open('data.csv')", "PermissionError");
	r = e2e_call("import os", NULL);
	cr_assert_null(e2e_refusal_mismatch(r, &E2E_IMPORT), "%s", mcpc_json(r));
	r = e2e_hold(mcpc_request(&e2e_srv, "tools/list", NULL, 5000));
	cr_assert(strstr(mcpc_json(r), "cannot read or write files"), "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_json(r), "workspace"), "%s", mcpc_json(r));
	r = e2e_ok("1");
	cr_assert_null(e2e_member(mcpc_structured(r), "files"), "%s", mcpc_json(r));
	e2e_stop();
	e2e_start(ARGS(NATIVE_ARGS));
	r = e2e_call(e2e_fmt("import os\nos.listdir(%s)", e2e_fmt("'%s'", ws)), NULL);
	cr_assert_null(e2e_refusal_mismatch(r, &E2E_EACCES), "%s", mcpc_json(r));
	r = e2e_call(e2e_fmt("open('%s/secret.txt').read()", outside), NULL);
	cr_assert_null(e2e_refusal_mismatch(r, &E2E_EACCES), "%s", mcpc_json(r));
	no_secret(r);
	e2e_stop();
	outside_unchanged();
}

Test(ws_read, a_read_only_workspace_refuses_writes_and_creates_nothing)
{
	json_object *r;

	start(NULL);
	r = ok_result("import os\n" TRY_EACH
	              "[attempt(open, 'new.txt', 'w'), attempt(open, 'data.csv', 'a'),\n"
	              " attempt(open, 'data.csv', 'r+'), attempt(open, 'x.txt', 'x'),\n"
	              " attempt(os.makedirs, 'd'), os.listdir('.').count('new.txt')]",
	              "[[\"PermissionError\",30,true],[\"PermissionError\",30,true],"
	              "[\"PermissionError\",30,true],[\"PermissionError\",30,true],"
	              "[\"PermissionError\",30,true],0]");
	r = e2e_call("open('new.txt', 'w')", NULL);
	cr_assert(strstr(mcpc_err_str(r, "message"), "can be read, not written"), "%s",
	          mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "--workspace-write"), "%s", mcpc_json(r));
	cr_assert_null(slurp(in_ws("new.txt")));
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")), "[]");
	cr_assert(access(in_ws("d"), F_OK) < 0 && errno == ENOENT);
	outside_unchanged();
	e2e_stop();
}

/* `safepy run` and doctor take the same options; a workspace that is not an existing directory
 * is refused before anything starts. */
Test(ws_read, the_options_are_checked_and_reported)
{
	static const struct {
		const char *args[8];
		const char *says;
	} bad[] = {
	    {{"run", "--workspace", "/nonexistent/safepy-ws", "-c", "1"}, "No such file"},
	    {{"run", "--workspace", "/etc/hostname", "-c", "1"}, "not a directory"},
	    {{"run", "--workspace-write", "-c", "1"}, "--workspace-write needs --workspace"},
	    {{"run", "--workspace", "", "-c", "1"}, "empty path"},
	};
	char *out = NULL, *err = NULL;
	int status = 0;

	tree();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(
		    mcpc_run_cmd(SAFEPY_BIN, bad[i].args, NULL, 30000, &out, &err, &status), 0);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s: status 0x%x",
		          bad[i].args[2], status);
		cr_assert(strstr(err, bad[i].says), "%s", err);
		free(out);
		free(err);
	}
	/* A path given through a link and with "." is resolved. */
	cr_assert_eq(symlink(ws, e2e_fmt("%s/link", base)), 0);
	cr_assert_eq(
	    mcpc_run_cmd(SAFEPY_BIN,
	                 ARGS("run", "--workspace", e2e_fmt("%s/link/.", base), "--workspace-write",
	                      "-c", "import os\nopen('r.txt', 'w').write('x')\nos.getcwd()"),
	                 NULL, 30000, &out, &err, &status),
	    0);
	cr_assert_eq(status, 0, "%s", err);
	cr_assert(strstr(out, e2e_fmt("'%s'", ws)), "%s", out);
	cr_assert(strstr(err, "[wrote r.txt, 1 bytes]"), "%s", err);
	cr_assert_str_eq(slurp(in_ws("r.txt")), "x");
	free(out);
	free(err);
	/* A name with a line break cannot forge a line of the report. */
	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN,
	                          ARGS("run", "--workspace", ws, "--workspace-write", "-c",
	                               "open('n\\n[wrote forged, 9 bytes]', 'w').write('y')"),
	                          NULL, 30000, &out, &err, &status),
	             0);
	cr_assert_eq(status, 0, "%s", err);
	cr_assert(strstr(err, "[wrote n\\x0a[wrote forged, 9 bytes], 1 bytes]\n"), "%s", err);
	cr_assert_null(strstr(err, "\n[wrote forged"), "%s", err);
	cr_assert_str_eq(slurp(in_ws("n\n[wrote forged, 9 bytes]")), "y");
	cr_assert_eq(unlink(in_ws("n\n[wrote forged, 9 bytes]")), 0);
	free(out);
	free(err);
	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, ARGS("doctor", "--workspace", ws), NULL, 30000, &out,
	                          &err, &status),
	             0);
	cr_assert(strstr(out, e2e_fmt("workspace:      %s (read-only); entries the canary "
	                              "listed: 4",
	                              ws)),
	          "%s", out);
	free(out);
	free(err);
}

/* ---- Writing ------------------------------------------------------------------------------ */

#define RW ARGS("--workspace-write")

Test(ws_write, files_written_are_kept_and_listed)
{
	json_object *r, *files;

	start(RW);
	r = e2e_ok("with open('out.csv', 'w') as f:\n"
	           "    f.write('x,y\\n1,2\\n')\n"
	           "with open('sub/raw.bin', 'wb') as f:\n"
	           "    f.write(bytes(range(5)))\n"
	           "open('out.csv').read()");
	e2e_assert_result(r, "write", "\"x,y\\n1,2\\n\"");
	cr_assert_str_eq(slurp(in_ws("out.csv")), "x,y\n1,2\n");
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")),
	                 "[{\"path\":\"out.csv\",\"bytes\":8},{\"path\":\"sub\\/raw.bin\","
	                 "\"bytes\":5}]");
	cr_assert(strstr(mcpc_text(r), "Files written in the workspace: out.csv (8 bytes), "
	                               "sub/raw.bin (5 bytes)"),
	          "%s", mcpc_text(r));
	/* The small text file comes with the answer; the binary one does not. */
	files = e2e_member(mcpc_result(r), "content");
	cr_assert_eq(json_object_array_length(files), 2, "%s", mcpc_json(files));
	cr_assert_str_eq(
	    json_object_get_string(e2e_member(json_object_array_get_idx(files, 1), "type")),
	    "resource");
	cr_assert_str_eq(json_object_get_string(e2e_member(
	                     e2e_member(json_object_array_get_idx(files, 1), "resource"), "uri")),
	                 e2e_fmt("file://%s/out.csv", ws));
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A large directory is listed in chunks, each one short turn of the supervisor's loop (30000
 * long names in one reply held it for a quarter of a second): every entry comes once, with the
 * files the call made there and without those it removed, in listdir, scandir and walk. */
Test(ws_write, a_large_directory_is_listed_whole_in_chunks)
{
	start(RW);
	cr_assert_eq(mkdir(in_ws("many"), 0755), 0);
	for (int i = 0; i < 3000; i++)
		put_file(in_ws(e2e_fmt("many/%04d_%0200d", i, 0)), "");
	ok_result("import os\n"
	          "want = {'%04d_%0200d' % (i, 0) for i in range(3000)}\n"
	          "os.remove('many/0007_' + '0' * 200)\n"
	          "want.discard('0007_' + '0' * 200)\n"
	          "open('many/made.txt', 'w').close()\n"
	          "want.add('made.txt')\n"
	          "names = os.listdir('many')\n"
	          "scanned = [e.name for e in os.scandir('many')]\n"
	          "walked = next(os.walk('many'))[2]\n"
	          "[len(names), set(names) == want, sorted(scanned) == sorted(names),\n"
	          " sorted(walked) == sorted(names)]",
	          "[3000,true,true,true]");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* filecmp compares files and directories, fileinput reads lines across files and edits a file
 * in place (the file renamed to its backup, a new file by its name, the backup removed), as on
 * the host; the directory then lists each name once (a name renamed away and written again was
 * listed twice, from the disk and from the call's files). */
Test(ws_write, files_are_compared_and_edited_in_place)
{
	start(RW);
	put_file(in_ws("copy.csv"), "a,b\n1,2\n3,4\n");
	ok_result("import filecmp, fileinput, os\n"
	          "lines = list(fileinput.input(['nums.txt', 'data.csv']))\n"
	          "with fileinput.input('nums.txt', inplace=True) as f:\n"
	          "    for line in f:\n"
	          "        print(f'{fileinput.filelineno()}: {line}', end='')\n"
	          "d = filecmp.dircmp('.', 'sub')\n"
	          "[lines, filecmp.cmp('data.csv', 'copy.csv', shallow=False),\n"
	          " filecmp.cmp('data.csv', 'nums.txt', shallow=False), open('nums.txt').read(),\n"
	          " sorted(d.left_only), d.right_only, sorted(os.listdir('.'))]",
	          "[[\"1 2\\n\",\"3 4\\n\",\"a,b\\n\",\"1,2\\n\",\"3,4\\n\"],true,false,"
	          "\"1: 1 2\\n2: 3 4\\n\",[\"copy.csv\",\"data.csv\",\"nums.txt\",\"sub\"],"
	          "[\"x.json\"],[\"copy.csv\",\"data.csv\",\"nums.txt\",\"sub\"]]");
	cr_assert_str_eq(slurp(in_ws("nums.txt")), "1: 1 2\n2: 3 4\n");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

Test(ws_write, append_update_and_exclusive_create_follow_open)
{
	start(RW);
	cr_assert_eq(chmod(in_ws("nums.txt"), 0750), 0);
	ok_result(
	    "import os\n" TRY_EACH "with open('nums.txt', 'a') as f:\n"
	    "    f.write('5 6\\n')\n"
	    "with open('data.csv', 'r+') as f:\n"
	    "    f.write('A')\n"
	    "with open('new.txt', 'x') as f:\n"
	    "    f.write('new')\n"
	    "[open('nums.txt').read(), open('data.csv').read(), attempt(open, 'new.txt', 'x'),\n"
	    " attempt(open, 'missing.txt', 'r+'), sorted(os.listdir())]",
	    "[\"1 2\\n3 4\\n5 6\\n\",\"A,b\\n1,2\\n3,4\\n\",[\"FileExistsError\",17,false],"
	    "[\"FileNotFoundError\",2,false],[\"data.csv\",\"new.txt\",\"nums.txt\",\"sub\"]]");
	cr_assert_str_eq(slurp(in_ws("nums.txt")), "1 2\n3 4\n5 6\n");
	cr_assert_str_eq(slurp(in_ws("data.csv")), "A,b\n1,2\n3,4\n");
	cr_assert_str_eq(slurp(in_ws("new.txt")), "new");
	{
		struct stat st;
		cr_assert_eq(stat(in_ws("nums.txt"), &st), 0);
		cr_assert_eq(st.st_mode & 07777, 0750, "the file's mode was not kept: %o",
		             st.st_mode & 07777);
	}
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A file opened to append or update is copied first, by the supervisor, while every session
 * waits: a sparse file of 255 MiB, made in an instant, was copied byte by byte (zeros written)
 * at each open. Only its data is copied now, its holes stay holes, and the bytes are the
 * same. A file over what a call may copy is refused saying it can be read, not changed (no
 * later call can copy it either), not with a size limit the call's reads do not have. */
Test(ws_write, a_sparse_file_is_copied_as_it_is)
{
	struct stat st;
	int fd;

	start(RW);
	fd = open(in_ws("big"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 300 << 20), 0);
	close(fd);
	ok_result("import os\n"
	          "f = open('s.bin', 'wb')\n"
	          "f.write(b'A' * 5000)\n"
	          "f.seek(1 << 20)\n"
	          "f.write(b'B' * 70000)\n"
	          "f.truncate(255 << 20)\n"
	          "f.close()\n"
	          "os.path.getsize('s.bin')",
	          "267386880");
	ok_result(
	    "f = open('s.bin', 'r+b')\n"
	    "f.seek(3)\n"
	    "f.write(b'x')\n"
	    "f.close()\n"
	    "with open('s.bin', 'ab') as f:\n"
	    "    f.write(b'END')\n"
	    "d = open('s.bin', 'rb').read()\n"
	    "out = [len(d), d[:6], d.count(b'B'), d.count(b'A'), d[-4:]]\n"
	    "for mode in ('r+', 'a'):\n"
	    "    try:\n"
	    "        open('big', mode).close()\n"
	    "    except OSError as e:\n"
	    "        out.append([e.errno, str(e)[:60]])\n"
	    "out.append(len(open('big', 'rb').read(10)))\n"
	    "[str(x) for x in out]",
	    "[\"267386883\",\"b'AAAxAA'\",\"70000\",\"4999\",\"b'\\\\x00END'\","
	    "\"[27, '[Errno 27] File too large: a file opened to change in place ']\","
	    "\"[27, '[Errno 27] File too large: a file opened to change in place ']\",\"10\"]");
	cr_assert_eq(stat(in_ws("s.bin"), &st), 0);
	cr_assert_eq(st.st_size, (255 << 20) + 3);
	cr_assert_lt((long long)st.st_blocks * 512, 4 << 20,
	             "the copy of a sparse file took %lld bytes on disk",
	             (long long)st.st_blocks * 512);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A file of blocks 4 KiB long, block i holding the 32-bit little-endian i 1024 times. */
static void put_blocks(const char *path, int blocks)
{
	static uint32_t block[1024];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	for (int i = 0; i < blocks; i++) {
		for (int j = 0; j < 1024; j++)
			block[j] = htole32((uint32_t)i);
		cr_assert_eq(write(fd, block, sizeof(block)), (ssize_t)sizeof(block));
	}
	close(fd);
}

/* The blocks of put_blocks in the file at path, but block skip; -1, or the first block that
 * differs. */
static int blocks_differ(const char *path, int blocks, int skip)
{
	static uint32_t block[1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC), bad = -1;

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	for (int i = 0; i < blocks && bad < 0; i++) {
		cr_assert_eq(read(fd, block, sizeof(block)), (ssize_t)sizeof(block));
		for (int j = 0; j < 1024 && i != skip && bad < 0; j++)
			if (block[j] != htole32((uint32_t)i))
				bad = i;
	}
	close(fd);
	return bad;
}

/* A large file changed in place ('a', 'r+', chmod, utime) begins as a copy the supervisor
 * makes a piece at a time between its other work (a quarter of a GiB copied at once held every
 * session for a second): the call waits for it, and then the file is the file it was, every
 * piece where it was, with the call's change. */
Test(ws_write, a_large_file_changed_in_place_is_copied_whole)
{
	static const char check[] =
	    "import os, struct\n"
	    "d = open('p.bin', 'rb').read()\n"
	    "bad = [i for i in range(10240) if i != 5120 and\n"
	    "       d[i * 4096:(i + 1) * 4096] != struct.pack('<I', i) * 1024]\n"
	    "st = os.stat('p.bin')\n"
	    "[len(d), bad, d[20 << 20:(20 << 20) + 3].decode(), d[-3:].decode(),\n"
	    " oct(st.st_mode & 0o777), int(st.st_mtime)]";
	struct stat st;

	start(RW);
	put_blocks(in_ws("p.bin"), 10240); /* 40 MiB: ten pieces */
	ok_result("with open('p.bin', 'ab') as f:\n"
	          "    f.write(b'END')\n"
	          "with open('p.bin', 'r+b') as f:\n"
	          "    f.seek(20 << 20)\n"
	          "    f.write(b'MID')\n"
	          "1",
	          "1");
	cr_assert_eq(stat(in_ws("p.bin"), &st), 0);
	cr_assert_eq(st.st_size, (40 << 20) + 3);
	cr_assert_eq(blocks_differ(in_ws("p.bin"), 10240, 5120), -1);
	/* Each its own call: each copies the file again. */
	ok_result("import os\nos.chmod('p.bin', 0o600)", "null");
	ok_result("import os\nos.utime('p.bin', (1000000000, 1000000000))", "null");
	ok_result(check, "[41943043,[],\"MID\",\"END\",\"0o600\",1000000000]");
	cr_assert_eq(stat(in_ws("p.bin"), &st), 0);
	cr_assert_eq(st.st_size, (40 << 20) + 3);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(st.st_mtime, 1000000000);
	cr_assert_eq(blocks_differ(in_ws("p.bin"), 10240, 5120), -1);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A copy whose file changes while it is made is made again when its request is asked again;
 * a copy thrown away counts against the call's bytes as one taken does. A file the host kept
 * appending to was copied again and again until the call's time ran out; now the call meets
 * its quota (EDQUOT) and goes on, and the file holds the host's bytes only. */
Test(ws_write, a_file_changed_during_its_copy_counts_each_copy)
{
	static const char append[] = "!";
	json_object *r = NULL;
	struct stat st;
	int64_t id, until;
	int fd, added = 0;

	start(ARGS("--workspace-write", "--timeout", "60"));
	put_blocks(in_ws("p.bin"), 10240); /* 40 MiB: ten pieces */
	fd = open(in_ws("p.bin"), O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	id = mcpc_call_async(&e2e_srv,
	                     "try:\n"
	                     "    open('p.bin', 'ab').write(b'call')\n"
	                     "    r = 'written'\n"
	                     "except OSError as e:\n"
	                     "    r = e.strerror\n"
	                     "r",
	                     NULL);
	for (until = mcpc_now_ms() + 90000; !r && mcpc_now_ms() < until;) {
		cr_assert_eq(write(fd, append, 1), 1);
		added++;
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 2));
	}
	close(fd);
	cr_assert_not_null(r, "no answer while the file changed; stderr:\n%s", e2e_log());
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_not_null(strstr(mcpc_sc_str(r, "result"), "Disk quota exceeded"), "%s",
	                   mcpc_json(r));
	cr_assert_eq(stat(in_ws("p.bin"), &st), 0);
	cr_assert_eq(st.st_size, (40 << 20) + added);
	cr_assert_eq(blocks_differ(in_ws("p.bin"), 10240, -1), -1);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* Servers sharing a workspace commit one at a time, under an advisory lock on its directory:
 * a commit checked its names, then changed them, and another server's commit between the two
 * was lost (appends answered ok and gone). Held by another past the wait, nothing of the call
 * is written and it says why; held for a moment, the commit waits and writes. */
Test(ws_write, a_commit_waits_for_another_server_s_on_the_workspace)
{
	json_object *r;
	int64_t id;
	int lk;

	start(RW);
	lk = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(lk, 0);
	cr_assert_eq(flock(lk, LOCK_EX), 0);
	r = e2e_ok("open('locked.txt', 'w').write('x')\n'written'");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "'written'", "%s", mcpc_json(r));
	cr_assert_not_null(strstr(mcpc_sc_str(r, "stderr"), "by another server for over 2 s"), "%s",
	                   mcpc_json(r));
	cr_assert_null(slurp(in_ws("locked.txt")));
	id = mcpc_call_async(&e2e_srv, "open('waited.txt', 'w').write('y')\n'written'", NULL);
	usleep(500000);
	cr_assert_eq(flock(lk, LOCK_UN), 0);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 20000));
	cr_assert_not_null(r);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("waited.txt")), "y");
	/* the lock is the commit's only: held after it, other servers go on */
	cr_assert_eq(flock(lk, LOCK_EX | LOCK_NB), 0);
	close(lk);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* What the real open refuses before it opens anything creates and empties nothing. */
Test(ws_write, an_open_refused_for_its_arguments_changes_no_file)
{
	start(RW);
	ok_result(
	    "import os\n" TRY_EACH "[attempt(open, 'data.csv', 'wb', encoding='utf-8'), "
	    "attempt(open, 'new.txt', 'wt+b'),\n"
	    " attempt(open, 'data.csv', 'w', errors=1), attempt(open, 'data.csv', 'w', "
	    "buffering='1'),\n"
	    " attempt(open, 'data.csv', 'rw'), attempt(open, 'data.csv', 'w', closefd=False)]",
	    "[[\"ValueError\",\"binary mode doesn't take an encoding argument\"],"
	    "[\"ValueError\",\"can't have text and binary mode at once\"],"
	    "[\"TypeError\"],[\"TypeError\"],"
	    "[\"ValueError\",\"must have exactly one of create/read/write/append mode\"],"
	    "[\"ValueError\",\"Cannot use closefd=False with file name\"]]");
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	cr_assert_null(slurp(in_ws("new.txt")));
	e2e_stop();
}

/* Is a write's hidden file in the workspace's top directory? */
static int hidden_write_there(void)
{
	DIR *d = opendir(ws);
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d)))
		found = strncmp(e->d_name, ".safepy-tmp-", 12) == 0;
	if (d)
		closedir(d);
	return found;
}

/* A file that cannot be moved into place when its call completes is said in the answer: a
 * name longer than a directory holds fails at the open; a file made by 'x' whose name appeared
 * on disk meanwhile is not written, nor are the call's other files (all or none: a call may
 * have emptied a file whose copy it made there), and the answer's stderr says so. */
Test(ws_write, a_file_not_written_is_said)
{
	json_object *r;
	int64_t id;

	start(RW);
	ok_result("try:\n    open('L' * 256, 'w')\nexcept OSError as e:\n    r = e.errno\nr", "36");
	id = mcpc_call_async(&e2e_srv,
	                     "import os, time\nopen('race.txt', 'x').write('A')\n"
	                     "open('other.txt', 'w').write('A')\nt = time.time()\n"
	                     "while not os.path.exists('go.txt') and time.time() - t < 20:\n"
	                     "    time.sleep(0.02)\n'done'",
	                     NULL);
	cr_assert_gt(id, 0);
	for (int i = 0; i < 1000 && !hidden_write_there(); i++)
		usleep(10000);
	cr_assert(hidden_write_there(), "the call never opened its file");
	put_file(in_ws("race.txt"), "B");
	put_file(in_ws("go.txt"), "");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 30000));
	cr_assert_not_null(r);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")), "[]", "%s",
	                 mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"),
	                 "no file of this call was written, removed or renamed: race.txt was made "
	                 "by another call meanwhile"),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("race.txt")), "B");
	cr_assert_null(slurp(in_ws("other.txt")));
	no_hidden_files();
	e2e_stop();
}

/* A part of a writable workspace on a read-only mount says so: the message said the server
 * was started without --workspace-write (V61d L1). */
Test(ws_write, a_read_only_mount_in_the_workspace_says_so)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: a read-only bind mount in a private mount namespace");
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	start(RW);
	cr_assert_eq(mkdir(in_ws("ro"), 0755), 0);
	cr_assert_eq(mount(in_ws("sub"), in_ws("ro"), NULL, MS_BIND, NULL), 0, "%s",
	             strerror(errno));
	cr_assert_eq(mount(NULL, in_ws("ro"), NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL), 0,
	             "%s", strerror(errno));
	ok_result("try:\n    open('ro/new.txt', 'w')\nexcept OSError as e:\n"
	          "    r = [e.errno, 'is mounted read-only, or is another' in str(e),\n"
	          "         'without --workspace-write' in str(e)]\n"
	          "open('rw.txt', 'w').write('x')\nr",
	          "[30,true,false]");
	cr_assert_str_eq(slurp(in_ws("rw.txt")), "x");
	cr_assert_null(slurp(in_ws("sub/new.txt")));
	umount2(in_ws("ro"), MNT_DETACH);
	no_hidden_files();
	e2e_stop();
}

/* A name a call chose reaches the server's log (the file not written) with its control
 * characters escaped: a newline in it made the rest of the name a line of its own, which
 * could pass for one of the server's (a forged error). */
Test(ws_write, a_name_in_the_log_cannot_forge_a_line)
{
	static const char name[] = "race\nsafepy: error: forged\xe2\x80\xae.txt";
	json_object *r;
	int64_t id;

	start(RW);
	id = mcpc_call_async(&e2e_srv,
	                     "import os, time\n"
	                     "open('race\\nsafepy: error: forged\\u202e.txt', 'x').write('A')\n"
	                     "t = time.time()\n"
	                     "while not os.path.exists('go.txt') and time.time() - t < 20:\n"
	                     "    time.sleep(0.02)\n'done'",
	                     NULL);
	cr_assert_gt(id, 0);
	for (int i = 0; i < 1000 && !hidden_write_there(); i++)
		usleep(10000);
	cr_assert(hidden_write_there(), "the call never opened its file");
	put_file(in_ws(name), "B");
	put_file(in_ws("go.txt"), "");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 30000));
	cr_assert_not_null(r);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws(name)), "B");
	cr_assert(strstr(e2e_log(), "race\\x0asafepy: error: forged\\xe2\\x80\\xae.txt was made "
	                            "by another call meanwhile"),
	          "%s", e2e_log());
	cr_assert_null(strstr(e2e_log(), "\nsafepy: error: forged"), "%s", e2e_log());
	cr_assert_null(strstr(e2e_log(), "\xe2\x80\xae"), "%s", e2e_log());
	no_hidden_files();
	e2e_stop();
}

/* Names and text beyond ASCII: the interpreter runs in UTF-8 mode, whatever locale the server
 * started in (under the C locale a file named données.csv could not be opened, and text with
 * an 'é' could not be written to a file: UnicodeEncodeError). */
Test(ws_write, names_and_text_beyond_ascii)
{
	start(RW);
	put_file(in_ws("donn\xc3\xa9"
	               "es.csv"),
	         "caf\xc3\xa9,1\n");
	ok_result(
	    "import os, csv\n"
	    "rows = list(csv.reader(open('donn\xc3\xa9"
	    "es.csv')))\n"
	    "open('r\xc3\xa9sum\xc3\xa9.txt', 'w').write('\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac')\n"
	    "os.rename('r\xc3\xa9sum\xc3\xa9.txt', 'cv-\xc3\xa9.txt')\n"
	    "[rows, sorted(n for n in os.listdir('.') if not n.isascii()),\n"
	    " open('cv-\xc3\xa9.txt').read()]",
	    "[[[\"caf\xc3\xa9\",\"1\"]],[\"cv-\xc3\xa9.txt\",\"donn\xc3\xa9"
	    "es.csv\"],"
	    "\"\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\"]");
	cr_assert_str_eq(slurp(in_ws("cv-\xc3\xa9.txt")), "\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac");
	no_hidden_files();
	e2e_stop();
}

/* A call that raises an ordinary exception keeps what it wrote, as it keeps its state. */
Test(ws_write, a_call_that_raises_keeps_its_files)
{
	json_object *r;

	start(RW);
	r = e2e_expect_error("open('kept.txt', 'w').write('kept')\n"
	                     "raise ValueError('after writing')",
	                     "ValueError");
	cr_assert_str_eq(slurp(in_ws("kept.txt")), "kept");
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")),
	                 "[{\"path\":\"kept.txt\",\"bytes\":4}]");
	e2e_stop();
}

/* Ways a call is stopped (with --timeout 2 --memory 256M --max-output 1K), and the status each
 * answers. */
static const struct {
	const char *tail, *status;
} stops[] = {
    {"while True:\n    pass", "timeout"},
    {"x = bytearray(2 << 30)", "memory_limit"},
    {"print('y' * 4000000)", "output_limit"},
};

/* A call that fails otherwise leaves no file behind and no file changed. */
Test(ws_write, a_failed_call_leaves_nothing)
{
	json_object *r;

	start(
	    ARGS("--workspace-write", "--timeout", "2", "--memory", "256M", "--max-output", "1K"));
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		const char *code = e2e_fmt("open('t%zu.txt', 'w').write('lost')\n"
		                           "with open('data.csv', 'w') as f:\n"
		                           "    f.write('changed')\n"
		                           "with open('nums.txt', 'a') as f:\n"
		                           "    f.write('changed')\n"
		                           "%s",
		                           i, stops[i].tail);
		r = e2e_expect_status(code, NULL, stops[i].status);
		cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")), "[]", "%s",
		                 mcpc_json(r));
		cr_assert_null(slurp(in_ws(e2e_fmt("t%zu.txt", i))), "%s", stops[i].status);
		cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
		cr_assert_str_eq(slurp(in_ws("nums.txt")), "1 2\n3 4\n");
		no_hidden_files();
	}
	outside_unchanged();
	e2e_stop();
}

Test(ws_write, a_cancelled_call_leaves_nothing)
{
	int64_t id;

	start(RW);
	id = mcpc_call_async(&e2e_srv,
	                     "open('c.txt', 'w').write('lost')\n"
	                     "import time\n"
	                     "time.sleep(30)",
	                     NULL);
	usleep(500000);
	e2e_cancel(id);
	cr_assert(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000)));
	usleep(300000);
	cr_assert_null(slurp(in_ws("c.txt")));
	no_hidden_files();
	e2e_stop();
}

/* A session's files follow its calls; files left open are closed when a call ends (what they
 * buffered is written) and a later use says so; the working directory stays the workspace. */
Test(ws_write, a_session_keeps_files_and_closes_them_between_calls)
{
	json_object *r;

	start(ARGS("--workspace-write", "--timeout", "2"));
	e2e_ok("f = open('log.txt', 'w')\n"
	       "f.write('one ')\n"
	       "import os\n"
	       "here = os.getcwd()");
	cr_assert_str_eq(slurp(in_ws("log.txt")), "one ");
	r = e2e_expect_error("f.write('two')", "ValueError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "closed when the call that opened them ends"),
	          "%s", mcpc_json(r));
	ok_result("with open('log.txt', 'a') as g:\n"
	          "    g.write('two')\n"
	          "[open('log.txt').read(), here == os.getcwd(), f.closed]",
	          "[\"one two\",true,true]");
	/* A call of the session that times out changes no file: the session and its files are
	 * as they were, and its answer says the files are not kept. */
	r = e2e_expect_status("open('log.txt', 'w').write('gone')\n"
	                      "while True:\n"
	                      "    pass",
	                      NULL, "timeout");
	cr_assert(
	    strstr(mcpc_err_str(r, "message"), "Nothing it changed in the workspace was kept"),
	    "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("log.txt")), "one two");
	ok_result("open('log.txt').read()", "\"one two\"");
	no_hidden_files();
	e2e_stop();
}

/* An object of an earlier call that reads its file later (zipfile.ZipFile), or a binary file's
 * readline and seek, failed with CPython's bare "seek of closed file" or "readline of closed
 * file": only "I/O operation on closed file." said why. Each message of a closed file says it now, also when a library raised its own error
 * from it; a file opened again in this call reads as before. */
Test(ws_write, every_use_of_a_file_closed_with_its_call_says_why)
{
	static const char *const uses[] = {"b.readline()", "b.seek(0)", "b.read(1)",
	                                   "zf.read('a.txt')",
	                                   "try:\n    b.peek()\nexcept ValueError as e:\n"
	                                   "    raise KeyError('lib') from e"};
	json_object *r;

	start(ARGS("--workspace-write", "--timeout", "5"));
	e2e_ok("import zipfile\n"
	       "with zipfile.ZipFile('z.zip', 'w') as w:\n"
	       "    w.writestr('a.txt', 'hi')");
	e2e_ok("zf = zipfile.ZipFile('z.zip')\n"
	       "b = open('data.csv', 'rb')\n"
	       "b.readline()");
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++) {
		r = e2e_call(uses[i], NULL);
		cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "traceback"),
		                 "closed file. Files of the workspace are "
		                 "closed when the call that opened "
		                 "them ends"),
		          "%s: %s", uses[i], mcpc_json(r));
	}
	ok_result("[zipfile.ZipFile('z.zip').read('a.txt').decode(), open('data.csv', "
	          "'rb').readline().decode()]",
	          "[\"hi\",\"a,b\\n\"]");
	e2e_stop();
}

/* A notebook's habit: an image, an .npz or an Excel file opened by name in one call and used
 * in the next. Each reads its file later (pixels, another frame, an array, a sheet), and the
 * file closed with its call: the next call failed with "seek of closed file". The file's bytes
 * are kept in memory at the end of the call that opened it: the next call reads them as the
 * file, with the values written (a zipfile.ZipFile of the code's still says its file closed). */
Test(ws_write, lazily_read_files_serve_the_sessions_next_call)
{
	json_object *r;

	start(ARGS("--workspace-write", "--imports", "data"));
	e2e_ok("import numpy as np, pandas as pd, zipfile\n"
	       "from PIL import Image\n"
	       "a = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)\n"
	       "Image.fromarray(a).save('img.png')\n"
	       "Image.fromarray(a).save('img.jpg', quality=95)\n"
	       "frames = [Image.fromarray(np.full((3, 5), v, np.uint8)) for v in (10, 200)]\n"
	       "frames[0].save('anim.gif', save_all=True, append_images=frames[1:])\n"
	       "np.savez('arrs.npz', a=np.arange(3), b=np.eye(2))\n"
	       "with pd.ExcelWriter('book.xlsx') as w:\n"
	       "    pd.DataFrame({'x': [1, 2]}).to_excel(w, sheet_name='s1', index=False)\n"
	       "    pd.DataFrame({'y': [3, 4, 5]}).to_excel(w, sheet_name='s2', index=False)");
	e2e_ok(
	    "im, jpg, gif = Image.open('img.png'), Image.open('img.jpg'), Image.open('anim.gif')\n"
	    "z, xl = np.load('arrs.npz'), pd.ExcelFile('book.xlsx')\n"
	    "zf = zipfile.ZipFile('arrs.npz')\n"
	    "[im.size, gif.n_frames, z.files, xl.sheet_names]");
	ok_result(
	    "gif.seek(1)\n"
	    "[int(np.asarray(im).sum()), im.resize((2, 2)).size, jpg.size, np.asarray(jpg).shape,\n"
	    " int(np.asarray(gif.convert('L')).max()), z['b'].tolist(), z['a'].tolist(),\n"
	    " xl.parse('s2')['y'].tolist(), xl.parse('s1')['x'].tolist()]",
	    "[1128,[2,2],[4,4],[4,4,3],200,[[1.0,0.0],[0.0,1.0]],[0,1,2],[3,4,5],[1,2]]");
	r = e2e_expect_error("zf.read('a.npy')", "ValueError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "closed when the call that opened them ends"),
	          "%s", mcpc_json(r));
	no_hidden_files();
	e2e_stop();
}

Test(ws_write, the_files_quota_is_a_clear_error)
{
	json_object *r;
	int n = 0;

	start(RW);
	r = ok_result("import os\n"
	              "n, err = 0, None\n"
	              "try:\n"
	              "    for i in range(150):\n"
	              "        with open(f'f{i}.txt', 'w') as f:\n"
	              "            f.write('x')\n"
	              "        n += 1\n"
	              "except OSError as e:\n"
	              "    err = [e.errno, 'at most 100 files' in str(e)]\n"
	              "[n, err]",
	              "[100,[" E_EDQUOT ",true]]");
	cr_assert_eq(json_object_array_length(e2e_member(mcpc_structured(r), "files")), 100);
	for (int i = 0; i < 150; i++)
		n += slurp(in_ws(e2e_fmt("f%d.txt", i))) != NULL;
	cr_assert_eq(n, 100);
	no_hidden_files();
	e2e_stop();
}

/* Is path a directory (not a link to one)? */
static int is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* os.mkdir, os.makedirs and Path.mkdir make directories in the workspace, and files go into
 * them in the same call; a directory is never made over anything, outside, or with set-ID
 * bits; a call that fails takes its directories back, unless another call's file is in one. */
Test(ws_write, directories_are_made_and_follow_their_call)
{
	json_object *r;
	struct stat st;
	int64_t slow, slower;

	start(ARGS("--workspace-write", "--timeout", "3"));
	r = ok_result("import os, pathlib\n" TRY_EACH "os.makedirs('out/a/b')\n"
	              "os.makedirs('out/a/b', exist_ok=True)\n"
	              "open('out/a/b/x.txt', 'w').write('deep')\n"
	              "pathlib.Path('p/q').mkdir(parents=True)\n"
	              "pathlib.Path('p/q/r.csv').write_text('1,2')\n"
	              "os.mkdir('m/', 0o7777)\n"
	              "os.mkdir('closed', 0)\n"
	              "open('f.txt', 'w').write('f')\n"
	              "[sorted(os.listdir('out/a/b')), os.path.isdir('p/q'),\n"
	              " sorted((d, sorted(ds), sorted(fs)) for d, ds, fs in os.walk('p')),\n"
	              " attempt(os.mkdir, 'out'), attempt(os.mkdir, 'f.txt'),\n"
	              " attempt(os.mkdir, 'data.csv'), attempt(os.mkdir, 'none/x'),\n"
	              " attempt(os.mkdir, '.')]",
	              "[[\"x.txt\"],true,[[\"p\",[\"q\"],[]],[\"p/q\",[],[\"r.csv\"]]],"
	              "[\"FileExistsError\",17,false],[\"FileExistsError\",17,false],"
	              "[\"FileExistsError\",17,false],[\"FileNotFoundError\",2,false],"
	              "[\"FileExistsError\",17,false]]");
	cr_assert_str_eq(slurp(in_ws("out/a/b/x.txt")), "deep");
	cr_assert_str_eq(slurp(in_ws("p/q/r.csv")), "1,2");
	cr_assert_str_eq(slurp(in_ws("f.txt")), "f");
	cr_assert_eq(lstat(in_ws("m"), &st), 0);
	cr_assert(S_ISDIR(st.st_mode) && (st.st_mode & 07000) == 0, "mode %o",
	          (unsigned)st.st_mode);
	/* A directory is made its owner's to use (made with mode 0, no later call could enter,
	 * list or change it): the mode's other bits are kept. */
	cr_assert_eq(lstat(in_ws("closed"), &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700, "mode %o", (unsigned)st.st_mode);
	ok_result("import os\nopen('closed/in.txt', 'w').write('in')\nos.listdir('closed')",
	          "[\"in.txt\"]");
	/* A call that fails takes back its directories and what it wrote in them. */
	r = e2e_expect_status("import os\n"
	                      "os.makedirs('t/u/v')\n"
	                      "open('t/u/v/lost.txt', 'w').write('lost')\n"
	                      "os.mkdir('out/a/new')\n"
	                      "while True:\n"
	                      "    pass",
	                      NULL, "timeout");
	cr_assert(!is_dir(in_ws("t")) && !is_dir(in_ws("out/a/new")), "%s", mcpc_json(r));
	cr_assert(is_dir(in_ws("out/a/b")));
	/* ... but not one another call put a file in meanwhile. */
	slow = mcpc_call_async(&e2e_srv,
	                       "import os, time\n"
	                       "os.mkdir('shared')\n"
	                       "time.sleep(1.5)\n"
	                       "while True:\n"
	                       "    pass",
	                       "{\"session\":\"new\"}");
	usleep(700000);
	ok_result("open('shared/b.txt', 'w').write('b')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("shared/b.txt")), "b");
	/* ... nor its mode and times, which the failed call changed after the other call's file
	 * came: they are as they were before its chmod and utime. */
	{
		struct stat made, after;

		slow = mcpc_call_async(&e2e_srv,
		                       "import os, time\n"
		                       "os.mkdir('kept')\n"
		                       "while not os.path.exists('go'):\n"
		                       "    time.sleep(0.05)\n"
		                       "os.chmod('kept', 0o700)\n"
		                       "os.utime('kept', (0, 0))\n"
		                       "while True:\n"
		                       "    pass",
		                       "{\"session\":\"new\"}");
		for (int i = 0; i < 200 && !is_dir(in_ws("kept")); i++)
			usleep(20000);
		ok_result("open('kept/b.txt', 'w').write('b')\n1", "1");
		cr_assert_eq(lstat(in_ws("kept"), &made), 0);
		cr_assert_neq(made.st_mode & 0777, 0700, "mode %o", (unsigned)made.st_mode);
		put_file(in_ws("go"), "");
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
		cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
		cr_assert_eq(lstat(in_ws("kept"), &after), 0);
		cr_assert_str_eq(slurp(in_ws("kept/b.txt")), "b");
		cr_assert_eq(after.st_mode, made.st_mode, "mode %o, made %o",
		             (unsigned)after.st_mode, (unsigned)made.st_mode);
		cr_assert(after.st_mtim.tv_sec == made.st_mtim.tv_sec &&
		              after.st_mtim.tv_nsec == made.st_mtim.tv_nsec,
		          "mtime %lld, before the failed call's utime %lld",
		          (long long)after.st_mtim.tv_sec, (long long)made.st_mtim.tv_sec);
		cr_assert_eq(unlink(in_ws("go")), 0);
	}
	/* ... and one whose only content when it ended was another call's, pending: it goes
	 * when that call fails too. */
	slow = mcpc_call_async(&e2e_srv, "import os\nos.mkdir('orphan')\nwhile True:\n    pass",
	                       "{\"session\":\"new\"}");
	usleep(700000);
	slower = mcpc_call_async(&e2e_srv,
	                         "import os\nopen('orphan/f.txt', 'w').write('f')\n"
	                         "os.makedirs('orphan/e/g')\nwhile True:\n    pass",
	                         "{\"session\":\"new\"}");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert(is_dir(in_ws("orphan/e/g")), "the other call's directories went with the first");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slower, 10000));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert(!is_dir(in_ws("orphan")), "a directory of two failed calls was left");
	/* Bounded: 256 directories a call. */
	r = ok_result("import os\n"
	              "n, err = 0, None\n"
	              "try:\n"
	              "    for i in range(300):\n"
	              "        os.mkdir(f'd{i}')\n"
	              "        n += 1\n"
	              "except OSError as e:\n"
	              "    err = [e.errno, 'at most 256 directories' in str(e)]\n"
	              "[n, err]",
	              "[256,[" E_EDQUOT ",true]]");
	cr_assert(is_dir(in_ws("d255")) && !is_dir(in_ws("d256")));
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
	/* Without --workspace-write, none. */
	ws_fini();
	start(NULL);
	ok_result("import os\n" TRY_EACH "[attempt(os.mkdir, 'ro'), attempt(os.makedirs, 'ro/x')]",
	          "[[\"PermissionError\",30,true],[\"PermissionError\",30,true]]");
	cr_assert(!is_dir(in_ws("ro")));
	e2e_stop();
}

/* os.remove, os.rename, os.replace, os.rmdir and pathlib's unlink, rename, replace and rmdir:
 * the call sees each change at once, as on disk (a removed file is gone, a renamed one is there
 * by its new name with its content, a file the call wrote moves with its name: written to a
 * temporary name then moved over the real one, as careful code writes); the disk changes when
 * the call commits. A directory is not renamed; a read-only file is neither removed nor
 * replaced; a directory whose files the call removed can be removed. */
Test(ws_write, files_are_removed_and_renamed)
{
	json_object *r;
	struct stat was, now;

	start(RW);
	put_file(in_ws("a.txt"), "A");
	put_file(in_ws("b.txt"), "B");
	put_file(in_ws("ro.txt"), "RO");
	put_file(in_ws("log.txt"), "one\n");
	cr_assert_eq(chmod(in_ws("ro.txt"), 0444), 0);
	cr_assert_eq(mkdir(in_ws("empty"), 0755), 0);
	cr_assert_eq(mkdir(in_ws("full"), 0755), 0);
	put_file(in_ws("full/f1"), "1");
	put_file(in_ws("full/f2"), "2");
	cr_assert_eq(stat(in_ws("a.txt"), &was), 0);
	r = ok_result(
	    "import os, pathlib\n" TRY_EACH "os.remove('data.csv')\n"
	    "os.rename('nums.txt', 'sub/n.txt')\n"
	    "os.replace('a.txt', 'b.txt')\n"
	    "with open('out.tmp', 'w') as f:\n"
	    "    f.write('written')\n"
	    "os.replace('out.tmp', 'out.csv')\n"
	    "p = pathlib.Path('gone.txt')\n"
	    "p.write_text('x')\n"
	    "p.unlink()\n"
	    "pathlib.Path('sub/n.txt').rename('sub/m.txt')\n"
	    "os.rename('log.txt', 'log2.txt')\n"
	    "with open('log2.txt', 'a') as f:\n"
	    "    f.write('two\\n')\n"
	    "os.mkdir('made')\n"
	    "os.rmdir('made')\n"
	    "pathlib.Path('empty').rmdir()\n"
	    "for f in os.listdir('full'):\n"
	    "    os.remove('full/' + f)\n"
	    "os.rmdir('full')\n"
	    "[sorted(os.listdir('.')), sorted(os.listdir('sub')),\n"
	    " open('b.txt').read(), open('sub/m.txt').read(), open('out.csv').read(),\n"
	    " open('log2.txt').read(), os.path.exists('data.csv'), os.path.isdir('full'),\n"
	    " attempt(os.remove, 'data.csv'), attempt(open, 'a.txt'),\n"
	    " attempt(os.stat, 'nums.txt'), attempt(os.listdir, 'empty'),\n"
	    " attempt(os.remove, 'sub'), attempt(os.rename, 'sub', 'sub2'),\n"
	    " attempt(os.rmdir, 'sub'), attempt(os.rename, 'b.txt', 'sub'),\n"
	    " attempt(os.remove, 'ro.txt'), attempt(os.replace, 'b.txt', 'ro.txt'),\n"
	    " attempt(os.remove, '../secret.txt'), attempt(os.unlink, '/etc/passwd'),\n"
	    " attempt(os.rename, 'b.txt', '../b.txt'), attempt(os.rmdir, '.'),\n"
	    " attempt(open, 'full/new.txt', 'w')]",
	    "[[\"b.txt\",\"log2.txt\",\"out.csv\",\"ro.txt\",\"sub\"],[\"m.txt\",\"x.json\"],"
	    "\"A\",\"1 2\\n3 4\\n\",\"written\",\"one\\ntwo\\n\",false,false,"
	    "[\"FileNotFoundError\",2,false],[\"FileNotFoundError\",2,false],"
	    "[\"FileNotFoundError\",2,false],[\"FileNotFoundError\",2,false],"
	    "[\"IsADirectoryError\",21,false],[\"OSError\",18,false],"
	    "[\"OSError\",39,false],[\"IsADirectoryError\",21,false],"
	    "[\"PermissionError\",1,false],[\"PermissionError\",1,false],"
	    "[\"PermissionError\",13,true],[\"PermissionError\",13,true],"
	    "[\"PermissionError\",13,true],[\"OSError\",22,false],"
	    "[\"FileNotFoundError\",2,false]]");
	/* The answer names what the call wrote, renamed files by their new names. */
	for (size_t i = 0; i < 4; i++) {
		static const char *const written[] = {"\"out.csv\"", "\"log2.txt\"", "\"b.txt\"",
		                                      "\"sub\\/m.txt\""};
		const char *files = mcpc_json(e2e_member(mcpc_structured(r), "files"));
		cr_assert(strstr(files, written[i]), "%s not in %s", written[i], files);
	}
	cr_assert_null(slurp(in_ws("data.csv")));
	cr_assert_null(slurp(in_ws("nums.txt")));
	cr_assert_null(slurp(in_ws("a.txt")));
	cr_assert_null(slurp(in_ws("gone.txt")));
	cr_assert_null(slurp(in_ws("out.tmp")));
	cr_assert_null(slurp(in_ws("log.txt")));
	cr_assert_str_eq(slurp(in_ws("b.txt")), "A");
	cr_assert_str_eq(slurp(in_ws("sub/m.txt")), "1 2\n3 4\n");
	cr_assert_str_eq(slurp(in_ws("out.csv")), "written");
	cr_assert_str_eq(slurp(in_ws("log2.txt")), "one\ntwo\n");
	cr_assert_str_eq(slurp(in_ws("ro.txt")), "RO");
	cr_assert(!is_dir(in_ws("made")) && !is_dir(in_ws("empty")) && !is_dir(in_ws("full")) &&
	          is_dir(in_ws("sub")));
	/* A rename keeps the file itself, as rename(2) does. */
	cr_assert_eq(stat(in_ws("b.txt"), &now), 0);
	cr_assert(now.st_ino == was.st_ino, "b.txt is not the file a.txt was");
	no_hidden_files();
	outside_unchanged();
	/* Renamed back and forth, swapped through a third name: each file as it should be. */
	r = ok_result("import os\n"
	              "os.rename('b.txt', 'c.txt')\n"
	              "os.rename('c.txt', 'b.txt')\n"
	              "os.rename('out.csv', 't')\n"
	              "os.rename('log2.txt', 'out.csv')\n"
	              "os.rename('t', 'log2.txt')\n"
	              "[open('b.txt').read(), open('out.csv').read(), open('log2.txt').read()]",
	              "[\"A\",\"one\\ntwo\\n\",\"written\"]");
	cr_assert_str_eq(slurp(in_ws("b.txt")), "A");
	cr_assert_str_eq(slurp(in_ws("out.csv")), "one\ntwo\n");
	cr_assert_str_eq(slurp(in_ws("log2.txt")), "written");
	cr_assert_null(slurp(in_ws("c.txt")));
	cr_assert_null(slurp(in_ws("t")));
	no_hidden_files();
	/* Bounded: 256 removals a call. */
	for (int i = 0; i < 260; i++)
		put_file(in_ws(e2e_fmt("r%d", i)), "r");
	r = ok_result("import os\n"
	              "n, err = 0, None\n"
	              "try:\n"
	              "    for i in range(260):\n"
	              "        os.remove(f'r{i}')\n"
	              "        n += 1\n"
	              "except OSError as e:\n"
	              "    err = [e.errno, 'remove at most 256' in str(e)]\n"
	              "[n, err]",
	              "[256,[" E_EDQUOT ",true]]");
	cr_assert_null(slurp(in_ws("r255")));
	cr_assert_str_eq(slurp(in_ws("r256")), "r");
	e2e_stop();
	/* Without --workspace-write, none. */
	ws_fini();
	start(NULL);
	ok_result("import os\n" TRY_EACH "[attempt(os.remove, 'data.csv'), "
	          "attempt(os.rename, 'data.csv', 'd.csv'), attempt(os.rmdir, 'sub')]",
	          "[[\"PermissionError\",30,true],[\"PermissionError\",30,true],"
	          "[\"PermissionError\",30,true]]");
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	cr_assert(is_dir(in_ws("sub")));
	e2e_stop();
}

/* What a commit meets that the call did not expect loses nothing: a rename whose new name a
 * directory took meanwhile keeps its file under the old name (said on stderr), and one whose
 * file another call renamed away is not made; a name the call removed and wrote again ("x"
 * too), or a directory it removed and wrote a file of that name, holds the new file; a
 * rename onto a second name of the same file changes nothing; a removal whose name another
 * call removed and then wrote again removes nothing. (A red team lost files each way.) */
Test(ws_write, commits_keep_what_they_cannot_replace)
{
	json_object *r;
	struct stat st;
	int64_t slow, other;

	start(ARGS("--workspace-write", "--timeout", "10"));
	put_file(in_ws("a.txt"), "A");
	put_file(in_ws("b.txt"), "B");
	put_file(in_ws("c.txt"), "C");
	cr_assert_eq(link(in_ws("c.txt"), in_ws("clink.txt")), 0);
	cr_assert_eq(mkdir(in_ws("empty"), 0755), 0);
	cr_assert_eq(mkdir(in_ws("gone"), 0755), 0);
	/* In one call. */
	r = ok_result("import os\n" TRY_EACH "os.rmdir('empty')\n"
	              "os.rename('a.txt', 'empty')\n"
	              "os.remove('b.txt')\n"
	              "open('b.txt', 'x').write('new b')\n"
	              "os.rmdir('gone')\n"
	              "[attempt(os.rename, 'c.txt', 'gone/c.txt'), attempt(open, 'gone/n', 'w')]",
	              "[[\"FileNotFoundError\",2,false],[\"FileNotFoundError\",2,false]]");
	cr_assert_str_eq(slurp(in_ws("empty")), "A");
	cr_assert_null(slurp(in_ws("a.txt")));
	cr_assert_str_eq(slurp(in_ws("b.txt")), "new b");
	cr_assert(!is_dir(in_ws("gone")));
	/* A directory emptied and removed, a file renamed there and another into that one's
	 * place; a directory emptied, removed, and a file written there; directories removed in
	 * order while one of them is made again. */
	cr_assert_eq(mkdir(in_ws("d1"), 0755), 0);
	put_file(in_ws("d1/x"), "X");
	cr_assert_eq(mkdir(in_ws("d2"), 0755), 0);
	put_file(in_ws("d2/y"), "Y");
	cr_assert_eq(mkdir(in_ws("n"), 0755), 0);
	cr_assert_eq(mkdir(in_ws("n/e"), 0755), 0);
	cr_assert_eq(mkdir(in_ws("e2"), 0755), 0);
	put_file(in_ws("p.txt"), "P");
	put_file(in_ws("q.txt"), "Q");
	ok_result("import os\n"
	          "os.remove('d1/x')\nos.rmdir('d1')\nos.rename('p.txt', 'd1')\nos.rename('q.txt', "
	          "'p.txt')\n"
	          "os.remove('d2/y')\nos.rmdir('d2')\nopen('d2', 'w').write('file')\n"
	          "os.rmdir('e2')\nos.rmdir('n/e')\nos.rmdir('n')\nos.mkdir('e2')\n1",
	          "1");
	cr_assert_str_eq(slurp(in_ws("d1")), "P");
	cr_assert_str_eq(slurp(in_ws("p.txt")), "Q");
	cr_assert_null(slurp(in_ws("q.txt")));
	cr_assert_str_eq(slurp(in_ws("d2")), "file");
	cr_assert(is_dir(in_ws("e2")) && !is_dir(in_ws("n")));
	ok_result(
	    "import os\nos.rename('c.txt', 'x.txt')\nos.rename('x.txt', 'clink.txt')\n"
	    "sorted(os.listdir('.'))",
	    "[\"b.txt\",\"clink.txt\",\"d1\",\"d2\",\"data.csv\",\"e2\",\"empty\",\"nums.txt\","
	    "\"p.txt\",\"sub\",\"x.txt\"]");
	cr_assert_null(slurp(in_ws("c.txt")));
	cr_assert_str_eq(slurp(in_ws("x.txt")), "C");
	cr_assert_str_eq(slurp(in_ws("clink.txt")), "C");
	/* ... and a second name on disk renamed onto the call's rename of the first. */
	ok_result("import os\nos.rename('x.txt', 'w.txt')\nos.rename('clink.txt', 'w.txt')\n"
	          "[os.path.exists('x.txt'), os.path.exists('clink.txt')]",
	          "[false,true]");
	cr_assert_null(slurp(in_ws("x.txt")));
	cr_assert_str_eq(slurp(in_ws("w.txt")), "C");
	cr_assert_str_eq(slurp(in_ws("clink.txt")), "C");
	no_hidden_files();
	/* A rename whose new name another call made a directory meanwhile. */
	slow =
	    mcpc_call_async(&e2e_srv, "import os, time\nos.rename('b.txt', 'x')\ntime.sleep(1.5)",
	                    "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("import os\nos.mkdir('x')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"),
	                 "no file of this call was written, removed or renamed: x is a directory"),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("b.txt")), "new b");
	cr_assert(is_dir(in_ws("x")));
	/* A rename whose file another call renamed away: neither name changes. */
	slow = mcpc_call_async(&e2e_srv,
	                       "import os, time\nos.rename('b.txt', 'y.txt')\ntime.sleep(1.5)",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("import os\nos.rename('b.txt', 'z.txt')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"),
	                 "no file of this call was written, removed or renamed: b.txt was changed"),
	          "%s", mcpc_json(r));
	cr_assert_null(slurp(in_ws("y.txt")));
	cr_assert_str_eq(slurp(in_ws("z.txt")), "new b");
	/* A swap through a third name, while another call appends to one of the files: none of
	 * the swap is made (half of it lost the other call's bytes). */
	put_file(in_ws("s1"), "S1");
	put_file(in_ws("s2"), "S2");
	slow = mcpc_call_async(&e2e_srv,
	                       "import os, time\nos.rename('s1', 't')\nos.rename('s2', 's1')\n"
	                       "os.rename('t', 's2')\ntime.sleep(1.5)",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("open('s1', 'a').write('+precious')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("s1")), "S1+precious");
	cr_assert_str_eq(slurp(in_ws("s2")), "S2");
	/* A file copied to a new name, then removed, while another call makes a directory at the
	 * new name (or a file, for a copy made with 'x'): nothing changes (the source went and
	 * its copy could not be placed). */
	for (int x = 0; x < 2; x++) {
		put_file(in_ws("src.txt"), "SRC");
		slow = mcpc_call_async(
		    &e2e_srv,
		    e2e_fmt("import os, time\nopen('cp%d', '%s').write(open('src.txt').read())\n"
		            "os.remove('src.txt')\ntime.sleep(1.5)",
		            x, x ? "x" : "w"),
		    "{\"session\":\"new\"}");
		usleep(600000);
		ok_result(x ? "open('cp1', 'w').write('other')\n1"
		            : "import os\nos.mkdir('cp0')\n1",
		          "1");
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
		cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
		cr_assert(strstr(mcpc_sc_str(r, "stderr"), "no file of this call was written"),
		          "%s", mcpc_json(r));
		cr_assert_str_eq(slurp(in_ws("src.txt")), "SRC");
	}
	cr_assert(is_dir(in_ws("cp0")));
	cr_assert_str_eq(slurp(in_ws("cp1")), "other");
	/* ... and one that removes nothing but empties the file it copied: nothing changes. */
	put_file(in_ws("src.txt"), "SRC");
	slow = mcpc_call_async(&e2e_srv,
	                       "import time\nopen('cp2', 'w').write(open('src.txt').read())\n"
	                       "open('src.txt', 'w').close()\ntime.sleep(1.5)",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("import os\nos.mkdir('cp2')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "no file of this call was written"), "%s",
	          mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("src.txt")), "SRC");
	/* Two calls that change one file in place ('a', 'r+', os.chmod): the first to commit
	 * wins, and the other changes nothing (its copy of the file as it was would have undone
	 * the first's change: both appends, or both edits, were answered and one was lost). */
	for (int k = 0; k < 3; k++) {
		static const char *const slow_code[] = {
		    "f = open('log.txt', 'a')\nf.write('from A\\n')\ntime.sleep(1.5)\nf.close()",
		    "f = open('log.txt', 'r+')\nf.write('A')\ntime.sleep(1.5)\nf.close()",
		    "os.chmod('log.txt', 0o600)\ntime.sleep(1.5)",
		};
		put_file(in_ws("log.txt"), "base\n");
		slow = mcpc_call_async(&e2e_srv, e2e_fmt("import os, time\n%s", slow_code[k]),
		                       "{\"session\":\"new\"}");
		usleep(600000);
		ok_result("f = open('log.txt', 'a')\nf.write('from B\\n')\nf.close()\n1", "1");
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
		cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
		cr_assert(
		    strstr(mcpc_sc_str(r, "stderr"),
		           "no file of this call was written, removed or renamed: log.txt was "
		           "changed by another call meanwhile"),
		    "%s", mcpc_json(r));
		cr_assert_str_eq(slurp(in_ws("log.txt")), "base\nfrom B\n");
		cr_assert_eq(stat(in_ws("log.txt"), &st), 0);
		cr_assert_eq(st.st_mode & 0777, 0644);
	}
	/* ... and when the file was not there yet: an append to a missing name made a new file,
	 * which replaced the one another call appended to meanwhile (both answered ok). */
	unlink(in_ws("new.log"));
	slow = mcpc_call_async(&e2e_srv,
	                       "import time\nopen('new.log', 'a').write('A\\n')\ntime.sleep(1.5)",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("open('new.log', 'a').write('B\\n')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"),
	                 "no file of this call was written, removed or renamed: new.log was made "
	                 "by another call meanwhile"),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("new.log")), "B\n");
	/* ... and the directories it made go, as a failed call's do (they stayed, empty, while
	 * its answer said nothing of it was kept). */
	put_file(in_ws("log.txt"), "base\n");
	slow = mcpc_call_async(&e2e_srv,
	                       "import os, time\nos.makedirs('made/deeper')\n"
	                       "open('made/deeper/f.txt', 'w').write('A')\n"
	                       "open('log.txt', 'a').write('A\\n')\ntime.sleep(1.5)",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("open('log.txt', 'a').write('B\\n')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "log.txt was changed by another call meanwhile"),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("log.txt")), "base\nB\n");
	cr_assert(!is_dir(in_ws("made")));
	/* ... also when the call renames the file after changing it (its old name's file was
	 * the other's by then), or renames it away after another call removed it. */
	for (int k = 0; k < 2; k++) {
		put_file(in_ws("log.txt"), "base\n");
		slow = mcpc_call_async(&e2e_srv,
		                       "import os, time\nopen('log.txt', 'a').write('A\\n')\n"
		                       "time.sleep(1.5)\nos.rename('log.txt', 'moved.txt')",
		                       "{\"session\":\"new\"}");
		usleep(600000);
		ok_result(k ? "import os\nos.remove('log.txt')\n1"
		            : "open('log.txt', 'a').write('B\\n')\n1",
		          "1");
		r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
		cr_assert(strstr(mcpc_sc_str(r, "stderr"), "no file of this call was written"),
		          "%s", mcpc_json(r));
		cr_assert_null(slurp(in_ws("moved.txt")));
		if (k)
			cr_assert_null(slurp(in_ws("log.txt")));
		else
			cr_assert_str_eq(slurp(in_ws("log.txt")), "base\nB\n");
	}
	/* ... but a rename another call made and did not commit changes nothing for it (the
	 * rename's hard link changed the file's ctime: the append was refused). */
	put_file(in_ws("log.txt"), "base\n");
	slow = mcpc_call_async(&e2e_srv,
	                       "import time\nopen('log.txt', 'a').write('B\\n')\ntime.sleep(1.5)",
	                       "{\"session\":\"new\"}");
	usleep(300000);
	other = mcpc_call_async(&e2e_srv,
	                        "import os, time\nos.rename('log.txt', 'y.txt')\n"
	                        "time.sleep(30)",
	                        "{\"session\":\"new\"}");
	usleep(500000);
	e2e_cancel(other);
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_null(strstr(mcpc_sc_str(r, "stderr"), "no file of this call"), "%s",
	               mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("log.txt")), "base\nB\n");
	cr_assert_null(slurp(in_ws("y.txt")));
	/* ... and one whose file another call removed meanwhile: it is not made again. */
	put_file(in_ws("log.txt"), "base\n");
	slow = mcpc_call_async(&e2e_srv,
	                       "import time\nf = open('log.txt', 'a')\nf.write('late')\n"
	                       "time.sleep(1.5)\nf.close()",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("import os\nos.remove('log.txt')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "log.txt was removed by another call"), "%s",
	          mcpc_json(r));
	cr_assert_null(slurp(in_ws("log.txt")));
	/* A directory a call made, removed by another call and made again by a third (the same
	 * inode number, had the first not held it): the first call neither changes nor, stopped,
	 * removes it. */
	slow = mcpc_call_async(&e2e_srv,
	                       "import os, time\nos.mkdir('held')\ntime.sleep(1.2)\n"
	                       "try:\n    os.chmod('held', 0o777)\nexcept OSError:\n    pass\n"
	                       "time.sleep(30)",
	                       "{\"session\":\"new\"}");
	usleep(400000);
	ok_result("import os\nos.rmdir('held')\n1", "1");
	ok_result("import os\nos.mkdir('held')\n1", "1");
	usleep(1500000);
	e2e_cancel(slow);
	cr_assert(e2e_hold(mcpc_request(&e2e_srv, "ping", NULL, 5000)));
	usleep(300000);
	cr_assert_eq(stat(in_ws("held"), &st), 0, "the other call's directory was removed");
	cr_assert_eq(st.st_mode & 0777, 0755);
	/* A directory removed by another call while this one removed it and made it again: it is
	 * made. */
	cr_assert_eq(mkdir(in_ws("twice"), 0755), 0);
	slow =
	    mcpc_call_async(&e2e_srv,
	                    "import os, time\nos.rmdir('twice')\ntime.sleep(1)\nos.mkdir('twice')\n"
	                    "time.sleep(0.5)",
	                    "{\"session\":\"new\"}");
	usleep(400000);
	ok_result("import os\nos.rmdir('twice')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(is_dir(in_ws("twice")), "%s", mcpc_json(r));
	/* A removal whose name another call removed, and a third wrote again. */
	slow = mcpc_call_async(&e2e_srv, "import os, time\nos.remove('z.txt')\ntime.sleep(2)",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result("import os\nos.remove('z.txt')\n1", "1");
	ok_result("open('z.txt', 'w').write('precious')\n1", "1");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("z.txt")), "precious");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A directory the call removed and then wrote a file in the place of is that file for the
 * call: os.rmdir of the name again says it is not a directory (the broker removed the disk's
 * directory a second time, and a mkdir after the file's removal said it made one that was not
 * there: V78b M1); removed, made again and written in, the directory and its file are there
 * after the commit. */
Test(ws_write, a_directory_replaced_by_a_file_is_that_file_for_the_call)
{
	struct stat st;

	start(ARGS("--workspace-write"));
	cr_assert_eq(mkdir(in_ws("d"), 0755), 0);
	e2e_expect_result(
	    "import os\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ok'\n"
	    "    except OSError as e:\n"
	    "        return type(e).__name__\n"
	    "r = [attempt(lambda: os.rmdir('d'))]\n"
	    "open('d', 'w').write('file')\n"
	    "r += [attempt(lambda: os.rmdir('d')), os.path.isfile('d')]\n"
	    "os.remove('d')\n"
	    "os.mkdir('d')\n"
	    "open('d/new.txt', 'w').write('x')\n"
	    "open('y.txt', 'w').write('y')\n"
	    "r + [os.path.isdir('d'), os.listdir('d'), attempt(lambda: os.rmdir('y.txt'))]",
	    "[\"ok\",\"NotADirectoryError\",true,true,[\"new.txt\"],"
	    "\"NotADirectoryError\"]");
	e2e_stop();
	cr_assert_eq(stat(in_ws("d/new.txt"), &st), 0);
	cr_assert(S_ISREG(st.st_mode));
}

/* Removals and renames change the disk only when the call commits: while it runs, other
 * calls see every name as it was, and a call that is stopped leaves everything as it was,
 * whatever it did after (a directory made where a file was removed, a directory removed and
 * made again, a file renamed over another and written). */
Test(ws_write, a_failed_call_changes_no_name)
{
	json_object *r;
	int64_t slow;

	start(
	    ARGS("--workspace-write", "--timeout", "2", "--memory", "256M", "--max-output", "1K"));
	put_file(in_ws("a.txt"), "A");
	put_file(in_ws("b.txt"), "B");
	cr_assert_eq(mkdir(in_ws("empty"), 0750), 0);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		const char *code = e2e_fmt("import os\n"
		                           "os.remove('data.csv')\n"
		                           "open('data.csv', 'w').write('new')\n"
		                           "os.makedirs('new/d')\n"
		                           "os.rename('nums.txt', 'new/d/n.txt')\n"
		                           "os.replace('a.txt', 'b.txt')\n"
		                           "open('b.txt', 'a').write('more')\n"
		                           "os.rename('sub/x.json', 'a.txt')\n"
		                           "open('w.txt', 'w').write('w')\n"
		                           "os.replace('w.txt', 'sub/x.json')\n"
		                           "os.rmdir('empty')\n"
		                           "os.mkdir('empty')\n"
		                           "os.rmdir('empty')\n"
		                           "%s",
		                           stops[i].tail);
		r = e2e_expect_status(code, NULL, stops[i].status);
		cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")), "[]", "%s",
		                 mcpc_json(r));
		cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n", "%s",
		                 stops[i].status);
		cr_assert_str_eq(slurp(in_ws("nums.txt")), "1 2\n3 4\n");
		cr_assert_str_eq(slurp(in_ws("a.txt")), "A");
		cr_assert_str_eq(slurp(in_ws("b.txt")), "B");
		cr_assert_str_eq(slurp(in_ws("sub/x.json")), "{\"k\": [1, 2]}\n");
		cr_assert_null(slurp(in_ws("w.txt")));
		cr_assert(is_dir(in_ws("empty")) && !is_dir(in_ws("new")), "%s", stops[i].status);
		no_hidden_files();
	}
	/* While a call that removed and renamed runs, another sees the files as they are. */
	slow = mcpc_call_async(&e2e_srv,
	                       "import os, time\n"
	                       "os.remove('a.txt')\n"
	                       "os.rename('b.txt', 'c.txt')\n"
	                       "os.rmdir('empty')\n"
	                       "time.sleep(1)\n"
	                       "while True:\n"
	                       "    pass",
	                       "{\"session\":\"new\"}");
	usleep(600000);
	ok_result(
	    "import os\n[open('a.txt').read(), open('b.txt').read(), os.path.exists('c.txt'), "
	    "os.path.isdir('empty')]",
	    "[\"A\",\"B\",false,true]");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, slow, 10000));
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("a.txt")), "A");
	cr_assert_str_eq(slurp(in_ws("b.txt")), "B");
	cr_assert(is_dir(in_ws("empty")));
	/* The next call sees them all, and may change them for good. */
	ok_result("import os\nos.remove('a.txt')\nos.rename('b.txt', 'c.txt')\n"
	          "sorted(os.listdir('.'))",
	          "[\"c.txt\",\"data.csv\",\"empty\",\"nums.txt\",\"sub\"]");
	cr_assert_null(slurp(in_ws("a.txt")));
	cr_assert_str_eq(slurp(in_ws("c.txt")), "B");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The supervisor keeps a call's directories and files by the names their parents give them
 * back (/proc/self/fd), which other calls' pending names are compared with: beneath a directory
 * whose full name is too long to read back (PATH_MAX), a directory or a file is refused.
 * Recorded by the spelling asked ("q/../q/..."), a failed call's directories were left for good
 * when another call had one pending beneath them. */
Test(ws_write, beneath_a_directory_too_deep_to_name_nothing_is_made)
{
	start(ARGS("--workspace-write"));
	ok_result("import os\n" TRY_EACH "left = 4095 - len(os.getcwd()) - 1\n"
	          "parts = ['q']\n"
	          "left -= 1\n"
	          "while left > 251:\n"
	          "    parts.append('a' * 250)\n"
	          "    left -= 251\n"
	          "parts.append('b' * (left - 1))\n"
	          "deep = '/'.join(parts)\n"
	          "os.makedirs(deep)\n"
	          "[len(os.getcwd()) + 1 + len(deep), attempt(os.mkdir, deep + '/e')[:2],\n"
	          " attempt(os.mkdir, 'q/../' + deep + '/e')[:2],\n"
	          " attempt(open, deep + '/f', 'w')[:2], os.path.isdir(deep)]",
	          "[4095,[\"OSError\",36],[\"OSError\",36],[\"OSError\",36],true]");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* Every request of a call walked up from its path's directory (the left-out cache is looked for
 * above it), uncharged: a call that made a tree 1950 directories deep cost the supervisor 4 ms
 * a stat, and another session's 300 stats took 7 s instead of 0.04. A path names at most 64
 * directories; deeper is ENAMETOOLONG, saying so. */
Test(ws_write, a_path_names_at_most_64_directories)
{
	start(RW);
	ok_result("import os\n" TRY_EACH "os.makedirs('/'.join(['d'] * 64))\n"
	          "r = attempt(os.makedirs, '/'.join(['e'] * 65))\n"
	          "try:\n"
	          "    os.stat('/'.join(['d'] * 64 + ['x']))\n"
	          "except OSError as e:\n"
	          "    r.append('at most 64 directories' in str(e))\n"
	          "[os.path.isdir('/'.join(['d'] * 64)), r[:2], r[-1], os.path.exists('e')]",
	          "[true,[\"OSError\",36],true,true]");
	no_hidden_files();
	e2e_stop();
}

/* The call is stopped over the bytes quota and none of the files named (NULL-terminated)
 * is written. */
static void stopped_over_quota(const char *code, const char *const *files)
{
	json_object *r = e2e_expect_status(code, NULL, "output_limit");

	cr_assert_str_eq(mcpc_err_str(r, "type"), "WorkspaceError");
	for (; *files; files++)
		cr_assert_null(slurp(in_ws(*files)), "%s was written", *files);
}

Test(ws_write, the_bytes_quota_stops_the_call_and_writes_nothing)
{
	json_object *r;

	start(RW);
	/* One file over the quota: RLIMIT_FSIZE cuts it one byte over, the call is refused. */
	r = e2e_expect_status("b = b'x' * (1 << 20)\n"
	                      "with open('big.bin', 'wb') as f:\n"
	                      "    for i in range(300):\n"
	                      "        f.write(b)",
	                      NULL, "output_limit");
	cr_assert_str_eq(mcpc_err_str(r, "type"), "WorkspaceError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "no file was written"), "%s", mcpc_json(r));
	cr_assert_null(slurp(in_ws("big.bin")));
	/* Files each under the limit, over it together: the watch stops the call. */
	stopped_over_quota("b = b'x' * (1 << 20)\n"
	                   "fs = [open(f'p{i}.bin', 'wb') for i in range(3)]\n"
	                   "for i in range(100):\n"
	                   "    for f in fs:\n"
	                   "        f.write(b)\n"
	                   "        f.flush()\n"
	                   "import time\n"
	                   "time.sleep(5)",
	                   ARGS("p0.bin", "p1.bin", "p2.bin"));
	/* A file opened again while an earlier handle writes on: both write one file, and what
	 * the earlier one writes after counts (a fresh hidden file for the second open left the
	 * first one's bytes uncounted: 100 + 100 counted of 300 written). */
	stopped_over_quota("b = b'x' * (1 << 20)\n"
	                   "p, q = open('p.bin', 'wb'), open('q.bin', 'wb')\n"
	                   "for f in (p, q):\n"
	                   "    for i in range(100):\n"
	                   "        f.write(b)\n"
	                   "    f.flush()\n"
	                   "again = open('q.bin', 'ab')\n"
	                   "for i in range(100):\n"
	                   "    q.write(b)\n"
	                   "q.flush()\n"
	                   "import time\n"
	                   "time.sleep(5)",
	                   ARGS("p.bin", "q.bin"));
	no_hidden_files();
	e2e_ok("1");
	e2e_stop();
}

/* A file the call wrote, then removed or replaced by a rename while it held it open, went from
 * the call's list of files while the worker could still write through its fd: those bytes stayed
 * on disk until the call ended and nothing counted them (six such files of 200 MiB: 1200 MiB on
 * disk, the call answered ok). The bytes of a dropped file the call was given to write count in
 * its quota until it ends: the watch stops the call, and nothing of it is kept. Files written
 * past their end (sparse: nothing on disk) keep the test quick. */
Test(ws_write, a_file_dropped_while_open_still_counts_in_the_quota)
{
	start(RW);
	stopped_over_quota("import os, time\n"
	                   "f = open('gone.bin', 'wb')\n"
	                   "os.remove('gone.bin')\n"
	                   "f.seek(150 << 20)\n"
	                   "f.write(b'x')\n"
	                   "f.flush()\n"
	                   "g = open('kept.bin', 'wb')\n"
	                   "g.seek(150 << 20)\n"
	                   "g.write(b'x')\n"
	                   "g.flush()\n"
	                   "time.sleep(5)",
	                   ARGS("kept.bin"));
	stopped_over_quota("import os, time\n"
	                   "f = open('old.bin', 'wb')\n"
	                   "open('new.bin', 'w').close()\n"
	                   "os.replace('new.bin', 'old.bin')\n"
	                   "f.seek(200 << 20)\n"
	                   "f.write(b'x')\n"
	                   "f.flush()\n"
	                   "g = open('more.bin', 'wb')\n"
	                   "g.seek(100 << 20)\n"
	                   "g.write(b'x')\n"
	                   "g.flush()\n"
	                   "time.sleep(5)",
	                   ARGS("old.bin", "more.bin"));
	/* Ordinary use: files written, closed and removed, within the quota, then one kept. */
	e2e_expect_result("import os\n"
	                  "for i in range(20):\n"
	                  "    with open('t.txt', 'w') as f:\n"
	                  "        f.write('x' * 1000)\n"
	                  "    os.remove('t.txt')\n"
	                  "with open('keep.txt', 'w') as f:\n"
	                  "    f.write('kept')\n"
	                  "[os.path.exists('t.txt'), sorted(os.listdir('.'))]",
	                  "[false,[\"data.csv\",\"keep.txt\",\"nums.txt\",\"sub\"]]");
	cr_assert_str_eq(slurp(in_ws("keep.txt")), "kept");
	no_hidden_files();
	e2e_stop();
}

/* os.environ['X'] = '1' (a script setting its libraries' options) raised PermissionError (the
 * sandbox refuses os.putenv): the mapping changes for the code's own reads, not the process's
 * environment. os.get_terminal_size() and sys.stdout.fileno() raised AttributeError, past the
 * fallbacks scripts write for them. */
Test(ws_read, os_environ_takes_the_codes_changes)
{
	start(NULL);
	e2e_expect_result("import os\n"
	                  "os.environ['OMP_NUM_THREADS'] = '1'\n"
	                  "os.environ.setdefault('SAFEPY_X', 'y')\n"
	                  "r = [os.environ['OMP_NUM_THREADS'], os.getenv('SAFEPY_X')]\n"
	                  "del os.environ['SAFEPY_X']\n"
	                  "r + [os.getenv('SAFEPY_X'), 'SAFEPY_X' in os.environ]",
	                  "[\"1\",\"y\",null,false]");
	/* No terminal, as when the output is piped: an OSError for the usual fallback, and no
	 * descriptor under sys.stdout (io.UnsupportedOperation, as an in-memory stream). */
	e2e_expect_result("import os, sys, io, shutil\n"
	                  "try:\n    os.get_terminal_size()\n    t = 'terminal'\n"
	                  "except OSError:\n    t = 'none'\n"
	                  "try:\n    sys.stdout.fileno()\n    f = 'fd'\n"
	                  "except io.UnsupportedOperation:\n    f = 'none'\n"
	                  "[t, f, shutil.get_terminal_size().columns]",
	                  "[\"none\",\"none\",80]");
	e2e_stop();
}

/* tempfile was refused. Its named files and directories are made in the workspace's working
 * directory through the workspace's own functions and removed as tempfile removes them (a
 * with block, close(), cleanup(), or the object dropped: those were kept as the call's files):
 * nothing is left, and what delete=False keeps stays. A
 * prefix, suffix or dir that points outside is refused as any path outside is; TemporaryFile
 * keeps its data in memory; mkstemp's descriptor is not given. */
Test(ws_write, tempfile_makes_its_files_in_the_workspace_and_removes_them)
{
	struct stat st;

	start(RW);
	ok_result(
	    "import tempfile, os\n"
	    "with tempfile.TemporaryDirectory() as d:\n"
	    "    with open(os.path.join(d, 'part.csv'), 'w') as f:\n"
	    "        f.write('a,b\\n1,2\\n')\n"
	    "    inside = [os.listdir(d), open(os.path.join(d, 'part.csv')).read(),\n"
	    "              os.path.dirname(d) == os.getcwd()]\n"
	    "with tempfile.NamedTemporaryFile('w+', suffix='.txt') as f:\n"
	    "    f.write('hello')\n"
	    "    f.flush()\n"
	    "    named = [open(f.name).read(), f.name.endswith('.txt'), os.path.exists(f.name)]\n"
	    "t = tempfile.TemporaryFile()\n"
	    "t.write(b'abc')\n"
	    "t.seek(0)\n"
	    "k = tempfile.NamedTemporaryFile(delete=False, prefix='kept_', suffix='.bin')\n"
	    "k.write(b'1')\n"
	    "k.close()\n"
	    "os.rename(k.name, 'kept.bin')\n"
	    "dropped = [tempfile.NamedTemporaryFile().name, tempfile.TemporaryDirectory().name]\n"
	    "g = tempfile.NamedTemporaryFile('w')\n"
	    "g.write('x')\n"
	    "dropped.append(g.name)\n"
	    "del g\n"
	    "[inside, named, os.path.exists(d), os.path.exists(f.name), t.read().decode(),\n"
	    " tempfile.gettempdir() == os.getcwd(), [os.path.exists(n) for n in dropped],\n"
	    " sorted(os.listdir('.'))]",
	    "[[[\"part.csv\"],\"a,b\\n1,2\\n\",true],[\"hello\",true,true],false,false,"
	    "\"abc\",true,[false,false,false],[\"data.csv\",\"kept.bin\",\"nums.txt\",\"sub\"]]");
	cr_assert_str_eq(slurp(in_ws("kept.bin")), "1");
	ok_result(
	    TRY_EACH
	    "import tempfile\n"
	    "[attempt(tempfile.mkdtemp, prefix='../'), attempt(tempfile.mkdtemp, dir='/tmp'),\n"
	    " attempt(tempfile.NamedTemporaryFile, prefix='../../x'),\n"
	    " attempt(tempfile.NamedTemporaryFile, dir='/etc'),\n"
	    " attempt(tempfile.TemporaryDirectory, suffix='/../../y'), attempt(tempfile.mkstemp)]",
	    "[[\"PermissionError\",13,true],[\"PermissionError\",13,true],"
	    "[\"PermissionError\",13,true],[\"PermissionError\",13,true],"
	    "[\"PermissionError\",13,true],[\"PermissionError\",1,false]]");
	cr_assert_eq(stat(in_ws("sub"), &st), 0);
	outside_unchanged();
	no_hidden_files();
	e2e_stop();
}

/* A file a call leaves open is closed when it ends: a logging.FileHandler set up in one call
 * (basicConfig(filename=...) too) lost every later call's lines, each call answering ok. The
 * handler opens its file again, appending (its mode 'w' truncated once, when it was made). */
Test(ws_write, a_log_file_set_up_in_one_call_keeps_the_later_calls_lines)
{
	json_object *r;

	start(RW);
	ok_result("import logging\n"
	          "lg = logging.getLogger('job')\n"
	          "lg.setLevel(logging.INFO)\n"
	          "h = logging.FileHandler('job.log', mode='w')\n"
	          "h.setFormatter(logging.Formatter('%(levelname)s %(message)s'))\n"
	          "lg.addHandler(h)\n"
	          "lg.info('one')\n"
	          "1",
	          "1");
	r = ok_result("lg.info('two')\nlg.warning('three')\n2", "2");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "", "%s", mcpc_json(r));
	ok_result("lg.info('four')\n3", "3");
	cr_assert_str_eq(slurp(in_ws("job.log")), "INFO one\nINFO two\nWARNING three\nINFO four\n");
	no_hidden_files();
	e2e_stop();
}

/* A script's os.system('...') and os.chdir('sub') were bare "has no attribute" errors: they say
 * why (one process; the working directory stays the workspace). */
Test(ws_read, os_says_why_processes_and_chdir_are_not_there)
{
	start(NULL);
	e2e_expect_result(
	    "import os\n"
	    "def why(name):\n"
	    "    try:\n"
	    "        getattr(os, name)\n"
	    "    except AttributeError as e:\n"
	    "        return str(e).partition(': ')[2][:32]\n"
	    "[why('system'), why('popen'), why('chdir'), why('nope'), hasattr(os, 'fork')]",
	    "[\"the code runs in one process, an\",\"the code runs in one process, an\","
	    "\"the working directory stays the \",\"\",false]");
	e2e_stop();
}

/* A path outside the workspace is refused with a PermissionError that is a FileNotFoundError
 * too, as every file is without a workspace: `except FileNotFoundError:` fallbacks go on, and
 * the message says to name files relative to the workspace. A workspace file named by its
 * absolute path is read. */
Test(ws_read, a_path_outside_is_refused_as_a_missing_file)
{
	char code[PATH_MAX + 1024];

	start(NULL);
	snprintf(
	    code, sizeof(code),
	    "def attempt(p):\n"
	    "    try:\n"
	    "        return open(p).read()[:3]\n"
	    "    except FileNotFoundError as e:\n"
	    "        return [isinstance(e, PermissionError), 'relative to it' in str(e)]\n"
	    "import pathlib\n"
	    "class P:\n"
	    "    asked = 0\n"
	    "    def __init__(self, p): self.p = p\n"
	    "    def __fspath__(self):\n"
	    "        P.asked += 1\n"
	    "        return self.p\n"
	    "[attempt('/home/user/sales.csv'), attempt('/etc/hostname'), attempt('nope.txt'),\n"
	    " attempt('%s/data.csv'), attempt('../x.txt'), attempt(pathlib.Path('/srv/x')),\n"
	    " attempt('%s/../x.txt'), attempt(P('/srv/x')), attempt(P('../x.txt')), P.asked]",
	    ws, ws);
	/* (the code's path is asked for once per open: the error does not ask it again) */
	e2e_expect_result(code, "[[true,true],[true,true],[false,false],\"a,b\",[true,true],"
	                        "[true,true],[true,true],[true,true],[true,true],2]");
	e2e_stop();
}

/* procfs and sysfs files are regular files that describe the process that opens them: with
 * the read-only workspace "/", /proc/self was the supervisor's (its environment, its memory
 * through /proc/self/mem) and /proc/PID/mem the other sessions' workers' (V78b H1). The
 * kernel's own file systems are refused; the machine's files are read as before. */
Test(ws_read, the_kernel_s_own_file_systems_are_out_of_reach)
{
	e2e_start(ARGS("--workspace", "/"));
	e2e_expect_result("import os\n"
	                  "def attempt(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "        return 'read'\n"
	                  "    except OSError as e:\n"
	                  "        return type(e).__name__\n"
	                  "[attempt(lambda: open('/proc/self/environ', 'rb').read()),\n"
	                  " attempt(lambda: open('/proc/self/mem', 'rb')),\n"
	                  " attempt(lambda: open('/proc/1/status').read()),\n"
	                  " attempt(lambda: os.listdir('/proc')),\n"
	                  " attempt(lambda: os.listdir('/sys/kernel')),\n"
	                  " attempt(lambda: open('/etc/os-release').read()),\n"
	                  " attempt(lambda: os.listdir('/etc'))]",
	                  "[\"PermissionError\",\"PermissionError\",\"PermissionError\","
	                  "\"PermissionError\",\"PermissionError\",\"read\",\"read\"]");
	e2e_stop();
}

/* The workspace moved while the server runs: its files are still read through the directory
 * the server holds, and its writes are refused with a message that says why (they failed as
 * "File name too long"); moved back, they work again. */
Test(ws_write, a_workspace_moved_away_says_so)
{
	char moved[PATH_MAX + 8];

	start(RW);
	snprintf(moved, sizeof(moved), "%s/moved", base);
	cr_assert_eq(rename(ws, moved), 0);
	e2e_expect_result("import os\n"
	                  "r = [open('nums.txt').read()]\n"
	                  "for f in (lambda: open('n.txt', 'w'), lambda: os.mkdir('d')):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "    except OSError as e:\n"
	                  "        r.append([e.errno, 'was moved or removed' in str(e)])\n"
	                  "r",
	                  "[\"1 2\\n3 4\\n\",[116,true],[116,true]]");
	cr_assert_eq(rename(moved, ws), 0);
	e2e_expect_result("open('n.txt', 'w').write('x')", "1");
	cr_assert_str_eq(slurp(in_ws("n.txt")), "x");
	no_hidden_files();
	e2e_stop();
}

/* Two opens of one file in a call are one file, as on disk: what each handle writes lands in
 * it at that handle's offset (a second open got a hidden file of its own, and what the first
 * wrote after it was lost). */
Test(ws_write, a_file_opened_twice_is_one_file)
{
	start(RW);
	ok_result("f = open('log.txt', 'w')\nf.write('header\\n')\nf.flush()\n"
	          "g = open('log.txt', 'a')\ng.write('from g\\n')\ng.flush()\n"
	          "f.write('more from f\\n')\nf.close()\ng.close()\n"
	          "with open('log.txt', 'r+') as h:\n    h.write('H')\n"
	          "open('log.txt').read()",
	          "\"Header\\nmore from f\\n\"");
	cr_assert_str_eq(slurp(in_ws("log.txt")), "Header\nmore from f\n");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

Test(ws_write, the_hidden_files_of_writes_are_out_of_reach)
{
	start(RW);
	ok_result("import os\n" TRY_EACH "f = open('w.txt', 'w')\n"
	          "f.write('x')\n"
	          "f.flush()\n"
	          "names = os.listdir('.')\n"
	          "hidden = [n for n in names if n.startswith('.safepy')]\n"
	          "[sorted(names), hidden, attempt(open, '.safepy-tmp-1-1-000000000000'),\n"
	          " attempt(open, 'sub/.safepy-tmp-x', 'w'), attempt(os.stat, '.safepy-tmp-')]",
	          "[[\"data.csv\",\"nums.txt\",\"sub\",\"w.txt\"],[],[\"PermissionError\",13,true],"
	          "[\"PermissionError\",13,true],[\"PermissionError\",13,true]]");
	no_hidden_files();
	e2e_stop();
}

/* A file whose close fails at the call's end is named on stderr: the name was the code's own
 * path object, whose __repr__ ran while CPython held sys.stderr borrowed, replaced it, and
 * had the message written to the freed stream (V83a H1). Only a str or bytes name is shown;
 * the code's stream gets the message, and the call and the server go on. */
Test(ws_write, a_file_not_written_at_the_end_is_named_without_the_code_s_repr)
{
	json_object *r;

	start(RW);
	r = e2e_ok("import sys, io\n"
	           "class Stream:\n"
	           "    def __init__(self): self.got = []\n"
	           "    def write(self, s):\n        self.got.append(s)\n        return len(s)\n"
	           "    def flush(self): pass\n"
	           "class Name:\n"
	           "    def __fspath__(self): return 'uaf.bin'\n"
	           "    def __repr__(self):\n"
	           "        sys.stderr = io.StringIO()\n        return \"'uaf.bin'\"\n"
	           "sys.stderr = Stream()\n"
	           "f = open(Name(), 'wb')\nf.write(b'x' * 100)\n"
	           "open(f.fileno(), 'rb').close()\n"
	           "g = open('plain.bin', 'wb')\ng.write(b'y' * 100)\n"
	           "open(g.fileno(), 'rb').close()\n"
	           "'ok'");
	e2e_assert_result(r, "the call", "\"ok\"");
	e2e_expect_result("1 + 1", "2");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A finalizer deferred past the call's closing of its files (sqlite3's end of the call hashed
 * a connection class of the code's, whose metaclass's __hash__ dropped an object with a
 * __del__) ran after it and opened a file that stayed open into the next call, whose own file
 * then took its fd: writes to the first went into the second (V82b L2). The files such
 * finalizers open end with the call too. */
Test(ws_write, a_file_a_late_finalizer_opens_ends_with_its_call)
{
	json_object *r;

	start(RW);
	ok_result("import sqlite3\n"
	          "class D:\n"
	          "    def __del__(self):\n"
	          "        global late\n"
	          "        late = open('late.txt', 'w')\n"
	          "        late.write('call 1\\n')\n"
	          "box = []\n"
	          "class Meta(type):\n"
	          "    def __hash__(cls):\n"
	          "        d = box.pop() if box else None\n"
	          "        return 12345\n"
	          "    def __eq__(cls, other):\n        return cls is other\n"
	          "class MyConn(sqlite3.Connection, metaclass=Meta):\n    pass\n"
	          "con = sqlite3.connect('db.sqlite', factory=MyConn)\n"
	          "con.execute('create table t(x)')\n"
	          "box.append(D())\n"
	          "'ended'",
	          "\"ended\"");
	r = e2e_call("f2 = open('victim.txt', 'w')\n"
	             "try:\n    late.write('into the victim?\\n')\n"
	             "    late.flush()\nexcept ValueError as e:\n    err = str(e)[:30]\n"
	             "f2.write('victim\\n')\nf2.close()\n"
	             "[late.closed, err]",
	             NULL);
	e2e_assert_result(r, "the second call", "[true,\"I/O operation on closed file.\"]");
	cr_assert_str_eq(slurp(in_ws("victim.txt")), "victim\n");
	cr_assert_str_eq(slurp(in_ws("late.txt")), "call 1\n");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A durable write (f.flush(); os.fsync(f.fileno())) is an idiom of code that keeps state in
 * files: os.fsync of a workspace file the call has open returns (the file is the call's copy
 * until the call's files are moved into place); of any other fd it is EBADF. */
Test(ws_write, os_fsync_of_a_workspace_file_returns)
{
	start(RW);
	ok_result("import os, json\n"
	          "with open('state.json', 'w') as f:\n"
	          "    json.dump({'a': 1}, f); f.flush(); os.fsync(f.fileno())\n"
	          "with open('state.json') as f:\n    os.fsync(f)\n"
	          "try:\n    os.fsync(1)\nexcept OSError as e:\n    err = e.errno\n"
	          "g = open('state.json')\nfd = g.fileno()\ng.close()\n"
	          "try:\n    os.fsync(fd)\nexcept OSError as e:\n    closed = e.errno\n"
	          "[open('state.json').read(), err, closed]",
	          "[\"{\\\"a\\\": 1}\",9,9]");
	cr_assert_str_eq(slurp(in_ws("state.json")), "{\"a\": 1}");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* Pipeline(memory='folder') caches its steps in the workspace: the cache's key hashes the
 * call's arguments, and joblib named a module's built-in function by its __self__, which the
 * sandbox keeps from every caller (the second fit failed: AttributeError, half a cache left). A
 * second fit takes the steps from the cache. */
Test(ws_write, a_pipeline_caches_its_steps_in_a_folder)
{
	start(ARGS("--workspace-write", "--imports", "data"));
	e2e_expect_result(
	    "from sklearn.datasets import load_iris\n"
	    "from sklearn.pipeline import make_pipeline\n"
	    "from sklearn.preprocessing import StandardScaler\n"
	    "from sklearn.linear_model import LogisticRegression\n"
	    "X, y = load_iris(return_X_y=True)\n"
	    "p = make_pipeline(StandardScaler(), LogisticRegression(), memory='cache')\n"
	    "a = p.fit(X, y).score(X, y)\n"
	    "b = make_pipeline(StandardScaler(), LogisticRegression(),\n"
	    "                  memory='cache').fit(X, y).score(X, y)\n"
	    "[a == b, a > 0.9]",
	    "[true,true]");
	e2e_stop();
	cr_assert(is_dir(in_ws("cache")));
}

Test(ws_write, numpy_and_pandas_write_files)
{
	json_object *r;

	start(ARGS("--workspace-write", "--allow-import", "numpy", "--allow-import", "pandas"));
	r = e2e_call("import numpy as np\n"
	             "a = np.arange(6.0).reshape(2, 3)\n"
	             "np.save('a.npy', a)\n"
	             "np.savetxt('a.txt', a)\n"
	             "np.savez('z.npz', a=a)\n"
	             "[float(np.load('a.npy').sum()), np.loadtxt('a.txt').shape[1],\n"
	             " float(np.load('z.npz')['a'].sum())]",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") != 0 &&
	    strstr(mcpc_err_str(r, "message"), "No module named"))
		cr_skip_test("numpy cannot be imported in a worker here: %s",
		             mcpc_err_str(r, "message"));
	e2e_assert_result(r, "numpy", "[15.0,3,15.0]");
	cr_assert_not_null(slurp(in_ws("a.npy")));
	r = e2e_call("import pandas as pd\n"
	             "pd.DataFrame({'x': [1, 2]}).to_csv('df.csv', index=False)\n"
	             "pd.read_csv('df.csv')['x'].sum()",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") != 0 &&
	    strstr(mcpc_err_str(r, "message"), "No module named"))
		cr_skip_test("pandas imports a module lazily that a worker cannot import on this "
		             "branch: %s",
		             mcpc_err_str(r, "message"));
	e2e_assert_result(r, "pandas", "3");
	cr_assert_str_eq(slurp(in_ws("df.csv")), "x\n1\n2\n");
	no_hidden_files();
	e2e_stop();
}

/* numpy's tofile of 16 MiB or more asks the kernel to reserve the file's space first
 * (fallocate): the seccomp filter killed the worker for it, and the call was rolled back as a
 * sandbox violation. fallocate now fails with EOPNOTSUPP, as on a file system without it, and
 * numpy writes the file all the same; a smaller array, appended to a file it holds, too. */
Test(ws_write, numpy_writes_a_file_of_16_mib_or_more)
{
	json_object *r;
	struct stat st;

	start(ARGS("--workspace-write", "--allow-import", "numpy"));
	r = e2e_call("import numpy as np\n"
	             "a = np.arange(2_200_000, dtype=np.float64)\n"
	             "a.tofile('big.bin')\n"
	             "with open('big.bin', 'ab') as f:\n"
	             "    a[:4].tofile(f)\n"
	             "b = np.fromfile('big.bin')\n"
	             "[b.shape[0], bool((b[:2_200_000] == a).all()), b[-4:].tolist()]",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") != 0 &&
	    strstr(mcpc_err_str(r, "message"), "No module named"))
		cr_skip_test("numpy cannot be imported in a worker here: %s",
		             mcpc_err_str(r, "message"));
	e2e_assert_result(r, "tofile", "[2200004,true,[0.0,1.0,2.0,3.0]]");
	cr_assert_eq(stat(in_ws("big.bin"), &st), 0);
	cr_assert_eq(st.st_size, 2200004LL * 8);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* read_csv(memory_map=True) mapped the file with mmap, which the sandbox refuses ("mmap.__new__
 * is not allowed"): the option only changes how pandas reads the same bytes, and the file is
 * now read as without it. A mapping asked for directly stays refused, saying what to do. */
Test(ws_read, pandas_memory_map_reads_the_file)
{
	json_object *r;

	start(ARGS("--allow-import", "pandas", "--allow-import", "numpy"));
	r = e2e_call("import pandas as pd\n"
	             "a = pd.read_csv('data.csv', memory_map=True)\n"
	             "[a.equals(pd.read_csv('data.csv')), a.shape[0], int(a['b'].sum()),\n"
	             " pd.read_csv(open('data.csv'), memory_map=True).equals(a)]",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") != 0 &&
	    strstr(mcpc_err_str(r, "message"), "No module named"))
		cr_skip_test("pandas cannot be imported in a worker here: %s",
		             mcpc_err_str(r, "message"));
	e2e_assert_result(r, "memory_map", "[true,2,6,true]");
	r = e2e_expect_error("import numpy as np\nnp.memmap('data.csv', mode='r')",
	                     "PermissionError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "read them whole instead"), "%s",
	          mcpc_json(r));
	e2e_stop();
}

/* A workspace file by its name is an SQLite database: read into memory, written back through
 * the workspace when a transaction commits (commit(), a with block); a later call, and the
 * host, read what was committed. A call that is stopped writes nothing. */
Test(ws_write, sqlite_database_files_are_read_and_written)
{
	char head[16] = {0};
	FILE *f;

	start(ARGS("--workspace-write"));
	ok_result("import sqlite3\n"
	          "c = sqlite3.connect('shop.db')\n"
	          "c.execute('create table items(name text, price real)')\n"
	          "c.executemany('insert into items values (?, ?)', [('a', 1.5), ('b', 2.0)])\n"
	          "c.commit()\n"
	          "with sqlite3.connect('shop.db') as d:\n"
	          "    d.execute('insert into items values (?, ?)', ('c', 4.25))\n"
	          "sqlite3.connect('shop.db').execute('select count(*), sum(price) from "
	          "items').fetchone()",
	          "[3,7.75]");
	f = fopen(in_ws("shop.db"), "rb");
	cr_assert_not_null(f, "the database was not written");
	cr_assert_eq(fread(head, 1, 16, f), 16);
	fclose(f);
	cr_assert_eq(memcmp(head, "SQLite format 3", 16), 0, "not an SQLite file");
	/* Uncommitted changes are not written; a stopped call writes nothing. */
	ok_result("import sqlite3\n"
	          "c = sqlite3.connect('shop.db')\n"
	          "c.execute('delete from items')\n"
	          "c.close()\n"
	          "sqlite3.connect('shop.db').execute('select count(*) from items').fetchone()[0]",
	          "3");
	cr_assert_str_eq(mcpc_status(e2e_call("import sqlite3\n"
	                                      "c = sqlite3.connect('shop.db')\n"
	                                      "c.execute('delete from items')\n"
	                                      "c.commit()\n"
	                                      "while True:\n"
	                                      "    pass",
	                                      "{\"timeout_seconds\":1}")),
	                 "timeout");
	ok_result("import sqlite3\n"
	          "sqlite3.connect('shop.db').execute('select name from items order by "
	          "name').fetchall()",
	          "[[\"a\"],[\"b\"],[\"c\"]]");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A commit made in SQL was dropped: executescript("BEGIN; ...; COMMIT;"), execute("COMMIT"),
 * autocommit (isolation_level=None) and a database made only with executescript answered ok
 * and wrote nothing (only commit() and a with block wrote the file). Every commit of the
 * database in memory now reaches the file: when the connection closes, another connection
 * uses the file, or the call ends (a connection dropped without close()); a loop of
 * statements committed on their own writes the file once (not once per statement, which
 * would open the file more often than a call may). */
Test(ws_write, sqlite_commits_made_in_sql_are_written)
{
	start(ARGS("--workspace-write"));
	ok_result("import sqlite3\n"
	          "c = sqlite3.connect('shop.db')\n"
	          "c.executescript('BEGIN; CREATE TABLE notes(body TEXT);\\n'\n"
	          "                \"INSERT INTO notes VALUES ('script'); COMMIT;\")\n"
	          "c.close()\n"
	          "c = sqlite3.connect('shop.db', isolation_level=None)\n"
	          "c.execute(\"INSERT INTO notes VALUES ('autocommit')\")\n"
	          "c.close()\n"
	          "c = sqlite3.connect('shop.db')\n"
	          "c.execute(\"INSERT INTO notes VALUES ('sql commit')\")\n"
	          "c.execute('COMMIT')\n"
	          "c.close()\n"
	          "sqlite3.connect('new.db').executescript('CREATE TABLE t(x); INSERT INTO t "
	          "VALUES (1);')\n"
	          "c = sqlite3.connect('loop.db', isolation_level=None)\n"
	          "c.execute('CREATE TABLE t(x)')\n"
	          "for i in range(1500):\n"
	          "    c.execute('INSERT INTO t VALUES (?)', (i,))\n"
	          "d = sqlite3.connect('loop.db')\n"
	          "d.execute('select count(*) from t').fetchone()[0]",
	          "1500");
	cr_assert(slurp(in_ws("new.db")) && strcmp(slurp(in_ws("new.db")), "SQLite format 3") == 0,
	          "the database made with executescript was not written");
	ok_result("import sqlite3\n"
	          "[[r[0] for r in sqlite3.connect('shop.db').execute('select body from notes')],\n"
	          " sqlite3.connect('new.db').execute('select x from t').fetchall(),\n"
	          " sqlite3.connect('loop.db').execute('select count(*), sum(x) from "
	          "t').fetchone()]",
	          "[[\"script\",\"autocommit\",\"sql commit\"],[[1]],[1500,1124250]]");
	/* What is not committed stays unwritten; ordinary commit() still writes at once. */
	ok_result(
	    "import sqlite3\n"
	    "c = sqlite3.connect('shop.db')\n"
	    "c.execute(\"INSERT INTO notes VALUES ('uncommitted')\")\n"
	    "c.close()\n"
	    "c = sqlite3.connect('shop.db')\n"
	    "c.execute(\"INSERT INTO notes VALUES ('commit()')\")\n"
	    "c.commit()\n"
	    "[r[0] for r in sqlite3.connect('shop.db').execute('select body from notes')][3:]",
	    "[\"commit()\"]");
	no_hidden_files();
	e2e_stop();
}

/* A call that wrote a database and is still running, while another session's call commits a
 * change to the same file: the other's commit is kept and this call's write is not (the first
 * call to commit wins, as with any file changed in place), and its stderr says so. The file
 * was written with 'w' before: the other's committed row was lost with no word. */
Test(ws_write, sqlite_does_not_overwrite_another_calls_commit)
{
	json_object *r;
	int64_t id;

	start(RW);
	ok_result("import sqlite3\nc = sqlite3.connect('x.db')\nc.execute('create table t(v)')\n"
	          "c.commit()\nc.close()\n1",
	          "1");
	id = mcpc_call_async(
	    &e2e_srv,
	    "import os, sqlite3, time\n"
	    "c = sqlite3.connect('x.db')\nc.execute(\"insert into t values ('A')\")\n"
	    "c.commit()\nc.close()\nt = time.time()\n"
	    "while not os.path.exists('go.txt') and time.time() - t < 20:\n"
	    "    time.sleep(0.02)\n'done'",
	    NULL);
	cr_assert_gt(id, 0);
	for (int i = 0; i < 1000 && !hidden_write_there(); i++)
		usleep(10000);
	cr_assert(hidden_write_there(), "the call never wrote its database");
	r = e2e_hold(
	    mcpc_call(&e2e_srv,
	              "import sqlite3\nc = sqlite3.connect('x.db')\n"
	              "seen = c.execute('select count(*) from t').fetchone()[0]\n"
	              "c.execute(\"insert into t values ('B')\")\nc.commit()\nc.close()\nseen",
	              "{\"session\":\"new\"}", 30000));
	e2e_assert_result(r, "other session", "0");
	put_file(in_ws("go.txt"), "");
	r = e2e_hold(mcpc_wait_int_id(&e2e_srv, id, 30000));
	cr_assert_not_null(r);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "no file of this call was written, removed or "
	                                           "renamed: x.db was changed by another call "
	                                           "meanwhile"),
	          "%s", mcpc_json(r));
	ok_result("import sqlite3\n"
	          "[r[0] for r in sqlite3.connect('x.db').execute('select v from t')]",
	          "[\"B\"]");
	no_hidden_files();
	e2e_stop();
}

/* Two connections to one file lost each other's updates: each was a copy taken at connect(),
 * so in one call b did not see a's commit and b's commit overwrote it; across calls a
 * connection kept in the session overwrote a table another connection wrote in a later call,
 * silently. Now a connection sees what the others committed (it reads the file again when
 * another connection wrote it, or when it changed since the last call, if it has nothing of
 * its own left to write), and a connection whose file was written by someone else since it read
 * it does not overwrite it: its write is refused with an OperationalError that says so. */
Test(ws_write, sqlite_connections_to_one_file_keep_each_others_commits)
{
	char other[512];

	start(ARGS("--workspace-write"));
	ok_result("import sqlite3\n"
	          "s = sqlite3.connect('shop.db')\n"
	          "s.execute('create table products(name text)')\n"
	          "s.executemany('insert into products values (?)', [('Widget',), ('Gadget',)])\n"
	          "s.commit()\n"
	          "a = sqlite3.connect('shop.db')\n"
	          "b = sqlite3.connect('shop.db')\n"
	          "a.execute(\"insert into products values ('NewThing')\")\n"
	          "a.commit()\n"
	          "seen = b.execute('select count(*) from products').fetchone()[0]\n"
	          "b.execute(\"insert into products values ('Other')\")\n"
	          "b.commit()\n"
	          "[seen, sqlite3.connect('shop.db').execute('select group_concat(name) from "
	          "products').fetchone()[0]]",
	          "[3,\"Widget,Gadget,NewThing,Other\"]");
	/* Across calls: con is kept in the session, another connection adds a table. */
	ok_result("import sqlite3\ncon = sqlite3.connect('shop.db')\n"
	          "con.execute('select count(*) from products').fetchone()[0]",
	          "4");
	ok_result("import sqlite3\n"
	          "with sqlite3.connect('shop.db') as c2:\n"
	          "    c2.execute('create table imported(k)')\n"
	          "    c2.execute('insert into imported values (1)')\n"
	          "1",
	          "1");
	ok_result(
	    "con.execute(\"insert into products values ('Gizmo')\")\n"
	    "con.commit()\n"
	    "[r[0] for r in con.execute(\"select name from sqlite_master where type='table'\")]",
	    "[\"products\",\"imported\"]");
	ok_result("import sqlite3\n"
	          "c = sqlite3.connect('shop.db')\n"
	          "[c.execute('select count(*) from imported').fetchone()[0],\n"
	          " c.execute('select count(*) from products').fetchone()[0]]",
	          "[1,5]");
	/* The file replaced from outside between calls: a kept connection reads it again. */
	ok_result("import sqlite3\n"
	          "o = sqlite3.connect('other.db')\n"
	          "o.execute('create table outside(x)')\n"
	          "o.commit()\n"
	          "1",
	          "1");
	snprintf(other, sizeof(other), "%s", in_ws("other.db"));
	cr_assert_eq(rename(other, in_ws("shop.db")), 0);
	ok_result(
	    "[r[0] for r in con.execute(\"select name from sqlite_master where type='table'\")]",
	    "[\"outside\"]");
	/* A transaction left open while another connection wrote the file, and a file written
	 * by other means: the commit is refused, the file keeps the other's change. */
	ok_result("con.execute('insert into outside values (1)')\n"
	          "b = sqlite3.connect('shop.db')\n"
	          "b.execute('insert into outside values (2)')\n"
	          "b.commit()\n"
	          "try:\n"
	          "    con.commit()\n"
	          "    r = 'written'\n"
	          "except sqlite3.OperationalError as e:\n"
	          "    r = str(e)\n"
	          "d = sqlite3.connect('shop.db')\n"
	          "d.execute('insert into outside values (3)')\n"
	          "keep = open('shop.db', 'rb').read()\n"
	          "open('shop.db', 'wb').write(keep + bytes(4096))\n"
	          "try:\n"
	          "    d.commit()\n"
	          "    r2 = 'written'\n"
	          "except sqlite3.OperationalError as e:\n"
	          "    r2 = 'refused'\n"
	          "[r, r2, sqlite3.connect('shop.db').execute('select x from outside').fetchall()]",
	          "[\"'shop.db' changed since this connection read it (another connection or call "
	          "wrote it): the changes committed on this connection are not written to it; "
	          "connect again and make them again\",\"refused\",[[2]]]");
	no_hidden_files();
	e2e_stop();
}

/* Connection.backup() into a connection to a workspace file said it worked and wrote no file;
 * VACUUM INTO a workspace file failed with "authorization denied"; a read-only URI
 * (file:x.db?mode=ro) was refused. Now the backup writes the file at once, VACUUM INTO makes
 * the file (a compacted copy; not over a file that has data, as SQLite), and mode=ro opens
 * the file read-only (writes fail as SQLite's do; the pragma that would lift it is refused). */
Test(ws_write, sqlite_backup_vacuum_into_and_read_only_uri)
{
	start(ARGS("--workspace-write"));
	ok_result("import sqlite3, os\n"
	          "src = sqlite3.connect('shop.db')\n"
	          "src.execute('create table products(name text)')\n"
	          "src.executemany('insert into products values (?)', [('a',), ('b',)])\n"
	          "src.commit()\n"
	          "dst = sqlite3.connect('shop_backup.db')\n"
	          "src.backup(dst)\n"
	          "dst.close()\n"
	          "src.execute(\"vacuum into 'shop_vacuum.db'\")\n"
	          "def attempt(f):\n"
	          "    try:\n"
	          "        return f()\n"
	          "    except sqlite3.Error as e:\n"
	          "        return str(e)\n"
	          "ro = sqlite3.connect('file:shop.db?mode=ro', uri=True)\n"
	          "[os.path.exists('shop_backup.db'), os.path.exists('shop_vacuum.db'),\n"
	          " attempt(lambda: src.execute(\"vacuum into 'shop_vacuum.db'\")),\n"
	          " ro.execute('select count(*) from products').fetchone()[0],\n"
	          " attempt(lambda: ro.execute(\"insert into products values ('c')\")),\n"
	          " attempt(lambda: ro.execute('pragma query_only = 0')),\n"
	          " attempt(lambda: sqlite3.connect('file:missing.db?mode=ro', uri=True))]",
	          "[true,true,\"output file already exists\",2,"
	          "\"attempt to write a readonly database\",\"not authorized\","
	          "\"unable to open database file\"]");
	ok_result("import sqlite3\n"
	          "[sqlite3.connect(f).execute('select group_concat(name) from "
	          "products').fetchone()[0]\n"
	          " for f in ('shop_backup.db', 'shop_vacuum.db', 'shop.db')]",
	          "[\"a,b\",\"a,b\",\"a,b\"]");
	no_hidden_files();
	e2e_stop();
}

/* Excel workbooks, as pandas and openpyxl write them (openpyxl spools each sheet through a
 * temporary file, which a worker has not: in memory) and read them. */
Test(ws_write, excel_workbooks_are_written_and_read)
{
	json_object *r;
	char *xlsx;

	start(ARGS("--workspace-write", "--imports", "data"));
	r = e2e_call(
	    "import pandas as pd\n"
	    "with pd.ExcelWriter('book.xlsx') as w:\n"
	    "    pd.DataFrame({'x': [1, 2], 'y': ['a', 'b']}).to_excel(w, 'one', index=False)\n"
	    "    pd.DataFrame({'z': [3.5]}).to_excel(w, 'two', index=False)\n"
	    "pd.DataFrame({'k': [7]}).to_excel('single.xlsx', index=False)\n"
	    "1",
	    NULL);
	if (strstr(mcpc_json(r), "is not installed"))
		cr_skip_test(
		    "the data packages are not installed (scripts/setup installs them): %s",
		    mcpc_err_str(r, "message"));
	e2e_assert_result(r, "written", "1");
	xlsx = slurp(in_ws("book.xlsx"));
	cr_assert(xlsx && strncmp(xlsx, "PK\x03\x04", 4) == 0, "not a zip");
	e2e_expect_result(
	    "import pandas as pd, openpyxl\n"
	    "sheets = pd.read_excel('book.xlsx', sheet_name=None)\n"
	    "wb = openpyxl.load_workbook('single.xlsx')\n"
	    "[sorted(sheets), sheets['one'].to_dict('list'), float(sheets['two'].z[0]),\n"
	    " [c.value for c in wb.active[2]]]",
	    "[[\"one\",\"two\"],{\"x\":[1,2],\"y\":[\"a\",\"b\"]},3.5,[7]]");
	/* A write-only workbook streams its rows (to a temporary file, in openpyxl: refused in a
	 * worker); an HTML table is read from a workspace file by its name (lxml opened the path
	 * itself: "No tables found", then an ImportError). */
	e2e_expect_result(
	    "import pandas as pd, openpyxl, pathlib\n"
	    "wb = openpyxl.Workbook(write_only=True)\n"
	    "ws = wb.create_sheet('rows')\n"
	    "for i in range(3):\n"
	    "    ws.append([i, i * i])\n"
	    "wb.save('stream.xlsx')\n"
	    "pathlib.Path('t.html').write_text('<table><tr><th>a</th><th>b</th></tr>'\n"
	    "                                  '<tr><td>1</td><td>x</td></tr></table>')\n"
	    "[pd.read_excel('stream.xlsx', header=None).values.tolist(),\n"
	    " pd.read_html('t.html')[0].to_dict('list'), "
	    "len(pd.read_html(pathlib.Path('t.html')))]",
	    "[[[0,0],[1,1],[2,4]],{\"a\":[1],\"b\":[\"x\"]},1]");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* os.chmod(p, os.stat(p).st_mode | stat.S_IEXEC), the usual way to make a file executable, was
 * refused with EPERM: st_mode carries the file type (S_IFREG), which the kernel's chmod drops.
 * The mode is now taken as the kernel takes it, its low 12 bits; set-user-ID, set-group-ID and
 * the sticky bit stay refused, with the file type or without, and change nothing. */
Test(ws_write, chmod_takes_a_mode_read_from_stat)
{
	struct stat st;

	start(RW);
	ok_result(
	    "import os, stat\n" TRY_EACH "open('run.sh', 'w').write('#!/bin/sh\\n')\n"
	    "os.chmod('run.sh', 0o644)\n"
	    "os.chmod('run.sh', os.stat('run.sh').st_mode | stat.S_IEXEC)\n"
	    "m = os.stat('run.sh').st_mode\n"
	    "r = [oct(m), stat.S_ISREG(m),\n"
	    "     attempt(os.chmod, 'run.sh', stat.S_IFREG | stat.S_ISUID | 0o755),\n"
	    " attempt(os.chmod, 'run.sh', 0o2755), attempt(os.chmod, 'run.sh', 0o1755)]\n"
	    "for big in (2 ** 40, -2 ** 40):\n"
	    "    try:\n"
	    "        os.chmod('run.sh', big)\n"
	    "    except OverflowError as e:\n"
	    "        big = type(e).__name__\n"
	    "    r.append(big)\n"
	    "r + [oct(os.stat('run.sh').st_mode)]",
	    "[\"0o100744\",true,[\"PermissionError\",1,false],[\"PermissionError\",1,false],"
	    "[\"PermissionError\",1,false],\"OverflowError\",\"OverflowError\",\"0o100744\"]");
	cr_assert_eq(stat(in_ws("run.sh"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0744);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* shutil works in the workspace as on disk, through the workspace's own functions: copies
 * (copy keeps the permission bits, copy2 the times too), trees copied, moved (a directory by
 * copy and removal) and removed, archives made and unpacked; os.chmod and os.utime change the
 * call's copy of a file, so a stopped call leaves the file as it was. Permission bits beyond
 * 0777 and directories the call did not make are refused, and change nothing. Expected values
 * from python3.11 running the same code. */
Test(ws_write, shutil_copies_moves_and_removes)
{
	struct stat st, data_before;
	json_object *r;

	start(ARGS("--workspace-write", "--timeout", "3"));
	cr_assert_eq(chmod(in_ws("sub/x.json"), 0640), 0);
	cr_assert_eq(utimensat(AT_FDCWD, in_ws("sub/x.json"),
	                       (struct timespec[]){{1577836800, 0}, {1577934245, 500}}, 0),
	             0);
	cr_assert_eq(stat(in_ws("data.csv"), &data_before), 0);
	r = e2e_ok("import shutil, os\n"
	           "got = [shutil.copyfile('sub/x.json', 'c1.json'),\n"
	           "       shutil.copy('sub/x.json', 'c2.json'),\n"
	           "       shutil.copy2('sub/x.json', 'c3.json')]\n"
	           "os.mkdir('d')\n"
	           "got.append(shutil.copy('nums.txt', 'd'))\n"
	           "got.append([oct(os.stat(p).st_mode & 0o777) for p in ('c1.json', 'c2.json', "
	           "'c3.json')])\n"
	           "got.append(os.stat('c3.json').st_mtime_ns)\n"
	           "got.append(shutil.copytree('sub', 'tree'))\n"
	           "got.append(shutil.move('c1.json', 'moved.json'))\n"
	           "got.append(shutil.move('tree', 'tree2'))\n"
	           "got.append(sorted(os.path.join(r, f) for r, d, fs in os.walk('tree2') for f in "
	           "fs))\n"
	           "got.append(os.path.basename(shutil.make_archive('arch', 'zip', 'tree2')))\n"
	           "shutil.unpack_archive('arch.zip', 'unz')\n"
	           "shutil.rmtree('tree2')\n"
	           "try:\n"
	           "    shutil.copyfile('c2.json', 'c2.json')\n"
	           "except shutil.SameFileError as e:\n"
	           "    got.append(type(e).__name__)\n"
	           "got.append(sorted(os.listdir('.')))\n"
	           "got.append(sorted(os.listdir('unz')))\n"
	           "got");
	e2e_assert_result(
	    r, "shutil",
	    "[\"c1.json\",\"c2.json\",\"c3.json\",\"d/nums.txt\","
	    "[\"0o644\",\"0o640\",\"0o640\"],1577934245000000500,\"tree\","
	    "\"moved.json\",\"tree2\",[\"tree2/x.json\"],\"arch.zip\",\"SameFileError\","
	    "[\"arch.zip\",\"c2.json\",\"c3.json\",\"d\",\"data.csv\",\"moved.json\","
	    "\"nums.txt\",\"sub\",\"unz\"],[\"x.json\"]]");
	/* On disk as the call said; the sources as they were. */
	cr_assert_str_eq(slurp(in_ws("c3.json")), "{\"k\": [1, 2]}\n");
	cr_assert_eq(stat(in_ws("c3.json"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	cr_assert_eq(st.st_mtim.tv_sec, 1577934245);
	cr_assert_eq(st.st_mtim.tv_nsec, 500);
	cr_assert_eq(stat(in_ws("tree2"), &st), -1);
	cr_assert_eq(stat(in_ws("c1.json"), &st), -1);
	cr_assert_str_eq(slurp(in_ws("unz/x.json")), "{\"k\": [1, 2]}\n");
	cr_assert_str_eq(slurp(in_ws("sub/x.json")), "{\"k\": [1, 2]}\n");
	cr_assert_str_eq(slurp(in_ws("d/nums.txt")), "1 2\n3 4\n");
	/* os.chmod and os.utime of a file the call did not write: the call sees the change at
	 * once, the disk when it commits... */
	ok_result("os.chmod('data.csv', 0o600)\nos.utime('data.csv', (5, 7.25))\n"
	          "s = os.stat('data.csv')\n[oct(s.st_mode & 0o777), s.st_mtime, s.st_atime]",
	          "[\"0o600\",7.25,5.0]");
	cr_assert_eq(stat(in_ws("data.csv"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(st.st_mtim.tv_sec, 7);
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	/* ... and not at all when it is stopped. */
	r = e2e_expect_status("os.chmod('nums.txt', 0o700)\nos.utime('nums.txt', ns=(1, 2))\n"
	                      "shutil.rmtree('unz')\nshutil.copy('nums.txt', 'lost.txt')\n"
	                      "while True:\n    pass",
	                      NULL, "timeout");
	cr_assert_eq(stat(in_ws("nums.txt"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_neq(st.st_mtim.tv_sec, 0);
	cr_assert_str_eq(slurp(in_ws("unz/x.json")), "{\"k\": [1, 2]}\n");
	cr_assert_null(slurp(in_ws("lost.txt")));
	/* Refused: bits beyond 0777, a directory the call did not make, times of a name that is
	 * not there; nothing changes. */
	ok_result(TRY_EACH
	          "[attempt(os.chmod, 'c2.json', 0o4755), attempt(os.chmod, 'sub', 0o700),\n"
	          " attempt(os.utime, 'sub'), attempt(os.utime, 'none.txt'),\n"
	          " attempt(os.chmod, '../out/secret.txt', 0o777),\n"
	          " attempt(shutil.copy, '../out/secret.txt', 'stolen.txt')]",
	          "[[\"PermissionError\",1,false],[\"PermissionError\",1,false],"
	          "[\"PermissionError\",1,false],[\"FileNotFoundError\",2,false],"
	          "[\"PermissionError\",13,true],[\"PermissionError\",13,true]]");
	cr_assert_eq(stat(in_ws("c2.json"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	cr_assert_eq(stat(in_ws("sub"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
	cr_assert_null(slurp(in_ws("stolen.txt")));
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* Pictures (Pillow, in the data set): opened from the workspace, drawn on, filtered and saved
 * in the common formats (the PDF writer read its file through a mapping, which a worker has
 * not), read into numpy; an image given as the call's value comes back as a PNG, scaled down
 * to the bounds of a figure. Expected values from python3.11 running the same code. */
Test(ws_write, pictures_are_drawn_saved_reopened_and_shown)
{
	json_object *r, *img;
	const char *head;

	start(ARGS("--workspace-write", "--imports", "data"));
	r = e2e_call("from PIL import Image, ImageDraw, ImageFilter, ImageOps\n"
	             "import numpy as np\n"
	             "im = Image.new('RGB', (400, 300), 'white')\n"
	             "d = ImageDraw.Draw(im)\n"
	             "d.rectangle([20, 20, 200, 150], fill='red')\n"
	             "d.text((30, 200), 'safepy', fill='black')\n"
	             "im.save('pic.png'); im.save('pic.jpg', quality=85); im.save('pic.pdf')\n"
	             "small = ImageOps.grayscale(Image.open('pic.png').resize((100, 75))"
	             ".filter(ImageFilter.BLUR))\n"
	             "small.save('small.gif')\n"
	             "a = np.asarray(Image.open('pic.jpg'))\n"
	             "back = Image.open('small.gif')\n"
	             "[back.format, back.size, a.shape, int(a[50, 50, 0]) > 200, "
	             "int(a[50, 50, 1]) < 60, Image.open('pic.png').getpixel((250, 250))]",
	             NULL);
	if (strstr(mcpc_json(r), "is not installed"))
		cr_skip_test(
		    "the data packages are not installed (scripts/setup installs them): %s",
		    mcpc_err_str(r, "message"));
	e2e_assert_result(r, "pictures", "[\"GIF\",[100,75],[300,400,3],true,true,[255,255,255]]");
	head = slurp(in_ws("pic.png"));
	cr_assert(head && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0, "not a PNG");
	head = slurp(in_ws("pic.jpg"));
	cr_assert(head && memcmp(head, "\xff\xd8\xff", 3) == 0, "not a JPEG");
	head = slurp(in_ws("pic.pdf"));
	cr_assert(head && strncmp(head, "%PDF-", 5) == 0, "not a PDF");
	/* The value an image: one PNG of it, at most a figure's side, its proportions kept. */
	r = e2e_call("Image.new('RGB', (4000, 3000), 'blue')", NULL);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_eq(json_object_array_length(e2e_member(mcpc_structured(r), "images")), 1, "%s",
	             mcpc_json(r));
	img = json_object_array_get_idx(e2e_member(mcpc_structured(r), "images"), 0);
	cr_assert_eq(json_object_get_int(e2e_member(img, "width")), RUN_IMAGE_SIDE_MAX);
	cr_assert_eq(json_object_get_int(e2e_member(img, "height")), RUN_IMAGE_SIDE_MAX * 3 / 4);
	/* Another value shows nothing. */
	r = e2e_call("im.size", NULL);
	e2e_assert_result(r, "size", "[400,300]");
	cr_assert_eq(json_object_array_length(e2e_member(mcpc_structured(r), "images")), 0, "%s",
	             mcpc_json(r));
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

Test(ws_write, matplotlib_saves_a_figure)
{
	json_object *r;

	start(ARGS("--workspace-write", "--allow-import", "matplotlib", "--allow-import",
	           "matplotlib.pyplot"));
	r = e2e_call("import matplotlib\n"
	             "matplotlib.use('Agg')\n"
	             "import matplotlib.pyplot as plt\n"
	             "plt.plot([1, 2, 3], [3, 1, 2])\n"
	             "plt.savefig('plot.png')\n"
	             "plt.savefig('plot.pdf')\n"
	             "plt.savefig('plot.svg')\n"
	             "open('plot.png', 'rb').read(8) + open('plot.pdf', 'rb').read(5)",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "result_repr"), "PNG"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "result_repr"), "%PDF-"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_json(e2e_member(mcpc_structured(r), "files")), "plot.png"), "%s",
	          mcpc_json(r));
	cr_assert(strstr(mcpc_json(e2e_member(mcpc_structured(r), "files")), "plot.pdf"), "%s",
	          mcpc_json(r));
	cr_assert(strstr(slurp(in_ws("plot.svg")), "<svg"), "no SVG written");
	no_hidden_files();
	e2e_stop();
}

/* A link to a file of the workspace (current.csv -> runs/2/data.csv, the usual way to name the
 * latest of a series) was refused to open ("only regular files and directories"), while stat,
 * isfile and glob followed it and said it was a file. It opens its file, as a link to a
 * directory of the workspace did; one that leads out of the workspace, whether absolute or
 * by "..", is refused as before, and so is one to the workspace's outside through a link to
 * a directory. */
Test(ws_read, a_link_to_a_file_of_the_workspace_opens_its_file)
{
	json_object *r;

	start(ARGS("--imports", "data"));
	cr_assert_eq(mkdir(in_ws("runs"), 0755), 0, "%s", strerror(errno));
	cr_assert_eq(mkdir(in_ws("runs/2"), 0755), 0, "%s", strerror(errno));
	put_file(in_ws("runs/2/data.csv"), "a,b\n1,2\n");
	cr_assert_eq(symlink("runs/2/data.csv", in_ws("current.csv")), 0);
	cr_assert_eq(symlink("2/data.csv", in_ws("runs/latest.csv")), 0);
	cr_assert_eq(symlink("/etc/hostname", in_ws("abs.txt")), 0);
	cr_assert_eq(symlink("../../etc/hostname", in_ws("up.txt")), 0);
	cr_assert_eq(symlink("/etc", in_ws("etc")), 0);
	r = e2e_ok("import os, pandas as pd\n" TRY_EACH
	           "[open('current.csv').read(), open('runs/latest.csv', 'rb').read().decode(),\n"
	           " pd.read_csv('current.csv').to_dict('list'), os.path.islink('current.csv'),\n"
	           " attempt(open, 'abs.txt'), attempt(open, 'up.txt'), attempt(open, "
	           "'etc/hostname')]");
	e2e_assert_result(r, "links",
	                  "[\"a,b\\n1,2\\n\",\"a,b\\n1,2\\n\",{\"a\":[1],\"b\":[2]},true,"
	                  "[\"PermissionError\",13,true],[\"PermissionError\",13,true],"
	                  "[\"PermissionError\",13,true]]");
	e2e_stop();
}

/* A link leads to what the call itself wrote or removed of its target (the call's changes are
 * kept aside until it ends, by the target's name): it read the old bytes from disk, and a
 * removed target's link still existed. It reads what the target's name reads, as on the host;
 * the link itself stays as it was. */
Test(ws_write, a_link_reads_what_the_call_wrote_of_its_target)
{
	json_object *r;

	start(RW);
	put_file(in_ws("data.csv"), "v1\n");
	cr_assert_eq(symlink("data.csv", in_ws("latest.csv")), 0);
	cr_assert_eq(symlink("latest.csv", in_ws("link2.csv")), 0);
	r = e2e_ok("import os\n"
	           "with open('data.csv', 'w') as f:\n"
	           "    f.write('v2\\n')\n"
	           "out = [open('latest.csv').read(), open('link2.csv').read(),\n"
	           "       os.path.getsize('latest.csv')]\n"
	           "os.remove('data.csv')\n"
	           "out + [os.path.exists('latest.csv'), os.path.exists('link2.csv'),\n"
	           "       os.path.lexists('latest.csv')]");
	e2e_assert_result(r, "links", "[\"v2\\n\",\"v2\\n\",3,false,false,true]");
	cr_assert_null(slurp(in_ws("data.csv")));
	{
		struct stat st;
		cr_assert(lstat(in_ws("latest.csv"), &st) == 0 && S_ISLNK(st.st_mode));
	}
	e2e_stop();
}

/* A dataset a library downloads and caches (seaborn's load_dataset, sklearn's fetch_*), whose
 * file the user put in the workspace and named with data_home='.': the library reads it, with
 * the dtypes it gives the dataset (seaborn's tips: ordered days), as on the host. It was
 * refused as a download. One not there, or a cache directory that does not exist, still says
 * there is no network. */
Test(ws_read, a_dataset_cached_in_the_workspace_loads_as_on_the_host)
{
	start(ARGS("--imports", "data"));
	cr_assert_eq(mkdir(in_ws("cache"), 0755), 0, "%s", strerror(errno));
	put_file(in_ws("cache/tips.csv"), "total_bill,tip,sex,smoker,day,time,size\n"
	                                  "16.99,1.01,Female,No,Sun,Dinner,2\n"
	                                  "10.34,1.66,Male,No,Thur,Lunch,3\n");
	ok_result("import seaborn as sns\n"
	          "df = sns.load_dataset('tips', data_home='cache')\n"
	          "out = [df.shape, list(df['day'].cat.categories), str(df['tip'].dtype)]\n"
	          "for home in ('cache', 'nowhere'):\n"
	          "    try:\n"
	          "        sns.load_dataset('iris', data_home=home)\n"
	          "    except PermissionError as e:\n"
	          "        out.append('no network' in str(e))\n"
	          "out",
	          "[[2,7],[\"Thur\",\"Fri\",\"Sat\",\"Sun\"],\"float64\",true,true]");
	e2e_stop();
}

/* A font file of the user's in the workspace (a label in a script matplotlib's own fonts lack,
 * a house font): matplotlib read only the fonts it was started with, and a figure using another
 * failed to draw (not saved, not returned). A workspace's font is read with the sandbox's open:
 * drawn, saved as PNG and PDF (which embeds it), and one that is not there says so. */
Test(ws_write, matplotlib_draws_with_a_font_of_the_workspace)
{
	static const char *const fonts[] = {
	    "/usr/share/matplotlib/mpl-data/fonts/ttf/DejaVuSerif-Bold.ttf",
	    "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf"};
	char buf[65536];
	int in = -1, out;
	ssize_t n;

	start(ARGS("--workspace-write", "--imports", "data"));
	for (size_t i = 0; in < 0 && i < sizeof(fonts) / sizeof(fonts[0]); i++)
		in = open(fonts[i], O_RDONLY | O_CLOEXEC);
	cr_assert_geq(in, 0, "no DejaVu Serif Bold font file on this machine");
	out = open(in_ws("House.ttf"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_geq(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	ok_result("import os\n"
	          "import matplotlib.pyplot as plt\n"
	          "from matplotlib import font_manager as fm\n"
	          "prop = fm.FontProperties(fname='House.ttf')\n"
	          "fig, ax = plt.subplots(figsize=(2, 2))\n"
	          "ax.set_title('Title', fontproperties=prop)\n"
	          "fig.savefig('t.png')\n"
	          "fig.savefig('t.pdf')\n"
	          "pdf = open('t.pdf', 'rb').read()\n"
	          "try:\n"
	          "    ax.set_xlabel('x', fontproperties=fm.FontProperties(fname='none.ttf'))\n"
	          "    fig.savefig('u.png')\n"
	          "    missing = 'drawn'\n"
	          "except OSError as e:\n"
	          "    missing = str(e).replace(os.path.realpath(os.getcwd()), '.')[:47]\n"
	          "plt.close('all')\n"
	          "[prop.get_name(), open('t.png', 'rb').read(4) == b'\\x89PNG', "
	          "b'DejaVuSerif-Bold' in pdf, missing, os.path.exists('u.png')]",
	          "[\"DejaVu Serif\",true,true,\"font ./none.ttf is not available in the "
	          "sandbox\",false]");
	no_hidden_files();
	e2e_stop();
}

/* The data libraries with a workspace: tempfile looked for its directory by writing a file in
 * each candidate, and only the workspace took it (scipy.stats.sampling's import left one);
 * qhull's message stream is a handle on /dev/null here too (the workspace's os.dup refused it:
 * the worker crashed); matplotlib's configuration directory (the server's home) was in the
 * environment. */
Test(ws_write, data_libraries_leave_no_stray_file)
{
	json_object *r;

	start(ARGS("--workspace-write", "--imports", "data"));
	r = e2e_call("import os, numpy as np\n"
	             "from scipy.stats import sampling\n"
	             "from scipy.spatial import ConvexHull\n"
	             "[ConvexHull(np.array([[0, 0], [2, 0], [0, 2]])).volume,\n"
	             " 'MPLCONFIGDIR' in os.environ]",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	e2e_assert_result(r, "sampling", "[2.0,false]");
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "files")), "[]", "%s",
	                 mcpc_json(r));
	no_hidden_files();
	e2e_stop();
}

/* numpy's raw binary files (tofile, fromfile, with a name or a file object at an offset) and
 * scipy's WAV files: numpy reads and writes them with C stdio on a copy of the file's fd,
 * which a worker now makes of a workspace file (it was refused: ENOTSUP). Expected values
 * from python3.11 running the same code. */
Test(ws_write, numpy_raw_binary_files_are_written_and_read)
{
	json_object *r;

	start(ARGS("--workspace-write", "--imports", "data"));
	r = e2e_call("import numpy as np\n"
	             "import scipy.io.wavfile as wav\n"
	             "np.arange(6).tofile('t.bin')\n"
	             "np.arange(3.0).tofile('t.txt', sep=',')\n"
	             "with open('t2.bin', 'wb') as f:\n"
	             "    f.write(b'hd')\n"
	             "    np.arange(2, dtype=np.int16).tofile(f)\n"
	             "    f.write(b'tl')\n"
	             "with open('t.bin', 'rb') as f:\n"
	             "    f.seek(8)\n"
	             "    part = np.fromfile(f, dtype=np.int64, count=2).tolist()\n"
	             "    at = f.tell()\n"
	             "wav.write('s.wav', 8000, np.arange(100, dtype=np.int16))\n"
	             "rate, sound = wav.read('s.wav')\n"
	             "[np.fromfile('t.bin', dtype=np.int64).tolist(), np.fromfile('t.txt', sep=',')"
	             ".tolist(),\n"
	             " part, at, open('t2.bin', 'rb').read().hex(), rate, int(sound.sum())]",
	             NULL);
	if (strstr(mcpc_json(r), "is not installed"))
		cr_skip_test(
		    "the data packages are not installed (scripts/setup installs them): %s",
		    mcpc_err_str(r, "message"));
	e2e_assert_result(r, "raw files",
	                  "[[0,1,2,3,4,5],[0.0,1.0,2.0],[1,2],24,\"686400000100746c\",8000,4950]");
	cr_assert_str_eq(slurp(in_ws("t.txt")), "0.0,1.0,2.0");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* Put a file of mode at path, owned by uid:gid. */
static void put_owned(const char *path, const char *text, mode_t mode, uid_t uid, gid_t gid)
{
	FILE *f = fopen(path, "we");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chown(path, uid, gid), 0);
	cr_assert_eq(chmod(path, mode), 0);
}

/* A server that is not root replaces no file it could not write in place: the move over the
 * target needs only the directory's permission, and a read-only file, or root's (which became
 * the server's), was replaced. Its own files and new ones are written as ever. */
Test(ws_write, files_the_server_cannot_write_are_left_alone)
{
	char dir[] = "/tmp/safepy-ws-perm-XXXXXX", bin[] = "/tmp/safepy-bin-XXXXXX", *out, *err;
	struct passwd *nobody = getpwnam("nobody");
	const char *code = "out = []\n"
	                   "for n in ('ro.txt', 'roots.txt', 'mine.txt', 'new.txt'):\n"
	                   "    for mode in ('w', 'a', 'r+'):\n"
	                   "        try:\n"
	                   "            with open(n, mode) as f:\n"
	                   "                f.write('X')\n"
	                   "            out.append('ok')\n"
	                   "        except PermissionError as e:\n"
	                   "            out.append(str(e.errno))\n"
	                   "' '.join(out)";
	struct stat st;
	int status = 0;

	if (geteuid() != 0 || !nobody)
		cr_skip_test("the server runs as another user only when the tests run as root");
	if (access(e2e_fmt("%s-zygote", SAFEPY_BIN), X_OK) != 0)
		cr_skip_test(
		    "the zygote is not next to the server (a sanitizer build runs another's)");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_not_null(mkdtemp(bin));
	cr_assert_eq(chmod(bin, 0755), 0);
	/* The binaries where nobody can reach them (the build tree may be in root's home). */
	cr_assert_eq(system(e2e_fmt("cp '%s' '%s-zygote' '%s/'", SAFEPY_BIN, SAFEPY_BIN, bin)), 0);
	cr_assert_eq(chown(dir, nobody->pw_uid, nobody->pw_gid), 0);
	cr_assert_eq(chmod(dir, 0755), 0);
	put_owned(e2e_fmt("%s/ro.txt", dir), "ro", 0444, nobody->pw_uid, nobody->pw_gid);
	put_owned(e2e_fmt("%s/roots.txt", dir), "root", 0644, 0, 0);
	put_owned(e2e_fmt("%s/mine.txt", dir), "m", 0644, nobody->pw_uid, nobody->pw_gid);
	cr_assert_eq(mcpc_run_cmd("/usr/bin/setpriv",
	                          ARGS(e2e_fmt("--reuid=%u", (unsigned)nobody->pw_uid),
	                               e2e_fmt("--regid=%u", (unsigned)nobody->pw_gid),
	                               "--clear-groups", e2e_fmt("%s/safepy", bin), "run",
	                               "--workspace", dir, "--workspace-write", "-c", code),
	                          NULL, 60000, &out, &err, &status),
	             0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x: %s", status, err);
	cr_assert(strstr(out, "'1 1 1 1 1 1 ok ok ok ok ok ok'"), "stdout: %s\nstderr: %s", out,
	          err);
	cr_assert_str_eq(slurp(e2e_fmt("%s/ro.txt", dir)), "ro");
	cr_assert_str_eq(slurp(e2e_fmt("%s/roots.txt", dir)), "root");
	cr_assert_str_eq(slurp(e2e_fmt("%s/mine.txt", dir)), "XX");
	cr_assert_eq(stat(e2e_fmt("%s/roots.txt", dir), &st), 0);
	cr_assert_eq(st.st_uid, 0, "root's file changed owner");
	cr_assert_eq(stat(e2e_fmt("%s/ro.txt", dir), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0444);
	free(out);
	free(err);
	cr_assert_eq(system(e2e_fmt("rm -rf '%s' '%s'", dir, bin)), 0);
}

/* A server started as root meets no permission in the kernel: it checks the mode bits as the
 * workspace's owner would meet them. A read-only file, a directory closed to writes, another
 * user's private file and directory stay as they are; the owner's own files work as before. */
Test(ws_write, as_root_the_files_permissions_hold)
{
	const char *code =
	    "import os\n" TRY_EACH
	    "[attempt(open, 'ro.txt', 'w')[:2], attempt(open, 'ro.txt', 'a')[:2],\n"
	    " attempt(open, 'rodir/new.txt', 'w')[:2],\n"
	    " attempt(os.mkdir, 'rodir/sub')[:2], attempt(open, 'priv.txt')[:2],\n"
	    " attempt(os.listdir, 'closed')[:2], attempt(open, 'closed/x', 'w')[:2],\n"
	    " attempt(lambda: open('mine.txt', 'a').write('x'))[0], attempt(open, 'data.csv')[0],\n"
	    " attempt(os.mkdir, 'made')[0], sorted(os.listdir('rodir'))]";
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("only a server started as root checks the permissions itself");
	start(ARGS("--workspace-write"));
	put_owned(in_ws("ro.txt"), "ro", 0444, 0, 0);
	put_owned(in_ws("priv.txt"), SECRET, 0600, 1234, 1234);
	put_owned(in_ws("mine.txt"), "m", 0644, 0, 0);
	cr_assert_eq(mkdir(in_ws("rodir"), 0555), 0);
	cr_assert_eq(chmod(in_ws("rodir"), 0555), 0);
	cr_assert_eq(mkdir(in_ws("closed"), 0700), 0);
	cr_assert_eq(chown(in_ws("closed"), 1234, 1234), 0);
	ok_result(code, "[[\"PermissionError\",1],[\"PermissionError\",1],"
	                "[\"PermissionError\",13],[\"PermissionError\",13],"
	                "[\"PermissionError\",13],[\"PermissionError\",13],"
	                "[\"PermissionError\",13],\"ok\",\"ok\",\"ok\",[]]");
	cr_assert_str_eq(slurp(in_ws("ro.txt")), "ro");
	cr_assert_str_eq(slurp(in_ws("mine.txt")), "mx");
	cr_assert_eq(stat(in_ws("ro.txt"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0444);
	cr_assert_neq(stat(in_ws("rodir/new.txt"), &st), 0);
	cr_assert_neq(stat(in_ws("rodir/sub"), &st), 0);
	cr_assert_neq(stat(in_ws("closed/x"), &st), 0);
	cr_assert_eq(stat(in_ws("made"), &st), 0);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The same, through the ways that copy or move a file before reading it, and down a path:
 * a file whose bits let no one read it ('r+' and 'a+' copy it first; a rename made a second
 * name) and another user's file in a directory closed to searches were read (the bits were
 * checked on the last name only, and not on a copy's source). The kernel now meets them as
 * root without the capabilities that pass file permissions. */
Test(ws_write, as_root_a_files_bits_hold_for_copies_and_down_the_path)
{
	const char *code =
	    "import os\n" TRY_EACH
	    "[attempt(open, 'wo.txt', 'r+')[:2], attempt(open, 'wo.txt', 'a+')[:2],\n"
	    " attempt(open, 'alice.txt', 'r+')[:2],\n"
	    " attempt(os.rename, 'wo.txt', 'wo2.txt')[0], attempt(open, 'wo2.txt')[:2],\n"
	    " attempt(open, 'closed/in.txt')[:2], attempt(open, 'closed/pub/x', 'w')[:2],\n"
	    " attempt(lambda: open('mine.txt', 'r+').read())]";
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("only a server started as root checks the permissions itself");
	start(ARGS("--workspace-write"));
	put_owned(in_ws("wo.txt"), SECRET, 0200, 0, 0);
	put_owned(in_ws("alice.txt"), SECRET, 0602, 1234, 1234);
	put_owned(in_ws("mine.txt"), "m", 0644, 0, 0);
	cr_assert_eq(mkdir(in_ws("closed"), 0700), 0);
	cr_assert_eq(mkdir(in_ws("closed/pub"), 0777), 0);
	cr_assert_eq(chmod(in_ws("closed/pub"), 0777), 0);
	put_owned(in_ws("closed/in.txt"), SECRET, 0644, 1234, 1234);
	cr_assert_eq(chown(in_ws("closed/pub"), 1234, 1234), 0);
	cr_assert_eq(chown(in_ws("closed"), 1234, 1234), 0);
	ok_result(code, "[[\"PermissionError\",13],[\"PermissionError\",13],"
	                "[\"PermissionError\",13],\"ok\",[\"PermissionError\",13],"
	                "[\"PermissionError\",13],[\"PermissionError\",13],[\"ok\",\"'m'\"]]");
	cr_assert_str_eq(slurp(in_ws("wo2.txt")), SECRET);
	cr_assert_eq(stat(in_ws("wo2.txt"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0200);
	cr_assert_str_eq(slurp(in_ws("alice.txt")), SECRET);
	cr_assert_neq(stat(in_ws("closed/pub/x"), &st), 0);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A server started as root serving a workspace another user owns (here daemon, the
 * directory's group one daemon is not in) serves its requests with the owner's identity: the
 * kernel checks each directory on the way and each file as the owner would meet them. The
 * mode bits alone were checked, on the last name only: a file in another user's private
 * directory was read, listed and written, a write-only file read through 'r+', a renamed
 * file read under its new name, another user's file removed from a sticky directory, and the
 * directory's group taken for the owner's. The owner's own work goes on: a new file and
 * directory are the owner's, a file the owner may write keeps its owner. */
Test(ws_write, as_root_an_owners_workspace_is_served_as_the_owner)
{
	struct passwd *pw = getpwnam("daemon");
	const char *code =
	    "import os\n" TRY_EACH
	    "[attempt(open, 'bobdir/bob.txt')[:2], attempt(os.stat, 'bobdir/bob.txt')[:2],\n"
	    " attempt(os.listdir, 'bobdir')[:2], attempt(open, 'bobdir/open/planted', 'w')[:2],\n"
	    " attempt(os.mkdir, 'bobdir/open/d')[:2], attempt(open, 'wonly.txt', 'r+')[:2],\n"
	    " attempt(open, 'bob_wo.txt', 'a+')[:2], attempt(os.rename, 'bob_w2.txt', "
	    "'moved.txt')[0],\n"
	    " attempt(open, 'moved.txt')[:2], attempt(os.remove, 'shared/bobs.txt')[:2],\n"
	    " attempt(open, 'g.txt')[:2],\n"
	    " attempt(open, 'pub.txt'), attempt(lambda: open('theirs.txt', 'a').write('x'))[0],\n"
	    " attempt(lambda: open('new.txt', 'w').write('n'))[0], attempt(os.mkdir, "
	    "'newdir')[0],\n"
	    " attempt(lambda: open('shared/mine.txt', 'w').write('m'))[0],\n"
	    " attempt(open, 'data.csv')[0]]";
	struct stat st;

	if (geteuid() != 0 || !pw || pw->pw_uid == 0)
		cr_skip_test("only a server started as root serves as the workspace's owner");
	tree();
	cr_assert_eq(chown(ws, pw->pw_uid, 4321), 0);
	cr_assert_eq(mkdir(in_ws("bobdir"), 0700), 0);
	cr_assert_eq(mkdir(in_ws("bobdir/open"), 0777), 0);
	cr_assert_eq(chmod(in_ws("bobdir/open"), 0777), 0);
	cr_assert_eq(chown(in_ws("bobdir/open"), 1234, 1234), 0);
	put_owned(in_ws("bobdir/bob.txt"), SECRET, 0644, 1234, 1234);
	cr_assert_eq(chown(in_ws("bobdir"), 1234, 1234), 0);
	put_owned(in_ws("wonly.txt"), SECRET, 0222, pw->pw_uid, pw->pw_gid);
	put_owned(in_ws("bob_wo.txt"), SECRET, 0602, 1234, 1234);
	put_owned(in_ws("bob_w2.txt"), SECRET, 0602, 1234, 1234);
	cr_assert_eq(mkdir(in_ws("shared"), 0777), 0);
	cr_assert_eq(chmod(in_ws("shared"), 01777), 0);
	put_owned(in_ws("shared/bobs.txt"), "bs", 0666, 1234, 1234);
	put_owned(in_ws("g.txt"), SECRET, 0640, 1234, 4321);
	put_owned(in_ws("pub.txt"), "p", 0644, 1234, 1234);
	put_owned(in_ws("theirs.txt"), "t", 0666, 1234, 1234);
	e2e_start(ARGS("--workspace", ws, "--workspace-write"));
	ok_result(code, "[[\"PermissionError\",13],[\"PermissionError\",13],"
	                "[\"PermissionError\",13],[\"PermissionError\",13],"
	                "[\"PermissionError\",13],[\"PermissionError\",13],"
	                "[\"PermissionError\",13],\"PermissionError\","
	                "[\"FileNotFoundError\",2],[\"PermissionError\",1],"
	                "[\"PermissionError\",13],"
	                "[\"ok\",\"'p'\"],\"ok\",\"ok\",\"ok\",\"ok\",\"ok\"]");
	cr_assert_str_eq(slurp(in_ws("bobdir/bob.txt")), SECRET);
	cr_assert_neq(stat(in_ws("bobdir/open/planted"), &st), 0);
	cr_assert_neq(stat(in_ws("bobdir/open/d"), &st), 0);
	cr_assert_eq(stat(in_ws("bob_w2.txt"), &st), 0);
	cr_assert_neq(stat(in_ws("moved.txt"), &st), 0);
	cr_assert_str_eq(slurp(in_ws("shared/bobs.txt")), "bs");
	cr_assert_str_eq(slurp(in_ws("theirs.txt")), "tx");
	cr_assert_eq(stat(in_ws("theirs.txt"), &st), 0);
	cr_assert(st.st_uid == 1234 && (st.st_mode & 07777) == 0666, "%u %o", (unsigned)st.st_uid,
	          (unsigned)st.st_mode);
	cr_assert_eq(stat(in_ws("new.txt"), &st), 0);
	cr_assert_eq(st.st_uid, pw->pw_uid, "new.txt is %u's", (unsigned)st.st_uid);
	cr_assert_eq(stat(in_ws("newdir"), &st), 0);
	cr_assert_eq(st.st_uid, pw->pw_uid, "newdir is %u's", (unsigned)st.st_uid);
	cr_assert_str_eq(slurp(in_ws("shared/mine.txt")), "m");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* More of the owner's permissions, for a root server serving as the owner. An owner with no
 * entry in the user database (a uid chown'ed alone: the directory's group root's) was given
 * the directory's group, root's: root's group files were read and written. Root's own files
 * the owner may write became the owner's when written (the copy was made as the owner and
 * only a non-root owner was given back), so the owner could then chmod them or remove them
 * from a sticky directory. A directory of another user's in a sticky directory was removed.
 * Now the owner with no entry has the group no one is in, a rewritten file of root's stays
 * root's (and its chmod is refused, as to its owner), and the sticky bit holds for
 * directories. */
Test(ws_write, as_root_an_owner_meets_groups_root_files_and_sticky_dirs_as_theirs)
{
	const char *code =
	    "import os\n" TRY_EACH "[attempt(open, 'rg.txt')[:2], attempt(os.listdir, 'sub')[:2],\n"
	    " attempt(lambda: open('shared/rootfile.txt', 'w').write('w'))[0],\n"
	    " attempt(os.chmod, 'r2.txt', 0o600)[:2], attempt(os.rmdir, 'shared/bobsdir')[:2],\n"
	    " attempt(lambda: open('new.txt', 'w').write('n'))[0], attempt(os.mkdir, "
	    "'shared/mine')[0]]";
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("only a server started as root serves as the workspace's owner");
	tree();
	cr_assert_eq(chown(ws, 4321, 0), 0);
	put_owned(in_ws("rg.txt"), SECRET, 0640, 0, 0);
	cr_assert_eq(chmod(in_ws("sub"), 0770), 0); /* root's */
	cr_assert_eq(mkdir(in_ws("shared"), 0777), 0);
	cr_assert_eq(chmod(in_ws("shared"), 01777), 0);
	put_owned(in_ws("shared/rootfile.txt"), "r", 0666, 0, 0);
	put_owned(in_ws("r2.txt"), "r2", 0646, 0, 0);
	cr_assert_eq(mkdir(in_ws("shared/bobsdir"), 0755), 0);
	cr_assert_eq(chown(in_ws("shared/bobsdir"), 1234, 1234), 0);
	e2e_start(ARGS("--workspace", ws, "--workspace-write"));
	ok_result(code, "[[\"PermissionError\",13],[\"PermissionError\",13],\"ok\","
	                "[\"PermissionError\",1],[\"PermissionError\",1],\"ok\",\"ok\"]");
	cr_assert_eq(stat(in_ws("shared/rootfile.txt"), &st), 0);
	cr_assert(st.st_uid == 0 && st.st_gid == 0 && (st.st_mode & 07777) == 0666, "%u:%u %o",
	          (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)st.st_mode);
	cr_assert_str_eq(slurp(in_ws("shared/rootfile.txt")), "w");
	cr_assert_eq(stat(in_ws("r2.txt"), &st), 0);
	cr_assert(st.st_uid == 0 && (st.st_mode & 07777) == 0646, "%u %o", (unsigned)st.st_uid,
	          (unsigned)st.st_mode);
	cr_assert_eq(stat(in_ws("shared/bobsdir"), &st), 0);
	cr_assert_eq(stat(in_ws("new.txt"), &st), 0);
	cr_assert(st.st_uid == 4321 && st.st_gid == 65534, "new.txt %u:%u", (unsigned)st.st_uid,
	          (unsigned)st.st_gid);
	cr_assert_eq(stat(in_ws("shared/mine"), &st), 0);
	cr_assert_eq(st.st_uid, 4321);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* ---- Attacks, through Python -------------------------------------------------------------- */

/* What each attempt must answer: a PermissionError whose message names the workspace. */
#define DENIED  "[\"PermissionError\",13,true]"
#define MOUNTED "[\"PermissionError\",30,true]"

Test(ws_attack, dot_dot_and_absolute_paths_outside_are_refused)
{
	json_object *r;

	start(RW);
	r = ok_result(
	    e2e_fmt(
	        "import os, pathlib\n" TRY_EACH "o = '%s'\n"
	        "[attempt(open, '../secret.txt'), attempt(open, '../out/secret.txt'),\n"
	        " attempt(open, 'sub/../../secret.txt'), attempt(open, o + '/secret.txt'),\n"
	        " attempt(open, os.getcwd() + '/../secret.txt'), attempt(open, '/etc/passwd'),\n"
	        " attempt(open, os.getcwd() + 'x/secret.txt'),\n"
	        " attempt(os.listdir, '..'), attempt(os.listdir, o), attempt(os.stat, "
	        "'../secret.txt'),\n"
	        " attempt(open, '../marker.txt', 'w'), attempt(open, o + '/new.txt', 'w'),\n"
	        " attempt(open, '../marker.txt', 'a'),\n"
	        " attempt(pathlib.Path(o + '/secret.txt').read_text),\n"
	        " attempt(os.mkdir, '../newdir'), attempt(os.mkdir, o + '/newdir'),\n"
	        " attempt(os.makedirs, 'sub/../../a/b'), attempt(os.mkdir, 'sub/../../newer')]",
	        outside),
	    "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	    "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	    "," DENIED "," DENIED "]");
	no_secret(r);
	outside_unchanged();
	e2e_stop();
}

Test(ws_attack, proc_and_dev_are_refused)
{
	start(NULL);
	ok_result("import os\n" TRY_EACH
	          "[attempt(open, '/proc/self/environ'), attempt(open, '/proc/self/fd/3'),\n"
	          " attempt(open, '/proc/self/mem', 'rb'), attempt(os.listdir, '/proc/self/fd'),\n"
	          " attempt(open, '/dev/zero', 'rb'), attempt(open, '/proc/self/cwd/data.csv')]",
	          "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "]");
	outside_unchanged();
	e2e_stop();
}

Test(ws_attack, symbolic_links_leading_out_are_refused)
{
	json_object *r;

	start(RW);
	cr_assert_eq(symlink(e2e_fmt("%s/secret.txt", outside), in_ws("abs_file")), 0);
	cr_assert_eq(symlink("../out/secret.txt", in_ws("rel_file")), 0);
	cr_assert_eq(symlink(outside, in_ws("abs_dir")), 0);
	cr_assert_eq(symlink("../../out", in_ws("sub/rel_dir")), 0);
	cr_assert_eq(symlink("../marker.txt", in_ws("to_marker")), 0);
	r = ok_result(
	    "import os, pathlib, glob\n" TRY_EACH
	    "[attempt(open, 'abs_file'), attempt(open, 'rel_file'), attempt(open, "
	    "'abs_dir/secret.txt'),\n"
	    " attempt(open, 'sub/rel_dir/secret.txt'), attempt(os.listdir, 'abs_dir'),\n"
	    " attempt(os.listdir, 'sub/rel_dir'), attempt(os.stat, 'abs_dir/secret.txt'),\n"
	    " attempt(open, 'abs_dir/new.txt', 'w'), attempt(open, 'sub/rel_dir/marker.txt', "
	    "'a'),\n"
	    " attempt(open, 'to_marker', 'w'), attempt(open, 'to_marker', 'a'),\n"
	    " attempt(pathlib.Path('abs_dir/secret.txt').read_text),\n"
	    " attempt(os.mkdir, 'abs_dir/new'), attempt(os.makedirs, 'sub/rel_dir/new/deeper'),\n"
	    " [os.path.islink('abs_file'), os.path.exists('abs_file'), os.path.isdir('abs_dir')],\n"
	    " sorted(glob.glob('**/*.txt', recursive=True)),\n"
	    " sorted(p for d, _, fs in os.walk('.', followlinks=True) for p in fs)]",
	    "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	    "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	    ",[true,false,false],[\"nums.txt\"],"
	    "[\"abs_dir\",\"abs_file\",\"data.csv\",\"nums.txt\",\"rel_dir\",\"rel_file\","
	    "\"to_marker\",\"x.json\"]]");
	no_secret(r);
	/* The links are what they were: a write never replaced one. */
	{
		char buf[256];
		ssize_t n = readlink(in_ws("to_marker"), buf, sizeof(buf) - 1);
		cr_assert_gt(n, 0);
		buf[n] = '\0';
		cr_assert_str_eq(buf, "../marker.txt");
	}
	outside_unchanged();
	e2e_stop();
}

/* A link of the host's with a UTF-8 name that leads to a directory whose name is not UTF-8:
 * the file written there was named in the answer by the directory's own bytes, which made the
 * JSON-RPC line invalid UTF-8 (a strict client drops the connection, and every session on it).
 * Writing, making a directory and renaming there are refused (EINVAL, as a name of the call's
 * that is not UTF-8); other files are written. */
Test(ws_attack, a_path_that_is_not_utf8_is_not_written)
{
	start(RW);
	cr_assert_eq(mkdir(in_ws("\xff\xfe"), 0755), 0);
	cr_assert_eq(symlink("\xff\xfe", in_ws("good")), 0);
	ok_result(
	    "import os\n" TRY_EACH
	    "[attempt(lambda: open('good/out.txt', 'w').write('hello')), attempt(os.mkdir, "
	    "'good/d'),\n"
	    " attempt(os.rename, 'nums.txt', 'good/n.txt'), open('plain.txt', 'w').write('x')]",
	    "[[\"OSError\",22,false],[\"OSError\",22,false],[\"OSError\",22,false],1]");
	cr_assert_null(slurp(in_ws("\xff\xfe/out.txt")));
	cr_assert_null(slurp(in_ws("\xff\xfe/n.txt")));
	cr_assert_not_null(slurp(in_ws("nums.txt")));
	cr_assert_str_eq(slurp(in_ws("plain.txt")), "x");
	outside_unchanged();
	e2e_stop();
}

/* Tar archives are made and unpacked as on the host, within the workspace: an archive's links
 * (absolute, relative, hard; to the secret outside, or to a directory outside followed by a
 * member beneath it), paths leading out, FIFOs, devices and set-user-ID bits make nothing
 * outside, no link and no special file; a link to a member of the archive becomes a copy of it
 * (tarfile's way where links cannot be made), and what is made stays in the workspace. */
Test(ws_attack, a_tar_archive_unpacks_only_into_the_workspace)
{
	json_object *r;

	start(RW);
	r = ok_result(
	    e2e_fmt("import tarfile, io, os, shutil\n"
	            "o = '%s'\n"
	            "def add(t, name, kind, data=b'', link='', mode=0o644):\n"
	            "    ti = tarfile.TarInfo(name)\n"
	            "    ti.type, ti.linkname, ti.mode, ti.size = kind, link, mode, len(data)\n"
	            "    t.addfile(ti, io.BytesIO(data))\n"
	            "b = io.BytesIO()\n"
	            "with tarfile.open(fileobj=b, mode='w:gz') as t:\n"
	            "    add(t, 'ok.txt', tarfile.REGTYPE, b'fine')\n"
	            "    add(t, 'abs_sym', tarfile.SYMTYPE, link=o + '/secret.txt')\n"
	            "    add(t, 'rel_sym', tarfile.SYMTYPE, link='../../out/secret.txt')\n"
	            "    add(t, 'hard_out', tarfile.LNKTYPE, link=o + '/secret.txt')\n"
	            "    add(t, 'hard_in', tarfile.LNKTYPE, link='ok.txt')\n"
	            "    add(t, 'sym_in', tarfile.SYMTYPE, link='ok.txt')\n"
	            "    add(t, 'dirlink', tarfile.SYMTYPE, link=o)\n"
	            "    add(t, 'dirlink/evil.txt', tarfile.REGTYPE, b'evil')\n"
	            "    add(t, '../../out/evil.txt', tarfile.REGTYPE, b'evil')\n"
	            "    add(t, o + '/evil2.txt', tarfile.REGTYPE, b'evil')\n"
	            "    add(t, 'fifo', tarfile.FIFOTYPE)\n"
	            "    add(t, 'dev', tarfile.CHRTYPE)\n"
	            "    add(t, 'suid', tarfile.REGTYPE, b'#!/bin/sh\\n', mode=0o4755)\n"
	            "    add(t, 'run.sh', tarfile.REGTYPE, b'echo hi\\n', mode=0o755)\n"
	            "b.seek(0)\n"
	            "t = tarfile.open(fileobj=b)\n"
	            "t.errorlevel = 2\n"
	            "res = []\n"
	            "for m in t.getmembers():\n"
	            "    try:\n"
	            "        t.extract(m, 'x')\n"
	            "        res.append('ok')\n"
	            "    except Exception as e:\n"
	            "        res.append(type(e).__name__)\n"
	            "def tree(top):\n"
	            "    return sorted([os.path.relpath(os.path.join(d, f), top), "
	            "open(os.path.join(d, f)).read()]\n"
	            "                  for d, _, fs in os.walk(top) for f in fs)\n"
	            "shutil.unpack_archive(shutil.make_archive('arch', 'gztar', 'x'), 'u')\n"
	            "[res, tree('x'), tree('u') == tree('x'), oct(os.stat('u/run.sh').st_mode & "
	            "0o7777),\n"
	            " oct(os.stat('x/suid').st_mode & 0o7777), "
	            "tarfile.open('arch.tar.gz').getmember('./run.sh').uname]\n",
	            outside),
	    "[[\"ok\",\"ExtractError\",\"ExtractError\",\"KeyError\",\"ok\",\"ok\","
	    "\"ExtractError\",\"ok\",\"PermissionError\",\"PermissionError\",\"ExtractError\","
	    "\"ExtractError\",\"ExtractError\",\"ok\"],"
	    "[[\"dirlink/evil.txt\",\"evil\"],[\"hard_in\",\"fine\"],[\"ok.txt\",\"fine\"],"
	    "[\"run.sh\",\"echo hi\\n\"],[\"suid\",\"#!/bin/sh\\n\"],[\"sym_in\",\"fine\"]],"
	    "true,\"0o755\",\"0o644\",\"\"]");
	no_secret(r);
	outside_unchanged();
	{
		struct stat st;
		cr_assert_eq(lstat(in_ws("x/dirlink"), &st), 0);
		cr_assert(S_ISDIR(st.st_mode), "x/dirlink is a directory of the workspace");
		cr_assert_eq(stat(in_ws("x/suid"), &st), 0);
		cr_assert_eq(st.st_mode & 07777, 0644);
		cr_assert_neq(lstat(in_ws("x/fifo"), &st), 0);
		cr_assert_neq(lstat(in_ws("x/dev"), &st), 0);
		cr_assert_neq(lstat(in_ws("x/abs_sym"), &st), 0);
	}
	no_hidden_files();
	e2e_stop();
}

/* An archive of a folder that holds symbolic links (the host's): a link's own target is not
 * read in a worker, so the file it leads to is added in its place (as zip archives do); one
 * that leads outside is left out. make_archive stopped at the first link before, leaving an
 * archive without the members after it. */
Test(ws_attack, an_archive_of_a_folder_with_links_holds_what_they_lead_to)
{
	start(RW);
	cr_assert_eq(mkdir(in_ws("proj"), 0755), 0);
	put_file(in_ws("proj/a.txt"), "one\n");
	put_file(in_ws("proj/z.txt"), "two\n");
	cr_assert_eq(symlink("a.txt", in_ws("proj/link")), 0);
	cr_assert_eq(symlink(e2e_fmt("%s/secret.txt", outside), in_ws("proj/out")), 0);
	ok_result("import shutil, tarfile\n"
	          "name = shutil.make_archive('proj', 'gztar', root_dir='.', base_dir='proj')\n"
	          "with tarfile.open(name) as t:\n"
	          "    got = [[m.name, m.isfile() and t.extractfile(m).read().decode()]\n"
	          "           for m in t.getmembers()]\n"
	          "got",
	          "[[\"proj\",false],[\"proj/a.txt\",\"one\\n\"],[\"proj/link\",\"one\\n\"],"
	          "[\"proj/z.txt\",\"two\\n\"]]");
	outside_unchanged();
	no_hidden_files();
	e2e_stop();
}

/* While the worker opens, lists and writes through ws/race, another process keeps swapping
 * ws/race, a directory of the workspace, with a symbolic link to the directory outside
 * (renameat2 RENAME_EXCHANGE). Every request resolves either to the directory inside or to a
 * refusal; never to the secret. */
Test(ws_attack, a_symlink_swapped_in_during_requests_never_leads_out)
{
	json_object *r;
	const char *res;
	pid_t flipper;

	start(RW);
	cr_assert_eq(mkdir(in_ws("race"), 0755), 0);
	put_file(in_ws("race/secret.txt"), "inside\n");
	cr_assert_eq(symlink(outside, in_ws("racelink")), 0);
	flipper = fork();
	cr_assert_geq(flipper, 0);
	if (flipper == 0) {
		const char *a = in_ws("race"), *b = in_ws("racelink");
		for (;;)
			(void)renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
	}
	r = e2e_call("import os\n"
	             "got = {'inside': 0, 'denied': 0, 'missing': 0, 'other': []}\n"
	             "listed = set()\n"
	             "def count(what, value):\n"
	             "    if value == what:\n"
	             "        got['inside'] += 1\n"
	             "    else:\n"
	             "        got['other'].append(value)\n"
	             "for i in range(3000):\n"
	             "    try:\n"
	             "        if i % 6 == 0:\n"
	             "            with open('race/secret.txt') as f:\n"
	             "                count('inside\\n', f.read())\n"
	             "        elif i % 6 == 3:\n"
	             "            count(7, os.stat('sub/../race/secret.txt').st_size)\n"
	             "        else:\n"
	             "            count(7, os.stat('race/secret.txt').st_size)\n"
	             "    except PermissionError:\n"
	             "        got['denied'] += 1\n"
	             "    except FileNotFoundError:\n"
	             "        got['missing'] += 1\n"
	             "    try:\n"
	             "        listed.update(os.listdir('race'))\n"
	             "    except OSError:\n"
	             "        pass\n"
	             "    if i % 60 == 0:\n"
	             "        try:\n"
	             "            with open('race/w%d.txt' % i, 'w') as f:\n"
	             "                f.write('w')\n"
	             "        except OSError:\n"
	             "            pass\n"
	             "    if i % 60 == 30:\n"
	             "        try:\n"
	             "            os.makedirs('race/d%d/e' % i)\n"
	             "        except OSError:\n"
	             "            pass\n"
	             "[got['other'], 'marker.txt' in listed, got['inside'] > 0,\n"
	             " got['inside'] + got['denied'] + got['missing'], got['denied']]",
	             NULL);
	kill(flipper, SIGKILL);
	waitpid(flipper, NULL, 0);
	no_secret(r);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	res = mcpc_json(e2e_member(mcpc_structured(r), "result"));
	cr_assert(strncmp(res, "[[],false,true,3000,", 20) == 0, "%s", res);
	cr_log_info("swapped symlink: %s (the last number: requests that met the link)", res);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

Test(ws_attack, a_fifo_is_refused_without_hanging)
{
	json_object *r;
	int64_t t0;

	start(RW);
	cr_assert_eq(mkfifo(in_ws("fifo"), 0666), 0);
	t0 = mcpc_now_ms();
	r = ok_result(
	    "import os, stat\n" TRY_EACH
	    "[attempt(open, 'fifo'), attempt(open, 'fifo', 'rb'), attempt(open, 'fifo', 'w'),\n"
	    " attempt(open, 'fifo', 'a'), stat.S_ISFIFO(os.stat('fifo').st_mode)]",
	    "[" DENIED "," DENIED "," DENIED "," DENIED ",true]");
	cr_assert_lt(mcpc_now_ms() - t0, 5000, "the FIFO made the call wait");
	(void)r;
	outside_unchanged();
	e2e_stop();
}

Test(ws_attack, a_device_is_refused)
{
	start(RW);
	if (mknod(in_ws("zero"), S_IFCHR | 0666, makedev(1, 5)) < 0 ||
	    mknod(in_ws("null"), S_IFCHR | 0666, makedev(1, 3)) < 0)
		cr_skip_test("mknod of a device in the workspace: %s (it needs CAP_MKNOD outside a "
		             "user namespace)",
		             strerror(errno));
	ok_result(
	    "import os\n" TRY_EACH
	    "[attempt(open, 'zero', 'rb'), attempt(open, 'null'), attempt(open, 'null', 'w'),\n"
	    " attempt(open, 'null', 'a')]",
	    "[" DENIED "," DENIED "," DENIED "," DENIED "]");
	outside_unchanged();
	e2e_stop();
}

Test(ws_attack, a_socket_is_refused)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int s;

	start(RW);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(s, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", in_ws("sock"));
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	cr_assert_eq(listen(s, 1), 0);
	ok_result("import os\n" TRY_EACH "[attempt(open, 'sock'), attempt(open, 'sock', 'w')]",
	          "[" DENIED "," DENIED "]");
	close(s);
	outside_unchanged();
	e2e_stop();
}

/* The names beneath the upper directory of the overlay, one line each, into out. */
static char upper_names[4096];
static int upper_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(upper_names);

	(void)st;
	(void)type;
	if (f->level > 0)
		snprintf(upper_names + n, sizeof(upper_names) - n, "%s\n", path + f->base);
	return 0;
}

/* Start safepy run with a writable workspace dir that must be refused: a call could change
 * what the server runs. Nothing is written in it. */
static void start_refused(const char *dir)
{
	char *out = NULL, *err = NULL;
	struct stat st;
	int status, planted;

	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN,
	                          ARGS("run", "--workspace", dir, "--workspace-write", "-c",
	                               "open('planted.txt', 'w').write('x')"),
	                          NULL, 30000, &out, &err, &status),
	             0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0, "%s: status 0x%x", dir, status);
	planted = stat(e2e_fmt("%s/planted.txt", dir), &st) == 0;
	if (planted) /* (a build that let it through: the file goes before the failure) */
		unlink(e2e_fmt("%s/planted.txt", dir));
	cr_assert(!planted, "a file was written in %s", dir);
	cr_assert(strstr(err, "a call could change what the server runs"), "%s: %s", dir, err);
	free(out);
	free(err);
}

/* The copy of safepy in own, started with the writable workspace dir, does not replace its
 * zygote: refused at start (at_start), else each write refused as on another mount. */
static void own_unchanged(const char *own, const char *dir, int at_start)
{
	char *out = NULL, *err = NULL;
	struct stat st;
	off_t size;
	int status;

	cr_assert_eq(mcpc_run_cmd(e2e_fmt("%s/safepy", own),
	                          ARGS("run", "--workspace", dir, "--workspace-write", "-c",
	                               at_start ? "open('safepy-zygote', 'w').write('planted')"
	                                        : "import os, json\n" TRY_EACH
	                                          "print(json.dumps([attempt(open, "
	                                          "'tools/safepy-zygote', 'w'), attempt(os.remove, "
	                                          "'tools/safepy-zygote')], separators=',:'))"),
	                          NULL, 30000, &out, &err, &status),
	             0);
	if (at_start) {
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0, "%s: status 0x%x: %s", dir,
		          status, out);
		cr_assert(strstr(err, "a call could change what the server runs"), "%s: %s", dir,
		          err);
	} else
		cr_assert_str_eq(out, "[" MOUNTED "," MOUNTED "]\n", "%s", err);
	free(out);
	free(err);
	cr_assert_eq(stat(e2e_fmt("%s/safepy-zygote", own), &st), 0);
	size = st.st_size;
	cr_assert_eq(stat(e2e_fmt("%s-zygote", SAFEPY_BIN), &st), 0);
	cr_assert_eq(size, st.st_size, "the copy's zygote was replaced");
}

/* A writable workspace that holds the system's or safepy's programs and libraries, or lies in
 * them, is refused at start: a call could change what the server runs (the interpreter's zip
 * of its standard library in /usr/lib, read by the next zygote before its sandbox: V56b H1; the
 * zygote itself through an overlay whose upper directory is safepy's: V62b H2), by what its
 * mount shows (a workspace in a bind mount of a module directory, or under a mount covered by
 * such a bind: V62b H1). Nothing on a mount within a writable workspace is changed, mounted
 * before the start or after (a bind of safepy's directory: V61d H1; of the modules: V62b H3):
 * a module a call wrote in scipy's directory was imported by a later call as the library's
 * own (V55c H1). Run in a private mount namespace over an overlay of /usr/lib/python3 and a
 * copy of safepy's directory (what is written lands in directories of the test's; the builds
 * before wrote the modules and replaced the copy's zygote). */
Test(ws_attack, the_servers_own_files_are_not_changed_through_the_workspace)
{
	const char *lib = "/usr/lib/python3", *dp = "/usr/lib/python3/dist-packages";
	char up[128], wk[128], opts[512], bin[PATH_MAX], own[192], *out = NULL, *err = NULL;
	const char *refused[] = {"/", lib, bin};
	struct stat st;
	int status;

	/* safepy's own directory, and the system's, at start */
	snprintf(bin, sizeof(bin), "%s", SAFEPY_BIN);
	*strrchr(bin, '/') = '\0';
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		start_refused(refused[i]);
	if (geteuid() != 0 || stat(e2e_fmt("%s/yaml/__init__.py", dp), &st) < 0)
		cr_skip_test("needs root and %s/yaml: an overlay in a private mount namespace", dp);
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	tree();
	snprintf(up, sizeof(up), "%s/up", base);
	snprintf(wk, sizeof(wk), "%s/wk", base);
	snprintf(own, sizeof(own), "%s/own", base);
	cr_assert_eq(mkdir(up, 0755), 0);
	cr_assert_eq(mkdir(wk, 0755), 0);
	cr_assert_eq(mkdir(own, 0755), 0);
	cr_assert_eq(mkdir(in_ws("lib"), 0755), 0);
	cr_assert_eq(mkdir(in_ws("tools"), 0755), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", lib, up, wk);
	if (mount("overlay", lib, "overlay", 0, opts) < 0)
		cr_skip_test("no overlay here: %s", strerror(errno));

	/* a copy of safepy's directory bound into the workspace, or the upper directory of an
	 * overlay that is the workspace: the copy's zygote is what the copy's server runs (a
	 * build whose zygote is built elsewhere, the sanitizers', runs that one: nothing to copy) */
	if (stat(e2e_fmt("%s-zygote", SAFEPY_BIN), &st) == 0) {
		cr_assert_eq(
		    mcpc_run_cmd("/bin/cp",
		                 ARGS("-a", SAFEPY_BIN, e2e_fmt("%s-zygote", SAFEPY_BIN), own),
		                 NULL, 30000, &out, &err, &status),
		    0);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "cp: %s", err);
		free(out);
		free(err);
		cr_assert_eq(mount(own, in_ws("tools"), NULL, MS_BIND, NULL), 0, "bind: %s",
		             strerror(errno));
		own_unchanged(own, ws, 0);
		umount2(in_ws("tools"), MNT_DETACH);
		snprintf(opts, sizeof(opts), "lowerdir=%s/sub,upperdir=%s,workdir=%s/wk2", ws, own,
		         base);
		cr_assert_eq(mkdir(e2e_fmt("%s/wk2", base), 0755), 0);
		cr_assert_eq(mount("overlay", in_ws("tools"), "overlay", 0, opts), 0, "overlay: %s",
		             strerror(errno));
		own_unchanged(own, in_ws("tools"), 1);
		umount2(in_ws("tools"), MNT_DETACH);
	}

	/* the interpreter's modules bound into the workspace (read only), the workspace among
	 * them, or among them through a mount covered by another above it (V62b H1) */
	cr_assert_eq(mount(lib, in_ws("lib"), NULL, MS_BIND, NULL), 0, "bind: %s", strerror(errno));
	e2e_start(ARGS("--workspace", ws, "--workspace-write"));
	ok_result("import os\n" TRY_EACH "[attempt(open, 'lib/dist-packages/planted.py', 'w'),\n"
	          " attempt(os.remove, 'lib/dist-packages/yaml/__init__.py')]",
	          "[" MOUNTED "," MOUNTED "]");
	e2e_stop();
	start_refused(in_ws("lib/dist-packages"));
	start_refused(in_ws("lib/dist-packages/yaml"));
	umount2(in_ws("lib"), MNT_DETACH);
	cr_assert_eq(mkdir(in_ws("lib/yaml"), 0755), 0);
	cr_assert_eq(mount("tmpfs", in_ws("lib/yaml"), "tmpfs", 0, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount(dp, in_ws("lib"), NULL, MS_BIND, NULL), 0, "bind: %s", strerror(errno));
	start_refused(in_ws("lib/yaml"));
	umount2(in_ws("lib"), MNT_DETACH);
	umount2(in_ws("lib/yaml"), MNT_DETACH);
	cr_assert_eq(rmdir(in_ws("lib/yaml")), 0);

	/* bound after the start: nothing on a mount within the workspace is changed */
	e2e_start(ARGS("--workspace", ws, "--workspace-write"));
	ok_result("1", "1");
	cr_assert_eq(mount(lib, in_ws("lib"), NULL, MS_BIND, NULL), 0, "bind: %s", strerror(errno));
	ok_result("import os\n" TRY_EACH
	          "r = [attempt(open, 'lib/dist-packages/planted.py', 'w'),\n"
	          "     attempt(open, 'lib/dist-packages/yaml/planted.py', 'w'),\n"
	          "     attempt(os.mkdir, 'lib/dist-packages/planted'),\n"
	          "     attempt(os.remove, 'lib/dist-packages/yaml/__init__.py'),\n"
	          "     attempt(os.chmod, 'lib/dist-packages/yaml/__init__.py', 0o600)]\n"
	          "with open('planted.txt', 'w') as f:\n"
	          "    f.write('x = 1\\n')\n"
	          "r + [attempt(os.rename, 'planted.txt', 'lib/dist-packages/yaml/planted.py'),\n"
	          "     os.path.exists('planted.txt')]",
	          "[" MOUNTED "," MOUNTED "," MOUNTED "," MOUNTED "," MOUNTED "," MOUNTED ",true]");
	e2e_stop();
	/* nothing reached the module directories */
	cr_assert_eq(nftw(up, upper_one, 16, FTW_PHYS), 0);
	cr_assert_str_eq(upper_names, "");
	cr_assert_eq(stat(e2e_fmt("%s/yaml/__init__.py", dp), &st), 0);
	cr_assert_str_eq(slurp(in_ws("planted.txt")), "x = 1\n");
	umount2(in_ws("lib"), MNT_DETACH);
	umount2(lib, MNT_DETACH);
}

/* A write past the file size limit fails with EFBIG and its SIGXFSZ stays pending: a loop of
 * such writes (2000, past ENGINE_SIGNALS_MAX) is not a signal-delivery stop each for the
 * supervisor to serve, and the call goes on. */
Test(ws_attack, writes_past_the_file_size_limit_fail_without_a_signal_each)
{
	start(RW);
	ok_result("f = open('past.bin', 'wb', buffering=0)\nf.seek(300 << 20)\nn = 0\n"
	          "for i in range(2000):\n    try:\n        f.write(b'x')\n"
	          "    except OSError as e:\n        n += e.errno == " E_EFBIG "\n"
	          "f.close()\nn",
	          "2000");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A 10 GB sparse file: refused at once (larger than a call may read, or copy to append to it:
 * no later call can, and the message says so), its size still known. */
Test(ws_attack, a_10_gb_sparse_file_is_refused_at_once)
{
	int fd;
	int64_t t0;

	start(RW);
	fd = open(in_ws("big"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 10LL << 30), 0, "%s", strerror(errno));
	close(fd);
	t0 = mcpc_now_ms();
	ok_result("import os\n" TRY_EACH "r = attempt(open, 'big', 'rb')\n"
	          "a = attempt(open, 'big', 'a')\n"
	          "try:\n    open('big', 'r+')\nexcept OSError as e:\n    m = str(e)\n"
	          "[r[:2], os.path.getsize('big'), a[:2], 'can be read, not changed' in m]",
	          "[[\"OSError\"," E_EFBIG "],10737418240,[\"OSError\"," E_EFBIG "],true]");
	cr_assert_lt(mcpc_now_ms() - t0, 10000);
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* Hundreds of opens: at most 60 files open at once (the worker's fd limit); 1000 opens to write
 * in a call. Reading 1500 files one at a time, each closed before the next, failed at the
 * 1001st with EMFILE, as if closed files stayed open: a file opened to read is not counted now
 * (each open is still a request, bounded per call). */
Test(ws_attack, hundreds_of_opens_are_bounded)
{
	start(RW);
	ok_result("fs, err = [], None\n"
	          "try:\n"
	          "    for i in range(500):\n"
	          "        fs.append(open('data.csv'))\n"
	          "except OSError as e:\n"
	          "    err = [e.errno, 'Too many open files' in str(e)]\n"
	          "[len(fs), err, fs[-1].read(3)]",
	          "[60,[" E_EMFILE ",true],\"a,b\"]");
	ok_result("n, err = 0, None\n"
	          "try:\n"
	          "    for i in range(1500):\n"
	          "        with open('data.csv') as f:\n"
	          "            f.read(1)\n"
	          "        n += 1\n"
	          "except OSError as e:\n"
	          "    err = e.errno\n"
	          "[n, err]",
	          "[1500,null]");
	/* Opens to write stay bounded in all, closed or not, with a message that says so. */
	ok_result("n, err = 0, None\n"
	          "try:\n"
	          "    for i in range(1500):\n"
	          "        with open('w.txt', 'a') as f:\n"
	          "            f.write('x')\n"
	          "        n += 1\n"
	          "except OSError as e:\n"
	          "    err = [e.errno, 'open 1000 to write in all' in str(e)]\n"
	          "[n, err]",
	          "[1000,[" E_EMFILE ",true]]");
	cr_assert_eq(strlen(slurp(in_ws("w.txt"))), 1000);
	/* Writes too: no file was emptied by an open the worker could not take. */
	ok_result("fs, err = [], None\n"
	          "try:\n"
	          "    for i in range(100):\n"
	          "        fs.append(open(f'o{i}.txt', 'w'))\n"
	          "except OSError as e:\n"
	          "    err = e.errno\n"
	          "[len(fs), err]",
	          "[60," E_EMFILE "]");
	cr_assert_null(slurp(in_ws("o60.txt")));
	cr_assert_not_null(slurp(in_ws("o59.txt")));
	no_hidden_files();
	e2e_ok("1");
	outside_unchanged();
	e2e_stop();
}

/* The Python layer keeps the raw fds and the real open's other ways in out of reach. */
Test(ws_attack, the_python_layer_keeps_fds_and_raw_opens_away)
{
	const struct e2e_refusal open_refused = {"error", "PermissionError", "open is not allowed"};
	const struct {
		const char *code;
		struct e2e_refusal want;
	} cases[] = {
	    {"open(3)", open_refused},
	    {"open(0)", open_refused},
	    {"import io\nio.FileIO(3)", open_refused},
	    {"open('data.csv', 'rb', opener=lambda p, f: 3)", open_refused},
	    {"open('data.csv', 'rb', opener=lambda p, f: 1)", open_refused},
	    {"import io\nio.FileIO('data.csv')", open_refused},
	    {"import io\nio.open_code('/etc/passwd')", E2E_EACCES},
	    {"open.__self__", E2E_DUNDER},
	    {"import os\nos.read", (struct e2e_refusal){"error", "AttributeError", "'read'"}},
	    {"import os\nos.open", (struct e2e_refusal){"error", "AttributeError", "'open'"}},
	    {"import os\nos.write", (struct e2e_refusal){"error", "AttributeError", "'write'"}},
	    {"import os\nos.dup", (struct e2e_refusal){"error", "AttributeError", "'dup'"}},
	    {"import os\nos.chdir('/')",
	     (struct e2e_refusal){"error", "AttributeError", "'chdir'"}},
	    /* by name they ask the supervisor; relative to an fd, they are refused */
	    {"import os\nos.remove('data.csv', dir_fd=3)",
	     (struct e2e_refusal){"error", "PermissionError", "os.remove is not allowed"}},
	    {"import os\nos.rename('data.csv', 'x.csv', src_dir_fd=3)",
	     (struct e2e_refusal){"error", "PermissionError", "os.rename is not allowed"}},
	    {"import os\nos.rmdir('sub', dir_fd=0)",
	     (struct e2e_refusal){"error", "PermissionError", "os.rmdir is not allowed"}},
	    {"f = open('data.csv')\nimport io\nio.FileIO(f.fileno() + 1)", open_refused},
	};
	json_object *r;

	start(RW);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = e2e_call(cases[i].code, NULL);
		cr_assert_null(e2e_refusal_mismatch(r, &cases[i].want), "%s: %s", cases[i].code,
		               mcpc_json(r));
		no_secret(r);
	}
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	outside_unchanged();
	e2e_stop();
}

/* A file the call rewrites keeps its owner and mode, but never a set-user-ID or set-group-ID
 * bit: the new file is the supervisor's making, and must not become a program that runs as the
 * supervisor's user (root, when it was started as root). */
Test(ws_write, a_rewritten_file_keeps_its_owner_and_loses_its_setuid_bits)
{
	struct stat st;
	char tool[192], grp[192];
	int root = geteuid() == 0;

	start(RW);
	snprintf(tool, sizeof(tool), "%s", in_ws("tool"));
	snprintf(grp, sizeof(grp), "%s", in_ws("grp"));
	put_file(tool, "#!/bin/sh\n");
	put_file(grp, "#!/bin/sh\n");
	cr_assert_eq(chmod(tool, 04755), 0);
	cr_assert_eq(chmod(grp, 02750), 0);
	if (root)
		cr_assert_eq(chown(tool, 65534, 65534), 0);
	/* chown clears the bit; the workspace's owner (root) may write another's file only as
	 * its mode lets others. */
	if (root)
		cr_assert_eq(chmod(tool, 04757), 0);
	ok_result("open('tool', 'ab').close()\nopen('grp', 'a').write('echo\\n')\n1", "1");
	cr_assert_eq(stat(tool, &st), 0);
	cr_assert_eq(st.st_mode & 07777, root ? 0757 : 0755, "mode %o",
	             (unsigned)(st.st_mode & 07777));
	if (root)
		cr_assert(st.st_uid == 65534 && st.st_gid == 65534, "owner %u:%u",
		          (unsigned)st.st_uid, (unsigned)st.st_gid);
	cr_assert_str_eq(slurp(tool), "#!/bin/sh\n");
	cr_assert_eq(stat(grp, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0750, "mode %o", (unsigned)(st.st_mode & 07777));
	cr_assert_str_eq(slurp(grp), "#!/bin/sh\necho\n");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A server started as root makes a new file its directory owner's, as the owner's own would
 * be (it was root's, in the user's folder: a file the user could not change). */
Test(ws_write, a_new_file_is_its_directory_owners)
{
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("only a server started as root gives files away");
	start(RW);
	/* Another user's directory that lets others write (the workspace's owner is root). */
	cr_assert_eq(chown(in_ws("sub"), 65534, 65534), 0);
	cr_assert_eq(chmod(in_ws("sub"), 0777), 0);
	ok_result("open('sub/new.txt', 'w').write('n')\nopen('top.txt', 'w').write('t')\n1", "1");
	cr_assert_eq(stat(in_ws("sub/new.txt"), &st), 0);
	cr_assert(st.st_uid == 65534 && st.st_gid == 65534, "owner %u:%u", (unsigned)st.st_uid,
	          (unsigned)st.st_gid);
	cr_assert_eq(stat(in_ws("top.txt"), &st), 0);
	cr_assert(st.st_uid == 0, "a file in root's directory went to %u", (unsigned)st.st_uid);
	no_hidden_files();
	e2e_stop();
}

/* A file written under several spellings of its path is one write, named by its shortest
 * path: ".." cannot make the answer long or list a file twice. */
Test(ws_write, a_file_has_one_name_however_it_is_spelled)
{
	json_object *r;

	start(RW);
	r = ok_result("open('sub/../y.txt', 'w').write('a')\n"
	              "open('./sub/../sub/../y.txt', 'a').write('b')\n"
	              "open('sub/' + '../sub/' * 200 + 'z.txt', 'w').write('c')",
	              "1");
	cr_assert(strstr(mcpc_json(r), "\"files\":[{\"path\":\"y.txt\",\"bytes\":2},"
	                               "{\"path\":\"sub\\/z.txt\",\"bytes\":1}]"),
	          "%s", mcpc_json(r));
	cr_assert_str_eq(slurp(in_ws("y.txt")), "ab");
	/* Read back in the call under another spelling: its own pending write. */
	ok_result("open('n.txt', 'w').write('new')\nimport os\n"
	          "[open('sub/../n.txt').read(), os.path.getsize('./sub/../n.txt'),\n"
	          " 'n.txt' in os.listdir('sub/..')]",
	          "[\"new\",3,true]");
	cr_assert_str_eq(slurp(in_ws("sub/z.txt")), "c");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The copies behind "a" and "r+" opens count against the bytes a call may write: opening a
 * large file again and again cannot make the supervisor copy without end. */
Test(ws_write, copies_for_appends_count_against_the_calls_bytes)
{
	start(RW);
	for (int i = 0; i < 5; i++)
		ok_result(e2e_fmt("with open('big%d.bin', 'wb') as f:\n    f.truncate(64 << 20)\n"
		                  "0",
		                  i),
		          "0");
	/* Each file opened to append is a copy of it, and every copy counts: four of 64 MiB
	 * fill the call's 256 MiB. */
	ok_result("n = 0\n"
	          "try:\n"
	          "    for i in range(5):\n"
	          "        open(f'big{i}.bin', 'ab').close()\n"
	          "        n += 1\n"
	          "    r = [n]\n"
	          "except OSError as e:\n"
	          "    r = [n, e.errno]\n"
	          "r",
	          "[4," E_EDQUOT "]");
	/* A file opened again in the same call is the same hidden file: no copy again. */
	ok_result("for i in range(10):\n    open('big0.bin', 'ab').close()\n"
	          "import os\nos.path.getsize('big0.bin')",
	          "67108864");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* ---- Attacks, by hand on the wire --------------------------------------------------------- */

/* Requests written to the channel as native code would (ipc.h): req() sends one and returns
 * the reply's status; an fd that comes with it is dropped by read(2). */
static const char wire[] = "import os, struct\n"
                           "def req(kind, body, rid=7):\n"
                           "    p = struct.pack('<IB', rid, kind) + body\n"
                           "    f = struct.pack('<IB', len(p), ord('Q')) + p\n"
                           "    while f:\n"
                           "        f = f[os.write(3, f):]\n"
                           "    h = b''\n"
                           "    while len(h) < 5:\n"
                           "        h += os.read(3, 5 - len(h))\n"
                           "    n, t = struct.unpack('<IB', h)\n"
                           "    p = b''\n"
                           "    while len(p) < n:\n"
                           "        p += os.read(3, n - len(p))\n"
                           "    i, st = struct.unpack('<Ii', p[:8])\n"
                           "    return [st, p[8:]] if kind == 4 else st\n"
                           "def w(mode):\n"
                           "    return struct.pack('<I', mode)\n";

Test(ws_native, malformed_requests_are_answered_with_an_errno)
{
	json_object *r;

	start(ARGS(NATIVE_ARGS));
	r = e2e_ok(
	    e2e_fmt("%s"
	            "ws = b'%s'\n"
	            "at0 = struct.pack('<IIQ', 0, 0, 0)\n"
	            "[req(2, w(0) + b'data\\0.csv'), req(2, w(0) + b'a' * 5000),\n"
	            " req(2, w(0) + b'\\xff\\xfe.csv'), req(2, w(0) + b'\\xc0\\xaf'),\n"
	            " req(2, w(9) + b'data.csv'), req(2, w(0xffffffff) + b'data.csv'),\n"
	            " req(3, w(2) + b'data.csv'), req(3, w(0x80000001) + b'data.csv'),\n"
	            " req(2, w(0)), req(3, w(0)), req(4, at0)[0],\n"
	            " req(2, w(0) + b'../secret.txt'), req(2, w(0) + b'%s/secret.txt'),\n"
	            " req(2, w(0) + ws + b'x/secret.txt'), req(2, w(0) + ws + b'/../secret.txt'),\n"
	            " req(2, w(0) + b'/proc/self/environ'), req(4, at0 + b'..')[0],\n"
	            " req(4, at0 + b'%s')[0],\n"
	            " req(3, w(0) + b'../secret.txt'), req(2, w(0) + b'.safepy-tmp-1'),\n"
	            " req(2, w(1) + b'new.txt'), req(2, w(0) + b'data\\0/../../secret.txt'),\n"
	            " req(4, at0 + b'sub\\0..')[0], req(2, w(0) + b'data.csv')]",
	            wire, ws, outside, outside));
	/* EINVAL: NUL, invalid UTF-8, unknown mode or flags; ENAMETOOLONG; ENOENT: empty; EACCES:
	 * outside, hidden files; EROFS: a write without --workspace-write. */
	e2e_assert_result(r, "malformed requests",
	                  "[-22,-36,-22,-22,-22,-22,-22,-22,-2,-2,-2,-13,-13,-13,-13,-13,-13,-13,"
	                  "-13,-13,-30,-22,-22,0]");
	no_secret(r);
	outside_unchanged();
	cr_assert_null(slurp(in_ws("new.txt")));
	e2e_stop();
}

/* Removals and renames asked on the wire meet the same checks as opens: beneath the
 * workspace, no hidden file, no link, no directory renamed, no file removed through a link
 * to a directory outside. What is refused changes nothing; what is allowed is kept. */
Test(ws_native, removals_and_renames_stay_beneath_the_workspace)
{
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--workspace-write"));
	cr_assert_eq(symlink(e2e_fmt("%s/secret.txt", outside), in_ws("link.txt")), 0);
	cr_assert_eq(symlink(outside, in_ws("linkdir")), 0);
	r = e2e_ok(
	    e2e_fmt("%s"
	            "out = b'%s'\n"
	            "def mv(a, b):\n"
	            "    return req(8, a + b'\\0' + b)\n"
	            "[req(7, w(0) + b'../secret.txt'), req(7, w(0) + out + b'/secret.txt'),\n"
	            " req(7, w(0) + b'.safepy-tmp-1'), req(7, w(0) + b'linkdir/secret.txt'),\n"
	            " req(7, w(0) + b'link.txt'), req(7, w(2) + b'data.csv'),\n"
	            " req(7, w(0) + b'sub'), req(7, w(1) + b'data.csv'), req(7, w(1) + b'.'),\n"
	            " req(7, w(0) + b'/proc/self/environ'), req(7, w(0)),\n"
	            " mv(b'data.csv', b'../x.csv'), mv(b'../secret.txt', b'x.txt'),\n"
	            " mv(b'data.csv', b'.safepy-tmp-x'), mv(b'data.csv', b'sub/\\0x'),\n"
	            " mv(b'sub', b'sub2'), mv(b'nums.txt', b'linkdir/n.txt'),\n"
	            " mv(b'link.txt', b'l2.txt'), mv(b'nums.txt', b'link.txt'),\n"
	            " mv(b'data.csv', out + b'/d.csv'), mv(b'', b'x'),\n"
	            " mv(b'nums.txt', b'n2.txt'), req(7, w(0) + b'data.csv')]",
	            wire, outside));
	/* EACCES: outside, hidden, links; EINVAL: flags, NUL, "."; EISDIR; ENOTDIR; EXDEV: a
	 * directory renamed; ENOENT: empty. */
	e2e_assert_result(r, "removals and renames",
	                  "[-13,-13,-13,-13,-13,-22,-21,-20,-22,-13,-2,-13,-13,-13,-22,-18,-13,-13,"
	                  "-13,-13,-2,0,0]");
	no_secret(r);
	outside_unchanged();
	cr_assert_null(slurp(in_ws("data.csv")));
	cr_assert_null(slurp(in_ws("nums.txt")));
	cr_assert_str_eq(slurp(in_ws("n2.txt")), "1 2\n3 4\n");
	cr_assert(is_dir(in_ws("sub")));
	no_hidden_files();
	e2e_stop();
}

/* Permission bits and times asked on the wire: the same checks as a write (beneath the
 * workspace, no hidden file, no link, a file the server may replace), no bits beyond 0777,
 * no directory the call did not make, no time that is not one. What is allowed changes the
 * call's copy, which its commit puts in place. */
Test(ws_native, permissions_and_times_stay_beneath_the_workspace)
{
	struct stat st;
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--workspace-write"));
	cr_assert_eq(symlink(e2e_fmt("%s/secret.txt", outside), in_ws("link.txt")), 0);
	cr_assert_eq(symlink(outside, in_ws("linkdir")), 0);
	r = e2e_ok(e2e_fmt(
	    "%s"
	    "out = b'%s'\n"
	    "def t(a, an, m, mn):\n"
	    "    return struct.pack('<qIqI', a, an, m, mn)\n"
	    "ok = t(5, 0, 6, 0)\n"
	    "[req(9, w(0o777) + b'../secret.txt'), req(9, w(0o777) + out + b'/secret.txt'),\n"
	    " req(9, w(0o777) + b'link.txt'), req(9, w(0o777) + b'linkdir/secret.txt'),\n"
	    " req(9, w(0o777) + b'.safepy-tmp-1'), req(10, w(0) + ok + b'link.txt'),\n"
	    " req(10, w(0) + ok + b'/proc/self/environ'),\n"
	    " req(9, w(0o4755) + b'data.csv'), req(9, w(0o1777) + b'data.csv'),\n"
	    " req(9, w(0o700) + b'sub'), req(10, w(0) + ok + b'sub'),\n"
	    " req(10, w(0) + t(1, 0, 2, 10**9) + b'data.csv'), req(10, w(1) + ok + "
	    "b'data.csv'),\n"
	    " req(9, w(0o600) + b'none.txt'), req(9, w(0o600)),\n"
	    " req(9, w(0o600) + b'nums.txt'), req(10, w(0) + ok + b'nums.txt')]",
	    wire, outside));
	/* EACCES: outside, links, hidden; EPERM: bits, a directory not made; EINVAL: a time, the
	 * flags; ENOENT. */
	e2e_assert_result(r, "permissions and times",
	                  "[-13,-13,-13,-13,-13,-13,-13,-1,-1,-1,-1,-22,-22,-2,-2,0,0]");
	no_secret(r);
	outside_unchanged();
	cr_assert_eq(stat(in_ws("nums.txt"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(st.st_mtim.tv_sec, 6);
	cr_assert_eq(stat(in_ws("data.csv"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(stat(in_ws("sub"), &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
	no_hidden_files();
	e2e_stop();
}

/* A request that is not well formed ends its call (the supervisor kills the runner) and
 * nothing else: the next call runs. */
Test(ws_native, requests_that_are_not_well_formed_end_the_call)
{
	static const char *const bad[] = {
	    /* shorter than the request header */
	    "p = b'\\x07\\x00'\nput(struct.pack('<IB', len(p), ord('Q')) + p)",
	    /* an OPEN, a STAT without their word */
	    "p = struct.pack('<IB', 7, 2) + b'\\x00\\x00'\nput(struct.pack('<IB', len(p), "
	    "ord('Q')) + p)",
	    "p = struct.pack('<IB', 7, 3) + b'\\x01'\nput(struct.pack('<IB', len(p), ord('Q')) + "
	    "p)",
	    /* a rename with one path */
	    "p = struct.pack('<IB', 7, 8) + b'data.csv'\nput(struct.pack('<IB', len(p), ord('Q')) "
	    "+ p)",
	    /* a removal without its word */
	    "p = struct.pack('<IB', 7, 7) + b'\\x00'\nput(struct.pack('<IB', len(p), ord('Q')) + "
	    "p)",
	    /* a kind no one knows */
	    "p = struct.pack('<IB', 7, 99) + b'data.csv'\nput(struct.pack('<IB', len(p), ord('Q')) "
	    "+ p)",
	    /* a reply's frame type sent to the supervisor */
	    "p = struct.pack('<Ii', 7, 0)\nput(struct.pack('<IB', len(p), ord('A')) + p)",
	};
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--workspace-write"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = e2e_call(e2e_fmt("import os, struct\n"
		                     "def put(b):\n"
		                     "    while b:\n"
		                     "        b = b[os.write(3, b):]\n"
		                     "open('before.txt', 'w').write('x')\n"
		                     "%s\n"
		                     "os.read(3, 5)",
		                     bad[i]),
		             NULL);
		cr_assert_str_eq(mcpc_status(r), "crashed", "%s: %s", bad[i], mcpc_json(r));
		cr_assert(strstr(mcpc_err_str(r, "message"), "broke the protocol"), "%s",
		          mcpc_json(r));
		cr_assert_null(slurp(in_ws("before.txt")), "a killed call kept its file");
		no_secret(r);
		e2e_ok("1");
	}
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The fd the supervisor passes is the file's alone: native code holding it reaches nothing
 * else (no openat beneath it; no directory fd is ever passed). */
Test(ws_native, a_passed_fd_reaches_only_its_file)
{
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--allow-import", "ctypes", "--allow-import", "fcntl"));
	r = e2e_ok(e2e_fmt("import ctypes, os\n"
	                   "libc = ctypes.CDLL(None, use_errno=True)\n"
	                   "f = open('data.csv', 'rb')\n"
	                   "fd = f.fileno()\n"
	                   "o = libc.openat(fd, b'../out/secret.txt', 0)\n"
	                   "e1 = ctypes.get_errno()\n"
	                   "o2 = libc.openat(-100, b'%s/secret.txt', 0)\n"
	                   "e2 = ctypes.get_errno()\n"
	                   "[o, e1, o2, e2, f.read().decode()]",
	                   outside));
	e2e_assert_result(r, "openat", "[-1,13,-1,13,\"a,b\\n1,2\\n3,4\\n\"]");
	no_secret(r);
	/* A copy of its fd is the same file (numpy's fromfile makes one); the channel's is not
	 * made (the filter ends the call): every fd above the channel stays a workspace file. */
	r = e2e_ok("import ctypes, os, fcntl\n"
	           "libc = ctypes.CDLL(None, use_errno=True)\n"
	           "f = open('data.csv', 'rb')\n"
	           "c = libc.fcntl(f.fileno(), fcntl.F_DUPFD_CLOEXEC, 0)\n"
	           "[c > 3, os.pread(c, 3, 0).decode()]");
	e2e_assert_result(r, "a copy", "[true,\"a,b\"]");
	e2e_expect_status("import ctypes, fcntl\n"
	                  "ctypes.CDLL(None).fcntl(3, fcntl.F_DUPFD_CLOEXEC, 10)",
	                  NULL, "sandbox_violation");
	outside_unchanged();
	e2e_stop();
}

/* A file mapped would stay in the session's process after its fd is closed, past the check of
 * open fds, showing what the file holds later without a request: a worker maps no file. */
Test(ws_native, a_workspace_file_cannot_be_mapped)
{
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--allow-import", "ctypes"));
	e2e_expect_result("x = 1", "1");
	r = e2e_call("import ctypes\n"
	             "libc = ctypes.CDLL(None, use_errno=True)\n"
	             "libc.mmap.restype = ctypes.c_void_p\n"
	             "f = open('data.csv', 'rb')\n"
	             "p = libc.mmap(None, 4096, 1, 2, f.fileno(), 0)\n"
	             "f.close()\n"
	             "ctypes.string_at(p, 3)",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "sandbox_violation", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_json(r), "mmap"), "%s", mcpc_json(r));
	/* The session is as it was, and anonymous memory still works. */
	e2e_expect_result("import ctypes\nx + len(bytearray(1 << 20))", "1048577");
	e2e_stop();
}

/* A reply left unread in the channel when the call ends could carry a file's fd past the
 * checks into the session's next process: such a call keeps nothing, and the session goes
 * on as it was. */
Test(ws_native, a_reply_left_unread_keeps_nothing)
{
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--workspace-write"));
	e2e_ok("x = 41");
	r = e2e_call("import os, struct\n"
	             "open('kept.txt', 'w').write('lost')\n"
	             "p = struct.pack('<IB', 7, 2) + struct.pack('<I', 2) + b'data.csv'\n"
	             "f = struct.pack('<IB', len(p), ord('Q')) + p\n"
	             "while f:\n"
	             "    f = f[os.write(3, f):]\n"
	             "x = 0",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "WorkspaceError", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "unread"), "%s", mcpc_json(r));
	cr_assert_null(slurp(in_ws("kept.txt")), "the call kept a file");
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	/* Its state was not kept; the next call reads the session as it was. */
	e2e_assert_result(e2e_ok("x + 1"), "x + 1", "42");
	ok_result("open('after.txt', 'w').write('ok')", "2");
	cr_assert_str_eq(slurp(in_ws("after.txt")), "ok");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The filter tested an fd with all 64 bits, the kernel reads 32: native code closed fd 0 with
 * an fd whose upper half is set, and the file it opened next landed on fd 0, below the channel
 * the check of open fds started above. Kept there, it would write the committed file from the
 * session's later calls, past their quota and their rollback (the call was refused: a file at
 * 0-2). Such an fd fails with EBADF now: fd 0 stays /dev/null, the file opens above the
 * channel, where the call's end closes it, and a write through it with the upper half set
 * fails too. */
Test(ws_native, a_file_kept_below_the_channel_keeps_nothing)
{
	/* fd | 1 << 32: fd for the kernel. */
	static const char low[] = "import ctypes, os\n"
	                          "libc = ctypes.CDLL(None, use_errno=True)\n"
	                          "libc.syscall.restype = ctypes.c_long\n"
	                          "def high(fd):\n"
	                          "    return ctypes.c_uint64((1 << 32) | fd)\n";
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--allow-import", "ctypes", "--workspace-write"));
	e2e_ok("x = 41");
	r = e2e_ok(e2e_fmt("%s"
	                   "closed = [libc.syscall(3, high(0)), ctypes.get_errno()]\n"
	                   "fd = os.open('kept.txt', os.O_WRONLY | os.O_CREAT)\n"
	                   "wrote = [libc.syscall(1, high(fd), b'first', 5), ctypes.get_errno()]\n"
	                   "[closed, fd > 3, wrote]",
	                   low));
	e2e_assert_result(r, "close fd 0, open, write", "[[-1,9],true,[-1,9]]");
	cr_assert_str_eq(slurp(in_ws("kept.txt")), "", "the file holds what was written");
	e2e_assert_result(e2e_ok("x + 1"), "x + 1", "42");
	/* The same steps, reported: the close fails, fd 0 stays /dev/null, the file opens above
	 * the channel, and a close of it with the upper half set fails too. */
	e2e_assert_result(e2e_ok(e2e_fmt("%s"
	                                 "c = [libc.syscall(3, high(0)), ctypes.get_errno()]\n"
	                                 "fd = os.open('data.csv', os.O_RDONLY)\n"
	                                 "c2 = [libc.syscall(3, high(fd)), ctypes.get_errno()]\n"
	                                 "os.close(fd)\n"
	                                 "[c, fd > 3, c2]",
	                                 low)),
	                  "close and reopen", "[[-1,9],true,[-1,9]]");
	cr_assert_str_eq(slurp(in_ws("data.csv")), "a,b\n1,2\n3,4\n");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The filter tested "above the channel" on all 64 bits, the kernel reads an fd as 32: native
 * code wrote a workspace file, forged its own result, closed its channel with
 * close(0x100000003), moved the file to fd 3 (F_DUPFD_CLOEXEC from 3) and parked by forking in
 * its own code. The check of fds left open skipped fd 3: the call committed, and the session's
 * process wrote the committed file from its later calls (rolled back) and between calls. The
 * close fails with EBADF now (the file stays above the channel), and the check of open fds
 * refuses an fd 3 that is not the chain's channel: the call keeps nothing, its process is
 * killed, and the session goes on as it was. */
Test(ws_native, a_file_kept_on_the_channels_fd_keeps_nothing)
{
	static const char attack[] =
	    "import ctypes, os, struct, fcntl\n"
	    "libc = ctypes.CDLL(None, use_errno=True)\n"
	    "libc.syscall.restype = ctypes.c_long\n"
	    "out = (b'{\"status\":\"ok\",\"stdout\":\"forged\",\"stderr\":\"\",\"logs\":\"\",'\n"
	    "       b'\"result\":null,\"result_repr\":null,\"error\":null,\"truncated\":false}')\n"
	    "p = struct.pack('<I', 2) + out\n"
	    "frame = struct.pack('<IB', len(p), ord('J')) + p\n"
	    "f = open('victim.txt', 'w')\n"
	    "f.write('first\\n')\n"
	    "f.flush()\n"
	    "fd = f.fileno()\n"
	    "while frame:\n"
	    "    frame = frame[os.write(3, frame):]\n"
	    "libc.syscall(3, ctypes.c_uint64((1 << 32) | 3))\n"
	    "nfd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)\n"
	    "os.close(fd)\n"
	    "while True:\n"
	    "    try:\n"
	    "        v = os.fork()\n"
	    "    except OSError:\n"
	    "        os._exit(7)\n"
	    "    if v == 0:\n"
	    "        continue\n"
	    "    os.write(nfd, b'written outside its call\\n')\n"
	    "    if v & 0x40000000:\n"
	    "        cmd = (v >> 24) & 0x3f\n"
	    "        if cmd == 3:\n"
	    "            try:\n"
	    "                while os.waitpid(-1, os.WNOHANG)[0] > 0:\n"
	    "                    pass\n"
	    "            except ChildProcessError:\n"
	    "                pass\n"
	    "        if cmd == 1:\n"
	    "            os._exit(0)\n";
	json_object *r;

	start(ARGS(NATIVE_ARGS, "--allow-import", "ctypes", "--allow-import", "fcntl",
	           "--workspace-write"));
	e2e_ok("x = 41");
	r = e2e_call(attack, NULL);
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "WorkspaceError", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "left files open"), "%s", mcpc_json(r));
	cr_assert_null(slurp(in_ws("victim.txt")), "the call kept its file");
	/* The session is as it was before that call, and no process of it writes the file. */
	e2e_assert_result(e2e_ok("x + 1"), "x + 1", "42");
	/* The close itself, reported: it fails, and the channel still carries the answer. */
	e2e_assert_result(e2e_ok("import ctypes\n"
	                         "libc = ctypes.CDLL(None, use_errno=True)\n"
	                         "libc.syscall.restype = ctypes.c_long\n"
	                         "[libc.syscall(3, ctypes.c_uint64((1 << 32) | 3)), "
	                         "ctypes.get_errno(), x]"),
	                  "close(0x100000003)", "[-1,9,41]");
	ok_result("open('after.txt', 'w').write('ok')", "2");
	cr_assert_str_eq(slurp(in_ws("after.txt")), "ok");
	e2e_expect_result("x", "41");
	cr_assert_null(slurp(in_ws("victim.txt")), "a process of the session wrote the file");
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* The zygote's cache (matplotlib's font list, which every later zygote reads) is not part of
 * a workspace that holds it, nor is safepy's cache directory above it: what a call could write
 * there would reach every later start. */
Test(ws_attack, the_zygotes_cache_is_not_part_of_the_workspace)
{
	char cache[192], xdg[256];
	const char *args[] = {"--workspace",    ws,           "--workspace-write",
	                      "--allow-import", "matplotlib", NULL};
	const char *env[] = {xdg, NULL};
	json_object *r;

	tree();
	snprintf(cache, sizeof(cache), "%s", in_ws(".cache"));
	snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s", cache);
	e2e_start_with("2025-11-25", args, env);
	e2e_ok("1"); /* the zygote is up: it wrote what it writes there */
	/* What a zygote wrote there: the call can neither read nor change it. */
	{
		char path[256];
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/fontlist-v330.json", cache);
		put_file(path, "{}");
	}
	/* Links already in the workspace that lead into it: followed by a listing or a stat. */
	cr_assert_eq(symlink(".cache/safepy/matplotlib", in_ws("dlink")), 0);
	cr_assert_eq(symlink(".cache/safepy/matplotlib/fontlist-v330.json", in_ws("flink")), 0);
	r = e2e_ok(
	    "import os\n" TRY_EACH "d = '.cache/safepy/matplotlib'\n"
	    "[attempt(open, d + '/matplotlibrc', 'w'), attempt(open, d + '/fontlist-v330.json', "
	    "'a'),\n"
	    " attempt(os.listdir, d), attempt(os.stat, d), attempt(open, d + "
	    "'/fontlist-v330.json'),\n"
	    " attempt(open, os.getcwd() + '/' + d + '/y', 'w'), attempt(os.listdir, "
	    "'.cache/safepy'),\n"
	    " attempt(os.listdir, 'dlink'), attempt(os.stat, 'dlink'), attempt(os.stat, 'flink'),\n"
	    " attempt(os.listdir, 'dlink/.'), attempt(os.mkdir, d + '/new'),\n"
	    " attempt(os.makedirs, 'dlink/new/deeper')]");
	e2e_assert_result(r, "the cache",
	                  "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	                  "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	                  "," DENIED "]");
	{
		char path[256];
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/matplotlibrc", cache);
		cr_assert_null(slurp(path));
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/y", cache);
		cr_assert_null(slurp(path));
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/new", cache);
		cr_assert(!is_dir(path));
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/fontlist-v330.json", cache);
		cr_assert_str_eq(slurp(path), "{}");
	}
	/* Directories the cache's owner made in it (a request is looked for it as far up as they
	 * go), and more of them than are counted (looked for up to the workspace). */
	for (int many = 0; many < 2; many++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/s", cache);
		for (int i = 0; i < 5; i++) {
			cr_assert_eq(mkdir(path, 0755), 0);
			strcat(path, "/s");
		}
		for (int i = 0; many && i < 40; i++) {
			snprintf(path, sizeof(path), "%s/safepy/matplotlib/m%d", cache, i);
			cr_assert_eq(mkdir(path, 0755), 0);
		}
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/s/s/s/s/s/f", cache);
		put_file(path, "cache");
		r = e2e_ok(
		    "import os\n" TRY_EACH "d = '.cache/safepy/matplotlib/s/s/s/s/s'\n"
		    "[attempt(open, d + '/f'), attempt(open, d + '/g', 'w'),\n"
		    " attempt(os.listdir, d), attempt(os.stat, d + '/f'),\n"
		    " attempt(os.listdir, 'dlink/s/s'), attempt(os.stat, 'dlink/s/s/s/s/s/f'),\n"
		    " attempt(os.mkdir, d + '/new'), os.path.exists('.cache/safepy/matplotlib')]");
		e2e_assert_result(r, "the cache's own directories",
		                  "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
		                  "," DENIED ",false]");
		cr_assert_str_eq(slurp(path), "cache");
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/s/s/s/s/s/g", cache);
		cr_assert_null(slurp(path));
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/s/s/s/s/s/new", cache);
		cr_assert(!is_dir(path));
		snprintf(path, sizeof(path), "%s/safepy/matplotlib/s/s/s/s/s/f", cache);
		unlink(path);
		for (int i = 5; i > 0; i--) {
			snprintf(path, sizeof(path), "%s/safepy/matplotlib/%.*s", cache, 2 * i - 1,
			         "s/s/s/s/s");
			cr_assert_eq(rmdir(path), 0, "%s: %s", path, strerror(errno));
		}
		for (int i = 0; many && i < 40; i++) {
			snprintf(path, sizeof(path), "%s/safepy/matplotlib/m%d", cache, i);
			cr_assert_eq(rmdir(path), 0);
		}
	}
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}

/* A server that does not import matplotlib left the cache out of its workspace only when it
 * used it: one with the default imports served ~/.cache/safepy as any directory, and a call
 * wrote a matplotlibrc (or a style) there that every later zygote with matplotlib read, and
 * evaluated, before its sandbox (as the user, with the capabilities it had). Every server
 * leaves safepy's cache directory out of its workspace; and a zygote's matplotlib directory
 * that holds anything but matplotlib's font list is moved aside, whoever wrote it: matplotlib
 * starts with a new cache and the defaults, and the log says where the files went. */
Test(ws_attack, safepy_s_cache_is_left_out_whatever_the_server_imports)
{
	char cache[192], xdg[256], path[320];
	const char *plain[] = {"--workspace", ws, "--workspace-write", NULL};
	const char *mpl[] = {"--workspace", ws, "--allow-import", "matplotlib", NULL};
	const char *env[] = {xdg, NULL};
	json_object *r;
	char *log;

	tree();
	snprintf(cache, sizeof(cache), "%s", in_ws(".cache"));
	snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s", cache);
	e2e_start_with("2025-11-25", plain, env);
	r = e2e_ok("import os, shutil\n" TRY_EACH "d = '.cache/safepy'\n"
	           "[attempt(os.makedirs, d + '/matplotlib/stylelib'), attempt(os.listdir, d),\n"
	           " attempt(open, d + '/matplotlibrc', 'w'), attempt(os.mkdir, d + '/x'),\n"
	           " attempt(shutil.rmtree, d), attempt(os.rmdir, d), os.listdir('.cache')]");
	e2e_assert_result(r, "safepy's cache",
	                  "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	                  ",[\"safepy\"]]");
	e2e_stop();
	snprintf(path, sizeof(path), "%s/safepy/matplotlib", cache);
	cr_assert(!is_dir(path), "a call made %s", path);
	/* Files there by other means (an older server's workspace): moved aside, not read. */
	cr_assert_eq(mkdir(path, 0700), 0, "%s", strerror(errno));
	snprintf(path, sizeof(path), "%s/safepy/matplotlib/matplotlibrc", cache);
	put_file(path, "savefig.dpi: 7\nlines.linewidth: 9\n");
	e2e_start_with("2025-11-25", mpl, env);
	e2e_expect_result(
	    "import matplotlib\n"
	    "[matplotlib.rcParams['savefig.dpi'], matplotlib.rcParams['lines.linewidth']]",
	    "[\"figure\",1.5]");
	log = mcpc_stderr(&e2e_srv);
	cr_assert(log && strstr(log, "held matplotlibrc") && strstr(log, "moved aside to"),
	          "the log does not say the file was moved aside: %s", log ? log : "");
	free(log);
	e2e_stop();
	snprintf(path, sizeof(path), "%s/safepy/matplotlib/matplotlibrc", cache);
	cr_assert_null(slurp(path));
	outside_unchanged();
}

/* The font list in the cache is a file an earlier server wrote (or a call of one whose
 * workspace held the cache under another path): a list of another shape ("ttflist": 5) made
 * every later zygote with matplotlib fail to start. One that is not what matplotlib writes is
 * made again (and written again): the server starts and draws text. */
Test(ws_attack, a_font_list_of_another_shape_is_made_again)
{
	char cache[192], xdg[256], path[320];
	const char *mpl[] = {"--allow-import", "matplotlib", NULL};
	const char *env[] = {xdg, NULL};
	char *list;

	tree();
	snprintf(cache, sizeof(cache), "%s", in_ws(".cache"));
	snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s", cache);
	snprintf(path, sizeof(path), "%s", cache);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/safepy", cache);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/safepy/matplotlib", cache);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/safepy/matplotlib/fontlist-v330.json", cache);
	put_file(path, "{\"_version\": 330, \"_FontManager__default_weight\": \"normal\", "
	               "\"default_size\": null, \"defaultFamily\": {\"ttf\": \"DejaVu Sans\"}, "
	               "\"afmlist\": [], \"ttflist\": 5, \"__class__\": \"FontManager\"}");
	e2e_start_with("2025-11-25", mpl, env);
	e2e_expect_result("import matplotlib.pyplot as plt\n"
	                  "fig, ax = plt.subplots()\n"
	                  "ax.set_title('text')\n"
	                  "fig.canvas.draw()\n"
	                  "plt.close(fig)\n"
	                  "type(plt.matplotlib.font_manager.fontManager.ttflist).__name__",
	                  "\"list\"");
	e2e_stop();
	list = slurp(path);
	cr_assert(list && strstr(list, "\"ttflist\": ["), "the list was not written again: %.200s",
	          list ? list : "(none)");
}

/* The same cache reached through a bind mount inside the workspace (a home bound into a
 * container, a second path to one filesystem) is left out as well: it is known by identity,
 * not by path. Needs a mount namespace of the test's own (root, or skipped). */
Test(ws_attack, the_zygotes_cache_is_left_out_through_a_bind_mount_too)
{
	char home[64] = "/tmp/safepy-home-XXXXXX", xdg[128], bound[192], font[192];
	const char *args[] = {"--workspace",    ws,           "--workspace-write",
	                      "--allow-import", "matplotlib", NULL};
	const char *env[] = {xdg, NULL};
	json_object *r;

	tree();
	cr_assert_not_null(mkdtemp(home));
	cr_assert_eq(chmod(home, 0755), 0);
	snprintf(bound, sizeof(bound), "%s", in_ws("bound"));
	cr_assert_eq(mkdir(bound, 0755), 0);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(home, bound, NULL, MS_BIND, NULL) < 0) {
		rmdir(home);
		cr_skip_test("no mount namespace of our own here: %s", strerror(errno));
	}
	snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s/.cache", home);
	e2e_start_with("2025-11-25", args, env);
	e2e_ok("1"); /* the zygote is up */
	snprintf(font, sizeof(font), "%s/.cache/safepy/matplotlib/fontlist-v330.json", home);
	put_file(font, "{}");
	r = e2e_ok("import os\n" TRY_EACH "d = 'bound/.cache/safepy/matplotlib'\n"
	           "[attempt(open, d + '/matplotlibrc', 'w'),\n"
	           " attempt(open, d + '/fontlist-v330.json', 'a'),\n"
	           " attempt(open, d + '/fontlist-v330.json'), attempt(os.listdir, d),\n"
	           " attempt(os.stat, d), attempt(os.listdir, 'bound/.cache/safepy'),\n"
	           " os.listdir('bound/.cache')]");
	e2e_assert_result(r, "the cache through a bind mount",
	                  "[" DENIED "," DENIED "," DENIED "," DENIED "," DENIED "," DENIED
	                  ",[\"safepy\"]]");
	cr_assert_str_eq(slurp(font), "{}");
	cr_assert_null(slurp(e2e_fmt("%s/.cache/safepy/matplotlib/matplotlibrc", home)));
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
	umount2(bound, MNT_DETACH);
	nftw(home, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* pathlib's flavours kept the real path module as a class attribute (`_flavour.pathmod`): from
 * it the real os, sys and builtins. It is gone; paths work as before. */
Test(ws_attack, pathlib_hands_out_no_real_module)
{
	start(NULL);
	e2e_assert_result(
	    e2e_call(
	        "import pathlib\ntry:\n    pathlib.PurePosixPath('a')._flavour.pathmod\n"
	        "    r = 'reached'\nexcept AttributeError:\n    r = 'refused'\n"
	        "[r, str(pathlib.Path('sub') / 'x.txt'), pathlib.PurePosixPath('a/b').parent.name]",
	        NULL),
	    "pathmod", "[\"refused\",\"sub/x.txt\",\"a\"]");
	e2e_stop();
}

/* Bytes in the workspace's visible files. */
static long long ws_bytes_total;
static int ws_bytes_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)path;
	if (type == FTW_F && strncmp(path + f->base, ".safepy-tmp-", 12) != 0)
		ws_bytes_total += st->st_size;
	return 0;
}

static long long ws_bytes(void)
{
	ws_bytes_total = 0;
	cr_assert_eq(nftw(ws, ws_bytes_one, 16, FTW_PHYS), 0);
	return ws_bytes_total;
}

/* A write in flight keeps its file after the call closed it: threads inside one long write each
 * when the call ended wrote on while its one-thread copy was made (or failed to be), and what
 * they wrote after the last check of the quota was kept (300 MiB and more for 256). The call's
 * files are checked and kept once its process and threads are gone: whatever the timing, what
 * the workspace holds after the call is within the quota. */
Test(ws_native, writes_in_flight_when_a_call_ends_are_held_to_the_quota)
{
	json_object *r;
	long long before_bytes;

	start(ARGS(NATIVE_ARGS, "--allow-import", "ctypes", "--workspace-write", "--memory", "1G"));
	for (int round = 0; round < 3; round++) {
		before_bytes = ws_bytes();
		r = e2e_call_on(
		    &e2e_srv,
		    "import ctypes, threading, time\n"
		    "libc = ctypes.CDLL(None, use_errno=True)\n"
		    "libc.mmap.restype = ctypes.c_void_p\n"
		    "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, "
		    "ctypes.c_int, ctypes.c_int, ctypes.c_long]\n"
		    "libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]\n"
		    "libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]\n"
		    "libc.write.restype = ctypes.c_ssize_t\n"
		    "M = 1 << 20\n"
		    "with open('pre.bin', 'wb') as p:\n"
		    "    for i in range(180):\n"
		    "        p.write(b'P' * M)\n"
		    "files = [open('big%d.bin' % i, 'wb', buffering=0) for i in range(2)]\n"
		    "vmas = libc.mmap(None, 50000 * 4096, 3, 0x22, -1, 0)\n"
		    "for i in range(50000):\n"
		    "    ctypes.memset(vmas + i * 4096, 1, 1)\n"
		    "for i in range(1, 50000, 2):\n"
		    "    libc.mprotect(vmas + i * 4096, 4096, 1)\n"
		    "buf = libc.mmap(None, 150 * M, 3, 0x22, -1, 0)\n"
		    "ctypes.memset(buf, 0x51, 150 * M)\n"
		    "go = threading.Barrier(3)\n"
		    "def writer(fd):\n"
		    "    go.wait()\n"
		    "    libc.write(fd, buf, 150 * M)\n"
		    "for f in files:\n"
		    "    threading.Thread(target=writer, args=(f.fileno(),), "
		    "daemon=True).start()\n"
		    "go.wait()\n"
		    "time.sleep(0.01)\n"
		    "for f in files:\n"
		    "    f.close()\n"
		    "'closed'",
		    NULL, 90000);
		/* (what is asserted is the quota; on a loaded machine the call, two threads writing
		 * 150 MiB each past 50,000 mappings, has run into its time limit) */
		cr_assert(strcmp(mcpc_status(r), "ok") == 0 ||
		              strcmp(mcpc_status(r), "output_limit") == 0 ||
		              strcmp(mcpc_status(r), "timeout") == 0,
		          "%s", mcpc_json(r));
		usleep(500 * 1000); /* a write still in flight would land now */
		cr_assert_leq(ws_bytes() - before_bytes, 256LL << 20,
		              "the workspace holds %lld bytes more than before the call (%s)",
		              ws_bytes() - before_bytes, mcpc_json(r));
		e2e_expect_result("1 + 1", "2");
	}
	no_hidden_files();
	outside_unchanged();
	e2e_stop();
}
