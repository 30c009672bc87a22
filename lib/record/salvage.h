/* Ends the streams a recorded program left unfinished (killed, crashed,
 * threads cut by exit or exec): the events are kept up to the last whole
 * one, the thread is closed at its last clock, or at its process's exit
 * when that came later (OHe, after KCI or OHr when the thread was out of
 * CPU or paused) and stream.json gets the keys the
 * emulator needs, "finished" included. Finished streams are only counted. */
#ifndef OVNI_SALVAGE_H
#define OVNI_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

struct salvage_info {
	const char *loom;
	int pid, tid, app_id;
	int has_rank, rank, nranks;
	const int32_t *phyid; /* the loom's CPUs: index i is phyid[i] */
	size_t ncpus;
	uint64_t exited; /* its process exited at this clock while it ran (0: unknown) */
};

struct salvage_result {
	uint64_t events, bytes; /* after the repair */
	int repaired; /* the stream was unfinished and has been ended */
	uint64_t cut_bytes; /* bytes dropped after the last whole event */
	int dropped; /* it had no event: its stream was removed */
	uint64_t spilled; /* events added from its kswitch.spill (switches the thread had not written) */
};

/* dir holds stream.obs and stream.json. 0, or -1 after a message. */
int salvage_stream(const char *dir, const struct salvage_info *in, struct salvage_result *out);

#endif

/* `ovni emu --salvage`: a copy of the trace at path in dst (a new empty
 * directory) where every unfinished stream has been ended as above;
 * finished streams are hard links (copies across file systems), the
 * trace itself is never written. Names each cut stream in a warning and
 * sets *ncut. 0, or -1 after a message. */
int salvage_copy(const char *path, const char *dst, size_t *ncut);
/* rm -r of a directory salvage_copy made. */
void salvage_remove(const char *dir);
