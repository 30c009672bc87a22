/* stream.c: header checks, normal and jumbo decoding through every refill
 * path, and each kind of damaged stream. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"
#include "trace/stream.h"
#include "t.h"
#include "tstream.h"

/* Opens b through a memory source read chunk bytes at a time. */
static int open_mem(struct stream_reader *r, const struct membuf *b, size_t chunk, unsigned flags)
{
	return sr_open(r, byte_src_mem(b->data, b->len, chunk), "t/stream.obs", flags);
}

/* A stream with one event of every payload size and two jumbo events, one
 * bigger than the initial read buffer. */
static void build_mixed(struct membuf *b, uint8_t *big, uint32_t bigsize)
{
	uint8_t pay[16];
	for (int i = 0; i < 16; i++)
		pay[i] = (uint8_t)(0xa0 + i);
	mb_header(b);
	mb_ev(b, "OB.", 100, NULL, 0);
	for (size_t n = 2; n <= 16; n++)
		mb_ev(b, "OHx", 100 + n, pay, n);
	mb_jumbo(b, "OUj", 200, "hello", 6);
	for (uint32_t i = 0; i < bigsize; i++)
		big[i] = (uint8_t)(i * 7);
	mb_jumbo(b, "OUk", 200, big, bigsize);
	mb_ev(b, "OHe", 300, pay, 4);
}

static void test_mixed(size_t chunk)
{
	struct membuf b = { 0 };
	uint32_t bigsize = SR_BUF_SIZE + 1000;
	uint8_t *big = malloc(bigsize);
	build_mixed(&b, big, bigsize);
	struct stream_reader r;
	struct ev ev;
	int ok = open_mem(&r, &b, chunk, 0) == 0;
	CHECK(ok, "chunk %zu: header accepted", chunk);

	uint64_t off = STREAM_HEADER_SIZE;
	int good = sr_next(&r, &ev) == 1 && ev.payload_size == 0 && ev.size == 12 &&
		   memcmp(ev.mcv, "OB.", 3) == 0 && ev.clock == 100 && ev.offset == off;
	CHECK(good, "chunk %zu: event without payload", chunk);
	off += 12;
	int sizes_ok = 1;
	for (uint32_t n = 2; n <= 16; n++) {
		if (sr_next(&r, &ev) != 1 || ev.payload_size != n || ev.size != 12 + n ||
		    ev.flags != n - 1 || ev.clock != 100 + n || ev.offset != off ||
		    ev.payload[0] != 0xa0 || ev.payload[n - 1] != 0xa0 + n - 1)
			sizes_ok = 0;
		off += 12 + n;
	}
	CHECK(sizes_ok, "chunk %zu: payload sizes 2..16 from size codes 1..15", chunk);
	uint32_t len = 0;
	good = sr_next(&r, &ev) == 1 && ev.flags == 0x13 && ev.payload_size == 4 + 6 &&
	       ev.size == 22 && ev.offset == off;
	if (good)
		memcpy(&len, ev.payload, 4);
	CHECK(good && len == 6 && strcmp((const char *)ev.payload + 4, "hello") == 0,
	      "chunk %zu: jumbo event: length then data, payload_size 4+N", chunk);
	off += 22;
	good = sr_next(&r, &ev) == 1 && ev.payload_size == 4 + bigsize && ev.offset == off &&
	       memcmp(ev.payload + 4, big, bigsize) == 0;
	CHECK(good, "chunk %zu: jumbo event bigger than the read buffer", chunk);
	off += 16 + bigsize;
	good = sr_next(&r, &ev) == 1 && memcmp(ev.mcv, "OHe", 3) == 0 && ev.offset == off &&
	       ev.payload[3] == 0xa3;
	CHECK(good, "chunk %zu: normal event after the jumbo ones", chunk);
	CHECK_INT(sr_next(&r, &ev), 0, "chunk %zu: clean end", chunk);
	CHECK_INT(sr_next(&r, &ev), 0, "chunk %zu: still the end", chunk);
	sr_close(&r);
	free(b.data);
	free(big);
}

/* Runs sr_open and sr_next on b to the first failure; returns the stderr text
 * and sets *rc to the last result (-1 = an error was reported). */
static const char *read_all(const struct membuf *b, unsigned flags, int *rc, int *nev)
{
	struct stream_reader r;
	struct ev ev;
	cap_begin();
	*nev = 0;
	*rc = open_mem(&r, b, 0, flags);
	if (*rc == 0) {
		while ((*rc = sr_next(&r, &ev)) == 1)
			(*nev)++;
	}
	sr_close(&r);
	return cap_end();
}

static void expect_error(const struct membuf *b, const char *what, const char *want)
{
	int rc, nev;
	const char *err = read_all(b, 0, &rc, &nev);
	CHECK_INT(rc, -1, "%s: reported as an error", what);
	if (!CHECK(count_lines(err) == 1 && strstr(err, want) && strstr(err, "t/stream.obs: "),
		   "%s: one line naming file and offset", what))
		printf("#   want: %s\n", want), show(0, err);
}

static void test_headers(void)
{
	struct membuf b = { 0 };
	expect_error(&b, "empty file", "offset 0: empty file");
	mb_bytes(&b, "ovni\1", 5);
	expect_error(&b, "truncated header", "offset 5: stream header cut short (5 of 8 bytes)");
	b.len = 0;
	mb_bytes(&b, "ovnj\1\0\0\0", 8);
	expect_error(&b, "wrong magic", "offset 0: not an ovni stream");
	b.len = 0;
	mb_bytes(&b, "ovni\2\0\0\0", 8);
	expect_error(&b, "wrong version", "offset 4: stream version 2 is not supported");

	b.len = 0;
	mb_header(&b);
	int rc, nev;
	const char *err = read_all(&b, 0, &rc, &nev);
	CHECK(rc == 0 && nev == 0 && *err == '\0', "a header without events is a clean, empty stream");
	free(b.data);
}

static void test_damage(void)
{
	uint8_t pay[16] = { 1, 2, 3, 4 };
	struct membuf b = { 0 };
	mb_header(&b);
	mb_ev(&b, "OHx", 10, pay, 16);
	size_t full = b.len;

	b.len = full - 3;
	expect_error(&b, "event cut in its payload", "offset 8: event OHx cut at the end of the file (25 of 28 bytes)");
	b.len = full - 20;
	expect_error(&b, "event cut in its header", "offset 8: event OHx cut at the end of the file (8 of 12 bytes)");
	b.len = STREAM_HEADER_SIZE + 2;
	expect_error(&b, "event cut after two bytes", "offset 8: event cut at the end of the file (2 of 12 header bytes)");

	b.len = full;
	b.data[STREAM_HEADER_SIZE] = 0x2f;
	expect_error(&b, "reserved flag bit", "offset 8: event OHx has impossible flags 0x2f");
	b.data[STREAM_HEADER_SIZE] = 0x80;
	expect_error(&b, "top flag bit", "impossible flags 0x80");

	b.len = STREAM_HEADER_SIZE;
	mb_ev(&b, "OB.", 10, NULL, 0);
	mb_jumbo(&b, "OUj", 11, "abcdefgh", 8);
	b.len -= 1;
	expect_error(&b, "jumbo data past the end",
		     "offset 20: jumbo event OUj of 8 bytes goes past the end of the file (43 bytes)");
	b.len = STREAM_HEADER_SIZE + 12 + 14;
	expect_error(&b, "jumbo length cut", "offset 20: event OUj cut at the end of the file (14 of 16 bytes)");

	/* A huge length in a source of unknown size: refused before allocating. */
	b.len = STREAM_HEADER_SIZE;
	uint32_t huge = EV_MAX_JUMBO + 1;
	mb_jumbo(&b, "OUj", 11, NULL, 0);
	memcpy(b.data + STREAM_HEADER_SIZE + 12, &huge, 4);
	struct stream_reader r;
	struct ev ev;
	struct byte_src *src = byte_src_mem(b.data, b.len, 0);
	src->size = UINT64_MAX;
	cap_begin();
	sr_open(&r, src, "t/stream.obs", 0);
	int rc = sr_next(&r, &ev);
	sr_close(&r);
	const char *err = cap_end();
	show(CHECK(rc == -1 && strstr(err, "offset 8: jumbo event OUj claims 2097153 bytes"),
	      "jumbo over 2 MiB in a source of unknown size"), err);
	free(b.data);
}

static void test_backwards(void)
{
	struct membuf b = { 0 };
	mb_header(&b);
	mb_ev(&b, "OB.", 50, NULL, 0);
	mb_ev(&b, "OB.", 50, NULL, 0);
	mb_ev(&b, "OU[", 40, NULL, 0);
	mb_ev(&b, "OU]", 45, NULL, 0);
	int rc, nev;
	const char *err = read_all(&b, 0, &rc, &nev);
	CHECK(rc == -1 && nev == 2, "sorted mode: equal clocks pass, a lower one stops reading");
	show(CHECK(strstr(err, "t/stream.obs: offset 32: event OU[: clock goes backwards from 50 to 40") != NULL,
	      "sorted mode: the error names stream, offset and both clocks"), err);
	err = read_all(&b, SR_UNSORTED, &rc, &nev);
	CHECK(rc == 0 && nev == 4, "unsorted mode: every event is read");
	show(CHECK(strstr(err, "warning: t/stream.obs: offset 32: event OU[: clock goes backwards from 50 to 40") &&
	      count_lines(err) == 1, "unsorted mode: one warning"), err);
	err = read_all(&b, SR_UNSORTED | SR_QUIET, &rc, &nev);
	CHECK(rc == 0 && nev == 4 && *err == '\0', "unsorted quiet mode: no warning");
	free(b.data);
}

static void test_file(void)
{
	char dir[] = "/tmp/ovni-test-stream.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char path[256];
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	struct membuf b = { 0 };
	mb_header(&b);
	for (int i = 0; i < 100000; i++)
		mb_ev(&b, "OB.", (uint64_t)i * 3, &i, 4);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0444);
	CHECK(fd >= 0 && write(fd, b.data, b.len) == (ssize_t)b.len && close(fd) == 0, "write a test stream");

	struct stream_reader r;
	struct ev ev;
	struct byte_src *src = byte_src_file(path);
	CHECK(src && src->size == b.len, "byte_src_file knows the file size");
	int ok = src && sr_open(&r, src, path, 0) == 0;
	int n = 0, same = 1;
	while (ok && sr_next(&r, &ev) == 1) {
		int v;
		memcpy(&v, ev.payload, 4);
		same &= v == n && ev.clock == (uint64_t)n * 3;
		n++;
	}
	CHECK(ok && n == 100000 && same, "a read-only file of 100000 events read through refills");
	CHECK(!ok || r.cap == SR_BUF_SIZE, "the read buffer does not grow without jumbo events");
	if (ok)
		sr_close(&r);

	cap_begin();
	src = byte_src_file(dir);
	const char *err = cap_end();
	show(CHECK(!src && strstr(err, ": offset 0: cannot read: is a directory") && count_lines(err) == 1,
	      "a directory is refused with one line"), err);
	snprintf(path, sizeof(path), "%s/missing.obs", dir);
	cap_begin();
	src = byte_src_file(path);
	err = cap_end();
	show(CHECK(!src && strstr(err, "missing.obs: offset 0: cannot open: ") && count_lines(err) == 1,
	      "a missing file is refused with one line"), err);
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	unlink(path);
	rmdir(dir);
	free(b.data);
}

static void test_encode(void)
{
	uint8_t buf[64];
	uint8_t pay[4] = { 9, 8, 7, 6 };
	size_t n = ev_encode(buf, "OHx", 0x0102030405060708ull, pay, 4);
	uint64_t clock;
	memcpy(&clock, buf + 4, 8);
	CHECK(n == 16 && buf[0] == 3 && memcmp(buf + 1, "OHx", 3) == 0 && clock == 0x0102030405060708ull &&
	      memcmp(buf + 12, pay, 4) == 0, "ev_encode: code = size - 1, MCV, clock, payload");
	CHECK(ev_encode(buf, "OB.", 1, NULL, 0) == 12 && buf[0] == 0, "ev_encode: no payload, code 0");
	n = ev_encode_jumbo(buf, "OUj", 5, "xyz", 3);
	uint32_t len;
	memcpy(&len, buf + 12, 4);
	CHECK(n == 19 && buf[0] == 0x13 && len == 3 && memcmp(buf + 16, "xyz", 3) == 0,
	      "ev_encode_jumbo: flags 0x13, u32 length, data");
	stream_header(buf);
	CHECK(memcmp(buf, "ovni\1\0\0\0", 8) == 0, "stream_header: magic and version 1");
}

/* Every prefix and thousands of random byte changes of a valid stream:
 * never a crash, and either a clean read or one line naming the offset. */
static void test_damage_everywhere(void)
{
	struct membuf good = { 0 }, b = { 0 };
	uint8_t pay[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	mb_header(&good);
	size_t bounds[64], nb = 0;
	bounds[nb++] = good.len;
	for (uint32_t i = 0; i < 20; i++) {
		if (i % 5 == 4)
			mb_jumbo(&good, "OUj", 10 + i, pay, i);
		else
			mb_ev(&good, "OHx", 10 + i, pay, i % 4 == 0 ? 0 : 2 + i % 15);
		bounds[nb++] = good.len;
	}
	int prefixes_ok = 1;
	for (size_t len = 0; len <= good.len; len++) {
		b.len = 0;
		mb_bytes(&b, good.data, len);
		int rc, nev;
		const char *err = read_all(&b, 0, &rc, &nev);
		int boundary = 0;
		for (size_t k = 0; k < nb; k++)
			boundary |= bounds[k] == len;
		if (boundary ? rc != 0 || *err : rc != -1 || count_lines(err) != 1 || !strstr(err, "t/stream.obs: offset ")) {
			prefixes_ok = 0;
			printf("#   prefix %zu: rc %d: %s", len, rc, err);
		}
	}
	CHECK(prefixes_ok, "every prefix: a clean end at event boundaries, else one error line with offset");

	uint64_t rng = 88172645463325252ull;
	int changes_ok = 1, errors = 0;
	for (int v = 0; v < 5000; v++) {
		b.len = 0;
		mb_bytes(&b, good.data, good.len);
		int nchanges = 1 + v % 3;
		for (int k = 0; k < nchanges; k++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			b.data[rng % b.len] ^= (uint8_t)(1u << (rng >> 32) % 8);
		}
		int rc, nev;
		const char *err = read_all(&b, v % 2 ? SR_UNSORTED | SR_QUIET : 0, &rc, &nev);
		if (rc == -1)
			errors++;
		if (rc == 0 ? *err != '\0' : rc != -1 || count_lines(err) != 1 || !strstr(err, "t/stream.obs: offset ")) {
			changes_ok = 0;
			printf("#   variant %d: rc %d: %s", v, rc, err);
		}
	}
	CHECK(changes_ok, "5000 streams with flipped bits: a clean read or one error line with offset");
	CHECK(errors > 1000, "most damage is detected (%d of 5000)", errors);
	free(good.data);
	free(b.data);
}

int main(void)
{
	msg_set_prog("test");
	size_t chunks[] = { 0, 1, 7, 13, 4096 };
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		test_mixed(chunks[i]);
	test_headers();
	test_damage();
	test_backwards();
	test_damage_everywhere();
	test_file();
	test_encode();
	return t_done();
}
