/* Reading pack archives (versions 1 to 3): the trailer and index, then
 * members block by block, every checksum checked before its bytes are used. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#define XXH_STATIC_LINKING_ONLY
#include "common/xxhash.h"

#include "base/file.h"
#include "base/msg.h"
#include "pack/pack.h"

/* What decoding a block needs only while it decodes, and the last
 * version 2 block decoded (the small members that share it are read one
 * after the other): one set per archive, so that a reader of many streams
 * keeps just its own bytes of one block each. */
struct pack_scratch {
	ZSTD_DCtx *dctx;
	uint8_t *stored, *cols, *cache;
	size_t stored_cap, cols_cap, cache_cap;
	uint8_t *tail; /* version 3: the last block's bytes before zstd, when the index's frame holds them */
	size_t tail_len;
	struct pack_seg *seg;
	size_t seg_cap;
	size_t cached; /* block number + 1 of the bytes in cache, 0 if none */
};

/* xxh64 of the version 1 block header's first 40 bytes then the stored bytes. */
static uint64_t block1_check(const uint8_t *hdr, const void *stored, size_t n)
{
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	XXH64_update(&st, hdr, 40);
	XXH64_update(&st, stored, n);
	return XXH64_digest(&st);
}

static int read_at(struct pack *p, void *buf, size_t n, uint64_t off, const char *what)
{
	int err;
	size_t got = file_pread_all(p->fd, buf, n, off, &err);
	if (got == n)
		return 0;
	msg_err("%s: offset %llu: %s %s", p->path, (unsigned long long)(off + got), err ? "cannot read" : "truncated in",
		err ? strerror(err) : what);
	return -1;
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

/* Version 1 index entries, each checked against the rest of the archive. */
static int parse_index1(struct pack *p, const uint8_t *b, size_t len)
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
			if (m->blocks[k] < PACK_HEADER_SIZE || m->blocks[k] + PACK1_BLOCK_HEADER_SIZE > p->index_offset) {
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

/* A cursor over a version 2 index: bad once anything runs past its end. */
struct cursor {
	const uint8_t *q, *end;
	int bad;
};

static uint64_t num(struct cursor *c)
{
	uint64_t v;
	if (pack_varint_get(&c->q, c->end, &v) < 0) {
		c->bad = 1;
		return 0;
	}
	return v;
}

static const uint8_t *take(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->q) < n) {
		c->bad = 1;
		return NULL;
	}
	const uint8_t *r = c->q;
	c->q += n;
	return r;
}

__attribute__((format(printf, 2, 3)))
static int index_err(struct pack *p, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msg_err("%s: offset %llu: damaged index: %s", p->path, (unsigned long long)p->index_offset, text);
	return -1;
}

static int parse_blocks2(struct pack *p, struct cursor *c)
{
	if (!(p->blocks = calloc(p->nblocks ? p->nblocks : 1, sizeof(*p->blocks))))
		return index_err(p, "out of memory");
	for (size_t k = 0; k < p->nblocks; k++) {
		const uint8_t *b = take(c, 1);
		unsigned known = PACK_CODEC_EVENTS | PACK2_CODEC_DICT | (p->version >= 3 ? PACK3_CODEC_RC : 0);
		if (!b || (*b & ~known) || ((*b & PACK3_CODEC_RC) && !(*b & PACK_CODEC_EVENTS)))
			return index_err(p, "block %zu: unknown codec", k);
		p->blocks[k].codec = *b;
	}
	uint64_t off = PACK_HEADER_SIZE, pos = 0;
	for (size_t k = 0; k < p->nblocks; k++) {
		uint64_t n = num(c);
		int in_index = n == 0 && p->version >= 3 && k == p->nblocks - 1; /* the index's frame holds it */
		if (c->bad || (n == 0 && !in_index) ||
		    n > ZSTD_compressBound(pack_cols_bound(PACK_BLOCK_RAW_MAX, PACK_BLOCK_RAW_MAX)) ||
		    n > p->index_offset - off)
			return index_err(p, "block %zu: a size that does not fit the archive", k);
		p->blocks[k].off = off;
		p->blocks[k].stored = (uint32_t)n;
		off += n;
	}
	if (off != p->index_offset)
		return index_err(p, "the blocks end at offset %llu, the index starts at %llu", (unsigned long long)off,
				 (unsigned long long)p->index_offset);
	for (size_t k = 0; k < p->nblocks; k++) {
		uint64_t n = num(c);
		if (c->bad || n == 0 || n > PACK_BLOCK_RAW_MAX)
			return index_err(p, "block %zu: impossible decoded size", k);
		p->blocks[k].pos = pos;
		p->blocks[k].raw = (uint32_t)n;
		pos += n;
	}
	const uint8_t *cs = take(c, 4 * (uint64_t)p->nblocks);
	if (!cs)
		return index_err(p, "cut in the block checksums");
	for (size_t k = 0; k < p->nblocks; k++)
		p->blocks[k].check = pack_get32(cs + 4 * k);
	return 0;
}

/* A path is the path of the directory holding it (that many members
 * before, or none: 0) and a name. */
static int parse_paths2(struct pack *p, struct cursor *c, size_t *parent)
{
	uint64_t *len = malloc((p->n ? p->n : 1) * sizeof(*len));
	if (!len)
		return index_err(p, "out of memory");
	for (size_t i = 0; i < p->n; i++) {
		uint64_t back = num(c);
		if (back > i || (back && p->members[i - back].type != PACK_DIR)) {
			free(len);
			return index_err(p, "member %zu: not in a directory", i);
		}
		parent[i] = back ? i - back : SIZE_MAX;
	}
	for (size_t i = 0; i < p->n; i++)
		len[i] = num(c);
	for (size_t i = 0; i < p->n && !c->bad; i++) {
		struct pack_member *m = &p->members[i];
		const char *up = parent[i] == SIZE_MAX ? "" : p->members[parent[i]].path;
		size_t ul = strlen(up) + (*up != '\0');
		const uint8_t *name;
		if (len[i] == 0 || len[i] > PACK_PATH_MAX || ul + len[i] > PACK_PATH_MAX || !(name = take(c, len[i])) ||
		    memchr(name, '\0', len[i]) || memchr(name, '/', len[i])) {
			free(len);
			return index_err(p, "member %zu: bad name", i);
		}
		if (!(m->path = malloc(ul + len[i] + 1))) {
			free(len);
			return index_err(p, "out of memory");
		}
		memcpy(m->path, up, strlen(up));
		if (ul)
			m->path[ul - 1] = '/';
		memcpy(m->path + ul, name, len[i]);
		m->path[ul + len[i]] = '\0';
	}
	free(len);
	return c->bad ? index_err(p, "cut in the paths") : 0;
}

/* Modes, and times as differences to those of the directory holding the
 * member (or of the member before, at the top). */
static int parse_meta2(struct pack *p, struct cursor *c, const size_t *parent)
{
	for (size_t i = 0; i < p->n; i++) {
		uint64_t mode = num(c);
		if (mode > 07777)
			return index_err(p, "member %s: bad mode", p->members[i].path);
		p->members[i].mode = (uint32_t)mode;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct pack_member *like = parent[i] != SIZE_MAX ? &p->members[parent[i]] : i ? &p->members[i - 1] : NULL;
		p->members[i].mtime_sec = (int64_t)((uint64_t)(like ? like->mtime_sec : 0) + (uint64_t)pack_unzigzag(num(c)));
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct pack_member *like = parent[i] != SIZE_MAX ? &p->members[parent[i]] : i ? &p->members[i - 1] : NULL;
		int64_t nsec = (like ? like->mtime_nsec : 0) + pack_unzigzag(num(c));
		if (nsec < 0 || nsec >= 1000000000)
			return index_err(p, "member %s: bad time", p->members[i].path);
		p->members[i].mtime_nsec = (uint32_t)nsec;
	}
	return c->bad ? index_err(p, "cut in the modes and times") : 0;
}

static int parse_index2(struct pack *p, const uint8_t *b, size_t len)
{
	struct cursor c = { b, b + len, 0 };
	uint64_t n = num(&c), nb = num(&c);
	if (c.bad || n > len / 6 || nb > len / 7) /* a member takes 6 bytes at least, a block 7 */
		return index_err(p, "impossible member or block count");
	p->n = n;
	p->nblocks = nb;
	if (!(p->members = calloc(n ? n : 1, sizeof(*p->members))) || !(p->files = malloc((n ? n : 1) * sizeof(*p->files))))
		return index_err(p, "out of memory");
	if (parse_blocks2(p, &c) < 0)
		return -1;
	const uint8_t *types = take(&c, n);
	if (!types)
		return index_err(p, "cut in the member types");
	for (size_t i = 0; i < n; i++)
		if ((p->members[i].type = types[i]) > PACK_LINK)
			return index_err(p, "member %zu: unknown type %u", i, types[i]);
	size_t *parent = malloc((n ? n : 1) * sizeof(*parent));
	if (!parent)
		return index_err(p, "out of memory");
	int rc = parse_paths2(p, &c, parent) < 0 || parse_meta2(p, &c, parent) < 0 ? -1 : 0;
	free(parent);
	if (rc < 0)
		return -1;
	uint64_t pos = 0, total = nb ? p->blocks[nb - 1].pos + p->blocks[nb - 1].raw : 0;
	for (size_t i = 0; i < n; i++) {
		struct pack_member *m = &p->members[i];
		if (m->type != PACK_FILE)
			continue;
		m->size = num(&c);
		if (m->size > total - pos)
			return index_err(p, "member %s: more bytes than the blocks hold", m->path);
		m->pos = pos;
		pos += m->size;
		p->files[p->nfiles++] = m;
	}
	if (pos != total)
		return index_err(p, "the blocks hold %llu bytes, the members %llu", (unsigned long long)total,
				 (unsigned long long)pos);
	for (size_t i = 0; i < n; i++)
		if (p->members[i].type == PACK_LINK && (p->members[i].size = num(&c)) - 1 >= PACK_PATH_MAX)
			return index_err(p, "member %s: bad link target", p->members[i].path);
	for (size_t i = 0; i < n; i++) {
		struct pack_member *m = &p->members[i];
		if (m->type != PACK_LINK)
			continue;
		const uint8_t *t = take(&c, m->size);
		if (!t || memchr(t, '\0', m->size) || !(m->target = strndup((const char *)t, m->size)))
			return index_err(p, "member %s: bad link target", m->path);
		m->size = 0;
	}
	if (c.bad || c.q != c.end)
		return index_err(p, "%s", c.bad ? "cut short" : "bytes after the last member");
	return 0;
}

/* The trailer of size bytes at the end of the archive, its end magic at
 * magic_at; *toff gets its offset. -1 after a message. */
static int read_trailer(struct pack *p, uint8_t *t, size_t size, size_t magic_at, uint64_t *toff)
{
	if (p->file_size < PACK_HEADER_SIZE + size) {
		msg_err("%s: offset %llu: truncated (too short for a pack archive)", p->path,
			(unsigned long long)p->file_size);
		return -1;
	}
	*toff = p->file_size - size;
	if (read_at(p, t, size, *toff, "the trailer") < 0)
		return -1;
	if (memcmp(t + magic_at, PACK_END_MAGIC, 8) != 0) {
		msg_err("%s: offset %llu: no trailer (truncated archive?)", p->path, (unsigned long long)*toff);
		return -1;
	}
	return 0;
}

/* Version 1: a plain index the trailer points at. */
static int open1(struct pack *p, uint8_t **b, size_t *len)
{
	uint8_t t[PACK1_TRAILER_SIZE];
	uint64_t toff;
	if (read_trailer(p, t, sizeof(t), 24, &toff) < 0)
		return -1;
	p->index_offset = pack_get64(t);
	uint64_t ilen = pack_get64(t + 8);
	if (p->index_offset < PACK_HEADER_SIZE || ilen < 8 || ilen > toff || p->index_offset != toff - ilen) {
		msg_err("%s: offset %llu: trailer points at an index outside the archive", p->path,
			(unsigned long long)toff);
		return -1;
	}
	if (!(*b = malloc(ilen))) {
		msg_err("%s: out of memory for the index", p->path);
		return -1;
	}
	*len = ilen;
	if (read_at(p, *b, ilen, p->index_offset, "the index") < 0)
		return -1;
	if (pack_hash(*b, ilen) != pack_get64(t + 16)) {
		msg_err("%s: offset %llu: index checksum mismatch", p->path, (unsigned long long)p->index_offset);
		return -1;
	}
	if (memcmp(*b, PACK1_INDEX_MAGIC, 4) != 0) {
		msg_err("%s: offset %llu: bad index magic", p->path, (unsigned long long)p->index_offset);
		return -1;
	}
	return parse_index1(p, *b, ilen);
}

/* A version 2 frame: no magic, maybe the format's dictionary. */
static size_t unzstd2(struct pack *p, void *dst, size_t cap, const void *src, size_t n, int dict)
{
	if (dict)
		ZSTD_DCtx_refPrefix(p->scratch->dctx, pack_dict, pack_dict_len(p->version));
	return ZSTD_decompressDCtx(p->scratch->dctx, dst, cap, src, n);
}

/* Reads the index's zstd frame, the zlen bytes before the trailer at toff,
 * into a new *b of size bytes (freed by the caller). zsum: where the
 * checksum of the compressed bytes is, or NULL; sum: the content's. */
static int read_index_frame(struct pack *p, uint64_t toff, uint32_t zlen, size_t size, const uint8_t *zsum,
			    uint32_t sum, uint8_t **b)
{
	p->index_offset = toff - zlen;
	uint8_t *z = malloc(zlen);
	if (!z || !(*b = malloc(size))) {
		free(z);
		msg_err("%s: out of memory for the index", p->path);
		return -1;
	}
	if (read_at(p, z, zlen, p->index_offset, "the index") < 0) {
		free(z);
		return -1;
	}
	size_t got = !zsum || pack_get32(zsum) == (uint32_t)pack_hash(z, zlen) ? unzstd2(p, *b, size, z, zlen, 1) : 0;
	free(z);
	if (got != size || sum != (uint32_t)pack_hash(*b, size)) {
		msg_err("%s: offset %llu: index checksum mismatch", p->path, (unsigned long long)p->index_offset);
		return -1;
	}
	return 0;
}

/* Version 3: the index's frame holds the index, then maybe the bytes of
 * the last block (kept in the scratch). */
static int open3(struct pack *p, uint8_t **b, size_t *len)
{
	uint8_t t[PACK3_TRAILER_SIZE];
	uint64_t toff;
	if (read_trailer(p, t, sizeof(t), 16, &toff) < 0)
		return -1;
	uint32_t zlen = pack_get32(t), all = pack_get32(t + 4), ilen = pack_get32(t + 8);
	if (zlen == 0 || zlen > toff - PACK_HEADER_SIZE || ilen == 0 || all < ilen || all - ilen > PACK2_SMALL_INPUT ||
	    all > (1u << 30)) {
		msg_err("%s: offset %llu: trailer points at an index outside the archive", p->path,
			(unsigned long long)toff);
		return -1;
	}
	*len = ilen;
	if (read_index_frame(p, toff, zlen, all, NULL, pack_get32(t + 12), b) < 0 || parse_index2(p, *b, ilen) < 0)
		return -1;
	int in_index = p->nblocks && p->blocks[p->nblocks - 1].stored == 0;
	if (in_index != (all > ilen))
		return index_err(p, "the last block is %s the index's frame, which says otherwise",
				 in_index ? "in" : "not in");
	struct pack_scratch *s = p->scratch;
	s->tail_len = all - ilen;
	if (s->tail_len && !(s->tail = malloc(s->tail_len)))
		return index_err(p, "out of memory");
	if (s->tail_len)
		memcpy(s->tail, *b + ilen, s->tail_len);
	return 0;
}

/* Version 2: a zstd index before a 24-byte trailer. */
static int open2(struct pack *p, uint8_t **b, size_t *len)
{
	uint8_t t[PACK2_TRAILER_SIZE];
	uint64_t toff;
	if (read_trailer(p, t, sizeof(t), 16, &toff) < 0)
		return -1;
	uint32_t zlen = pack_get32(t), ilen = pack_get32(t + 4);
	if (zlen == 0 || zlen > toff - PACK_HEADER_SIZE || ilen == 0 || ilen > (1u << 30)) {
		msg_err("%s: offset %llu: trailer points at an index outside the archive", p->path,
			(unsigned long long)toff);
		return -1;
	}
	*len = ilen;
	if (read_index_frame(p, toff, zlen, ilen, t + 8, pack_get32(t + 12), b) < 0)
		return -1;
	return parse_index2(p, *b, ilen);
}

static int cmp_member(const void *a, const void *b)
{
	return strcmp((*(struct pack_member *const *)a)->path, (*(struct pack_member *const *)b)->path);
}

int pack_open(struct pack *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (!(p->path = strdup(path)) || !(p->scratch = calloc(1, sizeof(*p->scratch))) ||
	    !(p->scratch->dctx = ZSTD_createDCtx())) {
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
	uint8_t h[PACK_HEADER_SIZE];
	if (p->file_size < PACK_HEADER_SIZE) {
		msg_err("%s: offset %llu: truncated (too short for a pack archive)", path, (unsigned long long)p->file_size);
		return -1;
	}
	if (read_at(p, h, sizeof(h), 0, "the header") < 0)
		return -1;
	if (memcmp(h, PACK_MAGIC, 8) != 0) {
		msg_err("%s: offset 0: not a pack archive (bad magic)", path);
		return -1;
	}
	p->version = pack_get32(h + 8);
	if (p->version < 1 || p->version > PACK_VERSION) {
		msg_err("%s: offset 8: pack format version %u, this ovni reads versions 1 to %u", path, p->version,
			PACK_VERSION);
		return -1;
	}
	if (pack_get32(h + 12) != 0) {
		msg_err("%s: offset 12: reserved header bytes are not zero", path);
		return -1;
	}
	/* version 2 frames go without the 4-byte zstd magic */
	ZSTD_DCtx_setParameter(p->scratch->dctx, ZSTD_d_format, p->version == 1 ? ZSTD_f_zstd1 : ZSTD_f_zstd1_magicless);
	uint8_t *b = NULL;
	size_t len;
	int rc = p->version == 1 ? open1(p, &b, &len) : p->version == 2 ? open2(p, &b, &len) : open3(p, &b, &len);
	free(b);
	if (rc == 0 && !(p->by_path = malloc((p->n ? p->n : 1) * sizeof(*p->by_path)))) {
		msg_err("%s: out of memory", path);
		rc = -1;
	}
	if (rc == 0) {
		for (size_t i = 0; i < p->n; i++) {
			p->by_path[i] = &p->members[i];
			p->members[i].is_stream = pack_is_stream_name(p->members[i].path);
		}
		qsort(p->by_path, p->n, sizeof(*p->by_path), cmp_member);
	}
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
	free(p->blocks);
	free(p->files);
	free(p->path);
	if (p->scratch) {
		ZSTD_freeDCtx(p->scratch->dctx);
		free(p->scratch->stored);
		free(p->scratch->cols);
		free(p->scratch->cache);
		free(p->scratch->tail);
		free(p->scratch->seg);
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

/* Reading one member: its bytes come in pieces (a version 1 block, or the
 * member's stretch of a version 2 block) held in buf. */
struct block_reader {
	struct pack *p;
	struct pack_member *m;
	uint32_t next; /* version 1: the next block; version 2: the block being read */
	uint64_t off; /* member offset of the next piece */
	uint8_t *raw;
	size_t raw_cap, raw_len;
};

__attribute__((format(printf, 4, 5)))
static int block_err(struct block_reader *br, uint64_t at, uint32_t k, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msg_err("%s: offset %llu: member %s, block %u: %s", br->p->path, (unsigned long long)at, br->m->path, k, text);
	return -1;
}

/* Version 1: reads, checks and decodes the member's next block into br->raw. */
static int block_next1(struct block_reader *br)
{
	uint64_t at = br->m->blocks[br->next];
	uint32_t k = br->next;
	uint8_t h[PACK1_BLOCK_HEADER_SIZE];
	if (read_at(br->p, h, sizeof(h), at, "a block header") < 0)
		return -1;
	uint32_t stored = pack_get32(h + 12), raw = pack_get32(h + 16);
	if (memcmp(h, PACK1_BLOCK_MAGIC, 4) != 0)
		return block_err(br, at, k, "bad block magic");
	if (pack_get32(h + 4) != (uint32_t)(br->m - br->p->members) || pack_get64(h + 24) != br->off)
		return block_err(br, at, k, "block belongs elsewhere (damaged index?)");
	if (h[8] > PACK_CODEC_EVENTS || raw == 0 || raw > PACK_BLOCK_RAW_MAX || raw > br->m->size - br->off ||
	    stored > ZSTD_compressBound(pack_cols_bound(PACK_BLOCK_RAW_MAX, 1)) ||
	    at + PACK1_BLOCK_HEADER_SIZE + stored > br->p->index_offset)
		return block_err(br, at, k, "impossible block header");
	struct pack_scratch *s = br->p->scratch;
	if (pack_grow(&s->stored, &s->stored_cap, stored ? stored : 1) < 0 || pack_grow(&br->raw, &br->raw_cap, raw) < 0 ||
	    (h[8] == PACK_CODEC_EVENTS && pack_grow(&s->cols, &s->cols_cap, pack_cols_bound(raw, 1)) < 0))
		return block_err(br, at, k, "out of memory");
	if (read_at(br->p, s->stored, stored, at + PACK1_BLOCK_HEADER_SIZE, "a block") < 0)
		return -1;
	if (block1_check(h, s->stored, stored) != pack_get64(h + 40))
		return block_err(br, at, k, "checksum mismatch");
	uint8_t *dst = h[8] == PACK_CODEC_EVENTS ? s->cols : br->raw;
	size_t cap = h[8] == PACK_CODEC_EVENTS ? pack_cols_bound(raw, 1) : raw;
	size_t got = ZSTD_decompressDCtx(s->dctx, dst, cap, s->stored, stored);
	if (ZSTD_isError(got))
		return block_err(br, at, k, "cannot decompress: %s", ZSTD_getErrorName(got));
	if (h[8] == PACK_CODEC_EVENTS) {
		const char *why;
		struct pack_seg seg = { raw, 0, 1 };
		if (pack_cols_decode(s->cols, got, &seg, 1, 1, 0, br->raw, raw, &why) < 0)
			return block_err(br, at, k, "%s", why);
	} else if (got != raw) {
		return block_err(br, at, k, "decompressed to %zu bytes, expected %u", got, raw);
	}
	if (pack_hash(br->raw, raw) != pack_get64(h + 32))
		return block_err(br, at, k, "content checksum mismatch");
	br->raw_len = raw;
	br->off += raw;
	br->next++;
	return 0;
}

/* Version 2: the stretches of the members in block k, as the writer cut them. */
static int block_segs(struct pack *p, size_t k, size_t *nseg)
{
	struct pack_scratch *s = p->scratch;
	const struct pack_block *b = &p->blocks[k];
	size_t lo = 0, hi = p->nfiles; /* the first file ending after the block's start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->files[mid]->pos + p->files[mid]->size <= b->pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	*nseg = 0;
	for (size_t i = lo; i < p->nfiles && p->files[i]->pos < b->pos + b->raw; i++) {
		struct pack_member *m = p->files[i];
		uint64_t from = m->pos > b->pos ? m->pos : b->pos, to = m->pos + m->size;
		if (to > b->pos + b->raw)
			to = b->pos + b->raw;
		if (to == from)
			continue;
		if (*nseg == s->seg_cap) {
			size_t cap = s->seg_cap ? 2 * s->seg_cap : 64;
			struct pack_seg *g = realloc(s->seg, cap * sizeof(*g));
			if (!g)
				return -1;
			s->seg = g;
			s->seg_cap = cap;
		}
		uint32_t len = (uint32_t)(to - from);
		uint32_t head = from == m->pos && m->is_stream ? (len < PACK2_STREAM_HEAD ? len : PACK2_STREAM_HEAD) : 0;
		s->seg[(*nseg)++] = (struct pack_seg){ len, head, m->is_stream };
	}
	return 0;
}

/* Version 2: block k decoded into the scratch cache, unless already there. */
static int block_load2(struct block_reader *br, size_t k)
{
	struct pack *p = br->p;
	struct pack_scratch *s = p->scratch;
	const struct pack_block *b = &p->blocks[k];
	if (s->cached == k + 1)
		return 0;
	s->cached = 0;
	size_t nseg = 0, cap = b->raw;
	int events = b->codec & PACK_CODEC_EVENTS;
	if (events && block_segs(p, k, &nseg) < 0)
		return block_err(br, b->off, (uint32_t)k, "out of memory");
	if (events)
		cap = pack_cols_bound(b->raw, nseg);
	if (pack_grow(&s->stored, &s->stored_cap, b->stored) < 0 || pack_grow(&s->cache, &s->cache_cap, b->raw) < 0 ||
	    (events && pack_grow(&s->cols, &s->cols_cap, cap) < 0))
		return block_err(br, b->off, (uint32_t)k, "out of memory");
	uint8_t *dst = events ? s->cols : s->cache;
	size_t got = s->tail_len;
	if (b->stored == 0) /* its bytes came with the index */
		dst = events ? s->tail : memcpy(s->cache, s->tail, got < b->raw ? got : b->raw);
	else if (read_at(p, s->stored, b->stored, b->off, "a block") < 0)
		return -1;
	else
		got = unzstd2(p, dst, cap, s->stored, b->stored, b->codec & PACK2_CODEC_DICT);
	if (ZSTD_isError(got))
		return block_err(br, b->off, (uint32_t)k, "cannot decompress: %s", ZSTD_getErrorName(got));
	if (events) {
		const char *why;
		if (pack_cols_decode(dst, got, s->seg, nseg, p->version, b->codec & PACK3_CODEC_RC, s->cache, b->raw, &why) < 0)
			return block_err(br, b->off, (uint32_t)k, "%s", why);
	} else if (got != b->raw) {
		return block_err(br, b->off, (uint32_t)k, "decompressed to %zu bytes, expected %u", got, b->raw);
	}
	if ((uint32_t)pack_hash(s->cache, b->raw) != b->check)
		return block_err(br, b->off, (uint32_t)k, "checksum mismatch");
	s->cached = k + 1;
	return 0;
}

/* Version 2: the member's next stretch into br->raw. */
static int block_next2(struct block_reader *br)
{
	struct pack *p = br->p;
	uint64_t at = br->m->pos + br->off;
	size_t lo = 0, hi = p->nblocks; /* the last block starting at or before at */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->blocks[mid].pos <= at)
			lo = mid;
		else
			hi = mid;
	}
	const struct pack_block *b = &p->blocks[lo];
	br->next = (uint32_t)lo;
	if (block_load2(br, lo) < 0)
		return -1;
	struct pack_scratch *s = p->scratch;
	uint64_t end = br->m->pos + br->m->size;
	size_t n = (size_t)((end < b->pos + b->raw ? end : b->pos + b->raw) - at);
	if (at == b->pos && n == b->raw) { /* the whole block is ours: take it rather than copy it */
		pack_swap(&br->raw, &br->raw_cap, &s->cache, &s->cache_cap);
		s->cached = 0;
	} else {
		if (pack_grow(&br->raw, &br->raw_cap, n) < 0)
			return block_err(br, b->off, (uint32_t)lo, "out of memory");
		memcpy(br->raw, s->cache + (at - b->pos), n);
	}
	br->raw_len = n;
	br->off += n;
	return 0;
}

/* The member's next piece, or 0 bytes at its end. */
static int piece_next(struct block_reader *br)
{
	br->raw_len = 0;
	if (br->p->version == 1)
		return br->next < br->m->nblocks ? block_next1(br) : 0;
	return br->off < br->m->size ? block_next2(br) : 0;
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
	uint64_t done; /* bytes given */
};

static ssize_t member_read(struct byte_src *s, void *buf, size_t n)
{
	struct member_src *ms = (struct member_src *)s;
	struct block_reader *br = &ms->br;
	if (n > s->size - ms->done) /* a caller may have cut the source short */
		n = (size_t)(s->size - ms->done);
	if (n == 0)
		return 0;
	if (ms->pos == br->raw_len) {
		if (piece_next(br) < 0)
			return -1;
		if (br->raw_len == 0)
			return br_at_end(br) < 0 ? -1 : 0;
		ms->pos = 0;
	}
	size_t k = br->raw_len - ms->pos;
	if (k > n)
		k = n;
	memcpy(buf, br->raw + ms->pos, k);
	ms->pos += k;
	ms->done += k;
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

/* Calls each(arg, raw, n) on every piece of m, in order. */
int pack_member_each(struct pack *p, struct pack_member *m, int (*each)(void *, const uint8_t *, size_t), void *arg,
		     pack_progress_fn progress, void *parg, uint64_t *done, uint64_t total)
{
	struct block_reader br;
	br_init(&br, p, m);
	int rc = 0;
	while (rc == 0) {
		if (piece_next(&br) < 0 || (br.raw_len && each && each(arg, br.raw, br.raw_len) < 0))
			rc = -1;
		if (br.raw_len == 0)
			break;
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
	for (size_t i = 0; i < p->n; i++) /* the first error only: a shared block would repeat it per member */
		if (pack_member_each(p, &p->members[i], NULL, NULL, progress, arg, &done, total) < 0)
			return -1;
	return 0;
}
