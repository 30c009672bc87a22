/* Calls that a process of one thread makes differently from one of
 * several: the recorder's own threads (the mapper, the switch collector)
 * must not make them fail where the program alone would succeed. When
 * they are the only other threads, they are stopped around the call and
 * start again after it.
 * - unshare() into a new user namespace and setns() into a user or mount
 *   namespace: the kernel answers EINVAL to a process of several threads
 *   (`unshare -r`, `nsenter -m`); made again alone when they fail so.
 * - the set*id calls, which glibc makes every thread take (below).
 * - the end of the program's last thread (pthread_exit from main, then
 *   the others return): glibc ends the process when its last thread
 *   ends, so the recorder's threads end first (rt_thread_after_end). */
#include "base/file.h"
#include "rt/instr.h"
#include "rt/kernel.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* What unshare() asks that needs the caller alone in its process. */
#define NEEDS_ALONE (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

/* Threads of this process now (/proc/self/task), or -1. */
static int count_threads(void)
{
	size_t n;
	char **names = file_dir_names("/proc/self/task", &n);
	if (!names)
		return -1;
	file_names_free(names, n);
	return (int)n;
}

/* While the recorder's threads are stopped (alone_begin .. alone_end). */
struct alone {
	int collector; /* the collector ran: start it again */
	int mapper; /* the mapper ran */
	sigset_t mask; /* the caller's signal mask */
};

/* Stops the recorder's threads if they are the only others: 1 if it did.
 * With threads of the program's own, 0: one of them could ask the mapper
 * for a window meanwhile, and the kernel refuses the call to it anyway. */
static int alone_begin(struct alone *a)
{
	int helpers = rt_mapper_running() + rt_kernel_collector_running();
	if (helpers == 0 || count_threads() != 1 + helpers)
		return 0;
	/* no handler of the program may emit (and ask the mapper) meanwhile */
	rt_signals_off(&a->mask);
	a->collector = rt_kernel_collector_running();
	a->mapper = rt_mapper_running();
	rt_helpers_stop();
	/* a joined thread leaves the process a moment after join returns (the
	 * bare system call: nanosleep() is the shim's, a blocking call mark) */
	for (int i = 0; i < 2000 && count_threads() > 1; i++)
		syscall(SYS_nanosleep, &(struct timespec){ 0, 100000 }, NULL);
	return 1;
}

/* The collector starts again, made by the caller: with its credentials,
 * namespaces and capabilities as they are now. The mapper starts again
 * when a window wants it, by the collector; without one, now. */
static void alone_end(struct alone *a)
{
	if (a->collector)
		rt_kernel_collector_start();
	else if (a->mapper)
		rt_mapper_start();
	rt_signals_on(&a->mask);
}

void rt_helpers_stop(void)
{
	rt_mapper_stop();
	rt_kernel_collector_stop();
}

typedef int (*ns_fn)(int, int);

/* The call made again with the recorder's threads stopped, if they are
 * the only others; else its first answer, EINVAL. */
static int again_alone(ns_fn real, int a, int b)
{
	struct alone al;
	if (!alone_begin(&al)) {
		errno = EINVAL;
		return -1;
	}
	int r = real(a, b), err = errno;
	alone_end(&al);
	errno = err;
	return r;
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

/* The set*id calls: glibc makes every thread of the process take the new
 * ids, and aborts the process when one of them cannot. A program that
 * keeps its capabilities in its own thread only (setpriv: setresuid, then
 * capset, then setresgid) made the recorder's threads, which had lost
 * theirs with the uid, fail the second one: made with the recorder's
 * threads stopped, the call is the program's alone, and they start again
 * with its ids and capabilities. */
#define SETXID(name, params, args)                                  \
	RT_API int name params                                      \
	{                                                           \
		static int(*real) params;                           \
		if (!real)                                          \
			real = (int(*) params)rt_instr_next(#name); \
		struct alone al;                                    \
		int stopped = alone_begin(&al);                     \
		int rc = real args, err = errno;                    \
		if (stopped)                                        \
			alone_end(&al);                             \
		errno = err;                                        \
		return rc;                                          \
	}

SETXID(setuid, (uid_t u), (u))
SETXID(setgid, (gid_t g), (g))
SETXID(seteuid, (uid_t u), (u))
SETXID(setegid, (gid_t g), (g))
SETXID(setreuid, (uid_t r, uid_t e), (r, e))
SETXID(setregid, (gid_t r, gid_t e), (r, e))
SETXID(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
SETXID(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
SETXID(setgroups, (size_t n, const gid_t *list), (n, list))
