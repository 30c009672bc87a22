/* lib/rt/kswitch.c on this machine: threads that sleep, block on a pipe
 * and wait for a mutex must show out-of-CPU intervals (KCO ... KCI) that
 * cover the time they were blocked, measured with CLOCK_MONOTONIC, written
 * inside one unordered region per drain. Built with the host's (glibc)
 * compiler, like the preload shim. The record parser is also tested on
 * rings written by hand, which needs no perf_event; the rest is skipped
 * where perf_event is forbidden. */
#include <dirent.h>
#include <linux/perf_event.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/wait.h>
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

static struct kswitch *reenter; /* emit drains it again once: a signal in a drain */

static void emit(void *ctx, const char mcv[3], uint64_t clock)
{
	struct run *r = ctx;
	if (reenter && memcmp(mcv, "KCO", 3) == 0) {
		struct kswitch *k = reenter;
		reenter = NULL;
		emit(ctx, mcv, clock);
		k->out = 1; /* as put() leaves it after this KCO */
		k->last_out = clock;
		kswitch_drain(k, emit, ctx);
		return;
	}
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
static atomic_int contender_ready, reader_ready;

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
	r->rc = kswitch_open(&k, r->ring_pages);
	atomic_store(&reader_ready, 1);
	if (r->rc != 0)
		return NULL;
	/* the writer waits 30 ms from the flag on; a loaded machine may
	 * delay this thread after it: half is sure */
	wait_begin(r, 15 * MS);
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
	wait_begin(r, 15 * MS); /* as for the pipe */
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

/* A few switches stay in the recorder's own first spill (no mapping); a
 * backlog beyond it moves to a mapping with the entries it had. */
static void *first_spill(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	if ((r->rc = kswitch_open(&k, 0)) != 0)
		return NULL;
	for (int i = 0; i < 3; i++)
		sleep_ns(MS);
	kswitch_collect(&k);
	CHECK(k.spill == k.first && k.nspill >= 2 && k.nspill <= KSWITCH_FIRST_SPILL,
	      "a few switches are kept without a mapping (%zu)", k.nspill);
	uint64_t first = k.spill[0];
	for (int i = 0; i < KSWITCH_FIRST_SPILL; i++) {
		sleep_ns(50000);
		kswitch_collect(&k);
	}
	CHECK(k.spill != k.first && k.spill_cap > KSWITCH_FIRST_SPILL && k.nspill > KSWITCH_FIRST_SPILL &&
		      k.spill[0] == first,
	      "a backlog of %zu switches moves to a mapping, the first entries kept", k.nspill);
	r->ndrained = kswitch_drain(&k, emit, r);
	kswitch_close(&k);
	CHECK(!k.spill, "close frees it");
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
		/* How long a pipe or mutex wait lasts depends on when the scheduler ran
		 * this thread; what must hold is that it blocked and spent it off the CPU. */
		uint64_t least = r->asked[w] / 4;
		CHECK(len >= least && out >= len * 9 / 10,
		      "%s %zu: out of the CPU %.2f ms of the %.2f ms it waited (%.1f ms at least)", r->what, w,
		      (double)out / MS, (double)len / MS, (double)least / MS);
	}
}

/* A ring of ring_size bytes built by hand, the next record at tail. */
struct fake {
	struct perf_event_mmap_page meta;
	uint8_t ring[64];
};

static void fake_put(struct fake *f, uint64_t *head, const void *rec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->ring[(*head + i) % sizeof(f->ring)] = ((const uint8_t *)rec)[i];
	*head += n;
}

static void fake_switch(struct fake *f, uint64_t *head, int out, uint64_t clock)
{
	struct {
		struct perf_event_header h;
		uint64_t time;
	} r = { { PERF_RECORD_SWITCH, (uint16_t)(out ? PERF_RECORD_MISC_SWITCH_OUT : 0), 16 }, clock };
	fake_put(f, head, &r, sizeof(r));
}

static void fake_lost(struct fake *f, uint64_t *head, uint64_t n)
{
	struct {
		struct perf_event_header h;
		uint64_t id, lost, time;
	} r = { { PERF_RECORD_LOST, 0, 32 }, 1, n, 0 };
	fake_put(f, head, &r, sizeof(r));
}

static uint64_t fake_now(void)
{
	return 1000;
}

/* The events of r as "MCV@clock ..." */
static const char *events_text(const struct run *r, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->nev && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s@%llu", i ? " " : "", r->ev[i].mcv,
					(unsigned long long)r->ev[i].clock);
	return buf;
}

/* The record parser on rings written by hand: wrapping records, a lost
 * batch between a switch-out and its switch-in, a ring that filled. */
static void parser_cases(void)
{
	static struct fake f;
	static struct run r;
	char text[512];
	struct kswitch k = { .map = (uint8_t *)&f, .ring = f.ring, .ring_size = sizeof(f.ring), .now = fake_now };
	uint64_t head = 40; /* the second record wraps around the end */
	f.meta.data_tail = 40;
	fake_switch(&f, &head, 1, 100);
	fake_switch(&f, &head, 0, 200);
	f.meta.data_head = head;
	kswitch_drain(&k, emit, &r);
	CHECK_STR(events_text(&r, text, sizeof(text)), "OU[@1000 KCO@100 KCI@200 OU]@1000",
		  "a record that wraps around the ring end is read whole");
	CHECK_INT(f.meta.data_tail, head, "the tail moves to the head");

	r.nev = 0;
	fake_switch(&f, &head, 1, 300);
	fake_lost(&f, &head, 5);
	f.meta.data_head = head;
	kswitch_drain(&k, emit, &r);
	fake_switch(&f, &head, 0, 700);
	fake_switch(&f, &head, 1, 800);
	f.meta.data_head = head;
	kswitch_drain(&k, emit, &r);
	CHECK_STR(events_text(&r, text, sizeof(text)),
		  "OU[@1000 KCO@300 KCI@301 OU]@1000 OU[@1000 KCO@800 KCI@801 OU]@1000",
		  "a switch-in lost (LOST record, or a ring that ends on a switch-out) comes 1 ns after its "
		  "switch-out; a repeated state is skipped");
	CHECK_INT(k.lost, 5, "lost records are counted");
	r.nev = 0;
	CHECK(kswitch_drain(&k, emit, &r) == 0 && r.nev == 0, "an empty ring writes nothing");

	fake_switch(&f, &head, 0, 900); /* the in of the KCO@800 above, already closed */
	fake_switch(&f, &head, 1, 910);
	fake_switch(&f, &head, 0, 920);
	f.meta.data_head = head;
	reenter = &k;
	kswitch_drain(&k, emit, &r);
	CHECK_STR(events_text(&r, text, sizeof(text)), "OU[@1000 KCO@910 KCI@911 OU]@1000",
		  "a drain interrupted after a KCO by a handler that drains: the handler closes the region");
}

/* Open descriptors of this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int run_thread(void *(*fn)(void *), struct run *r)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, r) != 0)
		return -1;
	return pthread_join(t, NULL);
}

/* The spill in a shared mapping (a kswitch.spill file's, in the shim):
 * count and entries written through, 0 again after a drain; a backlog
 * bigger than it goes to memory, and comes back after the drain. */
static void *shared_spill(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	if ((r->rc = kswitch_open(&k, 0)) != 0)
		return NULL;
	size_t size = sizeof(struct kspill_head) + 6 * 8; /* 6 entries */
	struct kspill_head *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return NULL;
	kswitch_spill_in(&k, h, size);
	const uint64_t *in_file = (const uint64_t *)(h + 1);
	CHECK(memcmp(h->magic, KSPILL_MAGIC, 8) == 0 && k.spill == in_file, "the spill goes to the shared mapping");
	sleep_ns(MS);
	kswitch_collect(&k);
	CHECK(k.nspill >= 2 && h->count == k.nspill && (in_file[0] & KSPILL_OUT) && !(in_file[1] & KSPILL_OUT),
	      "a collection writes the switches and their count there (%llu)", (unsigned long long)h->count);
	kswitch_drain(&k, emit, r);
	CHECK(h->count == 0 && k.nspill == 0, "a drain sets the count back to 0");
	for (int i = 0; i < 6; i++)
		sleep_ns(MS);
	kswitch_collect(&k);
	CHECK(k.nspill >= 12 && k.spill != in_file && h->count == 0,
	      "a backlog bigger than the mapping goes to memory, the count 0 (%zu switches)", k.nspill);
	kswitch_drain(&k, emit, r);
	CHECK(k.spill == in_file && h->count == 0, "after the drain the mapping is the spill again");
	sleep_ns(MS);
	kswitch_collect(&k);
	CHECK(k.nspill >= 2 && h->count == k.nspill, "and takes the next switches");
	kswitch_close(&k);
	CHECK(!k.shared && !k.spill, "close unmaps it");
	return NULL;
}

/* A bigger mapping of the same file replaces the first: the entries are
 * already there. */
static void *regrown_spill(void *arg)
{
	struct run *r = arg;
	struct kswitch k;
	int fd = memfd_create("kswitch.spill", 0);
	if (fd < 0 || ftruncate(fd, 4096) != 0 || (r->rc = kswitch_open(&k, 0)) != 0)
		return NULL;
	size_t small = sizeof(struct kspill_head) + 6 * 8;
	void *m = mmap(NULL, small, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	kswitch_spill_in(&k, m, small);
	sleep_ns(MS);
	kswitch_collect(&k);
	size_t n = k.nspill;
	uint64_t first = k.spill[0];
	struct kspill_head *big = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (big == MAP_FAILED)
		return NULL;
	kswitch_spill_in(&k, big, 4096);
	CHECK(k.shared == big && k.spill == (uint64_t *)(big + 1) && k.spill_cap == (4096 - sizeof(*big)) / 8,
	      "a bigger mapping of the same file becomes the spill");
	CHECK(n >= 2 && k.nspill == n && big->count == n && k.spill[0] == first, "with the entries it had (%zu)", n);
	kswitch_close(&k);
	close(fd);
	return NULL;
}

/* Whether a forked child has a mapping starting at p (/proc/self/maps). */
static int mapped_in_child(const void *p)
{
	pid_t pid = fork();
	if (pid == 0) {
		char want[32], line[512];
		snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
		FILE *f = fopen("/proc/self/maps", "r");
		int found = 0;
		while (f && fgets(line, sizeof(line), f))
			found |= strncmp(line, want, strlen(want)) == 0;
		_exit(found);
	}
	int st = 0;
	return pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

int main(void)
{
	char why[256];
	parser_cases();
	struct kswitch k;
	int fds = count_fds();
	int rc = kswitch_open(&k, 0);
	if (rc != 0) {
		printf("# skip: context switches cannot be recorded here: %s\n", kswitch_strerror(&k, rc, why, sizeof(why)));
		return t_done();
	}
	CHECK(k.map && k.ring_size == (uint64_t)KSWITCH_RING_PAGES * (uint64_t)sysconf(_SC_PAGESIZE), "open maps a ring of %d pages", KSWITCH_RING_PAGES);
	CHECK_INT(count_fds(), fds, "no descriptor stays open (the mapping holds the event)");
	CHECK(!mapped_in_child(k.map), "a forked child does not hold the ring");
	static struct run quiet = { .what = "a drain right after another" };
	kswitch_drain(&k, emit, &quiet);
	quiet.nev = 0;
	size_t n = kswitch_drain(&k, emit, &quiet);
	CHECK(n == 0 ? quiet.nev == 0 : pairs(&quiet) > 0, "%s writes nothing unless it has switches", quiet.what);
	kswitch_close(&k);
	CHECK(!k.map && kswitch_drain(&k, emit, &quiet) == 0, "a closed recorder drains nothing");
	CHECK_INT(kswitch_open(&k, 3), -EINVAL, "a ring that is not a power of two is refused");
	CHECK(strstr(kswitch_strerror(&k, -EACCES, why, sizeof(why)), "perf_event_paranoid") != NULL,
	      "a permission error names perf_event_paranoid: %s", why);
	k.mmap_failed = 1;
	CHECK(strstr(kswitch_strerror(&k, -EPERM, why, sizeof(why)), "ulimit -l") != NULL,
	      "a ring that cannot be mapped names the locked-memory limits: %s", why);

	static struct run sleep_run = { .what = "sleep 20 ms" }, pipe_run = { .what = "read from a pipe" },
			  mutex_run = { .what = "wait for a mutex" }, over_run = { .what = "a full ring", .ring_pages = 1 };
	CHECK(run_thread(sleeper, &sleep_run) == 0 && sleep_run.rc == 0, "a sleeping thread records");
	check_run(&sleep_run);

	if (pipe(pipefd) != 0)
		return 1;
	pthread_t t;
	pthread_create(&t, NULL, pipe_reader, &pipe_run);
	while (!atomic_load(&reader_ready))
		sleep_ns(MS / 10);
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

	static struct run shared_run = { .what = "a spill in a shared mapping" };
	CHECK(run_thread(shared_spill, &shared_run) == 0 && shared_run.rc == 0, "%s", shared_run.what);
	static struct run regrown_run = { .what = "a spill mapped again, bigger" };
	CHECK(run_thread(regrown_spill, &regrown_run) == 0 && regrown_run.rc == 0, "%s", regrown_run.what);

	static struct run first_run = { .what = "a spill that outgrows its first home" };
	CHECK(run_thread(first_spill, &first_run) == 0 && first_run.rc == 0, "%s", first_run.what);
	CHECK(pairs(&first_run) > KSWITCH_FIRST_SPILL / 2, "%s drains OU[, alternating KCO/KCI, OU] (%zu switches)",
	      first_run.what, first_run.ndrained);

	CHECK(run_thread(overflow, &over_run) == 0 && over_run.rc == 0, "a one-page ring records");
	CHECK(over_run.lost > 0, "400 sleeps overflow a one-page ring (%llu records lost)", (unsigned long long)over_run.lost);
	CHECK(pairs(&over_run) > 0, "%s still gives OU[, alternating KCO/KCI, OU] (%zu switches)", over_run.what, over_run.ndrained);
	return t_done();
}
