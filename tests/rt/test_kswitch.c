/* lib/rt/kswitch.c on this machine: threads that sleep, block on a pipe
 * and wait for a mutex must show out-of-CPU intervals (KCO ... KCI) that
 * cover the time they were blocked, measured with CLOCK_MONOTONIC, written
 * inside one unordered region per drain. Built with the host's (glibc)
 * compiler, like the preload shim; skipped when perf_event is forbidden. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt/kswitch.h"
#include "t.h"

#define MAX_EVENTS 4096
#define MAX_WAITS 8
#define MS 1000000ull

struct event {
	char mcv[4];
	uint64_t clock;
};

/* What one thread recorded: its events and the intervals it blocked. */
struct run {
	const char *what;
	unsigned ring_pages;
	int rc; /* of kswitch_open */
	struct event ev[MAX_EVENTS];
	size_t nev, ndrained;
	uint64_t wait0[MAX_WAITS], wait1[MAX_WAITS], asked[MAX_WAITS];
	size_t nwaits;
	uint64_t lost;
};

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void emit(void *ctx, const char mcv[3], uint64_t clock)
{
	struct run *r = ctx;
	if (r->nev == MAX_EVENTS)
		return;
	memcpy(r->ev[r->nev].mcv, mcv, 3);
	r->ev[r->nev].mcv[3] = '\0';
	r->ev[r->nev++].clock = clock;
}

static void wait_begin(struct run *r, uint64_t asked)
{
	r->asked[r->nwaits] = asked;
	r->wait0[r->nwaits] = now();
}

static void wait_end(struct run *r)
{
	r->wait1[r->nwaits++] = now();
}

static int pipefd[2];
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int contender_ready;

static void *sleeper(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	if ((r->rc = kswitch_open(&k, r->ring_pages)) != 0)
		return NULL;
	for (int i = 0; i < 3; i++) {
		wait_begin(r, 20 * MS);
		sleep_ns(20 * MS);
		wait_end(r);
	}
	r->ndrained = kswitch_drain(&k, emit, r);
	kswitch_close(&k);
	return NULL;
}

static void *pipe_reader(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	char c;
	if ((r->rc = kswitch_open(&k, r->ring_pages)) != 0)
		return NULL;
	wait_begin(r, 30 * MS);
	ssize_t n = read(pipefd[0], &c, 1);
	wait_end(r);
	if (n != 1)
		r->nwaits = 0;
	r->ndrained = kswitch_drain(&k, emit, r);
	kswitch_close(&k);
	return NULL;
}

static void *contender(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	r->rc = kswitch_open(&k, r->ring_pages);
	atomic_store(&contender_ready, 1);
	if (r->rc != 0)
		return NULL;
	wait_begin(r, 30 * MS);
	pthread_mutex_lock(&mutex);
	wait_end(r);
	pthread_mutex_unlock(&mutex);
	r->ndrained = kswitch_drain(&k, emit, r);
	kswitch_close(&k);
	return NULL;
}

/* Many short sleeps into a one-page ring: records get lost. */
static struct run again;
static void *overflow(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	if ((r->rc = kswitch_open(&k, r->ring_pages)) != 0)
		return NULL;
	for (int i = 0; i < 400; i++)
		sleep_ns(50000);
	r->ndrained = kswitch_drain(&k, emit, r);
	/* the kernel reports the loss once the ring has room again */
	sleep_ns(MS);
	kswitch_drain(&k, emit, &again);
	r->lost = k.lost;
	kswitch_close(&k);
	return NULL;
}

/* The events are OU[, KCO/KCI pairs, OU]; -1 if not, else the pairs. */
static long pairs(const struct run *r)
{
	if (r->nev < 4 || strcmp(r->ev[0].mcv, "OU[") || strcmp(r->ev[r->nev - 1].mcv, "OU]"))
		return -1;
	uint64_t start = r->ev[0].clock, prev = 0;
	for (size_t i = 1; i + 1 < r->nev; i++) {
		const char *want = i % 2 ? "KCO" : "KCI";
		if (strcmp(r->ev[i].mcv, want) || r->ev[i].clock < prev || r->ev[i].clock > start)
			return -1;
		prev = r->ev[i].clock;
	}
	if ((r->nev - 2) % 2 || r->ev[r->nev - 1].clock < start)
		return -1;
	return (long)(r->nev - 2) / 2;
}

/* Time out of the CPU within [t0, t1]. */
static uint64_t out_within(const struct run *r, uint64_t t0, uint64_t t1)
{
	uint64_t sum = 0;
	for (size_t i = 1; i + 2 < r->nev; i += 2) {
		uint64_t a = r->ev[i].clock, b = r->ev[i + 1].clock;
		a = a < t0 ? t0 : a;
		b = b > t1 ? t1 : b;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

static void check_run(const struct run *r)
{
	long np = pairs(r);
	CHECK(np > 0, "%s: OU[, KCO/KCI alternating with clocks in order and older than the OU[, OU]", r->what);
	CHECK_INT(r->ndrained, r->nev > 2 ? r->nev - 2 : 0, "%s: drain counts the switches it wrote", r->what);
	for (size_t w = 0; w < r->nwaits; w++) {
		uint64_t len = r->wait1[w] - r->wait0[w], out = out_within(r, r->wait0[w], r->wait1[w]);
		CHECK(len >= r->asked[w] * 9 / 10 && out >= len * 9 / 10,
		      "%s %zu: out of the CPU %.2f ms of the %.2f ms it waited (%.0f ms asked)", r->what, w,
		      (double)out / MS, (double)len / MS, (double)r->asked[w] / MS);
	}
}

static int run_thread(void *(*fn)(void *), struct run *r)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, r) != 0)
		return -1;
	return pthread_join(t, NULL);
}

int main(void)
{
	char why[256];
	struct kswitch k;
	int rc = kswitch_open(&k, 0);
	if (rc != 0) {
		printf("# skip: context switches cannot be recorded here: %s\n", kswitch_strerror(rc, why, sizeof(why)));
		return 0;
	}
	CHECK(k.fd >= 0 && k.ring_size == 32u * (uint64_t)sysconf(_SC_PAGESIZE), "open maps a ring of 32 pages");
	static struct run quiet = { .what = "a drain right after another" };
	kswitch_drain(&k, emit, &quiet);
	quiet.nev = 0;
	size_t n = kswitch_drain(&k, emit, &quiet);
	CHECK(n == 0 ? quiet.nev == 0 : pairs(&quiet) > 0, "%s writes nothing unless it has switches", quiet.what);
	kswitch_close(&k);
	CHECK(k.fd == -1 && kswitch_drain(&k, emit, &quiet) == 0, "a closed recorder drains nothing");
	CHECK_INT(kswitch_open(&k, 3), -EINVAL, "a ring that is not a power of two is refused");
	CHECK(strstr(kswitch_strerror(-EACCES, why, sizeof(why)), "perf_event_paranoid") != NULL,
	      "a permission error names perf_event_paranoid: %s", why);

	static struct run sleep_run = { .what = "sleep 20 ms" }, pipe_run = { .what = "read from a pipe" },
			  mutex_run = { .what = "wait for a mutex" }, over_run = { .what = "a full ring", .ring_pages = 1 };
	CHECK(run_thread(sleeper, &sleep_run) == 0 && sleep_run.rc == 0, "a sleeping thread records");
	check_run(&sleep_run);

	if (pipe(pipefd) != 0)
		return 1;
	pthread_t t;
	pthread_create(&t, NULL, pipe_reader, &pipe_run);
	sleep_ns(30 * MS);
	CHECK(write(pipefd[1], "x", 1) == 1, "the pipe wakes its reader");
	pthread_join(t, NULL);
	check_run(&pipe_run);

	pthread_mutex_lock(&mutex);
	pthread_create(&t, NULL, contender, &mutex_run);
	while (!atomic_load(&contender_ready))
		sleep_ns(MS / 10);
	sleep_ns(30 * MS);
	pthread_mutex_unlock(&mutex);
	pthread_join(t, NULL);
	check_run(&mutex_run);

	CHECK(run_thread(overflow, &over_run) == 0 && over_run.rc == 0, "a one-page ring records");
	CHECK(over_run.lost > 0, "400 sleeps overflow a one-page ring (%llu records lost)", (unsigned long long)over_run.lost);
	CHECK(pairs(&over_run) > 0, "%s still gives OU[, alternating KCO/KCI, OU] (%zu switches)", over_run.what, over_run.ndrained);
	return t_done();
}
