/* Record mode with --kernel (OVNI_RECORD_KERNEL=1): the context switches of
 * every traced thread, from perf_event (kswitch.c). The recorder opens when
 * the thread starts. A collector thread per process empties every ring
 * into its thread's spill often enough that no ring fills (every 1 to 32 ms,
 * faster while rings fill faster); the thread writes its switches into its
 * stream when it creates a thread, changes its affinity, returns from a
 * blocking call (block.c), calls ovni_flush, execs and ends; the thread
 * then requires the kernel model. Where perf_event is forbidden, one notice
 * per run and recording goes on without. */
#include "rt/kernel.h"
#include "base/event.h"
#include "trace/versions.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "rt/kswitch.h"
#include "trace/kspill.h"

/* kswitch.spill at first: 1022 switches; it doubles as needed. */
#define SPILL_FILE_SIZE (8u << 10)

static __thread struct kswitch ks __attribute__((tls_model("initial-exec")));

/* The recorders of this process, for the collector. A slot is owned by
 * whoever sets busy (the collector, or the thread to drain or close it);
 * taken says a thread has it, so that a new one finds a free slot without
 * holding each. */
#define NSLOTS 4096
static struct slot {
	_Atomic int busy;
	_Atomic int taken;
	struct kswitch *k; /* NULL: free */
	const struct rt_thread *t; /* its thread: where its kswitch.spill goes */
	int no_file; /* the file could not be made: not tried again */
} slots[NSLOTS];
static _Atomic int nslots; /* slots ever used (a high-water mark) */
static _Atomic pid_t slots_pid; /* the process the slots belong to (not a forked parent) */
static struct rt_helper collector; /* sleeps on quit between collections */
static __thread int my_slot = -1;
static __thread int in_drain; /* the slot is held by this thread (a handler came in) */

/* A drain holds its thread's emit guard: a signal handler's events wait
 * until the region is whole. last: the clock of the last event put. */
struct put_ctx {
	struct rt_thread *t;
	uint64_t last;
};

static void put(void *ctx, const char mcv[3], uint64_t clock)
{
	struct put_ctx *c = ctx;
	uint8_t ev[EV_HEADER_SIZE];
	rt_stream_put_held(c->t, ev, ev_encode(ev, mcv, clock, NULL, 0));
	c->last = clock;
}

static int wanted(void)
{
	const char *v = rt_env("OVNI_RECORD_KERNEL");
	return v && strcmp(v, "1") == 0;
}

/* slot.busy: who holds it (a thread's own drain is told apart: a long jump
 * out of a signal handler may leave that drain, the slot held), and
 * whether a thread sleeps until it is let go. */
#define HELD 1
#define HELD_BY_DRAIN 2
#define WAITED 4
#define HOLDER(busy) ((busy) & ~WAITED)

/* The collector may hold a slot a while (it makes the spill file): past a
 * short spin, the thread sleeps instead of taking turns with it. */
static void hold(int i, int who)
{
	_Atomic int *b = &slots[i].busy;
	for (long spins = 0;; spins++) {
		int v = 0;
		if (atomic_compare_exchange_weak(b, &v, who))
			return;
		if (spins < 100 || v == 0)
			continue;
		if ((v & WAITED) || atomic_compare_exchange_weak(b, &v, v | WAITED))
			syscall(SYS_futex, b, FUTEX_WAIT_PRIVATE, v | WAITED, NULL, NULL, 0);
	}
}

static void let_go(int i)
{
	if (atomic_exchange(&slots[i].busy, 0) & WAITED)
		syscall(SYS_futex, &slots[i].busy, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* The spill of k in a file beside t's stream, so that the switches
 * collected and not yet drained outlive a SIGKILL (the recorder's salvage
 * writes them). Made by the collector the first time it finds switches (a
 * short thread that has none by then costs no file), then grown before a
 * collection could overflow it. 0, or -1 when the file cannot be made or
 * grown (the spill then stays in memory). */
static int spill_file(struct kswitch *k, const struct rt_thread *t)
{
	size_t need = k->nspill + 2 * kswitch_pending(k) + 512;
	int has = k->shared != NULL;
	if (has && k->spill == (uint64_t *)(k->shared + 1) && need <= k->spill_cap)
		return 0;
	size_t size = has ? k->shared_size : SPILL_FILE_SIZE;
	while ((size - sizeof(struct kspill_head)) / 8 < need)
		size *= 2;
	const char *path = t->where->spill;
	int fd = path[0] ? open(path, O_RDWR | O_CREAT | (has ? 0 : O_TRUNC) | O_CLOEXEC, 0644) : -1;
	if (fd < 0)
		return -1;
	rt_fix_mode(fd, NULL, 0644);
	void *m = MAP_FAILED;
	if (size == (has ? k->shared_size : 0) || rt_write_zeros(fd, has ? k->shared_size : 0, size) == 0)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	madvise(m, size, MADV_DONTFORK); /* a forked child does not hold it */
	kswitch_spill_in(k, m, size);
	return 0;
}

static void *collector_main(void *arg)
{
	(void)arg;
	rt_fds_apart();
	long ms = 8;
	for (;;) {
		struct timespec nap = { ms / 1000, (ms % 1000) * 1000000 };
		syscall(SYS_futex, &collector.quit, FUTEX_WAIT_PRIVATE, 0, &nap, NULL, 0);
		if (atomic_load(&collector.quit))
			return NULL;
		rt_mapper_start_wanted();
		uint64_t fullest = 0, ring = 1;
		int n = atomic_load(&nslots);
		for (int i = 0; i < n; i++) {
			int free_slot = 0;
			if (!atomic_compare_exchange_strong(&slots[i].busy, &free_slot, HELD))
				continue; /* its thread drains it right now */
			struct kswitch *k = slots[i].k;
			if (k) {
				const struct rt_thread *t = slots[i].t;
				if (k->shared && !slots[i].no_file && spill_file(k, t) != 0)
					slots[i].no_file = 1; /* room for this collection */
				size_t got = kswitch_collect(k);
				if (k->nspill && !k->shared && t && !slots[i].no_file && spill_file(k, t) != 0)
					slots[i].no_file = 1;
				if (got * ring > fullest * k->ring_size) {
					fullest = got;
					ring = k->ring_size;
				}
			}
			let_go(i);
		}
		/* a ring a quarter full: come twice as often; nearly empty: half */
		if (fullest * 4 > ring && ms > 1)
			ms /= 2;
		else if (fullest * 32 < ring && ms < 32)
			ms *= 2;
	}
	return NULL;
}

/* This process's collector, started once (again in a forked child); if
 * it cannot run, drains still empty the rings, less often. */
void rt_kernel_collector_start(void)
{
	rt_helper_start(&collector, collector_main, NULL);
}

int rt_kernel_collector_running(void)
{
	return rt_helper_running(&collector);
}

static void collector_wake(void)
{
	syscall(SYS_futex, &collector.quit, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void rt_kernel_collector_poke(void)
{
	collector_wake();
}

void rt_kernel_collector_stop(void)
{
	rt_helper_stop(&collector, collector_wake);
}

/* A slot for this thread's recorder; -1 if all are taken (then only its
 * own drains empty its ring). */
static int take_slot(const struct rt_thread *t)
{
	pid_t me = getpid(), owner = atomic_load(&slots_pid);
	if (owner != me && atomic_compare_exchange_strong(&slots_pid, &owner, me)) {
		memset(slots, 0, sizeof(slots)); /* a forked child: the parent's threads are not here */
		atomic_store(&nslots, 0);
	}
	for (int i = 0; i < NSLOTS; i++) {
		int no = 0;
		if (atomic_load(&slots[i].taken) || !atomic_compare_exchange_strong(&slots[i].taken, &no, 1))
			continue;
		hold(i, HELD); /* the collector may still look at it */
		slots[i].k = &ks;
		slots[i].t = t;
		slots[i].no_file = 0;
		let_go(i);
		int n = atomic_load(&nslots);
		while (n <= i && !atomic_compare_exchange_weak(&nslots, &n, i + 1))
			;
		return i;
	}
	return -1;
}

void rt_kernel_begin(struct rt_thread *t, struct rt_state *state)
{
	if (ks.map) /* a forked child's copy of its parent thread's recorder */
		kswitch_forget(&ks);
	my_slot = -1;
	if (!wanted())
		return;
	/* OVNI_RECORD_TEST_KERNEL_DENY: the tests' way to be refused, as root;
	 * OVNI_RECORD_TEST_KERNEL_RING=PAGES: a ring that small and no collector,
	 * their way to make the kernel drop records */
	const char *small = getenv("OVNI_RECORD_TEST_KERNEL_RING");
	int rc = getenv("OVNI_RECORD_TEST_KERNEL_DENY") ? -EACCES : kswitch_open(&ks, small ? (unsigned)atoi(small) : 0);
	if (rc != 0) {
		uint32_t first = 0;
		if (atomic_compare_exchange_strong(&state->kernel_refused, &first, 1)) {
			char why[512];
			rt_warn("ovni record: kernel context switches are not recorded: %s; recording goes on "
				"without them (--no-kernel hides this notice)\n",
				kswitch_strerror(&ks, rc, why, sizeof(why)));
		}
		return;
	}
	ks.now = ovni_clock_now; /* the TSC-based clock of the thread's events */
	if (!small) {
		my_slot = take_slot(t);
		rt_kernel_collector_start();
	}
	atomic_fetch_add(&state->kernel_threads, 1);
	rt_require(t, "kernel", MODEL_KERNEL_VERSION); /* rendered and written by the caller */
}

/* Drains with the slot and the emit guard held. A signal handler that
 * comes in during a drain or an emit of its thread leaves the switches to
 * the next drain (its thread may hold the slot). */
static void drain_held(struct rt_thread *t)
{
	if (in_drain || t->busy)
		return;
	in_drain = 1;
	atomic_signal_fence(memory_order_seq_cst);
	rt_stream_hold(t);
	if (my_slot >= 0)
		hold(my_slot, HELD_BY_DRAIN);
	struct put_ctx c = { t, 0 };
	kswitch_drain(&ks, put, &c);
	if (my_slot >= 0)
		let_go(my_slot);
	rt_guard_give(t, c.last);
	atomic_signal_fence(memory_order_seq_cst);
	in_drain = 0;
}

int rt_kernel_in_drain(void)
{
	return in_drain;
}

void rt_kernel_jumped(struct rt_thread *t)
{
	if (!ks.map || !in_drain)
		return;
	struct put_ctx c = { t, 0 };
	kswitch_abandon(&ks, put, &c);
	if (my_slot >= 0 && HOLDER(atomic_load(&slots[my_slot].busy)) == HELD_BY_DRAIN)
		let_go(my_slot);
	in_drain = 0;
}

void rt_kernel_drain(struct rt_thread *t)
{
	if (ks.map)
		drain_held(t);
}

void rt_kernel_end(struct rt_thread *t)
{
	if (!ks.map)
		return;
	int interrupted = in_drain; /* exit() from a handler that came in during a drain */
	if (interrupted && ks.draining) {
		/* that drain never goes on: its region is closed here, in its place */
		struct put_ctx c = { t, 0 };
		kswitch_drain(&ks, put, &c);
	}
	if (t->busy && !interrupted)
		t->busy = 0; /* exit() from a handler that came in during an emit, which never goes on */
	drain_held(t);
	if (ks.was_full && !interrupted) {
		/* the kernel says how many it dropped with its next record: one more switch */
		syscall(SYS_nanosleep, &(struct timespec){ 0, 1 }, NULL);
		drain_held(t);
	}
	if (ks.lost) { /* per thread in its metadata: ovni record and ovni dump say it */
		struct json *n = json_new_number((double)ks.lost);
		if (n && json_dotset(t->meta, "record.kernel_lost", n) == 0)
			rt_meta_changed(t);
	}
	if (interrupted) /* the interrupted drain still reads the ring */
		return;
	if (my_slot >= 0) { /* out of the collector's sight before it goes */
		hold(my_slot, HELD);
		slots[my_slot].k = NULL;
		slots[my_slot].t = NULL;
		let_go(my_slot);
		atomic_store(&slots[my_slot].taken, 0);
	}
	int had_file = ks.shared != NULL;
	kswitch_close(&ks);
	my_slot = -1;
	if (had_file && t->where->spill[0])
		unlink(t->where->spill); /* drained: nothing left in it */
}
