/* Tracks: what a thread or CPU row shows of a model channel (spec emu.md
 * 2.6). A thread row shows its raw channel always (ANY), only while the
 * thread runs (RUN) or only while it is active (ACT); a CPU row shows the
 * raw channel of the one thread running on it (RUN), null otherwise. */
#ifndef OVNI_CHAN_TRACK_H
#define OVNI_CHAN_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"
#include "chan/mux.h"

/* Thread states, as the state channel holds them (PRV type 4 values). */
enum th_state {
	TH_ST_UNKNOWN = 0,
	TH_ST_RUNNING = 1,
	TH_ST_PAUSED = 2,
	TH_ST_DEAD = 3,
	TH_ST_COOLING = 4,
	TH_ST_WARMING = 5,
};

static inline int th_state_is_active(int64_t st)
{
	return st == TH_ST_RUNNING || st == TH_ST_COOLING || st == TH_ST_WARMING;
}

enum track_mode { TRACK_NONE = 0, TRACK_ANY, TRACK_RUN, TRACK_ACT };

struct track {
	int mode;
	struct chan *output; /* what the row shows */
	struct chan out; /* owned output of RUN/ACT */
	struct mux mux;
};

/* Thread side: state is the thread's state channel, raw the model channel.
 * Owned channels are registered in bay. The track must not move after. */
int track_thread(struct track *t, struct bay *bay, int mode, struct chan *state, struct chan *raw);
/* CPU side: th_running holds the gindex of the one running thread (or
 * null); raws[i] is the raw channel of the thread with gindex base + i. */
int track_cpu(struct track *t, struct bay *bay, struct chan *th_running,
	      struct chan *const *raws, size_t n, int64_t base, const char *name);
void track_free(struct track *t);

/* ".any", ".run", ".act" */
const char *track_suffix(int mode);

#endif
