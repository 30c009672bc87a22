/* The pack writers' view of a trace directory: every file, directory and
 * link under it, in the order they are archived (lib/pack_walk.c). */
#ifndef OVNI_PACK_WALK_H
#define OVNI_PACK_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

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
/* A file member's bytes as archived: the file's, or up to offset from and
 * then the tail that pack_write_opts.stream_tail gives. */
struct pack_input {
	int fd;
	char *path; /* for messages */
	uint64_t off; /* member bytes read so far */
	uint64_t from; /* where the tail takes over: UINT64_MAX when none */
	uint8_t *tail;
	size_t ntail;
};
/* Opens file entry e of dir (not following a link) under a shared lock
 * (base/lock.h); with a tail, e->size becomes the member's size, and
 * *total (the bytes of every member, for the progress) follows it. 0, or
 * -1 after a message. */
int pack_input_open(struct pack_input *in, const char *dir, struct pack_entry *e, const struct pack_write_opts *o,
		    uint64_t *total);
/* Up to n bytes: how many, 0 at the end, -1 after a message naming the
 * file and offset. */
ssize_t pack_input_read(struct pack_input *in, void *buf, size_t n);
void pack_input_close(struct pack_input *in);

/* The --tar writer (lib/pack_tar.c): ustar records compressed by zstd. */
int pack_tar_write(const char *dir, struct pack_entry *e, size_t n, struct out *out, const struct pack_write_opts *o);

#endif
