/* ovni_clock_now: CLOCK_MONOTONIC nanoseconds. The vDSO call costs more
 * than the whole emit, so when the kernel itself keeps time with the TSC,
 * the clock is the TSC scaled to nanoseconds: each thread re-anchors on a
 * real clock_gettime reading every 100 us (the error stays within the
 * rate error times 100 us, and the rate is refined against a process-wide base
 * point as time goes on), and a thread's clock never goes back.
 * The TSC read of ovni_clock_now is not ordered (an lfence or rdtscp
 * doubles the cost of an emit): it may be taken while an earlier load still
 * waits for a cache line, so an event that follows another thread's by less
 * than a cache miss (~100 ns) may get the earlier clock. The events whose
 * order across threads matters (a CPU changing hands) use
 * rt_clock_exact. OVNI_NO_TSC=1 keeps clock_gettime for every reading. */
#include "rt/rt.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

struct rt_clock rt_clock;

typedef int (*gettime_fn)(clockid_t, struct timespec *);

/* The clock read of the fallback: the vDSO's own function once found, which
 * spares the PLT and libc's wrapper (a few ns of each of its ~30). */
static gettime_fn gettime = clock_gettime;

#if defined(__x86_64__)
#define VDSO_GETTIME "__vdso_clock_gettime", "LINUX_2.6"
#elif defined(__aarch64__)
#define VDSO_GETTIME "__kernel_clock_gettime", "LINUX_2.6.39"
#endif

/* The vDSO is in the link map already (RTLD_NOLOAD: nothing is loaded). */
static void find_vdso_gettime(void)
{
#ifdef VDSO_GETTIME
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return;
	void *f = dlvsym(h, VDSO_GETTIME);
	gettime_fn fn;
	memcpy(&fn, &f, sizeof(fn));
	if (f) /* threads may be reading the clock already */
		__atomic_store_n(&gettime, fn, __ATOMIC_RELAXED);
	dlclose(h);
#endif
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if HAVE_TSC
static int kernel_uses_tsc(void)
{
	char buf[32] = { 0 };
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 3 && strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

static void set_rate(uint64_t dns, uint64_t dtsc)
{
	if (dtsc == 0 || dns == 0)
		return;
	double r = (double)dns / (double)dtsc;
	__atomic_store_n(&rt_clock.mult, (uint64_t)(r * 4294967296.0), __ATOMIC_RELAXED);
	__atomic_store_n(&rt_clock.window, (uint64_t)(1e5 / r), __ATOMIC_RELAXED);
}
#endif

#if HAVE_TSC
/* The narrowest bracket [a, b] around a clock_gettime seen so far: a pair
 * much wider than it has an anchor error of half its width, which alone
 * swaps events of two threads a hundred nanoseconds apart. */
static uint64_t tight = 1000;

/* A CLOCK_MONOTONIC reading and the TSC at the same instant: the vDSO's own
 * (ordered) TSC read lies between a and b; the narrowest of a few tries is
 * kept. -1 when it is still wider than 4 times the narrowest ever seen. */
static int pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX, t = __atomic_load_n(&tight, __ATOMIC_RELAXED);
	for (int i = 0; i < 8 && best > t * 2; i++) {
		_mm_lfence();
		uint64_t a = __rdtsc();
		_mm_lfence();
		uint64_t n = mono_ns();
		_mm_lfence();
		uint64_t b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*ns = n;
			*tsc = a + (b - a) / 2;
		}
	}
	if (best < t)
		__atomic_store_n(&tight, best, __ATOMIC_RELAXED);
	return best <= t * 4 ? 0 : -1;
}
#endif

#if HAVE_TSC
/* The rate and base pair another process of the recording measured, if
 * this process's clock agrees with them (a time namespace would not):
 * 1 if taken. The TSC and CLOCK_MONOTONIC are the machine's. */
static int take_shared_rate(void)
{
	struct rt_clock c;
	uint64_t ns, tsc;
	if (!rt_record_clock_get(&c) || pair(&ns, &tsc) != 0 || tsc < c.base_tsc)
		return 0;
	uint64_t d = tsc - c.base_tsc;
	/* the scaled difference, in two halves: d * mult overflows 64 bits */
	uint64_t pred = c.base_ns + (d >> 32) * c.mult + (((d & 0xffffffffu) * c.mult) >> 32);
	uint64_t off = pred > ns ? pred - ns : ns - pred;
	if (off > 1000000 + (ns - c.base_ns) / 1000) /* a time namespace's offset, not the rate's error */
		return 0;
	rt_clock.base_ns = c.base_ns;
	rt_clock.base_tsc = c.base_tsc;
	set_rate(ns - c.base_ns, tsc - c.base_tsc);
	return 1;
}
#endif

/* Called by ovni_proc_init: picks the clock and measures the TSC rate over
 * about a millisecond, or takes the one another process of the recording
 * measured. */
void rt_clock_init(void)
{
	find_vdso_gettime();
#if HAVE_TSC
	const char *no = getenv("OVNI_NO_TSC");
	if ((no && *no && strcmp(no, "0") != 0) || !kernel_uses_tsc())
		return;
	uint64_t ns, tsc;
	for (int i = 0; i < 16; i++) /* learns how narrow a pair can be */
		pair(&ns, &tsc);
	if (take_shared_rate()) {
		__atomic_store_n(&rt_clock.use_tsc, 1, __ATOMIC_RELEASE);
		return;
	}
	int tries = 0;
	while (pair(&rt_clock.base_ns, &rt_clock.base_tsc) != 0)
		if (++tries > 1000)
			return;
	do {
		if (pair(&ns, &tsc) != 0 && ++tries > 100000)
			return;
	} while (ns - rt_clock.base_ns < 1000000);
	set_rate(ns - rt_clock.base_ns, tsc - rt_clock.base_tsc);
	rt_record_clock_put(&rt_clock);
	__atomic_store_n(&rt_clock.use_tsc, 1, __ATOMIC_RELEASE);
#endif
}

/* Never below the thread's last reading. */
static uint64_t after_last(struct rt_thread *t, uint64_t ns)
{
	if (ns < t->clk_last)
		ns = t->clk_last;
	t->clk_last = ns;
	return ns;
}

/* Everything ovni_clock_now does not do inline: another clock, or a new
 * anchor for this thread. */
uint64_t rt_clock_slow(struct rt_thread *t)
{
	if (atomic_load(&rt_proc.state) != RT_READY || !rt_clock.use_tsc) {
		struct timespec ts;
		clock_gettime(rt_proc.clockid, &ts);
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
#if HAVE_TSC
	uint64_t ns, tsc;
	if (pair(&ns, &tsc) == 0) /* a wide pair still anchors, but not the rate */
		set_rate(ns - rt_clock.base_ns, tsc - rt_clock.base_tsc);
	t->clk_tsc = tsc;
	t->clk_ns = ns;
	return after_last(t, ns);
#else
	(void)t;
	return 0;
#endif
}

/* CLOCK_MONOTONIC itself (never below the thread's last reading): for the
 * events whose order across threads matters (a CPU changing hands). */
uint64_t rt_clock_exact(struct rt_thread *t)
{
	if (atomic_load(&rt_proc.state) != RT_READY)
		return rt_clock_slow(t);
	return after_last(t, mono_ns());
}

/* Returns once CLOCK_MONOTONIC is past ns: a CPU given back at an event
 * whose scaled clock ran ahead is not taken by another thread "before". */
void rt_clock_wait_past(uint64_t ns)
{
	if (!rt_clock.use_tsc)
		return;
	for (int i = 0; i < 100000 && mono_ns() <= ns; i++)
		;
}

RT_API uint64_t ovni_clock_now(void)
{
#if HAVE_TSC
	if (RT_LIKELY(rt_clock.use_tsc)) {
		struct rt_thread *t = &rt_self;
		uint64_t anchor = t->clk_tsc;
		uint64_t d = __rdtsc() - anchor;
		if (RT_UNLIKELY(d >= rt_clock.window))
			return rt_clock_slow(t);
		uint64_t ns = t->clk_ns + ((d * rt_clock.mult) >> 32);
		/* a signal handler's reading moved the anchor between the two
		 * loads: this pair is of two anchors (up to 100 us off) */
		atomic_signal_fence(memory_order_seq_cst);
		if (RT_UNLIKELY(t->clk_tsc != anchor))
			return rt_clock_slow(t);
		if (RT_UNLIKELY(ns < t->clk_last))
			ns = t->clk_last;
		t->clk_last = ns;
		return ns;
	}
#endif
	/* Without the TSC: the clock itself, and nothing else (no TSC read,
	 * no call of ours in between). */
	struct timespec ts;
	__atomic_load_n(&gettime, __ATOMIC_RELAXED)(rt_proc.clockid, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
