/* A stream written through its staging file (lib/trace/stage.h): the
 * thread fills one slot of a ring mapped from a memory file system while
 * the mapper writes the other into stream.obs. A slot is left at a page
 * boundary: the partial page goes on at the start of the next slot, so
 * every write is of whole pages but the last. */
#include "rt/rt.h"
#include "base/file.h"
#include "trace/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

static struct stage_head *head_of(const struct rt_thread *t)
{
	return (struct stage_head *)t->stage;
}

static uint8_t *slot_base(const struct rt_thread *t, int i)
{
	return t->stage + STAGE_HEAD_SIZE + (size_t)i * STAGE_SLOT_SPAN;
}

/* The staging file of the stream dev.ino into path: 0, -1 if none. */
static int stage_path(char path[PATH_MAX], uint64_t dev, uint64_t ino)
{
	const char *dir = rt_record_stage_dir();
	char name[64];
	stage_name(name, dev, ino);
	return dir && file_join_to(path, PATH_MAX, dir, name) < PATH_MAX ? 0 : -1;
}

void rt_stage_recover(uint64_t dev, uint64_t ino)
{
	char path[PATH_MAX];
	if (stage_path(path, dev, ino) != 0)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (stage_replay_fd(fd) != 0)
		rt_warn("ovni: cannot copy %s into its stream: %s\n", path, strerror(errno));
	close(fd);
	unlink(path);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The first fill bytes of slot i with their pages allocated: a full memory
 * file system fails here, not as a SIGBUS in the program. 0, or -1 (no
 * room, or a kernel before 5.14). */
static int make_ready(struct rt_thread *t, int i, size_t fill)
{
	struct stage_slot *s = &head_of(t)->slot[i];
	if (fill <= s->ready)
		return 0;
	if (madvise(slot_base(t, i) + s->ready, fill - s->ready, MADV_POPULATE_WRITE) != 0)
		return -1;
	s->ready = fill;
	return 0;
}

/* A window's size: the first small (a short thread touches little), then
 * growing to STAGE_SLOT_FILL, or more for a large event. */
static size_t fill_for(size_t prev, size_t min)
{
	size_t fill = !prev ? RT_FIRST_WINDOW : prev < RT_SECOND_WINDOW ? RT_SECOND_WINDOW : STAGE_SLOT_FILL;
	if (fill < min)
		fill = (min + PAGE - 1) & ~(size_t)(PAGE - 1);
	return fill;
}

/* The window [off, off + fill) of the stream in slot i, used bytes on. */
static void enter(struct rt_thread *t, int i, uint64_t off, size_t fill, uint64_t used)
{
	struct stage_slot *s = &head_of(t)->slot[i];
	atomic_store(&s->off, off);
	atomic_store(&s->len, fill);
	atomic_store(&s->state, STAGE_HELD);
	t->stage_cur = i;
	t->win = slot_base(t, i);
	t->win_off = off;
	t->win_size = fill;
	t->pos = t->win + (used - off);
	t->end = t->win + fill;
}

int rt_stage_open(struct rt_thread *t, int fd, uint64_t used)
{
	struct rt_where *w = t->where;
	struct stage_head *h;
	if (!rt_record_mode || strlen(w->obs.path) >= sizeof(h->path) ||
	    stage_path(w->stage, w->obs.dev, w->obs.ino) != 0)
		return -1;
	int sfd = open(w->stage, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sfd < 0)
		return -1;
	void *m = MAP_FAILED;
	sigset_t caller; /* a file size limit below the file's size: EFBIG, no signal */
	rt_signals_off(&caller);
	if (ftruncate(sfd, (off_t)STAGE_FILE_SIZE) == 0)
		m = mmap(NULL, STAGE_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	else
		rt_forget_xfsz(errno, &caller);
	rt_signals_on(&caller);
	close(sfd);
	uint64_t off = used & ~(uint64_t)(PAGE - 1);
	size_t part = (size_t)(used - off), fill = fill_for(0, part + 8 + RT_SLACK);
	int err = 0;
	if (m != MAP_FAILED &&
	    madvise((uint8_t *)m + STAGE_HEAD_SIZE, fill, MADV_POPULATE_WRITE) != 0)
		err = errno;
	if (m != MAP_FAILED && !err && part &&
	    file_pread_all(fd, (uint8_t *)m + STAGE_HEAD_SIZE, part, off, &err) != part)
		err = err ? err : EIO;
	if (m == MAP_FAILED || err) {
		if (m != MAP_FAILED)
			munmap(m, STAGE_FILE_SIZE);
		unlink(w->stage);
		return -1;
	}
	madvise(m, STAGE_FILE_SIZE, MADV_DONTFORK); /* a forked child has streams of its own */
	h = m;
	h->dev = w->obs.dev;
	h->ino = w->obs.ino;
	h->slot[0].ready = fill;
	memcpy(h->path, w->obs.path, strlen(w->obs.path) + 1);
	memcpy(h->owner, rt_record_stage_owner(), strlen(rt_record_stage_owner()) + 1);
	rt_signals_off(&caller);
	t->stage = m;
	memset(slot_base(t, 0) + part, 0, 4);
	enter(t, 0, off, fill, used);
	memcpy(h->magic, STAGE_MAGIC, 8); /* last: a head with its magic is whole */
	rt_signals_on(&caller);
	return 0;
}

/* Ends staging t's stream at used, after err (0: all written). What a
 * failed write left in the ring stays for the recorder to copy, as it can
 * open the stream where the program could not (a descriptor limit,
 * privileges dropped); not on a full disk, whose last room is for the
 * final metadata. */
static void detach(struct rt_thread *t, uint64_t used, int err)
{
	if (err && err != ENOSPC && err != EDQUOT && err != EFBIG)
		atomic_store(&head_of(t)->slot[t->stage_cur].len, used - t->win_off);
	else
		unlink(t->where->stage);
	munmap(t->stage, STAGE_FILE_SIZE);
	t->stage = NULL;
	t->win = t->pos = t->end = NULL;
}

int rt_stage_switch(struct rt_thread *t, uint64_t used, size_t need)
{
	struct stage_head *h = head_of(t);
	int cur = t->stage_cur, next = cur ^ 1;
	int err = rt_mapper_flushed(t); /* next's last write */
	if (err) {
		detach(t, used, err);
		return err;
	}
	uint64_t off = used & ~(uint64_t)(PAGE - 1), from = t->win_off;
	size_t part = (size_t)(used - off), fill = fill_for(t->win_size, part + need + RT_SLACK);
	if (fill > STAGE_SLOT_SPAN)
		rt_die("rt_stream_grow", "an event of %zu bytes does not fit in a staging slot", need);
	if (make_ready(t, next, fill) != 0)
		return RT_STAGE_FULL; /* nothing changed: the stream goes on mapped */
	uint8_t *src = t->win, *dst = slot_base(t, next);
	memcpy(dst, src + (off - from), part);
	memset(dst + part, 0, 4);
	enter(t, next, off, fill, used);
	/* cur keeps the bytes before the partial page, until they are written */
	atomic_store(&h->slot[cur].len, off - from);
	if (off == from) {
		atomic_store(&h->slot[cur].state, STAGE_FREE);
		return 0;
	}
	err = rt_mapper_flush(t, src, (size_t)(off - from), from, &h->slot[cur].state);
	if (err)
		detach(t, used, err);
	return err;
}

int rt_stage_close(struct rt_thread *t, uint64_t used)
{
	int err = rt_mapper_flushed(t);
	if (!err)
		err = rt_write_last(&t->where->obs, t->win, (size_t)(used - t->win_off), t->win_off);
	detach(t, used, err);
	return err;
}
