/* ovni report: the time spent in each state, without Paraver. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/msg.h"
#include "base/out.h"
#include "report/source.h"
#include "report/tally.h"
#include "base/timearg.h"

static const char usage[] =
	"Usage: ovni report [OPTIONS] TRACEDIR\n"
	"Plays the trace through the same models as `ovni emu` and sums, for each\n"
	"thread (or CPU, process, task type), the time spent in each state of each\n"
	"channel: thread state, subsystems, modes, task types, MPI functions, marks.\n"
	"A state lasts from the change that sets it to the next one, as in the\n"
	"rows of thread.prv and cpu.prv (identifiers such as task ids are left\n"
	"out). Each line has the time, its share and how many times the state was\n"
	"entered; a channel with several states ends with their total. No file is\n"
	"written in TRACEDIR, which may be a pack archive.\n"
	"\n"
	"Options:\n"
	"  -o FILE          write to FILE instead of the standard output\n"
	"      --by WHAT    thread (default), cpu, process or task-type (the time\n"
	"                   of the threads while they run each task type)\n"
	"      --model M    only the channels of model M (ovni, nanos6, nosv, ...)\n"
	"      --from T     only the time from T on: a time after the first event\n"
	"                   (1.5s, 200ms, 30us, 12ns) or @CLOCK, a clock of the trace\n"
	"      --to T       only the time up to T (the same forms)\n"
	"      --csv        comma-separated values, one line per state, exact ns\n"
	"      --json       one JSON document: groups, channels, states, exact ns\n"
	"  -h, --help       show this help\n"
	"\n"
	"Share: of the window for a thread or CPU, of the summed time of its threads\n"
	"for a process, of the time spent in the type for a task type.\n"
	"Exit status: 0 on success, 1 on bad options or input (one line says why).\n";

static int parse_by(const char *s, enum tally_by *by)
{
	static const struct { const char *name; enum tally_by by; } names[] = {
		{ "thread", TALLY_THREAD },
		{ "cpu", TALLY_CPU },
		{ "process", TALLY_PROCESS },
		{ "task-type", TALLY_TASK_TYPE },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*by = names[i].by;
			return 0;
		}
	}
	msg_err("--by '%s': expected thread, cpu, process or task-type", s);
	return -1;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "by", required_argument, NULL, 'b' },
		{ "model", required_argument, NULL, 'm' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "csv", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	struct src_opts so;
	memset(&so, 0, sizeof(so));
	enum tally_by by = TALLY_THREAD;
	enum tally_format fmt = TALLY_TEXT;
	const char *outpath = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'b':
			if (parse_by(optarg, &by) != 0)
				return 1;
			break;
		case 'm': so.model = optarg; break;
		case 'F':
			if (timearg_parse(&so.win.from, optarg, "--from") != 0)
				return 1;
			break;
		case 'T':
			if (timearg_parse(&so.win.to, optarg, "--to") != 0)
				return 1;
			break;
		case 'C': fmt = TALLY_CSV; break;
		case 'J': fmt = TALLY_JSON; break;
		case 'h': cmd_print_usage(&cmd_report, stdout); return 0;
		default: return cmd_try_help(&cmd_report);
		}
	}
	if (!(so.tracedir = cmd_tracedir(&cmd_report, argc, argv)))
		return 1;
	msg_set_quiet(1);
	if (outpath && cmd_output_not_input(so.tracedir, outpath) != 0)
		return 1;

	static struct src s;
	struct tally t;
	tally_init(&t, &s, by);
	struct src_reader rd = { tally_line, &t };
	int rc = 1;
	if (src_open(&s, &so, &rd) == 0 && src_play(&s) == 0 && tally_finish(&t) == 0) {
		struct out o;
		if (cmd_output_open(&o, outpath) == 0)
			rc = cmd_output_close(&o, outpath, tally_write(&t, &o, fmt) == 0 ? 0 : 1);
	}
	tally_free(&t);
	src_close(&s);
	return rc;
}

const struct command cmd_report = {
	.name = "report",
	.summary = "time spent in each state, per thread, CPU, process or task type",
	.usage = usage,
	.run = run,
};
