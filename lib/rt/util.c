/* Messages, thread ids and directories for the shim. */
#include "rt/rt.h"
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

void rt_die(const char *func, const char *fmt, ...)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "FATAL: %s: ", func);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(buf))
		vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = strlen(buf);
	if (len + 1 < sizeof(buf))
		buf[len++] = '\n';
	file_write_all(2, buf, len);
	abort();
}

void rt_warn(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	file_write_all(2, buf, strlen(buf));
}

void rt_signals_off(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
}

void rt_signals_on(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

pid_t rt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void rt_fix_mode(int fd, const char *path, mode_t mode)
{
	if (!rt_record_mode)
		return;
	if (fd >= 0)
		fchmod(fd, mode);
	else
		chmod(path, mode);
}

static void fix_dir_mode(const char *dir)
{
	rt_fix_mode(-1, dir, 0755);
}

/* mkdir -p with mode 0755, in record mode whatever the program's umask
 * (rt_fix_mode: why it is not plain file_mkdirs); 0 or -1 with errno. */
int rt_mkpath(const char *path)
{
	return file_mkdirs_told(path, 0, fix_dir_mode);
}

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif
#define CLOSE_ALL_MAX 65536 /* descriptors closed one by one without /proc */

/* Closes every descriptor of this thread's table: those /proc lists, else
 * all below CLOSE_ALL_MAX. */
static void close_every_fd(void)
{
	int dir = open("/proc/thread-self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		for (int fd = 0; fd < CLOSE_ALL_MAX; fd++)
			close(fd);
		return;
	}
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long at = 0; at < n;) {
			const char *name = buf + at + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
			unsigned short reclen;
			memcpy(&reclen, buf + at + 16, 2);
			int fd = 0;
			for (const char *c = name; *c >= '0' && *c <= '9'; c++)
				fd = 10 * fd + (*c - '0');
			if (name[0] >= '0' && name[0] <= '9' && fd != dir)
				close(fd);
			at += reclen;
		}
	close(dir);
}

void rt_fds_apart(void)
{
	if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) == 0)
		return;
	if (syscall(SYS_unshare, CLONE_FILES) == 0) /* before Linux 5.9: a copy, then emptied */
		close_every_fd();
}

/* The system call itself: struct stat is the kernel's on x86_64 (glibc.h). */
int rt_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

/* The same for a path (stat is a glibc 2.33 symbol too). */
int rt_stat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

/* A write of this thread failed with err: a file size limit's SIGXFSZ,
 * raised while every signal was blocked, is taken back unless the program
 * (whose mask is caller) blocks it too. */
void rt_forget_xfsz(int err, const sigset_t *caller)
{
	if (err != EFBIG || sigismember(caller, SIGXFSZ))
		return;
	sigset_t xfsz;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	const struct timespec now = { 0, 0 };
	sigtimedwait(&xfsz, NULL, &now);
}
