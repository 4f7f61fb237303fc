/* roots.c - where the modules a worker may import later live (ipc.h, struct ipc_roots): the
 * "D" control message the zygote sends once, and module names. Decoding is strict: absolute
 * paths without NUL or "..", package names that are identifiers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

#define ROOTS_MAX_PACKAGES 256

static int ident_char(char ch, int first)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (!first && ch >= '0' && ch <= '9');
}

int ipc_module_name_valid(const char *s, size_t n)
{
	int first = 1;

	if (n == 0 || n > 255)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (first)
				return 0; /* empty part */
			first = 1;
			continue;
		}
		if (!ident_char(s[i], first))
			return 0;
		first = 0;
	}
	return !first;
}

static int path_valid(const char *s, size_t n)
{
	if (n < 2 || n > 4095 || s[0] != '/' || memchr(s, '\0', n))
		return 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '/' && s[i + 1] == '.' &&
		    (i + 2 == n || s[i + 2] == '/' ||
		     (s[i + 2] == '.' && (i + 3 == n || s[i + 3] == '/'))))
			return 0;
	return 1;
}

char *ipc_roots_encode(const struct ipc_roots *r, size_t *len)
{
	json_object *o = json_object_new_object(), *pk = json_object_new_object();
	const char *text;
	char *out = NULL;
	size_t n;
	int ok = o && pk;

	for (size_t i = 0; ok && i < r->n; i++) {
		json_object *d = json_object_new_string(r->dirs[i]);
		ok = d && json_object_object_add(pk, r->names[i], d) == 0;
		if (!ok)
			json_object_put(d);
	}
	if (ok) {
		json_object *s = json_object_new_string(r->stdlib ? r->stdlib : "");
		ok = s && json_object_object_add(o, "stdlib", s) == 0;
		if (!ok)
			json_object_put(s);
	}
	if (ok) {
		ok = json_object_object_add(o, "packages", pk) == 0;
		if (ok)
			pk = NULL;
	}
	if (ok && r->cache_tag) {
		json_object *pyc = json_object_new_object(),
		            *t = json_object_new_string(r->cache_tag);
		char hex[9];
		snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", r->magic[0], r->magic[1],
		         r->magic[2], r->magic[3]);
		ok = pyc && t && json_object_object_add(pyc, "tag", t) == 0;
		if (!ok)
			json_object_put(t);
		ok = ok && json_object_object_add(pyc, "magic", json_object_new_string(hex)) == 0;
		ok = ok && json_object_object_add(o, "pyc", pyc) == 0;
		if (!ok)
			json_object_put(pyc);
	}
	if (ok) {
		text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
		out = text ? malloc(n + 2) : NULL;
		if (out) {
			out[0] = IPC_ZYGOTE_ROOTS;
			memcpy(out + 1, text, n + 1);
			*len = n + 1;
		}
	}
	json_object_put(pk);
	json_object_put(o);
	return out;
}

static char *take_path(json_object *v)
{
	size_t n;

	if (!json_object_is_type(v, json_type_string))
		return NULL;
	n = (size_t)json_object_get_string_len(v);
	if (!path_valid(json_object_get_string(v), n))
		return NULL;
	return strndup(json_object_get_string(v), n);
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* {"tag": "cpython-311", "magic": "a70d0d0a"} into r. 0 or -EINVAL (-ENOMEM). */
static int take_pyc(json_object *pyc, struct ipc_roots *r)
{
	json_object *t = NULL, *m = NULL;
	const char *ts, *ms;
	size_t n;

	if (!json_object_is_type(pyc, json_type_object) || json_object_object_length(pyc) != 2 ||
	    !json_object_object_get_ex(pyc, "tag", &t) ||
	    !json_object_object_get_ex(pyc, "magic", &m) ||
	    !json_object_is_type(t, json_type_string) || !json_object_is_type(m, json_type_string))
		return -EINVAL;
	ts = json_object_get_string(t);
	n = (size_t)json_object_get_string_len(t);
	if (n == 0 || n > 32 || strspn(ts, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return -EINVAL;
	ms = json_object_get_string(m);
	if (json_object_get_string_len(m) != 8)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		int hi = hex_digit(ms[2 * i]), lo = hex_digit(ms[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		r->magic[i] = (unsigned char)(hi << 4 | lo);
	}
	r->cache_tag = strndup(ts, n);
	return r->cache_tag ? 0 : -ENOMEM;
}

int ipc_roots_decode(const char *buf, size_t len, struct ipc_roots *out)
{
	struct ipc_roots r = {0};
	json_object *root, *std = NULL, *pk = NULL, *pyc = NULL;
	int rc = -EINVAL;
	size_t n, i = 0;

	if (len < 2 || len > IPC_CONFIG_MAX || buf[0] != IPC_ZYGOTE_ROOTS)
		return -EINVAL;
	root = proto_parse_json(buf + 1, len - 1);
	if (!root || !json_object_is_type(root, json_type_object) ||
	    json_object_object_length(root) != 2 + json_object_object_get_ex(root, "pyc", &pyc) ||
	    !json_object_object_get_ex(root, "stdlib", &std) ||
	    !json_object_object_get_ex(root, "packages", &pk) ||
	    !json_object_is_type(pk, json_type_object) || (pyc && take_pyc(pyc, &r) < 0))
		goto out;
	r.stdlib = take_path(std);
	n = (size_t)json_object_object_length(pk);
	if (!r.stdlib || n > ROOTS_MAX_PACKAGES)
		goto out;
	r.names = calloc(n + 1, sizeof(char *));
	r.dirs = calloc(n + 1, sizeof(char *));
	if (!r.names || !r.dirs) {
		rc = -ENOMEM;
		goto out;
	}
	json_object_object_foreach(pk, key, val)
	{
		if (!ipc_module_name_valid(key, strlen(key)) || strchr(key, '.'))
			goto out;
		r.names[i] = strdup(key);
		r.dirs[i] = take_path(val);
		r.n = i + 1;
		if (!r.names[i] || !r.dirs[i])
			goto out;
		i++;
	}
	*out = r;
	memset(&r, 0, sizeof(r));
	rc = 0;
out:
	ipc_roots_clear(&r);
	json_object_put(root);
	return rc;
}

void ipc_roots_clear(struct ipc_roots *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->names[i]);
		free(r->dirs[i]);
	}
	free(r->names);
	free(r->dirs);
	free(r->stdlib);
	free(r->cache_tag);
	memset(r, 0, sizeof(*r));
}
