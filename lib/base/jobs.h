/* Independent jobs run side by side in a few processes: the caller's when
 * one is enough, else forked children. Processes, not threads: a job that
 * maps and unmaps memory (a sort's views of its stream) would make every
 * other thread of the process take a TLB flush each time. */
#ifndef OVNI_BASE_JOBS_H
#define OVNI_BASE_JOBS_H

#include <stddef.h>

/* A job: 0 when done, -1 when it failed (it has said why). */
typedef int (*jobs_fn)(void *ctx, size_t i);

/* Runs fn(ctx, i) for i in [0, n) in at most procs processes (0: one per
 * CPU), each job once, started in index order. What a job leaves for the
 * caller must be in memory from jobs_shared(). Once a job fails no other
 * starts; those running finish. 0 when all succeeded, else -1 (a child
 * that dies is said in one line and counts as a failure). A child whose
 * caller is gone (killed) starts no other job. */
int jobs_run(size_t n, unsigned procs, jobs_fn fn, void *ctx);

/* size bytes of zeroed memory that the jobs' processes and the caller
 * share, or NULL; given back by jobs_shared_free. */
void *jobs_shared(size_t size);
void jobs_shared_free(void *p, size_t size);

/* The CPUs this process may run on (at least 1). */
unsigned jobs_cpus(void);

#endif
