/* Model channels: most models keep a few channels per thread and show each
 * on the thread rows (through a track) and on the CPU rows (the channel of
 * the thread running there). A table of mchan_def says so once; this file
 * creates the channels, tracks, Paraver registrations, .pcf types and
 * views. */
#ifndef OVNI_EMU_MCHAN_H
#define OVNI_EMU_MCHAN_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"
#include "chan/track.h"
#include "emu/emu.h"
#include "paraver/pcf.h"

struct mchan_label {
	int64_t value;
	const char *label; /* NULL ends a list */
};

struct mchan_def {
	const char *name; /* channel "<model>.thread<g>.<name>" and view file */
	int stack; /* a stack channel (push/pop) instead of a single one */
	unsigned chan_flags; /* CHAN_* */
	int type; /* Paraver event type */
	unsigned prv_flags; /* PRV_* */
	int th_track; /* TRACK_ANY, TRACK_RUN, TRACK_ACT, or TRACK_NONE: no thread row */
	int cpu_track; /* TRACK_RUN, or TRACK_NONE: no CPU row */
	const char *title; /* .pcf label, before " of the RUNNING thread" */
	int bare_title; /* the .pcf label is the title alone (marks) */
	const struct mchan_label *labels; /* .pcf values, or NULL */
	int colors; /* CFG_* of the views */
	int task_type; /* task type values, labelled in the .pcf at the end */
};

struct mchan {
	struct emu *emu;
	char *model;
	const struct mchan_def *defs;
	size_t n;
	struct chan *th; /* raw channels: [thread gindex * n + i] */
	struct track *th_track; /* same index */
	struct track *cpu_track; /* [cpu gindex * n + i] */
	struct pcf_type **th_pcf, **cpu_pcf; /* per def (NULL without a row) */
	struct cfg_view **th_view, **cpu_view; /* per def */
};

/* Creates the raw channels of every thread (call from the create hook).
 * defs must outlive m. -1 after a message. */
int mchan_create(struct mchan *m, struct emu *e, const char *model,
		 const struct mchan_def *defs, size_t n);
/* Tracks, Paraver rows, .pcf types and views (call from the connect hook).
 * -1 after a message. */
int mchan_connect(struct mchan *m);
void mchan_free(struct mchan *m);

static inline struct chan *mchan_th(const struct mchan *m, size_t thread, size_t i)
{
	return &m->th[thread * m->n + i];
}

/* What the thread row / the CPU row shows of channel i. */
static inline struct chan *mchan_th_out(const struct mchan *m, size_t thread, size_t i)
{
	return m->th_track[thread * m->n + i].output;
}

static inline struct chan *mchan_cpu_out(const struct mchan *m, size_t cpu, size_t i)
{
	return m->cpu_track[cpu * m->n + i].output;
}

/* " of the RUNNING thread", " of the ACTIVE thread" or " " (ANY). */
const char *mchan_suffix(int mode);

#endif
