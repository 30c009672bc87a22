#include "record/stagedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/msg.h"
#include "trace/stage.h"

/* A staging file still empty after this long was left by a killed thread. */
#define STALE_S 60

/* The recording of the state file path has ended without draining its
 * staging files: the file is gone, or no recorder holds its lock. */
static int owner_gone(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	int gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return gone;
}

/* What h holds for the stream src (open for reading, status st) written
 * into dst (src itself, or a copy of it), cut after its last event. 1 when
 * there was something, 0 if not, -1 with errno. */
static int apply(int src, const struct stat *st, const struct stage_head *h, int dst)
{
	struct stage_tail t = { 0 };
	int r = stage_compose(src, st, h, &t);
	if (r == 1 && (file_pwrite_all(dst, t.bytes, t.n, t.from) != 0 || ftruncate(dst, (off_t)(t.from + t.n)) != 0))
		r = -1;
	int err = errno;
	free(t.bytes);
	errno = err;
	return r;
}

/* h's stream, when it is still the file h was made for: 0, -1 with errno
 * (ESTALE: it is gone, or another file has its name). */
static int into_own_stream(const struct stage_head *h)
{
	int fd = open(h->path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_dev != h->dev || (uint64_t)st.st_ino != h->ino) {
		if (fd >= 0)
			close(fd);
		errno = ESTALE;
		return -1;
	}
	int r = apply(fd, &st, h, fd);
	int err = errno;
	close(fd);
	errno = err;
	return r < 0 ? -1 : 0;
}

/* The staging file name of dir: copied into its stream and removed when
 * owner has it (or, owner NULL, when its recording is gone). 1 copied, 0
 * not ours, -1 after a message. */
static int drain_one(const char *dir, const char *name, const char *owner)
{
	char path[4200];
	if (file_join_to(path, sizeof(path), dir, name) >= sizeof(path))
		return 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0; /* removed meanwhile by its thread */
	const struct stage_head *h = stage_map(fd);
	int r = 0;
	struct stat st;
	if (!h && errno == 0 && fstat(fd, &st) == 0 && time(NULL) - st.st_mtime > STALE_S) {
		unlink(path); /* its thread was killed as it made it: nothing in it */
	} else if (!h) {
		if (errno == EINVAL) /* not ours to judge: left alone */
			msg_warn("%s: not a staging file; left as it is", path);
	} else if (owner ? strcmp(h->owner, owner) == 0 : owner_gone(h->owner)) {
		r = 1;
		if (into_own_stream(h) != 0 && errno != ESTALE) {
			msg_err("%s: cannot copy into %s: %s", path, h->path, strerror(errno));
			r = -1;
		}
		unlink(path); /* copied, or its stream is gone */
	}
	if (h)
		stage_unmap(h);
	close(fd);
	return r;
}

int stagedir_drain(const char *dir, const char *owner)
{
	size_t n;
	char **names = file_dir_names(dir, &n);
	if (!names)
		return errno == ENOENT ? 0 : -1;
	int copied = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		int r = drain_one(dir, names[i], owner);
		if (r < 0)
			failed = 1;
		else
			copied += r;
	}
	file_names_free(names, n);
	return failed ? -1 : copied;
}

int stagedir_copy_into(const char *src, int dst)
{
	char path[4200];
	struct stat st;
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int fd = in >= 0 && fstat(in, &st) == 0 ? stage_open_for(&st, path, sizeof(path)) : -1;
	const struct stage_head *h = fd >= 0 ? stage_map(fd) : NULL;
	int r = h ? apply(in, &st, h, dst) : 0;
	if (r < 0)
		msg_err("%s: cannot copy into the copy of %s: %s", path, src, strerror(errno));
	if (h)
		stage_unmap(h);
	if (fd >= 0)
		close(fd);
	if (in >= 0)
		close(in);
	return r;
}
