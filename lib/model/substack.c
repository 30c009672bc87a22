#include "model/substack.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "emu/sched.h"
#include "base/msg.h"
#include "paraver/prv.h"

static uint8_t closing(uint8_t c)
{
	if (c == '[')
		return ']';
	return c >= 'a' && c <= 'z' ? (uint8_t)(c - 'a' + 'A') : c;
}

int substack_map_init(struct substack_map *m, const struct substack_ev *evs, size_t n)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *mcv = (const uint8_t *)evs[i].mcv;
		uint8_t close = closing(mcv[2]);
		/* a table mistake, caught by any run */
		if (mcv[1] >= 128 || mcv[2] >= 128 || close == mcv[2] || evs[i].value <= 0 ||
		    evs[i].value > INT16_MAX || m->op[mcv[1]][mcv[2]] || m->op[mcv[1]][close]) {
			msg_err("internal error: bad region event %s", evs[i].mcv);
			return -1;
		}
		m->op[mcv[1]][mcv[2]] = (int16_t)evs[i].value;
		m->op[mcv[1]][close] = (int16_t)-evs[i].value;
	}
	return 0;
}

int substack_lint(const struct mchan *ch, size_t i, const char *what)
{
	const struct emu *e = ch->emu;
	for (size_t t = 0; t < e->nthreads; t++) {
		uint32_t depth = mchan_th(ch, t, i)->depth;
		if (depth)
			return failf("thread %" PRId64 " ends with %" PRIu32 " %s%s left on its stack "
				     "(-l requires an empty stack)", e->threads[t].tid, depth, what,
				     depth > 1 ? "s" : "");
	}
	return 0;
}

struct substack {
	const struct substack_spec *spec;
	struct mchan_def def; /* from the spec */
	struct mchan ch;
	struct substack_map map;
};

int substack_create(struct emu *e, const struct substack_spec *s)
{
	struct substack *st = calloc(1, sizeof(*st));
	if (!st) {
		msg_err("out of memory");
		return -1;
	}
	e->mdata[(unsigned char)s->info->id] = st;
	st->spec = s;
	st->def = (struct mchan_def){
		.name = s->chan, .stack = 1, .type = s->type, .prv_flags = PRV_SKIPDUP,
		.th_track = s->th_track, .cpu_track = TRACK_RUN, .title = s->title,
		.labels = s->labels, .colors = CFG_CUSTOM,
	};
	if (substack_map_init(&st->map, s->evs, s->nevs) != 0)
		return -1;
	return mchan_create(&st->ch, e, s->info->name, &st->def, 1);
}

int substack_connect(struct emu *e, char id)
{
	struct substack *st = emu_data(e, id);
	return mchan_connect(&st->ch);
}

int substack_event(struct emu *e, char id)
{
	struct substack *st = emu_data(e, id);
	const char *name = e->model[(unsigned char)id]->info->name;
	struct emu_thread *th = e->th;
	int op = substack_map_op(&st->map, e->ev->mcv);
	if (!op)
		return failf("unknown %s event", name);
	if (!th->is_running)
		return failf("thread %" PRId64 " is %s: %s events need a Running thread", th->tid,
			     th_state_name(th->state), name);
	return substack_apply(mchan_th(&st->ch, th->gindex, 0), op);
}

int substack_finish(struct emu *e, char id)
{
	struct substack *st = emu_data(e, id);
	if (e->partial || !e->opts.lint)
		return 0;
	return substack_lint(&st->ch, 0, st->spec->what);
}

void substack_free(struct emu *e, char id)
{
	struct substack *st = emu_data(e, id);
	mchan_free(&st->ch);
	free(st);
	e->mdata[(unsigned char)id] = NULL;
}
