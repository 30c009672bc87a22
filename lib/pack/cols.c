/* The column transform of stream.obs bytes: events are split into a
 * header column (flags + MCV, 4 bytes each), a clock column (the step from
 * the previous clock as 4 byte planes, low bytes first; steps that do not
 * fit in 32 bits are 0xffffffff there and follow as u64 exceptions) and a
 * payload column, so that zstd sees alike bytes together. A normal event's
 * payload is stored as its difference (per 32-bit word, then per byte) to
 * the payload of the last event with the same flags and MCV in the block:
 * counters such as task ids become constants. A block holds segments (a
 * stretch of one member each); the events of every stream segment share
 * the columns, and the bytes that are not events (stream headers, cut
 * events, other files) follow verbatim. Encoded block: u32 events, u32
 * clock column size, u32 payload column size, u32 verbatim size, u32
 * events of each stream segment (version 2), the columns, the verbatim
 * bytes. Version 1 had one segment and unsigned clock steps; version 2
 * steps are signed (two's complement in the 32 bits, sign-extended), as
 * kernel events step back. Version 3 keeps two clocks: kernel events
 * (model K) step from the last kernel event of the block, the others from
 * the last other event, since a thread reads its kernel events late: they
 * land between OU[ and OU] with clocks before OU[, and in order among
 * themselves (the first kernel event steps from the other clock). */
#include <stdlib.h>
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

size_t pack_cols_bound(size_t n, size_t nseg)
{
	return COLS_HEADER + 4 * nseg + 2 * n + 8; /* 8: the range coder's flush */
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

/* The clocks steps are taken from: one before version 3, two after. */
struct clocks {
	uint64_t other, kernel;
	int kernel_seen, two;
};

/* The clock the event with header hdr steps from (and that it replaces). */
static inline uint64_t *clock_ref(struct clocks *c, const uint8_t *hdr)
{
	if (!c->two || hdr[1] != 'K')
		return &c->other;
	if (!c->kernel_seen) {
		c->kernel_seen = 1;
		c->kernel = c->other;
	}
	return &c->kernel;
}

/* A signed step goes in the planes if it fits in 32 bits and is not the escape. */
static inline int step_fits(uint64_t step)
{
	return (int64_t)step == (int64_t)(int32_t)(uint32_t)step && (uint32_t)step != CLOCK_ESCAPE;
}

size_t pack_cols_encode(const uint8_t *src, const struct pack_seg *seg, size_t nseg, uint8_t *dst, int rc)
{
	/* First pass: the column sizes, so the second writes each in place;
	 * each stream segment's event count goes in place at once. */
	size_t nev = 0, nexc = 0, pay_len = 0, verb = 0, off = 0, sz;
	uint8_t *counts = dst + COLS_HEADER;
	uint64_t clock;
	struct clocks ck = { .two = 1 };
	for (size_t s = 0; s < nseg; off += seg[s++].len) {
		if (!seg[s].stream) {
			verb += seg[s].len;
			continue;
		}
		size_t pos = off + seg[s].head, end = off + seg[s].len, k = 0;
		while ((sz = event_size(src + pos, end - pos))) {
			memcpy(&clock, src + pos + 4, 8);
			uint64_t *ref = clock_ref(&ck, src + pos);
			nexc += !step_fits(clock - *ref);
			*ref = clock;
			pay_len += sz - EV_HEADER_SIZE;
			pos += sz;
			k++;
		}
		verb += seg[s].head + (end - pos);
		nev += k;
		pack_put32(counts, (uint32_t)k);
		counts += 4;
	}
	size_t clk_len = rc ? 0 : 4 * nev + 8 * nexc, n = off;
	pack_put32(dst, (uint32_t)nev);
	pack_put32(dst + 8, (uint32_t)pay_len);
	pack_put32(dst + 12, (uint32_t)verb);
	uint8_t *hdr = counts, *plane = hdr + 4 * nev;
	uint8_t *exc = plane + (rc ? 0 : 4 * nev), *pay = plane + clk_len, *raw = pay + pay_len;
	/* Range-coded, the clock column goes last: its size is known at the end. */
	struct pack_rc_enc enc;
	struct pack_rc_models *models = rc ? pack_rc_models_new() : NULL;
	if (rc && !models)
		return 0;
	uint8_t *clk = raw + verb;
	pack_rc_enc_init(&enc, clk, (size_t)(dst + pack_cols_bound(n, nseg) - clk));
	struct last last;
	memset(last.key, 0xff, sizeof(last.key)); /* no MCV has flags 0xff */
	ck = (struct clocks){ .two = 1 };
	off = 0;
	counts = dst + COLS_HEADER;
	size_t i = 0;
	for (size_t s = 0; s < nseg; off += seg[s++].len) {
		const uint8_t *p = src + off, *end = p + seg[s].len;
		if (!seg[s].stream) {
			memcpy(raw, p, seg[s].len);
			raw += seg[s].len;
			continue;
		}
		memcpy(raw, p, seg[s].head);
		raw += seg[s].head;
		p += seg[s].head;
		size_t k = pack_get32(counts);
		counts += 4;
		for (size_t last_ev = i + k; i < last_ev; i++) {
			sz = ev_size(p);
			memcpy(hdr, p, 4);
			hdr += 4;
			memcpy(&clock, p + 4, 8);
			uint64_t *ref = clock_ref(&ck, p), step = clock - *ref;
			*ref = clock;
			if (rc) {
				pack_rc_put_step(&enc, models, p, step);
			} else if (!step_fits(step)) {
				pack_put64(exc, step);
				exc += 8;
				step = CLOCK_ESCAPE;
			}
			for (int b = 0; b < 4 && !rc; b++)
				plane[b * nev + i] = (uint8_t)(step >> (8 * b));
			if (p[0] & EV_FLAG_JUMBO)
				memcpy(pay, p + EV_HEADER_SIZE, sz - EV_HEADER_SIZE);
			else if (sz > EV_HEADER_SIZE)
				pay_diff(pay, p + EV_HEADER_SIZE, last_of(&last, p), sz - EV_HEADER_SIZE);
			pay += sz - EV_HEADER_SIZE;
			p += sz;
		}
		memcpy(raw, p, (size_t)(end - p));
		raw += end - p;
	}
	if (rc) {
		free(models);
		if (!(clk_len = pack_rc_enc_end(&enc)))
			return 0;
		raw += clk_len;
	}
	pack_put32(dst + 4, (uint32_t)clk_len);
	return (size_t)(raw - dst);
}

void pack_cols_columns(const uint8_t *enc, size_t nstream, size_t at[4])
{
	at[0] = COLS_HEADER + 4 * nstream;
	at[1] = at[0] + 4 * (size_t)pack_get32(enc);
	at[2] = at[1] + pack_get32(enc + 4);
	at[3] = at[2] + pack_get32(enc + 8);
}

/* The columns of an encoded block, as decoding goes through them. */
struct cols_in {
	const uint8_t *counts, *hdr, *plane, *exc, *exc_end, *pay, *pay_end, *raw, *raw_end;
	uint64_t nev;
};

/* The next event's clock step: from the range coder, or the planes. */
static inline int next_step(struct cols_in *c, struct pack_rc_dec *dec, struct pack_rc_models *models, uint64_t i,
			    int v1, uint64_t *step)
{
	if (dec)
		return pack_rc_get_step(dec, models, c->hdr, step);
	const uint8_t *plane = c->plane;
	uint64_t nev = c->nev;
	*step = (uint64_t)plane[i] | (uint64_t)plane[nev + i] << 8 | (uint64_t)plane[2 * nev + i] << 16 |
		(uint64_t)plane[3 * nev + i] << 24;
	if (*step == CLOCK_ESCAPE) {
		if (c->exc == c->exc_end)
			return -1;
		*step = pack_get64(c->exc);
		c->exc += 8;
	} else if (!v1) { /* sign-extended */
		*step = (uint64_t)(int64_t)(int32_t)(uint32_t)*step;
	}
	return 0;
}

static int decode_events(struct cols_in *c, const struct pack_seg *seg, size_t nseg, unsigned version,
			 struct pack_rc_dec *dec, struct pack_rc_models *models, uint8_t *dst, size_t raw_size,
			 const char **why)
{
	int v1 = version == 1;
	uint64_t nev = c->nev;
	const uint8_t *counts = c->counts, *pay = c->pay, *pay_end = c->pay_end, *raw = c->raw, *raw_end = c->raw_end;
	uint8_t *out = dst, *out_end = dst + raw_size;
	uint64_t i = 0;
	struct clocks ck = { .two = version >= 3 };
	struct last last;
	memset(last.key, 0xff, sizeof(last.key));
	*why = "events do not fit the block";
	for (size_t s = 0; s < nseg; s++) {
		if ((size_t)(out_end - out) < seg[s].len || seg[s].head > seg[s].len)
			return -1;
		uint8_t *seg_end = out + seg[s].len;
		size_t head = seg[s].stream ? seg[s].head : seg[s].len;
		if ((size_t)(raw_end - raw) < head)
			return -1;
		memcpy(out, raw, head);
		out += head;
		raw += head;
		if (!seg[s].stream)
			continue;
		uint64_t k = v1 ? nev : pack_get32(counts);
		counts += 4;
		if (k > nev - i)
			return -1;
		for (uint64_t last_ev = i + k; i < last_ev; i++, c->hdr += 4) {
			const uint8_t *hdr = c->hdr;
			uint64_t step;
			if (next_step(c, dec, models, i, v1, &step) < 0)
				return -1;
			uint64_t *ref = clock_ref(&ck, hdr), clock = *ref += step;
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
			if ((size_t)(pay_end - pay) < psize || (size_t)(seg_end - out) < EV_HEADER_SIZE + psize)
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
		size_t tail = (size_t)(seg_end - out);
		if ((size_t)(raw_end - raw) < tail)
			return -1;
		memcpy(out, raw, tail);
		out += tail;
		raw += tail;
	}
	if (i != nev || c->exc != c->exc_end || pay != pay_end || raw != raw_end || out != out_end)
		return -1;
	return 0;
}

int pack_cols_decode(const uint8_t *src, size_t n, const struct pack_seg *seg, size_t nseg, unsigned version, int rc,
		     uint8_t *dst, size_t raw_size, const char **why)
{
	int v1 = version == 1;
	*why = "bad column sizes";
	if (n < COLS_HEADER)
		return -1;
	uint64_t nev = pack_get32(src), clk_len = pack_get32(src + 4);
	uint64_t pay_len = pack_get32(src + 8), verb = pack_get32(src + 12), nstream = 0;
	for (size_t s = 0; s < nseg && !v1; s++)
		nstream += seg[s].stream;
	if (COLS_HEADER + 4 * nstream + 4 * nev + clk_len + pay_len + verb != n ||
	    (!rc && (clk_len < 4 * nev || (clk_len - 4 * nev) % 8)))
		return -1;
	const uint8_t *counts = src + COLS_HEADER, *hdr = counts + 4 * nstream, *plane = hdr + 4 * nev;
	const uint8_t *exc = plane + 4 * nev, *exc_end = plane + clk_len, *pay = exc_end, *pay_end = pay + pay_len;
	const uint8_t *raw = pay_end, *raw_end = raw + verb;
	if (rc) { /* the range-coded clock column is last */
		exc = exc_end = pay = plane;
		pay_end = pay + pay_len;
		raw = pay_end;
		raw_end = raw + verb;
	}
	struct pack_rc_dec dec;
	pack_rc_dec_init(&dec, raw_end, rc ? clk_len : 0);
	struct pack_rc_models *models = rc ? pack_rc_models_new() : NULL;
	*why = "out of memory";
	if (rc && !models)
		return -1;
	int r = decode_events(&(struct cols_in){ counts, hdr, plane, exc, exc_end, pay, pay_end, raw, raw_end, nev },
			      seg, nseg, version, rc ? &dec : NULL, models, dst, raw_size, why);
	free(models);
	if (r == 0 && rc && !pack_rc_dec_ok(&dec)) {
		*why = "bad clock column";
		return -1;
	}
	return r;
}
