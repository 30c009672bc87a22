/* ovni dump lines: the clock column through its cache of the last clock
 * (only the last four digits change, a carry past them, back to small and
 * negative clocks, the ends of int64) against printf's "%10lld"; payloads
 * of every size and stream paths short and long against ":%02x" per byte. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/dump.h"
#include "base/out.h"
#include "t.h"

static char got[1 << 16];

static const char *read_all(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/* Payloads of 0 to 40 bytes under a short and a long (over 64 bytes) path. */
static void payloads(const char *path)
{
	static const char *const paths[] = { "", "loom.x/proc.1/thread.1",
					     "loom.a-rather-long-host-name.example.org/proc.123456/thread.1234567" };
	static char want[1 << 16];
	uint8_t payload[40];
	for (int i = 0; i < 40; i++)
		payload[i] = (uint8_t)(i * 37 + 200);
	for (size_t k = 0; k < 3; k++) {
		struct out o;
		struct dump_tail t;
		int fd = open(path, O_WRONLY | O_TRUNC);
		CHECK(fd >= 0 && out_init(&o, fd, path, 0) == 0, "output file");
		CHECK_INT(dump_tail_init(&t, paths[k]), 0, "tail");
		size_t w = 0;
		for (uint32_t n = 0; n <= 40; n++) {
			struct ev ev = { .flags = 1, .mcv = { 'X', 'y', (uint8_t)('0' + n % 10) },
					 .clock = 1000000 + n, .payload = payload, .payload_size = n };
			dump_hex(&o, &ev, &t);
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%10d  Xy%c  %s  ", 1000000 + (int)n,
					      '0' + n % 10, paths[k]);
			for (uint32_t i = 0; i < n; i++)
				w += (size_t)snprintf(want + w, sizeof(want) - w, ":%02x", payload[i]);
			want[w++] = '\n';
			want[w] = '\0';
		}
		CHECK_INT(out_close(&o), 0, "close");
		CHECK_STR(read_all(path, got, sizeof(got)), want, "payloads of 0 to 40 bytes, path '%s'", paths[k]);
		dump_tail_free(&t);
	}
}

int main(void)
{
	static const int64_t clocks[] = { 0, 5, 9999, 10000, 10001, 19999, 20000, 123456789999LL,
					  123456790000LL, 123456790042LL, 7, 99999999999LL, 100000000000LL,
					  -3, 1234, INT64_MAX, 12345, INT64_MAX - 15808, INT64_MAX - 15807,
					  INT64_MAX - 5807, INT64_MIN, INT64_MIN + 5, 10000, 9999, -10000 };
	char path[] = "/tmp/ovni-test-dump.XXXXXX";
	int fd = mkstemp(path);
	struct out o;
	struct dump_tail t;
	CHECK(fd >= 0 && out_init(&o, fd, path, 0) == 0, "output file");
	CHECK_INT(dump_tail_init(&t, "loom.a/proc.1/thread.2/stream.obs"), 0, "tail");
	static char want[8192];
	uint8_t payload[2] = { 0xab, 0x01 };
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		struct ev ev = { .flags = 1, .mcv = { 'O', 'H', 'p' }, .clock = (uint64_t)clocks[i],
				 .payload = payload, .payload_size = 2, .size = 14 };
		dump_hex(&o, &ev, &t);
		size_t n = strlen(want);
		snprintf(want + n, sizeof(want) - n, "%10" PRId64 "  OHp  loom.a/proc.1/thread.2/stream.obs  :ab:01\n",
			 clocks[i]);
	}
	CHECK_INT(out_close(&o), 0, "close");
	CHECK_STR(read_all(path, got, sizeof(got)), want, "dump -x lines with the clock column");
	dump_tail_free(&t);
	payloads(path);
	unlink(path);
	return t_done();
}
