#include "base/msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "ovni";
static int quiet;

/* Held lines (msg_hold): a loop that reports often pays one write per
 * buffer, not one per line. */
static struct {
	int on;
	size_t len;
	char buf[16384];
} held;

void msg_set_prog(const char *name) { prog = name; }
const char *msg_prog(void) { return prog; }
void msg_set_quiet(int q) { quiet = q; }

void msg_flush(void)
{
	if (held.len)
		fwrite(held.buf, 1, held.len, stderr);
	held.len = 0;
}

void msg_hold(int on)
{
	if (!on)
		msg_flush();
	held.on = on;
}

/* One whole line (newline included) to stderr, or to the held lines. */
static void put(const char *line, size_t len, int info)
{
	if (held.on && info) {
		if (held.len + len > sizeof(held.buf))
			msg_flush();
		if (len <= sizeof(held.buf)) {
			memcpy(held.buf + held.len, line, len);
			held.len += len;
			return;
		}
	}
	fwrite(line, 1, len, stderr);
}

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
	put(line, len, *level == '\0');
}

void msg_info_str(const char *text, size_t n)
{
	if (quiet)
		return;
	char line[4096];
	size_t p = strlen(prog);
	if (p + n + 3 > sizeof(line)) {
		msg_info("%.*s", (int)n, text);
		return;
	}
	memcpy(line, prog, p);
	line[p++] = ':';
	line[p++] = ' ';
	memcpy(line + p, text, n);
	p += n;
	line[p++] = '\n';
	put(line, p, 1);
}

void msg_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	msg_flush();
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	msg_flush();
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
	msg_flush();
	vmsg("error: ", fmt, ap);
	va_end(ap);
	exit(1);
}
