/* The emulation of `ovni emu`, read without writing Paraver files: the
 * thread and CPU rows arrive as a stream of value changes (the very lines
 * thread.prv and cpu.prv would hold, through a prv_tap), each Paraver type
 * described by its model, channel name, .pcf title and labels. `ovni
 * report` and `ovni export` read traces through it; no model is
 * implemented twice. */
#ifndef OVNI_REPORT_SOURCE_H
#define OVNI_REPORT_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "emu/emu.h"
#include "paraver/pcf.h"
#include "base/timearg.h"
#include "base/u32map.h"

enum src_side { SRC_THREAD, SRC_CPU, SRC_NSIDES };

/* A Paraver type of one side that the reader gets. */
struct src_chan {
	int type;
	char model[32], name[64]; /* from the view "<side>/<model>/<name>" */
	const char *title; /* the .pcf label of the type */
	unsigned flags; /* PVT_STACK, PVT_TASK_TYPE */
	const struct pcf_type *pcf; /* labels (complete only at the end) */
};

struct src_reader {
	/* A row's channel changes to value at time (relative ns); 0 is null.
	 * 0, or -1 after failf. */
	int (*line)(void *arg, enum src_side side, size_t row, size_t chan, int64_t time, int64_t value);
	void *arg;
};

struct src_opts {
	const char *tracedir;
	const char *model; /* only the channels of this model, or NULL */
	struct timewin win;
	int with_ids; /* also the types whose values are identifiers (task ids) */
};

struct src {
	struct emu emu;
	struct src_opts opts;
	struct src_reader rd;
	struct prv_tap taps[SRC_NSIDES];
	struct src_chan *chans[SRC_NSIDES];
	size_t nchans[SRC_NSIDES];
	int32_t *slot[SRC_NSIDES]; /* by type: index in chans, -1: not read */
	int maxtype[SRC_NSIDES];
	int ready; /* chans are set (at the first line, after every connect) */
	struct u32map type_labels; /* task type value -> label, as declared */
	int observing;
};

/* Loads the trace and connects the models (lines at time 0 already go to
 * rd). -1 after a message. */
int src_open(struct src *s, const struct src_opts *o, const struct src_reader *rd);
/* Plays every event (up to the window's end) and runs the end of the
 * models, so that the .pcf labels are complete. -1 after a message. */
int src_play(struct src *s);
void src_close(struct src *s);

/* The window in relative ns (INT64_MIN/INT64_MAX when open) and where the
 * played part ends. */
static inline int64_t src_from(const struct src *s) { return s->emu.win_from; }
static inline int64_t src_to(const struct src *s) { return s->emu.win_to; }
static inline int64_t src_end(const struct src *s) { return emu_end(&s->emu); }

/* The label of value on channel c, or NULL: the .pcf label, else for task
 * types the label declared so far. */
const char *src_label(const struct src *s, const struct src_chan *c, int64_t value);
/* The label, or the value in decimal in buf (24 bytes). */
const char *src_label_or_value(const struct src *s, const struct src_chan *c, int64_t value, char *buf);

#endif
