/* Sorting the unordered regions of a stream (OU[ ... OU]), as ovnisort does.
 *
 * Per stream, events are read in file order through a state machine: S (sorted)
 * -- OU[ --> U (region open, empty so far) -- any event but OU] --> X (region
 * with inner events). OU] in U counts an empty region; OU] in X sorts; OU] in
 * S is ignored; an OU[ inside a region is plain data; a region still open at
 * the end is left as it is. Sorting a region: m = lowest clock of its inner
 * events; walking back from the region, the window starts at the last event
 * whose clock is < m (or at the first event of the stream when there is none)
 * and ends before the closing OU]. The window (earlier events and the opening
 * OU[ included) is put in clock order; equal clocks keep their file order.
 * Regions are sorted one after the other, each on the result of the previous.
 *
 * Equal clocks: the reference calls qsort, not stable in general, but no
 * sorted window of the golden traces holds two equal clocks (no trace does),
 * and glibc's qsort is a merge sort, stable, whenever its scratch buffer can
 * be had; so equal clocks keep their file order here, always.
 * -n N: the reference keeps the last N events, the closing OU] included
 * (golden sort-first-and-full-ring: "nback=999999" and the clock it names
 * are those of event 1000021 - 999999 = 22), so the window may start among
 * the N-1 events before the OU]; if none qualifies there and the stream
 * holds more than N events up to the OU], that is an error, else the window
 * starts with the stream.
 *
 * The engine streams: it holds the events a region can still reach and hands
 * older ones to io->write; when a region reaches further back it reads them
 * again through io->reread. Memory is bounded by the largest sorted window.
 *
 * For the emulator (sorting in memory, the trace untouched):
 *  - whole stream in memory (read or mmap MAP_PRIVATE): sort_mem(events,
 *    len, 8, &(struct sort_opts){ .name = relpath }, &st) sorts it in place;
 *  - on the fly: sort_events() with flags SORT_FINAL and io->read pulling
 *    the stream; io->write then receives every byte exactly once, in order
 *    and final, as soon as no later region can move it: with .lookback = N
 *    that is N events behind the input (reference semantics), with no limit
 *    it is only at the end (everything is held). */
#ifndef OVNI_SORT_H
#define OVNI_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/stream.h"

/* sort_opts.flags */
#define SORT_WRITE_ALL 1u /* write every byte, even when nothing moved */
#define SORT_FINAL 2u /* never call io->reread: io->write gets each byte once, in order */

struct sort_opts {
	const char *name; /* stream name for messages */
	uint64_t lookback; /* 0: no limit; N: the window may only start among the N-1 events before the closing OU], as `ovnisort -n N` */
	unsigned flags;
	size_t mem; /* initial buffer size in bytes, 0 for the default; tests use tiny ones (sort_file: the bytes of sorted windows held before they go to the journal, fewer boundaries kept, a small read buffer) */
	void (*hook)(const char *phase); /* test knob, called at the steps of sort_file: journal-created, journaled, writing, written; may be NULL */
};

struct sort_stats {
	uint64_t events; /* events read */
	uint64_t regions; /* regions closed with inner events */
	uint64_t empty; /* OU[ directly followed by OU] */
	uint64_t moved; /* windows whose order changed */
	uint64_t max_window; /* events in the largest window that had to be sorted */
	uint64_t open_off; /* offset of the OU[ of a region left open at the end, or UINT64_MAX */
	size_t peak_mem; /* largest buffer + index held, in bytes */
	uint64_t checkpoints; /* sort_file: times the sorted windows were written in place before the end */
	uint64_t dropped; /* sort_file: sorted windows that left memory out of the look-back's reach */
	int changed; /* some byte of the output differs from the input */
};

/* Where the engine gets and puts stream bytes. Offsets are stream offsets. */
struct sort_io {
	void *ctx;
	uint64_t size; /* total input bytes if known (lets a bad jumbo length fail early), else UINT64_MAX */
	/* Next input bytes in order: count, 0 at the end, -1 after a message. */
	ssize_t (*read)(void *ctx, void *buf, size_t n);
	/* Stores output bytes at off: 0, or -1 after a message. Without
	 * SORT_WRITE_ALL it is first called once something moved; bytes before
	 * its first offset are then the input's. Without SORT_FINAL an offset
	 * may be written again. */
	int (*write)(void *ctx, uint64_t off, const void *buf, size_t n);
	/* Reads back n bytes of output at off (the input's where nothing was
	 * written yet): 0, or -1 after a message. Unused with SORT_FINAL. */
	int (*reread)(void *ctx, uint64_t off, void *buf, size_t n);
};

/* Sorts the events that follow stream offset start (the input's first byte
 * is at start). Returns 0, or -1 after a one-line message naming the stream
 * and offset. Everything written is final only when it returns 0. */
int sort_events(const struct sort_io *io, uint64_t start, const struct sort_opts *o, struct sort_stats *st);

/* Sorts in place the events in buf[0, len) (no stream header); offsets in
 * messages count from start. For the emulator: sort a stream read or mapped
 * privately into memory without touching the file. */
int sort_mem(uint8_t *buf, size_t len, uint64_t start, const struct sort_opts *o, struct sort_stats *st);

/* Sorts the stream file at path in place, crash-safely: the sorted
 * windows go first to a journal beside it (path + SORT_JOURNAL_SUFFIX,
 * written as that + SORT_TMP_SUFFIX, synced, renamed), then into the
 * stream, which is synced before the journal is removed. A journal left by
 * an interrupted sort is checked and written first; a damaged one is an
 * error and the stream is not touched. A stream that needs no change is
 * not written. Memory: the largest window, 1 MiB of sorted windows not yet
 * in the journal, and 48 bytes per sorted window held: with a look-back
 * limit, those in its reach; without, up to 65536, when the journal is
 * written in place (a checkpoint) and the walk goes on. A checkpoint
 * comes once the rest of the stream is known to be whole, so a bad stream
 * is left as it was; only a failure to write after a checkpoint leaves
 * some regions sorted (sorting again finishes). Returns 0, or -1 after a
 * message. */
int sort_file(const char *path, const struct sort_opts *o, struct sort_stats *st);

/* Checks that the clocks of the stream file at path never go back.
 * Returns 1 if sorted, 0 if not (*back = offset of the first event with a
 * lower clock than the one before), -1 after a message. */
int sort_check_file(const char *path, const char *name, uint64_t *back);

/* sort_file()'s journal beside path, and the suffix of the journal being
 * written (removed when found: the stream was not touched yet). */
#define SORT_JOURNAL_SUFFIX STREAM_JOURNAL_SUFFIX
#define SORT_TMP_SUFFIX ".tmp"

#endif
