#include "report/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/msg.h"
#include "model/task.h"
#include "paraver/cfg.h"

static struct pvt *side_pvt(struct src *s, enum src_side side)
{
	return side == SRC_THREAD ? &s->emu.thread_pvt : &s->emu.cpu_pvt;
}

/* "thread/nanos6/subsystem.cfg" -> model "nanos6", name "subsystem". */
static int split_view(const char *path, struct src_chan *c)
{
	const char *a = strchr(path, '/');
	const char *b = a ? strchr(a + 1, '/') : NULL;
	const char *dot = b ? strrchr(b, '.') : NULL;
	if (!b || !dot || (size_t)(b - a - 1) >= sizeof(c->model) || (size_t)(dot - b - 1) >= sizeof(c->name))
		return -1;
	memcpy(c->model, a + 1, (size_t)(b - a - 1));
	c->model[b - a - 1] = '\0';
	memcpy(c->name, b + 1, (size_t)(dot - b - 1));
	c->name[dot - b - 1] = '\0';
	return 0;
}

static const struct cfg_view *view_of(const struct pvt *t, int type)
{
	for (size_t i = 0; i < t->nviews; i++)
		if (t->views[i]->type == type)
			return t->views[i];
	return NULL;
}

/* The channels of one side, in .pcf order: a type with a view, not an
 * identifier (unless with_ids), of the chosen model. */
static int setup_side(struct src *s, enum src_side side)
{
	struct pvt *t = side_pvt(s, side);
	s->chans[side] = calloc(t->pcf.n + 1, sizeof(struct src_chan));
	int maxtype = 0;
	for (size_t i = 0; i < t->pcf.n; i++)
		if (t->pcf.types[i]->id > maxtype)
			maxtype = t->pcf.types[i]->id;
	s->slot[side] = malloc(((size_t)maxtype + 1) * sizeof(int32_t));
	if (!s->chans[side] || !s->slot[side])
		return failf("out of memory");
	s->maxtype[side] = maxtype;
	for (int k = 0; k <= maxtype; k++)
		s->slot[side][k] = -1;
	for (size_t i = 0; i < t->pcf.n; i++) {
		const struct pcf_type *pt = t->pcf.types[i];
		const struct cfg_view *v = view_of(t, pt->id);
		struct src_chan *c = &s->chans[side][s->nchans[side]];
		if (!v || split_view(v->path, c) != 0)
			continue;
		if (v->colors == CFG_NULL_GRADIENT && !s->opts.with_ids)
			continue;
		if (s->opts.model && strcmp(s->opts.model, c->model) != 0)
			continue;
		c->type = pt->id;
		c->title = pt->label;
		c->pcf = pt;
		c->flags = pvt_type_flags(t, pt->id);
		s->slot[side][pt->id] = (int32_t)s->nchans[side]++;
	}
	return 0;
}

static int setup(struct src *s)
{
	s->ready = 1;
	for (int side = 0; side < SRC_NSIDES; side++)
		if (setup_side(s, (enum src_side)side) != 0)
			return -1;
	return 0;
}

static int on_line(struct src *s, enum src_side side, size_t row, int type, int64_t time, int64_t value)
{
	if (!s->ready && setup(s) != 0)
		return -1;
	if (type < 0 || type > s->maxtype[side] || s->slot[side][type] < 0)
		return 0;
	return s->rd.line(s->rd.arg, side, row, (size_t)s->slot[side][type], time, value);
}

static int thread_line(void *arg, size_t row, int type, int64_t time, int64_t value)
{
	return on_line(arg, SRC_THREAD, row, type, time, value);
}

static int cpu_line(void *arg, size_t row, int type, int64_t time, int64_t value)
{
	return on_line(arg, SRC_CPU, row, type, time, value);
}

static void type_declared(void *arg, const struct task_type *ty)
{
	struct src *s = arg;
	/* a failure only leaves the value unnamed until the .pcf has it */
	u32map_add(&s->type_labels, ty->value, ty->label);
}

int src_open(struct src *s, const struct src_opts *o, const struct src_reader *rd)
{
	memset(s, 0, sizeof(*s));
	s->opts = *o;
	s->rd = *rd;
	u32map_init(&s->type_labels);
	s->taps[SRC_THREAD] = (struct prv_tap){ thread_line, s };
	s->taps[SRC_CPU] = (struct prv_tap){ cpu_line, s };
	struct emu_opts eo;
	memset(&eo, 0, sizeof(eo));
	eo.tracedir = o->tracedir;
	eo.sort_mem = (uint64_t)PRESORT_DEFAULT_MIB << 20;
	eo.tap_thread = &s->taps[SRC_THREAD];
	eo.tap_cpu = &s->taps[SRC_CPU];
	eo.win = o->win;
	task_types_observe(type_declared, s);
	s->observing = 1;
	if (emu_init(&s->emu, &eo) != 0)
		return -1;
	if (!s->ready && setup(s) != 0) {
		msg_err("%s", fail_reason());
		return -1;
	}
	if (o->model && s->nchans[SRC_THREAD] == 0 && s->nchans[SRC_CPU] == 0) {
		char list[512] = "";
		size_t n = 0;
		for (int id = 0; id < 256; id++)
			if (s->emu.enabled[id])
				n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
						      n ? ", " : "", s->emu.model[id]->info->name);
		msg_err("--model %s: no channel of that model in this trace (enabled: %s)", o->model, list);
		return -1;
	}
	return 0;
}

int src_play(struct src *s)
{
	int rc = emu_run(&s->emu);
	if (emu_finish(&s->emu) != 0)
		rc = -1;
	return rc;
}

void src_close(struct src *s)
{
	if (s->observing)
		task_types_observe(NULL, NULL);
	emu_free(&s->emu);
	for (int side = 0; side < SRC_NSIDES; side++) {
		free(s->chans[side]);
		free(s->slot[side]);
	}
	u32map_free(&s->type_labels);
	memset(s, 0, sizeof(*s));
}

const char *src_label(const struct src *s, const struct src_chan *c, int64_t value)
{
	const char *l = pcf_value_label(c->pcf, value);
	if (!l && (c->flags & PVT_TASK_TYPE) && value >= 0 && value <= UINT32_MAX)
		l = u32map_get(&s->type_labels, (uint32_t)value);
	while (l && *l == ' ') /* CPU names start with one */
		l++;
	return l;
}

const char *src_label_or_value(const struct src *s, const struct src_chan *c, int64_t value, char *buf)
{
	const char *l = src_label(s, c, value);
	if (l)
		return l;
	snprintf(buf, 24, "%lld", (long long)value);
	return buf;
}
