/* A multiplexer: a select channel picks one of N input channels and the
 * output follows it (or holds the default when none is picked). Only the
 * picked input forwards its changes: an input channel keeps the list of
 * muxes picking it now (its fan), so a change costs nothing for the muxes
 * that do not show it (a CPU mux has every thread of its node as input).
 * An input that is dropped stays in the fan until the channel next changes
 * (skipped, then removed): a thread paused and resumed on the same CPU
 * costs no fan update. The output accepts several writes per propagation
 * and duplicates (CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP). */
#ifndef OVNI_CHAN_MUX_H
#define OVNI_CHAN_MUX_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"

struct mux;

struct mux_input {
	struct mux *mux;
	struct chan *chan; /* NULL: never picked */
	size_t index;
	uint64_t seq; /* when it was set up: orders the muxes of one channel */
	uint8_t on; /* its mux picks it now */
	uint8_t in_fan; /* in its channel's fan (picked now, or until the channel next changes) */
};

/* Picks the input for the select value sel: *out = the input, or NULL for
 * none. Returns 0 or -1 after failf. */
typedef int (*mux_select_fn)(struct mux *m, struct value sel, struct mux_input **out);

/* How a mux picks, decided at mux_init from its select function: the
 * common ones are inlined in the select callback. */
enum mux_sel { MUX_SEL_FN, MUX_SEL_INDEX, MUX_SEL_RUNNING, MUX_SEL_ACTIVE };

struct mux {
	struct chan *select, *output;
	int sel; /* enum mux_sel */
	uint32_t states; /* RUNNING and ACTIVE: the thread states (as bits) that pick input 0 */
	struct mux_input *inputs;
	size_t ninputs;
	struct mux_input *picked;
	mux_select_fn fn;
	void *arg; /* for fn */
	int64_t base; /* for mux_select_index: input = value - base */
	struct value def;
	/* Muxes hooked one right after another to one select run from one
	 * callback, in that order: next is the following one, and the first
	 * keeps the last (a thread state picks for every track of it). */
	struct mux *next, *last;
};

/* The default select function: the int64 value minus m->base is the input
 * index; null picks none; an index out of range is an error. */
int mux_select_index(struct mux *m, struct value sel, struct mux_input **out);
/* One input, picked while the select holds the thread state Running (1),
 * or an active one (Running 1, Cooling 4, Warming 5): thread tracks. */
int mux_select_running(struct mux *m, struct value sel, struct mux_input **out);
int mux_select_active(struct mux *m, struct value sel, struct mux_input **out);

/* Hooks the mux to select (output gets its flags). fn NULL means
 * mux_select_index. Inputs are added with mux_set_input. */
int mux_init(struct mux *m, struct chan *select, struct chan *output,
	     mux_select_fn fn, size_t ninputs);
/* Leaves the fans of its inputs and frees the inputs. The mux stays in its
 * select's chain: free a mux only at teardown, when its select no longer
 * changes (the select channel may be gone already, so it is not touched). */
void mux_free(struct mux *m);
int mux_set_input(struct mux *m, size_t i, struct chan *in);
static inline void mux_set_default(struct mux *m, struct value def) { m->def = def; }

/* The dirty callback of a mux input channel: mux_fan_out(c). */
int mux_on_input(struct chan *c, void *arg);
/* Drops the inputs no longer picked from f, keeping the order of the others. */
void mux_fan_prune(struct chan_fan *f);

/* What chan_set_any(o, v) does, for a dirty callback of a channel of q's
 * bay: the counts of q stay in the caller's registers (*n, *nd). */
static inline void mux_set_output(struct chan *o, struct value v, struct chan_queue *q, size_t *n, size_t *nd)
{
	o->cur = v;
	if (o->dirty)
		return;
	o->dirty = 1;
	if (o->queue != q) { /* another bay or none: the general way */
		q->n = *n;
		q->nd = *nd;
		chan_enqueue(o);
		*n = q->n;
		*nd = q->nd;
		return;
	}
	q->v[(*n)++] = o;
	if (o->on_dirty.fn)
		q->d[(*nd)++] = o;
}

/* The fan holds the inputs their muxes pick now (and dropped ones, skipped
 * and then pruned), so each output takes c's value (what on_select would
 * read) without asking. Inline: the bay runs it for c without a call. */
static inline void mux_fan_out(struct chan *c)
{
	struct chan_fan *f = c->fan;
	struct value v = chan_read(c);
	struct chan_queue *q = c->queue; /* c is being propagated */
	size_t n = q->n, nd = q->nd;
	int stale = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i]->on)
			mux_set_output(f->out[i], v, q, &n, &nd);
		else
			stale = 1;
	}
	q->n = n;
	q->nd = nd;
	if (stale)
		mux_fan_prune(f);
}

#endif
