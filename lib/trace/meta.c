#include "trace/meta.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/msg.h"
#include "trace/stream.h"
#include "trace/trace.h"
#include "trace/version.h"

/* "FILE: line L, column C: text", the position being that of value at. */
__attribute__((format(printf, 3, 4)))
static int bad(const char *file, const struct json *at, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (at && at->line > 0)
		msg_err("%s: line %d, column %d: %s", file, at->line, at->col, text);
	else
		msg_err("%s: %s", file, text);
	return -1;
}

/* A string without NUL bytes, or NULL. */
static const char *plain_string(const struct json *v)
{
	if (!v || v->type != JSON_STRING || strlen(v->u.str.s) != v->u.str.len)
		return NULL;
	return v->u.str.s;
}

struct ctx {
	const char *file;
	const struct json *ovni; /* the "ovni" object, where missing keys are reported */
};

/* Integer at ovni.<key>; 1 if present, 0 if absent, -1 if not an integer. */
static int get_int(const struct ctx *c, const char *key, int64_t *out, const struct json **at)
{
	const struct json *v = json_get(c->ovni, key);
	*at = v;
	if (!v)
		return 0;
	long long n;
	if (json_int(v, &n) < 0)
		return -1;
	*out = n;
	return 1;
}

static int missing(const struct ctx *c, const char *key)
{
	return bad(c->file, c->ovni, "ovni.%s is missing", key);
}

static int load_ids(struct stream_meta *m, const struct ctx *c)
{
	const struct json *at;
	int r = get_int(c, "tid", &m->tid, &at);
	if (r == 0)
		return missing(c, "tid");
	if (r < 0 || m->tid == 0)
		return bad(c->file, at, "ovni.tid must be a non-zero integer");
	r = get_int(c, "pid", &m->pid, &at);
	if (r == 0)
		return missing(c, "pid");
	if (r < 0 || m->pid == 0)
		return bad(c->file, at, "ovni.pid must be a non-zero integer");

	at = json_get(c->ovni, "loom");
	if (!at)
		return missing(c, "loom");
	m->loom = plain_string(at);
	if (!m->loom || !m->loom[0] || strchr(m->loom, '/'))
		return bad(c->file, at, "ovni.loom must be a non-empty string without '/'");

	return 0;
}

/* The library writes app_id 0 when none was given: readers take it, emu not. */
static int load_app_id(struct stream_meta *m, const struct ctx *c, unsigned flags)
{
	const struct json *at;
	int r = get_int(c, "app_id", &m->app_id, &at);
	int strict = flags & TRACE_REQUIRE_FINISHED;
	if (r < 0 || (r > 0 && m->app_id < 0) || (r > 0 && strict && m->app_id == 0))
		return bad(c->file, at, "ovni.app_id must be an integer greater than 0");
	m->has_app_id = r > 0;
	return 0;
}

static int load_rank(struct stream_meta *m, const struct ctx *c)
{
	const struct json *at;
	int r = get_int(c, "rank", &m->rank, &at);
	if (r == 0)
		return 0; /* nranks alone means nothing */
	if (r < 0 || m->rank < 0)
		return bad(c->file, at, "ovni.rank must be an integer >= 0");
	const struct json *rank_at = at;
	r = get_int(c, "nranks", &m->nranks, &at);
	if (r == 0)
		return bad(c->file, rank_at, "ovni.nranks is missing (required with ovni.rank)");
	if (r < 0 || m->nranks <= 0)
		return bad(c->file, at, "ovni.nranks must be an integer greater than 0");
	if (m->rank >= m->nranks)
		return bad(c->file, rank_at, "ovni.rank must be lower than ovni.nranks (%lld)", (long long)m->nranks);
	m->has_rank = 1;
	return 0;
}

static int cpu_field(const char *file, const struct json *cpu, size_t i, const char *key, int64_t *out)
{
	const struct json *v = json_get(cpu, key);
	if (!v)
		return bad(file, cpu, "ovni.loom_cpus[%zu].%s is missing", i, key);
	long long n;
	if (json_int(v, &n) < 0 || n < 0)
		return bad(file, v, "ovni.loom_cpus[%zu].%s must be an integer >= 0", i, key);
	*out = n;
	return 0;
}

static int load_cpus(struct stream_meta *m, const struct ctx *c)
{
	const struct json *arr = json_get(c->ovni, "loom_cpus");
	if (!arr)
		return 0;
	if (arr->type != JSON_ARRAY || arr->u.arr.n == 0)
		return bad(c->file, arr, "ovni.loom_cpus must be a non-empty array");
	m->cpus = calloc(arr->u.arr.n, sizeof(*m->cpus));
	if (!m->cpus)
		return bad(c->file, arr, "out of memory");
	for (size_t i = 0; i < arr->u.arr.n; i++) {
		const struct json *cpu = arr->u.arr.items[i];
		if (cpu->type != JSON_OBJECT)
			return bad(c->file, cpu, "ovni.loom_cpus[%zu] must be an object with index and phyid", i);
		if (cpu_field(c->file, cpu, i, "index", &m->cpus[i].index) < 0 ||
		    cpu_field(c->file, cpu, i, "phyid", &m->cpus[i].phyid) < 0)
			return -1;
	}
	m->ncpus = arr->u.arr.n;
	m->has_cpus = 1;
	return 0;
}

static int load_lib(struct stream_meta *m, const struct ctx *c)
{
	const struct json *lib = json_get(c->ovni, "lib");
	if (!lib)
		return missing(c, "lib");
	if (lib->type != JSON_OBJECT)
		return bad(c->file, lib, "ovni.lib must be an object with version and commit");
	const char *keys[] = { "version", "commit" };
	const char **dst[] = { &m->lib_version, &m->lib_commit };
	for (int i = 0; i < 2; i++) {
		const struct json *v = json_get(lib, keys[i]);
		if (!v)
			return bad(c->file, lib, "ovni.lib.%s is missing", keys[i]);
		*dst[i] = plain_string(v);
		if (!*dst[i])
			return bad(c->file, v, "ovni.lib.%s must be a string", keys[i]);
	}
	return 0;
}

static int load_require(struct stream_meta *m, const struct ctx *c, unsigned flags)
{
	const struct json *req = json_get(c->ovni, "require");
	if (!req) {
		if (flags & TRACE_REQUIRE_FINISHED)
			return missing(c, "require");
		return 0;
	}
	if (req->type != JSON_OBJECT)
		return bad(c->file, req, "ovni.require must be an object of model name -> version");
	if (req->u.obj.n == 0)
		return 0;
	m->req = calloc(req->u.obj.n, sizeof(*m->req));
	if (!m->req)
		return bad(c->file, req, "out of memory");
	for (size_t i = 0; i < req->u.obj.n; i++) {
		struct meta_require *r = &m->req[i];
		const struct json *v = req->u.obj.vals[i];
		r->model = req->u.obj.keys[i];
		r->version = plain_string(v);
		if (!r->version || version_parse(r->version, r->v) < 0)
			return bad(c->file, v, "ovni.require.%s must be a version string such as \"1.2.3\"", r->model);
	}
	m->nreq = req->u.obj.n;
	return 0;
}

static int load_finished(struct stream_meta *m, const struct ctx *c, unsigned flags)
{
	const struct json *v = json_get(c->ovni, "finished");
	long long n = 0;
	m->finished = v && json_int(v, &n) == 0 && n == 1;
	if (m->finished || !(flags & TRACE_REQUIRE_FINISHED))
		return 0;
	const char *hint = "the thread did not end cleanly (it crashed, was killed or never called "
			   "ovni_thread_free); `ovni emu --salvage` ends it at its last event (in a copy), "
			   "and `ovni dump` reads its events";
	if (!v)
		return bad(c->file, NULL, "missing ovni.finished: %s", hint);
	return bad(c->file, v, "ovni.finished must be 1: %s", hint);
}

static int load_version(const struct json *root, const char *file)
{
	const struct json *v = json_get(root, "version");
	if (!v)
		return bad(file, root, "version is missing");
	long long n;
	if (json_int(v, &n) < 0)
		return bad(file, v, "version must be an integer");
	if (n != METADATA_VERSION)
		return bad(file, v, "metadata version mismatch %lld (expected %d)", n, METADATA_VERSION);
	return 0;
}

/* The recorder's extras: informative only, so a wrong type is ignored. */
static void load_record(struct stream_meta *m, const struct json *rec)
{
	const struct json *exe = json_get(rec, "exe"), *argv = json_get(rec, "argv");
	long long lost;
	if (exe && plain_string(exe))
		m->exe = exe->u.str.s;
	if (argv && argv->type == JSON_ARRAY) {
		m->argv = argv;
		for (size_t i = 0; i < argv->u.arr.n; i++)
			if (!plain_string(argv->u.arr.items[i]))
				m->argv = NULL;
	}
	if (json_int(json_get(rec, "kernel_lost"), &lost) == 0 && lost > 0)
		m->kernel_lost = lost;
}

static int load(struct stream_meta *m, const struct json *root, const char *file, unsigned flags)
{
	if (root->type != JSON_OBJECT)
		return bad(file, root, "stream metadata must be a JSON object");
	if (load_version(root, file) < 0)
		return -1;
	struct ctx c = { file, json_get(root, "ovni") };
	if (!c.ovni)
		return bad(file, root, "ovni is missing");
	if (c.ovni->type != JSON_OBJECT)
		return bad(file, c.ovni, "ovni must be an object");
	const struct json *part = json_get(c.ovni, "part");
	if (!part)
		return missing(&c, "part");
	if (!plain_string(part))
		return bad(file, part, "ovni.part must be a string");
	m->is_thread = strcmp(part->u.str.s, "thread") == 0;
	if (!m->is_thread)
		return 0;
	if (load_finished(m, &c, flags) < 0 || load_ids(m, &c) < 0 || load_app_id(m, &c, flags) < 0 || load_rank(m, &c) < 0 ||
	    load_cpus(m, &c) < 0 || load_lib(m, &c) < 0 || load_require(m, &c, flags) < 0)
		return -1;
	m->marks = json_get(c.ovni, "mark");
	if (m->marks && m->marks->type != JSON_OBJECT)
		return bad(file, m->marks, "ovni.mark must be an object");
	load_record(m, json_get(root, "record"));
	return 0;
}

int meta_load(struct stream_meta *m, const struct json *root, const char *file, unsigned trace_flags)
{
	memset(m, 0, sizeof(*m));
	if (load(m, root, file, trace_flags) < 0) {
		meta_free(m);
		return -1;
	}
	return 0;
}

void meta_free(struct stream_meta *m)
{
	free(m->cpus);
	free(m->req);
	memset(m, 0, sizeof(*m));
}
