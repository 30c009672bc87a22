/* Buffered output to a file descriptor, without stdio: the hot paths format
 * straight into the buffer (out_reserve/out_commit). */
#ifndef OVNI_IO_OUT_H
#define OVNI_IO_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/fmt.h"

struct out_writer;

struct out {
	int fd;
	const char *name; /* for error messages */
	char *buf;
	size_t len, cap;
	int err; /* errno of the first failed write, 0 if none */
	uint64_t written; /* bytes handed to write() so far */
	struct out_writer *writer; /* NULL: write() runs in the caller's thread */
	int cut; /* out_create's regular file: out_close cuts it where the writes end */
};

/* cap 0 picks the default (128 KiB). Returns -1 if the buffer cannot be had. */
int out_init(struct out *o, int fd, const char *name, size_t cap);
/* out_init on path, created (mode 0666 before the umask) or written over
 * from its start, and cut where the writes end by out_close (writes go
 * from offset 0 on; a pwrite may only rewrite bytes already written). A
 * regular file is locked (base/lock.h, exclusive) until out_close, so that
 * ovni pack never archives it half rewritten. Prints the error and
 * returns -1 on failure. */
int out_create(struct out *o, const char *path, size_t cap);
/* If o writes to a regular file: from now on a thread of o's own writes
 * each full buffer while the caller fills the other (the copy into the
 * page cache then costs the caller nothing); a write error shows at the
 * next handover or flush. -1 if the thread cannot start: writes then stay
 * in the caller's thread, as they do for pipes and devices. */
int out_start_writer(struct out *o);
/* Writes the buffer out (and waits for the writer thread to have written
 * all); returns -1 (and prints an error once) on failure. */
int out_flush(struct out *o);
/* Flushes, frees the buffer and closes fd unless it is 0, 1 or 2. */
int out_close(struct out *o);
/* Makes room for n bytes (flushing); slow path of out_reserve. */
char *out_make_room(struct out *o, size_t n);

static inline char *out_reserve(struct out *o, size_t n)
{
	if (o->cap - o->len >= n)
		return o->buf + o->len;
	return out_make_room(o, n);
}

static inline void out_commit(struct out *o, size_t n) { o->len += n; }

static inline void out_mem(struct out *o, const void *p, size_t n)
{
	if (n > o->cap / 2) { /* too big to buffer: write through */
		out_flush(o);
		extern void out_write_through(struct out *, const void *, size_t);
		out_write_through(o, p, n);
		return;
	}
	char *d = out_reserve(o, n);
	memcpy(d, p, n);
	o->len += n;
}

static inline void out_str(struct out *o, const char *s) { out_mem(o, s, strlen(s)); }

static inline void out_char(struct out *o, char c)
{
	char *d = out_reserve(o, 1);
	*d = c;
	o->len++;
}

static inline void out_u64(struct out *o, uint64_t v)
{
	char *d = out_reserve(o, 20);
	o->len += fmt_u64(d, v);
}

static inline void out_i64(struct out *o, int64_t v)
{
	char *d = out_reserve(o, 21);
	o->len += fmt_i64(d, v);
}

/* s (n bytes) as a quoted JSON string; bytes that are not UTF-8 become
 * U+FFFD. */
void out_json_string(struct out *o, const char *s, size_t n);

/* printf-style, for the cold paths only. */
void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
