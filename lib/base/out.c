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
	o->cap = cap ? cap : (size_t)1 << 20;
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
