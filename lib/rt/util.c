/* Messages, thread ids and directories for the shim. */
#include "rt/rt.h"
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
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

/* mkdir -p with mode 0755, in record mode whatever the program's umask
 * (rt_fix_mode: why it is not file_mkdirs); 0 or -1 with errno. The leaf
 * is tried first: a thread's directory has its parents already, and each
 * mkdir is a round trip to the metadata server on a parallel file system. */
int rt_mkpath(const char *path)
{
	char p[PATH_MAX];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(path, 0755) == 0) {
		rt_fix_mode(-1, path, 0755);
		return 0;
	}
	if (errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	memcpy(p, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		if (mkdir(p, 0755) == 0)
			rt_fix_mode(-1, p, 0755);
		else if (errno != EEXIST)
			return -1;
		p[i] = c;
	}
	return 0;
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
