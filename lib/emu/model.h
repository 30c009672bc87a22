/* The model interface. A model is one file (or folder) under lib/model/
 * defining a `const struct emu_model emu_model_<name>` pointing at its
 * registry entry (trace/events.h) and one line in the table of
 * lib/emu/models.c. Hooks run for enabled models in the ASCII
 * order of their character (6 D K M O P T V), which also orders the types
 * in the .pcf files. Every hook returns 0, or -1 after failf() (event and
 * finish) or after a message (create, connect). docs/emu-internals.md
 * explains how to write one. */
#ifndef OVNI_EMU_MODEL_H
#define OVNI_EMU_MODEL_H

#include "trace/events.h"

struct emu;

#define MODEL_ALWAYS 1u /* enabled even if no thread requires it (ovni) */

struct emu_model {
	const struct model_info *info; /* id, name (as in ovni.require), version, events */
	unsigned flags;
	/* Allocates per-thread/CPU state (emu->mdata[id]) and channels. */
	int (*create)(struct emu *e);
	/* Connects channels to tracks and Paraver rows, adds .pcf types. */
	int (*connect)(struct emu *e);
	/* One event of this model: e->ev, e->th, e->proc, e->loom. */
	int (*event)(struct emu *e);
	/* At the end: checks (skipped when e->partial), late .pcf values. */
	int (*finish)(struct emu *e);
	/* Frees what create allocated; may run after a failed create. */
	void (*free)(struct emu *e);
};

/* The models, so that adding one to the table is one line there. */
extern const struct emu_model emu_model_nanos6, emu_model_nodes, emu_model_kernel, emu_model_mpi,
	emu_model_ovni, emu_model_openmp, emu_model_tampi, emu_model_nosv;

/* Every model, NULL terminated (lib/emu/models.c). */
extern const struct emu_model *const emu_models[];

#endif
