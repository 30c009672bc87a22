#include "trace/player.h"

#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

#define MAX_WARNINGS 10

static int64_t sclock_of(const struct player *p, size_t s)
{
	uint64_t off = p->offsets ? (uint64_t)p->offsets[s] : 0;
	return (int64_t)(p->cur[s].clock + off); /* wraps instead of overflowing */
}

/* Insert at size+1 and bubble up while strictly smaller than the parent. */
static inline void heap_push(struct player *p, int64_t sclock, size_t s)
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

/* Take the root, move the last node there and sift it down: it swaps with
 * the left child if strictly smaller, or with the right child if strictly
 * smaller than both. Equal keys never move. Written as "the smaller child
 * (left on ties), if strictly smaller than the node", which is the same. */
static inline struct player_node heap_pop(struct player *p)
{
	struct player_node *h = p->heap;
	struct player_node top = h[1];
	struct player_node last = h[p->size--];
	size_t n = p->size, k = 1;
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
	if (n > 0)
		h[k] = last;
	return top;
}

int player_init(struct player *p, struct stream_reader *readers, size_t n, const int64_t *offsets, unsigned flags)
{
	memset(p, 0, sizeof(*p));
	p->readers = readers;
	p->n = n;
	p->offsets = offsets;
	p->flags = flags;
	p->pending = -1;
	p->cur = calloc(n ? n : 1, sizeof(*p->cur));
	p->heap = calloc(n + 1, sizeof(*p->heap));
	if (!p->cur || !p->heap) {
		msg_err("out of memory for a player of %zu streams", n);
		player_free(p);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int r = sr_next(&readers[i], &p->cur[i]);
		if (r < 0) {
			player_free(p);
			return -1;
		}
		if (r > 0)
			heap_push(p, sclock_of(p, i), i);
	}
	return 0;
}

const struct ev *player_first(const struct player *p, size_t i)
{
	return p->cur[i].size ? &p->cur[i] : NULL;
}

static int backwards(struct player *p, const struct player_node *node)
{
	const struct ev *ev = &p->cur[node->stream];
	const char *name = p->readers[node->stream].name;
	if (!(p->flags & PLAYER_UNSORTED)) {
		msg_err("%s: offset %llu: event %.3s at clock %lld goes back in time from %lld, the previous event played",
			name, (unsigned long long)ev->offset, (const char *)ev->mcv,
			(long long)node->sclock, (long long)p->last_sclock);
		return -1;
	}
	if (++p->nbackwards <= MAX_WARNINGS)
		msg_warn("%s: offset %llu: event %.3s: backwards jump in time %lld -> %lld%s",
			name, (unsigned long long)ev->offset, (const char *)ev->mcv,
			(long long)p->last_sclock, (long long)node->sclock,
			p->nbackwards == MAX_WARNINGS ? " (further jumps are not reported)" : "");
	return 0;
}

int player_next(struct player *p, struct player_ev *out)
{
	if (p->pending >= 0) {
		size_t s = (size_t)p->pending;
		p->pending = -1;
		int r = sr_next(&p->readers[s], &p->cur[s]);
		if (r < 0)
			return -1;
		if (r > 0)
			heap_push(p, sclock_of(p, s), s);
	}
	if (p->size == 0)
		return 0;
	struct player_node node = heap_pop(p);
	if (!p->started) {
		p->started = 1;
		p->first_sclock = node.sclock;
	} else if (node.sclock < p->last_sclock && backwards(p, &node) < 0) {
		return -1;
	}
	p->last_sclock = node.sclock;
	p->pending = (long long)node.stream;
	out->ev = p->cur[node.stream];
	out->stream = node.stream;
	out->rclock = (int64_t)out->ev.clock;
	out->sclock = node.sclock;
	out->dclock = (int64_t)((uint64_t)node.sclock - (uint64_t)p->first_sclock);
	return 1;
}

void player_free(struct player *p)
{
	free(p->cur);
	free(p->heap);
	p->cur = NULL;
	p->heap = NULL;
	p->size = 0;
	p->pending = -1;
}
