/* nOS-V hardware counters: the metadata names them (nosv.hwc = {"0":
 * {"name": "PAPI_TOT_INS"}, ...}), a VWC event carries one int64 per
 * counter, the value counted since the previous VWC of that thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/msg.h"
#include "base/json.h"
#include "model/nosv/nosv.h"
#include "paraver/prv.h"

#define HWC_TYPE 200 /* Paraver type of counter 0 */
#define HWC_MAX 100 /* counters 200..299 */

static int bad(const char *file, const struct json *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line naming the stream.json (and where in it) and what is wrong. */
static int bad(const char *file, const struct json *at, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (at && at->line)
		msg_err("%s/stream.json: line %d, column %d: %s", file, at->line, at->col, why);
	else
		msg_err("%s/stream.json: %s", file, why);
	return -1;
}

/* The name of counter i in the object hwc, or NULL after a message. */
static const char *counter_name(const char *file, const struct json *hwc, size_t i)
{
	char key[24];
	snprintf(key, sizeof(key), "%zu", i);
	const struct json *c = json_get(hwc, key);
	if (!c) {
		bad(file, hwc, "nosv.hwc: the counters must be numbered \"0\", \"1\", ... without gaps");
		return NULL;
	}
	const struct json *name = json_get(c, "name");
	if (!name || name->type != JSON_STRING || name->u.str.len == 0 || strchr(name->u.str.s, '/')) {
		bad(file, c, "nosv.hwc: a counter needs a \"name\": a non-empty string without '/'");
		return NULL;
	}
	return name->u.str.s;
}

static int add_counters(struct nosv_hwc *h, const char *file, const struct json *hwc)
{
	size_t n = hwc->u.obj.n;
	if (n > HWC_MAX)
		return bad(file, hwc, "nosv.hwc: more than %d counters", HWC_MAX);
	h->names = calloc(n + 1, sizeof(*h->names));
	h->chan_names = calloc(n + 1, sizeof(*h->chan_names));
	if (!h->names || !h->chan_names)
		return bad(file, NULL, "out of memory");
	h->n = n;
	for (size_t i = 0; i < n; i++) {
		const char *name = counter_name(file, hwc, i);
		if (!name)
			return -1;
		size_t len = strlen(name) + 5;
		h->names[i] = strdup(name);
		h->chan_names[i] = malloc(len);
		if (!h->names[i] || !h->chan_names[i])
			return bad(file, NULL, "out of memory");
		snprintf(h->chan_names[i], len, "hwc-%s", name);
	}
	return 0;
}

/* Another thread's list must be the same as the first's. */
static int same_counters(const struct nosv_hwc *h, const char *file, const struct json *hwc, const char *first)
{
	if (hwc->u.obj.n != h->n)
		return bad(file, hwc, "nosv.hwc: %zu counters here but %zu in %s/stream.json", hwc->u.obj.n,
			   h->n, first);
	for (size_t i = 0; i < h->n; i++) {
		const char *name = counter_name(file, hwc, i);
		if (!name)
			return -1;
		if (strcmp(name, h->names[i]) != 0)
			return bad(file, hwc, "nosv.hwc: counter %zu is %s here but %s in %s/stream.json", i,
				   name, h->names[i], first);
	}
	return 0;
}

int nosv_hwc_load(struct nosv_hwc *h, struct emu *e)
{
	memset(h, 0, sizeof(*h));
	const char *first = NULL;
	for (size_t i = 0; i < e->nthreads; i++) {
		const struct trace_stream *s = &e->trace.streams[e->threads[i].sys->stream];
		const struct json *hwc = json_dotget(s->json, "nosv.hwc");
		const char *file = *s->relpath ? s->relpath : ".";
		if (!hwc)
			continue;
		if (hwc->type != JSON_OBJECT)
			return bad(file, hwc, "nosv.hwc must be an object");
		if (first) {
			if (same_counters(h, file, hwc, first) != 0)
				return -1;
			continue;
		}
		if (add_counters(h, file, hwc) != 0)
			return -1;
		first = file;
	}
	return 0;
}

void nosv_hwc_free(struct nosv_hwc *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->names[i]);
		free(h->chan_names[i]);
	}
	free(h->names);
	free(h->chan_names);
	memset(h, 0, sizeof(*h));
}

void nosv_hwc_defs(const struct nosv_hwc *h, struct mchan_def *defs)
{
	for (size_t i = 0; i < h->n; i++)
		defs[i] = (struct mchan_def){
			.name = h->chan_names[i], .chan_flags = CHAN_ALLOW_DUP,
			.type = HWC_TYPE + (int)i, .prv_flags = PRV_SKIPDUPNULL | PRV_ZERO,
			.th_track = TRACK_ACT, .cpu_track = TRACK_RUN,
			.title = h->names[i], .bare_title = 1, .colors = CFG_NULL_GRADIENT,
		};
}

/* A counter view draws the value of the next event: the count of the
 * interval that event closes. */
static int retitle(struct cfg_view *v, const char *side, const char *name, const char *suffix)
{
	size_t len = strlen(side) + strlen(name) + strlen(suffix) + 16;
	char *title = malloc(len);
	if (!title)
		return failf("out of memory for the counter views");
	snprintf(title, len, "%s: nOS-V %s%s", side, name, suffix);
	free(v->title);
	v->title = title;
	v->next_value = 1;
	return 0;
}

int nosv_hwc_views(const struct nosv_hwc *h, struct mchan *m)
{
	for (size_t i = 0; i < h->n; i++) {
		size_t k = NOSV_NFIXED + i;
		if (retitle(m->th_view[k], "Thread", h->names[i], mchan_suffix(TRACK_ACT)) != 0 ||
		    retitle(m->cpu_view[k], "CPU", h->names[i], mchan_suffix(TRACK_RUN)) != 0)
			return -1;
	}
	return 0;
}

int nosv_hwc_event(const struct nosv_hwc *h, struct mchan *m, struct emu *e)
{
	const uint8_t *p;
	uint32_t size;
	if (nosv_jumbo(e, "hardware counter", &p, &size) != 0)
		return -1;
	if (h->n == 0)
		return failf("a hardware counter event, but no stream declares counters in nosv.hwc");
	if (size != h->n * 8)
		return failf("the hardware counter event carries %u bytes, not 8 for each of the %zu "
			     "counters of nosv.hwc", size, h->n);
	size_t th = e->th->gindex;
	for (size_t i = 0; i < h->n; i++) {
		int64_t v;
		memcpy(&v, p + 8 * i, 8);
		if (chan_set(mchan_th(m, th, NOSV_NFIXED + i), value_int64(v)) != 0)
			return -1;
	}
	return 0;
}
