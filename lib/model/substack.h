/* Stacks of regions driven by pairs of events (spec emu.md 4.5): an event
 * opens a region (pushes its value on a stack channel of the thread) and
 * its partner closes it (pops the value). The closing MCV is the opening
 * one with the last byte in upper case, or ']' for '['. The tampi, mpi and
 * nodes models are one such stack each (SUBSTACK_MODEL); openmp uses the
 * event map for its subsystem. */
#ifndef OVNI_MODEL_SUBSTACK_H
#define OVNI_MODEL_SUBSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "emu/emu.h"
#include "emu/mchan.h"
#include "emu/model.h"

/* An opening event and the value it pushes (> 0). */
struct substack_ev {
	const char *mcv; /* "TCi" */
	int value;
};

/* What an MCV does: +value opens, -value closes, 0 is not in the map. */
struct substack_map {
	int16_t op[128][128]; /* by the second and third MCV bytes */
};

int substack_map_init(struct substack_map *m, const struct substack_ev *evs, size_t n);

static inline int substack_map_op(const struct substack_map *m, const uint8_t *mcv)
{
	if (mcv[1] >= 128 || mcv[2] >= 128)
		return 0;
	return m->op[mcv[1]][mcv[2]];
}

/* Pushes or pops c by op (from substack_map_op, not 0). -1 after failf. */
static inline int substack_apply(struct chan *c, int op)
{
	return op > 0 ? chan_push(c, value_int64(op)) : chan_pop(c, value_int64(-op));
}

/* The -l check: channel i of every thread is empty, else failf naming the
 * thread and how many "what" (e.g. "tampi subsystem") are left. */
int substack_lint(const struct mchan *ch, size_t i, const char *what);

/* A model that is just one stack channel (PRV_SKIPDUP, CPU rows RUN,
 * colours per label), changed by a Running thread. */
struct substack_spec {
	const struct model_info *info;
	const struct substack_ev *evs;
	size_t nevs;
	const struct mchan_label *labels; /* .pcf values */
	const char *chan; /* channel and view name */
	int type; /* Paraver event type */
	int th_track; /* TRACK_ACT or TRACK_RUN */
	const char *title; /* .pcf label before the track suffix */
	const char *what; /* what the stack holds, singular, for messages */
};

int substack_create(struct emu *e, const struct substack_spec *s);
int substack_connect(struct emu *e, char id);
int substack_event(struct emu *e, char id);
int substack_finish(struct emu *e, char id);
void substack_free(struct emu *e, char id);

/* Defines `const struct emu_model var` for the spec `spec` (of model ID). */
#define SUBSTACK_MODEL(var, INFO, spec) \
	static int var##_create(struct emu *e) { return substack_create(e, &(spec)); } \
	static int var##_connect(struct emu *e) { return substack_connect(e, (spec).info->id); } \
	static int var##_event(struct emu *e) { return substack_event(e, (spec).info->id); } \
	static int var##_finish(struct emu *e) { return substack_finish(e, (spec).info->id); } \
	static void var##_free(struct emu *e) { substack_free(e, (spec).info->id); } \
	const struct emu_model var = { \
		.info = &(INFO), \
		.create = var##_create, .connect = var##_connect, .event = var##_event, \
		.finish = var##_finish, .free = var##_free, \
	}

#endif
