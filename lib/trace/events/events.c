/* The registry of models and the MCV lookup table built from their events. */
#include "trace/events.h"

#include <stdlib.h>
#include <string.h>

#include "trace/events/tables.h"
#include "base/fail.h"
#include "base/msg.h"

const struct model_info *const model_infos[] = {
	&model_nanos6, &model_nodes, &model_kernel, &model_mpi,
	&model_ovni, &model_openmp, &model_tampi, &model_nosv,
	NULL
};

#define NMODELS (COUNT(model_infos) - 1)

/* Three levels, one per MCV byte, each a 256-entry table of 1-based
 * indexes into the next (0 = not declared): lookups cost three loads. */
static uint8_t model_slot[256];
static uint8_t (*cat_slot)[256]; /* [model][category] -> category table */
static uint16_t (*val_slot)[256]; /* [category table][value] -> spec */
static struct evspec *specs;
static int ready;

const struct model_info *model_info_by_id(char id)
{
	for (size_t i = 0; model_infos[i]; i++)
		if (model_infos[i]->id == id)
			return model_infos[i];
	return NULL;
}

const struct model_info *model_info_by_name(const char *name)
{
	for (size_t i = 0; model_infos[i]; i++)
		if (strcmp(model_infos[i]->name, name) == 0)
			return model_infos[i];
	return NULL;
}

const struct evspec *events_lookup(const uint8_t mcv[3])
{
	unsigned m = model_slot[mcv[0]];
	if (!m)
		return NULL;
	unsigned c = cat_slot[m - 1][mcv[1]];
	if (!c)
		return NULL;
	unsigned v = val_slot[c - 1][mcv[2]];
	return v ? &specs[v - 1] : NULL;
}

static void free_tables(size_t nspecs)
{
	for (size_t i = 0; i < nspecs; i++)
		evspec_free(&specs[i]);
	free(specs);
	free(cat_slot);
	free(val_slot);
	specs = NULL;
	cat_slot = NULL;
	val_slot = NULL;
	memset(model_slot, 0, sizeof(model_slot));
}

/* Places spec n (0-based) of model slot m in the tables. */
static int place(const struct model_info *mi, unsigned m, size_t n, size_t *ncats)
{
	const uint8_t *mcv = specs[n].mcv;
	if (mcv[0] != (uint8_t)mi->id) {
		msg_err("model %s: event %s does not start with the model id '%c'", mi->name, specs[n].sig, mi->id);
		return -1;
	}
	uint8_t *c = &cat_slot[m - 1][mcv[1]];
	if (!*c)
		*c = (uint8_t)++*ncats;
	uint16_t *v = &val_slot[*c - 1][mcv[2]];
	if (*v) {
		msg_err("model %s: event %s declared twice", mi->name, specs[n].sig);
		return -1;
	}
	*v = (uint16_t)(n + 1);
	return 0;
}

int events_init(void)
{
	if (ready)
		return 0;
	size_t total = 0;
	for (size_t i = 0; i < NMODELS; i++)
		total += model_infos[i]->nevents;
	/* At most one category table per event, and at most 255 in all. */
	size_t maxcats = total < 255 ? total : 255;
	specs = calloc(total, sizeof(*specs));
	cat_slot = calloc(NMODELS, sizeof(*cat_slot));
	val_slot = calloc(maxcats, sizeof(*val_slot));
	if (!specs || !cat_slot || !val_slot) {
		msg_err("out of memory");
		free_tables(0);
		return -1;
	}
	size_t n = 0, ncats = 0;
	for (size_t i = 0; i < NMODELS; i++) {
		const struct model_info *mi = model_infos[i];
		if (model_slot[(uint8_t)mi->id]) {
			msg_err("model %s: id '%c' already taken", mi->name, mi->id);
			free_tables(n);
			return -1;
		}
		model_slot[(uint8_t)mi->id] = (uint8_t)(i + 1);
		for (size_t j = 0; j < mi->nevents; j++, n++) {
			const struct evdecl *d = &mi->events[j];
			if (evspec_parse(&specs[n], d->sig, d->desc) < 0) {
				msg_err("model %s: event \"%s\": %s", mi->name, d->sig, fail_take());
				free_tables(n);
				return -1;
			}
			if (ncats == maxcats && !cat_slot[i][specs[n].mcv[1]]) {
				msg_err("model %s: too many event categories", mi->name);
				free_tables(n + 1);
				return -1;
			}
			if (place(mi, (unsigned)(i + 1), n, &ncats) < 0) {
				free_tables(n + 1);
				return -1;
			}
		}
	}
	ready = 1;
	return 0;
}
