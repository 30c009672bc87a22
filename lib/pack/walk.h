/* The pack writers' view of a trace directory: every file, directory and
 * link under it, in the order they are archived (lib/pack_walk.c). */
#ifndef OVNI_PACK_WALK_H
#define OVNI_PACK_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/out.h"
#include "pack/pack.h"

struct pack_entry {
	char *path; /* relative to the trace directory */
	char *target; /* links: the target */
	uint8_t type; /* enum pack_type */
	uint32_t mode;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint64_t size;
};

/* Lists dir depth-first, names in strcmp order, each directory before its
 * contents; skips the file `self` (the archive being written) and, with a
 * warning, anything that is not a file, directory or link. */
int pack_walk(const char *dir, const struct stat *self, struct pack_entry **e, size_t *n);
void pack_entries_free(struct pack_entry *e, size_t n);
/* The --tar writer (lib/pack_tar.c): ustar records compressed by zstd. */
int pack_tar_write(const char *dir, struct pack_entry *e, size_t n, struct out *out, const struct pack_write_opts *o);

#endif
