/* ovni record, once the streams are finished: the emulator refuses a loom
 * where some processes have an MPI rank and others have none, as when a
 * job script or a shell around mpirun is recorded too. The processes
 * without a rank then move to a loom of their own, "<loom>.norank", so the
 * trace is accepted and nothing recorded is lost. */
#ifndef OVNI_RANKLOOM_H
#define OVNI_RANKLOOM_H

#include <stddef.h>

/* Moves the unranked processes of tracedir/loom.<loom> when some other
 * process there has a rank; *moved says how many, dst gets the new loom's
 * name. 0, or -1 after a message. */
int rankloom_split(const char *tracedir, const char *loom, char *dst, size_t n, unsigned *moved);

#endif
