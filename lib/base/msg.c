#include "base/msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *prog = "ovni";
static int quiet;

void msg_set_prog(const char *name) { prog = name; }
const char *msg_prog(void) { return prog; }
void msg_set_quiet(int q) { quiet = q; }

static void vmsg(const char *level, const char *fmt, va_list ap)
{
	/* One fprintf per part, but stderr is unbuffered: build the line first. */
	char line[4096];
	int n = snprintf(line, sizeof(line), "%s: %s", prog, level);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	fwrite(line, 1, len, stderr);
}

void msg_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void msg_info(const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
	exit(1);
}
