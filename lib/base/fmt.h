/* Integer formatting without stdio, for the hot output paths. */
#ifndef OVNI_IO_FMT_H
#define OVNI_IO_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern const char fmt_digits2[200];
extern const char fmt_digits4[40000]; /* "0000" to "9999", no NULs */
extern const char fmt_hex2[512];

/* Writes v in decimal ending just before end, two digits at a time;
 * returns where it starts. */
static inline char *fmt_u64_back(char *end, uint64_t v)
{
	char *p = end;
	while (v >= 100) {
		p -= 2;
		memcpy(p, fmt_digits2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, fmt_digits2 + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

/* Writes v in decimal at dst (no NUL); returns the number of bytes (1..20). */
static inline size_t fmt_u64(char *dst, uint64_t v)
{
	char tmp[20];
	char *p = fmt_u64_back(tmp + 20, v);
	size_t n = (size_t)(tmp + 20 - p);
	memcpy(dst, p, n);
	return n;
}

static inline size_t fmt_i64(char *dst, int64_t v)
{
	if (v < 0) {
		*dst = '-';
		return 1 + fmt_u64(dst + 1, (uint64_t)0 - (uint64_t)v);
	}
	return fmt_u64(dst, (uint64_t)v);
}

/* The n bytes of tmp right-aligned in a field of at least width bytes of dst
 * (padded with c). */
static inline size_t fmt_pad(char *dst, const char *tmp, size_t n, size_t width, char c)
{
	size_t pad = n < width ? width - n : 0;
	memset(dst, c, pad);
	memcpy(dst + pad, tmp, n);
	return pad + n;
}

/* v right-aligned in a field of at least width bytes (padded with c). */
static inline size_t fmt_u64_pad(char *dst, uint64_t v, size_t width, char c)
{
	char tmp[20];
	return fmt_pad(dst, tmp, fmt_u64(tmp, v), width, c);
}

static inline size_t fmt_i64_pad(char *dst, int64_t v, size_t width, char c)
{
	char tmp[21];
	return fmt_pad(dst, tmp, fmt_i64(tmp, v), width, c);
}

/* s as one shell word on one line, malloc'd (NULL: out of memory): as it
 * is when no byte of it means something to a shell, else in single
 * quotes; control bytes show as '?'. For lines a user copies and runs. */
char *fmt_shell_word(const char *s);

#endif
