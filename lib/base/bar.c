#include "base/bar.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bar_start(struct bar *b, const char *label)
{
	b->label = label;
	b->enabled = isatty(2);
	b->drawn = 0;
	b->t0 = b->last = b->enabled ? now() : 0;
}

void bar_tick(void *arg, uint64_t done, uint64_t total)
{
	struct bar *b = arg;
	if (!b || !b->enabled)
		return;
	double t = now();
	if (t - b->t0 < 1.0 || t - b->last < 0.2)
		return;
	b->last = t;
	double f = total ? (double)done / (double)total : 1.0;
	if (f > 1)
		f = 1;
	char bar[31];
	int full = (int)(f * 30);
	for (int i = 0; i < 30; i++)
		bar[i] = i < full ? '#' : '.';
	bar[30] = '\0';
	double rate = (double)done / (t - b->t0) / 1048576.0;
	double left = f > 0 ? (t - b->t0) * (1 - f) / f : 0;
	fprintf(stderr, "\r%s [%s] %3.0f%% %7.1f MiB/s %5.0f s left ", b->label, bar, f * 100, rate, left);
	b->drawn = 1;
}

void bar_clear(struct bar *b)
{
	if (b->drawn)
		fprintf(stderr, "\r%*s\r", 78, "");
	b->drawn = 0;
}
