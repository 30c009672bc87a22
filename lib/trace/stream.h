/* stream.obs: the binary event stream of one thread (trace spec v3).
 * Header: "ovni" + u32 version 1. Event: u8 flags, 3 MCV bytes, u64 clock,
 * payload. Flags bits 0-3: payload size - 1 (0 = no payload); 0x10: jumbo,
 * then a u32 length N and N bytes. Host endianness. */
#ifndef OVNI_STREAM_H
#define OVNI_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define STREAM_MAGIC "ovni"
#define STREAM_VERSION 1
#define METADATA_VERSION 3
#define STREAM_HEADER_SIZE 8
#define EV_HEADER_SIZE 12
#define EV_FLAG_JUMBO 0x10
#define EV_FLAG_RESERVED 0xe0 /* bits 5-7: never set by a writer */
#define EV_JUMBO_HEADER_SIZE 16 /* header + the u32 length */
#define EV_MAX_PAYLOAD 16
#define EV_MAX_JUMBO (2u * 1024 * 1024) /* a jumbo event never exceeds the writer's buffer */

/* One decoded event; the pointers stay valid until the next sr_next(). */
struct ev {
	uint8_t flags;
	uint8_t mcv[3];
	uint64_t clock; /* raw, as written */
	const uint8_t *payload; /* bytes after the 12-byte header */
	uint32_t payload_size; /* normal: 0 or 2..16; jumbo: 4 + N (the length included) */
	uint32_t size; /* 12 + payload_size */
	uint64_t offset; /* byte offset of the event in stream.obs */
};

/* Where a stream's bytes come from: a file, or a member of a pack archive. */
struct byte_src {
	/* Reads up to n bytes; returns the count, 0 at the end, -1 on error
	 * (after printing a message naming the source). */
	ssize_t (*read)(struct byte_src *s, void *buf, size_t n);
	void (*close)(struct byte_src *s); /* also frees s */
	uint64_t size; /* total bytes if known, else UINT64_MAX */
};

/* A byte_src over a regular file opened read-only. Returns NULL after an
 * error message naming path. */
struct byte_src *byte_src_file(const char *path);
/* A byte_src over n bytes in memory (not copied; they must outlive it).
 * chunk > 0 limits every read to chunk bytes (tests of the refill path). */
struct byte_src *byte_src_mem(const void *data, size_t n, size_t chunk);

#define SR_UNSORTED 1u /* a backward clock is reported as a warning and reading goes on */
#define SR_QUIET 2u /* with SR_UNSORTED: no warning (the player reports the jump) */

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

/* Payload size of a normal event by flags (0..15): code c>0 means c+1 bytes. */
#define EV_PAYLOAD_SIZE(f) ((f) ? (uint32_t)(f) + 1 : 0u)

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
			ev->flags = p[0];
			memcpy(ev->mcv, p + 1, 3);
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

/* Writers (generators, the shim, sort). dst needs 12 + n bytes; n is 0 or
 * 2..16. Returns the event size. */
size_t ev_encode(uint8_t *dst, const char mcv[3], uint64_t clock, const void *payload, size_t n);
/* dst needs 16 + n bytes. */
size_t ev_encode_jumbo(uint8_t *dst, const char mcv[3], uint64_t clock, const void *data, uint32_t n);
void stream_header(uint8_t dst[STREAM_HEADER_SIZE]);

#endif
