#include "emu/emu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fail.h"
#include "trace/clkoff.h"
#include "trace/events.h"
#include "emu/presort.h"
#include "emu/sched.h"
#include "base/file.h"
#include "base/msg.h"
#include "trace/version.h"

volatile sig_atomic_t emu_stop;

#define CLOCK_GATE_NS (3600LL * 1000000000LL)

/* -c FILE must exist; TRACEDIR/clock-offsets.txt is used when present. */
static int load_offsets(struct emu *e)
{
	if (e->opts.clkoff)
		return clkoff_apply(&e->sys, e->opts.clkoff, 1);
	char *path = file_join(e->trace.root, CLKOFF_FILE);
	if (!path) {
		msg_err("out of memory");
		return -1;
	}
	int rc;
	if (e->trace.archive) { /* the offsets file is a member of the pack */
		size_t len;
		int absent;
		char *text = trace_read_extra(&e->trace, CLKOFF_FILE, &len, &absent);
		if (text)
			rc = clkoff_apply_text(&e->sys, path, text, len);
		else
			rc = absent ? clkoff_apply(&e->sys, NULL, 0) : -1;
		free(text);
	} else {
		rc = clkoff_apply(&e->sys, path, 0);
	}
	free(path);
	return rc;
}

static int load_trace(struct emu *e)
{
	if (trace_open(&e->trace, e->opts.tracedir, TRACE_REQUIRE_FINISHED) != 0)
		return -1;
	e->have_trace = 1;
	msg_info("loaded %zu streams", e->trace.n);
	if (system_build(&e->sys, &e->trace) != 0)
		return -1;
	e->have_sys = 1;
	if (load_offsets(e) != 0)
		return -1;
	size_t nl = e->sys.nlooms;
	e->loom_first_thread = calloc(nl + 1, sizeof(size_t));
	e->loom_nthreads = calloc(nl + 1, sizeof(size_t));
	if (!e->loom_first_thread || !e->loom_nthreads) {
		msg_err("out of memory");
		return -1;
	}
	for (size_t i = e->sys.nthreads; i-- > 0;) {
		size_t lg = e->sys.threads[i]->proc->loom->gindex;
		e->loom_first_thread[lg] = i;
		e->loom_nthreads[lg]++;
	}
	return 0;
}

static int open_streams(struct emu *e)
{
	size_t n = e->trace.n;
	e->offsets = calloc(n + 1, sizeof(*e->offsets));
	e->readers = calloc(n + 1, sizeof(*e->readers));
	if (!e->offsets || !e->readers) {
		msg_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct sys_thread *th = e->sys.by_stream[i];
		e->offsets[i] = th ? th->proc->loom->clock_offset : 0;
	}
	e->presort.limit = e->opts.sort_mem;
	e->presort.root = e->opts.salvaged ? NULL : e->trace.root;
	for (size_t i = 0; i < n; i++) {
		struct byte_src *src = presort_src(&e->presort, &e->trace, i);
		if (!src)
			return -1;
		e->nreaders = i + 1;
		if (sr_open(&e->readers[i], src, e->trace.streams[i].obs_name, 0) != 0)
			return -1;
	}
	presort_report(&e->presort);
	if (player_init(&e->player, e->readers, n, e->offsets, 0) != 0)
		return -1;
	e->have_player = 1;
	for (size_t i = 0; i < n; i++)
		if (!player_first(&e->player, i))
			msg_warn("%s has no events", e->trace.streams[i].obs_name);
	return 0;
}

/* The thread of each stream, found once (NULL: not a thread stream). */
static int stream_threads(struct emu *e)
{
	e->stream_th = calloc(e->trace.n + 1, sizeof(*e->stream_th));
	if (!e->stream_th) {
		msg_err("out of memory");
		return -1;
	}
	for (size_t i = 0; i < e->trace.n; i++) {
		struct sys_thread *st = e->sys.by_stream[i];
		e->stream_th[i] = st ? &e->threads[st->gindex] : NULL;
	}
	return 0;
}

/* Streams that start more than an hour apart were not synchronised. */
static int check_clock_gate(struct emu *e)
{
	int have_ref = 0;
	size_t nbad = 0, ref_i = 0, bad_i = 0;
	int64_t ref = 0, bad_d = 0;
	for (size_t i = 0; i < e->trace.n; i++) {
		const struct ev *ev = player_first(&e->player, i);
		if (!ev)
			continue;
		int64_t s = (int64_t)ev->clock + e->offsets[i];
		if (!have_ref) {
			ref = s;
			ref_i = i;
			have_ref = 1;
			continue;
		}
		int64_t d = s - ref;
		if ((d > CLOCK_GATE_NS || d < -CLOCK_GATE_NS) && nbad++ == 0) {
			bad_i = i;
			bad_d = d;
		}
	}
	if (nbad == 0)
		return 0;
	char more[64] = "";
	if (nbad > 1)
		snprintf(more, sizeof(more), " (and %zu more streams)", nbad - 1);
	msg_err("%s starts %.2f h %s %s%s: detected large clock gate, run `ovni sync` to measure "
		"the clock offsets of the nodes and pass them with -c FILE",
		e->trace.streams[bad_i].obs_name, (double)(bad_d < 0 ? -bad_d : bad_d) / 3.6e12,
		bad_d < 0 ? "before" : "after", e->trace.streams[ref_i].obs_name, more);
	return -1;
}

/* --from/--to against the first event of the trace. */
static int resolve_window(struct emu *e)
{
	int64_t start = INT64_MAX;
	for (size_t i = 0; i < e->trace.n; i++) {
		const struct ev *ev = player_first(&e->player, i);
		if (ev && (int64_t)ev->clock + e->offsets[i] < start)
			start = (int64_t)ev->clock + e->offsets[i];
	}
	if (start == INT64_MAX)
		start = 0;
	e->start_sclock = start;
	e->win_from = INT64_MIN;
	e->win_to = INT64_MAX;
	if (!timewin_set(&e->opts.win))
		return 0;
	int64_t from, to;
	if (timewin_resolve(&e->opts.win, start, &from, &to) != 0)
		return -1;
	/* to relative clocks, saturating */
	if (from != INT64_MIN)
		e->win_from = from < INT64_MIN + start ? INT64_MIN : from - start;
	if (to != INT64_MAX)
		e->win_to = to < INT64_MIN + start ? INT64_MIN : to - start;
	if (e->win_to < 0) {
		msg_err("--to is before the first event of the trace");
		return -1;
	}
	return 0;
}

static const char *require_of(const struct stream_meta *m, const char *name, const struct meta_require **out)
{
	for (size_t k = 0; k < m->nreq; k++) {
		if (strcmp(m->req[k].model, name) == 0) {
			*out = &m->req[k];
			return m->req[k].version;
		}
	}
	return NULL;
}

/* Enabled when a thread requires it with the same major version and a
 * minor one not newer than ours (spec emu.md 2.5). */
static int probe(struct emu *e, const struct emu_model *m)
{
	int have[3];
	if (version_parse(m->info->version, have) != 0) {
		msg_err("model %s has a bad version %s", m->info->name, m->info->version);
		return -1;
	}
	int wanted = 0;
	for (size_t i = 0; i < e->sys.nthreads; i++) {
		struct sys_thread *th = e->sys.threads[i];
		const struct trace_stream *s = &e->trace.streams[th->stream];
		const struct meta_require *r;
		if (!require_of(&s->meta, m->info->name, &r))
			continue;
		if (r->v[0] != have[0] || r->v[1] > have[1]) {
			msg_err("%s/stream.json: requires the %s model version %s, but this emulator has %s "
				"(same major and an older or equal minor needed)",
				s->relpath, m->info->name, r->version, m->info->version);
			return -1;
		}
		wanted = 1;
	}
	return wanted || (m->flags & MODEL_ALWAYS) || e->opts.all_models;
}

static int enable_models(struct emu *e)
{
	for (size_t i = 0; emu_models[i]; i++)
		e->model[(unsigned char)emu_models[i]->info->id] = emu_models[i];
	size_t n = 0, total = 0;
	for (int id = 0; id < 256; id++) {
		const struct emu_model *m = e->model[id];
		if (!m)
			continue;
		total++;
		int r = probe(e, m);
		if (r < 0)
			return -1;
		e->enabled[id] = r;
		e->event_of[id] = r ? m->event : NULL;
		n += (size_t)r;
	}
	if (e->opts.all_models)
		msg_info("all %zu models are enabled (-a):", total);
	else
		msg_info("%zu model%s enabled:", n, n == 1 ? " is" : "s are");
	for (int id = 0; id < 256; id++) {
		if (!e->enabled[id])
			continue;
		const struct model_info *mi = model_info_by_id((char)id);
		msg_info("  %8s %s '%c' (%zu events)", e->model[id]->info->name, e->model[id]->info->version, id,
			 mi ? mi->nevents : (size_t)0);
	}
	return 0;
}

static int run_hook(struct emu *e, int which)
{
	for (int id = 0; id < 256; id++) {
		const struct emu_model *m = e->model[id];
		if (!e->enabled[id])
			continue;
		int (*fn)(struct emu *) = which == 0 ? m->create : which == 1 ? m->connect : m->finish;
		if (fn && fn(e) != 0)
			return -1;
	}
	return 0;
}

int emu_add_pvt(struct emu *e, struct pvt *t)
{
	if (e->npvts == sizeof(e->pvts) / sizeof(e->pvts[0]))
		return failf("too many Paraver traces");
	e->pvts[e->npvts++] = t;
	prv_share_clock(&t->prv, &e->last_dclock);
	if (timewin_set(&e->opts.win) && !t->tapped) /* before any row is registered */
		prv_set_window(&t->prv, e->win_from, e->win_to);
	return 0;
}

static int open_taps(struct emu *e)
{
	if (pvt_open_tap(&e->thread_pvt, "thread", e->nthreads, e->opts.tap_thread) != 0)
		return -1;
	emu_add_pvt(e, &e->thread_pvt);
	if (pvt_open_tap(&e->cpu_pvt, "cpu", e->ncpus, e->opts.tap_cpu) != 0)
		return -1;
	emu_add_pvt(e, &e->cpu_pvt);
	return 0;
}

static int open_outputs(struct emu *e)
{
	const char *dir = e->outdir;
	if (e->opts.tap_thread)
		return open_taps(e);
	if (file_mkdirs(dir, 0) != 0) {
		msg_err("output directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!e->opts.outdir && access(dir, W_OK) != 0) { /* a trace of someone else, read-only media */
		msg_err("%s: cannot write the timelines beside the trace: %s; say where they go with -o DIR", dir,
			strerror(errno));
		return -1;
	}
	if (pvt_open(&e->thread_pvt, dir, "thread", e->nthreads) != 0)
		return -1;
	emu_add_pvt(e, &e->thread_pvt);
	if (pvt_open(&e->cpu_pvt, dir, "cpu", e->ncpus) != 0)
		return -1;
	emu_add_pvt(e, &e->cpu_pvt);
	return 0;
}

/* The views go to OUTDIR/cfg unless it exists (a former run, or the
 * user's own views). */
static int write_views(struct emu *e)
{
	char *dir = file_join(e->outdir, "cfg");
	if (!dir) {
		msg_err("out of memory");
		return -1;
	}
	int rc = 0;
	if (access(dir, F_OK) == 0) {
		msg_warn("%s already exists: not writing the Paraver views there", dir);
	} else if (mkdir(dir, 0777) != 0) {
		msg_err("cannot create %s: %s", dir, strerror(errno));
		rc = -1;
	} else {
		for (size_t i = 0; i < e->npvts && rc == 0; i++)
			rc = pvt_write_views(e->pvts[i], dir);
	}
	free(dir);
	return rc;
}

int emu_init(struct emu *e, const struct emu_opts *o)
{
	memset(e, 0, sizeof(*e));
	e->opts = *o;
	fail_clear();
	if (bay_init(&e->bay) != 0) {
		msg_err("%s", fail_reason());
		return -1;
	}
	if (load_trace(e) != 0 || open_streams(e) != 0 || check_clock_gate(e) != 0 ||
	    resolve_window(e) != 0 || enable_models(e) != 0)
		return -1;
	if (!o->outdir && e->trace.archive && !o->tap_thread) {
		msg_err("%s: a pack archive is read-only; say where the outputs go with -o DIR", e->trace.root);
		return -1;
	}
	e->outdir = strdup(o->outdir ? o->outdir : e->trace.root);
	if (!e->outdir) {
		msg_err("out of memory");
		return -1;
	}
	file_strip_slashes(e->outdir); /* "DIR/" names "DIR/thread.prv", not "DIR//thread.prv" */
	if (sched_create(e) != 0 || stream_threads(e) != 0 || run_hook(e, 0) != 0)
		return -1;
	if (open_outputs(e) != 0)
		goto discard;
	if (sched_connect(e) != 0) {
		msg_err("%s", fail_reason());
		goto discard;
	}
	if (run_hook(e, 1) != 0)
		goto discard;
	if (!o->tap_thread && write_views(e) != 0)
		goto discard;
	/* what create and connect set appears at time 0 */
	if (bay_propagate(&e->bay) != 0) {
		msg_err("%s", fail_reason());
		goto discard;
	}
	return 0;
discard:
	for (size_t i = 0; i < e->npvts; i++)
		pvt_discard(e->pvts[i]);
	return -1;
}

static uint64_t bytes_read(const struct emu *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nreaders; i++)
		n += e->readers[i].base + e->readers[i].pos;
	return n;
}

static uint64_t bytes_total(const struct emu *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nreaders; i++)
		if (e->readers[i].src && e->readers[i].src->size != UINT64_MAX)
			n += e->readers[i].src->size;
	return n;
}

static int fail_no_model(struct emu *e, unsigned char id)
{
	const struct emu_model *m = e->model[id];
	if (!m)
		return failf("no model handles events of model '%c'", id);
	return failf("the %s model is not enabled: no thread requires it (a call to "
		     "ovni_thread_require(\"%s\", \"%s\") is missing?)", m->info->name, m->info->name, m->info->version);
}

static int step(struct emu *e)
{
	struct player_ev *pe = &e->pev;
	struct emu_thread *th = e->stream_th[pe->stream];
	if (!th)
		return failf("the stream is not a thread stream (ovni.part is not \"thread\")");
	e->th = th;
	e->proc = th->sys->proc;
	e->loom = e->proc->loom;
	e->ev = pe->ev;
	e->last_dclock = pe->dclock; /* the clock of every .prv */
	unsigned char id = pe->ev->mcv[0];
	int (*event)(struct emu *) = e->event_of[id];
	if (!event)
		return fail_no_model(e, id);
	if (event(e) != 0)
		return -1;
	return bay_propagate(&e->bay);
}

static int write_failed(const struct emu *e)
{
	for (size_t i = 0; i < e->npvts; i++)
		if (e->pvts[i]->open && e->pvts[i]->prv.out.err)
			return 1;
	return 0;
}

static void report(struct emu *e)
{
	const struct player_ev *pe = &e->pev;
	const struct ev *ev = pe->ev;
	char mcv[4] = { 0 };
	for (int i = 0; i < 3; i++)
		mcv[i] = ev->mcv[i] >= 0x20 && ev->mcv[i] < 0x7f ? (char)ev->mcv[i] : '?';
	msg_err("%s: offset %" PRIu64 ": event %s at clock %" PRIu64 ": %s",
		e->trace.streams[pe->stream].obs_name, ev->offset, mcv, ev->clock, fail_reason());
}

int emu_run(struct emu *e)
{
	struct progress *p = &e->progress;
	progress_start(p, bytes_total(e), e->opts.progress);
	msg_info("emulation starts");
	fail_clear();
	/* models report often (burst statistics): one write per buffer (not
	 * under the progress line, which shares the terminal) */
	if (!e->opts.progress)
		msg_hold(1);
	int rc = 0;
	uint64_t n = e->nevents; /* in a register: stored back when the loop ends */
	for (;;) {
		int r = player_next(&e->player, &e->pev);
		if (r == 0)
			break;
		if (r < 0) { /* the reader said what is wrong with the stream */
			e->partial = 1;
			e->failed = 1;
			rc = -1;
			break;
		}
		if (emu_stop) {
			e->partial = 1;
			break;
		}
		if (e->pev.dclock > e->win_to) {
			e->partial = 1;
			e->past_window = 1;
			break;
		}
		if (step(e) != 0) {
			progress_clear(p);
			if (!write_failed(e)) /* else the writer said it */
				report(e);
			e->partial = 1;
			e->failed = 1;
			rc = -1;
			break;
		}
		if ((++n & 0x3fff) == 0)
			progress_tick(p, bytes_read(e), n);
	}
	e->nevents = n;
	progress_clear(p);
	msg_hold(0);
	double t = progress_now() - p->t0;
	msg_info("played %" PRIu64 " events in %.2f s (%.2f M events/s)%s", e->nevents, t,
		 t > 0 ? (double)e->nevents / t / 1e6 : 0.0, emu_stop ? ", interrupted" : "");
	return rc;
}

int emu_finish(struct emu *e)
{
	int rc = 0;
	fail_clear();
	for (int id = 0; id < 256; id++) {
		const struct emu_model *m = e->model[id];
		if (!e->enabled[id] || !m->finish)
			continue;
		if (m->finish(e) != 0) {
			msg_err("%s model: %s", m->info->name, fail_reason());
			fail_clear();
			rc = -1;
		}
	}
	if (e->win_from > emu_end(e) && !e->failed) {
		msg_err("the window starts %lld ns after the first event, but the trace ends at %lld ns",
			(long long)e->win_from, (long long)emu_end(e));
		rc = -1;
	}
	for (size_t i = 0; i < e->npvts; i++)
		if (pvt_close(e->pvts[i], emu_end(e)) != 0)
			rc = -1;
	return rc;
}

void emu_free(struct emu *e)
{
	for (size_t i = 0; i < e->npvts; i++)
		pvt_free(e->pvts[i]);
	for (int id = 0; id < 256; id++)
		if (e->model[id] && e->model[id]->free && e->mdata[id])
			e->model[id]->free(e);
	sched_free(e);
	if (e->have_player)
		player_free(&e->player);
	for (size_t i = 0; i < e->nreaders; i++)
		sr_close(&e->readers[i]);
	free(e->readers);
	free(e->stream_th);
	free(e->offsets);
	free(e->loom_first_thread);
	free(e->loom_nthreads);
	free(e->outdir);
	if (e->have_sys)
		system_free(&e->sys);
	if (e->have_trace)
		trace_close(&e->trace);
	bay_free(&e->bay);
	memset(e, 0, sizeof(*e));
}
