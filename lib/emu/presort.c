#include "emu/presort.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/msg.h"
#include "sort/sort.h"

#define MIB (1024.0 * 1024.0)

/* Moves r past the whole normal events in its buffer whose clocks do not
 * go back, without decoding them: the scan reads every event of the trace
 * once more before the emulation. sr_next() then takes the event it
 * stopped at (a refill, a jumbo event, a backward clock, an error). */
static void skip_in_order(struct stream_reader *r)
{
	const uint8_t *p = r->buf + r->pos, *end = r->buf + r->end;
	uint64_t last = r->last_clock;
	while (end - p >= EV_HEADER_SIZE && p[0] < EV_FLAG_JUMBO) {
		size_t n = ev_size(p);
		uint64_t clock = ev_clock(p);
		if ((size_t)(end - p) < n || clock < last)
			break;
		last = clock;
		p += n;
	}
	r->pos = (size_t)(p - r->buf);
	r->last_clock = last;
}

/* Reads stream i up to its first backward clock: 1 found (*back = its
 * offset, *size = stream bytes), 0 in order, -1 after a message. */
static int find_backward(struct trace *t, size_t i, uint64_t *back, uint64_t *size)
{
	struct byte_src *src = trace_stream_src(t, i);
	struct stream_reader r;
	if (!src || sr_open(&r, src, t->streams[i].obs_name, SR_UNSORTED | SR_QUIET) != 0)
		return -1;
	*size = src->size;
	struct ev ev;
	int rc;
	do {
		skip_in_order(&r);
	} while ((rc = sr_next(&r, &ev)) == 1 && r.nbackwards == 0);
	if (rc == 1)
		*back = ev.offset;
	sr_close(&r);
	return rc;
}

/* How a message ends: "; run `ovni sort ROOT` first" (first) or
 * "; `ovni sort ROOT` sorts it for good", ROOT quoted for a shell; nothing
 * without a root. */
static const char *advice(const struct presort *p, int first, char *buf, size_t n)
{
	char *w = p->root ? fmt_shell_word(p->root) : NULL;
	if (!w)
		return "";
	snprintf(buf, n, first ? "; run `ovni sort %s` first" : "; `ovni sort %s` sorts it for good", w);
	free(w);
	return buf;
}

/* The whole stream in a buffer of *len bytes. NULL after a message. */
static uint8_t *load(const struct presort *p, struct trace *t, size_t i, size_t *len)
{
	const char *name = t->streams[i].obs_name;
	struct byte_src *src = trace_stream_src(t, i);
	if (!src)
		return NULL;
	size_t cap = src->size != UINT64_MAX && src->size < SIZE_MAX ? (size_t)src->size + 1 : 1u << 20;
	size_t n = 0;
	uint8_t *buf = malloc(cap);
	for (ssize_t got = 1; buf && got > 0;) {
		if (n == cap) {
			uint8_t *b = cap < SIZE_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		got = src->read(src, buf + n, cap - n);
		if (got < 0) {
			src->close(src);
			free(buf);
			return NULL;
		}
		n += (size_t)got;
		if (got == 0) {
			src->close(src);
			*len = n;
			return buf;
		}
	}
	src->close(src);
	free(buf);
	char a[4200];
	msg_err("%s: out of memory to sort its unordered regions in memory%s", name, advice(p, 1, a, sizeof(a)));
	return NULL;
}

static struct byte_src *refuse(struct presort *p, struct trace *t, size_t i, uint64_t back, uint64_t size)
{
	const char *name = t->streams[i].obs_name;
	char a[4200];
	if (p->limit == 0)
		msg_err("%s: offset %" PRIu64 ": the clock goes back (unordered regions OU[ ... OU] not sorted "
			"yet, and --sort-mem 0 forbids sorting them in memory)%s",
			name, back, advice(p, 1, a, sizeof(a)));
	else
		msg_err("%s: offset %" PRIu64 ": the clock goes back (unordered regions OU[ ... OU] not sorted "
			"yet); sorting in memory would hold %.0f MiB, over --sort-mem %.0f%s",
			name, back, (double)(p->used + size) / MIB, (double)p->limit / MIB, advice(p, 1, a, sizeof(a)));
	return NULL;
}

void presort_report(const struct presort *p)
{
	char a[4200];
	if (p->nsorted > PRESORT_NAMED)
		msg_info("%zu streams in all sorted in memory, %.1f MiB (the trace is unchanged%s)", p->nsorted,
			 (double)p->used / MIB, advice(p, 0, a, sizeof(a)));
}

struct byte_src *presort_src(struct presort *p, struct trace *t, size_t i)
{
	uint64_t back = 0, size = 0;
	int r = find_backward(t, i, &back, &size);
	if (r < 0)
		return NULL;
	if (r == 0)
		return trace_stream_src(t, i);
	if (size == UINT64_MAX || p->used + size > p->limit)
		return refuse(p, t, i, back, size);
	size_t len = 0;
	uint8_t *buf = load(p, t, i, &len);
	if (!buf)
		return NULL;
	const char *name = t->streams[i].obs_name;
	struct sort_stats st;
	struct sort_opts o = { .name = name };
	if (len < STREAM_HEADER_SIZE ||
	    sort_mem(buf + STREAM_HEADER_SIZE, len - STREAM_HEADER_SIZE, STREAM_HEADER_SIZE, &o, &st) != 0) {
		free(buf);
		return NULL;
	}
	if (!st.changed) { /* not a region's doing: the player reports it */
		free(buf);
		return trace_stream_src(t, i);
	}
	p->used += len;
	p->nsorted++;
	char a[4200];
	if (p->nsorted <= PRESORT_NAMED)
		msg_info("%s: %" PRIu64 " unordered region%s sorted in memory (the trace is unchanged%s)", name,
			 st.regions, st.regions == 1 ? "" : "s", advice(p, 0, a, sizeof(a)));
	return byte_src_mem_owned(buf, len);
}
