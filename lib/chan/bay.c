#include "chan/bay.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "chan/mux.h"

int bay_init(struct bay *b)
{
	memset(b, 0, sizeof(*b));
	b->q.cap = 256;
	b->q.v = malloc(b->q.cap * sizeof(*b->q.v));
	b->q.d = malloc(b->q.cap * sizeof(*b->q.d));
	b->tsize = 1024;
	b->table = calloc(b->tsize, sizeof(*b->table));
	if (!b->q.v || !b->q.d || !b->table) {
		bay_free(b);
		return failf("out of memory for the channel bay");
	}
	return 0;
}

void bay_free(struct bay *b)
{
	free(b->q.v);
	free(b->q.d);
	free(b->table);
	memset(b, 0, sizeof(*b));
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t slot(struct chan **table, size_t tsize, const char *name)
{
	size_t i = (size_t)hash(name) & (tsize - 1);
	while (table[i] && strcmp(table[i]->name, name) != 0)
		i = (i + 1) & (tsize - 1);
	return i;
}

static int grow_table(struct bay *b)
{
	size_t nsize = b->tsize * 2;
	struct chan **nt = calloc(nsize, sizeof(*nt));
	if (!nt)
		return -1;
	for (size_t i = 0; i < b->tsize; i++)
		if (b->table[i])
			nt[slot(nt, nsize, b->table[i]->name)] = b->table[i];
	free(b->table);
	b->table = nt;
	b->tsize = nsize;
	return 0;
}

/* The queue holds every channel of the bay (each is queued once at most). */
static int grow_queue(struct chan_queue *q)
{
	size_t cap = q->cap * 2;
	struct chan **v = realloc(q->v, cap * sizeof(*v));
	if (v)
		q->v = v;
	struct chan **d = v ? realloc(q->d, cap * sizeof(*d)) : NULL;
	if (!d)
		return -1;
	q->d = d;
	q->cap = cap;
	return 0;
}

int bay_add(struct bay *b, struct chan *c)
{
	if (c->bay)
		return failf("channel %s is already registered", c->name);
	if ((b->n + 1) * 2 > b->tsize && grow_table(b) != 0)
		return failf("out of memory for the channel bay");
	if (b->n + 1 > b->q.cap && grow_queue(&b->q) != 0)
		return failf("out of memory for the channel bay");
	size_t i = slot(b->table, b->tsize, c->name);
	if (b->table[i])
		return failf("two channels are named %s", c->name);
	b->table[i] = c;
	b->n++;
	c->bay = b;
	c->queue = &b->q;
	if (c->dirty) { /* written before registration: propagate it too */
		c->dirty = 0;
		chan_touch(c);
	}
	return 0;
}

struct chan *bay_find(const struct bay *b, const char *name)
{
	return b->table[slot(b->table, b->tsize, name)];
}

/* After a failed callback: the rest of the queue is flushed unseen. */
static __attribute__((noinline, cold)) int abandon(struct chan_queue *q, size_t from)
{
	for (size_t i = from; i < q->n; i++)
		chan_flush(q->v[i]);
	q->n = 0;
	q->nd = 0;
	return -1;
}

int bay_propagate_queue(struct bay *b)
{
	struct chan_queue *q = &b->q;
	/* q->nd grows while the dirty callbacks queue more channels */
	for (size_t i = 0; i < q->nd; i++) {
		struct chan *c = q->d[i];
		if (c->on_dirty.fn == mux_on_input) /* most are: no call */
			mux_fan_out(c);
		else if (c->on_dirty.fn(c, c->on_dirty.arg) != 0)
			return abandon(q, 0);
	}
	/* emit callbacks only read their own channel: flush it right after */
	struct chan **v = q->v;
	size_t n = q->n;
	for (size_t i = 0; i < n; i++) {
		struct chan *c = v[i];
		if (c->on_emit.fn && c->on_emit.fn(c, c->on_emit.arg) != 0)
			return abandon(q, i);
		chan_flush(c);
	}
	q->n = 0;
	q->nd = 0;
	return 0;
}
