/* test_pylayer.c - ordinary Python next to the Python layer's rules, run against the real safepy
 * binary: the library code that reads the guarded attributes for the user (dataclasses, enum,
 * typing, namedtuple, singledispatch, abc, copy), class hierarchies, match, f-strings and every
 * form of import give what plain CPython 3.11 gives. Each expected result was taken from
 * python3.11 running the same code (a session's calls, one after the other). */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

TestSuite(pylayer, .timeout = 120, .fini = e2e_cleanup);

Test(pylayer, dataclasses_work)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass Point:\n"
	    "    x: int\n    y: 'int' = 0\n"
	    "    tags: list = dataclasses.field(default_factory=list, compare=False)\n"
	    "@dataclasses.dataclass(slots=True, kw_only=True, frozen=True)\n"
	    "class P3(Point):\n    z: 'Point | None' = None\n"
	    "p = P3(x=1, y=2, z=Point(0))\n"
	    "[repr(p), dataclasses.asdict(p), repr(dataclasses.replace(p, x=5)),\n"
	    " [f.name for f in dataclasses.fields(P3)], p == P3(x=1, y=2, z=Point(0)),\n"
	    " hash(Point(1)) == hash(Point(1))]",
	    "[\"P3(x=1, y=2, tags=[], z=Point(x=0, y=0, tags=[]))\","
	    "{\"x\":1,\"y\":2,\"tags\":[],\"z\":{\"x\":0,\"y\":0,\"tags\":[]}},"
	    "\"P3(x=5, y=2, tags=[], z=Point(x=0, y=0, tags=[]))\","
	    "[\"x\",\"y\",\"tags\",\"z\"],true,true]");
	/* A frozen dataclass refuses assignment with its own error. */
	e2e_expect_error("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass F:\n"
	                 "    a: int\nF(1).a = 2",
	                 "dataclasses.FrozenInstanceError");
	e2e_stop();
}

Test(pylayer, enum_works)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import enum\nclass Color(enum.Enum):\n    RED = enum.auto()\n"
	    "    GREEN = enum.auto()\nclass Perm(enum.IntFlag):\n    R = 4\n    W = 2\n"
	    "Shape = enum.Enum('Shape', 'SQUARE CIRCLE')\n@enum.global_enum\n"
	    "class Dir(enum.IntEnum):\n    NORTH = 1\n"
	    "[repr(Color.RED), Color['GREEN'].value, repr(Perm.R | Perm.W),\n"
	    " repr(Shape.CIRCLE), [c.name for c in Color], repr(NORTH),\n"
	    " Color(1) is Color.RED, isinstance(Perm.R, int)]",
	    "[\"<Color.RED: 1>\",2,\"<Perm.R|W: 6>\",\"<Shape.CIRCLE: 2>\","
	    "[\"RED\",\"GREEN\"],\"__main__.NORTH\",true,true]");
	e2e_stop();
}

Test(pylayer, typing_works)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import typing, contextlib\nclass NT(typing.NamedTuple):\n    a: int\n    b: str = "
	    "'x'\n"
	    "class TD(typing.TypedDict):\n    k: int\n@typing.runtime_checkable\n"
	    "class Closeable(typing.Protocol):\n    def close(self) -> None: ...\n"
	    "class Has:\n    def close(self):\n        pass\n"
	    "T = typing.TypeVar('T')\nclass Box(typing.Generic[T]):\n"
	    "    def __init__(self, v: T):\n        self.v = v\n"
	    "@typing.overload\ndef ov(x: int) -> int: ...\n@typing.overload\n"
	    "def ov(x: str) -> str: ...\ndef ov(x):\n    return x\n"
	    "def annotated(a: Box[int], b: 'NT') -> 'list[Box]': ...\n"
	    "[repr(NT(1)), TD(k=1), isinstance(Has(), Closeable), isinstance(1, Closeable),\n"
	    " Box[int](3).v, ov('s'),\n"
	    " sorted(k + '=' + repr(v) for k, v in typing.get_type_hints(annotated).items())]",
	    "[\"NT(a=1, b='x')\",{\"k\":1},true,false,3,\"s\","
	    "[\"a=__main__.Box[int]\",\"b=<class '__main__.NT'>\",\"return=list[__main__.Box]\"]]");
	/* Postponed annotations: the future import and string annotations of the user's names. */
	e2e_expect_result("from __future__ import annotations\nimport typing, dataclasses\n"
	                  "@dataclasses.dataclass\nclass Node:\n    value: int\n"
	                  "    next: Node | None = None\n"
	                  "def f(n: Node) -> list[Node]: ...\n"
	                  "[Node.__annotations__['next'], repr(typing.get_type_hints(f)['n']), "
	                  "repr(Node(1, Node(2)))]",
	                  "[\"Node | None\",\"<class '__main__.Node'>\","
	                  "\"Node(value=1, next=Node(value=2, next=None))\"]");
	e2e_stop();
}

Test(pylayer, functools_collections_and_copy_work)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import collections, functools, copy, heapq\n"
	    "NT2 = collections.namedtuple('NT2', 'a b c', defaults=(2, 3))\n"
	    "@functools.singledispatch\ndef show(x):\n    return 'obj'\n"
	    "@show.register\ndef _(x: int):\n    return 'int'\n"
	    "@show.register\ndef _(x: 'list'):\n    return 'list'\n"
	    "class Node:\n    def __init__(self, v):\n        self.v = v\n"
	    "        self.m = self.meth\n    def meth(self):\n        return self.v\n"
	    "@functools.lru_cache\ndef sq(n):\n    return n * n\n"
	    "@functools.wraps(sq)\ndef wrapped(n):\n    return sq(n)\n"
	    "[repr(NT2(1)), show(1), show([]), show('s'), copy.deepcopy(Node(4)).m(),\n"
	    " copy.copy([1, [2]]), list(heapq.merge([1, 4], [2, 3])), wrapped(5),\n"
	    " wrapped.__name__, functools.reduce(lambda a, b: a * b, [1, 2, 3, 4])]",
	    "[\"NT2(a=1, b=2, c=3)\",\"int\",\"list\",\"obj\",4,[1,[2]],[1,2,3,4],25,"
	    "\"sq\",24]");
	e2e_stop();
}

Test(pylayer, class_hierarchies_and_abc_work)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import abc, collections.abc\nclass Base:\n    def __init__(self):\n"
	    "        self.log = ['base']\n    def who(self):\n        return 'base'\n"
	    "    def __init_subclass__(cls, tag='', **kw):\n        "
	    "super().__init_subclass__(**kw)\n"
	    "        cls.tag = tag\nclass Mid(Base, tag='m'):\n    def __init__(self):\n"
	    "        super().__init__()\n        self.log.append('mid')\n    def who(self):\n"
	    "        return 'mid>' + super().who()\nclass Leaf(Mid):\n    def who(self):\n"
	    "        return 'leaf>' + super().who()\n"
	    "class A(abc.ABC):\n    @abc.abstractmethod\n    def f(self): ...\n"
	    "class B(A):\n    def f(self):\n        return 1\n"
	    "class Meta(type):\n    def __new__(m, name, bases, ns):\n        ns['made'] = name\n"
	    "        return super().__new__(m, name, bases, ns)\nclass WithMeta(metaclass=Meta):\n"
	    "    pass\nDyn = type('Dyn', (Leaf,), {'extra': 1})\n"
	    "[Leaf().who(), Leaf().log, Mid.tag, Leaf().__class__.__qualname__, isinstance(B(), "
	    "A),\n"
	    " isinstance([], collections.abc.Sequence), isinstance(5, collections.abc.Hashable),\n"
	    " issubclass(dict, collections.abc.Mapping), WithMeta.made, Dyn().who(), Dyn.extra,\n"
	    " type(Leaf()).__name__]",
	    "[\"leaf>mid>base\",[\"base\",\"mid\"],\"m\",\"Leaf\",true,true,true,true,\"WithMeta\","
	    "\"leaf>mid>base\",1,\"Leaf\"]");
	e2e_expect_error("import abc\nclass A(abc.ABC):\n    @abc.abstractmethod\n"
	                 "    def f(self): ...\nA()",
	                 "TypeError");
	e2e_stop();
}

/* (a module formatted by str.format: its repr's read of the interpreter's import machinery was
 * taken for the code's and refused: V61c L2; the attributes str.format's fields name are read
 * by the rules: a function's __globals__ was read there, and after a NUL in the field's name:
 * V64a H1) */
Test(pylayer, match_and_fstrings_work)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import dataclasses, string\n@dataclasses.dataclass\nclass Point:\n    x: int\n"
	    "    y: int = 0\nclass Pair:\n    __match_args__ = ('a', 'b')\n"
	    "    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
	    "def describe(o):\n    match o:\n        case Point(x=0, y=0):\n"
	    "            return 'origin'\n        case Point(x, y) if x == y:\n"
	    "            return f'diag {x}'\n        case Point(x=x):\n"
	    "            return f'x={x}'\n        case Pair(a, b=2):\n"
	    "            return f'pair {a}'\n        case {'k': v}:\n"
	    "            return f'map {v}'\n        case [a, *rest]:\n"
	    "            return f'seq {a} {len(rest)}'\n        case str() | bytes():\n"
	    "            return 'text'\n        case _:\n            return 'other'\n"
	    "p = Point(3, 4)\n"
	    "def refused(f):\n    try:\n        f()\n    except AttributeError:\n"
	    "        return 'refused'\n"
	    "[describe(Point(0)), describe(Point(2, 2)), describe(Point(3, 1)),\n"
	    " describe(Pair(7, 2)), describe({'k': 1}), describe([1, 2, 3]),\n"
	    " describe('s'), describe(1.5),\n"
	    " f'{p.x} {p.y!r:>3} {p.__class__.__name__} {type(p).__qualname__}',\n"
	    " '{0.x}-{0.y}'.format(p), '{p.x}'.format_map({'p': p}),\n"
	    " '{0} {0!r:>16}'.format(dataclasses), '{m}'.format_map({'m': dataclasses}),\n"
	    " refused(lambda: '{0.__globals__}'.format(describe)),\n"
	    " refused(lambda: '{0:{0.__globals__}}'.format(describe)),\n"
	    " refused(lambda: '{0[\\0].__globals__}'.format({'\\0': describe})),\n"
	    " refused(lambda: string.Formatter().get_field('0[\\0].__code__', [{'\\0': describe}], "
	    "{}))]",
	    "[\"origin\",\"diag 2\",\"x=3\",\"pair 7\",\"map 1\",\"seq 1 2\",\"text\","
	    "\"other\",\"3   4 Point Point\",\"3-4\",\"3\","
	    "\"<module 'dataclasses'> <module 'dataclasses'>\",\"<module 'dataclasses'>\","
	    "\"refused\",\"refused\",\"refused\",\"refused\"]");
	e2e_stop();
}

Test(pylayer, every_form_of_import_works)
{
	e2e_start(NULL);
	/* CPython's message for a missing name ends with the module's file, which the sandbox does
	 * not show. */
	e2e_expect_result(
	    "def f():\n    from json import dumps as d, loads\n    return d(loads('[1]'))\n"
	    "class C:\n    from math import pi\n    import collections.abc as cabc\n"
	    "try:\n    from json import nope\nexcept ImportError as e:\n"
	    "    from json import decoder as dec\n    err = str(e)\nfinally:\n"
	    "    from math import tau\nfor i in range(1):\n    from math import e as euler\n"
	    "match 1:\n    case 1:\n        from math import inf\n"
	    "import json.decoder as jd, math, collections.abc as ca\nimport collections.abc\n"
	    "from json import *\nimport time\n"
	    "[f(), C.pi, C.cabc.Sized.__name__, err, dec is jd, round(tau, 2), round(euler, 2),\n"
	    " inf > 0, ca is collections.abc, dumps([1]), time.strptime('2024-02-03', "
	    "'%Y-%m-%d').tm_mday]",
	    "[\"[1]\",3.141592653589793,\"Sized\",\"cannot import name 'nope' from 'json'\",true,"
	    "6.28,2.72,true,true,\"[1]\",3]");
	e2e_expect_error("from . import x", "ImportError");
	/* A refused module is a ModuleNotFoundError, as a missing one is: the optional-dependency
	 * idiom takes its fallback, and except ImportError still catches it. */
	e2e_expect_result(
	    "try:\n    import pyarrow\n    r = 'imported'\nexcept ModuleNotFoundError as e:\n"
	    "    r = [e.name, isinstance(e, ImportError)]\nr",
	    "[\"pyarrow\",true]");
	e2e_expect_error("import os.path as p", "ModuleNotFoundError");
	e2e_stop();
}

Test(pylayer, a_session_keeps_its_state_and_builtins)
{
	e2e_start(NULL);
	e2e_expect_result("import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n"
	                  "ps = [P(1)]\nlen(ps)",
	                  "1");
	e2e_expect_result("ps.append(P(2))\n[p.x for p in ps]", "[1,2]");
	/* The user's own __builtins__ changes are the user's: they last. */
	e2e_expect_result("__builtins__['double'] = lambda v: 2 * v\ndouble(3)", "6");
	e2e_expect_result("double(4)", "8");
	e2e_stop();
}

/* A name load of __import__ in the user's code names nothing, however it is spelled: the
 * parser folds identifiers to NFKC, so fullwidth letters spell it too. Import statements
 * still work. */
Test(pylayer, the_name_import_is_hidden_however_it_is_spelled)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("__import__('os')", "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "not available"), "%s", mcpc_json(r));
	r = e2e_expect_error("__\xef\xbd\x89\xef\xbd\x8d\xef\xbd\x90\xef\xbd\x8f\xef\xbd\x92"
	                     "\xef\xbd\x94__('math')",
	                     "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "not available"), "%s", mcpc_json(r));
	r = e2e_expect_error("f = __\xef\xbd\x89mport__\nf", "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "not available"), "%s", mcpc_json(r));
	/* A coding declaration is a comment: the code came as text. */
	r = e2e_expect_error("# coding: utf-7\n__+AGk-mport__", "NameError");
	cr_assert(!strstr(mcpc_err_str(r, "message"), "import"), "%s", mcpc_json(r));
	e2e_expect_result("# -*- coding: latin-1 -*-\nx = '\xc3\xa9'\nlen(x)", "1");
	e2e_expect_result("import math\nmath.floor(2.5)", "2");
	/* A module name holding a NUL was read short by the allowlist and by CPython's finder of
	 * its frozen modules alike: a second copy of io began to run (V65a L1). */
	e2e_expect_result("import importlib\nr = []\nfor n in ['io\\0x', 'abc\\0x']:\n"
	                  "    try:\n        importlib.import_module(n)\n"
	                  "    except ModuleNotFoundError as e:\n"
	                  "        r.append('holds no NUL' in str(e))\nr",
	                  "[true,true]");
	e2e_stop();
}

/* What ordinary code uses of sys: the limit CPython's own error for a long int's str tells the
 * user to raise, and the exception being handled. */
Test(pylayer, sys_keeps_what_ordinary_code_uses)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import sys\n"
	    "try:\n    str(10 ** 5000)\n    before = 'converted'\n"
	    "except ValueError as e:\n    before = 'set_int_max_str_digits' in str(e)\n"
	    "sys.set_int_max_str_digits(0)\n"
	    "try:\n    raise KeyError('k')\nexcept KeyError as e:\n"
	    "    t, v, tb = sys.exc_info()\n    same = v is e and sys.exception() is e\n"
	    "[before, len(str(10 ** 5000)), sys.get_int_max_str_digits(), t.__name__, "
	    "same, tb is not None]",
	    "[true,5001,0,\"KeyError\",true,true]");
	/* Deep recursion with the limit raised: the call's own. */
	e2e_expect_result("import sys\n"
	                  "sys.setrecursionlimit(20000)\n"
	                  "def depth(n):\n    return n if n == 0 else 1 + depth(n - 1)\n"
	                  "[sys.getrecursionlimit(), depth(15000)]",
	                  "[20000,15000]");
	e2e_stop();
}

/* help(obj) prints pydoc's text of an object, as CPython's does (a built-in's signature too:
 * inspect read the namespace of the built-in's module for it); a name or a topic is not looked
 * up (pydoc would import the module a name names). */
Test(pylayer, help_prints_an_objects_documentation)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import json\n"
	           "def area(w, h=2):\n    'The area.'\n    return w * h\n"
	           "help(len)\nhelp(area)\nhelp(json.dumps)\n1");
	{
		static const char want[] =
		    "Help on built-in function len in module builtins:\n\nlen(obj, /)\n"
		    "    Return the number of items in a container.\n\n"
		    "Help on function area in module __main__:\n\narea(w, h=2)\n"
		    "    The area.\n\n"
		    "Help on function dumps in module json:\n\ndumps(obj, *, skipkeys=False";
		cr_assert(strncmp(mcpc_sc_str(r, "stdout"), want, strlen(want)) == 0, "%s",
		          mcpc_json(r));
	}
	r = e2e_ok("help('os')\nhelp()");
	cr_assert(strstr(mcpc_sc_str(r, "stdout"), "not of a name or a topic"), "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_sc_str(r, "stdout"), "Help on module os"), "%s", mcpc_json(r));
	e2e_stop();
}

/* input() was a NameError (the builtin is removed: it would read the worker's stdin), and code
 * written for a console calls it. It exists now and raises EOFError, as input() does with
 * nothing to read, saying to put the value in the code; it reads nothing and writes its prompt
 * where print() writes (as CPython's does before it finds no input), so code that catches it
 * goes on with its default and the output shows what was asked. */
Test(pylayer, input_raises_eoferror_saying_to_put_the_value_in_the_code)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("try:\n    name = input('Name: ')\nexcept EOFError as e:\n    why = str(e)\n"
	           "    name = 'Ada'\nprint('hello', name)\n"
	           "[name, 'without a console' in why, 'put the value in the code' in why]");
	e2e_assert_result(r, "input", "[\"Ada\",true,true]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "Name: hello Ada\n", "%s", mcpc_json(r));
	r = e2e_expect_error("x = int(input())", "EOFError");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_json(r), "without a console"), "%s", mcpc_json(r));
	r = e2e_ok("import io, contextlib\nb = io.StringIO()\nwith contextlib.redirect_stdout(b):\n"
	           "    try:\n        input(42)\n    except EOFError:\n        pass\nb.getvalue()");
	e2e_assert_result(r, "input", "\"42\"");
	e2e_expect_error("input('a', 'b')", "TypeError");
	e2e_stop();
}

/* globals(), locals() and vars() were NameErrors (the builtins are removed: called from C under
 * a library's frame they answer that frame's namespace, and a writable namespace of the user's
 * takes keys its statements cannot write), and code written for notebooks asks
 * `'df' not in globals()`. They answer a snapshot of the code's own names now (read-only at the
 * top level, without dunder names); a library calling one as a callback is refused, and
 * vars(object) says what to use instead. */
/* obj.__dict__ and vars(obj), everyday in an assistant's code (self.__dict__.update(kwargs),
 * json.dumps(default=lambda o: o.__dict__), pd.DataFrame([vars(r) for r in rows])), were
 * refused for every object, and a refused attribute anywhere in the program, even in a branch
 * never taken, refused the whole program before it printed anything. An object of a class the
 * code defined on Python classes alone gives its __dict__ (obj.__dict__, vars, getattr and
 * hasattr); any other object's (a module's, a class's, a library's, a function's, one whose
 * class has a built-in base: an exception, a dict) is refused where it is read, and so is
 * any other attribute the rules refuse: what ran before is kept. A __dict__ set or deleted is
 * still refused with the whole program. functools.update_wrapper copies no name the rules
 * refuse into the wrapper's __dict__ (a class's namespace holds its C methods). */
Test(pylayer, an_objects_dict_is_its_own_and_refusals_happen_where_they_run)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result(
	    "import json, dataclasses, functools\n"
	    "class Rec:\n"
	    "    def __init__(self, **kw):\n"
	    "        self.__dict__.update(kw)\n"
	    "    def __eq__(self, other):\n"
	    "        return self.__dict__ == other.__dict__\n"
	    "@dataclasses.dataclass\n"
	    "class P:\n"
	    "    x: int\n"
	    "class E(Exception):\n"
	    "    pass\n"
	    "e = E('m')\n"
	    "e.code = 3\n"
	    "a = Rec(a=1, b=[2])\n"
	    "a.__dict__['c'] = 3\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'Forbidden' in str(e) else str(e)\n"
	    "class O:\n"
	    "    pass\n"
	    "o = O()\n"
	    "functools.update_wrapper(o, functools.partial, assigned=(), updated=('__dict__',))\n"
	    "[vars(a), a == Rec(a=1, b=[2], c=3), json.dumps(a, default=lambda o: o.__dict__),\n"
	    " vars(P(3)), t(lambda: vars(e)), getattr(a, '__dict__') is vars(a),\n"
	    " hasattr(a, '__dict__'),\n"
	    " hasattr(json, '__dict__'), t(lambda: json.__dict__), t(lambda: vars(Rec)),\n"
	    " t(lambda: json.JSONEncoder().__dict__), t(lambda: vars(t)), t(lambda: vars(3)),\n"
	    " t(lambda: (1).__class__.__mro__), sorted(vars(o))]",
	    "[{\"a\":1,\"b\":[2],\"c\":3},true,\"{\\\"a\\\": 1, \\\"b\\\": [2], \\\"c\\\": 3}\","
	    "{\"x\":3},\"refused\",true,true,false,\"refused\",\"refused\",\"refused\","
	    "\"refused\",\"refused\",\"refused\",[\"__doc__\",\"__module__\",\"__wrapped__\","
	    "\"args\",\"func\",\"keywords\"]]");
	/* A refusal in a branch never taken refuses nothing; one that runs is raised there, after
	 * what the code printed. */
	e2e_expect_result("debug = False\n"
	                  "print('before')\n"
	                  "if debug:\n"
	                  "    print(int.__subclasses__())\n"
	                  "'ran'",
	                  "\"ran\"");
	r = e2e_expect_error("print('before')\nint.__subclasses__()", "AttributeError");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "before\n", "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "message"), "__subclasses__"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "traceback"), "line 2"), "%s", mcpc_json(r));
	/* Setting or deleting a __dict__ is refused with the whole program, as before. */
	r = e2e_expect_error("print('before')\nclass A:\n    pass\nA().__dict__ = {}",
	                     "AttributeError");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "", "%s", mcpc_json(r));
	e2e_stop();
}

/* functools.update_wrapper reads and writes '__dict__' as vars() does: assigned=('__dict__',)
 * handed the code a built-in object's own dict (a FileIO's: a readinto planted there was given
 * the reader's buffer, used after the reader freed it: V66b H1), and updated=('__dict__',)
 * filled one. The code's own objects' dicts are copied as before. The build before plants
 * both. */
Test(pylayer, update_wrapper_shares_only_the_dicts_vars_shows)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import functools\n"
	    "class W:\n"
	    "    pass\n"
	    "w, src = W(), W()\n"
	    "src.k = 1\n"
	    "e = ValueError('x')\n"
	    "functools.update_wrapper(w, e, assigned=('__dict__',), updated=())\n"
	    "vars(w)['planted'] = 1\n"
	    "try:\n"
	    "    functools.update_wrapper(e, src, assigned=(), updated=('__dict__',))\n"
	    "    r = 'updated'\n"
	    "except AttributeError:\n"
	    "    r = 'refused'\n"
	    "g = functools.update_wrapper(W(), src, assigned=('__dict__',), updated=())\n"
	    "[hasattr(e, 'planted'), r, hasattr(e, 'k'), vars(g) is vars(src), g.k]\n",
	    "[false,\"refused\",false,true,1]");
	e2e_stop();
}

/* update_wrapper reads '__wrapped__' by the rules too: named in assigned=, or a key of the dict
 * updated= copies (a library's wrapper keeps its function there), it handed the function the
 * rules refuse (a library's wrapped function: numpy's matrix.__getitem__ beneath the sandbox's,
 * in data mode) to the wrapper's own __setattr__ (V70b L1). The build before hands it both
 * ways: ('__wrapped__', False, ...) first, and the last set finds it in the wrapper's dict. */
Test(pylayer, update_wrapper_hands_out_no_wrapped_function)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import functools, dataclasses\n"
	    "f = dataclasses.Field.__repr__\n"
	    "got, seen = [], []\n"
	    "class W:\n"
	    "    def __setattr__(self, k, v):\n"
	    "        got.append((k, v is f, [x is f for x in vars(self).values() if "
	    "callable(x)]))\n"
	    "        object.__setattr__(self, k, v)\n"
	    "try:\n"
	    "    functools.update_wrapper(W(), f, assigned=('__wrapped__',), updated=())\n"
	    "    seen.append('assigned')\n"
	    "except AttributeError as e:\n"
	    "    seen.append(str(e))\n"
	    "w = functools.update_wrapper(W(), f)\n"
	    "def g(x):\n"
	    "    return x\n"
	    "h = functools.wraps(g)(lambda x: x + 1)\n"
	    "[seen, got, w.__name__, h.__name__, h(1)]\n",
	    "[[\"Forbidden access to dunder attribute: __wrapped__\"],"
	    "[[\"__module__\",false,[]],[\"__name__\",false,[]],[\"__qualname__\",false,[]],"
	    "[\"__doc__\",false,[]],[\"__annotations__\",false,[]],[\"__wrapped__\",true,[]]],"
	    "\"__repr__\",\"g\",2]");
	e2e_stop();
}

/* copy sets no attribute of a built-in object whose class has no __setstate__ (its own dict
 * past its class's setattr: a FileIO's readinto planted by a reduce was handed the buffered
 * reader's buffer, used after it was freed: V67b H1), whether the state answers true or not (a
 * mapping that answers empty: V68b H1); a SimpleNamespace copies as before. The builds before
 * plant it. */
Test(pylayer, copy_sets_no_attribute_of_a_built_in_object)
{
	e2e_start(NULL);
	e2e_expect_result("import copy, io, types\n"
	                  "class Empty(dict):\n"
	                  "    def __len__(self):\n"
	                  "        return 0\n"
	                  "def attempt(state):\n"
	                  "    class R:\n"
	                  "        def __reduce_ex__(self, proto):\n"
	                  "            return (io.TextIOWrapper, (io.BytesIO(),), state)\n"
	                  "    try:\n"
	                  "        y = copy.copy(R())\n"
	                  "        return ['copied', hasattr(y, 'planted')]\n"
	                  "    except TypeError as e:\n"
	                  "        return ['refused', 'no __setstate__' in str(e)]\n"
	                  "[attempt({'planted': 1}), attempt(Empty(planted=1)), "
	                  "attempt(({'planted': 1}, None)),\n"
	                  " copy.copy(types.SimpleNamespace(a=1)).a]\n",
	                  "[[\"refused\",true],[\"refused\",true],[\"refused\",true],1]");
	e2e_stop();
}

/* Duck typing asks hasattr(x, '__array__'), hasattr(f, '__wrapped__'): a name the code may not
 * read raised the refusal out of hasattr. hasattr answers whether the object has it, found in
 * its class's and its own dictionaries without reading it (no getter, no __getattr__ run); the
 * value stays refused (a read, getattr with a default). */
Test(pylayer, hasattr_tells_of_a_refused_name_without_reading_it)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import functools\n"
	    "log = []\n"
	    "class A:\n"
	    "    pass\n"
	    "def f():\n"
	    "    pass\n"
	    "class G:\n"
	    "    def __getattr__(self, n):\n"
	    "        log.append(n)\n"
	    "        return 1\n"
	    "class P:\n"
	    "    __weird__ = property(lambda self: log.append('read'))\n"
	    "def t(g):\n"
	    "    try:\n"
	    "        return g()\n"
	    "    except AttributeError as e:\n"
	    "        return 'refused' if 'Forbidden' in str(e) else str(e)\n"
	    "w = functools.wraps(f)(lambda: 0)\n"
	    "[hasattr(f, '__code__'), hasattr(A(), '__code__'), hasattr(A, '__mro__'), hasattr(w, "
	    "'__wrapped__'),\n"
	    " hasattr(f, '__wrapped__'), hasattr(G(), '__code__'), hasattr(P(), '__weird__'), "
	    "log,\n"
	    " t(lambda: f.__code__), t(lambda: getattr(f, '__code__', None)), t(lambda: "
	    "P().__weird__)]",
	    "[true,false,true,true,false,false,true,[],\"refused\",\"refused\",\"refused\"]");
	/* object's array interface names answer nothing for any object: not had (they were said
	 * to be had by everything) */
	e2e_expect_result("[hasattr(A(), '__array_interface__'), hasattr(1, '__array_struct__'),\n"
	                  " hasattr(A, '__array_interface__'), hasattr(type, '__array_struct__')]",
	                  "[false,false,false,false]");
	/* nor listed by dir(), whose other names are CPython's */
	e2e_expect_result(
	    "[[n for n in dir(A()) + dir([]) + dir(1) if 'array' in n],\n"
	    " 'append' in dir([]), dir(A()) == sorted(dir(A())), '__init__' in dir(A)]",
	    "[[],true,true,true]");
	/* a getattr with a default answers as hasattr: the default for a refused name not had
	 * (a __getattr__ of the code's not run), the refusal for one had */
	e2e_expect_result(
	    "[getattr(A(), '__array_interface__', 'd'), getattr(A(), '__zz__', 'd'),\n"
	    " getattr(G(), '__code__', 'd'), log, t(lambda: getattr(f, '__globals__', 1)),\n"
	    " t(lambda: getattr(A, '__subclasses__', 1))]",
	    "[\"d\",\"d\",\"d\",[],\"refused\",\"refused\"]");
	e2e_stop();
}

/* A module of the default imports re-exports a class of one only a workspace adds (json.tool's
 * Path is pathlib's): not handed on without a workspace (V57b L2). */
Test(pylayer, the_workspaces_modules_are_not_handed_on_without_one)
{
	e2e_start(NULL);
	e2e_expect_result("import json.tool\n"
	                  "try:\n"
	                  "    json.tool.Path\n"
	                  "    r = 'given'\n"
	                  "except AttributeError as e:\n"
	                  "    r = 'pathlib' in str(e)\n"
	                  "[r, callable(json.tool.main)]",
	                  "[true,true]");
	e2e_stop();
}

Test(pylayer, globals_and_locals_answer_a_snapshot_of_the_codes_own_names)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import dataclasses\n"
	    "x = 1\n"
	    "r = ['x' in globals(), 'df' not in globals(), globals()['x'], '__builtins__' in "
	    "globals(), sorted(k for k in globals() if not k.startswith('_'))[:3]]\n"
	    "try:\n"
	    "    globals()['y'] = 2\n"
	    "except TypeError as e:\n"
	    "    r.append('TypeError')\n"
	    "def f(a, b=2):\n"
	    "    c = a + b\n"
	    "    return locals()\n"
	    "r.append(f(1))\n"
	    "r.append(vars() == globals())\n"
	    "try:\n"
	    "    vars(f)\n"
	    "except AttributeError as e:\n"
	    "    r.append(str(e)[:40])\n"
	    "@dataclasses.dataclass\n"
	    "class D:\n"
	    "    g: object = dataclasses.field(default_factory=globals)\n"
	    "try:\n"
	    "    D()\n"
	    "    r.append('lib got names')\n"
	    "except RuntimeError as e:\n"
	    "    r.append(str(e))\n"
	    "r\n"
	    "import contextlib\n"
	    "try:\n"
	    "    with contextlib.ExitStack() as st:\n"
	    "        st.callback(globals)\n"
	    "    r.append('lib got names')\n"
	    "except RuntimeError as e:\n"
	    "    r.append(str(e))\n"
	    "r",
	    "[true,true,1,false,[\"dataclasses\",\"x\"],\"TypeError\",{\"a\":1,\"b\":2,\"c\":3},"
	    "true,\"Forbidden access to dunder attribute: __\",\"lib got names\",\"globals() "
	    "answers the code's own names, not those of a library calling it\"]");
	e2e_stop();
}

/* platform's facts and the "is it installed" checks (importlib.import_module,
 * importlib.util.find_spec, importlib.metadata.version) were refused imports. They answer as
 * the sandbox's own import does: the module "import name" gives, None or PackageNotFoundError
 * where it refuses; nothing of the real importlib (its loaders read any file) is reached. */
Test(pylayer, platform_and_importlib_answer_as_the_sandbox_imports)
{
	e2e_start(NULL);
	e2e_expect_result("import platform, sys\n"
	                  "[platform.python_version() == '%d.%d.%d' % sys.version_info[:3],\n"
	                  " platform.python_implementation(), platform.system(), platform.node(),\n"
	                  " platform.uname().system, platform.machine() != '',\n"
	                  " platform.platform().startswith('Linux-')]",
	                  "[true,\"CPython\",\"Linux\",\"\",\"Linux\",true,true]");
	e2e_expect_result(
	    "import importlib, importlib.util, importlib.metadata, json, collections.abc, yaml\n"
	    "m = importlib.metadata\n"
	    "def version(d):\n"
	    "    try:\n"
	    "        return m.version(d)\n"
	    "    except m.PackageNotFoundError as e:\n"
	    "        return [isinstance(e, ModuleNotFoundError), str(e)]\n"
	    "[importlib.import_module('json') is json,\n"
	    " importlib.import_module('collections.abc') is collections.abc,\n"
	    " importlib.util.find_spec('json').name, importlib.util.find_spec('os'),\n"
	    " importlib.util.find_spec('numpy'), importlib.util.find_spec('no_such_thing'),\n"
	    " version('numpy'), version('json'), m.version('PyYAML') == yaml.__version__]",
	    "[true,true,\"json\",null,null,null,"
	    "[true,\"No package metadata was found for numpy\"],"
	    "[true,\"No package metadata was found for json\"],true]");
	/* Nothing beyond: the real importlib's submodules, names and import stay out of reach. */
	e2e_expect_result(
	    "import importlib\n"
	    "out = []\n"
	    "class S(str):\n"
	    "    pass\n"
	    "for name in ['importlib.machinery', 'importlib._bootstrap', 'importlib.abc',\n"
	    "             'importlib.resources', 'posix', 'os', 'builtins', S('json')]:\n"
	    "    try:\n"
	    "        importlib.import_module(name)\n"
	    "        out.append('imported ' + name)\n"
	    "    except (ImportError, TypeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "for name in ['machinery', '_bootstrap', 'abc', 'find_loader', '__import__', 'sys',\n"
	    "             '_bootstrap_external']:\n"
	    "    try:\n"
	    "        getattr(importlib, name)\n"
	    "        out.append('got ' + name)\n"
	    "    except AttributeError:\n"
	    "        out.append('-')\n"
	    "try:\n"
	    "    from importlib import machinery\n"
	    "    out.append('from-imported machinery')\n"
	    "except ImportError:\n"
	    "    out.append('ImportError')\n"
	    "try:\n"
	    "    importlib.reload(importlib)\n"
	    "except ImportError:\n"
	    "    out.append('not reloaded')\n"
	    "out",
	    "[\"ModuleNotFoundError\",\"ModuleNotFoundError\",\"ModuleNotFoundError\","
	    "\"ModuleNotFoundError\",\"ModuleNotFoundError\",\"ModuleNotFoundError\","
	    "\"ModuleNotFoundError\",\"imported "
	    "json\",\"-\",\"-\",\"-\",\"-\",\"-\",\"-\",\"-"
	    "\","
	    "\"ImportError\",\"not reloaded\"]");
	e2e_expect_error("import importlib.machinery", "ModuleNotFoundError");
	e2e_stop();
}

/* sys's view has what scripts read at their start: -W options (none, a list of the view's own),
 * the file system's encoding, the interpreter's flags. */
Test(pylayer, sys_has_what_scripts_read_at_their_start)
{
	e2e_start(NULL);
	e2e_expect_result("import sys, warnings\n"
	                  "out = [sys.warnoptions, sys.getfilesystemencoding(),\n"
	                  "       sys.getfilesystemencodeerrors(), sys.flags.optimize,\n"
	                  "       sys.flags.utf8_mode]\n"
	                  "if not sys.warnoptions:\n"
	                  "    warnings.simplefilter('ignore')\n"
	                  "    out.append('filtered')\n"
	                  "out",
	                  "[[],\"utf-8\",\"surrogateescape\",0,1,\"filtered\"]");
	e2e_stop();
}

/* argparse was refused (its parse_args sets each destination by name, on the namespace it is
 * given). It parses what scripts hand it: vars() of its Namespace gives the values; a library
 * class as the namespace is refused by the guard every library's write meets, and left
 * unchanged; FileType's '-' reads an empty standard input (it was the worker's fd 0: the
 * sandbox ended the call), a path none without a workspace. sys.argv set or changed by the
 * code is what parse_args() reads (the view's list was its own: ignored without a word). */
Test(pylayer, argparse_parses_what_scripts_hand_it)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result("import argparse, collections\n"
	                  "p = argparse.ArgumentParser(description='demo')\n"
	                  "p.add_argument('--n', type=int, default=3)\n"
	                  "p.add_argument('--flag', action='store_true')\n"
	                  "p.add_argument('name', nargs='?', default='x')\n"
	                  "a = p.parse_args(['--n', '5', '--flag', 'bob'])\n"
	                  "out = [vars(a), vars(p.parse_args()), 'usage:' in p.format_help()]\n"
	                  "import sys\n"
	                  "out.append(sys.argv)\n"
	                  "sys.argv = ['job.py', '--n', '7']\n"
	                  "out.append(p.parse_args().n)\n"
	                  "sys.argv[1:] = ['--n', '8', 'ann']\n"
	                  "out.append(vars(p.parse_args()))\n"
	                  "sys.argv = ['']\n"
	                  "try:\n"
	                  "    p.parse_args(['--n', '1'], namespace=collections.OrderedDict)\n"
	                  "except PermissionError:\n"
	                  "    out.append('refused')\n"
	                  "out.append(hasattr(collections.OrderedDict, 'n'))\n"
	                  "out.append(argparse.FileType('r')('-').read())\n"
	                  "try:\n"
	                  "    argparse.FileType('r')('/etc/hostname')\n"
	                  "except argparse.ArgumentTypeError:\n"
	                  "    out.append('no file')\n"
	                  "try:\n"
	                  "    vars(p)\n"
	                  "except AttributeError:\n"
	                  "    out.append('parser refused')\n"
	                  "out",
	                  "[{\"n\":5,\"flag\":true,\"name\":\"bob\"},{\"n\":3,\"flag\":false,"
	                  "\"name\":\"x\"},true,[\"\"],7,{\"n\":8,\"flag\":false,\"name\":\"ann\"},"
	                  "\"refused\",false,\"\",\"no file\",\"parser refused\"]");
	r = e2e_expect_error("import argparse\np = argparse.ArgumentParser()\n"
	                     "p.add_argument('--n', type=int)\np.parse_args(['--n', 'x'])",
	                     "SystemExit");
	cr_assert(strstr(mcpc_sc_str(r, "stderr"), "error: argument --n: invalid int value: 'x'"),
	          "%s", mcpc_json(r));
	/* As CPython prints it: SystemExit's line, none of the parser's frames or the exceptions
	 * it handled on the way. */
	cr_assert_str_eq(mcpc_err_str(r, "traceback"), "SystemExit: 2\n", "%s", mcpc_json(r));
	e2e_stop();
}

/* timeit was refused: it compiles its statements from text. It times callables, as its
 * functions and Timer do; a statement as text is refused saying how to pass a callable. */
/* The collector runs during a call, though never inside an allocation (test_escapes): cyclic
 * garbage far beyond the memory limit is collected as the code makes it, finalizers run, and
 * gc's switch is the code's (timeit turns it off while it times, and back on). */
Test(pylayer, cyclic_garbage_is_collected_while_a_call_runs)
{
	e2e_start(NULL);
	e2e_expect_result("import gc, timeit\nfin = []\n"
	                  "class C:\n    def __del__(self):\n        fin.append(1)\n"
	                  "for i in range(20000):\n"
	                  "    a = C(); a.me = a; a.buf = bytearray(1 << 17)\n"
	                  "ran = len(fin) > 0\n"
	                  "gc.disable()\nn = len(fin)\n"
	                  "for i in range(20000):\n    a = C(); a.me = a\n"
	                  "off = [gc.isenabled(), len(fin) == n]\n"
	                  "gc.enable()\ntimeit.timeit(lambda: 1, number=5)\n"
	                  "[ran, off, gc.isenabled(), gc.collect() > 0, gc.get_threshold()]",
	                  "[true,[false,true],true,true,[700,10,10]]");
	e2e_stop();
}

/* Finalizers wait until the user's own code runs again (worker/pyreentry.c), their objects
 * alive meanwhile: a cycle with a __del__ that a collection found survived it, into an older
 * generation, and was freed (and counted by gc.collect()) only by a later one. Found from the
 * user's frame, such finalizers run there and then, and the collection goes on to free the
 * cycles: gc.collect() frees and counts them as CPython does. */
Test(pylayer, a_cycle_with_a_finalizer_is_freed_by_the_collection_that_finds_it)
{
	e2e_start(NULL);
	e2e_expect_result("import gc\nfin = []\n"
	                  "class C:\n    def __del__(self):\n        fin.append(1)\n"
	                  "class D:\n    pass\n"
	                  "x = C(); x.me = x; del x\n"
	                  "a = gc.collect()\n"
	                  "y = C(); y.me = y; del y\nb = gc.collect()\n"
	                  "z = D(); z.me = z; del z\n"
	                  "[a, b, gc.collect(), len(fin)]",
	                  "[1,1,1,2]");
	e2e_stop();
}

/* A thread the code starts makes its garbage while the main thread waits for it, in a join or
 * in time.sleep: the collector's tick goes to the main thread, which collects in its wait (the
 * garbage is five times the memory limit). time.sleep takes what it took before. (Cycles with
 * finalizers wait for the user's code: finalizers do not run in threading's frames.) */
Test(pylayer, cyclic_garbage_a_thread_makes_is_collected_while_the_main_thread_waits)
{
	e2e_start(ARGS("--allow-import", "threading"));
	e2e_expect_result("import threading, time\nclass C:\n    pass\n"
	                  "def work(out):\n    try:\n        for i in range(20000):\n"
	                  "            a = C(); a.me = a; a.buf = bytearray(1 << 17)\n"
	                  "        out.append('done')\n    except MemoryError:\n"
	                  "        out.append('MemoryError')\n"
	                  "joined, slept = [], []\n"
	                  "t = threading.Thread(target=work, args=(joined,))\nt.start(); t.join()\n"
	                  "t = threading.Thread(target=work, args=(slept,))\nt.start()\n"
	                  "time.sleep(4); t.join()\n"
	                  "class I:\n    def __index__(self):\n        return 0\n"
	                  "time.sleep(I())\ntry:\n    time.sleep('1')\nexcept TypeError as e:\n"
	                  "    err = str(e)\n[joined, slept, err]",
	                  "[[\"done\"],[\"done\"],\"'str' object cannot be interpreted as an "
	                  "integer\"]");
	e2e_stop();
}

/* contextlib.redirect_stdout and redirect_stderr set the real sys's streams, which print()
 * follows: the code's sys view kept its own, so sys.stdout.write and print(file=sys.stdout) in
 * the block went to the call's output, and `sys.stdout is buf` was False. The view's streams
 * are the real sys's; assigning them works as before. help() and display() write to sys.stdout
 * too, as print() does. */
Test(pylayer, streams_redirected_by_contextlib_are_the_code_s_sys_streams)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import contextlib, io, sys\n"
	           "buf, eb = io.StringIO(), io.StringIO()\n"
	           "with contextlib.redirect_stdout(buf):\n"
	           "    sys.stdout.write('x\\n'); print('y', file=sys.stdout)\n"
	           "    same = sys.stdout is buf\n"
	           "    help(len); display([1, 2])\n"
	           "with contextlib.redirect_stderr(eb):\n"
	           "    print('e', file=sys.stderr)\n"
	           "    import traceback\n"
	           "    try:\n        1 / 0\n    except ZeroDivisionError:\n"
	           "        traceback.print_exc()\n"
	           "print('after')\n"
	           "sys.stdout = io.StringIO()\nprint('hidden')\nh = sys.stdout.getvalue()\n"
	           "sys.stdout = sys.__stdout__\n"
	           "lines = buf.getvalue().splitlines()\n"
	           "[lines[:2] + lines[-1:], same, eb.getvalue().splitlines()[::5], h,\n"
	           " sys.stdout is sys.__stdout__]");
	e2e_assert_result(
	    r, "streams",
	    "[[\"x\",\"y\",\"[1, 2]\"],true,[\"e\",\"ZeroDivisionError: division by zero\"],"
	    "\"hidden\\n\",true]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "after\n", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "", "%s", mcpc_json(r));
	e2e_stop();
}

/* An exception's notes (add_note) are read as CPython gives them (__notes__, a list in the
 * exception's own dict) and printed after its line, in traceback.format_exception and in the
 * call's own error: a hint a library or the code added reaches whoever reads the error. */
Test(pylayer, exception_notes_are_read_and_shown)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_call("import traceback\n"
	             "e = ValueError('x'); e.add_note('a note')\n"
	             "try:\n    raise e\nexcept ValueError as ee:\n"
	             "    print([ee.__notes__, getattr(ee, '__notes__', []),\n"
	             "           traceback.format_exception(ee)[-2:]])\n"
	             "class N:\n    def __str__(self): return 'an object note'\n"
	             "e2 = ValueError('bad value')\n"
	             "e2.add_note('hint: check the decimal separator')\n"
	             "e2.__notes__.append(N())\n"
	             "raise e2",
	             NULL);
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"),
	                 "[['a note'], ['a note'], ['ValueError: x\\n', 'a note\\n']]\n", "%s",
	                 mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "traceback"),
	                 "ValueError: bad value\nhint: check the decimal separator\nan object "
	                 "note\n"),
	          "%s", mcpc_json(r));
	/* Notes that are not a list or tuple itself are not printed: a list subclass whose
	 * __iter__ deleted __notes__ had the copy ask the freed list its __len__ (V83a H2). */
	e2e_expect_result(
	    "import traceback\nseen = []\n"
	    "class Notes(list):\n"
	    "    def __iter__(self):\n"
	    "        del e.__notes__\n        return iter(['a note'])\n"
	    "    def __len__(self):\n        seen.append(id(self))\n        return 0\n"
	    "e = ValueError('boom')\ne.__notes__ = Notes()\n"
	    "[traceback.format_exception(e), seen]",
	    "[[\"ValueError: boom\\n\"],[]]");
	e2e_stop();
}

/* An exception group's sub-exceptions are shown below it, nested and numbered as CPython shows
 * them (asyncio's TaskGroup raises one: its line alone hid every task's error), in the call's
 * error and in the traceback module's text; a group holding the same group over and over is
 * shown within a bound of sub-exceptions (15 of each, 10 deep, 1000 in all), not walked
 * 15**12 times. */
Test(pylayer, exception_groups_show_their_sub_exceptions)
{
	json_object *r;
	const char *tb;

	e2e_start(NULL);
	r = e2e_call("import asyncio\n"
	             "async def job(i):\n    raise ValueError(f'job {i} failed')\n"
	             "async def main():\n"
	             "    async with asyncio.TaskGroup() as tg:\n"
	             "        for i in range(2):\n            tg.create_task(job(i))\n"
	             "asyncio.run(main())",
	             NULL);
	tb = mcpc_err_str(r, "traceback");
	cr_assert(strstr(tb, "  + Exception Group Traceback (most recent call last):\n") &&
	              strstr(tb, "  | ExceptionGroup: unhandled errors in a TaskGroup (2 "
	                         "sub-exceptions)\n  +-+---------------- 1 ----------------\n"
	                         "    | Traceback (most recent call last):\n") &&
	              strstr(tb, "    |     raise ValueError(f'job {i} failed')\n"
	                         "    | ValueError: job 0 failed\n"
	                         "    +---------------- 2 ----------------\n") &&
	              strstr(tb, "    | ValueError: job 1 failed\n"
	                         "    +------------------------------------\n"),
	          "%s", mcpc_json(r));
	e2e_expect_result(
	    "import traceback\n"
	    "g = ExceptionGroup('outer', [KeyError('k'), ExceptionGroup('in', [TypeError('t')]),\n"
	    "                             *[OSError(i) for i in range(14)]])\n"
	    "lines = ''.join(traceback.format_exception(g)).splitlines()\n"
	    "[lines[:8], lines[-3:]]",
	    "[[\"  | ExceptionGroup: outer (16 sub-exceptions)\","
	    "\"  +-+---------------- 1 ----------------\",\"    | KeyError: 'k'\","
	    "\"    +---------------- 2 ----------------\","
	    "\"    | ExceptionGroup: in (1 sub-exception)\","
	    "\"    +-+---------------- 1 ----------------\",\"      | TypeError: t\","
	    "\"      +------------------------------------\"],"
	    "[\"    +---------------- ... ----------------\",\"    | and 1 more exception\","
	    "\"    +------------------------------------\"]]");
	r = e2e_ok("import traceback\n"
	           "g = ExceptionGroup('leaf', [ValueError('v')] * 15)\n"
	           "for _ in range(12):\n    g = ExceptionGroup('g', [g] * 15)\n"
	           "text = ''.join(traceback.format_exception(g))\n"
	           "[text.count('ValueError: v'), 'max_group_depth is 10' in text,\n"
	           " text.count('more sub-exceptions than are shown') > 0]");
	e2e_assert_result(r, "bounded", "[0,true,true]");
	/* An exception already shown is not shown again as a cause or context: a group whose
	 * member's context is the group was printed down to max_group_depth; a context cycle
	 * shows each once. */
	e2e_expect_result(
	    "import traceback\n"
	    "g = ExceptionGroup('inner', [ValueError(1)])\n"
	    "g2 = ExceptionGroup('outer', [g])\n"
	    "g.__context__ = g2\n"
	    "a, b = ValueError('a'), KeyError('b')\n"
	    "a.__context__, b.__context__ = b, a\n"
	    "[''.join(traceback.format_exception(g2)), ''.join(traceback.format_exception(a))]",
	    "[\"  | ExceptionGroup: outer (1 sub-exception)\\n  +-+---------------- 1 "
	    "----------------\\n    | ExceptionGroup: inner (1 sub-exception)\\n    "
	    "+-+---------------- 1 ----------------\\n      | ValueError: 1\\n      "
	    "+------------------------------------\\n\",\"KeyError: 'b'\\n\\nDuring handling of "
	    "the above exception, another exception occurred:\\n\\nValueError: a\\n\"]");
	e2e_stop();
}

/* A SimpleNamespace's and a log record's attributes are read all at once as their __dict__
 * (vars(ns); a JSON log formatter's record.__dict__, whose refusal inside logging lost the log
 * lines); the code's own exception's is still refused (a built-in class beneath). */
Test(pylayer, a_namespace_s_and_a_log_record_s_dict_are_shown)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import types, logging, json, sys\n"
	           "ns = types.SimpleNamespace(a=1, b='x')\nns.c = [1]\n"
	           "d = vars(ns)\nd['e'] = 2\n"
	           "class JsonFormatter(logging.Formatter):\n"
	           "    def format(self, record):\n"
	           "        return json.dumps({k: v for k, v in record.__dict__.items()\n"
	           "                           if k in ('msg', 'levelname', 'user')})\n"
	           "h = logging.StreamHandler(sys.stdout)\nh.setFormatter(JsonFormatter())\n"
	           "log = logging.getLogger('app')\nlog.addHandler(h)\nlog.setLevel(logging.INFO)\n"
	           "log.info('hello', extra={'user': 'ann'})\n"
	           "class E(Exception):\n    pass\n"
	           "try:\n    v = vars(E('x'))\nexcept AttributeError:\n    v = 'refused'\n"
	           "[d, ns.__dict__ is d, ns.e, v, repr(ns)]");
	e2e_assert_result(r, "dicts",
	                  "[{\"a\":1,\"b\":\"x\",\"c\":[1],\"e\":2},true,2,\"refused\","
	                  "\"namespace(a=1, b='x', c=[1], e=2)\"]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"),
	                 "{\"msg\": \"hello\", \"levelname\": \"INFO\", \"user\": \"ann\"}\n", "%s",
	                 mcpc_json(r));
	e2e_stop();
}

/* Notebook commands (%matplotlib inline, !pip install x) on lines the parser refuses are
 * skipped, with a note; a timing command's statement runs; valid Python (a % at a continued
 * line's start, a string's line) is never touched. */
Test(pylayer, notebook_commands_are_skipped_with_a_note)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("%matplotlib inline\n!pip install polars\n%time x = sum(range(10))\n"
	           "s = '''\n%s stays\n'''\nif x:\n    %timeit y = 2\n[x, y, s]");
	e2e_assert_result(r, "notebook commands", "[45,2,\"\\n%s stays\\n\"]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "[line 1: %matplotlib inline is a notebook command, not Python: skipped]\n"
	                 "[line 2: !pip install polars is a notebook command, not Python: skipped "
	                 "(packages cannot be installed in the sandbox)]\n"
	                 "[line 8: %timeit times an expression in a loop; this statement is not "
	                 "one, so it ran once, timed as %time does]\n",
	                 "%s", mcpc_json(r));
	e2e_expect_result("x = (5\n%2)\nx", "1");
	e2e_expect_error("x = 1 +\n%time y", "SyntaxError");
	e2e_stop();
}

/* Does text match the extended regular expression re (the whole text, when re says ^...$)? */
static int matches(const char *text, const char *re)
{
	regex_t rx;
	int rc;

	cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "pattern %s", re);
	rc = regexec(&rx, text, 0, NULL, 0);
	regfree(&rx);
	return rc == 0;
}

/* A time as a notebook writes it (3 significant digits and a unit). */
#define NB_TIME "[0-9.]+ (s|ms|\xc2\xb5s|ns)"
/* %timeit's note when one run took much longer than another */
#define NB_SLOWEST                                                                                 \
	"(The slowest run took [0-9.]+ times longer than the fastest\\. This could mean that an "  \
	"intermediate result is being cached\\.\n)?"
#define NB_TIMES                                                                                   \
	"CPU times: user " NB_TIME ", sys: " NB_TIME ", total: " NB_TIME "\nWall time: " NB_TIME   \
	"\n"

/* %time and %timeit lines, and a %%time cell, time their statement as a notebook does: the
 * times on stdout as it prints them, the statement's effects and value as without the command
 * (the last line's value is the result), its function called as many times as the loops and
 * runs say, a failure marked under the statement where it is written. A command that cannot
 * be timed says so. */
Test(pylayer, notebook_timing_commands_print_their_times)
{
	json_object *r;
	const char *out;

	e2e_start(NULL);
	r = e2e_ok("calls = []\n"
	           "def f(n):\n"
	           "    calls.append(n)\n"
	           "    return sum(range(n))\n"
	           "%time x = f(1000)\n"
	           "%timeit -n 3 -r 2 f(10)  # six calls\n"
	           "%time [x, len(calls), f(5)]");
	e2e_assert_result(r, "timed", "[499500,7,10]");
	out = mcpc_sc_str(r, "stdout");
	cr_assert(
	    matches(out,
	            "^" NB_TIMES NB_SLOWEST NB_TIME " \xc2\xb1 " NB_TIME
	            " per loop \\(mean \xc2\xb1 std\\. dev\\. of 2 runs, 3 loops each\\)\n" NB_TIMES
	            "$"),
	    "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "", "%s", mcpc_json(r));
	/* its own number of loops: a power of ten, its thousands separated */
	r = e2e_ok("%timeit -r 1 sum(range(10))");
	cr_assert(matches(mcpc_sc_str(r, "stdout"),
	                  "^" NB_SLOWEST NB_TIME " \xc2\xb1 " NB_TIME
	                  " per loop \\(mean \xc2\xb1 std\\. dev\\. of "
	                  "1 run, 1(0|00|,000|0,000|00,000|,000,000|0,000,000)? loops? each\\)\n$"),
	          "%s", mcpc_json(r));
	/* a cell: its output, then its times; its value the result */
	r = e2e_ok("%%time\nt = 0\nfor i in range(1000):\n    t += i\nprint('done')\nt");
	e2e_assert_result(r, "cell", "499500");
	cr_assert(matches(mcpc_sc_str(r, "stdout"), "^done\n" NB_TIMES "$"), "%s", mcpc_json(r));
	/* a failure: no times, the marks under the statement as written */
	r = e2e_expect_error("d = 0\n%time y = 1 / d", "ZeroDivisionError");
	cr_assert(
	    strstr(mcpc_err_str(r, "traceback"), "    %time y = 1 / d\n              ~~^~~\n"),
	    "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "", "%s", mcpc_json(r));
	r = e2e_expect_error("%timeit -n 1 -r 1 f(None)", "TypeError");
	cr_assert(strstr(mcpc_err_str(r, "traceback"),
	                 "    %timeit -n 1 -r 1 f(None)\n                      ^^^^^^^\n"),
	          "%s", mcpc_json(r));
	/* a block's statement runs untimed; an option %timeit does not know skips the line */
	r = e2e_ok("calls.clear()\n%time for i in range(3): calls.append(i)\n"
	           "%timeit -z f(1)\ncalls");
	e2e_assert_result(r, "untimed", "[0,1,2]");
	cr_assert_str_eq(mcpc_sc_str(r, "stdout"), "", "%s", mcpc_json(r));
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "[line 2: %time for i in range(3): calls.append(i) is a notebook command, "
	                 "not Python: its statement runs, untimed]\n"
	                 "[line 3: %timeit -z f(1) is a notebook command, not Python: skipped]\n",
	                 "%s", mcpc_json(r));
	/* a statement going on to the next line stays as written (untimed); in a class body an
	 * expression is timed as a statement (a lambda there would not see the class's names) */
	r = e2e_ok("%time s = \'\'\'ab\ncd\'\'\'\nclass C:\n    x = 2\n    %time x * 3\n"
	           "    %time y = x * 3\n[s, C.y]");
	e2e_assert_result(r, "moved", "[\"ab\\ncd\",6]");
	/* lines end where the parser's do: a lone CR, as CR LF, ends one; the marks stay on the
	 * line as written */
	r = e2e_expect_error("q = 2\r%time y = q + 1\r\nprint(y)\r%time q / 0",
	                     "ZeroDivisionError");
	cr_assert(matches(mcpc_sc_str(r, "stdout"), "^" NB_TIMES "3\n$"), "%s", mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "traceback"),
	                 "line 4, in <lambda>\n    %time q / 0\n          ~~^~~\n"),
	          "%s", mcpc_json(r));
	e2e_stop();
}

Test(pylayer, timeit_times_callables)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import timeit, time\n"
	    "n = []\n"
	    "def f():\n"
	    "    n.append(1)\n"
	    "t = timeit.timeit(f, number=1000)\n"
	    "r = timeit.repeat(lambda: f(), setup=lambda: n.clear(), number=10, repeat=3)\n"
	    "try:\n"
	    "    timeit.timeit('n.append(2)', number=5)\n"
	    "    text = 'ran'\n"
	    "except ValueError as e:\n"
	    "    text = 'lambda: f(x)' in str(e)\n"
	    "[t > 0, len(r), len(n), timeit.Timer(f).autorange()[0] >= 1,\n"
	    " timeit.default_timer is time.perf_counter, text, 2 in n]",
	    "[true,3,10,true,true,true,false]");
	e2e_stop();
}

/* yaml (Debian's python3-yaml) reads and writes YAML's plain data. Its other loaders build an
 * object of any class by calling it (a tag names the callable: os.system), its other dumpers
 * read any object's state, and its C composer recursed on nesting until the stack ran out: the
 * code has the safe loader and dumper only (pure Python: nesting raises RecursionError), and
 * none of the real module's loaders, constructors or submodules. */
Test(pylayer, yaml_reads_and_writes_plain_data_only)
{
	e2e_start(NULL);
	e2e_expect_result("import yaml\n"
	                  "d = yaml.safe_load('name: run1\\nlr: 0.01\\nlayers: [64, 32]\\n"
	                  "when: 2024-05-01\\nflag: yes\\n')\n"
	                  "[d['name'], d['lr'], d['layers'], str(d['when']), d['flag'],\n"
	                  " yaml.safe_dump({'b': [1, 2], 'a': 'x'}, sort_keys=True),\n"
	                  " yaml.dump({'k': None}), yaml.load('x: 1', Loader=yaml.SafeLoader),\n"
	                  " list(yaml.safe_load_all('a: 1\\n---\\nb: 2')),\n"
	                  " yaml.load('n: 1', Loader=yaml.BaseLoader)]",
	                  "[\"run1\",0.01,[64,32],\"2024-05-01\",true,\"a: x\\nb:\\n- 1\\n- 2\\n\","
	                  "\"k: null\\n\",{\"x\":1},[{\"a\":1},{\"b\":2}],{\"n\":\"1\"}]");
	e2e_expect_result(
	    "import yaml, collections\n"
	    "out = []\n"
	    "calls = []\n"
	    "class Spy:\n"
	    "    def __init__(self, *a):\n"
	    "        if a:\n"
	    "            calls.append(a)\n"
	    "collections.Spy = Spy\n"
	    "for text in ['!!python/object/apply:collections.Spy [1]',\n"
	    "             '!!python/object/new:collections.Spy [1]',\n"
	    "             '!!python/name:collections.Spy', '!!python/module:os']:\n"
	    "    try:\n"
	    "        out.append(repr(yaml.safe_load(text)))\n"
	    "    except yaml.YAMLError as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "for loader in [yaml.FullLoader, yaml.UnsafeLoader, yaml.Loader, object, "
	    "None.__class__]:\n"
	    "    try:\n"
	    "        out.append(repr(yaml.load('!!python/object/apply:collections.Spy [2]',\n"
	    "                                  Loader=loader)))\n"
	    "    except (ValueError, yaml.YAMLError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "for f in [lambda: yaml.dump(Spy()), lambda: yaml.dump(1, Dumper=yaml.Dumper),\n"
	    "          lambda: yaml.safe_dump(Spy())]:\n"
	    "    try:\n"
	    "        out.append(f())\n"
	    "    except (ValueError, yaml.YAMLError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "for name in ['loader', 'constructor', 'cyaml', 'CParser', 'unsafe_load', "
	    "'full_load',\n"
	    "             'add_constructor', 'Loader']:\n"
	    "    out.append(hasattr(yaml, name))\n"
	    "try:\n"
	    "    yaml.safe_load('[' * 200000 + ']' * 200000)\n"
	    "except RecursionError:\n"
	    "    out.append('RecursionError')\n"
	    "out + [len(calls)]",
	    "[\"ConstructorError\",\"ConstructorError\",\"ConstructorError\",\"ConstructorError\","
	    "\"ConstructorError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"RepresenterError\",\"ValueError\",\"RepresenterError\","
	    "false,false,false,false,false,false,false,true,\"RecursionError\",0]");
	e2e_expect_error("import yaml.constructor", "ModuleNotFoundError");
	e2e_expect_error("from yaml import loader", "ImportError");
	e2e_stop();
}

/* Every call's code is named <code>: a function an earlier call of the session defined showed,
 * in a later call's traceback, the line of the later call's source at its line number (another
 * statement altogether). Each entry shows its own call's line, in the call's error and in the
 * traceback module's text. */
Test(pylayer, traceback_of_an_earlier_calls_function_shows_its_lines)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result("def f(x):\n    y = x + 1\n    return 1 / (y - y)\n"
	                  "def g():\n    return f(2)\n0",
	                  "0");
	r = e2e_expect_error("a = 1\nb = 2\nc = 3\ng()", "ZeroDivisionError");
	cr_assert_str_eq(mcpc_err_str(r, "traceback"),
	                 "Traceback (most recent call last):\n"
	                 "  File \"<code>\", line 4, in <module>\n    g()\n"
	                 "  File \"<code>\", line 5, in g\n    return f(2)\n"
	                 "           ^^^^\n"
	                 "  File \"<code>\", line 3, in f\n    return 1 / (y - y)\n"
	                 "           ~~^~~~~~~~~\n"
	                 "ZeroDivisionError: division by zero\n",
	                 "%s", mcpc_json(r));
	e2e_expect_result("import traceback\nq = 1\nr = 2\ntry:\n    g()\n"
	                  "except ZeroDivisionError:\n    t = traceback.format_exc()\n"
	                  "t.splitlines()[2:9]",
	                  "[\"    g()\",\"  File \\\"<code>\\\", line 5, in g\","
	                  "\"    return f(2)\",\"           ^^^^\","
	                  "\"  File \\\"<code>\\\", line 3, in f\","
	                  "\"    return 1 / (y - y)\",\"           ~~^~~~~~~~~\"]");
	e2e_stop();
}

/* Under each entry's line, CPython 3.11 marks the expression that failed: ^ under it, or ~
 * under a binary operation's operands and a subscript's value with ^ under the operator or the
 * index, none when it is the whole line. The expected marks are the host CPython's for the
 * same lines. Parsing the expression could warn (an escape it does not know, an octal escape
 * past 0o377, a number run into a keyword: 1if, 0xfor, 1.if), and a warning runs the warnings
 * hooks, which are the code's: such an expression is marked with ^ only, and the code's hook
 * never runs while a traceback is formatted (it sees the control warning only). */
Test(pylayer, tracebacks_mark_where_on_the_line_an_entry_failed)
{
	json_object *r;

	e2e_start(NULL);
	e2e_expect_result("import traceback\n"
	                  "def cases():\n"
	                  "    d, a, y, \xc3\xa9, n = {'a': {}}, [1], 0, {}, None\n"
	                  "    yield lambda: d['a']['b'] + 1\n"
	                  "    yield lambda: a[0] + a[5] * 2\n"
	                  "    yield lambda: (1 + 2) / y\n"
	                  "    yield lambda: 3 //y\n"
	                  "    yield lambda: d [ 'k' ]\n"
	                  "    yield lambda: \xc3\xa9['k'] + 1\n"
	                  "    yield lambda: (1 +\n"
	                  "        None)\n"
	                  "    yield lambda: int('a') + int('b')\n"
	                  "    yield lambda: n.foo.bar\n"
	                  "    yield lambda: 2 ** 'a'\n"
	                  "out = []\n"
	                  "for f in cases():\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "    except Exception:\n"
	                  "        out.append(traceback.format_exc().splitlines()[-2])\n"
	                  "out\n",
	                  "[\"                  ~~~~~~^^^^^\",\"                         ~^^^\","
	                  "\"                  ~~~~~~^~~~~\",\"                  ~~^^~\","
	                  "\"                  ~^^^^^^^~\",\"                  ~^^^^^\","
	                  "\"                   ^^^\",\"                  ^^^^^^^^\","
	                  "\"                  ^^^^^\",\"                  ~~^^~~~~\"]");
	r = e2e_expect_error("d = {'a': {}}\nx = 1\nx = d['a']['b'] + 1", "KeyError");
	cr_assert_str_eq(mcpc_err_str(r, "traceback"),
	                 "Traceback (most recent call last):\n"
	                 "  File \"<code>\", line 3, in <module>\n"
	                 "    x = d['a']['b'] + 1\n"
	                 "        ~~~~~~^^^^^\n"
	                 "KeyError: 'b'\n",
	                 "%s", mcpc_json(r));
	e2e_expect_result(
	    "import warnings, traceback\n"
	    "seen = []\n"
	    "warnings.simplefilter('always')\n"
	    "warnings.showwarning = lambda *a, **k: seen.append(str(a[0]))\n"
	    "def f():\n"
	    "    return 'a\\d' + 1\n"
	    "def g():\n"
	    "    return [0x1for x in 'a'] + 1\n"
	    "def h():\n"
	    "    return (0xfor 1) + 'a'\n"
	    "def k():\n"
	    "    return ('\\777', 1.if 1 else 2) + 1\n"
	    "out = []\n"
	    "for h in (f, g, h, k):\n"
	    "    try:\n"
	    "        h()\n"
	    "    except TypeError:\n"
	    "        out.append(traceback.format_exc().splitlines()[-2])\n"
	    "warnings.warn('control')\n"
	    "[out, seen]\n",
	    "[[\"           ^^^^^^^^^\",\"           ^^^^^^^^^^^^^^^^^^^^^\","
	    "\"           ^^^^^^^^^^^^^^^\",\"           ^^^^^^^^^^^^^^^^^^^^^^^^^^^\"],"
	    "[\"control\"]]");
	e2e_stop();
}

/* An uncaught NameError or AttributeError names the nearest name, as CPython 3.11 prints it
 * (the host's words for the same code): a local of the failing function, a global, a
 * builtin, an attribute of an object (from its dicts: no __dir__ or __getattr__ of the code's
 * runs for it). A refusal of the layer's keeps its own words. */
Test(pylayer, missing_names_suggest_the_nearest_as_cpython_does)
{
	json_object *r;

	e2e_start(NULL);
	e2e_ok("sales_df = 1\ndef f():\n    total_count = 3\n    return total_cont\n0");
	r = e2e_expect_error("f()", "NameError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "name 'total_cont' is not defined. Did you mean: 'total_count'?", "%s",
	                 mcpc_json(r));
	cr_assert(strstr(mcpc_err_str(r, "traceback"),
	                 "\nNameError: name 'total_cont' is not defined. Did you mean: "
	                 "'total_count'?\n"),
	          "%s", mcpc_json(r));
	r = e2e_expect_error("sale_df", "NameError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "name 'sale_df' is not defined. Did you mean: 'sales_df'?", "%s",
	                 mcpc_json(r));
	r = e2e_expect_error("prnt(1)", "NameError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "name 'prnt' is not defined. Did you mean: 'print'?", "%s", mcpc_json(r));
	r = e2e_expect_error("'abc'.uper()", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "'str' object has no attribute 'uper'. Did you mean: 'upper'?", "%s",
	                 mcpc_json(r));
	r = e2e_expect_error("[].apend(1)", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "'list' object has no attribute 'apend'. Did you mean: 'append'?", "%s",
	                 mcpc_json(r));
	/* a module's attribute, from the names its proxy holds; the error names it as CPython's */
	r = e2e_expect_error("import json\njson.lodas('{}')", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "module 'json' has no attribute 'lodas'. Did you mean: 'load'?", "%s",
	                 mcpc_json(r));
	e2e_expect_result("import math\ntry:\n    math.sqroot(4)\nexcept AttributeError as e:\n"
	                  "    r = [e.name, type(e.obj).__name__, e.obj is math]\nr",
	                  "[\"sqroot\",\"module\",true]");
	/* none near enough, as CPython */
	r = e2e_expect_error("undefined_thing_here", "NameError");
	cr_assert_str_eq(mcpc_err_str(r, "message"), "name 'undefined_thing_here' is not defined",
	                 "%s", mcpc_json(r));
	r = e2e_expect_error("(1).rael", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"), "'int' object has no attribute 'rael'", "%s",
	                 mcpc_json(r));
	r = e2e_expect_error("class A:\n    values = 1\nA().vaules", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "'A' object has no attribute 'vaules'. Did you mean: 'values'?", "%s",
	                 mcpc_json(r));
	/* a class of the code's: its names read from the instance's and the classes' dicts, none of
	 * its __dir__, __getattr__ or metaclass's __dir__ run for it (only the access's
	 * own __getattr__ ran: once each) */
	e2e_ok("ran = []\n"
	       "class Meta(type):\n"
	       "    def __dir__(cls):\n"
	       "        ran.append('meta dir')\n"
	       "        return ['compue']\n"
	       "class B(metaclass=Meta):\n"
	       "    def __dir__(self):\n"
	       "        ran.append('dir')\n"
	       "        return ['compue']\n"
	       "    def __getattr__(self, n):\n"
	       "        ran.append(n)\n"
	       "        raise AttributeError(f\"'B' object has no attribute '{n}'\", name=n,\n"
	       "                             obj=self)\n"
	       "    def compute(self):\n"
	       "        pass\n"
	       "b = B()\n"
	       "b.running_total = 1\n"
	       "ran.clear()\n0");
	r = e2e_expect_error("b.compue", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "'B' object has no attribute 'compue'. Did you mean: 'compute'?", "%s",
	                 mcpc_json(r));
	r = e2e_expect_error("b.running_totl", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "'B' object has no attribute 'running_totl'. Did you mean: "
	                 "'running_total'?",
	                 "%s", mcpc_json(r));
	r = e2e_expect_error("B.compue", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "type object 'B' has no attribute 'compue'. Did you mean: 'compute'?",
	                 "%s", mcpc_json(r));
	e2e_expect_result("ran", "[\"compue\",\"running_totl\"]");
	/* private names only for a private name */
	r = e2e_expect_error("class P:\n    _cache = 1\nP().cache", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"), "'P' object has no attribute 'cache'", "%s",
	                 mcpc_json(r));
	r = e2e_expect_error("P()._cahce", "AttributeError");
	cr_assert_str_eq(mcpc_err_str(r, "message"),
	                 "'P' object has no attribute '_cahce'. Did you mean: '_cache'?", "%s",
	                 mcpc_json(r));
	r = e2e_expect_error("(1).__code__", "AttributeError");
	cr_assert_null(strstr(mcpc_err_str(r, "message"), "Did you mean"), "%s", mcpc_json(r));
	r = e2e_expect_error("eval('1')", "NameError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "runs code as code"), "%s", mcpc_json(r));
	cr_assert_null(strstr(mcpc_err_str(r, "message"), "Did you mean"), "%s", mcpc_json(r));
	e2e_stop();
}

/* The traceback of an error raised in library code named the library frames' files and lines
 * but showed no source there (a worker opens no file), where CPython shows each line. The
 * call's error shows them now, the source asked of the supervisor as a late import asks for a
 * module (the installed module files only, nothing the code names); the user's own lines are
 * as before, and the traceback module's text is unchanged. */
Test(pylayer, traceback_shows_library_source_lines)
{
	json_object *r;
	const char *tb;

	e2e_start(NULL);
	r = e2e_expect_error("import json\njson.loads('{')", "json.decoder.JSONDecodeError");
	tb = mcpc_err_str(r, "traceback");
	cr_assert(tb && strstr(tb, "  File \"<code>\", line 2, in <module>\n"
	                           "    json.loads('{')\n  File \""),
	          "%s", mcpc_json(r));
	cr_assert(strstr(tb, "/json/__init__.py\", line 346, in loads\n"
	                     "    return _default_decoder.decode(s)\n"
	                     "           ^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \""),
	          "%s", mcpc_json(r));
	cr_assert(strstr(tb, "/json/decoder.py\", line 353, in raw_decode\n"
	                     "    obj, end = self.scan_once(s, idx)\n"
	                     "               ^^^^^^^^^^^^^^^^^^^^^^\n"
	                     "json.decoder.JSONDecodeError: Expecting property name enclosed in "
	                     "double quotes: line 1 column 2 (char 1)\n"),
	          "%s", mcpc_json(r));
	r = e2e_expect_error("def f(x):\n    return int(x)\nf('a')", "ValueError");
	cr_assert_str_eq(mcpc_err_str(r, "traceback"),
	                 "Traceback (most recent call last):\n"
	                 "  File \"<code>\", line 3, in <module>\n    f('a')\n"
	                 "  File \"<code>\", line 2, in f\n    return int(x)\n"
	                 "           ^^^^^^\n"
	                 "ValueError: invalid literal for int() with base 10: 'a'\n",
	                 "%s", mcpc_json(r));
	e2e_expect_result("import json, traceback\ntry:\n    json.loads('[')\n"
	                  "except ValueError:\n    t = traceback.format_exc()\n"
	                  "['in raw_decode' in t, t.splitlines()[-1]]",
	                  "[true,\"json.decoder.JSONDecodeError: Expecting value: line 1 column 2 "
	                  "(char 1)\"]");
	e2e_stop();
}

/* logging as scripts use it: basicConfig, loggers, levels, formats, exceptions with their
 * tracebacks, a record that cannot be formatted; without logging.config (it builds any object
 * a name names), logging.handlers (sockets, processes, files) or currentframe (a frame). */
Test(pylayer, logging_writes_to_the_calls_stderr)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import logging\n"
	           "logging.basicConfig(level=logging.INFO,\n"
	           "                    format='%(levelname)s %(name)s: %(message)s')\n"
	           "log = logging.getLogger('job')\n"
	           "log.info('rows: %d', 3)\n"
	           "log.debug('not shown')\n"
	           "try:\n"
	           "    1 / 0\n"
	           "except ZeroDivisionError:\n"
	           "    log.exception('failed')\n"
	           "log.error('bad %d', 'x')\n"
	           "h = logging.StreamHandler()\n"
	           "h.setFormatter(logging.Formatter('{levelname}|{message}', style='{'))\n"
	           "other = logging.getLogger('other')\n"
	           "other.addHandler(h)\n"
	           "other.propagate = False\n"
	           "other.warning('w')\n"
	           "[logging.getLevelName(logging.WARNING), log.getEffectiveLevel()]");
	e2e_assert_result(r, "logging", "[\"WARNING\",20]");
	/* The error's frames are logging's own, whose lines depend on the Python build. */
	{
		const char *err = mcpc_sc_str(r, "stderr"), *mid;
		static const char head[] = "INFO job: rows: 3\n"
		                           "ERROR job: failed\n"
		                           "Traceback (most recent call last):\n"
		                           "  File \"<code>\", line 8, in <module>\n"
		                           "    1 / 0\n"
		                           "    ~~^~~\n"
		                           "ZeroDivisionError: division by zero\n"
		                           "--- Logging error ---\n"
		                           "Traceback (most recent call last):\n"
		                           "  File \"/lib/python3.11/logging/__init__.py\", line ";
		static const char tail[] =
		    ", in getMessage\n"
		    "TypeError: %d format: a real number is required, not str\n"
		    "Message: 'bad %d'\n"
		    "Arguments: ('x',)\n"
		    "WARNING|w\n";
		cr_assert(err && strncmp(err, head, strlen(head)) == 0, "%s", mcpc_json(r));
		mid = strstr(err, tail);
		cr_assert(mid && strlen(mid) == strlen(tail), "%s", mcpc_json(r));
	}
	e2e_expect_error("import logging.config", "ModuleNotFoundError");
	e2e_expect_error("import logging.handlers", "ModuleNotFoundError");
	e2e_expect_error("from logging import config", "ImportError");
	r = e2e_expect_error("import logging\nlogging.currentframe", "AttributeError");
	cr_assert(strstr(mcpc_err_str(r, "message"), "frames are out of reach"), "%s",
	          mcpc_json(r));
	e2e_stop();
}

/* A syntax error is shown where it names (ast.parse(text, filename=...)): its file was shown as
 * the code's own <code>. format_exception_only gives its place, line and caret, as CPython's
 * does (it gave one line), and an exception's notes. */
Test(pylayer, syntax_errors_show_the_file_they_name)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import ast, traceback\n"
	           "try:\n"
	           "    ast.parse('x = (1,\\n', filename='mod.py')\n"
	           "except SyntaxError as e:\n"
	           "    out = [traceback.format_exception_only(e)]\n"
	           "    traceback.print_exc(limit=0)\n"
	           "e = ValueError('v')\n"
	           "e.add_note('a note')\n"
	           "out.append(traceback.format_exception_only(e))\n"
	           "out");
	e2e_assert_result(r, "syntax",
	                  "[[\"  File \\\"mod.py\\\", line 1\\n\",\"    x = (1,\\n\","
	                  "\"        ^\\n\",\"SyntaxError: '(' was never closed\\n\"],"
	                  "[\"ValueError: v\\n\",\"a note\\n\"]]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "  File \"mod.py\", line 1\n"
	                 "    x = (1,\n"
	                 "        ^\n"
	                 "SyntaxError: '(' was never closed\n",
	                 "%s", mcpc_json(r));
	e2e_stop();
}

/* traceback gives the text of tracebacks as an uncaught exception's is printed: the exception
 * being handled, one given, its chain, a limit; and nothing that reaches a frame (the real
 * module's walk_tb and walk_stack are not there). */
Test(pylayer, traceback_formats_exceptions_and_holds_no_frame)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import traceback\n"
	           "class Buf:\n    def __init__(self):\n        self.parts = []\n"
	           "    def write(self, s):\n        self.parts.append(s)\n"
	           "def inner():\n    return {}['k']\n"
	           "try:\n    try:\n        inner()\n"
	           "    except KeyError as e:\n        raise ValueError('wrapped') from e\n"
	           "except ValueError as e:\n"
	           "    traceback.print_exc()\n"
	           "    buf = Buf()\n"
	           "    traceback.print_exc(file=buf, chain=False)\n"
	           "    out = [traceback.format_exc(limit=1).count('File'), ''.join(buf.parts),\n"
	           "           traceback.format_exception_only(e),\n"
	           "           ''.join(traceback.format_exception(type(e), e, e.__traceback__,\n"
	           "                                              chain=False)),\n"
	           "           ''.join(traceback.format_exception(e, limit=0)),\n"
	           "           e.__cause__.__class__.__name__, e.__traceback__.tb_lineno]\n"
	           "out + [traceback.format_exc(),\n"
	           "       sorted(n for n in dir(traceback) if not n.startswith('_'))]");
	e2e_assert_result(
	    r, "traceback",
	    "[2,"
	    "\"Traceback (most recent call last):\\n  File \\\"<code>\\\", line 13, in <module>\\n"
	    "    raise ValueError('wrapped') from e\\nValueError: wrapped\\n\","
	    "[\"ValueError: wrapped\\n\"],"
	    "\"Traceback (most recent call last):\\n  File \\\"<code>\\\", line 13, in <module>\\n"
	    "    raise ValueError('wrapped') from e\\nValueError: wrapped\\n\","
	    "\"KeyError: 'k'\\n\\nThe above exception was the direct cause of the following "
	    "exception:\\n\\nValueError: wrapped\\n\",\"KeyError\",13,\"NoneType: None\\n\","
	    "[\"FrameSummary\",\"StackSummary\",\"extract_stack\",\"extract_tb\",\"format_exc\","
	    "\"format_exception\",\"format_exception_only\",\"format_list\",\"format_stack\","
	    "\"format_tb\",\"print_exc\",\"print_exception\",\"print_list\",\"print_stack\","
	    "\"print_tb\"]]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "Traceback (most recent call last):\n"
	                 "  File \"<code>\", line 11, in <module>\n"
	                 "    inner()\n"
	                 "  File \"<code>\", line 8, in inner\n"
	                 "    return {}['k']\n"
	                 "           ~~^^^^^\n"
	                 "KeyError: 'k'\n\n"
	                 "The above exception was the direct cause of the following exception:\n\n"
	                 "Traceback (most recent call last):\n"
	                 "  File \"<code>\", line 13, in <module>\n"
	                 "    raise ValueError('wrapped') from e\n"
	                 "ValueError: wrapped\n",
	                 "%s", mcpc_json(r));
	/* A traceback's frames stay out of reach. */
	e2e_expect_error(
	    "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__\n"
	    "t.tb_frame",
	    "AttributeError");
	e2e_expect_error("import traceback\ntraceback.walk_tb", "AttributeError");
	e2e_stop();
}

/* The entries of a traceback and of the caller's stack, as the real module gives them:
 * FrameSummary (file, line, name, source line; a 4-tuple) in a StackSummary, limits as its,
 * repeats counted; the code's own objects in a list to format are copied first (an __eq__
 * that empties the list changes nothing), and no frame is taken or handed out. */
Test(pylayer, traceback_gives_the_entries_of_a_traceback_and_of_the_stack)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok(
	    "import traceback\n"
	    "def g(n):\n    if n == 0:\n        raise ValueError('deep')\n    g(n - 1)\n"
	    "try:\n    g(5)\nexcept ValueError as e:\n    tb = e.__traceback__\n"
	    "es = traceback.extract_tb(tb)\n"
	    "first = [(f, n, name, line) for f, n, name, line in es[:2]]\n"
	    "last = traceback.extract_tb(tb, limit=-1)[0]\n"
	    "text = traceback.format_tb(tb)\n"
	    "traceback.print_tb(tb, 1)\n"
	    "def h():\n    return traceback.format_stack(), traceback.extract_stack(limit=1)\n"
	    "st, lim = h()\n"
	    "L = []\nclass E(str):\n"
	    "    def __eq__(self, other):\n        L.clear(); L.extend([None] * 5)\n"
	    "        return True\n    __hash__ = str.__hash__\n"
	    "L.extend([(E('a.py'), 1, 'n', ' x ')] * 5)\n"
	    "try:\n    traceback.extract_stack(f=1)\nexcept TypeError:\n    refused = True\n"
	    "[type(es).__name__, len(es), first, repr(last), last.line, text[0], len(text),\n"
	    " text[-1], st, repr(lim), traceback.format_list(L), len(L), refused,\n"
	    " es.format() == text, list(traceback.extract_tb(None))]");
	e2e_assert_result(
	    r, "entries",
	    "[\"StackSummary\",7,[[\"<code>\",7,\"<module>\",\"g(5)\"],[\"<code>\",5,\"g\","
	    "\"g(n - 1)\"]],\"<FrameSummary file <code>, line 4 in g>\",\"raise ValueError('deep')"
	    "\",\"  File \\\"<code>\\\", line 7, in <module>\\n    g(5)\\n\",6,"
	    "\"  File \\\"<code>\\\", line 4, in g\\n    raise ValueError('deep')\\n\","
	    "[\"  File \\\"<code>\\\", line 17, in <module>\\n    st, lim = h()\\n\","
	    "\"  File \\\"<code>\\\", line 16, in h\\n    return traceback.format_stack(), "
	    "traceback.extract_stack(limit=1)\\n\"],"
	    "\"[<FrameSummary file <code>, line 16 in h>]\","
	    "[\"  File \\\"a.py\\\", line 1, in n\\n    x\\n\",\"  File \\\"a.py\\\", line 1, in "
	    "n\\n    x\\n\",\"  File \\\"a.py\\\", line 1, in n\\n    x\\n\","
	    "\"  [Previous line repeated 2 more times]\\n\"],5,true,true,[]]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "  File \"<code>\", line 7, in <module>\n    g(5)\n", "%s", mcpc_json(r));
	e2e_stop();
}

/* copy's table of reducers is copyreg's, which library code consults as it copies and pickles:
 * the user's code may read it, not add a function library code would hand every object of a
 * type the user chose (a module's, a library class's). */
Test(pylayer, the_copy_reducers_table_is_read_only)
{
	e2e_start(NULL);
	e2e_expect_result("import copy, json\n"
	                  "seen = []\n"
	                  "try:\n"
	                  "    copy.dispatch_table[type(json)] = lambda m: seen.append(m)\n"
	                  "    added = True\n"
	                  "except TypeError:\n"
	                  "    added = False\n"
	                  "[added, len(copy.dispatch_table) > 0, copy.deepcopy({'a': [1]}), seen]",
	                  "[false,true,{\"a\":[1]},[]]");
	e2e_stop();
}

/* dataclasses.make_dataclass made its class in types, whose namespace it then read: refused,
 * it failed for everyone. The class is the user's now. */
Test(pylayer, make_dataclass_makes_the_users_class)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import dataclasses\n"
	    "P = dataclasses.make_dataclass('P', ['x', ('y', int, "
	    "dataclasses.field(default=2))],\n"
	    "                               namespace={'total': lambda s: s.x + s.y})\n"
	    "p = P(1)\n"
	    "[repr(p), p.total(), dataclasses.asdict(p), P.__module__]",
	    "[\"P(x=1, y=2)\",3,{\"x\":1,\"y\":2},\"__main__\"]");
	e2e_stop();
}

/* What ordinary code reaches for beside the computation modules works by default: time zones
 * (the zone database is read in the zygote: a worker cannot open its files, and a path given
 * to reset_tzpath finds nothing), time-based and random UUIDs (libuuid asks a daemon over a
 * socket, which the sandbox ends: the node is a random one), in-memory streams with csv and the
 * compressors and zip archives on them, XML, HTML escaping, URL parsing, shell quoting, IP
 * addresses, SimpleNamespace. No file is opened without a workspace. */
Test(pylayer, formats_time_zones_and_uuids_work_by_default)
{
	e2e_start(NULL);
	/* gc: its collections only, nothing that hands out objects. */
	e2e_expect_result(
	    "import gc\n"
	    "x = [[i] for i in range(100)]\n"
	    "del x\n"
	    "[gc.collect() >= 0, gc.isenabled(), [hasattr(gc, n) for n in ('get_objects',"
	    " 'get_referrers', 'get_referents', 'garbage', 'callbacks', 'set_debug')]]",
	    "[true,true,[false,false,false,false,false,false]]");
	/* literal_eval, configuration formats, codecs, hmac; compile stays out of reach. */
	e2e_expect_result(
	    "import ast, hmac, hashlib, tomllib, configparser, codecs\n"
	    "cp = configparser.ConfigParser()\n"
	    "cp.read_string('[db]\\nhost = h\\n')\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return repr(f())\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "[ast.literal_eval(\"[1, (2, 'a'), {'k': None}]\"),\n"
	    " tomllib.loads('a = 1\\n[b]\\nc = \"d\"'), cp['db']['host'], codecs.encode('abc', "
	    "'rot13'),\n"
	    " hmac.new(b'k', b'm', hashlib.sha256).hexdigest()[:8], "
	    "ast.unparse(ast.parse('a+b')),\n"
	    " attempt(lambda: ast.literal_eval('__import__(\"os\")')), 'compile' in "
	    "dir(__builtins__)"
	    "]",
	    "[[1,[2,\"a\"],{\"k\":null}],{\"a\":1,\"b\":{\"c\":\"d\"}},\"h\","
	    "\"nop\",\"b60090e3\",\"a + b\",\"ValueError\",false]");
	e2e_expect_result(
	    "import zoneinfo, uuid, io, csv, gzip, bz2, lzma, zipfile, html, shlex, secrets\n"
	    "import urllib.parse, colorsys, graphlib\n"
	    "import xml.etree.ElementTree as ET\n"
	    "from datetime import datetime\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return repr(f())\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "paris = zoneinfo.ZoneInfo('Europe/Paris')\n"
	    "ny = datetime(2024, 7, 1, 12, tzinfo=paris).astimezone(zoneinfo.ZoneInfo('America/"
	    "New_York'))\n"
	    "zones = zoneinfo.available_timezones()\n"
	    "u1, u4 = uuid.uuid1(), uuid.uuid4()\n"
	    "b = io.BytesIO()\n"
	    "with zipfile.ZipFile(b, 'w', zipfile.ZIP_DEFLATED) as z:\n"
	    "    z.writestr('in/a.csv', 'x,y\\n1,2\\n')\n"
	    "rows = list(csv.reader(io.StringIO(zipfile.ZipFile(b).read('in/a.csv').decode())))\n"
	    "packed = [m.decompress(m.compress(b'abc' * 100)) == b'abc' * 100 for m in (gzip, bz2, "
	    "lzma)]\n"
	    "root = ET.fromstring('<r><i n=\"1\">x</i><i n=\"2\">y</i></r>')\n"
	    "ts = graphlib.TopologicalSorter({'b': {'a'}, 'c': {'b'}})\n"
	    "zoneinfo.reset_tzpath(['/etc'])\n"
	    "[str(ny), 'Europe/Paris' in zones and 'UTC' in zones and len(zones) > 300,\n"
	    " str(datetime(2024, 1, 1, "
	    "tzinfo=zoneinfo.ZoneInfo.no_cache('Asia/Tokyo')).utcoffset()),\n"
	    " u1.version, u4.version, uuid.getnode() == uuid.getnode(), str(uuid.uuid5(uuid."
	    "NAMESPACE_DNS, 'example.org')),\n"
	    " rows, packed, [(e.get('n'), e.text) for e in root], html.escape('<a&b>'),\n"
	    " urllib.parse.urlparse('https://h/p?q=1').query, urllib.parse.quote('a b&c'),\n"
	    " shlex.split('a \"b c\"'), len(secrets.token_hex(8)), colorsys.rgb_to_hsv(1, 0, 0),\n"
	    " list(ts.static_order()), attempt(lambda: zoneinfo.ZoneInfo('passwd')),\n"
	    " attempt(lambda: zipfile.ZipFile('/etc/x.zip')), attempt(lambda: gzip.open('/etc/"
	    "passwd'))]",
	    "[\"2024-07-01 06:00:00-04:00\",true,\"9:00:00\",1,4,true,"
	    "\"aad03681-8b63-5304-89e0-8ca8f49461b5\",[[\"x\",\"y\"],[\"1\",\"2\"]],[true,true,"
	    "true],"
	    "[[\"1\",\"x\"],[\"2\",\"y\"]],\"&lt;a&amp;b&gt;\",\"q=1\",\"a%20b%26c\",[\"a\",\"b "
	    "c\"],16,"
	    "[0.0,1.0,1],[\"a\",\"b\",\"c\"],\"ZoneInfoNotFoundError\",\"PermissionError\","
	    "\"PermissionError\"]");
	/* XML pretty-printed through minidom, names matched as shell patterns, reprs shortened:
	 * the modules' own, none of the modules they import reached through them. A submodule
	 * allowed is imported from its package too (from xml.dom import minidom); the package's
	 * other submodules are not. */
	e2e_expect_result(
	    "import fnmatch, reprlib\n"
	    "from xml.dom import minidom as md\n"
	    "from xml.etree import ElementTree\n"
	    "def refused(f):\n"
	    "    try:\n        f()\n    except ImportError as e:\n"
	    "        return str(e).split('.')[0]\n"
	    "def expat():\n    from xml.dom import expatbuilder\n"
	    "def both():\n    from xml.dom import minidom, pulldom\n"
	    "d = md.parseString('<a><b x=\"1\">t</b><c/></a>')\n"
	    "def attempt(m, n):\n"
	    "    try:\n        return repr(getattr(m, n))\n"
	    "    except AttributeError:\n        return 'AttributeError'\n"
	    "[d.toprettyxml(indent=' '), d.getElementsByTagName('b')[0].getAttribute('x'),\n"
	    " fnmatch.fnmatch('data_2024.csv', 'data_*.csv'),\n"
	    " fnmatch.filter(['a.py', 'b.txt'], '*.py'), reprlib.repr(list(range(100))),\n"
	    " attempt(fnmatch, 'os'), attempt(md, 'xml'), attempt(md, 'sys'),\n"
	    " ElementTree.fromstring('<r/>').tag, refused(expat), refused(both)]",
	    "[\"<?xml version=\\\"1.0\\\" ?>\\n<a>\\n <b x=\\\"1\\\">t</b>\\n "
	    "<c/>\\n</a>\\n\",\"1\",true,[\"a.py\"],\"[0, 1, 2, 3, 4, 5, ...]\","
	    "\"AttributeError\",\"AttributeError\",\"AttributeError\",\"r\","
	    "\"Import from xml\",\"Import from xml\"]");
	/* Tar archives as zip archives: made and read in memory; without a workspace nothing is
	 * unpacked or opened by name. */
	e2e_expect_result("import tarfile, io\n"
	                  "def attempt(f):\n"
	                  "    try:\n"
	                  "        return repr(f())\n"
	                  "    except Exception as e:\n"
	                  "        return type(e).__name__\n"
	                  "b = io.BytesIO()\n"
	                  "with tarfile.open(fileobj=b, mode='w:xz') as t:\n"
	                  "    i = tarfile.TarInfo('d/a.csv')\n"
	                  "    i.size = 8\n"
	                  "    t.addfile(i, io.BytesIO(b'x,y\\n1,2\\n'))\n"
	                  "t = tarfile.open(fileobj=io.BytesIO(b.getvalue()))\n"
	                  "[t.getnames(), t.extractfile('d/a.csv').read().decode(), "
	                  "t.getmember('d/a.csv').uname,\n"
	                  " attempt(lambda: t.extractall('q')), attempt(lambda: tarfile.open('/etc/"
	                  "x.tar'))]",
	                  "[[\"d/a.csv\"],\"x,y\\n1,2\\n\",\"\",\"PermissionError\","
	                  "\"PermissionError\"]");
	/* Addresses, namespaces, error codes and keywords; types without the classes that make
	 * code objects, frames and cells of parts. */
	e2e_expect_result(
	    "import ipaddress, errno, keyword, types\n"
	    "from types import SimpleNamespace\n"
	    "ns = SimpleNamespace(a=1, b=2)\n"
	    "def f(): pass\n"
	    "def g(): yield 1\n"
	    "[ipaddress.ip_address('10.1.2.3') in ipaddress.ip_network('10.0.0.0/8'),\n"
	    "       str(ipaddress.ip_network('192.168.0.0/30').broadcast_address), ns.a + ns.b, "
	    "repr(ns),\n"
	    "       errno.ENOENT, errno.errorcode[2], keyword.iskeyword('for'), 'match' in "
	    "keyword.softkwlist,\n"
	    "       isinstance(f, types.FunctionType), isinstance(g(), types.GeneratorType),\n"
	    "       types.MappingProxyType({'x': 1})['x'], hasattr(types, 'CodeType'), "
	    "hasattr(types, 'FrameType'),\n"
	    "       types.new_class('K', (object,)).__name__, "
	    "list(ipaddress.ip_network('10.0.0.0/30').hosts())[0].exploded]\n",
	    "[true,\"192.168.0.3\",3,\"namespace(a=1, b=2)\",2,\"ENOENT\",true,true,true,true,1,"
	    "false,false,\"K\",\"10.0.0.1\"]");
	/* warnings, as code written for any Python starts with: filters, records, the category a
	 * warning was made with; the module's own internals (its printer, linecache, loader,
	 * builtins) stay out of reach, and catch_warnings holds a view of it, not the module. */
	e2e_expect_result(
	    "import warnings\n"
	    "r = []\n"
	    "warnings.filterwarnings('ignore', category=DeprecationWarning)\n"
	    "with warnings.catch_warnings(record=True) as w:\n"
	    "    warnings.simplefilter('always')\n"
	    "    warnings.warn('hello', UserWarning)\n"
	    "    warnings.warn('old', DeprecationWarning, stacklevel=2)\n"
	    "warnings.warn('ignored', DeprecationWarning)\n"
	    "r.append([(str(x.message), x.category.__name__) for x in w])\n"
	    "for name in ('_showwarnmsg_impl', 'linecache', '__loader__', '__builtins__'):\n"
	    "    try:\n"
	    "        getattr(warnings, name)\n"
	    "        r.append('has ' + name)\n"
	    "    except AttributeError:\n"
	    "        r.append('no ' + name)\n"
	    "try:\n"
	    "    warnings.catch_warnings()._module.__dict__\n"
	    "    r.append('module')\n"
	    "except AttributeError:\n"
	    "    r.append('view')\n"
	    "r\n",
	    "[[[\"hello\",\"UserWarning\"],[\"old\",\"DeprecationWarning\"]],\"no "
	    "_showwarnmsg_impl\","
	    "\"no linecache\",\"no __loader__\",\"no __builtins__\",\"view\"]");
	e2e_stop();
}

/* A class beneath int, float or complex is a number to compiled code, which reads its value:
 * one whose comparisons answered a range check (an index 10**7 taken for one below 3), whose
 * __float__ answered another value than the one checked, or whose mixin or later assignment
 * gave it either, is refused; int subclasses with methods of their own, IntEnum and IntFlag
 * (enum gives each flag class Flag's own operators), and dataclass ordering work as before. */
Test(pylayer, a_number_s_class_answers_with_its_value)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import enum\n"
	    "from enum import IntEnum, IntFlag\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "class Color(IntEnum):\n"
	    "    RED = 1\n"
	    "    GREEN = 2\n"
	    "class Perm(IntFlag):\n"
	    "    R = 4\n"
	    "    W = 2\n"
	    "class Nice(int):\n"
	    "    def __repr__(self):\n"
	    "        return 'Nice(%d)' % self\n"
	    "    def double(self):\n"
	    "        return Nice(self * 2)\n"
	    "r = [Color.RED + 1, Color.GREEN > Color.RED, (Perm.R | Perm.W).value, "
	    "repr(Nice(3).double()), [c.name for c in sorted([Color.GREEN, Color.RED])]]\n"
	    "def mk1():\n"
	    "    class Evil(int):\n"
	    "        def __ge__(self, o):\n"
	    "            return True\n"
	    "def mk2():\n"
	    "    class Mixin:\n"
	    "        def __lt__(self, o):\n"
	    "            return True\n"
	    "    class Evil(Mixin, float):\n"
	    "        pass\n"
	    "def mk3():\n"
	    "    class F(float):\n"
	    "        pass\n"
	    "    F.__float__ = lambda self: 1e300\n"
	    "def mk4():\n"
	    "    class Mixin:\n"
	    "        pass\n"
	    "    class E(Mixin, int):\n"
	    "        pass\n"
	    "    Mixin.__index__ = lambda self: 5\n"
	    "def mk5():\n"
	    "    return type('E', (int,), {'__add__': lambda a, b: 0})\n"
	    "def mk6():\n"
	    "    from collections import UserString\n"
	    "    class N(UserString, int):\n"
	    "        pass\n"
	    "r += [t(mk1), t(mk2), t(mk3), t(mk4), t(mk5), t(mk6)]\n"
	    "C2 = IntEnum('C2', 'A B')\n"
	    "r.append([C2.A + C2.B, enum.IntEnum('X', {'a': 5}).a * 2])\n"
	    "from dataclasses import dataclass\n"
	    "@dataclass(frozen=True, order=True)\n"
	    "class P:\n"
	    "    x: int\n"
	    "r.append(P(1) < P(2))\n"
	    "r\n",
	    "[2,true,6,\"Nice(6)\",[\"RED\",\"GREEN\"],\"TypeError\",\"TypeError\",\"TypeError\","
	    "\"TypeError\",\"TypeError\",\"TypeError\",[3,10],true]");
	e2e_stop();
}

/* Code that shows its warnings its own way sets warnings.showwarning or formatwarning: they are
 * the module's that warn() calls (the code's module kept its own, and warn() printed as
 * before), read back as set, and catch_warnings still records and restores. */
Test(pylayer, warnings_are_shown_by_the_code_s_showwarning_and_formatwarning)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok(
	    "import warnings\nseen = []\n"
	    "def show(message, category, filename, lineno, file=None, line=None):\n"
	    "    seen.append(f'{category.__name__}: {message}')\n"
	    "old = warnings.showwarning\nwarnings.showwarning = show\n"
	    "warnings.warn('custom')\nsame = warnings.showwarning is show\n"
	    "warnings.showwarning = old\n"
	    "warnings.formatwarning = lambda msg, cat, *a, **k: f'[{cat.__name__}] {msg}\\n'\n"
	    "warnings.warn('formatted')\n"
	    "with warnings.catch_warnings(record=True) as w:\n"
	    "    warnings.simplefilter('always')\n    warnings.warn('recorded')\n"
	    "[seen, same, warnings.showwarning is old, [str(x.message) for x in w]]");
	e2e_assert_result(r, "shown", "[[\"UserWarning: custom\"],true,true,[\"recorded\"]]");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"), "[UserWarning] formatted\n", "%s", mcpc_json(r));
	e2e_stop();
}

/* A warning shows the line that warned under its header, as CPython does (none was shown:
 * the code's text is no file), from the call whose code runs it: a function an earlier call
 * defined shows its own line, not the line of that number in the current call. A stack printed
 * by the traceback module shows its lines too. */
Test(pylayer, warnings_show_the_line_that_warned)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_ok("import warnings\nwarnings.simplefilter('always')\n"
	           "def f():\n    warnings.warn('from f', stacklevel=1)\n"
	           "warnings.warn('top', DeprecationWarning)");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "<code>:5: DeprecationWarning: top\n"
	                 "  warnings.warn('top', DeprecationWarning)\n",
	                 "%s", mcpc_json(r));
	r = e2e_ok("x = 1\ny = 2\nz = 3\nf()\nimport traceback\ntraceback.print_stack()");
	cr_assert_str_eq(mcpc_sc_str(r, "stderr"),
	                 "<code>:4: UserWarning: from f\n"
	                 "  warnings.warn('from f', stacklevel=1)\n"
	                 "  File \"<code>\", line 6, in <module>\n"
	                 "    traceback.print_stack()\n",
	                 "%s", mcpc_json(r));
	e2e_stop();
}

/* A call's **mapping reaches the callee with its keyword names exact str (a str subclass's
 * __hash__ and __eq__ hid a keyword from a guard's lookup that the callee still took by its
 * characters); everything else about ** is as CPython's: any mapping, duplicate names, keys
 * that are not strings, a class's keywords. */
Test(pylayer, keyword_mappings_reach_calls_with_plain_names)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "from collections.abc import Mapping\n"
	    "class M(Mapping):\n"
	    "    def __init__(self, d):\n"
	    "        self.d = d\n"
	    "    def __getitem__(self, k):\n"
	    "        return self.d[k]\n"
	    "    def __iter__(self):\n"
	    "        return iter(self.d)\n"
	    "    def __len__(self):\n"
	    "        return len(self.d)\n"
	    "class S(str):\n"
	    "    def __eq__(self, o):\n"
	    "        return str.__eq__(self, o)\n"
	    "    __hash__ = str.__hash__\n"
	    "class T(str):\n"
	    "    def __eq__(self, o):\n"
	    "        return False\n"
	    "    def __hash__(self):\n"
	    "        return 7\n"
	    "def f(*a, **k):\n"
	    "    return sorted((type(n).__name__, n, v) for n, v in k.items())\n"
	    "out = [f(**{'a': 1}), f(**M({'b': 2})), dict(**{'c': 3}, d=4), 2 ** 10, f(**{S('z'): "
	    "5})]\n"
	    "for bad in [lambda: f(**1), lambda: f(a=1, **{'a': 2}), lambda: f(**{1: 2}),\n"
	    "            lambda: f(**{'a': 1}, **{'a': 2}), lambda: f(**{'q': 1, T('q'): 2})]:\n"
	    "    try:\n"
	    "        bad()\n"
	    "    except TypeError as e:\n"
	    "        out.append(str(e))\n"
	    "class K:\n"
	    "    def keys(self):\n"
	    "        raise AttributeError('inner')\n"
	    "try:\n"
	    "    f(**K())\n"
	    "except TypeError as e:\n"
	    "    out.append(str(e))\n"
	    "class B:\n"
	    "    def __init_subclass__(cls, **kw):\n"
	    "        cls.kw = sorted(kw)\n"
	    "class C(B, **{'p': 1}):\n"
	    "    pass\n"
	    "out + [C.kw]",
	    "[[[\"str\",\"a\",1]],[[\"str\",\"b\",2]],{\"c\":3,\"d\":4},1024,[[\"str\",\"z\",5]],"
	    "\"argument after ** must be a mapping, not int\","
	    "\"__main__.f() got multiple values for keyword argument 'a'\","
	    "\"keywords must be strings\","
	    "\"__main__.f() got multiple values for keyword argument 'a'\","
	    "\"got multiple values for keyword argument 'q'\",\"argument after ** must be a "
	    "mapping, not K\",[\"p\"]]");
	/* A program that imports nothing is compiled on the parser's fast path unless it may
	 * unpack a mapping: a ** after a comment or a continued line is one, each alone. */
	e2e_expect_result("f(1,\n**{S('y'): 1}), 3**2", "[[[\"str\",\"y\",1]],9]");
	e2e_expect_result("f(1, # c\n **{S('x'): 2}), (1)**2", "[[[\"str\",\"x\",2]],1]");
	e2e_expect_result("f(1, \\\n\t**{S('w'): 3}), [2][0] ** 3", "[[[\"str\",\"w\",3]],8]");
	e2e_expect_result("f(1,**{S('v'): 4}), 2.**2", "[[[\"str\",\"v\",4]],4.0]");
	/* A partialmethod's keywords: set as a plain copy, read as a read-only view. */
	e2e_expect_result(
	    "import functools\n"
	    "pm = functools.partialmethod(f)\n"
	    "pm.keywords = {S('z'): 3}\n"
	    "class P:\n"
	    "    m = pm\n"
	    "out = [P().m()]\n"
	    "for bad in [lambda: pm.keywords.update({S('y'): 1}),\n"
	    "            lambda: setattr(pm, 'keywords', {1: 2})]:\n"
	    "    try:\n"
	    "        bad()\n"
	    "    except (TypeError, AttributeError) as e:\n"
	    "        out.append(type(e).__name__)\n"
	    "out + [P().m()]",
	    "[[[\"str\",\"z\",3]],\"AttributeError\",\"TypeError\",[[\"str\",\"z\",3]]]");
	e2e_stop();
}

/* The C warn loop walks the warnings module's filters list borrowed and runs the code's there
 * (a category's metaclass __subclasscheck__, a message pattern's match): a catch_warnings exit
 * had made the code's own list the module's filters, a nested warn() in the callback replaced
 * it and freed it under the loop, and the code's bytes laid in its memory became a filter whose
 * pattern's match() got a fake bytearray over all memory. The filters list stays the one list
 * (catch_warnings sets it in place). */
Test(pylayer, a_warning_s_filters_live_while_they_are_walked)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import warnings, struct\n"
	    "grab = []\n"
	    "class C(bytearray):\n"
	    "    __slots__ = ()\n"
	    "    def match(self, text):\n"
	    "        if not grab:\n"
	    "            grab.append(self)\n"
	    "        return None\n"
	    "P = lambda *a: struct.pack('<%dQ' % len(a), *a)\n"
	    "ACTION = 'ignore'\n"
	    "# fake bytearray: 16 zero bytes (GC head), then the object\n"
	    "fake_ba_bytes = bytes(16) + P(1 << 40, id(C), 1 << 62, 1 << 62, 0, 0, 0)\n"
	    "FB = fake_ba_bytes\n"
	    "FB_addr = id(FB) + 32 + 16\n"
	    "fake_tuple_bytes = bytes(16) + P(1 << 40, id(tuple), 5, id(ACTION), FB_addr, "
	    "id(DeprecationWarning), id(None), id(0))\n"
	    "FT = fake_tuple_bytes\n"
	    "FT_addr = id(FT) + 32 + 16\n"
	    "spray_src = P(*([FT_addr] * 12))[:95]\n"
	    "spray = [None] * 64\n"
	    "IGN = [('ignore', None, Warning, None, 0)]\n"
	    "log = []\n"
	    "class M(type):\n"
	    "    def __subclasscheck__(cls, sub):\n"
	    "        log.append('called')\n"
	    "        if len(log) == 1:\n"
	    "            cw2 = warnings.catch_warnings()\n"
	    "            cw2.__enter__()\n"
	    "            cw2._filters = IGN\n"
	    "            cw2.__exit__(None, None, None)\n"
	    "            warnings.warn('inner', RuntimeWarning)\n"
	    "            for i in range(64):\n"
	    "                spray[i] = bytearray(spray_src)\n"
	    "        return False\n"
	    "class Evil(Warning, metaclass=M):\n"
	    "    pass\n"
	    "L = [('ignore', None, Evil, None, 0)] * 12\n"
	    "cw = warnings.catch_warnings()\n"
	    "cw.__enter__()\n"
	    "cw._filters = L\n"
	    "cw.__exit__(None, None, None)\n"
	    "del L\n"
	    "cw._filters = None\n"
	    "del cw\n"
	    "try:\n"
	    "    warnings.warn('outer', UserWarning)\n"
	    "    outcome = 'warned'\n"
	    "except Exception as e:\n"
	    "    outcome = type(e).__name__\n"
	    "with warnings.catch_warnings(record=True) as w:\n"
	    "    warnings.simplefilter('always')\n"
	    "    warnings.warn('kept', UserWarning)\n"
	    "r = [len(grab), outcome, len(log) > 0, [str(x.message) for x in w]]\n"
	    "r\n",
	    "[0,\"warned\",true,[\"kept\"]]");
	e2e_stop();
}

/* Decimal's comparisons take the current Context borrowed and then read a Rational's numerator
 * (a property of the code's): decimal.setcontext() there freed the Context in use, and the
 * comparison's status bit was written into the bytes object that took its memory. The
 * comparison (and format) holds the Context while it runs: the trap raises as for any NaN. */
Test(pylayer, a_decimal_comparison_keeps_its_context)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# default mode: decimal's C code holds the current Context borrowed (CURRENT_CONTEXT) "
	    "across\n"
	    "# the code's numerator property; setcontext() inside it frees that Context, the code "
	    "reuses its\n"
	    "# 96-byte block for an immutable bytes object, and dec_richcompare's dec_addstatus() "
	    "then ORs\n"
	    "# MPD_Invalid_operation (0x100) into it: the bytes object changes.\n"
	    "import decimal, fractions\n"
	    "decimal.setcontext(decimal.Context())\n"
	    "spray = [None] * 2000\n"
	    "class W(fractions.Fraction):\n"
	    "    @property\n"
	    "    def numerator(self):\n"
	    "        decimal.setcontext(decimal.Context())   # drops the only owner of the Context "
	    "in use\n"
	    "        for i in range(2000):\n"
	    "            spray[i] = bytes([64]) * 63         # 96-byte blocks, '@' = 0x40\n"
	    "        return 3\n"
	    "    @property\n"
	    "    def denominator(self):\n"
	    "        return 1\n"
	    "try:\n"
	    "    outcome = decimal.Decimal('NaN') < W(3, 1)\n"
	    "except decimal.InvalidOperation:\n"
	    "    outcome = 'InvalidOperation'\n"
	    "changed = [s for s in spray if s != b'@' * 63]\n"
	    "decimal.setcontext(decimal.Context(prec=6))\n"
	    "with decimal.localcontext() as c:\n"
	    "    c.prec = 3\n"
	    "    third = str(decimal.Decimal(1) / 3)\n"
	    "r = [outcome, len(changed), third, str(decimal.Decimal(2) / 3), "
	    "decimal.Decimal('1.5') <= fractions.Fraction(3, 2),\n"
	    "     format(decimal.Decimal('1234.5'), ',.1f')]\n"
	    "r\n",
	    "[\"InvalidOperation\",0,\"0.333\",\"0.666667\",true,\"1,234.5\"]");
	e2e_stop();
}

/* Context.__eq__ walks the first context's map borrowed and compares the values by their
 * __eq__: a decimal Context subclass's __eq__ set another decimal context inside c1.run(),
 * which replaced c1's map and freed the one being walked (fake nodes laid in its memory led
 * the walk to a fake bytearray over all memory). The comparison holds both maps. */
/* The address of one of the zygote's static symbols, from its symbol table: the Context test's
 * fake objects name CPython's static types, which lie at fixed offsets from int's type in the
 * built (non-PIE) zygote. Read at test time, so the attack reaches its fake object on any build. */
static unsigned long zygote_symbol(const char *name)
{
	char line[512], sym[256];
	unsigned long addr = 0, a;
	FILE *p = popen("nm -- '" SAFEPY_BIN "-zygote' 2>/dev/null", "re");

	cr_assert_not_null(p, "nm runs");
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%lx %*c %255s", &a, sym) == 2 && strcmp(sym, name) == 0)
			addr = a;
	pclose(p);
	cr_assert_neq(addr, 0, "%s is in the zygote's symbol table", name);
	return addr;
}

Test(pylayer, a_context_comparison_holds_both_maps)
{
	static const char attack[] =
	    "# default mode: Context.__eq__ (_PyHamt_Eq) walks the first Context's HAMT with "
	    "borrowed node\n"
	    "# pointers and compares values by the code's __eq__; decimal.setcontext() there, "
	    "while that\n"
	    "# Context is the running one (Context.run), frees the HAMT under the walk. The code "
	    "refills the\n"
	    "# freed node with a fake node that leads the walk to a fake value: a "
	    "bytearray-subclass object\n"
	    "# of size 2**62 over address 0, handed to the code's __eq__ as self -> arbitrary "
	    "read/write.\n"
	    "import asyncio, decimal, struct, array\n"
	    "P = lambda *a: struct.pack('<%dQ' % len(a), *a)\n"
	    "# (ARRAY_NODE, BITMAP_NODE: CPython's static types, at fixed offsets from int's type "
	    "in the\n"
	    "# non-PIE zygote; the test reads them from its symbol table)\n"
	    "grab = []\n"
	    "class C(bytearray):\n"
	    "    __slots__ = ()\n"
	    "    def __eq__(self, other):\n"
	    "        if not grab:\n"
	    "            grab.append(self)\n"
	    "        return False\n"
	    "    __hash__ = None\n"
	    "loop = asyncio.new_event_loop()\n"
	    "armed = [1]\n"
	    "spray = [None] * 256\n"
	    "class MyCtx(decimal.Context):\n"
	    "    def __eq__(self, other):\n"
	    "        if armed and armed.pop():\n"
	    "            decimal.setcontext(decimal.Context())     # frees the HAMT being walked\n"
	    "            for i in range(256):\n"
	    "                spray[i] = array.array('B', SPRAY)    # 57 items: a 63-byte buffer, "
	    "the freed node's 64-byte block\n"
	    "        return True\n"
	    "    __hash__ = object.__hash__\n"
	    "A, B = MyCtx(), MyCtx()\n"
	    "decimal.setcontext(A)\n"
	    "c1 = loop.call_soon(lambda: None)._context\n"
	    "decimal.setcontext(B)\n"
	    "c2 = loop.call_soon(lambda: None)._context\n"
	    "decimal.setcontext(decimal.Context())\n"
	    "var = next(iter(c2.keys()))                           # decimal's ContextVar, found "
	    "in c2\n"
	    "FBB = bytes(16) + P(1 << 40, id(C), 1 << 62, 1 << 62, 0, 0, 0)\n"
	    "FB = id(FBB) + 32 + 16                                # fake bytearray-subclass "
	    "object\n"
	    "NB = P(1 << 40, BITMAP_NODE, 2, 0, id(var), FB)       # fake bitmap node: (var, "
	    "fake)\n"
	    "NODE2 = id(NB) + 32\n"
	    "# the freed 64-byte node block (GC head, then the node): an array node whose slot 2 "
	    "leads to NODE2\n"
	    "SPRAY = (P(0, 0, 1 << 40, ARRAY_NODE, 0, 0, NODE2, 0))[:57]\n"
	    "r = [c1.run(lambda: c1 == c2), len(grab)]\n"
	    "x = next(iter(c1.values()))\n"
	    "r.append(type(x).__name__)\n"
	    "r\n";
	unsigned long int_type = zygote_symbol("PyLong_Type");
	char code[sizeof(attack) + 128];

	snprintf(code, sizeof(code), "ARRAY_NODE = id(int) + %ld\nBITMAP_NODE = id(int) + %ld\n%s",
	         (long)(zygote_symbol("_PyHamt_ArrayNode_Type") - int_type),
	         (long)(zygote_symbol("_PyHamt_BitmapNode_Type") - int_type), attack);
	e2e_start(NULL);
	e2e_expect_result(code, "[true,0,\"Context\"]");
	e2e_stop();
}

/* charmap_decode reads its input from the exception its error handler got (a copy) and calls
 * the code's mapping between bytes: the mapping dropped the exception's object, and the decoder
 * read on in freed memory (a tuple laid there came back as text: its item pointers). A mapping
 * other than a str or dict is read for the 256 bytes first; the text decodes as on the host. */
Test(pylayer, a_charmap_decoder_reads_only_its_input)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# codecs.charmap_decode with a mapping of the code's: after the error handler ran, "
	    "the C decoder\n"
	    "# reads its input from the exception's `object` (a bytes copy) through raw pointers, "
	    "\"held\" only\n"
	    "# by the exception. The mapping's __getitem__ (called for the next byte) drops the "
	    "exception's\n"
	    "# object (exc.object and exc.args set to other values): the bytes is freed while the "
	    "decoder\n"
	    "# goes on reading it. The code then allocates an object of the same size class in the "
	    "freed\n"
	    "# block; the decoder returns that object's memory as the decoded text.\n"
	    "import codecs\n"
	    "\n"
	    "saved = []\n"
	    "def keep(exc):\n"
	    "    saved.append(exc)                       # the code keeps the exception the codec "
	    "made\n"
	    "    return ('?', exc.end)\n"
	    "codecs.register_error('keep', keep)\n"
	    "\n"
	    "N = 200                                      # input of 202 bytes: bytes object of "
	    "235 -> 240-byte block\n"
	    "ITEMS = 25                                   # a tuple of 25 items: 16 + 24 + 8*25 = "
	    "240-byte block\n"
	    "state = {'armed': True}\n"
	    "spray = []\n"
	    "victims = [object() for _ in range(ITEMS)]\n"
	    "\n"
	    "class Mapping:\n"
	    "    def __getitem__(self, k):\n"
	    "        if k == 0xff:\n"
	    "            return None                      # undefined byte -> error handler -> "
	    "decoder switches to exc.object\n"
	    "        if saved and state['armed']:\n"
	    "            state['armed'] = False\n"
	    "            e = saved[0]\n"
	    "            freed = id(e.object)\n"
	    "            e.args = ()                      # the other reference to the bytes\n"
	    "            e.object = b'x'                  # the decoder's input is freed here\n"
	    "            t = tuple(victims)               # ... and a tuple of the code's takes "
	    "its block\n"
	    "            spray.append(t)\n"
	    "        return k                             # byte k decodes to U+00k\n"
	    "\n"
	    "data = b'\\xff' + b'A' * (N + 1)\n"
	    "out, n = codecs.charmap_decode(data, 'keep', Mapping())\n"
	    "raw = bytes(ord(c) % 256 for c in out[1:])\n"
	    "ptrs = [int.from_bytes(raw[7 + 8 * i: 15 + 8 * i], 'little') for i in range(ITEMS - "
	    "1)]\n"
	    "r = [n, out.count('A'), any(p == id(v) for p, v in zip(ptrs, victims)), out[:3]]\n"
	    "r\n",
	    "[202,201,false,\"?AA\"]");
	e2e_stop();
}

/* memoryview's hash took the view's memory and then hashed its exporter (an array.array
 * subclass's __hash__ of the code's), which released the view and emptied the array: the hash
 * was computed over the freed block, and byte by byte the code read back the tuple it laid
 * there (its item pointers: id() of its items). The exporter is hashed first, the view's bytes
 * after: a released view is refused; hashes equal the bytes' as on the host. */
Test(pylayer, a_memoryview_hashes_only_its_live_memory)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# default mode: memoryview.__hash__ takes view->buf, then calls hash() of the "
	    "exporting object\n"
	    "# (an array.array subclass's __hash__: the code's). That __hash__ releases the view "
	    "and empties\n"
	    "# the array (its buffer freed); the code allocates a tuple in the freed block, and "
	    "memoryview's\n"
	    "# hash is then computed over the freed block: each byte of the tuple's memory is "
	    "recovered by\n"
	    "# comparing with hash(bytes([x])) -> the tuple's type pointer and item pointers (== "
	    "id()).\n"
	    "import array\n"
	    "TABLE = {hash(bytes([x])): x for x in range(256)}\n"
	    "keep = []\n"
	    "class A(array.array):\n"
	    "    def __hash__(self):\n"
	    "        global cur\n"
	    "        v = cur; cur = None\n"
	    "        v.release()                     # last export of the array's buffer gone\n"
	    "        del self[:]                     # buffer (224-byte block) freed\n"
	    "        for i in range(64):             # 23 items: 16+24+8*23 = 224-byte GC blocks, "
	    "same size class\n"
	    "            keep.append(tuple(ITEMS))   # (several: the freed block's pool need not "
	    "be the first)\n"
	    "        return 1\n"
	    "ITEMS = [object() for _ in range(23)]\n"
	    "def read_byte(off):\n"
	    "    global cur\n"
	    "    del keep[:]\n"
	    "    a = A('B', b'\\xee' * 200)              # frombytes over-allocates: 215 bytes, "
	    "the 224-byte size class\n"
	    "    cur = memoryview(a).toreadonly()[off:off + 1]\n"
	    "    h = hash(cur)                       # hashes the freed block's byte at off\n"
	    "    return TABLE.get(h)\n"
	    "def read_q(off):\n"
	    "    bs = [read_byte(off + i) for i in range(8)]\n"
	    "    if None in bs:\n"
	    "        return None\n"
	    "    return int.from_bytes(bytes(bs), 'little')\n"
	    "# block layout of the tuple: gc(16) refcnt(8) type(8) size(8) items... -> the array's "
	    "buffer\n"
	    "# starts at the block start, so offset 24 is the type pointer, 32 the size, 40 item "
	    "0\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "q = t(lambda: read_q(40))\n"
	    "r = [q == id(ITEMS[0]) if isinstance(q, int) else q]\n"
	    "class H(array.array):\n"
	    "    def __hash__(self):\n"
	    "        return 5\n"
	    "r.append(hash(memoryview(H('B', b'xyz')).toreadonly()) == hash(b'xyz'))\n"
	    "r.append(hash(memoryview(b'abcdef')[::2]) == hash(b'ace'))\n"
	    "r\n",
	    "[\"ValueError\",true,true]");
	e2e_stop();
}

/* ElementTree's C accelerator read freed memory when a comparison of the user's emptied the
 * element it searched (find with a str whose __eq__ clears it, remove with an element whose
 * __eq__ does): the worker crashed. The module's own Python elements do the same work. */
Test(pylayer, elements_emptied_while_searched_do_not_crash_the_worker)
{
	e2e_start(NULL);
	e2e_expect_result("import xml.etree.ElementTree as ET\n"
	                  "class E(str):\n"
	                  "    def __eq__(self, o):\n"
	                  "        root.clear()\n"
	                  "        return False\n"
	                  "    __hash__ = str.__hash__\n"
	                  "root = ET.Element('a')\n"
	                  "root.append(ET.Element('b'))\n"
	                  "found = root.find(E('z'))\n"
	                  "class Evil(ET.Element):\n"
	                  "    def __eq__(self, o):\n"
	                  "        base.clear()\n"
	                  "        return False\n"
	                  "base = ET.Element('a')\n"
	                  "base.append(Evil('b'))\n"
	                  "try:\n"
	                  "    base.remove(ET.Element('c'))\n"
	                  "    removed = 'removed'\n"
	                  "except ValueError:\n"
	                  "    removed = 'ValueError'\n"
	                  "doc = ET.fromstring('<r><x k=\"1\">t</x><x k=\"2\"/></r>')\n"
	                  "[found, removed, len(root), [e.get('k') for e in doc.iter('x')],\n"
	                  " ET.tostring(doc).decode()[:8]]",
	                  "[null,\"ValueError\",1,[\"1\",\"2\"],\"<r><x k=\"]");
	e2e_stop();
}

/* An attrgetter or methodcaller the user's code made reads as the user wherever it runs: handed
 * to a library function that calls it (ElementTree's XML calls its parser target's close(),
 * HTMLParser's __init__ its reset(), heapq a key, through functools.partial), it ran with the
 * library's frame innermost, which the rules took for the library reading: a red team took the
 * authorizer off a connection (ATTACH then reached the file system) and read library
 * functions' code objects. Each attempt is refused, and the connection stays as it was. */
Test(pylayer, readers_handed_to_a_library_read_as_the_user)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import sqlite3, operator, functools, heapq, html.parser, zipfile\n"
	    "import xml.etree.ElementTree as ET\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def probe(c):\n"
	    "    try:\n"
	    "        c.execute(\"attach database '/etc/hostname' as x\")\n"
	    "        return 'attached'\n"
	    "    except sqlite3.DatabaseError as e:\n"
	    "        return str(e)\n"
	    "def under_library(fn, *a):\n"
	    "    class T:\n"
	    "        pass\n"
	    "    t = T()\n"
	    "    t.close = functools.partial(fn, *a)\n"
	    "    return ET.XML('<a/>', parser=ET.XMLParser(target=t))\n"
	    "c = sqlite3.connect(':memory:')\n"
	    "off = operator.methodcaller('set_authorizer', None)\n"
	    "class P(html.parser.HTMLParser):\n"
	    "    reset = functools.partial(off, c)\n"
	    "AG = type(operator.attrgetter('a'))\n"
	    "init = AG('__init__')(zipfile.ZipFile)\n"
	    "[attempt(lambda: under_library(off, c)), attempt(P),\n"
	    " attempt(lambda: heapq.nlargest(1, [c, c], key=off)),\n"
	    " attempt(lambda: under_library(AG('__code__'), init)),\n"
	    " attempt(lambda: under_library(AG('__defaults__'), init)),\n"
	    " attempt(lambda: under_library(operator.attrgetter('__kwdefaults__'), init)),\n"
	    " probe(c), probe(sqlite3.connect(':memory:'))]",
	    "[\"AttributeError\",\"AttributeError\",\"AttributeError\",\"AttributeError\","
	    "\"AttributeError\",\"AttributeError\",\"not authorized\",\"not authorized\"]");
	e2e_stop();
}

/* Closing a connection (or its cursor, or registering its function again, or running a
 * statement on it again from its text factory) from inside one of its callbacks crashed the
 * worker (3.11's sqlite3 went on with the freed statement): refused while a callback runs, as
 * ProgrammingError; the connection works on and closes after. */
Test(pylayer, a_connection_changed_from_its_own_callback_does_not_crash)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import sqlite3\n"
	    "con = sqlite3.connect(':memory:')\n"
	    "def attempt(sql):\n"
	    "    try:\n"
	    "        return con.execute(sql).fetchall()\n"
	    "    except sqlite3.Error as e:\n"
	    "        return type(e).__name__\n"
	    "con.create_function('f', 0, lambda: con.close())\n"
	    "con.create_function('h', 0, lambda: con.create_function('h', 0, None))\n"
	    "cur = con.cursor()\n"
	    "con.create_function('k', 0, lambda: cur.close())\n"
	    "con.execute('create table t(x)')\n"
	    "con.executemany('insert into t values (?)', [('b',), ('a',)])\n"
	    "con.create_collation('c', lambda a, b: (con.close(), 0)[1])\n"
	    "class Agg:\n"
	    "    def __init__(self):\n"
	    "        self.n = 0\n"
	    "    def step(self, v):\n"
	    "        self.n += v\n"
	    "    def finalize(self):\n"
	    "        return self.n\n"
	    "con.create_aggregate('total', 1, Agg)\n"
	    "c2 = sqlite3.connect(':memory:', cached_statements=0)\n"
	    "cur2 = c2.cursor()\n"
	    "def again(b):\n"
	    "    for _ in range(2):\n"
	    "        try:\n"
	    "            cur2.execute('select 1')\n"
	    "        except sqlite3.Error:\n"
	    "            pass\n"
	    "    return b.decode()\n"
	    "c2.text_factory = again\n"
	    "cur2.execute('select ?', ('x',))\n"
	    "got = [attempt('select f()'), attempt('select h()'), attempt('select k()'),\n"
	    "       attempt('select x from t order by x collate c'),\n"
	    "       attempt('select total(v) from (select 1 v union all select 2)'),\n"
	    "       attempt('select x from t order by x'), next(cur2)]\n"
	    "con.close()\n"
	    "got",
	    "[\"OperationalError\",\"OperationalError\",\"OperationalError\",\"ProgrammingError\","
	    "[[3]],[[\"a\"],[\"b\"]],[\"x\"]]");
	e2e_stop();
}

/* The sandbox's own SQL function (safepy_commits) stays its own: a str subclass whose lower()
 * answered another name registered over it (V87c L1). The name's characters are checked. */
Test(pylayer, sqlite3_s_own_function_name_is_reserved)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import sqlite3\n"
	    "con = sqlite3.connect(':memory:')\n"
	    "out = [con.execute('select safepy_commits()').fetchone()[0]]\n"
	    "class S(str):\n"
	    "    def lower(self):\n"
	    "        return 'mine'\n"
	    "for name in ('safepy_commits', S('safepy_commits'), S('SAFEPY_Commits')):\n"
	    "    try:\n"
	    "        con.create_function(name, 0, lambda: 12345)\n"
	    "        out.append('registered')\n"
	    "    except sqlite3.ProgrammingError:\n"
	    "        out.append('reserved')\n"
	    "con.create_function(S('mine'), 0, lambda: 7)\n"
	    "out + [con.execute('select safepy_commits()').fetchone()[0],\n"
	    "       con.execute('select mine()').fetchone()[0]]",
	    "[0,\"reserved\",\"reserved\",\"reserved\",0,7]");
	e2e_stop();
}

/* sqlite3 works on databases in memory; the authorizer every connection gets keeps them there
 * (no ATTACH of a file, no temporary store but memory, which may be asked for and set again)
 * and the user's code cannot take it off; extensions (native code) are
 * refused; a file name without a workspace is refused with what to do instead. fts3_tokenizer()
 * (it hands out a native pointer and calls through one it is given: a red team made it call
 * functions of its choosing) is gone from every database, a Connection made directly too. */
Test(pylayer, sqlite3_keeps_its_databases_in_memory)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import sqlite3\n"
	    "c = sqlite3.connect(':memory:')\n"
	    "c.execute('create table t(name text, n int)')\n"
	    "c.executemany('insert into t values (?, ?)', [('a', 1), ('b', 2), ('a', 3)])\n"
	    "c.execute(\"attach database ':memory:' as m\")\n"
	    "rows = c.execute('select name, sum(n) from t group by name order by "
	    "name').fetchall()\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'ran'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "tries = [attempt(lambda: c.set_authorizer(None)),\n"
	    "         attempt(lambda: sqlite3.Connection.set_authorizer(c, None)),\n"
	    "         attempt(lambda: c.enable_load_extension(True)),\n"
	    "         attempt(lambda: c.execute(\"attach database '/tmp/x.db' as x\")),\n"
	    "         attempt(lambda: c.execute('pragma temp_store = file')),\n"
	    "         attempt(lambda: c.execute('pragma temp_store = memory')),\n"
	    "         attempt(lambda: c.execute('pragma temp_store').fetchall()),\n"
	    "         attempt(lambda: sqlite3.connect('data.db')),\n"
	    "         attempt(lambda: sqlite3.connect('file:x?mode=memory', uri=True)),\n"
	    "         attempt(lambda: c.execute(\"select fts3_tokenizer('simple')\")),\n"
	    "         attempt(lambda: sqlite3.Connection(':memory:').execute(\n"
	    "             \"select fts3_tokenizer('simple', x'4141414141414141')\"))]\n"
	    "try:\n"
	    "    c.execute(\"attach database 'other.db' as o\")\n"
	    "    why = 'attached'\n"
	    "except sqlite3.DatabaseError as e:\n"
	    "    why = [str(e), getattr(e, '__notes__', [''])[0][:42]]\n"
	    "[rows, tries, c.execute('select count(*) from t').fetchone()[0], why]",
	    "[[[\"a\",4],[\"b\",2]],[\"AttributeError\",\"AttributeError\","
	    "\"AttributeError\",\"DatabaseError\",\"DatabaseError\",\"ran\",\"ran\","
	    "\"PermissionError\","
	    "\"PermissionError\",\"OperationalError\",\"OperationalError\"],3,"
	    "[\"not authorized\",\"ATTACH of a database file is not available\"]]");
	e2e_stop();
}

/* memoryview's item assignment took the view's memory before the key's __index__ ran (a tuple
 * key), or checked the view before it and used its old address after (a plain index): the
 * code's __index__ released the view and emptied the bytearray under it, bytes objects took the
 * freed block, and a view of bytes ('c') wrote the code's byte into one of them unchecked (an
 * immutable bytes object changed; twice: the lengths of a bytearray and a bytes, then all memory
 * and the real posix). The keys are made plain ints (a tuple of them, a slice of them) before
 * the view runs: the attack's view is found released (ValueError), as are reads, slices and a
 * value's own __index__; no bytes object changes; ordinary subscripts, their errors among them,
 * give what the host's CPython gives. */
Test(pylayer, a_memoryview_s_subscripts_take_their_keys_first)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# default mode: memoryview item assignment took view->buf, then ran the key's "
	    "__index__ (a tuple\n"
	    "# key), or used the old view->buf after it (a plain index); the __index__ releases "
	    "the view and\n"
	    "# frees the bytearray's buffer, bytes objects take the freed block, and the 'c' "
	    "format wrote\n"
	    "# the byte into one of them unchecked (an immutable bytes object changed).\n"
	    "keep = []\n"
	    "class Freeing:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def __index__(self):\n"
	    "        mv.release()                    # allowed: the view has no exports of its "
	    "own\n"
	    "        ba.clear()                      # its 64-byte buffer freed\n"
	    "        for i in range(200):            # bytes of length 31 take 64-byte blocks\n"
	    "            keep.append(bytes([0x30 + i % 10]) * 31)\n"
	    "        return self.v\n"
	    "def attempt(f, fmt='c'):\n"
	    "    global ba, mv\n"
	    "    ba = bytearray(b'A' * 63)           # 63 + 1: a 64-byte block\n"
	    "    mv = memoryview(ba).cast(fmt)\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        return 'ran' if r is None else 'read'\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "def put(k, v, view=None):\n"
	    "    (mv if view is None else view)[k] = v\n"
	    "attacks = []\n"
	    "for _ in range(3):\n"
	    "    attacks += [attempt(lambda: put(Freeing(40), b'Z')),\n"
	    "                attempt(lambda: put((Freeing(40),), b'Z')),\n"
	    "                attempt(lambda: mv.__setitem__((Freeing(40),), b'Z')),\n"
	    "                attempt(lambda: put(slice(Freeing(40), None), b'Z' * 23)),\n"
	    "                attempt(lambda: put(0, Freeing(90)), 'B'),\n"
	    "                attempt(lambda: mv[Freeing(40)]), attempt(lambda: "
	    "mv[(Freeing(40),)]),\n"
	    "                attempt(lambda: mv[Freeing(40):])]\n"
	    "changed = [b for b in keep if b != bytes([b[0]]) * 31]\n"
	    "class I:\n"
	    "    def __init__(self, v):\n"
	    "        self.v = v\n"
	    "    def __index__(self):\n"
	    "        return self.v\n"
	    "class J(int):\n"
	    "    pass\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        r = f()\n"
	    "        return r.tobytes().decode() if type(r) is memoryview else r\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "ba = bytearray(b'abcdefgh')\n"
	    "m = memoryview(ba)\n"
	    "m2 = m.cast('B', (2, 4))\n"
	    "m0 = memoryview(bytearray(b'\\x05')).cast('B', ())\n"
	    "reads = [t(f) for f in (\n"
	    "    lambda: m[0], lambda: m[-1], lambda: m[I(2)], lambda: m[J(3)], lambda: m[True],\n"
	    "    lambda: m[1:7:2], lambda: m[I(5):], lambda: m[::-1], lambda: m[I(1):I(-1):I(3)],\n"
	    "    lambda: m[(I(2),)], lambda: m[(-2,)], lambda: m.__getitem__(I(4)),\n"
	    "    lambda: m2[1, 2], lambda: m2[-1, -1], lambda: m2[I(1), I(-4)], lambda: m2[J(0), "
	    "3],\n"
	    "    lambda: m2[1:], lambda: m2[0], lambda: m2[(0,)], lambda: m2[0, 1, 2],\n"
	    "    lambda: m2[5, I(0)], lambda: m2[0, 9], lambda: m2[0:1, 0:1], lambda: m[10],\n"
	    "    lambda: m[I(2**70)], lambda: m['a'], lambda: m[...], lambda: m[I(0), 1],\n"
	    "    lambda: m[::I(0)], lambda: m[I(2**70):], lambda: m0[()], lambda: m0[I(0)])]\n"
	    "def set_(k, v, view=m):\n"
	    "    view[k] = v\n"
	    "    return ba.decode()\n"
	    "sets = [t(f) for f in (\n"
	    "    lambda: set_(0, 120), lambda: set_(-1, 122), lambda: set_(I(1), 121),\n"
	    "    lambda: set_(J(2), 65), lambda: set_(slice(2, 4), b'PQ'),\n"
	    "    lambda: set_(slice(I(4), I(6)), b'RS'), lambda: set_(slice(None, None, I(7)), "
	    "b'01'),\n"
	    "    lambda: set_((I(3),), 66), lambda: set_((1, I(3)), 33, m2),\n"
	    "    lambda: set_((I(0), -4), 90, m2), lambda: m.__setitem__(I(5), 67) or "
	    "ba.decode(),\n"
	    "    lambda: set_(I(2), b'q', m.cast('c')), lambda: set_(0, 256), lambda: set_(0, 1, "
	    "m2),\n"
	    "    lambda: set_(slice(0, 2), b'abc'), lambda: set_(I(99), 1), lambda: set_((I(0), "
	    "9), 1, m2),\n"
	    "    lambda: set_(slice(0, 1), b'a', m2), lambda: m.__delitem__(0),\n"
	    "    lambda: set_(I(0), 1, memoryview(b'abc')))]\n"
	    "[attacks[:8], attacks[8:] == attacks[:8] * 2, len(keep), len(changed), reads, sets]\n",
	    "[[\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\",\"ValueError\","
	    "\"ValueError\",\"ValueError\",\"ValueError\"],true,4800,0,[97,104,99,100,98,\"bdf\","
	    "\"fgh\",\"hgfedcba\",\"be\",99,103,101,103,104,101,100,\"efgh\","
	    "\"NotImplementedError\",\"NotImplementedError\",\"TypeError\",\"IndexError\","
	    "\"IndexError\",\"NotImplementedError\",\"IndexError\",\"IndexError\",\"TypeError\","
	    "\"TypeError\",\"TypeError\",\"ValueError\",\"\",5,\"TypeError\"],[\"xbcdefgh\","
	    "\"xbcdefgz\",\"xycdefgz\",\"xyAdefgz\",\"xyPQefgz\",\"xyPQRSgz\",\"0yPQRSg1\","
	    "\"0yPBRSg1\",\"0yPBRSg!\",\"ZyPBRSg!\",\"ZyPBRCg!\",\"ZyqBRCg!\",\"ValueError\","
	    "\"NotImplementedError\",\"ValueError\",\"IndexError\",\"IndexError\","
	    "\"NotImplementedError\",\"TypeError\",\"TypeError\"]]");
	e2e_stop();
}

/* A dict insert chose its table's kind before the lookup, which ran a stored key's __eq__: the
 * code cleared the dict there, the insert grew a str-only table from the shared empty one for a
 * bytes key, and str lookups read that key as a str whose data pointer the code wrote (memory
 * read at any address; SIGSEGV at an unmapped one). The shared empty table is of the general
 * kind: the key lands in a table for any key, and the dicts answer as dicts do. */
Test(pylayer, a_dict_cleared_under_its_insert_keeps_a_table_for_its_keys)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# a stored key's __eq__ clears the dict under an insert's lookup (d[k] = v and "
	    "setdefault); the\n"
	    "# new key is a bytes subclass, and str lookups of the dict would read it as a str "
	    "whose data\n"
	    "# pointer the code wrote (here: memory it owns, then an unmapped address)\n"
	    "import array\n"
	    "def make_table(content, how):\n"
	    "    armed = [True]\n"
	    "    class K(bytes):\n"
	    "        __hash__ = bytes.__hash__\n"
	    "        def __eq__(s, o):\n"
	    "            if armed[0] and s is first:\n"
	    "                armed[0] = False\n"
	    "                d.clear()\n"
	    "            return s is o\n"
	    "    d = {}\n"
	    "    first = K(content)\n"
	    "    d[first] = 1\n"
	    "    if how == 'set':\n"
	    "        d[K(content)] = 2\n"
	    "    else:\n"
	    "        d.setdefault(K(content), 2)\n"
	    "    return d\n"
	    "buf = array.array('B', bytes(48))\n"
	    "X = buf.buffer_info()[0]\n"
	    "content = bytes([0x84]) + b'A' * 39 + X.to_bytes(8, 'little')\n"
	    "r = []\n"
	    "for how in ('set', 'setdefault'):\n"
	    "    d = make_table(content, how)\n"
	    "    s = content.decode('latin-1')\n"
	    "    seen = [s in d]\n"
	    "    for i, c in enumerate(content):\n"
	    "        buf[i] = c\n"
	    "    seen.append(s in d)\n"
	    "    for i in range(48):\n"
	    "        buf[i] = 0\n"
	    "    far_key = bytes([0x84]) + b'A' * 39 + (0x414141414000).to_bytes(8, 'little')\n"
	    "    far = make_table(far_key, how)\n"
	    "    seen += [far_key.decode('latin-1') in far, len(d), list(d.values()), 'x' in d]\n"
	    "    r.append(seen)\n"
	    "# dicts cleared and filled again, updated from empty, and str-keyed ones work as "
	    "ever\n"
	    "a = {'x': 1, 2: 'two'}\n"
	    "a.clear()\n"
	    "a['y'] = 3\n"
	    "a[(1, 2)] = 4\n"
	    "b = {}\n"
	    "b.update({'k%d' % i: i for i in range(20)})\n"
	    "c = dict.fromkeys('abc', 0)\n"
	    "c.clear()\n"
	    "c.update(z=1)\n"
	    "r.append([sorted(map(repr, a)), a.get('y'), a[(1, 2)], sorted(b)[:3], b['k7'], c, "
	    "{**b}['k19'], 'k3' in b])\n"
	    "r\n",
	    "[[false,false,false,1,[2],false],[false,false,false,1,[2],false],[[\"'y'\",\"(1, "
	    "2)\"],3,4,[\"k0\",\"k1\",\"k10\"],7,{\"z\":1},19,true]]");
	e2e_stop();
}

/* A weak proxy's comparison handed its referent on without a reference of its own: the code made
 * an OrderedDict link (a weak proxy) point at an aware datetime of its own, whose comparison
 * called its utcoffset, which cleared the OrderedDict (the referent's last holder) and laid a
 * fake datetime in the freed block (its tzinfo a fake object handing the code a bytearray over
 * all memory). Every comparison holds its operands, whoever hands them over (the proxy's own
 * slot is CPython's): the comparison answers as on the host and the fake is never reached. */
Test(pylayer, a_weak_proxy_s_comparison_holds_its_referent)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# the pure-Python OrderedDict's links are weak proxies; the code chose what one "
	    "points to (an aware\n"
	    "# datetime of its own), and the proxy's comparison handed it on unowned: utcoffset "
	    "cleared the\n"
	    "# OrderedDict (the referent's last holder) and laid a fake datetime in its freed "
	    "block\n"
	    "import collections, datetime as dtm, struct\n" FAKE_DATETIME_HEAD
	    "class TZ(dtm.tzinfo):\n"
	    "    def __init__(s, n): s.n = n\n"
	    "    def utcoffset(s, dt):\n"
	    "        if s.n == 'a' and state['phase'] == 1:\n"
	    "            state['phase'] = 2\n"
	    "            od.clear()                         # drops the proxy's referent\n"
	    "        elif s.n == 'b' and state['phase'] == 2:\n"
	    "            state['phase'] = 3\n"
	    "            for _ in range(3000):\n"
	    "                spray.append(bytearray(FAKE_DT))\n"
	    "        return dtm.timedelta(0)\n" FAKE_DATETIME_BODY
	    "other = dtm.datetime(2020, 1, 1, tzinfo=TZ('b'))\n"
	    "od = collections.OrderedDict()\n"
	    "tmp = [D(2020, 1, 1, tzinfo=TZ('a'))]\n"
	    "od.__setitem__('k', 1, Link=lambda: tmp.pop())\n"
	    "p = od._OrderedDict__root.prev\n"
	    "state['phase'] = 1\n"
	    "r = [type(p).__name__, p == other, state['phase'], state.get('got')]\n"
	    "r\n",
	    "[\"ProxyType\",true,3,null]");
	e2e_stop();
}

/* So did a cell's comparison its contents: a class cell the code reached through its metaclass's
 * namespace and set by `nonlocal __class__` held an aware datetime, emptied by its utcoffset
 * under the comparison (a fake datetime laid in the freed block). The same holds the contents
 * (the cell's slot is CPython's). */
Test(pylayer, a_cell_s_comparison_holds_its_contents)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "# a class cell (reached through a metaclass's namespace, set by `nonlocal __class__`) "
	    "holds an\n"
	    "# aware datetime of the code's; the cells' comparison handed it on unowned: utcoffset "
	    "emptied\n"
	    "# the cell (the datetime's last holder) and laid a fake datetime in its freed block\n"
	    "import datetime as dtm, struct\n" FAKE_DATETIME_HEAD "class TZ(dtm.tzinfo):\n"
	    "    def __init__(s, n): s.n = n\n"
	    "    def utcoffset(s, dt):\n"
	    "        if s.n == 'a' and state['phase'] == 1:\n"
	    "            state['phase'] = 2\n"
	    "            X1().put(None)                     # empties the cell\n"
	    "        elif s.n == 'b' and state['phase'] == 2:\n"
	    "            state['phase'] = 3\n"
	    "            for _ in range(3000):\n"
	    "                spray.append(bytearray(FAKE_DT))\n"
	    "        return dtm.timedelta(0)\n" FAKE_DATETIME_BODY
	    "other = dtm.datetime(2020, 1, 1, tzinfo=TZ('b'))\n"
	    "cells = {}\n"
	    "class Meta(type):\n"
	    "    def __new__(mcls, name, bases, ns):\n"
	    "        if '__classcell__' in ns:\n"
	    "            cells[name] = ns['__classcell__']\n"
	    "        return type.__new__(mcls, name, bases, ns)\n"
	    "class X1(metaclass=Meta):\n"
	    "    def put(self, v):\n"
	    "        nonlocal __class__\n"
	    "        __class__ = v\n"
	    "class X2(metaclass=Meta):\n"
	    "    def put(self, v):\n"
	    "        nonlocal __class__\n"
	    "        __class__ = v\n"
	    "c1, c2 = cells['X1'], cells['X2']\n"
	    "X1().put(D(2020, 1, 1, tzinfo=TZ('a')))\n"
	    "X2().put(other)\n"
	    "state['phase'] = 1\n"
	    "r = [type(c1).__name__, c1 == c2, state['phase'], state.get('got')]\n"
	    "r\n",
	    "[\"cell\",true,3,null]");
	e2e_stop();
}

/* The memory freed while a comparison runs is kept until it returns (a lookup's check of its
 * table's address cannot be fooled), but not what the comparison made itself: a class's __eq__
 * that makes and drops three million lists, comparing each, reached as an operator, by a dict's
 * lookup and by a list's `in`, runs in 160 MiB. Keeping every block freed under it ran out of
 * memory. */
Test(pylayer, a_comparison_that_makes_and_drops_much_keeps_only_what_it_must)
{
	e2e_start(ARGS("--memory", "160M"));
	e2e_expect_result(
	    "class Big:\n"
	    "    def __init__(self, n): self.n = n\n"
	    "    def __hash__(self): return 1\n"
	    "    def __eq__(self, other):\n"
	    "        kept = []\n"
	    "        for i in range(self.n):\n"
	    "            x = [i, i * 7]                  # made and dropped at once\n"
	    "            if x == None:                   # a comparison inside this one\n"
	    "                kept.append(None)\n"
	    "            if i % 500000 == 0:\n"
	    "                kept.append(x)\n"
	    "        return len(kept) == self.n // 500000\n"
	    "n = 3000000\n"
	    "[Big(n) == Big(n), {Big(n): 'found'}[Big(n)], Big(n) in [Big(n)]]\n",
	    "[true,\"found\",true]");
	e2e_stop();
}

/* argparse and typing call vars() from their own frames on objects the code hands them and
 * give what it answers back to the code: a sub-parser answering type gave type's raw namespace
 * (its __subclasses__ refused by name), a library function's its __wrapped__; and tarfile's
 * gzip stream kept the real zlib module, whose namespace came the same way and which
 * parse_args(namespace=) wrote into (V71b H1-H2). Their vars() answers as the code's own does,
 * the stream keeps what it uses of zlib, and both still work. (The build before writes zlib's
 * crc32, and gzip fails after.) */
Test(pylayer, a_library_s_vars_answers_as_the_code_s)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import argparse, tarfile, io, typing, functools\n"
	    "def raw_vars(obj):\n"
	    "    class P:\n"
	    "        def parse_known_args(self, args, ns):\n"
	    "            return obj, []\n"
	    "    class Sink:\n"
	    "        def __init__(self):\n"
	    "            object.__setattr__(self, 'got', {})\n"
	    "        def __setattr__(self, k, v):\n"
	    "            self.got[k] = v\n"
	    "    sp = argparse.ArgumentParser().add_subparsers()\n"
	    "    sp._name_parser_map['x'] = P()\n"
	    "    sink = Sink()\n"
	    "    sp(None, sink, ['x'])\n"
	    "    return sink.got\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__\n"
	    "got = raw_vars(type)\n"
	    "z = tarfile.open(fileobj=io.BytesIO(), mode='w|gz').fileobj.zlib\n"
	    "p = argparse.ArgumentParser()\n"
	    "p.add_argument('--v', dest='crc32')\n"
	    "seen = [sorted(k for k in got if k.startswith('__')), '__subclasses__' in got,\n"
	    "        type(z).__name__ == 'module', attempt(lambda: sorted(raw_vars(z))),\n"
	    "        attempt(lambda: p.parse_args(['--v', 'x'], namespace=z) and 'set'),\n"
	    "        sorted(k for k in raw_vars(functools.lru_cache(lambda: 1)) if "
	    "k.startswith('__'))]\n"
	    "q = argparse.ArgumentParser(prog='q')\n"
	    "sub = q.add_subparsers(dest='cmd')\n"
	    "a = sub.add_parser('add')\n"
	    "a.add_argument('n', type=int)\n"
	    "ns, rest = q.parse_known_args(['add', '3', '--extra'])\n"
	    "class Base:\n"
	    "    x: int\n"
	    "class Child(Base):\n"
	    "    y: 'Base'\n"
	    "b = io.BytesIO()\n"
	    "with tarfile.open(fileobj=b, mode='w:gz') as t:\n"
	    "    data = b'hello'\n"
	    "    info = tarfile.TarInfo('a.txt')\n"
	    "    info.size = len(data)\n"
	    "    t.addfile(info, io.BytesIO(data))\n"
	    "with tarfile.open(fileobj=io.BytesIO(b.getvalue()), mode='r|gz') as t:\n"
	    "    names = [m.name for m in t]\n"
	    "seen + [[ns.cmd, ns.n, rest], sorted(typing.get_type_hints(Child)), names]\n",
	    "[[],false,false,\"TypeError\",\"AttributeError\",[],[\"add\",3,[\"--extra\"]],"
	    "[\"x\",\"y\"],[\"a.txt\"]]");
	e2e_stop();
}

/* pprint reads each field a dataclass lists with the interpreter's getattr, and a dataclass
 * beneath codecs.StreamReader forwards the read to any object: a field named '__get__' handed
 * the code a bound cached_property.__get__, which read a built-in type's own dict for it, and
 * type's own setters changed a library's class (json.JSONEncoder renamed) and re-based the
 * code's classes past the checks they had when they were made (V72b H1). A library's getattr by
 * a name from data answers no descriptor method, wrapped function or class order; type's
 * setters go through type.__setattr__'s checks; and a class given new bases by a library's
 * setattr is checked again (its old bases back on a refusal). (The build before hands over the
 * bound method.) */
Test(pylayer, a_class_changes_only_through_its_checks)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import argparse, pprint, dataclasses, codecs, functools, json\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ('cannot define' in str(e)) * ' refused'\n"
	    "got = []\n"
	    "class P(pprint.PrettyPrinter):\n"
	    "    def format(self, obj, context, maxlevels, level):\n"
	    "        got.append(obj)\n"
	    "        return ('X' * 50, True, False)\n"
	    "@dataclasses.dataclass\n"
	    "class D(codecs.StreamReader):\n"
	    "    stream: object = None\n"
	    "    errors: str = 'strict'\n"
	    "def leak(target, name):\n"
	    "    D.__dataclass_fields__['errors'].name = name\n"
	    "    del got[:]\n"
	    "    P(width=1).pformat(D(target))\n"
	    "    return got[2]\n"
	    "cp = functools.cached_property(lambda s: None)\n"
	    "class I(int):\n"
	    "    pass\n"
	    "class Cmp:\n"
	    "    def __lt__(self, o):\n"
	    "        return True\n"
	    "p = argparse.ArgumentParser()\n"
	    "p.add_argument('--x', dest='__bases__', default=(Cmp, int))\n"
	    "r = [attempt(lambda: type(leak(cp, '__get__')).__name__),\n"
	    "     attempt(lambda: type(leak(len, '__self__')).__name__),\n"
	    "     attempt(lambda: p.parse_args([], namespace=I) and 'set'),\n"
	    "     I(10 ** 9) < 0, issubclass(I, Cmp), json.JSONEncoder.__name__,\n"
	    "     leak(json.JSONEncoder(), 'indent')]\n"
	    "r\n",
	    "[\"AttributeError\",\"AttributeError\",\"TypeError refused\",false,false,"
	    "\"JSONEncoder\",null]");
	e2e_stop();
}

/* argparse sets each dest on the namespace it is given with the interpreter's setattr: a dest
 * of '__dict__' replaced a library object's whole state (logging.root's: logging failed for
 * the rest of the session) or a library function's namespace, which the code's own statement
 * may not. A library's setattr or delattr of '__dict__' or '__class__' by a name from data is
 * refused as the code's is; other dests, and the libraries' own such writes (dataclasses'
 * frozen classes), go on. */
Test(pylayer, a_library_s_setattr_replaces_no_namespace_by_a_name_from_data)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import argparse, logging, json, dataclasses\n"
	    "def set_via_argparse(obj, name, value):\n"
	    "    p = argparse.ArgumentParser()\n"
	    "    p.add_argument('--x', dest=name, default=value)\n"
	    "    return p.parse_args([], namespace=obj)\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return f()\n"
	    "    except Exception as e:\n"
	    "        return type(e).__name__ + ('named by data' in str(e)) * ' refused'\n"
	    "class Mine:\n"
	    "    pass\n"
	    "m = Mine()\n"
	    "@dataclasses.dataclass(frozen=True, slots=True)\n"
	    "class P:\n"
	    "    x: int\n"
	    "[attempt(lambda: set_via_argparse(json.loads, '__dict__', {'x': 1})),\n"
	    " attempt(lambda: set_via_argparse(logging.root, '__dict__', {})),\n"
	    " attempt(lambda: set_via_argparse(m, '__dict__', {'a': 1})), dict(vars(m)),\n"
	    " attempt(lambda: hasattr(json.loads, 'x')), attempt(lambda: logging.root.level),\n"
	    " vars(set_via_argparse(m, 'dest', 5)), repr(P(1)), attempt(lambda: setattr(P(1), 'x', "
	    "2))]\n",
	    "[\"AttributeError refused\",\"AttributeError refused\",\"AttributeError "
	    "refused\",{},false,30,{\"dest\":5},\"P(x=1)\",\"FrozenInstanceError\"]");
	e2e_stop();
}

/* Without a workspace, a library that asks for the working directory (logging's FileHandler
 * making a name absolute, contextlib.chdir saving where it was) is told what open is told:
 * there are no files (a bare EACCES said nothing), with the same error classes. */
Test(pylayer, the_working_directory_is_refused_as_files_are)
{
	e2e_start(NULL);
	e2e_expect_result("import logging, contextlib\n"
	                  "def attempt(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "        return 'ran'\n"
	                  "    except OSError as e:\n"
	                  "        return [type(e).__name__, 'no workspace was given' in str(e), "
	                  "isinstance(e, FileNotFoundError)]\n"
	                  "[attempt(lambda: logging.FileHandler('run.log')), attempt(lambda: "
	                  "contextlib.chdir('/').__enter__()),\n"
	                  " attempt(lambda: logging.FileHandler('/tmp/run.log'))]\n",
	                  "[[\"PermissionError\",true,true],[\"PermissionError\",true,true],["
	                  "\"PermissionError\",true,true]]");
	e2e_stop();
}

/* CPython substitutes a generic alias's parameters in C, reading __typing_subst__ and its kin
 * by name and trusting the answers: an argument whose __getattr__ said it was unpacked had its
 * substitution spliced in as a tuple (a complex read as a tuple whose item was any address: a
 * forged bytearray over all memory, V74b H1); one that answered only later was looked up at
 * index -1; a lookup that raised left a NULL used. Substitution takes types, typing's
 * variables and forms and aliases of them; what answers those names otherwise is refused, and
 * ordinary substitutions answer as CPython's. */
Test(pylayer, generic_aliases_substitute_only_what_answers_as_the_libraries)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import typing, enum, collections.abc as cabc\n"
	    "from typing import TypeVar, ParamSpec, TypeVarTuple\n"
	    "T = TypeVar('T'); K = TypeVar('K'); P = ParamSpec('P'); Ts = TypeVarTuple('Ts')\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return repr(f())\n"
	    "    except BaseException as e:\n"
	    "        return type(e).__name__\n"
	    "class Unpacked:\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == '__typing_subst__':\n"
	    "            return lambda x: complex(5e-324, 0.0)\n"
	    "        if name == '__typing_is_unpacked_typevartuple__':\n"
	    "            return True\n"
	    "        raise AttributeError(name)\n"
	    "class Late:\n"
	    "    armed = False\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == '__typing_subst__' and Late.armed:\n"
	    "            return lambda x: int\n"
	    "        raise AttributeError(name)\n"
	    "class Raising:\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == '__typing_unpacked_tuple_args__':\n"
	    "            raise ValueError(name)\n"
	    "        raise AttributeError(name)\n"
	    "class Own:\n"
	    "    __typing_subst__ = staticmethod(lambda x: x)\n"
	    "class Mine:\n"
	    "    pass\n"
	    "class E(enum.Enum):\n"
	    "    A = 1\n"
	    "late = list[T, Late()]\n"
	    "Late.armed = True\n"
	    "[attempt(lambda: list[Unpacked()][int]), attempt(lambda: late[str]),\n"
	    " attempt(lambda: list[T][Raising()]), attempt(lambda: list[T][*typing.Mapping[..., "
	    "...]]),\n"
	    " attempt(lambda: list[T][Own]), attempt(lambda: (int | list[T])[Unpacked()]),\n"
	    " attempt(lambda: dict[K, T][str, Mine]), attempt(lambda: list[T][E]),\n"
	    " attempt(lambda: cabc.Callable[P, T][[int, str], bool]), attempt(lambda: tuple[T, "
	    "*Ts][int, str, float]),\n"
	    " attempt(lambda: (int | list[T])[str]), attempt(lambda: "
	    "list[T][typing.Optional[int]])]\n",
	    "[\"TypeError\",\"TypeError\",\"TypeError\",\"TypeError\",\"TypeError\",\"TypeError\","
	    "\"dict[str, __main__.Mine]\",\"list[__main__.E]\",\"collections.abc.Callable[[int, "
	    "str], bool]\",\"tuple[int, str, float]\",\"int | "
	    "list[str]\",\"list[typing.Optional[int]]\"]");
	e2e_stop();
}

/* globals()[f'df_{name}'] = ... said only that a mappingproxy takes no assignment: the snapshot
 * globals() answers says what it is and what to do instead, and reads as before. */
Test(pylayer, globals_says_it_is_a_snapshot_when_written_to)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "x = 1\n"
	    "g = globals()\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "    except TypeError as e:\n"
	    "        return 'read-only snapshot' in str(e) and 'frames = {}' in str(e)\n"
	    "[attempt(lambda: g.__setitem__('df_a', 1)), attempt(lambda: g.update(y=2)),\n"
	    " attempt(lambda: g.setdefault('z', 3)), g['x'], g.get('x'), 'x' in g,\n"
	    " sorted(g)[-1], dict(g)['x'], list(g.items())[-1], 'df_a' in globals()]",
	    "[true,true,true,1,1,true,\"x\",1,[\"x\",1],false]");
	e2e_stop();
}

/* A C class's slot a guard replaced was still called the old way: by the classes beneath it
 * the zygote had made (traceback's StackSummary, a list, kept list's slice assignment, which
 * sized a slice before the code's __iter__ shrank the list and wrote past it, V75b H2), and by
 * the wrapper in the class's dict (GenericAlias.__getitem__, as collections.abc's Callable
 * alias calls it, V75b H1). A namespace's keys of a str class of the code's passed for other
 * names (V75b H3). Each reaches the guard now. */
Test(pylayer, replaced_slots_are_reached_by_every_route)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import traceback, types, typing, collections.abc as cabc\n"
	    "T = typing.TypeVar('T')\n"
	    "def attempt(f):\n"
	    "    try:\n"
	    "        return repr(f())\n"
	    "    except BaseException as e:\n"
	    "        return type(e).__name__\n"
	    "L = traceback.StackSummary([0] * 8)\n"
	    "victim = [0] * 4\n"
	    "class V:\n"
	    "    def __iter__(self):\n"
	    "        del L[4:]\n"
	    "        return iter(['OVERWRITTEN'] * 8)\n"
	    "class Unpacked:\n"
	    "    def __getattr__(self, name):\n"
	    "        if name == '__typing_subst__':\n"
	    "            return lambda x: complex(5e-324, 0.0)\n"
	    "        if name == '__typing_is_unpacked_typevartuple__':\n"
	    "            return True\n"
	    "        raise AttributeError(name)\n"
	    "class Name(str):\n"
	    "    def __hash__(self):\n"
	    "        return hash(self.real)\n"
	    "    def __eq__(self, other):\n"
	    "        return other == self.real\n"
	    "a, b = Name('k1'), Name('k2')\n"
	    "a.real, b.real = '__typing_subst__', '__typing_is_unpacked_typevartuple__'\n"
	    "ns = types.SimpleNamespace(**{a: lambda x: complex(5e-324, 0.0), b: True})\n"
	    "[attempt(lambda: L.__setitem__(slice(7, None, -1), V())), len(L), victim,\n"
	    " attempt(lambda: types.GenericAlias.__getitem__(list[T], Unpacked())),\n"
	    " attempt(lambda: list.__class_getitem__(T).__getitem__(Unpacked())),\n"
	    " attempt(lambda: cabc.Callable[[Unpacked()], int][int]), attempt(lambda: "
	    "list[ns][int]),\n"
	    " attempt(lambda: types.GenericAlias.__getitem__(list[T], int))]\n",
	    "[\"ValueError\",4,[0,0,0,0],\"TypeError\",\"TypeError\",\"TypeError\",\"TypeError\","
	    "\"list[int]\"]");
	e2e_stop();
}

/* open(os.devnull, 'w') silences a library (redirect_stdout); it was refused as any file. It is
 * a sink that reads as empty, without a workspace and with one; no file is opened. */
Test(pylayer, the_null_device_takes_what_is_written)
{
	e2e_start(NULL);
	e2e_expect_result("import contextlib, io\n"
	                  "buf = io.StringIO()\n"
	                  "with contextlib.redirect_stdout(buf):\n"
	                  "    with open('/dev/null', 'w') as f, contextlib.redirect_stdout(f):\n"
	                  "        print('hidden')\n"
	                  "    print('shown')\n"
	                  "with open('/dev/null', 'rb') as g:\n"
	                  "    r = g.read()\n"
	                  "with open(b'/dev/null', 'a', encoding='latin-1') as h:\n"
	                  "    n = h.write('x' * 10)\n"
	                  "def attempt(f):\n"
	                  "    try:\n"
	                  "        f()\n"
	                  "    except OSError as e:\n"
	                  "        return type(e).__name__\n"
	                  "def mode(m):\n"
	                  "    try:\n"
	                  "        return open('/dev/null', m).mode\n"
	                  "    except (ValueError, OSError) as e:\n"
	                  "        return type(e).__name__\n"
	                  "[buf.getvalue(), len(r), n, attempt(lambda: open('/dev/zero')),\n"
	                  " open('/dev/null').read(), mode('x'), mode('rwb'), mode('r+')]",
	                  "[\"shown\\n\",0,10,\"PermissionError\",\"\",\"FileExistsError\","
	                  "\"ValueError\",\"r+\"]");
	e2e_stop();
}

/* CPython 3.11's contextvar_set drops the context's old map before it writes the variable's
 * cache (borrowed): a __del__ of the value only the old map held that set the same variable
 * left the cache naming a value only a token held, freed with it, and get() handed the freed
 * object out (a forged bytearray over all memory: V81b H1); decimal's setcontext the same with
 * its own variable (getcontext() answered a freed Context). The build before crashes. The sets
 * now run with the old map held: the cache names what the map holds. */
Test(pylayer, a_context_variable_answers_what_its_map_holds)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import asyncio, decimal\n"
	    "decimal.getcontext()\n"
	    "async def grab():\n"
	    "    return asyncio.get_running_loop().call_soon(print)._context\n"
	    "CV = type(list(asyncio.run(grab()))[0])\n"
	    "v = CV('v')\n"
	    "class C:\n"
	    "    def __del__(self):\n"
	    "        v.set('E')\n"
	    "class O(float):\n"
	    "    __slots__ = ('a', 'b', 'c', 'd', 'e')\n"
	    "v.set(O(1.5))\n"
	    "t = v.set(C())\n"
	    "v.reset(t)\n"
	    "del t\n"
	    "spray = [bytearray(79) for _ in range(64)]\n"
	    "r = [type(v.get()).__name__, v.get()]\n"
	    "class D(decimal.Context):\n"
	    "    def __del__(self):\n"
	    "        decimal.setcontext(decimal.Context(prec=5))\n"
	    "decimal.setcontext(D(prec=7))\n"
	    "decimal.setcontext(decimal.Context(prec=9))\n"
	    "spray = [bytearray(200) for _ in range(64)]\n"
	    "r + [type(decimal.getcontext()).__name__, decimal.getcontext().prec in (5, 9),\n"
	    "     str(decimal.Decimal(1) / 3)[:4]]\n",
	    "[\"str\",\"E\",\"Context\",true,\"0.33\"]");
	e2e_stop();
}

/* A chain of a million iterators or wrappers, each holding the next (x = filter(None, x) in a
 * loop), is freed without a C frame for each link: CPython 3.11.2 gave these types no trashcan,
 * and freeing the chain overflowed the worker's stack (the call crashed, the session rolled
 * back). Each type is freed here at that depth; the call ends ok and keeps its state. */
Test(pylayer, long_chains_of_iterators_and_wrappers_are_freed)
{
	e2e_start(ARGS("--memory", "2G", "--timeout", "200"));
	e2e_expect_result(
	    "import collections as c, functools as ft, itertools as i, operator as o, types as t\n"
	    "f = lambda v: v\n"
	    "mk = [lambda x: filter(None, x), lambda x: enumerate(x), staticmethod, classmethod,\n"
	    "      property, lambda x: slice(1, 2, x),\n"
	    "      lambda x: t.MappingProxyType(x if type(x) is not list else {}),\n"
	    "      lambda x: t.MethodType(f, x), lambda x: iter(f, x), lambda x: o.itemgetter(x),\n"
	    "      lambda x: c.deque([x]), lambda x: iter(c.deque([x])),\n"
	    "      lambda x: c.defaultdict(None, a=x), lambda x: ft.cmp_to_key(f)(x),\n"
	    "      lambda x: i.islice(x, 1), lambda x: i.takewhile(f, x), lambda x: i.dropwhile(f, "
	    "x),\n"
	    "      lambda x: i.starmap(f, x), lambda x: i.accumulate(x), lambda x: i.compress(x, "
	    "x),\n"
	    "      lambda x: i.filterfalse(f, x), lambda x: i.cycle(x), lambda x: i.pairwise(x),\n"
	    "      lambda x: i.groupby(x), lambda x: i.zip_longest((), fillvalue=x),\n"
	    "      lambda x: i.repeat(x), lambda x: i.accumulate((), initial=x)]\n"
	    "freed = []\n"
	    "def chains(ms):\n"
	    "    for m in ms:\n"
	    "        x = []\n"
	    "        for _ in range(1_000_000):\n"
	    "            x = m(x)\n"
	    "        del x\n"
	    "        freed.append(m)\n"
	    "len(mk)",
	    "27");
	/* (in three calls, each well inside a call's time here) */
	e2e_expect_result("chains(mk[:9])\nlen(freed)", "9");
	e2e_expect_result("chains(mk[9:18])\nlen(freed)", "18");
	e2e_expect_result("chains(mk[18:])\nlen(freed)", "27");
	e2e_expect_result(
	    "def part(x):\n"
	    "    p = ft.partial(x if callable(x) else print)\n"
	    "    p.a = 1  # (a partial with attributes is not flattened)\n"
	    "    return p\n"
	    "chains([part, lambda x: i.chain.from_iterable(x),\n"
	    "        lambda x: t.GenericAlias(x if type(x) is not list else int, ()),\n"
	    "        lambda x: super(super, x) if type(x) is super else super(int, 1)])\n"
	    "len(freed)",
	    "31");
	/* map, an async generator's asend and anext's awaitable, a namedtuple's field, json's
	 * scanner and encoder, csv's reader; and frozensets, whose deallocator the worker wraps
	 * (CPython's own bracket names the slot it had) */
	e2e_expect_result(
	    "import csv, json\n"
	    "async def ag():\n"
	    "    yield\n"
	    "a = ag()\n"
	    "field = type(c.namedtuple('P', 'a').a)\n"
	    "enc = json.encoder\n"
	    "chains([lambda x: map(x, ()), lambda x: a.asend(x), lambda x: anext(a, x),\n"
	    "        lambda x: field(0, x), lambda x: json.JSONDecoder(object_hook=x).scan_once,\n"
	    "        lambda x: enc.c_make_encoder(None, x, enc.encode_basestring, None, ':', ',',\n"
	    "                                     False, False, False),\n"
	    "        lambda x: csv.reader(x), lambda x: frozenset([x] if type(x) is not list else "
	    "())])\n"
	    "len(freed)",
	    "39");
	/* sqlite's cursors (whose deallocator the worker wraps), each the next one's row factory,
	 * functools' caches, each over the next; io's newline decoder is not a collected type: one is not another's decoder */
	e2e_expect_result("import sqlite3, io\n"
	                  "con = sqlite3.connect(':memory:')\n"
	                  "x = None\n"
	                  "for _ in range(300_000):\n"
	                  "    c = con.cursor()\n"
	                  "    c.row_factory = x\n"
	                  "    x = c\n"
	                  "del c, x\n"
	                  "L = type(ft.lru_cache(None)(abs))\n"
	                  "x = abs\n"
	                  "for _ in range(1_000_000):\n"
	                  "    x = L(x, None, False, tuple)\n"
	                  "del x\n"
	                  "d = io.IncrementalNewlineDecoder(None, True)\n"
	                  "try:\n"
	                  "    io.IncrementalNewlineDecoder(d, True)\n"
	                  "    r = 'taken'\n"
	                  "except TypeError as e:\n"
	                  "    r = str(e)\n"
	                  "[r, d.decode('a\\r\\nb', final=True), len(freed)]",
	                  "[\"an IncrementalNewlineDecoder's decoder is not another one in the "
	                  "sandbox\",\"a\\nb\",39]");
	/* a subclass's instances (CPython's own bracket, then the base's deallocator) */
	e2e_expect_result("class P(property):\n"
	                  "    pass\n"
	                  "class F(filter):\n"
	                  "    pass\n"
	                  "x = []\n"
	                  "for _ in range(1_000_000):\n"
	                  "    x = P(x)\n"
	                  "del x\n"
	                  "y = []\n"
	                  "for _ in range(1_000_000):\n"
	                  "    y = F(None, y)\n"
	                  "del y\n"
	                  "len(freed)",
	                  "39");
	e2e_stop();
}

/* A tuple's hash, a generic alias's hash and attribute reads and a classmethod's __get__ go
 * into what they hold with a C call a level and no depth count: a million levels overflowed
 * the worker's stack (SIGSEGV; the host's too). Past 10,000 levels they raise RecursionError;
 * nesting short of that answers as before. */
Test(pylayer, nested_hashes_and_reads_stop_at_a_depth)
{
	e2e_start(ARGS("--memory", "2G", "--timeout", "100"));
	e2e_expect_result(
	    "import types, collections\n"
	    "def nest(m, n, x):\n"
	    "    for _ in range(n):\n"
	    "        x = m(x)\n"
	    "    return x\n"
	    "P = collections.namedtuple('P', 'a b')\n"
	    "deep = [nest(lambda x: (x,), 1_000_000, ()),\n"
	    "        nest(lambda x: P(x, 1), 1_000_000, ()),\n"
	    "        nest(lambda x: types.GenericAlias(x, ()), 1_000_000, list)]\n"
	    "class C:\n"
	    "    m = nest(classmethod, 1_000_000, len)\n"
	    "def why(f):\n"
	    "    try:\n"
	    "        f()\n"
	    "        return 'answered'\n"
	    "    except RecursionError as e:\n"
	    "        return str(e)[-35:]\n"
	    "[why(lambda: hash(deep[0])), why(lambda: hash(deep[1])),\n"
	    " why(lambda: hash(deep[2])), why(lambda: deep[2].foo), why(lambda: C.m)]",
	    "[\"(more than 10000 levels of nesting)\",\"(more than 10000 levels of "
	    "nesting)\",\"(more than 10000 levels of nesting)\",\"(more than 10000 "
	    "levels of nesting)\",\"(more than 10000 levels of nesting)\"]");
	e2e_expect_result(
	    "t = nest(lambda x: (x, 1), 5000, ())\n"
	    "u = nest(lambda x: (x, 1), 5000, ())\n"
	    "k = nest(lambda x: (x, 'k'), 500, ())\n"
	    "g = nest(lambda x: types.GenericAlias(x, (int,)), 5000, dict)\n"
	    "class D:\n"
	    "    m = nest(classmethod, 2, lambda *a: [x.__name__ for x in a])\n"
	    "[hash(t) == hash(u), hash(t) != hash(k), {k: 1}[nest(lambda x: (x, 'k'), 500, ())],\n"
	    " g.__origin__ is not None, hash(g) == hash(g), D.m(), deep.clear()]",
	    "[true,true,1,true,true,[\"D\"],null]");
	/* a bound method's hash and attributes, a generic alias's call (and a subclass's made
	 * before the worker started: collections.abc's Callable), a partial's call (each with an
	 * attribute: none folds into the next), abc's reading of
	 * __isabstractmethod__ through classmethods, the next item through nested iterators */
	e2e_expect_result(
	    "import abc, collections.abc, functools\n"
	    "def part(x):\n"
	    "    p = functools.partial(x, 1)\n"
	    "    p.x = 1\n"
	    "    return p\n"
	    "pa = nest(part, 1_000_000, max)\n"
	    "m = nest(lambda x: types.MethodType(x, 1), 1_000_000, len)\n"
	    "ga = nest(lambda x: types.GenericAlias(x, (int,)), 1_000_000, list)\n"
	    "C = type(collections.abc.Callable[[int], str])\n"
	    "ca = nest(lambda x: C(x, ([], int)), 1_000_000, int)\n"
	    "it = nest(lambda x: map(tuple, filter(None, enumerate(x))), 400_000, [1])\n"
	    "cm = nest(classmethod, 1_000_000, len)\n"
	    "def make():\n"
	    "    class A(abc.ABC):\n"
	    "        f = cm\n"
	    "[why(lambda: hash(m)), why(lambda: m.foo), why(lambda: ga()), why(lambda: hash(ca)),\n"
	    " why(lambda: ca.foo), why(lambda: next(it)), why(make),\n"
	    " [x for x in map(tuple, filter(None, enumerate([3, 4])))], why(pa),\n"
	    " nest(part, 300, max)(2), deep.clear()]",
	    "[\"(more than 10000 levels of nesting)\",\"(more than 10000 levels of nesting)\","
	    "\"eeded while calling a Python object\",\"(more than 10000 levels of nesting)\","
	    "\"(more than 10000 levels of nesting)\",\"(more than 10000 levels of nesting)\","
	    "\"(more than 10000 levels of nesting)\",[[0,3],[1,4]],"
	    "\"eeded while calling a Python object\",2,null]");
	e2e_stop();
}

/* A function takes its builtins from its globals' __builtins__ when it is made: a module put
 * there gave the functions made after it that module's namespace by bare names, past the
 * attribute rules (a module's __getattr__ read as a name). The name cannot be assigned or
 * deleted at the top level or as a global; a function's local of that name is its own. */
Test(pylayer, builtins_cannot_be_replaced_by_assignment)
{
	json_object *r;

	e2e_start(NULL);
	r = e2e_expect_error("import json\n"
	                     "__builtins__ = json\n"
	                     "def grab():\n"
	                     "    return __getattr__\n"
	                     "grab()",
	                     "NameError");
	cr_assert(strstr(mcpc_json(r), "__builtins__ cannot be assigned in the sandbox (line 2)"),
	          "%s", mcpc_json(r));
	e2e_expect_error("import json as __builtins__", "NameError");
	e2e_expect_error("def f():\n"
	                 "    global __builtins__\n"
	                 "    del __builtins__\n",
	                 "NameError");
	e2e_expect_error("for __builtins__ in [1]:\n"
	                 "    pass",
	                 "NameError");
	e2e_expect_result("def f():\n"
	                  "    __builtins__ = 1\n"
	                  "    return __builtins__\n"
	                  "def g():\n"
	                  "    return len('ab')\n"
	                  "[f(), g(), 'json' in dir()]",
	                  "[1,2,false]");
	/* nor given to a library's eval as its globals' (typing's of an annotation): the
	 * sandbox's builtins instead */
	e2e_expect_result("import typing, json\n"
	                  "hold = []\n"
	                  "def f(x: '(hold.append(lambda: __getattr__), int)[1]'):\n"
	                  "    pass\n"
	                  "typing.get_type_hints(f, globalns={'__builtins__': json, 'hold': hold,\n"
	                  "                                   'int': int})\n"
	                  "try:\n"
	                  "    r = repr(hold[0]())\n"
	                  "except NameError as e:\n"
	                  "    r = str(e)\n"
	                  "r",
	                  "\"name '__getattr__' is not defined\"");
	e2e_stop();
}

/* The East Asian codecs are compiled modules, which a worker cannot load: they are loaded in
 * the zygote, and their encodings' Python finds them (shift_jis was an unknown encoding). */
Test(pylayer, east_asian_codecs_encode_and_decode)
{
	e2e_start(NULL);
	e2e_expect_result(
	    "import codecs\n"
	    "pairs = [('\\u3042', 'shift_jis'), ('\\u4e2d', 'gbk'), ('\\u4e2d', 'big5'),\n"
	    "         ('\\ud55c', 'euc_kr'), ('\\u3042', 'iso2022_jp'), ('\\u4e2d\\u6587', "
	    "'gb18030'),\n"
	    "         ('\\u3042', 'cp932')]\n"
	    "enc = [s.encode(c).hex() for s, c in pairs]\n"
	    "back = all(bytes.fromhex(h).decode(c) == s for h, (s, c) in zip(enc, pairs))\n"
	    "d = codecs.getincrementaldecoder('shift_jis')()\n"
	    "[enc, back, d.decode(b'\\x82'), d.decode(b'\\xa0') == '\\u3042',\n"
	    " b'\\x82'.decode('shift_jis', 'replace') == '\\ufffd']",
	    "[[\"82a0\",\"d6d0\",\"a4a4\",\"c7d1\",\"1b244224221b2842\",\"d6d0cec4\",\"82a0\"],"
	    "true,\"\","
	    "true,true]");
	/* A decoder's setstate copied any state into the codec: an iso2022 decoder then read a
	 * character set it does not have past its table and called what it found there
	 * (SIGSEGV). It takes the states getstate gave (a text stream's tell and seek), or its
	 * own. */
	e2e_expect_result(
	    "import io\n"
	    "out = []\n"
	    "def t(f):\n"
	    "    try:\n"
	    "        out.append(f())\n"
	    "    except ValueError:\n"
	    "        out.append('refused')\n"
	    "jp = codecs.getincrementaldecoder('iso2022_jp')\n"
	    "d = jp()\n"
	    "t(lambda: d.setstate((b'', 0)))\n"
	    "t(lambda: d.setstate((b'', 0x4242C1)))\n"
	    "t(lambda: type(d).mro()[1].setstate(d, (b'', 0)))\n"
	    "e = jp()\n"
	    "e.decode(b'\\x1b$B')\n"
	    "kr = codecs.getincrementaldecoder('iso2022_kr')()\n"
	    "t(lambda: kr.setstate(e.getstate()))\n"
	    "t(lambda: d.setstate(e.getstate()))\n"
	    "t(lambda: d.decode(b'0!') == '\\u4e9c')\n"
	    "f = io.TextIOWrapper(io.BytesIO('abc\\u3042def\\u3044g\\n'.encode('iso2022_jp')),\n"
	    "                     encoding='iso2022_jp')\n"
	    "a = f.read(4)\n"
	    "p = f.tell()\n"
	    "b = f.read(3)\n"
	    "f.seek(p)\n"
	    "t(lambda: f.seek(p + (1 << 70)))\n"
	    "out + [a == 'abc\\u3042', b, f.read() == 'def\\u3044g\\n']",
	    "[\"refused\",\"refused\",\"refused\",\"refused\",null,true,\"refused\",true,\"def\","
	    "true]");
	e2e_stop();
}
