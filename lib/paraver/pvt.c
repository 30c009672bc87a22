#include "paraver/pvt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/file.h"
#include "base/msg.h"
#include "paraver/row.h"

static char *path_of(const struct pvt *t, const char *ext)
{
	size_t n = strlen(t->base) + strlen(ext) + 1;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s", t->base, ext);
	return p;
}

int pvt_open(struct pvt *t, const char *dir, const char *name, size_t nrows)
{
	memset(t, 0, sizeof(*t));
	pcf_init(&t->pcf);
	t->name = strdup(name);
	t->base = file_join(dir, name);
	t->rows = calloc(nrows ? nrows : 1, sizeof(*t->rows));
	if (!t->name || !t->base || !t->rows) {
		msg_err("out of memory");
		pvt_free(t);
		return -1;
	}
	t->nrows = nrows;
	char *prv = path_of(t, ".prv");
	int rc = prv ? prv_open(&t->prv, prv, nrows) : -1;
	free(prv);
	if (rc != 0) {
		pvt_free(t);
		return -1;
	}
	t->open = 1;
	return 0;
}

int pvt_open_tap(struct pvt *t, const char *name, size_t nrows, const struct prv_tap *tap)
{
	memset(t, 0, sizeof(*t));
	pcf_init(&t->pcf);
	t->name = strdup(name);
	t->base = strdup(name);
	t->rows = calloc(nrows ? nrows : 1, sizeof(*t->rows));
	if (!t->name || !t->base || !t->rows || prv_open_tap(&t->prv, name, nrows, tap) != 0) {
		msg_err("out of memory");
		pvt_free(t);
		return -1;
	}
	t->nrows = nrows;
	t->open = 1;
	t->tapped = 1;
	return 0;
}

int pvt_set_type_flags(struct pvt *t, int type, unsigned flags)
{
	for (size_t i = 0; i < t->ntflags; i++) {
		if (t->tflags[i].type == type) {
			t->tflags[i].flags |= flags;
			return 0;
		}
	}
	struct pvt_type_flags *v = realloc(t->tflags, (t->ntflags + 1) * sizeof(*v));
	if (!v)
		return failf("out of memory");
	t->tflags = v;
	v[t->ntflags].type = type;
	v[t->ntflags].flags = flags;
	t->ntflags++;
	return 0;
}

unsigned pvt_type_flags(const struct pvt *t, int type)
{
	for (size_t i = 0; i < t->ntflags; i++)
		if (t->tflags[i].type == type)
			return t->tflags[i].flags;
	return 0;
}

int pvt_set_row(struct pvt *t, size_t row, const char *label)
{
	if (row >= t->nrows)
		return failf("%s: no row %zu", t->name, row + 1);
	free(t->rows[row]);
	t->rows[row] = strdup(label);
	return t->rows[row] ? 0 : failf("out of memory");
}

struct cfg_view *pvt_add_view(struct pvt *t, const char *path, const char *title,
			      const char *label, int type, int colors)
{
	if (t->nviews == t->vcap) {
		size_t cap = t->vcap ? t->vcap * 2 : 16;
		struct cfg_view **vs = realloc(t->views, cap * sizeof(*vs));
		if (!vs)
			goto oom;
		t->views = vs;
		t->vcap = cap;
	}
	struct cfg_view *v = calloc(1, sizeof(*v));
	if (!v)
		goto oom;
	size_t n = strlen(path) + 5;
	v->path = malloc(n);
	v->title = strdup(title);
	v->label = strdup(label);
	if (!v->path || !v->title || !v->label) {
		cfg_view_free(v);
		free(v);
		goto oom;
	}
	snprintf(v->path, n, "%s.cfg", path);
	v->type = type;
	v->colors = colors;
	t->views[t->nviews++] = v;
	return v;
oom:
	failf("out of memory for the Paraver views");
	return NULL;
}

int cfg_view_add_color(struct cfg_view *v, int64_t value, const unsigned char rgb[3])
{
	struct cfg_color *c = realloc(v->custom, (v->ncustom + 1) * sizeof(*c));
	if (!c)
		return failf("out of memory for the Paraver views");
	v->custom = c;
	c[v->ncustom].value = value;
	memcpy(c[v->ncustom].rgb, rgb, 3);
	v->ncustom++;
	return 0;
}

static void remove_outputs(const struct pvt *t)
{
	static const char *const ext[] = { ".prv", ".pcf", ".row" };
	for (int i = 0; i < 3; i++) {
		char *p = path_of(t, ext[i]);
		if (p)
			file_remove_partial(p);
		free(p);
	}
}

int pvt_close(struct pvt *t, int64_t duration)
{
	if (!t->open)
		return 0;
	t->open = 0;
	int rc = prv_close(&t->prv, duration);
	if (t->tapped)
		return rc;
	char *pcf = path_of(t, ".pcf");
	char *row = path_of(t, ".row");
	if (rc == 0)
		rc = pcf ? pcf_write(&t->pcf, pcf) : -1;
	if (rc == 0)
		rc = row ? row_write(row, (const char *const *)t->rows, t->nrows) : -1;
	free(pcf);
	free(row);
	if (rc != 0) {
		msg_err("removed the unfinished %s.prv, .pcf and .row", t->base);
		remove_outputs(t);
	}
	return rc;
}

void pvt_discard(struct pvt *t)
{
	if (!t->open)
		return;
	t->open = 0;
	prv_discard(&t->prv);
	if (!t->tapped)
		remove_outputs(t);
}

int pvt_write_views(const struct pvt *t, const char *cfgdir)
{
	for (size_t i = 0; i < t->nviews; i++)
		if (cfg_write(cfgdir, t->views[i]) != 0)
			return -1;
	return 0;
}

void pvt_free(struct pvt *t)
{
	pvt_discard(t);
	for (size_t i = 0; i < t->nrows && t->rows; i++)
		free(t->rows[i]);
	free(t->rows);
	for (size_t i = 0; i < t->nviews; i++) {
		cfg_view_free(t->views[i]);
		free(t->views[i]);
	}
	free(t->views);
	free(t->tflags);
	pcf_free(&t->pcf);
	free(t->name);
	free(t->base);
	memset(t, 0, sizeof(*t));
}
