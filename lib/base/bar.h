/* A progress bar on stderr for runs longer than a second: nothing before
 * the first second, then redrawn at most every 0.2 s; only on a terminal. */
#ifndef OVNI_IO_BAR_H
#define OVNI_IO_BAR_H

#include <stdint.h>

struct bar {
	const char *label;
	int enabled, drawn;
	double t0, last;
};

void bar_start(struct bar *b, const char *label);
/* Fits pack_progress_fn: arg is the struct bar. */
void bar_tick(void *b, uint64_t done, uint64_t total);
void bar_clear(struct bar *b);

#endif
