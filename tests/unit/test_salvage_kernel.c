/* salvage_stream on streams recorded with --kernel: the clocks of an
 * unordered region (OU[ ... OU]) go back without that being the end of the
 * stream, and a stream cut inside a region gets the region closed (and a
 * lost switch-in written) so that ovni sort makes it a valid stream. The
 * switches left in a kswitch.spill are written after the stream's last
 * ones. And a stream left as zeros by a thread killed while starting is
 * dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/salvage.h"
#include "sort/sort.h"
#include "trace/kspill.h"
#include "trace/stream.h"
#include "t.h"
#include "tstream.h"

static char dir[64] = "/tmp/test_salvage.XXXXXX";

static void write_file(const char *name, const void *data, size_t n)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0)
		abort();
}

/* The events of the salvaged stream as "MCV@clock ..." */
static void events_of(char *out, size_t cap)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	struct stream_reader r;
	struct ev ev;
	out[0] = '\0';
	if (sr_open(&r, byte_src_file(path), "stream.obs", SR_UNSORTED | SR_QUIET) != 0)
		return;
	size_t n = 0;
	while (sr_next(&r, &ev) == 1 && n < cap)
		n += (size_t)snprintf(out + n, cap - n, "%s%.3s@%llu", n ? " " : "", (const char *)ev.mcv,
				      (unsigned long long)ev.clock);
	sr_close(&r);
}

/* Salvages the stream built in b; then sorts it. */
static void salvage(struct membuf *b, struct salvage_result *res)
{
	static const char json[] = "{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 7, \"finished\": 0}}";
	write_file("stream.obs", b->data, b->len);
	write_file("stream.json", json, sizeof(json) - 1);
	int32_t phy = 0;
	struct salvage_info in = { "node0", 1, 7, 1, 0, 0, 0, &phy, 1, 0 };
	CHECK(salvage_stream(dir, &in, res) == 0 && res->repaired, "salvage repairs the unfinished stream");
}

static int sorts_clean(void)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	struct sort_stats st;
	uint64_t back;
	return sort_file(path, &(struct sort_opts){ .name = "stream.obs" }, &st) == 0 &&
	       sort_check_file(path, "stream.obs", &back) == 1;
}

int main(void)
{
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return t_done();
	}
	char got[1024];
	struct salvage_result res;
	uint8_t ohx[16] = { 0 };

	/* A whole region, then the thread was killed. */
	struct membuf b = { 0 };
	mb_header(&b);
	mb_ev(&b, "OHx", 100, ohx, 16);
	mb_ev(&b, "OB.", 200, NULL, 0);
	mb_ev(&b, "OU[", 300, NULL, 0);
	mb_ev(&b, "KCO", 150, NULL, 0);
	mb_ev(&b, "KCI", 160, NULL, 0);
	mb_ev(&b, "OU]", 310, NULL, 0);
	mb_ev(&b, "OB.", 320, NULL, 0);
	salvage(&b, &res);
	events_of(got, sizeof(got));
	CHECK_STR(got, "OHx@100 OB.@200 OU[@300 KCO@150 KCI@160 OU]@310 OB.@320 OHe@320",
		  "clocks going back inside a region are kept; the thread ends at the last clock");
	CHECK_INT(res.events, 8, "every event is counted");
	CHECK(sorts_clean(), "ovni sort then puts it in order");

	/* Cut inside a region, after a switch-out. */
	b.len = 0;
	mb_header(&b);
	mb_ev(&b, "OHx", 100, ohx, 16);
	mb_ev(&b, "OB.", 200, NULL, 0);
	mb_ev(&b, "OU[", 300, NULL, 0);
	mb_ev(&b, "KCO", 150, NULL, 0);
	salvage(&b, &res);
	events_of(got, sizeof(got));
	CHECK_STR(got, "OHx@100 OB.@200 OU[@300 KCO@150 KCI@151 OU]@300 OHe@300",
		  "a region cut after a KCO gets its KCI right after it, then its OU]");
	CHECK(sorts_clean(), "and sorts to a valid stream");

	/* Killed with switches collected and not written: kswitch.spill has
	 * the last one the stream holds (a drain cut by the kill), a lost
	 * record, a repeated state, then new ones. */
	b.len = 0;
	mb_header(&b);
	mb_ev(&b, "OHx", 100, ohx, 16);
	mb_ev(&b, "OU[", 300, NULL, 0);
	mb_ev(&b, "KCO", 150, NULL, 0);
	mb_ev(&b, "KCI", 160, NULL, 0);
	mb_ev(&b, "OU]", 310, NULL, 0);
	mb_ev(&b, "OB.", 320, NULL, 0);
	uint64_t spill[8] = { 0 };
	memcpy(spill, KSPILL_MAGIC, 8);
	spill[1] = 6;
	memcpy(spill + 2, (uint64_t[]){ 150 | KSPILL_OUT, 160, 330 | KSPILL_OUT, KSPILL_LOST | 2, 400, 450 | KSPILL_OUT },
	       6 * 8);
	write_file(KSPILL_NAME, spill, sizeof(spill));
	salvage(&b, &res);
	events_of(got, sizeof(got));
	CHECK_STR(got, "OHx@100 OU[@300 KCO@150 KCI@160 OU]@310 OB.@320 OU[@320 KCO@330 KCI@331 KCO@450 KCI@451 OU]@451 OHe@451",
		  "the spilled switches after the stream's last are added in a region from the last event "
		  "(a lost switch-in right after its KCO, a repeat skipped), and the thread ends after them");
	CHECK_INT(res.spilled, 4, "the spilled events are counted apart (OU[ and three switches)");
	CHECK_INT(res.events, 6 + 4 + 3, "and with the others");
	CHECK(sorts_clean(), "it sorts to a valid stream");

	/* Finished threads drained everything: a spill left there is not read. */
	static const char done[] = "{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 7, \"finished\": 1}}";
	b.len = 0;
	mb_header(&b);
	mb_ev(&b, "OHx", 100, ohx, 16);
	mb_ev(&b, "OHe", 200, NULL, 0);
	write_file("stream.obs", b.data, b.len);
	write_file("stream.json", done, sizeof(done) - 1);
	write_file(KSPILL_NAME, spill, sizeof(spill));
	int32_t phy0 = 0;
	struct salvage_info in0 = { "node0", 1, 7, 1, 0, 0, 0, &phy0, 1, 0 };
	CHECK(salvage_stream(dir, &in0, &res) == 0 && !res.repaired && res.events == 2,
	      "a finished stream is left as it is, spill or not");
	char sp[128];
	snprintf(sp, sizeof(sp), "%s/%s", dir, KSPILL_NAME);
	unlink(sp);

	/* A file that is not a spill (another magic) is not read; a count past
	 * the end of the file stops there. */
	uint64_t bad[4] = { 0 };
	memcpy(bad, "NOTSPILL", 8);
	bad[1] = 1;
	bad[2] = 300 | KSPILL_OUT;
	b.len = 0;
	mb_header(&b);
	mb_ev(&b, "OHx", 100, ohx, 16);
	mb_ev(&b, "OB.", 200, NULL, 0);
	write_file(KSPILL_NAME, bad, sizeof(bad));
	salvage(&b, &res);
	events_of(got, sizeof(got));
	CHECK_STR(got, "OHx@100 OB.@200 OHe@200", "a kswitch.spill without its magic is left out");
	memcpy(bad, KSPILL_MAGIC, 8);
	bad[1] = 1000;
	bad[3] = 310;
	write_file(KSPILL_NAME, bad, sizeof(bad));
	salvage(&b, &res);
	events_of(got, sizeof(got));
	CHECK_STR(got, "OHx@100 OB.@200 OU[@200 KCO@300 KCI@310 OU]@311 OHe@311",
		  "a count past the end of the file reads up to its end");
	unlink(sp);

	/* Outside any region a backward clock is still where a torn write ends. */
	b.len = 0;
	mb_header(&b);
	mb_ev(&b, "OHx", 100, ohx, 16);
	mb_ev(&b, "OB.", 200, NULL, 0);
	mb_ev(&b, "OB.", 50, NULL, 0);
	salvage(&b, &res);
	events_of(got, sizeof(got));
	CHECK_STR(got, "OHx@100 OB.@200 OHe@200", "outside regions the stream still ends at a backward clock");

	/* Killed while its stream was being made: the window is all zeros. */
	b.len = 0;
	uint8_t zeros[64] = { 0 };
	mb_bytes(&b, zeros, sizeof(zeros));
	static const char json[] = "{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 7, \"finished\": 0}}";
	write_file("stream.obs", b.data, b.len);
	write_file("stream.json", json, sizeof(json) - 1);
	int32_t phy = 0;
	struct salvage_info in = { "node0", 1, 7, 1, 0, 0, 0, &phy, 1, 0 };
	CHECK(salvage_stream(dir, &in, &res) == 0 && res.dropped && !res.repaired,
	      "a stream of zeros is dropped, not closed at clock 0 (ovni emu's clock gate)");
	CHECK(access(dir, F_OK) != 0, "and its directory is gone");

	free(b.data);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		CHECK(0, "cleanup");
	return t_done();
}
