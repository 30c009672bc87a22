#include "chan/fail.h"

#include <stdarg.h>
#include <stdio.h>

static char reason[1024];
static int have_reason;

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
