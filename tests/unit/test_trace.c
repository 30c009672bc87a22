/* trace_open: stream discovery, order, bad paths, bad streams, read-only
 * traces, and every golden trace. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"
#include "t.h"
#include "trace/trace.h"
#include "tstream.h"
#include "ttrace.h"

static int open_quiet(struct trace *t, const char *path, unsigned flags, const char **msg)
{
	cap_begin();
	int rc = trace_open(t, path, flags);
	*msg = cap_end();
	return rc;
}

static void test_tree(void)
{
	tt_fresh();
	/* created out of order, and at different depths */
	tt_stream("loom.b/proc.2/thread.2", tt_thread_json("b", 2, 2, ""));
	tt_stream("loom.a/proc.1/thread.10", tt_thread_json("a", 1, 10, ""));
	tt_stream("loom.a/proc.1/thread.9", tt_thread_json("a", 1, 9, ""));
	tt_stream("extra", tt_thread_json("a", 1, 11, ""));
	char p[512];
	snprintf(p, sizeof(p), "%s/loom.a/proc.1/notes.txt", tt_root);
	tt_write("not a stream", "%s", p);
	snprintf(p, sizeof(p), "%s/empty/dir", tt_root);
	tt_mkdirs(p);

	struct trace t;
	const char *msg;
	snprintf(p, sizeof(p), "%s///", tt_root);
	int rc = open_quiet(&t, p, TRACE_REQUIRE_FINISHED, &msg);
	CHECK_INT(rc, 0, "a tree of streams opens");
	CHECK_STR(msg, "", "without messages");
	if (rc)
		return;
	CHECK_STR(t.root, tt_root, "trailing slashes removed from the root");
	CHECK_INT(t.n, 4, "four streams");
	const char *want[] = { "extra", "loom.a/proc.1/thread.10", "loom.a/proc.1/thread.9", "loom.b/proc.2/thread.2" };
	for (size_t i = 0; i < 4 && i < t.n; i++)
		CHECK_STR(t.streams[i].relpath, want[i], "stream %zu in strcmp order", i);
	CHECK_STR(t.streams[1].obs_name, "loom.a/proc.1/thread.10/stream.obs", "obs_name is relative");
	snprintf(p, sizeof(p), "%s/loom.a/proc.1/thread.10", tt_root);
	CHECK_STR(t.streams[1].dir, p, "dir joins root and relpath");
	CHECK_INT(t.streams[1].meta.tid, 10, "metadata loaded");
	CHECK(t.archive == NULL, "no archive");

	struct stream_reader r;
	struct byte_src *src = trace_stream_src(&t, 3);
	CHECK(src != NULL, "trace_stream_src opens stream.obs");
	if (src) {
		struct ev ev;
		CHECK_INT(sr_open(&r, src, t.streams[3].obs_name, 0), 0, "the stream header reads");
		CHECK_INT(sr_next(&r, &ev), 0, "and holds no events");
		sr_close(&r);
	}
	CHECK(trace_stream_src(&t, 4) == NULL, "no source past the last stream");
	trace_close(&t);

	/* a stream directory given directly */
	snprintf(p, sizeof(p), "%s/loom.a/proc.1/thread.9/", tt_root);
	rc = open_quiet(&t, p, 0, &msg);
	CHECK(rc == 0 && t.n == 1, "a single stream directory opens");
	if (rc == 0) {
		CHECK_STR(t.streams[0].relpath, "", "single stream has relpath \"\"");
		CHECK_STR(t.streams[0].obs_name, "stream.obs", "and obs_name stream.obs");
		CHECK_STR(t.streams[0].dir, t.root, "its dir is the root");
		trace_close(&t);
	}
	/* a subtree: relpaths relative to the given root */
	snprintf(p, sizeof(p), "%s/loom.a", tt_root);
	rc = open_quiet(&t, p, 0, &msg);
	CHECK(rc == 0 && t.n == 2, "a loom directory opens");
	if (rc == 0) {
		CHECK_STR(t.streams[0].relpath, "proc.1/thread.10", "relpath from the given root");
		trace_close(&t);
	}
}

static void test_bad_paths(void)
{
	struct trace t;
	const char *msg;
	char p[512], want[1024];
	tt_fresh();
	snprintf(p, sizeof(p), "%s/nonexistent", tt_root);
	CHECK_INT(open_quiet(&t, p, 0, &msg), -1, "nonexistent path fails");
	snprintf(want, sizeof(want), "test: error: cannot open trace %s: No such file or directory\n", p);
	CHECK_STR(msg, want, "nonexistent path message");

	snprintf(p, sizeof(p), "%s/file", tt_root);
	tt_write("x", "%s", p);
	CHECK_INT(open_quiet(&t, p, 0, &msg), -1, "a regular file fails");
	snprintf(want, sizeof(want), "test: error: %s: not a trace directory\n", p);
	CHECK_STR(msg, want, "regular file message");

	snprintf(p, sizeof(p), "%s/empty/a/b", tt_root);
	tt_mkdirs(p);
	snprintf(p, sizeof(p), "%s/empty", tt_root);
	CHECK_INT(open_quiet(&t, p, 0, &msg), -1, "a directory without streams fails");
	snprintf(want, sizeof(want),
		 "test: error: %s: no streams found (a stream is a directory holding stream.json and stream.obs)\n", p);
	CHECK_STR(msg, want, "no streams message");
}

static void test_bad_streams(void)
{
	struct trace t;
	const char *msg;
	char p[512], want[1024];

	tt_fresh();
	tt_stream("s1", tt_thread_json("a", 1, 1, ""));
	snprintf(p, sizeof(p), "%s/s2", tt_root);
	tt_mkdirs(p);
	tt_write(tt_thread_json("a", 1, 2, ""), "%s/stream.json", p);
	CHECK_INT(open_quiet(&t, tt_root, 0, &msg), -1, "stream.json without stream.obs fails");
	snprintf(want, sizeof(want),
		 "test: error: %s/s2/stream.obs: missing (a stream directory must hold stream.json and stream.obs)\n", tt_root);
	CHECK_STR(msg, want, "missing stream.obs message");

	tt_fresh();
	tt_stream("s1", "{\n  \"version\": 3,\n  \"ovni\": {\n}");
	CHECK_INT(open_quiet(&t, tt_root, 0, &msg), -1, "invalid JSON fails");
	snprintf(want, sizeof(want), "test: error: %s/s1/stream.json: line 4, column 2: expected ',' or '}', found end of input\n",
		 tt_root);
	CHECK_STR(msg, want, "invalid JSON message names file, line and column");

	tt_fresh();
	tt_stream("s1", "{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 0}}");
	CHECK_INT(open_quiet(&t, tt_root, 0, &msg), -1, "bad metadata fails");
	snprintf(want, sizeof(want), "test: error: %s/s1/stream.json: line 1, column 50: ovni.tid must be a non-zero integer\n",
		 tt_root);
	CHECK_STR(msg, want, "bad metadata message");

	tt_fresh();
	tt_stream("s1", "{\"version\": 3, \"ovni\": {\"lib\": {\"version\": \"1.14.0\", \"commit\": \"x\"},"
			" \"part\": \"thread\", \"tid\": 3, \"pid\": 3, \"loom\": \"a\"}}");
	CHECK_INT(open_quiet(&t, tt_root, 0, &msg), 0, "an unfinished stream opens for dump");
	trace_close(&t);
	CHECK_INT(open_quiet(&t, tt_root, TRACE_REQUIRE_FINISHED, &msg), -1, "and is refused for emu");
	CHECK(strstr(msg, "/s1/stream.json: missing ovni.finished: ") != NULL, "missing ovni.finished names the stream");
	CHECK_INT(count_lines(msg), 1, "in one line");

	tt_fresh();
	tt_stream("s1", tt_thread_json("a", 1, 1, ""));
	tt_stream("s2", "{\"version\": 3, \"ovni\": {\"part\": \"process\"}}");
	CHECK_INT(open_quiet(&t, tt_root, TRACE_REQUIRE_FINISHED, &msg), 0, "a non-thread stream is kept");
	snprintf(want, sizeof(want),
		 "test: warning: %s/s2/stream.json: ignoring stream of part \"process\" (only thread streams are modelled)\n",
		 tt_root);
	CHECK_STR(msg, want, "with a warning");
	CHECK(t.n == 2 && t.streams[0].meta.is_thread && !t.streams[1].meta.is_thread, "and marked as not a thread");
	trace_close(&t);
}

static void test_links(void)
{
	struct trace t;
	const char *msg;
	char p[512], target[512];
	tt_fresh();
	tt_stream("a/s", tt_thread_json("a", 1, 1, ""));
	snprintf(p, sizeof(p), "%s/a/loop", tt_root);
	CHECK_INT(symlink("..", p), 0, "made a link loop");
	snprintf(p, sizeof(p), "%s/b", tt_root);
	snprintf(target, sizeof(target), "%s/a", tt_root);
	CHECK_INT(symlink(target, p), 0, "made a link to a directory");
	snprintf(p, sizeof(p), "%s/dangling/stream.json", tt_root);
	snprintf(target, sizeof(target), "%s/dangling", tt_root);
	tt_mkdirs(target);
	CHECK_INT(symlink("nowhere", p), 0, "made a dangling stream.json link");
	int rc = open_quiet(&t, tt_root, 0, &msg);
	CHECK(rc == 0 && t.n == 1, "links to directories are not followed (no loop, no duplicate)");
	if (rc == 0)
		trace_close(&t);
}

/* A deep tree: the walk keeps little per level. */
static void test_deep(void)
{
	tt_fresh();
	char rel[3100];
	size_t n = 0;
	for (int i = 0; i < 1500; i++)
		n += (size_t)sprintf(rel + n, "%sd", i ? "/" : "");
	tt_stream(rel, tt_thread_json("a", 1, 1, ""));
	struct trace t;
	const char *msg;
	int rc = open_quiet(&t, tt_root, 0, &msg);
	CHECK(rc == 0 && t.n == 1, "a stream 1500 directories deep is found");
	if (rc == 0) {
		CHECK_STR(t.streams[0].relpath, rel, "with its whole relative path");
		trace_close(&t);
	}
}

static void test_read_only(void)
{
	struct trace t;
	const char *msg;
	char p[512];
	tt_fresh();
	tt_stream("l/p/t", tt_thread_json("a", 1, 1, ""));
	snprintf(p, sizeof(p), "%s/l/p/t/stream.json", tt_root);
	chmod(p, 0444);
	snprintf(p, sizeof(p), "%s/l/p/t/stream.obs", tt_root);
	chmod(p, 0444);
	const char *dirs[] = { "l/p/t", "l/p", "l", "" };
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", tt_root, dirs[i]);
		chmod(p, 0555);
	}
	int rc = open_quiet(&t, tt_root, TRACE_REQUIRE_FINISHED, &msg);
	CHECK_INT(rc, 0, "a read-only trace opens");
	if (rc == 0) {
		struct byte_src *src = trace_stream_src(&t, 0);
		CHECK(src != NULL, "and its stream.obs too");
		if (src)
			src->close(src);
		trace_close(&t);
	}
}

static int count_json(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			n += count_json(p);
		else if (strcmp(e->d_name, "stream.json") == 0)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

struct golden_counts {
	int ncases, nok, nfin, nunfinished;
};

static void golden_trace(const char *dir, void *arg)
{
	struct golden_counts *c = arg;
	char tdir[1024];
	snprintf(tdir, sizeof(tdir), "%s/trace", dir);
	struct trace t;
	const char *msg;
	c->ncases++;
	if (open_quiet(&t, tdir, 0, &msg) == 0 && (int)t.n == count_json(tdir)) {
		c->nok++;
		trace_close(&t);
	} else {
		CHECK(0, "golden %s opens: %s", tdir, msg);
	}
	int rc = open_quiet(&t, tdir, TRACE_REQUIRE_FINISHED, &msg);
	if (rc == 0) {
		c->nfin++;
		trace_close(&t);
	} else if (strstr(msg, "missing ovni.finished")) {
		c->nunfinished++;
	} else {
		CHECK(0, "golden %s: %s", tdir, msg);
	}
}

static void test_golden(void)
{
	struct golden_counts c = { 0 };
	tt_each_golden(golden_trace, &c);
	CHECK(c.ncases >= 60, "found the golden cases (%d)", c.ncases);
	CHECK_INT(c.nok, c.ncases, "every golden trace opens with all its streams");
	/* thread-crash, empty-stream, sort-first-and-full-ring: the reference refuses them too */
	CHECK_INT(c.nunfinished, 3, "three golden traces are refused as unfinished");
	CHECK_INT(c.nfin + c.nunfinished, c.ncases, "the others open for emu");
}

int main(void)
{
	msg_set_prog("test");
	test_tree();
	test_bad_paths();
	test_bad_streams();
	test_links();
	test_deep();
	test_read_only();
	test_golden();
	tt_cleanup();
	return t_done();
}
