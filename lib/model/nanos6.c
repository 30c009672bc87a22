/* The nanos6 model '6' (spec emu.md 4.2): tasks (through lib/model/task.h),
 * the runtime subsystem stack, thread types and idle states of the Nanos6
 * runtime; with -b also the CPU breakdown trace (4.6). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "emu/emu.h"
#include "emu/mchan.h"
#include "base/msg.h"
#include "model/breakdown.h"
#include "model/task.h"
#include "paraver/prv.h"
#include "trace/stream.h"

enum { CH_TASKID, CH_TYPE, CH_SUBSYSTEM, CH_RANK, CH_THREAD, CH_IDLE, CH_MAX };

enum subsystem {
	SS_BODY = 1, SS_UNKNOWN = 2, SS_CREATING = 3, SS_SUBMIT = 4, SS_SPAWN = 5,
	SS_TASKFOR = 6, SS_ADD_READY = 7, SS_PROCESS_READY = 8, SS_SERVING = 9,
	SS_DEP_REG = 10, SS_DEP_UNREG = 11, SS_TASKWAIT = 12, SS_WAITFOR = 13,
	SS_BLOCKING = 14, SS_UNBLOCKING = 15, SS_ALLOC = 16, SS_FREE = 17,
	SS_HANDLING = 18, SS_LOOKING = 19, SS_SWITCH = 20, SS_MIGRATE = 21,
	SS_SUSPEND = 22, SS_RESUME = 23, SS_SPONGE = 24,
};

enum idle { IDLE_PROGRESSING = 100, IDLE_RESTING = 101, IDLE_ABSORBING = 102 };

static const struct mchan_label ss_labels[] = {
	{ SS_UNKNOWN, "Unknown subsystem" },
	{ SS_BODY, "Task: Running body" },
	{ SS_CREATING, "Task: Creating" },
	{ SS_SUBMIT, "Task: Submitting" },
	{ SS_SPAWN, "Task: Spawning function" },
	{ SS_TASKFOR, "Task: Running task for" },
	{ SS_SERVING, "Scheduler: Serving tasks" },
	{ SS_ADD_READY, "Scheduler: Adding ready tasks" },
	{ SS_PROCESS_READY, "Scheduler: Processing ready tasks" },
	{ SS_DEP_REG, "Dependency: Registering" },
	{ SS_DEP_UNREG, "Dependency: Unregistering" },
	{ SS_TASKWAIT, "Blocking: Taskwait" },
	{ SS_BLOCKING, "Blocking: Blocking current task" },
	{ SS_UNBLOCKING, "Blocking: Unblocking remote task" },
	{ SS_WAITFOR, "Blocking: Wait for deadline" },
	{ SS_HANDLING, "Worker: Handling task" },
	{ SS_LOOKING, "Worker: Looking for work" },
	{ SS_SWITCH, "Worker: Switching to another thread" },
	{ SS_MIGRATE, "Worker: Migrating CPU" },
	{ SS_SUSPEND, "Worker: Suspending thread" },
	{ SS_RESUME, "Worker: Resuming another thread" },
	{ SS_SPONGE, "Worker: Sponge mode" },
	{ SS_ALLOC, "Memory: Allocating" },
	{ SS_FREE, "Memory: Freeing" },
	/* Values of older versions, still in the reference's .pcf. */
	{ 61, "EV Scheduler: Send task" },
	{ 60, "EV Scheduler: Recv task" },
	{ 62, "EV Scheduler: Self-assign task" },
	{ 63, "EV CPU: Becomes idle" },
	{ 64, "EV CPU: Becomes active" },
	{ 65, "EV Worker: Waking another thread" },
	{ 0, NULL },
};

static const struct mchan_label thread_labels[] = {
	{ 4, "External" },
	{ 3, "Worker" },
	{ 1, "Leader" },
	{ 2, "Main" },
	{ 0, NULL },
};

static const struct mchan_label idle_labels[] = {
	{ IDLE_PROGRESSING, "Progressing" },
	{ IDLE_RESTING, "Resting" },
	{ IDLE_ABSORBING, "Absorbing noise" },
	{ 0, NULL },
};

static const struct mchan_def defs[CH_MAX] = {
	[CH_TASKID] = {
		.name = "task-id", .type = 35, .prv_flags = PRV_SKIPDUP,
		.th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
		.title = "Nanos6 task ID", .colors = CFG_NULL_GRADIENT,
	},
	[CH_TYPE] = {
		.name = "task-type", .chan_flags = CHAN_ALLOW_DUP, .type = 36, .prv_flags = PRV_EMITDUP,
		.th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
		.title = "Nanos6 task type", .colors = CFG_CODE, .task_type = 1,
	},
	[CH_SUBSYSTEM] = {
		.name = "subsystem", .stack = 1, .type = 37, .prv_flags = PRV_SKIPDUP,
		.th_track = TRACK_ACT, .cpu_track = TRACK_RUN,
		.title = "Nanos6 subsystem", .labels = ss_labels, .colors = CFG_CUSTOM,
	},
	[CH_RANK] = {
		.name = "mpi-rank", .chan_flags = CHAN_ALLOW_DUP, .type = 38, .prv_flags = PRV_EMITDUP,
		.th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
		.title = "Nanos6 task MPI rank", .colors = CFG_CODE,
	},
	[CH_THREAD] = {
		.name = "thread-type", .stack = 1, .type = 39, .prv_flags = PRV_SKIPDUP,
		.th_track = TRACK_ANY, .cpu_track = TRACK_RUN,
		.title = "Nanos6 thread type", .labels = thread_labels, .colors = CFG_CUSTOM,
	},
	[CH_IDLE] = {
		.name = "idle", .type = 40, .prv_flags = PRV_SKIPDUP,
		.th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
		.title = "Nanos6 idle state", .labels = idle_labels, .colors = CFG_CUSTOM,
	},
};

/* What a plain event does to a channel. */
enum op { OP_PUSH, OP_POP, OP_SET, OP_IGNORE };

struct action {
	const char mv[3]; /* category and value of the MCV */
	uint8_t op; /* enum op */
	uint8_t ch;
	int16_t value;
};

static const struct action actions[] = {
	{ "W[", OP_PUSH, CH_SUBSYSTEM, SS_LOOKING }, { "W]", OP_POP, CH_SUBSYSTEM, SS_LOOKING },
	{ "Wt", OP_PUSH, CH_SUBSYSTEM, SS_HANDLING }, { "WT", OP_POP, CH_SUBSYSTEM, SS_HANDLING },
	{ "Ww", OP_PUSH, CH_SUBSYSTEM, SS_SWITCH }, { "WW", OP_POP, CH_SUBSYSTEM, SS_SWITCH },
	{ "Wm", OP_PUSH, CH_SUBSYSTEM, SS_MIGRATE }, { "WM", OP_POP, CH_SUBSYSTEM, SS_MIGRATE },
	{ "Ws", OP_PUSH, CH_SUBSYSTEM, SS_SUSPEND }, { "WS", OP_POP, CH_SUBSYSTEM, SS_SUSPEND },
	{ "Wr", OP_PUSH, CH_SUBSYSTEM, SS_RESUME }, { "WR", OP_POP, CH_SUBSYSTEM, SS_RESUME },
	{ "Wg", OP_PUSH, CH_SUBSYSTEM, SS_SPONGE }, { "WG", OP_POP, CH_SUBSYSTEM, SS_SPONGE },
	{ "W*", OP_IGNORE, 0, 0 },
	{ "C[", OP_PUSH, CH_SUBSYSTEM, SS_CREATING }, { "C]", OP_POP, CH_SUBSYSTEM, SS_CREATING },
	{ "U[", OP_PUSH, CH_SUBSYSTEM, SS_SUBMIT }, { "U]", OP_POP, CH_SUBSYSTEM, SS_SUBMIT },
	{ "F[", OP_PUSH, CH_SUBSYSTEM, SS_SPAWN }, { "F]", OP_POP, CH_SUBSYSTEM, SS_SPAWN },
	{ "O[", OP_PUSH, CH_SUBSYSTEM, SS_TASKFOR }, { "O]", OP_POP, CH_SUBSYSTEM, SS_TASKFOR },
	{ "t[", OP_IGNORE, 0, 0 }, { "t]", OP_IGNORE, 0, 0 },
	{ "Ma", OP_PUSH, CH_SUBSYSTEM, SS_ALLOC }, { "MA", OP_POP, CH_SUBSYSTEM, SS_ALLOC },
	{ "Mf", OP_PUSH, CH_SUBSYSTEM, SS_FREE }, { "MF", OP_POP, CH_SUBSYSTEM, SS_FREE },
	{ "Dr", OP_PUSH, CH_SUBSYSTEM, SS_DEP_REG }, { "DR", OP_POP, CH_SUBSYSTEM, SS_DEP_REG },
	{ "Du", OP_PUSH, CH_SUBSYSTEM, SS_DEP_UNREG }, { "DU", OP_POP, CH_SUBSYSTEM, SS_DEP_UNREG },
	{ "S[", OP_PUSH, CH_SUBSYSTEM, SS_SERVING }, { "S]", OP_POP, CH_SUBSYSTEM, SS_SERVING },
	{ "Sa", OP_PUSH, CH_SUBSYSTEM, SS_ADD_READY }, { "SA", OP_POP, CH_SUBSYSTEM, SS_ADD_READY },
	{ "Sp", OP_PUSH, CH_SUBSYSTEM, SS_PROCESS_READY }, { "SP", OP_POP, CH_SUBSYSTEM, SS_PROCESS_READY },
	{ "S@", OP_IGNORE, 0, 0 }, { "Sr", OP_IGNORE, 0, 0 }, { "Ss", OP_IGNORE, 0, 0 },
	{ "Bb", OP_PUSH, CH_SUBSYSTEM, SS_BLOCKING }, { "BB", OP_POP, CH_SUBSYSTEM, SS_BLOCKING },
	{ "Bu", OP_PUSH, CH_SUBSYSTEM, SS_UNBLOCKING }, { "BU", OP_POP, CH_SUBSYSTEM, SS_UNBLOCKING },
	{ "Bw", OP_PUSH, CH_SUBSYSTEM, SS_TASKWAIT }, { "BW", OP_POP, CH_SUBSYSTEM, SS_TASKWAIT },
	{ "Bf", OP_PUSH, CH_SUBSYSTEM, SS_WAITFOR }, { "BF", OP_POP, CH_SUBSYSTEM, SS_WAITFOR },
	{ "Pp", OP_SET, CH_IDLE, IDLE_PROGRESSING },
	{ "Pr", OP_SET, CH_IDLE, IDLE_RESTING },
	{ "Pa", OP_SET, CH_IDLE, IDLE_ABSORBING },
	{ "Hl", OP_PUSH, CH_THREAD, 1 }, { "HL", OP_POP, CH_THREAD, 1 },
	{ "Hm", OP_PUSH, CH_THREAD, 2 }, { "HM", OP_POP, CH_THREAD, 2 },
	{ "Hw", OP_PUSH, CH_THREAD, 3 }, { "HW", OP_POP, CH_THREAD, 3 },
	{ "He", OP_PUSH, CH_THREAD, 4 }, { "HE", OP_POP, CH_THREAD, 4 },
};

struct nanos6 {
	struct mchan ch;
	struct task_table *procs; /* by process gindex */
	struct task_stack *stacks; /* by thread gindex */
	/* actions by category and value byte; 0 = unknown, else index + 1 */
	uint8_t action_of[128][128];
	struct breakdown bd;
	int warned_old_create;
};

static uint32_t read_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int create(struct emu *e)
{
	struct nanos6 *n = calloc(1, sizeof(*n));
	if (!n) {
		msg_err("out of memory");
		return -1;
	}
	e->mdata['6'] = n;
	n->procs = calloc(e->sys.nprocs + 1, sizeof(*n->procs));
	n->stacks = calloc(e->nthreads + 1, sizeof(*n->stacks));
	if (!n->procs || !n->stacks) {
		msg_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < e->sys.nprocs; i++)
		task_table_init(&n->procs[i]);
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		n->action_of[(unsigned char)actions[i].mv[0]][(unsigned char)actions[i].mv[1]] = (uint8_t)(i + 1);
	if (mchan_create(&n->ch, e, "nanos6", defs, CH_MAX) != 0)
		return -1;
	/* Every thread starts progressing (shown from time 0). */
	for (size_t t = 0; t < e->nthreads; t++)
		if (chan_set(mchan_th(&n->ch, t, CH_IDLE), value_int64(IDLE_PROGRESSING)) != 0) {
			msg_err("%s", fail_reason());
			return -1;
		}
	return 0;
}

static int connect(struct emu *e)
{
	struct nanos6 *n = emu_data(e, '6');
	if (mchan_connect(&n->ch) != 0)
		return -1;
	/* A CPU where nothing runs is resting. */
	for (size_t c = 0; c < e->ncpus; c++)
		mux_set_default(&n->ch.cpu_track[c * CH_MAX + CH_IDLE].mux, value_int64(IDLE_RESTING));
	if (!e->opts.breakdown)
		return 0;
	struct breakdown_def bd = {
		.name = "nanos6-breakdown", .type = 41,
		.title = "CPU: Nanos6 Runtime/Idle/Task breakdown",
		.view = "cpu/nanos6/breakdown",
		.ch = &n->ch, .ch_type = CH_TYPE, .ch_subsystem = CH_SUBSYSTEM, .ch_idle = CH_IDLE,
		.body = SS_BODY, .unknown = SS_UNKNOWN, .progressing = IDLE_PROGRESSING,
		.ss_labels = ss_labels, .idle_labels = idle_labels,
	};
	return breakdown_init(&n->bd, e, &bd);
}

/* The task channels show the body running on top of the thread's stack. */
static int show_task(struct emu *e, struct nanos6 *n)
{
	size_t g = e->th->gindex;
	const struct body *b = task_stack_running(&n->stacks[g]);
	struct value id = value_null(), type = value_null(), rank = value_null();
	if (b) {
		id = value_int64(b->task->id);
		type = value_int64(b->task->type->value);
		rank = value_int64(e->proc->rank + 1);
	}
	if (chan_set(mchan_th(&n->ch, g, CH_TASKID), id) != 0 ||
	    chan_set(mchan_th(&n->ch, g, CH_TYPE), type) != 0)
		return -1;
	if (!e->proc->has_rank)
		return 0;
	return chan_set(mchan_th(&n->ch, g, CH_RANK), rank);
}

static int declare_type(struct emu *e, struct nanos6 *n)
{
	if (!(e->ev->flags & EV_FLAG_JUMBO))
		return failf("a task type declaration must be a jumbo event");
	/* A jumbo payload starts with its length. */
	const uint8_t *p = emu_payload(e) + 4;
	uint32_t size = emu_payload_size(e) - 4;
	if (size < 5)
		return failf("a task type declaration needs a type id and a label, got %" PRIu32 " bytes", size);
	const char *label = (const char *)p + 4;
	size_t len = strnlen(label, size - 4);
	if (len == size - 4)
		return failf("the label of task type %" PRIu32 " does not end with a NUL byte", read_u32(p));
	return task_type_declare(&n->procs[e->proc->gindex], read_u32(p), label, len);
}

static int task_event(struct emu *e, struct nanos6 *n, uint8_t v)
{
	const uint8_t *p = emu_payload(e);
	uint32_t size = emu_payload_size(e);
	struct task_table *t = &n->procs[e->proc->gindex];
	struct task_stack *s = &n->stacks[e->th->gindex];
	struct chan *ss = mchan_th(&n->ch, e->th->gindex, CH_SUBSYSTEM);
	if (v == 'C') {
		if (!n->warned_old_create)
			msg_warn("ignoring the obsolete task creation event 6TC");
		n->warned_old_create = 1;
		return 0;
	}
	if (v == 'c') {
		if (size != 8)
			return failf("a task creation needs 8 bytes (task id, type id), not %" PRIu32, size);
		return task_create(t, read_u32(p), read_u32(p + 4), TASK_PAUSE | TASK_RELAX_NESTING);
	}
	if (size != 4)
		return failf("this task event needs 4 bytes (the task id), not %" PRIu32, size);
	uint32_t id = read_u32(p);
	switch (v) {
	case 'x':
		if (task_execute(t, s, id, 0) != 0 || chan_push(ss, value_int64(SS_BODY)) != 0)
			return -1;
		break;
	case 'e':
		if (task_end(t, s, id, 0) != 0 || chan_pop(ss, value_int64(SS_BODY)) != 0)
			return -1;
		break;
	case 'p':
		if (task_pause(t, s, id, 0) != 0)
			return -1;
		break;
	case 'r':
		if (task_resume(t, s, id, 0) != 0)
			return -1;
		break;
	default:
		return failf("unknown nanos6 task event");
	}
	return show_task(e, n);
}

static int event(struct emu *e)
{
	struct nanos6 *n = emu_data(e, '6');
	struct emu_thread *th = e->th;
	const uint8_t *mcv = e->ev->mcv;
	if (!th->is_active)
		return failf("thread %" PRId64 " is not active (Running, Cooling or Warming): "
			     "it cannot emit nanos6 events", th->tid);
	if (mcv[1] == 'T')
		return task_event(e, n, mcv[2]);
	if (mcv[1] == 'Y') {
		if (mcv[2] != 'c')
			return failf("unknown nanos6 type event");
		return declare_type(e, n);
	}
	unsigned a = (mcv[1] < 128 && mcv[2] < 128) ? n->action_of[mcv[1]][mcv[2]] : 0;
	if (!a)
		return failf("unknown nanos6 event");
	const struct action *act = &actions[a - 1];
	struct chan *c = mchan_th(&n->ch, th->gindex, act->ch);
	switch (act->op) {
	case OP_PUSH: return chan_push(c, value_int64(act->value));
	case OP_POP: return chan_pop(c, value_int64(act->value));
	case OP_SET: return chan_set(c, value_int64(act->value));
	}
	return 0;
}

static int finish(struct emu *e)
{
	struct nanos6 *n = emu_data(e, '6');
	if (task_types_label(n->procs, e->sys.nprocs, &n->ch, CH_TYPE, &n->bd, 0) != 0)
		return -1;
	if (e->partial || !e->opts.lint)
		return 0;
	for (size_t i = 0; i < e->nthreads; i++) {
		const struct chan *c = mchan_th(&n->ch, i, CH_SUBSYSTEM);
		if (c->depth)
			return failf("thread %" PRId64 " ended with %" PRIu32 " nanos6 subsystem%s still entered",
				     e->threads[i].tid, c->depth, c->depth == 1 ? "" : "s");
	}
	return 0;
}

static void nanos6_free(struct emu *e)
{
	struct nanos6 *n = emu_data(e, '6');
	breakdown_free(&n->bd);
	mchan_free(&n->ch);
	task_tables_free(n->procs, e->sys.nprocs, n->stacks, e->nthreads);
	free(n);
	e->mdata['6'] = NULL;
}

const struct emu_model emu_model_nanos6 = {
	.info = &model_nanos6,
	.create = create,
	.connect = connect,
	.event = event,
	.finish = finish,
	.free = nanos6_free,
};
