/* The mapper: one thread per process that prepares the next window of each
 * stream (allocates its pages and maps them) while the thread fills the
 * current one, and unmaps the window it left. Half of a thread's cost per
 * event was these system calls; now the thread only swaps pointers. A
 * thread whose next window is not ready waits for it (or maps it itself if
 * the mapper cannot run). Lock-free: requests go on a Treiber stack, the
 * mapper sleeps on a futex. */
#include "rt/rt.h"
#include "rt/kernel.h"
#include "base/file.h"
#include "trace/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* M_WAITING: queued, and its thread sleeps on the state (futex). */
enum { M_IDLE, M_QUEUED, M_WAITING, M_READY, M_FAILED };

struct rt_mreq {
	struct rt_mreq *next;
	_Atomic int state;
	struct rt_file file; /* a copy: the thread may end before the mapper serves it */
	uint64_t off;
	size_t size;
	void *addr; /* the prepared window when READY */
	void *drop; /* a window to unmap first */
	size_t drop_size;
	/* A write instead (a staged stream, stage.c): size bytes at src go to
	 * off, then *done is set free; err is its errno. */
	int write;
	int err;
	const void *src;
	_Atomic uint32_t *done;
};

static _Atomic(struct rt_mreq *) queue;
static _Atomic uint32_t queue_seq;
static struct rt_helper mapper; /* quit: end once the queue is empty */

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The state of a request as a futex word. */
static uint32_t *state_word(struct rt_mreq *r)
{
	return (uint32_t *)&r->state;
}

/* On tmpfs, zeros are written rather than fallocated: a fallocated page is
 * not up to date until a fault zeroes it, so each one costs a fault of its
 * own; written pages are mapped by the kernel's fault-around, many per
 * fault. The source is never written (bss, not rodata): it stays the zero
 * page, always in cache. */
static char zeros[64 << 10];
#define ZERO_IOVS 128
/* Writes zeros over [from, end) (beyond the end of the file: nothing
 * written is overwritten). ENOSPC shows here, not as a SIGBUS later. */
int rt_write_zeros(int fd, uint64_t from, uint64_t end)
{
	struct iovec iov[ZERO_IOVS];
	while (from < end) {
		int n = 0;
		for (uint64_t left = end - from; left && n < ZERO_IOVS; n++) {
			iov[n].iov_base = zeros;
			iov[n].iov_len = left < sizeof(zeros) ? (size_t)left : sizeof(zeros);
			left -= iov[n].iov_len;
		}
		ssize_t w = pwritev(fd, iov, n, (off_t)from);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		from += (uint64_t)w;
	}
	return 0;
}

/* On a disk file system the blocks are reserved instead: written zeros
 * would be dirty pages, a third of the process's CPU on ext4, and written
 * out twice when writeback came before the thread. Either way ENOSPC
 * shows here, not as a SIGBUS later. 1: the file system cannot (then the
 * zeros are written). */
static int reserve(int fd, uint64_t from, uint64_t end)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) != 0 || sf.f_type == STAGE_TMPFS_MAGIC)
		return 1;
	while (fallocate(fd, 0, (off_t)from, (off_t)(end - from)) != 0) {
		if (errno == EINTR)
			continue;
		return errno == EOPNOTSUPP || errno == ENOSYS ? 1 : -1;
	}
	return 0;
}

int rt_file_open(const struct rt_file *f, struct stat *st)
{
	int fd = open(f->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || (uint64_t)st->st_dev != f->dev || (uint64_t)st->st_ino != f->ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* Grows the file (open as fd, have bytes long) to cover the window and
 * maps it with its pages present and writable. Only the part beyond the
 * file's end is grown: the window overlaps the one still being filled by a
 * page. The mapping outlives the descriptor. */
void *rt_map_fd(int fd, uint64_t have, uint64_t off, size_t size)
{
	int r = 1; /* 0: blocks reserved, not in the page cache yet */
	if (have < off + size) {
		uint64_t from = have > off ? have : off;
		r = reserve(fd, from, off + size);
		if (r < 0 || (r > 0 && rt_write_zeros(fd, from, off + size) != 0))
			return NULL;
	}
	/* fallocated pages are not in the page cache: mapping them for
	 * reading first would be a second pass */
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | (r ? MAP_POPULATE : 0), fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	/* On a disk file system the pages come mapped read-only (the kernel
	 * tracks which get dirty): each one's first write would fault in the
	 * thread. This takes those faults here, contents unchanged (Linux
	 * 5.14; older kernels refuse it and the thread faults as before). */
	madvise(p, size, MADV_POPULATE_WRITE);
	/* A forked child must not write into its parent's stream. */
	madvise(p, size, MADV_DONTFORK);
	return p;
}

/* rt_map_fd of f, opened here and closed before returning. */
void *rt_map_pages(const struct rt_file *f, uint64_t off, size_t size)
{
	struct stat st;
	int fd = rt_file_open(f, &st);
	if (fd < 0)
		return NULL;
	void *p = rt_map_fd(fd, (uint64_t)st.st_size, off, size);
	int err = errno;
	close(fd);
	errno = err;
	return p;
}

static int write_out(const struct rt_file *f, const void *src, size_t size, uint64_t off, int last)
{
	struct stat st;
	int fd = rt_file_open(f, &st);
	if (fd < 0)
		return errno;
	int err = file_pwrite_all(fd, src, size, off) != 0 ? errno : 0;
	/* the part that fitted would leave no room for the final metadata */
	if (err == ENOSPC || err == EDQUOT || err == EFBIG)
		(void)!ftruncate(fd, (off_t)off);
	else if (!err && last && (uint64_t)st.st_size > off + size && ftruncate(fd, (off_t)(off + size)) != 0)
		err = errno;
	close(fd);
	return err;
}

int rt_write_out(const struct rt_file *f, const void *src, size_t size, uint64_t off)
{
	return write_out(f, src, size, off, 0);
}

int rt_write_last(const struct rt_file *f, const void *src, size_t size, uint64_t off)
{
	return write_out(f, src, size, off, 1);
}

static void serve(struct rt_mreq *r)
{
	if (r->write) {
		r->err = rt_write_out(&r->file, r->src, r->size, r->off);
		if (!r->err)
			atomic_store(r->done, STAGE_FREE);
		if (atomic_exchange_explicit(&r->state, r->err ? M_FAILED : M_READY, memory_order_acq_rel) ==
		    M_WAITING)
			syscall(SYS_futex, state_word(r), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		return;
	}
	if (r->drop)
		munmap(r->drop, r->drop_size);
	r->drop = NULL;
	r->addr = rt_map_pages(&r->file, r->off, r->size);
	if (atomic_exchange_explicit(&r->state, r->addr ? M_READY : M_FAILED, memory_order_acq_rel) == M_WAITING)
		syscall(SYS_futex, state_word(r), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *mapper_main(void *arg)
{
	(void)arg;
	rt_fds_apart();
	for (;;) {
		uint32_t seen = atomic_load(&queue_seq);
		struct rt_mreq *r = atomic_exchange(&queue, NULL);
		if (!r) {
			if (atomic_load(&mapper.quit))
				return NULL;
			futex_wait(&queue_seq, seen);
			continue;
		}
		while (r) {
			struct rt_mreq *next = r->next;
			serve(r);
			r = next;
		}
	}
	return NULL;
}

/* The requests of the parent, in a forked child. */
static void forget_queue(void)
{
	atomic_store(&queue, NULL);
}

/* Starts this process's mapper unless it runs (again in a forked child). */
void rt_mapper_start(void)
{
	rt_helper_start(&mapper, mapper_main, forget_queue);
}

int rt_mapper_running(void)
{
	return rt_helper_running(&mapper);
}

static void mapper_wake(void)
{
	atomic_fetch_add(&queue_seq, 1);
	futex_wake(&queue_seq);
}

void rt_mapper_stop(void)
{
	if (!rt_mapper_running())
		return;
	rt_helper_stop(&mapper, mapper_wake);
	/* a request queued as the mapper quit is served here, not left waiting */
	for (struct rt_mreq *r = atomic_exchange(&queue, NULL), *next; r; r = next) {
		next = r->next;
		serve(r);
	}
}

/* A switch found no mapper: the collector's thread starts it (made at
 * every process's start, it cost 600 short-lived processes 13% more CPU,
 * and a switch may be in a signal handler, where no thread can be made). */
static _Atomic int start_wanted;

void rt_mapper_prepare(struct rt_thread *t)
{
	if (!t->mreq)
		t->mreq = calloc(1, sizeof(*t->mreq));
	if (!rt_kernel_collector_running())
		rt_mapper_start(); /* nobody to start it later */
}

void rt_mapper_start_wanted(void)
{
	if (atomic_exchange(&start_wanted, 0))
		rt_mapper_start();
}

/* Hands r to the mapper. */
static void enqueue(struct rt_mreq *r)
{
	atomic_store_explicit(&r->state, M_QUEUED, memory_order_relaxed);
	struct rt_mreq *head = atomic_load(&queue);
	do
		r->next = head;
	while (!atomic_compare_exchange_weak(&queue, &head, r));
	atomic_fetch_add(&queue_seq, 1);
	futex_wake(&queue_seq);
}

/* t's request when the mapper runs; else NULL, and the collector is
 * asked to start it. */
static struct rt_mreq *to_mapper(struct rt_thread *t)
{
	struct rt_mreq *r = t->mreq;
	if (r && rt_mapper_running())
		return r;
	if (r && !atomic_exchange(&start_wanted, 1))
		rt_kernel_collector_poke();
	return NULL;
}

/* r made a request of t's stream at off, of size bytes. */
static void aim(struct rt_mreq *r, const struct rt_thread *t, int write, uint64_t off, size_t size)
{
	r->write = write;
	r->err = 0;
	r->file = t->where->obs;
	r->off = off;
	r->size = size;
	r->addr = NULL;
	r->drop = NULL;
}

/* Asks for the window [off, off + size) of t's stream, and for drop (the
 * window just left) to be unmapped. Without a mapper, unmaps now and lets
 * the next switch map synchronously. No allocation and no thread start
 * here: a signal handler that interrupted malloc may be the caller. */
void rt_mapper_request(struct rt_thread *t, uint64_t off, size_t size, void *drop, size_t drop_size)
{
	struct rt_mreq *r = to_mapper(t);
	if (!r) {
		if (drop)
			munmap(drop, drop_size);
		return;
	}
	aim(r, t, 0, off, size);
	r->drop = drop;
	r->drop_size = drop_size;
	enqueue(r);
}

int rt_mapper_flush(struct rt_thread *t, const void *src, size_t len, uint64_t off, _Atomic uint32_t *done)
{
	struct rt_mreq *r = to_mapper(t);
	if (!r) {
		int err = rt_write_out(&t->where->obs, src, len, off);
		if (!err)
			atomic_store(done, STAGE_FREE);
		return err;
	}
	aim(r, t, 1, off, len);
	r->src = src;
	r->done = done;
	enqueue(r);
	return 0;
}

/* Waits for t's request; the prepared window, or NULL (none, or failed).
 * Spins a little, then sleeps until the mapper wakes it: a thread waiting
 * for its window burns no CPU that the mapper (or another thread) needs. */
static void *wait_request(struct rt_thread *t, uint64_t *off, size_t *size)
{
	struct rt_mreq *r = t->mreq;
	if (!r)
		return NULL;
	int s;
	for (int spins = 0; spins < 200; spins++) {
		if ((s = atomic_load_explicit(&r->state, memory_order_acquire)) != M_QUEUED)
			break;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	const struct timespec tick = { 0, 10000000 }; /* 10 ms */
	for (int ticks = 0; (s = atomic_load_explicit(&r->state, memory_order_acquire)) == M_QUEUED ||
			    s == M_WAITING;
	     ticks++) {
		/* the mapper is gone (it never is): give up, but never on a write
		 * (done late, it would copy a slot that was filled again since) */
		if (ticks > 500 && !r->write) {
			rt_warn("ovni: thread %d waited 5 s for the shim's mapper thread; it maps its stream's next window itself\n",
				t->tid);
			return NULL;
		}
		int q = M_QUEUED;
		if (s == M_QUEUED && !atomic_compare_exchange_strong(&r->state, &q, M_WAITING))
			continue;
		syscall(SYS_futex, state_word(r), FUTEX_WAIT_PRIVATE, (uint32_t)M_WAITING, &tick, NULL, 0);
	}
	atomic_store(&r->state, M_IDLE);
	*off = r->off;
	*size = r->size;
	return s == M_READY ? r->addr : NULL;
}

/* The prepared window if it starts at off and has room for min bytes;
 * any other prepared window is unmapped. */
void *rt_mapper_take(struct rt_thread *t, uint64_t off, size_t min, size_t *size)
{
	uint64_t woff;
	void *p = wait_request(t, &woff, size);
	if (p && (woff != off || *size < min)) {
		munmap(p, *size);
		p = NULL;
	}
	return p;
}

int rt_mapper_flushed(struct rt_thread *t)
{
	struct rt_mreq *r = t->mreq;
	if (!r || atomic_load(&r->state) == M_IDLE || !r->write)
		return 0;
	uint64_t off;
	size_t size;
	wait_request(t, &off, &size);
	return r->err;
}

void rt_mapper_forked(struct rt_thread *t)
{
	if (t->mreq)
		atomic_store(&t->mreq->state, M_IDLE);
}

/* Before t's stream is closed: nothing of it in flight or left mapped.
 * System calls only (the fatal signal handler comes here). */
void rt_mapper_quiesce(struct rt_thread *t)
{
	uint64_t off;
	size_t size;
	void *p = wait_request(t, &off, &size);
	if (p)
		munmap(p, size);
}
