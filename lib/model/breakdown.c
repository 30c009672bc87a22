#include "model/breakdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/bay.h"
#include "base/fail.h"
#include "base/msg.h"
#include "paraver/prv.h"

static int count_physical(const struct emu *e)
{
	int n = 0;
	for (size_t c = 0; c < e->ncpus; c++)
		n += !e->cpus[c].sys->is_virtual;
	return n;
}

static int set_rows(struct breakdown *b)
{
	for (size_t i = 0; i < b->n; i++) {
		char label[32];
		snprintf(label, sizeof(label), "~CPU %4zu", b->n - i);
		if (pvt_set_row(&b->pvt, i, label) != 0)
			return -1;
	}
	return 0;
}

static int open_named(struct breakdown *b, struct emu *e, const char *name, const char *view, int type,
		      const char *label)
{
	memset(b, 0, sizeof(*b));
	b->e = e;
	b->type = type;
	b->n = (size_t)count_physical(e);
	b->cpus = calloc(b->n + 1, sizeof(*b->cpus));
	b->sorted = calloc(b->n + 1, sizeof(*b->sorted));
	if (!b->cpus || !b->sorted) {
		msg_err("out of memory for %s", name);
		return -1;
	}
	for (size_t c = 0, i = 0; c < e->ncpus; c++)
		if (!e->cpus[c].sys->is_virtual)
			b->cpus[i++].cpu = c;
	if (pvt_open(&b->pvt, e->outdir, name, b->n) != 0)
		return -1;
	if (emu_add_pvt(e, &b->pvt) != 0 || set_rows(b) != 0 ||
	    !(b->pcf = pcf_add_type(&b->pvt.pcf, type, label)) ||
	    !(b->view = pvt_add_view(&b->pvt, view, label, label, type, CFG_CUSTOM))) {
		msg_err("%s: %s", name, fail_reason());
		return -1;
	}
	return 0;
}

int breakdown_open(struct breakdown *b, struct emu *e, const char *model, int type, const char *label)
{
	char name[64], view[96];
	snprintf(name, sizeof(name), "%s-breakdown", model);
	snprintf(view, sizeof(view), "cpu/%s/breakdown", model);
	return open_named(b, e, name, view, type, label);
}

int breakdown_add_value(struct breakdown *b, int64_t value, const char *label)
{
	if (!b->pcf)
		return 0;
	unsigned char rgb[3];
	cfg_pick_color(b->nvalues++, rgb);
	if (pcf_add_value(b->pcf, value, label) != 0 || cfg_view_add_color(b->view, value, rgb) != 0)
		return -1;
	return 0;
}

struct chan *breakdown_mux(struct breakdown *b, size_t i, struct chan *select, struct chan *const *inputs,
			   size_t n, mux_select_fn fn, void *arg)
{
	struct breakdown_cpu *bc = &b->cpus[i];
	if (bc->nstages == BREAKDOWN_STAGES) {
		msg_err("%s: more than %d mux stages", b->pvt.name, BREAKDOWN_STAGES);
		return NULL;
	}
	struct mux *m = &bc->mux[bc->nstages];
	struct chan *out = &bc->out[bc->nstages];
	char name[128];
	snprintf(name, sizeof(name), "%s.cpu%zu.stage%d", b->pvt.name, bc->cpu, bc->nstages);
	bc->nstages++;
	int rc = chan_init(out, CHAN_SINGLE, name) != 0 ? failf("out of memory") : 0;
	if (rc == 0)
		rc = bay_add(&b->e->bay, out);
	if (rc == 0)
		rc = mux_init(m, select, out, fn, n);
	m->arg = arg;
	for (size_t k = 0; k < n && rc == 0; k++)
		rc = mux_set_input(m, k, inputs[k]);
	if (rc != 0) {
		msg_err("%s: %s", b->pvt.name, fail_reason());
		return NULL;
	}
	return out;
}

/* Row i of the trace: what the sort block writes. */
static int init_row(struct breakdown *b, size_t i)
{
	char name[128];
	snprintf(name, sizeof(name), "%s.row%zu", b->pvt.name, i);
	if (chan_init(&b->sorted[i], CHAN_SINGLE, name) != 0)
		return failf("out of memory");
	return bay_add(&b->e->bay, &b->sorted[i]);
}

/* The sort block from the CPUs' values ins[] to the rows, written to the
 * .prv as the block writes them. */
static int sort_rows(struct breakdown *b, struct chan **ins)
{
	struct chan **outs = calloc(b->n + 1, sizeof(*outs));
	int rc = outs ? 0 : failf("out of memory");
	for (size_t i = 0; i < b->n && rc == 0; i++) {
		outs[i] = &b->sorted[i];
		rc = init_row(b, i);
	}
	if (rc == 0) {
		b->sorting = 1;
		rc = chan_sort_init(&b->sort, ins, outs, b->n);
	}
	for (size_t i = 0; i < b->n && rc == 0; i++)
		rc = prv_register(&b->pvt.prv, i, b->type, outs[i], PRV_SKIPDUP | PRV_ZERO);
	free(outs);
	return rc;
}

int breakdown_connect(struct breakdown *b)
{
	struct chan **ins = calloc(b->n + 1, sizeof(*ins));
	int rc = ins ? 0 : failf("out of memory");
	for (size_t i = 0; i < b->n && rc == 0; i++) {
		struct breakdown_cpu *bc = &b->cpus[i];
		if (!bc->nstages)
			rc = failf("CPU %zu has no value", bc->cpu);
		else
			ins[i] = &bc->out[bc->nstages - 1];
	}
	if (rc == 0)
		rc = sort_rows(b, ins);
	free(ins);
	if (rc != 0)
		msg_err("%s: %s", b->pvt.name, fail_reason());
	return rc;
}

/* Task runtimes: the type when a task body runs, else the subsystem (null:
 * unknown), unless the CPU is not progressing: then its idle state. Like
 * the reference's mux selected by the subsystem, the type is picked only
 * when the subsystem changes; a later change of the type shows only if it
 * was picked (a task paused right in its body shows 0). */
static struct value task_value(const struct breakdown_cpu *c)
{
	const struct breakdown_def *d = &c->b->def;
	struct value idle = chan_read(c->idle), ss = chan_read(c->subsystem);
	if (idle.kind != VALUE_INT64 || idle.i != d->progressing)
		return idle;
	if (ss.kind != VALUE_INT64)
		return value_int64(d->unknown);
	return c->pick_type ? chan_read(c->type) : ss;
}

static int update_task_value(struct breakdown_cpu *c)
{
	struct value v = task_value(c), now = chan_read(&c->value);
	if (v.kind == now.kind && v.i == now.i)
		return 0;
	return chan_set(&c->value, v);
}

static int on_task_subsystem(struct chan *ss, void *arg)
{
	struct breakdown_cpu *c = arg;
	struct value v = chan_read(ss);
	c->pick_type = v.kind == VALUE_INT64 && v.i == c->b->def.body && !value_is_null(chan_read(c->type));
	return update_task_value(c);
}

static int on_task_source(struct chan *src, void *arg)
{
	(void)src;
	return update_task_value(arg);
}

static int add_labels(struct breakdown *b, const struct mchan_label *l)
{
	for (; l && l->label; l++)
		if (breakdown_add_value(b, l->value, l->label) != 0)
			return -1;
	return 0;
}

static int wire_task_cpu(struct breakdown *b, size_t i, struct chan **ins)
{
	const struct breakdown_def *d = &b->def;
	struct breakdown_cpu *c = &b->cpus[i];
	char name[128];
	c->b = b;
	c->type = mchan_cpu_out(d->ch, c->cpu, d->ch_type);
	c->subsystem = mchan_cpu_out(d->ch, c->cpu, d->ch_subsystem);
	c->idle = mchan_cpu_out(d->ch, c->cpu, d->ch_idle);
	snprintf(name, sizeof(name), "%s.cpu%zu.value", d->name, c->cpu);
	if (chan_init(&c->value, CHAN_SINGLE, name) != 0)
		return failf("out of memory");
	chan_set_flags(&c->value, CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP);
	ins[i] = &c->value;
	if (bay_add(&b->e->bay, &c->value) != 0)
		return -1;
	if (chan_on_dirty(c->type, on_task_source, c) || chan_on_dirty(c->subsystem, on_task_subsystem, c) ||
	    chan_on_dirty(c->idle, on_task_source, c))
		return -1;
	return 0;
}

int breakdown_init(struct breakdown *b, struct emu *e, const struct breakdown_def *def)
{
	if (open_named(b, e, def->name, def->view, def->type, def->title) != 0)
		return -1;
	b->def = *def;
	struct chan **ins = calloc(b->n + 1, sizeof(*ins));
	int rc = ins ? 0 : failf("out of memory");
	for (size_t i = 0; i < b->n && rc == 0; i++)
		rc = wire_task_cpu(b, i, ins);
	if (rc == 0)
		rc = sort_rows(b, ins);
	if (rc == 0)
		rc = add_labels(b, def->ss_labels) || add_labels(b, def->idle_labels);
	free(ins);
	if (rc != 0)
		msg_err("%s: %s", def->name, fail_reason());
	return rc ? -1 : 0;
}

void breakdown_free(struct breakdown *b)
{
	if (b->sorting)
		chan_sort_free(&b->sort);
	for (size_t i = 0; b->cpus && i < b->n; i++) {
		for (int k = 0; k < b->cpus[i].nstages; k++) {
			mux_free(&b->cpus[i].mux[k]);
			chan_free(&b->cpus[i].out[k]);
		}
	}
	for (size_t i = 0; b->def.ch && b->cpus && i < b->n; i++)
		chan_free(&b->cpus[i].value);
	for (size_t i = 0; b->sorted && i < b->n; i++)
		chan_free(&b->sorted[i]);
	free(b->cpus);
	free(b->sorted);
	memset(b, 0, sizeof(*b));
}
