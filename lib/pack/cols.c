/* The column transform of stream.obs blocks: events are split into a
 * header column (flags + MCV, 4 bytes each), a clock column (the step from
 * the previous clock as 4 byte planes, low bytes first; steps that do not
 * fit in 32 bits are 0xffffffff there and follow as u64 exceptions) and a
 * payload column, so that zstd sees alike bytes together. A normal event's
 * payload is stored as its difference (per 32-bit word, then per byte) to
 * the payload of the last event with the same flags and MCV in the block:
 * counters such as task ids become constants. Encoded block: u32 events, u32 clock
 * column size, u32 payload column size, u32 tail size, then the columns and
 * the tail (the bytes after the last whole event, verbatim). */
#include <string.h>

#include "base/event.h"
#include "pack/pack.h"

#define COLS_HEADER 16

/* Size of the event at p (n bytes available), or 0 if it is not a whole,
 * valid event. */
static size_t event_size(const uint8_t *p, size_t n)
{
	if (n < EV_HEADER_SIZE || (p[0] & EV_FLAG_RESERVED) || n < ev_head_size(p[0]))
		return 0;
	size_t size = ev_size(p);
	if ((p[0] & EV_FLAG_JUMBO) && size - EV_JUMBO_HEADER_SIZE > EV_MAX_JUMBO)
		return 0;
	return size <= n ? size : 0;
}

size_t pack_cols_cut(const uint8_t *buf, size_t n, size_t max)
{
	size_t pos = 0, sz;
	while ((sz = event_size(buf + pos, n - pos)) && (pos + sz <= max || pos == 0))
		pos += sz;
	if (pos == 0)
		return n < max ? n : max;
	return pos;
}

size_t pack_cols_bound(size_t n)
{
	return COLS_HEADER + 2 * n;
}

/* The last payload of each flags+MCV, in a small table; a collision just
 * replaces the slot (encoder and decoder do the same). */
#define LAST_SLOTS 256
struct last {
	uint32_t key[LAST_SLOTS];
	uint8_t pay[LAST_SLOTS][EV_MAX_PAYLOAD];
};

static inline uint8_t *last_of(struct last *l, const uint8_t hdr[4])
{
	uint32_t k;
	memcpy(&k, hdr, 4);
	uint32_t s = (k * 2654435761u) >> 24;
	if (l->key[s] != k) {
		l->key[s] = k;
		memset(l->pay[s], 0, EV_MAX_PAYLOAD);
	}
	return l->pay[s];
}

/* dst = cur - prev, then prev = cur. Fixed-size copies only: n is at
 * most 16 and a call to memcpy per event would cost more than the work. */
static inline void pay_diff(uint8_t *dst, const uint8_t *cur, uint8_t *prev, size_t n)
{
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		uint32_t a, b;
		memcpy(&a, cur + i, 4);
		memcpy(&b, prev + i, 4);
		memcpy(prev + i, &a, 4);
		a -= b;
		memcpy(dst + i, &a, 4);
	}
	for (; i < n; i++) {
		dst[i] = (uint8_t)(cur[i] - prev[i]);
		prev[i] = cur[i];
	}
}

/* dst = diff + prev, then prev = dst. */
static inline void pay_undiff(uint8_t *dst, const uint8_t *diff, uint8_t *prev, size_t n)
{
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		uint32_t a, b;
		memcpy(&a, diff + i, 4);
		memcpy(&b, prev + i, 4);
		a += b;
		memcpy(dst + i, &a, 4);
		memcpy(prev + i, &a, 4);
	}
	for (; i < n; i++)
		prev[i] = dst[i] = (uint8_t)(diff[i] + prev[i]);
}

#define CLOCK_ESCAPE 0xffffffffu /* the step is in the exception column */

size_t pack_cols_encode(const uint8_t *src, size_t n, uint8_t *dst)
{
	/* First pass: the column sizes, so the second writes each in place. */
	size_t pos = 0, nev = 0, nexc = 0, pay_len = 0, sz;
	uint64_t prev = 0, clock;
	while ((sz = event_size(src + pos, n - pos))) {
		memcpy(&clock, src + pos + 4, 8);
		nexc += clock - prev >= CLOCK_ESCAPE;
		prev = clock;
		pay_len += sz - EV_HEADER_SIZE;
		pos += sz;
		nev++;
	}
	size_t tail = n - pos, clk_len = 4 * nev + 8 * nexc;
	pack_put32(dst, (uint32_t)nev);
	pack_put32(dst + 4, (uint32_t)clk_len);
	pack_put32(dst + 8, (uint32_t)pay_len);
	pack_put32(dst + 12, (uint32_t)tail);
	uint8_t *hdr = dst + COLS_HEADER, *plane = hdr + 4 * nev, *exc = plane + 4 * nev;
	uint8_t *pay = exc + 8 * nexc;
	struct last last;
	memset(last.key, 0xff, sizeof(last.key)); /* no MCV has flags 0xff */
	prev = 0;
	pos = 0;
	for (size_t i = 0; i < nev; i++) {
		const uint8_t *e = src + pos;
		sz = event_size(e, n - pos);
		memcpy(hdr, e, 4);
		hdr += 4;
		memcpy(&clock, e + 4, 8);
		uint64_t step = clock - prev;
		prev = clock;
		if (step >= CLOCK_ESCAPE) {
			pack_put64(exc, step);
			exc += 8;
			step = CLOCK_ESCAPE;
		}
		for (int b = 0; b < 4; b++)
			plane[b * nev + i] = (uint8_t)(step >> (8 * b));
		if (e[0] & EV_FLAG_JUMBO)
			memcpy(pay, e + EV_HEADER_SIZE, sz - EV_HEADER_SIZE);
		else if (sz > EV_HEADER_SIZE)
			pay_diff(pay, e + EV_HEADER_SIZE, last_of(&last, e), sz - EV_HEADER_SIZE);
		pay += sz - EV_HEADER_SIZE;
		pos += sz;
	}
	memcpy(pay, src + pos, tail);
	return COLS_HEADER + 4 * nev + clk_len + pay_len + tail;
}

int pack_cols_decode(const uint8_t *src, size_t n, uint8_t *dst, size_t raw_size, const char **why)
{
	*why = "bad column sizes";
	if (n < COLS_HEADER)
		return -1;
	uint64_t nev = pack_get32(src), clk_len = pack_get32(src + 4);
	uint64_t pay_len = pack_get32(src + 8), tail = pack_get32(src + 12);
	if (COLS_HEADER + 4 * nev + clk_len + pay_len + tail != n || clk_len < 4 * nev || (clk_len - 4 * nev) % 8)
		return -1;
	const uint8_t *hdr = src + COLS_HEADER, *plane = hdr + 4 * nev, *exc = plane + 4 * nev;
	const uint8_t *exc_end = plane + clk_len, *pay = exc_end, *pay_end = pay + pay_len;
	uint8_t *out = dst, *out_end = dst + raw_size;
	uint64_t clock = 0;
	struct last last;
	memset(last.key, 0xff, sizeof(last.key));
	*why = "events do not fit the block";
	for (uint64_t i = 0; i < nev; i++, hdr += 4) {
		uint64_t step = (uint64_t)plane[i] | (uint64_t)plane[nev + i] << 8 | (uint64_t)plane[2 * nev + i] << 16 |
				(uint64_t)plane[3 * nev + i] << 24;
		if (step == CLOCK_ESCAPE) {
			if (exc == exc_end)
				return -1;
			step = pack_get64(exc);
			exc += 8;
		}
		clock += step;
		size_t psize;
		if (hdr[0] & EV_FLAG_JUMBO) {
			if (pay_end - pay < 4)
				return -1;
			uint32_t len;
			memcpy(&len, pay, 4);
			psize = 4 + (size_t)len;
		} else {
			psize = EV_PAYLOAD_SIZE(hdr[0] & 0x0f);
		}
		if ((size_t)(pay_end - pay) < psize || (size_t)(out_end - out) < EV_HEADER_SIZE + psize)
			return -1;
		memcpy(out, hdr, 4);
		memcpy(out + 4, &clock, 8);
		if (hdr[0] & EV_FLAG_JUMBO)
			memcpy(out + EV_HEADER_SIZE, pay, psize);
		else if (psize)
			pay_undiff(out + EV_HEADER_SIZE, pay, last_of(&last, hdr), psize);
		out += EV_HEADER_SIZE + psize;
		pay += psize;
	}
	if (exc != exc_end || pay != pay_end || (size_t)(out_end - out) != tail)
		return -1;
	memcpy(out, pay_end, tail);
	return 0;
}
