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

int stage_held(const struct stage_head *h, int order[STAGE_SLOTS])
{
	int n = 0;
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
	return n;
}

size_t stage_slot_len(const struct stage_head *h, int i)
{
	uint64_t len = atomic_load(&h->slot[i].len);
	return (size_t)(len < STAGE_SLOT_SPAN ? len : STAGE_SLOT_SPAN);
}

const uint8_t *stage_slot_bytes(const struct stage_head *h, int i)
{
	return (const uint8_t *)h + STAGE_HEAD_SIZE + (size_t)i * STAGE_SLOT_SPAN;
}

int stage_copy(const struct stage_head *h, int dst)
{
	int order[STAGE_SLOTS], n = stage_held(h, order);
	for (int k = 0; k < n; k++)
		if (file_pwrite_all(dst, stage_slot_bytes(h, order[k]), stage_slot_len(h, order[k]),
				    atomic_load(&h->slot[order[k]].off)) != 0)
			return -1;
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
