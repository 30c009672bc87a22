/* Helpers for the stream and player tests: build streams in memory and
 * capture what the library prints on stderr. */
#ifndef OVNI_TEST_TSTREAM_H
#define OVNI_TEST_TSTREAM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/stream.h"

struct membuf {
	uint8_t *data;
	size_t len, cap;
};

static inline void mb_need(struct membuf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	b->cap = (b->len + n) * 2;
	b->data = realloc(b->data, b->cap);
	if (!b->data)
		abort();
}

static inline void mb_bytes(struct membuf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	mb_need(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void mb_header(struct membuf *b)
{
	uint8_t h[STREAM_HEADER_SIZE];
	stream_header(h);
	mb_bytes(b, h, sizeof(h));
}

static inline void mb_ev(struct membuf *b, const char *mcv, uint64_t clock, const void *payload, size_t n)
{
	mb_need(b, EV_HEADER_SIZE + n);
	b->len += ev_encode(b->data + b->len, mcv, clock, payload, n);
}

static inline void mb_jumbo(struct membuf *b, const char *mcv, uint64_t clock, const void *data, uint32_t n)
{
	mb_need(b, EV_JUMBO_HEADER_SIZE + n);
	b->len += ev_encode_jumbo(b->data + b->len, mcv, clock, data, n);
}

static FILE *cap_file;
static int cap_saved = -1;
static char cap_text[8192];

/* Everything written to fd 2 until cap_end() goes to cap_text. */
static inline void cap_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	if (!cap_file)
		abort();
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

static inline const char *cap_end(void)
{
	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	size_t n = fread(cap_text, 1, sizeof(cap_text) - 1, cap_file);
	cap_text[n] = '\0';
	fclose(cap_file);
	return cap_text;
}

static inline int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* After a failed check, shows what was printed. */
static inline void show(int ok, const char *text)
{
	if (!ok)
		printf("#   stderr: %s", text);
}

#endif
