/* ovni sort: put the unordered regions of every stream in clock order. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/file.h"
#include "base/fmt.h"
#include "base/jobs.h"
#include "base/msg.h"
#include "sort/sort.h"
#include "trace/trace.h"

static const char usage[] =
	"Usage: ovni sort [-c] [-n N] [-j N] TRACEDIR\n"
	"Sorts the unordered regions (OU[ ... OU]) of every stream of a trace in\n"
	"place, as the reference's ovnisort does: a region's events, and the\n"
	"events before it that are newer than its oldest one, are put in clock\n"
	"order. Only the sorted windows are written, in place and crash-safely:\n"
	"first to a journal beside the stream (stream.obs.sort-journal, synced),\n"
	"then into the stream, which is synced before the journal is removed. A\n"
	"journal left by an interrupted sort is written first; until then the\n"
	"other commands refuse the stream. A stream already in order is not\n"
	"written.\n"
	"\n"
	"Options:\n"
	"  -c          only check: name every stream whose clock goes back; exit\n"
	"              0 if all are sorted, 1 if some are not, 2 on an error\n"
	"  -n N        look back at most N events from a region's end and fail\n"
	"              as ovnisort -n N does when that is not enough (default:\n"
	"              no limit)\n"
	"  -j, --jobs N\n"
	"              sort (or check) N streams at a time, in N processes\n"
	"              (default 0: two per CPU for a sort, which waits for the\n"
	"              disk half the time; one per CPU for -c); on an error no\n"
	"              other stream starts, those begun finish\n"
	"  -h, --help  show this help\n";

/* OVNI_SORT_TEST_KILL=journal-created|journaled|writing|written: die there (crash tests). */
static const char *kill_at;

static void test_hook(const char *phase)
{
	if (kill_at && strcmp(kill_at, phase) == 0)
		raise(SIGKILL);
}

static char *obs_path(const struct trace_stream *s)
{
	char *p = file_join(s->dir, "stream.obs");
	if (!p)
		die("out of memory");
	return p;
}

/* What the job of one stream found, in memory the jobs share. */
enum { STREAM_NOT_RUN, STREAM_DONE, STREAM_UNSORTED, STREAM_FAILED };

struct stream_result {
	unsigned char state; /* STREAM_DONE: sorted (sort) or in order (-c) */
	uint64_t back; /* -c: where the clock goes back */
	struct sort_stats st; /* sort */
};

struct stream_jobs {
	struct trace *t;
	struct sort_opts o; /* sort; .name set per stream */
	struct stream_result *r; /* per stream */
};

static struct stream_result *results(const struct trace *t)
{
	struct stream_result *r = jobs_shared(t->n * sizeof(*r));
	if (!r)
		die("out of memory");
	return r;
}

static int check_one(void *ctx, size_t i)
{
	struct stream_jobs *j = ctx;
	char *path = obs_path(&j->t->streams[i]);
	int r = sort_check_file(path, j->t->streams[i].obs_name, &j->r[i].back);
	free(path);
	j->r[i].state = r < 0 ? STREAM_FAILED : r ? STREAM_DONE : STREAM_UNSORTED;
	return r < 0 ? -1 : 0;
}

static int check_all(struct trace *t, unsigned jobs)
{
	struct stream_jobs j = { .t = t, .r = results(t) };
	int failed = jobs_run(t->n, jobs, check_one, &j) < 0;
	size_t bad = 0;
	/* in path order, up to the first stream that could not be checked */
	for (size_t i = 0; i < t->n && j.r[i].state != STREAM_FAILED && j.r[i].state != STREAM_NOT_RUN; i++) {
		if (j.r[i].state == STREAM_UNSORTED) {
			printf("%s: not sorted: the clock goes back at offset %" PRIu64 "\n",
			       t->streams[i].obs_name, j.r[i].back);
			bad++;
		}
	}
	jobs_shared_free(j.r, t->n * sizeof(*j.r));
	if (failed)
		return 2;
	if (bad)
		printf("%zu of %zu streams NOT sorted\n", bad, t->n);
	else
		printf("all %zu streams sorted\n", t->n);
	return bad ? 1 : 0;
}

/* Every stream directory must take a journal. */
static int writable(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (access(t->streams[i].dir, W_OK) == 0)
			continue;
		msg_err("%s: cannot write a journal beside the stream: %s (a read-only trace can only be checked, with -c)",
			t->streams[i].obs_name, strerror(errno));
		return 0;
	}
	return 1;
}

static void report(const struct trace_stream *s, const struct sort_stats *st)
{
	if (st->empty)
		msg_warn("%s: %" PRIu64 " empty unordered regions (OU[ right before OU])", s->obs_name, st->empty);
	if (st->open_off != UINT64_MAX)
		msg_warn("%s: offset %" PRIu64 ": unordered region never closed; left as it is",
			 s->obs_name, st->open_off);
}

static int sort_one(void *ctx, size_t i)
{
	struct stream_jobs *j = ctx;
	struct sort_opts o = j->o;
	o.name = j->t->streams[i].obs_name;
	char *path = obs_path(&j->t->streams[i]);
	int r = sort_file(path, &o, &j->r[i].st);
	free(path);
	j->r[i].state = r < 0 ? STREAM_FAILED : STREAM_DONE;
	return r < 0 ? -1 : 0;
}

static int sort_all(struct trace *t, uint64_t lookback, unsigned jobs)
{
	if (!writable(t))
		return 1;
	uint64_t regions = 0, end;
	size_t rewritten = 0;
	for (size_t i = 0; i < t->n; i++) { /* before any stream is written */
		int tail = trace_stream_zero_tail(t, i, &end);
		if (tail || trace_stream_staged(t, i, &end)) {
			char *w = fmt_shell_word(t->root);
			msg_err("%s: offset %" PRIu64 ": unfinished (its thread did not end), %s; nothing sorted: "
				"`ovni emu --salvage %s` ends it in a copy",
				t->streams[i].obs_name, end,
				tail == 1 ? "zero bytes after its last event" : tail ? "its last event cut short"
									   : "its last events in a staging file",
				w ? w : t->root);
			free(w);
			return 1;
		}
	}
	struct stream_jobs j = { .t = t, .o = { .lookback = lookback, .hook = test_hook }, .r = results(t) };
	if (jobs == 0) /* each sort waits on the disk (fdatasync) about as long as it computes */
		jobs = 2 * jobs_cpus();
	int r = jobs_run(t->n, jobs, sort_one, &j);
	for (size_t i = 0; i < t->n; i++) { /* in path order, whatever the jobs' */
		if (j.r[i].state != STREAM_DONE)
			continue;
		report(&t->streams[i], &j.r[i].st);
		regions += j.r[i].st.regions;
		rewritten += j.r[i].st.changed;
	}
	jobs_shared_free(j.r, t->n * sizeof(*j.r));
	if (r < 0)
		return 1;
	msg_info("%" PRIu64 " regions in %zu streams; %zu streams sorted in place", regions, t->n, rewritten);
	return 0;
}

static int parse_count(const char *s, uint64_t *n)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0)
		return -1;
	*n = v;
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "jobs", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int check = 0, c;
	uint64_t lookback = 0;
	unsigned jobs = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "cn:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			jobs = (unsigned)cmd_number(optarg, "the number of jobs (-j)", 0, 1024);
			break;
		case 'c':
			check = 1;
			break;
		case 'n':
			if (parse_count(optarg, &lookback) < 0) {
				msg_err("-n wants a number of events >= 1, not '%s'", optarg);
				return 1;
			}
			break;
		case 'h':
			cmd_print_usage(&cmd_sort, stdout);
			return 0;
		default:
			cmd_print_usage(&cmd_sort, stderr);
			return 1;
		}
	}
	if (optind != argc - 1) {
		msg_err("expected one trace directory; `ovni sort --help` explains");
		return 1;
	}
	kill_at = getenv("OVNI_SORT_TEST_KILL");
	struct trace t;
	if (trace_open(&t, argv[optind], check ? 0 : TRACE_SORT_PENDING_OK) < 0)
		return check ? 2 : 1;
	int rc;
	if (t.archive) {
		msg_err("%s: a packed trace cannot be sorted in place; unpack it first", argv[optind]);
		rc = check ? 2 : 1;
	} else {
		rc = check ? check_all(&t, jobs) : sort_all(&t, lookback, jobs);
	}
	trace_close(&t);
	fflush(stdout);
	return rc;
}

const struct command cmd_sort = {
	.name = "sort",
	.summary = "sort the unordered regions of a trace's streams in place",
	.usage = usage,
	.run = run,
};
