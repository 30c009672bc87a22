#include "trace/trace.h"
#include "trace/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/file.h"
#include "base/msg.h"
#include "pack/pack.h"
#include "pack/walk.h"
#include "trace/stream.h"

#define TRACE_PATH_MAX 4096

struct names {
	char **v;
	size_t n, cap;
	const char *root; /* of the trace, for messages */
	size_t orphans; /* stream.obs files without a stream.json beside them */
};

#define MAX_ORPHANS_NAMED 10

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A stream.obs at path with no stream.json beside it (a libovni program
 * that died before writing it): its events are not read, which the user
 * is told, as the reference leaves it out without a word. */
static void orphan(struct names *found, const char *path)
{
	if (++found->orphans <= MAX_ORPHANS_NAMED)
		msg_warn("%s/%s: no stream.json beside it: its events are left out%s", found->root, path,
			 found->orphans == MAX_ORPHANS_NAMED ? " (further ones are not named)" : "");
}

static int is_obs(const char *rel)
{
	const char *base = strrchr(rel, '/');
	return strcmp(base ? base + 1 : rel, "stream.obs") == 0;
}

/* The path of the stream.json beside the stream.obs at obs; -1 if too long. */
static int json_beside(const char *obs, char json[TRACE_PATH_MAX])
{
	size_t k = strlen(obs) - strlen("stream.obs");
	if (k + sizeof("stream.json") > TRACE_PATH_MAX)
		return -1;
	memcpy(json, obs, k);
	memcpy(json + k, "stream.json", sizeof("stream.json"));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int names_add(struct names *l, const char *s, size_t n)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strndup(s, n)))
		return -1;
	l->n++;
	return 0;
}

/* The length of the directory part of rel when rel names a stream.json
 * ("" at the root: 0), else SIZE_MAX. */
static size_t meta_dir_len(const char *rel)
{
	const char *base = strrchr(rel, '/');
	if (strcmp(base ? base + 1 : rel, "stream.json") != 0)
		return SIZE_MAX;
	return base ? (size_t)(base - rel) : 0;
}

/* The stream directories found, sorted by path; none is an error. */
static int sort_found(struct names *found, const char *root, const char *where)
{
	if (found->n == 0) {
		msg_err("%s: no streams %s (a stream is a directory holding stream.json and stream.obs)", root, where);
		return -1;
	}
	qsort(found->v, found->n, sizeof(found->v[0]), cmp_str);
	return 0;
}

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int join(char *dst, const char *a, const char *b)
{
	if (file_join_to(dst, TRACE_PATH_MAX, a, b) < TRACE_PATH_MAX)
		return 0;
	msg_err("%s/%s: path too long", a, b);
	return -1;
}

/* Every directory under the root holding a regular file, or a link to one,
 * named stream.json (links to directories are not followed: no loops, no
 * duplicates); an entry removed while we look is no error. */
static int visit(void *arg, const char *rel, const char *full, const struct stat *st)
{
	struct names *found = arg;
	if (!st) {
		if (errno == ENOENT && *rel)
			return 0;
		msg_err("%s: cannot read: %s", full, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st->st_mode))
		return 1;
	if (is_obs(rel)) {
		char json[TRACE_PATH_MAX];
		if (json_beside(full, json) == 0 && !is_file(json))
			orphan(found, rel);
		return 0;
	}
	size_t n = meta_dir_len(rel);
	if (n == SIZE_MAX)
		return 0;
	struct stat target;
	if (S_ISLNK(st->st_mode) && stat(full, &target) != 0)
		return 0; /* dangling link */
	if (S_ISLNK(st->st_mode) ? !S_ISREG(target.st_mode) : !S_ISREG(st->st_mode))
		return 0;
	if (names_add(found, rel, n) < 0) {
		msg_err("out of memory");
		return -1;
	}
	return 0;
}

/* A buffer reused for every stream.json: allocating one per file makes the
 * allocator map and unmap memory for each, which dominates large traces. */
struct text {
	char *s;
	size_t len, cap;
};

static int read_file(const char *path, struct text *t)
{
	int r = file_read_all(path, &t->s, &t->cap, &t->len);
	if (r != 0)
		msg_err("%s: cannot %s: %s", path, r == FILE_CANNOT_OPEN ? "open" : "read", strerror(errno));
	return r;
}

/* s->json and s->meta from the stream.json text read from path. */
static int parse_meta(struct trace_stream *s, const char *path, const char *text, size_t len, unsigned flags)
{
	if (!(s->json = json_parse(text, len))) {
		msg_err("%s: %s", path, fail_take());
		return -1;
	}
	if (meta_load(&s->meta, s->json, path, flags) < 0)
		return -1;
	if (!s->meta.is_thread)
		msg_warn("%s: ignoring stream of part \"%s\" (only thread streams are modelled)", path,
			 json_dotget(s->json, "ovni.part")->u.str.s);
	return 0;
}

/* 1 after a message when an interrupted `ovni sort` left its journal beside
 * the stream (its stream.obs may be half rewritten), or the path is too long. */
static int sort_pending(const struct trace_stream *s)
{
	char path[TRACE_PATH_MAX];
	if (join(path, s->dir, "stream.obs" STREAM_JOURNAL_SUFFIX) < 0)
		return 1;
	if (access(path, F_OK) != 0)
		return 0;
	msg_err("%s: an interrupted `ovni sort` left %s; run `ovni sort` on the trace to finish it", s->obs_name,
		path);
	return 1;
}

static int load_stream(struct trace_stream *s, const char *root, const char *rel, unsigned flags, struct text *text)
{
	char path[TRACE_PATH_MAX];
	if (!(s->relpath = strdup(rel)))
		goto oom;
	if (join(path, root, rel) < 0)
		return -1;
	if (!(s->dir = strdup(*rel ? path : root)))
		goto oom;
	if (join(path, rel, "stream.obs") < 0)
		return -1;
	if (!(s->obs_name = strdup(path)))
		goto oom;

	if (join(path, s->dir, "stream.obs") < 0)
		return -1;
	if (!is_file(path)) {
		msg_err("%s: %s (a stream directory must hold stream.json and stream.obs)", path,
			access(path, F_OK) == 0 ? "not a regular file" : "missing");
		return -1;
	}
	if (!(flags & TRACE_SORT_PENDING_OK) && sort_pending(s))
		return -1;
	if (join(path, s->dir, "stream.json") < 0 || read_file(path, text) < 0)
		return -1;
	return parse_meta(s, path, text->s, text->len, flags);
oom:
	msg_err("out of memory");
	return -1;
}

static char *clean_root(const char *path)
{
	char *root = strdup(path);
	if (root)
		file_strip_slashes(root);
	return root;
}

/* The stream directories of the trace at t->root, relative to it. */
static int find_streams(struct trace *t, struct names *found)
{
	struct stat st;
	if (stat(t->root, &st) != 0) {
		msg_err("cannot open trace %s: %s", t->root, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		msg_err("%s: not a trace directory", t->root);
		return -1;
	}
	char path[TRACE_PATH_MAX];
	if (join(path, t->root, "stream.json") < 0)
		return -1;
	if (is_file(path))
		return names_add(found, "", 0) < 0 ? (msg_err("out of memory"), -1) : 0;
	found->root = t->root;
	if (file_walk(t->root, visit, found) < 0)
		return -1;
	return sort_found(found, t->root, "found");
}

/* The streams of a pack archive: every stream.json member next to a
 * stream.obs member. */
static int find_archive_streams(struct trace *t, struct names *found)
{
	struct pack *p = t->archive;
	found->root = t->root;
	for (size_t i = 0; i < p->n; i++) {
		struct pack_member *m = &p->members[i];
		if (m->type == PACK_FILE && is_obs(m->path)) {
			char json[TRACE_PATH_MAX];
			if (json_beside(m->path, json) == 0) {
				const struct pack_member *j = pack_find(p, json);
				if (!j || j->type != PACK_FILE)
					orphan(found, m->path);
			}
			continue;
		}
		size_t n = meta_dir_len(m->path);
		if (m->type != PACK_FILE || n == SIZE_MAX)
			continue;
		if (names_add(found, m->path, n) < 0) {
			msg_err("out of memory");
			return -1;
		}
	}
	return sort_found(found, t->root, "in the archive");
}

static int load_archive_stream(struct trace *t, struct trace_stream *s, const char *rel, unsigned flags)
{
	struct pack *p = t->archive;
	char path[TRACE_PATH_MAX];
	if (!(s->relpath = strdup(rel)) || !(s->dir = file_join(t->root, rel)))
		goto oom;
	if (join(path, rel, "stream.obs") < 0 || !(s->obs_name = strdup(path)))
		return -1;
	struct pack_member *obs = pack_find(p, path);
	if (!obs || obs->type != PACK_FILE) {
		msg_err("%s/%s: missing (a stream directory must hold stream.json and stream.obs)", t->root, path);
		return -1;
	}
	s->obs_member = obs;
	if (join(path, rel, "stream.obs" STREAM_JOURNAL_SUFFIX) < 0)
		return -1;
	if (pack_find(p, path)) { /* packed half-sorted: unpack, then `ovni sort` */
		msg_err("%s/%s: an interrupted `ovni sort` left %s in the archive; unpack it and run `ovni sort` "
			"on the trace to finish it", t->root, s->obs_name, path);
		return -1;
	}
	if (join(path, rel, "stream.json") < 0)
		return -1;
	size_t len;
	char *text = pack_member_read(p, pack_find(p, path), &len);
	if (!text)
		return -1;
	int rc = join(path, s->dir, "stream.json") < 0 ? -1 : parse_meta(s, path, text, len, flags);
	free(text);
	return rc;
oom:
	msg_err("out of memory");
	return -1;
}

static int open_archive(struct trace *t, unsigned flags)
{
	struct names found = { 0 };
	if (!(t->archive = malloc(sizeof(struct pack)))) {
		msg_err("out of memory");
		return -1;
	}
	if (pack_open(t->archive, t->root) < 0 || find_archive_streams(t, &found) < 0)
		goto err;
	if (!(t->streams = calloc(found.n, sizeof(*t->streams)))) {
		msg_err("out of memory");
		goto err;
	}
	for (size_t i = 0; i < found.n; i++) {
		t->n = i + 1;
		if (load_archive_stream(t, &t->streams[i], found.v[i], flags) < 0)
			goto err;
	}
	names_free(&found);
	return 0;
err:
	names_free(&found);
	trace_close(t);
	return -1;
}

int trace_open(struct trace *t, const char *path, unsigned flags)
{
	memset(t, 0, sizeof(*t));
	struct names found = { 0 };
	if (!(t->root = clean_root(path))) {
		msg_err("out of memory");
		return -1;
	}
	if (pack_is_archive(t->root))
		return open_archive(t, flags);
	if (find_streams(t, &found) < 0)
		goto err;
	if (!(t->streams = calloc(found.n, sizeof(*t->streams)))) {
		msg_err("out of memory");
		goto err;
	}
	struct text text = { 0 };
	for (size_t i = 0; i < found.n; i++) {
		t->n = i + 1;
		if (load_stream(&t->streams[i], t->root, found.v[i], flags, &text) < 0) {
			free(text.s);
			goto err;
		}
	}
	free(text.s);
	names_free(&found);
	return 0;
err:
	names_free(&found);
	trace_close(t);
	return -1;
}

/* Where the events of an unfinished stream end when the rest of it is
 * zeros (the tail of the last window `ovni record` mapped, left as it was
 * because the recorder was killed too) or one event cut short (a staged
 * stream whose recorder was killed ends where its last slot written
 * ended): the event walk from the header on, over bytes that come in
 * pieces (a file, an archive member), remembering the boundary after the
 * last event with a non-zero byte. */
struct tail_scan {
	uint64_t pos; /* bytes seen */
	uint64_t start; /* of the event being read */
	uint64_t need; /* bytes of it still to come after its header */
	uint64_t cand; /* the boundary after the last event with a non-zero byte */
	uint8_t head[EV_JUMBO_HEADER_SIZE];
	size_t nhead, want; /* header bytes held and needed; nhead 0: at a boundary */
	int nonzero; /* in the event being read */
};

static int any_nonzero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 1;
	return 0;
}

static void scan_bytes(struct tail_scan *t, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t k;
		if (t->nhead == 0) {
			t->start = t->pos;
			t->want = ev_head_size(p[0]);
			t->nonzero = 0;
		}
		if (t->nhead < t->want) {
			k = t->want - t->nhead < n ? t->want - t->nhead : n;
			memcpy(t->head + t->nhead, p, k);
			t->nhead += k;
			if (t->nhead == t->want)
				t->need = ev_size(t->head) - t->want;
		} else {
			k = t->need < n ? (size_t)t->need : n;
			t->need -= k;
		}
		t->nonzero = t->nonzero || any_nonzero(p, k);
		t->pos += k;
		p += k;
		n -= k;
		if (t->nhead == t->want && t->need == 0) { /* the event ends here */
			if (t->nonzero)
				t->cand = t->pos;
			t->nhead = 0;
		}
	}
}

/* That end for the size bytes of s, or size when there is no such tail
 * (or s cannot be read). */
static uint64_t events_end(struct byte_src *s, uint64_t size, int *zeros)
{
	*zeros = 0;
	uint8_t buf[64 * 1024];
	struct tail_scan t = { .pos = STREAM_HEADER_SIZE, .cand = STREAM_HEADER_SIZE }; /* the walk starts after the header */
	uint64_t seen = 0;
	ssize_t r;
	while ((r = s->read(s, buf, sizeof(buf))) > 0) {
		size_t skip = seen < STREAM_HEADER_SIZE ? STREAM_HEADER_SIZE - (size_t)seen : 0;
		skip = skip < (size_t)r ? skip : (size_t)r;
		seen += (uint64_t)r;
		scan_bytes(&t, buf + skip, (size_t)r - skip);
	}
	if (r < 0 || seen != size || size <= STREAM_HEADER_SIZE)
		return size; /* the reader reports it */
	if (t.nhead > 0 && t.nonzero)
		return t.start; /* an event cut short */
	*zeros = t.cand < size;
	return t.cand;
}

/* Stream i is an unfinished stream file: 1 with its path and status. */
static int unfinished_file(const struct trace *t, size_t i, char path[TRACE_PATH_MAX], struct stat *st)
{
	return i < t->n && !t->archive && !t->streams[i].meta.finished &&
	       join(path, t->streams[i].dir, "stream.obs") == 0 && stat(path, st) == 0;
}

int trace_stream_zero_tail(const struct trace *t, size_t i, uint64_t *end)
{
	char path[TRACE_PATH_MAX];
	struct stat st;
	if (!unfinished_file(t, i, path, &st))
		return 0;
	int zeros;
	struct byte_src *src = byte_src_file(path);
	*end = src ? events_end(src, (uint64_t)st.st_size, &zeros) : (uint64_t)st.st_size;
	if (src)
		src->close(src);
	return *end < (uint64_t)st.st_size ? 1 + !zeros : 0;
}

int trace_stream_staged(const struct trace *t, size_t i, uint64_t *size)
{
	char path[TRACE_PATH_MAX], staged[TRACE_PATH_MAX];
	struct stat st;
	if (!unfinished_file(t, i, path, &st))
		return 0;
	int fd = stage_open_for(&st, staged, sizeof(staged));
	if (fd >= 0)
		close(fd);
	*size = (uint64_t)st.st_size;
	return fd >= 0;
}

/* Unfinished streams named in a warning, at most this many a run. */
#define ZERO_TAILS_NAMED 10

/* The events of unfinished stream i end at end, before zero bytes (tail
 * 1) or an event cut short (2): src stops there, with a warning. */
static void cut_tail(struct trace *t, size_t i, struct byte_src *src, uint64_t end, int tail)
{
	if (end >= src->size)
		return;
	if (++t->zero_tails <= ZERO_TAILS_NAMED)
		msg_warn("%s: offset %llu: unfinished (its thread did not end): the %llu %s after "
			 "its last event are not read%s", t->streams[i].obs_name, (unsigned long long)end,
			 (unsigned long long)(src->size - end), tail == 1 ? "zero bytes" : "bytes of an event cut short",
			 t->zero_tails == ZERO_TAILS_NAMED ? " (further such streams not named)" : "");
	src->size = end;
}

struct byte_src *trace_stream_src(struct trace *t, size_t i)
{
	char path[TRACE_PATH_MAX];
	if (i < t->n && t->archive) {
		struct byte_src *m = pack_member_src(t->archive, t->streams[i].obs_member), *scan;
		if (m && !t->streams[i].meta.finished &&
		    (scan = pack_member_src(t->archive, t->streams[i].obs_member))) {
			int zeros;
			uint64_t end = events_end(scan, m->size, &zeros);
			scan->close(scan);
			cut_tail(t, i, m, end, 1 + !zeros);
		}
		return m;
	}
	if (i >= t->n || join(path, t->streams[i].dir, "stream.obs") < 0)
		return NULL;
	struct byte_src *src = byte_src_file(path);
	/* Under the lock now: a sort that ran since trace_open may have died
	 * half way through. */
	if (src && sort_pending(&t->streams[i])) {
		src->close(src);
		return NULL;
	}
	char staged[TRACE_PATH_MAX];
	uint64_t from = 0;
	struct byte_src *over = src && !t->streams[i].meta.finished ? stage_overlay(path, src, staged, sizeof(staged), &from)
								   : src;
	if (over != src) {
		if (++t->zero_tails <= ZERO_TAILS_NAMED)
			msg_warn("%s: offset %llu: unfinished (its thread did not end): its events from here on are "
				 "read from its staging file %s (the next `ovni record` writes them into the stream)%s",
				 t->streams[i].obs_name, (unsigned long long)from, staged,
				 t->zero_tails == ZERO_TAILS_NAMED ? " (further such streams not named)" : "");
		return over;
	}
	uint64_t end;
	int tail = src ? trace_stream_zero_tail(t, i, &end) : 0;
	if (tail)
		cut_tail(t, i, src, end, tail);
	return src;
}

char *trace_read_extra(struct trace *t, const char *name, size_t *len, int *absent)
{
	*absent = 0;
	if (t->archive) {
		struct pack_member *m = pack_find(t->archive, name);
		if (!m || m->type != PACK_FILE) {
			*absent = 1;
			return NULL;
		}
		return pack_member_read(t->archive, m, len);
	}
	char path[TRACE_PATH_MAX];
	if (join(path, t->root, name) < 0)
		return NULL;
	if (!is_file(path)) {
		*absent = 1;
		return NULL;
	}
	struct text text = { 0 };
	if (read_file(path, &text) < 0) {
		free(text.s);
		return NULL;
	}
	char *s = realloc(text.s, text.len + 1);
	if (!s) {
		free(text.s);
		msg_err("out of memory");
		return NULL;
	}
	s[text.len] = '\0';
	*len = text.len;
	return s;
}

void trace_close(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct trace_stream *s = &t->streams[i];
		meta_free(&s->meta);
		json_free(s->json);
		free(s->relpath);
		free(s->dir);
		free(s->obs_name);
	}
	free(t->streams);
	free(t->root);
	if (t->archive) {
		pack_close(t->archive);
		free(t->archive);
	}
	memset(t, 0, sizeof(*t));
}

/* Whether the resolved path p lies under the resolved directory dir. */
static int under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1) /* "/" */
		return 1;
	return strncmp(p, dir, n) == 0 && p[n] == '/';
}

int trace_reads_file(const char *path, const char *out)
{
	struct stat so, st;
	if (stat(out, &so) != 0 || !S_ISREG(so.st_mode) || stat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return so.st_dev == st.st_dev && so.st_ino == st.st_ino;
	char *o = realpath(out, NULL), *d = realpath(path, NULL);
	int reads = 0;
	if (o && d) {
		const char *base = strrchr(o, '/') + 1; /* absolute: there is one */
		reads = (strcmp(base, "stream.obs") == 0 || strcmp(base, "stream.json") == 0) && under(o, d);
	}
	free(o);
	free(d);
	return reads;
}
