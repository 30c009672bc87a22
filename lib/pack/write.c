/* Writing pack archives: walk the trace directory, cut each file into
 * blocks (stream.obs at event boundaries), compress batches of blocks on
 * -T threads and write them in order, then the index and the trailer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include "common/xxhash.h"
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

uint64_t pack_block_check(const uint8_t *hdr, const void *stored, size_t n)
{
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	XXH64_update(&st, hdr, 40);
	XXH64_update(&st, stored, n);
	return XXH64_digest(&st);
}

/* One block on its way from the file to the archive. */
struct job {
	uint32_t member;
	uint8_t codec;
	uint64_t member_off;
	uint8_t *raw, *cols, *out; /* grown to the largest block seen */
	size_t raw_len, out_len, raw_cap, cols_cap, out_cap;
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

static void compress_job(struct job *j, ZSTD_CCtx *cctx, int level)
{
	const uint8_t *src = j->raw;
	size_t n = j->raw_len;
	if ((j->codec == PACK_CODEC_EVENTS && pack_grow(&j->cols, &j->cols_cap, pack_cols_bound(n)) < 0) ||
	    pack_grow(&j->out, &j->out_cap, PACK_BLOCK_HEADER_SIZE + ZSTD_compressBound(pack_cols_bound(n))) < 0) {
		j->err = "out of memory";
		return;
	}
	if (j->codec == PACK_CODEC_EVENTS) {
		n = pack_cols_encode(j->raw, j->raw_len, j->cols);
		src = j->cols;
	}
	uint8_t *hdr = j->out;
	size_t r = ZSTD_compressCCtx(cctx, hdr + PACK_BLOCK_HEADER_SIZE, j->out_cap - PACK_BLOCK_HEADER_SIZE, src, n, level);
	if (ZSTD_isError(r)) {
		j->err = ZSTD_getErrorName(r);
		return;
	}
	j->err = NULL;
	memcpy(hdr, PACK_BLOCK_MAGIC, 4);
	pack_put32(hdr + 4, j->member);
	memset(hdr + 8, 0, 4);
	hdr[8] = j->codec;
	pack_put32(hdr + 12, (uint32_t)r);
	pack_put32(hdr + 16, (uint32_t)j->raw_len);
	pack_put32(hdr + 20, 0);
	pack_put64(hdr + 24, j->member_off);
	pack_put64(hdr + 32, pack_hash(j->raw, j->raw_len));
	pack_put64(hdr + 40, pack_block_check(hdr, hdr + PACK_BLOCK_HEADER_SIZE, r));
	j->out_len = PACK_BLOCK_HEADER_SIZE + r;
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

/* Reads a member file and hands out its blocks. */
struct feed {
	int fd;
	const char *path;
	uint8_t *buf;
	size_t fill;
	int eof, is_stream;
	uint64_t off; /* member offset of buf[0] */
};

static int feed_fill(struct feed *f)
{
	while (!f->eof && f->fill < PACK_BLOCK_RAW_MAX) {
		ssize_t r = read(f->fd, f->buf + f->fill, PACK_BLOCK_RAW_MAX - f->fill);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			msg_err("%s: offset %llu: cannot read: %s", f->path,
				(unsigned long long)(f->off + f->fill), strerror(errno));
			return -1;
		}
		if (r == 0)
			f->eof = 1;
		f->fill += (size_t)r;
	}
	return 0;
}

/* Moves the next block into j; returns 1, 0 at the end of the file, -1. */
static int feed_next(struct feed *f, struct job *j)
{
	if (feed_fill(f) < 0)
		return -1;
	if (f->fill == 0)
		return 0;
	size_t cut;
	j->codec = PACK_CODEC_ZSTD;
	if (f->is_stream && f->off == 0) {
		cut = f->fill < STREAM_HEADER_SIZE ? f->fill : STREAM_HEADER_SIZE;
	} else if (f->is_stream) {
		cut = pack_cols_cut(f->buf, f->fill, PACK_BLOCK_TARGET);
		j->codec = PACK_CODEC_EVENTS;
	} else {
		cut = f->fill < PACK_BLOCK_TARGET ? f->fill : PACK_BLOCK_TARGET;
	}
	if (pack_grow(&j->raw, &j->raw_cap, cut) < 0) {
		msg_err("out of memory");
		return -1;
	}
	memcpy(j->raw, f->buf, cut);
	j->raw_len = cut;
	j->member_off = f->off;
	memmove(f->buf, f->buf + cut, f->fill - cut);
	f->fill -= cut;
	f->off += cut;
	return 1;
}

struct writer {
	const struct pack_write_opts *o;
	struct out out;
	struct pack_entry *e;
	size_t n;
	struct job *jobs;
	struct worker *workers;
	size_t njobs, nthreads, nstarted;
	struct pipeline pl;
	uint64_t done, total;
};

static int add_block(struct pack_entry *e, uint64_t off)
{
	if (e->nblocks == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 8;
		uint64_t *b = realloc(e->blocks, cap * sizeof(*b));
		if (!b)
			return -1;
		e->blocks = b;
		e->cap = cap;
	}
	e->blocks[e->nblocks++] = off;
	return 0;
}

/* Waits for the oldest job in the ring and writes it. */
static int write_oldest(struct writer *w)
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
	struct pack_entry *e = &w->e[j->member];
	if (j->err) {
		msg_err("%s: offset %llu: cannot compress: %s", e->path, (unsigned long long)j->member_off, j->err);
		return -1;
	}
	if (add_block(e, w->out.written + w->out.len) < 0) {
		msg_err("out of memory");
		return -1;
	}
	out_mem(&w->out, j->out, j->out_len);
	e->size = j->member_off + j->raw_len;
	w->done += j->raw_len;
	if (w->o->progress)
		w->o->progress(w->o->arg, w->done, w->total);
	return w->out.err ? -1 : 0;
}

/* Hands the job just filled to the workers (or compresses it here). */
static void submit(struct writer *w, struct job *j)
{
	struct pipeline *pl = &w->pl;
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

/* The slot for the next job, once the ring has room. */
static struct job *next_slot(struct writer *w, int *rc)
{
	struct pipeline *pl = &w->pl;
	if (pl->filled - pl->written == pl->njobs && write_oldest(w) < 0)
		*rc = -1;
	return &pl->jobs[pl->filled % pl->njobs];
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

static int pack_files(struct writer *w, const char *dir)
{
	struct feed f = { .fd = -1 };
	if (!(f.buf = malloc(PACK_BLOCK_RAW_MAX))) {
		msg_err("out of memory");
		return -1;
	}
	int rc = 0;
	start_workers(w);
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		struct pack_entry *e = &w->e[i];
		if (e->type != PACK_FILE)
			continue;
		char *path = file_join(dir, e->path);
		if (!path || (f.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
			msg_err("%s: cannot open: %s", path ? path : e->path, path ? strerror(errno) : "out of memory");
			free(path);
			rc = -1;
			break;
		}
		f.path = path;
		f.fill = 0;
		f.eof = 0;
		f.off = 0;
		f.is_stream = pack_is_stream_name(e->path);
		e->size = 0; /* what is read counts, should the file change */
		while (rc == 0) {
			struct job *j = next_slot(w, &rc);
			int r = rc ? 0 : feed_next(&f, j);
			if (r < 0)
				rc = -1;
			if (r <= 0)
				break;
			j->member = (uint32_t)i;
			submit(w, j);
		}
		close(f.fd);
		free(path);
	}
	while (w->pl.written < w->pl.filled)
		if (write_oldest(w) < 0)
			rc = -1;
	stop_workers(w);
	free(f.buf);
	return rc;
}

static int write_index(struct writer *w)
{
	size_t len = 8;
	for (size_t i = 0; i < w->n; i++)
		len += 2 + strlen(w->e[i].path) + 1 + 4 + 8 + 4 + 8 + 2 +
		       (w->e[i].target ? strlen(w->e[i].target) : 0) + 4 + 8 * w->e[i].nblocks;
	uint8_t *b = malloc(len), *p = b;
	if (!b) {
		msg_err("out of memory");
		return -1;
	}
	memcpy(p, PACK_INDEX_MAGIC, 4);
	pack_put32(p + 4, (uint32_t)w->n);
	p += 8;
	for (size_t i = 0; i < w->n; i++) {
		struct pack_entry *e = &w->e[i];
		size_t pl = strlen(e->path), tl = e->target ? strlen(e->target) : 0;
		p[0] = (uint8_t)pl;
		p[1] = (uint8_t)(pl >> 8);
		memcpy(p + 2, e->path, pl);
		p += 2 + pl;
		*p++ = e->type;
		pack_put32(p, e->mode);
		pack_put64(p + 4, (uint64_t)e->mtime_sec);
		pack_put32(p + 12, e->mtime_nsec);
		pack_put64(p + 16, e->size);
		p[24] = (uint8_t)tl;
		p[25] = (uint8_t)(tl >> 8);
		p += 26;
		if (tl)
			memcpy(p, e->target, tl);
		p += tl;
		pack_put32(p, (uint32_t)e->nblocks);
		p += 4;
		for (size_t k = 0; k < e->nblocks; k++, p += 8)
			pack_put64(p, e->blocks[k]);
	}
	uint8_t trailer[PACK_TRAILER_SIZE];
	pack_put64(trailer, w->out.written + w->out.len);
	pack_put64(trailer + 8, len);
	pack_put64(trailer + 16, pack_hash(b, len));
	memcpy(trailer + 24, PACK_END_MAGIC, 8);
	out_mem(&w->out, b, len);
	out_mem(&w->out, trailer, sizeof(trailer));
	free(b);
	return w->out.err ? -1 : 0;
}

static int writer_init(struct writer *w)
{
	w->nthreads = w->o->threads > 0 ? (size_t)w->o->threads : 1;
	w->njobs = w->nthreads > 1 ? w->nthreads + 2 : 1;
	w->jobs = calloc(w->njobs, sizeof(*w->jobs));
	w->workers = calloc(w->nthreads, sizeof(*w->workers));
	if (!w->jobs || !w->workers)
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
	}
	for (size_t t = 0; w->workers && t < w->nthreads; t++)
		ZSTD_freeCCtx(w->workers[t].cctx);
	free(w->jobs);
	free(w->workers);
}

static int write_pack(struct writer *w, const char *dir)
{
	if (writer_init(w) < 0) {
		msg_err("out of memory");
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
	int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		msg_err("%s: cannot create: %s", out_path, strerror(errno));
		return -1;
	}
	struct stat self;
	if (fstat(fd, &self) != 0 || pack_walk(dir, &self, &w.e, &w.n) < 0 ||
	    out_init(&w.out, fd, out_path, 4u << 20) < 0) {
		close(fd);
		pack_entries_free(w.e, w.n);
		unlink(out_path);
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
		unlink(out_path);
	return rc;
}
