#include "chan/mux.h"

#include <stdlib.h>
#include <string.h>

#include "base/fail.h"

int mux_select_index(struct mux *m, struct value sel, struct mux_input **out)
{
	if (value_is_null(sel)) {
		*out = NULL;
		return 0;
	}
	int64_t i = sel.i - m->base;
	if (i < 0 || (uint64_t)i >= m->ninputs)
		return failf("mux of %s: select value %lld has no input", m->output->name, (long long)sel.i);
	*out = &m->inputs[i];
	return 0;
}

/* Running 1, Cooling 4, Warming 5 as bits (the values of enum th_state). */
#define ACTIVE_STATES ((1u << 1) | (1u << 4) | (1u << 5))

int mux_select_running(struct mux *m, struct value sel, struct mux_input **out)
{
	*out = sel.kind == VALUE_INT64 && sel.i == 1 ? &m->inputs[0] : NULL;
	return 0;
}

int mux_select_active(struct mux *m, struct value sel, struct mux_input **out)
{
	*out = sel.kind == VALUE_INT64 && (uint64_t)sel.i < 32 && (ACTIVE_STATES >> sel.i & 1) ? &m->inputs[0] : NULL;
	return 0;
}

static uint64_t next_seq;

/* Fans are short: a plain loop beats a call to memmove. */
static void fan_remove(struct chan_fan *f, struct mux_input *in)
{
	size_t i = 0;
	while (i < f->n && f->v[i] != in)
		i++;
	if (i == f->n)
		return;
	for (f->n--; i < f->n; i++) {
		f->v[i] = f->v[i + 1];
		f->out[i] = f->out[i + 1];
	}
	in->in_fan = 0;
}

/* Drops the inputs no longer picked, keeping the order of the others. */
void mux_fan_prune(struct chan_fan *f)
{
	size_t j = 0;
	for (size_t i = 0; i < f->n; i++) {
		struct mux_input *in = f->v[i];
		if (!in->on) {
			in->in_fan = 0;
			continue;
		}
		f->v[j] = in;
		f->out[j] = f->out[i];
		j++;
	}
	f->n = j;
}

/* Keeps the fan in set-up order, the order the muxes would run in if each
 * input had its own callback. */
static int fan_insert(struct chan_fan *f, struct mux_input *in)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4;
		struct mux_input **v = realloc(f->v, cap * sizeof(*v));
		if (v)
			f->v = v;
		struct chan **out = v ? realloc(f->out, cap * sizeof(*out)) : NULL;
		if (!out)
			return failf("out of memory for the mux of %s", in->mux->output->name);
		f->out = out;
		f->cap = cap;
	}
	size_t i = f->n;
	while (i > 0 && f->v[i - 1]->seq > in->seq) {
		f->v[i] = f->v[i - 1];
		f->out[i] = f->out[i - 1];
		i--;
	}
	f->v[i] = in;
	f->out[i] = in->mux->output;
	f->n++;
	in->in_fan = 1;
	return 0;
}

/* The pick changed: the old input stays in its fan (pruned when its
 * channel next changes), the new one joins unless still there. */
static int repick(struct mux *m, struct mux_input *in)
{
	if (m->picked)
		m->picked->on = 0;
	m->picked = in;
	if (!in)
		return 0;
	in->on = 1;
	if (in->in_fan || !in->chan)
		return 0;
	return fan_insert(in->chan->fan, in);
}

/* What m picks for the select value sel (NULL: none), or -1 after failf. */
static inline int pick(struct mux *m, struct value sel, struct mux_input **in)
{
	if (m->states) /* a thread track: its one input while the state is one of these */
		*in = sel.kind == VALUE_INT64 && (uint64_t)sel.i < 32 && (m->states >> sel.i & 1) ? m->inputs : NULL;
	else if (m->sel == MUX_SEL_INDEX && sel.kind == VALUE_INT64 && (uint64_t)(sel.i - m->base) < m->ninputs)
		*in = &m->inputs[sel.i - m->base];
	else if (m->sel == MUX_SEL_INDEX && sel.kind == VALUE_NULL) /* a CPU with no thread running */
		*in = NULL;
	else /* an error, or a select of the caller's */
		return m->fn(m, sel, in);
	return 0;
}

/* The select changed: every mux of the chain from arg picks again. */
static int on_select(struct chan *c, void *arg)
{
	struct value sel = chan_read(c);
	struct chan_queue *q = c->queue; /* c is being propagated */
	size_t n = q->n, nd = q->nd;
	int rc = 0;
	for (struct mux *m = arg; m; m = m->next) {
		struct mux_input *in;
		if (pick(m, sel, &in) != 0 || (in != m->picked && repick(m, in) != 0)) {
			rc = -1;
			break;
		}
		/* the output takes any value (mux_init): no checks to fail */
		struct chan *o = m->output;
		struct value v = in && in->chan ? chan_read(in->chan) : m->def;
		/* a new pick often shows the same (null): its one callback would drop it */
		if (chan_quiet_write(o, v))
			continue;
		mux_set_output(o, v, q, &n, &nd);
	}
	q->n = n;
	q->nd = nd;
	return rc;
}

/* Joins the chain of the last callback of select, or starts one. */
static int hook_select(struct mux *m, struct chan *select)
{
	const struct chan_cbs *l = &select->on_dirty;
	if (l->n > 0 && l->v[l->n - 1].fn == on_select) {
		struct mux *first = l->v[l->n - 1].arg;
		first->last->next = m;
		first->last = m;
		return 0;
	}
	m->last = m;
	return chan_on_dirty(select, on_select, m);
}

int mux_on_input(struct chan *c, void *arg)
{
	(void)arg;
	mux_fan_out(c);
	return 0;
}

int mux_init(struct mux *m, struct chan *select, struct chan *output,
	     mux_select_fn fn, size_t ninputs)
{
	memset(m, 0, sizeof(*m));
	if (output->kind != CHAN_SINGLE || (output->flags & CHAN_IGNORE_DUP))
		return failf("mux of %s: the output must be a single channel that takes duplicates", output->name);
	m->select = select;
	m->output = output;
	m->fn = fn ? fn : mux_select_index;
	m->sel = m->fn == mux_select_index ? MUX_SEL_INDEX : m->fn == mux_select_running ? MUX_SEL_RUNNING
		: m->fn == mux_select_active ? MUX_SEL_ACTIVE : MUX_SEL_FN;
	m->states = m->sel == MUX_SEL_RUNNING ? 1u << 1 : m->sel == MUX_SEL_ACTIVE ? ACTIVE_STATES : 0;
	m->def = value_null();
	m->ninputs = ninputs;
	m->inputs = calloc(ninputs ? ninputs : 1, sizeof(*m->inputs));
	if (!m->inputs)
		return failf("out of memory for the mux of %s", output->name);
	for (size_t i = 0; i < ninputs; i++) {
		m->inputs[i].mux = m;
		m->inputs[i].index = i;
	}
	chan_set_flags(output, CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP);
	if (hook_select(m, select) != 0)
		return failf("out of memory for the mux of %s", output->name);
	return 0;
}

void mux_free(struct mux *m)
{
	for (size_t i = 0; m->inputs && i < m->ninputs; i++) {
		struct mux_input *in = &m->inputs[i];
		if (in->in_fan && in->chan && in->chan->fan)
			fan_remove(in->chan->fan, in);
	}
	m->picked = NULL;
	free(m->inputs);
	m->inputs = NULL;
}

int mux_set_input(struct mux *m, size_t i, struct chan *in)
{
	if (i >= m->ninputs)
		return failf("mux of %s has no input %zu", m->output->name, i);
	if (m->inputs[i].chan)
		return failf("mux of %s: input %zu already set", m->output->name, i);
	m->inputs[i].chan = in;
	m->inputs[i].seq = next_seq++;
	if (!in->fan) {
		in->fan = calloc(1, sizeof(*in->fan));
		if (!in->fan || chan_on_dirty(in, mux_on_input, NULL) != 0)
			return failf("out of memory for the mux of %s", m->output->name);
	}
	return 0;
}
