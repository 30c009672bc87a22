#include "base/timearg.h"

#include <stdio.h>
#include <string.h>

#include "base/msg.h"

static const struct {
	const char *name;
	int64_t ns; /* one unit */
	int decimals; /* digits after the point that still name whole ns */
} units[] = {
	{ "s", 1000000000, 9 },
	{ "ms", 1000000, 6 },
	{ "us", 1000, 3 },
	{ "ns", 1, 0 },
};

static int bad(const char *opt, const char *s, const char *why)
{
	msg_err("%s '%s': %s", opt, s, why);
	return -1;
}

/* Decimal digits at *p into *v; -1 on overflow. Advances *p. */
static int digits(const char **p, int64_t *v, int *n)
{
	*v = 0;
	*n = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++, (*n)++) {
		int d = **p - '0';
		if (*v > (INT64_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return 0;
}

int timearg_parse(struct timearg *t, const char *s, const char *opt)
{
	const char *p = s;
	int64_t whole, frac = 0;
	int nwhole, nfrac = 0;
	memset(t, 0, sizeof(*t));
	if (*p == '@') {
		p++;
		if (digits(&p, &whole, &nwhole) != 0)
			return bad(opt, s, "the clock is too large");
		if (nwhole == 0 || *p)
			return bad(opt, s, "@ must be followed by a clock in ns (digits only)");
		t->ns = whole;
		t->raw = 1;
		t->set = 1;
		return 0;
	}
	if (*p == '-' || *p == '+')
		return bad(opt, s, "a time from the start of the trace cannot be signed");
	if (digits(&p, &whole, &nwhole) != 0)
		return bad(opt, s, "too large");
	if (*p == '.') {
		p++;
		const char *f = p;
		/* leading digits only: a longer fraction is checked below */
		while (*p >= '0' && *p <= '9')
			p++;
		nfrac = (int)(p - f);
		for (int i = 0; i < nfrac && i < 10; i++)
			frac = frac * 10 + (f[i] - '0');
	}
	if (nwhole == 0 && nfrac == 0)
		return bad(opt, s, "expected a time such as 1.5s, 200ms, 30us, 12ns or @CLOCK");
	if (*p == '\0')
		return bad(opt, s, "needs a unit (s, ms, us or ns), or @ before a raw clock");
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].name) != 0)
			continue;
		if (nfrac > units[i].decimals)
			return bad(opt, s, "finer than a nanosecond");
		int64_t scale = units[i].ns;
		if (whole > INT64_MAX / scale)
			return bad(opt, s, "too large");
		int64_t f = frac;
		for (int k = nfrac; k < units[i].decimals; k++)
			f *= 10;
		if (whole * scale > INT64_MAX - f)
			return bad(opt, s, "too large");
		t->ns = whole * scale + f;
		t->set = 1;
		return 0;
	}
	return bad(opt, s, "unknown unit (s, ms, us or ns)");
}

/* start + ns, or the clock; saturates instead of wrapping. */
static int64_t resolve(const struct timearg *t, int64_t start)
{
	if (t->raw)
		return t->ns;
	if (start > 0 && t->ns > INT64_MAX - start)
		return INT64_MAX;
	return start + t->ns;
}

int timewin_resolve(const struct timewin *w, int64_t start, int64_t *from, int64_t *to)
{
	*from = w->from.set ? resolve(&w->from, start) : INT64_MIN;
	*to = w->to.set ? resolve(&w->to, start) : INT64_MAX;
	if (*from < *to)
		return 0;
	if (*from == *to)
		msg_err("--from and --to give an empty window (both at clock %lld)", (long long)*from);
	else
		msg_err("--from is after --to: the window is inverted (clock %lld > %lld)",
			(long long)*from, (long long)*to);
	return -1;
}

const char *timearg_str(int64_t ns, char *buf)
{
	const char *sign = "";
	uint64_t v = (uint64_t)ns;
	if (ns < 0) {
		sign = "-";
		v = (uint64_t)0 - v;
	}
	if (v < 1000) {
		snprintf(buf, 32, "%s%lluns", sign, (unsigned long long)v);
		return buf;
	}
	int u = v < 1000000 ? 2 : v < 1000000000 ? 1 : 0;
	uint64_t scale = (uint64_t)units[u].ns;
	uint64_t whole = v / scale, frac = v % scale;
	int dec = units[u].decimals;
	while (dec > 0 && frac % 10 == 0) {
		frac /= 10;
		dec--;
	}
	if (dec == 0)
		snprintf(buf, 32, "%s%llu%s", sign, (unsigned long long)whole, units[u].name);
	else
		snprintf(buf, 32, "%s%llu.%0*llu%s", sign, (unsigned long long)whole, dec,
			 (unsigned long long)frac, units[u].name);
	return buf;
}
