/* Automatic instrumentation of the recorded program (block.c, mpi.c,
 * ompt.c): events emitted by the shim on behalf of a traced thread. Each
 * kind declares what the emulator needs (a model requirement, a mark type)
 * in the thread's metadata the first time the thread emits one of them;
 * the block mark, whose first wait may be in a signal handler, without
 * allocating (rt_meta_block_declared). */
#ifndef OVNI_RT_INSTR_H
#define OVNI_RT_INSTR_H

#include "base/event.h"
#include "rt/rt.h"

#include <string.h>

#define RT_INSTR_BLOCK 1u /* the block mark is declared in t's renders */
#define RT_INSTR_MPI 2u
#define RT_INSTR_OMP 4u
#define RT_INSTR_BLOCK_OFF 8u /* the program declared the block mark itself */

typedef void (*rt_instr_declare_fn)(struct rt_thread *t);

/* The program declares mark type: if it is the shim's block mark (99),
 * it is the program's from now on, in every thread (a thread's waits
 * recorded before show under the program's title). */
void rt_block_mark_yield(struct rt_thread *t, int32_t type);
/* Whether t may still declare the block mark: the metadata is then also
 * kept rendered with it (rt_meta_changed). */
int rt_block_possible(const struct rt_thread *t);

/* The first call for a kind on t: declare (which ends with rt_meta_changed),
 * then the metadata written now, so a killed process's trace still
 * declares it. */
void rt_instr_declare(struct rt_thread *t, unsigned kind, rt_instr_declare_fn declare);

/* The calling thread when record mode traces it, else NULL. */
static inline struct rt_thread *rt_instr_thread(unsigned kind, rt_instr_declare_fn declare)
{
	struct rt_thread *t = &rt_self;
	if (!rt_record_mode || !t->ready)
		return NULL;
	if (RT_UNLIKELY(!(t->instr & kind)))
		rt_instr_declare(t, kind, declare);
	return t;
}

/* One event of the thread now; inlined so that, with n a constant, the copy
 * is a few moves (the window always keeps RT_SLACK bytes for the fast path).
 * The clock is read once the emit is guarded: a handler's event, written
 * after this one, is then not older than it but by the clock it had. */
static inline void rt_instr_emit(struct rt_thread *t, const char mcv[3], const void *payload, size_t n)
{
	if (RT_UNLIKELY(((size_t)(t->end - t->pos) < RT_SLACK + 16) | rt_guard_busy(t))) {
		rt_emit_now(t, mcv, payload, n);
		return;
	}
	rt_guard_take(t);
	uint64_t clock = ovni_clock_now();
	size_t size = ev_encode(t->pos, mcv, clock, payload, n);
	memset(t->pos + size, 0, 4); /* the end mark a salvage scan stops at */
	t->pos += size;
	t->nev++;
	rt_guard_give(t, clock);
}

/* Sets key (dotted) in the thread's metadata; aborts when out of memory. */
void rt_instr_meta_set(struct rt_thread *t, const char *key, const char *value);

/* dlsym(RTLD_NEXT, name), aborting with a clear message when missing. */
void *rt_instr_next(const char *name);

/* An MPI launcher (mpirun, hydra_pmi_proxy, orted...): record.c leaves it
 * untraced, and the ranks it starts are traced (mpi.c). */
int rt_instr_is_launcher(void);

/* Rank and size learnt by the MPI wrappers after MPI_Init (record.c). */
void rt_record_set_rank(int rank, int nranks);

#endif
