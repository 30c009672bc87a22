/* gen-unsorted: writes a trace whose streams hold unordered regions, like
 * the kernel events of `ovni record`, for the sort tests and benchmark.
 * `gen-unsorted --help` explains. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/stream.h"

static const char usage[] =
	"Usage: gen-unsorted [OPTIONS] DIR\n"
	"Writes DIR/loom.node0/proc.1/thread.T/stream.{json,obs} (T = 1, 2, ...).\n"
	"Regular events (OB., some with payloads) are 10 ns apart. Every EVERY\n"
	"events comes a region OU[ KCO KCI ... OU] (OU[ and OU] take regular\n"
	"slots) whose inner events, in reverse clock order, have clocks that fall\n"
	"just after the event BACK slots before the OU[. All clocks differ, so\n"
	"the sorted stream is the whole stream in clock order.\n"
	"\n"
	"Options:\n"
	"  -n N      events per stream (default 20000000)\n"
	"  -r EVERY  a region every EVERY events (default 1000)\n"
	"  -k K      inner events per region, 1..8 (default 4)\n"
	"  -b BACK   how many slots before the OU[ the inner clocks fall (default 3)\n"
	"  -t T      streams (default 1)\n"
	"  -S        write the streams already sorted (the expected result)\n"
	"  -h        show this help\n";

#define BASE 1000000000ull

struct gev {
	uint64_t clock;
	uint8_t b[28];
	uint8_t size;
};

struct gen {
	long long n, every, k, back;
	int sorted;
	struct gev *all; /* with -S: every event, sorted at the end */
	long long nall;
	int fd;
	uint8_t buf[1 << 20];
	size_t len;
};

static void die(const char *what)
{
	fprintf(stderr, "gen-unsorted: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void flush(struct gen *g)
{
	for (size_t off = 0; off < g->len;) {
		ssize_t r = write(g->fd, g->buf + off, g->len - off);
		if (r < 0)
			die("write");
		off += (size_t)r;
	}
	g->len = 0;
}

static void put(struct gen *g, const char *mcv, uint64_t clock, size_t payload)
{
	struct gev e = { .clock = clock };
	e.b[0] = payload ? (uint8_t)(payload - 1) : 0;
	memcpy(e.b + 1, mcv, 3);
	memcpy(e.b + 4, &clock, 8);
	for (size_t i = 0; i < payload; i++)
		e.b[12 + i] = (uint8_t)(clock >> (8 * (i % 8)));
	e.size = (uint8_t)(12 + payload);
	if (g->sorted) {
		g->all[g->nall++] = e;
		return;
	}
	if (sizeof(g->buf) - g->len < e.size)
		flush(g);
	memcpy(g->buf + g->len, e.b, e.size);
	g->len += e.size;
}

static int by_clock(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;
	return x->clock < y->clock ? -1 : x->clock > y->clock;
}

static void stream(struct gen *g, const char *dir)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	g->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (g->fd < 0)
		die(path);
	uint8_t h[STREAM_HEADER_SIZE] = { 'o', 'v', 'n', 'i' };
	uint32_t v = STREAM_VERSION;
	memcpy(h + 4, &v, 4);
	memcpy(g->buf, h, sizeof(h));
	g->len = sizeof(h);
	g->nall = 0;
	long long slot = 0, left = g->n;
	put(g, "OHx", BASE, 16);
	slot++, left--;
	while (left > 1) {
		if (slot % g->every == 0 && left > g->k + 2 && slot > g->back) {
			put(g, "OU[", BASE + 10 * (uint64_t)slot, 0);
			uint64_t at = BASE + 10 * (uint64_t)(slot - g->back);
			for (long long i = g->k; i > 0; i--)
				put(g, i % 2 ? "KCO" : "KCI", at + (uint64_t)i, 0);
			put(g, "OU]", BASE + 10 * (uint64_t)(slot + 1), 0);
			slot += 2;
			left -= g->k + 2;
			continue;
		}
		put(g, "OB.", BASE + 10 * (uint64_t)slot, slot % 7 ? 0 : 8);
		slot++, left--;
	}
	put(g, "OHe", BASE + 10 * (uint64_t)slot, 0);
	if (g->sorted) {
		qsort(g->all, (size_t)g->nall, sizeof(*g->all), by_clock);
		for (long long i = 0; i < g->nall; i++) {
			if (sizeof(g->buf) - g->len < g->all[i].size)
				flush(g);
			memcpy(g->buf + g->len, g->all[i].b, g->all[i].size);
			g->len += g->all[i].size;
		}
	}
	flush(g);
	if (close(g->fd) < 0)
		die(path);
}

static void json(const char *dir, long long tid)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		die(path);
	fprintf(f, "{\n    \"version\": 3,\n    \"ovni\": {\n"
		   "        \"lib\": {\n            \"version\": \"1.14.0\",\n            \"commit\": \"cf025e2\"\n        },\n"
		   "        \"part\": \"thread\",\n        \"tid\": %lld,\n        \"pid\": 1,\n"
		   "        \"loom\": \"node0\",\n        \"app_id\": 1,\n"
		   "        \"require\": {\n            \"ovni\": \"1.1.0\"\n        },\n"
		   "        \"loom_cpus\": [\n            {\n                \"index\": %lld,\n"
		   "                \"phyid\": %lld\n            }\n        ],\n"
		   "        \"finished\": 1\n    }\n}",
		tid, tid - 1, tid - 1);
	if (fclose(f) != 0)
		die(path);
}

static void mkdirs(char *p)
{
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die(p);
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die(p);
}

int main(int argc, char **argv)
{
	static struct gen g = { .n = 20000000, .every = 1000, .k = 4, .back = 3 };
	long long threads = 1;
	int c;
	while ((c = getopt(argc, argv, "n:r:k:b:t:Sh")) != -1) {
		switch (c) {
		case 'n': g.n = atoll(optarg); break;
		case 'r': g.every = atoll(optarg); break;
		case 'k': g.k = atoll(optarg); break;
		case 'b': g.back = atoll(optarg); break;
		case 't': threads = atoll(optarg); break;
		case 'S': g.sorted = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 1;
		}
	}
	if (optind != argc - 1 || g.n < 2 || g.every < 1 || g.k < 1 || g.k > 8 || g.back < 1 || threads < 1) {
		fputs(usage, stderr);
		return 1;
	}
	if (g.sorted && !(g.all = malloc((size_t)g.n * sizeof(*g.all))))
		die("malloc");
	for (long long t = 1; t <= threads; t++) {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/loom.node0/proc.1/thread.%lld", argv[optind], t);
		mkdirs(dir);
		json(dir, t);
		stream(&g, dir);
	}
	free(g.all);
	return 0;
}
