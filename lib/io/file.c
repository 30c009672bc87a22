/* Whole-file reads: one loop for stream.json, clock offsets and JSON files. */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
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
