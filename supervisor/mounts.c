/* mounts.c - the mounts /proc/self/mountinfo shows: each mount's id, device, the directory of
 * its filesystem it shows (a bind mount shows a subtree), where it is mounted, its filesystem's
 * type and options. What a path names on its filesystem, whatever mount shows it, is what
 * tells a bind mount of a directory from the directory. Functions return 0 or a negative
 * errno and never log. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "supervisor.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. A new string, or NULL. */
static char *unescaped(const char *s, size_t n)
{
	char *out = malloc(n + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

void mount_entry_free(struct mount_entry *e)
{
	free(e->root);
	free(e->mnt);
	free(e->fstype);
	free(e->opts);
	memset(e, 0, sizeof(*e));
}

int mount_entry_parse(const char *line, struct mount_entry *e)
{
	const char *f[6], *dash, *p = line, *end, *opts;
	size_t fl[6];
	unsigned long long id;
	unsigned maj, min;
	int used = 0;

	memset(e, 0, sizeof(*e));
	/* id parent major:minor root mountpoint options [optional...] - fstype source super */
	for (int i = 0; i < 6; i++) {
		while (*p == ' ')
			p++;
		f[i] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		fl[i] = (size_t)(p - f[i]);
		if (fl[i] == 0)
			return -EINVAL;
	}
	dash = strstr(p, " - ");
	if (!dash)
		return -EINVAL;
	dash += 3;
	end = dash + strcspn(dash, " \n");
	if (end == dash)
		return -EINVAL;
	if (sscanf(f[0], "%llu%n", &id, &used) != 1 || (size_t)used != fl[0])
		return -EINVAL;
	if (sscanf(f[2], "%u:%u%n", &maj, &min, &used) != 2 || (size_t)used != fl[2])
		return -EINVAL;
	/* (the source, then the filesystem's own options) */
	opts = end + strspn(end, " ");
	opts += strcspn(opts, " \n");
	opts += strspn(opts, " ");
	e->id = (uint64_t)id;
	e->dev = makedev(maj, min);
	e->root = unescaped(f[3], fl[3]);
	e->mnt = unescaped(f[4], fl[4]);
	e->fstype = unescaped(dash, (size_t)(end - dash));
	e->opts = strndup(opts, strcspn(opts, " \n")); /* (escaped: values may hold commas) */
	if (!e->root || !e->mnt || !e->fstype || !e->opts) {
		mount_entry_free(e);
		return -ENOMEM;
	}
	return 0;
}

char *mount_option(const struct mount_entry *e, const char *name)
{
	size_t n = strlen(name);

	for (const char *o = e->opts; *o;) {
		size_t len = strcspn(o, ",");
		if (len > n && strncmp(o, name, n) == 0 && o[n] == '=')
			return unescaped(o + n + 1, len - n - 1);
		o += len + (o[len] == ',');
	}
	return NULL;
}

int path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void mount_table_free(struct mount_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		mount_entry_free(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

int mount_table_read(struct mount_table *t)
{
	char *line = NULL;
	size_t cap = 0, room = 0;
	FILE *f;
	int rc = 0;

	t->v = NULL;
	t->n = 0;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		if (t->n == room) {
			size_t more = room ? 2 * room : 64;
			struct mount_entry *v = realloc(t->v, more * sizeof(*v));
			if (!v) {
				rc = -ENOMEM;
				break;
			}
			t->v = v;
			room = more;
		}
		/* (a mount not understood is one not known: its place cannot be told) */
		rc = mount_entry_parse(line, &t->v[t->n]);
		if (rc == 0)
			t->n++;
	}
	if (rc == 0 && ferror(f))
		rc = -EIO;
	if (rc == 0 && t->n == 0)
		rc = -ENOENT;
	fclose(f);
	free(line);
	if (rc < 0)
		mount_table_free(t);
	return rc;
}

const struct mount_entry *mount_table_by_id(const struct mount_table *t, uint64_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	return NULL;
}

int mount_place(const struct mount_entry *e, const char *path, struct mount_place *p)
{
	const char *rest;
	size_t n;

	if (!path_within(path, e->mnt))
		return -ENOENT;
	n = strlen(e->mnt);
	rest = strcmp(e->mnt, "/") == 0 ? path : path + n;
	p->dev = e->dev;
	free(p->path);
	p->path = malloc(strlen(e->root) + strlen(rest) + 1);
	if (!p->path)
		return -ENOMEM;
	strcpy(p->path, strcmp(e->root, "/") == 0 && *rest ? "" : e->root);
	strcat(p->path, rest);
	return 0;
}

int mount_places_meet(const struct mount_place *a, const struct mount_place *b)
{
	return a->dev == b->dev && (path_within(a->path, b->path) || path_within(b->path, a->path));
}
