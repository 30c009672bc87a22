/* The sort block of the breakdown timelines: outputs are the inputs sorted
 * ascending, and only the outputs whose value moved are written. */
#include <stdlib.h>
#include <string.h>

#include "chan/bay.h"
#include "chan/chan.h"
#include "chan/sort.h"
#include "t.h"
#include "tchanlog.h"

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void test_replace(void)
{
	int64_t a[] = { 0, 2, 5, 7 };
	size_t lo, hi;
	chan_sort_replace(a, 4, 2, 6, &lo, &hi);
	CHECK(a[0] == 0 && a[1] == 5 && a[2] == 6 && a[3] == 7, "2 -> 6 moves up");
	CHECK(lo == 1 && hi == 2, "positions 1..2 changed");
	chan_sort_replace(a, 4, 7, 1, &lo, &hi);
	CHECK(a[0] == 0 && a[1] == 1 && a[2] == 5 && a[3] == 6, "7 -> 1 moves down");
	CHECK(lo == 1 && hi == 3, "positions 1..3 changed");
	int64_t d[] = { 2, 2, 2, 9 };
	chan_sort_replace(d, 4, 2, 4, &lo, &hi);
	CHECK(d[0] == 2 && d[1] == 2 && d[2] == 4 && d[3] == 9 && lo == 2 && hi == 2,
	      "with duplicates only the last one moves");

	/* random replacements agree with sorting from scratch */
	srand(7);
	enum { N = 16 };
	int64_t vals[N] = { 0 }, sorted[N] = { 0 }, want[N];
	int bad = 0;
	for (int step = 0; step < 20000; step++) {
		int i = rand() % N;
		int64_t v = rand() % 6;
		chan_sort_replace(sorted, N, vals[i], v, &lo, &hi);
		vals[i] = v;
		memcpy(want, vals, sizeof(want));
		qsort(want, N, sizeof(want[0]), cmp);
		if (memcmp(want, sorted, sizeof(want)) != 0)
			bad++;
	}
	CHECK_INT(bad, 0, "20000 random replacements keep the array sorted");
}

static void test_block(void)
{
	struct bay bay;
	struct chan in[3], out[3];
	bay_init(&bay);
	struct chan *ip[3], *op[3];
	for (int i = 0; i < 3; i++) {
		char n[16];
		snprintf(n, sizeof(n), "in%d", i);
		chan_init(&in[i], CHAN_SINGLE, n);
		snprintf(n, sizeof(n), "out%d", i);
		chan_init(&out[i], CHAN_SINGLE, n);
		bay_add(&bay, &in[i]);
		bay_add(&bay, &out[i]);
		chan_on_emit(&out[i], log_emit, NULL);
		ip[i] = &in[i];
		op[i] = &out[i];
	}
	struct chan_sort s;
	CHECK_INT(chan_sort_init(&s, ip, op, 3), 0, "chan_sort_init");
	log_buf[0] = '\0';
	bay_propagate(&bay);
	CHECK_STR(log_buf, "", "nothing is written before an input changes");
	chan_set(&in[0], value_null());
	log_buf[0] = '\0';
	bay_propagate(&bay);
	CHECK_STR(log_buf, "", "null is 0: writing it to an input is no change");
	chan_set(&in[1], value_int64(5));
	log_buf[0] = '\0';
	bay_propagate(&bay);
	CHECK_STR(log_buf, "out0=0 out1=0 out2=5 ", "the first change writes every output, in order");
	chan_set(&in[1], value_int64(4));
	log_buf[0] = '\0';
	bay_propagate(&bay);
	CHECK_STR(log_buf, "out2=4 ", "then only the outputs that moved");
	chan_set(&in[1], value_int64(5));
	bay_propagate(&bay);
	chan_set(&in[0], value_int64(3));
	chan_set(&in[2], value_int64(9));
	log_buf[0] = '\0';
	bay_propagate(&bay);
	/* in0 moves out1 first; then in2 shifts out0 and out1 down and fills out2 */
	CHECK_STR(log_buf, "out1=5 out0=3 out2=9 ", "outputs are written in the order they first changed");
	chan_set(&in[2], value_null());
	log_buf[0] = '\0';
	bay_propagate(&bay);
	CHECK_STR(log_buf, "out0=0 out1=3 out2=5 ", "null counts as 0; a moved range is written in ascending order");
	chan_sort_free(&s);
	for (int i = 0; i < 3; i++) {
		chan_free(&in[i]);
		chan_free(&out[i]);
	}
	bay_free(&bay);
}

int main(void)
{
	test_replace();
	test_block();
	return t_done();
}
