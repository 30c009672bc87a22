/* ovni emu: a trace into Paraver timelines. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "emu/emu.h"
#include "emu/model.h"
#include "emu/presort.h"
#include "base/file.h"
#include "base/fmt.h"
#include "base/msg.h"
#include "record/salvage.h"
#include "base/timearg.h"

static const char usage[] =
	"Usage: ovni emu [OPTIONS] TRACEDIR\n"
	"Plays the trace in TRACEDIR through the runtime models and writes Paraver\n"
	"timelines: thread.prv/.pcf/.row (one row per thread), cpu.prv/.pcf/.row\n"
	"(one row per CPU) and their views in cfg/ (left alone if it exists).\n"
	"TRACEDIR may be a pack archive (ovni pack), read without unpacking; the\n"
	"outputs then need -o and clock-offsets.txt comes from the archive.\n"
	"Every stream must be finished (ovni.finished = 1).\n"
	"\n"
	"Options:\n"
	"  -o DIR    write the outputs in DIR (created if missing) instead of\n"
	"            TRACEDIR\n"
	"  -c FILE   clock offsets of the nodes (as `ovni sync` writes them); by\n"
	"            default TRACEDIR/clock-offsets.txt when it exists\n"
	"  -a        enable every model, even those no thread requires\n"
	"  -b        also write the breakdown timelines of the models that have them\n"
	"  -l        lint: at the end, also require every model's stacks to be empty\n"
	"  --sort-mem MIB  streams with unordered regions (OU[ ... OU]) that `ovni\n"
	"            sort` has not sorted are sorted in memory, the trace untouched,\n"
	"            up to MIB MiB of them (default 1024); past that, or with 0,\n"
	"            emu stops and asks you to run `ovni sort TRACEDIR`\n"
	"  --from T  --to T  write only that part of the trace: T is a time after\n"
	"            the first event (1.5s, 200ms, 30us, 12ns) or @CLOCK, a clock of\n"
	"            the trace; the rows show at --from the state they had then,\n"
	"            times stay those of the whole trace, playing stops after --to\n"
	"            (an empty or inverted window, or one past the end, is an error)\n"
	"  --salvage   emulate a trace whose program died: every unfinished\n"
	"            stream is ended at its last event in a private copy (the\n"
	"            trace is not written; finished streams are hard links) and\n"
	"            named in a warning; outputs go to -o DIR or TRACEDIR\n"
	"  -h, --help  show this help\n"
	"\n"
	"On a terminal a progress line shows how far it got. ^C stops early and\n"
	"still writes complete Paraver files covering what was played (exit 0).\n"
	"Exit status: 0 on success, 1 on bad input (one line names the stream,\n"
	"byte offset and event) or when the outputs cannot be written.\n";

/* The models this build emulates, one a line: "  ovni 1.1.0 'O'". */
static void print_models(FILE *f)
{
	fputs("\nModels:\n", f);
	for (int id = 0; id < 256; id++)
		for (size_t i = 0; emu_models[i]; i++)
			if ((unsigned char)emu_models[i]->info->id == id)
				fprintf(f, "  %s %s '%c'\n", emu_models[i]->info->name, emu_models[i]->info->version, id);
}

/* --sort-mem MIB: a whole number of MiB. */
static int parse_mib(const char *arg, uint64_t *bytes)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v > (UINT64_MAX >> 20)) {
		msg_err("--sort-mem: '%s' is not a number of MiB", arg);
		return -1;
	}
	*bytes = (uint64_t)v << 20;
	return 0;
}

/* --salvage: emulate a repaired private copy; outputs where they would go. */
static int salvage_start(struct emu_opts *o, char *dir, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, n, "%s/ovni-salvage.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		msg_err("cannot create %s: %s", dir, strerror(errno));
		dir[0] = '\0';
		return -1;
	}
	size_t ncut;
	if (salvage_copy(o->tracedir, dir, &ncut) != 0) {
		salvage_remove(dir);
		dir[0] = '\0';
		return -1;
	}
	msg_info("%zu unfinished streams ended at their last event", ncut);
	if (!o->outdir)
		o->outdir = o->tracedir;
	if (!o->clkoff) {
		static char clk[4200];
		if (file_join_to(clk, sizeof(clk), dir, "clock-offsets.txt") < sizeof(clk) &&
		    access(clk, F_OK) == 0)
			o->clkoff = clk;
	}
	o->tracedir = dir;
	o->salvaged = 1;
	return 0;
}

/* What to open now, with Paraver or without (report and export read a
 * trace as it is: not a salvaged one, whose copy is gone by then). */
static void say_what_next(const struct emu *e)
{
	char thread[4200] = "", cpu[4200] = "", cfg[4200] = ""; /* outdir made files: it fits */
	file_join_to(thread, sizeof(thread), e->outdir, "thread.prv");
	file_join_to(cpu, sizeof(cpu), e->outdir, "cpu.prv");
	file_join_to(cfg, sizeof(cfg), e->outdir, "cfg/");
	msg_info("wrote %s and %s", thread, cpu);
	char *t = e->opts.salvaged ? NULL : fmt_shell_word(e->opts.tracedir);
	if (!t) {
		msg_info("open them in Paraver with the views in %s", cfg);
		return;
	}
	msg_info("open them in Paraver with the views in %s; without Paraver, `ovni report %s` "
		 "sums the time in each state and `ovni export --chrome -o trace.json %s` makes a "
		 "timeline for ui.perfetto.dev", cfg, t, t);
	free(t);
}

static void on_signal(int sig)
{
	(void)sig;
	emu_stop = 1;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "sort-mem", required_argument, NULL, 'M' },
		{ "salvage", no_argument, NULL, 'S' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct emu_opts o;
	memset(&o, 0, sizeof(o));
	o.sort_mem = (uint64_t)PRESORT_DEFAULT_MIB << 20;
	int c, salvage = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:c:ablh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.outdir = optarg; break;
		case 'c': o.clkoff = optarg; break;
		case 'a': o.all_models = 1; break;
		case 'b': o.breakdown = 1; break;
		case 'l': o.lint = 1; break;
		case 'M':
			if (parse_mib(optarg, &o.sort_mem) != 0)
				return 1;
			break;
		case 'S': salvage = 1; break;
		case 'F':
			if (timearg_parse(&o.win.from, optarg, "--from") != 0)
				return 1;
			break;
		case 'T':
			if (timearg_parse(&o.win.to, optarg, "--to") != 0)
				return 1;
			break;
		case 'h':
			fputs(usage, stdout);
			print_models(stdout);
			return 0;
		default:
			return cmd_try_help(&cmd_emu);
		}
	}
	if (!(o.tracedir = cmd_tracedir(&cmd_emu, argc, argv)))
		return 1;
	o.progress = isatty(2);
	char salvaged[4096] = "";
	if (salvage && salvage_start(&o, salvaged, sizeof(salvaged)) != 0)
		return 1;

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	static struct emu e;
	if (emu_init(&e, &o) != 0) {
		emu_free(&e);
		return 1;
	}
	int rc = emu_run(&e);
	int finished = emu_finish(&e) == 0;
	if (!finished)
		rc = -1;
	if (rc == 0 && e.partial && !e.past_window)
		msg_info("stopped early: the outputs are complete up to %lld ns of the trace",
			 (long long)e.last_dclock);
	else if (rc == 0)
		say_what_next(&e);
	else if (e.failed && finished)
		msg_info("the outputs are complete up to the failing event, %lld ns into the trace",
			 (long long)e.last_dclock);
	emu_free(&e);
	if (salvaged[0])
		salvage_remove(salvaged);
	return rc == 0 ? 0 : 1;
}

const struct command cmd_emu = {
	.name = "emu",
	.summary = "turn a trace into Paraver timelines",
	.usage = usage,
	.run = run,
};
