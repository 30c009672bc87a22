/* salvage.c: cut streams end at their last whole event with the events
 * their thread's state needs; finished streams are only counted. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/json.h"
#include "record/salvage.h"
#include "trace/stream.h"
#include "t.h"

static char dir[256];

/* Writes stream.obs from events (MCVs, clock 10, 20, ...), then tail bytes
 * (zeros, a torn event), and stream.json with finished as given. */
static void make(const char *const *mcvs, size_t n, const uint8_t *tail, size_t ntail, int finished)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	FILE *f = fopen(path, "wb");
	uint8_t buf[64];
	stream_header(buf);
	fwrite(buf, 1, STREAM_HEADER_SIZE, f);
	for (size_t i = 0; i < n; i++) {
		uint8_t pay[16] = { 0 };
		size_t len = ev_encode(buf, mcvs[i], 10 * (i + 1), pay, strcmp(mcvs[i], "OHx") == 0 ? 16 : 0);
		fwrite(buf, 1, len, f);
	}
	if (ntail)
		fwrite(tail, 1, ntail, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	f = fopen(path, "w");
	fprintf(f, "{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 7, \"pid\": 5, \"loom\": \"h.1\"%s}}",
		finished ? ", \"finished\": 1" : "");
	fclose(f);
}

/* The clocks of the stream's last two events. */
static void last_clocks(uint64_t *prev, uint64_t *last)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	struct stream_reader r;
	*prev = *last = 0;
	if (sr_open(&r, byte_src_file(path), "t", 0) != 0)
		return;
	struct ev ev;
	while (sr_next(&r, &ev) == 1) {
		*prev = *last;
		*last = ev.clock;
	}
	sr_close(&r);
}

/* The MCVs of the stream as written, space separated. */
static void mcvs_of(char *out, size_t n)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	struct stream_reader r;
	out[0] = '\0';
	if (sr_open(&r, byte_src_file(path), "t", 0) != 0)
		return;
	struct ev ev;
	while (sr_next(&r, &ev) == 1) {
		size_t l = strlen(out);
		snprintf(out + l, n - l, "%s%.3s", l ? " " : "", (const char *)ev.mcv);
	}
	sr_close(&r);
}

static struct json *meta(void)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	return json_parse_file(path);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/ovni-test-salvage.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	int32_t cpus[2] = { 0, 1 };
	struct salvage_info in = { "h.1", 5, 7, 2, 1, 0, 4, cpus, 2, 0 };
	struct salvage_result res;
	char got[256];
	uint8_t zeros[4096] = { 0 };

	const char *running[] = { "OHx", "OB.", "OB." };
	make(running, 3, zeros, sizeof(zeros), 0);
	CHECK_INT(salvage_stream(dir, &in, &res), 0, "running thread: salvaged");
	mcvs_of(got, sizeof(got));
	CHECK_STR(got, "OHx OB. OB. OHe", "running thread: the zeros are cut and OHe added");
	CHECK_INT(res.events, 4, "running thread: events counted");
	CHECK_INT(res.cut_bytes, sizeof(zeros), "running thread: the dropped bytes");
	CHECK(res.repaired, "running thread: reported as repaired");
	struct json *m = meta();
	long long v = 0;
	CHECK(m && json_int(json_dotget(m, "ovni.finished"), &v) == 0 && v == 1, "running thread: finished");
	CHECK(m && json_dotget(m, "ovni.require.ovni"), "running thread: requires ovni");
	CHECK(m && json_int(json_dotget(m, "ovni.nranks"), &v) == 0 && v == 4, "running thread: rank added");
	struct json *c = m ? json_dotget(m, "ovni.loom_cpus") : NULL;
	CHECK(c && c->type == JSON_ARRAY && c->u.arr.n == 2, "running thread: the loom's CPUs added");
	json_free(m);

	CHECK_INT(salvage_stream(dir, &in, &res), 0, "a finished stream: fine");
	CHECK(!res.repaired && res.events == 4, "a finished stream is only counted");

	uint8_t torn[12] = { 0x0f, 'O', 'M', '[', 0x99 }; /* clock bytes lost: it goes back */
	const char *paused[] = { "OHx", "OHp" };
	make(paused, 2, torn, 7, 0);
	salvage_stream(dir, &in, &res);
	mcvs_of(got, sizeof(got));
	CHECK_STR(got, "OHx OHp OHr OHe", "paused thread: resumed, then ended; the torn event dropped");

	const char *out[] = { "OHx", "KCO" };
	make(out, 2, NULL, 0, 0);
	salvage_stream(dir, &in, &res);
	mcvs_of(got, sizeof(got));
	CHECK_STR(got, "OHx KCO KCI OHe", "thread out of its CPU: back in, then ended");

	/* killed before the shim wrote its metadata (it does once the thread
	 * has begun): made from what the recorder knows */
	char json_path[300];
	snprintf(json_path, sizeof(json_path), "%s/stream.json", dir);
	make(out, 2, NULL, 0, 0);
	unlink(json_path);
	CHECK_INT(salvage_stream(dir, &in, &res), 0, "no metadata yet: salvaged");
	m = meta();
	CHECK(m && json_int(json_dotget(m, "ovni.tid"), &v) == 0 && v == 7, "no metadata yet: the thread's id");
	CHECK(m && json_int(json_dotget(m, "ovni.finished"), &v) == 0 && v == 1, "no metadata yet: finished");
	CHECK(m && json_dotget(m, "ovni.require.kernel"), "no metadata yet: its kernel events require the kernel model");
	json_free(m);
	make(running, 3, NULL, 0, 0);
	unlink(json_path);
	salvage_stream(dir, &in, &res);
	m = meta();
	CHECK(m && !json_dotget(m, "ovni.require.kernel"), "no metadata yet, no kernel event: no kernel model");
	json_free(m);
	/* the program's ovni_thread_require("nosv") is written when its thread
	 * ends: killed before, the stream has the model's events only */
	const char *nosv[] = { "OHx", "VHa", "VTc" };
	make(nosv, 3, NULL, 0, 0);
	salvage_stream(dir, &in, &res);
	m = meta();
	const struct json *req = m ? json_dotget(m, "ovni.require.nosv") : NULL;
	const char *ver = req && req->type == JSON_STRING ? req->u.str.s : NULL;
	CHECK_STR(ver ? ver : "(none)", "2.7.0", "killed instrumented thread: the models of its events are required");
	CHECK(m && !json_dotget(m, "ovni.require.nanos6"), "killed instrumented thread: no other model");
	json_free(m);

	const char *dead[] = { "OHx", "OHe" };
	make(dead, 2, zeros, 100, 0);
	salvage_stream(dir, &in, &res);
	mcvs_of(got, sizeof(got));
	CHECK_STR(got, "OHx OHe", "ended thread, unfinished metadata: nothing added");

	/* a thread still running when another one ended the process */
	uint64_t prev, last;
	in.exited = 1000;
	const char *alive[] = { "OHx", "OB." };
	make(alive, 2, NULL, 0, 0);
	salvage_stream(dir, &in, &res);
	mcvs_of(got, sizeof(got));
	last_clocks(&prev, &last);
	CHECK_STR(got, "OHx OB. OHe", "running at the exit: ended");
	CHECK_INT(last, 1000, "running at the exit: its OHe at the exit's clock");
	make(out, 2, NULL, 0, 0);
	salvage_stream(dir, &in, &res);
	mcvs_of(got, sizeof(got));
	last_clocks(&prev, &last);
	CHECK_STR(got, "OHx KCO KCI OHe", "out of its CPU at the exit: back in, then ended");
	CHECK(prev == 1000 && last == 1000, "out of its CPU at the exit: until the exit's clock");
	in.exited = 15;
	make(alive, 2, NULL, 0, 0);
	salvage_stream(dir, &in, &res);
	last_clocks(&prev, &last);
	CHECK_INT(last, 20, "an event after the exit's clock: the OHe at that event");
	in.exited = 0;

	make(NULL, 0, NULL, 0, 0);
	CHECK(salvage_stream(dir, &in, &res) == 0 && res.dropped && res.events == 0,
	      "a thread killed before its first event: its stream is dropped, not closed at clock 0");
	CHECK(access(dir, F_OK) != 0, "and its directory is gone");

	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return t_done();
}
