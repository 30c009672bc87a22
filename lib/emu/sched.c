#include "emu/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "chan/track.h"
#include "base/msg.h"

static int new_chan(struct emu *e, struct chan *c, const char *name, unsigned flags)
{
	if (chan_init(c, CHAN_SINGLE, name) != 0)
		return failf("out of memory");
	chan_set_flags(c, flags);
	return bay_add(&e->bay, c);
}

static int create_thread(struct emu *e, struct emu_thread *th, struct sys_thread *s)
{
	char n[64];
	th->sys = s;
	th->gindex = s->gindex;
	th->tid = s->tid;
	th->state = TH_ST_UNKNOWN;
	snprintf(n, sizeof(n), "thread%zu.cpu_gindex", th->gindex);
	if (new_chan(e, &th->ch_cpu, n, 0) != 0)
		return -1;
	snprintf(n, sizeof(n), "thread%zu.tid_active", th->gindex);
	if (new_chan(e, &th->ch_tid, n, CHAN_IGNORE_DUP) != 0)
		return -1;
	snprintf(n, sizeof(n), "thread%zu.state", th->gindex);
	return new_chan(e, &th->ch_state, n, 0);
}

static int create_cpu(struct emu *e, struct emu_cpu *cpu, struct sys_cpu *s)
{
	static const char *const names[] = { "pid_running", "tid_running", "nrunning", "th_running" };
	struct chan *ch[] = { &cpu->ch_pid, &cpu->ch_tid, &cpu->ch_nrun, &cpu->ch_th_running };
	char n[64];
	cpu->sys = s;
	cpu->gindex = s->gindex;
	for (int i = 0; i < 4; i++) {
		snprintf(n, sizeof(n), "cpu%zu.%s", cpu->gindex, names[i]);
		if (new_chan(e, ch[i], n, CHAN_IGNORE_DUP) != 0)
			return -1;
	}
	return 0;
}

int sched_create(struct emu *e)
{
	e->nthreads = e->sys.nthreads;
	e->ncpus = e->sys.ncpus;
	e->threads = calloc(e->nthreads ? e->nthreads : 1, sizeof(*e->threads));
	e->cpus = calloc(e->ncpus ? e->ncpus : 1, sizeof(*e->cpus));
	if (!e->threads || !e->cpus) {
		msg_err("out of memory for %zu threads and %zu CPUs", e->nthreads, e->ncpus);
		return -1;
	}
	for (size_t i = 0; i < e->nthreads; i++) {
		if (create_thread(e, &e->threads[i], e->sys.threads[i]) != 0) {
			msg_err("%s", fail_reason());
			return -1;
		}
	}
	for (size_t i = 0; i < e->ncpus; i++) {
		if (create_cpu(e, &e->cpus[i], e->sys.cpus[i]) != 0) {
			msg_err("%s", fail_reason());
			return -1;
		}
	}
	return 0;
}

void sched_free(struct emu *e)
{
	for (size_t i = 0; e->threads && i < e->nthreads; i++) {
		chan_free(&e->threads[i].ch_cpu);
		chan_free(&e->threads[i].ch_tid);
		chan_free(&e->threads[i].ch_state);
	}
	for (size_t i = 0; e->cpus && i < e->ncpus; i++) {
		struct emu_cpu *c = &e->cpus[i];
		struct chan *ch[] = { &c->ch_pid, &c->ch_tid, &c->ch_nrun, &c->ch_th_running };
		for (int k = 0; k < 4; k++)
			chan_free(ch[k]);
	}
	free(e->threads);
	free(e->cpus);
	e->threads = NULL;
	e->cpus = NULL;
}

static const struct {
	int value;
	const char *label;
	unsigned char rgb[3];
} states[] = {
	{ TH_ST_UNKNOWN, "Unknown", { 0, 0, 0 } },
	{ TH_ST_RUNNING, "Running", { 117, 195, 37 } },
	{ TH_ST_PAUSED, "Paused", { 190, 190, 190 } },
	{ TH_ST_DEAD, "Dead", { 90, 90, 90 } },
	{ TH_ST_COOLING, "Cooling", { 0, 110, 200 } },
	{ TH_ST_WARMING, "Warming", { 255, 160, 0 } },
};

static int thread_views(struct emu *e)
{
	struct pvt *t = &e->thread_pvt;
	struct pcf_type *pt = pcf_add_type(&t->pcf, 6, "Thread: CPU affinity");
	if (!pt)
		return -1;
	for (size_t i = 0; i < e->ncpus; i++)
		if (pcf_add_value(pt, (int64_t)i + 1, e->cpus[i].sys->name) != 0)
			return -1;
	if (!pvt_add_view(t, "thread/ovni/cpu", "Thread: CPU affinity", "Thread: CPU affinity", 6, CFG_CODE))
		return -1;
	if (!pcf_add_type(&t->pcf, 2, "Thread: TID of the ACTIVE thread"))
		return -1;
	if (!pvt_add_view(t, "thread/ovni/tid", "Thread: TID of the ACTIVE thread",
			  "Thread: TID of the ACTIVE thread", 2, CFG_NULL_GRADIENT))
		return -1;
	pt = pcf_add_type(&t->pcf, 4, "Thread: thread state");
	struct cfg_view *v = pvt_add_view(t, "thread/ovni/thread-state", "Thread: thread state",
					  "Thread: thread state", 4, CFG_CUSTOM);
	if (!pt || !v)
		return -1;
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		if (pcf_add_value(pt, states[i].value, states[i].label) != 0)
			return -1;
		if (i > 0 && cfg_view_add_color(v, states[i].value, states[i].rgb) != 0)
			return -1;
	}
	return 0;
}

static int cpu_views(struct emu *e)
{
	struct pvt *t = &e->cpu_pvt;
	/* The reference leaves types 1-3 out of cpu.pcf; the views name them. */
	if (!pvt_add_view(t, "cpu/ovni/pid", "CPU: PID of the RUNNING thread",
			  "CPU: PID of the RUNNING thread", 1, CFG_NULL_GRADIENT))
		return -1;
	if (!pvt_add_view(t, "cpu/ovni/tid", "CPU: TID of the RUNNING thread",
			  "CPU: TID of the RUNNING thread", 2, CFG_NULL_GRADIENT))
		return -1;
	if (!pvt_add_view(t, "cpu/ovni/nrunning", "CPU: Number of RUNNING threads",
			  "CPU: Number of RUNNING threads", 3, CFG_NULL_GRADIENT))
		return -1;
	return 0;
}

int sched_connect(struct emu *e)
{
	struct prv *tp = &e->thread_pvt.prv, *cp = &e->cpu_pvt.prv;
	for (size_t i = 0; i < e->nthreads; i++) {
		struct emu_thread *th = &e->threads[i];
		if (pvt_set_row(&e->thread_pvt, i, th->sys->name) != 0 ||
		    prv_register(tp, i, 6, &th->ch_cpu, PRV_NEXT) != 0 ||
		    prv_register(tp, i, 2, &th->ch_tid, 0) != 0 ||
		    prv_register(tp, i, 4, &th->ch_state, PRV_SKIPDUP) != 0)
			return -1;
	}
	for (size_t i = 0; i < e->ncpus; i++) {
		struct emu_cpu *c = &e->cpus[i];
		if (pvt_set_row(&e->cpu_pvt, i, c->sys->name) != 0 ||
		    prv_register(cp, i, 1, &c->ch_pid, 0) != 0 ||
		    prv_register(cp, i, 2, &c->ch_tid, 0) != 0 ||
		    prv_register(cp, i, 3, &c->ch_nrun, PRV_ZERO) != 0)
			return -1;
	}
	return thread_views(e) == 0 && cpu_views(e) == 0 ? 0 : -1;
}

int thread_set_state(struct emu_thread *th, int state)
{
	th->state = state;
	th->is_running = state == TH_ST_RUNNING;
	th->is_active = th_state_is_active(state);
	if (chan_set(&th->ch_state, value_int64(state)) != 0)
		return -1;
	return chan_set(&th->ch_tid, th->is_active ? value_int64(th->tid) : value_null());
}

int thread_set_cpu(struct emu_thread *th, struct emu_cpu *cpu)
{
	th->cpu = cpu;
	return chan_set(&th->ch_cpu, value_int64((int64_t)cpu->gindex));
}

int thread_unset_cpu(struct emu_thread *th)
{
	th->cpu = NULL;
	return chan_set(&th->ch_cpu, value_null());
}

/* Brings th's share of the CPU counts in line with its state. */
static void recount(struct emu_cpu *cpu, struct emu_thread *th, int running, int active)
{
	if (th->counted_running != running) {
		if (running) {
			cpu->nrunning++;
			cpu->running_sum += th->gindex;
		} else {
			cpu->nrunning--;
			cpu->running_sum -= th->gindex;
		}
		th->counted_running = running;
	}
	if (th->counted_active != active) {
		if (active) {
			cpu->nactive++;
			cpu->active_sum += th->gindex;
		} else {
			cpu->nactive--;
			cpu->active_sum -= th->gindex;
		}
		th->counted_active = active;
	}
}

static int update_chans(struct emu_cpu *cpu, struct emu_thread *threads)
{
	struct emu_thread *run = cpu->nrunning == 1 ? &threads[cpu->running_sum] : NULL;
	struct emu_thread *act = cpu->nactive == 1 ? &threads[cpu->active_sum] : NULL;
	cpu->th_running = run;
	cpu->th_active = act;
	if (cpu->nrunning > 1 && !cpu->sys->is_virtual)
		return failf("%s has %zu threads running at the same time",
			     cpu_label(cpu), cpu->nrunning);
	if (run) {
		if (chan_set(&cpu->ch_tid, value_int64(run->tid)) != 0 ||
		    chan_set(&cpu->ch_pid, value_int64(run->sys->proc->pid)) != 0)
			return -1;
	} else {
		if (chan_set(&cpu->ch_tid, value_null()) != 0 ||
		    chan_set(&cpu->ch_pid, value_null()) != 0)
			return -1;
	}
	if (chan_set(&cpu->ch_nrun, value_int64((int64_t)cpu->nrunning)) != 0)
		return -1;
	return chan_set(&cpu->ch_th_running, run ? value_int64((int64_t)run->gindex) : value_null());
}

/* The threads array is reached from any of its elements' gindex. */
static struct emu_thread *threads_of(struct emu_thread *th)
{
	return th - th->gindex;
}

int cpu_add_thread(struct emu_cpu *cpu, struct emu_thread *th)
{
	if (th->counted_running || th->counted_active)
		return failf("thread %lld is already counted on a CPU", (long long)th->tid);
	cpu->nthreads++;
	recount(cpu, th, th->is_running, th->is_active);
	return update_chans(cpu, threads_of(th));
}

int cpu_remove_thread(struct emu_cpu *cpu, struct emu_thread *th)
{
	if (cpu->nthreads == 0)
		return failf("%s has no thread to remove", cpu_label(cpu));
	cpu->nthreads--;
	recount(cpu, th, 0, 0);
	return update_chans(cpu, threads_of(th));
}

int cpu_update(struct emu_cpu *cpu, struct emu_thread *th)
{
	recount(cpu, th, th->is_running, th->is_active);
	return update_chans(cpu, threads_of(th));
}

struct emu_cpu *emu_cpu_of(struct emu *e, const struct sys_loom *l, int64_t idx)
{
	struct sys_cpu *c = system_cpu(l, idx);
	return c ? &e->cpus[c->gindex] : NULL;
}
