/* The ovni model 'O' (spec emu.md 4.1): thread states and CPUs, affinity,
 * buffer flushes, burst statistics and the user marks declared in the
 * metadata (ovni.mark). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "emu/emu.h"
#include "emu/mchan.h"
#include "emu/sched.h"
#include "base/msg.h"
#include "base/json.h"
#include "base/fmt.h"
#include "paraver/prv.h"

#define NMARKS 100 /* mark types 0..99, Paraver types 100..199 */
#define NBURSTS 100 /* bursts per statistics line */
#define FLUSH_WARN_NS 10000000 /* a flush longer than this slowed the program */

enum { CH_FLUSH, CH_NFIXED };

static const struct mchan_label flush_labels[] = {
	{ 1, "Flushing" },
	{ 0, NULL },
};

struct mark {
	int declared;
	int stack;
	char *title;
	struct mchan_label *labels; /* ends with label NULL */
	size_t nlabels;
	size_t def; /* index in the channel table */
	const char *where; /* stream that declared it first */
};

struct ovni_thread {
	int64_t flush_start;
	size_t nbursts;
	int64_t bursts[NBURSTS];
};

struct ovni {
	struct mchan ch;
	struct mchan_def *defs;
	struct mark marks[NMARKS];
	int order[NMARKS]; /* mark types as first declared: the .pcf and channel order */
	int norder;
	struct ovni_thread *th;
	int warned_ocn;
	char names[NMARKS][16]; /* channel names of the marks */
};

static int64_t read_i32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int64_t read_i64(const uint8_t *p)
{
	int64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* ---- marks from the metadata ---- */

static int bad_mark(const char *file, const struct json *at, const char *what)
{
	if (at && at->line)
		msg_err("%s: line %d, column %d: %s", file, at->line, at->col, what);
	else
		msg_err("%s: %s", file, what);
	return -1;
}

static int parse_int(const char *s, long long *out)
{
	char *end;
	if (!*s)
		return -1;
	*out = strtoll(s, &end, 10);
	return *end ? -1 : 0;
}

static int add_label(struct mark *m, int64_t value, const char *label, const char *file, const struct json *at)
{
	for (size_t i = 0; i < m->nlabels; i++) {
		if (m->labels[i].value != value)
			continue;
		if (strcmp(m->labels[i].label, label) == 0)
			return 0;
		char why[512];
		snprintf(why, sizeof(why), "ovni.mark: value %lld of mark '%s' is labelled '%s' here and '%s' in %s",
			 (long long)value, m->title, label, m->labels[i].label, m->where);
		return bad_mark(file, at, why);
	}
	struct mchan_label *l = realloc(m->labels, (m->nlabels + 2) * sizeof(*l));
	if (!l)
		return bad_mark(file, NULL, "out of memory");
	m->labels = l;
	l[m->nlabels].value = value;
	l[m->nlabels].label = label; /* lives in the trace's json */
	m->nlabels++;
	l[m->nlabels].label = NULL;
	return 0;
}

static int load_mark(struct ovni *o, const char *file, const char *where, const char *key,
		     const struct json *v)
{
	long long t;
	if (parse_int(key, &t) != 0 || t < 0 || t >= NMARKS)
		return bad_mark(file, v, "ovni.mark: a mark type must be an integer from 0 to 99");
	const struct json *title = json_get(v, "title");
	const struct json *kind = json_get(v, "chan_type");
	const struct json *labels = json_get(v, "labels");
	if (!title || title->type != JSON_STRING || title->u.str.len == 0)
		return bad_mark(file, v, "ovni.mark: a mark type needs a non-empty \"title\"");
	if (!kind || kind->type != JSON_STRING ||
	    (strcmp(kind->u.str.s, "single") != 0 && strcmp(kind->u.str.s, "stack") != 0))
		return bad_mark(file, v, "ovni.mark: \"chan_type\" must be \"single\" or \"stack\"");
	if (labels && labels->type != JSON_OBJECT)
		return bad_mark(file, labels, "ovni.mark: \"labels\" must be an object");
	struct mark *m = &o->marks[t];
	int stack = strcmp(kind->u.str.s, "stack") == 0;
	if (!m->declared) {
		m->declared = 1;
		o->order[o->norder++] = (int)t;
		m->stack = stack;
		m->title = title->u.str.s;
		m->where = where;
		m->labels = calloc(1, sizeof(*m->labels));
		if (!m->labels)
			return bad_mark(file, NULL, "out of memory");
	} else if (strcmp(m->title, title->u.str.s) != 0 || m->stack != stack) {
		char why[512];
		snprintf(why, sizeof(why), "ovni.mark: mark type %lld is declared differently in %s", t, m->where);
		return bad_mark(file, v, why);
	}
	for (size_t i = 0; labels && i < labels->u.obj.n; i++) {
		long long value;
		const struct json *l = labels->u.obj.vals[i];
		if (parse_int(labels->u.obj.keys[i], &value) != 0)
			return bad_mark(file, l, "ovni.mark: a label key must be an integer value");
		if (l->type != JSON_STRING || l->u.str.len == 0)
			return bad_mark(file, l, "ovni.mark: a label must be a non-empty string");
		if (add_label(m, value, l->u.str.s, file, l) != 0)
			return -1;
	}
	return 0;
}

static int load_marks(struct emu *e, struct ovni *o)
{
	for (size_t i = 0; i < e->nthreads; i++) {
		const struct trace_stream *s = &e->trace.streams[e->threads[i].sys->stream];
		const struct json *marks = s->meta.marks;
		if (!marks)
			continue;
		char *file = malloc(strlen(s->relpath) + 13);
		if (!file)
			return bad_mark(s->relpath, NULL, "out of memory");
		sprintf(file, "%s%sstream.json", s->relpath, *s->relpath ? "/" : "");
		int rc = 0;
		if (marks->type != JSON_OBJECT)
			rc = bad_mark(file, marks, "ovni.mark must be an object");
		for (size_t k = 0; rc == 0 && k < marks->u.obj.n; k++)
			rc = load_mark(o, file, s->obs_name, marks->u.obj.keys[k], marks->u.obj.vals[k]);
		free(file);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* ---- hooks ---- */

static int create(struct emu *e)
{
	struct ovni *o = calloc(1, sizeof(*o));
	if (!o) {
		msg_err("out of memory");
		return -1;
	}
	e->mdata['O'] = o;
	o->th = calloc(e->nthreads + 1, sizeof(*o->th));
	o->defs = calloc(CH_NFIXED + NMARKS, sizeof(*o->defs));
	if (!o->th || !o->defs) {
		msg_err("out of memory");
		return -1;
	}
	o->defs[CH_FLUSH] = (struct mchan_def){
		.name = "flush", .type = 7, .prv_flags = PRV_SKIPDUP,
		.th_track = TRACK_ANY, .cpu_track = TRACK_RUN,
		.title = "Flushing ovni buffer", .labels = flush_labels, .colors = CFG_CUSTOM,
	};
	if (load_marks(e, o) != 0)
		return -1;
	size_t n = CH_NFIXED;
	for (int i = 0; i < o->norder; i++) {
		int t = o->order[i];
		struct mark *m = &o->marks[t];
		snprintf(o->names[t], sizeof(o->names[t]), "mark%d", t);
		m->def = n;
		o->defs[n++] = (struct mchan_def){
			.name = o->names[t], .stack = m->stack, .chan_flags = CHAN_ALLOW_DUP,
			.type = 100 + t, .prv_flags = PRV_SKIPDUPNULL,
			.th_track = TRACK_ACT, .cpu_track = TRACK_RUN,
			.title = m->title, .bare_title = 1, .labels = m->labels, .colors = CFG_CODE,
		};
	}
	return mchan_create(&o->ch, e, "ovni", o->defs, n);
}

static int connect(struct emu *e)
{
	struct ovni *o = emu_data(e, 'O');
	return mchan_connect(&o->ch);
}

static int finish(struct emu *e)
{
	if (e->partial)
		return 0;
	for (size_t i = 0; i < e->nthreads; i++) {
		struct emu_thread *th = &e->threads[i];
		if (th->state != TH_ST_DEAD)
			return failf("thread %" PRId64 " (%s) did not end: it is %s at the end of the trace",
				     th->tid, e->trace.streams[th->sys->stream].relpath, th_state_name(th->state));
	}
	return 0;
}

static void ovni_free(struct emu *e)
{
	struct ovni *o = emu_data(e, 'O');
	mchan_free(&o->ch);
	for (int t = 0; t < NMARKS; t++)
		free(o->marks[t].labels);
	free(o->defs);
	free(o->th);
	free(o);
	e->mdata['O'] = NULL;
}

/* ---- thread states ---- */

static int bad_state(struct emu_thread *th, const char *what, const char *need)
{
	return failf("thread %" PRId64 " cannot %s: it is %s, not %s", th->tid, what,
		     th_state_name(th->state), need);
}

static int execute(struct emu *e, struct emu_thread *th)
{
	if (th->state == TH_ST_RUNNING)
		return failf("thread %" PRId64 " cannot begin to run: it is already running", th->tid);
	if (th->cpu)
		return failf("thread %" PRId64 " cannot begin to run: it is still on %s", th->tid, cpu_label(th->cpu));
	if (emu_payload_size(e) < 4)
		return failf("the execute event of thread %" PRId64 " has no CPU in its payload", th->tid);
	int64_t idx = read_i32(emu_payload(e));
	struct emu_cpu *cpu = emu_cpu_of(e, e->loom, idx);
	if (!cpu)
		return failf("loom %s has no CPU with logical index %" PRId64, e->loom->name, idx);
	if (thread_set_cpu(th, cpu) != 0 || thread_set_state(th, TH_ST_RUNNING) != 0)
		return -1;
	return cpu_add_thread(cpu, th);
}

static int end(struct emu_thread *th)
{
	if (th->state != TH_ST_RUNNING && th->state != TH_ST_COOLING)
		return bad_state(th, "end", "Running or Cooling");
	struct emu_cpu *cpu = th->cpu;
	if (!cpu)
		return failf("thread %" PRId64 " cannot end: it has no CPU", th->tid);
	if (thread_set_state(th, TH_ST_DEAD) != 0 || cpu_remove_thread(cpu, th) != 0)
		return -1;
	return thread_unset_cpu(th);
}

/* A transition that keeps the thread on its CPU. */
static int change(struct emu_thread *th, int to, int from1, int from2, const char *what, const char *need)
{
	if (th->state != from1 && th->state != from2)
		return bad_state(th, what, need);
	if (!th->cpu)
		return failf("thread %" PRId64 " cannot %s: it has no CPU", th->tid, what);
	if (thread_set_state(th, to) != 0)
		return -1;
	return cpu_update(th->cpu, th);
}

static int ev_thread(struct emu *e, struct emu_thread *th, uint8_t v)
{
	switch (v) {
	case 'x': return execute(e, th);
	case 'C': return 0; /* a thread was created: nothing to show */
	case 'e': return end(th);
	case 'p': return change(th, TH_ST_PAUSED, TH_ST_RUNNING, TH_ST_COOLING, "pause", "Running or Cooling");
	case 'r': return change(th, TH_ST_RUNNING, TH_ST_PAUSED, TH_ST_WARMING, "resume", "Paused or Warming");
	case 'c': return change(th, TH_ST_COOLING, TH_ST_RUNNING, TH_ST_RUNNING, "cool", "Running");
	case 'w': return change(th, TH_ST_WARMING, TH_ST_PAUSED, TH_ST_PAUSED, "warm", "Paused");
	}
	return failf("unknown ovni thread event");
}

/* ---- affinity ---- */

static int migrate(struct emu_thread *th, struct emu_cpu *to)
{
	struct emu_cpu *from = th->cpu;
	if (from == to)
		return 0;
	if (cpu_remove_thread(from, th) != 0 || thread_set_cpu(th, to) != 0)
		return -1;
	return cpu_add_thread(to, th);
}

static struct emu_thread *find_thread(struct emu *e, int64_t tid)
{
	struct sys_thread *t = system_thread(e->proc, tid);
	for (size_t i = 0; !t && i < e->loom->nprocs; i++)
		t = system_thread(e->loom->procs[i], tid);
	return t ? &e->threads[t->gindex] : NULL;
}

static int ev_affinity(struct emu *e, struct emu_thread *th, uint8_t v)
{
	const uint8_t *p = emu_payload(e);
	if (v == 's') {
		if (emu_payload_size(e) != 4)
			return failf("the affinity event needs a 4-byte payload, not %u bytes", emu_payload_size(e));
		if (!th->is_active)
			return failf("thread %" PRId64 " cannot change its CPU: it is %s, not active",
				     th->tid, th_state_name(th->state));
		if (!th->cpu)
			return failf("thread %" PRId64 " cannot change its CPU: it has none", th->tid);
		int64_t idx = read_i32(p);
		struct emu_cpu *cpu = emu_cpu_of(e, e->loom, idx);
		if (!cpu)
			return failf("loom %s has no CPU with logical index %" PRId64, e->loom->name, idx);
		return migrate(th, cpu);
	}
	if (v == 'r') {
		if (emu_payload_size(e) != 8)
			return failf("the remote affinity event needs an 8-byte payload, not %u bytes", emu_payload_size(e));
		int64_t idx = read_i32(p), tid = read_i32(p + 4);
		struct emu_thread *other = find_thread(e, tid);
		if (!other)
			return failf("no thread %" PRId64 " in loom %s to move", tid, e->loom->name);
		if (other->state == TH_ST_DEAD || other->state == TH_ST_UNKNOWN || !other->cpu)
			return failf("thread %" PRId64 " cannot be moved: it is %s", tid, th_state_name(other->state));
		struct emu_cpu *cpu = emu_cpu_of(e, e->loom, idx);
		if (!cpu)
			return failf("loom %s has no CPU with logical index %" PRId64, e->loom->name, idx);
		return migrate(other, cpu);
	}
	return failf("unknown ovni affinity event");
}

/* ---- bursts, flushes, marks ---- */

/* The k-th smallest of a[0..n) (0-based; a is reordered): quickselect
 * with a median-of-three pivot. Every 100th OB. of a burst trace asks for
 * a median: qsort (and its calls of a compare function) was a third of the
 * emulation of such a trace. */
static int64_t kth_smallest(int64_t *a, int n, int k)
{
	int lo = 0, hi = n - 1;
	while (hi > lo) {
		int mid = lo + (hi - lo) / 2;
		int64_t t;
#define SWAP(x, y) (t = a[x], a[x] = a[y], a[y] = t)
		if (a[mid] < a[lo])
			SWAP(mid, lo);
		if (a[hi] < a[lo])
			SWAP(hi, lo);
		if (a[hi] < a[mid])
			SWAP(hi, mid);
		int64_t p = a[mid];
		int i = lo, j = hi;
		while (i <= j) { /* a[lo] <= p <= a[hi] bound both scans */
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j) {
				SWAP(i, j);
				i++;
				j--;
			}
		}
#undef SWAP
		/* a[lo..j] <= p, a[i..hi] >= p, and a[j+1..i-1] == p */
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return a[k];
	}
	return a[k];
}

/* x as printf's "%3.0f" writes it (nearest, ties to even), for |x| < 2^63. */
static size_t put_f0(char *d, double x)
{
	return fmt_i64_pad(d, (int64_t)rint(x), 3, ' ');
}

/* "<loom> burst stats: median/avg/max = %3.0f/%3.0f/%3.0f ns" without
 * printf, whose floating point formatting cost as much as the rest of a
 * burst trace's statistics. */
static void burst_line(const char *loom, double median, double avg, double max)
{
	static const char mid[] = " burst stats: median/avg/max = ";
	char line[512];
	size_t n = strlen(loom);
	if (n > sizeof(line) - 128)
		n = sizeof(line) - 128;
	memcpy(line, loom, n);
	memcpy(line + n, mid, sizeof(mid) - 1);
	n += sizeof(mid) - 1;
	n += put_f0(line + n, median);
	line[n++] = '/';
	n += put_f0(line + n, avg);
	line[n++] = '/';
	n += put_f0(line + n, max);
	memcpy(line + n, " ns", 3);
	msg_info_str(line, n + 3);
}

/* Bursts of OB. measure what emitting one event costs. */
static int burst(struct emu *e, struct ovni_thread *ot)
{
	ot->bursts[ot->nbursts++] = e->pev.dclock;
	if (ot->nbursts < NBURSTS)
		return 0;
	int64_t d[NBURSTS - 1], sum = 0, max = INT64_MIN;
	for (int i = 0; i < NBURSTS - 1; i++) {
		d[i] = ot->bursts[i + 1] - ot->bursts[i];
		sum += d[i];
		if (d[i] > max)
			max = d[i];
	}
	double median = (double)kth_smallest(d, NBURSTS - 1, (NBURSTS - 1) / 2);
	burst_line(e->loom->name, median, (double)sum / (NBURSTS - 1), (double)max);
	if (median > 100)
		msg_warn("%s: emitting an event takes %.0f ns (median), over 100 ns: the clock or the "
			 "machine is slow", e->loom->name, median);
	ot->nbursts = 0;
	return 0;
}

static int flush(struct emu *e, struct ovni *o, struct emu_thread *th, uint8_t v)
{
	struct chan *c = mchan_th(&o->ch, th->gindex, CH_FLUSH);
	struct ovni_thread *ot = &o->th[th->gindex];
	if (v == '[') {
		ot->flush_start = e->pev.dclock;
		return chan_set(c, value_int64(1));
	}
	if (v == ']') {
		int64_t d = e->pev.dclock - ot->flush_start;
		if (d > FLUSH_WARN_NS && th->is_running)
			msg_warn("thread %" PRId64 " spent %.1f ms writing its buffer to disk at %" PRId64
				 " ns: the trace there shows the cost of tracing", th->tid, (double)d / 1e6,
				 ot->flush_start);
		return chan_set(c, value_null());
	}
	return failf("unknown ovni flush event");
}

static int mark(struct emu *e, struct ovni *o, struct emu_thread *th, uint8_t v)
{
	if (emu_payload_size(e) != 12)
		return failf("a mark event needs a 12-byte payload, not %u bytes", emu_payload_size(e));
	const uint8_t *p = emu_payload(e);
	int64_t value = read_i64(p), type = read_i32(p + 8);
	if (type < 0 || type >= NMARKS || !o->marks[type].declared)
		return failf("mark type %" PRId64 " is not declared in ovni.mark of any stream", type);
	if (value == 0)
		return failf("mark value 0 is not allowed");
	struct mark *m = &o->marks[type];
	struct chan *c = mchan_th(&o->ch, th->gindex, m->def);
	if (v == '=') {
		if (m->stack)
			return failf("mark type %" PRId64 " is a stack: use push and pop, not set", type);
		return chan_set(c, value_int64(value));
	}
	if (v != '[' && v != ']')
		return failf("unknown ovni mark event");
	if (!m->stack)
		return failf("mark type %" PRId64 " is single: use set, not push or pop", type);
	return v == '[' ? chan_push(c, value_int64(value)) : chan_pop(c, value_int64(value));
}

static int event(struct emu *e)
{
	struct ovni *o = emu_data(e, 'O');
	struct emu_thread *th = e->th;
	const uint8_t *mcv = e->ev->mcv;
	if (th->out_of_cpu)
		return failf("thread %" PRId64 " is out of the CPU (kernel context switch)", th->tid);
	switch (mcv[1]) {
	case 'H': return ev_thread(e, th, mcv[2]);
	case 'A': return ev_affinity(e, th, mcv[2]);
	case 'B':
		if (mcv[2] != '.')
			return failf("unknown ovni burst event");
		return burst(e, &o->th[th->gindex]);
	case 'F': return flush(e, o, th, mcv[2]);
	case 'M': return mark(e, o, th, mcv[2]);
	case 'U': return 0; /* unordered region markers: `ovni sort` used them */
	case 'C':
		if (mcv[2] != 'n')
			return failf("unknown ovni event");
		if (!o->warned_ocn)
			msg_warn("ignoring the obsolete CPU count event OCn");
		o->warned_ocn = 1;
		return 0;
	}
	return failf("unknown ovni event category '%c'", mcv[1]);
}

const struct emu_model emu_model_ovni = {
	.info = &model_ovni,
	.flags = MODEL_ALWAYS,
	.create = create,
	.connect = connect,
	.event = event,
	.finish = finish,
	.free = ovni_free,
};
