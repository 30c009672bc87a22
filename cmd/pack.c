/* ovni pack: a trace directory into one compressed archive; --list and
 * --verify read an archive. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/jobs.h"
#include "base/bar.h"
#include "base/file.h"
#include "base/msg.h"
#include "pack/pack.h"
#include "trace/stage.h"

#define DEFAULT_LEVEL 3

static const char usage[] =
	"Usage: ovni pack [OPTIONS] TRACEDIR\n"
	"       ovni pack --list FILE\n"
	"       ovni pack --verify FILE\n"
	"Archives everything in TRACEDIR (streams, metadata, clock offsets, emulator\n"
	"outputs: every file, directory and link, with modes and times) into one\n"
	"file, TRACEDIR.ovnipack by default. Event streams are split into columns\n"
	"(flags and MCV, clock steps, payloads) before zstd; small files share\n"
	"blocks; every block carries a checksum. `ovni dump`, `ovni top` and\n"
	"`ovni emu -o DIR` read the archive (versions 1 to 3 of the format)\n"
	"directly; `ovni unpack` restores the directory. The format is described\n"
	"in ovni-pack(1).\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE    write the archive to FILE\n"
	"  -l, --level LEVEL    zstd level, 1 (fast) to 22 (small); default 3 (blocks\n"
	"                       of small files: 6 or more, of 128 KiB or less: 15)\n"
	"  -T, --threads N      compress on N threads (default 1; 0: one per CPU)\n"
	"      --tar            write instead a plain .tar.zst (TRACEDIR.tar.zst by\n"
	"                       default) that standard tar and zstd extract\n"
	"      --list           list the members of the archive FILE\n"
	"      --verify         decode every block of FILE and check every checksum\n"
	"  -h, --help           show this help\n"
	"\n"
	"On a terminal a progress bar appears for runs longer than a second.\n"
	"Exit status: 0 on success, 1 on an error (one line names the file, and for\n"
	"a damaged archive the member and byte offset).\n";

enum { OPT_TAR = 256, OPT_LIST, OPT_VERIFY };

static int list(const char *path)
{
	struct pack p;
	if (pack_open(&p, path) < 0) {
		pack_close(&p);
		return 1;
	}
	for (size_t i = 0; i < p.n; i++) {
		struct pack_member *m = p.by_path[i]; /* by path: the index order groups files by size */
		char when[32];
		time_t t = (time_t)m->mtime_sec;
		struct tm tm;
		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "%lld", (long long)m->mtime_sec);
		printf("%c %04o %12llu %s %s%s%s%s\n", "fdl"[m->type], (unsigned)m->mode, (unsigned long long)m->size,
		       when, m->path, m->type == PACK_DIR ? "/" : "", m->target ? " -> " : "",
		       m->target ? m->target : "");
	}
	pack_close(&p);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int verify(const char *path)
{
	struct pack p;
	struct bar bar;
	bar_start(&bar, "verify");
	int rc = pack_open(&p, path) < 0 || pack_verify(&p, bar_tick, &bar) < 0;
	bar_clear(&bar);
	if (!rc) {
		uint64_t total = 0;
		for (size_t i = 0; i < p.n; i++)
			total += p.members[i].size;
		printf("%s: %zu members, %llu bytes: ok\n", path, p.n, (unsigned long long)total);
	}
	pack_close(&p);
	return rc;
}

/* DIR.ovnipack (or .tar.zst) beside DIR. A DIR of "." or ".." is named
 * by the directory it leads to: not "..ovnipack" inside the trace. */
static char *default_output(const char *dir, const char *ext)
{
	const char *base = strrchr(dir, '/');
	base = base ? base + 1 : dir;
	char *real = strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ? realpath(dir, NULL) : NULL;
	const char *name = real ? real : dir;
	char *def = malloc(strlen(name) + strlen(ext) + 1);
	if (def)
		sprintf(def, "%s%s", name, ext);
	free(real);
	return def;
}

/* A recording killed with its recorder leaves the last events of its
 * threads in staging files: they go into the archive, as `ovni dump` reads
 * them, and the trace stays as it is. */
static int stream_tail(const char *path, int fd, uint64_t *from, uint8_t **bytes, size_t *n)
{
	struct stat st;
	struct stage_tail t;
	char staged[4096] = "";
	int r = fstat(fd, &st) == 0 ? stage_tail_for(fd, &st, staged, sizeof(staged), &t) : -1;
	if (r < 0) {
		msg_err("%s: cannot add the events of its staging file %s: %s", path, *staged ? staged : "",
			strerror(errno));
		return -1;
	}
	if (r == 0)
		return 0;
	msg_warn("%s: offset %llu: unfinished (its thread did not end): its events from here on are "
		 "taken from its staging file %s", path, (unsigned long long)t.from, staged);
	*from = t.from;
	*bytes = t.bytes;
	*n = t.n;
	return 1;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 'T' },
		{ "tar", no_argument, NULL, OPT_TAR },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pack_write_opts o = { .level = DEFAULT_LEVEL, .threads = 1, .stream_tail = stream_tail };
	const char *output = NULL;
	int mode = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:l:T:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'l': o.level = (int)cmd_number(optarg, "the level (-l)", 1, 22); break;
		case 'T': o.threads = (int)cmd_number(optarg, "the thread count (-T)", 0, 1024); break;
		case OPT_TAR: o.tar = 1; break;
		case OPT_LIST:
		case OPT_VERIFY:
			if (mode && mode != c)
				die("--list and --verify go alone");
			mode = c;
			break;
		case 'h': cmd_print_usage(&cmd_pack, stdout); return 0;
		default: cmd_print_usage(&cmd_pack, stderr); return 1;
		}
	}
	if (optind != argc - 1) {
		msg_err("expected one %s; `ovni pack --help` explains", mode ? "archive" : "trace directory");
		return 1;
	}
	if (mode == OPT_LIST)
		return list(argv[optind]);
	if (mode == OPT_VERIFY)
		return verify(argv[optind]);
	if (o.threads == 0)
		o.threads = (int)jobs_cpus();
	char *dir = strdup(argv[optind]), *def = NULL;
	if (!dir)
		die("out of memory");
	file_strip_slashes(dir);
	if (!output) {
		if (!(def = default_output(dir, o.tar ? ".tar.zst" : ".ovnipack")))
			die("out of memory");
		output = def;
	}
	if (cmd_output_not_input(dir, output) != 0) {
		free(dir);
		free(def);
		return 1;
	}
	struct bar bar;
	bar_start(&bar, "pack");
	o.progress = bar_tick;
	o.arg = &bar;
	int rc = pack_write(dir, output, &o) < 0;
	bar_clear(&bar);
	free(dir);
	free(def);
	return rc;
}

const struct command cmd_pack = {
	.name = "pack",
	.summary = "archive a trace into one compressed file",
	.usage = usage,
	.run = run,
};
