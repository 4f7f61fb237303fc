/* test_policy.c - the worker's seccomp policy: the table, the compiled BPF run through an
 * interpreter, and real syscalls made by forked children under the loaded filter.
 * The filter is never installed in the test runner itself: every probe runs in a child. */
#include <criterion/criterion.h>

#include <asm/unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* Fork; the child prepares, loads the policy when filtered, runs fn once and exits with its
 * result. Returns the child's wait status. */
static int run_child(probe_fn fn, const void *arg, bool filtered)
{
	struct policy *p = NULL;
	int status, rc;
	pid_t pid;

	rc = policy_build(&p);
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
		if (r->action == POLICY_ALLOW_IF) {
			cr_expect_leq(r->when.argno, 5u, "%s: argument %u", r->name, r->when.argno);
			cr_expect_eq(r->when.value & ~r->when.mask, 0,
			             "%s: the value has bits outside the mask", r->name);
		}
		/* One action per syscall; only ALLOW_IF rows repeat (their tests are ORed). */
		for (j = i + 1; j < policy_table_len; j++) {
			if (strcmp(r->name, policy_table[j].name) != 0)
				continue;
			cr_expect(r->action == POLICY_ALLOW_IF &&
			              policy_table[j].action == POLICY_ALLOW_IF,
			          "%s appears in rows %zu and %zu", r->name, i, j);
		}
	}
}

/* The rules of sandbox.md §3: a row dropped from the table must fail here. */
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
    {"mremap", POLICY_ALLOW, 0},
    {"madvise", POLICY_ALLOW, 0},
    {"futex", POLICY_ALLOW, 0},
    {"getrandom", POLICY_ALLOW, 0},
    {"clock_gettime", POLICY_ALLOW, 0},
    {"clock_getres", POLICY_ALLOW, 0},
    {"gettimeofday", POLICY_ALLOW, 0},
    {"clock_nanosleep", POLICY_ALLOW, 0},
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

/* Run export on a fresh policy into a memfd; return its text (malloc'd) and length. */
static char *export_policy(int (*export)(const struct policy *, int), size_t *len)
{
	struct policy *p = NULL;
	char *buf;
	off_t size;
	int fd, rc;

	cr_assert_eq(policy_build(&p), 0);
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

static struct bpf_prog bpf_load(void)
{
	size_t len;
	char *raw = export_policy(policy_export_bpf, &len);

	cr_assert_eq(len % sizeof(struct sock_filter), 0);
	return (struct bpf_prog){(struct sock_filter *)(void *)raw,
	                         len / sizeof(struct sock_filter)};
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

Test(policy, bpf_gives_every_row_its_action)
{
	static const uint64_t zero[6],
	    ones[6] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
	struct bpf_prog prog = bpf_load();
	size_t i;

	for (i = 0; i < policy_table_len; i++) {
		const struct policy_rule *r = &policy_table[i];
		int nr = seccomp_syscall_resolve_name(r->name);
		uint64_t args[6] = {0};

		switch (r->action) {
		case POLICY_ALLOW:
			cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, zero),
			             SECCOMP_RET_ALLOW, "%s", r->name);
			cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, ones),
			             SECCOMP_RET_ALLOW, "%s", r->name);
			break;
		case POLICY_ALLOW_IF:
			args[r->when.argno] = r->when.value;
			cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, args),
			             SECCOMP_RET_ALLOW, "%s when its test holds", r->name);
			/* All-ones fails every test (the values never equal their masks). */
			cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, ones),
			             SECCOMP_RET_KILL_PROCESS, "%s when its test fails", r->name);
			/* The upper half counts: the kernel may use it (write's fd does not). */
			args[r->when.argno] = r->when.value | (r->when.mask & 0xffffffff00000000u);
			if (r->when.value != args[r->when.argno])
				cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, args),
				             SECCOMP_RET_KILL_PROCESS, "%s with upper bits",
				             r->name);
			break;
		case POLICY_ERRNO:
			cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, ones),
			             SECCOMP_RET_ERRNO | (uint32_t)r->err, "%s", r->name);
			break;
		case POLICY_KILL:
			cr_expect_eq(bpf_verdict(&prog, AUDIT_ARCH_X86_64, nr, zero),
			             SECCOMP_RET_KILL_PROCESS, "%s", r->name);
			break;
		}
	}
	free(prog.insns);
}

#define RET_KILL      SECCOMP_RET_KILL_PROCESS
#define RET_ALLOW     SECCOMP_RET_ALLOW
#define RET_ENOTTY    (SECCOMP_RET_ERRNO | ENOTTY)
#define UPPER_GARBAGE 0xdeadbeef00000000ul

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
	    {"write fd 4", SYS_write, {4}, RET_KILL},
	    {"write fd 1 with upper garbage", SYS_write, {UPPER_GARBAGE | 1}, RET_KILL},
	    {"read channel", SYS_read, {POLICY_FD_CHANNEL}, RET_ALLOW},
	    {"read fd 0", SYS_read, {0}, RET_KILL},
	    {"mmap rw", SYS_mmap, {0, 4096, PROT_READ | PROT_WRITE}, RET_ALLOW},
	    {"mmap none", SYS_mmap, {0, 4096, PROT_NONE}, RET_ALLOW},
	    {"mmap rw, upper garbage", SYS_mmap, {0, 4096, UPPER_GARBAGE | PROT_READ}, RET_ALLOW},
	    {"mmap rx", SYS_mmap, {0, 4096, PROT_READ | PROT_EXEC}, RET_KILL},
	    {"mmap rwx", SYS_mmap, {0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC}, RET_KILL},
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
    {"close", SYS_close, {BAD_FD}},
    {"dup", SYS_dup, {BAD_FD}},
    {"dup2", SYS_dup2, {BAD_FD, BAD_FD}},
    {"dup3", SYS_dup3, {BAD_FD, BAD_FD, 0}},
    {"fcntl", SYS_fcntl, {BAD_FD, F_GETFD}},
    {"lseek", SYS_lseek, {BAD_FD, 0, SEEK_SET}},
    {"pipe", SYS_pipe, {BAD_PTR}},
    {"pipe2", SYS_pipe2, {BAD_PTR, 0}},
    {"unlink", SYS_unlink, {BAD_PTR}},
    {"rename", SYS_rename, {BAD_PTR, BAD_PTR}},
    {"chmod", SYS_chmod, {BAD_PTR, 0}},
    {"write to fd 0", SYS_write, {0, BAD_PTR, 1}},
    {"write to fd 5", SYS_write, {5, BAD_PTR, 1}},
    {"write to fd 1 with upper garbage", SYS_write, {0x100000001L, BAD_PTR, 1}},
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
    {"futex bad op", SYS_futex, {BAD_PTR, -1, 0, 0, 0, 0}},
    {"getrandom bad buffer", SYS_getrandom, {BAD_PTR, 16, 0}},
    {"clock_gettime bad clock", SYS_clock_gettime, {-1000, BAD_PTR}},
    {"clock_getres bad clock", SYS_clock_getres, {-1000, BAD_PTR}},
    {"gettimeofday bad buffer", SYS_gettimeofday, {BAD_PTR, 0}},
    {"clock_nanosleep bad clock", SYS_clock_nanosleep, {-1000, 0, BAD_PTR, 0}},
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
