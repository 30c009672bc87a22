/* Threads on CPUs: the base channels every trace has (spec emu.md 2.7) and
 * the operations the models use to move threads between states and CPUs.
 * A thread row shows its CPU (type 6), its tid while active (2) and its
 * state (4); a CPU row the pid (1) and tid (2) of its one running thread
 * and how many run on it (3). */
#ifndef OVNI_EMU_SCHED_H
#define OVNI_EMU_SCHED_H

#include <stdint.h>

#include "emu/emu.h"

/* Allocates e->threads and e->cpus and their channels. -1 after a message. */
int sched_create(struct emu *e);
/* Registers the base channels in thread.prv/cpu.prv and their .pcf types
 * and views. -1 after failf. */
int sched_connect(struct emu *e);
void sched_free(struct emu *e);

/* Sets the state and the tid of the active thread. */
int thread_set_state(struct emu_thread *th, int state);
int thread_set_cpu(struct emu_thread *th, struct emu_cpu *cpu);
int thread_unset_cpu(struct emu_thread *th);

/* A thread arrives at / leaves cpu; its state is already set. */
int cpu_add_thread(struct emu_cpu *cpu, struct emu_thread *th);
int cpu_remove_thread(struct emu_cpu *cpu, struct emu_thread *th);
/* The state of th (on cpu) changed: recount and update the CPU channels. */
int cpu_update(struct emu_cpu *cpu, struct emu_thread *th);

/* The CPU with logical index idx (-1: the virtual CPU) of loom l, or NULL. */
struct emu_cpu *emu_cpu_of(struct emu *e, const struct sys_loom *l, int64_t idx);

/* "CPU 0.1" or "vCPU 0.*", for messages. */
static inline const char *cpu_label(const struct emu_cpu *c)
{
	return c->sys->name[0] == ' ' ? c->sys->name + 1 : c->sys->name;
}

static inline const char *th_state_name(int st)
{
	static const char *const names[] = { "Unknown", "Running", "Paused", "Dead", "Cooling", "Warming" };
	return st >= 0 && st <= 5 ? names[st] : "invalid";
}

#endif
