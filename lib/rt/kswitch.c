#include "kswitch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h> /* snprintf, for the one-time reason only */
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The record sizes this reader knows, with sample_type = TIME and
 * sample_id_all: the time is the last u64 of every record. */
#define SWITCH_SIZE (sizeof(struct perf_event_header) + 8)
#define LOST_SIZE (sizeof(struct perf_event_header) + 3 * 8)

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int kswitch_open(struct kswitch *k, unsigned ring_pages)
{
	memset(k, 0, sizeof(*k));
	k->now = mono_ns;
	if (ring_pages == 0)
		ring_pages = KSWITCH_RING_PAGES;
	if (ring_pages & (ring_pages - 1))
		return -EINVAL;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.context_switch = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = 1; /* asks for nothing perf_event_paranoid 2 forbids */
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	long page = sysconf(_SC_PAGESIZE);
	size_t size;
	void *map;
	/* the rings of all threads count against perf_event_mlock_kb and
	 * RLIMIT_MEMLOCK: a smaller one beats none */
	for (;;) {
		size = (size_t)page * (ring_pages + 1u);
		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		if (map != MAP_FAILED || ring_pages == 1 || (errno != EPERM && errno != ENOMEM))
			break;
		ring_pages /= 2;
	}
	if (map == MAP_FAILED) {
		int err = errno;
		close((int)fd);
		k->mmap_failed = 1;
		return -err;
	}
	/* No MADV_DONTFORK: the kernel never copies a perf ring into a forked
	 * child (VM_DONTCOPY), and each madvise write-locks the address space. */
	/* The mapping keeps the event alive: no descriptor held for the whole
	 * run, none for the program to close or reuse under us. */
	close((int)fd);
	const struct perf_event_mmap_page *meta = map;
	k->map = map;
	k->map_size = size;
	/* data_offset and data_size are 0 before Linux 4.1: one page in, the rest */
	k->ring = k->map + (meta->data_offset ? meta->data_offset : (uint64_t)page);
	k->ring_size = meta->data_size ? meta->data_size : (uint64_t)page * ring_pages;
	return 0;
}

/* n bytes of the ring from stream position pos, which may wrap. */
static void ring_copy(const struct kswitch *k, uint64_t pos, void *dst, size_t n)
{
	size_t off = (size_t)(pos & (k->ring_size - 1));
	size_t first = k->ring_size - off < n ? (size_t)(k->ring_size - off) : n;
	memcpy(dst, k->ring + off, first);
	memcpy((uint8_t *)dst + first, k->ring, n - first);
}

static int spill_is_shared(const struct kswitch *k)
{
	return k->shared && k->spill == (uint64_t *)(k->shared + 1);
}

/* The spill is an anonymous mapping of its own (to unmap when left). */
static int spill_is_mapped(const struct kswitch *k)
{
	return k->spill && k->spill != k->first && !spill_is_shared(k);
}

/* Room for n more spill entries: a bigger mapping, copied (no malloc: the
 * collector may run while the program forks). 0, or -1 if out of memory. */
static int spill_room(struct kswitch *k, size_t n)
{
	if (k->nspill + n <= k->spill_cap)
		return 0;
	if (!k->spill && n <= KSWITCH_FIRST_SPILL) {
		k->spill = k->first;
		k->spill_cap = KSWITCH_FIRST_SPILL;
		return 0;
	}
	size_t cap = k->spill_cap > KSWITCH_FIRST_SPILL ? k->spill_cap * 2 : 8192;
	while (cap < k->nspill + n)
		cap *= 2;
	uint64_t *p = mmap(NULL, cap * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, cap * 8, MADV_DONTFORK); /* a forked child does not hold it */
	if (k->nspill)
		memcpy(p, k->spill, k->nspill * 8);
	if (spill_is_shared(k))
		__atomic_store_n(&k->shared->count, 0, __ATOMIC_RELEASE); /* held here only now */
	else if (spill_is_mapped(k))
		munmap(k->spill, k->spill_cap * 8);
	k->spill = p;
	k->spill_cap = cap;
	return 0;
}

/* After a drain (nspill 0): the shared file is the spill again. */
static void spill_back(struct kswitch *k)
{
	if (!k->shared)
		return;
	if (!spill_is_shared(k)) {
		if (spill_is_mapped(k))
			munmap(k->spill, k->spill_cap * 8);
		k->spill = (uint64_t *)(k->shared + 1);
		k->spill_cap = (k->shared_size - sizeof(*k->shared)) / 8;
	}
	__atomic_store_n(&k->shared->count, 0, __ATOMIC_RELEASE);
}

void kswitch_spill_in(struct kswitch *k, void *mem, size_t size)
{
	size_t cap = size > sizeof(*k->shared) ? (size - sizeof(*k->shared)) / 8 : 0;
	if (!k->map || cap < k->nspill) {
		munmap(mem, size);
		return;
	}
	struct kspill_head *h = mem;
	if (!spill_is_shared(k)) { /* else mem maps the same file: the entries are there */
		memcpy(h->magic, KSPILL_MAGIC, sizeof(h->magic));
		if (k->spill)
			memcpy(h + 1, k->spill, k->nspill * 8);
		if (spill_is_mapped(k))
			munmap(k->spill, k->spill_cap * 8);
	}
	if (k->shared)
		munmap(k->shared, k->shared_size);
	k->shared = h;
	k->shared_size = size;
	k->spill = (uint64_t *)(h + 1);
	k->spill_cap = cap;
	__atomic_store_n(&h->count, k->nspill, __ATOMIC_RELEASE);
}

size_t kswitch_pending(const struct kswitch *k)
{
	if (!k->map)
		return 0;
	const struct perf_event_mmap_page *meta = (const struct perf_event_mmap_page *)k->map;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	return (size_t)((head - meta->data_tail) / SWITCH_SIZE);
}

size_t kswitch_collect(struct kswitch *k)
{
	if (!k->map)
		return 0;
	struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)k->map;
	/* acquire: the records before head are complete once head is read */
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, start = tail;
	if (head - tail + 2 * SWITCH_SIZE > k->ring_size)
		k->was_full = 1;
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		ring_copy(k, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head; /* cannot happen with a sane kernel: drop the rest */
			break;
		}
		if (spill_room(k, 1) != 0)
			break; /* kept in the ring for a later try */
		uint64_t rec[4];
		if (h.type == PERF_RECORD_SWITCH && h.size == SWITCH_SIZE) {
			ring_copy(k, tail, rec, SWITCH_SIZE);
			int out = !!(h.misc & PERF_RECORD_MISC_SWITCH_OUT);
			k->spill[k->nspill++] = (rec[1] & ~(KSPILL_OUT | KSPILL_LOST)) | (out ? KSPILL_OUT : 0);
		} else if (h.type == PERF_RECORD_LOST && h.size == LOST_SIZE) {
			ring_copy(k, tail, rec, LOST_SIZE);
			k->spill[k->nspill++] = KSPILL_LOST | (rec[2] & ~(KSPILL_OUT | KSPILL_LOST));
		}
		tail += h.size;
	}
	if (spill_is_shared(k)) /* the entries first, for a reader of the file */
		__atomic_store_n(&k->shared->count, k->nspill, __ATOMIC_RELEASE);
	/* release: the kernel may reuse the space once tail is stored */
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return (size_t)(tail - start);
}

struct drain {
	struct kswitch *k;
	kswitch_emit_fn emit;
	void *ctx;
	uint64_t start; /* clock of the OU[ */
	int opened;
	size_t n;
};

/* Writes KCO (out) or KCI at clock, opening the region first. */
static void put(struct drain *d, int out, uint64_t clock)
{
	if (d->opened && !d->k->in_region)
		return; /* a signal handler closed the region: the rest is dropped */
	if (!d->opened) {
		d->emit(d->ctx, "OU[", d->start);
		d->opened = 1;
		d->k->in_region = 1;
	}
	d->emit(d->ctx, out ? "KCO" : "KCI", clock);
	d->k->out = out;
	d->k->last_out = out ? clock : d->k->last_out;
	d->n++;
}

size_t kswitch_drain(struct kswitch *k, kswitch_emit_fn emit, void *ctx)
{
	if (!k->map)
		return 0;
	if (k->draining) { /* re-entered from a signal handler */
		if (k->in_region) {
			if (k->out)
				emit(ctx, "KCI", k->last_out + 1);
			emit(ctx, "OU]", k->now());
			k->in_region = 0;
			k->out = 0;
		}
		return 0;
	}
	k->draining = 1;
	kswitch_collect(k);
	struct drain d = { k, emit, ctx, k->now(), 0, 0 };
	size_t i;
	for (i = 0; i < k->nspill && (!d.opened || k->in_region); i++) {
		uint64_t e = k->spill[i], clock;
		int to_out;
		if (e & KSPILL_LOST)
			k->lost += KSPILL_VALUE(e);
		if (kspill_switch(e, k->out, k->last_out, &to_out, &clock))
			put(&d, to_out, clock);
	}
	k->nspill = 0;
	spill_back(k);
	/* The ring filled after a switch-out, so its switch-in was lost (the
	 * kernel says so only later): the thread came back before any event
	 * it wrote since, whose clocks are unknown here, so the earliest
	 * possible time is the only safe one. */
	if (k->out)
		put(&d, 0, k->last_out + 1);
	if (d.opened && k->in_region)
		emit(ctx, "OU]", k->now());
	k->in_region = 0;
	k->nswitches += d.n;
	k->draining = 0;
	return d.n;
}

void kswitch_abandon(struct kswitch *k, kswitch_emit_fn emit, void *ctx)
{
	if (!k->draining)
		return;
	kswitch_drain(k, emit, ctx); /* re-entered: closes the region */
	k->nspill = 0;
	spill_back(k);
	k->draining = 0;
}

void kswitch_close(struct kswitch *k)
{
	if (!k->map)
		return;
	munmap(k->map, k->map_size);
	k->map = k->ring = NULL;
	if (spill_is_mapped(k))
		munmap(k->spill, k->spill_cap * 8);
	if (k->shared)
		munmap(k->shared, k->shared_size);
	k->spill = NULL;
	k->shared = NULL;
	k->nspill = k->spill_cap = 0;
}

void kswitch_forget(struct kswitch *k)
{
	k->map = k->ring = NULL;
	k->spill = NULL;
	k->shared = NULL;
	k->nspill = k->spill_cap = 0;
}

/* kernel.perf_event_paranoid, or -100 when it cannot be read. */
static int paranoid(void)
{
	char buf[16];
	int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -100;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -100;
	buf[n] = '\0';
	int v = -100;
	sscanf(buf, "%d", &v);
	return v;
}

const char *kswitch_strerror(const struct kswitch *k, int err, char *buf, size_t n)
{
	int e = err < 0 ? -err : err;
	int p = paranoid();
	if (k->mmap_failed) {
		snprintf(buf, n, "cannot map a perf ring: %s (kernel.perf_event_mlock_kb and `ulimit -l` "
			 "bound the rings of all threads)", strerror(e));
	} else if (e == EACCES || e == EPERM) {
		if (p > 2)
			snprintf(buf, n, "perf_event_open: %s: kernel.perf_event_paranoid is %d, 2 or less "
				 "is needed (or CAP_PERFMON)", strerror(e), p);
		else
			snprintf(buf, n, "perf_event_open: %s: perf events are forbidden here "
				 "(kernel.perf_event_paranoid is %d; a container or seccomp policy may "
				 "block them)", strerror(e), p);
	} else if (e == ENOSYS || e == ENOENT || e == EINVAL || e == EOPNOTSUPP) {
		snprintf(buf, n, "perf_event_open: %s: this kernel cannot record context switches "
			 "with CLOCK_MONOTONIC time stamps (Linux 4.3 or newer is needed)", strerror(e));
	} else {
		snprintf(buf, n, "perf_event_open: %s", strerror(e));
	}
	return buf;
}
