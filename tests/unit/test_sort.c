/* The region sort: hand-made cases, then random streams checked against a
 * plain model of the algorithm (every event in an array, regions sorted one
 * after the other), with buffers small enough to force every spill path. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sort/sort.h"
#include "trace/stream.h"
#include "t.h"

struct tev {
	uint8_t b[64];
	size_t size;
};

static size_t put(struct tev *e, const char *mcv, uint64_t clock, size_t payload, int jumbo, uint8_t tag)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->b + 1, mcv, 3);
	memcpy(e->b + 4, &clock, 8);
	if (jumbo) {
		uint32_t n = (uint32_t)payload;
		e->b[0] = EV_FLAG_JUMBO | 3;
		memcpy(e->b + 12, &n, 4);
		memset(e->b + 16, tag, payload);
		e->size = 16 + payload;
	} else {
		e->b[0] = payload ? (uint8_t)(payload - 1) : 0;
		memset(e->b + 12, tag, payload);
		e->size = 12 + payload;
	}
	if (payload)
		e->b[e->size - 1] = tag; /* tells equal clocks apart */
	return e->size;
}

static uint64_t clk(const struct tev *e)
{
	uint64_t c;
	memcpy(&c, e->b + 4, 8);
	return c;
}

static int is(const struct tev *e, char c)
{
	return e->b[1] == 'O' && e->b[2] == 'U' && e->b[3] == c;
}

/* The algorithm as the spec states it. Returns 0, or -1 for a look-back error. */
static int model(struct tev *e, size_t n, uint64_t lookback, uint64_t *empty)
{
	enum { S, U, X } st = S;
	uint64_t m = 0;
	*empty = 0;
	for (size_t k = 0; k < n; k++) {
		if (st == S) {
			if (is(&e[k], '['))
				st = U;
			continue;
		}
		if (st == U) {
			if (is(&e[k], ']')) {
				(*empty)++;
				st = S;
			} else {
				st = X;
				m = clk(&e[k]);
			}
			continue;
		}
		if (!is(&e[k], ']')) {
			if (clk(&e[k]) < m)
				m = clk(&e[k]);
			continue;
		}
		st = S;
		size_t lo = lookback && k >= lookback ? k - lookback + 1 : 0;
		size_t j = k;
		int found = 0;
		while (j-- > lo) {
			if (clk(&e[j]) < m) {
				found = 1;
				break;
			}
		}
		if (!found) {
			if (lo > 0)
				return -1;
			j = 0;
		}
		for (size_t a = j + 1; a < k; a++) { /* stable insertion sort */
			struct tev t = e[a];
			size_t b = a;
			for (; b > j && clk(&e[b - 1]) > clk(&t); b--)
				e[b] = e[b - 1];
			e[b] = t;
		}
	}
	return 0;
}

static size_t flatten(const struct tev *e, size_t n, uint8_t *out)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(out + len, e[i].b, e[i].size);
		len += e[i].size;
	}
	return len;
}

/* Expected errors are not shown. */
static void quiet(int on)
{
	static int saved = -1;
	fflush(stderr);
	if (on) {
		saved = dup(2);
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
	} else if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
		saved = -1;
	}
}

/* ---- hand-made cases ---- */

struct stream {
	struct tev e[64];
	size_t n;
};

static void add(struct stream *s, const char *mcv, uint64_t clock)
{
	put(&s->e[s->n], mcv, clock, 2, 0, (uint8_t)s->n);
	s->n++;
}

/* A stream from "MCVclock MCVclock ...", e.g. "OHx10 OU[30 KCO15 OU]40". */
static void events(struct stream *s, const char *spec)
{
	s->n = 0;
	for (const char *p = spec; *p; p += *p == ' ') {
		char *end;
		uint64_t clock = strtoull(p + 3, &end, 10);
		add(s, p, clock);
		p = end;
	}
}

/* Sorts s in memory; returns the rc and leaves the result in s->e order
 * expressed as the original indexes (the tag byte) in order[]. */
static int sort_stream(struct stream *s, uint64_t lookback, size_t mem, struct sort_stats *st, int *order)
{
	uint8_t buf[64 * 64];
	size_t len = flatten(s->e, s->n, buf);
	struct sort_opts o = { .name = "test", .lookback = lookback, .mem = mem };
	int rc = sort_mem(buf, len, 8, &o, st);
	for (size_t i = 0, p = 0; i < s->n; i++) {
		size_t sz = 12 + (buf[p] & 15 ? (buf[p] & 15) + 1u : 0);
		order[i] = buf[p + sz - 1];
		p += sz;
	}
	return rc;
}

static int same_order(const int *got, const int *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			return 0;
	return 1;
}

static void test_cases(void)
{
	struct sort_stats st;
	int order[64];

	struct stream a;
	events(&a, "OHx10 OB.20 OU[30 KCO15 KCI12 OU]40");
	CHECK_INT(sort_stream(&a, 0, 0, &st, order), 0, "a simple region sorts");
	CHECK(same_order(order, (int[]){ 0, 4, 3, 1, 2, 5 }, 6),
	      "inner events move before earlier events and the OU[; OU] stays");
	CHECK(st.changed && st.regions == 1 && st.moved == 1, "the region is counted as sorted and moved");
	CHECK_INT(st.max_window, 5, "the window holds the events from clock 10 to the OU]");

	struct stream b;
	events(&b, "OHx10 OU[20 OU]30 OU]35 OU[40 OU]50 OHe60");
	CHECK_INT(sort_stream(&b, 0, 0, &st, order), 0, "empty regions and a stray OU] are fine");
	CHECK_INT(st.empty, 2, "two empty regions are counted");
	CHECK(!st.changed && st.regions == 0, "nothing moves");

	struct stream c;
	events(&c, "OHx10 OU[50 KCO5 KCI3");
	CHECK_INT(sort_stream(&c, 0, 0, &st, order), 0, "an unterminated region is no error");
	CHECK(same_order(order, (int[]){ 0, 1, 2, 3 }, 4), "an unterminated region stays as it is");
	CHECK_INT(st.open_off, 8 + 14, "the open region's OU[ offset is reported");

	struct stream d;
	events(&d, "OHx10 OU]5 OB.20");
	CHECK_INT(sort_stream(&d, 0, 0, &st, order), 0, "a stray OU] is ignored");
	CHECK(!st.changed, "a stray OU] sorts nothing even with a lower clock");

	/* Nesting: the inner OU[ is data, the first OU] closes. */
	struct stream e;
	events(&e, "OHx10 OU[40 OU[30 KCO20 OU]50 OU]60");
	CHECK_INT(sort_stream(&e, 0, 0, &st, order), 0, "nested markers");
	CHECK(same_order(order, (int[]){ 0, 3, 2, 1, 4, 5 }, 6), "an OU[ inside a region is sorted as data");
	CHECK(st.regions == 1, "no nesting: one region");

	/* A later region pulls an event before the markers of an earlier one. */
	struct stream f;
	events(&f, "OHx10 OU[30 KCO25 OU]31 OU[40 KCI26 OU]41");
	CHECK_INT(sort_stream(&f, 0, 0, &st, order), 0, "two regions");
	CHECK(same_order(order, (int[]){ 0, 2, 5, 1, 3, 4, 6 }, 7),
	      "an event of the second region moves before the first region's markers");

	/* Equal clocks keep their file order. */
	struct stream g;
	events(&g, "OHx10 OB.20 OU[30 KCO20 KCI15 KCO20 OU]40");
	CHECK_INT(sort_stream(&g, 0, 0, &st, order), 0, "equal clocks");
	CHECK(same_order(order, (int[]){ 0, 4, 1, 3, 5, 2, 6 }, 7), "equal clocks keep their file order");

	/* The walk stops at a clock strictly below m. */
	struct stream h;
	events(&h, "OHx10 OB.15 OU[30 KCO15 OU]40");
	CHECK_INT(sort_stream(&h, 0, 0, &st, order), 0, "a clock equal to m");
	CHECK(same_order(order, (int[]){ 0, 1, 3, 2, 4 }, 5), "an event with clock == m is inside the window");
	CHECK_INT(st.max_window, 4, "the window starts at the event with clock < m");
}

/* The reference's ring: -n N reaches the N-1 events before the OU]. */
static void test_lookback(void)
{
	struct sort_stats st;
	int order[64];
	struct stream s = { .n = 0 };
	for (int i = 0; i < 10; i++)
		add(&s, "OB.", 100 + (uint64_t)i);
	add(&s, "OU[", 200);
	add(&s, "KCO", 50);
	add(&s, "OU]", 300); /* index 12 */
	quiet(1);
	CHECK_INT(sort_stream(&s, 12, 0, &st, order), -1, "-n 12: the ring has wrapped, nothing below clock 50: error");
	CHECK_INT(sort_stream(&s, 13, 0, &st, order), 0, "-n 13: the ring holds the whole stream: sorted from the start");
	CHECK(order[0] == 11 && order[1] == 0, "-n 13: the inner event goes first");
	CHECK_INT(sort_stream(&s, 0, 0, &st, order), 0, "no limit: sorted from the start");

	struct stream t = { .n = 0 };
	for (int i = 0; i < 10; i++)
		add(&t, "OB.", 100 + (uint64_t)i);
	add(&t, "OU[", 200);
	add(&t, "KCO", 103);
	add(&t, "OU]", 300); /* index 12; the window must start at index 2 */
	CHECK_INT(sort_stream(&t, 11, 0, &st, order), 0, "-n 11 reaches index 2 (clock 102 < 103)");
	CHECK(order[2] == 2 && order[3] == 3 && order[4] == 11,
	      "the window starts at clock 102; the inner event follows the equal clock 103");
	CHECK_INT(sort_stream(&t, 10, 0, &st, order), -1, "-n 10 stops at index 3: error");
	CHECK_INT(sort_stream(&t, 10, 64, &st, order), -1, "-n 10 with a tiny buffer: the same error");
	CHECK_INT(sort_stream(&t, 11, 64, &st, order), 0, "-n 11 with a tiny buffer: sorted");
	quiet(0);
}

/* ---- random streams against the model ---- */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static size_t gen(struct tev *e, size_t max)
{
	size_t n = 1 + rnd(max);
	uint64_t now = 1000;
	int inside = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd(100);
		now += rnd(4);
		const char *mcv = "OB.";
		uint64_t c = now;
		if (r < 4)
			mcv = "OU[", inside = 1;
		else if (r < 8)
			mcv = "OU]", inside = 0;
		else if (inside || r < 10)
			c = now > 300 ? now - rnd(rnd(10) ? 30 : 300) : 0;
		int jumbo = rnd(20) == 0;
		size_t payload = jumbo ? rnd(40) : (rnd(3) ? 0 : 2 + rnd(15));
		put(&e[i], mcv, c, payload, jumbo, (uint8_t)i);
	}
	return n;
}

/* A random case: the stream, the look-back and what the model makes of it. */
struct rcase {
	size_t len; /* bytes of the events, in and sorted */
	uint64_t lb, empty;
	int rc; /* the model's: 0, or -1 for a look-back error */
};

/* A random stream of up to max (<= 600) events, a look-back from lbs, and
 * the model's result: the events flattened into in, the sorted ones into exp. */
static struct rcase random_case(size_t max, const uint64_t *lbs, size_t nlbs, uint8_t *in, uint8_t *exp)
{
	static struct tev e[600], want[600];
	struct rcase c;
	size_t n = gen(e, max);
	c.lb = lbs[rnd(nlbs)];
	memcpy(want, e, n * sizeof(*e));
	c.rc = model(want, n, c.lb, &c.empty);
	c.len = flatten(e, n, in);
	flatten(want, n, exp);
	return c;
}

/* Collects what SORT_FINAL writes and checks it comes once, in order. */
struct sink {
	uint8_t *buf;
	size_t len;
	uint64_t next;
	int bad;
	const uint8_t *in;
	size_t inlen, pos;
};

static ssize_t sink_read(void *ctx, void *buf, size_t n)
{
	struct sink *k = ctx;
	n = n < 7 ? n : 7; /* odd read sizes cut events anywhere */
	if (n > k->inlen - k->pos)
		n = k->inlen - k->pos;
	memcpy(buf, k->in + k->pos, n);
	k->pos += n;
	return (ssize_t)n;
}

static int sink_write(void *ctx, uint64_t off, const void *buf, size_t n)
{
	struct sink *k = ctx;
	if (off != k->next)
		k->bad = 1;
	memcpy(k->buf + (off - 8), buf, n);
	k->next = off + n;
	k->len += n;
	return 0;
}

static void test_random(void)
{
	enum { MAXEV = 600, ROUNDS = 3000 };
	static uint8_t in[MAXEV * 64], exp[MAXEV * 64], got[MAXEV * 64];
	static const size_t mems[] = { 64, 200, 4096, 0 };
	static const uint64_t lbs[] = { 0, 0, 1, 2, 7, 40, 300 };
	int fail_mem = 0, fail_final = 0, fail_err = 0, errors = 0, moved = 0;
	quiet(1);
	for (int round = 0; round < ROUNDS; round++) {
		struct rcase c = random_case(round % 10 == 0 ? MAXEV : 60, lbs, sizeof(lbs) / sizeof(lbs[0]), in, exp);
		size_t len = c.len;
		uint64_t lb = c.lb, empty = c.empty;
		int mrc = c.rc;
		errors += mrc < 0;
		moved += mrc == 0 && memcmp(in, exp, len) != 0;
		for (size_t mi = 0; mi < sizeof(mems) / sizeof(mems[0]); mi++) {
			struct sort_opts o = { .name = "random", .lookback = lb, .mem = mems[mi] };
			struct sort_stats st;
			memcpy(got, in, len);
			int rc = sort_mem(got, len, 8, &o, &st);
			if (rc != mrc)
				fail_err++;
			else if (rc == 0 && (memcmp(got, exp, len) != 0 || st.empty != empty ||
					     st.changed != (memcmp(in, exp, len) != 0)))
				fail_mem++;
			struct sink k = { .buf = got, .next = 8, .in = in, .inlen = len };
			struct sort_io io = { &k, 8 + len, sink_read, sink_write, NULL };
			o.flags = SORT_FINAL;
			memset(got, 0, len);
			rc = sort_events(&io, 8, &o, &st);
			if (rc != mrc)
				fail_err++;
			else if (rc == 0 && (k.bad || k.len != len || memcmp(got, exp, len) != 0))
				fail_final++;
		}
	}
	quiet(0);
	CHECK(errors > 10 && moved > ROUNDS / 10, "random streams cover look-back errors (%d) and moves (%d)", errors, moved);
	CHECK_INT(fail_err, 0, "random streams: the engine fails exactly when the model does");
	CHECK_INT(fail_mem, 0, "random streams: sort_mem matches the model, with every buffer size");
	CHECK_INT(fail_final, 0, "random streams: SORT_FINAL writes the model's bytes once, in order");
}

static void test_truncated(void)
{
	struct tev e[3];
	uint8_t buf[256];
	put(&e[0], "OB.", 1, 0, 0, 0);
	put(&e[1], "OB.", 2, 4, 0, 1);
	put(&e[2], "OB.", 3, 30, 1, 2);
	size_t len = flatten(e, 3, buf);
	struct sort_opts o = { .name = "cut" };
	struct sort_stats st;
	quiet(1);
	CHECK_INT(sort_mem(buf, len - 1, 8, &o, &st), -1, "a jumbo cut short is an error");
	CHECK_INT(sort_mem(buf, 12 + 16 + 5, 8, &o, &st), -1, "a stream ending inside an event header is an error");
	CHECK_INT(sort_mem(buf, 12 + 16, 8, &o, &st), 0, "whole events are fine");
	CHECK_INT(st.events, 2, "both events are counted");
	quiet(0);
}

/* ---- files ---- */

static void write_file(const char *path, const uint8_t *b, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, b, n) != (ssize_t)n)
		abort();
	fchmod(fd, mode);
	close(fd);
}

static size_t read_file(const char *path, uint8_t *b, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, b, cap);
	if (fd >= 0)
		close(fd);
	return n < 0 ? 0 : (size_t)n;
}

static char *saved_journal;

/* At "journaled", keeps a copy of the committed journal for the tests below. */
static void keep_journal(const char *phase)
{
	if (strcmp(phase, "journaled") == 0 && saved_journal) {
		uint8_t b[4096];
		size_t n = read_file(saved_journal, b, sizeof(b));
		char copy[128];
		snprintf(copy, sizeof(copy), "%s.copy", saved_journal);
		write_file(copy, b, n, 0600);
	}
}

/* A journal left by a crash is written first; a damaged one is refused. */
static void test_journal(const char *path, const char *journal, const char *tmp, const uint8_t *in, size_t len,
			 const uint8_t *exp)
{
	char copy[128];
	snprintf(copy, sizeof(copy), "%s.copy", journal);
	uint8_t out[4096], j[4096];
	struct sort_stats st;
	saved_journal = (char *)journal;
	write_file(path, in, len, 0640);
	struct sort_opts o = { .name = "stream.obs", .hook = keep_journal };
	CHECK_INT(sort_file(path, &o, &st), 0, "journal: sort with the hook");
	size_t jn = read_file(copy, j, sizeof(j));
	CHECK(jn > 40, "journal: the committed journal was seen");
	o.hook = NULL;

	/* Crash before any in-place write: old stream and the journal. */
	write_file(path, in, len, 0640);
	write_file(journal, j, jn, 0600);
	quiet(1);
	CHECK_INT(sort_file(path, &o, &st), 0, "journal: a pending journal is finished");
	quiet(0);
	CHECK(read_file(path, out, sizeof(out)) == len && memcmp(out, exp, len) == 0, "journal: the stream is sorted");
	CHECK(access(journal, F_OK) != 0, "journal: and removed");

	/* Crash after the writes, before the unlink: the same bytes again. */
	write_file(journal, j, jn, 0600);
	quiet(1);
	CHECK_INT(sort_file(path, &o, &st), 0, "journal: a journal over the written stream");
	quiet(0);
	CHECK(read_file(path, out, sizeof(out)) == len && memcmp(out, exp, len) == 0, "journal: still sorted");

	/* Damaged: one byte of a window, the checksum no longer matches. */
	write_file(path, in, len, 0640);
	uint8_t bad[4096];
	memcpy(bad, j, jn);
	bad[40] ^= 1;
	write_file(journal, bad, jn, 0600);
	quiet(1);
	CHECK_INT(sort_file(path, &o, &st), -1, "journal: a damaged journal is an error");
	quiet(0);
	CHECK(read_file(path, out, sizeof(out)) == len && memcmp(out, in, len) == 0, "journal: the stream is untouched");
	CHECK(access(journal, F_OK) == 0, "journal: the damaged journal is kept");
	/* Of another stream (size differs). */
	write_file(path, in, len - 1, 0640);
	write_file(journal, j, jn, 0600);
	quiet(1);
	CHECK_INT(sort_file(path, &o, &st), -1, "journal: a journal of another size is an error");
	quiet(0);
	CHECK(read_file(path, out, sizeof(out)) == len - 1 && memcmp(out, in, len - 1) == 0,
	      "journal: that stream is untouched");
	unlink(journal);

	/* Being written (.tmp): the stream was not touched yet; it goes. */
	write_file(path, in, len, 0640);
	write_file(tmp, bad, 10, 0600);
	CHECK_INT(sort_file(path, &o, &st), 0, "journal: a leftover .tmp journal is ignored");
	CHECK(access(tmp, F_OK) != 0, "journal: and removed");
	CHECK(read_file(path, out, sizeof(out)) == len && memcmp(out, exp, len) == 0, "journal: sorted");
	unlink(copy);
	saved_journal = NULL;
}

static void test_files(void)
{
	char dir[] = "/tmp/test_sort.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char path[64], journal[96], tmp[112];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	snprintf(journal, sizeof(journal), "%s%s", path, SORT_JOURNAL_SUFFIX);
	snprintf(tmp, sizeof(tmp), "%s%s", journal, SORT_TMP_SUFFIX);
	struct stream s;
	events(&s, "OHx10 OU[30 KCO15 OU]40");
	uint8_t in[4096], out[4096], exp[4096];
	memcpy(in, STREAM_MAGIC, 4);
	uint32_t v = STREAM_VERSION;
	memcpy(in + 4, &v, 4);
	size_t len = 8 + flatten(s.e, s.n, in + 8);
	write_file(path, in, len, 0640);
	struct sort_opts o = { .name = "stream.obs" };
	struct sort_stats st;
	uint64_t back = 0;
	CHECK_INT(sort_check_file(path, "stream.obs", &back), 0, "check: an unsorted file");
	CHECK_INT(back, 8 + 14 + 14, "check: the first backward clock is the KCO");
	struct stat before, after;
	stat(path, &before);
	CHECK_INT(sort_file(path, &o, &st), 0, "sort_file sorts");
	stat(path, &after);
	memcpy(exp, in, len);
	struct stream w = s;
	uint64_t empty;
	model(w.e, w.n, 0, &empty);
	flatten(w.e, w.n, exp + 8);
	CHECK(read_file(path, out, sizeof(out)) == len && memcmp(out, exp, len) == 0, "the file holds the sorted stream");
	CHECK(before.st_ino == after.st_ino, "the file was written in place");
	CHECK_INT(after.st_mode & 07777, 0640, "the mode is kept");
	CHECK(access(tmp, F_OK) != 0 && access(journal, F_OK) != 0, "no journal is left");
	CHECK_INT(sort_check_file(path, "stream.obs", &back), 1, "check: sorted now");
	CHECK_INT(sort_file(path, &o, &st), 0, "sorting again");
	struct stat again;
	stat(path, &again);
	CHECK(!st.changed && again.st_ino == after.st_ino && again.st_mtime == after.st_mtime,
	      "a sorted stream is not rewritten");

	test_journal(path, journal, tmp, in, len, exp);

	quiet(1);
	write_file(path, in, 5, 0644);
	CHECK_INT(sort_file(path, &o, &st), -1, "a cut header is an error");
	CHECK_INT(sort_check_file(path, "stream.obs", &back), -1, "check: a cut header is an error");
	write_file(path, in, len - 3, 0644);
	CHECK_INT(sort_file(path, &o, &st), -1, "a stream cut inside an event is an error");
	CHECK(read_file(path, out, sizeof(out)) == len - 3 && memcmp(out, in, len - 3) == 0,
	      "a stream with an error is left as it was");
	CHECK_INT(sort_check_file(path, "stream.obs", &back), 0, "check: the backward jump comes before the cut");
	in[0] = 'x';
	write_file(path, in, len, 0644);
	CHECK_INT(sort_file(path, &o, &st), -1, "a bad magic is an error");
	quiet(0);
	unlink(path);
	rmdir(dir);
}

/* sort_file on random streams against the model: in place, through the
 * journal, with windows spilled to it, boundaries forgotten, patches cut. */
static void test_random_files(void)
{
	enum { MAXEV = 400, ROUNDS = 300 };
	static uint8_t in[MAXEV * 64 + 8], exp[MAXEV * 64 + 8], got[MAXEV * 64 + 8];
	static const size_t mems[] = { 0, 64, 300, 1000 };
	static const uint64_t lbs[] = { 0, 0, 0, 2, 7, 40 };
	char dir[] = "/tmp/test_sort_files.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char path[64], journal[96];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	snprintf(journal, sizeof(journal), "%s%s", path, SORT_JOURNAL_SUFFIX);
	int fail = 0, fail_err = 0, fail_kept = 0, moved = 0, errors = 0;
	uint64_t checkpoints = 0;
	quiet(1);
	for (int round = 0; round < ROUNDS; round++) {
		stream_header(in);
		stream_header(exp);
		struct rcase c = random_case(round % 10 == 0 ? MAXEV : 60, lbs, sizeof(lbs) / sizeof(lbs[0]), in + 8,
					     exp + 8);
		size_t len = 8 + c.len;
		uint64_t lb = c.lb, empty = c.empty;
		int mrc = c.rc;
		errors += mrc < 0;
		moved += mrc == 0 && memcmp(in, exp, len) != 0;
		write_file(path, in, len, 0644);
		struct sort_opts o = { .name = "random", .lookback = lb, .mem = mems[round % 4] };
		struct sort_stats st;
		int rc = sort_file(path, &o, &st);
		checkpoints += st.checkpoints;
		size_t glen = read_file(path, got, sizeof(got));
		if (rc != mrc)
			fail_err++;
		else if (rc == 0 && (glen != len || memcmp(got, exp, len) != 0 || st.empty != empty ||
				     st.changed != (memcmp(in, exp, len) != 0)))
			fail++;
		else if (rc < 0 && (glen != len || memcmp(got, in, len) != 0))
			fail_kept++;
		if (access(journal, F_OK) == 0)
			fail_kept++;
	}
	quiet(0);
	unlink(path);
	rmdir(dir);
	CHECK(errors > 3 && moved > ROUNDS / 10, "files: random streams cover look-back errors (%d) and moves (%d)", errors,
	      moved);
	CHECK(checkpoints > 10, "files: the random streams cover checkpoints (%llu)", (unsigned long long)checkpoints);
	CHECK_INT(fail_err, 0, "files: sort_file fails exactly when the model does");
	CHECK_INT(fail, 0, "files: sort_file writes the model's bytes in place");
	CHECK_INT(fail_kept, 0, "files: a failed sort leaves the stream as it was, and no journal");
}

/* A stream of n regions, each with one event that goes back, into b
 * (header included); its sorted bytes into s. Returns the length. */
static size_t regions(uint8_t *b, uint8_t *s, size_t n)
{
	static struct tev e[4 * 1000], want[4 * 1000];
	size_t k = 0;
	for (size_t r = 0; r < n; r++) {
		uint64_t c = 100 + 10 * r;
		put(&e[k], "OB.", c, 0, 0, 0), k++;
		put(&e[k], "OU[", c + 5, 0, 0, 0), k++;
		put(&e[k], "KCO", c + 2, 0, 0, 0), k++;
		put(&e[k], "OU]", c + 6, 0, 0, 0), k++;
	}
	memcpy(want, e, k * sizeof(*e));
	uint64_t empty;
	model(want, k, 0, &empty);
	stream_header(b);
	stream_header(s);
	flatten(want, k, s + 8);
	return 8 + flatten(e, k, b + 8);
}

/* Memory follows the patches held, not the regions of the stream: without
 * a look-back limit, checkpoints; with one, windows out of its reach leave.
 * A cut stream that would need checkpoints is refused untouched. */
static void test_bounded(void)
{
	static uint8_t in[1000 * 4 * 12 + 8], exp[sizeof(in)], got[sizeof(in)];
	char dir[] = "/tmp/test_sort_bounded.XXXXXX", path[64];
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	for (uint64_t lb = 0; lb <= 8; lb += 8) {
		size_t peak[2];
		const size_t counts[2] = { 100, 1000 };
		for (int i = 0; i < 2; i++) {
			size_t len = regions(in, exp, counts[i]);
			write_file(path, in, len, 0644);
			struct sort_opts o = { .name = "bounded", .lookback = lb, .mem = 300 };
			struct sort_stats st;
			CHECK_INT(sort_file(path, &o, &st), 0, "bounded, -n %llu: %zu regions sort",
				  (unsigned long long)lb, counts[i]);
			CHECK(read_file(path, got, sizeof(got)) == len && memcmp(got, exp, len) == 0,
			      "bounded, -n %llu: %zu regions: the model's bytes", (unsigned long long)lb, counts[i]);
			CHECK(lb ? st.dropped + 10 > counts[i] && !st.checkpoints : st.checkpoints * 2 == counts[i],
			      "bounded, -n %llu: %llu checkpoints, %llu windows left memory", (unsigned long long)lb,
			      (unsigned long long)st.checkpoints, (unsigned long long)st.dropped);
			peak[i] = st.peak_mem;
		}
		CHECK(peak[1] == peak[0], "bounded, -n %llu: 10 times the regions, the same peak memory (%zu, %zu bytes)",
		      (unsigned long long)lb, peak[0], peak[1]);
	}

	size_t len = regions(in, exp, 1000);
	write_file(path, in, len - 5, 0644); /* the last OU] cut */
	struct sort_opts o = { .name = "bounded", .mem = 300 };
	struct sort_stats st;
	quiet(1);
	CHECK_INT(sort_file(path, &o, &st), -1, "bounded: a stream cut at its end fails");
	quiet(0);
	CHECK(read_file(path, got, sizeof(got)) == len - 5 && memcmp(got, in, len - 5) == 0 && st.checkpoints == 0,
	      "bounded: and is left as it was, no checkpoint written");
	unlink(path);
	rmdir(dir);
}

/* A region whose window starts far behind it, and one with more bytes
 * than the sort reads at a time: the window is read back from the file,
 * and so is the start of the stream. */
static void test_far(void)
{
	enum { N = 3000 };
	static struct tev e[N], want[N];
	static uint8_t in[N * 64 + 8], exp[sizeof(in)], got[sizeof(in)];
	char dir[] = "/tmp/test_sort_far.XXXXXX", path[64];
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	for (int shape = 0; shape < 2; shape++) {
		size_t k = 0;
		for (; k < N / 2; k++)
			put(&e[k], "OB.", 1000 + 10 * k, k % 3 ? 0 : 8, k % 7 == 0, (uint8_t)k);
		put(&e[k], "OU[", 1000 + 10 * k, 0, 0, 0), k++;
		/* one event back to the stream's tenth event, or many inner ones */
		size_t inner = shape ? N / 3 : 1;
		for (size_t i = 0; i < inner; i++, k++)
			put(&e[k], "KCO", 1095 + 10 * (inner - i), 4, 0, (uint8_t)i);
		put(&e[k], "OU]", 1000 + 10 * k, 0, 0, 0), k++;
		for (; k < N; k++)
			put(&e[k], "OB.", 1000 + 10 * k, 0, 0, 0);
		memcpy(want, e, sizeof(e));
		uint64_t empty;
		model(want, N, 0, &empty);
		stream_header(in);
		stream_header(exp);
		size_t len = 8 + flatten(e, N, in + 8);
		flatten(want, N, exp + 8);
		for (size_t mem = 0; mem <= 300; mem += 300) {
			write_file(path, in, len, 0644);
			struct sort_opts o = { .name = "far", .mem = mem };
			struct sort_stats st;
			CHECK_INT(sort_file(path, &o, &st), 0, "far, shape %d, mem %zu: sorts", shape, mem);
			CHECK(read_file(path, got, sizeof(got)) == len && memcmp(got, exp, len) == 0 &&
				      memcmp(in, exp, len) != 0,
			      "far, shape %d, mem %zu: the model's bytes", shape, mem);
		}
	}
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_cases();
	test_lookback();
	test_random();
	test_truncated();
	test_files();
	test_random_files();
	test_bounded();
	test_far();
	return t_done();
}
