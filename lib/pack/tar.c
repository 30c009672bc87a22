/* pack --tar: a POSIX ustar archive compressed as one zstd frame, for
 * `tar --zstd -xf`. Sizes past the 11 octal digits use the base-256 form
 * GNU tar and bsdtar read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "base/file.h"
#include "base/msg.h"
#include "pack/walk.h"

#define TAR_BLOCK 512

struct tar {
	ZSTD_CCtx *cctx;
	struct out *out;
	uint8_t *zbuf;
	size_t zcap;
	uint64_t done, total;
	const struct pack_write_opts *o;
};

static int tar_emit(struct tar *t, const void *data, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { data, n, 0 };
	for (;;) {
		ZSTD_outBuffer ob = { t->zbuf, t->zcap, 0 };
		size_t left = ZSTD_compressStream2(t->cctx, &ob, &in, mode);
		if (ZSTD_isError(left)) {
			msg_err("%s: cannot compress: %s", t->out->name, ZSTD_getErrorName(left));
			return -1;
		}
		out_mem(t->out, t->zbuf, ob.pos);
		if (t->out->err)
			return -1;
		if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
			return 0;
	}
}

static void octal(char *dst, size_t width, uint64_t v)
{
	dst[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		dst[i] = (char)('0' + (v & 7));
}

static void number(char *dst, size_t width, uint64_t v)
{
	if (v < (uint64_t)1 << (3 * (width - 1))) {
		octal(dst, width, v);
		return;
	}
	memset(dst, 0, width);
	dst[0] = (char)0x80;
	for (size_t i = width; i-- > 1 && v; v >>= 8)
		dst[i] = (char)(v & 0xff);
}

/* Fills a ustar header; -1 if the path does not fit name + prefix. */
static int header(uint8_t h[TAR_BLOCK], const struct pack_entry *e)
{
	char name[PACK_PATH_MAX + 2];
	snprintf(name, sizeof(name), "%s%s", e->path, e->type == PACK_DIR ? "/" : "");
	size_t n = strlen(name);
	memset(h, 0, TAR_BLOCK);
	char *hc = (char *)h;
	if (n <= 100) {
		memcpy(hc, name, n);
	} else {
		/* prefix = the longest head ending at a '/' that leaves <= 100 bytes */
		size_t cut = 0;
		for (size_t i = n - 1; i > 0; i--)
			if (name[i] == '/' && n - i - 1 <= 100 && n - i - 1 > 0) {
				cut = i;
				if (i <= 155)
					break;
			}
		if (!cut || cut > 155)
			return -1;
		memcpy(hc, name + cut + 1, n - cut - 1);
		memcpy(hc + 345, name, cut);
	}
	if (e->target && strlen(e->target) > 100)
		return -1;
	octal(hc + 100, 8, e->mode);
	octal(hc + 108, 8, (uint64_t)getuid());
	octal(hc + 116, 8, (uint64_t)getgid());
	number(hc + 124, 12, e->type == PACK_FILE ? e->size : 0);
	number(hc + 136, 12, e->mtime_sec < 0 ? 0 : (uint64_t)e->mtime_sec);
	hc[156] = e->type == PACK_DIR ? '5' : e->type == PACK_LINK ? '2' : '0';
	if (e->target)
		memcpy(hc + 157, e->target, strlen(e->target));
	memcpy(hc + 257, "ustar", 6);
	memcpy(hc + 263, "00", 2);
	memset(hc + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	octal(hc + 148, 7, sum);
	hc[155] = ' ';
	return 0;
}

/* The file's bytes, exactly e->size of them (a file that changed size
 * while archived is an error: the header is already written). */
static int tar_file(struct tar *t, struct pack_input *in, const struct pack_entry *e, uint8_t *buf, size_t cap)
{
	uint64_t left = e->size;
	int rc = 0;
	while (left > 0 && rc == 0) {
		ssize_t r = pack_input_read(in, buf, left < cap ? (size_t)left : cap);
		if (r <= 0) {
			if (r == 0)
				msg_err("%s: offset %llu: file shrank while being archived", in->path,
					(unsigned long long)(e->size - left));
			return -1;
		}
		rc = tar_emit(t, buf, (size_t)r, ZSTD_e_continue);
		left -= (uint64_t)r;
		t->done += (uint64_t)r;
		if (t->o->progress)
			t->o->progress(t->o->arg, t->done, t->total);
	}
	static const uint8_t zero[TAR_BLOCK];
	if (rc == 0 && e->size % TAR_BLOCK)
		rc = tar_emit(t, zero, TAR_BLOCK - e->size % TAR_BLOCK, ZSTD_e_continue);
	return rc;
}

/* Entry e: its header, and a file's bytes (opened first: a stream's tail
 * sets its size). */
static int tar_entry(struct tar *t, const char *dir, struct pack_entry *e, uint8_t *buf, size_t cap)
{
	struct pack_input in = { .fd = -1 };
	if (e->type == PACK_FILE && pack_input_open(&in, dir, e, t->o, &t->total) < 0)
		return -1;
	uint8_t h[TAR_BLOCK];
	int rc = -1;
	if (header(h, e) < 0)
		msg_err("%s: path or link target too long for ustar", e->path);
	else if (tar_emit(t, h, TAR_BLOCK, ZSTD_e_continue) == 0)
		rc = e->type == PACK_FILE ? tar_file(t, &in, e, buf, cap) : 0;
	pack_input_close(&in);
	return rc;
}

int pack_tar_write(const char *dir, struct pack_entry *e, size_t n, struct out *out, const struct pack_write_opts *o)
{
	struct tar t = { .out = out, .o = o };
	size_t cap = 1u << 20;
	uint8_t *buf = malloc(cap);
	t.zcap = ZSTD_CStreamOutSize();
	t.zbuf = malloc(t.zcap);
	t.cctx = ZSTD_createCCtx();
	for (size_t i = 0; i < n; i++)
		if (e[i].type == PACK_FILE)
			t.total += e[i].size;
	int rc = -1;
	if (!buf || !t.zbuf || !t.cctx) {
		msg_err("out of memory");
		goto out;
	}
	ZSTD_CCtx_setParameter(t.cctx, ZSTD_c_compressionLevel, o->level);
	if (o->threads > 1)
		ZSTD_CCtx_setParameter(t.cctx, ZSTD_c_nbWorkers, o->threads);
	for (size_t i = 0; i < n; i++)
		if (tar_entry(&t, dir, &e[i], buf, cap) < 0)
			goto out;
	memset(buf, 0, 2 * TAR_BLOCK);
	rc = tar_emit(&t, buf, 2 * TAR_BLOCK, ZSTD_e_end);
out:
	ZSTD_freeCCtx(t.cctx);
	free(t.zbuf);
	free(buf);
	return rc;
}
