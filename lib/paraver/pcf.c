#include "paraver/pcf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/msg.h"
#include "base/out.h"

static const char header[] =
	"DEFAULT_OPTIONS\n"
	"\n"
	"LEVEL               THREAD\n"
	"UNITS               NANOSEC\n"
	"LOOK_BACK           100\n"
	"SPEED               1\n"
	"FLAG_ICONS          ENABLED\n"
	"NUM_OF_STATE_COLORS 1000\n"
	"YMAX_SCALE          37\n"
	"\n"
	"\n"
	"DEFAULT_SEMANTIC\n"
	"\n"
	"THREAD_FUNC         State As Is\n"
	"\n"
	"\n"
	"STATES_COLOR\n";

static const unsigned char palette[][3] = {
	{ 0, 0, 0 }, { 0, 130, 200 }, { 217, 217, 217 }, { 230, 25, 75 },
	{ 60, 180, 75 }, { 255, 225, 25 }, { 245, 130, 48 }, { 145, 30, 180 },
	{ 70, 240, 240 }, { 240, 50, 230 }, { 210, 245, 60 }, { 250, 190, 212 },
	{ 0, 128, 128 }, { 128, 128, 128 }, { 220, 190, 255 }, { 170, 110, 40 },
	{ 255, 250, 200 }, { 128, 0, 0 }, { 170, 255, 195 }, { 128, 128, 0 },
	{ 255, 215, 180 }, { 0, 0, 128 }, { 0, 0, 255 },
};

void pcf_init(struct pcf *p)
{
	memset(p, 0, sizeof(*p));
}

void pcf_free(struct pcf *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pcf_type *t = p->types[i];
		for (size_t j = 0; j < t->n; j++)
			free(t->values[j].label);
		free(t->values);
		free(t->label);
		free(t);
	}
	free(p->types);
	memset(p, 0, sizeof(*p));
}

struct pcf_type *pcf_find_type(const struct pcf *p, int id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->types[i]->id == id)
			return p->types[i];
	return NULL;
}

struct pcf_type *pcf_add_type(struct pcf *p, int id, const char *label)
{
	if (pcf_find_type(p, id)) {
		failf("Paraver type %d is defined twice", id);
		return NULL;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct pcf_type **v = realloc(p->types, cap * sizeof(*v));
		if (!v)
			goto oom;
		p->types = v;
		p->cap = cap;
	}
	struct pcf_type *t = calloc(1, sizeof(*t));
	if (!t)
		goto oom;
	t->id = id;
	t->label = strdup(label);
	if (!t->label) {
		free(t);
		goto oom;
	}
	p->types[p->n++] = t;
	return t;
oom:
	failf("out of memory for the Paraver types");
	return NULL;
}

const char *pcf_value_label(const struct pcf_type *t, int64_t value)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->values[i].value == value)
			return t->values[i].label;
	return NULL;
}

int pcf_add_value(struct pcf_type *t, int64_t value, const char *label)
{
	const char *old = pcf_value_label(t, value);
	if (old) {
		if (strcmp(old, label) == 0)
			return 0;
		return failf("Paraver type %d: value %lld is labelled both '%s' and '%s'",
			     t->id, (long long)value, old, label);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct pcf_value *v = realloc(t->values, cap * sizeof(*v));
		if (!v)
			return failf("out of memory for the Paraver values");
		t->values = v;
		t->cap = cap;
	}
	char *l = strdup(label);
	if (!l)
		return failf("out of memory for the Paraver values");
	t->values[t->n].value = value;
	t->values[t->n].label = l;
	t->n++;
	return 0;
}

/* Left-justified in a field of width, then one space. */
static void out_int_left(struct out *o, int64_t v, size_t width)
{
	char b[24];
	size_t n = fmt_i64(b, v);
	out_mem(o, b, n);
	while (n++ < width)
		out_char(o, ' ');
	out_char(o, ' ');
}

static void out_u8_right(struct out *o, unsigned v)
{
	char b[4];
	size_t n = fmt_u64_pad(b, v, 3, ' ');
	out_mem(o, b, n);
}

int pcf_write(const struct pcf *p, const char *path)
{
	struct out o;
	if (out_create(&o, path, 0) != 0)
		return -1;
	out_str(&o, header);
	for (size_t i = 0; i < sizeof(palette) / sizeof(palette[0]); i++) {
		out_int_left(&o, (int64_t)i, 3);
		out_char(&o, '{');
		for (int c = 0; c < 3; c++) {
			out_u8_right(&o, palette[i][c]);
			out_str(&o, c < 2 ? ", " : "}\n");
		}
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct pcf_type *t = p->types[i];
		out_str(&o, "\n\nEVENT_TYPE\n0 ");
		out_int_left(&o, t->id, 10);
		out_str(&o, t->label);
		out_str(&o, "\nVALUES\n");
		for (size_t j = 0; j < t->n; j++) {
			out_int_left(&o, t->values[j].value, 4);
			out_str(&o, t->values[j].label);
			out_char(&o, '\n');
		}
	}
	return out_close(&o);
}
