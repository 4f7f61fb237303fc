/* landlock.c - Landlock rulesets by raw system call (see landlock.h). */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct landlock_ruleset_attr as of ABI 6; older ABIs read a prefix of it. */
struct landlock_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

long landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0)
		return -errno;
	return abi >= 1 ? abi : -EINVAL;
}

void landlock_handled_all(long abi, struct landlock_handled *h)
{
	*h = (struct landlock_handled){.abi = abi};
	h->fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
	if (abi >= 2)
		h->fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		h->fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 4)
		h->net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (abi >= 5)
		h->fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (abi >= 6)
		h->scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
}

int landlock_ruleset(const struct landlock_handled *h)
{
	struct landlock_attr attr = {
	    .handled_access_fs = h->fs,
	    .handled_access_net = h->net,
	    .scoped = h->scoped,
	};
	size_t size = h->abi >= 6   ? sizeof(attr)
	              : h->abi >= 4 ? offsetof(struct landlock_attr, scoped)
	                            : sizeof(attr.handled_access_fs);
	long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);

	return fd < 0 ? -errno : (int)fd;
}

int landlock_allow_fd(int ruleset, const struct landlock_handled *h, int fd, uint64_t access)
{
	struct landlock_path_beneath_attr rule = {.parent_fd = fd};
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	access &= h->fs;
	if (!S_ISDIR(st.st_mode))
		access &= LANDLOCK_FILE_RIGHTS;
	if (access == 0)
		return 0;
	rule.allowed_access = access;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
		return -errno;
	return 0;
}

int landlock_allow_path(int ruleset, const struct landlock_handled *h, const char *path,
                        uint64_t access)
{
	int fd = open(path, O_PATH | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = landlock_allow_fd(ruleset, h, fd, access);
	(void)close(fd);
	return rc;
}

int landlock_enforce(int ruleset)
{
	int rc = 0;

	if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
		rc = -errno;
	if (close(ruleset) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
