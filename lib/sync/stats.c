/* ovni sync: from samples to offsets, and the files that hold them. */
#include "sync/sync.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/msg.h"

double sync_sample_delta(const struct sync_sample *s)
{
	/* Differences first: the raw clocks may be far apart and large. */
	return ((double)(s->t1 - s->t2) + (double)(s->t4 - s->t3)) / 2.0;
}

int64_t sync_sample_rtt(const struct sync_sample *s)
{
	return (s->t4 - s->t1) - (s->t3 - s->t2);
}

static int by_rtt(const void *a, const void *b)
{
	int64_t x = sync_sample_rtt(a), y = sync_sample_rtt(b);
	return (x > y) - (x < y);
}

static int by_delta(const void *a, const void *b)
{
	double x = sync_sample_delta(a), y = sync_sample_delta(b);
	return (x > y) - (x < y);
}

void sync_estimate(struct sync_sample *s, size_t n, struct sync_offset *out)
{
	qsort(s, n, sizeof(*s), by_rtt);
	/* Under load most exchanges wait for a CPU somewhere; the fastest few
	 * are the ones whose two directions took the same time. */
	size_t k = n / 10 > 5 ? n / 10 : n < 5 ? n : 5;
	out->kept = k;
	out->rtt_max = sync_sample_rtt(&s[k - 1]);
	qsort(s, k, sizeof(*s), by_delta);
	out->median = (int64_t)sync_sample_delta(&s[k / 2]);
	double sum = 0;
	for (size_t i = 0; i < k; i++)
		sum += sync_sample_delta(&s[i]);
	out->mean = sum / (double)k;
	double var = 0;
	for (size_t i = 0; i < k; i++) {
		double e = sync_sample_delta(&s[i]) - out->mean;
		var += e * e;
	}
	out->std = k > 1 ? sqrt(var / (double)(k - 1)) : 0.0;
}

/* snprintf that appends at *len and keeps counting past cap. */
__attribute__((format(printf, 4, 5)))
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *dst = *len < cap ? buf + *len : NULL;
	int n = vsnprintf(dst, dst ? cap - *len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

size_t sync_format_drift(const struct sync_row *rows, int n, int rounds, const double *wall,
	const int64_t *offsets, char *buf, size_t cap)
{
	size_t len = 0;
	if (cap)
		buf[0] = '\0';
	append(buf, cap, &len, "%-20s", "wallclock");
	for (int i = 0; i < n; i++)
		append(buf, cap, &len, " %-20s", rows[i].host);
	append(buf, cap, &len, "\n");
	for (int r = 0; r < rounds; r++) {
		append(buf, cap, &len, "%-20f", wall[r]);
		for (int i = 0; i < n; i++)
			append(buf, cap, &len, " %-20" PRId64, offsets[(size_t)r * (size_t)n + (size_t)i]);
		append(buf, cap, &len, "\n");
	}
	return len;
}

int sync_make_parents(const char *path)
{
	if (file_mkdirs(path, 1) == 0)
		return 0;
	msg_err("%s: cannot create its directory: %s", path, strerror(errno));
	return -1;
}

int sync_write_file(const char *path, const char *text, size_t len)
{
	if (sync_make_parents(path) != 0)
		return -1;
	if (file_write_atomic(path, text, len, file_mode_default()) == 0)
		return 0;
	msg_err("%s: cannot write: %s", path, strerror(errno));
	return -1;
}
