/* T threads each emit N events through the public API (ovni_clock_now +
 * ovni_ev_emit), as an instrumented runtime would. Prints the cost in CPU
 * ns per event of the emit loops (CPU time: other load on the machine does
 * not inflate it). Works alone (ovni lib) and under
 * ovni record. Usage: burst THREADS EVENTS_PER_THREAD */
#define _GNU_SOURCE
#include <ovni.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long nev;
static pthread_barrier_t bar;
static _Atomic long long cpu_ns, sys_ns; /* CPU time of the emit loops, all threads */

static long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The kernel's part (page allocation for the stream's mapping). */
static long long thread_sys_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL;
}

static void emit0(const char *mcv, int32_t *payload, int n)
{
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, mcv);
	ovni_ev_set_clock(&ev, ovni_clock_now());
	if (n)
		ovni_payload_add(&ev, (const uint8_t *)payload, n);
	ovni_ev_emit(&ev);
}

static void *run(void *arg)
{
	if (!ovni_thread_isready()) {
		ovni_thread_init((pid_t)syscall(SYS_gettid));
		int32_t p[4] = { -1, -1, 0, 0 };
		emit0("OHx", p, 16);
	}
	pthread_barrier_wait(&bar);
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, "OB.");
	long long c0 = thread_cpu_ns(), s0 = thread_sys_ns();
	for (long i = 0; i < nev; i++) {
		ovni_ev_set_clock(&ev, ovni_clock_now());
		ovni_ev_emit(&ev);
	}
	cpu_ns += thread_cpu_ns() - c0;
	sys_ns += thread_sys_ns() - s0;
	pthread_barrier_wait(&bar);
	emit0("OHe", NULL, 0);
	ovni_flush();
	ovni_thread_free();
	return arg;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int nth = argc > 1 ? atoi(argv[1]) : 1;
	nev = argc > 2 ? atol(argv[2]) : 1000000;
	char loom[64];
	snprintf(loom, sizeof(loom), "burst.%d", (int)getpid());
	ovni_proc_init(1, loom, getpid());
	ovni_thread_init((pid_t)syscall(SYS_gettid));
	ovni_add_cpu(0, 0);
	int32_t p[4] = { -1, -1, 0, 0 };
	emit0("OHx", p, 16);
	pthread_barrier_init(&bar, NULL, (unsigned)nth + 1);
	pthread_t *t = malloc(sizeof(*t) * (size_t)nth);
	for (int i = 0; i < nth; i++)
		pthread_create(&t[i], NULL, run, NULL);
	pthread_barrier_wait(&bar);
	double t0 = now();
	pthread_barrier_wait(&bar);
	double t1 = now();
	for (int i = 0; i < nth; i++)
		pthread_join(t[i], NULL);
	emit0("OHe", NULL, 0);
	ovni_flush();
	ovni_thread_free();
	ovni_proc_fini();
	double total = (double)nth * (double)nev;
	printf("burst: %d threads x %ld events: %.2f ns of CPU per event, %.2f of them in the kernel (%.2f s wall)\n",
	       nth, nev, (double)cpu_ns / total, (double)sys_ns / total, t1 - t0);
	return 0;
}
