/* The reason of a failure, per thread (the shim has many). */
#include "base/fail.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char reason[1024];
static _Thread_local int have_reason;

int failf(const char *fmt, ...)
{
	if (have_reason)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	have_reason = 1;
	return -1;
}

const char *fail_reason(void)
{
	return have_reason ? reason : "";
}

void fail_clear(void)
{
	have_reason = 0;
	reason[0] = '\0';
}

const char *fail_take(void)
{
	have_reason = 0;
	return reason;
}
