/* Pack archives: a whole trace directory in one file, compressed with zstd,
 * every block checksummed, an index at the end so that one member can be
 * read without the others. The layout is documented in docs/ovni-pack.1
 * (FORMAT). Integers are little-endian. */
#ifndef OVNI_PACK_H
#define OVNI_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "base/bytes.h"

#define PACK_MAGIC "OVNIPACK"
#define PACK_END_MAGIC "OVNIPEND"
#define PACK_VERSION 3u /* written; versions 1 and 2 are still read */
#define PACK_HEADER_SIZE 16 /* magic, u32 version, u32 zero */
#define PACK_BLOCK_TARGET (1u << 20) /* member bytes per block: bounds reader memory */
#define PACK_BLOCK_RAW_MAX (4u << 20) /* a block holds one whole jumbo event at most this big */
#define PACK_PATH_MAX 4095

/* Version 1: a 48-byte header before each block, the index plain. */
#define PACK1_TRAILER_SIZE 32 /* u64 index offset, u64 size, u64 xxh64, magic */
#define PACK1_BLOCK_MAGIC "OBLK"
#define PACK1_BLOCK_HEADER_SIZE 48
#define PACK1_INDEX_MAGIC "OIDX"

/* Version 2: blocks are bare zstd frames described by the index. */
#define PACK2_TRAILER_SIZE 24 /* u32 index stored size, u32 raw size, u32 check, u32 check, magic */
#define PACK2_SMALL (256u << 10) /* files up to this size share blocks */
#define PACK2_SHARED_TARGET PACK_BLOCK_RAW_MAX /* bytes of small files per block */
#define PACK2_SMALL_INPUT (128u << 10) /* zstd input up to this size gets level PACK2_SMALL_LEVEL */
#define PACK2_SMALL_LEVEL 15 /* 19 (btultra2) took 1.6x the time on 20-128 KiB inputs for 0.4% less */
#define PACK2_SHARED_LEVEL 6 /* the least level of blocks holding several files */
#define PACK2_STREAM_HEAD 8 /* the stream header, kept verbatim */
#define PACK3_TRAILER_SIZE 24 /* u32 index frame size, u32 its content size, u32 index size, u32 check, magic */
#define PACK3_RC_RAW (512u << 10) /* blocks up to this size also try the range-coded clock */

/* The zstd dictionary of version 2 and 3 frames (lib/pack/dict.c):
 * version 2 uses its first PACK2_DICT_SIZE bytes, version 3 all of them. */
extern const char pack_dict[];
extern const size_t pack_dict_size;
#define PACK2_DICT_SIZE 2331u
static inline size_t pack_dict_len(unsigned version)
{
	return version == 2 ? PACK2_DICT_SIZE : pack_dict_size;
}

enum pack_codec {
	PACK_CODEC_ZSTD = 0, /* the bytes, zstd-compressed */
	PACK_CODEC_EVENTS = 1, /* stream.obs events split into columns, then zstd */
	PACK2_CODEC_DICT = 2, /* version 2, a flag: the frame refers to the dictionary */
	PACK3_CODEC_RC = 4, /* version 3, with PACK_CODEC_EVENTS: the clock column is range-coded */
};

enum pack_type { PACK_FILE = 0, PACK_DIR = 1, PACK_LINK = 2 };

/* Progress of long runs, called between blocks. */
typedef void (*pack_progress_fn)(void *arg, uint64_t done, uint64_t total);

struct pack_member {
	char *path; /* relative, '/'-separated, no "." or ".." parts */
	char *target; /* PACK_LINK: where the link points */
	uint8_t type;
	uint8_t is_stream; /* named stream.obs: its bytes go through the event columns */
	uint32_t mode; /* permission bits (07777) */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint64_t size; /* PACK_FILE: bytes */
	uint32_t nblocks; /* version 1: the member's own blocks */
	uint64_t *blocks; /* version 1: file offset of each block, in member order */
	uint64_t pos; /* version 2: where its bytes start in the bytes of every file, in index order */
};

/* A version 2 block: a zstd frame holding the next raw bytes of the files. */
struct pack_block {
	uint64_t off; /* file offset of the frame */
	uint64_t pos; /* where its bytes start in the bytes of every file */
	uint32_t stored, raw; /* frame size, decoded size */
	uint32_t check; /* low 32 bits of the xxh64 of the decoded bytes */
	uint8_t codec;
};

struct pack {
	char *path; /* the archive, for messages */
	int fd;
	unsigned version;
	uint64_t file_size, index_offset;
	size_t n;
	struct pack_member *members;
	struct pack_member **by_path; /* members sorted by path, for pack_find */
	size_t nblocks; /* version 2 */
	struct pack_block *blocks;
	size_t nfiles; /* version 2: the file members in index order, which is their bytes' order */
	struct pack_member **files;
	struct pack_scratch *scratch; /* decoding buffers and the last block decoded, shared by every member: one thread reads */
};

/* A stretch of one member inside a block, as the column transform sees it:
 * a stream's bytes are its first head bytes verbatim (the stream header),
 * then events, then whatever does not parse as events; other files' bytes
 * are verbatim. */
struct pack_seg {
	uint32_t len, head;
	uint8_t stream;
};

/* Column transform of stream events (lib/pack/cols.c). pack_cols_encode
 * writes the n = sum of seg[].len bytes at src into dst (pack_cols_bound
 * bytes) and returns the encoded size; nothing is lost whatever the bytes.
 * rc: the clock column range-coded (version 3, PACK3_CODEC_RC), last; then
 * 0 if it did not fit or memory ran out. */
size_t pack_cols_bound(size_t n, size_t nseg);
size_t pack_cols_encode(const uint8_t *src, const struct pack_seg *seg, size_t nseg, uint8_t *dst, int rc);
/* Where the columns of an encoding with nstream stream segments start: the
 * flags and MCV, the clock, the payloads, the verbatim bytes. */
void pack_cols_columns(const uint8_t *enc, size_t nstream, size_t at[4]);
/* Rebuilds exactly raw_size bytes into dst; returns 0, or -1 (with a reason
 * in *why) when src is not a valid encoding of that format version: 1 (one
 * segment, no event counts, clock steps unsigned), 2 (one clock) or 3 (the
 * current: kernel events step from their own clock). */
int pack_cols_decode(const uint8_t *src, size_t n, const struct pack_seg *seg, size_t nseg, unsigned version, int rc,
		     uint8_t *dst, size_t raw_size, const char **why);
/* The range coder of version 3 clock columns (lib/pack/rc.c). Models are
 * one allocation (free with free()), fresh for each block. The encoder
 * writes at most cap bytes; pack_rc_enc_end returns the size, or 0 if they
 * did not fit. pack_rc_get_step returns -1 on an impossible symbol;
 * pack_rc_dec_ok is 0 if decoding read past the end. */
struct pack_rc_models;
struct pack_rc_enc {
	uint64_t low, pending;
	uint32_t range;
	uint8_t cache;
	int first, over;
	uint8_t *p, *start, *end;
};
struct pack_rc_dec {
	uint32_t range, code;
	size_t over;
	const uint8_t *p, *end;
};
struct pack_rc_models *pack_rc_models_new(void);
void pack_rc_enc_init(struct pack_rc_enc *e, uint8_t *dst, size_t cap);
void pack_rc_put_step(struct pack_rc_enc *e, struct pack_rc_models *m, const uint8_t hdr[4], uint64_t step);
size_t pack_rc_enc_end(struct pack_rc_enc *e);
void pack_rc_dec_init(struct pack_rc_dec *d, const uint8_t *src, size_t n);
int pack_rc_get_step(struct pack_rc_dec *d, struct pack_rc_models *m, const uint8_t hdr[4], uint64_t *step);
int pack_rc_dec_ok(const struct pack_rc_dec *d);

/* Where to cut a stream.obs block: the end of the last whole event in
 * buf[0, n) at most max bytes in, or n if the bytes stop looking like events. */
size_t pack_cols_cut(const uint8_t *buf, size_t n, size_t max);

/* Little-endian helpers shared by the writer and the reader. */
static inline void pack_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void pack_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t pack_get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static inline uint64_t pack_get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t pack_hash(const void *p, size_t n);

/* LEB128 numbers of the version 2 index. pack_varint_get returns 0, or -1
 * if the number runs past end or past 64 bits. */
static inline uint8_t *pack_varint_put(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	return p;
}
static inline int pack_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return shift == 63 && b > 1 ? -1 : 0;
	}
	return -1;
}
static inline uint64_t pack_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t pack_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* 1 if the last part of path is stream.obs (lib/pack/walk.c). */
int pack_is_stream_name(const char *path);

/* Reading (lib/pack/read.c). pack_is_archive: 1 if path is a regular file
 * starting with the pack magic. */
int pack_is_archive(const char *path);
/* Opens and checks the trailer and index. Returns 0, or -1 after one error
 * line naming the archive and offset. */
int pack_open(struct pack *p, const char *path);
void pack_close(struct pack *p);
/* The member at path, or NULL. */
struct pack_member *pack_find(struct pack *p, const char *path);
/* A byte_src decoding member m block by block (memory: a few blocks). */
struct byte_src *pack_member_src(struct pack *p, struct pack_member *m);
/* The whole member in a malloc'd buffer (+1 byte NUL-terminated). */
char *pack_member_read(struct pack *p, struct pack_member *m, size_t *len);

/* Calls each(arg, bytes, n) on every block of m in order (each may be
 * NULL: checks only); *done counts the bytes for progress(parg, done, total). */
int pack_member_each(struct pack *p, struct pack_member *m, int (*each)(void *, const uint8_t *, size_t), void *arg,
		     pack_progress_fn progress, void *parg, uint64_t *done, uint64_t total);
/* Decodes every block of every member and checks every checksum. Returns
 * 0, or -1 after an error naming the member and offset. */
int pack_verify(struct pack *p, pack_progress_fn progress, void *arg);
/* Writes every member under dir (created if missing). Refuses paths that
 * leave dir and links pointing out of it; refuses existing files unless
 * force. Returns 0 or -1 after an error. */
int pack_extract(struct pack *p, const char *dir, int force, pack_progress_fn progress, void *arg);

/* Writing (lib/pack/write.c): always the current version. */
struct pack_write_opts {
	int level; /* zstd level */
	int threads; /* compression threads, >= 1 */
	int tar; /* write a ustar archive compressed by zstd instead */
	pack_progress_fn progress;
	void *arg;
	/* The bytes of a stream.obs beyond its file: called on each, open as
	 * fd; 1 when from offset *from on the member holds the n bytes at
	 * *bytes (malloc'd) instead, 0 when it holds the file as it is, -1
	 * after a message. NULL: every file as it is. `ovni pack` adds the
	 * events a killed recording left in staging files (lib/trace/stage.h). */
	int (*stream_tail)(const char *path, int fd, uint64_t *from, uint8_t **bytes, size_t *n);
};
/* Packs every file, directory and link under dir into out (created). */
int pack_write(const char *dir, const char *out, const struct pack_write_opts *o);

/* *b grown to at least n bytes (*cap its size): 0, or -1 out of memory. */
static inline int pack_grow(uint8_t **b, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *g = realloc(*b, n);
	if (!g)
		return -1;
	*b = g;
	*cap = n;
	return 0;
}

/* Two grown buffers (pack_grow) trade places, sizes with them. */
static inline void pack_swap(uint8_t **a, size_t *acap, uint8_t **b, size_t *bcap)
{
	uint8_t *t = *a;
	size_t tc = *acap;
	*a = *b;
	*acap = *bcap;
	*b = t;
	*bcap = tc;
}

#endif
