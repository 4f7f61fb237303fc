/* pycompile.c - a call's program compiled from CPython's own syntax tree, in C. A program
 * whose source names no import (nothing to rewrite) is parsed once into the parser's C tree,
 * split the way interp.c's program_build splits it (the last expression or assigned value
 * apart, so that its value is the call's result) and compiled from that tree: the same code
 * objects as the route through the ast module's Python objects, without making one Python
 * object per node. That route's objects and classes are most of the pages a call's freshly
 * forked process writes before its code runs, and a first write to a page after a fork is the
 * dearest thing a call does on some machines. The parser and the tree's constructors are
 * internal to CPython 3.11 and not exported by its shared library: this file is built only when
 * CPython is linked statically (SAFEPY_C_PARSER). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_ast.h"
#include "internal/pycore_compile.h"
#include "internal/pycore_parser.h"
#include "internal/pycore_pyarena.h"

#include "worker_internal.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pycompile.c builds on CPython 3.11's syntax tree"
#endif

/* compile(tree, filename, mode, PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True) of a tree
 * already in C (interp.c runs a program that awaits at its top level on an event loop). */
static PyObject *compile_mod(mod_ty mod, PyObject *filename, PyArena *arena)
{
	PyCompilerFlags flags = {PyCF_SOURCE_IS_UTF8 | PyCF_ALLOW_TOP_LEVEL_AWAIT,
	                         PY_MINOR_VERSION};

	return (PyObject *)_PyAST_Compile(mod, filename, &flags, -1, arena);
}

/* "targets = <the value>": the value read from the name `tmp`, at the place of stmt. */
static mod_ty assign_from(asdl_expr_seq *targets, const char *tmp, stmt_ty at, PyArena *arena)
{
	PyObject *id = PyUnicode_InternFromString(tmp);
	asdl_stmt_seq *body;
	asdl_type_ignore_seq *ignores;
	expr_ty name;
	stmt_ty assign;

	if (!id || _PyArena_AddPyObject(arena, id) < 0) {
		Py_XDECREF(id);
		return NULL;
	}
	name = _PyAST_Name(id, Load, at->lineno, at->col_offset, at->end_lineno, at->end_col_offset,
	                   arena);
	assign = name ? _PyAST_Assign(targets, name, NULL, at->lineno, at->col_offset,
	                              at->end_lineno, at->end_col_offset, arena)
	              : NULL;
	body = assign ? _Py_asdl_stmt_seq_new(1, arena) : NULL;
	ignores = body ? _Py_asdl_type_ignore_seq_new(0, arena) : NULL;
	if (!ignores)
		return NULL;
	asdl_seq_SET(body, 0, assign);
	return _PyAST_Module(body, ignores, arena);
}

int pycompile_program(const char *src, const char *filename, const char *result_tmp,
                      PyObject **body, PyObject **last_expr, PyObject **assign, PyObject **aug_name)
{
	PyCompilerFlags flags = {PyCF_IGNORE_COOKIE, PY_MINOR_VERSION}; /* UTF-8, as interp.c */
	PyObject *fn = PyUnicode_DecodeFSDefault(filename);
	PyArena *arena = fn ? _PyArena_New() : NULL;
	asdl_expr_seq *targets = NULL;
	expr_ty value = NULL;
	mod_ty mod;
	stmt_ty last;
	Py_ssize_t n;
	int rc = -1;

	*body = *last_expr = *assign = *aug_name = NULL;
	if (!arena) {
		if (fn)
			PyErr_NoMemory();
		goto out;
	}
	mod = _PyParser_ASTFromString(src, fn, Py_file_input, &flags, arena);
	if (!mod || mod->kind != Module_kind)
		goto out;
	n = asdl_seq_LEN(mod->v.Module.body);
	last = n > 0 ? asdl_seq_GET(mod->v.Module.body, n - 1) : NULL;
	if (last && last->kind == Expr_kind) {
		value = last->v.Expr.value;
	} else if (last && last->kind == Assign_kind) {
		value = last->v.Assign.value;
		targets = last->v.Assign.targets;
	} else if (last && last->kind == AnnAssign_kind && last->v.AnnAssign.value) {
		value = last->v.AnnAssign.value;
		targets = _Py_asdl_expr_seq_new(1, arena);
		if (!targets)
			goto out;
		asdl_seq_SET(targets, 0, last->v.AnnAssign.target);
	} else if (last && last->kind == AugAssign_kind &&
	           last->v.AugAssign.target->kind == Name_kind) {
		*aug_name = Py_NewRef(last->v.AugAssign.target->v.Name.id);
	}
	if (value) {
		mod_ty expr = _PyAST_Expression(value, arena);

		/* The statement leaves the body: its value is computed apart. */
		mod->v.Module.body->size = n - 1;
		if (!expr || !(*last_expr = compile_mod(expr, fn, arena)))
			goto out;
	}
	if (targets) {
		mod_ty bind = assign_from(targets, result_tmp, last, arena);

		if (!bind || !(*assign = compile_mod(bind, fn, arena)))
			goto out;
	}
	*body = compile_mod(mod, fn, arena);
	rc = *body ? 0 : -1;
out:
	if (arena)
		_PyArena_Free(arena);
	Py_XDECREF(fn);
	if (rc < 0) {
		Py_CLEAR(*body);
		Py_CLEAR(*last_expr);
		Py_CLEAR(*assign);
		Py_CLEAR(*aug_name);
	}
	return rc;
}
