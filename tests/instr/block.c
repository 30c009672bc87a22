/* Blocking calls for the shim's block marks: exactly one contended lock,
 * one condition wait, barrier waits, one join of a running thread, one
 * blocking sem_wait, one nanosleep and one usleep; then uncontended locks,
 * which must leave no mark. Prints "block: ok". */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t b;
static sem_t s;
static _Atomic int main_tid, tid;
static _Atomic int at; /* the call main or the worker is about to make */
static int flag;

enum { AT_LOCK = 1, AT_COND, AT_SEM };

/* Whether thread t sleeps in the kernel (state S in /proc). */
static int sleeping(int t)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Waits until thread t blocks, once it is about to make call (it may
 * sleep before that too: the shim's own waits). */
static void wait_sleeping(_Atomic int *t, int call)
{
	while (atomic_load(&at) != call)
		sched_yield();
	while (!sleeping(atomic_load(t)))
		sched_yield();
}

static void *worker(void *arg)
{
	(void)arg;
	atomic_store(&tid, (int)syscall(SYS_gettid));
	atomic_store(&at, AT_LOCK);
	pthread_mutex_lock(&m); /* contended: main holds it */
	pthread_mutex_unlock(&m);
	pthread_barrier_wait(&b);
	/* main sets AT_COND holding m, and m is free once it waits; m is not
	 * tried before (a try that took it made main's lock a contended one) */
	while (atomic_load(&at) != AT_COND)
		sched_yield();
	while (pthread_mutex_trylock(&m) != 0)
		sched_yield();
	flag = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	pthread_barrier_wait(&b);
	wait_sleeping(&main_tid, AT_SEM);
	sem_post(&s);
	usleep(200000); /* main joins while this runs */
	return NULL;
}

int main(void)
{
	pthread_barrier_init(&b, NULL, 2);
	sem_init(&s, 0, 0);
	pthread_t th;
	atomic_store(&main_tid, (int)syscall(SYS_gettid));
	pthread_mutex_lock(&m);
	pthread_create(&th, NULL, worker, NULL);
	wait_sleeping(&tid, AT_LOCK);
	pthread_mutex_unlock(&m);
	pthread_barrier_wait(&b);
	pthread_mutex_lock(&m);
	atomic_store(&at, AT_COND);
	while (!flag)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	pthread_barrier_wait(&b);
	atomic_store(&at, AT_SEM);
	sem_wait(&s);
	pthread_join(th, NULL);
	struct timespec ts = { 0, 1000000 };
	nanosleep(&ts, NULL);
	for (int i = 0; i < 100000; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	puts("block: ok");
	return 0;
}
