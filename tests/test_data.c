/* test_data.c - the data stack (--imports data: numpy, pandas, scipy, sympy, matplotlib) against
 * the real safepy binary: ordinary data work gives what plain CPython 3.11 with Debian 12's
 * packages gives (each expected value was taken from python3.11 running the same code), figures
 * come back as PNG images within their bounds, numpy and pandas results read well, modules the
 * zygote did not import are served, files stay out of reach (a clear error, no file), and the
 * limits hold. The suite skips when the packages are not installed (scripts/setup installs
 * them). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "protocol.h"

TestSuite(data, .timeout = 240, .fini = e2e_cleanup);

/* A server with the data profile; the test skips when the packages are missing. */
static void start_data(const char *const *more)
{
	const char *args[16] = {"--imports", "data"};
	size_t n = 2;
	json_object *r;

	for (size_t i = 0; more && more[i] && n + 1 < sizeof(args) / sizeof(args[0]); i++)
		args[n++] = more[i];
	args[n] = NULL;
	e2e_start(args);
	/* The data zygote's start (the stack imported and warmed up, about 5 s of CPU) is in this
	 * first answer: on a machine shared with other tests it takes longer than a call. */
	r = e2e_call_on(&e2e_srv, "import numpy, pandas, scipy, sympy, matplotlib", NULL,
	                4 * E2E_CALL_MS);
	if (strstr(mcpc_json(r), "is not installed"))
		cr_skip_test(
		    "the data packages are not installed (scripts/setup installs them): %s",
		    mcpc_err_str(r, "message"));
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
}

/* A scratch directory for files an attack would create, and a file it would read. */
static char scratch[64], secret[128];

static void scratch_make(void)
{
	FILE *f;

	snprintf(scratch, sizeof(scratch), "/tmp/safepy-data-XXXXXX");
	cr_assert_not_null(mkdtemp(scratch));
	cr_assert_eq(chmod(scratch, 0777), 0);
	snprintf(secret, sizeof(secret), "%s/data.csv", scratch);
	f = fopen(secret, "we");
	cr_assert_not_null(f);
	fputs("a,b\n1,2\n", f);
	fclose(f);
	cr_assert_eq(chmod(secret, 0644), 0);
}

static const char *scratch_file(const char *name)
{
	return e2e_fmt("%s/%s", scratch, name);
}

static void scratch_remove(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	cr_assert_eq(system(cmd), 0);
}

/* The call is refused as want says, and the file path (may be NULL) does not exist after it. */
static void refused_no_file(const char *code, const struct e2e_refusal *want, const char *path)
{
	json_object *r = e2e_call(code, NULL);
	const char *why = e2e_refusal_mismatch(r, want);

	cr_assert_null(why, "%s\ncode:\n%s\n%s", why, code, mcpc_json(r));
	if (path)
		cr_assert_neq(access(path, F_OK), 0, "%s exists after:\n%s", path, code);
}

static const struct e2e_refusal NO_OPEN = {"error", "PermissionError",
                                           "open is not allowed in the sandbox"};

/* Python that collects each t(f)'s value, or the name of the ValueError, TypeError or
 * PermissionError it raised, in out. */
#define OUT_OR_ERROR                                                                               \
	"out = []\ndef t(f):\n    try:\n        out.append(f())\n"                                 \
	"    except (ValueError, TypeError, PermissionError) as e:\n"                              \
	"        out.append(type(e).__name__)\n"

/* The call answered r with n images. */
static void images_are(json_object *r, size_t n)
{
	cr_assert_eq(json_object_array_length(e2e_member(mcpc_structured(r), "images")), n, "%s",
	             mcpc_json(r));
}

/* The audit hook's refusal, or the kernel's (a library may look at the directory first). */
static const struct e2e_refusal NO_FILE = {"error", "PermissionError", NULL};

Test(data, numpy_random_linalg_fft)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "rng = np.random.default_rng(42)\n"
	                  "round(float(rng.normal(size=(3, 3)).sum()), 6)",
	                  "-2.502669");
	e2e_expect_result("import numpy as np\n"
	                  "[np.linalg.solve([[3, 1], [1, 2]], [9, 8]).tolist(),\n"
	                  " round(float(np.linalg.det([[1, 2], [3, 4]])), 6),\n"
	                  " np.linalg.eigvalsh([[2, 0], [0, 3]]).tolist(),\n"
	                  " np.round(np.abs(np.fft.fft([1, 0, 0, 0, 1, 0, 0, 0])), 6).tolist()]",
	                  "[[2.0,3.0],-2.0,[2.0,3.0],[2.0,0.0,2.0,0.0,2.0,0.0,2.0,0.0]]");
	/* Methods whose code lives in submodules, submodules as attributes and as imports. */
	e2e_expect_result("import numpy as np\narr = np.arange(10.0)\n"
	                  "[float(arr.sum()), float(arr.mean()), round(float(arr.std()), 6),\n"
	                  " type(np.random).__name__, np.linalg.norm([3, 4]).item()]",
	                  "[45.0,4.5,2.872281,\"module\",5.0]");
	e2e_expect_result(
	    "import numpy.random as rd\nfrom numpy.fft import rfft\n"
	    "[rd.default_rng(0).integers(0, 10, 5).tolist(), len(rfft([1, 2, 3, 4]))]",
	    "[[8,6,5,2,3],3]");
	e2e_expect_result("import collections.abc, json.decoder\n"
	                  "[collections.abc.Mapping.__name__, json.decoder.JSONDecoder.__name__]",
	                  "[\"Mapping\",\"JSONDecoder\"]");
	e2e_stop();
}

/* numpy's global generator, like random's, is new in every session, and a session keeps its
 * state from call to call: np.random.seed(n) reproduces. */
Test(data, every_session_draws_its_own_numpy_random_numbers)
{
	const char *draw = "import numpy as np, random\n[float(np.random.rand()), random.random()]";
	char first[128];
	json_object *r;

	start_data(NULL);
	r = e2e_expect_status(draw, "{\"session\":\"new\"}", "ok");
	snprintf(first, sizeof(first), "%s", mcpc_sc_str(r, "result_repr"));
	for (int i = 0; i < 2; i++) {
		r = e2e_expect_status(draw, "{\"session\":\"new\"}", "ok");
		cr_assert_str_neq(mcpc_sc_str(r, "result_repr"), first,
		                  "two new sessions drew the same numbers: %s", first);
	}
	e2e_expect_result("import numpy as np\nnp.random.seed(7)\nfloat(np.random.rand())",
	                  "0.07630828937395717");
	e2e_expect_result("float(np.random.rand())", "0.7799187922401146");
	e2e_stop();
}

Test(data, pandas_frames)
{
	json_object *r;
	const char *csv = "import io, pandas as pd\n"
	                  "csv = 'city,month,sales\\nA,2024-01-05,10\\nA,2024-02-05,20\\n"
	                  "B,2024-01-07,5\\nB,2024-02-09,7\\n'\n"
	                  "df = pd.read_csv(io.StringIO(csv), parse_dates=['month'])\n";

	start_data(NULL);
	e2e_ok(csv);
	e2e_expect_result("df.groupby('city')['sales'].sum().to_dict()", "{\"A\":30,\"B\":12}");
	e2e_expect_result("import json\njson.loads(df.pivot_table(index='city', "
	                  "columns=df['month'].dt.month, values='sales', aggfunc='sum').to_json())",
	                  "{\"1\":{\"A\":10,\"B\":5},\"2\":{\"A\":20,\"B\":7}}");
	e2e_expect_result("df.set_index('month').resample('MS')['sales'].sum().tolist()",
	                  "[15,27]");
	e2e_expect_result(
	    "df.to_json(orient='records', date_format='iso')",
	    "\"[{\\\"city\\\":\\\"A\\\",\\\"month\\\":\\\"2024-01-05T00:00:00.000\\\","
	    "\\\"sales\\\":10},{\\\"city\\\":\\\"A\\\",\\\"month\\\":\\\"2024-02-05T00:"
	    "00:00.000\\\",\\\"sales\\\":20},{\\\"city\\\":\\\"B\\\",\\\"month\\\":\\\"2024"
	    "-01-07T00:00:00.000\\\",\\\"sales\\\":5},{\\\"city\\\":\\\"B\\\",\\\"month\\\":"
	    "\\\"2024-02-09T00:00:00.000\\\",\\\"sales\\\":7}]\"");
	/* Printing: the formatter pandas imports late; a query that reads the caller's names. */
	r = e2e_ok("print(df)\nlimit = 6\ndf.query('sales > @limit')['sales'].tolist()");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"),
	                 "  city      month  sales\n0    A 2024-01-05     10\n"
	                 "1    A 2024-02-05     20\n2    B 2024-01-07      5\n"
	                 "3    B 2024-02-09      7\n");
	e2e_assert_result(r, "query", "[10,20,7]");
	/* A deprecation warning points at the user's line, as pandas makes it do. */
	r = e2e_ok("pd.Series([1, 2]).append(pd.Series([3])).tolist()");
	e2e_assert_result(r, "append", "[1,2,3]");
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "<code>:1: FutureWarning: The series.append"),
	          "%s", mcpc_sc_str(r, "stderr"));
	/* A frame as the result: its own text, and its rows as records. */
	r = e2e_ok("df.groupby('city', as_index=True)['sales'].sum().to_frame()");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"),
	                 "      sales\ncity       \nA        30\nB        12");
	e2e_assert_result(r, "frame",
	                  "[{\"city\":\"A\",\"sales\":30},{\"city\":\"B\",\"sales\":12}]");
	/* float64 values as they are (to_json's own writes 10 decimals: 3.2e-12 read 0.0) */
	e2e_expect_result("pd.Series({'x': 3.2e-12, 'y': 0.04, 'z': 1.23456789012345e-7, "
	                  "'n': float('nan')})",
	                  "{\"x\":3.2e-12,\"y\":0.04,\"z\":1.23456789012345e-07,\"n\":null}");
	e2e_expect_result("pd.Series([1 / 3, 2e-20])", "[0.3333333333333333,2e-20]");
	e2e_expect_result(
	    "pd.DataFrame({'p': [1.23e-10, float('inf')], 'b': ['u', 'v'], 'c': [1, 2]},\n"
	    "             index=pd.Index([10, 20], name='k'))",
	    "[{\"k\":10,\"p\":1.23e-10,\"b\":\"u\",\"c\":1},"
	    "{\"k\":20,\"p\":null,\"b\":\"v\",\"c\":2}]");
	e2e_stop();
}

Test(data, scipy_and_sympy)
{
	start_data(NULL);
	e2e_expect_result("from scipy import optimize\n"
	                  "r = optimize.minimize(lambda x: (x[0] - 3)**2 + (x[1] + 1)**2, [0, 0])\n"
	                  "[[round(v, 4) for v in r.x], bool(r.success),\n"
	                  " round(optimize.brentq(lambda x: x**3 - 2, 0, 2), 6)]",
	                  "[[3.0,-1.0],true,1.259921]");
	e2e_expect_result("import scipy.stats as st\n"
	                  "[round(st.norm.cdf(1.96), 6),\n"
	                  " round(st.ttest_ind([1, 2, 3, 4], [2, 3, 4, 5]).pvalue, 6)]",
	                  "[0.975002,0.315334]");
	e2e_expect_result("from scipy import integrate\n"
	                  "s = integrate.solve_ivp(lambda t, y: -y, [0, 1], [1.0], rtol=1e-8, "
	                  "atol=1e-10)\n"
	                  "[round(integrate.quad(lambda x: x**2, 0, 3)[0], 6), "
	                  "round(float(s.y[0, -1]), 6)]",
	                  "[9.0,0.367879]");
	e2e_expect_result("import sympy as sp\nx = sp.Symbol('x')\n"
	                  "[str(sp.solve(x**2 - 5*x + 6, x)), str(sp.integrate(x*sp.exp(x), x)),\n"
	                  " str(sp.simplify(sp.sin(x)**2 + sp.cos(x)**2 + x)),\n"
	                  " sp.latex(sp.Rational(1, 2)*x**2), str(sp.sympify('2*x + 3*x')),\n"
	                  " str(sp.diff(sp.sin(x)*x, x))]",
	                  "[\"[2, 3]\",\"(x - 1)*exp(x)\",\"x + 1\",\"\\\\frac{x^{2}}{2}\",\"5*x\","
	                  "\"x*cos(x) + sin(x)\"]");
	/* sympy.var puts the symbols in the caller's namespace. */
	e2e_expect_result("import sympy\nsympy.var('p q')\nstr((p + q)**2)", "\"(p + q)**2\"");
	e2e_stop();
}

/* The PNG of content item i of r: base64 that decodes to a PNG whose header gives the width
 * and height structuredContent.images[i - 1] says, of its byte count. */
static void assert_png_item(json_object *r, size_t i, uint32_t *w, uint32_t *h)
{
	json_object *content = e2e_member(mcpc_result(r), "content");
	json_object *item = json_object_array_get_idx(content, i);
	json_object *desc =
	    json_object_array_get_idx(e2e_member(mcpc_structured(r), "images"), i - 1);
	const char *data = json_object_get_string(e2e_member(item, "data"));
	unsigned char *png = NULL;
	size_t len = 0;

	cr_assert_str_eq(json_object_get_string(e2e_member(item, "type")), "image", "%s",
	                 mcpc_json(item));
	cr_assert_str_eq(json_object_get_string(e2e_member(item, "mimeType")), "image/png");
	cr_assert_eq(proto_base64_decode(data, strlen(data), &png, &len), 0, "not base64");
	cr_assert_eq(run_image_png_size(png, len, w, h), 0, "not a PNG");
	cr_assert_eq((int64_t)len, json_object_get_int64(e2e_member(desc, "bytes")));
	cr_assert_eq((int64_t)*w, json_object_get_int64(e2e_member(desc, "width")));
	cr_assert_eq((int64_t)*h, json_object_get_int64(e2e_member(desc, "height")));
	cr_assert_str_eq(json_object_get_string(e2e_member(desc, "mimeType")), "image/png");
	cr_assert_leq(*w, RUN_IMAGE_SIDE_MAX);
	cr_assert_leq(*h, RUN_IMAGE_SIDE_MAX);
	cr_assert_leq(len, RUN_IMAGE_BYTES_MAX);
	free(png);
}

Test(data, figures_become_images)
{
	json_object *r, *again, *sc;
	uint32_t w, h;

	start_data(NULL);
	/* One shown, one left open: two images after the text, in that order, then closed. */
	r = e2e_ok("import matplotlib.pyplot as plt\n"
	           "plt.plot([1, 3, 2], label='line')\nplt.title(r'growth $\\alpha^2$')\n"
	           "plt.legend()\nplt.show()\n"
	           "fig, ax = plt.subplots(figsize=(4, 3))\nax.bar(['a', 'b'], [3, 4])\n"
	           "len(plt.get_fignums())");
	e2e_assert_result(r, "figures", "1");
	cr_assert_eq(json_object_array_length(e2e_member(mcpc_result(r), "content")), 3, "%s",
	             mcpc_text(r));
	assert_png_item(r, 1, &w, &h);
	assert_png_item(r, 2, &w, &h);
	cr_assert(strstr(mcpc_text(r), "[figure 2: "), "%s", mcpc_text(r));
	e2e_expect_result("import matplotlib.pyplot as plt\nplt.get_fignums()", "[]");
	/* show_figures gives the last call's images again: it drew none. */
	again =
	    e2e_hold(mcpc_request(&e2e_srv, "tools/call",
	                          json_tokener_parse("{\"name\":\"show_figures\"}"), E2E_CALL_MS));
	cr_assert_not_null(again);
	cr_assert_null(e2e_member(mcpc_result(again), "structuredContent"));
	cr_assert(strstr(mcpc_text(again), "No figures"), "%s", mcpc_json(again));
	/* A figure too big is drawn smaller; savefig into memory works. */
	r = e2e_ok("import io, matplotlib.pyplot as plt\n"
	           "fig = plt.figure(figsize=(40, 30))\nplt.plot(range(100))\n"
	           "buf = io.BytesIO()\nfig.savefig(buf, format='png', dpi=20)\n"
	           "buf.getvalue()[:8]");
	assert_png_item(r, 1, &w, &h);
	cr_assert(w > 1000 && w <= RUN_IMAGE_SIDE_MAX, "width %u", w);
	e2e_assert_result(r, "savefig", "null");
	cr_assert(strstr(mcpc_sc_str(r, "result_repr"), "PNG"), "%s", mcpc_json(r));
	again =
	    e2e_hold(mcpc_request(&e2e_srv, "tools/call",
	                          json_tokener_parse("{\"name\":\"show_figures\"}"), E2E_CALL_MS));
	cr_assert_not_null(again);
	cr_assert_str_eq(
	    json_object_get_string(e2e_member(
	        json_object_array_get_idx(e2e_member(mcpc_result(again), "content"), 1), "data")),
	    json_object_get_string(e2e_member(
	        json_object_array_get_idx(e2e_member(mcpc_result(r), "content"), 1), "data")),
	    "show_figures gave other bytes");
	/* More figures than a call returns: the first ones, and a note saying so. */
	r = e2e_ok("import matplotlib.pyplot as plt\n"
	           "for i in range(11):\n    plt.figure(figsize=(2, 2))\n    plt.plot([i, 0])\n");
	sc = mcpc_structured(r);
	cr_assert_eq(json_object_array_length(e2e_member(sc, "images")), RUN_IMAGES_MAX);
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "3 figure(s) not returned"), "%s",
	          mcpc_sc_str(r, "stderr"));
	e2e_stop();
}

/* PDF, SVG and EPS, with mathtext and text beyond ASCII: the PDF and PostScript backends
 * embed a subset of each font (read from memory), and pyplot switches to any of them. A GUI
 * backend is an ImportError, as on a machine with no display (Tk's start read files: the
 * call was killed by the sandbox). */
/* A figure an earlier call made (and showed: it was closed then), changed and given as a later
 * call's value, is shown again, as a notebook shows it; another value shows nothing. */
Test(data, a_figure_given_as_the_value_is_shown_again)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok(
	    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 3, 2])\n1");
	images_are(r, 1);
	r = e2e_ok("ax.set_title('changed later')\nfig");
	images_are(r, 1);
	r = e2e_ok("ax.get_title()");
	e2e_assert_result(r, "title", "\"changed later\"");
	images_are(r, 0);
	e2e_stop();
}

/* A seaborn.objects Plot is shown as a notebook shows it: as the call's value, or given to
 * display() (it came back as its repr only, with no image and no word of why). */
Test(data, a_seaborn_objects_plot_is_shown_as_a_value_and_by_display)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import pandas as pd, seaborn.objects as so\n"
	           "df = pd.DataFrame({'x': [1, 2, 3], 'y': [3, 1, 2]})\n"
	           "p = so.Plot(df, x='x', y='y').add(so.Line())\np");
	images_are(r, 1);
	r = e2e_ok("display(p)\ndisplay(p.add(so.Dot()))\n1");
	images_are(r, 2);
	r = e2e_ok("len(p._layers)");
	images_are(r, 0);
	e2e_stop();
}

/* What a figure's author meets says what to do: text.usetex (latex cannot run) says so and
 * points at mathtext (it was a PermissionError naming the server's cache directory), and
 * plt.show() with no open figure (one an earlier call drew was closed with it) says how to
 * show it again (it said nothing). */
Test(data, figure_messages_say_what_to_do)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import matplotlib.pyplot as plt\nplt.rcParams['text.usetex'] = True\n"
	           "plt.plot([1, 2])\nplt.title(r'$\\alpha$')\n"
	           "try:\n    plt.show()\nexcept RuntimeError as e:\n    m = str(e)\n"
	           "plt.rcParams['text.usetex'] = False\n"
	           "fig, ax = plt.subplots()\nax.plot([1, 2])\n"
	           "['LaTeX is not available' in m, 'mathtext' in m, '.cache' in m]");
	e2e_assert_result(r, "usetex", "[true,true,false]");
	r = e2e_ok("ax.set_title('changed')\nplt.show()\n1");
	images_are(r, 0);
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "[plt.show(): no open figure."), "%s",
	          mcpc_json(r));
	r = e2e_ok("fig");
	images_are(r, 1);
	e2e_stop();
}

/* A figure that cannot be drawn (a typo in its mathtext) loses only itself: left open at the
 * call's end it is said on stderr, shown with plt.show() its error is raised there, and the
 * other figures of the call come back either way (every image of the call was lost). */
Test(data, a_figure_that_cannot_be_drawn_loses_only_itself)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n"
	           "fig, ax = plt.subplots()\nax.set_title(r'$\\badcommand$')\n"
	           "fig3, ax3 = plt.subplots()\nax3.plot([3, 1])\n1");
	images_are(r, 2);
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "not returned: ValueError"), "%s", mcpc_json(r));
	r = e2e_ok("f1, a1 = plt.subplots()\na1.plot([1, 2])\n"
	           "f2, a2 = plt.subplots()\na2.set_title(r'$\\badcommand$')\n"
	           "f3, a3 = plt.subplots()\na3.plot([3, 1])\n"
	           "try:\n    plt.show()\n    raised = None\nexcept ValueError as e:\n"
	           "    raised = type(e).__name__\n[raised, plt.get_fignums()]");
	e2e_assert_result(r, "shown", "[\"ValueError\",[]]");
	images_are(r, 2);
	e2e_stop();
}

/* A figure with nothing drawn on it, left open at the call's end (plt.draw() after plt.show(),
 * which closed the figure it showed, or a bare plt.figure()), is no image, as a notebook shows
 * none; a figure with only a title or only empty axes is one. */
Test(data, a_blank_figure_left_open_is_no_image)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nplt.draw()\n"
	           "plt.figure()\n1");
	images_are(r, 1);
	r = e2e_ok("plt.figure().suptitle('a title')\nfig, ax = plt.subplots()\nplt.gcf()\n"
	           "plt.get_fignums()");
	e2e_assert_result(r, "numbers", "[1,2]");
	images_are(r, 2);
	e2e_stop();
}

Test(data, figures_save_as_pdf_svg_and_eps)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import io, matplotlib.pyplot as plt\n"
	           "plt.plot([1, 3, 2])\nplt.title(r'growth $\\alpha^2$ \u00dcn\u00ef \u03c9')\n"
	           "out = []\n"
	           "for fmt in ('pdf', 'svg', 'eps'):\n"
	           "    b = io.BytesIO()\n"
	           "    plt.savefig(b, format=fmt)\n"
	           "    out.append((fmt, b.getvalue()[:5], len(b.getvalue()) > 3000))\n"
	           "plt.close('all')\n"
	           "for name in ('svg', 'pdf', 'agg'):\n"
	           "    plt.switch_backend(name)\n"
	           "    fig = plt.figure()\n"
	           "    out.append((plt.get_backend(), type(fig.canvas).__name__))\n"
	           "    plt.close(fig)\n"
	           "import matplotlib\n"
	           "plt.switch_backend('svg')\n"
	           "plt.switch_backend('TkAgg')\n"
	           "out.append(('tk', plt.get_backend()))\n"
	           "plt.switch_backend('svg')\n"
	           "matplotlib.use('QtAgg')\n"
	           "out.append(('qt', matplotlib.get_backend()))\n"
	           "plt.plot([2, 1])\nplt.show()\nout");
	cr_assert_str_eq(
	    mcpc_sc_str(r, "result_repr"),
	    "[('pdf', b'%PDF-', True), ('svg', b'<?xml', True), "
	    "('eps', b'%!PS-', True), ('svg', 'FigureCanvasSVG'), "
	    "('pdf', 'FigureCanvasPdf'), ('agg', 'FigureCanvasAgg'), ('tk', 'agg'), ('qt', 'agg')]",
	    "%s", mcpc_json(r));
	/* A backend that draws in a window draws with Agg, saying so; plt.show() after the
	 * switches still gives the figure as an image. */
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "TkAgg draws with Agg"), "%s", mcpc_json(r));
	images_are(r, 1);
	e2e_stop();
}

/* rcParams['pdf.fonttype'] = 42 (TrueType embedded, text editable in the PDF) failed every
 * savefig with a PermissionError naming the font's file (the backend stat'ed it to log its
 * size). The PDF is made now, as the host's matplotlib makes it: the fonts embedded as
 * /FontFile2 in CID fonts, none as Type 3; the default Type 3 still embeds no TrueType.
 * ps.fonttype 42 has matplotlib's C converter read a temporary file, which a worker cannot
 * make: it says so instead of naming the font. input() exists in data mode too. */
Test(data, pdf_with_truetype_fonts_is_made)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok(
	    "import io, re, matplotlib\nimport matplotlib.pyplot as plt\n"
	    "def pdf(fonttype, save):\n"
	    "    matplotlib.rcParams['pdf.fonttype'] = fonttype\n"
	    "    fig, ax = plt.subplots()\n"
	    "    ax.plot([1, 2, 3])\n    ax.set_title('Hello $x^2$')\n"
	    "    b = io.BytesIO()\n"
	    "    (plt.savefig if save == 'plt' else fig.savefig)(b, format='pdf')\n"
	    "    plt.close(fig)\n"
	    "    b = b.getvalue()\n"
	    "    return [b[:5].decode(), b.count(b'/FontFile2'), b.count(b'/CIDFontType2'),\n"
	    "            b.count(b'/Type3'), len(set(re.findall(rb'/BaseFont /(\\w+)', b)))]\n"
	    "[pdf(42, 'fig'), pdf(42, 'plt'), pdf(3, 'fig')]");
	e2e_assert_result(r, "pdf.fonttype",
	                  "[[\"%PDF-\",2,2,0,2],[\"%PDF-\",2,2,0,2],[\"%PDF-\",0,0,2,2]]");
	r = e2e_expect_error("import io, matplotlib\nimport matplotlib.pyplot as plt\n"
	                     "matplotlib.rcParams['ps.fonttype'] = 42\nplt.plot([1])\n"
	                     "plt.savefig(io.BytesIO(), format='ps')",
	                     "RuntimeError");
	cr_assert(strstr(mcpc_json(r), "ps.fonttype 3 (the default)"), "%s", mcpc_json(r));
	e2e_expect_result("import io, matplotlib\nimport matplotlib.pyplot as plt\n"
	                  "matplotlib.rcParams['ps.fonttype'] = 3\nplt.plot([1])\n"
	                  "b = io.BytesIO()\nplt.savefig(b, format='ps')\nplt.close('all')\n"
	                  "b.getvalue()[:4].decode()",
	                  "\"%!PS\"");
	e2e_expect_result("try:\n    input('x')\nexcept EOFError as e:\n    r = str(e)\n"
	                  "'without a console' in r",
	                  "true");
	e2e_stop();
}

/* The traceback of an error in pandas showed its frames without their source lines (a worker
 * opens no file). They are shown now, as CPython shows them, read by the supervisor from the
 * installed package as a late import would be; frames of compiled code show none, as
 * CPython's. */
Test(data, traceback_shows_library_source_lines)
{
	json_object *r;
	const char *tb;

	start_data(NULL);
	r = e2e_expect_error("import pandas as pd\npd.DataFrame({'a': [1]})['b']", "KeyError");
	tb = mcpc_err_str(r, "traceback");
	cr_assert(tb && strstr(tb, "/pandas/core/frame.py\", line 3807, in __getitem__\n"
	                           "    indexer = self.columns.get_loc(key)\n"
	                           "              ^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \""),
	          "%s", mcpc_json(r));
	cr_assert(strstr(tb, "/pandas/core/indexes/base.py\", line 3804, in get_loc\n"
	                     "    raise KeyError(key) from err\nKeyError: 'b'\n"),
	          "%s", mcpc_json(r));
	cr_assert(strstr(tb, ", in pandas._libs.index.IndexEngine.get_loc\n  File \""), "%s",
	          mcpc_json(r));
	e2e_expect_result("import pandas as pd\npd.DataFrame({'a': [1]})['a'].tolist()", "[1]");
	e2e_stop();
}

/* What data code writes every day, each of which failed in a worker: a value set on a frame
 * taken from another (pandas asked gc.get_referents), time zones by name (their files),
 * bold or serif text and an integral in a figure (matplotlib rebuilt its font list from the
 * disk), dates on a pandas plot (matplotlib.pylab's import *), plt.cm / plt.style / np.char /
 * pd.offsets (modules a module holds), sympy's nsolve (mpmath), eigsh (the extension's
 * namespace), L-BFGS-B (getrusage), differential_evolution (multiprocessing's import), qhull's
 * ConvexHull, Delaunay, griddata (a message stream on a temporary file). */
Test(data, everyday_data_code_works)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import pandas as pd\n"
	           "df = pd.DataFrame({'x': [1, -2, 3], 'y': [0, 0, 0]})\n"
	           "sub = df[df.x > 0]\nsub['y'] = 1\n"
	           "list(sub.y), list(df.y)");
	e2e_assert_result(r, "a copy's column", "[[1,1],[0,0,0]]");
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "SettingWithCopyWarning"), "%s", mcpc_json(r));
	e2e_expect_result(
	    "import pandas as pd\n"
	    "a = pd.Timestamp('2024-07-01 12:00', tz='Europe/Paris')\n"
	    "b = pd.Timestamp('2024-01-01', tz='dateutil/Asia/Tokyo')\n"
	    "s = pd.Series(pd.date_range('2024-03-30', periods=3, tz='europe/london'))\n"
	    "[str(a.tz_convert('US/Eastern')), b.utcoffset().total_seconds(),\n"
	    " str(s.dt.tz_convert('UTC').iloc[-1])]",
	    "[\"2024-07-01 06:00:00-04:00\",32400.0,\"2024-03-31 23:00:00+00:00\"]");
	r = e2e_ok("import matplotlib.pyplot as plt, pandas as pd, numpy as np\n"
	           "plt.style.use('ggplot')\n"
	           "plt.plot([1, 2], color=plt.cm.viridis(0.5))\n"
	           "plt.title('Growth', fontweight='bold', fontsize=16)\n"
	           "plt.xlabel('time', family='serif')\nplt.ylabel(r'$\\int_0^t f(s)\\,ds$')\n"
	           "plt.show()\n"
	           "df = pd.DataFrame({'date': pd.date_range('2024-01-01', periods=30),\n"
	           "                   'v': np.arange(30)})\n"
	           "df.set_index('date').v.plot()\nplt.show()\n"
	           "[list(np.char.upper(['a'])), str(pd.offsets.Day(2)), plt.cm.viridis.name]");
	e2e_assert_result(r, "figures", "[[\"A\"],\"<2 * Days>\",\"viridis\"]");
	images_are(r, 2);
	e2e_expect_result(
	    "import sympy, numpy as np, scipy.sparse as sp\n"
	    "from scipy.sparse.linalg import eigsh\n"
	    "from scipy.optimize import minimize, differential_evolution\n"
	    "x = sympy.Symbol('x')\n"
	    "de = differential_evolution(lambda v: (v ** 2).sum(), [(-1, 1)] * 2,\n"
	    "                            maxiter=20, seed=1)\n"
	    "[str(sympy.nsolve(x ** 2 - 2, x, 1))[:6],\n"
	    " sorted(np.round(eigsh(sp.diags([1.0, 2, 3, 4, 5]), k=2)[0], 6).tolist()),\n"
	    " minimize(lambda v: ((v - 3) ** 2).sum(), [0, 0],\n"
	    "          method='L-BFGS-B').x.round(3).tolist(), bool(de.fun < 1e-3)]",
	    "[\"1.4142\",[4.0,5.0],[3.0,3.0],true]");
	/* qhull's message stream (a temporary file in this build of scipy) crashed the worker. */
	e2e_expect_result("import numpy as np\n"
	                  "from scipy.spatial import ConvexHull, Delaunay, Voronoi\n"
	                  "from scipy.interpolate import griddata\n"
	                  "pts = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.4]])\n"
	                  "[ConvexHull(pts).volume, len(Delaunay(pts).simplices),\n"
	                  " len(Voronoi(pts).vertices) > 0,\n"
	                  " griddata(pts, pts[:, 0], [[0.25, 0.25]]).round(3).tolist()]",
	                  "[1.0,4,true,[0.25]]");
	e2e_stop();
}

/* seaborn's plots (its statistics: scipy.stats, imported with it in the zygote) and the
 * markdown tables pandas prints with tabulate, as data code asks for them. */
Test(data, seaborn_plots_and_markdown_tables)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import seaborn as sns, pandas as pd, numpy as np, matplotlib.pyplot as plt\n"
	           "sns.set_theme(style='whitegrid')\n"
	           "rng = np.random.default_rng(0)\n"
	           "df = pd.DataFrame({'x': rng.normal(size=200), 'g': ['a', 'b'] * 100})\n"
	           "df['y'] = 2 * df.x + rng.normal(size=200)\n"
	           "fig, ax = plt.subplots(1, 4, figsize=(12, 3))\n"
	           "sns.histplot(data=df, x='x', kde=True, ax=ax[0])\n"
	           "sns.scatterplot(data=df, x='x', y='y', hue='g', ax=ax[1])\n"
	           "sns.heatmap(df[['x', 'y']].corr(), annot=True, ax=ax[2])\n"
	           "sns.boxplot(data=df, x='g', y='y', ax=ax[3])\n"
	           "plt.show()\n"
	           "sns.regplot(data=df, x='x', y='y')\n"
	           "plt.show()\n"
	           "print(df.groupby('g').size().to_frame('n').to_markdown())\n"
	           "from tabulate import tabulate\n"
	           "tabulate([[1, 2.5]], headers=['a', 'b'], tablefmt='github')");
	e2e_assert_result(r, "tables", "\"|   a |   b |\\n|-----|-----|\\n|   1 | 2.5 |\"");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"),
	                 "| g   |   n |\n|:----|----:|\n| a   | 100 |\n| b   | 100 |\n", "%s",
	                 mcpc_json(r));
	images_are(r, 2);
	e2e_stop();
}

/* Laid-out figures: tight_layout and the layout engines read a bound method's
 * __kwdefaults__ (self.set.__kwdefaults__: the function's own, through the method), which an
 * earlier rule refused as a read of a function not on the library's stack; every seaborn
 * figure-level plot calls tight_layout. */
Test(data, figures_are_laid_out)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import matplotlib.pyplot as plt, seaborn as sns, pandas as pd\n"
	           "fig, ax = plt.subplots()\n"
	           "ax.plot([1, 2, 3])\n"
	           "ax.set_ylabel('a long label\\non two lines')\n"
	           "plt.tight_layout()\n"
	           "fig2, ax2 = plt.subplots(layout='constrained')\n"
	           "ax2.plot([3, 1])\n"
	           "g = sns.pairplot(pd.DataFrame({'a': [1, 2, 3, 4], 'b': [2, 1, 4, 3]}))\n"
	           "[fig.subplotpars.left != 0.125, type(fig2.get_layout_engine()).__name__,\n"
	           " fig.subplotpars.bottom != 0.11, len(g.axes)]");
	e2e_assert_result(r, "layouts", "[true,\"ConstrainedLayoutEngine\",true,2]");
	images_are(r, 3);
	e2e_stop();
}

/* What notebook code does: display() of a frame (its repr printed), of a figure and of a
 * picture (images of the result, as Image.show() makes one too), TrueType fonts by their name
 * or their system path (FreeType opened the file itself: "cannot open resource"), an enum's
 * __members__. */
Test(data, notebook_habits_work)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok(
	    "import pandas as pd, matplotlib.pyplot as plt, enum\n"
	    "from PIL import Image, ImageDraw, ImageFont\n"
	    "class Color(enum.Enum):\n"
	    "    RED = 1\n"
	    "    BLUE = 2\n"
	    "display(pd.DataFrame({'a': [1, 2]}), 'text')\n"
	    "fig, ax = plt.subplots()\n"
	    "ax.plot([1, 2])\n"
	    "display(fig)\n"
	    "im = Image.new('RGB', (120, 40), 'white')\n"
	    "font = ImageFont.truetype('DejaVuSans.ttf', 20)\n"
	    "bold = ImageFont.truetype('/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf', "
	    "12)\n"
	    "ImageDraw.Draw(im).text((4, 4), 'Hi', font=font, fill='black')\n"
	    "im.show()\n"
	    "[font.getname(), bold.font_variant(size=30).getname(), font.getbbox('Hi'),\n"
	    " list(Color.__members__), im.getbbox() is not None, plt.get_fignums()]");
	e2e_assert_result(r, "notebook",
	                  "[[\"DejaVu Sans\",\"Book\"],[\"DejaVu Sans\",\"Bold\"],[0,4,21,19],"
	                  "[\"RED\",\"BLUE\"],true,[]]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "   a\n0  1\n1  2\n'text'\n", "%s",
	                 mcpc_json(r));
	images_are(r, 2);
	e2e_stop();
}

/* Memory the data stack's C code took as given: numpy's ndarray(buffer=...) took a negative
 * offset (the array began before the buffer) and released the buffer's export at once (a
 * bytearray cleared after left the array over freed memory: a bytearray's header laid there,
 * any memory), as `a.data = buffer` did; PIL's frombuffer a stride shorter than a row (each
 * row ran past the buffer); scipy's LowLevelCallable any capsule labelled as any function
 * (datetime's C interface called: SIGSEGV), also when wrapped in another; a PeriodArray's
 * asfreq walked an int64 view of a -1 byte stride 8 bytes a step (below its memory, when
 * longer); pandas' take kernels an index past the values
 * (take_nd, or a Categorical's codes changed in place: SIGSEGV); gradient boosting's compiled
 * prediction its nodes' links as they were set. Each is refused with a clear error, and the
 * same functions used as meant answer as before. */
Test(data, memory_handed_to_compiled_code_is_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, datetime\n"
	    "from PIL import Image\n"
	    "from scipy import LowLevelCallable as L\n"
	    "import scipy.integrate as integ\n"
	    "from pandas.core.algorithms import take_nd\n"
	    "from pandas.core.array_algos import take\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor as H\n"
	    "from numpy.lib.stride_tricks import as_strided\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "x = np.arange(64, dtype=np.int64)\n"
	    "v = as_strided(x[-1:], shape=(57,), strides=(-1,))\n"
	    "r = [t(lambda: np.ndarray(8, np.uint8, buffer=b\"x\", offset=-7)),\n"
	    "     t(lambda: np.zeros(4, np.uint8).__setattr__('data', bytearray(4))),\n"
	    "     t(lambda: Image.frombuffer(\"L\", (1 << 26, 1), b\"a\", \"raw\", \"L\", 1, 1)),\n"
	    "     t(lambda: integ.quad(L(datetime.datetime_CAPI, signature=\"double (double)\"), "
	    "0, 1)),\n"
	    "     t(lambda: integ.quad(L(L(datetime.datetime_CAPI), signature=\"double "
	    "(double)\"), 0, 1)),\n"
	    "     t(lambda: bool((pd.arrays.PeriodArray(v, freq='D').asfreq('D', 'S').asi8 ==\n"
	    "                     np.ascontiguousarray(v)).all())),\n"
	    "     t(lambda: take_nd(np.arange(4), np.array([1 << 40]), allow_fill=False)),\n"
	    "     t(lambda: take.take_1d(np.arange(4), np.array([9]), allow_fill=False)),\n"
	    "     t(lambda: take.take_2d_multi(np.ones((2, 2)), (np.array([0]), np.array([7]))))]\n"
	    "c = pd.Categorical(np.array([\"a\"] * 3))\n"
	    "c._ndarray[0] = 100\n"
	    "r.append(t(lambda: c.astype(str)))\n"
	    "X = np.arange(200.)[:, None]\n"
	    "m = H(max_iter=1).fit(X, X[:, 0])\n"
	    "nodes = m._predictors[0][0].nodes\n"
	    "saved = nodes['left'].copy()\n"
	    "nodes['left'][:] = 10**8\n"
	    "r.append(t(lambda: m.predict(X)))\n"
	    "nodes['left'][:] = saved\n"
	    "b = bytearray(1 << 20)\n"
	    "a = np.ndarray(1 << 20, np.uint8, buffer=b)\n"
	    "r.append(t(lambda: b.clear()))\n"
	    "a[-1] = 7\n"
	    "r.append([len(b), b[-1]])\n"
	    "# ordinary use\n"
	    "im = Image.frombuffer(\"L\", (4, 2), bytes(range(8)), \"raw\", \"L\", 0, 1)\n"
	    "im2 = Image.frombuffer(\"RGBA\", (2, 1), bytes(range(8)), \"raw\", \"RGBA\", 8, 1)\n"
	    "r += [list(im.getdata()), im2.getpixel((1, 0)), round(float(m.predict(X)[5]), 3),\n"
	    "      take_nd(np.arange(4), np.array([3, -1, 0]), fill_value=-9).tolist(),\n"
	    "      pd.Series([1, 2, 3]).take([2, 0]).tolist(), pd.Categorical(['b', 'a', "
	    "'b']).astype(str).tolist(),\n"
	    "      pd.DataFrame({'a': [1, 2], 'b': [True, False]}).reindex([1, 0, "
	    "5]).fillna(0).values.tolist(),\n"
	    "      integ.quad(lambda x: x * x, 0, 1)[0] > 0.33]\n"
	    "r",
	    "[\"ValueError\",\"AttributeError\",\"ValueError\",\"ValueError\",\"ValueError\",true,"
	    "\"IndexError\",\"IndexError\",\"IndexError\",\"IndexError\",\"ValueError\","
	    "\"BufferError\","
	    "[1048576,7],[0,1,2,3,4,5,6,7],[4,5,6,7],90.75,[3,-9,0],[3,1],[\"b\",\"a\",\"b\"],"
	    "[[2.0,false],[1.0,true],[0.0,0]],true]");
	e2e_stop();
}

/* Gradient boosting's compiled prediction reads word c // 32 of a category set's row for
 * category c (up to 255): sets of one word a row had 28 bytes past the last row read back, a
 * bit a sample (another array's bytes, V89a). Each set (raw, binned, known) is 8 words a row;
 * predictions with categorical features are the host's. */
Test(data, gradient_boosting_category_sets_are_eight_words_a_row)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor as H\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.randint(0, 4, size=(200, 1)).astype(float); y = (X[:, 0] == 2).astype(float)\n"
	    "m = H(max_iter=5, categorical_features=[0]).fit(X, y)\n"
	    "p = m._predictors[0][0]\n"
	    "TreePredictor = type(p)\n"
	    "nodes = np.zeros(3, dtype=p.nodes.dtype)\n"
	    "nodes[0]['is_categorical'] = 1; nodes[0]['left'] = 1; nodes[0]['right'] = 2\n"
	    "nodes[0]['bitset_idx'] = 3\n"
	    "nodes[1]['is_leaf'] = 1; nodes[1]['value'] = 1.0\n"
	    "nodes[2]['is_leaf'] = 1\n"
	    "q = TreePredictor(nodes, np.zeros((4, 1), np.uint32), np.zeros((4, 1), np.uint32))\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except ValueError as e:\n"
	    "        return str(e).split(' should')[0]\n"
	    "cats = np.arange(256, dtype=np.float64).reshape(-1, 1)\n"
	    "known = np.full((1, 8), 0xFFFFFFFF, dtype=np.uint32)\n"
	    "r = [t(lambda: q.predict(cats, known, np.array([0], np.uint32), 1)),\n"
	    "     t(lambda: q.predict_binned(cats.astype(np.uint8), 255, 1)),\n"
	    "     t(lambda: p.predict(cats, np.full((1, 1), 0xFFFFFFFF, np.uint32), np.array([0], "
	    "np.uint32), 1))]\n"
	    "r + [np.round(m.predict(np.array([[0.], [2.]])), 3).tolist()]",
	    "[\"raw_left_cat_bitsets\",\"binned_left_cat_bitsets\",\"known_cat_bitsets\","
	    "[0.142,0.551]]");
	e2e_stop();
}

/* PIL's C image (an Image's .im) was the user's: expand(-1, 0) copied rows before and past the
 * new image's memory (the worker crashed; laid over a list, any memory was written). A tile of
 * an opened image set at a negative x had the decoder write the file's bytes before the image,
 * a BoxBlur of negative radius ran its window out of the rows, frombytes with a codec of the
 * user's choosing took its arguments unchecked. The C image is PIL's own, a tile lies inside
 * its image, a radius is not below 0, frombytes decodes 'raw' and 'hex'; the Image's methods
 * do the same work as before. matplotlib's restore_region put a box at 2**31 - 1 and wrapped
 * round outside the canvas; resample of an empty array divided by zero. */
Test(data, pil_core_and_codecs_take_only_what_fits)
{
	start_data(NULL);
	e2e_expect_result(
	    "from PIL import Image, ImageFilter\n"
	    "import io\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        out.append(repr(f()))\n"
	    "    except (AttributeError, ValueError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "im = Image.new('L', (64, 4), 7)\n"
	    "t(lambda: im.im.expand(-1, 0))\n"
	    "t(lambda: im.im.expand(0, -1))\n"
	    "t(lambda: getattr(im.getdata(), 'unsafe_ptrs'))\n"
	    "buf = io.BytesIO()\n"
	    "Image.new('L', (600, 1), 9).save(buf, 'BMP')\n"
	    "op = Image.open(io.BytesIO(buf.getvalue()))\n"
	    "op.tile = [('raw', (-64, 0, 536, 1), op.tile[0][2], ('L', 0, 1))]\n"
	    "t(op.load)\n"
	    "t(lambda: im.filter(ImageFilter.BoxBlur(-70000)).getpixel((0, 0)))\n"
	    "t(lambda: im.frombytes(b'\\x80' * 1000, 'sgi_rle', ('RGB', 2, 1)))\n"
	    "ok = Image.open(io.BytesIO(buf.getvalue()))\n"
	    "ok.load()\n"
	    "t(lambda: [ok.getpixel((599, 0)), im.resize((8, 2)).getpixel((1, 1)),\n"
	    "           im.filter(ImageFilter.BoxBlur(2)).getpixel((3, 3)), "
	    "len(list(im.getdata())),\n"
	    "           Image.frombytes('L', (2, 1), b'\\x01\\x02').getpixel((1, 0))])\n"
	    "import matplotlib.pyplot as plt, matplotlib.image as mi, numpy as np\n"
	    "from matplotlib.transforms import IdentityTransform\n"
	    "fig = plt.figure(figsize=(2, 2), dpi=50)\n"
	    "fig.canvas.draw()\n"
	    "r = fig.canvas.get_renderer()._renderer\n"
	    "reg = r.copy_from_bbox(fig.bbox)\n"
	    "t(lambda: r.restore_region(reg, 0, 0, 100, 100, 2**31 - 1, 2**31 - 1))\n"
	    "t(lambda: r.restore_region(reg, 0, 0, 50, 50, 10, 10))\n"
	    "t(lambda: r.restore_region(reg))\n"
	    "t(lambda: mi.resample(np.ones((0, 10)), np.zeros((10, 10)), IdentityTransform()))\n"
	    "plt.close('all')\n"
	    "out",
	    "[\"AttributeError\",\"AttributeError\",\"AttributeError\",\"ValueError\",\"7\","
	    "\"ValueError\",\"[9, 7, 7, 256, "
	    "2]\",\"ValueError\",\"None\",\"None\",\"ValueError\"]");
	/* PIL's own code handed the C image the user's values: Image._expand and RankFilter a
	 * negative margin, frombytes and tobytes a codec of the mode attribute the code set over a
	 * C image of another (4 bytes a pixel into rows of 1), a font's getmask2 its fill='s image
	 * address (and the C font's render any address), ImageMath an operand's image set again
	 * after its check; UnsharpMask's radius reached the blur unclamped. */
	e2e_expect_result(
	    "from PIL import Image, ImageFilter, ImageFont, ImageMath\n"
	    "out, filled = [], []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        out.append(repr(f()))\n"
	    "    except (AttributeError, ValueError, TypeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "im = Image.new('L', (8, 4), 7)\n"
	    "t(lambda: im._expand(-16, 0))\n"
	    "class Size:\n"
	    "    def __floordiv__(self, n):\n"
	    "        return -16\n"
	    "rank = ImageFilter.RankFilter(3, 0)\n"
	    "rank.size = Size()\n"
	    "t(lambda: im.filter(rank))\n"
	    "m = Image.new('L', (8, 74))\n"
	    "m.mode = 'RGBA'\n"
	    "t(lambda: m.frombytes(b'A' * (8 * 74 * 4)))\n"
	    "t(lambda: len(m.tobytes()))\n"
	    "font = ImageFont.truetype('DejaVuSans.ttf', 20)\n"
	    "class Fake:\n"
	    "    id = 0x4141414141\n"
	    "def fill(mode, size, color):\n"
	    "    filled.append(mode)\n"
	    "    return Fake()\n"
	    "t(lambda: font.getmask2('A', fill=fill))\n"
	    "t(lambda: font.font.render('A', 0x4141414141, 'L'))\n"
	    "class Core:\n"
	    "    id = 0x4141414141\n"
	    "    mode, size = 'I', (4, 4)\n"
	    "class Img:\n"
	    "    im = Core()\n"
	    "    mode, size = 'I', (4, 4)\n"
	    "    def load(self):\n"
	    "        pass\n"
	    "def f(op):\n"
	    "    op.im = Img()\n"
	    "    return op + op\n"
	    "t(lambda: ImageMath.eval('f(a)', f=f, a=Image.new('L', (4, 4))))\n"
	    "t(lambda: im.filter(ImageFilter.UnsharpMask(radius=-2**31)).size)\n"
	    "t(lambda: [font.getmask('A').size, im.filter(ImageFilter.MaxFilter(3)).size,\n"
	    "           Image.new('L', (2, 1), 5).tobytes()])\n"
	    "out + [filled]",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"TypeError\","
	    "\"AttributeError\",\"TypeError\",\"(8, 4)\",\"[(14, 15), (8, 4), "
	    "b'\\\\x05\\\\x05']\",[]]");
	/* Tiles the code sets name a codec and arguments PIL's plugins trusted (pcd writes RGB into
	 * any mode, a jpeg tile narrower than its lines): they decode with 'raw' or 'hex' only, and
	 * what the code reads of an opened image's tiles is a copy. ImageCms wrote the pixels of
	 * the modes a transform was built for into images of others, ImageMath an operation's
	 * pixels into a result of the mode the code named. ImageMath's integer division of INT_MIN
	 * by -1 trapped (SIGFPE, the host's too): it gives what the division wraps to. */
	e2e_expect_result(
	    "from PIL import Image, ImageCms, ImageMath\n"
	    "import io\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        out.append(repr(f()))\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:30])\n"
	    "b = io.BytesIO()\n"
	    "Image.new('L', (600, 20), 3).save(b, 'BMP')\n"
	    "im = Image.open(io.BytesIO(b.getvalue()))\n"
	    "im.tile = [('pcd', (0, 0, 21, 8), 0, None)]\n"
	    "t(im.load)\n"
	    "ok = Image.open(io.BytesIO(b.getvalue()))\n"
	    "ok.tile[0] = ('jpeg', (0, 0, 8, 20), 0, ('L', ''))\n"
	    "t(lambda: [ok.tile[0][0], ok.load() is not None, ok.getpixel((599, 19))])\n"
	    "srgb = ImageCms.createProfile('sRGB')\n"
	    "tr = ImageCms.buildTransform(srgb, srgb, 'RGBA', 'RGBA',\n"
	    "                             flags=ImageCms.FLAGS['NULLTRANSFORM'])\n"
	    "t(lambda: tr.apply(Image.new('RGBA', (4, 4)), Image.new('L', (4, 4))))\n"
	    "t(lambda: tr.apply(Image.new('RGBA', (4, 4), 'red')).getpixel((0, 0)))\n"
	    "def f(a, b):\n"
	    "    return a.apply('add', a, b, 'L')\n"
	    "I = Image.new('I', (4, 4), 5)\n"
	    "t(lambda: ImageMath.eval('f(a, b)', f=f, a=I, b=I))\n"
	    "t(lambda: ImageMath.eval('a + b', a=I, b=I).getpixel((0, 0)))\n"
	    "a = Image.new('I', (3, 1))\na.putdata([-2**31, 7, -9])\n"
	    "b = Image.new('I', (3, 1))\nb.putdata([-1, -1, 2])\n"
	    "for e in ('a / b', 'a % b', 'a / -1', 'a % -1'):\n"
	    "    t(lambda: list(ImageMath.eval(e, a=a, b=b).getdata()))\n"
	    "out",
	    "[\"tiles the code sets decode wit\",\"['raw', True, 3]\","
	    "\"this transform takes RGBA imag\",\"(255, 0, 0, 255)\","
	    "\"ImageMath's operations make an\",\"10\",\"[-2147483648, -7, -4]\","
	    "\"[0, 0, -1]\",\"[-2147483648, -7, 9]\",\"[0, 0, 0]\"]");
	/* Boxes are C ints whose sizes the C code works out in int: a paste box from 2**31-1 to
	 * past 2**32 wrapped round to a width of 8 and wrote before the image's rows (row 1's
	 * paste landed in row 0); fills and crops the same. */
	e2e_expect_result(
	    "from PIL import Image\nM = 2**31 - 1\nout = []\n"
	    "dst = Image.new('RGBA', (16, 4), (1, 2, 3, 4))\n"
	    "src = Image.new('RGBA', (8, 1), (65, 65, 65, 65))\n"
	    "def t(f):\n    try:\n        f()\n        out.append('ran')\n"
	    "    except ValueError:\n        out.append('ValueError')\n"
	    "t(lambda: dst.paste(src, (M, 1, M + 8 - 2**32, 2)))\n"
	    "t(lambda: dst.paste((65, 65, 65, 65), (M, 1, M + 8 - 2**32, 2)))\n"
	    "t(lambda: dst.crop((-M, 0, 4 - M, 1)).load())\n"
	    "t(lambda: dst.reduce(2, (M, 0, M + 8 - 2**32, 2)))\n"
	    "dst.paste(src, (-4, 1))\ndst.paste((9, 9, 9, 9), (0, 3, 2, 4))\n"
	    "out + [dst.getpixel((15, 0)), dst.getpixel((3, 1)), dst.getpixel((4, 1)),\n"
	    "       dst.getpixel((1, 3)), dst.crop((-2, -2, 2, 2)).getpixel((0, 0))]",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",[1,2,3,4],[65,65,65,65],"
	    "[1,2,3,4],[9,9,9,9],[0,0,0,0]]");
	/* What PIL's Python hands its C code from the code's values: a profile's object
	 * (profile_tobytes took a float's value for an lcms profile's address), a TIFF tag's
	 * value (an int for DocumentName, or for ImageDescription typed LONG by the code, read as a
	 * string's address), a list subclass's length
	 * (FreeType's axes and JPEG's qtables read items past the list), a reduce factor and an
	 * expand margin that wrapped the new size round. Each crashed the worker on 60c888c. */
	e2e_expect_result(
	    "from PIL import Image, ImageCms, ImageFont\nimport io\nout = []\n"
	    "def t(f):\n    try:\n        f()\n        out.append('ran')\n"
	    "    except (ValueError, TypeError, OSError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "p = ImageCms.ImageCmsProfile(ImageCms.createProfile('sRGB'))\n"
	    "good = len(p.tobytes()) > 100\np.profile = 1.5\nt(p.tobytes)\n"
	    "im = Image.new('RGB', (8, 8), (1, 2, 3))\n"
	    "t(lambda: im.save(io.BytesIO(), 'TIFF', compression='tiff_lzw', "
	    "tiffinfo={269: 0x400000}))\n"
	    "from PIL import TiffImagePlugin\nifd = TiffImagePlugin.ImageFileDirectory_v2()\n"
	    "ifd[270] = 0x400000\nifd.tagtype[270] = 4\n"
	    "t(lambda: im.save(io.BytesIO(), 'TIFF', compression='tiff_lzw', tiffinfo=ifd))\n"
	    "class L(list):\n    def __len__(self):\n        return 65536\n"
	    "font = ImageFont.truetype('DejaVuSans.ttf', 12)\n"
	    "t(lambda: font.set_variation_by_axes(L([1.0])))\n"
	    "class Q(list):\n    def __len__(self):\n        return 64\n"
	    "t(lambda: im.save(io.BytesIO(), 'JPEG', qtables=[Q([1])]))\n"
	    "t(lambda: im.reduce(2**31 - 1))\nt(lambda: im._expand(2**31 - 7, 0))\n"
	    "b = io.BytesIO()\n"
	    "im.save(b, 'TIFF', compression='tiff_lzw', description='d', dpi=(72, 72))\n"
	    "back = Image.open(b)\nj = io.BytesIO()\nim.save(j, 'JPEG', qtables='web_low')\n"
	    "out + [good, back.tag_v2[270], back.getpixel((0, 0)), Image.open(j).size,\n"
	    "       im.reduce(2).size, im._expand(2, 1).size]",
	    "[\"TypeError\",\"ValueError\",\"ValueError\",\"OSError\",\"ValueError\","
	    "\"ValueError\","
	    "\"ValueError\","
	    "true,\"d\",[1,2,3],[8,8],[4,4],[12,10]]");
	/* The codec PIL hands out (an ImageFile.Parser's decoder) keeps the real one and its mode
	 * where no attribute reaches them, and is set only on a C image of its mode. */
	e2e_expect_result(
	    "from PIL import Image, ImageFile\nimport copy, io\n"
	    "b = io.BytesIO()\nImage.new('L', (4, 4), 9).save(b, 'PPM')\n"
	    "p = ImageFile.Parser()\np.feed(b.getvalue()[:18])\nd = p.decoder\nr = []\n"
	    "for f in (lambda: d.real, lambda: type(d).real, lambda: d.mode,\n"
	    "          lambda: copy.copy(d).decode(b''), lambda: type(d)().setimage(None),\n"
	    "          lambda: d.setimage(Image.new('RGBA', (2, 2)))):\n"
	    "    try:\n        r.append(repr(f()))\n"
	    "    except (AttributeError, TypeError, ValueError) as e:\n"
	    "        r.append(type(e).__name__)\n"
	    "p.feed(b.getvalue()[18:])\nr + [p.close().tobytes() == bytes([9] * 16)]",
	    "[\"AttributeError\",\"AttributeError\",\"AttributeError\",\"AttributeError\","
	    "\"AttributeError\",\"ValueError\",true]");
	e2e_stop();
}

/* The "is it installed" checks of data code: importlib.metadata.version of the data stack's
 * distributions (their names, not their modules'), find_spec, import_module of a submodule,
 * each what the import gives. */
Test(data, importlib_says_which_data_packages_are_installed)
{
	start_data(NULL);
	e2e_expect_result("import importlib, importlib.util, importlib.metadata as m\n"
	                  "import numpy, sklearn, numpy.linalg, PIL, dateutil\n"
	                  "[m.version('numpy') == numpy.__version__,\n"
	                  " m.version('scikit-learn') == sklearn.__version__,\n"
	                  " m.version('Pillow') == PIL.__version__,\n"
	                  " m.version('python_dateutil') == dateutil.__version__,\n"
	                  " importlib.util.find_spec('pandas').name,\n"
	                  " importlib.util.find_spec('torch'),\n"
	                  " importlib.import_module('numpy.linalg') is numpy.linalg]",
	                  "[true,true,true,true,\"pandas\",null,true]");
	e2e_stop();
}

/* The studentized range distribution (tukey_hsd's p-values), geninvgauss' and genhyperbolic's
 * cdf failed inside scipy: their C integrands read their parameters through a pointer scipy
 * makes with ctypes. They read them from an array only these functions hold now: the figures
 * are the host's, and a callable with data of the user's is still refused. */
Test(data, tukey_hsd_and_the_studentized_range_work)
{
	start_data(NULL);
	e2e_expect_result(
	    "from scipy import stats, LowLevelCallable as L\n"
	    "import numpy as np\n"
	    "r = stats.tukey_hsd([1, 2, 3, 4], [2, 3, 4, 5.5], [5, 6, 7, 8])\n"
	    "d = stats.studentized_range\n"
	    "try:\n"
	    "    L(d._cdf, user_data=np.zeros(4))\n"
	    "    refused = False\n"
	    "except (ValueError, TypeError):\n"
	    "    refused = True\n"
	    "[[round(float(p), 6) for p in r.pvalue[0]], round(float(d.cdf(3.5, 3, 9)), 6),\n"
	    " round(float(d.pdf(1.0, 3, 200000)), 6), refused,\n"
	    " [round(float(v), 6) for v in stats.geninvgauss.cdf([0.5, 3.0], 2.3, 1.5)],\n"
	    " round(float(stats.genhyperbolic.cdf(0.5, 0.5, 1.5, -0.5)), 6)]",
	    "[[1.0,0.499551,0.006268],0.918155,0.417741,true,[0.00501,0.486914],0.856729]");
	e2e_stop();
}

/* pandas' accessors (getattr(self._parent, name)), typing's aliases (getattr(origin, name)),
 * a kernel's get_params: library functions reading an attribute by a name from data, which the
 * user's code can call with an object and a name of its own. They handed out a live object's
 * bound C __setstate__ and pandas' hash table methods, library code's only (the address-keyed
 * table again: the sandbox escaped). Such a getattr, from a frame whose code does not name the
 * attribute, is refused the library-only attributes; these modules read with the attribute
 * rules (late imports too); their ordinary use answers as on the host. */
Test(data, library_reads_by_a_name_from_data_follow_the_rules)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd, itertools, typing\n"
	    "from pandas.core.arrays.categorical import CategoricalAccessor\n"
	    "from sklearn.gaussian_process.kernels import Kernel, RBF\n"
	    "class F:\n"
	    "    pass\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return repr(f())[:12]\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused'\n"
	    "idx = pd.Index(['a', 'b'], dtype=object)\n"
	    "idx.get_loc('a')\n"
	    "f = F()\n"
	    "f._parent = idx._engine\n"
	    "g = F()\n"
	    "g._parent = itertools.chain([1])\n"
	    "GA = type(typing.List[int])\n"
	    "class K(itertools.chain):\n"
	    "    def __init__(self, __setstate__=None):\n"
	    "        pass\n"
	    "s = pd.Series(['x', 'y', 'x'], dtype='category')\n"
	    "[t(lambda: CategoricalAccessor._delegate_property_get(f, 'mapping')),\n"
	    " t(lambda: CategoricalAccessor._delegate_property_get(g, '__setstate__')),\n"
	    " t(lambda: GA(idx._engine, (int,), name='x').mapping),\n"
	    " t(lambda: Kernel.get_params(K(), deep=False)),\n"
	    " list(s.cat.categories), s.cat.codes.tolist(), RBF(2.0).get_params()['length_scale']]",
	    "[\"refused\",\"refused\",\"refused\",\"refused\",[\"x\",\"y\"],[0,1,0],2.0]");
	e2e_stop();
}

/* The interpreter's getattr, held by a library another way than as a global (codecs'
 * StreamReader.__getattr__ takes it as a default argument) or called on a line ending in a call
 * of its result (sympy's printer: getattr(expr, self.printmethod)(self)), was not seen reading
 * by a name from data: pandas' library-only hash tables came out (the use-after-free of the
 * address-keyed table escaped), and '__getattribute__' as a printmethod read any attribute. */
Test(data, every_library_getattr_by_a_name_from_data_follows_the_rules)
{
	start_data(NULL);
	e2e_expect_result("import codecs, pandas as pd\n"
	                  "from sympy.printing.str import StrPrinter\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        return type(f()).__name__\n"
	                  "    except AttributeError:\n"
	                  "        return 'refused'\n"
	                  "class P(str, StrPrinter):\n"
	                  "    printmethod = '__getattribute__'\n"
	                  "    def __new__(cls, n):\n"
	                  "        return str.__new__(cls, n)\n"
	                  "    def __init__(self, n):\n"
	                  "        StrPrinter.__init__(self)\n"
	                  "        self._str = lambda x: x\n"
	                  "idx = pd.Index(['a', 'b'], dtype=object)\n"
	                  "idx.get_loc('a')\n"
	                  "[t(lambda: codecs.StreamReader(idx._engine).mapping),\n"
	                  " t(lambda: P('mapping').doprint(idx._engine)),\n"
	                  " t(lambda: codecs.StreamReader(idx).dtype), idx.get_loc('b')]",
	                  "[\"refused\",\"str\",\"dtype[object_]\",1]");
	e2e_stop();
}

/* A bound str.format handed to library code (pandas' map and apply, heapq's key, a '{'-style
 * logging format) read the attributes its fields name in C with the library's frame innermost:
 * pandas' library-only attributes (an engine's hash table: its repr and address) and names the
 * rules refuse came back as text. Text the calling frame does not hold as a literal formats
 * with the user's rules; formatting of allowed attributes is unchanged. */
Test(data, a_format_string_from_data_reads_with_the_users_rules)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd, heapq, logging, io\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return repr(f())[:14]\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused'\n"
	    "idx = pd.Index(['a', 'b'], dtype=object)\n"
	    "idx.get_loc('a')\n"
	    "eng = idx._engine\n"
	    "def user():\n"
	    "    pass\n"
	    "s = io.StringIO()\n"
	    "h = logging.StreamHandler(s)\n"
	    "h.setFormatter(logging.Formatter('{msg.mapping!r}|', style='{'))\n"
	    "lg = logging.getLogger('fmt')\n"
	    "lg.addHandler(h)\n"
	    "lg.propagate = False\n"
	    "lg.error(eng)\n"
	    "h.setFormatter(logging.Formatter('{levelname}:{msg.real}', style='{'))\n"
	    "lg.error(3+4j)\n"
	    "[t(lambda: pd.Series([eng], dtype=object).map('{0.mapping!r}'.format).iloc[0]),\n"
	    " t(lambda: pd.Series([eng], dtype=object).apply('{0.values!r}'.format).iloc[0]),\n"
	    " t(lambda: heapq.nsmallest(1, [eng], key='{0.mapping!r}'.format)),\n"
	    " t(lambda: pd.Series([user], dtype=object).map('{0.__globals__}'.format).iloc[0]),\n"
	    " t(lambda: pd.Series([{'k': user}]).map('{k.__globals__}'.format_map).iloc[0]),\n"
	    " s.getvalue(),\n"
	    " pd.Series([1+2j, 3j]).map('{0.real}'.format).tolist(),\n"
	    " pd.Series([1.5]).map('{:.2f}'.format).tolist(),\n"
	    " repr(heapq.nsmallest(1, [3+1j, 1+1j], key='{0.real}'.format))]",
	    "[\"refused\",\"refused\",\"refused\",\"refused\",\"refused\",\"ERROR:3.0\\n\","
	    "[\"1.0\",\"0.0\"],[\"1.50\"],\"[(1+1j)]\"]");
	e2e_stop();
}

/* sklearn's get_params reads each name an estimator's _get_param_names lists, from its own
 * frame: a subclass of a compiled class listing __setstate__ was handed its bound C method, and
 * pandas' hash table methods (library code's only) were reached the same way (the sandbox
 * escaped). Its reads follow the attribute rules; estimators' parameters read as before. */
Test(data, sklearn_get_params_reads_with_the_attribute_rules)
{
	start_data(NULL);
	e2e_expect_result("import itertools\n"
	                  "from sklearn.base import BaseEstimator\n"
	                  "from sklearn.linear_model import Ridge\n"
	                  "class C(itertools.chain):\n"
	                  "    pass\n"
	                  "c = C()\n"
	                  "c._get_param_names = lambda: ['__setstate__']\n"
	                  "try:\n"
	                  "    r = [str(BaseEstimator.get_params(c, deep=False))[:30]]\n"
	                  "except AttributeError as e:\n"
	                  "    r = ['refused' if 'Forbidden' in str(e) else str(e)]\n"
	                  "m = Ridge(alpha=2.0).set_params(fit_intercept=False)\n"
	                  "p = m.get_params()\n"
	                  "r + [p['alpha'], p['fit_intercept']]",
	                  "[\"refused\",2.0,false]");
	e2e_stop();
}

/* pandas calls the method a string names (s.agg('sum'), gb.transform('cumsum')), read with
 * getattr from its own frame: s.agg('__dict__') gave any attribute of a pandas object (a
 * Series' instance dict), agg('__builtins__') read numpy's. The names follow the attribute
 * rules now; string aggregations answer as on the host. */
Test(data, pandas_string_functions_follow_the_attribute_rules)
{
	start_data(NULL);
	e2e_expect_result("import pandas as pd, numpy as np\n"
	                  "s = pd.Series([1, 2, 3, 4])\n"
	                  "df = pd.DataFrame({'g': ['a', 'b', 'a', 'b'], 'v': [1., 2., 3., 4.]})\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "        return 'given'\n"
	                  "    except (AttributeError, ValueError, TypeError) as e:\n"
	                  "        return 'refused'\n"
	                  "[t(lambda: s.agg('__dict__')), t(lambda: s.agg('__builtins__')),\n"
	                  " t(lambda: df.groupby('g').v.agg('__dict__')), int(s.agg('sum')),\n"
	                  " s.agg(['mean', 'max']).tolist(), s.transform('cumsum').tolist(),\n"
	                  " df.groupby('g').v.agg('mean').tolist(), "
	                  "df.groupby('g').v.transform('cumsum').tolist()]",
	                  "[\"refused\",\"refused\",\"refused\",10,[2.5,4.0],[1,3,6,10],[2.0,3.0],["
	                  "1.0,2.0,4.0,6.0]]");
	e2e_stop();
}

/* pandas imported the plotting backend the user named (the option, plot(backend=...)) with the
 * real importlib, from its own frame: a module beyond the allowed ones ran its top-level code
 * (this printed its text). Only matplotlib is loaded; it plots as before. */
Test(data, pandas_loads_no_plotting_backend_but_matplotlib)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import pandas as pd\n"
	           "def t(f):\n"
	           "    try:\n"
	           "        return f()\n"
	           "    except ValueError as e:\n"
	           "        return 'matplotlib only' in str(e)\n"
	           "df = pd.DataFrame({'a': [1, 2]})\n"
	           "r = [t(lambda: pd.set_option('plotting.backend', 'this')),\n"
	           "     t(lambda: df.plot(backend='this'))]\n"
	           "pd.set_option('plotting.backend', 'matplotlib')\n"
	           "r += [type(df.plot()).__name__, type(df.plot(backend='matplotlib')).__name__]\n"
	           "r");
	cr_assert_str_eq(mcpc_json(e2e_member(mcpc_structured(r), "result")),
	                 "[true,true,\"AxesSubplot\",\"AxesSubplot\"]", "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_sc_str(r, "stdout"), "Beautiful"), "%s", mcpc_json(r));
	e2e_stop();
}

/* PIL's frombuffer maps an image onto the buffer given, and the image's core writes into it
 * whatever the image's readonly flag says (im.im.putpixel, or readonly set back to 0): into an
 * immutable bytes object, even a one-byte one CPython shares with every module's literals (b"A"
 * read b"B" everywhere after). A read-only buffer is mapped as a private copy; a writable one is
 * still shared, as PIL documents. */
Test(data, an_image_on_a_read_only_buffer_writes_nothing_into_it)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from PIL import Image\n"
	    "b = bytes(16)\n"
	    "one = bytes([65])\n"
	    "im = Image.frombuffer('L', (4, 4), b, 'raw', 'L', 0, 1)\n"
	    "im.readonly = 0\n"
	    "im.putpixel((0, 0), 255)\n"
	    "im1 = Image.frombuffer('L', (1, 1), one, 'raw', 'L', 0, 1)\n"
	    "im1.readonly = 0\n"
	    "im1.putpixel((0, 0), 66)\n"
	    "a = np.arange(16, dtype=np.uint8)\n"
	    "a.flags.writeable = False\n"
	    "im2 = Image.frombuffer('L', (4, 4), a, 'raw', 'L', 0, 1)\n"
	    "im2.readonly = 0\n"
	    "im2.putpixel((0, 0), 99)\n"
	    "m = Image.frombuffer('L', (4, 1), memoryview(b'wxyz'), 'raw', 'L', 0, 1)\n"
	    "ba = bytearray(4)\n"
	    "shared = Image.frombuffer('L', (4, 1), ba, 'raw', 'L', 0, 1)\n"
	    "shared.readonly = 0\n"
	    "shared.putpixel((1, 0), 7)\n"
	    "repr([b[:2], one, b'A', bytes([65]), a[:2].tolist(), im.getpixel((0, 0)),\n"
	    "      im1.getpixel((0, 0)), im2.getpixel((0, 0)), list(m.getdata()), bytes(ba)])",
	    "\"[b'\\\\x00\\\\x00', b'A', b'A', b'A', [0, 1], 255, 66, 99, [119, 120, 121, 122], "
	    "b'\\\\x00\\\\x07\\\\x00\\\\x00']\"");
	e2e_stop();
}

/* groupby's compiled kernels index their arrays by each row's group code unchecked, and a
 * grouping by a Categorical took its codes as they were: from_codes keeps the array it is
 * given, and a code edited in place reached past the kernel's arrays (a read and an add at any
 * offset: any memory). A grouping's codes are checked against its groups and copied. */
Test(data, group_codes_stay_within_their_groups)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "codes = np.zeros(4, dtype=np.int32)\n"
	    "c = pd.Categorical.from_codes(codes, ['c%d' % i for i in range(40000)])\n"
	    "codes[0] = 2**31 - 1\n"
	    "r = [t(lambda: pd.Series([1.0] * 4).groupby(c).sum())]\n"
	    "c2 = pd.Categorical(['a', 'b'] * 2)\n"
	    "v = c2.codes; v.setflags(write=True); v[0] = 100\n"
	    "r.append(t(lambda: pd.Series([1.0, 2, 3, 4]).groupby(c2).cumsum()))\n"
	    "df = pd.DataFrame({'k': pd.Categorical(['x', 'y', 'x']), 'j': [1, 1, 2], 'v': [1, 2, "
	    "3]})\n"
	    "r += [df.groupby('k').v.sum().tolist(), df.groupby(['k', 'j']).v.sum().tolist(),\n"
	    "      df.groupby('j').v.cumsum().tolist()]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",[4,2],[1,3,2,0],[1,3,3]]");
	e2e_stop();
}

/* scipy.fftpack's diff, shift and kin took their kernel from a _cache the caller passed: a
 * cached empty kernel for an empty input wrapped the compiled loop's bound (SIGSEGV after a
 * walk over the heap). The cache is theirs: _cache is not taken, and they still compute. */
Test(data, fftpack_operators_keep_their_own_kernels)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "from scipy import fftpack\n"
	                  "x = np.sin(np.linspace(0, 2 * np.pi, 16, endpoint=False))\n"
	                  "r = [np.allclose(fftpack.diff(x), np.cos(np.linspace(0, 2 * np.pi, 16, "
	                  "endpoint=False))),\n"
	                  "     fftpack.shift(x, 0.5).shape, fftpack.hilbert(x).shape]\n"
	                  "try:\n"
	                  "    fftpack.diff(np.zeros(0), 1, _cache={(0, 1, 1.0): np.zeros(0)})\n"
	                  "except TypeError as e:\n"
	                  "    r.append(str(e))\n"
	                  "r",
	                  "[true,[16],[16],\"got an unexpected keyword argument '_cache'\"]");
	e2e_stop();
}

/* pandas read and wrote XML with lxml, whose XSLT (stylesheet=) opened any file a stylesheet
 * named (only the kernel refused it): read_xml and to_xml use the standard library's parser,
 * round trips work, parser='lxml' is taken as it, and a stylesheet is refused saying what
 * to do instead. */
Test(data, xml_is_read_and_written_without_lxml)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd, io\n"
	    "xml = \"<data><row><a>1</a><b>x</b></row><row><a>2</a><b>y</b></row></data>\"\n"
	    "df = pd.read_xml(io.StringIO(xml))\n"
	    "df2 = pd.read_xml(io.StringIO(xml), xpath='.//row', parser='lxml')\n"
	    "out = df.to_xml(index=False)\n"
	    "back = pd.read_xml(io.StringIO(out))\n"
	    "try:\n"
	    "    pd.read_xml(io.StringIO(xml), stylesheet=io.StringIO('<x/>'))\n"
	    "    st = 'ran'\n"
	    "except ValueError as e:\n"
	    "    st = str(e)[:40]\n"
	    "df3 = pd.read_xml(io.StringIO(xml), xpath='//row')\n"
	    "try:\n"
	    "    pd.read_xml(io.StringIO(xml), xpath='/data/row')\n"
	    "    xp = 'read'\n"
	    "except SyntaxError as e:\n"
	    "    xp = 'write .//book for //book' in str(e)\n"
	    "[df.to_dict('list'), df2.shape, back.equals(df), st, df3.equals(df), xp]",
	    "[{\"a\":[1,2],\"b\":[\"x\",\"y\"]},[2,2],true,\"stylesheet= (XSLT) is not "
	    "available in t\",true,true]");
	e2e_stop();
}

/* Modules and tables data code reaches through a library: pylab (matplotlib's names with
 * numpy's, which mpmath's plots import as any script would), pytz's country tables (read from
 * its data files on first use, which a worker cannot open: the refusal blamed the code's own
 * paths). */
Test(data, pylab_and_pytz_country_tables_are_there)
{
	start_data(NULL);
	e2e_expect_result("import pylab, pytz, mpmath\n"
	                  "pylab.plot([1, 2], [3, 4])\n"
	                  "pylab.close('all')\n"
	                  "[pytz.country_timezones['fr'], pytz.country_names['nz'],\n"
	                  " type(pylab.linspace(0, 1, 3)).__name__, callable(mpmath.plot)]",
	                  "[[\"Europe/Paris\"],\"New Zealand\",\"ndarray\",true]");
	e2e_stop();
}

/* numpy's ufunc.at and accumulate's out= (cumsum's too), and scipy's distance kernels' out=,
 * wrote through read-only arrays: an immutable bytes object's bytes, numpy's own False (then
 * np.array(1) == 2). Each refuses a read-only array and leaves it as it was; writable ones
 * are written as before. */
Test(data, ufuncs_and_distances_write_only_writable_arrays)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.spatial import distance\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except ValueError as e:\n"
	    "        return 'refused' if 'read-only' in str(e) else str(e)\n"
	    "b = bytes(32)\n"
	    "ro = np.frombuffer(b, dtype=np.float64)\n"
	    "X = np.arange(8.0).reshape(4, 2)\n"
	    "tries = [t(lambda: np.add.at(ro, [0, 1], 5.0)), t(lambda: np.cumsum(np.ones(4), "
	    "out=ro)),\n"
	    "         t(lambda: np.add.accumulate(np.ones(4), out=(ro,))), t(lambda: "
	    "np.multiply.accumulate(np.ones(4), 0, None, ro)),\n"
	    "         t(lambda: distance.cdist(X[:2], X[:2], 'hamming', out=ro.reshape(2, 2))),\n"
	    "         t(lambda: distance.pdist(X, 'cosine', out=np.frombuffer(bytes(48))))]\n"
	    "w = np.zeros(4)\n"
	    "np.add.at(w, [0, 0, 3], 1.0)\n"
	    "c = np.cumsum(np.arange(4.0), out=np.empty(4))\n"
	    "o = np.empty((2, 2))\n"
	    "d = distance.cdist(X[:2], X[:2], 'cityblock', out=o)\n"
	    "[tries, b == bytes(32), w.tolist(), c.tolist(), d.tolist(), bool(np.shares_memory(d, "
	    "o))]",
	    "[[\"refused\",\"refused\",\"refused\",\"refused\",\"refused\",\"refused\"],"
	    "true,[2.0,0.0,0.0,1.0],[0.0,1.0,3.0,6.0],[[0.0,4.0],[4.0,0.0]],true]");
	e2e_stop();
}

/* Compiled routines wrote where they were told without asking whether they may: f2py's
 * wrappers overwrote a read-only array (overwrite_a=True: LAPACK's factors in an immutable
 * bytes object), ndimage.label and matplotlib's resample wrote their output through read-only
 * arrays, and eig_banded(select='v', max_ev=1) sized its eigenvectors by max_ev while LAPACK
 * wrote one for every eigenvalue in the range (another array overwritten). The bytes stay,
 * the outputs are refused, every eigenvector comes back, and a cKDTree's node hands out a copy
 * of the tree's indices (a read-only view was one such write from any memory read). */
Test(data, read_only_memory_is_not_written_by_compiled_routines)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.linalg as sl, struct\n"
	    "from scipy import ndimage\n"
	    "from scipy.spatial import cKDTree\n"
	    "import matplotlib.image as mimage\n"
	    "from matplotlib.transforms import IdentityTransform\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except ValueError as e:\n"
	    "        return 'refused' if 'read-only' in str(e) else str(e)\n"
	    "b = np.array([[4.0, 1.0], [2.0, 3.0]]).tobytes(order='F')\n"
	    "a = np.ndarray((2, 2), np.float64, buffer=b, order='F')\n"
	    "lu = sl.lu_factor(a, overwrite_a=True)\n"
	    "x = sl.solve(a, np.ones(2), overwrite_a=True)\n"
	    "zb = bytes(8)\n"
	    "tries = [t(lambda: ndimage.label(np.array([1, 0, 1, 0, 1, 0, 1, 0]), "
	    "output=np.frombuffer(zb, np.uint8))),\n"
	    "         t(lambda: mimage.resample(np.ones((4, 4)), np.frombuffer(bytes(128), "
	    "np.float64).reshape(4, 4), IdentityTransform()))]\n"
	    "band = np.zeros((2, 16)); band[0] = np.arange(16) * 10.0 + 100.0\n"
	    "band[0][3] = 1.0; band[0][9] = 2.0\n"
	    "w, v = sl.eig_banded(band, lower=True, select='v', select_range=(0.0, 5.0), "
	    "max_ev=1)\n"
	    "tree = cKDTree(np.arange(4.0).reshape(4, 1))\n"
	    "node = tree.tree.indices\n"
	    "node[0] = 3\n"
	    "d, i = tree.query([[0.0]])\n"
	    "[tries, np.frombuffer(b).tolist(), zb == bytes(8), [round(v, 3) for v in "
	    "np.ravel(x)],\n"
	    " w.tolist(), v.shape, [float(d[0]), int(i[0])], tree.tree.indices.tolist()]",
	    "[[\"refused\",\"refused\"],[4.0,2.0,1.0,3.0],true,[0.2,0.2],[1.0,2.0],[16,2],"
	    "[0.0,0],[0,1,2,3]]");
	e2e_stop();
}

/* scikit-learn handed read-only arrays to compiled kernels in a ReadonlyArrayWrapper, whose
 * buffer says writable over whatever it wraps: a loss whose compiled part the code replaced
 * (loss.closs) was handed one, and with its class struct.pack_into wrote into immutable bytes
 * and into the tree indices a cKDTree hands out read-only (a query then read any address). The
 * losses and k-means get the array, or a copy of a read-only one; they still fit. */
Test(data, read_only_arrays_reach_compiled_kernels_as_copies)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, struct\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor as H\n"
	    "from sklearn.cluster import KMeans, MiniBatchKMeans\n"
	    "rng = np.random.default_rng(0)\n"
	    "X = rng.random((60, 2)); y = X[:, 0] * 2 + X[:, 1]\n"
	    "h = H(max_iter=5).fit(X, y)\n"
	    "L = type(h._loss)()\n"
	    "got = {}\n"
	    "class Spy:\n"
	    "    def loss(self, **kw):\n"
	    "        got.update(kw)\n"
	    "L.closs = Spy()\n"
	    "ro = np.zeros(3); ro.setflags(write=False)\n"
	    "L.loss(ro, np.zeros(3))\n"
	    "W = type(got['y_true'])\n"
	    "b = b'immutable!'\n"
	    "try:\n"
	    "    struct.pack_into('4s', W(b), 0, b'MUTA')\n"
	    "    wrote = 'wrote'\n"
	    "except Exception as e:\n"
	    "    wrote = type(e).__name__\n"
	    "Xr = X.copy(); Xr.setflags(write=False)\n"
	    "km = KMeans(n_clusters=3, n_init=2, random_state=0).fit(Xr)\n"
	    "mb = MiniBatchKMeans(n_clusters=3, n_init=2, random_state=0, batch_size=20).fit(Xr)\n"
	    "[W.__name__, got['y_true'].flags.writeable, b.decode(), wrote, "
	    "sorted(np.bincount(km.labels_).tolist()),\n"
	    " len(set(mb.labels_.tolist())), h.predict(X).shape]",
	    "[\"ndarray\",true,\"immutable!\",\"ValueError\",[15,18,27],3,[60]]");
	e2e_stop();
}

/* sklearn's compiled losses (a loss object's .closs, reached from any gradient boosting model)
 * wrote one value per sample of y_true into the out arrays given, however short, and read
 * raw_prediction and sample_weight the same way: a 6-double gradient_out for 15 samples laid
 * a bytearray's header over its neighbour (all memory as a bytearray: full escape). pandas'
 * groupsort_indexer (get_group_index_sorter) and the groupby kernels behind
 * WrappedCythonOp.cython_operation took labels past ngroups (an add or a write at any offset).
 * Each is refused with a clear error; the same functions used as meant answer as before. */
Test(data, compiled_losses_and_group_kernels_check_their_arrays)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor, "
	    "HistGradientBoostingClassifier\n"
	    "from pandas.core.sorting import get_group_index_sorter\n"
	    "from pandas.core.groupby import ops\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.rand(200, 3)\n"
	    "y = X[:, 0] * 3 + X[:, 1]\n"
	    "loss = HistGradientBoostingRegressor()._get_loss(sample_weight=None)\n"
	    "r = [t(lambda: loss.loss(y_true=np.zeros(10**6), raw_prediction=np.zeros(10**6), "
	    "loss_out=np.zeros(1))),\n"
	    "     t(lambda: loss.closs.gradient(np.zeros(10**6), np.zeros(1), None, "
	    "np.zeros(10**6))),\n"
	    "     t(lambda: loss.closs.gradient_hessian(np.zeros(10**6), np.zeros(10**6), None, "
	    "np.zeros(10**6), np.zeros(2)))]\n"
	    "m = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, (X[:, 0] * "
	    "3).astype(int))\n"
	    "r.append(t(lambda: m._loss.gradient(y_true=np.zeros(10**5), "
	    "raw_prediction=np.zeros((10**5, 3)),\n"
	    "                                     gradient_out=np.zeros((10**5, 1)))))\n"
	    "gi = np.zeros(100, dtype=np.intp)\n"
	    "gi[5] = 1 << 40\n"
	    "r.append(t(lambda: get_group_index_sorter(gi, 1)))\n"
	    "op = ops.WrappedCythonOp('aggregate', 'sum', has_dropped_na=False)\n"
	    "r.append(t(lambda: op.cython_operation(values=np.ones(10), axis=0, comp_ids=gi[:10], "
	    "ngroups=1)))\n"
	    "r.append(t(lambda: op.cython_operation(values=np.ones(10**6), axis=0, "
	    "comp_ids=np.zeros(1, np.intp), ngroups=1)))\n"
	    "r += [round(float(HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, "
	    "y).score(X, y)), 4),\n"
	    "      round(float(m.score(X, (X[:, 0] * 3).astype(int))), 4),\n"
	    "      loss.loss(y_true=np.ones(3), raw_prediction=np.zeros(3)).tolist(),\n"
	    "      get_group_index_sorter(np.array([1, 0, 1, -1, 2]), 3).tolist(),\n"
	    "      op.cython_operation(values=np.arange(4.0), axis=0, comp_ids=np.array([0, 1, 0, "
	    "-1]), ngroups=2).tolist()]\n"
	    "df = pd.DataFrame({'k': list('abcab'), 'v': [1.0, 2, 3, 4, 5], 'i': pd.array([1, "
	    "None, 3, 4, 5], dtype='Int64')})\n"
	    "r += [df.groupby('k').v.sum().tolist(), "
	    "df.groupby('k').i.cumsum().fillna(-1).tolist(), "
	    "df.groupby('k').v.ohlc().values.tolist()]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"IndexError\","
	    "\"IndexError\",\"ValueError\",0.9701,1.0,[0.5,0.5,0.5],[3,1,0,2,4],[2.0,1.0],[5.0,7.0,"
	    "3.0],[1,-1,3,5,5],[[1.0,4.0,1.0,4.0],[2.0,5.0,2.0,5.0],[3.0,3.0,3.0,3.0]]]");
	e2e_stop();
}

/* A frame's columns are placed by arrays the user's code may set: DataFrame.insert's compiled
 * kernel copied a manager's blklocs (a short view) up to the position asked into an array one
 * longer (what the code chose, written past it), and a manager's rebuild wrote each block's
 * placements into arrays of the frame's width (a placement of 2**40: a write at any offset).
 * Both are refused and write nothing; inserts, deletes and concatenations place as before. */
Test(data, a_frame_s_column_placements_are_checked)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, pandas as pd\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        return f()\n"
	                  "    except Exception as e:\n"
	                  "        return type(e).__name__\n"
	                  "victim = np.full(512, 7, dtype=np.intp)\n"
	                  "df = pd.DataFrame({'a': [1, 2]})\n"
	                  "m = df._mgr\n"
	                  "big = np.full(200, 0x4141414141414141, dtype=np.intp)\n"
	                  "m._blklocs = big[:4]\n"
	                  "m._blknos = big[:4]\n"
	                  "m.axes[0] = pd.Index(range(100))\n"
	                  "r = [t(lambda: m.insert(68, 'zz', np.zeros(2)))]\n"
	                  "df2 = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})\n"
	                  "m2 = df2._mgr\n"
	                  "bp = type(m2.blocks[0].mgr_locs)\n"
	                  "m2.blocks[0].mgr_locs = bp(np.array([0, 1, 1 << 40], dtype=np.intp))\n"
	                  "m2._blknos = m2._blklocs = None\n"
	                  "r.append(t(lambda: m2.blknos))\n"
	                  "m2.blocks[0].mgr_locs = bp(np.array([0, -3], dtype=np.intp))\n"
	                  "r.append(t(lambda: m2.blknos))\n"
	                  "r.append(bool((victim == 7).all()))\n"
	                  "d = pd.DataFrame({'a': [1, 2], 'b': [3.0, 4.0], 'c': ['x', 'y']})\n"
	                  "d.insert(1, 'i', [5, 6])\n"
	                  "d.insert(0, 'j', [7, 8])\n"
	                  "d['e'] = d['a'] * 2\n"
	                  "del d['b']\n"
	                  "d2 = pd.concat([d, d], axis=1)\n"
	                  "r += [list(d.columns), d.iloc[1].tolist(), d2.shape, "
	                  "d._mgr.blknos.tolist(), d._mgr.blklocs.tolist()]\n"
	                  "r\n",
	                  "[\"IndexError\",\"AssertionError\",\"AssertionError\",true,[\"j\",\"a\","
	                  "\"i\",\"c\",\"e\"],"
	                  "[8,2,6,\"y\",4],[2,10],[0,1,2,3,4],[0,0,0,0,0]]");
	e2e_stop();
}

/* Index.join of sorted object indexes ran pandas' two-pass join kernels (bounds checks off):
 * items whose comparisons answered otherwise in the second pass (counted one row, wrote 64)
 * wrote past the kernels' arrays, and dropped a reference on a word past the values'. Such
 * items are joined as ranks fixed once (aware datetimes too: their comparisons call their
 * tzinfo's utcoffset, the code's): the join ends with arrays of one length and writes nothing
 * past them; strings, fractions, tuples and numbers join as on the host. */
Test(data, joins_of_objects_compare_each_pair_once)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd, numpy as np\n"
	    "from fractions import Fraction as F\n"
	    "N = 64\n"
	    "state = {'armed': False, 'calls': 0}\n"
	    "class K:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def __hash__(self):\n"
	    "        return hash(self.v)\n"
	    "    def __eq__(self, o):\n"
	    "        if not state['armed']:\n"
	    "            return self.v == o.v\n"
	    "        state['calls'] += 1\n"
	    "        return state['calls'] >= 2 * N - 1\n"
	    "    def __ne__(self, o):\n"
	    "        if state['armed']:\n"
	    "            state['calls'] += 1\n"
	    "        return False if state['armed'] else self.v != o.v\n"
	    "    def __lt__(self, o):\n"
	    "        if state['armed']:\n"
	    "            state['calls'] += 1\n"
	    "        return False if state['armed'] else self.v < o.v\n"
	    "    def __gt__(self, o):\n"
	    "        if state['armed']:\n"
	    "            state['calls'] += 1\n"
	    "        return True if state['armed'] else self.v > o.v\n"
	    "    def __le__(self, o):\n"
	    "        return self == o or self < o\n"
	    "    def __ge__(self, o):\n"
	    "        return self == o or self > o\n"
	    "got = []\n"
	    "for how in ('left', 'inner', 'outer'):\n"
	    "    state['armed'], state['calls'] = False, 0\n"
	    "    left, right = pd.Index([K(0)], dtype=object), pd.Index([K(0)] * N, dtype=object)\n"
	    "    [left.is_monotonic_increasing, left.is_unique, right.is_monotonic_increasing,\n"
	    "     right.is_unique]\n"
	    "    state['armed'] = True\n"
	    "    j, li, ri = left.join(right, how=how, return_indexers=True)\n"
	    "    got.append(len(j) == len(li) == len(ri) and len(j) <= N + 1)\n"
	    "import datetime as dt\n"
	    "tz = {'seen_last': False, 'phase': 1}\n"
	    "class LTz(dt.tzinfo):\n"
	    "    def __init__(self, i): self.i = i\n"
	    "    def utcoffset(self, d):\n"
	    "        if self.i == 2: tz['seen_last'] = True\n"
	    "        elif self.i == 0 and tz['seen_last']: tz['phase'] = 2\n"
	    "        return dt.timedelta(0)\n"
	    "    def dst(self, d): return dt.timedelta(0)\n"
	    "class RTz(dt.tzinfo):\n"
	    "    def utcoffset(self, d):\n"
	    "        return dt.timedelta(hours=-1) if tz['phase'] == 1 else dt.timedelta(0)\n"
	    "    def dst(self, d): return dt.timedelta(0)\n"
	    "base = dt.datetime(2024, 1, 1)\n"
	    "left = pd.Index([base.replace(tzinfo=LTz(i)) for i in range(3)], dtype=object)\n"
	    "right = pd.Index([base.replace(tzinfo=RTz())], dtype=object)\n"
	    "j, li, ri = left._inner_indexer(right)\n"
	    "got.append(len(j) == len(li) == len(ri))\n"
	    "cases = [\n"
	    "    (['a', 'b', 'b', 'd'], ['b', 'c', 'd', 'd']),\n"
	    "    ([F(1, 2), F(1, 2), F(3, 2)], [F(1, 2), F(2, 1), F(3, 2)]),\n"
	    "    ([(1, 'a'), (1, 'b'), (2, 'a')], [(1, 'b'), (1, 'b'), (3, 'c')]),\n"
	    "    ([1, 2, 2, 5], [2, 3, 5, 5]),\n"
	    "]\n"
	    "for l, r in cases:\n"
	    "    L, R = pd.Index(l, dtype=object), pd.Index(r, dtype=object)\n"
	    "    for how in ('left', 'inner', 'outer', 'right'):\n"
	    "        j, li, ri = L.join(R, how=how, return_indexers=True)\n"
	    "        got.append([str(x) for x in j] + (li.tolist() if li is not None else []) +\n"
	    "                   (ri.tolist() if ri is not None else []))\n"
	    "    got.append([str(x) for x in L.unique().join(R.unique(), how='left')])\n"
	    "df1 = pd.DataFrame({'v': [1, 2, 3]}, index=pd.Index([F(1), F(2), F(3)], "
	    "dtype=object))\n"
	    "df2 = pd.DataFrame({'w': [4, 5]}, index=pd.Index([F(2), F(3)], dtype=object))\n"
	    "got.append(df1.join(df2).fillna(-1).values.tolist())\n"
	    "got\n",
	    "[true,true,true,true,[\"a\",\"b\",\"b\",\"d\",\"d\",0,1,2,3,3,-1,0,0,2,3],[\"b\","
	    "\"b\","
	    "\"d\",\"d\",1,2,"
	    "3,3,0,0,2,3],[\"a\",\"b\",\"b\",\"c\",\"d\",\"d\",0,1,2,-1,3,3,-1,0,0,1,2,3],[\"b\","
	    "\"b\",\"c\",\"d"
	    "\",\"d\",1,2,-1,3,3,0,0,1,2,3],[\"a\",\"b\",\"d\"],[\"1/2\",\"1/2\",\"3/"
	    "2\",0,1,2,0,0,2],[\"1/2\""
	    ",\"1/2\",\"3/2\",0,1,2,0,0,2],[\"1/2\",\"1/2\",\"3/2\",\"2\",0,1,2,-1,0,0,2,1],[\"1/"
	    "2\",\"1/2\","
	    "\"3/2\",\"2\",0,1,2,-1,0,0,2,1],[\"1/2\",\"3/2\"],[\"(1, 'a')\",\"(1, 'b')\",\"(1, "
	    "'b')\",\"(2,"
	    " 'a')\",0,1,1,2,-1,0,1,-1],[\"(1, 'b')\",\"(1, 'b')\",1,1,0,1],[\"(1, 'a')\",\"(1, "
	    "'b')\""
	    ",\"(1, 'b')\",\"(2, 'a')\",\"(3, 'c')\",0,1,1,2,-1,-1,0,1,-1,2],[\"(1, 'b')\",\"(1, "
	    "'b')\""
	    ",\"(3, 'c')\",1,1,-1,0,1,2],[\"(1, 'a')\",\"(1, 'b')\",\"(2, "
	    "'a')\"],[\"1\",\"2\",\"2\",\"5\",\"5"
	    "\",0,1,2,3,3,-1,0,0,2,3],[\"2\",\"2\",\"5\",\"5\",1,2,3,3,0,0,2,3],[\"1\",\"2\",\"2\","
	    "\"3\",\"5\",\""
	    "5\",0,1,2,-1,3,3,-1,0,0,1,2,3],[\"2\",\"2\",\"3\",\"5\",\"5\",1,2,-1,3,3,0,0,1,2,3],["
	    "\"1\",\"2"
	    "\",\"5\"],[[1.0,-1.0],[2.0,4.0],[3.0,5.0]]]");
	e2e_stop();
}

/* Compiled kernels that sized their output by one answer of the code's objects and wrote by
 * another: Series.explode (an item whose len() was 1 and whose iteration gave 4096 wrote past
 * the result), ensure_string_array (StringArray._from_sequence of an object whose len() was
 * 10**6 and whose to_numpy() gave one string read a million slots past a list), and ndarray's
 * dtype setter, which converted a 16-byte type with a 2 GiB field with numpy's own converter
 * (none of the data type checks saw it). Each reads the objects once; explode, strings and
 * dtype changes answer as on the host. */
Test(data, compiled_kernels_read_the_code_s_objects_once)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from pandas.core.arrays.string_ import StringArray\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class Liar:\n"
	    "    def __len__(self):\n"
	    "        return 1\n"
	    "    def __iter__(self):\n"
	    "        return iter(range(4096))\n"
	    "class Short:\n"
	    "    def __len__(self):\n"
	    "        return 10 ** 6\n"
	    "    def to_numpy(self):\n"
	    "        return ['a']\n"
	    "spec = {'names': ['x', 'y'], 'formats': ['u1', 'V2147483647'], 'offsets': [0, 1],\n"
	    "        'itemsize': 16}\n"
	    "b = np.zeros(256, 'u1')\n"
	    "r = [len(pd.Series([Liar(), [1]]).explode()), t(lambda: "
	    "len(StringArray._from_sequence(Short()))),\n"
	    "     t(lambda: setattr(b, 'dtype', spec)), b.dtype.str]\n"
	    "class Bag:\n"
	    "    def __init__(self, n): self.n = n\n"
	    "    def __iter__(self): return iter(range(self.n))\n"
	    "    def __len__(self): return self.n\n"
	    "s = pd.Series([[1, 2], (3,), [], 'ab', None, np.array([4, 5]), {6}, Bag(2), 7])\n"
	    "e = s.explode()\n"
	    "r += [[None if (isinstance(x, float) and x != x) else str(x) for x in e.tolist()], "
	    "e.index.tolist()]\n"
	    "df = pd.DataFrame({'a': [[1, 2], [3]], 'b': ['x', 'y']})\n"
	    "r += [df.explode('a').values.tolist(), list(map(str, StringArray._from_sequence(['a', "
	    "None, 'c']))),\n"
	    "      pd.array(['x', 'y'], dtype='string').tolist(), pd.Series([1, 2.5, "
	    "None]).astype(str).tolist(),\n"
	    "      str(pd.Series(pd.to_datetime(['2020-01-01', "
	    "None])).astype('string').tolist())]\n"
	    "a = np.zeros(4, dtype='f8')\n"
	    "a.dtype = 'i8'\n"
	    "r.append(a.dtype.str)\n"
	    "a.dtype = np.dtype([('x', 'i4'), ('y', 'i4')])\n"
	    "r.append(a.shape)\n"
	    "c = np.zeros((2, 4), 'u1')\n"
	    "r.append(t(lambda: setattr(c, 'dtype', [('p', 'u1'), ('q', 'u1')])))\n"
	    "c = c.view([('p', 'u1'), ('q', 'u1')])\n"
	    "r += [c.shape, c.dtype.names]\n"
	    "r\n",
	    "[4097,1,\"ValueError\",\"|u1\",[\"1\",\"2\",\"3\",null,\"ab\",\"None\",\"4\",\"5\","
	    "\"6\",\"0\",\"1\",\"7\"],[0,0,1,2,3,4,5,5,6,7,7,8],[[1,\"x\"],[2,\"x\"],[3,\"y\"]],["
	    "\"a\",\"<NA>\",\"c\"],[\"x\",\"y\"],[\"1.0\",\"2.5\",\"nan\"],\"['2020-01-01', "
	    "<NA>]\",\"<i8\",[4],\"ValueError\",[2,2],[\"p\",\"q\"]]");
	e2e_stop();
}

/* pandas' compiled kernels that took positions or lengths from one object and the data from
 * another (bounds checks off): count_level_2d and generate_slices counted and placed at a
 * groupby's labels (its cached group_info, writable, edited: a write at any offset), the
 * fill kernels walked the values' length over a shorter mask (an Int64 array's _mask), to_csv
 * read one column per label its columns gave (100000 for a frame of 2), tz_localize read the
 * array of one False an ambiguous of length 16 gave, a string array's str methods a mask of
 * one byte for 1000 strings. Each is refused; counts, groupby applies, fills, string methods,
 * CSV with index levels, ambiguous times and converters answer as on the host. */
Test(data, kernels_take_positions_and_lengths_they_can_hold)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, warnings, numpy as np, pandas as pd\n"
	    "warnings.simplefilter('ignore')\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "gb = pd.DataFrame({'k': [1, 2, 1, 2], 'v': [1.0, 2.0, 3.0, 4.0]}).groupby('k')\n"
	    "gb.grouper.group_info[0][0] = 1 << 40\n"
	    "gb2 = pd.DataFrame({'k': [1, 2], 'v': [1.0, 2.0]}).groupby('k')\n"
	    "gb2.grouper.group_info[0][1] = 1 << 40\n"
	    "a = pd.array(np.arange(4096), dtype='Int64')\n"
	    "a._mask = np.array([False, True])\n"
	    "class MI(pd.MultiIndex):\n"
	    "    def _format_native_types(self, **kw):\n"
	    "        return np.array(['c%d' % i for i in range(100000)], dtype=object)\n"
	    "wide = pd.DataFrame([[1, 2], [3, 4]], columns=MI(levels=[['a', 'b']], codes=[[0, "
	    "1]]))\n"
	    "pattern = np.array([0, 1] * 64, dtype=bool)\n"
	    "class Amb:\n"
	    "    def __len__(self): return 16\n"
	    "    def __iter__(self): return iter([False])\n"
	    "    def __array__(self, dtype=None): return pattern[:1]\n"
	    "class S(pd.arrays.StringArray):\n"
	    "    def isna(self):\n"
	    "        return np.zeros(1, dtype=bool)\n"
	    "r = [t(gb.count), t(lambda: gb2.apply(lambda g: g.v.sum())), t(lambda: "
	    "a.fillna(method='pad')),\n"
	    "     t(lambda: wide.to_csv(io.StringIO(), header=False)),\n"
	    "     t(lambda: pd.DatetimeIndex(['2018-11-04 01:30'] * 16).tz_localize('US/Eastern', "
	    "ambiguous=Amb())),\n"
	    "     t(lambda: pd.Series(S(np.array(['x'] * 1000, dtype=object))).str.upper())]\n"
	    "\n"
	    "df = pd.DataFrame({'k': list('abcab'), 'v': [1.0, None, 3, 4, 5], 'w': [1, 2, None, "
	    "4, 5]})\n"
	    "g = df.groupby('k')\n"
	    "r.append(g.count().values.tolist())\n"
	    "r.append(g.apply(lambda x: x.v.sum()).tolist())\n"
	    "r.append(g.v.transform(lambda x: x - x.mean()).round(3).fillna(-1).tolist())\n"
	    "r.append(g.filter(lambda x: len(x) > 1).k.tolist())\n"
	    "r.append([(k, len(x)) for k, x in g])\n"
	    "r.append(g.agg(lambda x: x.max()).fillna(-1).values.tolist())\n"
	    "mi = pd.MultiIndex.from_tuples([('x', 1), ('x', 2), ('y', 1)])\n"
	    "d2 = pd.DataFrame({'a': [1, None, 3]}, index=mi)\n"
	    "r.append(d2.count(level=0).values.tolist())\n"
	    "r.append(pd.array([1, None, 3, None], "
	    "dtype='Int64').fillna(method='ffill').tolist())\n"
	    "r.append(pd.array([None, 2, None, 4], "
	    "dtype='Int64').fillna(method='bfill').tolist())\n"
	    "r.append(pd.Series(pd.to_datetime(['2020-01-01', None, "
	    "'2020-01-03'])).fillna(method='ffill').astype(str).tolist())\n"
	    "r.append(pd.Series(pd.Categorical(['a', None, "
	    "'b'])).fillna(method='bfill').tolist())\n"
	    "r.append(pd.DataFrame({'a': [1, None, 3], 'b': [None, 2.0, "
	    "None]}).fillna(method='ffill').fillna(-1).values.tolist())\n"
	    "r.append(pd.DataFrame({'a': pd.array([1, None, 3], "
	    "dtype='Int64')}).fillna(method='ffill').a.tolist())\n"
	    "s = pd.Series(['ab', None, 'Cd'], dtype='string')\n"
	    "r.append([str(x) for x in s.str.upper().tolist()])\n"
	    "r.append([str(x) for x in pd.Series(['ab', None, 'Cd']).str.len().tolist()])\n"
	    "r.append(pd.Series(['a', None]).map(lambda x: x + '!', na_action='ignore').tolist())\n"
	    "buf = io.StringIO()\n"
	    "dfm = pd.DataFrame([[1, 2], [3, 4]], index=mi[:2], "
	    "columns=pd.MultiIndex.from_tuples([('p', 'q'), ('p', 'r')]))\n"
	    "dfm.to_csv(buf)\n"
	    "r.append(buf.getvalue())\n"
	    "r.append(df.to_csv(index=False))\n"
	    "idx = pd.DatetimeIndex(['2020-11-01 01:30', '2020-11-01 01:30'])\n"
	    "r.append(idx.tz_localize('US/Eastern', ambiguous=np.array([True, "
	    "False])).astype(str).tolist())\n"
	    "r.append(idx.tz_localize('US/Eastern', ambiguous=[True, "
	    "False]).astype(str).tolist())\n"
	    "r.append(pd.read_csv(io.StringIO('a,b\\n1,x\\n2,y\\n'), converters={'b': "
	    "str.upper}).b.tolist())\n"
	    "r\n",
	    "[\"IndexError\",\"IndexError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",["
	    "[2,2],[1,2],[1,0]],[5.0,5.0,3.0],[-1.5,-1.0,0.0,1.5,0.0],[\"a\",\"b\",\"a\",\"b\"],[["
	    "\"a\""
	    ",2],[\"b\",2],[\"c\",1]],[[4.0,4.0],[5.0,5.0],[3.0,-1.0]],[[1],[1]],[1,1,3,3],[2,2,4"
	    ",4],[\"2020-01-01\",\"2020-01-01\",\"2020-01-03\"],[\"a\",\"b\",\"b\"],[[1.0,-1.0],[1."
	    "0,2.0]"
	    ",[3.0,2.0]],[1,1,3],[\"AB\",\"<NA>\",\"CD\"],[\"2.0\",\"nan\",\"2.0\"],[\"a!\",null],"
	    "\",,p,p\\n,"
	    ",q,r\\nx,1,1,2\\nx,2,3,4\\n\",\"k,v,w\\na,1.0,1.0\\nb,,2.0\\nc,3.0,\\na,4.0,4.0\\nb,5."
	    "0,5."
	    "0\\n\",[\"2020-11-01 01:30:00-04:00\",\"2020-11-01 01:30:00-05:00\"],[\"2020-11-01 "
	    "01:3"
	    "0:00-04:00\",\"2020-11-01 01:30:00-05:00\"],[\"X\",\"Y\"]]");
	e2e_stop();
}

/* pandas' kernels over the code's lists and arrays: the unique values of several lists
 * (union_indexes) read each list by a length taken once while its items' __hash__ ran (one
 * that emptied the list had three freed floats read and handed out: new objects made in their
 * memory came back), and fast_zip (MultiIndex.values) walked a level of shape (3, 0) for three
 * items past its empty memory. They get private copies: the union holds the items it was
 * given, the empty level is refused, and unions, MultiIndex values and frames of dicts answer
 * as on the host. */
Test(data, kernels_over_the_code_s_lists_hold_private_copies)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd, numpy as np\n"
	    "from pandas.core.indexes.api import union_indexes\n"
	    "keep = []\n"
	    "class First:\n"
	    "    def __hash__(self):\n"
	    "        del L[1:]\n"
	    "        keep.extend([float('1337.5'), float('1338.5'), float('1339.5')])\n"
	    "        return 1\n"
	    "    def __eq__(self, o): return self is o\n"
	    "    def __lt__(self, o): return False\n"
	    "L = [First(), float('0.25'), float('0.5'), float('0.75')]\n"
	    "u = list(union_indexes([L, []], sort=False))\n"
	    "r = [u[1:], len(L)]\n"
	    "try:\n"
	    "    idx = pd.Index._simple_new(np.empty((3, 0), dtype=object))\n"
	    "    mi = pd.MultiIndex(levels=[idx, ['a', 'b', 'c']], codes=[[0, 1, 2], [0, 1, 2]],\n"
	    "                       verify_integrity=False)\n"
	    "    r.append(len(mi.values))\n"
	    "except ValueError as e:\n"
	    "    r.append('ValueError')\n"
	    "mi = pd.MultiIndex.from_product([['a', 'b'], [1, 2]])\n"
	    "mi2 = pd.MultiIndex.from_tuples([('a', 1), ('c', 3)])\n"
	    "r += [list(mi.values), list(union_indexes([[3, 1], [2, 1]])), list(mi.union(mi2)), "
	    "list(mi.union(mi2, sort=False)),\n"
	    "      pd.DataFrame([{'x': 1, 'y': 2}, {'y': 3, 'z': 4}]).columns.tolist(),\n"
	    "      pd.DataFrame([{'b': 1}, {'a': 2}]).columns.tolist(),\n"
	    "      pd.concat([pd.Series([1], index=['q']), pd.Series([2], index=['p'])], "
	    "axis=1).index.tolist(),\n"
	    "      mi.to_frame().values.tolist(), pd.MultiIndex.from_arrays([[1, 2], ['x', "
	    "'y']]).to_list()]\n"
	    "r\n",
	    "[[0.25,0.5,0.75],1,\"ValueError\",[[\"a\",1],[\"a\",2],[\"b\",1],[\"b\",2]],[1,2,3],[["
	    "\"a\","
	    "1],[\"a\",2],[\"b\",1],[\"b\",2],[\"c\",3]],[[\"a\",1],[\"a\",2],[\"b\",1],[\"b\",2],["
	    "\"c\",3]],[\""
	    "x\",\"y\",\"z\"],[\"b\",\"a\"],[\"q\",\"p\"],[[\"a\",1],[\"a\",2],[\"b\",1],[\"b\",2]]"
	    ",[[1,\"x\"],[2,\"y"
	    "\"]]]");
	e2e_stop();
}

/* Compiled kernels take an array's size of the array and its memory of what its view() (or
 * astype, ravel, reshape, ...) answers: an ndarray subclass whose view('i8') answered a shorter
 * array had pandas' date offsets (SemiMonthEnd()._apply_array) write past it, and
 * ints_to_pytimedelta read heap words past it. A class the code makes beneath ndarray may not
 * define them (as it may not define shape or __len__); a subclass with attributes of its own
 * works, and date offsets and timedeltas answer as on the host. */
Test(data, an_array_subclass_answers_only_with_its_own_memory)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "refused = []\n"
	    "for name in ('view', 'astype', 'ravel', 'reshape', 'copy', 'flatten', 'squeeze', "
	    "'transpose',\n"
	    "             '__array__'):\n"
	    "    try:\n"
	    "        type('S', (np.ndarray,), {name: lambda self, *a, **k: np.zeros(1)})\n"
	    "        refused.append(name + ' made')\n"
	    "    except TypeError:\n"
	    "        refused.append(name)\n"
	    "class Fine(np.ndarray):\n"
	    "    def tagged(self):\n"
	    "        self.tag = 'fine'\n"
	    "        return self\n"
	    "f = np.arange(4.0).view(Fine)\n"
	    "dti = pd.DatetimeIndex(['2020-01-10', '2020-02-20'])\n"
	    "r = [refused, type(f.reshape(2, 2)).__name__, f.reshape(2, 2).tagged().tag, "
	    "float(f.sum()),\n"
	    "     [str(x.date()) for x in dti + pd.offsets.SemiMonthEnd()],\n"
	    "     pd.TimedeltaIndex(['1 day', '2 hours']).astype(object).map(str).tolist()]\n"
	    "r\n",
	    "[[\"view\",\"astype\",\"ravel\",\"reshape\",\"copy\",\"flatten\",\"squeeze\","
	    "\"transpose\",\"__ar"
	    "ray__\"],\"Fine\",\"fine\",6.0,[\"2020-01-15\",\"2020-02-29\"],[\"1 days "
	    "00:00:00\",\"0 days"
	    " 02:00:00\"]]");
	e2e_stop();
}

/* The sandbox's collector ran the code's finalizers between any two instructions of Python
 * code, a library's too: explode's kernel sized its result, called numpy's sum (a Python frame),
 * and a __del__ run there grew the list the kernel then wrote past its result. Collections run
 * while the code's own frame is innermost: the finalizer grows and shrinks the list between
 * explodes, never inside one, and each result has the rows its list had. */
Test(data, finalizers_run_in_the_code_s_own_frames)
{
	start_data(NULL);
	e2e_expect_result("import pandas as pd\n"
	                  "L = [0]\n"
	                  "GROW = 64\n"
	                  "pad = [L] * GROW\n"
	                  "keep = []\n"
	                  "log = []\n"
	                  "class G:\n"
	                  "    def __del__(self):\n"
	                  "        if len(L) == 1:\n"
	                  "            L.extend(pad)\n"
	                  "        else:\n"
	                  "            del L[1:]\n"
	                  "        log.append(len(L))\n"
	                  "        keep.append([[] for _ in range(800)])\n"
	                  "        g = G()\n"
	                  "        g.me = g\n"
	                  "g = G(); g.me = g; del g\n"
	                  "s = pd.Series([0] * 300000 + [L], dtype=object)\n"
	                  "L = s.iloc[-1]\n"
	                  "pad = [L] * GROW\n"
	                  "same = []\n"
	                  "for k in range(40):\n"
	                  "    before = len(L)\n"
	                  "    r = s.explode()\n"
	                  "    same.append(len(r) == 300000 + before)\n"
	                  "    keep.clear()\n"
	                  "    keep.append([[] for _ in range(800)])\n"
	                  "[all(same), len(same)]\n",
	                  "[true,40]");
	e2e_stop();
}

/* What a wrapper checks is what the kernel reads: period_asfreq_arr converted its frequency
 * (the code's __int__, which gave the checked array a stride of -1 byte) after the wrapper
 * had checked the array's layout, and tz_localize ran a nonexistent's __eq__ (which rewrote
 * the checked times to before 1677) before it read the times. The numbers are converted first,
 * and the kernels get private copies; period frequencies and zones answer as on the host. */
Test(data, checked_arrays_are_the_ones_the_kernels_read)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd, numpy as np\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "period_asfreq_arr = pd.core.arrays.period.period_asfreq_arr\n"
	    "base = np.full(1000, 0x4141414141414141, dtype=np.int64)\n"
	    "v = base[112:]\n"
	    "class Freq:\n"
	    "    def __int__(self):\n"
	    "        v.strides = (-1,)\n"
	    "        return 6000\n"
	    "r = [t(lambda: len(period_asfreq_arr(v, Freq(), 6000, False)))]\n"
	    "a = np.array(['2000-01-01'] * 4, dtype='M8[s]')\n"
	    "da = pd.arrays.DatetimeArray._simple_new(a, dtype=a.dtype)\n"
	    "calls = []\n"
	    "class NE:\n"
	    "    def __eq__(self, other):\n"
	    "        calls.append(other)\n"
	    "        if other == 'NaT' and 'shift_backward' in calls:\n"
	    "            a.view('i8')[:] = -10**12\n"
	    "        return other == 'shift_backward'\n"
	    "    def __hash__(self):\n"
	    "        return 0\n"
	    "res = da.tz_localize('US/Eastern', nonexistent=NE())\n"
	    "r.append([str(x) for x in res])\n"
	    "pa = pd.period_range('2020-01', periods=3, freq='M')\n"
	    "r += [pa.asfreq('D', 'S').astype(str).tolist(), pa.asfreq('Y').astype(str).tolist()]\n"
	    "r\n",
	    "[\"TypeError\",[\"2000-01-01 00:00:00-05:00\",\"2000-01-01 "
	    "00:00:00-05:00\",\"2000-01-0"
	    "1 00:00:00-05:00\",\"2000-01-01 "
	    "00:00:00-05:00\"],[\"2020-01-01\",\"2020-02-01\",\"2020-"
	    "03-01\"],[\"2020\",\"2020\",\"2020\"]]");
	e2e_stop();
}

/* The wrappers decide by an object's type, not by what it answers: an object whose
 * __getattr__ said "no __iter__" (tz_localize's ambiguous), "no read" (a TextReader's source),
 * "no vertices" (Agg's draw_path) or "no __array__" (ndimage's output) to a check, and "yes"
 * to the compiled code after it, had the kernels read past a one-item array, parse past a
 * bytes of a lying length, iterate a path whose array a later callback reshaped, and write a
 * 64x64 result through a 1x1 array. Such objects are converted once or refused; a CSV
 * formatter's nlevels of -7 is refused (rows written past their lists). CSV, ambiguous times,
 * read_csv and Fourier filters answer as on the host. */
Test(data, wrappers_decide_by_type_not_by_what_an_object_answers)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, numpy as np, pandas as pd\n"
	    "import matplotlib.pyplot as plt\n"
	    "from scipy import ndimage\n"
	    "from pandas.io.formats import csvs\n"
	    "from pandas.io.formats.format import DataFrameFormatter\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class F(csvs.CSVFormatter):\n"
	    "    @property\n"
	    "    def nlevels(self):\n"
	    "        return -7\n"
	    "df = pd.DataFrame({('c%d' % i): ['x'] * 3 for i in range(8)})\n"
	    "r = [t(lambda: F(DataFrameFormatter(df), path_or_buf=io.StringIO()).save())]\n"
	    "class Amb:\n"
	    "    seen = 0\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == '__iter__':\n"
	    "            Amb.seen += 1\n"
	    "            if Amb.seen == 1:\n"
	    "                raise AttributeError(name)\n"
	    "            return lambda: iter([True])\n"
	    "        raise AttributeError(name)\n"
	    "    def __len__(self):\n"
	    "        return 4000\n"
	    "    def __getitem__(self, i):\n"
	    "        if i >= 1:\n"
	    "            raise IndexError(i)\n"
	    "        return True\n"
	    "vals = pd.DatetimeIndex(['2018-11-04 01:30'] * 4000)\n"
	    "r.append(t(lambda: vals.tz_localize('US/Eastern', ambiguous=Amb())))\n"
	    "tfr = pd.read_csv(io.StringIO('a\\n1\\n'), iterator=True)\n"
	    "TR = type(tfr._engine._reader)\n"
	    "class LongBytes(bytes):\n"
	    "    def __len__(self):\n"
	    "        return 4096\n"
	    "class Src:\n"
	    "    calls = 0\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == 'read':\n"
	    "            Src.calls += 1\n"
	    "            if Src.calls == 1:\n"
	    "                raise AttributeError(name)\n"
	    "            return lambda n: LongBytes(b'1\\n') if Src.calls == 2 else b''\n"
	    "        raise AttributeError(name)\n"
	    "r.append(t(lambda: TR(Src(), header=None).read()))\n"
	    "fig = plt.figure(figsize=(2, 2), dpi=50)\n"
	    "R = fig.canvas.get_renderer()\n"
	    "class PathTog:\n"
	    "    n = 0\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == 'vertices':\n"
	    "            PathTog.n += 1\n"
	    "            if PathTog.n == 1:\n"
	    "                raise AttributeError(name)\n"
	    "            return np.zeros((8, 2))\n"
	    "        if name == 'codes':\n"
	    "            return None\n"
	    "        raise AttributeError(name)\n"
	    "r.append(t(lambda: R._renderer.draw_path(R.new_gc(), PathTog(), np.eye(3), None)))\n"
	    "class Out:\n"
	    "    n = 0\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == 'shape':\n"
	    "            return (64, 64)\n"
	    "        if name == '__array__':\n"
	    "            Out.n += 1\n"
	    "            if Out.n == 1:\n"
	    "                raise AttributeError(name)\n"
	    "            return lambda *a, **k: np.zeros((1, 1))\n"
	    "        raise AttributeError(name)\n"
	    "r.append(t(lambda: ndimage.fourier_gaussian(np.ones((64, 64)), 0.0, output=Out())))\n"
	    "buf = io.StringIO()\n"
	    "pd.DataFrame({'a': [1, 2]}, index=pd.MultiIndex.from_tuples([('x', 1), ('y', "
	    "2)])).to_csv(buf)\n"
	    "idx = pd.DatetimeIndex(['2020-11-01 01:30', '2020-11-01 01:30'])\n"
	    "out = np.zeros((8, 8))\n"
	    "ndimage.fourier_gaussian(np.ones((8, 8)), 1.0, output=out)\n"
	    "r += [buf.getvalue(), idx.tz_localize('US/Eastern', ambiguous=np.array([True, "
	    "False])).astype(str).tolist(),\n"
	    "      pd.read_csv(io.StringIO('a,b\\n1,2\\n')).values.tolist(), "
	    "round(float(out.sum()), 6)]\n"
	    "plt.close('all')\n"
	    "r\n",
	    "[\"ValueError\",\"ValueError\",\"AttributeError\",\"TypeError\",\"TypeError\",\",,"
	    "a\\nx,1,1\\"
	    "ny,2,2\\n\",[\"2020-11-01 01:30:00-04:00\",\"2020-11-01 01:30:00-05:00\"],[[1,2]],10.1"
	    "3416]");
	e2e_stop();
}

/* The wrappers' checks asked each object once whether it was a path, an array or a number, and
 * handed on the objects that said no: a data descriptor of the code's (absent when asked, present
 * when matplotlib's C++ read it) had the renderer keep the code's vertices, which the transform's
 * __array__ (absent, then present, the same way) reshaped under the path iterator (a read 256
 * MiB past them: SIGSEGV). Each feature is read once, what it gives is converted, and an object
 * of the code's is never handed on (a function is called through one of the sandbox's; the
 * extra arguments of scipy.ndimage's callbacks are bound to it). */
Test(data, compiled_code_reads_only_what_the_wrappers_made)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import matplotlib.pyplot as plt\n"
	    "from scipy import ndimage\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "fig = plt.figure(figsize=(2, 2), dpi=50)\n"
	    "R = fig.canvas.get_renderer()\n"
	    "N = 4096\n"
	    "V = np.zeros((N, 2)) + 10.0\n"
	    "seen = {}\n"
	    "class Toggle:\n"
	    "    def __init__(self, key, value):\n"
	    "        self.key, self.value = key, value\n"
	    "    def __get__(self, obj, owner=None):\n"
	    "        if obj is None:\n"
	    "            raise AttributeError(self.key)\n"
	    "        seen[self.key] = seen.get(self.key, 0) + 1\n"
	    "        if seen[self.key] == 1:\n"
	    "            raise AttributeError(self.key)\n"
	    "        return self.value\n"
	    "def arr(*a, **k):\n"
	    "    V.shape = (1, 2 * N)\n"
	    "    return np.eye(3)\n"
	    "class PathTog:\n"
	    "    vertices = Toggle('v', V)\n"
	    "    codes = None\n"
	    "    should_simplify = False\n"
	    "    simplify_threshold = 0.0\n"
	    "class TransTog:\n"
	    "    __array__ = Toggle('a', arr)\n"
	    "r = [t(lambda: R._renderer.draw_path(R.new_gc(), PathTog(), TransTog(), (1.0, 0.0, "
	    "0.0, 1.0)))]\n"
	    "class W:\n"
	    "    k = 2\n"
	    "a = np.arange(16.0).reshape(4, 4)\n"
	    "r.append(ndimage.generic_filter(a, lambda b, w, s=1: b.sum() * w.k * s, 3,\n"
	    "                                extra_arguments=(W(),), extra_keywords={'s': "
	    "3})[0].tolist())\n"
	    "r.append(ndimage.generic_filter1d(a, lambda i, o, w: o.__setitem__(slice(None), "
	    "i[1:-1] * w.k),\n"
	    "                                  3, extra_arguments=(W(),))[1].tolist())\n"
	    "r.append(ndimage.geometric_transform(a, lambda c, d: (c[0] + d, c[1]), "
	    "extra_arguments=(1,),\n"
	    "                                     order=1)[0].tolist())\n"
	    "fig.text(0.5, 0.5, 'text')\n"
	    "fig.canvas.draw()\n"
	    "r.append(int(np.asarray(fig.canvas.buffer_rgba())[..., :3].min()) < 255)\n"
	    "plt.close('all')\n"
	    "r\n",
	    "[\"TypeError\",[90.0,126.0,180.0,216.0],[8.0,10.0,12.0,14.0],[4.0,5.0,6.0,7.0],true]");
	e2e_stop();
}

/* Kernels checked their arrays and then converted a number of the code's (Sobol's scale by its
 * __float__, fcluster's t, inconsistent's depth by __int__): the code's method reshaped the
 * checked array or edited the checked linkage before the kernel read it (rows whole arrays past
 * the state; a tree walked by a cluster number 2**26 past its rows: SIGSEGV), and
 * from_mlab_linkage counted cluster sizes by numbers it had not checked. Numbers are converted
 * first; the kernels read what was checked (the linkage a copy checked at the kernel). */
Test(data, numbers_of_the_code_run_before_the_kernels_checks)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.stats import qmc\n"
	    "from scipy.cluster import hierarchy\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "D = 64\n"
	    "eng = qmc.Sobol(d=D, scramble=False, bits=32)\n"
	    "eng._quasi = np.zeros(D, dtype=np.uint32)\n"
	    "eng._sv = sv = np.zeros((D, 32), dtype=np.uint32)\n"
	    "class Scale:\n"
	    "    def __float__(self):\n"
	    "        sv.shape = (1, D * 32)\n"
	    "        return 1.0\n"
	    "eng._scale = Scale()\n"
	    "r = [t(lambda: int(eng.random(2).astype(np.uint64).sum()))]\n"
	    "X = np.array([[0.0], [1.0], [3.0], [7.0]])\n"
	    "Z = hierarchy.linkage(X, 'single')\n"
	    "class T:\n"
	    "    def __float__(self):\n"
	    "        Z[-1, 0] = 5 + (1 << 26)\n"
	    "        return 2.0\n"
	    "    def __int__(self):\n"
	    "        Z[-1, 0] = 5 + (1 << 26)\n"
	    "        return 2\n"
	    "r.append(t(lambda: hierarchy.fcluster(Z, T(), criterion='distance').tolist()))\n"
	    "Z = hierarchy.linkage(X, 'single')\n"
	    "r.append(t(lambda: hierarchy.fcluster(Z, T(), criterion='maxclust').tolist()))\n"
	    "Z = hierarchy.linkage(X, 'single')\n"
	    "r.append(t(lambda: hierarchy.inconsistent(Z, T()).tolist()))\n"
	    "r.append(t(lambda: hierarchy.from_mlab_linkage(np.array([[1., 2., 0.5], [3., 1e6, "
	    "1.0]])).tolist()))\n"
	    "Z = hierarchy.linkage(X, 'single')\n"
	    "r += [hierarchy.fcluster(Z, 2.0, criterion='distance').tolist(),\n"
	    "      hierarchy.inconsistent(Z, 2).round(6).tolist(),\n"
	    "      hierarchy.from_mlab_linkage(hierarchy.to_mlab_linkage(Z)).tolist(),\n"
	    "      qmc.Sobol(d=2, scramble=False).random(4).tolist()]\n"
	    "r\n",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",[1,1,1,2],"
	    "[[1.0,0.0,1.0,0.0],[1.5,0.707107,2.0,0.707107],[3.0,1.414214,2.0,0.707107]],[[0.0,1.0,"
	    "1.0,2.0],[2.0,4.0,2.0,3.0],[3.0,5.0,4.0,4.0]],[[0.0,0.0],[0.5,0.5],[0.75,0.25],[0.25,"
	    "0.75]]]");
	e2e_stop();
}

/* matplotlib's C++ keeps the arrays it is given and reads their shape and strides through
 * numpy's pointers at each item: a TriContourGenerator over the code's z, whose shape the code
 * then set (numpy freed the block; the next array made took it, with a stride of 2**40 bytes),
 * read z at any distance (SIGSEGV); a flat iterator read items of a new dtype's size with the
 * strides of the old one (4095 bytes past the array). The code sets no shape or strides on an
 * array others hold (an array with a view included); where a library does, the array keeps the
 * block they read: the new shape is the array's own, in a new block, and what was handed on
 * reads the old one; its dtype keeps the size of its items. */
Test(data, an_array_reshaped_under_compiled_code_keeps_the_shape_it_read)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import matplotlib.pyplot as plt\n"
	    "from matplotlib.tri import Triangulation\n"
	    "x = np.array([0., 1., 0., 1.])\n"
	    "y = np.array([0., 0., 1., 1.])\n"
	    "tri = Triangulation(x, y, [[0, 1, 2], [1, 3, 2]])\n"
	    "cs = plt.tricontour(tri, np.array([0., 1., 2., 3.]))\n"
	    "G = type(cs._contour_generator)\n"
	    "cpp = tri.get_cpp_triangulation()\n"
	    "def contour(g):\n"
	    "    lines, codes = g.create_contour(1.5)\n"
	    "    return [np.round(v, 6).tolist() for v in lines], [c.tolist() for c in codes]\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "z = np.array([0., 1., 2., 3.])\n"
	    "g = G(cpp, z)\n"
	    "a = np.zeros(1)\n"
	    "r = [t(lambda: setattr(z, 'shape', (2, 2)))]\n"
	    "v = a[::1 << 37]\n"
	    "w = np.zeros(4)[::-1]\n"
	    "r += [contour(g), contour(G(cpp, np.array([0., 1., 2., 3.])))]\n"
	    "z2 = np.array([0., 1., 2., 3.])\n"
	    "g2 = G(cpp, z2)\n"
	    "r.append(t(lambda: setattr(z2, 'dtype', np.int8)))\n"
	    "it = z2.flat\n"
	    "r.append(t(lambda: setattr(z2, 'dtype', np.dtype('V32'))))\n"
	    "r.append(contour(g2))\n"
	    "buf = np.zeros(4096, dtype=np.uint8)\n"
	    "it2 = buf.flat\n"
	    "del buf\n"
	    "r.append(t(lambda: setattr(it2.base, 'dtype', np.dtype('V4096'))))\n"
	    "base = np.zeros(64)\n"
	    "view = base[:]\n"
	    "del base\n"
	    "r.append(t(lambda: view.base.resize(10 ** 6)))\n"
	    "r.append([view.shape, len(it2)])\n"
	    "b = np.arange(6.0)\n"
	    "c = b.view()\n"
	    "r.append(t(lambda: setattr(b, 'shape', (2, 3))))\n"
	    "del c\n"
	    "b.shape = (2, 3)\n"
	    "b.strides = (8, 16)\n"
	    "r += [b.tolist(), b.T.shape]\n"
	    "plt.close('all')\n"
	    "r\n",
	    "[\"ValueError\",[[[[0.0,0.75],[0.5,0.5],[1.0,0.25]]],[[1,2,2]]],[[[[0.0,0.75],[0.5,0."
	    "5],"
	    "[1.0,0.25]]],[[1,2,2]]],\"ValueError\",\"ValueError\",[[[[0.0,0.75],[0.5,0.5],[1.0,"
	    "0.25]]],[[1,2,2]]],\"ValueError\",\"ValueError\",[[64],4096],\"ValueError\",[[0.0,2.0,"
	    "4.0],"
	    "[1.0,3.0,5.0]],[3,2]]");
	e2e_stop();
}

/* Kernels that took lengths from one object and read another: LatentDirichletAllocation's
 * _dirichlet_expectation_1d wrote a value for each of doc_topic's into out, of one value (a
 * fitted exp_dirichlet_component_ whose slices answered other shapes: a heap write of chosen
 * values); grouped rolling windows were bounded by the grouper's indices, which the code's
 * indexer edited while the bounds were made (windows 64 MiB past the values: SIGSEGV);
 * to_csv read a column given as a list of one item for every row, and its writer's writerows
 * (the code's) emptied the rows the kernel then wrote past. Each kernel checks the lengths of
 * what it is given, to_csv's columns are arrays and its rows copies for a writer of the code's;
 * the same APIs used as meant answer as on the host. */
Test(data, kernels_check_the_lengths_they_are_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io\n"
	    "import numpy as np\n"
	    "import pandas as pd\n"
	    "from pandas.api.indexers import BaseIndexer\n"
	    "from pandas.io.formats import csvs\n"
	    "from pandas.io.formats.format import DataFrameFormatter\n"
	    "from sklearn.decomposition import LatentDirichletAllocation\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "X = np.random.RandomState(0).randint(0, 3, size=(5, 4)).astype(float)\n"
	    "lda = LatentDirichletAllocation(n_components=1, max_iter=2, random_state=0).fit(X)\n"
	    "class W:\n"
	    "    shape = (1, 4)\n"
	    "    def __getitem__(self, key):\n"
	    "        return Word()\n"
	    "class Word:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return np.ones((1, 4)) if dtype is None else np.ones((1, 4), dtype)\n"
	    "    @property\n"
	    "    def T(self):\n"
	    "        return np.full((4, 4096), 1.0)\n"
	    "good = lda.exp_dirichlet_component_\n"
	    "lda.exp_dirichlet_component_ = W()\n"
	    "r = [t(lambda: lda.transform(np.ones((1, 4))))]\n"
	    "lda.exp_dirichlet_component_ = good\n"
	    "r.append(np.round(lda.transform(X[:2]), 6).tolist())\n"
	    "df = pd.DataFrame({'g': ['a', 'b', 'b'], 'x': [1.0, 2.0, 3.0]})\n"
	    "gb = df.groupby('g')\n"
	    "ind = gb.grouper.indices\n"
	    "orig_b = ind['b']\n"
	    "BIG = 1 << 23\n"
	    "class Long:\n"
	    "    def __len__(self):\n"
	    "        return BIG\n"
	    "calls = []\n"
	    "class Evil(BaseIndexer):\n"
	    "    def get_window_bounds(self, num_values=0, min_periods=None, center=None, "
	    "closed=None,\n"
	    "                          step=None):\n"
	    "        calls.append(num_values)\n"
	    "        if len(calls) == 1:\n"
	    "            ind['b'] = Long()\n"
	    "            return np.array([0]), np.array([1])\n"
	    "        ind['b'] = orig_b\n"
	    "        return np.array([BIG - 2, BIG - 1]), np.array([BIG - 1, BIG])\n"
	    "r.append(t(lambda: gb.rolling(Evil(window_size=1), min_periods=1).x.sum()))\n"
	    "class Prev(BaseIndexer):\n"
	    "    def get_window_bounds(self, num_values=0, min_periods=None, center=None, "
	    "closed=None,\n"
	    "                          step=None):\n"
	    "        end = np.arange(1, num_values + 1, dtype=np.int64)\n"
	    "        return np.maximum(end - 2, 0), end\n"
	    "g2 = pd.DataFrame({'g': list('aabbab'), 'x': [1.0, 2, 3, 4, 5, 6]}).groupby('g')\n"
	    "r.append(g2.rolling(Prev(window_size=2), min_periods=1).x.sum().tolist())\n"
	    "r.append(g2.x.expanding().mean().tolist())\n"
	    "r.append(g2.x.rolling(2).apply(lambda w: w.max(), raw=True).fillna(-1).tolist())\n"
	    "K = 4000\n"
	    "frame = pd.DataFrame({'c0': ['x'] * K})\n"
	    "class Res:\n"
	    "    items = ['c0']\n"
	    "    def iget_values(self, i):\n"
	    "        return ['first']\n"
	    "class Mgr:\n"
	    "    def to_native_types(self, **kw):\n"
	    "        return Res()\n"
	    "class Chunk:\n"
	    "    _mgr = Mgr()\n"
	    "class ILoc:\n"
	    "    def __getitem__(self, s):\n"
	    "        return Chunk()\n"
	    "class Obj:\n"
	    "    index = frame.index\n"
	    "    columns = frame.columns\n"
	    "    iloc = ILoc()\n"
	    "f = csvs.CSVFormatter(DataFrameFormatter(frame), path_or_buf=io.StringIO(), "
	    "chunksize=K)\n"
	    "f.obj = Obj()\n"
	    "r.append(t(f.save))\n"
	    "class Emptying:\n"
	    "    written = 0\n"
	    "    def writerow(self, row):\n"
	    "        pass\n"
	    "    def writerows(self, rows):\n"
	    "        Emptying.written += len(rows)\n"
	    "        for i in range(len(rows)):\n"
	    "            rows[i] = []\n"
	    "class F(csvs.CSVFormatter):\n"
	    "    writer = property(lambda self: Emptying(), lambda self, v: None)\n"
	    "big = pd.DataFrame({'c%d' % i: range(1000) for i in range(50)})\n"
	    "r.append(t(lambda: F(DataFrameFormatter(big), path_or_buf=io.StringIO()).save()))\n"
	    "r.append(Emptying.written)\n"
	    "buf = io.StringIO()\n"
	    "pd.DataFrame({'a': [1, 2], 'b': ['x', None]},\n"
	    "             index=pd.MultiIndex.from_tuples([('p', 1), ('q', 2)])).to_csv(buf, "
	    "chunksize=1)\n"
	    "r.append(buf.getvalue())\n"
	    "r.append(pd.DataFrame({'d': pd.date_range('2020', periods=3), 'c': "
	    "pd.Categorical(['a', 'b', 'a']),\n"
	    "                       'n': pd.array([1, None, 3], "
	    "dtype='Int64')}).to_csv(index=False))\n"
	    "r\n",
	    "[\"ValueError\",[[1.0],[1.0]],\"ValueError\",[1.0,3.0,7.0,3.0,7.0,10.0],[1.0,1.5,2."
	    "6666666666666665,3.0,3.5,4.333333333333333],[-1.0,2.0,5.0,-1.0,4.0,6.0],"
	    "\"ValueError\",\"done\",1000,\",,a,b\\np,1,1,x\\nq,2,2,\\n\",\"d,c,n\\n2020-01-01,a,"
	    "1\\n2020-01-02,b,\\n2020-01-03,a,3\\n\"]");
	e2e_stop();
}

/* read_csv's C reader freed its parser's buffers and source on close() and stayed usable:
 * get_chunk() after close() read through the freed source (the code's number taken for the
 * source object's address), and a converter or a source's read() that read from their own
 * reader had it tokenize under the column being converted (freed words parsed as text). The
 * reader's memory is freed with it; it reads once at a time and not from the code it runs. */
Test(data, a_csv_reader_reads_once_at_a_time_and_not_after_it_is_freed)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io\n"
	    "import pandas as pd\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "data = 'a\\n' + ''.join('row%06d\\n' % i for i in range(40000))\n"
	    "calls = []\n"
	    "def reader_of(it):\n"
	    "    return it._engine._reader\n"
	    "def conv(v):\n"
	    "    if not calls:\n"
	    "        calls.append(t(lambda: rd.read()))\n"
	    "        calls.append(t(lambda: rd.read_low_memory(5)))\n"
	    "        calls.append(t(lambda: rd._convert_column_data(5)))\n"
	    "        calls.append(t(lambda: rd.close()))\n"
	    "    return v\n"
	    "it = pd.read_csv(io.StringIO(data), iterator=True, converters={'a': conv})\n"
	    "rd = reader_of(it)\n"
	    "first = it.get_chunk(1000)\n"
	    "r = [calls, len(first), first['a'].iloc[-1]]\n"
	    "class Src:\n"
	    "    def __init__(self):\n"
	    "        self.inner = io.StringIO(data)\n"
	    "        self.seen = []\n"
	    "    def read(self, n=-1):\n"
	    "        if len(self.seen) == 1:\n"
	    "            self.seen.append(t(lambda: r2.read(3)))\n"
	    "        else:\n"
	    "            self.seen.append('read')\n"
	    "        return self.inner.read(n)\n"
	    "src = Src()\n"
	    "it2 = pd.read_csv(src, iterator=True)\n"
	    "r2 = reader_of(it2)\n"
	    "r += [len(it2.get_chunk(40000)), src.seen[:3]]\n"
	    "it3 = pd.read_csv(io.StringIO('a,b\\n1,2\\n3,4\\n5,6\\n'), iterator=True)\n"
	    "it3.close()\n"
	    "r.append(t(lambda: it3.get_chunk(1)))\n"
	    "r3 = reader_of(it3)\n"
	    "r.append(t(lambda: r3._convert_column_data(1)))\n"
	    "r.append(pd.read_csv(io.StringIO('a,b\\n1,2\\n3,4\\n5,6\\n7,8\\n'), skiprows=lambda "
	    "i: i % 2 == 1,\n"
	    "                       converters={'b': lambda v: int(v) * 10}).values.tolist())\n"
	    "r.append([len(c) for c in pd.read_csv(io.StringIO(data), chunksize=15000)])\n"
	    "r\n",
	    "[[\"RuntimeError\",\"RuntimeError\",\"RuntimeError\",\"done\"],1000,\"row000999\","
	    "40000,[\"read\",\"RuntimeError\"],\"done\",\"TypeError\",[[3,40],[7,80]],[15000,15000,"
	    "10000]]");
	e2e_stop();
}

/* scikit-learn's compiled kernels took sizes from one array and wrote another: hc_get_heads
 * followed a parent index the cache of a memory= object of the code's answered (words read
 * 8 TB away), log_logistic wrote X's cells through out's strides whatever out's shape, NMF's
 * coordinate descent read its permutation for each of W's columns (a components_ whose .T had
 * one), the gradient boosting's histogram builder copied gradients of fewer samples than X from
 * a loss of the code's and wrote the rest past the copy; an int subclass answered range checks
 * (a cluster count of 0). Each is refused; the same estimators answer as on the host. */
Test(data, scikit_learn_kernels_check_what_they_are_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.cluster import AgglomerativeClustering, KMeans\n"
	    "from sklearn.decomposition import NMF\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor\n"
	    "from sklearn.utils.extmath import log_logistic\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.rand(40, 2)\n"
	    "class Cache:\n"
	    "    def cache(self, f):\n"
	    "        def tree(*a, **k):\n"
	    "            children, n_cc, n_leaves, parents = f(*a, **k)\n"
	    "            parents = np.array(parents)\n"
	    "            parents[0] = 10 ** 12\n"
	    "            return children, n_cc, n_leaves, parents\n"
	    "        return tree\n"
	    "conn = np.eye(40, k=1) + np.eye(40, k=-1)\n"
	    "r = [t(lambda: AgglomerativeClustering(3, memory=Cache(), connectivity=conn,\n"
	    "                                       compute_full_tree=False).fit(X))]\n"
	    "big = np.zeros(64)\n"
	    "out = big[0:3:2].reshape(1, 2)[::1 << 20]\n"
	    "r.append(t(lambda: log_logistic(np.ones((2, 2)), out=out)))\n"
	    "m = NMF(n_components=2, solver='cd', init='random', random_state=0, "
	    "max_iter=50).fit(X)\n"
	    "m.n_components = 64\n"
	    "class H:\n"
	    "    dtype = np.dtype(np.float64)\n"
	    "    shape = (64, 2)\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return np.ones((64, 2))\n"
	    "    @property\n"
	    "    def T(self):\n"
	    "        return np.ones((2, 1))\n"
	    "good = m.components_\n"
	    "m.components_, m.max_iter = H(), 1\n"
	    "r.append(t(lambda: m.transform(X)))\n"
	    "y = X[:, 0] + rng.rand(40) * 0.1\n"
	    "base = type(HistGradientBoostingRegressor(max_iter=1).fit(X, y)._loss)\n"
	    "class Loss(base):\n"
	    "    def init_gradient_and_hessian(self, n_samples, dtype=np.float32, order='F'):\n"
	    "        return (np.zeros((20, 1), dtype=np.float32, order='F'),\n"
	    "                np.ones((1, 1), dtype=np.float32, order='F'))\n"
	    "    def gradient(self, *args, **kwargs):\n"
	    "        return None\n"
	    "r.append(t(lambda: HistGradientBoostingRegressor(loss=Loss(), max_iter=1,\n"
	    "                                                 early_stopping=False).fit(X, y)))\n"
	    "def lie():\n"
	    "    class N(int):\n"
	    "        def __lt__(self, o):\n"
	    "            return True\n"
	    "    return N\n"
	    "r.append(t(lie))\n"
	    "def lie_np():\n"
	    "    class N(np.int64):\n"
	    "        def __gt__(self, o):\n"
	    "            return False\n"
	    "    return N\n"
	    "r.append(t(lie_np))\n"
	    "r.append(t(lambda: KMeans(n_clusters=0, n_init=1).fit(X)))\n"
	    "r.append(AgglomerativeClustering(3, connectivity=conn, "
	    "compute_full_tree=False).fit(X).labels_.tolist())\n"
	    "r.append(np.round(log_logistic(np.array([[-1.0, 0.0], [2.0, 30.0]])), 6).tolist())\n"
	    "m.components_, m.n_components, m.max_iter = good, 2, 50\n"
	    "r.append(np.round(m.transform(X[:2]), 4).shape)\n"
	    "h = HistGradientBoostingRegressor(max_iter=15, random_state=0, interaction_cst=[[0], "
	    "[1]]).fit(X, y)\n"
	    "r.append(round(float(h.score(X, y)), 6))\n"
	    "r.append(sorted(np.bincount(KMeans(n_clusters=3, n_init=3, "
	    "random_state=0).fit(X).labels_).tolist()))\n"
	    "r\n",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"TypeError\","
	    "\"TypeError\",\"InvalidParameterError\",[2,2,2,2,2,2,2,2,2,2,2,0,0,0,0,0,0,0,1,1,1,1,"
	    "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],[[-1.313262,-0.693147],[-0.126928,-0.0]],[2,2],0."
	    "680832,[11,13,16]]");
	e2e_stop();
}

/* A live compiled object initialised again under its own use: a ball tree's metric function
 * rebuilt the tree on 5000 points while query_radius ran (an index and a distance written for
 * each into buffers sized for 40), a Mahalanobis metric given a 1x1 VI under a tree of 200
 * features (its scratch vector written past); PolynomialFeatures' sparse expansion took an
 * interaction_only of 2 set after fit (it counted fewer values than it wrote). A tree is not
 * built while a query runs, a metric is initialised when made, the expansion takes 0 or 1. */
Test(data, live_objects_are_not_initialised_again_under_their_use)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import scipy.sparse as sp\n"
	    "from sklearn.neighbors import BallTree, KDTree\n"
	    "from sklearn.preprocessing import PolynomialFeatures\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "state = {'phase': 'build0', 'tree': None}\n"
	    "BIG = np.random.RandomState(1).rand(5000, 2)\n"
	    "class T(BallTree):\n"
	    "    def again(self, X):\n"
	    "        super().__init__(X, leaf_size=2, metric=f)\n"
	    "def f(a, b):\n"
	    "    p = state['phase']\n"
	    "    if p == 'query':\n"
	    "        state['phase'] = 'build1'\n"
	    "        state['tree'].again(BIG)\n"
	    "        state['phase'] = 'after'\n"
	    "        return 5.0\n"
	    "    if p == 'after':\n"
	    "        return 0.0\n"
	    "    return 10.0\n"
	    "tree = T(np.random.RandomState(0).rand(40, 2), leaf_size=2, metric=f)\n"
	    "state['tree'] = tree\n"
	    "state['phase'] = 'query'\n"
	    "ind = tree.query_radius(np.zeros((1, 2)), r=10.0)\n"
	    "r = [len(ind[0]) <= 40]\n"
	    "from sklearn.metrics import DistanceMetric\n"
	    "dm = DistanceMetric.get_metric('mahalanobis', VI=np.eye(200))\n"
	    "wide = BallTree(np.random.RandomState(4).rand(20, 200), metric=dm)\n"
	    "r.append(t(lambda: type(dm).__init__(dm, VI=np.eye(1))))\n"
	    "r.append(wide.query(np.zeros((1, 200)), k=1)[1].shape)\n"
	    "X = sp.csr_matrix(np.random.RandomState(2).rand(6, 4) * (np.arange(24).reshape(6, 4) "
	    "% 3 > 0))\n"
	    "pf = PolynomialFeatures(2, interaction_only=True).fit(X)\n"
	    "pf.interaction_only = 2\n"
	    "r.append(t(lambda: pf.transform(X)))\n"
	    "pf.interaction_only = True\n"
	    "pts = np.random.RandomState(3).rand(30, 2)\n"
	    "bt = BallTree(pts, leaf_size=4, metric=lambda a, b: float(np.abs(a - b).sum()))\n"
	    "d, i = bt.query(pts[:2], k=3)\n"
	    "kd = KDTree(pts)\n"
	    "r += [np.round(d, 6).tolist(), i.tolist(), kd.query_radius(pts[:1], r=0.3, "
	    "count_only=True).tolist(),\n"
	    "      np.round(pf.transform(X).toarray()[1], 6).tolist(),\n"
	    "      np.round(PolynomialFeatures(3).fit_transform(X).toarray()[2], 6).tolist()[:8]]\n"
	    "r\n",
	    "[true,\"TypeError\",[1,1],\"ValueError\",[[0.0,0.078316,0.159262],[0.0,0.069133,0."
	    "127379]],[[0,12,29],[1,24,9]],[10],[1.0,0.420368,0.330335,0.0,0.619271,0.138862,0.0,0."
	    "260322,0.0,0.204567,0.0],[1.0,0.299655,0.0,0.621134,0.529142,0.089793,0.0,0.186126]]");
	e2e_stop();
}

/* numpy's check of references before a resize cannot count a holder that hands its array back:
 * v.base.resize() with the code's own name dropped freed the memory the view went on reading
 * and writing (a bytes object's header read, its data written), it.base.resize() the memory a
 * flat iterator read; a subarray dtype set, or a resize to the same size, freed the dimensions
 * a C++ contour generator read (at a stride of 2**40). Each is refused on an array something
 * else holds now (a view, an iterator, a generator); a resize by name and groupby work. */
Test(data, holders_numpy_cannot_count_keep_their_memory)
{
	start_data(NULL);
	e2e_expect_result(
	    "import array\n"
	    "import numpy as np\n"
	    "import pandas as pd\n"
	    "import matplotlib.pyplot as plt\n"
	    "from matplotlib.tri import Triangulation\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "v = np.arange(1024.0)[:]\n"
	    "r = [t(lambda: v.base.resize(1 << 17, refcheck=True))]\n"
	    "spray = [b'\\x41' * 8158 for _ in range(16)]\n"
	    "before = v[:6].tolist()\n"
	    "v[4:8] = 0.0\n"
	    "r += [before, sum(s[:32] != b'\\x41' * 32 for s in spray)]\n"
	    "it = np.zeros(64, dtype=np.uint8).flat\n"
	    "r.append(t(lambda: it.base.resize(1 << 16, refcheck=True)))\n"
	    "r.append([len(it), int(next(it))])\n"
	    "tri = Triangulation(np.array([0., 1., 0., 1.]), np.array([0., 0., 1., "
	    "1.]), [[0, 1, 2], [1, 3, 2]])\n"
	    "cs = plt.tricontour(tri, np.array([0., 1., 2., 3.]))\n"
	    "G = type(cs._contour_generator)\n"
	    "z = np.array([0., 1., 2., 3.])\n"
	    "g = G(tri.get_cpp_triangulation(), z)\n"
	    "def subarray():\n"
	    "    z.dtype = '(2,)f4'\n"
	    "r.append(t(subarray))\n"
	    "r.append(t(lambda: z.resize((1, 1, 2, 2), refcheck=False)))\n"
	    "far = np.zeros(1)[::1 << 37]\n"
	    "lines, codes = g.create_contour(1.5)\n"
	    "r.append([np.round(l, 6).tolist() for l in lines])\n"
	    "a = np.zeros(3)\n"
	    "a.resize(5)\n"
	    "r.append(a.tolist())\n"
	    "labels = array.array('q', [0, 1, 0, 1])\n"
	    "r.append(pd.DataFrame({'g': [0, 1, 0, 1], 'x': [1.0, 2.0, 3.0, "
	    "4.0]}).groupby('g').x.sum().tolist())\n"
	    "plt.close('all')\n"
	    "r\n",
	    "[\"ValueError\",[0.0,1.0,2.0,3.0,4.0,5.0],0,\"ValueError\",[64,0],\"ValueError\","
	    "\"ValueError\",[[[0.0,0.75]"
	    ",[0.5,0.5],[1.0,0.25]]],[0.0,0.0,0.0,0.0,0.0],[4.0,6.0]]");
	e2e_stop();
}

/* matplotlib's warnings name the first frame outside matplotlib: it was the sandbox's wrapper of
 * savefig (<safepy data>), not the code's line. They name the code's line, as on the host, and
 * tracebacks show no frame of the wrapper's. */
Test(data, matplotlib_warnings_name_the_code_s_line)
{
	json_object *r;
	const char *tb;

	start_data(NULL);
	e2e_expect_result("import warnings, io\n"
	                  "import matplotlib.pyplot as plt\n"
	                  "fig, ax = plt.subplots()\n"
	                  "ax.plot([1, 2])\n"
	                  "ax.set_title('\\u4e2d')\n"
	                  "with warnings.catch_warnings(record=True) as w:\n"
	                  "    warnings.simplefilter('always')\n"
	                  "    fig.savefig(io.BytesIO())\n"
	                  "    ax.set_xscale('log'); ax.set_xlim(-1, 10)\n"
	                  "plt.close(fig)\n"
	                  "sorted({(x.filename, x.lineno) for x in w})\n",
	                  "[[\"<code>\",8],[\"<code>\",9]]");
	/* a traceback through the wrapper shows the code's line, then matplotlib's, as on the
	 * host: no frame of the sandbox's own */
	r = e2e_expect_error("plt.plot([1, 2])\nplt.savefig(io.BytesIO(), format='nonesuch')",
	                     "ValueError");
	tb = mcpc_err_str(r, "traceback");
	cr_assert(strstr(tb,
	                 "line 2, in <module>\n    plt.savefig(io.BytesIO(), format='nonesuch')\n"
	                 "  File \"") &&
	              strstr(tb, "matplotlib/pyplot.py\", line ") && !strstr(tb, "<safepy"),
	          "%s", tb);
	e2e_stop();
}

/* to_pickle wrote its file and said nothing, and the read_pickle meant to load it in a later
 * call was refused: a frame cached so was found lost only then. Writing says at once that the
 * sandbox will not read it back, and what will. */
Test(data, to_pickle_says_the_sandbox_does_not_read_it_back)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import io\n"
	           "import pandas as pd\n"
	           "b = io.BytesIO()\n"
	           "pd.DataFrame({'a': [1, 2]}).to_pickle(b)\n"
	           "b.seek(0)\n"
	           "try:\n"
	           "    pd.read_pickle(b)\n"
	           "    back = 'read back'\n"
	           "except PermissionError as e:\n"
	           "    back = 'refused'\n"
	           "[len(b.getvalue()) > 100, back]");
	e2e_assert_result(r, "to_pickle", "[true,\"refused\"]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "[to_pickle: written, but the sandbox does not read pickles back "
	                 "(pd.read_pickle runs what a pickle names): to use it in a later call, "
	                 "keep it in a variable (the session keeps it) or write it with to_csv, "
	                 "to_json or to_excel]\n",
	                 "%s", mcpc_json(r));
	e2e_stop();
}

/* plt.show() closes the figures it shows (as a notebook does): a plt.savefig() after it saved
 * a new, empty figure and said nothing. It says why the figure is empty and what to do; a
 * savefig with its figure open says nothing. */
Test(data, savefig_after_show_says_the_figure_is_empty)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import io\n"
	           "import matplotlib.pyplot as plt\n"
	           "plt.plot([1, 2, 3])\n"
	           "b = io.BytesIO()\n"
	           "plt.savefig(b, format='svg')\n"
	           "plt.show()\n"
	           "e = io.BytesIO()\n"
	           "plt.savefig(e, format='svg')\n"
	           "plt.close('all')\n"
	           "[b'line2d' in b.getvalue(), b'line2d' in e.getvalue()]");
	e2e_assert_result(r, "savefig", "[true,false]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "[plt.savefig(): no open figure, so an empty one was saved. plt.show() "
	                 "shows the figures and closes them: call savefig before show, or "
	                 "fig.savefig(...) on a figure kept in a name]\n",
	                 "%s", mcpc_json(r));
	/* "Now save that chart": the figure the call before drew was shown and closed as that
	 * call ended; saving in the next call saves a blank figure, and says why. A figure kept
	 * in a name is saved whole. */
	e2e_ok("fig, ax = plt.subplots()\nax.plot([1, 2, 3])\n0");
	r = e2e_ok("e = io.BytesIO()\n"
	           "plt.savefig(e, format='svg')\n"
	           "k = io.BytesIO()\n"
	           "fig.savefig(k, format='svg')\n"
	           "plt.close('all')\n"
	           "[b'line2d' in e.getvalue(), b'line2d' in k.getvalue()]");
	e2e_assert_result(r, "savefig next call", "[false,true]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "[plt.savefig(): no open figure, so an empty one was saved. A figure is "
	                 "shown and closed at the end of the call that drew it: save it in that "
	                 "call, or keep it in a name (fig = plt.gcf()) and call fig.savefig(...) "
	                 "later]\n",
	                 "%s", mcpc_json(r));
	e2e_stop();
}

/* A resize the sandbox refuses with refcheck=False given: numpy's answer told the code to pass
 * refcheck=False. It says that the sandbox does not take it, and what to use. */
Test(data, a_refused_resize_says_refcheck_is_not_taken)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "b = np.arange(6)\n"
	                  "c = b\n"
	                  "try:\n"
	                  "    b.resize((8,), refcheck=False)\n"
	                  "    m = 'resized'\n"
	                  "except ValueError as e:\n"
	                  "    m = str(e)\n"
	                  "a = np.zeros(3)\n"
	                  "a.resize(5)\n"
	                  "['refcheck=False is not taken in the sandbox' in m,\n"
	                  " 'np.resize(a, shape)' in m, a.tolist(), c.tolist()]",
	                  "[true,true,[0.0,0.0,0.0,0.0,0.0],[0,1,2,3,4,5]]");
	e2e_stop();
}

/* The second round against the resize and warnings fixes: a Fortran-order array's view read
 * the memory its base's resize freed (the copy was made for C order only); an array of objects
 * resized so would own its objects twice (each block holds a reference of its own now, and the
 * view reads live objects); numpy.testing's suppress_warnings set the
 * real module's filters to another list, freed under the C warn loop; a ball tree was built
 * again from its own metric while being built (node records written past); a KMeans subclass
 * that skipped its parameter checks ran Lloyd's step with no centers. Each is refused or
 * harmless; suppress_warnings and catch_warnings still filter. */
Test(data, resizes_and_filters_hold_in_every_layout)
{
	start_data(NULL);
	e2e_expect_result(
	    "import warnings\n"
	    "import numpy as np\n"
	    "import scipy.sparse as sp\n"
	    "from numpy.testing import suppress_warnings\n"
	    "from sklearn.cluster import KMeans\n"
	    "from sklearn.neighbors import BallTree\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "v = np.zeros((32, 32), order='F')[:, :]\n"
	    "v[:] = 1.5\n"
	    "r = [t(lambda: v.base.resize(1 << 17, refcheck=True))]\n"
	    "spray = [b'\\x41' * 8158 for _ in range(16)]\n"
	    "col = v[:6, 0].tolist()\n"
	    "v[4:8, 0] = 0.0\n"
	    "r += [col, sum(s[:32] != b'\\x41' * 32 for s in spray)]\n"
	    "o = np.array([object() for _ in range(8)], dtype=object)[:]\n"
	    "r.append(t(lambda: o.base.resize(4096, refcheck=True)))\n"
	    "junk = [object() for _ in range(64)]\n"
	    "r.append([type(x).__name__ for x in o] == ['object'] * 8)\n"
	    "log = []\n"
	    "class M(type):\n"
	    "    def __subclasscheck__(cls, sub):\n"
	    "        log.append('called')\n"
	    "        if len(log) == 1:\n"
	    "            s1.__exit__(None, None, None)\n"
	    "            warnings.warn('inner', RuntimeWarning)\n"
	    "            junk = [[i] * 12 for i in range(200)]\n"
	    "        return False\n"
	    "class Evil(Warning, metaclass=M):\n"
	    "    pass\n"
	    "s1 = suppress_warnings()\n"
	    "s1.__enter__()\n"
	    "for i in range(12):\n"
	    "    warnings.filterwarnings('ignore', category=Evil)\n"
	    "r.append(t(lambda: warnings.warn('outer', UserWarning)))\n"
	    "r.append(len(log) > 0)\n"
	    "state = {'n': 0}\n"
	    "class T(BallTree):\n"
	    "    def again(self, X):\n"
	    "        super().__init__(X, leaf_size=1, metric=f)\n"
	    "def f(a, b):\n"
	    "    state['n'] += 1\n"
	    "    if state['n'] == 3:\n"
	    "        tree.again(np.random.RandomState(1).rand(2000, 2))\n"
	    "    return float(np.abs(a - b).sum())\n"
	    "tree = None\n"
	    "def build():\n"
	    "    global tree\n"
	    "    tree = T.__new__(T)\n"
	    "    T.__init__(tree, np.random.RandomState(0).rand(16, 2), leaf_size=1, metric=f)\n"
	    "r.append(t(build))\n"
	    "class K(KMeans):\n"
	    "    def _validate_params(self):\n"
	    "        pass\n"
	    "r.append(t(lambda: K(n_clusters=0, init='random', n_init=1, "
	    "max_iter=1).fit(sp.csr_matrix(np.ones((3, 4))))))\n"
	    "with suppress_warnings() as sup:\n"
	    "    sup.filter(RuntimeWarning)\n"
	    "    np.log(np.array([-1.0]))\n"
	    "with warnings.catch_warnings(record=True) as w:\n"
	    "    warnings.simplefilter('always')\n"
	    "    np.log(np.array([-1.0]))\n"
	    "r.append(len(w))\n"
	    "r\n",
	    "[\"ValueError\",[1.5,1.5,1.5,1.5,1.5,1.5],0,\"ValueError\",true,\"done\",true,"
	    "\"RuntimeError\","
	    "\"ValueError\",1]");
	e2e_stop();
}

/* numpy's bit generators took their state's positions unchecked: MT19937's pos (its state
 * property, RandomState.set_state, np.random.set_state) and Philox's buffer_pos were where
 * the next draw read (any memory), and MT19937.jumped() wrote through them; a RandomState's
 * bit generator replaced left it drawing from the freed one. A fitted SVC's dual coefficients
 * replaced by a 1x1 array were read for each support vector, and KMeans centers with fewer
 * features than X were read past (MiniBatchKMeans' counts written past). Each is refused; seeded
 * draws, SVC and KMeans answer as before. */
Test(data, random_states_and_fitted_models_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.svm import SVC\n"
	    "from sklearn.cluster import KMeans, MiniBatchKMeans\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def mt_pos(pos):\n"
	    "    mt = np.random.MT19937(0)\n"
	    "    s = mt.state\n"
	    "    s['state']['pos'] = pos\n"
	    "    mt.state = s\n"
	    "    return mt.random_raw(1).tolist()\n"
	    "def philox_pos(pos):\n"
	    "    p = np.random.Philox(0)\n"
	    "    s = p.state\n"
	    "    s['buffer_pos'] = pos\n"
	    "    p.state = s\n"
	    "    return p.random_raw(1).tolist()\n"
	    "rs = np.random.RandomState(0)\n"
	    "name, key, pos, g, c = rs.get_state()\n"
	    "r = [t(lambda: mt_pos(1 << 30)), t(lambda: mt_pos(-100000)), t(lambda: philox_pos(-(1 "
	    "<< 20))),\n"
	    "     t(lambda: rs.set_state((name, key, 1 << 30, g, c))),\n"
	    "     t(lambda: np.random.set_state(('MT19937', key, -5))),\n"
	    "     t(lambda: setattr(rs, '_bit_generator', None)),\n"
	    "     t(lambda: setattr(np.random.default_rng(0), '_bit_generator', None))]\n"
	    "X = np.random.RandomState(1).rand(300, 3)\n"
	    "y = np.arange(300) % 2\n"
	    "svc = SVC(C=1e-3).fit(X, y)\n"
	    "svc._dual_coef_ = np.zeros((1, 1))\n"
	    "r.append(t(lambda: svc.decision_function(X[:3])))\n"
	    "km = KMeans(2, n_init=2, random_state=0).fit(X)\n"
	    "km.cluster_centers_ = np.zeros((2, 1))\n"
	    "r += [t(lambda: km.predict(X)), t(lambda: km.score(X))]\n"
	    "mb = MiniBatchKMeans(2, n_init=2, random_state=0).fit(X)\n"
	    "mb._counts = np.zeros(1)\n"
	    "r.append(t(lambda: mb.partial_fit(X)))\n"
	    "np.random.seed(3)\n"
	    "a = np.random.randint(0, 1000, 3).tolist()\n"
	    "st = np.random.get_state()\n"
	    "b = np.random.randint(0, 1000, 3).tolist()\n"
	    "np.random.set_state(st)\n"
	    "mt = np.random.MT19937(1)\n"
	    "r += [np.random.RandomState(5).randint(0, 1000, 3).tolist(),\n"
	    "      np.random.default_rng(7).integers(0, 1000, 3).tolist(), a, b == "
	    "np.random.randint(0, 1000, 3).tolist(),\n"
	    "      mt_pos(624), philox_pos(4), mt.jumped().random_raw(2).tolist()]\n"
	    "s2 = SVC(random_state=0).fit(X, (X[:, 0] > 0.5).astype(int))\n"
	    "r += [s2.predict(X[:6]).tolist(), round(float(s2.score(X, (X[:, 0] > "
	    "0.5).astype(int))), 4)]\n"
	    "k2 = KMeans(2, n_init=2, random_state=0).fit(X)\n"
	    "r += [sorted(np.bincount(k2.predict(X)).tolist()), round(float(k2.score(X)), 3)]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"AttributeError\",\"AttributeError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",[867,206,701],[944,625,684],[874,664,249],true,[2606108953],["
	    "259491006799949737],[1649717886,2919053981],[0,0,0,1,0,1],0.9833,[150,150],-54.017]");
	e2e_stop();
}

/* np.argmax and np.argmin of an array of objects kept the best item so far unowned across the
 * next comparison: a comparison the comparison hold does not cover (a deque's) ran the user's
 * __eq__ on its items, which dropped the best item from its array; the next comparison handed
 * the freed object to the user's __gt__ / __lt__ (its block taken by an object of the
 * user's). The type's argmax and argmin hold both objects they compare: the compared one is
 * the live deque. Fractions, strings, NaN and 2-D axes answer as numpy does. */
Test(data, object_argmax_and_argmin_hold_the_items_they_compare)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from collections import deque\n"
	    "from fractions import Fraction\n"
	    "def probe(fn, op):\n"
	    "    a = np.empty(3, dtype=object)\n"
	    "    spray, seen = [], []\n"
	    "    class X:\n"
	    "        def __init__(self, act): self.act = act\n"
	    "        def __eq__(self, o):\n"
	    "            if self.act:\n"
	    "                self.act = False\n"
	    "                a[0] = None\n"
	    "            return True\n"
	    "        __hash__ = None\n"
	    "    def cmp(self, o):\n"
	    "        spray.extend(deque() for i in range(64))\n"
	    "        seen.append(any(o is d for d in spray))\n"
	    "        return False\n"
	    "    setattr(X, op, cmp)\n"
	    "    a[0] = deque([X(False)])\n"
	    "    a[1] = deque([X(True)])\n"
	    "    a[2] = X(False)\n"
	    "    return [int(fn(a)), seen]\n"
	    "r = [probe(np.argmax, '__gt__'), probe(np.argmin, '__lt__')]\n"
	    "fr = np.array([Fraction(1, 3), Fraction(5, 2), Fraction(-1, 7), Fraction(5, 2)], "
	    "dtype=object)\n"
	    "st = np.array(['pear', 'apple', 'zoo', 'fig'], dtype=object)\n"
	    "m = np.array([[3, 'b'], [1, 'a'], [7, 'c']], dtype=object)\n"
	    "nan = np.array([1.0, float('nan'), 3.0, -2.0], dtype=object)\n"
	    "r += [int(np.argmax(fr)), int(np.argmin(fr)), int(np.argmax(st)), "
	    "int(np.argmin(st)),\n"
	    "      np.argmax(m[:, :1], axis=0).tolist(), np.argmin(np.array([[Fraction(2), 1], [0, "
	    "5]], dtype=object), axis=1).tolist(),\n"
	    "      int(np.argmax(nan)), int(np.argmin(nan)), int(fr.argmax()), int(st.argmin())]\n"
	    "r",
	    "[[0,[false]],[0,[false]],1,2,2,1,[2],[1,0],2,3,1,1]");
	e2e_stop();
}

/* np.dot (inner, tensordot, correlate, convolve) of arrays of objects handed the items of
 * each product unowned to the operator: a tuple times an object whose __index__ dropped the
 * tuple from its array repeated the freed tuple (its block taken by a tuple of the user's,
 * returned as the product); np.vdot's own loop the same, with conjugate()'s result. The
 * type's dot holds both items of each product, and vdot is given private copies of arrays of
 * objects: the product is the real tuple. Fractions and complex numbers answer as numpy does
 * (an empty dot: None). */
Test(data, object_dot_and_vdot_hold_the_items_they_multiply)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from fractions import Fraction\n"
	    "def dot_probe():\n"
	    "    a = np.empty(1, dtype=object)\n"
	    "    b = np.empty(1, dtype=object)\n"
	    "    spray = []\n"
	    "    class N:\n"
	    "        def __index__(self):\n"
	    "            a[0] = None\n"
	    "            spray.extend(tuple(['freed'] * 25) for i in range(64))\n"
	    "            return 1\n"
	    "    a[0] = tuple([None] * 25)\n"
	    "    b[0] = N()\n"
	    "    return np.dot(a, b)[0]\n"
	    "def vdot_probe():\n"
	    "    a = np.empty(1, dtype=object)\n"
	    "    b = np.empty(1, dtype=object)\n"
	    "    spray = []\n"
	    "    class N:\n"
	    "        def __index__(self):\n"
	    "            b[0] = None\n"
	    "            spray.extend(tuple(['freed'] * 25) for i in range(64))\n"
	    "            return 1\n"
	    "    class C:\n"
	    "        def conjugate(self):\n"
	    "            return N()\n"
	    "    a[0] = C()\n"
	    "    b[0] = tuple([None] * 25)\n"
	    "    return np.vdot(a, b)[0]\n"
	    "r = [dot_probe(), vdot_probe()]\n"
	    "u = np.array([Fraction(1, 2), Fraction(2, 3), Fraction(-3, 4)], dtype=object)\n"
	    "v = np.array([Fraction(5), Fraction(1, 7), 2], dtype=object)\n"
	    "M = np.array([[Fraction(1), 2, 3], [4, Fraction(1, 5), 6]], dtype=object)\n"
	    "w = np.array([1 + 2j, 3 - 1j], dtype=object)\n"
	    "r += [str(np.dot(u, v)), str(np.inner(u, v)), str(np.vdot(u, v)), [str(x) for x in "
	    "np.dot(M, v)],\n"
	    "      [str(x) for x in np.tensordot(M, v, axes=1)], [str(x) for x in np.correlate(u, "
	    "v, 'full')],\n"
	    "      [str(x) for x in np.convolve(u, v)], str(np.vdot(w, w)), str(np.dot(w, w)),\n"
	    "      str(np.dot(np.array([], dtype=object), np.array([], dtype=object))),\n"
	    "      [str(x) for x in (M @ v)], str(np.vdot([1, 2], [3, 4])), "
	    "str(np.vdot(np.arange(3.0), np.arange(3.0)))]\n"
	    "r",
	    "[null,null,\"23/21\",\"23/21\",\"23/21\",[\"79/7\",\"1121/35\"],[\"79/7\",\"1121/"
	    "35\"],[\"1\",\"59/42\",\"23/21\",\"271/84\",\"-15/4\"],[\"5/2\",\"143/42\",\"-223/"
	    "84\",\"103/84\",\"-3/2\"],\"(15+0j)\",\"(5-2j)\",\"None\",[\"79/7\",\"1121/"
	    "35\"],\"11\",\"5.0\"]");
	e2e_stop();
}

/* numpy's C entries that take an array-like (np.concatenate, where, take, a flat iterator's
 * index, repeat, copyto, bincount, interp, broadcast, empty_like, a shape given to reshape or
 * ndarray, a scalar type's value, an array's shape and strides and an nditer's multi_index
 * set, and the compiled libraries' conversions through numpy's C interface, e.g.
 * Generator.choice's p; and, verification round: a scalar's index, array, structured, data
 * type and failed comparisons, an nditer's item assignment, a list in a dict of fields, a list
 * nested deeper than the copy went; second round: the same slots called as methods,
 * a.__setitem__, __getitem__, dtype.__eq__, whose wrappers called numpy's functions) read a list of the user's where it was while an item's
 * attribute lookup, __index__ or __float__ emptied it: a freed item used (SIGSEGV). Each reads
 * a private copy now: the user's list is emptied, numpy's copy is not; ordinary use answers as
 * numpy does (the host's results). A type in a list of fields given as an object of the code's
 * with a dtype attribute is refused now (numpy reads no data type from such an object: read
 * twice, it could answer otherwise the second time). */
Test(data, numpy_entries_read_private_copies_of_lists)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import operator\n"
	    "L = []\n"
	    "class E:\n"
	    "    def __index__(self):\n"
	    "        L.clear()\n"
	    "        return 1\n"
	    "    def __float__(self):\n"
	    "        L.clear()\n"
	    "        return 1.0\n"
	    "    def __getattr__(self, name):\n"
	    "        if name.startswith('__array'):\n"
	    "            L.clear()\n"
	    "        raise AttributeError(name)\n"
	    "class D:\n"
	    "    def __getattr__(self, name):\n"
	    "        L.clear()\n"
	    "        if name == 'dtype':\n"
	    "            return np.dtype('f8')\n"
	    "        raise AttributeError(name)\n"
	    "def deep():\n"
	    "    spec = L\n"
	    "    for j in range(70):\n"
	    "        spec = [('x', spec)]\n"
	    "    return np.dtype(spec)\n"
	    "it = np.nditer(np.zeros(3), op_flags=[['readwrite']])\n"
	    "calls = {\n"
	    "    'concatenate': lambda: np.concatenate([L, L]),\n"
	    "    'where': lambda: np.where(L),\n"
	    "    'take': lambda: np.arange(3).take(L),\n"
	    "    'flat': lambda: np.arange(3).flat[L],\n"
	    "    'repeat': lambda: np.arange(64).repeat(L),\n"
	    "    'copyto': lambda: np.copyto(np.zeros(64, object), L),\n"
	    "    'bincount': lambda: np.bincount(L),\n"
	    "    'interp': lambda: np.interp(L, [0, 1], [0, 1]),\n"
	    "    'broadcast': lambda: np.broadcast(L, L),\n"
	    "    'empty_like': lambda: np.empty_like(L),\n"
	    "    'reshape': lambda: np.arange(1).reshape(L),\n"
	    "    'ndarray': lambda: np.ndarray(L),\n"
	    "    'float64': lambda: np.float64(L),\n"
	    "    'choice': lambda: np.random.default_rng(0).choice(64, p=L),\n"
	    "    'shape': lambda: setattr(np.zeros(1), 'shape', L),\n"
	    "    'strides': lambda: setattr(np.zeros((1,) * 8), 'strides', L),\n"
	    "    'multi_index': lambda: setattr(np.nditer(np.zeros((2,) * 8), "
	    "flags=['multi_index']), 'multi_index', L),\n"
	    "    'scalar_index': lambda: np.float64(1)[L],\n"
	    "    'dtype_eq': lambda: np.dtype('f8') == L,\n"
	    "    'struct_eq': lambda: np.zeros(2, [('x', 'f8')]) == L,\n"
	    "    'failed_eq': lambda: np.array(['a', 'b']) == L,\n"
	    "    'nditer_item': lambda: operator.setitem(it, 0, L),\n"
	    "    'fields': lambda: np.dtype({'names': ['a'], 'formats': [L]}),\n"
	    "    'deep': deep,\n"
	    "    'dunder_setitem': lambda: np.zeros(64).__setitem__(slice(None), L),\n"
	    "    'dunder_getitem': lambda: np.zeros(64).__getitem__(L),\n"
	    "    'dunder_scalar': lambda: np.float64(1).__getitem__(L),\n"
	    "    'dunder_flat': lambda: np.zeros(64).flat.__setitem__(slice(None), L),\n"
	    "    'dunder_eq': lambda: np.dtype('f8').__eq__(L),\n"
	    "}\n"
	    "fields = {'fields', 'deep', 'dtype_eq', 'dunder_eq'}\n"
	    "shapes = {'reshape', 'ndarray', 'shape', 'strides', 'multi_index'}\n"
	    "seen = {}\n"
	    "for name, f in calls.items():\n"
	    "    for k in range(10):\n"
	    "        L[:] = ([('f%d' % i, D()) for i in range(64)] if name in fields else\n"
	    "                [E() for i in range(8 if name in shapes else 64)])\n"
	    "        try:\n"
	    "            r = f()\n"
	    "            seen[name] = 'ok'\n"
	    "        except Exception as e:\n"
	    "            seen[name] = type(e).__name__\n"
	    "a = np.arange(12).reshape(3, 4)\n"
	    "b = a.copy()\n"
	    "b.flat[[0, 1]] = [100, 200]\n"
	    "ordinary = [np.concatenate([[1, 2], (3,)]).tolist(), np.where([True, False], [1, 2], "
	    "[3, 4]).tolist(),\n"
	    "            a.take([0, 2], axis=1).tolist(), a.flat[[1, 5]].tolist(), b[0, "
	    ":2].tolist(),\n"
	    "            np.bincount([0, 1, 1]).tolist(), np.interp([0.5], [0, 1], [0, "
	    "10]).tolist(),\n"
	    "            np.broadcast([1, 2, 3], [[1], [2]]).shape, a.reshape([4, 3]).shape, "
	    "np.ndarray([2, 3]).shape,\n"
	    "            float(np.float64(2.5)), str(np.dtype([('a', 'i4')])), np.ndarray.take(a, "
	    "[1]).tolist(),\n"
	    "            np.random.default_rng(0).choice(3, p=[0, 0, 1]),\n"
	    "            (np.arange(3) == [0, 5, 2]).tolist(), bool(np.dtype('f8') == 'f8'),\n"
	    "            np.dtype({'names': ['a', 'b'], 'formats': ['i4', 'f8']}).names, "
	    "float(np.float64(2)[()]),\n"
	    "            (np.zeros(2, [('x', 'f8')]) == np.zeros(2, [('x', 'f8')])).tolist()]\n"
	    "(seen, ordinary)",
	    "[{\"concatenate\":\"ok\",\"where\":\"ok\",\"take\":\"ok\",\"flat\":\"ok\",\"repeat\":"
	    "\"ok\",\"copyto\":\"ok\",\"bincount\":\"ok\",\"interp\":\"ok\",\"broadcast\":\"ok\","
	    "\"empty_like\":\"ok\",\"reshape\":\"ok\",\"ndarray\":\"ok\",\"float64\":\"ok\","
	    "\"choice\":\"ValueError\",\"shape\":\"ok\",\"strides\":\"ok\",\"multi_index\":\"ok\","
	    "\"scalar_index\":\"IndexError\",\"dtype_eq\":\"ok\",\"struct_eq\":\"TypeError\","
	    "\"failed_eq\":\"ok\",\"nditer_item\":\"ValueError\",\"fields\":\"TypeError\",\"deep\":"
	    "\"ValueError\",\"dunder_setitem\":\"ok\",\"dunder_getitem\":\"IndexError\",\"dunder_"
	    "scalar\":\"IndexError\",\"dunder_flat\":\"ok\",\"dunder_eq\":\"ok\"},[[1,2,3],[1,4],[["
	    "0,2],[4,6],[8,10]],[1,5],[100,200],[1,2],[5.0],[2,3],[4,3],[2,3],2.5,\"[('a', "
	    "'<i4')]\",[1],2,[true,false,true],true,[\"a\",\"b\"],2.0,[true,true]]]");
	e2e_stop();
}

/* A value set into an array was read while the conversion ran the user's code, borrowed from
 * the list or array it came from: a structured element's tuple, field by field (field 0's
 * __int__ dropped the tuple: the other fields read from a tuple of the user's that took its
 * block), a datetime's or timedelta's attributes one by one (the first property dropped the
 * object: the next ran on the freed one). Every built-in type's setitem holds the value while
 * it converts it. Structured arrays from tuples, dates and durations convert as numpy does. */
Test(data, values_set_into_arrays_are_held_while_converted)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import datetime as dt\n"
	    "spray = []\n"
	    "def void_probe(from_list):\n"
	    "    src = [None] if from_list else np.empty(1, dtype=object)\n"
	    "    class I:\n"
	    "        def __int__(self):\n"
	    "            src[0] = None\n"
	    "            spray.extend(tuple(['freed'] * 24) for i in range(64))\n"
	    "            return 7\n"
	    "        __index__ = __int__\n"
	    "    t = np.dtype([('f0', 'i8')] + [('f%d' % i, 'O') for i in range(1, 24)])\n"
	    "    src[0] = tuple([I()] + [None] * 23)\n"
	    "    d = np.array(src, dtype=t) if from_list else src.astype(t)\n"
	    "    return [int(d[0]['f0']), d[0]['f1']]\n"
	    "def time_probe(kind):\n"
	    "    lst = [None]\n"
	    "    seen = []\n"
	    "    class X:\n"
	    "        __slots__ = ('a', 'b', 'c', 'd', 'e', 'f')\n"
	    "        @property\n"
	    "        def year(self):\n"
	    "            lst[0] = None\n"
	    "            return 2000\n"
	    "        @property\n"
	    "        def month(self):\n"
	    "            spray.extend(X() for i in range(64))\n"
	    "            seen.append(any(self is o for o in spray))\n"
	    "            return 1\n"
	    "        day = property(lambda s: 1)\n"
	    "        days = year\n"
	    "        seconds = month\n"
	    "        microseconds = day\n"
	    "    lst[0] = X()\n"
	    "    try:\n"
	    "        np.array(lst, dtype=kind)\n"
	    "    except Exception as e:\n"
	    "        pass\n"
	    "    return seen\n"
	    "r = [void_probe(False), void_probe(True), time_probe('M8[D]'), time_probe('m8[s]')]\n"
	    "t = np.dtype([('name', 'U8'), ('n', 'i4'), ('w', 'f8'), ('o', 'O')])\n"
	    "s = np.array([('ann', 3, 1.5, [1]), ('bob', -2, 0.25, None)], dtype=t)\n"
	    "o = np.empty(2, dtype=object)\n"
	    "o[0] = ('cy', 1, 2.0, 'x'); o[1] = ('di', 5, 0.5, 3)\n"
	    "s2 = o.astype(t)\n"
	    "days = np.array([dt.date(2020, 2, 29), dt.datetime(2021, 1, 2, 3, 4, 5)], "
	    "dtype='M8[s]')\n"
	    "deltas = np.array([dt.timedelta(days=1, seconds=5), dt.timedelta(microseconds=7)], "
	    "dtype='m8[us]')\n"
	    "z = np.zeros(3, dtype=[('a', 'i2'), ('b', 'f4')])\n"
	    "z[1] = (4, 2.5)\n"
	    "r += [s.tolist(), s2.tolist(), [str(x) for x in days], deltas.astype('i8').tolist(), "
	    "z.tolist(),\n"
	    "      np.array([1.5, '2', True], dtype=float).tolist(), np.array(['a', 3], "
	    "dtype='U3').tolist()]\n"
	    "r",
	    "[[7,null],[7,null],[false,false],[false,false],[[\"ann\",3,1.5,[1]],[\"bob\",-2,0.25,"
	    "null]],[[\"cy\",1,2.0,\"x\"],[\"di\",5,0.5,3]],[\"2020-02-29T00:00:00\",\"2021-01-"
	    "02T03:04:05\"],[86405000000,7],[[0,0.0],[4,2.5],[0,0.0]],[1.5,2.0,1.0],[\"a\",\"3\"]"
	    "]");
	e2e_stop();
}

/* ndarray.put into an array of objects released the item it replaced, whose __del__ resized
 * the same array (the check of references passed: put's reference and the user's), which
 * freed the memory put went on writing; the same through a partial of resize as __del__ (no
 * frame between). The code's resizes are refused with ValueError (a view or an iterator that
 * hands its array back, v.base, leaves numpy no reference to count), and put (as item
 * assignment, itemset, fill, setfield) holds the array while it writes, so numpy's check of
 * references refuses the partial's; np.resize, np.pad, put, and pandas' own resizes in a
 * callback answer as before. With the data stack loaded a __del__ (the partial too) now runs
 * once put has returned (finalizers_wait_until_no_library_is_writing): the resize it makes
 * then is an ordinary one, of an array no loop holds. */
Test(data, arrays_are_not_resized_under_compiled_loops)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from functools import partial\n"
	    "log, keep = [], []\n"
	    "L = [np.empty(100, dtype=object)]\n"
	    "class D:\n"
	    "    def __del__(self):\n"
	    "        try:\n"
	    "            np.ndarray.resize(L.pop(), (100000,))\n"
	    "            keep.append(bytearray(799))\n"
	    "            log.append('resized')\n"
	    "        except ValueError as e:\n"
	    "            log.append('ValueError')\n"
	    "L[0][0] = D()\n"
	    "np.ndarray.put(L[0], [0, 5], [None, None])\n"
	    "M = [np.empty(100, dtype=object)]\n"
	    "P = partial(np.ndarray.resize, M[0], (100000,))\n"
	    "class E:\n"
	    "    __del__ = P\n"
	    "M[0][0] = E()\n"
	    "np.ndarray.put(M.pop(), [0, 5], [None, None])\n"
	    "r = [log, P.args[0].shape]\n"
	    "a = np.zeros(3)\n"
	    "def resized(x, shape):\n"
	    "    try:\n"
	    "        x.resize(shape)\n"
	    "        return x.tolist()\n"
	    "    except ValueError:\n"
	    "        return 'ValueError'\n"
	    "a = resized(a, 5)\n"
	    "def grow():\n"
	    "    b = np.arange(4)\n"
	    "    b = np.pad(b, (0, 2)).reshape(2, 3)\n"
	    "    return b.tolist()\n"
	    "c = np.array([1, 2, 3, 4], dtype=object)\n"
	    "freed = []\n"
	    "class F:\n"
	    "    def __del__(self):\n"
	    "        freed.append('F')\n"
	    "c[1] = F()\n"
	    "c.put([1, 3], ['x', 'y'])\n"
	    "d = np.arange(6.0)\n"
	    "d.put([0, -1], [9, 8])\n"
	    "r += [a, grow(), [g() for g in [grow]], np.resize(np.arange(3), 5).tolist(), "
	    "c.tolist(), freed, d.tolist()]\n"
	    "import pandas as pd\n"
	    "r.append(pd.Series(['ab', 'ccd']).apply(lambda x: "
	    "pd.Series(list(x)).value_counts().max()).tolist())\n"
	    "r\n",
	    "[[\"resized\"],[100000],\"ValueError\",[[0,1,2],[3,0,0]],[[[0,1,2],[3,0,0]]],[0,1,2,0,"
	    "1],[1,\"x\",3,\"y\"],[\"F\"],[9.0,1.0,2.0,3.0,4.0,8.0],[1,2]]");
	e2e_stop();
}

/* Library state the compiled code trusts, changed after it was made: ndarray.resize with
 * refcheck=False freed the memory under the array's views (a list's items laid there: the
 * real os, sys.modules and builtins); a rolling window's indexer of the user's returned
 * bounds outside the values (the kernels read around them: SIGSEGV, or memory as numbers);
 * a BSpline's knots set longer than its coefficients (read past them). Each is refused with
 * a clear error; the same functions used as meant answer as before. */
Test(data, library_state_changed_after_it_was_made_is_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from pandas.api.indexers import BaseIndexer, FixedForwardWindowIndexer\n"
	    "from scipy.interpolate import BSpline, splev, splint, make_interp_spline\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "a = np.zeros(128)\n"
	    "v = a[:]\n"
	    "r = [t(lambda: a.resize(100000, refcheck=False)), a.shape]\n"
	    "class Far(BaseIndexer):\n"
	    "    def get_window_bounds(self, num_values=0, min_periods=None, center=None, "
	    "closed=None, step=None):\n"
	    "        s = np.zeros(num_values, dtype=np.int64) - 8\n"
	    "        return s, s + 1\n"
	    "s = pd.Series(np.arange(10.0))\n"
	    "r.append(t(lambda: s.rolling(Far(window_size=1), min_periods=1).max()))\n"
	    "b = BSpline(np.arange(8.0), np.ones(4), 3)\n"
	    "b.t = np.arange(2.0 * 10**7)\n"
	    "b.c = np.ones(1)\n"
	    "r += [t(lambda: b(np.array([1.9e7]))), t(lambda: b.integrate(0, 5)), t(lambda: "
	    "splev([1.0], b))]\n"
	    "# ordinary use answers as before\n"
	    "c = np.pad(np.arange(6.0), (0, 2))\n"
	    "sp = make_interp_spline(np.arange(6.0), np.arange(6.0) ** 2, k=3)\n"
	    "fw = s.rolling(FixedForwardWindowIndexer(window_size=2), "
	    "min_periods=1).sum().tolist()\n"
	    "r += [c.tolist(), round(float(sp(2.5)), 6), round(float(sp.integrate(0, 2)), 6), "
	    "fw[:3],\n"
	    "      s.rolling(3).mean().tolist()[2:4], s.expanding().sum().tolist()[-1]]\n"
	    "r\n",
	    "[\"ValueError\",[128],\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",[0."
	    "0,1.0,2.0,3.0,4.0,5.0,0.0,0.0],6.25,2.666667,[1.0,3.0,5.0],[1.0,2.0],45.0]");
	e2e_stop();
}

/* pandas' SAS7BDAT reader parses rows with a compiled class (pandas.io.sas.sas7bdat.Parser, no
 * bounds checks) that takes its whole state from the object it is given: Parser(fake).read(1)
 * wrote chosen bytes at a chosen offset from its buffer (a bytearray's length set to 2**62: any
 * memory read and written, the sandbox escaped); a real reader's fields and a crafted file's
 * compressed rows do the same. SAS7BDAT files are now not read in the sandbox: the class (made,
 * or initialised again) and pd.read_sas of a .sas7bdat refuse with the reason; a SAS XPORT
 * file is read as before. */
Test(data, sas7bdat_files_are_not_read)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, struct, numpy as np, pandas as pd\n"
	    "from pandas.io.sas import sas7bdat\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "Parser = sas7bdat.Parser\n"
	    "target = bytearray(b'A' * 32)\n"
	    "chunk = np.zeros((1, 64 << 20), np.uint8)\n"
	    "dist = id(target) + 16 - np.byte_bounds(chunk)[0]\n"
	    "class Fake:\n"
	    "    header_length = column_count = 1\n"
	    "    row_length = _subheader_pointer_length = 8\n"
	    "    _page_bit_offset = _current_row_in_file_index = _current_row_on_page_index = 0\n"
	    "    byte_order, compression, _byte_chunk = '<', b'', chunk\n"
	    "    _string_chunk = np.empty((1, 1), object)\n"
	    "    _current_row_in_chunk_index = dist // 8\n"
	    "    _cached_page = bytes(8) + (1 << 62).to_bytes(8, 'little')\n"
	    "    _current_page_type, _current_page_block_count, row_count = 0x100, 99, 1\n"
	    "    _current_page_data_subheader_pointers, _current_page_subheaders_count = [], 0\n"
	    "    def column_data_lengths(self): return np.array([8], np.int64)\n"
	    "    def column_data_offsets(self): return np.array([0], np.int64)\n"
	    "    def column_types(self): return np.array([b'd'], 'S1')\n"
	    "    def _read_next_page(self): return True\n"
	    "r = [t(lambda: Parser(Fake()).read(1)), len(target),\n"
	    "     t(lambda: Parser.__init__(Parser.__new__(Parser), Fake())),\n"
	    "     t(lambda: pd.read_sas(io.BytesIO(bytes(4096)), format='sas7bdat'))]\n"
	    "# a SAS XPORT file is read as before\n"
	    "def rec(s):\n"
	    "    return s.ljust(80).encode()\n"
	    "H = 'HEADER RECORD*******%s HEADER RECORD!!!!!!!'\n"
	    "ns = struct.pack('>hhhh8s40s8shhh2s8shhl52s', 1, 0, 8, 1, b'X'.ljust(8), b' ' * 40, "
	    "b' ' * 8,\n"
	    "                 0, 0, 0, b'  ', b' ' * 8, 0, 0, 0, b' ' * 52)\n"
	    "xpt = (rec(H % 'LIBRARY' + '0' * 30) + rec('SAS     SAS     SASLIB') + rec('') +\n"
	    "       rec(H % 'MEMBER ' + '0' * 17 + '16' + '0' * 8 + '140') + rec(H % 'DSCRPTR' + "
	    "'0' * 30) +\n"
	    "       rec('SAS     DATA') + rec('') + rec(H % 'NAMESTR' + '0' * 6 + '0001') +\n"
	    "       ns.ljust(160, b' ') + rec(H % 'OBS    ' + '0' * 30) +\n"
	    "       bytes.fromhex('4110000000000000 4120000000000000').ljust(80, b' '))\n"
	    "r.append(pd.read_sas(io.BytesIO(xpt), format='xport')['X'].tolist())\n"
	    "r",
	    "[\"NotImplementedError\",32,\"NotImplementedError\",\"NotImplementedError\",[1.0,2.0]"
	    "]");
	e2e_stop();
}

/* read_csv's C parser took the length of a chunk its source's read() returned from the chunk's
 * __len__: a bytes subclass claiming more than it holds had the tokenizer read past its data
 * (other objects' memory parsed into the frame, or SIGSEGV). The parser now reads through an
 * object that hands it each chunk as an exact bytes or str; ordinary sources read as before. */
Test(data, read_csv_chunks_are_read_as_they_are)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, pandas as pd\n"
	    "class Long(bytes):\n"
	    "    def __len__(self):\n"
	    "        return 1 << 16\n"
	    "class Plain(bytes):\n"
	    "    pass\n"
	    "class Text(str):\n"
	    "    pass\n"
	    "class F:\n"
	    "    def __init__(self, *chunks):\n"
	    "        self.chunks = list(chunks)\n"
	    "    def read(self, size=-1):\n"
	    "        return self.chunks.pop(0) if self.chunks else b''\n"
	    "    def __iter__(self):\n"
	    "        return iter([])\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "r = [t(lambda: pd.read_csv(F(Long(b'x\\n1\\n2\\n')), engine='c')['x'].tolist())]\n"
	    "# ordinary use answers as before\n"
	    "r.append(pd.read_csv(F(Plain(b'x,y\\n1,'), b'2\\n3,4\\n'))[['x', "
	    "'y']].values.tolist())\n"
	    "r.append(pd.read_csv(F(Text('a\\n5\\n')), encoding='utf-8')['a'].tolist())\n"
	    "r.append(pd.read_csv(io.StringIO('p;q\\n1;x\\n2;y\\n'), sep=';').to_dict('list'))\n"
	    "r.append([len(c) for c in pd.read_csv(io.BytesIO(b'v\\n' + b'1\\n' * 10), "
	    "chunksize=4)])\n"
	    "r",
	    "[[1,2],[[1,2],[3,4]],[5],{\"p\":[1,2],\"q\":[\"x\",\"y\"]},[4,4,2]]");
	e2e_stop();
}

/* The C parser class itself (reachable as the type of a reader's engine's parser) read its
 * source when made, through the same read() as read_csv's: a chunk of a bytes subclass with a
 * long __len__ was read past its data. It reads through the object read_csv's wrapper uses; its
 * attributes are pandas' to set (the parser kept skiprows' callable without holding it: setting
 * it freed the callable in use). */
Test(data, the_csv_parser_made_directly_reads_exact_chunks)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, pandas as pd\n"
	    "TR = type(pd.read_csv(io.StringIO('x\\n1\\n'), iterator=True)._engine._reader)\n"
	    "class Long(bytes):\n"
	    "    def __len__(self):\n"
	    "        return 1 << 16\n"
	    "class F:\n"
	    "    def __init__(self, *chunks):\n"
	    "        self.chunks = list(chunks)\n"
	    "    def read(self, size=-1):\n"
	    "        return self.chunks.pop(0) if self.chunks else b''\n"
	    "def cols(tr):\n"
	    "    d = tr.read()\n"
	    "    return {str(k): [str(x) for x in v] for k, v in sorted(d.items())}\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "r = [t(lambda: cols(TR(F(Long(b'x\\n1\\n2\\n')), header=0))), cols(TR(F(b'a,b\\n1,', "
	    "b'2\\n3,4\\n')))]\n"
	    "tr = TR(F(b'x\\n1\\n'), skiprows=lambda i: False)\n"
	    "try:\n"
	    "    tr.skiprows = None\n"
	    "    r.append('set')\n"
	    "except Exception as e:\n"
	    "    r.append(type(e).__name__)\n"
	    "r",
	    "[{\"0\":[\"1\",\"2\"]},{\"0\":[\"1\",\"3\"],\"1\":[\"2\",\"4\"]},\"AttributeError\"]");
	e2e_stop();
}

/* calculate_variable_window_bounds (compiled, no bounds checks; pandas.core.indexers.objects
 * names it) read index[num_values - 1] for any num_values (SIGSEGV, memory read), and an index
 * that is not monotonic made a window's end go below 0 and read before the index. Its
 * arguments are now checked (one index value per value, monotonic); offset windows answer as
 * before. */
Test(data, variable_window_bounds_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from pandas.core.indexers import objects\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "cvwb = objects.calculate_variable_window_bounds\n"
	    "r = [t(lambda: cvwb(1 << 40, 1, None, False, 'right', np.zeros(1, np.int64))),\n"
	    "     t(lambda: cvwb(4096, 1, None, False, 'left', np.append(-np.arange(1, 4096), "
	    "0))),\n"
	    "     t(lambda: objects.VariableWindowIndexer(index_array=np.zeros(2, np.int64),\n"
	    "                                             window_size=1).get_window_bounds(1 << "
	    "30))]\n"
	    "# ordinary use answers as before\n"
	    "s = pd.Series(range(6), index=pd.date_range('2024-01-01', periods=6, freq='12H'))\n"
	    "d = pd.DataFrame({'t': pd.date_range('2024-01-05', periods=4, freq='-1D'), 'v': "
	    "range(4)})\n"
	    "r += [s.rolling('1D').sum().tolist(), s.rolling('1D', "
	    "closed='left').sum().tolist()[1:],\n"
	    "      s.rolling('1D', center=True).sum().tolist(), d.rolling('2D', "
	    "on='t').sum()['v'].tolist(),\n"
	    "      [a.tolist() for a in cvwb(3, 2, None, False, 'right', np.array([1, 2, 3], "
	    "np.int64))]]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",[0.0,1.0,3.0,5.0,7.0,9.0],[0.0,1.0,3.0,"
	    "5.0,7.0],[1.0,3.0,5.0,7.0,9.0,5.0],[0.0,1.0,3.0,5.0],[[0,0,1],[1,2,3]]]");
	e2e_stop();
}

/* pandas reads a zone's transitions and offsets (get_dst_info, compiled) from any tzinfo with
 * dateutil's or pytz's attributes and then indexes the offsets without bounds checks: a zone
 * of the user's with more transitions than offsets made tz_convert read past them (garbage
 * hours, any memory). Such a zone is refused with a message; a consistent zone of the user's
 * and the named zones convert as on the host. */
Test(data, time_zone_transitions_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import datetime, pandas as pd, pytz\n"
	    "from dateutil import tz as dtz\n"
	    "class Info:\n"
	    "    def __init__(self, hours):\n"
	    "        self.offset, self.isdst = hours * 3600, 0\n"
	    "        self.delta = datetime.timedelta(hours=hours)\n"
	    "class Longer(dtz.tzfile):\n"
	    "    # more transitions than offsets: read past the offsets before\n"
	    "    def __init__(self, name, n):\n"
	    "        self._filename, self._trans_list = name, list(range(0, n * 1000, 1000))\n"
	    "        self._trans_idx, self._ttinfo_before, self._ttinfo_std = (Info(1),), Info(0), "
	    "Info(0)\n"
	    "    def utcoffset(self, dt): return datetime.timedelta(0)\n"
	    "    def dst(self, dt): return datetime.timedelta(0)\n"
	    "    def tzname(self, dt): return 'L'\n"
	    "class Own(Longer):\n"
	    "    # a consistent zone of the user's converts as on the host\n"
	    "    def __init__(self):\n"
	    "        Longer.__init__(self, 'own', 2)\n"
	    "        self._trans_list, self._trans_idx = [0, 10000], (Info(1), Info(2))\n"
	    "s = pd.Series(pd.date_range('1970-01-01', periods=400, freq='37min', tz='UTC'))\n"
	    "def t(z):\n"
	    "    try:\n"
	    "        return sorted(set(s.dt.tz_convert(z).dt.hour.tolist()))\n"
	    "    except ValueError as e:\n"
	    "        return str(e)\n"
	    "r = [t(Longer('a', 100000)), t(Longer('b', 3)), t(Own())]\n"
	    "# ordinary zones answer as before\n"
	    "u = pd.Series(pd.date_range('2021-03-01', periods=50, freq='17h', tz='UTC'))\n"
	    "r += [int(u.dt.tz_convert(z).dt.hour.sum()) for z in ['US/Eastern', "
	    "'dateutil/Europe/London', pytz.FixedOffset(90), dtz.gettz('America/Sao_Paulo')]]\n"
	    "n = pd.Series(pd.date_range('2021-11-07', periods=3, freq='h'))\n"
	    "r += [str(n.dt.tz_localize('US/Eastern', ambiguous='NaT').iloc[1]), "
	    "str(pd.Timestamp('2021-07-01 12:00', tz='US/Pacific').tz_convert('Asia/Tokyo'))]\n"
	    "r",
	    "[\"the time zone has 100001 transitions and 2 offsets: it should have one offset per "
	    "transition\",\"the time zone has 4 transitions and 2 offsets: it should have one "
	    "offset per "
	    "transition\",[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23],566,580,"
	    "571,587,\"NaT\",\"2021-07-02 04:00:00+09:00\"]");
	e2e_stop();
}

/* copy.deepcopy of a compiled object (sklearn's Tree) copied the state its own reduce gave
 * through the caller's memo, which answered in place of any part of it (a dict subclass
 * counting its lookups, or a plain dict keyed by the id of an array just freed): the tree got
 * nodes with links of the user's (SIGSEGV; a full escape was shown). The state is copied with a
 * memo of copy's own. A Tree's methods check X against the tree's features (a sparse X's
 * indices, an estimator whose n_features_in_ was set lower: reads past X), partial
 * dependence's out against X's rows (it wrote past out), and gradient boosting's stages their
 * estimators against out (an estimators_ of 4096 columns wrote past it). Ordinary use answers
 * as on the host, a deepcopy keeping one copy of an object met twice. */
Test(data, compiled_trees_take_their_own_state_and_checked_inputs)
{
	start_data(NULL);
	e2e_expect_result(
	    "import copy, numpy as np\n"
	    "from scipy.sparse import csr_matrix\n"
	    "from sklearn.tree import DecisionTreeRegressor\n"
	    "from sklearn.ensemble import GradientBoostingRegressor\n"
	    "from sklearn.inspection import partial_dependence\n"
	    "from sklearn.neighbors import KDTree\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        return type(e).__name__\n"
	    "m = DecisionTreeRegressor(max_depth=1).fit(np.arange(20.).reshape(10, 2), "
	    "np.arange(10.))\n"
	    "nodes = np.zeros(3, dtype=[('left_child', '<i8'), ('right_child', '<i8'), ('feature', "
	    "'<i8'),\n"
	    "    ('threshold', '<f8'), ('impurity', '<f8'), ('n_node_samples', '<i8'), "
	    "('weighted_n_node_samples', '<f8')])\n"
	    "nodes['left_child'] = nodes['right_child'] = [1 << 40, -1, -1]\n"
	    "class Memo(dict):\n"
	    "    asked = 0\n"
	    "    def get(self, k, d=None):\n"
	    "        Memo.asked += 1\n"
	    "        return nodes if Memo.asked == 10 else d\n"
	    "r = [copy.deepcopy(m.tree_, Memo()).children_left.tolist(), Memo.asked]\n"
	    "r.append(copy.deepcopy(m.tree_, {id(np.empty(0)): nodes}).children_left.tolist())\n"
	    "# the tree's methods check what they are given\n"
	    "X = np.zeros((1 << 12, 2), np.float32)\n"
	    "r.append(t(lambda: m.tree_.compute_partial_dependence(X, np.array([0], np.int32), "
	    "np.zeros(1))))\n"
	    "Xs = csr_matrix((np.ones(1, np.float32), np.array([1 << 30], np.int32), np.array([0, "
	    "1], np.int32)), shape=(1, 2))\n"
	    "r.append(t(lambda: m.tree_.apply(Xs)))\n"
	    "m.n_features_in_ = 1\n"
	    "r.append(t(lambda: m.predict(np.zeros((1, 1)))))\n"
	    "gb = GradientBoostingRegressor(n_estimators=2, max_depth=1).fit([[0.], [1.]], [0., "
	    "1.])\n"
	    "wide = np.empty((2, 1 << 12), dtype=object)\n"
	    "wide[:] = gb.estimators_[0, 0]\n"
	    "gb.estimators_ = wide\n"
	    "r.append(t(lambda: gb.predict(np.zeros((4, 1)))))\n"
	    "# ordinary use answers as on the host\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.rand(80, 4); y = X[:, 0] * 3 + X[:, 1] ** 2\n"
	    "d = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)\n"
	    "g = GradientBoostingRegressor(n_estimators=20, max_depth=2, random_state=0).fit(X, "
	    "y)\n"
	    "a, b = copy.deepcopy([d.tree_, d.tree_])\n"
	    "r += [round(float(copy.deepcopy(d).predict(X).sum()), 6), a is b, "
	    "int(d.decision_path(csr_matrix(X)).sum()),\n"
	    "      round(float(g.predict(csr_matrix(X)).sum()), 6), [round(float(p.sum()), 6) for "
	    "p in list(g.staged_predict(X))[::10]],\n"
	    "      np.round(partial_dependence(g, X, [0], method='recursion', "
	    "grid_resolution=3)['average'], 5).tolist(),\n"
	    "      copy.deepcopy(KDTree(X)).query(X[:1], k=2)[1].tolist()]\n"
	    "r",
	    "[[1,-1,-1],1,[1,-1,-1],\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "150.232656,true,320,150.232656,[150.232656,150.232656],[[-0.95902,-0.13867,1.04891]],["
	    "[0,34]]]");
	e2e_stop();
}

/* Beyond the transitions' cache: iterating zoned times (ints_to_pydatetime, compiled, no bounds
 * checks) read the live zone's _transition_info at the cached position, and a real zone's
 * attributes are the user's to set on the instance (shortened: a read past the list, a full
 * escape was shown); it reads private copies now, refused when they differ from what pandas
 * cached. Times before 1677 at seconds' resolution read the offset before pandas' array
 * (SIGSEGV in pandas itself): refused with a zone. Ordinary zoned times iterate as on the
 * host. */
Test(data, zoned_times_read_the_zone_pandas_cached)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, pytz\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except ValueError as e:\n"
	    "        return 'ValueError'\n"
	    "paris = pytz.timezone('Europe/Paris')\n"
	    "idx = pd.DatetimeIndex(['2024-06-01 12:00', '2024-01-01 12:00'], "
	    "tz='UTC').tz_convert('Europe/Paris')\n"
	    "before = [str(x) for x in idx]\n"
	    "kept = paris._transition_info\n"
	    "paris._transition_info = kept[:1]\n"
	    "r = [t(lambda: [str(x) for x in idx])]\n"
	    "paris._transition_info = kept\n"
	    "r.append([str(x) for x in idx] == before)\n"
	    "a = pd.core.arrays.DatetimeArray._simple_new(np.array([-20000000000, 0], 'M8[s]'), "
	    "dtype=np.dtype('M8[s]'))\n"
	    "r.append(t(lambda: [str(x) for x in "
	    "a.tz_localize('UTC').tz_convert('Europe/Paris')]))\n"
	    "b = pd.core.arrays.DatetimeArray._simple_new(np.array([0, 1700000000], 'M8[s]'), "
	    "dtype=np.dtype('M8[s]'))\n"
	    "r.append([str(x) for x in b.tz_localize('UTC').tz_convert('Europe/Paris')])\n"
	    "r += [before, [x.tzname() for x in pd.date_range('2021-03-27', periods=4, freq='12h', "
	    "tz='Europe/Paris')],\n"
	    "      [str(x.tzinfo) for x in pd.Series(idx).astype(object)]]\n"
	    "r",
	    "[\"ValueError\",true,\"ValueError\",[\"1970-01-01 01:00:00+01:00\",\"2023-11-14 "
	    "23:13:20+01:00\"],[\"2024-06-01 14:00:00+02:00\",\"2024-01-01 "
	    "13:00:00+01:00\"],[\"CET\",\"CET\",\"CET\",\"CEST\"],[\"Europe/Paris\",\"Europe/"
	    "Paris\"]]");
	e2e_stop();
}

/* The checks above read the arrays as numpy's own: an ndarray subclass answering its own len or
 * shape (an out of one value saying 65536, an X of one column saying 3000, a gradient boosting
 * init_ whose prediction says it has a row per row of X) passed them, and the compiled code
 * wrote past the real buffer (a full escape was shown). An honest subclass works, its results
 * written in place. */
Test(data, compiled_trees_read_arrays_as_they_are)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.tree import DecisionTreeRegressor\n"
	    "from sklearn.ensemble import GradientBoostingRegressor\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        return type(e).__name__\n"
	    "N = 1 << 16\n"
	    "# such a subclass is not made now: the attacks run with an honest one\n"
	    "made = []\n"
	    "try:\n"
	    "    class Liar(np.ndarray):\n"
	    "        def __len__(self):\n"
	    "            return N\n"
	    "    made.append('Liar')\n"
	    "except TypeError:\n"
	    "    class Liar(np.ndarray):\n"
	    "        pass\n"
	    "m = DecisionTreeRegressor(max_depth=1, random_state=0).fit(np.arange(20.).reshape(10, "
	    "2), np.arange(10.))\n"
	    "out = np.zeros(1).view(Liar)\n"
	    "r = [t(lambda: m.tree_.compute_partial_dependence(np.zeros((N, 2), np.float32), "
	    "np.array([0], np.int32), out))]\n"
	    "W = 3000\n"
	    "Xf = np.zeros((4, W)); Xf[2:, W - 1] = 1\n"
	    "w = DecisionTreeRegressor(max_depth=1).fit(Xf, [0., 0., 1., 1.])\n"
	    "r.append(t(lambda: w.tree_.apply(np.zeros((1, 1), np.float32).view(Liar))))\n"
	    "gb = GradientBoostingRegressor(n_estimators=2, max_depth=1).fit([[0.], [1.]], [0., "
	    "1.])\n"
	    "class Init:\n"
	    "    def predict(self, X):\n"
	    "        return np.zeros(1).view(Liar)\n"
	    "gb.init_ = Init()\n"
	    "r.append(t(lambda: gb.predict(np.zeros((N, 1), np.float32))))\n"
	    "# an honest subclass works, its results written in place\n"
	    "class Plain(np.ndarray):\n"
	    "    pass\n"
	    "o = np.zeros(3).view(Plain)\n"
	    "m.tree_.compute_partial_dependence(np.zeros((3, 2), np.float32), np.array([0], "
	    "np.int32), o)\n"
	    "r += [type(o).__name__, o.tolist(), m.tree_.apply(np.zeros((2, 2), "
	    "np.float32).view(Plain)).tolist(), made]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"Plain\",[4.5,4.5,4.5],[1,1],[]]");
	e2e_stop();
}

/* Other checks that asked an ndarray subclass for its shape or len and passed it on: a groupby
 * kernel's out and counts saying 2**40 rows took a label of 2**33 (a write at a chosen offset:
 * a full escape was shown), a SparseArray's values saying they held every point read past them.
 * They read numpy's own arrays now. A time zone class of the user's deriving from dateutil's or
 * pytz's (its attributes can answer pandas' first look one way and its compiled loop another:
 * a full escape was shown) is not iterated (TypeError); its fields still convert. Ordinary
 * groupby, sparse sums and zoned iteration answer as on the host. */
Test(data, kernels_read_arrays_as_they_are)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, pytz\n"
	    "import pandas.core.groupby.ops as ops\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        return type(e).__name__\n"
	    "BIG = 1 << 40\n"
	    "# such a subclass is not made now: the attacks run with an honest one\n"
	    "made = []\n"
	    "try:\n"
	    "    class Liar(np.ndarray):\n"
	    "        def __len__(self):\n"
	    "            return BIG\n"
	    "    made.append('Liar')\n"
	    "except TypeError:\n"
	    "    class Liar(np.ndarray):\n"
	    "        pass\n"
	    "group_sum = ops.WrappedCythonOp._get_cython_function('aggregate', 'sum', "
	    "np.dtype('float64'), True)\n"
	    "counts = np.zeros(1, dtype=np.int64).view(Liar)\n"
	    "r = [t(lambda: group_sum(np.zeros((1, 1)).view(Liar), counts, np.ones((1, 1)), "
	    "np.array([1 << 33], dtype=np.intp), None))]\n"
	    "a = pd.arrays.SparseArray([1.0, 0.0, 2.0], fill_value=0.0, kind='integer')\n"
	    "b = pd.arrays.SparseArray([0.0, 3.0, 4.0], fill_value=0.0, kind='integer')\n"
	    "a._sparse_values = np.ones(1).view(Liar)\n"
	    "r.append(t(lambda: (a + b).tolist()))\n"
	    "import datetime\n"
	    "from dateutil import tz as dtz\n"
	    "class Info:\n"
	    "    def __init__(self, hours):\n"
	    "        self.offset, self.isdst = hours * 3600, 0\n"
	    "        self.delta = datetime.timedelta(hours=hours)\n"
	    "class Own(dtz.tzfile):\n"
	    "    # a zone class of the user's: its attributes could answer pandas' reads "
	    "otherwise\n"
	    "    def __init__(self):\n"
	    "        self._filename, self._trans_list = 'own', [0, 10000]\n"
	    "        self._trans_idx, self._ttinfo_before, self._ttinfo_std = (Info(1), Info(2)), "
	    "Info(0), Info(0)\n"
	    "    def utcoffset(self, dt): return datetime.timedelta(0)\n"
	    "    def dst(self, dt): return datetime.timedelta(0)\n"
	    "    def tzname(self, dt): return 'O'\n"
	    "s = pd.Series(pd.date_range('1970-01-01', periods=2, freq='h', "
	    "tz='UTC')).dt.tz_convert(Own())\n"
	    "r += [s.dt.hour.tolist(), t(lambda: [str(x) for x in s])]\n"
	    "# ordinary use: an honest subclass's sums land in place; sparse sums; zoned "
	    "iteration\n"
	    "class Plain(np.ndarray):\n"
	    "    pass\n"
	    "out, cnt = np.zeros((2, 1)).view(Plain), np.zeros(2, dtype=np.int64).view(Plain)\n"
	    "group_sum(out, cnt, np.array([[1.0], [2.0], [4.0]]), np.array([0, 1, 1], "
	    "dtype=np.intp), None)\n"
	    "c = pd.arrays.SparseArray([1.0, 0.0, 2.0], fill_value=0.0, kind='integer')\n"
	    "r += [out.ravel().tolist(), cnt.tolist(), (c + b).tolist(),\n"
	    "      [str(x) for x in pd.date_range('2021-03-28', periods=3, freq='h', "
	    "tz='Europe/Paris')],\n"
	    "      pd.DataFrame({'k': [1, 1, 2], 'v': [1.0, 2.0, "
	    "4.0]}).groupby('k')['v'].sum().tolist(), made]\n"
	    "r",
	    "[\"ValueError\",\"ValueError\",[1,3],\"TypeError\",[1.0,6.0],[1,2],[1.0,3.0,6.0],["
	    "\"2021-03-28 00:00:00+01:00\",\"2021-03-28 01:00:00+01:00\",\"2021-03-28 "
	    "03:00:00+02:00\"],[3.0,4.0],[]]");
	e2e_stop();
}

/* hash_object_array (behind pd.util.hash_array and hash_pandas_object) read what a str
 * subclass's encode() returned as a bytes, unchecked: a float answered had its value read as
 * the length to hash (memory past it read through the hashes, or SIGSEGV). It now hashes a
 * str subclass's own characters (an ordinary subclass hashes as before); the hashes of
 * ordinary frames and arrays are the host's. */
Test(data, object_hashes_read_exact_strings)
{
	start_data(NULL);
	e2e_expect_result(
	    "import struct, numpy as np, pandas as pd\n"
	    "from pandas.core.util import hashing\n"
	    "class Evil(str):\n"
	    "    def encode(self, *a):\n"
	    "        return struct.unpack('<d', struct.pack('<q', 1 << 40))[0]\n"
	    "class Plain(str):\n"
	    "    pass\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "key = '0123456789123456'\n"
	    "x = int(hashing.hash_object_array(np.array(['x'], object), key)[0])\n"
	    "r = [int(hashing.hash_object_array(np.array([Evil('x')], object), key)[0]) == x,\n"
	    "     t(lambda: hashing.hash_object_array(np.array(['x'], object), Evil(key))),\n"
	    "     t(lambda: pd.util.hash_array(np.array([Evil('x')], object)).tolist())]\n"
	    "# ordinary use answers as before\n"
	    "df = pd.DataFrame({'a': ['x', 'y', None], 'b': [1.0, np.nan, 3], 'c': [(1, 2), (3,), "
	    "(4, 5)]})\n"
	    "r += [[hex(h) for h in pd.util.hash_pandas_object(df)],\n"
	    "      [hex(h) for h in pd.util.hash_array(np.array([Plain('x'), b'x', np.nan, (1, "
	    "'a')], object))],\n"
	    "      [hex(h) for h in pd.util.hash_array(np.array(['a', 'b'], object), "
	    "categorize=False,\n"
	    "                                          hash_key='abcdefghijklmnop')],\n"
	    "      t(lambda: hashing.hash_object_array(np.array([1.5], object), "
	    "'0123456789123456'))]\n"
	    "r",
	    "[true,\"TypeError\",[7869353157402288317],[\"0xedb74d0ec4309460\","
	    "\"0x3eee8ae546cb739b\","
	    "\"0xe44b11422b77c78\"],[\"0x6d358f00c70fe0bd\",\"0x6d358f00c70fe0bd\","
	    "\"0xffffffffffffffff\","
	    "\"0xb051856f55b0724\"],[\"0x85996f7fe235b2fc\",\"0xd1cdfc22545cbd6e\"],"
	    "\"TypeError\"]");
	e2e_stop();
}

/* scipy.integrate.ode's integrators kept the problem's size in Fortran COMMON and continued
 * (istate 2) with whatever state vector and work arrays they were given: r._y set shorter,
 * then integrate() wrote past it; the work arrays were the user's to edit between calls and
 * from the callbacks; dop853 read y at iwork's dense output component numbers unchecked; a
 * callback could start another problem in the same routine. Now a continuation runs only
 * the problem its routine started, on private work arrays, a routine refuses to be entered
 * from its own callbacks and the component numbers are checked. Ordinary integrations
 * (vode, lsoda, dopri5, dop853, complex_ode, solve_ivp's LSODA with dense output) answer as
 * before. */
Test(data, ode_integrator_state_is_its_own)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "from scipy.integrate import ode, complex_ode, solve_ivp\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        return f()\n"
	                  "    except Exception as e:\n"
	                  "        return type(e).__name__\n"
	                  "r = ode(lambda t, y: -y).set_integrator('vode', method='adams')\n"
	                  "r.set_initial_value(np.ones(20000), 0.0)\n"
	                  "r.integrate(0.01)\n"
	                  "r._y = np.ones(1)\n"
	                  "out = [t(lambda: r.integrate(0.02))]\n"
	                  "l = ode(lambda t, y: -y).set_integrator('lsoda')\n"
	                  "l.set_initial_value(np.ones(4), 0.0)\n"
	                  "l.integrate(0.5)\n"
	                  "l._integrator.iwork[:] = 10**6\n"
	                  "l._integrator.call_args[4] = np.zeros(3)\n"
	                  "out.append(round(float(l.integrate(1.0)[0]), 4))\n"
	                  "d = ode(lambda t, y: -y).set_integrator('dop853')\n"
	                  "d.set_initial_value(np.ones(2), 0.0)\n"
	                  "d._integrator.work = d._integrator.call_args[4] = np.zeros(64)\n"
	                  "d._integrator.iwork[4] = 1\n"
	                  "d._integrator.iwork[20] = 10**6\n"
	                  "out.append(t(lambda: d.integrate(0.1)))\n"
	                  "inner = ode(lambda t, y: -y).set_integrator('vode')\n"
	                  "def f(t_, y):\n"
	                  "    inner.set_initial_value(np.ones(5000), 0.0)\n"
	                  "    inner.integrate(0.1)\n"
	                  "    return -y\n"
	                  "n = ode(f).set_integrator('vode')\n"
	                  "n.set_initial_value(np.ones(2), 0.0)\n"
	                  "out.append(t(lambda: n.integrate(0.1)))\n"
	                  "# ordinary use answers as before\n"
	                  "for name in ('vode', 'lsoda', 'dopri5', 'dop853'):\n"
	                  "    o = ode(lambda t, y, a: -a * y).set_integrator(name)\n"
	                  "    o.set_f_params(2.0)\n"
	                  "    o.set_initial_value([1.0, 2.0], 0.0)\n"
	                  "    o.integrate(0.5)\n"
	                  "    out.append([round(float(v), 4) for v in o.integrate(1.0)])\n"
	                  "c = complex_ode(lambda t, y: 1j * y).set_integrator('vode')\n"
	                  "c.set_initial_value([1.0 + 0j], 0.0)\n"
	                  "out.append(round(float(c.integrate(np.pi)[0].real), 4))\n"
	                  "s = solve_ivp(lambda t, y: -y, (0, 1), [1.0], method='LSODA', "
	                  "dense_output=True, rtol=1e-8)\n"
	                  "out += [round(float(s.y[0, -1]), 5), round(float(s.sol(0.5)[0]), 5)]\n"
	                  "out",
	                  "[\"ValueError\",0.3679,\"ValueError\",\"RuntimeError\",[0.1353,0.2707],["
	                  "0.1353,0.2707],[0.1353,0.2707],[0.1353,0.2707],-1.0,0.36788,0.60653]");
	e2e_stop();
}

/* A Delaunay triangulation's simplices and neighbors edited in place (and an interpolator's
 * values replaced): find_simplex, vertex_to_simplex, transform, tsearch,
 * vertex_neighbor_vertices, LinearNDInterpolator and CloughTocher2DInterpolator read and
 * wrote past the arrays (SIGSEGV). The compiled code now gets checked copies; ordinary
 * find_simplex, griddata and the interpolators answer as before. */
Test(data, delaunay_arrays_edited_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.spatial import Delaunay, tsearch\n"
	    "from scipy.interpolate import griddata, LinearNDInterpolator, "
	    "CloughTocher2DInterpolator\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "rng = np.random.default_rng(0)\n"
	    "def tri():\n"
	    "    return Delaunay(rng.random((20, 2)))\n"
	    "a = tri()\n"
	    "a.neighbors[:] = 10**8\n"
	    "out = [t(lambda: a.find_simplex([[0.5, 0.5], [5.0, 5.0]]))]\n"
	    "b = tri()\n"
	    "b.simplices[0, 0] = 10**9\n"
	    "out += [t(lambda: b.vertex_to_simplex), t(lambda: b.transform), t(lambda: tsearch(b, "
	    "rng.random((5, 2)))),\n"
	    "        t(lambda: b.vertex_neighbor_vertices)]\n"
	    "c = tri()\n"
	    "li = LinearNDInterpolator(c, np.ones(20))\n"
	    "c.simplices[:] = 10**8\n"
	    "out += [t(lambda: li([[0.5, 0.5]])), t(lambda: CloughTocher2DInterpolator(c, "
	    "np.ones(20)))]\n"
	    "e = tri()\n"
	    "ct = CloughTocher2DInterpolator(e, np.ones(20))\n"
	    "ct.values = np.ones((1, 1))\n"
	    "out.append(t(lambda: ct([[0.5, 0.5]])))\n"
	    "# ordinary use answers as before\n"
	    "p = np.array([[0., 0.], [1., 0.], [0., 1.], [1., 1.], [0.5, 0.4]])\n"
	    "v = p[:, 0] + 2 * p[:, 1]\n"
	    "d = Delaunay(p)\n"
	    "out += [d.find_simplex([[0.1, 0.05], [5.0, 5.0]]).tolist()[1], "
	    "int(d.find_simplex([0.9, 0.9]) >= 0),\n"
	    "        int((d.vertex_to_simplex >= 0).all()), len(d.convex_hull),\n"
	    "        np.round(griddata(p, v, [[0.25, 0.5], [0.75, 0.25]]), 6).tolist(),\n"
	    "        np.round(griddata(p, v, [[0.25, 0.5]], method='cubic'), 3).tolist(),\n"
	    "        np.round(LinearNDInterpolator(d, v)([[0.3, 0.3]]), 6).tolist(),\n"
	    "        np.round(CloughTocher2DInterpolator(d, v)([[0.3, 0.3]]), 3).tolist()]\n"
	    "out",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ValueError\",\"ValueError\",-1,1,1,4,[1.25,1.25],[1.25],[0.9],[0.9]"
	    "]");
	e2e_stop();
}

/* RegularGridInterpolator's grid replaced after construction (longer than the values):
 * its compiled kernels read past the values (heap pointers as results, or SIGSEGV). The
 * kernels now check the cells found against the values; ordinary interpolation and interpn
 * answer as before. */
Test(data, grid_interpolator_grid_replaced_is_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.interpolate import RegularGridInterpolator, interpn\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "g = RegularGridInterpolator((np.arange(3.), np.arange(3.)), np.full((3, 3), 7.))\n"
	    "g.grid = (np.arange(64.), np.arange(3.))\n"
	    "out = [t(lambda: g(np.array([[i, 0.] for i in range(3, 40)])))]\n"
	    "h = RegularGridInterpolator((np.arange(3.), np.arange(3.)), np.zeros((3, 3)))\n"
	    "h.grid = (np.arange(10.**6), np.arange(10.**6))\n"
	    "out.append(t(lambda: h([[9e5, 9e5]])))\n"
	    "k = RegularGridInterpolator((np.arange(3.), np.arange(3.)), np.zeros((3, 3)))\n"
	    "k.grid = (np.arange(3.),)\n"
	    "out.append(t(lambda: k._find_indices(np.zeros((2, 1)))))\n"
	    "# ordinary use answers as before\n"
	    "v = np.arange(12.).reshape(3, 4)\n"
	    "r = RegularGridInterpolator((np.arange(3.), np.arange(4.)), v)\n"
	    "out += [r([[1.5, 2.5], [0.5, 0.25]]).tolist(), r([[1.4, 2.6]], "
	    "method='nearest').tolist(),\n"
	    "        interpn((np.arange(3.), np.arange(4.)), v, [[1.5, 2.5]]).tolist(),\n"
	    "        RegularGridInterpolator((np.arange(3.), np.arange(4.), np.arange(2.)),\n"
	    "                                np.arange(24.).reshape(3, 4, 2))([[1.5, 1.5, "
	    "0.5]]).tolist()]\n"
	    "out",
	    "[\"IndexError\",\"IndexError\",\"ValueError\",[8.5,2.25],[7.0],[8.5],[15.5]]");
	e2e_stop();
}

/* UnivariateSpline's _eval_args and RectBivariateSpline's tck and degrees set after
 * fitting (a degree of 1000, or 200 with two negative factors making f2py's coefficient
 * count right) went to FITPACK unchecked and read far past the knots (SIGSEGV). The
 * _fitpack_impl functions and dfitpack's surface routines now check knots, degrees and
 * coefficients; ordinary splines answer as before. */
Test(data, spline_tck_edited_is_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.interpolate import UnivariateSpline, RectBivariateSpline, "
	    "SmoothSphereBivariateSpline\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "x = np.linspace(0, 1, 20)\n"
	    "s = UnivariateSpline(x, np.sin(x))\n"
	    "tk, c, k = s._eval_args\n"
	    "s._eval_args = (tk, c, 1000)\n"
	    "out = [t(lambda: s(np.linspace(0, 1, 5))), t(lambda: s.integral(0, 1)), t(lambda: "
	    "s.roots()),\n"
	    "       t(lambda: s.derivatives(0.5))]\n"
	    "xx = np.linspace(0, 1, 10)\n"
	    "b = RectBivariateSpline(xx, xx, np.ones((10, 10)))\n"
	    "tx, ty, cc = b.tck\n"
	    "b.tck = (tx, ty, np.zeros((len(tx) - 201) * (len(ty) - 201)))\n"
	    "b.degrees = (200, 200)\n"
	    "out += [t(lambda: b(np.array([0.5]), np.array([0.5]))), t(lambda: b.ev([0.5], "
	    "[0.5])),\n"
	    "        t(lambda: b.integral(0, 1, 0, 1)), t(lambda: b.partial_derivative(1, 1))]\n"
	    "# ordinary use answers as before\n"
	    "u = UnivariateSpline(x, x ** 2, s=0)\n"
	    "r = RectBivariateSpline(xx, xx, np.add.outer(xx, xx ** 2))\n"
	    "out += [round(float(u(0.5)), 6), round(float(u.integral(0, 1)), 6), "
	    "round(float(u.derivatives(0.5)[1]), 6),\n"
	    "        round(float(u.derivative()(0.5)), 6), np.round(r([0.5], [0.5]), 6).tolist(),\n"
	    "        round(float(r.ev(0.25, 0.5, dx=1)), 6), round(float(r.integral(0, 1, 0, 1)), "
	    "6),\n"
	    "        round(float(r.partial_derivative(0, 1)(0.5, 0.5)[0, 0]), 6)]\n"
	    "out",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ValueError\",\"ValueError\",0.25,0.333333,1.0,1.0,[[0.75]],1.0,0."
	    "833333,1.0]");
	e2e_stop();
}

/* sepfir2d with a filter longer than the image wrote past its rows and its temporary
 * buffer (heap overflow), and a broadcast image of 2**32 elements wrapped the buffer's size.
 * Both are refused; ordinary filtering answers as before. */
Test(data, sepfir2d_filter_longer_than_image_is_refused)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import signal\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "out = [t(lambda: signal.sepfir2d(np.ones((5, 5)), np.ones(101), np.ones(1))),\n"
	    "       t(lambda: signal.sepfir2d(np.ones((5, 5)), np.ones(1), np.ones(7))),\n"
	    "       t(lambda: signal.sepfir2d(np.broadcast_to(np.ones(1), (1 << 16, 1 << 16)), "
	    "[1.], [1.]))]\n"
	    "# ordinary use answers as before\n"
	    "img = np.arange(25.).reshape(5, 5)\n"
	    "out += [signal.sepfir2d(img, [1., 2., 1.], [1.])[2].tolist(), signal.sepfir2d(img, "
	    "np.ones(5), np.ones(5))[0].tolist(),\n"
	    "        signal.sepfir2d(img.astype(np.float32), [1., 4., 1.], [1., 2., "
	    "1.])[4].tolist()]\n"
	    "out",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",[41.0,44.0,48.0,52.0,55.0],[120.0,130.0,"
	    "150.0,170.0,180.0],[454.0,474.0,498.0,522.0,542.0]]");
	e2e_stop();
}

/* A tree's sparse splitter moved a sample once for each of its entries in a column: a CSC
 * matrix with an entry given 20,000 times (scipy allows it) wrote past the splitter's buffers
 * (a count written at any address: V89a). Checked sparse matrices have their duplicates summed,
 * as scipy's own operations take them. And fit(..., check_input=False) handed X, y and the
 * weights to the builder unchecked: a matrix whose data was replaced by a shorter array was
 * read past its end. fit checks its input whatever it is told. */
Test(data, tree_fits_take_checked_matrices_whatever_they_are_told)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from sklearn.tree import DecisionTreeRegressor\n"
	    "N, D = 200, 20000\n"
	    "X = sp.csc_matrix((np.full(D, -1.0, np.float32), np.zeros(D, np.int32),\n"
	    "                   np.array([0, D], np.int32)), shape=(N, 1))\n"
	    "y = np.arange(N, dtype=float)\n"
	    "t = DecisionTreeRegressor(max_depth=1).fit(X, y)\n"
	    "Z = sp.csc_matrix((np.ones(2, np.float32), np.array([0, 1], np.int32), np.array([0, "
	    "2], np.int32)),\n"
	    "                  shape=(2, 1))\n"
	    "Z.indices = np.tile(np.array([0, 1], np.int32), 64)\n"
	    "Z.data = np.zeros(100, np.float32)\n"
	    "Z.indptr = np.array([99, 101], np.int32)\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except ValueError as e:\n"
	    "        return str(e)\n"
	    "[X.nnz, t.tree_.node_count, round(float(t.predict(X[:1].toarray())[0]), 3),\n"
	    " attempt(lambda: DecisionTreeRegressor().fit(Z, [0.0, 1.0], check_input=False)),\n"
	    " attempt(lambda: DecisionTreeRegressor().fit(np.ones((3, 2)), [1.0], "
	    "check_input=False))]",
	    "[20000,3,0.0,\"index pointer should start with 0\","
	    "\"Number of labels=1 does not match number of samples=3\"]");
	e2e_stop();
}

/* A fancy assignment whose index is a view of the array it writes: numpy checked the indices
 * once, then read them again from that memory as it wrote, so a[a[:2]] = v had its first
 * write choose where the second went (another array's item written: V89f), a tuple of index
 * arrays the same, and a mask that is a view of its target shifted by one grew as it was
 * written (the values read past their array). Such an index is a private copy: the writes go
 * where the indices said before any was made. */
Test(data, fancy_assignment_reads_its_indices_before_it_writes)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "a = np.zeros(8, dtype=np.intp)\n"
	    "victim = np.full(4, 0x41414141, dtype=np.intp)\n"
	    "D = (victim.ctypes.data - a.ctypes.data) // 8\n"
	    "if D < 0:\n"
	    "    D -= 8\n"
	    "a[0] = 1\n"
	    "idx = a[:2]\n"
	    "vals = np.array([D, 0x4242], dtype=np.intp)\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except IndexError:\n"
	    "        return 'IndexError'\n"
	    "r = [t(lambda: a.__setitem__(idx, vals))]\n"
	    "b = np.zeros((2, 8), dtype=np.intp)\n"
	    "flat = b.reshape(-1)\n"
	    "cols = flat[:2]\n"
	    "flat[0] = 1\n"
	    "E = (victim.ctypes.data - b.ctypes.data) // 8\n"
	    "if E < 0:\n"
	    "    E -= 8\n"
	    "r.append(t(lambda: b.__setitem__((np.zeros(2, dtype=np.intp), cols), np.array([E, "
	    "0x4343], dtype=np.intp))))\n"
	    "s = np.zeros(64, dtype=np.uint8)\n"
	    "s[0] = 1; s[40] = 1\n"
	    "s[1:][s[:-1].view(bool)] = np.array([7, 8], dtype=np.uint8)\n"
	    "c = np.array([1, 0, 5, 6])\n"
	    "c[c[:2]] = [10, 20]\n"
	    "r + [[hex(v) for v in victim], int(s.sum()), s[1], s[41], c.tolist()]",
	    "[\"ran\",\"ran\",[\"0x41414141\",\"0x41414141\",\"0x41414141\",\"0x41414141\"],17,7,8,"
	    "[20,10,5,6]]");
	/* the index a memoryview of the target, or an object whose __array__ is a view of it
	 * (V90b) */
	e2e_expect_result(
	    "import numpy as np\n"
	    "a = np.zeros(4, dtype=np.intp)\n"
	    "victim = np.full(4, 7, dtype=np.intp)\n"
	    "off = (victim.ctypes.data - a.ctypes.data) // 8\n"
	    "off = off if off >= 0 else off - len(a)\n"
	    "a[0] = 1\n"
	    "a[memoryview(a)[0:2]] = np.array([off, 0x4141], dtype=np.intp)\n"
	    "b = np.zeros(4, dtype=np.intp)\n"
	    "off2 = (victim.ctypes.data - b.ctypes.data) // 8\n"
	    "off2 = off2 if off2 >= 0 else off2 - len(b)\n"
	    "b[0] = 1\n"
	    "class K:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return b[:2]\n"
	    "b[K()] = np.array([off2, 0x4242], dtype=np.intp)\n"
	    "[victim.tolist(), a.tolist()[:2] == [0x4141, off], b.tolist()[:2] == [0x4242, off2]]",
	    "[[7,7,7,7],true,true]");
	e2e_stop();
}

/* _spline's filters and upfirdn's loop turned byte strides into item strides by a shift or
 * a floor division: a reversed complex field of 24-byte records (stride -24) was walked at -32
 * bytes, up to 8 bytes an item before the array (another array's values read back: V89b). They
 * filter a contiguous copy: the values are the field's. DIRECT read as many upper bounds as
 * lb has: a Bounds whose ub was set shorter afterwards had the heap past it given to the code's
 * function; the bounds must be of one length. */
Test(data, signal_filters_read_the_fields_they_are_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import signal\n"
	    "N = 64\n"
	    "rec = np.dtype([('c', 'c16'), ('pad', 'f8')])\n"
	    "arrays = [np.zeros(N, dtype=rec) for i in range(300)]\n"
	    "for i, a in enumerate(arrays):\n"
	    "    a['c'] = 1000.0 + i\n"
	    "    a['pad'] = 1000.0 + i\n"
	    "s = arrays[150]\n"
	    "s['c'] = np.arange(N) + 1j\n"
	    "s['pad'] = 1.0\n"
	    "v = s['c'][::-1]\n"
	    "y1 = signal.symiirorder1(v, 1.0, 1e-200)\n"
	    "y2 = signal.upfirdn([1.0], v)\n"
	    "r = np.zeros(N, dtype=[('x', 'f8'), ('pad', 'f4')])\n"
	    "r['x'] = np.arange(N)\n"
	    "w = r['x'][::-1]\n"
	    "y3 = signal.symiirorder2(w, 0.5, 0.1)\n"
	    "[bool(np.allclose(y1, v)), bool(np.allclose(y2, v)), bool(np.allclose(y3, "
	    "signal.symiirorder2(np.ascontiguousarray(w), 0.5, 0.1))),\n"
	    " bool((np.abs(y1) < 1000).all())]",
	    "[true,true,true,true]");
	e2e_expect_result("import numpy as np\n"
	                  "from scipy.optimize import direct, Bounds\n"
	                  "def f(x):\n"
	                  "    return float(np.sum((x - 0.3) ** 2))\n"
	                  "r = direct(f, Bounds([-1, -1], [1, 1]), maxfun=200)\n"
	                  "b = Bounds(np.zeros(6), np.ones(6))\n"
	                  "b.ub = np.array([1.0])\n"
	                  "def t():\n"
	                  "    try:\n"
	                  "        direct(f, b, maxfun=20)\n"
	                  "        return 'ran'\n"
	                  "    except ValueError as e:\n"
	                  "        return str(e)[:40]\n"
	                  "[np.round(r.x, 2).tolist(), t()]",
	                  "[[0.3,0.3],\"the bounds lb and ub should be 1-D and o\"]");
	e2e_stop();
}

/* PIL's codecs wrote and read the descriptor a file object's fileno() gave them, in C: an
 * object of the code's answered 3, and saving a PPM wrote the code's bytes into the worker's
 * channel to the supervisor (V89f; libtiff reads a descriptor so too). Image.open and save
 * hand the codecs the code's objects without fileno: the bytes go through their write and
 * read, and the images are the same. */
Test(data, pil_codecs_use_no_descriptor_a_file_object_names)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io\n"
	    "from PIL import Image\n"
	    "class F:\n"
	    "    def __init__(self): self.b = io.BytesIO()\n"
	    "    def fileno(self): return 3\n"
	    "    def flush(self): pass\n"
	    "    def write(self, d): return self.b.write(d)\n"
	    "    def tell(self): return self.b.tell()\n"
	    "    def seek(self, *a): return self.b.seek(*a)\n"
	    "f = F()\n"
	    "Image.new('L', (16, 1), 0x41).save(f, 'PPM')\n"
	    "g = io.BytesIO()\n"
	    "Image.new('RGB', (4, 3), (1, 2, 3)).save(g, 'PNG')\n"
	    "g.seek(0)\n"
	    "class R:\n"
	    "    def __init__(self, b): self.b = io.BytesIO(b)\n"
	    "    def fileno(self): return 3\n"
	    "    def read(self, *a): return self.b.read(*a)\n"
	    "    def seek(self, *a): return self.b.seek(*a)\n"
	    "    def tell(self): return self.b.tell()\n"
	    "h = io.BytesIO(); Image.new('L', (5, 5), 9).save(h, 'TIFF', compression='tiff_lzw')\n"
	    "im = Image.open(R(h.getvalue())); im.load()\n"
	    "[f.b.getvalue()[-16:].decode(), Image.open(g).getpixel((0, 0)), im.getpixel((2, 2)), "
	    "im.size]",
	    "[\"AAAAAAAAAAAAAAAA\",[1,2,3],9,[5,5]]");
	/* a BufferedWriter over a raw stream of the code's, and a plugin's save function taken
	 * from Image.SAVE (V90b); numpy's tofile and fromfile duplicated the descriptor too */
	e2e_expect_result("import io\n"
	                  "from PIL import Image\n"
	                  "class Raw(io.RawIOBase):\n"
	                  "    def __init__(self):\n"
	                  "        self.got = bytearray()\n"
	                  "    def fileno(self): return 3\n"
	                  "    def writable(self): return True\n"
	                  "    def write(self, b):\n"
	                  "        self.got += bytes(b)\n"
	                  "        return len(b)\n"
	                  "raw = Raw()\n"
	                  "w = io.BufferedWriter(raw)\n"
	                  "Image.new('L', (8, 1), 0x41).save(w, 'PPM')\n"
	                  "w.flush()\n"
	                  "class F:\n"
	                  "    def __init__(self): self.b = io.BytesIO()\n"
	                  "    def fileno(self): return 3\n"
	                  "    def flush(self): pass\n"
	                  "    def write(self, d): return self.b.write(d)\n"
	                  "    def tell(self): return self.b.tell()\n"
	                  "    def seek(self, *a): return self.b.seek(*a)\n"
	                  "f = F()\n"
	                  "Image.SAVE['PPM'](Image.new('L', (8, 1), 0x42), f, 'x.ppm')\n"
	                  "[bytes(raw.got[-8:]).decode(), f.b.getvalue()[-8:].decode()]",
	                  "[\"AAAAAAAA\",\"BBBBBBBB\"]");
	e2e_expect_result("import io, numpy as np\n"
	                  "class F:\n"
	                  "    def __init__(self): self.b = io.BytesIO()\n"
	                  "    def fileno(self): return 3\n"
	                  "    def flush(self): pass\n"
	                  "    def tell(self): return self.b.tell()\n"
	                  "    def seek(self, *a): return self.b.seek(*a)\n"
	                  "    def write(self, b): return self.b.write(b)\n"
	                  "    def read(self, *a): return self.b.read(*a)\n"
	                  "f = F()\n"
	                  "np.arange(4, dtype=np.int32).tofile(f)\n"
	                  "f.seek(0)\n"
	                  "a = np.fromfile(f, dtype=np.int32)\n"
	                  "g = io.BytesIO()\n"
	                  "np.array([1.5, 2.0]).tofile(g, sep=',')\n"
	                  "[a.tolist(), g.getvalue().decode()]",
	                  "[[0,1,2,3],\"1.5,2.0\"]");
	e2e_stop();
}

/* Three crashes from plain calls (V89f, V89b): a Generator over a class of the code's beneath
 * BitGenerator (whose draw functions numpy leaves NULL), a Lame function of degree 103493188
 * (its buffer's size wrapped in a C int, 51 million numbers written past 712 bytes), and
 * point() to a 16-bit mode (written through row pointers such an image has not). Each is
 * refused; a subclass of PCG64, small degrees and point() to the usual modes answer as on the
 * host. */
Test(data, bit_generators_lame_degrees_and_point_modes_are_ones_that_work)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import special\n"
	    "from PIL import Image\n"
	    "class B(np.random.BitGenerator):\n"
	    "    pass\n"
	    "class P(np.random.PCG64):\n"
	    "    pass\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return str(e)\n"
	    "[t(lambda: int(np.random.Generator(B()).integers(10))), "
	    "int(np.random.Generator(P(1)).integers(1000)),\n"
	    " t(lambda: special.ellip_harm(5, 8, 103493188, 1, 2.5)), "
	    "round(float(special.ellip_harm(5, 8, 1, 1, 2.5)), 6),\n"
	    " t(lambda: Image.new('L', (64, 64)).point([1] * 256, 'I;16')),\n"
	    " Image.new('L', (4, 4), 3).point([i * 2 for i in range(256)]).getpixel((0, 0)),\n"
	    " Image.new('L', (4, 4), 3).point(lambda v: v + 1, '1').mode]",
	    "[\"Generator takes one of numpy's bit generators in the sandbox\",473,"
	    "\"the degree n of a Lame function is at most 100000 in the sandbox\",2.5,"
	    "\"point operation to mode I;16 is not supported\",6,\"1\"]");
	/* a subclass whose __init__ skipped numpy's (its state unmade), and an instance given
	 * another bit generator's capsule, which it did not hold (V90b) */
	e2e_expect_result("import numpy as np\n"
	                  "class P(np.random.PCG64):\n"
	                  "    def __init__(self, seed=None):\n"
	                  "        super(np.random.PCG64, self).__init__(seed)\n"
	                  "class S(np.random.PCG64):\n"
	                  "    pass\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "        return 'made'\n"
	                  "    except (TypeError, AttributeError) as e:\n"
	                  "        return str(e)\n"
	                  "s = S(1)\n"
	                  "other = np.random.PCG64(2)\n"
	                  "[t(lambda: np.random.Generator(P(1))), t(lambda: setattr(s, 'capsule', "
	                  "other.capsule)),\n"
	                  " round(float(np.random.Generator(s).random()), 6) == "
	                  "round(float(np.random.Generator(np.random.PCG64(1)).random()), 6)]",
	                  "[\"Generator takes one of numpy's bit generators in the sandbox\","
	                  "\"a bit generator's capsule is not set\",true]");
	e2e_stop();
}

/* HiGHS's wrapper sized the problem by each argument separately and copied as many row lower
 * bounds from lhs as rhs has rows: milp checked its matrix against the constraint's lb only,
 * so a ub set longer afterwards had the bounds of the rows past lb read from the heap, and the
 * answer gave one back (V89b). The arrays must agree first; milp and linprog solve as on the
 * host. */
Test(data, highs_takes_bounds_that_match_its_problem)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.optimize import milp, linprog, LinearConstraint, Bounds\n"
	    "from scipy import sparse\n"
	    "c = -np.array([0, 1])\n"
	    "A = np.array([[-1, 1], [3, 2], [2, 3]])\n"
	    "r1 = milp(c, constraints=LinearConstraint(A, -np.inf, [1, 12, 12]), "
	    "integrality=np.ones_like(c))\n"
	    "r2 = milp(np.array([1.0, 2.0]), bounds=Bounds([1, 2], [5, 5]))\n"
	    "r3 = linprog([-1, 4], A_ub=[[-3, 1], [1, 2]], b_ub=[6, 4], bounds=[(None, None), (-3, "
	    "None)])\n"
	    "r4 = linprog([1, 1], bounds=[(0, 1), (0, 1)], method='highs-ipm')\n"
	    "R = 8\n"
	    "A = sparse.csc_array((np.ones(1), np.array([R + 2], dtype=np.int32), np.array([0, 1], "
	    "dtype=np.int32)), shape=(R, 1))\n"
	    "lc = LinearConstraint(A, np.full(R, -np.inf), np.inf)\n"
	    "lc.ub = np.full(R + 3, np.inf)\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        r = f(); return [int(r.status), None if r.x is None else float(r.x[0])]\n"
	    "    except ValueError as e:\n"
	    "        return str(e)[:40]\n"
	    "[r1.x.tolist(), r2.x.tolist(), [round(v, 6) for v in r3.x], [round(v, 6) for v in "
	    "r4.x], t(lambda: milp(np.ones(1), constraints=lc, bounds=Bounds(-np.inf, np.inf)))]",
	    "[[2.0,2.0],[1.0,2.0],[10.0,-3.0],[0.0,0.0],\"the bounds do not match the problem: "
	    "lhs\"]");
	e2e_stop();
}

/* cspline2d's smoothing path ran its columns over a buffer its rows had not filled when a
 * row's boundary sum did not converge (rows of one column, or short ones under much smoothing):
 * the freed values another array had held came back, filtered (V89b). It fails as it does when
 * a column does not converge; smoothing that converges answers as the host does. */
Test(data, cspline2d_smooths_only_rows_it_filtered)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "from scipy import signal\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        r = f()\n"
	                  "        return [float(r.min()), float(r.max())]\n"
	                  "    except ValueError as e:\n"
	                  "        return str(e)\n"
	                  "M = 1000\n"
	                  "secrets = [np.full(M, 4242.0 + i) for i in range(6)]\n"
	                  "del secrets\n"
	                  "out = [t(lambda: signal.cspline2d(np.ones((M, 1)), 10.0)),\n"
	                  "       t(lambda: signal.cspline2d(np.ones((3, 2)), 1.0, 1e-9)),\n"
	                  "       t(lambda: signal.cspline2d(np.ones((1, M)), 10.0))]\n"
	                  "rng = np.random.default_rng(0)\n"
	                  "img = rng.random((30, 40))\n"
	                  "out + [round(float(signal.cspline2d(img, 0.5).sum()), 6),\n"
	                  "       round(float(signal.cspline2d(img).sum()), 6),\n"
	                  "       round(float(signal.cspline2d(img, 2.0, 1e-4)[3, 4]), 6),\n"
	                  "       signal.cspline2d(np.ones((50, 13)), 0.1).shape]",
	                  "[\"Precision too high.  Error did not converge.\","
	                  "\"Precision too high.  Error did not converge.\","
	                  "\"Precision too high.  Error did not converge.\","
	                  "614.128013,614.128226,0.55993,[50,13]]");
	e2e_stop();
}

/* matplotlib's Triangulation with its triangles (or neighbors) edited after it was made:
 * the C++ triangulation kept views of the same arrays and the interpolators and the trifinder
 * read x and y at any vertex number (SIGSEGV). The C++ one is made from checked copies and
 * hands back copies; ordinary interpolation, trifinder and masks answer as before. */
Test(data, tri_triangles_edited_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import matplotlib.tri as mtri\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def tri():\n"
	    "    return mtri.Triangulation([0, 1, 0, 1], [0, 0, 1, 1], [[0, 1, 2], [1, 3, 2]])\n"
	    "a = tri()\n"
	    "a.triangles[0, 0] = 10**9\n"
	    "b = tri()\n"
	    "b.triangles[0, 0] = -(10**9)\n"
	    "c = tri()\n"
	    "c.get_cpp_triangulation()\n"
	    "c.neighbors[0, 0] = 10**6\n"
	    "out = [t(lambda: mtri.LinearTriInterpolator(a, np.zeros(4))(0.2, 0.2)), t(lambda: "
	    "b.get_trifinder()(0.2, 0.2)),\n"
	    "       t(lambda: c.get_cpp_triangulation()), t(lambda: mtri.CubicTriInterpolator(a, "
	    "np.zeros(4))(0.2, 0.2))]\n"
	    "d = tri()\n"
	    "n = d.get_cpp_triangulation().get_neighbors()\n"
	    "n[0, 0] = 10**6\n"
	    "out.append(d.get_cpp_triangulation().get_neighbors().tolist())\n"
	    "# ordinary use answers as before\n"
	    "e = tri()\n"
	    "z = np.array([0., 1., 2., 3.])\n"
	    "out += [float(mtri.LinearTriInterpolator(e, z)(0.25, 0.5)), "
	    "round(float(mtri.CubicTriInterpolator(e, z)(0.25, 0.5)), 6),\n"
	    "        e.get_trifinder()(np.array([0.2, 0.9, 2.0]), np.array([0.2, 0.9, "
	    "2.0])).tolist(), e.neighbors.tolist(),\n"
	    "        e.edges.tolist()]\n"
	    "e.set_mask([False, True])\n"
	    "out.append(e.get_trifinder()(np.array([0.2, 0.9]), np.array([0.2, 0.9])).tolist())\n"
	    "out",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",[[-1,1,-1],[-1,-1,0]],1."
	    "25,1.25,[0,1,-1],[[-1,1,-1],[-1,-1,0]],[[1,0],[2,0],[2,1],[3,1],[3,2]],[0,-1]]");
	e2e_stop();
}

/* Dataset downloads made their cache directory first and failed with "os.mkdir is not
 * allowed"; a URL given to pandas named only an audit event. Both now say there is no
 * network, and the datasets sklearn ships still load. */
Test(data, downloads_say_there_is_no_network)
{
	start_data(NULL);
	e2e_expect_result(
	    "import seaborn as sns, pandas as pd\n"
	    "from sklearn import datasets\n"
	    "out = []\n"
	    "for f in (lambda: sns.load_dataset('iris'), lambda: datasets.fetch_openml('iris'),\n"
	    "          lambda: datasets.fetch_california_housing(),\n"
	    "          lambda: pd.read_csv('https://example.com/x.csv')):\n"
	    "    try:\n"
	    "        f()\n"
	    "    except PermissionError as e:\n"
	    "        out.append('no network' in str(e))\n"
	    "out + [datasets.load_iris().data.shape]",
	    "[true,true,true,true,[150,4]]");
	e2e_stop();
}

/* mpmath writes its hypergeometric summators at run time for the types of their parameters
 * and runs them in its own namespace: hyp1f1, hyp2f1, and sympy's integrals and normal
 * probabilities that reach them failed with NameError (the code got a namespace without the
 * module's constants). Values from python3.11 with Debian 12's packages. */
Test(data, hypergeometric_functions_and_normal_probabilities)
{
	start_data(NULL);
	e2e_expect_result(
	    "import mpmath, sympy as sp\n"
	    "from sympy.stats import Normal, P\n"
	    "x = sp.symbols('x')\n"
	    "[str(mpmath.hyp1f1(1, 2, 0.5)), str(mpmath.hyp2f1(1, 2, 3, 0.5)),\n"
	    " str(sp.N(sp.integrate(sp.exp(-x**2/2)/sp.sqrt(2*sp.pi), (x, 1, sp.oo)), "
	    "12)),\n"
	    " str(sp.N(P(Normal('X', 0, 1) > 1), 12))]",
	    "[\"1.29744254140026\",\"1.54517744447956\",\"0.158655253931\","
	    "\"0.158655253931\"]");
	e2e_stop();
}

/* What a data survey found failing in ordinary plotting and date code: contour plots (and
 * seaborn's two-variable kdeplot) import contourpy when they draw, which a worker could not
 * load; findSystemFonts ran fc-list, which the sandbox ended; sympy's pretty printing chose
 * ASCII before the call's UTF-8 streams were in place; pytz and dateutil, which pandas itself
 * uses, were not importable. */
Test(data, contours_fonts_pretty_printing_date_parsing_and_triangles)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, matplotlib.pyplot as plt, seaborn as sns, sympy as sp\n"
	    "from matplotlib import font_manager\n"
	    "from dateutil import parser, relativedelta\n"
	    "import pytz, datetime\n"
	    "x = np.linspace(-2, 2, 30)\n"
	    "X, Y = np.meshgrid(x, x)\n"
	    "cs = plt.contourf(X, Y, X ** 2 + Y ** 2, levels=5)\n"
	    "plt.figure()\n"
	    "rng = np.random.default_rng(0)\n"
	    "sns.kdeplot(x=rng.normal(size=200), y=rng.normal(size=200))\n"
	    "fonts = font_manager.findSystemFonts()\n"
	    "plt.close('all')\n"
	    "[len(cs.levels), isinstance(fonts, list), sp.pretty(sp.sqrt(sp.Symbol('x'))),\n"
	    " str(parser.parse('March 5th 2023 10:30')),\n"
	    " str(datetime.date(2024, 1, 31) + relativedelta.relativedelta(months=1)),\n"
	    " str(pytz.timezone('Asia/Tokyo').localize(datetime.datetime(2024, 1, 1)))]",
	    "[7,true,\"\xe2\x88\x9ax\",\"2023-03-05 10:30:00\",\"2024-02-29\","
	    "\"2024-01-01 00:00:00+09:00\"]");
	/* Scattered points: the Delaunay triangles python3.11 gives (matplotlib's qhull opened
	 * /dev/null: the call failed), anticlockwise, each neighbour across its own edge. */
	e2e_expect_result(
	    "import numpy as np, matplotlib.tri as mtri, matplotlib.pyplot as plt\n"
	    "rng = np.random.default_rng(1)\n"
	    "x = rng.random(40)\ny = rng.random(40)\n"
	    "t = mtri.Triangulation(x, y)\n"
	    "tris = sorted(tuple(sorted(r)) for r in t.triangles.tolist())\n"
	    "a, b, c = t.triangles.T\n"
	    "area = (x[b] - x[a]) * (y[c] - y[a]) - (x[c] - x[a]) * (y[b] - y[a])\n"
	    "across = all(t.neighbors[i, j] == -1 or\n"
	    "             {tr[j], tr[(j + 1) % 3]} <= set(t.triangles[t.neighbors[i, j]])\n"
	    "             for i, tr in enumerate(t.triangles) for j in range(3))\n"
	    "plt.tricontourf(x, y, x * y, levels=5)\nplt.close('all')\n"
	    "interp = mtri.LinearTriInterpolator(t, x + y)\n"
	    "[len(tris), hash(tuple(tris)) % 100000, bool((area > 0).all()), across,\n"
	    " t.edges.shape, round(float(interp(0.5, 0.5)), 6)]",
	    "[70,16700,true,true,[109,2],1.0]");
	e2e_stop();
}

/* Progress bars (tqdm): drawn on stderr, in loops, over pandas' apply, in a with block, over
 * process_map and thread_map (their pools run each task in the call's thread); its monitor
 * thread and multiprocessing lock are not made (the first warned at every call, the second
 * opened a file in /dev/shm, which ended the call; with no lock at all, process_map failed and
 * left every later bar of the session without one, failing too). */
Test(data, progress_bars_draw_on_stderr)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("from tqdm import tqdm, trange\n"
	           "from tqdm.auto import tqdm as auto\n"
	           "import pandas as pd\n"
	           "s = sum(i for i in tqdm(range(1000), desc='summing'))\n"
	           "tqdm.pandas()\n"
	           "doubled = pd.Series(range(5)).progress_apply(lambda x: x * 2).tolist()\n"
	           "with tqdm(total=10) as bar:\n"
	           "    bar.update(10)\n"
	           "from tqdm.contrib.concurrent import process_map, thread_map\n"
	           "def sq(x):\n"
	           "    return x * x\n"
	           "maps = [process_map(sq, range(5), max_workers=2), thread_map(sq, range(3))]\n"
	           "[s, doubled, list(auto([1, 2])), len(list(trange(3))), maps]");
	e2e_assert_result(r, "tqdm", "[499500,[0,2,4,6,8],[1,2],3,[[0,1,4,9,16],[0,1,4]]]");
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "summing: 100%|"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "10/10"), "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_sc_str(r, "stderr"), "Warning"), "%s", mcpc_json(r));
	e2e_stop();
}

/* The summator's name is the only part of its source made of what the caller gives: a str
 * whose __eq__ says 'Z' put code there, which ran in mpmath's own namespace and replaced its
 * exec_ (a red team then had the real builtins and importer). The source must be the one
 * mpmath writes, and it runs in a copy of the namespace: the injected text defines nothing the
 * module keeps, and the next summator is a real one. */
Test(data, a_summator_name_made_of_lying_types_changes_nothing_in_mpmath)
{
	start_data(NULL);
	e2e_expect_result("import mpmath\n"
	                  "mp = mpmath.mp\n"
	                  "ran = []\n"
	                  "class S(str):\n"
	                  "    def __eq__(self, o):\n"
	                  "        ran.append(1)\n"
	                  "        return o == 'Z'\n"
	                  "    def __hash__(self): return 7\n"
	                  "code = ('Z(*a, **k): pass\\nglobal exec_\\ndef exec_(s, g, n):\\n'\n"
	                  "        '    n[s[4:s.index(\"(\")]] = lambda *a, **k: g\\ndef f')\n"
	                  "try:\n"
	                  "    mp.hypsum(1, 0, (S(code),), [1], mpmath.mpf(0.5))\n"
	                  "except Exception:\n"
	                  "    pass\n"
	                  "try:\n"
	                  "    mp.hypsum(2, 0, ('Z', 'Z'), [1, 1], mpmath.mpf(0.5))\n"
	                  "except Exception:\n"
	                  "    pass\n"
	                  "h = mp.hyp_summators[(2, 0, ('Z', 'Z'), 'R')]\n"
	                  "try:\n"
	                  "    got = type(h()).__name__\n"
	                  "except TypeError:\n"
	                  "    got = 'a summator'\n"
	                  "[len(ran) > 0, got, str(mpmath.hyp2f1(1, 2, 3, 0.5))]",
	                  "[true,\"a summator\",\"1.54517744447956\"]");
	e2e_stop();
}

/* scikit-learn as data code uses it: its bundled datasets (files of its package, given from
 * memory), pipelines, cross-validation, clustering (KMeans asked threadpoolctl, which runs
 * ldconfig and reads /proc), ensembles with n_jobs. */
Test(data, scikit_learn_fits_and_scores)
{
	start_data(NULL);
	e2e_expect_result(
	    "from sklearn.datasets import load_iris, load_digits, load_diabetes\n"
	    "from sklearn.model_selection import train_test_split, cross_val_score, GridSearchCV\n"
	    "from sklearn.pipeline import make_pipeline\n"
	    "from sklearn.preprocessing import StandardScaler\n"
	    "from sklearn.linear_model import LogisticRegression, LinearRegression\n"
	    "from sklearn.cluster import KMeans\n"
	    "from sklearn.ensemble import RandomForestClassifier\n"
	    "from sklearn.svm import SVC\n"
	    "from sklearn.metrics import accuracy_score\n"
	    "X, y = load_iris(return_X_y=True)\n"
	    "Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)\n"
	    "m = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(Xtr, ytr)\n"
	    "km = KMeans(n_clusters=3, n_init=10, random_state=0).fit(X)\n"
	    "rf = RandomForestClassifier(n_estimators=20, random_state=0, n_jobs=-1).fit(X, y)\n"
	    "gs = GridSearchCV(SVC(), {'C': [0.1, 10]}, cv=3).fit(X, y)\n"
	    "Xd, yd = load_diabetes(return_X_y=True)\n"
	    "[accuracy_score(yte, m.predict(Xte)) > 0.9, bool(cross_val_score(m, X, y, "
	    "cv=3).mean() > 0.9),\n"
	    " sorted(int((km.labels_ == k).sum()) > 0 for k in range(3)), rf.score(X, y),\n"
	    " gs.best_params_, load_digits().data.shape, load_iris(as_frame=True).frame.shape,\n"
	    " LinearRegression().fit(Xd, yd).score(Xd, yd) > 0.5, load_iris().DESCR[:16]]",
	    "[true,true,[true,true,true],1.0,{\"C\":10},[1797,64],[150,5],true,"
	    "\".. _iris_dataset\"]");
	e2e_stop();
}

/* A compiled function asked for more than one thread (the histogram predictor's n_threads)
 * runs in the calling thread (OMP_THREAD_LIMIT): OpenMP's pool, made in a call, was missing
 * from the copy of its process that kept the session, and the session's every later call
 * that used it waited for it until killed. Each call is kept, and the next one runs. */
Test(data, a_function_asked_for_threads_runs_in_one_and_keeps_the_session)
{
	const char *h;

	start_data(ARGS("--timeout", "10"));
	h = mcpc_sc_str(
	    e2e_expect_status("import numpy as np\n"
	                      "from sklearn.ensemble import HistGradientBoostingRegressor\n"
	                      "X = np.random.default_rng(0).random((2000, 4))\n"
	                      "m = HistGradientBoostingRegressor(max_iter=5).fit(X, X.sum(1))\n"
	                      "calls = 0",
	                      "{\"session\":\"new\"}", "ok"),
	    "session");
	cr_assert_not_null(h);
	h = e2e_fmt("{\"session\":\"%s\"}", h);
	for (int i = 1; i <= 3; i++)
		e2e_assert_result(e2e_expect_status("calls += 1\n"
		                                    "bool((m._raw_predict(X, n_threads=4) == "
		                                    "m._raw_predict(X, n_threads=1)).all()), calls",
		                                    h, "ok"),
		                  "a prediction asked for four threads", e2e_fmt("[true,%d]", i));
	e2e_stop();
}

/* A library that re-exports a function of a module the sandbox refuses (sympy's autowrap
 * holds subprocess.check_output, seaborn's utils urllib's urlopen) does not hand it on:
 * only the kernel stood between it and a process (old build: sandbox_violation at pipe2). */
Test(data, re_exported_process_and_network_functions_are_not_given)
{
	start_data(NULL);
	e2e_expect_result("from sympy.utilities import autowrap\n"
	                  "from seaborn import utils\n"
	                  "out = []\n"
	                  "for m, n in ((autowrap, 'check_output'), (utils, 'urlopen'),\n"
	                  "             (utils, 'urlretrieve')):\n"
	                  "    try:\n"
	                  "        getattr(m, n)(['/bin/true'])\n"
	                  "        out.append('ran')\n"
	                  "    except AttributeError as e:\n"
	                  "        out.append('refuses' in str(e))\n"
	                  "[out, callable(autowrap.autowrap), callable(utils.despine)]",
	                  "[[true,true,true],true,true]");
	e2e_stop();
}

/* scikit-learn's public array namespace for numpy (get_namespace) forwarded any name to the
 * real numpy: numpy.ctypeslib held the real os, ctypes and sys. It gives what numpy's proxy
 * gives, and scikit-learn's own use of it still works. Its discovery module holds importlib's
 * import_module under a public name: the checked importer, which gives proxies of what the
 * user may import. sympy's get_class gives an attribute as the module's proxy gives it (the
 * real namespace held the original importer and the real attrgetter); scikit-learn's
 * check_pandas_support returns pandas' proxy (it gave the real pandas). */
Test(data, library_forwarders_give_what_the_proxies_give)
{
	start_data(NULL);
	e2e_expect_result(
	    "from sklearn.utils.validation import get_namespace\n"
	    "from sklearn.decomposition import PCA\n"
	    "import numpy as np\n"
	    "xp, _ = get_namespace(np.ones(3))\n"
	    "found = []\n"
	    "for path in (('ctypeslib', 'os'), ('ctypeslib', 'ctypes'), ('_globals',),\n"
	    "             ('__dict__',), ('ctypeslib', '_ndptr')):\n"
	    "    v = xp\n"
	    "    try:\n"
	    "        for a in path:\n"
	    "            v = getattr(v, a)\n"
	    "        found.append('.'.join(path))\n"
	    "    except AttributeError:\n"
	    "        pass\n"
	    "from sklearn.utils import discovery\n"
	    "from sympy.utilities.source import get_class\n"
	    "from sklearn.utils import check_pandas_support\n"
	    "import sys, operator, pandas as pd\n"
	    "for name in ('os', 'ctypes', 'builtins', 'importlib.machinery'):\n"
	    "    try:\n"
	    "        discovery.import_module(name)\n"
	    "        found.append(name)\n"
	    "    except ImportError:\n"
	    "        pass\n"
	    "[found, xp.linalg is np.linalg and xp.ctypeslib is np.ctypeslib,\n"
	    " discovery.import_module('numpy.linalg') is np.linalg and\n"
	    " discovery.import_module('sys') is sys,\n"
	    " get_class('sklearn.utils.discovery.import_module') is discovery.import_module and\n"
	    " get_class('operator.attrgetter') is operator.attrgetter and\n"
	    " get_class('numpy.linalg') is np.linalg and\n"
	    " check_pandas_support('x') is pd,\n"
	    " float(xp.linalg.norm(np.ones(4))),\n"
	    " PCA(2).fit_transform(np.eye(4)).shape]",
	    "[[],true,true,true,2.0,[4,2]]");
	e2e_stop();
}

/* scipy.io.loadmat (whosmat, MatFile5Reader, and GenericStream used directly) read a file-like
 * object through a C stream that copied all the bytes read(n) answered into a buffer of n bytes:
 * an object answering more wrote past the buffer (any memory read and written). A file-like
 * object of the user's is read whole first, into an io.BytesIO, which the reader reads: the file
 * loads as it is; loadmat of an io.BytesIO, compressed or not, is unchanged. */
Test(data, a_mat_file_read_answers_no_more_than_asked)
{
	start_data(NULL);
	e2e_expect_result("import io\n"
	                  "import numpy as np\n"
	                  "from scipy.io import savemat, loadmat, whosmat\n"
	                  "b = io.BytesIO()\n"
	                  "savemat(b, {'x': np.arange(1000.0)}, do_compression=False)\n"
	                  "raw = b.getvalue()\n"
	                  "class F:\n"
	                  "    def __init__(self): self.b = io.BytesIO(raw)\n"
	                  "    def read(self, n=-1):\n"
	                  "        d = self.b.read(n)\n"
	                  "        return d + b'A' * 4000 if n == 8000 else d\n"
	                  "    def seek(self, *a): return self.b.seek(*a)\n"
	                  "    def tell(self): return self.b.tell()\n"
	                  "z = io.BytesIO()\n"
	                  "savemat(z, {'m': np.eye(3), 's': 'text'}, do_compression=True)\n"
	                  "back = loadmat(io.BytesIO(z.getvalue()))\n"
	                  "[float(loadmat(F())['x'].sum()), whosmat(F()), back['m'].tolist(), "
	                  "str(back['s'][0]),\n"
	                  " loadmat(io.BytesIO(raw), squeeze_me=True)['x'][-3:].tolist()]",
	                  "[499500.0,[[\"x\",[1,1000],\"double\"]],[[1.0,0.0,0.0],[0.0,1.0,0.0],[0."
	                  "0,0.0,1.0]],\"text\",[997.0,998.0,999.0]]");
	e2e_stop();
}

/* A callable metric (DistanceMetric 'pyfunc', metric=f in NearestNeighbors, BallTree, DBSCAN)
 * was called on arrays made over the C rows compared, with no owner: kept past the call, they
 * read and wrote freed memory (any memory). The callable is handed copies of the rows; the
 * neighbours, distances and clusters found with it are those of the built-in metric. */
Test(data, a_callable_metric_gets_copies_of_the_rows)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.metrics import DistanceMetric, pairwise_distances\n"
	    "from sklearn.neighbors import NearestNeighbors\n"
	    "from sklearn.cluster import DBSCAN\n"
	    "kept = []\n"
	    "def f(a, b):\n"
	    "    kept.append(a)\n"
	    "    return float(np.sqrt(((a - b) ** 2).sum()))\n"
	    "X = np.arange(2000.0).reshape(2, 1000)\n"
	    "DistanceMetric.get_metric('pyfunc', func=f).pairwise(X)\n"
	    "row = X[0].tolist()\n"
	    "first = list(kept)\n"
	    "del X\n"
	    "junk = [np.full(1000, 7.0) for _ in range(20)]\n"
	    "rng = np.random.RandomState(0)\n"
	    "P, Q = rng.rand(40, 3), rng.rand(5, 3)\n"
	    "same = []\n"
	    "tree = []\n"
	    "for alg in ('ball_tree', 'brute'):\n"
	    "    kept.clear()\n"
	    "    d1, i1 = NearestNeighbors(n_neighbors=3, metric=f, "
	    "algorithm=alg).fit(P).kneighbors(Q)\n"
	    "    d2, i2 = NearestNeighbors(n_neighbors=3, algorithm=alg).fit(P).kneighbors(Q)\n"
	    "    same.append(bool(np.allclose(d1, d2) and (i1 == i2).all()))\n"
	    "    tree.append(all(a.flags.owndata for a in kept))\n"
	    "[first[0].tolist() == row, all(a.flags.owndata for a in first), tree[0], same,\n"
	    " bool(np.allclose(pairwise_distances(P, Q, metric=f), pairwise_distances(P, Q))),\n"
	    " DBSCAN(eps=0.3, metric=f).fit(P).labels_.tolist() == "
	    "DBSCAN(eps=0.3).fit(P).labels_.tolist()]",
	    "[true,true,true,[true,true],true,true]");
	e2e_stop();
}

/* PIL's putdata, and point (filter, color_lut_3d, transform2) of an image's C object (PIL's
 * own now), took a list's length once, then read its items by index while an item's __float__ or
 * __index__ ran:
 * one emptying the list made them read freed items (SIGSEGV). The sequence is read first into
 * plain numbers (tuples of ints for pixels of several bands); ordinary data and lookup tables
 * give what they gave. */
Test(data, image_sequences_are_read_before_the_c_methods_run)
{
	start_data(NULL);
	e2e_expect_result(
	    "from PIL import Image\n"
	    "class V:\n"
	    "    def __float__(self):\n"
	    "        L.clear()\n"
	    "        return 1.0\n"
	    "    def __index__(self):\n"
	    "        L.clear()\n"
	    "        return 1\n"
	    "    def __round__(self, n=None):\n"
	    "        return 1\n"
	    "L = [V()] + [0.0] * 3999\n"
	    "im = Image.new('F', (100, 40))\n"
	    "im.putdata(L)\n"
	    "L = [V()] + [1] * 255\n"
	    "p = Image.new('L', (8, 8)).point(L)\n"
	    "L = [(1, 2, V())] + [(0, 0, 0)] * 3\n"
	    "rgb = Image.new('RGB', (2, 2))\n"
	    "rgb.putdata(L)\n"
	    "g = Image.new('L', (2, 2))\n"
	    "g.putdata([10, 20, 30, 40])\n"
	    "rgb2 = Image.new('RGB', (2, 2))\n"
	    "rgb2.putdata([(1, 2, 3), (4, 5, 6), (7, 8, 9), 0x0a0b0c])\n"
	    "[im.getpixel((0, 0)), len(L), list(rgb.getdata())[0], list(g.getdata()),\n"
	    " list(g.point([255 - i for i in range(256)]).getdata()), list(rgb2.getdata()),\n"
	    " list(rgb2.point(list(range(256)) * 2 + [0] * 256).getdata())]",
	    "[1.0,0,[1,2,1],[10,20,30,40],[245,235,225,215],[[1,2,3],[4,5,6],[7,8,9],[12,11,10]],[["
	    "1,2,0],[4,5,0],[7,8,0],[12,11,0]]]");
	e2e_stop();
}

/* doctest's runner (reachable through sympy.testing) makes a debugger, whose methods clear the
 * user's namespace and fill it with the real builtins (to run a module as __main__): no
 * debugger is made or run in a worker, and the namespace keeps its builtins. */
Test(data, the_debugger_is_not_available)
{
	json_object *r;

	start_data(NULL);
	r = e2e_expect_error(
	    "import sympy.testing.runtests as rt\n"
	    "class T:\n"
	    "    globs = {}\n    examples = []\n    name = filename = docstring = 'x'\n"
	    "    lineno = 0\n"
	    "rt.DocTestRunner().run(T())",
	    "RuntimeError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "debugger is not available"), "%s",
	          mcpc_json(r));
	e2e_expect_result("[sorted(n for n in ('exec', 'eval', 'compile') if n in __builtins__),\n"
	                  " __builtins__['abs'] is abs, __builtins__['open'] is open]",
	                  "[[],true,true]");
	e2e_stop();
}

/* A hook set on a library's class made during the call (a module imported late) ran the user's
 * C callable under the frame of a later import that subclassed it: exec, reached through
 * mpmath's public exec_, ran there with the module's own namespace, and handed out the real
 * random module (and from it os, sys, the real __import__). The hook cannot be set, and an
 * exec run from C while a class is being made is not the import's own. */
Test(data, hooks_on_library_classes_do_not_run_for_the_user)
{
	json_object *r;

	start_data(NULL);
	refused_no_file(
	    "import collections, functools\n"
	    "from mpmath.libmp.backend import exec_\n"
	    "import sympy.physics.quantum.operator as op\n"
	    "collections.Counter(map(type.__setattr__, [op.UnitaryOperator],\n"
	    "    ['__init_subclass__'], [functools.partial(exec_, 'leak = [random]')]))",
	    &(struct e2e_refusal){"error", "PermissionError",
	                          "UnitaryOperator.__init_subclass__ cannot be changed"},
	    NULL);
	e2e_expect_result("import sympy.physics.quantum.gate as gate\nhasattr(gate, 'leak')",
	                  "false");
	/* update_wrapper's own statement sets __wrapped__: not on a class the zygote had. */
	refused_no_file("import functools, pandas as pd\ndef mine(a, b):\n    pass\n"
	                "functools.update_wrapper(pd.DataFrame, mine, (), ())",
	                &(struct e2e_refusal){"error", "PermissionError",
	                                      "DataFrame.__wrapped__ cannot be changed"},
	                NULL);
	e2e_expect_result("import pandas as pd\n'_' * 2 + 'wrapped' + '_' * 2 in dir(pd.DataFrame)",
	                  "false");
	/* pyplot imports a backend by its name: only matplotlib's own (module://this printed the
	 * Zen of Python: it was imported). */
	r = e2e_call("import matplotlib.pyplot as plt\nplt.switch_backend('module://this')", NULL);
	cr_assert_null(e2e_refusal_mismatch(r, &(struct e2e_refusal){"error", "ImportError",
	                                                             "is not one of matplotlib's"}),
	               "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_sc_str(r, "stdout"), "Beautiful"), "%s", mcpc_json(r));
	/* A class a late import makes is finished by its descriptors' __set_name__. */
	e2e_expect_result("import mpl_toolkits.axisartist as aa\naa.Axes.__name__", "\"Axes\"");
	e2e_stop();
}

/* The interpreter's own exec is held by libraries (mpmath's exec_, six's): run from C under a
 * library's frame (a starmap consumed by collections.Counter, a __del__ that is a partial of
 * it), it took that frame's real globals and builtins; in sympy.abc's import, the module's
 * namespace, whose modules led to everything. exec itself checks now, wherever it is held. The
 * key of the user's that sympy.abc's star import took came through sympy.__all__, a list the
 * user's code could change: proxies give a tuple. */
Test(data, the_interpreters_exec_checks_wherever_it_is_held)
{
	start_data(NULL);
	e2e_expect_result("import collections, itertools\n"
	                  "from mpmath.libmp.backend import exec_\n"
	                  "try:\n"
	                  "    collections.Counter(itertools.starmap(exec_,\n"
	                  "        [(\"globals()['leak'] = [_sys]\",)]))\n"
	                  "    r = 'ran'\n"
	                  "except NameError:\n"
	                  "    r = 'NameError'\n"
	                  "[r, hasattr(collections, 'leak')]",
	                  "[\"NameError\",false]");
	e2e_expect_result("import sympy\n"
	                  "try:\n    sympy.__all__.append('SYMPY_DEBUG')\n    r = 'changed'\n"
	                  "except AttributeError:\n    r = 'a tuple'\n"
	                  "import sympy.abc as abc\n[r, hasattr(abc, 'leak'), str(abc.x + 1)]",
	                  "[\"a tuple\",false,\"x + 1\"]");
	/* Library code and the user's own calls of it work as ever. */
	e2e_expect_result("from mpmath.libmp.backend import exec_\nd = {}\nexec_('y = 6 * 7', d)\n"
	                  "import sympy\nx = sympy.Symbol('x')\n"
	                  "[d['y'], sympy.lambdify(x, x ** 2)(3), str(sympy.sympify('x + 1')),\n"
	                  " str(sympy.lambdify([x], sympy.sqrt(x), 'sympy')(8)),\n"
	                  " sympy.lambdify([x], x + 1, ['math', 'sympy'])(1)]",
	                  "[42,9,\"x + 1\",\"2*sqrt(2)\",2]");
	e2e_stop();
}

Test(data, numpy_and_pandas_results_read_well)
{
	json_object *r;

	start_data(NULL);
	e2e_expect_result("import numpy as np\nnp.float64(2.5)", "2.5");
	e2e_expect_result("import numpy as np\nnp.int32(7)", "7");
	e2e_expect_result("import numpy as np\nnp.array([[1, 2], [3, 4]])", "[[1,2],[3,4]]");
	e2e_expect_result("import numpy as np\nnp.array([1.0, np.nan, np.inf])", "[1.0,null,null]");
	e2e_expect_result("import pandas as pd\npd.Series([1, 2], index=['p', 'q'])",
	                  "{\"p\":1,\"q\":2}");
	e2e_expect_result("import pandas as pd\npd.Timestamp('2024-01-02')",
	                  "\"2024-01-02T00:00:00\"");
	/* Beyond the bounds: the text only, never a huge value. */
	r = e2e_ok("import numpy as np\nnp.zeros(100000)");
	e2e_assert_result(r, "big", "null");
	cr_assert_str_eq(mcpc_sc_str(r, "result_repr"), "array([0., 0., 0., ..., 0., 0., 0.])");
	r = e2e_ok("import pandas as pd\npd.DataFrame({'a': range(5000)})");
	e2e_assert_result(r, "big frame", "null");
	cr_assert(strstr(mcpc_sc_str(r, "result_repr"), "[5000 rows x 1 columns]"), "%s",
	          mcpc_sc_str(r, "result_repr"));
	e2e_stop();
}

Test(data, modules_imported_late_are_served)
{
	start_data(NULL);
	/* Not imported by the zygote: the supervisor serves them (bytecode or source). */
	e2e_expect_result("import mpl_toolkits.axes_grid1.axes_size as az\n"
	                  "float((az.Fixed(2.0) + az.Fixed(1.5)).get_size(None)[1])",
	                  "3.5");
	e2e_expect_result("from sympy.combinatorics import Permutation\n"
	                  "int(Permutation([1, 0, 2]).order())",
	                  "2");
	e2e_expect_result("import pandas.tseries.holiday as h\n"
	                  "str(h.USFederalHolidayCalendar().holidays('2024-01-01', "
	                  "'2024-01-31')[0].date())",
	                  "\"2024-01-01\"");
	/* Still only allowed modules, and no module-valued attributes. */
	refused_no_file("import os", &E2E_IMPORT, NULL);
	refused_no_file("import pandas.io.common\npandas.io.common.os",
	                &(struct e2e_refusal){"error", "AttributeError", "has no attribute 'os'"},
	                NULL);
	e2e_stop();
}

Test(data, only_a_submodule_allowed)
{
	/* --allow-import numpy.random alone: "import numpy.random as rd" works, "import
	 * numpy.random" binds a numpy holding only random, numpy itself is refused. */
	json_object *r;

	e2e_start(ARGS("--allow-import", "numpy.random"));
	r = e2e_call("import numpy.random as rd\nrd.default_rng(0).integers(0, 10, 5).tolist()",
	             NULL);
	if (strstr(mcpc_json(r), "is not installed"))
		cr_skip_test("numpy is not installed");
	e2e_assert_result(r, "as", "[8,6,5,2,3]");
	e2e_expect_result(
	    "import numpy.random\nnumpy.random.default_rng(0).integers(0, 10, 2).tolist()",
	    "[8,6]");
	refused_no_file("import numpy.random\nnumpy.linalg",
	                &(struct e2e_refusal){"error", "AttributeError", "no attribute 'linalg'"},
	                NULL);
	refused_no_file("import numpy", &E2E_IMPORT, NULL);
	refused_no_file("import numpy.linalg", &E2E_IMPORT, NULL);
	e2e_stop();
}

Test(data, files_stay_out_of_reach)
{
	json_object *r;

	scratch_make();
	start_data(NULL);
	refused_no_file(
	    e2e_fmt("import numpy as np\nnp.save('%s', np.zeros(3))", scratch_file("a.npy")),
	    &NO_OPEN, scratch_file("a.npy"));
	refused_no_file(e2e_fmt("import numpy as np\nnp.load('%s')", secret), &NO_OPEN, NULL);
	/* np.fromfile and tofile open a path themselves (they failed with a SystemError); the
	 * refusal says a workspace would give files. */
	refused_no_file(e2e_fmt("import numpy as np\nnp.fromfile('%s')", secret),
	                &(struct e2e_refusal){"error", "PermissionError", "no workspace was given"},
	                NULL);
	refused_no_file(
	    e2e_fmt("import numpy as np\nnp.arange(3).tofile('%s')", scratch_file("t.bin")),
	    &(struct e2e_refusal){"error", "PermissionError", "no workspace was given"},
	    scratch_file("t.bin"));
	refused_no_file(e2e_fmt("import numpy as np\nnp.lib.format.open_memmap('%s', mode='w+', "
	                        "shape=(3,))",
	                        scratch_file("m.npy")),
	                &NO_FILE, scratch_file("m.npy"));
	refused_no_file(e2e_fmt("import pandas as pd\npd.read_csv('%s')", secret), &NO_OPEN, NULL);
	/* A path in the home directory fails the same way (not on the lookup of the user). */
	refused_no_file("import pandas as pd\npd.read_csv('~/data.csv')", &NO_OPEN, NULL);
	refused_no_file(e2e_fmt("import pandas as pd\npd.DataFrame({'a': [1]}).to_csv('%s')",
	                        scratch_file("b.csv")),
	                &NO_FILE, scratch_file("b.csv"));
	/* A figure or an image saved to a path comes back as an image of the call, which goes on;
	 * no file is written (the code's savefig('plot.png'); print('saved') failed the call). */
	r = e2e_ok(e2e_fmt("import matplotlib.pyplot as plt\n"
	                   "from PIL import Image\n"
	                   "plt.plot([1, 3, 2])\n"
	                   "plt.savefig('%s')\n"
	                   "Image.new('RGB', (8, 6), 'red').save('%s')\n"
	                   "fig, ax = plt.subplots()\n"
	                   "ax.plot([1, 2])\n"
	                   "fig.savefig('%s')\n"
	                   "fig2, ax2 = plt.subplots()\n"
	                   "ax2.plot([2, 1])\n"
	                   "fig2.savefig('%s')\n"
	                   "ax2.set_title('drawn on since')\n"
	                   "print('saved')",
	                   scratch_file("c.png"), scratch_file("d.png"), scratch_file("e.png"),
	                   scratch_file("f.png")));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "saved\n");
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "no workspace was given, so no file is written"),
	          "%s", mcpc_json(r));
	/* each saved once, and the one drawn on since again at the end */
	images_are(r, 5);
	cr_assert_neq(access(scratch_file("c.png"), F_OK), 0);
	cr_assert_neq(access(scratch_file("d.png"), F_OK), 0);
	cr_assert_neq(access(scratch_file("e.png"), F_OK), 0);
	/* a figure saved by a finalizer after the call's images were taken is not the next
	 * call's */
	e2e_ok("import matplotlib.pyplot as plt\n"
	       "class Late:\n"
	       "    def __del__(self):\n"
	       "        f, a = plt.subplots()\n"
	       "        a.plot([3, 1])\n"
	       "        f.savefig('late.png')\n"
	       "        plt.close(f)\n"
	       "Late()");
	images_are(e2e_ok("plt.plot([1, 2])\nplt.show()"), 1);
	/* plt.show() after savefig shows it once (twice used two of the call's images), and again
	 * when drawn on since */
	images_are(e2e_ok("plt.plot([1, 2])\nplt.savefig('g.png')\nplt.show()"), 1);
	images_are(e2e_ok("plt.plot([1, 2])\nplt.savefig('g.png')\nplt.title('t')\nplt.show()"), 2);
	/* A library's temporary directory (an animation's frames as files beside its HTML) says
	 * there are no files, as open does. */
	refused_no_file("import matplotlib.pyplot as plt\n"
	                "from matplotlib.animation import FuncAnimation\n"
	                "fig, ax = plt.subplots()\n"
	                "FuncAnimation(fig, lambda i: [], frames=2).to_jshtml(embed_frames=False)",
	                &(struct e2e_refusal){"error", "PermissionError",
	                                      "tempfile.mkdtemp is not allowed in the sandbox: no "
	                                      "workspace was given"},
	                NULL);
	refused_no_file(
	    e2e_fmt("import io\nio.open('%s')", secret),
	    &(struct e2e_refusal){"error", "AttributeError", "io.open is not available"}, NULL);
	refused_no_file(
	    "from io import FileIO",
	    &(struct e2e_refusal){"error", "ImportError", "cannot import name 'FileIO'"}, NULL);
	/* The gadgets the packages hand out: ctypes, a compiler, expression evaluators. */
	refused_no_file("import numpy as np\nnp.ctypeslib.as_ctypes(np.zeros(3))",
	                &(struct e2e_refusal){"error", "PermissionError", "ctypes"}, NULL);
	refused_no_file("import numpy as np\nnp.ctypeslib.load_library('libc', '/lib')",
	                &(struct e2e_refusal){"error", NULL, NULL}, NULL);
	refused_no_file(
	    e2e_fmt("import sympy\nsympy.sympify(\"__import__('os').system('touch %s')\")",
	            scratch_file("d")),
	    &(struct e2e_refusal){"error", NULL, "Import of os is not allowed"}, scratch_file("d"));
	refused_no_file("import sympy\nsympy.sympify('().__class__.__base__.__subclasses__()')",
	                &E2E_DUNDER, NULL);
	refused_no_file(
	    e2e_fmt("import pandas as pd\npd.eval(\"__import__('os').system('touch %s')\")",
	            scratch_file("e")),
	    &(struct e2e_refusal){"error", NULL, NULL}, scratch_file("e"));
	/* lambdify runs code printed from the expression (a Symbol's name as it is) in a
	 * namespace with a module named builtins: the sandbox's, not the real one. */
	refused_no_file(
	    e2e_fmt("import sympy\nf = sympy.lambdify([], sympy.Symbol('builtins.getattr(builtins, "
	            "\"__imp\" + \"ort__\")(\"os\").system(\"touch %s\")'))\nf()",
	            scratch_file("f")),
	    &E2E_DUNDER, scratch_file("f"));
	refused_no_file(
	    "import sympy\nsympy.lambdify([], sympy.Symbol('builtins.open'))()('/etc/passwd')",
	    &NO_OPEN, NULL);
	/* pandas' evaluator reads any attribute named in the expression: what library code may
	 * read (a function's defaults) holds no module. */
	refused_no_file("import typing, pandas as pd\nt = type(typing.List[int])\n"
	                "d = pd.eval('t.__reduce__.__defaults__', local_dict={'t': t}, "
	                "engine='python')\nd[0]['sys']",
	                &(struct e2e_refusal){"error", "AttributeError", "dunder attribute"}, NULL);
	/* sympy's printer functions copied the wrapped function's __globals__ into their own
	 * __dict__ (where no function guard applies); a library reader of named attributes
	 * handed it on: the real builtins. */
	refused_no_file(
	    "import sympy, functools\ngot = {}\nclass W:\n"
	    "    def __setattr__(self, k, v):\n        got[k] = v\n"
	    "functools.update_wrapper(W(), sympy.srepr, assigned=('__glo' + 'bals__',), "
	    "updated=())\ngot['__glo' + 'bals__']",
	    &(struct e2e_refusal){"error", "AttributeError", "__globals__"}, NULL);
	e2e_expect_result("import sympy\nsympy.srepr(sympy.Symbol('x') + 1)",
	                  "\"Add(Symbol('x'), Integer(1))\"");
	/* Controls: both work on ordinary expressions. */
	e2e_expect_result("import sympy, pandas as pd\nx = sympy.Symbol('x')\n"
	                  "[float(sympy.lambdify([x], x**2 + 1)(3)), int(pd.eval('2 * 21'))]",
	                  "[10.0,42]");
	e2e_ok("6 * 7");
	e2e_stop();
	scratch_remove();
}

Test(data, limits_hold)
{
	json_object *r;
	int64_t t0;

	start_data(NULL);
	e2e_expect_status("import numpy as np\nnp.empty(10 * 2**30, dtype=np.uint8)", NULL,
	                  "memory_limit");
	/* A long BLAS call: the wall clock stops it although it never returns to Python. */
	t0 = mcpc_now_ms();
	e2e_expect_status("import numpy as np\na = np.ones((3000, 3000))\na @ a @ a",
	                  "{\"timeout_seconds\":1}", "timeout");
	cr_assert_lt(mcpc_now_ms() - t0, 8000, "the timeout took %lld ms",
	             (long long)(mcpc_now_ms() - t0));
	r = e2e_expect_status("import numpy as np\nnp.set_printoptions(threshold=10**9)\n"
	                      "s = str(np.arange(20000))\nfor _ in range(1000):\n    print(s)",
	                      NULL, "output_limit");
	cr_assert(json_object_get_boolean(e2e_member(mcpc_structured(r), "truncated")));
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* A numpy value's conversion calls its item(), which a subclass of the user's may write: it
 * empties the container being converted and fills the freed memory with other objects. The
 * result holds what the container held when its conversion reached each item, never freed
 * memory read as objects. */
Test(data, a_result_emptied_while_it_is_converted_reads_what_it_held)
{
	static const char item_empties[] = "import numpy as np\n"
	                                   "class F(np.float64):\n"
	                                   "    def item(self):\n"
	                                   "        box.clear()\n"
	                                   "        junk.extend([%s for i in range(20000)])\n"
	                                   "        return 1.5\n"
	                                   "junk = []\n";
	static char want[40000];
	size_t len;

	start_data(NULL);
	e2e_expect_result(e2e_fmt("%sbox = [[F(1.0), [1, 'ab'], {'k': [2, 3]}, 'tail']]\nbox",
	                          e2e_fmt(item_empties, "[str(i) * 3, (i, i)]")),
	                  "[[1.5,[1,\"ab\"],{\"k\":[2,3]},\"tail\"]]");
	/* The dict's first key is made at run time (a constant would be kept by the code). */
	e2e_expect_result(e2e_fmt("%sbox = {''.join(['k'] + ['a'] * 39): F(1.0), 'b': 2}\nbox",
	                          e2e_fmt(item_empties, "'%040d' % i")),
	                  "{\"kaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1.5}");
	/* Emptied while its first item converts, a big list was freed under the conversion. */
	len = (size_t)snprintf(want, sizeof want, "[[1.5");
	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(want + len, sizeof want - len, ",[%d,%d]", i, i);
	snprintf(want + len, sizeof want - len, "]]");
	e2e_expect_result(e2e_fmt("%sbox = [[F(0.0)] + [[i, i] for i in range(3000)]]\nbox",
	                          e2e_fmt(item_empties, "i")),
	                  want);
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* An array of objects holds pointers: numpy handed its memory to any buffer consumer, and one
 * reading it as bytes wrote pointers of the user's (memoryview(a).cast('B'), np.frombuffer,
 * struct.pack_into: a forged pointer made any object, the real builtins among them); a
 * memoryview of it copied pointers between arrays by slice assignment (no references
 * counted). A subclass whose dtype property said 'int64' got a view of numbers over objects
 * from as_strided (such a subclass is not made now). Each is refused and the array still holds what it held; arrays of numbers
 * and pandas' object columns (read by its compiled code through typed buffers) work. */
Test(data, arrays_of_objects_hand_out_no_bytes)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, struct\n"
	    "from numpy.lib.stride_tricks import as_strided\n"
	    "a = np.array([1, 'x', None], dtype=object)\n"
	    "b = np.array([2.5, 'y', 3], dtype=object)\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'made'\n"
	    "    except (TypeError, BufferError, ValueError) as e:\n"
	    "        return 'refused' if 'objects' in str(e) or 'read-write' in str(e) else "
	    "str(e)\n"
	    "def assign():\n"
	    "    m = memoryview(a)\n"
	    "    m[:] = memoryview(b)\n"
	    "def lying():\n"
	    "    class A(np.ndarray):\n"
	    "        dtype = property(lambda s: np.dtype('i8'))\n"
	    "s = np.zeros(2, dtype=[('o', 'O'), ('n', 'i8')])\n"
	    "tries = [t(lambda: memoryview(a).cast('B')), t(lambda: a.data.cast('B')),\n"
	    "         t(lambda: np.frombuffer(a, np.int64)), t(assign),\n"
	    "         t(lambda: np.ndarray((3,), np.int64, buffer=a)),\n"
	    "         t(lambda: struct.pack_into('q', a, 0, 5)),\n"
	    "         t(lambda: np.frombuffer(s, np.uint8)), t(lambda: memoryview(s).cast('B')),\n"
	    "         t(lying)]\n"
	    "n = np.arange(4, dtype=np.int32)\n"
	    "m = memoryview(n).cast('B')\n"
	    "m[0] = 9\n"
	    "df = pd.DataFrame({'k': ['x', 'y', 'x'], 'v': [1, 2, 3]})\n"
	    "[tries, a.tolist(), b.tolist(), n.tolist(), np.frombuffer(n, np.int16).tolist()[:2],\n"
	    " df.groupby('k').v.sum().to_dict(), df.k.str.upper().tolist(), "
	    "len(bytes(memoryview(a)))]",
	    "[[\"refused\",\"refused\",\"refused\",\"refused\",\"refused\",\"refused\",\"refused\","
	    "\"refused\",\"A cannot define dtype in the sandbox: numpy's checks read it of a "
	    "subclass, and its C code uses the array's own\"],[1,\"x\",null],[2.5,\"y\",3],"
	    "[9,1,2,3],[9,0],"
	    "{\"x\":4,\"y\":2},[\"X\",\"Y\",\"X\"],24]");
	e2e_stop();
}

/* A class of arrays that defines shape (or dtype, ...) is refused: numpy's checks read it of a
 * subclass (scipy's cdist(out=) wrote past the array by a lying shape). The check came after
 * type() made the class: one kept by a base's __init_subclass__ that then failed type() was
 * never checked. It comes before the class exists, over its namespace, its __slots__ (plain
 * names only) and its bases' classes; ordinary subclasses with slots and views work. */
Test(data, a_class_of_arrays_is_checked_before_it_is_made)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "K = []\n"
	    "class Keep:\n"
	    "    def __init_subclass__(cls, **kw):\n"
	    "        K.append(cls)\n"
	    "        raise ValueError('not made')\n"
	    "out = []\n"
	    "def t(make):\n"
	    "    try:\n"
	    "        make()\n"
	    "        return 'made'\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return str(e)\n"
	    "def kept():\n"
	    "    class Lie(np.ndarray, Keep):\n"
	    "        shape = property(lambda s: (1, 10 ** 6))\n"
	    "def slot():\n"
	    "    class S(np.ndarray):\n"
	    "        __slots__ = ('extra', 'shape')\n"
	    "def odd_slots():\n"
	    "    class O(np.ndarray):\n"
	    "        __slots__ = iter(['a'])\n"
	    "def fine():\n"
	    "    class Fine(np.ndarray):\n"
	    "        __slots__ = ('extra',)\n"
	    "    f = np.arange(3).view(Fine)\n"
	    "    f.extra = 1\n"
	    "    return f\n"
	    "out = [t(kept), K, t(slot), t(odd_slots), fine().extra, fine().shape, "
	    "type(np.ma.masked_array([1])).__name__]\n"
	    "out",
	    "[\"Lie cannot define shape in the sandbox: numpy's checks read it of a subclass, and "
	    "its C code uses the array's own\",[],\"S cannot define shape in the sandbox: numpy's "
	    "checks read it of a subclass, and its C code uses the array's own\",\"a class's "
	    "__slots__ are a str, or a tuple, list or dict of str, in the sandbox\",1,[3],"
	    "\"MaskedArray\"]");
	e2e_stop();
}

/* Arrays over memory their C code frees. A font's get_image() viewed the font's own buffer,
 * which its next draw freed (a writable array over freed memory); set_text() and get_xys()
 * answered arrays over a vector freed as they returned. scipy.signal's order_filter and
 * medfilt sorted an array of objects by pointers it held no reference to, and an item's __lt__
 * that emptied the array freed them mid-sort. The image is a copy, set_text answers None,
 * get_xys is refused, and the filters sort a private copy: the values are the host's (there,
 * without the __lt__ that empties the array, which crashes it too). */
Test(data, fonts_and_order_filters_hand_out_no_freed_memory)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from matplotlib import ft2font\n"
	    "from matplotlib.font_manager import findfont\n"
	    "from scipy import signal\n"
	    "font = ft2font.FT2Font(findfont('DejaVu Sans'))\n"
	    "font.set_size(12, 72)\n"
	    "answer = font.set_text('ab', 0.0)\n"
	    "font.draw_glyphs_to_bitmap()\n"
	    "img = font.get_image()\n"
	    "shape = img.shape\n"
	    "img[:] = 7\n"
	    "font.set_text('a' * 64, 0.0)\n"
	    "font.draw_glyphs_to_bitmap()\n"
	    "try:\n"
	    "    font.get_xys()\n"
	    "    xys = 'given'\n"
	    "except RuntimeError as e:\n"
	    "    xys = str(e)[:40]\n"
	    "class V:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def _o(self, o):\n"
	    "        if MUTATE:\n"
	    "            a[:] = None\n"
	    "        return o.v if isinstance(o, V) else o\n"
	    "    def __lt__(self, o): return self.v < self._o(o)\n"
	    "    def __gt__(self, o): return self.v > self._o(o)\n"
	    "    def __le__(self, o): return self.v <= self._o(o)\n"
	    "    def __ge__(self, o): return self.v >= self._o(o)\n"
	    "    def __eq__(self, o): return self.v == self._o(o)\n"
	    "    __hash__ = None\n"
	    "MUTATE = True\n"
	    "a = np.array([V(i) for i in (5, 1, 4, 2, 3, 9, 7)], dtype=object)\n"
	    "r = signal.order_filter(a, np.ones(3), 1)\n"
	    "a = np.array([V(i) for i in (5, 1, 4, 2, 3, 9, 7)], dtype=object)\n"
	    "m = signal.medfilt(a, 3)\n"
	    "[answer, img.shape == shape, bool((img == 7).all()), font.get_image().shape[1] > "
	    "shape[1], xys,\n"
	    " [x.v if isinstance(x, V) else x for x in r], [x.v if isinstance(x, V) else x for x "
	    "in m]]",
	    "[null,true,true,true,\"FT2Font.get_xys is not available in the \",[1,4,2,3,3,7,7],"
	    "[1,4,2,3,3,7,7]]");
	e2e_stop();
}

/* numpy checks an array made over a buffer, or given new strides, against its memory by sums
 * in npy_intp without overflow checks: strides of 2**63 wrapped them back into range, and an
 * element lay at any address (an object's bytes read and written through the array); a huge
 * shape with an offset wrapped the size check. Shapes and strides are read once, as plain ints,
 * and must keep numpy's sums far from the limits; arrays within their buffer are made as on the
 * host. */
Test(data, strides_and_offsets_keep_an_array_within_its_buffer)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "buf = bytearray(32)\n"
	    "other = b'SECRET: not in buf'\n"
	    "base = np.frombuffer(buf, np.uint8).ctypes.data\n"
	    "def wrap(d):\n"
	    "    return (-2**63, d - 2**63) if d >= 0 else (2**63 - 1, d + 2**63 + 1)\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'made'\n"
	    "    except ValueError as e:\n"
	    "        return str(e)[:30]\n"
	    "def setter(d):\n"
	    "    a = np.frombuffer(buf, np.uint8)[:4].reshape(2, 2)\n"
	    "    a.strides = wrap(d)\n"
	    "out = []\n"
	    "for d in (id(other) + 32 - base, 64, -64):\n"
	    "    out.append(attempt(lambda: np.ndarray((2, 2, 18), np.uint8, buffer=buf, "
	    "strides=wrap(d) + (1,))))\n"
	    "    out.append(attempt(lambda: setter(d)))\n"
	    "out.append(attempt(lambda: np.ndarray((2**63 - 64,), np.uint8, buffer=buf, "
	    "offset=64)))\n"
	    "out.append(attempt(lambda: np.ndarray((2**62,), np.uint64, buffer=buf)))\n"
	    "class I:\n"
	    "    n = 0\n"
	    "    def __index__(self):\n"
	    "        I.n += 1\n"
	    "        return 2 if I.n == 1 else 2**62\n"
	    "out.append(attempt(lambda: np.ndarray((I(),), np.uint8, buffer=buf, strides=(8,))))\n"
	    "# within the buffer, as on the host\n"
	    "a = np.ndarray((2, 3), np.uint8, buffer=bytearray(range(32)), offset=4, strides=(8, "
	    "-1))\n"
	    "b = np.arange(12, dtype=np.int16).reshape(3, 4)\n"
	    "b.strides = (2, 6)\n"
	    "c = np.ndarray((4,), np.int32, bytearray(16))\n"
	    "out + [a.tolist(), b.tolist(), c.shape, other.decode()]\n",
	    "[\"strides is incompatible with s\",\"strides is not compatible with\","
	    "\"strides is incompatible with s\",\"strides is not compatible with\","
	    "\"strides is incompatible with s\",\"strides is not compatible with\","
	    "\"buffer is too small for reques\",\"buffer is too small for reques\",\"made\","
	    "[[4,3,2],[12,11,10]],[[0,3,6,9],[1,4,7,10],[2,5,8,11]],[4],\"SECRET: not in buf\"]");
	/* New strides of a view that starts inside a buffer: numpy checked them up to the
	 * buffer's length past the view's start, so a view of a bytearray's last bytes reached
	 * another array's items (read, and written: V89f). Within the buffer, as on the host. */
	e2e_expect_result(
	    "import numpy as np\n"
	    "N, L = 1 << 16, 64\n"
	    "O = N - 2 * L\n"
	    "bufs, victims = [], []\n"
	    "for _ in range(24):\n"
	    "    bufs.append(bytearray(N))\n"
	    "    victims.append(np.full(N // 8, 0x4141414141414141, dtype=np.int64))\n"
	    "pair = None\n"
	    "for buf in bufs:\n"
	    "    a = np.frombuffer(buf, dtype=np.uint8)\n"
	    "    for victim in victims:\n"
	    "        D = victim.ctypes.data - a.ctypes.data\n"
	    "        if N <= D <= 2 * N - 3 * L:\n"
	    "            pair = a, victim, D\n"
	    "            break\n"
	    "    if pair:\n"
	    "        break\n"
	    "a, victim, D = pair or (np.frombuffer(bufs[0], np.uint8), victims[0], N + 2 * L)\n"
	    "c = a[O:O + 2 * L].reshape(2, L)\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'set'\n"
	    "    except ValueError as e:\n"
	    "        return str(e)\n"
	    "def past():\n"
	    "    c.strides = (D - O, 1)\n"
	    "    c[1][:24] = 0x42\n"
	    "d = np.frombuffer(bytearray(range(48)), np.uint8)[8:16].reshape(2, 4)\n"
	    "def one_past():\n"
	    "    d.strides = (37, 1)\n"
	    "r = [attempt(past), attempt(one_past)]\n"
	    "d.strides = (36, 1)\n"
	    "e = np.arange(6, dtype=np.int64)\n"
	    "e.strides = (0,)\n"
	    "r + [bool((victim == 0x4141414141414141).all()), d.tolist(), e.tolist()]\n",
	    "[\"strides is not compatible with available memory\","
	    "\"strides is not compatible with available memory\",true,"
	    "[[8,9,10,11],[44,45,46,47]],[0,0,0,0,0,0]]");
	e2e_stop();
}

/* COBYLA handed each constraint x as an array over the Fortran routine's work memory, freed
 * when it returned (kept by the constraint: read and written after, a list's items laid
 * there); np.repeat summed its counts unchecked (2**62 four times wrapped the total to 0 and the
 * copy wrote past an empty result). Constraints get a copy of x, and a total past any memory is
 * refused, counts given as floats too; ordinary uses answer as on the host. */
Test(data, callbacks_and_repeats_get_memory_of_their_own)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import optimize\n"
	    "kept = []\n"
	    "def con(x):\n"
	    "    kept.append(x)\n"
	    "    return 1 - x[0]\n"
	    "r = optimize.minimize(lambda x: float(((x - 2) ** 2).sum()), np.zeros(2), "
	    "method='COBYLA',\n"
	    "                      constraints=[{'type': 'ineq', 'fun': con}])\n"
	    "f = optimize.fmin_cobyla(lambda x: float(x @ x), [1.0, 1.0], [lambda x: "
	    "kept.append(x) or x[0] - 0.5],\n"
	    "                         rhoend=1e-6, disp=0)\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f().tolist()\n"
	    "    except ValueError as e:\n"
	    "        return type(e).__name__\n"
	    "a = np.arange(4, dtype=np.uint8)\n"
	    "m = np.arange(6).reshape(2, 3)\n"
	    "[len(kept) > 10, all(k.base is not None or k.flags.owndata for k in kept),\n"
	    " np.round(r.x, 3).tolist(), np.round(f, 3).tolist(),\n"
	    " attempt(lambda: np.repeat(a, [2**62] * 4)), attempt(lambda: a.repeat(2**62)),\n"
	    " attempt(lambda: np.repeat(a, [2.0**62] * 4)),\n"
	    " np.repeat(a, [1, 0, 2, 1]).tolist(), m.repeat(2, axis=1).tolist(), a.repeat([1.5, 1, "
	    "1, 1]).tolist()]\n",
	    "[true,true,[1.0,2.0],[0.5,0.0],\"ValueError\",\"ValueError\",\"ValueError\","
	    "[0,2,2,3],[[0,0,1,1,2,2],[3,3,4,4,5,5]],[0,1,2,3]]");
	e2e_stop();
}

/* numpy adds a structure's field offsets and sizes, and reads a type string's size, in C int
 * unchecked: a 16-byte type with a field 2 GiB long (its view reached the memory past any
 * array: all memory), negative sizes from 'V2147483648' or a list of large fields. Every way
 * the code gives numpy a new data type (np.dtype, dtype= of a function, astype, view, a
 * comma string, a dict of fields, an object's dtype attribute read twice, op_dtypes, copy's
 * setstate) makes a whole type or is refused; ordinary types are made as on the host. Second
 * round: a str subclass or numpy's bytes scalar, a function's or a partial's dtype attribute,
 * an offset or a shape whose __index__ answers otherwise the second time, a string first tried
 * at the recursion limit, an offset of 2**62 with a size of 2**62 (numpy's sum wrapped). */
Test(data, every_data_type_made_lies_within_its_size)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, warnings\n"
	    "warnings.simplefilter('ignore')\n"
	    "bad = {'names': ['a', 'b'], 'formats': ['u1', 'V2147483647'], 'offsets': [0, 1], "
	    "'itemsize': 16}\n"
	    "class X:\n"
	    "    dtype = bad\n"
	    "class Y:\n"
	    "    n = 0\n"
	    "    @property\n"
	    "    def dtype(self):\n"
	    "        Y.n += 1\n"
	    "        return np.dtype('u1') if Y.n == 1 else np.dtype('V2147483647')\n"
	    "import functools\n"
	    "wrap = 'V2147483647,V2147483647,V18'\n"
	    "class S(str):\n"
	    "    pass\n"
	    "def f():\n"
	    "    pass\n"
	    "f.dtype = wrap\n"
	    "part = functools.partial(int)\n"
	    "part.dtype = wrap\n"
	    "class Flip:\n"
	    "    n = 0\n"
	    "    def __index__(self):\n"
	    "        Flip.n += 1\n"
	    "        if Flip.n == 1:\n"
	    "            raise TypeError('first read')\n"
	    "        return 1\n"
	    "def deep_then(spec):\n"
	    "    def deep():\n"
	    "        try:\n"
	    "            deep()\n"
	    "        except RecursionError:\n"
	    "            try:\n"
	    "                np.zeros(1, spec)\n"
	    "            except RecursionError:\n"
	    "                pass\n"
	    "    deep()\n"
	    "    return np.zeros(1, spec)\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        d = r if isinstance(r, np.dtype) else r.dtype\n"
	    "        return 'made %d' % d.itemsize\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        return str(e)[:22]\n"
	    "one = np.zeros(1, np.uint8)\n"
	    "cases = [\n"
	    "    lambda: np.dtype(bad),\n"
	    "    lambda: np.zeros(1, bad),\n"
	    "    lambda: np.zeros(1, dtype=bad),\n"
	    "    lambda: one.astype(bad),\n"
	    "    lambda: np.zeros(16, np.uint8).view(bad),\n"
	    "    lambda: np.dtype([('a', 'V1073741824'), ('b', 'V1073741824')]),\n"
	    "    lambda: np.zeros(1, [('a', 'V1073741824'), ('b', 'V1073741824')]),\n"
	    "    lambda: np.dtype('V2147483648'),\n"
	    "    lambda: np.empty(0, 'S2147483648'),\n"
	    "    lambda: np.dtype({'a': ('u1', 0), 'b': ('V2147483647', 1)}),\n"
	    "    lambda: np.array([], dtype={'names': ['a', 'b'], 'formats': ['u1', 'u8'], "
	    "'offsets': [0, 2**31 - 2], 'itemsize': 16}),\n"
	    "    lambda: np.zeros(1, X()),\n"
	    "    lambda: np.zeros(1, {'names': ['a', 'b'], 'formats': ['u1', Y()], 'offsets': [0, "
	    "1], 'itemsize': 16}),\n"
	    "    lambda: np.frombuffer(bytearray(16), 'u1,V2147483647'),\n"
	    "    lambda: np.nditer([one], op_dtypes=[bad], flags=['buffered']),\n"
	    "    lambda: np.zeros(1, S(wrap)),\n"
	    "    lambda: np.zeros(1, np.array([wrap.encode()])[0]),\n"
	    "    lambda: np.zeros(1, f),\n"
	    "    lambda: np.zeros(1, part),\n"
	    "    lambda: np.zeros(1, {'names': ['a', 'b'], 'formats': ['u1', 'V2147483647'], "
	    "'offsets': [0, Flip()], 'itemsize': 16}),\n"
	    "    lambda: np.zeros(1, [('a', 'u1', Flip())]),\n"
	    "    lambda: deep_then(wrap),\n"
	    "    lambda: np.ndarray((2**62,), np.uint8, buffer=bytearray(32), offset=2**62),\n"
	    "]\n"
	    "import copy\n"
	    "class Z:\n"
	    "    def __reduce_ex__(self, protocol):\n"
	    "        return (np.dtype, ('V16', False, True),\n"
	    "                (3, '|', None, ('a', 'b'), {'a': (np.dtype('u1'), 0), 'b': "
	    "(np.dtype('V2147483647'), 1)}, 16, 1, 16))\n"
	    "def setstate():\n"
	    "    try:\n"
	    "        d = copy.copy(Z())\n"
	    "        return ['set', d.itemsize, d.fields['b'][0].itemsize]\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        return str(e)[:22]\n"
	    "out = [attempt(c) for c in cases] + [setstate()]\n"
	    "# ordinary types as on the host\n"
	    "ok = np.zeros(2, [('x', 'f8'), ('y', 'i4', (2,))])\n"
	    "ok['x'] = [1.5, 2]\n"
	    "rec = np.rec.fromarrays([[1, 2], ['a', 'b']], names='n,s')\n"
	    "s = np.array(['2024-01-05', 'x12'])\n"
	    "out + [ok.dtype.itemsize, ok['x'].tolist(), rec.n.tolist(), "
	    "np.dtype('U12').itemsize,\n"
	    "       np.array([1, 2], dtype='float32').dtype.str, s.tolist(), np.dtype({'names': "
	    "['a'], 'formats': ['<i4'], 'offsets': [4], 'itemsize': 8}).itemsize,\n"
	    "       np.zeros(3, dtype='datetime64[D]').dtype.str]\n",
	    "[\"this data type is not \",\"this data type is not \",\"this data type is not "
	    "\",\"thi"
	    "s data type is not \",\"this data type is not \",\"this data type is not \",\"this dat"
	    "a type is not \",\"this data type is not \",\"this data type is not \",\"this data typ"
	    "e is not \",\"this data type is not \",\"Cannot interpret '<__m\",\"a data type is mad"
	    "e he\",\"this data type is not \",\"this data type is not \",\"this data type is not "
	    "\""
	    ",\"this data type is not \",\"Cannot interpret '<fun\",\"Cannot interpret 'func\",\"a "
	    "d"
	    "ata type is made he\",\"a data type is made he\",\"this data type is not \",\"offset i"
	    "s larger than \",\"copy sets the state of\",16,[1.5,2.0],[1,2],48,\"<f4\",[\"2024-01-0"
	    "5\",\"x12\"],8,\"<M8[D]\"]");
	e2e_stop();
}

/* The interpolative decomposition's Fortran routines handed a LinearOperator's matvec and
 * rmatvec x as an array over their work memory (kept: read and written after it was freed), and
 * f2py, unable to count a callback's arguments in a worker, called them with none or eight:
 * interp_decomp, estimate_rank and estimate_spectral_norm of an operator failed. Each gets a
 * copy of x alone, and answers as on the host. */
Test(data, an_operator_s_products_get_vectors_of_their_own)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "import scipy.linalg.interpolative as sli\n"
	                  "from scipy.sparse.linalg import aslinearoperator, LinearOperator\n"
	                  "rng = np.random.default_rng(0)\n"
	                  "A = rng.normal(size=(30, 5)) @ rng.normal(size=(5, 20))\n"
	                  "L = aslinearoperator(A)\n"
	                  "kept = []\n"
	                  "class K(LinearOperator):\n"
	                  "    def __init__(self):\n"
	                  "        super().__init__(A.dtype, A.shape)\n"
	                  "    def _matvec(self, x):\n"
	                  "        return A @ x\n"
	                  "    def rmatvec(self, x, *rest):\n"
	                  "        kept.append(x)\n"
	                  "        return A.T @ x\n"
	                  "k, idx, proj = sli.interp_decomp(L, 1e-8)\n"
	                  "k2 = sli.estimate_rank(K(), 1e-8)\n"
	                  "n = sli.estimate_spectral_norm(L)\n"
	                  "[k, k2, round(n / np.linalg.norm(A, 2), 3), len(kept) > 0, all(x.base "
	                  "is not None or x.flags.owndata for x in kept)]\n",
	                  "[5,6,1.0,true,true]");
	e2e_stop();
}

/* matplotlib asked ImageMagick for its version (a pipe and a process) when animation's writers
 * were listed: the sandbox ended the call. No program is found, as on a machine without them;
 * the in-process writers stay. */
Test(data, matplotlib_finds_no_program_to_run)
{
	start_data(NULL);
	e2e_expect_result(
	    "import matplotlib.animation as animation\n"
	    "[animation.writers.list(), animation.writers.is_available('imagemagick'),\n"
	    " animation.writers.is_available('ffmpeg')]",
	    "[[\"pillow\",\"html\"],false,false]");
	e2e_stop();
}

/* A number as distance_transform_cdt's metric became a structure of no dimensions that the C
 * code read as one of the input's: the worker crashed (the host too). It is refused as a
 * structure of another rank; the named metrics answer as on the host. */
Test(data, a_distance_transform_s_metric_has_the_input_s_rank)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "from scipy import ndimage\n"
	                  "a = np.ones((5, 5))\n"
	                  "a[2, 2] = 0\n"
	                  "try:\n"
	                  "    ndimage.distance_transform_cdt(np.ones(10), 3)\n"
	                  "    got = 'made'\n"
	                  "except RuntimeError as e:\n"
	                  "    got = str(e)\n"
	                  "[got, ndimage.distance_transform_cdt(a).tolist()[0],\n"
	                  " int(ndimage.distance_transform_cdt(a, 'taxicab').max())]",
	                  "[\"structure and input must have the same rank\",[2,2,2,2,2],4]");
	e2e_stop();
}

/* pandas' JSON reader with numpy=True decoded '[[],[1]]' past the empty row's one-byte block
 * and freed it twice: two live arrays over one block (any memory). The option (deprecated by
 * pandas) is refused, by its keyword or its place; the plain reader reads the same JSON. */
Test(data, the_numpy_json_decoder_is_refused)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, warnings\n"
	    "import pandas as pd\n"
	    "warnings.simplefilter('ignore')\n"
	    "text = '{\"a\": {\"0\": 1, \"1\": 2}, \"b\": {\"0\": 3, \"1\": 4}}'\n"
	    "out = []\n"
	    "for f in (lambda: pd.io.json.loads('[[],[1]]', numpy=True),\n"
	    "          lambda: pd.io.json.loads('[1]', False, True),\n"
	    "          lambda: pd.read_json(io.StringIO(text), numpy=True)):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('decoded')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:40])\n"
	    "out + [pd.read_json(io.StringIO(text)).to_dict('list'), pd.io.json.loads('[[],[1]]')]",
	    "[\"numpy=True is not available in the sandb\",\"numpy=True is not available in the "
	    "sandb\",\"numpy=True is not available in the sandb\",{\"a\":[1,2],\"b\":[3,4]},"
	    "[[],[1]]]");
	e2e_stop();
}

/* sklearn's compiled helpers trust their inputs (its Python code checks them first), and they
 * are public: cholesky_delete with a row before the matrix wrote before its memory (with a
 * strided view, any memory: the real builtins); the sparse helpers took any object with
 * index pointers, or a matrix whose pointers ran past its values (SIGSEGV). Each checks its
 * inputs first now, under every name it has; sklearn's own uses still give their results
 * (values from python3.11 with Debian 12's packages). */
Test(data, compiled_helpers_check_their_inputs)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from numpy.lib.stride_tricks import as_strided\n"
	    "from sklearn.utils.arrayfuncs import cholesky_delete\n"
	    "from sklearn.utils import sparsefuncs_fast as sf, sparsefuncs\n"
	    "from sklearn.preprocessing import normalize\n"
	    "from sklearn.linear_model import LassoLars\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except (TypeError, ValueError, IndexError) as e:\n"
	    "        return type(e).__name__\n"
	    "guard = np.full(64, 7.0)\n"
	    "src = guard[32:34]\n"
	    "class X:\n"
	    "    pass\n"
	    "x = X()\n"
	    "x.data = np.ones(2); x.dtype = x.data.dtype; x.format = 'csr'; x.shape = (1, 2)\n"
	    "x.indices = np.array([0, 1], np.int32); x.indptr = np.array([0, 10**8], np.int32)\n"
	    "bad = sp.csr_matrix((np.ones(2), np.array([0, 1], np.int32),\n"
	    "                     np.array([0, 10**8, 0, 2], np.int32)), shape=(3, 2))\n"
	    "X = sp.csr_matrix(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]]))\n"
	    "out = np.zeros((2, 3))\n"
	    "tries = [t(lambda: cholesky_delete(as_strided(src, shape=(1, 1), strides=(-256, 8)), "
	    "-1)),\n"
	    "         t(lambda: cholesky_delete(np.ones((4, 4)), -100000000)),\n"
	    "         t(lambda: sf.inplace_csr_row_normalize_l2(x)), t(lambda: "
	    "sf.csr_row_norms(bad)),\n"
	    "         t(lambda: sf.assign_rows_csr(X, np.array([5]), np.array([0]), out)),\n"
	    "         t(lambda: sf.csr_mean_variance_axis0(X, weights=np.ones(1)))]\n"
	    "L = np.tril(np.arange(1.0, 17.0).reshape(4, 4))\n"
	    "cholesky_delete(L, 1)\n"
	    "rng = np.random.RandomState(0)\n"
	    "A = rng.randn(40, 10)\n"
	    "y = A[:, 0] * 3 + A[:, 3] - 2 * A[:, 7] + 0.1 * rng.randn(40)\n"
	    "f = lambda v, d=3: [f'{x:.{d}f}' for x in np.ravel(v)]\n"
	    "[tries, bool((guard == 7.0).all()), f(L[:3, :3]), f(normalize(X).toarray(), 1),\n"
	    " sf.csr_row_norms(X).tolist(), [v.tolist() for v in sparsefuncs.mean_variance_axis(X, "
	    "0)],\n"
	    " f(LassoLars(alpha=0.01).fit(A, y).coef_[:4], 2)]",
	    "[[\"ValueError\",\"IndexError\",\"TypeError\",\"ValueError\",\"IndexError\","
	    "\"ValueError\"],"
	    "true,[\"1.000\",\"0.000\",\"0.000\",\"9.000\",\"14.866\",\"0.000\",\"13.000\",\"20."
	    "517\","
	    "\"16.002\"],[\"0.6\",\"0.8\",\"0.0\",\"0.0\",\"0.0\",\"1.0\"],[25.0,4.0],"
	    "[[1.5,2.0,1.0],[2.25,4.0,1.0]],[\"2.98\",\"0.00\",\"0.00\",\"0.96\"]]");
	e2e_stop();
}

/* scipy's LAPACK wrappers hand pivots to Fortran as given: dgetrs under lu_solve with a row
 * past the matrix swapped any 8 bytes with it (the real builtins followed). The pivots are
 * checked, and the memory next to the matrix is unchanged; scipy.linalg's own uses of those
 * wrappers (lu_solve, solve with a symmetric matrix, banded solves, ldl, lstsq) still solve. */
Test(data, lapack_wrappers_check_their_rows)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.linalg as sl\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except ValueError as e:\n"
	    "        return 'refused' if 'past' in str(e) else str(e)\n"
	    "big = np.arange(64, dtype=np.float64)\n"
	    "tries = [t(lambda: sl.lu_solve((np.ones((1, 1)), np.array([5], np.int32)), "
	    "big[10:11],\n"
	    "                               overwrite_b=True, check_finite=False)),\n"
	    "         t(lambda: sl.lu_solve((np.ones((1, 1)), np.array([-3], np.int32)), "
	    "big[10:11],\n"
	    "                               overwrite_b=True, check_finite=False)),\n"
	    "         t(lambda: sl.lu_solve((np.eye(3), np.array([0, 1, 9])), np.ones(3)))]\n"
	    "rng = np.random.default_rng(0)\n"
	    "A = rng.normal(size=(5, 5))\n"
	    "b = rng.normal(size=5)\n"
	    "S = A + A.T\n"
	    "x = sl.lu_solve(sl.lu_factor(A), b)\n"
	    "ab = np.zeros((3, 5))\n"
	    "ab[1] = 4\n"
	    "ab[0, 1:] = 1\n"
	    "ab[2, :4] = 1\n"
	    "[tries, bool((big == np.arange(64.0)).all()), bool(np.allclose(A @ x, b)),\n"
	    " bool(np.allclose(sl.solve(S, b, assume_a='sym'), np.linalg.solve(S, b))),\n"
	    " bool(np.allclose(sl.lstsq(A, b)[0], x)), sl.ldl(S)[0].shape,\n"
	    " [f'{v:.3f}' for v in sl.solve_banded((1, 1), ab, np.ones(5))]]",
	    "[[\"refused\",\"refused\",\"refused\"],true,true,true,true,[5,5],"
	    "[\"0.212\",\"0.154\",\"0.173\",\"0.154\",\"0.212\"]]");
	e2e_stop();
}

/* scipy.signal's C filters took sizes as C ints past scipy's own checks: medfilt2d's two odd
 * window sizes whose product wraps to 1 in 32 bits (a one-item window buffer, the image copied
 * past it; negative sizes passed too), remez's negative grid_density (its work arrays laid out
 * before their buffer, the code's band edge and weight written there: another array's items
 * changed). Sizes the buffers hold are taken; ordinary filters and designs answer as before. */
Test(data, signal_filters_get_sizes_their_buffers_hold)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import signal\n"
	    "out = []\n"
	    "img = np.arange(49.0).reshape(7, 7)\n"
	    "out.append([float(signal.medfilt2d(img, 3).sum()), float(signal.medfilt2d(img, (3, "
	    "5)).sum())])\n"
	    "for ks in [(641, 6700417), (-1, -1)]:\n"
	    "    try:\n"
	    "        signal.medfilt2d(np.ones((4, 4)), ks)\n"
	    "        out.append('filtered')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:37])\n"
	    "V = [np.full(56, 1.5) for _ in range(3000)]\n"
	    "for i in range(2999, 2799, -2):\n"
	    "    V[i] = None\n"
	    "try:\n"
	    "    signal.remez(16, [0.123, 0.2, 0.3, 0.5], [1, 0], weight=[7777.0, 1.0], "
	    "grid_density=-1)\n"
	    "    out.append('designed')\n"
	    "except ValueError as e:\n"
	    "    out.append(str(e)[:37])\n"
	    "out.append(sum(bool((v != 1.5).any()) for v in V if v is not None))\n"
	    "h = signal.remez(31, [0, 0.1, 0.2, 0.5], [1, 0])\n"
	    "out.append([len(h), round(float(h.sum()), 6)])\n"
	    "out",
	    "[[980.0,954.0],\"medfilt2d: kernel_size must be odd po\","
	    "\"medfilt2d: kernel_size must be odd po\",\"remez: numtaps, maxiter and grid_dens\",0,"
	    "[31,0.99848]]");
	e2e_stop();
}

/* scipy.signal read an axis argument twice: through __index__ to check zi's shape or size an
 * output, through its own % to choose the axis the compiled code walks. An object answering 1
 * to one and 0 to the other had sosfilt write past zi (another array's items changed) and
 * upfirdn read past x; UNU.RAN's qrvs read as many draws as it asked an engine of the code's
 * for, past the fewer it answered. The axis is the int it converts to, once; the engine's
 * answer is checked; both answer as the plain int and scipy's own engine do. */
Test(data, signal_axes_and_qmc_draws_are_read_once_and_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import signal\n"
	    "from scipy.stats import qmc, sampling\n"
	    "class Axis:\n"
	    "    def __init__(self, index, mod):\n"
	    "        self.index, self.mod = index, mod\n"
	    "    def __index__(self):\n"
	    "        return self.index\n"
	    "    def __mod__(self, n):\n"
	    "        return self.mod\n"
	    "out = []\n"
	    "sos = signal.butter(2, 0.2, output='sos')\n"
	    "x = np.linspace(0, 1, 50).reshape(1, 50)\n"
	    "zi = np.zeros((sos.shape[0], 1, 2))\n"
	    "y1, z1 = signal.sosfilt(sos, x, axis=Axis(1, 0), zi=zi)\n"
	    "y2, z2 = signal.sosfilt(sos, x, axis=1, zi=zi)\n"
	    "out.append([y1.shape, bool(np.array_equal(y1, y2)), bool(np.array_equal(z1, z2))])\n"
	    "h = np.array([1.0, 0.0])\n"
	    "u1 = signal.upfirdn(h, np.full((1, 40), 0.5), axis=Axis(0, 1))\n"
	    "u2 = signal.upfirdn(h, np.full((1, 40), 0.5), axis=0)\n"
	    "out.append([u1.shape, bool(np.array_equal(u1, u2))])\n"
	    "class Unif:\n"
	    "    def pdf(self, x):\n"
	    "        return 1.0\n"
	    "    def cdf(self, x):\n"
	    "        return min(max(x, 0.0), 1.0)\n"
	    "    def support(self):\n"
	    "        return (0.0, 1.0)\n"
	    "class Short(qmc.QMCEngine):\n"
	    "    def __init__(self):\n"
	    "        super().__init__(d=1)\n"
	    "    def _random(self, n=1, *, workers=1):\n"
	    "        return np.full((max(n - 600, 1), 1), 0.5)\n"
	    "gen = sampling.NumericalInverseHermite(Unif(), order=1)\n"
	    "try:\n"
	    "    gen.qrvs(size=1000, qmc_engine=Short())\n"
	    "    out.append('drawn')\n"
	    "except ValueError as e:\n"
	    "    out.append(str(e)[:28])\n"
	    "q = gen.qrvs(size=64, qmc_engine=qmc.Sobol(d=1, seed=1))\n"
	    "out.append([q.shape, bool(((q >= 0) & (q <= 1)).all())])\n"
	    "out",
	    "[[[1,50],true,true],[[2,40],true],\"the QMC engine answered (400\",[[64],true]]");
	e2e_stop();
}

/* The interpolative decomposition's reconstructions index columns by the indices they are
 * given, unchecked: indices past the matrix read the memory around it (another array came
 * back) or, rebuilding the interpolation matrix, wrote there, and a rank past the indices read
 * past them (the worker crashed on the start build). Each is refused with what it needs; a
 * real decomposition rebuilds its matrix as before, and the array beside them is untouched. */
Test(data, interpolative_reconstructions_take_indices_within_their_columns)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.linalg.interpolative as sli\n"
	    "rng = np.random.default_rng(0)\n"
	    "A = rng.normal(size=(20, 8)) @ rng.normal(size=(8, 30))\n"
	    "k, idx, proj = sli.interp_decomp(A, 1e-8)\n"
	    "B = sli.reconstruct_skel_matrix(A, k, idx)\n"
	    "P = sli.reconstruct_interp_matrix(idx, proj)\n"
	    "out = [k, bool(np.allclose(sli.reconstruct_matrix_from_id(B, idx, proj), A)),\n"
	    "       bool(np.allclose(B @ P, A))]\n"
	    "U, S, V = sli.id_to_svd(B, idx, proj.copy())\n"
	    "out.append(bool(np.allclose((U * S) @ V.conj().T, A)))\n"
	    "C = A.astype(complex) * (1 + 1j)\n"
	    "idx2, proj2 = sli.interp_decomp(C, 8)\n"
	    "B2 = sli.reconstruct_skel_matrix(C, 8, idx2)\n"
	    "out.append(bool(np.allclose(sli.reconstruct_matrix_from_id(B2, idx2, proj2), C)))\n"
	    "N = 32768\n"
	    "X = np.arange(N, dtype=float).reshape(1, N) + 0.5\n"
	    "victim = np.tile([31337.25, 31337.5, 31337.75, 424242.0], N // 4)\n"
	    "for f in (lambda: sli.reconstruct_skel_matrix(X, 16, np.arange(-8, 8)),\n"
	    "          lambda: sli.reconstruct_skel_matrix(X, 8, np.arange(N, N + 8)),\n"
	    "          lambda: sli.reconstruct_skel_matrix(X, 20, np.arange(8)),\n"
	    "          lambda: sli.reconstruct_interp_matrix(np.array([0, 1, 9000], "
	    "dtype=np.int32),\n"
	    "                                                np.ones((1, 2))),\n"
	    "          lambda: sli.reconstruct_interp_matrix(idx, proj[:, :-1]),\n"
	    "          lambda: sli.reconstruct_matrix_from_id(B, idx + 5000, proj),\n"
	    "          lambda: sli.id_to_svd(B[:, :3], idx, proj)):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('ran')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:26])\n"
	    "out + [float(victim.sum())]",
	    "[8,true,true,true,true,\"the rank must be at most t\",\"the rank must be at most t\","
	    "\"the rank must be at most t\",\"column indices must be the\","
	    "\"interpolation coefficients\",\"column indices must be the\","
	    "\"interpolation coefficients\",4245540864.0]");
	e2e_stop();
}

/* A KD or ball tree took a weight array of any length, and kernel_density read a weight for
 * every point (the words past a shorter array came back as densities); a subclass whose
 * __init__ built nothing kept one-item placeholder arrays its queries read as a tree (any word
 * read back; KDTree.__new__(KDTree) made the same); a Tree made by its constructor has no
 * nodes, which predict read (SIGSEGV); and a dual-tree query, which builds its own tree, was
 * refused as a build inside a query. Now: one weight a point, no query of a tree not built,
 * no nodeless tree's methods, dual-tree queries as on the host (the expected values are the
 * host's) but for a subclass (sklearn builds the query points' tree as self.__class__(X): a
 * subclass's __init__ built it on more points than the query's buffers hold, SIGSEGV). */
Test(data, kd_and_ball_trees_take_what_their_queries_read)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.neighbors import KDTree, BallTree, KernelDensity\n"
	    "from sklearn.tree import DecisionTreeRegressor\n"
	    "rng = np.random.default_rng(0)\n"
	    "X = rng.random((60, 2))\n"
	    "w = rng.random(60) + 0.5\n"
	    "out = [round(float(KernelDensity(bandwidth=0.3).fit(X, sample_weight=w)\n"
	    "                   .score_samples(X[:3]).sum()), 6)]\n"
	    "for T in (KDTree, BallTree):\n"
	    "    t = T(X, leaf_size=5)\n"
	    "    i1 = t.query(X[:5], k=3)[1]\n"
	    "    i2 = t.query(X[:5], 3, True, True)[1]\n"
	    "    out.append(bool((i1 == i2).all()))\n"
	    "    out.append(t.two_point_correlation(X[:5], [0.1, 0.5], dualtree=True).tolist())\n"
	    "    out.append(round(float(T(X, sample_weight=w).kernel_density(X[:2], h=0.3).sum()), "
	    "6))\n"
	    "    try:\n"
	    "        T(X, sample_weight=w[:50]).kernel_density(X[55:], h=0.3)\n"
	    "        out.append('read past the weights')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e))\n"
	    "    class Unbuilt(T):\n"
	    "        def __init__(self):\n"
	    "            pass\n"
	    "    for u in (Unbuilt(), T.__new__(T)):\n"
	    "        try:\n"
	    "            out.append(u.query_radius(np.zeros((1, 2)), r=1e300))\n"
	    "        except ValueError as e:\n"
	    "            out.append(str(e)[:21])\n"
	    "    class More(T):\n"
	    "        def __init__(self, Y, **kw):\n"
	    "            super().__init__(np.vstack([Y] * 4), **kw)\n"
	    "    try:\n"
	    "        More(X).query(X[:5], k=1, dualtree=True)\n"
	    "        out.append('built more')\n"
	    "    except RuntimeError as e:\n"
	    "        out.append(str(e)[:21])\n"
	    "Tree = type(DecisionTreeRegressor().fit([[0.0], [1.0]], [0.0, 1.0]).tree_)\n"
	    "t = Tree(1, np.array([1], dtype=np.intp), 1)\n"
	    "for f in (lambda: t.predict(np.zeros((1, 1), dtype=np.float32)),\n"
	    "          lambda: t.compute_feature_importances()):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('ran')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:21])\n"
	    "out",
	    "[-2.661391,true,[12,132],52.884708,"
	    "\"sample_weight must have one weight for each point of the data (60), not shape "
	    "(50,)\","
	    "\"the tree is not built\",\"the tree is not built\",\"a KD or ball tree is \","
	    "true,[12,132],52.884708,"
	    "\"sample_weight must have one weight for each point of the data (60), not shape "
	    "(50,)\","
	    "\"the tree is not built\",\"the tree is not built\",\"a KD or ball tree is \","
	    "\"the tree has no nodes\","
	    "\"the tree has no nodes\"]");
	e2e_stop();
}

/* Three routines that trusted a size or an option of the code's: qhull's option to scale one
 * coordinate with both bounds 0 drops it, and scipy read a vertex qhull's facets no longer
 * have (SIGSEGV); cython_special's spheroidal characteristic values run the same Fortran as
 * scipy.special's, past the bound that one has (SIGSEGV); and interp_decomp with a rank past
 * the matrix wrote past the Fortran's work arrays (SIGSEGV; svd checks its rank itself). Each
 * is refused saying why; what is within works as on the host. */
Test(data, qhull_scaling_spheroidal_values_and_ranks_stay_within_their_work)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.spatial import ConvexHull, Delaunay\n"
	    "from scipy.special import cython_special as cs\n"
	    "import scipy.linalg.interpolative as sli\n"
	    "P = np.random.default_rng(0).random((30, 3))\n"
	    "A = np.random.default_rng(0).random((6, 4))\n"
	    "out = [ConvexHull(P, qhull_options='QbB').simplices.shape[1],\n"
	    "       Delaunay(P[:, :2], qhull_options='Qbb Qc Qz').simplices.shape[1],\n"
	    "       int(cs.pro_cv(0.0, 0.0, 1.0) * 1000), len(sli.interp_decomp(A, 3, "
	    "rand=False)[0])]\n"
	    "for f in (lambda: ConvexHull(P, qhull_options='Qb0:0B0:0'),\n"
	    "          lambda: Delaunay(P[:, :2], qhull_options='Qb0:0 QB0:0'),\n"
	    "          lambda: cs.pro_cv(0.0, 0.0, 400.0),\n"
	    "          lambda: cs.obl_cv(0.0, 0.0, 400.0),\n"
	    "          lambda: sli.interp_decomp(A, 40, rand=False),\n"
	    "          lambda: sli.svd(A, 40, rand=False)):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('ran')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:24])\n"
	    "out",
	    "[3,3,319,4,\"qhull option 'Qb0:0B0:0'\",\"qhull option 'Qb0:0': sc\","
	    "\"pro_cv: scipy computes i\",\"obl_cv: scipy computes i\",\"the rank must be from 1 "
	    "\","
	    "\"Approximation rank 40 ex\"]");
	e2e_stop();
}

/* squareform's compiled copies move items by their size: an object array's items went across
 * as pointers without their references, and once the vector was freed the matrix held freed
 * memory, which new floats took (their values came back through M). Objects are copied by
 * numpy's indexing now: M keeps its own references, and its values stay after the vector and
 * a spray of new floats. Numbers go through the compiled copy as before. */
Test(data, squareform_copies_objects_with_their_references)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.spatial.distance import squareform, pdist\n"
	    "o = np.empty(3, dtype=object)\n"
	    "for i in range(3):\n"
	    "    o[i] = float(i) + 0.5\n"
	    "M = squareform(o, checks=False)\n"
	    "del o\n"
	    "spray = [float(s) for s in ('111.111', '222.222', '333.333')] * 9\n"
	    "v = np.arange(6.0)\n"
	    "[M.tolist(), squareform(M, checks=False).tolist(),\n"
	    " squareform(v).tolist(), squareform(squareform(v)).tolist(),\n"
	    " squareform(pdist(np.eye(3))).round(3).tolist()]",
	    "[[[0,0.5,1.5],[0.5,0,2.5],[1.5,2.5,0]],[0.5,1.5,2.5],"
	    "[[0.0,0.0,1.0,2.0],[0.0,0.0,3.0,4.0],[1.0,3.0,0.0,5.0],[2.0,4.0,5.0,0.0]],"
	    "[0.0,1.0,2.0,3.0,4.0,5.0],"
	    "[[0.0,1.414,1.414],[1.414,0.0,1.414],[1.414,1.414,0.0]]]");
	e2e_stop();
}

/* Rotation.from_euler checked its axis sequence by len() and a pattern, then used seq.lower():
 * a str subclass's own answered four axes for three angles, and the compiled composition read
 * the value beside them (1.2345 came back in the rotation). pandas' nsmallest checked n by its
 * comparisons and handed kth_smallest n - 1 by the object's own arithmetic: memory beside the
 * copy was read (a time-limit loop or SIGSEGV for other numbers). The sequence is the str of
 * its characters, k is within the array; ordinary calls answer as before. */
Test(data, euler_sequences_and_kth_smallest_take_what_was_checked)
{
	start_data(NULL);
	e2e_expect_result("import numbers\n"
	                  "import numpy as np\n"
	                  "import pandas as pd\n"
	                  "from scipy.spatial.transform import Rotation as R\n"
	                  "class S(str):\n"
	                  "    def lower(self):\n"
	                  "        return 'xyzx'\n"
	                  "big = np.zeros((2, 3))\n"
	                  "big[1, 0] = 1.2345\n"
	                  "q = R.from_euler(S('xyz'), big[0:1]).as_quat()[0]\n"
	                  "out = [[round(float(v), 6) for v in q]]\n"
	                  "r = R.from_euler('xyz', [0.1, 0.2, 0.3])\n"
	                  "out.append([round(float(v), 6) for v in r.as_euler(S('xyz'))])\n"
	                  "class N(numbers.Number):\n"
	                  "    def __init__(self, v):\n"
	                  "        self.v = v\n"
	                  "    def __le__(self, o):\n"
	                  "        return False\n"
	                  "    __lt__ = __ge__ = __gt__ = __eq__ = __le__\n"
	                  "    def __hash__(self):\n"
	                  "        return 1\n"
	                  "    def __sub__(self, o):\n"
	                  "        return self.v\n"
	                  "    def __index__(self):\n"
	                  "        return self.v\n"
	                  "    __int__ = __index__\n"
	                  "s = pd.Series(np.arange(1000.0))\n"
	                  "try:\n"
	                  "    s.nsmallest(N(5000), keep='all')\n"
	                  "    out.append('selected')\n"
	                  "except (ValueError, TypeError) as e:\n"
	                  "    out.append(str(e)[:34])\n"
	                  "out + [s.nsmallest(3).tolist(), s.nlargest(2).tolist()]",
	                  "[[0.0,0.0,0.0,1.0],[0.1,0.2,0.3],\"kth_smallest: k must be within the\","
	                  "[0.0,1.0,2.0],[999.0,998.0]]");
	e2e_stop();
}

/* csgraph's maximum_flow checked the source with the object's own comparisons (0 <= source <
 * n), then its kernel took the object's __index__, another number: levels[20] = 0 in a graph
 * of 7 vertices, another array's item. scipy.special's spheroidal functions ran Fortran with
 * fixed work arrays past their end at c = 400, the Mathieu functions an order past 2**31 as
 * a negative C int (both SIGSEGV). The number converts once; the functions take what their
 * arrays hold, and answer as on the host within it. */
Test(data, csgraph_and_special_functions_take_what_their_work_holds)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import special as s\n"
	    "from scipy.sparse import csr_matrix\n"
	    "from scipy.sparse.csgraph import maximum_flow\n"
	    "class Liar:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def __index__(self):\n"
	    "        return self.v\n"
	    "    __int__ = __index__\n"
	    "    def __ge__(self, o):\n"
	    "        return 3 >= o\n"
	    "    def __le__(self, o):\n"
	    "        return 3 <= o\n"
	    "    def __lt__(self, o):\n"
	    "        return 3 < o\n"
	    "    def __gt__(self, o):\n"
	    "        return 3 > o\n"
	    "    def __eq__(self, o):\n"
	    "        return 3 == o\n"
	    "    def __ne__(self, o):\n"
	    "        return 3 != o\n"
	    "    __hash__ = object.__hash__\n"
	    "n = 7\n"
	    "g = csr_matrix((np.array([5, 5], np.int32), (np.array([0, 1]), np.array([1, 2]))), "
	    "shape=(n, n))\n"
	    "out = []\n"
	    "V = [np.full(n, 0x11111111, np.int32) for _ in range(4000)]\n"
	    "for i in range(3999, 3960, -2):\n"
	    "    V[i] = None\n"
	    "for k in range(8):\n"
	    "    try:\n"
	    "        maximum_flow(g, Liar(20), 6)\n"
	    "        out.append('flowed')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:22])\n"
	    "out = sorted(set(out))\n"
	    "out.append(sum(bool((v != 0x11111111).any()) for v in V if v is not None))\n"
	    "out.append(maximum_flow(g, 0, 2).flow_value)\n"
	    "for f in (lambda: s.pro_cv(1, 1, 400.0), lambda: s.pro_ang1(1, 1, 400.0, 0.5),\n"
	    "          lambda: s.obl_cv_seq(1, 5, 400.0), lambda: s.mathieu_sem(2**31 + 2, 5.0, "
	    "0.3)):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('computed')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e).split(':')[0])\n"
	    "out.append([round(float(s.pro_cv(0, 0, 100.0)), 6), round(float(s.pro_ang1(1, 1, 5.0, "
	    "0.5)[0]), 6),\n"
	    "            [round(v, 4) for v in s.pro_cv_seq(0, 4, 3.0)], "
	    "round(float(s.mathieu_cem(2, 5.0, 30.0)[0]), 6)])\n"
	    "out",
	    "[\"source value (20) must\",0,5,\"pro_cv\",\"pro_ang1\",\"obl_cv_seq\","
	    "\"mathieu_sem\",[99.248101,0.560163,[2.1367,6.8209,11.1929,16.889,24.7085],"
	    "0.906501]]");
	e2e_stop();
}

/* RBFInterpolator's compiled kernels (no bounds checks) take its plain attributes as they are:
 * a kernel name not theirs aborted the worker, powers with more columns than the points read
 * past each point, points with more columns than the shift and scale read past those (numbers
 * made of other memory answered). The kernels get shapes that agree and a kernel they have;
 * interpolants of every kind still pass through their data points. */
Test(data, rbf_interpolator_kernels_get_shapes_that_agree)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.interpolate import RBFInterpolator\n"
	    "rng = np.random.default_rng(0)\n"
	    "x = rng.random((30, 2))\n"
	    "v = np.sin(x[:, 0]) + x[:, 1]\n"
	    "out = []\n"
	    "for k in ['thin_plate_spline', 'cubic', 'gaussian', 'multiquadric']:\n"
	    "    r = RBFInterpolator(x, v, kernel=k, epsilon=2.0)\n"
	    "    out.append(bool(np.allclose(r(x), v, atol=1e-6)))\n"
	    "r = RBFInterpolator(x, v, neighbors=8, smoothing=np.zeros(30), degree=2)\n"
	    "out.append(bool(np.allclose(r(x), v, atol=1e-6)))\n"
	    "def evaluate(r, at):\n"
	    "    try:\n"
	    "        return str(r(at)[0])[:6]\n"
	    "    except ValueError as e:\n"
	    "        return str(e)[:40]\n"
	    "r = RBFInterpolator(x, v)\n"
	    "r.kernel = 'nonsense'\n"
	    "out.append(evaluate(r, x[:2]))\n"
	    "r = RBFInterpolator(x, v)\n"
	    "r.powers = np.ones((3, 4000), dtype=int)\n"
	    "out.append(evaluate(r, x[:2]))\n"
	    "r = RBFInterpolator(x, v)\n"
	    "r.y = rng.random((30, 3000))\n"
	    "r.powers = np.zeros((3, 3000), dtype=int)\n"
	    "out.append(evaluate(r, rng.random((2, 3000))))\n"
	    "out",
	    "[true,true,true,true,true,\"RBFInterpolator: kernel must be one of c\","
	    "\"RBFInterpolator: powers must have one co\","
	    "\"RBFInterpolator: shift must have one col\"]");
	e2e_stop();
}

/* scipy's C wrappers of FITPACK's surface and parametric fits copied the knots they were
 * handed into a work block sized from nxest (nest) before FITPACK checked the count: bisplrep
 * and splprep with task=-1, a long t and a small nest overran the block with the code's bytes
 * (another array's items changed); MINPACK read a diag shorter than x0 past its end. The
 * knots, the work and the parameters are checked against the block, diag against x0, and real
 * fits and solves answer as before. */
Test(data, fitpack_and_minpack_get_what_their_work_holds)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.interpolate import bisplrep, bisplev, splprep, splev\n"
	    "from scipy.optimize import fsolve\n"
	    "out = []\n"
	    "WA = 294\n"
	    "def groomed():\n"
	    "    pairs = [(np.zeros(WA), np.zeros(WA)) for _ in range(400)]\n"
	    "    As = [a for b, a in pairs]; Bs = [b for b, a in pairs]; del pairs\n"
	    "    for i in range(len(Bs)): Bs[i] = None\n"
	    "    t = np.zeros(WA + 2 + 8)\n"
	    "    t[WA + 1] = np.array([2368 | 1], dtype=np.int64).view(np.float64)[0]\n"
	    "    t[WA + 2:] = [1111.0, 2222.0, 3333.0, 4444.0, 5555.0, 6666.0, 7777.0, 8888.0]\n"
	    "    return As, t\n"
	    "As, tx = groomed()\n"
	    "try:\n"
	    "    bisplrep(np.array([0., 1, 0, 1]), np.array([0., 0, 1, 1]), np.array([0., 1, 1, "
	    "2]),\n"
	    "             kx=1, ky=1, tx=tx, ty=np.linspace(0, 1, 5), task=-1, nxest=5, nyest=5)\n"
	    "    out.append('fitted')\n"
	    "except ValueError as e:\n"
	    "    out.append(str(e)[:14])\n"
	    "out.append(sum(bool(a.any()) for a in As))\n"
	    "As, t = groomed()\n"
	    "try:\n"
	    "    m = 110\n"
	    "    splprep([np.linspace(0, 1, m), np.linspace(0, 1, m) ** 2], k=1, task=-1, t=t, "
	    "nest=5)\n"
	    "    out.append('fitted')\n"
	    "except ValueError as e:\n"
	    "    out.append(str(e)[:14])\n"
	    "out.append(sum(bool(a.any()) for a in As))\n"
	    "f = lambda x: x ** 2 - 1e4 * np.arange(1, len(x) + 1)\n"
	    "try:\n"
	    "    fsolve(f, np.ones(5), diag=np.ones(5)[:2], maxfev=9)\n"
	    "    out.append('solved')\n"
	    "except ValueError as e:\n"
	    "    out.append(str(e)[:20])\n"
	    "g = np.linspace(0, 1, 12)\n"
	    "X, Y = np.meshgrid(g, g)\n"
	    "Z = np.sin(3 * X) * np.cos(2 * Y)\n"
	    "tx = np.r_[[0.] * 4, 0.5, [1.] * 4]\n"
	    "tck = bisplrep(X.ravel(), Y.ravel(), Z.ravel(), task=-1, tx=tx, ty=tx)\n"
	    "out.append(round(float(bisplev(0.3, 0.6, tck)), 6))\n"
	    "th = np.linspace(0, 2 * np.pi, 40)\n"
	    "(tk, u) = splprep([np.cos(th), np.sin(th)], s=0.001)\n"
	    "out.append([round(float(v), 6) for v in splev(0.25, tk)])\n"
	    "out.append([round(float(v), 6) for v in fsolve(lambda x: x ** 2 - np.array([4.0, "
	    "9.0]), [1.0, 1.0], diag=[1.0, 2.0])])\n"
	    "out\n",
	    "[\"surfit takes a\",0,\"parcur takes a\",0,\"diag must hold one n\",0.283346,"
	    "[-0.002414,0.997453],[2.0,3.0]]");
	e2e_stop();
}

/* scipy's spline kernels took what they were handed: UnivariateSpline's fit state (its _data,
 * a plain attribute) went back to FITPACK with a knot count past the knot array, which wrote
 * the code's xe past it into another array; make_lsq_spline and make_interp_spline let a point
 * past the base interval through (up to t[-k], not t[n]), and the kernels went on with the
 * interval -1: numbers added before the matrix, knots read before the knots; a derivative
 * order past k + 1 overran the kernel's own work array. The state is checked, the points are
 * refused, the order is taken as k + 1 (zero, as any higher), and real fits still fit. */
Test(data, splines_check_their_fit_state_points_and_derivative_orders)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.interpolate import UnivariateSpline, make_lsq_spline, make_interp_spline, "
	    "BSpline\n"
	    "out = []\n"
	    "x = np.linspace(0, 1, 20); y = np.sin(7 * x)\n"
	    "spl = UnivariateSpline(x, y, s=0.5)\n"
	    "d = list(spl._data)\n"
	    "nest = len(d[8])\n"
	    "big_t = np.zeros(nest + 8); big_t[:nest] = d[8]\n"
	    "big_c = np.zeros(nest + 8); big_c[:nest] = d[9]\n"
	    "big_f = np.full(nest + 8, 1e9)\n"
	    "big_r = np.ones(nest + 8, dtype=d[12].dtype)\n"
	    "d[4] = 123.0\n"
	    "d[7] = nest + 2\n"
	    "d[8], d[9], d[11], d[12], d[13] = big_t[:nest], big_c[:nest], big_f[:nest], "
	    "big_r[:nest], 0\n"
	    "spl._data = tuple(d)\n"
	    "try:\n"
	    "    spl.set_smoothing_factor(1e6)\n"
	    "    out.append('set')\n"
	    "except ValueError as e:\n"
	    "    out.append(str(e)[:22])\n"
	    "out.append(big_t[nest:].tolist())\n"
	    "k = 3\n"
	    "xs = np.array([0., 1., 2., 3., 4.5])\n"
	    "t = np.r_[[-3., -2., -1.], [0., 0, 0, 0, 2, 4, 5, 5, 5]][3:]\n"
	    "for make in (lambda: make_lsq_spline(xs, np.zeros(5), t, k=k),\n"
	    "             lambda: make_interp_spline(np.array([0., 1, 2, 3, 4.5]), np.zeros(5), "
	    "k=3,\n"
	    "                                        t=np.r_[[0.] * 4, 2.0, [4.] * 1, [5.] * "
	    "3])):\n"
	    "    try:\n"
	    "        make()\n"
	    "        out.append('made')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:16])\n"
	    "b = BSpline(np.r_[[0.] * 4, [1.] * 4], np.ones(4), 3)\n"
	    "out.append([float(b(0.5, nu=n)) for n in (3, 4, 5, 9)])\n"
	    "ok = UnivariateSpline(x, y, s=0.5)\n"
	    "ok.set_smoothing_factor(0.01)\n"
	    "out.append([len(ok.get_knots()), round(float(ok(0.3)), 6)])\n"
	    "out\n",
	    "[\"fpcurf1 takes the stat\",[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0],\"Out of bounds w/\","
	    "\"Out of bounds w/\",[0.0,0.0,0.0,0.0],[5,0.861671]]");
	e2e_stop();
}

/* scipy.linalg's QR updates took Q of (M, N) with R of (N, N) as an economic decomposition
 * with M < N: qr_delete's rotations ran over rows past Q (in place with overwrite_qr: the rows
 * of the array Q was cut from, or another array's shape and items), and k + p was summed in C
 * ints (p of 2**31 - 1: SIGSEGV). Both are refused, the memory around Q is unchanged, and the
 * updates of real decompositions still compute. */
Test(data, qr_updates_take_a_tall_economic_q_and_bounded_rows)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.linalg as sl\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except ValueError as e:\n"
	    "        return 'refused' if 'economic' in str(e) or 'out of' in str(e) else str(e)\n"
	    "base = np.arange(40.).reshape(8, 5)\n"
	    "before = base.copy()\n"
	    "Q = base[:2]\n"
	    "Q[0, :2] = [0.0, 1.0]\n"
	    "before[0, :2] = [0.0, 1.0]\n"
	    "tries = [t(lambda: sl.qr_delete(Q, np.eye(5), 0, 1, 'row', overwrite_qr=True, "
	    "check_finite=False)),\n"
	    "         t(lambda: sl.qr_insert(base[:2], np.eye(5), np.ones(5), 0, 'row', "
	    "overwrite_qru=True, check_finite=False)),\n"
	    "         t(lambda: sl.qr_delete(np.eye(4), np.eye(4), 1, 2**31 - 1, "
	    "check_finite=False))]\n"
	    "a = np.array([[3., -2., -2.], [6., -9., -3.], [-3., 10., 1.], [6., -7., 4.], [7., 8., "
	    "-6.]])\n"
	    "q, r = sl.qr(a)\n"
	    "q1, r1 = sl.qr_delete(q, r, 2, 2, 'row')\n"
	    "qe, re = sl.qr(a, mode='economic')\n"
	    "q2, r2 = sl.qr_delete(qe, re, 0, 1, 'col')\n"
	    "u, v = np.array([7., -2., 4., 3., 4.]), np.array([1., 3., -5.])\n"
	    "q3, r3 = sl.qr_update(q, r, u, v)\n"
	    "[tries, bool((base == before).all()), bool(np.allclose(q1 @ r1, np.delete(a, slice(2, "
	    "4), 0))),\n"
	    " bool(np.allclose(q2 @ r2, a[:, 1:])), bool(np.allclose(q3 @ r3, a + np.outer(u, "
	    "v)))]",
	    "[[\"refused\",\"refused\",\"refused\"],true,true,true,true]");
	e2e_stop();
}

/* The libraries' raw native wrappers hand their arguments to Fortran unchecked: scipy's packed
 * BLAS routines took any n (n*(n+1)/2 wrapped in 32 bits: any memory read and written),
 * dfitpack any degree, lapack_lite any sizes. They are not given (import, attribute, from-
 * import, the getters that hand them out); the tck functions check what they hand on (splev
 * with a degree past its knots and splint to NaN read past their arrays: SIGSEGV). The
 * packages' own functions still compute (values from python3.11 with Debian 12's packages). */
Test(data, raw_native_wrappers_are_not_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.linalg as sl, scipy.interpolate as si, scipy.fftpack\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except (ImportError, AttributeError, ValueError, TypeError) as e:\n"
	    "        return type(e).__name__\n"
	    "def i1():\n"
	    "    import scipy.linalg.blas\n"
	    "def i2():\n"
	    "    from scipy.linalg import lapack\n"
	    "def i3():\n"
	    "    import scipy.interpolate.dfitpack\n"
	    "def i4():\n"
	    "    from numpy.linalg import lapack_lite\n"
	    "def i5():\n"
	    "    import scipy.linalg.cython_blas\n"
	    "def i6():\n"
	    "    from scipy.fftpack import convolve\n"
	    "refused = [t(i1), t(i2), t(i3), t(i4), t(i5), t(i6),\n"
	    "           t(lambda: sl.get_blas_funcs), t(lambda: sl.get_lapack_funcs),\n"
	    "           t(lambda: si.dfitpack), t(lambda: np.linalg.lapack_lite),\n"
	    "           t(lambda: si.splev(np.ones(5), (np.ones(3), np.ones(3), 1000), der=1)),\n"
	    "           t(lambda: si.splint(0.0, float('nan'), (np.zeros(2), np.ones(2), 1))),\n"
	    "           t(lambda: si.bisplev(0.5, 0.5, (np.ones(2), np.ones(2), np.ones(1), 9, "
	    "1)))]\n"
	    "A = np.random.default_rng(0).normal(size=(4, 4))\n"
	    "b = np.ones(4)\n"
	    "x = np.linspace(0, 10, 20)\n"
	    "tck = si.splrep(x, np.sin(x))\n"
	    "[refused, bool(np.allclose(A @ sl.solve(A, b), b)),\n"
	    " bool(np.allclose(A @ sl.lu_solve(sl.lu_factor(A), b), b)),\n"
	    " f'{float(si.splev(2.5, tck)):.3f}', f'{float(si.splint(0, 5, tck)):.3f}',\n"
	    " len(si.sproot(tck)), si.splder(tck)[2], f'{float(si.UnivariateSpline(x, "
	    "np.sin(x))(1.0)):.2f}',\n"
	    " bool(np.allclose(np.linalg.inv(A) @ A, np.eye(4)))]",
	    "[[\"ModuleNotFoundError\",\"ImportError\",\"ModuleNotFoundError\",\"ImportError\","
	    "\"ModuleNotFoundError\",\"ImportError\",\"AttributeError\",\"AttributeError\","
	    "\"AttributeError\","
	    "\"AttributeError\","
	    "\"ValueError\",\"ValueError\",\"ValueError\"],true,true,\"0.598\",\"0.717\",4,2,\"0."
	    "39\",true]");
	e2e_stop();
}

/* scipy.sparse's kernels trusted a matrix's arrays: an index changed after the matrix was made
 * (m.indices[0] = 10**6, then m.toarray()) wrote a value that far past the dense array, and the
 * kernels themselves are public (scipy.sparse.sparsetools). Each checks its arguments as its
 * loops use them. The raw Fortran wrappers scipy's deprecated modules hand out (SLSQP wrote
 * 100.0 where a caller's n3 said; VODE continued over a shorter y: a chosen overflow) and those
 * library classes hold (an ode's runner, BFGS's BLAS routines) are not given. Sparse algebra,
 * ode and SLSQP answer as before. */
Test(data, sparse_kernels_and_fortran_wrappers_check_what_they_are_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp, scipy.optimize as so\n"
	    "from scipy.integrate import ode\n"
	    "from scipy.optimize import BFGS\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def raw(name):\n"
	    "    import scipy.optimize.slsqp, scipy.integrate.vode\n"
	    "    return getattr(scipy.optimize.slsqp if name == 'slsqp' else scipy.integrate.vode, "
	    "name)\n"
	    "import scipy.sparse.sparsetools as ss\n"
	    "m = sp.csr_matrix(np.eye(4))\n"
	    "m.indices[0] = 10**6\n"
	    "c = sp.csc_matrix(np.eye(4))\n"
	    "c.indptr[2] = 100\n"
	    "b = sp.bsr_matrix(np.eye(4), blocksize=(2, 2))\n"
	    "b.indices[0] = -5\n"
	    "d = sp.coo_matrix(np.eye(3))\n"
	    "d.row[1] = 7\n"
	    "r = ode(lambda t, y: -y).set_integrator('vode')\n"
	    "out = np.zeros(1)\n"
	    "refused = [t(m.toarray), t(lambda: m @ np.ones(4)), t(lambda: m + m), t(c.toarray), "
	    "t(lambda: c @ np.ones(4)),\n"
	    "           t(b.toarray), t(d.tocsr), t(d.toarray),\n"
	    "           t(lambda: ss.csr_todense(1, 1, np.array([0, 1]), np.array([10**6]), "
	    "np.array([1.0]), out)),\n"
	    "           t(lambda: ss.csr_matvec(1, 1, np.array([0, 1]), np.array([0]), "
	    "np.array([1.0]), np.ones(1), np.zeros(0))),\n"
	    "           t(lambda: ss.csr_tocsc(1, 2, np.array([0, 2]), np.array([0, 1]), "
	    "np.ones(2), np.zeros(3, int), np.zeros(1, int), np.zeros(2))),\n"
	    "           t(lambda: raw('slsqp')), t(lambda: raw('dvode')), t(lambda: "
	    "r._integrator.runner), t(lambda: BFGS._syr)]\n"
	    "g = sp.random(60, 50, density=0.1, random_state=1, format='csr')\n"
	    "A = g.toarray()\n"
	    "x = np.arange(50.0)\n"
	    "r.set_initial_value([1.0], 0)\n"
	    "ok = [bool(np.allclose(g @ x, A @ x)), bool(np.allclose((g + g.T.T).toarray(), 2 * "
	    "A)),\n"
	    "      bool(np.allclose((g @ g.T).toarray(), A @ A.T)), "
	    "bool(np.allclose(g.tocsc().toarray(), A)),\n"
	    "      bool(np.allclose(g.tobsr(blocksize=(5, 5)).toarray(), A)), "
	    "bool(np.allclose(g[5:9, ::2].toarray(), A[5:9, ::2])),\n"
	    "      bool(np.allclose(g[[3, 1, 7]][:, [4, 0]].toarray(), A[[3, 1, 7]][:, [4, 0]])), "
	    "float(g[2, 3]) == A[2, 3],\n"
	    "      bool(np.allclose(sp.hstack([g, g]).toarray(), np.hstack([A, A]))), "
	    "bool(np.allclose(g.diagonal(2), A.diagonal(2))),\n"
	    "      bool(np.allclose(g.tocoo().toarray(), A)), bool(np.allclose(sp.diags([1.0, "
	    "2.0], [0, 1], shape=(4, 4)) @ np.ones(4), [3, 3, 3, 1])),\n"
	    "      round(float(r.integrate(1.0)[0]), 6), so.minimize(lambda v: ((v - 3) ** "
	    "2).sum(), [0.0, 0.0], method='SLSQP').x.round(3).tolist()]\n"
	    "[refused, ok]",
	    "[[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"AttributeError\",\"AttributeError\",\"AttributeError\","
	    "\"AttributeError\"],[true,true,true,true,true,true,true,true,true,true,true,true,0."
	    "36788,[3.0,3.0]]]");
	e2e_stop();
}

/* Compiled code that reads a sparse matrix's arrays itself, past the kernels: csgraph's
 * algorithms (minimum_spanning_tree, maximum_bipartite_matching: SIGSEGV on an index edited
 * after the matrix was made), SuperLU with permc_spec='NATURAL' (row indices past the matrix
 * read and written), scikit-learn's estimators fitting on sparse input. Each checks the matrix
 * whole first; graphs, solves and fits answer as before. */
Test(data, sparse_matrices_are_checked_before_compiled_code_reads_them)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from scipy.sparse import csgraph\n"
	    "from scipy.sparse.linalg import splu, spsolve\n"
	    "from sklearn.linear_model import Lasso, SGDRegressor\n"
	    "from sklearn.svm import SVR\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "m = sp.csr_matrix(np.eye(4) + np.eye(4, k=1))\n"
	    "m.indices[1] = 10**7\n"
	    "c = sp.csc_matrix(np.eye(4) * 2 + np.eye(4, k=1))\n"
	    "c.indices[1] = 10**7\n"
	    "X = sp.random(30, 5, density=0.5, random_state=0, format='csr')\n"
	    "Xbad = X.copy()\n"
	    "Xbad.indices[2] = 10**6\n"
	    "y = np.arange(30.0)\n"
	    "refused = [t(lambda: csgraph.minimum_spanning_tree(m)), t(lambda: "
	    "csgraph.maximum_bipartite_matching(m)),\n"
	    "           t(lambda: splu(c, permc_spec='NATURAL')), t(lambda: spsolve(c, np.ones(4), "
	    "permc_spec='NATURAL')),\n"
	    "           t(lambda: Lasso().fit(Xbad, y)), t(lambda: SGDRegressor().fit(Xbad, y)), "
	    "t(lambda: SVR().fit(Xbad, y))]\n"
	    "g = sp.csr_matrix(np.array([[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3], [4, 0, 0, "
	    "0.0]]))\n"
	    "A = sp.csc_matrix(np.array([[4.0, 1, 0], [1, 3, 0], [0, 0, 2]]))\n"
	    "ok = [csgraph.shortest_path(g)[0].tolist(), csgraph.connected_components(g)[0], "
	    "csgraph.minimum_spanning_tree(g).nnz,\n"
	    "      np.round(splu(A).solve(np.ones(3)), 4).tolist(), np.round(spsolve(A, "
	    "np.ones(3)), 4).tolist(),\n"
	    "      round(float(Lasso(alpha=0.01).fit(X, y).score(X, y)), 3) > 0, "
	    "round(float(SVR().fit(X, y).predict(X[:1])[0]), 2) > -100]\n"
	    "[refused, ok]",
	    "[[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ValueError\"],[[0.0,1.0,3.0,6.0],1,3,[0.1818,0.2727,0.5],[0.1818,0."
	    "2727,0.5],true,true]]");
	e2e_stop();
}

/* pandas' JSON writer (DataFrame.to_json, Series.to_json, pd.io.json.dumps) walked the user's
 * own dicts and lists in compiled code: a dict's value held borrowed while a non-str key's
 * __str__ replaced it (freed, then written: SIGSEGV, or a forged object handed on), a list's
 * length kept while default_handler emptied it (items read past its end), a toDict() result
 * walked the same way. The writer is given a private copy, taken before it runs: the values
 * are those the containers held then, and ordinary frames are written as before (the strings
 * below are the host pandas' own output). */
Test(data, json_writer_walks_a_private_copy_of_the_objects)
{
	start_data(NULL);
	e2e_expect_result(
	    "import datetime\n"
	    "import numpy as np, pandas as pd\n"
	    "d = {}\n"
	    "class K:\n"
	    "    def __str__(self):\n"
	    "        d[self] = 0\n"
	    "        return 'k'\n"
	    "d[K()] = [object() for _ in range(50)]\n"
	    "a = pd.Series([d]).to_json(default_handler=lambda o: 1)\n"
	    "L = []\n"
	    "def h(o):\n"
	    "    L.clear()\n"
	    "    return 0\n"
	    "L.extend([object()] + [bytearray(10) for _ in range(2000)])\n"
	    "b = pd.io.json.dumps(L, default_handler=h)\n"
	    "class T:\n"
	    "    def toDict(self):\n"
	    "        r = {}\n"
	    "        class Q:\n"
	    "            def __str__(self):\n"
	    "                r.clear()\n"
	    "                return 'q'\n"
	    "        r[Q()] = [object() for _ in range(50)]\n"
	    "        return r\n"
	    "c = pd.io.json.dumps([T()], default_handler=lambda o: 2)\n"
	    "df = pd.DataFrame({'n': [1, 2], 'x': [0.5, np.nan], 's': ['a', None],\n"
	    "                   't': pd.to_datetime(['2024-01-01', '2024-01-02']), 'o': [{1: [1, "
	    "2]}, (3, None)]},\n"
	    "                  index=['r', 2])\n"
	    "ok = [df.to_json(orient=o) for o in ('records', 'split', 'index', 'columns', "
	    "'values')]\n"
	    "ok += [df.to_json(orient='table')[-120:], df.to_json(date_format='iso', "
	    "double_precision=2, orient='records', lines=True),\n"
	    "       df.to_json(default_handler=str, orient='values'), pd.io.json.dumps({None: 1.5, "
	    "2.5: [datetime.date(2020, 1, 2)]}, iso_dates=True)]\n"
	    "[a == '{\"0\":{\"k\":[' + ','.join(['1'] * 50) + ']}}', b == '[' + ','.join(['0'] * "
	    "2001) + ']',\n"
	    " c == '[{\"q\":[' + ','.join(['2'] * 50) + ']}]', ok]\n",
	    "[true,true,true,[\"[{\\\"n\\\":1,\\\"x\\\":0.5,\\\"s\\\":\\\"a\\\",\\\"t\\\":"
	    "17040672000"
	    "00,\\\"o\\\":{\\\"1\\\":[1,2]}},{\\\"n\\\":2,\\\"x\\\":null,\\\"s\\\":null,\\\"t\\\":"
	    "170"
	    "4153600000,\\\"o\\\":[3,null]}]\",\"{\\\"columns\\\":[\\\"n\\\",\\\"x\\\",\\\"s\\\","
	    "\\\""
	    "t\\\",\\\"o\\\"],\\\"index\\\":[\\\"r\\\",2],\\\"data\\\":[[1,0.5,\\\"a\\\","
	    "170406720000"
	    "0,{\\\"1\\\":[1,2]}],[2,null,null,1704153600000,[3,null]]]}\",\"{\\\"r\\\":{\\\"n\\\":"
	    "1,"
	    "\\\"x\\\":0.5,\\\"s\\\":\\\"a\\\",\\\"t\\\":1704067200000,\\\"o\\\":{\\\"1\\\":[1,2]}}"
	    ","
	    "\\\"2\\\":{\\\"n\\\":2,\\\"x\\\":null,\\\"s\\\":null,\\\"t\\\":1704153600000,"
	    "\\\"o\\\":["
	    "3,null]}}\",\"{\\\"n\\\":{\\\"r\\\":1,\\\"2\\\":2},\\\"x\\\":{\\\"r\\\":0.5,\\\"2\\\":"
	    "nu"
	    "ll},\\\"s\\\":{\\\"r\\\":\\\"a\\\",\\\"2\\\":null},\\\"t\\\":{\\\"r\\\":1704067200000,"
	    "\\"
	    "\"2\\\":1704153600000},\\\"o\\\":{\\\"r\\\":{\\\"1\\\":[1,2]},\\\"2\\\":[3,null]}}\","
	    "\"["
	    "[1,0.5,\\\"a\\\",1704067200000,{\\\"1\\\":[1,2]}],[2,null,null,1704153600000,[3,null]]"
	    "]"
	    "\",\"24-01-01T00:00:00.000\\\",\\\"o\\\":{\\\"1\\\":[1,2]}},{\\\"index\\\":2,"
	    "\\\"n\\\":2"
	    ",\\\"x\\\":null,\\\"s\\\":null,\\\"t\\\":\\\"2024-01-02T00:00:00.000\\\",\\\"o\\\":[3,"
	    "nu"
	    "ll]}]}\",\"{\\\"n\\\":1,\\\"x\\\":0.5,\\\"s\\\":\\\"a\\\",\\\"t\\\":\\\"2024-01-01T00:"
	    "00"
	    ":00.000\\\",\\\"o\\\":{\\\"1\\\":[1,2]}}\\n{\\\"n\\\":2,\\\"x\\\":null,\\\"s\\\":null,"
	    "\\"
	    "\"t\\\":\\\"2024-01-02T00:00:00.000\\\",\\\"o\\\":[3,null]}\\n\",\"[[1,0.5,\\\"a\\\","
	    "170"
	    "4067200000,{\\\"1\\\":[1,2]}],[2,null,null,1704153600000,[3,null]]]\",\"{\\\"None\\\":"
	    "1."
	    "5,\\\"2.5\\\":[\\\"2020-01-02T00:00:00.000\\\"]}\"]]");
	e2e_stop();
}

/* RandomState(obj) and Generator(obj) drew through any object's capsule and lock: the
 * capsule of a bit generator nobody else held had them draw from freed memory and write their
 * state there. They take numpy's own bit generators and built-in seeds; seeded draws are as
 * before. */
Test(data, generators_draw_from_bit_generators_they_hold)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class L:\n"
	    "    def __enter__(self): return self\n"
	    "    def __exit__(self, *a): return None\n"
	    "class F:\n"
	    "    lock = L()\n"
	    "    def __init__(self): self.capsule = np.random.MT19937(1).capsule\n"
	    "class M(np.random.MT19937):\n"
	    "    pass\n"
	    "class Seed(int):\n"
	    "    capsule = None\n"
	    "[t(lambda: np.random.RandomState(F())), t(lambda: np.random.Generator(F())), "
	    "t(lambda: np.random.RandomState(Seed(3))),\n"
	    " np.random.RandomState(5).randint(0, 100, 3).tolist(), "
	    "np.random.RandomState(np.random.MT19937(5)).randint(0, 100, 3).tolist(),\n"
	    " np.random.Generator(np.random.PCG64(1)).integers(0, 100, 3).tolist(), "
	    "np.random.default_rng(1).integers(0, 100, 3).tolist(),\n"
	    " np.random.RandomState([1, 2]).randint(0, 9, 2).tolist(), "
	    "np.random.RandomState(np.int64(5)).randint(0, 100, 3).tolist(),\n"
	    " np.random.Generator(M(2)).integers(0, 100, 2).tolist(), "
	    "np.random.RandomState().randint(0, 1, 1).tolist()]",
	    "[\"TypeError\",\"TypeError\",\"TypeError\",[99,78,61],[56,41,75],[47,51,75],[47,51,75]"
	    ",[7,8],[99,78,61],[69,67],[0]]");
	e2e_stop();
}

/* Ordinary library calls the sandbox broke: qmc.Sobol drew one point again and again in 2 or
 * more dimensions (its direction numbers, a data file of scipy's, were never read: no error),
 * find_peaks always failed (its compiled step resizes without the reference check), np.vectorize
 * with a signature and loop dimensions failed (it broadcast views made with as_strided), and
 * numpy.lib.recfunctions did not import, and workers=2 (differential_evolution) ended the call
 * as a sandbox violation (a process pool's pipes): it maps in the call's process. Each answers
 * as it does outside the sandbox. */
Test(data, library_calls_the_sandbox_broke_answer_as_outside)
{
	start_data(NULL);
	e2e_expect_result("from scipy.optimize import differential_evolution, rosen\n"
	                  "r = differential_evolution(rosen, [(0, 2), (0, 2)], seed=1, workers=2, "
	                  "updating='deferred', maxiter=50, tol=1e-8, polish=False)\n"
	                  "r1 = differential_evolution(rosen, [(0, 2), (0, 2)], seed=1, workers=1, "
	                  "updating='deferred', maxiter=50, tol=1e-8, polish=False)\n"
	                  "[bool((r.x == r1.x).all()), r.nfev == r1.nfev, round(float(r.fun), 6) "
	                  "== round(float(r1.fun), 6)]",
	                  "[true,true,true]");
	e2e_expect_result("import numpy as np\n"
	                  "from scipy.stats import qmc\n"
	                  "from scipy import signal\n"
	                  "import numpy.lib.recfunctions as rfn\n"
	                  "s = qmc.Sobol(2, seed=0).random(4)\n"
	                  "x = np.sin(np.linspace(0, 20, 1000))\n"
	                  "v = np.vectorize(lambda a, b: a @ b, "
	                  "signature='(n),(n)->()')(np.ones((2, 3)), np.ones(3))\n"
	                  "a = np.array([(1, 2.0)], dtype=[('a', int), ('b', float)])\n"
	                  "[len({tuple(r) for r in s.round(6)}), s.round(4).tolist()[1], "
	                  "signal.find_peaks(x)[0].tolist(), v.tolist(), "
	                  "rfn.structured_to_unstructured(a).tolist()]",
	                  "[4,[0.4516,0.1669],[78,392,706],[3.0,3.0],[[1.0,2.0]]]");
	e2e_stop();
}

/* qhull's error on flat input (ConvexHull, Delaunay of points on a line) came as an OSError
 * from reading its messages back (they go nowhere in the sandbox), so `except QhullError` did
 * not catch it: it is a QhullError that says what to try; good input still answers. */
Test(data, a_qhull_error_is_a_qhull_error)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "from scipy.spatial import ConvexHull, Delaunay, QhullError\n"
	                  "out = []\n"
	                  "for f in (ConvexHull, Delaunay):\n"
	                  "    try:\n"
	                  "        f(np.array([[0, 0], [1, 1], [2, 2], [3, 3]]))\n"
	                  "        out.append('no error')\n"
	                  "    except QhullError as e:\n"
	                  "        out.append(['QhullError', 'QJ' in str(e)])\n"
	                  "out.append(len(ConvexHull(np.array([[0, 0], [1, 0], [0, 1], [1, 1], "
	                  "[0.5, 0.5]])).vertices))\n"
	                  "out",
	                  "[[\"QhullError\",true],[\"QhullError\",true],4]");
	e2e_stop();
}

/* numpy's maximum and minimum of objects (fmax, fmin) took a reference to the operand the
 * comparison chose after it returned, and the user's __ge__ had dropped the array's own: the
 * freed object went into the result (any read/write). A comparison's operands are released
 * only once the C code that asked has gone on. And np.lexsort given a sequence of its own (not
 * a list or tuple) handed the C code the user's object array, whose items it compared while
 * __lt__ freed them: any sequence is read first, its object keys copied. */
Test(data, a_compared_object_outlives_the_code_that_chose_it)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "class K:\n"
	                  "    def __init__(self, tag):\n"
	                  "        self.tag = tag\n"
	                  "    def __ge__(self, o):\n"
	                  "        a[0] = 0\n"
	                  "        return True\n"
	                  "    __le__ = __gt__ = __lt__ = __ge__\n"
	                  "def run(f):\n"
	                  "    global a\n"
	                  "    a = np.empty(1, dtype=object)\n"
	                  "    a[0] = K('kept')\n"
	                  "    b = np.zeros(1, dtype=object)\n"
	                  "    r = f(a, b)\n"
	                  "    spray = [bytearray(40) for i in range(200)]\n"
	                  "    return r[0].tag\n"
	                  "out = [run(np.maximum), run(np.minimum), run(np.fmax), run(np.fmin)]\n"
	                  "base = np.empty(64, dtype=object)\n"
	                  "n = [0]\n"
	                  "class L:\n"
	                  "    __slots__ = ('v',)\n"
	                  "    def __lt__(self, o):\n"
	                  "        n[0] += 1\n"
	                  "        if n[0] == 1:\n"
	                  "            base[:] = 0\n"
	                  "            global spray\n"
	                  "            spray = [bytearray(b'\\xff' * 39) for i in range(200)]\n"
	                  "        return isinstance(o, L) and self.v < o.v\n"
	                  "    def __gt__(self, o):\n"
	                  "        return False\n"
	                  "for i in range(64):\n"
	                  "    k = L()\n"
	                  "    k.v = 64 - i\n"
	                  "    base[i] = k\n"
	                  "class Seq:\n"
	                  "    def __len__(self):\n"
	                  "        return 1\n"
	                  "    def __getitem__(self, i):\n"
	                  "        if i == 0:\n"
	                  "            return base[::2]\n"
	                  "        raise IndexError\n"
	                  "out.append(np.lexsort(Seq())[:4].tolist())\n"
	                  "out.append(np.maximum(np.array([1, 5], dtype=object), np.array([3, 2], "
	                  "dtype=object)).tolist())\n"
	                  "out",
	                  "[\"kept\",\"kept\",\"kept\",\"kept\",[0,1,2,3],[3,5]]");
	e2e_stop();
}

/* numpy's loops over objects used an element's items after the user's code dropped them from
 * their array: logical_and/or returned the second operand after the first's __bool__ freed it,
 * clip compared with its bound after __ge__ freed it, lcm multiplied by the operand its
 * __floordiv__ freed (each: a forged bytearray over all memory). Every loop over objects runs
 * one element at a time with the element's object inputs held. */
Test(data, object_loops_hold_each_elements_inputs)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "def q(v):\n"
	                  "    return v.to_bytes(8, 'little')\n"
	                  "keep = []\n"
	                  "def spray():\n"
	                  "    for _ in range(8):\n"
	                  "        ba = bytearray(111)\n"
	                  "        ba[0:56] = q(1 << 40) + q(id(bytearray)) + q(1 << 62) + q(1 << "
	                  "62) + q(0) + q(0) + q(0)\n"
	                  "        keep.append(ba)\n"
	                  "class A:\n"
	                  "    def __bool__(self):\n"
	                  "        b[0] = None\n"
	                  "        spray()\n"
	                  "        return True\n"
	                  "    def __ge__(self, o):\n"
	                  "        b[0] = None\n"
	                  "        spray()\n"
	                  "        return True\n"
	                  "    __le__ = __ge__\n"
	                  "got = []\n"
	                  "class G:\n"
	                  "    def __index__(self):\n"
	                  "        return 6\n"
	                  "    def __floordiv__(self, other):\n"
	                  "        b[0] = None\n"
	                  "        spray()\n"
	                  "        return M()\n"
	                  "class M:\n"
	                  "    def __mul__(self, other):\n"
	                  "        got.append(other)\n"
	                  "        return 0\n"
	                  "def run(f, first):\n"
	                  "    global b\n"
	                  "    a = np.empty(1, dtype=object)\n"
	                  "    a[0] = first\n"
	                  "    b = np.empty(1, dtype=object)\n"
	                  "    b[0] = bytes(64)\n"
	                  "    r = f(a, b)\n"
	                  "    return type(r[0]).__name__\n"
	                  "out = [run(np.logical_and, A()), run(np.logical_or, A()),\n"
	                  "       run(lambda a, b: np.clip(a, b, b), A())]\n"
	                  "b = np.empty(1, dtype=object)\n"
	                  "b[0] = 2 ** int('600') + 4\n"
	                  "a = np.empty(1, dtype=object)\n"
	                  "a[0] = G()\n"
	                  "np.lcm(a, b)\n"
	                  "out.append(type(got[0]).__name__)\n"
	                  "out.append(np.logical_and(np.array([1, 0], dtype=object), np.array([2, "
	                  "3], dtype=object)).tolist())\n"
	                  "out",
	                  "[\"bytes\",\"A\",\"A\",\"int\",[2,0]]");
	e2e_stop();
}

/* numpy's loops over arrays of objects (np.add, x + y, np.dot, np.add.reduce) hand a class's
 * operator the arrays' items without owning them: the user's __add__ dropped the other operand
 * from its array and answered NotImplemented, and its __radd__ ran on the freed object, laid
 * over with a forged one that handed out a bytearray spanning the address space. A class's
 * binary operators hold both operands while they run: __radd__ gets the real object. Ordinary
 * arithmetic on arrays of objects answers as before. */
Test(data, operators_of_object_arrays_hold_their_operands)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "def q(n): return n.to_bytes(8, 'little')\n"
	    "fake_ba = q(1 << 40) + q(id(bytearray)) + q(1 << 62) + q(1 << 62) + q(0) + q(0) + "
	    "q(0)\n"
	    "fake_ba_addr = id(fake_ba) + 32\n"
	    "class B:\n"
	    "    __slots__ = tuple('s%d' % i for i in range(20))\n"
	    "    def __init__(self): self.s0 = 'the real operand'\n"
	    "    def __radd__(self, o): return self.s0\n"
	    "    __rmul__ = __radd__\n"
	    "forged_b = bytes(16) + q(1 << 40) + q(id(B)) + q(fake_ba_addr)\n"
	    "forged_b += bytes(191 - len(forged_b))\n"
	    "keep = []\n"
	    "class Refill:\n"
	    "    def __del__(self):\n"
	    "        keep.extend(bytearray(forged_b) for _ in range(32))\n"
	    "def attack(op):\n"
	    "    global x, y\n"
	    "    class A:\n"
	    "        def __add__(self, other):\n"
	    "            y[-1] = None\n"
	    "            r = Refill()\n"
	    "            return NotImplemented\n"
	    "        __mul__ = __add__\n"
	    "    x = np.array([A()], dtype=object)\n"
	    "    y = np.array([B()], dtype=object)\n"
	    "    if op == 'ufunc': r = np.add(x, y)[0]\n"
	    "    elif op == 'operator': r = (x + y)[0]\n"
	    "    elif op == 'dot': r = np.dot(x, y)\n"
	    "    else:\n"
	    "        y = np.array([A(), B()], dtype=object)\n"
	    "        r = np.add.reduce(y)\n"
	    "    return r if isinstance(r, str) else type(r).__name__\n"
	    "class V:\n"
	    "    def __init__(self, v): self.v = v\n"
	    "    def __add__(self, o): return V(self.v + (o.v if isinstance(o, V) else o))\n"
	    "    __radd__ = __add__\n"
	    "    def __mul__(self, o): return V(self.v * (o.v if isinstance(o, V) else o))\n"
	    "    __rmul__ = __mul__\n"
	    "ok = np.array([V(1), V(2), V(3)], dtype=object)\n"
	    "[attack(op) for op in ('ufunc', 'operator', 'dot', 'reduce')], (ok + 1)[2].v, (2 + "
	    "ok)[0].v, np.dot(ok, ok).v, np.add.reduce(ok).v, (ok * ok).sum().v",
	    "[[\"the real operand\",\"the real operand\",\"the real operand\",\"the real "
	    "operand\"],4,3,14,6,14]");
	e2e_stop();
}

/* matplotlib's C++ triangulation made by the user's code (the class of
 * tr.get_cpp_triangulation()) read x and y at vertex numbers never checked (SIGSEGV), and the
 * arrays a Triangulation made its C++ one from were its attributes (edited: the same). The
 * constructor checks and copies what it is given; what the attribute keeps is a copy. */
Test(data, a_cpp_triangulation_is_made_of_checked_copies)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from matplotlib.tri import Triangulation, LinearTriInterpolator\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "x = np.array([0., 1, 0, 1]); y = np.array([0., 0, 1, 1])\n"
	    "tr = Triangulation(x, y)\n"
	    "C = type(tr.get_cpp_triangulation())\n"
	    "bad = np.array([[0, 1, 10**8]], dtype=np.int32)\n"
	    "r = [t(lambda: C(x, y, bad, None, None, None, True)), t(lambda: C(x, y, bad))]\n"
	    "tr.get_cpp_triangulation()\n"
	    "tr._cpp_made_from[2][0, 0] = 10**8\n"
	    "r.append(float(LinearTriInterpolator(tr, x + y)(0.25, 0.25)))\n"
	    "r.append(t(lambda: C(x, y, np.array([[0, 1, 2]], dtype=np.int32), None, None, None, "
	    "True)))\n"
	    "r",
	    "[\"ValueError\",\"TypeError\",0.5,\"ran\"]");
	e2e_stop();
}

/* odeint handed its function y as an array over its own work memory, freed when it returned:
 * a y the function kept wrote into whatever array was laid there later. The function gets a
 * copy; odeint answers as before (tfirst, args and Dfun too). */
Test(data, odeint_hands_its_function_a_copy)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.integrate import odeint\n"
	    "kept = []\n"
	    "def f(y, t):\n"
	    "    if not kept:\n"
	    "        kept.append(y)\n"
	    "    return -y\n"
	    "sol = odeint(f, np.ones(3), [0, 1])\n"
	    "junk = [np.full(3, 7.0) for _ in range(2000)]\n"
	    "kept[0][:] = 5.0\n"
	    "[kept[0].tolist(), sum(bool((j == 5.0).any()) for j in junk), "
	    "round(float(sol[-1][0]), 5),\n"
	    " round(float(odeint(lambda t, y: -y, [1.0], [0, 2], tfirst=True)[-1][0]), 5),\n"
	    " round(float(odeint(lambda y, t, k: -k * y, [1.0], [0, 1], args=(2.0,), Dfun=lambda "
	    "y, t, k: [[-k]])[-1][0]), 5)]",
	    "[[5.0,5.0,5.0],0,0.36788,0.13534,0.13534]");
	e2e_stop();
}

/* Compiled code called straight from library methods with what the user could change: pandas'
 * groupby kernels with the cached group ids (gb.grouper.group_info[0] edited: shift wrote a
 * row number at a chosen address, std and quantile read past their arrays), SparseArray
 * arithmetic with values replaced (read any address), a LIL matrix's data lists longer than
 * its rows (tocsr wrote past its values), MINPACK's callbacks handed x over work memory freed
 * on return (kept: written into what was laid there). Each is checked or given a copy; the
 * same functions answer as before. */
Test(data, kernels_called_from_library_methods_check_what_they_are_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, scipy.sparse as sp\n"
	    "from scipy.optimize import fsolve, leastsq, least_squares\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "df = pd.DataFrame({'k': [0, 0, 1, 1], 'v': [1.0, 2.0, 3.0, 4.0]})\n"
	    "gb = df.groupby('k')\n"
	    "ids = gb.grouper.group_info[0]\n"
	    "ids[1] = 1 << 40\n"
	    "refused = [t(lambda: gb.shift(1)), t(lambda: gb.std()), t(lambda: gb.quantile(0.5))]\n"
	    "a = pd.arrays.SparseArray(np.array([1.0, 0, 2, 3]), fill_value=0.0)\n"
	    "a._sparse_values = np.array([1.0])\n"
	    "refused.append(t(lambda: a + pd.arrays.SparseArray(np.array([0.0, 5, 0, 1]), "
	    "fill_value=0.0)))\n"
	    "m = sp.lil_matrix((2, 2))\n"
	    "m[0, 0] = 1.0\n"
	    "m.data[0] = [1.0] * 1000\n"
	    "refused.append(t(m.tocsr))\n"
	    "kept = []\n"
	    "def F(x):\n"
	    "    kept.append(x)\n"
	    "    return x ** 2 - 1\n"
	    "fsolve(F, np.full(8, 3.0))\n"
	    "leastsq(F, np.full(8, 3.0))\n"
	    "least_squares(F, np.full(8, 3.0), method='lm')\n"
	    "owned = all(x.flags.owndata or x.base is not None for x in kept)\n"
	    "d = pd.DataFrame({'k': list('aabbb'), 'v': [1.0, np.nan, 3.0, 4.0, 5.0]})\n"
	    "g = d.groupby('k').v\n"
	    "s = pd.arrays.SparseArray([0.0, 1, 0, 2], fill_value=0.0)\n"
	    "l = sp.lil_matrix((3, 3))\n"
	    "l[0, 1], l[2, 2] = 4.0, 5.0\n"
	    "ok = [g.shift(1).fillna(-1).tolist()[2:], round(float(g.std()['b']), 6), "
	    "g.quantile(0.5).tolist(), g.ffill().tolist(),\n"
	    "      g.cumsum().fillna(-1).tolist(), g.rank().fillna(-1).tolist(), "
	    "d.groupby('k').v.median().tolist(), (s + s).to_dense().tolist(),\n"
	    "      (s * 3).sp_values.tolist(), l.tocsr().toarray().tolist(), owned, "
	    "np.round(fsolve(lambda x: x ** 2 - 4, [1.0]), 6).tolist()]\n"
	    "[refused, ok]",
	    "[[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\"],[[-1.0,"
	    "3.0,4.0],1.0,[1.0,4.0],[1.0,1.0,3.0,4.0,5.0],[1.0,-1.0,3.0,7.0,12.0],[1.0,-1.0,1.0,2."
	    "0,3.0],[1.0,4.0],[0.0,2.0,0.0,4.0],[3.0,6.0],[[0.0,4.0,0.0],[0.0,0.0,0.0],[0.0,0.0,5."
	    "0]],true,[2.0]]]");
	e2e_stop();
}

/* Round two: a groupby kernel's scalar argument converted by the kernel after the check ran
 * the user's __index__, which edited the labels (shift wrote at a chosen offset); a SparseArray's
 * block lengths edited in place read past its values. Scalars are made plain before the check,
 * block indexes checked whole. */
Test(data, group_kernel_arguments_and_block_indexes_are_checked_whole)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "df = pd.DataFrame({'k': [0, 1, 0, 1], 'v': [1., 2., 3., 4.]})\n"
	    "gb = df.groupby('k')\n"
	    "ids = gb.grouper.group_info[0]\n"
	    "class P:\n"
	    "    def __index__(self):\n"
	    "        ids[2] = 1 << 40\n"
	    "        return 1\n"
	    "    __int__ = __index__\n"
	    "r = [t(lambda: gb.shift(periods=P())), t(lambda: gb.sum(min_count=P()))]\n"
	    "n = 1 << 16\n"
	    "a = pd.arrays.SparseArray(np.r_[1.0, np.zeros(n - 1)], fill_value=0.0, kind='block')\n"
	    "a.sp_index.blengths[0] = n - 8\n"
	    "b = pd.arrays.SparseArray(np.r_[np.zeros(n - 1), 2.0], fill_value=0.0, kind='block')\n"
	    "r.append(t(lambda: a + b))\n"
	    "c = pd.arrays.SparseArray([0.0, 1, 0, 2, 3], fill_value=0.0, kind='block')\n"
	    "g2 = pd.DataFrame({'k': [0, 1, 0, 1], 'v': [1., 2., 3., 4.]}).groupby('k')\n"
	    "r += [(c + c).to_dense().tolist(), g2.shift(periods=1).v.fillna(-1).tolist(), "
	    "g2.sum(min_count=1).v.tolist()]\n"
	    "r",
	    "[\"ValueError\",\"IndexError\",\"ValueError\",[0.0,2.0,0.0,4.0,6.0],[-1.0,-1.0,1.0,2."
	    "0],[4.0,6.0]]");
	e2e_stop();
}

/* A cKDTree's and a KDTree's C reduce asks the object's __getstate__ for the state: a
 * subclass's gave indices past the data, which copy handed to the C __setstate__ and query
 * followed (SIGSEGV, memory read as points). A C __setstate__ gets no state a Python
 * __getstate__ gave; the trees copy as before. */
Test(data, a_trees_state_comes_from_its_own_reduce)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, copy\n"
	                  "from scipy.spatial import cKDTree\n"
	                  "from sklearn.neighbors import KDTree\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "        return 'ran'\n"
	                  "    except Exception as e:\n"
	                  "        return type(e).__name__\n"
	                  "X = np.random.default_rng(0).random((5, 2))\n"
	                  "node = np.array([-1, 5, 0, 0, 5, 0, 0, 0, 0], dtype=np.int64)\n"
	                  "state = (node.view('S1'), X.copy(), 5, 2, 10, X.max(0), X.min(0), "
	                  "np.full(5, 10**9, dtype=np.intp), None, None)\n"
	                  "class K(cKDTree):\n"
	                  "    def __getstate__(self):\n"
	                  "        return state\n"
	                  "from sklearn.metrics import DistanceMetric\n"
	                  "data, idx, nd, nb = KDTree(X, leaf_size=2).get_arrays()\n"
	                  "tstate = (np.array(data), np.full(len(idx), 10**9, dtype=np.intp), nd, "
	                  "nb, 2, 5, len(nd), 0, 0, 0, 0,\n"
	                  "          DistanceMetric.get_metric('euclidean'), None)\n"
	                  "class T(KDTree):\n"
	                  "    def __getstate__(self):\n"
	                  "        return tstate\n"
	                  "a, b = cKDTree(X), KDTree(X)\n"
	                  "[t(lambda: copy.copy(K(X))), t(lambda: copy.copy(T(X))),\n"
	                  " copy.copy(a).query([0.5, 0.5], k=2)[1].tolist() == a.query([0.5, 0.5], "
	                  "k=2)[1].tolist(),\n"
	                  " copy.deepcopy(b).query([[0.5, 0.5]], k=2)[1].tolist() == "
	                  "b.query([[0.5, 0.5]], k=2)[1].tolist()]",
	                  "[\"TypeError\",\"TypeError\",true,true]");
	e2e_stop();
}

/* copy.copy of an object whose __reduce__ named np.dtype with a state of the user's had copy
 * call the dtype's C __setstate__ with it: a number field and an object field at one offset
 * (an address read as an object: any memory, the real os). A built-in object's C __setstate__
 * gets only the state its own type's reduce gave; copies of dtypes and arrays work. cdist's
 * Mahalanobis VI and fcluster's monocrit and R are checked against the data (a 1x1 VI for
 * 4000 features read past it: SIGSEGV). */
Test(data, library_states_and_shapes_are_their_own)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, copy\n"
	    "from scipy.spatial.distance import cdist, pdist\n"
	    "from scipy.cluster.hierarchy import linkage, fcluster\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return type(e).__name__\n"
	    "st = (3, '|', None, ('a', 'b'), {'a': (np.dtype('u8'), 0), 'b': (np.dtype('O'), 0)},\n"
	    "      16, 1, 27)\n"
	    "class R:\n"
	    "    def __reduce__(self):\n"
	    "        return (np.dtype, ('V16', False, True), st)\n"
	    "u = np.zeros((1, 4000))\n"
	    "u[0, -1] = 1\n"
	    "X = np.array([[0.0, 0], [0, 1], [5, 5], [5, 6]])\n"
	    "Z = linkage(X, 'single')\n"
	    "m = np.ma.array(np.zeros(4))\n"
	    "class RM:\n"
	    "    def __reduce__(self):\n"
	    "        return ((lambda: m), (), (1, (4,), np.dtype(np.uint64), False, bytes(32),\n"
	    "                                  b'\\0' * 4, 0))\n"
	    "tries = [t(lambda: copy.copy(R())), t(lambda: copy.copy(RM())),\n"
	    "         t(lambda: cdist(u, np.zeros((1, 4000)), 'mahalanobis', VI=np.eye(1))),\n"
	    "         t(lambda: pdist(u, 'mahalanobis', VI=np.eye(2))),\n"
	    "         t(lambda: fcluster(Z, 1, 'monocrit', monocrit=np.zeros(1))),\n"
	    "         t(lambda: fcluster(Z, 1, 'inconsistent', R=np.zeros((1, 4))))]\n"
	    "d = np.dtype([('a', 'i4'), ('b', 'f8')])\n"
	    "[tries, str(copy.copy(d)), str(copy.deepcopy(np.dtype('O'))), "
	    "copy.copy(np.arange(3)).tolist(),\n"
	    " f'{cdist(X[:2], X[2:], \"mahalanobis\", VI=np.eye(2))[0, 0]:.3f}',\n"
	    " fcluster(Z, 2, 'maxclust').tolist()]",
	    "[[\"TypeError\",\"TypeError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\"],"
	    "\"[('a', '<i4'), ('b', '<f8')]\",\"object\",[0,1,2],\"7.071\",[1,1,2,2]]");
	e2e_stop();
}

/* A fitted tree's counts sized the numpy views its properties make of its C arrays, and
 * could be set (node_count = 1 << 44 made its value a view of all memory: the real os
 * followed); its node links, and a KD tree's index arrays, were writable or replaceable and
 * followed unchecked by predict and query (SIGSEGV). The counts and a KD or ball tree's arrays
 * are not set, the links and indices are read as copies; fitting, predicting, exporting and
 * querying work as before. */
Test(data, fitted_trees_keep_their_sizes_and_links)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.datasets import load_iris\n"
	    "from sklearn.tree import DecisionTreeClassifier, export_text\n"
	    "from sklearn.ensemble import GradientBoostingRegressor\n"
	    "from sklearn.neighbors import KDTree, KNeighborsClassifier\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'not set' in str(e) else str(e)\n"
	    "X, y = load_iris(return_X_y=True)\n"
	    "clf = DecisionTreeClassifier(random_state=0, max_depth=3).fit(X, y)\n"
	    "tr = clf.tree_\n"
	    "kt = KDTree(X, leaf_size=2)\n"
	    "tries = [t(lambda: setattr(tr, 'node_count', 1 << 44)), t(lambda: setattr(tr, "
	    "'capacity', 1)),\n"
	    "         t(lambda: setattr(tr, 'n_outputs', 1)),\n"
	    "         t(lambda: setattr(kt, 'idx_array', np.full(150, 10**10, dtype=np.intp)))]\n"
	    "tr.children_left[0] = 10**8\n"
	    "kt.get_arrays()[1][:] = 10**10\n"
	    "g = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)\n"
	    "[tries, tr.node_count, int(tr.children_left[0]), clf.predict(X[:3]).tolist(),\n"
	    " export_text(clf).splitlines()[0], kt.query(X[:1], k=2)[1].tolist(),\n"
	    " f'{g.score(X, y):.3f}', KNeighborsClassifier(algorithm='ball_tree').fit(X, "
	    "y).score(X, y)]",
	    "[[\"refused\",\"refused\",\"refused\",\"refused\"],9,1,[0,0,0],\"|--- feature_3 <= "
	    "0.80\","
	    "[[0,17]],\"0.967\",0.96666666666666667]");
	/* The nodes' thresholds, impurities and weights were views of the node array, whose
	 * .base was that whole array, writable: a feature set to any offset had
	 * compute_feature_importances add a chosen number at any address (V89a). They are copies
	 * now; predictions and importances do not follow writes into them. */
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.tree import DecisionTreeRegressor\n"
	    "X = np.arange(40.).reshape(20, 2); y = np.arange(20.)\n"
	    "m = DecisionTreeRegressor(max_depth=2).fit(X, y)\n"
	    "t = m.tree_\n"
	    "before = m.predict(X).tolist()\n"
	    "fi = t.compute_feature_importances(normalize=False).tolist()\n"
	    "views = [t.threshold.base, t.impurity.base, t.weighted_n_node_samples.base]\n"
	    "th = t.threshold\n"
	    "th[:] = 1e9\n"
	    "t.impurity[:] = 1337.0\n"
	    "t.weighted_n_node_samples[:] = -1\n"
	    "[[type(v).__name__ for v in views], m.predict(X).tolist() == before,\n"
	    " t.compute_feature_importances(normalize=False).tolist() == fi,\n"
	    " float(t.threshold[0]) != 1e9, t.node_count]",
	    "[[\"NoneType\",\"NoneType\",\"NoneType\"],true,true,true,7]");
	e2e_stop();
}

/* numpy makes arrays over memory an address names: an __array_interface__ ('data':
 * (address, read-only); also as a __getattribute__ of the code's answers it, once CPython has
 * put its plain dispatcher in the class's slot, or while it does, in the class's first lookup),
 * as_strided's strides, ctypes pointers (ndpointer(...)(address)
 * .contents, a ctypes class reached through mro() and subclassed with a py_object field): each
 * read and wrote any address of the worker, the real builtins and sys.modules among them, and
 * so did objects that keep what they are given (sklearn's Bunch, scipy's OptimizeResult,
 * SimpleNamespace, a module given state by copy, which copy now refuses outright: no dunder
 * attribute is set from a state). Now only the classes that define the
 * interface themselves answer it (ndarray, PIL's Image), none of the user's; a strided view
 * stays within its array; no ctypes object or class is made. Each attempt gets an error and
 * reads nothing (the bytes at id(1), a refcount, are not zero: a view of them would show it);
 * what ordinary code does with them keeps working. */
Test(data, numpy_views_no_memory_outside_its_arrays)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, copy, sys\n"
	    "from sklearn.utils import Bunch\n"
	    "from scipy.optimize import OptimizeResult\n"
	    "st = np.lib.stride_tricks\n"
	    "got = []\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        a = np.asarray(f())\n"
	    "        got.append(str(a.dtype) if a.dtype == object else a.tolist())\n"
	    "    except Exception as e:\n"
	    "        got.append(type(e).__name__)\n"
	    "k = '__array_' + 'interface__'\n"
	    "iface = {'data': (id(1), False), 'shape': (8,), 'typestr': '|u1', 'version': 3}\n"
	    "def own():\n"
	    "    class A:\n        __array_interface__ = iface\n"
	    "    return A()\n"
	    "class B:\n    def __getattr__(self, n):\n        return iface\n"
	    "class C:\n    pass\n"
	    "MT = type(np)\n"
	    "class Kept:\n"
	    "    def __reduce__(self):\n        return (MT, ('m',), (None, {k: iface}))\n"
	    "attempt(own)\n"
	    "kept = []\n"
	    "class Base:\n"
	    "    def __init_subclass__(cls, **kw):\n"
	    "        kept.append(cls)\n"
	    "def seen():\n"
	    "    class E(Base):\n        __array_interface__ = iface\n"
	    "    return E()\n"
	    "attempt(seen)\n"
	    "got.append(len(kept))\n"
	    "attempt(lambda: type('D', (), {k: iface})())\n"
	    "attempt(lambda: np.asarray(B()).dtype)\n"
	    "class G:\n    def __getattribute__(self, n):\n"
	    "        if n == k:\n            return iface\n        raise AttributeError(n)\n"
	    "def plain():\n    g = G()\n    try:\n        g.x\n    except AttributeError:\n"
	    "        pass\n    return g\n"
	    "attempt(plain)\n"
	    "class H:\n    def __getattribute__(self, n):\n        if n == 'first':\n"
	    "            return np.asarray(H()).dtype.kind\n"
	    "        if n == k:\n            return iface\n        raise AttributeError(n)\n"
	    "attempt(lambda: H().first)\n"
	    "attempt(lambda: (type.__setattr__(C, '__getattr__', lambda s, n: iface), C())[1])\n"
	    "attempt(lambda: Bunch(**{k: iface}))\n"
	    "attempt(lambda: OptimizeResult(**{k: iface}))\n"
	    "attempt(lambda: type(sys.implementation)(**{k: iface}))\n"
	    "attempt(lambda: copy.copy(Kept()))\n"
	    "attempt(lambda: st.DummyArray(iface))\n"
	    "attempt(lambda: st.DummyArray(iface, base=np.zeros(1, 'u1')))\n"
	    "attempt(lambda: st.as_strided(np.zeros(1), shape=(1 << 40,), strides=(1 << 20,)))\n"
	    "attempt(lambda: st.as_strided(np.zeros(4)[1:], shape=(2,), strides=(-16,)))\n"
	    "attempt(lambda: np.ctypeslib.ndpointer(np.uint8, shape=(8,))(id(1)).contents)\n"
	    "ct = np.ctypeslib.as_ctypes_type(np.float64)\n"
	    "attempt(lambda: ct(1.5))\n"
	    "attempt(lambda: type.__call__(ct, 1.5))\n"
	    "attempt(lambda: ct.mro()[1].__new__(ct))\n"
	    "def sub():\n"
	    "    class P(ct.mro()[1]):\n        _type_ = 'P'\n"
	    "    return P\n"
	    "attempt(sub)\n"
	    "attempt(lambda: np.ctypeslib.as_ctypes(np.zeros(3)))\n"
	    "attempt(lambda: np.ndarray((1,), dtype=object, buffer=bytearray(8)))\n"
	    "attempt(lambda: np.ndarray(shape=(1,), dtype=[('o', 'O')], buffer=bytearray(8)))\n"
	    "attempt(lambda: st.DummyArray({'shape': (1,), 'typestr': '|O8', 'data': (0, False)},\n"
	    "                              base=np.array([id(1)], dtype='<u8')))\n"
	    "ob = np.array([1, 'a', None], dtype=object)\n"
	    "attempt(lambda: st.as_strided(ob, shape=(2,), strides=(4,)))\n"
	    "x = np.arange(10.0)\n"
	    "got += [st.sliding_window_view(x, 3)[2].tolist(),\n"
	    "        st.as_strided(x, shape=(5,), strides=(16,)).tolist(),\n"
	    "        st.as_strided(x[9:], shape=(3,), strides=(-8,)).tolist(),\n"
	    "        np.broadcast_to(x[:2], (2, 2)).tolist(), x.ctypes.data > 0,\n"
	    "        np.asarray(Bunch(a=1)).dtype.kind, np.ma.masked_array([1, 2], mask=[0, "
	    "1]).sum(),\n"
	    "        np.ndarray((2,), dtype='u1', buffer=bytearray(b'ab')).tolist(),\n"
	    "        st.as_strided(ob, shape=(2,), strides=(16,)).tolist()]\n"
	    "got",
	    "[\"AttributeError\",\"AttributeError\",0,\"AttributeError\",\"TypeError\","
	    "\"object\",\"O\",\"TypeError\",\"object\","
	    "\"object\","
	    "\"object\",\"TypeError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\","
	    "\"PermissionError\",\"PermissionError\",\"PermissionError\",\"PermissionError\","
	    "\"PermissionError\",\"PermissionError\",\"TypeError\",\"TypeError\",\"ValueError\","
	    "\"ValueError\",[2.0,3.0,4.0],[0.0,2.0,4.0,6.0,8.0],"
	    "[9.0,8.0,7.0],[[0.0,1.0],[0.0,1.0]],true,\"O\",1,[97,98],[1,null]]");
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* ImageMath, ImageMorph and ImageCms hand their C code an image's address as a number: an
 * object of the user's whose .im.id was any number read any memory (and crashed the worker
 * at a bad one). They take images only; an image's array interface is its C image's (a
 * tobytes of the user's gave numpy an address: the bytes read are the image's zeros); a blur
 * radius past a C int crashed the worker. Ordinary image arithmetic gives what python3.11
 * gives. */
Test(data, pictures_hand_no_address_of_the_users_to_c)
{
	start_data(NULL);
	e2e_expect_result(
	    "from PIL import Image, ImageMath, ImageMorph, ImageCms\n"
	    "got = []\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        got.append(repr(f()))\n"
	    "    except TypeError:\n"
	    "        got.append('TypeError')\n"
	    "class Core:\n    id = 0x4141414141\n"
	    "class Fake:\n"
	    "    mode = 'I'\n    size = (8, 1)\n    im = Core()\n"
	    "    def load(self):\n        pass\n"
	    "class Sub(Image.Image):\n    pass\n"
	    "op = ImageMorph.MorphOp(op_name='erosion4')\n"
	    "srgb, lab = ImageCms.createProfile('sRGB'), ImageCms.createProfile('LAB')\n"
	    "tr = ImageCms.buildTransform(srgb, lab, 'RGB', 'LAB')\n"
	    "attempt(lambda: ImageMath.eval('-a', a=Fake()))\n"
	    "attempt(lambda: ImageMath.eval('-a', a=Sub()))\n"
	    "attempt(lambda: op.apply(Fake()))\n"
	    "attempt(lambda: tr.apply(Fake()))\n"
	    "import numpy as np\n"
	    "from PIL import ImageFilter\n"
	    "def lying():\n"
	    "    im = Image.new('L', (8, 1))\n"
	    "    im.tobytes = lambda *a: (id(1), False)\n"
	    "    return np.asarray(im)[0].tolist()\n"
	    "got.append(lying())\n"
	    "got.append(Image.new('RGB', (64, 64)).filter(ImageFilter.GaussianBlur(1e12)).size)\n"
	    "got.append(Image.new('RGB', (8, 8)).filter(ImageFilter.BoxBlur(1e12)).size)\n"
	    "a, b = Image.new('L', (4, 4), 10), Image.new('L', (4, 4), 3)\n"
	    "got += [list(ImageMath.eval(\"convert(a + b * 2, 'L')\", a=a, b=b).getdata())[:3],\n"
	    "        op.apply(Image.new('L', (5, 5), 255))[0], len(op.match(Image.new('L', (5, 5), "
	    "255))),\n"
	    "        tr.apply(Image.new('RGB', (2, 2), 'red')).mode]\n"
	    "got",
	    "[\"TypeError\",\"TypeError\",\"TypeError\",\"TypeError\",[0,0,0,0,0,0,0,0],[64,64],"
	    "[8,8],[16,16,16],0,9,\"LAB\"]");
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* Library functions that import the module their caller names (sympy's import_module and
 * get_class, pandas' import_optional_dependency) run with the interpreter's builtins: they
 * handed the user the real builtins, importlib or os. The user's copies of them import what the
 * user may import, and give back its proxy; get_class is checked in sympy's own code too, which
 * calls it with the names of a Predicate's handlers. */
Test(data, library_importers_hand_out_only_allowed_modules)
{
	start_data(NULL);
	e2e_expect_result(
	    "from sympy.external import import_module\n"
	    "from sympy.utilities.source import get_class\n"
	    "from pandas.io.common import import_optional_dependency as optional\n"
	    "import pandas as pd\nr = []\n"
	    "def t(f, *a):\n    try:\n        v = f(*a)\n"
	    "        r.append(v if isinstance(v, (str, float)) else type(v).__name__)\n"
	    "    except (ImportError, AttributeError) as e:\n"
	    "        r.append(type(e).__name__ + ' ' + str(e)[:22])\n"
	    "t(import_module, 'builtins')\n"
	    "t(lambda: import_module(module='importlib.machinery'))\n"
	    "t(get_class, 'os.system')\nt(get_class, 'numpy.core._multiarray_umath')\n"
	    "t(optional, 'builtins')\n"
	    /* Called by a library's loop for the user: the None sympy's code gets for a package
	     * it cannot have. */
	    "t(lambda: str(pd.Series(['os']).map(import_module).tolist()))\n"
	    "t(lambda: round(import_module('numpy').pi, 4))\nt(lambda: "
	    "get_class('numpy.linalg.norm')([3, 4]))\n"
	    "t(lambda: optional('scipy').__name__)\n"
	    "import sympy\nC = type('__call__', (str,), {})\n"
	    "t(lambda: sympy.Predicate('P', ['importlib.import_module']).eval([C('builtins')]))\n"
	    "r",
	    "[\"ModuleNotFoundError Import of builtins is \","
	    "\"ModuleNotFoundError Import of importlib.ma\","
	    "\"ModuleNotFoundError Import of os is not al\","
	    "\"AttributeError module 'numpy.core' ha\","
	    "\"ModuleNotFoundError Import of builtins is \","
	    "\"[None]\",3.1416,5.0,\"scipy\","
	    "\"ModuleNotFoundError Import of builtins is \"]");
	e2e_stop();
}

/* Cython's functions have a type of their own, whose __globals__ (func_globals), __closure__ and
 * __code__ the rules on Python's functions did not see: pandas.Timestamp.__new__'s globals held
 * the real builtins module, and through its __import__ every module. */
Test(data, cython_functions_keep_their_namespaces)
{
	start_data(NULL);
	e2e_expect_result(
	    "import operator, pandas, scipy.special, numpy\n"
	    "A = type(operator.attrgetter('x'))\n"
	    "fs = [pandas.Timestamp.__new__, scipy.special.errstate.__enter__,\n"
	    "      A('__func__')(pandas.NA.__abs__), numpy.random.default_rng(1).random]\n"
	    "r = []\n"
	    "for name in ('__globals__', 'func_globals', '__closure__', 'func_closure',\n"
	    "             '__builtins__'):\n"
	    "    for f in fs:\n"
	    "        try:\n            r.append(type(A(name)(f)).__name__)\n"
	    "        except AttributeError:\n            r.append('refused')\n"
	    "[len(r), sorted(set(r)), pandas.Timestamp('2024-01-02').day,\n"
	    " round(float(numpy.random.default_rng(1).random()), 6)]",
	    "[20,[\"refused\"],2,0.511822]");
	e2e_stop();
}

/* An array's .ctypes object held the ctypes module itself (pandas imports it): a real module,
 * and through its _sys every module, from a plain attribute. */
Test(data, an_arrays_ctypes_object_holds_no_module)
{
	start_data(NULL);
	e2e_expect_result("import numpy\na = numpy.arange(3.0)\nc = a.ctypes\n"
	                  "[type(c._ctypes).__name__, hasattr(c._ctypes, '_sys'), c.data > 0,\n"
	                  " list(c.shape), type(numpy.ma.masked.ctypes._ctypes).__name__]",
	                  "[\"_missing_ctypes\",false,true,[3],\"_missing_ctypes\"]");
	e2e_stop();
}

/* The figures a call leaves open are drawn for its result after its code ended, in the call's
 * time: the deadline coming while they were drawn made the whole call a timeout, and the files
 * its code had written were dropped (a dashboard of slow figures lost its saved files). The
 * figures not drawn yet are left out and said on stderr, and the call is the code's: its
 * result, and its files kept. */
Test(data, figures_the_deadline_cuts_off_leave_the_call_as_its_code_left_it)
{
	json_object *r;
	char path[128];

	scratch_make();
	start_data(ARGS("--workspace", scratch, "--workspace-write"));
	r = e2e_call("import matplotlib.pyplot as plt, time\n"
	             "from matplotlib.artist import Artist\n"
	             "class Slow(Artist):\n"
	             "    def draw(self, renderer):\n"
	             "        time.sleep(1)\n"
	             "with open('kept.txt', 'w') as f:\n"
	             "    f.write('kept')\n"
	             "for i in range(4):\n"
	             "    fig, ax = plt.subplots()\n"
	             "    ax.plot([1, 2])\n"
	             "    ax.add_artist(Slow())\n"
	             "time.sleep(1.5)\n"
	             "'done'",
	             "{\"timeout_seconds\":5}");
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	e2e_assert_result(r, "the code's value", "\"done\"");
	cr_assert(
	    strstr(mcpc_sc_str(r, "stderr"), "figure(s) not returned: the call's time ran out"),
	    "%s", mcpc_json(r));
	snprintf(path, sizeof(path), "%s/kept.txt", scratch);
	cr_assert_eq(access(path, F_OK), 0, "%s", mcpc_json(r));
	/* The session goes on: the figures are closed, and the next call draws its own. */
	r = e2e_call("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nlen(plt.get_fignums())",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	e2e_stop();
}

/* Library classes held real modules and namespaces as attributes: pathlib's _WindowsFlavour
 * ntpath (and through it the real os), the class matplotlib makes of its backend module's
 * variables that module's builtins and modules. An allowed module is now its proxy there, the
 * rest is gone: neither the user's code nor C code a library frame runs for it (a map of an
 * attrgetter inside collections.Counter) finds a real one. (pathlib is a workspace's module:
 * matplotlib hands on its Path only with one.) */
Test(data, library_classes_hold_no_module_for_the_user)
{
	scratch_make();
	start_data(ARGS("--workspace", scratch));
	e2e_expect_result(
	    "import matplotlib, operator, collections\n"
	    "A = type(operator.attrgetter('x'))\n"
	    "r = []\n"
	    "def t(f):\n    try:\n        r.append(repr(f())[:30])\n"
	    "    except AttributeError as e:\n        r.append(type(e).__name__)\n"
	    "flavour = A('__subclasses__')(matplotlib.Path)()[1]._flavour\n"
	    "t(lambda: flavour.ntpath)\nt(lambda: A('ntpath')(type(flavour)))\n"
	    "t(lambda: list(collections.Counter(map(A('ntpath'), [flavour]))))\n"
	    "backend = A('__objclass__')(A('__weakref__')(matplotlib.backend_bases.ShowBase))\n"
	    "made = [c for c in A('__subclasses__')(backend)() if c.__name__ == 'backend_mod'][0]\n"
	    "t(lambda: A('__builtins__')(made))\nt(lambda: A('np')(made))\nt(lambda: "
	    "A('threading')(made))\n"
	    /* Controls: the libraries use them as before. */
	    "import matplotlib.pyplot as plt\nplt.plot([1, 2])\n"
	    "r + [str(matplotlib.Path('a/b').with_suffix('.txt'))]",
	    "[\"AttributeError\",\"AttributeError\",\"AttributeError\",\"AttributeError\","
	    "\"<module 'numpy'>\",\"AttributeError\",\"a/b.txt\"]");
	e2e_stop();
	scratch_remove();
}

/* Library helpers that reached real modules for the user: scipy's unpickle_function (from the
 * copy module's dispatch table) imported any module and read any path; sympy's own code kept
 * the real matplotlib and numpy its import_module gave it as attributes of its objects (a
 * subclass's __setattr__ received them as they were set, a property of a subclass read them
 * through C code run inside sympy's read of the same name); experimental_lambdify evaluated a
 * symbol named np to numpy. sympy's import_module now gives its own code proxies too. */
Test(data, library_helpers_give_no_real_module)
{
	start_data(NULL);
	e2e_expect_result(
	    "import copy, operator, scipy.fft, sympy, numpy as np\n"
	    "from sympy.plotting.experimental_lambdify import vectorized_lambdify, "
	    "experimental_lambdify\n"
	    "from sympy.plotting.plot import MatplotlibBackend\n"
	    "A = type(operator.attrgetter('x'))\n"
	    "r = []\n"
	    "def t(f):\n    try:\n        r.append(repr(f())[:24])\n"
	    "    except (AttributeError, ImportError) as e:\n        r.append(type(e).__name__)\n"
	    "u = copy.dispatch_table[type(scipy.fft.fft)](scipy.fft.fft)[0]\n"
	    "t(lambda: u('sys', 'modules', None))\nt(lambda: u('builtins', 'open', None))\n"
	    "x = sympy.Symbol('x')\n"
	    "p = sympy.plot(x, show=False)\nb = p.backend(p)\n"
	    "t(lambda: b.matplotlib)\nt(lambda: A('__dict__')(b)['cm'])\n"
	    "got = []\n"
	    "class V(vectorized_lambdify):\n"
	    "    def __setattr__(self, name, value):\n        got.append(value)\n"
	    "class B(MatplotlibBackend):\n"
	    "    def __setattr__(self, name, value):\n        got.append(value)\n"
	    "for make in (lambda: V([x], x), lambda: B(p)):\n"
	    "    try:\n        make()\n    except Exception:\n        pass\n"
	    "r.append(sorted(set(repr(g) for g in got if 'module' in repr(g))))\n"
	    "v = vectorized_lambdify([x], sympy.sin(x))\nt(lambda: v.np)\n"
	    "t(lambda: experimental_lambdify([x], sympy.Symbol('np'), use_np=True)(0))\n"
	    /* Controls: what the helpers are for still works. */
	    "r + [copy.deepcopy(scipy.fft.fft) is scipy.fft.fft, "
	    "round(float(v(np.array([0.5]))[0]), 4)]",
	    "[\"ImportError\",\"ImportError\",\"<module 'matplotlib'>\",\"<module "
	    "'matplotlib.cm'>\","
	    "[\"<module 'matplotlib'>\",\"<module 'numpy'>\"],\"<module 'numpy'>\",\"<module "
	    "'numpy'>\","
	    "true,0.4794]");
	e2e_stop();
}

/* warnings.catch_warnings kept sys.modules['warnings'] on each instance: the real module, and
 * its sys. It keeps a stand-in that reaches only what the class uses. */
Test(data, catch_warnings_holds_no_module)
{
	start_data(NULL);
	e2e_expect_result(
	    "import warnings, numpy as np\nr = []\n"
	    "m = warnings.catch_warnings()._module\n"
	    "for name in ('sys', 'warn', '__dict__'):\n"
	    "    try:\n        getattr(m, name)\n        r.append('read ' + name)\n"
	    "    except AttributeError:\n        r.append('no ' + name)\n"
	    /* Controls: recording, filtering and restoring work. */
	    "with warnings.catch_warnings(record=True) as w:\n"
	    "    warnings.simplefilter('always')\n    warnings.warn('hello')\n"
	    "with warnings.catch_warnings():\n"
	    "    warnings.simplefilter('ignore')\n    np.array([1.0]) / 0\n"
	    "r + [repr(m), str(w[0].message), repr(warnings.catch_warnings())]",
	    "[\"no sys\",\"no warn\",\"no __dict__\",\"<module 'warnings'>\",\"hello\","
	    "\"catch_warnings()\"]");
	e2e_stop();
}

/* Copies of the libraries' objects ask object.__reduce_ex__ for their state, which reads it
 * through __getstate__ (guarded for classes and modules only). */
Test(data, library_objects_copy)
{
	start_data(NULL);
	e2e_expect_result(
	    "import copy, numpy as np, pandas as pd, sympy\n"
	    "a = np.arange(5)\ndf = pd.DataFrame({'a': [1, 2]})\n"
	    "[int(copy.deepcopy(a).sum()), int(copy.deepcopy(df).a.sum()),\n"
	    " float(copy.copy(np.float64(2.5))), str(copy.deepcopy(sympy.Symbol('x') + 1))]",
	    "[10,3,2.5,\"x + 1\"]");
	e2e_stop();
}

/* An AttributeError keeps no real module in `obj` with the data stack loaded (sys.modules
 * there holds the libraries' real modules, numpy's among them). */
Test(data, attribute_errors_carry_no_real_module)
{
	start_data(NULL);
	e2e_expect_result("import enum, numpy\nr = []\n"
	                  "for m in ('sys', 'numpy.core.multiarray', 'os'):\n"
	                  "    try:\n        enum.Enum._convert_('X', m, bool)\n"
	                  "    except AttributeError as e:\n        r.append(repr(e.obj))\n"
	                  "try:\n    numpy.nope\nexcept AttributeError as e:\n"
	                  "    r.append(repr(e.obj))\nr",
	                  "[\"None\",\"None\",\"None\",\"<module 'numpy'>\"]");
	e2e_stop();
}

/* Code a served module generates while it is imported runs in a fresh namespace with the
 * sandbox's builtins: its text may be built from objects the user's code changed. A property
 * for dataclasses.Field.name (set from a library's frame, then past the rule on libraries'
 * classes; refused by it now) gave a field's name a __format__ that wrote a statement into the
 * __init__ that dataclasses made for numpy.array_api's finfo_object, which ran in that module's
 * namespace (its real modules, the real builtins). */
Test(data, code_an_import_generates_gets_a_fresh_namespace)
{
	start_data(NULL);
	e2e_expect_result("import dataclasses, operator\nMC = type(operator.methodcaller('x'))\n"
	                  "F = dataclasses.Field\norig = F.name\nn = [0]\n"
	                  "class S(str):\n    def __format__(self, spec):\n        n[0] += 1\n"
	                  "        if n[0] == 4:\n"
	                  "            return ('smallest_normal\\n dataclass.leak = '\n"
	                  "                    '__import__(\"sys\")\\n def _g():\\n  0')\n"
	                  "        return str(self)\n"
	                  "def get(s):\n    return MC('__get__', s)(orig)\n"
	                  "def put(s, v):\n    if type(v) is str and v == 'smallest_normal':\n"
	                  "        v = S(v)\n    MC('__set__', s, v)(orig)\n"
	                  "import statistics, itertools\n"
	                  "def lib_set(v):\n    try:\n"
	                  "        statistics.mean(itertools.starmap(setattr, [(F, 'name', v)]))\n"
	                  "    except (TypeError, PermissionError) as e:\n"
	                  "        refused.append(type(e).__name__)\n"
	                  "refused = []\n"
	                  "lib_set(property(get, put))\nerr = None\n"
	                  "try:\n    import numpy.array_api\nexcept NameError as e:\n"
	                  "    err = str(e)\nfinally:\n    lib_set(orig)\n"
	                  "[n[0] >= 4, err, getattr(dataclasses.dataclass, 'leak', None), refused]",
	                  "[false,null,null,[\"PermissionError\",\"PermissionError\"]]");
	e2e_stop();
}

/* The refusal of a library function's change of a library's class, for the user's code. */
#define LIB_CHANGE                                                                                 \
	"cannot be changed in the sandbox: it is a library's class, and a library function "       \
	"changes "                                                                                 \
	"it for the user's code (subclass it to change it)"

/* The parser builds a program's tree from the classes of the ast module, and the layer rewrites
 * a program's imports through their objects, in C. sympy hands out their instances: a class
 * changed by a call (a property for a field, a new __init__ or __setattr__) ran the user's code
 * in the middle of that, which could free what it held or give it a bytes for a name. The
 * classes cannot be changed, not even from a library's frame (statistics iterating a starmap of
 * setattr: the first rule refuses it; the classes are immutable besides); subclasses of them
 * can. */
Test(data, the_ast_classes_cannot_be_changed)
{
	start_data(NULL);
	e2e_expect_result(
	    "from sympy.parsing.sympy_parser import evaluateFalse\n"
	    "E, N = type(evaluateFalse('1')), type(evaluateFalse('x').body)\nlog, out = [], []\n"
	    "def get(self):\n    log.append('get')\n    return b'__import__'\n"
	    "def put(self, v):\n    log.append('set')\n    self.v_ = v\n"
	    "def init(self, *a, **k):\n    log.append('init')\n"
	    "import statistics, itertools\n"
	    "for c, n, v in [(E, '__init__', init), (N, 'id', property(get, put)),\n"
	    "                (N, '__setattr__', lambda s, k, v: log.append(k)),\n"
	    "                (E, '__new__', lambda *a: log.append(a))]:\n"
	    "    try:\n"
	    "        statistics.mean(itertools.starmap(setattr, [(c, n, v)]))\n"
	    "    except (TypeError, PermissionError) as e:\n        out.append(str(e))\n"
	    "class S(N):\n    pass\nS.id = property(get, put)\ns = S()\ns.id = 'y'\n"
	    "out + [s.id.decode(), log]",
	    "[\"Expression.__init__ " LIB_CHANGE "\",\"Name.id " LIB_CHANGE "\","
	    "\"Name.__setattr__ " LIB_CHANGE "\",\"Expression.__new__ " LIB_CHANGE "\","
	    "\"__import__\",[\"set\",\"get\"]]");
	e2e_ok("log.clear()\n0");
	/* Programs built through the ast objects (imports, and names beyond ASCII), and the
	 * warm-up of the session's next process, which builds its snippet the same way: time for
	 * it before each call. */
	e2e_expect_result("import math as m\nfrom math import pi as p, e\n[m.pi == p, round(e, 3)]",
	                  "[true,2.718]");
	usleep(700 * 1000);
	e2e_expect_result("from sympy.parsing.sympy_parser import parse_expr\n"
	                  "\u00e9 = str(parse_expr('2*y + y', evaluate=False))\n\u00e9",
	                  "\"y + 2*y\"");
	usleep(700 * 1000);
	e2e_expect_error("import math\n__import__('math')", "NameError");
	e2e_expect_result("len(log)", "0");
	e2e_stop();
}

/* matplotlib's Agg renderer (fig.canvas.get_renderer()._renderer) trusted sizes it was given:
 * draw_quad_mesh read the coordinates for the mesh width and height it was told (a 2x2x2 array
 * drawn as a 3000 by 3000 mesh: read past it, SIGSEGV), draw_image read 4 bytes a pixel of an
 * (h, w, 1) image (past it) and draw_path_collection divided by the number of antialiasing
 * flags (none: SIGFPE). Each is refused now (ValueError); a figure with a pcolormesh, an image
 * and a scatter still renders to PNG as before. */
Test(data, the_agg_renderer_checks_its_arrays)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, numpy as np, matplotlib.pyplot as plt\n"
	    "from matplotlib.path import Path\n"
	    "from matplotlib.transforms import Affine2D, IdentityTransform\n"
	    "from PIL import Image\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "fig = plt.figure(figsize=(1, 1), dpi=50)\n"
	    "R = fig.canvas.get_renderer()\n"
	    "r, gc, I = R._renderer, R.new_gc(), IdentityTransform()\n"
	    "out = [t(lambda: r.draw_quad_mesh(gc, Affine2D(), 3000, 3000, np.zeros((2, 2, 2)),\n"
	    "                                  np.zeros((1, 2)), I, np.ones((1, 4)), False, "
	    "np.ones((1, 4)))),\n"
	    "       t(lambda: r.draw_image(gc, 0, 0, np.zeros((50, 1 << 20, 1), np.uint8))),\n"
	    "       t(lambda: r.draw_path_collection(gc, Affine2D(), [Path([[0, 0], [1, 1]])],\n"
	    "                                        np.zeros((0, 3, 3)), np.zeros((1, 2)), I,\n"
	    "                                        np.ones((1, 4)), np.ones((1, 4)), "
	    "np.ones(1),\n"
	    "                                        [(0.0, None)], np.zeros(0, bool), None, "
	    "'screen'))]\n"
	    "plt.close('all')\n"
	    "fig, ax = plt.subplots(1, 2, figsize=(4, 2), dpi=50)\n"
	    "ax[0].pcolormesh(np.arange(12.0).reshape(3, 4), cmap='gray')\n"
	    "ax[1].imshow(np.eye(4), cmap='gray')\n"
	    "ax[1].scatter([1, 2], [1, 2], c='red')\n"
	    "for a in ax:\n"
	    "    a.axis('off')\n"
	    "ax[0].set_position([0, 0, 0.5, 1])\n"
	    "b = io.BytesIO()\n"
	    "fig.savefig(b, format='png')\n"
	    "plt.close(fig)\n"
	    "a = np.asarray(Image.open(b).convert('L'))\n"
	    "out + [list(a.shape), int(a[95, 5]), int(a[5, 95])]",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",[100,200],0,255]");
	e2e_stop();
}

/* Sizes and coordinates compiled code took as they came: the Agg renderer's copy_from_bbox sized
 * a region width * height * 4 in C ints (2**30 wide wrapped to an empty block still exported as
 * 4 GiB, read and written through numpy: a full escape shown), FT2Image(2**32, 2**32) wrapped to
 * a NULL buffer exported as 2**64 bytes (memoryview read and wrote any address), an image
 * filter's radius of 2**23 sized a table to nothing (SIGSEGV), ndimage read a NaN coordinate of
 * the wrap, reflect and mirror modes as an index (1e300 in 'nearest' mode read beside the
 * input) and sized a filter's line buffer 8 * (length +
 * size) in 64 bits (a size of 2**62: a few bytes, written far past). Each is refused; blitting,
 * mathtext, sinc images, ndimage's shifts, maps and filters answer as before. */
Test(data, compiled_sizes_and_coordinates_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, matplotlib.pyplot as plt\n"
	    "from matplotlib import ft2font\nfrom scipy import ndimage\n"
	    "out = []\n"
	    "def t(f):\n    try:\n        out.append(f())\n"
	    "    except ValueError:\n        out.append('ValueError')\n"
	    "fig, ax = plt.subplots(figsize=(2, 2), dpi=50)\n"
	    "ax.set_title(r'$\\frac{a}{b}$')\nax.imshow(np.eye(8), interpolation='sinc')\n"
	    "fig.canvas.draw()\n"
	    "bg = fig.canvas.copy_from_bbox(ax.bbox)\nfig.canvas.restore_region(bg)\n"
	    "r = fig.canvas.get_renderer()._renderer\n"
	    "t(lambda: list(np.asarray(bg).shape[2:]))\n"
	    "t(lambda: r.copy_from_bbox([0, 0, 2**30, 1]))\n"
	    "t(lambda: r.copy_from_bbox([-2**29, 0, 2**29, 1]))\n"
	    "t(lambda: r.copy_from_bbox([0, 0, float('nan'), 1]))\n"
	    "t(lambda: list(np.asarray(ft2font.FT2Image(3, 2)).shape))\n"
	    "t(lambda: ft2font.FT2Image(2**32, 2**32))\n"
	    "ax.images[0].set_filterrad(2**23)\n"
	    "t(lambda: fig.canvas.draw())\n"
	    "plt.close('all')\n"
	    "a = np.arange(20.0).reshape(4, 5)\n"
	    "t(lambda: ndimage.shift(a, (0, 1), order=0, mode='wrap')[0, 0])\n"
	    "t(lambda: ndimage.shift(a, (0, np.nan), mode='wrap'))\n"
	    "t(lambda: ndimage.map_coordinates(a, [[np.nan], [1]], mode='reflect'))\n"
	    "t(lambda: ndimage.map_coordinates(a, [[1e300], [1]], order=5, mode='nearest'))\n"
	    "t(lambda: ndimage.geometric_transform(a, lambda c: (np.nan, c[1]), mode='mirror'))\n"
	    "t(lambda: ndimage.uniform_filter1d(np.arange(5.0), 3)[1])\n"
	    "t(lambda: ndimage.uniform_filter1d(np.arange(5.0), 2**62))\n"
	    "t(lambda: ndimage.maximum_filter1d(np.arange(5.0), 2**62))\n"
	    "out",
	    "[[4],\"ValueError\",\"ValueError\",\"ValueError\",[2,3],\"ValueError\",\"ValueError\","
	    "3.0,\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",1.0,\"ValueError\","
	    "\"ValueError\"]");
	e2e_stop();
}

/* Compiled code worked on arrays an object keeps where the code reaches them: SuperLU's
 * perm_r and perm_c were its own C arrays (solve() wrote and read at the indices they held: a
 * full escape shown), cKDTree's data and indices the very arrays its queries read (any address
 * read; its nodes' indices were views of the same: they are copies, as a read-only view was one
 * write through read-only memory from the tree's), Sobol's state plain attributes its compiled
 * _draw trusted (an XOR past _quasi: a full escape shown). They are copies now, read-only, or
 * checked; splu's panel_size, a query's k and qmc's
 * workers are bounded. A BufferRegion made by its class, and a C++ trifinder made by the code
 * before its tree was built, read through NULL: neither is made by the code. Factorising,
 * trees, Sobol' sequences and trifinders answer as before. */
Test(data, compiled_state_is_copied_or_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from scipy.sparse.linalg import splu\nfrom scipy.spatial import cKDTree\n"
	    "from scipy.stats import qmc\n"
	    "out = []\n"
	    "def t(f):\n    try:\n        out.append(f())\n"
	    "    except ValueError:\n        out.append('ValueError')\n"
	    "A = sp.csc_matrix(np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]]))\n"
	    "lu = splu(A)\nlu.perm_r[:] = 2**30\nlu.perm_c[:] = -2**30\n"
	    "t(lambda: [lu.perm_r.tolist(), lu.solve(np.array([1.0, 2, 3])).round(4).tolist()])\n"
	    "t(lambda: splu(A, panel_size=2**28))\n"
	    "t(lambda: splu(A, None, None, None, None, {'PanelSize': 2**28}))\n"
	    "tree = cKDTree(np.arange(10.0).reshape(5, 2))\n"
	    "tree.indices[:] = 10**6\ntree.data[:] = 7\n"
	    "t(lambda: [tree.indices.tolist(), tree.query([2.0, 3.0])[1]])\n"
	    "t(lambda: tree.query([2.0, 3.0], k=[0, 2]))\n"
	    "t(lambda: tree.query([2.0, 3.0], k=[0.5]))\n"
	    "node = tree.tree.indices\nnode[:] = 10**6\n"
	    "t(lambda: [tree.tree.indices.tolist(), int(tree.query([2.0, 3.0])[1])])\n"
	    "s = qmc.Sobol(d=2, seed=1)\nfirst = s.random(4)\n"
	    "s._quasi = np.zeros(1, np.uint64)\ns.d = 50\n"
	    "t(lambda: s.random(4))\n"
	    "t(lambda: qmc.Sobol(d=2, seed=1).random(4).tolist() == first.tolist())\n"
	    "t(lambda: round(qmc.discrepancy(first, method='WD', workers=2**31), 9) ==\n"
	    "          round(qmc.discrepancy(first, method='WD'), 9))\n"
	    "import matplotlib.pyplot as plt, matplotlib.tri as mtri\n"
	    "fig = plt.figure(figsize=(1, 1), dpi=20)\nfig.canvas.draw()\n"
	    "tri = mtri.Triangulation(np.array([0.0, 1, 0, 1]), np.array([0.0, 0, 1, 1]))\n"
	    "for f in (lambda: type(fig.canvas.copy_from_bbox(fig.bbox))(),\n"
	    "          lambda: type(tri.get_trifinder()._cpp_trifinder)(\n"
	    "              tri.get_cpp_triangulation()).find_many(np.zeros(1), np.zeros(1))):\n"
	    "    try:\n        f()\n        out.append('made')\n"
	    "    except TypeError:\n        out.append('TypeError')\n"
	    "class Lazy(mtri.TrapezoidMapTriFinder):\n    def _initialize(self):\n        pass\n"
	    "out + [int(tri.get_trifinder()(0.7, 0.1)), int(Lazy(tri)(0.7, 0.1))]",
	    "[[[0,1,2],[0.2222,0.1111,1.4444]],\"ValueError\",\"ValueError\",[[0,1,2,3,4],1],"
	    "\"ValueError\",\"ValueError\",[[0,1,2,3,4],1],\"ValueError\",true,true,\"TypeError\","
	    "\"TypeError\",1,1]");
	e2e_stop();
}

/* Compiled code that counts a callback's arguments by its code (f2py's: COBYLA's calcfc, a
 * function scipy makes and hands it) was refused the read, and called it with none: every
 * COBYLA minimization failed with a TypeError. The library frame that made the function may
 * have its code read for it. */
Test(data, cobyla_and_other_compiled_callbacks_run)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "from scipy.optimize import minimize, fmin_cobyla\n"
	                  "from scipy.integrate import ode\n"
	                  "f = lambda x: (x[0] - 1) ** 2 + (x[1] + 2) ** 2\n"
	                  "r = minimize(f, [0, 0], method='COBYLA')\n"
	                  "c = minimize(f, [0, 0], method='COBYLA', constraints=[{'type': 'ineq', "
	                  "'fun': lambda x: 0.5 - x[0]}])\n"
	                  "g = fmin_cobyla(lambda x: x[0] ** 2 + x[1] ** 2, [1.0, 1.0], "
	                  "[lambda x: x[0] + x[1] - 1], rhoend=1e-7)\n"
	                  "o = ode(lambda t, y, k: [-k * y[0]]).set_integrator('vode')\n"
	                  "o.set_initial_value([1.0], 0).set_f_params(0.5)\n"
	                  "[r.x.round(3).tolist(), bool(r.success), c.x.round(3).tolist(), "
	                  "g.round(3).tolist(), o.integrate(1.0).round(5).tolist()]",
	                  "[[1.0,-2.0],true,[0.5,-2.0],[0.5,0.5],[0.60653]]");
	e2e_stop();
}

/* Other ways to the same kernels, found checking the first fixes: a Generator subclass whose
 * bit_generator is a new MT19937 at each read (freed once the sampler has its pointer: it drew
 * through function pointers laid there), a DIA subclass whose tocsr answers an edited CSR
 * (scipy converts through it), scipy's public metric wrappers (the Mahalanobis kernel without
 * cdist), Halton's num_generated below 0 (the permutations read before their table),
 * X_norm_squared and Y_norm_squared shorter than the rows (read past them), a weighted window
 * of 0 (SIGFPE), and the hooks object gives every class (__setattr__, __eq__) set by the
 * executor on a class matplotlib made for itself. Ordinary uses answer as before. */
Test(data, other_ways_to_the_same_kernels_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, scipy.sparse as sp, concurrent.futures\n"
	    "from scipy import stats\n"
	    "from scipy.stats import qmc\n"
	    "from scipy.sparse import csgraph\n"
	    "from scipy.spatial.distance import CDistMetricWrapper, PDistMetricWrapper\n"
	    "from sklearn.metrics import pairwise_distances_argmin_min\n" OUT_OR_ERROR
	    "class G(np.random.Generator):\n"
	    "    @property\n"
	    "    def bit_generator(self):\n"
	    "        return np.random.MT19937(5)\n"
	    "g = G(np.random.PCG64(1))\n"
	    "t(lambda: int(stats.random_table([200, 128], [128, 200]).rvs(method='boyett', "
	    "random_state=g).sum()))\n"
	    "g2 = G(np.random.PCG64(7))\n"
	    "t(lambda: stats.norm.rvs(size=2, random_state=g2).round(4).tolist() == "
	    "stats.norm.rvs(size=2, random_state=np.random.default_rng(7)).round(4).tolist())\n"
	    "bad = sp.csr_matrix(np.ones((4, 4)))\n"
	    "bad.indices[1] = 10**8\n"
	    "class D(sp.dia_matrix):\n"
	    "    def tocsr(self, copy=False):\n"
	    "        return bad\n"
	    "t(lambda: csgraph.minimum_spanning_tree(D(np.eye(4))))\n"
	    "t(lambda: csgraph.minimum_spanning_tree(sp.dia_matrix(np.eye(4) + np.eye(4, "
	    "k=1))).nnz)\n"
	    "X = np.arange(12.0).reshape(3, 4) ** 1.5\n"
	    "t(lambda: CDistMetricWrapper('mahalanobis')(X, X, VI=np.eye(1)))\n"
	    "t(lambda: PDistMetricWrapper('mahalanobis')(X, VI=np.eye(1)))\n"
	    "h = qmc.Halton(d=1, seed=1)\n"
	    "h.num_generated = -100\n"
	    "t(lambda: h.random(4))\n"
	    "t(lambda: qmc.Halton(d=2, seed=1).random(2).shape)\n"
	    "Y = np.arange(8.0).reshape(4, 2)\n"
	    "t(lambda: pairwise_distances_argmin_min(Y[:1], Y, metric_kwargs={'Y_norm_squared': "
	    "np.zeros(1)}))\n"
	    "t(lambda: pairwise_distances_argmin_min(Y[:1], Y)[0].tolist())\n"
	    "s = pd.Series(np.arange(10.0))\n"
	    "t(lambda: s.rolling(0, win_type='boxcar').var())\n"
	    "t(lambda: s.rolling(3, win_type='boxcar').var().fillna(-1).tolist()[:3])\n"
	    "import matplotlib.pyplot as plt\n"
	    "C = type(plt.figure().add_subplot(projection='polar'))\n"
	    "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	    "    for name in ('__setattr__', '__eq__', '__init_subclass__'):\n"
	    "        t(lambda: ex.submit(setattr, C, name, lambda *a: 42).result())\n"
	    "out",
	    "[328,true,\"ValueError\",3,\"ValueError\",\"ValueError\",\"ValueError\",[2,2],"
	    "\"ValueError\",[0],\"ValueError\",[-1.0,-1.0,1.0],\"PermissionError\","
	    "\"PermissionError\",\"PermissionError\"]");
	e2e_stop();
}

/* And the next ways: a sparse matrix's arrays edited after the check, while the consumer
 * converts its other arguments (dijkstra's indices' __array__: the checked matrix now holds
 * copies), a fitted histogram booster's bin thresholds shorter than X's columns (the words
 * past the list taken for arrays: any address read), a class matplotlib made for itself
 * given the __module__ that the dunder rule trusts, a RandomState subclass whose randint
 * indexed scikit-learn's compiled sampling pool (any offset read and written), and
 * least_squares' sparsity pattern with an edited index (read past: abort). */
Test(data, the_next_ways_to_the_same_kernels_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp, concurrent.futures\n"
	    "from scipy.sparse import csgraph\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor\n" OUT_OR_ERROR
	    "A = sp.csr_matrix(np.ones((4, 4)))\n"
	    "ind = A.indices\n"
	    "class Late:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        ind[1] = 10**8\n"
	    "        return np.array([0])\n"
	    "t(lambda: csgraph.dijkstra(A, indices=Late()).tolist())\n"
	    "X = np.random.default_rng(0).normal(size=(100, 3))\n"
	    "m = HistGradientBoostingRegressor(max_iter=5).fit(X, X[:, 0])\n"
	    "bm = m._bin_mapper\n"
	    "bm.bin_thresholds_ = bm.bin_thresholds_[:2]\n"
	    "t(lambda: bm.transform(X[:3]))\n"
	    "t(lambda: HistGradientBoostingRegressor(max_iter=5).fit(X, X[:, "
	    "0])._bin_mapper.transform(X[:2]).shape)\n"
	    "import matplotlib.pyplot as plt\n"
	    "C = type(plt.figure().add_subplot(projection='polar'))\n"
	    "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	    "    t(lambda: ex.submit(setattr, C, '__module__', 'types').result())\n"
	    "from sklearn.utils.random import sample_without_replacement\n"
	    "class R(np.random.RandomState):\n"
	    "    def randint(self, *a, **k):\n"
	    "        return -5\n"
	    "t(lambda: [sorted(sample_without_replacement(10, 3, method='pool', "
	    "random_state=s)) for s in (R(0), np.random.RandomState(0))])\n"
	    "from scipy.optimize import least_squares\n"
	    "f = lambda x: np.r_[x[0] - 1, x[1] - 2 * x[0], x[2] + x[1]]\n"
	    "S = sp.csc_matrix(np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]]))\n"
	    "t(lambda: least_squares(f, np.zeros(3), jac_sparsity=S).x.round(4).tolist())\n"
	    "S.indices[0] = 10**8\n"
	    "t(lambda: least_squares(f, np.zeros(3), jac_sparsity=S))\n"
	    "out",
	    "[[[0.0,1.0,1.0,1.0]],\"ValueError\",[2,3],\"PermissionError\","
	    "[[0,3,5],[0,3,5]],[1.0,2.0,-2.0],\"ValueError\"]");
	e2e_stop();
}

/* What a check saw is what the compiled code reads. Wrappers checked the caller's own arrays
 * and passed them on with the other arguments unconverted, and the compiled function then ran
 * the code's __float__ or __int__ on one of those: enet_path's alpha reshaped X (w written
 * past: any memory), SVR's degree rewrote support_ (a read by address), the reductions' k,
 * gradient boosting's scale and the histogram predictor's n_threads the same; a check asked
 * the object itself (a sparse matrix's own check_format, a SparseArray index's npoints, an
 * ndarray subclass's shape: cdist's out and ndimage's outputs written past); a BSpline
 * subclass unpacked to any (t, c, k); a connectivity graph's own __add__ and rows reached the
 * clustering kernels; GradientBoosting's sample mask took any random state. Each is refused
 * now, or works on what was checked, with the honest use unchanged. */
Test(data, what_a_check_saw_is_what_the_compiled_code_reads)
{
	start_data(NULL);
	e2e_expect_result(
	    "import warnings\n"
	    "import numpy as np, scipy.sparse as sp\n"
	    "from sklearn.linear_model import enet_path\n"
	    "warnings.filterwarnings('ignore')\n" OUT_OR_ERROR "buf = np.zeros(16)\n"
	    "w = buf[:1]\n"
	    "n = 6\n"
	    "X = np.zeros((n, 1), order='F')\n"
	    "X[5, 0] = 1.0\n"
	    "y = np.zeros(n)\n"
	    "y[0] = 1234.5\n"
	    "class Reg:\n"
	    "    def __float__(self):\n"
	    "        X.shape = (1, n)\n"
	    "        return 0.0\n"
	    "    def __mul__(self, o):\n"
	    "        return self\n"
	    "    __rmul__ = __mul__\n"
	    "    def __rsub__(self, o):\n"
	    "        return self\n"
	    "try:\n"
	    "    enet_path(X, y, l1_ratio=Reg(), alphas=[1.0], precompute=False, "
	    "check_input=False, coef_init=w, max_iter=1)\n"
	    "except Exception:\n"
	    "    pass\n"
	    "out.append(buf[1:].tolist() == [0.0] * 15)\n"
	    "from sklearn.utils import sparsefuncs_fast as f\n"
	    "o = np.zeros((1, 4))\n"
	    "M = sp.csr_matrix(np.ones((1, 1)))\n"
	    "M.check_format = lambda *a, **k: None\n"
	    "M.indices[0] = 10**6\n"
	    "t(lambda: f.assign_rows_csr(M, np.array([0]), np.array([0]), o))\n"
	    "M = sp.csr_matrix(np.ones((1, 1)))\n"
	    "M._swap = lambda x: x\n"
	    "t(lambda: f.csr_row_norms(M))\n"
	    "t(lambda: f.csr_row_norms(sp.csr_matrix(np.array([[3.0, 4.0]]))).tolist())\n"
	    "def lie():\n"
	    "    class Lie(np.ndarray):\n"
	    "        @property\n"
	    "        def shape(self):\n"
	    "            return (2, 2)\n"
	    "    return 'made'\n"
	    "t(lie)\n"
	    "class Fine(np.ndarray):\n"
	    "    info = 'x'\n"
	    "out.append(np.arange(3).view(Fine)[1:].info)\n"
	    "import pandas as pd\n"
	    "a = pd.arrays.SparseArray([1.0, 0.0, 2.0, 3.0], fill_value=0.0)\n"
	    "b = pd.arrays.SparseArray([0.0, 1.0, 0.0, 0.0], fill_value=0.0)\n"
	    "t(lambda: (a + b).tolist())\n"
	    "class Idx(type(a.sp_index)):\n"
	    "    @property\n"
	    "    def npoints(self):\n"
	    "        return 2\n"
	    "a._sparse_index = Idx(4, np.array([0, 2, 3], dtype=np.int32))\n"
	    "a._sparse_values = np.array([1.0, 2.0])\n"
	    "t(lambda: (a + b).tolist())\n"
	    "from scipy.interpolate import BSpline, UnivariateSpline\n"
	    "class B(BSpline):\n"
	    "    def __iter__(self):\n"
	    "        return iter((np.linspace(0, 1, 8), np.ones(4), 50))\n"
	    "xs = np.linspace(0, 1, 20)\n"
	    "s = UnivariateSpline(xs, xs ** 2)\n"
	    "t(lambda: round(float(s(0.5)), 6))\n"
	    "s._eval_args = B(np.linspace(0, 1, 8), np.ones(4), 3)\n"
	    "t(lambda: s(0.5))\n"
	    "from sklearn.cluster import ward_tree\n"
	    "Xc = np.random.default_rng(0).normal(size=(5, 2))\n"
	    "class C:\n"
	    "    shape = (5, 5)\n"
	    "    def __add__(self, o):\n"
	    "        L = sp.lil_matrix((5, 5))\n"
	    "        L.rows[0] = [10**6]\n"
	    "        L.data[0] = [1.0]\n"
	    "        return L\n"
	    "    T = property(lambda self: self)\n"
	    "t(lambda: ward_tree(Xc, connectivity=C())[1])\n"
	    "t(lambda: ward_tree(Xc, connectivity=sp.eye(5, 5, 1) + sp.eye(5, 5, -1))[1])\n"
	    "from sklearn.ensemble import GradientBoostingRegressor\n"
	    "class Stop(Exception):\n"
	    "    pass\n"
	    "class Xs:\n"
	    "    shape = (64,)\n"
	    "class Ys:\n"
	    "    def __getitem__(self, k):\n"
	    "        raise Stop\n"
	    "class U:\n"
	    "    def uniform(self, size=None):\n"
	    "        return np.zeros(1)\n"
	    "gb = GradientBoostingRegressor(subsample=0.5, n_estimators=1)\n"
	    "gb._loss = None\n"
	    "def fit():\n"
	    "    try:\n"
	    "        gb._fit_stages(Xs(), Ys(), None, None, U(), None, None, None)\n"
	    "    except Stop:\n"
	    "        return 'read'\n"
	    "t(fit)\n"
	    "t(lambda: GradientBoostingRegressor(subsample=0.5, n_estimators=3, "
	    "random_state=0).fit(Xc, Xc[:, 0]).n_estimators_)\n"
	    "out",
	    "[true,\"TypeError\",\"TypeError\",[25.0],\"TypeError\",\"x\",[1.0,1.0,2.0,3.0],"
	    "\"ValueError\",0.25,\"ValueError\",\"TypeError\",1,\"ValueError\",3]");
	e2e_stop();
}

/* A finalizer of the code's runs wherever its object dies: inside a late import too (the
 * collector's tick between two instructions of the imported module). One that is C code (a
 * partial of setattr) has no frame, and its write was taken for the imported module's (Axes'
 * get_title replaced); one that hands the write to a library frame (contextlib's callbacks)
 * set hooks on a class matplotlib made for itself, under the exemption for classes an import
 * finishes. The collector's ticks now collect in the code's own frames only (the finalizers run
 * after the imports, at the code's gc.collect() at the latest): neither changes the class, and
 * the imports work. */
Test(data, a_finalizer_run_inside_an_import_changes_no_library_class)
{
	start_data(NULL);
	e2e_expect_result(
	    "import gc, importlib, functools, contextlib\n"
	    "import matplotlib\n"
	    "matplotlib.use('Agg')\n"
	    "import matplotlib.axes\n"
	    "import matplotlib.pyplot as plt\n"
	    "A = matplotlib.axes.Axes\n"
	    "P = type(plt.figure().add_subplot(projection='polar'))\n"
	    "def mine(self, *a, **k):\n"
	    "    return 'the code'\n"
	    "class PB:\n"
	    "    __del__ = functools.partial(setattr, A, 'get_title', mine)\n"
	    "class Hook:\n"
	    "    def __del__(self):\n"
	    "        with contextlib.ExitStack() as s:\n"
	    "            s.callback(setattr, P, '__eq__', lambda a, b: True)\n"
	    "n = [0]\n"
	    "class Bomb:\n"
	    "    def __del__(self):\n"
	    "        if n[0] > 100:\n"
	    "            return\n"
	    "        n[0] += 1\n"
	    "        p = PB()\n"
	    "        p.me = p\n"
	    "        h = Hook()\n"
	    "        h.me = h\n"
	    "        b = Bomb()\n"
	    "        b.me = b\n"
	    "gc.collect()\n"
	    "b = Bomb()\n"
	    "b.me = b\n"
	    "del b\n"
	    "gc.set_threshold(1)\n"
	    "for m in ('sympy.stats', 'seaborn.objects', 'sympy.physics.mechanics'):\n"
	    "    importlib.import_module(m)\n"
	    "gc.set_threshold(700)\n"
	    "gc.collect()\n"
	    "fig, ax = plt.subplots()\n"
	    "ax.set_title('a real title')\n"
	    "[n[0] > 0, A.get_title is mine, ax.get_title(), P.__eq__ is object.__eq__,\n"
	    " plt.figure().add_subplot(projection='polar') == 42]",
	    "[true,false,\"a real title\",true,false]");
	e2e_stop();
}

/* Around the fixes above: an ndarray subclass took shape from a mixin of the code's (set on
 * the mixin later, too) or from scipy's spmatrix (cdist's out written past: a full escape);
 * a SparseArray index's to_int_index, which the kernel calls after the check, answered a bigger
 * index; a distance metric subclass answered its only size check itself; the interpolator's
 * fill value, correlate1d's cval and matplotlib's points_in_path radius ran the code's __float__
 * after the arrays were checked or taken, and reshaped them; numpy's Arrayterator (numpy's
 * own, not an array) answered a shape the code set. Each is refused, or works on what was checked. */
Test(data, what_answers_a_check_is_the_librarys_own)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, scipy.sparse as sp\n"
	    "from scipy import ndimage\n"
	    "from scipy.interpolate import LinearNDInterpolator\n"
	    "from sklearn.metrics import DistanceMetric\n" OUT_OR_ERROR "class Mixin:\n"
	    "    pass\n"
	    "class Ok(Mixin, np.ndarray):\n"
	    "    pass\n"
	    "def later():\n"
	    "    Mixin.shape = property(lambda s: (9,))\n"
	    "t(later)\n"
	    "def mixed():\n"
	    "    class M2:\n"
	    "        shape = property(lambda s: (9,))\n"
	    "    class Lie(M2, np.ndarray):\n"
	    "        pass\n"
	    "t(mixed)\n"
	    "def library():\n"
	    "    class Lie(sp.spmatrix, np.ndarray):\n"
	    "        pass\n"
	    "t(library)\n"
	    "t(lambda: np.zeros(2).view(Ok).shape)\n"
	    "IntIndex = type(pd.arrays.SparseArray([1.0, 0.0], fill_value=0.0).sp_index)\n"
	    "class Swap(IntIndex):\n"
	    "    def to_int_index(self):\n"
	    "        return IntIndex(1 << 20, np.arange(5000, dtype=np.int32))\n"
	    "a = pd.arrays.SparseArray([0.0, 0.0], fill_value=0.0)\n"
	    "a._sparse_index = Swap(1 << 20, np.arange(2, dtype=np.int32))\n"
	    "a._sparse_values = np.array([1.5, 2.5])\n"
	    "t(lambda: (a + pd.arrays.SparseArray(np.zeros(1 << 20), "
	    "fill_value=0.0)).sp_values.tolist())\n"
	    "t(lambda: type('U', (type(DistanceMetric.get_metric('mahalanobis', "
	    "VI=np.eye(2))),), {}))\n"
	    "t(lambda: (DistanceMetric.get_metric('mahalanobis', VI=np.eye(2)).pairwise("
	    "np.zeros((1, 2)), np.ones((1, 2))) ** 2).round(6).tolist())\n"
	    "V = np.zeros(8).reshape(4, 2)\n"
	    "points = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])\n"
	    "ip = LinearNDInterpolator(points, np.zeros((4, 2)))\n"
	    "ip.values = V\n"
	    "class Fill:\n"
	    "    def __float__(self):\n"
	    "        V.shape = (1, 8)\n"
	    "        return 0.0\n"
	    "ip.fill_value = Fill()\n"
	    "t(lambda: ip([[0.5, 0.5]]))\n"
	    "x = np.arange(8.0)\n"
	    "class Cv:\n"
	    "    def __float__(self):\n"
	    "        x.shape = (2, 4)\n"
	    "        return 0.0\n"
	    "t(lambda: ndimage.correlate1d(x, [1.0, 1.0], cval=Cv(), mode='constant').tolist())\n"
	    "t(lambda: ndimage.correlate1d(np.arange(4.0), [1.0, 1.0], cval=0.0, "
	    "mode='constant').tolist())\n"
	    "from numpy.lib.arrayterator import Arrayterator\n"
	    "def arrayterator():\n"
	    "    class Lie(Arrayterator, np.ndarray):\n"
	    "        pass\n"
	    "t(arrayterator)\n"
	    "from matplotlib.path import Path\n"
	    "P = np.zeros((4, 2))\n"
	    "class R:\n"
	    "    def __float__(self):\n"
	    "        P.shape = (8, 1)\n"
	    "        keep = [np.array([5000, 2, 16, 8], dtype=np.intp) for i in range(40)]\n"
	    "        return 0.0\n"
	    "box = Path([(-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1)])\n"
	    "t(lambda: box.contains_points(P, radius=R()).tolist())\n"
	    "out",
	    "[\"TypeError\",\"TypeError\",\"TypeError\",[2],[1.5,2.5],\"TypeError\",[[2.0]],"
	    "\"ValueError\",\"ValueError\",[0.0,1.0,3.0,5.0],\"TypeError\",\"ValueError\"]");
	e2e_stop();
}

/* State compiled kernels read that the code may set: gaussian_kde's weights and pandas' ewm
 * time gaps (plain attributes; a short view of the code's own array read the memory past it,
 * any heap bytes read back), SphericalVoronoi's regions (rows read past the simplices), a
 * FeatureHasher's n_features of 0 (SIGFPE: transform needs no fit, which checks it), and a
 * bit generator's capsule kept past its bit generator and answered by a Generator subclass's
 * bit_generator to scipy's samplers (which drew through function pointers of what was laid in
 * the freed object: any native call), and a random_table's sums (_params: column sums past the
 * total wrote chosen values past the sampler's arrays: any memory). Each is checked or held;
 * ordinary uses answer as before. */
Test(data, state_the_code_may_set_is_checked_before_kernels_read_it)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from scipy import stats\n"
	    "from scipy.spatial import SphericalVoronoi\n"
	    "from sklearn.feature_extraction import FeatureHasher\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        out.append(f())\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "kde = stats.gaussian_kde(np.array([0.0, 1.0, 2.0]))\n"
	    "a = np.zeros(4096)\n"
	    "kde._weights = a[::100][:2]\n"
	    "t(lambda: kde([0.0]))\n"
	    "t(lambda: round(float(stats.gaussian_kde(np.array([0.0, 1.0, 2.0]))(1.0)[0]), 6))\n"
	    "t(lambda: round(float(stats.gaussian_kde(np.array([0.0, 1.0, 2.0]), weights=[1, 2, "
	    "1]).logpdf(1.0)[0]), 6))\n"
	    "times = pd.to_datetime(['2024-01-01', '2024-01-02', '2024-01-04', '2024-01-05'])\n"
	    "s = pd.Series([0.0, 0.0, 0.0, 1.0])\n"
	    "e = s.ewm(halflife='1 day', times=times)\n"
	    "e._deltas = a[::100][:2]\n"
	    "t(lambda: e.mean())\n"
	    "t(lambda: s.ewm(halflife='1 day', times=times).mean().round(6).tolist())\n"
	    "t(lambda: s.ewm(com=1).std().fillna(-1).round(6).tolist())\n"
	    "p = np.random.default_rng(0).normal(size=(20, 3))\n"
	    "sv = SphericalVoronoi(p / np.linalg.norm(p, axis=1)[:, None])\n"
	    "sv.regions[0] = [10**8, 1, 2]\n"
	    "t(lambda: sv.calculate_areas())\n"
	    "sv2 = SphericalVoronoi(p / np.linalg.norm(p, axis=1)[:, None])\n"
	    "t(lambda: round(float(sv2.calculate_areas().sum()), 6))\n"
	    "t(lambda: FeatureHasher(n_features=0).transform([{'a': 1}]))\n"
	    "t(lambda: FeatureHasher(n_features=4).transform([{'a': 1}]).shape)\n"
	    "class G(np.random.Generator):\n"
	    "    @property\n"
	    "    def bit_generator(self):\n"
	    "        return fake\n"
	    "class Fake:\n"
	    "    pass\n"
	    "fake = Fake()\n"
	    "src = np.random.MT19937(5)\n"
	    "fake.capsule, fake.lock = src.capsule, src.lock\n"
	    "del src\n"
	    "junk = [bytes(5000) for i in range(50)]\n"
	    "g = G(np.random.PCG64(1))\n"
	    "t(lambda: stats.random_table([3, 2], [2, 3]).rvs(random_state=g).sum().tolist())\n"
	    "t(lambda: type(np.random.MT19937(0).capsule).__name__)\n"
	    "tab = stats.random_table([2, 3], [1, 4])\n"
	    "tab._params = (tab._params[0], np.array([1, 400000]), tab._params[2])\n"
	    "t(lambda: tab.rvs(size=2, method='boyett', random_state=0))\n"
	    "t(lambda: tab.rvs(size=2, method='patefield', random_state=0))\n"
	    "t(lambda: stats.random_table([2, 3], [1, 4]).rvs(size=2, method='boyett', "
	    "random_state=0).sum(axis=2).tolist())\n"
	    "out",
	    "[\"ValueError\",0.318156,-0.970433,\"ValueError\",[0.0,0.0,0.0,0.592593],[-1.0,0.0,0."
	    "0,0.632456],\"ValueError\",12.566371,\"ValueError\",[1,4],5,\"PyCapsule\","
	    "\"ValueError\",\"ValueError\",[[2,3],[2,3]]]");
	e2e_stop();
}

/* Checks in front of compiled code pass on what they checked: splu's options given as pairs
 * (dict.update takes them) reached SuperLU unchecked, and its Fact option made it read its
 * work arrays unset; a k that is 3 as a float and 0 as an int passed the check of the one and
 * reached the query as the other; 'mah' and 'MAHAL' name the Mahalanobis metric as well
 * (VI read past its end: any heap bytes read back); a sparse matrix's format attribute (a
 * subclass's property, an instance's own) answered the check one thing and scipy another.
 * Ordinary uses of each answer as before. */
Test(data, checks_pass_on_what_they_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from scipy.sparse import csgraph\nfrom scipy.sparse.linalg import splu, spilu\n"
	    "from scipy.spatial import cKDTree\nfrom scipy.spatial.distance import cdist, pdist\n"
	    "out = []\n"
	    "def t(f):\n    try:\n        out.append(f())\n"
	    "    except (ValueError, TypeError) as e:\n        out.append(type(e).__name__)\n"
	    "A = sp.csc_matrix(np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]]))\n"
	    "b = np.array([1.0, 2, 3])\n"
	    "t(lambda: splu(A, options=[('PanelSize', 2**28)]))\n"
	    "t(lambda: spilu(A, options=[('Relax', 2**28)]))\n"
	    "t(lambda: splu(A, options={'Fact': 'FACTORED'}))\n"
	    "t(lambda: splu(A, options={'Fact': 3}))\n"
	    "class N(int):\n    pass\n"
	    "t(lambda: splu(A, options={'PanelSize': N(8)}))\n"
	    "t(lambda: splu(A, options=[('PanelSize', 8)]).solve(b).round(4).tolist())\n"
	    "t(lambda: splu(A, 'NATURAL', 1.0, 10, 8, {'Fact': 'DOFACT'}).solve(b).round(4)"
	    ".tolist())\n"
	    "class K:\n"
	    "    def __float__(self):\n        return 3.0\n"
	    "    def __int__(self):\n        return 0\n"
	    "    __index__ = __int__\n"
	    "    def __ge__(self, o):\n        return True\n"
	    "    __le__ = __ge__\n"
	    "tree = cKDTree(np.arange(10.0).reshape(5, 2))\n"
	    "t(lambda: tree.query([2.0, 3.0], k=[3, K()]))\n"
	    "t(lambda: tree.query([2.0, 3.0], k=[float('nan')]))\n"
	    "t(lambda: [tree.query([2.0, 3.0], k=2.0)[1].tolist(),\n"
	    "           tree.query([2.0, 3.0], k=[2.5])[1].tolist(), int(tree.query([2.0, "
	    "3.0])[1])])\n"
	    "X = np.arange(12.0).reshape(3, 4) ** 1.5\n"
	    "t(lambda: cdist(X, X, 'mah', VI=np.eye(1)))\n"
	    "t(lambda: pdist(X, 'MAHAL', VI=np.eye(1)))\n"
	    "t(lambda: np.allclose(cdist(X, X, 'MAH', VI=np.eye(4)), cdist(X, X, 'euclidean')))\n"
	    "class M(sp.csr_matrix):\n    reads = 0\n"
	    "    @property\n"
	    "    def format(self):\n"
	    "        M.reads += 1\n"
	    "        return 'csr' if M.reads > 1 else 'unchecked'\n"
	    "g = sp.csr_matrix(np.ones((4, 4)))\ng.indices[1] = 10**8\n"
	    "t(lambda: csgraph.minimum_spanning_tree(M(g)))\n"
	    "g.format = 'dia'\n"
	    "t(lambda: csgraph.minimum_spanning_tree(g))\n"
	    "class Plain(sp.csr_matrix):\n    pass\n"
	    "h = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 2], [3, 0, 0.0]]))\n"
	    "t(lambda: [csgraph.shortest_path(Plain(h))[0].tolist(), "
	    "csgraph.minimum_spanning_tree(h).nnz])\n"
	    "out",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"TypeError\","
	    "[0.2222,0.1111,1.4444],[0.2222,0.1111,1.4444],\"ValueError\",\"ValueError\","
	    "[[1,0],[0],1],\"ValueError\",\"ValueError\",true,\"ValueError\",\"ValueError\","
	    "[[0.0,1.0,3.0],2]]");
	e2e_stop();
}

/* A class a library makes during a call for itself (matplotlib's polar subplot class, made at
 * the first polar plot and kept for the worker's later calls) was taken for one made for the
 * code: the executor (a library frame the code runs anything in) replaced Axes' get_title on
 * it. What a library's class it derives from defines is not set there by a library frame;
 * classes libraries make for the code (make_dataclass, functional enums) are finished as
 * before. */
Test(data, a_class_a_library_made_for_itself_is_not_changed_for_the_code)
{
	start_data(NULL);
	e2e_expect_result(
	    "import concurrent.futures, dataclasses, enum\n"
	    "import matplotlib.pyplot as plt\n"
	    "fig = plt.figure()\nax = fig.add_subplot(projection='polar')\nC = type(ax)\n"
	    "def evil(self, *a, **k):\n    return 'EVIL'\n"
	    "out = []\n"
	    "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	    "    for name in ('get_title', 'set_title', 'draw'):\n"
	    "        try:\n"
	    "            ex.submit(setattr, C, name, evil).result()\n"
	    "            out.append(name)\n"
	    "        except PermissionError:\n"
	    "            pass\n"
	    "    P = dataclasses.make_dataclass('P', [('x', int)], order=True)\n"
	    "    ex.submit(setattr, P, 'extra', 1).result()\n"
	    "ax.set_title('t')\n"
	    "Color = enum.Enum('Color', 'RED GREEN')\n"
	    "[out, ax.get_title(), P(1) < P(2), P.extra, Color.GREEN.value, "
	    "C.__module__.startswith('matplotlib')]",
	    "[[],\"t\",true,1,2,true]");
	e2e_stop();
}

/* The classes made during a call are known by their addresses: a class of the code's, freed,
 * left its address behind, and a class a late import made there (served in the call: scipy.odr's
 * then, matplotlib's sankey and axes_grid1's now) passed for one of the call's, which library frames (the executor) could then change
 * for the code. A class leaves the set when it is freed. */
Test(data, a_late_librarys_class_at_a_freed_address_stays_the_librarys)
{
	start_data(NULL);
	e2e_expect_result(
	    "import gc, concurrent.futures\ncs = []\n"
	    "for i in range(3000):\n    class C:\n        pass\n    cs.append(C)\n"
	    "ids = {id(c) for c in cs}\ndel cs, C\ngc.collect()\n"
	    "import matplotlib.sankey as sk, mpl_toolkits.axes_grid1.axes_size as az\n"
	    "cands = [sk.Sankey, az.Fixed, az.Scaled, az.AxesX, az.AxesY, az.MaxExtent,\n"
	    "         az.MaxWidth, az.MaxHeight, az.Fraction, az.Padded, az.SizeFromFunc]\n"
	    "written = []\n"
	    "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
	    "    for t in cands:\n"
	    "        try:\n"
	    "            ex.submit(setattr, t, 'mark', 1).result()\n"
	    "            written.append(t.__name__)\n"
	    "        except PermissionError:\n"
	    "            pass\n"
	    "[written, any(id(t) in ids for t in cands) or 'no class at a freed address']",
	    "[[],true]");
	e2e_stop();
}

/* PIL's coordinate reader (ImagePath.Path, ImageDraw's line, polygon...) took a list's length
 * once and read its items unheld while their __float__ ran: one that emptied the list made it
 * read freed items (SIGSEGV); Path.map kept the path's array across the function, which could
 * compact it. The coordinates are now read first into plain numbers, and map writes each point
 * back checked; drawing and paths answer as before. */
Test(data, pil_coordinates_are_read_before_the_c_code)
{
	start_data(NULL);
	e2e_expect_result("from PIL import Image, ImageDraw, ImagePath\n"
	                  "L = []\n"
	                  "class F:\n"
	                  "    def __float__(self):\n"
	                  "        L.clear()\n"
	                  "        return 1.0\n"
	                  "L.extend([F() for i in range(100)])\n"
	                  "p = ImagePath.Path(L)\n"
	                  "out = [len(p), len(L)]\n"
	                  "M = []\n"
	                  "class G:\n"
	                  "    def __float__(self):\n"
	                  "        M.clear()\n"
	                  "        return 5.0\n"
	                  "M.extend([G() for i in range(50)])\n"
	                  "im = Image.new('L', (20, 20))\n"
	                  "d = ImageDraw.Draw(im)\n"
	                  "d.line(M, fill=200)\n"
	                  "q = ImagePath.Path([(i, i) for i in range(100000)])\n"
	                  "q.map(lambda x, y: (q.compact(1e300), (x, y))[1])\n"
	                  "out += [im.getpixel((5, 5)), len(q)]\n"
	                  "im = Image.new('L', (20, 20))\n"
	                  "d = ImageDraw.Draw(im)\n"
	                  "d.polygon([(2, 2), (17, 2), (17, 17), (2, 17)], fill=100)\n"
	                  "d.line([0, 19, 19, 19], fill=255)\n"
	                  "d.point([(0, 0)], fill=7)\n"
	                  "p = ImagePath.Path([0, 0, (3, 4.5)])\n"
	                  "p.map(lambda x, y: (x * 2, y + 1))\n"
	                  "out + [im.getpixel((10, 10)), im.getpixel((1, 10)), im.getpixel((10, "
	                  "19)), im.getpixel((0, 0)),\n"
	                  "       p.tolist(), p.getbbox(), len(ImagePath.Path(3))]",
	                  "[50,0,200,1,100,0,255,7,[[0.0,1.0],[6.0,5.5]],[0.0,1.0,6.0,5.5],3]");
	e2e_stop();
}

/* scipy.cluster.hierarchy's kernels walk a linkage's count column, which is_valid_linkage did
 * not check: cophenet of a linkage with a count of 10**6 read and wrote past its arrays
 * (SIGSEGV). A linkage's counts must now be the sums of its clusters' (and its cluster numbers
 * whole), else ValueError; linkage, cophenet, fcluster and leaves_list answer as before. */
Test(data, linkage_counts_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy.cluster import hierarchy\n"
	    "from scipy.spatial.distance import pdist\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "Z = np.array([[0., 1., 1., 2.], [2., 3., 2., 3.]])\n"
	    "ok = hierarchy.cophenet(Z).tolist()\n"
	    "Z[0, 3] = 10**6\n"
	    "bad = [t(lambda: hierarchy.cophenet(Z)), t(lambda: hierarchy.fcluster(Z, 2, "
	    "'maxclust')),\n"
	    "       t(lambda: hierarchy.leaves_list(Z)), t(lambda: hierarchy.inconsistent(Z)),\n"
	    "       t(lambda: hierarchy.cophenet(np.array([[np.nan, 1., 1., 2.], [2., 3., 2., "
	    "3.]]))),\n"
	    "       hierarchy.is_valid_linkage(Z)]\n"
	    "X = np.array([[0., 0.], [0., 1.], [5., 5.], [5., 6.], [10., 0.], [10., 1.5]])\n"
	    "L = hierarchy.linkage(X, 'average')\n"
	    "c, _ = hierarchy.cophenet(L, pdist(X))\n"
	    "[ok, bad, hierarchy.fcluster(L, 3, 'maxclust').tolist(), "
	    "hierarchy.leaves_list(L).tolist(),\n"
	    " round(float(c), 6), L[:, 3].tolist()]",
	    "[[1.0,2.0,2.0],[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",false],[1,1,2,2,3,3],[0,1,2,3,4,5],0.925919,[2.0,2.0,2.0,4.0,6.0]]");
	e2e_stop();
}

/* An object Index's engine kept the addresses of the values in its hash table without a
 * reference, over the user's own array (pd.Index(arr, copy=False), or the array idx.values
 * hands out): an item replaced freed its str, and the next get_loc compared the key with a
 * fake bytearray laid on the freed block (any memory read and written: the real os). The
 * engine is made over a private copy: the key is compared with the live str; get_loc,
 * get_indexer and a MultiIndex answer as before. */
Test(data, an_object_index_engine_hashes_its_own_copy_of_the_values)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, struct\n"
	    "fake = struct.pack('<QQqqQQQ', 0x100000, id(bytearray), 2**62, 2**62 + 1, 0, 0, 0) + "
	    "bytes(23)\n"
	    "spray = [None] * 64\n"
	    "def attack(via_values):\n"
	    "    s = 'abcdefghijklmnopqrstuvwxyz1234' + str(7)\n"
	    "    H = hash(s)\n"
	    "    got = []\n"
	    "    class K(bytearray):\n"
	    "        def __hash__(self):\n"
	    "            return H\n"
	    "        def __eq__(self, other):\n"
	    "            got.append(other)\n"
	    "            return False\n"
	    "    arr = np.empty(2, dtype=object)\n"
	    "    arr[0], arr[1] = s, 'zz'\n"
	    "    del s\n"
	    "    if via_values:\n"
	    "        idx = pd.Index(list(arr))\n"
	    "        arr = idx.values\n"
	    "    else:\n"
	    "        idx = pd.Index(arr, copy=False)\n"
	    "    r = idx.get_loc('zz')\n"
	    "    arr[0] = None\n"
	    "    for i in range(64):\n"
	    "        spray[i] = bytearray(fake)\n"
	    "    try:\n"
	    "        idx.get_loc(K(b'x'))\n"
	    "    except KeyError:\n"
	    "        pass\n"
	    "    # what the key was compared with: the live str, never a freed block\n"
	    "    return [r, [type(g).__name__ for g in got if type(g) not in (str, bytes)],\n"
	    "            'abcdefghijklmnopqrstuvwxyz12347' in got]\n"
	    "r = [attack(False), attack(True)]\n"
	    "idx = pd.Index(['b', 'a', 'c', 'a2'])\n"
	    "r += [idx.get_loc('c'), idx.get_indexer(['a', 'zz', 'b']).tolist(), 'a' in idx,\n"
	    "      pd.Index(['a', 'b', 'a']).get_indexer_non_unique(['a'])[0].tolist(),\n"
	    "      pd.MultiIndex.from_tuples([('a', 1), ('b', 2)]).get_loc(('b', 2))]\n"
	    "r\n",
	    "[[1,[],true],[1,[],true],2,[1,-1,0],true,[0,2],1]");
	e2e_stop();
}

/* pandas' hash table classes keep keys by address: the user's code made one
 * (type(idx._engine.mapping)()), set a key, freed it, and looked another up (compared with a
 * fake object on the freed block). An engine's table, values, re-initialisation and pickled
 * state are refused to the user's code (AttributeError; copy.copy: TypeError), and an engine
 * the user makes over its array hashes a copy of it. */
Test(data, pandas_hash_tables_and_engine_internals_are_library_only)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, copy\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'allowed'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "idx = pd.Index(['a', 'b'])\n"
	    "idx.get_loc('a')\n"
	    "E = type(idx._engine)\n"
	    "class E2(E):\n"
	    "    def __init__(self, a):\n"
	    "        super().__init__(a)\n"
	    "r = [t(lambda: type(idx._engine.mapping)().set_item('s', 1)), t(lambda: "
	    "idx._engine.values),\n"
	    "     t(lambda: getattr(idx._engine, 'mapping')), t(lambda: copy.copy(idx._engine)),\n"
	    "     t(lambda: E2(np.array(['a'], dtype=object)))]\n"
	    "arr = np.array(['x', 'y'], dtype=object)\n"
	    "idx._cache['_engine'] = E(arr)\n"
	    "arr[1] = 'w'\n"
	    "r += [idx.get_loc('y'), t(lambda: idx.get_loc('w'))]\n"
	    "r\n",
	    "[\"AttributeError\",\"AttributeError\",\"AttributeError\",\"TypeError\","
	    "\"AttributeError\",1,\"KeyError\"]");
	e2e_stop();
}

/* duplicated and isin kept the array's items by address while an item's __hash__ (the
 * user's) replaced another item: the freed one was compared with later keys (a fake
 * bytearray on its block: any memory). They work over a private copy now; value_counts,
 * unique, factorize, drop_duplicates, mode, merge, groupby and merge_asof on object keys
 * answer as before. */
Test(data, pandas_object_kernels_hash_a_private_copy)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, struct\n"
	    "fake = struct.pack('<QQqqQQQ', 0x100000, id(bytearray), 2**62, 2**62 + 1, 0, 0, 0) + "
	    "bytes(23)\n"
	    "spray = [None] * 64\n"
	    "def attack(run):\n"
	    "    s = 'abcdefghijklmnopqrstuvwxyz1234' + str(7)\n"
	    "    H = hash(s)\n"
	    "    got = []\n"
	    "    class K(bytearray):\n"
	    "        def __hash__(self):\n"
	    "            if arr[0] is not None:\n"
	    "                arr[0] = None\n"
	    "                for i in range(64):\n"
	    "                    spray[i] = bytearray(fake)\n"
	    "            return H\n"
	    "        def __eq__(self, other):\n"
	    "            got.append(other)\n"
	    "            return False\n"
	    "    arr = np.empty(2, dtype=object)\n"
	    "    arr[0], arr[1] = s, K(b'x')\n"
	    "    del s\n"
	    "    r = run(arr)\n"
	    "    # what the key was compared with: the live str, never a freed block\n"
	    "    return [r, [type(g).__name__ for g in got if type(g) not in (str, bytes)],\n"
	    "            'abcdefghijklmnopqrstuvwxyz12347' in got]\n"
	    "r = [attack(lambda a: pd.Series(a, copy=False).duplicated().tolist()),\n"
	    "     attack(lambda a: pd.Series([b'y', b'x']).isin(a).tolist())]\n"
	    "a = np.array(['x', 'y', 'x', None, 'z'], dtype=object)\n"
	    "s = pd.Series(a)\n"
	    "l = pd.DataFrame({'k': ['a', 'b', 'c', 'a'], 'v': [1, 2, 3, 4]})\n"
	    "q = pd.DataFrame({'k': ['a', 'c', 'd'], 'w': [10, 30, 40]})\n"
	    "t = pd.DataFrame({'t': [1, 2, 3], 'g': ['a', 'b', 'a'], 'x': [1., 2., 3.]})\n"
	    "u = pd.DataFrame({'t': [2, 3], 'g': ['a', 'b'], 'y': [5, 6]})\n"
	    "r += [s.value_counts().to_dict(), pd.unique(a).tolist(), "
	    "pd.factorize(a)[0].tolist(),\n"
	    "      pd.factorize(a, sort=True)[1].tolist(), s.isin(['x', 'z']).tolist(),\n"
	    "      s.drop_duplicates().tolist(), s.mode().tolist(), l.merge(q, "
	    "on='k').values.tolist(),\n"
	    "      l.groupby('k')['v'].sum().to_dict(), pd.merge_asof(u, t, on='t', "
	    "by='g').values.tolist(),\n"
	    "      pd.Series(['p', 'q', 'p'], dtype='string').value_counts().to_dict()]\n"
	    "r\n",
	    "[[[false,false],[],true],[[false,false],[],true],{\"x\":2,\"y\":1,\"z\":1},"
	    "[\"x\",\"y\",null,\"z\"],[0,1,0,-1,2],[\"x\",\"y\",\"z\"],[true,false,true,"
	    "false,true],[\"x\",\"y\",null,\"z\"],[\"x\"],[[\"a\",1,10],[\"a\",4,10],[\"c\","
	    "3,30]],{\"a\":5,\"b\":2,\"c\":3},[[2,\"a\",5,1.0],[3,\"b\",6,2.0]],{\"p\":2,"
	    "\"q\":1}]");
	e2e_stop();
}

/* scipy.io.loadmat (and the VarReader5 that scipy.io.matlab.mio5_utils exported, now not given)
 * looked up each data element's numpy dtype in a C array of 20 by the element's data type, read
 * from the file, unchecked: the types with no dtype held NULL (SIGSEGV), those past 19 read the
 * words after the array as dtypes (an array of any dtype over the file's bytes). A data element
 * of a type with no dtype is now refused (ValueError), in numbers and in chars, compressed or
 * not, little or big endian; files of every kind of variable load as before. */
Test(data, loadmat_data_types_are_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import base64, io, struct, zlib, warnings\n"
	    "import numpy as np, scipy.io as sio, scipy.sparse as sp\n"
	    "import importlib\n"
	    "warnings.simplefilter('ignore')\n"
	    "P = struct.pack\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def load(d, **kw):\n"
	    "    return sio.loadmat(io.BytesIO(bytes(d)), **kw)\n"
	    "def typed(d, o, old, new, name):\n"
	    "    # the file read with each variable's tag old made new (compressed ones too)\n"
	    "    out, at = bytearray(d[:128]), 128\n"
	    "    while at < len(d):\n"
	    "        k, size = struct.unpack(o + 'II', d[at:at + 8])\n"
	    "        body = d[at + 8:at + 8 + size]\n"
	    "        z = bytes(body) if k != 15 else zlib.decompress(body)\n"
	    "        z = z.replace(old, new)\n"
	    "        if k == 15:\n"
	    "            z = zlib.compress(z)\n"
	    "        out += P(o + 'II', k, len(z)) + z\n"
	    "        at += 8 + size + (-size % 8 if k != 15 else 0)\n"
	    "    return t(lambda: load(out)[name].tolist())\n"
	    "r = []\n"
	    "for c in (False, True):\n"
	    "    b = io.BytesIO()\n"
	    "    sio.savemat(b, {'a': np.array([1.5, 2.5]), 's': 'hey'}, do_compression=c)\n"
	    "    d = b.getvalue()\n"
	    "    for k in (5000, 0, 8, 14, 19, 20, 2**32 - 1):\n"
	    "        r.append(typed(d, '<', P('<II', 9, 16), P('<II', k, 16), 'a'))\n"
	    "    for k in (11, 300):\n"
	    "        r.append(typed(d, '<', P('<HH', 16, 3), P('<HH', k, 3), 's'))\n"
	    "r.append(t(lambda: importlib.import_module('scipy.io.matlab.mio5_utils')))\n"
	    "big = base64.b64decode(\n"
	    "       b'TUFUTEFCIDUuMCBNQVQtZmlsZSwgUGxhdGZvcm06IFdpbmRvd3MgNywgQ1JFQVRF'\n"
	    "       b'RCBvbjogVHVlIEZlYiAyNiAxMToyMDozNiBHTVQgMjAxMwAAAAAAAAAAAAAAAAAA'\n"
	    "       b'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAEATUkAAAAPAAAANnicY2Bg4GNg'\n"
	    "       b'YPAAYjYg5gBidgYIYIXymaCYEaQmLSc/saQYLA9SJ+AAJBwcoLiBgQEAfs4FJAAA'\n"
	    "       b'AA8AAABLeJxjYGDgY2Bg2ADEbEDMAcSMDBDACuUzQcVAmL24pCgzL70YJA/SZ4Gk'\n"
	    "       b'jwVNHyOUDTNPAMTPSM3JyYfwydJfnl+UkwJkAAAczAku')\n"
	    "r.append(typed(big, '>', P('>II', 7, 16), P('>II', 20, 16), 'floats'))\n"
	    "# ordinary use answers as before\n"
	    "m = load(big)\n"
	    "r += [m['floats'].dtype.str, m['floats'].tolist(), [x[0][0] for x in m['strings']]]\n"
	    "v = {'f': np.array([[1.5, -2.0], [3.0, 4.25]]), 'z': np.array([1 + 2j, 3 - 4j]),\n"
	    "     'i8': np.arange(4, dtype=np.int8), 'u16': np.array([65535], dtype=np.uint16),\n"
	    "     'i64': np.array([-2**40], dtype=np.int64), 'f32': np.array([0.5], "
	    "dtype=np.float32),\n"
	    "     'b': np.array([True, False, True]), 's': 'hello', 'w': np.array(['ab', 'cd']),\n"
	    "     'st': {'x': 1.0, 'name': 'n'}, 'c': np.array([np.arange(2.0), 'cell'], "
	    "dtype=object),\n"
	    "     'sp': sp.csc_matrix(np.array([[0, 2.0], [3.0, 0]])),\n"
	    "     'spb': sp.csc_matrix(np.array([[True, False], [False, True]]))}\n"
	    "rt = []\n"
	    "for c in (False, True):\n"
	    "    b = io.BytesIO()\n"
	    "    sio.savemat(b, v, do_compression=c)\n"
	    "    m = load(b.getvalue())\n"
	    "    q = load(b.getvalue(), squeeze_me=True, struct_as_record=False)\n"
	    "    rt.append([m['f'].tolist(), m['z'].tolist() == [[1 + 2j, 3 - 4j]], "
	    "m['i8'].tolist(),\n"
	    "               str(m['i8'].dtype), m['u16'].tolist(), m['i64'].tolist(),\n"
	    "               str(m['f32'].dtype), m['b'].tolist(), m['s'].tolist(), "
	    "m['w'].tolist(),\n"
	    "               m['st']['x'][0, 0].tolist(), str(m['st']['name'][0, 0][0]),\n"
	    "               m['c'][0, 1].tolist(), m['sp'].toarray().tolist(),\n"
	    "               m['spb'].toarray().tolist(), q['st'].name, q['c'][0].tolist(),\n"
	    "               [w[0] for w in sio.whosmat(io.BytesIO(b.getvalue()))]])\n"
	    "r + [rt[0], rt[0] == rt[1]]\n",
	    "[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"Va"
	    "lueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueEr"
	    "ror\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\""
	    ",\"ValueError\",\"ValueError\",\"ModuleNotFoundError\",\"ValueError\",\">f4\",[["
	    "2.0,3.0],[3.0,4.0]],[\"hello\",\"world\"],[[[1.5,-2.0],[3.0,4.25]],true,[[0,1,2,"
	    "3]],\"int8\",[[65535]],[[-1099511627776]],\"float32\",[[1,0,1]],[\"hello\"],[\"a"
	    "b\",\"cd\"],[[1.0]],\"n\",[\"cell\"],[[0.0,2.0],[3.0,0.0]],[[1,0],[0,1]],\"n\",["
	    "0.0,1.0],[\"f\",\"z\",\"i8\",\"u16\",\"i64\",\"f32\",\"b\",\"s\",\"w\",\"st\",\""
	    "c\",\"sp\",\"spb\"]],true]");
	e2e_stop();
}

/* ImagePath.Path's item assignment (p[i] = (x, y)) took the point's address in the path's array,
 * then read the numbers: one whose __float__ compacted the path wrote into the freed array
 * (SIGSEGV). The point is now read first (an index past the compacted path is an IndexError);
 * compact() of an empty path left one point of uninitialised memory (it answers 0 now) and
 * Path.id handed out the array's address (refused). Points, paths and drawing answer as before. */
Test(data, pil_path_points_are_read_before_the_c_code)
{
	start_data(NULL);
	e2e_expect_result(
	    "from PIL import Image, ImageDraw, ImagePath\n"
	    "import numpy as np\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class F:\n"
	    "    def __float__(self):\n"
	    "        p.compact(1e300)\n"
	    "        return 1.0\n"
	    "r = set()\n"
	    "big = ImagePath.Path(np.arange(400000, dtype=np.float32))\n"
	    "for k in range(50):\n"
	    "    p = ImagePath.Path(big)\n"
	    "    def put():\n"
	    "        if k % 2:\n"
	    "            p[199999] = (F(), 2.0)\n"
	    "        else:\n"
	    "            p.__setitem__(199999, (F(), 2.0))\n"
	    "    r.add(t(put))\n"
	    "p = ImagePath.Path([(float(i), float(i)) for i in range(1000)])\n"
	    "p[0] = (F(), 2.0)\n"
	    "out = [sorted(r), p.tolist()]\n"
	    "e = ImagePath.Path([])\n"
	    "out += [e.compact(), len(e), e.tolist(), t(lambda: e.id), t(lambda: p.id)]\n"
	    "# ordinary use answers as before\n"
	    "q = ImagePath.Path([(0, 0), (1, 1), (2, 2)])\n"
	    "q[0] = (5, 6)\n"
	    "q[-1] = (7.5, 8)\n"
	    "def bad(v):\n"
	    "    def f():\n"
	    "        q[1] = v\n"
	    "    return t(f)\n"
	    "out += [q.tolist(), q[0], q[-1], len(q), bad(('a', 1)), bad((1, 2, 3)), bad([1, 2]),\n"
	    "        t(lambda: q.__setitem__(5, (1, 1)))]\n"
	    "c = ImagePath.Path([0, 0, 1, 1, 5, 5, 5.5, 5.5])\n"
	    "out += [c.compact(), c.tolist(), c.getbbox()]\n"
	    "im = Image.new('L', (20, 20))\n"
	    "d = ImageDraw.Draw(im)\n"
	    "d.polygon(ImagePath.Path([(2, 2), (17, 2), (17, 17), (2, 17)]), fill=100)\n"
	    "d.line([0, 19, 19, 19], fill=255)\n"
	    "out + [im.getpixel((10, 10)), im.getpixel((1, 10)), im.getpixel((10, 19))]\n",
	    "[[\"IndexError\"],[[1.0,2.0]],0,0,[],\"AttributeError\",\"AttributeError\",[[5.0,6.0],"
	    "[1.0,1.0],[7.5,8.0]],[5.0,6.0],[7.5,8.0],3,\"TypeError\",\"TypeError\",\"SystemError\""
	    ",\"IndexError\",1,[[0.0,0.0],[1.0,1.0],[5.0,5.0]],[0.0,0.0,5.0,5.0],100,0,255]");
	e2e_stop();
}

/* An array of objects sorted in place while its items' __lt__ replaced them (freeing them):
 * numpy's sorts held the items' pointers, without a reference, in their temporaries and wrote a
 * freed one back into the array (a.sort() of any kind, a.partition, np.median with
 * overwrite_input: a fake bytearray over all memory); argsort and lexsort of an array of objects
 * not laid out item after item compared freed objects from a buffer (SIGSEGV). Such arrays are
 * sorted as a private copy now: the array holds only live objects; the same functions used as
 * meant answer as before. */
Test(data, object_sorts_keep_no_freed_item)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "class K:\n"
	    "    __slots__ = tuple('s%d' % i for i in range(20))\n"
	    "    def __lt__(self, o):\n"
	    "        cnt[0] += 1\n"
	    "        if cnt[0] == at[0]:\n"
	    "            for i in range(len(cur[0])):\n"
	    "                cur[0][i] = i\n"
	    "            if stop[0]:\n"
	    "                raise ValueError('stop')\n"
	    "        return isinstance(o, K) and self.s0 < o.s0\n"
	    "    def __gt__(self, o):\n"
	    "        return isinstance(o, K) and o.s0 < self.s0\n"
	    "def q(n):\n"
	    "    return n.to_bytes(8, 'little')\n"
	    "fake = q(1 << 40) + q(id(bytearray)) + q(1 << 62) + q(1 << 62) + q(0) + q(0) + q(0)\n"
	    "payload = bytes(16) + fake + bytes(191 - 16 - len(fake))\n"
	    "cnt, at, stop, cur, keep = [0], [0], [True], [None], []\n"
	    "def attack(f, n=4, when=1, raises=True):\n"
	    "    cnt[0], at[0], stop[0] = 0, when, raises\n"
	    "    a = np.array([K() for _ in range(n)], dtype=object)\n"
	    "    for i in range(n):\n"
	    "        a[i].s0 = (i * 17) % n\n"
	    "    cur[0] = a\n"
	    "    try:\n"
	    "        f(a)\n"
	    "    except ValueError:\n"
	    "        pass\n"
	    "    keep.append([bytearray(payload) for _ in range(4 * n)])\n"
	    "    return sorted({type(v).__name__ for v in a})\n"
	    "r = [attack(lambda a: a.sort()), attack(lambda a: a.sort(kind='heapsort'), 40),\n"
	    "     attack(lambda a: a.sort(kind='stable'), 64, 150), attack(lambda a: a.partition(1)"
	    "),\n"
	    "     attack(lambda a: np.median(a, overwrite_input=True), 5),\n"
	    "     attack(lambda a: a[::2].argsort(), 8, 1, False),\n"
	    "     attack(lambda a: np.lexsort((a[::2],)), 8, 1, False)]\n"
	    "# ordinary use answers as before\n"
	    "o = np.array([3, 1, 2, 5, 4], dtype=object)\n"
	    "o.sort()\n"
	    "s = np.array([(3, 'c'), (1, 'a'), (2, 'b')], dtype=[('x', 'i8'), ('y', 'O')])\n"
	    "s.sort(order='y')\n"
	    "w = np.array(['b', 'a', 'c', 'a'], dtype=object)\n"
	    "p = np.array([5, 1, 4, 2, 3], dtype=object)\n"
	    "p.partition(2)\n"
	    "f = np.array([3.0, 1.0, 2.0])\n"
	    "f.sort(kind='stable')\n"
	    "m = np.array([[3, 1], [0, 2]], dtype=object)\n"
	    "r += [o.tolist(), s['x'].tolist(), w.argsort(kind='stable').tolist(), p[2],\n"
	    "      np.lexsort((np.array([1, 2, 0, 3]), w)).tolist(), m.argsort(axis=0).tolist(),\n"
	    "      f.tolist(), np.median(np.array([4, 1, 3, 2, 5], dtype=object), overwrite_input=T"
	    "rue)]\n"
	    "r",
	    "[[\"int\"],[\"int\"],[\"int\"],[\"int\"],[\"int\"],[\"int\"],[\"int\"],[1,2,3,4,5],[1,"
	    "2,3],[1,3,0,2],3,[1,3,0,2],[[1,0],[0,1]],[1.0,2.0,3.0],3.0]");
	e2e_stop();
}

/* nditer.close() (and a with block's end) freed a buffered iterator's buffers, and dropped
 * the operands it alone held, while the arrays it had handed out still pointed into them: a
 * list's item array then laid under the view (its items' addresses read, a forged one
 * written: any object). close() now writes back and resolves the copies but leaves the memory
 * to the iterator's own end, which the views hold off: a view keeps its values; the iterator
 * used as numpy's documents show answers as before. */
Test(data, nditer_close_keeps_the_memory_of_its_views)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "marker = object()\n"
	    "def reuse(x):\n"
	    "    # blocks of the size the iterator's memory had, each holding the marker's address"
	    "\n"
	    "    keep.append([[marker] * 128 for _ in range(8)])\n"
	    "    return int(x[0]) == id(marker) or int(x[-1]) == id(marker)\n"
	    "keep = []\n"
	    "r = []\n"
	    "a = np.zeros(128)\n"
	    "it = np.nditer(a, flags=['buffered', 'external_loop'], op_flags=[['readwrite']],\n"
	    "               op_dtypes=['i8'], casting='unsafe', buffersize=128)\n"
	    "x = next(it)\n"
	    "x[...] = 7\n"
	    "it.close()\n"
	    "r += [reuse(x), int(x[3]), a[3]]\n"
	    "with np.nditer(np.zeros(128), flags=['buffered', 'external_loop'], op_dtypes=['i8'],\n"
	    "               casting='unsafe', buffersize=128) as it:\n"
	    "    x = next(it)\n"
	    "r.append(reuse(x))\n"
	    "it = np.nditer(np.zeros(128, 'i8'), flags=['external_loop'], op_flags=[['readwrite']])"
	    "\n"
	    "x = next(it)\n"
	    "del it\n"
	    "x.base.close()\n"
	    "x.base.__exit__(None, None, None)\n"
	    "r.append(reuse(x))\n"
	    "# ordinary use answers as before\n"
	    "a = np.arange(6).reshape(2, 3)\n"
	    "with np.nditer(a, op_flags=['readwrite']) as it:\n"
	    "    for x in it:\n"
	    "        x[...] = 2 * x\n"
	    "r.append(a.tolist())\n"
	    "a = np.arange(6.0) + 0.5\n"
	    "with np.nditer(a, flags=['buffered', 'external_loop'], op_flags=[['readwrite']],\n"
	    "               op_dtypes=['i8'], casting='unsafe', buffersize=4) as it:\n"
	    "    for x in it:\n"
	    "        x[...] = x * 10\n"
	    "r.append(a.tolist())\n"
	    "a = np.arange(24).reshape(2, 3, 4)\n"
	    "with np.nditer([a, None], flags=['reduce_ok', 'buffered', 'delay_bufalloc'],\n"
	    "               op_flags=[['readonly'], ['readwrite', 'allocate']],\n"
	    "               op_axes=[None, [0, 1, -1]]) as it:\n"
	    "    it.operands[1][...] = 0\n"
	    "    it.reset()\n"
	    "    for x, y in it:\n"
	    "        y[...] += x\n"
	    "    res = it.operands[1]\n"
	    "r.append(res.tolist())\n"
	    "a = np.arange(10.0)\n"
	    "with np.nditer(a, flags=['buffered'], op_flags=[['readwrite']], op_dtypes=['f4'],\n"
	    "               casting='same_kind', buffersize=3) as it:\n"
	    "    for x in it:\n"
	    "        x[...] = -1\n"
	    "        if it.iterindex == 4:\n"
	    "            break\n"
	    "r.append(a.tolist())\n"
	    "a = np.arange(4, dtype='f8')\n"
	    "it = np.nditer(a, op_flags=[['readwrite', 'updateifcopy']], op_dtypes=['f4'],\n"
	    "               casting='same_kind')\n"
	    "for x in it:\n"
	    "    x[...] = x + 1\n"
	    "it.close()\n"
	    "r.append([a.tolist(), a.flags.writeable])\n"
	    "i, j = np.nested_iters(np.arange(12).reshape(2, 3, 2), [[1], [0, 2]], flags=['multi_in"
	    "dex'])\n"
	    "vals = [[int(y) for y in j] for x in i]\n"
	    "i.close()\n"
	    "r += [vals, [int(v) for v in np.nditer(np.arange(3))], list(np.ndindex(2, 2))]\n"
	    "r",
	    "[false,7,7.0,false,false,[[0,2,4],[6,8,10]],[0.0,10.0,20.0,30.0,40.0,50.0],[[6,22,38],"
	    "[54,70,86]],[-1.0,-1.0,-1.0,-1.0,-1.0,5.0,6.0,7.0,8.0,9.0],[[1.0,2.0,3.0,4.0],true],[["
	    "0,1,6,7],[2,3,8,9],[4,5,10,11]],[0,1,2],[[0,0],[0,1],[1,0],[1,1]]]");
	e2e_stop();
}

/* matplotlib's FT2Font, which the user's code may make: over a file object, FreeType's reads
 * copied whatever read() gave into a buffer of the size asked (a longer answer overflowed
 * the heap: full escape shown); _fallback_list took an object whose __class__ said FT2Font
 * and used its memory as a C++ font (a write at a chosen address); set_charmap read before
 * the charmap table. A file object is read whole first (FreeType reads a private copy), a
 * fallback must really be an FT2Font, a charmap index within the face's; ordinary fonts, a
 * font made over bytes with a real fallback, and set_charmap(0) work as before. */
Test(data, ft2font_reads_a_copy_and_checks_its_fallbacks)
{
	start_data(NULL);
	e2e_expect_result("import io\n"
	                  "from matplotlib import ft2font\n"
	                  "import matplotlib.font_manager as fm\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        return f()\n"
	                  "    except Exception as e:\n"
	                  "        return [type(e).__name__, str(e)[:60]]\n"
	                  "class Long:\n"
	                  "    def __init__(self): self.pos = 0\n"
	                  "    def seek(self, off, whence=0):\n"
	                  "        self.pos = 4096 if whence == 2 else off\n"
	                  "        return self.pos\n"
	                  "    def tell(self): return self.pos\n"
	                  "    def read(self, n=-1): return b'A' * 200000\n"
	                  "bdf = (b\"STARTFONT 2.1\\nFONT "
	                  "-misc-test-medium-r-normal--12-120-72-72-c-80-iso10646-1\\n\"\n"
	                  "       b\"SIZE 12 72 72\\nFONTBOUNDINGBOX 8 12 0 -2\\nSTARTPROPERTIES "
	                  "3\\nPIXEL_SIZE 12\\n\"\n"
	                  "       b\"FONT_ASCENT 10\\nFONT_DESCENT 2\\nENDPROPERTIES\\nCHARS "
	                  "1\\nSTARTCHAR A\\nENCODING 65\\n\"\n"
	                  "       b\"SWIDTH 666 0\\nDWIDTH 8 0\\nBBX 8 12 0 -2\\nBITMAP\\n\" + "
	                  "b\"FF\\n\" + b\"81\\n\" * 10 + b\"FF\\n\"\n"
	                  "       b\"ENDCHAR\\nENDFONT\\n\")\n"
	                  "try:\n"
	                  "    class Fake:\n"
	                  "        @property\n"
	                  "        def __class__(self): return ft2font.FT2Font\n"
	                  "except TypeError:\n"
	                  "    class Fake:\n"
	                  "        pass\n"
	                  "real = fm.get_font(fm.findfont('DejaVu Sans'))\n"
	                  "r = [t(lambda: ft2font.FT2Font(Long()).num_glyphs),\n"
	                  "     t(lambda: ft2font.FT2Font(io.BytesIO(bdf), "
	                  "_fallback_list=[Fake()]).num_glyphs),\n"
	                  "     t(lambda: ft2font.FT2Font.__init__(real, io.BytesIO(bdf), "
	                  "_fallback_list=[Fake()])),\n"
	                  "     t(lambda: real.set_charmap(-(1 << 30))), t(lambda: "
	                  "real.set_charmap(real.num_charmaps))]\n"
	                  "f = ft2font.FT2Font(io.BytesIO(bdf), _fallback_list=[real])\n"
	                  "f.set_size(12, 72)\n"
	                  "f.set_text('AB')\n"
	                  "real.set_charmap(0)\n"
	                  "r += [f.num_glyphs, f.family_name, f.get_width_height()[0] > 0, "
	                  "real.family_name, ft2font.FT2Font(io.BytesIO(bdf), 1).style_name]\n"
	                  "r",
	                  "[[\"RuntimeError\",\"In FT2Font: Can not load face (unknown file "
	                  "format; error co\"],[\"TypeError\",\"_fallback_list must be a list of "
	                  "FT2Font objects\"],[\"TypeError\",\"_fallback_list must be a list of "
	                  "FT2Font objects\"],[\"ValueError\",\"i exceeds the available number of "
	                  "char maps\"],[\"ValueError\",\"i exceeds the available number of char "
	                  "maps\"],2,\"UNAVAILABLE\",true,\"DejaVu Sans\",\"Regular\"]");
	e2e_stop();
}

/* Library code that formats the exception it caught used the real traceback module, which
 * walks frames the sandbox keeps out of reach: a grid search with one failing candidate (or
 * cross_val_score whose fits all fail) ended the call in AttributeError (tb_frame). Library
 * code gets the sandbox's own formatting: the failing candidate scores NaN and the best one
 * is found; the all-failed error says so, as on the host. */
Test(data, library_code_formats_the_exceptions_it_caught)
{
	start_data(NULL);
	e2e_expect_result(
	    "import warnings\n"
	    "import numpy as np\n"
	    "from sklearn.datasets import load_iris\n"
	    "from sklearn.linear_model import LogisticRegression\n"
	    "from sklearn.model_selection import GridSearchCV, cross_val_score\n"
	    "import traceback\n"
	    "X, y = load_iris(return_X_y=True)\n"
	    "warnings.simplefilter('ignore')\n"
	    "g = GridSearchCV(LogisticRegression(max_iter=500), {'penalty': ['l1', 'l2'], "
	    "'solver': ['lbfgs']}, cv=3).fit(X, y)\n"
	    "try:\n"
	    "    cross_val_score(LogisticRegression(penalty='l1'), X, y, cv=3)\n"
	    "    e = None\n"
	    "except ValueError as ex:\n"
	    "    e = str(ex).strip().splitlines()[0]\n"
	    "try:\n"
	    "    1 / 0\n"
	    "except ZeroDivisionError:\n"
	    "    mine = traceback.format_exc().splitlines()[-1]\n"
	    "[g.best_params_, bool(np.isnan(g.cv_results_['mean_test_score'][0])), e, mine]",
	    "[{\"penalty\":\"l2\",\"solver\":\"lbfgs\"},true,\"All the 3 fits "
	    "failed.\",\"ZeroDivisionError: division by zero\"]");
	e2e_stop();
}

/* numpy made arrays from lists by reading their items in place (the list's own item array,
 * its length read once) while it ran the user's code: a __float__ that emptied the list
 * (numpy then read freed items: a forged tuple handed out a bytearray over all memory), a list
 * subclass's __len__ that grew and emptied the outer list while numpy found the shape
 * (SIGSEGV, the host's too). np.array and its siblings, item assignment, and a ufunc's call
 * and its methods convert private copies of the lists: the same code converts what the lists held when called, and ordinary
 * conversions (nested, structured, ragged, cyclic, tuples) answer as the host does. */
Test(data, arrays_are_made_from_private_copies_of_lists)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "L = []\n"
	    "class F:\n"
	    "    def __init__(s, i): s.i = i\n"
	    "    def __float__(s):\n"
	    "        if s.i == 0:\n"
	    "            L.clear()\n"
	    "        return 1.0\n"
	    "L.extend(F(i) for i in range(8))\n"
	    "a = np.array(L, dtype=float).tolist()\n"
	    "M = []\n"
	    "class S(list):\n"
	    "    def __len__(self):\n"
	    "        M.extend([0] * 1000)\n"
	    "        del M[:]\n"
	    "        return list.__len__(self)\n"
	    "M.extend(S([1.0]) for _ in range(50))\n"
	    "c = np.asarray(M, dtype=object).shape\n"
	    "N = [F(1), F(0)]\n"
	    "L = N\n"
	    "b = np.zeros(2)\n"
	    "b[:] = N\n"
	    "C = [1, 2]; C.append(C)\n"
	    "r = [a, len(L), c, b.tolist(), np.array([[1, 2], [3, 4]]).tolist(),\n"
	    "     np.asarray([(1, 2.0), (3, 4.0)], dtype=[('a', int), ('b', float)]).tolist(),\n"
	    "     np.array([[1, 2], [3]], dtype=object).tolist(), np.array(C, "
	    "dtype=object).shape,\n"
	    "     np.asfortranarray(([1, 2], [3, 4])).flags.f_contiguous, np.asanyarray((1, (2, "
	    "3)), dtype=object).tolist()]\n"
	    "r",
	    "[[1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0],0,[50,1],[1.0,1.0],[[1,2],[3,4]],[[1,2.0],[3,4.0]],"
	    "[[1,2],[3]],[3],true,[1,[2,3]]]");
	/* The same through a ufunc's call and its methods. */
	e2e_expect_result(
	    "import numpy as np\n"
	    "M = []\n"
	    "class S(list):\n"
	    "    def __len__(self):\n"
	    "        M.extend([0] * 1000)\n"
	    "        del M[:]\n"
	    "        return list.__len__(self)\n"
	    "M.extend(S([1.0]) for _ in range(50))\n"
	    "r = [np.add(M, 1).shape, len(M)]\n"
	    "M2 = []; M2.extend(S([2.0]) for _ in range(5))\n"
	    "M = M2\n"
	    "r += [np.add.reduce(M, axis=0).tolist(), np.multiply.outer([1, 2], [3, 4]).tolist(), "
	    "np.sum([[1, 2], [3, 4]], axis=1).tolist(),\n"
	    "      np.add.accumulate([1, 2, 3]).tolist(), np.maximum([1, 5], [4, 2]).tolist(), "
	    "np.sqrt([4.0, 9.0]).tolist()]\n"
	    "a = np.zeros(3); np.add.at(a, [0, 0, 2], 1); r.append(a.tolist())\n"
	    "r.append(np.add.reduceat([1, 2, 3, 4], [0, 2]).tolist())\n"
	    "r",
	    "[[50,1],50,[10.0],[[3,4],[6,8]],[3,7],[1,3,6],[4,5],[2.0,3.0],[2.0,0.0,1.0],[3,7]]");
	/* scipy's ufuncs, and the ones np.frompyfunc and np.vectorize make. */
	e2e_expect_result("import numpy as np, scipy.special as sp\n"
	                  "M = []\n"
	                  "class S(list):\n"
	                  "    def __len__(self):\n"
	                  "        M.extend([0] * 1000)\n"
	                  "        del M[:]\n"
	                  "        return list.__len__(self)\n"
	                  "M.extend(S([1.0]) for _ in range(50))\n"
	                  "r = [sp.gamma(M).shape, len(M)]\n"
	                  "f = np.frompyfunc(lambda x: x * 2, 1, 1)\n"
	                  "r += [f(M).shape, len(M), np.vectorize(lambda x: x + 1)([1, "
	                  "2]).tolist(), sp.gamma([1.0, 5.0]).tolist(), f([1, 2]).tolist()]\n"
	                  "r",
	                  "[[50,1],50,[50,1],50,[2,3],[1.0,24.0],[2,4]]");
	e2e_stop();
}

/* FT2Font made by the user's code from a path: its C code opens the path with the builtins'
 * open, which a worker's builtins lack, and left the font unmade (every method then used NULL:
 * SIGSEGV). matplotlib's own fonts are read from memory, any other path with the sandbox's
 * open (no workspace here: PermissionError); plots are drawn as before. */
Test(data, ft2font_by_path_reads_the_font_the_sandbox_has)
{
	start_data(NULL);
	e2e_expect_result(
	    "from matplotlib import ft2font\n"
	    "import matplotlib.pyplot as plt, io\n"
	    "f = ft2font.FT2Font(\"/usr/share/matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf\")\n"
	    "f.set_size(12, 72); f.load_char(65)\n"
	    "try:\n"
	    "    ft2font.FT2Font('/etc/passwd')\n"
	    "    e = None\n"
	    "except Exception as x:\n"
	    "    e = type(x).__name__\n"
	    "fig, ax = plt.subplots(); ax.plot([1, 2]); ax.set_title('t'); b = io.BytesIO(); "
	    "fig.savefig(b, format='png'); fig.savefig(io.BytesIO(), format='pdf')\n"
	    "[f.num_glyphs, f.family_name, e, b.getvalue()[:4] == b'\\x89PNG']",
	    "[6241,\"DejaVu Sans\",\"PermissionError\",true]");
	e2e_stop();
}

/* Lists numpy reached through a sequence that is not a list (a class with __len__ and
 * __getitem__ handing out a list the user holds), and lists given as an index (a[L], a[L] =
 * v): numpy read them in place while an item's __len__ emptied them (SIGSEGV; a pointer the
 * user planted followed). Such sequences are read into private lists first, and index keys
 * are copied as values are: the same code ends in numpy's own ValueError (the shape the items
 * gave); ranges, deques and ordinary indexing answer as before. */
Test(data, sequences_and_indexes_are_read_into_private_lists)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, collections\n"
	                  "N = 64\n"
	                  "def y_class(L):\n"
	                  "    class Y:\n"
	                  "        done = False\n"
	                  "        def __len__(self):\n"
	                  "            if not Y.done:\n"
	                  "                Y.done = True\n"
	                  "                L.clear()\n"
	                  "            return 1\n"
	                  "        def __getitem__(self, i):\n"
	                  "            if i == 0:\n"
	                  "                return 1\n"
	                  "            raise IndexError\n"
	                  "    return Y\n"
	                  "class S:\n"
	                  "    def __init__(self, L):\n"
	                  "        self.L = L\n"
	                  "    def __len__(self):\n"
	                  "        return 1\n"
	                  "    def __getitem__(self, i):\n"
	                  "        if i == 0:\n"
	                  "            return self.L\n"
	                  "        raise IndexError\n"
	                  "def t(f):\n"
	                  "    try:\n"
	                  "        return ['ok', f()]\n"
	                  "    except Exception as e:\n"
	                  "        return [type(e).__name__]\n"
	                  "def made(fill):\n"
	                  "    L = []\n"
	                  "    L.append(y_class(L)())\n"
	                  "    L.extend(fill(i) for i in range(N - 1))\n"
	                  "    return L\n"
	                  "a = np.zeros(10)\n"
	                  "def assign(L):\n"
	                  "    a[L] = 1\n"
	                  "    return a.sum()\n"
	                  "r = [t(lambda: np.array(S(made(float)), dtype=object).shape),\n"
	                  "     t(lambda: np.zeros(10)[made(lambda i: i % 3)].shape),\n"
	                  "     t(lambda: assign(made(lambda i: i % 3))),\n"
	                  "     t(lambda: np.add(S(made(float)), 1).shape)]\n"
	                  "r += [np.array(range(4)).tolist(), np.zeros(5)[[1, 3]].tolist(), "
	                  "int(np.arange(6).reshape(2, 3)[1, 2]),\n"
	                  "      np.array(collections.deque([1, 2])).tolist(), np.arange(5)[(1, "
	                  ")].tolist() if False else int(np.arange(5)[(1,)])]\n"
	                  "r",
	                  "[[\"ok\",[1,64]],[\"ValueError\"],[\"ValueError\"],[\"ValueError\"],[0,"
	                  "1,2,3],[0.0,0.0],5,[1,2],1]");
	e2e_stop();
}

/* Red team 15B, H1 H2 M3 M2: a check asked the user's object, then compiled code got the same
 * object: a LIL matrix's data or rows answering their own iteration or len (values written past
 * the CSR arrays: a full escape), frombuffer's size a tuple subclass answering its own iteration
 * (a 2**20-pixel row over 16 bytes: a full escape), a CSR matrix's data answering its own len
 * and size (normalize wrote past it), a BSpline's c answering its own reshape (coefficients read
 * past it). Each is converted first (numpy's own arrays, exact tuples and ints) and only what
 * was converted is checked and passed on; ordinary use answers as on the host. */
Test(data, lil_frombuffer_sparse_and_spline_arguments_are_converted_before_the_check)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from PIL import Image\n"
	    "from sklearn.preprocessing import normalize\n"
	    "from scipy.interpolate import BSpline, make_interp_spline\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return str(e)[:36]\n"
	    "class Empty(np.ndarray):\n"
	    "    def __iter__(self):\n"
	    "        return iter([[]] * len(self))\n"
	    "# subclasses answering len are not made now: the attacks run with honest ones\n"
	    "made = []\n"
	    "try:\n"
	    "    class One(np.ndarray):\n"
	    "        def __len__(self):\n"
	    "            return 1\n"
	    "    made.append('One')\n"
	    "except TypeError:\n"
	    "    class One(np.ndarray):\n"
	    "        pass\n"
	    "def lil(rows, data):\n"
	    "    m = sp.lil_matrix((2, 4))\n"
	    "    m.rows, m.data = rows, data\n"
	    "    return m\n"
	    "r = np.empty(2, dtype=object); r[0] = [0]; r[1] = []\n"
	    "d = np.empty(2, dtype=object); d[0] = [1.0] * 64; d[1] = []\n"
	    "refused = [t(lil(r, d.view(Empty)).tocsr)]\n"
	    "r = np.empty(64, dtype=object); d = np.empty(64, dtype=object)\n"
	    "for i in range(64): r[i], d[i] = [0] * 7, [1.0] * 7\n"
	    "refused.append(t(lil(r.view(One), d).tocsr))\n"
	    "class Size(tuple):\n"
	    "    def __iter__(self):\n"
	    "        return iter((1, 1))\n"
	    "refused.append(t(lambda: Image.frombuffer('L', Size((1 << 20, 1)), bytearray(16), "
	    "'raw', 'L', 16, 1)))\n"
	    "try:\n"
	    "    class D(np.ndarray):\n"
	    "        def __len__(self):\n"
	    "            return 64\n"
	    "    made.append('D')\n"
	    "except TypeError:\n"
	    "    class D(np.ndarray):\n"
	    "        pass\n"
	    "m = sp.csr_matrix((np.ones(64), np.zeros(64, np.int32), np.array([0, 64], np.int32)), "
	    "shape=(1, 4))\n"
	    "m.data = np.ones(1).view(D)\n"
	    "refused.append(t(lambda: normalize(m, copy=False)))\n"
	    "small = np.zeros((1, 1))\n"
	    "try:\n"
	    "    class C(np.ndarray):\n"
	    "        def reshape(self, *a, **k):\n"
	    "            return small\n"
	    "    made.append('C')\n"
	    "except TypeError:\n"
	    "    class C(np.ndarray):\n"
	    "        pass\n"
	    "b = BSpline(np.arange(68.0), np.ones(64), 3, extrapolate=False)\n"
	    "b.c = np.ones(64).view(C)\n"
	    "refused.append(np.round(b(np.array([5.5, 30.5, 60.5])), 6).tolist())\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.rand(5, 4)\n"
	    "rd = lambda a: (np.round(np.asarray(a, dtype=float), 5) + 0.0).tolist()\n"
	    "l = sp.lil_matrix((3, 4)); l[0, 1], l[2, 3], l[1, 0] = 4.0, 5.0, -1.0\n"
	    "ok = [l.tocsr().toarray().tolist(), sp.lil_matrix(np.eye(3, "
	    "dtype=np.int64)).tocsr().indptr.tolist()]\n"
	    "im = Image.frombuffer('L', [4, 2], bytes(range(16)), 'raw', 'L', 8, 1)\n"
	    "im2 = Image.frombuffer('RGBA', (2, 2), bytes(range(16)), 'raw', 'RGBA', 0, -1)\n"
	    "ok += [list(im.getdata()), list(im2.getdata())[0], Image.frombuffer('L', (2, 2), "
	    "b'abcd').tobytes().decode()]\n"
	    "n = normalize(sp.csr_matrix(X[:3]), copy=False)\n"
	    "ok.append(rd(n.toarray().ravel()[:6]))\n"
	    "b = make_interp_spline(np.arange(8.0), np.arange(8.0) ** 2)\n"
	    "ok += [rd(b([0.5, 3.3, 6.9])), round(float(b.integrate(0, 5)), 6), "
	    "rd(b.derivative()([1.5])), rd(b.antiderivative()([2.0]))]\n"
	    "[refused, ok, made]",
	    "[[\"the LIL matrix has more entries than\",\"the LIL matrix has more rows than "
	    "it\",\"a stride of 16 bytes is shorter than\",\"indices and data should have the "
	    "sam\",[1.0,1.0,1.0]],[[[0.0,4.0,0.0,0.0],[-1.0,0.0,0.0,0.0],[0.0,0.0,0.0,5.0]],[0,1,2,"
	    "3],[0,1,2,3,8,9,10,11],[8,9,10,11],\"abcd\",[0.45221,0.58929,0.49666,0.44897,0.33668,"
	    "0.51329],[0.25,10.89,47.61],41.666667,[3.0],[2.66667]],[]]");
	e2e_stop();
}

/* Red team 15B, H3 M4: SGD's and coordinate descent's compiled fitters took coef_ (an instance
 * attribute) shorter than X's features and wrote past it (partial_fit: a full escape). The
 * fitters take weights of exactly the dataset's features (datasets made by make_dataset, which
 * remember theirs) and consistent arrays; SGD, coordinate descent and SAG answer as on the
 * host. */
Test(data, sgd_and_coordinate_descent_take_weights_of_the_datas_features)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from sklearn.linear_model import (SGDRegressor, SGDClassifier, ElasticNet, Lasso, "
	    "MultiTaskLasso,\n"
	    "                                  LassoCV, SGDOneClassSVM, Ridge, "
	    "LogisticRegression)\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return str(e)[:36]\n"
	    "g = SGDRegressor(max_iter=1, tol=None, learning_rate='constant', eta0=1.0, "
	    "fit_intercept=False)\n"
	    "g.partial_fit(np.ones((1, 3)), np.ones(1))\n"
	    "g.coef_ = np.zeros(1)\n"
	    "refused = [t(lambda: g.partial_fit(np.ones((1, 3)), np.ones(1)))]\n"
	    "e = ElasticNet(warm_start=True, alpha=0.1).fit(np.eye(3), np.ones(3))\n"
	    "e.coef_ = np.zeros(1)\n"
	    "refused.append(t(lambda: e.fit(np.eye(3), np.ones(3))))\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.rand(40, 5); y = X @ np.arange(5.0) + 0.1 * rng.rand(40)\n"
	    "c = (y > y.mean()).astype(int) + (y > np.percentile(y, 80))\n"
	    "rd = lambda a: (np.round(np.asarray(a, dtype=float), 5) + 0.0).tolist()\n"
	    "s = SGDRegressor(random_state=0, max_iter=50, tol=None).fit(X, y)\n"
	    "s.partial_fit(X, y)\n"
	    "s2 = SGDRegressor(random_state=0, max_iter=20, tol=None, "
	    "average=True).fit(sp.csr_matrix(X), y)\n"
	    "k = SGDClassifier(random_state=0, max_iter=30, tol=None, early_stopping=True, "
	    "validation_fraction=0.25).fit(X, c)\n"
	    "k2 = SGDClassifier(random_state=0, max_iter=30, tol=None, "
	    "average=3).fit(sp.csr_matrix(X), c > 0)\n"
	    "o = SGDOneClassSVM(random_state=0, max_iter=10, tol=None).fit(X)\n"
	    "ok = [rd(s.coef_), rd(s2.coef_), rd(k.coef_.ravel()), rd(k2.coef_), rd(o.coef_)]\n"
	    "e = ElasticNet(alpha=0.01).fit(X, y)\n"
	    "e2 = ElasticNet(alpha=0.01, warm_start=True).fit(X, y); e2.fit(X, y + 1)\n"
	    "e3 = Lasso(alpha=0.01).fit(sp.csc_matrix(X), y)\n"
	    "e4 = Lasso(alpha=0.01, precompute=True).fit(X, y)\n"
	    "mt = MultiTaskLasso(alpha=0.01).fit(X, np.c_[y, -y])\n"
	    "cv = LassoCV(cv=3).fit(X, y)\n"
	    "ok += [rd(e.coef_), rd(e2.coef_), rd(e3.coef_), rd(e4.coef_), rd(mt.coef_.ravel()), "
	    "round(float(cv.alpha_), 6)]\n"
	    "rs = Ridge(solver='sag', random_state=0).fit(X, y)\n"
	    "lr = LogisticRegression(solver='saga', random_state=0, "
	    "max_iter=200).fit(sp.csr_matrix(X), c)\n"
	    "ok += [rd(rs.coef_), rd(lr.coef_.ravel())]\n"
	    "[refused, ok]",
	    "[[\"_plain_sgd: weights has (1,) values,\",\"enet_coordinate_descent: w needs "
	    "one\"],[[0.965,0.82151,1.35406,1.51529,1.88078],[1.35818,1.20735,1.46594,1.6711,1."
	    "56094],[-6.93288,-6.286,-21.63361,-29.05228,-38.3461,-3.20775,12.02314,0.88348,0."
	    "33473,12.23636,1.68905,6.06422,14.33854,34.38562,34.37812],[[-11.77862,-10.12451,8."
	    "80853,8.09438,15.29905]],[0.69239,0.76182,0.60629,0.83217,0.62514],[0.03312,0.81517,1."
	    "87148,2.74908,3.73171],[0.03315,0.81517,1.87148,2.74908,3.7317],[0.0,0.81345,1.89339,"
	    "2.87936,3.88107],[0.0,0.81345,1.89339,2.87936,3.88107],[0.0,0.86416,1.92152,2.91204,3."
	    "91592,0.0,-0.86416,-1.92152,-2.91204,-3.91592],0.000722,[0.27981,0.6481,1.63781,2."
	    "21352,3.12867],[0.09349,0.17859,-0.89122,-0.62378,-1.44266,-0.15443,0.26716,0.32245,-"
	    "0.14644,0.53418,0.06093,-0.44576,0.56876,0.77022,0.90848]]]");
	e2e_stop();
}

/* Red team 15B, M1 M5: a masked array's _mask shorter than its values (the hash table kernels
 * read past it), a fitted _fit_X narrower than the query (the distance reductions read past
 * it). The kernels take a mask of exactly the values' length, the reductions two sets with as
 * many features; masked arrays and nearest neighbours answer as on the host. */
Test(data, masks_and_fitted_points_match_the_values_they_go_with)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from sklearn.neighbors import NearestNeighbors, KNeighborsClassifier, "
	    "LocalOutlierFactor\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return str(e)[:36]\n"
	    "refused = []\n"
	    "for op in ('unique', 'factorize', 'value_counts'):\n"
	    "    a = pd.array(np.zeros(100000, dtype=np.int8), dtype='Int8')\n"
	    "    a._mask = np.zeros(4, dtype=bool)\n"
	    "    refused.append(t(getattr(a, op)))\n"
	    "nn = NearestNeighbors(n_neighbors=1, algorithm='brute', "
	    "metric='manhattan').fit(np.ones((3, 2)))\n"
	    "nn._fit_X = np.ones((3, 1))\n"
	    "nn.n_features_in_ = 100000\n"
	    "refused.append(t(lambda: nn.kneighbors(np.ones((1, 100000)))))\n"
	    "nn.metric = 'euclidean'\n"
	    "refused.append(t(lambda: nn.radius_neighbors(np.ones((1, 100000)), radius=1.0)))\n"
	    "b = pd.array([1, None, 2, 2, None, 3], dtype='Int64')\n"
	    "f = pd.array([1.5, None, 1.5], dtype='Float64')\n"
	    "L = lambda a: [None if v is pd.NA else v.item() if isinstance(v, np.generic) else v "
	    "for v in a]\n"
	    "ok = [L(b.unique()), L(b.factorize()[0]), L(b.value_counts(dropna=False)), "
	    "L(pd.Series(b).mode()),\n"
	    "      L(pd.Series(b).duplicated()), L(f.unique()), int(pd.Series(b).nunique()),\n"
	    "      L(pd.Series(f).value_counts()), L(pd.array([True, None, True]).unique())]\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = rng.rand(30, 3); c = (X.sum(1) > 1.5).astype(int)\n"
	    "d, i = NearestNeighbors(n_neighbors=3).fit(X).kneighbors(X[:4])\n"
	    "dm, im = NearestNeighbors(n_neighbors=2, metric='manhattan', "
	    "algorithm='brute').fit(X).kneighbors(X[:2])\n"
	    "rn = NearestNeighbors(radius=0.3, algorithm='brute').fit(X).radius_neighbors(X[:3], "
	    "return_distance=False)\n"
	    "kc = KNeighborsClassifier(n_neighbors=5).fit(X, c)\n"
	    "lof = LocalOutlierFactor(n_neighbors=5).fit(X)\n"
	    "ok += [(np.round(d, 5) + 0.0).tolist(), i.tolist(), im.tolist(), [sorted(r.tolist()) "
	    "for r in rn],\n"
	    "       kc.predict(X[:8]).tolist(), np.round(lof.negative_outlier_factor_[:4], "
	    "5).tolist()]\n"
	    "[refused, ok]",
	    "[[\"the mask needs one byte for each val\",\"the mask needs one byte for each "
	    "val\",\"the mask needs one byte for each val\",\"X has 100000 features, Y has 1: the "
	    "\",\"X has 100000 features, Y has 1: the "
	    "\"],[[1,null,2,3],[0,-1,1,1,-1,2],[2,1,1,2],[2],[false,false,false,true,true,false],["
	    "1.5,null],3,[2],[true,null],[[0.0,0.19663,0.29473],[0.0,0.2014,0.24894],[0.0,0.32617,"
	    "0.34159],[0.0,0.14047,0.19663]],[[0,3,1],[1,28,16],[2,12,6],[3,10,0]],[[0,3],[1,28]],["
	    "[0,1,3],[0,1,7,13,16,28],[2]],[1,0,1,1,1,0,1,1],[-0.92534,-0.98383,-1.04139,-1.14997]]"
	    "]");
	e2e_stop();
}

/* Red team 15B, lead: a MultiIndex's codes set to arrays of different lengths (mi._codes) went
 * to is_lexsorted (is_monotonic_increasing, _lexsort_depth), which reads every level at the
 * first one's length: the shorter read past. It takes numpy's own contiguous arrays of one
 * length; ordinary MultiIndexes answer as on the host. */
Test(data, multiindex_codes_of_different_lengths_are_refused_before_is_lexsorted)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return str(e)[:36]\n"
	    "mi = pd.MultiIndex.from_arrays([np.arange(200000) // 2, np.zeros(200000, "
	    "dtype=int)])\n"
	    "mi._codes = type(mi.codes)([mi.codes[0], np.zeros(2, dtype=np.int8)])\n"
	    "refused = [t(lambda: mi.is_monotonic_increasing), t(lambda: mi._lexsort_depth)]\n"
	    "a = pd.MultiIndex.from_arrays([[1, 1, 2, 2], ['b', 'a', 'a', 'c']])\n"
	    "b = pd.MultiIndex.from_product([[1, 2], ['x', 'y']])\n"
	    "df = pd.DataFrame({'v': range(4)}, index=a)\n"
	    "ok = [bool(a.is_monotonic_increasing), int(a._lexsort_depth), "
	    "bool(b.is_monotonic_increasing),\n"
	    "      int(b._lexsort_depth), df.sort_index().v.tolist(), df.loc[2].v.tolist(),\n"
	    "      pd.Series(range(4), index=b).unstack().values.tolist()]\n"
	    "[refused, ok]",
	    "[[\"the codes of a MultiIndex have one l\",\"the codes of a MultiIndex have one "
	    "l\"],[false,1,true,2,[1,0,2,3],[2,3],[[0,1],[2,3]]]]");
	e2e_stop();
}

/* Red team 18A: matplotlib's resample with a transform that is not affine takes one source
 * point per output pixel from the transform's inverse and used that answer as its lookup table
 * whatever its length: a (1, 2) answer was read for every pixel of a 4000 x 4000 output
 * (SIGSEGV; smaller outputs sampled other memory). The answer must have a point for each
 * pixel; a transform of the code's that answers one still resamples as an affine one does, and
 * a polar image (a transform that is not affine, an empty first pass) draws as on the host. */
Test(data, a_resampling_transform_answers_one_point_for_each_pixel)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, matplotlib.pyplot as plt\n"
	    "from matplotlib import image as mi, transforms as mt\n"
	    "class Short:\n"
	    "    def transform(self, mesh):\n"
	    "        return np.full((1, 2), 0.5)\n"
	    "class Half:\n"
	    "    def transform(self, mesh):\n"
	    "        return mesh / 2.0\n"
	    "class T:\n"
	    "    is_affine = False\n"
	    "    input_dims = output_dims = 2\n"
	    "    def __init__(self, inv):\n"
	    "        self.inv = inv\n"
	    "    def inverted(self):\n"
	    "        return self.inv\n"
	    "inp = np.arange(100, dtype=np.float64).reshape(10, 10)\n"
	    "big = np.zeros((4000, 4000))\n"
	    "try:\n"
	    "    mi.resample(inp, big, T(Short()))\n"
	    "    refused = 'resampled'\n"
	    "except ValueError as e:\n"
	    "    refused = str(e)[-60:]\n"
	    "a, b = np.zeros((20, 20)), np.zeros((20, 20))\n"
	    "mi.resample(inp, a, mt.Affine2D().scale(2))\n"
	    "mi.resample(inp, b, T(Half()))\n"
	    "fig = plt.figure(figsize=(2, 2), dpi=50)\n"
	    "ax = fig.add_subplot(projection='polar')\n"
	    "ax.imshow(np.arange(400.0).reshape(20, 20), extent=(0, 6.28, 0, 1))\n"
	    "fig.canvas.draw()\n"
	    "drawn = int(np.asarray(fig.canvas.buffer_rgba())[..., :3].std() > 0)\n"
	    "plt.close('all')\n"
	    "[refused, int(np.count_nonzero(big)), bool((a == b).all()), float(b.sum()), drawn]",
	    "[\" array of shape (16000000, 2)), not an array of shape (1, 2)\",0,true,19800.0,"
	    "1]");
	e2e_stop();
}

/* An ndimage output that is not an array was checked by its own .shape, and the C code
 * wrote the input's lines into the array its __array__ returned (1 element here: a heap
 * overflow). It is converted before the check; honest outputs get the host's values. */
Test(data, ndimage_outputs_are_arrays_before_their_shape_is_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import ndimage as ndi\n"
	    "x = np.arange(1000, dtype=np.float64) % 7\n"
	    "class Out:\n"
	    "    shape = x.shape\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return np.zeros(1)\n"
	    "class Wrap:\n"
	    "    def __init__(self, a):\n"
	    "        self.a = a\n"
	    "        self.shape = a.shape\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return self.a\n"
	    "refused = []\n"
	    "for f in (ndi.correlate1d, ndi.convolve1d):\n"
	    "    try:\n"
	    "        f(x, [1.0], output=Out())\n"
	    "        refused.append('ran')\n"
	    "    except RuntimeError as e:\n"
	    "        refused.append(str(e))\n"
	    "for f in (ndi.uniform_filter1d, ndi.minimum_filter1d):\n"
	    "    try:\n"
	    "        f(x, 3, output=Out())\n"
	    "        refused.append('ran')\n"
	    "    except RuntimeError as e:\n"
	    "        refused.append(str(e))\n"
	    "out, w = np.zeros(1000), np.zeros(1000)\n"
	    "ndi.correlate1d(x, [1.0, 2.0, 1.0], output=out)\n"
	    "ndi.uniform_filter1d(x, 5, output=Wrap(w))\n"
	    "img = np.arange(48.0).reshape(6, 8)\n"
	    "o2 = np.zeros((6, 8), np.float32)\n"
	    "ndi.gaussian_filter(img, 1.5, output=o2)\n"
	    "[refused, float(out.sum()), float(out[:6].sum()), float(w.sum()), float(w[3]), "
	    "round(float(o2.sum()), 3)]",
	    "[[\"output shape not correct\",\"output shape not correct\",\"output shape not "
	    "correct\",\"output shape not correct\"],11988.0,61.0,2997.0,3.0,1128.0]");
	e2e_stop();
}

/* A path's vertices re-strided by a later converter's __float__ were read at any address
 * (here: another array's 7.5), and FT2Image.draw_rect drew a row past its buffer. Paths
 * reach the C code as private copies and draw_rect's corners must be in the image; honest
 * paths, points with __array__ and rectangles get the host's answers. */
Test(data, paths_reach_compiled_code_as_copies_and_text_rects_stay_in_the_image)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from matplotlib.path import Path\n"
	    "from matplotlib.transforms import Bbox\n"
	    "from matplotlib.collections import PathCollection\n"
	    "from matplotlib import ft2font\n"
	    "from matplotlib.transforms import IdentityTransform\n"
	    "v = np.array([[1.0, 2.0]])\n"
	    "far = np.full(4, 7.5)\n"
	    "class Evil:\n"
	    "    def __float__(self):\n"
	    "        try:\n"
	    "            v.shape = (2, 1)\n"
	    "            v.strides = (0, far.ctypes.data - v.ctypes.data)\n"
	    "        except ValueError:\n"
	    "            pass\n"
	    "        return 0.0\n"
	    "class P:\n"
	    "    vertices, codes, should_simplify, simplify_threshold = v, None, False, 0.0\n"
	    "got = []\n"
	    "class L(list):\n"
	    "    def __setitem__(self, k, val):\n"
	    "        got.append(np.array(val).tolist())\n"
	    "b = Bbox([[0, 0], [1, 1]])\n"
	    "b._points = L([[Evil(), 0.0], [1.0, 1.0]])\n"
	    "b.update_from_path(P(), ignore=True)\n"
	    "pts = np.array([[0.5, 0.5], [2.0, 2.0], [0.1, 0.9]])\n"
	    "class Pts:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return pts\n"
	    "class Sq(Path):\n"
	    "    pass\n"
	    "sq = Sq([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)], closed=True)\n"
	    "b2 = Bbox([[0, 0], [1, 1]])\n"
	    "b2.update_from_path(Path([(3, 4), (-1, 2)]), ignore=False)\n"
	    "class Paths(list):\n"
	    "    pass\n"
	    "ext = PathCollection(Paths([sq, Path([(2, 3), (4, "
	    "5)])])).get_datalim(IdentityTransform())\n"
	    "img = ft2font.FT2Image(16, 4)\n"
	    "refused = []\n"
	    "for c in ((0, 0, 15, 4), (0, 0, 16, 3), (3, 2, 1, 1), (-1, 0, 2, 2), (1.5, 0, 2, "
	    "2)):\n"
	    "    try:\n"
	    "        img.draw_rect(*c)\n"
	    "        refused.append('drawn')\n"
	    "    except (ValueError, TypeError, RuntimeError) as e:\n"
	    "        refused.append(type(e).__name__)\n"
	    "img.draw_rect(2, 1, 10, 3)\n"
	    "img.draw_rect_filled(12, 0, 100, 100)\n"
	    "a = np.asarray(img)\n"
	    "R = [got[1], refused, sq.contains_points(Pts()).tolist(), "
	    "list(sq.get_extents().bounds),\n"
	    " list(b2.bounds), list(ext.bounds), int(np.count_nonzero(a)), int(a[:, 12:].sum())]\n"
	    "R",
	    "[[2.0,2.0],[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"TypeError\"]"
	    ",[true,false,true],[0.0,0.0,1.0,1.0],[-1.0,0.0,4.0,4.0],[0.0,0.0,4.0,5.0],36,4080]");
	e2e_stop();
}

/* Ordinary data work that failed where the host works: Image.fromarray of np.asarray(img) (a
 * read-only RGB array, and its crops, flips and channel swaps) was refused by PIL's decoder,
 * which the copy of every read-only buffer handed a bytearray; scikit-learn's sample pictures,
 * scipy.misc's sample data and matplotlib's get_sample_data were files of their packages a
 * worker cannot open; sklearn.show_versions said numpy and pandas were missing,
 * matplotlib_fname() that the install was broken, PIL's features.check('jpg') raised. */
Test(data, bundled_samples_and_image_round_trips_work_as_on_the_host)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, warnings, io, contextlib\n"
	    "from PIL import Image, features\n"
	    "import matplotlib, matplotlib.pyplot as plt\n"
	    "from matplotlib import cbook\n"
	    "from scipy import misc\n"
	    "from sklearn.datasets import load_sample_image, load_sample_images\n"
	    "import sklearn\n"
	    "warnings.simplefilter('ignore')\n"
	    "a = np.asarray(Image.new('RGB', (8, 6), (250, 10, 5)))\n"
	    "trips = [Image.fromarray(a).size, Image.fromarray(a[::-1]).getpixel((0, 0)),\n"
	    "         Image.fromarray(a[1:3, 2:7]).size, Image.fromarray(a[:, :, "
	    "::-1]).getpixel((1, 1)),\n"
	    "         Image.fromarray(np.asarray(Image.new('F', (3, 2), 1.5))).getpixel((0, 0))]\n"
	    "imgs = load_sample_images()\n"
	    "out = io.StringIO()\n"
	    "with contextlib.redirect_stdout(out):\n"
	    "    sklearn.show_versions()\n"
	    "deps = [l.split()[0] for l in out.getvalue().splitlines() if l.endswith(': None')]\n"
	    "[trips, imgs.filenames, load_sample_image('china.jpg').shape,\n"
	    " misc.face().shape, misc.ascent().shape, misc.electrocardiogram().shape,\n"
	    " plt.imread(cbook.get_sample_data('grace_hopper.jpg')).shape,\n"
	    " pd.read_csv(cbook.get_sample_data('msft.csv')).shape,\n"
	    " sorted(cbook.get_sample_data('goog.npz', np_load=True).keys()), deps,\n"
	    " matplotlib.matplotlib_fname().endswith('matplotlibrc'), features.check('jpg'),\n"
	    " features.check('zlib')]",
	    "[[[8,6],[250,10,5],[5,2],[5,10,250],1.5],[\"china.jpg\",\"flower.jpg\"],[427,640,3],["
	    "768,1024,3],[512,512],[108000],[600,512,3],[65,7],[\"price_data\"],[\"pip:\","
	    "\"setuptools:\",\"Cython:\"],true,true,true]");
	e2e_stop();
}

/* Red team 21B: the Agg renderer's drawing methods took the code's paths and graphics context
 * as they were: a path's vertices, kept by the C++, were re-strided by the transform's
 * __float__ and read at any address (drawn, then read back: a float object's value leaked, an
 * unmapped address crashed). A region moved by set_x to 2**31 - 6 and restored whole, or an
 * image drawn there, wrapped round in agg's C ints and was written before the canvas (a full
 * escape). Paths reach the C++ as copies (the line is drawn at the path's own point), a region
 * restored whole lies in the canvas, an image is drawn near it; blitting works as before. */
Test(data, agg_drawing_takes_copies_and_stays_on_the_canvas)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import matplotlib.pyplot as plt\n"
	    "from matplotlib.backends.backend_agg import RendererAgg\n"
	    "out = []\n"
	    "def read_double(addr):\n"
	    "    R = RendererAgg(100, 1100, 72)\n"
	    "    r, gc = R._renderer, R.new_gc()\n"
	    "    v = np.array([[10.0, 90.0], [0.0, 0.0]])\n"
	    "    base = v.ctypes.data\n"
	    "    class Evil:\n"
	    "        def __float__(self):\n"
	    "            try:\n"
	    "                v.shape = (4, 1)\n"
	    "                v.strides = (8, addr - base)\n"
	    "            except ValueError:\n"
	    "                pass\n"
	    "            return 1.0\n"
	    "    class P:\n"
	    "        vertices, codes, should_simplify, simplify_threshold = v, None, False, 0.0\n"
	    "    r.draw_path(gc, P(), [[Evil(), 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "
	    "None)\n"
	    "    rows = np.nonzero(np.asarray(r)[:, 10, 3])[0]\n"
	    "    return float(1100 - rows.mean()) if len(rows) else None\n"
	    "secret = 512.0 * 1.0\n"
	    "out.append(read_double(id(secret) + 16))\n"
	    "fig = plt.figure(figsize=(2, 1), dpi=20)\n"
	    "fig.canvas.draw()\n"
	    "r = fig.canvas.get_renderer()._renderer\n"
	    "before = np.asarray(r).copy()\n"
	    "reg = r.copy_from_bbox(fig.bbox)\n"
	    "reg.set_x(2**31 - 6)\n"
	    "for f in (lambda: r.restore_region(reg),\n"
	    "          lambda: r.draw_image(r.new_gc() if hasattr(r, 'new_gc') else "
	    "fig.canvas.get_renderer().new_gc(),\n"
	    "                               2**31 - 1, 1, np.zeros((2, 2, 4), np.uint8))):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('drawn')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:24])\n"
	    "good = r.copy_from_bbox(fig.bbox)\n"
	    "r.restore_region(good)\n"
	    "out.append(bool((np.asarray(r) == before).all()))\n"
	    "plt.close('all')\n"
	    "out",
	    "[88.0,\"the region (2147483642, \",\"an image is drawn within\",true]");
	e2e_stop();
}

/* Private steps of the estimators and tests the code may call itself reached compiled code with
 * what the public ones check first: multiscale_graphcorr took compute_distance's matrices of two
 * sizes (the local covariance read past the smaller and added a chosen double at a chosen
 * offset: all memory), SVC._sparse_fit an X whose row outran its indices (the heap came back
 * as support vectors), _prune_tree a class count set after fit (160 KB of sample weights
 * written past an 8-byte block: the sandbox escaped), TSNE._tsne a neighbour past the samples
 * (SIGSEGV). And a resize a thread pool made for the code was taken for a library's: numpy
 * freed the block a view went on reading (the sandbox escaped). Each kernel checks its arrays
 * now, every resize leaves the memory it moves away from, and the public ways give what the
 * host gives. */
Test(data, estimators_private_steps_check_what_they_are_given)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from concurrent.futures import ThreadPoolExecutor\n"
	    "from scipy import stats\n"
	    "from sklearn.svm import SVC, LinearSVC\n"
	    "from sklearn.tree import DecisionTreeClassifier\n"
	    "from sklearn.manifold import TSNE\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ': ' + str(e)[:60]\n"
	    "r = []\n"
	    "# multiscale graph correlation: compute_distance of the code's answers matrices of "
	    "two sizes\n"
	    "rng = np.random.default_rng(0)\n"
	    "x, y = rng.random((20, 2)), rng.random((20, 2))\n"
	    "calls = []\n"
	    "def cd(a):\n"
	    "    calls.append(1)\n"
	    "    n = 300 if len(calls) == 1 else 5\n"
	    "    return np.random.rand(n, n)\n"
	    "r.append(t(lambda: stats.multiscale_graphcorr(x, y, compute_distance=cd, reps=1)))\n"
	    "m = stats.multiscale_graphcorr(x, 2 * x + 0.01 * y, reps=2, random_state=1)\n"
	    "r.append([round(float(m.statistic), 6), [int(s) for s in m.mgc_dict['opt_scale']]])\n"
	    "# libsvm's sparse training given an X of the code's whose row outruns its indices\n"
	    "class FakeX:\n"
	    "    pass\n"
	    "X = FakeX()\n"
	    "X.data, X.indices = np.ones(4096), np.zeros(2, dtype=np.int32)\n"
	    "X.indptr = np.array([0, 1, 4096], dtype=np.int32)\n"
	    "X.shape = (2, 2 ** 31 - 1)\n"
	    "X.sort_indices = lambda: None\n"
	    "c = SVC(kernel='linear')\n"
	    "c._gamma = 1.0\n"
	    "r.append(t(lambda: c._sparse_fit(X, np.array([0.0, 1.0]), np.ones(2), 0, 'linear', "
	    "0)))\n"
	    "Xd = rng.random((40, 3)); yd = (Xd[:, 0] > 0.5).astype(int)\n"
	    "dense = SVC(kernel='rbf').fit(Xd, yd)\n"
	    "sparse = SVC(kernel='rbf').fit(sp.csr_matrix(Xd), yd)\n"
	    "lin = LinearSVC(dual=True, random_state=0).fit(sp.csr_matrix(Xd), yd)\n"
	    "r.append([int(dense.support_.size), bool((dense.predict(Xd) == "
	    "sparse.predict(Xd)).all()),\n"
	    "          round(float(lin.score(Xd, yd)), 6)])\n"
	    "# cost complexity pruning into a tree of another class count than the fitted one\n"
	    "Xc = rng.random((200, 2)); yc = np.arange(200) % 50\n"
	    "tree = DecisionTreeClassifier(random_state=0).fit(Xc, yc)\n"
	    "tree.n_classes_ = 1\n"
	    "tree.ccp_alpha = 1e300\n"
	    "r.append(t(lambda: tree._prune_tree()))\n"
	    "path = DecisionTreeClassifier(random_state=0).cost_complexity_pruning_path(Xd, yd)\n"
	    "pruned = DecisionTreeClassifier(random_state=0, "
	    "ccp_alpha=float(path.ccp_alphas[-2])).fit(Xd, yd)\n"
	    "r.append([pruned.tree_.node_count, round(float(pruned.score(Xd, yd)), 6)])\n"
	    "# t-SNE's Barnes-Hut gradient given a neighbour past the samples\n"
	    "class P:\n"
	    "    def __imul__(self, k): return self\n"
	    "    def __itruediv__(self, k): return self\n"
	    "p = P()\n"
	    "p.data = np.array([1.0], dtype=np.float32)\n"
	    "p.indices = np.array([10 ** 10], dtype=np.int64)   # sample 0's neighbour: \"sample\" "
	    "10**10\n"
	    "p.indptr = np.array([0, 1, 1], dtype=np.int64)\n"
	    "ts = TSNE(method='barnes_hut')\n"
	    "ts.learning_rate_ = 200.0\n"
	    "r.append(t(lambda: ts._tsne(p, 1, 2, np.eye(2, dtype=np.float32))))\n"
	    "emb = TSNE(n_components=2, perplexity=5.0, init='pca', random_state=0,\n"
	    "           method='barnes_hut').fit_transform(Xd)\n"
	    "r.append([list(emb.shape), bool(np.isfinite(emb).all())])\n"
	    "# a resize a thread pool makes for the code of an array a view holds: refused\n"
	    "v = np.arange(1000.0)[:]\n"
	    "with ThreadPoolExecutor() as ex:\n"
	    "    r.append(t(lambda: ex.submit(v.base.resize, (2000,)).result()))\n"
	    "lists = [[None] * 1000 for _ in range(4)]\n"
	    "r.append([v[:3].tolist(), v[-1].item(), int(v.base.shape[0]), float(v.base[999])])\n"
	    "o = np.array(['a', 'b', None], dtype=object)\n"
	    "ov = o[:]\n"
	    "with ThreadPoolExecutor() as ex:\n"
	    "    r.append(t(lambda: ex.submit(ov.base.resize, (5,), refcheck=False).result()))\n"
	    "strs = [str(i) * 30 for i in range(1000)]\n"
	    "r.append([ov.tolist(), ov.base.tolist()])\n"
	    "o2 = np.array([[1, 'x']], dtype=object)\n"
	    "o2.resize((3, 2), refcheck=False)\n"
	    "r.append(o2.tolist())\n"
	    "r\n",
	    "[\"ValueError: the distance matrices should be square matrices of one "
	    "size\",[1.0,[16,13]],\"ValueError: the sparse arrays of X do not "
	    "agree\",[18,true,1.0],\"ValueError: the pruned tree is made of the fitted tree's "
	    "features, outpu\",[3,1.0],\"ValueError: a neighbour of P lies outside the 2 "
	    "samples\",[[40,2],true],\"ValueError: an array is resized in place only while nothing "
	    "else holds i\",[[0.0,1.0,2.0],999.0,1000,999.0],\"ValueError: an array is resized in "
	    "place only while nothing else holds "
	    "i\",[[\"a\",\"b\",null],[\"a\",\"b\",null]],[[1,\"x\"],[0,0],"
	    "[0,0]]]");
	e2e_stop();
}

/* More private steps that reached compiled code with what the code gave them: isotonic
 * regression's _build_y with a y whose indexing answered 2 values for 40 samples (_make_unique
 * read the heap past them into the model), a k-means subclass whose second run had 12 centers
 * for n_clusters=4 (_is_same_clustering wrote past its mapping: a view's strides rewritten, the
 * sandbox escaped), a warm-started gradient boosting whose _raw_predict answered one row for 9
 * samples (_update_raw_predictions added a leaf's value past it: the sandbox escaped). Each
 * kernel checks its arrays against each other now; fitting as documented gives the host's
 * answers. */
Test(data, private_steps_of_estimators_reach_kernels_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, scipy.sparse as sp\n"
	    "from sklearn.isotonic import IsotonicRegression\n"
	    "from sklearn.cluster import KMeans, BisectingKMeans\n"
	    "from sklearn.ensemble import HistGradientBoostingRegressor\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ': ' + str(e)[:50]\n"
	    "r = []\n"
	    "# isotonic regression's _build_y with a y whose indexing answers 2 values for 40 "
	    "samples\n"
	    "short = np.zeros(2)\n"
	    "class Short(np.ndarray):\n"
	    "    def __getitem__(self, idx):\n"
	    "        return short\n"
	    "class Y:\n"
	    "    def __getitem__(self, idx):\n"
	    "        return np.zeros(40).view(Short)\n"
	    "w = np.full(40, 1e-300); w[-1] = 1.0\n"
	    "r.append(t(lambda: IsotonicRegression()._build_y(np.zeros(40), Y(), w, "
	    "trim_duplicates=False)))\n"
	    "rng = np.random.default_rng(0)\n"
	    "x = rng.random(50); yv = x + 0.1 * rng.standard_normal(50)\n"
	    "iso = IsotonicRegression().fit(x, yv)\n"
	    "r.append([round(float(v), 6) for v in iso.predict([0.1, 0.5, 0.9])])\n"
	    "# k-means: a subclass's second run has more centers than n_clusters\n"
	    "X = rng.random((60, 2))\n"
	    "class Evil(KMeans):\n"
	    "    calls = 0\n"
	    "    def _init_centroids(self, X, x_squared_norms, init, random_state, "
	    "init_size=None,\n"
	    "                        n_centroids=None):\n"
	    "        Evil.calls += 1\n"
	    "        k = 4 if Evil.calls == 1 else 12\n"
	    "        return X[:k].copy()\n"
	    "r.append(t(lambda: Evil(n_clusters=4, n_init=2, init='random', "
	    "random_state=0).fit(X)))\n"
	    "km = KMeans(n_clusters=3, n_init=5, random_state=0).fit(X)\n"
	    "bk = BisectingKMeans(n_clusters=3, random_state=0).fit(X)\n"
	    "sk = KMeans(n_clusters=3, n_init=3, random_state=0).fit(sp.csr_matrix(X))\n"
	    "r.append([round(float(km.inertia_), 6), sorted(np.bincount(km.labels_).tolist()),\n"
	    "          round(float(bk.inertia_), 6), round(float(sk.inertia_), 6)])\n"
	    "# gradient boosting's warm start with raw predictions of one row for many samples\n"
	    "Xh = np.zeros((9, 1)); Xh[7, 0] = 1.0\n"
	    "est = HistGradientBoostingRegressor(max_iter=1, warm_start=True, "
	    "early_stopping=False,\n"
	    "                                    min_samples_leaf=1, learning_rate=1.0).fit(Xh, "
	    "np.zeros(9))\n"
	    "class L:\n"
	    "    constant_hessian = True\n"
	    "    need_update_leaves_values = False\n"
	    "    def init_gradient_and_hessian(self, n_samples, dtype=np.float32, order='F'):\n"
	    "        return np.zeros(n_samples, np.float32), np.ones(1, np.float32)\n"
	    "    def gradient(self, y_true, raw_prediction, sample_weight=None, "
	    "gradient_out=None,\n"
	    "                 n_threads=1):\n"
	    "        gradient_out[:] = 0.0\n"
	    "        gradient_out[7] = -1.0\n"
	    "        return gradient_out\n"
	    "raw = np.zeros((1, 1))\n"
	    "est._get_loss = lambda sample_weight=None: L()\n"
	    "est._raw_predict = lambda X, n_threads=None: raw\n"
	    "est.set_params(max_iter=2)\n"
	    "r.append([t(lambda: est.fit(Xh, np.zeros(9))), raw.tolist()])\n"
	    "Xg = rng.random((200, 3)); yg = Xg @ [1.0, -2.0, 0.5]\n"
	    "g = HistGradientBoostingRegressor(max_iter=10, warm_start=True, "
	    "random_state=0).fit(Xg, yg)\n"
	    "g.set_params(max_iter=20)\n"
	    "g.fit(Xg, yg)\n"
	    "r.append([g.n_iter_, round(float(g.score(Xg, yg)), 6)])\n"
	    "r\n",
	    "[\"ValueError: X, y and sample_weight should be of one length "
	    "(40\",[0.068426,0.470769,0.963569],\"ValueError: labels1 should be labels from 0 to "
	    "3\",[3.339311,[16,20,24],3.833813,3.339311],[\"ValueError: the grower's samples lie "
	    "outside the 1 raw predict\",[[0.0]]],[20,0.947352]]");
	e2e_stop();
}

/* DBSCAN's, the agglomerative clustering's, the pairwise metrics' and the gradient boosting's
 * compiled helpers (bounds checks off) read and wrote by the numbers they were given: called
 * with a neighbour, node or key number past their arrays, a metric of other features, a
 * result or row pointers of other sizes, a one-word bitset or a thread count of -3, they
 * ended the process (SIGSEGV, OpenMP's abort) or wrote past a view. Their modules are refused
 * to the code, and library code reaching them gets them checked against each other; the
 * average and complete linkages with a connectivity graph, which numpy in the sandbox broke
 * (each node's IntFloatDict read into a list of pairs: TypeError), answer again. The
 * estimators and metrics that use these kernels answer as on the host. */
Test(data, clustering_and_metric_kernels_check_their_indices)
{
	start_data(NULL);
	e2e_expect_result(
	    "import importlib\n"
	    "import numpy as np, scipy.sparse as sp\n"
	    "from sklearn.cluster import DBSCAN, AgglomerativeClustering\n"
	    "from sklearn.manifold import TSNE\n"
	    "from sklearn.metrics.pairwise import chi2_kernel, manhattan_distances\n"
	    "from sklearn.ensemble import HistGradientBoostingClassifier\n"
	    "import sklearn.metrics.pairwise as pw\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'done'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ': ' + str(e)[:40]\n"
	    "r = []\n"
	    "# the kernels' modules and names, as the attacks reached them on the host\n"
	    "for m in ('sklearn.cluster._dbscan_inner', 'sklearn.cluster._hierarchical_fast',\n"
	    "          'sklearn.manifold._utils', 'sklearn.metrics._pairwise_fast',\n"
	    "          'sklearn.ensemble._hist_gradient_boosting._bitset',\n"
	    "          'sklearn.ensemble._hist_gradient_boosting.utils'):\n"
	    "    r.append(t(lambda: importlib.import_module(m)))\n"
	    "r.append(t(lambda: pw._chi2_kernel_fast))\n"
	    "rng = np.random.RandomState(0)\n"
	    "X = np.vstack([rng.randn(15, 2), rng.randn(15, 2) + 5])\n"
	    "db = DBSCAN(eps=1.0, min_samples=3).fit(X)\n"
	    "r.append([db.labels_.tolist(), len(db.core_sample_indices_)])\n"
	    "conn = np.eye(30, k=1) + np.eye(30, k=-1)\n"
	    "for link in ('single', 'average', 'complete', 'ward'):\n"
	    "    a = AgglomerativeClustering(3, linkage=link).fit(X)\n"
	    "    c = AgglomerativeClustering(3, linkage=link, connectivity=conn).fit(X)\n"
	    "    r.append([a.labels_.tolist(), c.labels_.tolist()])\n"
	    "d = AgglomerativeClustering(None, distance_threshold=2.0, linkage='single').fit(X)\n"
	    "r.append([d.n_clusters_, np.round(d.distances_[:3], 6).tolist()])\n"
	    "e = TSNE(perplexity=5, random_state=0, init='pca', learning_rate=200.0, "
	    "n_iter=300).fit(X[:20])\n"
	    "r.append([np.round(e.embedding_[0], 3).tolist(), round(float(e.kl_divergence_), "
	    "4)])\n"
	    "P, Q = np.abs(X[:3]), np.abs(X[4:6])\n"
	    "r.append(np.round(chi2_kernel(P, Q, gamma=0.5), 6).tolist())\n"
	    "S = sp.random(4, 6, density=0.4, random_state=0, format='csr')\n"
	    "T = sp.random(2, 6, density=0.5, random_state=1, format='csr')\n"
	    "r.append(np.round(manhattan_distances(S, T), 6).tolist())\n"
	    "Xc = np.c_[rng.randint(0, 6, 200), rng.randn(200)]\n"
	    "yc = ((Xc[:, 0] % 2 == 0) ^ (Xc[:, 1] > 0)).astype(int)\n"
	    "h = HistGradientBoostingClassifier(categorical_features=[0], max_iter=20, "
	    "random_state=0).fit(Xc, yc)\n"
	    "r.append([round(float(h.score(Xc, yc)), 6), h.predict(Xc[:8]).tolist()])\n"
	    "r\n",
	    "[\"ModuleNotFoundError: Import of sklearn.cluster._dbscan_inner \","
	    "\"ModuleNotFoundError: Import of sklearn.cluster._hierarchical_\","
	    "\"ModuleNotFoundError: Import of sklearn.manifold._utils is not\","
	    "\"ModuleNotFoundError: Import of sklearn.metrics._pairwise_fast\","
	    "\"ModuleNotFoundError: Import of sklearn.ensemble._hist_gradien\","
	    "\"ModuleNotFoundError: Import of sklearn.ensemble._hist_gradien\","
	    "\"AttributeError: module 'sklearn.metrics.pairwise' has no\",[[0,-1,0,0,0,-1,0,0,0,"
	    "0,-1,0,0,0,-1,1,1,1,-1,1,1,-1,1,1,1,1,1,1,1,1],22],[[2,2,2,2,2,2,2,2,2,2,1,2,2,2,2,"
	    "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[1,1,1,1,1,1,1,1,1,1,1,2,2,2,2,0,0,0,0,0,0,0,0,0,0,0,"
	    "0,0,0,0]],[[1,1,1,1,1,1,1,1,1,1,2,1,1,1,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[1,1,1,1,1,"
	    "1,1,1,1,1,1,2,2,2,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]],[[1,1,1,1,1,1,1,1,1,1,2,1,1,1,1,"
	    "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[1,1,1,1,1,1,1,1,1,1,1,2,2,2,2,0,0,0,0,0,0,0,0,0,0,0,"
	    "0,0,0,0]],[[0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],[0,0,0,0,0,"
	    "0,0,0,0,0,0,2,2,2,2,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]],[3,[0.1164,0.145663,0.157508]],"
	    "[[-93.82599639892578,4.958000183105469],1.5669],[[0.477746,0.372579],[0.373084,"
	    "0.674361],[0.404359,0.456061]],[[2.190636,2.763434],[2.471695,2.182995],[1.439331,"
	    "1.683237],[1.736982,1.613464]],[0.99,[0,0,1,0,0,1,1,1]]]");
	e2e_stop();
}

/* numpy's C code calls an ndarray subclass's __array_finalize__ while it builds an array, and
 * reads its __array_priority__ in the middle of a routine: the code's finalizer reshaped the
 * result concatenate was about to fill (it copied by the new shape: past the block, a list's
 * items overwritten), took a view of an input whose dimension repeat had set to the repeated
 * total (all memory past it), and a priority property reshaped an input under concatenate and
 * dot (V43b); a subclass of numpy.ma.MaskedArray overrode the _update_from its finalizer calls
 * (the same holes again), and numpy.ma copied a dict of the code's into a masked array's
 * __dict__, whose __array_priority__ numpy then read (the code's __float__) in concatenate
 * (V45b). A class of the code's beneath ndarray may not define them, nor take a finalizer from
 * numpy's own subclasses; numpy's classes answer their priority whatever an instance's __dict__
 * holds; subclasses of ndarray that define neither, and numpy's own classes, work as on the
 * host. */
Test(data, numpy_calls_no_finalizer_or_priority_of_the_code_s_in_its_work)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "got = []\n"
	                  "def refused(make):\n"
	                  "    try:\n"
	                  "        make()\n"
	                  "    except TypeError as e:\n"
	                  "        got.append(str(e).split(':')[0])\n"
	                  "def f():\n"
	                  "    class F(np.ndarray):\n"
	                  "        def __array_finalize__(self, obj):\n"
	                  "            got.append(obj is not None and obj.shape)\n"
	                  "            self.shape = (self.size,)\n"
	                  "def p():\n"
	                  "    class P(np.ndarray):\n"
	                  "        @property\n"
	                  "        def __array_priority__(self):\n"
	                  "            self.shape = (self.size, 1)\n"
	                  "            return 5.0\n"
	                  "def q():\n"
	                  "    class Q(np.ndarray):\n"
	                  "        __array_priority__ = 5.0\n"
	                  "class Mixin:\n"
	                  "    def __array_finalize__(self, obj):\n"
	                  "        got.append('mixin ran')\n"
	                  "def g():\n"
	                  "    class G(Mixin, np.ndarray):\n"
	                  "        pass\n"
	                  "def mm():\n"
	                  "    class MM(np.ma.MaskedArray):\n"
	                  "        def _update_from(self, obj):\n"
	                  "            got.append('update ran')\n"
	                  "def mx():\n"
	                  "    class MX(np.matrix):\n"
	                  "        pass\n"
	                  "def pp():\n"
	                  "    class PP(np.ndarray):\n"
	                  "        def __array_prepare__(self, arr, context=None):\n"
	                  "            got.append('prepare ran')\n"
	                  "            return arr\n"
	                  "for make in (f, p, q, g, mm, mx, pp):\n"
	                  "    refused(make)\n"
	                  "class A(np.ndarray):\n"
	                  "    pass\n"
	                  "a = np.arange(8.0).view(A)\n"
	                  "b = np.concatenate([a.reshape(4, 2), a.reshape(4, 2)])\n"
	                  "c = a.repeat(3)\n"
	                  "d = a.reshape(2, 4) @ a.reshape(4, 2)\n"
	                  "m = np.ma.MaskedArray([1.0, 2.0, 3.0], mask=[0, 1, 0])\n"
	                  "class Prio:\n"
	                  "    def __float__(self):\n"
	                  "        got.append('the code ran inside numpy')\n"
	                  "        return 0.0\n"
	                  "def prep(arr, context=None):\n"
	                  "    got.append('the code ran inside a ufunc')\n"
	                  "    return arr\n"
	                  "m._optinfo['__array_priority__'] = Prio()\n"
	                  "m._optinfo['__array_prepare__'] = prep\n"
	                  "m._optinfo['kept'] = 'yes'\n"
	                  "mv = m.view()\n"
	                  "cat = np.concatenate([mv, mv])\n"
	                  "pos = np.positive(mv)\n"
	                  "import argparse\n"
	                  "class B(np.ndarray):\n"
	                  "    pass\n"
	                  "bb = np.zeros(3).view(B)\n"
	                  "ap = argparse.ArgumentParser()\n"
	                  "ap.add_argument('--x', dest='__array_prepare__', action='store_const', "
	                  "const=prep)\n"
	                  "try:\n"
	                  "    ap.parse_args(['--x'], namespace=bb)\n"
	                  "    via_argparse = 'set'\n"
	                  "except AttributeError:\n"
	                  "    via_argparse = 'refused'\n"
	                  "np.positive(bb)\n"
	                  "[got, b.shape, type(c).__name__, c.shape, float(c.sum()), d.tolist(),\n"
	                  " float(m.sum()), np.matrix([[1, 2]]).T.shape, type(cat).__name__, "
	                  "cat.shape,\n"
	                  " float(pos.sum()), mv._optinfo.get('kept'), via_argparse]",
	                  "[[\"F cannot define __array_finalize__ in the sandbox\","
	                  "\"P cannot define __array_priority__ in the sandbox\","
	                  "\"Q cannot define __array_priority__ in the sandbox\","
	                  "\"G cannot define __array_finalize__ in the sandbox\","
	                  "\"MM cannot define __array_finalize__ in the sandbox\","
	                  "\"MX cannot define __array_finalize__ in the sandbox\","
	                  "\"PP cannot define __array_prepare__ in the sandbox\"],"
	                  "[8,2],\"A\",[24],84.0,[[28.0,34.0],[76.0,98.0]],4.0,[2,1],"
	                  "\"MaskedArray\",[6],4.0,\"yes\",\"refused\"]");
	e2e_stop();
}

/* numpy's C code holds an array and reads its shape and strides again after running the code's
 * Python (an argument's __array__, any input's __array_prepare__): the code sets neither on an
 * array something else holds, directly or through numpy.ma's setters (V48b H1-H2). The probes
 * stay inside arrays of their own: the build before searched past the haystack (30: an item
 * read at the new row's stride) and wrote the ufunc's result past the returned block (252
 * items of `big` changed). */
Test(data, numpy_s_held_arrays_keep_their_shape_and_strides_under_the_code_s_calls)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from numpy.lib.stride_tricks import as_strided\n"
	    "got = []\n"
	    "def search(a, reshape):\n"
	    "    class Sorter:\n"
	    "        def __array__(self, dtype=None):\n"
	    "            try:\n"
	    "                reshape()\n"
	    "            except ValueError as e:\n"
	    "                got.append(str(e).split(' (')[0])\n"
	    "            return np.arange(64, dtype=np.intp)\n"
	    "    try:\n"
	    "        return int(np.ndarray.searchsorted(a, np.array([1030]), sorter=Sorter())[0])\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return type(e).__name__\n"
	    "def haystack():\n"
	    "    big = np.zeros(64 * 64, dtype=np.int64)\n"
	    "    big[::64] = 1000 + np.arange(64)\n"
	    "    a = big[:64]\n"
	    "    a[:] = np.arange(64)\n"
	    "    return a\n"
	    "a = haystack()\n"
	    "def direct():\n"
	    "    a.shape = (1, 64)\n"
	    "r = [search(a, direct), a.shape]\n"
	    "m = np.ma.array(haystack(), mask=np.zeros(64, bool))\n"
	    "def masked():\n"
	    "    m.shape = (1, 64)\n"
	    "r += [search(m, masked), m.shape]\n"
	    "h = haystack()\n"
	    "m2 = np.ma.array(np.zeros(64), mask=np.zeros(64, bool))\n"
	    "m2._mask = h\n"
	    "def masked_mask():\n"
	    "    m2.shape = (8, 8)\n"
	    "def mask_set():\n"
	    "    m2.mask = np.zeros((8, 8), bool)\n"
	    "r += [search(h, masked_mask), search(h, mask_set), h.shape, m2.shape]\n"
	    "big = np.full(600, -1, dtype=np.int64)\n"
	    "class O:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return np.arange(252, dtype=np.int64)\n"
	    "    def __array_prepare__(self, out, context=None):\n"
	    "        try:\n"
	    "            out.strides = (0,)\n"
	    "        except ValueError as e:\n"
	    "            got.append(str(e).split(' (')[0])\n"
	    "            return out\n"
	    "        return as_strided(big[:1], out.shape, (0,))\n"
	    "res = np.positive(O())\n"
	    "r += [int(res.sum()), int((big != -1).sum())]\n"
	    "own = np.arange(12)\n"
	    "own.shape = (3, 4)\n"
	    "f = np.ma.array(np.arange(6.0), mask=[0, 1, 0, 0, 0, 0])\n"
	    "f.shape = (2, 3)\n"
	    "f.mask = [[1, 0, 0], [0, 0, 1]]\n"
	    "r += [own.shape, f.shape, f.mask.shape, float(f.sum()), "
	    "np.matrix(np.arange(4)).shape]\n"
	    "[r, got]",
	    "[[64,[64],64,[64],64,64,[64],[8,8],31626,0,[3,4],[2,3],[2,3],10.0,[1,4]],[\"an "
	    "array's shape is changed in place only while nothing else holds it in the "
	    "sandbox\",\"an "
	    "array's shape is changed in place only while nothing else holds it in the "
	    "sandbox\",\"an "
	    "array's strides is changed in place only while nothing else holds it in the "
	    "sandbox\"]]");
	e2e_stop();
}

/* The same changes by other routes (V49a H1-H3): a library's code that sets the attribute the
 * code names (numpy's recarray.__setattr__, sklearn's set_params on a subclass), a resize to the
 * same size (numpy checks nothing then and rewrites the shape in place), and a data type of the
 * same item size with a subarray (an array of 64 doubles made 64 rows of 8 bytes: the search
 * read 512 items). The build before answered 30 (items read at the row's stride) for each. */
Test(data, numpy_s_held_arrays_keep_their_geometry_by_any_route)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from sklearn.base import BaseEstimator\n"
	    "got = []\n"
	    "def search(a, change):\n"
	    "    class Sorter:\n"
	    "        def __array__(self, dtype=None):\n"
	    "            try:\n"
	    "                change()\n"
	    "            except ValueError as e:\n"
	    "                got.append(str(e).split(' in place')[0])\n"
	    "            return np.arange(64, dtype=np.intp)\n"
	    "    try:\n"
	    "        return np.ndarray.searchsorted(a, np.array([1030.0, 5.0]), "
	    "sorter=Sorter()).tolist()\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return type(e).__name__\n"
	    "def haystack():\n"
	    "    big = np.zeros(64 * 64)\n"
	    "    big[64:] = 1000 + np.arange(64 * 63.0)\n"
	    "    big[::64] = 1000 + np.arange(64.0)\n"
	    "    a = big[:64]\n"
	    "    a[:] = np.arange(64.0)\n"
	    "    return a\n"
	    "rec = haystack().view(np.recarray)\n"
	    "def via_recarray():\n"
	    "    rec.shape = (1, 64)\n"
	    "class S(np.ndarray):\n"
	    "    set_params = BaseEstimator.set_params\n"
	    "    def get_params(self, deep=True):\n"
	    "        return {'shape': None}\n"
	    "sk = haystack().view(S)\n"
	    "def via_set_params():\n"
	    "    sk.set_params(shape=(1, 64))\n"
	    "view = haystack()[:]\n"
	    "def same_size_resize():\n"
	    "    view.resize((1, 64))\n"
	    "sub = haystack()\n"
	    "def subarray_dtype():\n"
	    "    sub.dtype = np.dtype(('i1', (8,)))\n"
	    "r = [search(rec, via_recarray), search(sk, via_set_params), search(view, "
	    "same_size_resize),\n"
	    "     search(sub, subarray_dtype), rec.shape, sk.shape, view.shape, sub.shape, "
	    "sub.dtype.str]\n"
	    "own = np.zeros(6)\n"
	    "own.resize((2, 3))\n"
	    "m = np.ma.array(np.zeros(4), mask=[0, 1, 0, 0])\n"
	    "m.dtype = np.int64\n"
	    "r += [own.shape, m.dtype.str, m.mask.tolist()]\n"
	    "[r, got]",
	    "[[[64,5],[64,5],[64,5],[64,5],[64],[64],[64],[64],\"<f8\",[2,3],\"<i8\",[false,true,"
	    "false,false]],[\"an array's shape is changed\",\"an array's shape is changed\",\"an "
	    "array is resized\",\"an array's dtype is changed\"]]");
	e2e_stop();
}

/* Through library code that is handed the array by the code (V50a H1, V50b H1): numpy.linalg's
 * tensorsolve reshapes what the wrap it took from the code's object (`__array_prepare__`)
 * returns, with a statement of its own; an executor's worker calls the array's resize the code
 * submitted. A library's own statement may count its own variables, not what the code gave it
 * (the C code that holds the array adds its reference), and a held array keeps its shape
 * whoever resizes it (an executor's resize of the code's own array too: the executor's frame
 * does not show the code's name; the code resizes it itself). The build before answered 30
 * (items read at the row's stride) for both. */
Test(data, numpy_s_held_arrays_keep_their_geometry_through_library_code)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, concurrent.futures as cf\n"
	    "got = []\n"
	    "def search(a, change):\n"
	    "    class Sorter:\n"
	    "        def __array__(self, dtype=None):\n"
	    "            try:\n"
	    "                change()\n"
	    "            except ValueError as e:\n"
	    "                got.append(str(e).split(' in place')[0])\n"
	    "            return np.arange(64, dtype=np.intp)\n"
	    "    try:\n"
	    "        return np.ndarray.searchsorted(a, np.array([1030.0, 5.0]), "
	    "sorter=Sorter()).tolist()\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return type(e).__name__\n"
	    "def haystack():\n"
	    "    big = np.zeros(64 * 64)\n"
	    "    big[::64] = 1000 + np.arange(64.0)\n"
	    "    a = big[:64]\n"
	    "    a[:] = np.arange(64.0)\n"
	    "    return a\n"
	    "a = haystack()\n"
	    "class W:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return np.eye(64).reshape(1, 64, 1, 64)\n"
	    "    def __array_prepare__(self, res, *rest):\n"
	    "        return a\n"
	    "def via_tensorsolve():\n"
	    "    np.linalg.tensorsolve(W(), np.ones((1, 64)))\n"
	    "b = haystack()\n"
	    "def via_executor():\n"
	    "    with cf.ThreadPoolExecutor(1) as ex:\n"
	    "        ex.submit(b.resize, (1, 64)).result()\n"
	    "r = [search(a, via_tensorsolve), search(b, via_executor), a.shape, b.shape]\n"
	    "own = np.zeros(6)\n"
	    "with cf.ThreadPoolExecutor(1) as ex:\n"
	    "    try:\n"
	    "        ex.submit(own.resize, (3, 2)).result()\n"
	    "    except ValueError as e:\n"
	    "        got.append(str(e).split(' in place')[0])\n"
	    "own = np.zeros(6)\n"
	    "own.resize((3, 2))\n"
	    "r += [own.shape, np.linalg.tensorsolve(np.eye(6).reshape(6, 2, 3), "
	    "np.ones(6)).shape]\n"
	    "[r, got]",
	    "[[[64,5],[64,5],[64],[64],[3,2],[2,3]],[\"an array's shape is changed\",\"an array is "
	    "resized\",\"an array is resized\"]]");
	e2e_stop();
}

/* What C code in the middle of its work holds by one reference of its own (V51a H1-H2): an
 * input's __array__ answer np.concatenate kept in its own list, which the code popped onto
 * numpy's own `self.shape = shape` (_ArrayMemoryError.__init__ called on it: a library's own
 * statement was let hold one reference more than its frame shows, for numpy's matrix), onto
 * its own resize, or handed to a thread pool to resize (any library frame was let resize an
 * array to another size): rows copied past the output each time (7 of them; posix reached).
 * A change of shape and a resize now find only the references the running frame shows (its
 * variables, its closure's cells, its module's names, the attributes and list items they
 * hold), whoever makes it (a closure's statement holds its own reference: refused too);
 * a new matrix is let take its two dimensions; compiled code resizes the arrays it made (hash
 * tables' vectors, qhull's extremes). The build before writes the 7 rows each time. */
Test(data, what_c_code_holds_by_one_reference_keeps_its_geometry)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, concurrent.futures as cf\n"
	    "try:\n"
	    "    np.empty(1 << 50)\n"
	    "except MemoryError as e:\n"
	    "    E = type(e)\n"
	    "got = []\n"
	    "def past(change):\n"
	    "    big = np.full((16, 8), -1.0)\n"
	    "    keep = []\n"
	    "    class XL:\n"
	    "        def __array__(self, dtype=None):\n"
	    "            x = np.arange(8.0).reshape(1, 8) + 100\n"
	    "            keep.append(x)\n"
	    "            return x\n"
	    "    class F:\n"
	    "        def __float__(self):\n"
	    "            if keep:\n"
	    "                try:\n"
	    "                    change(keep)\n"
	    "                except ValueError as e:\n"
	    "                    got.append(str(e).split(' in place')[0])\n"
	    "            return 5.0\n"
	    "    A = np.array([[F()] + [1] * 7], dtype=object)\n"
	    "    np.concatenate([A, XL()], axis=0, out=big[:2], casting='unsafe')\n"
	    "    return int((big[2:] != -1).any(axis=1).sum())\n"
	    "def by_library_statement(keep):\n"
	    "    E.__init__(keep.pop(), (8, 1), np.dtype(float))\n"
	    "def by_own_resize(keep):\n"
	    "    keep.pop().resize((8, 1))\n"
	    "def by_executor(keep):\n"
	    "    with cf.ThreadPoolExecutor(1) as ex:\n"
	    "        ex.submit(keep.pop().resize, (8, 8), refcheck=False).result()\n"
	    "def by_tuple(keep):\n"
	    "    T = (keep.pop(), (8, 1))\n"
	    "    np.ndarray.resize(*T)\n"
	    "def by_closure(keep):\n"
	    "    x = keep.pop()\n"
	    "    def g():\n"
	    "        x.shape = (8, 1)\n"
	    "    g()\n"
	    "r = [past(by_library_statement), past(by_own_resize), past(by_executor), "
	    "past(by_tuple), past(by_closure)]\n"
	    "import pandas as pd\n"
	    "from scipy.spatial import ConvexHull\n"
	    "class Box:\n"
	    "    def __init__(self):\n"
	    "        self.x = np.arange(6)\n"
	    "    def square(self):\n"
	    "        self.x.shape = (2, 3)\n"
	    "        return self.x.shape\n"
	    "def in_list():\n"
	    "    L = [np.arange(6)]\n"
	    "    L[0].shape = (3, 2)\n"
	    "    return L[0].shape\n"
	    "def in_closure():\n"
	    "    a = np.arange(6)\n"
	    "    def square():\n"
	    "        a.shape = (2, 3)\n"
	    "    square()\n"
	    "    return a.shape\n"
	    "lst, dd = [np.arange(6)], {'k': np.arange(12)}\n"
	    "lst[0].shape, dd['k'].shape = (2, 3), (3, 4)\n"
	    "own = np.arange(6)\n"
	    "own.resize((2, 3))\n"
	    "xs, ys = np.meshgrid(np.arange(3), np.arange(2))\n"
	    "m = np.asmatrix(np.arange(4))\n"
	    "r += [Box().square(), in_list(), in_closure(), own.shape, xs.shape, m.shape, (m.T * "
	    "m).shape,\n"
	    "      len(pd.unique(np.arange(5000) % 3000)), "
	    "len(ConvexHull(np.random.default_rng(0).random((200, 2))).vertices) > 3,\n"
	    "      lst[0].shape, dd['k'].shape]\n"
	    "[r, got]\n",
	    "[[0,0,0,0,0,[2,3],[3,2],[2,3],[2,3],[2,3],[1,4],[4,4],3000,true,[2,3],[3,4]],[\"an "
	    "array's shape is changed\",\"an array is resized\",\"an array is resized\",\"an "
	    "array is resized\",\"an array's shape is changed\"]]");
	e2e_stop();
}

/* pandas' hash tables grow the vectors they made (each over an array of its own) whatever they
 * count: dates, decimals, fractions, tuples, strings, objects of the code's classes, merge keys.
 * A table's comparisons run the code's __eq__, which may resize an array C code holds: that
 * is refused there as anywhere (V52a H1: a hash table counted as plain data let an array made
 * in the code's __eq__ be resized while np.concatenate held it, 7 rows past its output). The
 * build before refused to grow a table over fractions or the code's objects. */
Test(data, hash_tables_grow_their_own_vectors_over_any_values)
{
	start_data(NULL);
	e2e_expect_result(
	    "import datetime, decimal, numpy as np, pandas as pd\n"
	    "from fractions import Fraction\n"
	    "class K:\n"
	    "    def __init__(self, v): self.v = v\n"
	    "    def __hash__(self): return hash(self.v)\n"
	    "    def __eq__(self, o): return isinstance(o, K) and o.v == self.v\n"
	    "day = datetime.date(2024, 1, 1)\n"
	    "df = pd.DataFrame({'d': [day + datetime.timedelta(days=i % 200) for i in "
	    "range(600)],\n"
	    "                   'x': np.arange(600.0)})\n"
	    "keys = pd.DataFrame({'k': ['k%d' % i for i in range(300)], 'a': range(300)})\n"
	    "r = [df.groupby('d').x.sum().shape[0],\n"
	    "     pd.Series([decimal.Decimal(i % 300) / 7 for i in "
	    "range(900)]).value_counts().shape[0],\n"
	    "     len(pd.Series([Fraction(i, 7) for i in range(300)]).unique()),\n"
	    "     pd.Series([(i % 250, 'a') for i in range(500)]).nunique(),\n"
	    "     pd.factorize(np.array(['k%d' % (i % 400) for i in range(1000)], "
	    "dtype=object))[1].shape[0],\n"
	    "     len(pd.Series([K(i % 150) for i in range(300)]).unique()),\n"
	    "     keys.merge(keys.assign(b=1), on='k').shape]\n"
	    "# the code's __eq__, run by an index's hash table, resizes what np.concatenate holds\n"
	    "big = np.full((16, 8), -1.0)\n"
	    "keep, log = [], []\n"
	    "class XL:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        x = np.arange(8.0).reshape(1, 8) + 100\n"
	    "        keep.append(x)\n"
	    "        return x\n"
	    "class F:\n"
	    "    def __float__(self):\n"
	    "        if keep:\n"
	    "            try:\n"
	    "                keep.pop().resize((8, 1))\n"
	    "            except ValueError as e:\n"
	    "                log.append(str(e).split(' in place')[0])\n"
	    "        return 5.0\n"
	    "class E:\n"
	    "    def __init__(self, s): self.s = s\n"
	    "    def __hash__(self): return hash(self.s)\n"
	    "    def __eq__(self, other):\n"
	    "        if not log and isinstance(other, str):\n"
	    "            A = np.array([[F()] + [1] * 7], dtype=object)\n"
	    "            np.concatenate([A, XL()], axis=0, out=big[:2], casting='unsafe')\n"
	    "        return False\n"
	    "try:\n"
	    "    pd.Index([E('a'), E('b')], dtype=object).get_loc('a')\n"
	    "except KeyError:\n"
	    "    pass\n"
	    "r += [int((big[2:] != -1).any(axis=1).sum()), log]\n"
	    "r\n",
	    "[200,300,300,250,400,150,[300,4],0,[\"an array is resized\"]]");
	e2e_stop();
}

/* numpy.ma's shape setter let the array's own change through once for the array its statement
 * checked, and ran Python first (its mask made a private view: a dict lookup, where a key of the
 * code's with the hash of '_mask' ran its __eq__): inside, the code's own `s.shape = (8, 1)`,
 * nested, took that grant while np.concatenate held s (V53a H1: 7 rows past the output, posix
 * reached). The setter makes the value plain, checks the statement, and changes the array with
 * nothing run between; the nested statement is checked as any. The build before writes 7 rows. */
Test(data, numpy_ma_s_setters_run_nothing_between_their_check_and_the_change)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, numpy.ma as ma\n"
	    "big = np.full((16, 8), -1.0)\n"
	    "out = big[:2]\n"
	    "log = []\n"
	    "class S(np.ndarray):\n"
	    "    pass\n"
	    "s = (np.arange(8.0).reshape(1, 8) + 100).view(S)\n"
	    "st = {'eq': 'quiet'}\n"
	    "class F:\n"
	    "    def __float__(self):\n"
	    "        if st['eq'] == 'running':\n"
	    "            st['eq'] = 'quiet'\n"
	    "            try:\n"
	    "                s.shape = (8, 1)\n"
	    "                log.append('reshaped the held s (1,8)->(8,1)')\n"
	    "            except Exception as e:\n"
	    "                log.append('reshape raised %s %s' % (type(e).__name__, str(e)[:90]))\n"
	    "        return 5.0\n"
	    "class K:\n"
	    "    def __hash__(self):\n"
	    "        if st.get('hash') == 'raise':\n"
	    "            raise KeyError('keep me')\n"
	    "        return hash('_mask')\n"
	    "    def __eq__(self, o):\n"
	    "        if st['eq'] == 'attack':\n"
	    "            st['eq'] = 'running'\n"
	    "            A = np.array([[F()] + [1] * 7], dtype=object)\n"
	    "            try:\n"
	    "                np.concatenate([A, s], axis=0, out=out, casting='unsafe')\n"
	    "                log.append('concatenate ok')\n"
	    "            except Exception as e:\n"
	    "                log.append('concatenate raised %s %s' % (type(e).__name__, e))\n"
	    "        return False\n"
	    "class Obj:\n"
	    "    pass\n"
	    "o = Obj()\n"
	    "o._optinfo = {K(): 1}\n"
	    "st['hash'] = 'raise'\n"
	    "try:\n"
	    "    ma.MaskedArray._update_from(s, o)   # numpy.ma's function on any object: K into "
	    "s.__dict__\n"
	    "except Exception as e:\n"
	    "    log.append('_update_from raised %s %s' % (type(e).__name__, str(e)[:60]))\n"
	    "st['hash'] = 'ok'\n"
	    "st['eq'] = 'attack'\n"
	    "try:\n"
	    "    fset = ma.MaskedArray.shape.fset\n"
	    "    fset(s, (1, 8))\n"
	    "except Exception as e:\n"
	    "    log.append('fset raised %s %s' % (type(e).__name__, str(e)[:90]))\n"
	    "[int((big[2:] != -1).any(axis=1).sum()), [l.split(\" in place\")[0] for l in log]]\n",
	    "[0,[\"_update_from raised KeyError 'keep me'\",\"reshape raised ValueError an array's "
	    "shape is changed\",\"concatenate ok\"]]");
	e2e_stop();
}

/* A data type of another item size changes an array's dimensions as a shape does: the count of
 * two references a library's change of it was let have passed scipy.sparse's dtype setter
 * (`self.data.dtype = t`) on what the code's `data` property handed it, np.concatenate's input
 * (V54a H1: 8 cells past the output, posix reached). It is checked as a shape is, whoever
 * changes it; scipy.sparse's own dtype setter on its own arrays works. The build before
 * writes the 8 cells. */
Test(data, an_item_size_changes_only_what_the_frame_shows)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "import scipy.sparse as sp\n"
	    "setter = sp.csr_matrix.dtype.fset\n"
	    "big = np.full((8, 16), -1.0)\n"
	    "out = big[:1]\n"
	    "keep, log = [], []\n"
	    "class H:\n"
	    "    @property\n"
	    "    def data(self):\n"
	    "        return keep.pop()\n"
	    "class XL:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        x = np.arange(8.0).reshape(1, 8) + 100\n"
	    "        keep.append(x)\n"
	    "        return x\n"
	    "class F:\n"
	    "    def __float__(self):\n"
	    "        if keep:\n"
	    "            try:\n"
	    "                setter(H(), np.float32)\n"
	    "                log.append('dtype of the held input changed f8 (1,8) -> f4 (1,16)')\n"
	    "            except Exception as e:\n"
	    "                log.append('setter raised %s %s' % (type(e).__name__, str(e)[:120]))\n"
	    "        return 5.0\n"
	    "A = np.array([[F()] + [1] * 7], dtype=object)\n"
	    "try:\n"
	    "    np.concatenate([A, XL()], axis=1, out=out, casting='unsafe')\n"
	    "    log.append('concatenate ok')\n"
	    "except Exception as e:\n"
	    "    log.append('concatenate raised %s %s' % (type(e).__name__, e))\n"
	    "m = sp.csr_matrix(np.eye(3))\n"
	    "m.dtype = np.float32\n"
	    "[int((big[1:] != -1).sum()), [l.split(\" in place\")[0] for l in log], m.dtype.name, "
	    "m.toarray().sum().item()]\n",
	    "[0,[\"setter raised ValueError an array's dtype is changed\",\"concatenate "
	    "ok\"],\"float32\",1.875]");
	e2e_stop();
}

/* ndarray.__setstate__ on an array something held (V55a): numpy.ma's __setstate__ sets its
 * mask's state, `self._mask`, any array the code put there, reached by copy.copy of an object
 * whose reduce makes such a masked array. An empty input np.concatenate held took a state of
 * 16 columns after numpy sized the output by its none (16 cells written past it); a held array
 * shortened to no items passed as empty and had the block its view read freed (the view read a
 * new array's items: the sandbox escaped). A state is set only on an empty array that nothing
 * holds beyond the statement and what the running frame shows, and a shortened array no longer
 * owns its block. Copies of masked arrays and records work (a shape set to what it is changes
 * nothing: numpy.ma's copy of records set its shared mask's shape, refused before). The build
 * before writes the 16 cells and its view reads the new array's 7.0s. */
Test(data, an_array_s_state_is_set_only_on_what_nothing_else_holds)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, numpy.ma as ma, copy\n"
	    "from numpy.ma import mrecords\n"
	    "got = []\n"
	    "def through_masked(arr, state):\n"
	    "    def made():\n"
	    "        y = ma.MaskedArray(np.zeros(0))\n"
	    "        y._mask = arr\n"
	    "        return y\n"
	    "    class X:\n"
	    "        def __reduce_ex__(self, proto):\n"
	    "            return (made, (), (0,) + state + (None,))\n"
	    "    try:\n"
	    "        copy.copy(X())\n"
	    "    except ValueError as e:\n"
	    "        got.append(str(e).split(' (')[0])\n"
	    "# an empty input np.concatenate holds, given a state of 16 columns\n"
	    "big = np.full((8, 16), -1.0)\n"
	    "held = []\n"
	    "class XL:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        held.append(np.zeros((1, 0)))\n"
	    "        return held[-1]\n"
	    "class F:\n"
	    "    def __float__(self):\n"
	    "        if held:\n"
	    "            through_masked(held[0], ((1, 16), np.dtype('f8'), False, b'\\0' * 128, "
	    "b'\\1' * 16))\n"
	    "        return 5.0\n"
	    "try:\n"
	    "    np.concatenate([np.array([[F()]], dtype=object), XL()], axis=1, out=big[:1, :1],\n"
	    "                   casting='unsafe')\n"
	    "except ValueError as e:\n"
	    "    got.append('concatenate: ' + str(e).split(' (')[0])\n"
	    "r = [int((big[1:] != -1).sum() + (big[0, 1:] != -1).sum()), held[0].shape]\n"
	    "# a held array shortened to no items: its view keeps reading its block\n"
	    "H = np.arange(4096.0)\n"
	    "V = H[:]\n"
	    "H.resize(0)\n"
	    "through_masked(H, ((1,), np.dtype('f8'), False, b'\\0' * 8, b'\\1'))\n"
	    "B = np.full(4096, 7.0)\n"
	    "r += [H.shape, float(V[:5].sum()), float(V[-1])]\n"
	    "# what works: a state set on a new array, copies of masked arrays and records\n"
	    "m = ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])\n"
	    "rec = mrecords.fromarrays([np.arange(3), np.arange(3.0)], names='a,b')\n"
	    "r += [copy.deepcopy(m).tolist(), copy.copy(m).mask.tolist(),\n"
	    "      copy.deepcopy(rec).a.tolist(), "
	    "copy.deepcopy(np.arange(3).view(np.recarray)).tolist()]\n"
	    "s = np.arange(6)\n"
	    "s.shape = (6,)\n"
	    "r.append(s.shape)\n"
	    "[r, got]",
	    "[[0,[1,0],[0],10.0,4095.0,[1.0,null,3.0],[false,true,false],[0,1,2],[0,1,2],[6]],["
	    "\"an array's state is set only on a new, empty array\",\"an array's state is set only "
	    "on a new, empty array\"]]");
	e2e_stop();
}

/* numpy's matrix has two dimensions: its __array_finalize__ gives a new one two while the C code
 * making it holds it, which numpy's transpose and concatenate then overwrite with the
 * dimensions they made it with. A matrix of one dimension (an array's __class__ set to matrix,
 * or ravel with the matrix's own _getitem set by the code) transposed became (64, 64) over 64
 * items (V56a H1), one made by a resize (a tuple's subclass counting two and giving one too)
 * or by an index's C __index__ inside matrix's __getitem__ had np.concatenate write 8 rows of 8
 * into a block of 8 (V57a H1, V58a H1-H2), and one of three (`m[np.newaxis]`, as numpy gives it) transposed wrote three
 * dimensions into a block of two and read past its items. Such a change is let only to a new
 * matrix of fewer than two dimensions made from an array that is not a matrix of other than
 * two (concatenate's output is made from none); an array
 * becomes a matrix only as numpy makes one; a matrix's _getitem works for its own __getitem__
 * alone, with its index made plain data first (its __index__ runs before); a resize or a
 * state keeps a matrix's two dimensions. What a user does with matrices answers as on the host. The build before gives the
 * (64, 64) transposes and an item read past the block. */
Test(data, a_matrix_keeps_two_dimensions_under_the_code_that_makes_it)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, warnings, functools\n"
	    "warnings.simplefilter('ignore')\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        return [type(r).__name__, list(getattr(r, 'shape', ())), "
	    "np.asarray(r).ravel().tolist()[:4]]\n"
	    "    except (TypeError, ValueError) as e:\n"
	    "        return type(e).__name__\n"
	    "class S(np.ndarray):\n"
	    "    pass\n"
	    "def by_class():\n"
	    "    s = np.zeros(64).view(S)\n"
	    "    s.__class__ = np.matrix\n"
	    "    s._getitem = False\n"
	    "    return s.T\n"
	    "def by_resize():\n"
	    "    m = np.matrix([[0.0]])\n"
	    "    m.resize((1,))\n"
	    "    return np.concatenate([m] + [np.array([1000.0 + i]) for i in range(1, 8)])\n"
	    "class T(tuple):\n"
	    "    def __iter__(self):\n"
	    "        return iter((1,))\n"
	    "def by_tuple_resize():\n"
	    "    m = np.matrix([[0.0]])\n"
	    "    m.resize(T((1, 1)))\n"
	    "    return np.concatenate([m] + [np.array([1000.0 + i]) for i in range(1, 8)])\n"
	    "def by_index():\n"
	    "    m, L = np.matrix([[0.0]]), []\n"
	    "    class I:\n"
	    "        __index__ = functools.partial(list.extend, L, map(np.ndarray.ravel, [m]))\n"
	    "    try:\n"
	    "        m[I()]\n"
	    "    except IndexError:\n"
	    "        pass\n"
	    "    return np.concatenate(L[:1] + [np.array([1000.0 + i]) for i in range(1, 8)])\n"
	    "class I:\n"
	    "    def __index__(self):\n"
	    "        return 1\n"
	    "def by_getitem():\n"
	    "    M = np.matrix(np.zeros((1, 64)))\n"
	    "    M._getitem = True\n"
	    "    return np.ndarray.ravel(M).T\n"
	    "x = np.matrix([[1.0, 2.0]])[np.newaxis]\n"
	    "r = [t(by_class), t(by_getitem), t(by_resize), t(by_tuple_resize), t(by_index),\n"
	    "     list(x.shape), t(lambda: x.T),\n"
	    "     t(lambda: np.concatenate([x, x]))]\n"
	    "m = np.matrix([[1.0, 2.0], [3.0, 4.0]])\n"
	    "v = np.array([1.0, 2.0])\n"
	    "r += [t(f) for f in [lambda: np.asmatrix(np.arange(4.0)), lambda: m.T * m, lambda: "
	    "m.ravel(),\n"
	    "                     lambda: m[0], lambda: m[:, 1], lambda: m.sum(axis=0), lambda: "
	    "np.dot(m, v),\n"
	    "                     lambda: m.diagonal(), lambda: m.I, lambda: m.reshape(-1), "
	    "lambda: m.A1,\n"
	    "                     lambda: np.vstack([m, m]), lambda: np.asmatrix(5.0), lambda: "
	    "m.squeeze(),\n"
	    "                     lambda: m[np.array(1)], lambda: m[I()], lambda: m[m > 2]]]\n"
	    "r",
	    "[\"TypeError\",\"ValueError\",\"ValueError\",\"ValueError\",\"TypeError\",[1,1,2],"
	    "\"ValueError\",\"ValueError\",[\"matrix\",[1,4],[0.0,1.0,2.0,3.0]],[\"matrix\",[2,2],["
	    "10.0,14.0,14.0,20.0]],[\"matrix\",[1,4],[1.0,2.0,3.0,4.0]],[\"matrix\",[1,2],[1.0,2.0]"
	    "],[\"matrix\",[2,1],[2.0,4.0]],[\"matrix\",[1,2],[4.0,6.0]],[\"matrix\",[1,2],[5.0,11."
	    "0]],[\"matrix\",[1,2],[1.0,4.0]],[\"matrix\",[2,2],[-1.9999999999999998,1.0,1."
	    "4999999999999998,-0.49999999999999994]],[\"matrix\",[1,4],[1.0,2.0,3.0,4.0]],["
	    "\"ndarray\",[4],[1.0,2.0,3.0,4.0]],[\"matrix\",[4,2],[1.0,2.0,3.0,4.0]],[\"matrix\",["
	    "1,1],[5.0]],[\"matrix\",[2,2],[1.0,2.0,3.0,4.0]],[\"matrix\",[1,2],[3.0,4.0]],["
	    "\"matrix\",[1,2],[3.0,4.0]],[\"matrix\",[1,2],[3.0,4.0]]]");
	e2e_stop();
}

/* A matrix's _getitem is read as numpy's finalize reads it without running the code's: a key
 * of a str class of the code's in the matrix's own dictionary (put there by a library's
 * `self.__dict__.update(**kw)`: scipy's result bunch) ran its __eq__ at that lookup, inside
 * numpy's matrix.__getitem__, and transposed a ravel view of one dimension: (16, 16) over 16
 * items (V61a H1). No view of a matrix of other than two dimensions is reshaped by the
 * finalize, and such a dictionary makes the finalize raise. The build before gives the
 * (16, 16) transposes. Since a call's **mapping reaches its callee with exact str names, the
 * key is plain before the bunch sets it: nothing of the code's runs, and nothing raises. */
Test(data, a_matrix_s_getitem_is_read_without_running_the_code_s)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, functools, operator\n"
	    "from scipy.integrate import quad_vec\n"
	    "B = type(quad_vec(lambda x: x, 0, 1, full_output=True)[2])\n"
	    "nd = np.ndarray\n"
	    "seen, errors = [], []\n"
	    "for k in range(0, 8):\n"
	    "    M = np.matrix(np.arange(16.0).reshape(4, 4))\n"
	    "    out = []\n"
	    "    work = functools.partial(out.extend, map(nd.transpose, map(nd.ravel, [M])))\n"
	    "    it = map(operator.call, [bool] * k + [work] + [bool] * 50)\n"
	    "    class S(str):\n"
	    "        __hash__ = functools.partial(hash, '_getitem')\n"
	    "        __eq__ = functools.partial(next, it)\n"
	    "    del M._getitem\n"
	    "    try:\n"
	    "        B.__init__(M, **{S('zz'): 0})\n"
	    "        M._getitem = False\n"
	    "        M[1]\n"
	    "    except Exception as e:\n"
	    "        errors.append(type(e).__name__ + ('_getitem is numpy' in str(e)) * ' "
	    "_getitem')\n"
	    "    seen += [list(t.shape) for t in out]\n"
	    "n = np.matrix(np.arange(4.0).reshape(2, 2))\n"
	    "B.__init__(n, **{'plain': 1})\n"
	    "[seen, sorted(set(errors)), n[1].tolist(), n.T.tolist()]\n",
	    "[[],[],[[2.0,3.0]],[[0.0,2.0],[1.0,3.0]]]");
	e2e_stop();
}

/* What the own_arrays tests have the code run inside a scope, with no frame of its own: make
 * an array X there (counted as compiled code's own), then np.concatenate it after an array of
 * objects whose __float__ (C callables) resizes X to (6, 4) while concatenate holds it (its
 * output sized by X's two rows). comp runs it all; out holds X, res the result. */
#define SCOPE_PAYLOAD                                                                              \
	"P_ = functools.partial\n"                                                                 \
	"out, pair, res = [], [], []\n"                                                            \
	"w_make = P_(out.extend, map(np.zeros, [(2, 4)]))\n"                                       \
	"w_resize = P_(any, map(P_(np.ndarray.resize, refcheck=False), out, [(6, 4)]))\n"          \
	"class F:\n"                                                                               \
	"    __float__ = P_(next, filter(None, map(operator.call, [w_resize] + [P_(float, 1.0)] "  \
	"* "                                                                                       \
	"40)))\n"                                                                                  \
	"Y = np.empty((1, 4), dtype=object)\n"                                                     \
	"for i in range(4):\n"                                                                     \
	"    Y[0, i] = F()\n"                                                                      \
	"w_pair = P_(pair.extend, itertools.chain([Y], out))\n"                                    \
	"w_cat = P_(res.extend, map(P_(np.concatenate, dtype=float, casting='unsafe'), [pair]))\n" \
	"comp = P_(any, map(operator.call, [w_make, w_pair, w_cat, bool]))\n"

/* A record pydata.py hands compiled code inside an own_arrays scope (a SimpleNamespace) is plain
 * data by its keys too: a key of a str class of the code's, hashed as '__array__', ran the
 * code's __eq__ (C callables, no frame) at numpy's lookup inside qhull's add_points: an array
 * made there counted as compiled code's own, and was resized while np.concatenate held it:
 * rows written past the output (V62a H1). The build before resizes it to (6, 4), and the
 * concatenate writes past its (3, 4) output. Since a call's **mapping reaches its callee with
 * exact str names, the key is plain before the record is made: nothing of the code's runs. */
Test(data, a_scope_s_records_are_plain_by_their_keys)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, functools, operator, types, itertools\n"
	                  "from scipy.spatial import Delaunay\n"
	                  "d = Delaunay(np.random.rand(10, 2), incremental=True)\n"
	                  "q = d._qhull\n" SCOPE_PAYLOAD "class S(str):\n"
	                  "    __hash__ = P_(hash, '__array__')\n"
	                  "    __eq__ = P_(next, map(operator.call, [comp] + [bool] * 50))\n"
	                  "try:\n"
	                  "    q.add_points(types.SimpleNamespace(**{S('zz'): 0}))\n"
	                  "except Exception as e:\n"
	                  "    pass\n"
	                  "[[list(a.shape) for a in out], [list(r.shape) for r in res]]",
	                  "[[],[]]");
	e2e_stop();
}

/* numpy's floating point error hooks (an error callback, a log object) are the code's to set
 * and ran inside an own_arrays scope (a cast overflow in qhull's add_points): an array made
 * there counted as compiled code's own and was resized while np.concatenate held it (V63a
 * H1). Inside a scope, floating point errors and warnings are ignored; the code's settings are
 * back after. The build before resizes A to 71 items under a 65-item output. (Points added to
 * qhull are now made doubles before its scope, and one past a double's range is refused there
 * as NaN is: the cast no longer happens inside the scope at all.) */
Test(data, numpy_s_error_hooks_do_not_run_inside_a_scope)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, functools, operator, types\n"
	    "from scipy.spatial import Delaunay\n"
	    "P = functools.partial\n"
	    "got = []\n"
	    "def cb(kind, flag):\n"
	    "    if got:\n"
	    "        return\n"
	    "    A = np.zeros_like(np.zeros(1), shape=64)\n"
	    "    rs = P(np.ndarray.resize, A, 71, refcheck=False)\n"
	    "    class F:\n"
	    "        __float__ = P(next, filter(None, map(operator.call, [rs, P(float, 1.5)])))\n"
	    "    objs = np.empty(1, dtype=object)\n"
	    "    objs[0] = F()\n"
	    "    try:\n"
	    "        out = np.concatenate([objs, A], dtype=float, casting='unsafe')\n"
	    "        got.append([A.shape[0], out.shape[0]])\n"
	    "    except ValueError:\n"
	    "        got.append(['ValueError', A.shape[0]])\n"
	    "logged = []\n"
	    "hook = types.SimpleNamespace(write=P(logged.append))\n"
	    "d = Delaunay(np.array([[0., 0.], [1., 0.1], [0.2, 1.], [1.3, 1.2], [0.5, 0.4]]), "
	    "incremental=True)\n"
	    "r = []\n"
	    "for mode, call in (('call', cb), ('log', hook)):\n"
	    "    np.seterrcall(call)\n"
	    "    np.seterr(all=mode)\n"
	    "    try:\n"
	    "        d._qhull.add_points(np.array([[np.longdouble('1e400'), 0.5]], "
	    "dtype=np.longdouble))\n"
	    "    except Exception as e:\n"
	    "        r.append(type(e).__name__)\n"
	    "    r.append(np.geterr()['over'] == mode and np.geterrcall() is call)\n"
	    "    np.seterr(all='ignore')\n"
	    "[r, got, len(logged)]\n",
	    "[[\"ValueError\",true,\"ValueError\",true],[],0]");
	e2e_stop();
}

/* An array handed to compiled code in an own_arrays scope is plain by its data type too: a
 * structured one whose field title is a str class of the code's ran its __eq__ when numpy
 * looked a field up inside qhull's add_points (V64b H1): an array made there counted as
 * compiled code's own and was resized while np.concatenate held it. Only data types of one
 * plain kind open a scope. The build before resizes A to 71 items under a 65-item output. */
Test(data, a_scope_s_arrays_are_plain_by_their_data_types)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, functools, operator\n"
	    "from scipy.spatial import HalfspaceIntersection\n"
	    "state = {'done': False, 'got': []}\n"
	    "def cb():\n"
	    "    A = np.zeros_like(np.zeros(1), shape=64)\n"
	    "    rs = functools.partial(np.ndarray.resize, A, 71, refcheck=False)\n"
	    "    class F:\n"
	    "        __float__ = functools.partial(next, filter(None, map(operator.call,\n"
	    "                                      [rs, functools.partial(float, 1.5)])))\n"
	    "    objs = np.empty(1, dtype=object)\n"
	    "    objs[0] = F()\n"
	    "    try:\n"
	    "        out = np.concatenate([objs, A], dtype=float, casting='unsafe')\n"
	    "        state['got'].append([A.shape[0], out.shape[0]])\n"
	    "    except ValueError:\n"
	    "        state['got'].append(['ValueError', A.shape[0]])\n"
	    "class T(str):\n"
	    "    def __eq__(self, o):\n"
	    "        if state.get('armed') and not state['done']:\n"
	    "            state['done'] = True\n"
	    "            cb()\n"
	    "        return False\n"
	    "    def __hash__(self):\n"
	    "        return hash('b')\n"
	    "hs = np.array([[-1., 0., 0.], [0., -1., 0.], [1., 1., -2.]])\n"
	    "h = HalfspaceIntersection(hs, np.array([0.3, 0.3]), incremental=True)\n"
	    "pts = np.zeros((1, 3), np.dtype([((T('ttl'), 'a'), 'f8'), ('b', 'f8')]))\n"
	    "state['armed'] = True\n"
	    "try:\n"
	    "    h._qhull.add_points(pts, np.zeros(2))\n"
	    "except Exception as e:\n"
	    "    pass\n"
	    "state['got']\n",
	    "[[\"ValueError\",64]]");
	e2e_stop();
}

/* Nothing of the code's runs inside an own_arrays scope through what qhull frees there: an
 * object the code had put in the list of ridges qhull kept (get_voronoi_diagram handed it out)
 * died in the next call's scope, and its finalizer, a weak reference's callback (the type is
 * reachable from pandas' objects), a text wrapper's closing of the code's object or a
 * generator's finally block ran the code's C callables there with no frame (V65b H1, V66a
 * H1-H2): an array made there counted as compiled code's own and was resized while
 * np.concatenate held it. The code gets copies of qhull's lists, and a scope in which
 * something of the code's runs grants nothing. The build before resizes it to (6, 4) under a
 * (3, 4) output each way. */
Test(data, nothing_of_the_code_s_runs_in_a_scope_through_what_qhull_frees)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, functools, operator, itertools, io, time\n"
	    "from matplotlib import animation\n"
	    "import pandas as pd\n"
	    "from scipy.spatial import Voronoi\n"
	    "P_ = functools.partial\n"
	    "R = type(pd.DataFrame({'a': [1]})['a']._cacher[1])\n"
	    "def attack(plant):\n"
	    "    V = Voronoi(np.random.RandomState(0).rand(12, 2), incremental=True)\n"
	    "    q = V._qhull\n"
	    "    out, pair, res = [], [], []\n"
	    "    w_make = P_(out.extend, map(np.zeros, [(2, 4)]))\n"
	    "    w_resize = P_(any, map(P_(np.ndarray.resize, refcheck=False), out, [(6, 4)]))\n"
	    "    class F:\n"
	    "        __float__ = P_(next, filter(None, map(operator.call, [w_resize] + [P_(float, "
	    "1.0)] * 40)))\n"
	    "    Y = np.empty((1, 4), dtype=object)\n"
	    "    for i in range(4):\n"
	    "        Y[0, i] = F()\n"
	    "    w_pair = P_(pair.extend, itertools.chain([Y], out))\n"
	    "    w_cat = P_(res.extend, map(P_(np.concatenate, dtype=float, casting='unsafe'), "
	    "[pair]))\n"
	    "    comp = P_(any, map(operator.call, [w_make, w_pair, w_cat, bool]))\n"
	    "    lst = q.get_voronoi_diagram()[2]\n"
	    "    kept = plant(lst, comp)\n"
	    "    V.ridge_vertices = None\n"
	    "    del lst\n"
	    "    try:\n"
	    "        q.get_voronoi_diagram()\n"
	    "        r = 'ok'\n"
	    "    except Exception as e:\n"
	    "        r = type(e).__name__\n"
	    "    # (a finalizer deferred while a library ran long waits for a tick of the timer\n"
	    "    # in the code's own frame: this loop is one)\n"
	    "    t0 = time.process_time()\n"
	    "    while time.process_time() - t0 < 0.05:\n"
	    "        pass\n"
	    "    return [[list(a.shape) for a in out], [list(a.shape) for a in res], r]\n"
	    "def by_finalizer(lst, comp):\n"
	    "    class Dl:\n"
	    "        __del__ = P_(next, map(operator.call, [comp]), None)\n"
	    "    lst.append(Dl())\n"
	    "def by_weakref_callback(lst, comp):\n"
	    "    z = np.zeros(1)\n"
	    "    lst.append(z)\n"
	    "    return R(z, P_(set().union, map(operator.call, [comp])))\n"
	    "def by_text_wrapper(lst, comp):\n"
	    "    class B:\n"
	    "        closed = False\n"
	    "        readable = P_(bool, 1)\n"
	    "        writable = seekable = flush = P_(bool, 0)\n"
	    "        close = P_(next, map(operator.call, [comp]), None)\n"
	    "    lst.append(io.TextIOWrapper(B(), encoding='utf-8'))\n"
	    "def by_generator(lst, comp):\n"
	    "    class W:\n"
	    "        setup = slice\n"
	    "        finish = P_(next, map(operator.call, [comp]), None)\n"
	    "    cm = animation.AbstractMovieWriter.saving(W(), None, None, None)\n"
	    "    cm.__enter__()\n"
	    "    lst.append(cm.gen)\n"
	    "[[attack(f) for f in (by_finalizer, by_weakref_callback, by_text_wrapper, "
	    "by_generator)],\n"
	    " len(Voronoi(np.random.RandomState(1).rand(12, 2)).ridge_vertices) > 0]\n",
	    "[[[[[2,4]],[],\"ok\"],[[[2,4]],[],\"ok\"],[[[2,4]],[],\"ok\"],[[[2,4]],[],\"ok\"]],"
	    "true]");
	e2e_stop();
}

/* A key of the code's in numpy's finfo cache (a dict the code may change) compared with
 * float64's data type inside Delaunay.transform's scope ran C callables as its __eq__ (V67a
 * H1; a Decimal key asking an ABC hook, a value whose eps is a property: V68a): an array made
 * there was resized while np.concatenate held it. numpy's finfo keeps its own cache now (what
 * the code changes is not read), and a hash or comparison of the code's classes inside a scope
 * would end its grants. The build before resizes it to (6, 4) under a (3, 4) output. */
Test(data, numpy_s_finfo_cache_is_not_the_code_s_to_fill)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, functools, operator, itertools\n"
	                  "from scipy.spatial import Delaunay\n" SCOPE_PAYLOAD
	                  "H = hash(np.dtype(float))\n"
	                  "class K:\n"
	                  "    __hash__ = lambda s: H\n"
	                  "    __eq__ = P_(next, map(operator.call, [comp]))\n"
	                  "cache = np.finfo._finfo_cache\n"
	                  "saved = dict(cache)\n"
	                  "cache.clear()\n"
	                  "cache[K()] = None\n"
	                  "d = Delaunay(np.random.RandomState(0).rand(12, 2))\n"
	                  "try:\n"
	                  "    d.transform\n"
	                  "    r = 'ok'\n"
	                  "except ValueError:\n"
	                  "    r = 'ValueError'\n"
	                  "cache.clear()\n"
	                  "cache.update(saved)\n"
	                  "[[list(a.shape) for a in out], [list(a.shape) for a in res], r,\n"
	                  " Delaunay(np.random.RandomState(1).rand(12, 2)).transform.shape[1:]]\n",
	                  "[[],[],\"ok\",[3,2]]");
	e2e_stop();
}

/* Each caller of np.finfo gets its own copy of what numpy cached: an eps the code set on the one
 * it was given was read by Delaunay.transform's getter inside its own_arrays scope, and its
 * __float__ (C callables) ran there (V69a H1). The build before resizes X to (6, 4) under a
 * (3, 4) output. */
Test(data, np_finfo_hands_each_caller_its_own)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, functools, operator, itertools\n"
	    "from scipy.spatial import Delaunay\n" SCOPE_PAYLOAD "class E:\n"
	    "    __float__ = P_(next, filter(None, map(operator.call, itertools.chain(\n"
	    "        [comp], itertools.repeat(P_(float, 2.2e-16))))))\n"
	    "np.finfo(float).eps = E()\n"
	    "Delaunay(np.random.RandomState(0).rand(12, 2)).transform\n"
	    "[[list(a.shape) for a in out], [list(a.shape) for a in res],\n"
	    " float(np.finfo(float).eps) < 1e-15]",
	    "[[],[],true]");
	e2e_stop();
}

/* A weak reference made with a callback leaves the arguments as they were given: the wrapper the
 * callback runs in was put into the caller's own tuple (R(*t) changed the code's t). */
Test(data, a_weak_reference_leaves_its_arguments_as_given)
{
	start_data(NULL);
	e2e_expect_result("import pandas as pd, numpy as np\n"
	                  "R = type(pd.DataFrame({'a': [1]})['a']._cacher[1])\n"
	                  "z = np.zeros(1)\n"
	                  "cb = [].append\n"
	                  "t = (z, cb)\n"
	                  "w = R(*t)\n"
	                  "[t[1] is cb, w() is z]",
	                  "[true,true]");
	e2e_stop();
}

/* numpy's repeat sets its source's length along the axis to the result's while it makes the
 * result, whose class's __array_finalize__ (matrix's, numpy.ma's) runs then: a matrix's
 * _getitem and numpy.ma's _optinfo, objects of the code's, ran the code's there, which took a
 * view of the source claiming six columns over two (items read and written past its block,
 * posix reached: V59a H1-H2). A subclass's repeat is made of a plain view, the result taking
 * the class after; a matrix's _getitem is a bool. Results are the host's. The build before
 * (and the host) lets the code see the (2, 6) source. */
Test(data, a_repeat_runs_nothing_of_the_code_s_while_its_source_claims_the_result_s_length)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "got = []\n"
	    "m = np.matrix([[1.0, 2.0], [3.0, 4.0]])\n"
	    "a = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]])\n"
	    "class B:\n"
	    "    def __bool__(self):\n"
	    "        got.append(np.asarray(m).shape)\n"
	    "        return False\n"
	    "class M:\n"
	    "    def keys(self):\n"
	    "        got.append(np.asarray(a).shape)\n"
	    "        return []\n"
	    "    def __getitem__(self, k):\n"
	    "        raise KeyError(k)\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        return [type(r).__name__, list(r.shape), np.asarray(r)[0].tolist()]\n"
	    "    except ValueError as e:\n"
	    "        return 'ValueError'\n"
	    "a._optinfo = M()\n"
	    "r = [t(lambda: np.ndarray.repeat(a, 3, axis=1)), t(lambda: a.repeat(2, axis=0))]\n"
	    "m._getitem = B()\n"
	    "r += [t(lambda: m.repeat(3, axis=1)), t(lambda: m.T)]\n"
	    "m._getitem = False\n"
	    "r += [t(lambda: m.repeat(3, axis=1)), t(lambda: np.repeat(m, [1, 2], axis=0)),\n"
	    "      t(lambda: np.repeat(np.arange(4.0).reshape(2, 2), 2, axis=1))]\n"
	    "[r, got]",
	    "[[[\"MaskedArray\",[2,6],[1.0,1.0,1.0,2.0,2.0,2.0]],[\"MaskedArray\",[4,2],[1.0,2.0]],"
	    "[\"matrix\",[2,6],[1.0,1.0,1.0,2.0,2.0,2.0]],\"ValueError\",[\"matrix\",[2,6],[1.0,1."
	    "0,1.0,2.0,2.0,2.0]],[\"matrix\",[3,2],[1.0,2.0]],[\"ndarray\",[2,4],[0.0,0.0,1.0,1.0]]"
	    "],[[2,2]]]");
	e2e_stop();
}

/* What the code hands numpy's own Python and C (V50a H2, V50b H2-H3): numpy.ma's flat iterator
 * reshapes what its maskiter (an attribute the code sets) answers, with a statement of its own,
 * and that was the array searchsorted held; an index given as an object whose __array__ answers
 * the code's own index array, or as a memoryview of the code's bytes, reached numpy as it was
 * (rewritten by a value's __float__ after numpy checked it: 7.0 written 29984 items past t);
 * ndarray.repeat read the code's counts again after a masked array's finalizer ran the code's
 * mapping (written past the result; the counts are read once, and a subclass's repeat now runs
 * no finalizer of it: the mapping is not read, the code's counts stay as they were). The build
 * before answers 30 and writes 7.0 each time. */
Test(data, numpy_s_checks_hold_for_what_the_code_hands_it)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "r = []\n"
	    "big = np.zeros(64 * 64)\n"
	    "big[::64] = 1000 + np.arange(64.0)\n"
	    "a = big[:64]\n"
	    "a[:] = np.arange(64.0)\n"
	    "class G:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def __getitem__(self, i):\n"
	    "        return self.v\n"
	    "class Sorter:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        it = np.ma.masked_array(np.zeros(64), mask=np.zeros(64, bool)).flat\n"
	    "        it.dataiter = G(np.zeros((1, 64)))\n"
	    "        it.maskiter = G(a)\n"
	    "        try:\n"
	    "            it[0]\n"
	    "        except ValueError as e:\n"
	    "            r.append(str(e).split(' in place')[0])\n"
	    "        return np.arange(64, dtype=np.intp)\n"
	    "r += [a.searchsorted(np.array([1030.0, 5.0]), sorter=Sorter()).tolist(), a.shape]\n"
	    "wide = np.full(40000, -1.0)\n"
	    "t = wide[:16]\n"
	    "idx = np.zeros(20000, dtype=np.intp)\n"
	    "class I:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        return idx\n"
	    "class F:\n"
	    "    def __init__(self, k):\n"
	    "        self.k = k\n"
	    "    def __float__(self):\n"
	    "        if self.k == 9000:\n"
	    "            idx[9001] = 30000\n"
	    "        return 7.0 if self.k == 9001 else 0.0\n"
	    "vals = np.empty(20000, dtype=object)\n"
	    "vals[:] = [F(k) for k in range(20000)]\n"
	    "raw = bytearray(idx.tobytes())\n"
	    "view = np.frombuffer(raw, dtype=np.intp)\n"
	    "class Fm(F):\n"
	    "    def __float__(self):\n"
	    "        if self.k == 9000:\n"
	    "            view_w = memoryview(raw).cast('q')\n"
	    "            view_w[9001] = 30000\n"
	    "        return 7.0 if self.k == 9001 else 0.0\n"
	    "mvals = np.empty(20000, dtype=object)\n"
	    "mvals[:] = [Fm(k) for k in range(20000)]\n"
	    "for key, v in ((I(), vals), ((I(),), vals), (memoryview(raw).cast('q'), mvals)):\n"
	    "    idx[:] = 0\n"
	    "    raw[:] = bytes(len(raw))\n"
	    "    t[key] = v\n"
	    "    r.append(float(wide[30000]))\n"
	    "counts = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=np.intp)\n"
	    "class Opt:\n"
	    "    def keys(self):\n"
	    "        counts[:] = 1\n"
	    "        return []\n"
	    "    def __getitem__(self, k):\n"
	    "        raise KeyError(k)\n"
	    "m = np.ma.MaskedArray(np.arange(1, 11))\n"
	    "m._optinfo = Opt()\n"
	    "rep = np.ndarray.repeat(m, counts, 0)\n"
	    "r += [np.asarray(rep).tolist(), counts.tolist()]\n"
	    "r",
	    "[\"an array's shape is "
	    "changed\",[64,5],[64],-1.0,-1.0,-1.0,[1,2,3,4],[1,1,1,1,0,0,0,0,0,0]]");
	e2e_stop();
}

/* The references the code may hold are those it shows (V51a H2): an array popped from the code's
 * list onto the statement (`keep.pop().shape = s`, `.strides`) had two references,
 * the statement's and concatenate's own (of what an input's __array__ answered), and passed for
 * "one name and the statement": concatenate then wrote 7 rows past its 2-row output (the same
 * with `.resize` is open: a resize keeps the older count, as Cython's own resizes need it). The code's
 * variables and module names that are the array count now, nothing else: two names of the code's
 * and a function's argument reshape as before. And an array of objects runs the __del__ of the
 * items it replaces: `X[idx] = floats` stored past X once the old item's __del__ rewrote idx
 * (V51a H3); its index is a private copy too. */
Test(data, the_code_changes_arrays_only_it_is_seen_to_hold)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "r = []\n"
	    "def attempt(change):\n"
	    "    big = np.full((16, 8), -1.0)\n"
	    "    out = big[:2]\n"
	    "    keep = []\n"
	    "    class XL:\n"
	    "        def __array__(self, dtype=None):\n"
	    "            x = np.arange(8.0).reshape(1, 8) + 100\n"
	    "            keep.append(x)\n"
	    "            return x\n"
	    "    class F:\n"
	    "        def __float__(self):\n"
	    "            if keep:\n"
	    "                try:\n"
	    "                    change(keep)\n"
	    "                except ValueError as e:\n"
	    "                    r.append(str(e).split(' in place')[0])\n"
	    "            return 5.0\n"
	    "    a = np.array([[F()] + [1] * 7], dtype=object)\n"
	    "    np.concatenate([a, XL()], axis=0, out=out, casting='unsafe')\n"
	    "    return [out[1].tolist(), int((big[2:] != -1).any(axis=1).sum())]\n"
	    "def shape(keep):\n"
	    "    keep.pop().shape = (8, 1)\n"
	    "def strides(keep):\n"
	    "    keep.pop().strides = (8, 0)\n"
	    "r += [attempt(shape), attempt(strides)]\n"
	    "a = np.arange(6)\n"
	    "b = a\n"
	    "a.shape = (2, 3)\n"
	    "def f(x):\n"
	    "    x.shape = (3, 2)\n"
	    "    return x.shape\n"
	    "r += [b.shape, f(a)]\n"
	    "objs = np.array(['S%d' % i for i in range(32)], dtype=object)\n"
	    "X = objs[:8]\n"
	    "idx = np.arange(4, dtype=np.intp)\n"
	    "class D:\n"
	    "    def __del__(self):\n"
	    "        idx[1:] = [20, 21, 22]\n"
	    "for i in range(4):\n"
	    "    X[i] = D()\n"
	    "X[idx] = np.array([1.5, 2.5, 3.5, 4.5])\n"
	    "r += [X.tolist()[:4], [i for i in range(8, 32) if objs[i] != 'S%d' % i]]\n"
	    "r",
	    "[\"an array's shape is changed\",\"an array's strides is "
	    "changed\",[[100.0,101.0,102.0,"
	    "103.0,104.0,105.0,106.0,107.0],0],[[100.0,101.0,102.0,103.0,104.0,105.0,106.0,107.0],"
	    "0],[2,3],[3,2],[1.5,2.5,3.5,4.5],[]]");
	e2e_stop();
}

/* numpy checks the indices an array of the code's holds once, then reads them again as it goes
 * (V49a H4-H6): a value's __float__ between the chunks of a cast (`a[idx] = objects`), an object
 * item's __add__ (np.add.at, reduceat), bincount's weights converted after it sized its result
 * rewrote indices already checked (the build before wrote 777.0 2984 items past a, read and
 * replaced an object 42 items past b, reduced items past c: its process crashed). numpy indexes
 * with private copies now. scipy.odr, whose fit handed the code a freed array when re-entered
 * (V49b H1), is not importable. */
Test(data, numpy_indexes_with_the_indices_it_checked)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "r = []\n"
	    "big = np.zeros(4096)\n"
	    "a = big[:16]\n"
	    "idx = np.zeros(20000, dtype=np.intp)\n"
	    "class F:\n"
	    "    def __init__(self, k):\n"
	    "        self.k = k\n"
	    "    def __float__(self):\n"
	    "        if self.k == 9000:\n"
	    "            idx[9001] = 3000\n"
	    "        return 7.0 if self.k != 9001 else 777.0\n"
	    "vals = np.empty(20000, dtype=object)\n"
	    "vals[:] = [F(k) for k in range(20000)]\n"
	    "a[idx] = vals\n"
	    "r += [float(big[3000]), (np.nonzero(big[16:])[0] + 16).tolist(), a.tolist()[:2]]\n"
	    "objs = np.empty(64, dtype=object)\n"
	    "objs[:] = ['b%d' % i for i in range(64)]\n"
	    "b = objs[:8]\n"
	    "ind = np.array([0, 1], dtype=np.intp)\n"
	    "class T:\n"
	    "    def __add__(self, other):\n"
	    "        ind[1] = 50\n"
	    "        return 'first'\n"
	    "b[0] = T()\n"
	    "np.add.at(b, ind, 'X')\n"
	    "r += [b.tolist(), objs[50]]\n"
	    "c = objs[:8].copy()\n"
	    "red = np.array([0, 2, 4], dtype=np.intp)\n"
	    "class U:\n"
	    "    def __add__(self, other):\n"
	    "        red[1] = 40\n"
	    "        red[2] = 42\n"
	    "        return 't'\n"
	    "    def __radd__(self, other):\n"
	    "        return self.__add__(other)\n"
	    "c[0] = U()\n"
	    "r.append(np.add.reduceat(c, red).tolist())\n"
	    "x = np.arange(16, dtype=np.intp)\n"
	    "class W:\n"
	    "    def __array__(self, dtype=None):\n"
	    "        x[0] = 15\n"
	    "        return np.full(16, 1.0)\n"
	    "r.append(np.bincount(x, weights=W()).tolist())\n"
	    "try:\n"
	    "    import scipy.odr\n"
	    "    r.append('imported')\n"
	    "except ImportError as e:\n"
	    "    r.append(str(e).split(':')[0])\n"
	    "r",
	    "[0.0,[],[7.0,0.0],[\"first\",\"b1X\",\"b2\",\"b3\",\"b4\",\"b5\",\"b6\",\"b7\"],"
	    "\"b50\",[\"t\",\"b2b3\",\"b4b5b6b7\"],[1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1."
	    "0,1.0,1.0,1.0,1.0],\"scipy.odr is not available in the sandbox\"]");
	e2e_stop();
}

/* numpy's searchsorted over an array of objects compares its items from numpy's own library
 * (a call through its table, which the interpreter's call sites do not cover) and hands the item
 * on unowned: an aware datetime's comparison called its tzinfo's utcoffset (the code's), which
 * dropped the array's only reference to the datetime, and the other's utcoffset laid a fake
 * datetime in its block (its tzinfo a fake object over all memory). Every comparison holds its
 * operands, whoever asks: the comparison goes on with the datetime, whole, and the fake is never
 * reached. numpy also looks its protocol names up on a class in the middle of such a comparison:
 * a metaclass of the code's may not define them (a property there ran the code's); a class's own
 * __array_ufunc__ = None still makes numpy defer to it. */
Test(data, numpy_s_own_comparisons_hold_what_they_compare)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, datetime as dtm, struct\n" FAKE_DATETIME_HEAD
	    "class TZ(dtm.tzinfo):\n"
	    "    def __init__(s, n): s.n = n\n"
	    "    def utcoffset(s, dt):\n"
	    "        if s.n == 'a' and state['phase'] == 1:\n"
	    "            state['phase'] = 2\n"
	    "            a[1] = None\n"
	    "            return dtm.timedelta(0)\n"
	    "        if s.n == 'b' and state['phase'] == 2:\n"
	    "            state['phase'] = 3\n"
	    "            for _ in range(3000):\n"
	    "                spray.append(bytearray(FAKE_DT))\n"
	    "            return dtm.timedelta(hours=1)\n"
	    "        return dtm.timedelta(0)\n" FAKE_DATETIME_BODY "a = np.empty(3, dtype=object)\n"
	    "a[0] = dtm.datetime(2019, 1, 1, tzinfo=dtm.timezone.utc)\n"
	    "a[1] = D(2020, 1, 1, tzinfo=TZ('a'))\n"
	    "a[2] = dtm.datetime(2021, 1, 1, tzinfo=dtm.timezone.utc)\n"
	    "k = np.empty(1, dtype=object)\n"
	    "k[0] = dtm.datetime(2020, 1, 1, tzinfo=TZ('b'))\n"
	    "state['phase'] = 1\n"
	    "try:\n"
	    "    found = a.searchsorted(k).tolist()\n"
	    "except TypeError as e:\n"
	    "    found = 'TypeError'\n"
	    "def meta():\n"
	    "    class M(type):\n"
	    "        @property\n"
	    "        def __array_ufunc__(cls):\n"
	    "            return None\n"
	    "try:\n"
	    "    meta()\n"
	    "    m = 'made'\n"
	    "except TypeError as e:\n"
	    "    m = str(e).split(':')[0]\n"
	    "class Plain(type):\n"
	    "    pass\n"
	    "class K(metaclass=Plain):\n"
	    "    __array_ufunc__ = None\n"
	    "    def __radd__(self, o):\n"
	    "        return 'K'\n"
	    "[found, state['phase'], state.get('got'), m, np.arange(3) + K()]",
	    "[\"TypeError\",3,null,\"M cannot define __array_ufunc__ in the sandbox\",\"K\"]");
	e2e_stop();
}

/* np.set_numeric_ops replaced the operators numpy's C code calls directly: round() of an
 * integer array with negative decimals took what the code's true_divide returned for an array,
 * unchecked, and an object of the code's laid out as an array read its data from another
 * object's header and wrote it into an immutable bytes object (V70a H1). The sandbox's
 * set_numeric_ops answers numpy's operators and sets none; numpy's table of type names is not
 * set either (set_typeDict: np.dtype('float64') answered int8 for every library, V70a L1). The
 * build before crashes here. */
Test(data, numpy_s_operator_table_stays_numpy_s)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "class F:\n"
	    "    __slots__ = tuple('abcdefghijk')\n"
	    "    def __array_finalize__(self, obj):\n"
	    "        self.a = SINK\n"
	    "        self.f = np.dtype({'names': ['x'], 'formats': ['<u8'], 'offsets': [32], "
	    "'itemsize': 40})\n"
	    "SINK = bytes(8) + b'sink-bytes-immutable....'\n"
	    "view = np.frombuffer(SINK, dtype='<u8')\n"
	    "src = F()\n"
	    "src.a = b'some victim object'\n"
	    "src.f = np.dtype({'names': ['x'], 'formats': ['<u8'], 'offsets': [8], 'itemsize': "
	    "16})\n"
	    "def div(a, f, out=None):\n"
	    "    return src\n"
	    "def same(*args):\n"
	    "    return args[0]\n"
	    "old = np.set_numeric_ops()\n"
	    "seen = []\n"
	    "for f in (np.set_numeric_ops, np.core.multiarray.set_numeric_ops):\n"
	    "    try:\n"
	    "        f(true_divide=div, rint=same, multiply=same)\n"
	    "        seen.append('set')\n"
	    "        r = np.arange(3).round(-1)\n"
	    "        np.set_numeric_ops(**old)\n"
	    "    except Exception as e:\n"
	    "        seen.append(type(e).__name__ + ('sandbox' in str(e)) * ' sandbox')\n"
	    "d = dict(np.sctypeDict)\n"
	    "d['float64'] = np.int8\n"
	    "for f in (np.core.multiarray.set_typeDict,):\n"
	    "    try:\n"
	    "        f(d)\n"
	    "        seen.append('set')\n"
	    "    except Exception as e:\n"
	    "        seen.append(type(e).__name__ + ('sandbox' in str(e)) * ' sandbox')\n"
	    "[seen, str(np.dtype('float64')), int(view[0]), SINK[:8] == bytes(8), "
	    "np.arange(13).round(-1).tolist(),\n"
	    " sorted(np.set_numeric_ops()) == sorted(old), np.set_numeric_ops()['add'] is "
	    "np.add]\n",
	    "[[\"NotImplementedError sandbox\",\"NotImplementedError "
	    "sandbox\",\"NotImplementedError "
	    "sandbox\"],\"float64\",0,true,[0,0,0,0,0,0,10,10,10,10,10,10,10],true,true]");
	e2e_stop();
}

/* np.add_docstring on a class of the code's with no docstring pointed the class's
 * documentation into a str, and CPython freed it as a block of its own when the class died:
 * the middle of the live str went to the next allocation (V70a H2). numpy's docstring setters
 * are refused. (The build before sets both, and a new bytes object lies inside the str.) */
Test(data, numpy_s_docstring_setters_are_refused)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, gc\n"
	    "s = ''.join(['x'] * 40)\n"
	    "class C:\n"
	    "    pass\n"
	    "C.__doc__ = None\n"
	    "seen = []\n"
	    "for f, a in ((np.add_docstring, C), (np.core.multiarray.add_docstring, C),\n"
	    "             (np.add_newdoc_ufunc, np.add)):\n"
	    "    try:\n"
	    "        f(a, s)\n"
	    "        seen.append('set')\n"
	    "    except Exception as e:\n"
	    "        seen.append(type(e).__name__ + ('sandbox' in str(e)) * ' sandbox')\n"
	    "del C\n"
	    "gc.collect()\n"
	    "ts = [bytes([0x41]) * 55 for i in range(64)]\n"
	    "[seen, any(id(t) == id(s) + 48 for t in ts), s == 'x' * 40]\n",
	    "[[\"NotImplementedError sandbox\",\"NotImplementedError sandbox\","
	    "\"NotImplementedError sandbox\"],false,true]");
	e2e_stop();
}

/* np.add_newdoc imported the module it names from numpy's own frame: the code had any module
 * imported, refused ones too, and their top-level code ran (V70a L2: `this` printed its text).
 * It documents loaded modules only. (The build before prints the text here.) */
Test(data, numpy_s_add_newdoc_imports_nothing)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, io, contextlib\n"
	                  "from scipy.sparse.linalg import splu\n"
	                  "import scipy.sparse as sp\n"
	                  "buf, seen = io.StringIO(), []\n"
	                  "with contextlib.redirect_stdout(buf):\n"
	                  "    for f in (np.add_newdoc, np.lib.add_newdoc):\n"
	                  "        try:\n"
	                  "            seen.append(f('this', 's', 'x'))\n"
	                  "        except Exception as e:\n"
	                  "            seen.append(type(e).__name__)\n"
	                  "lu = splu(sp.csc_matrix(np.eye(3)))\n"
	                  "[seen, buf.getvalue()[:15], 'LU factorization' in (type(lu).__doc__ or "
	                  "''), lu.solve(np.ones(3)).tolist()]\n",
	                  "[[null,null],\"\",true,[1.0,1.0,1.0]]");
	e2e_stop();
}

/* numpy's C code read type names from np.sctypeDict itself: the code's edits of it in place
 * reached every library (np.dtype('float64') answered int8, pandas' astype too: V70a L1), and
 * a class of the code's put there had numpy's C code run its metaclass's property (V70b L3).
 * numpy's C code reads a copy of its own. (The build before answers int8 and object, and runs
 * the property.) */
Test(data, numpy_s_type_names_are_its_own)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, pandas as pd\n"
	                  "hits = []\n"
	                  "class M(type):\n"
	                  "    @property\n"
	                  "    def __mro__(cls):\n"
	                  "        hits.append(cls.__name__)\n"
	                  "        return (cls, object)\n"
	                  "saved = dict(np.sctypeDict)\n"
	                  "np.sctypeDict['float64'] = np.int8\n"
	                  "np.sctypeDict['double'] = np.int8\n"
	                  "np.sctypeDict['complex128'] = M('complex128', (), {})\n"
	                  "try:\n"
	                  "    r = [str(np.dtype('float64')), str(np.zeros(2, 'double').dtype),\n"
	                  "         pd.Series([1.5, 2.5]).astype('float64').tolist(), "
	                  "str(np.dtype('complex128')), hits]\n"
	                  "finally:\n"
	                  "    np.sctypeDict.update(saved)\n"
	                  "r + [str(np.dtype('float64'))]\n",
	                  "[\"float64\",\"float64\",[1.5,2.5],\"complex128\",[],\"float64\"]");
	e2e_stop();
}

/* numpy's Dragon4 formatting wrote a left padding past its static 16 KiB buffer (over numpy's
 * cached pointers after it) and overflowed its clamp with a precision near 2**31 (V71a H1); and
 * implement_array_function called its implementation with whatever it was given as the tuple
 * of arguments: an array.array read as a tuple handed over a forged bytearray over the address
 * space (V71a H2). Dragon4's numbers are bounded, and the dispatch takes a tuple and a dict;
 * formatting and dispatch work as before. (The build before crashes here.) */
Test(data, numpy_s_formatting_and_dispatch_take_what_they_can_hold)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, array\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ('sandbox' in str(e) or 'tuple of arguments' in "
	    "str(e)) * ' refused'\n"
	    "class Big:\n"
	    "    def __index__(self):\n"
	    "        return 2 ** 31 - 1\n"
	    "x = np.float64(1.5)\n"
	    "buf = array.array('Q', [2 ** 40, id(bytearray), 2 ** 62, 2 ** 62, 0, 0, 0])\n"
	    "del buf[1:]\n"
	    "r = [attempt(lambda: len(np.format_float_positional(x, pad_left=16384 + 16))),\n"
	    "     attempt(lambda: len(np.format_float_positional(x, precision=2 ** 31 - 1, "
	    "unique=False))),\n"
	    "     attempt(lambda: len(np.core.multiarray.dragon4_positional(x, "
	    "pad_right=Big()))),\n"
	    "     attempt(lambda: len(np.format_float_scientific(x, precision=2 ** 31 - 1, "
	    "unique=False))),\n"
	    "     attempt(lambda: type(np.core.multiarray.implement_array_function(lambda v: v, "
	    "print, (), buf, {})).__name__),\n"
	    "     attempt(lambda: np.core.multiarray.implement_array_function(len, print, (), ([1, "
	    "2],), None)),\n"
	    "     np.format_float_positional(x, precision=3, unique=False, pad_left=4, "
	    "pad_right=5),\n"
	    "     np.format_float_scientific(np.float64(12345.678), precision=2, exp_digits=3),\n"
	    "     np.array2string(np.array([1.5, 2.25]), precision=3), np.concatenate([[1], "
	    "[2]]).tolist(),\n"
	    "     np.core.multiarray.implement_array_function(len, print, (), ([1, 2],), {})]\n"
	    "v = np.arange(4) * 2\n"
	    "r + [v.view(object).shape if False else v.tolist()]\n",
	    "[\"ValueError refused\",\"ValueError refused\",\"ValueError refused\",\"ValueError "
	    "refused\",\"TypeError refused\",\"TypeError refused\",\"   1.500  \",\"1.23e+004\","
	    "\"[1.5  2.25]\",[1,2],2,[0,2,4,6]]");
	e2e_stop();
}

/* scipy checks a filter's origin against its size in Python, with the object's own operators
 * (its __radd__ and comparisons answered "within"), and the C code moved its window by the
 * number the object converts to: a read before the line buffer and writes past it (V72b H2;
 * the build before corrupts the heap and glibc's abort is stopped). The origins the C code gets
 * lie within the filter; filters with origins answer as on the host. */
Test(data, ndimage_s_origins_lie_within_the_filter)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from scipy import ndimage as ndi\n"
	    "class O:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def __index__(self):\n"
	    "        return self.v\n"
	    "    def __int__(self):\n"
	    "        return self.v\n"
	    "    def __radd__(self, o):\n"
	    "        return 0\n"
	    "    def __add__(self, o):\n"
	    "        return 0\n"
	    "    def __lt__(self, o):\n"
	    "        return False\n"
	    "    def __gt__(self, o):\n"
	    "        return False\n"
	    "    def __neg__(self):\n"
	    "        return self\n"
	    "a = np.arange(30.0).reshape(5, 6)\n"
	    "r = []\n"
	    "for f in (lambda o: ndi.uniform_filter1d(a[0], 1, origin=o), lambda o: "
	    "ndi.minimum_filter1d(a[0], 2, origin=o),\n"
	    "          lambda o: ndi.correlate1d(a[0], [1.0, 2.0], origin=o)):\n"
	    "    for o in (O(1), O(8), O(-4)):\n"
	    "        try:\n"
	    "            r.append(f(o).tolist())\n"
	    "        except Exception as e:\n"
	    "            r.append(type(e).__name__ + ' ' + str(e)[:20])\n"
	    "b = (a % 3 == 0)\n"
	    "r + [ndi.uniform_filter(a, 3, origin=(1, -1)).sum(), ndi.correlate1d(a[0], [1.0, 2.0, "
	    "3.0, 4.0], origin=-2).tolist(),\n"
	    "     ndi.minimum_filter(a, footprint=np.ones((3, 2), bool), origin=(1, 0)).sum(),\n"
	    "     ndi.maximum_filter1d(a[1], 4, origin=np.int8(-2)).tolist(),\n"
	    "     ndi.generic_filter(a, np.mean, size=(2, 2), origin=(-1, 0)).sum(),\n"
	    "     int(ndi.binary_dilation(b, origin=(1, 1)).sum())]\n",
	    "[\"ValueError invalid origin\",\"ValueError invalid origin\",\"ValueError invalid ori"
	    "gin\",\"ValueError invalid origin\",\"ValueError invalid origin\",\"ValueError invalid"
	    " origin\",\"ValueError invalid origin\",\"ValueError invalid origin\",\"ValueError inv"
	    "alid origin\",336.6666666666667,[20.0,30.0,40.0,46.0,45.0,39.0],158.0,[9.0,10.0,1"
	    "1.0,11.0,11.0,11.0],494.5,17]");
	e2e_stop();
}

/* numpy's cast of timedelta64 values to text writes each value's whole text at its item (the
 * last items' past the output's end: a heap overflow, V71a H3), whatever the route: astype,
 * concatenate's dtype, an assignment. The casts are taken out of numpy's table: each is refused
 * as numpy refuses a cast it has not; reprs, datetime64's casts and pandas' text of timedeltas
 * are as before. (The build before casts.) */
Test(data, timedelta_s_text_casts_are_refused)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "td = np.array([-1234567890123] * 3, 'm8[s]')\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "a = np.empty(3, 'U2')\n"
	    "def assign():\n"
	    "    a[...] = td\n"
	    "    return a.tolist()\n"
	    "[attempt(lambda: td.astype('U2').tolist()), attempt(lambda: np.concatenate([td, td], "
	    "dtype='U2', casting='unsafe').tolist()),\n"
	    " attempt(assign), attempt(lambda: td.astype('S30').tolist()), repr(td), str(td[0]),\n"
	    " np.array(['2024-01-01'], 'M8[D]').astype('U10').tolist(), (td + "
	    "td).astype('i8').tolist(),\n"
	    " str(pd.Series(pd.to_timedelta([1, 2], unit='s'))), pd.to_timedelta([1], "
	    "unit='D').astype(str).tolist()]\n",
	    "[\"TypeError\",\"TypeError\",\"TypeError\",\"TypeError\",\"array([-1234567890123, "
	    "-123456"
	    "7890123, -1234567890123],\\n      dtype='timedelta64[s]')\",\"-1234567890123 second"
	    "s\",[\"2024-01-01\"],[-2469135780246,-2469135780246,-2469135780246],\"0   0 days 00:"
	    "00:01\\n1   0 days 00:00:02\\ndtype: timedelta64[ns]\",[\"1 days\"]]");
	e2e_stop();
}

/* Three of numpy's entry points read what the caller did not give: scalar() of a dtype of
 * objects with no object (NULL), a one-input ufunc's at() with a second operand (NULL), and
 * round with decimals -2**31 (its negation overflowed: a read 16 GiB before numpy's table of
 * powers of ten). Each is refused; their other uses answer as numpy's. */
Test(data, numpy_s_scalar_at_and_round_read_only_what_they_are_given)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\n"
	                  "def attempt(f):\n"
	                  "    try:\n"
	                  "        return f()\n"
	                  "    except Exception as e:\n"
	                  "        return type(e).__name__\n"
	                  "a = np.zeros(3)\n"
	                  "np.add.at(a, [0, 0], 2.0)\n"
	                  "np.sqrt.at(a, [0])\n"
	                  "[attempt(lambda: np.core.multiarray.scalar(np.dtype('O'))),\n"
	                  " attempt(lambda: np.core.multiarray.scalar(np.dtype([('a', 'O')]))),\n"
	                  " np.core.multiarray.scalar(np.dtype('O'), 5), "
	                  "float(np.core.multiarray.scalar(np.dtype('f8'))),\n"
	                  " attempt(lambda: np.sqrt.at(a, [0], np.ones(1))), a.tolist(),\n"
	                  " attempt(lambda: np.round(np.arange(3), -2**31)), attempt(lambda: "
	                  "round(np.int64(5), -2**31)),\n"
	                  " attempt(lambda: np.float64(1.25).round(-2**31)), attempt(lambda: "
	                  "np.ma.round(np.ma.array([1.5]), -2**31)),\n"
	                  " np.round(np.arange(3), -2**31 + 1).tolist(), "
	                  "np.around(np.array([1.2345]), 2).tolist(),\n"
	                  " round(np.float64(1.2345), 2), np.arange(3.).round(decimals=1, "
	                  "out=np.zeros(3)).tolist(),\n"
	                  " attempt(lambda: np.round(np.arange(3), 2**31))]\n",
	                  "[\"TypeError\",\"TypeError\",5,0.0,\"ValueError\",[2.0,0.0,0.0],"
	                  "\"OverflowError\",\"OverflowError\",\"OverflowError\",\"OverflowError\","
	                  "[-9223372036854775808,-9223372036854775808,-9223372036854775808],[1.23],"
	                  "1.23,[0.0,1.0,2.0],\"OverflowError\"]");
	e2e_stop();
}

/* A sketch of scale 1e300 made matplotlib's rasterizer recurse without end (and the PDF
 * writer's too; an infinite one looped), for every later figure once it was in rcParams: a
 * sketch is three finite numbers within 1e9, checked when rcParams takes it and when a
 * figure is drawn. */
Test(data, a_sketch_is_drawn_within_bounds)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io\n"
	    "import matplotlib.pyplot as plt\n"
	    "from matplotlib.path import Path\n"
	    "import numpy as np\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def draw(fig, fmt):\n"
	    "    b = io.BytesIO()\n"
	    "    fig.savefig(b, format=fmt)\n"
	    "    return b.getvalue()[1:4].decode()\n"
	    "r = [attempt(lambda: plt.rcParams.__setitem__('path.sketch', (1e300, 1, 1))),\n"
	    "     attempt(lambda: plt.rcParams.__setitem__('path.sketch', (float('inf'), 1, 1))),\n"
	    "     plt.rcParams['path.sketch']]\n"
	    "fig, ax = plt.subplots()\n"
	    "line, = ax.plot([0, 1], [0, 1])\n"
	    "line.set_sketch_params(1e300, 1, 1)\n"
	    "r += [attempt(lambda: draw(fig, 'png')), attempt(lambda: draw(fig, 'pdf')),\n"
	    "      attempt(lambda: Path(np.array([[0, 0], [1, 1.]])).cleaned(sketch=(1e300, 1, "
	    "1)))]\n"
	    "line.set_sketch_params(1, 100, 2)\n"
	    "r += [draw(fig, 'png'), draw(fig, 'pdf')]\n"
	    "plt.close(fig)\n"
	    "plt.rcParams['path.sketch'] = (2, 50, 3)\n"
	    "r += [plt.rcParams['path.sketch']]\n"
	    "fig = plt.figure()\n"
	    "fig.add_subplot().plot([0, 1])\n"
	    "r += [draw(fig, 'png')]\n"
	    "plt.close(fig)\n"
	    "r\n",
	    "[\"ValueError\",\"ValueError\",null,\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"PNG\",\"PDF\",[2.0,50.0,3.0],\"PNG\"]");
	e2e_stop();
}

/* numpy's error object was the list np.seterrobj was given, and np.geterrobj handed it back:
 * each ufunc call read its first item with the code's __index__, then the others unchecked,
 * and an __index__ that shrank the list had numpy read a freed item (V73a H3). numpy keeps a
 * list of plain ints of its own and hands out copies; errstate, seterr and seterrcall work as
 * before. */
Test(data, numpy_s_error_object_is_its_own)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, warnings\n"
	    "armed = []\n"
	    "class Evil:\n"
	    "    def __index__(self):\n"
	    "        if armed:\n"
	    "            armed.clear()\n"
	    "            S.pop()\n"
	    "            S.pop()\n"
	    "        return 8192\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "np.seterrobj([Evil(), 521 + 2**32, None])\n"
	    "S = np.geterrobj()\n"
	    "armed.append(1)\n"
	    "with warnings.catch_warnings(record=True) as w:\n"
	    "    warnings.simplefilter('always')\n"
	    "    r = attempt(lambda: str(np.divide(np.float64(1.0), np.float64(0.0))))\n"
	    "got = [len(S), r, [str(x.message) for x in w], np.geterrobj() is np.geterrobj(), "
	    "np.geterr()['divide']]\n"
	    "np.seterr(all='warn')\n"
	    "with np.errstate(divide='raise'):\n"
	    "    got.append(attempt(lambda: np.divide(np.ones(1), 0)))\n"
	    "got + [np.geterr()['divide'], attempt(lambda: np.seterrobj([1, 2]))]\n",
	    "[3,\"inf\",[\"divide by zero encountered in "
	    "divide\"],false,\"warn\",\"FloatingPointError\",\"warn\",\"ValueError\"]");
	e2e_stop();
}

/* Libraries import modules by names their callers give: numpy's lookfor and info, a figure's
 * backend='module://...', a registered backend, pickle's lookup of a class's __module__. A
 * refused module imported so ran its top-level code ('this' printed the Zen of Python, the
 * frozen __hello__ its greeting, a package's __main__ its program). Modules whose import runs
 * a program are refused to every importer; the same calls with numpy's and matplotlib's own
 * names work. */
Test(data, no_library_imports_a_program_by_a_name_it_is_given)
{
	json_object *r;

	start_data(NULL);
	r = e2e_call("import io, copy\n"
	             "import numpy as np, pandas as pd\n"
	             "import matplotlib.pyplot as plt, matplotlib.colors as mc\n"
	             "from matplotlib import backend_bases\n"
	             "def attempt(f):\n"
	             "    try:\n"
	             "        f()\n"
	             "        return 'ran'\n"
	             "    except Exception as e:\n"
	             "        return type(e).__name__\n"
	             "class K:\n"
	             "    pass\n"
	             "K.__module__ = 'this'\n"
	             "fig = plt.figure()\n"
	             "backend_bases.register_backend('zen', 'this')\n"
	             "r = [attempt(lambda: np.lookfor('zen', module='this')),\n"
	             "     attempt(lambda: np.lookfor('hello', module='__hello__')),\n"
	             "     attempt(lambda: np.info(np.add, toplevel='this')),\n"
	             "     attempt(lambda: fig.savefig(io.BytesIO(), backend='module://this')),\n"
	             "     attempt(lambda: fig.savefig(io.BytesIO(), format='zen')),\n"
	             "     attempt(lambda: pd.to_pickle(K(), io.BytesIO())),\n"
	             "     attempt(lambda: np.lookfor('phello', module='__phello__.spam')),\n"
	             "     attempt(lambda: np.lookfor('x', module='numpy.f2py.__main__'))]\n"
	             "plt.close(fig)\n"
	             "r + [attempt(lambda: fig.savefig(io.BytesIO(), format='pdf'))]\n",
	             NULL);
	e2e_assert_result(r, "no_library_imports_a_program_by_a_name_it_is_given",
	                  "[\"ran\",\"ran\",\"ran\",\"ModuleNotFoundError\","
	                  "\"ModuleNotFoundError\",\"PicklingError\",\"ran\",\"ran\",\"ran\"]");
	cr_assert_null(strstr(mcpc_sc_str(r, "stdout"), "Beautiful"), "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_sc_str(r, "stdout"), "Hello world"), "%s", mcpc_json(r));
	e2e_stop();
}

/* scipy.fft's transforms of more than one line ran on a pool of threads with workers=-1 or
 * set_workers(n): the threads outlived the call and its session could not be kept (the next
 * call lost its variables). They run on the call's thread, with the same results. */
Test(data, scipy_fft_workers_keep_the_session)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, scipy.fft as sf\n"
	                  "x = np.random.default_rng(0).random((64, 256))\n"
	                  "power = np.abs(sf.fft2(x, workers=-1)) ** 2\n"
	                  "with sf.set_workers(4):\n"
	                  "    y = sf.rfftn(x)\n"
	                  "[power.shape, y.shape, bool(np.allclose(sf.fft(x, workers=-1), "
	                  "np.fft.fft(x)))]",
	                  "[[64,256],[64,129],true]");
	e2e_expect_result("power.shape", "[64,256]");
	e2e_stop();
}

/* numpy replaces an object in an array of objects by taking the new one's reference, dropping
 * the old one and copying the new one's slot again (put, putmask by any name, place, take's
 * out, fancy and flat assignment, a ufunc's accumulate and reduceat, cumsum's positional out;
 * pandas' mask(inplace=True) through putmask): the old one's __del__ rewrote the slot numpy
 * copied next, and the array kept an object it held no reference to, freed after (a forged
 * bytearray over all memory, V74a H1, V75a H1-H4); a.flat = a dropped each item before it took
 * it again (V75a H3). The objects of every array of objects a numpy call is given are held until
 * it returns; the same writes with plain values answer as numpy's. */
Test(data, objects_an_array_replaces_die_after_numpy_s_loop)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "class D:\n"
	    "    def __del__(self):\n"
	    "        vals[0] = Y\n"
	    "def attempt(how):\n"
	    "    global vals, Y\n"
	    "    vals = np.empty(1, dtype=object)\n"
	    "    vals[0] = 'S'\n"
	    "    Y = bytearray(b'Y' * 40)\n"
	    "    a = np.empty(1, dtype=object)\n"
	    "    a[0] = D()\n"
	    "    how(a)\n"
	    "    took = a[0] is Y\n"
	    "    del Y\n"
	    "    vals[0] = None\n"
	    "    junk = [bytearray(b'Z' * 40) for _ in range(50)]\n"
	    "    return [took, a[0] if type(a[0]) is str else type(a[0]).__name__]\n"
	    "def series(a):\n"
	    "    s = pd.Series(a)\n"
	    "    s.mask(np.array([True]), vals, inplace=True)\n"
	    "    a[0] = s[0]\n"
	    "r = [attempt(lambda a: a.put([0], vals)), attempt(lambda a: np.putmask(a, "
	    "np.array([True]), vals)),\n"
	    "     attempt(lambda a: np.place(a, np.array([True]), vals)),\n"
	    "     attempt(lambda a: np.take(vals, [0], out=a, mode='wrap')),\n"
	    "     attempt(lambda a: a.__setitem__([0], vals)), attempt(lambda a: "
	    "a.flat.__setitem__([0], vals)),\n"
	    "     attempt(lambda a: a.flat.__setitem__(slice(0, 1), vals)), attempt(series),\n"
	    "     attempt(lambda a: np.add.accumulate(vals, out=a)),\n"
	    "     attempt(lambda a: np.add.reduceat(vals, [0], out=a)),\n"
	    "     attempt(lambda a: np.add(vals, '', out=a)), attempt(lambda a: np.add(vals, '', "
	    "a)),\n"
	    "     attempt(lambda a: vals.cumsum(None, None, a)),\n"
	    "     attempt(lambda a: np.putmask._implementation(arr=a, mask=np.array([True]), "
	    "values=vals))]\n"
	    "c = np.empty(1, dtype=object)\n"
	    "c[0] = bytearray(b'Q' * 40)\n"
	    "c.flat = c\n"
	    "c.flat = c.flat\n"
	    "junk = [bytearray(b'Z' * 40) for _ in range(50)]\n"
	    "r.append(c[0] == bytearray(b'Q' * 40))\n"
	    "b = np.array([1, 'x', None], dtype=object)\n"
	    "b[[0, 2]] = ['p', 'q']; b.put([1], ['r']); b.flat[0] = 's'\n"
	    "np.putmask(b, np.array([False, True, False]), ['t'])\n"
	    "r + [b.tolist(), np.take(np.array(['u', 'v'], dtype=object), [1, 0], out=np.empty(2, "
	    "dtype=object)).tolist()]\n",
	    "[[false,\"S\"],[false,\"S\"],[false,\"S\"],[false,\"S\"],[false,\"S\"],[false,\"S\"],["
	    "false,\"S\"],[false,\"S\"],[false,\"S\"],[false,\"S\"],[false,\"S\"],[false,\"S\"],["
	    "false,\"S\"],[false,\"S\"],true,[\"s\",\"t\",\"q\"],[\"v\",\"u\"]]");
	e2e_stop();
}

/* An animation's HTML (to_jshtml, rcParams['animation.html'] = 'jshtml') was written to a
 * temporary directory and read back: refused (matplotlib's tempfile is the real one, and
 * without a workspace there is none). With its frames embedded the page is made in memory,
 * as matplotlib's writer makes it. */
Test(data, an_animation_s_html_is_made_in_memory)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, matplotlib.pyplot as plt\n"
	                  "from matplotlib import animation\n"
	                  "fig, ax = plt.subplots()\n"
	                  "line, = ax.plot([], [])\n"
	                  "ax.set_xlim(0, 2 * np.pi); ax.set_ylim(-1, 1)\n"
	                  "x = np.linspace(0, 2 * np.pi, 50)\n"
	                  "def update(i):\n"
	                  "    line.set_data(x, np.sin(x + i / 5))\n"
	                  "    return line,\n"
	                  "ani = animation.FuncAnimation(fig, update, frames=5, interval=100)\n"
	                  "h = ani.to_jshtml()\n"
	                  "plt.rcParams['animation.html'] = 'jshtml'\n"
	                  "h2 = ani._repr_html_()\n"
	                  "plt.close(fig)\n"
	                  "[len(h) > 10000, h.count('frames[') , '<script' in h, h2 == h, "
	                  "'data:image/png;base64' in h]\n",
	                  "[true,9,true,true,true]");
	e2e_stop();
}

/* A slot numpy replaced on ndarray and on array.array was still numpy's own in the classes the
 * zygote had made beneath them (np.recarray's and np.matrix's item assignment held nothing,
 * V76a H1; openpyxl's StyleArray wrote an int past its shrunk buffer, H2): they reach the
 * guards now. And a compiled writer that drops an array's object before it stores the next
 * (pandas' fillna(inplace=True), a buffered nditer's write-back) ran its __del__ while the item
 * still held it: an assignment of the same item there dropped the array's reference twice
 * (H3, H4). Such a __del__ now runs once the writer has gone on (the test below): the object
 * is out of the array then, and its write is an ordinary one. */
Test(data, replaced_slots_and_dropped_objects_stay_held)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np\n"
	    "from openpyxl.styles.cell_style import StyleArray\n"
	    "a = np.empty(1, dtype=object).view(np.recarray)\n"
	    "g = []\n"
	    "class D:\n"
	    "    def __del__(self):\n"
	    "        g.append(self)\n"
	    "        a[0] = 'inner'\n"
	    "a[0] = D()\n"
	    "a[0] = 'outer'\n"
	    "junk = [bytearray(48) for _ in range(200)]\n"
	    "s = StyleArray()\n"
	    "s.extend([0] * 100)\n"
	    "class I:\n"
	    "    def __index__(self):\n"
	    "        del s[9:]\n"
	    "        return 5\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "r = [a[0], type(g[0]).__name__, attempt(lambda: s.__setitem__(36, I())), len(s)]\n"
	    "s[3] = 7\n"
	    "m = np.matrix([[1, 2]])\n"
	    "m[0, 1] = 5\n"
	    "r + [s[3], m.tolist()]\n",
	    "[\"inner\",\"D\",\"IndexError\",9,7,[[1,5]]]");
	e2e_expect_result("import numpy as np, pandas as pd\n"
	                  "g = []\n"
	                  "arr = np.array(['a', None, 'c'], dtype=object)\n"
	                  "class F(float):\n"
	                  "    def __del__(self):\n"
	                  "        g.append(self)\n"
	                  "        arr[1] = 'inner'\n"
	                  "arr[1] = F('nan')\n"
	                  "s = pd.Series(arr, copy=False)\n"
	                  "s.fillna(method='ffill', inplace=True)\n"
	                  "junk = [bytearray(48) for _ in range(200)]\n"
	                  "base = np.empty((4, 4), dtype=object)\n"
	                  "base[...] = 'o'\n"
	                  "arr2 = base.T\n"
	                  "class G:\n"
	                  "    def __del__(self):\n"
	                  "        g.append(self)\n"
	                  "        arr2[0, 0] = 'inner'\n"
	                  "arr2[0, 0] = G()\n"
	                  "it = np.nditer(arr2, flags=['buffered', 'refs_ok', 'external_loop'], "
	                  "op_flags=[['readwrite']],\n"
	                  "               order='C', buffersize=16)\n"
	                  "with it:\n"
	                  "    for x in it:\n"
	                  "        x[...] = 'new'\n"
	                  "junk2 = [bytearray(48) for _ in range(200)]\n"
	                  "[arr.tolist(), [type(o).__name__ for o in g], arr2[0, 0], "
	                  "int(np.sum(arr2 == 'new'))]\n",
	                  "[[\"a\",\"inner\",\"c\"],[\"F\",\"G\"],\"inner\",15]");
	e2e_stop();
}

/* pandas' cached properties (Index.is_unique, inferred_type, _engine...) read the object's
 * _cache with PyDict_Contains, which does not check that it is a dict: an Index whose _cache
 * the code set to a bytearray had its bytes read as a dict's table (a key at an address of the
 * code's choosing, whose __eq__ got a forged object: V82a H1; the build before loops or
 * crashes on a zeroed bytearray). A cache that is not a dict is refused; the properties work
 * as before, on the code's own classes too. */
Test(data, pandas_cached_properties_read_a_dict_only)
{
	start_data(NULL);
	e2e_expect_result("import pandas as pd\n"
	                  "CP = type(pd.Index.is_unique)\n"
	                  "class X:\n    def __init__(self): self._cache = [1, 2]\n"
	                  "    f = CP(lambda self: 1)\n"
	                  "class Y:\n    f = CP(lambda self: 2)\n"
	                  "class Z:\n    __slots__ = ()\n    f = CP(lambda self: 3)\n"
	                  "out = []\n"
	                  "for o in (X(), Y(), Z()):\n"
	                  "    try:\n        out.append(o.f)\n"
	                  "    except TypeError as e:\n        out.append(str(e))\n"
	                  "idx = pd.Index([1, 2, 2])\n"
	                  "for bad in (bytearray(100), bytes(64), (1, 2)):\n"
	                  "    idx._cache = bad\n"
	                  "    try:\n        out.append(idx.is_unique)\n"
	                  "    except TypeError as e:\n        out.append(str(e))\n"
	                  "idx._cache = {}\n"
	                  "out + [idx.is_unique, sorted(idx._cache), idx.inferred_type]",
	                  "[\"X's _cache is a list, not a dict\",2,3,"
	                  "\"Int64Index's _cache is a bytearray, not a dict\","
	                  "\"Int64Index's _cache is a bytes, not a dict\","
	                  "\"Int64Index's _cache is a tuple, not a dict\","
	                  "false,[\"_engine\",\"is_unique\"],\"integer\"]");
	e2e_stop();
}

/* pandas' compiled date and time classes call type(self)(...) and cast what it answers to
 * their own compiled type unchecked: a Timestamp subclass whose constructor answered a bytes
 * object had `ts - datetime` call through a table read from the code's bytes (any address:
 * V82a H2), a DateOffset subclass whose _offset answered NaT had DatetimeIndex + offset call
 * through NaT's memory (SIGSEGV). They are not subclassed in the sandbox (NaT's class, which
 * answers a date's fields, as a date class); their instances, and pandas' own subclasses, work
 * as before. */
Test(data, pandas_date_classes_are_not_subclassed)
{
	start_data(NULL);
	e2e_expect_result(
	    "import datetime, pandas as pd\n"
	    "out = []\n"
	    "for base in (pd.Timestamp, pd.Timedelta, pd.DateOffset, pd.offsets.Day,\n"
	    "             pd.offsets.BusinessDay, pd.Period, pd.Interval, type(pd.NaT),\n"
	    "             pd.Timestamp.mro()[1]):\n"
	    "    try:\n        type('T', (base,), {})\n        out.append('made')\n"
	    "    except TypeError as e:\n"
	    "        out.append('not an acceptable base type' in str(e) or\n"
	    "                   'cannot define year in the sandbox' in str(e))\n"
	    "t = pd.Timestamp(2020, 1, 1)\n"
	    "idx = pd.date_range('2020-01-01', periods=2)\n"
	    "out + [str(t - datetime.datetime(2019, 12, 31)),\n"
	    "       [str(d.date()) for d in idx + pd.DateOffset(months=1, days=2)],\n"
	    "       str(pd.Period('2020-01', 'M') + 1), (pd.Timedelta('1h') * 2).seconds,\n"
	    "       type(pd.offsets.BDay()).__name__, pd.Interval(0, 1).length]",
	    "[true,true,true,true,true,true,true,true,true,\"1 days 00:00:00\","
	    "[\"2020-02-03\",\"2020-02-04\"],\"2020-02\",7200,\"BusinessDay\",1]");
	e2e_stop();
}

/* A date offset's is_month_start(ts) and its kin took None for the Timestamp and read it as
 * one (SIGSEGV): they take a Timestamp only, and answer for one as before. */
Test(data, date_offsets_ask_about_timestamps_only)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd\n"
	    "d = pd.offsets.Day()\n"
	    "r = [d.is_month_start(pd.Timestamp('2024-03-01')),\n"
	    "     pd.offsets.MonthEnd().is_month_end(pd.Timestamp('2024-02-29')),\n"
	    "     pd.offsets.QuarterBegin().is_year_start(pd.Timestamp('2024-06-01'))]\n"
	    "for bad in (None, '2024-03-01', 5):\n"
	    "    try:\n        d.is_quarter_end(bad)\n    except TypeError as e:\n"
	    "        r.append(str(e))\n"
	    "r",
	    "[true,true,false,\"Argument 'ts' has incorrect type (expected Timestamp, "
	    "got NoneType)\",\"Argument 'ts' has incorrect type (expected Timestamp, "
	    "got str)\",\"Argument 'ts' has incorrect type (expected Timestamp, got "
	    "int)\"]");
	e2e_stop();
}

/* The methods pandas writes in Python for its date classes (Timedelta's arithmetic, Timestamp's
 * round, Period's and NaT's...) are compiled functions that never check their first argument
 * and cast it to the compiled class: pd.Timedelta.__add__(x, td) with a bytearray subclass as x
 * had pandas call through a table in x's bytes (any address: V84a H1). They take an object of
 * their own class only; used as methods they work as before. */
Test(data, pandas_date_methods_take_their_own_objects)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd\n"
	    "class B(bytearray):\n    _reso = 100\n    value = 5\n"
	    "td, ts = pd.Timedelta('1h'), pd.Timestamp('2024-01-01 10:31')\n"
	    "out = []\n"
	    "for f, args in ((pd.Timedelta.__add__, (B(64), td)), (pd.Timedelta.__rsub__, (B(64), "
	    "td)),\n"
	    "                (pd.Timestamp.round, (B(64), 'H')), (pd.Timedelta.__neg__, "
	    "(B(64),)),\n"
	    "                (pd.Timestamp.__new__, (int, 0))):\n"
	    "    try:\n        f(*args)\n        out.append('ran')\n"
	    "    except TypeError as e:\n        out.append(str(e)[:40])\n"
	    "out + [str(td + pd.Timedelta('2h')), str(-td), str(ts.round('H')),\n"
	    "       str(pd.Timedelta.__add__(td, td)), str(pd.Timestamp('2024-03-01')),\n"
	    "       str(pd.Period('2024-01', 'M').start_time.date())]",
	    "[\"descriptor '__add__' of 'Timedelta' obje\","
	    "\"descriptor '__rsub__' of 'Timedelta' obj\","
	    "\"descriptor 'round' of 'Timestamp' object\","
	    "\"descriptor '__neg__' of 'Timedelta' obje\","
	    "\"descriptor '__new__' of 'Timestamp' obje\","
	    "\"0 days 03:00:00\",\"-1 days +23:00:00\",\"2024-01-01 11:00:00\","
	    "\"0 days 02:00:00\",\"2024-03-01 00:00:00\",\"2024-01-01\"]");
	e2e_stop();
}

/* matplotlib's transforms name their parents in a dict by id(), with weak references whose
 * callbacks pop that id when a parent dies. A callback runs a little later in a worker (weak
 * references' callbacks wait for the user's code), when a new transform may hold the same id:
 * the late pop took the new entry and the new one's callback raised KeyError, printed for every
 * figure drawn with bbox_inches='tight' (and every figure the call returned: 1.7 KB each, the
 * first text of the result). The callbacks pop only their own entry: nothing is printed, and a
 * change to a child still reaches its live parents. */
Test(data, tight_figures_print_nothing_and_transforms_follow_their_children)
{
	json_object *r;

	start_data(NULL);
	r = e2e_ok("import matplotlib.pyplot as plt, io\n"
	           "from matplotlib import transforms as mt\n"
	           "fig, axs = plt.subplots(2, 2)\n"
	           "for ax in axs.flat:\n    ax.plot([1, 2, 3])\n"
	           "for i in range(3):\n"
	           "    fig.savefig(io.BytesIO(), format='png', bbox_inches='tight')\n"
	           "a = mt.Affine2D()\nc = a + mt.Affine2D().translate(1, 0)\n"
	           "before = c.transform([[0, 0]]).tolist()\n"
	           "a.translate(5, 0)\n"
	           "[before, c.transform([[0, 0]]).tolist()]");
	e2e_assert_result(r, "transforms", "[[[1.0,0.0]],[[6.0,0.0]]]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "", "%s", mcpc_json(r));
	images_are(r, 1);
	e2e_stop();
}

/* pandas' compiled date code read tables by numbers it never checked and formatted into
 * buffers it never sized: Period(year=, month=13, ...) and PeriodIndex(year=, month=) summed a
 * table of month lengths past its end into the ordinal, as did its JSON writer for a datetime
 * class whose month property answered 13 (the ints past the table read back); FY5253's
 * startingMonth indexed another (SIGSEGV); Period.strftime read on past its buffer when the
 * text outgrew it (heap bytes came back, %Z a pointer never set), and to_json(indent=) wrote its
 * indents past its buffer (another array's data overwritten; 100000: SIGSEGV). Months are 1..12,
 * a date class takes its fields from datetime's, a format goes in a directive at a time, and
 * the indents are put in after the writer: each answers as on the host where the host does
 * not fail. */
Test(data, dates_periods_and_json_indents_stay_within_their_tables_and_buffers)
{
	start_data(NULL);
	e2e_expect_result(
	    "import datetime, pandas as pd\n"
	    "from pandas.tseries.offsets import FY5253, FY5253Quarter\n"
	    "out = []\n"
	    "def why(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        return str(e)[:40]\n"
	    "out.append(why(lambda: pd.Period(year=2001, month=13, day=1, freq='D')))\n"
	    "out.append(why(lambda: pd.Period(year=2001, month=0, day=2**31 - 1, freq='D')))\n"
	    "out.append(str(pd.Period(year=2001, month=3.0, day=1, freq='D')))\n"
	    "out.append(why(lambda: pd.PeriodIndex(year=[2001], month=[100000], freq='M')))\n"
	    "out.append([str(p) for p in pd.PeriodIndex(year=[2001, 2002], month=[1, 12], "
	    "freq='M')])\n"
	    "out.append(why(lambda: FY5253(startingMonth=10**9)))\n"
	    "out.append(why(lambda: FY5253Quarter(startingMonth=13)))\n"
	    "out.append([FY5253(startingMonth=5).startingMonth, FY5253Quarter(1, False, 0, "
	    "7).startingMonth])\n"
	    "def lying():\n"
	    "    class D(datetime.datetime):\n"
	    "        @property\n"
	    "        def month(self):\n"
	    "            return 100\n"
	    "def slots():\n"
	    "    class D(datetime.date):\n"
	    "        __slots__ = ('day',)\n"
	    "def answering():\n"
	    "    class D(datetime.datetime):\n"
	    "        def __getattribute__(self, name):\n"
	    "            return 100 if name == 'month' else object.__getattribute__(self, name)\n"
	    "out += [why(lying), why(slots), why(answering)]\n"
	    "p = pd.Period('2024-01-02 03:04:05', freq='S')\n"
	    "out.append(why(lambda: p.strftime('%4000Y')))\n"
	    "out.append(len(p.strftime('%c' * 3 + 'A' * 970)))\n"
	    "out.append(p.strftime('%Z|%z|%FQ%q|%40Y|%-d'))\n"
	    "out.append(len(pd.DataFrame({'a': [1, 2]}).to_json(indent=100000)))\n"
	    "out.append(pd.DataFrame({'a': [1], 'b': [{}]}).to_json(indent=2))\n"
	    "out",
	    "[\"month must be in 1..12\",\"month must be in 1..12\",\"2001-03-01\",\"month must be "
	    "in 1..12\",[\"2001-01\",\"2002-12\"],\"startingMonth must be in "
	    "1..12\",\"startingMonth must be in 1..12\",[5,7],\"D cannot define month in the "
	    "sandbox: a \",\"D cannot define day in the sandbox: a cl\",\"D cannot define "
	    "__getattribute__ in the \",\"a field width over 40 "
	    "(%4000Y) in a "
	    "peri\",1042,\"||2024Q1|0000000000000000000000000000000000002024|2\",600024,\"{\\n  "
	    "\\\"a\\\":{\\n    \\\"0\\\":1\\n  },\\n  \\\"b\\\":{\\n    \\\"0\\\":{\\n\\n    }\\n  "
	    "}\\n}\"]");
	e2e_stop();
}

/* Finalizers and the ends of arrays and iterators that run code are put off while a call runs;
 * with memory full they could not be: an nditer's end dropped its entry 50 frees deep, where
 * CPython's trashcan put the entry aside still holding the iterator, which was then freed
 * (another bytes object decremented when the entry went: a victim became a filler), and a __del__
 * run in the middle of pandas' setter that was dropping its object dropped it twice (SIGSEGV).
 * An entry is in the list before it holds anything, and memory running out as one is put off
 * ends the process (exit status 108, the session unchanged): no victim changes, whichever way
 * the address space fills. */
Test(data, memory_running_out_as_an_end_is_put_off_ends_the_process)
{
	json_object *r;

	start_data(NULL);
	for (int k = 0; k < 2; k++) {
		const char *code =
		    k == 0 ? "import sys, json, gc\n"
		             "import numpy as np\n"
		             "gc.disable()\n"
		             "OOM = True\n"
		             "sys.setrecursionlimit(1000000)\n"
		             "json.loads(\"[\" * 25000 + \"]\" * 25000)\n"
		             "\n"
		             "state = {'hold': [], 'vict': [], 'ran': 0}\n"
		             "\n"
		             "class D:\n"
		             "    def __del__(self):\n"
		             "        state['d'] = state.get('d', 0) + 1\n"
		             "\n"
		             "class Z:\n"
		             "    def __del__(self):\n"
		             "        state['ran'] += 1\n"
		             "        b = bytearray(8); l = [memoryview(b)]; del l\n"
		             "        try:\n"
		             "            b.append(0); state['nested50'] = False\n"
		             "        except BufferError:\n"
		             "            state['nested50'] = True\n"
		             "        state['d_at_z'] = state.get('d', 0)\n"
		             "        state['hold_at_z'] = len(state['hold'])\n"
		             "        del state['hold'][0][:]\n"
		             "        v = state['vict']\n"
		             "        n = 120\n"
		             "        for i in range(3000):\n"
		             "            v.append(bytes(n))\n"
		             "\n"
		             "it1 = np.nditer(np.zeros(1))\n"
		             "L50 = [it1]\n"
		             "del it1\n"
		             "cur = [Z(), L50]\n"
		             "del L50\n"
		             "for k in range(48):\n"
		             "    cur = [cur]\n"
		             "top = cur\n"
		             "del cur\n"
		             "top.extend([D() for _ in range(64)])\n"
		             "\n"
		             "keep, spare = [], []\n"
		             "for i in range(600):\n"
		             "    keep.append(10**9 + 2 * i); spare.append(10**9 + 2 * i + 1)\n"
		             "for rep in range(40):\n"
		             "    for n in range(0, 480, 4):\n"
		             "        keep.append(bytes(n)); spare.append(bytes(n))\n"
		             "hold = state['hold']\n"
		             "slots = [None] * 300000\n"
		             "hold.append(slots)\n"
		             "idx = iter(list(range(300000)))\n"
		             "sizes = [1 << k for k in range(28, 10, -1)] + list(range(1100, 519, "
		             "-8))\n"
		             "for sz in (sizes if OOM else ()):\n"
		             "    for make in (bytes, bytearray):\n"
		             "        while True:\n"
		             "            try:\n"
		             "                slots[next(idx)] = make(sz)\n"
		             "            except MemoryError:\n"
		             "                break\n"
		             "for i in range(len(spare)):\n"
		             "    spare[i] = None\n"
		             "del top\n"
		             "vict = state['vict']\n"
		             "m = 120\n"
		             "fill = []\n"
		             "for i in range(3000):\n"
		             "    fill.append(b'A' * m)\n"
		             "changed = [i for i, v in enumerate(vict) if v != bytes(120)]\n"
		             "leak = [vict[i] for i in changed]\n"
		             "len(changed)"
		           : "import sys, json, gc\n"
		             "import numpy as np, pandas as pd\n"
		             "gc.disable()\n"
		             "OOM = True\n"
		             "sys.setrecursionlimit(1000000)\n"
		             "json.loads(\"[\" * 25000 + \"]\" * 25000)\n"
		             "NB = type(pd.DataFrame().iloc).mro()[2]\n"
		             "state = {'in': 0, 'vs': None, 'inline': None, 'ds2': None, 'vsbox': "
		             "[None] * 24}\n"
		             "\n"
		             "class Vic:\n"
		             "    __slots__ = ('a',)\n"
		             "\n"
		             "class Old:\n"
		             "    __slots__ = ('a',)\n"
		             "    def __del__(self):\n"
		             "        state['in'] += 1\n"
		             "        if state['in'] > 1:\n"
		             "            return\n"
		             "        state['inline'] = 'after' not in state\n"
		             "        vs = state['vsbox']\n"
		             "        try:\n"
		             "            state['ds2'] = None; ib.obj = None\n"
		             "        except BaseException as e:\n"
		             "            state['err'] = repr(e)\n"
		             "        for v in vs:\n"
		             "            if v is not None:\n"
		             "                v.a = 'original'\n"
		             "        state['vs'] = [v for v in vs if v is not None]\n"
		             "\n"
		             "ib = NB(\"a\", None)\n"
		             "ib.obj = Old()\n"
		             "z = np.zeros(1)\n"
		             "ds = [np.nditer(z) for _ in range(64)]\n"
		             "state['ds2'] = [np.nditer(z) for _ in range(64)]\n"
		             "keep, spare = [], []\n"
		             "for i in range(600):\n"
		             "    keep.append(10**9 + 2 * i); spare.append(10**9 + 2 * i + 1)\n"
		             "for rep in range(40):\n"
		             "    for n in range(0, 480, 4):\n"
		             "        keep.append(bytes(n)); spare.append(bytes(n))\n"
		             "for i in range(3000):\n"
		             "    keep.append(bytes(8)); spare.append(bytes(8))\n"
		             "slots = [None] * 300000\n"
		             "idx = iter(list(range(300000)))\n"
		             "sizes = [1 << k for k in range(28, 10, -1)] + list(range(1100, 519, "
		             "-8))\n"
		             "for sz in (sizes if OOM else ()):\n"
		             "    for make in (bytes, bytearray):\n"
		             "        while True:\n"
		             "            try:\n"
		             "                slots[next(idx)] = make(sz)\n"
		             "            except MemoryError:\n"
		             "                break\n"
		             "for i in range(len(spare)):\n"
		             "    spare[i] = None\n"
		             "del ds; ib.obj = None; state['after'] = True\n"
		             "del slots[:]\n"
		             "fill = [Vic() for _ in range(3000)]\n"
		             "for f in fill:\n"
		             "    f.a = 'FORGED'\n"
		             "vs = state['vs'] or []\n"
		             "def attr(v):\n"
		             "    try:\n"
		             "        return v.a\n"
		             "    except AttributeError:\n"
		             "        return '<unset>'\n"
		             "bad = [(i, attr(v), any(v is f for f in fill)) for i, v in "
		             "enumerate(vs) if attr(v) != 'original']\n"
		             "leak = [vs[i] for i, _, _ in bad]\n"
		             "bad";
		r = e2e_call(code, NULL);
		if (strcmp(mcpc_status(r), "ok") == 0)
			e2e_assert_result(r, "the victims", k == 0 ? "0" : "[]");
		else {
			cr_assert_str_eq(mcpc_status(r), "crashed", "%s", mcpc_json(r));
			cr_assert(strstr(mcpc_err_str(r, "message"), "exit status 108"), "%s",
			          mcpc_json(r));
		}
	}
	e2e_expect_result("6 * 7", "42");
	e2e_stop();
}

/* numpy's arrays have no collector header, so no trashcan: a chain of 200,000 arrays of objects,
 * each holding the next (and a list), was freed one C frame a link and overflowed the worker's
 * stack (crashed); so were chains of pandas' Cython classes and numpy's records' hashes. Each is freed with the others put aside past a depth: the chain is freed to
 * its end (the object at the bottom is finalized), and a wide array of such chains too. */
Test(data, chains_of_arrays_of_objects_are_freed_to_their_end)
{
	json_object *r;

	start_data(NULL);
	r = e2e_call("import numpy as np\n"
	             "done = []\n"
	             "class Bottom:\n"
	             "    def __del__(self):\n"
	             "        done.append(len(done))\n"
	             "x = Bottom()\n"
	             "for i in range(200000):\n"
	             "    a = np.empty(2, object); a[0] = x; a[1] = [i]; x = a\n"
	             "top = [x[1][0], x[0][0][1][0], len(done)]\n"
	             "del x, a\n"
	             "wide = np.empty(3, object)\n"
	             "for j in range(3):\n"
	             "    y = Bottom()\n"
	             "    for i in range(20000):\n"
	             "        b = np.empty(1, object); b[0] = y; y = b\n"
	             "    wide[j] = y\n"
	             "del y, b\n"
	             "seen = len(done)\n"
	             "del wide\n"
	             "[top, seen, done]",
	             NULL);
	cr_assert_str_eq(mcpc_status(r), "ok", "%s", mcpc_json(r));
	e2e_assert_result(r, "the chains' ends", "[[199999,199997,0],1,[0,1,2,3]]");
	/* pandas' Cython classes found on a public class's MRO and numpy's ufuncs (no trashcan
	 * either), and numpy's records, whose hash hashes their fields: each holding the next */
	e2e_expect_result(
	    "import pandas as pd\n"
	    "B = type(pd.DataFrame().iloc).mro()[2]\n"
	    "NB = [c for c in pd.Categorical.mro() if c.__name__ == 'NDArrayBacked'][0]\n"
	    "x = y = None\n"
	    "e = np.empty(0)\n"
	    "AP = type(pd.DataFrame.index)\n"
	    "LBM = [c for c in pd.core.internals.BlockManager.mro()\n"
	    "       if c.__module__ == 'pandas._libs.internals'][0]\n"
	    "for i in range(1_000_000):\n"
	    "    x = B('a', x)\n"
	    "    y = NB(e, y)\n"
	    "del x, y\n"
	    "x = y = None\n"
	    "for i in range(700_000):\n"
	    "    x = AP(0, x)\n"
	    "    m = LBM()\n"
	    "    m.parent = y\n"
	    "    y = m\n"
	    "del x, y, m\n"
	    "z = 0\n"
	    "for i in range(700_000):\n"
	    "    z = np.frompyfunc(len, 1, 1, identity=z)\n"
	    "del z\n"
	    "arr = np.zeros(1_000_000, np.dtype([('f', object)]))\n"
	    "R = arr.view()\n"
	    "R.flags.writeable = False\n"
	    "F = arr['f']\n"
	    "F[0] = 1\n"
	    "for i in range(1, len(F)):\n"
	    "    F[i] = R[i - 1]\n"
	    "try:\n"
	    "    hash(R[-1])\n"
	    "    h = 'hashed'\n"
	    "except RecursionError as e:\n"
	    "    h = str(e)[-35:]\n"
	    "[h, hash(R[3]) == hash(R[3])]",
	    "[\"(more than 10000 levels of nesting)\",true]");
	e2e_stop();
}

/* A cycle with a __del__ that a collection found was kept alive by its deferred finalizer and
 * freed only when an older generation was collected: a loop making such cycles around 128 KiB
 * buffers ran out of memory (2.5 GiB made, 1 GiB allowed). The finalizers found from the user's
 * frame run there and the collection goes on to free the cycles: the loop ends, and
 * gc.collect() frees and counts them as CPython does. */
Test(data, cycles_with_finalizers_are_freed_as_they_are_collected)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np\nfin = []\n"
	                  "class C:\n    def __del__(self):\n        fin.append(1)\n"
	                  "for i in range(20000):\n"
	                  "    a = C(); a.me = a; a.buf = bytearray(1 << 17)\n"
	                  "len(fin) > 19000",
	                  "true");
	/* (the first call's last cycles are collected first) */
	e2e_expect_result("import gc\ngc.collect()\nfin2 = []\n"
	                  "class E:\n    def __del__(self):\n        fin2.append(1)\n"
	                  "class F:\n    pass\n"
	                  "x = E(); x.me = x; del x\n"
	                  "a = gc.collect()\n"
	                  "y = E(); y.me = y; del y\nb = gc.collect()\n"
	                  "z = F(); z.me = z; del z\n"
	                  "[a >= 1, b >= 1, gc.collect() >= 1, len(fin2)]",
	                  "[true,true,true,2]");
	e2e_stop();
}

/* Compiled writers drop the object an array's item holds before they store the next (pandas'
 * Cython fills through a memoryview: fillna(method='ffill', inplace=True)): the object's
 * __del__, or a weak reference's callback, ran there with the item still pointing at it, and
 * one that called the same writer again dropped it a second time (freed while held: the build
 * before crashes, SIGSEGV, or hands the freed memory out again). With the data stack loaded such
 * finalizers wait until the user's own code runs again: the object is alive, out of the array,
 * when its __del__ runs, and nothing of it is handed out again. Every finalizer still runs in
 * the call that dropped its object (a generator's finally block too), in the order they came. */
Test(data, finalizers_wait_until_no_library_is_writing)
{
	start_data(NULL);
	e2e_expect_result("import numpy as np, pandas as pd\n"
	                  "R = type(pd.DataFrame({'a': [1]})['a']._cacher[1])\n"
	                  "addr = lambda b: np.byte_bounds(np.frombuffer(b, dtype=np.uint8))[0]\n"
	                  "def reused(o, size):\n"
	                  "    # is o's memory handed out again (freed while held)?\n"
	                  "    bufs = [bytearray(size) for _ in range(2048)]\n"
	                  "    return any(addr(b) <= id(o) < addr(b) + size for b in bufs)\n"
	                  "kept, order = [], []\n"
	                  "class F(float):\n"
	                  "    __slots__ = ('p', 'q', 'r', 's', 't')\n"
	                  "    def __del__(self):\n"
	                  "        order.append('del')\n"
	                  "        kept.append(self)\n"
	                  "        s.fillna(method='ffill', inplace=True)\n"
	                  "arr = np.array(['a', None, 'c'], dtype=object)\n"
	                  "arr[1] = F('nan')\n"
	                  "s = pd.Series(arr, copy=False)\n"
	                  "s.fillna(method='ffill', inplace=True)\n"
	                  "order.append('filled')\n"
	                  "class W(float):\n"
	                  "    __slots__ = ('p', 'q', 'r', '__weakref__')\n"
	                  "arr2 = np.array(['x', None, 'z'], dtype=object)\n"
	                  "w = W('nan'); arr2[1] = w\n"
	                  "s2 = pd.Series(arr2, copy=False)\n"
	                  "def cb(r):\n"
	                  "    order.append('callback')\n"
	                  "    s2.fillna(method='ffill', inplace=True)\n"
	                  "ref = R(w, cb); del w\n"
	                  "s2.fillna(method='ffill', inplace=True)\n"
	                  "order.append('filled 2')\n"
	                  "[list(arr), list(arr2), type(kept[0]).__name__, kept[0] != kept[0], "
	                  "reused(kept[0], 79),\n"
	                  " ref() is None, order]\n",
	                  "[[\"a\",\"a\",\"c\"],[\"x\",\"x\",\"z\"],\"F\",true,false,true,"
	                  "[\"filled\",\"del\",\"filled 2\",\"callback\"]]");
	e2e_expect_result("import numpy as np\n"
	                  "out = []\n"
	                  "def g():\n"
	                  "    try:\n"
	                  "        yield 1\n"
	                  "    finally:\n"
	                  "        out.append('closed')\n"
	                  "it = g(); next(it)\n"
	                  "del it\n"
	                  "out.append('after del')\n"
	                  "class K:\n"
	                  "    def __del__(self): out.append('K del')\n"
	                  "ks = [K() for _ in range(2)]\n"
	                  "ks = None\n"
	                  "out.append('after ks')\n"
	                  "a = np.empty(2, dtype=object)\n"
	                  "a[0] = K()\n"
	                  "a[0] = 5\n"
	                  "for i in range(1):\n"
	                  "    pass\n"
	                  "out.append('after loop')\n"
	                  "class P:\n"
	                  "    def __del__(self): out.append('P del')\n"
	                  "p = P()\n"
	                  "del p\n",
	                  "null");
	e2e_expect_result("out", "[\"after del\",\"closed\",\"after ks\",\"K del\",\"K del\","
	                         "\"K del\",\"after loop\",\"P del\"]");
	/* An object without a finalizer of its own, dropped so, whose contents' __del__ read the
	 * item (or a Cython class's attribute set the same way: a DataFrame's .loc object) while
	 * it died, had it handed out at a count of 0 (freed after: V77a H1, H2). */
	e2e_expect_result("import numpy as np, pandas as pd\n"
	                  "keep = []\n"
	                  "arr = np.array(['a', None, 'c'], dtype=object)\n"
	                  "class Q:\n"
	                  "    def __del__(self):\n"
	                  "        keep.append(arr[1])\n"
	                  "class P(float):\n"
	                  "    __slots__ = ('q',)\n"
	                  "p = P('nan'); p.q = Q(); arr[1] = p; del p\n"
	                  "pd.Series(arr, copy=False).fillna(method='ffill', inplace=True)\n"
	                  "ix = pd.DataFrame({'a': [1]}).loc\n"
	                  "class Q2:\n"
	                  "    def __del__(self):\n"
	                  "        keep.append(ix.obj)\n"
	                  "class P2:\n"
	                  "    __slots__ = ('q',)\n"
	                  "p = P2(); p.q = Q2(); ix.obj = p; del p\n"
	                  "ix.obj = None\n"
	                  "for _ in range(2):\n"
	                  "    pass\n"
	                  "[type(k).__name__ for k in keep]\n",
	                  "[\"str\",\"NoneType\"]");
	e2e_stop();
}

/* scipy's LIL matrices search a row's column numbers by compiled bisection with bounds checks
 * off, reading the row's length once and converting each probed item through its __index__:
 * one of the code's that shortened the row had the next probe read a freed item past its end
 * (laid over by a bytearray, then handed to __index__ as an object: V77a H3). The rows a LIL
 * call searches are made plain ints first; ordinary LIL work answers as before. */
Test(data, a_lil_matrix_s_rows_are_searched_as_plain_numbers)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, struct\n"
	    "from scipy import sparse\n"
	    "state = {'armed': False}\n"
	    "addr = lambda b: np.byte_bounds(np.frombuffer(b, dtype=np.uint8))[0]\n"
	    "bufs = []\n"
	    "class I:\n"
	    "    __slots__ = ('v', 'p2', 'p3', 'p4', 'p5', 'p6')\n"
	    "    def __init__(self, v): self.v = v\n"
	    "    def __index__(self):\n"
	    "        if state.get('target') == id(self) and 'hit' in state:\n"
	    "            state['forged'] = True\n"
	    "            return 10**6\n"
	    "        if state['armed'] and self.v == 4:\n"
	    "            state['armed'] = False\n"
	    "            state['target'] = t = id(row[6])\n"
	    "            del row[5:]\n"
	    "            for _ in range(4096):\n"
	    "                b = bytearray(79)\n"
	    "                bufs.append(b)\n"
	    "                s0 = addr(b)\n"
	    "                if s0 <= t and t + 16 <= s0 + len(b):\n"
	    "                    b[t - s0:t - s0 + 16] = struct.pack('<qq', 2**40, id(I))\n"
	    "                    state['hit'] = True\n"
	    "                    break\n"
	    "            return 0\n"
	    "        return self.v\n"
	    "A = sparse.lil_matrix((1, 100))\n"
	    "A.rows[0] = [I(k) for k in range(8)]\n"
	    "row = A.rows[0]\n"
	    "held = [x for k, x in enumerate(row) if k != 6]\n"
	    "A.data[0] = [1.0] * 8\n"
	    "state['armed'] = True\n"
	    "try:\n"
	    "    v = A[0, 50]\n"
	    "except Exception as e:\n"
	    "    v = type(e).__name__\n"
	    "B = sparse.lil_matrix((3, 5))\n"
	    "B[1, 2] = 7\n"
	    "B[0, [1, 3]] = [4, 5]\n"
	    "[v, 'hit' in state, 'forged' in state, sorted({type(x).__name__ for x in "
	    "A.rows[0]}),\n"
	    " B[1, 2], B[0].toarray().tolist(), B[:, 1:4].toarray().tolist()]\n",
	    "[0.0,false,false,[\"int\"],7.0,[[0.0,4.0,0.0,5.0,0.0]],"
	    "[[4.0,0.0,5.0],[0.0,7.0,0.0],[0.0,0.0,0.0]]]");
	e2e_stop();
}

/* The same window through code that runs while an object ends without being a finalizer of
 * the code's (V78a): io's finalizer closing a writer calls its raw object's close (the code's),
 * an nditer left unclosed casts its copied operand back through the objects' __float__, a
 * cursor's end resets its statement and SQLite finalized a window function's aggregate (the
 * code's finalize), and what a collection's finalizer ran in turn was not deferred. Each read
 * the dropped object at a count of 0 (the build before crashes). C classes' finalizers and
 * these ends wait as the code's finalizers do; a cursor that ends calls no callback. */
Test(data, ends_that_run_code_wait_as_finalizers_do)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd, io, sqlite3, time\n"
	    "keep = []\n"
	    "arr = np.array(['a', None, 'c'], dtype=object)\n"
	    "class P(float):\n"
	    "    __slots__ = ('q',)\n"
	    "def drop(make):\n"
	    "    p = P('nan'); p.q = make(); arr[1] = p; del p\n"
	    "    pd.Series(arr, copy=False).fillna(method='ffill', inplace=True)\n"
	    "    arr[1] = None\n"
	    "class R:\n"
	    "    closed = False\n"
	    "    def readable(self): return False\n"
	    "    def writable(self): return True\n"
	    "    def seekable(self): return False\n"
	    "    def write(self, b): return len(b)\n"
	    "    def flush(self): pass\n"
	    "    def close(self): keep.append(('io', arr[1]))\n"
	    "drop(lambda: io.BufferedWriter(R()))\n"
	    "class U:\n"
	    "    def __float__(self):\n"
	    "        keep.append(('nditer', arr[1]))\n"
	    "        return 1.0\n"
	    "def make_iter():\n"
	    "    it = np.nditer(np.zeros(3), op_flags=[['readwrite', 'updateifcopy']],\n"
	    "                   op_dtypes=[np.dtype(object)], casting='unsafe')\n"
	    "    it.operands[0][0] = U()\n"
	    "    return it\n"
	    "drop(make_iter)\n"
	    "class W:\n"
	    "    def __init__(self): self.n = 0\n"
	    "    def step(self, x): self.n += x\n"
	    "    def value(self): return self.n\n"
	    "    def inverse(self, x): self.n -= x\n"
	    "    def finalize(self):\n"
	    "        keep.append(('sqlite', arr[1]))\n"
	    "        return self.n\n"
	    "con = sqlite3.connect(':memory:')\n"
	    "con.create_window_function('w', 1, W)\n"
	    "con.execute('create table t(x)')\n"
	    "con.executemany('insert into t values(?)', [(i,) for i in range(10)])\n"
	    "def make_cursor():\n"
	    "    cur = con.execute('select w(x) over (order by x rows between 1 preceding and 1 "
	    "following) '\n"
	    "                      'from t')\n"
	    "    cur.fetchone()\n"
	    "    return cur\n"
	    "drop(make_cursor)\n"
	    "class Q:\n"
	    "    def __del__(self): keep.append(('tick', arr[1]))\n"
	    "done = []\n"
	    "class Cyc:\n"
	    "    def __del__(self):\n"
	    "        if not done:\n"
	    "            done.append(1)\n"
	    "            drop(Q)\n"
	    "c = Cyc(); c.self = c; del c\n"
	    "t0 = time.process_time()\n"
	    "junk = []\n"
	    "while not done and time.process_time() - t0 < 5:\n"
	    "    junk.append([[]])\n"
	    "    if len(junk) > 10000:\n"
	    "        junk.clear()\n"
	    "del junk\n"
	    "for _ in range(2):\n"
	    "    pass\n"
	    "[[w, type(o).__name__] for w, o in keep]\n",
	    "[[\"io\",\"NoneType\"],[\"nditer\",\"NoneType\"],[\"tick\",\"NoneType\"]]");
	e2e_stop();
}

/* Without a workspace pandas' writers check that the file's directory exists (pathlib's is_dir
 * of '.', an os.stat) before they open it: to_csv('out.csv') failed with a bare "[Errno 13]
 * Permission denied: '.'", and an assistant tried other paths. os.stat and os.lstat say why, as
 * open does. */
Test(data, pandas_writers_without_a_workspace_say_why)
{
	start_data(NULL);
	e2e_expect_result(
	    "import pandas as pd\n"
	    "df = pd.DataFrame({'a': [1, 2]})\n"
	    "def said(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "    except PermissionError as e:\n"
	    "        return [isinstance(e, FileNotFoundError), 'no workspace was given' "
	    "in str(e),\n"
	    "                'io.StringIO' in str(e)]\n"
	    "[said(lambda: df.to_csv('out.csv')), said(lambda: df.to_json('o/x.json'))]",
	    "[[true,true,true],[true,true,true]]");
	e2e_stop();
}

/* pandas' interval tree nodes (type(IntervalTree(...).root)) took left, right and indices of
 * any lengths: the compiled split read right[i] for each i of left, past a shorter right (what
 * lay there read back, 8 bytes at a time, by which child an index went to), and query() took
 * None for its result vector (a SIGSEGV). A node is made of three arrays of one length only,
 * query takes an Int64Vector, the fields are pandas' own; interval indexes answer as on the
 * host. */
Test(data, interval_tree_nodes_take_arrays_of_one_length)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "IT = pd.core.indexes.interval.IntervalTree\n"
	    "t = IT(np.arange(3.0), np.arange(3.0) + 1)\n"
	    "Node = type(t.root)\n"
	    "out = []\n"
	    "def tried(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('ran')\n"
	    "    except (ValueError, TypeError, AttributeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "two = np.arange(2, dtype=np.int64)\n"
	    "tried(lambda: Node(np.array([2.0, 2.0]), np.zeros(1), two, 1))\n"
	    "tried(lambda: Node(np.zeros(3), np.zeros(3), two, 1))\n"
	    "tried(lambda: Node(left=np.array([2.0, 2.0]), right=np.zeros(1), indices=two,\n"
	    "                   leaf_size=1))\n"
	    "tried(lambda: Node(np.array([2.0, 2.0]), np.zeros(2), two, 0))\n"
	    "tried(lambda: t.root.query(None, 0.5))\n"
	    "tried(lambda: t.root.right)\n"
	    "tried(lambda: t.root.center_left_indices)\n"
	    "n = Node(np.array([0.0, 1.0]), np.array([2.0, 3.0]), two, 1)\n"
	    "idx = pd.IntervalIndex.from_breaks([0, 1, 2, 3, 5])\n"
	    "s = pd.Series(range(4), index=idx)\n"
	    "ov = pd.IntervalIndex.from_tuples([(0, 2), (1, 3)])\n"
	    "[out, idx.get_indexer([0.5, 4, 7]).tolist(), t.get_indexer(np.array([0.5, "
	    "2.5])).tolist(),\n"
	    " int(s[4.5]), ov.get_indexer_non_unique([1.5])[0].tolist(),\n"
	    " str(pd.cut([1, 5, 9], 3).categories[0]), ov.overlaps(pd.Interval(2.5, 4)).tolist()]",
	    "[[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"TypeError\","
	    "\"AttributeError\",\"AttributeError\"],[0,3,-1],[0,2],3,[0,1],\"(0.992, 3.667]\","
	    "[false,true]]");
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* Worker crashes from plain calls: points with NaN added to an incremental hull or halfspace
 * intersection (checked when the object is made, not when added: a NULL facet followed),
 * qhull's TI option (qhull reopened its input on the file: a descriptor closed under the
 * worker), point() to a BGR mode and an image of a BGR mode (no pixel access: NULL called;
 * PIL itself refuses to fill one),
 * a hatch drawn below 1 dpi (a pattern wrapped modulo 0). Each is refused; the same work in the
 * usual forms answers as on the host. */
Test(data, incremental_hulls_bgr_images_and_sub_pixel_dpi_are_refused)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io\n"
	    "import numpy as np\n"
	    "from scipy.spatial import ConvexHull, HalfspaceIntersection, Delaunay\n"
	    "from PIL import Image\n"
	    "import matplotlib.pyplot as plt\n"
	    "from matplotlib.patches import Rectangle\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        out.append('ran')\n"
	    "    except ValueError as e:\n"
	    "        out.append(str(e)[:24])\n"
	    "sq = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.5]])\n"
	    "h = ConvexHull(sq, incremental=True)\n"
	    "t(lambda: h.add_points(np.full((2, 2), np.nan)))\n"
	    "h.add_points([[2.0, 2.0]])\n"
	    "hs = np.array([[-1, 0, 0], [0, -1, 0], [1, 1, -1]], float)\n"
	    "hi = HalfspaceIntersection(hs, np.array([0.2, 0.2]), incremental=True)\n"
	    "t(lambda: hi.add_halfspaces(np.array([[np.nan, 1, -1]])))\n"
	    "hi.add_halfspaces(np.array([[1, 0, -0.5]]))\n"
	    "t(lambda: ConvexHull(sq, qhull_options='TI /etc/hostname'))\n"
	    "t(lambda: Delaunay(sq, qhull_options='Qt TO out.txt'))\n"
	    "rgb = Image.new('RGB', (4, 4), (200, 100, 50))\n"
	    "t(lambda: rgb.point(list(range(256)) * 3, 'BGR;24'))\n"
	    "t(lambda: rgb.convert('BGR;24'))\n"
	    "t(lambda: Image.new('BGR;16', (2, 2), None))\n"
	    "t(lambda: Image.frombytes('BGR;24', (1, 1), b'abc'))\n"
	    "fig = plt.figure(figsize=(2, 2))\n"
	    "fig.add_artist(Rectangle((0, 0), 1, 1, hatch='/', transform=fig.transFigure))\n"
	    "t(lambda: fig.savefig(io.BytesIO(), format='png', dpi=0.5))\n"
	    "buf = io.BytesIO()\n"
	    "fig.savefig(buf, format='png', dpi=10)\n"
	    "plt.close(fig)\n"
	    "bmp = io.BytesIO()\n"
	    "rgb.save(bmp, 'BMP')\n"
	    "back = Image.open(io.BytesIO(bmp.getvalue()))\n"
	    "[out, sorted(h.vertices.tolist()), len(hi.intersections), round(float(h.volume), 6),\n"
	    " rgb.convert('L').getpixel((0, 0)), back.mode, back.getpixel((1, 1)),\n"
	    " Image.frombytes('RGB', (1, 1), b'abc').getpixel((0, 0)),\n"
	    " Image.open(io.BytesIO(buf.getvalue())).size]",
	    "[[\"Points cannot contain Na\",\"Points cannot contain Na\","
	    "\"qhull option 'TI': qhull\",\"qhull option 'TO': qhull\","
	    "\"point operation to mode \",\"mode BGR;24 is not suppo\","
	    "\"mode BGR;16 is not suppo\",\"unrecognized image mode\","
	    "\"dpi must be at least 1 "
	    "(\"],[0,1,2,5],4,2.0,124,\"RGB\",[200,100,50],[97,98,99],"
	    "[20,20]]");
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* A keyword named by a str subclass whose __hash__ and __eq__ hide it from a check's lookup
 * (the callee still takes it by its characters): ndarray's strides over a buffer (an array
 * over any address: an immutable bytes rewritten), an interval tree node's right (read past).
 * Each check sees the keyword given by **; a partial's keywords are read only; a key that is
 * no str is refused (an object hashing as the name hid it the same way). */
Test(data, keyword_names_of_str_subclasses_reach_the_checks)
{
	start_data(NULL);
	e2e_expect_result(
	    "import functools\n"
	    "import numpy as np, pandas as pd\n"
	    "victim = bytes(b'VICTIM-BYTES-OBJECT-IMMUTABLE!!!')\n"
	    "buf = bytearray(64)\n"
	    "calls = [0]\n"
	    "class K(str):\n"
	    "    def __hash__(self):\n"
	    "        return hash(str(self))\n"
	    "    def __eq__(self, other):\n"
	    "        calls[0] += 1\n"
	    "        return calls[0] > 1\n"
	    "lo = np.byte_bounds(np.frombuffer(buf, dtype=np.uint8))[0]\n"
	    "D = (id(victim) + 32) - lo\n"
	    "S = -(1 << 63) if D < 0 else (1 << 63) - 1\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    calls[0] = 0\n"
	    "    try:\n"
	    "        a = f()\n"
	    "        a[1, 0, :6] = np.frombuffer(b'HACKED', dtype=np.uint8)\n"
	    "        out.append('made')\n"
	    "    except (ValueError, TypeError, IndexError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "t(lambda: np.ndarray((2, 2, 32), np.uint8, buf, 0, **{K('strides'): (D, S, 1)}))\n"
	    "p = functools.partial(np.ndarray, (2, 2, 32), np.uint8, buf, 0)\n"
	    "try:\n"
	    "    p.keywords[K('strides')] = (D, S, 1)\n"
	    "    t(p)\n"
	    "except TypeError:\n"
	    "    out.append('read only')\n"
	    "class X:\n"
	    "    def __hash__(self):\n"
	    "        return hash('strides')\n"
	    "    def __eq__(self, other):\n"
	    "        calls[0] += 1\n"
	    "        return calls[0] > 1\n"
	    "t(lambda: np.ndarray((2, 2, 32), np.uint8, buf, 0, **{X(): (D, S, 1)}))\n"
	    "N = type(pd.IntervalIndex.from_breaks(np.arange(3))._engine.root)\n"
	    "def node(**kw):\n"
	    "    calls[0] = 0\n"
	    "    try:\n"
	    "        N(np.zeros(32, dtype=np.int64), indices=np.arange(32), leaf_size=1, **kw)\n"
	    "        return 'made'\n"
	    "    except (ValueError, IndexError) as e:\n"
	    "        return type(e).__name__\n"
	    "right = np.full(64, 5, dtype=np.int64)[:1]\n"
	    "out.append(node(**{K('right'): right}))\n"
	    "q = functools.partial(N, np.zeros(32, dtype=np.int64), indices=np.arange(32),\n"
	    "                      leaf_size=1)\n"
	    "try:\n"
	    "    q.keywords[K('right')] = right\n"
	    "    calls[0] = 0\n"
	    "    q()\n"
	    "    out.append('made')\n"
	    "except (ValueError, IndexError, TypeError) as e:\n"
	    "    out.append(type(e).__name__)\n"
	    "ok = np.ndarray((2, 4), np.uint8, buf, 0, **{K('strides'): (4, 1)})\n"
	    "[out, victim.decode(), ok.shape]",
	    "[[\"ValueError\",\"read only\",\"TypeError\",\"ValueError\",\"TypeError\"],"
	    "\"VICTIM-BYTES-OBJECT-IMMUTABLE!!!\",[2,4]]");
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* PIL's point(lut, mode) to a mode of several bands filled a table of four entries a value
 * from a lut of 256 a band: to two bands (LA) it read 256 entries past the lut's copy (the
 * neighbouring arrays' 42s came back as pixels), to RGB it left each entry's fourth unset
 * (stack bytes in the pixels' padding). pandas' JSON decoder read numpy= by its __index__
 * while the refusal asked its __bool__ (the refused decoder ran: a block freed twice).
 * ImageMath's binary operations given one operand were called with a third argument of
 * whatever was at hand (SIGSEGV). Now: an image's own mode is its bands' tables, two bands
 * are refused, RGB is made through RGBX; numpy= is read as the decoder reads it; an operation
 * takes its own count of operands. */
Test(data, point_tables_json_flags_and_image_math_operands_are_read_as_c_reads_them)
{
	start_data(NULL);
	e2e_expect_result(
	    "import numpy as np, pandas as pd\n"
	    "from PIL import Image, ImageMath\n"
	    "victims = [np.full(512, 42, dtype=np.int32) for _ in range(400)]\n"
	    "for i in range(0, 400, 2):\n"
	    "    victims[i] = None\n"
	    "la = Image.new('LA', (256, 1))\n"
	    "la.putdata([(i, i) for i in range(256)])\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        out.append(f())\n"
	    "    except (ValueError, TypeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "t(lambda: sorted(set(la.point([7] * 512, 'LA').getdata())))\n"
	    "t(lambda: Image.new('L', (4, 1), 3).point([7] * 512, 'LA'))\n"
	    "g = Image.new('L', (64, 1))\n"
	    "g.putdata(list(range(0, 256, 4)))\n"
	    "rgb = g.point(list(range(256)) + [9] * 256 + list(range(255, -1, -1)), 'RGB')\n"
	    "raw = rgb.tobytes('raw', 'RGBX')\n"
	    "t(lambda: [rgb.mode, rgb.getpixel((1, 0)), sorted(set(raw[3::4]))])\n"
	    "c = Image.new('RGB', (2, 1), (1, 2, 3))\n"
	    "t(lambda: list(c.point(list(range(1, 257)) * 3, 'RGB').getdata()))\n"
	    "t(lambda: g.point(list(range(256)) * 3, 'YCbCr'))\n"
	    "class One:\n"
	    "    def __bool__(self):\n"
	    "        return False\n"
	    "    def __index__(self):\n"
	    "        return 1\n"
	    "t(lambda: pd.io.json.loads('[1,2,3]', numpy=One()))\n"
	    "t(lambda: pd.io.json.loads('[[],[1]]', None, One()))\n"
	    "t(lambda: pd.io.json.loads('[1,2,3]', numpy=0))\n"
	    "im = Image.new('I', (4, 4), 5)\n"
	    "t(lambda: ImageMath.eval(\"a.apply('add', a)\", {'a': im, 'apply': None}))\n"
	    "t(lambda: list(ImageMath.eval('-a + a * 2', a=im).getdata())[:2])\n"
	    "out",
	    "[[[7,7]],\"ValueError\",[\"RGB\",[4,9,251],[255]],[[2,3,4],[2,3,4]],\"ValueError\","
	    "\"ValueError\",\"ValueError\",[1,2,3],\"TypeError\",[5,5]]");
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* A check that compares a name, a mode or a list of the code's by Python's == or iteration,
 * while the C code takes its characters or walks it again, let through what it refused (V94):
 * PIL's point() to a mode named by a str subclass (the lut read past), a tile's codec named by
 * one or a list subclass showing the check other tiles (4-byte pixels into an 'L' image's
 * rows), a colour transform's modes, an image's mode set by the code, an ImageFile of the
 * code's in a BGR mode (no pixel access), qhull's options as a bytes subclass decoding to other
 * text (a coordinate dropped: SIGSEGV), a backend's name, keyword names that a library's eval
 * of an annotation handed a compiled loss (another array written). Each is read by its
 * characters or copied first; the neighbouring arrays keep their values. */
Test(data, names_modes_and_lists_of_the_code_are_read_as_the_c_code_reads_them)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, typing\n"
	    "import numpy as np\n"
	    "from PIL import Image, ImageCms, ImageFile\n"
	    "import matplotlib.pyplot as plt\n"
	    "from scipy.spatial import ConvexHull\n"
	    "from sklearn.linear_model import PoissonRegressor\n"
	    "class Liar(str):\n"
	    "    def __eq__(self, other):\n"
	    "        return True\n"
	    "    def __ne__(self, other):\n"
	    "        return False\n"
	    "    def __hash__(self):\n"
	    "        return 987654321\n"
	    "    def startswith(self, *a):\n"
	    "        return False\n"
	    "    def lower(self):\n"
	    "        return 'agg'\n"
	    "victims = [np.full(512, 42, dtype=np.int32) for _ in range(400)]\n"
	    "for i in range(0, 400, 2):\n"
	    "    victims[i] = None\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        out.append('ran' if r is None else r)\n"
	    "    except (ValueError, TypeError, ImportError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "W, H = 64, 32\n"
	    "pgm = b'P5\\n%d %d\\n255\\n' % (W, H) + bytes([200]) * (W * H * 4)\n"
	    "la = Image.new('LA', (256, 1))\n"
	    "t(lambda: sorted(set(la.point([7] * 512, Liar('LA')).getdata())))\n"
	    "t(lambda: Image.new('L', (4, 1)).point([7] * 512, Liar('LA')))\n"
	    "t(lambda: Image.new('L', (4, 1)).point([7] * 256, Liar('I;16')))\n"
	    "def tile_name():\n"
	    "    im = Image.open(io.BytesIO(pgm))\n"
	    "    im.tile = [(Liar('pcd'), (0, 0, W, H), 0, None)]\n"
	    "    im.load()\n"
	    "t(tile_name)\n"
	    "class Tiles(list):\n"
	    "    n = real_at = 0\n"
	    "    def __iter__(self):\n"
	    "        Tiles.n += 1\n"
	    "        if Tiles.n != Tiles.real_at:\n"
	    "            return iter([('raw', (0, 0, W, H), 0, ('L', 0, 1))])\n"
	    "        return list.__iter__(self)\n"
	    "def tile_list(k):\n"
	    "    Tiles.n, Tiles.real_at = 0, k\n"
	    "    im = Image.open(io.BytesIO(pgm))\n"
	    "    im.tile = Tiles([('pcd', (0, 0, W, H), 0, None)])\n"
	    "    im.load()\n"
	    "for k in range(1, 8):\n"
	    "    t(lambda: tile_list(k))\n"
	    "def codec_mode():\n"
	    "    im = Image.open(io.BytesIO(pgm))\n"
	    "    im.im = Image.new('L', (W, H)).im\n"
	    "    im.mode = Liar('RGBA')\n"
	    "    im.tile = [('raw', (0, 0, W, H), 0, ('RGBA', 0, 1))]\n"
	    "    im.load()\n"
	    "    return [type(im.mode).__name__, im.im.mode]\n"
	    "t(codec_mode)\n"
	    "srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile('sRGB'))\n"
	    "cms = ImageCms.ImageCmsTransform(srgb, srgb, Liar('RGBA'), Liar('RGBA'))\n"
	    "t(lambda: cms.apply(Image.new('L', (W, H), 77), Image.new('L', (W, H))))\n"
	    "class F(ImageFile.ImageFile):\n"
	    "    format = 'X'\n"
	    "    def _open(self):\n"
	    "        self.mode = 'BGR;15'\n"
	    "        self._size = (4, 4)\n"
	    "        self.tile = [('raw', (0, 0, 4, 4), 0, ('RGB', 0, 1))]\n"
	    "t(lambda: F(io.BytesIO(b'\\x11' * 64)))\n"
	    "class G(ImageFile.ImageFile):\n"
	    "    format = 'X'\n"
	    "    mode = property(lambda s: 'BGR;15', lambda s, v: None)\n"
	    "    def _open(self):\n"
	    "        self._size = (4, 4)\n"
	    "        self.tile = [('raw', (0, 0, 4, 4), 0, ('RGB', 0, 1))]\n"
	    "t(lambda: G(io.BytesIO(b'\\x11' * 64)).load())\n"
	    "class J(ImageFile.ImageFile):\n"
	    "    format = 'X'\n"
	    "    mode = property(lambda s: 'BGR;15', lambda s, v: None)\n"
	    "    im = property(lambda s: s.__dict__.get('core'),\n"
	    "                  lambda s, v: s.__dict__.__setitem__('core', v))\n"
	    "    def _open(self):\n"
	    "        self._size = (8, 8)\n"
	    "        self.tile = [('raw', (0, 0, 8, 8), 0, ('BGR;15', 0, 1))]\n"
	    "t(lambda: J(io.BytesIO(bytes(200))).load())\n"
	    "class Source:\n"
	    "    n = real_at = 0\n"
	    "    def __init__(self, real):\n"
	    "        self.real = real\n"
	    "    def __iter__(self):\n"
	    "        Source.n += 1\n"
	    "        if Source.n != Source.real_at:\n"
	    "            return iter([('raw', (0, 0, W, H), 0, ('L', 0, 1))])\n"
	    "        return iter(self.real)\n"
	    "    def __len__(self):\n"
	    "        return 1\n"
	    "    def sort(self, key=None, reverse=False):\n"
	    "        pass\n"
	    "def tile_object(k):\n"
	    "    Source.n, Source.real_at = 0, k\n"
	    "    im = Image.open(io.BytesIO(pgm))\n"
	    "    im.tile = Source([('pcd', (0, 0, W, H), 0, None)])\n"
	    "    im.load()\n"
	    "for k in range(1, 5):\n"
	    "    t(lambda: tile_object(k))\n"
	    "tiff = [(256, 8), (257, 2), (258, 8), (262, 1), (277, 1), (278, 2), (269, 12345)]\n"
	    "t(lambda: Image.new('L', (8, 2), 65).tobytes(Liar('libtiff'),\n"
	    "                                              ('L', 'raw', 0, 'x.tif', tiff, {})))\n"
	    "def tiff_fd():\n"
	    "    try:\n"
	    "        Image.new('L', (64, 4)).tobytes('libtiff', ('L', 'raw', 3, 'x.tif', [], {}))\n"
	    "    except RuntimeError:\n"
	    "        return 'no descriptor'\n"
	    "t(tiff_fd)\n"
	    "square = np.array([[0., 0.], [1., 0.], [0., 1.], [1., 1.], [.3, .6]])\n"
	    "Q = type(ConvexHull(square, incremental=True)._qhull)\n"
	    "t(lambda: Q(b'd', square, b'', required_options=b'TI /etc/hostname'))\n"
	    "class B(bytes):\n"
	    "    def decode(self, *a, **k):\n"
	    "        return 'Qt'\n"
	    "class S(str):\n"
	    "    def encode(self, *a, **k):\n"
	    "        return B(b'Qb0:0 QB0:0')\n"
	    "pts = np.random.default_rng(0).random((30, 3))\n"
	    "t(lambda: ConvexHull(pts, qhull_options=S('x')))\n"
	    "t(lambda: plt.switch_backend(Liar('module://ctypes')))\n"
	    "class K(str):\n"
	    "    def __hash__(self):\n"
	    "        return 7\n"
	    "    def __eq__(self, o):\n"
	    "        return str(self) == o\n"
	    "closs = PoissonRegressor().fit(np.ones((4, 1)), np.ones(4))._base_loss.closs\n"
	    "n = 336\n"
	    "d = {'y_true': np.zeros(n), 'raw_prediction': np.full(n, np.log(2.0)),\n"
	    "     'sample_weight': None, 'loss_out': np.zeros(n), K('loss_out'): victims[1][:2],\n"
	    "     'n_threads': 1}\n"
	    "def f(x: '(closs.loss(**d), int)[1]'):\n"
	    "    pass\n"
	    "t(lambda: typing.get_type_hints(f))\n"
	    "[out, sum(1 for v in victims if v is not None and (v != 42).any())]",
	    "[[[[7,7]],\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "[\"str\",\"RGBA\"],\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ran\",\"ran\",\"ran\",\"ValueError\",\"no "
	    "descriptor\",\"ValueError\","
	    "\"ValueError\",\"ImportError\","
	    "\"TypeError\"],0]");
	e2e_expect_result("1 + 1", "2");
	e2e_stop();
}

/* Values the C code reads past its checks (V96a, V96b): a font's mode as a str subclass that
 * said it was not 'RGBA' (an 'L' image made, 4 bytes a pixel drawn into it), a bitmap drawn at
 * x = 2**31 - 8 (its edge wrapped past the clip: the mask blended before the image), a bitmap
 * font's glyphs in an 'I' image said to be 'L' and a text long enough to wrap its width, a
 * merge's first band of 'I' (no 8-bit rows: SIGSEGV), an empty image's offset (modulo 0:
 * SIGFPE), NdPPoly's orders of 0 (N numbers written into a scratch array of none), the MATLAB
 * reader's compiled aliases (VarHeader5 wrote past its 32 dimensions) and pandas' compiled
 * internals on its internal modules (month_position_check read any int32 near its table).
 * Each is refused or read as the C code reads it; ordinary use answers as before. */
Test(data, drawn_text_fonts_merges_and_polynomials_are_checked_before_the_c_code)
{
	start_data(NULL);
	e2e_expect_result(
	    "import io, importlib\n"
	    "import numpy as np, pandas as pd\n"
	    "from PIL import Image, ImageDraw, ImageFont, ImageChops\n"
	    "from scipy.interpolate import NdPPoly\n"
	    "class Liar(str):\n"
	    "    def __eq__(self, o):\n"
	    "        return False\n"
	    "    def __ne__(self, o):\n"
	    "        return True\n"
	    "    __hash__ = str.__hash__\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        out.append('ran' if r is None else r)\n"
	    "    except (ValueError, TypeError, ImportError, AttributeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "font = ImageFont.truetype('DejaVuSans.ttf', 20)\n"
	    "t(lambda: font.getmask2('W', Liar('RGBA'))[0].mode)\n"
	    "d = ImageDraw.Draw(Image.new('L', (40, 40)))\n"
	    "d.fontmode = Liar('1')\n"
	    "t(lambda: [type(d.fontmode).__name__, d.text((0, 0), 'hi', font=font, fill=255)])\n"
	    "mask = Image.new('L', (16, 1), 255)\n"
	    "t(lambda: ImageDraw.Draw(Image.new('RGBA', (8, 8))).bitmap((float(2**31 - 8), 0.0), "
	    "mask, fill=(1, 2, 3, 4)))\n"
	    "def small_bitmap():\n"
	    "    im = Image.new('RGBA', (8, 8))\n"
	    "    ImageDraw.Draw(im).bitmap((2.0, 2.0), Image.new('L', (2, 1), 255), fill=(1, 2, 3, "
	    "4))\n"
	    "    return list(im.getpixel((3, 2)))\n"
	    "t(small_bitmap)\n"
	    "t(lambda: ImageDraw.Draw(Image.new('L', (8, 8))).bitmap((0, 0), Image.new('RGBA', (2, "
	    "2)), fill=1))\n"
	    "def pil_font():\n"
	    "    f = ImageFont.ImageFont()\n"
	    "    bm = Image.new('I', (8, 8))\n"
	    "    bm.mode = 'L'\n"
	    "    f._load_pilfont_data(io.BytesIO(b'PILfont\\n;;;;;;8;\\nDATA\\n' + bytes(256 * "
	    "20)), bm)\n"
	    "t(pil_font)\n"
	    "t(lambda: ImageFont.load_default().getmask('x' * 20000))\n"
	    "t(lambda: list(ImageFont.load_default().getmask('hi').size))\n"
	    "L = [Image.new('L', (4, 4), v) for v in (1, 2, 3)]\n"
	    "t(lambda: Image.merge('RGB', [Image.new('I', (4, 4))] + L[1:]))\n"
	    "t(lambda: list(Image.merge('RGB', L).getpixel((0, 0))))\n"
	    "t(lambda: list(ImageChops.offset(Image.new('L', (0, 5)), 1, 1).size))\n"
	    "t(lambda: list(ImageChops.offset(Image.new('L', (3, 1)), 1, 0).size))\n"
	    "x2 = (np.array([0., 1.]), np.array([0., 1.]))\n"
	    "pt = np.array([[0.5, 0.5]])\n"
	    "t(lambda: NdPPoly(np.zeros((10, 0, 1, 1)), x2)(pt))\n"
	    "t(lambda: float(NdPPoly(np.full((1, 1, 1, 1), 3.0), x2)(pt)[0]))\n"
	    "t(lambda: importlib.import_module('scipy.io.matlab.mio5_utils'))\n"
	    "import pandas.tseries.frequencies as fr\n"
	    "import pandas.core.arrays.timedeltas as tdm\n"
	    "t(lambda: fr.month_position_check)\n"
	    "t(lambda: tdm.get_timedelta_field)\n"
	    "t(lambda: [str(fr.to_offset('2D')), pd.api.types.is_scalar(1)])\n"
	    "from PIL import ImageFilter\n"
	    "blurred = Image.new('L', (8, 5), 7)\n"
	    "t(lambda: "
	    "sorted(set(blurred.filter(ImageFilter.BoxBlur(np.float32(-3))).getdata())))\n"
	    "t(lambda: blurred.filter(ImageFilter.BoxBlur(float('nan'))))\n"
	    "o = ImageDraw.Outline()\n"
	    "o.move(2, 2)\n"
	    "o.line(15, 3)\n"
	    "o.line(9, 15)\n"
	    "o.close()\n"
	    "t(lambda: o.transform((1, 0, 0, 0, 1, 0)))\n"
	    "t(lambda: o.line(float(2**31 - 8), 0.0))\n"
	    "shaped = Image.new('L', (20, 20))\n"
	    "ImageDraw.Draw(shaped).shape(o, fill=200)\n"
	    "t(lambda: shaped.getpixel((9, 6)))\n"
	    "out",
	    "[\"RGBA\",[\"str\",null],\"ValueError\",[1,2,3,4],\"ValueError\",\"TypeError\","
	    "\"ValueError\",[12,11],\"ValueError\",[1,2,3],[0,5],[3,1],\"ValueError\",3.0,"
	    "\"ModuleNotFoundError\",\"AttributeError\",\"AttributeError\",[\"<2 * "
	    "Days>\",true],[7],\"ValueError\",\"TypeError\",\"ValueError\",200]");
	e2e_stop();
}
