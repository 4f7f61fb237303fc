/* peer.c - who is on the other end of the server's stdin: under socket activation
 * (Accept=yes, StandardInput=socket) it is a Unix stream socket, and SO_PEERCRED names the
 * process that connected. Returns 0 or a negative errno; never logs. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor.h"

int peer_describe(int fd, char *buf, size_t len)
{
	struct ucred cred;
	struct passwd pw, *found = NULL;
	char pwbuf[1024];
	socklen_t sl;
	int domain, n;

	sl = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) < 0)
		return -errno; /* ENOTSOCK: a pipe or a terminal, the ordinary stdio case */
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT;
	sl = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &sl) < 0)
		return -errno;
	/* The credentials are the kernel's, taken at connect(); the name is only a label for
	 * the log, so a failed lookup (no NSS entry) is not an error. */
	if (getpwuid_r(cred.uid, &pw, pwbuf, sizeof(pwbuf), &found) != 0)
		found = NULL;
	n = snprintf(buf, len, "uid %u%s%s%s pid %d", (unsigned int)cred.uid, found ? " (" : "",
	             found ? found->pw_name : "", found ? ")" : "", (int)cred.pid);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}
