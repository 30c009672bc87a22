/* ovni dump lines: the clock column through its cache of the last clock
 * (only the last four digits change, a carry past them, back to small and
 * negative clocks) against printf's "%10lld". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/dump.h"
#include "base/out.h"
#include "t.h"

int main(void)
{
	static const int64_t clocks[] = { 0, 5, 9999, 10000, 10001, 19999, 20000, 123456789999LL,
					  123456790000LL, 123456790042LL, 7, 99999999999LL, 100000000000LL,
					  -3, 1234, INT64_MAX, 12345 };
	char path[] = "/tmp/ovni-test-dump.XXXXXX";
	int fd = mkstemp(path);
	struct out o;
	struct dump_tail t;
	CHECK(fd >= 0 && out_init(&o, fd, path, 0) == 0, "output file");
	CHECK_INT(dump_tail_init(&t, "loom.a/proc.1/thread.2/stream.obs"), 0, "tail");
	char want[4096] = "";
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
	FILE *f = fopen(path, "r");
	char got[4096] = "";
	size_t n = f ? fread(got, 1, sizeof(got) - 1, f) : 0;
	got[n] = '\0';
	if (f)
		fclose(f);
	CHECK_STR(got, want, "dump -x lines with the clock column");
	dump_tail_free(&t);
	unlink(path);
	return t_done();
}
