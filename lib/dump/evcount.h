/* Events counted by MCV, for `ovni top`. */
#ifndef OVNI_EVCOUNT_H
#define OVNI_EVCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "base/out.h"

/* An open-addressing table keyed by the three MCV bytes. */
struct evcount {
	uint32_t *keys; /* 1 + MCV as a 24-bit number; 0 = free slot */
	uint64_t *counts;
	size_t cap, n;
};

int evcount_init(struct evcount *c);
/* Counts one event. -1 (reported) if the table cannot grow. */
int evcount_add(struct evcount *c, const uint8_t mcv[3]);
/* "%s %10ld\n" per MCV: most frequent first, equal counts by MCV (strcmp). */
int evcount_print(const struct evcount *c, struct out *o);
void evcount_free(struct evcount *c);

#endif
