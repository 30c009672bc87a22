/* Pack archives: the column transform loses nothing whatever the bytes, and
 * crafted archives (written here byte by byte, as docs/ovni-pack.1 says)
 * cannot make unpack write outside its directory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

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
		char mcv[3] = { r % 4 ? 'O' : 'K', (char)('A' + r % 5), (char)('a' + r % 3) }; /* K: kernel clock */
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

/* Encodes and decodes segs over src; 1 if the bytes come back. */
static int roundtrip_segs(const uint8_t *src, const struct pack_seg *seg, size_t nseg)
{
	size_t n = 0;
	for (size_t i = 0; i < nseg; i++)
		n += seg[i].len;
	uint8_t *enc = malloc(pack_cols_bound(n, nseg)), *dec = malloc(n + 1);
	int ok = 1;
	for (int rc = 0; rc <= 1; rc++) { /* clock planes, then range-coded */
		size_t e = pack_cols_encode(src, seg, nseg, enc, rc);
		const char *why;
		ok &= e > 0 && e <= pack_cols_bound(n, nseg) &&
		      pack_cols_decode(enc, e, seg, nseg, PACK_VERSION, rc, dec, n, &why) == 0 && memcmp(src, dec, n) == 0;
	}
	free(enc);
	free(dec);
	return ok;
}

static int roundtrip(const uint8_t *src, size_t n)
{
	struct pack_seg seg = { (uint32_t)n, 0, 1 };
	return roundtrip_segs(src, &seg, 1);
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

	/* Several members in one block: stream headers, other files, cut events. */
	size_t a = make_events(buf + 8, 100000, 0), b = make_events(buf + 8 + a, 200000, 5);
	memcpy(buf, "ovni\3\0\0\0", 8);
	memcpy(buf + 8 + a + b, "{\"version\": 3}\n", 15);
	size_t c = make_events(buf + 8 + a + b + 15, 300000, 0);
	struct pack_seg segs[] = {
		{ (uint32_t)(8 + a), 8, 1 }, /* a whole stream */
		{ (uint32_t)b, 0, 1 }, /* the start of another stream, cut inside an event */
		{ 15, 0, 0 }, /* a stream.json */
		{ (uint32_t)c, 0, 1 }, /* a stream's continuation */
		{ 3, 3, 1 }, /* a stream shorter than its header */
	};
	CHECK(roundtrip_segs(buf, segs, 5), "a block of several members round-trips");
	struct pack_seg text = { (uint32_t)(8 + a + b), 0, 0 };
	CHECK(roundtrip_segs(buf, &text, 1), "events in a file that is not a stream stay verbatim");

	/* Damaged encodings are refused, never read past their ends. */
	n = make_events(buf, 4096, 0);
	struct pack_seg one = { (uint32_t)n, 0, 1 };
	uint8_t *enc = malloc(pack_cols_bound(n, 1)), *dec = malloc(n);
	size_t e = pack_cols_encode(buf, &one, 1, enc, 1);
	const char *why;
	pack_put32(enc + 4, pack_get32(enc + 4) - 2); /* the range-coded clock column, its last 2 bytes cut */
	CHECK(pack_cols_decode(enc, e - 2, &one, 1, PACK_VERSION, 1, dec, n, &why) < 0 && !strcmp(why, "bad clock column"),
	      "a cut range-coded clock column is refused");
	pack_put32(enc + 4, pack_get32(enc + 4) + 2);
	CHECK(pack_cols_decode(enc, e, &one, 1, PACK_VERSION, 1, dec, n, &why) == 0 && !memcmp(dec, buf, n),
	      "the range coder leaves no byte unread");
	e = pack_cols_encode(buf, &one, 1, enc, 0);
	int refused = 0, tries = 0;
	for (size_t i = 0; i < 20; i++, tries++) {
		enc[i] ^= 0x40;
		refused += pack_cols_decode(enc, e, &one, 1, PACK_VERSION, 0, dec, n, &why) < 0;
		enc[i] ^= 0x40;
	}
	CHECK_INT(refused, tries, "a damaged column header or event count is refused");
	CHECK(pack_cols_decode(enc, e - 1, &one, 1, PACK_VERSION, 0, dec, n, &why) < 0, "a cut encoding is refused");
	CHECK(pack_cols_decode(enc, e, &one, 1, PACK_VERSION, 0, dec, n - 1, &why) < 0, "a wrong decoded size is refused");
	one.len--;
	CHECK(pack_cols_decode(enc, e, &one, 1, PACK_VERSION, 0, dec, n - 1, &why) < 0, "a wrong segment size is refused");
	free(enc);
	free(dec);

	/* Cuts fall on event boundaries; garbage gets cut at max. */
	n = make_events(buf, cap, 0);
	c = pack_cols_cut(buf, n, 65536);
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

/* A member of a crafted archive. */
struct fm {
	uint8_t type;
	unsigned back; /* how many members before is its directory; 0: at the top */
	const char *name, *data; /* data: a file's bytes, a link's target */
};

static uint8_t *put_bytes(uint8_t *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* Writes a version 2 archive of the members m, all file bytes in one
 * block of codec 0 (none without bytes); stored_fix, if not 0, is the block size the index
 * claims. Returns 0. */
static int craft(const char *out, const struct fm *m, size_t n, uint64_t stored_fix)
{
	uint8_t data[4096], raw[8192], *p = raw, block[4096];
	size_t dn = 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].type == PACK_FILE)
			dn += (size_t)(put_bytes(data + dn, m[i].data, strlen(m[i].data)) - (data + dn));
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_format, ZSTD_f_zstd1_magicless);
	size_t bn = dn ? ZSTD_compress2(cc, block, sizeof(block), data, dn) : 0; /* no bytes, no block */
	p = pack_varint_put(p, n);
	p = pack_varint_put(p, dn != 0);
	if (dn) {
		*p++ = PACK_CODEC_ZSTD;
		p = pack_varint_put(p, stored_fix ? stored_fix : bn);
		p = pack_varint_put(p, dn);
		pack_put32(p, (uint32_t)pack_hash(data, dn));
		p += 4;
	}
	for (size_t i = 0; i < n; i++)
		*p++ = m[i].type;
	for (size_t i = 0; i < n; i++)
		p = pack_varint_put(p, m[i].back);
	for (size_t i = 0; i < n; i++)
		p = pack_varint_put(p, strlen(m[i].name));
	for (size_t i = 0; i < n; i++)
		p = put_bytes(p, m[i].name, strlen(m[i].name));
	for (size_t i = 0; i < n; i++)
		p = pack_varint_put(p, m[i].type == PACK_DIR ? 0755 : 0644);
	for (size_t i = 0; i < 2 * n; i++)
		p = pack_varint_put(p, pack_zigzag(i == 0 ? 1000000000 : 0)); /* seconds, then nanoseconds */
	for (size_t i = 0; i < n; i++)
		if (m[i].type == PACK_FILE)
			p = pack_varint_put(p, strlen(m[i].data));
	for (size_t i = 0; i < n; i++)
		if (m[i].type == PACK_LINK)
			p = pack_varint_put(p, strlen(m[i].data));
	for (size_t i = 0; i < n; i++)
		if (m[i].type == PACK_LINK)
			p = put_bytes(p, m[i].data, strlen(m[i].data));
	size_t rn = (size_t)(p - raw);
	uint8_t zi[8192], hdr[PACK_HEADER_SIZE] = "OVNIPACK", trailer[PACK2_TRAILER_SIZE];
	ZSTD_CCtx_refPrefix(cc, pack_dict, PACK2_DICT_SIZE);
	size_t zn = ZSTD_compress2(cc, zi, sizeof(zi), raw, rn);
	ZSTD_freeCCtx(cc);
	pack_put32(hdr + 8, 2);
	pack_put32(hdr + 12, 0);
	pack_put32(trailer, (uint32_t)zn);
	pack_put32(trailer + 4, (uint32_t)rn);
	pack_put32(trailer + 8, (uint32_t)pack_hash(zi, zn));
	pack_put32(trailer + 12, (uint32_t)pack_hash(raw, rn));
	memcpy(trailer + 16, PACK_END_MAGIC, 8);
	FILE *f = fopen(out, "wb");
	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite(block, 1, bn, f);
	fwrite(zi, 1, zn, f);
	fwrite(trailer, 1, sizeof(trailer), f);
	return fclose(f);
}

/* Opens and extracts archive into dst: 0, or -1 if refused. */
static int try_extract(const char *archive, const char *dst)
{
	struct pack pk;
	int rc = pack_open(&pk, archive);
	if (rc == 0)
		rc = pack_extract(&pk, dst, 0, NULL, NULL);
	pack_close(&pk);
	return rc;
}

static void test_escapes(void)
{
	char tmpl[] = "/tmp/ovni-test-pack.XXXXXX";
	char *tmp = mkdtemp(tmpl);
	char src[256], arch[256], forged[256], dst[400], outside[300], x[500];
	snprintf(src, sizeof(src), "%s/src", tmp);
	snprintf(arch, sizeof(arch), "%s/a.ovnipack", tmp);
	snprintf(forged, sizeof(forged), "%s/f.ovnipack", tmp);
	mkdir(src, 0755);
	char p[300];
	snprintf(p, sizeof(p), "%s/aaaa", src);
	write_file(p, "escaped\n");
	struct pack_write_opts o = { .level = 3, .threads = 1 };
	CHECK(pack_write(src, arch, &o) == 0, "a small archive is written");

	/* The crafting itself is right: a harmless archive extracts. */
	static const struct fm good[] = { { PACK_DIR, 0, "d", NULL }, { PACK_FILE, 1, "f", "hello\n" },
					  { PACK_LINK, 2, "l", "f" }, { PACK_FILE, 0, "g", "bye\n" } };
	snprintf(dst, sizeof(dst), "%s/good", tmp);
	craft(forged, good, 4, 0);
	CHECK(try_extract(forged, dst) == 0, "a crafted harmless archive is extracted (the crafting works)");
	snprintf(x, sizeof(x), "%s/d/f", dst);
	size_t n;
	uint8_t *got = access(x, F_OK) == 0 ? slurp(x, &n) : NULL;
	CHECK(got && n == 6 && !memcmp(got, "hello\n", 6), "its file holds its bytes");
	free(got);

	static const char *names[] = { "..", ".", "../x", "/tmp", "a//b", "x/.." };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct fm evil[] = { { PACK_FILE, 0, names[i], "escaped\n" } };
		craft(forged, evil, 1, 0);
		snprintf(outside, sizeof(outside), "%s/d%zu", tmp, i);
		snprintf(dst, sizeof(dst), "%s/in", outside);
		mkdir(outside, 0755);
		snprintf(x, sizeof(x), "%s/x", outside);
		CHECK(try_extract(forged, dst) < 0 && access(x, F_OK) != 0 && access("/tmpx", F_OK) != 0,
		      "a member named '%s' is refused and nothing is written", names[i]);
	}
	static const struct fm up[] = { { PACK_DIR, 0, "d", NULL }, { PACK_LINK, 1, "l", "../../x" },
					{ PACK_FILE, 0, "f", "x" } };
	craft(forged, up, 3, 0);
	snprintf(dst, sizeof(dst), "%s/up", tmp);
	CHECK(try_extract(forged, dst) < 0, "a link pointing out of the directory is refused");
	static const struct fm notdir[] = { { PACK_FILE, 0, "f", "x" }, { PACK_FILE, 1, "g", "y" } };
	craft(forged, notdir, 2, 0);
	snprintf(dst, sizeof(dst), "%s/nd", tmp);
	CHECK(try_extract(forged, dst) < 0, "a member inside a file is refused");

	/* Names that are fine alone but make a path longer than PACK_PATH_MAX
	 * (in a directory whose path is as long as can be). */
	static char dname[PACK_PATH_MAX + 1], fname[2001];
	memset(dname, 'd', PACK_PATH_MAX);
	memset(fname, 'f', 2000);
	struct fm deep[] = { { PACK_DIR, 0, dname, NULL }, { PACK_FILE, 1, "ff", "x" } };
	craft(forged, deep, 2, 0);
	struct pack pk0;
	CHECK(pack_open(&pk0, forged) < 0, "a path longer than %d bytes is refused", PACK_PATH_MAX);
	pack_close(&pk0);
	deep[0].name = "d";
	deep[1].name = fname;
	craft(forged, deep, 2, 0);
	CHECK(pack_open(&pk0, forged) == 0 && pk0.n == 2 && strlen(pk0.members[1].path) == 2002,
	      "a 2002-byte path is read (the crafting of long names works)");
	pack_close(&pk0);

	/* An index whose checksum is right but whose block size is not. */
	static const uint64_t sizes[] = { 3, 1u << 30 };
	static const char *what[] = { "a block size short of the index", "a block size past the index" };
	for (int k = 0; k < 2; k++) {
		static const struct fm one[] = { { PACK_FILE, 0, "f", "some bytes\n" } };
		craft(forged, one, 1, sizes[k]);
		struct pack pk;
		int rc = pack_open(&pk, forged);
		if (rc == 0)
			rc = pack_verify(&pk, NULL, NULL);
		pack_close(&pk);
		CHECK(rc < 0, "%s is refused", what[k]);
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	CHECK(system(cmd) == 0, "clean up");
}

/* The progress of a run: its last call, and whether done ever passed total. */
struct seen {
	uint64_t done, total;
	int over;
};

static void note_progress(void *arg, uint64_t done, uint64_t total)
{
	struct seen *s = arg;
	s->done = done;
	s->total = total;
	s->over |= done > total;
}

#define TAIL_EVENTS 200000 /* 2.4 MB: several blocks */

/* A staged tail as `ovni pack` gives one: TAIL_EVENTS more events after
 * the file's bytes. */
static int tail_of(const char *path, int fd, uint64_t *from, uint8_t **bytes, size_t *n)
{
	(void)path;
	struct stat st;
	if (fstat(fd, &st) != 0 || !(*bytes = malloc(TAIL_EVENTS * 12)))
		return -1;
	for (size_t i = 0; i < TAIL_EVENTS; i++) {
		uint8_t *e = *bytes + 12 * i;
		memcpy(e, "\0OHx", 4);
		uint64_t clock = 1000 + 10 * i;
		memcpy(e + 4, &clock, 8);
	}
	*from = (uint64_t)st.st_size;
	*n = TAIL_EVENTS * 12;
	return 1;
}

/* The progress counts the staged tails: done never passes the total. */
static void test_progress_with_tails(void)
{
	char tmpl[] = "/tmp/ovni-test-pack.XXXXXX";
	char *tmp = mkdtemp(tmpl);
	char src[256], p[300], arch[256];
	snprintf(src, sizeof(src), "%s/src", tmp);
	mkdir(src, 0755);
	snprintf(p, sizeof(p), "%s/stream.obs", src);
	write_file(p, "ovni\x01");
	FILE *f = fopen(p, "ab");
	fwrite("\0\0\0", 1, 3, f); /* the version's other bytes */
	fclose(f);
	snprintf(p, sizeof(p), "%s/stream.json", src);
	write_file(p, "{}\n");
	for (int tar = 0; tar <= 1; tar++) {
		struct seen s = { 0, 0, 0 };
		struct pack_write_opts o = { .level = 3, .threads = 1, .tar = tar, .progress = note_progress,
					     .arg = &s, .stream_tail = tail_of };
		snprintf(arch, sizeof(arch), "%s/a%d", tmp, tar);
		CHECK(pack_write(src, arch, &o) == 0, "%s: a stream with a staged tail is packed",
		      tar ? "--tar" : "blocks");
		CHECK(s.total == 8 + 3 + TAIL_EVENTS * 12 && s.done > 0 && !s.over,
		      "%s: the progress's total counts the tail, and done never passes it (done %llu of %llu)",
		      tar ? "--tar" : "blocks", (unsigned long long)s.done, (unsigned long long)s.total);
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	CHECK(system(cmd) == 0, "clean up");
}

int main(void)
{
	test_cols();
	test_escapes();
	test_progress_with_tails();
	return t_done();
}
