/* The stream of one thread: a window of memory the thread emits into, no
 * write() on the emit path. In record mode with a staging directory the
 * window is a slot of the thread's staging ring (stage.c), which the mapper
 * writes into stream.obs; else stream.obs itself is mapped MAP_SHARED a
 * window at a time and the kernel writes the pages back. Either way a
 * killed process keeps its events. The bytes after the last event are
 * zero: a reader of a cut stream stops there. */
#include "rt/rt.h"
#include "base/event.h"
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

/* The stream file cannot be opened again for the next window: removed
 * (or replaced) while the thread ran, as when the trace directory is
 * deleted, or no descriptor left for it (the program holds as many as its
 * limit allows), or it cannot grow (a file size limit, ulimit -f). The
 * program goes on; its thread's stream ends at the events already in it
 * (the recorder cuts it there), and the events from now on land in memory
 * that is dropped window by window. */
static void lose(struct rt_thread *t, int err, const char *what, const char *again)
{
	if (t->lost)
		return;
	t->lost = 1;
	rt_warn("ovni: cannot %s %s%s (%s): the events of thread %d from now on are not recorded\n", what,
		t->where->obs.path, again, err == ESTALE ? "another file has its name" : strerror(err), t->tid);
}

/* lose, saying what err stopped. */
static void lose_for(struct rt_thread *t, int err)
{
	if (err == EFBIG || err == ENOSPC || err == EDQUOT)
		lose(t, err, "extend", "");
	else if (err == ENOENT || err == ESTALE || err == EMFILE || err == ENFILE || err == EACCES || err == EPERM)
		lose(t, err, "open", " again");
	else
		lose(t, err, "write to", "");
}

static void *map_lost(struct rt_thread *t, size_t size, int err)
{
	lose_for(t, err);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The stream's file as rt_stream_open has it open: its first window is
 * mapped through it, not by opening the file again. */
struct opened {
	int fd;
	uint64_t size;
};

/* rt_map_pages in the program's thread (through o when not NULL), every
 * signal blocked (caller: the program's mask). A file size limit (ulimit
 * -f) would kill the program with SIGXFSZ there; blocked, the call fails
 * with EFBIG, and the signal it raised is taken back unless the program
 * blocks it too. (The mapper thread blocks every signal.) */
static void *map_pages_here(struct rt_thread *t, uint64_t off, size_t size, const sigset_t *caller,
			    const struct opened *o)
{
	void *p = o ? rt_map_fd(o->fd, o->size, off, size) : rt_map_pages(&t->where->obs, off, size);
	int err = errno;
	if (!p)
		rt_forget_xfsz(err, caller);
	errno = err;
	return p;
}

/* Maps the window holding used with room for need more bytes: the one the
 * mapper prepared when it fits, else now. Windows start small (a thread
 * that emits little holds little memory) and double up to RT_WINDOW; after
 * a switch the mapper prepares the next one. Windows overlap by a page,
 * since a window is left when its last page is being filled. The switch
 * is made with every signal blocked: a handler that jumped out of it would
 * leave t half in the old window, half in the new one. */
static void map_window(struct rt_thread *t, uint64_t used, size_t need, void *drop, size_t drop_size,
		       const struct opened *o)
{
	sigset_t caller;
	rt_signals_off(&caller);
	if (t->stage) {
		int err = rt_stage_switch(t, used, need);
		if (err == RT_STAGE_FULL) /* written out, then mapped from here on */
			err = rt_stage_close(t, used);
		if (err) {
			rt_forget_xfsz(err, &caller);
			lose_for(t, err);
		}
		if (t->stage) {
			rt_signals_on(&caller);
			return;
		}
		drop = NULL; /* unmapped with the ring */
		drop_size = 0;
	}
	uint64_t off = used & ~(uint64_t)(PAGE - 1);
	size_t min = (size_t)(used - off) + need + RT_SLACK;
	size_t size;
	void *p = rt_mapper_take(t, off, min, &size);
	if (!p) {
		size = !drop ? RT_FIRST_WINDOW : drop_size * 2 < RT_SECOND_WINDOW ? RT_SECOND_WINDOW : drop_size * 2;
		if (size > RT_WINDOW)
			size = RT_WINDOW;
		while (size < min)
			size *= 2;
		if (t->lost) {
			p = map_lost(t, size, 0); /* told already */
		} else {
			p = map_pages_here(t, off, size, &caller, o);
			int err = errno;
			/* record mode: whatever the cause (a full disk, a program
			 * that dropped its privileges), the program goes on */
			if (!p && (rt_record_mode || err == ENOENT || err == ESTALE || err == EMFILE ||
				   err == ENFILE || err == EFBIG))
				p = map_lost(t, size, err);
		}
		if (!p)
			rt_die("rt_stream_grow", "cannot extend and map %s/stream.obs: %s", t->where->dir, strerror(errno));
	}
	t->win = p;
	t->win_off = off;
	t->win_size = size;
	t->pos = t->win + (used - off);
	t->end = t->win + size;
	if (drop && t->lost) /* no more windows of the file */
		munmap(drop, drop_size);
	else if (drop)
		rt_mapper_request(t, off + size - PAGE, size * 2 > RT_WINDOW ? RT_WINDOW : size * 2, drop, drop_size);
	rt_signals_on(&caller);
}

uint64_t rt_stream_used(const struct rt_thread *t)
{
	return t->win ? t->win_off + (uint64_t)(t->pos - t->win) : 0;
}

static void unmap(struct rt_thread *t)
{
	if (t->win)
		munmap(t->win, t->win_size);
	t->win = t->pos = t->end = NULL;
}

/* Room for at least need more bytes (plus the slack of the fast path). */
void rt_stream_grow(struct rt_thread *t, size_t need)
{
	uint64_t used = rt_stream_used(t);
	/* The old window stays in t until the new one replaces it: a fatal
	 * signal meanwhile still finds a consistent stream to finish. */
	map_window(t, used, need, t->win, t->win_size, NULL);
}

/* Where the whole events of a stream end, and how many there are: a
 * stream cut by a crash still has the zero bytes of its last window after
 * them. */
static uint64_t events_end(int fd, uint64_t size, uint64_t *count)
{
	*count = 0;
	const uint8_t *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		*count = UINT64_MAX; /* not known */
		return size;
	}
	struct ev_walk w;
	ev_walk_init(&w, p, size);
	while (ev_walk_next(&w))
		++*count;
	uint64_t off = w.off;
	munmap((void *)p, size);
	return off < size ? off : size;
}

/* resume: an exec'd image continues the stream of its thread (same pid and
 * tid) after the events already there; in record mode so does any stream
 * found there (an exec from another thread, a reused pid). The descriptor
 * is closed once the first window is mapped (struct rt_file, its path set
 * by rt_thread_start). Whether it resumed. */
int rt_stream_open(struct rt_thread *t, int resume)
{
	int flags = O_RDWR | O_CREAT | O_CLOEXEC | (resume ? 0 : rt_record_mode ? O_EXCL : O_TRUNC);
	int fd = open(t->where->obs.path, flags, 0644);
	if (fd < 0 && errno == EEXIST && !resume) {
		resume = 1;
		fd = open(t->where->obs.path, O_RDWR | O_CLOEXEC);
	}
	struct stat st;
	if (fd < 0 && (errno == EMFILE || errno == ENFILE || rt_record_mode)) {
		/* the program holds all the descriptors it may, or it cannot
		 * write the trace any more (it dropped its privileges: setuid):
		 * it goes on, this thread unrecorded (an ended stream needs none) */
		lose(t, errno, "open", "");
		t->stream_open = 1;
		t->nev = 0;
		t->nev_unknown = 0;
		map_window(t, 0, 8, NULL, 0, NULL);
		return resume;
	}
	if (fd < 0 || fstat(fd, &st) != 0)
		rt_die("rt_stream_open", "cannot open %s: %s", t->where->obs.path, strerror(errno));
	if (!resume)
		rt_fix_mode(fd, NULL, 0644);
	t->where->obs.dev = (uint64_t)st.st_dev;
	t->where->obs.ino = (uint64_t)st.st_ino;
	t->stream_open = 1;
	uint64_t used = 0;
	struct opened o = { fd, (uint64_t)st.st_size };
	t->nev = 0;
	if (resume) {
		rt_stage_recover(t->where->obs.dev, t->where->obs.ino);
		off_t end = lseek(fd, 0, SEEK_END);
		o.size = end > 0 ? (uint64_t)end : 0;
		used = end > 0 ? events_end(fd, (uint64_t)end, &t->nev) : 0;
		t->nev_unknown = t->nev == UINT64_MAX;
	}
	if (used < 8) {
		used = 0;
		t->nev = 0;
		t->nev_unknown = 0;
		if (rt_stage_open(t, fd, 0) != 0)
			map_window(t, 0, 8, NULL, 0, &o);
		memcpy(t->pos, OVNI_STREAM_MAGIC, 4);
		uint32_t version = OVNI_STREAM_VERSION;
		memcpy(t->pos + 4, &version, 4);
		t->pos += 8;
	} else if (rt_stage_open(t, fd, used) != 0) {
		map_window(t, used, 0, NULL, 0, &o);
	}
	close(fd);
	return resume;
}

/* Unmaps and cuts the file to the events written. Only system calls: a
 * fatal signal handler calls it. */
void rt_stream_close(struct rt_thread *t)
{
	if (!t->stream_open)
		return;
	sigset_t caller; /* no handler jumps out with the window unmapped */
	rt_signals_off(&caller);
	/* The thread ends, maybe in a handler that interrupted one of its
	 * emits (it exits): that emit never goes on, so its place is taken. */
	rt_stream_hold(t);
	uint64_t used = rt_stream_used(t);
	int err = 0, cut = 0;
	if (t->stage) {
		err = rt_stage_close(t, used);
		cut = !err; /* its last write ended the file at used */
	} else {
		unmap(t);
		rt_mapper_quiesce(t);
	}
	t->stream_open = 0;
	if (err) {
		rt_forget_xfsz(err, &caller);
		lose_for(t, err);
	}
	rt_signals_on(&caller);
	if (t->lost || cut)
		return;
	struct stat st;
	int fd = rt_file_open(&t->where->obs, &st);
	if (fd < 0 || ftruncate(fd, (off_t)used) != 0) {
		rt_warn("ovni: cannot cut %s to %llu bytes\n", t->where->obs.path, (unsigned long long)used);
		t->lost = 1; /* no final metadata: it is ended at its last event, as if killed */
	}
	if (fd >= 0)
		close(fd);
}

/* The event of head and body after the last one; busy is set. */
static void put_now(struct rt_thread *t, const void *head, size_t nhead, const void *body, size_t nbody)
{
	size_t n = nhead + nbody;
	if ((size_t)(t->end - t->pos) < n + RT_SLACK)
		rt_stream_grow(t, n);
	memcpy(t->pos, head, nhead);
	if (nbody)
		memcpy(t->pos + nhead, body, nbody);
	memset(t->pos + n, 0, 4);
	t->pos += n;
	t->nev++;
}

/* The side buffer's slots: a 4-byte word, the event's size with SIDE_DONE
 * once it is all written, then the event, padded to 4 bytes. A slot is
 * reserved first: a nested handler then takes the next one, and a slot
 * whose handler jumped out is left not done and skipped. No signal is
 * blocked: that cost two system calls per event, and a burst of a handler
 * outlasted its timer's period. */
#define SIDE_DONE 0x80000000u
#define SIDE_WARM (64u << 10) /* zeroed by memset after a drain; beyond, given back */

/* A slot's bytes: its word and an event of n bytes, padded. */
static uint32_t slot_size(size_t n)
{
	return (uint32_t)((4 + n + 3) & ~(size_t)3);
}

struct rt_side {
	uint32_t cap; /* bytes of data */
	uint8_t pad[PAGE - 4]; /* data starts on a page: madvise can zero it */
	uint8_t data[];
};

/* Mapped by the first handler that needs it; a nested one may race it, and
 * the loser unmaps its own (mmap and munmap are safe in a handler). */
static struct rt_side *side_map(struct rt_thread *t)
{
	struct rt_side *sb = atomic_load(&t->side);
	if (sb)
		return sb;
	static const uint32_t sizes[] = { RT_SIDE_MAX, 64u << 20, 1u << 20 }; /* strict overcommit */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = mmap(NULL, sizeof(*sb) + sizes[i], PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		struct rt_side *mine = p;
		mine->cap = sizes[i];
		if (atomic_compare_exchange_strong(&t->side, &sb, mine))
			return mine;
		munmap(p, sizeof(*sb) + sizes[i]);
		return sb;
	}
	return NULL;
}

void rt_side_free(struct rt_thread *t)
{
	struct rt_side *sb = atomic_exchange(&t->side, NULL);
	if (sb)
		munmap(sb, sizeof(*sb) + sb->cap);
	atomic_store(&t->side_len, 0);
}

/* A handler interrupted an emit of its thread: the event waits in the side
 * buffer. A jump out between the reservation and the size word leaves a
 * zero there: the drain stops at it, and says so. */
static void side_put(struct rt_thread *t, const void *head, size_t nhead, const void *body, size_t nbody)
{
	size_t n = nhead + nbody;
	struct rt_side *sb = side_map(t);
	if (!sb) { /* nothing in the buffer: no drain would come to say it */
		if (atomic_fetch_add(&t->side_lost, 1) == 0)
			rt_warn("ovni: no memory for the side buffer of thread %d: events its signal handlers emit while it is emitting are not recorded\n",
				t->tid);
		return;
	}
	uint32_t need = slot_size(n);
	uint32_t off = atomic_load(&t->side_len);
	do {
		if (need > sb->cap - off) {
			atomic_fetch_add(&t->side_lost, 1);
			return;
		}
	} while (!atomic_compare_exchange_weak(&t->side_len, &off, off + need));
	_Atomic uint32_t *word = (_Atomic uint32_t *)(void *)(sb->data + off);
	atomic_store_explicit(word, (uint32_t)n, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(sb->data + off + 4, head, nhead);
	if (nbody)
		memcpy(sb->data + off + 4 + nhead, body, nbody);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(word, (uint32_t)n | SIDE_DONE, memory_order_relaxed);
}

/* Zeroes what the drain read, as the slots' words must start at zero. */
static void side_clear(struct rt_side *sb, uint32_t len)
{
	if (len <= SIDE_WARM) {
		memset(sb->data, 0, len);
		return;
	}
	memset(sb->data, 0, SIDE_WARM);
	size_t rest = (((size_t)len + PAGE - 1) & ~(size_t)(PAGE - 1)) - SIDE_WARM;
	if (madvise(sb->data + SIDE_WARM, rest, MADV_DONTNEED) != 0) /* zero, and no longer resident */
		memset(sb->data + SIDE_WARM, 0, len - SIDE_WARM);
}

/* With every signal blocked: a handler that jumped out of it would leave
 * its events written and still in the side buffer, to be written again.
 * No handler's put is going on beneath it: puts come only while busy is
 * set, and return, jump out or exit before the emit they came in goes on. */
void rt_side_drain(struct rt_thread *t, uint64_t floor)
{
	sigset_t caller;
	rt_signals_off(&caller);
	struct rt_side *sb = atomic_load(&t->side);
	uint32_t len = atomic_load(&t->side_len);
	uint32_t cut = 0;
	for (uint32_t done = 0; sb && done < len;) {
		uint32_t word = atomic_load_explicit((_Atomic uint32_t *)(void *)(sb->data + done), memory_order_relaxed);
		if (!word) {
			cut = len - done;
			break;
		}
		uint32_t n = word & ~SIDE_DONE;
		uint8_t *e = sb->data + done + 4;
		if (word & SIDE_DONE) { /* else its handler jumped out: never emitted */
			uint64_t clock = ev_clock(e);
			if (clock < floor)
				memcpy(e + 4, &floor, 8);
			else
				floor = clock;
			put_now(t, e, n, NULL, 0);
		}
		done += slot_size(n);
	}
	if (sb)
		side_clear(sb, len);
	atomic_store(&t->side_len, 0);
	uint32_t lost = atomic_exchange(&t->side_lost, 0);
	if (lost)
		rt_warn("ovni: %u events emitted by signal handlers of thread %d while it was emitting found no room in its side buffer (%u KiB): they are not recorded\n",
			lost, t->tid, sb ? sb->cap >> 10 : 0);
	if (cut)
		rt_warn("ovni: %u bytes of events emitted by signal handlers of thread %d are not recorded: a handler jumped out as it wrote one\n",
			cut, t->tid);
	rt_signals_on(&caller);
}

void rt_side_late(struct rt_thread *t, uint64_t floor)
{
	rt_guard_take(t);
	rt_guard_give(t, floor);
}

void rt_stream_hold(struct rt_thread *t)
{
	rt_guard_take(t);
	/* left by a handler that came as the previous emit ended: later than it */
	if (atomic_load_explicit(&t->side_len, memory_order_relaxed))
		rt_side_drain(t, 0);
}

/* Takes the guard for an emit: 0 if an emit of this thread holds it (this
 * is a handler that came in), else 1, the side buffer empty. */
static int own(struct rt_thread *t)
{
	if (t->busy)
		return 0;
	rt_stream_hold(t);
	return 1;
}

void rt_stream_put_held(struct rt_thread *t, const void *data, size_t n)
{
	put_now(t, data, n, NULL, 0);
}

void rt_stream_put2(struct rt_thread *t, const void *head, size_t nhead, const void *body, size_t nbody)
{
	if (!own(t)) {
		side_put(t, head, nhead, body, nbody);
		return;
	}
	put_now(t, head, nhead, body, nbody);
	rt_guard_give(t, ev_clock(head));
}

void rt_emit_now(struct rt_thread *t, const char mcv[3], const void *payload, size_t n)
{
	uint8_t ev[EV_HEADER_SIZE + EV_MAX_PAYLOAD];
	if (!own(t)) {
		side_put(t, ev, ev_encode(ev, mcv, ovni_clock_now(), payload, n), NULL, 0);
		return;
	}
	uint64_t clock = ovni_clock_now();
	put_now(t, ev, ev_encode(ev, mcv, clock, payload, n), NULL, 0);
	rt_guard_give(t, clock);
}

void rt_stream_put(struct rt_thread *t, const void *data, size_t n)
{
	rt_stream_put2(t, data, n, NULL, 0);
}

void rt_emit_raw(struct rt_thread *t, const char mcv[3], uint64_t clock, const void *payload, size_t n)
{
	uint8_t ev[28];
	ev[0] = n ? (uint8_t)(n - 1) : 0;
	memcpy(ev + 1, mcv, 3);
	memcpy(ev + 4, &clock, 8);
	if (n)
		memcpy(ev + 12, payload, n);
	rt_stream_put(t, ev, 12 + n);
}

/* OVNI_TMPDIR: the stream's two files move between its directories. */
static void move_file(const char *src, const char *dst)
{
	if (file_move(src, dst) != 0)
		rt_warn("cannot move %s to %s\n", src, dst);
}

void rt_move_files(struct rt_thread *t)
{
	struct rt_where *w = t->where;
	if (strcmp(w->dir, w->final_dir) == 0)
		return;
	move_file(w->obs.path, w->final_obs);
	move_file(w->json, w->final_json);
	rmdir(w->dir);
}

/* A stream that already ended (moved out of OVNI_TMPDIR) and goes on: back
 * to the tmpdir, so that it is continued and not replaced. */
void rt_move_back(struct rt_thread *t)
{
	struct rt_where *w = t->where;
	if (strcmp(w->dir, w->final_dir) == 0)
		return;
	if (access(w->obs.path, F_OK) != 0 && access(w->final_obs, F_OK) == 0) {
		move_file(w->final_obs, w->obs.path);
		move_file(w->final_json, w->json);
	}
}
