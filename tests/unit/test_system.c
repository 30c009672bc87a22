/* system_build: the merge rules, order and names, checked on small built
 * traces and against what the reference decided and wrote for every golden
 * case (accept/reject, .row names, sort mode and counts). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"
#include "trace/system.h"
#include "t.h"
#include "trace/trace.h"
#include "tstream.h"
#include "ttrace.h"

static struct trace tr;
static struct system sys;
static char msgs[8192];

/* Opens tt_root for emu and builds the system; messages go to msgs. */
static int load(void)
{
	cap_begin();
	int rc = trace_open(&tr, tt_root, TRACE_REQUIRE_FINISHED);
	if (rc == 0) {
		rc = system_build(&sys, &tr);
		if (rc < 0)
			trace_close(&tr);
	}
	snprintf(msgs, sizeof(msgs), "%s", cap_end());
	return rc;
}

static void unload(void)
{
	system_free(&sys);
	trace_close(&tr);
}

static const char *cpus1 = "\"loom_cpus\": [{\"index\": 0, \"phyid\": 0}]";

/* A finished thread with app_id 1 and the given extra keys. */
static void thread(const char *loom, long pid, long tid, const char *extra)
{
	char rel[256], keys[2048];
	snprintf(rel, sizeof(rel), "loom.%s/proc.%ld/thread.%ld", loom, pid, tid);
	snprintf(keys, sizeof(keys), "\"app_id\": 1%s%s", *extra ? ", " : "", extra);
	tt_stream(rel, tt_thread_json(loom, pid, tid, keys));
}

static int has(const char *needle)
{
	if (strstr(msgs, needle))
		return 1;
	printf("#   messages: %s", msgs);
	return 0;
}

static void test_order_and_names(void)
{
	tt_fresh();
	/* loom "b.x" has lower ranks than loom "a": by rank it goes first */
	thread("b.x", 30, 31, "\"rank\": 0, \"nranks\": 3, \"loom_cpus\": [{\"index\": 1, \"phyid\": 7}, {\"index\": 0, \"phyid\": 5}]");
	thread("b.x", 30, 30, "\"rank\": 0, \"nranks\": 3");
	thread("a", 20, 20, "\"rank\": 2, \"nranks\": 3, \"loom_cpus\": [{\"index\": 0, \"phyid\": 0}]");
	thread("a", 10, 10, "\"rank\": 1, \"nranks\": 3");
	tt_stream("other", "{\"version\": 3, \"ovni\": {\"part\": \"process\"}}");
	int rc = load();
	CHECK_INT(rc, 0, "a ranked trace builds");
	if (rc)
		return;
	CHECK(has("test: sorting looms by rank\n"), "sort mode message");
	CHECK(has("test: loaded 2 looms, 3 processes, 4 threads and 3 cpus\n"), "summary message");
	CHECK(has("test: generated with libovni version 1.14.0 commit cf025e2\n"), "lib version message");
	CHECK(sys.sorted_by_rank, "sorted by rank");
	CHECK_STR(sys.looms[0]->name, "b.x", "loom with rank 0 first");
	CHECK_STR(sys.looms[0]->hostname, "b", "hostname is the name up to the first dot");
	CHECK_STR(sys.looms[1]->hostname, "a", "hostname without a dot");
	CHECK(sys.looms[1]->procs[0]->pid == 10 && sys.looms[1]->procs[1]->pid == 20, "processes by rank");
	const char *threads[] = { "TH 1.30", "TH 1.31", "TH 1.10", "TH 1.20" };
	for (size_t i = 0; i < 4 && i < sys.nthreads; i++) {
		CHECK_STR(sys.threads[i]->name, threads[i], "thread %zu name", i);
		CHECK_INT(sys.threads[i]->gindex, i, "thread %zu gindex", i);
	}
	const char *cpus[] = { " CPU 0.5", " CPU 0.7", "vCPU 0.*", " CPU 1.0", "vCPU 1.*" };
	CHECK_INT(sys.ncpus, 5, "3 CPUs and 2 vCPUs");
	for (size_t i = 0; i < 5 && i < sys.ncpus; i++) {
		CHECK_STR(sys.cpus[i]->name, cpus[i], "cpu %zu name", i);
		CHECK_INT(sys.cpus[i]->gindex, i, "cpu %zu gindex", i);
	}
	struct sys_loom *l = sys.looms[0];
	CHECK(system_cpu(l, 0) && system_cpu(l, 0)->phyid == 5, "index 0 is phyid 5");
	CHECK(system_cpu(l, 1) && system_cpu(l, 1)->phyid == 7, "index 1 is phyid 7");
	CHECK(system_cpu(l, -1) == l->vcpu && l->vcpu->is_virtual && l->vcpu->index == -1, "index -1 is the vCPU");
	CHECK(system_cpu(l, 2) == NULL && system_cpu(l, -2) == NULL, "no CPU outside the loom");
	CHECK(system_thread(l->procs[0], 31) == sys.threads[1], "thread by tid");
	CHECK(system_thread(l->procs[0], 32) == NULL, "no such tid");
	/* streams: loom.a/proc.10, loom.a/proc.20, loom.b.x/.../30, .../31, other */
	CHECK(sys.by_stream[0] && sys.by_stream[0]->tid == 10, "stream 0 -> tid 10");
	CHECK(sys.by_stream[3] && sys.by_stream[3]->tid == 31, "stream 3 -> tid 31");
	CHECK(sys.by_stream[4] == NULL, "the non-thread stream has no thread");
	CHECK(sys.threads[1]->proc->loom == l && sys.procs[0]->gindex == 0, "links and process gindex");
	unload();

	/* one loom without ranks: everything by name and pid */
	tt_fresh();
	thread("b", 2, 2, "\"rank\": 0, \"nranks\": 2");
	thread("b", 1, 1, "\"rank\": 1, \"nranks\": 2");
	thread("a", 3, 3, cpus1);
	thread("b", 1, 4, cpus1);
	rc = load();
	CHECK_INT(rc, 0, "a partly ranked trace builds");
	if (rc)
		return;
	CHECK(has("test: sorting looms by name\n"), "sorted by name");
	CHECK(!sys.sorted_by_rank && strcmp(sys.looms[0]->name, "a") == 0, "loom a first");
	CHECK(sys.looms[1]->procs[0]->pid == 1, "processes by pid");
	CHECK_STR(sys.threads[1]->name, "TH 1.1", "then tid 1");
	CHECK_STR(sys.threads[2]->name, "TH 1.4", "then tid 4 of the same process");
	unload();
}

static void test_merge(void)
{
	tt_fresh();
	/* app_id and rank in only one thread of the process; CPUs split over streams */
	thread("n", 1, 1, "\"rank\": 0, \"nranks\": 1, \"loom_cpus\": [{\"index\": 0, \"phyid\": 4}]");
	tt_stream("loom.n/proc.1/thread.2", tt_thread_json("n", 1, 2, "\"loom_cpus\": [{\"index\": 1, \"phyid\": 6}, {\"index\": 0, \"phyid\": 4}]"));
	int rc = load();
	CHECK_INT(rc, 0, "per-process and per-loom keys merge");
	if (rc)
		return;
	CHECK(sys.procs[0]->app_id == 1 && sys.procs[0]->has_rank, "app_id and rank from one thread");
	CHECK(sys.looms[0]->ncpus == 2 && sys.looms[0]->by_index[1]->phyid == 6, "CPUs united by phyid");
	CHECK_STR(sys.threads[1]->name, "TH 1.2", "thread without app_id named after its process");
	unload();
}

static void check_fail(const char *what, const char *needle)
{
	int rc = load();
	CHECK_INT(rc, -1, "%s is refused", what);
	if (rc == 0)
		unload();
	CHECK(has(needle), "%s message", what);
	int nerr = 0;
	for (const char *p = msgs; (p = strstr(p, "test: error: ")); p++)
		nerr++;
	CHECK_INT(nerr, 1, "%s: one error line", what);
}

static void test_rejects(void)
{
	char want[1024];
	tt_fresh();
	thread("n", 1, 1, cpus1);
	tt_stream("loom.n/proc.1/thread.2", tt_thread_json("n", 1, 2, "\"app_id\": 2"));
	snprintf(want, sizeof(want), "%s/loom.n/proc.1/thread.2/stream.json: line 1, column 182: ovni.app_id 2 differs from 1 in %s/loom.n/proc.1/thread.1/stream.json (same process 1)", tt_root, tt_root);
	check_fail("app_id mismatch", want);

	tt_fresh();
	tt_stream("loom.n/proc.1/thread.1", tt_thread_json("n", 1, 1, cpus1));
	snprintf(want, sizeof(want), "%s/loom.n/proc.1/thread.1/stream.json: process 1 of loom n has no ovni.app_id in any of its threads", tt_root);
	check_fail("missing app_id", want);

	tt_fresh();
	thread("n", 1, 1, "\"rank\": 0, \"nranks\": 2, \"loom_cpus\": [{\"index\": 0, \"phyid\": 0}]");
	thread("n", 1, 2, "\"rank\": 1, \"nranks\": 2");
	check_fail("rank mismatch", "ovni.rank 1 differs from 0 in ");

	tt_fresh();
	thread("n", 1, 1, "\"rank\": 0, \"nranks\": 2, \"loom_cpus\": [{\"index\": 0, \"phyid\": 0}]");
	thread("n", 1, 2, "\"rank\": 0, \"nranks\": 3");
	check_fail("nranks mismatch", "ovni.nranks 3 differs from 2 in ");

	tt_fresh();
	thread("n", 1, 1, "\"rank\": 0, \"nranks\": 2, \"loom_cpus\": [{\"index\": 0, \"phyid\": 0}]");
	thread("n", 2, 2, "");
	check_fail("a loom with ranked and unranked processes", "loom n: process 2 has no ovni.rank (");

	tt_fresh();
	thread("n", 1, 5, cpus1);
	tt_stream("zzz", tt_thread_json("n", 1, 5, "\"app_id\": 1"));
	snprintf(want, sizeof(want), "%s/zzz/stream.json: line 1, column 101: ovni.tid 5 already used in process 1 of loom n by %s/loom.n/proc.1/thread.5/stream.json", tt_root, tt_root);
	check_fail("duplicated tid", want);

	tt_fresh();
	thread("n", 1, 1, "\"loom_cpus\": [{\"index\": 0, \"phyid\": 3}]");
	thread("n", 2, 2, "\"loom_cpus\": [{\"index\": 1, \"phyid\": 3}]");
	check_fail("one phyid with two indices", "ovni.loom_cpus[0]: CPU phyid 3 has index 1, but index 0 in ");

	tt_fresh();
	thread("n", 1, 1, "\"loom_cpus\": [{\"index\": 0, \"phyid\": 3}, {\"index\": 0, \"phyid\": 4}]");
	check_fail("two CPUs with one index", "loom n: cpu with index 0 already taken: phyid 3 (");

	tt_fresh();
	thread("n", 1, 1, "\"loom_cpus\": [{\"index\": 0, \"phyid\": 3}, {\"index\": 2, \"phyid\": 4}]");
	check_fail("an index past the CPU count", "loom n: cpu index 2 of phyid 4 (");

	tt_fresh();
	thread("n.0", 1, 1, "");
	check_fail("a loom without CPUs", "loom n.0 has no physical CPUs");

	tt_fresh();
	tt_stream("s", "{\"version\": 3, \"ovni\": {\"part\": \"process\"}}");
	check_fail("a trace without threads", ": no thread streams to emulate");
}

static void test_mixed_versions(void)
{
	tt_fresh();
	thread("n", 1, 1, cpus1);
	const char *json = "{\"version\": 3, \"ovni\": {\"lib\": {\"version\": \"1.13.0\", \"commit\": \"abc\"},"
			   " \"part\": \"thread\", \"tid\": 2, \"pid\": 1, \"loom\": \"n\", \"app_id\": 1,"
			   " \"require\": {\"ovni\": \"1.1.0\"}, \"finished\": 1}}";
	tt_stream("loom.n/proc.1/thread.2", json);
	int rc = load();
	CHECK_INT(rc, 0, "mixed lib versions are accepted");
	CHECK(has("test: warning: mixed libovni versions: 1.14.0 (commit cf025e2) in "), "with a warning");
	CHECK(rc == 0 && sys.mixed_versions, "and flagged");
	if (rc == 0)
		unload();
}

/* Golden cases: what the reference's system loading decided. */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The message of the line holding needle, without "prog: " or "prog: INFO: ". */
static int msg_line(const char *text, const char *needle, char *out, size_t len)
{
	const char *p = strstr(text, needle);
	if (!p)
		return 0;
	const char *s = p;
	while (s > text && s[-1] != '\n')
		s--;
	const char *e = strchr(p, '\n');
	const char *tag = strstr(s, "INFO: ");
	if (tag && tag < p)
		s = tag + 6;
	else if ((tag = strstr(s, ": ")) && tag < p)
		s = tag + 2;
	snprintf(out, len, "%.*s", (int)(e ? e - s : (long)strlen(s)), s);
	return 1;
}

static int nrows; /* rows compared, so that the comparison is seen to happen */

static int check_rows(const char *row_path, int cpu)
{
	char *text = slurp(row_path);
	if (!text || !*text)
		return 1; /* the reference wrote no rows here: nothing to compare */
	char *list = strstr(text, "LEVEL THREAD SIZE ");
	if (!list)
		return 0;
	size_t n = strtoul(list + 18, &list, 10);
	size_t want = cpu ? sys.ncpus : sys.nthreads;
	if (n != want) {
		printf("#   %s: %zu rows, we have %zu\n", row_path, n, want);
		return 0;
	}
	list++;
	for (size_t i = 0; i < n; i++) {
		char *e = strchr(list, '\n');
		if (!e)
			return 0;
		*e = '\0';
		const char *ours = cpu ? sys.cpus[i]->name : sys.threads[i]->name;
		if (strcmp(ours, list) != 0) {
			printf("#   %s row %zu: '%s', we have '%s'\n", row_path, i, list, ours);
			return 0;
		}
		list = e + 1;
		nrows++;
	}
	return 1;
}

static int ncases, nbuilt, nrefused;

static void golden_case(const char *dir, void *arg)
{
	char path[2048], trace_dir[1024];
	static char ref[1 << 16];
	snprintf(path, sizeof(path), "%s/steps", dir);
	char *steps = slurp(path);
	if (!steps)
		return;
	int step = 0;
	for (char *l = steps; *l; step++) {
		if (strncmp(l, "emu", 3) == 0)
			break;
		l = strchr(l, '\n');
		if (!l) {
			step = -1;
			break;
		}
		l++;
	}
	if (step < 0 || !*steps)
		return;
	char edir[1024];
	snprintf(edir, sizeof(edir), "%s/expected/%d-emu", dir, step);
	snprintf(path, sizeof(path), "%s/stderr", edir);
	if (!slurp(path))
		return;
	snprintf(ref, sizeof(ref), "%s", slurp(path));
	snprintf(trace_dir, sizeof(trace_dir), "%s/trace", dir);
	ncases++;

	cap_begin();
	int rc = trace_open(&tr, trace_dir, TRACE_REQUIRE_FINISHED);
	if (rc == 0) {
		rc = system_build(&sys, &tr);
		if (rc < 0)
			trace_close(&tr);
	}
	snprintf(msgs, sizeof(msgs), "%s", cap_end());

	/* the reference stopped in its loading stage for these */
	int ref_refused = strstr(ref, "loom_init_end") || strstr(ref, "create_system") || strstr(ref, "thread_load_metadata");
	if (ref_refused) {
		if (rc == 0) {
			CHECK(0, "%s: refused by the reference, built by us", dir);
			unload();
		} else {
			nrefused++;
		}
		return;
	}
	if (rc < 0) {
		CHECK(0, "%s: built by the reference, refused by us: %s", dir, msgs);
		return;
	}
	int ok = 1;
	char want[256], got[256];
	const char *needles[] = { "sorting looms by", " looms, ", "generated with" };
	for (int i = 0; i < 3; i++) {
		if (!msg_line(ref, needles[i], want, sizeof(want)))
			continue;
		if (!msg_line(msgs, needles[i], got, sizeof(got)) || strcmp(got, want) != 0) {
			printf("#   %s: want '%s', got '%s'\n", dir, want, msg_line(msgs, needles[i], got, sizeof(got)) ? got : "");
			ok = 0;
		}
	}
	snprintf(path, sizeof(path), "%s/cpu.row", edir);
	ok &= check_rows(path, 1);
	snprintf(path, sizeof(path), "%s/thread.row", edir);
	ok &= check_rows(path, 0);
	if (ok)
		nbuilt++;
	else
		CHECK(0, "%s: same system as the reference", dir);
	unload();
}

static void test_golden(void)
{
	tt_each_golden(golden_case, NULL);
	CHECK(ncases >= 55, "golden cases with an emu step: %d", ncases);
	/* no-cpus, duplicated-cpu-index, thread-crash, empty-stream */
	CHECK_INT(nrefused, 4, "the four the reference refused while loading are refused");
	CHECK_INT(nbuilt + nrefused, ncases, "the others build the same looms, rows, order and messages");
	CHECK(nrows >= 400, "compared %d .row names", nrows);
}

int main(void)
{
	msg_set_prog("test");
	test_order_and_names();
	test_merge();
	test_rejects();
	test_mixed_versions();
	test_golden();
	tt_cleanup();
	return t_done();
}
