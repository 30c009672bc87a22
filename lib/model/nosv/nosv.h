/* The nosv model 'V' (spec emu.md 4.4): nOS-V tasks and their bodies, the
 * runtime's subsystems, idle states and the hardware counters a thread
 * reads (declared in the metadata, values in VWC events). Split in files:
 * nosv.c (channels, events, breakdown), tasks.c, hwc.c (counters). */
#ifndef OVNI_MODEL_NOSV_H
#define OVNI_MODEL_NOSV_H

#include <stddef.h>
#include <stdint.h>

#include "emu/emu.h"
#include "emu/mchan.h"
#include "model/breakdown.h"
#include "paraver/pvt.h"

/* Channels per thread, in the order the .pcf lists them. */
enum nosv_chan {
	NOSV_BODYID,
	NOSV_TASKID,
	NOSV_TYPE,
	NOSV_APPID,
	NOSV_SUBSYSTEM,
	NOSV_RANK,
	NOSV_IDLE,
	NOSV_NFIXED, /* then one per hardware counter */
};

/* Subsystem values (type 13). */
enum nosv_ss {
	NOSV_SS_UNKNOWN = 2,
	NOSV_SS_TASK_BODY = 11,
};

/* Idle values (type 16). */
enum nosv_idle {
	NOSV_PROGRESSING = 100,
	NOSV_RESTING = 101,
	NOSV_ABSORBING = 102,
};

/* The hardware counters of the trace (nosv.hwc in the metadata). */
struct nosv_hwc {
	size_t n;
	char **names; /* counter i is Paraver type 200 + i */
	char **chan_names; /* "hwc-<name>", for the channel and view file */
};

struct nosv {
	struct mchan ch;
	struct mchan_def *defs;
	struct nosv_hwc hwc;
	struct breakdown bd; /* -b */
	struct nosv_tasks *tasks;
};

extern const struct mchan_label nosv_ss_labels[], nosv_idle_labels[];

/* nosv.c: subsystem stack of a thread; leaving checks the current one. */
int nosv_ss_push(struct nosv *v, struct emu_thread *th, int64_t ss);
int nosv_ss_pop(struct nosv *v, struct emu_thread *th, int64_t ss);

/* tasks.c: task types (VYc), tasks and bodies (VT*). -1 after failf. */
int nosv_tasks_create(struct nosv *v, struct emu *e);
int nosv_task_event(struct nosv *v, struct emu *e);
int nosv_type_event(struct nosv *v, struct emu *e);
/* Labels of the task types in the .pcf files (also after a failure). */
int nosv_types_finish(struct nosv *v, struct emu *e);
/* -l at the end: no thread may be left inside a task body. */
int nosv_tasks_check(struct nosv *v, struct emu *e);
void nosv_tasks_free(struct nosv *v);

/* The data of a jumbo event (after its length). -1 after failf naming
 * what when the event is not jumbo. */
int nosv_jumbo(const struct emu *e, const char *what, const uint8_t **data, uint32_t *size);

/* hwc.c: reads nosv.hwc of every thread. -1 after a message. */
int nosv_hwc_load(struct nosv_hwc *h, struct emu *e);
void nosv_hwc_free(struct nosv_hwc *h);
/* The channel definitions of the counters, appended to defs. */
void nosv_hwc_defs(const struct nosv_hwc *h, struct mchan_def *defs);
/* Titles of the counter views (after mchan_connect). -1 after failf. */
int nosv_hwc_views(const struct nosv_hwc *h, struct mchan *m);
/* A VWC event: one int64 per counter. -1 after failf. */
int nosv_hwc_event(const struct nosv_hwc *h, struct mchan *m, struct emu *e);

/* -b: the breakdown trace when every thread says the runtime can
 * (nosv.can_breakdown), else a warning. -1 after a message. */
int nosv_breakdown_connect(struct nosv *v, struct emu *e);

#endif
