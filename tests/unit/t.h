/* A tiny unit test harness: each check prints "ok - what" or
 * "not ok - what (file:line)"; tests/run.sh counts them. */
#ifndef OVNI_TEST_T_H
#define OVNI_TEST_T_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int t_failed, t_total;

__attribute__((format(printf, 4, 5)))
static int t_report(int ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	t_total++;
	if (!ok)
		t_failed++;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok)
		printf(" (%s:%d)", file, line);
	printf("\n");
	fflush(stdout);
	return ok;
}

/* CHECK(cond, "what is checked", args...) */
#define CHECK(cond, ...) t_report(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_STR(got, want, ...) \
	(CHECK(strcmp((got), (want)) == 0, __VA_ARGS__) || \
	 (printf("#   got:  '%s'\n#   want: '%s'\n", (got), (want)), 0))
#define CHECK_INT(got, want, ...) \
	(CHECK((long long)(got) == (long long)(want), __VA_ARGS__) || \
	 (printf("#   got: %lld, want: %lld\n", (long long)(got), (long long)(want)), 0))

static int t_done(void)
{
	return t_failed ? 1 : 0;
}

#endif
