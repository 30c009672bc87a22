#include "trace/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/msg.h"

struct file_src {
	struct byte_src src;
	int fd;
	uint64_t pos; /* bytes read so far, for messages */
	char path[];
};

/* The descriptor is closed as soon as the file size is reached, so that a
 * trace of many small streams does not hold one descriptor per stream. */
static ssize_t file_read(struct byte_src *s, void *buf, size_t n)
{
	struct file_src *f = (struct file_src *)s;
	if (f->fd < 0)
		return 0;
	for (;;) {
		ssize_t got = read(f->fd, buf, n);
		if (got >= 0) {
			f->pos += (uint64_t)got;
			if (got == 0 || f->pos >= s->size) {
				close(f->fd);
				f->fd = -1;
			}
			return got;
		}
		if (errno != EINTR)
			break;
	}
	msg_err("%s: offset %llu: cannot read: %s", f->path,
		(unsigned long long)f->pos, strerror(errno));
	return -1;
}

static void file_close(struct byte_src *s)
{
	struct file_src *f = (struct file_src *)s;
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

struct byte_src *byte_src_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		msg_err("%s: offset 0: cannot open: %s%s", path, strerror(errno),
			errno == EMFILE ? " (more streams than `ulimit -n` allows)" : "");
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		msg_err("%s: offset 0: cannot read: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		msg_err("%s: offset 0: cannot read: %s", path,
			S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return NULL;
	}
	size_t len = strlen(path);
	struct file_src *f = malloc(sizeof(*f) + len + 1);
	if (!f) {
		msg_err("%s: out of memory", path);
		close(fd);
		return NULL;
	}
	memcpy(f->path, path, len + 1);
	f->fd = fd;
	f->pos = 0;
	f->src.read = file_read;
	f->src.close = file_close;
	f->src.size = (uint64_t)st.st_size;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return &f->src;
}

struct mem_src {
	struct byte_src src;
	const uint8_t *data;
	size_t n, pos, chunk;
};

static ssize_t mem_read(struct byte_src *s, void *buf, size_t n)
{
	struct mem_src *m = (struct mem_src *)s;
	size_t left = m->n - m->pos;
	if (n > left)
		n = left;
	if (m->chunk && n > m->chunk)
		n = m->chunk;
	if (n == 0)
		return 0;
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static void mem_close(struct byte_src *s)
{
	free(s);
}

struct byte_src *byte_src_mem(const void *data, size_t n, size_t chunk)
{
	struct mem_src *m = calloc(1, sizeof(*m));
	if (!m) {
		msg_err("out of memory");
		return NULL;
	}
	m->data = data;
	m->n = n;
	m->chunk = chunk;
	m->src.read = mem_read;
	m->src.close = mem_close;
	m->src.size = n;
	return &m->src;
}

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
