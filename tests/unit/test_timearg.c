/* --from/--to time arguments: units, @CLOCK, refusals, windows. */
#include <stdint.h>
#include <stdio.h>

#include "base/msg.h"
#include "base/timearg.h"
#include "t.h"

static void good(const char *s, int64_t ns, int raw)
{
	struct timearg t;
	int rc = timearg_parse(&t, s, "--from");
	CHECK(rc == 0 && t.set && t.ns == ns && t.raw == raw, "'%s' is %lld ns%s", s, (long long)ns,
	      raw ? " (raw)" : "");
}

static void refused(const char *s)
{
	struct timearg t;
	CHECK(timearg_parse(&t, s, "--to") < 0, "'%s' is refused", s);
}

static void str(int64_t ns, const char *want)
{
	char b[32];
	CHECK_STR(timearg_str(ns, b), want, "timearg_str(%lld)", (long long)ns);
}

int main(void)
{
	msg_set_quiet(1);
	good("1.5s", 1500000000, 0);
	good("200ms", 200000000, 0);
	good("30us", 30000, 0);
	good("12ns", 12, 0);
	good("0ns", 0, 0);
	good(".5ms", 500000, 0);
	good("2.000000001s", 2000000001, 0);
	good("1.25us", 1250, 0);
	good("9223372036854775807ns", INT64_MAX, 0);
	good("@0", 0, 1);
	good("@123456789012", 123456789012LL, 1);
	refused("12");
	refused("1.5");
	refused("");
	refused("s");
	refused(".ms");
	refused("-1s");
	refused("+1s");
	refused("1.5ns");
	refused("1.0000000001s");
	refused("10m");
	refused("10 ms");
	refused("1sec");
	refused("@");
	refused("@12ns");
	refused("@-5");
	refused("9223372036854775808ns");
	refused("9223372037s");
	refused("99999999999999999999999s");

	struct timewin w = { { 0, 0, 0 }, { 0, 0, 0 } };
	int64_t f, t;
	CHECK(timewin_resolve(&w, 1000, &f, &t) == 0 && f == INT64_MIN && t == INT64_MAX,
	      "no window: everything");
	timearg_parse(&w.from, "1us", "--from");
	timearg_parse(&w.to, "@5000", "--to");
	CHECK(timewin_resolve(&w, 1000, &f, &t) == 0 && f == 2000 && t == 5000,
	      "1us from a start at 1000 is clock 2000; @5000 is 5000");
	timearg_parse(&w.from, "4us", "--from");
	CHECK(timewin_resolve(&w, 1000, &f, &t) < 0, "an empty window is refused");
	timearg_parse(&w.from, "5us", "--from");
	CHECK(timewin_resolve(&w, 1000, &f, &t) < 0, "an inverted window is refused");
	w.to.set = 0;
	timearg_parse(&w.from, "9223372036854775807ns", "--from");
	CHECK(timewin_resolve(&w, 10, &f, &t) < 0 && f == INT64_MAX, "a far --from saturates, then is empty");

	str(0, "0ns");
	str(999, "999ns");
	str(1000, "1us");
	str(1500, "1.5us");
	str(61813142, "61.813142ms");
	str(1500000000, "1.5s");
	str(-2000, "-2us");
	return t_done();
}
