/* K-way merge of streams by clock, with the reference's tie-break: a binary
 * min-heap on the stream's current clock (ties never move; a stream is
 * re-inserted at the start of the next step, just before the pop). Byte-
 * identical Paraver output depends on playing events in exactly this order
 * (spec emu.md 2.4). */
#ifndef OVNI_PLAYER_H
#define OVNI_PLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/stream.h"

struct player_ev {
	const struct ev *ev; /* the event, valid until the next player_next */
	size_t stream; /* index of the stream (as given to player_init) */
	int64_t dclock; /* clock + the stream's offset, from that of the first event played */
};

struct player_node {
	int64_t sclock; /* the key: current clock of the stream, offset applied */
	size_t stream;
};

struct player {
	struct stream_reader *readers; /* not owned */
	size_t n;
	int64_t *offsets; /* per stream (zeros when none are given), owned */
	struct ev *cur; /* current event of every stream (size 0: none yet) */
	struct player_node *heap; /* 1-based: heap[1..size] */
	size_t size;
	long long pending; /* stream to advance and re-insert at the next step, -1 if none */
	int64_t first_sclock; /* of the first event, known once every stream is read */
	int64_t last_sclock;
	unsigned flags;
	uint64_t nbackwards; /* global backward jumps seen (PLAYER_UNSORTED) */
};

#define PLAYER_UNSORTED 1u /* a global backwards jump is reported and playing goes on */

/* Reads the first event of every stream. -1 on error (reported). */
int player_init(struct player *p, struct stream_reader *readers, size_t n, const int64_t *offsets, unsigned flags);
/* The first event of stream i as loaded by player_init (NULL if the stream
 * has no events); valid until player_next advances stream i. */
const struct ev *player_first(const struct player *p, size_t i);
void player_free(struct player *p);

/* Slow path of player_next: a global backward jump (-1 unless
 * PLAYER_UNSORTED). */
int player_backwards(struct player *p, const struct player_node *node);

static inline int64_t player_sclock(const struct player *p, size_t s)
{
	return (int64_t)(p->cur[s].clock + (uint64_t)p->offsets[s]); /* wraps instead of overflowing */
}

/* Insert at size+1 and bubble up while strictly smaller than the parent. */
static inline void player_heap_push(struct player *p, int64_t sclock, size_t s)
{
	struct player_node *h = p->heap;
	size_t k = ++p->size;
	while (k > 1 && sclock < h[k / 2].sclock) {
		h[k] = h[k / 2];
		k /= 2;
	}
	h[k].sclock = sclock;
	h[k].stream = s;
}

/* Sifts last down from the root of h[1..n] (what a pop does after taking
 * the root); the root must have been read already. */
static inline void player_heap_sift(struct player_node *h, size_t n, struct player_node last)
{
	size_t k = 1;
	for (;;) {
		size_t m = 2 * k;
		if (m > n)
			break;
		m += m < n && h[m + 1].sclock < h[m].sclock;
		if (!(h[m].sclock < last.sclock))
			break;
		h[k] = h[m];
		k = m;
	}
	h[k] = last;
}

/* Take the root, move the last node there and sift it down: it swaps with
 * the left child if strictly smaller, or with the right child if strictly
 * smaller than both. Equal keys never move. Written as "the smaller child
 * (left on ties), if strictly smaller than the node", which is the same. */
static inline struct player_node player_heap_pop(struct player *p)
{
	struct player_node *h = p->heap;
	struct player_node top = h[1];
	size_t n = --p->size;
	if (n > 0)
		player_heap_sift(h, n, h[n + 1]);
	return top;
}

/* What player_heap_push(x) then player_heap_pop() give, on the n nodes of
 * h (the count is the same after). When x does not rise above its parent
 * it stays where the push puts it, is the node the pop moves to the root,
 * and only sifts down: one pass. */
static inline struct player_node player_heap_pushpop(struct player_node *h, size_t n, int64_t sclock, size_t s)
{
	struct player_node x = { sclock, s };
	struct player_node top;
	if (n == 0)
		return x;
	size_t k = n + 1;
	if (sclock < h[k / 2].sclock) { /* the push: x rises */
		do {
			h[k] = h[k / 2];
			k /= 2;
		} while (k > 1 && sclock < h[k / 2].sclock);
		h[k] = x;
		x = h[n + 1]; /* the pop moves the last node to the root */
	}
	top = h[1];
	player_heap_sift(h, n, x);
	return top;
}

/* Whether push(x) then pop() leave the heap as it was when x is below the
 * root: x rises to the root and leaves, and the node pulled up from the
 * end must sift back down the same path, which takes strict orders along
 * it (a tie would swap nodes, and ties decide the order of later pops). */
static inline int player_heap_keeps(const struct player *p)
{
	const struct player_node *h = p->heap;
	size_t q = (p->size + 1) / 2; /* the parent of the slot a push fills */
	if (q <= 1)
		return 1;
	if (!(h[q / 2].sclock < h[q].sclock))
		return 0;
	for (size_t c = q; c > 1; c /= 2)
		if ((c & 1) && !(h[c / 2].sclock < h[c - 1].sclock))
			return 0;
	return 1;
}

/* 1 = *out holds the next event, 0 = all streams ended, -1 = error
 * (reported). Inline, as the loops of emu, dump and top call it per event:
 * the event stays where the reader decoded it (out->ev points there), no
 * copy. */
static inline int player_next(struct player *p, struct player_ev *out)
{
	struct player_node node;
	if (__builtin_expect(p->pending >= 0, 1)) {
		size_t s = (size_t)p->pending;
		int r = sr_next(&p->readers[s], &p->cur[s]);
		if (r > 0) {
			int64_t sclock = player_sclock(p, s);
			/* the stream goes on before all others: no heap work */
			if (p->size == 0 || (sclock < p->heap[1].sclock && player_heap_keeps(p))) {
				node.sclock = sclock;
				node.stream = s;
			} else {
				node = player_heap_pushpop(p->heap, p->size, sclock, s);
			}
			goto got;
		}
		p->pending = -1;
		if (r < 0)
			return -1;
	}
	if (p->size == 0)
		return 0;
	node = player_heap_pop(p);
got:
	if (__builtin_expect(node.sclock < p->last_sclock, 0) && player_backwards(p, &node) < 0)
		return -1;
	p->last_sclock = node.sclock;
	p->pending = (long long)node.stream;
	const struct ev *ev = &p->cur[node.stream];
	out->ev = ev;
	out->stream = node.stream;
	out->dclock = (int64_t)((uint64_t)node.sclock - (uint64_t)p->first_sclock);
	return 1;
}

#endif
