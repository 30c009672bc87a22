/* The per-model event tables; private to lib/events/. */
#ifndef OVNI_EVENTS_TABLES_H
#define OVNI_EVENTS_TABLES_H

#include "trace/events.h"

/* Two declarations for a region: "enters WHAT" and "leaves WHAT". */
#define REGION(in, out, what) { in, "enters " what }, { out, "leaves " what }

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

extern const struct model_info model_nanos6, model_nodes, model_kernel, model_mpi,
	model_ovni, model_openmp, model_tampi, model_nosv;

#endif
