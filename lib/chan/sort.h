/* A sort block: N input channels, N output channels; output i holds the
 * i-th smallest input value (null counts as 0). Breakdown timelines use it
 * to draw the CPUs' states as a stacked histogram (spec emu.md 4.6). */
#ifndef OVNI_CHAN_SORT_H
#define OVNI_CHAN_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"

struct chan_sort;

struct chan_sort_input {
	struct chan_sort *s;
	size_t index;
};

struct chan_sort {
	struct chan **inputs, **outputs;
	size_t n;
	int64_t *values; /* the value of every input, as sorted */
	int64_t *sorted; /* ascending */
	struct chan_sort_input *ins;
	int started; /* an input has changed: every output has been written */
};

/* Hooks the block to the inputs. Nothing is written until an input first
 * changes its value (null counts as 0): then every output is written, in
 * order; after that only the outputs whose value moved. The outputs get
 * CHAN_DIRTY_WRITE and CHAN_ALLOW_DUP. The block must not move after. -1
 * after failf. */
int chan_sort_init(struct chan_sort *s, struct chan *const *inputs, struct chan *const *outputs, size_t n);
void chan_sort_free(struct chan_sort *s);

/* The sorted array after replacing one old value with new: removes one
 * old, inserts new. *lo and *hi get the range of positions that moved. */
void chan_sort_replace(int64_t *sorted, size_t n, int64_t old, int64_t new, size_t *lo, size_t *hi);

#endif
