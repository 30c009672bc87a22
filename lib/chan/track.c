#include "chan/track.h"

#include <stdio.h>
#include <string.h>

#include "chan/bay.h"
#include "base/fail.h"

const char *track_suffix(int mode)
{
	switch (mode) {
	case TRACK_ANY: return ".any";
	case TRACK_RUN: return ".run";
	case TRACK_ACT: return ".act";
	}
	return "";
}

static int own_output(struct track *t, struct bay *bay, const char *name)
{
	if (chan_init(&t->out, CHAN_SINGLE, name) != 0)
		return failf("out of memory for channel %s", name);
	t->output = &t->out;
	return bay_add(bay, &t->out);
}

int track_thread(struct track *t, struct bay *bay, int mode, struct chan *state, struct chan *raw)
{
	memset(t, 0, sizeof(*t));
	t->mode = mode;
	if (mode == TRACK_ANY) {
		t->output = raw;
		return 0;
	}
	if (mode != TRACK_RUN && mode != TRACK_ACT)
		return failf("channel %s: bad thread track mode %d", raw->name, mode);
	char name[256];
	snprintf(name, sizeof(name), "%s%s", raw->name, track_suffix(mode));
	if (own_output(t, bay, name) != 0)
		return -1;
	if (mux_init(&t->mux, state, &t->out, mode == TRACK_RUN ? mux_select_running : mux_select_active, 1) != 0)
		return -1;
	return mux_set_input(&t->mux, 0, raw);
}

int track_cpu(struct track *t, struct bay *bay, struct chan *th_running,
	      struct chan *const *raws, size_t n, int64_t base, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->mode = TRACK_RUN;
	if (own_output(t, bay, name) != 0)
		return -1;
	if (mux_init(&t->mux, th_running, &t->out, NULL, n) != 0)
		return -1;
	t->mux.base = base;
	for (size_t i = 0; i < n; i++)
		if (mux_set_input(&t->mux, i, raws[i]) != 0)
			return -1;
	return 0;
}

void track_free(struct track *t)
{
	if (t->output == &t->out) {
		mux_free(&t->mux);
		chan_free(&t->out);
	}
	t->output = NULL;
}
