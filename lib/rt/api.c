/* The libovni 1.x API (spec runtime.md section 1): same functions, checks
 * and messages. Differences, all on the safe side: events go to a shared
 * file mapping (ovni_flush and ovni_thread_free lose nothing), stream.obs is
 * truncated when a thread starts, and stream.json is replaced atomically. */
#include "base/event.h"
#include "rt/instr.h"
#include "rt/kernel.h"
#include "base/fail.h"
#include "rt/rt.h"
#include "base/file.h"
#include "trace/blockmark.h"
#include "trace/kspill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OVNI_VERSION
#define OVNI_VERSION "0"
#endif

struct rt_proc rt_proc; /* zero: state UNINIT, clockid CLOCK_REALTIME */
__thread struct rt_thread rt_self __attribute__((tls_model("initial-exec"))) = { .slot = -1 };
uint8_t rt_filter[256];
uint8_t rt_emit_filter[1 << 16];

/* ---- Versions ---- */

static int parse_version(const char *s, int v[3])
{
	if (!s || strlen(s) > 63)
		return -1;
	for (int i = 0; i < 3; i++) {
		char *end;
		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		long n = strtol(s, &end, 10);
		if (errno || n > 0x7fffffff)
			return -1;
		if (i < 2 ? *end != '.' : (*end != '\0' && *end != '.' && *end != '-'))
			return -1;
		v[i] = (int)n;
		s = end + 1;
	}
	return 0;
}

RT_API void ovni_version_check_str(const char *version)
{
	int want[3], have[3];
	if (!version || parse_version(version, want) != 0)
		rt_die("ovni_version_check_str", "failed to parse provided version \"%s\"", version ? version : "(null)");
	parse_version(OVNI_LIB_VERSION, have);
	if (want[0] != have[0])
		rt_die("ovni_version_check_str", "incompatible ovni major version: wants %s, got %s", version, OVNI_LIB_VERSION);
	if (want[1] > have[1])
		rt_die("ovni_version_check_str", "incompatible ovni minor version: wants %s, got %s", version, OVNI_LIB_VERSION);
}

RT_API void ovni_version_get(const char **version, const char **commit)
{
	if (version)
		*version = OVNI_LIB_VERSION;
	if (commit)
		*commit = "ovni-record-" OVNI_VERSION;
}

/* ---- Event kinds ---- */

static const struct {
	const char *name;
	char id;
} models[] = {
	{ "ovni", 'O' }, { "nanos6", '6' }, { "nosv", 'V' }, { "nodes", 'D' }, { "tampi", 'T' },
	{ "mpi", 'M' }, { "openmp", 'P' }, { "kernel", 'K' },
};

/* OVNI_EVENTS: comma-separated model names, or "all". Unselected models
 * are dropped in the slow path of ovni_ev_emit; the ovni model (threads)
 * is always recorded, and in record mode its thread events (OH*, OA*) are
 * checked there too: rt_emit_filter sends only those to the slow path, so
 * that the other ovni events (OB., OU[, marks) take the fast one. */
void rt_select_events(void)
{
	const char *sel = rt_env("OVNI_EVENTS");
	memset(rt_filter, 0, sizeof(rt_filter));
	if (sel && *sel && strcmp(sel, "all") != 0) {
		memset(rt_filter, RT_FILTER_DROP, sizeof(rt_filter));
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", sel);
		for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
				if (strcmp(tok, models[i].name) == 0)
					rt_filter[(uint8_t)models[i].id] = 0;
		}
	}
	rt_filter['O'] = rt_record_mode ? RT_FILTER_CHECK : 0;
	/* rows left as they are stay untouched pages (64 KiB in all) */
	for (int m = 0; m < 256; m++) {
		uint8_t v = rt_filter[m] & RT_FILTER_DROP;
		if (rt_emit_filter[m << 8] != v || rt_emit_filter[(m << 8) | 255] != v)
			memset(rt_emit_filter + (m << 8), v, 256);
	}
	uint8_t own = rt_record_mode ? RT_FILTER_CHECK : 0;
	rt_emit_filter[RT_EMIT_KEY('O', 'H')] = own;
	rt_emit_filter[RT_EMIT_KEY('O', 'A')] = own;
}

/* ---- Process ---- */

static void proc_path(char *dst, const char *root)
{
	if ((size_t)snprintf(dst, PATH_MAX, "%s/loom.%s/proc.%d", root, rt_proc.loom, rt_proc.pid) >= PATH_MAX)
		rt_die("ovni_proc_init", "path too long");
}

RT_API void ovni_proc_init(int app, const char *loom, int pid)
{
	/* Record mode has already set the process up. */
	if (rt_record_mode && atomic_load(&rt_proc.state) == RT_READY)
		return;
	int expected = RT_UNINIT;
	if (!atomic_compare_exchange_strong(&rt_proc.state, &expected, RT_INIT)) {
		if (expected == RT_INIT)
			rt_die("ovni_proc_init", "pid %d already being initialized", pid);
		if (expected == RT_READY)
			rt_die("ovni_proc_init", "pid %d already initialized", pid);
		rt_die("ovni_proc_init", "pid %d has finished, cannot init again", pid);
	}
	if (!loom || strlen(loom) >= OVNI_MAX_HOSTNAME)
		rt_die("ovni_proc_init", "loom name too long");
	rt_proc.app = app;
	rt_proc.pid = pid;
	strcpy(rt_proc.loom, loom);
	rt_proc.clockid = CLOCK_MONOTONIC;
	rt_select_events();
	if (!rt_clock.use_tsc)
		rt_clock_init();
	const char *root = rt_env("OVNI_TRACEDIR");
	const char *tmp = rt_env("OVNI_TMPDIR");
	if ((size_t)snprintf(rt_proc.root, PATH_MAX, "%s", root && *root ? root : OVNI_TRACEDIR) >= PATH_MAX ||
	    (size_t)snprintf(rt_proc.tmproot, PATH_MAX, "%s", tmp ? tmp : "") >= PATH_MAX)
		rt_die("ovni_proc_init", "path too long");
	char dir[PATH_MAX];
	proc_path(dir, rt_proc.root);
	/* record mode: its threads' streams are lost, not the program */
	if (rt_mkpath(dir) != 0 && !rt_record_mode)
		rt_die("ovni_proc_init", "cannot create directory %s: %s", dir, strerror(errno));
	if (rt_proc.tmproot[0]) {
		proc_path(dir, rt_proc.tmproot);
		if (rt_mkpath(dir) != 0 && !rt_record_mode)
			rt_die("ovni_proc_init", "cannot create directory %s: %s", dir, strerror(errno));
	}
	atomic_store(&rt_proc.state, RT_READY);
}

static void need_ready_thread(const char *func)
{
	if (!rt_self.ready)
		rt_die(func, "thread not initialized");
}

RT_API void ovni_proc_set_rank(int rank, int nranks)
{
	if (atomic_load(&rt_proc.state) != RT_READY)
		rt_die("ovni_proc_set_rank", "process not yet initialized");
	need_ready_thread("ovni_proc_set_rank");
	rt_self.has_rank = 1;
	rt_self.rank = rank;
	rt_self.nranks = nranks;
	rt_meta_changed(&rt_self);
}

RT_API void ovni_proc_fini(void)
{
	if (rt_record_mode)
		return;
	int expected = RT_READY;
	if (!atomic_compare_exchange_strong(&rt_proc.state, &expected, RT_GONE))
		rt_die("ovni_proc_fini", "process not ready");
	if (!rt_proc.tmproot[0])
		return;
	char dir[PATH_MAX];
	proc_path(dir, rt_proc.tmproot);
	for (int i = 0; i < 3; i++) {
		if (rmdir(dir) != 0 && errno != ENOTEMPTY && errno != ENOENT && errno != EEXIST)
			rt_warn("WARN: cannot remove %s: %s\n", dir, strerror(errno));
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

/* ---- Threads ---- */

static void thread_path(char *dst, const char *root, int tid)
{
	if ((size_t)snprintf(dst, PATH_MAX, "%s/loom.%s/proc.%d/thread.%d", root, rt_proc.loom, rt_proc.pid, tid) >= PATH_MAX)
		rt_die("ovni_thread_init", "path too long");
}

void rt_require(struct rt_thread *t, const char *model, const char *version)
{
	char key[128];
	snprintf(key, sizeof(key), "ovni.require.%s", model);
	if (json_dotset(t->meta, key, json_new_string(version)) != 0)
		rt_die("ovni_thread_require", "out of memory");
}

/* Loads the metadata an exec'd image left (marks, attributes), so the
 * stream goes on as one thread. */
static int resume_meta(struct rt_thread *t)
{
	struct json *m = json_parse_file(t->where->json);
	if (!m || m->type != JSON_OBJECT) {
		json_free(m);
		return -1;
	}
	json_free(t->meta);
	t->meta = m;
	long long fin = 0;
	t->was_cut = json_int(json_dotget(m, "ovni.finished"), &fin) != 0 || fin != 1;
	if (json_dotset(m, "ovni.finished", json_new_number(0)) != 0)
		rt_die("ovni_thread_init", "out of memory");
	/* the block mark of the image before an exec: its waits are in the
	 * stream, and the renders declare it from now on (a program's own
	 * mark 99 can still take its place) */
	if (blockmark_declared(m)) {
		if (blockmark_withdraw(m) != 0)
			rt_die("ovni_thread_init", "out of memory");
		t->instr |= RT_INSTR_BLOCK;
	}
	return 0;
}

/* Streams open in this process, as getpid() << 32 | count: a forked
 * child starts from none (the parent's are not its own). */
static _Atomic uint64_t open_streams;

static void streams_add(int d, int *last)
{
	uint64_t me = (uint64_t)(uint32_t)getpid() << 32, v = atomic_load(&open_streams), n;
	do {
		uint32_t c = (v & ~0xffffffffull) == me ? (uint32_t)v : 0;
		if (d < 0 && c == 0)
			return; /* opened in the parent */
		n = me | (uint32_t)(c + (uint32_t)d);
	} while (!atomic_compare_exchange_weak(&open_streams, &v, n));
	if (last)
		*last = (uint32_t)n == 0;
}

void rt_thread_after_end(struct rt_thread *t)
{
	if (t->was_last && (atomic_load(&open_streams) & 0xffffffffu) == 0) /* none opened since */
		rt_helpers_stop();
	t->was_last = 0;
}

void rt_thread_start(struct rt_thread *t, int tid, int resume)
{
	struct rt_where *w = t->where;
	free(t->cpus);
	free(t->final_json);
	free(t->final_blk);
	free(t->final_old);
	free(t->mreq); /* a forked child's copy of its parent's: none of it in flight here */
	rt_side_free(t);
	json_free(t->meta);
	memset(t, 0, sizeof(*t)); /* no zeroed copy on the stack: it may be small */
	t->slot = -1;
	t->where = w = w ? w : malloc(sizeof(*w));
	if (!w)
		rt_die("ovni_thread_init", "out of memory");
	t->tid = tid;
	thread_path(w->final_dir, rt_proc.root, tid);
	if (rt_proc.tmproot[0])
		thread_path(w->dir, rt_proc.tmproot, tid);
	else
		strcpy(w->dir, w->final_dir);
	/* record mode: the stream that cannot be opened then is lost, the
	 * program goes on (rt_stream_open) */
	int moved = strcmp(w->dir, w->final_dir) != 0; /* made in OVNI_TMPDIR */
	if ((rt_mkpath(w->final_dir) != 0 || (moved && rt_mkpath(w->dir) != 0)) && !rt_record_mode)
		rt_die("ovni_thread_init", "cannot create directory %s: %s", w->dir, strerror(errno));
	if (file_join_to(w->obs.path, sizeof(w->obs.path), w->dir, "stream.obs") >= sizeof(w->obs.path) ||
	    file_join_to(w->json, sizeof(w->json), w->dir, "stream.json") >= sizeof(w->json) ||
	    file_join_to(w->final_obs, sizeof(w->final_obs), w->final_dir, "stream.obs") >= sizeof(w->final_obs) ||
	    file_join_to(w->final_json, sizeof(w->final_json), w->final_dir, "stream.json") >= sizeof(w->final_json))
		rt_die("ovni_thread_init", "path too long: %s", w->dir);
	if (file_join_to(w->spill, sizeof(w->spill), w->dir, KSPILL_NAME) >= sizeof(w->spill))
		w->spill[0] = '\0';
	/* Record mode: a stream of this pid and tid already there (an exec from
	 * another thread, a reused pid) goes on instead of being overwritten. */
	if (rt_record_mode)
		rt_move_back(t);
	resume = rt_stream_open(t, resume);
	if (!resume || resume_meta(t) != 0) {
		rt_meta_init(t);
		if (!rt_record_mode) /* record mode writes it once its slot and rank are set */
			rt_meta_write(t);
		rt_require(t, "ovni", OVNI_MODEL_VERSION);
	}
	t->ready = 1;
	streams_add(1, NULL);
}

/* Stream cut to its events, final metadata, files moved: system calls only,
 * so a program's signal handler that calls exit() can finish its thread. */
void rt_thread_end(struct rt_thread *t)
{
	t->ready = 0;
	rt_stream_close(t);
	if (!t->lost)
		rt_meta_write_final(t);
	else /* unfinished: the recorder ends its stream at its last event */
		rt_meta_hand_over(t);
	rt_move_files(t);
	t->finished = 1;
	streams_add(-1, &t->was_last);
}

/* The heap a finished thread holds; not from a signal handler (free). */
void rt_thread_release(struct rt_thread *t)
{
	json_free(t->meta);
	t->meta = NULL;
	free(t->final_json);
	t->final_json = NULL;
	free(t->final_blk);
	t->final_blk = NULL;
	free(t->final_old);
	t->final_old = NULL;
	free(t->mreq); /* its stream is closed: no request in flight */
	t->mreq = NULL;
	free(t->cpus);
	t->cpus = NULL;
	t->ncpus = t->capcpus = 0;
	free(t->where);
	t->where = NULL;
	rt_side_free(t);
}

RT_API void ovni_thread_init(pid_t tid)
{
	struct rt_thread *t = &rt_self;
	if (t->ready) {
		if (!t->automatic)
			rt_warn("WARN: thread %d already initialized, ignored\n", t->tid);
		return;
	}
	if (t->finished)
		rt_die("ovni_thread_init", "thread %d has finished, cannot init again", t->tid);
	if (tid == 0)
		rt_die("ovni_thread_init", "cannot use tid=%d", tid);
	if (atomic_load(&rt_proc.state) != RT_READY)
		rt_die("ovni_thread_init", "process not yet initialized");
	rt_thread_start(t, tid, 0);
	rt_mapper_prepare(t);
	rt_meta_changed(t);
}

RT_API void ovni_thread_require(const char *model, const char *version)
{
	need_ready_thread("ovni_thread_require");
	if (!model)
		rt_die("ovni_thread_require", "model string is NULL");
	if (strlen(model) <= 1 || strpbrk(model, " ."))
		rt_die("ovni_thread_require", "malformed model name \"%s\"", model);
	int v[3];
	if (!version || parse_version(version, v) != 0)
		rt_die("ovni_thread_require", "cannot parse version \"%s\"", version ? version : "(null)");
	rt_require(&rt_self, model, version);
	rt_meta_changed(&rt_self);
}

RT_API void ovni_thread_free(void)
{
	struct rt_thread *t = &rt_self;
	if (t->finished)
		rt_die("ovni_thread_free", "thread already finished");
	if (!t->ready)
		rt_die("ovni_thread_free", "thread not initialized");
	if (t->automatic)
		return; /* record mode ends it when the thread really ends */
	rt_thread_end(t);
	rt_thread_after_end(t);
	rt_thread_release(t);
}

RT_API int ovni_thread_isready(void)
{
	return rt_self.ready;
}

RT_API void ovni_add_cpu(int index, int phyid)
{
	if (index < 0)
		rt_die("ovni_add_cpu", "cannot use negative index %d", index);
	if (phyid < 0)
		rt_die("ovni_add_cpu", "cannot use negative CPU id %d", phyid);
	if (atomic_load(&rt_proc.state) != RT_READY)
		rt_die("ovni_add_cpu", "process not yet initialized");
	need_ready_thread("ovni_add_cpu");
	struct rt_thread *t = &rt_self;
	if (t->automatic)
		return; /* record mode lists the loom's CPUs itself */
	if (t->ncpus == t->capcpus) {
		size_t cap = t->capcpus ? t->capcpus * 2 : 64;
		struct rt_cpu *c = realloc(t->cpus, cap * sizeof(*c));
		if (!c)
			rt_die("ovni_add_cpu", "out of memory");
		t->cpus = c;
		t->capcpus = cap;
	}
	t->cpus[t->ncpus++] = (struct rt_cpu){ index, phyid };
	rt_meta_changed(t);
}

/* ---- Events ---- */

RT_API void ovni_ev_set_clock(struct ovni_ev *ev, uint64_t clock)
{
	ev->header.clock = clock;
}

RT_API uint64_t ovni_ev_get_clock(const struct ovni_ev *ev)
{
	return ev->header.clock;
}

RT_API void ovni_ev_set_mcv(struct ovni_ev *ev, const char *mcv)
{
	ev->header.model = (uint8_t)mcv[0];
	ev->header.category = (uint8_t)mcv[1];
	ev->header.value = (uint8_t)mcv[2];
}

RT_API int ovni_payload_size(const struct ovni_ev *ev)
{
	if (ev->header.flags & EV_FLAG_JUMBO)
		return 4 + (int)ev->payload.jumbo.size;
	return (int)EV_PAYLOAD_SIZE(ev->header.flags & 0x0fu);
}

RT_API int ovni_ev_size(const struct ovni_ev *ev)
{
	return EV_HEADER_SIZE + ovni_payload_size(ev);
}

RT_API void ovni_payload_add(struct ovni_ev *ev, const uint8_t *buf, int size)
{
	if (ev->header.flags & EV_FLAG_JUMBO)
		rt_die("ovni_payload_add", "the event payload must not be jumbo");
	if (size < 2)
		rt_die("ovni_payload_add", "payload size %d too small", size);
	int cur = ovni_payload_size(ev);
	if (cur + size > EV_MAX_PAYLOAD)
		rt_die("ovni_payload_add", "no space left for %d bytes", size);
	memcpy(&ev->payload.u8[cur], buf, (size_t)size);
	ev->header.flags = (uint8_t)((ev->header.flags & 0xf0) | ((cur + size - 1) & 0x0f));
}

/* 1 if t may emit now; 0 in record mode when it may not (after its end:
 * late destructors; or never traced); else func aborts. */
static int emit_ready(const struct rt_thread *t, const char *func)
{
	if (t->ready)
		return 1;
	if (rt_record_mode)
		return 0;
	rt_die(func, "thread is not initialized");
}

/* Everything the fast path of ovni_ev_emit does not do. */
void rt_emit_slow(struct rt_thread *t, struct ovni_ev *ev)
{
	if (!emit_ready(t, "ovni_ev_emit"))
		return;
	if (ev->header.flags & EV_FLAG_JUMBO)
		rt_die("ovni_ev_emit", "use ovni_ev_jumbo_emit for jumbo events");
	uint8_t f = rt_emit_filter[RT_EMIT_KEY(ev->header.model, ev->header.category)];
	if (f & RT_FILTER_DROP)
		return;
	if ((f & RT_FILTER_CHECK) && rt_record_owns(t, ev))
		return;
	rt_stream_put(t, ev, (size_t)ovni_ev_size(ev));
}

RT_API void ovni_ev_emit(struct ovni_ev *ev)
{
	struct rt_thread *t = &rt_self;
	unsigned flags = ev->header.flags;
	if (RT_UNLIKELY(rt_emit_filter[RT_EMIT_KEY(ev->header.model, ev->header.category)] | (flags & (EV_FLAG_JUMBO | EV_FLAG_RESERVED)) |
			((size_t)(t->end - t->pos) < RT_SLACK) | rt_guard_busy(t))) {
		rt_emit_slow(t, ev);
		return;
	}
	rt_guard_take(t);
	/* Copied field by field as the setters wrote them: the clock was
	 * usually stored just before (ovni_ev_set_clock), and one wide load
	 * across it waits for the store instead of taking its bytes. */
	uint8_t *p = t->pos;
	const uint8_t *e = (const uint8_t *)ev;
	uint32_t head;
	uint64_t clock;
	memcpy(&head, e, 4);
	memcpy(&clock, e + 4, 8);
	memcpy(p, &head, 4);
	memcpy(p + 4, &clock, 8);
	size_t n = EV_HEADER_SIZE;
	if (flags) {
		memcpy(p + EV_HEADER_SIZE, e + EV_HEADER_SIZE, EV_MAX_PAYLOAD); /* all of it: one move */
		n += EV_PAYLOAD_SIZE(flags);
	}
	memset(p + n, 0, 4);
	t->pos = p + n;
	t->nev++;
	rt_guard_give_later(t, clock);
}

RT_API void ovni_ev_jumbo_emit(struct ovni_ev *ev, const uint8_t *buf, uint32_t bufsize)
{
	struct rt_thread *t = &rt_self;
	if (!t->ready)
		rt_die("ovni_ev_jumbo_emit", "thread is not initialized");
	if (ovni_payload_size(ev) != 0)
		rt_die("ovni_ev_jumbo_emit", "the event payload must be empty");
	if (EV_JUMBO_HEADER_SIZE + (uint64_t)bufsize >= (uint64_t)OVNI_MAX_EV_BUF)
		rt_die("ovni_ev_jumbo_emit", "event too large");
	ovni_payload_add(ev, (const uint8_t *)&bufsize, sizeof(bufsize));
	ev->header.flags |= EV_FLAG_JUMBO;
	if (rt_filter[ev->header.model] & RT_FILTER_DROP)
		return;
	rt_stream_put2(t, ev, EV_JUMBO_HEADER_SIZE, buf, bufsize);
}

/* The events are already in the file's pages: nothing to write, so no
 * OF[ / OF] pair either (the kernel writes the pages back on its own). */
RT_API void ovni_flush(void)
{
	need_ready_thread("ovni_flush");
	if (atomic_load(&rt_proc.state) != RT_READY)
		rt_die("ovni_flush", "process not ready");
	rt_kernel_drain(&rt_self); /* record --kernel: the switches so far */
}

/* ---- Attributes ---- */

static struct json *attr_get(const char *func, const char *key, enum json_type type)
{
	need_ready_thread(func);
	struct json *v = json_dotget(rt_self.meta, key);
	if (!v)
		rt_die(func, "key not found: %s", key);
	if (v->type != type)
		rt_die(func, "value of key %s is not a %s", key, json_type_name(type));
	return v;
}

static void attr_set(const char *func, const char *key, struct json *v)
{
	need_ready_thread(func);
	if (!key || json_dotset(rt_self.meta, key, v) != 0)
		rt_die(func, "cannot set attribute %s", key ? key : "(null)");
	rt_meta_changed(&rt_self);
}

RT_API int ovni_attr_has(const char *key)
{
	need_ready_thread("ovni_attr_has");
	return json_dotget(rt_self.meta, key) != NULL;
}

RT_API void ovni_attr_set_double(const char *key, double num)
{
	attr_set("ovni_attr_set_double", key, json_new_number(num));
}

RT_API void ovni_attr_set_boolean(const char *key, int value)
{
	attr_set("ovni_attr_set_boolean", key, json_new_bool(value != 0));
}

RT_API void ovni_attr_set_str(const char *key, const char *value)
{
	if (!value)
		rt_die("ovni_attr_set_str", "value is NULL");
	attr_set("ovni_attr_set_str", key, json_new_string(value));
}

RT_API void ovni_attr_set_json(const char *key, const char *json)
{
	if (!json)
		rt_die("ovni_attr_set_json", "json is NULL");
	struct json *v = json_parse(json, strlen(json));
	if (!v)
		rt_die("ovni_attr_set_json", "cannot parse json: %s", fail_take());
	/* A parsed document is an arena: attach a heap copy. */
	struct json *c = json_copy(v);
	json_free(v);
	attr_set("ovni_attr_set_json", key, c);
}

RT_API double ovni_attr_get_double(const char *key)
{
	return attr_get("ovni_attr_get_double", key, JSON_NUMBER)->u.number;
}

RT_API int ovni_attr_get_boolean(const char *key)
{
	return attr_get("ovni_attr_get_boolean", key, JSON_BOOL)->u.boolean;
}

RT_API const char *ovni_attr_get_str(const char *key)
{
	return attr_get("ovni_attr_get_str", key, JSON_STRING)->u.str.s;
}

RT_API char *ovni_attr_get_json(const char *key)
{
	need_ready_thread("ovni_attr_get_json");
	struct json *v = json_dotget(rt_self.meta, key);
	if (!v)
		rt_die("ovni_attr_get_json", "key not found: %s", key);
	char *s = json_write_compact(v, NULL);
	if (!s)
		rt_die("ovni_attr_get_json", "out of memory");
	return s;
}

RT_API void ovni_attr_flush(void)
{
	need_ready_thread("ovni_attr_flush");
	rt_meta_write(&rt_self);
}

/* ---- Marks ---- */

static void mark_check_type(const char *func, int32_t type)
{
	if (type < 0 || type >= 100)
		rt_die(func, "type must be in [0, 100)");
}

RT_API void ovni_mark_type(int32_t type, long flags, const char *title)
{
	mark_check_type("ovni_mark_type", type);
	if (!title || !*title)
		rt_die("ovni_mark_type", "bad title");
	need_ready_thread("ovni_mark_type");
	rt_block_mark_yield(&rt_self, type);
	char key[64];
	snprintf(key, sizeof(key), "ovni.mark.%d", (int)type);
	if (json_dotget(rt_self.meta, key))
		rt_die("ovni_mark_type", "type %d already defined", (int)type);
	snprintf(key, sizeof(key), "ovni.mark.%d.title", (int)type);
	attr_set("ovni_mark_type", key, json_new_string(title));
	snprintf(key, sizeof(key), "ovni.mark.%d.chan_type", (int)type);
	attr_set("ovni_mark_type", key, json_new_string(flags & OVNI_MARK_STACK ? "stack" : "single"));
	rt_meta_write(&rt_self); /* a killed thread's marks stay readable */
}

RT_API void ovni_mark_label(int32_t type, int64_t value, const char *label)
{
	mark_check_type("ovni_mark_label", type);
	if (value <= 0)
		rt_die("ovni_mark_label", "value must be > 0");
	if (!label || !*label)
		rt_die("ovni_mark_label", "bad label");
	need_ready_thread("ovni_mark_label");
	char key[96];
	snprintf(key, sizeof(key), "ovni.mark.%d", (int)type);
	if (!json_dotget(rt_self.meta, key))
		rt_die("ovni_mark_label", "type %d not defined", (int)type);
	snprintf(key, sizeof(key), "ovni.mark.%d.labels.%lld", (int)type, (long long)value);
	if (json_dotget(rt_self.meta, key))
		rt_die("ovni_mark_label", "label for value %lld already defined", (long long)value);
	attr_set("ovni_mark_label", key, json_new_string(label));
	rt_meta_write(&rt_self);
}

static void mark_emit(const char *func, char v, int32_t type, int64_t value)
{
	if (value == 0)
		rt_die(func, "value cannot be zero");
	struct rt_thread *t = &rt_self;
	if (!emit_ready(t, func))
		return;
	if (rt_emit_filter[RT_EMIT_KEY('O', 'M')] & RT_FILTER_DROP)
		return;
	uint8_t p[12];
	memcpy(p, &value, 8);
	memcpy(p + 8, &type, 4);
	rt_instr_emit(t, (char[3]){ 'O', 'M', v }, p, 12); /* clocked once guarded */
}

RT_API void ovni_mark_push(int32_t type, int64_t value)
{
	mark_emit("ovni_mark_push", '[', type, value);
}

RT_API void ovni_mark_pop(int32_t type, int64_t value)
{
	mark_emit("ovni_mark_pop", ']', type, value);
}

RT_API void ovni_mark_set(int32_t type, int64_t value)
{
	mark_emit("ovni_mark_set", '=', type, value);
}
