#include "chan/chan.h"

#include <stdlib.h>
#include <string.h>

#include "chan/bay.h"
#include "base/fail.h"
#include "base/fmt.h"

const char *value_str(struct value v, char *buf)
{
	if (v.kind == VALUE_NULL)
		return "null";
	buf[fmt_i64(buf, v.i)] = '\0';
	return buf;
}

int chan_init(struct chan *c, enum chan_kind kind, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->kind = (uint8_t)kind;
	c->name = strdup(name);
	return c->name ? 0 : -1;
}

void chan_free(struct chan *c)
{
	free(c->on_dirty.v);
	free(c->on_emit.v);
	free(c->stack);
	if (c->fan) {
		free(c->fan->v);
		free(c->fan->out);
	}
	free(c->fan);
	free(c->name);
	memset(c, 0, sizeof(*c));
}

int chan_fail_dirty(const struct chan *c)
{
	return failf("channel %s: written twice at the same time", c->name);
}

int chan_fail_dup(const struct chan *c, struct value v)
{
	char b[24];
	return failf("channel %s: new value %s is the same as the last one", c->name, value_str(v, b));
}

int chan_fail_kind(const struct chan *c, const char *op)
{
	return failf("channel %s: cannot %s a %s channel", c->name, op,
		     c->kind == CHAN_STACK ? "stack" : "single");
}

int chan_set_slow(struct chan *c, struct value v)
{
	if (c->kind != CHAN_SINGLE)
		return chan_fail_kind(c, "set");
	int r = chan_check_write(c, v);
	if (r)
		return r < 0 ? -1 : 0;
	c->cur = v;
	chan_touch(c);
	return 0;
}

int chan_stack_grow(struct chan *c)
{
	if (c->depth >= CHAN_STACK_MAX)
		return failf("channel %s: stack full (%d entries)", c->name, CHAN_STACK_MAX);
	uint32_t cap = c->stack_cap ? c->stack_cap * 2 : 8;
	if (cap > CHAN_STACK_MAX)
		cap = CHAN_STACK_MAX;
	struct value *s = realloc(c->stack, cap * sizeof(*s));
	if (!s)
		return failf("channel %s: out of memory", c->name);
	c->stack = s;
	c->stack_cap = cap;
	return 0;
}

/* Why a pop cannot be done (the checks of chan_pop, with messages). */
static __attribute__((noinline, cold)) int pop_fail(const struct chan *c, struct value expected)
{
	char a[24], b[24];
	if (c->kind != CHAN_STACK)
		return chan_fail_kind(c, "pop from");
	if (c->dirty && !(c->flags & CHAN_DIRTY_WRITE))
		return chan_fail_dirty(c);
	if (c->depth == 0)
		return failf("channel %s: cannot pop %s, the stack is empty", c->name, value_str(expected, a));
	return failf("channel %s: cannot pop %s, the top is %s", c->name,
		     value_str(expected, a), value_str(c->stack[c->depth - 1], b));
}

int chan_pop_slow(struct chan *c, struct value expected)
{
	if (c->kind != CHAN_STACK || (c->dirty && !(c->flags & CHAN_DIRTY_WRITE)) || c->depth == 0 ||
	    !value_eq(c->stack[c->depth - 1], expected))
		return pop_fail(c, expected);
	struct value next = c->depth > 1 ? c->stack[c->depth - 2] : value_null();
	int r = chan_check_write(c, next);
	if (r < 0)
		return -1;
	c->depth--;
	c->cur = next;
	if (r == 0)
		chan_touch(c);
	return 0;
}

static int run_all(struct chan *c, void *arg)
{
	const struct chan_cbs *l = arg;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].fn(c, l->v[i].arg) != 0)
			return -1;
	return 0;
}

static int cbs_add(struct chan_cbs *l, chan_cb_fn fn, void *arg)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 2;
		struct chan_cb *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].fn = fn;
	l->v[l->n].arg = arg;
	l->n++;
	l->fn = l->n == 1 ? fn : run_all;
	l->arg = l->n == 1 ? arg : l;
	return 0;
}

/* The dirty callbacks of a channel queued before it had any (set in a
 * model's create, hooked in connect) must run too, in queue order. */
static void requeue_dirty(struct chan_queue *q)
{
	q->nd = 0;
	for (size_t i = 0; i < q->n; i++)
		if (q->v[i]->on_dirty.fn)
			q->d[q->nd++] = q->v[i];
}

int chan_on_dirty(struct chan *c, chan_cb_fn fn, void *arg)
{
	int first = !c->on_dirty.fn;
	c->flags &= ~(CHAN_QUIET_DUP | CHAN_QUIET_NULL);
	if (cbs_add(&c->on_dirty, fn, arg) != 0)
		return -1;
	if (first && c->dirty && c->queue)
		requeue_dirty(c->queue);
	return 0;
}

int chan_on_emit(struct chan *c, chan_cb_fn fn, void *arg)
{
	c->flags &= ~(CHAN_QUIET_DUP | CHAN_QUIET_NULL);
	return cbs_add(&c->on_emit, fn, arg);
}

void chan_emit_settles(struct chan *c, chan_cb_fn fn, void *arg, chan_cb_fn next, unsigned quiet)
{
	struct chan_cbs *l = &c->on_emit;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].fn == fn && l->v[i].arg == arg)
			l->v[i].fn = next;
	if (l->n == 1 && l->fn == fn) {
		l->fn = next;
		if (!c->on_dirty.fn)
			c->flags |= quiet & (CHAN_QUIET_DUP | CHAN_QUIET_NULL);
	}
}
