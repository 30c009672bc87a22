/* Integer formatting and buffered output. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/out.h"
#include "t.h"

static void check_u64(uint64_t v)
{
	char want[32], got[32];
	snprintf(want, sizeof(want), "%" PRIu64, v);
	got[fmt_u64(got, v)] = '\0';
	CHECK_STR(got, want, "fmt_u64(%s)", want);
}

static void check_i64(int64_t v)
{
	char want[32], got[32];
	snprintf(want, sizeof(want), "%" PRId64, v);
	got[fmt_i64(got, v)] = '\0';
	CHECK_STR(got, want, "fmt_i64(%s)", want);
}

int main(void)
{
	uint64_t u[] = { 0, 1, 9, 10, 99, 100, 101, 999, 1000, 123456789, UINT64_MAX, UINT64_MAX / 10 };
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		check_u64(u[i]);
	int64_t s[] = { 0, -1, 1, -10, INT64_MIN, INT64_MAX, -1234567890123LL };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		check_i64(s[i]);

	char buf[32];
	static const int d4[] = { 0, 7, 42, 100, 1234, 9999 };
	for (size_t i = 0; i < sizeof(d4) / sizeof(d4[0]); i++) {
		char want[8];
		snprintf(want, sizeof(want), "%04d", d4[i]);
		memcpy(buf, fmt_digits4 + 4 * d4[i], 4);
		buf[4] = '\0';
		CHECK_STR(buf, want, "fmt_digits4[%d]", d4[i]);
	}
	buf[fmt_u64_pad(buf, 42, 10, ' ')] = '\0';
	CHECK_STR(buf, "        42", "right-aligned in 10");
	buf[fmt_u64_pad(buf, 12345678901ULL, 10, ' ')] = '\0';
	CHECK_STR(buf, "12345678901", "wider than the field is not cut");
	buf[fmt_i64_pad(buf, 7, 20, '0')] = '\0';
	CHECK_STR(buf, "00000000000000000007", "zero padded to 20");

	/* Output through a small buffer must keep every byte in order. */
	char path[] = "/tmp/ovni-test-out.XXXXXX";
	int fd = mkstemp(path);
	struct out o;
	out_init(&o, fd, path, 64);
	for (int i = 0; i < 1000; i++) {
		out_u64(&o, (uint64_t)i);
		out_char(&o, '\n');
	}
	char big[200];
	memset(big, 'x', sizeof(big));
	out_mem(&o, big, sizeof(big));
	out_printf(&o, "end %d\n", 7);
	CHECK(out_close(&o) == 0, "out_close succeeds");
	FILE *f = fopen(path, "r");
	int good = 1;
	for (int i = 0; i < 1000; i++) {
		int v;
		if (fscanf(f, "%d\n", &v) != 1 || v != i)
			good = 0;
	}
	char tail[256] = "";
	size_t n = fread(tail, 1, sizeof(tail) - 1, f);
	tail[n] = '\0';
	fclose(f);
	unlink(path);
	CHECK(good, "buffered numbers come out in order");
	CHECK(n == 206 && tail[0] == 'x' && strcmp(tail + 200, "end 7\n") == 0,
		"large write and printf follow the buffered bytes");
	return t_done();
}
