/* kswitch.spill, beside a thread's stream.obs while `ovni record --kernel`
 * runs: the context switches the shim has collected from the thread's perf
 * ring (lib/rt/kswitch.c) and not yet written into its stream. It is a
 * shared file mapping, so a thread killed before it could write them
 * (SIGKILL) keeps them, and the recorder's salvage appends them to the
 * stream (lib/record/salvage.c). Removed when the thread or the recording
 * ends; emulators ignore it. */
#ifndef OVNI_TRACE_KSPILL_H
#define OVNI_TRACE_KSPILL_H

#include <stdint.h>

#define KSPILL_NAME "kswitch.spill"
#define KSPILL_MAGIC "OVNIKSW1"
#define KSPILL_SIZE (8u << 20) /* the file (sparse: only pages written take room) */

/* The file: this head, then count entries of 8 bytes (host byte order). */
struct kspill_head {
	char magic[8];
	uint64_t count; /* entries written and not yet in the stream */
};

#define KSPILL_CAP ((KSPILL_SIZE - sizeof(struct kspill_head)) / 8)

/* An entry: the CLOCK_MONOTONIC time of a switch, bit 63 set when the
 * thread left its CPU; or, with bit 62 set, how many records the kernel
 * dropped at that point (its ring was full). */
#define KSPILL_OUT (1ull << 63)
#define KSPILL_LOST (1ull << 62)
#define KSPILL_VALUE(e) ((e) & ~(KSPILL_OUT | KSPILL_LOST))

#endif
