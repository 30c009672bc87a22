/* The region sort engine (see sort.h): streaming, for the emulator and sort_mem. */
#include "sort/sort.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"
#include "sort/keys.h"
#include "trace/stream.h"

#define DEFAULT_MEM (1u << 20)
#define TAIL_EVENTS 1024 /* kept after a flush: most regions reach back less */
#define BLOCK_EVENTS 1024 /* written events are summarised by runs of this many */
#define MAX_BLOCKS 4096 /* then neighbours merge: bounded memory, coarser search */
#define SCAN_CHUNK (64u * 1024)

enum { ST_SORTED, ST_OPEN, ST_INSIDE };

/* A run of events already handed to io->write. */
struct block {
	uint64_t off, first, count, min;
};



struct sorter {
	const struct sort_io *io;
	const struct sort_opts *o;
	struct sort_stats *st;
	const char *name;
	int write_all;
	uint8_t *buf; /* stream bytes [base, base + len) */
	size_t cap, len;
	size_t base_cap; /* the size asked for; a far window grows it for a while */
	size_t dec; /* buf[0, dec) holds whole events, indexed in ev */
	uint64_t base;
	uint64_t start; /* offset of the stream's first event */
	uint64_t first; /* stream index of the event at buf[0] */
	size_t *ev; /* buf offset of each event */
	size_t nev, evcap;
	int state;
	size_t open; /* ev index of the OU[ of the current region */
	uint64_t min; /* lowest clock among the region's inner events */
	struct block *blk;
	size_t nblk, blkcap, max_blocks;
	size_t tail, block_events; /* TAIL_EVENTS, BLOCK_EVENTS, less for tiny buffers */
	struct key *keys, *keys2;
	size_t keycap;
	uint8_t *tmp;
	size_t tmpcap;
	uint8_t *chunk;
};

static size_t clamp(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Size of the event at p, or 0 while avail does not tell it yet. */
static inline size_t size_at(const uint8_t *p, size_t avail)
{
	return avail < ev_head_size(p[0]) ? 0 : ev_size(p);
}

static inline uint64_t clock_at(const struct sorter *s, size_t i)
{
	return ev_clock(s->buf + s->ev[i]);
}

static void note_mem(struct sorter *s)
{
	size_t m = s->cap + s->evcap * sizeof(*s->ev) + 2 * s->keycap * sizeof(struct key) +
		   s->tmpcap + s->blkcap * sizeof(struct block) + (s->chunk ? SCAN_CHUNK : 0);
	if (m > s->st->peak_mem)
		s->st->peak_mem = m;
}

static int no_memory(struct sorter *s, size_t n)
{
	msg_err("%s: offset %" PRIu64 ": out of memory for %zu bytes of look-back", s->name,
		s->base + s->dec, n);
	return -1;
}

/* Makes the buffer hold at least want bytes. */
static int grow(struct sorter *s, size_t want)
{
	size_t cap = s->cap ? s->cap : 64;
	while (cap < want) {
		if (cap > SIZE_MAX / 4)
			return no_memory(s, want);
		cap *= 2;
	}
	if (cap == s->cap && s->buf)
		return 0;
	uint8_t *b = realloc(s->buf, cap);
	if (!b)
		return no_memory(s, cap);
	s->buf = b;
	size_t evcap = cap / EV_HEADER_SIZE + 1;
	size_t *ev = realloc(s->ev, evcap * sizeof(*ev));
	if (!ev)
		return no_memory(s, evcap * sizeof(*ev));
	s->ev = ev;
	s->cap = cap;
	s->evcap = evcap;
	note_mem(s);
	return 0;
}

static int reserve_keys(struct sorter *s, size_t n, size_t bytes)
{
	if (n > s->keycap) {
		struct key *k = realloc(s->keys, n * sizeof(*k));
		if (k)
			s->keys = k;
		struct key *k2 = k ? realloc(s->keys2, n * sizeof(*k2)) : NULL;
		if (!k2)
			return no_memory(s, n * sizeof(*k));
		s->keys2 = k2;
		s->keycap = n;
	}
	if (bytes > s->tmpcap) {
		uint8_t *t = realloc(s->tmp, bytes);
		if (!t)
			return no_memory(s, bytes);
		s->tmp = t;
		s->tmpcap = bytes;
	}
	note_mem(s);
	return 0;
}

/* Puts events [j, k) in clock order; event k (the OU]) bounds the last size.
 * The window is sorted up to its first backward clock at i: only [i, k)
 * needs sorting, then it merges with [j, i) from the back, in place. */
static int sort_window(struct sorter *s, size_t j, size_t k)
{
	size_t i = j + 1;
	for (uint64_t prev = clock_at(s, j); i < k; i++) {
		uint64_t c = clock_at(s, i);
		if (c < prev)
			break;
		prev = c;
	}
	if (i >= k)
		return 0;
	size_t m = k - i;
	if (reserve_keys(s, m, s->ev[k] - s->ev[i]) < 0)
		return -1;
	size_t o = 0;
	for (size_t t = 0; t < m; t++) {
		struct key *key = &s->keys[t];
		size_t off = s->ev[i + t];
		key->size = s->ev[i + t + 1] - off;
		key->clock = ev_clock(s->buf + off);
		key->off = o;
		memcpy(s->tmp + o, s->buf + off, key->size);
		o += key->size;
	}
	key_sort(s->keys, s->keys2, m);
	/* Slot t takes the last of what is left; prefix events only move right,
	 * over bytes already taken, so [j, p) is intact until read. */
	size_t t = k, p = i, q = m, pos = s->ev[k];
	while (q > 0) {
		const struct key *kq = &s->keys[q - 1];
		size_t run = p;
		while (run > j && clock_at(s, run - 1) > kq->clock)
			run--;
		if (run < p) {
			size_t len = s->ev[p] - s->ev[run], shift = pos - len - s->ev[run];
			memmove(s->buf + pos - len, s->buf + s->ev[run], len);
			for (size_t x = p; x-- > run;)
				s->ev[--t] = s->ev[x] + shift;
			pos -= len;
			p = run;
		}
		pos -= kq->size;
		memcpy(s->buf + pos, s->tmp + kq->off, kq->size);
		s->ev[--t] = pos;
		q--;
	}
	s->st->moved++;
	s->st->changed = 1;
	if (k - j > s->st->max_window)
		s->st->max_window = k - j;
	return 0;
}

static int push_block(struct sorter *s, struct block b)
{
	if (s->nblk == s->blkcap && s->blkcap < s->max_blocks) {
		size_t cap = s->blkcap ? 2 * s->blkcap : 16;
		cap = cap < s->max_blocks ? cap : s->max_blocks;
		struct block *nb = realloc(s->blk, cap * sizeof(*nb));
		if (!nb)
			return no_memory(s, cap * sizeof(*nb));
		s->blk = nb;
		s->blkcap = cap;
	}
	if (s->nblk == s->max_blocks) {
		/* Halve the count: pairs become one run. */
		size_t n = 0;
		for (size_t i = 0; i < s->nblk; i += 2, n++) {
			struct block m = s->blk[i];
			if (i + 1 < s->nblk) {
				m.count += s->blk[i + 1].count;
				if (s->blk[i + 1].min < m.min)
					m.min = s->blk[i + 1].min;
			}
			s->blk[n] = m;
		}
		s->nblk = n;
	}
	s->blk[s->nblk++] = b;
	return 0;
}

/* Summarises events [0, n) before they leave memory. */
static int add_blocks(struct sorter *s, size_t n)
{
	for (size_t t = 0; t < n; t += s->block_events) {
		size_t c = n - t < s->block_events ? n - t : s->block_events;
		uint64_t min = UINT64_MAX;
		for (size_t i = t; i < t + c; i++) {
			uint64_t clk = clock_at(s, i);
			if (clk < min)
				min = clk;
		}
		if (push_block(s, (struct block){ s->base + s->ev[t], s->first + t, c, min }) < 0)
			return -1;
	}
	return 0;
}

/* Hands events [0, n) to io->write (when needed) and forgets them. */
static int flush(struct sorter *s, size_t n)
{
	size_t bytes = n < s->nev ? s->ev[n] : s->dec;
	if (bytes == 0)
		return 0;
	if ((s->st->changed || s->write_all) &&
	    s->io->write(s->io->ctx, s->base, s->buf, bytes) < 0)
		return -1;
	if (!(s->o->flags & SORT_FINAL) && add_blocks(s, n) < 0)
		return -1;
	memmove(s->buf, s->buf + bytes, s->len - bytes);
	for (size_t i = n; i < s->nev; i++)
		s->ev[i - n] = s->ev[i] - bytes;
	s->nev -= n;
	s->len -= bytes;
	s->dec -= bytes;
	s->base += bytes;
	s->first += n;
	if (s->state != ST_SORTED)
		s->open -= n;
	return 0;
}

/* First event that must stay in memory. */
static size_t keep_from(const struct sorter *s)
{
	size_t keep = s->nev > s->tail ? s->nev - s->tail : 0;
	if (s->state != ST_SORTED && s->open < keep)
		keep = s->open;
	if (s->o->flags & SORT_FINAL) {
		/* The next OU] is event first+nev at the earliest. */
		uint64_t n = s->o->lookback;
		size_t reach = !n ? 0 : s->nev + 1 >= n ? s->nev + 1 - n : 0;
		if (reach < keep)
			keep = reach;
	}
	return keep;
}

/* The buffer is full: write out what no region needs, grow if still crowded. */
static int make_room(struct sorter *s)
{
	size_t keep = keep_from(s);
	if (keep && flush(s, keep) < 0)
		return -1;
	size_t want = s->len > s->cap / 2 ? 2 * s->cap : s->cap;
	size_t avail = s->len - s->dec;
	size_t need = 16;
	if (avail >= 16 || (avail >= EV_HEADER_SIZE && !(s->buf[s->dec] & EV_FLAG_JUMBO)))
		need = size_at(s->buf + s->dec, avail);
	if (s->dec + need + 1 > want)
		want = s->dec + need + 1;
	return grow(s, want);
}

/* Brings events [gj, first) back from the output; *k follows the shift. */
static int rewind_to(struct sorter *s, uint64_t gj, uint64_t oj, size_t *k)
{
	if (s->base - oj > SIZE_MAX / 2)
		return no_memory(s, SIZE_MAX);
	size_t r = (size_t)(s->base - oj), cnt = (size_t)(s->first - gj);
	if (grow(s, s->len + r) < 0)
		return -1;
	memmove(s->buf + r, s->buf, s->len);
	memmove(s->ev + cnt, s->ev, s->nev * sizeof(*s->ev));
	for (size_t i = cnt; i < cnt + s->nev; i++)
		s->ev[i] += r;
	if (s->io->reread(s->io->ctx, oj, s->buf, r) < 0)
		return -1;
	size_t p = 0, i = 0;
	while (i < cnt && r - p >= EV_HEADER_SIZE) {
		size_t sz = size_at(s->buf + p, r - p);
		if (!sz || sz > r - p)
			break;
		s->ev[i++] = p;
		p += sz;
	}
	if (p != r || i != cnt) {
		msg_err("%s: offset %" PRIu64 ": events read back do not match those written", s->name, oj);
		return -1;
	}
	s->base = oj;
	s->first = gj;
	s->nev += cnt;
	s->len += r;
	s->dec += r;
	s->open += cnt;
	*k += cnt;
	/* The runs from gj on are in memory again. */
	while (s->nblk && s->blk[s->nblk - 1].first >= gj)
		s->nblk--;
	return 0;
}

/* Last event at or after stream index lo with a clock below m in written
 * run b. 1 = found (*gj, *oj; *low = lowest clock of the run before it). */
static int run_find(struct sorter *s, size_t b, uint64_t m, uint64_t lo, uint64_t *gj,
		    uint64_t *oj, uint64_t *low)
{
	const struct block *bl = &s->blk[b];
	uint64_t end = b + 1 < s->nblk ? s->blk[b + 1].off : s->base;
	uint64_t pos = bl->off, idx = bl->first, min = UINT64_MAX;
	int found = 0;
	if (!s->chunk && !(s->chunk = malloc(SCAN_CHUNK)))
		return no_memory(s, SCAN_CHUNK);
	while (pos < end) {
		size_t n = end - pos < SCAN_CHUNK ? (size_t)(end - pos) : SCAN_CHUNK;
		if (s->io->reread(s->io->ctx, pos, s->chunk, n) < 0)
			return -1;
		size_t p = 0;
		while (n - p >= EV_HEADER_SIZE) {
			size_t sz = size_at(s->chunk + p, n - p);
			if (!sz)
				break;
			uint64_t c = ev_clock(s->chunk + p);
			if (idx >= lo && c < m) {
				found = 1;
				*gj = idx;
				*oj = pos + p;
				*low = min;
			}
			if (c < min)
				min = c;
			idx++;
			p += sz;
		}
		if (!p)
			break;
		pos += p;
	}
	if (pos != end || idx != bl->first + bl->count) {
		msg_err("%s: offset %" PRIu64 ": events read back do not match those written", s->name, bl->off);
		return -1;
	}
	return found;
}

/* Looks for the window start among written events; rewinds to it. */
static int find_written(struct sorter *s, uint64_t m, uint64_t lo, size_t *k)
{
	for (size_t b = s->nblk; b-- > 0;) {
		struct block *bl = &s->blk[b];
		if (bl->first + bl->count <= lo)
			return 0;
		if (bl->min >= m)
			continue;
		uint64_t gj = 0, oj = 0, low = UINT64_MAX;
		int r = run_find(s, b, m, lo, &gj, &oj, &low);
		if (r <= 0)
			return r;
		if (rewind_to(s, gj, oj, k) < 0)
			return -1;
		if (s->nblk && s->nblk - 1 == b) {
			bl->count = gj - bl->first;
			bl->min = low;
		}
		return 1;
	}
	return 0;
}

static int lookback_error(struct sorter *s, uint64_t m, size_t k)
{
	msg_err("%s: offset %" PRIu64 ": no event with a clock below %" PRIu64
		" among the %" PRIu64 " events before the region's OU] at offset %" PRIu64
		"; raise the look-back limit (-n) or drop it",
		s->name, s->base + s->ev[s->open], m, s->o->lookback - 1, s->base + s->ev[k]);
	return -1;
}

/* After a far window: write it out and give the memory back, so that
 * memory follows the largest window and not the number of them. */
static int shrink(struct sorter *s)
{
	if (s->keycap > s->base_cap / 16 || s->tmpcap > s->base_cap) {
		free(s->keys);
		free(s->keys2);
		free(s->tmp);
		s->keys = s->keys2 = NULL;
		s->tmp = NULL;
		s->keycap = s->tmpcap = 0;
	}
	if (s->cap <= s->base_cap)
		return 0;
	size_t keep = keep_from(s);
	if (keep && flush(s, keep) < 0)
		return -1;
	size_t cap = s->cap;
	while (cap > s->base_cap && s->len <= cap / 4)
		cap /= 2;
	if (cap == s->cap)
		return 0;
	uint8_t *b = realloc(s->buf, cap);
	size_t evcap = cap / EV_HEADER_SIZE + 1;
	size_t *ev = b ? realloc(s->ev, evcap * sizeof(*ev)) : NULL;
	if (b)
		s->buf = b;
	if (ev) {
		s->ev = ev;
		s->cap = cap;
		s->evcap = evcap;
	}
	return 0;
}

/* The region that started at s->open ends at event k (its OU]). */
static int sort_region(struct sorter *s, size_t k)
{
	uint64_t m = s->min, gk = s->first + k, n = s->o->lookback;
	uint64_t lo = n && gk >= n ? gk - n + 1 : 0;
	/* Inner events are all >= m: the walk starts at the OU[. */
	for (size_t i = s->open + 1; i-- > 0;) {
		if (s->first + i < lo)
			break;
		if (clock_at(s, i) < m)
			return sort_window(s, i, k);
	}
	if (s->first > lo && !(s->o->flags & SORT_FINAL)) {
		int r = find_written(s, m, lo, &k);
		if (r < 0)
			return -1;
		if (r)
			return sort_window(s, 0, k);
	}
	if (lo > 0)
		return lookback_error(s, m, k);
	/* Nothing is older than m: the window starts with the stream. */
	if (s->first > 0 && rewind_to(s, 0, s->start, &k) < 0)
		return -1;
	return sort_window(s, 0, k);
}

static int on_marker(struct sorter *s, size_t i, uint8_t c)
{
	if (c == '[') {
		if (s->state == ST_SORTED) {
			s->state = ST_OPEN;
			s->open = i;
		} else if (s->state == ST_OPEN) {
			s->state = ST_INSIDE;
			s->min = clock_at(s, i);
		} else if (clock_at(s, i) < s->min) {
			s->min = clock_at(s, i);
		}
		return 0;
	}
	if (s->state == ST_SORTED)
		return 0;
	if (s->state == ST_OPEN) {
		s->st->empty++;
		s->state = ST_SORTED;
		return 0;
	}
	s->state = ST_SORTED;
	s->st->regions++;
	if (sort_region(s, i) < 0)
		return -1;
	int big = s->cap > s->base_cap || s->keycap > s->base_cap / 16 || s->tmpcap > s->base_cap;
	return big ? shrink(s) : 0;
}

/* Indexes the whole events read so far and runs the state machine. */
static int scan(struct sorter *s)
{
	while (s->len - s->dec >= EV_HEADER_SIZE) {
		const uint8_t *p = s->buf + s->dec;
		size_t avail = s->len - s->dec;
		size_t sz = size_at(p, avail);
		if (!sz || sz > avail)
			break;
		size_t i = s->nev++;
		s->ev[i] = s->dec;
		s->dec += sz;
		s->st->events++;
		if (p[1] == 'O' && p[2] == 'U' && (p[3] == '[' || p[3] == ']')) {
			if (on_marker(s, i, p[3]) < 0)
				return -1;
		} else if (s->state == ST_INSIDE) {
			uint64_t c = ev_clock(p);
			if (c < s->min)
				s->min = c;
		} else if (s->state == ST_OPEN) {
			s->state = ST_INSIDE;
			s->min = ev_clock(p);
		}
	}
	return 0;
}

static int cut_short(struct sorter *s)
{
	uint64_t off = s->base + s->dec;
	size_t avail = s->len - s->dec;
	size_t sz = avail >= EV_HEADER_SIZE ? size_at(s->buf + s->dec, avail) : 0;
	if (sz)
		msg_err("%s: offset %" PRIu64 ": event of %zu bytes cut short by the end of the stream",
			s->name, off, sz);
	else
		msg_err("%s: offset %" PRIu64 ": incomplete event at the end of the stream (%zu bytes)",
			s->name, off, avail);
	return -1;
}

/* A pending event that cannot fit in the input is reported at once. */
static int past_end(struct sorter *s)
{
	size_t avail = s->len - s->dec;
	if (s->io->size == UINT64_MAX || avail < EV_HEADER_SIZE)
		return 0;
	size_t sz = size_at(s->buf + s->dec, avail);
	if (!sz || s->base + s->dec + sz <= s->io->size)
		return 0;
	return cut_short(s);
}

static void sorter_free(struct sorter *s)
{
	free(s->buf);
	free(s->ev);
	free(s->blk);
	free(s->keys);
	free(s->keys2);
	free(s->tmp);
	free(s->chunk);
}

static int run(struct sorter *s)
{
	for (;;) {
		if (s->len == s->cap && make_room(s) < 0)
			return -1;
		ssize_t n = s->io->read(s->io->ctx, s->buf + s->len, s->cap - s->len);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		s->len += (size_t)n;
		if (scan(s) < 0 || past_end(s) < 0)
			return -1;
	}
	if (s->dec != s->len)
		return cut_short(s);
	if (s->state != ST_SORTED)
		s->st->open_off = s->base + s->ev[s->open];
	if (s->st->changed || s->write_all)
		return flush(s, s->nev);
	return 0;
}

int sort_events(const struct sort_io *io, uint64_t start, const struct sort_opts *o, struct sort_stats *st)
{
	struct sorter s = { .io = io, .o = o, .st = st, .name = o->name ? o->name : "stream" };
	memset(st, 0, sizeof(*st));
	st->open_off = UINT64_MAX;
	s.base = s.start = start;
	s.write_all = !!(o->flags & (SORT_WRITE_ALL | SORT_FINAL));
	size_t mem = o->mem ? o->mem : DEFAULT_MEM;
	s.tail = clamp(mem / 256, 0, TAIL_EVENTS);
	s.block_events = clamp(mem / 256, 1, BLOCK_EVENTS);
	s.max_blocks = clamp(mem / 16, 4, MAX_BLOCKS);
	int r = -1;
	if (grow(&s, io->size - start < mem ? (size_t)(io->size - start) + 16 : mem) == 0) {
		s.base_cap = s.cap;
		r = run(&s);
	}
	sorter_free(&s);
	return r;
}

/* In-memory input and output: writes land on bytes already read. */
struct mem_io {
	uint8_t *buf;
	size_t len, pos;
	uint64_t start;
};

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
	struct mem_io *m = ctx;
	if (n > m->len - m->pos)
		n = m->len - m->pos;
	if (n > SSIZE_MAX)
		n = SSIZE_MAX;
	memcpy(buf, m->buf + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static int mem_write(void *ctx, uint64_t off, const void *buf, size_t n)
{
	struct mem_io *m = ctx;
	memcpy(m->buf + (off - m->start), buf, n);
	return 0;
}

static int mem_reread(void *ctx, uint64_t off, void *buf, size_t n)
{
	struct mem_io *m = ctx;
	memcpy(buf, m->buf + (off - m->start), n);
	return 0;
}

int sort_mem(uint8_t *buf, size_t len, uint64_t start, const struct sort_opts *o, struct sort_stats *st)
{
	struct mem_io m = { buf, len, 0, start };
	struct sort_io io = { &m, start + len, mem_read, mem_write, mem_reread };
	struct sort_opts mo = *o;
	mo.flags &= ~(SORT_WRITE_ALL | SORT_FINAL);
	return sort_events(&io, start, &mo, st);
}

