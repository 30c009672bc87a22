#include "base/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/lock.h"
#include "base/msg.h"

struct file_src {
	struct byte_src src;
	int fd;
	uint64_t pos; /* bytes read so far, for messages */
	char path[];
};

/* The descriptor is closed as soon as the file size is reached, so that a
 * trace of many small streams does not hold one descriptor per stream. */
static ssize_t file_read(struct byte_src *s, void *buf, size_t n)
{
	struct file_src *f = (struct file_src *)s;
	if (f->fd < 0)
		return 0;
	if (n > s->size - f->pos) /* a caller may have cut the source short */
		n = (size_t)(s->size - f->pos);
	for (;;) {
		ssize_t got = n ? read(f->fd, buf, n) : 0;
		if (got >= 0) {
			f->pos += (uint64_t)got;
			if (got == 0 || f->pos >= s->size) {
				close(f->fd);
				f->fd = -1;
			}
			return got;
		}
		if (errno != EINTR)
			break;
	}
	msg_err("%s: offset %llu: cannot read: %s", f->path,
		(unsigned long long)f->pos, strerror(errno));
	return -1;
}

static void file_close(struct byte_src *s)
{
	struct file_src *f = (struct file_src *)s;
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

struct byte_src *byte_src_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		msg_err("%s: offset 0: cannot open: %s%s", path, strerror(errno),
			errno == EMFILE ? " (more streams than `ulimit -n` allows)" : "");
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		msg_err("%s: offset 0: cannot read: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		msg_err("%s: offset 0: cannot read: %s", path,
			S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return NULL;
	}
	size_t len = strlen(path);
	struct file_src *f = malloc(sizeof(*f) + len + 1);
	if (!f) {
		msg_err("%s: out of memory", path);
		close(fd);
		return NULL;
	}
	memcpy(f->path, path, len + 1);
	f->fd = fd;
	f->pos = 0;
	f->src.read = file_read;
	f->src.close = file_close;
	f->src.size = (uint64_t)st.st_size;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	lock_for_reading(fd, path);
	return &f->src;
}

struct mem_src {
	struct byte_src src;
	const uint8_t *data;
	size_t n, pos, chunk;
	void *owned; /* freed on close */
};

static ssize_t mem_read(struct byte_src *s, void *buf, size_t n)
{
	struct mem_src *m = (struct mem_src *)s;
	size_t left = m->n - m->pos;
	if (n > left)
		n = left;
	if (m->chunk && n > m->chunk)
		n = m->chunk;
	if (n == 0)
		return 0;
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static void mem_close(struct byte_src *s)
{
	free(((struct mem_src *)s)->owned);
	free(s);
}

struct byte_src *byte_src_mem(const void *data, size_t n, size_t chunk)
{
	struct mem_src *m = calloc(1, sizeof(*m));
	if (!m) {
		msg_err("out of memory");
		return NULL;
	}
	m->data = data;
	m->n = n;
	m->chunk = chunk;
	m->src.read = mem_read;
	m->src.close = mem_close;
	m->src.size = n;
	return &m->src;
}

struct byte_src *byte_src_mem_owned(void *data, size_t n)
{
	struct byte_src *src = byte_src_mem(data, n, 0);
	if (src)
		((struct mem_src *)src)->owned = data;
	else
		free(data);
	return src;
}
