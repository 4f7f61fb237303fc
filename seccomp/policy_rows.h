/* policy_rows.h - how the policy tables are written (policy.c: the worker's, self.c: the
 * supervisor's own), and the builder they share. Internal to seccomp/. */
#ifndef SAFEPY_POLICY_ROWS_H
#define SAFEPY_POLICY_ROWS_H

#include <stdint.h>

#include "policy.h"

/* The table reads best as one row a line. */
/* clang-format off */
#define ALLOW(n, why)	{.name = (n), .action = POLICY_ALLOW, .reason = (why)}
#define ALLOW_IF(n, t, why) {.name = (n), .action = POLICY_ALLOW_IF, .when = {t}, .n_when = 1, .reason = (why)}
#define ALLOW_IF2(n, t, u, why) {.name = (n), .action = POLICY_ALLOW_IF, .when = {t, u}, .n_when = 2, .reason = (why)}
#define ALLOW_IF3(n, t, u, v, why) {.name = (n), .action = POLICY_ALLOW_IF, .when = {t, u, v}, .n_when = 3, .reason = (why)}
#define ERRNO_IF3(n, t, u, v, e, why) {.name = (n), .action = POLICY_ERRNO, .err = (e), .when = {t, u, v}, .n_when = 3, .reason = (why)}
#define ERRNO(n, e, why) {.name = (n), .action = POLICY_ERRNO, .err = (e), .reason = (why)}
#define ERRNO_IF(n, t, e, why) {.name = (n), .action = POLICY_ERRNO, .err = (e), .when = {t}, .n_when = 1, .reason = (why)}
#define KILL(n, why)	{.name = (n), .action = POLICY_KILL, .reason = (why)}
/* Argument tests: arg i equals v (all 64 bits); arg i has none of bits; (arg i & mask) == v;
 * arg i <= v; arg i > v (unsigned, all 64 bits). */
#define ARG_EQ(i, v)	{.argno = (i), .op = POLICY_MASKED_EQ, .mask = UINT64_MAX, .value = (uint64_t)(v)}
#define ARG_CLEAR(i, bits) {.argno = (i), .op = POLICY_MASKED_EQ, .mask = (uint64_t)(bits), .value = 0}
#define ARG_MASKED(i, m, v) {.argno = (i), .op = POLICY_MASKED_EQ, .mask = (uint64_t)(m), .value = (uint64_t)(v)}
#define ARG_LE(i, v)	{.argno = (i), .op = POLICY_LE, .value = (uint64_t)(v)}
#define ARG_GT(i, v)	{.argno = (i), .op = POLICY_GT, .value = (uint64_t)(v)}
/* Allowed on an fd above the channel. The kernel reads an fd as 32 bits: a value with its upper
 * half set passes the test and reaches a low fd, which is /dev/null or the worker's own channel:
 * nothing another process has. (libseccomp takes one test per argument per row.) */
#define ALLOW_FD(n, why) ALLOW_IF(n, ARG_GT(0, POLICY_FD_CHANNEL), why)
/* clang-format on */

/* Build a filter from rows (then extra rows; NULL for none) with a default action (a
 * libseccomp SCMP_ACT_*); with no_threads the row that starts a thread fails with EAGAIN.
 * x86_64 only. Returns 0 or a negative errno; *out written only on success. */
int policy_build_rows(const struct policy_rule *rows, size_t n, const struct policy_rule *extra,
                      size_t n_extra, int no_threads, uint32_t def_action, struct policy **out);

#endif
