/* test_escapes.c - the published escape classes of restricted-Python sandboxes, run against the
 * real safepy binary. Each attack must fail AND have had no effect: the file it would create does
 * not exist, a secret's content never appears in the response, no process is left, the server
 * keeps serving and its stdout stays pure JSON-RPC. The first suites run with the Python layer on;
 * the `kernel` suites turn it off (--unsafe-no-python-layer) to show the kernel layer alone holds. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define UNSAFE_ARGS                                                                                \
	"--unsafe-no-python-layer", "--allow-import", "os", "--allow-import", "socket",            \
	    "--allow-import", "ctypes", "--allow-import", "subprocess", "--allow-import",          \
	    "threading", "--allow-import", "operator"

static void cleanup(void);

TestSuite(python_layer, .timeout = 120, .fini = cleanup);
TestSuite(kernel, .timeout = 120, .fini = cleanup);

/* ---- Harness ------------------------------------------------------------------------------ */

/* Effect-check fixtures: a fresh world-readable directory, a secret file in it, and the path of
 * a marker file that an attack would create. */
static char tmpdir[64];
static char secret_path[128], marker_path[128], secret[64];
static const char env_secret[] = "SAFEPY_TEST_SECRET=env-7f3c9a61d2b84e0f";
static const char env_token[] = "env-7f3c9a61d2b84e0f";

static void make_fixtures(void)
{
	FILE *f;
	unsigned int r;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/safepy-escape-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	/* World-readable: the sandbox user could read them if the sandbox did not stop it. */
	cr_assert_eq(chmod(tmpdir, 0755), 0);
	f = fopen("/dev/urandom", "re");
	cr_assert_not_null(f);
	cr_assert_eq(fread(&r, sizeof(r), 1, f), 1);
	fclose(f);
	snprintf(secret, sizeof(secret), "TOPSECRET-%08x-%d", r, (int)getpid());
	snprintf(secret_path, sizeof(secret_path), "%s/secret.txt", tmpdir);
	snprintf(marker_path, sizeof(marker_path), "%s/pwned", tmpdir);
	f = fopen(secret_path, "we");
	cr_assert_not_null(f);
	fprintf(f, "%s\n", secret);
	fclose(f);
	cr_assert_eq(chmod(secret_path, 0644), 0);
}

static void remove_fixtures(void)
{
	char sub[160];

	unlink(secret_path);
	unlink(marker_path);
	snprintf(sub, sizeof(sub), "%s/d", tmpdir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/sock", tmpdir);
	unlink(sub);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

/* After every test, passed or failed: no server and no fixture left behind. */
static void cleanup(void)
{
	e2e_cleanup();
	if (tmpdir[0])
		remove_fixtures();
}

/* Start the server with the fixtures in place and a secret in its environment. */
static void start(const char *const *args)
{
	const char *const env[] = {env_secret, NULL};

	make_fixtures();
	e2e_start_with("2025-11-25", args, env);
}

static void start_unsafe(void)
{
	start(ARGS(UNSAFE_ARGS));
}

/* The server stopped cleanly (e2e_stop), and no attack created the marker or removed the
 * secret. */
static void stop(void)
{
	struct stat st;

	e2e_stop();
	cr_assert_neq(stat(marker_path, &st), 0, "an attack created %s", marker_path);
	cr_assert_eq(stat(secret_path, &st), 0, "an attack removed %s", secret_path);
	remove_fixtures();
}

static void assert_no_effect(json_object *r, const char *code)
{
	struct stat st;
	const char *text = mcpc_json(r);

	cr_assert_neq(stat(marker_path, &st), 0, "attack created its marker:\n%s\n%s", code, text);
	cr_assert_null(strstr(text, secret), "the secret file leaked:\n%s\n%s", code, text);
	cr_assert_null(strstr(text, env_token), "the server's environment leaked:\n%s\n%s", code,
	               text);
	cr_assert_null(strstr(text, "root:x:0:0"), "/etc/passwd leaked:\n%s\n%s", code, text);
}

/* Run code; it must come back as a tool result and leave no effect. */
static json_object *run(const char *code)
{
	json_object *r = e2e_call(code, NULL);

	assert_no_effect(r, code);
	return r;
}

/* The server still answers a trivial call correctly. */
static void still_serving(void)
{
	json_object *r = e2e_call("6 * 7", NULL);

	cr_assert_eq(json_object_get_int(e2e_member(mcpc_structured(r), "result")), 42, "%s",
	             mcpc_json(r));
}

/* The server's process count once its default session is in use (two calls: from then on a
 * process waits forked ahead for its next call), before an attack. */
static int steady_in_use(void)
{
	still_serving();
	still_serving();
	return e2e_steady_descendants(3000);
}

/* The attack was refused exactly as want says, and nothing happened. */
static json_object *refused(const char *code, const struct e2e_refusal *want)
{
	json_object *r = run(code);
	const char *why = e2e_refusal_mismatch(r, want);

	cr_assert_null(why, "attack not refused as expected (%s):\n%s\n%s", why, code,
	               mcpc_json(r));
	return r;
}

static void expect_ok_result(const char *code, const char *json)
{
	json_object *r = run(code), *want = e2e_hold(json_tokener_parse(json));

	cr_assert_str_eq(mcpc_status(r), "ok", "%s\n%s", code, mcpc_json(r));
	cr_assert(json_object_equal(e2e_member(mcpc_structured(r), "result"), want),
	          "code:\n%s\nresult %s, want %s", code,
	          mcpc_json(e2e_member(mcpc_structured(r), "result")), json);
}

/* Killed by the seccomp filter, and the message names one of the syscalls given ("a|b"). */
static json_object *killed(const char *code, const char *names)
{
	const struct e2e_refusal want = {"sandbox_violation", "SandboxViolation", names};

	return refused(code, &want);
}

/* The refusals only this suite expects. */
#define NO_ATTRIBUTE(name)                                                                         \
	((const struct e2e_refusal){"error", "AttributeError", "has no attribute '" name "'"})
static const struct e2e_refusal MEMORY_LIMIT = {"memory_limit", "MemoryError", NULL};
static const struct e2e_refusal RECURSION = {"error", "RecursionError",
                                             "maximum recursion depth exceeded"};
/* The task limit stops a thread bomb; its threads still running, the call's state cannot be
 * kept, and the answer says both. */
static const struct e2e_refusal THREAD_LIMIT = {
    "error", "SessionError",
    "The code ended with RuntimeError: can't start new thread, and its state could not be kept"};

/* safepy run with args (no input): its exit status, stdout and stderr (malloc'd). */
static int run_safepy(const char *const *args, char **out, char **err)
{
	int status = 0;

	cr_assert_eq(mcpc_run_cmd(SAFEPY_BIN, args, NULL, 30000, out, err, &status), 0,
	             "safepy run did not finish in 30 s");
	return status;
}

/* The server's process count goes back to at most n within ms. */
static void back_to(int n, int ms)
{
	int k = e2e_settle_descendants(n, ms);

	cr_assert_leq(k, n, "the server has %d processes, %d before the attack", k, n);
}

/* ---- Python layer on: attribute chains ----------------------------------------------------- */

/* Ways user code can read an attribute by name, the last two bypassing the builtin getattr. */
static const char *const getters[] = {
    "A = getattr",
    "import operator\nA = lambda o, n: operator.attrgetter(n)(o)",
    "import string\nA = lambda o, n: string.Formatter().get_field('0.' + n, [o], {})[0]",
};

Test(python_layer, dunder_chains_are_refused)
{
	start(NULL);
	refused("getattr(getattr(1, '__cla' + 'ss__'), '__bases__')", &E2E_DUNDER);
	refused("x = ()\nx.__class__.__base__", &E2E_DUNDER);
	refused("def f():\n    pass\nsetattr(f, '__co' + 'de__', None)", &E2E_DUNDER);
	/* A dunder A really has, and one no rule allows: only the refusal stops the delattr. */
	refused("class A:\n    __secret__ = 1\ndelattr(A, '__sec' + 'ret__')", &E2E_DUNDER);
	refused("getattr(object, '__subcla' + 'sses__')()", &E2E_DUNDER);
	refused("type.__subclasses__(object)", &E2E_DUNDER);
	refused("def f():\n    pass\nf.__globals__", &E2E_DUNDER);
	refused("import json\njson.dumps.__globals__['__builtins__']", &E2E_DUNDER);
	refused("[].__class__.__mro__[-1].__subclasses__()", &E2E_DUNDER);
	still_serving();
	stop();
}

/* A refusal check that any failure satisfied would pass on a typo in the attack. */
Test(python_layer, a_refusal_check_fails_on_an_attack_that_fails_for_another_reason)
{
	static const struct e2e_refusal killed_clone = {"sandbox_violation", "SandboxViolation",
	                                                "clone"};
	json_object *typo, *wrong_attribute, *real;

	start(NULL);
	typo = run("getattr(getatr(1, '__cla' + 'ss__'), '__bases__')");
	cr_assert_str_eq(mcpc_err_str(typo, "type"), "NameError", "%s", mcpc_json(typo));
	cr_assert_not_null(e2e_refusal_mismatch(typo, &E2E_DUNDER),
	                   "a NameError passed for the dunder refusal");
	cr_assert_not_null(e2e_refusal_mismatch(typo, &E2E_IMPORT));
	cr_assert_not_null(e2e_refusal_mismatch(typo, &E2E_EACCES));
	cr_assert_not_null(e2e_refusal_mismatch(typo, &killed_clone));
	/* An AttributeError of CPython's own is not the refusal either. */
	wrong_attribute = run("class A:\n    pass\ndelattr(A, '__i' + 'nit__')");
	cr_assert_str_eq(mcpc_err_str(wrong_attribute, "type"), "AttributeError", "%s",
	                 mcpc_json(wrong_attribute));
	cr_assert_not_null(e2e_refusal_mismatch(wrong_attribute, &E2E_DUNDER),
	                   "CPython's AttributeError passed for the dunder refusal: %s",
	                   mcpc_json(wrong_attribute));
	/* The same check passes the attack without the typo. */
	real = run("getattr(getattr(1, '__cla' + 'ss__'), '__bases__')");
	cr_assert_null(e2e_refusal_mismatch(real, &E2E_DUNDER), "%s", mcpc_json(real));
	stop();
}

Test(python_layer, class_chain_stops_after_class)
{
	/* __class__ is allowed: ordinary classes use self.__class__.__name__, and it gives no
	 * more than type(x). Every step beyond it toward object's subclasses is refused. */
	json_object *r;

	start(NULL);
	r = run("(1).__class__ is type(1), getattr(1, '__cla' + 'ss__') is int");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "(True, True)", "%s", mcpc_json(r));
	refused("(1).__class__.__base__", &E2E_DUNDER);
	refused("(1).__class__.__mro__", &E2E_DUNDER);
	refused("getattr((1).__class__, '__bas' + 'es__')", &E2E_DUNDER);
	refused("type(1).__subclasses__()", &E2E_DUNDER);
	stop();
}

Test(python_layer, getattr_and_friends_cannot_reach_os)
{
	static const char *const subs[] = {
	    "subs = A(A(A((), '__class__'), '__base__'), '__subclasses__')()",
	    "subs = A(object, '__subclasses__')()",
	    "import operator\nsubs = operator.methodcaller('__subclasses__')(object)",
	};
	int n;

	start(NULL);
	n = steady_in_use();
	for (size_t g = 0; g < sizeof(getters) / sizeof(getters[0]); g++) {
		for (size_t s = 0; s < sizeof(subs) / sizeof(subs[0]); s++) {
			refused(
			    e2e_fmt("%s\n%s\nhit = []\nfor c in subs:\n"
			            "    name = A(c, '__name__')\n"
			            "    if name == '_wrap_close':\n"
			            "        g = A(A(c, '__init__'), '__globals__')\n"
			            "        g['system']('touch %s')\n"
			            "        hit.append(g['open']('%s').read())\n"
			            "    if name == 'Popen':\n"
			            "        c(['touch', '%s']).wait()\n        hit.append(name)\n"
			            "hit",
			            getters[g], subs[s], marker_path, secret_path, marker_path),
			    &E2E_DUNDER);
		}
	}
	back_to(n, 3000);
	still_serving();
	stop();
}

/* A str subclass whose __hash__ and __eq__ say it is another name: the checks read its
 * characters, and a dict lookup with it would find the other name (a module in sys.modules, a
 * descriptor in a class). Imports refuse it; the attribute builtins look up its characters. */
#define LIKE(other)                                                                                \
	"class S(str):\n    def __hash__(self): return hash('" other "')\n"                        \
	"    def __eq__(self, o): return o == '" other "'\n"

Test(python_layer, a_name_that_claims_another_names_only_itself)
{
	static const struct e2e_refusal not_a_str = {"error", "TypeError", "must be a str"};
	json_object *r;

	start(NULL);
	refused(e2e_fmt(LIKE("os") "m = __builtins__['__imp' + 'ort__'](S('math'))\n"
	                           "m.system('touch %s')",
	                marker_path),
	        &not_a_str);
	refused(LIKE("os") "imp = __builtins__['__imp' + 'ort__']\n"
	                   "imp(S('math'), None, None, ['sqrt'], 0).getpid()",
	        &not_a_str);
	refused(LIKE("posix") "import math\nm = __builtins__['__imp' + 'ort__'](S('math'))",
	        &not_a_str);
	/* The attribute builtins look up what the name says, not what it claims to be. */
	r = run(LIKE("secret") "class C:\n    secret = 1\no = C()\n"
	                       "import operator\nsetattr(o, S('x'), 5)\n"
	                       "[getattr(o, S('x')), hasattr(o, S('y')), o.secret, "
	                       "operator.attrgetter(S('x'))(o), getattr(o, S('z'), 'none')]");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	e2e_assert_result(r, "attribute builtins with a claiming name", "[5,false,1,5,\"none\"]");
	refused(LIKE("__class__") "getattr(1, S('real')).__subclasses__()", &E2E_DUNDER);
	/* A module proxy looks a missing name up on the real module by its characters too, also
	 * for a name that reaches it past the checked builtins (the attrgetter class itself). */
	r = run(LIKE("__builtins__") "import random, operator\n"
	                             "AG = type(operator.attrgetter('a'))\n"
	                             "try:\n    AG(S('zz'))(random)['__import__']('os').getpid()\n"
	                             "except AttributeError as e:\n    missing = str(e)\nmissing");
	e2e_assert_result(r, "a proxy's attribute by a claiming name",
	                  "\"module 'random' has no attribute 'zz'\"");
	/* The classes of attrgetter and methodcaller, reached with type(), keep the characters
	 * of the names they are given; the rules on the types then judge what is read. */
	r = run("import operator, copy\n"
	        "AG, MC = type(operator.attrgetter('a')), type(operator.methodcaller('a'))\n"
	        "[AG('real')(2), MC('upper')('x'), copy.copy(AG('imag'))(3)]");
	e2e_assert_result(r, "operator's classes, reached", "[2,\"X\",0]");
	r = run(LIKE("__class__") "import operator\n"
	                          "AG = type(operator.attrgetter('a'))\n"
	                          "try:\n    AG('real', S('zz'))(1)\n"
	                          "except AttributeError as e:\n    missing = str(e)\nmissing");
	e2e_assert_result(r, "the attrgetter class by a claiming name",
	                  "\"'int' object has no attribute 'zz'\"");
	r = run(LIKE("__class__") "import operator\n"
	                          "MC = type(operator.methodcaller('a'))\n"
	                          "try:\n    MC(S('zz'))(1)\n"
	                          "except AttributeError as e:\n    missing = str(e)\nmissing");
	e2e_assert_result(r, "the methodcaller class by a claiming name",
	                  "\"'int' object has no attribute 'zz'\"");
	still_serving();
	stop();
}

/* str.format may render an attribute chain, but only as text; or the attribute rules refuse
 * it. Either way no object escapes. */
static void formats_text_or_is_refused(const char *code)
{
	json_object *r = run(code);
	const char *why;

	if (!strcmp(mcpc_status(r), "ok")) {
		cr_assert(
		    json_object_is_type(e2e_member(mcpc_structured(r), "result"), json_type_string),
		    "%s", mcpc_json(r));
		return;
	}
	why = e2e_refusal_mismatch(r, &E2E_DUNDER);
	cr_assert_null(why, "neither text nor refused (%s):\n%s\n%s", why, code, mcpc_json(r));
}

Test(python_layer, format_strings_only_make_strings)
{
	start(NULL);
	formats_text_or_is_refused("'{0.__class__.__base__.__subclasses__}'.format(1)");
	formats_text_or_is_refused(
	    "import json\n'{0.__globals__[__builtins__]}'.format(json.dumps)");
	/* string.Formatter.get_field returns the object itself: it must not yield `object`. */
	refused("import string\nstring.Formatter().get_field('0.__class__.__base__', [1], {})[0]",
	        &E2E_DUNDER);
	refused(e2e_fmt("import string\nf = string.Formatter()\n"
	                "b = f.get_field('0.__globals__[__builtins__]', [string.capwords], {})[0]\n"
	                "b['open']('%s').read()",
	                secret_path),
	        &E2E_DUNDER);
	still_serving();
	stop();
}

Test(python_layer, frames_and_tracebacks_are_unreachable)
{
	/* A traceback as ordinary code holds one: the one a context manager's __exit__
	 * receives (e.__traceback__ and sys.exc_info() give it too). */
	static const char *const traceback =
	    "class Keep:\n    def __enter__(self):\n        return self\n"
	    "    def __exit__(self, t, e, tb):\n        self.tb = tb\n        return True\n"
	    "k = Keep()\nwith k:\n    1/0\ntb = k.tb\n";

	start(NULL);
	refused("def g():\n    yield 1\nit = g()\nit.gi_frame.f_back.f_globals", &E2E_INTERNAL);
	refused("def g():\n    yield 1\nit = g()\ngetattr(it, 'gi_fr' + 'ame')", &E2E_INTERNAL);
	refused("try:\n    1/0\nexcept Exception as e:\n    t = e.__traceback__.tb_frame\nt",
	        &E2E_INTERNAL);
	refused("import sys\ntry:\n    1/0\nexcept Exception:\n    t = sys.exc_info()[2]\n"
	        "getattr(t, 'tb_' + 'next')",
	        &E2E_INTERNAL);
	/* Control: that really is a traceback, so only the refusals below stop the attacks. */
	expect_ok_result(e2e_fmt("%stype(tb).__name__", traceback), "\"traceback\"");
	/* No attribute name in the code itself: the dynamic getattr is what refuses. */
	refused(e2e_fmt("%sgetattr(getattr(tb, 'tb_' + 'frame'), 'f_buil' + 'tins')", traceback),
	        &E2E_INTERNAL);
	refused("async def c():\n    pass\nco = c()\nco.cr_frame", &E2E_INTERNAL);
	refused("def f():\n    pass\nf.__code__.co_code", &E2E_DUNDER);
	for (size_t g = 1; g < sizeof(getters) / sizeof(getters[0]); g++) {
		refused(e2e_fmt("%s\n%sfr = A(tb, 'tb_frame')\n"
		                "b = A(fr, 'f_builtins')\nwhile A(fr, 'f_back') is not None:\n"
		                "    fr = A(fr, 'f_back')\n    b = A(fr, 'f_builtins')\n"
		                "b['open']('%s').read()",
		                getters[g], traceback, secret_path),
		        &E2E_INTERNAL);
		refused(e2e_fmt("%s\nimport json\n"
		                "b = A(json.dumps, '__globals__')['__builtins__']\n"
		                "b['__import__']('os').system('touch %s')",
		                getters[g], marker_path),
		        &E2E_DUNDER);
	}
	still_serving();
	stop();
}

Test(python_layer, modules_have_no_private_attributes_or_real_modules)
{
	json_object *r;

	start(NULL);
	/* Names that are module-valued or private in CPython 3.11's modules: each missing, or
	 * the very proxy the import of an allowed module gives (sys's view is a module of its own
	 * kind, whose stdout and stderr are the interpreter's); and sys's reach into modules,
	 * frames and the interpreter (setrecursionlimit is there: recursion past the C stack
	 * ends only the call's own worker). */
	r = run("import random, statistics, contextlib, collections, datetime, dataclasses, "
	        "typing, enum, calendar, pprint, string, hashlib, json, re, queue, sys\n"
	        "mods = {'random': random, 'statistics': statistics, 'contextlib': contextlib,\n"
	        "        'collections': collections, 'datetime': datetime,\n"
	        "        'dataclasses': dataclasses, 'typing': typing, 'enum': enum,\n"
	        "        'calendar': calendar, 'pprint': pprint, 'string': string,\n"
	        "        'hashlib': hashlib, 'json': json, 're': re, 'queue': queue}\n"
	        "names = [('random', '_os'), ('statistics', 'sys'), ('contextlib', 'os'),\n"
	        "         ('collections', '_sys'), ('datetime', 'sys'), ('dataclasses', 'sys'),\n"
	        "         ('dataclasses', 'inspect'), ('dataclasses', 'builtins'),\n"
	        "         ('dataclasses', '_thread'), ('typing', 'sys'), ('enum', 'bltns'),\n"
	        "         ('calendar', '_locale'), ('pprint', '_sys'), ('string', '_string'),\n"
	        "         ('hashlib', '_hashlib'), ('json', 're'), ('re', '_compiler'),\n"
	        "         ('queue', 'threading'), ('random', '_inst'), ('statistics', 'random')]\n"
	        "mods['sys'] = sys\n"
	        "found = []\nfor m, a in names:\n    try:\n        v = getattr(mods[m], a)\n"
	        "    except AttributeError:\n        continue\n"
	        "    if not (type(v) in (type(re), type(sys)) and mods.get(v.__name__) is v):\n"
	        "        found.append(m + '.' + a)\n"
	        "for a in ['modules', '_getframe', 'settrace', 'setprofile', 'addaudithook',\n"
	        "          'meta_path', 'path_hooks', '_current_frames', 'setswitchinterval']:\n"
	        "    try:\n        getattr(sys, a)\n        found.append('sys.' + a)\n"
	        "    except AttributeError:\n        pass\n"
	        "found");
	refused("import random\nrandom._os", &NO_ATTRIBUTE("_os"));
	/* A module a module holds is there only as the proxy of an allowed one, as its import
	 * would give it. */
	e2e_expect_result("import statistics, sys\nstatistics.sys is sys", "true");
	refused("import logging\nlogging.weakref", &NO_ATTRIBUTE("weakref"));
	e2e_expect_result("import json, codecs\njson.codecs is codecs", "true");
	refused(e2e_fmt("from contextlib import os\nos.system('touch %s')", marker_path),
	        &(struct e2e_refusal){"error", "ImportError", "cannot import name 'os'"});
	refused(e2e_fmt("import random\nrandom._os.system('touch %s')", marker_path),
	        &NO_ATTRIBUTE("_os"));
	refused("import sys\nsys.modules['os']", &NO_ATTRIBUTE("modules"));
	/* No frame attribute in the code itself: the missing sys._getframe is what stops it. */
	refused("import sys\nf = sys._getframe(0)\ngetattr(f, 'f_glo' + 'bals')",
	        &NO_ATTRIBUTE("_getframe"));
	/* Allowed modules stay usable through their public names. */
	expect_ok_result("import json, re, random\n"
	                 "[json.loads('[1]'), re.sub('a', 'b', 'aa'), random.randrange(1, 2)]",
	                 "[[1],\"bb\",1]");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_eq(json_object_array_length(e2e_member(mcpc_structured(r), "result")), 0,
	             "reachable: %s", mcpc_json(e2e_member(mcpc_structured(r), "result")));
	still_serving();
	stop();
}

Test(python_layer, refused_modules_stay_refused)
{
	static const char *const mods[] = {"os",
	                                   "posix",
	                                   "subprocess",
	                                   "socket",
	                                   "_socket",
	                                   "ctypes",
	                                   "_ctypes",
	                                   "threading",
	                                   "_thread",
	                                   "inspect",
	                                   "_gc",
	                                   "builtins",
	                                   "importlib.machinery",
	                                   "_io",
	                                   "_posixsubprocess",
	                                   "signal",
	                                   "mmap",
	                                   "pickle",
	                                   "marshal",
	                                   "fcntl",
	                                   "shutil",
	                                   "importlib.abc",
	                                   "importlib.resources",
	                                   "importlib._bootstrap",
	                                   "yaml.constructor",
	                                   "yaml.loader",
	                                   "yaml.cyaml"};

	start(NULL);
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		const struct e2e_refusal want = {"error", "ModuleNotFoundError",
		                                 e2e_fmt("Import of %s is not allowed", mods[i])};

		refused(e2e_fmt("import %s", mods[i]), &want);
	}
	still_serving();
	stop();
}

Test(python_layer, code_objects_cannot_be_forged)
{
	start(NULL);
	/* types comes without the classes that make code objects, frames and cells of parts. */
	expect_ok_result("import types\n"
	                 "[hasattr(types, n) for n in ('CodeType', 'FrameType', 'CellType')]",
	                 "[false,false,false]");
	refused("def f():\n    return 1\nf.__code__ = (lambda: 2).__code__\nf()", &E2E_DUNDER);
	refused("def f():\n    return 1\ntype(f.__code__)", &E2E_DUNDER);
	refused("def f():\n    return 1\nc = getattr(f, '__co' + 'de__')\n"
	        "c.replace(co_code=bytes([151, 0, 100, 200, 83, 0]))",
	        &E2E_DUNDER);
	refused("import operator\ndef f():\n    return 1\n"
	        "c = operator.attrgetter('__code__')(f)\n"
	        "bad = c.replace(co_code=bytes([151, 0, 100, 200, 83, 0]))\n"
	        "type(f)(bad, {})()",
	        &E2E_DUNDER);
	still_serving();
	stop();
}

Test(python_layer, stdlib_eval_does_not_bypass_attribute_rules)
{
	/* typing evaluates annotation strings with eval(): code the attribute checks never saw. The
	 * private method ForwardRef._evaluate hands that to user code directly. */
	start(NULL);
	refused("import typing\n"
	        "typing.ForwardRef('().__class__.__base__.__subclasses__()')"
	        "._evaluate(None, None, frozenset())",
	        &E2E_DUNDER);
	refused("import typing\n"
	        "def f(x: '().__class__.__base__.__subclasses__()'):\n    pass\n"
	        "typing.get_type_hints(f)['x']",
	        &E2E_DUNDER);
	stop();
}

Test(python_layer, stdlib_eval_reaches_nothing)
{
	static const char *const prelude =
	    "import typing\n"
	    "E = lambda s: typing.ForwardRef(s)._evaluate(None, None, frozenset())\n"
	    "os = E(\"[c for c in ().__class__.__base__.__subclasses__() "
	    "if c.__name__ == '_wrap_close'][0].__init__.__globals__\")\n"
	    "bi = os['__builtins__']\n";
	int n;

	start(NULL);
	n = steady_in_use();
	refused(e2e_fmt("%sos['system']('touch %s')", prelude, marker_path), &E2E_DUNDER);
	refused(e2e_fmt("%sbi['open']('%s').read()", prelude, secret_path), &E2E_DUNDER);
	refused(e2e_fmt("%sos['read'](os['open']('%s', 0), 100)", prelude, secret_path),
	        &E2E_DUNDER);
	refused(e2e_fmt("%sbi['open']('%s', 'w').write('x')", prelude, marker_path), &E2E_DUNDER);
	refused(e2e_fmt("%sos['listdir']('%s')", prelude, tmpdir), &E2E_DUNDER);
	refused(e2e_fmt("%sos['fork']()", prelude), &E2E_DUNDER);
	refused(e2e_fmt("%sos['kill'](os['getppid'](), 9)", prelude), &E2E_DUNDER);
	refused(e2e_fmt("%sbi['__import__']('_socket').socket()", prelude), &E2E_DUNDER);
	refused(e2e_fmt("%sos['sys'].modules['posix'].system('touch %s')", prelude, marker_path),
	        &E2E_DUNDER);
	refused(e2e_fmt("%sos['sys'].modules['_posixsubprocess']", prelude), &E2E_DUNDER);
	back_to(n, 3000);
	still_serving();
	stop();
}

/* ---- Python layer on: the rules on the types ------------------------------------------------ */

/* The real operator.attrgetter and methodcaller: their types, reached from the checked
 * constructors the operator proxy offers. They read any attribute in C, named at run time,
 * so only the rules on the types stand in their way. */
#define REAL_GETTERS                                                                               \
	"import operator\nA = type(operator.attrgetter('x'))\n"                                    \
	"M = type(operator.methodcaller('x'))\n"

/* How the rules on the types refuse a module's namespace: CPython's module getattr turns the
 * refusal into its own message. */
#define NO_MODULE_DICT(module)                                                                     \
	((const struct e2e_refusal){"error", "AttributeError",                                     \
	                            "module '" module "' has no attribute '__dict__'"})
/* open() without a workspace: the sandbox's, which opens nothing. */
static const struct e2e_refusal NO_FILES = {"error", "PermissionError",
                                            "open is not allowed in the sandbox: no workspace "
                                            "was given"};
/* __builtins__ assigned or deleted by the code: the program is refused as it is compiled. */
static const struct e2e_refusal BUILTINS_KEPT = {"error", "NameError",
                                                 "__builtins__ cannot be assigned in the sandbox"};
#define NOT_DEFINED(name)                                                                          \
	((const struct e2e_refusal){"error", "NameError", "name '" name "' is not defined"})

Test(python_layer, match_cannot_read_internals)
{
	start(NULL);
	/* A class pattern's keyword names are read in C: the check reads them in the code. */
	refused("import random\nmatch random.randint:\n    case object(__globals__=g):\n        g",
	        &E2E_DUNDER);
	refused("def g():\n    yield 1\nmatch g():\n    case object(gi_frame=f):\n        f",
	        &E2E_INTERNAL);
	/* Control: the same pattern with an attribute the rules allow matches. */
	expect_ok_result("import random\nmatch random.randint:\n    case object(__name__=n):\n"
	                 "        r = n\nr",
	                 "\"randint\"");
	/* __match_args__ names positional patterns at run time. */
	refused(REAL_GETTERS
	        "import json\nclass P:\n    __match_args__ = ('f',)\n"
	        "    def __init__(self, f):\n        self.f = f\n"
	        "match P(json.dumps):\n    case P(f):\n        g = A('__glo' + 'bals__')(f)\ng",
	        &E2E_DUNDER);
	still_serving();
	stop();
}

Test(python_layer, format_fields_cannot_read_internals)
{
	start(NULL);
	refused("import random\n'{0.__globals__[_os].environ}'.format(random.randint)",
	        &E2E_DUNDER);
	refused("import random\n'{f.__globals__}'.format_map({'f': random.randint})", &E2E_DUNDER);
	refused("import json\n'{0:{1.__globals__}}'.format(1, json.dumps)", &E2E_DUNDER);
	refused("'{0.__self__}'.format(len)", &E2E_DUNDER);
	refused("'{0.__class__.__base__.__subclasses__}'.format(1)", &E2E_DUNDER);
	refused("def g():\n    yield 1\n'{0.gi_frame}'.format(g())", &E2E_INTERNAL);
	/* Control: attribute fields still format. */
	expect_ok_result("import random\nclass P:\n    x = 3\n"
	                 "'{0.__name__} {1.x} {1.__class__.__name__}'.format(random.randint, P())",
	                 "\"randint 3 P\"");
	still_serving();
	stop();
}

Test(python_layer, real_attribute_getters_meet_the_rules_on_the_types)
{
	start(NULL);
	refused(REAL_GETTERS "import json\nA('__glo' + 'bals__')(json.dumps)", &E2E_DUNDER);
	refused(REAL_GETTERS "import random\nA('__glo' + 'bals__')(random.randint)", &E2E_DUNDER);
	refused(REAL_GETTERS "import json\nA('__buil' + 'tins__')(json.dumps)", &E2E_DUNDER);
	refused(REAL_GETTERS "import json\nA('__clo' + 'sure__')(json.dumps)", &E2E_DUNDER);
	refused(REAL_GETTERS "import json\nA('__co' + 'de__')(json.dumps)", &E2E_DUNDER);
	refused(REAL_GETTERS "import json\nA('__kwdef' + 'aults__')(json.dumps)", &E2E_DUNDER);
	refused(REAL_GETTERS "A('__se' + 'lf__')(len)", &E2E_DUNDER);
	refused(REAL_GETTERS "import math\nA('__se' + 'lf__')(math.sqrt)", &E2E_DUNDER);
	refused(REAL_GETTERS "M('__subcla' + 'sses__')(object)", &E2E_DUNDER);
	refused(REAL_GETTERS "A('__subcla' + 'sses__')(type)(int)", &E2E_DUNDER);
	refused(REAL_GETTERS "def g():\n    yield 1\nA('gi_fr' + 'ame')(g())", &E2E_INTERNAL);
	refused(REAL_GETTERS "def g():\n    yield 1\nA('gi_co' + 'de')(g())", &E2E_INTERNAL);
	refused(REAL_GETTERS "async def c():\n    pass\nA('cr_fr' + 'ame')(c())", &E2E_INTERNAL);
	refused(REAL_GETTERS "async def c():\n    yield 1\nA('ag_fr' + 'ame')(c())", &E2E_INTERNAL);
	refused(REAL_GETTERS "try:\n    1/0\nexcept Exception as e:\n"
	                     "    t = A('__trace' + 'back__')(e)\nA('tb_fr' + 'ame')(t)",
	        &E2E_INTERNAL);
	refused(REAL_GETTERS "import json\nA('__di' + 'ct__')(A('__glo' + 'bals__')(json.dumps))",
	        &E2E_DUNDER);
	/* Controls: the same getters on the user's own objects, and on harmless receivers. */
	expect_ok_result(REAL_GETTERS
	                 "def f(x=1):\n    return x\nclass B:\n    pass\n"
	                 "class C(B):\n    pass\n"
	                 "[A('__glo' + 'bals__')(f)['__name__'], A('__defa' + 'ults__')(f),"
	                 " A('__se' + 'lf__')([1].append), "
	                 "[c.__name__ for c in M('__subcla' + 'sses__')(B)],"
	                 " type(A('__co' + 'de__')(f)).__name__]",
	                 "[\"__main__\",[1],[1],[\"C\"],\"code\"]");
	still_serving();
	stop();
}

Test(python_layer, guarded_descriptors_cannot_be_unwrapped)
{
	start(NULL);
	refused(REAL_GETTERS "A('__di' + 'ct__')(type)['__subcla' + 'sses__'](object)",
	        &E2E_DUNDER);
	refused(REAL_GETTERS "d = A('__di' + 'ct__')(type)['__subcla' + 'sses__']\n"
	                     "A('__get' + '__')(d)(object)()",
	        &E2E_DUNDER);
	refused(REAL_GETTERS
	        "import json\nd = A('__di' + 'ct__')(type(json.dumps))['__glo' + 'bals__']\n"
	        "A('__get' + '__')(d)(json.dumps)",
	        &E2E_DUNDER);
	refused(REAL_GETTERS "import functools\nd = A('__subcla' + 'sses__')(type)\n"
	                     "functools.partial(d, object)()",
	        &E2E_DUNDER);
	refused("super(type, object).__subcla"
	        "sses__()",
	        &E2E_DUNDER);
	refused(REAL_GETTERS
	        "import json\nd = A('__di' + 'ct__')(type(json.dumps))['__glo' + 'bals__']\n"
	        "type(d)()",
	        &(struct e2e_refusal){"error", "TypeError", "cannot create"});
	refused(REAL_GETTERS "import copy, json\n"
	                     "copy.copy(A('__di' + 'ct__')(type(json.dumps))['__glo' + 'bals__'])",
	        &(struct e2e_refusal){"error", "TypeError", "cannot pickle"});
	/* Control: the guard describes the attribute it stands for. */
	expect_ok_result(
	    REAL_GETTERS
	    "import json\nd = A('__di' + 'ct__')(type(json.dumps))\n"
	    "g = d['__glo' + 'bals__']\n[g.__name__, A('__objcl' + 'ass__')(g).__name__]",
	    "[\"__globals__\",\"function\"]");
	still_serving();
	stop();
}

Test(python_layer, copy_protocols_are_no_trampoline)
{
	start(NULL);
	refused(REAL_GETTERS "import copy, random\nclass R:\n    def __reduce_ex__(self, p):\n"
	                     "        return (A('__glo' + 'bals__'), (random.randint,))\n"
	                     "copy.copy(R())",
	        &E2E_DUNDER);
	refused("import copy, random\nclass R:\n    def __reduce_ex__(self, p):\n"
	        "        return (str.format, ('{0.__globals__[_os]}', random.randint))\n"
	        "copy.copy(R())",
	        &E2E_DUNDER);
	refused(REAL_GETTERS "import json, functools, random\nstash = []\n"
	                     "sd = functools.singledispatch(lambda o: stash.append(o) or 0)\n"
	                     "sd.register(type(json.dumps), A('__glo' + 'bals__'))\n"
	                     "json.dumps(json.loads, default=sd)",
	        &E2E_DUNDER);
	/* update_wrapper copies the attributes it is told to: no dunder beyond what wrapping
	 * copies. */
	refused(REAL_GETTERS "import functools, json\nclass W:\n    pass\nw = W()\n"
	                     "functools.update_wrapper(w, json.dumps, "
	                     "assigned=('__glo' + 'bals__', '__name__'), updated=())\n"
	                     "sorted(A('__di' + 'ct__')(w))",
	        &(struct e2e_refusal){"error", "AttributeError", "__globals__"});
	/* Control: the same trampolines carry harmless attributes. */
	expect_ok_result(REAL_GETTERS
	                 "import copy, random\nclass R:\n    def __reduce_ex__(self, p):\n"
	                 "        return (A('__name__'), (random.randint,))\n"
	                 "copy.copy(R())",
	                 "\"randint\"");
	still_serving();
	stop();
}

/* A str subclass that hashes as __builtins__ and says it equals it the first time only,
 * counting how often it is asked (K.n). */
#define IMITATES_BUILTINS                                                                          \
	"import typing\nclass K(str):\n    n = 0\n"                                                \
	"    def __hash__(self):\n        return hash('__builtins__')\n"                           \
	"    def __eq__(self, o):\n        K.n += 1\n        return K.n == 1\n"
static const struct e2e_refusal IMITATED = {"error", "TypeError", "hashes as '__builtins__'"};

Test(python_layer, library_evaluated_code_gets_the_sandbox_builtins)
{
	static const char *const ev = "import typing\n"
	                              "E = lambda s: typing.ForwardRef(s)._evaluate(None, None, "
	                              "frozenset())\n";

	start(NULL);
	/* eval() with a fresh namespace used to put in the caller's builtins: typing's, the real
	 * ones. */
	refused(e2e_fmt("%sE('__import__')('os')", ev), &E2E_IMPORT);
	refused(e2e_fmt("%sE('open')('/etc/passwd')", ev), &NO_FILES);
	refused(e2e_fmt("%sE('exec')", ev), &NOT_DEFINED("exec"));
	refused("import typing\ntyping.ForwardRef('system', module='os')._evaluate(None, None, "
	        "frozenset())",
	        &NOT_DEFINED("system"));
	/* A function that claims to wrap a library function gets no library globals. */
	refused(
	    "import typing, json\ndef w():\n    pass\nobject.__setattr__(w, '__wrap' + 'ped__', "
	    "json.dumps)\nw.__annotations__ = {'r': '_default_encoder'}\ntyping.get_type_hints(w)",
	    &NOT_DEFINED("_default_encoder"));
	/* Code compiled from an annotation and set as a function's code obeys the rules. */
	refused(REAL_GETTERS
	        "import typing\n"
	        "c = A('__forward_co' + 'de__')(typing.ForwardRef('().__class__.__mro__'))\n"
	        "def f():\n    pass\nobject.__setattr__(f, '__co' + 'de__', c)\nf()",
	        &E2E_DUNDER);
	/* A key that is not a str but hashes as __builtins__ said "I am it" to the check and "I
	 * am not" to eval, which then put in typing's builtins, the real ones, where the caller
	 * could read them from its dict. */
	refused(IMITATES_BUILTINS "d = {K('x'): 1}\ndef f(a: 'open'):\n    pass\n"
	                          "typing.get_type_hints(f, globalns=d)\n"
	                          "[v for k, v in d.items() if type(k) is str][0]"
	                          "['__import__']('os').getpid()",
	        &IMITATED);
	expect_ok_result(IMITATES_BUILTINS "d = {K('x'): 1}\ndef f(a: 'open'):\n    pass\n"
	                                   "try:\n    typing.get_type_hints(f, globalns=d)\n"
	                                   "except TypeError:\n    pass\n"
	                                   "[K.n, [type(k).__name__ for k in d]]",
	                 "[0,[\"K\"]]");
	/* Controls: ordinary evaluation works, with the user's names. */
	expect_ok_result(
	    e2e_fmt("%sclass K:\n    pass\n"
	            "def f(a: 'K', b: 'list[int]') -> 'int':\n    pass\n"
	            "[E('int').__name__, sorted(k + ':' + repr(v) for k, v in "
	            "typing.get_type_hints(f).items())]",
	            ev),
	    "[\"int\",[\"a:<class '__main__.K'>\",\"b:list[int]\",\"return:<class 'int'>\"]]");
	expect_ok_result(REAL_GETTERS
	                 "import typing\n"
	                 "c = A('__forward_co' + 'de__')(typing.ForwardRef('(6).real * 7'))\n"
	                 "def f():\n    pass\nobject.__setattr__(f, '__co' + 'de__', c)\nf()",
	                 "42");
	still_serving();
	stop();
}

/* The layer's own lookups, in C, run none of the user's code: a key whose hash collides with
 * the name looked up had its __eq__ run in the middle of them, and freed what they held. */
#define EMPTIER(name, action)                                                                      \
	"class K(str):\n    def __hash__(self):\n        return hash('" name "')\n"                \
	"    def __eq__(self, o):\n        global E\n        if armed:\n"                          \
	"            armed.clear()\n" action                                                       \
	"            junk.extend([[str(i) * 3] for i in range(300000)])\n"                         \
	"        return False\narmed, junk = [], []\n"
Test(python_layer, the_layers_lookups_run_no_user_code)
{
	json_object *r;

	start(NULL);
	/* Reading a function's defaults checks them for namespaces (dataclasses reads its
	 * __init__'s); the check looked for __name__ in each dict, and the key emptied the list
	 * that held the dict. */
	r = run(e2e_fmt("import dataclasses\n%s"
	                "box = [{K('x'): i} for i in range(50)]\narmed.append(1)\n"
	                "@dataclasses.dataclass\nclass C:\n    x: tuple = (box,)\n"
	                "[len(box), len(armed), C.__doc__[:30]]",
	                EMPTIER("__name__", "            box.clear()\n")));
	e2e_assert_result(r, "defaults walked with a colliding key",
	                  "[50,1,\"C(x: tuple = ([{'x': 0}, {'x':\"]");
	/* The name of an exception's class is read from the class's __module__; the key gave the
	 * exception another class and freed its own. A class's names are plain str now: the
	 * class is not made. */
	r = run(e2e_fmt(
	    "%sclass F(Exception):\n    pass\n"
	    "E = type('E', (Exception,), {K('x'): 1, '__module__': 'mymod'})\n"
	    "err = E('boom')\narmed.append(1)\nraise err",
	    EMPTIER("__module__", "            err.__class__ = F\n            E = None\n")));
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "type"), "TypeError", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "must be plain str"), "%s", mcpc_json(r));
	r = run("[len(armed), 'err' in globals()]");
	e2e_assert_result(r, "nothing of the class's", "[0,false]");
	still_serving();
	stop();
}

/* lib_set(cls, name, value) and lib_set(cls, name): a library class changed from a library's
 * frame (statistics iterating a starmap of setattr). That change is the user's now, refused
 * (LIB_CHANGE); the attacks below once passed it, and tested the rules behind it. */
static const struct e2e_refusal LIB_CHANGE = {"error", "PermissionError",
                                              "a library function changes it for the user's code"};
#define LIB_SET                                                                                    \
	"import statistics, itertools\n"                                                           \
	"def lib_set(*a):\n"                                                                       \
	"    try:\n"                                                                               \
	"        statistics.mean(itertools.starmap(setattr if len(a) == 3 else delattr, [a]))\n"   \
	"    except TypeError:\n"                                                                  \
	"        pass\n"

/* Text that a library evaluates for the user (typing's ForwardRef) is the user's code, though
 * it runs under the globals the library was given: a function it made, set as a library
 * class's operator, ran inside a served module's import and passed there for that module's own
 * code (reading any function's __globals__: random's held the real os and builtins). */
#define OPERATOR_HOOK(builtins)                                                                    \
	REAL_GETTERS LIB_SET "import typing, re, enum, random\nout = []\n"                         \
	                     "ns = {" builtins "'out': out, 'ag': A('__globals__'),\n"             \
	                     "      'fn': random.Random.seed, 'orig': enum.Flag.__or__}\n"         \
	                     "lib_set(re.RegexFlag, '__or__', typing.ForwardRef(\n"                \
	                     "    'lambda a, b: (out.append(ag(fn)), orig(a, b))[1]'\n"            \
	                     ")._evaluate(ns, None, frozenset()))\n"                               \
	                     "try:\n    import json.tool\nfinally:\n"                              \
	                     "    lib_set(re.RegexFlag, '__or__')"
Test(python_layer, code_libraries_evaluate_for_the_user_is_the_users)
{
	start(NULL);
	refused(OPERATOR_HOOK(""), &LIB_CHANGE);
	/* The same with builtins of the user's own in the globals given: only library code runs
	 * with the interpreter's. */
	refused(OPERATOR_HOOK("'__builtins__': {}, "), &LIB_CHANGE);
	/* Library code may read a function's code; the evaluated text may not, whatever builtins
	 * it was given. */
	refused(REAL_GETTERS "import typing, json\n"
	                     "typing.ForwardRef('ag(json.dumps)')._evaluate(\n"
	                     "    {'ag': A('__code__'), 'json': json}, None, frozenset())",
	        &E2E_DUNDER);
	refused(REAL_GETTERS
	        "import typing, json, math\n"
	        "typing.ForwardRef('ag(json.dumps)')._evaluate(\n"
	        "    {'ag': A('__code__'), 'json': json, '__builtins__': math}, None,\n"
	        "    frozenset())",
	        &E2E_DUNDER);
	refused(REAL_GETTERS "import typing, json\n"
	                     "typing.ForwardRef('lambda: ag(json.dumps)')._evaluate(\n"
	                     "    {'ag': A('__code__'), 'json': json, '__builtins__': {}}, None,\n"
	                     "    frozenset())()",
	        &E2E_DUNDER);
	/* Nothing was read, and the import works once the operator is the library's own. */
	expect_ok_result("import json.tool\n[out, json.tool.__name__]", "[[],\"json.tool\"]");
	still_serving();
	stop();
}

/* A chain of C callables set on a library class runs with no frame of its own: a property
 * whose getter fills a defaultdict from a partial of the real attrgetter, or of enum's
 * _convert_ naming the module being imported, ran inside a served module's import as if that
 * module's code asked (random's real globals; the real os from gettext's namespace). */
#define C_CHAIN_HOOK(factory)                                                                      \
	REAL_GETTERS LIB_SET "import functools, re, collections, random, enum\n"                   \
	                     "d = collections.defaultdict(" factory ")\n"                          \
	                     "lib_set(re.RegexFlag, '__or__', property(d.__getitem__))\n"          \
	                     "try:\n    import json.tool\nfinally:\n"                              \
	                     "    lib_set(re.RegexFlag, '__or__')"
Test(python_layer, c_callables_do_not_pass_for_an_import)
{
	start(NULL);
	refused(C_CHAIN_HOOK("functools.partial(A('__globals__'), random.Random.seed)"),
	        &LIB_CHANGE);
	refused(C_CHAIN_HOOK("functools.partial(enum.Enum._convert_, 'X', 'gettext',\n"
	                     "    ('os', 'sys').__contains__)"),
	        &LIB_CHANGE);
	/* Nothing was read, and the import works with the class as the library left it. */
	expect_ok_result("import json.tool\n[len(d), json.tool.__name__]", "[0,\"json.tool\"]");
	still_serving();
	stop();
}

/* type(name, bases, ns) hands the call to the bases' metaclass when it has a __new__ of its
 * own; the code's __new__ that returned an existing library class had it recorded as a class
 * made in the call, which library frames (the executor's submit, asyncio's call_soon) could
 * then change for the code: a library class rewritten, the sandbox's own fixes to classes
 * undone, memory read and written through PIL, the real sys.modules reached. Only a class
 * type.__new__ makes is the call's; the code's own metaclasses work as ever. */
#define TRICK_CLASS                                                                                \
	"import json\n"                                                                            \
	"class M(type):\n"                                                                         \
	"    def __new__(mcls, name, bases, ns, **kw):\n"                                          \
	"        if name == 'Trick':\n            return json.JSONEncoder\n"                       \
	"        return super().__new__(mcls, name, bases, ns)\n"                                  \
	"class B(metaclass=M):\n    pass\n"                                                        \
	"type('Trick', (B,), {})\n"
Test(python_layer, a_metaclass_cannot_pass_a_library_class_for_a_new_one)
{
	start(NULL);
	refused(TRICK_CLASS "import concurrent.futures\n"
	                    "def evil(self, o):\n    return 'evil'\n"
	                    "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	                    "    ex.submit(setattr, json.JSONEncoder, 'default', evil).result()",
	        &LIB_CHANGE);
	refused(TRICK_CLASS
	        "import asyncio\n"
	        "async def main():\n"
	        "    asyncio.get_running_loop().call_soon(setattr, json.JSONEncoder, 'default',\n"
	        "                                         lambda self, o: 'evil')\n"
	        "    await asyncio.sleep(0)\n"
	        "asyncio.run(main())\n"
	        "import json\njson.dumps(object())",
	        &(struct e2e_refusal){"error", "TypeError", "is not JSON serializable"});
	/* The code's metaclasses make its classes, which it changes as it likes. */
	expect_ok_result("import abc, concurrent.futures\n"
	                 "class M(type):\n"
	                 "    def __new__(mcls, name, bases, ns, **kw):\n"
	                 "        ns['tag'] = name.lower()\n"
	                 "        return super().__new__(mcls, name, bases, ns)\n"
	                 "class B(metaclass=M):\n    pass\n"
	                 "C = type('C', (B,), {})\nD = type('D', (abc.ABC,), {})\n"
	                 "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	                 "    ex.submit(setattr, C, 'x', 1).result()\n"
	                 "    ex.submit(setattr, D, 'y', 2).result()\n"
	                 "[C.tag, C.x, type(C).__name__, D.y]",
	                 "[\"c\",1,\"M\",2]");
	still_serving();
	stop();
}

/* The classes made in a call are known by their addresses: a freed class of the code's left
 * its address, and a class a late import made there (html.parser's, served in the call)
 * passed for one of the call's, which the executor's frame could then change for the code
 * (the library's feed() ran the code's handle_data). A class leaves the set when it is freed. */
Test(python_layer, a_late_librarys_class_at_a_freed_address_stays_the_librarys)
{
	start(NULL);
	refused("import gc, concurrent.futures\ncs = []\n"
	        "for i in range(3000):\n    class C:\n        pass\n    cs.append(C)\n"
	        "del cs, C\ngc.collect()\n"
	        "import html.parser\n"
	        "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	        "    ex.submit(setattr, html.parser.HTMLParser, 'handle_data', print).result()",
	        &LIB_CHANGE);
	still_serving();
	stop();
}

/* The user's code changes its own classes, not the libraries' (whose code runs with the
 * interpreter's builtins and reads their attributes in C); subclasses, and the classes that
 * library helpers make for the user, are the user's. */
Test(python_layer, library_classes_cannot_be_changed)
{
	start(NULL);
	refused("import re\nre.RegexFlag.__or__ = lambda a, b: 0",
	        &(struct e2e_refusal){"error", "PermissionError",
	                              "RegexFlag.__or__ cannot be changed in the sandbox"});
	refused("import dataclasses\ntype.__setattr__(dataclasses.Field, 'name', 1)",
	        &(struct e2e_refusal){"error", "PermissionError",
	                              "Field.name cannot be changed in the sandbox"});
	refused("import json\ndel json.JSONDecoder.decode",
	        &(struct e2e_refusal){"error", "PermissionError",
	                              "JSONDecoder.decode cannot be changed in the sandbox"});
	/* Nothing changed, and the user's own classes change as ever. */
	expect_ok_result("import re, json, dataclasses, enum, collections\n"
	                 "class A:\n    pass\nA.x = 1\nclass R(json.JSONDecoder):\n    pass\n"
	                 "R.decode = lambda self, s: 'mine'\n"
	                 "class E(enum.Enum):\n    X = 1\nE.y = 2\n"
	                 "P = collections.namedtuple('P', 'a')\nP.z = 3\n"
	                 "@dataclasses.dataclass\nclass D:\n    v: int = 4\nD.w = 5\n"
	                 "[A.x, R().decode('1'), E.y, P.z, D.w, D().v, json.loads('[1]'),\n"
	                 " (re.I | re.M) == re.I + re.M]",
	                 "[1,\"mine\",2,3,5,4,[1],true]");
	still_serving();
	stop();
}

/* A library's code changes a class for the user's code when the user's code gets a C callable
 * run under a library's frame, or hands the class to a library function that sets what it is
 * told: the change is the user's, refused as that code's own would be. A class the zygote had
 * stays a library's whatever __module__ it is given. */
Test(python_layer, library_functions_change_no_library_class_for_the_user)
{
	static const struct e2e_refusal for_the_user = {
	    "error", "PermissionError", "a library function changes it for the user's code"};

	start(NULL);
	/* collections.Counter consumes a map of type.__setattr__ in C, under its own frame. */
	refused("import collections, re\n"
	        "collections.Counter(map(type.__setattr__, [re.RegexFlag], ['__or__'],\n"
	        "                        [lambda a, b: 'hijacked']))",
	        &for_the_user);
	refused("import collections, re\n"
	        "collections.Counter(map(type.__delattr__, [re.Scanner], ['scan']))",
	        &for_the_user);
	/* singledispatch's wrapper calls what it dispatches to from its own frame. */
	refused("import functools, json\n"
	        "functools.singledispatch(type.__setattr__)(json.JSONEncoder, 'default',\n"
	        "                                           lambda self, o: 'hijacked')",
	        &for_the_user);
	/* update_wrapper sets the names it is given on the wrapper it is given. */
	refused(
	    "import functools, json\nclass Src:\n    def default(self, o):\n"
	    "        return 'hijacked'\n"
	    "functools.update_wrapper(json.JSONEncoder, Src, assigned=('default',), updated=())",
	    &for_the_user);
	refused(
	    "import functools, json\nclass M:\n    pass\n"
	    "functools.update_wrapper(json.JSONDecoder, M, assigned=('__module__',), updated=())",
	    &for_the_user);
	/* Nothing changed: the operator, the method, the encoder's refusal, the decoder's module;
	 * a library still finishes the classes it makes for the user (namedtuple, enum, abc,
	 * dataclasses). */
	expect_ok_result("import re, json, collections, enum, abc, dataclasses\n"
	                 "try:\n    json.dumps(object())\n    enc = 'changed'\n"
	                 "except TypeError:\n    enc = 'refuses'\n"
	                 "P = collections.namedtuple('P', 'a b')\n"
	                 "E = enum.Enum('E', 'x y')\n"
	                 "class B(abc.ABC):\n    @abc.abstractmethod\n    def f(self):\n"
	                 "        pass\n"
	                 "try:\n    B()\n    b = 'made'\nexcept TypeError:\n    b = 'abstract'\n"
	                 "@dataclasses.dataclass(order=True)\nclass D:\n    v: int\n"
	                 "[(re.I | re.M) == re.I + re.M, hasattr(re.Scanner, 'scan'), enc,\n"
	                 " json.JSONDecoder.__module__, P(1, 2).b, E.y.value, b, D(7).v]",
	                 "[true,true,\"refuses\",\"json.decoder\",2,2,\"abstract\",7]");
	still_serving();
	stop();
}

Test(python_layer, libraries_cannot_open_real_module_namespaces)
{
	start(NULL);
	/* enum reads sys.modules[name].__dict__ for a module the caller names. */
	refused("import enum\nX = enum.Enum._convert_('X', 'os', lambda n: n == 'system')\n"
	        "X.system.value",
	        &NO_MODULE_DICT("os"));
	refused("import enum\nX = enum.Enum._convert_('X', 'builtins', lambda n: n == 'exec')",
	        &NO_MODULE_DICT("builtins"));
	refused("import enum\nclass E(enum.IntEnum):\n    __module__ = 'builtins'\n    exec = 1\n"
	        "enum.global_enum(E)",
	        &NO_MODULE_DICT("builtins"));
	/* dataclasses executes generated code in the namespace of the class's module. */
	refused("import dataclasses\n"
	        "C = type('C', (), {'__module__': 'os', '__annotations__': {'x=environ,y': int}})\n"
	        "dataclasses.dataclass(C)",
	        &NO_MODULE_DICT("os"));
	/* The builtins were not changed by the attempts above. */
	expect_ok_result("[callable(len), 'exec' in dir(__builtins__) if False else 1]",
	                 "[true,1]");
	/* Controls: the user's own module works for all of them. */
	expect_ok_result("import enum, dataclasses\n@enum.global_enum\nclass D(enum.IntEnum):\n"
	                 "    NORTH = 1\n@dataclasses.dataclass\nclass P:\n    x: 'int' = 2\n"
	                 "[NORTH == 1, P().x, type(NORTH).__name__]",
	                 "[true,2,\"D\"]");
	still_serving();
	stop();
}

/* CPython gives every AttributeError raised by a failed read the object read (`obj`): the
 * refusals above, and a library's read of a real module's missing attribute, carried the real
 * module (its os, sys and builtins) to the user's except clause. */
Test(python_layer, attribute_errors_carry_no_real_module)
{
	start(NULL);
	expect_ok_result(
	    "import enum, dataclasses, math\nr = []\n"
	    "def t(f):\n    try:\n        f()\n        r.append('no error')\n"
	    "    except AttributeError as e:\n"
	    "        r.append(repr(e.obj))\n"
	    "t(lambda: enum.Enum._convert_('X', 'os', bool))\n"
	    "t(lambda: enum.Enum._convert_('X', 'builtins', bool))\n"
	    "t(lambda: enum.Enum._convert_('X', 'sys', bool))\n"
	    "t(lambda: dataclasses.dataclass(type('C', (), {'__module__': 'sys',\n"
	    "                                               '__annotations__': {'x': int}})))\n"
	    "class E(enum.IntEnum):\n    __module__ = 'builtins'\n    A = 1\n"
	    "t(lambda: enum.global_enum(E))\n"
	    /* Controls: the object stays for everything else, a module's proxy included. */
	    "t(lambda: [].nope)\nt(lambda: math.nope)\n"
	    "class U:\n    pass\nt(lambda: U().nope)\n"
	    "r[:5] + [r[5], r[6], r[7].startswith('<__main__.U object')]",
	    "[\"None\",\"None\",\"None\",\"None\",\"None\",\"[]\",\"<module 'math'>\",true]");
	/* What the escape did next: nothing reached the real builtins. */
	expect_ok_result("import enum, operator\n"
	                 "try:\n    enum.Enum._convert_('X', 'os', bool)\n"
	                 "except AttributeError as e:\n    os = e.obj\n"
	                 "try:\n    b = type(operator.attrgetter('x'))('__builtins__')(os)\n"
	                 "    v = 'reached ' + repr(b['open'])\n"
	                 "except AttributeError as e:\n    v = str(e)\nv",
	                 "\"'NoneType' object has no attribute '__builtins__'\"");
	/* An object the user's code sets itself is kept. */
	expect_ok_result("e = AttributeError('x', name='n', obj=5)\n[e.obj, e.name]", "[5,\"n\"]");
	still_serving();
	stop();
}

/* object.__getstate__ reads an object's dict through its type's dict offset: for a class that
 * is the class's own writable dict. ModuleType's, with its __dict__ guard replaced by a
 * property, gave the real os to the next library read of a module's namespace; int's, changed,
 * left a freed method in the type cache (the worker crashed). */
#define GETSTATE_REFUSED                                                                           \
	((const struct e2e_refusal){"error", "AttributeError",                                     \
	                            "Forbidden access to dunder attribute: __getstate__"})
Test(python_layer, object_getstate_gives_no_class_its_dict)
{
	start(NULL);
	refused("import operator, enum\n"
	        "A = type(operator.attrgetter('x'))\n"
	        "d = A('__getstate__')(object)(type(operator))\n"
	        "got = []\n"
	        "d['__dict__'] = property(lambda m: got.append(m) or {})\n"
	        "enum.Enum._convert_('X', 'os', bool)\n"
	        "got",
	        &GETSTATE_REFUSED);
	refused("import operator\n"
	        "A = type(operator.attrgetter('x'))\n"
	        "d = A('__getstate__')(object)(int)\n"
	        "(5).bit_length()\ndel d['bit_length']\nd['x'] = [object() for i in range(50)]\n"
	        "(5).bit_length()",
	        &GETSTATE_REFUSED);
	refused("import operator\nclass C:\n    pass\n"
	        "type(operator.attrgetter('x'))('__getstate__')(C())\n"
	        "object.__getstate__.__get__(C)()",
	        &GETSTATE_REFUSED);
	/* Nothing was changed: int keeps its method, ModuleType its guard. */
	expect_ok_result("import enum\n"
	                 "try:\n    enum.Enum._convert_('X', 'os', bool)\n    v = 'read'\n"
	                 "except AttributeError as e:\n    v = str(e)\n"
	                 "[(5).bit_length(), v]",
	                 "[3,\"module 'os' has no attribute '__dict__'\"]");
	/* Controls: an instance's state, and the copies that ask for it. */
	expect_ok_result("import operator, copy, collections, fractions\n"
	                 "class P:\n    def __init__(self):\n        self.a = [1, 2]\n"
	                 "A = type(operator.attrgetter('x'))\n"
	                 "[A('__getstate__')(P())(), copy.deepcopy(P()).a, copy.copy(P()).a,\n"
	                 " list(copy.deepcopy(collections.OrderedDict(a=1)).items()),\n"
	                 " str(copy.copy(fractions.Fraction(1, 3))), copy.copy(int) is int]",
	                 "[{\"a\":[1,2]},[1,2],[1,2],[[\"a\",1]],\"1/3\",true]");
	still_serving();
	stop();
}

/* A mappingproxy passed ==, != and | to the dict it wraps, and dict's NotImplemented handed that
 * dict to the user's reflected method: type.__dict__ gave int's and dict's own dicts (a user
 * function as dict.get then received sys.modules; a method deleted there crashed the worker
 * through the type cache). type.__abstractmethods__'s setter made such a change take effect. */
Test(python_layer, a_class_dict_behind_its_mappingproxy_stays_there)
{
	start(NULL);
	expect_ok_result("import operator\n"
	                 "A = type(operator.attrgetter('x'))\n"
	                 "box = []\n"
	                 "class X:\n"
	                 "    def __eq__(s, o):\n        box.append(o)\n        return True\n"
	                 "    def __ne__(s, o):\n        box.append(o)\n        return True\n"
	                 "    def __ror__(s, o):\n        box.append(o)\n        return 0\n"
	                 "A('__dict__')(int) == X()\nA('__dict__')(dict) | X()\n"
	                 "A('__dict__')(int) != X()\n"
	                 /* A proxy over a mapping of the user's passed it on too. */
	                 "class E:\n"
	                 "    def __getitem__(s, k):\n        raise KeyError(k)\n"
	                 "    def __eq__(s, o):\n        box.append(o)\n        return False\n"
	                 "    def __ror__(s, o):\n        box.append(o)\n        return 0\n"
	                 "mp = A('__dict__')(dict)\nmp == type(mp)(E())\nmp | type(mp)(E())\n"
	                 "for d in box:\n"
	                 "    if type(d) is dict:\n"
	                 "        d['planted'] = 1\n        d.pop('bit_length', None)\n"
	                 "x = [bytearray(64) for i in range(1000)]\n"
	                 "[len(box), hasattr(5, 'planted'), (5).bit_length(),\n"
	                 " 'planted' in A('__dict__')(int), 'planted' in A('__dict__')(dict)]",
	                 "[5,false,3,false,false]");
	refused("import operator\nA = type(operator.attrgetter('x'))\n"
	        "A('__set__')(A('__dict__')(type)['__abstractmethods__'])(int, ())",
	        &(struct e2e_refusal){"error", "AttributeError",
	                              "Forbidden access to dunder attribute: __abstractmethods__"});
	refused("import operator, json\nA = type(operator.attrgetter('x'))\n"
	        "A('__set__')(A('__dict__')(type)['__abstractmethods__'])(json.JSONEncoder, "
	        "('encode',))",
	        &(struct e2e_refusal){"error", "AttributeError",
	                              "Forbidden access to dunder attribute: __abstractmethods__"});
	expect_ok_result("import json\njson.dumps({'a': 1})", "\"{\\\"a\\\": 1}\"");
	/* Controls: proxies compare and merge as before; a class of the user's may be abstract. */
	expect_ok_result(
	    "import operator, abc\n"
	    "A = type(operator.attrgetter('x'))\n"
	    "MP = type(A('__dict__')(int))\n"
	    "class C(abc.ABC):\n    @abc.abstractmethod\n    def f(self): pass\n"
	    "v = [MP({'a': 1}) == {'a': 1}, MP({'a': 1}) | {'b': 2}, {'c': 3} | MP({'a': 1}),\n"
	    "     A('__dict__')(int) == A('__dict__')(int)]\n"
	    "try:\n    C()\nexcept TypeError as e:\n    v.append(str(e)[:32])\nv",
	    "[true,{\"a\":1,\"b\":2},{\"c\":3,\"a\":1},true,\"Can't instantiate abstract class\"]");
	still_serving();
	stop();
}

/* copy sets the state a __reduce__ gives on what its callable made: a callable of the user's that
 * returned a library class had copy's own frame change that class (an attribute, an operator,
 * __abstractmethods__), past the rule that closes library classes to the user's code. */
Test(python_layer, copy_sets_no_state_on_a_library_class)
{
	start(NULL);
	refused("import copy, json\n"
	        "def cls():\n    return json.JSONDecoder\n"
	        "class X:\n"
	        "    def __reduce__(self):\n"
	        "        return (cls, (), (None, {'zzz': 42, 'decode': property(lambda s: "
	        "'hooked')}))\n"
	        "copy.copy(X())",
	        &(struct e2e_refusal){"error", "TypeError", "copy does not set state on a class"});
	refused("import copy, json\n"
	        "def cls():\n    return json.JSONDecoder\n"
	        "class X:\n"
	        "    def __reduce__(self):\n"
	        "        return (cls, (), {'zzz': 1})\n"
	        "copy.deepcopy([X()])",
	        &(struct e2e_refusal){"error", "TypeError", "copy does not set state on a class"});
	/* Nothing changed, and copies of the user's objects carry their state. */
	expect_ok_result("import copy, json\n"
	                 "class P:\n    def __init__(self):\n        self.a = [1]\n"
	                 "class S:\n    __slots__ = ('b',)\n"
	                 "s = S()\ns.b = 2\n"
	                 "[hasattr(json.JSONDecoder, 'zzz'), json.loads('[1]'), copy.copy(P()).a,\n"
	                 " copy.deepcopy(s).b]",
	                 "[false,[1],[1],2]");
	still_serving();
	stop();
}

Test(python_layer, library_methods_that_name_modules_are_refused)
{
	start(NULL);
	refused("import contextlib\nclass R(contextlib.redirect_stdout):\n    _stream = 'modules'\n"
	        "r = R(None)\nr.__enter__()\nr._old_targets[0]['os']",
	        &(struct e2e_refusal){"error", "AttributeError",
	                              "redirect sys.stdout and sys.stderr only"});
	refused(
	    "import contextlib\nclass S(str):\n    pass\n"
	    "class R(contextlib.redirect_stdout):\n    _stream = S('stdout')\nR(None).__enter__()",
	    &(struct e2e_refusal){"error", "AttributeError",
	                          "redirect sys.stdout and sys.stderr only"});
	refused(REAL_GETTERS "import typing\na = typing.List[bytes]\na._name = 'sys'\n"
	                     "M('__red' + 'uce__')(a)",
	        &(struct e2e_refusal){"error", "TypeError", "cannot reduce"});
	refused(REAL_GETTERS "import typing\na = typing.Set[bytes]\na._name = '__builtins__'\n"
	                     "M('__red' + 'uce__')(a)",
	        &(struct e2e_refusal){"error", "TypeError", "cannot reduce"});
	/* Controls: both work as intended (typing caches its aliases: List[int] is not one of
	 * those changed above). */
	expect_ok_result(
	    "import contextlib\nclass W:\n    def __init__(self):\n        self.t = []\n"
	    "    def write(self, s):\n        self.t.append(s)\nw = W()\n"
	    "with contextlib.redirect_stdout(w):\n    print('hidden')\nw.t",
	    "[\"hidden\",\"\\n\"]");
	expect_ok_result(REAL_GETTERS "import typing, copy\n"
	                              "[copy.deepcopy(typing.List[int]) == typing.List[int], "
	                              "repr(M('__red' + 'uce__')(typing.Dict[str, int])[1][0])]",
	                 "[true,\"typing.Dict\"]");
	still_serving();
	stop();
}

/* functools.update_wrapper reads, from a library frame, whatever attributes its caller names
 * (assigned=...) and hands them to the caller's object: what library code may read of a
 * function (its code, its defaults) reaches no module. safepy's own typing fix kept typing's
 * namespace in a default. */
Test(python_layer, library_readers_of_named_attributes_reach_no_module)
{
	static const char *const grab =
	    "import functools, typing, json\ngot = {}\nclass W:\n    def __setattr__(self, k, v):\n"
	    "        got[k] = v\ndef grab(obj, name):\n    got.clear()\n"
	    "    functools.update_wrapper(W(), obj, assigned=(name,), updated=())\n"
	    "    return got.get(name)\n";

	start(NULL);
	/* It copies what wrapping copies (__module__, __name__, __qualname__, __doc__,
	 * __annotations__, __dict__), no other dunder. */
	refused(e2e_fmt("%sred = grab(type(typing.List[int]), '__red' + 'uce__')\n"
	                "grab(red, '__defa' + 'ults__')[0]['sys']",
	                grab),
	        &(struct e2e_refusal){"error", "AttributeError", "__reduce__"});
	refused(e2e_fmt("%sgrab(json.dumps, '__glo' + 'bals__')['sys']", grab),
	        &(struct e2e_refusal){"error", "AttributeError", "__globals__"});
	refused(e2e_fmt("%s@functools.wraps(json.dumps, assigned=('__defa' + 'ults__',))\n"
	                "def w():\n    pass\nw",
	                grab),
	        &(struct e2e_refusal){"error", "AttributeError", "__defaults__"});
	/* Controls: what it is for still works. */
	expect_ok_result(
	    e2e_fmt("%s@functools.wraps(json.dumps)\ndef w():\n    pass\n"
	            "[w.__name__, grab(len, '__name__'), functools.update_wrapper.__name__]",
	            grab),
	    "[\"dumps\",\"len\",\"update_wrapper\"]");
	still_serving();
	stop();
}

/* A library's code and defaults are the library's to read and change by their names: a
 * library function that reads an attribute by a name the user chose (ast.iter_fields reads
 * each of an object's _fields, which the user's code may set on a library function), or a
 * str.format handed to a library that calls it (singledispatch), gave the user library
 * functions' code objects, which it could then run as its own function's code; and
 * object.__setattr__ changed a library function's defaults for every later call of it. */
Test(python_layer, a_librarys_functions_are_read_and_changed_only_by_it)
{
	start(NULL);
	expect_ok_result(
	    "import ast, json, copy, textwrap, functools\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        return type(r).__name__ if r else 'nothing'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "textwrap.wrap._fields = ('__code__', '__defaults__', '__kwdefaults__')\n"
	    "class S(str):\n"
	    "    pass\n"
	    "sd = functools.singledispatch(lambda x: x)\n"
	    "sd.register(S, functools.partial('{0.__code__} {0.__defaults__}'.format, "
	    "textwrap.wrap))\n"
	    "def mine(a=1):\n"
	    "    return a\n"
	    "object.__setattr__(mine, '__defaults__', (5,))\n"
	    "[attempt(lambda: dict(ast.iter_fields(textwrap.wrap))), attempt(lambda: sd(S('x'))),\n"
	    " attempt(lambda: object.__setattr__(json.dumps, '__kwdefaults__', {'indent': 7})),\n"
	    " attempt(lambda: object.__setattr__(copy.deepcopy, '__defaults__', (None, []))),\n"
	    " json.dumps([1]), copy.deepcopy([1]), mine()]",
	    "[\"nothing\",\"AttributeError\",\"AttributeError\",\"AttributeError\",\"[1]\",[1],5]");
	still_serving();
	stop();
}

/* A bound method copies as getattr(self, its function's name): the name is the user's to set,
 * and copy ran the reduction with the interpreter's own getattr, which read any attribute
 * past the rules (a module's __dict__, a class's __mro__, a generator's gi_yieldfrom). The
 * reduction names the checked getattr: each read is refused as the user's own would be (the
 * __dict__ of an object of the user's class is given, as vars() gives it), and an ordinary
 * method still copies. */
Test(python_layer, a_copied_method_reads_no_attribute_past_the_rules)
{
	start(NULL);
	expect_ok_result(
	    "import copy\n"
	    "class C:\n"
	    "    def m(self):\n"
	    "        return 7\n"
	    "class F:\n"
	    "    def __call__(self, *a):\n"
	    "        pass\n"
	    "def rget(obj, name):\n"
	    "    f = F()\n"
	    "    f.__name__ = name\n"
	    "    try:\n"
	    "        return type(copy.copy(type(C().m)(f, obj))).__name__\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'Forbidden' in str(e) else str(e)\n"
	    "class A:\n"
	    "    pass\n"
	    "a = A()\n"
	    "a.x = 1\n"
	    "def gen():\n"
	    "    yield from iter([1])\n"
	    "g = gen()\n"
	    "next(g)\n"
	    "c = C()\n"
	    "[rget(a, '__dict__'), rget(copy, '__dict__'), rget(int, '__mro__'),\n"
	    " rget(object, '__reduce_ex__'), rget(g, 'gi_yieldfrom'), rget(a, 'x'),\n"
	    " copy.copy(c.m)(), copy.deepcopy(c.m)(), copy.copy(c.m) == c.m]",
	    "[\"dict\",\"refused\",\"refused\",\"refused\",\"refused\",\"int\",7,7,true]");
	still_serving();
	stop();
}

/* struct.Struct's __init__ called again on a live Struct freed the codes a pack_into was
 * writing by (an __index__ that re-made the format twice wrote the user's bytes past the
 * window the call had checked: any memory, then the real builtins), and iter_unpack read a new
 * format's size past its buffer. A Struct gets its format once, and one made by __new__ alone
 * is not used before it has one (pack_into read past its own arguments). */
Test(python_layer, a_struct_keeps_the_format_it_was_made_with)
{
	start(NULL);
	expect_ok_result(
	    "import struct\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except TypeError as e:\n"
	    "        return 'refused' if 'struct.Struct' in str(e) else str(e)\n"
	    "big = bytearray(b'.' * 64)\n"
	    "win = memoryview(big)[:2]\n"
	    "s = struct.Struct('bb')\n"
	    "class I:\n"
	    "    def __index__(self):\n"
	    "        s.__init__('b20x8s'); s.__init__('b20x8s'); return 0x41\n"
	    "wrote = t(lambda: s.pack_into(win, 0, I(), b'PWNED!!!'))\n"
	    "r = struct.Struct('b')\n"
	    "it = r.iter_unpack(bytes(16))\n"
	    "next(it)\n"
	    "read = t(lambda: r.__init__('1000000s'))\n"
	    "after = [len(x[0]) if isinstance(x[0], bytes) else x[0] for x in it]\n"
	    "class S(struct.Struct):\n"
	    "    def __init__(self, f):\n"
	    "        super().__init__(f)\n"
	    "sub = S('<h')\n"
	    "bare = struct.Struct.__new__(struct.Struct)\n"
	    "[wrote, bytes(big[2:]) == b'.' * 62, s.format, read, after, r.format,\n"
	    " t(lambda: struct.Struct.__init__(sub, '<q')), sub.pack(-2).hex(), sub.size,\n"
	    " t(lambda: bare.pack_into(bytearray(8))), t(lambda: bare.unpack_from(b'abc')),\n"
	    " t(lambda: list(bare.iter_unpack(b'ab'))), t(lambda: bare.unpack(b'')),\n"
	    " t(lambda: bare.pack()), bare.__init__('>H'), bare.unpack(b'\\x01\\x02'),\n"
	    " struct.Struct('<2i').unpack_from(bytes(9), offset=1), struct.pack('<i', 5).hex()]",
	    "[\"refused\",true,\"bb\",\"refused\",[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"b\","
	    "\"refused\","
	    "\"feff\",2,\"refused\",\"refused\",\"refused\",\"refused\",\"refused\",null,[258],[0,"
	    "0],"
	    "\"05000000\"]");
	still_serving();
	stop();
}

/* deque.index compared its items without owning them: a Decimal's comparison asks whether
 * the other is a numbers.Rational, which runs a class's __subclasshook__; that emptied the
 * deque and the reflected __eq__ got the freed Decimal (memory laid over it reached the real
 * builtins and posix). str() of a UnicodeDecodeError read its object at any start (negative,
 * or an object of another type): any address. The search owns its items and says when the
 * deque changed; the error's text comes from the object only when they agree. */
Test(python_layer, deque_searches_and_unicode_errors_read_what_they_own)
{
	start(NULL);
	expect_ok_result(
	    "import decimal, numbers, collections\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "dq = collections.deque()\n"
	    "got = []\n"
	    "class Hook(numbers.Rational):\n"
	    "    @classmethod\n"
	    "    def __subclasshook__(cls, C):\n"
	    "        if C is R and dq:\n"
	    "            dq.clear()\n"
	    "        return NotImplemented\n"
	    "class R:\n"
	    "    def __eq__(self, other):\n"
	    "        got.append(type(other).__name__)\n"
	    "        return True\n"
	    "    __hash__ = None\n"
	    "dq.append(decimal.Decimal('1234567.5') + 1)\n"
	    "r = [t(lambda: dq.index(R())), got]\n"
	    "e = UnicodeDecodeError('utf-8', b'x', 0, 1, 'bad')\n"
	    "e.object = 1e300\n"
	    "e.start = 5000\n"
	    "e.end = 5001\n"
	    "r.append(str(e))\n"
	    "e2 = UnicodeDecodeError('utf-8', b'x', 0, 1, 'bad')\n"
	    "e2.start = -(1 << 40)\n"
	    "e2.end = e2.start + 1\n"
	    "r.append(str(e2))\n"
	    "d = collections.deque('abcab')\n"
	    "r += [d.index('b'), d.index('b', 2), d.index('a', -2), t(lambda: d.index('z')), "
	    "t(lambda: d.index('a', 1, 3)),\n"
	    "      str(UnicodeDecodeError('utf-8', b'\\xff', 0, 1, 'invalid start byte'))]\n"
	    "r",
	    "[\"RuntimeError\",[\"Decimal\"],\"bad\",\"bad\",1,4,3,\"ValueError\",\"ValueError\","
	    "\"'utf-8' codec can't decode byte 0xff in position 0: invalid start byte\"]");
	still_serving();
	stop();
}

/* C code that calls what it reads from a field without owning it: iter(callable, sentinel)'s
 * step, a defaultdict's factory, a property's getter, a staticmethod called, a classmethod
 * bound. The user's code inside the call cleared the field (the iterator finished from inside,
 * the factory set to None, __init__ called again): a bound list.sort freed while it ran wrote
 * its size and item array into an object laid over the list (any memory, the real builtins).
 * Each is held for its call: the list is not freed, nothing is laid over it (a property's or a
 * classmethod's __init__ called again is refused now: TypeError). Arguments taken
 * for what they are not: TextIOWrapper.reconfigure read a bytes encoding as a string and freed
 * an address its contents gave; bytearray.join copied from its own buffer after the iterable
 * had cleared it; except* used whatever split() answered as its pair (an int's digits: any
 * object). The encoding must be a str, join reads the items first, and an exception group's
 * split is its class's own. Ordinary use answers as before. */
Test(python_layer, callables_and_arguments_are_what_the_c_code_takes_them_for)
{
	start(NULL);
	expect_ok_result(
	    "import collections, io\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class L(list):\n"
	    "    __slots__ = ()\n"
	    "class F:\n"
	    "    __slots__ = ('a', 'b', 'c')\n"
	    "def reclaim(st):\n"
	    "    for _ in range(5000):\n"
	    "        f = F()\n"
	    "        st['hold'].append(f)\n"
	    "        if id(f) == st['tid']:\n"
	    "            st['f'] = f\n"
	    "            return\n"
	    "class K:\n"
	    "    def __init__(self, r, hook=None):\n"
	    "        self.r, self.hook = r, hook\n"
	    "    def __lt__(self, o):\n"
	    "        h, self.hook = self.hook, None\n"
	    "        if h:\n"
	    "            h()\n"
	    "        return self.r < o.r\n"
	    "def sorted_by(make, drop):\n"
	    "    st = {'hold': []}\n"
	    "    target = L([K(3, lambda: (drop(), reclaim(st))), K(1), K(2)])\n"
	    "    st['tid'] = id(target)\n"
	    "    holder = make(target.sort)\n"
	    "    del target\n"
	    "    return holder, st\n"
	    "dd, s1 = sorted_by(collections.defaultdict, lambda: setattr(dd, 'default_factory', "
	    "None))\n"
	    "r = [t(lambda: dd['x']), 'f' in s1]\n"
	    "it, s2 = sorted_by(lambda f: iter(f, None), lambda: next(it, None))\n"
	    "r += [t(lambda: next(it)), 'f' in s2]\n"
	    "sm, s3 = sorted_by(staticmethod, lambda: sm.__init__(len))\n"
	    "r += [t(lambda: sm()), 'f' in s3]\n"
	    "s4 = {'hold': []}\n"
	    "def gen():\n"
	    "    yield 1\n"
	    "    P.p.__init__(None)\n"
	    "    reclaim(s4)\n"
	    "    yield 2\n"
	    "target = L()\n"
	    "s4['tid'] = id(target)\n"
	    "class P:\n"
	    "    p = property(target.extend)\n"
	    "    def __iter__(self):\n"
	    "        return gen()\n"
	    "del target\n"
	    "r += [t(lambda: P().p), 'f' in s4]\n"
	    "s5 = {'hold': []}\n"
	    "class G:\n"
	    "    __slots__ = ('a', 'b', 'c')\n"
	    "    def __get__(self, obj, typ):\n"
	    "        cm.__init__(len)\n"
	    "        reclaim(s5)\n"
	    "        return self.a\n"
	    "g = G()\n"
	    "g.a = 'kept'\n"
	    "s5['tid'] = id(g)\n"
	    "cm = classmethod(g)\n"
	    "del g\n"
	    "class H:\n"
	    "    m = cm\n"
	    "r += [t(lambda: H.m), 'f' in s5]\n"
	    "b = bytes(64)\n"
	    "r += [t(lambda: io.TextIOWrapper(io.BytesIO()).reconfigure(encoding=b)), len(b)]\n"
	    "sep = bytearray(b'A' * 100)\n"
	    "def parts():\n"
	    "    sep.clear()\n"
	    "    junk = [bytearray(b'B' * 100) for _ in range(50)]\n"
	    "    yield b'<'\n"
	    "    yield b'>'\n"
	    "r.append(len(sep.join(parts())))\n"
	    "class EG(ExceptionGroup):\n"
	    "    def split(self, t):\n"
	    "        return 5\n"
	    "class EG2(ExceptionGroup):\n"
	    "    pass\n"
	    "eg = ExceptionGroup('x', [KeyError()])\n"
	    "r += [t(lambda: EG('x', [KeyError()])), t(lambda: setattr(eg, 'split', 1)), t(lambda: "
	    "setattr(EG2, 'split', len))]\n"
	    "class Mine(ExceptionGroup):\n"
	    "    def derive(self, excs):\n"
	    "        return Mine(self.message, excs)\n"
	    "caught = []\n"
	    "try:\n"
	    "    raise Mine('m', [KeyError(1), ValueError(2), KeyError(3)])\n"
	    "except* KeyError as e:\n"
	    "    caught.append((type(e).__name__, len(e.exceptions)))\n"
	    "except* ValueError as e:\n"
	    "    caught.append((type(e).__name__, len(e.exceptions)))\n"
	    "d = collections.defaultdict(list)\n"
	    "d['a'].append(1)\n"
	    "calls = iter([1, 2, None, 4].pop, 2)\n"
	    "r += [caught, dict(d), list(calls), staticmethod(len)('abc'), "
	    "io.TextIOWrapper(io.BytesIO(), encoding='utf-8').encoding]\n"
	    "r",
	    "[null,false,\"StopIteration\",false,null,false,\"TypeError\",false,\"TypeError\","
	    "false,"
	    "\"TypeError\",64,2,\"TypeError\",\"TypeError\",\"TypeError\",[[\"Mine\",2],[\"Mine\","
	    "1]],{\"a\":[1]},[4,null],3,\"utf-8\"]");
	still_serving();
	stop();
}

/* A codec read its input again from the exception after an error handler of the user's
 * returned, then dropped the handler's pair: a tuple subclass's __del__ gave the exception
 * another object then, and the codec read the freed input (other objects' bytes in the text
 * decoded). Handlers answer the codec through a plain pair made after theirs is gone, and the
 * pair's __del__ is deferred until the codec has returned (it decodes the 100 bytes the handler
 * gave it); handlers work as before. */
Test(python_layer, a_codec_reads_the_input_its_error_handler_left)
{
	start(NULL);
	expect_ok_result(
	    "import codecs\n"
	    "st = {}\n"
	    "class T(tuple):\n"
	    "    def __del__(self):\n"
	    "        st['exc'].object = b''\n"
	    "        st['fill'] = [bytes(bytearray(b'Z' * 100)) for _ in range(50)]\n"
	    "def handler(exc):\n"
	    "    st['exc'] = exc\n"
	    "    if 'n' in st:\n"
	    "        return ('?', exc.end)\n"
	    "    st['n'] = 1\n"
	    "    exc.object = bytes(bytearray(b'A' * 100))\n"
	    "    return T(('', 0))\n"
	    "codecs.register_error('swap', handler)\n"
	    "out = b'\\xff'.decode('utf-8', 'swap')\n"
	    "codecs.register_error('mark', lambda e: ('<%d>' % e.start, e.end))\n"
	    "[len(out), 'Z' in out, b'a\\xffb'.decode('utf-8', 'mark'), "
	    "'x\\u20acy'.encode('ascii', 'mark').decode(),\n"
	    " b'\\xff'.decode('utf-8', 'replace'), "
	    "codecs.lookup_error('mark')(UnicodeDecodeError('utf-8', b'\\xff', 0, 1, 'bad'))]",
	    "[100,false,\"a<1>b\",\"x<1>y\",\"\\ufffd\",[\"<0>\",1]]");
	still_serving();
	stop();
}

/* b[i] = v took the bytearray's buffer address before v's __index__ ran, and wrote the byte
 * there after: an __index__ that grew the bytearray (its buffer moved, the old block freed)
 * and made new bytearrays put their headers where the byte went (a size of 0x5a000008: any
 * memory, then the real builtins). The value is read first, as the subscript is; ordinary
 * assignments answer as before. */
Test(python_layer, a_bytearray_items_value_is_read_before_its_buffer)
{
	start(NULL);
	expect_ok_result("ba = bytearray(b'a' * 56)\n"
	                 "keep = []\n"
	                 "class I:\n"
	                 "    def __index__(self):\n"
	                 "        ba.extend(b'x' * 100000)\n"
	                 "        keep.extend(bytearray(b'W' * 8) for _ in range(20))\n"
	                 "        return 0x5A\n"
	                 "ba[19] = I()\n"
	                 "r = [sorted({len(b) for b in keep}), ba[19], len(ba)]\n"
	                 "class J:\n"
	                 "    def __index__(self):\n"
	                 "        ba.clear()\n"
	                 "        return 7\n"
	                 "def t(f):\n"
	                 "    try:\n"
	                 "        return f()\n"
	                 "    except Exception as e:\n"
	                 "        return type(e).__name__\n"
	                 "r.append(t(lambda: ba.__setitem__(150, J())))\n"
	                 "b = bytearray(3)\n"
	                 "b[1] = 65\n"
	                 "b[-1] = True\n"
	                 "r += [b.decode('latin-1'), t(lambda: b.__setitem__(0, 'x')), "
	                 "t(lambda: b.__setitem__(0, 256))]\n"
	                 "r",
	                 "[[8],90,100056,\"IndexError\",\"\\u0000A\\u0001\",\"TypeError\","
	                 "\"ValueError\"]");
	still_serving();
	stop();
}

/* Three ways into freed memory from pure Python, each carried to the real builtins: the
 * generic setattr kept an instance's dict borrowed across a str subclass name's __hash__,
 * which replaced the dict (the entry went into the freed one); a generator's throw() re-entered
 * from the throw() of the iterator it delegates to popped its frame's stack once per level
 * (its locals freed while held, then a fake object returned), through a coroutine's await too;
 * and a str subclass key in a class's namespace ran its __eq__ inside the lookup of a special
 * method, which CPython does holding the object borrowed (a fake self). Now the name is made
 * plain (its __hash__ never runs and the entry lands in the instance), a running generator's
 * throw() is refused, and a class's names must be plain str. */
Test(python_layer, freed_memory_is_not_reached_through_names_or_generators)
{
	start(NULL);
	expect_ok_result("class Victim:\n"
	                 "    pass\n"
	                 "target = Victim()\n"
	                 "target.a = 1\n"
	                 "vars(target)\n"
	                 "newd = {}\n"
	                 "class Evil(str):\n"
	                 "    n = 0\n"
	                 "    def __hash__(self):\n"
	                 "        Evil.n += 1\n"
	                 "        object.__setattr__(target, '__dict__', newd)\n"
	                 "        global other\n"
	                 "        other = {'unrelated': 1}\n"
	                 "        return 0\n"
	                 "object.__setattr__(target, Evil('marker'), 123)\n"
	                 "class Sub(Victim):\n"
	                 "    def set(self, k, v):\n"
	                 "        super().__setattr__(k, v)\n"
	                 "s = Sub()\n"
	                 "s.set(Evil('via_super'), 4)\n"
	                 "object.__delattr__(target, Evil('a'))\n"
	                 "[Evil.n, sorted(vars(target).items()), vars(s), 'other' in globals(),\n"
	                 " [type(k).__name__ for k in vars(target)]]",
	                 "[0,[[\"marker\",123]],{\"via_super\":4},false,[\"str\"]]");
	expect_ok_result("def h():\n"
	                 "    yield from hh\n"
	                 "def hh_():\n"
	                 "    try:\n"
	                 "        yield 1\n"
	                 "    except Exception:\n"
	                 "        yield outer.throw(ValueError)\n"
	                 "hh = hh_()\n"
	                 "outer = h()\n"
	                 "next(outer)\n"
	                 "r = []\n"
	                 "try:\n"
	                 "    outer.throw(KeyError)\n"
	                 "except Exception as e:\n"
	                 "    r.append([type(e).__name__, str(e)])\n"
	                 "class Aw:\n"
	                 "    def __await__(self):\n"
	                 "        return self\n"
	                 "    def __iter__(self):\n"
	                 "        return self\n"
	                 "    def __next__(self):\n"
	                 "        return 1\n"
	                 "    def throw(self, *a):\n"
	                 "        try:\n"
	                 "            co_outer.throw(ValueError)\n"
	                 "        except ValueError as e:\n"
	                 "            r.append(str(e))\n"
	                 "        raise KeyError('x')\n"
	                 "async def co():\n"
	                 "    await Aw()\n"
	                 "co_outer = co()\n"
	                 "co_outer.send(None)\n"
	                 "try:\n"
	                 "    co_outer.throw(KeyError)\n"
	                 "except BaseException as e:\n"
	                 "    r.append(type(e).__name__)\n"
	                 "def inner():\n"
	                 "    try:\n"
	                 "        yield 1\n"
	                 "    except KeyError:\n"
	                 "        yield 'caught'\n"
	                 "def delegating():\n"
	                 "    yield from inner()\n"
	                 "g = delegating()\n"
	                 "next(g)\n"
	                 "r.append(g.throw(KeyError))\n"
	                 "g.close()\n"
	                 "r",
	                 "[[\"ValueError\",\"generator already executing\"],"
	                 "\"generator already executing\",\"KeyError\",\"caught\"]");
	expect_ok_result(
	    "class K(str):\n"
	    "    def __hash__(self):\n"
	    "        return hash('__repr__')\n"
	    "    def __eq__(self, other):\n"
	    "        raise SystemError('ran')\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return [type(e).__name__, str(e)]\n"
	    "class M(type):\n"
	    "    @classmethod\n"
	    "    def __prepare__(mcs, name, bases):\n"
	    "        return {K('zz'): 1}\n"
	    "def made():\n"
	    "    class W(metaclass=M):\n"
	    "        pass\n"
	    "    return repr(W())\n"
	    "[t(lambda: type('V', (), {K('zz'): 1})),\n"
	    " t(made), t(lambda: repr(type('U', (), {'__repr__': lambda s: 'u'})()))]",
	    "[[\"TypeError\",\"a class's attribute names must be plain str, not K\"],"
	    "[\"TypeError\",\"a class's attribute names must be plain str, not K\"],\"u\"]");
	still_serving();
	stop();
}

/* The next ways into freed memory, around the fixes above: a key of the code's already in the
 * instance dict (its __eq__, not the name's __hash__) freed the dict inside the generic
 * setattr; a function's keyword defaults replaced from inside their own lookup at a call;
 * a generator suspended in `yield from outer` took a throw() into the running outer; a bound
 * method's repr held its function and object borrowed across a lookup on the function, where
 * a planted key's __eq__ freed them. The dict and the defaults are held (what replaced them
 * lands nowhere else), the chain is refused, the method's parts are held. */
Test(python_layer, the_next_ways_to_freed_memory_are_closed)
{
	start(NULL);
	expect_ok_result("class T:\n"
	                 "    pass\n"
	                 "t = T()\n"
	                 "t.a = 1\n"
	                 "ST = {'armed': False, 'spray': []}\n"
	                 "class K(str):\n"
	                 "    def __hash__(self):\n"
	                 "        return hash('marker')\n"
	                 "    def __eq__(self, other):\n"
	                 "        if ST['armed']:\n"
	                 "            ST['armed'] = False\n"
	                 "            object.__setattr__(t, '__dict__', {})\n"
	                 "            ST['spray'] += [{'unrelated': i} for i in range(50)]\n"
	                 "        return False\n"
	                 "    __ne__ = str.__ne__\n"
	                 "vars(t)[K('zz')] = 0\n"
	                 "ST['armed'] = True\n"
	                 "t.marker = 123\n"
	                 "r = [sorted(vars(t)), any('marker' in d for d in ST['spray'])]\n"
	                 "KW = {'armed': False}\n"
	                 "class KK:\n"
	                 "    def __hash__(self):\n"
	                 "        return hash('b')\n"
	                 "    def __eq__(self, other):\n"
	                 "        if KW['armed']:\n"
	                 "            KW['armed'] = False\n"
	                 "            object.__setattr__(f, '__kwdefaults__', None)\n"
	                 "            KW['spray'] = [{'b': 'UNRELATED'} for i in range(100)]\n"
	                 "        return False\n"
	                 "def f(*, b):\n"
	                 "    return b\n"
	                 "object.__setattr__(f, '__kwdefaults__', {KK(): 0})\n"
	                 "KW['armed'] = True\n"
	                 "try:\n"
	                 "    r.append(f())\n"
	                 "except TypeError as e:\n"
	                 "    r.append(type(e).__name__)\n"
	                 "def h():\n"
	                 "    yield from hh\n"
	                 "def hh_():\n"
	                 "    try:\n"
	                 "        yield 1\n"
	                 "    except Exception:\n"
	                 "        yield wrap.throw(ValueError)\n"
	                 "def wr():\n"
	                 "    yield from outer\n"
	                 "hh = hh_()\n"
	                 "outer = h()\n"
	                 "wrap = wr()\n"
	                 "next(wrap)\n"
	                 "try:\n"
	                 "    outer.throw(KeyError)\n"
	                 "except Exception as e:\n"
	                 "    r.append(str(e))\n"
	                 "MR = {'arm': False}\n"
	                 "class S:\n"
	                 "    __slots__ = tuple('s%d' % i for i in range(80))\n"
	                 "    def __repr__(self):\n"
	                 "        MR['got'] = type(self).__name__\n"
	                 "        return 's'\n"
	                 "class Q(str):\n"
	                 "    def __hash__(self):\n"
	                 "        return hash('__qualname__')\n"
	                 "    def __eq__(self, other):\n"
	                 "        if MR['arm']:\n"
	                 "            MR['arm'] = False\n"
	                 "            L.clear()\n"
	                 "            MR['buf'] = [bytearray(672) for i in range(20)]\n"
	                 "        return False\n"
	                 "    __ne__ = str.__ne__\n"
	                 "class C:\n"
	                 "    def __call__(self, *a):\n"
	                 "        pass\n"
	                 "func = C()\n"
	                 "vars(func)[Q('zz')] = 1\n"
	                 "L = [type(C().__call__)(func, S())]\n"
	                 "MR['arm'] = True\n"
	                 "r += [repr(L), MR.get('got')]\n"
	                 "r",
	                 "[[],false,\"TypeError\",\"generator already "
	                 "executing\",\"[<bound method ? of s>]\",\"S\"]");
	still_serving();
	stop();
}

/* A finalizer that CPython's collector runs is the code's, wherever it lands: io.IOBase's own C
 * finalizer calls the object's close, which the code made a partial of setattr (no frame of its
 * own); run while a late-imported codec module's frame was innermost, its write was taken for
 * the import's (json's encoder's default replaced). Collections the tick runs, and finalizers
 * inherited from C bases, count as the code's. */
Test(python_layer, a_collection_inside_an_import_changes_no_library_class)
{
	start(NULL);
	expect_ok_result(
	    "import gc, io, functools, json\n"
	    "\n"
	    "def mine(self, o):\n"
	    "    return 'user code ran as JSONEncoder.default'\n"
	    "\n"
	    "ENCS = ['big5', 'big5hkscs', 'cp037', 'cp1006', 'cp1026', 'cp1125', 'cp1140', "
	    "'cp1250',\n"
	    "        'cp1251', 'cp1253', 'cp1254', 'cp1255', 'cp1256', 'cp1257', 'cp1258', "
	    "'cp273',\n"
	    "        'cp424', 'cp500', 'cp720', 'cp737', 'cp775', 'cp850', 'cp852', 'cp855', "
	    "'cp856',\n"
	    "        'cp857', 'cp858', 'cp860', 'cp861', 'cp862', 'cp863', 'cp864', 'cp865', "
	    "'cp866',\n"
	    "        'cp869', 'cp874', 'cp875', 'cp932', 'cp949', 'cp950', 'euc_jis_2004', "
	    "'euc_jisx0213',\n"
	    "        'euc_jp', 'euc_kr', 'gb18030', 'gb2312', 'gbk', 'hp_roman8', 'hz', "
	    "'iso2022_jp',\n"
	    "        'iso2022_jp_1', 'iso2022_jp_2', 'iso2022_jp_2004', 'iso2022_jp_3', "
	    "'iso2022_jp_ext',\n"
	    "        'iso2022_kr', 'iso8859_10', 'iso8859_11', 'iso8859_13', 'iso8859_14', "
	    "'iso8859_16',\n"
	    "        'iso8859_2', 'iso8859_3', 'iso8859_4', 'iso8859_5', 'iso8859_6', "
	    "'iso8859_7',\n"
	    "        'iso8859_8', 'iso8859_9', 'johab', 'koi8_r', 'koi8_t', 'koi8_u', 'kz1048',\n"
	    "        'mac_arabic', 'mac_croatian', 'mac_cyrillic', 'mac_farsi', 'mac_greek', "
	    "'mac_iceland',\n"
	    "        'mac_latin2', 'mac_roman', 'mac_romanian', 'mac_turkish', 'palmos', "
	    "'ptcp154',\n"
	    "        'shift_jis', 'shift_jis_2004', 'shift_jisx0213', 'tis_620', 'utf_16_be', "
	    "'utf_16_le',\n"
	    "        'utf_32_be', 'utf_32_le', 'utf_7']\n"
	    "\n"
	    "class F(io.IOBase):\n"
	    "    close = functools.partial(setattr, json.JSONEncoder, 'default', mine)\n"
	    "\n"
	    "for i, enc in enumerate(ENCS):\n"
	    "    T = 1 + i % 12\n"
	    "    gc.collect()\n"
	    "    for _ in range(5):\n"
	    "        f = F(); f.cyc = f; del f           # garbage the collector will finalize\n"
	    "    gc.set_threshold(T)\n"
	    "    try:\n"
	    "        'a'.encode(enc)                     # imports encodings.<enc> late\n"
	    "    except Exception:\n"
	    "        pass\n"
	    "    gc.set_threshold(700)\n"
	    "    gc.collect()\n"
	    "    if json.JSONEncoder.default is mine:\n"
	    "        break\n"
	    "[json.JSONEncoder.default is mine, json.dumps({'x': 1})]",
	    "[false,\"{\\\"x\\\": 1}\"]");
	still_serving();
	stop();
}

/* More C code holding objects borrowed across the code's own: a list's repr hands each item
 * over borrowed (a slice's, a GenericAlias's repr whose fields' __repr__
 * emptied the list had the next field freed under it: a fake object, the real builtins), and a
 * module's lookup calls its __getattr__ borrowed (a bound dict.get whose key's __eq__ deleted
 * the hook freed it, and its dict, while it ran). Each item and the hook are held now: the
 * objects stay what they were, and the freed memory is taken by nothing. */
Test(python_layer, reprs_and_module_hooks_hold_what_they_use)
{
	start(NULL);
	expect_ok_result("import json, itertools\n"
	                 "ST = {}\n"
	                 "class S:\n"
	                 "    __slots__ = tuple('s%d' % i for i in range(80))\n"
	                 "    def __repr__(self):\n"
	                 "        ST.setdefault('got', []).append(type(self).__name__)\n"
	                 "        return 's'\n"
	                 "class A:\n"
	                 "    def __repr__(self):\n"
	                 "        L.clear()\n"
	                 "        ST['buf'] = [bytearray(672) for i in range(20)]\n"
	                 "        return 'a'\n"
	                 "L = [slice(A(), S(), None)]\n"
	                 "r = [repr(L)]\n"
	                 "class P:\n"
	                 "    @property\n"
	                 "    def __origin__(self):\n"
	                 "        L.clear()\n"
	                 "        ST['buf'] = [bytearray(672) for i in range(20)]\n"
	                 "        raise AttributeError\n"
	                 "    __slots__ = tuple('s%d' % i for i in range(80))\n"
	                 "    def __repr__(self):\n"
	                 "        ST.setdefault('got', []).append(type(self).__name__)\n"
	                 "        return 'p'\n"
	                 "L = [list[P()]]\n"
	                 "r += [repr(L), ST['got']]\n"
	                 "KS = {'armed': False}\n"
	                 "class K:\n"
	                 "    def __hash__(self):\n"
	                 "        return hash('b')\n"
	                 "    def __eq__(self, other):\n"
	                 "        if KS['armed']:\n"
	                 "            KS['armed'] = False\n"
	                 "            object.__delattr__(M, '__getattr__')\n"
	                 "            KS['spray'] = [{'b': 'UNRELATED'} for i in range(100)]\n"
	                 "        return False\n"
	                 "M = type(json)('m')\n"
	                 "D = {K(): 0}\n"
	                 "object.__setattr__(M, '__getattr__', D.get)\n"
	                 "del D\n"
	                 "KS['armed'] = True\n"
	                 "r.append(M.b)\n"
	                 "r",
	                 "[\"[slice(a, s, None)]\",\"[list[p]]\",[\"S\",\"P\"],null]");
	still_serving();
	stop();
}

/* Fields C code read before the user's code ran and used after: str() of an OSError formatted a
 * filename the errno's __str__ had freed; cmp_to_key's keys handed their comparison the objects
 * they wrap, one freed from inside it (dict.get's default); a UnicodeDecodeError's reason moved
 * its start anywhere after the check (any byte read); bytearray % copied from its own buffer
 * after an argument's __bytes__ cleared it; a decimal Context's traps outlived the Context and
 * set bits in what was laid there (each a full escape or a read of freed memory). The fields
 * are held, the text computed first, the format copied, and a Context hands out signal maps
 * that hold it. Ordinary use answers as before. */
Test(python_layer, fields_read_before_the_users_code_are_held)
{
	start(NULL);
	expect_ok_result("import decimal, functools\n"
	                 "def t(f):\n"
	                 "    try:\n"
	                 "        return f()\n"
	                 "    except Exception as e:\n"
	                 "        return type(e).__name__\n"
	                 "keep = []\n"
	                 "class S:\n"
	                 "    def __str__(self):\n"
	                 "        e.filename = None\n"
	                 "        keep.extend(bytearray(b'A' * 199) for _ in range(100))\n"
	                 "        return '1'\n"
	                 "e = OSError(S(), 'msg', bytes(167))\n"
	                 "r = [str(e) == '[Errno 1] msg: ' + repr(bytes(167))]\n"
	                 "d = {}\n"
	                 "class H:\n"
	                 "    def __hash__(self):\n"
	                 "        kb.obj = None\n"
	                 "        keep.extend(bytearray(b'A' * 199) for _ in range(100))\n"
	                 "        return 1\n"
	                 "K = functools.cmp_to_key(d.get)\n"
	                 "ka, kb = K(H()), K(bytes(167))\n"
	                 "r.append(t(lambda: ka < kb))\n"
	                 "class R:\n"
	                 "    def __str__(self):\n"
	                 "        u.start = -(1 << 40)\n"
	                 "        u.end = u.start + 1\n"
	                 "        return 'r'\n"
	                 "u = UnicodeDecodeError('utf-8', b'x', 0, 1, 'ok')\n"
	                 "u.reason = R()\n"
	                 "r.append(str(u))\n"
	                 "ba = bytearray(b'A' * 40 + b'%s' + b'B' * 4000)\n"
	                 "class Z:\n"
	                 "    def __bytes__(self):\n"
	                 "        ba.clear()\n"
	                 "        keep.extend(bytearray(b'Z' * 4000) for _ in range(20))\n"
	                 "        return b''\n"
	                 "out = ba % Z()\n"
	                 "r.append([len(out), out.count(b'Z')])\n"
	                 "tr = decimal.Context().traps\n"
	                 "keep.extend([b'x'] * 12 for _ in range(200))\n"
	                 "def trap():\n"
	                 "    tr[decimal.Inexact] = True\n"
	                 "    return tr[decimal.Inexact]\n"
	                 "r.append(t(trap))\n"
	                 "c = decimal.Context(prec=5)\n"
	                 "c.traps[decimal.Inexact] = True\n"
	                 "r += [t(lambda: c.divide(decimal.Decimal(1), decimal.Decimal(3))), "
	                 "c.traps[decimal.Inexact], decimal.Inexact in c.traps,\n"
	                 "      c.flags.get(decimal.Inexact), sorted(k.__name__ for k, v in "
	                 "c.traps.items() if v)[:3], t(lambda: type(c.flags)()),\n"
	                 "      str(OSError(2, 'No such file', 'x.txt')), "
	                 "str(UnicodeDecodeError('utf-8', b'\\xff', 0, 1, 'bad')),\n"
	                 "      sorted([3, 1, 2], key=functools.cmp_to_key(lambda a, b: b - a)), "
	                 "(bytearray(b'%d-%s') % (5, b'x')).decode()]\n"
	                 "r",
	                 "[true,\"TypeError\",\"r\",[4040,0],true,\"Inexact\",true,true,true,["
	                 "\"DivisionByZero\",\"Inexact\",\"InvalidOperation\"],\"TypeError\",\"["
	                 "Errno 2] No such file: 'x.txt'\",\"'utf-8' codec can't decode byte 0xff "
	                 "in position 0: bad\",[3,2,1],\"5-x\"]");
	still_serving();
	stop();
}

/* A handler set to None from another handler while its parser parses: pyexpat had checked it
 * was there, ran the character data handler, then called the NULL left in its place
 * (SIGSEGV). While the parser parses, None sets a handler that does nothing. */
Test(python_layer, an_expat_handler_cleared_while_it_parses_does_nothing)
{
	start(NULL);
	expect_ok_result("import xml.etree.ElementTree as ET\n"
	                 "xp = ET.XMLParser()\n"
	                 "p = xp.parser\n"
	                 "def chars(d):\n"
	                 "    p.EndElementHandler = None\n"
	                 "p.CharacterDataHandler = chars\n"
	                 "xp.feed('<a>text</a>')\n"
	                 "t = ET.fromstring('<r><x a=\"1\">y</x></r>')\n"
	                 "['parsed', t.find('x').get('a'), t.find('x').text]",
	                 "[\"parsed\",\"1\",\"y\"]");
	still_serving();
	stop();
}

/* pyexpat calls a handler borrowed from its parser's table: a bound dict method replaced from
 * code it ran itself (an interned element name's __hash__) was freed with its dict while it
 * ran, and it inserted into the freed dict, where a new dict of the code's then was. A handler
 * replaced while its parser parses is held until the parse ends: the new dict gets nothing,
 * and handlers replaced from inside handlers take over as they did. */
Test(python_layer, an_expat_handler_replaced_while_it_runs_is_held)
{
	start(NULL);
	expect_ok_result("import xml.etree.ElementTree as ET, gc\n"
	                 "ep = ET.XMLParser().parser\n"
	                 "ep.StartElementHandler = None; ep.EndElementHandler = None\n"
	                 "state = {}\n"
	                 "class K:\n"
	                 "    def __hash__(self):\n"
	                 "        ep.StartElementHandler = None\n"
	                 "        state['new'] = {}\n"
	                 "        return 12345\n"
	                 "    def __eq__(self, o): return self is o\n"
	                 "ep.intern['a'] = K()\n"
	                 "d = {}\n"
	                 "ep.StartElementHandler = d.setdefault\n"
	                 "del d\n"
	                 "ep.Parse(b\"<a x='1'/>\", True)\n"
	                 "got = [state['new']]\n"
	                 "d2 = {}\n"
	                 "ep2 = ET.XMLParser().parser\n"
	                 "ep2.EndElementHandler = None\n"
	                 "def start(name, attrs):\n"
	                 "    ep2.StartElementHandler = d2.setdefault\n"
	                 "ep2.StartElementHandler = start\n"
	                 "ep2.Parse(b'<r><b/><c/></r>', True)\n"
	                 "got + [sorted(d2)]",
	                 "[{},[\"b\",\"c\"]]");
	still_serving();
	stop();
}

/* TextIOWrapper.tell() decoded as many bytes of its snapshot as the last chunk's bytes-per-
 * character ratio times the characters read: a seek() to a cookie kept the ratio of an emoji
 * chunk (4) and set a snapshot of 64 ASCII bytes, and the decoder was handed 256 bytes, the
 * objects after the snapshot among them (their bytes came back in the error). The ratio is
 * dropped where it would reach past the snapshot: tell() answers the position; a tell() and
 * seek() of an ordinary stream round-trip as before. */
Test(python_layer, a_text_stream_s_tell_reads_only_its_snapshot)
{
	start(NULL);
	expect_ok_result("import io\n"
	                 "data = ('\\U0001F600' * 2048 + 'a' * 4096).encode('utf-8')\n"
	                 "t = io.TextIOWrapper(io.BytesIO(data), encoding='utf-8')\n"
	                 "t.read(1)\n"
	                 "t.seek(8192 | (64 << 96) | (64 << 128))\n"
	                 "try:\n"
	                 "    r = t.tell()\n"
	                 "except UnicodeDecodeError as e:\n"
	                 "    r = len(e.object)\n"
	                 "u = io.TextIOWrapper(io.BytesIO('h\\u00e9llo w\\u00f6rld\\n'.encode() * "
	                 "50), encoding='utf-8')\n"
	                 "u.readline()\n"
	                 "u.read(5)\n"
	                 "p = u.tell()\n"
	                 "rest = u.read()\n"
	                 "u.seek(p)\n"
	                 "[r, t.read(3), p, u.read() == rest]",
	                 "[8256,\"aaa\",20,true]");
	still_serving();
	stop();
}

/* A library's getattr (pprint reading a dataclass's fields) checked a name only when it was an
 * exact str: a field named by a str subclass reached functools.partial's bound __setstate__,
 * refused to the code, with which partial's repr read a pointer the code wrote. A str
 * subclass names the attribute of its characters, checked as such. */
Test(python_layer, a_library_s_getattr_checks_names_that_are_str_subclasses)
{
	start(NULL);
	expect_ok_result("import pprint, dataclasses, functools\n"
	                 "class S(str):\n"
	                 "    pass\n"
	                 "@dataclasses.dataclass\n"
	                 "class E:\n"
	                 "    x: int\n"
	                 "fld = dataclasses.fields(E)[0]\n"
	                 "fld.name = S('__setstate__')\n"
	                 "@dataclasses.dataclass(repr=True, init=False, eq=False)\n"
	                 "class D(functools.partial):\n"
	                 "    \"\"\"doc\"\"\"\n"
	                 "D.__dataclass_fields__ = {'x': fld}\n"
	                 "got = []\n"
	                 "class P(pprint.PrettyPrinter):\n"
	                 "    def format(self, obj, context, maxlevels, level):\n"
	                 "        got.append(type(obj).__name__)\n"
	                 "        return ('x' * 200, True, False)\n"
	                 "try:\n"
	                 "    P(width=1).pformat(D(print, 1))\n"
	                 "    r = got\n"
	                 "except AttributeError as e:\n"
	                 "    r = str(e)[:50]\n"
	                 "@dataclasses.dataclass\n"
	                 "class Point:\n"
	                 "    x: int\n"
	                 "    y: int\n"
	                 "[r, pprint.pformat(Point(1, 2))]",
	                 "[\"Forbidden access to dunder attribute: __setstate__\","
	                 "\"Point(x=1, y=2)\"]");
	still_serving();
	stop();
}

/* copy's reconstruction checked a built-in's state before its deep copy, whose memo the copied
 * objects' __deepcopy__ are handed: one that filled it with a forged tuple under the ids near
 * its own allocations had StringIO's C __setstate__ read None as a str (type(None)'s memory
 * decoded as characters). What a built-in is given is what was checked, the same kinds of
 * object: ten tries are refused or copy the real state; a plain deep copy works. */
Test(python_layer, a_deep_copy_s_memo_cannot_forge_a_built_in_s_state)
{
	start(NULL);
	expect_ok_result("import io, copy\n"
	                 "FORGED = (None, '', 0, None)\n"
	                 "class Evil:\n"
	                 "    def __deepcopy__(self, memo):\n"
	                 "        probe = [tuple([i, i, i, i]) for i in range(200)]\n"
	                 "        base = min(id(p) for p in probe)\n"
	                 "        for a in range(base - (1 << 20), base + (1 << 20), 16):\n"
	                 "            if a != id(memo) and a not in memo:\n"
	                 "                memo[a] = FORGED\n"
	                 "        return self\n"
	                 "class S(io.StringIO):\n"
	                 "    pass\n"
	                 "outcomes = set()\n"
	                 "for attempt in range(10):\n"
	                 "    s = S('hello')\n"
	                 "    s.e = Evil()\n"
	                 "    try:\n"
	                 "        outcomes.add(copy.deepcopy(s).getvalue())\n"
	                 "    except TypeError:\n"
	                 "        outcomes.add('refused')\n"
	                 "    except ValueError:\n"
	                 "        outcomes.add('read as a str')\n"
	                 "u = S('plain')\n"
	                 "u.n = [1, 2]\n"
	                 "v = copy.deepcopy(u)\n"
	                 "[outcomes <= {'hello', 'refused'}, v.getvalue(), v.n, v.n is not u.n]",
	                 "[true,\"plain\",[1,2],true]");
	still_serving();
	stop();
}

/* Python's own codec error handlers stay its own. A 'strict' of the code's ran for every strict
 * encoding made in C, the UTF-8 of a str among them (a lone surrogate's, then kept in the
 * str): the import allowlist checked the name as "json.tool" while importlib asked the
 * supervisor for the parent it made again, answered "inspect" (any module of the library,
 * refused ones included, loaded and handed to the code). Refused; module names are ASCII; a
 * handler of the code's own name works. */
Test(python_layer, python_s_own_error_handlers_cannot_be_replaced)
{
	start(NULL);
	expect_ok_result("import codecs, importlib\n"
	                 "out = []\n"
	                 "answers = []\n"
	                 "def strict(e):\n"
	                 "    if isinstance(e, UnicodeEncodeError):\n"
	                 "        return (answers.pop(0) if answers else b'json', e.end)\n"
	                 "    raise e\n"
	                 "try:\n"
	                 "    codecs.register_error('strict', strict)\n"
	                 "    out.append('replaced')\n"
	                 "except ValueError as e:\n"
	                 "    out.append(str(e)[:40])\n"
	                 "answers[:] = [b'json', b'inspect']\n"
	                 "try:\n"
	                 "    importlib.import_module('\\ud800.tool')\n"
	                 "except ImportError as e:\n"
	                 "    out.append(type(e).__name__)\n"
	                 "answers[:] = []\n"
	                 "try:\n"
	                 "    m = importlib.import_module('\\ud800')\n"
	                 "    out.append(hasattr(m, 'currentframe'))\n"
	                 "except ImportError as e:\n"
	                 "    out.append(type(e).__name__)\n"
	                 "try:\n"
	                 "    '\\ud800'.encode()\n"
	                 "    out.append('encoded')\n"
	                 "except UnicodeEncodeError:\n"
	                 "    out.append('strict')\n"
	                 "codecs.register_error('mine', lambda e: ('?', e.end))\n"
	                 "out.append('\\xe9t\\xe9'.encode('ascii', 'mine').decode())\n"
	                 "out",
	                 "[\"the error handler 'strict' is Python's o\",\"ModuleNotFoundError\","
	                 "\"ModuleNotFoundError\",\"strict\",\"?t?\"]");
	refused("import inspect", &E2E_IMPORT);
	still_serving();
	stop();
}

/* pyexpat calls its handlers outside a parse too: a parse that failed leaves its buffered
 * text, flushed through the character data handler when that handler is set again or
 * buffer_text or buffer_size change. That handler (list.remove bound to a list only it held)
 * set the handler again from the code it ran: the nested set dropped it while it ran, and
 * list.remove went on in a list the code made next (an item it never removed was gone). Such a
 * change makes its parser busy as a parse does: a handler replaced meanwhile is held. */
Test(python_layer, an_expat_handler_that_flushes_text_outside_a_parse_is_held)
{
	start(NULL);
	expect_ok_result(
	    "import xml.etree.ElementTree as ET\n"
	    "out = []\n"
	    "for how in ('handler', 'buffer_text', 'buffer_size'):\n"
	    "    p = ET.XMLParser().parser\n"
	    "    p.StartElementHandler = None\n"
	    "    p.EndElementHandler = None\n"
	    "    stage = [0]\n"
	    "    made = []\n"
	    "    class W:\n"
	    "        def __init__(self, tag): self.tag = tag\n"
	    "        def __eq__(self, other): return self.tag == 'X3'\n"
	    "    class U:\n"
	    "        def __eq__(self, other):\n"
	    "            if stage[0] == 2:\n"
	    "                return True\n"
	    "            if stage[0] == 1:\n"
	    "                stage[0] = 2\n"
	    "                p.CharacterDataHandler = None\n"
	    "                stage[0] = 3\n"
	    "                made.append([W('X0'), W('X1'), W('X2'), W('X3'), W('X4'), W('X5')])\n"
	    "            return False\n"
	    "    lst = [U(), U(), U()]\n"
	    "    p.CharacterDataHandler = lst.remove\n"
	    "    del lst\n"
	    "    try:\n"
	    "        p.Parse(b'<a>hello</b>', True)\n"
	    "    except Exception:\n"
	    "        pass\n"
	    "    stage[0] = 1\n"
	    "    try:\n"
	    "        if how == 'handler':\n"
	    "            p.CharacterDataHandler = None\n"
	    "        elif how == 'buffer_text':\n"
	    "            p.buffer_text = False\n"
	    "        else:\n"
	    "            p.buffer_size = 4096\n"
	    "    except (ValueError, RuntimeError):\n"
	    "        pass\n"
	    "    out.append([w.tag for w in made[0]] if made else None)\n"
	    "out\n",
	    "[[\"X0\",\"X1\",\"X2\",\"X3\",\"X4\",\"X5\"],"
	    "[\"X0\",\"X1\",\"X2\",\"X3\",\"X4\",\"X5\"],"
	    "[\"X0\",\"X1\",\"X2\",\"X3\",\"X4\",\"X5\"]]");
	still_serving();
	stop();
}

/* json's C encoder (json.encoder.c_make_encoder, or type() of an encoder) asked the markers
 * dict it was given whether the id of a dict it encoded (borrowed from its list) was in it: a
 * key of the user's with that hash emptied the list in its __eq__ and freed the dict, which
 * the encoder then stored and encoded (SIGSEGV; a bytearray laid over it gave any memory).
 * The encoder has markers of its own: the key's __eq__ never runs, the encoder encodes what
 * it was given, and json answers as before (circular references still detected). */
Test(python_layer, json_encoder_keeps_markers_of_its_own)
{
	start(NULL);
	expect_ok_result(
	    "import json\n"
	    "class D(dict): pass\n"
	    "P = [D(a=1)]\n"
	    "target = id(P[0])\n"
	    "keep = []\n"
	    "class K:\n"
	    "    def __hash__(self): return target\n"
	    "    def __eq__(self, other):\n"
	    "        if not keep:\n"
	    "            P.clear()\n"
	    "            keep.append(bytearray(b'\\xff' * 95))\n"
	    "        return False\n"
	    "markers = {K(): 0}\n"
	    "enc = json.encoder.encode_basestring_ascii\n"
	    "e = json.encoder.c_make_encoder(markers, None, enc, None, ':', ',', False, "
	    "False, True)\n"
	    "r1 = e(P, 0)\n"
	    "e2 = type(e).__new__(type(e), markers, None, enc, None, ':', ',', True, "
	    "False, True)\n"
	    "r2 = e2([{'b': 2, 'a': [1]}], 0)\n"
	    "l = []\n"
	    "l.append(l)\n"
	    "try:\n"
	    "    json.dumps(l)\n"
	    "    circ = 'not detected'\n"
	    "except ValueError as x:\n"
	    "    circ = str(x)\n"
	    "[r1, r2, keep, len(markers), e.markers, e.markers is markers,\n"
	    " json.dumps({'b': [1, 2.5, None], 'a': 'x'}, sort_keys=True),\n"
	    " json.dumps([1, [2]], check_circular=False), json.dumps({3}, "
	    "default=sorted),\n"
	    " json.dumps({'k': [1]}, indent=1), circ]",
	    "[[\"[{\\\"a\\\":1}]\"],[\"[{\\\"a\\\":[1],\\\"b\\\":2}]\"],[],1,{},false,"
	    "\"{\\\"a\\\": \\\"x\\\", \\\"b\\\": [1, 2.5, null]}\",\"[1, [2]]\","
	    "\"[3]\",\"{\\n \\\"k\\\": [\\n  1\\n ]\\n}\","
	    "\"Circular reference detected\"]");
	still_serving();
	stop();
}

/* array.tofile took the array's size once and copied 64 KiB blocks from its buffer between
 * calls of the file's write(): a write() that shrank the array had the next blocks read past
 * its new end (SIGSEGV, or freed memory and other objects' contents handed to write). The
 * array's bytes are copied first: the blocks are those of the array as it was when tofile
 * was called; ordinary tofile writes what tobytes gives. */
Test(python_layer, array_tofile_writes_a_copy_of_the_array)
{
	start(NULL);
	expect_ok_result("import array, io\n"
	                 "a = array.array('B', bytes(3 * 65536))\n"
	                 "got = []\n"
	                 "class F:\n"
	                 "    def write(self, b):\n"
	                 "        got.append((len(b), b.count(0)))\n"
	                 "        del a[16:]\n"
	                 "        return len(b)\n"
	                 "a.tofile(F())\n"
	                 "f = io.BytesIO()\n"
	                 "array.array('h', [1, -2]).tofile(f)\n"
	                 "big = array.array('d', range(20000))\n"
	                 "g = io.BytesIO()\n"
	                 "big.tofile(g)\n"
	                 "e = io.BytesIO()\n"
	                 "array.array('i').tofile(e)\n"
	                 "[got, len(a), f.getvalue().hex(), g.getvalue() == big.tobytes(),\n"
	                 " len(g.getvalue()), e.getvalue().hex()]",
	                 "[[[65536,65536],[65536,65536],[65536,65536]],16,\"0100feff\",true,160000,"
	                 "\"\"]");
	still_serving();
	stop();
}

/* io.TextIOWrapper.write hands its pending bytes to its buffer's write() and then goes on
 * with what it had before: detach() called from there (a buffer of the user's) left the
 * buffer NULL that the write then called (SIGSEGV). While a text stream writes, its detach is
 * refused (RuntimeError) and the write completes; ordinary writes, print and detach answer as
 * before. */
Test(python_layer, a_text_stream_is_not_detached_while_it_writes)
{
	start(NULL);
	expect_ok_result("import io\n"
	                 "out, errs = [], []\n"
	                 "class B:\n"
	                 "    closed = False\n"
	                 "    def readable(self): return False\n"
	                 "    def writable(self): return True\n"
	                 "    def seekable(self): return False\n"
	                 "    def flush(self): pass\n"
	                 "    def write(self, b):\n"
	                 "        out.append(bytes(b).decode('latin-1'))\n"
	                 "        try:\n"
	                 "            t.detach()\n"
	                 "        except RuntimeError as x:\n"
	                 "            errs.append(str(x).startswith('reentrant call inside "
	                 "TextIOWrapper.write'))\n"
	                 "        return len(b)\n"
	                 "t = io.TextIOWrapper(B(), encoding='ascii', line_buffering=True)\n"
	                 "t._CHUNK_SIZE = 8\n"
	                 "t.write('a' * 6)\n"
	                 "t.write('b' * 5 + '\\n')\n"
	                 "b = io.BytesIO()\n"
	                 "u = io.TextIOWrapper(b, encoding='utf-8', line_buffering=True)\n"
	                 "print('hi', 'th\\u00e9re', file=u)\n"
	                 "u.write('x')\n"
	                 "v = b.getvalue().hex()\n"
	                 "raw = u.detach()\n"
	                 "[out, errs, v, raw is b, b.getvalue().hex()]",
	                 "[[\"aaaaaa\",\"bbbbb\\n\"],[true,true],\"6869207468c3a972650a\",true,"
	                 "\"6869207468c3a972650a78\"]");
	still_serving();
	stop();
}

/* A text stream detached from inside its own read (its buffer then reads None) passed for
 * one never initialised: initialised again there with a write-only buffer, the read went on
 * with a NULL decoder (SIGSEGV). A stream initialised or detached once is not initialised
 * again (and a detach from inside its read is refused); new streams, subclasses and detach
 * answer as before. */
Test(python_layer, a_detached_text_stream_is_not_initialised_again)
{
	start(NULL);
	expect_ok_result("import io\n"
	                 "out = []\n"
	                 "class B:\n"
	                 "    closed = False\n"
	                 "    def __init__(self, mode): self.mode = mode; self.n = 0\n"
	                 "    def readable(self): return 'r' in self.mode\n"
	                 "    def writable(self): return 'w' in self.mode\n"
	                 "    def seekable(self): return False\n"
	                 "    def read1(self, n):\n"
	                 "        self.n += 1\n"
	                 "        if self.mode == 'r' and self.n == 1:\n"
	                 "            try:\n"
	                 "                w.detach()\n"
	                 "            except RuntimeError as e:\n"
	                 "                out.append(str(e).startswith('reentrant call'))\n"
	                 "            try:\n"
	                 "                w.reinit(B('w'))\n"
	                 "            except ValueError as e:\n"
	                 "                out.append(str(e))\n"
	                 "        return b'abc'\n"
	                 "    read = read1\n"
	                 "    def write(self, b): return len(b)\n"
	                 "    def flush(self): pass\n"
	                 "class T(io.TextIOWrapper):\n"
	                 "    def reinit(self, b):\n"
	                 "        super().__init__(b)\n"
	                 "w = T(B('r'), encoding='utf-8')\n"
	                 "try:\n"
	                 "    w.read(2)\n"
	                 "except ValueError as e:\n"
	                 "    out.append('read: ' + str(e))\n"
	                 "u = io.TextIOWrapper(io.BytesIO(b'hello\\nworld\\n'), encoding='utf-8')\n"
	                 "raw = u.detach()\n"
	                 "try:\n"
	                 "    u.__init__(io.BytesIO(b'x'))\n"
	                 "except ValueError as e:\n"
	                 "    out.append(str(e))\n"
	                 "v = T(io.BytesIO(b'ok\\n'), encoding='utf-8')\n"
	                 "out += [raw.getvalue().decode(), v.readline(), "
	                 "io.TextIOWrapper(io.BytesIO(b'a\\nb'), encoding='ascii').read()]\n"
	                 "out",
	                 "[true,\"a text stream is initialised once in the sandbox (make a new "
	                 "one)\",\"a text stream is initialised once in the sandbox (make a new "
	                 "one)\",\"hello\\nworld\\n\",\"ok\\n\",\"a\\nb\"]");
	still_serving();
	stop();
}

/* io.TextIOWrapper.write called again from its buffer's write() (while it flushed its pending
 * bytes): the outer write then replaced the pending bytes the inner one had left but counted
 * them, and the next flush handed write() uninitialised memory (the heap's contents). While a
 * text stream writes, its write and reconfigure are refused (RuntimeError; both tried from
 * the buffer's write() while the stream writes); the bytes written are those written, and
 * write_through and reconfigure answer as before. */
Test(python_layer, a_text_stream_is_not_written_again_while_it_writes)
{
	start(NULL);
	expect_ok_result(
	    "import io\n"
	    "out, errs = [], []\n"
	    "class B:\n"
	    "    closed = False\n"
	    "    def readable(self): return False\n"
	    "    def writable(self): return True\n"
	    "    def seekable(self): return False\n"
	    "    def flush(self): pass\n"
	    "    def write(self, b):\n"
	    "        out.append(bytes(b).decode('latin-1'))\n"
	    "        f = (lambda: t.write('y' * 10),\n"
	    "             lambda: t.reconfigure(line_buffering=True))\n"
	    "        if len(out) <= 2:\n"
	    "            try:\n"
	    "                f[len(out) - 1]()\n"
	    "            except RuntimeError as x:\n"
	    "                errs.append(str(x).startswith('reentrant call "
	    "inside TextIOWrapper.write'))\n"
	    "        return len(b)\n"
	    "t = io.TextIOWrapper(B(), encoding='ascii')\n"
	    "t._CHUNK_SIZE = 64\n"
	    "t.write('a' * 60)\n"
	    "t.write('b' * 10)\n"
	    "t.write('c' * 5)\n"
	    "t.write('d' * 5)\n"
	    "t.write('e' * 50)\n"
	    "t.flush()\n"
	    "b = io.BytesIO()\n"
	    "w = io.TextIOWrapper(b, encoding='utf-8', write_through=True)\n"
	    "w.write('\\u00e9')\n"
	    "w.reconfigure(encoding='latin-1')\n"
	    "w.write('\\u00e9')\n"
	    "[out, errs, t.line_buffering, b.getvalue().hex()]",
	    "[[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\","
	    "\"bbbbbbbbbbcccccddddd\",\"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\"],["
	    "true,true],false,\"c3a9e9\"]");
	still_serving();
	stop();
}

/* date(state) and datetime(state), the form of their pickles, checked only the state's month
 * (time(state) its hour):
 * year 0 or a day past its month made a date with a negative weekday, and ctime() read the
 * day names before their table (SIGSEGV). Such states are refused; real ones (the fold bit of
 * a datetime's included) and copies load as before. */
Test(python_layer, a_dates_state_names_a_date)
{
	start(NULL);
	expect_ok_result(
	    "import datetime, copy\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return [type(e).__name__, str(e)]\n"
	    "r = [t(lambda: datetime.date(b'\\x00\\x00\\x01\\x01').ctime()), t(lambda: "
	    "datetime.date(b'\\x07\\xe8\\x02\\x1e')),\n"
	    "     t(lambda: datetime.date('\\x00\\x00\\x01\\xff').weekday()),\n"
	    "     t(lambda: "
	    "datetime.datetime(b'\\x00\\x00\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00').ctime()),\n"
	    "     t(lambda: "
	    "datetime.datetime(b'\\x07\\xe8\\x02\\x1d\\x18\\x00\\x00\\x00\\x00\\x00')),\n"
	    "     str(datetime.date(b'\\x07\\xe8\\x02\\x1d')), "
	    "str(datetime.datetime(b'\\x07\\xe8\\x02\\x1d\\x0c\\x1e\\x00\\x00\\x00\\x01')),\n"
	    "     str(datetime.datetime(b'\\x07\\xe8\\x82\\x1d\\x0c\\x1e\\x00\\x00\\x00\\x01', "
	    "datetime.timezone.utc)),\n"
	    "     datetime.date(2024, 2, 29).ctime(), t(lambda: "
	    "datetime.date(b'\\x07\\xe8\\x0d\\x01'))]\n"
	    "r.append(str(copy.deepcopy(datetime.datetime(2024,2,29,1,2,3,4))))\n"
	    "r",
	    "[[\"ValueError\",\"the date's state names no date\"],[\"ValueError\",\"the date's "
	    "state names no date\"],[\"ValueError\",\"the date's state names no "
	    "date\"],[\"ValueError\",\"the datetime's state names no date and "
	    "time\"],[\"ValueError\",\"the datetime's state names no date and "
	    "time\"],\"2024-02-29\",\"2024-02-29 12:30:00.000001\",\"2024-02-29 "
	    "12:30:00.000001+00:00\",\"Thu Feb 29 00:00:00 2024\",[\"TypeError\",\"'bytes' object "
	    "cannot be interpreted as an integer\"],\"2024-02-29 01:02:03.000004\"]");
	expect_ok_result("import datetime, copy\n"
	                 "r = []\n"
	                 "for s in (b'\\x01\\xff\\xff\\xff\\xff\\xff', "
	                 "b'\\x01\\x02\\x03\\x00\\x00\\x01'):\n"
	                 "    try: r.append(str(datetime.time(s)))\n"
	                 "    except ValueError as e: r.append(str(e))\n"
	                 "r + [str(copy.deepcopy(datetime.time(23, 59, 59, 999999, fold=1)))]",
	                 "[\"the time's state names no time of day\",\"01:02:03.000001\","
	                 "\"23:59:59.999999\"]");
	still_serving();
	stop();
}

/* collections.OrderedDict's C type took a node, or an index into its node table, before a
 * lookup that ran the user's __eq__, and used it after: an __eq__ that deleted a key (pop) or
 * cleared the dict (move_to_end, item assignment) left it on a freed node (a bytearray laid
 * there: any memory read and written, the real builtins reached). The sandbox's OrderedDict is
 * collections' own pure Python one, the same API: the same __eq__ ends in a KeyError, and
 * ordinary use answers as before (typing's alias included; a subclass whose __init__ does not
 * call OrderedDict's, as scipy's LRUDict under quad_vec, gets its links when it is made). */
Test(python_layer, ordered_dicts_are_not_left_on_a_freed_node)
{
	start(NULL);
	expect_ok_result(
	    "from collections import OrderedDict\n"
	    "import typing\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return ['ok', repr(f())]\n"
	    "    except Exception as e:\n"
	    "        return [type(e).__name__]\n"
	    "n = [0]\n"
	    "class K:\n"
	    "    def __hash__(self): return 7\n"
	    "    def __eq__(self, other):\n"
	    "        n[0] += 1\n"
	    "        if n[0] == 2 and mode[0] == 'del':\n"
	    "            del od[A]\n"
	    "        if mode[0] == 'clear' or (mode[0] == 'set' and n[0] == 2):\n"
	    "            od.clear()\n"
	    "        return mode[0] == 'del' and n[0] == 1\n"
	    "out = []\n"
	    "for m in ('del', 'clear', 'set'):\n"
	    "    mode, n[0] = [m], 0\n"
	    "    A, E = K(), K()\n"
	    "    od = OrderedDict()\n"
	    "    od[A] = None\n"
	    "    od['x'] = None\n"
	    "    if m == 'del':\n"
	    "        out.append(attempt(lambda: od.pop(E, 'default')))\n"
	    "    elif m == 'clear':\n"
	    "        out.append(attempt(lambda: od.move_to_end(E)))\n"
	    "    else:\n"
	    "        out.append(attempt(lambda: od.__setitem__(E, 1) if False else od.update({E: "
	    "1})))\n"
	    "    out.append(len(od))\n"
	    "o = OrderedDict([('a', 1), ('b', 2), ('c', 3)])\n"
	    "o.move_to_end('a'); o.move_to_end('c', last=False)\n"
	    "out += [list(o), o.popitem(), o.popitem(last=False), repr(o), o == OrderedDict(b=2),\n"
	    "        type(typing.OrderedDict()) is OrderedDict, type(OrderedDict()).__module__]\n"
	    "class Lru(OrderedDict):\n"
	    "    def __init__(self, size):\n"
	    "        self.size = size\n"
	    "lru = Lru(2)\n"
	    "lru['x'] = 1\n"
	    "lru['y'] = 2\n"
	    "lru.move_to_end('x')\n"
	    "out + [list(lru), lru.size]",
	    "[[\"KeyError\"],1,[\"KeyError\"],0,[\"ok\",\"None\"],1,[\"c\",\"b\",\"a\"],[\"a\",1],["
	    "\"c\",3],\"OrderedDict([(\\u0027b\\u0027, "
	    "2)])\",true,true,\"collections\",[\"y\",\"x\"],"
	    "2]");
	still_serving();
	stop();
}

/* The loader's derivation of DST offsets looked at the transition after the last one for a DST
 * type the one before did not explain: it read past its table of transitions and indexed the
 * types with what it found (SIGSEGV). Such data is refused (no zone of the tz database is);
 * the same transitions alternating with a standard type load. */
Test(python_layer, zoneinfo_never_reads_past_its_last_transition)
{
	start(NULL);
	expect_ok_result(
	    "import io, zoneinfo\n"
	    "def be(v, n):\n"
	    "    return (v % (1 << (8 * n))).to_bytes(n, 'big')\n"
	    "def tzif(tzstr, trans, types, abbrs=b'UTC\\0'):\n"
	    "    out = b''\n"
	    "    for v2 in (False, True):\n"
	    "        out += b'TZif2' + bytes(15) + b''.join(be(x, 4) for x in (0, 0, 0, "
	    "len(trans), len(types), len(abbrs)))\n"
	    "        out += b''.join(be(t, 8 if v2 else 4) for t, _ in trans) + bytes(i for _, i "
	    "in trans)\n"
	    "        out += b''.join(be(o, 4) + bytes([d, a]) for o, d, a in types) + abbrs\n"
	    "    return out + b'\\n' + tzstr + b'\\n'\n"
	    "def load(data):\n"
	    "    try:\n"
	    "        z = zoneinfo.ZoneInfo.from_file(io.BytesIO(data))\n"
	    "        return 'loaded'\n"
	    "    except ValueError as e:\n"
	    "        return str(e)\n"
	    "groom = [bytes(31) + bytes([k % 256]) for k in range(4000)]\n"
	    "del groom\n"
	    "past = load(tzif(b'AAA3', tuple((k, 0) for k in range(8)), ((3600, 1, 0), (0, 0, "
	    "0))))\n"
	    "fine = load(tzif(b'AAA3', tuple((k, k % 2) for k in range(8)), ((3600, 1, 0), (0, 0, "
	    "0))))\n"
	    "[past, fine]",
	    "[\"invalid TZif data: its last transition's DST offset cannot be told\",\"loaded\"]");
	still_serving();
	stop();
}

/* ZoneInfo.from_file of a TZif file whose transition named the type after the last: CPython's
 * loader checked the index only against one past the types (the real bound an assert), read
 * the zone's offsets and wrote its DST offsets past their arrays, and utcoffset() answered the
 * object at an address laid past the array of types (a fake bytearray over all memory: full
 * read/write). The reading the loader builds from is checked first (each transition names one
 * of the types, the tables agree in length, no transitions without a type): ValueError. Zones
 * from a valid file and from the database answer as before. */
Test(python_layer, zoneinfo_loads_only_transitions_to_its_own_types)
{
	start(NULL);
	expect_ok_result(
	    "import io, struct, zoneinfo, datetime\n"
	    "ZI = zoneinfo.ZoneInfo\n"
	    "def tzif(types, idx):\n"
	    "    ttis = [(3600, 0, 0), (7200, 1, 4)][:types]\n"
	    "    head = b'TZif2' + bytes(15)\n"
	    "    v1 = head + struct.pack('>6l', 0, 0, 0, 0, 0, 0)\n"
	    "    hdr = head + struct.pack('>6l', 0, 0, 0, 2, len(ttis), 9)\n"
	    "    body = struct.pack('>2q', 0, 31536000) + bytes(idx)\n"
	    "    body += b''.join(struct.pack('>lbb', *x) for x in ttis)\n"
	    "    return v1 + hdr + body + b'CET\\0CEST\\0' + b'\\nCET-1\\n'\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return str(f())\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ': ' + str(e)\n"
	    "def at(z, *d):\n"
	    "    x = datetime.datetime(*d, tzinfo=z)\n"
	    "    return [str(x.utcoffset()), x.tzname()]\n"
	    "z = ZI.from_file(io.BytesIO(tzif(2, [1, 0])), key='Test/Zone')\n"
	    "r = [str(z), at(z, 1969, 6, 1), at(z, 1970, 6, 1), at(z, 1980, 6, 1)]\n"
	    "for fold in (0, 1):\n"
	    "    d = datetime.datetime(1970, 6, 1, fold=fold)\n"
	    "    r.append(t(lambda: ZI.from_file(io.BytesIO(tzif(2, [1, 2])))\n"
	    "               .utcoffset(d)))\n"
	    "r.append(t(lambda: ZI.from_file(io.BytesIO(tzif(0, [0, 0])))))\n"
	    "p = ZI('Europe/Paris')\n"
	    "utc = datetime.datetime(2024, 3, 31, 1, tzinfo=datetime.timezone.utc)\n"
	    "r += [at(p, 2024, 7, 1, 12), at(p, 2024, 1, 1),\n"
	    "      str(utc.astimezone(p))]\n"
	    "r\n",
	    "[\"Test/Zone\",[\"1:00:00\",\"CET\"],[\"2:00:00\",\"CEST\"],"
	    "[\"1:00:00\",\"CET\"],"
	    "\"ValueError: invalid TZif data: a transition names a type the file does not have\","
	    "\"ValueError: invalid TZif data: a transition names a type the file does not have\","
	    "\"ValueError: invalid TZif data: transitions without a type\","
	    "[\"2:00:00\",\"CEST\"],[\"1:00:00\",\"CET\"],"
	    "\"2024-03-31 03:00:00+02:00\"]");
	still_serving();
	stop();
}

/* An expat parser reached again from its own handlers: Parse (or ParseFile, or ElementTree's
 * XMLParser.feed from a target's method) called on the same parser moved expat's input buffer
 * and the outer parse read the freed one; buffer_text set false (or buffer_size changed) from
 * the character data handler freed the buffer the text was then copied into (NULL written).
 * Both are refused while the parser parses (RuntimeError) and the parse goes on; the settings
 * change before and after, and ElementTree (handlers, targets, feed and close, iterparse, a
 * pull parser) and ParseFile work as before. */
Test(python_layer, an_expat_parser_is_not_changed_while_it_parses)
{
	start(NULL);
	expect_ok_result("import io, xml.etree.ElementTree as ET\n"
	                 "def t(f):\n"
	                 "    try:\n"
	                 "        return f()\n"
	                 "    except Exception as e:\n"
	                 "        return type(e).__name__\n"
	                 "xp = ET.XMLParser().parser\n"
	                 "xp.EndElementHandler = xp.CharacterDataHandler = None\n"
	                 "seen = []\n"
	                 "def start(name, attrs):\n"
	                 "    seen.append(name)\n"
	                 "    if name == 'b':\n"
	                 "        big = b'<i>' + b'z' * 100000\n"
	                 "        seen.append(t(lambda: xp.Parse(big, False)))\n"
	                 "        seen.append(t(lambda: xp.ParseFile(io.BytesIO(b'<i/>'))))\n"
	                 "xp.StartElementHandler = start\n"
	                 "xp.Parse(b'<a>' + b'<e/>' * 20 + b'<b/>' + b'<e/>' * 280, False)\n"
	                 "r = [len(seen), seen[21:24], seen.count('e')]\n"
	                 "xq = ET.XMLParser().parser\n"
	                 "got = []\n"
	                 "def cd(data):\n"
	                 "    got.append(data)\n"
	                 "    if len(got) == 1:\n"
	                 "        for name, v in (('buffer_text', False), ('buffer_size', 64),\n"
	                 "                        ('ordered_attributes', 0),\n"
	                 "                        ('specified_attributes', 0)):\n"
	                 "            got.append(t(lambda: setattr(xq, name, v)))\n"
	                 "xq.CharacterDataHandler = cd\n"
	                 "xq.buffer_size = 16\n"
	                 "xq.Parse(b'<a>' + b'x' * 10 + b'&amp;' + b'y' * 10 + b'</a>', True)\n"
	                 "xq.buffer_text = False\n"
	                 "r += [got, xq.buffer_text, xq.buffer_size]\n"
	                 "out = []\n"
	                 "class Target:\n"
	                 "    def start(self, tag, attrib):\n"
	                 "        out.append((tag, attrib))\n"
	                 "        if tag == 'x':\n"
	                 "            out.append(t(lambda: et.feed(b'<y/>')))\n"
	                 "    def data(self, d):\n"
	                 "        out.append(d)\n"
	                 "    def close(self):\n"
	                 "        return 'closed'\n"
	                 "et = ET.XMLParser(target=Target())\n"
	                 "et.feed(b'<r k=\"v\">te')\n"
	                 "et.feed(b'xt<x/></r>')\n"
	                 "r += [et.close(), out]\n"
	                 "root = ET.fromstring('<!DOCTYPE r [<!ENTITY e \"ent\">]>'\n"
	                 "                     '<r a=\"1\"><c>&e;</c><c b=\"2\">t</c></r>')\n"
	                 "r += [root.tag, root.attrib, [(c.text, c.attrib) for c in root],\n"
	                 "      ET.tostring(root).decode()]\n"
	                 "src = io.BytesIO(b'<a><b>1</b><b>2</b></a>')\n"
	                 "it = ET.iterparse(src, events=('start', 'end'))\n"
	                 "r.append([(ev, el.tag) for ev, el in it])\n"
	                 "pp = ET.XMLPullParser(events=('end',))\n"
	                 "pp.feed('<a><b/>')\n"
	                 "pp.feed('<c/></a>')\n"
	                 "r.append([el.tag for ev, el in pp.read_events()])\n"
	                 "doc = b'<?xml version=\"1.0\"?><doc><p>hi</p></doc>'\n"
	                 "r.append(ET.parse(io.BytesIO(doc)).getroot().find('p').text)\n"
	                 "fresh = ET.XMLParser().parser\n"
	                 "fresh.EndElementHandler = fresh.CharacterDataHandler = None\n"
	                 "names = []\n"
	                 "fresh.StartElementHandler = lambda n, a: names.append([n, a])\n"
	                 "fresh.ParseFile(io.BytesIO(b'<a x=\"1\"><b/></a>'))\n"
	                 "r.append(names)\n"
	                 "r\n",
	                 "[304,[\"b\",\"RuntimeError\",\"RuntimeError\"],300,[\"xxxxxxxxxx&\","
	                 "\"RuntimeError\",\"RuntimeError\",\"RuntimeError\",\"RuntimeError\","
	                 "\"yyyyyyyyyy\"],false,16,\"closed\",[[\"r\",{\"k\":\"v\"}],\"te\","
	                 "\"xt\",[\"x\",{}],\"RuntimeError\"],\"r\",{\"a\":\"1\"},[[\"ent\",{}],"
	                 "[\"t\",{\"b\":\"2\"}]],"
	                 "\"<r a=\\\"1\\\"><c>ent</c><c b=\\\"2\\\">t</c></r>\",[[\"start\","
	                 "\"a\"],[\"start\",\"b\"],[\"end\",\"b\"],[\"start\",\"b\"],[\"end\","
	                 "\"b\"],[\"end\",\"a\"]],[\"b\",\"c\",\"a\"],\"hi\",[[\"a\",[\"x\","
	                 "\"1\"]],[\"b\",[]]]]");
	still_serving();
	stop();
}

/* xmlparser.ExternalEntityParserCreate made a parser that shares its parent's DTD without
 * holding the parent: the parent freed, the sub-parser wrote its declarations into the freed
 * tables (SIGSEGV). It is refused in the sandbox (PermissionError; ElementTree does not use
 * it), and documents with a DTD's entities and namespaces parse as before. */
Test(python_layer, an_expat_sub_parser_is_not_made)
{
	start(NULL);
	expect_ok_result("import gc, io, xml.etree.ElementTree as ET\n"
	                 "def attack():\n"
	                 "    et = ET.XMLParser()\n"
	                 "    p = et.parser\n"
	                 "    ent = b\"<!ENTITY e%d 'v%d'>\"\n"
	                 "    ents = b''.join(ent % (i, i) for i in range(200))\n"
	                 "    p.Parse(b'<!DOCTYPE r [' + ents + b']><r>', False)\n"
	                 "    for h in ('DefaultHandlerExpand', 'DefaultHandler',\n"
	                 "              'StartElementHandler', 'EndElementHandler',\n"
	                 "              'StartNamespaceDeclHandler', 'EndNamespaceDeclHandler',\n"
	                 "              'CharacterDataHandler', 'CommentHandler',\n"
	                 "              'ProcessingInstructionHandler',\n"
	                 "              'StartDoctypeDeclHandler',\n"
	                 "              'EndDoctypeDeclHandler', 'EntityDeclHandler',\n"
	                 "              'XmlDeclHandler'):\n"
	                 "        setattr(p, h, None)\n"
	                 "    c = p.ExternalEntityParserCreate(None)\n"
	                 "    del p, et\n"
	                 "    gc.collect()\n"
	                 "    junk = [bytearray(b'A' * n) for n in range(16, 4000, 8)\n"
	                 "            for _ in range(3)]\n"
	                 "    ent = b\"<!ENTITY f%d 'w%d'>\"\n"
	                 "    more = b''.join(ent % (i, i) for i in range(300))\n"
	                 "    c.Parse(more, True)\n"
	                 "    return 'survived'\n"
	                 "try:\n"
	                 "    r = [attack()]\n"
	                 "except Exception as e:\n"
	                 "    r = [type(e).__name__]\n"
	                 "doc = ('<!DOCTYPE r [<!ENTITY e \"ent\">]>'\n"
	                 "       '<r xmlns:n=\"urn:x\" a=\"1\">'\n"
	                 "       '<n:c>&e;</n:c><!-- note --><c b=\"2\">t</c></r>')\n"
	                 "root = ET.fromstring(doc)\n"
	                 "r += [[(c.tag, c.text, c.attrib) for c in root], root.attrib,\n"
	                 "      [(ev, el.tag if ev == 'end' else el) for ev, el in\n"
	                 "       ET.iterparse(io.BytesIO(doc.encode()),\n"
	                 "                    events=('end', 'start-ns'))]]\n"
	                 "r\n",
	                 "[\"PermissionError\",[[\"{urn:x}c\",\"ent\",{}],[\"c\",\"t\","
	                 "{\"b\":\"2\"}]],{\"a\":\"1\"},[[\"start-ns\",[\"n\",\"urn:x\"]],"
	                 "[\"end\",\"{urn:x}c\"],[\"end\",\"c\"],[\"end\",\"r\"]]]");
	still_serving();
	stop();
}

/* property.getter(None) (and setter, deleter) dropped a reference to None it did not own: a
 * loop of them freed None and aborted the worker. Properties work as before. */
Test(python_layer, property_copies_keep_none)
{
	start(NULL);
	expect_ok_result("p = property(lambda s: 1)\n"
	                 "for i in range(2000000):\n"
	                 "    p.getter(None)\n"
	                 "    p.setter(None)\n"
	                 "    p.deleter(None)\n"
	                 "class A:\n"
	                 "    @property\n"
	                 "    def x(self):\n"
	                 "        return 1\n"
	                 "    @x.setter\n"
	                 "    def x(self, v):\n"
	                 "        self.y = v\n"
	                 "a = A()\n"
	                 "a.x = 5\n"
	                 "[a.x, a.y, p.getter(None).fget is p.fget]",
	                 "[1,5,true]");
	still_serving();
	stop();
}

/* bz2's and lzma's compressors made by __new__ alone have no lock, and their methods took it
 * (SIGSEGV). They refuse an object never initialised; compression works as before. */
Test(python_layer, compressors_refuse_to_work_uninitialised)
{
	start(NULL);
	expect_ok_result(
	    "import bz2, lzma\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "r = [t(lambda: bz2.BZ2Compressor.__new__(bz2.BZ2Compressor).compress(b'x')),\n"
	    "     t(lambda: bz2.BZ2Compressor.__new__(bz2.BZ2Compressor).flush()),\n"
	    "     t(lambda: bz2.BZ2Decompressor.__new__(bz2.BZ2Decompressor).decompress(b'x')),\n"
	    "     t(lambda: lzma.LZMACompressor.__new__(lzma.LZMACompressor).compress(b'x')),\n"
	    "     t(lambda: "
	    "lzma.LZMADecompressor.__new__(lzma.LZMADecompressor).decompress(b'x'))]\n"
	    "c = bz2.BZ2Compressor()\n"
	    "data = c.compress(b'hello ' * 100) + c.flush()\n"
	    "lc = lzma.LZMACompressor()\n"
	    "ldata = lc.compress(b'abc' * 50) + lc.flush()\n"
	    "r += [bz2.BZ2Decompressor().decompress(data)[:11].decode(), "
	    "len(lzma.LZMADecompressor().decompress(ldata, max_length=30)),\n"
	    "      bz2.decompress(bz2.compress(b'xyz')).decode(), "
	    "lzma.decompress(lzma.compress(b'xyz')).decode()]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"hello "
	    "hello\",30,\"xyz\",\"xyz\"]");
	still_serving();
	stop();
}

/* An exception no code can catch (raised in a __del__) was reported as the audit hook's
 * refusal of the interpreter's own unraisable hook. The interpreter's hook prints it; a hook
 * the user's code sets is given nothing. */
Test(python_layer, uncatchable_exceptions_are_printed)
{
	json_object *r, *err;
	const char *text;

	start(NULL);
	r = run("import sys\n"
	        "seen = []\n"
	        "sys.unraisablehook = lambda u: seen.append(u.object)\n"
	        "class A:\n"
	        "    def __del__(self):\n"
	        "        raise ValueError('raised in del')\n"
	        "a = A()\n"
	        "del a\n"
	        "len(seen)");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert(json_object_equal(e2e_member(mcpc_structured(r), "result"),
	                            e2e_hold(json_tokener_parse("0"))),
	          "the user's hook was handed an object: %s", mcpc_json(r));
	err = e2e_member(mcpc_structured(r), "stderr");
	text = err ? json_object_get_string(err) : "";
	cr_assert(strstr(text, "ValueError: raised in del") && !strstr(text, "PermissionError"),
	          "stderr: %s", text);
	still_serving();
	stop();
}

/* Round two: a mixin base of an exception group class given split after the group was made
 * (except* then read an int as its pair: any memory); OrderedDict's repr, copy and == walking
 * on from a node a key's __hash__ had deleted (a fake node laid there: any memory). A class an
 * exception group is made of gets no split either; OrderedDict is collections' pure Python
 * one (its links, left without the deleted key's, end the walk in an AttributeError).
 * Ordinary use answers as before. */
Test(python_layer, exception_group_mixins_and_ordered_dict_walks_hold)
{
	start(NULL);
	expect_ok_result("import collections\n"
	                 "def t(f):\n"
	                 "    try:\n"
	                 "        return f()\n"
	                 "    except Exception as e:\n"
	                 "        return type(e).__name__\n"
	                 "class M:\n"
	                 "    pass\n"
	                 "class G(M, ExceptionGroup):\n"
	                 "    pass\n"
	                 "e = G('x', [ValueError(1)])\n"
	                 "def mixin():\n"
	                 "    M.split = lambda self, t: 5\n"
	                 "r = [t(mixin)]\n"
	                 "class K:\n"
	                 "    def __init__(self, od):\n"
	                 "        self.od = od\n"
	                 "    def __hash__(self):\n"
	                 "        if self.od is not None:\n"
	                 "            od, self.od = self.od, None\n"
	                 "            del od[self]\n"
	                 "            junk = [complex(i, 0) for i in range(2000)]\n"
	                 "            od[self] = 2\n"
	                 "        return 1\n"
	                 "    def __eq__(self, other):\n"
	                 "        return self is other\n"
	                 "od = collections.OrderedDict()\n"
	                 "k = K(None)\n"
	                 "od[k] = 1\n"
	                 "od['b'] = 2\n"
	                 "k.od = od\n"
	                 "r.append(t(lambda: repr(od).startswith('OrderedDict([(')))\n"
	                 "od2 = collections.OrderedDict()\n"
	                 "k2 = K(None)\n"
	                 "od2[k2] = 1\n"
	                 "k2.od = od2\n"
	                 "r.append(t(lambda: len(od2.copy())))\n"
	                 "a = collections.OrderedDict([('x', 1), ('y', 2)])\n"
	                 "b = collections.OrderedDict([('y', 2), ('x', 1)])\n"
	                 "try:\n"
	                 "    raise ExceptionGroup('g', [KeyError(1), ValueError(2)])\n"
	                 "except* KeyError as kg:\n"
	                 "    caught = len(kg.exceptions)\n"
	                 "except* ValueError:\n"
	                 "    pass\n"
	                 "r += [repr(a), a == b, a != b, a == dict(b), a.copy() == a, "
	                 "repr(collections.OrderedDict()), caught]\n"
	                 "r",
	                 "[\"TypeError\",\"AttributeError\",\"AttributeError\",\"OrderedDict(["
	                 "('x', 1), ('y', 2)])\",false,true,true,true,\"OrderedDict()\",1]");
	still_serving();
	stop();
}

/* More of CPython 3.11's C code that keeps what it does not own across the user's code: a
 * list comparison's final items (a dict view compared there, its set freed by a key's
 * __hash__: a fake set over it handed the user a bytearray over all memory), and itertools
 * iterators stepped again from inside their own step (count handed its freed count to
 * __radd__, pairwise packed a freed item, islice stepped a freed iterator); Counter.update read
 * a freed count's class. The items compared are held, dict views hold their operands, an
 * itertools iterator refuses to be stepped from inside its own step (RuntimeError, as a
 * running generator does), Counter counts in Python; ordinary uses answer as before. */
Test(python_layer, iterators_and_comparisons_keep_what_they_use)
{
	start(NULL);
	expect_ok_result(
	    "import itertools, collections\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def q(x): return (x & 0xffffffffffffffff).to_bytes(8, 'little')\n"
	    "FB = q(0x100000) + q(id(bytearray)) + q(0x7fffffffffffffff) + q(0x7fffffffffffffff) + "
	    "q(0) * 3\n"
	    "TB = q(id(FB) + 32) + q(2) + q(0) + q(0)\n"
	    "FS = (b'\\0' * 16 + q(0x100000) + q(id(set)) + q(1) + q(1) + q(1) + q(id(TB) + 32) + "
	    "q(-1)\n"
	    "      + q(0) + b'\\0' * 128 + q(0))[:215]\n"
	    "S, G, L1, L2 = [None] * 64, [], [], []\n"
	    "class K:\n"
	    "    def __hash__(self):\n"
	    "        if not L2:\n"
	    "            return 7\n"
	    "        L2.clear()\n"
	    "        for i in range(64):\n"
	    "            S[i] = bytearray(FS)\n"
	    "        return 2\n"
	    "    def __eq__(self, o):\n"
	    "        G.append(type(o).__name__)\n"
	    "        return False\n"
	    "L1.append({K(): 1}.keys())\n"
	    "L2.append({1, 2, 3})\n"
	    "r = [t(lambda: L1 < L2), G]\n"
	    "depth = [0]\n"
	    "class A:\n"
	    "    def __float__(self):\n"
	    "        return 0.0\n"
	    "    def __add__(self, other):\n"
	    "        depth[0] += 1\n"
	    "        if depth[0] == 1:\n"
	    "            next(c)\n"
	    "            return NotImplemented\n"
	    "        return 5\n"
	    "class B:\n"
	    "    def __float__(self):\n"
	    "        return 0.0\n"
	    "    def __radd__(self, other):\n"
	    "        return 7\n"
	    "c = itertools.count(A(), B())\n"
	    "r.append(t(lambda: next(c)))\n"
	    "n = [0]\n"
	    "class It:\n"
	    "    def __iter__(self):\n"
	    "        return self\n"
	    "    def __next__(self):\n"
	    "        n[0] += 1\n"
	    "        if n[0] == 2:\n"
	    "            next(p)\n"
	    "        return n[0]\n"
	    "p = itertools.pairwise(It())\n"
	    "r.append(t(lambda: next(p)))\n"
	    "depth2 = [0]\n"
	    "class It2:\n"
	    "    def __iter__(self):\n"
	    "        return self\n"
	    "    def __next__(self):\n"
	    "        depth2[0] += 1\n"
	    "        if depth2[0] == 1:\n"
	    "            next(sl)\n"
	    "        raise StopIteration\n"
	    "sl = itertools.islice(It2(), 2, None)\n"
	    "r.append(t(lambda: next(sl)))\n"
	    "class C:\n"
	    "    def __add__(self, o):\n"
	    "        cnt.clear()\n"
	    "        return NotImplemented\n"
	    "cnt = collections.Counter()\n"
	    "cnt['k'] = C()\n"
	    "r.append(t(lambda: cnt.update(['k'])))\n"
	    "# ordinary use answers as before\n"
	    "g = [(k, list(v)) for k, v in itertools.groupby('aabccc')]\n"
	    "r += [g, list(itertools.islice(itertools.count(0.5, 0.25), 3)), "
	    "list(itertools.pairwise('abc')),\n"
	    "      list(itertools.zip_longest('ab', 'c', fillvalue='-')), "
	    "collections.Counter('abca').most_common(1),\n"
	    "      [1, [2, 3]] < [1, [2, 4]], [1, 2] == [1, 2], {1: 2}.keys() < {1: 2, 3: "
	    "4}.keys(),\n"
	    "      {1: 2}.items() == {1: 2}.items(), list(itertools.accumulate([1, 2, 3])),\n"
	    "      list(itertools.chain.from_iterable(itertools.repeat('ab', 2)))]\n"
	    "r",
	    "[false,[\"int\"],\"RuntimeError\",\"RuntimeError\",\"RuntimeError\",\"TypeError\","
	    "[[\"a\",[\"a\",\"a\"]],[\"b\",[\"b\"]],[\"c\",[\"c\",\"c\",\"c\"]]],[0.5,0.75,1.0],"
	    "[[\"a\",\"b\"],[\"b\",\"c\"]],[[\"a\",\"c\"],[\"b\",\"-\"]],[[\"a\",2]],true,true,"
	    "true,true,[1,3,6],[\"a\",\"b\",\"a\",\"b\"]]");
	still_serving();
	stop();
}

/* A built-in method, a method-wrapper and a C class's descriptors reduce (pickle, copy) to the
 * getattr of the asking frame's builtins: run under a library's frame (a singledispatchmethod
 * calling object.__reduce_ex__ for the user), that was the interpreter's own getattr, which
 * read any name. Their reductions name the checked getattr. */
Test(python_layer, builtin_reductions_name_the_checked_getattr)
{
	start(NULL);
	expect_ok_result("import functools, operator\n"
	                 "AG = type(operator.attrgetter('x'))\n"
	                 "def via_library(fn, obj, arg):\n"
	                 "    sdm = functools.singledispatchmethod(lambda self, x: None)\n"
	                 "    sdm.register(type(arg), fn)\n"
	                 "    return AG('__get__')(sdm)(obj, None)(arg)\n"
	                 "reduce_ex = AG('__reduce_ex__')(object)\n"
	                 "r = []\n"
	                 "for obj in ([].append, str.join, (1).__add__, int.__add__, "
	                 "AG(\"__dict__\")(type)[\"__mro__\"]):\n"
	                 "    red = via_library(reduce_ex, obj, 4)\n"
	                 "    g = red[0]\n"
	                 "    try:\n"
	                 "        r.append(g(int, '__mro__') and 'read')\n"
	                 "    except AttributeError:\n"
	                 "        r.append(g is getattr)\n"
	                 "r",
	                 "[true,true,true,true,true]");
	still_serving();
	stop();
}

/* CPython 3.11's C code hands comparisons objects it does not own (itertools.groupby its keys,
 * deque.index an item, list comparison the items that differ, a list's or tuple's comparison
 * its items): the user's __eq__ dropped the object and answered NotImplemented, and the
 * reflected method ran on the freed object (a bytearray laid over it reached the real builtins,
 * sys.modules and posix). accumulate handed its running total to a binary operator the same
 * way, stepped again from its __add__. An extended slice assignment iterated the value after
 * it had computed the positions, and the user's __iter__ emptied the list: the items went past
 * its end. Now the operands are held while compared (and until the next comparison: groupby's
 * key compared again after its step freed it is still there, and the group ends as CPython's
 * own groupby would end it), a comparison that would go on with a freed one raises
 * RuntimeError (the last two items compared are held, so those lists' own comparison ends in
 * TypeError), accumulate refuses to be stepped from inside its step, and
 * the slice's value is read first; ordinary comparisons, operators, groupby, accumulate
 * and slice assignment answer as before. */
Test(python_layer, objects_freed_while_compared_are_not_used)
{
	start(NULL);
	expect_ok_result(
	    "import itertools, collections\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class K:\n"
	    "    def __eq__(s, o):\n"
	    "        try: next(g)\n"
	    "        except Exception: pass\n"
	    "        return NotImplemented\n"
	    "    __hash__ = None\n"
	    "g = itertools.groupby(range(100), key=lambda x: K())\n"
	    "k, grp = next(g)\n"
	    "r = [t(lambda: list(grp))]\n"
	    "d = collections.deque()\n"
	    "class E:\n"
	    "    def __eq__(s, o):\n"
	    "        d.clear()\n"
	    "        return NotImplemented\n"
	    "d.extend(E() for _ in range(100))\n"
	    "r.append(t(lambda: d.index(E())))\n"
	    "a, b = [], []\n"
	    "class L:\n"
	    "    def __eq__(s, o): return False\n"
	    "    def __lt__(s, o):\n"
	    "        a.clear(); b.clear()\n"
	    "        return NotImplemented\n"
	    "    def __gt__(s, o): return NotImplemented\n"
	    "    __hash__ = None\n"
	    "a[:] = [L()]; b[:] = [L()]\n"
	    "r.append(t(lambda: a < b))\n"
	    "outer1, outer2 = [[L()]], [[L()]]\n"
	    "class M:\n"
	    "    def __eq__(s, o):\n"
	    "        outer1.clear(); outer2.clear()\n"
	    "        return False\n"
	    "    __hash__ = None\n"
	    "outer1, outer2 = [[M(), 1]], [[M(), 2]]\n"
	    "r.append(t(lambda: outer1 < outer2))\n"
	    "lst = [object() for i in range(64)]\n"
	    "class It:\n"
	    "    def __iter__(self):\n"
	    "        lst.clear()\n"
	    "        return iter([1] * 32)\n"
	    "r.append(t(lambda: lst.__setitem__(slice(None, None, 2), It())))\n"
	    "r.append(len(lst))\n"
	    "state = [0]\n"
	    "class N:\n"
	    "    def __add__(s, o):\n"
	    "        if state[0] == 0:\n"
	    "            state[0] = 1\n"
	    "            next(acc)\n"
	    "        return NotImplemented\n"
	    "class P:\n"
	    "    def __radd__(s, o): return 'radd'\n"
	    "acc = itertools.accumulate([N(), P(), P(), P()])\n"
	    "next(acc)\n"
	    "r.append(t(lambda: next(acc)))\n"
	    "# ordinary use answers as before\n"
	    "class V:\n"
	    "    def __init__(s, v): s.v = v\n"
	    "    def __eq__(s, o): return s.v == o.v if isinstance(o, V) else NotImplemented\n"
	    "    def __lt__(s, o): return s.v < o.v if isinstance(o, V) else NotImplemented\n"
	    "    def __add__(s, o): return V(s.v + o) if isinstance(o, int) else NotImplemented\n"
	    "    def __radd__(s, o): return V(o + s.v)\n"
	    "    __hash__ = None\n"
	    "x = [1, 2, 3, 4, 5, 6]\n"
	    "x[::2] = (i * 10 for i in range(3))\n"
	    "y = list(range(5)); y[1:3] = iter('ab')\n"
	    "r += [[k for k, _ in itertools.groupby('aabbbc')], V(1) == V(1), V(1) == 1, t(lambda: "
	    "V(1) < 1),\n"
	    "      [V(2)] < [V(3)], (V(1), 2) == (V(1), 2), (1 + V(2)).v, (V(2) + 1).v, t(lambda: "
	    "V(1) + 'a'),\n"
	    "      x, y, collections.deque([V(1), V(2)]).index(V(2)),\n"
	    "      {1: V(1)} == {1: V(1)}, sorted([V(3), V(1), V(2)])[0].v, "
	    "max(itertools.accumulate([1, 2, 3]))]\n"
	    "r",
	    "[[0],\"RuntimeError\",\"TypeError\",false,\"ValueError\",0,"
	    "\"RuntimeError\","
	    "[\"a\",\"b\",\"c\"],true,false,\"TypeError\",true,true,3,3,\"TypeError\","
	    "[0,2,10,4,20,6],[0,\"a\",\"b\",3,4],1,true,1,6]");
	still_serving();
	stop();
}

/* array.array's item assignment checked the index, then read the value by its __index__, which
 * emptied or refilled the array: the value went past the new buffer (a bytearray's header
 * overwritten: any memory, then the real builtins); append, insert, extend and fromlist the
 * same. bytearray's searches took the buffer's address, then read a start by __index__ that
 * cleared it: freed memory read; its item and slice assignment and deletion the same with the
 * subscript's __index__ (a byte into the freed buffer: a bytearray's header, any memory). The values are read first now: the assignment meets the
 * array as it is, the search the bytes as they are; ordinary uses answer as before. */
Test(python_layer, an_array_emptied_while_assigned_is_written_within)
{
	start(NULL);
	expect_ok_result(
	    "import array\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class I:\n"
	    "    def __init__(s, arr, v):\n"
	    "        s.arr, s.v = arr, v\n"
	    "    def __index__(s):\n"
	    "        del s.arr[:]\n"
	    "        return s.v\n"
	    "    def __float__(s):\n"
	    "        del s.arr[:]\n"
	    "        return 2.5\n"
	    "a = array.array('q', [0] * 100)\n"
	    "a2 = array.array('d', [0.0] * 100)\n"
	    "a3 = array.array('h', [0] * 100)\n"
	    "a4, a5, a6, a7 = (array.array('q', [1] * 10) for _ in range(4))\n"
	    "r = [t(lambda: a.__setitem__(10, I(a, 1 << 62))), t(lambda: a2.__setitem__(50, I(a2, "
	    "3))),\n"
	    "     t(lambda: a3.fromlist([I(a3, 9)])), t(lambda: a4.append(I(a4, 5))),\n"
	    "     t(lambda: a5.extend([I(a5, 6), 7])), t(lambda: a6.insert(3, I(a6, 8))),\n"
	    "     t(lambda: array.array.__setitem__(a7, 2, I(a7, 9)))]\n"
	    "ba = bytearray(b'x' * 600)\n"
	    "class C:\n"
	    "    def __index__(s):\n"
	    "        ba.clear()\n"
	    "        return 120\n"
	    "found = [t(lambda: ba.find(b'x', C())), t(lambda: C() in ba), t(lambda: "
	    "ba.count(b'x', C()))]\n"
	    "bb = bytearray(b'A' * 60)\n"
	    "class K:\n"
	    "    def __index__(s):\n"
	    "        bb.extend(b'B' * 10000)\n"
	    "        return 5\n"
	    "bb[K()] = 66\n"
	    "dd = bytearray(b'x' * 40)\n"
	    "class St:\n"
	    "    def __index__(s):\n"
	    "        dd.clear()\n"
	    "        return 3\n"
	    "del dd[0:20:St()]\n"
	    "found += [bb[5], len(bb), len(dd)]\n"
	    "x = array.array('i', [1, 2, 3])\n"
	    "x[0] = True\n"
	    "x.append(4)\n"
	    "x.extend((5, 6))\n"
	    "x.insert(0, 0)\n"
	    "x.fromlist([7])\n"
	    "x[1:3] = array.array('i', [9, 9])\n"
	    "y = array.array('f', [1])\n"
	    "y[0] = 2\n"
	    "[r, len(a), len(a2), a3.tolist(), a4.tolist(), a5.tolist(), a6.tolist(), "
	    "a7.tolist(),\n"
	    " found, x.tolist(), y.tolist(), t(lambda: x.fromlist((1,))), t(lambda: "
	    "x.append(1.5)),\n"
	    " t(lambda: y.append('a')), bytearray(b'abcabc').find(b'c', 3), 99 in bytearray(b'c')]",
	    "[[\"IndexError\",\"IndexError\",null,null,null,null,\"IndexError\"],0,0,[9],[5],[6,7],"
	    "[8],[],[-1,false,0,66,10060,0],[0,9,9,3,4,5,6,7],[2.0],\"TypeError\",\"TypeError\","
	    "\"TypeError\","
	    "5,true]");
	still_serving();
	stop();
}

/* copy.copy sets the state a __reduce_ex__ names on the object its callable returns: one
 * that was there before got it too, and a built-in one's __setstate__ (C) changed it under
 * whoever was using it (a functools.partial given new arguments while it called with the old
 * ones freed them under the call: the worker crashed, a use after free). Only a new built-in
 * object gets a state; the partial is unchanged, and copies of everyday objects work. */
Test(python_layer, copy_sets_state_only_on_new_builtin_objects)
{
	start(NULL);
	expect_ok_result(
	    "import copy, functools, itertools, collections, random, datetime, fractions\n"
	    "class R:\n"
	    "    def __reduce_ex__(s, proto):\n"
	    "        return (getp, (), (len, (), {}, None))\n"
	    "def getp():\n"
	    "    return p\n"
	    "class O:\n"
	    "    def __getattr__(s, n):\n"
	    "        copy.copy(R())\n"
	    "        raise AttributeError(n)\n"
	    "p = functools.partial(getattr, O(), 'zz', bytearray(b'Q' * 64))\n"
	    "try:\n"
	    "    r = p()\n"
	    "except TypeError as e:\n"
	    "    r = 'refused' if 'only on a new one' in str(e) else str(e)\n"
	    "class S:\n"
	    "    def __init__(self):\n"
	    "        self.a = [1]\n"
	    "D = '_' * 2\n"
	    "def f(a=1):\n"
	    "    return a\n"
	    "class R2:\n"
	    "    def __reduce__(self):\n"
	    "        return ((lambda: f), (), (None, {D + 'defaults' + D: (42,)}))\n"
	    "try:\n"
	    "    copy.copy(R2())\n"
	    "    dunder = 'set'\n"
	    "except TypeError as e:\n"
	    "    dunder = 'refused' if 'dunder' in str(e) else str(e)\n"
	    "[r, p.func is getattr, len(p.args), dunder, f(), copy.deepcopy(S()).a,\n"
	    " copy.copy(functools.partial(max, 2))(1), next(copy.copy(itertools.count(3))),\n"
	    " list(copy.deepcopy(collections.OrderedDict(a=1)).items()),\n"
	    " copy.copy(random.Random(5)).random() == random.Random(5).random(),\n"
	    " str(copy.deepcopy(datetime.date(2020, 1, 2))), str(copy.copy(fractions.Fraction(1, "
	    "3))),\n"
	    " list(copy.deepcopy(collections.deque([1, 2]))), "
	    "next(copy.copy(itertools.islice(range(9), 2, 5)))]",
	    "[\"refused\",true,3,\"refused\",1,[1],2,3,[[\"a\",1]],true,\"2020-01-02\",\"1/"
	    "3\",[1,2],2]");
	still_serving();
	stop();
}

/* itertools.cycle's __reduce__ handed out its own list of saved items, which copy.deepcopy kept
 * alive in the memo: the user shortened it, and the cycle, past its first pass, read the item at
 * its old index, freed (a bytearray laid over it: any memory, the real builtins). A cycle's
 * reduce and __setstate__ give and take copies (and a step checks its index against its list);
 * the state of a C __setstate__ is copied with copy's own memo, so the caller's memo holds
 * nothing of it: the list is not found, the cycle goes on with its own items, and copies of
 * cycles yield what they did. */
Test(python_layer, an_itertools_cycle_hands_out_no_list_of_its_own)
{
	start(NULL);
	expect_ok_result(
	    "import itertools, copy\n"
	    "class O:\n"
	    "    pass\n"
	    "c = itertools.cycle(iter([O() for i in range(100)]))\n"
	    "for _ in range(150):\n"
	    "    next(c)\n"
	    "memo = {}\n"
	    "copy.deepcopy(c, memo)\n"
	    "found = [x for x in memo[id(memo)] if type(x) is list and len(x) == 100]\n"
	    "saved = found[0] if found else [None]\n"
	    "del memo\n"
	    "target = id(saved[50]) if found else None\n"
	    "del saved[1:]\n"
	    "junk = [bytearray(b'Z' * 40) for i in range(2000)]\n"
	    "x = next(c)\n"
	    "r = [len(found), id(x) == target, type(x) is O, len(saved)]\n"
	    "d = itertools.cycle('abc')\n"
	    "next(d)\n"
	    "e = copy.deepcopy(d)\n"
	    "f = itertools.cycle(iter('abcd'))\n"
	    "for _ in range(6):\n"
	    "    next(f)\n"
	    "g, h = copy.deepcopy(f), copy.copy(f)\n"
	    "r += [''.join(next(e) for _ in range(7)) + ''.join(next(d) for _ in range(7)),\n"
	    "      ''.join(next(g) for _ in range(6)) + ''.join(next(h) for _ in range(6)) +\n"
	    "      ''.join(next(f) for _ in range(6))]\n"
	    "r",
	    "[0,false,true,1,\"bcabcabbcabcab\",\"cdabcdcdabcdcdabcd\"]");
	still_serving();
	stop();
}

/* itertools.tee's __setstate__ checked its index only against the size of a data block:
 * deepcopy rebuilt the block from a copy of its items, an item's __deepcopy__ emptied that list
 * (found in the memo), and the new tee, set past the items its block held, made a tee behind it
 * read slots never written (a pointer laid there: any memory, the real builtins). The index is
 * checked against the items the block holds (ValueError); copies of tees yield what they did. */
Test(python_layer, a_tee_is_not_set_past_the_items_its_data_holds)
{
	start(NULL);
	expect_ok_result(
	    "import itertools, copy\n"
	    "class O:\n"
	    "    def __init__(s, i, last=False):\n"
	    "        s.i = i\n"
	    "        s.last = last\n"
	    "    def __deepcopy__(s, memo):\n"
	    "        if s.last:\n"
	    "            for v in list(memo.values()):\n"
	    "                if type(v) is list and len(v) == 4 and all(type(e) is O for e in v):\n"
	    "                    v.clear()\n"
	    "        return O(s.i)\n"
	    "class It:\n"
	    "    def __init__(s):\n"
	    "        s.n = 100\n"
	    "    def __iter__(s):\n"
	    "        return s\n"
	    "    def __next__(s):\n"
	    "        s.n += 1\n"
	    "        return O(s.n)\n"
	    "vals = [O(i, i == 4) for i in range(5)]\n"
	    "class Src:\n"
	    "    def __init__(s):\n"
	    "        s.k = 0\n"
	    "    def __iter__(s):\n"
	    "        return s\n"
	    "    def __next__(s):\n"
	    "        s.k += 1\n"
	    "        return vals[s.k - 1] if s.k <= 5 else O(s.k)\n"
	    "    def __deepcopy__(s, memo):\n"
	    "        return It()\n"
	    "a, b = itertools.tee(Src())\n"
	    "next(a)\n"
	    "for _ in range(5):\n"
	    "    next(b)\n"
	    "junk = [bytearray(b'A' * 496) for _ in range(200)]\n"
	    "del junk\n"
	    "try:\n"
	    "    a2, b2 = copy.deepcopy([a, b])\n"
	    "    r = [next(a2).i, next(b2).i, type(next(a2)).__name__]\n"
	    "except ValueError as e:\n"
	    "    r = ['refused' if 'Index out of range' in str(e) else str(e)]\n"
	    "a, b = itertools.tee(range(200))\n"
	    "for _ in range(57):\n"
	    "    next(a)\n"
	    "for _ in range(114):\n"
	    "    next(b)\n"
	    "a2, b2 = copy.deepcopy((a, b))\n"
	    "a3 = copy.deepcopy(a)\n"
	    "c, d = itertools.tee(iter('xyz'))\n"
	    "next(c)\n"
	    "c2, d2 = copy.deepcopy([c, d])\n"
	    "r + [[next(a2), next(b2), next(a3), next(a), next(b)], list(c2) + list(d2) + list(c) "
	    "+ list(d)]",
	    "[\"refused\",[57,114,57,57,114],[\"y\",\"z\",\"x\",\"y\",\"z\",\"y\",\"z\",\"x\","
	    "\"y\",\"z\"]]");
	still_serving();
	stop();
}

/* functools.partial's C __setstate__ kept any object of its state as the partial's instance
 * dict (read as a dict by the method lookup: a write through a bytes object's data, any memory,
 * the real builtins). copy set a built-in object's state only as its own reduce gave it, but took
 * a __reduce_ex__ or __reduce__ of a subclass that was no Python function (a classmethod, a
 * staticmethod, a partial, a callable object) for the C type's own: the user's state was set
 * (SIGSEGV here). A reduce named by a class of Python's in any form is the user's (TypeError);
 * copies of partials and of their subclasses still call as the originals. */
Test(python_layer, a_partial_takes_no_state_from_a_subclass_reduce)
{
	start(NULL);
	expect_ok_result(
	    "import functools, copy\n"
	    "def f(*a): return a\n"
	    "def g(*a): return ('g',) + a\n"
	    "big = 0x4141414141410000 << 64\n"
	    "def red(cls, proto=None):\n"
	    "    return (cls, (f,), (g, (1,), None, big if cls is P1 else None))\n"
	    "class Call:\n"
	    "    def __call__(self, proto):\n"
	    "        return red(P3)\n"
	    "class P1(functools.partial):\n"
	    "    def m(self): return 1\n"
	    "    __reduce_ex__ = classmethod(red)\n"
	    "class P2(functools.partial):\n"
	    "    def m(self): return 1\n"
	    "    __reduce__ = staticmethod(lambda: red(P2))\n"
	    "class P3(functools.partial):\n"
	    "    def m(self): return 1\n"
	    "    __reduce_ex__ = Call()\n"
	    "class P4(functools.partial):\n"
	    "    def m(self): return 1\n"
	    "    __reduce_ex__ = functools.partial(lambda proto: red(P4))\n"
	    "r = []\n"
	    "for P in (P4, P3, P2, P1):\n"
	    "    try:\n"
	    "        p = copy.deepcopy(P(f))\n"
	    "    except TypeError as e:\n"
	    "        r.append('refused' if 'only as its own reduce' in str(e) else str(e))\n"
	    "        continue\n"
	    "    for i in range(60):\n"
	    "        try:\n"
	    "            p.m()\n"
	    "        except SystemError:\n"
	    "            pass\n"
	    "    r.append(p(2))\n"
	    "class S(functools.partial):\n"
	    "    def m(self): return self(9)\n"
	    "s = S(f, 7); s.tag = [1]\n"
	    "c, d = copy.deepcopy(s), copy.copy(s)\n"
	    "p = functools.partial(f, 1, 2); p.note = 'n'\n"
	    "q, w = copy.copy(p), copy.deepcopy(p)\n"
	    "r + [type(c).__name__, c.m(), c.tag, c.tag is s.tag, d(8), d.tag is s.tag, q(3), "
	    "w(4), w.note]",
	    "[\"refused\",\"refused\",\"refused\",\"refused\",\"S\",[7,9],[1],false,[7,8],true,[1,"
	    "2,3],[1,2,4],\"n\"]");
	still_serving();
	stop();
}

/* The same dict slot filled through the copy of the C reduce's own state: a plain subclass of
 * partial deep-copied with a memo (a dict subclass) that answered the copy of None with an int
 * (its digits read as the dict's keys: SIGSEGV). partial's __setstate__ takes (callable, tuple,
 * dict or None, dict or None), for a subclass too (TypeError); and the state of a C
 * __setstate__ is copied with copy's own memo, so the caller's memo is not asked: the copy is
 * an ordinary one. A partial of a subclass with keywords and attributes copies as before. */
Test(python_layer, a_partial_state_holds_a_dict_as_its_dict)
{
	start(NULL);
	expect_ok_result(
	    "import functools, copy\n"
	    "def f(*a): return a\n"
	    "big = 0x4141414141410000 << 64\n"
	    "class M(dict):\n"
	    "    def get(self, k, d=None):\n"
	    "        return big if k == id(None) else dict.get(self, k, d)\n"
	    "class PP(functools.partial):\n"
	    "    def m(self): return 1\n"
	    "try:\n"
	    "    p = copy.deepcopy(PP(f), M())\n"
	    "    for i in range(60):\n"
	    "        try:\n"
	    "            p.m()\n"
	    "        except SystemError:\n"
	    "            pass\n"
	    "    r = [p(1)]\n"
	    "except TypeError as e:\n"
	    "    r = ['refused' if 'invalid partial state' in str(e) else str(e)]\n"
	    "class D(dict):\n"
	    "    pass\n"
	    "def k(*a, **kw): return [a, {n: [type(v).__name__, dict(v)] if isinstance(v, dict) "
	    "else v for n, v in kw.items()}]\n"
	    "s = PP(k, 1, x=D(y=2))\n"
	    "s.tag = 'keep'\n"
	    "s2 = copy.deepcopy(s)\n"
	    "r + [s2(3), s2.tag, s2.m(), copy.copy(functools.partial(k, z=1))(0)]",
	    "[[1],[[1,3],{\"x\":[\"D\",{\"y\":2}]}],\"keep\",1,[[0],{\"z\":1}]]");
	still_serving();
	stop();
}

/* A library evaluating in a dict of the user's that names no builtins (typing's ForwardRef,
 * sympy's parse_expr with global_dict=) had the sandbox's builtins put in it: the very dict every
 * frame of the user's runs with, which the user's code then read back and changed (len, and the
 * getattr the C layer takes from it when it reduces a bound method). The dict gets a copy. */
Test(python_layer, a_library_evaluation_hands_out_a_copy_of_the_builtins)
{
	start(NULL);
	expect_ok_result("import typing, copy\n"
	                 "g = {}\n"
	                 "typing.ForwardRef('int')._evaluate(g, None, frozenset())\n"
	                 "b = g['__builtins__']\n"
	                 "b['len'] = lambda x: 'user len'\n"
	                 "b['getattr'] = lambda *a: 'user getattr'\n"
	                 "class A:\n"
	                 "    def m(self):\n"
	                 "        return 5\n"
	                 "[len([]), copy.copy(A().m)(), b['print'] is print]",
	                 "[0,5,true]");
	still_serving();
	stop();
}

/* A tee's data block made by its own class took any object as its source: a tee set on it (the
 * memo of a deepcopy answered the block's copy) called PyIter_Next on an int (no tp_iternext,
 * SIGSEGV). The block's source must be an iterator (TypeError), as a tee's __setstate__ checks
 * for the block it is given; and the state of a C __setstate__ is copied with copy's own memo,
 * so the caller's memo neither holds the block nor answers for it. Copies of tees work as
 * before. */
Test(python_layer, a_tee_data_block_reads_an_iterator)
{
	start(NULL);
	expect_ok_result(
	    "import itertools, copy\n"
	    "a, b = itertools.tee([1, 2, 3])\n"
	    "memo = {}\n"
	    "copy.deepcopy(a, memo)\n"
	    "found = [x for x in memo[id(memo)] if type(x).__name__ == '_tee_dataobject']\n"
	    "r = [len(found)]\n"
	    "for blk in found:\n"
	    "    try:\n"
	    "        forged = type(blk)(42, [], None)\n"
	    "    except TypeError as e:\n"
	    "        forged = None\n"
	    "        r.append('refused' if 'reads an iterator' in str(e) else str(e))\n"
	    "    if forged is not None:\n"
	    "        class M(dict):\n"
	    "            def get(self, k, d=None):\n"
	    "                return forged if k == id(blk) else dict.get(self, k, d)\n"
	    "        r.append(next(copy.deepcopy(a, M())))\n"
	    "c, d = itertools.tee(range(5))\n"
	    "next(c)\n"
	    "c2, d2 = copy.deepcopy(c), copy.copy(d)\n"
	    "r + [list(c2), list(d2), list(c), list(d)]",
	    "[0,[1,2,3,4],[0,1,2,3,4],[1,2,3,4],[0,1,2,3,4]]");
	still_serving();
	stop();
}

/* An enum member reduces to getattr(its class, its name), with the interpreter's getattr, and
 * copy called it from its own frame: a property named __class__ (no class of the code's defines
 * one now: the attack runs with the class's own) and a member's _name_ set made
 * copy.copy(member) read any attribute past the rules (type's unbound __getattribute__, a live
 * object's bound C __setstate__, a plain exception group's __dict__, in which a split then
 * shadowed its method: except* took the answer unchecked, the sandbox escaped). copy calls the
 * user's getattr for such a reduce; an exception group's split is a data descriptor, which no
 * instance dict shadows. Members copy as before. */
Test(python_layer, a_reduce_to_getattr_reads_with_the_attribute_rules)
{
	start(NULL);
	expect_ok_result(
	    "import enum, copy, itertools\n"
	    "_T = [None]\n"
	    "try:\n"
	    "    class _Base(enum.Enum):\n"
	    "        A = 1\n"
	    "        @property\n"
	    "        def __class__(self):\n"
	    "            return _T[0]\n"
	    "    made = 'made'\n"
	    "except TypeError:\n"
	    "    class _Base(enum.Enum):\n"
	    "        A = 1\n"
	    "    made = 'refused'\n"
	    "_m = _Base.A\n"
	    "def get(obj, name):\n"
	    "    _T[0] = obj\n"
	    "    object.__setattr__(_m, '_name_', name)\n"
	    "    try:\n"
	    "        return repr(copy.copy(_m))[:20]\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'Forbidden' in str(e) else str(e)\n"
	    "class Color(enum.Enum):\n"
	    "    RED = 1\n"
	    "class Perm(enum.Flag):\n"
	    "    R = 1\n"
	    "    W = 2\n"
	    "e = ExceptionGroup('x', [ValueError(1)])\n"
	    "[get(type, '__getattribute__'), get(itertools.chain(), '__setstate__'),\n"
	    " get(e, '__dict__'), get(e, 'message'), copy.copy(Color.RED) is Color.RED,\n"
	    " copy.deepcopy(Perm.R | Perm.W) == Perm.R | Perm.W,\n"
	    " repr(e.split(ValueError)[0].exceptions), made]",
	    "[\"refused\",\"refused\",\"refused\",\"message\",true,true,\"(ValueError(1),)\","
	    "\"refused\"]");
	still_serving();
	stop();
}

/* dataclasses read the attributes a class's __dataclass_fields__ names (asdict, astuple,
 * replace) from its own frame, past the attribute rules: a field named __setstate__ handed out
 * a built-in object's C __setstate__, bound (on an array with views, in data mode: the views
 * then read freed memory, the sandbox escaped), one named __getattribute__ type's own. Its reads
 * follow the rules now, but for the names it keeps its own state under; dataclasses work as
 * on the host. */
Test(python_layer, dataclasses_read_fields_with_the_attribute_rules)
{
	start(NULL);
	expect_ok_result(
	    "import dataclasses, itertools\n"
	    "@dataclasses.dataclass\n"
	    "class _D:\n"
	    "    a: int = 0\n"
	    "FIELD = dataclasses.fields(_D)[0]._field_type\n"
	    "def read(base, name, *args):\n"
	    "    F = dataclasses.field()\n"
	    "    F.name = name\n"
	    "    F._field_type = FIELD\n"
	    "    class W(base):\n"
	    "        __dataclass_fields__ = {name: F}\n"
	    "    try:\n"
	    "        return repr(dataclasses.asdict(W(*args))[name])[:20]\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'Forbidden' in str(e) else str(e)\n"
	    "@dataclasses.dataclass(order=True)\n"
	    "class P:\n"
	    "    x: int\n"
	    "    y: list = dataclasses.field(default_factory=list)\n"
	    "    def __post_init__(self):\n"
	    "        self.z = 1\n"
	    "@dataclasses.dataclass(frozen=True, slots=True)\n"
	    "class F:\n"
	    "    a: int = 2\n"
	    "p = P(1, [2])\n"
	    "repr([read(itertools.chain, '__setstate__', [1]), read(object, '__getattribute__'),\n"
	    "      read(object, 'fine'), dataclasses.replace(p, x=5), dataclasses.asdict(p),\n"
	    "      dataclasses.astuple(p), P(1) < P(2), p.z, dataclasses.replace(F(), a=3),\n"
	    "      dataclasses.make_dataclass('M', [('a', int)])(1)])",
	    "\"['refused', 'refused', \\\"'W' object has no attribute 'fine'\\\", P(x=5, y=[2]), "
	    "{'x': 1, 'y': [2]}, (1, [2]), True, 1, F(a=3), M(a=1)]\"");
	still_serving();
	stop();
}

/* copy's checks of a built-in object's C __setstate__ (only on a new object, only as its own
 * reduce gives it) read the __setstate__ through the object's class: a metaclass whose
 * __getattribute__ answered a Python function had them skipped, and copy then called the C one
 * on an object of the user's choosing (a chain running the generator that asked: freed while it
 * ran, the sandbox escaped). The __setstate__ is found along the class's MRO and copy's steps
 * after the object is made use that one. And ast read and set the attributes a node's _fields
 * named (iter_fields, dump, NodeTransformer) as library code: a class naming
 * '__getattribute__' there was handed type's own, unbound; ast's reads follow the attribute
 * rules now. A slot state given as a mapping other than a dict set a dunder attribute (the
 * object's __class__); it is refused as a dict's is. Ordinary copies and ast's uses answer as
 * the host's. */
Test(python_layer, copy_and_ast_read_attributes_as_the_class_holds_them)
{
	start(NULL);
	expect_ok_result(
	    "import copy, itertools, ast, collections, functools, datetime, array\n"
	    "class M(type):\n"
	    "    def __getattribute__(cls, name):\n"
	    "        def lie(*a):\n"
	    "            return None\n"
	    "        return lie\n"
	    "class K(itertools.chain, metaclass=M):\n"
	    "    pass\n"
	    "live = K([1, 2], [3])\n"
	    "class X:\n"
	    "    def __reduce__(self):\n"
	    "        return (lambda: live, (), (iter([[7, 8]]), iter([9])))\n"
	    "try:\n"
	    "    copy.copy(X())\n"
	    "    r = ['state set']\n"
	    "except TypeError as e:\n"
	    "    r = [str(e)]\n"
	    "r.append(list(live))\n"
	    "class H(type):\n"
	    "    _fields = ('__getattribute__', '__init__', 'x')\n"
	    "    x = 1\n"
	    "class N(metaclass=H):\n"
	    "    pass\n"
	    "r.append(sorted(dict(ast.iter_fields(N))))\n"
	    "import collections.abc\n"
	    "class Slot:\n"
	    "    __slots__ = ('a',)\n"
	    "class Other:\n"
	    "    __slots__ = ('a',)\n"
	    "class Map(collections.abc.Mapping):\n"
	    "    def __init__(self, d):\n"
	    "        self.d = d\n"
	    "    def __getitem__(self, k):\n"
	    "        return self.d[k]\n"
	    "    def __iter__(self):\n"
	    "        return iter(self.d)\n"
	    "    def __len__(self):\n"
	    "        return len(self.d)\n"
	    "class Z:\n"
	    "    def __reduce__(self):\n"
	    "        return (Slot, (), (None, Map({'__class__': Other, 'a': 1})))\n"
	    "try:\n"
	    "    r.append(type(copy.copy(Z())).__name__)\n"
	    "except TypeError as e:\n"
	    "    r.append(str(e))\n"
	    "class St:\n"
	    "    def __init__(self):\n"
	    "        self.v = [1]\n"
	    "    def __getstate__(self):\n"
	    "        return {'v': self.v, 'w': 2}\n"
	    "    def __setstate__(self, st):\n"
	    "        for k, v in st.items():\n"
	    "            setattr(self, k, v)\n"
	    "class L(list):\n"
	    "    pass\n"
	    "l = L([1, [2]])\n"
	    "l.tag = 't'\n"
	    "rec = [1]\n"
	    "rec.append(rec)\n"
	    "c = copy.deepcopy(rec)\n"
	    "s = copy.deepcopy(St())\n"
	    "it = itertools.count(5)\n"
	    "next(it)\n"
	    "tree = ast.parse('a = 1 + 2')\n"
	    "class T(ast.NodeTransformer):\n"
	    "    def visit_Constant(self, node):\n"
	    "        return ast.Constant(node.value * 10)\n"
	    "r += [c[1] is c, [s.v, s.w], copy.deepcopy(l), copy.deepcopy(l).tag,\n"
	    "      copy.deepcopy(collections.OrderedDict(a=[1])), next(copy.copy(it)),\n"
	    "      copy.deepcopy(functools.partial(max, 1))(3), "
	    "str(copy.deepcopy(datetime.date(2020, "
	    "1, 2))),\n"
	    "      copy.deepcopy(array.array('i', [4])).tolist(),\n"
	    "      list(copy.deepcopy(itertools.islice(range(9), 2, 4))),\n"
	    "      ast.dump(tree)[:30], ast.unparse(ast.fix_missing_locations(T().visit(tree))),\n"
	    "      [type(n).__name__ for n in ast.walk(tree)][:3]]\n"
	    "repr(r)",
	    "\"['copy sets the state of a built-in object only on a new one (this K was there "
	    "before)', [1, 2, 3], ['__init__', 'x'], 'copy sets no dunder attribute', True, "
	    "[[1], 2], [1, [2]], 't', "
	    "OrderedDict([('a', [1])]), 6, 3, '2020-01-02', [4], [2, 3], "
	    "'Module(body=[Assign(targets=[N', 'a = 10 + 20', ['Module', 'Assign', 'Name']]\"");
	still_serving();
	stop();
}

/* except* on the group e of a ValueError and a TypeError, each part appended to r. */
#define EXCEPT_STAR_SPLITS                                                                         \
	"try:\n"                                                                                   \
	"    raise e\n"                                                                            \
	"except* ValueError as got:\n"                                                             \
	"    r.append(repr(got.exceptions))\n"                                                     \
	"except* TypeError as got:\n"                                                              \
	"    r.append(repr(got.exceptions))\n"

/* A class of the user's beneath an exception group got CPython's generic setattro (the
 * C function object's __setattr__ wraps, found along its MRO), not the group's: e.split = f on
 * an instance of class EG(ExceptionGroup) was set, and except* took its answer as a pair
 * unchecked (an int's digits read as two objects: the real builtins, posix.getpid(); shown on
 * the session's start build). Such classes keep the group's setattro, also after their
 * __setattr__ is set; other attributes are set as before and except* splits as before. */
Test(python_layer, an_exception_group_of_the_users_class_keeps_its_classs_split)
{
	start(NULL);
	expect_ok_result("class EG(ExceptionGroup):\n"
	                 "    pass\n"
	                 "class BEG(BaseExceptionGroup):\n"
	                 "    pass\n"
	                 "def t(f):\n"
	                 "    try:\n"
	                 "        f()\n"
	                 "        return 'set'\n"
	                 "    except TypeError as e:\n"
	                 "        return 'refused' if 'its class' in str(e) else str(e)\n"
	                 "e = EG('x', [ValueError(1), TypeError(2)])\n"
	                 "b = BEG('y', [KeyboardInterrupt()])\n"
	                 "def direct():\n"
	                 "    e.split = lambda t: 7\n"
	                 "r = [t(direct), t(lambda: setattr(b, 'split', 1)), t(lambda: setattr(e, "
	                 "'note', 1))]\n"
	                 "EG.__setattr__ = object.__setattr__\n"
	                 "r.append(t(lambda: setattr(e, 'split', 1)))\n" EXCEPT_STAR_SPLITS
	                 "r + [e.note]",
	                 "[\"refused\",\"refused\",\"set\",\"refused\",\"(ValueError(1),)\","
	                 "\"(TypeError(2),)\",1]");
	still_serving();
	stop();
}

/* vars() of an object of a class the code defined gave its instance dict, and the guards a
 * built-in class keeps on its objects' attributes when they are set were passed by writing the
 * dict: an exception group of the user's class got a split of its own, whose answer except*
 * took as a pair unchecked (an int's digits read as two objects: a bytearray over all memory,
 * the sandbox escaped). An object whose class has a built-in base (an exception group, FileIO,
 * array, dict) gives no dict; except* on such a group works as before. */
Test(python_layer, no_dict_of_an_object_whose_class_has_a_builtin_base)
{
	start(NULL);
	expect_ok_result(
	    "import array\n"
	    "class EG(ExceptionGroup):\n"
	    "    pass\n"
	    "class A(array.array):\n"
	    "    pass\n"
	    "class D(dict):\n"
	    "    pass\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'given'\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'Forbidden' in str(e) else str(e)\n"
	    "e = EG('x', [ValueError(1), TypeError(2)])\n"
	    "r = [t(lambda: vars(e)), t(lambda: e.__dict__), t(lambda: vars(A('i'))),\n"
	    "     t(lambda: getattr(D(), '__dict__'))]\n" EXCEPT_STAR_SPLITS "r",
	    "[\"refused\",\"refused\",\"refused\",\"refused\",\"(ValueError(1),)\","
	    "\"(TypeError(2),)\"]");
	still_serving();
	stop();
}

/* Library code that reads an attribute by a name from data with the interpreter's getattr
 * (pprint's dataclass printer reading each field a class lists; codecs' StreamReader.__getattr__
 * the name asked of it) handed the user's code the bound C __setstate__ of a live partial: a
 * write primitive. A name its calling frame does not hold, that reaches an object's own machinery
 * (attribute access, state, reduction, namespace), answers as a missing attribute there; other
 * names read as before. */
Test(python_layer, a_library_getattr_by_a_name_from_data_reaches_no_machinery)
{
	start(NULL);
	expect_ok_result("import codecs, functools, itertools, pprint, dataclasses\n"
	                 "def t(f):\n"
	                 "    try:\n"
	                 "        return type(f()).__name__\n"
	                 "    except AttributeError:\n"
	                 "        return 'refused'\n"
	                 "p = functools.partial(print, 1)\n"
	                 "c = itertools.chain([1])\n"
	                 "@dataclasses.dataclass\n"
	                 "class D(functools.partial):\n"
	                 "    x: int = 0\n"
	                 "got = []\n"
	                 "class PP(pprint.PrettyPrinter):\n"
	                 "    def format(self, obj, context, maxlevels, level):\n"
	                 "        got.append(type(obj).__name__)\n"
	                 "        return 'a long text, wider than one', True, False\n"
	                 "f = dataclasses.field()\n"
	                 "f.name = '__setstate__'\n"
	                 "f._field_type = dataclasses.fields(D)[0]._field_type\n"
	                 "D.__dataclass_fields__ = {'__setstate__': f}\n"
	                 "[t(lambda: PP(width=1).pformat(D(print))), got,\n"
	                 " t(lambda: codecs.StreamReader(p).func), list(c), p.args]",
	                 "[\"refused\",[\"D\"],\"builtin_function_or_method\",[1],[1]]");
	still_serving();
	stop();
}

/* "from m import *" ran IMPORT_STAR on whatever the builtins' __import__ gave (a name the
 * code can set): C read every name that object's __all__ listed (a partial's bound C
 * __setstate__, a class's __subclasses__) into the code's namespace. It imports the proxy of
 * the module it names, by the attribute rules: the names it binds are the module's, in the
 * code's own namespace only (the builtin it is made of, handed to a library as a callback,
 * does not write the library's). */
Test(python_layer, a_star_import_binds_the_modules_names_only)
{
	start(NULL);
	expect_ok_result(
	    "import functools, heapq\n"
	    "p = functools.partial(print)\n"
	    "p.__all__ = ['__setstate__', '__reduce_ex__']\n"
	    "__builtins__['__import__'] = lambda *a, **k: p\n"
	    "from json import *\n"
	    "try:\n"
	    "    got = [type(__setstate__).__name__, type(__reduce_ex__).__name__]\n"
	    "except NameError:\n"
	    "    got = []\n"
	    "from math import *\n"
	    "star = __builtins__[' safepy from']\n"
	    "try:\n"
	    "    heapq.nsmallest(1, [0, 0], key=functools.partial(star, 'math', '*'))\n"
	    "    lib = 'ran'\n"
	    "except ImportError:\n"
	    "    lib = 'refused'\n"
	    "[got, dumps([1]), sqrt(16.0), 'floor' in globals(), lib]",
	    "[[],\"[1]\",4.0,true,\"refused\"]");
	/* In a function, as CPython: a SyntaxError. */
	e2e_expect_error("def f():\n    from math import *\n", "SyntaxError");
	/* The builtin `from m import a` is made of, called by the code with names of its own,
	 * reads them by the attribute rules: a proxy's __dict__ was handed out, and a change to
	 * it changed the module as every later import saw it (V57b L1). */
	expect_ok_result("F = __builtins__[' safepy from']\n"
	                 "def t(names):\n"
	                 "    try:\n"
	                 "        return [type(v).__name__ for v in F('json', names, 0)]\n"
	                 "    except AttributeError as e:\n"
	                 "        return 'refused'\n"
	                 "[t(('__dict__',)), t(('loads', '__builtins__')), t(('loads',)),\n"
	                 " F('json', None, 0).loads('[2]')]",
	                 "[\"refused\",\"refused\",[\"function\"],[2]]");
	still_serving();
	stop();
}

/* csv's reader stepped from inside its own step (its input's __next__ asking it for the next
 * record) appended the outer step's fields to the list the inner step had taken: NULL, the
 * worker crashed. It refuses as itertools' iterators do; reading is unchanged. */
Test(python_layer, a_csv_reader_is_not_stepped_from_inside_its_step)
{
	start(NULL);
	expect_ok_result("import csv, io\n"
	                 "class It:\n"
	                 "    n = 0\n"
	                 "    def __iter__(self):\n"
	                 "        return self\n"
	                 "    def __next__(self):\n"
	                 "        self.n += 1\n"
	                 "        if self.n == 1:\n"
	                 "            next(r)\n"
	                 "        return 'a,b,c'\n"
	                 "r = csv.reader(It())\n"
	                 "try:\n"
	                 "    got = next(r)\n"
	                 "except RuntimeError as e:\n"
	                 "    got = str(e)\n"
	                 "[got, next(r), list(csv.reader(io.StringIO('x,y\\n1,2\\n')))]",
	                 "[\"_csv.reader stepped from inside its own step\",[\"a\",\"b\",\"c\"],"
	                 "[[\"x\",\"y\"],[\"1\",\"2\"]]]");
	still_serving();
	stop();
}

/* print() looked sys.stdout up without owning it: an argument's __str__ that ended a
 * redirect_stdout (putting the call's stream back) and dropped the redirect freed the stream
 * print went on writing to (the worker crashed; a fake object laid there escaped). The stream
 * lives until print is done with it: what it writes goes where it was going. */
Test(python_layer, print_holds_the_stream_it_writes_to)
{
	start(NULL);
	expect_ok_result("import contextlib\n"
	                 "got = []\n"
	                 "Out = type('Out', (), {'__slots__': ('a', 'b', 'c', 'd', 'e', 'f'),\n"
	                 "                       'write': lambda self, s: got.append(s)})\n"
	                 "cm = contextlib.redirect_stdout(Out())\n"
	                 "cm.__enter__()\n"
	                 "class Evil:\n"
	                 "    def __str__(self):\n"
	                 "        global cm\n"
	                 "        cm.__exit__(None, None, None)\n"
	                 "        cm = None\n"
	                 "        return 'e'\n"
	                 "for i in range(50):\n"
	                 "    print(Evil(), 'x')\n"
	                 "    if i < 49:\n"
	                 "        cm = contextlib.redirect_stdout(Out())\n"
	                 "        cm.__enter__()\n"
	                 "print('after')\n"
	                 "[len(got), got[:4]]",
	                 "[200,[\"e\",\" \",\"x\",\"\\n\"]]");
	still_serving();
	stop();
}

/* ZoneInfo's C type wrote a byte into whatever a subclass's _weak_cache.setdefault returned
 * (byte 201 of any object: a bytes object's text here, a slot's pointer in the escape that used
 * it), and walked its strong cache calling a key's __eq__ that could clear the cache and free
 * the node it stood on (SIGSEGV). ZoneInfo is the module's pure Python class: the object the
 * cache gives back is left as it was, and the walk holds what it walks. */
Test(python_layer, zoneinfo_caches_write_nothing_into_what_they_give)
{
	start(NULL);
	expect_ok_result("import zoneinfo\n"
	                 "b = bytes(300)\n"
	                 "class Cache:\n"
	                 "    def get(self, key, default=None):\n"
	                 "        return None\n"
	                 "    def setdefault(self, key, value):\n"
	                 "        return b\n"
	                 "class Z(zoneinfo.ZoneInfo):\n"
	                 "    pass\n"
	                 "Z._weak_cache = Cache()\n"
	                 "try:\n"
	                 "    r = Z('UTC') is b\n"
	                 "except AttributeError:\n"
	                 "    r = 'refused'\n"
	                 "[r, b == bytes(300), str(zoneinfo.ZoneInfo('Europe/Paris'))]",
	                 "[\"refused\",true,\"Europe/Paris\"]");
	expect_ok_result("import zoneinfo\n"
	                 "Z = zoneinfo.ZoneInfo\n"
	                 "for k in ('UTC', 'Europe/Paris', 'Asia/Tokyo', 'America/New_York'):\n"
	                 "    Z(k)\n"
	                 "class K(str):\n"
	                 "    def __eq__(self, other):\n"
	                 "        Z.clear_cache()\n"
	                 "        junk = [bytearray(48) for _ in range(1000)]\n"
	                 "        return False\n"
	                 "    __hash__ = str.__hash__\n"
	                 "out = []\n"
	                 "for i in range(20):\n"
	                 "    for k in ('UTC', 'Europe/Paris', 'Asia/Tokyo'):\n"
	                 "        Z(k)\n"
	                 "    try:\n"
	                 "        out.append(str(Z(K('Etc/GMT+1'))))\n"
	                 "    except zoneinfo.ZoneInfoNotFoundError:\n"
	                 "        out.append('not found')\n"
	                 "[len(out), str(Z('Asia/Tokyo'))]",
	                 "[20,\"Asia/Tokyo\"]");
	still_serving();
	stop();
}

/* datetime.astimezone, utctimetuple and the default tzinfo.fromutc took what a subclass's
 * constructor returned for a datetime: a bytearray had its buffer pointer overwritten by the
 * tzinfo (its data then started at the tzinfo: the heap read and written), its pointer bytes
 * read back as the date, an int's digits read as a datetime handed a pointer they spelled to
 * the int's constructor as an object. They work on a datetime of the same fields now: the
 * bytearray keeps its data, and the constructor's result is only ever returned. */
Test(python_layer, datetime_methods_take_no_constructors_result_for_a_datetime)
{
	start(NULL);
	expect_ok_result("import datetime\n"
	                 "target = bytearray(b'Z' * 64)\n"
	                 "class TZ(datetime.tzinfo):\n"
	                 "    def utcoffset(self, dt):\n"
	                 "        return datetime.timedelta(hours=1)\n"
	                 "    def fromutc(self, dt):\n"
	                 "        return dt\n"
	                 "class D(datetime.datetime):\n"
	                 "    def __new__(cls, *a, **k):\n"
	                 "        if len(a) >= 7:\n"
	                 "            return target\n"
	                 "        return datetime.datetime.__new__(cls, *a, **k)\n"
	                 "d = D(2020, 1, 1, tzinfo=TZ())\n"
	                 "r = d.astimezone(TZ())\n"
	                 "t = tuple(d.utctimetuple())[:6]\n"
	                 "[r is target, bytes(target) == b'Z' * 64, t,\n"
	                 " str(datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)\n"
	                 "     .astimezone(datetime.timezone(datetime.timedelta(hours=2))))]",
	                 "[true,true,[2019,12,31,23,0,0],\"2020-01-01 02:00:00+02:00\"]");
	expect_ok_result("import datetime\n"
	                 "marker = Ellipsis  # in the zygote's data: an address a digit spells\n"
	                 "P = id(marker)\n"
	                 "got = []\n"
	                 "class MI(int):\n"
	                 "    __slots__ = ()\n"
	                 "    def __new__(cls, *a):\n"
	                 "        if len(a) > 7:\n"
	                 "            got.append(a[7] is marker)\n"
	                 "            return int.__new__(cls, 0)\n"
	                 "        return int.__new__(cls, *a)\n"
	                 "digits = [1 | 0x07 << 8 | 0xE4 << 16 | 1 << 24, 1, 0, 0, P, 0, 1]\n"
	                 "X = MI(sum(d << (30 * i) for i, d in enumerate(digits)))\n"
	                 "class TZ(datetime.tzinfo):\n"
	                 "    def utcoffset(self, dt):\n"
	                 "        return datetime.timedelta(hours=1)\n"
	                 "    def dst(self, dt):\n"
	                 "        return datetime.timedelta(minutes=30)\n"
	                 "class D(datetime.datetime):\n"
	                 "    def __new__(cls, *a, **k):\n"
	                 "        if len(a) >= 7:\n"
	                 "            return X\n"
	                 "        return datetime.datetime.__new__(cls, *a, **k)\n"
	                 "tz = TZ()\n"
	                 "r = tz.fromutc(D(2020, 1, 1, tzinfo=tz))\n"
	                 "[P < (1 << 30), r is X, got]",
	                 "[true,true,[]]");
	still_serving();
	stop();
}

/* array's iterator lets go of its array once exhausted, and its C __setstate__ read the size of
 * the array it no longer had: copy.copy rebuilds an iterator by iter() of its array, and an
 * array subclass's __iter__ answered with an exhausted iterator, which was then given the state
 * (SIGSEGV, the host's python3 too). An exhausted iterator ignores a state, as a list's does;
 * copies of live iterators go on as before. */
Test(python_layer, an_exhausted_array_iterator_takes_no_state)
{
	start(NULL);
	expect_ok_result("import array, copy\n"
	                 "class A(array.array):\n"
	                 "    n = 0\n"
	                 "    def __iter__(self):\n"
	                 "        A.n += 1\n"
	                 "        if A.n == 1:\n"
	                 "            return super().__iter__()\n"
	                 "        e = iter(array.array('i', [1]))\n"
	                 "        list(e)\n"
	                 "        return e\n"
	                 "x = iter(A('i', [1, 2]))\n"
	                 "y = copy.copy(x)\n"
	                 "it = iter(array.array('i', [1, 2, 3]))\n"
	                 "next(it)\n"
	                 "z, w = copy.copy(it), copy.deepcopy(it)\n"
	                 "e = iter(array.array('d'))\n"
	                 "[A.n, list(y), list(z), list(w), list(it), list(copy.copy(e)),\n"
	                 " list(copy.copy(it))]",
	                 "[2,[],[2,3],[2,3],[2,3],[],[]]");
	still_serving();
	stop();
}

/* combinations, combinations_with_replacement and permutations given a state when they yield
 * nothing (r past the pool's size, or an empty pool: the memo of a deepcopy answered for the
 * copies of their arguments and state) read past their pool or their indices (SIGSEGV). Such a
 * state is refused (ValueError); and the arguments and state of a C __setstate__ are copied
 * with copy's own memo, so the caller's memo is not asked: the copies go on as the originals
 * do. Copies of these iterators yield what they did. */
Test(python_layer, combinations_that_yield_nothing_take_no_state)
{
	start(NULL);
	expect_ok_result(
	    "import itertools, copy\n"
	    "class M(dict):\n"
	    "    def __init__(s, subs):\n"
	    "        s.subs = dict(subs)\n"
	    "        s.n = 0\n"
	    "    def get(s, k, d=None):\n"
	    "        s.n += 1\n"
	    "        if s.n in s.subs:\n"
	    "            return s.subs.pop(s.n)\n"
	    "        return dict.get(s, k, d)\n"
	    "r = []\n"
	    "for make, subs in ((lambda: itertools.permutations('abcde', 5), {2: ('a', 'b'), 3: 5, "
	    "4: ((0, 0), (1,) * 5)}),\n"
	    "                   (lambda: itertools.combinations('abc', 1), {2: (), 3: 1, 4: "
	    "(0,)}),\n"
	    "                   (lambda: itertools.combinations_with_replacement('abc', 1), {2: "
	    "(), 3: 1, 4: (0,)})):\n"
	    "    p = make()\n"
	    "    next(p)\n"
	    "    try:\n"
	    "        q = copy.deepcopy(p, M(subs))\n"
	    "        r.append(next(q, None))\n"
	    "    except ValueError as e:\n"
	    "        r.append('refused' if 'yields nothing' in str(e) else str(e))\n"
	    "def dc(x, n=0):\n"
	    "    for _ in range(n):\n"
	    "        next(x)\n"
	    "    return [''.join(t) for t in copy.deepcopy(x)]\n"
	    "r + [dc(itertools.combinations('abcd', 2), 1), dc(itertools.permutations('abc', 2), "
	    "2),\n"
	    "     dc(itertools.combinations_with_replacement('abc', 2), 1), "
	    "dc(itertools.combinations('ab', 3)),\n"
	    "     dc(itertools.permutations('ab', 3)), "
	    "dc(itertools.combinations_with_replacement('', 2)),\n"
	    "     dc(itertools.permutations('abcd', 3), 5)[:3], dc(itertools.product('ab', 'cd'), "
	    "1)]",
	    "[[\"a\",\"b\",\"c\",\"e\",\"d\"],[\"b\"],[\"b\"],[\"ac\",\"ad\",\"bc\",\"bd\",\"cd\"],"
	    "[\"ba\","
	    "\"bc\",\"ca\",\"cb\"],[\"ab\",\"ac\",\"bb\",\"bc\",\"cc\"],[],[],[],[\"adc\",\"bac\","
	    "\"bad\"],[\"ad\",\"bc\",\"bd\"]]");
	still_serving();
	stop();
}

/* io's buffered streams handed their raw stream a memoryview of their own buffer to read into
 * (and one to write from), which a raw stream of the user's kept: after the buffered stream was
 * gone it was a writable view of freed memory (a bytearray's header put there: any memory, the
 * real builtins and sys.modules). A buffered stream's raw stream now gets copies: what it keeps
 * is its own bytearray or bytes, and the streams read and write as before. A buffered stream
 * is initialised once (again, from its raw stream's read, it freed the buffer the read then
 * copied into: any memory). */
Test(python_layer, a_buffered_stream_hands_out_no_view_of_its_buffer)
{
	start(NULL);
	expect_ok_result(
	    "import io\n"
	    "keep = []\n"
	    "class R(io.RawIOBase):\n"
	    "    def readable(self):\n"
	    "        return True\n"
	    "    def writable(self):\n"
	    "        return True\n"
	    "    def readinto(self, b):\n"
	    "        keep.append(b)\n"
	    "        b[:3] = b'abc'\n"
	    "        return 3\n"
	    "    def write(self, b):\n"
	    "        keep.append(b)\n"
	    "        return len(b)\n"
	    "r = io.BufferedReader(R(), buffer_size=56)\n"
	    "got = r.read(3)\n"
	    "del r\n"
	    "w = io.BufferedWriter(R(), buffer_size=56)\n"
	    "w.write(b'xyz')\n"
	    "w.flush()\n"
	    "del w\n"
	    "class S(io.BufferedReader):\n"
	    "    def __init__(self, raw):\n"
	    "        super().__init__(raw, 56)\n"
	    "s = S(R())\n"
	    "s.read(2)\n"
	    "del s\n"
	    "b = io.BufferedReader(io.BytesIO(b'hello world'))\n"
	    "rw = io.BufferedRandom(io.BytesIO(b'0123456789'))\n"
	    "rw.seek(4)\n"
	    "rw.write(b'xy')\n"
	    "rw.seek(0)\n"
	    "t = io.TextIOWrapper(io.BufferedReader(io.BytesIO('é\\nz'.encode())), "
	    "encoding='utf-8')\n"
	    "class Q(io.RawIOBase):\n"
	    "    why = None\n"
	    "    def readable(self):\n"
	    "        return True\n"
	    "    def read(self, size=-1):\n"
	    "        try:\n"
	    "            q_reader.__init__(io.BytesIO(b''), 16)\n"
	    "        except ValueError as e:\n"
	    "            Q.why = 'refused' if 'once' in str(e) else str(e)\n"
	    "        return b'q'\n"
	    "q_reader = io.BufferedReader(Q(), 56)\n"
	    "q_got = q_reader.read(1)\n"
	    "[got.decode(), sorted({type(k).__name__ for k in keep}), b.read(5).decode(),\n"
	    " b.read().decode(), rw.read().decode(), t.readline(), t.read(), Q.why, "
	    "q_got.decode()]",
	    "[\"abc\",[\"bytearray\",\"bytes\"],\"hello\",\" world\",\"0123xy6789\",\"é\\n\",\"z\","
	    "\"refused\",\"q\"]");
	still_serving();
	stop();
}

/* A real module a library hands out is read by the user's code as its proxy: every way of
 * reading an attribute by name meets the proxy's rules, and no way changes the module. With
 * multiprocessing allowed, a context's reducer is the real multiprocessing.reduction, which
 * holds the real os (old build: every read below gave it). */
Test(python_layer, a_real_module_a_library_hands_out_reads_as_its_proxy)
{
	static const char lead[] = "import multiprocessing, operator, string, functools\n"
	                           "r = multiprocessing.get_context().reducer\n"
	                           "AG = type(operator.attrgetter('x'))\n"
	                           "MC = type(operator.methodcaller('x'))\n";
	static const char *const reads[] = {
	    "r.os",
	    "getattr(r, 'os')",
	    "AG('os')(r)",
	    "MC('__getattribute__', 'os')(r)",
	    "'{0.os}'.format(r)",
	    "'{m.os}'.format_map({'m': r})",
	    "string.Formatter().get_field('0.os', [r], {})",
	    "string.Formatter.mro()[1].get_field(string.Formatter(), '0.os', [r], {})",
	    "AG('__getattribute__')(type(r))(r, 'os')",
	    "AG('__getattribute__')(type(r).mro()[1])(r, 'os')",
	    "AG('__getattribute__')(object)(r, 'os')",
	    "AG('__getattribute__')(super(type(r), r))('os')",
	    "list(map(AG('os'), [r]))",
	    "sorted([r], key=AG('os'))",
	    /* a getter the user made, called by a library's frame */
	    "functools.singledispatch(operator.attrgetter('os'))(r)",
	    "functools.singledispatch(AG('os'))(r)",
	    "functools.singledispatch(AG('__getattribute__')(type(r)))(r, 'os')",
	    /* a Formatter's vformat (a library frame) asks for the field */
	    "type('F', (string.Formatter,), {'format_field': lambda s, v, f: str(v)})()"
	    ".format('{0.os}', r)",
	};
	static const char *const changes[] = {
	    "r.ForkingPickler = print",
	    "setattr(r, 'ForkingPickler', print)",
	    "AG('__setattr__')(type(r))(r, 'ForkingPickler', print)",
	    "AG('__delattr__')(type(r))(r, 'ForkingPickler')",
	    "del r.ForkingPickler",
	    "functools.singledispatch(AG('__setattr__')(type(r)))(r, 'ForkingPickler', print)",
	    "functools.update_wrapper(r, type('S', (), {'ForkingPickler': print}),\n"
	    "                         assigned=('ForkingPickler',), updated=())",
	};

	start(ARGS("--allow-import", "multiprocessing"));
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		refused(e2e_fmt("%s%s", lead, reads[i]), &NO_ATTRIBUTE("os"));
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
		refused(e2e_fmt("%s%s", lead, changes[i]),
		        &(struct e2e_refusal){"error", "AttributeError", "library's own"});
	refused(e2e_fmt("%sAG('__setattr__')(object)(r, 'ForkingPickler', print)", lead),
	        &(struct e2e_refusal){"error", "TypeError", "can't apply this __setattr__"});
	/* What the proxy gives stays readable; the module is unchanged; a class pattern finds
	 * no os; the library still uses its module. */
	expect_ok_result(e2e_fmt("%sdef find(m):\n"
	                         "    match m:\n"
	                         "        case object(os=x):\n"
	                         "            return x\n"
	                         "got = {}\n"
	                         "class W:\n"
	                         "    def __setattr__(self, k, v):\n"
	                         "        got[k] = v\n"
	                         "functools.update_wrapper(W(), r, assigned=('os', 'sys'), "
	                         "updated=())\n"
	                         "[hasattr(r, 'os') or 'os' in got, r.ForkingPickler is "
	                         "multiprocessing.reduction.ForkingPickler,\n"
	                         " r.ForkingPickler is not print, find(r),\n"
	                         " repr(r).startswith(\"<module 'multiprocessing.reduction'\")]",
	                         lead),
	                 "[false,true,true,null,true]");
	still_serving();
	stop();
}

Test(python_layer, from_imports_give_proxies_only)
{
	start(NULL);
	/* IMPORT_FROM looked in sys.modules when the proxy had no such attribute. */
	refused("from re import _compiler\n_compiler",
	        &(struct e2e_refusal){"error", "ImportError",
	                              "cannot import name '_compiler' from 're'"});
	/* A module a module holds is the proxy of an allowed one, with no more than its own. */
	refused("from json import decoder\ndecoder.re.enum.sys.modules['os']",
	        &NO_ATTRIBUTE("modules"));
	/* Even with an __import__ of the user's, whose module claims to be re. */
	refused("__builtins__['__import__'] = lambda *a, **k: type('F', (), {'__name__': 're'})()\n"
	        "from re import _compiler\n_compiler",
	        &(struct e2e_refusal){"error", "ImportError",
	                              "cannot import name '_compiler' from 're'"});
	still_serving();
	stop();
	start(NULL);
	refused("import collections.abc as c\nc._sys", &NO_ATTRIBUTE("_sys"));
	/* Controls: allowed submodules come as proxies, in every form of import. */
	expect_ok_result(
	    "from json import decoder\nimport json.decoder as jd\nimport collections.abc\n"
	    "from collections import abc\nfrom collections.abc import Mapping\n"
	    "[decoder is jd, decoder.JSONDecoder.__name__, collections.abc is abc, "
	    "Mapping.__name__, 're' in dir(decoder)]",
	    "[true,\"JSONDecoder\",true,\"Mapping\",false]");
	still_serving();
	stop();
}

Test(python_layer, deleting_builtins_gives_nothing_real)
{
	start(NULL);
	/* With no __builtins__ in the namespace CPython ran the next code with the real ones;
	 * the name is neither deleted nor assigned (the whole program refused). */
	refused("del __builtins__\nopen('/etc/passwd')", &BUILTINS_KEPT);
	refused("exec", &NOT_DEFINED("exec"));
	refused("__builtins__ = {}\nx = 1", &BUILTINS_KEPT);
	refused("x", &NOT_DEFINED("x"));
	refused("compile", &NOT_DEFINED("compile"));
	/* Control: the builtins the user has are back. */
	expect_ok_result("len('abc')", "3");
	still_serving();
	stop();
}

Test(python_layer, the_warm_up_runs_no_user_code)
{
	json_object *r;

	start(NULL);
	/* The session's next runner warms up in a fork of its state; the warm-up used the
	 * builtins the user's code can change, unarmed. */
	r = run("hits = []\nreal_range = range\ndef r(*a):\n    hits.append(1)\n"
	        "    return real_range(*a)\n__builtins__['range'] = r\nlen(hits)");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	/* Time for the next runner to be forked and warmed up before the call comes. */
	usleep(700 * 1000);
	expect_ok_result("len(hits)", "0");
	/* Control: the replaced range counts when the user's code calls it. */
	expect_ok_result("list(range(2))\nlen(hits)", "1");
	stop();
}

Test(python_layer, user_code_after_the_call_runs_armed)
{
	/* __str__ of the error, __repr__ of the result and finalizers used to run with the hook
	 * disarmed. Each tries the real attrgetter on a library function. */
	static const char *const probe =
	    REAL_GETTERS "import json\n"
	                 "def probe():\n    try:\n        A('__glo' + 'bals__')(json.dumps)\n"
	                 "        return 'escaped'\n    except AttributeError:\n"
	                 "        return 'refused'\n";
	json_object *r;

	start(NULL);
	r = run(e2e_fmt("%sclass E(Exception):\n    def __str__(self):\n        return probe()\n"
	                "raise E()",
	                probe));
	cr_assert_str_eq(mcpc_status(r), "error", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_err_str(r, "message"), "refused", "%s", mcpc_json(r));
	r = run(e2e_fmt("%sclass V:\n    def __repr__(self):\n        return probe()\nV()", probe));
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "refused", "%s", mcpc_json(r));
	r = run(e2e_fmt("%sclass D:\n    def __del__(self):\n        print(probe())\nD()", probe));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "refused\n",
	                 "the finalizer did not run in the call, or ran unarmed: %s", mcpc_json(r));
	still_serving();
	stop();
}

Test(python_layer, reflective_modules_cannot_be_allowed)
{
	/* importlib itself, its util and metadata are the worker's own modules (allowed); the
	 * real ones' other submodules are not. */
	static const char *const mods[] = {"builtins",      "importlib.machinery",
	                                   "importlib.abc", "inspect",
	                                   "runpy",         "ctypes",
	                                   "_thread",       "pkgutil"};

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		char *out, *err;
		int st = run_safepy(ARGS("run", "--allow-import", mods[i], "-c", "1"), &out, &err);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "%s: status 0x%x", mods[i], st);
		cr_assert(strstr(err, e2e_fmt("--allow-import %s: not allowed", mods[i])), "%s: %s",
		          mods[i], err);
		free(out);
		free(err);
	}
	/* Control: with the Python layer off there is no allowlist to keep, and an ordinary
	 * module is accepted. */
	for (int unsafe = 0; unsafe < 2; unsafe++) {
		char *out, *err;
		int st = unsafe ? run_safepy(ARGS("run", "--unsafe-no-python-layer",
		                                  "--allow-import", "importlib", "-c", "6*7"),
		                             &out, &err)
		                : run_safepy(ARGS("run", "--allow-import", "plistlib", "-c", "6*7"),
		                             &out, &err);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x: %s", st, err);
		cr_assert(strstr(out, "42"), "%s", out);
		free(out);
		free(err);
	}
}

Test(python_layer, base_exception_cannot_dodge_limits)
{
	json_object *r;

	start(ARGS("--timeout", "2"));
	r = run("while True:\n    try:\n        while True:\n            pass\n"
	        "    except BaseException:\n        pass");
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	r = run("while True:\n    try:\n        x = 'a' * 10**10\n    except BaseException:\n"
	        "        pass");
	cr_assert(!strcmp(mcpc_status(r), "timeout") || !strcmp(mcpc_status(r), "memory_limit"),
	          "%s", mcpc_json(r));
	r = run("class E(Exception):\n    def __str__(self):\n        while True:\n"
	        "            pass\nraise E()");
	cr_assert_str_eq(mcpc_status(r), "timeout", "%s", mcpc_json(r));
	r = run("class E(Exception):\n    def __str__(self):\n        raise SystemExit(9)\n"
	        "raise E()");
	cr_assert(e2e_is_error(r), "%s", mcpc_json(r));
	r = run("def g():\n    try:\n        yield 1\n    finally:\n        raise SystemExit\n"
	        "it = g()\nnext(it)\ndel it\n'after'");
	cr_assert_neq(strcmp(mcpc_status(r), "crashed"), 0, "%s", mcpc_json(r));
	still_serving();
	stop();
}

/* The sqlite3 module's connection was closed (or initialised again) by user code that ran
 * while one of its statements was in progress outside the counted callbacks: the __del__ of a
 * function's result (the progress handler then ran with its freed context: a forged call, a
 * full escape), executemany's iterator between rows, a parameter sequence's __getitem__ or a
 * parameter's __conform__ while binding (a closed database handed to SQLite: a crash). Those
 * calls are now refused with ProgrammingError while a statement of the connection runs; the
 * statement finishes, and ordinary use (closing after a statement, even with a row pending;
 * executemany from a generator; callbacks; closing another connection) is unchanged. (The
 * result's __del__ is deferred to the next frame of the code's: the progress handler's, a
 * callback of the connection's.) */
Test(python_layer, sqlite_connection_cannot_be_closed_while_its_statement_runs)
{
	const char *msg = "\"close() is not allowed while a statement of the connection runs\"";
	const char *in_cb = "\"close() is not allowed from within one of the connection's "
	                    "callbacks\"";

	start(NULL);
	expect_ok_result("import sqlite3\nc = sqlite3.connect(':memory:')\nerrs = []\n"
	                 "class R(int):\n    def __del__(self):\n        try:\n"
	                 "            c.close()\n"
	                 "        except sqlite3.ProgrammingError as e:\n"
	                 "            errs.append(str(e))\n"
	                 "c.create_function('f', 0, lambda: R(5))\n"
	                 "c.set_progress_handler(lambda: 0, 1)\n"
	                 "rows = c.execute('with recursive r(i) as (select 1 union all select i+1 "
	                 "from r where i<1000) select f(), count(*) from r').fetchall()\n"
	                 "[rows, errs[:1], c.execute('select 1').fetchone()]",
	                 e2e_fmt("[[[5,1000]],[%s],[1]]", in_cb));
	expect_ok_result("import sqlite3\nc = sqlite3.connect(':memory:')\n"
	                 "c.execute('create table t(x)')\nout = []\n"
	                 "def gen():\n    yield (1,)\n    c.close()\n    yield (2,)\n"
	                 "class P:\n    def __len__(self):\n        return 1\n"
	                 "    def __getitem__(self, i):\n        c.close()\n        return 1\n"
	                 "class V:\n    def __conform__(self, proto):\n        c.close()\n"
	                 "        return 1\n"
	                 "for f in (lambda: c.executemany('insert into t values(?)', gen()),\n"
	                 "          lambda: c.execute('insert into t values(?)', P()),\n"
	                 "          lambda: c.execute('insert into t values(?)', (V(),))):\n"
	                 "    try:\n        f()\n    except sqlite3.ProgrammingError as e:\n"
	                 "        out.append(str(e))\n"
	                 "[out, c.execute('select x from t').fetchall()]",
	                 e2e_fmt("[[%s,%s,%s],[[1]]]", msg, msg, msg));
	expect_ok_result("import sqlite3\nc = sqlite3.connect(':memory:')\n"
	                 "c.execute('create table t(x)')\n"
	                 "c.executemany('insert into t values(?)', ((i,) for i in range(3)))\n"
	                 "c.create_function('f', 1, lambda x: x * 2)\n"
	                 "c.set_progress_handler(lambda: 0, 1)\n"
	                 "c.set_trace_callback(lambda s: None)\n"
	                 "c2 = sqlite3.connect(':memory:')\n"
	                 "def other():\n    c2.close()\n    yield (9,)\n"
	                 "c.executemany('insert into t values(?)', other())\n"
	                 "class S(sqlite3.Cursor):\n"
	                 "    def __next__(self):\n        return super().__next__()\n"
	                 "a = [r[0] for r in c.execute('select f(x) from t')]\n"
	                 "b = list(c.cursor(S).execute('select x from t'))\n"
	                 "cur = c.execute('select x from t')\nfirst = cur.fetchone()\n"
	                 "c.close()\n[a, [r[0] for r in b], first]",
	                 "[[0,2,4,18],[0,1,2,9],[0]]");
	still_serving();
	stop();
}

Test(python_layer, resource_bombs_are_contained)
{
	int n;
	json_object *r;

	start(ARGS("--timeout", "10"));
	n = steady_in_use();
	refused("import os\nwhile True:\n    os.fork()", &E2E_IMPORT);
	refused("import threading\nwhile True:\n    threading.Thread(target=lambda: 1).start()",
	        &E2E_IMPORT);
	refused("b = bytearray(2**34)", &MEMORY_LIMIT);
	refused("def f(n):\n    return f(n + 1) + 1\nf(0)", &RECURSION);
	/* A deeply nested result must not crash the worker's serialiser. */
	r = run("x = []\nfor i in range(100000):\n    x = [x]\nx");
	cr_assert_str_neq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
	r = run("d = {}\nfor i in range(100000):\n    d = {'k': d}\nd");
	cr_assert_str_neq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
	back_to(n, 3000);
	still_serving();
	stop();
}

/* ---- Kernel layer alone (--unsafe-no-python-layer) ------------------------------------------ */

Test(kernel, python_layer_is_really_off)
{
	/* Otherwise the kernel tests below would prove nothing. */
	start_unsafe();
	expect_ok_result("import os, socket, ctypes, subprocess\n"
	                 "[type(os.getpid()).__name__, (1).__class__.__name__, "
	                 "callable(open), callable(__import__)]",
	                 "[\"int\",\"int\",true,true]");
	still_serving();
	stop();
}

Test(kernel, files_cannot_be_read)
{
	start_unsafe();
	refused("open('/etc/passwd').read()", &E2E_EACCES);
	refused(e2e_fmt("open('%s').read()", secret_path), &E2E_EACCES);
	refused(e2e_fmt("import os\nos.read(os.open('%s', os.O_RDONLY), 100)", secret_path),
	        &E2E_EACCES);
	refused("import os\nos.listdir('/')", &E2E_EACCES);
	refused(e2e_fmt("import os\nos.listdir('%s')", tmpdir), &E2E_EACCES);
	refused(e2e_fmt("import os\nos.stat('%s')", secret_path), &E2E_EACCES);
	/* Raw syscalls get the same answer: openat(AT_FDCWD, path, O_RDONLY) fails with EACCES. */
	expect_ok_result(
	    e2e_fmt("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
	            "fd = libc.syscall(257, -100, b'%s', 0)\nerr = ctypes.get_errno()\n"
	            "buf = ctypes.create_string_buffer(100)\n"
	            "n = libc.read(fd, buf, 100) if fd >= 0 else -1\n[fd, err, n]",
	            secret_path),
	    "[-1,13,-1]");
	still_serving();
	stop();
}

Test(kernel, files_cannot_be_written)
{
	char sub[160];
	struct stat st;

	start_unsafe();
	refused(e2e_fmt("open('%s', 'w').write('x')", marker_path), &E2E_EACCES);
	refused(e2e_fmt("import os\nos.open('%s', os.O_WRONLY | os.O_CREAT)", marker_path),
	        &E2E_EACCES);
	killed(e2e_fmt("import os\nos.mkdir('%s/d')", tmpdir), "mkdir|mkdirat");
	killed(e2e_fmt("import os\nos.unlink('%s')", secret_path), "unlink|unlinkat");
	killed(e2e_fmt("import os\nos.rename('%s', '%s')", secret_path, marker_path),
	       "rename|renameat|renameat2");
	killed(e2e_fmt("import os\nos.chmod('%s', 0o777)", secret_path),
	       "chmod|fchmodat|fchmodat2");
	killed(e2e_fmt("import os\nos.symlink('/etc/passwd', '%s')", marker_path),
	       "symlink|symlinkat");
	snprintf(sub, sizeof(sub), "%s/d", tmpdir);
	cr_assert_neq(stat(sub, &st), 0, "a directory was created");
	cr_assert_eq(stat(secret_path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644, "the secret's mode changed");
	still_serving();
	stop();
}

Test(kernel, processes_cannot_be_created)
{
	int n;
	const char *spawn = "clone|fork|vfork|execve|clone3|pipe2|pipe";

	start_unsafe();
	n = steady_in_use();
	killed(e2e_fmt("import os\nos.system('touch %s')", marker_path), spawn);
	killed(e2e_fmt("import subprocess\nsubprocess.run(['touch', '%s'])", marker_path), spawn);
	/* A fork the supervisor did not ask for: the fork gate refuses it with EPERM. */
	refused(
	    e2e_fmt("import os\npid = os.fork()\nif pid == 0:\n    open('%s', 'w')\n", marker_path),
	    &E2E_EPERM);
	killed(e2e_fmt("import os\nos.execv('/bin/sh', ['sh', '-c', 'touch %s'])", marker_path),
	       "execve");
	killed(e2e_fmt("import os\nos.posix_spawn('/bin/touch', ['touch', '%s'], {})", marker_path),
	       spawn);
	refused("import os\nwhile True:\n    os.fork()", &E2E_EPERM);
	/* Retried without end (a refusal is a notification the loop answers: 20000 a second kept
	 * half a core busy): past 256 the call ends. */
	refused(
	    "import os\nfor i in range(5000):\n    try:\n        os.fork()\n"
	    "    except OSError:\n        pass\n'all refused'",
	    &(const struct e2e_refusal){"crashed", "SandboxError",
	                                "The code tried to start a process more than 256 times"});
	back_to(n, 3000);
	still_serving();
	stop();
}

/* A listener on 127.0.0.1 and on a unix socket that the sandbox must never reach. */
static int listen_tcp(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	cr_assert_geq(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 8), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	cr_assert_geq(fd, 0);
	cr_assert_lt(strlen(path), sizeof(a.sun_path));
	memcpy(a.sun_path, path, strlen(path) + 1);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	chmod(path, 0777);
	cr_assert_eq(listen(fd, 8), 0);
	return fd;
}

static int got_connection(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, 200) > 0;
}

Test(kernel, network_is_unreachable)
{
	int port, tfd, ufd;
	char upath[160];

	start_unsafe();
	tfd = listen_tcp(&port);
	snprintf(upath, sizeof(upath), "%s/sock", tmpdir);
	ufd = listen_unix(upath);
	killed("import socket\nsocket.socket()", "socket");
	killed(e2e_fmt("import socket\ns = socket.create_connection(('127.0.0.1', %d))\n"
	               "s.sendall(b'hello')",
	               port),
	       "socket");
	killed(e2e_fmt("import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('%s')", upath),
	       "socket");
	killed("import socket\nsocket.socketpair()", "socketpair");
	killed("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.syscall(41, 2, 1, 0)", "socket");
	cr_assert_not(got_connection(tfd), "the TCP listener got a connection");
	cr_assert_not(got_connection(ufd), "the unix listener got a connection");
	close(tfd);
	close(ufd);
	unlink(upath);
	still_serving();
	stop();
}

Test(kernel, other_processes_cannot_be_signalled)
{
	start_unsafe();
	killed("import os\nos.kill(os.getppid(), 9)", "kill");
	killed(e2e_fmt("import os\nos.kill(%d, 9)", (int)e2e_srv.pid), "kill");
	killed(e2e_fmt("import os\nos.kill(%d, 9)", (int)getpid()), "kill");
	killed("import os\nos.kill(-1, 9)", "kill");
	killed("import os\nos.killpg(0, 9)", "kill");
	killed(e2e_fmt("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.syscall(234, %d, %d, 9)",
	               (int)e2e_srv.pid, (int)e2e_srv.pid),
	       "tgkill");
	cr_assert(mcpc_alive(&e2e_srv), "the server was killed");
	still_serving();
	stop();
}

Test(kernel, dangerous_raw_syscalls_kill_the_worker)
{
	static const struct {
		const char *call;
		const char *name;
	} calls[] = {
	    {"libc.syscall(57)", "fork"},
	    {"libc.syscall(58)", "vfork"},
	    {"libc.syscall(56, 17, 0, 0, 0, 0)", "clone"},
	    {"libc.syscall(59, b'/bin/true', None, None)", "execve"},
	    {"libc.syscall(101, 16, os.getppid(), 0, 0)", "ptrace"},
	    {"libc.syscall(310, os.getppid(), 0, 1, 0, 1, 0)", "process_vm_readv"},
	    {"libc.syscall(319, b'x', 0)", "memfd_create"},
	    {"libc.syscall(425, 8, 0)", "io_uring_setup"},
	    {"libc.syscall(321, 0, 0, 0)", "bpf"},
	    {"libc.syscall(323, 0)", "userfaultfd"},
	    {"libc.syscall(272, 0x10000000)", "unshare"},
	    {"libc.syscall(135, 0x0400000)", "personality"},
	    {"libc.syscall(157, 4, 1, 0, 0, 0)", "prctl"},
	    {"libc.syscall(250, 0, 0, 0, 0, 0)", "keyctl"},
	    {"libc.syscall(298, 0, 0, -1, -1, 0)", "perf_event_open"},
	    {"libc.syscall(165, b'none', b'/tmp', b'tmpfs', 0, None)", "mount"},
	    {"libc.syscall(105, 0)", "setuid"},
	    {"libc.syscall(16, 0, 0x5412, 0)", "ioctl"},
	};

	start_unsafe();
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const char *code =
		    e2e_fmt("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
		            "r = %s\n[r, ctypes.get_errno()]",
		            calls[i].call);

		if (!strcmp(calls[i].name, "ioctl")) {
			/* ioctl answers ENOTTY by design (isatty probes); TIOCSTI must not pass. */
			expect_ok_result(code, "[-1,25]");
			continue;
		}
		killed(code, calls[i].name);
	}
	still_serving();
	stop();
}

Test(kernel, no_executable_memory)
{
	start_unsafe();
	killed("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.mmap.restype = ctypes.c_void_p\n"
	       "libc.mmap(None, 4096, 7, 0x22, -1, 0)",
	       "mmap");
	killed("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.mmap.restype = ctypes.c_void_p\n"
	       "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, "
	       "ctypes.c_int, ctypes.c_int, ctypes.c_long]\n"
	       "p = libc.mmap(None, 4096, 3, 0x22, -1, 0)\n"
	       "libc.mprotect(ctypes.c_void_p(p), 4096, 5)",
	       "mprotect");
	/* Address space is bounded for raw mmap too. */
	expect_ok_result("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.mmap.restype = "
	                 "ctypes.c_void_p\n"
	                 "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, "
	                 "ctypes.c_int, ctypes.c_int, ctypes.c_long]\n"
	                 "libc.mmap(None, 1 << 40, 3, 0x22, -1, 0) == ctypes.c_void_p(-1).value",
	                 "true");
	still_serving();
	stop();
}

Test(kernel, server_stdout_stays_clean)
{
	/* The worker's own stdout and stderr take the bytes as output; fd 0 kills it; fds above
	 * the channel are workspace files it was given (none here): EBADF, nothing written. */
	static const struct {
		const char *code;
		int killed;
	} writes[] = {
	    {"import os\nos.write(1, FORGED)", 0},
	    {"import os\nos.write(2, FORGED)", 0},
	    {"import os\nos.write(0, FORGED)", 1},
	    {"import ctypes\nctypes.CDLL(None).write(1, FORGED, len(FORGED))", 0},
	    {"import sys\nsys.__stdout__.write(FORGED.decode())\nsys.__stdout__.flush()", 0},
	    {"import os, errno\nbad = []\nfor fd in range(4, 64):\n    try:\n"
	     "        os.write(fd, FORGED)\n        bad.append(fd)\n"
	     "    except OSError as e:\n        bad += [] if e.errno == errno.EBADF else [fd]\n"
	     "assert bad == [], bad",
	     0},
	};
	json_object *id = json_object_new_int(999999);

	start_unsafe();
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		const char *code =
		    e2e_fmt("FORGED = b'NOT-JSON\\n{\"jsonrpc\":\"2.0\",\"id\":999999,"
		            "\"result\":{}}\\n'\n%s",
		            writes[i].code);

		if (writes[i].killed)
			killed(code, "write");
		else
			cr_assert_str_eq(mcpc_status(run(code)), "ok", "write %zu", i);
	}
	still_serving();
	cr_assert_not(mcpc_seen_id(&e2e_srv, id, 500), "a worker forged a message on stdout");
	json_object_put(id);
	cr_assert_eq(e2e_srv.bad_lines, 0, "worker bytes reached stdout: %s", e2e_srv.first_bad);
	stop();
}

Test(kernel, forged_result_frames_are_rejected)
{
	/* A frame the supervisor cannot take breaks the protocol: the worker is killed and its
	 * call crashed; a worker that ends without a whole frame has crashed too. */
	static const struct e2e_refusal malformed = {"crashed", "SandboxError",
	                                             "broke the protocol"};
	static const struct e2e_refusal no_result = {"crashed", "SandboxError", "without a result"};
	static const struct {
		const char *code;
		const struct e2e_refusal *want;
	} frames[] = {
	    /* a length far beyond any limit */
	    {"os.write(3, b'\\xff\\xff\\xff\\xffJ')\nos._exit(0)", &malformed},
	    /* a result frame that is neither this call's nor JSON */
	    {"os.write(3, b'\\x06\\x00\\x00\\x00J{nope!')\nos._exit(0)", &malformed},
	    /* a frame cut short */
	    {"os.write(3, b'\\x00\\x01\\x00\\x00J{\"status\":')\nos._exit(0)", &no_result},
	    /* an unknown frame type */
	    {"os.write(3, b'\\x02\\x00\\x00\\x00Qxy')\nos._exit(0)", &malformed},
	    /* valid-looking JSON with wrong types */
	    {"import json\np = (1).to_bytes(4, 'little') + json.dumps({'status': 7, 'stdout': "
	     "['x'], 'result': {'a': [1] * 3}}).encode()\nos.write(3, len(p).to_bytes(4, "
	     "'little') + b'J' + p)\nos._exit(0)",
	     &malformed},
	};

	start_unsafe();
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		refused(e2e_fmt("import os\n%s", frames[i].code), frames[i].want);
		still_serving();
	}
	stop();
}

Test(kernel, environment_secrets_are_absent)
{
	json_object *r;

	start_unsafe();
	r = run("import os\nsorted(os.environ.keys())");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_json(r), "SAFEPY_TEST_SECRET"), "%s", mcpc_json(r));
	expect_ok_result("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.getenv.restype = "
	                 "ctypes.c_char_p\nlibc.getenv(b'SAFEPY_TEST_SECRET')",
	                 "null");
	refused("open('/proc/self/environ', 'rb').read()", &E2E_EACCES);
	refused("import os\nopen('/proc/{}/environ'.format(os.getppid()), 'rb').read()",
	        &E2E_EACCES);
	refused(e2e_fmt("open('/proc/%d/environ', 'rb').read()", (int)e2e_srv.pid), &E2E_EACCES);
	refused(e2e_fmt("open('/proc/%d/cmdline', 'rb').read()", (int)e2e_srv.pid), &E2E_EACCES);
	refused(e2e_fmt("open('/proc/%d/mem', 'rb').read()", (int)e2e_srv.pid), &E2E_EACCES);
	still_serving();
	stop();
}

Test(kernel, thread_bomb_and_memory_are_bounded)
{
	int n;

	start(ARGS(UNSAFE_ARGS, "--timeout", "10"));
	n = steady_in_use();
	/* (stacks of 1 MiB: 8 MiB ones fill the address space near the task limit, where a
	 * thread may fail in its start-up, after its stack, and its starter wait until the time
	 * limit) */
	refused("import threading, time\nts = []\nthreading.stack_size(1 << 20)\nwhile True:\n"
	        "    t = threading.Thread(target=time.sleep, args=(60,), daemon=True)\n"
	        "    t.start()\n    ts.append(t)",
	        &THREAD_LIMIT);
	refused("b = bytearray(2**34)", &MEMORY_LIMIT);
	back_to(n, 3000);
	still_serving();
	stop();
}

/* Threads do not take the code's memory: glibc gave each new thread a malloc arena of its own,
 * 64 MiB of address space reserved and counted by RLIMIT_AS, so 11 threads of 1 MiB stacks met
 * the 1 GiB of data mode (and 32 threads ran out of 512 MiB before the code allocated
 * anything). The worker keeps one arena: 32 threads that each run Python, then 300 MiB, fit in
 * the default limit. */
Test(kernel, threads_leave_the_memory_limit_to_the_code)
{
	start(ARGS(UNSAFE_ARGS, "--timeout", "20"));
	expect_ok_result("import threading\n"
	                 "threading.stack_size(1 << 20)\n"
	                 "go = threading.Event()\n"
	                 "def w():\n"
	                 "    x = [str(i) for i in range(1000)]\n"
	                 "    go.wait()\n"
	                 "ts = [threading.Thread(target=w, daemon=True) for _ in range(32)]\n"
	                 "for t in ts:\n"
	                 "    t.start()\n"
	                 "b = bytearray(300 << 20)\n"
	                 "go.set()\n"
	                 "for t in ts:\n"
	                 "    t.join()\n"
	                 "len(ts), len(b) >> 20",
	                 "[32, 300]");
	still_serving();
	stop();
}

Test(kernel, forged_code_objects_cannot_hurt_the_server)
{
	json_object *r;

	start_unsafe();
	/* LOAD_CONST with an index far out of range: may crash the worker, never the server. It
	 * runs in a session of its own: if it corrupts the interpreter without crashing, that
	 * state must not carry into the calls below. */
	r = e2e_hold(mcpc_call(&e2e_srv,
	                       "def f():\n    return 1\n"
	                       "c = f.__code__.replace(co_code=bytes([151, 0, 100, 200, 83, 0]))\n"
	                       "type(f)(c, {})()",
	                       "{\"session\":\"new\"}", E2E_CALL_MS));
	cr_assert_not_null(r, "no answer; stderr:\n%s", e2e_log());
	cr_log_info("forged LOAD_CONST: %s", mcpc_status(r));
	still_serving();
	r = run("import ctypes\nctypes.string_at(0)");
	cr_assert_str_eq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
	cr_assert(e2e_is_error(r));
	still_serving();
	stop();
}

Test(kernel, seccomp_alone_contains)
{
	/* Without the optional layers (namespaces, Landlock) the mandatory filter still holds. */
	start(ARGS(UNSAFE_ARGS, "--no-namespaces", "--no-landlock"));
	refused(e2e_fmt("open('%s').read()", secret_path), &E2E_EACCES);
	refused(e2e_fmt("open('%s', 'w')", marker_path), &E2E_EACCES);
	killed("import socket\nsocket.socket()", "socket");
	killed(e2e_fmt("import os\nos.system('touch %s')", marker_path),
	       "clone|fork|vfork|execve|clone3|pipe2|pipe");
	killed("import os\nos.kill(os.getppid(), 9)", "kill");
	still_serving();
	stop();
}

/* io.RawIOBase.read(n) copied as many bytes as the subclass's readinto() said it read, unchecked:
 * 4096 answered for an 8-byte buffer read the heap past it (its pointers), 1 << 27 crashed the
 * worker (SIGBUS). A count outside the buffer is a ValueError, as in later CPython, whatever
 * number the size is (read(True) took CPython's own copy: V69b H1); the buffer is zeroed (a
 * readinto that wrote nothing handed back the heap: V69b L1); ordinary reads answer as on the
 * host. */
Test(python_layer, raw_read_copies_no_more_than_its_buffer)
{
	start(NULL);
	expect_ok_result(
	    "import io\n"
	    "class R(io.RawIOBase):\n"
	    "    def readable(self): return True\n"
	    "    def readinto(self, b): return self.n\n"
	    "class G(io.RawIOBase):\n"
	    "    def __init__(self): self.left = b'abc'\n"
	    "    def readable(self): return True\n"
	    "    def readinto(self, b):\n"
	    "        n = len(self.left); b[:n] = self.left; self.left = b''; return n\n"
	    "out = []\n"
	    "for n in (4096, 1 << 27, -1):\n"
	    "    r = R(); r.n = n\n"
	    "    try: out.append(r.read(8).hex())\n"
	    "    except (ValueError, SystemError) as e: out.append(str(e))\n"
	    "out += [G().read(8).decode(), G().read().decode(), G().read(-1).decode(), "
	    "io.BufferedReader(G()).read().decode(), G().read(0).decode()]\n"
	    "r = R(); r.n = 4096\n"
	    "try: out.append(r.read(True).hex())\n"
	    "except ValueError as e: out.append(str(e))\n"
	    "class Z(io.RawIOBase):\n"
	    "    def readable(self): return True\n"
	    "    def readinto(self, b): return len(b)\n"
	    "out + [sorted(set(Z().read(4096)))]",
	    "[\"readinto returned 4096 outside buffer size 8\",\"readinto returned 134217728 "
	    "outside buffer size 8\",\"readinto returned -1 outside buffer size "
	    "8\",\"abc\",\"abc\",\"abc\",\"abc\",\"abc\",\"readinto returned 4096 outside "
	    "buffer size 1\",[0]]");
	still_serving();
	stop();
}

/* bytes.decode and str(b, encoding) hand a registered codec's decode function a memoryview over
 * the caller's buffer that owns nothing: kept, it read the freed buffer (a list's items: the
 * address of None) for as long as it lived. The decode function gets a bytes copy; registered
 * codecs decode, encode and look up as on the host. */
Test(python_layer, a_codec_keeps_no_view_of_the_callers_buffer)
{
	start(NULL);
	expect_ok_result(
	    "import codecs, struct\n"
	    "kept = []\n"
	    "def dec(b, errors='strict'):\n"
	    "    kept.append(b)\n"
	    "    return (bytes(b).decode('latin-1'), len(b))\n"
	    "def enc(s, errors='strict'):\n"
	    "    return (s.encode('latin-1'), len(s))\n"
	    "codecs.register(lambda n: codecs.CodecInfo(enc, dec, name='keep') if n == 'keep' else "
	    "None)\n"
	    "ba = bytearray(b'A' * 4000)\n"
	    "s = ba.decode('keep')\n"
	    "m = kept[0]\n"
	    "ba.clear()\n"
	    "L = [None] * 490\n"
	    "words = struct.unpack_from('<8Q', m, 0)\n"
	    "[id(None) in words, bytes(m[:4]).decode(), len(s), b'xyz'.decode('keep'), str(b'q', "
	    "'keep'), codecs.decode(b'hi', 'keep'), codecs.encode('ok', 'keep').decode(), "
	    "codecs.lookup('keep').decode is dec, codecs.lookup('keep').name]",
	    "[false,\"AAAA\",4000,\"xyz\",\"q\",\"hi\",\"ok\",true,\"keep\"]");
	still_serving();
	stop();
}

/* bytearray.hex(sep) and memoryview.hex(sep) took the buffer's address, then asked len(sep): a
 * bytes subclass's __len__ that cleared the buffer had the freed block (a bytes object's header)
 * hex-dumped. sep is made an exact str or bytes first, the buffer untouched; separators, their
 * errors and bytes_per_sep answer as on the host. */
Test(python_layer, hex_with_a_separator_reads_no_freed_buffer)
{
	start(NULL);
	expect_ok_result(
	    "keep = []\n"
	    "ba = bytearray(b'A' * 64)\n"
	    "class S(bytes):\n"
	    "    def __len__(self):\n"
	    "        ba.clear()\n"
	    "        keep.extend(bytes(range(47)) for _ in range(8))\n"
	    "        return 1\n"
	    "h1 = ba.hex(S(b':'))\n"
	    "b2 = bytearray(b'B' * 64)\n"
	    "mv = memoryview(b2)\n"
	    "class S2(bytes):\n"
	    "    def __len__(self):\n"
	    "        mv.release()\n"
	    "        b2.clear()\n"
	    "        keep.extend(bytes(range(47)) for _ in range(8))\n"
	    "        return 1\n"
	    "h2 = mv.hex(S2(b':'))\n"
	    "class U(str): pass\n"
	    "out = [h1 == ':'.join(['41'] * 64), len(ba), h2 == ':'.join(['42'] * 64), len(b2)]\n"
	    "out += [b'\\x01\\x02\\x03\\x04\\x05'.hex(':', 2), bytearray(b'abcd').hex(S(b'-')), "
	    "memoryview(b'xyz').hex(U('.'), -1), bytes(3).hex(sep='|'), "
	    "bytearray(2).hex(bytes_per_sep=1, sep=b' ')]\n"
	    "for sep in ['', 'ab', 5, [1]]:\n"
	    "    try: out.append(b'ab'.hex(sep))\n"
	    "    except (ValueError, TypeError) as e: out.append(type(e).__name__ + ': ' + "
	    "str(e))\n"
	    "out",
	    "[true,64,true,64,\"01:0203:0405\",\"61-62-63-64\",\"78.79.7a\",\"00|00|00\",\"00 "
	    "00\",\"ValueError: sep must be length 1.\",\"ValueError: sep must be length "
	    "1.\",\"TypeError: object of type 'int' has no len()\",\"TypeError: sep must be str or "
	    "bytes.\"]");
	still_serving();
	stop();
}

/* TextIOWrapper.tell() kept its snapshot's bytes across the decoder's getstate(): a seek() from
 * there freed them, and the decoder was handed the freed memory (bytes allocated there since:
 * 'ZZZZZ'). While a text stream tells, its seek is refused (RuntimeError); tell, seek, read and
 * truncate of text files answer as on the host. */
Test(python_layer, tell_reads_no_snapshot_freed_by_its_decoder)
{
	start(NULL);
	expect_ok_result(
	    "import codecs, io\n"
	    "armed = False\n"
	    "seen, junk, errs = [], [], []\n"
	    "class D(codecs.IncrementalDecoder):\n"
	    "    def decode(self, b, final=False):\n"
	    "        if armed is None: seen.append(bytes(b))\n"
	    "        return bytes(b).decode('latin-1')\n"
	    "    def getstate(self):\n"
	    "        global armed\n"
	    "        if armed:\n"
	    "            armed = None\n"
	    "            try: w.seek(0)\n"
	    "            except RuntimeError as e: errs.append(str(e))\n"
	    "            junk.extend(bytes(bytearray(b'Z' * n)) for n in range(1990, 2010))\n"
	    "        return (b'', 0)\n"
	    "    def setstate(self, s): pass\n"
	    "codecs.register(lambda n: codecs.CodecInfo(name='d', encode=lambda s, e=0: "
	    "(s.encode('latin-1'), len(s)), decode=lambda b, e=0: (bytes(b).decode('latin-1'), "
	    "len(b)), incrementaldecoder=D) if n == 'd' else None)\n"
	    "w = io.TextIOWrapper(io.BufferedReader(io.BytesIO(b'x' * 4000)), encoding='d', "
	    "newline='')\n"
	    "w._CHUNK_SIZE = 2000\n"
	    "w.read(5)\n"
	    "armed = True\n"
	    "out = [w.tell(), sorted(set(s.decode() for s in seen)), errs, w.read(3)]\n"
	    "f = io.TextIOWrapper(io.BytesIO('h\\u00e9llo\\nw\\u00f6rld\\n'.encode()), "
	    "encoding='utf-8')\n"
	    "a = f.readline()\n"
	    "p = f.tell()\n"
	    "b = f.read()\n"
	    "f.seek(p)\n"
	    "c = f.read(2)\n"
	    "f.seek(0, 2)\n"
	    "out += [ascii(a), p, ascii(b), ascii(c), f.tell()]\n"
	    "g = io.TextIOWrapper(io.BytesIO(), encoding='utf-16')\n"
	    "g.write('ab\\u00e9')\n"
	    "q = g.tell()\n"
	    "g.seek(0)\n"
	    "out += [q, ascii(g.read()), g.truncate(4), g.getvalue() if hasattr(g, 'getvalue') "
	    "else g.buffer.getvalue().hex()]\n"
	    "out",
	    "[5,[\"xxxxx\"],[\"reentrant call inside TextIOWrapper.tell (seek called while the "
	    "same text stream runs "
	    "tell)\"],\"xxx\",\"'h\\\\xe9llo\\\\n'\",7,\"'w\\\\xf6rld\\\\n'\",\"'w\\\\xf6'\",14,8,"
	    "\"'ab\\\\xe9'\",4,\"fffe6100\"]");
	still_serving();
	stop();
}

/* TextIOWrapper.flush() writes what it holds through its buffer, then flushes the buffer: a
 * detach() from inside that write left the buffer NULL that flush called next (SIGSEGV). While
 * a text stream flushes, its detach is refused (RuntimeError), and flushing writes as before. */
Test(python_layer, flush_calls_no_buffer_detached_by_its_write)
{
	start(NULL);
	expect_ok_result(
	    "import io\n"
	    "class Buf(io.RawIOBase):\n"
	    "    def writable(self): return True\n"
	    "    def write(self, b):\n"
	    "        got.append(bytes(b))\n"
	    "        try:\n"
	    "            w.detach()\n"
	    "        except RuntimeError as e:\n"
	    "            errs.append(str(e))\n"
	    "        return len(b)\n"
	    "got, errs = [], []\n"
	    "w = io.TextIOWrapper(Buf(), encoding='utf-8')\n"
	    "w.write('hello')\n"
	    "w.flush()\n"
	    "w.write(' again')\n"
	    "w.flush()\n"
	    "t = io.TextIOWrapper(io.BytesIO(), encoding='utf-8', write_through=False)\n"
	    "t.write('abc'); t.flush()\n"
	    "[[g.decode() for g in got], errs, t.buffer.getvalue().decode()]\n",
	    "[[\"hello\",\" again\"],[\"reentrant call inside TextIOWrapper.flush (detach called "
	    "while the same text stream runs flush)\",\"reentrant call inside TextIOWrapper.flush "
	    "(detach called while the same text stream runs flush)\"],\"abc\"]");
	still_serving();
	stop();
}

/* TextIOWrapper.detach() from inside its buffer's raw read dropped the BufferedReader under its
 * own read: the sandbox's Raw then wrote the raw stream's bytes into the reader's freed buffer
 * (SIGSEGV). Detach of a text stream while it reads, and of a buffered stream while it uses its
 * raw stream, raise RuntimeError and nothing is overwritten; .raw and detach() hand back the
 * user's raw stream, and reads, iteration and detach answer as on the host. */
Test(python_layer, a_stream_is_not_detached_under_its_own_read)
{
	start(NULL);
	expect_ok_result("import io\n"
	                 "victims, errs = [], []\n"
	                 "class RAW(io.RawIOBase):\n"
	                 "    def readable(self): return True\n"
	                 "    def read(self, n=-1):\n"
	                 "        try:\n"
	                 "            tw.detach()\n"
	                 "        except RuntimeError as e:\n"
	                 "            errs.append(str(e).startswith('reentrant call inside "
	                 "TextIOWrapper.read'))\n"
	                 "        victims.extend(bytearray(8191) for _ in range(4))\n"
	                 "        return b'PWNED!' * 10\n"
	                 "tw = io.TextIOWrapper(io.BufferedReader(RAW(), buffer_size=8192), "
	                 "encoding='latin-1')\n"
	                 "out = [tw.read(6), errs, all(not any(v) for v in victims)]\n"
	                 "class RAW2(io.RawIOBase):\n"
	                 "    def __init__(self): self.left = b'0123456789'; self.target = None\n"
	                 "    def readable(self): return True\n"
	                 "    def readinto(self, b):\n"
	                 "        try:\n"
	                 "            if self.target: self.target.detach()\n"
	                 "        except RuntimeError as e:\n"
	                 "            errs.append(str(e).startswith('reentrant call inside a "
	                 "buffered stream'))\n"
	                 "        n = min(len(b), len(self.left)); b[:n] = self.left[:n]; "
	                 "self.left = self.left[n:]\n"
	                 "        return n\n"
	                 "raw = RAW2()\n"
	                 "br = io.BufferedReader(raw, 4)\n"
	                 "raw.target = br\n"
	                 "out += [br.read(3).decode(), br.read().decode(), errs[-1], "
	                 "type(br.raw).__name__, br.raw is raw]\n"
	                 "out.append(br.detach() is raw)\n"
	                 "u = io.TextIOWrapper(io.BufferedReader(RAW2()), encoding='ascii')\n"
	                 "out += [u.readline(), type(u.detach().raw).__name__]\n"
	                 "v = io.TextIOWrapper(io.BytesIO(b'a\\nb\\nc'), encoding='ascii')\n"
	                 "out += [list(v), v.tell()]\n"
	                 "v.seek(0)\n"
	                 "out += [v.readlines(), type(v.detach()).__name__]\n"
	                 "out",
	                 "[\"PWNED!\",[true,true,true,true],true,\"012\",\"3456789\",true,\"RAW2\","
	                 "true,true,\"0123456789\",\"RAW2\",[\"a\\n\",\"b\\n\",\"c\"],5,[\"a\\n\","
	                 "\"b\\n\",\"c\"],\"BytesIO\"]");
	still_serving();
	stop();
}

/* unicode_escape decoding with an error handler went on in the error's copy of its input (or in
 * the object a handler of the user's set on the error); an invalid escape after that was read,
 * for its warning, from the freed copy (CVE-2025-4516; a 300 kB input: SIGSEGV). Such a decode,
 * and one with a handler of the user's that an error reaches, is refused (ValueError); strict
 * decodes, and built-in handlers where no escape it warns of follows the first error, answer
 * as on the host. */
Test(python_layer, unicode_escape_with_a_handler_reads_no_freed_copy)
{
	start(NULL);
	expect_ok_result(
	    "import codecs\n"
	    "out = []\n"
	    "for data in (b'\\\\xZZ' + b'Q' * 300000 + b'\\\\z', b'\\\\xZZ' + b'Q' * 20 + "
	    "b'\\\\z'):\n"
	    "    try:\n"
	    "        out.append(len(data.decode('unicode_escape', 'replace')))\n"
	    "    except ValueError as e:\n"
	    "        out.append('refused in the sandbox' in str(e))\n"
	    "try:\n"
	    "    out.append(len(codecs.unicode_escape_decode(b'\\\\x4' + b'Q' * 300000 + b'\\\\8', "
	    "'ignore')[0]))\n"
	    "except ValueError as e:\n"
	    "    out.append('refused in the sandbox' in str(e))\n"
	    "def h(e):\n"
	    "    e.object = b'\\\\z' + b'Q' * 300000\n"
	    "    return ('', 0)\n"
	    "codecs.register_error('evil', h)\n"
	    "for errors in ('evil', 'replace'):\n"
	    "    try:\n"
	    "        out.append(len(b'\\\\xZZ'.decode('unicode_escape', errors)))\n"
	    "    except ValueError as e:\n"
	    "        out.append('refused in the sandbox' in str(e))\n"
	    "out.append(b'a\\\\n'.decode('unicode_escape', 'evil'))\n"
	    "out += [ascii(b'a\\\\tb\\\\x41\\\\u00e9'.decode('unicode_escape')), "
	    "ascii(b'a\\\\xZZb'.decode('unicode_escape', 'replace')),\n"
	    "        ascii(b'a\\\\xZZb\\\\U0001F600'.decode('unicode_escape', "
	    "'backslashreplace')), ascii(codecs.decode(b'\\\\z\\\\xZZ', 'unicode_escape', "
	    "'ignore')),\n"
	    "        ascii(codecs.unicode_escape_decode(b'x\\\\N{DASH}y', 'replace')), "
	    "ascii(codecs.unicode_escape_decode('x\\\\n', 'ignore', False)),\n"
	    "        ascii(b'a\\\\xZZ\\\\\\\\b'.decode('raw_unicode_escape', 'replace')), "
	    "ascii(codecs.getincrementaldecoder('unicode_escape')('replace').decode(b'"
	    "q\\\\xZZ\\\\n'))]\n"
	    "try:\n"
	    "    b'\\\\xZZ'.decode('unicode_escape')\n"
	    "except UnicodeDecodeError as e:\n"
	    "    out.append(str(e))\n"
	    "out",
	    "[true,true,true,true,3,\"a\\n\",\"'a\\\\tbA\\\\xe9'\",\"'a\\\\ufffdZZb'\",\"'"
	    "a\\\\\\\\x5c\\\\\\\\x78ZZb\\\\U0001f600'\",\"'\\\\\\\\zZZ'\",\"('x\\\\ufffdy', "
	    "10)\",\"('x\\\\n', "
	    "3)\",\"'a\\\\\\\\xZZ\\\\\\\\\\\\\\\\b'\",\"'q\\\\ufffdZZ\\\\n'\",\"'unicodeescape' "
	    "codec can't decode bytes in position 0-1: truncated \\\\xXX escape\"]");
	still_serving();
	stop();
}

/* CPython 3.11's built-in error handlers read the error's object from its start, which it
 * clamps to -1 for an empty object: backslashreplace, xmlcharrefreplace, namereplace,
 * surrogateescape and surrogatepass called with an error over an empty str or bytes subclass read
 * the element before its data, the end of another object's (an array's bytes came back). Such
 * an error is answered with nothing to replace, as later CPythons answer it; the others as on
 * the host. */
Test(python_layer, codec_error_handlers_read_nothing_before_an_empty_object)
{
	start(NULL);
	expect_ok_result(
	    "import array, codecs\n"
	    "class S(str): pass\n"
	    "class B(bytes): pass\n"
	    "seen = set()\n"
	    "for i in range(2000):\n"
	    "    v = array.array('B', [0xAB] * 16); s = S(); b = B()\n"
	    "    for n in ('backslashreplace', 'xmlcharrefreplace', 'namereplace',\n"
	    "              'surrogateescape', 'surrogatepass'):\n"
	    "        seen.add(codecs.lookup_error(n)(UnicodeEncodeError('ascii', s, 0, 1, 'x')))\n"
	    "    for n in ('backslashreplace', 'surrogateescape', 'surrogatepass'):\n"
	    "        seen.add(codecs.lookup_error(n)(UnicodeDecodeError('ascii', b, 0, 1, 'x')))\n"
	    "    seen.add(codecs.backslashreplace_errors(UnicodeTranslateError(s, 0, 1, 'x')))\n"
	    "out = [sorted(seen)]\n"
	    "try:\n"
	    "    codecs.xmlcharrefreplace_errors(UnicodeDecodeError('ascii', b, 0, 1, 'x'))\n"
	    "except TypeError:\n"
	    "    out.append('TypeError')\n"
	    "out.append(codecs.backslashreplace_errors(UnicodeEncodeError('ascii', 'a\\xe9', 1, 2, "
	    "'x')))\n"
	    "out.append(ascii('\\xe9\\u20ac'.encode('ascii', 'namereplace')))\n"
	    "out",
	    "[[[\"\",0]],\"TypeError\",[\"\\\\xe9\",2],"
	    "\"b'\\\\\\\\N{LATIN SMALL LETTER E WITH ACUTE}\\\\\\\\N{EURO SIGN}'\"]");
	still_serving();
	stop();
}

/* CPython 3.11's UTF-16 encoder made room for one code unit for each character an error
 * handler sent it back over, and wrote two for each outside the BMP: a handler answering
 * ('', 0) made it write the text after them past its output, over another bytearray's bytes. An
 * encoder is not sent back before the error (IndexError, as for a position past the end), nor
 * by a handler that set another object on the error the encoder keeps for its next calls (the
 * check then measured that one); a handler that goes on at or after the error works as on the
 * host, and no victim changes. */
Test(python_layer, an_encoder_is_not_sent_back_before_its_error)
{
	start(NULL);
	expect_ok_result(
	    "import codecs\n"
	    "def rewind(exc):\n"
	    "    return ('', 0)\n"
	    "def skip(exc):\n"
	    "    return ('?', exc.end)\n"
	    "def from_end(exc):\n"
	    "    return ('<%d>' % exc.start, -1)\n"
	    "codecs.register_error('rewind', rewind)\n"
	    "codecs.register_error('skip', skip)\n"
	    "codecs.register_error('from_end', from_end)\n"
	    "s = '\\U0001F600' * 24 + 'PWNED-by-utf16!!' + '\\ud800'\n"
	    "victims = [bytearray(b'V' * 250) for i in range(400)]\n"
	    "out = []\n"
	    "for hole in range(100, 300, 10):\n"
	    "    del victims[hole][:]\n"
	    "    for enc in ('utf-16-le', 'utf-16', 'utf-16-be'):\n"
	    "        try:\n"
	    "            s.encode(enc, 'rewind')\n"
	    "            out.append('encoded')\n"
	    "        except IndexError as e:\n"
	    "            out.append('does not go back' in str(e))\n"
	    "out = sorted(set(out))\n"
	    "out.append(sum(1 for v in victims if v and v != b'V' * 250))\n"
	    "out.append(ascii('a\\ud800b'.encode('utf-16-le', 'skip')))\n"
	    "out.append(ascii('a\\xe9bc'.encode('ascii', 'from_end')))\n"
	    "calls = [0]\n"
	    "def swap(exc):\n"
	    "    calls[0] += 1\n"
	    "    if calls[0] == 1:\n"
	    "        exc.object = 'x' * 10**6\n"
	    "        return ('', exc.start)\n"
	    "    return ('', 1 - len(s))\n"
	    "codecs.register_error('swap', swap)\n"
	    "try:\n"
	    "    (s + '\\ud800').encode('utf-16-le', 'swap')\n"
	    "    out.append('encoded')\n"
	    "except TypeError as e:\n"
	    "    out.append(str(e)[-84:-1])\n"
	    "out.append(sum(1 for v in victims if v and v != b'V' * 250))\n"
	    "out",
	    "[true,0,\"b'a\\\\x00?\\\\x00b\\\\x00'\",\"b'a<1>c'\",\"an encoding error keeps "
	    "its object in the sandbox: its handler does not set another\",0]");
	still_serving();
	stop();
}

/* CPython 3.11 gives a class a version (what a specialised attribute read checks a type
 * against) only on a lookup by a name of at most 100 characters: a class just changed kept
 * version 0 through reads by longer names, the specialiser cached 0, and an object of another
 * class at version 0 passed for it (a slot read at its offset in a bytes object: a fake
 * bytearray over all memory, then the real builtins; the same through a dataclass's generated
 * code). Bytecode names no attribute longer than 100 characters; such names stay usable through
 * getattr and setattr, and changing classes often is still allowed. */
Test(escapes, no_specialised_read_takes_a_class_at_version_zero)
{
	static const struct e2e_refusal want = {"error", "AttributeError",
	                                        "attribute names longer than 100 characters"};

	start(NULL);
	refused("import struct\n"
	        "N = 'x' * 120\n"
	        "A = type('A', (), {'__slots__': (N + '0', N + '1', N + '2')})\n"
	        "a = A()\n"
	        "for n in A.__slots__:\n"
	        "    setattr(a, n, 'slot')\n"
	        "B = type('B', (bytes,), {})\n"
	        "b = B(struct.pack('<QQ', id(N), id(N)))\n"
	        "A.zzz = 1\n"
	        "B.zzz = 1\n"
	        "def get(o):\n"
	        "    return "
	        "o."
	        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx2\n"
	        "for i in range(3000):\n"
	        "    r = get(a)\n"
	        "r = get(b)\n"
	        "r == N",
	        &want);
	expect_ok_result("import dataclasses, struct\n"
	                 "out = []\n"
	                 "try:\n"
	                 "    dataclasses.make_dataclass('D', [('f' * 120, int)])\n"
	                 "except AttributeError as e:\n"
	                 "    out.append(str(e))\n"
	                 "# Ordinary use: a name of 100 characters, long names through getattr and "
	                 "setattr, and a\n"
	                 "# class changed many times with subclasses read after each change.\n"
	                 "N = 'n' * 100\n"
	                 "C = dataclasses.make_dataclass('C', [(N, int)])\n"
	                 "c = C(5)\n"
	                 "L = 'L' * 150\n"
	                 "setattr(c, L, 7)\n"
	                 "class Base:\n"
	                 "    pass\n"
	                 "subs = [type('S%d' % i, (Base,), {}) for i in range(200)]\n"
	                 "total = 0\n"
	                 "for i in range(3000):\n"
	                 "    Base.x = i\n"
	                 "    for s in subs:\n"
	                 "        total += s.x\n"
	                 "out += [getattr(c, N), getattr(c, L), hasattr(c, L + 'x'), total]\n"
	                 "out",
	                 "[\"attribute names longer than 100 characters are not allowed in the "
	                 "sandbox (line 3)\",5,7,false,899700000]");
	still_serving();
	stop();
}

/* Objects CPython 3.11 let be made half-built, and a buffer it sized by the user's hint: a
 * csv reader or writer made without its constructor (type(csv.reader([]))(), object.__new__)
 * and a Struct without a format (sys.getsizeof) read through NULL (SIGSEGV); bytearray.extend
 * of an iterable hinting 0 items wrote its first item into the buffer every empty bytearray
 * shares. */
Test(escapes, half_built_objects_and_hinted_buffers_hold)
{
	start(NULL);
	expect_ok_result(
	    "import csv, io, struct, sys\n"
	    "out = []\n"
	    "R, W = type(csv.reader([])), type(csv.writer(io.StringIO()))\n"
	    "for make, use in ((lambda: R(), next), (lambda: object.__new__(R), next),\n"
	    "                  (lambda: W(), lambda o: o.writerow(['a'])),\n"
	    "                  (lambda: object.__new__(W), lambda o: o.writerow(['a']))):\n"
	    "    try:\n"
	    "        o = make()\n"
	    "    except TypeError as e:\n"
	    "        out.append(str(e))\n"
	    "        continue\n"
	    "    use(o)\n"
	    "    out.append('used')\n"
	    "try:\n"
	    "    sys.getsizeof(struct.Struct.__new__(struct.Struct))\n"
	    "except TypeError as e:\n"
	    "    out.append(str(e))\n"
	    "class It:\n"
	    "    def __init__(s): s.n = 0\n"
	    "    def __iter__(s): return s\n"
	    "    def __next__(s):\n"
	    "        s.n += 1\n"
	    "        if s.n > 3: raise StopIteration\n"
	    "        return 65\n"
	    "    def __length_hint__(s): return 0\n"
	    "b = bytearray()\n"
	    "b.extend(It())\n"
	    "e = bytearray()\n"
	    "out += [bytes(b), bytes(e)]\n"
	    "b.extend([66, 67]); b.extend(x for x in (68,)); b.extend(b'E'); "
	    "b.extend(memoryview(b'F')); b.extend(range(71, 73))\n"
	    "out.append(bytes(b))\n"
	    "try:\n"
	    "    b.extend(5)\n"
	    "except TypeError as e:\n"
	    "    out.append(str(e))\n"
	    "s = io.StringIO(); w = csv.writer(s); w.writerow(['a', 'b,c']); "
	    "out.append(s.getvalue())\n"
	    "out.append(list(csv.reader(['x,\"y,z\"'])))\n"
	    "out.append(sys.getsizeof(struct.Struct('i')) > 0)\n"
	    "[str(x) for x in out]",
	    "[\"cannot create '_csv.reader' instances\",\"object.__new__(_csv.reader) is not safe, "
	    "use _csv.reader.__new__()\",\"cannot create '_csv.writer' "
	    "instances\",\"object.__new__(_csv.writer) is not safe, use "
	    "_csv.writer.__new__()\",\"this struct.Struct has no format (make it with "
	    "struct.Struct(format))\",\"b'AAA'\",\"b''\",\"b'AAABCDEFGH'\",\"can't extend "
	    "bytearray with int\",\"a,\\\"b,c\\\"\\r\\n\",\"[['x', 'y,z']]\",\"True\"]");
	still_serving();
	stop();
}

/* CPython 3.11's specialised instructions trusted class versions its specialiser should not
 * have cached: a dict key's __eq__ run inside the specialiser changed the class (version 0
 * cached for a read by dict hint), and a class whose creation failed after its slots were in
 * place never became ready (version 0 for good: a slot read). An object of another class at
 * version 0 passed the guard: a slot read at its offset in a bytes object (a fake bytearray over
 * all memory, then the real builtins), or a read through a dict pointer before the object
 * (SIGSEGV). With the Python layer on, attribute reads are never specialised (pyspecialise.c):
 * both reads are the generic ones, which find no such attribute. */

/* The first route, as a function: attack() changes class A inside the specialiser of get()'s
 * attribute read, then reads an object of another class at version 0 there. */
static const char VERSION_ZERO_BY_EQ[] =
    "import copy\n"
    "H = hash('foo')\n"
    "class A:\n"
    "    def __getstate__(self): return {E(): 1, 'foo': 'FOO'}\n"
    "class E:\n"
    "    def __hash__(self): return H\n"
    "    def __eq__(self, other):\n"
    "        setattr(A, 'zzz', 1)   # class A -> version 0\n"
    "        return False\n"
    "def attack():\n"
    "    y = copy.copy(A())\n"
    "    def get(o):\n"
    "        return o.foo\n"
    "    for i in range(20):\n"
    "        r = get(y)\n"
    "    class B:\n"
    "        __slots__ = ()\n"
    "    z = B()\n"
    "    setattr(B, 'zzz', 1)      # class B -> version 0\n"
    "    return get(z)\n";

Test(escapes, no_specialised_instruction_runs)
{
	static const struct e2e_refusal want = {"error", "AttributeError",
	                                        "'B' object has no attribute"};

	/* The second route's half-made class needs a metaclass's own mro() and a key whose __eq__
	 * fails PyType_Ready's lookups: neither is made now (the metaclass is refused first). */
	static const struct e2e_refusal names = {"error", "TypeError",
	                                         "a metaclass's own mro() is not run"};

	start(NULL);
	refused(e2e_fmt("%sattack()", VERSION_ZERO_BY_EQ), &want);
	refused("import struct\n"
	        "FLAG = []\n"
	        "H = hash('__eq__')\n"
	        "class Evil:\n"
	        "    def __hash__(self): return H\n"
	        "    def __eq__(self, other):\n"
	        "        if FLAG:\n"
	        "            raise ValueError('stop PyType_Ready here')\n"
	        "        return False\n"
	        "KEPT = []\n"
	        "class M(type):\n"
	        "    def mro(cls):\n"
	        "        KEPT.append(cls)\n"
	        "        FLAG.append(1)          # from here on, the dict lookups of "
	        "PyType_Ready fail\n"
	        "        return (cls, object)\n"
	        "ns = {Evil(): 0, '__slots__': ('s0', 's1', 's2', 's3')}\n"
	        "try:\n"
	        "    M('X', (), ns)\n"
	        "except ValueError as e:\n"
	        "    pass\n"
	        "FLAG.clear()\n"
	        "X = KEPT[0]\n"
	        "class Y:\n"
	        "    __slots__ = ('s0', 's1', 's2', 's3')\n"
	        "y = Y()\n"
	        "y.s0 = 'SLOT s0'\n"
	        "y.__class__ = X\n"
	        "def get(o):\n"
	        "    return o.s2\n"
	        "y.s2 = 'SLOT s2'\n"
	        "for i in range(50):\n"
	        "    r = get(y)\n"
	        "B = type('B', (bytes,), {})\n"
	        "target = 'TARGET STRING'\n"
	        "b = B(struct.pack('<QQQQ', id(target), id(target), id(target), id(target)))\n"
	        "setattr(B, 'zzz', 1)             # B -> version 0\n"
	        "r = get(b)\n"
	        "r == target",
	        &names);
	still_serving();
	stop();
}

/* The specialised forms that check at each run all they read (exact ints, floats and strs;
 * exact lists, tuples and dicts with the index in range; callables by their exact type;
 * functions and globals by versions CPython never gives twice) run again with the Python layer
 * on; those a class's version alone guards stay generic (pyspecialise.c). Hot loops through
 * every family, with a method of a class replaced midway, compute what CPython
 * computes (the host's python3 gave the expected value), with the layer on and off. */
Test(escapes, specialised_forms_compute_as_cpython)
{
	static const char code[] =
	    "# Each loop runs its instructions thousands of times, so CPython specialises them.\n"
	    "out = []\n"
	    "def fib(n, memo=None):\n"
	    "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
	    "out.append(fib(18))\n"
	    "acc_i, acc_f, acc_s = 0, 0.0, ''\n"
	    "for i in range(3000):\n"
	    "    acc_i = acc_i + i * 3 - 1\n"
	    "    acc_f = acc_f + i * 0.5 - 0.25\n"
	    "    if i % 500 == 0:\n"
	    "        acc_s += str(i)\n"
	    "    if acc_s == 'never':\n"
	    "        break\n"
	    "out += [acc_i, acc_f, acc_s]\n"
	    "pairs, triple, lst, tup, d = [], [0, 0, 0], [0] * 10, tuple(range(10)), {}\n"
	    "for i in range(3000):\n"
	    "    a, b = i, -i\n"
	    "    x, y, z = [i, i + 1, i + 2] if i % 7 else (i, 0, i)\n"
	    "    triple[i % 3] += x + y + z\n"
	    "    lst[i % 10] = lst[i % 10] + tup[i % 10] + a + b\n"
	    "    d[i % 13] = d.get(i % 13, 0) + i\n"
	    "out += [triple, lst, sorted(d.items())[:3]]\n"
	    "seen = []\n"
	    "def hot(v, k=2):\n"
	    "    return len(v) + isinstance(v, list) * k\n"
	    "for i in range(2000):\n"
	    "    v = [i] * (i % 5)\n"
	    "    seen.append(hot(v) + hot(v, 3))\n"
	    "    t = type(v), str(i % 3), tuple(v), list(v), dict(a=i).get('a')\n"
	    "out += [sum(seen), t]\n"
	    "class Counter:\n"
	    "    def __init__(self):\n"
	    "        self.n = 0\n"
	    "    def add(self, k):\n"
	    "        self.n += k\n"
	    "        return self\n"
	    "c = Counter()\n"
	    "for i in range(3000):\n"
	    "    c.add(i).add(1)\n"
	    "    if i == 1500:\n"
	    "        Counter.add = lambda self, k: setattr(self, 'n', self.n - k) or self\n"
	    "out.append(c.n)\n"
	    "words = 'the quick brown fox jumps over the lazy dog'.split()\n"
	    "counts = {}\n"
	    "for i in range(2000):\n"
	    "    w = words[i % len(words)]\n"
	    "    counts[w] = counts.get(w, 0) + 1\n"
	    "    s = w.upper().lower().strip()\n"
	    "out.append(sorted(counts.items()))\n"
	    "repr(out)";
	static const char want[] =
	    "\"[2584, 13492500, 2248500.0, '05001000150020002500', [4284858, 4286857, 4288856], "
	    "[0, 300, 600, 900, 1200, 1500, 1800, 2100, 2400, 2700], [(0, 345345), (1, 345576), "
	    "(2, 345807)], 18000, (<class 'list'>, '1', (1999, 1999, 1999, 1999), [1999, 1999, "
	    "1999, 1999], 1999), -2246998, [('brown', 222), ('dog', 222), ('fox', 222), ('jumps', "
	    "222), ('lazy', 222), ('over', 222), ('quick', 223), ('the', 445)]]\"";

	for (int unsafe = 0; unsafe < 2; unsafe++) {
		if (unsafe)
			start_unsafe();
		else
			start(NULL);
		expect_ok_result(code, want);
		still_serving();
		stop();
	}
}

/* The forms for a method of the fast calling convention took the first of the call's
 * arguments, bound or not, as the method's self after checking only its class: a site
 * without arguments, specialised for x.pop() and reached again with the method unbound (p() for
 * p = list.pop, or a method kept as an instance's attribute), read a leftover object past the
 * stack's top, called the method with -1 arguments and released that object once more than it
 * was held (SIGSEGV, and through the freed object all memory: the sandbox escaped). Such a site
 * keeps the generic form: CPython's TypeError, the objects untouched, ordinary calls without
 * arguments as CPython gives them (the host's python3 with the specialiser off gave them). */
Test(escapes, a_method_call_without_arguments_reads_nothing_past_the_stack)
{
	static const char code[] = "out = []\n"
	                           "def f(L):\n"
	                           "    p = list.pop\n"
	                           "    (L, L, L, L)\n"
	                           "    try:\n"
	                           "        return p()\n"
	                           "    except TypeError as e:\n"
	                           "        return str(e)\n"
	                           "L = [1, 2, 3]\n"
	                           "for i in range(40):\n"
	                           "    r = f(L)\n"
	                           "out += [r, L]\n"
	                           "def g(B):\n"
	                           "    p = bytearray.split\n"
	                           "    (B, B, B, B)\n"
	                           "    try:\n"
	                           "        return p()\n"
	                           "    except TypeError as e:\n"
	                           "        return str(e)\n"
	                           "B = bytearray(b'a b')\n"
	                           "for i in range(40):\n"
	                           "    r = g(B)\n"
	                           "out += [r, B]\n"
	                           "class X:\n"
	                           "    pass\n"
	                           "x = X()\n"
	                           "x.pop = bytearray.pop\n"
	                           "def h(o, V):\n"
	                           "    (V, V, V, V)\n"
	                           "    try:\n"
	                           "        return o.pop()\n"
	                           "    except TypeError as e:\n"
	                           "        return str(e)\n"
	                           "S = bytearray(b'sink')\n"
	                           "keep = [S] * 1000\n"
	                           "for i in range(40):\n"
	                           "    h(bytearray(b'abc'), S)\n"
	                           "V = bytearray(b'A' * 8)\n"
	                           "out += [h(x, V) for i in range(5)] + [V, len(keep), S]\n"
	                           "# Ordinary calls of such methods without arguments, hot.\n"
	                           "st = list(range(100))\n"
	                           "popped = [st.pop() for i in range(50)]\n"
	                           "out += [sum(popped), len(st), bytearray(b'x y z').split()]\n"
	                           "repr(out)";
	static const char want[] =
	    "\"['unbound method list.pop() needs an argument', [1, 2, 3], 'unbound method "
	    "bytearray.split() needs an argument', bytearray(b'a b'), 'unbound method "
	    "bytearray.pop() needs an argument', 'unbound method bytearray.pop() needs an "
	    "argument', 'unbound method bytearray.pop() needs an argument', 'unbound method "
	    "bytearray.pop() needs an argument', 'unbound method bytearray.pop() needs an "
	    "argument', bytearray(b'AAAAAAAA'), 1000, bytearray(b'sink'), 3725, 50, "
	    "[bytearray(b'x'), bytearray(b'y'), bytearray(b'z')]]\"";

	start(NULL);
	expect_ok_result(code, want);
	still_serving();
	stop();
}

/* Four call sites reached 3000 times each with callables drawn at random (seeded): methods of
 * every calling convention bound and unbound, kept as an instance's attribute or not, builtins,
 * classes, functions, with objects of the methods' classes left above the stack. The host's
 * python3 and the build before the fast forms were held back crash on it (SIGSEGV); the
 * sandbox counts what CPython's generic forms give (the host's python3 with the specialiser
 * off gave the counts). */
Test(escapes, call_sites_switching_callables_keep_to_their_arguments)
{
	static const char code[] =
	    "# Call sites warmed with one kind of callable, then reached with others: bound and "
	    "unbound\n"
	    "# methods of every calling convention, builtins, classes, functions; leftovers above "
	    "the stack.\n"
	    "import random\n"
	    "random.seed(5)\n"
	    "class H:\n"
	    "    pass\n"
	    "def f1(x=1):\n"
	    "    return x\n"
	    "methods = [list.pop, list.copy, list.clear, list.append, list.index, bytearray.pop,\n"
	    "           bytearray.split, bytearray.hex, bytearray.append, str.upper, str.split, "
	    "str.count,\n"
	    "           dict.keys, dict.get, dict.copy, set.pop, set.copy, set.add, "
	    "int.bit_length]\n"
	    "others = [len, repr, abs, sorted, list, tuple, str, type, f1, H]\n"
	    "def fresh():\n"
	    "    return random.choice([[1, 2, 3], bytearray(b'a b'), 'a b', {1: 2}, {1, 2}, 7])\n"
	    "def site0(c, L):\n"
	    "    (L, L, L, L)\n"
	    "    return c()\n"
	    "def site1(o, L):\n"
	    "    (L, L, L, L)\n"
	    "    return o.pop()\n"
	    "def site2(c, a, L):\n"
	    "    (L, L, L, L)\n"
	    "    return c(a)\n"
	    "def site3(o, a, L):\n"
	    "    (L, L, L, L)\n"
	    "    return o.append(a)\n"
	    "tally = {}\n"
	    "for r in range(3000):\n"
	    "    L = fresh()\n"
	    "    c = random.choice(methods + others)\n"
	    "    h = H()\n"
	    "    h.pop = h.append = c\n"
	    "    o = random.choice([h, fresh(), fresh()])\n"
	    "    for site, args in ((site0, (c, L)), (site1, (o, L)), (site2, (c, fresh(), L)),\n"
	    "                       (site3, (o, fresh(), L))):\n"
	    "        try:\n"
	    "            k = type(site(*args)).__name__\n"
	    "        except Exception as e:\n"
	    "            k = type(e).__name__\n"
	    "        tally[k] = tally.get(k, 0) + 1\n"
	    "repr(sorted(tally.items()))";
	static const char want[] =
	    "\"[('AttributeError', 2031), ('H', 131), ('NoneType', 425), ('TypeError', 6572), "
	    "('bytearray', 24), ('dict', 41), ('dict_keys', 22), ('int', 1413), ('list', 452), "
	    "('set', 40), ('str', 505), ('tuple', 189), ('type', 155)]\"";

	start(NULL);
	expect_ok_result(code, want);
	still_serving();
	stop();
}

/* A thread the code starts (threading given by --allow-import) holds to the same: the
 * specialiser's wrappers serve every thread of the process (the crash of
 * no_specialised_instruction_runs, inside a thread: SIGSEGV when the old switch was set for the
 * main thread alone). */
Test(escapes, no_specialised_instruction_runs_in_a_thread)
{
	start(ARGS("--allow-import", "threading"));
	expect_ok_result(e2e_fmt("import threading\n"
	                         "out = []\n"
	                         "%s"
	                         "def body():\n"
	                         "    try:\n"
	                         "        attack()\n"
	                         "    except AttributeError as e:\n"
	                         "        out.append(str(e))\n"
	                         "t = threading.Thread(target=body)\n"
	                         "t.start(); t.join()\n"
	                         "out",
	                         VERSION_ZERO_BY_EQ),
	                 "[\"'B' object has no attribute 'foo'\"]");
	still_serving();
	stop();
}

/* CPython 3.11 collected inside allocations: a collection made by tuple()'s own allocation ran
 * a __del__ of the code's that emptied the list and refilled its freed item array, so the copy
 * took any pointer for an object (a forged bytearray over all memory: the real modules and
 * builtins, the audit hook unlinked); list.copy() read the items a __del__ had freed. The
 * interpreter's collection is off in a worker: collections run where Python code may run, so
 * no finalizer runs inside C code's allocation, while finalizers still run during the call and
 * gc's thresholds and switches keep their meaning. */
Test(escapes, no_finalizer_runs_inside_an_allocation)
{
	start(NULL);
	expect_ok_result(
	    "import gc, struct\n"
	    "N = 21\n"
	    "fake = bytes(struct.pack('<7q', 0x100000, id(bytearray), 2**62, 2**62, 0, 0, 0))\n"
	    "payload = struct.pack('<q', id(fake) + 32) * N\n"
	    "state = {'armed': False, 'inside': 0, 'ran': 0}\n"
	    "keep = []\n"
	    "class D:\n"
	    "    def __del__(self):\n"
	    "        state['ran'] += 1\n"
	    "        if state['armed']:\n"
	    "            state['armed'] = False\n"
	    "            state['inside'] += 1\n"
	    "            target.clear()\n"
	    "            keep.append(bytearray(payload))\n"
	    "        d = D(); d.me = d\n"
	    "d = D(); d.me = d; del d\n"
	    "gc.set_threshold(1)\n"
	    "bad = 0\n"
	    "for i in range(3000):\n"
	    "    target = [None] * N\n"
	    "    state['armed'] = True\n"
	    "    t = tuple(target)\n"
	    "    c = target.copy()\n"
	    "    state['armed'] = False\n"
	    "    bad += any(x is not None for x in t + tuple(c))\n"
	    "gc.set_threshold(700)\n"
	    "gc.collect()\n"
	    "[bad, state['ran'] > 0]",
	    "[0,true]");
	/* The same without gc: the default threshold passed by chance. */
	expect_ok_result("state = {'armed': False, 'inside': 0}\nkeep = []\n"
	                 "class D:\n"
	                 "    def __del__(self):\n"
	                 "        if state['armed']:\n"
	                 "            state['inside'] += 1\n"
	                 "            target.clear()\n"
	                 "        d = D(); d.me = d\n"
	                 "d = D(); d.me = d; del d\n"
	                 "bad = 0\n"
	                 "for i in range(20000):\n"
	                 "    keep.append([i])\n"
	                 "    target = [None] * 21\n"
	                 "    state['armed'] = True\n"
	                 "    t = tuple(target)\n"
	                 "    state['armed'] = False\n"
	                 "    bad += t != (None,) * 21\n"
	                 "bad",
	                 "0");
	/* Nor where C code checks for signals: PyObject_Repr does, on each item a list's repr
	 * holds without a reference of its own (a finalizer there could free it). A finalizer that
	 * ran inside the list's repr would see the list's repr under way ('[...]'). */
	expect_ok_result("import gc\nstate = {'inside': 0, 'ran': 0, 'checked': False}\n"
	                 "class D:\n"
	                 "    def __del__(self):\n"
	                 "        state['ran'] += 1\n"
	                 "        if not state['checked']:\n"
	                 "            state['checked'] = True\n"
	                 "            if repr(target) == '[...]':\n"
	                 "                state['inside'] += 1\n"
	                 "target = list(range(10**6, 2 * 10**6))\n"
	                 "for k in range(8):\n"
	                 "    gc.disable()\n"
	                 "    for i in range(2000):\n"
	                 "        d = D(); d.me = d\n"
	                 "    del d\n"
	                 "    state['checked'] = False\n"
	                 "    gc.enable()\n"
	                 "    s = repr(target)\n"
	                 "gc.collect()\n"
	                 "[state['inside'], state['ran'] > 0, len(s)]",
	                 "[0,true,9000000]");
	still_serving();
	stop();
}

/* An object freed while its own C repr or str runs: a namespace's value, an exception's args
 * (its repr and its str) hand their field over borrowed, and the field's repr (a slice's, a
 * tuple's: C code turning its own fields to text) went on after an earlier field's __repr__
 * had the holder drop it (the attribute deleted, args set): its next field
 * was read from freed memory (a crash; a fake object's __repr__ with memory laid over it).
 * Every C repr and str holds its object now: each field is turned to text before it is
 * freed, and the texts are the host's (a defaultdict's repr, which calls dict's slot itself,
 * recursed for ever through the held slot: every print of one crashed the worker). */
Test(python_layer, an_object_is_held_while_its_own_repr_runs)
{
	start(NULL);
	expect_ok_result("log = []\n"
	                 "class B:\n"
	                 "    def __repr__(self):\n"
	                 "        log.append('B repr')\n"
	                 "        return 'b'\n"
	                 "    def __del__(self):\n"
	                 "        log.append('B freed')\n"
	                 "class A:\n"
	                 "    def __repr__(self):\n"
	                 "        del holder.s\n"
	                 "        junk = [bytearray(64) for i in range(200)]\n"
	                 "        return 'a'\n"
	                 "import sys\n"
	                 "holder = type(sys.implementation)(s=slice(A(), B(), None))\n"
	                 "out = [repr(holder), log[:]]\n"
	                 "class C:\n"
	                 "    def __repr__(self):\n"
	                 "        e.args = ()\n"
	                 "        junk = [bytearray(64) for i in range(200)]\n"
	                 "        return 'c'\n"
	                 "for f in (repr, str):\n"
	                 "    log.clear()\n"
	                 "    e = ValueError(C(), B())\n"
	                 "    out += [f(e), log[:], e.args]\n"
	                 "import collections\n"
	                 "d = collections.defaultdict(list)\n"
	                 "d['x'] = d\n"
	                 "class DD(collections.defaultdict):\n"
	                 "    pass\n"
	                 "out += [repr(d), str(collections.defaultdict(int)), repr(DD(int, a=1))]\n"
	                 "out",
	                 "[\"namespace(s=slice(a, b, None))\",[\"B repr\",\"B freed\"],"
	                 "\"ValueError(c, b)\",[\"B repr\",\"B freed\"],[],\"(c, b)\","
	                 "[\"B repr\",\"B freed\"],[],\"defaultdict(<class 'list'>, {'x': "
	                 "defaultdict(<class 'list'>, {...})})\",\"defaultdict(<class 'int'>, "
	                 "{})\",\"DD(<class 'int'>, {'a': 1})\"]");
	still_serving();
	stop();
}

/* Three more places CPython keeps an object borrowed while the code's runs. A class's __get__
 * is called as found in its dict: a bound list.index whose comparison deleted it had the list
 * freed under it (a fake item compared). A super() without arguments takes its object from the
 * caller's frame and asks its __class__, a property that emptied the cell holding it: super
 * kept a freed object (a fake one's methods called; no class of the code's defines __class__
 * now, nor is a __getattribute__ asked for it: the attack runs as far as it can). An object's
 * class replaced, then a
 * collection the code ran, freed the old class while abc's instance check or the object's
 * dealloc still used it (a fake class's slots called: any function). The __get__ is held while
 * it runs, super's object while super is made, a replaced class until the code ends: nothing
 * is compared with freed memory, super keeps the real object, the old class lives on. */
Test(python_layer, descriptors_super_and_replaced_classes_keep_what_they_use)
{
	start(NULL);
	expect_ok_result(
	    "import abc, gc, struct\n"
	    "class Tracked(type):\n"
	    "    def __del__(cls):\n"
	    "        ST.setdefault('freed', []).append(cls.__name__)\n"
	    "ST = {}\n"
	    "class S:\n"
	    "    __slots__ = tuple('s%d' % i for i in range(80))\n"
	    "FAKE = b'\\0' * 16 + struct.pack('<qq', 1 << 32, id(S)) + b'\\0' * 647\n"
	    "L = [None] * 10\n"
	    "class D:\n"
	    "    __get__ = L.index\n"
	    "    def __eq__(self, other):\n"
	    "        ST['compared'] = type(other).__name__\n"
	    "        return False\n"
	    "    __hash__ = object.__hash__\n"
	    "del L\n"
	    "class M(type):\n"
	    "    def __index__(cls):\n"
	    "        return 5\n"
	    "class Own(metaclass=M):\n"
	    "    a = D()\n"
	    "    def __index__(self):\n"
	    "        type.__delattr__(D, '__get__')\n"
	    "        ST['spray'] = [struct.pack('<Q', id(FAKE) + 32) * 5 + bytes([i]) "
	    "* 7 for i in range(200)]\n"
	    "        return 4\n"
	    "try:\n"
	    "    Own().a\n"
	    "except ValueError as e:\n"
	    "    out = [type(e).__name__, ST.get('compared')]\n"
	    "class B:\n"
	    "    def get_self(self):\n"
	    "        ST['self'] = type(self).__name__\n"
	    "class C(B):\n"
	    "    def m(self):\n"
	    "        def drop():\n"
	    "            nonlocal self\n"
	    "            self = None\n"
	    "        ST['drop'] = drop\n"
	    "        ST['sp'] = super()\n"
	    "class E(C):\n"
	    "    pass\n"
	    "try:\n"
	    "    class X:\n"
	    "        __slots__ = tuple('x%d' % i for i in range(80))\n"
	    "        @property\n"
	    "        def __class__(self):\n"
	    "            ST['drop']()\n"
	    "            return E\n"
	    "    C.m(X())\n"
	    "    ST['buf'] = [bytearray(FAKE) for i in range(20)]\n"
	    "    ST['sp'].get_self()\n"
	    "    out.append(ST['self'])\n"
	    "except TypeError:\n"
	    "    out.append('no __class__')\n"
	    "class Y:\n"
	    "    pass\n"
	    "class Z:\n"
	    "    pass\n"
	    "class Meta(abc.ABCMeta):\n"
	    "    def __subclasscheck__(cls, sub):\n"
	    "        if 'inst' in ST:\n"
	    "            inst = ST.pop('inst')\n"
	    "            inst.__class__ = Y\n"
	    "            del inst\n"
	    "            gc.collect()\n"
	    "            ST['alive'] = 'X' not in ST.get('freed', [])\n"
	    "            ST['spray'] = [bytearray(FAKE[:n]) for n in range(0x300, "
	    "0x500, 16) for k in range(4)]\n"
	    "            return False\n"
	    "        ST['got'] = sub\n"
	    "        return False\n"
	    "class A(metaclass=Meta):\n"
	    "    pass\n"
	    "def mk():\n"
	    "    class X(metaclass=Tracked):\n"
	    "        def __getattribute__(self, name):\n"
	    "            if name == '__class__':\n"
	    "                return Z\n"
	    "            return object.__getattribute__(self, name)\n"
	    "    return X()\n"
	    "ST['inst'] = mk()\n"
	    "out += [isinstance(ST['inst'], A), ST['alive'], ST.get('got', "
	    "type(None)).__name__]\n"
	    "class Y2:\n"
	    "    def __del__(self):\n"
	    "        pass\n"
	    "def mk2():\n"
	    "    class X2:\n"
	    "        def __del__(self):\n"
	    "            self.__class__ = Y2\n"
	    "            gc.collect()\n"
	    "            ST['spray'] = [bytearray(b'A' * (n - 1)) for n in "
	    "range(0x300, 0x500, 16)\n"
	    "                           for k in range(4)]\n"
	    "    return X2()\n"
	    "mk2()\n"
	    "out.append('survived')\n"
	    "out",
	    "[\"ValueError\",\"NoneType\",\"no __class__\",false,true,\"NoneType\",\"survived\"]");
	still_serving();
	stop();
}

/* super, property, staticmethod and classmethod initialised again on a live one replaced what
 * they held while C code used it borrowed (super's lookup hands its object to a descriptor, a
 * property's __isabstractmethod__ asks its getter, which abc's class creation does): freed
 * under it, a fake object. They are initialised once; a property subclass's own __init__,
 * getter/setter copies and super() work as before. A class's __get__ was held only once the
 * class was guarded, after type() returned, but __init_subclass__ runs inside it: the class
 * has the held slot from the start (the bound method's list lives until its call returns). */
Test(python_layer, live_descriptors_are_not_initialised_again)
{
	start(NULL);
	expect_ok_result("ST = {}\n"
	                 "out = []\n"
	                 "def attempt(f):\n"
	                 "    try:\n"
	                 "        f()\n"
	                 "        return 'ran'\n"
	                 "    except TypeError as e:\n"
	                 "        return str(e)\n"
	                 "class B:\n"
	                 "    def m(self):\n"
	                 "        return 'B.m'\n"
	                 "class C(B):\n"
	                 "    pass\n"
	                 "SU = super(C, C())\n"
	                 "out.append(attempt(lambda: super.__init__(SU, C, C())))\n"
	                 "P = property(lambda s: 1)\n"
	                 "SM, CM = staticmethod(len), classmethod(len)\n"
	                 "out += [attempt(lambda: property.__init__(P, None)), attempt(lambda: "
	                 "staticmethod.__init__(SM, None)),\n"
	                 "        attempt(lambda: classmethod.__init__(CM, None))]\n"
	                 "class Prop(property):\n"
	                 "    def __init__(self, f):\n"
	                 "        super().__init__(f)\n"
	                 "class H:\n"
	                 "    @Prop\n"
	                 "    def v(self):\n"
	                 "        return 7\n"
	                 "    @property\n"
	                 "    def w(self):\n"
	                 "        return 8\n"
	                 "    @w.setter\n"
	                 "    def w(self, value):\n"
	                 "        ST['w'] = value\n"
	                 "h = H()\n"
	                 "h.w = 9\n"
	                 "out += [SU.m(), h.v, h.w, ST['w'], P.getter(lambda s: 2).fget(None)]\n"
	                 "class M(type):\n"
	                 "    def __index__(cls):\n"
	                 "        return 5\n"
	                 "NS = []\n"
	                 "class PM(type):\n"
	                 "    @classmethod\n"
	                 "    def __prepare__(mcs, name, bases, **kw):\n"
	                 "        d = {}\n"
	                 "        NS.append(d)\n"
	                 "        return d\n"
	                 "class Base(metaclass=PM):\n"
	                 "    def __init_subclass__(D, **kw):\n"
	                 "        class Own(metaclass=M):\n"
	                 "            a = D()\n"
	                 "            def __index__(self):\n"
	                 "                NS[-1].clear()\n"
	                 "                type.__delattr__(D, '__get__')\n"
	                 "                EV.append('deleted')\n"
	                 "                return 4\n"
	                 "        try:\n"
	                 "            Own().a\n"
	                 "        except ValueError as e:\n"
	                 "            out.append(type(e).__name__)\n"
	                 "EV = []\n"
	                 "class L(list):\n"
	                 "    def __del__(self):\n"
	                 "        EV.append('list freed')\n"
	                 "class D(Base):\n"
	                 "    __get__ = L([None] * 10).index\n"
	                 "    def __eq__(self, other):\n"
	                 "        ST['compared'] = type(other).__name__\n"
	                 "        return False\n"
	                 "    __hash__ = object.__hash__\n"
	                 "out.append(EV)\n"
	                 "out",
	                 "[\"a super is initialised once in the sandbox (make a new one)\",\"a "
	                 "property is initialised once in the sandbox (make a new one)\",\"a "
	                 "staticmethod is initialised once in the sandbox (make a new one)\",\"a "
	                 "classmethod is initialised once in the sandbox (make a new "
	                 "one)\",\"B.m\",7,8,9,2,\"ValueError\",[\"deleted\",\"list freed\"]]");
	still_serving();
	stop();
}

/* type() runs the code's __set_name__ and the bases' __init_subclass__ before it returns the
 * class, and the class was guarded only after: those hooks used it with CPython's own slots.
 * The class is guarded before either runs (an entry of the sandbox's, first in the namespace,
 * does it from its own __set_name__ and leaves): the hooks, enums, dataclasses and named
 * tuples see the class as before, and the entry's name is the sandbox's own. */
Test(python_layer, a_class_is_guarded_before_its_hooks_run)
{
	start(NULL);
	expect_ok_result("import enum, dataclasses, typing\n"
	                 "seen = []\n"
	                 "class Base:\n"
	                 "    def __init_subclass__(cls, **kw):\n"
	                 "        seen.append([k for k in dir(cls) if not k.startswith('__')])\n"
	                 "class Desc:\n"
	                 "    def __set_name__(self, owner, name):\n"
	                 "        seen.append([name, [k for k in dir(owner) if 'guard' in k]])\n"
	                 "class D(Base):\n"
	                 "    d = Desc()\n"
	                 "    def m(self):\n"
	                 "        return 1\n"
	                 "class Color(enum.Enum):\n"
	                 "    RED = 1\n"
	                 "@dataclasses.dataclass\n"
	                 "class P:\n"
	                 "    x: int\n"
	                 "class NT(typing.NamedTuple):\n"
	                 "    a: int\n"
	                 "try:\n"
	                 "    class Bad:\n"
	                 "        __sandbox_class_guard__ = 1\n"
	                 "    bad = 'made'\n"
	                 "except TypeError as e:\n"
	                 "    bad = str(e)\n"
	                 "[seen, [k for k in dir(D) if not k.startswith('__')], repr(Color.RED), "
	                 "repr(P(1)), repr(NT(2)), bad]",
	                 "[[[\"d\",[]],[\"d\",\"m\"]],[\"d\",\"m\"],\"<Color.RED: 1>\",\"P(x=1)\","
	                 "\"NT(a=2)\",\"a class may not name __sandbox_class_guard__: the sandbox "
	                 "uses that name\"]");
	still_serving();
	stop();
}

/* A class pattern's positional sub-patterns read, in C, the attributes its class's
 * __match_args__ names: a class whose metaclass claimed any object as an instance and named
 * __subclasses__ there walked the subclasses of public library classes to those of refused
 * modules (os._Environ, asyncio's pipe transports, whose write() wrote any fd: the worker's
 * channel). __match_args__ holds names the rules allow, however the class gets it: in its
 * body, set later, answered by a metaclass's __getattribute__ or __getattr__ (also while its
 * first lookup runs, when CPython's hook had already put its unchecked dispatcher in the slot,
 * and in a class whose metaclass that lookup changed), a descriptor, a metaclass's property, a
 * str subclass. Dataclasses, named tuples, classes of the code's and the built-in types match
 * as before. */
Test(python_layer, class_patterns_read_only_names_the_rules_allow)
{
	start(NULL);
	expect_ok_result(
	    "import collections.abc, dataclasses, collections\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ': ' + str(e)[:48]\n"
	    "target = collections.abc.MutableMapping\n"
	    "def attempt(M):\n"
	    "    match target:\n"
	    "        case M(v):\n"
	    "            return repr(v)[:40]\n"
	    "    return 'no match'\n"
	    "out = []\n"
	    "class Meta1(type):\n"
	    "    def __instancecheck__(cls, o): return True\n"
	    "    def __getattribute__(cls, name):\n"
	    "        if name == '__match_args__': return ('__subclasses__',)\n"
	    "        raise AttributeError(name)\n"
	    "out.append(t(lambda: attempt(Meta1('M1', (), {}))))\n"
	    "class Meta2(type):\n"
	    "    def __instancecheck__(cls, o): return True\n"
	    "    def __getattr__(cls, name):\n"
	    "        if name == '__match_args__': return ('__subclasses__',)\n"
	    "        raise AttributeError(name)\n"
	    "out.append(t(lambda: attempt(Meta2('M2', (), {}))))\n"
	    "class Meta3(type):\n"
	    "    def __instancecheck__(cls, o): return True\n"
	    "M3 = Meta3('M3', (), {})\n"
	    "def set3():\n"
	    "    M3.__match_args__ = ('__subclasses__',)\n"
	    "    return attempt(M3)\n"
	    "out.append(t(set3))\n"
	    "class D:\n"
	    "    def __get__(self, o, c): return ('__subclasses__',)\n"
	    "out.append(t(lambda: attempt(Meta3('M4', (), {'__match_args__': D()}))))\n"
	    "def m5():\n"
	    "    class Meta5(type):\n"
	    "        __match_args__ = property(lambda c: ('__subclasses__',))\n"
	    "        def __instancecheck__(cls, o): return True\n"
	    "    return attempt(Meta5('M5', (), {}))\n"
	    "out.append(t(m5))\n"
	    "out.append(t(lambda: dataclasses.make_dataclass('X', ['__subclasses__'])))\n"
	    "def set6():\n"
	    "    type.__setattr__(M3, '__match_args__', ('__mro__',))\n"
	    "    return attempt(M3)\n"
	    "out.append(t(set6))\n"
	    "class S(str): pass\n"
	    "out.append(t(lambda: attempt(Meta3('M7', (), {'__match_args__': (S('__mro__'),)}))))\n"
	    "out.append(t(lambda: attempt(Meta3('M8', (), {'__match_args__': ['__mro__']}))))\n"
	    "res = []\n"
	    "class A9(type):\n"
	    "    def __getattribute__(cls, name):\n"
	    "        if name == 'first':\n"
	    "            match target:\n"
	    "                case D9(v):\n"
	    "                    res.append(repr(v)[:40])\n"
	    "            return 'first'\n"
	    "        if name == '__match_args__':\n"
	    "            return ('__subclasses__',)\n"
	    "        raise AttributeError(name)\n"
	    "    def __instancecheck__(cls, o): return True\n"
	    "class D9(metaclass=A9):\n"
	    "    pass\n"
	    "out.append(t(lambda: [D9.first, res]))\n"
	    "class B10(type):\n"
	    "    pass\n"
	    "class A10(type):\n"
	    "    def __getattribute__(cls, name):\n"
	    "        if name == 'flip':\n"
	    "            cls.__class__ = B10\n"
	    "            return 'flipped'\n"
	    "        if name == '__match_args__':\n"
	    "            return ('__subclasses__',)\n"
	    "        raise AttributeError(name)\n"
	    "    def __instancecheck__(cls, o): return True\n"
	    "class X10(metaclass=A10):\n"
	    "    pass\n"
	    "class D10(metaclass=A10):\n"
	    "    pass\n"
	    "out.append(t(lambda: [X10.flip, attempt(D10)]))\n"
	    "# legit\n"
	    "@dataclasses.dataclass\n"
	    "class P:\n"
	    "    x: int\n"
	    "    y: int\n"
	    "P2 = collections.namedtuple('P2', 'a b')\n"
	    "class Q:\n"
	    "    __match_args__ = ('u', 'v')\n"
	    "    def __init__(self): self.u, self.v = 1, 2\n"
	    "def legit(o):\n"
	    "    match o:\n"
	    "        case P(x, y): return ('P', x, y)\n"
	    "        case P2(a, b): return ('P2', a, b)\n"
	    "        case Q(u, v): return ('Q', u, v)\n"
	    "        case int(n): return ('int', n)\n"
	    "        case str(s): return ('str', s)\n"
	    "    return None\n"
	    "out += [legit(P(1, 2)), legit(P2(3, 4)), legit(Q()), legit(5), legit('s')]\n"
	    "out\n",
	    "[\"TypeError: __match_args__ names an attribute the sandbox re\","
	    "\"TypeError: __match_args__ names an attribute the sandbox re\","
	    "\"TypeError: __match_args__ names an attribute the sandbox re\","
	    "\"TypeError: __match_args__ must be a tuple of attribute name\","
	    "\"TypeError: __match_args__ must be a tuple of attribute name\","
	    "\"AttributeError: Forbidden access to dunder attribute: __subclass\","
	    "\"TypeError: __match_args__ names an attribute the sandbox re\","
	    "\"TypeError: __match_args__ must name attributes by plain str\","
	    "\"TypeError: __match_args__ must be a tuple of attribute name\","
	    "\"TypeError: __match_args__ names an attribute the sandbox re\","
	    "\"TypeError: __match_args__ names an attribute the sandbox re\","
	    "[\"P\",1,2],[\"P2\",3,4],[\"Q\",1,2],[\"int\",5],[\"str\",\"s\"]]");
	still_serving();
	stop();
}

/* A class the code makes gives itself none of the names C code reads for the sandbox's checks,
 * in its namespace or as a slot (a member descriptor): __class__ (a property or a slot answering
 * str made isinstance() take its objects for strings, past the data stack's wrappers, whose
 * compiled kernels check the real type), numpy's interface names (a slot named
 * __array_interface__, filled with object.__setattr__, had numpy make an array over any
 * address), a metaclass's mro; and __slots__ are plain names (type() would run the code's
 * iterator while it makes the class). A __getattribute__ answering __class__ is not asked:
 * the object's type answers. Ordinary slots, a dict of them, __dict__ and __weakref__
 * slots, slotted dataclasses and named tuples work. */
Test(python_layer, a_class_gives_itself_no_name_the_sandbox_reads_in_c)
{
	start(NULL);
	expect_ok_result(
	    "import dataclasses, collections\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def a():\n"
	    "    return isinstance(type('F', (), {'__class__': property(lambda s: str)})(), str)\n"
	    "def b():\n"
	    "    class G:\n"
	    "        __slots__ = ('__class__',)\n"
	    "    g = G()\n"
	    "    object.__setattr__(g, '__class__', str)\n"
	    "    return isinstance(g, str)\n"
	    "def c():\n"
	    "    class H:\n"
	    "        @property\n"
	    "        def __class__(self):\n"
	    "            return str\n"
	    "    return isinstance(H(), str)\n"
	    "def d():\n"
	    "    class P:\n"
	    "        __slots__ = ('__array_interface__',)\n"
	    "    return 'made'\n"
	    "def e():\n"
	    "    class Q:\n"
	    "        __slots__ = (n for n in ('x',))\n"
	    "    return 'made'\n"
	    "def f():\n"
	    "    class R:\n"
	    "        __slots__ = 'mro'\n"
	    "    return 'made'\n"
	    "refused = [t(a), t(b), t(c), t(d), t(e), t(f)]\n"
	    "class Claims:\n"
	    "    def __getattribute__(self, n):\n"
	    "        if n == '__class__':\n"
	    "            return str\n"
	    "        raise AttributeError(n)\n"
	    "refused.append(isinstance(Claims(), str))\n"
	    "class S1:\n"
	    "    __slots__ = ('a', 'b')\n"
	    "class S2:\n"
	    "    __slots__ = 'x'\n"
	    "class S3:\n"
	    "    __slots__ = {'a': 'the a'}\n"
	    "class S4:\n"
	    "    __slots__ = ['__dict__', '__weakref__', 'c']\n"
	    "@dataclasses.dataclass(slots=True)\n"
	    "class D:\n"
	    "    x: int\n"
	    "    y: int = 2\n"
	    "N = collections.namedtuple('N', 'p q')\n"
	    "s1, s4 = S1(), S4()\n"
	    "s1.a, s4.c, s4.other = 1, 3, 4\n"
	    "[refused, s1.a, S3.__doc__, s4.c + s4.other, repr(D(1)), N(1, 2).q, isinstance(D(1), "
	    "D)]\n",
	    "[[\"TypeError\",\"TypeError\",\"TypeError\",\"AttributeError\",\"TypeError\","
	    "\"TypeError\",false],1,null,7,\"D(x=1, y=2)\",2,true]");
	still_serving();
	stop();
}

/* Just under the recursion limit, the guards that run after CPython made or changed a class
 * (the early guard's __set_name__, which type() calls; the walk that guards a changed class's
 * subclasses) failed with RecursionError after the work was done: a class kept through its
 * __classcell__ never guarded, a comparison set on a class while its subclasses kept CPython's
 * slots. Making or changing a class needs the guards' levels first (RecursionError before
 * anything is done), and a class a failed type() made is not left in its cell. At every depth
 * the class is made whole or not at all (its methods' __class__ then empty), and a set is done
 * whole or not at all. */
Test(python_layer, a_class_is_made_or_changed_whole_at_any_depth)
{
	start(NULL);
	expect_ok_result(
	    "import sys\n"
	    "out = {'kept': 0, 'made': 0, 'refused': 0, 'applied': 0}\n"
	    "def deep(n, f):\n"
	    "    if n == 0:\n"
	    "        return f()\n"
	    "    return deep(n - 1, f)\n"
	    "F = []\n"
	    "def make():\n"
	    "    class K(list):\n"
	    "        def f(self):\n"
	    "            return __class__\n"
	    "        F.append(f)\n"
	    "    return K\n"
	    "for n in range(sys.getrecursionlimit(), 0, -1):\n"
	    "    F.clear()\n"
	    "    try:\n"
	    "        deep(n, make)\n"
	    "        out['made'] += 1\n"
	    "        break\n"
	    "    except (RecursionError, RuntimeError):\n"
	    "        if F:\n"
	    "            try:\n"
	    "                F[0](None)\n"
	    "                out['kept'] += 1\n"
	    "            except NameError:\n"
	    "                out['refused'] += 1\n"
	    "class C:\n"
	    "    pass\n"
	    "def g(self, o):\n"
	    "    return NotImplemented\n"
	    "for n in range(sys.getrecursionlimit(), 0, -1):\n"
	    "    try:\n"
	    "        deep(n, lambda: type.__setattr__(C, '__lt__', g))\n"
	    "        break\n"
	    "    except RecursionError:\n"
	    "        if C.__lt__ is g:\n"
	    "            out['applied'] += 1\n"
	    "[out['kept'], out['applied'], out['made'], out['refused'] > 0, C.__lt__ is g]",
	    "[0,0,1,true,true]");
	still_serving();
	stop();
}

/* Out of memory where the guards follow CPython. The code fills the address space to within a
 * few KiB and steps the room down until the allocation it aims at fails: (1) in type(), after
 * the class was readied with CPython's slots and listed under its base, before the early
 * guard's __set_name__ (a 10000-name dict copied there): the class stayed alive, never
 * guarded, and abc's subclass check handed it to the metaclass's __subclasscheck__; (2) in the
 * walk that guards a changed class's 20000 subclasses again (a list of them was made after the
 * change): the deletion of __lt__ was done and the subclasses kept CPython's slot. Now a class
 * type() readied and could not guard ends the process (exit 106), and the walk allocates
 * nothing. Either way the code never holds such a class. */
/* The address space filled with bytearrays, halving their size down to a page (in fill). */
#define FILL_ADDRESS_SPACE                                                                         \
	"fill, n = [], 1 << 28\n"                                                                  \
	"while n >= 4096:\n"                                                                       \
	"    try:\n"                                                                               \
	"        fill.append(bytearray(n))\n"                                                      \
	"    except MemoryError:\n"                                                                \
	"        n //= 2\n"

Test(python_layer, a_class_is_guarded_whole_when_memory_runs_out)
{
	json_object *r;

	start(ARGS("--timeout", "60", "--cpu", "60"));
	r = e2e_call("import abc\n"
	             "GOT = []\n"
	             "class M(abc.ABCMeta):\n"
	             "    def __subclasscheck__(cls, sub):\n"
	             "        GOT.append(cls)\n"
	             "        return False\n"
	             "class B(list, metaclass=abc.ABCMeta):\n"
	             "    pass\n"
	             "NS = {'n%d' % i: i for i in range(10000)}\n"
	             "NS['__module__'] = '__main__'\n" FILL_ADDRESS_SPACE "freed = 0\n"
	             "while freed < (24 << 20) and fill:\n"
	             "    freed += len(fill.pop())\n"
	             "out = {'failed': 0, 'kept': 0}\n"
	             "for F in range(256 << 10, 12 << 20, 8 << 10):\n"
	             "    adj = None\n"
	             "    try:\n"
	             "        adj = bytearray(max(0, freed - F))\n"
	             "    except MemoryError:\n"
	             "        continue\n"
	             "    try:\n"
	             "        M('K', (B,), NS)\n"
	             "        made = True\n"
	             "    except MemoryError:\n"
	             "        made = False\n"
	             "    adj = None\n"
	             "    if made:\n"
	             "        break\n"
	             "    out['failed'] += 1\n"
	             "    B._abc_caches_clear()\n"
	             "    GOT.clear()\n"
	             "    issubclass(int, B)\n"
	             "    out['kept'] += sum(1 for c in GOT if c is not B)\n"
	             "    GOT.clear()\n"
	             "    if out['kept']:\n"
	             "        break\n"
	             "fill.clear()\n"
	             "out['kept']\n",
	             NULL);
	if (strcmp(mcpc_status(r), "ok") == 0)
		e2e_assert_result(r, "kept", "0");
	else
		cr_assert(strstr(mcpc_err_str(r, "message"), "could not be guarded"), "%s",
		          mcpc_json(r));
	expect_ok_result(
	    "class V(list):\n"
	    "    def __lt__(self, o):\n"
	    "        return NotImplemented\n"
	    "class W(V):\n"
	    "    pass\n"
	    "KEEP = [type('S%d' % i, (W,), {}) for i in range(20000)]\n" FILL_ADDRESS_SPACE
	    "i = min((j for j in range(len(fill)) if len(fill[j]) >= (4 << 20)), "
	    "key=lambda j: len(fill[j]))\n"
	    "L = len(fill[i])\n"
	    "fill[i] = None\n"
	    "out = {'failed_after_change': 0}\n"
	    "for F in range(8 << 10, 4 << 20, 4 << 10):\n"
	    "    adj = None\n"
	    "    try:\n"
	    "        adj = bytearray(L - F)\n"
	    "    except MemoryError:\n"
	    "        continue\n"
	    "    try:\n"
	    "        del V.__lt__\n"
	    "        adj = None\n"
	    "        break\n"
	    "    except MemoryError:\n"
	    "        adj = None\n"
	    "        if V.__lt__ is list.__lt__:\n"
	    "            out['failed_after_change'] += 1\n"
	    "            break\n"
	    "fill.clear()\n"
	    "[out['failed_after_change'], V.__lt__ is list.__lt__]\n",
	    "[0,true]");
	still_serving();
	stop();
}

/* t(f): 'made', or the start of the TypeError f raised. */
#define TYPE_ERROR_OF                                                                              \
	"def t(f):\n"                                                                              \
	"    try:\n"                                                                               \
	"        f()\n"                                                                            \
	"        return 'made'\n"                                                                  \
	"    except TypeError as e:\n"                                                             \
	"        return str(e)[:44]\n"

/* Ways around that early guard. type() copied a namespace of a dict subclass through the
 * code's keys() and __getitem__ (the entry and the names were checked in its storage): they
 * replaced the guard's entry, and the names were never checked. A metaclass's own mro(), which
 * type() runs with the class half made, took the entry out of the class (also one set on the
 * metaclass by the class's __slots__ iterator, after type() had checked the metaclass: such
 * __slots__ are refused now, plain names only). Either way the hooks
 * ran with CPython's slots: a list subclass's comparison compared an item freed by the other's
 * __lt__, and its reflected __gt__ ran on freed memory (a fake object, then all memory). The
 * namespace is copied from its storage (the code's keys() is not asked; names checked there),
 * and a metaclass's own mro() is refused (defined, set or deleted): the comparison finds the
 * item alive. */
Test(python_layer, the_early_class_guard_is_not_taken_out_by_the_namespace_or_the_metaclass)
{
	start(NULL);
	expect_ok_result(
	    "import struct, sys\n"
	    "out = []\n"
	    "ST = {}\n"
	    "class NSD(dict):\n"
	    "    def __init__(self, kv):\n"
	    "        super().__init__()\n"
	    "        self.kv = dict(kv, __sandbox_class_guard__=None)\n"
	    "    def __iter__(self): return iter(self.kv)\n"
	    "    def keys(self): return list(self.kv)\n"
	    "    def __getitem__(self, k): return self.kv[k]\n"
	    "class S:\n"
	    "    __slots__ = tuple('s%d' % i for i in range(80))\n"
	    "    def __gt__(self, other):\n"
	    "        ST['buf'] = bytearray(PAYLOAD)\n"
	    "        ST['got'] = self\n"
	    "        return False\n"
	    "KEEP = S()\n"
	    "OFF = 32\n"
	    "PAYLOAD = b'\\0' * OFF + struct.pack('<qq', 1 << 32, id(S)) + b'\\0' * "
	    "(sys.getsizeof(KEEP) - 1 - OFF - 16)\n"
	    "def w2_lt(self, other):\n"
	    "    ST['L2'].clear()\n"
	    "    return NotImplemented\n"
	    "def w1_hook(W1, **kw):\n"
	    "    def w2_hook(W2, **kw):\n"
	    "        ST['L1'], ST['L2'] = W1([W2()]), W1([S()])\n"
	    "        ST['lt'] = ST['L1'] < ST['L2']\n"
	    "    IBase = type('IBase', (), {'__init_subclass__': classmethod(w2_hook)})\n"
	    "    type('W2', (IBase,), NSD({'__eq__': lambda a, b: False, '__lt__': w2_lt, "
	    "'__hash__': None}))\n"
	    "LBase = type('LBase', (list,), {'__init_subclass__': classmethod(w1_hook)})\n"
	    "W1 = type('W1', (LBase,), NSD({'x': 1}))\n"
	    "F = ST['got']\n"
	    "ST['buf'][OFF:OFF + 56] = struct.pack('<qqqqqqq', 1 << 32, id(bytearray), 1 << 62, (1 "
	    "<< 62) + 1, 0, 0, 1)\n"
	    "out.append([type(F).__name__, ST['lt'], hasattr(W1, 'x'), '__sandbox_class_guard__' "
	    "in dir(W1)])\n"
	    "class SS(str):\n"
	    "    __hash__ = str.__hash__\n"
	    "ns = {SS('a'): 1}\n"
	    "class N(dict):\n"
	    "    def keys(self): return list(ns)\n"
	    "    def __getitem__(self, k): return ns[k]\n"
	    "    def __iter__(self): return iter(ns)\n"
	    "out.append('a' in dir(type('D', (), N())))\n"
	    "try:\n"
	    "    type('D', (), dict(ns))\n"
	    "except TypeError as e:\n"
	    "    out.append(str(e))\n"
	    "try:\n"
	    "    class M(type):\n"
	    "        def mro(cls):\n"
	    "            ST['mro'] = 'ran'\n"
	    "            return type.mro(cls)\n"
	    "    class C(metaclass=M):\n"
	    "        pass\n"
	    "except TypeError as e:\n"
	    "    out.append(str(e))\n"
	    "out + [ST.get('mro', 'not run')]",
	    "[[\"S\",false,false,false],false,\"a class's attribute names must be plain str, not "
	    "SS\",\"a metaclass's own mro() is not run in the sandbox (M would have one): "
	    "classes get the usual order of their bases\",\"not run\"]");
	/* Nor set on a metaclass later, deleted (which would show a base's), or set while type()
	 * runs the code's __slots__ iterator, after the metaclass was checked. */
	expect_ok_result(
	    "out = []\n" TYPE_ERROR_OF "def own():\n"
	    "    class M0(type):\n"
	    "        def mro(cls):\n"
	    "            return type.mro(cls)\n"
	    "class M(type):\n"
	    "    pass\n"
	    "def set_mro():\n"
	    "    M.mro = lambda cls: type.mro(cls)\n"
	    "def del_mro():\n"
	    "    del M.mro\n"
	    "def late():\n"
	    "    class Slots:\n"
	    "        def __iter__(self):\n"
	    "            M.mro = lambda cls: type.mro(cls)\n"
	    "            yield 'a'\n"
	    "    class X(metaclass=M):\n"
	    "        __slots__ = Slots()\n"
	    "def plain():\n"
	    "    class Y(metaclass=M):\n"
	    "        __slots__ = ('a',)\n"
	    "    return [type(Y).__name__, Y().__class__.__name__]\n"
	    "[t(own), t(set_mro), t(del_mro), t(late), plain(), M.mro is type.mro]",
	    "[\"a metaclass's own mro() is not run in the sa\",\"a metaclass's own mro() is not "
	    "run in the sa\",\"a metaclass's own mro() is not run in the sa\",\"a class's "
	    "__slots__ are a str, or a tuple, l\",[\"M\",\"Y\"],true]");
	/* Nor on any class (a metaclass made of a mixin finds the mixin's mro: set on the mixin
	 * from the __slots__ iterator, or found when a class a failed type() left half made is
	 * readied again), and the guard's entry is set or deleted by the sandbox alone. */
	expect_ok_result(
	    TYPE_ERROR_OF "class Plain:\n"
	                  "    pass\n"
	                  "def mixin_defines():\n"
	                  "    class MixMro:\n"
	                  "        def mro(cls):\n"
	                  "            return type.mro(cls)\n"
	                  "def mixin_set():\n"
	                  "    Plain.mro = lambda cls: type.mro(cls)\n"
	                  "def guard_name():\n"
	                  "    type.__setattr__(Plain, '__sandbox_class_guard__', 1)\n"
	                  "def guard_del():\n"
	                  "    type.__delattr__(Plain, '__sandbox_class_guard__')\n"
	                  "[t(mixin_defines), t(mixin_set), t(guard_name), t(guard_del)]",
	    "[\"a metaclass's own mro() is not run in the sa\",\"a metaclass's own mro() is not "
	    "run in the sa\",\"__sandbox_class_guard__ is the sandbox's own\",\"__sandbox_class_"
	    "guard__ is the sandbox's own\"]");
	still_serving();
	stop();
}

/* C code imports modules by name (memoryview's comparison its struct module, datetime and time
 * theirs): CPython's way called the __import__ of the innermost frame's builtins, the code's own
 * function when it set one (in its builtins dict, or a dict of its own as __builtins__), in the
 * middle of the C routine: the comparison's buffer was freed there and read on (a tuple's
 * header read back byte by byte). C code's imports go through the sandbox's import; the code's
 * function runs for its own import statements only. */
Test(python_layer, c_code_imports_without_the_code_s_import_function)
{
	start(NULL);
	expect_ok_result(
	    "import array, datetime, time\n"
	    "real = __builtins__['__import__']\n"
	    "calls = []\n"
	    "hook = []\n"
	    "def my_import(name, *a, **k):\n"
	    "    calls.append(name)\n"
	    "    if hook:\n"
	    "        hook.pop()()\n"
	    "    return real(name, *a, **k)\n"
	    "__builtins__['__import__'] = my_import\n"
	    "ITEMS = [object() for _ in range(23)]       # a tuple of 23 items: a 224-byte block\n"
	    "def stale_byte(offset, guess):\n"
	    "    ba = bytearray(223)                     # a 224-byte block, all zeros\n"
	    "    base = memoryview(ba)\n"
	    "    v = base[offset:offset + 1]             # format 'B'\n"
	    "    w = memoryview(array.array('H', [guess]))   # format 'H': the comparison imports "
	    "struct\n"
	    "    keep = []\n"
	    "    def free_and_refill():\n"
	    "        v.release(); base.release()\n"
	    "        ba.clear()                          # frees the block under the comparison\n"
	    "        for _ in range(30):\n"
	    "            keep.append(tuple(ITEMS))\n"
	    "    hook.append(free_and_refill)\n"
	    "    try:\n"
	    "        return v == w\n"
	    "    finally:\n"
	    "        hook.clear()\n"
	    "def read_word(offset):\n"
	    "    out = []\n"
	    "    for i in range(8):\n"
	    "        hits = [g for g in range(256) if stale_byte(offset + i, g)]\n"
	    "        out.append(hits[0] if len(hits) == 1 else -1)\n"
	    "    return out\n"
	    "r = [read_word(24) == [0] * 8]\n"
	    "def later():\n"
	    "    return [datetime.date(2020, 1, 2).strftime('%Y-%m-%d'), str(time.strptime('2021', "
	    "'%Y').tm_year),\n"
	    "            memoryview(b'ab') == memoryview(array.array('H', [1])), len('x')]\n"
	    "r.append(later())\n"
	    "import json                                 # the code's own import statement: its "
	    "own hook\n"
	    "r.append(sorted(set(calls)))\n"
	    "r\n",
	    "[true,[\"2020-01-02\",\"2021\",false,1],[\"json\"]]");
	/* (the other way to the same hook, a builtins dict of the code's own for what it defines
	 * later, is refused: __builtins__ is not assigned) */
	refused("__builtins__ = {'__import__': my_import, 'len': len}", &BUILTINS_KEPT);
	still_serving();
	stop();
}

/* The stored key's __eq__ clears the dict and stores a str (a new str-only table with room)
 * under the insert of a bytes key (the insert: d[k] = v, setdefault). */
#define REFILLED(insert)                                                                           \
	"class K(bytes):\n"                                                                        \
	"    __hash__ = bytes.__hash__\n"                                                          \
	"    def __eq__(s, o):\n"                                                                  \
	"        if armed and s is first:\n"                                                       \
	"            armed.pop()\n"                                                                \
	"            d.clear()\n"                                                                  \
	"            d['zz'] = 0\n"                                                                \
	"        return s is o\n"                                                                  \
	"armed = [1]\n"                                                                            \
	"d = {}\n"                                                                                 \
	"first = K(b'\\x84' + b'A' * 39 + (0x414141414000).to_bytes(8, 'little'))\n"               \
	"d[first] = 1\n" insert "\n"                                                               \
	"(b'\\x84' + b'A' * 39 + (0x414141414000).to_bytes(8, 'little')).decode('latin-1') in d\n"

/* A dict's or a set's lookup ran a stored key's __eq__ (the code's) and trusted what it had
 * decided before: an insert still wrote the new key as a str entry into the str-only table the
 * __eq__ had made (cleared, then a str stored: the key read as a str at an address the code
 * chose), and a lookup checked only that the table was at the same address (cleared and filled
 * again, the new table took the old one's address: a hash read as an object gave a fake
 * bytearray over all memory; a set's discard dropped a reference it no longer owned). A key of
 * another kind left in a str table ends the process before anything reads it, and blocks freed
 * under a comparison (the whole of PyObject_RichCompareBool: the answer's truth, a C type's
 * comparison calling the code's, the operands held past it) are freed when it returns: no new
 * table takes their address. */
Test(python_layer, a_container_changed_under_its_own_lookup_leaves_nothing_stale)
{
	static const struct e2e_refusal ended = {
	    "crashed", "SandboxError", "The worker ended without a result (exit status 107"};

	start(NULL);
	refused(REFILLED("d[K(bytes(first))] = 2"), &ended);
	refused(REFILLED("d.setdefault(K(bytes(first)), 2)"), &ended);
	/* The table freed and another made at its address under a lookup's comparison: by the
	 * __eq__, by the truth of its answer, by an aware datetime's tzinfo. */
	expect_ok_result(
	    "import datetime as D\n"
	    "def q(v): return v.to_bytes(8, 'little')\n"
	    "secret = bytes(b'immutable-bytes-object')\n"
	    "fake_src = bytes(q(1 << 40) + q(id(bytearray)) + q(1 << 47) + q(1 << 47) + q(0) * 4)\n"
	    "F = id(fake_src) + 32\n"
	    "S = 'startkey-' + 'x' * 7\n"
	    "keep = []\n"
	    "def attempt(by_truth):\n"
	    "    d = {'a0': 0, S: 1}\n"
	    "    for i in range(118):\n"
	    "        d['k%d' % i] = i\n"
	    "    G = {1000: S, F: S}\n"
	    "    for i in range(58):\n"
	    "        G[2000 + i] = S\n"
	    "    armed = [True]\n"
	    "    def refill():\n"
	    "        if armed[0]:\n"
	    "            armed[0] = False\n"
	    "            d.clear()                      # the table freed ...\n"
	    "            d.update(G)                    # ... and another of G's kind made at "
	    "once\n"
	    "        return True\n"
	    "    class B:\n"
	    "        def __bool__(s): return refill()   # the truth of the comparison's answer\n"
	    "    class P:\n"
	    "        def __hash__(s): return hash(S)\n"
	    "        def __eq__(s, o): return B() if by_truth else refill()\n"
	    "    keep.append((G, d))\n"
	    "    try:\n"
	    "        return type(d[P()]).__name__\n"
	    "    except KeyError:\n"
	    "        return None\n"
	    "got = [attempt(by_truth) for by_truth in (False, True) for _ in range(20)]\n"
	    "state = {'armed': False}\n"
	    "def refill_set():\n"
	    "    if state['armed']:\n"
	    "        state['armed'] = False\n"
	    "        state['s'].clear()\n"
	    "        state['s'].update(state['fill'])\n"
	    "class K:\n"
	    "    __slots__ = ('tag',)\n"
	    "    def __init__(s, tag): s.tag = tag\n"
	    "    def __hash__(s): return 3500\n"
	    "    def __eq__(s, o):\n"
	    "        refill_set()\n"
	    "        return s is o or o.tag == 'probe'\n"
	    "class TZa(D.tzinfo):\n"
	    "    def utcoffset(self, dt):               # an aware datetime's comparison calls it "
	    "in C\n"
	    "        refill_set()\n"
	    "        return D.timedelta(0)\n"
	    "    def dst(self, dt): return D.timedelta(0)\n"
	    "class TZb(D.tzinfo):\n"
	    "    def utcoffset(self, dt): return D.timedelta(0)\n"
	    "    def dst(self, dt): return D.timedelta(0)\n"
	    "us = next(u for u in range(10 ** 6)\n"
	    "          if hash(D.datetime(2020, 1, 1, 0, 0, 0, u, tzinfo=TZa())) & 4095 == 3500)\n"
	    "fill = frozenset(range(5000, 5400))\n"
	    "lens = []\n"
	    "for make in (lambda: (K('victim'), K('probe')),\n"
	    "             lambda: (D.datetime(2020, 1, 1, 0, 0, 0, us, tzinfo=TZa()),\n"
	    "                      D.datetime(2020, 1, 1, 0, 0, 0, us, tzinfo=TZb()))):\n"
	    "    for n in range(20):\n"
	    "        s = set(frozenset(range(100000, 101500)))\n"
	    "        victim, probe = make()\n"
	    "        s.add(victim)\n"
	    "        state['s'], state['fill'], state['armed'] = s, fill, True\n"
	    "        s.discard(probe)\n"
	    "        lens.append(len(s))\n"
	    "        keep.append((s, victim))\n"
	    "r = [sorted(set(map(str, got))), sorted(set(lens)), secret == "
	    "b'immutable-bytes-object',\n"
	    "     type(victim).__name__, {1: 'a', 'b': 2} == {'b': 2, 1: 'a'}, sorted({3, 1, 2} | "
	    "{4})]\n"
	    "r\n",
	    "[[\"None\"],[400],true,\"datetime\",true,[1,2,3,4]]");
	still_serving();
	stop();
}

/* iter() over an object with only __getitem__: a __getitem__ that stepped the same iterator,
 * both steps ending in IndexError, dropped the iterator's one reference to the object twice;
 * dropping the code's own name freed it while a list still held it, and a fake bytearray laid
 * in its block gave all memory (the real builtins, sys.modules, posix). The iterator refuses a
 * step from inside its own step, as itertools' do: the object stays whole. */
Test(escapes, an_iterator_over_getitem_stepped_from_its_own_step_refuses)
{
	start(NULL);
	e2e_expect_result(
	    "import struct\n"
	    "class S:\n"
	    "    __slots__ = ('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h')\n"
	    "    def __getitem__(self, i):\n"
	    "        st['n'] += 1\n"
	    "        if st['n'] == 1:\n"
	    "            try:\n"
	    "                next(it)\n"
	    "            except StopIteration:\n"
	    "                pass\n"
	    "            except RuntimeError as e:\n"
	    "                st['inner'] = str(e)\n"
	    "        raise IndexError\n"
	    "fake = struct.pack('<QQqqQQq', 0x100000, id(bytearray), 2**47, 2**47, 0, 0, 0)\n"
	    "FAKE = (b'\\x00' * 16 + fake).ljust(95, b'\\x00')\n"
	    "st = {'n': 0}\n"
	    "s = S()\n"
	    "holder = [s]\n"
	    "it = iter(s)\n"
	    "try:\n"
	    "    next(it)\n"
	    "except StopIteration:\n"
	    "    pass\n"
	    "del it, s\n"
	    "spray = [bytearray(FAKE) for _ in range(2000)]\n"
	    "[type(holder[0]).__name__, st.get('inner')]",
	    "[\"S\",\"iterator stepped from inside its own step\"]");
	e2e_expect_result("class Seq:\n"
	                  "    def __getitem__(self, i):\n"
	                  "        if i < 3:\n"
	                  "            return i * 10\n"
	                  "        raise IndexError\n"
	                  "[list(iter(Seq())), 20 in Seq(), sorted(Seq())]",
	                  "[[0,10,20],true,[0,10,20]]");
	still_serving();
	stop();
}

/* C.attr = new dropped the old value (its finalizers ran) before CPython told the class's
 * attribute cache: a finalizer reading C.attr got the object being freed, and kept it past its
 * free (a fake bytearray laid in its block: all memory). The old value is released only after
 * the change is made and the caches know: the finalizer reads the new value, or none after a
 * del. */
Test(escapes, a_class_attribute_s_old_value_goes_after_the_class_s_caches_know)
{
	start(NULL);
	e2e_expect_result("got = []\n"
	                  "class W:\n"
	                  "    def __del__(self):\n"
	                  "        try:\n"
	                  "            got.append(type(C.attr).__name__)\n"
	                  "        except AttributeError:\n"
	                  "            got.append('no attr')\n"
	                  "class V:\n"
	                  "    __slots__ = ('w', 'b', 'c', 'd', 'e', 'f', 'g', 'h')\n"
	                  "class C:\n"
	                  "    pass\n"
	                  "for how in ('set', 'del'):\n"
	                  "    v = V(); v.w = W(); C.attr = v; del v\n"
	                  "    C.attr; C.attr\n"
	                  "    if how == 'set':\n"
	                  "        C.attr = None\n"
	                  "    else:\n"
	                  "        del C.attr\n"
	                  "got",
	                  "[\"NoneType\",\"no attr\"]");
	still_serving();
	stop();
}

/* CPython's set add keeps a free slot it saw before comparing a key, and checks after only that
 * the table (a small set's inline one, always at the same address) and the compared entry are
 * unchanged: finalizers run by a clear added to the set, popped from it and added again, and a key
 * was written over a live one with the count raised. The set's clear, pop and deallocation walked
 * its table by that count, past its end (a reference dropped on each word pair there: glibc's heap
 * check ended the process). They count the table first: the loop runs to its end, and the server
 * goes on. (Finalizers are deferred now, each to after the one that dropped its object: the
 * depth no longer bounds them, a budget does.) */
Test(escapes, a_set_s_count_is_its_table_s_when_it_is_walked)
{
	start(NULL);
	e2e_expect_result("depth = [0]\n"
	                  "budget = [100000]\n"
	                  "class D:\n"
	                  "    __slots__ = ('v',)\n"
	                  "    def __init__(s, v=0): s.v = v\n"
	                  "    def __hash__(s): return s.v\n"
	                  "    def __del__(s):\n"
	                  "        if depth[0] > 1 or budget[0] <= 0: return\n"
	                  "        depth[0] += 1\n"
	                  "        budget[0] -= 1\n"
	                  "        try:\n"
	                  "            S.add(0); S.add(D())\n"
	                  "            try: S.pop()\n"
	                  "            except KeyError: pass\n"
	                  "        finally:\n"
	                  "            depth[0] -= 1\n"
	                  "for it in range(20000):\n"
	                  "    S = {D(i) for i in range(it % 20)}\n"
	                  "    S.clear()\n"
	                  "T = {1, 2, 3}\n"
	                  "T.clear()\n"
	                  "['done', len(T), sorted({3, 1, 2}), len(set(range(100)))]",
	                  "[\"done\",0,[1,2,3],100]");
	/* The same count reached the set's clear through -= (and ^=, difference_update, the
	 * collector): its walk past a 512-byte table into a buffer of the code's dropped the only
	 * reference to an object a list still held (a fake bytearray laid in its block). (Q, not S:
	 * the finalizers above still add to S.) */
	e2e_expect_result(
	    "import struct\n"
	    "class K:\n"
	    "    def __init__(self, name, mutate=False):\n"
	    "        self.name, self.mutate = name, mutate\n"
	    "    def __hash__(self): return 0\n"
	    "    def __eq__(self, other):\n"
	    "        if self.mutate:\n"
	    "            self.mutate = False\n"
	    "            Q.clear()\n"
	    "            Q.add(Y)\n"
	    "            Q.add(X0)\n"
	    "        return False\n"
	    "A, Y, KEY = K('A'), K('Y'), K('KEY')\n"
	    "X0 = K('X', mutate=True)\n"
	    "Q = set()\n"
	    "Q.add(A); Q.add(X0); Q.discard(A)\n"
	    "Q.add(KEY)\n"
	    "class X:\n"
	    "    __slots__ = ('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h')\n"
	    "holder = [X()]\n"
	    "ents = struct.pack('<QQ', id(holder[0]), 0) + struct.pack('<QQ', "
	    "id(None), 0) * 31\n"
	    "spray = [bytearray(ents[:511]) for _ in range(1200)]\n"
	    "spray[1100] = None\n"
	    "n = 1000\n"
	    "while Q.__len__() < 12:\n"
	    "    Q.add(n); n += 1\n"
	    "fake = struct.pack('<QQqqQQq', 0x100000, id(bytearray), 2**47, 2**47, 0, "
	    "0, 0)\n"
	    "FAKE = (b'\\x00' * 16 + fake).ljust(95, b'\\x00')\n"
	    "Q -= Q\n"
	    "spray2 = [bytearray(FAKE) for _ in range(2000)]\n"
	    "[len(Q), type(holder[0]).__name__]",
	    "[0,\"X\"]");
	still_serving();
	stop();
}

/* reversed() of a dict checked only the dict's size: keys deleted and as many added made the
 * table again, smaller, and the iterator's position read past it, in the next block of the
 * heap (a bytes object of the code's laid there, whose words it returned as a bytearray over
 * all memory: an immutable bytes object written). It now stops with the RuntimeError CPython
 * gives for a change of size; a dict changed in place, its table kept, iterates as before. */
Test(escapes, a_dict_s_reverse_iterator_stays_within_its_table)
{
	start(NULL);
	e2e_expect_result(
	    "q = lambda v: v.to_bytes(8, 'little')\n"
	    "fake = q(1 << 40) + q(id(bytearray)) + q(1 << 62) + q((1 << 62) + 1) + q(0) * 3\n"
	    "pat = q(id(fake) + 32) * 32\n"
	    "spray = [bytes(bytearray(pat[:255])) for _ in range(3000)]\n"
	    "idx = 1500\n"
	    "for i in range(1000, 2990):\n"
	    "    a = id(spray[i])\n"
	    "    if id(spray[i + 1]) == a + 288 and id(spray[i - 1]) == a - 288:\n"
	    "        idx = i; break\n"
	    "d = {}\n"
	    "for i in range(12): d[i] = i\n"
	    "for i in range(2, 12): del d[i]\n"
	    "it = reversed(d.items())\n"
	    "k = 100\n"
	    "for j in range(9):\n"
	    "    del d[next(iter(d))]; d[k] = k; k += 1\n"
	    "spray[idx] = None\n"
	    "del d[next(iter(d))]; d[k] = k\n"
	    "try:\n"
	    "    mem = next(it)[1]\n"
	    "    got = type(mem).__name__\n"
	    "    victim = b'hello, immutable bytes'\n"
	    "    mem[id(victim) + 32] = ord('J')\n"
	    "except RuntimeError as e:\n"
	    "    got = str(e)\n"
	    "again = []\n"
	    "try:\n"
	    "    next(it)\n"
	    "except (RuntimeError, StopIteration) as e:\n"
	    "    again = type(e).__name__\n"
	    "e = {1: 'a', 2: 'b', 3: 'c'}\n"
	    "r = reversed(e)\n"
	    "first = next(r)\n"
	    "e[1] = 'z'\n"
	    "[got, again, b'hello, immutable bytes'.decode(), first, list(r),\n"
	    " list(reversed(e.values())), list(reversed({}.items()))]",
	    "[\"dictionary changed during iteration\",\"RuntimeError\","
	    "\"hello, immutable bytes\",3,[2,1],[\"c\",\"b\",\"z\"],[]]");
	e2e_expect_result("d = {i: i for i in range(1000)}\n"
	                  "for i in range(10, 1000): del d[i]\n"
	                  "it = reversed(d)\n"
	                  "k = 100000\n"
	                  "while k <= 101000:\n"
	                  "    del d[next(iter(d))]; d[k] = k; k += 1\n"
	                  "try:\n"
	                  "    out = list(it)\n"
	                  "except RuntimeError as e:\n"
	                  "    out = str(e)\n"
	                  "[len(d), out]",
	                  "[10,\"dictionary changed during iteration\"]");
	still_serving();
	stop();
}

/* bytearray.__init__ of an existing bytearray appended each item in place, checking its room
 * against its size alone: an iterator that deleted the bytearray's head meanwhile moved its
 * start, and the next items were written past its buffer over the next heap block (an
 * immutable bytes changed, its length forged). The items are read first now. */
Test(escapes, a_bytearray_s_init_reads_its_items_before_it_writes)
{
	start(NULL);
	e2e_expect_result(
	    "victims = []\n"
	    "class It:\n"
	    "    def __init__(self, b):\n"
	    "        self.b, self.n, self.cut = b, 0, 0\n"
	    "    def __iter__(self):\n"
	    "        return self\n"
	    "    def __next__(self):\n"
	    "        self.n += 1\n"
	    "        if self.n > 1200:\n"
	    "            raise StopIteration\n"
	    "        if self.n == 414:\n"
	    "            victims.extend(bytes([0x76]) * 440 for _ in range(64))\n"
	    "        if self.n in (440, 700) and len(self.b) > 200:\n"
	    "            del self.b[:200]\n"
	    "            self.cut += 1\n"
	    "        return 0x41 + self.n % 20\n"
	    "class Item:\n"
	    "    def __init__(self, b, v):\n"
	    "        self.b, self.v = b, v\n"
	    "    def __index__(self):\n"
	    "        if len(self.b) > 100:\n"
	    "            del self.b[:100]\n"
	    "        return self.v\n"
	    "out = []\n"
	    "for big in (False, True):\n"
	    "    b = bytearray(b'x' * (1000 if big else 8))\n"
	    "    it = It(b)\n"
	    "    b.__init__(it)\n"
	    "    out.append([len(b), bytes(b) == bytes(0x41 + n % 20 for n in range(1, 1201)),\n"
	    "                it.cut])\n"
	    "c = bytearray(b'y' * 500)\n"
	    "items = [Item(c, 0x42) for _ in range(700)]\n"
	    "bytearray.__init__(c, source=items)\n"
	    "out.append([len(c), bytes(c) == b'B' * 700])\n"
	    "out.append(all(v == bytes([0x76]) * 440 for v in victims))\n"
	    "out.append(len(victims))\n"
	    "d = bytearray(b'keep')\n"
	    "for src in ([1, 2, 300], (c for c in 'ab'), 5.0):\n"
	    "    try:\n"
	    "        d.__init__(src)\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        out.append(str(e))\n"
	    "class B(bytearray):\n"
	    "    pass\n"
	    "x = B(b'zz')\n"
	    "x.__init__(iter([65, 66]))\n"
	    "out + [x.hex(), bytearray(range(3)).hex(), bytearray('h\u00e9', 'utf-8').hex()]",
	    "[[1200,true,0],[1200,true,2],[700,true],true,128,\"byte must be in range(0, 256)\","
	    "\"'str' object cannot be interpreted as an integer\","
	    "\"cannot convert 'float' object to bytearray\",\"4142\",\"000102\",\"68c3a9\"]");
	/* the same iterable reached as a source whose __index__ raises TypeError (bytearray then
	 * iterates it), and named by a str subclass that hides the name from a lookup (by ** and
	 * by a partial's keywords, which read only now) or by an object that is no str (refused,
	 * as CPython refuses it); hex's separator so too */
	e2e_expect_result(
	    "import functools\n"
	    "vict = [bytearray(200) for _ in range(400)]\n"
	    "ref = []\n"
	    "calls = [0]\n"
	    "class K(str):\n"
	    "    def __hash__(self):\n"
	    "        return hash(str(self))\n"
	    "    def __eq__(self, other):\n"
	    "        calls[0] += 1\n"
	    "        return calls[0] > 1\n"
	    "class X:\n"
	    "    def __init__(self, name):\n"
	    "        self.name = name\n"
	    "    def __hash__(self):\n"
	    "        return hash(self.name)\n"
	    "    def __eq__(self, other):\n"
	    "        calls[0] += 1\n"
	    "        return calls[0] > 1\n"
	    "class S:\n"
	    "    def __index__(self):\n"
	    "        raise TypeError('not an index')\n"
	    "    def __iter__(self):\n"
	    "        b = ref[0]\n"
	    "        vict[200] = None\n"
	    "        b.extend(bytes(200))\n"
	    "        del b[:50]\n"
	    "        return iter([0x41] * 50)\n"
	    "class B(bytearray):\n"
	    "    def __init__(self, **kw):\n"
	    "        ref[:] = [self]\n"
	    "        super().__init__(**kw)\n"
	    "out = []\n"
	    "for how in ('index', 'kw', 'partial', 'object'):\n"
	    "    b = bytearray()\n"
	    "    ref[:] = [b]\n"
	    "    calls[0] = 0\n"
	    "    try:\n"
	    "        if how == 'index':\n"
	    "            b.__init__(S())\n"
	    "        elif how == 'kw':\n"
	    "            b.__init__(**{K('source'): S()})\n"
	    "        elif how == 'partial':\n"
	    "            p = functools.partial(b.__init__)\n"
	    "            p.keywords[K('source')] = S()\n"
	    "            p()\n"
	    "        else:\n"
	    "            b = B(**{X('source'): S()})\n"
	    "        out.append([len(b), b.count(0x41)])\n"
	    "    except TypeError as e:\n"
	    "        out.append(str(e)[:36])\n"
	    "h = bytearray(b'A' * 64)\n"
	    "keep = []\n"
	    "class Sep(str):\n"
	    "    def __len__(self):\n"
	    "        h.clear()\n"
	    "        keep.append(bytearray(b'SECRET!!' * 8))\n"
	    "        return 1\n"
	    "calls[0] = 0\n"
	    "x = h.hex(**{K('sep'): Sep(':'), 'bytes_per_sep': 32})\n"
	    "try:\n"
	    "    calls[0] = 0\n"
	    "    y = h.hex(**{X('sep'): Sep(':')})\n"
	    "except TypeError as e:\n"
	    "    y = str(e)\n"
	    "[out, [i for i, v in enumerate(vict) if v is not None and any(v)],\n"
	    " bytes.fromhex(x.replace(':', '')) == b'A' * 64, x.count(':'), y, len(h), keep]",
	    "[[[50,50],[50,50],\"'mappingproxy' object does not suppo\","
	    "\"keywords must be strings\"],[],true,1,\"keywords must be strings\",64,[]]");
	still_serving();
	stop();
}

/* bz2's and lzma's decompressors kept their stream's input pointer where a failure left it:
 * into the caller's data after a MemoryError while copying the unread tail (the data freed,
 * the next decompress() wrote its input into whatever took those pages: an immutable bytes
 * object of 100 MiB changed), or in the middle of a block after a data error (called again,
 * libbz2 wrote past a stack array: the worker aborted). After any failure a decompressor is
 * at its end (EOFError). StringIO marked itself as holding its own buffer before it made it:
 * when that allocation failed it read the heap past a tiny buffer (another object's bytes read
 * back); a StringIO left so raises ValueError. (V89c) */
Test(escapes, decompressors_and_string_buffers_that_failed_are_not_used_again)
{
	start(NULL);
	e2e_expect_result(
	    "import bz2, random\n"
	    "random.seed(7)\n"
	    "raw = bytes(random.randrange(256) for _ in range(20000))\n"
	    "comp = bz2.compress(raw, 9)\n"
	    "bits = ''.join(f'{b:08b}' for b in comp)\n"
	    "p = 0\n"
	    "def take(n):\n"
	    "    global p\n"
	    "    v = int(bits[p:p+n], 2); p += n; return v\n"
	    "assert take(24) == 0x425a68 ; take(8)           # 'BZh9'\n"
	    "assert take(48) == 0x314159265359\n"
	    "take(32); take(1); take(24)                      # crc, rand, origPtr\n"
	    "used = take(16)\n"
	    "for i in range(16):\n"
	    "    if used & (0x8000 >> i): take(16)\n"
	    "ng_pos = p\n"
	    "nGroups = take(3); nSel = take(15)\n"
	    "sel0 = p\n"
	    "# selector 0 unary code in the original\n"
	    "j = 0\n"
	    "while bits[p] == '1': p += 1; j += 1\n"
	    "p += 1\n"
	    "after_sel0 = p\n"
	    "newbits = bits[:sel0] + '1' * nGroups + '0' + bits[after_sel0:]\n"
	    "e = sel0 + nGroups - 1            # the bit that makes j reach nGroups\n"
	    "newbits += '0' * ((-len(newbits)) % 8)\n"
	    "data = bytes(int(newbits[i:i+8], 2) for i in range(0, len(newbits), 8))\n"
	    "k = e // 8\n"
	    "first, second = data[:k+1], data[k+1:]\n"
	    "d = bz2.BZ2Decompressor()\n"
	    "got = []\n"
	    "for part in (first, second):\n"
	    "    try:\n"
	    "        d.decompress(part)\n"
	    "        got.append('ok')\n"
	    "    except Exception as ex:\n"
	    "        got.append(type(ex).__name__ + ': ' + str(ex))\n"
	    "got",
	    "[\"OSError: Invalid data stream\",\"EOFError: End of stream already reached\"]");
	e2e_expect_result("import bz2\n"
	                  "raw = b'A' * 1000\n"
	                  "comp = bz2.compress(raw)\n"
	                  "MB = 2**20\n"
	                  "N = 100 * MB\n"
	                  "d = None\n"
	                  "for B in range(240, 440, 10):\n"
	                  "    ballast = bytearray(B * MB)\n"
	                  "    buf = bytearray(N); buf[:len(comp)] = comp\n"
	                  "    d = bz2.BZ2Decompressor()\n"
	                  "    try:\n"
	                  "        d.decompress(buf, max_length=len(raw) - 1)\n"
	                  "    except MemoryError:\n"
	                  "        break\n"
	                  "    del d, buf, ballast\n"
	                  "    d = None\n"
	                  "del buf\n"
	                  "victim = bytes(N)\n"
	                  "del ballast\n"
	                  "try:\n"
	                  "    d.decompress(b'<written by a decompressor never given victim>')\n"
	                  "    after = 'ok'\n"
	                  "except Exception as e:\n"
	                  "    after = type(e).__name__\n"
	                  "[d is not None, after, victim.count(0) == N, d.eof]",
	                  "[true,\"EOFError\",true,true]");
	e2e_expect_result(
	    "import io\n"
	    "MB = 2**20\n"
	    "s = io.StringIO()\n"
	    "s.write('a' * (30 * MB))\n"
	    "chunks = []\n"
	    "try:\n"
	    "    while True:\n"
	    "        chunks.append(bytearray(10 * MB))\n"
	    "except MemoryError:\n"
	    "    pass\n"
	    "del chunks[:5]\n"
	    "try:\n"
	    "    s.seek(0)\n"
	    "    s.read(1)\n"
	    "    first = 'read'\n"
	    "except MemoryError:\n"
	    "    first = 'MemoryError'\n"
	    "chunks.clear()\n"
	    "secret = [('<another object %d>' % i).ljust(200).encode('utf-32-le') for i in "
	    "range(3000)]\n"
	    "got = []\n"
	    "for f in (lambda: s.seek(0, 2), lambda: s.read(1), lambda: s.getvalue()[:5]):\n"
	    "    try:\n"
	    "        got.append(repr(f())[:20])\n"
	    "    except ValueError as e:\n"
	    "        got.append(str(e))\n"
	    "t = io.StringIO()\n"
	    "t.write('fine')\n"
	    "[first, got, t.getvalue()]",
	    "[\"MemoryError\",[\"I/O operation on uninitialized object\","
	    "\"I/O operation on uninitialized object\",\"I/O operation on uninitialized object\"],"
	    "\"fine\"]");
	still_serving();
	stop();
}
