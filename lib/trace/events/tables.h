/* The per-model event tables; private to lib/trace/events/. */
#ifndef OVNI_EVENTS_TABLES_H
#define OVNI_EVENTS_TABLES_H

#include "trace/events.h"
#include "trace/versions.h"

/* Two declarations for a region: "enters WHAT" and "leaves WHAT". */
#define REGION(in, out, what) { in, "enters " what }, { out, "leaves " what }

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#endif
