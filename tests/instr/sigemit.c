/* Events emitted by a signal handler while the thread it interrupts is
 * emitting too. The main thread pushes and pops user mark 1 argv[1] times in
 * a tight loop (argv[2] "sleep": it calls nanosleep of 0 ns each time
 * instead, a blocking call the shim itself records as mark 99); a timer
 * signal every 100 us runs a handler that calls nanosleep of 0 ns (the
 * timer slack set to 1 ns: else each sleep lasts 50 us). Prints
 * "marks N" (pushes of mark 1) and "handler N" (handler runs). With argv[3]
 * "exit", the handler's 200th run calls exit(3) instead of returning; with
 * "jump", each run leaves by siglongjmp back into the loop, which goes on
 * (an iteration cut short is done again), and the loop sets mark 2 (not a
 * stack) to a new value each time instead; with "burst", each run sets mark
 * 2 BURST times (more than 64 KiB of events, most often in the middle of an
 * emit of the loop). argv[4]: the timer's period in us (default 100). The
 * handler's 50000th run stops the timer: on a loaded machine a run can
 * outlast a short period, and the loop would then never go on. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>

#include "ovni.h"

static volatile sig_atomic_t handled;
#define BURST 4000
#define MAX_RUNS 50000
static int exit_early, jumping, burst;
static sigjmp_buf back;

static void on_alarm(int sig)
{
	(void)sig;
	struct timespec zero = { 0, 0 };
	nanosleep(&zero, NULL);
	for (int i = 0; burst && i < BURST; i++)
		ovni_mark_set(2, i + 1);
	if (++handled == 200 && exit_early)
		exit(3);
	if (handled == MAX_RUNS) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
	}
	if (jumping)
		siglongjmp(back, 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int sleeps = argc > 2 && strcmp(argv[2], "sleep") == 0;
	exit_early = argc > 3 && strcmp(argv[3], "exit") == 0;
	jumping = argc > 3 && strcmp(argv[3], "jump") == 0;
	burst = argc > 3 && strcmp(argv[3], "burst") == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	ovni_mark_type(1, OVNI_MARK_STACK, "Loop");
	ovni_mark_type(2, 0, "Attempt");
	long us = argc > 4 ? atol(argv[4]) : 100;
	struct itimerval every = { { 0, us }, { 0, us } };
	setitimer(ITIMER_REAL, &every, NULL);
	struct timespec zero = { 0, 0 };
	volatile long marks = 0, i = 0, attempt = 0;
	if (jumping)
		sigsetjmp(back, 1);
	for (; i < n; i++) {
		if (sleeps) {
			nanosleep(&zero, NULL);
			continue;
		}
		if (jumping) {
			ovni_mark_set(2, ++attempt);
		} else {
			ovni_mark_push(1, 1 + (i & 1));
			ovni_mark_pop(1, 1 + (i & 1));
		}
		marks++;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	printf("marks %ld\nhandler %ld\n", (long)marks, (long)handled);
	return 0;
}
