/* The region map of the stack models: an opening MCV pushes its value, its
 * partner (last byte upper-cased, ']' for '[') pops it, anything else is
 * unknown; a table that would make two events mean one thing is refused. */
#include <stdlib.h>

#include "chan/chan.h"
#include "base/fail.h"
#include "model/substack.h"
#include "t.h"

static int op(const struct substack_map *m, const char *mcv)
{
	return substack_map_op(m, (const uint8_t *)mcv);
}

static void test_map(void)
{
	static const struct substack_ev evs[] = { { "TCi", 1 }, { "TR[", 7 }, { "TRs", 300 } };
	struct substack_map *m = malloc(sizeof(*m));
	CHECK_INT(substack_map_init(m, evs, 3), 0, "a good table is accepted");
	CHECK_INT(op(m, "TCi"), 1, "an opening event pushes its value");
	CHECK_INT(op(m, "TCI"), -1, "the upper-case partner pops it");
	CHECK_INT(op(m, "TR["), 7, "'[' opens");
	CHECK_INT(op(m, "TR]"), -7, "']' closes");
	CHECK_INT(op(m, "TRS"), -300, "values above 255 fit");
	CHECK_INT(op(m, "TRx"), 0, "an event not in the table is unknown");
	CHECK_INT(op(m, "T\xff" "a"), 0, "bytes above 127 are unknown, not out of bounds");

	static const struct substack_ev twice[] = { { "TCi", 1 }, { "TCi", 2 } };
	CHECK_INT(substack_map_init(m, twice, 2), -1, "an MCV listed twice is refused");
	static const struct substack_ev upper[] = { { "TCI", 1 } };
	CHECK_INT(substack_map_init(m, upper, 1), -1, "an opening MCV without a distinct partner is refused");
	static const struct substack_ev zero[] = { { "TCi", 0 } };
	CHECK_INT(substack_map_init(m, zero, 1), -1, "value 0 is refused (it means unknown)");
	free(m);
}

static void test_apply(void)
{
	struct chan c;
	chan_init(&c, CHAN_STACK, "t.subsystem");
	CHECK_INT(substack_apply(&c, 3), 0, "push 3");
	chan_flush(&c);
	CHECK_INT(substack_apply(&c, 5), 0, "push 5");
	chan_flush(&c);
	CHECK_INT(chan_read(&c).i, 5, "the innermost region shows");
	CHECK_INT(substack_apply(&c, -3), -1, "closing the outer region first fails");
	CHECK(strstr(fail_reason(), "t.subsystem") != NULL, "naming the channel: %s", fail_reason());
	fail_clear();
	CHECK_INT(substack_apply(&c, -5), 0, "pop 5");
	chan_flush(&c);
	CHECK_INT(chan_read(&c).i, 3, "the outer region shows again");
	chan_free(&c);
}

int main(void)
{
	test_map();
	test_apply();
	return t_done();
}
