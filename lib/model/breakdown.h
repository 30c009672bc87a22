/* A breakdown trace (-b, spec emu.md 4.6): one value per physical CPU,
 * derived by the model from its CPU rows, then sorted ascending so that the
 * rows draw a stacked histogram. Its own Paraver trace
 * "<model>-breakdown.prv/.pcf/.row", rows "~CPU %4d" counting down, one
 * .pcf type and its view cpu/<model>/breakdown.cfg.
 * Two ways to derive the value:
 * - muxes (openmp): breakdown_open, breakdown_mux per CPU (a second stage
 *   takes the first's output), breakdown_connect;
 * - task runtimes (nanos6, nosv): breakdown_init with a breakdown_def; the
 *   value reads three CPU rows at once (task type, subsystem, idle), which a
 *   mux cannot do, as only its picked input wakes it. */
#ifndef OVNI_MODEL_BREAKDOWN_H
#define OVNI_MODEL_BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"
#include "chan/mux.h"
#include "chan/sort.h"
#include "emu/emu.h"
#include "emu/mchan.h"
#include "paraver/pvt.h"

#define BREAKDOWN_STAGES 2

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
	size_t cpu; /* emu CPU gindex */
	struct breakdown *b;
	struct chan *type, *subsystem, *idle; /* task runtimes: the CPU rows */
	struct chan value; /* task runtimes: what this CPU adds */
	int pick_type; /* task runtimes: in a typed task body when the subsystem last changed */
	struct mux mux[BREAKDOWN_STAGES];
	struct chan out[BREAKDOWN_STAGES];
	int nstages;
};

struct breakdown {
	struct emu *e;
	struct pvt pvt;
	struct pcf_type *pcf; /* the one type */
	struct cfg_view *view;
	size_t nvalues; /* labelled so far: picks the next colour */
	int type;
	size_t n; /* physical CPUs = rows */
	struct breakdown_cpu *cpus;
	struct chan *sorted; /* the sort outputs, one per row */
	struct chan_sort sort;
	int sorting; /* the sort block is set up */
	struct breakdown_def def; /* task runtimes (def.ch set: the value channels exist) */
};

/* Opens OUTDIR/<model>-breakdown.{prv,pcf,row} with a row per physical
 * CPU, hands it to the loop, adds the .pcf type and the view. -1 after a
 * message. */
int breakdown_open(struct breakdown *b, struct emu *e, const char *model, int type, const char *label);
/* Opens and wires the breakdown of a task runtime (from the connect hook,
 * after mchan_connect). -1 after a message. */
int breakdown_init(struct breakdown *b, struct emu *e, const struct breakdown_def *def);
/* A value of the .pcf type, with the next colour of the view; no-op when
 * there is no breakdown. -1 after failf. */
int breakdown_add_value(struct breakdown *b, int64_t value, const char *label);
/* A mux stage for row input i (CPU b->cpus[i].cpu): select picks one of
 * the n inputs with fn (m->arg = arg). Returns its output, the CPU's value
 * unless a later stage follows, or NULL after a message. */
struct chan *breakdown_mux(struct breakdown *b, size_t i, struct chan *select, struct chan *const *inputs,
			   size_t n, mux_select_fn fn, void *arg);
/* Sorts the last stage of every CPU into the rows. -1 after a message. */
int breakdown_connect(struct breakdown *b);
void breakdown_free(struct breakdown *b);

#endif
