/* The event tables against tests/data/events.txt (a copy of the spec's
 * list of every model's events), the registry and the MCV lookup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/events.h"
#include "base/out.h"
#include "t.h"

#define MAX_SIGS 512

struct expected_model {
	char name[32], version[32];
	char id;
	size_t first, n; /* range in sigs[] */
};

static char sigs[MAX_SIGS][256];
static size_t nsigs;
static struct expected_model models[16];
static size_t nmodels;

/* "## name id version" starts a model; every other line is a signature. */
static int load(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (strncmp(line, "## ", 3) == 0) {
			struct expected_model *m = &models[nmodels++];
			char id[8];
			if (nmodels > 16 || sscanf(line + 3, "%31s %7s %31s", m->name, id, m->version) != 3 || id[1]) {
				fclose(f);
				return -1;
			}
			m->id = id[0];
			m->first = nsigs;
		} else if (nmodels > 0 && nsigs < MAX_SIGS) {
			snprintf(sigs[nsigs++], sizeof(sigs[0]), "%s", line);
			models[nmodels - 1].n++;
		}
	}
	fclose(f);
	return 0;
}

static const struct evspec *lookup_str(const char *mcv)
{
	return events_lookup((const uint8_t *)mcv);
}

static void test_against_spec(void)
{
	static const struct { const char *name; size_t n; } counts[] = {
		{ "ovni", 18 }, { "nanos6", 67 }, { "nosv", 72 }, { "nodes", 16 },
		{ "tampi", 24 }, { "mpi", 98 }, { "kernel", 2 }, { "openmp", 68 },
	};
	CHECK_INT(nmodels, 8, "events.txt lists 8 models");
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		const struct model_info *m = model_info_by_name(counts[i].name);
		CHECK(m && m->nevents == counts[i].n, "model %s has %zu events", counts[i].name, counts[i].n);
	}
	size_t total = 0;
	for (size_t i = 0; i < nmodels; i++) {
		const struct expected_model *e = &models[i];
		const struct model_info *m = model_info_by_name(e->name);
		if (!CHECK(m != NULL, "model %s is registered", e->name))
			continue;
		CHECK(m->id == e->id, "model %s has id '%c'", e->name, e->id);
		CHECK_STR(m->version, e->version, "model %s version", e->name);
		CHECK(model_info_by_id(e->id) == m, "model '%c' found by id", e->id);
		CHECK_INT(m->nevents, e->n, "model %s: number of events", e->name);
		size_t same = 0;
		for (size_t j = 0; j < e->n && j < m->nevents; j++) {
			const char *want = sigs[e->first + j];
			if (CHECK_STR(m->events[j].sig, want, "model %s event %zu signature", e->name, j))
				same++;
		}
		total += m->nevents;
		CHECK_INT(same, e->n, "model %s: every signature as in events.txt", e->name);
	}
	size_t registered = 0;
	for (size_t i = 0; model_infos[i]; i++)
		registered++;
	CHECK_INT(registered, nmodels, "no model beyond events.txt");
	CHECK_INT(total, nsigs, "as many events as events.txt lists");
}

static void test_registry(void)
{
	const char order[] = "6DKMOPTV";
	size_t i;
	for (i = 0; model_infos[i] && i < 8; i++)
		CHECK(model_infos[i]->id == order[i], "model_infos[%zu] is '%c'", i, order[i]);
	CHECK(i == 8 && model_infos[8] == NULL, "model_infos ends with NULL after 8 models");
	CHECK(model_info_by_id('X') == NULL, "no model 'X'");
	CHECK(model_info_by_id('\0') == NULL, "no model with id NUL");
	CHECK(model_info_by_name("nOS-V") == NULL, "names are exact");
	CHECK(model_info_by_name("") == NULL, "no model with an empty name");
	CHECK(model_info_by_name("nosv") && model_info_by_name("nosv")->id == 'V', "nosv is 'V'");
}

/* A payload that fits the signature: zeros, and "x" for the string. */
static void make_fitting(const struct evspec *s, struct ev *ev, uint8_t *buf)
{
	memset(buf, 0, 256);
	uint32_t n = s->payload_min;
	if (s->str_arg >= 0) {
		buf[n - 1] = 'x';
		n++;
	}
	if (s->jumbo) {
		uint32_t len = n - 4;
		memcpy(buf, &len, 4);
	}
	memset(ev, 0, sizeof(*ev));
	memcpy(ev->mcv, s->mcv, 3);
	ev->flags = s->jumbo ? EV_FLAG_JUMBO : (uint8_t)(n ? n - 1 : 0);
	ev->payload = buf;
	ev->payload_size = n;
}

static void test_descriptions(void)
{
	size_t described = 0, n = 0, unique = 0;
	for (size_t i = 0; model_infos[i]; i++) {
		const struct model_info *m = model_infos[i];
		for (size_t j = 0; j < m->nevents; j++, n++) {
			const struct evdecl *d = &m->events[j];
			const struct evspec *s = lookup_str(d->sig);
			if (!CHECK(s && s->sig == d->sig, "lookup of %.3s finds its declaration", d->sig))
				continue;
			struct ev ev;
			uint8_t buf[256];
			char out[1024];
			make_fitting(s, &ev, buf);
			int r = evspec_describe(s, &ev, out, sizeof(out));
			/* Every %{...} replaced: no '{' left, and text to read. */
			if (r > 0 && !strchr(out, '{') && !strchr(out, '%') && strlen(d->desc) > 2)
				described++;
			else
				printf("# %s: '%s' -> %d '%s'\n", d->sig, d->desc, r, r >= 0 ? out : "");
			size_t k;
			for (k = 0; k < j && strcmp(m->events[k].desc, d->desc) != 0; k++)
				;
			if (k == j)
				unique++;
			else
				printf("# %s and %s share a description\n", m->events[k].sig, d->sig);
		}
	}
	CHECK_INT(described, n, "every description compiles and describes a fitting event");
	CHECK_INT(unique, n, "no two events of a model share a description");

	/* An enter/leave pair reads "enters X" then "leaves X". */
	size_t pairs = 0, matched = 0;
	for (size_t i = 0; model_infos[i]; i++) {
		const struct model_info *m = model_infos[i];
		for (size_t j = 0; j < m->nevents; j++) {
			if (strncmp(m->events[j].desc, "enters ", 7) != 0)
				continue;
			pairs++;
			for (size_t k = 0; k < m->nevents; k++)
				if (strncmp(m->events[k].desc, "leaves ", 7) == 0 &&
				    strcmp(m->events[k].desc + 7, m->events[j].desc + 7) == 0)
					matched++;
		}
	}
	CHECK(pairs > 150, "enter/leave pairs are worded as such (%zu)", pairs);
	CHECK_INT(matched, pairs, "every \"enters X\" has one \"leaves X\"");
}

static void test_lookup(void)
{
	CHECK(lookup_str("OHx") && strcmp(lookup_str("OHx")->sig, "OHx(i32 cpu, i32 tid, u64 tag)") == 0, "lookup OHx");
	CHECK(lookup_str("VYc") && lookup_str("VYc")->jumbo, "lookup VYc: jumbo");
	CHECK(lookup_str("MeB") != NULL, "lookup MeB");
	CHECK(lookup_str("6W*") != NULL, "lookup 6W*");
	CHECK(lookup_str("OHX") == NULL, "OHX is not declared");
	CHECK(lookup_str("OZx") == NULL, "category Z of ovni is not declared");
	CHECK(lookup_str("Zab") == NULL, "model Z does not exist");
	CHECK(lookup_str("\xff\xff\xff") == NULL, "bytes above 127");
	CHECK(lookup_str("\0\0\0") == NULL, "NUL bytes");
	CHECK(lookup_str("6Hx") == NULL, "6Hx is not declared though 6He is");
	CHECK(lookup_str("KCO") && lookup_str("KCI") && !lookup_str("KCo"), "kernel: KCO and KCI only");
	/* Every byte triple of a real model's range agrees with the tables. */
	size_t found = 0;
	for (int a = 0; a < 256; a++)
		for (int b = 0; b < 256; b++)
			for (int c = 0; c < 256; c++) {
				uint8_t mcv[3] = { (uint8_t)a, (uint8_t)b, (uint8_t)c };
				const struct evspec *s = events_lookup(mcv);
				if (s && memcmp(s->mcv, mcv, 3) == 0)
					found++;
				else if (s)
					printf("# %02x%02x%02x -> %s\n", a, b, c, s->sig);
			}
	CHECK_INT(found, nsigs, "exactly the declared MCVs are found among all 2^24");
}

/* The Markdown of a made-up model whose text needs escaping. */
static void test_markdown(void)
{
	static const struct evdecl evs[] = {
		{ "Z|a(u8 x)", "a | b *c* _d_ <e> [f] `g` & h\\ %{x}" },
		{ "Z`b", "plain" },
	};
	static const struct model_info fake = { 'Z', "fake", "9.8.7", evs, 2 };
	char path[] = "/tmp/ovni-test-md.XXXXXX";
	int fd = mkstemp(path);
	struct out o;
	if (!CHECK(fd >= 0 && out_init(&o, fd, path, 0) == 0, "temporary file for the Markdown"))
		return;
	events_markdown(&o, &fake);
	out_flush(&o);
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	out_close(&o);
	unlink(path);
	buf[n > 0 ? n : 0] = '\0';
	const char *sect = strstr(buf, "\n## Model fake\n");
	CHECK(strncmp(buf, "# ", 2) == 0, "Markdown starts with a title");
	CHECK_STR(sect ? sect : "", "\n## Model fake\n\n"
		  "Model id `Z`, version 9.8.7, 2 events.\n\n"
		  "| Event | Description |\n|---|---|\n"
		  "| `Z\\|a(u8 x)` | a \\| b \\*c\\* \\_d\\_ \\<e\\> \\[f\\] \\`g\\` \\& h\\\\ %{x} |\n"
		  "| `` Z`b `` | plain |\n", "Markdown of one model, escaped");
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tests/data/events.txt";
	if (!CHECK(load(path) == 0 && nsigs > 0, "read %s", path))
		return t_done();
	CHECK(events_lookup((const uint8_t *)"OHx") == NULL, "nothing is found before events_init");
	CHECK_INT(events_init(), 0, "events_init");
	CHECK_INT(events_init(), 0, "events_init again does nothing");
	test_registry();
	test_against_spec();
	test_descriptions();
	test_lookup();
	test_markdown();
	return t_done();
}
