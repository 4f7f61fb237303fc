/* zygote_main.c - entry of safepy-zygote, the executable the supervisor starts (with an empty
 * environment and its control socket on fd 3) to hold the initialised CPython. It takes
 * only the options the supervisor passes; it is not meant to be run by hand. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cpu", required_argument, NULL, 'c'},
	    {"memory", required_argument, NULL, 'm'},
	    {"max-output", required_argument, NULL, 'o'},
	    {"max-result", required_argument, NULL, 'r'},
	    {"user-ids", required_argument, NULL, 'u'},
	    {"allow-import", required_argument, NULL, 'i'},
	    {"no-namespaces", no_argument, NULL, 'N'},
	    {"no-landlock", no_argument, NULL, 'L'},
	    {"unsafe-no-python-layer", no_argument, NULL, 'U'},
	    {NULL, 0, NULL, 0},
	};
	struct zygote_config z;
	const char **imports;
	size_t n = 0;
	unsigned int uid, gid;
	int c;

	memset(&z, 0, sizeof(z));
	imports = calloc((size_t)argc + 1, sizeof(char *));
	if (!imports)
		return 2;
	z.sandbox.cpu_s = 30;
	z.sandbox.memory_bytes = 512ull << 20;
	z.sandbox.uid = z.sandbox.gid = 65534;
	z.sandbox.try_namespaces = z.sandbox.try_landlock = 1;
	z.max_output = z.max_result = 64 << 10;
	z.control_fd = 3;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			z.sandbox.cpu_s = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			z.sandbox.memory_bytes = strtoull(optarg, NULL, 10);
			break;
		case 'o':
			z.max_output = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			z.max_result = strtoul(optarg, NULL, 10);
			break;
		case 'u':
			if (sscanf(optarg, "%u:%u", &uid, &gid) != 2)
				goto usage;
			z.sandbox.uid = uid;
			z.sandbox.gid = gid;
			break;
		case 'i':
			imports[n++] = optarg;
			break;
		case 'N':
			z.sandbox.try_namespaces = 0;
			break;
		case 'L':
			z.sandbox.try_landlock = 0;
			break;
		case 'U':
			z.unsafe_no_python_layer = 1;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc || z.sandbox.cpu_s == 0 || z.sandbox.memory_bytes == 0 ||
	    z.max_output == 0 || z.max_result == 0)
		goto usage;
	qsort(imports, n, sizeof(char *), cmp_str);
	z.imports = imports;
	z.n_imports = n;
	zygote_main(&z);
usage:
	fprintf(stderr, "safepy-zygote: started by safepy, not by hand\n");
	return 2;
}
