/* The nodes model 'D' (spec emu.md 4.5): the subsystem of the NODES
 * runtime (nOS-V based OmpSs-2) each thread is in, a stack of regions. */
#include "model/substack.h"

static const struct substack_ev evs[] = {
	{ "DR[", 1 }, { "DU[", 2 }, { "DW[", 3 }, { "DI[", 4 },
	{ "DT[", 5 }, { "DC[", 6 }, { "DS[", 7 }, { "DP[", 8 },
};

static const struct mchan_label labels[] = {
	{ 1, "Dependencies: Registering task accesses" },
	{ 2, "Dependencies: Unregistering task accesses" },
	{ 3, "If0: Waiting for an If0 task" },
	{ 4, "If0: Executing an If0 task inline" },
	{ 5, "Taskwait: Taskwait" },
	{ 6, "Add Task: Creating a task" },
	{ 7, "Add Task: Submitting a task" },
	{ 8, "Spawn Function: Spawning a function" },
	{ 0, NULL },
};

static const struct substack_spec spec = {
	.info = &model_nodes, .evs = evs, .nevs = sizeof(evs) / sizeof(evs[0]), .labels = labels,
	.chan = "subsystem", .type = 30, .th_track = TRACK_ACT,
	.title = "NODES subsystem", .what = "nodes subsystem",
};

SUBSTACK_MODEL(emu_model_nodes, model_nodes, spec);
