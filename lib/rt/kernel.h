/* Record mode: kernel context switches of the traced threads (kernel.c). */
#ifndef OVNI_RT_KERNEL_H
#define OVNI_RT_KERNEL_H

#include "rt/rt.h"
#include "record/state.h"

/* After the thread's OHx: starts recording its switches if asked to. */
void rt_kernel_begin(struct rt_thread *t, struct rt_state *state);
/* Writes the switches recorded so far into the thread's stream. */
void rt_kernel_drain(struct rt_thread *t);
/* Before the thread's OHe: the last switches, then stops; system calls only
 * unless the kernel dropped records (their count goes into the metadata). */
void rt_kernel_end(struct rt_thread *t);
/* The thread left a drain for good (a long jump out of a signal handler
 * that came in during it): its region closed, its slot let go. The
 * thread's emit guard must be held. */
void rt_kernel_jumped(struct rt_thread *t);
/* 1 if this thread is between a drain's start and end. */
int rt_kernel_in_drain(void);
/* The collector thread of this process: started by the first thread whose
 * switches are recorded; stopped (joined) and started again around a call
 * that needs the process to have one thread (alone.c). */
void rt_kernel_collector_start(void);
int rt_kernel_collector_running(void);
void rt_kernel_collector_stop(void);
/* Wakes the collector now (a system call only: any thread, any time). */
void rt_kernel_collector_poke(void);

#endif
