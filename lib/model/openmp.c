/* The openmp model 'P' (spec emu.md 4.5, 4.6): the subsystem of the
 * OpenMP runtime each thread is in, the label (task type or worksharing
 * construct) and the task it runs. All three are stacks shown on the
 * ACTIVE thread. Tasks go through the shared task/body model; they may
 * nest in a running one (with a warning) and run again after ending. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "emu/emu.h"
#include "emu/mchan.h"
#include "emu/sched.h"
#include "base/msg.h"
#include "model/breakdown.h"
#include "model/substack.h"
#include "model/task.h"
#include "paraver/prv.h"

enum { CH_SUBSYSTEM, CH_LABEL, CH_TASKID, CH_MAX };

enum { BREAKDOWN_TYPE = 53 };

static const struct substack_ev ss_evs[] = {
	{ "PBf", 1 }, { "PBj", 2 }, { "PBb", 3 }, { "PBt", 5 },
	{ "PIa", 6 }, { "PIr", 7 }, { "PI[", 8 },
	{ "PWd", 9 }, { "PWc", 10 }, { "PWy", 11 }, { "PWs", 12 }, { "PWe", 13 }, { "PWi", 14 },
	{ "PTa", 15 }, { "PTc", 16 }, { "PTd", 17 }, { "PTr", 18 }, { "PT[", 19 }, { "PTi", 20 },
	{ "PTs", 21 }, { "PTg", 22 }, { "PTt", 23 }, { "PTw", 24 }, { "PTy", 25 },
	{ "PA[", 26 }, { "PCf", 27 }, { "PCi", 28 }, { "PMi", 29 }, { "PMu", 30 }, { "PH[", 31 },
};

/* In the reference's order; 4 (spin wait) is listed but never shown. */
static const struct mchan_label ss_labels[] = {
	{ 9, "Work-distribution: Distribute" },
	{ 10, "Work-distribution: Dynamic for chunk" },
	{ 11, "Work-distribution: Dynamic for initialization" },
	{ 12, "Work-distribution: Static for chunk" },
	{ 13, "Work-distribution: Section" },
	{ 14, "Work-distribution: Single" },
	{ 15, "Task: Allocation" },
	{ 16, "Task: Check deps" },
	{ 17, "Task: Duplicating" },
	{ 18, "Task: Releasing deps" },
	{ 19, "Task: Running task" },
	{ 20, "Task: Running task if0" },
	{ 21, "Task: Scheduling" },
	{ 22, "Task: Taskgroup" },
	{ 23, "Task: Taskwait" },
	{ 24, "Task: Taskwait deps" },
	{ 25, "Task: Taskyield" },
	{ 6, "Critical: Acquiring" },
	{ 7, "Critical: Releasing" },
	{ 8, "Critical: Section" },
	{ 1, "Barrier: Fork" },
	{ 2, "Barrier: Join" },
	{ 3, "Barrier: Plain" },
	{ 5, "Barrier: Task" },
	{ 4, "Barrier: Spin wait" },
	{ 26, "Runtime: Attached" },
	{ 27, "Runtime: Fork call" },
	{ 28, "Runtime: Initialization" },
	{ 29, "Runtime: Internal microtask" },
	{ 30, "Runtime: User microtask" },
	{ 31, "Runtime: Worker main loop" },
	{ 0, NULL },
};

#define OPENMP_CHAN(nm, ty, ti, lb, col) \
	{ .name = nm, .stack = 1, .chan_flags = CHAN_ALLOW_DUP, .type = ty, \
	  .prv_flags = PRV_SKIPDUPNULL, .th_track = TRACK_ACT, .cpu_track = TRACK_RUN, \
	  .title = ti, .labels = lb, .colors = col }

static const struct mchan_def defs[CH_MAX] = {
	[CH_SUBSYSTEM] = OPENMP_CHAN("subsystem", 50, "OpenMP subsystem", ss_labels, CFG_CUSTOM),
	[CH_LABEL] = { .name = "label", .stack = 1, .chan_flags = CHAN_ALLOW_DUP, .type = 51,
		       .prv_flags = PRV_SKIPDUPNULL, .th_track = TRACK_ACT, .cpu_track = TRACK_RUN,
		       .title = "OpenMP label", .colors = CFG_CODE, .task_type = 1 },
	[CH_TASKID] = OPENMP_CHAN("task-id", 52, "OpenMP task ID", NULL, CFG_NULL_GRADIENT),
};

struct openmp {
	struct mchan ch;
	struct substack_map ss;
	struct task_table *procs; /* by process gindex */
	struct task_stack *stacks; /* by thread gindex */
	struct breakdown bd; /* -b */
};

static int create(struct emu *e)
{
	struct openmp *o = calloc(1, sizeof(*o));
	if (!o) {
		msg_err("out of memory");
		return -1;
	}
	e->mdata['P'] = o;
	o->procs = calloc(e->sys.nprocs + 1, sizeof(*o->procs));
	o->stacks = calloc(e->nthreads + 1, sizeof(*o->stacks));
	if (!o->procs || !o->stacks) {
		msg_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < e->sys.nprocs; i++)
		task_table_init(&o->procs[i]);
	for (size_t i = 0; i < e->nthreads; i++)
		task_stack_init(&o->stacks[i]);
	if (substack_map_init(&o->ss, ss_evs, sizeof(ss_evs) / sizeof(ss_evs[0])) != 0)
		return -1;
	return mchan_create(&o->ch, e, "openmp", defs, CH_MAX);
}

/* The breakdown shows the label of a CPU when it has one, else the
 * subsystem: input 1 or input 0 of a mux selected by the label. */
static int pick_label(struct mux *m, struct value sel, struct mux_input **out)
{
	*out = &m->inputs[value_is_null(sel) ? 0 : 1];
	return 0;
}

static int connect(struct emu *e)
{
	struct openmp *o = emu_data(e, 'P');
	if (mchan_connect(&o->ch) != 0)
		return -1;
	if (!e->opts.breakdown)
		return 0;
	if (breakdown_open(&o->bd, e, "openmp", BREAKDOWN_TYPE,
			   "CPU: OpenMP Runtime/Label breakdown") != 0)
		return -1;
	for (size_t i = 0; i < o->bd.n; i++) {
		size_t cpu = o->bd.cpus[i].cpu;
		struct chan *label = mchan_cpu_out(&o->ch, cpu, CH_LABEL);
		struct chan *ins[2] = { mchan_cpu_out(&o->ch, cpu, CH_SUBSYSTEM), label };
		if (!breakdown_mux(&o->bd, i, label, ins, 2, pick_label, NULL))
			return -1;
	}
	if (breakdown_connect(&o->bd) != 0)
		return -1;
	for (const struct mchan_label *l = ss_labels; l->label; l++) {
		if (breakdown_add_value(&o->bd, l->value, l->label) != 0) {
			msg_err("openmp breakdown: %s", fail_reason());
			return -1;
		}
	}
	return 0;
}

static uint32_t read_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int need_payload(const struct emu *e, uint32_t size)
{
	if (emu_payload_size(e) != size)
		return failf("the event needs %" PRIu32 " payload bytes, not %" PRIu32, size,
			     emu_payload_size(e));
	return 0;
}

/* POc: type id and label of a task or worksharing construct. */
static int declare_type(struct emu *e, struct task_table *tt)
{
	uint32_t size = emu_payload_size(e);
	const uint8_t *p = emu_payload(e);
	if (!(e->ev->flags & EV_FLAG_JUMBO) || size < 8)
		return failf("a type declaration needs a jumbo payload with the type id and label");
	const char *label = (const char *)p + 8;
	const char *nul = memchr(label, 0, size - 8);
	if (!nul)
		return failf("the label of type %" PRIu32 " does not end with a NUL byte", read_u32(p + 4));
	return task_type_declare(tt, read_u32(p + 4), label, (size_t)(nul - label));
}

static const struct task_type *find_type(const struct task_table *tt, uint32_t id)
{
	const struct task_type *ty = task_type_find(tt, id);
	if (!ty)
		failf("type %" PRIu32 " is not declared in this process", id);
	return ty;
}

/* PPx / PPe: the task id and its label. */
static int run_task(struct openmp *o, struct emu *e, struct task_table *tt, int start)
{
	if (need_payload(e, 4) != 0)
		return -1;
	uint32_t id = read_u32(emu_payload(e));
	struct task_stack *s = &o->stacks[e->th->gindex];
	struct chan *taskid = mchan_th(&o->ch, e->th->gindex, CH_TASKID);
	struct chan *label = mchan_th(&o->ch, e->th->gindex, CH_LABEL);
	if (start) {
		if (task_execute(tt, s, id, 0) != 0)
			return -1;
		struct body *b = task_stack_top(s);
		if (chan_push(taskid, value_int64(id)) != 0)
			return -1;
		return chan_push(label, value_int64(b->task->type->value));
	}
	struct body *b = task_stack_top(s);
	int64_t value = b && b->task->id == id ? b->task->type->value : 0;
	if (task_end(tt, s, id, 0) != 0 || chan_pop(taskid, value_int64(id)) != 0)
		return -1;
	return chan_pop(label, value_int64(value));
}

static int task_event(struct openmp *o, struct emu *e, struct task_table *tt, uint8_t v)
{
	const uint8_t *p = emu_payload(e);
	switch (v) {
	case 'c':
		if (need_payload(e, 8) != 0)
			return -1;
		return task_create(tt, read_u32(p), read_u32(p + 4), TASK_RESURRECT | TASK_RELAX_NESTING);
	case 'x': return run_task(o, e, tt, 1);
	case 'e': return run_task(o, e, tt, 0);
	}
	return failf("unknown openmp task event");
}

/* PQx / PQe: the label of a worksharing construct. */
static int ws_event(struct openmp *o, struct emu *e, struct task_table *tt, uint8_t v)
{
	if (v != 'x' && v != 'e')
		return failf("unknown openmp worksharing event");
	if (need_payload(e, 4) != 0)
		return -1;
	const struct task_type *ty = find_type(tt, read_u32(emu_payload(e)));
	if (!ty)
		return -1;
	struct chan *c = mchan_th(&o->ch, e->th->gindex, CH_LABEL);
	return v == 'x' ? chan_push(c, value_int64(ty->value)) : chan_pop(c, value_int64(ty->value));
}

static int event(struct emu *e)
{
	struct openmp *o = emu_data(e, 'P');
	struct emu_thread *th = e->th;
	const uint8_t *mcv = e->ev->mcv;
	struct task_table *tt = &o->procs[e->proc->gindex];
	if (!th->is_running)
		return failf("thread %" PRId64 " is %s: openmp events need a Running thread", th->tid,
			     th_state_name(th->state));
	switch (mcv[1]) {
	case 'O':
		if (mcv[2] != 'c')
			return failf("unknown openmp type event");
		return declare_type(e, tt);
	case 'P': return task_event(o, e, tt, mcv[2]);
	case 'Q': return ws_event(o, e, tt, mcv[2]);
	case 'B':
		if (mcv[2] == 's' || mcv[2] == 'S')
			return 0; /* spin waits inside barriers are not shown */
		break;
	}
	int op = substack_map_op(&o->ss, mcv);
	if (!op)
		return failf("unknown openmp event");
	return substack_apply(mchan_th(&o->ch, th->gindex, CH_SUBSYSTEM), op);
}

static int finish(struct emu *e)
{
	struct openmp *o = emu_data(e, 'P');
	if (task_types_label(o->procs, e->sys.nprocs, &o->ch, CH_LABEL, &o->bd, 0) != 0)
		return -1;
	if (e->partial || !e->opts.lint)
		return 0;
	/* an open task first: its label is on the stack too */
	if (substack_lint(&o->ch, CH_TASKID, "openmp task") != 0 ||
	    substack_lint(&o->ch, CH_LABEL, "openmp label") != 0)
		return -1;
	return substack_lint(&o->ch, CH_SUBSYSTEM, "openmp subsystem");
}

static void openmp_free(struct emu *e)
{
	struct openmp *o = emu_data(e, 'P');
	breakdown_free(&o->bd);
	mchan_free(&o->ch);
	task_tables_free(o->procs, e->sys.nprocs, o->stacks, e->nthreads);
	free(o);
	e->mdata['P'] = NULL;
}

const struct emu_model emu_model_openmp = {
	.info = &model_openmp,
	.create = create,
	.connect = connect,
	.event = event,
	.finish = finish,
	.free = openmp_free,
};
