/* landlock.h - Landlock rulesets, for the worker (no access at all) and the supervisor's own
 * confinement (the files it must reach). Raw system calls: there is no library for them.
 * Functions return 0 (or an fd) or a negative errno; they never log and never exit. */
#ifndef SAFEPY_LANDLOCK_H
#define SAFEPY_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <linux/landlock.h>

/* Constants newer than Debian 12's 6.1 uapi headers. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* Rights that apply to a file (the others only to a directory and what is beneath it). */
#define LANDLOCK_FILE_RIGHTS                                                                       \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                              \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LANDLOCK_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* What a ruleset handles: every right and scope the kernel's ABI knows, so that what no rule
 * grants is refused. */
struct landlock_handled {
	long abi;
	uint64_t fs, net, scoped;
};

/* The kernel's Landlock ABI version (>= 1), or -ENOSYS / -EOPNOTSUPP when the kernel has none
 * (or it is disabled), or another negative errno. */
long landlock_abi(void);
/* Everything the ABI abi (>= 1) knows. */
void landlock_handled_all(long abi, struct landlock_handled *h);
/* A ruleset handling h: its fd (O_CLOEXEC), or a negative errno. */
int landlock_ruleset(const struct landlock_handled *h);
/* Grant access beneath path (or on it, for a file: only the file rights apply) in ruleset.
 * Rights h does not handle are dropped. Returns 0, -ENOENT when there is no such path,
 * or another negative errno. */
int landlock_allow_path(int ruleset, const struct landlock_handled *h, const char *path,
                        uint64_t access);
/* The same for a directory or file the caller holds open (any open mode, or O_PATH). */
int landlock_allow_fd(int ruleset, const struct landlock_handled *h, int fd, uint64_t access);
/* Enforce the ruleset on the calling thread (no_new_privs is set) and close it. */
int landlock_enforce(int ruleset);

#endif
