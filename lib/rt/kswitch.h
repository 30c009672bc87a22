/* Kernel context switches of one thread, recorded with perf_event and
 * turned into kernel model events: KCO when the thread leaves its CPU, KCI
 * when it gets one back (spec emu.md 4.5).
 *
 * kswitch_open() asks the kernel for PERF_RECORD_SWITCH records of the
 * calling thread, time-stamped with CLOCK_MONOTONIC (the trace's clock),
 * in a ring mapped into memory. kswitch_drain(), called by that same thread
 * from time to time (before its buffer is flushed, before its last event),
 * moves the records to the thread's stream: their clocks are older than
 * the events the thread has written since, so they go inside an unordered
 * region, OU[ ... OU], which `ovni sort` (or `ovni emu`) puts in order.
 * No allocation, no lock, no stdio: it runs inside the traced program. */
#ifndef OVNI_RT_KSWITCH_H
#define OVNI_RT_KSWITCH_H

#include <stddef.h>
#include <stdint.h>

#define KSWITCH_RING_PAGES 32 /* data pages: 128 KiB, 8192 switches between drains */

struct kswitch {
	int fd; /* the perf event, -1 when not recording */
	uint8_t *map; /* control page, then the ring */
	size_t map_size;
	uint8_t *ring;
	uint64_t ring_size; /* a power of two */
	int out; /* the last switch written took the thread out of its CPU */
	uint64_t lost; /* records the kernel dropped because the ring was full */
	uint64_t nswitches; /* KCO + KCI written */
};

/* Writes one event of the calling thread: MCV and clock, no payload. */
typedef void (*kswitch_emit_fn)(void *ctx, const char mcv[3], uint64_t clock);

/* Starts recording the calling thread; ring_pages data pages (a power of
 * two; 0 for KSWITCH_RING_PAGES). Returns 0, or -errno: -EACCES or -EPERM
 * when perf_event_paranoid, a missing capability or a container forbids
 * it, -ENOSYS, -ENOENT, -EINVAL or -EOPNOTSUPP when the kernel cannot do
 * it. k->fd is -1 after a failure, and every other call is then a no-op. */
int kswitch_open(struct kswitch *k, unsigned ring_pages);

/* Writes the switches recorded since the last drain through emit: OU[,
 * then KCO/KCI with the kernel's clocks, alternating, then OU] (OU[ and
 * OU] at the current time). Nothing when no switch happened. Records lost
 * to a full ring cannot break the pairs: a missing switch-in is written at
 * the drain's time (the thread runs now). Returns the KCO/KCI written. */
size_t kswitch_drain(struct kswitch *k, kswitch_emit_fn emit, void *ctx);

/* Stops recording (drain first to keep the last switches). */
void kswitch_close(struct kswitch *k);

/* A one-line reason, for the user, why err (from kswitch_open) means no
 * context switches: names perf_event_paranoid when it is the cause. */
const char *kswitch_strerror(int err, char *buf, size_t n);

#endif
