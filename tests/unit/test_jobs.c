/* base/jobs: every job once, in processes that share what the jobs leave;
 * a failure stops the rest; a child that dies is a failure. */
#include <signal.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "t.h"
#include "base/jobs.h"

struct ctx {
	_Atomic int runs[100]; /* in jobs_shared memory */
	_Atomic int started;
	_Atomic int child_runs; /* jobs begun in a child */
	int fail_at; /* this job fails (-1: none) */
	int kill_at; /* this job's process kills itself if it is a child (-1: none) */
	pid_t parent;
};

static int job(void *arg, size_t i)
{
	struct ctx *c = arg;
	atomic_fetch_add(&c->started, 1);
	struct timespec ts = { 0, 1000000 }; /* 1 ms: the processes take turns */
	nanosleep(&ts, NULL);
	atomic_fetch_add(&c->runs[i], 1);
	if (getpid() != c->parent) {
		atomic_fetch_add(&c->child_runs, 1);
		if (c->kill_at >= 0 && (int)i >= c->kill_at)
			raise(SIGKILL);
	} else if (c->kill_at >= 0) { /* leaves the later jobs to the children (10 s at most) */
		for (int k = 0; k < 10000 && !atomic_load(&c->child_runs); k++)
			nanosleep(&ts, NULL);
	}
	return (int)i == c->fail_at ? -1 : 0;
}

static struct ctx *fresh(void)
{
	struct ctx *c = jobs_shared(sizeof(*c));
	if (c) {
		c->fail_at = c->kill_at = -1;
		c->parent = getpid();
	}
	return c;
}

int main(void)
{
	struct ctx *c = fresh();
	CHECK(c != NULL, "shared memory for the jobs");
	if (!c)
		return t_done();
	CHECK_INT(jobs_run(40, 3, job, c), 0, "40 jobs in 3 processes succeed");
	int once = 1;
	for (int i = 0; i < 40; i++)
		once &= c->runs[i] == 1;
	CHECK(once && c->runs[40] == 0, "each job ran once, in a process whose work the caller sees");
	jobs_shared_free(c, sizeof(*c));

	c = fresh();
	c->fail_at = 4;
	CHECK_INT(jobs_run(10, 1, job, c), -1, "one process: a failed job fails the run");
	CHECK(c->runs[4] == 1 && c->started == 5, "one process: no job starts after the failed one (%d started)",
	      (int)c->started);
	jobs_shared_free(c, sizeof(*c));

	c = fresh();
	c->fail_at = 5;
	CHECK_INT(jobs_run(100, 4, job, c), -1, "4 processes: a failed job fails the run");
	CHECK(c->started < 20, "4 processes: the jobs stop soon after the failure (%d of 100 started)", (int)c->started);
	jobs_shared_free(c, sizeof(*c));

	c = fresh();
	c->kill_at = 3;
	CHECK_INT(jobs_run(12, 3, job, c), -1, "a worker process killed by a signal fails the run");
	jobs_shared_free(c, sizeof(*c));

	c = fresh();
	CHECK_INT(jobs_run(0, 4, job, c), 0, "no jobs: success");
	CHECK_INT(c->started, 0, "no jobs: nothing runs");
	CHECK_INT(jobs_run(3, 64, job, c), 0, "more processes asked than jobs: success");
	CHECK(c->runs[0] == 1 && c->runs[1] == 1 && c->runs[2] == 1, "each of the 3 jobs ran once");
	jobs_shared_free(c, sizeof(*c));
	CHECK(jobs_cpus() >= 1, "at least one CPU (%u)", jobs_cpus());

	/* The caller killed: its worker starts no other job. */
	c = fresh();
	pid_t caller = fork();
	if (caller == 0) {
		c->parent = getpid();
		jobs_run(100, 2, job, c);
		_exit(0);
	}
	struct timespec ms1 = { 0, 1000000 }, ms100 = { 0, 100000000 };
	for (int k = 0; k < 10000 && !c->started; k++) /* the jobs under way (10 s at most) */
		nanosleep(&ms1, NULL);
	kill(caller, SIGKILL);
	waitpid(caller, NULL, 0);
	nanosleep(&ms100, NULL);
	int after = c->started;
	nanosleep(&ms100, NULL);
	CHECK(after > 0 && after < 100 && c->started == after,
	      "the caller killed, its worker stops (%d of 100 jobs started, %d later)", after, (int)c->started);
	jobs_shared_free(c, sizeof(*c));
	return t_done();
}
