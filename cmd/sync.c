/* ovni sync: options; the work is in lib/sync.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "base/msg.h"
#include "sync/sync.h"

static const char usage[] =
	"Usage: ovni sync [OPTIONS] [TRACEDIR]\n"
	"Measure the clock offsets between the nodes of a job, for `ovni emu`.\n"
	"Start one process per node (srun, mpirun or mpiexec give the rank and\n"
	"size), or start each with --rank and --size. TRACEDIR (default\n"
	"$OVNI_TRACEDIR, else ovni) must be one directory shared by all nodes: rank\n"
	"0 publishes its address there. Rank 0 writes TRACEDIR/clock-offsets.txt.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE      write the offsets to FILE instead\n"
	"  -n, --samples N        exchanges per node, after a warm-up (default 100)\n"
	"  -d, --drift ROUNDS     measure ROUNDS times and write a drift table\n"
	"                         (default 1: the offsets file)\n"
	"  -w, --wait SECONDS     pause between drift rounds (default 5)\n"
	"  -v, --verbose          rank 0 prints every sample on stdout\n"
	"      --rank R           this process's rank, 0 to N-1 (needs --size)\n"
	"      --size N           the number of processes\n"
	"      --bind ADDR        rank 0 listens on ADDR (default: the address of\n"
	"                         the hostname, else every interface)\n"
	"      --timeout SECONDS  bound on every wait (default 60)\n"
	"      --hostname NAME    this node's name in the offsets file (default:\n"
	"                         the hostname up to its first '.')\n"
	"  -h, --help             show this help\n";

enum { OPT_RANK = 256, OPT_SIZE, OPT_BIND, OPT_TIMEOUT, OPT_HOSTNAME };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "samples", required_argument, NULL, 'n' },
	{ "drift", required_argument, NULL, 'd' },
	{ "wait", required_argument, NULL, 'w' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "rank", required_argument, NULL, OPT_RANK },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static double seconds_arg(const char *opt, const char *v, double lo)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !(x >= lo && x <= 1e6))
		die("%s '%s': expected seconds from %g to 1000000", opt, v, lo);
	return x;
}

/* The test-only clock skew; never read unless set. */
static long long skew_from_env(void)
{
	const char *v = getenv("OVNI_SYNC_TEST_SKEW_NS");
	if (!v)
		return 0;
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (end == v || *end || errno || x > 1000000000000000LL || x < -1000000000000000LL)
		die("OVNI_SYNC_TEST_SKEW_NS='%s': expected nanoseconds, at most 10^15 either way", v);
	msg_warn("OVNI_SYNC_TEST_SKEW_NS=%lld shifts this rank's clock: for tests only", x);
	return x;
}

static const char *env(const char *name)
{
	return getenv(name);
}

static char *default_output(const char *dir)
{
	size_t n = strlen(dir);
	char *p = malloc(n + sizeof("/clock-offsets.txt"));
	if (!p)
		die("out of memory");
	memcpy(p, dir, n);
	memcpy(p + n, "/clock-offsets.txt", sizeof("/clock-offsets.txt"));
	return p;
}

static int run(int argc, char **argv)
{
	struct sync_opts o = { .samples = 100, .rounds = 1, .wait_s = 5, .timeout_s = 60 };
	int rank_opt = -1, size_opt = -1, c;
	const char *host = NULL;
	char *output = NULL;
	while ((c = getopt_long(argc, argv, "o:n:d:w:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'n': o.samples = (int)cmd_number(optarg, "the sample count (-n)", 1, SYNC_SAMPLES_MAX); break;
		case 'd': o.rounds = (int)cmd_number(optarg, "the drift round count (-d)", 1, 1000000); break;
		case 'w': o.wait_s = seconds_arg("-w", optarg, 0); break;
		case 'v': o.verbose = 1; break;
		case OPT_RANK: rank_opt = (int)cmd_number(optarg, "the rank (--rank)", 0, 999999); break;
		case OPT_SIZE: size_opt = (int)cmd_number(optarg, "the number of processes (--size)", 1, 1000000); break;
		case OPT_BIND: o.bind = optarg; break;
		case OPT_TIMEOUT: o.timeout_s = seconds_arg("--timeout", optarg, 0.001); break;
		case OPT_HOSTNAME: host = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 1;
		}
	}
	if (argc - optind > 1)
		die("one trace directory at most, got '%s' and '%s'", argv[optind], argv[optind + 1]);
	if (argc - optind == 1)
		o.dir = argv[optind];
	else if (!(o.dir = getenv("OVNI_TRACEDIR")) || !*o.dir)
		o.dir = "ovni";
	o.output = output ? output : default_output(o.dir);
	if (host) {
		const char *why = sync_hostname_problem(host);
		if (why)
			die("--hostname '%s': %s", host, why);
		snprintf(o.hostname, sizeof(o.hostname), "%s", host);
	} else if (sync_default_hostname(o.hostname, sizeof(o.hostname)) != 0) {
		return 1;
	}
	if (sync_resolve_rank(env, rank_opt, size_opt, &o.rank, &o.size) != 0)
		return 1;
	o.skew_ns = skew_from_env();
	int rc = sync_run(&o);
	if (!output)
		free((char *)o.output);
	return rc == 0 ? 0 : 1;
}

const struct command cmd_sync = {
	.name = "sync",
	.summary = "measure clock offsets between nodes (one process per node)",
	.usage = usage,
	.run = run,
};
