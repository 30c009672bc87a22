/* The emulator: plays the events of a trace in clock order through the
 * models, which drive channels that the Paraver writers turn into
 * thread.prv and cpu.prv (spec emu.md 2). Phases: emu_init (load, check,
 * create and connect models), emu_run (the loop), emu_finish (end checks,
 * write .pcf/.row, rewrite the .prv headers). */
#ifndef OVNI_EMU_H
#define OVNI_EMU_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "chan/bay.h"
#include "chan/chan.h"
#include "emu/model.h"
#include "emu/presort.h"
#include "emu/progress.h"
#include "paraver/pvt.h"
#include "trace/player.h"
#include "trace/system.h"
#include "trace/trace.h"
#include "base/timearg.h"

struct emu_opts {
	const char *tracedir;
	const char *outdir; /* NULL: the trace directory */
	const char *clkoff; /* -c FILE, or NULL */
	int lint; /* -l: stricter end-of-trace checks */
	int breakdown; /* -b */
	int all_models; /* -a */
	int progress; /* show the progress line (stderr is a terminal) */
	uint64_t sort_mem; /* --sort-mem: bytes of unsorted streams sorted in memory; 0: none */
	int salvaged; /* tracedir is a repaired copy (--salvage), gone after: no advice names it */
	/* Readers of the emulation (report, export): the thread and CPU
	 * lines go to these, no file is written (outdir unused). NULL: files. */
	const struct prv_tap *tap_thread, *tap_cpu;
	struct timewin win; /* --from/--to: the part of the trace to write */
};

struct emu_cpu;

struct emu_thread {
	struct sys_thread *sys;
	size_t gindex;
	int64_t tid;
	int state; /* enum th_state */
	int is_running, is_active;
	int counted_running, counted_active; /* what this thread adds to its CPU's counts */
	struct emu_cpu *cpu; /* NULL when it has none */
	int out_of_cpu; /* switched out by the kernel (model K) */
	struct chan ch_cpu, ch_tid, ch_state;
};

struct emu_cpu {
	struct sys_cpu *sys;
	size_t gindex;
	size_t nthreads, nrunning, nactive;
	uint64_t running_sum, active_sum; /* gindex sums: the thread when the count is 1 */
	struct emu_thread *th_running, *th_active;
	struct chan ch_pid, ch_tid, ch_nrun, ch_th_running;
};

struct emu {
	struct emu_opts opts;
	struct trace trace;
	struct system sys;
	int have_trace, have_sys;
	int64_t *offsets; /* per stream */
	struct stream_reader *readers;
	struct presort presort; /* streams sorted in memory */
	size_t nreaders;
	struct player player;
	int have_player;
	struct bay bay;

	struct emu_thread *threads; /* by gindex */
	struct emu_thread **stream_th; /* by stream: its thread, or NULL */
	size_t nthreads;
	struct emu_cpu *cpus; /* by gindex */
	size_t ncpus;
	/* first thread gindex of each loom (threads of a loom are contiguous) */
	size_t *loom_first_thread, *loom_nthreads;

	struct pvt thread_pvt, cpu_pvt;
	struct pvt *pvts[16]; /* every open Paraver trace (breakdowns too) */
	size_t npvts;
	char *outdir;

	const struct emu_model *model[256]; /* by model character */
	int enabled[256];
	int (*event_of[256])(struct emu *e); /* the event hook of each enabled model, else NULL */
	void *mdata[256]; /* each model's state, by model character */

	/* The event being played */
	struct player_ev pev;
	const struct ev *ev;
	struct emu_thread *th;
	struct sys_proc *proc;
	struct sys_loom *loom;

	struct progress progress;
	uint64_t nevents;
	int64_t last_dclock;
	int partial; /* not played to the end (^C or an error): skip end checks */
	/* The window in relative clocks (INT64_MIN/MAX when open); playing
	 * stops at the first event past win_to (past_window set). */
	int64_t win_from, win_to;
	int past_window;
	int64_t start_sclock; /* the clock of the first event (@CLOCK base) */
	int failed; /* an event failed */
};

/* Set by SIGINT/SIGTERM: the loop stops at the next event. */
extern volatile sig_atomic_t emu_stop;

/* Loads and checks everything, opens the outputs, connects the models.
 * -1 after a message; then no output file is left behind. */
int emu_init(struct emu *e, const struct emu_opts *o);
/* Plays every event. 0 at the end or when stopped, -1 after a one-line
 * message naming the stream, offset, event and reason. */
int emu_run(struct emu *e);
/* Model end checks (unless partial) and the Paraver files, complete even
 * after a failed event. -1 after a message. */
int emu_finish(struct emu *e);
void emu_free(struct emu *e);

/* Where the outputs end: win_to when playing stopped past the window,
 * else the last event. */
static inline int64_t emu_end(const struct emu *e)
{
	return e->past_window ? e->win_to : e->last_dclock;
}

/* Adds a Paraver trace (besides thread and cpu) that the loop advances and
 * emu_finish closes; for breakdowns. -1 after failf. */
int emu_add_pvt(struct emu *e, struct pvt *t);

/* For models: the payload of the current event. */
static inline const uint8_t *emu_payload(const struct emu *e) { return e->ev->payload; }
static inline uint32_t emu_payload_size(const struct emu *e) { return e->ev->payload_size; }
static inline void *emu_data(const struct emu *e, char id) { return e->mdata[(unsigned char)id]; }

#endif
