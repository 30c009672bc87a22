/* Uncontended pthread_mutex_lock/unlock pairs in one thread; prints the
 * time per pair in ns (the bench of the shim's lock wrapper). With a
 * second argument "mt", a thread is created and joined first, so the
 * process is no longer single-threaded (glibc and the shim then take their
 * multi-threaded paths). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[2], "mt") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, nothing, NULL);
		pthread_join(t, NULL);
	}
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("%.2f\n", ns / (double)n);
	return 0;
}
