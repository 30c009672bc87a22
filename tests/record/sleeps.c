/* Threads that leave their CPU many times: argv[1] threads each sleep
 * argv[2] times for 10 us, through nanosleep (a call the shim sees) or, with
 * argv[3] "raw", the bare system call (which it does not: only the
 * collector empties the thread's ring then). Each thread prints its tid and
 * how many times it left its CPU from the start of its function to the end
 * of its sleeps, as the kernel counts them. With "kill", raw sleeps, and
 * the last thread to finish them kills the process with SIGKILL while the
 * others go on sleeping raw: no thread ever wrote its switches itself. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int times, raw, kill_at_end, nthreads;
static int finished;

static long switches(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void *sleeper(void *arg)
{
	/* from here on the shim records this thread's switches: those of its
	 * start (slow under the sanitizers on a loaded machine) do not count */
	long before = switches();
	struct timespec ts = { 0, 10000 };
	for (int i = 0; i < times; i++) {
		if (raw)
			syscall(SYS_nanosleep, &ts, NULL);
		else
			nanosleep(&ts, NULL);
	}
	printf("sleeper %ld %ld\n", (long)syscall(SYS_gettid), switches() - before);
	if (kill_at_end) {
		fflush(stdout);
		if (__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST) == nthreads)
			raise(SIGKILL);
		for (;;)
			syscall(SYS_nanosleep, &ts, NULL);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	times = argc > 2 ? atoi(argv[2]) : 1000;
	kill_at_end = argc > 3 && strcmp(argv[3], "kill") == 0;
	raw = kill_at_end || (argc > 3 && strcmp(argv[3], "raw") == 0);
	nthreads = n;
	pthread_t th[64];
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, sleeper, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
