/* nOS-V tasks (spec emu.md 4.3, 4.4) on the shared task model: VYc
 * declares a type, VTc/VTC create a normal/parallel task, VTx/VTp/VTr/VTe
 * run, pause, resume and end one of its bodies. Normal tasks may pause and
 * run again after ending; parallel ones run each body once. The running
 * body on top of the thread's stack is what the task channels show. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/msg.h"
#include "model/nosv/nosv.h"
#include "model/task.h"

struct nosv_tasks {
	struct task_table *procs; /* by process gindex */
	struct task_stack *stacks; /* by thread gindex */
	size_t nprocs, nthreads;
};

static uint32_t read_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

int nosv_tasks_create(struct nosv *v, struct emu *e)
{
	struct nosv_tasks *t = calloc(1, sizeof(*t));
	if (!t) {
		msg_err("out of memory");
		return -1;
	}
	v->tasks = t;
	t->procs = calloc(e->sys.nprocs + 1, sizeof(*t->procs));
	t->stacks = calloc(e->nthreads + 1, sizeof(*t->stacks));
	if (!t->procs || !t->stacks) {
		msg_err("out of memory");
		return -1;
	}
	t->nprocs = e->sys.nprocs;
	t->nthreads = e->nthreads;
	for (size_t i = 0; i < t->nprocs; i++)
		task_table_init(&t->procs[i]);
	for (size_t i = 0; i < t->nthreads; i++)
		task_stack_init(&t->stacks[i]);
	return 0;
}

void nosv_tasks_free(struct nosv *v)
{
	struct nosv_tasks *t = v->tasks;
	if (!t)
		return;
	task_tables_free(t->procs, t->nprocs, t->stacks, t->nthreads);
	free(t);
	v->tasks = NULL;
}

int nosv_type_event(struct nosv *v, struct emu *e)
{
	const uint8_t *p;
	uint32_t size;
	if (e->ev->mcv[2] != 'c')
		return failf("unknown nOS-V task type event");
	if (nosv_jumbo(e, "task type", &p, &size) != 0)
		return -1;
	if (size < 5)
		return failf("the task type event needs a type id and a label, it has %u bytes", size);
	const char *label = (const char *)p + 4;
	size_t len = strnlen(label, size - 4);
	if (len == size - 4)
		return failf("the label of the task type event does not end with a NUL byte");
	return task_type_declare(&v->tasks->procs[e->proc->gindex], read_u32(p), label, len);
}

/* A channel shows the running body's value or null; null over null is
 * not a change. */
static inline __attribute__((always_inline)) int show(struct chan *c, int running, int64_t value)
{
	if (!running) {
		if (value_is_null(chan_read(c)))
			return 0;
		return chan_set(c, value_null());
	}
	return chan_set(c, value_int64(value));
}

/* The task channels follow the running body on top of the thread's stack. */
static int update_channels(struct nosv *v, struct emu *e, const struct task_stack *s)
{
	const struct body *b = task_stack_running(s);
	const struct task *k = b ? b->task : NULL;
	int on = b != NULL;
	struct chan *ch = mchan_th(&v->ch, e->th->gindex, 0); /* the thread's channels, by index */
	if (show(&ch[NOSV_BODYID], on, on ? b->id : 0) != 0 ||
	    show(&ch[NOSV_TASKID], on, on ? k->id : 0) != 0 ||
	    show(&ch[NOSV_TYPE], on, on ? k->type->value : 0) != 0 ||
	    show(&ch[NOSV_APPID], on, e->proc->app_id) != 0)
		return -1;
	if (!e->proc->has_rank)
		return 0;
	return show(&ch[NOSV_RANK], on, e->proc->rank + 1);
}

static int create_task(struct task_table *t, const uint8_t *p, uint8_t kind)
{
	unsigned flags = kind == 'C' ? TASK_PARALLEL : TASK_PAUSE | TASK_RESURRECT;
	return task_create(t, read_u32(p), read_u32(p + 4), flags);
}

int nosv_task_event(struct nosv *v, struct emu *e)
{
	uint8_t kind = e->ev->mcv[2];
	switch (kind) {
	case 'c': case 'C': case 'x': case 'e': case 'p': case 'r': break;
	default: return failf("unknown nOS-V task event");
	}
	if (emu_payload_size(e) != 8)
		return failf("a nOS-V task event needs 8 bytes (task id and %s), not %u",
			     kind == 'c' || kind == 'C' ? "type id" : "body id", emu_payload_size(e));
	const uint8_t *p = emu_payload(e);
	struct task_table *t = &v->tasks->procs[e->proc->gindex];
	struct task_stack *s = &v->tasks->stacks[e->th->gindex];
	uint32_t id = read_u32(p), bodyid = read_u32(p + 4);
	switch (kind) {
	case 'c':
	case 'C':
		return create_task(t, p, kind);
	case 'x':
		/* the subsystem changes before the task channels */
		if (task_execute(t, s, id, bodyid) != 0 ||
		    nosv_ss_push(v, e->th, NOSV_SS_TASK_BODY) != 0)
			return -1;
		break;
	case 'e':
		if (task_end(t, s, id, bodyid) != 0 || nosv_ss_pop(v, e->th, NOSV_SS_TASK_BODY) != 0)
			return -1;
		break;
	case 'p':
		if (task_pause(t, s, id, bodyid) != 0)
			return -1;
		break;
	case 'r':
		if (task_resume(t, s, id, bodyid) != 0)
			return -1;
		break;
	}
	return update_channels(v, e, s);
}

int nosv_types_finish(struct nosv *v, struct emu *e)
{
	return task_types_label(v->tasks->procs, v->tasks->nprocs, &v->ch, NOSV_TYPE, &v->bd, e->partial);
}

int nosv_tasks_check(struct nosv *v, struct emu *e)
{
	char name[64];
	struct nosv_tasks *t = v->tasks;
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct body *b = task_stack_top(&t->stacks[i]);
		if (b)
			return failf("thread %" PRId64 " ended with %zu task bod%s unfinished: %s%s (%s)",
				     e->threads[i].tid, t->stacks[i].n, t->stacks[i].n == 1 ? "y" : "ies",
				     t->stacks[i].n == 1 ? "" : "the innermost ", body_name(b, name, sizeof(name)),
				     body_state_name(b->state));
	}
	return 0;
}
