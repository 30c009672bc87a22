#include "chan/sort.h"

#include <stdlib.h>
#include <string.h>

#include "base/fail.h"

/* First position holding a value >= v (a scan when short: one row per CPU). */
static size_t lower_bound(const int64_t *a, size_t n, int64_t v)
{
	if (n <= 16) {
		size_t i = 0;
		while (i < n && a[i] < v)
			i++;
		return i;
	}
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void chan_sort_replace(int64_t *sorted, size_t n, int64_t old, int64_t new, size_t *lo, size_t *hi)
{
	if (new > old) {
		/* from the last old on, values < new shift down one */
		size_t p = lower_bound(sorted, n, old + 1) - 1;
		size_t q = p + 1;
		while (q < n && sorted[q] < new) {
			sorted[q - 1] = sorted[q];
			q++;
		}
		sorted[q - 1] = new;
		*lo = p;
		*hi = q - 1;
	} else {
		/* before the first old, values >= new shift up one */
		size_t p = lower_bound(sorted, n, old);
		size_t q = lower_bound(sorted, p, new);
		memmove(sorted + q + 1, sorted + q, (p - q) * sizeof(*sorted));
		sorted[q] = new;
		*lo = q;
		*hi = p;
	}
}

static int64_t as_int(struct value v)
{
	return v.kind == VALUE_NULL ? 0 : v.i;
}

static int on_input(struct chan *c, void *arg)
{
	struct chan_sort_input *in = arg;
	struct chan_sort *s = in->s;
	int64_t old = s->values[in->index], new = as_int(chan_read(c));
	if (old == new)
		return 0;
	s->values[in->index] = new;
	size_t lo, hi;
	chan_sort_replace(s->sorted, s->n, old, new, &lo, &hi);
	if (!s->started) {
		/* the first change writes every row, as the reference's timelines begin */
		s->started = 1;
		lo = 0;
		hi = s->n - 1;
	}
	for (size_t k = lo; k <= hi; k++)
		chan_set_any(s->outputs[k], value_int64(s->sorted[k]));
	return 0;
}

int chan_sort_init(struct chan_sort *s, struct chan *const *inputs, struct chan *const *outputs, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->inputs = calloc(n + 1, sizeof(*s->inputs));
	s->outputs = calloc(n + 1, sizeof(*s->outputs));
	s->values = calloc(n + 1, sizeof(*s->values));
	s->sorted = calloc(n + 1, sizeof(*s->sorted));
	s->ins = calloc(n + 1, sizeof(*s->ins));
	if (!s->inputs || !s->outputs || !s->values || !s->sorted || !s->ins)
		return failf("out of memory for a sort block of %zu channels", n);
	for (size_t i = 0; i < n; i++) {
		s->inputs[i] = inputs[i];
		s->outputs[i] = outputs[i];
		s->ins[i].s = s;
		s->ins[i].index = i;
		if (outputs[i]->kind != CHAN_SINGLE || (outputs[i]->flags & CHAN_IGNORE_DUP))
			return failf("sort block: output %s must be a single channel that takes duplicates",
				     outputs[i]->name);
		chan_set_flags(outputs[i], CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP);
		if (chan_on_dirty(inputs[i], on_input, &s->ins[i]) != 0)
			return failf("out of memory for a sort block of %zu channels", n);
	}
	return 0;
}

void chan_sort_free(struct chan_sort *s)
{
	free(s->inputs);
	free(s->outputs);
	free(s->values);
	free(s->sorted);
	free(s->ins);
	memset(s, 0, sizeof(*s));
}
