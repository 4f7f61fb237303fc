/* pysqlite.c - every SQLite database the worker opens, whoever opens it (sqlite3.connect, the
 * Connection class called directly, a subclass, a connection initialised again), is set up in C
 * when it opens: defensive (no writable schema, no shadow tables written by SQL), no extension
 * loading, schemas not trusted, and fts3_tokenizer() gone. That function hands out the address
 * of a tokenizer inside the library and, given one back, calls through it: native code chosen by
 * the SQL. The Python layer's authorizer (pylayer.c) keeps the databases in memory on top. */
#include <sqlite3.h>

#include "interp_internal.h"

static void fts3_tokenizer_refused(sqlite3_context *ctx, int n, sqlite3_value **v)
{
	(void)n;
	(void)v;
	sqlite3_result_error(ctx,
	                     "fts3_tokenizer() is not available in the sandbox (it hands out and "
	                     "takes native pointers)",
	                     -1);
}

static int on_open(sqlite3 *db, char **err, const struct sqlite3_api_routines *api)
{
	static const int off[] = {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
	                          SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER,
	                          SQLITE_DBCONFIG_TRUSTED_SCHEMA};
	int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);

	(void)api;
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(off) / sizeof(off[0]); i++)
		rc = sqlite3_db_config(db, off[i], 0, (int *)0);
	/* The function of every arity FTS3 gives it, replaced (same name, arity and encoding). */
	for (int n = -1; rc == SQLITE_OK && n <= 2; n++)
		if (n != 0)
			rc = sqlite3_create_function_v2(db, "fts3_tokenizer", n, SQLITE_UTF8, NULL,
			                                fts3_tokenizer_refused, NULL, NULL, NULL);
	if (rc != SQLITE_OK && err)
		*err = sqlite3_mprintf("the sandbox could not set up the database");
	return rc;
}

int pysqlite_init(void)
{
	/* Registered before any database opens; SQLite runs it at each open. */
	if (sqlite3_auto_extension((void (*)(void))(void *)on_open) == SQLITE_OK)
		return 0;
	PyErr_SetString(PyExc_RuntimeError,
	                "SQLite's set-up of each database cannot be registered");
	return -1;
}
