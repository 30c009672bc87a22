/* The recorder's side of the staging directory (trace/stage.h: one per
 * user and node, not per recording, so that `ovni emu --salvage` finds
 * what the threads of a killed recording left there). */
#ifndef OVNI_RECORD_STAGEDIR_H
#define OVNI_RECORD_STAGEDIR_H

#include <stddef.h>

/* Copies the staging files of dir owned by the recording whose state file
 * is owner into their streams and removes them; with owner NULL, those of
 * recorders that no longer run (killed: no one holds their state file's
 * lock). The number copied, or -1 after a message. */
int stagedir_drain(const char *dir, const char *owner);

/* Copies what the staging file of the stream file src holds (if any) into
 * dst, a copy of src open for writing; src's staging file stays. 1 when
 * there was one, 0 if not, -1 after a message. */
int stagedir_copy_into(const char *src, int dst);

#endif
