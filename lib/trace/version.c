#include "trace/version.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "pack/pack.h"
#include "trace/events.h"
#include "trace/stream.h"

void version_print_details(FILE *f)
{
	fprintf(f, "zstd: %s\n", ZSTD_versionString());
	fprintf(f, "stream format: %d\n", STREAM_VERSION);
	fprintf(f, "metadata format: %d\n", METADATA_VERSION);
	fprintf(f, "pack format: %u (reads 1 and %u)\n", PACK_VERSION, PACK_VERSION);
	for (size_t i = 0; model_infos[i]; i++)
		fprintf(f, "model %s (%c): %s\n", model_infos[i]->name, model_infos[i]->id, model_infos[i]->version);
}

/* Each of major and minor ends at '.', patch at '.', '-' or the end; what
 * follows the patch number is ignored. */
int version_parse(const char *s, int v[3])
{
	if (!s || strlen(s) > 63)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		char *end;
		long n = strtol(s, &end, 10);
		if (n < 0 || n > 0x7fffffff)
			return -1;
		v[i] = (int)n;
		if (i < 2) {
			if (*end != '.')
				return -1;
			s = end + 1;
		} else if (*end != '\0' && *end != '.' && *end != '-') {
			return -1;
		}
	}
	return 0;
}
