/* The emulation as a Trace Event Format (Chrome tracing) JSON file that
 * Perfetto's UI and chrome://tracing open: a process per trace process
 * (its threads) and per loom (its CPUs), a track per row and channel,
 * slices for the values (nested when the channel is a stack: subsystems,
 * MPI functions, marks, nested tasks), instant events for values that last
 * no time. Streamed: memory is one small stack per track, whatever the
 * length of the trace; events go out in the order the emulation makes
 * them (each track's timestamps never go back). */
#ifndef OVNI_REPORT_CHROME_H
#define OVNI_REPORT_CHROME_H

#include <stddef.h>
#include <stdint.h>

#include "base/out.h"
#include "report/source.h"

struct chrome_slice {
	int64_t value, start;
	int begun; /* its B event is out */
};

struct chrome_track {
	struct chrome_slice *st;
	uint32_t depth, cap;
	int named; /* its thread_name is out */
};

struct chrome {
	struct src *src;
	struct out *out;
	struct chrome_track *tracks[SRC_NSIDES]; /* [row * nchans + chan] */
	size_t nrows[SRC_NSIDES], nchans[SRC_NSIDES];
	unsigned char *pid_named; /* per pid */
	size_t npids;
	int64_t from, to;
	uint64_t nevents;
	int ready, first;
};

/* Before src_open: the source s feeds c through chrome_line (arg c), which
 * writes to o (the header goes out at the first line). */
void chrome_init(struct chrome *c, struct src *s, struct out *o);
int chrome_line(void *arg, enum src_side side, size_t row, size_t chan, int64_t time, int64_t value);
/* After src_play: ends every open slice at the end and closes the JSON.
 * -1 after a message. */
int chrome_finish(struct chrome *c);
void chrome_free(struct chrome *c);

#endif
