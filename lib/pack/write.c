/* Writing pack archives (version 3): walk the trace directory, lay the
 * bytes of every file end to end (small files first, so that they share
 * blocks), cut them into blocks (stream.obs at event boundaries), compress
 * the blocks on -T threads and write them in order, then the index (zstd)
 * and the trailer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include "common/xxhash.h"
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "base/event.h"
#include "base/file.h"
#include "base/msg.h"
#include "base/out.h"
#include "pack/pack.h"
#include "pack/walk.h"

uint64_t pack_hash(const void *p, size_t n)
{
	return XXH64(p, n, 0);
}

/* One block on its way from the files to the archive. */
struct job {
	uint8_t codec;
	uint8_t *raw, *cols, *out, *alt; /* grown to the largest block seen; alt: the other try */
	size_t raw_len, out_len, raw_cap, cols_cap, out_cap, alt_cap;
	size_t enc_len; /* bytes before zstd */
	int final; /* the last block: if small, left for the index's frame (out_len 0) */
	struct pack_seg *seg; /* the members' stretches in raw */
	size_t nseg, seg_cap, last; /* last: the entry of the last stretch */
	uint32_t check;
	const char *err; /* zstd's reason, if compressing failed */
	int done; /* compressed (under the pipeline's lock) */
};

struct pipeline;

struct worker {
	pthread_t th;
	ZSTD_CCtx *cctx;
	struct pipeline *pl;
};

/* Jobs go round a ring: the main thread fills them in file order, the
 * workers compress them in any order, the main thread writes them in
 * order; job s sits in slot s % njobs. */
struct pipeline {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct job *jobs;
	size_t njobs;
	uint64_t filled, taken, written; /* job counts */
	int stop, level;
};

/* Small inputs get a high level and the dictionary: they cost little
 * there and gain most (on big inputs the dictionary even costs a little);
 * blocks of small files a middle level, as most traces have few of them. */
static int level_for(size_t n, int level, int shared)
{
	int min = n <= PACK2_SMALL_INPUT ? PACK2_SMALL_LEVEL : shared ? PACK2_SHARED_LEVEL : 1;
	return level < min ? min : level;
}

/* The fast strategies (levels 1 to 4) can lose a factor of two on a block
 * of columns whose clock plane is one repeated byte (a tight loop's steps),
 * depending on the byte: ending a zstd block at each column avoids it. */
#define LEVEL_FAST_MAX 4

/* Bare frames: the index knows the sizes, and the checksums are ours.
 * Returns the frame size, or 0 with the reason in *why. */
static size_t zstd_frame_at(ZSTD_CCtx *cctx, void *dst, size_t cap, const void *src, size_t n, int l, int dict,
			    const size_t *cuts, int ncuts, const char **why)
{
	ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, l);
	if (dict)
		ZSTD_CCtx_refPrefix(cctx, pack_dict, pack_dict_size);
	if (!ncuts) {
		size_t r = ZSTD_compress2(cctx, dst, cap, src, n);
		*why = ZSTD_isError(r) ? ZSTD_getErrorName(r) : NULL;
		return *why ? 0 : r;
	}
	ZSTD_CCtx_setPledgedSrcSize(cctx, n);
	ZSTD_outBuffer out = { dst, cap, 0 };
	size_t from = 0;
	for (int i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts ? cuts[i] : n, left;
		ZSTD_inBuffer in = { (const uint8_t *)src + from, to - from, 0 };
		do
			left = ZSTD_compressStream2(cctx, &out, &in, i < ncuts ? ZSTD_e_flush : ZSTD_e_end);
		while (left && !ZSTD_isError(left) && out.pos < out.size);
		if (ZSTD_isError(left) || left) {
			*why = ZSTD_isError(left) ? ZSTD_getErrorName(left) : "no room for the frame";
			return 0;
		}
		from = to;
	}
	*why = NULL;
	return out.pos;
}

/* The same at the level level_for picks. */
static size_t zstd_frame(ZSTD_CCtx *cctx, void *dst, size_t cap, const void *src, size_t n, int level, int shared,
			 int dict, const size_t *cuts, int ncuts, const char **why)
{
	return zstd_frame_at(cctx, dst, cap, src, n, level_for(n, level, shared), dict, cuts, ncuts, why);
}

/* A small block of events: its clock column range-coded instead, if that
 * is smaller than zstd makes the byte planes (zstd finds repeated step
 * patterns the range coder does not). Only the clock column is compressed
 * to tell, and the whole block once after. */
static void choose_rc(struct job *j, ZSTD_CCtx *cctx, int level, size_t nstream, size_t *n)
{
	size_t at[4], bound = pack_cols_bound(j->raw_len, j->nseg), rn;
	pack_cols_columns(j->cols, nstream, at);
	const char *why;
	if (pack_grow(&j->alt, &j->alt_cap, bound) < 0 || pack_grow(&j->out, &j->out_cap, ZSTD_compressBound(bound)) < 0)
		return; /* out of memory here only costs the try */
	int l = level_for(*n, level, j->nseg > 1); /* the level the whole block gets */
	size_t planes = zstd_frame_at(cctx, j->out, j->out_cap, j->cols + at[1], at[2] - at[1], l, 0, NULL, 0, &why);
	if (why || !(rn = pack_cols_encode(j->raw, j->seg, j->nseg, j->alt, 1)) || pack_get32(j->alt + 4) >= planes)
		return;
	pack_swap(&j->cols, &j->cols_cap, &j->alt, &j->alt_cap);
	*n = rn;
	j->codec |= PACK3_CODEC_RC;
}

/* The block's bytes before zstd: the columns, or the bytes themselves. */
static const uint8_t *enc_bytes(const struct job *j)
{
	return j->codec & PACK_CODEC_EVENTS ? j->cols : j->raw;
}

static void compress_job(struct job *j, ZSTD_CCtx *cctx, int level)
{
	size_t n = j->raw_len, bound = pack_cols_bound(n, j->nseg);
	if ((j->codec & PACK_CODEC_EVENTS && pack_grow(&j->cols, &j->cols_cap, bound) < 0) ||
	    pack_grow(&j->out, &j->out_cap, ZSTD_compressBound(bound)) < 0) {
		j->err = "out of memory";
		return;
	}
	size_t cuts[4], nstream = 0;
	int texts = 0; /* stream.json and other metadata: what the dictionary holds */
	for (size_t i = 0; i < j->nseg; i++) {
		nstream += j->seg[i].stream;
		texts |= !j->seg[i].stream;
	}
	if (j->codec & PACK_CODEC_EVENTS) {
		n = pack_cols_encode(j->raw, j->seg, j->nseg, j->cols, 0);
		if (j->raw_len <= PACK3_RC_RAW)
			choose_rc(j, cctx, level, nstream, &n);
		pack_cols_columns(j->cols, nstream, cuts);
	}
	if (n <= PACK2_SMALL_INPUT || texts)
		j->codec |= PACK2_CODEC_DICT;
	j->enc_len = n;
	j->check = (uint32_t)pack_hash(j->raw, j->raw_len);
	j->out_len = 0;
	if (j->final && n <= PACK2_SMALL_INPUT)
		return; /* the index's frame will hold it (keep_tail) */
	int ncuts = j->codec & PACK_CODEC_EVENTS && !(j->codec & PACK3_CODEC_RC) &&
				    level_for(n, level, j->nseg > 1) <= LEVEL_FAST_MAX ?
			    4 :
			    0;
	size_t r = zstd_frame(cctx, j->out, j->out_cap, enc_bytes(j), n, level, j->nseg > 1,
			      j->codec & PACK2_CODEC_DICT, cuts, ncuts, &j->err);
	if (!j->err)
		j->out_len = r;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct pipeline *pl = w->pl;
	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (pl->taken == pl->filled && !pl->stop)
			pthread_cond_wait(&pl->work, &pl->mu);
		if (pl->taken == pl->filled)
			break;
		struct job *j = &pl->jobs[pl->taken++ % pl->njobs];
		pthread_mutex_unlock(&pl->mu);
		compress_job(j, w->cctx, pl->level);
		pthread_mutex_lock(&pl->mu);
		j->done = 1;
		pthread_cond_broadcast(&pl->done);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* Reads a member file. */
struct feed {
	struct pack_input in;
	uint8_t *buf;
	size_t fill;
	int eof;
	uint64_t off; /* member offset of buf[0] */
};

static int feed_fill(struct feed *f)
{
	while (!f->eof && f->fill < PACK_BLOCK_RAW_MAX) {
		ssize_t r = pack_input_read(&f->in, f->buf + f->fill, PACK_BLOCK_RAW_MAX - f->fill);
		if (r < 0)
			return -1;
		if (r == 0)
			f->eof = 1;
		f->fill += (size_t)r;
	}
	return 0;
}

/* A block written: what the index says of it. */
struct wblock {
	uint64_t stored, raw;
	uint32_t check;
	uint8_t codec;
};

struct writer {
	const struct pack_write_opts *o;
	struct out out;
	struct pack_entry *e;
	size_t n;
	size_t *order; /* the entries in index order: directories and links, then files */
	size_t *parent; /* by index position: the position of the directory holding it, or SIZE_MAX */
	struct job *jobs, *cur; /* cur: the block being filled */
	struct worker *workers;
	size_t njobs, nthreads, nstarted;
	struct pipeline pl;
	struct wblock *blocks;
	size_t nblocks, blocks_cap;
	const uint8_t *tail; /* the last block's bytes before zstd, when they go in the index's frame */
	size_t tail_len;
	struct job *tail_job; /* and its job, should it go alone after all */
	uint64_t done, total;
};

/* Waits for the oldest job in the ring to be compressed: it, or NULL
 * after an error. */
static struct job *wait_oldest(struct writer *w)
{
	struct pipeline *pl = &w->pl;
	struct job *j = &pl->jobs[pl->written % pl->njobs];
	if (w->nstarted) {
		pthread_mutex_lock(&pl->mu);
		while (!j->done)
			pthread_cond_wait(&pl->done, &pl->mu);
		pthread_mutex_unlock(&pl->mu);
	}
	pl->written++;
	if (j->err) {
		msg_err("%s: offset %llu: cannot compress: %s", w->out.name,
			(unsigned long long)(w->out.written + w->out.len), j->err);
		return NULL;
	}
	return j;
}

/* Adds block j to the index's list; its frame is stored bytes long. */
static int list_block(struct writer *w, const struct job *j, size_t stored, uint8_t codec)
{
	if (w->nblocks == w->blocks_cap) {
		size_t cap = w->blocks_cap ? 2 * w->blocks_cap : 16;
		struct wblock *b = realloc(w->blocks, cap * sizeof(*b));
		if (!b) {
			msg_err("out of memory");
			return -1;
		}
		w->blocks = b;
		w->blocks_cap = cap;
	}
	w->blocks[w->nblocks++] = (struct wblock){ stored, j->raw_len, j->check, codec };
	return 0;
}

/* Waits for the oldest job in the ring and writes it. */
static int write_oldest(struct writer *w)
{
	struct job *j = wait_oldest(w);
	if (!j || list_block(w, j, j->out_len, j->codec) < 0)
		return -1;
	out_mem(&w->out, j->out, j->out_len);
	w->done += j->raw_len;
	if (w->o->progress)
		w->o->progress(w->o->arg, w->done, w->total);
	return w->out.err ? -1 : 0;
}

/* Hands the block being filled to the workers (or compresses it here). */
static void submit(struct writer *w)
{
	struct pipeline *pl = &w->pl;
	struct job *j = w->cur;
	w->cur = NULL;
	if (!j || j->raw_len == 0)
		return;
	if (!w->nstarted) {
		compress_job(j, w->workers[0].cctx, pl->level);
		pl->filled++;
		return;
	}
	pthread_mutex_lock(&pl->mu);
	j->done = 0;
	pl->filled++;
	pthread_cond_signal(&pl->work);
	pthread_mutex_unlock(&pl->mu);
}

/* The block being filled, started in the next ring slot once there is room. */
static struct job *current(struct writer *w)
{
	struct pipeline *pl = &w->pl;
	if (w->cur)
		return w->cur;
	if (pl->filled - pl->written == pl->njobs && write_oldest(w) < 0)
		return NULL;
	w->cur = &pl->jobs[pl->filled % pl->njobs];
	w->cur->raw_len = 0;
	w->cur->nseg = 0;
	w->cur->codec = PACK_CODEC_ZSTD;
	w->cur->final = 0;
	return w->cur;
}

/* Appends n bytes of entry e to the block being filled: a stretch, or
 * more of the last one (a reader sees one stretch per member and block). */
static int append(struct job *j, size_t e, const uint8_t *p, size_t n, int stream, size_t head)
{
	if (pack_grow(&j->raw, &j->raw_cap, j->raw_len + n) < 0)
		return -1;
	if (j->nseg && j->last == e) {
		memcpy(j->raw + j->raw_len, p, n);
		j->raw_len += n;
		j->seg[j->nseg - 1].len += (uint32_t)n;
		return 0;
	}
	if (j->nseg == j->seg_cap) {
		size_t cap = j->seg_cap ? 2 * j->seg_cap : 64;
		struct pack_seg *s = realloc(j->seg, cap * sizeof(*s));
		if (!s)
			return -1;
		j->seg = s;
		j->seg_cap = cap;
	}
	memcpy(j->raw + j->raw_len, p, n);
	j->raw_len += n;
	j->seg[j->nseg++] = (struct pack_seg){ (uint32_t)n, (uint32_t)head, (uint8_t)stream };
	j->last = e;
	if (stream)
		j->codec = PACK_CODEC_EVENTS;
	return 0;
}

/* How much of the buffered bytes of f goes into a block with room bytes
 * left: a stream's header, then whole events. */
static size_t cut_at(struct feed *f, int stream, size_t room, size_t *head)
{
	*head = 0;
	if (!stream)
		return f->fill < room ? f->fill : room;
	if (f->off == 0)
		*head = f->fill < PACK2_STREAM_HEAD ? f->fill : PACK2_STREAM_HEAD;
	if (f->fill == *head)
		return *head;
	return *head + pack_cols_cut(f->buf + *head, f->fill - *head, room > *head ? room - *head : 0);
}

/* Every byte of entry e into blocks; a big file starts and ends its own
 * blocks, small ones share bigger blocks (alike files, such as the
 * stream.json of a thousand threads, compress against each other). */
static int pack_file(struct writer *w, struct pack_entry *e, struct feed *f)
{
	int stream = pack_is_stream_name(e->path), big = e->size > PACK2_SMALL;
	size_t target = big ? PACK_BLOCK_TARGET : PACK2_SHARED_TARGET;
	struct job *j;
	if ((big || (w->cur && w->cur->raw_len + e->size > target)))
		submit(w);
	while (1) {
		if (feed_fill(f) < 0)
			return -1;
		if (f->fill == 0)
			break;
		if (!(j = current(w)))
			return -1;
		size_t head, room = target > j->raw_len ? target - j->raw_len : 0;
		size_t cut = cut_at(f, stream, room, &head);
		/* The next bytes go whole into a new block, but for an event
		 * bigger than any block: it needs no block of its own. */
		int huge = cut > target && j->raw_len + cut <= PACK_BLOCK_RAW_MAX;
		if (j->raw_len > 0 && (cut == 0 || (cut > room && !huge))) {
			submit(w);
			continue;
		}
		if (append(j, (size_t)(e - w->e), f->buf, cut, stream, head) < 0) {
			msg_err("out of memory");
			return -1;
		}
		memmove(f->buf, f->buf + cut, f->fill - cut);
		f->fill -= cut;
		f->off += cut;
		if (j->raw_len >= target)
			submit(w);
	}
	e->size = f->off; /* what was read counts, should the file have changed */
	if (big)
		submit(w);
	return 0;
}

static void start_workers(struct writer *w)
{
	struct pipeline *pl = &w->pl;
	pthread_mutex_init(&pl->mu, NULL);
	pthread_cond_init(&pl->work, NULL);
	pthread_cond_init(&pl->done, NULL);
	pl->jobs = w->jobs;
	pl->njobs = w->njobs;
	pl->level = w->o->level;
	if (w->nthreads < 2)
		return;
	for (size_t t = 0; t < w->nthreads; t++) {
		w->workers[t].pl = pl;
		if (pthread_create(&w->workers[t].th, NULL, worker_run, &w->workers[t]) != 0)
			break; /* fewer threads do the same work */
		w->nstarted++;
	}
}

static void stop_workers(struct writer *w)
{
	struct pipeline *pl = &w->pl;
	pthread_mutex_lock(&pl->mu);
	pl->stop = 1;
	pthread_cond_broadcast(&pl->work);
	pthread_mutex_unlock(&pl->mu);
	for (size_t t = 0; t < w->nstarted; t++)
		pthread_join(w->workers[t].th, NULL);
	pthread_mutex_destroy(&pl->mu);
	pthread_cond_destroy(&pl->work);
	pthread_cond_destroy(&pl->done);
}

/* Where an entry goes: directories and links first (they have no bytes),
 * then small files that are not streams (stream.json: alike texts
 * together), small streams, big files. */
static int rank_of(const struct pack_entry *e)
{
	if (e->type != PACK_FILE)
		return 0;
	if (e->size > PACK2_SMALL)
		return 3;
	return pack_is_stream_name(e->path) ? 2 : 1;
}

/* The index order: by rank, in walk order within a rank; and the index
 * position of the directory holding each entry (SIZE_MAX at the top). */
static int order_entries(struct writer *w)
{
	size_t n = w->n ? w->n : 1, *at = malloc(n * sizeof(*at)), *stack = malloc(n * sizeof(*stack)), depth = 0;
	w->order = malloc(n * sizeof(*w->order));
	w->parent = malloc(n * sizeof(*w->parent));
	if (!at || !stack || !w->order || !w->parent) {
		free(at);
		free(stack);
		return -1;
	}
	size_t k = 0;
	for (int r = 0; r < 4; r++)
		for (size_t i = 0; i < w->n; i++)
			if (rank_of(&w->e[i]) == r) {
				at[i] = k;
				w->order[k++] = i;
			}
	/* The walk goes depth first: the directories open around an entry are a stack. */
	for (size_t i = 0; i < w->n; i++) {
		const char *path = w->e[i].path;
		while (depth) {
			const char *d = w->e[stack[depth - 1]].path;
			size_t dl = strlen(d);
			if (!strncmp(path, d, dl) && path[dl] == '/')
				break;
			depth--;
		}
		w->parent[at[i]] = depth ? at[stack[depth - 1]] : SIZE_MAX;
		if (w->e[i].type == PACK_DIR)
			stack[depth++] = i;
	}
	free(at);
	free(stack);
	return 0;
}

/* The last block: if its bytes before zstd are few, they go into the
 * index's frame (one frame less, and the names and the stream.json texts
 * compress together); else it is written as any other. */
static int keep_tail(struct writer *w)
{
	struct job *j = wait_oldest(w);
	if (!j)
		return -1;
	w->done += j->raw_len;
	if (j->out_len == 0) {
		w->tail = enc_bytes(j);
		w->tail_len = j->enc_len;
		w->tail_job = j;
		return list_block(w, j, 0, j->codec & ~PACK2_CODEC_DICT);
	}
	if (list_block(w, j, j->out_len, j->codec) < 0)
		return -1;
	out_mem(&w->out, j->out, j->out_len);
	return w->out.err ? -1 : 0;
}

static int pack_files(struct writer *w, const char *dir)
{
	struct feed f = { .in.fd = -1 };
	if (!(f.buf = malloc(PACK_BLOCK_RAW_MAX))) {
		msg_err("out of memory");
		return -1;
	}
	int rc = 0;
	start_workers(w);
	for (size_t k = 0; k < w->n && rc == 0; k++) {
		struct pack_entry *e = &w->e[w->order[k]];
		if (e->type != PACK_FILE)
			continue;
		if (pack_input_open(&f.in, dir, e, w->o, &w->total) < 0) {
			rc = -1;
			break;
		}
		f.fill = 0;
		f.eof = 0;
		f.off = 0;
		rc = pack_file(w, e, &f);
		pack_input_close(&f.in);
	}
	if (rc == 0 && w->cur)
		w->cur->final = 1;
	if (rc == 0)
		submit(w);
	while (w->pl.written + (rc == 0) < w->pl.filled)
		if (write_oldest(w) < 0)
			rc = -1;
	if (rc == 0 && w->pl.written < w->pl.filled && keep_tail(w) < 0)
		rc = -1;
	stop_workers(w);
	free(f.buf);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The entry whose time predicts that of index entry k: its directory (a
 * file is mostly as old as the directory it was last made in), or the
 * entry before it at the top. */
static const struct pack_entry *mtime_like(const struct writer *w, size_t k)
{
	if (w->parent[k] != SIZE_MAX)
		return &w->e[w->order[w->parent[k]]];
	return k ? &w->e[w->order[k - 1]] : NULL;
}

/* The index, column by column (alike numbers together compress best):
 * see FORMAT in docs/ovni-pack.1. */
static uint8_t *index_bytes(struct writer *w, size_t *len)
{
	size_t cap = 20 + 25 * w->nblocks;
	for (size_t i = 0; i < w->n; i++)
		cap += 67 + strlen(w->e[i].path) + (w->e[i].target ? strlen(w->e[i].target) : 0);
	uint8_t *b = malloc(cap), *p = b;
	if (!b)
		return NULL;
	p = pack_varint_put(p, w->n);
	p = pack_varint_put(p, w->nblocks);
	for (size_t k = 0; k < w->nblocks; k++)
		*p++ = w->blocks[k].codec;
	for (size_t k = 0; k < w->nblocks; k++)
		p = pack_varint_put(p, w->blocks[k].stored);
	for (size_t k = 0; k < w->nblocks; k++)
		p = pack_varint_put(p, w->blocks[k].raw);
	for (size_t k = 0; k < w->nblocks; k++, p += 4)
		pack_put32(p, w->blocks[k].check);
	for (size_t k = 0; k < w->n; k++)
		*p++ = w->e[w->order[k]].type;
	for (size_t k = 0; k < w->n; k++) /* how far back the directory holding it is */
		p = pack_varint_put(p, w->parent[k] == SIZE_MAX ? 0 : k - w->parent[k]);
	for (size_t k = 0; k < w->n; k++)
		p = pack_varint_put(p, strlen(base_name(w->e[w->order[k]].path)));
	for (size_t k = 0; k < w->n; k++) {
		const char *name = base_name(w->e[w->order[k]].path);
		memcpy(p, name, strlen(name));
		p += strlen(name);
	}
	for (size_t k = 0; k < w->n; k++)
		p = pack_varint_put(p, w->e[w->order[k]].mode);
	for (size_t k = 0; k < w->n; k++) {
		const struct pack_entry *e = &w->e[w->order[k]], *like = mtime_like(w, k);
		uint64_t d = (uint64_t)e->mtime_sec - (uint64_t)(like ? like->mtime_sec : 0); /* wraps, never overflows */
		p = pack_varint_put(p, pack_zigzag((int64_t)d));
	}
	for (size_t k = 0; k < w->n; k++) {
		const struct pack_entry *e = &w->e[w->order[k]], *like = mtime_like(w, k);
		p = pack_varint_put(p, pack_zigzag((int64_t)e->mtime_nsec - (like ? like->mtime_nsec : 0)));
	}
	for (size_t k = 0; k < w->n; k++)
		if (w->e[w->order[k]].type == PACK_FILE)
			p = pack_varint_put(p, w->e[w->order[k]].size);
	for (size_t k = 0; k < w->n; k++)
		if (w->e[w->order[k]].type == PACK_LINK)
			p = pack_varint_put(p, strlen(w->e[w->order[k]].target));
	for (size_t k = 0; k < w->n; k++) {
		const char *t = w->e[w->order[k]].target;
		if (w->e[w->order[k]].type == PACK_LINK) {
			memcpy(p, t, strlen(t));
			p += strlen(t);
		}
	}
	*len = (size_t)(p - b);
	return b;
}

/* The kept last block written alone after all, as any other. */
static int tail_alone(struct writer *w)
{
	struct job *j = w->tail_job;
	const char *why;
	size_t r = zstd_frame(w->workers[0].cctx, j->out, j->out_cap, w->tail, w->tail_len, w->o->level, j->nseg > 1,
			      j->codec & PACK2_CODEC_DICT, NULL, 0, &why);
	if (why) {
		msg_err("%s: offset %llu: cannot compress: %s", w->out.name,
			(unsigned long long)(w->out.written + w->out.len), why);
		return -1;
	}
	w->blocks[w->nblocks - 1].stored = r;
	w->blocks[w->nblocks - 1].codec = j->codec;
	out_mem(&w->out, j->out, r);
	w->tail = NULL;
	w->tail_len = 0;
	return 0;
}

/* The index's frame holds the index, then the kept last block's bytes,
 * unless together they are too big for the small inputs' level. */
static int write_index(struct writer *w)
{
	size_t len = 0, all;
	uint8_t *b = index_bytes(w, &len), *z = NULL, *g;
	if (b && w->tail_len && len + w->tail_len > PACK2_SMALL_INPUT) {
		free(b);
		if (tail_alone(w) < 0)
			return -1;
		b = index_bytes(w, &len);
	}
	if (b && w->tail_len && (g = realloc(b, len + w->tail_len))) {
		b = g;
		memcpy(b + len, w->tail, w->tail_len);
	} else if (w->tail_len) {
		free(b);
		b = NULL;
	}
	all = len + w->tail_len;
	size_t zcap = ZSTD_compressBound(all);
	if (!b || !(z = malloc(zcap))) {
		msg_err("out of memory");
		free(b);
		return -1;
	}
	const char *why;
	size_t zlen = zstd_frame(w->workers[0].cctx, z, zcap, b, all, w->o->level, 1, 1, NULL, 0, &why);
	if (why || all > UINT32_MAX || zlen > UINT32_MAX) {
		msg_err("%s: cannot compress the index: %s", w->out.name, why ? why : "too big");
		free(b);
		free(z);
		return -1;
	}
	uint8_t trailer[PACK3_TRAILER_SIZE];
	pack_put32(trailer, (uint32_t)zlen);
	pack_put32(trailer + 4, (uint32_t)all);
	pack_put32(trailer + 8, (uint32_t)len);
	pack_put32(trailer + 12, (uint32_t)pack_hash(b, all));
	memcpy(trailer + 16, PACK_END_MAGIC, 8);
	out_mem(&w->out, z, zlen);
	out_mem(&w->out, trailer, sizeof(trailer));
	free(b);
	free(z);
	return w->out.err ? -1 : 0;
}

static int writer_init(struct writer *w)
{
	w->nthreads = w->o->threads > 0 ? (size_t)w->o->threads : 1;
	w->njobs = w->nthreads > 1 ? w->nthreads + 2 : 1;
	w->jobs = calloc(w->njobs, sizeof(*w->jobs));
	w->workers = calloc(w->nthreads, sizeof(*w->workers));
	if (!w->jobs || !w->workers || order_entries(w) < 0)
		return -1;
	for (size_t t = 0; t < w->nthreads; t++)
		if (!(w->workers[t].cctx = ZSTD_createCCtx()))
			return -1;
	return 0;
}

static void writer_free(struct writer *w)
{
	for (size_t i = 0; w->jobs && i < w->njobs; i++) {
		free(w->jobs[i].raw);
		free(w->jobs[i].cols);
		free(w->jobs[i].out);
		free(w->jobs[i].alt);
		free(w->jobs[i].seg);
	}
	for (size_t t = 0; w->workers && t < w->nthreads; t++)
		ZSTD_freeCCtx(w->workers[t].cctx);
	free(w->jobs);
	free(w->workers);
	free(w->blocks);
	free(w->order);
	free(w->parent);
}

static int write_pack(struct writer *w, const char *dir)
{
	if (writer_init(w) < 0) {
		msg_err("out of memory");
		writer_free(w);
		return -1;
	}
	uint8_t hdr[PACK_HEADER_SIZE];
	memcpy(hdr, PACK_MAGIC, 8);
	pack_put32(hdr + 8, PACK_VERSION);
	pack_put32(hdr + 12, 0);
	out_mem(&w->out, hdr, sizeof(hdr));
	int rc = pack_files(w, dir) < 0 || write_index(w) < 0 ? -1 : 0;
	writer_free(w);
	return rc;
}

int pack_write(const char *dir, const char *out_path, const struct pack_write_opts *o)
{
	struct writer w = { .o = o };
	if (out_create(&w.out, out_path, 4u << 20) < 0)
		return -1;
	struct stat self;
	if (fstat(w.out.fd, &self) != 0 || pack_walk(dir, &self, &w.e, &w.n) < 0) {
		w.out.len = 0;
		out_close(&w.out);
		pack_entries_free(w.e, w.n);
		file_remove_partial(out_path);
		return -1;
	}
	for (size_t i = 0; i < w.n; i++)
		if (w.e[i].type == PACK_FILE)
			w.total += w.e[i].size;
	int rc = o->tar ? pack_tar_write(dir, w.e, w.n, &w.out, o) : write_pack(&w, dir);
	if (out_close(&w.out) < 0)
		rc = -1;
	pack_entries_free(w.e, w.n);
	if (rc < 0)
		file_remove_partial(out_path);
	return rc;
}
