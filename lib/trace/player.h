/* K-way merge of streams by clock, with the reference's tie-break: a binary
 * min-heap on the stream's current clock (ties never move; a stream is
 * re-inserted at the start of the next step, just before the pop). Byte-
 * identical Paraver output depends on playing events in exactly this order
 * (spec emu.md 2.4). */
#ifndef OVNI_PLAYER_H
#define OVNI_PLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/stream.h"

struct player_ev {
	struct ev ev;
	size_t stream; /* index of the stream (as given to player_init) */
	int64_t rclock; /* raw clock */
	int64_t sclock; /* raw clock + the stream's offset */
	int64_t dclock; /* sclock - sclock of the first event played */
};

struct player_node {
	int64_t sclock; /* the key: current clock of the stream, offset applied */
	size_t stream;
};

struct player {
	struct stream_reader *readers; /* not owned */
	size_t n;
	const int64_t *offsets; /* per stream, or NULL for none */
	struct ev *cur; /* current event of every stream (size 0: none yet) */
	struct player_node *heap; /* 1-based: heap[1..size] */
	size_t size;
	long long pending; /* stream to advance and re-insert at the next step, -1 if none */
	int started;
	int64_t first_sclock;
	int64_t last_sclock;
	unsigned flags;
	uint64_t nbackwards; /* global backward jumps seen (PLAYER_UNSORTED) */
};

#define PLAYER_UNSORTED 1u /* a global backwards jump is reported and playing goes on */

/* Reads the first event of every stream. -1 on error (reported). */
int player_init(struct player *p, struct stream_reader *readers, size_t n, const int64_t *offsets, unsigned flags);
/* The first event of stream i as loaded by player_init (NULL if the stream
 * has no events); valid until player_next advances stream i. */
const struct ev *player_first(const struct player *p, size_t i);
/* 1 = *out holds the next event, 0 = all streams ended, -1 = error (reported). */
int player_next(struct player *p, struct player_ev *out);
void player_free(struct player *p);

#endif
