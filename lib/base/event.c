#include "base/event.h"

size_t ev_encode(uint8_t *dst, const char mcv[3], uint64_t clock, const void *payload, size_t n)
{
	dst[0] = n ? (uint8_t)(n - 1) : 0;
	memcpy(dst + 1, mcv, 3);
	memcpy(dst + 4, &clock, 8);
	if (n)
		memcpy(dst + EV_HEADER_SIZE, payload, n);
	return EV_HEADER_SIZE + n;
}

size_t ev_encode_jumbo(uint8_t *dst, const char mcv[3], uint64_t clock, const void *data, uint32_t n)
{
	dst[0] = EV_FLAG_JUMBO | 3; /* the size code of the u32 length, as the reference writes it */
	memcpy(dst + 1, mcv, 3);
	memcpy(dst + 4, &clock, 8);
	memcpy(dst + EV_HEADER_SIZE, &n, 4);
	if (n)
		memcpy(dst + EV_JUMBO_HEADER_SIZE, data, n);
	return EV_JUMBO_HEADER_SIZE + (size_t)n;
}

void stream_header(uint8_t dst[STREAM_HEADER_SIZE])
{
	uint32_t version = STREAM_VERSION;
	memcpy(dst, STREAM_MAGIC, 4);
	memcpy(dst + 4, &version, 4);
}
