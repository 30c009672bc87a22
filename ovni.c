/* ovni: one binary, many tools. Dispatches `ovni SUBCOMMAND` and the old tool
 * names (ovnidump, ovniemu, ...) reached through symlinks. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "gitrev.h"
#include "base/file.h"
#include "base/msg.h"
#include "base/out.h"
#include "trace/trace.h"
#include "trace/version.h"

static const struct command *const commands[] = {
	&cmd_dump,
	&cmd_top,
	&cmd_events,
	&cmd_emu,
	&cmd_report,
	&cmd_export,
	&cmd_sort,
	&cmd_sync,
	&cmd_record,
	&cmd_pack,
	&cmd_unpack,
	&cmd_lib,
	NULL
};

/* Old tool name -> subcommand. */
static const struct { const char *alias, *cmd; } aliases[] = {
	{ "ovnidump", "dump" },
	{ "ovniemu", "emu" },
	{ "ovnisort", "sort" },
	{ "ovnisync", "sync" },
	{ "ovnitop", "top" },
};

void cmd_print_usage(const struct command *c, FILE *f)
{
	fputs(c->usage, f);
}

int cmd_help_only(const struct command *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	optind = 1;
	int opt = getopt_long(argc, argv, "h", longopts, NULL);
	if (opt == -1)
		return -1;
	cmd_print_usage(c, opt == 'h' ? stdout : stderr);
	return opt == 'h' ? 0 : 1;
}

int cmd_try_help(const struct command *c)
{
	fprintf(stderr, "Try `ovni %s --help`.\n", c->name);
	return 1;
}

int cmd_output_not_input(const char *trace, const char *out)
{
	if (!trace_reads_file(trace, out))
		return 0;
	msg_err("%s: the output would overwrite the trace it reads (%s); write it elsewhere", out, trace);
	return -1;
}

int cmd_output_open(struct out *o, const char *path)
{
	return path ? out_create(o, path, 0) : out_init(o, 1, "standard output", 0);
}

int cmd_output_close(struct out *o, const char *path, int rc)
{
	if (out_close(o) != 0)
		rc = 1;
	if (rc != 0 && path)
		file_remove_partial(path);
	return rc;
}

long cmd_number(const char *s, const char *what, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		die("%s must be a number from %ld to %ld, not '%s'", what, lo, hi, s);
	return v;
}

const char *cmd_tracedir(const struct command *c, int argc, char **argv)
{
	if (optind == argc - 1)
		return argv[optind];
	msg_err(optind >= argc ? "missing TRACEDIR" : "one TRACEDIR only");
	cmd_try_help(c);
	return NULL;
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: ovni SUBCOMMAND [OPTIONS] [ARGS]\n"
		   "Trace parallel programs and turn the traces into Paraver timelines.\n\n"
		   "Subcommands:\n");
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nOptions:\n"
		   "  -h, --help     show this help\n"
		   "  -V, --version  show the version (`ovni version` for details)\n\n"
		   "`ovni help SUBCOMMAND` or `ovni SUBCOMMAND --help` describes a subcommand.\n"
		   "Installed as ovnidump, ovniemu, ovnisort, ovnisync or ovnitop, it runs\n"
		   "that subcommand.\n");
}

static int version_long(void)
{
	printf("ovni %s\n", OVNI_VERSION);
	printf("git revision: %s\n", OVNI_GIT_REV);
	version_print_details(stdout);
	return 0;
}

/* Under a file size limit (ulimit -f) a write fails with EFBIG, which the
 * tools report, instead of SIGXFSZ killing them half way through their
 * outputs. Not for record: APP must get the disposition it was given, which
 * record keeps aside and ignores itself. */
static int start(const struct command *c, int argc, char **argv)
{
	if (c != &cmd_record)
		signal(SIGXFSZ, SIG_IGN);
	return c->run(argc, argv);
}

static int run(const struct command *c, int argc, char **argv)
{
	static char prog[64];
	snprintf(prog, sizeof(prog), "ovni %s", c->name);
	msg_set_prog(prog);
	return start(c, argc, argv);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strcmp(base, aliases[i].alias) != 0)
			continue;
		const struct command *c = find(aliases[i].cmd);
		if (!c) {
			fprintf(stderr, "%s: this build of ovni has no '%s' subcommand\n", base, aliases[i].cmd);
			return 1;
		}
		msg_set_prog(base);
		argv[0] = (char *)c->name;
		return start(c, argc, argv);
	}

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(sub, "-V") || !strcmp(sub, "--version")) {
		printf("ovni %s\n", OVNI_VERSION);
		return 0;
	}
	if (!strcmp(sub, "version"))
		return version_long();
	if (!strcmp(sub, "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		const struct command *c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "ovni: no subcommand '%s'; `ovni --help` lists them\n", argv[2]);
			return 1;
		}
		cmd_print_usage(c, stdout);
		return 0;
	}
	const struct command *c = find(sub);
	if (!c) {
		fprintf(stderr, "ovni: no subcommand '%s'; `ovni --help` lists them\n", sub);
		return 1;
	}
	return run(c, argc - 1, argv + 1);
}
