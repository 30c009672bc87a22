#include "paraver/prv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/file.h"
#include "base/msg.h"

struct prv_sink {
	struct prv *prv;
	const int64_t *now; /* prv->now, one load nearer */
	struct value last; /* kind -1 before the first write: equals no value */
	int64_t add; /* 1 with PRV_NEXT */
	int zero_kind; /* VALUE_INT64 if an integer 0 is an error, else -1 */
	size_t headlen, typelen;
	uint64_t tail_seed; /* where the slots of the type start (struct tail) */
	char head[32]; /* "2:0:1:1:<row>:" */
	char typestr[16]; /* ":<type>:" */
	unsigned flags;
	int type;
	struct prv_sink *next;
	size_t row, seq; /* seq: registration order */
	int held; /* windowed: a value set before the window, in held_value */
	int64_t held_value;
};

/* Decimal digits of v (v >= 0). */
static inline size_t ndigits(uint64_t v)
{
	size_t n = 1;
	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	if (v >= 1000)
		return n + 3;
	if (v >= 100)
		return n + 2;
	return v >= 10 ? n + 1 : n;
}

/* Like fmt_i64, but writes the digits in place: no variable-size copy,
 * which costs more than the formatting on this path. */
static inline size_t put_i64(char *d, int64_t s)
{
	size_t neg = 0;
	uint64_t v = (uint64_t)s;
	if (s < 0) {
		*d++ = '-';
		v = (uint64_t)0 - v;
		neg = 1;
	}
	size_t n = ndigits(v);
	char *p = d + n;
	while (v >= 10000) {
		unsigned r = (unsigned)(v % 10000);
		v /= 10000;
		p -= 4;
		memcpy(p, fmt_digits4 + 4 * r, 4);
	}
	if (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, fmt_digits2 + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, fmt_digits2 + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return n + neg;
}

size_t prv_header(char *buf, size_t nrows, int64_t duration)
{
	int n = snprintf(buf, 128, "#Paraver (19/01/38 at 03:14):%020lld_ns:0:1:1(%zu:1)\n",
			 (long long)duration, nrows);
	return n < 0 ? 0 : (size_t)n;
}

int prv_open(struct prv *p, const char *path, size_t nrows)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->path = strdup(path);
	if (!p->path) {
		msg_err("%s: out of memory", path);
		return -1;
	}
	p->nrows = nrows;
	p->now = &p->time;
	if (out_create(&p->out, p->path, (size_t)256 << 10) != 0) {
		free(p->path);
		p->path = NULL;
		return -1;
	}
	p->fd = p->out.fd;
	out_start_writer(&p->out); /* else the writes stay in this thread */
	char h[128];
	out_mem(&p->out, h, prv_header(h, nrows, 0));
	return 0;
}

int prv_open_tap(struct prv *p, const char *name, size_t nrows, const struct prv_tap *tap)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->tap = tap;
	p->nrows = nrows;
	p->now = &p->time;
	p->path = strdup(name);
	if (!p->path) {
		msg_err("%s: out of memory", name);
		return -1;
	}
	return 0;
}

void prv_share_clock(struct prv *p, const int64_t *clock)
{
	p->now = clock;
	for (struct prv_sink *s = p->sinks; s; s = s->next)
		s->now = clock;
}

void prv_set_window(struct prv *p, int64_t from, int64_t to)
{
	p->windowed = 1;
	p->win_from = from;
	p->win_to = to;
}

/* The last time formatted by any .prv: the thread and CPU traces write
 * lines at the same times, so each time is formatted once. A pure function
 * of time (it starts as 0, valid), shared by all. From 10000 on, the last
 * four digits are a word of their own: the next time close by rewrites
 * only that word, and a line copies it whole right after (a wider copy of
 * bytes just stored in part stalls until the store is done). */
static struct {
	int64_t time;
	uint64_t low; /* time % 10000 when time >= 10000 */
	size_t len; /* of head */
	size_t len4; /* 4 when time >= 10000, else 0 */
	char head[24]; /* the digits before the last four (all of them below 10000) */
	uint32_t last4; /* the last four digits, as text */
} tcache = { 0, 0, 1, 0, "0", 0 };

/* The four digits of v < 10000, as text in a word: two lookups in the
 * small table (the big one misses the cache on scattered values). */
static inline uint32_t digits4(uint64_t v)
{
	uint64_t hi = v / 100;
	uint16_t a, b;
	memcpy(&a, fmt_digits2 + 2 * hi, 2);
	memcpy(&b, fmt_digits2 + 2 * (v - hi * 100), 2);
	return (uint32_t)a | (uint32_t)b << 16;
}

static __attribute__((noinline)) void tcache_format(int64_t t)
{
	if (t >= 10000) {
		uint64_t low = (uint64_t)t % 10000;
		tcache.len = put_i64(tcache.head, t / 10000);
		tcache.len4 = 4;
		tcache.last4 = digits4(low);
		tcache.low = low;
	} else {
		tcache.len = put_i64(tcache.head, t);
		tcache.len4 = 0;
		tcache.low = 0;
	}
	tcache.time = t;
}

static inline void tcache_set(int64_t t)
{
	/* events come close in time: often only the last 4 digits change */
	uint64_t low = tcache.low + ((uint64_t)t - (uint64_t)tcache.time);
	if (tcache.time >= 10000 && low < 10000) {
		tcache.last4 = digits4(low);
		tcache.low = low;
		tcache.time = t;
	} else {
		tcache_format(t);
	}
}

static __attribute__((noinline, cold)) int fail_dup(const struct chan *c, const struct prv_sink *s)
{
	char b[24];
	return failf("channel %s: value %s repeated in Paraver type %d", c->name,
		     value_str(chan_read(c), b), s->type);
}

static __attribute__((noinline, cold)) int fail_zero(const struct chan *c, const struct prv_sink *s)
{
	return failf("channel %s: value 0 is not allowed in Paraver type %d", c->name, s->type);
}

#define LINE_ROOM 128 /* a line is shorter; the buffer always has this room */

static __attribute__((noinline)) int make_room(struct prv *p)
{
	out_make_room(&p->out, LINE_ROOM);
	if (p->out.err)
		return failf("cannot write %s: %s", p->path, strerror(p->out.err));
	return 0;
}

/* The ends of lines with long values (>= 10 as unsigned), ":<type>:<value>\n",
 * by type and value: a task id or a type is written by the thread and CPU
 * rows of every type that shows it, at its start and at every resume. A
 * pure function of type and value, like tcache; an empty slot holds value
 * 0, which is never long. */
#define TAIL_SLOTS 512

struct tail {
	int64_t value;
	int type;
	uint32_t len;
	char text[40];
} __attribute__((aligned(64)));

static struct tail tails[TAIL_SLOTS];

/* The slot of w for the sink's type: close values (task ids) of one type
 * take different slots, and each type starts elsewhere (tail_seed). */
static inline struct tail *tail_slot(const struct prv_sink *s, int64_t w)
{
	return &tails[((uint64_t)w + s->tail_seed) % TAIL_SLOTS];
}

/* Writes the line of w with fixed-size copies: each piece's buffer is
 * copied whole, then the end pointer moves by its length. t holds the end
 * of the line unless w < 10 as unsigned. */
static inline int put_line(struct prv *p, const struct prv_sink *s, int64_t w, const struct tail *t)
{
	char *d = p->out.buf + p->out.len;
	memcpy(d, s->head, sizeof(s->head));
	d += s->headlen;
	memcpy(d, tcache.head, sizeof(tcache.head));
	d += tcache.len;
	memcpy(d, &tcache.last4, 4);
	d += tcache.len4;
	if ((uint64_t)w < 10) {
		memcpy(d, s->typestr, sizeof(s->typestr));
		d += s->typelen;
		d[0] = (char)('0' + w);
		d[1] = '\n';
		d += 2;
	} else {
		memcpy(d, t->text, sizeof(t->text));
		d += t->len;
	}
	p->out.len = (size_t)(d - p->out.buf);
	if (p->out.cap - p->out.len < LINE_ROOM)
		return make_room(p);
	return 0;
}

/* A long value whose end of line is not in its slot t: formatted there. */
static __attribute__((noinline)) int put_new_tail(struct prv_sink *s, int64_t w, struct tail *t)
{
	memcpy(t->text, s->typestr, sizeof(s->typestr));
	size_t n = s->typelen + put_i64(t->text + s->typelen, w);
	t->text[n] = '\n';
	t->len = (uint32_t)n + 1;
	t->value = w;
	t->type = s->type;
	return put_line(s->prv, s, w, t);
}

/* A line of w at the time tcache holds. A leaf but for tail calls. */
static inline int put_value(struct prv_sink *s, int64_t w)
{
	struct tail *t = NULL;
	if ((uint64_t)w >= 10) {
		t = tail_slot(s, w);
		if (t->value != w || t->type != s->type)
			return put_new_tail(s, w, t);
	}
	return put_line(s->prv, s, w, t);
}

/* Once the time is formatted: the value (or null) as a line. */
static inline int emit_now(struct chan *c, struct prv_sink *s)
{
	struct value v = chan_read(c);
	int64_t w = v.i + (v.kind == VALUE_INT64 ? s->add : 0); /* null holds 0 */
	if (w == 0 && v.kind == s->zero_kind)
		return fail_zero(c, s);
	s->last = v;
	return put_value(s, w);
}

/* The first line at a new time formats it for all. */
static __attribute__((noinline)) int emit_at_new_time(struct chan *c, struct prv_sink *s)
{
	tcache_set(*s->now);
	return emit_now(c, s);
}

/* The sink's rule for v: 1 = write it, 0 = nothing to write (a repeat it
 * skips), -1 = error (a repeat it refuses). */
static inline int repeat_rule(const struct chan *c, const struct prv_sink *s, struct value v)
{
	if (!value_eq(v, s->last) || (s->flags & PRV_EMITDUP))
		return 1;
	if (s->flags & PRV_SKIPDUP)
		return 0;
	if (!(s->flags & PRV_SKIPDUPNULL))
		return fail_dup(c, s);
	return !value_is_null(v);
}

static int emit(struct chan *c, void *arg)
{
	struct prv_sink *s = arg;
	int r = repeat_rule(c, s, chan_read(c));
	if (r <= 0)
		return r;
	if (*s->now != tcache.time)
		return emit_at_new_time(c, s);
	return emit_now(c, s);
}

/* emit() for a PRV_SKIPDUP or PRV_SKIPDUPNULL sink until its first value:
 * from then on a rewrite of the last value (a null one) writes nothing,
 * which the channel is told. */
static int emit_first(struct chan *c, void *arg)
{
	const struct prv_sink *s = arg;
	int r = emit(c, arg);
	if (r == 0)
		chan_emit_settles(c, emit_first, arg, emit,
				  s->flags & PRV_SKIPDUP ? CHAN_QUIET_DUP : CHAN_QUIET_NULL);
	return r;
}

/* What emit() decides, for the taps and windows (off the plain path):
 * 1 = write *w, 0 = nothing to write, -1 = error. */
static int decide(struct chan *c, struct prv_sink *s, int64_t *w)
{
	struct value v = chan_read(c);
	int r = repeat_rule(c, s, v);
	if (r <= 0)
		return r;
	*w = v.i + (v.kind == VALUE_INT64 ? s->add : 0);
	if (*w == 0 && v.kind == s->zero_kind)
		return fail_zero(c, s);
	s->last = v;
	return 1;
}

static int emit_tap(struct chan *c, void *arg)
{
	struct prv_sink *s = arg;
	int64_t w;
	int r = decide(c, s, &w);
	if (r <= 0)
		return r;
	const struct prv_tap *t = s->prv->tap;
	return t->line(t->arg, s->row, s->type, *s->prv->now, w);
}

static int by_row_then_seq(const void *a, const void *b)
{
	const struct prv_sink *x = *(const struct prv_sink *const *)a, *y = *(const struct prv_sink *const *)b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The window starts: what every sink holds goes out at win_from, by row
 * and in registration order. */
static int window_open(struct prv *p)
{
	p->win_open = 1;
	struct prv_sink **v = calloc(p->nsinks + 1, sizeof(*v));
	if (!v)
		return failf("out of memory for the Paraver output");
	size_t n = 0;
	for (struct prv_sink *s = p->sinks; s; s = s->next)
		if (s->held)
			v[n++] = s;
	qsort(v, n, sizeof(*v), by_row_then_seq);
	tcache_set(p->win_from);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		v[i]->held = 0;
		rc = put_value(v[i], v[i]->held_value);
	}
	free(v);
	return rc;
}

static int emit_window(struct chan *c, void *arg)
{
	struct prv_sink *s = arg;
	struct prv *p = s->prv;
	int64_t w;
	int r = decide(c, s, &w);
	if (r <= 0)
		return r;
	if (*p->now < p->win_from) {
		s->held = 1;
		s->held_value = w;
		return 0;
	}
	if (*p->now > p->win_to)
		return 0;
	if (!p->win_open && window_open(p) != 0)
		return -1;
	if (*p->now != tcache.time)
		tcache_set(*p->now);
	return put_value(s, w);
}

int prv_register(struct prv *p, size_t row, int type, struct chan *c, unsigned flags)
{
	if (row >= p->nrows)
		return failf("%s: row %zu out of %zu rows", p->path, row + 1, p->nrows);
	struct prv_sink *s = calloc(1, sizeof(*s));
	if (!s)
		return failf("out of memory for the Paraver output");
	s->prv = p;
	s->now = p->now;
	s->flags = flags;
	s->type = type;
	s->last.kind = -1;
	s->add = (flags & PRV_NEXT) != 0;
	s->zero_kind = flags & PRV_ZERO ? -1 : VALUE_INT64;
	s->headlen = (size_t)snprintf(s->head, sizeof(s->head), "2:0:1:1:%zu:", row + 1);
	s->typelen = (size_t)snprintf(s->typestr, sizeof(s->typestr), ":%d:", type);
	s->tail_seed = (uint64_t)(uint32_t)type * 97;
	s->next = p->sinks;
	p->sinks = s;
	s->row = row;
	s->seq = p->nsinks++;
	chan_cb_fn fn = p->tap ? emit_tap : p->windowed ? emit_window
		: (flags & (PRV_SKIPDUP | PRV_SKIPDUPNULL)) && !(flags & PRV_EMITDUP) ? emit_first : emit;
	if (chan_on_emit(c, fn, s) != 0)
		return failf("out of memory for the Paraver output");
	return 0;
}

static void free_sinks(struct prv *p)
{
	while (p->sinks) {
		struct prv_sink *n = p->sinks->next;
		free(p->sinks);
		p->sinks = n;
	}
}

int prv_close(struct prv *p, int64_t duration)
{
	if (!p->path)
		return 0;
	if (p->tap) {
		free_sinks(p);
		free(p->path);
		p->path = NULL;
		return 0;
	}
	int rc = 0;
	/* a window that no line reached still shows the values held */
	if (p->windowed && !p->win_open && duration >= p->win_from && window_open(p) != 0) {
		msg_err("%s: %s", p->path, fail_reason());
		rc = -1;
	}
	if (out_flush(&p->out) != 0)
		rc = -1;
	char h[128];
	size_t n = prv_header(h, p->nrows, duration);
	if (rc == 0 && pwrite(p->fd, h, n, 0) != (ssize_t)n) {
		msg_err("%s: cannot rewrite the header: %s", p->path, strerror(errno));
		rc = -1;
	}
	if (out_close(&p->out) != 0)
		rc = -1;
	free_sinks(p);
	free(p->path);
	p->path = NULL;
	return rc;
}

void prv_discard(struct prv *p)
{
	if (!p->path)
		return;
	if (p->out.buf) {
		p->out.len = 0;
		out_close(&p->out);
	} else if (p->fd >= 0) {
		close(p->fd);
	}
	if (!p->tap)
		file_remove_partial(p->path);
	free_sinks(p);
	free(p->path);
	p->path = NULL;
}
