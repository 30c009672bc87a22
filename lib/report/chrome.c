#include "report/chrome.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "chan/chan.h"
#include "base/msg.h"

#define MAX_DEPTH CHAN_STACK_MAX

void chrome_init(struct chrome *c, struct src *s, struct out *o)
{
	memset(c, 0, sizeof(*c));
	c->src = s;
	c->out = o;
	c->first = 1;
}

/* ---- writing ---- */

/* Separates events: the first one follows the header. */
static void sep(struct chrome *c)
{
	out_str(c->out, c->first ? "\n" : ",\n");
	c->first = 0;
	c->nevents++;
}

/* ns as microseconds with three decimals: exact. */
static void put_ts(struct out *o, int64_t ns)
{
	char *d = out_reserve(o, 32);
	size_t n = fmt_i64(d, ns / 1000);
	d[n++] = '.';
	memcpy(d + n, fmt_digits4 + 4 * (ns % 1000) + 1, 3);
	out_commit(o, n + 3);
}

static int pid_of(const struct chrome *c, enum src_side side, size_t row)
{
	const struct emu *e = &c->src->emu;
	if (side == SRC_THREAD)
		return (int)e->threads[row].sys->proc->gindex + 1;
	return (int)(e->sys.nprocs + e->cpus[row].sys->loom->gindex) + 1;
}

static uint64_t tid_of(const struct chrome *c, enum src_side side, size_t row, size_t chan)
{
	uint64_t base = side == SRC_THREAD ? 0 : (uint64_t)c->nrows[SRC_THREAD] * c->nchans[SRC_THREAD];
	return base + (uint64_t)row * c->nchans[side] + chan + 1;
}

static void head(struct chrome *c, const char *ph, enum src_side side, size_t row, size_t chan)
{
	struct out *o = c->out;
	sep(c);
	out_str(o, "{\"ph\":\"");
	out_str(o, ph);
	out_str(o, "\",\"pid\":");
	out_i64(o, pid_of(c, side, row));
	out_str(o, ",\"tid\":");
	out_u64(o, tid_of(c, side, row, chan));
}

static void str(struct out *o, const char *s)
{
	out_json_string(o, s, strlen(s));
}

/* The process (threads of a process, or CPUs of a loom) and the track get
 * their names before the track's first event. */
static void name_track(struct chrome *c, enum src_side side, size_t row, size_t chan)
{
	const struct emu *e = &c->src->emu;
	const struct src_chan *ch = &c->src->chans[side][chan];
	struct out *o = c->out;
	int pid = pid_of(c, side, row);
	char buf[256];
	if (!c->pid_named[pid]) {
		c->pid_named[pid] = 1;
		if (side == SRC_THREAD) {
			const struct sys_proc *p = e->threads[row].sys->proc;
			snprintf(buf, sizeof(buf), "pid %lld on %s", (long long)p->pid, p->loom->name);
		} else {
			snprintf(buf, sizeof(buf), "CPUs of %s", e->cpus[row].sys->loom->name);
		}
		sep(c);
		out_str(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
		out_i64(o, pid);
		out_str(o, ",\"args\":{\"name\":");
		str(o, buf);
		out_str(o, "}}");
		sep(c);
		out_str(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
		out_i64(o, pid);
		out_str(o, ",\"args\":{\"sort_index\":");
		out_i64(o, pid);
		out_str(o, "}}");
	}
	const char *rowname = side == SRC_THREAD ? e->threads[row].sys->name : e->cpus[row].sys->name;
	snprintf(buf, sizeof(buf), "%s %s/%s", rowname + strspn(rowname, " "), ch->model, ch->name);
	head(c, "M", side, row, chan);
	out_str(o, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	str(o, buf);
	out_str(o, "}}");
	head(c, "M", side, row, chan);
	out_str(o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
	out_u64(o, tid_of(c, side, row, chan));
	out_str(o, "}}");
}

/* "B" or "i" with the value's name, its channel as category and the value. */
static void open_event(struct chrome *c, const char *ph, enum src_side side, size_t row, size_t chan,
		       int64_t ts, int64_t value)
{
	struct chrome_track *t = &c->tracks[side][row * c->nchans[side] + chan];
	if (!t->named) {
		t->named = 1;
		name_track(c, side, row, chan);
	}
	const struct src_chan *ch = &c->src->chans[side][chan];
	struct out *o = c->out;
	head(c, ph, side, row, chan);
	out_str(o, ",\"ts\":");
	put_ts(o, ts);
	if (ph[0] == 'i')
		out_str(o, ",\"s\":\"t\"");
	out_str(o, ",\"name\":");
	const char *l = src_label(c->src, ch, value);
	if (l) {
		str(o, l);
	} else { /* "<channel> <value>" */
		char buf[96];
		snprintf(buf, sizeof(buf), "%s %lld", ch->name, (long long)value);
		str(o, buf);
	}
	out_str(o, ",\"cat\":\"");
	out_str(o, ch->model); /* model and channel names are plain words */
	out_char(o, '/');
	out_str(o, ch->name);
	out_str(o, "\",\"args\":{\"value\":");
	out_i64(o, value);
	out_str(o, "}}");
}

static void end_event(struct chrome *c, enum src_side side, size_t row, size_t chan, int64_t ts)
{
	head(c, "E", side, row, chan);
	out_str(c->out, ",\"ts\":");
	put_ts(c->out, ts);
	out_char(c->out, '}');
}

/* ---- slices ---- */

static int prepare(struct chrome *c)
{
	struct emu *e = &c->src->emu;
	c->ready = 1;
	c->from = src_from(c->src);
	c->to = src_to(c->src);
	c->nrows[SRC_THREAD] = e->nthreads;
	c->nrows[SRC_CPU] = e->ncpus;
	for (int s = 0; s < SRC_NSIDES; s++) {
		c->nchans[s] = c->src->nchans[s];
		c->tracks[s] = calloc(c->nrows[s] * c->nchans[s] + 1, sizeof(struct chrome_track));
		if (!c->tracks[s])
			return failf("out of memory for the export");
	}
	c->npids = e->sys.nprocs + e->sys.nlooms + 1;
	c->pid_named = calloc(c->npids, 1);
	if (!c->pid_named)
		return failf("out of memory for the export");
	out_str(c->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"ovni export\",\"trace\":");
	str(c->out, c->src->opts.tracedir);
	out_str(c->out, "},\"traceEvents\":[");
	return 0;
}

/* Slices of the track that began before time and are not out yet begin
 * now (at the window's start if earlier): they last, or get a child. With
 * also_now (a child comes), those that began at time too. */
static void begin_pending(struct chrome *c, enum src_side side, size_t row, size_t chan,
			  struct chrome_track *t, int64_t time, int also_now)
{
	if (time < c->from || (time == c->from && !also_now))
		return;
	for (uint32_t i = 0; i < t->depth; i++) {
		struct chrome_slice *s = &t->st[i];
		if (s->begun || (s->start == time && !also_now))
			continue;
		s->begun = 1;
		open_event(c, "B", side, row, chan, s->start > c->from ? s->start : c->from, s->value);
	}
}

/* Ends the top slice at time: E if it began, an instant if it lasted no
 * time inside the window, nothing if it ended before the window. */
static void pop(struct chrome *c, enum src_side side, size_t row, size_t chan, struct chrome_track *t,
		int64_t time)
{
	struct chrome_slice *s = &t->st[--t->depth];
	if (s->begun)
		end_event(c, side, row, chan, time < c->to ? time : c->to);
	else if (s->start == time && time >= c->from && time <= c->to)
		open_event(c, "i", side, row, chan, time, s->value);
}

static int push(struct chrome *c, enum src_side side, size_t row, size_t chan, struct chrome_track *t,
		int64_t time, int64_t value)
{
	if (t->depth == MAX_DEPTH)
		pop(c, side, row, chan, t, time);
	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 4;
		struct chrome_slice *v = realloc(t->st, cap * sizeof(*v));
		if (!v)
			return failf("out of memory for the export");
		t->st = v;
		t->cap = cap;
	}
	t->st[t->depth++] = (struct chrome_slice){ value, time, 0 };
	return 0;
}

int chrome_line(void *arg, enum src_side side, size_t row, size_t chan, int64_t time, int64_t value)
{
	struct chrome *c = arg;
	if (!c->ready && prepare(c) != 0)
		return -1;
	struct chrome_track *t = &c->tracks[side][row * c->nchans[side] + chan];
	begin_pending(c, side, row, chan, t, time, 0);
	if (value == 0) {
		while (t->depth)
			pop(c, side, row, chan, t, time);
	} else if (c->src->chans[side][chan].flags & (PVT_STACK | PVT_TASK_TYPE)) {
		/* the top of a stack: a value below is a return to it (a pop),
		 * another one a new level */
		uint32_t i = t->depth;
		while (i > 0 && t->st[i - 1].value != value)
			i--;
		if (i > 0) {
			while (t->depth > i)
				pop(c, side, row, chan, t, time);
		} else {
			begin_pending(c, side, row, chan, t, time, 1);
			if (push(c, side, row, chan, t, time, value) != 0)
				return -1;
		}
	} else if (!t->depth || t->st[t->depth - 1].value != value) {
		while (t->depth)
			pop(c, side, row, chan, t, time);
		if (push(c, side, row, chan, t, time, value) != 0)
			return -1;
	}
	return c->out->err ? failf("cannot write %s", c->out->name) : 0;
}

int chrome_finish(struct chrome *c)
{
	if (!c->ready && prepare(c) != 0) {
		msg_err("%s", fail_reason());
		return -1;
	}
	int64_t end = src_end(c->src);
	if (end > c->to)
		end = c->to;
	for (int side = 0; side < SRC_NSIDES; side++) {
		for (size_t row = 0; row < c->nrows[side]; row++) {
			for (size_t chan = 0; chan < c->nchans[side]; chan++) {
				struct chrome_track *t = &c->tracks[side][row * c->nchans[side] + chan];
				begin_pending(c, (enum src_side)side, row, chan, t, end, 0);
				while (t->depth)
					pop(c, (enum src_side)side, row, chan, t, end);
			}
		}
	}
	out_str(c->out, c->first ? "]}\n" : "\n]}\n");
	return c->out->err ? -1 : 0;
}

void chrome_free(struct chrome *c)
{
	for (int side = 0; side < SRC_NSIDES; side++) {
		for (size_t k = 0; c->tracks[side] && k < c->nrows[side] * c->nchans[side]; k++)
			free(c->tracks[side][k].st);
		free(c->tracks[side]);
	}
	free(c->pid_named);
	memset(c, 0, sizeof(*c));
}
