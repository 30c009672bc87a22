/* Unpacking: every member under the target directory and nowhere else.
 * Paths must be relative without "." or "..", link targets relative
 * without "..", and no existing link is followed, so nothing lands outside. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/msg.h"
#include "pack/pack.h"
#include "pack/walk.h"

/* 1 if every '/'-separated part of s is a name (not empty, ".", ".."). */
static int parts_ok(const char *s, int dotdot_only)
{
	if (*s == '/' || *s == '\0')
		return 0;
	for (const char *p = s; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		if (!dotdot_only && (n == 0 || (n == 1 && p[0] == '.')))
			return 0;
		p += n + (e != NULL);
		if (e && !*p && !dotdot_only)
			return 0; /* trailing slash */
	}
	return 1;
}

struct extract {
	struct pack *p;
	const char *dir;
	int force;
	int fd;
	const char *full;
	uint64_t off;
};

/* Every directory above path (relative) must be a real directory: made if
 * missing, never a link. */
static int check_parents(struct extract *x, struct pack_member *m, char *full)
{
	size_t base = strlen(x->dir) + 1;
	for (char *s = full + base; (s = strchr(s, '/')); s++) {
		*s = '\0';
		struct stat st;
		int rc = 0;
		if (lstat(full, &st) != 0) {
			if (errno != ENOENT || mkdir(full, 0755) != 0) {
				msg_err("%s: member %s: cannot make directory %s: %s", x->p->path, m->path, full,
					strerror(errno));
				rc = -1;
			}
		} else if (!S_ISDIR(st.st_mode)) {
			msg_err("%s: member %s: %s is %s, refusing to write through it", x->p->path, m->path, full,
				S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
			rc = -1;
		}
		*s = '/';
		if (rc)
			return -1;
	}
	return 0;
}

/* An existing file at full is an error unless --force (then removed). */
static int clear_place(struct extract *x, struct pack_member *m, const char *full)
{
	struct stat st;
	if (lstat(full, &st) != 0)
		return 0;
	if (m->type == PACK_DIR && S_ISDIR(st.st_mode))
		return 0;
	if (!x->force || S_ISDIR(st.st_mode)) {
		msg_err("%s: member %s: %s already exists%s", x->p->path, m->path, full,
			S_ISDIR(st.st_mode) ? " as a directory" : " (--force overwrites)");
		return -1;
	}
	if (unlink(full) != 0) {
		msg_err("%s: member %s: cannot remove %s: %s", x->p->path, m->path, full, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_block(void *arg, const uint8_t *b, size_t n)
{
	struct extract *x = arg;
	while (n > 0) {
		ssize_t w = write(x->fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			msg_err("%s: offset %llu: cannot write: %s", x->full, (unsigned long long)x->off, strerror(errno));
			return -1;
		}
		b += w;
		n -= (size_t)w;
		x->off += (uint64_t)w;
	}
	return 0;
}

static struct timespec mtime_of(const struct pack_member *m)
{
	struct timespec ts = { .tv_sec = (time_t)m->mtime_sec, .tv_nsec = (long)m->mtime_nsec };
	return ts;
}

static int extract_file(struct extract *x, struct pack_member *m, const char *full, pack_progress_fn progress,
			void *arg, uint64_t *done, uint64_t total)
{
	x->fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (x->fd < 0) {
		msg_err("%s: member %s: cannot create %s: %s", x->p->path, m->path, full, strerror(errno));
		return -1;
	}
	x->full = full;
	x->off = 0;
	int rc = pack_member_each(x->p, m, write_block, x, progress, arg, done, total);
	struct timespec ts[2] = { mtime_of(m), mtime_of(m) };
	if (rc == 0 && (fchmod(x->fd, m->mode) != 0 || futimens(x->fd, ts) != 0)) {
		msg_err("%s: cannot set mode and time: %s", full, strerror(errno));
		rc = -1;
	}
	if (close(x->fd) != 0 && rc == 0) {
		msg_err("%s: cannot write: %s", full, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(full); /* no half file that looks whole */
	return rc;
}

static int extract_one(struct extract *x, struct pack_member *m, pack_progress_fn progress, void *arg,
		       uint64_t *done, uint64_t total)
{
	if (!parts_ok(m->path, 0)) {
		msg_err("%s: member %s: refusing a path that is absolute or has \".\" or \"..\" parts", x->p->path,
			m->path);
		return -1;
	}
	if (m->type == PACK_LINK && !parts_ok(m->target, 1)) {
		msg_err("%s: member %s: refusing a link pointing out of the directory (%s)", x->p->path, m->path,
			m->target);
		return -1;
	}
	char *full = file_join(x->dir, m->path);
	if (!full) {
		msg_err("out of memory");
		return -1;
	}
	int rc = check_parents(x, m, full) < 0 || clear_place(x, m, full) < 0 ? -1 : 0;
	if (rc == 0 && m->type == PACK_DIR) {
		if (mkdir(full, 0700) != 0 && errno != EEXIST) {
			msg_err("%s: member %s: cannot make directory %s: %s", x->p->path, m->path, full, strerror(errno));
			rc = -1;
		}
	} else if (rc == 0 && m->type == PACK_LINK) {
		struct timespec ts[2] = { mtime_of(m), mtime_of(m) };
		if (symlink(m->target, full) != 0 || utimensat(AT_FDCWD, full, ts, AT_SYMLINK_NOFOLLOW) != 0) {
			msg_err("%s: member %s: cannot make link %s: %s", x->p->path, m->path, full, strerror(errno));
			rc = -1;
		}
	} else if (rc == 0) {
		rc = extract_file(x, m, full, progress, arg, done, total);
	}
	free(full);
	return rc;
}

/* Directory modes and times last: writing inside changes the time, and a
 * read-only mode would stop the writing. */
static int finish_dirs(struct extract *x)
{
	for (size_t i = x->p->n; i-- > 0;) {
		struct pack_member *m = &x->p->members[i];
		if (m->type != PACK_DIR)
			continue;
		char *full = file_join(x->dir, m->path);
		struct timespec ts[2] = { mtime_of(m), mtime_of(m) };
		if (!full || chmod(full, m->mode) != 0 || utimensat(AT_FDCWD, full, ts, AT_SYMLINK_NOFOLLOW) != 0) {
			msg_err("%s: cannot set mode and time: %s", full ? full : m->path, strerror(errno));
			free(full);
			return -1;
		}
		free(full);
	}
	return 0;
}

int pack_extract(struct pack *p, const char *dir, int force, pack_progress_fn progress, void *arg)
{
	struct extract x = { .p = p, .dir = dir, .force = force };
	if (file_mkdirs(dir, 0) != 0) {
		msg_err("%s: cannot make directory: %s", dir, strerror(errno));
		return -1;
	}
	uint64_t done = 0, total = 0;
	for (size_t i = 0; i < p->n; i++)
		total += p->members[i].size;
	for (size_t i = 0; i < p->n; i++)
		if (extract_one(&x, &p->members[i], progress, arg, &done, total) < 0)
			return -1;
	return finish_dirs(&x);
}
