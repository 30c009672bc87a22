/* The clock offsets file (spec runtime.md 4): one row per host with the
 * offset to add to the raw clocks of its looms. ovnisync writes it, the
 * emulator reads it. Layout: a header line, then rows
 * "<rank> <hostname> <offset_median> <offset_mean> <offset_std>". */
#ifndef OVNI_CLKOFF_H
#define OVNI_CLKOFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/system.h"

#define CLKOFF_FILE "clock-offsets.txt" /* default name inside a trace directory */

struct clkoff_entry {
	int rank;
	const char *hostname;
	int64_t median; /* the offset, in ns */
	double mean, std;
};

/* Sets loom->clock_offset of every loom of sys from the file at path: each
 * row applies to the looms whose hostname equals its hostname; other looms
 * get 0. required = 0: a path that does not exist (or NULL) means no
 * offsets; then, with more than one loom, a warning says so. Returns 0, or
 * -1 after a one-line error naming the file and line. */
int clkoff_apply(struct system *sys, const char *path, int required);
/* The same from the text of the file (len bytes), named name in messages. */
int clkoff_apply_text(struct system *sys, const char *name, const char *text, size_t len);

/* Writes the header and one row per entry, skipping an entry whose hostname
 * an earlier one has (as ovnisync does). Returns 0, or -1 on a write error. */
int clkoff_format(FILE *f, const struct clkoff_entry *e, size_t n);
/* clkoff_format into path (created or truncated, parent directories made).
 * Returns 0, or -1 after an error naming path. */
int clkoff_write(const char *path, const struct clkoff_entry *e, size_t n);

#endif
