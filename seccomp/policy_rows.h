/* policy_rows.h - how the policy tables are written (policy.c: the worker's, self.c: the
 * supervisor's own), and the builder they share. Internal to seccomp/. */
#ifndef SAFEPY_POLICY_ROWS_H
#define SAFEPY_POLICY_ROWS_H

#include <errno.h>
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
/* Allowed on an fd a workspace file can have: 4-63 (RLIMIT_NOFILE), by masks on all 64 bits.
 * The kernel reads an fd as 32 bits: "above the channel" on 64 let 0x100000003 through, and
 * close closed the channel (a file moved there passed the check of fds left open). An fd with
 * its upper half set (a negative one, as glibc passes an int) fails with EBADF without reaching
 * the kernel; 0-3 and 64 and above are killed. (libseccomp takes one test per argument per
 * row: ranges by masks.) ALLOW_FD_ONLY leaves out the EBADF row. */
#define ALLOW_FD_ONLY(n, why)                                                                   \
	ALLOW_IF(n, ARG_MASKED(0, ~(uint64_t)3, 4), why " (fds 4-7)"),                              \
	ALLOW_IF(n, ARG_MASKED(0, ~(uint64_t)7, 8), why " (fds 8-15)"),                             \
	ALLOW_IF(n, ARG_MASKED(0, ~(uint64_t)15, 16), why " (fds 16-31)"),                          \
	ALLOW_IF(n, ARG_MASKED(0, ~(uint64_t)31, 32), why " (fds 32-63)")
#define ALLOW_FD(n, why)                                                                        \
	ALLOW_FD_ONLY(n, why),                                                                      \
	ERRNO_IF(n, ARG_GT(0, UINT32_MAX), EBADF, "an fd with its upper half set: a negative one fails as the kernel fails it, another never reaches the low fd the kernel would read")
/* clang-format on */

/* Build a filter from rows (then extra rows; NULL for none) with a default action (a
 * libseccomp SCMP_ACT_*); with no_threads the row that starts a thread fails with EAGAIN.
 * x86_64 only. Returns 0 or a negative errno; *out written only on success. */
int policy_build_rows(const struct policy_rule *rows, size_t n, const struct policy_rule *extra,
                      size_t n_extra, int no_threads, uint32_t def_action, struct policy **out);

#endif
