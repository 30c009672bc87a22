/* The .prv writer (spec emu.md 3.1): one event record per line,
 * "2:0:1:1:<row>:<time>:<type>:<value>", formatted by hand. The header
 * holds the duration in a fixed-width field, so prv_close() rewrites it in
 * place. A channel hooked with prv_register() writes a line in the emit
 * stage of every propagation where it changed. */
#ifndef OVNI_PARAVER_PRV_H
#define OVNI_PARAVER_PRV_H

#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"
#include "base/out.h"

/* Flags of a registration */
#define PRV_EMITDUP 1u /* write a value equal to the previous one */
#define PRV_SKIPDUP 2u /* drop a value equal to the previous one */
#define PRV_SKIPDUPNULL 4u /* drop a null following a null */
#define PRV_NEXT 8u /* write integers plus one */
#define PRV_ZERO 16u /* integer 0 is a valid value */

struct prv_sink;

/* Instead of a file, every line a .prv would get can go to a function:
 * `ovni report` and `ovni export` read the emulation through it. */
struct prv_tap {
	/* One line: row (0-based), type, time and the value as the file would
	 * have it (null as 0, PRV_NEXT added). 0, or -1 after failf. */
	int (*line)(void *arg, size_t row, int type, int64_t time, int64_t value);
	void *arg;
};

struct prv {
	struct out out;
	char *path;
	size_t nrows;
	int64_t time;
	const int64_t *now; /* the time of the lines: &time, or a clock shared by several */
	struct prv_sink *sinks; /* all registrations, to free them */
	int fd;
	const struct prv_tap *tap; /* lines go there, no file (prv_open_tap) */
	/* A window (prv_set_window): only lines in [win_from, win_to], and at
	 * win_from the value every row and type had then. */
	int windowed, win_open;
	int64_t win_from, win_to;
	size_t nsinks;
};

/* Creates (truncates) path and writes a header with duration 0. -1 after
 * a message. */
int prv_open(struct prv *p, const char *path, size_t nrows);
/* Like prv_open, but the lines go to tap (not copied) and no file is
 * written; name is for messages. -1 after a message. */
int prv_open_tap(struct prv *p, const char *name, size_t nrows, const struct prv_tap *tap);
/* Keeps only the lines with a time in [from, to]; the values set before
 * from are written at from. Call before any prv_register. */
void prv_set_window(struct prv *p, int64_t from, int64_t to);
/* Sets the time of the next lines; never goes back. */
static inline void prv_advance(struct prv *p, int64_t time) { p->time = time; }
/* The time of the lines is *clock from now on (prv_advance no longer
 * counts): traces written together share one clock, set once per event. */
void prv_share_clock(struct prv *p, const int64_t *clock);
/* Writes chan into row (0-based) as type. -1 after failf. */
int prv_register(struct prv *p, size_t row, int type, struct chan *c, unsigned flags);
/* Flushes, rewrites the header with duration and closes. -1 after a
 * message (write error). */
int prv_close(struct prv *p, int64_t duration);
/* Closes without finishing and removes the file. */
void prv_discard(struct prv *p);

/* The header line for nrows and duration, with newline; buf needs 128. */
size_t prv_header(char *buf, size_t nrows, int64_t duration);

#endif
