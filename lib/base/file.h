/* Files: whole reads and writes, atomic replacement, mkdir -p, path joins
 * and directory listings. Each returns -1 (or NULL) with errno and prints
 * nothing; the caller names the file in its message. */
#ifndef OVNI_IO_FILE_H
#define OVNI_IO_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The file at PATH into *buf, grown with realloc (*cap its size; start with
 * NULL and 0, or reuse a buffer), its length in *len. 0; FILE_CANNOT_OPEN
 * or FILE_CANNOT_READ (out of memory included) with errno set. *buf stays
 * the caller's to free either way. */
enum { FILE_CANNOT_OPEN = -1, FILE_CANNOT_READ = -2 };
int file_read_all(const char *path, char **buf, size_t *cap, size_t *len);

/* All n bytes of p to fd (retrying short writes and EINTR): 0, or -1 with
 * errno (EIO when write makes no progress). */
int file_write_all(int fd, const void *p, size_t n);

/* Up to n bytes at offset off of fd into buf (retrying short reads and
 * EINTR): how many it read; fewer than n at the end of the file (*err 0)
 * or on an error (*err its errno). */
size_t file_pread_all(int fd, void *buf, size_t n, uint64_t off, int *err);

/* All n bytes of p to fd at offset off (retrying short writes and EINTR):
 * 0, or -1 with errno (ENOSPC when pwrite makes no progress). System calls
 * only. */
int file_pwrite_all(int fd, const void *p, size_t n, uint64_t off);

/* mkdir -p: PATH and the directories above it (mode 0755); with
 * parents_only, only those above it. 0, or -1 with errno. */
int file_mkdirs(const char *path, int parents_only);
/* The same, telling made (if not NULL) each directory it creates. */
int file_mkdirs_told(const char *path, int parents_only, void (*made)(const char *dir));

/* Replaces PATH whole or not at all: the bytes go to a temporary file
 * beside it, which gets mode, is synced and renamed over PATH. 0, or -1
 * with errno (the temporary file removed). */
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* The same for name relative to the directory dirfd (or AT_FDCWD); without
 * sync the rename still makes it whole or absent, but a power cut may lose
 * it (the shim: a traced program never waits for the disk). */
int file_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode, int sync);
/* 0666 less the umask: the mode open(2) would give a new file. */
mode_t file_mode_default(void);

/* Drops the trailing slashes of path in place ("/" stays as it is). */
void file_strip_slashes(char *path);
/* "a/b" (one '/' between, none added next to an empty part), malloc'd. */
char *file_join(const char *a, const char *b);
/* The same into dst of cap bytes; returns the length, >= cap when it did
 * not fit (dst then unchanged). */
size_t file_join_to(char *dst, size_t cap, const char *a, const char *b);

/* The names in DIR but . and .., sorted by strcmp, NULL-terminated, *n of
 * them; free with file_names_free. NULL with errno. */
char **file_dir_names(const char *dir, size_t *n);
void file_names_free(char **v, size_t n);

/* cp src dst: the bytes of src into dst, created with mode ((mode_t)-1:
 * src's) or truncated. 0, or -1 with errno (a read error included). */
int file_copy(const char *src, const char *dst, mode_t mode);
/* The same from the open descriptor in, read from where it stands. */
int file_copy_from(int in, const char *dst, mode_t mode);
/* mv src dst: a rename, or across file systems a copy (same mode) and then
 * the unlink of src, only once the copy is whole. 0, or -1 with errno. */
int file_move(const char *src, const char *dst);

/* Removes an output left half written by a failed command, if it is a
 * regular file or a symbolic link (the link, not its target): a device, a
 * FIFO or a socket that the user named as the output (-o /dev/full)
 * stays. Errors ignored. */
void file_remove_partial(const char *path);
/* rm -r of dir (symbolic links removed, not followed); errors ignored. */
void file_remove_tree(const char *dir);

struct stat;
/* One entry of a walk: rel its path under the root ("" for the root), full
 * the path to open, st its lstat, or NULL with errno when it could not be
 * listed or stat'ed. Returns 1 to go into a directory, 0 to go on, -1 to
 * stop the walk. */
typedef int (*file_visit_fn)(void *arg, const char *rel, const char *full, const struct stat *st);
/* Visits every entry under root, depth first, each directory's names in
 * strcmp order; links are not followed. 0, or -1 when a visit stopped it. */
int file_walk(const char *root, file_visit_fn visit, void *arg);

#endif
