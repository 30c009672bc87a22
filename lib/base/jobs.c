#include "base/jobs.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/msg.h"

/* The shared state of one jobs_run: which job is next, and whether one failed. */
struct jobs {
	atomic_size_t next;
	atomic_int failed;
};

/* parent: in a child, the caller's pid; 0 in the caller. */
static void take_jobs(struct jobs *j, size_t n, jobs_fn fn, void *ctx, pid_t parent)
{
	while (!atomic_load(&j->failed)) {
		if (parent && getppid() != parent)
			break; /* the caller was killed: no new job (the one running has finished) */
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= n)
			break;
		if (fn(ctx, i) < 0)
			atomic_store(&j->failed, 1);
	}
}

unsigned jobs_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

void *jobs_shared(size_t size)
{
	void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void jobs_shared_free(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

/* Waits for child pid; 0 when it ended well, else -1 once said. */
static int reap(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		msg_err("a worker process was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	return -1;
}

int jobs_run(size_t n, unsigned procs, jobs_fn fn, void *ctx)
{
	if (procs == 0)
		procs = jobs_cpus();
	if (procs > n)
		procs = n ? (unsigned)n : 1;
	struct jobs *j = procs > 1 ? jobs_shared(sizeof(*j)) : NULL;
	if (!j) { /* one process does them all */
		struct jobs own;
		atomic_init(&own.next, 0);
		atomic_init(&own.failed, 0);
		take_jobs(&own, n, fn, ctx, 0);
		return atomic_load(&own.failed) ? -1 : 0;
	}
	atomic_init(&j->next, 0);
	atomic_init(&j->failed, 0);
	fflush(NULL); /* a child would write the caller's buffered output again */
	pid_t *kids = malloc((procs - 1) * sizeof(*kids)), self = getpid();
	unsigned nkids = 0;
	while (kids && nkids < procs - 1) { /* without them the caller does all */
		pid_t pid = fork();
		if (pid == 0) {
			take_jobs(j, n, fn, ctx, self);
			fflush(NULL);
			_exit(atomic_load(&j->failed) ? 1 : 0);
		}
		if (pid < 0)
			break; /* fewer processes: the jobs only take longer */
		kids[nkids++] = pid;
	}
	take_jobs(j, n, fn, ctx, 0);
	int rc = atomic_load(&j->failed) ? -1 : 0;
	for (unsigned k = 0; k < nkids; k++)
		if (reap(kids[k]) != 0)
			rc = -1;
	free(kids);
	jobs_shared_free(j, sizeof(*j));
	return rc;
}
