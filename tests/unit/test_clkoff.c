/* Clock offsets file: the reader's rules (runtime.md 4) and the writer's
 * layout, on a hand-made system of looms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/clkoff.h"
#include "base/msg.h"
#include "t.h"
#include "tstream.h"
#include "ttrace.h"

static struct sys_loom looms[4];
static struct sys_loom *loomp[4];
static struct system sys;
static char msgs[8192];
static char path[512];

static void setup(size_t n)
{
	const char *names[] = { "node1.a", "node1.b", "node2", "node3.x" };
	const char *hosts[] = { "node1", "node1", "node2", "node3" };
	memset(&sys, 0, sizeof(sys));
	for (size_t i = 0; i < 4; i++) {
		memset(&looms[i], 0, sizeof(looms[i]));
		looms[i].name = names[i];
		looms[i].hostname = (char *)hosts[i];
		looms[i].clock_offset = 12345; /* must be overwritten */
		loomp[i] = &looms[i];
	}
	sys.looms = loomp;
	sys.nlooms = n;
}

static int apply_text(const char *text, int required)
{
	snprintf(path, sizeof(path), "%s/clock-offsets.txt", tt_root);
	if (text)
		tt_write(text, "%s", path);
	else
		unlink(path);
	cap_begin();
	int rc = clkoff_apply(&sys, path, required);
	snprintf(msgs, sizeof(msgs), "%s", cap_end());
	return rc;
}

static const char *header = "rank       hostname             offset_median        offset_mean          offset_std          \n";

static void check_error(const char *text, const char *want_fmt)
{
	char want[1024], body[4096];
	snprintf(body, sizeof(body), "%s%s", header, text);
	setup(4);
	int rc = apply_text(body, 1);
	snprintf(want, sizeof(want), want_fmt, path);
	CHECK_INT(rc, -1, "refused: %.*s", (int)strlen(want) - 1, want);
	CHECK_STR(msgs, want, "message");
}

static void test_apply(void)
{
	setup(4);
	char text[2048];
	snprintf(text, sizeof(text), "%s%s", header,
		 "0          node2                0                    0.000000             0.000000            \n"
		 "\n"
		 "1          node1                100.9                100.5 3.2 trailing words\n"
		 "  2 node9.x -7.9 -7.5 1\n");
	/* no loom has hostname node9.x */
	CHECK_INT(apply_text(text, 1), -1, "an unknown hostname is an error");
	snprintf(text, sizeof(text), "%s%s", header,
		 "0          node2                0                    0.000000             0.000000            \n"
		 "\n"
		 "1          node1                100.9                100.5 3.2 trailing words\n"
		 "  2 node3 -7.9 -7.5 1\n"
		 "   \t\n"
		 "this line is never read\n");
	int rc = apply_text(text, 1);
	CHECK_INT(rc, 0, "a valid table applies");
	CHECK_STR(msgs, "", "silently");
	CHECK_INT(looms[0].clock_offset, 100, "median truncated, applied to node1.a");
	CHECK_INT(looms[1].clock_offset, 100, "and to node1.b (same hostname)");
	CHECK_INT(looms[2].clock_offset, 0, "node2 gets 0");
	CHECK_INT(looms[3].clock_offset, -7, "negative median truncated towards zero");

	snprintf(text, sizeof(text), "%s1 node1 50 0 0\n", header);
	CHECK_INT(apply_text(text, 0), 0, "a table with one host applies");
	CHECK(looms[0].clock_offset == 50 && looms[2].clock_offset == 0 && looms[3].clock_offset == 0,
	      "looms not listed get 0");
}

static void test_absent(void)
{
	char want[1024];
	setup(4);
	CHECK_INT(apply_text(NULL, 0), 0, "an absent default file is fine");
	CHECK_STR(msgs, "test: warning: no clock offset file loaded with 4 looms\n", "with a warning for many looms");
	CHECK_INT(looms[0].clock_offset, 0, "offsets are 0");
	setup(1);
	CHECK_INT(apply_text(NULL, 0), 0, "one loom");
	CHECK_STR(msgs, "", "needs no offsets and no warning");
	setup(2);
	cap_begin();
	CHECK_INT(clkoff_apply(&sys, NULL, 0), 0, "no path at all");
	CHECK_STR(cap_end(), "test: warning: no clock offset file loaded with 2 looms\n", "warns too");
	setup(4);
	CHECK_INT(apply_text(NULL, 1), -1, "an absent -c file is an error");
	snprintf(want, sizeof(want), "test: error: %s: cannot open clock offsets: No such file or directory\n", path);
	CHECK_STR(msgs, want, "naming the file");
}

static void test_errors(void)
{
	char want[1024];
	setup(4);
	CHECK_INT(apply_text("", 1), -1, "an empty file is refused");
	snprintf(want, sizeof(want), "test: error: %s: line 1: missing header line\n", path);
	CHECK_STR(msgs, want, "empty file message");
	check_error("", "test: error: %s: no entries\n");
	check_error("\n\n", "test: error: %s: no entries\n");
	check_error("  \n1 node1 1 2 3\n", "test: error: %s: no entries\n");
	check_error("1 node1 1\n", "test: error: %s: line 2: read 3 instead of 5 fields (rank hostname offset_median offset_mean offset_std)\n");
	check_error("\n1 node1 1 2 3\nx node2 1 2 3\n", "test: error: %s: line 4: read 0 instead of 5 fields (rank hostname offset_median offset_mean offset_std)\n");
	check_error("1 node1 1 2 abc\n", "test: error: %s: line 2: read 4 instead of 5 fields (rank hostname offset_median offset_mean offset_std)\n");
	check_error("1 node1 1 2 3\n2 node1 1 2 3\n", "test: error: %s: line 3: hostname node1 already given in line 2\n");
	check_error("1 node1 nan 2 3\n", "test: error: %s: line 2: offset_median out of range\n");
	check_error("1 node1 1e30 2 3\n", "test: error: %s: line 2: offset_median out of range\n");
	check_error("1 node1 1 2 3\n2 node4 1 2 3\n", "test: error: %s: line 3: no loom of the trace has hostname node4\n");
	check_error("1 node1.a 1 2 3\n", "test: error: %s: line 2: no loom of the trace has hostname node1.a\n");
}

static void test_write(void)
{
	struct clkoff_entry e[] = {
		{ 0, "xeon01", 0, 0.0, 0.0 },
		{ 1, "xeon04", 1165382584, 1165382582.9, 135.286341 },
		{ 2, "xeon04", 1, 1.0, 1.0 }, /* a second rank on a host is skipped */
		{ 3, "node2", -42, -41.5, 0.25 },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK_INT(clkoff_format(f, e, 4), 0, "format");
	fclose(f);
	const char *want =
		"rank       hostname             offset_median        offset_mean          offset_std          \n"
		"0          xeon01               0                    0.000000             0.000000            \n"
		"1          xeon04               1165382584           1165382582.900000    135.286341          \n"
		"3          node2                -42                  -41.500000           0.250000            \n";
	CHECK_STR(buf, want, "the reference's layout, one row per host");
	free(buf);

	/* what we write, we read back */
	char p[512];
	snprintf(p, sizeof(p), "%s/new/dir/clock-offsets.txt", tt_root);
	CHECK_INT(clkoff_write(p, e + 3, 1), 0, "write creates the parent directories");
	setup(4);
	looms[2].hostname = "node2";
	cap_begin();
	int rc = clkoff_apply(&sys, p, 1);
	const char *m = cap_end();
	CHECK_INT(rc, 0, "and the file reads back");
	CHECK_STR(m, "", "without messages");
	CHECK_INT(looms[2].clock_offset, -42, "with the same offset");
	snprintf(p, sizeof(p), "%s/new/dir/clock-offsets.txt/x", tt_root);
	cap_begin();
	rc = clkoff_write(p, e, 1);
	m = cap_end();
	CHECK_INT(rc, -1, "writing below a file fails");
	CHECK(strstr(m, "cannot create") != NULL, "with a message: %s", m);
}

int main(void)
{
	msg_set_prog("test");
	tt_fresh();
	test_apply();
	test_absent();
	test_errors();
	test_write();
	tt_cleanup();
	return t_done();
}
