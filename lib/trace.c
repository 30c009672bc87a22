#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/msg.h"

#define TRACE_PATH_MAX 4096

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return -1;
	l->n++;
	return 0;
}

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int join(char *dst, const char *a, const char *b)
{
	size_t la = strlen(a);
	const char *sep = la && a[la - 1] != '/' ? "/" : "";
	int n = snprintf(dst, TRACE_PATH_MAX, "%s%s%s", a, sep, b);
	if (n < 0 || n >= TRACE_PATH_MAX) {
		msg_err("%s%s%s: path too long", a, sep, b);
		return -1;
	}
	return 0;
}

/* The names in dir, read in full before any recursion so that a deep tree
 * holds one directory open at a time. */
static int list_dir(const char *dir, struct names *out)
{
	DIR *d = opendir(dir);
	if (!d) {
		msg_err("cannot open directory %s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	errno = 0;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (names_add(out, e->d_name) < 0) {
			msg_err("out of memory listing %s", dir);
			rc = -1;
			break;
		}
		errno = 0;
	}
	if (!rc && errno) {
		msg_err("cannot read directory %s: %s", dir, strerror(errno));
		rc = -1;
	}
	closedir(d);
	return rc;
}

/* Collects in found the relative path of every directory under root/rel that
 * holds a regular file (or a link to one) named stream.json. Links to
 * directories are not followed, so links cannot make loops or duplicates. */
static int walk(const char *root, const char *rel, struct names *found)
{
	char dir[TRACE_PATH_MAX], path[TRACE_PATH_MAX], sub[TRACE_PATH_MAX];
	if (join(dir, root, rel) < 0)
		return -1;
	struct names ents = { 0 };
	if (list_dir(dir, &ents) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < ents.n && rc == 0; i++) {
		const char *name = ents.v[i];
		struct stat st;
		if (join(path, dir, name) < 0 || join(sub, rel, name) < 0) {
			rc = -1;
			break;
		}
		if (lstat(path, &st) != 0) {
			if (errno == ENOENT)
				continue; /* removed while we looked */
			msg_err("cannot stat %s: %s", path, strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc = walk(root, sub, found);
		} else if (strcmp(name, "stream.json") == 0) {
			if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
				continue; /* dangling link */
			if (S_ISREG(st.st_mode) && names_add(found, rel) < 0) {
				msg_err("out of memory");
				rc = -1;
			}
		}
	}
	names_free(&ents);
	return rc;
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int load_stream(struct trace_stream *s, const char *root, const char *rel, unsigned flags)
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
		msg_err("%s: missing (a stream directory must hold stream.json and stream.obs)", path);
		return -1;
	}
	if (join(path, s->dir, "stream.json") < 0)
		return -1;
	char err[1024];
	if (!(s->json = json_parse_file(path, err, sizeof(err)))) {
		msg_err("%s", err);
		return -1;
	}
	if (meta_load(&s->meta, s->json, path, flags) < 0)
		return -1;
	if (!s->meta.is_thread)
		msg_warn("%s: ignoring stream of part \"%s\" (only thread streams are modelled)", path,
			 json_dotget(s->json, "ovni.part")->u.str.s);
	return 0;
oom:
	msg_err("out of memory");
	return -1;
}

static char *clean_root(const char *path)
{
	char *root = strdup(path);
	if (!root)
		return NULL;
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		root[--n] = '\0';
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
	/* A regular file here is where pack archives will be recognised. */
	if (!S_ISDIR(st.st_mode)) {
		msg_err("%s: not a trace directory", t->root);
		return -1;
	}
	char path[TRACE_PATH_MAX];
	if (join(path, t->root, "stream.json") < 0)
		return -1;
	if (is_file(path))
		return names_add(found, "") < 0 ? (msg_err("out of memory"), -1) : 0;
	if (walk(t->root, "", found) < 0)
		return -1;
	if (found->n == 0) {
		msg_err("%s: no streams found (a stream is a directory holding stream.json and stream.obs)", t->root);
		return -1;
	}
	qsort(found->v, found->n, sizeof(found->v[0]), cmp_str);
	return 0;
}

int trace_open(struct trace *t, const char *path, unsigned flags)
{
	memset(t, 0, sizeof(*t));
	struct names found = { 0 };
	if (!(t->root = clean_root(path))) {
		msg_err("out of memory");
		return -1;
	}
	if (find_streams(t, &found) < 0)
		goto err;
	if (!(t->streams = calloc(found.n, sizeof(*t->streams)))) {
		msg_err("out of memory");
		goto err;
	}
	for (size_t i = 0; i < found.n; i++) {
		t->n = i + 1;
		if (load_stream(&t->streams[i], t->root, found.v[i], flags) < 0)
			goto err;
	}
	names_free(&found);
	return 0;
err:
	names_free(&found);
	trace_close(t);
	return -1;
}

struct byte_src *trace_stream_src(struct trace *t, size_t i)
{
	char path[TRACE_PATH_MAX];
	if (i >= t->n || join(path, t->streams[i].dir, "stream.obs") < 0)
		return NULL;
	return byte_src_file(path);
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
	memset(t, 0, sizeof(*t));
}
