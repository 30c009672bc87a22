/* The bay: every channel of an emulation by name, and the queue of dirty
 * channels. bay_propagate() runs the dirty callbacks of the queue in order
 * (they may queue more channels at the end), then the emit callbacks of the
 * whole queue, then flushes it. Paraver lines written at the same time thus
 * follow the order in which their channels first became dirty. */
#ifndef OVNI_CHAN_BAY_H
#define OVNI_CHAN_BAY_H

#include <stddef.h>

#include "chan/chan.h"

struct bay {
	struct chan_queue q; /* dirty channels */
	struct chan **table; /* open addressing by name */
	size_t tsize, n;
};

int bay_init(struct bay *b);
/* Frees the bay's tables, not the channels (their owners do). */
void bay_free(struct bay *b);
/* Registers c under its name, which must be new. -1 after failf. */
int bay_add(struct bay *b, struct chan *c);
struct chan *bay_find(const struct bay *b, const char *name);

/* The general case of bay_propagate: some channel is dirty. */
int bay_propagate_queue(struct bay *b);

/* 0, or -1 after failf (a callback failed). Inline: many events (bursts,
 * declarations) leave every channel clean. */
static inline int bay_propagate(struct bay *b)
{
	return b->q.n ? bay_propagate_queue(b) : 0;
}

#endif
