/* The range-coded clock column of version 3 (codec bit 2): each clock
 * step as a sign and bit length, coded with adaptive probabilities in the
 * context of the event's MCV, then the 3 bits below the leading one in the
 * context of MCV and length, then the rest as plain bits. Real programs'
 * steps are noise in their low bits, which zstd's byte planes pay in whole
 * bytes and this pays in bits; it costs some 100 ns an event, so the writer
 * tries it on small blocks only. The binary coder is the carry-less
 * LZMA-style one: 12-bit probabilities, 32-bit range, bytes high first. */
#include <stdlib.h>

#include "pack/pack.h"

#define PROB_BITS 12
#define PROB_ONE (1u << PROB_BITS)
#define PROB_MOVE 4 /* adaptation speed: a 16th of the way per bit, once a model has seen 3 bits */
#define PROB_MASK (PROB_ONE - 1) /* a model: the probability, and above it how many bits it saw (0 to 3) */
#define TOP_RANGE (1u << 24)
#define CTX_BITS 5 /* 32 MCV contexts; a collision only shares statistics */
#define LEN_SYMS 256 /* (bit length << 1 | sign) <= 129, as an 8-bit tree */
#define TOP_BITS 3

struct pack_rc_models {
	uint16_t len[1u << CTX_BITS][LEN_SYMS];
	uint16_t top[1u << CTX_BITS][65][1u << TOP_BITS];
};

struct pack_rc_models *pack_rc_models_new(void)
{
	struct pack_rc_models *m = malloc(sizeof(*m));
	if (!m)
		return NULL;
	uint16_t *p = &m->len[0][0];
	for (size_t i = 0; i < sizeof(*m) / sizeof(uint16_t); i++)
		p[i] = PROB_ONE / 2;
	return m;
}

static inline unsigned ctx_of(const uint8_t hdr[4])
{
	uint32_t k = (uint32_t)hdr[1] | (uint32_t)hdr[2] << 8 | (uint32_t)hdr[3] << 16;
	return (k * 2654435761u) >> (32 - CTX_BITS);
}

static inline void put_byte(struct pack_rc_enc *e, uint8_t b)
{
	if (e->first) /* the coder's first byte is always 0: left out */
		e->first = 0;
	else if (e->p < e->end)
		*e->p++ = b;
	else
		e->over = 1;
}

static void shift_low(struct pack_rc_enc *e)
{
	if ((uint32_t)e->low < 0xff000000u || (e->low >> 32)) {
		uint8_t carry = (uint8_t)(e->low >> 32), c = e->cache;
		do {
			put_byte(e, (uint8_t)(c + carry));
			c = 0xff;
		} while (--e->pending);
		e->cache = (uint8_t)((uint32_t)e->low >> 24);
	}
	e->pending++;
	e->low = (uint32_t)e->low << 8;
}

void pack_rc_enc_init(struct pack_rc_enc *e, uint8_t *dst, size_t cap)
{
	*e = (struct pack_rc_enc){ .range = 0xffffffffu, .pending = 1, .first = 1, .p = dst, .start = dst, .end = dst + cap };
}

/* The model after a bit: a young model moves a half, a quarter, an
 * eighth of the way, then PROB_MOVE; p never reaches 0 or PROB_ONE. */
static inline void adapt(uint16_t *model, unsigned bit)
{
	unsigned p = *model & PROB_MASK, seen = *model >> PROB_BITS;
	unsigned move = seen < 3 ? seen + 1 : PROB_MOVE;
	p = bit ? p - (p >> move) : p + ((PROB_ONE - p) >> move);
	*model = (uint16_t)(p | (seen < 3 ? seen + 1 : 3) << PROB_BITS);
}

static inline void enc_bit(struct pack_rc_enc *e, uint16_t *model, unsigned bit)
{
	uint32_t bound = (e->range >> PROB_BITS) * (*model & PROB_MASK);
	if (!bit) {
		e->range = bound;
	} else {
		e->low += bound;
		e->range -= bound;
	}
	adapt(model, bit);
	while (e->range < TOP_RANGE) {
		e->range <<= 8;
		shift_low(e);
	}
}

static inline void enc_direct(struct pack_rc_enc *e, uint64_t v, unsigned n)
{
	while (n--) {
		e->range >>= 1;
		if ((v >> n) & 1)
			e->low += e->range;
		while (e->range < TOP_RANGE) {
			e->range <<= 8;
			shift_low(e);
		}
	}
}

static inline unsigned bit_length(uint64_t a)
{
	return a ? 64 - (unsigned)__builtin_clzll(a) : 0;
}

void pack_rc_put_step(struct pack_rc_enc *e, struct pack_rc_models *m, const uint8_t hdr[4], uint64_t step)
{
	unsigned c = ctx_of(hdr), neg = (int64_t)step < 0;
	uint64_t a = neg ? 0 - step : step;
	unsigned len = bit_length(a), sym = len << 1 | neg, node = 1;
	for (int i = 7; i >= 0; i--) {
		unsigned b = (sym >> i) & 1;
		enc_bit(e, &m->len[c][node], b);
		node = node << 1 | b;
	}
	if (len < 2)
		return;
	unsigned k = len - 1 < TOP_BITS ? len - 1 : TOP_BITS;
	node = 1;
	for (unsigned i = 0; i < k; i++) {
		unsigned b = (unsigned)(a >> (len - 2 - i)) & 1;
		enc_bit(e, &m->top[c][len][node], b);
		node = node << 1 | b;
	}
	enc_direct(e, a, len - 1 - k);
}

size_t pack_rc_enc_end(struct pack_rc_enc *e)
{
	for (int i = 0; i < 5; i++)
		shift_low(e);
	return e->over ? 0 : (size_t)(e->p - e->start);
}

static inline uint8_t get_byte(struct pack_rc_dec *d)
{
	if (d->p < d->end)
		return *d->p++;
	d->over++; /* past the end: zeros, and the caller refuses the block */
	return 0;
}

void pack_rc_dec_init(struct pack_rc_dec *d, const uint8_t *src, size_t n)
{
	*d = (struct pack_rc_dec){ .range = 0xffffffffu, .p = src, .end = src + n };
	for (int i = 0; i < 4; i++)
		d->code = d->code << 8 | get_byte(d);
}

static inline unsigned dec_bit(struct pack_rc_dec *d, uint16_t *model)
{
	uint32_t bound = (d->range >> PROB_BITS) * (*model & PROB_MASK);
	unsigned bit = d->code >= bound;
	if (!bit) {
		d->range = bound;
	} else {
		d->code -= bound;
		d->range -= bound;
	}
	adapt(model, bit);
	while (d->range < TOP_RANGE) {
		d->range <<= 8;
		d->code = d->code << 8 | get_byte(d);
	}
	return bit;
}

static inline uint64_t dec_direct(struct pack_rc_dec *d, uint64_t v, unsigned n)
{
	while (n--) {
		d->range >>= 1;
		unsigned b = d->code >= d->range;
		d->code -= b ? d->range : 0;
		v = v << 1 | b;
		while (d->range < TOP_RANGE) {
			d->range <<= 8;
			d->code = d->code << 8 | get_byte(d);
		}
	}
	return v;
}

int pack_rc_get_step(struct pack_rc_dec *d, struct pack_rc_models *m, const uint8_t hdr[4], uint64_t *step)
{
	unsigned c = ctx_of(hdr), node = 1;
	for (int i = 0; i < 8; i++)
		node = node << 1 | dec_bit(d, &m->len[c][node]);
	unsigned sym = node & 0xff, len = sym >> 1;
	if (len > 64 || (len == 0 && (sym & 1)))
		return -1;
	uint64_t a = len != 0;
	if (len >= 2) {
		unsigned k = len - 1 < TOP_BITS ? len - 1 : TOP_BITS;
		node = 1;
		for (unsigned i = 0; i < k; i++)
			node = node << 1 | dec_bit(d, &m->top[c][len][node]);
		a = dec_direct(d, node, len - 1 - k); /* node holds the leading one and the top bits */
	}
	*step = sym & 1 ? 0 - a : a;
	return 0;
}

/* Bytes read past the end are zeros; the encoder's flush makes at most 0. */
int pack_rc_dec_ok(const struct pack_rc_dec *d)
{
	return d->over == 0;
}
