/* ovni top: how many events of each MCV a trace holds. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "dump/dump.h"
#include "dump/evcount.h"
#include "base/msg.h"
#include "base/out.h"
#include "trace/player.h"
#include "trace/streamset.h"
#include "trace/trace.h"

static const char usage[] =
	"Usage: ovni top [--procs] TRACEDIR|STREAMDIR\n"
	"Counts the events of a trace by MCV and prints one line per MCV, the\n"
	"most frequent first (equal counts ordered by MCV), as the reference's\n"
	"ovnitop does. Unfinished and unsorted streams are read (zero bytes\n"
	"after the last event of an unfinished stream are left out, with a\n"
	"warning); the trace is only read. If a stream turns out damaged,\n"
	"the counts so far are still printed and the exit status is 1.\n"
	"TRACEDIR may be a pack archive (ovni pack).\n"
	"\n"
	"Options:\n"
	"      --procs  instead, one line per process: loom, pid, rank (or -),\n"
	"               threads, events, then the executable and command line\n"
	"               that ovni record noted (or -), by loom and pid\n"
	"  -h, --help   show this help\n";

struct counter {
	struct trace trace;
	struct streamset set;
	struct evcount count;
};

static int counter_open(struct counter *c, const char *path)
{
	if (trace_open(&c->trace, path, 0) < 0 ||
	    streamset_open(&c->set, &c->trace, NULL, SR_UNSORTED | SR_QUIET) < 0)
		return -1;
	return evcount_init(&c->count);
}

static void counter_free(struct counter *c)
{
	streamset_close(&c->set);
	evcount_free(&c->count);
	trace_close(&c->trace);
}

/* Counts every event, in the merged order the reference reads them. */
static int count_all(struct counter *c)
{
	struct player p;
	if (player_init(&p, c->set.readers, c->set.n, NULL, PLAYER_UNSORTED) < 0)
		return -1;
	int r = evcount_play(&c->count, &p);
	player_free(&p);
	return r;
}

/* One process of the trace for --procs. */
struct proc {
	const char *loom;
	int64_t pid;
	const struct stream_meta *m; /* the stream with what ovni record noted, else the first */
	size_t threads;
	uint64_t events;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;
	int c = strcmp(x->loom, y->loom);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The processes of the trace with their threads and events counted. */
static int procs_print(struct counter *c, struct out *o)
{
	struct proc *procs = calloc(c->set.n ? c->set.n : 1, sizeof(*procs));
	uint64_t *events = calloc(c->set.n ? c->set.n : 1, sizeof(*events));
	size_t np = 0;
	int r = -1;
	struct player p;
	struct player_ev pe;
	if (!procs || !events) {
		msg_err("out of memory for %zu streams", c->set.n);
		goto done;
	}
	if (player_init(&p, c->set.readers, c->set.n, NULL, PLAYER_UNSORTED) < 0)
		goto done;
	while ((r = player_next(&p, &pe)) == 1)
		events[pe.stream]++;
	player_free(&p);
	for (size_t k = 0; k < c->set.n; k++) {
		const struct stream_meta *m = &c->trace.streams[c->set.stream[k]].meta;
		const char *loom = m->loom ? m->loom : "";
		size_t i = 0;
		while (i < np && (procs[i].pid != m->pid || strcmp(procs[i].loom, loom) != 0))
			i++;
		if (i == np)
			procs[np++] = (struct proc){ loom, m->pid, m, 0, 0 };
		if (!procs[i].m->exe && !procs[i].m->argv)
			procs[i].m = m;
		procs[i].threads++;
		procs[i].events += events[k];
	}
	qsort(procs, np, sizeof(*procs), cmp_proc);
	for (size_t i = 0; i < np; i++) {
		const struct stream_meta *m = procs[i].m;
		char line[200], rank[64] = "-";
		if (m->has_rank)
			snprintf(rank, sizeof(rank), "%lld/%lld", (long long)m->rank, (long long)m->nranks);
		out_str(o, procs[i].loom);
		snprintf(line, sizeof(line), " %lld %s %zu %llu ", (long long)procs[i].pid, rank, procs[i].threads,
			 (unsigned long long)procs[i].events);
		out_str(o, line);
		out_str(o, m->exe ? m->exe : "-");
		if (m->argv) {
			out_char(o, ' ');
			dump_cmdline(o, m->argv);
		}
		out_char(o, '\n');
	}
done:
	free(procs);
	free(events);
	return r < 0 ? -1 : 0;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "procs", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, procs = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			procs = 1;
			break;
		case 'h':
			cmd_print_usage(&cmd_top, stdout);
			return 0;
		default:
			cmd_print_usage(&cmd_top, stderr);
			return 1;
		}
	}
	if (optind != argc - 1) {
		msg_err("expected one trace or stream directory; `ovni top --help` explains");
		return 1;
	}
	struct counter cnt = { 0 };
	struct out out;
	int rc = 1;
	if (counter_open(&cnt, argv[optind]) == 0 && out_init(&out, 1, "standard output", 0) == 0) {
		if (procs) {
			rc = procs_print(&cnt, &out) < 0 ? 1 : 0;
		} else {
			rc = count_all(&cnt) < 0 ? 1 : 0;
			if (evcount_print(&cnt.count, &out) < 0)
				rc = 1;
		}
		if (out_close(&out) < 0)
			rc = 1;
	}
	counter_free(&cnt);
	return rc;
}

const struct command cmd_top = {
	.name = "top",
	.summary = "count the events of a trace by MCV",
	.usage = usage,
	.run = run,
};
