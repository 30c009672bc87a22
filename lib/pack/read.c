/* Reading pack archives: the trailer and index, then members block by
 * block, every checksum checked before its bytes are used. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/msg.h"
#include "pack/pack.h"

/* What decoding a block needs only while it decodes: one set per archive,
 * so that a reader of many streams keeps just one decoded block each. */
struct pack_scratch {
	ZSTD_DCtx *dctx;
	uint8_t *stored, *cols;
	size_t stored_cap, cols_cap;
};

static int read_at(struct pack *p, void *buf, size_t n, uint64_t off, const char *what)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(p->fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			msg_err("%s: offset %llu: %s %s", p->path, (unsigned long long)(off + got),
				r < 0 ? "cannot read" : "truncated in", r < 0 ? strerror(errno) : what);
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

int pack_is_archive(const char *path)
{
	struct stat pre;
	if (stat(path, &pre) != 0 || !S_ISREG(pre.st_mode))
		return 0; /* never open a FIFO: that would block */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	char m[8];
	struct stat st;
	int is = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, m, 8) == 8 && !memcmp(m, PACK_MAGIC, 8);
	close(fd);
	return is;
}

/* Index entries, each checked against the rest of the archive. */
static int parse_index(struct pack *p, const uint8_t *b, size_t len)
{
	const uint8_t *q = b + 8, *end = b + len;
	uint32_t n = pack_get32(b + 4);
	if (n > len / 32) /* a member takes at least 32 index bytes */
		goto bad;
	if (!(p->members = calloc(n ? n : 1, sizeof(*p->members))))
		goto oom;
	for (uint32_t i = 0; i < n; i++) {
		struct pack_member *m = &p->members[i];
		p->n = i + 1;
		if (end - q < 2)
			goto bad;
		size_t pl = (size_t)q[0] | (size_t)q[1] << 8;
		if ((size_t)(end - q) < 2 + pl + 27 || pl == 0 || pl > PACK_PATH_MAX)
			goto bad;
		if (!(m->path = strndup((const char *)q + 2, pl)))
			goto oom;
		q += 2 + pl;
		m->type = *q++;
		m->mode = pack_get32(q);
		m->mtime_sec = (int64_t)pack_get64(q + 4);
		m->mtime_nsec = pack_get32(q + 12);
		m->size = pack_get64(q + 16);
		size_t tl = (size_t)q[24] | (size_t)q[25] << 8;
		q += 26;
		if (strlen(m->path) != pl || m->type > PACK_LINK || m->mode > 07777 || m->mtime_nsec >= 1000000000u ||
		    (size_t)(end - q) < tl + 4)
			goto bad;
		if ((m->type == PACK_LINK) != (tl != 0))
			goto bad;
		if (tl && !(m->target = strndup((const char *)q, tl)))
			goto oom;
		if (tl && strlen(m->target) != tl)
			goto bad;
		q += tl;
		m->nblocks = pack_get32(q);
		q += 4;
		if ((size_t)(end - q) / 8 < m->nblocks || (m->type != PACK_FILE && (m->nblocks || m->size)) ||
		    m->size > (uint64_t)m->nblocks * PACK_BLOCK_RAW_MAX || (m->size && !m->nblocks))
			goto bad;
		if (!(m->blocks = malloc((m->nblocks ? m->nblocks : 1) * sizeof(uint64_t))))
			goto oom;
		for (uint32_t k = 0; k < m->nblocks; k++, q += 8) {
			m->blocks[k] = pack_get64(q);
			if (m->blocks[k] < PACK_HEADER_SIZE || m->blocks[k] + PACK_BLOCK_HEADER_SIZE > p->index_offset) {
				msg_err("%s: index: member %s: block %u at offset %llu is outside the archive", p->path,
					m->path, k, (unsigned long long)m->blocks[k]);
				return -1;
			}
		}
	}
	if (q != end)
		goto bad;
	return 0;
bad:
	msg_err("%s: offset %llu: damaged index (member %zu)", p->path,
		(unsigned long long)(p->index_offset + (uint64_t)(q - b)), p->n);
	return -1;
oom:
	msg_err("%s: out of memory reading the index", p->path);
	return -1;
}

static int cmp_member(const void *a, const void *b)
{
	return strcmp((*(struct pack_member *const *)a)->path, (*(struct pack_member *const *)b)->path);
}

int pack_open(struct pack *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (!(p->path = strdup(path))) {
		msg_err("out of memory");
		return -1;
	}
	if ((p->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		msg_err("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(p->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		msg_err("%s: offset 0: not a regular file", path);
		return -1;
	}
	p->file_size = (uint64_t)st.st_size;
	uint8_t h[PACK_HEADER_SIZE], t[PACK_TRAILER_SIZE];
	if (p->file_size < PACK_HEADER_SIZE + PACK_TRAILER_SIZE) {
		msg_err("%s: offset %llu: truncated (too short for a pack archive)", path, (unsigned long long)p->file_size);
		return -1;
	}
	if (read_at(p, h, sizeof(h), 0, "the header") < 0)
		return -1;
	if (memcmp(h, PACK_MAGIC, 8) != 0) {
		msg_err("%s: offset 0: not a pack archive (bad magic)", path);
		return -1;
	}
	if (pack_get32(h + 8) != PACK_VERSION) {
		msg_err("%s: offset 8: pack format version %u, this ovni reads version %u", path, pack_get32(h + 8),
			PACK_VERSION);
		return -1;
	}
	if (pack_get32(h + 12) != 0) {
		msg_err("%s: offset 12: reserved header bytes are not zero", path);
		return -1;
	}
	uint64_t toff = p->file_size - PACK_TRAILER_SIZE;
	if (read_at(p, t, sizeof(t), toff, "the trailer") < 0)
		return -1;
	if (memcmp(t + 24, PACK_END_MAGIC, 8) != 0) {
		msg_err("%s: offset %llu: no trailer (truncated archive?)", path, (unsigned long long)toff);
		return -1;
	}
	p->index_offset = pack_get64(t);
	uint64_t ilen = pack_get64(t + 8);
	if (p->index_offset < PACK_HEADER_SIZE || ilen < 8 || ilen > toff || p->index_offset != toff - ilen) {
		msg_err("%s: offset %llu: trailer points at an index outside the archive", path, (unsigned long long)toff);
		return -1;
	}
	uint8_t *b = malloc(ilen);
	if (!b) {
		msg_err("%s: out of memory for the index", path);
		return -1;
	}
	int rc = -1;
	if (read_at(p, b, ilen, p->index_offset, "the index") < 0)
		goto out;
	if (pack_hash(b, ilen) != pack_get64(t + 16)) {
		msg_err("%s: offset %llu: index checksum mismatch", path, (unsigned long long)p->index_offset);
		goto out;
	}
	if (memcmp(b, PACK_INDEX_MAGIC, 4) != 0) {
		msg_err("%s: offset %llu: bad index magic", path, (unsigned long long)p->index_offset);
		goto out;
	}
	rc = parse_index(p, b, ilen);
	if (rc == 0 && !(p->by_path = malloc((p->n ? p->n : 1) * sizeof(*p->by_path)))) {
		msg_err("%s: out of memory", path);
		rc = -1;
	}
	if (rc == 0) {
		for (size_t i = 0; i < p->n; i++)
			p->by_path[i] = &p->members[i];
		qsort(p->by_path, p->n, sizeof(*p->by_path), cmp_member);
	}
	if (rc == 0 && (!(p->scratch = calloc(1, sizeof(*p->scratch))) || !(p->scratch->dctx = ZSTD_createDCtx()))) {
		msg_err("%s: out of memory", path);
		rc = -1;
	}
out:
	free(b);
	return rc;
}

void pack_close(struct pack *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->members[i].path);
		free(p->members[i].target);
		free(p->members[i].blocks);
	}
	free(p->members);
	free(p->by_path);
	free(p->path);
	if (p->scratch) {
		ZSTD_freeDCtx(p->scratch->dctx);
		free(p->scratch->stored);
		free(p->scratch->cols);
		free(p->scratch);
	}
	if (p->fd >= 0)
		close(p->fd);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

static int cmp_key(const void *key, const void *m)
{
	return strcmp(key, (*(struct pack_member *const *)m)->path);
}

struct pack_member *pack_find(struct pack *p, const char *path)
{
	struct pack_member **m = bsearch(path, p->by_path, p->n, sizeof(*m), cmp_key);
	return m ? *m : NULL;
}

/* Decoding state of one member: its current block, sized for the largest
 * block seen. */
struct block_reader {
	struct pack *p;
	struct pack_member *m;
	uint32_t next; /* next block */
	uint64_t off; /* member offset of the next block */
	uint8_t *raw;
	size_t raw_cap, raw_len;
};

__attribute__((format(printf, 3, 4)))
static int block_err(struct block_reader *br, uint64_t at, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msg_err("%s: offset %llu: member %s, block %u: %s", br->p->path, (unsigned long long)at, br->m->path,
		br->next, text);
	return -1;
}

/* Reads, checks and decodes the next block into br->raw. */
static int block_next(struct block_reader *br)
{
	uint64_t at = br->m->blocks[br->next];
	uint8_t h[PACK_BLOCK_HEADER_SIZE];
	if (read_at(br->p, h, sizeof(h), at, "a block header") < 0)
		return -1;
	uint32_t stored = pack_get32(h + 12), raw = pack_get32(h + 16);
	if (memcmp(h, PACK_BLOCK_MAGIC, 4) != 0)
		return block_err(br, at, "bad block magic");
	if (pack_get32(h + 4) != (uint32_t)(br->m - br->p->members) || pack_get64(h + 24) != br->off)
		return block_err(br, at, "block belongs elsewhere (damaged index?)");
	if (h[8] > PACK_CODEC_EVENTS || raw == 0 || raw > PACK_BLOCK_RAW_MAX || raw > br->m->size - br->off ||
	    stored > ZSTD_compressBound(pack_cols_bound(PACK_BLOCK_RAW_MAX)) ||
	    at + PACK_BLOCK_HEADER_SIZE + stored > br->p->index_offset)
		return block_err(br, at, "impossible block header");
	struct pack_scratch *s = br->p->scratch;
	if (pack_grow(&s->stored, &s->stored_cap, stored ? stored : 1) < 0 || pack_grow(&br->raw, &br->raw_cap, raw) < 0 ||
	    (h[8] == PACK_CODEC_EVENTS && pack_grow(&s->cols, &s->cols_cap, pack_cols_bound(raw)) < 0))
		return block_err(br, at, "out of memory");
	if (read_at(br->p, s->stored, stored, at + PACK_BLOCK_HEADER_SIZE, "a block") < 0)
		return -1;
	if (pack_block_check(h, s->stored, stored) != pack_get64(h + 40))
		return block_err(br, at, "checksum mismatch");
	uint8_t *dst = h[8] == PACK_CODEC_EVENTS ? s->cols : br->raw;
	size_t cap = h[8] == PACK_CODEC_EVENTS ? pack_cols_bound(raw) : raw;
	size_t got = ZSTD_decompressDCtx(s->dctx, dst, cap, s->stored, stored);
	if (ZSTD_isError(got))
		return block_err(br, at, "cannot decompress: %s", ZSTD_getErrorName(got));
	if (h[8] == PACK_CODEC_EVENTS) {
		const char *why;
		if (pack_cols_decode(s->cols, got, br->raw, raw, &why) < 0)
			return block_err(br, at, "%s", why);
	} else if (got != raw) {
		return block_err(br, at, "decompressed to %zu bytes, expected %u", got, raw);
	}
	if (pack_hash(br->raw, raw) != pack_get64(h + 32))
		return block_err(br, at, "content checksum mismatch");
	br->raw_len = raw;
	br->off += raw;
	br->next++;
	return 0;
}

static void br_init(struct block_reader *br, struct pack *p, struct pack_member *m)
{
	memset(br, 0, sizeof(*br));
	br->p = p;
	br->m = m;
}

static void br_free(struct block_reader *br)
{
	free(br->raw);
}

/* Past the last block: the blocks must add up to the member's size. */
static int br_at_end(struct block_reader *br)
{
	if (br->off != br->m->size) {
		msg_err("%s: member %s: blocks hold %llu bytes, the index says %llu", br->p->path, br->m->path,
			(unsigned long long)br->off, (unsigned long long)br->m->size);
		return -1;
	}
	return 0;
}

struct member_src {
	struct byte_src src;
	struct block_reader br;
	size_t pos;
};

static ssize_t member_read(struct byte_src *s, void *buf, size_t n)
{
	struct member_src *ms = (struct member_src *)s;
	struct block_reader *br = &ms->br;
	if (ms->pos == br->raw_len) {
		if (br->next == br->m->nblocks)
			return br_at_end(br) < 0 ? -1 : 0;
		if (block_next(br) < 0)
			return -1;
		ms->pos = 0;
	}
	size_t k = br->raw_len - ms->pos;
	if (k > n)
		k = n;
	memcpy(buf, br->raw + ms->pos, k);
	ms->pos += k;
	return (ssize_t)k;
}

static void member_close(struct byte_src *s)
{
	struct member_src *ms = (struct member_src *)s;
	br_free(&ms->br);
	free(ms);
}

struct byte_src *pack_member_src(struct pack *p, struct pack_member *m)
{
	struct member_src *ms = calloc(1, sizeof(*ms));
	if (!ms) {
		msg_err("out of memory");
		return NULL;
	}
	br_init(&ms->br, p, m);
	ms->src.read = member_read;
	ms->src.close = member_close;
	ms->src.size = m->size;
	return &ms->src;
}

struct copy_dst {
	char *s;
	size_t n;
};

static int copy_block(void *arg, const uint8_t *raw, size_t n)
{
	struct copy_dst *d = arg;
	memcpy(d->s + d->n, raw, n);
	d->n += n;
	return 0;
}

char *pack_member_read(struct pack *p, struct pack_member *m, size_t *len)
{
	if (m->size > (1u << 30)) {
		msg_err("%s: member %s: too big to read into memory", p->path, m->path);
		return NULL;
	}
	struct copy_dst d = { malloc(m->size + 1), 0 };
	if (!d.s) {
		msg_err("out of memory");
		return NULL;
	}
	uint64_t done = 0;
	if (pack_member_each(p, m, copy_block, &d, NULL, NULL, &done, m->size) < 0) {
		free(d.s);
		return NULL;
	}
	d.s[d.n] = '\0';
	*len = d.n;
	return d.s;
}

/* Calls each(arg, raw, n) on every block of m, in order. */
int pack_member_each(struct pack *p, struct pack_member *m, int (*each)(void *, const uint8_t *, size_t), void *arg,
		       pack_progress_fn progress, void *parg, uint64_t *done, uint64_t total)
{
	struct block_reader br;
	br_init(&br, p, m);
	int rc = 0;
	while (rc == 0 && br.next < m->nblocks) {
		if (block_next(&br) < 0 || (each && each(arg, br.raw, br.raw_len) < 0))
			rc = -1;
		*done += br.raw_len;
		if (progress)
			progress(parg, *done, total);
	}
	if (rc == 0)
		rc = br_at_end(&br);
	br_free(&br);
	return rc;
}

static uint64_t total_size(struct pack *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->n; i++)
		t += p->members[i].size;
	return t;
}

int pack_verify(struct pack *p, pack_progress_fn progress, void *arg)
{
	uint64_t done = 0, total = total_size(p);
	int rc = 0;
	for (size_t i = 0; i < p->n; i++)
		if (pack_member_each(p, &p->members[i], NULL, NULL, progress, arg, &done, total) < 0)
			rc = -1;
	return rc;
}
