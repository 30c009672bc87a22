/* Stream files: the in-place sort through a journal, and the check. The
 * stream is read into a buffer and walked once; each region's window is
 * sorted against the view (stream + earlier sorted windows); the sorted
 * windows go to a journal beside the stream, which is synced and renamed
 * to its final name, and only then written in place; the stream is synced
 * and the journal removed. A crash leaves the old stream (no journal, or
 * a ".tmp" one), or a journal that the next `ovni sort` writes again. */
#include "sort/sort.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h> /* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include "common/xxhash.h"

#include "base/file.h"
#include "base/lock.h"
#include "base/msg.h"
#include "sort/keys.h"
#include "trace/stream.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static int check_header(int fd, const char *name, uint64_t size)
{
	uint8_t h[STREAM_HEADER_SIZE];
	if (size == 0) {
		msg_err("%s: offset 0: empty file, no stream header", name);
		return -1;
	}
	if (size < STREAM_HEADER_SIZE) {
		msg_err("%s: offset %" PRIu64 ": stream header cut short", name, size);
		return -1;
	}
	ssize_t n = pread(fd, h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h)) {
		msg_err("%s: offset 0: cannot read the stream header: %s", name,
			n < 0 ? strerror(errno) : "short read");
		return -1;
	}
	if (memcmp(h, STREAM_MAGIC, 4) != 0) {
		msg_err("%s: offset 0: not an ovni stream (bad magic)", name);
		return -1;
	}
	uint32_t v;
	memcpy(&v, h + 4, 4);
	if (v != STREAM_VERSION) {
		msg_err("%s: offset 4: stream version %" PRIu32 ", expected %d", name, v, STREAM_VERSION);
		return -1;
	}
	return 0;
}

static int open_stream(const char *path, const char *name, struct stat *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		msg_err("%s: cannot open: %s", name, strerror(errno));
		return -1;
	}
	if (fstat(fd, sb) < 0 || !S_ISREG(sb->st_mode)) {
		msg_err("%s: not a regular file", name);
		close(fd);
		return -1;
	}
	if (check_header(fd, name, (uint64_t)sb->st_size) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int sync_dir_of(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int r = fd >= 0 ? fsync(fd) : -1;
	if (r < 0)
		msg_err("%s: cannot sync directory %s: %s", name, dir ? dir : path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(dir);
	return r;
}

/* ---- In place, through a journal ---- */

#define READ_AHEAD (256u << 10) /* stream bytes read at a time by the scan */
#define READ_BEHIND (64u * 1024) /* and kept behind its position, for the look-back */
#define READ_SLACK 64 /* the scan's fast walk stops this far before the buffer ends */
#define WRITEBACK_CHUNK (8u << 20) /* the disk is started on written pages this much at a time */
#define RING 8192 /* event boundaries kept for looking back, newest last */
#define SKIP_EVENTS 64 /* events walked between two boundaries kept */
#define SPILL_MEM (1u << 20) /* patch bytes held before they go to the journal */
#define PATCH_MAX (1u << 16) /* patches held before the journal is written in place (48 B each) */
#define PATCH_DROP 256 /* patches out of the look-back's reach dropped at a time */
#define VIEW_CHUNK (64u * 1024)
#define JOURNAL_BUF (64u * 1024)
#define JOURNAL_MAGIC "ovnisrtj"
#define JOURNAL_END UINT64_MAX /* the offset field of the trailer */
#define JOURNAL_HEAD 16 /* magic, stream size */
#define JOURNAL_TAIL 24 /* JOURNAL_END, records, hash of all before the hash */

/* An event boundary of the sorted view: offset and event index. */
struct mark {
	uint64_t off, idx;
};

#define NO_DATA SIZE_MAX

/* Sorted bytes that replace [off, off + len) of the stream. */
struct patch {
	uint64_t off, len, idx, end_idx; /* idx: event index at off; end_idx: at off + len */
	size_t data; /* where the bytes are in the pool; NO_DATA once in the journal, at joff */
	uint64_t joff;
};

struct journal {
	int fd;
	char *path, *tmp;
	uint8_t *buf;
	size_t len;
	uint64_t pos; /* journal bytes written so far, buffered included */
	uint64_t records;
	XXH64_state_t hash;
};

struct inplace {
	const char *name;
	const char *path;
	int fd;
	uint64_t size;
	uint64_t lookback;
	struct sort_stats *st;
	const struct sort_opts *o;
	uint8_t *rbuf; /* behind + ahead bytes: the stream's [rbase, rbase + rlen) */
	uint64_t rbase, rlen;
	uint64_t ahead, behind; /* READ_AHEAD, READ_BEHIND; tiny with sort_opts.mem */
	struct mark ring[RING];
	uint64_t nring, ring_lo; /* entries [ring_lo, nring) are valid, at index % ring_cap */
	uint64_t ring_cap, skip, spill; /* RING, SKIP_EVENTS, SPILL_MEM; tiny with sort_opts.mem (tests) */
	size_t pmax, pdrop; /* PATCH_MAX, PATCH_DROP; tiny with sort_opts.mem */
	int rest_checked; /* the events after the last checkpoint are whole */
	struct patch *p;
	size_t np, pcap, pmem;
	/* The bytes of the patches held, in patch order, packed up to pool_len
	 * after each spill: one buffer, not an allocation per window (freed in
	 * batches, those cost a page unmapping each). */
	uint8_t *pool;
	size_t pool_len, pool_cap;
	struct journal j;
	uint8_t *win, *tmp; /* a window's bytes, its sorted bytes */
	size_t wcap;
	struct key *keys, *keys2;
	size_t kcap;
	uint8_t view[VIEW_CHUNK];
};

static int ip_nomem(struct inplace *s, size_t n)
{
	msg_err("%s: out of memory for %zu bytes", s->name, n);
	return -1;
}

/* ---- The journal: sorted windows on disk before the stream is touched ---- */

static int journal_flush(struct inplace *s)
{
	struct journal *j = &s->j;
	if (j->len && file_write_all(j->fd, j->buf, j->len) < 0) {
		msg_err("%s: cannot write %s: %s", s->name, j->tmp, strerror(errno));
		return -1;
	}
	j->len = 0;
	return 0;
}

static int journal_put(struct inplace *s, const void *p, size_t n)
{
	struct journal *j = &s->j;
	XXH64_update(&j->hash, p, n);
	j->pos += n;
	if (n >= JOURNAL_BUF) {
		if (journal_flush(s) < 0 || file_write_all(j->fd, p, n) < 0) {
			msg_err("%s: cannot write %s: %s", s->name, j->tmp, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (j->len + n > JOURNAL_BUF && journal_flush(s) < 0)
		return -1;
	memcpy(j->buf + j->len, p, n);
	j->len += n;
	return 0;
}

static int journal_u64(struct inplace *s, uint64_t v)
{
	return journal_put(s, &v, 8);
}

static int journal_open(struct inplace *s)
{
	struct journal *j = &s->j;
	/* Known before the journal exists: a journal never waits on a stream it cannot write. */
	if (access(s->path, W_OK) < 0) {
		msg_err("%s: cannot write the sorted windows: %s", s->name, strerror(errno));
		return -1;
	}
	j->fd = open(j->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (j->fd < 0) {
		msg_err("%s: cannot create %s: %s", s->name, j->tmp, strerror(errno));
		return -1;
	}
	if (!j->buf && !(j->buf = malloc(JOURNAL_BUF)))
		return ip_nomem(s, JOURNAL_BUF);
	j->len = 0;
	j->pos = 0;
	j->records = 0;
	XXH64_reset(&j->hash, 0);
	if (journal_put(s, JOURNAL_MAGIC, 8) < 0 || journal_u64(s, s->size) < 0)
		return -1;
	if (s->o->hook)
		s->o->hook("journal-created");
	return 0;
}

/* The patch's bytes go to the journal and leave memory. */
static int spill(struct inplace *s, struct patch *p)
{
	if (s->j.fd < 0 && journal_open(s) < 0)
		return -1;
	if (journal_u64(s, p->off) < 0 || journal_u64(s, p->len) < 0)
		return -1;
	p->joff = s->j.pos;
	if (journal_put(s, s->pool + p->data, p->len) < 0)
		return -1;
	s->j.records++;
	s->pmem -= p->len;
	p->data = NO_DATA;
	return 0;
}

/* The bytes still held move to the front of the pool, in patch order. */
static void pool_pack(struct inplace *s)
{
	size_t q = 0;
	for (size_t i = 0; i < s->np; i++) {
		struct patch *p = &s->p[i];
		if (p->data == NO_DATA)
			continue;
		memmove(s->pool + q, s->pool + p->data, (size_t)p->len);
		p->data = q;
		q += (size_t)p->len;
	}
	s->pool_len = q;
}

/* Patches [0, n) go to the journal. */
static int spill_all(struct inplace *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s->p[i].data != NO_DATA && spill(s, &s->p[i]) < 0)
			return -1;
	pool_pack(s);
	return 0;
}

/* The journal is whole: trailer, sync, then renamed to its final name. */
static int journal_commit(struct inplace *s)
{
	struct journal *j = &s->j;
	if (journal_u64(s, JOURNAL_END) < 0 || journal_u64(s, j->records) < 0)
		return -1;
	uint64_t h = XXH64_digest(&j->hash);
	if (journal_put(s, &h, 8) < 0 || journal_flush(s) < 0)
		return -1;
	if (fdatasync(j->fd) < 0) {
		msg_err("%s: cannot sync %s: %s", s->name, j->tmp, strerror(errno));
		return -1;
	}
	if (rename(j->tmp, j->path) < 0) {
		msg_err("%s: cannot rename %s: %s", s->name, j->tmp, strerror(errno));
		return -1;
	}
	if (sync_dir_of(j->path, s->name) < 0)
		return -1;
	if (s->o->hook)
		s->o->hook("journaled");
	return 0;
}

/* ---- The stream's bytes: read, not mapped ---- */

/* Read into a buffer used again and again, not through a mapping: a fault
 * per page of a mapping costs more than the copy (three times as much
 * under a shadow-paging hypervisor). */

static int ip_read_error(struct inplace *s, uint64_t off, int err)
{
	msg_err("%s: offset %" PRIu64 ": cannot read: %s", s->name, off, err ? strerror(err) : "the file shrank");
	return -1;
}

/* The buffered byte of the stream at off (rbase <= off <= rbase + rlen). */
static inline const uint8_t *at(const struct inplace *s, uint64_t off)
{
	return s->rbuf + (off - s->rbase);
}

static inline int buffered(const struct inplace *s, uint64_t off, uint64_t n)
{
	return off >= s->rbase && off - s->rbase <= s->rlen && n <= s->rlen - (off - s->rbase);
}

/* Fills the buffer with the stream from a little behind off on; what it
 * holds of that already moves to the front instead of being read again. */
static int refill(struct inplace *s, uint64_t off)
{
	uint64_t base = off > s->behind ? off - s->behind : 0;
	uint64_t n = s->size - base < s->behind + s->ahead ? s->size - base : s->behind + s->ahead;
	uint64_t keep = 0, end = s->rbase + s->rlen;
	if (base >= s->rbase && base < end) {
		keep = end - base < n ? end - base : n;
		memmove(s->rbuf, s->rbuf + (base - s->rbase), (size_t)keep);
	}
	int err;
	s->rbase = base;
	s->rlen = 0;
	if (file_pread_all(s->fd, s->rbuf + keep, (size_t)(n - keep), base + keep, &err) != n - keep)
		return ip_read_error(s, base + keep, err);
	s->rlen = n;
	return 0;
}

/* Keeps an eighth of the read-ahead (at least twice READ_SLACK) buffered
 * from off on, or all up to the end of the stream. */
static int follow(struct inplace *s, uint64_t off)
{
	uint64_t low = s->ahead / 8 > 2 * READ_SLACK ? s->ahead / 8 : 2 * READ_SLACK;
	if (off >= s->rbase && (s->rbase + s->rlen == s->size || off + low <= s->rbase + s->rlen))
		return 0;
	return refill(s, off);
}

/* ev_skip from the buffered off, stopping READ_SLACK short of the
 * buffer's end unless that is the stream's. */
static uint64_t walk(const struct inplace *s, uint64_t off, uint64_t max, uint64_t *n)
{
	uint64_t end = s->rbase + s->rlen, lim = end == s->size ? end : end - READ_SLACK;
	return s->rbase + ev_skip(s->rbuf, off - s->rbase, lim - s->rbase, max, n);
}

/* Bytes [off, off + n) of the stream as it is on disk into dst. */
static int stream_read(struct inplace *s, uint64_t off, uint8_t *dst, size_t n)
{
	if (buffered(s, off, n)) {
		memcpy(dst, at(s, off), n);
		return 0;
	}
	int err;
	if (file_pread_all(s->fd, dst, n, off, &err) != n)
		return ip_read_error(s, off, err);
	return 0;
}

/* ---- The view: the stream as sorted so far (stream + patches) ---- */

/* Bytes [off, off + n) of the view into dst. */
static int view_read(struct inplace *s, uint64_t off, uint8_t *dst, size_t n)
{
	if (stream_read(s, off, dst, n) < 0)
		return -1;
	uint64_t end = off + n;
	/* Patches are sorted and disjoint; those that matter are the last ones. */
	size_t i = s->np;
	while (i > 0 && s->p[i - 1].off + s->p[i - 1].len > off)
		i--;
	for (; i < s->np && s->p[i].off < end; i++) {
		const struct patch *p = &s->p[i];
		uint64_t a = p->off > off ? p->off : off;
		uint64_t b = p->off + p->len < end ? p->off + p->len : end;
		if (p->data != NO_DATA) {
			memcpy(dst + (a - off), s->pool + p->data + (a - p->off), b - a);
			continue;
		}
		if (journal_flush(s) < 0)
			return -1;
		int err;
		if (file_pread_all(s->j.fd, dst + (a - off), b - a, p->joff + (a - p->off), &err) != b - a) {
			msg_err("%s: cannot read back %s: %s", s->name, s->j.tmp, strerror(err ? err : EIO));
			return -1;
		}
	}
	return 0;
}

static __attribute__((cold)) int ip_changed(struct inplace *s, uint64_t off)
{
	msg_err("%s: offset %" PRIu64 ": the stream changed while it was sorted; it is left as it was", s->name, off);
	return -1;
}

/* Walks the view's events in [from, to) (from a boundary with event index
 * idx) and keeps the last one whose clock is < m in *found. 1 if one was,
 * 0 if not, -1 after a message. */
static int view_last_below(struct inplace *s, struct mark from, uint64_t to, uint64_t m, struct mark *found)
{
	int r = 0;
	uint64_t off = from.off, idx = from.idx;
	/* With no sorted window in the way the stream is the view. */
	int direct = !s->np || s->p[s->np - 1].off + s->p[s->np - 1].len <= from.off;
	while (off < to) {
		size_t n = to - off < VIEW_CHUNK ? (size_t)(to - off) : VIEW_CHUNK;
		const uint8_t *v = buffered(s, off, n) ? at(s, off) : NULL;
		if (!direct || !v) {
			if (view_read(s, off, s->view, n) < 0)
				return -1;
			v = s->view;
		}
		size_t q = 0;
		while (q + EV_HEADER_SIZE <= n) {
			const uint8_t *e = v + q;
			if (ev_head_size(e[0]) > n - q)
				break;
			if (ev_clock(e) < m) {
				*found = (struct mark){ off + q, idx };
				r = 1;
			}
			q += ev_size(e);
			idx++;
			if (q > n)
				break;
		}
		if (!q) /* the events from a boundary end past the next one */
			return ip_changed(s, off);
		off += q;
	}
	return r;
}

/* ---- Boundaries to look back from ---- */

static void ring_push(struct inplace *s, uint64_t off, uint64_t idx)
{
	s->ring[s->nring % s->ring_cap] = (struct mark){ off, idx };
	s->nring++;
	if (s->nring - s->ring_lo > s->ring_cap)
		s->ring_lo = s->nring - s->ring_cap;
}

/* Boundaries inside a new patch no longer are. */
static void ring_cut(struct inplace *s, uint64_t off)
{
	while (s->nring > s->ring_lo && s->ring[(s->nring - 1) % s->ring_cap].off > off)
		s->nring--;
}

/* The start of the window of a region: the last event of the view before
 * the region's end with a clock < m, looking back from the OU[ (inner
 * events are all >= m). */
static int window_start(struct inplace *s, struct mark open, uint64_t open_end, uint64_t m, struct mark *j)
{
	uint64_t to = open_end; /* the OU[ included */
	uint64_t r = s->nring;
	while (r > s->ring_lo) {
		struct mark b = s->ring[(r - 1) % s->ring_cap];
		r--;
		if (b.off > open.off)
			continue;
		int f = view_last_below(s, b, to, m, j);
		if (f)
			return f;
		to = b.off;
		if (s->lookback && b.idx + s->lookback < open.idx)
			return 0; /* already out of reach */
	}
	return view_last_below(s, (struct mark){ STREAM_HEADER_SIZE, 0 }, to, m, j);
}

static void note_mem(struct inplace *s)
{
	size_t mem = 2 * s->wcap + 2 * s->kcap * sizeof(struct key) + s->pool_cap + s->pcap * sizeof(struct patch);
	if (mem > s->st->peak_mem)
		s->st->peak_mem = mem;
}

static int reserve_window(struct inplace *s, size_t bytes, size_t events)
{
	if (bytes > s->wcap) {
		free(s->win);
		free(s->tmp);
		s->win = malloc(bytes);
		s->tmp = malloc(bytes);
		s->wcap = s->win && s->tmp ? bytes : 0;
		if (!s->wcap)
			return ip_nomem(s, 2 * bytes);
	}
	if (events > s->kcap) {
		free(s->keys);
		free(s->keys2);
		s->keys = malloc(events * sizeof(*s->keys));
		s->keys2 = malloc(events * sizeof(*s->keys2));
		s->kcap = s->keys && s->keys2 ? events : 0;
		if (!s->kcap)
			return ip_nomem(s, 2 * events * sizeof(*s->keys));
	}
	note_mem(s);
	return 0;
}

/* Room for n more bytes in the pool. */
static int pool_reserve(struct inplace *s, size_t n)
{
	if (n <= s->pool_cap - s->pool_len)
		return 0;
	size_t cap = s->pool_cap ? s->pool_cap : 4096;
	while (cap - s->pool_len < n)
		cap *= 2;
	uint8_t *p = realloc(s->pool, cap);
	if (!p)
		return ip_nomem(s, cap);
	s->pool = p;
	s->pool_cap = cap;
	note_mem(s);
	return 0;
}

/* The sorted bytes of [a, k) (a <= j), in data, become a patch; patches it
 * covers go (their bytes are the pool's last ones). */
static int add_patch(struct inplace *s, struct mark a, struct mark k, const uint8_t *data)
{
	while (s->np && s->p[s->np - 1].off >= a.off) {
		struct patch *p = &s->p[--s->np];
		if (p->data != NO_DATA) {
			s->pmem -= p->len;
			s->pool_len = p->data;
		}
	}
	size_t len = (size_t)(k.off - a.off);
	if (pool_reserve(s, len) < 0)
		return -1;
	if (s->np == s->pcap) {
		size_t cap = s->pcap ? 2 * s->pcap : 64;
		struct patch *np = realloc(s->p, cap * sizeof(*np));
		if (!np)
			return ip_nomem(s, cap * sizeof(*np));
		s->p = np;
		s->pcap = cap;
	}
	memcpy(s->pool + s->pool_len, data, len);
	s->p[s->np++] = (struct patch){ a.off, len, a.idx, k.idx, s->pool_len, 0 };
	s->pool_len += len;
	s->pmem += len;
	ring_cut(s, a.off);
	ring_push(s, a.off, a.idx);
	return s->pmem <= s->spill ? 0 : spill_all(s, s->np - 1);
}

/* Sorts the view's events [j, k) (k: the OU]), stably by clock. */
static int sort_window_at(struct inplace *s, struct mark j, struct mark k)
{
	struct mark a = j; /* a patch that j cuts is taken whole */
	size_t i = s->np;
	while (i > 0 && s->p[i - 1].off + s->p[i - 1].len > j.off)
		i--;
	if (i < s->np && s->p[i].off < j.off)
		a = (struct mark){ s->p[i].off, s->p[i].idx };
	size_t bytes = (size_t)(k.off - a.off), events = (size_t)(k.off - j.off) / EV_HEADER_SIZE + 1;
	if (reserve_window(s, bytes, events) < 0 || view_read(s, a.off, s->win, bytes) < 0)
		return -1;
	size_t w0 = (size_t)(j.off - a.off), q = w0, n = 0;
	int sorted = 1;
	uint64_t prev = 0;
	for (; q < bytes; n++) {
		struct key *key = &s->keys[n];
		key->off = q;
		key->size = ev_size(s->win + q);
		key->clock = ev_clock(s->win + q);
		sorted &= key->clock >= prev;
		prev = key->clock;
		q += key->size;
	}
	if (n > s->st->max_window)
		s->st->max_window = n;
	if (sorted)
		return 0;
	key_sort(s->keys, s->keys2, n);
	memcpy(s->tmp, s->win, w0);
	q = w0;
	for (size_t t = 0; t < n; t++) {
		memcpy(s->tmp + q, s->win + s->keys[t].off, s->keys[t].size);
		q += s->keys[t].size;
	}
	s->st->moved++;
	s->st->changed = 1;
	return add_patch(s, a, k, s->tmp);
}

static int ip_lookback_error(struct inplace *s, struct mark open, struct mark k, uint64_t m)
{
	msg_err("%s: offset %" PRIu64 ": no event with a clock below %" PRIu64
		" among the %" PRIu64 " events before the region's OU] at offset %" PRIu64
		"; raise the look-back limit (-n) or drop it",
		s->name, open.off, m, s->lookback - 1, k.off);
	return -1;
}

/* The region opened at open closes at k (its OU]). */
/* With a look-back limit, a patch that ends at or before event lo, the
 * first in reach, is never read again: its bytes go to the journal and it
 * leaves memory, so memory follows the limit, not the stream. */
static int drop_unreachable(struct inplace *s, uint64_t lo)
{
	size_t d = 0;
	while (d < s->pdrop && d < s->np && s->p[d].end_idx <= lo)
		d++;
	if (d < s->pdrop)
		return 0;
	if (spill_all(s, d) < 0)
		return -1;
	s->st->dropped += d;
	s->np -= d;
	memmove(s->p, s->p + d, s->np * sizeof(*s->p));
	return 0;
}

static int close_region(struct inplace *s, struct mark open, uint64_t open_end, struct mark k, uint64_t m)
{
	uint64_t n = s->lookback, lo = n && k.idx >= n ? k.idx - n + 1 : 0;
	struct mark j;
	int f = window_start(s, open, open_end, m, &j);
	if (f < 0)
		return -1;
	if (!f || j.idx < lo) {
		if (lo > 0)
			return ip_lookback_error(s, open, k, m);
		j = (struct mark){ STREAM_HEADER_SIZE, 0 };
	}
	if (sort_window_at(s, j, k) < 0)
		return -1;
	return lo ? drop_unreachable(s, lo) : 0;
}

/* Whether the buffered event at off ends within the stream. */
static int whole_at(const struct inplace *s, uint64_t off)
{
	uint64_t avail = s->size - off;
	return avail >= EV_HEADER_SIZE && avail >= ev_head_size(*at(s, off)) && avail >= ev_size(at(s, off));
}

static int ip_cut_short(struct inplace *s, uint64_t off)
{
	uint64_t avail = s->size - off;
	if (avail >= EV_HEADER_SIZE && avail >= ev_head_size(*at(s, off)))
		msg_err("%s: offset %" PRIu64 ": event of %zu bytes cut short by the end of the stream",
			s->name, off, ev_size(at(s, off)));
	else
		msg_err("%s: offset %" PRIu64 ": incomplete event at the end of the stream (%" PRIu64 " bytes)",
			s->name, off, avail);
	return -1;
}

static int journal_replay(const char *path, const char *jpath, const char *name, const struct sort_opts *o,
			  int pending);

/* Whether the events from off on are whole, the one error a sort without
 * a look-back limit can still meet: -1 after the message the walk would
 * give. */
static int check_rest(struct inplace *s, uint64_t off)
{
	while (off < s->size) {
		if (follow(s, off) < 0)
			return -1;
		uint64_t n = 0;
		off = walk(s, off, UINT64_MAX, &n);
		if (off >= s->size)
			break;
		if (follow(s, off) < 0)
			return -1;
		if (!whole_at(s, off))
			return ip_cut_short(s, off);
		off += ev_size(at(s, off));
	}
	return 0;
}

/* The patches so far: to the journal, committed, and written in place
 * (once the rest of the stream is known to be whole, so that a sort that
 * fails leaves the stream as it was); the view is the stream again, so
 * memory stays bounded however many regions a stream has. off: where the
 * walk goes on. */
static int checkpoint(struct inplace *s, uint64_t off)
{
	if (!s->rest_checked && check_rest(s, off) < 0)
		return -1;
	s->rest_checked = 1;
	s->st->checkpoints++;
	if (spill_all(s, s->np) < 0)
		return -1;
	s->np = 0;
	if (journal_commit(s) < 0)
		return -1;
	close(s->j.fd);
	s->j.fd = -1;
	s->rlen = 0; /* the buffer holds the stream as it was */
	s->rbase = s->size;
	return journal_replay(s->path, s->j.path, s->name, s->o, 0);
}

enum { IP_SORTED, IP_OPEN, IP_INSIDE };

/* Walks the whole stream once, sorting each region as it closes. */
static int scan_stream(struct inplace *s)
{
	uint64_t off = STREAM_HEADER_SIZE, idx = 0, m = 0, open_end = 0;
	struct mark open = { 0, 0 };
	int state = IP_SORTED;
	ring_push(s, off, idx);
	while (off < s->size) {
		if (follow(s, off) < 0)
			return -1;
		if (state == IP_SORTED) {
			uint64_t before = idx;
			off = walk(s, off, s->skip, &idx);
			if (idx - before == s->skip) {
				ring_push(s, off, idx);
				continue;
			}
			if (off >= s->size)
				break;
			if (follow(s, off) < 0)
				return -1;
		}
		const uint8_t *e = at(s, off);
		if (!whole_at(s, off))
			return ip_cut_short(s, off);
		uint64_t c = ev_clock(e);
		struct mark here = { off, idx };
		off += ev_size(e);
		idx++;
		s->st->events = idx;
		int marker = e[1] == 'O' && e[2] == 'U' && (e[3] == '[' || e[3] == ']');
		if (!marker || e[3] == '[') {
			if (state == IP_SORTED && marker) {
				state = IP_OPEN;
				open = here;
				open_end = off;
				ring_push(s, here.off, here.idx);
			} else if (state == IP_OPEN) {
				state = IP_INSIDE;
				m = c;
			} else if (state == IP_INSIDE && c < m) {
				m = c;
			}
			continue;
		}
		if (state == IP_OPEN)
			s->st->empty++;
		if (state == IP_INSIDE) {
			s->st->regions++;
			if (close_region(s, open, open_end, here, m) < 0)
				return -1;
			if (!s->lookback && s->np >= s->pmax && checkpoint(s, off) < 0)
				return -1;
		}
		state = IP_SORTED;
	}
	s->st->events = idx;
	if (state != IP_SORTED)
		s->st->open_off = open.off;
	return 0;
}

/* ---- Writing the patches in place ---- */

/* Checks the journal j[0, jsize) whole (magic, trailer, checksum, stream
 * size) before any byte of it is written: 0 and its record count, or -1
 * after a message. */
static int journal_check(const uint8_t *j, uint64_t jsize, const char *jname, uint64_t size, uint64_t *records)
{
	if (jsize < JOURNAL_HEAD + JOURNAL_TAIL) {
		msg_err("%s: offset %" PRIu64 ": journal cut short; the stream is left as it is", jname, jsize);
		return -1;
	}
	uint64_t hdr[2], tail[3];
	memcpy(hdr, j, sizeof(hdr));
	memcpy(tail, j + jsize - JOURNAL_TAIL, sizeof(tail));
	if (memcmp(hdr, JOURNAL_MAGIC, 8) != 0) {
		msg_err("%s: offset 0: not a sort journal (bad magic); the stream is left as it is", jname);
		return -1;
	}
	if (tail[0] != JOURNAL_END || XXH64(j, (size_t)(jsize - 8), 0) != tail[2]) {
		msg_err("%s: offset %" PRIu64 ": journal damaged (bad checksum); the stream is left as it is",
			jname, jsize - 8);
		return -1;
	}
	if (hdr[1] != size) {
		msg_err("%s: offset 8: journal of a stream of %" PRIu64 " bytes, the stream has %" PRIu64
			"; the stream is left as it is", jname, hdr[1], size);
		return -1;
	}
	/* Every record in bounds before the first is written. */
	uint64_t end = jsize - JOURNAL_TAIL, off = JOURNAL_HEAD, n = 0;
	for (; off < end; n++) {
		uint64_t rec[2];
		if (end - off < 16)
			break;
		memcpy(rec, j + off, 16);
		if (rec[0] < STREAM_HEADER_SIZE || rec[0] > size || rec[1] > size - rec[0] || rec[1] > end - off - 16)
			break;
		off += 16 + rec[1];
	}
	if (off != end || n != tail[1]) {
		msg_err("%s: offset %" PRIu64 ": bad record; the stream is left as it is", jname, off);
		return -1;
	}
	*records = n;
	return 0;
}

/* Writes every record of the checked journal j into the stream fd, one
 * pwrite each, then syncs it. Not through a shared mapping: a write fault
 * per page, and write-protecting each page again for the writeback, cost
 * several times the copy (four times as much CPU under a shadow-paging
 * hypervisor). */
static int journal_apply(const uint8_t *j, uint64_t jsize, int fd, const char *name, const struct sort_opts *o)
{
	uint64_t end = jsize - JOURNAL_TAIL, off = JOURNAL_HEAD, done = 0;
	uint64_t unsent = UINT64_MAX; /* where the pages not yet sent to the disk start */
	int r = 0;
	while (off < end) {
		uint64_t rec[2];
		memcpy(rec, j + off, 16);
		if (file_pwrite_all(fd, j + off + 16, (size_t)rec[1], rec[0]) < 0) {
			msg_err("%s: offset %" PRIu64 ": cannot write a sorted window: %s", name, rec[0],
				strerror(errno));
			r = -1;
			break;
		}
		off += 16 + rec[1];
		/* the disk starts on the pages written, 8 MiB at a time, while the
		 * rest are written (not on the last page, which the next record
		 * may write again); smaller sends cost CPU */
		uint64_t b = rec[0] & ~(uint64_t)4095;
		if (b < unsent)
			unsent = b;
		if (b > unsent + WRITEBACK_CHUNK) {
			sync_file_range(fd, (off_t)unsent, (off_t)(b - unsent), SYNC_FILE_RANGE_WRITE);
			unsent = b;
		}
		if (++done == 1 && o && o->hook)
			o->hook("writing");
	}
	if (r == 0 && fdatasync(fd) < 0) {
		msg_err("%s: cannot sync: %s", name, strerror(errno));
		r = -1;
	}
	if (r == 0 && o && o->hook)
		o->hook("written");
	return r;
}

/* A journal left beside path by a sort that did not finish (pending), or
 * the one just committed: checked, written into the stream, removed. 0
 * when there was none or it is done now. */
static int journal_replay(const char *path, const char *jpath, const char *name, const struct sort_opts *o, int pending)
{
	int jfd = open(jpath, O_RDONLY | O_CLOEXEC);
	if (jfd < 0) {
		if (errno == ENOENT)
			return 0;
		msg_err("%s: cannot open the pending journal %s: %s", name, jpath, strerror(errno));
		return -1;
	}
	int r = -1, fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat sb, jsb;
	uint64_t records = 0;
	void *j = MAP_FAILED;
	if (fd < 0 || fstat(fd, &sb) < 0 || fstat(jfd, &jsb) < 0) {
		msg_err("%s: cannot open to write the sorted windows of %s: %s", name, jpath, strerror(errno));
	} else if (jsb.st_size > 0 &&
		   (j = mmap(NULL, (size_t)jsb.st_size, PROT_READ, MAP_PRIVATE, jfd, 0)) == MAP_FAILED) {
		msg_err("%s: cannot map: %s", jpath, strerror(errno));
	} else if (journal_check(j == MAP_FAILED ? (const uint8_t *)"" : j, (uint64_t)jsb.st_size, jpath,
				 (uint64_t)sb.st_size, &records) == 0 &&
		   journal_apply(j, (uint64_t)jsb.st_size, fd, name, o) == 0) {
		if (unlink(jpath) < 0)
			msg_err("%s: cannot remove %s: %s", name, jpath, strerror(errno));
		else
			r = 0;
	}
	if (r == 0 && pending)
		msg_info("%s: finished the interrupted sort (%" PRIu64 " windows from %s)", name, records, jpath);
	if (j != MAP_FAILED)
		munmap(j, (size_t)jsb.st_size);
	if (fd >= 0)
		close(fd);
	close(jfd);
	return r;
}

static char *suffixed(const char *path, const char *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);
	char *p = malloc(n + k + 1);
	if (p) {
		memcpy(p, path, n);
		memcpy(p + n, suffix, k + 1);
	}
	return p;
}

static void inplace_free(struct inplace *s)
{
	free(s->pool);
	free(s->p);
	free(s->win);
	free(s->tmp);
	free(s->keys);
	free(s->keys2);
	free(s->j.buf);
	if (s->j.fd >= 0)
		close(s->j.fd);
	free(s->rbuf);
	if (s->fd >= 0)
		close(s->fd);
}

/* Scans and sorts; the patches end in the journal, committed. 1 when
 * there is something to write, 0 when not, -1 after a message. */
static int sort_to_journal(struct inplace *s)
{
	struct stat sb;
	s->fd = open_stream(s->path, s->name, &sb);
	if (s->fd < 0)
		return -1;
	s->size = (uint64_t)sb.st_size;
	if (!(s->rbuf = malloc(s->behind + s->ahead)))
		return ip_nomem(s, s->behind + s->ahead);
	s->rbase = s->size; /* nothing buffered yet */
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (scan_stream(s) < 0)
		return -1;
	if (!s->np) /* nothing sorted, or all written at checkpoints */
		return 0;
	if (spill_all(s, s->np) < 0)
		return -1;
	return journal_commit(s) < 0 ? -1 : 1;
}

/* One sort of a stream at a time, and no reader while it is rewritten: two
 * sorts would share its journal (the second removing the first's half
 * written one), and a reader could read a window half rewritten. The
 * exclusive lock (held until the descriptor closes) makes the second sort
 * wait, then find the stream sorted; readers hold a shared one
 * (byte_src_file, pack). -1 when the stream cannot be opened (the sort
 * then says why). */
static int lock_stream(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		lock_file(fd, LOCK_EX, name, "another ovni command is reading or sorting it");
	return fd;
}

int sort_file(const char *path, const struct sort_opts *o, struct sort_stats *st)
{
	const char *name = o->name ? o->name : path;
	memset(st, 0, sizeof(*st));
	st->open_off = UINT64_MAX;
	/* A symlinked stream is sorted where it really lives. */
	char *real = realpath(path, NULL);
	if (!real) {
		msg_err("%s: %s", name, strerror(errno));
		return -1;
	}
	int lock = lock_stream(real, name);
	struct inplace *s = calloc(1, sizeof(*s));
	char *jpath = suffixed(real, SORT_JOURNAL_SUFFIX), *jtmp = suffixed(real, SORT_JOURNAL_SUFFIX SORT_TMP_SUFFIX);
	int r = -1;
	if (!s || !jpath || !jtmp) {
		msg_err("%s: out of memory", name);
		goto out;
	}
	s->name = name;
	s->path = real;
	s->fd = -1;
	s->lookback = o->lookback;
	s->st = st;
	s->o = o;
	s->j.fd = -1;
	s->j.path = jpath;
	s->j.tmp = jtmp;
	s->ring_cap = o->mem ? 2 + o->mem / 256 % (RING - 2) : RING;
	s->skip = o->mem ? 1 + o->mem % 5 : SKIP_EVENTS;
	s->spill = o->mem ? o->mem : SPILL_MEM;
	s->pmax = o->mem ? 1 + o->mem / 300 % 3 : PATCH_MAX;
	s->pdrop = o->mem ? 1 + o->mem / 1000 : PATCH_DROP;
	s->ahead = o->mem ? 4 * READ_SLACK + o->mem % 700 : READ_AHEAD;
	s->behind = o->mem ? o->mem % 300 : READ_BEHIND;
	/* A journal not yet renamed: the stream was never touched. */
	unlink(jtmp);
	if (journal_replay(real, jpath, name, o, 1) == 0) {
		r = sort_to_journal(s);
		if (r == 1)
			r = journal_replay(real, jpath, name, o, 0);
		else if (r < 0 && s->j.fd >= 0)
			unlink(jtmp);
	}
	inplace_free(s);
out:
	free(s);
	free(jpath);
	free(jtmp);
	free(real);
	if (lock >= 0)
		close(lock);
	return r;
}

int sort_check_file(const char *path, const char *name, uint64_t *back)
{
	struct stat sb;
	int fd = open_stream(path, name, &sb);
	if (fd < 0)
		return -1;
	lock_for_reading(fd, name);
	static uint8_t buf[1 << 20];
	uint64_t size = (uint64_t)sb.st_size, off = STREAM_HEADER_SIZE, prev = 0;
	size_t len = 0; /* buf[0, len) holds the stream from off */
	int r = 1;
	while (r == 1 && off + len < size) {
		ssize_t n = pread(fd, buf + len, sizeof(buf) - len, (off_t)(off + len));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			msg_err("%s: offset %" PRIu64 ": read: %s", name, off + len,
				n ? strerror(errno) : "the file shrank");
			r = -1;
			break;
		}
		len += (size_t)n;
		size_t p = 0;
		while (len - p >= EV_HEADER_SIZE) {
			size_t sz = len - p < ev_head_size(buf[p]) ? 0 : ev_size(buf + p);
			if (!sz)
				break;
			if (off + p + sz > size) {
				msg_err("%s: offset %" PRIu64 ": event of %zu bytes cut short by the end of the stream",
					name, off + p, sz);
				r = -1;
				break;
			}
			uint64_t c = ev_clock(buf + p);
			if (c < prev) {
				*back = off + p;
				r = 0;
				break;
			}
			prev = c;
			p += sz;
			if (p > len) /* the rest of a big jumbo is not needed */
				break;
		}
		if (p > len) {
			off += p;
			len = 0;
			continue;
		}
		memmove(buf, buf + p, len - p);
		len -= p;
		off += p;
	}
	if (r == 1 && len) {
		msg_err("%s: offset %" PRIu64 ": incomplete event at the end of the stream (%zu bytes)", name, off, len);
		r = -1;
	}
	close(fd);
	return r;
}
