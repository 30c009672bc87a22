/* The nosv model 'V': channels, subsystems, idle states and the dispatch
 * of the events (spec emu.md 4.4). Tasks are in tasks.c, counters in
 * hwc.c. */
#include "model/nosv/nosv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "emu/sched.h"
#include "base/msg.h"
#include "base/json.h"
#include "paraver/prv.h"
#include "trace/stream.h"

const struct mchan_label nosv_ss_labels[] = {
	{ NOSV_SS_UNKNOWN, "Unknown subsystem" },
	{ 6, "Scheduler: Hungry" },
	{ 7, "Scheduler: Serving" },
	{ 8, "Scheduler: Submitting" },
	{ 9, "Memory: Allocating" },
	{ 10, "Memory: Freeing" },
	{ NOSV_SS_TASK_BODY, "Task: In body" },
	{ 12, "API: Create" },
	{ 13, "API: Destroy" },
	{ 14, "API: Submit" },
	{ 15, "API: Pause" },
	{ 16, "API: Yield" },
	{ 17, "API: Waitfor" },
	{ 18, "API: Scheduling point" },
	{ 19, "API: Attach" },
	{ 20, "API: Detach" },
	{ 21, "API: Mutex lock" },
	{ 22, "API: Mutex trylock" },
	{ 23, "API: Mutex unlock" },
	{ 24, "API: Barrier wait" },
	{ 25, "API: Cond wait" },
	{ 26, "API: Cond signal" },
	{ 27, "API: Cond broadcast" },
	{ 28, "API: Join" },
	{ 29, "API: Join all" },
	{ 30, "API: Wait" },
	{ 31, "API: Wait all" },
	{ 32, "Thread: Worker" },
	{ 33, "Thread: Delegate" },
	/* point events the reference lists but never shows */
	{ 35, "EV Scheduler: Send task" },
	{ 34, "EV Scheduler: Recv task" },
	{ 36, "EV Scheduler: Self-assign task" },
	{ 0, NULL },
};

const struct mchan_label nosv_idle_labels[] = {
	{ NOSV_PROGRESSING, "Progressing" },
	{ NOSV_RESTING, "Resting" },
	{ NOSV_ABSORBING, "Absorbing noise" },
	{ 0, NULL },
};

static const struct mchan_def fixed_defs[NOSV_NFIXED] = {
	[NOSV_BODYID] = { .name = "body-id", .type = 15, .prv_flags = PRV_SKIPDUPNULL,
			  .th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
			  .title = "nOS-V task body ID", .colors = CFG_NULL_GRADIENT },
	[NOSV_TASKID] = { .name = "task-id", .type = 10, .prv_flags = PRV_SKIPDUPNULL,
			  .th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
			  .title = "nOS-V task ID", .colors = CFG_NULL_GRADIENT },
	[NOSV_TYPE] = { .name = "task-type", .type = 11, .prv_flags = PRV_SKIPDUPNULL,
			.th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
			.title = "nOS-V task type", .colors = CFG_CODE, .task_type = 1 },
	[NOSV_APPID] = { .name = "task-appid", .chan_flags = CHAN_ALLOW_DUP, .type = 12,
			 .prv_flags = PRV_SKIPDUPNULL, .th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
			 .title = "nOS-V task AppID", .colors = CFG_NULL_GRADIENT },
	/* nested calls of one API function push the same value */
	[NOSV_SUBSYSTEM] = { .name = "subsystem", .stack = 1, .chan_flags = CHAN_ALLOW_DUP, .type = 13,
			     .prv_flags = PRV_SKIPDUPNULL, .th_track = TRACK_ACT, .cpu_track = TRACK_RUN,
			     .title = "nOS-V subsystem", .labels = nosv_ss_labels, .colors = CFG_CUSTOM },
	[NOSV_RANK] = { .name = "task-rank", .chan_flags = CHAN_ALLOW_DUP, .type = 14,
			.prv_flags = PRV_SKIPDUPNULL, .th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
			.title = "nOS-V task MPI rank", .colors = CFG_NULL_GRADIENT },
	[NOSV_IDLE] = { .name = "idle", .type = 16, .prv_flags = PRV_SKIPDUPNULL,
			.th_track = TRACK_RUN, .cpu_track = TRACK_RUN,
			.title = "nOS-V idle state", .labels = nosv_idle_labels, .colors = CFG_CUSTOM },
};

int nosv_jumbo(const struct emu *e, const char *what, const uint8_t **data, uint32_t *size)
{
	uint32_t n = emu_payload_size(e);
	if (!(e->ev->flags & EV_FLAG_JUMBO) || n < 4)
		return failf("the %s event must be a jumbo event (a payload with its length)", what);
	*data = emu_payload(e) + 4;
	*size = n - 4;
	return 0;
}

/* ---- subsystems ---- */

static const char *ss_name(int64_t v)
{
	for (const struct mchan_label *l = nosv_ss_labels; l->label; l++)
		if (l->value == v)
			return l->label;
	return "unknown";
}

int nosv_ss_push(struct nosv *v, struct emu_thread *th, int64_t ss)
{
	return chan_push(mchan_th(&v->ch, th->gindex, NOSV_SUBSYSTEM), value_int64(ss));
}

/* Leaving a subsystem that is not the current one means the runtime
 * emitted unbalanced events. */
int nosv_ss_pop(struct nosv *v, struct emu_thread *th, int64_t ss)
{
	struct chan *c = mchan_th(&v->ch, th->gindex, NOSV_SUBSYSTEM);
	struct value top = chan_read(c);
	if (value_is_null(top))
		return failf("thread %" PRId64 " leaves the nOS-V subsystem '%s' but is in none", th->tid,
			     ss_name(ss));
	if (top.i != ss)
		return failf("thread %" PRId64 " leaves the nOS-V subsystem '%s' but is in '%s'", th->tid,
			     ss_name(ss), ss_name(top.i));
	return chan_pop(c, value_int64(ss));
}

/* Lower case enters (push), upper case leaves (pop). */
static int push_pop(struct nosv *v, struct emu_thread *th, uint8_t c, int64_t ss)
{
	if (c >= 'a' && c <= 'z')
		return nosv_ss_push(v, th, ss);
	return nosv_ss_pop(v, th, ss);
}

/* API calls: VA<x> enters, VA<X> leaves, subsystem by letter. */
static const uint8_t api_ss[26] = {
	['r' - 'a'] = 12, ['d' - 'a'] = 13, ['s' - 'a'] = 14, ['p' - 'a'] = 15, ['y' - 'a'] = 16,
	['w' - 'a'] = 17, ['c' - 'a'] = 18, ['a' - 'a'] = 19, ['e' - 'a'] = 20, ['l' - 'a'] = 21,
	['t' - 'a'] = 22, ['u' - 'a'] = 23, ['b' - 'a'] = 24, ['o' - 'a'] = 25, ['g' - 'a'] = 26,
	['k' - 'a'] = 27, ['j' - 'a'] = 28, ['m' - 'a'] = 29, ['i' - 'a'] = 30, ['n' - 'a'] = 31,
};

static int ev_api(struct nosv *v, struct emu_thread *th, uint8_t c)
{
	uint8_t ss = 0;
	if (c >= 'a' && c <= 'z')
		ss = api_ss[c - 'a'];
	else if (c >= 'A' && c <= 'Z')
		ss = api_ss[c - 'A'];
	if (!ss)
		return failf("unknown nOS-V API event");
	return push_pop(v, th, c, ss);
}

static int ev_sched(struct nosv *v, struct emu_thread *th, uint8_t c)
{
	switch (c) {
	case 'h': return nosv_ss_push(v, th, 6);
	case 'f': return nosv_ss_pop(v, th, 6);
	case '[': return nosv_ss_push(v, th, 7);
	case ']': return nosv_ss_pop(v, th, 7);
	case 'N': return nosv_ss_push(v, th, 7); /* serving without blocking */
	case 'n': return nosv_ss_pop(v, th, 7);
	case 'r': case 's': case '@': return 0; /* tasks sent and received: not shown */
	}
	return failf("unknown nOS-V scheduler event");
}

static int ev_mem(struct nosv *v, struct emu_thread *th, uint8_t c)
{
	switch (c) {
	case 'a': case 'A': return push_pop(v, th, c, 9);
	case 'f': case 'F': return push_pop(v, th, c, 10);
	}
	return failf("unknown nOS-V memory event");
}

static int ev_thread(struct nosv *v, struct emu_thread *th, uint8_t c)
{
	switch (c) {
	case 'w': case 'W': return push_pop(v, th, c, 32);
	case 'd': case 'D': return push_pop(v, th, c, 33);
	case 'a': case 'A': return 0; /* old attach events: the API ones show it */
	}
	return failf("unknown nOS-V thread event");
}

static int ev_idle(struct nosv *v, struct emu_thread *th, uint8_t c)
{
	int64_t idle = c == 'p' ? NOSV_PROGRESSING : c == 'r' ? NOSV_RESTING : c == 'a' ? NOSV_ABSORBING : 0;
	if (!idle)
		return failf("unknown nOS-V idle event");
	return chan_set(mchan_th(&v->ch, th->gindex, NOSV_IDLE), value_int64(idle));
}

static int event(struct emu *e)
{
	struct nosv *v = emu_data(e, 'V');
	struct emu_thread *th = e->th;
	const uint8_t *mcv = e->ev->mcv;
	if (th->out_of_cpu)
		return failf("thread %" PRId64 " emitted a nOS-V event while out of the CPU "
			     "(switched out by the kernel)", th->tid);
	if (!th->is_active)
		return failf("thread %" PRId64 " emitted a nOS-V event while %s, not active", th->tid,
			     th_state_name(th->state));
	switch (mcv[1]) {
	case 'T': return nosv_task_event(v, e);
	case 'Y': return nosv_type_event(v, e);
	case 'S': return ev_sched(v, th, mcv[2]);
	case 'U':
		if (mcv[2] != '[' && mcv[2] != ']')
			break;
		return mcv[2] == '[' ? nosv_ss_push(v, th, 8) : nosv_ss_pop(v, th, 8);
	case 'M': return ev_mem(v, th, mcv[2]);
	case 'A': return ev_api(v, th, mcv[2]);
	case 'H': return ev_thread(v, th, mcv[2]);
	case 'P': return ev_idle(v, th, mcv[2]);
	case 'W':
		if (mcv[2] != 'C')
			break;
		return nosv_hwc_event(&v->hwc, &v->ch, e);
	}
	return failf("unknown nOS-V event");
}

/* ---- breakdown ---- */

static size_t can_breakdown(const struct emu *e)
{
	size_t n = 0;
	for (size_t i = 0; i < e->nthreads; i++) {
		const struct trace_stream *s = &e->trace.streams[e->threads[i].sys->stream];
		const struct json *can = json_dotget(s->json, "nosv.can_breakdown");
		n += can && can->type == JSON_BOOL && can->u.boolean;
	}
	return n;
}

/* Only a runtime that emits every subsystem and idle change (it says so
 * with nosv.can_breakdown in every thread) gives a complete picture. */
int nosv_breakdown_connect(struct nosv *v, struct emu *e)
{
	size_t ok = can_breakdown(e);
	if (ok != e->nthreads) {
		msg_warn("no nOS-V breakdown: only %zu of %zu threads have nosv.can_breakdown = true", ok,
			 e->nthreads);
		return 0;
	}
	struct breakdown_def bd = {
		.name = "nosv-breakdown", .type = 17,
		.title = "CPU: nOS-V Runtime/Idle/Task breakdown",
		.view = "cpu/nosv/breakdown",
		.ch = &v->ch, .ch_type = NOSV_TYPE, .ch_subsystem = NOSV_SUBSYSTEM, .ch_idle = NOSV_IDLE,
		.body = NOSV_SS_TASK_BODY, .unknown = NOSV_SS_UNKNOWN, .progressing = NOSV_PROGRESSING,
		.ss_labels = nosv_ss_labels, .idle_labels = nosv_idle_labels,
	};
	return breakdown_init(&v->bd, e, &bd);
}

/* ---- hooks ---- */

static int create(struct emu *e)
{
	struct nosv *v = calloc(1, sizeof(*v));
	if (!v) {
		msg_err("out of memory");
		return -1;
	}
	e->mdata['V'] = v;
	if (nosv_hwc_load(&v->hwc, e) != 0)
		return -1;
	size_t n = NOSV_NFIXED + v->hwc.n;
	v->defs = calloc(n, sizeof(*v->defs));
	if (!v->defs) {
		msg_err("out of memory");
		return -1;
	}
	memcpy(v->defs, fixed_defs, sizeof(fixed_defs));
	nosv_hwc_defs(&v->hwc, v->defs + NOSV_NFIXED);
	if (mchan_create(&v->ch, e, "nosv", v->defs, n) != 0)
		return -1;
	if (nosv_tasks_create(v, e) != 0)
		return -1;
	/* every thread starts progressing */
	for (size_t t = 0; t < e->nthreads; t++) {
		if (chan_set(mchan_th(&v->ch, t, NOSV_IDLE), value_int64(NOSV_PROGRESSING)) != 0) {
			msg_err("%s", fail_reason());
			return -1;
		}
	}
	return 0;
}

static int connect(struct emu *e)
{
	struct nosv *v = emu_data(e, 'V');
	if (mchan_connect(&v->ch) != 0)
		return -1;
	/* a CPU where nothing runs rests */
	for (size_t c = 0; c < e->ncpus; c++)
		mux_set_default(&v->ch.cpu_track[c * v->ch.n + NOSV_IDLE].mux, value_int64(NOSV_RESTING));
	if (nosv_hwc_views(&v->hwc, &v->ch) != 0) {
		msg_err("nosv: %s", fail_reason());
		return -1;
	}
	if (e->opts.breakdown)
		return nosv_breakdown_connect(v, e);
	return 0;
}

/* With -l every thread must have left its subsystems. */
static int check_stacks(struct nosv *v, struct emu *e)
{
	for (size_t t = 0; t < e->nthreads; t++) {
		const struct chan *c = mchan_th(&v->ch, t, NOSV_SUBSYSTEM);
		if (c->depth > 0)
			return failf("thread %" PRId64 " ended inside %u nOS-V subsystem%s, the innermost '%s' (-l)",
				     e->threads[t].tid, c->depth, c->depth == 1 ? "" : "s",
				     ss_name(chan_read(c).i));
	}
	return 0;
}

static int finish(struct emu *e)
{
	struct nosv *v = emu_data(e, 'V');
	if (nosv_types_finish(v, e) != 0)
		return -1;
	if (e->partial)
		return 0;
	if (!e->opts.lint)
		return 0;
	/* an open task body says more than its subsystem */
	if (nosv_tasks_check(v, e) != 0)
		return -1;
	return check_stacks(v, e);
}

static void nosv_free(struct emu *e)
{
	struct nosv *v = emu_data(e, 'V');
	breakdown_free(&v->bd);
	nosv_tasks_free(v);
	mchan_free(&v->ch);
	nosv_hwc_free(&v->hwc);
	free(v->defs);
	free(v);
	e->mdata['V'] = NULL;
}

const struct emu_model emu_model_nosv = {
	.info = &model_nosv,
	.create = create,
	.connect = connect,
	.event = event,
	.finish = finish,
	.free = nosv_free,
};
