/* The subcommand interface: each cmd/<name>.c defines one struct command. */
#ifndef OVNI_CMD_H
#define OVNI_CMD_H

#include <stdio.h>

struct command {
	const char *name;
	const char *summary; /* one line for `ovni --help` */
	const char *usage;   /* the whole --help text, ending in a newline */
	int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit status */
};

/* Prints c->usage to f. */
void cmd_print_usage(const struct command *c, FILE *f);

/* Options of a subcommand whose only option is -h/--help: -1 to go on with
 * the arguments from optind, else the exit status to return. */
int cmd_help_only(const struct command *c, int argc, char **argv);

/* Points at `ovni NAME --help` on stderr after a bad option; returns the
 * exit status 1. */
int cmd_try_help(const struct command *c);

/* The number s given to an option, from lo to hi; else says so (naming the
 * option by what) and exits with status 1. */
long cmd_number(const char *s, const char *what, long lo, long hi);

/* The one TRACEDIR operand left at optind, or NULL once it has said on
 * stderr that it is missing or not alone. */
const char *cmd_tracedir(const struct command *c, int argc, char **argv);

/* 0 when the output a command was given (-o) may be written; -1 once it
 * has said on stderr that the output is a file of the trace the command
 * reads (trace_reads_file), which writing would destroy. */
int cmd_output_not_input(const char *trace, const char *out);

struct out;
/* Where a command writes its text: the file named by -o (out_create; NULL:
 * standard output). 0, or -1 after a message. */
int cmd_output_open(struct out *o, const char *path);
/* Closes it; when the command failed (rc != 0) or the close fails, a file
 * named by -o is removed, so nothing half written is left. Returns the
 * exit status: rc, or 1 when the close failed. */
int cmd_output_close(struct out *o, const char *path, int rc);

/* Every subcommand; the dispatcher's table in ovni.c lists them in order. */
extern const struct command cmd_dump, cmd_top, cmd_events, cmd_emu, cmd_sort,
	cmd_sync, cmd_record, cmd_pack, cmd_unpack, cmd_lib, cmd_report, cmd_export;

#endif
