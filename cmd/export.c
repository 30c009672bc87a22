/* ovni export: a trace as a timeline for other viewers. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/msg.h"
#include "base/out.h"
#include "report/chrome.h"
#include "report/source.h"
#include "base/timearg.h"

static const char usage[] =
	"Usage: ovni export --chrome [OPTIONS] TRACEDIR\n"
	"Plays the trace through the same models as `ovni emu` and writes the\n"
	"timeline in another viewer's format instead of Paraver's.\n"
	"\n"
	"  --chrome   the Trace Event Format (JSON) of Chrome's tracing, which\n"
	"             ui.perfetto.dev and chrome://tracing open: a process per\n"
	"             trace process (its threads) and per loom (its CPUs), a track\n"
	"             per thread or CPU and channel, slices named by the .pcf\n"
	"             labels (nested for stacks: subsystems, MPI, marks, tasks),\n"
	"             instant events for values that last no time; identifiers\n"
	"             (task ids, TIDs) are left out. Streamed in bounded memory.\n"
	"\n"
	"Options:\n"
	"  -o FILE    write to FILE instead of the standard output\n"
	"  --from T   only the part from T on: a time after the first event (1.5s,\n"
	"             200ms, 30us, 12ns) or @CLOCK, a clock of the trace; slices\n"
	"             going on at T start there\n"
	"  --to T     only the part up to T (the same forms)\n"
	"  -h, --help show this help\n"
	"\n"
	"Exit status: 0 on success, 1 on bad options or input (one line says why).\n";

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "chrome", no_argument, NULL, 'C' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct src_opts so;
	memset(&so, 0, sizeof(so));
	const char *outpath = NULL;
	int chrome = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'C': chrome = 1; break;
		case 'F':
			if (timearg_parse(&so.win.from, optarg, "--from") != 0)
				return 1;
			break;
		case 'T':
			if (timearg_parse(&so.win.to, optarg, "--to") != 0)
				return 1;
			break;
		case 'h': cmd_print_usage(&cmd_export, stdout); return 0;
		default: return cmd_try_help(&cmd_export);
		}
	}
	if (!chrome) {
		msg_err("say which format: --chrome (the only one so far)");
		return 1;
	}
	if (!(so.tracedir = cmd_tracedir(&cmd_export, argc, argv)))
		return 1;
	msg_set_quiet(1);

	if (outpath && cmd_output_not_input(so.tracedir, outpath) != 0)
		return 1;
	struct out o;
	if (cmd_output_open(&o, outpath) != 0)
		return 1;
	static struct src s;
	struct chrome ch;
	chrome_init(&ch, &s, &o);
	struct src_reader rd = { chrome_line, &ch };
	int rc = 1;
	if (src_open(&s, &so, &rd) == 0 && src_play(&s) == 0 && chrome_finish(&ch) == 0)
		rc = 0;
	rc = cmd_output_close(&o, outpath, rc);
	chrome_free(&ch);
	src_close(&s);
	return rc;
}

const struct command cmd_export = {
	.name = "export",
	.summary = "write a trace as a Chrome/Perfetto timeline (JSON)",
	.usage = usage,
	.run = run,
};
