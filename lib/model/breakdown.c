#include "model/breakdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/bay.h"
#include "chan/fail.h"
#include "io/msg.h"
#include "paraver/prv.h"

/* The reference picks the task type or the subsystem (a mux selected by
 * the subsystem) only when the subsystem changes; a later change of the
 * type shows only if the type was picked. */
static struct value cpu_value(const struct breakdown_cpu *c)
{
	const struct breakdown_def *d = &c->b->def;
	struct value idle = chan_read(c->idle), ss = chan_read(c->subsystem);
	if (idle.kind != VALUE_INT64 || idle.i != d->progressing)
		return idle;
	if (ss.kind != VALUE_INT64)
		return value_int64(d->unknown);
	return c->pick_type ? chan_read(c->type) : ss;
}

static int update(struct breakdown_cpu *c)
{
	struct value v = cpu_value(c), now = chan_read(&c->value);
	if (v.kind == now.kind && v.i == now.i)
		return 0;
	return chan_set(&c->value, v);
}

static int on_subsystem(struct chan *ss, void *arg)
{
	struct breakdown_cpu *c = arg;
	struct value v = chan_read(ss);
	c->pick_type = v.kind == VALUE_INT64 && v.i == c->b->def.body && !value_is_null(chan_read(c->type));
	return update(c);
}

static int on_source(struct chan *src, void *arg)
{
	(void)src;
	return update(arg);
}

/* The reference writes every row at the first change, not before: the
 * rows start then, all 0 but the changed ones. */
static int on_first_change(struct chan *c, void *arg)
{
	struct breakdown *b = arg;
	(void)c;
	if (b->started)
		return 0;
	b->started = 1;
	for (size_t i = 0; i < b->n; i++) {
		if (prv_register(&b->pvt->prv, i, b->def.type, &b->outs[i], PRV_SKIPDUP | PRV_ZERO) != 0 ||
		    chan_set(&b->outs[i], value_int64(0)) != 0)
			return -1;
	}
	return 0;
}

static int add_labels(struct breakdown *b, struct cfg_view *v, const struct mchan_label *l, size_t *k)
{
	for (; l && l->label; l++, (*k)++) {
		unsigned char rgb[3];
		cfg_pick_color(*k, rgb);
		if (pcf_add_value(b->pcf, l->value, l->label) != 0 || cfg_view_add_color(v, l->value, rgb) != 0)
			return -1;
	}
	return 0;
}

static int open_trace(struct breakdown *b)
{
	struct emu *e = b->emu;
	b->pvt = calloc(1, sizeof(*b->pvt));
	if (!b->pvt)
		return failf("out of memory");
	if (pvt_open(b->pvt, e->outdir, b->def.name, b->n) != 0) {
		free(b->pvt);
		b->pvt = NULL;
		return -1;
	}
	if (emu_add_pvt(e, b->pvt) != 0) {
		pvt_discard(b->pvt);
		pvt_free(b->pvt);
		free(b->pvt);
		b->pvt = NULL;
		return -1;
	}
	for (size_t i = 0; i < b->n; i++) {
		char label[32];
		snprintf(label, sizeof(label), "~CPU %4zu", b->n - i);
		if (pvt_set_row(b->pvt, i, label) != 0)
			return -1;
	}
	b->pcf = pcf_add_type(&b->pvt->pcf, b->def.type, b->def.title);
	if (!b->pcf)
		return -1;
	struct cfg_view *v = pvt_add_view(b->pvt, b->def.view, b->def.title, b->def.title, b->def.type, CFG_CUSTOM);
	size_t k = 0;
	if (!v || add_labels(b, v, b->def.ss_labels, &k) != 0 || add_labels(b, v, b->def.idle_labels, &k) != 0)
		return -1;
	return 0;
}

static int wire(struct breakdown *b)
{
	struct emu *e = b->emu;
	const struct breakdown_def *d = &b->def;
	struct chan **ins = calloc(b->n + 1, sizeof(*ins));
	struct chan **outs = calloc(b->n + 1, sizeof(*outs));
	int rc = (ins && outs) ? 0 : failf("out of memory");
	size_t i = 0;
	for (size_t g = 0; g < e->ncpus && rc == 0; g++) {
		if (e->cpus[g].sys->is_virtual)
			continue;
		struct breakdown_cpu *c = &b->cpus[i];
		char name[128];
		c->b = b;
		c->type = mchan_cpu_out(d->ch, g, d->ch_type);
		c->subsystem = mchan_cpu_out(d->ch, g, d->ch_subsystem);
		c->idle = mchan_cpu_out(d->ch, g, d->ch_idle);
		snprintf(name, sizeof(name), "%s.cpu%zu.value", d->name, g);
		rc = chan_init(&c->value, CHAN_SINGLE, name);
		if (rc == 0) {
			chan_set_flags(&c->value, CHAN_DIRTY_WRITE | CHAN_ALLOW_DUP);
			rc = bay_add(&e->bay, &c->value);
		}
		if (rc == 0)
			rc = chan_on_dirty(c->type, on_source, c) || chan_on_dirty(c->subsystem, on_subsystem, c) ||
			     chan_on_dirty(c->idle, on_source, c) || chan_on_dirty(&c->value, on_first_change, b);
		if (rc == 0) {
			snprintf(name, sizeof(name), "%s.row%zu", d->name, i);
			rc = chan_init(&b->outs[i], CHAN_SINGLE, name);
		}
		if (rc == 0)
			rc = bay_add(&e->bay, &b->outs[i]);
		ins[i] = &c->value;
		outs[i] = &b->outs[i];
		i++;
	}
	if (rc == 0)
		rc = chan_sort_init(&b->sort, ins, outs, b->n);
	free(ins);
	free(outs);
	return rc ? -1 : 0;
}

int breakdown_init(struct breakdown *b, struct emu *e, const struct breakdown_def *def)
{
	memset(b, 0, sizeof(*b));
	b->def = *def;
	b->emu = e;
	for (size_t g = 0; g < e->ncpus; g++)
		if (!e->cpus[g].sys->is_virtual)
			b->n++;
	b->cpus = calloc(b->n + 1, sizeof(*b->cpus));
	b->outs = calloc(b->n + 1, sizeof(*b->outs));
	if (!b->cpus || !b->outs || open_trace(b) != 0 || wire(b) != 0) {
		msg_err("%s: %s", def->name, b->cpus && b->outs ? fail_reason() : "out of memory");
		return -1;
	}
	return 0;
}

int breakdown_add_value(struct breakdown *b, int64_t value, const char *label)
{
	if (!b->pcf)
		return 0;
	return pcf_add_value(b->pcf, value, label);
}

void breakdown_free(struct breakdown *b)
{
	chan_sort_free(&b->sort);
	for (size_t i = 0; b->cpus && i < b->n; i++)
		chan_free(&b->cpus[i].value);
	for (size_t i = 0; b->outs && i < b->n; i++)
		chan_free(&b->outs[i]);
	free(b->cpus);
	free(b->outs);
	/* The pvt itself was freed by the emulator (emu_add_pvt). */
	free(b->pvt);
	memset(b, 0, sizeof(*b));
}
