/* Pack archives: the column transform loses nothing whatever the bytes, and
 * crafted archives cannot make unpack write outside its directory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/event.h"
#include "pack/pack.h"
#include "t.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* n bytes of events of every shape (jumbo, backward and huge clock steps),
 * then tail garbage bytes. */
static size_t make_events(uint8_t *buf, size_t cap, size_t tail)
{
	size_t n = 0;
	uint64_t clock = next() % 1000000;
	while (n + EV_JUMBO_HEADER_SIZE + 300 + tail < cap) {
		uint64_t r = next();
		char mcv[3] = { 'O', (char)('A' + r % 5), (char)('a' + r % 3) };
		switch (r % 7) {
		case 0: clock -= r % 50; break; /* backwards */
		case 1: clock += (uint64_t)1 << 40; break; /* past 32 bits */
		default: clock += r % 300; break;
		}
		uint8_t pay[256];
		for (size_t i = 0; i < sizeof(pay); i++)
			pay[i] = (uint8_t)next();
		if (r % 23 == 0)
			n += ev_encode_jumbo(buf + n, mcv, clock, pay, (uint32_t)(r % 256));
		else {
			size_t p = r % 9 == 0 ? 0 : 2 + (r >> 8) % 15;
			n += ev_encode(buf + n, mcv, clock, pay, p);
		}
	}
	for (size_t i = 0; i < tail; i++)
		buf[n++] = (uint8_t)next();
	return n;
}

static int roundtrip(const uint8_t *src, size_t n)
{
	uint8_t *enc = malloc(pack_cols_bound(n)), *dec = malloc(n + 1);
	size_t e = pack_cols_encode(src, n, enc);
	const char *why;
	int ok = e <= pack_cols_bound(n) && pack_cols_decode(enc, e, dec, n, &why) == 0 && memcmp(src, dec, n) == 0;
	free(enc);
	free(dec);
	return ok;
}

static void test_cols(void)
{
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	size_t n = make_events(buf, cap, 0);
	CHECK(roundtrip(buf, n), "events of every shape round-trip (%zu bytes)", n);
	n = make_events(buf, cap, 7);
	CHECK(roundtrip(buf, n), "events then a cut event round-trip");
	CHECK(roundtrip(buf, 0), "an empty block round-trips");
	for (size_t i = 0; i < cap; i++)
		buf[i] = (uint8_t)next();
	CHECK(roundtrip(buf, cap), "random bytes round-trip");
	memset(buf, 0, cap);
	CHECK(roundtrip(buf, cap), "zeros (events without payload at clock 0) round-trip");

	/* Damaged encodings are refused, never read past their ends. */
	n = make_events(buf, 4096, 0);
	uint8_t *enc = malloc(pack_cols_bound(n)), *dec = malloc(n);
	size_t e = pack_cols_encode(buf, n, enc);
	int refused = 0, tries = 0;
	for (size_t i = 0; i < 16; i++, tries++) {
		enc[i] ^= 0x40;
		const char *why;
		refused += pack_cols_decode(enc, e, dec, n, &why) < 0;
		enc[i] ^= 0x40;
	}
	CHECK_INT(refused, tries, "a damaged column header is refused");
	const char *why;
	CHECK(pack_cols_decode(enc, e - 1, dec, n, &why) < 0, "a cut encoding is refused");
	CHECK(pack_cols_decode(enc, e, dec, n - 1, &why) < 0, "a wrong decoded size is refused");
	free(enc);
	free(dec);

	/* Cuts fall on event boundaries; garbage gets cut at max. */
	n = make_events(buf, cap, 0);
	size_t c = pack_cols_cut(buf, n, 65536);
	CHECK(c > 60000 && c <= 65536, "a cut near the limit (%zu)", c);
	CHECK(roundtrip(buf, c) && roundtrip(buf + c, n - c), "both sides of a cut round-trip");
	memset(buf, 0xff, 100);
	CHECK_INT(pack_cols_cut(buf, 100, 64), 64, "bytes that are not events are cut at the limit");
	free(buf);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	uint8_t *b = malloc(*n);
	*n = fread(b, 1, *n, f);
	fclose(f);
	return b;
}

/* Renames member "aaaa" to name (4 bytes) in the index and fixes the
 * index checksum, as a forger would. */
static void forge(const uint8_t *orig, size_t n, const char *name, const char *out)
{
	uint8_t *b = malloc(n);
	memcpy(b, orig, n);
	uint64_t ioff = pack_get64(b + n - PACK_TRAILER_SIZE), ilen = pack_get64(b + n - PACK_TRAILER_SIZE + 8);
	for (uint64_t i = ioff; i + 4 <= ioff + ilen; i++)
		if (!memcmp(b + i, "aaaa", 4))
			memcpy(b + i, name, 4);
	pack_put64(b + n - PACK_TRAILER_SIZE + 16, pack_hash(b + ioff, ilen));
	FILE *f = fopen(out, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
	free(b);
}

static void test_escapes(void)
{
	char tmpl[] = "/tmp/ovni-test-pack.XXXXXX";
	char *tmp = mkdtemp(tmpl);
	char src[256], arch[256], forged[256], dst[256], outside[256];
	snprintf(src, sizeof(src), "%s/src", tmp);
	snprintf(arch, sizeof(arch), "%s/a.ovnipack", tmp);
	snprintf(forged, sizeof(forged), "%s/f.ovnipack", tmp);
	mkdir(src, 0755);
	char p[300];
	snprintf(p, sizeof(p), "%s/aaaa", src);
	write_file(p, "escaped\n");
	struct pack_write_opts o = { .level = 3, .threads = 1 };
	CHECK(pack_write(src, arch, &o) == 0, "a small archive is written");
	size_t n;
	uint8_t *orig = slurp(arch, &n);
	static const char *names[] = { "../x", "/tmp", "./aa", "a//b", "aa/.", "x/.." };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		forge(orig, n, names[i], forged);
		snprintf(dst, sizeof(dst), "%s/d%zu/in", tmp, i);
		snprintf(outside, sizeof(outside), "%s/d%zu", tmp, i);
		mkdir(outside, 0755);
		struct pack pk;
		int opened = pack_open(&pk, forged) == 0;
		int rc = opened ? pack_extract(&pk, dst, 0, NULL, NULL) : -1;
		pack_close(&pk);
		char x[400];
		snprintf(x, sizeof(x), "%s/x", outside);
		CHECK(rc < 0 && access(x, F_OK) != 0 && access("/tmpx", F_OK) != 0,
		      "a member named '%s' is refused and nothing is written", names[i]);
	}
	/* An index whose checksum is right but whose block offset is not. */
	{
		uint8_t *b = malloc(n);
		memcpy(b, orig, n);
		uint64_t ioff = pack_get64(b + n - PACK_TRAILER_SIZE), ilen = pack_get64(b + n - PACK_TRAILER_SIZE + 8);
		uint8_t *last = b + ioff + ilen - 8; /* the offset of the only block */
		static const uint64_t offs[] = { 17, 1u << 30 };
		static const char *what[] = { "a block offset pointing inside a block", "a block offset past the index" };
		for (int k = 0; k < 2; k++) {
			pack_put64(last, offs[k]);
			pack_put64(b + n - PACK_TRAILER_SIZE + 16, pack_hash(b + ioff, ilen));
			FILE *f = fopen(forged, "wb");
			fwrite(b, 1, n, f);
			fclose(f);
			struct pack pk;
			int rc = pack_open(&pk, forged);
			if (rc == 0)
				rc = pack_verify(&pk, NULL, NULL);
			pack_close(&pk);
			CHECK(rc < 0, "%s is refused", what[k]);
		}
		free(b);
	}
	forge(orig, n, "bbbb", forged);
	struct pack pk;
	snprintf(dst, sizeof(dst), "%s/good", tmp);
	CHECK(pack_open(&pk, forged) == 0 && pack_extract(&pk, dst, 0, NULL, NULL) == 0,
	      "a forged but harmless name is extracted (the forgery itself works)");
	pack_close(&pk);
	free(orig);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	CHECK(system(cmd) == 0, "clean up");
}

int main(void)
{
	test_cols();
	test_escapes();
	return t_done();
}
