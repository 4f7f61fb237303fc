/* zygote_main.c - entry of safepy-zygote, the executable the supervisor starts (with an empty
 * environment and its control socket on fd 3) to hold the initialised CPython. Its whole
 * configuration is the control socket's first message (ipc.h); it takes no arguments and is
 * not meant to be run by hand. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "worker.h"

#define ZYGOTE_CONTROL_FD 3

int main(int argc, char **argv)
{
	static char buf[IPC_CONFIG_MAX + 1];
	struct ipc_config c;
	struct zygote_config z;
	ssize_t n;
	int rc;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "safepy-zygote: started by safepy, not by hand\n");
		return ZYGOTE_EXIT_CONFIG;
	}
	do
		n = recv(ZYGOTE_CONTROL_FD, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	rc = n > 0 ? ipc_config_decode(buf, (size_t)n, &c) : -EINVAL;
	if (rc < 0) {
		fprintf(stderr, "safepy-zygote: no valid configuration on the control socket\n");
		return ZYGOTE_EXIT_CONFIG;
	}
	/* One malloc arena for every thread of a worker: glibc gives each new thread an arena of its
	 * own, 64 MiB of address space reserved, counted by RLIMIT_AS, the worker's memory limit. A
	 * few threads of the code took most of it (11 threads of 1 MiB stacks met 1 GiB in data
	 * mode), and a thread that then failed in its start-up left its starter waiting. */
	if (mallopt(M_ARENA_MAX, 1) != 1)
		fprintf(stderr, "safepy-zygote: mallopt(M_ARENA_MAX) failed: threads get arenas of "
		                "their own\n");
	memset(&z, 0, sizeof(z));
	z.sandbox.memory_bytes = c.memory_bytes;
	z.sandbox.cpu_s = c.cpu_s;
	z.sandbox.uid = (uid_t)c.uid;
	z.sandbox.gid = (gid_t)c.gid;
	z.sandbox.try_namespaces = c.try_namespaces;
	z.sandbox.try_landlock = c.try_landlock;
	z.sandbox.tasks_cgroup = c.tasks_cgroup;
	z.imports = (const char *const *)c.imports;
	z.n_imports = c.n_imports;
	z.max_output = (size_t)c.max_output;
	z.max_result = (size_t)c.max_result;
	z.unsafe_no_python_layer = c.unsafe_no_python_layer;
	z.control_fd = ZYGOTE_CONTROL_FD;
	z.workspace = c.workspace;
	z.workspace_write = c.workspace_write;
	z.cache = c.cache;
	z.sandbox.workspace = c.workspace != NULL;
	/* One byte over the call's quota: a file that reaches it makes the call's writes too large
	 * for the supervisor to keep, so a write the limit cut short is never committed. */
	z.sandbox.fsize = c.workspace_write ? IPC_WS_BYTES_PER_CALL + 1 : 0;
	/* c's strings live as long as the zygote: it never returns. */
	zygote_main(&z);
}
