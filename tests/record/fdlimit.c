/* A program at its descriptor limit: it opens /dev/null until open fails,
 * then emits N events through the API (argv[1], enough to need new
 * windows of its stream) and, with argv[2] "threads", starts and joins 3
 * threads; frees the descriptors and exits with status 4. With argv[2]
 * "mark" it declares a mark type there and pushes and pops it 10 times,
 * then exits with status 4 still at the limit. Under ovni
 * record its thread's stream cannot be opened again for a new window, nor
 * the new threads' streams at all: the program must go on all the same. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ovni.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void *idle(void *a)
{
	return a;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct rlimit rl = { 64, 64 }; /* a small limit: quick to reach */
	setrlimit(RLIMIT_NOFILE, &rl);
	int fds[64], k = 0;
	while (k < 64 && (fds[k] = open("/dev/null", O_RDONLY)) >= 0)
		k++;
	for (long i = 0; i < n; i++) {
		struct ovni_ev ev = { 0 };
		ovni_ev_set_mcv(&ev, "OB.");
		ovni_ev_set_clock(&ev, ovni_clock_now());
		ovni_ev_emit(&ev);
	}
	for (int i = 0; argc > 2 && strcmp(argv[2], "threads") == 0 && i < 3; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	if (argc > 2 && strcmp(argv[2], "mark") == 0) {
		ovni_mark_type(5, OVNI_MARK_STACK, "Phase");
		for (int i = 0; i < 10; i++) {
			ovni_mark_push(5, 1 + i);
			ovni_mark_pop(5, 1 + i);
		}
		printf("fdlimit: %ld events, 10 marks\n", n);
		return 4;
	}
	while (k > 0)
		close(fds[--k]);
	printf("fdlimit: %ld events\n", n);
	return 4;
}
