/* Versions of everything inside the binary, for `ovni version`. */
#ifndef OVNI_VERSION_H
#define OVNI_VERSION_H

#include <stdio.h>

/* Prints zstd, trace format and model versions, one "key: value" a line. */
void version_print_details(FILE *f);

/* Parses "X.Y.Z[anything]" as the reference does; returns -1 if invalid. */
int version_parse(const char *s, int v[3]);

#endif
