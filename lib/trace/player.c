#include "trace/player.h"

#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

#define MAX_WARNINGS 10

int player_init(struct player *p, struct stream_reader *readers, size_t n, const int64_t *offsets, unsigned flags)
{
	memset(p, 0, sizeof(*p));
	p->readers = readers;
	p->n = n;
	p->flags = flags;
	p->pending = -1;
	p->offsets = calloc(n ? n : 1, sizeof(*p->offsets));
	p->cur = calloc(n ? n : 1, sizeof(*p->cur));
	p->heap = calloc(n + 1, sizeof(*p->heap));
	if (!p->offsets || !p->cur || !p->heap) {
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
		if (offsets)
			p->offsets[i] = offsets[i];
		if (r > 0)
			player_heap_push(p, player_sclock(p, i), i);
	}
	/* the root is the first event played: the start of relative clocks */
	if (p->size > 0)
		p->first_sclock = p->last_sclock = p->heap[1].sclock;
	return 0;
}

const struct ev *player_first(const struct player *p, size_t i)
{
	return p->cur[i].size ? &p->cur[i] : NULL;
}

int player_backwards(struct player *p, const struct player_node *node)
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

void player_free(struct player *p)
{
	free(p->offsets);
	free(p->cur);
	free(p->heap);
	p->offsets = NULL;
	p->cur = NULL;
	p->heap = NULL;
	p->size = 0;
	p->pending = -1;
}
