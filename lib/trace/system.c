#include "trace/system.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/msg.h"

/* Building state: the trace, and where to report. */
struct build {
	struct system *sys;
	const struct trace *t;
};

/* One thread stream, as sorted for grouping. */
struct tkey {
	const char *loom;
	int64_t pid, tid;
	size_t stream;
};

/* One CPU entry of some stream's loom_cpus. */
struct ckey {
	int64_t phyid, index;
	size_t stream, pos;
};

static const struct stream_meta *meta_of(const struct build *b, size_t stream)
{
	return &b->t->streams[stream].meta;
}

/* "<stream dir>/stream.json" in a static buffer (two slots: messages name two files). */
static const char *file_of(const struct build *b, size_t stream)
{
	static char buf[2][4200];
	static int slot;
	slot ^= 1;
	const char *dir = b->t->streams[stream].dir;
	if (file_join_to(buf[slot], sizeof(buf[slot]), dir, "stream.json") >= sizeof(buf[slot]))
		return dir; /* past PATH_MAX: the directory still says which stream */
	return buf[slot];
}

/* An error about a value in a stream's stream.json, with its position. */
__attribute__((format(printf, 4, 5)))
static int stream_err(const struct build *b, size_t stream, const char *key, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	const struct json *v = json_dotget(b->t->streams[stream].json, key);
	const char *file = file_of(b, stream);
	if (v && v->line > 0)
		msg_err("%s: line %d, column %d: %s", file, v->line, v->col, text);
	else
		msg_err("%s: %s", file, text);
	return -1;
}

static int oom(void)
{
	msg_err("out of memory");
	return -1;
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_size(size_t a, size_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_tkey(const void *pa, const void *pb)
{
	const struct tkey *a = pa, *b = pb;
	int c = strcmp(a->loom, b->loom);
	if (!c)
		c = cmp_i64(a->pid, b->pid);
	if (!c)
		c = cmp_i64(a->tid, b->tid);
	if (!c)
		c = cmp_size(a->stream, b->stream);
	return c;
}

static int cmp_ckey(const void *pa, const void *pb)
{
	const struct ckey *a = pa, *b = pb;
	int c = cmp_i64(a->phyid, b->phyid);
	if (!c)
		c = cmp_size(a->stream, b->stream);
	if (!c)
		c = cmp_size(a->pos, b->pos);
	return c;
}

/* Appends p to a growable array of pointers. */
static int push(void ***arr, size_t *n, void *p)
{
	/* capacities are powers of two: grow when n is one */
	if ((*n & (*n - 1)) == 0) {
		size_t cap = *n ? 2 * *n : 1;
		void **a = realloc(*arr, cap * sizeof(*a));
		if (!a)
			return -1;
		*arr = a;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

#define PUSH(arr, n, p) push((void ***)&(arr), &(n), (p))

/* Merges the process-wide keys of one more thread into p. */
static int merge_proc(struct build *b, struct sys_proc *p, size_t first, size_t stream)
{
	const struct stream_meta *m = meta_of(b, stream);
	if (m->has_app_id) {
		if (p->app_id && p->app_id != m->app_id)
			return stream_err(b, stream, "ovni.app_id", "ovni.app_id %lld differs from %lld in %s (same process %lld)",
					  (long long)m->app_id, (long long)p->app_id, file_of(b, first), (long long)p->pid);
		p->app_id = m->app_id;
	}
	if (!m->has_rank)
		return 0;
	if (p->has_rank && p->rank != m->rank)
		return stream_err(b, stream, "ovni.rank", "ovni.rank %lld differs from %lld in %s (same process %lld)",
				  (long long)m->rank, (long long)p->rank, file_of(b, first), (long long)p->pid);
	if (p->has_rank && p->nranks != m->nranks)
		return stream_err(b, stream, "ovni.nranks", "ovni.nranks %lld differs from %lld in %s (same process %lld)",
				  (long long)m->nranks, (long long)p->nranks, file_of(b, first), (long long)p->pid);
	p->has_rank = 1;
	p->rank = m->rank;
	p->nranks = m->nranks;
	return 0;
}

static struct sys_thread *new_thread(struct build *b, struct sys_proc *p, const struct tkey *k)
{
	struct sys_thread *th = calloc(1, sizeof(*th));
	if (!th || PUSH(p->threads, p->nthreads, th) < 0) {
		free(th);
		return NULL;
	}
	th->tid = k->tid;
	th->proc = p;
	th->stream = k->stream;
	b->sys->by_stream[k->stream] = th;
	return th;
}

/* Builds the process of keys[i..j) (same loom and pid); threads by tid. */
static int build_proc(struct build *b, struct sys_loom *l, const struct tkey *keys, size_t i, size_t j)
{
	struct sys_proc *p = calloc(1, sizeof(*p));
	if (!p || PUSH(l->procs, l->nprocs, p) < 0) {
		free(p);
		return oom();
	}
	p->pid = keys[i].pid;
	p->loom = l;
	/* the first thread in trace order is the one others are compared with */
	size_t first = keys[i].stream;
	for (size_t k = i; k < j; k++)
		if (keys[k].stream < first)
			first = keys[k].stream;
	if (merge_proc(b, p, first, first) < 0)
		return -1;
	for (size_t k = i; k < j; k++) {
		if (k > i && keys[k].tid == keys[k - 1].tid)
			return stream_err(b, keys[k].stream, "ovni.tid", "ovni.tid %lld already used in process %lld of loom %s by %s",
					  (long long)keys[k].tid, (long long)p->pid, l->name, file_of(b, keys[k - 1].stream));
		if (merge_proc(b, p, first, keys[k].stream) < 0)
			return -1;
		if (!new_thread(b, p, &keys[k]))
			return oom();
	}
	if (!p->app_id) {
		msg_err("%s: process %lld of loom %s has no ovni.app_id in any of its threads", file_of(b, first),
			(long long)p->pid, l->name);
		return -1;
	}
	return 0;
}

/* Union of the loom_cpus of the loom's streams, keyed by phyid. */
static int merge_cpus(struct build *b, struct sys_loom *l)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < l->nprocs; i++)
		for (size_t j = 0; j < l->procs[i]->nthreads; j++)
			n += meta_of(b, l->procs[i]->threads[j]->stream)->ncpus;
	struct ckey *keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		return oom();
	for (size_t i = 0; i < l->nprocs; i++) {
		for (size_t j = 0; j < l->procs[i]->nthreads; j++) {
			size_t s = l->procs[i]->threads[j]->stream;
			const struct stream_meta *m = meta_of(b, s);
			for (size_t c = 0; c < m->ncpus; c++)
				keys[k++] = (struct ckey){ m->cpus[c].phyid, m->cpus[c].index, s, c };
		}
	}
	qsort(keys, n, sizeof(*keys), cmp_ckey);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (i > 0 && keys[i].phyid == keys[i - 1].phyid) {
			if (keys[i].index == keys[i - 1].index)
				continue;
			rc = stream_err(b, keys[i].stream, "ovni.loom_cpus",
					"ovni.loom_cpus[%zu]: CPU phyid %lld has index %lld, but index %lld in %s (loom %s)",
					keys[i].pos, (long long)keys[i].phyid, (long long)keys[i].index,
					(long long)keys[i - 1].index, file_of(b, keys[i - 1].stream), l->name);
			break;
		}
		struct sys_cpu *cpu = calloc(1, sizeof(*cpu));
		if (!cpu || PUSH(l->cpus, l->ncpus, cpu) < 0) {
			free(cpu);
			rc = oom();
			break;
		}
		cpu->index = keys[i].index;
		cpu->phyid = keys[i].phyid;
		cpu->loom = l;
		cpu->stream = keys[i].stream;
	}
	free(keys);
	return rc;
}

static int check_lib_versions(struct build *b)
{
	const struct trace *t = b->t;
	size_t first = t->n;
	for (size_t i = 0; i < t->n; i++) {
		const struct stream_meta *m = meta_of(b, i);
		if (!m->is_thread)
			continue;
		if (first == t->n) {
			first = i;
			b->sys->lib_version = m->lib_version;
			b->sys->lib_commit = m->lib_commit;
			continue;
		}
		if (strcmp(m->lib_version, b->sys->lib_version) == 0 && strcmp(m->lib_commit, b->sys->lib_commit) == 0)
			continue;
		msg_warn("mixed libovni versions: %s (commit %s) in %s, %s (commit %s) in %s", b->sys->lib_version,
			 b->sys->lib_commit, file_of(b, first), m->lib_version, m->lib_commit, file_of(b, i));
		b->sys->mixed_versions = 1;
		break;
	}
	return 0;
}

static struct sys_loom *new_loom(struct system *sys, const char *name)
{
	struct sys_loom *l = calloc(1, sizeof(*l));
	if (!l || PUSH(sys->looms, sys->nlooms, l) < 0) {
		free(l);
		return NULL;
	}
	l->name = name;
	size_t n = strcspn(name, ".");
	if (!(l->hostname = malloc(n + 1)))
		return NULL;
	memcpy(l->hostname, name, n);
	l->hostname[n] = '\0';
	return l;
}

/* Groups the thread streams into looms, processes and threads. */
static int group(struct build *b)
{
	const struct trace *t = b->t;
	size_t n = 0;
	struct tkey *keys = calloc(t->n ? t->n : 1, sizeof(*keys));
	if (!keys)
		return oom();
	for (size_t i = 0; i < t->n; i++) {
		const struct stream_meta *m = &t->streams[i].meta;
		if (m->is_thread)
			keys[n++] = (struct tkey){ m->loom, m->pid, m->tid, i };
	}
	qsort(keys, n, sizeof(*keys), cmp_tkey);
	int rc = 0;
	struct sys_loom *l = NULL;
	for (size_t i = 0, j; i < n && rc == 0; i = j) {
		if (!l || strcmp(l->name, keys[i].loom) != 0) {
			if (!(l = new_loom(b->sys, keys[i].loom))) {
				rc = oom();
				break;
			}
		}
		for (j = i + 1; j < n && keys[j].pid == keys[i].pid && strcmp(keys[j].loom, keys[i].loom) == 0; j++)
			;
		rc = build_proc(b, l, keys, i, j);
	}
	free(keys);
	return rc;
}

/* If a process of a loom has a rank, all must. Returns whether all do. */
static int check_loom_ranks(struct build *b, struct sys_loom *l, int *all)
{
	struct sys_proc *with = NULL, *without = NULL;
	for (size_t i = 0; i < l->nprocs; i++) {
		if (l->procs[i]->has_rank)
			with = with ? with : l->procs[i];
		else
			without = without ? without : l->procs[i];
	}
	if (with && without) {
		msg_err("loom %s: process %lld has no ovni.rank (%s) but process %lld has one (%s)", l->name,
			(long long)without->pid, file_of(b, without->threads[0]->stream), (long long)with->pid,
			file_of(b, with->threads[0]->stream));
		return -1;
	}
	*all = with != NULL;
	return 0;
}

static int64_t min_rank(const struct sys_loom *l)
{
	int64_t r = l->procs[0]->rank;
	for (size_t i = 1; i < l->nprocs; i++)
		if (l->procs[i]->rank < r)
			r = l->procs[i]->rank;
	return r;
}

static int cmp_loom_name(const void *pa, const void *pb)
{
	const struct sys_loom *a = *(struct sys_loom *const *)pa, *b = *(struct sys_loom *const *)pb;
	return strcmp(a->name, b->name);
}

static int cmp_loom_rank(const void *pa, const void *pb)
{
	const struct sys_loom *a = *(struct sys_loom *const *)pa, *b = *(struct sys_loom *const *)pb;
	int c = cmp_i64(min_rank(a), min_rank(b));
	return c ? c : strcmp(a->name, b->name);
}

static int cmp_proc_pid(const void *pa, const void *pb)
{
	const struct sys_proc *a = *(struct sys_proc *const *)pa, *b = *(struct sys_proc *const *)pb;
	return cmp_i64(a->pid, b->pid);
}

static int cmp_proc_rank(const void *pa, const void *pb)
{
	const struct sys_proc *a = *(struct sys_proc *const *)pa, *b = *(struct sys_proc *const *)pb;
	int c = cmp_i64(a->rank, b->rank);
	return c ? c : cmp_i64(a->pid, b->pid);
}

/* Looms by lowest rank and processes by rank when every loom has ranks,
 * else looms by name and processes by pid. Threads and CPUs are already
 * sorted by tid and phyid. */
static int sort_looms(struct build *b)
{
	struct system *sys = b->sys;
	int by_rank = 1;
	for (size_t i = 0; i < sys->nlooms; i++) {
		int all;
		if (check_loom_ranks(b, sys->looms[i], &all) < 0)
			return -1;
		by_rank &= all;
	}
	sys->sorted_by_rank = by_rank;
	msg_info("sorting looms by %s", by_rank ? "rank" : "name");
	qsort(sys->looms, sys->nlooms, sizeof(sys->looms[0]), by_rank ? cmp_loom_rank : cmp_loom_name);
	for (size_t i = 0; i < sys->nlooms; i++) {
		struct sys_loom *l = sys->looms[i];
		qsort(l->procs, l->nprocs, sizeof(l->procs[0]), by_rank ? cmp_proc_rank : cmp_proc_pid);
	}
	return 0;
}

/* Every loom needs CPUs whose logical indices are exactly 0..N-1. */
static int index_cpus(struct build *b, struct sys_loom *l)
{
	if (l->ncpus == 0) {
		msg_err("loom %s has no physical CPUs: no stream of it has ovni.loom_cpus (%s)", l->name,
			file_of(b, l->procs[0]->threads[0]->stream));
		return -1;
	}
	if (!(l->by_index = calloc(l->ncpus, sizeof(*l->by_index))))
		return oom();
	for (size_t i = 0; i < l->ncpus; i++) {
		struct sys_cpu *c = l->cpus[i];
		if (c->index >= (int64_t)l->ncpus) {
			msg_err("loom %s: cpu index %lld of phyid %lld (%s) is out of range: the loom has %zu CPUs, indices 0 to %zu",
				l->name, (long long)c->index, (long long)c->phyid, file_of(b, c->stream), l->ncpus, l->ncpus - 1);
			return -1;
		}
		struct sys_cpu *taken = l->by_index[c->index];
		if (taken) {
			msg_err("loom %s: cpu with index %lld already taken: phyid %lld (%s) and phyid %lld (%s)", l->name,
				(long long)c->index, (long long)taken->phyid, file_of(b, taken->stream), (long long)c->phyid,
				file_of(b, c->stream));
			return -1;
		}
		l->by_index[c->index] = c;
	}
	struct sys_cpu *v = calloc(1, sizeof(*v));
	if (!v)
		return oom();
	v->index = -1;
	v->phyid = -1;
	v->is_virtual = 1;
	v->loom = l;
	l->vcpu = v;
	return 0;
}

/* Global lists in loom/process/thread order, positions and row names. */
static int number(struct system *sys)
{
	for (size_t i = 0; i < sys->nlooms; i++) {
		struct sys_loom *l = sys->looms[i];
		l->gindex = i;
		for (size_t c = 0; c <= l->ncpus; c++) {
			struct sys_cpu *cpu = c < l->ncpus ? l->cpus[c] : l->vcpu;
			cpu->gindex = sys->ncpus;
			if (cpu->is_virtual)
				snprintf(cpu->name, sizeof(cpu->name), "vCPU %zu.*", i);
			else
				snprintf(cpu->name, sizeof(cpu->name), " CPU %zu.%lld", i, (long long)cpu->phyid);
			if (PUSH(sys->cpus, sys->ncpus, cpu) < 0)
				return oom();
		}
		for (size_t p = 0; p < l->nprocs; p++) {
			struct sys_proc *proc = l->procs[p];
			proc->gindex = sys->nprocs;
			if (PUSH(sys->procs, sys->nprocs, proc) < 0)
				return oom();
			for (size_t k = 0; k < proc->nthreads; k++) {
				struct sys_thread *th = proc->threads[k];
				th->gindex = sys->nthreads;
				snprintf(th->name, sizeof(th->name), "TH %lld.%lld", (long long)proc->app_id, (long long)th->tid);
				if (PUSH(sys->threads, sys->nthreads, th) < 0)
					return oom();
			}
		}
	}
	return 0;
}

static int build(struct build *b)
{
	struct system *sys = b->sys;
	if (!(sys->by_stream = calloc(b->t->n ? b->t->n : 1, sizeof(*sys->by_stream))))
		return oom();
	if (group(b) < 0)
		return -1;
	if (sys->nlooms == 0) {
		msg_err("%s: no thread streams to emulate", b->t->root);
		return -1;
	}
	for (size_t i = 0; i < sys->nlooms; i++)
		if (merge_cpus(b, sys->looms[i]) < 0)
			return -1;
	check_lib_versions(b);
	if (sort_looms(b) < 0)
		return -1;
	for (size_t i = 0; i < sys->nlooms; i++)
		if (index_cpus(b, sys->looms[i]) < 0)
			return -1;
	if (number(sys) < 0)
		return -1;
	msg_info("loaded %zu looms, %zu processes, %zu threads and %zu cpus", sys->nlooms, sys->nprocs, sys->nthreads,
		 sys->ncpus - sys->nlooms);
	msg_info("generated with libovni version %s commit %s", sys->lib_version, sys->lib_commit);
	return 0;
}

int system_build(struct system *sys, const struct trace *t)
{
	memset(sys, 0, sizeof(*sys));
	struct build b = { sys, t };
	if (build(&b) < 0) {
		system_free(sys);
		return -1;
	}
	return 0;
}

void system_free(struct system *sys)
{
	for (size_t i = 0; i < sys->nlooms; i++) {
		struct sys_loom *l = sys->looms[i];
		for (size_t p = 0; p < l->nprocs; p++) {
			for (size_t k = 0; k < l->procs[p]->nthreads; k++)
				free(l->procs[p]->threads[k]);
			free(l->procs[p]->threads);
			free(l->procs[p]);
		}
		for (size_t c = 0; c < l->ncpus; c++)
			free(l->cpus[c]);
		free(l->procs);
		free(l->cpus);
		free(l->vcpu);
		free(l->by_index);
		free(l->hostname);
		free(l);
	}
	free(sys->looms);
	free(sys->procs);
	free(sys->threads);
	free(sys->cpus);
	free(sys->by_stream);
	memset(sys, 0, sizeof(*sys));
}

struct sys_cpu *system_cpu(const struct sys_loom *l, int64_t idx)
{
	if (idx == -1)
		return l->vcpu;
	if (idx < 0 || idx >= (int64_t)l->ncpus || !l->by_index)
		return NULL;
	return l->by_index[idx];
}

struct sys_thread *system_thread(const struct sys_proc *p, int64_t tid)
{
	size_t lo = 0, hi = p->nthreads;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t m = p->threads[mid]->tid;
		if (m == tid)
			return p->threads[mid];
		if (m < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
