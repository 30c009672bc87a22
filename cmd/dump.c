/* ovni dump: every event of a trace in clock order, as text. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "dump/dump.h"
#include "trace/events.h"
#include "base/msg.h"
#include "base/out.h"
#include "trace/player.h"
#include "trace/streamset.h"
#include "trace/trace.h"
#include "base/timearg.h"

static const char usage[] =
	"Usage: ovni dump [OPTIONS] TRACEDIR|STREAMDIR\n"
	"Prints the events of a trace merged in clock order, one a line: the raw\n"
	"clock, the MCV, the stream's path in the trace (empty for a stream\n"
	"directory) and a description of the event, or UNKNOWN for an MCV that no\n"
	"model declares. Streams recorded by ovni record first get \"# \" lines:\n"
	"the executable and command line of their process, and the context\n"
	"switches the kernel dropped, if any (not with -x or --json). Clock\n"
	"offsets are not applied; unfinished and unsorted\n"
	"streams are read (a clock going backwards is a warning; zero bytes\n"
	"after the last event of an unfinished stream are left out, with a\n"
	"warning). The trace is only read; it may also be a pack archive\n"
	"(ovni pack).\n"
	"\n"
	"Options:\n"
	"  -x, --hex          the payload bytes in hex (\":%02x\" each) instead of the\n"
	"                     description, as the reference's ovnidump -x\n"
	"      --json         one JSON object per event: clock, mcv, stream, offset\n"
	"                     and args (the named payload fields), or payload (hex)\n"
	"                     for an MCV that no model declares\n"
	"      --stream GLOB  only the streams whose path matches GLOB (fnmatch),\n"
	"                     e.g. 'loom.*/proc.12/*'\n"
	"      --mcv GLOB     only the events whose MCV matches GLOB, e.g. 'OH*'\n"
	"      --from T       only the events from T on: a time after the first\n"
	"                     event (1.5s, 200ms, 30us, 12ns) or @CLOCK, a raw clock\n"
	"      --to T         only the events up to T (same forms); a window that\n"
	"                     is empty, inverted or holds no event is an error\n"
	"  -h, --help         show this help\n";

enum mode { TEXT, HEX, JSON };

struct opts {
	enum mode mode;
	const char *stream_glob, *mcv_glob, *path;
	struct timewin win;
	int64_t from, to; /* raw clocks, once the start is known */
};

static int parse(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hex", no_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "stream", required_argument, NULL, 's' },
		{ "mcv", required_argument, NULL, 'm' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	o->mode = TEXT;
	o->from = INT64_MIN;
	o->to = INT64_MAX;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "xh", longopts, NULL)) != -1) {
		switch (c) {
		case 'x': o->mode = HEX; break;
		case 'j': o->mode = JSON; break;
		case 's': o->stream_glob = optarg; break;
		case 'm': o->mcv_glob = optarg; break;
		case 'f':
			if (timearg_parse(&o->win.from, optarg, "--from") < 0)
				return -1;
			break;
		case 't':
			if (timearg_parse(&o->win.to, optarg, "--to") < 0)
				return -1;
			break;
		case 'h': cmd_print_usage(&cmd_dump, stdout); exit(0);
		default: cmd_print_usage(&cmd_dump, stderr); return -1;
		}
	}
	if (optind != argc - 1) {
		msg_err("expected one trace or stream directory; `ovni dump --help` explains");
		return -1;
	}
	o->path = argv[optind];
	return 0;
}

struct dumper {
	struct trace trace;
	struct streamset set;
	struct dump_tail *tails;
	struct mcv_filter mcv;
	int has_mcv;
};

static void dumper_free(struct dumper *d)
{
	for (size_t i = 0; d->tails && i < d->set.n; i++)
		dump_tail_free(&d->tails[i]);
	free(d->tails);
	streamset_close(&d->set);
	if (d->has_mcv)
		mcv_filter_free(&d->mcv);
	trace_close(&d->trace);
}

/* Opens the streams that the --stream glob selects, in trace order. */
static int dumper_open(struct dumper *d, const struct opts *o)
{
	memset(d, 0, sizeof(*d));
	if (trace_open(&d->trace, o->path, 0) < 0 ||
	    streamset_open(&d->set, &d->trace, o->stream_glob, SR_UNSORTED | SR_QUIET) < 0)
		return -1;
	if (!(d->tails = calloc(d->set.n, sizeof(*d->tails)))) {
		msg_err("out of memory for %zu streams", d->set.n);
		return -1;
	}
	for (size_t k = 0; k < d->set.n; k++)
		if (dump_tail_init(&d->tails[k], d->trace.streams[d->set.stream[k]].relpath) < 0)
			return -1;
	if (o->mcv_glob) {
		if (mcv_filter_init(&d->mcv, o->mcv_glob) < 0)
			return -1;
		d->has_mcv = 1;
	}
	return 0;
}

static int keep(struct dumper *d, const struct opts *o, const struct player_ev *pe)
{
	if ((int64_t)pe->ev->clock < o->from || (int64_t)pe->ev->clock > o->to)
		return 0;
	return !d->has_mcv || mcv_filter_match(&d->mcv, pe->ev->mcv);
}

/* The window in raw clocks: times count from the earliest first event of
 * the streams read. */
static int resolve_window(struct opts *o, const struct player *p, size_t n)
{
	int64_t start = INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct ev *ev = player_first(p, i);
		if (ev && (int64_t)ev->clock < start)
			start = (int64_t)ev->clock;
	}
	if (start == INT64_MAX)
		start = 0;
	return timewin_resolve(&o->win, start, &o->from, &o->to);
}

static int play(struct dumper *d, struct opts *o, struct out *out)
{
	struct player p;
	struct player_ev pe;
	int windowed = timewin_set(&o->win);
	int filtered = d->has_mcv || windowed;
	uint64_t inside = 0;
	int r;
	if (player_init(&p, d->set.readers, d->set.n, NULL, PLAYER_UNSORTED) < 0)
		return -1;
	if (windowed && resolve_window(o, &p, d->set.n) < 0) {
		player_free(&p);
		return -1;
	}
	for (size_t k = 0; o->mode == TEXT && k < d->set.n; k++) {
		const struct trace_stream *s = &d->trace.streams[d->set.stream[k]];
		dump_notes(out, &s->meta, s->relpath);
	}
	if (o->mode != JSON && !filtered) { /* the common case, in one loop */
		r = o->mode == HEX ? dump_hex_play(out, &p, d->tails) : dump_text_play(out, &p, d->tails);
		player_free(&p);
		return r;
	}
	while ((r = player_next(&p, &pe)) == 1 && !out->err) {
		if (windowed && (int64_t)pe.ev->clock >= o->from && (int64_t)pe.ev->clock <= o->to)
			inside++;
		if (filtered && !keep(d, o, &pe))
			continue;
		if (o->mode == HEX)
			dump_hex(out, pe.ev, &d->tails[pe.stream]);
		else if (o->mode == TEXT)
			dump_text(out, pe.ev, &d->tails[pe.stream]);
		else
			dump_json(out, pe.ev, d->trace.streams[d->set.stream[pe.stream]].relpath);
	}
	player_free(&p);
	if (r < 0)
		return -1;
	if (windowed && inside == 0 && !out->err) {
		msg_err("no event in the window --from/--to (clocks %lld to %lld)", (long long)o->from,
			(long long)o->to);
		return -1;
	}
	return 0;
}

static int run(int argc, char **argv)
{
	struct opts o;
	if (parse(&o, argc, argv) < 0)
		return 1;
	if (o.mode != HEX && events_init() < 0)
		return 1;
	struct dumper d;
	struct out out;
	int rc = 1;
	if (dumper_open(&d, &o) == 0 && out_init(&out, 1, "standard output", 0) == 0) {
		rc = play(&d, &o, &out) < 0 ? 1 : 0;
		if (out_close(&out) < 0)
			rc = 1;
	}
	dumper_free(&d);
	return rc;
}

const struct command cmd_dump = {
	.name = "dump",
	.summary = "print the events of a trace in clock order",
	.usage = usage,
	.run = run,
};
