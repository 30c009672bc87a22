/* The breakdown trace of a task runtime (spec emu.md 4.6; nanos6, nosv):
 * one value per physical CPU -- the task type when a task body runs there
 * (decided when the subsystem changes), else the runtime subsystem (null:
 * Unknown), unless the CPU is not progressing, then its idle state -- and
 * the rows of
 * <name>.prv show those values sorted ascending, a stacked histogram of
 * what the CPUs do. */
#ifndef OVNI_MODEL_BREAKDOWN_H
#define OVNI_MODEL_BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"
#include "chan/sort.h"
#include "emu/emu.h"
#include "emu/mchan.h"
#include "paraver/pvt.h"

struct breakdown_def {
	const char *name; /* the trace: "nanos6-breakdown" */
	int type; /* Paraver event type */
	const char *title; /* .pcf type label */
	const char *view; /* view path under cfg/, without ".cfg" */
	const struct mchan *ch; /* the model's channels, connected */
	size_t ch_type, ch_subsystem, ch_idle; /* their indices in ch */
	int64_t body; /* subsystem value of a running task body */
	int64_t unknown; /* shown when the subsystem is null */
	int64_t progressing; /* idle value that shows the subsystem */
	const struct mchan_label *ss_labels, *idle_labels; /* .pcf values */
};

struct breakdown;

struct breakdown_cpu {
	struct breakdown *b;
	struct chan *type, *subsystem, *idle; /* the CPU rows of the model */
	struct chan value; /* what this CPU adds to the histogram */
	int pick_type; /* inside a task body with a type when the subsystem last changed */
};

struct breakdown {
	struct breakdown_def def;
	struct emu *emu;
	struct pvt *pvt; /* owned by the emulator once added */
	struct pcf_type *pcf;
	struct breakdown_cpu *cpus; /* physical CPUs */
	size_t n;
	struct chan *outs; /* the sorted rows */
	struct chan_sort sort;
	int started; /* rows written since the first change */
};

/* Opens the trace and wires it (from the connect hook, after
 * mchan_connect). -1 after a message. */
int breakdown_init(struct breakdown *b, struct emu *e, const struct breakdown_def *def);
/* A late .pcf value (task types); no-op when there is no breakdown. */
int breakdown_add_value(struct breakdown *b, int64_t value, const char *label);
void breakdown_free(struct breakdown *b);

#endif
