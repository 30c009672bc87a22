/* JSON (RFC 8259) parser and writer. Only libc: the preload shim links it.
 *
 * Extension: comments (// to end of line, and block comments) are accepted
 * wherever whitespace is, because the reference reads stream.json "with
 * comments". Otherwise strict: UTF-8 only, no trailing commas, no duplicate
 * keys, no leading zeros, no lone surrogates. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* the shim may build this file without our flags */
#endif
#include "base/json.h"
#include "base/fail.h"
#include "base/file.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 512

/* Flags of struct json. A parsed document lives in an arena: a list of big
 * chunks freed together with the root, instead of one malloc per value (the
 * allocator made that the main cost of opening a trace of many streams).
 * Values built or attached later live on the heap; an arena object or array
 * that grows moves its keys and arrays to the heap first. */
#define F_ARENA 1u /* the node is inside an arena */
#define F_HEAPDATA 2u /* arena node whose string, keys or arrays moved to the heap */
#define F_DOC 4u /* the root of a parsed document: the arena starts with it */

struct chunk {
	struct chunk *next;
	size_t size, used;
};

/* Chunk headers keep the data after them aligned for any value. */
#define CHUNK_HDR ((sizeof(struct chunk) + 15) & ~(size_t)15)

struct arena {
	struct chunk *first, *cur;
	size_t total;
};

/* One entry of an object or array being parsed. */
struct slot {
	char *key;
	struct json *val;
	int line, col; /* of the key */
};

/* Growable byte buffer for strings and the writers. */
struct buf {
	char *s;
	size_t len, cap;
	int oom;
	int fixed; /* s is arena memory known to be big enough: never realloc */
};

struct parser {
	const char *p, *end;
	const char *line_start;
	int line;
	int depth;
	int failed;
	struct arena ar;
	struct slot *stack; /* members of the open objects and arrays (in the arena) */
	size_t top, cap;
};

static void *chunk_data(struct chunk *c)
{
	return (char *)c + CHUNK_HDR;
}

static struct chunk *new_chunk(struct arena *a, size_t size)
{
	struct chunk *c = malloc(CHUNK_HDR + size);
	if (!c)
		return NULL;
	c->next = NULL;
	c->size = size;
	c->used = 0;
	if (a->cur)
		a->cur->next = c;
	else
		a->first = c;
	a->cur = c;
	a->total += size;
	return c;
}

/* n bytes from the arena, 8-aligned; chunks double so that there are few. */
static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	struct chunk *c = a->cur;
	if (!c || c->size - c->used < n) {
		size_t size = a->total > n ? a->total : n;
		if (!(c = new_chunk(a, size < 1024 ? 1024 : size)))
			return NULL;
	}
	void *p = (char *)chunk_data(c) + c->used;
	c->used += n;
	return p;
}

static void arena_free(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;
		free(c);
		c = next;
	}
}

static int col_of(const struct parser *ps, const char *at)
{
	return (int)(at - ps->line_start) + 1;
}

static void vfail(struct parser *ps, int line, int col, const char *fmt, va_list ap)
{
	if (ps->failed)
		return;
	ps->failed = 1;
	char what[512];
	vsnprintf(what, sizeof(what), fmt, ap);
	failf("line %d, column %d: %s", line, col, what);
}

/* Records the first error, at the character at on the current line. */
__attribute__((format(printf, 3, 4)))
static void fail_at(struct parser *ps, const char *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(ps, ps->line, col_of(ps, at), fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5)))
static void fail_lc(struct parser *ps, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(ps, line, col, fmt, ap);
	va_end(ap);
}

static void newline(struct parser *ps, const char *after)
{
	ps->line++;
	ps->line_start = after;
}

/* Skips whitespace and comments; -1 on an unterminated block comment. */
static int skip_space(struct parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;
		if (c == ' ' || c == '\t' || c == '\r') {
			ps->p++;
		} else if (c == '\n') {
			ps->p++;
			newline(ps, ps->p);
		} else if (c == '/' && ps->end - ps->p >= 2 && ps->p[1] == '/') {
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
		} else if (c == '/' && ps->end - ps->p >= 2 && ps->p[1] == '*') {
			const char *start = ps->p;
			int line = ps->line;
			const char *ls = ps->line_start;
			ps->p += 2;
			for (;;) {
				if (ps->end - ps->p < 2) {
					ps->line = line;
					ps->line_start = ls;
					fail_at(ps, start, "unterminated comment");
					return -1;
				}
				if (ps->p[0] == '*' && ps->p[1] == '/')
					break;
				if (*ps->p == '\n')
					newline(ps, ps->p + 1);
				ps->p++;
			}
			ps->p += 2;
		} else {
			break;
		}
	}
	return 0;
}

static struct json *new_value(enum json_type type, int line, int col)
{
	struct json *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->type = type;
	v->line = line;
	v->col = col;
	return v;
}

static struct json *oom(struct parser *ps)
{
	fail_at(ps, ps->p, "out of memory");
	return NULL;
}

/* A value of the document being parsed, at line:col. */
static struct json *node(struct parser *ps, enum json_type type, int line, int col)
{
	struct json *v = arena_alloc(&ps->ar, sizeof(*v));
	if (!v)
		return oom(ps);
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->line = line;
	v->col = col;
	v->flags = F_ARENA;
	return v;
}

static int buf_grow(struct buf *b, size_t n)
{
	if (b->oom)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	if (b->fixed) {
		b->oom = 1;
		return -1;
	}
	size_t cap = b->cap ? b->cap : 64;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return -1;
		}
		cap *= 2;
	}
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (buf_grow(b, n + 1) < 0)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_char(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct buf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	buf_add(b, u, n);
}

/* Length of the valid UTF-8 sequence at p (non-ASCII lead byte), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if ((size_t)(end - p) < n)
		return 0;
	unsigned cp = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Parses the \uXXXX escape at p (pointing at the backslash); handles pairs. */
static int parse_unicode(struct parser *ps, struct buf *b)
{
	const char *esc = ps->p;
	unsigned hi, lo;
	if (ps->end - ps->p < 6 || hex4(ps->p + 2, &hi) < 0) {
		fail_at(ps, esc, "invalid \\u escape");
		return -1;
	}
	ps->p += 6;
	if (hi >= 0xdc00 && hi <= 0xdfff) {
		fail_at(ps, esc, "unpaired surrogate in \\u escape");
		return -1;
	}
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
		    hex4(ps->p + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
			fail_at(ps, esc, "unpaired surrogate in \\u escape");
			return -1;
		}
		ps->p += 6;
		hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	put_utf8(b, hi);
	return 0;
}

static int parse_escape(struct parser *ps, struct buf *b)
{
	if (ps->end - ps->p < 2) {
		fail_at(ps, ps->p, "unterminated string");
		return -1;
	}
	char c = ps->p[1];
	const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
	for (const char *m = map; *m; m += 2) {
		if (c == m[0]) {
			buf_char(b, m[1]);
			ps->p += 2;
			return 0;
		}
	}
	if (c == 'u')
		return parse_unicode(ps, b);
	fail_at(ps, ps->p, "invalid escape '\\%c'", c >= 0x20 && c < 0x7f ? c : '?');
	return -1;
}

/* Parses the string at ps->p (a '"') into the arena. Decoding never makes
 * a string longer than its source text, which sizes the buffer. */
static int parse_string_raw(struct parser *ps, char **out, size_t *outlen)
{
	const char *start = ps->p, *q = ps->p + 1;
	while (q < ps->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	size_t span = (size_t)((q < ps->end ? q : ps->end) - (start + 1));
	struct buf sb = { arena_alloc(&ps->ar, span + 1), 0, span + 1, 0, 1 };
	struct buf *b = &sb;
	if (!b->s) {
		oom(ps);
		return -1;
	}
	b->s[0] = '\0';
	ps->p++;
	for (;;) {
		if (ps->p >= ps->end) {
			fail_at(ps, start, "unterminated string");
			return -1;
		}
		unsigned char c = (unsigned char)*ps->p;
		if (c == '"') {
			ps->p++;
			break;
		}
		if (c == '\\') {
			if (parse_escape(ps, b) < 0)
				return -1;
		} else if (c < 0x20) {
			if (c == '\n')
				fail_at(ps, start, "unterminated string");
			else
				fail_at(ps, ps->p, "control character in string");
			return -1;
		} else if (c < 0x80) {
			const char *run = ps->p;
			while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' &&
			       (unsigned char)*ps->p >= 0x20 && (unsigned char)*ps->p < 0x80)
				ps->p++;
			buf_add(b, run, (size_t)(ps->p - run));
		} else {
			size_t n = utf8_len((const unsigned char *)ps->p, (const unsigned char *)ps->end);
			if (n == 0) {
				fail_at(ps, ps->p, "invalid UTF-8 in string");
				return -1;
			}
			buf_add(b, ps->p, n);
			ps->p += n;
		}
	}
	if (b->oom) {
		oom(ps);
		return -1;
	}
	*out = b->s;
	*outlen = b->len;
	return 0;
}

static struct json *parse_string(struct parser *ps)
{
	struct json *v = node(ps, JSON_STRING, ps->line, col_of(ps, ps->p));
	if (!v || parse_string_raw(ps, &v->u.str.s, &v->u.str.len) < 0)
		return NULL;
	return v;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *p, const char *end)
{
	while (p < end && is_digit(*p))
		p++;
	return p;
}

static struct json *parse_number(struct parser *ps)
{
	const char *s = ps->p, *p = s, *end = ps->end;
	if (p < end && *p == '-')
		p++;
	if (p >= end || !is_digit(*p)) {
		fail_at(ps, s, "invalid number");
		return NULL;
	}
	if (*p == '0') {
		p++;
		if (p < end && is_digit(*p)) {
			fail_at(ps, s, "invalid number (leading zero)");
			return NULL;
		}
	} else {
		p = skip_digits(p, end);
	}
	if (p < end && *p == '.') {
		p++;
		if (p >= end || !is_digit(*p)) {
			fail_at(ps, s, "invalid number");
			return NULL;
		}
		p = skip_digits(p, end);
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p)) {
			fail_at(ps, s, "invalid number");
			return NULL;
		}
		p = skip_digits(p, end);
	}
	/* strtod needs a terminated copy: the text may not end after the number. */
	char tmp[64];
	char *copy = tmp;
	size_t n = (size_t)(p - s);
	if (n >= sizeof(tmp)) {
		copy = malloc(n + 1);
		if (!copy)
			return oom(ps);
	}
	memcpy(copy, s, n);
	copy[n] = '\0';
	double d = strtod(copy, NULL);
	if (copy != tmp)
		free(copy);
	if (!isfinite(d)) {
		fail_at(ps, s, "number out of range");
		return NULL;
	}
	struct json *v = node(ps, JSON_NUMBER, ps->line, col_of(ps, s));
	if (!v)
		return NULL;
	v->u.number = d;
	ps->p = p;
	return v;
}

static int match_word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
		return 0;
	const char *after = ps->p + n;
	/* "trueish" is not "true" followed by garbage we would report later */
	if (after < ps->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') || is_digit(*after)))
		return 0;
	return 1;
}

static struct json *parse_value(struct parser *ps);

static void expected(struct parser *ps, const char *what)
{
	if (ps->p >= ps->end)
		fail_at(ps, ps->p, "expected %s, found end of input", what);
	else
		fail_at(ps, ps->p, "expected %s", what);
}

static int obj_push(struct json *o, char *key, struct json *val)
{
	if (o->u.obj.n == o->u.obj.cap) {
		size_t cap = o->u.obj.cap ? 2 * o->u.obj.cap : 4;
		char **k = realloc(o->u.obj.keys, cap * sizeof(*k));
		if (!k)
			return -1;
		o->u.obj.keys = k;
		struct json **v = realloc(o->u.obj.vals, cap * sizeof(*v));
		if (!v)
			return -1;
		o->u.obj.vals = v;
		o->u.obj.cap = cap;
	}
	o->u.obj.keys[o->u.obj.n] = key;
	o->u.obj.vals[o->u.obj.n] = val;
	o->u.obj.n++;
	return 0;
}

static int arr_push(struct json *a, struct json *val)
{
	if (a->u.arr.n == a->u.arr.cap) {
		size_t cap = a->u.arr.cap ? 2 * a->u.arr.cap : 4;
		struct json **v = realloc(a->u.arr.items, cap * sizeof(*v));
		if (!v)
			return -1;
		a->u.arr.items = v;
		a->u.arr.cap = cap;
	}
	a->u.arr.items[a->u.arr.n++] = val;
	return 0;
}

static int stack_push(struct parser *ps, char *key, struct json *val, int line, int col)
{
	if (ps->top == ps->cap) {
		/* the old stack stays in the arena: at most as much again is lost */
		size_t cap = ps->cap ? 2 * ps->cap : 16;
		struct slot *st = arena_alloc(&ps->ar, cap * sizeof(*st));
		if (!st) {
			oom(ps);
			return -1;
		}
		if (ps->top)
			memcpy(st, ps->stack, ps->top * sizeof(*st));
		ps->stack = st;
		ps->cap = cap;
	}
	ps->stack[ps->top++] = (struct slot){ key, val, line, col };
	return 0;
}

static int cmp_slot_key(const void *a, const void *b)
{
	const struct slot *x = *(const struct slot *const *)a, *y = *(const struct slot *const *)b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x < y ? -1 : x > y);
}

/* The first repeated key of the members st[0..n), in text order, or NULL.
 * Small objects compare pairs; big ones sort, to stay O(n log n). */
static const struct slot *find_duplicate(const struct slot *st, size_t n)
{
	const struct slot *dup = NULL;
	if (n <= 16) {
		for (size_t i = 1; i < n && !dup; i++)
			for (size_t j = 0; j < i && !dup; j++)
				if (strcmp(st[i].key, st[j].key) == 0)
					dup = &st[i];
		return dup;
	}
	const struct slot **by = malloc(n * sizeof(*by));
	if (!by)
		return NULL;
	for (size_t i = 0; i < n; i++)
		by[i] = &st[i];
	qsort(by, n, sizeof(*by), cmp_slot_key);
	for (size_t i = 1; i < n; i++)
		if (strcmp(by[i]->key, by[i - 1]->key) == 0 && (!dup || by[i] < dup))
			dup = by[i];
	free(by);
	return dup;
}

static int parse_member(struct parser *ps)
{
	if (ps->p >= ps->end || *ps->p != '"') {
		expected(ps, "a string key");
		return -1;
	}
	const char *kpos = ps->p;
	char *key;
	size_t keylen;
	if (parse_string_raw(ps, &key, &keylen) < 0)
		return -1;
	if (strlen(key) != keylen) {
		fail_at(ps, kpos, "key contains a NUL character");
		return -1;
	}
	int line = ps->line, col = col_of(ps, kpos); /* strings hold no newline */
	if (skip_space(ps) < 0)
		return -1;
	if (ps->p >= ps->end || *ps->p != ':') {
		expected(ps, "':'");
		return -1;
	}
	ps->p++;
	struct json *val = parse_value(ps);
	if (!val)
		return -1;
	return stack_push(ps, key, val, line, col);
}

/* Moves the members st[base..top) into v (an object or array) in the arena. */
static int close_container(struct parser *ps, struct json *v, size_t base)
{
	size_t n = ps->top - base;
	const struct slot *st = ps->stack + base;
	if (v->type == JSON_OBJECT) {
		const struct slot *dup = find_duplicate(st, n);
		if (dup) {
			fail_lc(ps, dup->line, dup->col, "duplicate key \"%s\"", dup->key);
			return -1;
		}
		v->u.obj.keys = arena_alloc(&ps->ar, n * sizeof(char *) + 1);
		v->u.obj.vals = arena_alloc(&ps->ar, n * sizeof(struct json *) + 1);
		if (!v->u.obj.keys || !v->u.obj.vals) {
			oom(ps);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			v->u.obj.keys[i] = st[i].key;
			v->u.obj.vals[i] = st[i].val;
		}
		v->u.obj.n = v->u.obj.cap = n;
	} else {
		v->u.arr.items = arena_alloc(&ps->ar, n * sizeof(struct json *) + 1);
		if (!v->u.arr.items) {
			oom(ps);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			v->u.arr.items[i] = st[i].val;
		v->u.arr.n = v->u.arr.cap = n;
	}
	ps->top = base;
	return 0;
}

static struct json *parse_object(struct parser *ps)
{
	struct json *o = node(ps, JSON_OBJECT, ps->line, col_of(ps, ps->p));
	size_t base = ps->top;
	if (!o)
		return NULL;
	ps->p++;
	if (skip_space(ps) < 0)
		return NULL;
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return close_container(ps, o, base) < 0 ? NULL : o;
	}
	for (;;) {
		if (parse_member(ps) < 0 || skip_space(ps) < 0)
			return NULL;
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			if (skip_space(ps) < 0)
				return NULL;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return close_container(ps, o, base) < 0 ? NULL : o;
		}
		expected(ps, "',' or '}'");
		return NULL;
	}
}

static struct json *parse_array(struct parser *ps)
{
	struct json *a = node(ps, JSON_ARRAY, ps->line, col_of(ps, ps->p));
	size_t base = ps->top;
	if (!a)
		return NULL;
	ps->p++;
	if (skip_space(ps) < 0)
		return NULL;
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return close_container(ps, a, base) < 0 ? NULL : a;
	}
	for (;;) {
		struct json *v = parse_value(ps);
		if (!v || stack_push(ps, NULL, v, 0, 0) < 0 || skip_space(ps) < 0)
			return NULL;
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return close_container(ps, a, base) < 0 ? NULL : a;
		}
		expected(ps, "',' or ']'");
		return NULL;
	}
}

static struct json *parse_word(struct parser *ps)
{
	static const struct { const char *w; enum json_type t; int b; } words[] = {
		{ "true", JSON_BOOL, 1 }, { "false", JSON_BOOL, 0 }, { "null", JSON_NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!match_word(ps, words[i].w))
			continue;
		struct json *v = node(ps, words[i].t, ps->line, col_of(ps, ps->p));
		if (!v)
			return NULL;
		v->u.boolean = words[i].b;
		ps->p += strlen(words[i].w);
		return v;
	}
	expected(ps, "a value");
	return NULL;
}

static struct json *parse_value(struct parser *ps)
{
	if (skip_space(ps) < 0)
		return NULL;
	if (ps->p >= ps->end) {
		expected(ps, "a value");
		return NULL;
	}
	char c = *ps->p;
	struct json *v;
	if (c == '{' || c == '[') {
		if (ps->depth >= JSON_MAX_DEPTH) {
			fail_at(ps, ps->p, "nesting deeper than %d levels", JSON_MAX_DEPTH);
			return NULL;
		}
		ps->depth++;
		v = c == '{' ? parse_object(ps) : parse_array(ps);
		ps->depth--;
		return v;
	}
	if (c == '"')
		return parse_string(ps);
	if (c == '-' || is_digit(c))
		return parse_number(ps);
	return parse_word(ps);
}

struct json *json_parse(const char *text, size_t len)
{
	fail_clear(); /* a new document: any earlier reason was someone else's */
	struct parser ps = {
		.p = text, .end = text + len, .line_start = text, .line = 1,
	};
	/* the root goes first in the first chunk, so that json_free finds the arena */
	struct json *root = NULL;
	struct chunk *first = new_chunk(&ps.ar, 2 * len + 512);
	if (first) {
		root = arena_alloc(&ps.ar, sizeof(*root));
	} else {
		oom(&ps);
	}
	struct json *v = root ? parse_value(&ps) : NULL;
	if (v && skip_space(&ps) == 0 && ps.p < ps.end)
		fail_at(&ps, ps.p, "trailing data after the JSON value");
	if (ps.failed || !v) {
		arena_free(ps.ar.first);
		return NULL;
	}
	*root = *v; /* nothing points at the top value: it can move */
	root->flags |= F_DOC;
	return root;
}

struct json *json_parse_file(const char *path)
{
	fail_clear();
	char *text = NULL;
	size_t cap = 0, len;
	int r = file_read_all(path, &text, &cap, &len);
	if (r != 0) {
		failf("%s: cannot %s: %s", path, r == FILE_CANNOT_OPEN ? "open" : "read", strerror(errno));
		free(text);
		return NULL;
	}
	struct json *v = json_parse(text, len);
	free(text);
	if (!v) {
		char why[1024];
		snprintf(why, sizeof(why), "%s", fail_take());
		failf("%s: %s", path, why);
	}
	return v;
}

/* Whether v's string, keys or arrays are its own heap memory. */
static int heap_data(const struct json *v)
{
	return !(v->flags & F_ARENA) || (v->flags & F_HEAPDATA);
}

void json_free(struct json *v)
{
	if (!v)
		return;
	switch (v->type) {
	case JSON_STRING:
		if (heap_data(v))
			free(v->u.str.s);
		break;
	case JSON_ARRAY:
		for (size_t i = 0; i < v->u.arr.n; i++)
			json_free(v->u.arr.items[i]);
		if (heap_data(v))
			free(v->u.arr.items);
		break;
	case JSON_OBJECT:
		for (size_t i = 0; i < v->u.obj.n; i++) {
			if (heap_data(v))
				free(v->u.obj.keys[i]);
			json_free(v->u.obj.vals[i]);
		}
		if (heap_data(v)) {
			free(v->u.obj.keys);
			free(v->u.obj.vals);
		}
		break;
	default:
		break;
	}
	if (v->flags & F_DOC)
		arena_free((struct chunk *)((char *)v - CHUNK_HDR));
	else if (!(v->flags & F_ARENA))
		free(v);
	/* a detached arena value stays in its arena until the document goes */
}

/* Before an arena object or array grows: its keys and arrays move to the heap. */
static int own_data(struct json *v)
{
	if (heap_data(v))
		return 0;
	if (v->type == JSON_ARRAY) {
		size_t n = v->u.arr.n, cap = n < 4 ? 4 : n;
		struct json **items = malloc(cap * sizeof(*items));
		if (!items)
			return -1;
		if (n)
			memcpy(items, v->u.arr.items, n * sizeof(*items));
		v->u.arr.items = items;
		v->u.arr.cap = cap;
	} else if (v->type == JSON_OBJECT) {
		size_t n = v->u.obj.n, cap = n < 4 ? 4 : n;
		char **keys = calloc(cap, sizeof(*keys));
		struct json **vals = malloc(cap * sizeof(*vals));
		for (size_t i = 0; keys && vals && i < n; i++) {
			if (!(keys[i] = strdup(v->u.obj.keys[i]))) {
				for (size_t j = 0; j < i; j++)
					free(keys[j]);
				free(keys);
				keys = NULL;
			}
		}
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		if (n)
			memcpy(vals, v->u.obj.vals, n * sizeof(*vals));
		v->u.obj.keys = keys;
		v->u.obj.vals = vals;
		v->u.obj.cap = cap;
	} else {
		return -1;
	}
	v->flags |= F_HEAPDATA;
	return 0;
}

static ssize_t obj_find(const struct json *v, const char *key, size_t keylen)
{
	if (!v || v->type != JSON_OBJECT)
		return -1;
	for (size_t i = 0; i < v->u.obj.n; i++)
		if (strncmp(v->u.obj.keys[i], key, keylen) == 0 && v->u.obj.keys[i][keylen] == '\0')
			return (ssize_t)i;
	return -1;
}

struct json *json_get(const struct json *v, const char *key)
{
	ssize_t i = obj_find(v, key, strlen(key));
	return i < 0 ? NULL : v->u.obj.vals[i];
}

struct json *json_dotget(const struct json *v, const char *dotpath)
{
	const char *p = dotpath;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		ssize_t i = obj_find(v, p, n);
		if (i < 0)
			return NULL;
		v = v->u.obj.vals[i];
		if (!dot)
			return (struct json *)v;
		p = dot + 1;
	}
}

struct json *json_new(enum json_type type)
{
	struct json *v = new_value(type, 0, 0);
	if (v && type == JSON_STRING) {
		v->u.str.s = calloc(1, 1);
		if (!v->u.str.s) {
			free(v);
			return NULL;
		}
	}
	return v;
}

struct json *json_new_number(double n)
{
	struct json *v = new_value(JSON_NUMBER, 0, 0);
	if (v)
		v->u.number = n;
	return v;
}

struct json *json_new_string(const char *s)
{
	struct json *v = new_value(JSON_STRING, 0, 0);
	if (!v)
		return NULL;
	v->u.str.len = strlen(s);
	v->u.str.s = malloc(v->u.str.len + 1);
	if (!v->u.str.s) {
		free(v);
		return NULL;
	}
	memcpy(v->u.str.s, s, v->u.str.len + 1);
	return v;
}

struct json *json_new_bool(int b)
{
	struct json *v = new_value(JSON_BOOL, 0, 0);
	if (v)
		v->u.boolean = !!b;
	return v;
}

/* Takes val even on failure (then frees it), so callers never leak. */
static int set_n(struct json *obj, const char *key, size_t keylen, struct json *val)
{
	if (!obj || obj->type != JSON_OBJECT || !val)
		goto err;
	ssize_t i = obj_find(obj, key, keylen);
	if (i >= 0) {
		json_free(obj->u.obj.vals[i]);
		obj->u.obj.vals[i] = val;
		return 0;
	}
	char *k = malloc(keylen + 1);
	if (!k)
		goto err;
	if (own_data(obj) < 0) {
		free(k);
		goto err;
	}
	memcpy(k, key, keylen);
	k[keylen] = '\0';
	if (obj_push(obj, k, val) < 0) {
		free(k);
		goto err;
	}
	return 0;
err:
	json_free(val);
	return -1;
}

int json_del(struct json *obj, const char *key)
{
	ssize_t i = obj_find(obj, key, strlen(key));
	if (i < 0)
		return 0;
	if (own_data(obj) < 0)
		return -1;
	struct json *v = obj->u.obj.vals[i];
	free(obj->u.obj.keys[i]);
	size_t rest = obj->u.obj.n - (size_t)i - 1; /* the order of the others stays */
	memmove(obj->u.obj.keys + i, obj->u.obj.keys + i + 1, rest * sizeof(*obj->u.obj.keys));
	memmove(obj->u.obj.vals + i, obj->u.obj.vals + i + 1, rest * sizeof(*obj->u.obj.vals));
	obj->u.obj.n--;
	json_free(v);
	return 0;
}

int json_set(struct json *obj, const char *key, struct json *val)
{
	return set_n(obj, key, strlen(key), val);
}

int json_dotset(struct json *obj, const char *dotpath, struct json *val)
{
	const char *p = dotpath;
	for (;;) {
		const char *dot = strchr(p, '.');
		if (!dot)
			return set_n(obj, p, strlen(p), val);
		size_t n = (size_t)(dot - p);
		if (!obj || obj->type != JSON_OBJECT)
			break;
		ssize_t i = obj_find(obj, p, n);
		struct json *next;
		if (i >= 0) {
			next = obj->u.obj.vals[i];
			if (next->type != JSON_OBJECT)
				break;
		} else {
			next = json_new(JSON_OBJECT);
			if (!next || set_n(obj, p, n, next) < 0)
				break;
		}
		obj = next;
		p = dot + 1;
	}
	json_free(val);
	return -1;
}

int json_append(struct json *arr, struct json *val)
{
	if (!arr || arr->type != JSON_ARRAY || !val || own_data(arr) < 0 || arr_push(arr, val) < 0) {
		json_free(val);
		return -1;
	}
	return 0;
}

struct json *json_copy(const struct json *v)
{
	struct json *c = new_value(v->type, v->line, v->col);
	if (!c)
		return NULL;
	switch (v->type) {
	case JSON_BOOL:
		c->u.boolean = v->u.boolean;
		break;
	case JSON_NUMBER:
		c->u.number = v->u.number;
		break;
	case JSON_STRING:
		c->u.str.s = malloc(v->u.str.len + 1);
		if (!c->u.str.s)
			goto err;
		memcpy(c->u.str.s, v->u.str.s, v->u.str.len + 1);
		c->u.str.len = v->u.str.len;
		break;
	case JSON_ARRAY:
		for (size_t i = 0; i < v->u.arr.n; i++) {
			struct json *e = json_copy(v->u.arr.items[i]);
			if (!e || arr_push(c, e) < 0) {
				json_free(e);
				goto err;
			}
		}
		break;
	case JSON_OBJECT:
		for (size_t i = 0; i < v->u.obj.n; i++) {
			if (json_set(c, v->u.obj.keys[i], json_copy(v->u.obj.vals[i])) < 0)
				goto err;
		}
		break;
	case JSON_NULL:
		break;
	}
	return c;
err:
	json_free(c);
	return NULL;
}

/* Writers. The escaping follows the reference: '/' becomes "\/", control
 * characters use the short escapes or \u00xx, other bytes go out as they are. */
static void write_string(struct buf *b, const char *s, size_t len)
{
	buf_char(b, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char tmp[8];
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '/': esc = "\\/"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (c < 0x20) {
				snprintf(tmp, sizeof(tmp), "\\u%04x", c);
				esc = tmp;
			}
		}
		if (esc)
			buf_add(b, esc, strlen(esc));
		else
			buf_char(b, (char)c);
	}
	buf_char(b, '"');
}

static void write_number(struct buf *b, double n)
{
	char tmp[40];
	int len = snprintf(tmp, sizeof(tmp), "%1.17g", n);
	if (len > 0)
		buf_add(b, tmp, (size_t)len);
}

static void indent(struct buf *b, int pretty, int level)
{
	if (!pretty)
		return;
	buf_char(b, '\n');
	for (int i = 0; i < level; i++)
		buf_add(b, "    ", 4);
}

static void write_value(struct buf *b, const struct json *v, int pretty, int level)
{
	switch (v->type) {
	case JSON_NULL:
		buf_add(b, "null", 4);
		break;
	case JSON_BOOL:
		if (v->u.boolean)
			buf_add(b, "true", 4);
		else
			buf_add(b, "false", 5);
		break;
	case JSON_NUMBER:
		write_number(b, v->u.number);
		break;
	case JSON_STRING:
		write_string(b, v->u.str.s, v->u.str.len);
		break;
	case JSON_ARRAY:
		buf_char(b, '[');
		for (size_t i = 0; i < v->u.arr.n; i++) {
			if (i)
				buf_char(b, ',');
			indent(b, pretty, level + 1);
			write_value(b, v->u.arr.items[i], pretty, level + 1);
		}
		if (v->u.arr.n)
			indent(b, pretty, level);
		buf_char(b, ']');
		break;
	case JSON_OBJECT:
		buf_char(b, '{');
		for (size_t i = 0; i < v->u.obj.n; i++) {
			if (i)
				buf_char(b, ',');
			indent(b, pretty, level + 1);
			write_string(b, v->u.obj.keys[i], strlen(v->u.obj.keys[i]));
			if (pretty)
				buf_add(b, ": ", 2);
			else
				buf_char(b, ':');
			write_value(b, v->u.obj.vals[i], pretty, level + 1);
		}
		if (v->u.obj.n)
			indent(b, pretty, level);
		buf_char(b, '}');
		break;
	}
}

static char *write_json(const struct json *v, int pretty, size_t *len)
{
	struct buf b = { 0 };
	buf_grow(&b, 256);
	write_value(&b, v, pretty, 0);
	if (b.oom || !b.s) {
		free(b.s);
		return NULL;
	}
	if (len)
		*len = b.len;
	return b.s;
}

char *json_write_pretty(const struct json *v, size_t *len)
{
	return write_json(v, 1, len);
}

char *json_write_compact(const struct json *v, size_t *len)
{
	return write_json(v, 0, len);
}

int json_int(const struct json *v, long long *out)
{
	if (!v || v->type != JSON_NUMBER)
		return -1;
	double d = v->u.number;
	/* 2^63 is exactly representable; anything at or above it overflows */
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
		return -1;
	long long n = (long long)d; /* in range: defined; no libm for the shim */
	if ((double)n != d)
		return -1;
	*out = n;
	return 0;
}

const char *json_type_name(enum json_type t)
{
	switch (t) {
	case JSON_NULL: return "null";
	case JSON_BOOL: return "boolean";
	case JSON_NUMBER: return "number";
	case JSON_STRING: return "string";
	case JSON_ARRAY: return "array";
	case JSON_OBJECT: return "object";
	}
	return "?";
}
