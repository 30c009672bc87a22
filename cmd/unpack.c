/* ovni unpack: a pack archive back into a trace directory. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/bar.h"
#include "base/msg.h"
#include "pack/pack.h"

static const char usage[] =
	"Usage: ovni unpack [OPTIONS] FILE\n"
	"Restores the trace directory archived in FILE by `ovni pack`: every file\n"
	"byte for byte, with its mode and modification time. The directory is FILE\n"
	"without its .ovnipack suffix unless -C says otherwise. Every checksum is\n"
	"checked on the way. Nothing is written outside the directory: absolute\n"
	"paths, \"..\" and links pointing out are refused, and no existing link is\n"
	"followed.\n"
	"\n"
	"Options:\n"
	"  -C, --directory DIR  extract into DIR (made if missing)\n"
	"  -f, --force          overwrite existing files\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0 on success, 1 on an error (one line names the member and\n"
	"byte offset); an existing file is an error without --force.\n";

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "directory", required_argument, NULL, 'C' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	int force = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "C:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': dir = optarg; break;
		case 'f': force = 1; break;
		case 'h': cmd_print_usage(&cmd_unpack, stdout); return 0;
		default: cmd_print_usage(&cmd_unpack, stderr); return 1;
		}
	}
	if (optind != argc - 1) {
		msg_err("expected one archive; `ovni unpack --help` explains");
		return 1;
	}
	const char *file = argv[optind];
	char *def = NULL;
	size_t n = strlen(file), sl = strlen(".ovnipack");
	if (!dir) {
		if (n <= sl || strcmp(file + n - sl, ".ovnipack") != 0) {
			msg_err("%s: name does not end in .ovnipack; say where to extract with -C DIR", file);
			return 1;
		}
		if (!(def = strndup(file, n - sl)))
			die("out of memory");
		dir = def;
	}
	struct pack p;
	struct bar bar;
	bar_start(&bar, "unpack");
	int rc = pack_open(&p, file) < 0 || pack_extract(&p, dir, force, bar_tick, &bar) < 0;
	bar_clear(&bar);
	pack_close(&p);
	free(def);
	return rc;
}

const struct command cmd_unpack = {
	.name = "unpack",
	.summary = "restore a trace directory from an ovni pack archive",
	.usage = usage,
	.run = run,
};
