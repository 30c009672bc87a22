#include "dump/dump.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/events.h"
#include "trace/evspec.h"
#include "trace/player.h"
#include "base/msg.h"

#define HEX_CHUNK 1024 /* payload bytes formatted per buffer reservation */
#define CLOCK_MAX 24 /* the clock column (up to 21), as written in 24 bytes */
#define DESC_MAX 1024 /* a longer description prints UNKNOWN, as the reference does */

#define TAIL_SLACK 16 /* a long tail is copied in 16-byte blocks */
#define TAIL_FAST 64 /* a tail up to this long is copied in one fixed-size copy */

/* ":xx" and a spare byte for each byte value: one 4-byte store per byte. */
static uint32_t hex3[256];

static void hex3_init(void)
{
	for (int i = 0; i < 256; i++) {
		char c[4] = { ':', fmt_hex2[2 * i], fmt_hex2[2 * i + 1], ' ' };
		memcpy(&hex3[i], c, 4);
	}
}

int dump_tail_init(struct dump_tail *t, const char *relpath)
{
	if (!hex3[0])
		hex3_init();
	size_t n = strlen(relpath);
	size_t len = n + 9;
	t->text = calloc(1, (len > TAIL_FAST ? len : TAIL_FAST) + TAIL_SLACK);
	if (!t->text) {
		msg_err("out of memory");
		return -1;
	}
	memcpy(t->text, "  MCV  ", 7); /* the MCV is written over per event */
	memcpy(t->text + 7, relpath, n);
	memcpy(t->text + 7 + n, "  ", 2);
	t->len = len;
	return 0;
}

void dump_tail_free(struct dump_tail *t)
{
	free(t->text);
	t->text = NULL;
}

static const uint64_t pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
	1000000000000ull, 10000000000000ull, 100000000000000ull,
	1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull,
};

static inline unsigned ndigits(uint64_t v)
{
	unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
	return t + (v >= pow10[t]);
}

/* "%10" PRIi64 of a clock, from scratch. */
static size_t clock10_full(char *d, int64_t clock)
{
	if (clock < 0)
		return fmt_i64_pad(d, clock, 10, ' ');
	uint64_t v = (uint64_t)clock;
	unsigned n = ndigits(v);
	memset(d, ' ', 10);
	char *end = d + (n > 10 ? n : 10);
	fmt_u64_back(end, v);
	return (size_t)(end - d);
}

/* The clock column as last formatted in full: the events of all streams
 * come close in time, so mostly only the last four digits change, and
 * those are written straight into the output (storing them into buf and
 * copying buf out would stall on store forwarding). Valid for every clock
 * from base to base + 9999: base is a multiple of 10000, buf holds base
 * formatted with its last four digits at len - 4. */
struct clock_col {
	uint64_t base;
	size_t len;
	char buf[24];
};

#define CLOCK_COL_INIT { 10000, 10, "     10000" }
#define CLOCK_BASE_MAX (INT64_MAX - INT64_MAX % 10000 - 10000) /* its range stays positive */

/* "%10" PRIi64 of a clock at d, writing 24 bytes; returns the end. */
static inline char *clock10(struct clock_col *c, char *d, int64_t clock)
{
	uint64_t low = (uint64_t)clock - c->base;
	if (__builtin_expect(low < 10000, 1)) {
		memcpy(d, c->buf, sizeof(c->buf));
		memcpy(d + c->len - 4, fmt_digits4 + 4 * low, 4);
		return d + c->len;
	}
	size_t n = clock10_full(d, clock);
	if (clock >= 10000 && clock <= CLOCK_BASE_MAX) {
		c->base = (uint64_t)(clock - clock % 10000);
		c->len = clock10_full(c->buf, (int64_t)c->base);
	}
	return d + n;
}

/* For the lines written one at a time. */
static struct clock_col ck = CLOCK_COL_INIT;

/* "  MCV  path  " at d, from the stream's tail; returns the end. Writes
 * up to TAIL_FAST or TAIL_SLACK bytes past it. */
static inline char *tail(char *d, const struct ev *ev, const struct dump_tail *t)
{
	if (__builtin_expect(t->len <= TAIL_FAST, 1))
		memcpy(d, t->text, TAIL_FAST);
	else
		for (size_t i = 0; i < t->len; i += 16)
			memcpy(d + i, t->text + i, 16);
	memcpy(d + 2, ev->mcv, 3);
	return d + t->len;
}

/* What a line before its payload may take in the buffer. */
static inline size_t head_room(const struct dump_tail *t)
{
	return CLOCK_MAX + (t->len > TAIL_FAST ? t->len + TAIL_SLACK : TAIL_FAST);
}

/* Writes one spare byte past the end. Payload bytes go two at a time: a
 * normal payload has 0 or 2..16 bytes. */
static inline char *hex_bytes(char *d, const uint8_t *p, uint32_t n)
{
	uint32_t i = 0;
	for (; i + 2 <= n; i += 2) {
		uint64_t w = hex3[p[i]] | (uint64_t)hex3[p[i + 1]] << 24;
		memcpy(d, &w, 8);
		d += 6;
	}
	if (i < n) {
		memcpy(d, &hex3[p[i]], 4);
		d += 3;
	}
	return d;
}

/* A line with a payload longer than a normal event's, in chunks. */
static __attribute__((noinline)) void hex_line_long(struct out *o, struct clock_col *c,
						    const struct ev *ev, const struct dump_tail *t)
{
	uint32_t n = ev->payload_size;
	uint32_t k = n < HEX_CHUNK ? n : HEX_CHUNK;
	char *start = out_reserve(o, head_room(t) + 3 * (size_t)k + 2);
	char *d = clock10(c, start, (int64_t)ev->clock);
	d = hex_bytes(tail(d, ev, t), ev->payload, k);
	for (uint32_t done = k; done < n; done += k) {
		out_commit(o, (size_t)(d - start));
		k = n - done < HEX_CHUNK ? n - done : HEX_CHUNK;
		start = out_reserve(o, 3 * (size_t)k + 2);
		d = hex_bytes(start, ev->payload + done, k);
	}
	*d++ = '\n';
	out_commit(o, (size_t)(d - start));
}

/* Inlined into the loop of dump_hex_play: a call per event costs more
 * than the line. */
static inline __attribute__((always_inline)) void hex_line(struct out *o, struct clock_col *c,
							  const struct ev *ev, const struct dump_tail *t)
{
	uint32_t n = ev->payload_size;
	if (__builtin_expect(n > 16, 0)) {
		hex_line_long(o, c, ev, t);
		return;
	}
	char *start = out_reserve(o, head_room(t) + 3 * 16 + 2);
	char *d = clock10(c, start, (int64_t)ev->clock);
	d = hex_bytes(tail(d, ev, t), ev->payload, n);
	*d++ = '\n';
	out_commit(o, (size_t)(d - start));
}

void dump_hex(struct out *o, const struct ev *ev, const struct dump_tail *t)
{
	hex_line(o, &ck, ev, t);
}

__attribute__((flatten)) int dump_hex_play(struct out *o, struct player *p, const struct dump_tail *tails)
{
	struct clock_col c = CLOCK_COL_INIT; /* a local: the compiler need not store it back per line */
	struct player_ev pe;
	int r;
	while ((r = player_next(p, &pe)) == 1 && !o->err)
		hex_line(o, &c, pe.ev, &tails[pe.stream]);
	return r < 0 ? -1 : 0;
}

/* What describes one MCV, learnt on its first event: a text that does not
 * depend on the payload (an event declared without arguments, or
 * UNKNOWN), else the spec to describe every event with. */
struct desc {
	const struct evspec *spec; /* NULL: text */
	char *text; /* padded to a multiple of 16 bytes: copied in blocks */
	size_t len;
};

#define DESC_BLOCKS (1u << 14) /* the first two MCV bytes, 7 bits each */

/* The descs of 7-bit MCVs (all that models declare), in blocks of 128 by
 * the third byte, made when first seen. */
struct desc_cache {
	struct desc **block;
};

static void desc_cache_free(struct desc_cache *dc)
{
	for (uint32_t b = 0; dc->block && b < DESC_BLOCKS; b++) {
		for (uint32_t k = 0; dc->block[b] && k < 128; k++)
			free(dc->block[b][k].text);
		free(dc->block[b]);
	}
	free(dc->block);
	dc->block = NULL;
}

/* The desc of ev's MCV, learnt now; NULL for an MCV that is not 7-bit or
 * when memory runs out (the caller then describes ev as it is). */
static __attribute__((noinline)) const struct desc *desc_learn(struct desc_cache *dc, const struct ev *ev)
{
	const uint8_t *m = ev->mcv;
	if ((m[0] | m[1] | m[2]) & 0x80)
		return NULL;
	struct desc **b = &dc->block[(uint32_t)m[0] << 7 | m[1]];
	if (!*b && !(*b = calloc(128, sizeof(**b))))
		return NULL;
	struct desc *ds = &(*b)[m[2]];
	const struct evspec *s = events_lookup(m);
	if (s && s->nargs > 0) {
		ds->spec = s;
		return ds;
	}
	char *text = malloc(DESC_MAX + 16);
	int len = s && text ? evspec_describe(s, ev, text, DESC_MAX) : -1;
	if (!text)
		return NULL;
	if (len < 0) {
		memcpy(text, "UNKNOWN", 7);
		len = 7;
	}
	ds->text = text;
	ds->len = (size_t)len;
	return ds;
}

static inline const struct desc *desc_of(struct desc_cache *dc, const struct ev *ev)
{
	const uint8_t *m = ev->mcv;
	if (!((m[0] | m[1] | m[2]) & 0x80)) {
		const struct desc *b = dc->block[(uint32_t)m[0] << 7 | m[1]];
		if (b && (b[m[2]].spec || b[m[2]].text))
			return &b[m[2]];
	}
	return desc_learn(dc, ev);
}

/* The description goes straight into the output buffer, where DESC_MAX
 * bytes (and 16 for the copy of a cached text in blocks) are reserved. */
static inline __attribute__((always_inline)) void text_line(struct out *o, struct clock_col *c,
							   struct desc_cache *dc, const struct ev *ev,
							   const struct dump_tail *t)
{
	char *start = out_reserve(o, head_room(t) + DESC_MAX + 16 + 1);
	char *d = tail(clock10(c, start, (int64_t)ev->clock), ev, t);
	const struct desc *ds = dc ? desc_of(dc, ev) : NULL;
	int len;
	if (ds && !ds->spec) {
		for (size_t i = 0; i < ds->len; i += 16)
			memcpy(d + i, ds->text + i, 16);
		len = (int)ds->len;
	} else {
		const struct evspec *s = ds ? ds->spec : events_lookup(ev->mcv);
		len = s ? evspec_describe(s, ev, d, DESC_MAX) : -1;
		if (len < 0) {
			memcpy(d, "UNKNOWN", 7);
			len = 7;
		}
	}
	d[len] = '\n';
	out_commit(o, (size_t)(d + len + 1 - start));
}

void dump_text(struct out *o, const struct ev *ev, const struct dump_tail *t)
{
	text_line(o, &ck, NULL, ev, t);
}

__attribute__((flatten)) int dump_text_play(struct out *o, struct player *p, const struct dump_tail *tails)
{
	struct clock_col c = CLOCK_COL_INIT;
	struct desc_cache dc = { calloc(DESC_BLOCKS, sizeof(*dc.block)) };
	struct desc_cache *dcp = dc.block ? &dc : NULL; /* without memory: each event described */
	struct player_ev pe;
	int r;
	while ((r = player_next(p, &pe)) == 1 && !o->err)
		text_line(o, &c, dcp, pe.ev, &tails[pe.stream]);
	desc_cache_free(&dc);
	return r < 0 ? -1 : 0;
}

static int is_signed(enum evarg_type t)
{
	return t == EVARG_I8 || t == EVARG_I16 || t == EVARG_I32 || t == EVARG_I64;
}

/* ,"args":{...} if every argument fits in the payload; else nothing. */
static int json_args(struct out *o, const struct evspec *s, const struct ev *ev)
{
	int64_t iv[EVSPEC_MAX_ARGS];
	uint64_t uv[EVSPEC_MAX_ARGS];
	const char *sv[EVSPEC_MAX_ARGS];
	for (int i = 0; i < s->nargs; i++)
		if (evspec_arg(s, i, ev, &iv[i], &uv[i], &sv[i]) < 0)
			return -1;
	out_str(o, ",\"args\":{");
	for (int i = 0; i < s->nargs; i++) {
		if (i)
			out_char(o, ',');
		out_json_string(o, s->args[i].name, strlen(s->args[i].name));
		out_char(o, ':');
		if (s->args[i].type == EVARG_STR)
			out_json_string(o, sv[i], strlen(sv[i]));
		else if (is_signed(s->args[i].type))
			out_i64(o, iv[i]);
		else
			out_u64(o, uv[i]);
	}
	out_char(o, '}');
	return 0;
}

void dump_json(struct out *o, const struct ev *ev, const char *relpath)
{
	out_str(o, "{\"clock\":");
	out_i64(o, (int64_t)ev->clock);
	out_str(o, ",\"mcv\":");
	out_json_string(o, (const char *)ev->mcv, 3);
	out_str(o, ",\"stream\":");
	out_json_string(o, relpath, strlen(relpath));
	out_str(o, ",\"offset\":");
	out_u64(o, ev->offset);
	const struct evspec *s = events_lookup(ev->mcv);
	if ((!s || json_args(o, s, ev) < 0) && ev->payload_size > 0) {
		out_str(o, ",\"payload\":\"");
		for (uint32_t i = 0; i < ev->payload_size; i++)
			out_mem(o, fmt_hex2 + 2 * ev->payload[i], 2);
		out_char(o, '"');
	}
	out_str(o, "}\n");
}

#define MCV_KEYS (1u << 21)

int mcv_filter_init(struct mcv_filter *f, const char *glob)
{
	f->glob = strdup(glob);
	f->seen = calloc(MCV_KEYS, 1); /* pages are only touched for the MCVs seen */
	if (!f->glob || !f->seen) {
		msg_err("out of memory");
		mcv_filter_free(f);
		return -1;
	}
	return 0;
}

int mcv_filter_match(struct mcv_filter *f, const uint8_t mcv[3])
{
	char s[4] = { (char)mcv[0], (char)mcv[1], (char)mcv[2], '\0' };
	if ((mcv[0] | mcv[1] | mcv[2]) & 0x80)
		return fnmatch(f->glob, s, 0) == 0;
	uint32_t key = (uint32_t)mcv[0] | (uint32_t)mcv[1] << 7 | (uint32_t)mcv[2] << 14;
	if (!f->seen[key])
		f->seen[key] = fnmatch(f->glob, s, 0) == 0 ? 1 : 2;
	return f->seen[key] == 1;
}

void mcv_filter_free(struct mcv_filter *f)
{
	free(f->glob);
	free(f->seen);
	f->glob = NULL;
	f->seen = NULL;
}

void dump_cmdline(struct out *o, const struct json *argv)
{
	for (size_t i = 0; argv && i < argv->u.arr.n; i++) {
		char *w = fmt_shell_word(argv->u.arr.items[i]->u.str.s);
		if (i)
			out_char(o, ' ');
		out_str(o, w ? w : "?");
		free(w);
	}
}

void dump_notes(struct out *o, const struct stream_meta *m, const char *relpath)
{
	char num[32];
	if (m->exe || m->argv) {
		out_str(o, "# ");
		out_str(o, relpath);
		out_str(o, ": process ");
		snprintf(num, sizeof(num), "%lld", (long long)m->pid);
		out_str(o, num);
		out_str(o, " runs ");
		out_str(o, m->exe ? m->exe : "?");
		if (m->argv) {
			out_str(o, ": ");
			dump_cmdline(o, m->argv);
		}
		out_char(o, '\n');
	}
	if (m->kernel_lost) {
		out_str(o, "# ");
		out_str(o, relpath);
		snprintf(num, sizeof(num), "%lld", (long long)m->kernel_lost);
		out_str(o, ": the kernel dropped ");
		out_str(o, num);
		out_str(o, " context switch records of this thread (its perf ring was full)\n");
	}
}
