/* config.c - the zygote's configuration on the wire: the "K" control message, one JSON
 * object the supervisor builds from its options and the zygote parses before anything else.
 * Decoding is strict: every member present, of its type, in range; unknown members refused. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

/* Members and their JSON types; decode refuses any other member. */
enum member {
	M_MEMORY,
	M_CPU,
	M_UID,
	M_GID,
	M_NS,
	M_LANDLOCK,
	M_OUTPUT,
	M_RESULT,
	M_UNSAFE,
	M_TASKS_CGROUP,
	M_IMPORTS,
	M_WORKSPACE,
	M_WORKSPACE_WRITE,
	M_CACHE,
	M_N
};

static const struct {
	const char *name;
	json_type type;
} members[M_N] = {
    [M_MEMORY] = {"memory_bytes", json_type_int},
    [M_CPU] = {"cpu_s", json_type_int},
    [M_UID] = {"uid", json_type_int},
    [M_GID] = {"gid", json_type_int},
    [M_NS] = {"namespaces", json_type_boolean},
    [M_LANDLOCK] = {"landlock", json_type_boolean},
    [M_OUTPUT] = {"max_output", json_type_int},
    [M_RESULT] = {"max_result", json_type_int},
    [M_UNSAFE] = {"unsafe_no_python_layer", json_type_boolean},
    [M_TASKS_CGROUP] = {"tasks_cgroup", json_type_boolean},
    [M_IMPORTS] = {"imports", json_type_array},
    [M_WORKSPACE] = {"workspace", json_type_string},
    [M_WORKSPACE_WRITE] = {"workspace_write", json_type_boolean},
    [M_CACHE] = {"cache", json_type_string},
};

static int add(json_object *o, enum member m, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, members[m].name, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

char *ipc_config_encode(const struct ipc_config *c, size_t *len)
{
	json_object *o = json_object_new_object(), *imports = json_object_new_array();
	const char *text;
	char *out = NULL;
	size_t n;
	int rc = (o && imports) ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < c->n_imports; i++) {
		json_object *s = json_object_new_string(c->imports[i]);
		if (!s || json_object_array_add(imports, s) < 0) {
			json_object_put(s);
			rc = -ENOMEM;
		}
	}
	if (rc == 0) {
		rc = add(o, M_IMPORTS, imports);
		imports = NULL;
	}
	if (rc == 0)
		rc = add(o, M_MEMORY, json_object_new_int64((int64_t)c->memory_bytes));
	if (rc == 0)
		rc = add(o, M_CPU, json_object_new_int64(c->cpu_s));
	if (rc == 0)
		rc = add(o, M_UID, json_object_new_int64(c->uid));
	if (rc == 0)
		rc = add(o, M_GID, json_object_new_int64(c->gid));
	if (rc == 0)
		rc = add(o, M_NS, json_object_new_boolean(c->try_namespaces));
	if (rc == 0)
		rc = add(o, M_LANDLOCK, json_object_new_boolean(c->try_landlock));
	if (rc == 0)
		rc = add(o, M_OUTPUT, json_object_new_int64((int64_t)c->max_output));
	if (rc == 0)
		rc = add(o, M_RESULT, json_object_new_int64((int64_t)c->max_result));
	if (rc == 0)
		rc = add(o, M_UNSAFE, json_object_new_boolean(c->unsafe_no_python_layer));
	if (rc == 0)
		rc = add(o, M_TASKS_CGROUP, json_object_new_boolean(c->tasks_cgroup));
	if (rc == 0)
		rc = add(o, M_WORKSPACE, json_object_new_string(c->workspace ? c->workspace : ""));
	if (rc == 0)
		rc = add(o, M_WORKSPACE_WRITE, json_object_new_boolean(c->workspace_write));
	if (rc == 0)
		rc = add(o, M_CACHE, json_object_new_string(c->cache ? c->cache : ""));
	if (rc == 0) {
		text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
		out = text ? malloc(n + 2) : NULL;
		if (out) {
			out[0] = IPC_ZYGOTE_CONFIG;
			memcpy(out + 1, text, n + 1);
			*len = n + 1;
		}
	}
	json_object_put(imports);
	json_object_put(o);
	return out;
}

/* A non-negative integer member no larger than max. */
static int get_uint(json_object *v, uint64_t max, uint64_t *out)
{
	int64_t x = json_object_get_int64(v);

	if (x < 0 || (uint64_t)x > max)
		return -EINVAL;
	*out = (uint64_t)x;
	return 0;
}

static int take_imports(json_object *arr, struct ipc_config *c)
{
	size_t n = json_object_array_length(arr);

	c->imports = calloc(n + 1, sizeof(char *));
	if (!c->imports)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(arr, i);
		size_t len;
		if (!json_object_is_type(s, json_type_string))
			return -EINVAL;
		len = (size_t)json_object_get_string_len(s);
		if (len == 0 || memchr(json_object_get_string(s), '\0', len))
			return -EINVAL;
		c->imports[i] = strndup(json_object_get_string(s), len);
		if (!c->imports[i])
			return -ENOMEM;
		c->n_imports = i + 1;
	}
	return 0;
}

/* A directory: "" for none (*out stays NULL), else an absolute path without NUL or a "." or
 * ".." component, shorter than PATH_MAX. */
static int take_dir(json_object *s, char **out)
{
	const char *p = json_object_get_string(s);
	size_t len = (size_t)json_object_get_string_len(s);

	if (len == 0)
		return 0;
	if (p[0] != '/' || len >= PATH_MAX || memchr(p, '\0', len))
		return -EINVAL;
	for (const char *q = p; q; q = strchr(q + 1, '/'))
		if (strncmp(q, "/./", 3) == 0 || strncmp(q, "/../", 4) == 0 ||
		    strcmp(q, "/.") == 0 || strcmp(q, "/..") == 0)
			return -EINVAL;
	*out = strndup(p, len);
	return *out ? 0 : -ENOMEM;
}

/* The workspace: a directory (take_dir); without one it cannot be writable. */
static int take_workspace(json_object *s, int writable, struct ipc_config *c)
{
	int rc = take_dir(s, &c->workspace);

	if (rc == 0 && writable && !c->workspace)
		return -EINVAL;
	c->workspace_write = writable;
	return rc;
}

int ipc_config_decode(const char *buf, size_t len, struct ipc_config *out)
{
	struct ipc_config c = {0};
	json_object *root, *v[M_N] = {0};
	uint64_t x;
	int rc = -EINVAL;

	if (len < 2 || len > IPC_CONFIG_MAX || buf[0] != IPC_ZYGOTE_CONFIG)
		return -EINVAL;
	root = proto_parse_json(buf + 1, len - 1);
	if (!root || !json_object_is_type(root, json_type_object) ||
	    json_object_object_length(root) != M_N)
		goto out;
	for (int m = 0; m < M_N; m++)
		if (!json_object_object_get_ex(root, members[m].name, &v[m]) ||
		    !json_object_is_type(v[m], members[m].type))
			goto out;
	if (get_uint(v[M_MEMORY], UINT64_MAX >> 1, &c.memory_bytes) < 0 || c.memory_bytes == 0 ||
	    get_uint(v[M_CPU], UINT32_MAX, &x) < 0 || x == 0)
		goto out;
	c.cpu_s = (uint32_t)x;
	if (get_uint(v[M_UID], UINT32_MAX, &x) < 0)
		goto out;
	c.uid = (uint32_t)x;
	if (get_uint(v[M_GID], UINT32_MAX, &x) < 0)
		goto out;
	c.gid = (uint32_t)x;
	if (get_uint(v[M_OUTPUT], IPC_FRAME_MAX, &c.max_output) < 0 || c.max_output == 0 ||
	    get_uint(v[M_RESULT], IPC_FRAME_MAX, &c.max_result) < 0 || c.max_result == 0)
		goto out;
	c.try_namespaces = json_object_get_boolean(v[M_NS]);
	c.try_landlock = json_object_get_boolean(v[M_LANDLOCK]);
	c.unsafe_no_python_layer = json_object_get_boolean(v[M_UNSAFE]);
	c.tasks_cgroup = json_object_get_boolean(v[M_TASKS_CGROUP]);
	rc = take_imports(v[M_IMPORTS], &c);
	if (rc == 0)
		rc = take_workspace(v[M_WORKSPACE], json_object_get_boolean(v[M_WORKSPACE_WRITE]),
		                    &c);
	if (rc == 0)
		rc = take_dir(v[M_CACHE], &c.cache);
	if (rc == 0) {
		*out = c;
		memset(&c, 0, sizeof(c));
	}
out:
	ipc_config_clear(&c);
	json_object_put(root);
	return rc;
}

void ipc_config_clear(struct ipc_config *c)
{
	for (size_t i = 0; i < c->n_imports; i++)
		free(c->imports[i]);
	free(c->imports);
	free(c->workspace);
	free(c->cache);
	memset(c, 0, sizeof(*c));
}
