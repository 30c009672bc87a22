/* Whole small files (metadata, clock offsets) read into memory. */
#ifndef OVNI_IO_FILE_H
#define OVNI_IO_FILE_H

#include <stddef.h>

/* The file at PATH into *buf, grown with realloc (*cap its size; start with
 * NULL and 0, or reuse a buffer), its length in *len. 0; FILE_CANNOT_OPEN
 * or FILE_CANNOT_READ (out of memory included) with errno set. *buf stays
 * the caller's to free either way. */
enum { FILE_CANNOT_OPEN = -1, FILE_CANNOT_READ = -2 };
int file_read_all(const char *path, char **buf, size_t *cap, size_t *len);

/* All n bytes of p to fd (retrying short writes and EINTR): 0, or -1 with
 * errno (EIO when write makes no progress). */
int file_write_all(int fd, const void *p, size_t n);

/* mkdir -p: PATH and the directories above it (mode 0755); with
 * parents_only, only those above it. 0, or -1 with errno. */
int file_mkdirs(const char *path, int parents_only);

/* rm -r of dir (symbolic links removed, not followed); errors ignored. */
void file_remove_tree(const char *dir);

#endif
