/* Readers' side of staging files (trace/stage.h): where they are, and a
 * cut stream read with the events its staging file still holds. */
#include "trace/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/event.h"
#include "base/file.h"
#include "base/msg.h"

/* dir/name into out when dir is on a memory file system. */
static int under(const char *dir, const char *name, char *out, size_t n)
{
	struct statfs sf;
	if (!dir || *dir != '/' || statfs(dir, &sf) != 0 || sf.f_type != STAGE_TMPFS_MAGIC)
		return -1;
	return file_join_to(out, n, dir, name) < n ? 0 : -1;
}

/* path is a directory of this user that no one else may enter. */
static int private_dir(const char *path, int make)
{
	if (make && mkdir(path, 0700) != 0 && errno != EEXIST)
		return -1;
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0
		       ? 0
		       : -1;
}

int stage_dir(char *out, size_t n, int make)
{
	char name[40];
	snprintf(name, sizeof(name), "ovni-stage.%u", (unsigned)getuid());
	if ((under("/dev/shm", name, out, n) == 0 && private_dir(out, make) == 0) ||
	    (under(getenv("XDG_RUNTIME_DIR"), "ovni-stage", out, n) == 0 && private_dir(out, make) == 0))
		return 0;
	if (n)
		out[0] = '\0';
	return -1;
}

int stage_open_for(const struct stat *st, char *path, size_t n)
{
	char dir[4096], name[64];
	if (stage_dir(dir, sizeof(dir), 0) != 0)
		return -1;
	stage_name(name, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (file_join_to(path, n, dir, name) >= n)
		return -1;
	return open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* The file's bytes up to base, then tail (the events that follow there). */
struct staged_src {
	struct byte_src src;
	struct byte_src *file;
	uint64_t base, pos;
	uint8_t *tail;
	size_t ntail;
	char name[]; /* the stream file, for messages */
};

static ssize_t staged_read(struct byte_src *s, void *buf, size_t n)
{
	struct staged_src *o = (struct staged_src *)s;
	if (o->pos < o->base) {
		if (n > o->base - o->pos)
			n = (size_t)(o->base - o->pos);
		ssize_t got = o->file->read(o->file, buf, n);
		if (got > 0)
			o->pos += (uint64_t)got;
		else if (got == 0) { /* the file shrank meanwhile */
			msg_err("%s: offset %llu: the stream ended before its staged events", o->name,
				(unsigned long long)o->pos);
			return -1;
		}
		return got;
	}
	size_t at = (size_t)(o->pos - o->base), left = o->ntail - at;
	if (n > left)
		n = left;
	memcpy(buf, o->tail + at, n);
	o->pos += n;
	return (ssize_t)n;
}

static void staged_close(struct byte_src *s)
{
	struct staged_src *o = (struct staged_src *)s;
	o->file->close(o->file);
	free(o->tail);
	free(o);
}

/* The bytes of h's held slots from base to their end into a new buffer,
 * in stream order: the later slot wins where two share a page. */
static uint8_t *slots_from(const struct stage_head *h, uint64_t base, uint64_t end)
{
	uint8_t *b = calloc(1, (size_t)(end - base) + 1);
	int order[STAGE_SLOTS], n = stage_held(h, order);
	for (int k = 0; b && k < n; k++)
		memcpy(b + (atomic_load(&h->slot[order[k]].off) - base), stage_slot_bytes(h, order[k]),
		       stage_slot_len(h, order[k]));
	return b;
}

int stage_compose(int fd, const struct stat *st, const struct stage_head *h, struct stage_tail *t)
{
	uint64_t base = UINT64_MAX, end = 0, size = (uint64_t)st->st_size;
	int order[STAGE_SLOTS], n = stage_held(h, order);
	for (int k = 0; k < n; k++) {
		uint64_t off = atomic_load(&h->slot[order[k]].off), e = off + stage_slot_len(h, order[k]);
		base = off < base ? off : base;
		end = e > end ? e : end;
	}
	if (h->dev != (uint64_t)st->st_dev || h->ino != (uint64_t)st->st_ino || base == UINT64_MAX || base > size ||
	    end - base > 2 * STAGE_SLOT_SPAN)
		return 0; /* another file's, nothing held, or not whole */
	/* the whole events before base, then on through the slots */
	const uint8_t *p = base > 0 ? mmap(NULL, (size_t)base, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	if (p == MAP_FAILED)
		return -1;
	struct ev_walk w;
	ev_walk_init(&w, p, base);
	if (base < STREAM_HEADER_SIZE)
		w.off = 0; /* the header is staged too */
	while (ev_walk_next(&w))
		;
	uint64_t from = w.off; /* the first event that crosses base, or base */
	uint8_t *rest = malloc((size_t)(end - from) + 1);
	uint8_t *slots = rest ? slots_from(h, base, end) : NULL;
	if (slots) {
		if (base > from)
			memcpy(rest, p + from, (size_t)(base - from));
		memcpy(rest + (base - from), slots, (size_t)(end - base));
	}
	free(slots);
	if (p)
		munmap((void *)p, (size_t)base);
	if (!slots) {
		free(rest);
		return -1;
	}
	struct ev_walk r = w; /* its clock and region state go on */
	r.p = rest;
	r.size = end - from;
	r.off = 0;
	if (from == 0) { /* nothing written before: the header comes from the slots */
		r.off = STREAM_HEADER_SIZE;
		r.last_clock = 0;
	}
	while (ev_walk_next(&r))
		;
	t->from = from;
	t->bytes = rest;
	t->n = (size_t)r.off;
	return 1;
}

int stage_tail_for(int fd, const struct stat *st, char *staged, size_t n, struct stage_tail *t)
{
	int sfd = stage_open_for(st, staged, n);
	if (sfd < 0)
		return 0;
	const struct stage_head *h = stage_map(sfd);
	close(sfd);
	int r = h ? stage_compose(fd, st, h, t) : 0;
	if (h)
		stage_unmap(h);
	return r;
}

struct byte_src *stage_overlay(const char *obs, struct byte_src *file, char *staged, size_t n, uint64_t *from)
{
	struct stat st;
	struct stage_tail t;
	struct staged_src *o = NULL;
	int fd = open(obs, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && stage_tail_for(fd, &st, staged, n, &t) == 1) {
		if (t.from <= file->size)
			o = calloc(1, sizeof(*o) + strlen(obs) + 1);
		if (!o)
			free(t.bytes);
	}
	if (fd >= 0)
		close(fd);
	if (!o)
		return file;
	o->src.read = staged_read;
	o->src.close = staged_close;
	o->src.size = t.from + t.n;
	o->file = file;
	o->base = t.from;
	o->tail = t.bytes;
	o->ntail = t.n;
	memcpy(o->name, obs, strlen(obs) + 1);
	*from = t.from;
	return &o->src;
}
