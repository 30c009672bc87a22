/* One event of a window being sorted: its clock and where its bytes are. */
#ifndef OVNI_SORT_KEYS_H
#define OVNI_SORT_KEYS_H

#include <stddef.h>
#include <stdint.h>

struct key {
	uint64_t clock;
	size_t off, size;
};

/* Sorts a[0, n) by clock, stably (equal clocks keep their order); tmp
 * holds n keys. */
void key_sort(struct key *a, struct key *tmp, size_t n);

#endif
