/* Byte sources: where a reader's bytes come from (a file, memory, or a
 * member of a pack archive, which implements the same interface). */
#ifndef OVNI_BASE_BYTES_H
#define OVNI_BASE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A source of bytes, read in order. */
struct byte_src {
	/* Reads up to n bytes; returns the count, 0 at the end, -1 on error
	 * (after printing a message naming the source). */
	ssize_t (*read)(struct byte_src *s, void *buf, size_t n);
	void (*close)(struct byte_src *s); /* also frees s */
	uint64_t size; /* total bytes if known, else UINT64_MAX */
};

/* A byte_src over a regular file opened read-only, under a shared lock
 * (base/lock.h) until its end is read or it is closed: it waits while
 * `ovni sort` rewrites the file. Returns NULL after an error message
 * naming path. */
struct byte_src *byte_src_file(const char *path);
/* A byte_src over n bytes in memory (not copied; they must outlive it).
 * chunk > 0 limits every read to chunk bytes (tests of the refill path). */
struct byte_src *byte_src_mem(const void *data, size_t n, size_t chunk);
/* The same over n bytes of malloc'd data, which it frees when closed (also
 * when it cannot be made: NULL after a message). */
struct byte_src *byte_src_mem_owned(void *data, size_t n);

#endif
