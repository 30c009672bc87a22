#include "base/labelhash.h"

#include <string.h>

/* The lookup2 mixing step: every bit of a, b and c affects the others. */
#define MIX(a, b, c) do { \
	a -= b; a -= c; a ^= (c >> 13); \
	b -= c; b -= a; b ^= (a << 8); \
	c -= a; c -= b; c ^= (b >> 13); \
	a -= b; a -= c; a ^= (c >> 12); \
	b -= c; b -= a; b ^= (a << 16); \
	c -= a; c -= b; c ^= (b >> 5); \
	a -= b; a -= c; a ^= (c >> 3); \
	b -= c; b -= a; b ^= (a << 10); \
	c -= a; c -= b; c ^= (b >> 15); \
} while (0)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t labelhash_jenkins(const void *key, size_t len)
{
	const uint8_t *k = key;
	uint32_t a = 0x9e3779b9u, b = 0x9e3779b9u, c = 0xfeedbeefu;
	size_t left = len;
	for (; left >= 12; left -= 12, k += 12) {
		a += le32(k);
		b += le32(k + 4);
		c += le32(k + 8);
		MIX(a, b, c);
	}
	c += (uint32_t)len;
	/* The last 0..11 bytes; c's low byte is taken by the length. */
	switch (left) {
	case 11: c += (uint32_t)k[10] << 24; /* fall through */
	case 10: c += (uint32_t)k[9] << 16; /* fall through */
	case 9: c += (uint32_t)k[8] << 8; /* fall through */
	case 8: b += (uint32_t)k[7] << 24; /* fall through */
	case 7: b += (uint32_t)k[6] << 16; /* fall through */
	case 6: b += (uint32_t)k[5] << 8; /* fall through */
	case 5: b += k[4]; /* fall through */
	case 4: a += (uint32_t)k[3] << 24; /* fall through */
	case 3: a += (uint32_t)k[2] << 16; /* fall through */
	case 2: a += (uint32_t)k[1] << 8; /* fall through */
	case 1: a += k[0]; /* fall through */
	default: break;
	}
	MIX(a, b, c);
	return c;
}

uint32_t labelhash_type_value(const char *label)
{
	uint32_t v = (labelhash_jenkins(label, strlen(label)) + 666u) & 0x7fffffffu;
	if (v < 1000)
		v += 1000;
	return v;
}
