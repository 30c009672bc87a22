/* The time each row (grouped by thread, CPU, process or task type) spends
 * in each value of each channel, inside a window: `ovni report`. Fed by
 * the source's lines; a value lasts from its line to the next line of the
 * same row and type (or the end), exactly as Paraver reads the .prv. */
#ifndef OVNI_REPORT_TALLY_H
#define OVNI_REPORT_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "base/out.h"
#include "report/source.h"

enum tally_by { TALLY_THREAD, TALLY_CPU, TALLY_PROCESS, TALLY_TASK_TYPE };
enum tally_format { TALLY_TEXT, TALLY_CSV, TALLY_JSON };

/* Time in one value of one channel, for one group. */
struct tally_cell {
	uint32_t group, chan;
	int64_t value;
	int64_t ns;
	uint64_t count; /* stretches in the value (that reach into the window) */
};

struct tally_group {
	int64_t observed; /* ns of rows in the group, inside the window */
	size_t chan; /* task types: the channel and value of the type */
	int64_t value;
	size_t first_row; /* thread, CPU or process: a row of it */
};

struct tally {
	struct src *src;
	enum tally_by by;
	enum src_side side;
	size_t nrows, nchans;
	int64_t *cur, *since; /* per row and channel: value and since when */
	uint32_t *row_group;
	int64_t *row_since;
	struct tally_group *groups;
	size_t ngroups, gcap;
	struct tally_cell *cells;
	size_t ncells, ccap;
	uint32_t *hash; /* cell index + 1; 0 free */
	size_t hmask;
	int64_t from, to; /* the window (relative ns) */
	int ready;
};

/* Before src_open: the source s will feed t through tally_line (with t as
 * its arg). Tables are made at the first line, once channels are known. */
void tally_init(struct tally *t, struct src *s, enum tally_by by);
int tally_line(void *arg, enum src_side side, size_t row, size_t chan, int64_t time, int64_t value);
/* After src_play: closes every stretch at the end. -1 after a message. */
int tally_finish(struct tally *t);
/* The table in format. -1 after a message (write error). */
int tally_write(const struct tally *t, struct out *o, enum tally_format f);
void tally_free(struct tally *t);

#endif
