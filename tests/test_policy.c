/* test_policy.c - the worker's seccomp policy: the table, the compiled BPF run through an
 * interpreter, and real syscalls made by forked children under the loaded filter; the same
 * for the session variant and the fork gate, whose questions the test answers itself.
 * The filter is never installed in the test runner itself: every probe runs in a child. */
#include <criterion/criterion.h>
#include <linux/futex.h>

#include <asm/unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

/* Exit codes of a probe child beyond the errno range (errno values are < 134). */
#define CHILD_SETUP_FAILED 200 /* could not enter the test sandbox: not a policy result */
#define CHILD_WRONG_RESULT 201 /* the call returned, but not what it should have */

/* A pointer the kernel rejects with EFAULT, so a call that reaches the kernel fails harmlessly. */
#define BAD_PTR                1L
#define BAD_FD                 -1L
/* glibc 2.36 pthread_create's clone flags, and glibc fork()'s (as strace shows them). */
#define THREAD_CLONE_FLAGS     0x3d0f00L
#define GLIBC_FORK_CLONE_FLAGS 0x1200011L

/* A probe runs in the child after the filter; returns 0 on success, else an errno value. */
typedef int (*probe_fn)(const void *arg);
/* policy_build or policy_build_session (or policy_gate_build, for the exports). */
typedef int (*policy_builder)(struct policy **out);

/* One raw syscall with fixed arguments. */
struct syscall_probe {
	const char *what;
	long nr;
	long a[6];
};

/* ---- running probes in children ---- */

/* Make the child look like a worker's fd layout: 0, 1, 2 and the channel (3) on /dev/null,
 * nothing else open; no core dumps; a watchdog in case a call blocks. */
static int child_prepare(void)
{
	struct rlimit no_core = {0, 0};
	int fd, i;

	alarm(10);
	if (setrlimit(RLIMIT_CORE, &no_core) != 0 || prctl(PR_SET_DUMPABLE, 0) != 0)
		return -1;
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return -1;
	for (i = 0; i <= POLICY_FD_CHANNEL; i++)
		if (fd != i && dup2(fd, i) != i)
			return -1;
	if (syscall(SYS_close_range, POLICY_FD_CHANNEL + 1, ~0U, 0) != 0)
		return -1;
	return 0;
}

/* Fork; the child prepares, loads the policy build makes when filtered, runs fn once and
 * exits with its result. Returns the child's wait status. */
static int run_child_built(policy_builder build, probe_fn fn, const void *arg, bool filtered)
{
	struct policy *p = NULL;
	int status, rc;
	pid_t pid;

	rc = build(&p);
	cr_assert_eq(rc, 0, "policy_build: %s", strerror(-rc));
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (child_prepare() != 0)
			_exit(CHILD_SETUP_FAILED);
		/* no_new_privs before seccomp, as in the worker. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(CHILD_SETUP_FAILED);
		if (filtered && policy_load(p) != 0)
			_exit(CHILD_SETUP_FAILED);
		_exit(fn(arg));
	}
	policy_free(p);
	while (waitpid(pid, &status, 0) < 0)
		cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
	return status;
}

static int run_child(probe_fn fn, const void *arg, bool filtered)
{
	return run_child_built(policy_build, fn, arg, filtered);
}

static int probe_syscall(const void *arg)
{
	const struct syscall_probe *sp = arg;
	long r;

	r = syscall(sp->nr, sp->a[0], sp->a[1], sp->a[2], sp->a[3], sp->a[4], sp->a[5]);
	return r < 0 ? errno : 0;
}

static const char *describe(int status, char *buf, size_t len)
{
	const char *name;

	if (WIFSIGNALED(status)) {
		name = sigabbrev_np(WTERMSIG(status));
		snprintf(buf, len, "killed by SIG%s", name ? name : "?");
	} else if (WIFEXITED(status)) {
		name = strerrorname_np(WEXITSTATUS(status));
		snprintf(buf, len, "exit %d (%s)", WEXITSTATUS(status), name ? name : "-");
	} else {
		snprintf(buf, len, "wait status %#x", status);
	}
	return buf;
}

static bool killed_by_sigsys(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

static void expect_killed(const char *what, int status)
{
	char d[64];

	cr_expect(killed_by_sigsys(status), "%s: expected SIGSYS, got %s", what,
	          describe(status, d, sizeof(d)));
}

static void expect_exit(const char *what, int status, int code)
{
	char d[64];

	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == code, "%s: expected exit %d, got %s",
	          what, code, describe(status, d, sizeof(d)));
}

/* The call reached the kernel: the filter changed nothing about its result. */
static void expect_allowed(const struct syscall_probe *sp)
{
	int bare = run_child(probe_syscall, sp, false);
	int filtered = run_child(probe_syscall, sp, true);
	char d[64];

	cr_assert(WIFEXITED(bare) && WEXITSTATUS(bare) < CHILD_SETUP_FAILED,
	          "%s without the filter: %s", sp->what, describe(bare, d, sizeof(d)));
	expect_exit(sp->what, filtered, WEXITSTATUS(bare));
}

/* ---- the table ---- */

Test(policy, every_row_names_a_real_syscall)
{
	size_t i;

	cr_assert_gt(policy_table_len, 0);
	for (i = 0; i < policy_table_len; i++)
		cr_expect_neq(seccomp_syscall_resolve_name(policy_table[i].name), __NR_SCMP_ERROR,
		              "row %zu: %s is not an x86_64 syscall", i, policy_table[i].name);
}

Test(policy, every_row_has_a_reason)
{
	size_t i;

	for (i = 0; i < policy_table_len; i++)
		cr_expect(policy_table[i].reason != NULL && policy_table[i].reason[0] != '\0',
		          "row %zu (%s) has no reason", i, policy_table[i].name);
}

Test(policy, rows_are_consistent)
{
	size_t i, j;

	for (i = 0; i < policy_table_len; i++) {
		const struct policy_rule *r = &policy_table[i];

		if (r->action == POLICY_ERRNO)
			cr_expect(r->err > 0 && r->err < 4096, "%s: errno %d", r->name, r->err);
		cr_expect_leq(r->n_when, POLICY_MAX_TESTS, "%s", r->name);
		cr_expect((r->action == POLICY_ALLOW_IF) == (r->n_when > 0) ||
		              (r->action == POLICY_ERRNO && r->n_when > 0),
		          "%s: tests only on ALLOW_IF and conditional ERRNO rows", r->name);
		for (unsigned int t = 0; t < r->n_when; t++) {
			cr_expect_leq(r->when[t].argno, 5u, "%s: argument %u", r->name,
			              r->when[t].argno);
			if (r->when[t].op == POLICY_MASKED_EQ)
				cr_expect_eq(r->when[t].value & ~r->when[t].mask, 0,
				             "%s: the value has bits outside the mask", r->name);
		}
		/* A syscall with a row that has no tests has that one row; rows with tests may
		 * repeat (policy_check_agrees_with_the_compiled_filter proves they compose). */
		for (j = i + 1; j < policy_table_len; j++) {
			if (strcmp(r->name, policy_table[j].name) != 0)
				continue;
			/* A KILL row only documents what the tests of the others leave. */
			cr_expect((r->n_when > 0 || r->action == POLICY_KILL) &&
			              (policy_table[j].n_when > 0 ||
			               policy_table[j].action == POLICY_KILL),
			          "%s appears in rows %zu and %zu", r->name, i, j);
		}
	}
}

/* The policy's rules: a row dropped from the table must fail here. */
static const struct {
	const char *name;
	enum policy_action action;
	int err;
} documented[] = {
    {"write", POLICY_ALLOW_IF, 0},
    {"read", POLICY_ALLOW_IF, 0},
    {"mmap", POLICY_ALLOW_IF, 0},
    {"mprotect", POLICY_ALLOW_IF, 0},
    {"clone", POLICY_ALLOW_IF, 0},
    {"exit", POLICY_ALLOW, 0},
    {"exit_group", POLICY_ALLOW, 0},
    {"brk", POLICY_ALLOW, 0},
    {"munmap", POLICY_ALLOW, 0},
    {"mremap", POLICY_ALLOW_IF, 0},
    {"madvise", POLICY_ALLOW_IF, 0},
    {"futex", POLICY_ALLOW_IF, 0},
    {"getrandom", POLICY_ALLOW, 0},
    {"clock_gettime", POLICY_ALLOW_IF, 0},
    {"clock_getres", POLICY_ALLOW_IF, 0},
    {"gettimeofday", POLICY_ALLOW, 0},
    {"clock_nanosleep", POLICY_ALLOW_IF, 0},
    {"sched_getaffinity", POLICY_ALLOW_IF, 0},
    {"setitimer", POLICY_ALLOW_IF, 0},
    {"nanosleep", POLICY_ALLOW, 0},
    {"rt_sigreturn", POLICY_ALLOW, 0},
    {"rt_sigaction", POLICY_ALLOW, 0},
    {"rt_sigprocmask", POLICY_ALLOW, 0},
    {"restart_syscall", POLICY_ALLOW, 0},
    {"getpid", POLICY_ALLOW, 0},
    {"gettid", POLICY_ALLOW, 0},
    {"getppid", POLICY_ALLOW, 0},
    {"sched_yield", POLICY_ALLOW, 0},
    {"set_robust_list", POLICY_ALLOW, 0},
    {"rseq", POLICY_ALLOW, 0},
    {"open", POLICY_ERRNO, EACCES},
    {"openat", POLICY_ERRNO, EACCES},
    {"newfstatat", POLICY_ERRNO, EACCES},
    {"stat", POLICY_ERRNO, EACCES},
    {"lstat", POLICY_ERRNO, EACCES},
    {"fstat", POLICY_ERRNO, EACCES},
    {"statx", POLICY_ERRNO, EACCES},
    {"access", POLICY_ERRNO, EACCES},
    {"faccessat", POLICY_ERRNO, EACCES},
    {"faccessat2", POLICY_ERRNO, EACCES},
    {"readlink", POLICY_ERRNO, EACCES},
    {"readlinkat", POLICY_ERRNO, EACCES},
    {"getcwd", POLICY_ERRNO, EACCES},
    {"getdents64", POLICY_ERRNO, EACCES},
    {"ioctl", POLICY_ERRNO, ENOTTY},
    {"clone3", POLICY_ERRNO, ENOSYS},
    {"openat2", POLICY_ERRNO, ENOSYS},
    {"fallocate", POLICY_ERRNO, EOPNOTSUPP},
    {"execve", POLICY_KILL, 0},
    {"fork", POLICY_KILL, 0},
    {"vfork", POLICY_KILL, 0},
    {"socket", POLICY_KILL, 0},
    {"kill", POLICY_KILL, 0},
    {"ptrace", POLICY_KILL, 0},
    {"io_uring_setup", POLICY_KILL, 0},
    {"bpf", POLICY_KILL, 0},
    {"userfaultfd", POLICY_KILL, 0},
};

Test(policy, table_has_the_documented_rules)
{
	size_t i, j;

	for (i = 0; i < sizeof(documented) / sizeof(documented[0]); i++) {
		for (j = 0; j < policy_table_len; j++)
			if (strcmp(policy_table[j].name, documented[i].name) == 0)
				break;
		cr_expect_lt(j, policy_table_len, "%s is missing", documented[i].name);
		if (j == policy_table_len)
			continue;
		cr_expect_eq(policy_table[j].action, documented[i].action, "%s: action",
		             documented[i].name);
		cr_expect_eq(policy_table[j].err, documented[i].err, "%s: errno",
		             documented[i].name);
	}
}

/* ---- exports and names ---- */

/* Run export on a fresh policy from build into a memfd; return its text (malloc'd) and
 * length. */
static char *export_built(policy_builder build, int (*export)(const struct policy *, int),
                          size_t *len)
{
	struct policy *p = NULL;
	char *buf;
	off_t size;
	int fd, rc;

	rc = build(&p);
	cr_assert_eq(rc, 0, "build: %s", strerror(-rc));
	fd = memfd_create("policy", MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	rc = export(p, fd);
	cr_assert_eq(rc, 0, "export: %s", strerror(-rc));
	policy_free(p);
	size = lseek(fd, 0, SEEK_END);
	cr_assert_gt(size, 0);
	buf = calloc(1, (size_t)size + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, (size_t)size, 0), size);
	close(fd);
	*len = (size_t)size;
	return buf;
}

static char *export_policy(int (*export)(const struct policy *, int), size_t *len)
{
	return export_built(policy_build, export, len);
}

Test(policy, exports_pfc_naming_the_default_action)
{
	size_t len;
	char *pfc = export_policy(policy_export_pfc, &len);

	cr_expect_not_null(strstr(pfc, "# default action\n  action KILL_PROCESS;"), "%s", pfc);
	cr_expect_not_null(strstr(pfc, "# invalid architecture action\naction KILL_PROCESS;"));
	cr_expect_not_null(strstr(pfc, "filter for arch x86_64"));
	cr_expect_null(strstr(pfc, "filter for arch x86 "), "only the native arch");
	free(pfc);
}

Test(policy, names_syscalls)
{
	char buf[64];

	cr_expect_str_eq(policy_syscall_name(AUDIT_ARCH_X86_64, 41, buf, sizeof(buf)), "socket");
	cr_expect_str_eq(policy_syscall_name(AUDIT_ARCH_X86_64, 59, buf, sizeof(buf)), "execve");
	cr_expect_str_eq(policy_syscall_name(AUDIT_ARCH_I386, 20, buf, sizeof(buf)), "getpid");
	cr_expect_str_eq(
	    policy_syscall_name(AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | 39, buf, sizeof(buf)),
	    "x32 getpid");
	cr_expect_str_eq(
	    policy_syscall_name(AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | 999, buf, sizeof(buf)),
	    "x32 syscall 999");
	cr_expect_str_eq(policy_syscall_name(AUDIT_ARCH_X86_64, 999, buf, sizeof(buf)),
	                 "syscall 999");
	cr_expect_str_eq(policy_syscall_name(AUDIT_ARCH_X86_64, -1, buf, sizeof(buf)),
	                 "syscall -1");
	cr_expect_str_eq(policy_syscall_name(AUDIT_ARCH_AARCH64, 41, buf, sizeof(buf)),
	                 "syscall 41");
}

Test(policy, names_into_a_short_buffer)
{
	char buf[4];

	cr_expect_eq(policy_syscall_name(AUDIT_ARCH_X86_64, 41, buf, sizeof(buf)), buf);
	cr_expect_str_eq(buf, "soc");
}

/* ---- the compiled BPF, run through an interpreter (kafel's test/runner idea) ---- */

struct bpf_prog {
	struct sock_filter *insns;
	size_t len;
};

static struct bpf_prog bpf_load_built(policy_builder build)
{
	size_t len;
	char *raw = export_built(build, policy_export_bpf, &len);

	cr_assert_eq(len % sizeof(struct sock_filter), 0);
	return (struct bpf_prog){(struct sock_filter *)(void *)raw,
	                         len / sizeof(struct sock_filter)};
}

static struct bpf_prog bpf_load(void)
{
	return bpf_load_built(policy_build);
}

/* Classic BPF as the kernel's seccomp checker admits it. Returns the filter's verdict. */
static uint32_t bpf_run(const struct bpf_prog *prog, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	size_t pc = 0;

	while (pc < prog->len) {
		const struct sock_filter *f = &prog->insns[pc++];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				cr_assert(f->k % 4 == 0 && f->k + 4 <= sizeof(*d));
				memcpy(&a, (const char *)d + f->k, 4);
			} else if (f->code == (BPF_LD | BPF_IMM)) {
				a = f->k;
			} else if (f->code == (BPF_LD | BPF_MEM)) {
				a = mem[f->k % BPF_MEMWORDS];
			} else {
				cr_assert_fail("unexpected load %#x at %zu", f->code, pc - 1);
			}
			break;
		case BPF_LDX:
			x = BPF_MODE(f->code) == BPF_MEM ? mem[f->k % BPF_MEMWORDS] : f->k;
			break;
		case BPF_ST:
			mem[f->k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[f->k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_AND:
				a &= src;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			case BPF_RSH:
				a >>= src;
				break;
			case BPF_LSH:
				a <<= src;
				break;
			default:
				cr_assert_fail("unexpected alu %#x at %zu", f->code, pc - 1);
			}
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				pc += f->k;
				break;
			}
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:
				pc += a == src ? f->jt : f->jf;
				break;
			case BPF_JGT:
				pc += a > src ? f->jt : f->jf;
				break;
			case BPF_JGE:
				pc += a >= src ? f->jt : f->jf;
				break;
			case BPF_JSET:
				pc += (a & src) != 0 ? f->jt : f->jf;
				break;
			default:
				cr_assert_fail("unexpected jump %#x at %zu", f->code, pc - 1);
			}
			break;
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			cr_assert_fail("unexpected class %#x at %zu", f->code, pc - 1);
		}
	}
	cr_assert_fail("fell off the end of the program");
	return 0;
}

static uint32_t bpf_verdict(const struct bpf_prog *prog, uint32_t arch, int nr,
                            const uint64_t args[6])
{
	struct seccomp_data d = {.nr = nr, .arch = arch, .instruction_pointer = 0x401000};

	if (args != NULL)
		memcpy(d.args, args, sizeof(d.args));
	return bpf_run(prog, &d);
}

/* Arguments that make every test of a row hold. */
static void row_args(const struct policy_rule *r, uint64_t args[6])
{
	memset(args, 0, 6 * sizeof(args[0]));
	for (unsigned int t = 0; t < r->n_when; t++) {
		const struct policy_arg_test *a = &r->when[t];
		args[a->argno] = a->op == POLICY_GT ? a->value + 1 : a->value;
	}
}

/* Each row's action in the compiled program: ALLOW rows with any arguments, rows with tests
 * exactly when their tests hold, ERRNO rows with their errno, KILL rows killed. */
static void expect_rows_compiled(const struct bpf_prog *prog, const struct policy_rule *rows,
                                 size_t n)
{
	static const uint64_t zero[6],
	    ones[6] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
	size_t i;

	for (i = 0; i < n; i++) {
		const struct policy_rule *r = &rows[i];
		int nr = seccomp_syscall_resolve_name(r->name);
		uint32_t want = r->action == POLICY_ERRNO ? SECCOMP_RET_ERRNO | (uint32_t)r->err
		                                          : SECCOMP_RET_ALLOW;
		uint64_t args[6];

		switch (r->action) {
		case POLICY_ALLOW:
			cr_expect_eq(bpf_verdict(prog, AUDIT_ARCH_X86_64, nr, zero),
			             SECCOMP_RET_ALLOW, "%s", r->name);
			cr_expect_eq(bpf_verdict(prog, AUDIT_ARCH_X86_64, nr, ones),
			             SECCOMP_RET_ALLOW, "%s", r->name);
			break;
		case POLICY_ALLOW_IF:
		case POLICY_ERRNO:
			row_args(r, args);
			cr_expect_eq(bpf_verdict(prog, AUDIT_ARCH_X86_64, nr, args), want,
			             "%s when its tests hold", r->name);
			if (r->action == POLICY_ERRNO && r->n_when == 0)
				cr_expect_eq(bpf_verdict(prog, AUDIT_ARCH_X86_64, nr, ones), want,
				             "%s", r->name);
			break;
		case POLICY_KILL:
			cr_expect_eq(bpf_verdict(prog, AUDIT_ARCH_X86_64, nr, zero),
			             SECCOMP_RET_KILL_PROCESS, "%s", r->name);
			break;
		}
	}
}

Test(policy, bpf_gives_every_row_its_action)
{
	struct bpf_prog prog = bpf_load();

	expect_rows_compiled(&prog, policy_table, policy_table_len);
	free(prog.insns);
}

#define RET_KILL      SECCOMP_RET_KILL_PROCESS
#define RET_ALLOW     SECCOMP_RET_ALLOW
#define RET_ENOTTY    (SECCOMP_RET_ERRNO | ENOTTY)
#define RET_EBADF     (SECCOMP_RET_ERRNO | EBADF)
#define UPPER_GARBAGE 0xdeadbeef00000000ul
#define HIGH_FD       (1ul << 32)

Test(policy, bpf_argument_rules)
{
	static const struct {
		const char *what;
		int nr;
		uint64_t args[6];
		uint32_t want;
	} cases[] = {
	    {"write fd 1", SYS_write, {1}, RET_ALLOW},
	    {"write fd 2", SYS_write, {2}, RET_ALLOW},
	    {"write channel", SYS_write, {POLICY_FD_CHANNEL}, RET_ALLOW},
	    {"write fd 0", SYS_write, {0}, RET_KILL},
	    {"write fd 4 (a workspace file)", SYS_write, {4}, RET_ALLOW},
	    /* The kernel reads an fd as 32 bits: one with its upper half set never reaches it (it
	     * would name a low fd); a negative one fails as the kernel would fail it. */
	    {"write fd 0 with upper garbage", SYS_write, {UPPER_GARBAGE | 0}, RET_EBADF},
	    {"write fd 4 with its upper half set", SYS_write, {HIGH_FD | 4}, RET_EBADF},
	    {"write fd -1", SYS_write, {(uint64_t)-1}, RET_EBADF},
	    {"write fd 63", SYS_write, {63}, RET_ALLOW},
	    {"write fd 64", SYS_write, {64}, RET_KILL},
	    {"read fd 5 (a workspace file)", SYS_read, {5}, RET_ALLOW},
	    {"read fd 2", SYS_read, {2}, RET_KILL},
	    {"read the channel with its upper half set", SYS_read, {HIGH_FD | 3}, RET_EBADF},
	    {"pread64 fd 0 with its upper half set", SYS_pread64, {HIGH_FD | 0}, RET_EBADF},
	    {"lseek the channel with its upper half set", SYS_lseek, {HIGH_FD | 3}, RET_EBADF},
	    {"ftruncate fd 1 with its upper half set", SYS_ftruncate, {HIGH_FD | 1}, RET_EBADF},
	    {"close fd 3", SYS_close, {3}, RET_KILL},
	    {"close fd 4", SYS_close, {4}, RET_ALLOW},
	    {"close fd 63", SYS_close, {63}, RET_ALLOW},
	    {"close fd 64", SYS_close, {64}, RET_KILL},
	    /* "Above the channel" on 64 bits let these close the channel and fd 0. */
	    {"close the channel with its upper half set", SYS_close, {HIGH_FD | 3}, RET_EBADF},
	    {"close fd 0 with upper garbage", SYS_close, {UPPER_GARBAGE | 0}, RET_EBADF},
	    {"close fd -1", SYS_close, {(uint64_t)-1}, RET_EBADF},
	    {"close_range from 4", SYS_close_range, {4, ~0u, 0}, RET_ALLOW},
	    {"close_range from 3", SYS_close_range, {3, ~0u, 0}, RET_KILL},
	    /* A table of the thread's own: workspace files the check of open files does not see. */
	    {"close_range unsharing the fd table", SYS_close_range, {63, 63, 2}, RET_KILL},
	    {"close_range with close-on-exec", SYS_close_range, {4, ~0u, 4}, RET_KILL},
	    {"close_range from the channel with its upper half set",
	     SYS_close_range,
	     {HIGH_FD | 3, ~0u, 0},
	     RET_KILL},
	    {"close_range from fd 0 with upper garbage",
	     SYS_close_range,
	     {UPPER_GARBAGE | 0, ~0u, 0},
	     RET_KILL},
	    {"lseek fd 1", SYS_lseek, {1, 0, SEEK_SET}, RET_KILL},
	    /* A second handle on a workspace file (numpy's fromfile), never on the channel,
	     * whatever the upper half says. */
	    {"dup of fd 4", SYS_fcntl, {4, F_DUPFD_CLOEXEC}, RET_ALLOW},
	    {"dup of fd 63", SYS_fcntl, {63, F_DUPFD_CLOEXEC}, RET_ALLOW},
	    {"dup of fd 2 (/dev/null)", SYS_fcntl, {2, F_DUPFD_CLOEXEC}, RET_ALLOW},
	    {"dup of the channel", SYS_fcntl, {3, F_DUPFD_CLOEXEC}, RET_KILL},
	    {"dup of the channel with upper garbage",
	     SYS_fcntl,
	     {UPPER_GARBAGE | 3, F_DUPFD_CLOEXEC},
	     RET_KILL},
	    {"dup of fd 64", SYS_fcntl, {64, F_DUPFD_CLOEXEC}, RET_KILL},
	    {"recvmsg on the channel", SYS_recvmsg, {3}, RET_ALLOW},
	    {"recvmsg on fd 4", SYS_recvmsg, {4}, RET_KILL},
	    {"write fd 1 with upper garbage", SYS_write, {UPPER_GARBAGE | 1}, RET_EBADF},
	    {"read channel", SYS_read, {POLICY_FD_CHANNEL}, RET_ALLOW},
	    {"read fd 0", SYS_read, {0}, RET_KILL},
	    {"mmap rw",
	     SYS_mmap,
	     {0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS},
	     RET_ALLOW},
	    {"mmap none", SYS_mmap, {0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS}, RET_ALLOW},
	    {"mmap rw, upper garbage",
	     SYS_mmap,
	     {0, 4096, UPPER_GARBAGE | PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS},
	     RET_ALLOW},
	    /* Mappings spread far apart cost page tables the address-space limit does not count. */
	    {"mmap at an address of its own",
	     SYS_mmap,
	     {0x100000000000, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS},
	     SECCOMP_RET_ERRNO | EPERM},
	    {"mmap fixed at an address",
	     SYS_mmap,
	     {0x100000000000, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED},
	     SECCOMP_RET_ERRNO | EPERM},
	    {"mmap rx at an address",
	     SYS_mmap,
	     {0x100000000000, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS},
	     RET_KILL},
	    {"mremap, the kernel moves it", SYS_mremap, {0, 4096, 8192, MREMAP_MAYMOVE}, RET_ALLOW},
	    {"mremap to an address",
	     SYS_mremap,
	     {0, 4096, 8192, MREMAP_MAYMOVE | MREMAP_FIXED},
	     RET_KILL},
	    /* A workspace file mapped would stay in the process after its fd, and its call. */
	    {"mmap a file, private", SYS_mmap, {0, 4096, PROT_READ, MAP_PRIVATE, 4}, RET_KILL},
	    {"madvise dontneed", SYS_madvise, {0, 4096, MADV_DONTNEED}, RET_ALLOW},
	    {"madvise normal", SYS_madvise, {0, 4096, MADV_NORMAL}, RET_ALLOW},
	    {"madvise free", SYS_madvise, {0, 4096, MADV_FREE}, RET_ALLOW},
	    {"madvise hugepage", SYS_madvise, {0, 4096, MADV_HUGEPAGE}, RET_ALLOW},
	    {"madvise nohugepage", SYS_madvise, {0, 4096, MADV_NOHUGEPAGE}, RET_ALLOW},
	    {"madvise dodump", SYS_madvise, {0, 4096, MADV_DODUMP}, RET_ALLOW},
	    /* Pages merged with other processes' (a timing channel to their contents), pushed to
	     * swap, or left out of a fork. */
	    {"madvise mergeable", SYS_madvise, {0, 4096, MADV_MERGEABLE}, RET_KILL},
	    {"madvise mergeable, upper garbage",
	     SYS_madvise,
	     {0, 4096, UPPER_GARBAGE | MADV_MERGEABLE},
	     RET_KILL},
	    {"madvise pageout", SYS_madvise, {0, 4096, MADV_PAGEOUT}, RET_KILL},
	    {"madvise cold", SYS_madvise, {0, 4096, MADV_COLD}, RET_KILL},
	    {"madvise remove", SYS_madvise, {0, 4096, MADV_REMOVE}, RET_KILL},
	    {"madvise dontfork", SYS_madvise, {0, 4096, MADV_DONTFORK}, RET_KILL},
	    {"madvise wipeonfork", SYS_madvise, {0, 4096, MADV_WIPEONFORK}, RET_KILL},
	    {"futex wait", SYS_futex, {0, FUTEX_WAIT_PRIVATE}, RET_ALLOW},
	    {"futex wake, shared", SYS_futex, {0, FUTEX_WAKE}, RET_ALLOW},
	    {"futex timed bitset wait",
	     SYS_futex,
	     {0, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME},
	     RET_ALLOW},
	    {"futex requeue", SYS_futex, {0, FUTEX_CMP_REQUEUE_PRIVATE}, RET_ALLOW},
	    /* Priority inheritance names a thread id: whether it exists on the host. */
	    {"futex trylock pi", SYS_futex, {0, FUTEX_TRYLOCK_PI}, SECCOMP_RET_ERRNO | ENOSYS},
	    {"futex lock pi, private",
	     SYS_futex,
	     {0, FUTEX_LOCK_PI_PRIVATE},
	     SECCOMP_RET_ERRNO | ENOSYS},
	    {"futex unknown op", SYS_futex, {0, 127}, RET_KILL},
	    {"mmap rx", SYS_mmap, {0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE}, RET_KILL},
	    {"mmap rwx",
	     SYS_mmap,
	     {0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE},
	     RET_KILL},
	    {"mmap shared rw", SYS_mmap, {0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED}, RET_KILL},
	    {"mprotect rw", SYS_mprotect, {0, 4096, PROT_READ | PROT_WRITE}, RET_ALLOW},
	    {"mprotect x", SYS_mprotect, {0, 4096, PROT_EXEC}, RET_KILL},
	    {"clone thread", SYS_clone, {THREAD_CLONE_FLAGS}, RET_ALLOW},
	    {"clone fork", SYS_clone, {SIGCHLD}, RET_KILL},
	    {"clone glibc fork", SYS_clone, {GLIBC_FORK_CLONE_FLAGS}, RET_KILL},
	    {"clone thread + newns", SYS_clone, {THREAD_CLONE_FLAGS | CLONE_NEWNS}, RET_KILL},
	    {"clone thread - THREAD", SYS_clone, {THREAD_CLONE_FLAGS & ~CLONE_THREAD}, RET_KILL},
	    {"clone vm only", SYS_clone, {CLONE_VM | SIGCHLD}, RET_KILL},
	    {"ioctl TIOCSTI", SYS_ioctl, {0, TIOCSTI}, RET_ENOTTY},
	    {"ioctl TIOCSTI, upper garbage", SYS_ioctl, {0, UPPER_GARBAGE | TIOCSTI}, RET_ENOTTY},
	};
	struct bpf_prog prog = bpf_load();
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t v = bpf_verdict(&prog, AUDIT_ARCH_X86_64, cases[i].nr, cases[i].args);

		cr_expect_eq(v, cases[i].want, "%s: %#x, want %#x", cases[i].what, v,
		             cases[i].want);
	}
	free(prog.insns);
}

Test(policy, bpf_kills_unlisted_syscalls_other_arches_and_x32)
{
	static const uint32_t arches[] = {AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0};
	const uint32_t kill = RET_KILL;
	struct bpf_prog prog = bpf_load();
	size_t i;

	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, SYS_sync, NULL), kill);
	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, SYS_reboot, NULL), kill);
	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, 1000, NULL), kill);
	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, -1, NULL), kill);
	/* getpid by its i386 (20) and x86_64 (39) numbers: killed from any arch but x86_64. */
	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		cr_expect_eq(bpf_verdict(&prog, arches[i], 20, NULL), kill, "arch %#x", arches[i]);
		cr_expect_eq(bpf_verdict(&prog, arches[i], SYS_getpid, NULL), kill, "arch %#x",
		             arches[i]);
	}
	/* x32 comes in as AUDIT_ARCH_X86_64 with bit 30 set in the number. */
	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | SYS_getpid, NULL),
	             kill);
	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | SYS_brk, NULL),
	             kill);
	cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | SYS_openat, NULL),
	             kill);
	free(prog.insns);
}

/* ---- real syscalls under the loaded filter ---- */

Test(policy, errno_rows_return_their_errno)
{
	size_t i;

	for (i = 0; i < policy_table_len; i++) {
		const struct policy_rule *r = &policy_table[i];
		/* Bad fd first, then bad pointers: each call fails at once if it gets through. */
		struct syscall_probe sp = {r->name,
		                           seccomp_syscall_resolve_name(r->name),
		                           {BAD_FD, BAD_PTR, 1, BAD_PTR, BAD_PTR, 0}};
		char d[64];
		int bare;

		if (r->action != POLICY_ERRNO)
			continue;
		/* A row with tests: make them hold. A "greater than" test gets pid 1's CPU clock id
		 * (or pid -14): the kernel would answer it, with EFAULT for the bad buffer. An fd
		 * with its upper half set gets fd 0 so (the kernel reads 32 bits): a negative fd
		 * would get the kernel's EBADF too, /dev/null answers otherwise. */
		for (unsigned int t = 0; t < r->n_when; t++)
			sp.a[r->when[t].argno] = r->when[t].op != POLICY_GT ? (long)r->when[t].value
			                         : r->when[t].value == UINT32_MAX
			                             ? (long)(1UL << 32)
			                             : (long)((~1L) * 8 | 2);
		/* The probe tells "blocked" from "failed": without the filter the kernel answers
		 * with another errno. */
		bare = run_child(probe_syscall, &sp, false);
		cr_expect(WIFEXITED(bare) && WEXITSTATUS(bare) != r->err &&
		              WEXITSTATUS(bare) < CHILD_SETUP_FAILED,
		          "%s without the filter: %s", r->name, describe(bare, d, sizeof(d)));
		expect_exit(r->name, run_child(probe_syscall, &sp, true), r->err);
	}
}

Test(policy, openat_gets_eacces)
{
	static const struct syscall_probe sp = {
	    "openat", SYS_openat, {AT_FDCWD, BAD_PTR, O_RDONLY}};

	expect_exit("openat, no filter", run_child(probe_syscall, &sp, false), EFAULT);
	expect_exit("openat", run_child(probe_syscall, &sp, true), EACCES);
}

Test(policy, ioctl_tiocsti_with_upper_garbage_gets_enotty)
{
	/* The kernel truncates the cmd to 32 bits; the rule must not depend on the upper half. */
	static const struct syscall_probe sp = {
	    "ioctl", SYS_ioctl, {BAD_FD, (long)(0xdeadbeef00000000ul | TIOCSTI), BAD_PTR}};
	static const struct syscall_probe tcgets = {"ioctl", SYS_ioctl, {BAD_FD, TCGETS, BAD_PTR}};

	expect_exit("ioctl TIOCSTI, no filter", run_child(probe_syscall, &sp, false), EBADF);
	expect_exit("ioctl TIOCSTI", run_child(probe_syscall, &sp, true), ENOTTY);
	expect_exit("ioctl TCGETS", run_child(probe_syscall, &tcgets, true), ENOTTY);
}

/* numpy's tofile of 16 MiB or more reserves the file's space with fallocate first: the filter
 * killed the worker for it. It fails now as on a file system without fallocate, and reserves
 * nothing: the file has no blocks more than before. */
Test(policy, fallocate_gets_eopnotsupp_and_reserves_nothing)
{
	char path[] = "/tmp/safepy-fallocate-XXXXXX";
	int fd = mkstemp(path);
	struct syscall_probe sp = {
	    "fallocate", SYS_fallocate, {0, 1 /* FALLOC_FL_KEEP_SIZE */, 0, 16 << 20}};
	struct stat st;

	cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
	unlink(path);
	sp.a[0] = fd;
	expect_exit("fallocate", run_child(probe_syscall, &sp, true), EOPNOTSUPP);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_blocks, 0, "blocks reserved: %lld", (long long)st.st_blocks);
	sp.a[0] = BAD_FD;
	expect_exit("fallocate, a bad fd", run_child(probe_syscall, &sp, true), EOPNOTSUPP);
	close(fd);
}

Test(policy, clone3_gets_enosys)
{
	static const struct syscall_probe sp = {"clone3", SYS_clone3, {BAD_PTR, 88}};

	expect_exit("clone3, no filter", run_child(probe_syscall, &sp, false), EFAULT);
	expect_exit("clone3", run_child(probe_syscall, &sp, true), ENOSYS);
}

/* Calls that must kill, with arguments that fail harmlessly should the filter let them by. */
static const struct syscall_probe kill_probes[] = {
    {"socket", SYS_socket, {-1, -1, -1}},
    {"socketpair", SYS_socketpair, {-1, -1, -1, BAD_PTR}},
    {"connect", SYS_connect, {BAD_FD, BAD_PTR, 16}},
    {"sendto", SYS_sendto, {BAD_FD, BAD_PTR, 1, 0, BAD_PTR, 16}},
    {"execve", SYS_execve, {BAD_PTR, 0, 0}},
    {"execveat", SYS_execveat, {BAD_FD, BAD_PTR, 0, 0, 0}},
    {"fork", SYS_fork, {0}},
    {"clone with fork's SIGCHLD", SYS_clone, {SIGCHLD, 0, 0, 0, 0}},
    {"clone with glibc fork's flags", SYS_clone, {GLIBC_FORK_CLONE_FLAGS, 0, 0, 0, 0}},
    {"clone thread flags + CLONE_NEWUSER", SYS_clone, {THREAD_CLONE_FLAGS | CLONE_NEWUSER}},
    {"unshare", SYS_unshare, {-1}},
    {"setns", SYS_setns, {BAD_FD, 0}},
    {"ptrace", SYS_ptrace, {-1, 0, 0, 0}},
    {"process_vm_readv", SYS_process_vm_readv, {1, 0, 0, 0, 0, 0}},
    {"process_vm_writev", SYS_process_vm_writev, {1, 0, 0, 0, 0, 0}},
    {"pidfd_open", SYS_pidfd_open, {-1, 0}},
    {"pidfd_send_signal", SYS_pidfd_send_signal, {BAD_FD, 0, 0, 0}},
    {"pidfd_getfd", SYS_pidfd_getfd, {BAD_FD, BAD_FD, 0}},
    {"kcmp", SYS_kcmp, {-1, -1, -1, 0, 0}},
    {"io_uring_setup", SYS_io_uring_setup, {0, BAD_PTR}},
    {"io_uring_enter", SYS_io_uring_enter, {BAD_FD, 0, 0, 0, 0, 0}},
    {"io_uring_register", SYS_io_uring_register, {BAD_FD, 0, 0, 0}},
    {"userfaultfd", SYS_userfaultfd, {-1}},
    {"perf_event_open", SYS_perf_event_open, {BAD_PTR, 0, -1, -1, 0}},
    {"bpf", SYS_bpf, {-1, 0, 0}},
    {"keyctl", SYS_keyctl, {-1, 0, 0, 0, 0}},
    {"add_key", SYS_add_key, {BAD_PTR, BAD_PTR, 0, 0, 0}},
    {"request_key", SYS_request_key, {BAD_PTR, BAD_PTR, 0, 0}},
    {"memfd_create", SYS_memfd_create, {BAD_PTR, 0}},
    {"personality (query only)", SYS_personality, {0xffffffff}},
    {"prctl", SYS_prctl, {-1, 0, 0, 0, 0}},
    {"arch_prctl", SYS_arch_prctl, {-1, 0}},
    {"seccomp", SYS_seccomp, {-1, 0, 0}},
    {"setrlimit", SYS_setrlimit, {-1, BAD_PTR}},
    {"prlimit64", SYS_prlimit64, {0, -1, 0, 0}},
    {"mount", SYS_mount, {BAD_PTR, BAD_PTR, BAD_PTR, 0, 0}},
    {"pkey_mprotect", SYS_pkey_mprotect, {BAD_PTR, 4096, PROT_READ, -1}},
    {"close of fd 0", SYS_close, {0}},
    {"dup", SYS_dup, {BAD_FD}},
    {"dup2", SYS_dup2, {BAD_FD, BAD_FD}},
    {"dup3", SYS_dup3, {BAD_FD, BAD_FD, 0}},
    {"fcntl", SYS_fcntl, {BAD_FD, F_GETFD}},
    {"lseek on fd 0", SYS_lseek, {0, 0, SEEK_SET}},
    {"pipe", SYS_pipe, {BAD_PTR}},
    {"pipe2", SYS_pipe2, {BAD_PTR, 0}},
    {"unlink", SYS_unlink, {BAD_PTR}},
    {"rename", SYS_rename, {BAD_PTR, BAD_PTR}},
    {"chmod", SYS_chmod, {BAD_PTR, 0}},
    {"write to fd 0", SYS_write, {0, BAD_PTR, 1}},

    {"read from fd 0", SYS_read, {0, BAD_PTR, 1}},
    {"mmap PROT_EXEC", SYS_mmap, {0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1}},
    {"mprotect PROT_EXEC", SYS_mprotect, {BAD_PTR, 4096, PROT_READ | PROT_EXEC}},
    {"sync (unlisted)", SYS_sync, {0}},
};

Test(policy, kills_escape_attempts)
{
	size_t i;

	for (i = 0; i < sizeof(kill_probes) / sizeof(kill_probes[0]); i++)
		expect_killed(kill_probes[i].what, run_child(probe_syscall, &kill_probes[i], true));
}

Test(policy, kills_on_socket)
{
	static const struct syscall_probe sp = {"socket", SYS_socket, {AF_INET, SOCK_STREAM, 0}};

	expect_killed("socket(AF_INET)", run_child(probe_syscall, &sp, true));
}

Test(policy, kills_on_fork)
{
	static const struct syscall_probe sp = {"fork", SYS_fork, {0}};

	expect_killed("fork", run_child(probe_syscall, &sp, true));
}

static int probe_vfork(const void *arg)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(0);
	return pid < 0 ? errno : 0;
}

Test(policy, kills_on_vfork)
{
	expect_killed("vfork", run_child(probe_vfork, NULL, true));
}

static int probe_kill_parent(const void *arg)
{
	return kill(getppid(), 0) < 0 ? errno : 0;
}

static int probe_tgkill_self(const void *arg)
{
	return syscall(SYS_tgkill, getpid(), gettid(), 0) < 0 ? errno : 0;
}

Test(policy, kills_on_signals)
{
	expect_killed("kill(getppid(), 0)", run_child(probe_kill_parent, NULL, true));
	expect_killed("tgkill(self, 0)", run_child(probe_tgkill_self, NULL, true));
}

Test(policy, kills_on_executable_mappings)
{
	static const struct syscall_probe mmap_rx = {
	    "mmap rx", SYS_mmap, {0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1}};
	static const struct syscall_probe mmap_rw = {
	    "mmap rw", SYS_mmap, {0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1}};
	static const struct syscall_probe mprotect_x = {
	    "mprotect x", SYS_mprotect, {BAD_PTR, 4096, PROT_EXEC}};
	static const struct syscall_probe mprotect_r = {
	    "mprotect r", SYS_mprotect, {BAD_PTR, 4096, PROT_READ}};

	expect_killed(mmap_rx.what, run_child(probe_syscall, &mmap_rx, true));
	expect_killed(mprotect_x.what, run_child(probe_syscall, &mprotect_x, true));
	/* Without PROT_EXEC they reach the kernel: length 0 and an unaligned address, EINVAL. */
	expect_exit(mmap_rw.what, run_child(probe_syscall, &mmap_rw, true), EINVAL);
	expect_exit(mprotect_r.what, run_child(probe_syscall, &mprotect_r, true), EINVAL);
}

/* getpid through the i386 entry point; returns the pid, or a negative errno. */
static long int80_getpid(void)
{
	long ret;

	__asm__ volatile("int $0x80"
	                 : "=a"(ret)
	                 : "a"(20L)
	                 : "memory", "cc", "r8", "r9", "r10", "r11");
	return ret;
}

static int probe_int80(const void *arg)
{
	return int80_getpid() == getpid() ? 0 : CHILD_WRONG_RESULT;
}

Test(policy, kills_on_i386_int80)
{
	int bare = run_child(probe_int80, NULL, false);
	char d[64];

	if (!(WIFEXITED(bare) && WEXITSTATUS(bare) == 0))
		cr_skip_test("i386 emulation unavailable (int $0x80 getpid without the filter: %s)",
		             describe(bare, d, sizeof(d)));
	expect_killed("int $0x80 getpid", run_child(probe_int80, NULL, true));
}

Test(policy, kills_on_x32)
{
	static const struct syscall_probe sp = {"x32 getpid", __X32_SYSCALL_BIT | SYS_getpid, {0}};
	int bare = run_child(probe_syscall, &sp, false);
	char d[64];

	/* With x32 off (the usual case) the kernel answers ENOSYS; on, getpid succeeds. */
	cr_log_info("x32 getpid without the filter: %s", describe(bare, d, sizeof(d)));
	expect_killed(sp.what, run_child(probe_syscall, &sp, true));
}

/* Allowed calls, probed with bad arguments: the filter must not change their result. */
static const struct syscall_probe allow_probes[] = {
    {"write to fd 1", SYS_write, {1, BAD_PTR, 1}},
    {"write to fd 2", SYS_write, {2, BAD_PTR, 1}},
    {"write to the channel", SYS_write, {POLICY_FD_CHANNEL, BAD_PTR, 1}},
    {"read from the channel", SYS_read, {POLICY_FD_CHANNEL, BAD_PTR, 1}},
    {"brk(0)", SYS_brk, {0}},
    {"mmap length 0", SYS_mmap, {0, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1}},
    {"mprotect unaligned", SYS_mprotect, {BAD_PTR, 4096, PROT_READ | PROT_WRITE}},
    {"munmap unaligned", SYS_munmap, {BAD_PTR, 4096}},
    {"mremap unaligned", SYS_mremap, {BAD_PTR, 4096, 8192, 0}},
    {"madvise unaligned", SYS_madvise, {BAD_PTR, 4096, MADV_DONTNEED}},
    {"futex wait, bad address", SYS_futex, {BAD_PTR, FUTEX_WAIT, 0, 0, 0, 0}},
    {"getrandom bad buffer", SYS_getrandom, {BAD_PTR, 16, 0}},
    {"clock_gettime bad clock", SYS_clock_gettime, {-1000, BAD_PTR}},
    {"clock_getres bad buffer", SYS_clock_getres, {CLOCK_MONOTONIC, BAD_PTR}},
    {"gettimeofday bad buffer", SYS_gettimeofday, {BAD_PTR, 0}},
    {"clock_nanosleep bad buffer", SYS_clock_nanosleep, {CLOCK_MONOTONIC, 0, BAD_PTR, 0}},
    {"nanosleep bad buffer", SYS_nanosleep, {BAD_PTR, 0}},
    {"rt_sigaction bad signal", SYS_rt_sigaction, {-1, 0, 0, 8}},
    {"rt_sigprocmask bad size", SYS_rt_sigprocmask, {SIG_BLOCK, 0, 0, 3}},
    {"getpid", SYS_getpid, {0}},
    {"gettid", SYS_gettid, {0}},
    {"getppid", SYS_getppid, {0}},
    {"sched_yield", SYS_sched_yield, {0}},
    {"set_robust_list bad size", SYS_set_robust_list, {BAD_PTR, 1}},
    {"rseq bad size", SYS_rseq, {BAD_PTR, 1, 0, 0}},
    {"exit_group(42)", SYS_exit_group, {42}},
    {"exit(43)", SYS_exit, {43}},
};

Test(policy, allowed_calls_reach_the_kernel)
{
	size_t i;

	for (i = 0; i < sizeof(allow_probes) / sizeof(allow_probes[0]); i++)
		expect_allowed(&allow_probes[i]);
}

static void *thread_main(void *arg)
{
	return arg;
}

/* pthread_create: clone3 (ENOSYS), clone with the thread flags, rseq, set_robust_list,
 * mmap and mprotect of the stack, futex on join, madvise and exit when the thread ends. */
static int probe_thread(const void *arg)
{
	int token = 7;
	void *ret = NULL;
	pthread_t t;
	int rc;

	rc = pthread_create(&t, NULL, thread_main, &token);
	if (rc != 0)
		return rc;
	rc = pthread_join(t, &ret);
	if (rc != 0)
		return rc;
	return ret == &token ? 0 : CHILD_WRONG_RESULT;
}

Test(policy, allows_threads)
{
	expect_exit("pthread_create + join", run_child(probe_thread, NULL, true), 0);
}

static int probe_getrandom(const void *arg)
{
	unsigned char buf[32];

	return syscall(SYS_getrandom, buf, sizeof(buf), 0) == (long)sizeof(buf)
	           ? 0
	           : CHILD_WRONG_RESULT;
}

Test(policy, allows_getrandom)
{
	expect_exit("getrandom", run_child(probe_getrandom, NULL, true), 0);
}

static int probe_clocks(const void *arg)
{
	static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC,
	                                   CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
	struct timespec ts, sleep = {0, 1000};
	size_t i;

	/* Raw syscalls: the vDSO would answer the first two without entering the kernel. */
	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (syscall(SYS_clock_gettime, clocks[i], &ts) != 0)
			return errno;
	if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &sleep, NULL) != 0)
		return errno;
	return 0;
}

Test(policy, allows_clocks_and_sleep)
{
	expect_exit("clock_gettime, clock_nanosleep", run_child(probe_clocks, NULL, true), 0);
}

static int probe_own_usage(const void *arg)
{
	static const int who[] = {RUSAGE_SELF, RUSAGE_THREAD, RUSAGE_CHILDREN};
	struct rusage ru;
	struct tms t;

	(void)arg;
	for (size_t i = 0; i < sizeof(who) / sizeof(who[0]); i++)
		if (syscall(SYS_getrusage, who[i], &ru) != 0)
			return errno;
	return syscall(SYS_times, &t) == -1 ? errno : 0;
}

/* Its own resource use: scipy's dual_annealing reads it, os.times() too. */
Test(policy, allows_its_own_resource_use)
{
	expect_exit("getrusage, times", run_child(probe_own_usage, NULL, true), 0);
}

static int probe_devnull_handle(const void *arg)
{
	long fd;

	(void)arg;
	fd = syscall(SYS_fcntl, 0, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (syscall(SYS_fcntl, fd, F_GETFL) < 0)
		return errno;
	return syscall(SYS_close, fd) < 0 ? errno : 0;
}

static int probe_dup_above(const void *arg)
{
	(void)arg;
	return syscall(SYS_fcntl, POLICY_FD_CHANNEL, F_DUPFD_CLOEXEC, 0) < 0 ? errno : 0;
}

static int probe_setfl(const void *arg)
{
	(void)arg;
	return syscall(SYS_fcntl, 0, F_SETFL, 0) < 0 ? errno : 0;
}

/* close(0x100000003): the kernel reads fd 3, the channel. */
static int probe_close_channel_high(const void *arg)
{
	(void)arg;
	if (syscall(SYS_close, (long)((1UL << 32) | POLICY_FD_CHANNEL)) == 0)
		return CHILD_WRONG_RESULT;
	if (errno != EBADF)
		return errno;
	/* The channel is still open. */
	return syscall(SYS_fcntl, POLICY_FD_CHANNEL, F_GETFL) < 0 ? errno : 0;
}

static int probe_close_range_high(const void *arg)
{
	(void)arg;
	return syscall(SYS_close_range, (long)((1UL << 32) | POLICY_FD_CHANNEL), ~0U, 0) < 0 ? errno
	                                                                                     : 0;
}

/* The filter tested "above the channel" on all 64 bits and the kernel reads an fd as 32: a
 * close of 0x100000003 closed the channel, and a file put there instead passed the check of
 * fds left open. Such an fd fails with EBADF now and reaches nothing; close_range from it is
 * killed. */
Test(policy, an_fd_with_its_upper_half_set_closes_nothing)
{
	expect_exit("close(0x100000003), no filter",
	            run_child(probe_close_channel_high, NULL, false), CHILD_WRONG_RESULT);
	expect_exit("close(0x100000003)", run_child(probe_close_channel_high, NULL, true), 0);
	expect_killed("close_range(0x100000003, ~0)",
	              run_child(probe_close_range_high, NULL, true));
}

/* A new handle on /dev/null (fds 0-2), and an fd's mode: scipy's qhull makes its message
 * stream so. A copy of any other fd, and any other fcntl, stay killed. */
Test(policy, allows_a_new_handle_on_dev_null_only)
{
	expect_exit("fcntl(0, F_DUPFD_CLOEXEC), F_GETFL",
	            run_child(probe_devnull_handle, NULL, true), 0);
	expect_killed("fcntl(channel, F_DUPFD_CLOEXEC)", run_child(probe_dup_above, NULL, true));
	expect_killed("fcntl(0, F_SETFL)", run_child(probe_setfl, NULL, true));
}

static int probe_malloc(const void *arg)
{
	size_t sizes[] = {16, 4096, 200000, 16 << 20};
	size_t i;

	/* brk for small blocks, mmap/munmap for big ones, mremap on growth. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *p = malloc(sizes[i]), *q;

		if (p == NULL)
			return ENOMEM;
		memset(p, 1, sizes[i]);
		q = realloc(p, sizes[i] * 2);
		if (q == NULL)
			return ENOMEM;
		memset(q, 2, sizes[i] * 2);
		free(q);
	}
	return 0;
}

Test(policy, allows_malloc)
{
	expect_exit("malloc, realloc, free", run_child(probe_malloc, NULL, true), 0);
}

Test(policy, loads_in_a_child_and_frees)
{
	/* run_child's children exit CHILD_SETUP_FAILED when policy_load fails. */
	static const struct syscall_probe sp = {"exit_group(0)", SYS_exit_group, {0}};

	expect_exit(sp.what, run_child(probe_syscall, &sp, true), 0);
	policy_free(NULL);
}

/* ---- the session variant: the table plus fork with glibc's flags and wait4 ---- */

Test(policy, session_rows_are_named_reasoned_and_consistent)
{
	size_t i, j;

	cr_assert_gt(policy_session_table_len, 0);
	for (i = 0; i < policy_session_table_len; i++) {
		const struct policy_rule *r = &policy_session_table[i];

		cr_expect_neq(seccomp_syscall_resolve_name(r->name), __NR_SCMP_ERROR, "%s",
		              r->name);
		cr_expect(r->reason != NULL && r->reason[0] != '\0', "%s has no reason", r->name);
		cr_expect(r->action == POLICY_ALLOW || r->action == POLICY_ALLOW_IF,
		          "%s: the session rows only allow", r->name);
		/* A name in both tables must be an ALLOW_IF in both (the tests are ORed). */
		for (j = 0; j < policy_table_len; j++) {
			if (strcmp(r->name, policy_table[j].name) != 0)
				continue;
			cr_expect(r->action == POLICY_ALLOW_IF &&
			              policy_table[j].action == POLICY_ALLOW_IF,
			          "%s is in the table as row %zu", r->name, j);
		}
	}
}

/* A session's parked process forks with glibc's exact flags (a raw clone: no atfork handler
 * runs), its child leaves at once with a known code, and it reaps the child with wait4. */
static int probe_fork_and_reap(const void *arg)
{
	int ctid = 0, status = 0;
	long pid, w;

	(void)arg;
	pid = syscall(SYS_clone, GLIBC_FORK_CLONE_FLAGS, 0, 0, &ctid, 0);
	if (pid == 0)
		syscall(SYS_exit_group, 42);
	if (pid < 0)
		return errno;
	w = syscall(SYS_wait4, pid, &status, 0, NULL);
	if (w < 0)
		return errno;
	return w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 42 ? 0 : CHILD_WRONG_RESULT;
}

/* The same through glibc: fork() and waitpid(), which is wait4. */
static int probe_glibc_fork_and_reap(const void *arg)
{
	int status = 0;
	pid_t pid, w;

	(void)arg;
	pid = fork();
	if (pid == 0)
		_exit(42);
	if (pid < 0)
		return errno;
	w = waitpid(pid, &status, 0);
	if (w < 0)
		return errno;
	return w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 42 ? 0 : CHILD_WRONG_RESULT;
}

Test(policy, session_policy_allows_glibc_fork_and_wait4)
{
	expect_exit("raw clone(0x1200011) + wait4",
	            run_child_built(policy_build_session, probe_fork_and_reap, NULL, true), 0);
	expect_exit("fork() + waitpid()",
	            run_child_built(policy_build_session, probe_glibc_fork_and_reap, NULL, true),
	            0);
}

Test(policy, plain_policy_kills_glibc_fork_and_wait4)
{
	static const struct syscall_probe wait4 = {"wait4", SYS_wait4, {-1, BAD_PTR, 0, BAD_PTR}};

	expect_exit("wait4, no filter", run_child(probe_syscall, &wait4, false), ECHILD);
	expect_killed("wait4", run_child(probe_syscall, &wait4, true));
	expect_killed("raw clone(0x1200011) + wait4", run_child(probe_fork_and_reap, NULL, true));
	expect_killed("fork() + waitpid()", run_child(probe_glibc_fork_and_reap, NULL, true));
}

/* Every other way to make a process, with arguments that would fail should one get by. */
static const struct syscall_probe session_kill_probes[] = {
    {"fork", SYS_fork, {0}},
    {"vfork", SYS_vfork, {0}},
    {"clone with fork's SIGCHLD", SYS_clone, {SIGCHLD, 0, 0, 0, 0}},
    {"clone CLONE_VFORK|CLONE_VM", SYS_clone, {CLONE_VFORK | CLONE_VM | SIGCHLD, 0, 0, 0, 0}},
    {"clone fork flags + CLONE_VM", SYS_clone, {GLIBC_FORK_CLONE_FLAGS | CLONE_VM, 0, 0, 0, 0}},
    {"clone fork flags + CLONE_NEWUSER", SYS_clone, {GLIBC_FORK_CLONE_FLAGS | CLONE_NEWUSER}},
    {"clone fork flags + CLONE_PARENT", SYS_clone, {GLIBC_FORK_CLONE_FLAGS | CLONE_PARENT}},
    {"clone fork flags, upper garbage", SYS_clone, {(long)(0xdeadbeef00000000ul | 0x1200011)}},
    {"clone fork flags - SIGCHLD", SYS_clone, {GLIBC_FORK_CLONE_FLAGS & ~SIGCHLD, 0, 0, 0, 0}},
};

Test(policy, session_policy_kills_every_other_fork_and_what_the_plain_one_kills)
{
	static const struct syscall_probe clone3 = {"clone3", SYS_clone3, {BAD_PTR, 88}};
	size_t i;

	for (i = 0; i < sizeof(session_kill_probes) / sizeof(session_kill_probes[0]); i++)
		expect_killed(session_kill_probes[i].what,
		              run_child_built(policy_build_session, probe_syscall,
		                              &session_kill_probes[i], true));
	expect_killed("vfork()", run_child_built(policy_build_session, probe_vfork, NULL, true));
	expect_exit("clone3", run_child_built(policy_build_session, probe_syscall, &clone3, true),
	            ENOSYS);
	for (i = 0; i < sizeof(kill_probes) / sizeof(kill_probes[0]); i++) {
		const struct syscall_probe *kp = &kill_probes[i];

		/* The one call the session variant adds: it really forks. */
		if (kp->nr == SYS_clone && kp->a[0] == GLIBC_FORK_CLONE_FLAGS)
			continue;
		expect_killed(kp->what,
		              run_child_built(policy_build_session, probe_syscall, kp, true));
	}
}

Test(policy, session_policy_keeps_the_allowed_calls_and_threads)
{
	size_t i;

	for (i = 0; i < sizeof(allow_probes) / sizeof(allow_probes[0]); i++) {
		int bare = run_child(probe_syscall, &allow_probes[i], false);

		expect_exit(
		    allow_probes[i].what,
		    run_child_built(policy_build_session, probe_syscall, &allow_probes[i], true),
		    WEXITSTATUS(bare));
	}
	expect_exit("pthread_create + join",
	            run_child_built(policy_build_session, probe_thread, NULL, true), 0);
}

/* ---- the session variant and the fork gate in the interpreter ---- */

#define RET_NOTIFY SECCOMP_RET_USER_NOTIF
#define RET_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)
#define RET_EACCES (SECCOMP_RET_ERRNO | EACCES)

/* Stacked filters as the kernel combines them: the lowest action, compared as signed
 * (kernel/seccomp.c, seccomp_run_filters: KILL_PROCESS < KILL_THREAD < TRAP < ERRNO <
 * USER_NOTIF < TRACE < LOG < ALLOW). */
static uint32_t bpf_stacked(uint32_t a, uint32_t b)
{
	return (int32_t)(a & SECCOMP_RET_ACTION_FULL) < (int32_t)(b & SECCOMP_RET_ACTION_FULL) ? a
	                                                                                       : b;
}

Test(policy, bpf_session_gives_every_row_of_both_tables_its_action)
{
	struct bpf_prog prog = bpf_load_built(policy_build_session);

	expect_rows_compiled(&prog, policy_table, policy_table_len);
	expect_rows_compiled(&prog, policy_session_table, policy_session_table_len);
	free(prog.insns);
}

/* The table's own reading (policy_check, which names the syscall that killed a worker) and
 * the program the kernel runs agree, on every syscall number and on arguments at and around
 * every test's edge, plus random ones. */
Test(policy, policy_check_agrees_with_the_compiled_filter)
{
	struct bpf_prog prog = bpf_load_built(policy_build_session);
	uint64_t edges[128];
	size_t n_edges = 0;
	unsigned int seed = 20261201;

	edges[n_edges++] = 0;
	edges[n_edges++] = 1;
	edges[n_edges++] = UINT64_MAX;
	edges[n_edges++] = 0xffffffffu;
	edges[n_edges++] = 0xdeadbeef00000000ull;
	for (size_t i = 0; i < policy_table_len + policy_session_table_len; i++) {
		const struct policy_rule *r = i < policy_table_len
		                                  ? &policy_table[i]
		                                  : &policy_session_table[i - policy_table_len];
		for (unsigned int t = 0; t < r->n_when && n_edges + 4 <= 128; t++) {
			edges[n_edges++] = r->when[t].value;
			edges[n_edges++] = r->when[t].value + 1;
			edges[n_edges++] = r->when[t].value - 1;
			edges[n_edges++] = r->when[t].value | r->when[t].mask;
		}
	}
	for (int nr = 0; nr < 460; nr++)
		for (int round = 0; round < 400; round++) {
			uint64_t args[6];
			enum policy_action a;
			uint32_t want, got;
			int err = 0;

			for (int k = 0; k < 6; k++)
				args[k] = rand_r(&seed) % 3 == 0 ? ((uint64_t)rand_r(&seed) << 33) ^
				                                       (uint64_t)rand_r(&seed)
				                                 : edges[rand_r(&seed) % n_edges];
			a = policy_check(AUDIT_ARCH_X86_64, nr, args, &err);
			want = a == POLICY_ALLOW   ? SECCOMP_RET_ALLOW
			       : a == POLICY_ERRNO ? SECCOMP_RET_ERRNO | (uint32_t)err
			                           : SECCOMP_RET_KILL_PROCESS;
			got = bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, args);
			if (got != want)
				cr_assert_fail("syscall %d args %#llx %#llx %#llx %#llx: "
				               "policy_check says %#x, "
				               "the filter %#x",
				               nr, (unsigned long long)args[0],
				               (unsigned long long)args[1],
				               (unsigned long long)args[2],
				               (unsigned long long)args[3], want, got);
		}
	free(prog.insns);
}

/* The rows this round added, as the kernel runs them: no shared memory (it would outlive a
 * rollback), no other process's CPU clock, its own CPU mask only. */
Test(policy, bpf_shared_mappings_foreign_clocks_and_affinity)
{
	struct bpf_prog prog = bpf_load_built(policy_build_session);
	static const struct {
		const char *what;
		int nr;
		uint64_t args[6];
		uint32_t want;
	} cases[] = {
	    {"private anonymous",
	     SYS_mmap,
	     {0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS},
	     SECCOMP_RET_ALLOW},
	    {"shared anonymous",
	     SYS_mmap,
	     {0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS},
	     SECCOMP_RET_KILL_PROCESS},
	    {"shared validate",
	     SYS_mmap,
	     {0, 4096, PROT_READ, 3 | MAP_ANONYMOUS},
	     SECCOMP_RET_KILL_PROCESS},
	    {"private exec",
	     SYS_mmap,
	     {0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS},
	     SECCOMP_RET_KILL_PROCESS},
	    {"own process clock", SYS_clock_gettime, {CLOCK_PROCESS_CPUTIME_ID}, SECCOMP_RET_ALLOW},
	    {"own thread clock", SYS_clock_gettime, {CLOCK_THREAD_CPUTIME_ID}, SECCOMP_RET_ALLOW},
	    {"realtime", SYS_clock_gettime, {CLOCK_REALTIME}, SECCOMP_RET_ALLOW},
	    {"pid 1's clock",
	     SYS_clock_gettime,
	     {(uint64_t)(int64_t)((~1) * 8 | 2)},
	     SECCOMP_RET_ERRNO | EINVAL},
	    {"pid 1's clock, 32-bit",
	     SYS_clock_gettime,
	     {(uint32_t)((~1) * 8 | 2)},
	     SECCOMP_RET_ERRNO | EINVAL},
	    {"pid 1's clock resolution",
	     SYS_clock_getres,
	     {(uint64_t)(int64_t)((~1) * 8 | 2)},
	     SECCOMP_RET_ERRNO | EINVAL},
	    {"sleep on pid 1's clock",
	     SYS_clock_nanosleep,
	     {(uint64_t)(int64_t)((~1) * 8 | 2)},
	     SECCOMP_RET_ERRNO | EINVAL},
	    {"monotonic sleep", SYS_clock_nanosleep, {CLOCK_MONOTONIC, 1}, SECCOMP_RET_ALLOW},
	    {"own affinity", SYS_sched_getaffinity, {0, 128}, SECCOMP_RET_ALLOW},
	    {"pid 1's affinity", SYS_sched_getaffinity, {1, 128}, SECCOMP_RET_ERRNO | EPERM},
	    {"setting affinity", SYS_sched_setaffinity, {0, 128}, SECCOMP_RET_KILL_PROCESS},
	    {"a timer of its CPU time", SYS_setitimer, {ITIMER_PROF, 0}, SECCOMP_RET_ALLOW},
	    {"a wall-clock timer", SYS_setitimer, {ITIMER_REAL, 0}, SECCOMP_RET_KILL_PROCESS},
	    {"a timer of its user time",
	     SYS_setitimer,
	     {ITIMER_VIRTUAL, 0},
	     SECCOMP_RET_KILL_PROCESS},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, cases[i].nr, cases[i].args),
		             cases[i].want, "%s: %#x", cases[i].what,
		             bpf_verdict(&prog, AUDIT_ARCH_X86_64, cases[i].nr, cases[i].args));
	free(prog.insns);
}

static const struct {
	const char *what;
	int nr;
	uint64_t args[6];
	uint32_t gate, session, plain; /* each filter's verdict */
	uint32_t stacked;              /* the gate under the session filter */
} fork_cases[] = {
    {"clone glibc fork",
     SYS_clone,
     {GLIBC_FORK_CLONE_FLAGS},
     RET_NOTIFY,
     RET_ALLOW,
     RET_KILL,
     RET_NOTIFY},
    {"clone thread", SYS_clone, {THREAD_CLONE_FLAGS}, RET_ALLOW, RET_ALLOW, RET_ALLOW, RET_ALLOW},
    {"clone CLONE_THREAD only", SYS_clone, {CLONE_THREAD}, RET_ALLOW, RET_KILL, RET_KILL, RET_KILL},
    {"clone fork, upper garbage",
     SYS_clone,
     {UPPER_GARBAGE | GLIBC_FORK_CLONE_FLAGS},
     RET_NOTIFY,
     RET_KILL,
     RET_KILL,
     RET_KILL},
    {"clone thread, upper garbage",
     SYS_clone,
     {UPPER_GARBAGE | THREAD_CLONE_FLAGS},
     RET_ALLOW,
     RET_KILL,
     RET_KILL,
     RET_KILL},
    {"clone SIGCHLD", SYS_clone, {SIGCHLD}, RET_NOTIFY, RET_KILL, RET_KILL, RET_KILL},
    {"clone 0", SYS_clone, {0}, RET_NOTIFY, RET_KILL, RET_KILL, RET_KILL},
    {"clone vfork",
     SYS_clone,
     {CLONE_VFORK | CLONE_VM | SIGCHLD},
     RET_NOTIFY,
     RET_KILL,
     RET_KILL,
     RET_KILL},
    {"clone fork + CLONE_VM",
     SYS_clone,
     {GLIBC_FORK_CLONE_FLAGS | CLONE_VM},
     RET_NOTIFY,
     RET_KILL,
     RET_KILL,
     RET_KILL},
    {"fork", SYS_fork, {0}, RET_ALLOW, RET_KILL, RET_KILL, RET_KILL},
    {"vfork", SYS_vfork, {0}, RET_ALLOW, RET_KILL, RET_KILL, RET_KILL},
    {"clone3", SYS_clone3, {0}, RET_ALLOW, RET_ENOSYS, RET_ENOSYS, RET_ENOSYS},
    {"wait4", SYS_wait4, {UINT64_MAX, 0, UINT64_MAX}, RET_ALLOW, RET_ALLOW, RET_KILL, RET_ALLOW},
    {"getpid", SYS_getpid, {0}, RET_ALLOW, RET_ALLOW, RET_ALLOW, RET_ALLOW},
    {"sync (unlisted)", SYS_sync, {0}, RET_ALLOW, RET_KILL, RET_KILL, RET_KILL},
    {"openat", SYS_openat, {0}, RET_ALLOW, RET_EACCES, RET_EACCES, RET_EACCES},
};

Test(policy, bpf_fork_rules_of_the_gate_the_session_and_the_plain_filter)
{
	struct bpf_prog gate = bpf_load_built(policy_gate_build);
	struct bpf_prog session = bpf_load_built(policy_build_session);
	struct bpf_prog plain = bpf_load();
	size_t i;

	for (i = 0; i < sizeof(fork_cases) / sizeof(fork_cases[0]); i++) {
		uint32_t g =
		    bpf_verdict(&gate, AUDIT_ARCH_X86_64, fork_cases[i].nr, fork_cases[i].args);
		uint32_t s =
		    bpf_verdict(&session, AUDIT_ARCH_X86_64, fork_cases[i].nr, fork_cases[i].args);
		uint32_t p =
		    bpf_verdict(&plain, AUDIT_ARCH_X86_64, fork_cases[i].nr, fork_cases[i].args);

		cr_expect_eq(g, fork_cases[i].gate, "%s, gate: %#x", fork_cases[i].what, g);
		cr_expect_eq(s, fork_cases[i].session, "%s, session: %#x", fork_cases[i].what, s);
		cr_expect_eq(p, fork_cases[i].plain, "%s, plain: %#x", fork_cases[i].what, p);
		cr_expect_eq(bpf_stacked(g, s), fork_cases[i].stacked, "%s, stacked: %#x",
		             fork_cases[i].what, bpf_stacked(g, s));
	}
	free(gate.insns);
	free(session.insns);
	free(plain.insns);
}

Test(policy, bpf_gate_kills_other_arches_and_x32)
{
	static const uint32_t arches[] = {AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, 0};
	struct bpf_prog gate = bpf_load_built(policy_gate_build);
	size_t i;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		cr_expect_eq(bpf_verdict(&gate, arches[i], 120, NULL), RET_KILL, "arch %#x",
		             arches[i]); /* i386 clone */
		cr_expect_eq(bpf_verdict(&gate, arches[i], SYS_getpid, NULL), RET_KILL, "arch %#x",
		             arches[i]);
	}
	cr_expect_eq(bpf_verdict(&gate, AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | SYS_clone, NULL),
	             RET_KILL);
	cr_expect_eq(bpf_verdict(&gate, AUDIT_ARCH_X86_64, __X32_SYSCALL_BIT | SYS_getpid, NULL),
	             RET_KILL);
	free(gate.insns);
}

Test(policy, exports_gate_pfc_allowing_by_default)
{
	size_t len;
	char *pfc = export_built(policy_gate_build, policy_export_pfc, &len);

	cr_expect_not_null(strstr(pfc, "# default action\n  action ALLOW;"), "%s", pfc);
	cr_expect_not_null(strstr(pfc, "# invalid architecture action\naction KILL_PROCESS;"));
	/* libseccomp 2.5.4 prints NOTIFY as its raw value (SECCOMP_RET_USER_NOTIF). */
	cr_expect(strstr(pfc, "action NOTIFY;") || strstr(pfc, "action 0x7fc00000;"), "%s", pfc);
	free(pfc);
}

/* ---- the fork gate, loaded, with the test answering as the supervisor will ---- */

#define GATE_MS 5000

static void skip_without_notify(void)
{
	if (seccomp_api_get() < 5)
		cr_skip_test("libseccomp API level %u: no user notification (needs 5)",
		             seccomp_api_get());
}

/* One byte with fd attached (SCM_RIGHTS). 0 or -1. */
static int send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = "N", .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = control.buf,
	                     .msg_controllen = sizeof(control.buf)};
	struct cmsghdr *cmsg;

	memset(&control, 0, sizeof(control));
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The fd send_fd sent, O_CLOEXEC here; -1 if none came within GATE_MS. */
static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct pollfd p = {.fd = sock, .events = POLLIN};
	struct iovec iov;
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = control.buf,
	                     .msg_controllen = sizeof(control.buf)};
	struct cmsghdr *cmsg;
	char byte;
	int fd = -1;

	iov = (struct iovec){.iov_base = &byte, .iov_len = 1};
	if (poll(&p, 1, GATE_MS) != 1 || recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (cmsg == NULL || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS ||
	    cmsg->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

/* child_prepare, with the test's socket as the channel (fd 3) instead of /dev/null. */
static int gated_child_prepare(int sock)
{
	struct rlimit no_core = {0, 0};
	int chan, null, i;

	alarm(10);
	if (setrlimit(RLIMIT_CORE, &no_core) != 0 || prctl(PR_SET_DUMPABLE, 0) != 0)
		return -1;
	chan = fcntl(sock, F_DUPFD, POLICY_FD_CHANNEL + 1);
	null = open("/dev/null", O_RDWR);
	if (chan < 0 || null < 0)
		return -1;
	for (i = 0; i < POLICY_FD_CHANNEL; i++)
		if (dup2(null, i) != i)
			return -1;
	if (dup2(chan, POLICY_FD_CHANNEL) != POLICY_FD_CHANNEL)
		return -1;
	return (int)syscall(SYS_close_range, POLICY_FD_CHANNEL + 1, ~0U, 0);
}

struct gated {
	pid_t pid;
	int sock;     /* the test's end of the child's fd 3 */
	int listener; /* the child's gate listener, received on sock */
};

/* Fork a child that enters the gate and the session filter as a session's worker does: the
 * gate, its listener to the test over fd 3 (SCM_RIGHTS) and closed, then the session filter.
 * The child runs fn and exits with its result; the test holds the only listener. */
static struct gated gated_spawn(probe_fn fn, const void *arg)
{
	struct policy *gate = NULL, *session = NULL;
	struct gated g;
	int sv[2], rc;

	rc = policy_gate_build(&gate);
	cr_assert_eq(rc, 0, "policy_gate_build: %s", strerror(-rc));
	rc = policy_build_session(&session);
	cr_assert_eq(rc, 0, "policy_build_session: %s", strerror(-rc));
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	g.pid = fork();
	cr_assert_neq(g.pid, -1, "fork: %s", strerror(errno));
	if (g.pid == 0) {
		int listener, killable;

		if (gated_child_prepare(sv[1]) != 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    policy_gate_load(gate, &listener, &killable) != 0 ||
		    send_fd(POLICY_FD_CHANNEL, listener) != 0 || close(listener) != 0 ||
		    policy_load(session) != 0)
			_exit(CHILD_SETUP_FAILED);
		_exit(fn(arg));
	}
	policy_free(gate);
	policy_free(session);
	close(sv[1]);
	g.sock = sv[0];
	g.listener = recv_fd(g.sock);
	cr_assert_geq(g.listener, 0, "no listener from the gated child");
	return g;
}

/* Wait for one question on the listener; it must be a fork with glibc's flags, by from (or,
 * from 0, by anyone). Answer it: error 0 lets the fork happen, a negative errno fails it.
 * Returns the pid that asked. */
static pid_t gate_answer(int listener, pid_t from, int error)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	struct pollfd p = {.fd = listener, .events = POLLIN};
	pid_t asker;
	int rc;

	rc = seccomp_notify_alloc(&req, &resp);
	cr_assert_eq(rc, 0, "seccomp_notify_alloc: %s", strerror(-rc));
	cr_assert_eq(poll(&p, 1, GATE_MS), 1, "no fork reached the listener");
	rc = seccomp_notify_receive(listener, req);
	cr_assert_eq(rc, 0, "seccomp_notify_receive: %s", strerror(-rc));
	asker = (pid_t)req->pid;
	if (from != 0)
		cr_expect_eq(asker, from, "asked by %d", (int)asker);
	cr_expect_eq(req->data.arch, AUDIT_ARCH_X86_64);
	cr_expect_eq(req->data.nr, SYS_clone, "syscall %d", req->data.nr);
	cr_expect_eq(req->data.args[0], GLIBC_FORK_CLONE_FLAGS, "flags %#llx",
	             (unsigned long long)req->data.args[0]);
	/* The asker may have died since (then the id is stale): the supervisor's guard. */
	cr_assert_eq(seccomp_notify_id_valid(listener, req->id), 0);
	resp->id = req->id;
	resp->val = 0;
	resp->error = error;
	resp->flags = error == 0 ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
	rc = seccomp_notify_respond(listener, resp);
	cr_assert_eq(rc, 0, "seccomp_notify_respond: %s", strerror(-rc));
	seccomp_notify_free(req, resp);
	return asker;
}

/* POLLIN means a question; POLLHUP alone only that every gated process has gone. */
static void expect_no_question(int listener)
{
	struct pollfd p = {.fd = listener, .events = POLLIN};

	cr_expect(poll(&p, 1, 0) >= 0 && (p.revents & POLLIN) == 0,
	          "a question is waiting on the listener (revents %#x)", p.revents);
}

/* Lines from the child until one starts with "fork=" (kept in buf, NUL-terminated), or
 * GATE_MS of silence. */
static void read_until_fork_line(int sock, char *buf, size_t cap)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	size_t len = 0;

	buf[0] = '\0';
	while (len + 1 < cap && poll(&p, 1, GATE_MS) == 1 && read(sock, buf + len, 1) == 1) {
		buf[++len] = '\0';
		if (buf[len - 1] == '\n' && strstr(buf, "fork="))
			break;
	}
}

/* Append what else arrives until EOF (every holder of the child's fd 3 has gone). */
static void read_rest(int sock, char *buf, size_t cap)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	size_t len = strlen(buf);
	ssize_t n;

	while (len + 1 < cap && poll(&p, 1, GATE_MS) == 1 &&
	       (n = read(sock, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
}

static size_t count_markers(const char *buf)
{
	size_t n = 0;

	for (const char *c = buf; (c = strstr(c, "C\n")) != NULL; c += 2)
		n++;
	return n;
}

/* The tests that count a probe's children need the kernel's list of them. */
static void skip_without_proc_children(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	if (access(path, R_OK) != 0)
		cr_skip_test("%s: %s; counting a process's children needs CONFIG_PROC_CHILDREN",
		             path, strerror(errno));
}

/* The children the kernel lists for pid: none. */
static void expect_no_children(pid_t pid)
{
	char path[64], buf[128] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_expect_eq(n, 0, "%d has children: %s", (int)pid, buf);
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
	return status;
}

/* User code's fork in a gated process, through glibc. A child that runs says "C" and leaves
 * with 7. The probe says on fd 3 what fork gave and whether any child of its is left
 * (wait4(-1, WNOHANG): ECHILD means none was made), waits for the test's word, then exits
 * with fork's errno, or 0 when the child ran and was reaped. With *arg true it also waits
 * for the test's word before forking. */
static int probe_gated_fork(const void *arg)
{
	const bool *wait_first = arg;
	char c, line[96];
	int status = 0, err = 0, n;
	pid_t pid;
	long left;

	if (wait_first != NULL && *wait_first && read(POLICY_FD_CHANNEL, &c, 1) != 1)
		return CHILD_WRONG_RESULT;
	pid = fork();
	if (pid == 0) {
		(void)!write(POLICY_FD_CHANNEL, "C\n", 2);
		_exit(7);
	}
	if (pid < 0)
		err = errno;
	else if (waitpid(pid, &status, 0) != pid)
		return CHILD_WRONG_RESULT;
	left = syscall(SYS_wait4, -1, NULL, WNOHANG, NULL);
	if (pid < 0)
		n = snprintf(line, sizeof(line), "fork=-1 errno=%d left=%ld errno=%d\n", err, left,
		             left < 0 ? errno : 0);
	else
		n = snprintf(line, sizeof(line), "fork=child exit=%d left=%ld errno=%d\n",
		             WIFEXITED(status) ? WEXITSTATUS(status) : -1, left,
		             left < 0 ? errno : 0);
	if (write(POLICY_FD_CHANNEL, line, (size_t)n) != n || read(POLICY_FD_CHANNEL, &c, 1) != 1)
		return CHILD_WRONG_RESULT;
	return err;
}

/* The probe's answer, the kernel's list of its children, then its end. Returns what it
 * sent. */
static void finish_gated_fork(const struct gated *g, char *buf, size_t cap, int exit_code)
{
	read_until_fork_line(g->sock, buf, cap);
	expect_no_children(g->pid);
	cr_assert_eq(write(g->sock, "g", 1), 1);
	read_rest(g->sock, buf, cap);
	expect_exit("the gated probe", wait_child(g->pid), exit_code);
}

Test(policy, gate_refused_fork_fails_with_eperm_and_makes_no_process)
{
	struct gated g;
	char buf[256];

	skip_without_notify();
	skip_without_proc_children();
	g = gated_spawn(probe_gated_fork, NULL);
	gate_answer(g.listener, g.pid, -EPERM);
	finish_gated_fork(&g, buf, sizeof(buf), EPERM);
	cr_expect_not_null(strstr(buf, "fork=-1 errno=1 left=-1 errno=10\n"), "%s", buf);
	cr_expect_eq(count_markers(buf), 0, "a child ran: %s", buf);
	expect_no_question(g.listener);
	close(g.listener);
	close(g.sock);
}

Test(policy, gate_continued_fork_happens_once)
{
	struct gated g;
	char buf[256];

	skip_without_notify();
	skip_without_proc_children();
	g = gated_spawn(probe_gated_fork, NULL);
	gate_answer(g.listener, g.pid, 0);
	finish_gated_fork(&g, buf, sizeof(buf), 0);
	cr_expect_not_null(strstr(buf, "fork=child exit=7 left=-1 errno=10\n"), "%s", buf);
	cr_expect_eq(count_markers(buf), 1, "%s", buf);
	expect_no_question(g.listener);
	close(g.listener);
	close(g.sock);
}

Test(policy, gate_without_a_listener_fails_forks_with_enosys)
{
	const bool wait_first = true;
	struct gated g;
	char buf[256];

	skip_without_notify();
	skip_without_proc_children();
	g = gated_spawn(probe_gated_fork, &wait_first);
	cr_assert_eq(close(g.listener), 0);
	cr_assert_eq(write(g.sock, "s", 1), 1);
	finish_gated_fork(&g, buf, sizeof(buf), ENOSYS);
	cr_expect_not_null(strstr(buf, "fork=-1 errno=38 left=-1 errno=10\n"), "%s", buf);
	cr_expect_eq(count_markers(buf), 0, "a child ran: %s", buf);
	close(g.sock);
}

Test(policy, gate_fork_waiting_when_the_listener_closes_gets_enosys)
{
	struct pollfd p;
	struct gated g;
	char buf[256];

	skip_without_notify();
	skip_without_proc_children();
	g = gated_spawn(probe_gated_fork, NULL);
	/* The question is asked, and the fork waits for it: nothing comes on the socket. */
	p = (struct pollfd){.fd = g.listener, .events = POLLIN};
	cr_assert_eq(poll(&p, 1, GATE_MS), 1, "no fork reached the listener");
	p = (struct pollfd){.fd = g.sock, .events = POLLIN};
	cr_assert_eq(poll(&p, 1, 200), 0, "the fork did not wait for an answer");
	/* What happens to a session's parked process when the supervisor dies. */
	cr_assert_eq(close(g.listener), 0);
	finish_gated_fork(&g, buf, sizeof(buf), ENOSYS);
	cr_expect_not_null(strstr(buf, "fork=-1 errno=38 left=-1 errno=10\n"), "%s", buf);
	cr_expect_eq(count_markers(buf), 0, "a child ran: %s", buf);
	close(g.sock);
}

Test(policy, gate_lets_threads_through_without_a_question)
{
	struct gated g;

	skip_without_notify();
	/* Nobody answers: a thread sent to the listener would wait until the alarm. */
	g = gated_spawn(probe_thread, NULL);
	expect_exit("pthread_create + join under the gate", wait_child(g.pid), 0);
	expect_no_question(g.listener);
	close(g.listener);
	close(g.sock);
}

/* The gate alone: a listener, close-on-exec, that is a seccomp listener; a second gate in the
 * same process is refused, and so is a policy that is not a gate. */
static int probe_gate_load(const void *arg)
{
	const struct policy *const *p = arg; /* {gate, plain} */
	char path[64], target[64];
	int listener, again = -1, flags, killable = -1, k2 = -1;
	ssize_t n;

	if (policy_gate_load(p[1], &again, &k2) != -EINVAL || again != -1)
		return 11;
	if (policy_gate_load(p[0], &listener, &killable) != 0)
		return 12;
	/* Linux 5.19+ (this project's kernels): a parked process waits killable. */
	if (killable != 1)
		return 17;
	flags = fcntl(listener, F_GETFD);
	if (flags < 0 || (flags & FD_CLOEXEC) == 0)
		return 13;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", listener);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 14;
	target[n] = '\0';
	if (strcmp(target, "anon_inode:seccomp notify") != 0)
		return 15;
	if (policy_gate_load(p[0], &again, &k2) != -EBUSY || again != -1)
		return 16;
	return 0;
}

Test(policy, gate_load_gives_one_cloexec_listener)
{
	struct policy *p[2] = {NULL, NULL};
	pid_t pid;

	skip_without_notify();
	cr_assert_eq(policy_gate_build(&p[0]), 0);
	cr_assert_eq(policy_build(&p[1]), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		if (child_prepare() != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(CHILD_SETUP_FAILED);
		_exit(probe_gate_load(p));
	}
	policy_free(p[0]);
	policy_free(p[1]);
	expect_exit("gate load", wait_child(pid), 0);
}
