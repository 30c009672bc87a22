/* A timer signal every 50 us runs a handler that sleeps 0 ns while the
 * main thread does nothing but malloc and free: the thread's first
 * blocking call comes in the handler, most often in the middle of malloc.
 * Under ovni record that first wait must not allocate (the shim used to
 * hang there on malloc's lock). argv[1]: rounds of malloc and free
 * (default 2000000); with argv[2] "kill", two usleeps after the loop and
 * then SIGKILL. Prints "handler N" (handler runs). The handler's 20000th
 * run stops the timer: on a loaded machine a run can outlast the period, and
 * the loop would then never go on. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
#define MAX_RUNS 20000

static void on_alarm(int sig)
{
	(void)sig;
	struct timespec zero = { 0, 0 };
	nanosleep(&zero, NULL);
	if (++handled == MAX_RUNS) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	prctl(PR_SET_TIMERSLACK, 1UL); /* else each sleep lasts 50 us */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	setitimer(ITIMER_REAL, &it, NULL);
	void *keep[64] = { 0 };
	unsigned x = 1;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		unsigned k = (x >> 16) & 63;
		free(keep[k]);
		keep[k] = malloc(16 + ((x >> 8) & 4095));
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	printf("handler %d\n", (int)handled);
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "kill") == 0) {
		usleep(1000);
		usleep(1000);
		raise(SIGKILL);
	}
	return 0;
}
