/* Blocking calls in record mode: the time a traced thread waits in a
 * contended lock, a condition, a barrier, a join, a semaphore or a sleep is
 * a user mark (trace/blockmark.h: 99, a stack) whose value names the call: OM[
 * when it starts waiting, OM] when it returns. Locks try first without
 * blocking, so an uncontended lock costs one extra indirect call and emits
 * nothing. The pop is a cleanup variable: every return path closes it. */
#include "rt/instr.h"
#include "rt/kernel.h"
#include "trace/blockmark.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set once the program declares mark 99 itself, in any thread: no thread
 * declares it for the shim from then on (one type with two titles makes
 * the trace unreadable). */
static int program_mark;

int rt_block_possible(const struct rt_thread *t)
{
	return rt_record_mode && !(t->instr & (RT_INSTR_BLOCK | RT_INSTR_BLOCK_OFF)) &&
	       !__atomic_load_n(&program_mark, __ATOMIC_RELAXED);
}

/* The thread's first blocking call, maybe in a signal handler that
 * interrupted malloc: the declaration is no allocation, only the switch to
 * the metadata already rendered with it (rt_meta_block_declared). */
static __attribute__((noinline)) void first_block(struct rt_thread *t)
{
	sigset_t caller;
	rt_signals_off(&caller); /* a handler's first wait in the middle would switch twice */
	if (!(t->instr & (RT_INSTR_BLOCK | RT_INSTR_BLOCK_OFF))) {
		if (__atomic_load_n(&program_mark, __ATOMIC_RELAXED)) {
			t->instr |= RT_INSTR_BLOCK_OFF;
		} else {
			t->instr |= RT_INSTR_BLOCK;
			rt_meta_block_declared(t);
		}
	}
	rt_signals_on(&caller);
}

void rt_block_mark_yield(struct rt_thread *t, int32_t type)
{
	if (type != BLOCKMARK_TYPE)
		return;
	__atomic_store_n(&program_mark, 1, __ATOMIC_RELAXED);
	t->instr |= RT_INSTR_BLOCK_OFF; /* the renders leave it out from now on */
}

static void emit(struct rt_thread *t, char v, int call)
{
	uint8_t p[12];
	int64_t value = call;
	int32_t type = BLOCKMARK_TYPE;
	memcpy(p, &value, 8);
	memcpy(p + 8, &type, 4);
	rt_instr_emit(t, (char[3]){ 'O', 'M', v }, p, 12);
}

/* The thread starts waiting in call; returns call if it was recorded. */
static int block_begin(int call)
{
	struct rt_thread *t = &rt_self;
	if (!rt_record_mode || !t->ready)
		return 0;
	if (RT_UNLIKELY(!(t->instr & (RT_INSTR_BLOCK | RT_INSTR_BLOCK_OFF))))
		first_block(t);
	if (t->instr & RT_INSTR_BLOCK_OFF)
		return 0;
	int saved = errno;
	emit(t, '[', call);
	errno = saved;
	return call;
}

/* Cleanup of the variable block_begin set: the wait is over. */
static void block_end(const int *call)
{
	struct rt_thread *t = &rt_self;
	if (!*call || !t->ready)
		return;
	int saved = errno;
	rt_kernel_drain(t); /* the switches of the wait, before its end (whose clock is later) */
	emit(t, ']', *call);
	errno = saved;
}

#define BLOCKED(call) int blocked __attribute__((cleanup(block_end), unused)) = block_begin(call)


typedef int (*mutex_fn)(pthread_mutex_t *);
typedef int (*mutex_timed_fn)(pthread_mutex_t *, const struct timespec *);
typedef int (*cond_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_timed_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*barrier_fn)(pthread_barrier_t *);
typedef int (*join_fn)(pthread_t, void **);
typedef int (*sem_fn)(sem_t *);
typedef int (*sem_timed_fn)(sem_t *, const struct timespec *);
typedef int (*rwlock_fn)(pthread_rwlock_t *);
typedef unsigned (*sleep_fn)(unsigned);
typedef int (*usleep_fn)(useconds_t);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

/* glibc's flag (2.32+) that no second thread was ever created: then no lock
 * can be contended (within the process), and the plain lock is cheaper
 * than a try-lock (it skips the atomic operation). */
static const volatile char *single_threaded;

/* glibc's definitions, looked up when the shim loads (a lookup at the
 * first contended lock could wait for the loader's lock), else lazily. */
#define REAL_FUNCTIONS(X)                                                                    \
	X(mutex_fn, pthread_mutex_trylock) X(mutex_fn, pthread_mutex_lock)                   \
	X(mutex_timed_fn, pthread_mutex_timedlock) X(rwlock_fn, pthread_rwlock_tryrdlock)    \
	X(rwlock_fn, pthread_rwlock_rdlock) X(rwlock_fn, pthread_rwlock_trywrlock)           \
	X(rwlock_fn, pthread_rwlock_wrlock) X(cond_fn, pthread_cond_wait)                    \
	X(cond_timed_fn, pthread_cond_timedwait) X(barrier_fn, pthread_barrier_wait)         \
	X(join_fn, pthread_tryjoin_np) X(join_fn, pthread_join) X(sem_fn, sem_trywait)       \
	X(sem_fn, sem_wait) X(sem_timed_fn, sem_timedwait) X(sleep_fn, sleep)                \
	X(usleep_fn, usleep) X(nanosleep_fn, nanosleep) X(clock_nanosleep_fn, clock_nanosleep)
#define DECLARE(type, name) static type real_##name;
#define RESOLVE(type, name) real_##name = (type)rt_instr_next(#name);
REAL_FUNCTIONS(DECLARE)

#define REAL(type, name)              \
	if (RT_UNLIKELY(!real_##name)) \
	real_##name = (type)rt_instr_next(#name)

__attribute__((constructor)) static void block_init(void)
{
	single_threaded = dlsym(RTLD_DEFAULT, "__libc_single_threaded");
	REAL_FUNCTIONS(RESOLVE)
}

RT_API int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (single_threaded && *single_threaded && real_pthread_mutex_lock)
		return real_pthread_mutex_lock(m);
	REAL(mutex_fn, pthread_mutex_trylock);
	int r = real_pthread_mutex_trylock(m);
	if (RT_LIKELY(r != EBUSY))
		return r; /* taken, or the error the lock would give */
	REAL(mutex_fn, pthread_mutex_lock);
	BLOCKED(BM_MUTEX);
	return real_pthread_mutex_lock(m);
}

RT_API int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	REAL(mutex_fn, pthread_mutex_trylock);
	int r = real_pthread_mutex_trylock(m);
	if (RT_LIKELY(r != EBUSY))
		return r;
	REAL(mutex_timed_fn, pthread_mutex_timedlock);
	BLOCKED(BM_MUTEX_TIMED);
	return real_pthread_mutex_timedlock(m, abstime);
}

RT_API int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	REAL(rwlock_fn, pthread_rwlock_tryrdlock);
	int r = real_pthread_rwlock_tryrdlock(l);
	if (RT_LIKELY(r != EBUSY))
		return r;
	REAL(rwlock_fn, pthread_rwlock_rdlock);
	BLOCKED(BM_RDLOCK);
	return real_pthread_rwlock_rdlock(l);
}

RT_API int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	REAL(rwlock_fn, pthread_rwlock_trywrlock);
	int r = real_pthread_rwlock_trywrlock(l);
	if (RT_LIKELY(r != EBUSY))
		return r;
	REAL(rwlock_fn, pthread_rwlock_wrlock);
	BLOCKED(BM_WRLOCK);
	return real_pthread_rwlock_wrlock(l);
}

RT_API int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	REAL(cond_fn, pthread_cond_wait);
	BLOCKED(BM_COND);
	return real_pthread_cond_wait(c, m);
}

RT_API int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	REAL(cond_timed_fn, pthread_cond_timedwait);
	BLOCKED(BM_COND_TIMED);
	return real_pthread_cond_timedwait(c, m, abstime);
}

RT_API int pthread_barrier_wait(pthread_barrier_t *b)
{
	REAL(barrier_fn, pthread_barrier_wait);
	BLOCKED(BM_BARRIER);
	return real_pthread_barrier_wait(b);
}

RT_API int pthread_join(pthread_t th, void **ret)
{
	REAL(join_fn, pthread_tryjoin_np);
	int r = real_pthread_tryjoin_np(th, ret);
	if (r != EBUSY)
		return r; /* it had ended already (or the join is wrong) */
	REAL(join_fn, pthread_join);
	BLOCKED(BM_JOIN);
	return real_pthread_join(th, ret);
}

RT_API int sem_wait(sem_t *s)
{
	REAL(sem_fn, sem_trywait);
	int saved = errno;
	if (RT_LIKELY(real_sem_trywait(s) == 0))
		return 0;
	if (errno != EAGAIN)
		return -1;
	errno = saved;
	REAL(sem_fn, sem_wait);
	BLOCKED(BM_SEM);
	return real_sem_wait(s);
}

RT_API int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	REAL(sem_fn, sem_trywait);
	int saved = errno;
	if (RT_LIKELY(real_sem_trywait(s) == 0))
		return 0;
	if (errno != EAGAIN)
		return -1;
	errno = saved;
	REAL(sem_timed_fn, sem_timedwait);
	BLOCKED(BM_SEM_TIMED);
	return real_sem_timedwait(s, abstime);
}

RT_API unsigned sleep(unsigned seconds)
{
	REAL(sleep_fn, sleep);
	BLOCKED(BM_SLEEP);
	return real_sleep(seconds);
}

RT_API int usleep(useconds_t usec)
{
	REAL(usleep_fn, usleep);
	BLOCKED(BM_USLEEP);
	return real_usleep(usec);
}

RT_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
	REAL(nanosleep_fn, nanosleep);
	BLOCKED(BM_NANOSLEEP);
	return real_nanosleep(req, rem);
}

RT_API int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
	REAL(clock_nanosleep_fn, clock_nanosleep);
	BLOCKED(BM_CLOCK_NANOSLEEP);
	return real_clock_nanosleep(clock, flags, req, rem);
}
