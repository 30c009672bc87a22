/* ovni top: how many events of each MCV a trace holds. */
#include <unistd.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "dump/evcount.h"
#include "base/msg.h"
#include "base/out.h"
#include "trace/player.h"
#include "trace/streamset.h"
#include "trace/trace.h"

static const char usage[] =
	"Usage: ovni top TRACEDIR|STREAMDIR\n"
	"Counts the events of a trace by MCV and prints one line per MCV, the\n"
	"most frequent first (equal counts ordered by MCV), as the reference's\n"
	"ovnitop does. Unfinished and unsorted streams are read; the trace is\n"
	"only read. If a stream turns out damaged, the counts so far are still\n"
	"printed and the exit status is 1. TRACEDIR may be a pack archive\n"
	"(ovni pack).\n"
	"\n"
	"Options:\n"
	"  -h, --help  show this help\n";

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
	struct player_ev pe;
	int r;
	if (player_init(&p, c->set.readers, c->set.n, NULL, PLAYER_UNSORTED) < 0)
		return -1;
	while ((r = player_next(&p, &pe)) == 1)
		if (evcount_add(&c->count, pe.ev->mcv) < 0) {
			r = -1;
			break;
		}
	player_free(&p);
	return r;
}

static int run(int argc, char **argv)
{
	int done = cmd_help_only(&cmd_top, argc, argv);
	if (done >= 0)
		return done;
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
