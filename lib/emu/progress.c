#include "emu/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/msg.h"

double progress_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_start(struct progress *p, uint64_t total_bytes, int enabled)
{
	p->enabled = enabled;
	p->t0 = p->last = progress_now();
	p->total = total_bytes ? total_bytes : 1;
	p->drawn = 0;
}

void progress_tick(struct progress *p, uint64_t done_bytes, uint64_t nevents)
{
	if (!p->enabled)
		return;
	double now = progress_now();
	if (now - p->last < 0.2)
		return;
	p->last = now;
	double frac = (double)done_bytes / (double)p->total;
	if (frac > 1)
		frac = 1;
	double elapsed = now - p->t0;
	double rate = elapsed > 0 ? (double)nevents / elapsed : 0;
	double left = frac > 0 ? elapsed * (1 - frac) / frac : 0;
	int min = (int)(left / 60);
	int sec = (int)left % 60;
	fprintf(stderr, "\r%s: %5.1f%% done, %.2f M events/s, %d min %02d s left   ",
		msg_prog(), frac * 100, rate / 1e6, min, sec);
	p->drawn = 1;
}

void progress_clear(struct progress *p)
{
	if (p->drawn)
		fprintf(stderr, "\r%*s\r", 70, "");
	p->drawn = 0;
}
