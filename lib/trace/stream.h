/* stream.obs readers: events in order, checked, with messages that name
 * the stream and the byte offset (framing in base/event.h). */
#ifndef OVNI_STREAM_H
#define OVNI_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "base/bytes.h"
#include "base/event.h"

#define SR_UNSORTED 1u /* a backward clock is reported as a warning and reading goes on */
#define SR_QUIET 2u /* with SR_UNSORTED: no warning (the player reports the jump) */

/* Beside a stream.obs, the journal of an `ovni sort` that has not finished
 * writing it (lib/sort/file.c): readers refuse such a stream. */
#define STREAM_JOURNAL_SUFFIX ".sort-journal"

#define SR_BUF_SIZE (128u * 1024) /* initial read buffer of every stream */

struct stream_reader {
	const char *name; /* shown in messages (relative path of stream.obs) */
	struct byte_src *src;
	uint8_t *buf;
	size_t cap, pos, end; /* valid bytes are buf[pos, end) */
	uint64_t base; /* stream offset of buf[0] */
	uint64_t last_clock;
	unsigned flags;
	int eof;
	uint64_t nbackwards; /* backward clocks seen (SR_UNSORTED) */
};

/* Reads and checks the header. Returns 0, or -1 after a message naming the
 * file and offset (empty file, truncated header, wrong magic or version).
 * A header with no events is fine: sr_next() then returns 0. The reader
 * owns src from now on; when sr_open fails src is already closed, and
 * sr_close(r) is still safe. */
int sr_open(struct stream_reader *r, struct byte_src *src, const char *name, unsigned flags);
/* The general case of sr_next: refills, jumbo events, errors. */
int sr_next_slow(struct stream_reader *r, struct ev *ev);
void sr_close(struct stream_reader *r);

/* 1 = *ev holds the next event, 0 = clean end, -1 = error reported
 * (event cut at end of file, impossible flags, jumbo past the end,
 * clock going backwards unless SR_UNSORTED). Inline: the common case is a
 * normal event already in the buffer with a clock that does not go back. */
static inline int sr_next(struct stream_reader *r, struct ev *ev)
{
	size_t avail = r->end - r->pos;
	if (avail >= EV_HEADER_SIZE) {
		const uint8_t *p = r->buf + r->pos;
		uint32_t psize = EV_PAYLOAD_SIZE(p[0]);
		uint64_t clock;
		memcpy(&clock, p + 4, 8);
		if (p[0] < EV_FLAG_JUMBO && EV_HEADER_SIZE + psize <= avail &&
		    clock >= r->last_clock) {
			memcpy(&ev->flags, p, 4); /* flags and mcv[3], laid out as in the header */
			ev->clock = clock;
			ev->payload = p + EV_HEADER_SIZE;
			ev->payload_size = psize;
			ev->size = EV_HEADER_SIZE + psize;
			ev->offset = r->base + r->pos;
			r->pos += EV_HEADER_SIZE + psize;
			r->last_clock = clock;
			return 1;
		}
	}
	return sr_next_slow(r, ev);
}

#endif
