/* sdfilter.c - test helper: load the seccomp filters systemd 252 loads for the directives of
 * safepy@.service, then exec a command, so that `safepy doctor` can be checked under them
 * without systemd as PID 1. Each directive is one filter, built as systemd's
 * src/shared/seccomp-util.c builds it (native architecture only; other architectures are
 * killed by --archs-native as SystemCallArchitectures=native does).
 *   sdfilter [--DIRECTIVE]... [--all] -- COMMAND [ARG]...
 * Exits 125 when a filter cannot be built or loaded, 127 when exec fails. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		int rc_ = (x);                                                                     \
		if (rc_ < 0) {                                                                     \
			fprintf(stderr, "sdfilter: %s: %s\n", #x, strerror(-rc_));                 \
			exit(125);                                                                 \
		}                                                                                  \
	} while (0)

static scmp_filter_ctx new_filter(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx) {
		fprintf(stderr, "sdfilter: seccomp_init failed\n");
		exit(125);
	}
	/* systemd loads as PID 1 (CAP_SYS_ADMIN) or after NoNewPrivileges; so do we. */
	CHECK(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0));
	return ctx;
}

static void load(scmp_filter_ctx ctx)
{
	CHECK(seccomp_load(ctx));
	seccomp_release(ctx);
}

static void deny_names(scmp_filter_ctx ctx, uint32_t action, const char *const *names)
{
	for (; *names; names++) {
		int nr = seccomp_syscall_resolve_name(*names);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture, as systemd skips it */
		CHECK(seccomp_rule_add(ctx, action, nr, 0));
	}
}

/* RestrictNamespaces=user net ipc */
static void restrict_namespaces(void)
{
	static const unsigned long blocked[] = {CLONE_NEWCGROUP, CLONE_NEWNS, CLONE_NEWPID,
	                                        CLONE_NEWUTS, 0x00000080 /* CLONE_NEWTIME */};
	scmp_filter_ctx ctx = new_filter();

	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0));
	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 1,
	                             SCMP_A1(SCMP_CMP_EQ, 0)));
	for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++) {
		unsigned long f = blocked[i];
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
		                             SCMP_A0(SCMP_CMP_MASKED_EQ, f, f)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
		                             SCMP_A0(SCMP_CMP_MASKED_EQ, f, f)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 1,
		                             SCMP_A1(SCMP_CMP_MASKED_EQ, f, f)));
	}
	load(ctx);
}

/* RestrictAddressFamilies=AF_UNIX (an allow list of one: below and above it are refused). */
static void restrict_address_families(void)
{
	scmp_filter_ctx ctx = new_filter();

	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
	                             SCMP_A0(SCMP_CMP_LT, AF_UNIX)));
	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
	                             SCMP_A0(SCMP_CMP_GT, AF_UNIX)));
	load(ctx);
}

/* MemoryDenyWriteExecute=yes */
static void memory_deny_write_execute(void)
{
	scmp_filter_ctx ctx = new_filter();

	CHECK(seccomp_rule_add_exact(
	    ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
	    SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC | PROT_WRITE, PROT_EXEC | PROT_WRITE)));
	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mprotect), 1,
	                             SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC)));
	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pkey_mprotect), 1,
	                             SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC)));
	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(shmat), 1,
	                             SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC)));
	load(ctx);
}

/* RestrictRealtime=yes: only SCHED_OTHER, SCHED_BATCH, SCHED_IDLE. */
static void restrict_realtime(void)
{
	scmp_filter_ctx ctx = new_filter();

	for (int p = 0; p < SCHED_IDLE; p++)
		if (p != SCHED_OTHER && p != SCHED_BATCH)
			CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM),
			                             SCMP_SYS(sched_setscheduler), 1,
			                             SCMP_A1(SCMP_CMP_EQ, p)));
	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setscheduler), 1,
	                             SCMP_A1(SCMP_CMP_GT, SCHED_IDLE)));
	load(ctx);
}

/* RestrictSUIDSGID=yes: no set-user/group-ID bits through chmod or file creation. */
static void restrict_suid_sgid(void)
{
	scmp_filter_ctx ctx = new_filter();

	for (int bit = 0; bit < 2; bit++) {
		unsigned long m = bit ? S_ISGID : S_ISUID;
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(chmod), 1,
		                             SCMP_A1(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fchmod), 1,
		                             SCMP_A1(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fchmodat), 1,
		                             SCMP_A2(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mkdir), 1,
		                             SCMP_A1(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mkdirat), 1,
		                             SCMP_A2(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(creat), 1,
		                             SCMP_A1(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(open), 2,
		                             SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT),
		                             SCMP_A2(SCMP_CMP_MASKED_EQ, m, m)));
		CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 2,
		                             SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT),
		                             SCMP_A3(SCMP_CMP_MASKED_EQ, m, m)));
	}
	load(ctx);
}

/* LockPersonality=yes: personality() only with the current one (PER_LINUX). */
static void lock_personality(void)
{
	scmp_filter_ctx ctx = new_filter();

	CHECK(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
	                             SCMP_A0(SCMP_CMP_NE, 0)));
	load(ctx);
}

static void deny_set(const char *const *names, uint32_t action)
{
	scmp_filter_ctx ctx = new_filter();

	deny_names(ctx, action, names);
	load(ctx);
}

/* SystemCallArchitectures=native: a filter with only the native architecture, so any other
 * architecture's call meets libseccomp's bad-architecture action (a kill). */
static void archs_native(void)
{
	load(new_filter());
}

static const char *const clock_set[] = {"adjtimex",
                                        "clock_adjtime",
                                        "clock_adjtime64",
                                        "clock_settime",
                                        "clock_settime64",
                                        "settimeofday",
                                        NULL};
static const char *const module_set[] = {"delete_module", "finit_module", "init_module", NULL};
static const char *const raw_io_set[] = {
    "ioperm", "iopl", "pciconfig_iobase", "pciconfig_read", "pciconfig_write", NULL};
static const char *const hostname_set[] = {"sethostname", "setdomainname", NULL};
static const char *const syslog_set[] = {"syslog", NULL};
static const char *const sysctl_set[] = {"_sysctl", NULL};
/* SystemCallFilter=~@clock @cpu-emulation @module @mount @obsolete @raw-io @reboot @swap, as
 * `systemd-analyze syscall-filter` lists the sets in systemd 252 (killed, not refused). */
static const char *const filter_set[] = {
    /* @clock */
    "adjtimex", "clock_adjtime", "clock_adjtime64", "clock_settime", "clock_settime64",
    "settimeofday",
    /* @cpu-emulation */
    "modify_ldt", "subpage_prot", "switch_endian", "vm86", "vm86old",
    /* @module */
    "delete_module", "finit_module", "init_module",
    /* @mount */
    "chroot", "fsconfig", "fsmount", "fsopen", "fspick", "mount", "mount_setattr", "move_mount",
    "open_tree", "pivot_root", "umount", "umount2",
    /* @obsolete */
    "_sysctl", "afs_syscall", "bdflush", "break", "create_module", "ftime", "get_kernel_syms",
    "getpmsg", "gtty", "idle", "lock", "mpx", "prof", "profil", "putpmsg", "query_module",
    "security", "sgetmask", "ssetmask", "stime", "stty", "sysfs", "tuxcall", "ulimit", "uselib",
    "ustat", "vserver",
    /* @raw-io */
    "ioperm", "iopl", "pciconfig_iobase", "pciconfig_read", "pciconfig_write", "s390_pci_mmio_read",
    "s390_pci_mmio_write",
    /* @reboot */
    "kexec_file_load", "kexec_load", "reboot",
    /* @swap */
    "swapoff", "swapon", NULL};

static const struct {
	const char *name;
	void (*apply)(void);
	const char *const *set;
	uint32_t action;
} directives[] = {
    {"restrict-address-families", restrict_address_families, NULL, 0},
    {"memory-deny-write-execute", memory_deny_write_execute, NULL, 0},
    {"restrict-realtime", restrict_realtime, NULL, 0},
    {"restrict-suid-sgid", restrict_suid_sgid, NULL, 0},
    {"restrict-namespaces", restrict_namespaces, NULL, 0},
    {"protect-kernel-tunables", NULL, sysctl_set, SCMP_ACT_ERRNO(EPERM)},
    {"protect-kernel-modules", NULL, module_set, SCMP_ACT_ERRNO(EPERM)},
    {"protect-kernel-logs", NULL, syslog_set, SCMP_ACT_ERRNO(EPERM)},
    {"protect-clock", NULL, clock_set, SCMP_ACT_ERRNO(EPERM)},
    {"private-devices", NULL, raw_io_set, SCMP_ACT_ERRNO(EPERM)},
    {"protect-hostname", NULL, hostname_set, SCMP_ACT_ERRNO(EPERM)},
    {"archs-native", archs_native, NULL, 0},
    {"lock-personality", lock_personality, NULL, 0},
    {"system-call-filter", NULL, filter_set, SCMP_ACT_KILL_PROCESS},
};

#define N_DIRECTIVES (sizeof(directives) / sizeof(directives[0]))

int main(int argc, char **argv)
{
	int want[N_DIRECTIVES] = {0}, i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		int found = 0;
		for (size_t d = 0; d < N_DIRECTIVES; d++)
			if (strcmp(argv[i], "--all") == 0 ||
			    (strncmp(argv[i], "--", 2) == 0 &&
			     strcmp(argv[i] + 2, directives[d].name) == 0)) {
				want[d] = 1;
				found = 1;
			}
		if (!found) {
			fprintf(stderr, "sdfilter: unknown directive %s\n", argv[i]);
			return 125;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: sdfilter [--DIRECTIVE]... [--all] -- COMMAND [ARG]...\n");
		return 125;
	}
	/* In the order systemd's exec_child applies them; the filter set comes last. */
	for (size_t d = 0; d < N_DIRECTIVES; d++) {
		if (!want[d])
			continue;
		if (directives[d].apply)
			directives[d].apply();
		else
			deny_set(directives[d].set, directives[d].action);
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "sdfilter: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
