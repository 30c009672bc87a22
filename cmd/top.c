/* ovni top: how many events of each MCV a trace holds. */
#include <getopt.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "evcount.h"
#include "io/msg.h"
#include "io/out.h"
#include "player.h"
#include "trace.h"

static const char usage[] =
	"Usage: ovni top TRACEDIR|STREAMDIR\n"
	"Counts the events of a trace by MCV and prints one line per MCV, the\n"
	"most frequent first (equal counts ordered by MCV), as the reference's\n"
	"ovnitop does. Unfinished and unsorted streams are read; the trace is\n"
	"only read. If a stream turns out damaged, the counts so far are still\n"
	"printed and the exit status is 1.\n"
	"\n"
	"Options:\n"
	"  -h, --help  show this help\n";

struct counter {
	struct trace trace;
	struct stream_reader *readers;
	size_t n;
	struct evcount count;
};

static int counter_open(struct counter *c, const char *path)
{
	if (trace_open(&c->trace, path, 0) < 0)
		return -1;
	c->readers = calloc(c->trace.n, sizeof(*c->readers));
	if (!c->readers) {
		msg_err("out of memory for %zu streams", c->trace.n);
		return -1;
	}
	for (size_t i = 0; i < c->trace.n; i++) {
		struct byte_src *src = trace_stream_src(&c->trace, i);
		if (!src)
			return -1;
		c->n = i + 1;
		if (sr_open(&c->readers[i], src, c->trace.streams[i].obs_name, SR_UNSORTED | SR_QUIET) < 0)
			return -1;
	}
	return evcount_init(&c->count);
}

static void counter_free(struct counter *c)
{
	for (size_t i = 0; i < c->n; i++)
		sr_close(&c->readers[i]);
	free(c->readers);
	evcount_free(&c->count);
	trace_close(&c->trace);
}

/* Counts every event, in the merged order the reference reads them. */
static int count_all(struct counter *c)
{
	struct player p;
	struct player_ev pe;
	int r;
	if (player_init(&p, c->readers, c->n, NULL, PLAYER_UNSORTED) < 0)
		return -1;
	while ((r = player_next(&p, &pe)) == 1)
		if (evcount_add(&c->count, pe.ev.mcv) < 0) {
			r = -1;
			break;
		}
	player_free(&p);
	return r;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			cmd_print_usage(&cmd_top, stdout);
			return 0;
		}
		cmd_print_usage(&cmd_top, stderr);
		return 1;
	}
	if (optind != argc - 1) {
		msg_err("expected one trace or stream directory; `ovni top --help` explains");
		return 1;
	}
	struct counter cnt = { 0 };
	struct out out;
	int rc = 1;
	if (counter_open(&cnt, argv[optind]) == 0 && out_init(&out, 1, "standard output", 0) == 0) {
		rc = count_all(&cnt) < 0 ? 1 : 0;
		if (evcount_print(&cnt.count, &out) < 0 || out_close(&out) < 0)
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
