#include "model/breakdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/fail.h"
#include "io/msg.h"
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

int breakdown_open(struct breakdown *b, struct emu *e, const char *model, int type, const char *label)
{
	char name[64], view[96];
	snprintf(name, sizeof(name), "%s-breakdown", model);
	snprintf(view, sizeof(view), "cpu/%s/breakdown", model);
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

int breakdown_add_value(struct breakdown *b, int64_t value, const char *label)
{
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

int breakdown_connect(struct breakdown *b)
{
	struct chan **ins = calloc(b->n + 1, sizeof(*ins));
	struct chan **outs = calloc(b->n + 1, sizeof(*outs));
	int rc = ins && outs ? 0 : failf("out of memory");
	for (size_t i = 0; i < b->n && rc == 0; i++) {
		struct breakdown_cpu *bc = &b->cpus[i];
		if (!bc->nstages) {
			rc = failf("CPU %zu has no value", bc->cpu);
			break;
		}
		ins[i] = &bc->out[bc->nstages - 1];
		outs[i] = &b->sorted[i];
		char name[128];
		snprintf(name, sizeof(name), "%s.row%zu", b->pvt.name, i);
		rc = chan_init(outs[i], CHAN_SINGLE, name) != 0 ? failf("out of memory") : 0;
		if (rc == 0)
			rc = bay_add(&b->e->bay, outs[i]);
	}
	if (rc == 0) {
		b->sorting = 1;
		rc = chan_sort_init(&b->sort, ins, outs, b->n);
	}
	for (size_t i = 0; i < b->n && rc == 0; i++)
		rc = prv_register(&b->pvt.prv, i, b->type, outs[i], PRV_SKIPDUP | PRV_ZERO);
	free(ins);
	free(outs);
	if (rc != 0)
		msg_err("%s: %s", b->pvt.name, fail_reason());
	return rc;
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
	for (size_t i = 0; b->sorted && i < b->n; i++)
		chan_free(&b->sorted[i]);
	free(b->cpus);
	free(b->sorted);
	memset(b, 0, sizeof(*b));
}
