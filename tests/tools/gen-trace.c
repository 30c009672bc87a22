/* gen-trace: writes a synthetic ovni trace (finished streams that the
 * emulator accepts) for benchmarks and tests. `gen-trace --help` explains. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/out.h"
#include "trace/stream.h"

static const char usage[] =
	"Usage: gen-trace [OPTIONS] DIR\n"
	"Writes a synthetic ovni trace to DIR (created; must not hold a trace):\n"
	"DIR/loom.nodeL/proc.PID/thread.TID/stream.{json,obs}, one stream per\n"
	"thread, each with finished metadata (version 3, ovni.require,\n"
	"rank/nranks, loom_cpus: one CPU per thread of the loom, thread i of a\n"
	"loom runs on CPU i). Every thread begins with OHx and ends with OHe, so\n"
	"the emulator accepts the result (after `ovni sort` for --kind kernel).\n"
	"\n"
	"Options:\n"
	"  -n, --events N    events per thread, OHx and OHe included (default 1000000)\n"
	"  -t, --threads N   threads per process (default 1)\n"
	"  -p, --procs N     processes per loom (default 1)\n"
	"  -l, --looms N     looms, named node0, node1, ... (default 1)\n"
	"  -k, --kind KIND   what each thread does between OHx and OHe (default pause):\n"
	"                      pause   OHp/OHr pairs, no payloads\n"
	"                      emit    OB. bursts\n"
	"                      nanos6  a 6Yc+ type declaration (jumbo), then tasks:\n"
	"                              6C[ 6Tc 6C] 6Tx 6Te (payloads of 4 and 8 bytes)\n"
	"                      kernel  OB. bursts and, every 50 events, an unsorted\n"
	"                              region OU[ KCO KCI OU] whose KCO/KCI clocks\n"
	"                              fall before the two previous events (needs\n"
	"                              `ovni sort` before `ovni emu`)\n"
	"                      mark    OM[/OM] pairs (12-byte payloads) of mark type 1,\n"
	"                              declared in ovni.mark\n"
	"                      tasks   nanos6 tasks in batches of 1000: 6W[, 1000 6Tc,\n"
	"                              6W], then per task 6Wt 6Tx 6Ma 6MA 6Te 6WT\n"
	"                              (about 7 events per task, 1000 live tasks)\n"
	"                      nosv    VHw, a VYc+ type declaration (jumbo), then tasks\n"
	"                              of 10 events: VTc VAs VAS VSh VSf VTx VTp VTr\n"
	"                              VTe and VPr or VPp (idle), then VHW;\n"
	"                              nosv.can_breakdown is true\n"
	"  -s, --seed N      seed of the clock steps (default 1)\n"
	"      --start NS    clock of the first event of the first thread\n"
	"                    (default 1000000000000); threads start a few ns apart\n"
	"      --step NS     mean distance between events of a thread (default 100)\n"
	"      --unfinished  leave ovni.finished out of every stream.json\n"
	"      --real-clock  steps as a real tight loop measures them: exactly the\n"
	"                    step, 1 in 64 a few ns more, 1 in 4096 a gap of up to\n"
	"                    100 us (the default steps are uniformly random)\n"
	"  -h, --help        show this help\n";

enum kind { PAUSE, EMIT, NANOS6, KERNEL, MARK, TASKS, NOSV };

struct opts {
	long long events, threads, procs, looms, seed, start, step;
	enum kind kind;
	int unfinished, real_clock;
	const char *dir;
};

struct gen {
	struct out o;
	uint64_t clock, rng;
	long long left; /* events still to write */
	long long step;
	int real_clock;
	uint64_t prev[2]; /* clocks of the last two events */
};

static void die_errno(const char *what, const char *path)
{
	fprintf(stderr, "gen-trace: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static uint64_t next_rng(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

/* Clock of the next event: step/2 .. 3*step/2 after the previous one. */
static uint64_t tick(struct gen *g)
{
	if (g->real_clock) {
		uint64_t r = next_rng(g);
		g->clock += (uint64_t)g->step + (r % 64 == 0 ? (r >> 6) % 64 : 0) +
			    (r % 4096 == 1 ? (r >> 12) % 100000 : 0);
		return g->clock;
	}
	g->clock += (uint64_t)(g->step / 2) + next_rng(g) % (uint64_t)(g->step + 1);
	return g->clock;
}

static void emit_at(struct gen *g, const char *mcv, uint64_t clock, const void *p, size_t n)
{
	uint8_t *d = (uint8_t *)out_reserve(&g->o, EV_HEADER_SIZE + EV_MAX_PAYLOAD);
	out_commit(&g->o, ev_encode(d, mcv, clock, p, n));
	g->prev[0] = g->prev[1];
	g->prev[1] = clock;
	g->left--;
}

static void emit(struct gen *g, const char *mcv, const void *p, size_t n)
{
	emit_at(g, mcv, tick(g), p, n);
}

static void emit_jumbo(struct gen *g, const char *mcv, const void *p, uint32_t n)
{
	uint8_t *d = (uint8_t *)out_reserve(&g->o, EV_JUMBO_HEADER_SIZE + n);
	out_commit(&g->o, ev_encode_jumbo(d, mcv, tick(g), p, n));
	g->left--;
}

static void put_u32(uint8_t *d, uint32_t v)
{
	memcpy(d, &v, 4);
}

static void body_pause(struct gen *g)
{
	if ((g->left - 1) % 2) /* pairs must fill all but the OHe */
		emit(g, "OB.", NULL, 0);
	while (g->left > 2) {
		emit(g, "OHp", NULL, 0);
		emit(g, "OHr", NULL, 0);
	}
}

static void body_emit(struct gen *g)
{
	while (g->left > 1)
		emit(g, "OB.", NULL, 0);
}

static void body_nanos6(struct gen *g, uint32_t typeid, uint32_t *taskid, uint32_t idstep)
{
	uint8_t decl[64];
	put_u32(decl, typeid);
	int len = snprintf((char *)decl + 4, sizeof(decl) - 4, "gen-type-%u", typeid);
	if (g->left >= 4) {
		emit(g, "6Hw", NULL, 0);
		emit_jumbo(g, "6Yc", decl, 4 + (uint32_t)len + 1);
		while (g->left >= 7) {
			uint8_t p[8];
			put_u32(p, *taskid);
			put_u32(p + 4, typeid);
			emit(g, "6C[", NULL, 0);
			emit(g, "6Tc", p, 8);
			emit(g, "6C]", NULL, 0);
			emit(g, "6Tx", p, 4);
			emit(g, "6Te", p, 4);
			*taskid += idstep;
		}
		emit(g, "6HW", NULL, 0);
	}
	body_emit(g);
}

/* Tasks created ahead and run later, as a runtime does. */
static void body_tasks(struct gen *g, uint32_t typeid, uint32_t *taskid, uint32_t idstep)
{
	enum { BATCH = 1000 };
	uint8_t decl[64];
	put_u32(decl, typeid);
	int len = snprintf((char *)decl + 4, sizeof(decl) - 4, "gen-task-type-%u", typeid);
	if (g->left < 4) {
		body_emit(g);
		return;
	}
	emit(g, "6Hw", NULL, 0);
	emit_jumbo(g, "6Yc", decl, 4 + (uint32_t)len + 1);
	/* room for a batch of n: 2 + 7n events, the 6HW and the OHe */
	while (g->left >= 2 + 7 + 2) {
		long long n = (g->left - 4) / 7;
		if (n > BATCH)
			n = BATCH;
		uint8_t p[8];
		put_u32(p + 4, typeid);
		emit(g, "6W[", NULL, 0);
		for (long long i = 0; i < n; i++) {
			put_u32(p, *taskid + (uint32_t)i * idstep);
			emit(g, "6Tc", p, 8);
		}
		emit(g, "6W]", NULL, 0);
		for (long long i = 0; i < n; i++) {
			put_u32(p, *taskid + (uint32_t)i * idstep);
			emit(g, "6Wt", NULL, 0);
			emit(g, "6Tx", p, 4);
			emit(g, "6Ma", NULL, 0);
			emit(g, "6MA", NULL, 0);
			emit(g, "6Te", p, 4);
			emit(g, "6WT", NULL, 0);
		}
		*taskid += (uint32_t)n * idstep;
	}
	emit(g, "6HW", NULL, 0);
	body_emit(g);
}

/* A nOS-V worker: each task is created, submitted, picked by the
 * scheduler, run with a pause inside, then the worker idles or goes on. */
static void body_nosv(struct gen *g, uint32_t typeid, uint32_t *taskid, uint32_t idstep)
{
	uint8_t decl[64];
	put_u32(decl, typeid);
	int len = snprintf((char *)decl + 4, sizeof(decl) - 4, "gen-nosv-type-%u", typeid);
	if (g->left >= 4) {
		emit(g, "VHw", NULL, 0);
		emit_jumbo(g, "VYc", decl, 4 + (uint32_t)len + 1);
		int resting = 0;
		while (g->left >= 12) {
			uint8_t p[8];
			put_u32(p, *taskid);
			put_u32(p + 4, typeid);
			emit(g, "VTc", p, 8);
			emit(g, "VAs", NULL, 0);
			emit(g, "VAS", NULL, 0);
			emit(g, "VSh", NULL, 0);
			emit(g, "VSf", NULL, 0);
			put_u32(p + 4, 0); /* body id of a normal task */
			emit(g, "VTx", p, 8);
			emit(g, "VTp", p, 8);
			emit(g, "VTr", p, 8);
			emit(g, "VTe", p, 8);
			resting = !resting;
			emit(g, resting ? "VPr" : "VPp", NULL, 0);
			*taskid += idstep;
		}
		emit(g, "VHW", NULL, 0);
	}
	body_emit(g);
}

static void body_kernel(struct gen *g)
{
	long long n = 0;
	while (g->left > 1) {
		if (++n % 50 == 0 && g->left > 5 && g->prev[0] && g->prev[1] - g->prev[0] > 3) {
			uint64_t before = g->prev[0];
			emit(g, "OU[", NULL, 0);
			emit_at(g, "KCO", before + 1, NULL, 0);
			emit_at(g, "KCI", before + 2, NULL, 0);
			emit(g, "OU]", NULL, 0);
		} else {
			emit(g, "OB.", NULL, 0);
		}
	}
}

static void body_mark(struct gen *g)
{
	uint8_t p[12];
	int64_t value = 1;
	int32_t type = 1;
	memcpy(p + 8, &type, 4);
	if ((g->left - 1) % 2)
		emit(g, "OB.", NULL, 0);
	while (g->left > 2) {
		memcpy(p, &value, 8);
		emit(g, "OM[", p, 12);
		emit(g, "OM]", p, 12);
		value = value % 4 + 1;
	}
}

static void write_json(const char *path, const struct opts *o, long long loom, long long pid,
		       long long tid, long long rank)
{
	struct out j;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		die_errno("cannot create", path);
	out_init(&j, fd, path, 0);
	out_printf(&j, "{\n    \"version\": 3,\n    \"ovni\": {\n"
		       "        \"lib\": {\n            \"version\": \"1.14.0\",\n"
		       "            \"commit\": \"gen-trace\"\n        },\n"
		       "        \"part\": \"thread\",\n        \"tid\": %lld,\n        \"pid\": %lld,\n"
		       "        \"loom\": \"node%lld\",\n        \"app_id\": 1,\n"
		       "        \"require\": {\n            \"ovni\": \"1.1.0\"",
		   tid, pid, loom);
	if (o->kind == NANOS6 || o->kind == TASKS)
		out_str(&j, ",\n            \"nanos6\": \"1.1.0\"");
	if (o->kind == KERNEL)
		out_str(&j, ",\n            \"kernel\": \"1.0.0\"");
	if (o->kind == NOSV)
		out_str(&j, ",\n            \"nosv\": \"2.7.0\"");
	out_str(&j, "\n        },\n");
	if (o->kind == MARK)
		out_str(&j, "        \"mark\": {\n            \"1\": {\n"
			    "                \"title\": \"Generated mark\",\n"
			    "                \"chan_type\": \"stack\",\n"
			    "                \"labels\": {\n                    \"1\": \"one\",\n"
			    "                    \"2\": \"two\",\n                    \"3\": \"three\",\n"
			    "                    \"4\": \"four\"\n                }\n            }\n        },\n");
	out_printf(&j, "        \"rank\": %lld,\n        \"nranks\": %lld,\n        \"loom_cpus\": [",
		   rank, o->looms * o->procs);
	long long ncpus = o->procs * o->threads;
	for (long long c = 0; c < ncpus; c++)
		out_printf(&j, "%s\n            {\n                \"index\": %lld,\n"
			       "                \"phyid\": %lld\n            }",
			   c ? "," : "", c, c);
	out_str(&j, "\n        ]");
	if (!o->unfinished)
		out_str(&j, ",\n        \"finished\": 1");
	out_str(&j, "\n    }");
	if (o->kind == NOSV) /* every subsystem and idle change is there: -b works */
		out_str(&j, ",\n    \"nosv\": {\n        \"can_breakdown\": true\n    }");
	out_str(&j, "\n}");
	if (out_close(&j) != 0)
		exit(1);
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		die_errno("cannot create", path);
}

/* One thread's stream: OHx, the body of its kind, OHe. */
static void write_stream(const char *path, const struct opts *o, int32_t cpu, uint64_t start,
			 uint32_t typeid, uint32_t *taskid, uint32_t idstep, uint64_t seed)
{
	struct gen g;
	memset(&g, 0, sizeof(g));
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		die_errno("cannot create", path);
	out_init(&g.o, fd, path, 0);
	g.clock = start;
	g.rng = seed * 0x9e3779b97f4a7c15ull + 1;
	g.step = o->step;
	g.real_clock = o->real_clock;
	g.left = o->events;
	uint8_t hdr[STREAM_HEADER_SIZE];
	stream_header(hdr);
	out_mem(&g.o, hdr, sizeof(hdr));

	uint8_t x[16] = { 0 };
	int32_t creator = -1;
	memcpy(x, &cpu, 4);
	memcpy(x + 4, &creator, 4);
	emit_at(&g, "OHx", start, x, 16);
	switch (o->kind) {
	case PAUSE: body_pause(&g); break;
	case EMIT: body_emit(&g); break;
	case NANOS6: body_nanos6(&g, typeid, taskid, idstep); break;
	case KERNEL: body_kernel(&g); break;
	case MARK: body_mark(&g); break;
	case TASKS: body_tasks(&g, typeid, taskid, idstep); break;
	case NOSV: body_nosv(&g, typeid, taskid, idstep); break;
	}
	if (g.left > 0)
		emit(&g, "OHe", NULL, 0);
	if (out_close(&g.o) != 0)
		exit(1);
}

static long long number(const char *s, const char *opt, long long min)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v < min) {
		fprintf(stderr, "gen-trace: %s needs an integer >= %lld, not '%s'\n", opt, min, s);
		exit(1);
	}
	return v;
}

static void parse(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "procs", required_argument, NULL, 'p' },
		{ "looms", required_argument, NULL, 'l' },
		{ "kind", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "start", required_argument, NULL, 'S' },
		{ "step", required_argument, NULL, 'T' },
		{ "unfinished", no_argument, NULL, 'U' },
		{ "real-clock", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const kinds[] = { "pause", "emit", "nanos6", "kernel", "mark", "tasks", "nosv" };
	*o = (struct opts){ 1000000, 1, 1, 1, 1, 1000000000000LL, 100, PAUSE, 0, 0, NULL };
	int c;
	while ((c = getopt_long(argc, argv, "n:t:p:l:k:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o->events = number(optarg, "--events", 2); break;
		case 't': o->threads = number(optarg, "--threads", 1); break;
		case 'p': o->procs = number(optarg, "--procs", 1); break;
		case 'l': o->looms = number(optarg, "--looms", 1); break;
		case 's': o->seed = number(optarg, "--seed", 0); break;
		case 'S': o->start = number(optarg, "--start", 0); break;
		case 'T': o->step = number(optarg, "--step", 4); break;
		case 'U': o->unfinished = 1; break;
		case 'R': o->real_clock = 1; break;
		case 'k': {
			size_t i;
			for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				if (strcmp(optarg, kinds[i]) == 0)
					break;
			if (i == sizeof(kinds) / sizeof(kinds[0])) {
				fprintf(stderr, "gen-trace: unknown kind '%s' (see --help)\n", optarg);
				exit(1);
			}
			o->kind = (enum kind)i;
			break;
		}
		case 'h': fputs(usage, stdout); exit(0);
		default: fputs(usage, stderr); exit(1);
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		exit(1);
	}
	o->dir = argv[optind];
}

int main(int argc, char **argv)
{
	struct opts o;
	parse(&o, argc, argv);
	char path[4096];
	make_dir(o.dir);
	long long rank = 0;
	for (long long l = 0; l < o.looms; l++) {
		snprintf(path, sizeof(path), "%s/loom.node%lld", o.dir, l);
		make_dir(path);
		for (long long p = 0; p < o.procs; p++, rank++) {
			long long pid = 1000 + p * (o.threads + 10);
			uint32_t taskid0 = 1;
			for (long long t = 0; t < o.threads; t++) {
				long long tid = pid + t;
				int n = snprintf(path, sizeof(path), "%s/loom.node%lld/proc.%lld", o.dir, l, pid);
				make_dir(path);
				snprintf(path + n, sizeof(path) - (size_t)n, "/thread.%lld", tid);
				make_dir(path);
				size_t m = strlen(path);
				snprintf(path + m, sizeof(path) - m, "/stream.json");
				write_json(path, &o, l, pid, tid, rank);
				snprintf(path + m, sizeof(path) - m, "/stream.obs");
				uint32_t taskid = taskid0 + (uint32_t)t;
				uint64_t start = (uint64_t)o.start + (uint64_t)(rank * o.threads + t) * 7;
				write_stream(path, &o, (int32_t)(p * o.threads + t), start, (uint32_t)t + 1,
					     &taskid, (uint32_t)o.threads,
					     (uint64_t)o.seed * 1000003u + (uint64_t)(rank * o.threads + t));
			}
		}
	}
	return 0;
}
