#include "pack/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/lock.h"
#include "base/msg.h"

int pack_is_stream_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return strcmp(s ? s + 1 : path, "stream.obs") == 0;
}

struct list {
	struct pack_entry *v;
	size_t n, cap;
};

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

struct walk {
	const struct stat *self; /* the archive being written, if inside */
	struct list l;
};

static int add_link_target(struct pack_entry *e, const char *full)
{
	char buf[PACK_PATH_MAX + 1];
	ssize_t k = readlink(full, buf, sizeof(buf));
	if (k < 0 || k > PACK_PATH_MAX || !(e->target = strndup(buf, (size_t)k))) {
		msg_err("%s: cannot read the link", full);
		return -1;
	}
	return 0;
}

static int visit(void *arg, const char *rel, const char *full, const struct stat *st)
{
	struct walk *w = arg;
	if (!st) {
		msg_err("%s: cannot read: %s", full, strerror(errno));
		return -1;
	}
	if (strlen(rel) > PACK_PATH_MAX) {
		msg_err("%s: path too long to archive", full);
		return -1;
	}
	if (w->self && st->st_dev == w->self->st_dev && st->st_ino == w->self->st_ino)
		return 0;
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
		msg_warn("%s: not a file, directory or link; not archived", full);
		return 0;
	}
	struct pack_entry *e = list_add(&w->l);
	if (!e || !(e->path = strdup(rel))) {
		msg_err("out of memory");
		return -1;
	}
	e->mode = st->st_mode & 07777;
	/* to the second, as tar keeps it: the nanoseconds are noise that cost
	 * a small trace's archive some 4 bytes a member */
	e->mtime_sec = st->st_mtim.tv_sec;
	e->mtime_nsec = 0;
	if (S_ISREG(st->st_mode)) {
		e->type = PACK_FILE;
		e->size = (uint64_t)st->st_size;
		return 0;
	}
	if (S_ISLNK(st->st_mode)) {
		e->type = PACK_LINK;
		return add_link_target(e, full);
	}
	e->type = PACK_DIR;
	return 1;
}

int pack_walk(const char *dir, const struct stat *self, struct pack_entry **e, size_t *n)
{
	struct walk w = { .self = self };
	struct stat st;
	if (stat(dir, &st) != 0) {
		msg_err("cannot open trace %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		msg_err("%s: not a trace directory", dir);
		return -1;
	}
	int rc = file_walk(dir, visit, &w);
	*e = w.l.v;
	*n = w.l.n;
	return rc;
}

void pack_entries_free(struct pack_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].target);
	}
	free(e);
}

int pack_input_open(struct pack_input *in, const char *dir, struct pack_entry *e, const struct pack_write_opts *o,
		    uint64_t *total)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
	in->from = UINT64_MAX;
	in->path = file_join(dir, e->path);
	if (!in->path || (in->fd = open(in->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		msg_err("%s: cannot open: %s", in->path ? in->path : e->path, in->path ? strerror(errno) : "out of memory");
		pack_input_close(in);
		return -1;
	}
	lock_for_reading(in->fd, in->path);
	if (!o->stream_tail || !pack_is_stream_name(e->path))
		return 0;
	int r = o->stream_tail(in->path, in->fd, &in->from, &in->tail, &in->ntail);
	if (r < 0) {
		pack_input_close(in);
		return -1;
	}
	if (r == 0) {
		in->from = UINT64_MAX;
	} else {
		*total = *total - e->size + in->from + in->ntail;
		e->size = in->from + in->ntail;
	}
	return 0;
}

ssize_t pack_input_read(struct pack_input *in, void *buf, size_t n)
{
	if (in->off >= in->from) { /* from the tail */
		size_t at = (size_t)(in->off - in->from), left = in->ntail - at;
		n = n < left ? n : left;
		memcpy(buf, in->tail + at, n);
		in->off += n;
		return (ssize_t)n;
	}
	if (in->from != UINT64_MAX && n > in->from - in->off)
		n = (size_t)(in->from - in->off);
	for (;;) {
		ssize_t r = read(in->fd, buf, n);
		if (r >= 0) {
			if (r == 0 && in->from != UINT64_MAX) {
				msg_err("%s: offset %llu: file shrank while being archived", in->path,
					(unsigned long long)in->off);
				return -1;
			}
			in->off += (uint64_t)r;
			return r;
		}
		if (errno != EINTR)
			break;
	}
	msg_err("%s: offset %llu: cannot read: %s", in->path, (unsigned long long)in->off, strerror(errno));
	return -1;
}

void pack_input_close(struct pack_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	free(in->path);
	free(in->tail);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}
