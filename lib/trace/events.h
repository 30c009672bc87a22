/* The catalogue of every event of every model: signature (evspec language)
 * and our description. One table per model under lib/trace/events/. */
#ifndef OVNI_EVENTS_H
#define OVNI_EVENTS_H

#include <stddef.h>

#include "trace/evspec.h"

struct evdecl {
	const char *sig;
	const char *desc;
};

struct model_info {
	char id; /* model character: the first MCV byte */
	const char *name;
	const char *version;
	const struct evdecl *events;
	size_t nevents;
};

/* The registry: each model's id, name, version and events, defined once
 * (lib/trace/events/<model>.c); the emulator's models point here. */
extern const struct model_info model_nanos6, model_nodes, model_kernel, model_mpi,
	model_ovni, model_openmp, model_tampi, model_nosv;

/* Every model, ordered by id character (6 D K M O P T V), NULL terminated. */
extern const struct model_info *const model_infos[];

const struct model_info *model_info_by_id(char id);
const struct model_info *model_info_by_name(const char *name);

/* Compiles every table once (later calls do nothing); -1 (reported) if a
 * declaration is invalid, belongs to another model or repeats an MCV. */
int events_init(void);
/* The compiled spec of an MCV, NULL if no model declares it (or before
 * events_init). O(1). */
const struct evspec *events_lookup(const uint8_t mcv[3]);

struct out;
/* The Markdown catalogue: a title, then a section per model (only m, or
 * every model when m is NULL) with a table of signatures and descriptions. */
void events_markdown(struct out *o, const struct model_info *m);

#endif
