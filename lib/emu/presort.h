/* Streams that still hold unordered regions (OU[ ... OU], not yet put in
 * order by `ovni sort`) are sorted in memory for the emulator, the trace
 * left untouched. Every stream is first read once to see whether its clock
 * ever goes back (about 4 GB/s from the page cache, and it brings a cold
 * trace into it); only such a stream is then loaded whole and sorted with
 * the engine of `ovni sort` (sort_mem, no look-back limit), so the
 * emulation equals the one of the trace after `ovni sort`. The streams
 * held this way may take at most `limit` bytes together: past that, or
 * with limit 0, the user is told to run `ovni sort`. */
#ifndef OVNI_EMU_PRESORT_H
#define OVNI_EMU_PRESORT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/stream.h"
#include "trace/trace.h"

#define PRESORT_DEFAULT_MIB 1024
#define PRESORT_NAMED 3 /* streams named one by one; then a count */

struct presort {
	/* the trace as `ovni sort` takes it, for the advice in messages; NULL
	 * for a copy the user cannot sort (emu --salvage): no advice */
	const char *root;
	uint64_t limit; /* bytes of streams that may be held; 0: never sort in memory */
	uint64_t used; /* bytes held so far */
	size_t nsorted; /* streams sorted in memory */
};

/* A source of stream i of t whose clock never goes back because of an
 * unordered region: the file itself, or a sorted copy in memory. A stream
 * whose clock goes back for another reason is given as it is (the player
 * reports it). NULL after a one-line message naming the stream (a bad
 * stream, or the limit reached: run `ovni sort`). */
struct byte_src *presort_src(struct presort *p, struct trace *t, size_t i);
/* One line with the count, when more streams were sorted than named. */
void presort_report(const struct presort *p);

#endif
