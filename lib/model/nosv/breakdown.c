/* The nOS-V breakdown (-b, spec emu.md 4.6): a Paraver trace with one row
 * per physical CPU where each instant shows, sorted over the CPUs, what
 * every CPU does: the type of the task whose body runs, else the runtime
 * subsystem (Unknown when none), or the idle state when the thread is not
 * progressing. Only when every thread says nosv.can_breakdown = true: the
 * runtime then emits the events that make this picture complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/fail.h"
#include "io/msg.h"
#include "json.h"
#include "model/nosv/nosv.h"
#include "paraver/prv.h"

#define BREAKDOWN_TYPE 17

/* Recomputed whenever the CPU's subsystem, task type or idle state
 * changes; stays unset (null) until the CPU first gets a thread. */
static int update(struct chan *c, void *arg)
{
	(void)c;
	struct nosv_bd_cpu *cpu = arg;
	struct value idle = chan_read(cpu->idle);
	struct value ss = chan_read(cpu->ss);
	struct value type = chan_read(cpu->type);
	struct value v;
	if (!value_is_null(idle) && idle.i != NOSV_PROGRESSING)
		v = idle;
	else if (value_is_null(ss))
		v = value_int64(NOSV_SS_UNKNOWN);
	else if (ss.i == NOSV_SS_TASK_BODY && !value_is_null(type))
		v = type;
	else
		v = ss;
	return chan_set(&cpu->out, v);
}

static size_t suitable_threads(const struct emu *e)
{
	size_t n = 0;
	for (size_t i = 0; i < e->nthreads; i++) {
		const struct trace_stream *s = &e->trace.streams[e->threads[i].sys->stream];
		const struct json *can = json_dotget(s->json, "nosv.can_breakdown");
		n += can && can->type == JSON_BOOL && can->u.boolean;
	}
	return n;
}

static int add_labels(struct pcf_type *t, const struct mchan_label *l)
{
	for (; l->label; l++)
		if (pcf_add_value(t, l->value, l->label) != 0)
			return -1;
	return 0;
}

static int add_view(struct nosv_breakdown *b)
{
	const char *title = "CPU: nOS-V Runtime/Idle/Task breakdown";
	struct cfg_view *v = pvt_add_view(&b->pvt, "cpu/nosv/breakdown", title, title,
					  BREAKDOWN_TYPE, CFG_CUSTOM);
	if (!v)
		return -1;
	size_t k = 0;
	unsigned char rgb[3];
	for (const struct mchan_label *l = nosv_ss_labels; l->label; l++, k++) {
		cfg_pick_color(k, rgb);
		if (cfg_view_add_color(v, l->value, rgb) != 0)
			return -1;
	}
	for (const struct mchan_label *l = nosv_idle_labels; l->label; l++, k++) {
		cfg_pick_color(k, rgb);
		if (cfg_view_add_color(v, l->value, rgb) != 0)
			return -1;
	}
	return 0;
}

static int connect_cpu(struct nosv *v, struct emu *e, struct nosv_bd_cpu *bc, size_t cpu)
{
	char name[128];
	snprintf(name, sizeof(name), "nosv.cpu%zu.breakdown", cpu);
	if (chan_init(&bc->out, CHAN_SINGLE, name) != 0)
		return failf("out of memory");
	chan_set_flags(&bc->out, CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP);
	if (bay_add(&e->bay, &bc->out) != 0)
		return -1;
	bc->ss = mchan_cpu_out(&v->ch, cpu, NOSV_SUBSYSTEM);
	bc->type = mchan_cpu_out(&v->ch, cpu, NOSV_TYPE);
	bc->idle = mchan_cpu_out(&v->ch, cpu, NOSV_IDLE);
	if (chan_on_dirty(bc->ss, update, bc) != 0 || chan_on_dirty(bc->type, update, bc) != 0 ||
	    chan_on_dirty(bc->idle, update, bc) != 0)
		return failf("out of memory");
	return 0;
}

static int build(struct nosv *v, struct emu *e)
{
	struct nosv_breakdown *b = &v->bd;
	size_t n = 0;
	for (size_t c = 0; c < e->ncpus; c++)
		n += !e->cpus[c].sys->is_virtual;
	b->cpu = calloc(n + 1, sizeof(*b->cpu));
	b->rows = calloc(n + 1, sizeof(*b->rows));
	struct chan **ins = calloc(n + 1, sizeof(*ins)), **outs = calloc(n + 1, sizeof(*outs));
	int rc = -1;
	b->n = n; /* calloc'ed channels are safe to free */
	if (!b->cpu || !b->rows || !ins || !outs) {
		failf("out of memory");
		goto out;
	}
	for (size_t c = 0, k = 0; c < e->ncpus; c++) {
		if (e->cpus[c].sys->is_virtual)
			continue;
		if (connect_cpu(v, e, &b->cpu[k], c) != 0)
			goto out;
		ins[k] = &b->cpu[k].out;
		k++;
	}
	for (size_t r = 0; r < n; r++) {
		char name[128], label[32];
		snprintf(name, sizeof(name), "nosv.breakdown.row%zu", r);
		snprintf(label, sizeof(label), "~CPU %4zu", n - r);
		if (chan_init(&b->rows[r], CHAN_SINGLE, name) != 0) {
			failf("out of memory");
			goto out;
		}
		outs[r] = &b->rows[r];
		if (bay_add(&e->bay, &b->rows[r]) != 0 || pvt_set_row(&b->pvt, r, label) != 0 ||
		    prv_register(&b->pvt.prv, r, BREAKDOWN_TYPE, &b->rows[r], PRV_SKIPDUP | PRV_ZERO) != 0)
			goto out;
	}
	if (chan_sort_init(&b->sort, ins, outs, n) != 0)
		goto out;
	b->pcf = pcf_add_type(&b->pvt.pcf, BREAKDOWN_TYPE, "CPU: nOS-V Runtime/Idle/Task breakdown");
	if (!b->pcf || add_labels(b->pcf, nosv_ss_labels) != 0 || add_labels(b->pcf, nosv_idle_labels) != 0)
		goto out;
	rc = add_view(b);
out:
	free(ins);
	free(outs);
	return rc;
}

int nosv_breakdown_connect(struct nosv *v, struct emu *e)
{
	size_t ok = suitable_threads(e);
	if (ok != e->nthreads) {
		msg_warn("no nOS-V breakdown: only %zu of %zu threads have nosv.can_breakdown = true "
			 "(a runtime built without the events it needs)", ok, e->nthreads);
		return 0;
	}
	size_t n = 0;
	for (size_t c = 0; c < e->ncpus; c++)
		n += !e->cpus[c].sys->is_virtual;
	if (pvt_open(&v->bd.pvt, e->outdir, "nosv-breakdown", n) != 0)
		return -1;
	v->bd.on = 1;
	if (emu_add_pvt(e, &v->bd.pvt) != 0 || build(v, e) != 0) {
		msg_err("nosv breakdown: %s", fail_reason());
		return -1;
	}
	return 0;
}

int nosv_breakdown_add_type(struct nosv *v, int64_t value, const char *label)
{
	if (!v->bd.pcf)
		return 0;
	return pcf_add_value(v->bd.pcf, value, label);
}

void nosv_breakdown_free(struct nosv_breakdown *b)
{
	if (!b->on)
		return;
	chan_sort_free(&b->sort);
	for (size_t k = 0; b->cpu && k < b->n; k++)
		chan_free(&b->cpu[k].out);
	for (size_t r = 0; b->rows && r < b->n; r++)
		chan_free(&b->rows[r]);
	free(b->cpu);
	free(b->rows);
	memset(b, 0, sizeof(*b));
}
