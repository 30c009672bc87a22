#include "emu/mchan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/msg.h"

const char *mchan_suffix(int mode)
{
	switch (mode) {
	case TRACK_RUN: return " of the RUNNING thread";
	case TRACK_ACT: return " of the ACTIVE thread";
	}
	return " ";
}

int mchan_create(struct mchan *m, struct emu *e, const char *model,
		 const struct mchan_def *defs, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->emu = e;
	m->defs = defs;
	m->n = n;
	m->model = strdup(model);
	size_t nth = e->nthreads * n, ncpu = e->ncpus * n;
	m->th = calloc(nth + 1, sizeof(*m->th));
	m->th_track = calloc(nth + 1, sizeof(*m->th_track));
	m->cpu_track = calloc(ncpu + 1, sizeof(*m->cpu_track));
	m->th_pcf = calloc(n + 1, sizeof(*m->th_pcf));
	m->cpu_pcf = calloc(n + 1, sizeof(*m->cpu_pcf));
	m->th_view = calloc(n + 1, sizeof(*m->th_view));
	m->cpu_view = calloc(n + 1, sizeof(*m->cpu_view));
	if (!m->model || !m->th || !m->th_track || !m->cpu_track || !m->th_pcf ||
	    !m->cpu_pcf || !m->th_view || !m->cpu_view) {
		msg_err("out of memory for the %s channels", model);
		return -1;
	}
	for (size_t t = 0; t < e->nthreads; t++) {
		for (size_t i = 0; i < n; i++) {
			char name[256];
			struct chan *c = mchan_th(m, t, i);
			snprintf(name, sizeof(name), "%s.thread%zu.%s", model, t, defs[i].name);
			if (chan_init(c, defs[i].stack ? CHAN_STACK : CHAN_SINGLE, name) != 0) {
				msg_err("out of memory for the %s channels", model);
				return -1;
			}
			chan_set_flags(c, defs[i].chan_flags);
			if (bay_add(&e->bay, c) != 0) {
				msg_err("%s", fail_reason());
				return -1;
			}
		}
	}
	return 0;
}

static int add_labels(struct pcf_type *t, const struct mchan_def *d, struct cfg_view *v)
{
	size_t k = 0;
	for (const struct mchan_label *l = d->labels; l && l->label; l++, k++) {
		if (pcf_add_value(t, l->value, l->label) != 0)
			return -1;
		if (v && v->colors == CFG_CUSTOM) {
			unsigned char rgb[3];
			cfg_pick_color(k, rgb);
			if (cfg_view_add_color(v, l->value, rgb) != 0)
				return -1;
		}
	}
	return 0;
}

/* The .pcf type and the view of channel i on one side (thread or cpu). */
static int describe(struct mchan *m, size_t i, int cpu_side)
{
	const struct mchan_def *d = &m->defs[i];
	struct pvt *t = cpu_side ? &m->emu->cpu_pvt : &m->emu->thread_pvt;
	int mode = cpu_side ? TRACK_RUN : d->th_track;
	char label[256], title[300], path[256];
	snprintf(label, sizeof(label), "%s%s", d->title, d->bare_title ? "" : mchan_suffix(mode));
	snprintf(title, sizeof(title), "%s: %s%s", cpu_side ? "CPU" : "Thread", d->title,
		 mode == TRACK_ANY ? "" : mchan_suffix(mode));
	snprintf(path, sizeof(path), "%s/%s/%s", cpu_side ? "cpu" : "thread", m->model, d->name);
	struct pcf_type *pt = pcf_add_type(&t->pcf, d->type, label);
	if (!pt)
		return -1;
	struct cfg_view *v = pvt_add_view(t, path, title, label, d->type, d->colors);
	if (!v)
		return -1;
	unsigned flags = (d->stack ? PVT_STACK : 0u) | (d->task_type ? PVT_TASK_TYPE : 0u);
	if (flags && pvt_set_type_flags(t, d->type, flags) != 0)
		return -1;
	if (cpu_side) {
		m->cpu_pcf[i] = pt;
		m->cpu_view[i] = v;
	} else {
		m->th_pcf[i] = pt;
		m->th_view[i] = v;
	}
	return add_labels(pt, d, v);
}

static int connect_threads(struct mchan *m)
{
	struct emu *e = m->emu;
	for (size_t t = 0; t < e->nthreads; t++) {
		for (size_t i = 0; i < m->n; i++) {
			const struct mchan_def *d = &m->defs[i];
			if (d->th_track == TRACK_NONE)
				continue;
			struct track *tr = &m->th_track[t * m->n + i];
			if (track_thread(tr, &e->bay, d->th_track, &e->threads[t].ch_state, mchan_th(m, t, i)) != 0 ||
			    prv_register(&e->thread_pvt.prv, t, d->type, tr->output, d->prv_flags) != 0)
				return -1;
		}
	}
	return 0;
}

static int connect_cpus(struct mchan *m)
{
	struct emu *e = m->emu;
	struct chan **raws = calloc(e->nthreads + 1, sizeof(*raws));
	if (!raws)
		return failf("out of memory");
	int rc = 0;
	for (size_t c = 0; c < e->ncpus && rc == 0; c++) {
		struct emu_cpu *cpu = &e->cpus[c];
		size_t lg = cpu->sys->loom->gindex;
		size_t first = e->loom_first_thread[lg], nth = e->loom_nthreads[lg];
		for (size_t i = 0; i < m->n && rc == 0; i++) {
			const struct mchan_def *d = &m->defs[i];
			if (d->cpu_track == TRACK_NONE)
				continue;
			/* only threads of the CPU's loom can run on it */
			for (size_t k = 0; k < nth; k++)
				raws[k] = mchan_th(m, first + k, i);
			char name[256];
			snprintf(name, sizeof(name), "%s.cpu%zu.%s.run", m->model, c, d->name);
			struct track *tr = &m->cpu_track[c * m->n + i];
			rc = track_cpu(tr, &e->bay, &cpu->ch_th_running, raws, nth, (int64_t)first, name);
			if (rc == 0)
				rc = prv_register(&e->cpu_pvt.prv, c, d->type, tr->output, d->prv_flags);
		}
	}
	free(raws);
	return rc;
}

int mchan_connect(struct mchan *m)
{
	int rc = connect_threads(m);
	if (rc == 0)
		rc = connect_cpus(m);
	for (size_t i = 0; i < m->n && rc == 0; i++)
		if (m->defs[i].th_track != TRACK_NONE)
			rc = describe(m, i, 0);
	for (size_t i = 0; i < m->n && rc == 0; i++)
		if (m->defs[i].cpu_track != TRACK_NONE)
			rc = describe(m, i, 1);
	if (rc != 0)
		msg_err("%s channels: %s", m->model, fail_reason());
	return rc;
}

void mchan_free(struct mchan *m)
{
	struct emu *e = m->emu;
	if (!e)
		return;
	for (size_t k = 0; m->th_track && k < e->nthreads * m->n; k++)
		track_free(&m->th_track[k]);
	for (size_t k = 0; m->cpu_track && k < e->ncpus * m->n; k++)
		track_free(&m->cpu_track[k]);
	for (size_t k = 0; m->th && k < e->nthreads * m->n; k++)
		chan_free(&m->th[k]);
	free(m->th);
	free(m->th_track);
	free(m->cpu_track);
	free(m->th_pcf);
	free(m->cpu_pcf);
	free(m->th_view);
	free(m->cpu_view);
	free(m->model);
	memset(m, 0, sizeof(*m));
}
