/* The progress line on a terminal: percent of the input read, events per
 * second and time left, redrawn at most every 0.2 s. */
#ifndef OVNI_EMU_PROGRESS_H
#define OVNI_EMU_PROGRESS_H

#include <stdint.h>

struct progress {
	int enabled;
	double t0, last;
	uint64_t total; /* bytes to read */
	int drawn; /* a line is on screen */
};

double progress_now(void);
void progress_start(struct progress *p, uint64_t total_bytes, int enabled);
/* Redraws if 0.2 s passed since the last time. */
void progress_tick(struct progress *p, uint64_t done_bytes, uint64_t nevents);
/* Clears the line. */
void progress_clear(struct progress *p);

#endif
