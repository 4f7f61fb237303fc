/* mounts.c - the mounts /proc/self/mountinfo shows: each mount's device, the directory of its
 * filesystem it shows (a bind mount shows a subtree) and where it is mounted. What a path
 * names on its filesystem, whatever mount shows it, is what tells a bind mount of a
 * directory from the directory. Functions return 0 or a negative errno and never log. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "supervisor.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static int unescape_field(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int mountinfo_parse_line(const char *line, struct mountinfo_line *m)
{
	const char *f[6], *dash, *p = line, *end;
	size_t fl[6];
	unsigned maj, min;
	int used = 0, rc;

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
	if (end == dash || (size_t)(end - dash) >= sizeof(m->fstype))
		return -EINVAL;
	if (sscanf(f[2], "%u:%u%n", &maj, &min, &used) != 2 || (size_t)used != fl[2])
		return -EINVAL;
	m->dev = makedev(maj, min);
	memcpy(m->fstype, dash, (size_t)(end - dash));
	m->fstype[end - dash] = '\0';
	rc = unescape_field(f[3], fl[3], m->root, sizeof(m->root));
	if (rc == 0)
		rc = unescape_field(f[4], fl[4], m->mnt, sizeof(m->mnt));
	return rc;
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
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].root);
		free(t->v[i].mnt);
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

int mount_table_read(struct mount_table *t)
{
	struct mountinfo_line *m = malloc(sizeof(*m));
	char *line = NULL;
	size_t cap = 0, room = 0;
	FILE *f;
	int rc = 0;

	t->v = NULL;
	t->n = 0;
	if (!m)
		return -ENOMEM;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		rc = -errno;
		free(m);
		return rc;
	}
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		if (mountinfo_parse_line(line, m) < 0) {
			rc = -EINVAL; /* (a mount not understood is one not looked at) */
			break;
		}
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
		t->v[t->n].dev = m->dev;
		t->v[t->n].root = strdup(m->root);
		t->v[t->n].mnt = strdup(m->mnt);
		if (!t->v[t->n].root || !t->v[t->n].mnt) {
			free(t->v[t->n].root);
			free(t->v[t->n].mnt);
			rc = -ENOMEM;
			break;
		}
		t->n++;
	}
	if (rc == 0 && ferror(f))
		rc = -EIO;
	if (rc == 0 && t->n == 0)
		rc = -ENOENT;
	fclose(f);
	free(line);
	free(m);
	if (rc < 0)
		mount_table_free(t);
	return rc;
}

/* The mount that shows the absolute path (no symbolic links): the deepest mount point it lies
 * in, the last mounted of those on the same point (the one on top). */
static const struct mount_entry *mount_showing(const struct mount_table *t, const char *path)
{
	const struct mount_entry *best = NULL;

	for (size_t i = 0; i < t->n; i++)
		if (path_within(path, t->v[i].mnt) &&
		    (!best || strlen(t->v[i].mnt) >= strlen(best->mnt)))
			best = &t->v[i];
	return best;
}

int mount_table_place(const struct mount_table *t, const char *path, struct mount_place *p)
{
	const struct mount_entry *m = mount_showing(t, path);
	size_t n;
	const char *rest;

	if (!m)
		return -ENOENT;
	n = strlen(m->mnt);
	rest = strcmp(m->mnt, "/") == 0 ? path : path + n;
	p->dev = m->dev;
	if ((size_t)snprintf(p->path, sizeof(p->path), "%s%s",
	                     strcmp(m->root, "/") == 0 && *rest ? "" : m->root,
	                     rest) >= sizeof(p->path))
		return -ENAMETOOLONG;
	return 0;
}

int mount_places_meet(const struct mount_place *a, const struct mount_place *b)
{
	return a->dev == b->dev && (path_within(a->path, b->path) || path_within(b->path, a->path));
}
