/* ovni top's counts: 7-bit MCVs (the direct blocks) and others (the hash
 * table, grown past its first 256 slots) printed together, most frequent
 * first, ties by MCV. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump/evcount.h"
#include "base/out.h"
#include "t.h"

int main(void)
{
	struct evcount c;
	CHECK_INT(evcount_init(&c), 0, "init");
	/* 300 non-ASCII MCVs once each: the table grows twice */
	int ok = 1;
	for (int i = 0; i < 300; i++) {
		uint8_t m[3] = { 0xc3, (uint8_t)(0x80 + i % 64), (uint8_t)('a' + i / 64) };
		ok &= evcount_add(&c, m) == 0;
	}
	CHECK(ok, "300 non-ASCII MCVs counted");
	static const char *const ascii[] = { "OHx", "OHx", "OHx", "VTe", "VTe", "6Yc", "OHx", "VTe", "AAA" };
	for (size_t i = 0; i < sizeof(ascii) / sizeof(ascii[0]); i++)
		CHECK_INT(evcount_add(&c, (const uint8_t *)ascii[i]), 0, "count %s", ascii[i]);
	uint8_t hi[3] = { 'O', 'H', 0xff };
	for (int i = 0; i < 5; i++)
		evcount_add(&c, hi);

	char path[] = "/tmp/ovni-test-evcount.XXXXXX";
	int fd = mkstemp(path);
	struct out o;
	CHECK(fd >= 0 && out_init(&o, fd, path, 0) == 0, "output file");
	CHECK_INT(evcount_print(&c, &o), 0, "print");
	CHECK_INT(out_close(&o), 0, "close");
	static char got[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(got, 1, sizeof(got) - 1, f) : 0;
	got[n] = '\0';
	if (f)
		fclose(f);
	unlink(path);
	const char *want_head = "OH\xff          5\n"
				"OHx          4\n"
				"VTe          3\n"
				"6Yc          1\n"
				"AAA          1\n";
	CHECK(strncmp(got, want_head, strlen(want_head)) == 0, "the most frequent first, ties by MCV");
	int lines = 0;
	for (char *p = got; *p; p++)
		lines += *p == '\n';
	CHECK_INT(lines, 5 + 300, "one line per MCV");
	/* the ties after AAA are the 300 non-ASCII MCVs in strcmp order */
	char *rest = got + strlen(want_head);
	CHECK(strncmp(rest, "\xc3\x80" "a          1\n\xc3\x80" "b          1\n", 28) == 0,
	      "non-ASCII MCVs after, by strcmp: '%.28s'", rest);
	evcount_free(&c);
	return t_done();
}
