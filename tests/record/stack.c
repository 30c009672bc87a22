/* Threads with small stacks, one per argument (KiB; 16 is glibc's least):
 * each fills 4 KiB of its stack and sleeps once (a blocking call the
 * recorder writes from that stack). Prints what pthread_create answered
 * for each; the output is the same with and without the recorder, whose
 * thread-local data and thread start come out of those stacks too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *body(void *arg)
{
	(void)arg;
	volatile char buf[4096];
	memset((char *)buf, 1, sizeof(buf));
	usleep(1);
	return (void *)(long)buf[100];
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		size_t kib = strtoul(argv[i], NULL, 10);
		pthread_attr_t a;
		pthread_attr_init(&a);
		int r = pthread_attr_setstacksize(&a, kib << 10);
		pthread_t th;
		void *ret = NULL;
		if (r == 0)
			r = pthread_create(&th, &a, body, NULL);
		if (r == 0)
			pthread_join(th, &ret);
		pthread_attr_destroy(&a);
		printf("%zu KiB: %s\n", kib, r ? strerror(r) : ret == (void *)1L ? "ran" : "wrong result");
		fflush(stdout);
	}
	return 0;
}
