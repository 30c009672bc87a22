/* The nodes model 'D' (spec emu.md 4.5): the subsystem of the NODES
 * runtime (nOS-V based OmpSs-2) each thread is in, a stack of regions. */
#include "model/substack.h"
#include "paraver/prv.h"

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

static const struct mchan_def def = {
	.name = "subsystem", .stack = 1, .type = 30, .prv_flags = PRV_SKIPDUP,
	.th_track = TRACK_ACT, .cpu_track = TRACK_RUN,
	.title = "NODES subsystem", .labels = labels, .colors = CFG_CUSTOM,
};

static const struct substack_spec spec = {
	.id = 'D', .def = &def, .evs = evs, .nevs = sizeof(evs) / sizeof(evs[0]),
	.what = "nodes subsystem",
};

SUBSTACK_MODEL(emu_model_nodes, 'D', "nodes", "1.0.0", spec);
