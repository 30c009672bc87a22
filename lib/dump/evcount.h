/* Events counted by MCV, for `ovni top`. */
#ifndef OVNI_EVCOUNT_H
#define OVNI_EVCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "base/out.h"
#include "trace/player.h"

#define EVCOUNT_ASCII (1u << 14) /* the first two MCV bytes, 7 bits each */

/* MCVs of 7-bit bytes (all that models declare) go straight to a count:
 * a block of 128 per first two bytes, made when first seen. Any other
 * MCV goes to an open-addressing table keyed by its three bytes. */
struct evcount {
	uint64_t **ascii; /* EVCOUNT_ASCII blocks of 128 counts, NULL until seen */
	uint32_t *keys; /* 1 + MCV as a 24-bit number; 0 = free slot */
	uint64_t *counts;
	size_t cap, n; /* n: MCVs in the table */
	size_t nblocks; /* blocks made */
};

int evcount_init(struct evcount *c);
/* The general case of evcount_add. */
int evcount_add_slow(struct evcount *c, const uint8_t mcv[3]);
/* Counts every event p plays, in its loop (player_next inlined). 0 at the
 * end, -1 if the player fails or there is no memory (reported). */
int evcount_play(struct evcount *c, struct player *p);
/* "%s %10ld\n" per MCV: most frequent first, equal counts by MCV (strcmp). */
int evcount_print(const struct evcount *c, struct out *o);
void evcount_free(struct evcount *c);

/* Counts one event. -1 (reported) if there is no memory for it. Inline:
 * top calls it per event. */
static inline int evcount_add(struct evcount *c, const uint8_t mcv[3])
{
	if (!((mcv[0] | mcv[1] | mcv[2]) & 0x80)) {
		uint64_t *block = c->ascii[(uint32_t)mcv[0] << 7 | mcv[1]];
		if (block) {
			block[mcv[2]]++;
			return 0;
		}
	}
	return evcount_add_slow(c, mcv);
}

#endif
