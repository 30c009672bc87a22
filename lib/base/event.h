/* The framing of stream.obs (trace spec v3), the one definition every
 * reader and writer uses. Header: "ovni" + u32 version 1. Event: u8 flags,
 * 3 MCV bytes, u64 clock, payload. Flags bits 0-3: payload size - 1 (0 = no
 * payload); 0x10: jumbo, then a u32 length N and N bytes. Host endianness. */
#ifndef OVNI_BASE_EVENT_H
#define OVNI_BASE_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Payload size of a normal event by flags (0..15): code c>0 means c+1 bytes. */
#define EV_PAYLOAD_SIZE(f) ((f) ? (uint32_t)(f) + 1 : 0u)

/* Bytes needed to know an event's size: its header, or a jumbo's with the
 * u32 length. */
static inline size_t ev_head_size(uint8_t flags)
{
	return flags & EV_FLAG_JUMBO ? EV_JUMBO_HEADER_SIZE : EV_HEADER_SIZE;
}

/* Size of the event at p, of which ev_head_size(p[0]) bytes are there. */
static inline size_t ev_size(const uint8_t *p)
{
	if (!(p[0] & EV_FLAG_JUMBO))
		return EV_HEADER_SIZE + EV_PAYLOAD_SIZE(p[0] & 0x0fu);
	uint32_t n;
	memcpy(&n, p + EV_HEADER_SIZE, 4);
	return EV_JUMBO_HEADER_SIZE + (size_t)n;
}

/* The clock of the event at p. */
static inline uint64_t ev_clock(const uint8_t *p)
{
	uint64_t c;
	memcpy(&c, p + 4, 8);
	return c;
}

/* A walk over what a writer left in a stream that may have been cut (a
 * crash, a kill): whole events from the header on, up to the first byte
 * that cannot start one (the zero bytes after the last event of a mapped
 * stream, a torn write) or a clock going back outside OU[ ... OU]. */
struct ev_walk {
	const uint8_t *p;
	uint64_t size;
	uint64_t off; /* where the next event begins; at the end, where the events end */
	uint64_t last_clock; /* the highest clock so far */
	int unordered; /* inside OU[ ... OU] */
};

static inline void ev_walk_init(struct ev_walk *w, const uint8_t *p, uint64_t size)
{
	*w = (struct ev_walk){ .p = p, .size = size, .off = STREAM_HEADER_SIZE };
}

/* The next whole event, or NULL at the end of what was written. */
static inline const uint8_t *ev_walk_next(struct ev_walk *w)
{
	if (w->off + EV_HEADER_SIZE > w->size)
		return NULL;
	const uint8_t *e = w->p + w->off;
	if ((e[0] & EV_FLAG_RESERVED) || e[1] < 0x21 || e[1] > 0x7e || e[2] < 0x21 || e[2] > 0x7e)
		return NULL;
	uint64_t clock = ev_clock(e);
	if (clock < w->last_clock && !w->unordered)
		return NULL;
	if (w->off + ev_head_size(e[0]) > w->size || w->off + ev_size(e) > w->size)
		return NULL;
	if (e[1] == 'O' && e[2] == 'U')
		w->unordered = e[3] == '[';
	if (clock > w->last_clock)
		w->last_clock = clock;
	w->off += ev_size(e);
	return e;
}

/* Skips whole plain events from off, stopping at the first one that is an
 * OU event (model 'O', category 'U'), a jumbo, or does not end before end,
 * or after max events; *n counts the events skipped. Returns where it
 * stopped. For scans that only look for the OU[ ... OU] markers (sort):
 * the flags and MCV of four events are tested at once when all four are
 * 12 bytes, the common case, to shorten the chain of dependent loads. */
#define EV_SKIP_AHEAD 2048 /* bytes: a few pages ahead of the scan */

static inline uint64_t ev_skip(const uint8_t *p, uint64_t off, uint64_t end, uint64_t max, uint64_t *n)
{
	const uint32_t ou = (uint32_t)'O' << 8 | (uint32_t)'U' << 16;
	uint64_t k = 0;
	while (off + 4 * EV_HEADER_SIZE <= end && k + 4 <= max) {
		/* the loads stall on memory otherwise: this loop outruns the
		 * hardware prefetcher, which stops at page ends (never faults) */
		__builtin_prefetch(p + off + EV_SKIP_AHEAD);
		uint32_t w[4];
		for (int i = 0; i < 4; i++)
			memcpy(&w[i], p + off + (size_t)i * EV_HEADER_SIZE, 4);
		if (((w[0] | w[1] | w[2] | w[3]) & 0x1f) == 0 && (w[0] & 0xffff00) != ou &&
		    (w[1] & 0xffff00) != ou && (w[2] & 0xffff00) != ou && (w[3] & 0xffff00) != ou) {
			off += 4 * EV_HEADER_SIZE;
			k += 4;
			continue;
		}
		if ((w[0] & EV_FLAG_JUMBO) || (w[0] & 0xffff00) == ou)
			break;
		off += EV_HEADER_SIZE + EV_PAYLOAD_SIZE(w[0] & 0x0fu);
		k++;
	}
	while (off + EV_HEADER_SIZE + EV_MAX_PAYLOAD <= end && k < max) {
		const uint8_t *e = p + off;
		if ((e[0] & EV_FLAG_JUMBO) || (e[1] == 'O' && e[2] == 'U'))
			break;
		off += EV_HEADER_SIZE + EV_PAYLOAD_SIZE(e[0] & 0x0fu);
		k++;
	}
	*n += k;
	return off;
}

/* Writers (generators, the shim, sort). dst needs 12 + n bytes; n is 0 or
 * 2..16. Returns the event size. */
static inline size_t ev_encode(uint8_t *dst, const char mcv[3], uint64_t clock, const void *payload, size_t n)
{
	dst[0] = n ? (uint8_t)(n - 1) : 0;
	memcpy(dst + 1, mcv, 3);
	memcpy(dst + 4, &clock, 8);
	if (n)
		memcpy(dst + EV_HEADER_SIZE, payload, n);
	return EV_HEADER_SIZE + n;
}
/* dst needs 16 + n bytes. */
static inline size_t ev_encode_jumbo(uint8_t *dst, const char mcv[3], uint64_t clock, const void *data, uint32_t n)
{
	dst[0] = EV_FLAG_JUMBO | 3; /* the size code of the u32 length, as the reference writes it */
	memcpy(dst + 1, mcv, 3);
	memcpy(dst + 4, &clock, 8);
	memcpy(dst + EV_HEADER_SIZE, &n, 4);
	if (n)
		memcpy(dst + EV_JUMBO_HEADER_SIZE, data, n);
	return EV_JUMBO_HEADER_SIZE + (size_t)n;
}

static inline void stream_header(uint8_t dst[STREAM_HEADER_SIZE])
{
	uint32_t version = STREAM_VERSION;
	memcpy(dst, STREAM_MAGIC, 4);
	memcpy(dst + 4, &version, 4);
}

#endif
