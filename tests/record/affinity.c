#define _GNU_SOURCE
/* CPU placement: main pins itself to CPU 0 (it runs there), two threads
 * ask for CPU 0 too (only one can: the other runs on the virtual CPU),
 * then main moves a thread to CPU 1 and unpins itself. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t bar;

static void *worker(void *a)
{
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	return a;
}

static void pin(pthread_t th, int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(th, sizeof(s), &s);
}

int main(void)
{
	cpu_set_t all;
	sched_getaffinity(0, sizeof(all), &all);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	pthread_barrier_init(&bar, NULL, 3);
	pthread_t t[2];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], &attr, worker, NULL);
	pthread_barrier_wait(&bar);
	pin(t[0], 1);
	sched_setaffinity(0, sizeof(all), &all);
	pthread_barrier_wait(&bar);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	puts("affinity: done");
	return 0;
}
