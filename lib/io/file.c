/* Whole-file reads (stream.json, clock offsets, JSON files), mkdir -p, rm -r. */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_read_all(const char *path, char **buf, size_t *cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return FILE_CANNOT_OPEN;
	struct stat st;
	/* One allocation when the size is known; +1 lets a caller add a NUL. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (size_t)st.st_size >= *cap) {
		char *s = realloc(*buf, (size_t)st.st_size + 1);
		if (s) {
			*buf = s;
			*cap = (size_t)st.st_size + 1;
		}
	}
	*len = 0;
	for (;;) {
		if (*len == *cap) {
			size_t grown = *cap ? 2 * *cap : 4096;
			char *s = *cap > SIZE_MAX / 2 ? NULL : realloc(*buf, grown);
			if (!s) {
				close(fd);
				errno = ENOMEM;
				return FILE_CANNOT_READ;
			}
			*buf = s;
			*cap = grown;
		}
		ssize_t r = read(fd, *buf + *len, *cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;
			close(fd);
			errno = e;
			return r < 0 ? FILE_CANNOT_READ : 0;
		}
		*len += (size_t)r;
	}
}

int file_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int file_mkdirs(const char *path, int parents_only)
{
	char p[4096];
	size_t n = strlen(path);
	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, path, n + 1);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (parents_only || mkdir(p, 0755) == 0)
		return 0;
	struct stat st;
	int err = errno;
	if (err == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	errno = err == EEXIST ? ENOTDIR : err;
	return -1;
}

static int remove_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(p);
	return 0;
}

void file_remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
