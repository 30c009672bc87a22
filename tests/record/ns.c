/* unshare(CLONE_NEWUSER), which the kernel allows a process of one thread
 * only: made by the program alone (argv[1] "alone") or while a second
 * thread of its own waits (argv[1] "threads"). Prints what the call
 * answered. Before the call and after it, waits argv[2] times on a
 * condition until a time long past (a blocking call that returns at once,
 * which the recorder writes as two events): the stream grows over several
 * windows on each side (the recorder's mapper thread is running).
 * The output is the same with and without the recorder. */
#define _GNU_SOURCE /* unshare */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int waiting, done;

static void waits(long n)
{
	struct timespec past = { 0, 0 };
	pthread_mutex_lock(&lock);
	for (long i = 0; i < n; i++)
		pthread_cond_timedwait(&cond, &lock, &past);
	pthread_mutex_unlock(&lock);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	waiting = 1;
	pthread_cond_broadcast(&cond);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "alone") != 0 && strcmp(argv[1], "threads") != 0)) {
		fprintf(stderr, "usage: ns alone|threads WAITS\n");
		return 2;
	}
	int threads = strcmp(argv[1], "threads") == 0;
	pthread_t th;
	if (threads) {
		pthread_create(&th, NULL, waiter, NULL);
		pthread_mutex_lock(&lock);
		while (!waiting)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
	}
	waits(atol(argv[2]));
	int r = unshare(CLONE_NEWUSER);
	printf("unshare: %s\n", r == 0 ? "done" : strerror(errno));
	fflush(stdout);
	if (threads) {
		pthread_mutex_lock(&lock);
		done = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
		pthread_join(th, NULL);
	}
	waits(atol(argv[2]));
	return 0;
}
