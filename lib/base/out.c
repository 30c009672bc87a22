#include "base/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/msg.h"

int out_init(struct out *o, int fd, const char *name, size_t cap)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->name = name;
	o->cap = cap ? cap : (size_t)128 << 10; /* more costs page faults, not fewer writes */
	o->buf = malloc(o->cap);
	if (!o->buf) {
		msg_err("%s: out of memory for the output buffer", name);
		return -1;
	}
	return 0;
}

int out_create(struct out *o, const char *path, size_t cap)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		msg_err("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (out_init(o, fd, path, cap) != 0) {
		close(fd);
		return -1;
	}
	return 0;
}

static void write_all(struct out *o, const char *p, size_t n)
{
	while (n > 0 && !o->err) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			msg_err("%s: write failed: %s", o->name, strerror(errno));
			return;
		}
		p += w;
		n -= (size_t)w;
		o->written += (uint64_t)w;
	}
}

void out_write_through(struct out *o, const void *p, size_t n)
{
	write_all(o, p, n);
}

int out_flush(struct out *o)
{
	if (o->len)
		write_all(o, o->buf, o->len);
	o->len = 0;
	return o->err ? -1 : 0;
}

char *out_make_room(struct out *o, size_t n)
{
	out_flush(o);
	if (n > o->cap) {
		char *nb = realloc(o->buf, n);
		if (!nb) {
			msg_err("%s: out of memory", o->name);
			abort();
		}
		o->buf = nb;
		o->cap = n;
	}
	return o->buf;
}

int out_close(struct out *o)
{
	int rc = out_flush(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = 0;
	if (o->fd > 2 && close(o->fd) != 0 && rc == 0) {
		msg_err("%s: close failed: %s", o->name, strerror(errno));
		rc = -1;
	}
	o->fd = -1;
	return rc;
}

void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *d = out_reserve(o, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t min, c;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, c = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void out_json_string(struct out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	out_char(o, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			out_mem(o, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			out_printf(o, "\\u%04x", c);
			i++;
		} else {
			size_t len = utf8_len(p + i, n - i);
			if (len)
				out_mem(o, p + i, len);
			else
				out_str(o, "\\ufffd");
			i += len ? len : 1;
		}
	}
	out_char(o, '"');
}
