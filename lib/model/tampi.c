/* The tampi model 'T' (spec emu.md 4.5): the subsystem of the Task-Aware
 * MPI library each thread is in, a stack of regions. */
#include "model/substack.h"

static const struct substack_ev evs[] = {
	{ "TCi", 1 }, { "TGc", 2 }, { "TLi", 3 }, { "TLp", 4 }, { "TQa", 5 }, { "TQt", 6 },
	{ "TRc", 7 }, { "TRt", 8 }, { "TRa", 9 }, { "TRs", 10 }, { "TTc", 11 }, { "TTw", 12 },
};

/* In the reference's order (8 before 7). */
static const struct mchan_label labels[] = {
	{ 1, "Communication: Issuing a non-blocking operation" },
	{ 2, "Global array: Checking pending requests" },
	{ 3, "Library code: Interface function" },
	{ 4, "Library code: Polling function" },
	{ 5, "Queue: Adding to a queue" },
	{ 6, "Queue: Transfering to global array" },
	{ 8, "Request: Testing a request" },
	{ 7, "Request: Processing a completed request" },
	{ 9, "Request: Testing all requests" },
	{ 10, "Request: Testing some requests" },
	{ 11, "Ticket: Creating a ticket" },
	{ 12, "Ticket: Waiting a ticket" },
	{ 0, NULL },
};

static const struct substack_spec spec = {
	.info = &model_tampi, .evs = evs, .nevs = sizeof(evs) / sizeof(evs[0]), .labels = labels,
	.chan = "subsystem", .type = 20, .th_track = TRACK_ACT,
	.title = "TAMPI subsystem", .what = "tampi subsystem",
};

SUBSTACK_MODEL(emu_model_tampi, model_tampi, spec);
