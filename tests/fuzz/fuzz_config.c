/* fuzz_config.c - the zygote's configuration message (ipc_config_decode), read by the zygote
 * from its control socket. What it accepts must encode to a message that decodes the same. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_config c, back;
	char *msg;
	size_t len;

	memset(&c, 0x5a, sizeof(c));
	if (ipc_config_decode((const char *)data, size, &c) < 0)
		return 0;
	for (size_t i = 0; i < c.n_imports; i++)
		assert(c.imports[i] && strlen(c.imports[i]) > 0);
	msg = ipc_config_encode(&c, &len);
	assert(msg);
	assert(ipc_config_decode(msg, len, &back) == 0);
	assert(back.memory_bytes == c.memory_bytes && back.cpu_s == c.cpu_s);
	assert(back.uid == c.uid && back.gid == c.gid);
	assert(back.try_namespaces == c.try_namespaces && back.try_landlock == c.try_landlock);
	assert(back.max_output == c.max_output && back.max_result == c.max_result);
	assert(back.unsafe_no_python_layer == c.unsafe_no_python_layer);
	assert(back.n_imports == c.n_imports);
	for (size_t i = 0; i < c.n_imports; i++)
		assert(strcmp(back.imports[i], c.imports[i]) == 0);
	free(msg);
	ipc_config_clear(&back);
	ipc_config_clear(&c);
	return 0;
}
