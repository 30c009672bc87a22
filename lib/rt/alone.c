/* unshare() into a new user namespace and setns() into a user or mount
 * namespace need a process of one thread: the kernel answers EINVAL to any
 * other. The recorder's own threads (the mapper, the switch collector)
 * must not make such a call fail where the program alone would succeed
 * (`unshare -r`, `nsenter -m`). When one fails with EINVAL and those are
 * the only other threads, they are stopped, the call is made again, and
 * they start again after it. */
#include "rt/kernel.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* What unshare() asks that needs the caller alone in its process. */
#define NEEDS_ALONE (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

/* Threads of this process now (/proc/self/task), or -1. */
static int count_threads(void)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = 0;
	for (;;) {
		uint64_t buf[512]; /* linux_dirent64 records: u64 ino, s64 off, u16 len, u8 type, name */
		long got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (got <= 0) {
			if (got < 0)
				n = -1;
			break;
		}
		for (long off = 0; off < got;) {
			const char *d = (const char *)buf + off;
			unsigned short len;
			memcpy(&len, d + 16, sizeof(len));
			if (d[19] != '.')
				n++;
			off += len;
		}
	}
	close(fd);
	return n;
}

typedef int (*ns_fn)(int, int);

/* The call made again with the recorder's threads stopped, if they are
 * the only others; else its first answer, EINVAL. */
static int again_alone(ns_fn real, int a, int b)
{
	int helpers = rt_mapper_running() + rt_kernel_collector_running();
	if (helpers == 0 || count_threads() != 1 + helpers) {
		errno = EINVAL;
		return -1;
	}
	/* no handler of the program may emit (and ask the mapper) meanwhile */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int collector = rt_kernel_collector_running();
	rt_mapper_stop();
	rt_kernel_collector_stop();
	/* a joined thread leaves the process a moment after join returns (the
	 * bare system call: nanosleep() is the shim's, a blocking call mark) */
	for (int i = 0; i < 2000 && count_threads() > 1; i++)
		syscall(SYS_nanosleep, &(struct timespec){ 0, 100000 }, NULL);
	int r = real(a, b), err = errno;
	if (collector)
		rt_kernel_collector_start();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return r; /* the mapper starts again at the next window */
}

static int unshare_real(int flags, int unused)
{
	(void)unused;
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "unshare");
	if (!real)
		return (int)syscall(SYS_unshare, flags);
	return real(flags);
}

static int setns_real(int fd, int nstype)
{
	static ns_fn real;
	if (!real)
		real = (ns_fn)dlsym(RTLD_NEXT, "setns");
	if (!real)
		return (int)syscall(SYS_setns, fd, nstype);
	return real(fd, nstype);
}

RT_API int unshare(int flags)
{
	int r = unshare_real(flags, 0);
	if (r == 0 || errno != EINVAL || !(flags & NEEDS_ALONE))
		return r;
	return again_alone(unshare_real, flags, 0);
}

RT_API int setns(int fd, int nstype)
{
	int r = setns_real(fd, nstype);
	if (r == 0 || errno != EINVAL)
		return r;
	return again_alone(setns_real, fd, nstype);
}
