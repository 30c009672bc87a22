#include "pack/walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/msg.h"

char *pack_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);
	if (!p)
		return NULL;
	memcpy(p, a, la);
	size_t k = la;
	if (la && a[la - 1] != '/' && lb)
		p[k++] = '/';
	memcpy(p + k, b, lb + 1);
	return p;
}

int pack_is_stream_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return strcmp(s ? s + 1 : path, "stream.obs") == 0;
}

struct list {
	struct pack_entry *v;
	size_t n, cap;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct pack_entry *list_add(struct list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct pack_entry *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	struct pack_entry *e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

/* The sorted names in dir (without . and ..). */
static char **read_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d) {
		msg_err("cannot open directory %s: %s", dir, strerror(errno));
		return NULL;
	}
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 32;
			char **g = realloc(v, cap * sizeof(*v));
			if (!g)
				goto oom;
			v = g;
		}
		if (!(v[*n] = strdup(de->d_name)))
			goto oom;
		(*n)++;
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_name);
	return v ? v : calloc(1, sizeof(*v));
oom:
	msg_err("out of memory listing %s", dir);
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	return NULL;
}

static int walk(const char *root, const char *rel, const struct stat *self, struct list *l)
{
	char *dir = pack_join(root, rel);
	size_t n;
	char **names = dir ? read_names(dir, &n) : NULL;
	if (!names) {
		free(dir);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *sub = pack_join(rel, names[i]);
		char *full = pack_join(dir, names[i]);
		struct stat st;
		if (!sub || !full) {
			msg_err("out of memory");
			rc = -1;
		} else if (strlen(sub) > PACK_PATH_MAX) {
			msg_err("%s: path too long to archive", full);
			rc = -1;
		} else if (lstat(full, &st) != 0) {
			msg_err("cannot stat %s: %s", full, strerror(errno));
			rc = -1;
		} else if (st.st_dev == self->st_dev && st.st_ino == self->st_ino) {
			/* the archive being written */
		} else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
			msg_warn("%s: not a file, directory or link; not archived", full);
		} else {
			struct pack_entry *e = list_add(l);
			if (!e) {
				msg_err("out of memory");
				rc = -1;
			} else {
				e->path = sub;
				sub = NULL;
				e->mode = st.st_mode & 07777;
				e->mtime_sec = st.st_mtim.tv_sec;
				e->mtime_nsec = (uint32_t)st.st_mtim.tv_nsec;
				if (S_ISREG(st.st_mode)) {
					e->type = PACK_FILE;
					e->size = (uint64_t)st.st_size;
				} else if (S_ISLNK(st.st_mode)) {
					e->type = PACK_LINK;
					char buf[PACK_PATH_MAX + 1];
					ssize_t k = readlink(full, buf, sizeof(buf));
					if (k < 0 || k > PACK_PATH_MAX || !(e->target = strndup(buf, (size_t)k))) {
						msg_err("%s: cannot read the link", full);
						rc = -1;
					}
				} else {
					e->type = PACK_DIR;
					rc = walk(root, e->path, self, l);
				}
			}
		}
		free(sub);
		free(full);
		if (rc)
			break;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
	return rc;
}

int pack_walk(const char *dir, const struct stat *self, struct pack_entry **e, size_t *n)
{
	struct list l = { 0 };
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		msg_err("%s: not a trace directory", dir);
		return -1;
	}
	int rc = walk(dir, "", self, &l);
	*e = l.v;
	*n = l.n;
	return rc;
}

void pack_entries_free(struct pack_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].target);
		free(e[i].blocks);
	}
	free(e);
}
