#include "trace/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/fmt.h"

void stage_name(char name[64], uint64_t dev, uint64_t ino)
{
	size_t n = fmt_u64(name, dev);
	name[n++] = '.';
	n += fmt_u64(name + n, ino);
	name[n] = '\0';
}

const struct stage_head *stage_map(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return NULL;
	errno = 0;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != STAGE_FILE_SIZE) {
		if ((uint64_t)st.st_size != 0) /* killed as it was being made: nothing yet */
			errno = EINVAL;
		return NULL;
	}
	void *m = mmap(NULL, STAGE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	const struct stage_head *h = m;
	if (memcmp(h->magic, STAGE_MAGIC, 8) == 0 && memchr(h->path, '\0', sizeof(h->path)) &&
	    memchr(h->owner, '\0', sizeof(h->owner)))
		return h;
	errno = h->magic[0] ? EINVAL : 0; /* no magic yet: the head is written last */
	munmap(m, STAGE_FILE_SIZE);
	return NULL;
}

void stage_unmap(const struct stage_head *h)
{
	munmap((void *)h, STAGE_FILE_SIZE);
}

int stage_copy(const struct stage_head *h, int dst)
{
	/* the held slots, lower offsets first: the later one wins where they
	 * share a page */
	int order[STAGE_SLOTS], n = 0;
	for (int i = 0; i < STAGE_SLOTS; i++) {
		if (atomic_load(&h->slot[i].state) != STAGE_HELD)
			continue;
		int k = n++;
		while (k > 0 && atomic_load(&h->slot[order[k - 1]].off) > atomic_load(&h->slot[i].off)) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
	for (int k = 0; k < n; k++) {
		const struct stage_slot *s = &h->slot[order[k]];
		uint64_t len = atomic_load(&s->len);
		const uint8_t *src = (const uint8_t *)h + STAGE_HEAD_SIZE + (uint64_t)order[k] * STAGE_SLOT_SPAN;
		if (file_pwrite_all(dst, src, (size_t)(len < STAGE_SLOT_SPAN ? len : STAGE_SLOT_SPAN),
				    atomic_load(&s->off)) != 0)
			return -1;
	}
	return 0;
}

int stage_replay_fd(int fd)
{
	const struct stage_head *h = stage_map(fd);
	if (!h)
		return errno ? -1 : 0;
	int r = -1, dst = open(h->path, O_WRONLY | O_CLOEXEC);
	struct stat st;
	if (dst < 0 || fstat(dst, &st) != 0 || (uint64_t)st.st_dev != h->dev || (uint64_t)st.st_ino != h->ino)
		errno = ESTALE; /* the stream is gone, or another file has its name */
	else
		r = stage_copy(h, dst);
	int err = errno;
	if (dst >= 0)
		close(dst);
	stage_unmap(h);
	errno = err;
	return r;
}
