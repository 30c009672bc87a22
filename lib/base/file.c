/* Files whole: reads, writes, atomic replacement, mkdir -p, path joins and
 * directory listings; -1 with errno, no messages (the shim links it too). */
#include "base/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

size_t file_pread_all(int fd, void *buf, size_t n, uint64_t off, int *err)
{
	size_t got = 0;
	*err = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*err = r < 0 ? errno : 0;
			break;
		}
		got += (size_t)r;
	}
	return got;
}

int file_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		p = (const char *)p + w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* mkdir of p, then of the directories above it only when one is missing:
 * one call when the parents exist (the usual case), not one per level. */
static int mkdir_up(char *p, void (*made)(const char *dir))
{
	if (mkdir(p, 0755) == 0)
		goto done;
	if (errno == ENOENT) {
		char *slash = strrchr(p, '/');
		while (slash && slash > p && slash[-1] == '/')
			slash--;
		if (!slash || slash == p)
			return -1; /* no parent to make: the path is gone under us */
		*slash = '\0';
		int r = mkdir_up(p, made);
		*slash = '/';
		if (r != 0)
			return -1;
		if (mkdir(p, 0755) == 0)
			goto done;
	}
	struct stat st;
	int err = errno;
	if (err == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	errno = err == EEXIST ? ENOTDIR : err;
	return -1;
done:
	if (made)
		made(p);
	return 0;
}

int file_mkdirs_told(const char *path, int parents_only, void (*made)(const char *dir))
{
	char p[4096];
	size_t n = strlen(path);
	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, path, n + 1);
	if (parents_only) {
		char *slash = strrchr(p, '/');
		while (slash && slash > p && slash[-1] == '/')
			slash--;
		if (!slash || slash == p)
			return 0; /* in the current directory, or in / */
		*slash = '\0';
	}
	return mkdir_up(p, made);
}

int file_mkdirs(const char *path, int parents_only)
{
	return file_mkdirs_told(path, parents_only, NULL);
}

int file_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode, int sync)
{
	size_t n = strlen(name);
	char *tmp = malloc(n + 48);
	if (!tmp) {
		errno = ENOMEM;
		return -1;
	}
	/* 0600 until complete (a secret is never readable early); O_EXCL and
	 * O_NOFOLLOW: nobody else's file or link is ever written */
	int fd = -1;
	for (int i = 0; fd < 0 && i < 100; i++) {
		snprintf(tmp, n + 48, "%s.tmp.%ld.%d", name, (long)getpid(), i);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	int rc = file_write_all(fd, data, len);
	if (rc == 0)
		rc = fchmod(fd, mode);
	if (rc == 0 && sync)
		rc = fsync(fd);
	int err = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0) {
		rc = -1;
		err = errno;
	}
	if (rc != 0)
		unlinkat(dirfd, tmp, 0);
	free(tmp);
	errno = err;
	return rc;
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	return file_write_atomic_at(AT_FDCWD, path, data, len, mode, 1);
}

mode_t file_mode_default(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

void file_strip_slashes(char *path)
{
	for (size_t n = strlen(path); n > 1 && path[n - 1] == '/';)
		path[--n] = '\0';
}

size_t file_join_to(char *dst, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t sep = la && a[la - 1] != '/' && lb;
	size_t n = la + sep + lb;
	if (n >= cap)
		return n;
	memcpy(dst, a, la);
	if (sep)
		dst[la] = '/';
	memcpy(dst + la + sep, b, lb + 1);
	return n;
}

char *file_join(const char *a, const char *b)
{
	size_t cap = strlen(a) + strlen(b) + 2;
	char *p = malloc(cap);
	if (p)
		file_join_to(p, cap, a, b);
	return p;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **file_dir_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = calloc(1, sizeof(*v));
	size_t cap = 1;
	*n = 0;
	struct dirent *de;
	errno = 0;
	while (v && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n + 1 == cap) {
			char **g = realloc(v, 2 * cap * sizeof(*v));
			if (!g)
				break;
			v = g;
			cap *= 2;
		}
		if (!(v[*n] = strdup(de->d_name)))
			break;
		v[++*n] = NULL;
		errno = 0;
	}
	int err = v && errno == 0 ? 0 : errno ? errno : ENOMEM;
	closedir(d);
	if (err) {
		file_names_free(v, *n);
		errno = err;
		return NULL;
	}
	qsort(v, *n, sizeof(*v), cmp_name);
	return v;
}

void file_names_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static int walk_dir(const char *root, const char *rel, file_visit_fn visit, void *arg)
{
	char *dir = file_join(root, rel);
	size_t n = 0;
	char **names = dir ? file_dir_names(dir, &n) : NULL;
	if (!names) {
		int rc = visit(arg, rel, dir ? dir : root, NULL);
		free(dir);
		return rc < 0 ? -1 : 0;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		char *sub = file_join(rel, names[i]);
		char *full = file_join(dir, names[i]);
		struct stat st;
		if (!sub || !full) {
			errno = ENOMEM;
			rc = visit(arg, rel, dir, NULL);
		} else if (lstat(full, &st) != 0) {
			rc = visit(arg, sub, full, NULL);
		} else {
			rc = visit(arg, sub, full, &st);
			if (rc > 0 && S_ISDIR(st.st_mode))
				rc = walk_dir(root, sub, visit, arg);
		}
		free(sub);
		free(full);
	}
	file_names_free(names, n);
	free(dir);
	return rc < 0 ? -1 : 0;
}

int file_walk(const char *root, file_visit_fn visit, void *arg)
{
	return walk_dir(root, "", visit, arg);
}

static int remove_entry(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(p);
	return 0;
}

void file_remove_partial(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
		unlink(path);
}

void file_remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int file_copy_from(int in, const char *dst, mode_t mode)
{
	struct stat st;
	if (mode == (mode_t)-1)
		mode = fstat(in, &st) == 0 ? st.st_mode & 07777 : 0644;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0)
		return -1;
	/* mapped: not on the stack (the shim runs this on threads of 16 KiB)
	 * nor from malloc (nor in a signal handler) */
	size_t cap = 65536;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ssize_t r;
	int rc = buf == MAP_FAILED ? -1 : 0;
	while (rc == 0 && (r = read(in, buf, cap)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		rc = r < 0 ? -1 : file_write_all(out, buf, (size_t)r);
	}
	int err = errno;
	if (buf != MAP_FAILED)
		munmap(buf, cap);
	if (close(out) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	errno = err;
	return rc;
}

int file_copy(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int rc = file_copy_from(in, dst, mode);
	int err = errno;
	close(in);
	errno = err;
	return rc;
}

int file_move(const char *src, const char *dst)
{
	if (rename(src, dst) == 0)
		return 0;
	if (errno != EXDEV)
		return -1;
	if (file_copy(src, dst, (mode_t)-1) != 0) {
		int err = errno;
		unlink(dst);
		errno = err;
		return -1;
	}
	return unlink(src);
}
