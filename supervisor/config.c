/* config.c - command line: subcommand, limits, imports, and the zygote's configuration.
 * config_parse returns 0 or -EINVAL with a message that names the option and the values it
 * accepts; nothing here touches stdout except --help and --version, which are asked for. */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor.h"

/* The product we replace allowed these eleven; --imports=seed keeps only them. */
static const char *const seed_imports[] = {
    "collections", "datetime", "itertools",  "math", "queue",       "random",
    "re",          "stat",     "statistics", "time", "unicodedata", NULL,
};

/* The default adds the four it promised and pure-computation modules, sys as a curated view
 * (stdout, stderr, version facts), traceback as the worker's own formatting, logging
 * without its submodules (pyproxy.c), sqlite3 with its databases in memory (pylayer.c), gc
 * as its collections only (pyproxy.c), in-memory streams (io without its file-opening parts:
 * pyproxy.c) and the formats and compressors that work on them, zoneinfo with its database
 * read in the zygote and uuid with a random node (pydata.py), concurrent.futures whose
 * executors run each task as it is submitted (interp.c), platform's facts, timeit of callables,
 * tempfile's files in memory or in the workspace, argparse (its setattr by a destination's
 * name meets the guards a library's write meets), importlib's import_module, util.find_spec
 * and metadata.version as the sandbox makes them, yaml (Debian's python3-yaml) with its
 * safe loader and dumper only, asyncio with an event loop of timers and tasks, no I/O
 * (interp.c), types as the classes and helpers a class statement or type() gives anyway (no
 * CodeType, FrameType or CellType: interp.c), errno's codes, keyword's lists and ipaddress. */
static const char *const default_extra[] = {
    "json",
    "string",
    "functools",
    "operator",
    "fractions",
    "decimal",
    "heapq",
    "bisect",
    "cmath",
    "numbers",
    "copy",
    "dataclasses",
    "enum",
    "typing",
    "textwrap",
    "difflib",
    "array",
    "struct",
    "base64",
    "binascii",
    "hashlib",
    "zlib",
    "calendar",
    "pprint",
    "abc",
    "contextlib",
    "sys",
    "traceback",
    "logging",
    "sqlite3",
    "io",
    "csv",
    "gzip",
    "bz2",
    "lzma",
    "zipfile",
    "tarfile",
    "zoneinfo",
    "uuid",
    "secrets",
    "html",
    "urllib.parse",
    "shlex",
    "colorsys",
    "graphlib",
    "xml.etree.ElementTree",
    "xml.dom.minidom",
    "fnmatch",
    "reprlib",
    "ast",
    "hmac",
    "tomllib",
    "configparser",
    "codecs",
    "gc",
    "concurrent.futures",
    "platform",
    "importlib",
    "yaml",
    "timeit",
    "tempfile",
    "argparse",
    "asyncio",
    "types",
    "errno",
    "keyword",
    "ipaddress",
    "warnings",
    NULL,
};

/* With a workspace the code also gets these: files in, files out, paths, comparisons of files
 * and directories, lines of files edited in place (csv and io are in the default set already;
 * --imports seed gets them here). */
static const char *const workspace_imports[] = {
    "csv", "fnmatch", "glob", "io", "os", "pathlib", "shutil", "filecmp", "fileinput", NULL,
};

/* --imports data adds the data stack (Debian's python3-numpy, python3-pandas, python3-scipy,
 * python3-sympy, python3-matplotlib, python3-seaborn, python3-sklearn) and the modules ordinary data code uses
 * next to it: io (in-memory streams; its file-opening parts are left out of it), csv,
 * mpmath (sympy's arbitrary precision, which nsolve and lambdify(..., 'mpmath') import as the
 * user's code would), tabulate (python3-tabulate: what DataFrame.to_markdown prints with) and
 * openpyxl (python3-openpyxl: Excel workbooks for read_excel and to_excel); pytz and dateutil
 * (python3-tz, python3-dateutil: pandas' own time zones and date parsing); PIL (python3-pil,
 * which matplotlib draws its images with: opening, converting and saving pictures); tqdm
 * (python3-tqdm: the progress bars data loops are wrapped in, drawn on stderr); pylab
 * (matplotlib's own module of pyplot and numpy's names, which mpmath's plots import). */
static const char *const data_extra[] = {
    "numpy",        "pandas", "scipy",   "sympy",    "matplotlib", "io",      "csv",
    "mpl_toolkits", "mpmath", "seaborn", "tabulate", "openpyxl",   "sklearn", "pytz",
    "dateutil",     "PIL",    "tqdm",    "pylab",    NULL,
};

static const char usage[] =
    "usage: safepy [serve] [options]          MCP server on stdin/stdout\n"
    "       safepy run [options] (-c CODE | FILE | -)\n"
    "                                         run once in the same sandbox\n"
    "       safepy doctor [--policy]          report each sandbox layer\n"
    "       safepy connect [SOCKET]           relay stdin/stdout to a socket-activated\n"
    "                                         server (default " SAFEPY_SOCKET_PATH ")\n"
    "\n"
    "options:\n"
    "  --timeout SEC         wall-clock limit per call (default 30)\n"
    "  --cpu SEC             CPU time limit per call (default 30)\n"
    "  --memory SIZE         address space per worker, e.g. 512M, 1G (default 512M;\n"
    "                        1G with --imports data)\n"
    "  --max-output SIZE     bytes kept of stdout and of stderr, each (default 64K)\n"
    "  --max-workers N       calls running at once; more wait (default: CPUs)\n"
    "  --prefork N           idle workers kept ready (default 1)\n"
    "  --max-sessions N      sessions kept; the least recently used is evicted (default 16)\n"
    "  --session-idle SEC    an idle session expires after SEC (default 1800)\n"
    "  --allow-import MOD    also allow (and pre-import) MOD; repeatable (builtins,\n"
    "                        importlib, inspect and others that reach past the\n"
    "                        allowlist are refused)\n"
    "  --imports SET         default; seed (only the eleven classic modules); or data\n"
    "                        (the default and numpy, pandas, scipy, sympy, matplotlib,\n"
    "                        seaborn, sklearn, mpmath, tabulate, openpyxl, pytz,\n"
    "                        dateutil, PIL, tqdm)\n"
    "  --workspace DIR       the code may read the files under DIR, its working directory\n"
    "                        (off by default: no file can be reached); adds csv, filecmp,\n"
    "                        fileinput, fnmatch, glob, io, os (its file functions), pathlib\n"
    "                        and shutil to the imports\n"
    "  --workspace-write     the code may also write files there: each call's files are\n"
    "                        moved into place when it completes (an exception it raises\n"
    "                        included), and dropped when it is stopped (a limit, a crash)\n"
    "  --user USER           when started as root: run workers as USER (default nobody)\n"
    "  --log-level LEVEL     error, warn, info or debug (default: info for serve, warn for\n"
    "                        run and doctor)\n"
    "  --no-namespaces       do not unshare user/net/ipc namespaces\n"
    "  --no-landlock         do not apply Landlock\n"
    "  --unsafe-no-python-layer\n"
    "                        TESTING ONLY: turn off the import allowlist, builtins\n"
    "                        curation, attribute rules and audit hook (the kernel\n"
    "                        sandbox stays)\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "\n"
    "safepy run prints the code's output, then the repr of its result or, on failure, the\n"
    "error (and which limit stopped it). Its exit status says how the call ended:\n"
    "  0 ok                  1 the code raised an exception   2 usage or configuration\n"
    "  3 timeout             4 memory limit                   5 output limit\n"
    "  6 the worker crashed  7 sandbox violation              8 interrupted\n"
    "  9 safepy could not run the code (the sandbox could not start)\n";

enum {
	OPT_TIMEOUT = 256,
	OPT_CPU,
	OPT_MEMORY,
	OPT_MAX_OUTPUT,
	OPT_MAX_WORKERS,
	OPT_PREFORK,
	OPT_MAX_SESSIONS,
	OPT_SESSION_IDLE,
	OPT_ALLOW_IMPORT,
	OPT_IMPORTS,
	OPT_USER,
	OPT_LOG_LEVEL,
	OPT_NO_NS,
	OPT_NO_LANDLOCK,
	OPT_UNSAFE,
	OPT_POLICY,
	OPT_WORKSPACE,
	OPT_WORKSPACE_WRITE,
};

/* What each option accepts, for the message about a value it refuses. */
static const struct {
	int opt;
	const char *accepts;
} accepted[] = {
    {OPT_TIMEOUT, "seconds, a number greater than 0 and at most 86400 (e.g. 30 or 2.5)"},
    {OPT_CPU, "whole seconds from 1 to 86400 (e.g. 30)"},
    {OPT_MEMORY, "a size of at least 32M: a number with an optional K, M or G suffix "
                 "(e.g. 512M or 1G)"},
    {OPT_MAX_OUTPUT, "a size from 64 bytes to 16M: a number with an optional K or M suffix "
                     "(e.g. 64K)"},
    {OPT_MAX_WORKERS, "a whole number from 1 to 1024"},
    {OPT_PREFORK, "a whole number from 0 to 64"},
    {OPT_MAX_SESSIONS, "a whole number from 1 to 4096"},
    {OPT_SESSION_IDLE, "seconds, a number greater than 0 and at most 86400 (e.g. 1800)"},
    {OPT_ALLOW_IMPORT, "one module name, dotted Python identifiers such as numpy or "
                       "xml.etree.ElementTree (no wildcards or paths; repeat the option "
                       "for more modules)"},
    {OPT_IMPORTS, "default or seed"},
    {OPT_USER, "a user name or a numeric uid, not root"},
    {OPT_LOG_LEVEL, "error, warn, info or debug"},
};

static const struct option options[] = {
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
    {"max-workers", required_argument, NULL, OPT_MAX_WORKERS},
    {"prefork", required_argument, NULL, OPT_PREFORK},
    {"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
    {"session-idle", required_argument, NULL, OPT_SESSION_IDLE},
    {"allow-import", required_argument, NULL, OPT_ALLOW_IMPORT},
    {"imports", required_argument, NULL, OPT_IMPORTS},
    {"user", required_argument, NULL, OPT_USER},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"no-namespaces", no_argument, NULL, OPT_NO_NS},
    {"no-landlock", no_argument, NULL, OPT_NO_LANDLOCK},
    {"unsafe-no-python-layer", no_argument, NULL, OPT_UNSAFE},
    {"policy", no_argument, NULL, OPT_POLICY},
    {"workspace", required_argument, NULL, OPT_WORKSPACE},
    {"workspace-write", no_argument, NULL, OPT_WORKSPACE_WRITE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* "512M", "64K", "1G", "1048576" -> bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;
	uint64_t mult = 1;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1024;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1024ull * 1024 * 1024;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end || v * (double)mult > 1e15)
		return -EINVAL;
	*out = (uint64_t)(v * (double)mult);
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

/* A module name: dotted identifiers. */
static int valid_module(const char *s)
{
	int start = 1;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s == '.') {
			if (start)
				return 0;
			start = 1;
			continue;
		}
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (!start && *s >= '0' && *s <= '9')))
			return 0;
		start = 0;
	}
	return !start;
}

static int imports_add(struct config *cfg, const char *name)
{
	char **n;

	for (size_t i = 0; i < cfg->n_imports; i++)
		if (strcmp(cfg->imports[i], name) == 0)
			return 0;
	n = realloc(cfg->imports, (cfg->n_imports + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	cfg->imports = n;
	n[cfg->n_imports] = strdup(name);
	if (!n[cfg->n_imports])
		return -ENOMEM;
	cfg->n_imports++;
	return 0;
}

/* Modules the Python layer cannot offer: each hands out what the allowlist and the attribute
 * rules keep from user code (with --unsafe-no-python-layer there is no allowlist to keep). */
static const struct {
	const char *module; /* the module and its submodules */
	const char *why;
} imports_refused[] = {
    {"builtins", "its exec, eval, compile and __import__ bypass the allowlist and the attribute "
                 "rules"},
    {"importlib", "it imports any module by name (its import_module, util.find_spec and "
                  "metadata.version are the sandbox's own)"},
    {"imp", "it imports any module by name"},
    {"pkgutil", "it imports any module by name"},
    {"runpy", "it runs any module by name"},
    {"zipimport", "it loads modules"},
    {"pydoc", "it imports any module by name"},
    {"unittest", "unittest.mock imports any module by name"},
    {"inspect", "it returns the real module of any object and reads frames"},
    {"ctypes", "it reads and writes the process's memory"},
};

/* The reason name cannot be allowed, or NULL. Private modules (_thread, _io) are refused
 * too: they are the C halves of modules whose Python halves do the checking. */
static const char *import_refusal(const char *name)
{
	size_t n = strcspn(name, ".");

	if (name[0] == '_' || strstr(name, "._"))
		return "it is private";
	/* The worker makes these itself, importing as the user's import does (interp.c). */
	if (strcmp(name, "importlib") == 0 || strcmp(name, "importlib.util") == 0 ||
	    strcmp(name, "importlib.metadata") == 0)
		return NULL;
	for (size_t i = 0; i < sizeof(imports_refused) / sizeof(imports_refused[0]); i++)
		if (strlen(imports_refused[i].module) == n &&
		    strncmp(imports_refused[i].module, name, n) == 0)
			return imports_refused[i].why;
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The user workers run as when safepy starts as root. Returns 0, or -EINVAL with what is
 * wrong in why. */
static int resolve_user(struct config *cfg, const char *user, const char **why)
{
	struct passwd *pw;
	unsigned long v;

	if (parse_uint(user, 0xfffffffeUL, &v) == 0) {
		if (v == 0) {
			*why = "workers must not run as root";
			return -EINVAL;
		}
		pw = getpwuid((uid_t)v);
		cfg->uid = (uid_t)v;
		cfg->gid = pw ? pw->pw_gid : (gid_t)v;
		return 0;
	}
	pw = getpwnam(user);
	if (!pw) {
		*why = "no such user";
		return -EINVAL;
	}
	if (pw->pw_uid == 0) {
		*why = "workers must not run as root";
		return -EINVAL;
	}
	cfg->uid = pw->pw_uid;
	cfg->gid = pw->pw_gid;
	return 0;
}

/* The long name of the option whose getopt value is opt ("" if none). */
static const char *option_name(int opt)
{
	for (const struct option *o = options; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "";
}

static const char *option_accepts(int opt)
{
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		if (accepted[i].opt == opt)
			return accepted[i].accepts;
	return "a value";
}

/* "--OPTION 'VALUE': [why; ]expected ACCEPTED". */
static int bad_value(int opt, const char *value, const char *why, char *err, size_t errlen)
{
	snprintf(err, errlen, "--%s '%s': %s%sexpected %s", option_name(opt), value, why ? why : "",
	         why ? "; " : "", option_accepts(opt));
	return -EINVAL;
}

/* --workspace DIR: an existing directory, kept as its absolute path with symbolic links
 * resolved (what the code sees as its working directory; the supervisor opens it). */
static int workspace_set(struct config *cfg, const char *dir, char *err, size_t errlen)
{
	struct stat st;
	char *real;

	if (!*dir) {
		snprintf(err, errlen, "--workspace: empty path");
		return -EINVAL;
	}
	real = realpath(dir, NULL);
	if (!real || stat(real, &st) < 0) {
		snprintf(err, errlen, "--workspace %s: %s", dir, strerror(errno));
		free(real);
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--workspace %s: not a directory", dir);
		free(real);
		return -EINVAL;
	}
	free(cfg->workspace);
	cfg->workspace = real;
	return 0;
}

/* connect takes only [SOCKET] (and --help): limits belong to the server it reaches. */
static int parse_connect(struct config *cfg, int argc, char **argv, int *exit_now, char *err,
                         size_t errlen)
{
	int i = 2;

	cfg->cmd = CMD_CONNECT;
	if (i < argc && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
		fputs(usage, stdout);
		*exit_now = 0;
		return 0;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	else if (i < argc && argv[i][0] == '-') {
		snprintf(err, errlen, "connect takes only a socket path, not '%s' (try --help)",
		         argv[i]);
		return -EINVAL;
	}
	if (i < argc)
		cfg->connect_path = argv[i++];
	if (i < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (try --help)", argv[i]);
		return -EINVAL;
	}
	if (cfg->connect_path && !cfg->connect_path[0]) {
		snprintf(err, errlen, "connect: empty socket path");
		return -EINVAL;
	}
	return 0;
}

static void config_defaults(struct config *cfg)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(cfg, 0, sizeof(*cfg));
	cfg->cmd = CMD_SERVE;
	cfg->timeout_s = 30;
	cfg->cpu_s = 30;
	cfg->memory = 512ull << 20;
	cfg->max_output = 64 << 10;
	cfg->max_result = 64 << 10;
	cfg->max_workers = n > 0 ? (unsigned int)n : 1;
	cfg->prefork = 1;
	cfg->max_sessions = 16;
	cfg->session_idle_s = 1800;
	cfg->log_level = LOG_INFO;
	cfg->uid = 65534;
	cfg->gid = 65534;
}

int config_parse(struct config *cfg, int argc, char **argv, int *exit_now, char *err, size_t errlen)
{
	const char *const *base, *why = NULL;
	int c, first = 1, user_set = 0, level_set = 0, memory_set = 0;
	unsigned long v;
	uint64_t size;

	config_defaults(cfg);
	*exit_now = -1;
	if (argc > 1 && argv[1][0] != '-') {
		if (strcmp(argv[1], "serve") == 0)
			cfg->cmd = CMD_SERVE;
		else if (strcmp(argv[1], "run") == 0)
			cfg->cmd = CMD_RUN;
		else if (strcmp(argv[1], "doctor") == 0)
			cfg->cmd = CMD_DOCTOR;
		else if (strcmp(argv[1], "connect") == 0)
			return parse_connect(cfg, argc, argv, exit_now, err, errlen);
		else {
			snprintf(err, errlen, "unknown command '%s' (try --help)", argv[1]);
			return -EINVAL;
		}
		first = 2;
	}
	optind = first;
	opterr = 0;
	while ((c = getopt_long(argc, argv, cfg->cmd == CMD_RUN ? "+:c:hV" : "+:hV", options,
	                        NULL)) != -1) {
		switch (c) {
		case OPT_TIMEOUT:
			if (parse_seconds(optarg, &cfg->timeout_s) < 0)
				goto bad_value;
			break;
		case OPT_CPU:
			if (parse_uint(optarg, 86400, &v) < 0 || v == 0)
				goto bad_value;
			cfg->cpu_s = (unsigned int)v;
			break;
		case OPT_MEMORY:
			if (parse_size(optarg, &size) < 0 || size < (32ull << 20))
				goto bad_value;
			cfg->memory = size;
			memory_set = 1;
			break;
		case OPT_MAX_OUTPUT:
			if (parse_size(optarg, &size) < 0 || size < 64 || size > (16u << 20))
				goto bad_value;
			cfg->max_output = (size_t)size;
			break;
		case OPT_MAX_WORKERS:
			if (parse_uint(optarg, 1024, &v) < 0 || v == 0)
				goto bad_value;
			cfg->max_workers = (unsigned int)v;
			break;
		case OPT_PREFORK:
			if (parse_uint(optarg, 64, &v) < 0)
				goto bad_value;
			cfg->prefork = (unsigned int)v;
			break;
		case OPT_MAX_SESSIONS:
			if (parse_uint(optarg, 4096, &v) < 0 || v == 0)
				goto bad_value;
			cfg->max_sessions = (unsigned int)v;
			break;
		case OPT_SESSION_IDLE:
			if (parse_seconds(optarg, &cfg->session_idle_s) < 0)
				goto bad_value;
			break;
		case OPT_ALLOW_IMPORT:
			if (!valid_module(optarg))
				return bad_value(c, optarg,
				                 strpbrk(optarg, "*?[")
				                     ? "wildcards are not accepted"
				                     : "not a module name",
				                 err, errlen);
			if (imports_add(cfg, optarg) < 0)
				return -ENOMEM;
			break;
		case OPT_IMPORTS:
			cfg->imports_seed = strcmp(optarg, "seed") == 0;
			cfg->imports_data = strcmp(optarg, "data") == 0;
			if (!cfg->imports_seed && !cfg->imports_data &&
			    strcmp(optarg, "default") != 0)
				goto bad_value;
			break;
		case OPT_USER:
			if (resolve_user(cfg, optarg, &why) < 0)
				return bad_value(c, optarg, why, err, errlen);
			user_set = 1;
			break;
		case OPT_LOG_LEVEL:
			if (strcmp(optarg, "error") == 0)
				cfg->log_level = LOG_ERROR;
			else if (strcmp(optarg, "warn") == 0)
				cfg->log_level = LOG_WARN;
			else if (strcmp(optarg, "info") == 0)
				cfg->log_level = LOG_INFO;
			else if (strcmp(optarg, "debug") == 0)
				cfg->log_level = LOG_DEBUG;
			else
				goto bad_value;
			level_set = 1;
			break;
		case OPT_NO_NS:
			cfg->no_namespaces = 1;
			break;
		case OPT_NO_LANDLOCK:
			cfg->no_landlock = 1;
			break;
		case OPT_UNSAFE:
			cfg->unsafe_no_python_layer = 1;
			break;
		case OPT_POLICY:
			if (cfg->cmd != CMD_DOCTOR) {
				snprintf(err, errlen,
				         "--policy is an option of safepy doctor only "
				         "(try --help)");
				return -EINVAL;
			}
			cfg->show_policy = 1;
			break;
		case OPT_WORKSPACE:
			if (workspace_set(cfg, optarg, err, errlen) < 0)
				return -EINVAL;
			break;
		case OPT_WORKSPACE_WRITE:
			cfg->workspace_write = 1;
			break;
		case 'c':
			if (cfg->run_code) {
				snprintf(err, errlen,
				         "-c is given once: one piece of code is run (join the "
				         "code, or put it in a file)");
				return -EINVAL;
			}
			cfg->run_code = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			*exit_now = 0;
			return 0;
		case 'V':
			printf("safepy %s\n", SAFEPY_VERSION);
			*exit_now = 0;
			return 0;
		case ':':
			if (optopt == 'c')
				snprintf(err, errlen, "-c needs the code to run (try --help)");
			else
				snprintf(err, errlen, "--%s needs a value: %s", option_name(optopt),
				         option_accepts(optopt));
			return -EINVAL;
		default:
			if (optopt == 'c')
				snprintf(err, errlen,
				         "-c is an option of safepy run only (try --help)");
			else
				snprintf(err, errlen, "unknown option '%s' (try --help)",
				         argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (cfg->cmd == CMD_RUN) {
		if (optind < argc && !cfg->run_code)
			cfg->run_file = argv[optind++];
		if (!cfg->run_code && !cfg->run_file) {
			snprintf(err, errlen, "run needs -c CODE, a FILE, or - for stdin");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (try --help)", argv[optind]);
		return -EINVAL;
	}
	if (!user_set && geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");
		if (pw) {
			cfg->uid = pw->pw_uid;
			cfg->gid = pw->pw_gid;
		}
	}
	if (cfg->workspace_write && !cfg->workspace) {
		snprintf(err, errlen, "--workspace-write needs --workspace DIR");
		return -EINVAL;
	}
	for (const char *const *m = workspace_imports; cfg->workspace && *m; m++)
		if (imports_add(cfg, *m) < 0)
			return -ENOMEM;
	base = cfg->imports_seed ? seed_imports : NULL;
	for (const char *const *m = seed_imports; *m; m++)
		if (imports_add(cfg, *m) < 0)
			return -ENOMEM;
	if (!base)
		for (const char *const *m = default_extra; *m; m++)
			if (imports_add(cfg, *m) < 0)
				return -ENOMEM;
	for (const char *const *m = data_extra; cfg->imports_data && *m; m++)
		if (imports_add(cfg, *m) < 0)
			return -ENOMEM;
	/* The data stack maps about 260 MiB before any data: it doubles the default. */
	if (cfg->imports_data && !memory_set)
		cfg->memory = 1ull << 30;
	qsort(cfg->imports, cfg->n_imports, sizeof(char *), cmp_str);
	for (size_t i = 0; i < cfg->n_imports && !cfg->unsafe_no_python_layer; i++) {
		const char *refused = import_refusal(cfg->imports[i]);
		if (refused) {
			snprintf(err, errlen, "--allow-import %s: not allowed: %s", cfg->imports[i],
			         refused);
			return -EINVAL;
		}
	}
	/* run and doctor print what the user asked for; their log says only what went wrong
	 * unless asked for more. serve logs what it does. */
	if (!level_set && (cfg->cmd == CMD_RUN || cfg->cmd == CMD_DOCTOR))
		cfg->log_level = LOG_WARN;
	return 0;
bad_value:
	return bad_value(c, optarg, NULL, err, errlen);
}

int config_import_is_package(const char *name)
{
	static const char *const *const sets[] = {seed_imports, default_extra, data_extra};

	if (strcmp(name, "mpl_toolkits") == 0 || strchr(name, '.'))
		return 0; /* a namespace package, a submodule: no version of their own */
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		for (const char *const *m = sets[i]; *m; m++)
			if (strcmp(*m, name) == 0)
				return sets[i] == data_extra && strcmp(name, "io") != 0 &&
				       strcmp(name, "csv") != 0;
	return 1;
}

void config_clear(struct config *cfg)
{
	for (size_t i = 0; i < cfg->n_imports; i++)
		free(cfg->imports[i]);
	free(cfg->imports);
	cfg->imports = NULL;
	cfg->n_imports = 0;
	free(cfg->workspace);
	cfg->workspace = NULL;
}

int config_import_is_builtin(const struct config *cfg, const char *name)
{
	for (const char *const *m = seed_imports; *m; m++)
		if (strcmp(*m, name) == 0)
			return 1;
	if (!cfg->imports_seed)
		for (const char *const *m = default_extra; *m; m++)
			if (strcmp(*m, name) == 0)
				return 1;
	return 0;
}

void config_to_ipc(const struct config *cfg, struct ipc_config *out)
{
	memset(out, 0, sizeof(*out));
	out->memory_bytes = cfg->memory;
	out->cpu_s = cfg->cpu_s;
	out->uid = (uint32_t)cfg->uid;
	out->gid = (uint32_t)cfg->gid;
	out->try_namespaces = !cfg->no_namespaces;
	out->try_landlock = !cfg->no_landlock;
	out->max_output = cfg->max_output;
	out->max_result = cfg->max_result;
	out->unsafe_no_python_layer = cfg->unsafe_no_python_layer;
	out->tasks_cgroup = cfg->cgroup && cfg->cgroup->state == CGROUP_ACTIVE;
	out->imports = cfg->imports;
	out->n_imports = cfg->n_imports;
	out->workspace = cfg->workspace;
	out->workspace_write = cfg->workspace_write;
}

int config_allows_matplotlib(const struct config *cfg)
{
	for (size_t i = 0; i < cfg->n_imports; i++)
		if (strncmp(cfg->imports[i], "matplotlib", 10) == 0 &&
		    (cfg->imports[i][10] == '\0' || cfg->imports[i][10] == '.'))
			return 1;
	return 0;
}
