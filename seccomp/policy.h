/* policy.h - the worker's seccomp policy: a default-deny allowlist built with libseccomp.
 * Functions return 0 or a negative errno; they never log and never exit. */
#ifndef SAFEPY_POLICY_H
#define SAFEPY_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* The fixed fd numbers the filter is built for (the filter is built once in the zygote,
 * before any worker exists, so these cannot vary per worker). */
#define POLICY_FD_CHANNEL 3 /* read code, write frames */

/* What happens to a syscall. */
enum policy_action {
	POLICY_ALLOW,    /* always */
	POLICY_ALLOW_IF, /* when its argument tests hold; otherwise as another row says, or killed */
	POLICY_ERRNO,    /* fails with the entry's errno (when its tests hold, if it has any);
	                  * harmless Python paths reach it */
	POLICY_KILL,     /* named here only to document it: the default kills it too */
};

/* How an argument test compares, on all 64 bits of the argument. */
enum policy_cmp {
	POLICY_MASKED_EQ = 0, /* (arg & mask) == value */
	POLICY_LE,            /* arg <= value (unsigned) */
	POLICY_GT,            /* arg > value (unsigned) */
};

/* One argument test of a row. */
struct policy_arg_test {
	unsigned int argno;
	enum policy_cmp op;
	uint64_t mask; /* POLICY_MASKED_EQ */
	uint64_t value;
};

#define POLICY_MAX_TESTS 3

/* One row of the policy table. A row with tests applies when all of them hold; rows of one
 * syscall never overlap (an ALLOW_IF row and an ERRNO row with tests complete each other;
 * what no row covers is killed). */
struct policy_rule {
	const char *name; /* syscall name as libseccomp resolves it */
	enum policy_action action;
	int err;            /* POLICY_ERRNO: the errno */
	const char *reason; /* one line: why */
	struct policy_arg_test when[POLICY_MAX_TESTS];
	unsigned int n_when; /* tests in use */
	int starts_thread;   /* the row that lets a thread start (policy_build_session_nothreads
	                      * answers it with EAGAIN instead) */
};

/* The table, for `safepy doctor` and the tests. */
extern const struct policy_rule policy_table[];
extern const size_t policy_table_len;
/* The rows policy_build_session adds to it. */
extern const struct policy_rule policy_session_table[];
extern const size_t policy_session_table_len;

struct policy;

/* Build the filter (not loaded). *out is owned by the caller: policy_free.
 * Returns 0, -ENOMEM, -EOPNOTSUPP (not x86_64), -EINVAL (a row libseccomp cannot resolve),
 * or the libseccomp error; *out is written only on success. */
int policy_build(struct policy **out);
/* Load the filter into the calling thread with seccomp(2): the BPF program was generated when
 * the policy was built, so this allocates nothing. The caller has set no_new_privs.
 * Returns 0, -EINVAL for the gate (use policy_gate_load), or the negative errno. */
int policy_load(const struct policy *p);
void policy_free(struct policy *p);

/* Sessions (state kept between calls) park a process that forks the next call's process.
 * policy_build_session builds the same filter plus the two calls a parked process needs:
 * clone with exactly glibc's fork flags (CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD)
 * and wait4. It must only ever be loaded after the fork gate, which sends every such clone
 * to the supervisor for a decision. Same returns as policy_build. */
int policy_build_session(struct policy **out);
/* The same, except that starting a thread fails with EAGAIN (Python: "can't start new thread"):
 * for a worker whose tasks nothing else bounds (no user namespace for a per-namespace
 * RLIMIT_NPROC, no cgroup pids.max). Same returns. */
int policy_build_session_nothreads(struct policy **out);
/* The fork gate: default allow, and every clone without CLONE_THREAD becomes a seccomp user
 * notification (SCMP_ACT_NOTIFY) on a listener the supervisor answers: it continues the
 * fork it asked for and fails any other with EPERM. With no listener left the kernel fails
 * the clone with ENOSYS. Same returns as policy_build; -EOPNOTSUPP also when libseccomp or
 * the kernel has no user notification (libseccomp API level below 5). */
int policy_gate_build(struct policy **out);
/* Load the gate (no_new_privs set) and give its listener fd to the caller (owned,
 * O_CLOEXEC). *killable says whether a process waiting in the gate, once the supervisor has
 * received its notification, can only be interrupted by a fatal signal (Linux 5.19+). Once per
 * process and its descendants (one listener per filter chain). Returns 0 or a negative errno:
 * -EINVAL if p is not policy_gate_build's, -EBUSY when a listener exists; an error after the
 * load (fcntl) leaves the gate in force, so the caller must not go on. Out-params written only
 * on success. */
int policy_gate_load(const struct policy *p, int *listener, int *killable);

/* What a worker's filters (the session policy; the gate decides nothing) do with one system
 * call, by the table: POLICY_ALLOW, POLICY_ERRNO with *err, or POLICY_KILL (also for another
 * arch and for x32 numbers). The syscall report uses it to tell which thread's call the
 * filter killed. */
enum policy_action policy_check(unsigned int audit_arch, long nr, const uint64_t args[6], int *err);

/* The supervisor's own filter (self.c): what it needs once start-up is done; anything else
 * raises SIGSYS (the supervisor answers EPERM and logs it). And the one of `safepy connect`'s
 * relay. Same returns as policy_build. */
extern const struct policy_rule policy_self_table[];
extern const size_t policy_self_table_len;
extern const struct policy_rule policy_relay_table[];
extern const size_t policy_relay_table_len;
int policy_build_self(struct policy **out);
int policy_build_relay(struct policy **out);

/* Write the filter as libseccomp's PFC text to fd (for `safepy doctor --policy`). */
int policy_export_pfc(const struct policy *p, int fd);
/* Write the filter as the raw BPF program the kernel gets (struct sock_filter[]) to fd,
 * for the tests' BPF interpreter. Returns 0 or the negative errno. */
int policy_export_bpf(const struct policy *p, int fd);

/* The name of syscall nr for an audit arch (AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, ...), into buf.
 * Unknown numbers give "syscall N"; an x32 number (bit 0x40000000) says so. Returns buf. */
const char *policy_syscall_name(unsigned int audit_arch, long nr, char *buf, size_t len);

#endif
