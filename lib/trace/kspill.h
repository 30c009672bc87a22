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

/* The switch that entry e writes after those a thread has written (out:
 * the last took it out of its CPU, at last_out): 1 with *to_out and
 * *clock, or 0 for none. A loss while out writes the switch-in it hid,
 * 1 ns after the switch-out (no event of the thread can fall inside a
 * made-up interval); after a loss a switch may repeat the state: none.
 * The shim's drains and the recorder's salvage both follow it. */
static inline int kspill_switch(uint64_t e, int out, uint64_t last_out, int *to_out, uint64_t *clock)
{
	if (e & KSPILL_LOST) {
		*to_out = 0;
		*clock = last_out + 1;
		return out;
	}
	*to_out = !!(e & KSPILL_OUT);
	*clock = KSPILL_VALUE(e);
	return *to_out != out;
}

#endif
