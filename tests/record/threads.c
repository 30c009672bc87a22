/* Threads that end every way a thread can: returning, pthread_exit, and
 * being joined after a cancellation. argv[1]: threads (default 4). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *ret(void *a)
{
	volatile long s = 0;
	for (long i = 0; i < 100000; i++)
		s += i;
	return a;
}

static void *leave(void *a)
{
	pthread_exit(a);
}

static void *wait_cancel(void *a)
{
	for (;;)
		pause();
	return a;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t *t = calloc((size_t)n + 1, sizeof(*t));
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, i % 2 ? leave : ret, NULL);
	pthread_create(&t[n], NULL, wait_cancel, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_cancel(t[n]);
	pthread_join(t[n], NULL);
	free(t);
	printf("threads: %d\n", n + 1);
	return argc > 2 ? atoi(argv[2]) : 0;
}
