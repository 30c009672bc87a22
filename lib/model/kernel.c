/* The kernel model 'K' (spec emu.md 4.5): context switches. KCO takes the
 * thread out of its CPU, KCI brings it back; the thread keeps its ovni
 * state, but the ovni and nosv models refuse its events meanwhile. */
#include <inttypes.h>
#include <stdlib.h>

#include "base/fail.h"
#include "emu/emu.h"
#include "emu/mchan.h"
#include "base/msg.h"
#include "paraver/prv.h"

enum { CS_OUT = 3 }; /* the value shown while out of the CPU */

static const struct mchan_label cs_labels[] = {
	{ CS_OUT, "Context switch: Out of the CPU" },
	{ 0, NULL },
};

static const struct mchan_def defs[] = {
	{
		.name = "context-switch", .stack = 1, .type = 45, .prv_flags = PRV_SKIPDUP,
		.th_track = TRACK_ANY, .cpu_track = TRACK_RUN,
		.title = "Kernel context switch", .labels = cs_labels, .colors = CFG_CUSTOM,
	},
};

static int create(struct emu *e)
{
	struct mchan *m = calloc(1, sizeof(*m));
	if (!m) {
		msg_err("out of memory");
		return -1;
	}
	e->mdata['K'] = m;
	return mchan_create(m, e, "kernel", defs, 1);
}

static int connect(struct emu *e)
{
	return mchan_connect(emu_data(e, 'K'));
}

static int event(struct emu *e)
{
	struct emu_thread *th = e->th;
	struct chan *c = mchan_th(emu_data(e, 'K'), th->gindex, 0);
	const uint8_t *mcv = e->ev->mcv;
	if (mcv[1] != 'C' || (mcv[2] != 'O' && mcv[2] != 'I'))
		return failf("unknown kernel event");
	if (mcv[2] == 'O') {
		if (th->out_of_cpu)
			return failf("thread %" PRId64 " leaves the CPU twice", th->tid);
		th->out_of_cpu = 1;
		return chan_push(c, value_int64(CS_OUT));
	}
	if (!th->out_of_cpu)
		return failf("thread %" PRId64 " comes back to a CPU it did not leave", th->tid);
	th->out_of_cpu = 0;
	return chan_pop(c, value_int64(CS_OUT));
}

static void kernel_free(struct emu *e)
{
	struct mchan *m = emu_data(e, 'K');
	mchan_free(m);
	free(m);
	e->mdata['K'] = NULL;
}

const struct emu_model emu_model_kernel = {
	.info = &model_kernel,
	.create = create,
	.connect = connect,
	.event = event,
	.free = kernel_free,
};
