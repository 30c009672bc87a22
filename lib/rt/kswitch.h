/* Kernel context switches of one thread, recorded with perf_event and
 * turned into kernel model events: KCO when the thread leaves its CPU, KCI
 * when it gets one back (spec emu.md 4.5).
 *
 * kswitch_open() asks the kernel for PERF_RECORD_SWITCH records of the
 * calling thread, time-stamped with CLOCK_MONOTONIC (the trace's clock),
 * in a ring mapped into memory. kswitch_collect(), called often by any
 * one thread at a time (the shim's collector), moves the records to a spill
 * buffer that grows as needed, so the ring does not fill. kswitch_drain(),
 * called by the recorded thread from time to time (after a blocking call,
 * before its last event), moves them to the thread's stream: their clocks
 * are older than the events the thread has written since, so they go
 * inside an unordered region, OU[ ... OU], which `ovni sort` (or
 * `ovni emu`) puts in order. No malloc, no lock, no stdio: it runs inside
 * the traced program (the caller keeps collect and drain apart). */
#ifndef OVNI_RT_KSWITCH_H
#define OVNI_RT_KSWITCH_H

#include <stddef.h>
#include <stdint.h>

#include "trace/kspill.h"

#define KSWITCH_RING_PAGES 64 /* data pages: 256 KiB, 8192 switches between collections */
#define KSWITCH_FIRST_SPILL 256 /* entries kept inside struct kswitch before a mapping is made */

struct kswitch {
	uint8_t *map; /* control page, then the ring; NULL when not recording */
	size_t map_size;
	uint8_t *ring;
	uint64_t ring_size; /* a power of two */
	int out; /* the last switch written took the thread out of its CPU */
	uint64_t last_out; /* clock of the last KCO written */
	int mmap_failed; /* kswitch_open could open the event but not map its ring */
	volatile int draining; /* inside kswitch_drain (a signal handler may come in) */
	volatile int in_region; /* OU[ written, OU] not yet */
	uint64_t lost; /* records the kernel dropped because the ring was full */
	uint64_t nswitches; /* KCO + KCI written */
	/* Records collected from the ring, not yet written: the time, bit 63
	 * set for a switch-out; with bit 62 set, a count of lost records. */
	uint64_t *spill;
	size_t nspill, spill_cap;
	/* The shared file mapping given by kswitch_spill_in (NULL: none): the
	 * spill while it fits there, its count kept in the head, so that a
	 * killed thread's switches survive it; else spill is anonymous. */
	struct kspill_head *shared;
	size_t shared_size;
	/* The spill's first home: a thread that switches little between
	 * drains never maps one (each mapping is a write lock on the
	 * process's address space, which its other threads then wait for). */
	uint64_t first[KSWITCH_FIRST_SPILL];
	/* A collection found the ring (nearly) full: records may have been
	 * dropped, which the kernel reports only with its next record. */
	int was_full;
	/* The clock of the thread's own events, for OU[ and OU]: a region must
	 * not end before an event written before it. CLOCK_MONOTONIC unless
	 * the caller sets another after kswitch_open (the shim's, which may
	 * run a little ahead of the kernel's). */
	uint64_t (*now)(void);
};

/* Writes one event of the calling thread: MCV and clock, no payload. */
typedef void (*kswitch_emit_fn)(void *ctx, const char mcv[3], uint64_t clock);

/* Starts recording the calling thread; ring_pages data pages (a power of
 * two; 0 for KSWITCH_RING_PAGES; fewer when the locked-memory limits
 * refuse them). Returns 0, or -errno: -EACCES or -EPERM
 * when perf_event_paranoid, a missing capability or a container forbids
 * it, -ENOSYS, -ENOENT, -EINVAL or -EOPNOTSUPP when the kernel cannot do
 * it. k->map is NULL after a failure, and every other call is then a
 * no-op. No descriptor stays open: the mapping holds the event. */
int kswitch_open(struct kswitch *k, unsigned ring_pages);

/* Moves the records of the ring to the spill (grown as needed, so the ring
 * never fills however rarely the thread drains): any thread may call it,
 * one at a time per recorder and never during a drain. Returns the bytes
 * of ring it freed. */
size_t kswitch_collect(struct kswitch *k);

/* Writes the switches recorded since the last drain (collected or still in
 * the ring) through emit: OU[,
 * then KCO/KCI with the kernel's clocks, alternating, then OU] (OU[ and
 * OU] at the current time). Nothing when no switch happened. Records lost
 * to a full ring cannot break the pairs: a switch-in lost after a
 * switch-out is written 1 ns after it (no event of the thread can fall
 * inside a made-up interval). Returns the KCO/KCI written. */
size_t kswitch_drain(struct kswitch *k, kswitch_emit_fn emit, void *ctx);
/* A drain that never goes on (its thread left it by a long jump out of a
 * signal handler): its region is closed through emit, as a handler's drain
 * would, and the switches it had not written are dropped. */
void kswitch_abandon(struct kswitch *k, kswitch_emit_fn emit, void *ctx);
/* Called again while a drain runs (a fatal signal handler ending the
 * thread), it only closes the region the interrupted drain opened (with the
 * missing KCI) and returns 0: the stream stays sortable. */

/* After kswitch_open: the spill goes to mem, size bytes of a shared mapping
 * of a kswitch.spill file (trace/kspill.h), written through: entries and
 * count, the count 0 again after each drain. The file's pages must exist
 * (no SIGBUS on a full disk). Called again with a bigger mapping of the
 * same file, that one replaces the first. A collection that does not fit
 * goes on in an anonymous spill (count 0 in the file), back to the file at
 * the next drain or call. kswitch owns mem now (unmapped when closed, or
 * at once when it cannot hold the spill). Same rules as kswitch_collect. */
void kswitch_spill_in(struct kswitch *k, void *mem, size_t size);
/* Records in the ring now, at most: what a collection would add. */
size_t kswitch_pending(const struct kswitch *k);

/* Stops recording (drain first to keep the last switches); frees the spill. */
void kswitch_close(struct kswitch *k);
/* In a forked child: drops the copy of the parent thread's recorder. Its
 * ring and spill are not mapped in the child (the kernel never copies a
 * perf ring; the spill has MADV_DONTFORK): whatever the child mapped since
 * at those addresses is left alone. */
void kswitch_forget(struct kswitch *k);

/* A one-line reason, for the user, why err (from kswitch_open on k) means
 * no context switches: names perf_event_paranoid when it is the cause. */
const char *kswitch_strerror(const struct kswitch *k, int err, char *buf, size_t n);

#endif
