#include "trace/evspec.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/fmt.h"

enum piece_kind { PIECE_TEXT, PIECE_ARG, PIECE_FMT };

/* A description is compiled into literal runs and argument conversions. */
struct evspec_piece {
	uint8_t kind;
	uint8_t arg;
	uint8_t bits; /* PIECE_FMT integers: width of the converted value */
	uint8_t is_signed; /* PIECE_FMT integers: d or i */
	uint16_t len; /* PIECE_TEXT */
	const char *text; /* PIECE_TEXT: the bytes; PIECE_FMT: the printf format */
};

static const struct {
	const char *name;
	enum evarg_type type;
	uint8_t size;
} types[] = {
	{ "u8", EVARG_U8, 1 }, { "u16", EVARG_U16, 2 }, { "u32", EVARG_U32, 4 }, { "u64", EVARG_U64, 8 },
	{ "i8", EVARG_I8, 1 }, { "i16", EVARG_I16, 2 }, { "i32", EVARG_I32, 4 }, { "i64", EVARG_I64, 8 },
	{ "str", EVARG_STR, 0 },
};

const char *evarg_type_name(enum evarg_type t)
{
	return (size_t)t < sizeof(types) / sizeof(types[0]) ? types[t].name : "?";
}

static int is_signed_type(enum evarg_type t)
{
	return t >= EVARG_I8 && t <= EVARG_I64;
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

static int find_arg(const struct evspec *s, const char *name, size_t n)
{
	for (int i = 0; i < s->nargs; i++)
		if (strlen(s->args[i].name) == n && memcmp(s->args[i].name, name, n) == 0)
			return i;
	return -1;
}

/* One "type name" at *pp; on success *pp points past the name. */
static int parse_arg(struct evspec *s, const char **pp)
{
	const char *p = *pp;
	int idx = s->nargs + 1;
	size_t n = 0;
	while (isalnum((unsigned char)p[n]))
		n++;
	if (n == 0)
		return failf("argument %d: missing type", idx);
	size_t t;
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		if (strlen(types[t].name) == n && memcmp(types[t].name, p, n) == 0)
			break;
	if (t == sizeof(types) / sizeof(types[0]))
		return failf("argument %d: unknown type '%.*s'", idx, (int)n, p);
	p += n;
	if (*p != ' ')
		return failf("argument %d: expected a space after the type", idx);
	p = skip_spaces(p);
	n = 0;
	while (isgraph((unsigned char)p[n]) && p[n] != ',' && p[n] != ')')
		n++;
	if (n == 0)
		return failf("argument %d: missing name", idx);
	if (n > EVSPEC_MAX_NAME)
		return failf("argument %d: name longer than %d characters", idx, EVSPEC_MAX_NAME);
	if (find_arg(s, p, n) >= 0)
		return failf("argument %d: name '%.*s' used twice", idx, (int)n, p);
	if (s->nargs == EVSPEC_MAX_ARGS)
		return failf("more than %d arguments", EVSPEC_MAX_ARGS);
	if (s->str_arg >= 0)
		return failf("argument %d: a str argument must be the last one", idx);
	struct evarg *a = &s->args[s->nargs];
	a->type = types[t].type;
	memcpy(a->name, p, n);
	a->name[n] = '\0';
	if (a->type == EVARG_STR)
		s->str_arg = s->nargs;
	s->nargs++;
	*pp = p + n;
	return 0;
}

/* "(arg, arg, ...)" at p, which points at the '('. */
static int parse_args(struct evspec *s, const char *p)
{
	p = skip_spaces(p + 1);
	if (*p == ')')
		return failf("empty arguments \"()\"");
	for (;;) {
		if (parse_arg(s, &p) < 0)
			return -1;
		p = skip_spaces(p);
		if (*p == ')')
			break;
		if (*p != ',')
			return *p ? failf("expected ',' or ')' after argument %d, found '%c'", s->nargs, *p)
				  : failf("missing ')'");
		p = skip_spaces(p + 1);
	}
	if (p[1] != '\0')
		return failf("unexpected text after ')'");
	return 0;
}

static int parse_sig(struct evspec *s, const char *sig)
{
	for (int i = 0; i < 3; i++) {
		if (!isgraph((unsigned char)sig[i]))
			return failf("the MCV must be three visible characters");
		s->mcv[i] = (uint8_t)sig[i];
	}
	const char *p = sig + 3;
	if (*p == '+') {
		s->jumbo = 1;
		p++;
	}
	if (*p == '\0') {
		if (s->jumbo)
			return failf("a jumbo event needs arguments");
		return 0;
	}
	if (*p != '(')
		return failf("expected '(' after the MCV, found '%c'", *p);
	if (parse_args(s, p) < 0)
		return -1;
	uint32_t off = s->jumbo ? 4 : 0;
	for (int i = 0; i < s->nargs; i++) {
		s->args[i].offset = (uint16_t)off;
		off += types[s->args[i].type].size;
	}
	if (!s->jumbo && off > EV_MAX_PAYLOAD)
		return failf("the arguments take %u bytes, more than the %d of a normal event", off, EV_MAX_PAYLOAD);
	s->payload_min = off + (s->str_arg >= 0 ? 1 : 0);
	return 0;
}

struct fmt_spec {
	char flags[8];
	int nflags, width, prec, has_width, has_prec, bits;
	char conv;
};

/* Digits at f[*i], at most 3 of them (a field of up to 999 bytes). */
static int parse_num(const char *f, size_t n, size_t *i, int *v)
{
	int digits = 0;
	*v = 0;
	while (*i < n && isdigit((unsigned char)f[*i])) {
		if (++digits > 3)
			return -1;
		*v = *v * 10 + (f[*i] - '0');
		(*i)++;
	}
	return 0;
}

/* Splits a printf conversion (the text between '%' and '{'). */
static int split_fmt(const char *f, size_t n, struct fmt_spec *fs, const char **why)
{
	size_t i = 0;
	memset(fs, 0, sizeof(*fs));
	while (i < n && f[i] && strchr("-+ #0", f[i])) {
		if (!strchr(fs->flags, f[i]))
			fs->flags[fs->nflags++] = f[i];
		i++;
	}
	fs->has_width = i < n && isdigit((unsigned char)f[i]);
	if (parse_num(f, n, &i, &fs->width) < 0)
		return *why = "a width of more than 3 digits", -1;
	if (i < n && f[i] == '.') {
		i++;
		fs->has_prec = 1;
		if (parse_num(f, n, &i, &fs->prec) < 0)
			return *why = "a precision of more than 3 digits", -1;
	}
	fs->bits = 0; /* no length modifier */
	if (i + 1 < n && f[i] == 'h' && f[i + 1] == 'h')
		fs->bits = 8, i += 2;
	else if (i + 1 < n && f[i] == 'l' && f[i + 1] == 'l')
		fs->bits = 64, i += 2;
	else if (i < n && f[i] == 'h')
		fs->bits = 16, i++;
	else if (i < n && strchr("ljzt", f[i]))
		fs->bits = 64, i++;
	if (i == n)
		return *why = "no conversion letter", -1;
	if (i + 1 != n || !isalpha((unsigned char)f[i]))
		return *why = "text that is not a printf conversion", -1;
	fs->conv = f[i];
	return 0;
}

/* Checks that the conversion suits the argument and writes the printf
 * format we will really use (64-bit values for integers) into out. */
static int compile_fmt(const char *f, size_t n, const struct evarg *a, struct evspec_piece *pc, char *out, const char **why)
{
	struct fmt_spec fs;
	if (split_fmt(f, n, &fs, why) < 0)
		return -1;
	const char *allowed;
	if (a->type == EVARG_STR) {
		if (fs.conv != 's')
			return *why = "a str argument needs the conversion 's'", -1;
		if (fs.bits)
			return *why = "a str argument takes no length modifier", -1;
		allowed = "-";
	} else if (fs.conv == 'd' || fs.conv == 'i') {
		allowed = "-+ 0";
		pc->is_signed = 1;
	} else if (fs.conv == 'u') {
		allowed = "-0";
	} else if (fs.conv == 'o' || fs.conv == 'x' || fs.conv == 'X') {
		allowed = "-0#";
	} else {
		return *why = "an integer argument needs one of the conversions d i o u x X", -1;
	}
	for (int i = 0; i < fs.nflags; i++)
		if (!strchr(allowed, fs.flags[i]))
			return *why = "a flag that does not apply to this conversion", -1;
	int argbits = a->type == EVARG_STR ? 0 : 8 << (a->type & 3);
	/* Without a length modifier the value keeps its own width (at least
	 * int's, as C promotes it); hh and h narrow it as printf does. */
	pc->bits = (uint8_t)(fs.bits ? fs.bits : argbits > 32 ? argbits : 32);
	char *o = out;
	*o++ = '%';
	memcpy(o, fs.flags, (size_t)fs.nflags);
	o += fs.nflags;
	if (fs.has_width)
		o += sprintf(o, "%d", fs.width);
	if (fs.has_prec)
		o += sprintf(o, ".%d", fs.prec);
	if (a->type != EVARG_STR) {
		*o++ = 'l';
		*o++ = 'l';
	}
	*o++ = fs.conv;
	*o = '\0';
	return 0;
}

/* Appends a literal byte to the text piece being built (opening one). */
static void add_literal(struct evspec *s, char **buf, char c)
{
	struct evspec_piece *pc = s->npieces ? &s->pieces[s->npieces - 1] : NULL;
	if (!pc || pc->kind != PIECE_TEXT) {
		pc = &s->pieces[s->npieces++];
		memset(pc, 0, sizeof(*pc));
		pc->kind = PIECE_TEXT;
		pc->text = *buf;
	}
	*(*buf)++ = c;
	pc->len++;
}

static int compile_desc(struct evspec *s, const char *desc)
{
	size_t npct = 0, len = strlen(desc);
	if (len > 65535)
		return failf("description longer than 65535 bytes");
	for (const char *p = desc; *p; p++)
		npct += *p == '%';
	size_t maxpieces = 2 * npct + 1;
	/* Each %FMT{name} becomes a format no longer than its source text. */
	s->pieces = malloc(maxpieces * sizeof(struct evspec_piece) + len + 4 * npct + 1);
	if (!s->pieces)
		return failf("out of memory");
	char *buf = (char *)(s->pieces + maxpieces);
	s->npieces = 0;
	for (const char *p = desc; *p;) {
		if (*p != '%') {
			add_literal(s, &buf, *p++);
			continue;
		}
		size_t at = (size_t)(p - desc);
		if (p[1] == '%') {
			add_literal(s, &buf, '%');
			p += 2;
			continue;
		}
		if (p[1] == '\0')
			return failf("description byte %zu: '%%' at the end", at);
		const char *f = p + 1, *lb = strchr(f, '{');
		if (!lb)
			return failf("description byte %zu: '%%' without '{name}' (write %%%% for a '%%')", at);
		if (lb - f > 63)
			return failf("description byte %zu: conversion longer than 63 characters", at);
		const char *name = lb + 1, *q = name;
		while (isalnum((unsigned char)*q))
			q++;
		if (*q != '}')
			return failf(*q ? "description byte %zu: argument names are letters and digits only"
						   : "description byte %zu: missing '}'", (size_t)(q - desc));
		if (q == name)
			return failf("description byte %zu: empty argument name", at);
		int ai = find_arg(s, name, (size_t)(q - name));
		if (ai < 0)
			return failf("description byte %zu: no argument named '%.*s'", at, (int)(q - name), name);
		struct evspec_piece *pc = &s->pieces[s->npieces++];
		memset(pc, 0, sizeof(*pc));
		pc->arg = (uint8_t)ai;
		if (lb == f) {
			pc->kind = PIECE_ARG;
		} else {
			const char *why = "";
			pc->kind = PIECE_FMT;
			pc->text = buf;
			if (compile_fmt(f, (size_t)(lb - f), &s->args[ai], pc, buf, &why) < 0)
				return failf("description byte %zu: '%%%.*s' for %s argument '%s': %s", at,
					    (int)(lb - f), f, evarg_type_name(s->args[ai].type), s->args[ai].name, why);
			buf += strlen(buf) + 1;
		}
		p = q + 1;
	}
	return 0;
}

int evspec_parse(struct evspec *s, const char *sig, const char *desc)
{
	fail_clear(); /* a new signature: any earlier reason was someone else's */
	memset(s, 0, sizeof(*s));
	s->sig = sig;
	s->desc = desc;
	s->str_arg = -1;
	if (!sig)
		return failf("no signature");
	if (parse_sig(s, sig) < 0)
		return -1;
	if (desc && compile_desc(s, desc) < 0) {
		evspec_free(s);
		return -1;
	}
	return 0;
}

void evspec_free(struct evspec *s)
{
	free(s->pieces);
	s->pieces = NULL;
	s->npieces = 0;
}

static inline int fits(const struct evspec *s, const struct ev *ev)
{
	/* Arguments are laid out for one kind of event; no arguments fit both. */
	if (s->nargs && s->jumbo != ((ev->flags & EV_FLAG_JUMBO) != 0))
		return 0;
	if (ev->payload_size < s->payload_min)
		return 0;
	if (s->str_arg >= 0) {
		uint32_t off = s->args[s->str_arg].offset;
		if (!memchr(ev->payload + off, '\0', ev->payload_size - off))
			return 0;
	}
	return 1;
}

int evspec_fits(const struct evspec *s, const struct ev *ev)
{
	return fits(s, ev);
}

/* The argument's bits, sign-extended for the signed types. */
static uint64_t arg_value(const struct evarg *a, const uint8_t *payload)
{
	const uint8_t *p = payload + a->offset;
	switch (a->type) {
	case EVARG_U8: return p[0];
	case EVARG_I8: return (uint64_t)(int64_t)(int8_t)p[0];
	case EVARG_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case EVARG_I16: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(int64_t)v; }
	case EVARG_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case EVARG_I32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)(int64_t)v; }
	case EVARG_U64: { uint64_t v; memcpy(&v, p, 8); return v; }
	case EVARG_I64: { int64_t v; memcpy(&v, p, 8); return (uint64_t)v; }
	case EVARG_STR: break;
	}
	return 0;
}

/* The two's complement value of the low bits of v (bits <= 64). */
static int64_t as_signed(uint64_t v, int bits)
{
	if (bits < 64) {
		uint64_t sign = (uint64_t)1 << (bits - 1);
		v &= (sign << 1) - 1;
		if (v & sign)
			return -(int64_t)(((sign << 1) - v - 1)) - 1;
		return (int64_t)v;
	}
	return v > INT64_MAX ? -(int64_t)(UINT64_MAX - v) - 1 : (int64_t)v;
}

static int put_fmt(const struct evspec_piece *pc, const struct evarg *a, const struct ev *ev, char *d, size_t room)
{
	int r;
	if (a->type == EVARG_STR) {
		r = snprintf(d, room, pc->text, (const char *)ev->payload + a->offset);
	} else {
		uint64_t v = arg_value(a, ev->payload);
		if (pc->is_signed)
			r = snprintf(d, room, pc->text, (long long)as_signed(v, pc->bits));
		else
			r = snprintf(d, room, pc->text, (unsigned long long)(pc->bits < 64 ? v & ((1ull << pc->bits) - 1) : v));
	}
	return r < 0 || (size_t)r >= room ? -1 : r;
}

/* Copies n bytes with fixed-size moves: musl's memcpy is slow for the
 * short runs of a description. */
static inline void copy_short(char *d, const char *s, size_t n)
{
	if (n >= 16 && n <= 32) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8 && n < 16) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n >= 2 && n < 4) {
		memcpy(d, s, 2);
		memcpy(d + n - 2, s + n - 2, 2);
	} else if (n == 1) {
		*d = *s;
	} else if (n > 32) {
		memcpy(d, s, n);
	}
}

static const uint64_t pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* Decimal digits written in place, two at a time from fmt.h's table. */
static size_t put_u64(char *d, uint64_t v)
{
	size_t n = 1;
	while (n < 20 && v >= pow10[n])
		n++;
	fmt_u64_back(d + n, v);
	return n;
}

/* At most 20 digits and a sign. */
static size_t put_default(const struct evarg *a, const struct ev *ev, char *d)
{
	uint64_t v = arg_value(a, ev->payload);
	if (is_signed_type(a->type) && (v >> 63)) {
		*d = '-';
		return 1 + put_u64(d + 1, (uint64_t)0 - v);
	}
	return put_u64(d, v);
}

int evspec_describe(const struct evspec *s, const struct ev *ev, char *dst, size_t cap)
{
	if (cap == 0 || !fits(s, ev))
		return -1;
	char *d = dst, *end = dst + cap; /* d < end always: room for the NUL */
	for (int i = 0; i < s->npieces; i++) {
		const struct evspec_piece *pc = &s->pieces[i];
		const struct evarg *a = &s->args[pc->arg];
		size_t room = (size_t)(end - d);
		if (pc->kind == PIECE_TEXT) {
			if (pc->len >= room)
				return -1;
			copy_short(d, pc->text, pc->len);
			d += pc->len;
		} else if (pc->kind == PIECE_FMT) {
			int r = put_fmt(pc, a, ev, d, room);
			if (r < 0)
				return -1;
			d += r;
		} else if (a->type == EVARG_STR) {
			const char *str = (const char *)ev->payload + a->offset;
			size_t n = strlen(str);
			if (n >= room)
				return -1;
			copy_short(d, str, n);
			d += n;
		} else if (room > 21) {
			d += put_default(a, ev, d);
		} else {
			char tmp[24];
			size_t n = put_default(a, ev, tmp);
			if (n >= room)
				return -1;
			copy_short(d, tmp, n);
			d += n;
		}
	}
	*d = '\0';
	return (int)(d - dst);
}

int evspec_arg(const struct evspec *s, int i, const struct ev *ev, int64_t *i64, uint64_t *u64, const char **str)
{
	if (i < 0 || i >= s->nargs || !fits(s, ev))
		return -1;
	const struct evarg *a = &s->args[i];
	if (a->type == EVARG_STR) {
		if (str)
			*str = (const char *)ev->payload + a->offset;
	} else if (is_signed_type(a->type)) {
		if (i64)
			*i64 = as_signed(arg_value(a, ev->payload), 64);
	} else if (u64) {
		*u64 = arg_value(a, ev->payload);
	}
	return 0;
}
