/* A channel: a named value that changes over time (spec emu.md 2.6). A
 * write marks it dirty; the bay then runs the callbacks hooked to it and
 * flushes it, remembering the value as last. Single channels are set, stack
 * channels pushed and popped (their value is the top, null when empty). */
#ifndef OVNI_CHAN_H
#define OVNI_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "chan/value.h"

/* Flags of a channel */
#define CHAN_DIRTY_WRITE 1u /* may be written again before the flush */
#define CHAN_ALLOW_DUP 2u /* writing the last flushed value is accepted */
#define CHAN_IGNORE_DUP 4u /* writing the last flushed value does nothing */
/* Set by chan_emit_settles, cleared by any new callback: the one callback
 * of the channel drops a rewrite of the last flushed value (of a null last
 * value, for QUIET_NULL), so a writer may leave the channel clean instead
 * (mux outputs do). */
#define CHAN_QUIET_DUP 8u
#define CHAN_QUIET_NULL 16u


#define CHAN_STACK_MAX 512

enum chan_kind { CHAN_SINGLE, CHAN_STACK };

struct chan;
struct bay;
struct mux_input;

/* A callback hooked to a channel; returns 0 or -1 (after failf). */
typedef int (*chan_cb_fn)(struct chan *c, void *arg);

struct chan_cb {
	chan_cb_fn fn;
	void *arg;
};

/* The callbacks of a channel, in the order hooked. fn(c, arg) runs them
 * all: the one callback itself (most channels have one or none), or a
 * function that walks the array. */
struct chan_cbs {
	chan_cb_fn fn; /* NULL: no callback */
	void *arg;
	struct chan_cb *v;
	uint32_t n, cap;
};

/* The mux inputs that pick a channel now, in the order they were set up:
 * one dirty callback forwards the channel to just those muxes. */
struct chan_fan {
	struct mux_input **v;
	struct chan **out; /* the output of v[i]'s mux: one load less per change */
	size_t n, cap;
};

/* The bay's queue of dirty channels, in the order they became dirty, and
 * the ones among them with dirty callbacks (d: a subsequence of v). A
 * channel is queued at most once per propagation, so cap, kept at least
 * the number of channels in the bay, bounds both: no check per write. */
struct chan_queue {
	struct chan **v, **d;
	size_t n, nd, cap;
};

struct chan {
	struct value cur; /* the value now (top of the stack, or null) */
	struct value last; /* the value at the last flush */
	unsigned flags;
	uint8_t kind;
	uint8_t dirty;
	struct bay *bay; /* set by bay_add */
	struct chan_queue *queue; /* the bay's; NULL before bay_add */
	struct chan_cbs on_dirty, on_emit;
	struct value *stack;
	uint32_t depth, stack_cap;
	struct chan_fan *fan; /* muxes picking this channel now (lib/chan/mux.c) */
	char *name;
};

/* Names the channel (copied) and clears it. Returns -1 without memory. */
int chan_init(struct chan *c, enum chan_kind kind, const char *name);
void chan_free(struct chan *c);
static inline void chan_set_flags(struct chan *c, unsigned flags) { c->flags |= flags; }

/* Slow paths of the inline writers below. */
int chan_fail_dirty(const struct chan *c);
int chan_fail_dup(const struct chan *c, struct value v);
int chan_fail_kind(const struct chan *c, const char *op);
int chan_stack_grow(struct chan *c);

/* Checks a write of v: 0 = go on, 1 = drop it (ignored duplicate), -1 = error. */
static inline int chan_check_write(const struct chan *c, struct value v)
{
	if (c->dirty && !(c->flags & CHAN_DIRTY_WRITE))
		return chan_fail_dirty(c);
	if (value_eq(v, c->last)) {
		if (c->flags & CHAN_IGNORE_DUP)
			return 1;
		if (!(c->flags & CHAN_ALLOW_DUP))
			return chan_fail_dup(c, v);
	}
	return 0;
}

/* Appends c, just marked dirty, to its bay's queue. */
static inline void chan_enqueue(struct chan *c)
{
	struct chan_queue *q = c->queue;
	if (!q)
		return;
	q->v[q->n++] = c;
	if (c->on_dirty.fn)
		q->d[q->nd++] = c;
}

/* Marks c dirty and appends it to its bay's queue. */
static inline void chan_touch(struct chan *c)
{
	if (c->dirty)
		return;
	c->dirty = 1;
	chan_enqueue(c);
}

/* The general case of chan_set: other kinds, second writes, duplicates. */
int chan_set_slow(struct chan *c, struct value v);

/* The common case inline: a first write of a new value, or of the same
 * one when duplicates are allowed. */
static inline int chan_set(struct chan *c, struct value v)
{
	/* a dropped duplicate (the CPU channels see many) */
	if ((c->flags & CHAN_IGNORE_DUP) && !c->dirty && value_eq(v, c->last) && c->kind == CHAN_SINGLE)
		return 0;
	if (c->kind != CHAN_SINGLE || c->dirty ||
	    (value_eq(v, c->last) && (c->flags & (CHAN_IGNORE_DUP | CHAN_ALLOW_DUP)) != CHAN_ALLOW_DUP))
		return chan_set_slow(c, v);
	c->cur = v;
	c->dirty = 1;
	chan_enqueue(c);
	return 0;
}

/* A write to a single channel flagged CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP
 * without CHAN_IGNORE_DUP (mux and sort outputs): what chan_set does for
 * it, with no checks to fail. */
static inline void chan_set_any(struct chan *c, struct value v)
{
	c->cur = v;
	if (!c->dirty) {
		c->dirty = 1;
		chan_enqueue(c);
	}
}

static inline int chan_push(struct chan *c, struct value v)
{
	if (c->kind != CHAN_STACK)
		return chan_fail_kind(c, "push to");
	int r = chan_check_write(c, v);
	if (r < 0)
		return -1;
	if (c->depth == c->stack_cap && chan_stack_grow(c) != 0)
		return -1;
	c->stack[c->depth++] = v;
	c->cur = v;
	if (r == 0) /* an ignored duplicate still stacks, but changes nothing */
		chan_touch(c);
	return 0;
}

/* The general case of chan_pop: checks that fail, second writes, duplicates. */
int chan_pop_slow(struct chan *c, struct value expected);

/* Pops the top, which must equal expected. Inline: the common case is a
 * first write this propagation that exposes a different value. */
static inline int chan_pop(struct chan *c, struct value expected)
{
	if (c->kind != CHAN_STACK || c->dirty || c->depth == 0 || !value_eq(c->stack[c->depth - 1], expected))
		return chan_pop_slow(c, expected);
	struct value next = c->depth > 1 ? c->stack[c->depth - 2] : value_null();
	if (value_eq(next, c->last))
		return chan_pop_slow(c, expected);
	c->depth--;
	c->cur = next;
	c->dirty = 1;
	chan_enqueue(c);
	return 0;
}

static inline struct value chan_read(const struct chan *c) { return c->cur; }

/* Whether writing v to the clean channel c would change nothing. */
static inline int chan_quiet_write(const struct chan *c, struct value v)
{
	return (c->flags & (CHAN_QUIET_DUP | CHAN_QUIET_NULL)) && !c->dirty && value_eq(v, c->last) &&
	       ((c->flags & CHAN_QUIET_DUP) || value_is_null(v));
}

/* After the emit stage: the current value becomes the last one. */
static inline void chan_flush(struct chan *c)
{
	c->last = c->cur;
	c->dirty = 0;
}

/* Hooks fn to run when c becomes dirty (in the order hooked), or in the
 * emit stage. -1 without memory. */
int chan_on_dirty(struct chan *c, chan_cb_fn fn, void *arg);
int chan_on_emit(struct chan *c, chan_cb_fn fn, void *arg);
/* The emit callback fn(c, arg), which from now on drops any rewrite of the
 * last value (quiet CHAN_QUIET_DUP) or of a null one (CHAN_QUIET_NULL), is
 * replaced by next; when it is the only callback of c, c gets quiet. */
void chan_emit_settles(struct chan *c, chan_cb_fn fn, void *arg, chan_cb_fn next, unsigned quiet);

#endif
