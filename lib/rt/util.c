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
