#include "dump/dump.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/events.h"
#include "trace/evspec.h"
#include "base/msg.h"

#define HEX_CHUNK 1024 /* payload bytes formatted per buffer reservation */
#define HEAD_MAX 26 /* clock (up to 21), two spaces, MCV */
#define DESC_MAX 1024 /* a longer description prints UNKNOWN, as the reference does */

#define TAIL_SLACK 16 /* the tail is copied in 16-byte blocks */

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
	t->text = calloc(1, n + 5 + TAIL_SLACK);
	if (!t->text) {
		msg_err("out of memory");
		return -1;
	}
	memcpy(t->text, "  ", 2);
	memcpy(t->text + 2, relpath, n);
	memcpy(t->text + 2 + n, "  ", 3);
	t->len = n + 4;
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

/* The last clock formatted: the events of all streams come close in time,
 * so often only its last four digits change. A pure function of clock
 * (it starts as 0, valid). */
static struct {
	int64_t clock;
	uint64_t low; /* clock % 10000 when clock >= 10000 */
	size_t len;
	char buf[24];
} ck = { 0, 0, 10, "         0" };

/* "%10" PRIi64 of a clock at d, writing 24 bytes; returns the end. */
static inline char *clock10(char *d, int64_t clock)
{
	uint64_t low = ck.low + ((uint64_t)clock - (uint64_t)ck.clock);
	if (ck.clock >= 10000 && low < 10000) {
		memcpy(ck.buf + ck.len - 4, fmt_digits4 + 4 * low, 4);
	} else {
		ck.len = clock10_full(ck.buf, clock);
		low = clock >= 10000 ? (uint64_t)(clock % 10000) : 0;
	}
	ck.low = low;
	ck.clock = clock;
	memcpy(d, ck.buf, sizeof(ck.buf));
	return d + ck.len;
}

/* "%10ld  MCV  path  " at d; returns the end. Writes up to TAIL_SLACK bytes
 * past it. */
static inline char *head(char *d, const struct ev *ev, const struct dump_tail *t)
{
	d = clock10(d, (int64_t)ev->clock);
	d[0] = ' ';
	d[1] = ' ';
	memcpy(d + 2, ev->mcv, 3);
	d += 5;
	for (size_t i = 0; i < t->len; i += 16)
		memcpy(d + i, t->text + i, 16);
	return d + t->len;
}

/* Writes one spare byte past the end. */
static inline char *hex_bytes(char *d, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		memcpy(d, &hex3[p[i]], 4);
		d += 3;
	}
	return d;
}

void dump_hex(struct out *o, const struct ev *ev, const struct dump_tail *t)
{
	uint32_t n = ev->payload_size;
	uint32_t k = n < HEX_CHUNK ? n : HEX_CHUNK;
	char *start = out_reserve(o, HEAD_MAX + t->len + TAIL_SLACK + 3 * (size_t)k + 1);
	char *d = hex_bytes(head(start, ev, t), ev->payload, k);
	for (uint32_t done = k; done < n; done += k) { /* only long jumbo events */
		out_commit(o, (size_t)(d - start));
		k = n - done < HEX_CHUNK ? n - done : HEX_CHUNK;
		start = out_reserve(o, 3 * (size_t)k + 1);
		d = hex_bytes(start, ev->payload + done, k);
	}
	*d++ = '\n';
	out_commit(o, (size_t)(d - start));
}

void dump_text(struct out *o, const struct ev *ev, const struct dump_tail *t)
{
	char desc[DESC_MAX];
	const struct evspec *s = events_lookup(ev->mcv);
	int len = s ? evspec_describe(s, ev, desc, sizeof(desc)) : -1;
	if (len < 0) {
		memcpy(desc, "UNKNOWN", 7);
		len = 7;
	}
	char *start = out_reserve(o, HEAD_MAX + t->len + TAIL_SLACK + (size_t)len + 1);
	char *d = head(start, ev, t);
	memcpy(d, desc, (size_t)len);
	d[len] = '\n';
	out_commit(o, (size_t)(d + len + 1 - start));
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
		const char *a = argv->u.arr.items[i]->u.str.s;
		if (i)
			out_char(o, ' ');
		if (*a && !a[strcspn(a, " \t\n'\"\\$`;&|<>()*?")]) {
			for (const char *c = a; *c; c++) /* one line: control bytes shown as '?' */
				out_char(o, (unsigned char)*c < 0x20 ? '?' : *c);
			continue;
		}
		out_char(o, '\'');
		for (const char *c = a; *c; c++) {
			if (*c == '\'')
				out_str(o, "'\\''");
			else
				out_char(o, (unsigned char)*c < 0x20 ? '?' : *c);
		}
		out_char(o, '\'');
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
