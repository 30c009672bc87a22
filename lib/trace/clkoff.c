#include "trace/clkoff.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/msg.h"

struct row {
	char *host;
	int64_t offset;
	size_t line;
	int used;
};

struct table {
	const char *path;
	struct row *rows;
	size_t n, cap;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

/* The fields of one line read like sscanf("%ld %s %lf %lf %lf"): returns how
 * many were read before the first that does not parse. */
static int scan_line(const char *p, const char *end, long *rank, const char **host, size_t *hostlen, double *med)
{
	char num[128];
	p = skip_space(p, end);
	const char *s = p;
	while (p < end && !is_space(*p))
		p++;
	size_t n = (size_t)(p - s);
	if (n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, s, n);
	num[n] = '\0';
	char *stop;
	*rank = strtol(num, &stop, 10);
	if (stop == num)
		return 0;
	/* sscanf stops the number where it stops: the rest is the next field */
	p = s + (stop - num);
	int got = 1;
	p = skip_space(p, end);
	*host = p;
	while (p < end && !is_space(*p))
		p++;
	*hostlen = (size_t)(p - *host);
	if (*hostlen == 0)
		return got;
	got++;
	for (int i = 0; i < 3; i++) {
		p = skip_space(p, end);
		s = p;
		while (p < end && !is_space(*p))
			p++;
		n = (size_t)(p - s);
		if (n == 0 || n >= sizeof(num))
			return got;
		memcpy(num, s, n);
		num[n] = '\0';
		double d = strtod(num, &stop);
		if (stop == num)
			return got;
		if (i == 0)
			*med = d;
		p = s + (stop - num);
		got++;
	}
	return got;
}

static int add_row(struct table *t, const char *host, size_t len, double med, size_t line)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strlen(t->rows[i].host) == len && memcmp(t->rows[i].host, host, len) == 0) {
			msg_err("%s: line %zu: hostname %s already given in line %zu", t->path, line, t->rows[i].host,
				t->rows[i].line);
			return -1;
		}
	}
	/* converting to int64 is only defined inside its range (and not for NaN) */
	if (!(med > -9223372036854775808.0 && med < 9223372036854775808.0)) {
		msg_err("%s: line %zu: offset_median out of range", t->path, line);
		return -1;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct row *r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			goto oom;
		t->rows = r;
		t->cap = cap;
	}
	struct row *r = &t->rows[t->n];
	if (!(r->host = malloc(len + 1)))
		goto oom;
	memcpy(r->host, host, len);
	r->host[len] = '\0';
	r->offset = (int64_t)med;
	r->line = line;
	r->used = 0;
	t->n++;
	return 0;
oom:
	msg_err("%s: out of memory", t->path);
	return -1;
}

/* The rows of text: the first line is a header; empty lines are skipped and
 * a line of only blanks ends the table, as in the reference. */
static int parse(struct table *t, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	const char *nl = memchr(p, '\n', len);
	if (len == 0) {
		msg_err("%s: line 1: missing header line", t->path);
		return -1;
	}
	p = nl ? nl + 1 : end;
	for (size_t line = 2; p < end; line++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *next = nl ? nl + 1 : end;
		if (p == eol && nl) {
			p = next;
			continue;
		}
		if (skip_space(p, eol) == eol)
			break;
		long rank;
		const char *host = NULL;
		size_t hostlen = 0;
		double med = 0;
		int got = scan_line(p, eol, &rank, &host, &hostlen, &med);
		if (got != 5) {
			msg_err("%s: line %zu: read %d instead of 5 fields (rank hostname offset_median offset_mean offset_std)",
				t->path, line, got);
			return -1;
		}
		if (add_row(t, host, hostlen, med, line) < 0)
			return -1;
		p = next;
	}
	if (t->n == 0) {
		msg_err("%s: no entries", t->path);
		return -1;
	}
	return 0;
}

static char *read_file(const char *path, size_t *len, int required, int *absent)
{
	char *s = NULL;
	size_t cap = 0;
	int r = file_read_all(path, &s, &cap, len);
	int e = errno;
	*absent = 0;
	if (r == 0)
		return s;
	free(s);
	if (r == FILE_CANNOT_OPEN && !required && e == ENOENT)
		*absent = 1;
	else
		msg_err("%s: cannot %s clock offsets: %s", path, r == FILE_CANNOT_OPEN ? "open" : "read", strerror(e));
	return NULL;
}

static void free_table(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].host);
	free(t->rows);
}

/* Every row must name the host of at least one loom. */
static int assign(struct system *sys, struct table *t)
{
	for (size_t i = 0; i < sys->nlooms; i++) {
		struct sys_loom *l = sys->looms[i];
		l->clock_offset = 0;
		for (size_t r = 0; r < t->n; r++) {
			if (strcmp(t->rows[r].host, l->hostname) == 0) {
				l->clock_offset = t->rows[r].offset;
				t->rows[r].used = 1;
			}
		}
	}
	for (size_t r = 0; r < t->n; r++) {
		if (!t->rows[r].used) {
			msg_err("%s: line %zu: no loom of the trace has hostname %s", t->path, t->rows[r].line, t->rows[r].host);
			return -1;
		}
	}
	return 0;
}

int clkoff_apply(struct system *sys, const char *path, int required)
{
	size_t len = 0;
	int absent = 1;
	char *text = path ? read_file(path, &len, required, &absent) : NULL;
	if (!text && !absent)
		return -1;
	if (!text) {
		for (size_t i = 0; i < sys->nlooms; i++)
			sys->looms[i]->clock_offset = 0;
		if (sys->nlooms > 1)
			msg_warn("no clock offset file loaded with %zu looms", sys->nlooms);
		return 0;
	}
	int rc = clkoff_apply_text(sys, path, text, len);
	free(text);
	return rc;
}

int clkoff_apply_text(struct system *sys, const char *name, const char *text, size_t len)
{
	struct table t = { .path = name };
	int rc = parse(&t, text, len);
	if (rc == 0)
		rc = assign(sys, &t);
	free_table(&t);
	return rc;
}

int clkoff_format(FILE *f, const struct clkoff_entry *e, size_t n)
{
	fprintf(f, "%-10s %-20s %-20s %-20s %-20s\n", "rank", "hostname", "offset_median", "offset_mean", "offset_std");
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && strcmp(e[j].hostname, e[i].hostname) != 0)
			j++;
		if (j < i)
			continue;
		fprintf(f, "%-10d %-20s %-20lld %-20f %-20f\n", e[i].rank, e[i].hostname, (long long)e[i].median, e[i].mean,
			e[i].std);
	}
	return ferror(f) ? -1 : 0;
}

int clkoff_write(const char *path, const struct clkoff_entry *e, size_t n)
{
	if (file_mkdirs(path, 1) != 0) {
		msg_err("%s: cannot create its directory: %s", path, strerror(errno));
		return -1;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		msg_err("%s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	int rc = clkoff_format(f, e, n);
	if (fclose(f) != 0 || rc < 0) {
		msg_err("%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
