#include "trace/stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

/* The MCV for a message: graphic bytes as they are, others as \xNN. */
static const char *mcv_text(char dst[16], const uint8_t *mcv)
{
	char *d = dst;
	for (int i = 0; i < 3; i++) {
		if (mcv[i] > 0x20 && mcv[i] < 0x7f)
			*d++ = (char)mcv[i];
		else
			d += sprintf(d, "\\x%02x", mcv[i]);
	}
	*d = '\0';
	return dst;
}

/* Makes buf[pos, end) hold at least need bytes, unless the source ends
 * first. -1 on a read error (reported by the source). */
static int fill(struct stream_reader *r, size_t need)
{
	if (r->end - r->pos >= need)
		return 0;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->base += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	if (need > r->cap) { /* only a jumbo event gets here */
		uint8_t *nb = realloc(r->buf, need);
		if (!nb) {
			msg_err("%s: out of memory for an event of %zu bytes", r->name, need);
			return -1;
		}
		r->buf = nb;
		r->cap = need;
	}
	while (r->end < need && !r->eof) {
		ssize_t got = r->src->read(r->src, r->buf + r->end, r->cap - r->end);
		if (got < 0)
			return -1;
		if (got == 0)
			r->eof = 1;
		r->end += (size_t)got;
	}
	return 0;
}

int sr_open(struct stream_reader *r, struct byte_src *src, const char *name, unsigned flags)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->src = src;
	r->flags = flags;
	r->cap = SR_BUF_SIZE;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		msg_err("%s: out of memory for the read buffer", name);
		goto fail;
	}
	if (fill(r, STREAM_HEADER_SIZE) < 0)
		goto fail;
	size_t n = r->end;
	if (n == 0) {
		msg_err("%s: offset 0: empty file, expected the %d-byte stream header",
			name, STREAM_HEADER_SIZE);
		goto fail;
	}
	if (n < STREAM_HEADER_SIZE) {
		msg_err("%s: offset %zu: stream header cut short (%zu of %d bytes)",
			name, n, n, STREAM_HEADER_SIZE);
		goto fail;
	}
	if (memcmp(r->buf, STREAM_MAGIC, 4) != 0) {
		char m[4 * 4 + 1], *d = m;
		for (int i = 0; i < 4; i++) {
			uint8_t c = r->buf[i];
			if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
				*d++ = (char)c;
			else
				d += sprintf(d, "\\x%02x", c);
		}
		*d = '\0';
		msg_err("%s: offset 0: not an ovni stream: magic \"%s\" instead of \"%s\"",
			name, m, STREAM_MAGIC);
		goto fail;
	}
	uint32_t version;
	memcpy(&version, r->buf + 4, 4);
	if (version != STREAM_VERSION) {
		msg_err("%s: offset 4: stream version %u is not supported (expected %d)",
			name, version, STREAM_VERSION);
		goto fail;
	}
	r->pos = STREAM_HEADER_SIZE;
	return 0;
fail:
	sr_close(r);
	return -1;
}

static int cut_event(struct stream_reader *r, const uint8_t *p, size_t have, size_t size)
{
	char m[16];
	uint64_t off = r->base + r->pos;
	if (have < 4)
		msg_err("%s: offset %llu: event cut at the end of the file (%zu of %d header bytes)",
			r->name, (unsigned long long)off, have, EV_HEADER_SIZE);
	else
		msg_err("%s: offset %llu: event %s cut at the end of the file (%zu of %zu bytes)",
			r->name, (unsigned long long)off, mcv_text(m, p + 1), have, size);
	return -1;
}

/* Size of the jumbo event at buf[pos] (its 16-byte head is there), or 0
 * after reporting why it cannot be. */
static size_t jumbo_size(struct stream_reader *r, const uint8_t *p)
{
	char m[16];
	uint64_t off = r->base + r->pos;
	uint32_t n;
	memcpy(&n, p + EV_HEADER_SIZE, 4);
	uint64_t size = (uint64_t)EV_JUMBO_HEADER_SIZE + n;
	if (r->src->size != UINT64_MAX && off + size > r->src->size) {
		msg_err("%s: offset %llu: jumbo event %s of %u bytes goes past the end of the file (%llu bytes)",
			r->name, (unsigned long long)off, mcv_text(m, p + 1), n,
			(unsigned long long)r->src->size);
		return 0;
	}
	if (n > EV_MAX_JUMBO) {
		msg_err("%s: offset %llu: jumbo event %s claims %u bytes, more than the %u a writer can produce",
			r->name, (unsigned long long)off, mcv_text(m, p + 1), n, EV_MAX_JUMBO);
		return 0;
	}
	return (size_t)size;
}

/* A clock below the previous one: an error, or a warning in unsorted mode. */
static int backwards(struct stream_reader *r, const uint8_t *p, uint64_t clock)
{
	char m[16];
	unsigned long long off = (unsigned long long)(r->base + r->pos);
	if (!(r->flags & SR_UNSORTED)) {
		msg_err("%s: offset %llu: event %s: clock goes backwards from %llu to %llu",
			r->name, off, mcv_text(m, p + 1),
			(unsigned long long)r->last_clock, (unsigned long long)clock);
		return -1;
	}
	r->nbackwards++;
	if (!(r->flags & SR_QUIET) && r->nbackwards <= 10)
		msg_warn("%s: offset %llu: event %s: clock goes backwards from %llu to %llu%s",
			r->name, off, mcv_text(m, p + 1),
			(unsigned long long)r->last_clock, (unsigned long long)clock,
			r->nbackwards == 10 ? " (further jumps in this stream not reported)" : "");
	return 0;
}

int sr_next_slow(struct stream_reader *r, struct ev *ev)
{
	if (!r->buf)
		return -1;
	if (fill(r, EV_HEADER_SIZE) < 0)
		return -1;
	size_t avail = r->end - r->pos;
	const uint8_t *p = r->buf + r->pos;
	if (avail == 0)
		return 0;
	if (avail < EV_HEADER_SIZE)
		return cut_event(r, p, avail, EV_HEADER_SIZE);
	uint8_t flags = p[0];
	if (flags & EV_FLAG_RESERVED) {
		char m[16];
		msg_err("%s: offset %llu: event %s has impossible flags 0x%02x (reserved bits set, payload size code %u)",
			r->name, (unsigned long long)(r->base + r->pos), mcv_text(m, p + 1),
			flags, flags & 0x0fu);
		return -1;
	}
	size_t size = EV_HEADER_SIZE + EV_PAYLOAD_SIZE(flags & 0x0fu);
	if (flags & EV_FLAG_JUMBO) {
		if (fill(r, EV_JUMBO_HEADER_SIZE) < 0)
			return -1;
		p = r->buf + r->pos;
		avail = r->end - r->pos;
		if (avail < EV_JUMBO_HEADER_SIZE)
			return cut_event(r, p, avail, EV_JUMBO_HEADER_SIZE);
		size = jumbo_size(r, p);
		if (size == 0)
			return -1;
	}
	if (fill(r, size) < 0)
		return -1;
	p = r->buf + r->pos;
	avail = r->end - r->pos;
	if (avail < size)
		return cut_event(r, p, avail, size);
	uint64_t clock;
	memcpy(&clock, p + 4, 8);
	if (clock < r->last_clock && backwards(r, p, clock) < 0)
		return -1;
	ev->flags = flags;
	memcpy(ev->mcv, p + 1, 3);
	ev->clock = clock;
	ev->payload = p + EV_HEADER_SIZE;
	ev->payload_size = (uint32_t)(size - EV_HEADER_SIZE);
	ev->size = (uint32_t)size;
	ev->offset = r->base + r->pos;
	r->pos += size;
	r->last_clock = clock;
	return 1;
}

void sr_close(struct stream_reader *r)
{
	if (r->src)
		r->src->close(r->src);
	free(r->buf);
	r->src = NULL;
	r->buf = NULL;
	r->pos = r->end = r->cap = 0;
}
