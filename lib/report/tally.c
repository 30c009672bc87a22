#include "report/tally.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/msg.h"
#include "base/timearg.h"

#define NO_GROUP UINT32_MAX

static const char *const by_names[] = { "thread", "cpu", "process", "task-type" };

void tally_init(struct tally *t, struct src *s, enum tally_by by)
{
	memset(t, 0, sizeof(*t));
	t->src = s;
	t->by = by;
	t->side = by == TALLY_CPU ? SRC_CPU : SRC_THREAD;
}

static int add_group(struct tally *t, size_t chan, int64_t value, size_t row)
{
	if (t->ngroups == t->gcap) {
		size_t cap = t->gcap ? t->gcap * 2 : 16;
		struct tally_group *g = realloc(t->groups, cap * sizeof(*g));
		if (!g)
			return -1;
		t->groups = g;
		t->gcap = cap;
	}
	t->groups[t->ngroups++] = (struct tally_group){ 0, chan, value, row };
	return 0;
}

/* The tables, once the source knows its channels. */
static int prepare(struct tally *t)
{
	struct emu *e = &t->src->emu;
	t->ready = 1;
	t->from = src_from(t->src);
	t->to = src_to(t->src);
	t->nrows = t->side == SRC_CPU ? e->ncpus : e->nthreads;
	t->nchans = t->src->nchans[t->side];
	size_t n = t->nrows * t->nchans + 1;
	t->cur = calloc(n, sizeof(*t->cur));
	t->since = calloc(n, sizeof(*t->since));
	t->row_group = calloc(t->nrows + 1, sizeof(*t->row_group));
	t->row_since = calloc(t->nrows + 1, sizeof(*t->row_since));
	t->hmask = 1023;
	t->hash = calloc(t->hmask + 1, sizeof(*t->hash));
	if (!t->cur || !t->since || !t->row_group || !t->row_since || !t->hash)
		return failf("out of memory for the report");
	for (size_t r = 0; r < t->nrows; r++) {
		switch (t->by) {
		case TALLY_THREAD:
		case TALLY_CPU:
			t->row_group[r] = (uint32_t)r;
			if (add_group(t, 0, 0, r) != 0)
				return failf("out of memory for the report");
			break;
		case TALLY_PROCESS: {
			size_t p = e->threads[r].sys->proc->gindex;
			t->row_group[r] = (uint32_t)p;
			while (t->ngroups <= p)
				if (add_group(t, 0, 0, r) != 0)
					return failf("out of memory for the report");
			break;
		}
		case TALLY_TASK_TYPE:
			t->row_group[r] = 0; /* outside any task */
			break;
		}
	}
	if (t->by == TALLY_TASK_TYPE && add_group(t, SIZE_MAX, 0, 0) != 0)
		return failf("out of memory for the report");
	return 0;
}

static size_t hash_of(uint32_t group, uint32_t chan, int64_t value)
{
	uint64_t h = ((uint64_t)group << 32 | chan) * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)value * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ h >> 29);
}

static int grow_hash(struct tally *t)
{
	size_t mask = t->hmask * 2 + 1;
	uint32_t *h = calloc(mask + 1, sizeof(*h));
	if (!h)
		return -1;
	for (size_t i = 0; i < t->ncells; i++) {
		const struct tally_cell *c = &t->cells[i];
		size_t k = hash_of(c->group, c->chan, c->value) & mask;
		while (h[k])
			k = (k + 1) & mask;
		h[k] = (uint32_t)(i + 1);
	}
	free(t->hash);
	t->hash = h;
	t->hmask = mask;
	return 0;
}

static struct tally_cell *cell(struct tally *t, uint32_t group, uint32_t chan, int64_t value)
{
	size_t k = hash_of(group, chan, value) & t->hmask;
	for (; t->hash[k]; k = (k + 1) & t->hmask) {
		struct tally_cell *c = &t->cells[t->hash[k] - 1];
		if (c->group == group && c->chan == chan && c->value == value)
			return c;
	}
	if (t->ncells == t->ccap) {
		size_t cap = t->ccap ? t->ccap * 2 : 256;
		struct tally_cell *v = realloc(t->cells, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->cells = v;
		t->ccap = cap;
	}
	if ((t->ncells + 1) * 2 > t->hmask) {
		if (grow_hash(t) != 0)
			return NULL;
		return cell(t, group, chan, value);
	}
	t->cells[t->ncells] = (struct tally_cell){ group, chan, value, 0, 0 };
	t->hash[k] = (uint32_t)++t->ncells;
	return &t->cells[t->ncells - 1];
}

/* A stretch [t0, t1] of value: its part inside the window. It counts when
 * it reaches into the window (a zero-length one when it is inside). */
static int add(struct tally *t, uint32_t group, size_t chan, int64_t value, int64_t t0, int64_t t1)
{
	int64_t a = t0 > t->from ? t0 : t->from, b = t1 < t->to ? t1 : t->to;
	if (a > b || (a == b && t0 < t->from))
		return 0;
	struct tally_cell *c = cell(t, group, (uint32_t)chan, value);
	if (!c)
		return failf("out of memory for the report");
	c->ns += b - a;
	c->count++;
	return 0;
}

static void observe(struct tally *t, uint32_t group, int64_t t0, int64_t t1)
{
	int64_t a = t0 > t->from ? t0 : t->from, b = t1 < t->to ? t1 : t->to;
	if (a < b)
		t->groups[group].observed += b - a;
}

/* The group of a row by its task type: the first task type channel with a
 * value, else outside any task (group 0). */
static int type_group(struct tally *t, size_t row, uint32_t *out)
{
	const struct src_chan *chans = t->src->chans[t->side];
	*out = 0;
	for (size_t j = 0; j < t->nchans; j++) {
		int64_t v = t->cur[row * t->nchans + j];
		if (!(chans[j].flags & PVT_TASK_TYPE) || v == 0)
			continue;
		for (size_t g = 1; g < t->ngroups; g++) {
			if (t->groups[g].chan == j && t->groups[g].value == v) {
				*out = (uint32_t)g;
				return 0;
			}
		}
		if (add_group(t, j, v, row) != 0)
			return failf("out of memory for the report");
		*out = (uint32_t)(t->ngroups - 1);
		return 0;
	}
	return 0;
}

/* The row's task type changed at time: what it was in goes to the old
 * group, and goes on in the new one. */
static int regroup(struct tally *t, size_t row, int64_t time)
{
	uint32_t g;
	if (type_group(t, row, &g) != 0)
		return -1;
	uint32_t old = t->row_group[row];
	if (g == old)
		return 0;
	for (size_t j = 0; j < t->nchans; j++) {
		size_t k = row * t->nchans + j;
		if (t->cur[k] == 0 || t->since[k] >= time)
			continue;
		if (add(t, old, j, t->cur[k], t->since[k], time) != 0)
			return -1;
		t->since[k] = time;
	}
	observe(t, old, t->row_since[row], time);
	t->row_group[row] = g;
	t->row_since[row] = time;
	return 0;
}

int tally_line(void *arg, enum src_side side, size_t row, size_t chan, int64_t time, int64_t value)
{
	struct tally *t = arg;
	if (side != t->side)
		return 0;
	if (!t->ready && prepare(t) != 0)
		return -1;
	size_t k = row * t->nchans + chan;
	if (t->cur[k] != 0 && add(t, t->row_group[row], chan, t->cur[k], t->since[k], time) != 0)
		return -1;
	t->cur[k] = value;
	t->since[k] = time;
	if (t->by == TALLY_TASK_TYPE && (t->src->chans[side][chan].flags & PVT_TASK_TYPE))
		return regroup(t, row, time);
	return 0;
}

int tally_finish(struct tally *t)
{
	if (!t->ready && prepare(t) != 0) {
		msg_err("%s", fail_reason());
		return -1;
	}
	int64_t end = src_end(t->src);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t j = 0; j < t->nchans; j++) {
			size_t k = r * t->nchans + j;
			if (t->cur[k] != 0 && add(t, t->row_group[r], j, t->cur[k], t->since[k], end) != 0) {
				msg_err("%s", fail_reason());
				return -1;
			}
			t->cur[k] = 0;
		}
		observe(t, t->row_group[r], t->row_since[r], end);
	}
	return 0;
}

void tally_free(struct tally *t)
{
	free(t->cur);
	free(t->since);
	free(t->row_group);
	free(t->row_since);
	free(t->groups);
	free(t->cells);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* ---- output ---- */

static int by_group_chan_time(const void *a, const void *b)
{
	const struct tally_cell *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->chan != y->chan)
		return x->chan < y->chan ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* A group's name into buf (256 bytes). */
static const char *group_name(const struct tally *t, uint32_t g, char *buf)
{
	const struct emu *e = &t->src->emu;
	const struct tally_group *gr = &t->groups[g];
	switch (t->by) {
	case TALLY_THREAD:
		snprintf(buf, 256, "%s", e->threads[gr->first_row].sys->name);
		break;
	case TALLY_CPU: {
		const char *n = e->cpus[gr->first_row].sys->name;
		snprintf(buf, 256, "%s", n + strspn(n, " "));
		break;
	}
	case TALLY_PROCESS: {
		const struct sys_proc *p = e->threads[gr->first_row].sys->proc;
		snprintf(buf, 256, "pid %lld on %s", (long long)p->pid, p->loom->name);
		break;
	}
	case TALLY_TASK_TYPE: {
		if (g == 0) {
			snprintf(buf, 256, "(outside tasks)");
			break;
		}
		const struct src_chan *c = &t->src->chans[t->side][gr->chan];
		char v[24];
		snprintf(buf, 256, "%s (%s)", src_label_or_value(t->src, c, gr->value, v), c->model);
		break;
	}
	}
	return buf;
}

static double share(int64_t ns, int64_t observed)
{
	return observed > 0 ? (double)ns / (double)observed : 0.0;
}

struct span {
	size_t a, b; /* cells [a, b) of one group and channel */
	int64_t ns;
	uint64_t count;
};

/* The next run of cells with the group and channel of cells[a]. */
static struct span next_span(const struct tally_cell *c, size_t n, size_t a)
{
	struct span s = { a, a, 0, 0 };
	while (s.b < n && c[s.b].group == c[a].group && c[s.b].chan == c[a].chan) {
		s.ns += c[s.b].ns;
		s.count += c[s.b].count;
		s.b++;
	}
	return s;
}

static void csv_field(struct out *o, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		out_str(o, s);
		return;
	}
	out_char(o, '"');
	for (; *s; s++) {
		if (*s == '"')
			out_char(o, '"');
		out_char(o, *s);
	}
	out_char(o, '"');
}

static void chan_name(const struct src_chan *c, char *buf)
{
	snprintf(buf, 128, "%s/%s", c->model, c->name);
}

static void write_csv(const struct tally *t, const struct tally_cell *c, size_t n, struct out *o)
{
	out_printf(o, "%s,channel,type,title,state,value,ns,share,count\n", by_names[t->by]);
	for (size_t i = 0; i < n; i++) {
		const struct src_chan *ch = &t->src->chans[t->side][c[i].chan];
		char g[256], cn[128], v[24];
		csv_field(o, group_name(t, c[i].group, g));
		out_char(o, ',');
		chan_name(ch, cn);
		csv_field(o, cn);
		out_printf(o, ",%d,", ch->type);
		csv_field(o, ch->title);
		out_char(o, ',');
		csv_field(o, src_label_or_value(t->src, ch, c[i].value, v));
		out_printf(o, ",%lld,%lld,%.6f,%llu\n", (long long)c[i].value, (long long)c[i].ns,
			   share(c[i].ns, t->groups[c[i].group].observed), (unsigned long long)c[i].count);
	}
}

static void json_str(struct out *o, const char *s)
{
	out_json_string(o, s, strlen(s));
}

static void write_json(const struct tally *t, const struct tally_cell *c, size_t n, struct out *o)
{
	out_str(o, "{\"by\":");
	json_str(o, by_names[t->by]);
	out_str(o, ",\"trace\":");
	json_str(o, t->src->opts.tracedir);
	out_printf(o, ",\"from_ns\":%lld,\"to_ns\":%lld,\"groups\":[",
		   (long long)(t->from > 0 ? t->from : 0),
		   (long long)(t->to < src_end(t->src) ? t->to : src_end(t->src)));
	size_t i = 0;
	uint32_t last_group = NO_GROUP;
	while (i < n) {
		struct span s = next_span(c, n, i);
		const struct src_chan *ch = &t->src->chans[t->side][c[i].chan];
		char g[256], cn[128], v[24];
		if (c[i].group != last_group) {
			if (last_group != NO_GROUP)
				out_str(o, "]},\n");
			else
				out_char(o, '\n');
			out_str(o, "{\"name\":");
			json_str(o, group_name(t, c[i].group, g));
			out_printf(o, ",\"observed_ns\":%lld,\"channels\":[",
				   (long long)t->groups[c[i].group].observed);
			last_group = c[i].group;
		} else {
			out_char(o, ',');
		}
		chan_name(ch, cn);
		out_str(o, "\n {\"channel\":");
		json_str(o, cn);
		out_printf(o, ",\"type\":%d,\"title\":", ch->type);
		json_str(o, ch->title);
		out_printf(o, ",\"ns\":%lld,\"share\":%.6f,\"count\":%llu,\"states\":[", (long long)s.ns,
			   share(s.ns, t->groups[c[i].group].observed), (unsigned long long)s.count);
		for (size_t k = s.a; k < s.b; k++) {
			out_str(o, k == s.a ? "\n  {\"state\":" : ",\n  {\"state\":");
			json_str(o, src_label_or_value(t->src, ch, c[k].value, v));
			out_printf(o, ",\"value\":%lld,\"ns\":%lld,\"share\":%.6f,\"count\":%llu}",
				   (long long)c[k].value, (long long)c[k].ns,
				   share(c[k].ns, t->groups[c[k].group].observed), (unsigned long long)c[k].count);
		}
		out_str(o, "]}");
		i = s.b;
	}
	out_str(o, last_group != NO_GROUP ? "]}\n]}\n" : "]}\n");
}

/* Columns of the text table. */
enum { C_GROUP, C_CHAN, C_STATE, C_TIME, C_SHARE, C_COUNT, NCOLS };

static void text_cells(const struct tally *t, const struct tally_cell *c, const struct span *s,
		       int total, char cols[NCOLS][256])
{
	const struct src_chan *ch = &t->src->chans[t->side][c->chan];
	char v[24];
	int64_t ns = total ? s->ns : c->ns;
	uint64_t count = total ? s->count : c->count;
	group_name(t, c->group, cols[C_GROUP]);
	chan_name(ch, cols[C_CHAN]);
	snprintf(cols[C_STATE], 256, "%s", total ? "total" : src_label_or_value(t->src, ch, c->value, v));
	timearg_str(ns, cols[C_TIME]);
	snprintf(cols[C_SHARE], 256, "%.2f%%", 100.0 * share(ns, t->groups[c->group].observed));
	snprintf(cols[C_COUNT], 256, "%llu", (unsigned long long)count);
}

/* Two passes over the lines: the widths, then the table. */
static void write_text(const struct tally *t, const struct tally_cell *c, size_t n, struct out *o)
{
	static const char *const head[NCOLS] = { NULL, "channel", "state", "time", "share", "count" };
	static const int right[NCOLS] = { 0, 0, 0, 1, 1, 1 };
	size_t w[NCOLS];
	char cols[NCOLS][256];
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0) {
			for (int k = 0; k < NCOLS; k++)
				w[k] = strlen(k == C_GROUP ? by_names[t->by] : head[k]);
		} else {
			for (int k = 0; k < NCOLS; k++)
				out_printf(o, right[k] ? "%*s%s" : "%-*s%s", (int)w[k],
					   k == C_GROUP ? by_names[t->by] : head[k], k + 1 < NCOLS ? "  " : "\n");
		}
		uint32_t last_group = NO_GROUP;
		for (size_t i = 0; i < n;) {
			struct span s = next_span(c, n, i);
			for (size_t k = s.a; k <= s.b; k++) {
				int total = k == s.b;
				if (total && s.b - s.a < 2)
					break; /* one state: its line is the total */
				text_cells(t, &c[total ? s.a : k], &s, total, cols);
				if (c[s.a].group == last_group || total || k > s.a)
					cols[C_GROUP][0] = '\0';
				if (k > s.a && !total)
					cols[C_CHAN][0] = '\0';
				if (pass == 0) {
					for (int m = 0; m < NCOLS; m++)
						if (strlen(cols[m]) > w[m])
							w[m] = strlen(cols[m]);
					continue;
				}
				for (int m = 0; m < NCOLS; m++)
					out_printf(o, right[m] ? "%*s%s" : "%-*s%s", (int)w[m], cols[m],
						   m + 1 < NCOLS ? "  " : "\n");
			}
			last_group = c[s.a].group;
			i = s.b;
		}
	}
	int64_t from = t->from > 0 ? t->from : 0, to = t->to < src_end(t->src) ? t->to : src_end(t->src);
	char a[32], b[32];
	out_printf(o, "\n%zu %s%s from %s to %s after the start of the trace; share: of the time %s\n",
		   t->ngroups, by_names[t->by], t->ngroups == 1 ? "" : "s", timearg_str(from, a), timearg_str(to, b),
		   t->by == TALLY_TASK_TYPE ? "threads spent in the task type" :
		   t->by == TALLY_PROCESS ? "of all the threads of the process" : "in the window");
}

int tally_write(const struct tally *t, struct out *o, enum tally_format f)
{
	struct tally_cell *c = malloc((t->ncells + 1) * sizeof(*c));
	if (!c) {
		msg_err("out of memory for the report");
		return -1;
	}
	if (t->ncells)
		memcpy(c, t->cells, t->ncells * sizeof(*c));
	qsort(c, t->ncells, sizeof(*c), by_group_chan_time);
	if (f == TALLY_CSV)
		write_csv(t, c, t->ncells, o);
	else if (f == TALLY_JSON)
		write_json(t, c, t->ncells, o);
	else
		write_text(t, c, t->ncells, o);
	free(c);
	return o->err ? -1 : 0;
}
