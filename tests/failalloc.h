/* failalloc.h - allocation-failure injection for safepy-failalloc, a test build of the
 * supervisor (never installed; the production build never sees this file). The build gives
 * every source of that binary and of its copy of protocol/ this header first (-include), so
 * each allocation of the supervisor's own code (the engine, the server's MCP line handling,
 * the protocol, the JSON values it builds) asks failalloc_fail() first. An allocation made to
 * fail returns what the real one returns when memory is out (NULL, -1 with errno ENOMEM, or
 * -ENOMEM), so the code under test cannot tell. Allocations inside libraries (json-c's
 * internals, libc) are not counted. */
#ifndef SAFEPY_FAILALLOC_H
#define SAFEPY_FAILALLOC_H

/* Everything whose name is redefined below is declared first, unchanged. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <seccomp.h>
#if __has_include("ipc.h")
#include "ipc.h"
#define FAILALLOC_IPC 1
#endif

/* Should this allocation fail? SAFEPY_FAILALLOC="every=N[,after=K][,max=M]": of the
 * allocations after the first K once armed, every Nth fails, at most M of them (0: no bound).
 * Unset: none fails. The count of failures is written to stderr at exit. */
int failalloc_fail(void);
/* Start counting: the server calls it when it starts serving, so start-up is left alone. */
void failalloc_arm(void);

#define failalloc_null(T) (errno = ENOMEM, (T)0)

#define malloc(n)                  (failalloc_fail() ? failalloc_null(void *) : malloc(n))
#define calloc(n, s)               (failalloc_fail() ? failalloc_null(void *) : calloc(n, s))
#define realloc(p, n)              (failalloc_fail() ? failalloc_null(void *) : realloc(p, n))
#define strdup(s)                  (failalloc_fail() ? failalloc_null(char *) : strdup(s))
#define strndup(s, n)              (failalloc_fail() ? failalloc_null(char *) : strndup(s, n))
#define asprintf(p, ...)           (failalloc_fail() ? (errno = ENOMEM, -1) : asprintf(p, __VA_ARGS__))
#define vasprintf(p, f, a)         (failalloc_fail() ? (errno = ENOMEM, -1) : vasprintf(p, f, a))
#define fdopendir(fd)              (failalloc_fail() ? failalloc_null(DIR *) : fdopendir(fd))
#define seccomp_notify_alloc(q, r) (failalloc_fail() ? -ENOMEM : seccomp_notify_alloc(q, r))
#ifdef FAILALLOC_IPC
#define ipc_outcome_decode(b, n, o) (failalloc_fail() ? -ENOMEM : ipc_outcome_decode(b, n, o))
#define ipc_roots_decode(b, n, r)   (failalloc_fail() ? -ENOMEM : ipc_roots_decode(b, n, r))
#endif

/* json-c: a constructor fails with NULL; adding to an object or array fails with -1 and
 * leaves the value the caller's, as json-c does when its table cannot grow. */
#define json_object_new_object()  (failalloc_fail() ? NULL : json_object_new_object())
#define json_object_new_array()   (failalloc_fail() ? NULL : json_object_new_array())
#define json_object_new_string(s) (failalloc_fail() ? NULL : json_object_new_string(s))
#define json_object_new_string_len(s, n)                                                           \
	(failalloc_fail() ? NULL : json_object_new_string_len(s, n))
#define json_object_new_int(i)          (failalloc_fail() ? NULL : json_object_new_int(i))
#define json_object_new_int64(i)        (failalloc_fail() ? NULL : json_object_new_int64(i))
#define json_object_new_boolean(b)      (failalloc_fail() ? NULL : json_object_new_boolean(b))
#define json_object_new_double(d)       (failalloc_fail() ? NULL : json_object_new_double(d))
#define json_object_new_double_s(d, s)  (failalloc_fail() ? NULL : json_object_new_double_s(d, s))
#define json_tokener_new()              (failalloc_fail() ? NULL : json_tokener_new())
#define json_tokener_new_ex(d)          (failalloc_fail() ? NULL : json_tokener_new_ex(d))
#define json_object_object_add(o, k, v) (failalloc_fail() ? -1 : json_object_object_add(o, k, v))
#define json_object_array_add(a, v)     (failalloc_fail() ? -1 : json_object_array_add(a, v))
#define json_object_to_json_string_length(o, f, n)                                                 \
	(failalloc_fail() ? NULL : json_object_to_json_string_length(o, f, n))

#endif
